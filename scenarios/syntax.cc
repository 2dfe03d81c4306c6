#include "scenarios/syntax.h"

#include <cstdio>

namespace rseqmc::syntax {
namespace {

constexpr int kNumOps = static_cast<int>(kLastOp) + 1;
constexpr int kNumFields = static_cast<int>(RseqField::kFlags) + 1;
constexpr int kNumVerdicts = static_cast<int>(kLastVerdict) + 1;

// The enum value among the first `count` whose `name(value)` is `word`.
template <typename E, typename NameFn>
std::optional<E> Lookup(std::string_view word, int count, NameFn name) {
  for (int i = 0; i < count; ++i) {
    if (word == name(static_cast<E>(i))) return static_cast<E>(i);
  }
  return std::nullopt;
}

template <typename E, typename NameFn>
std::vector<std::string> Names(int count, NameFn name) {
  std::vector<std::string> v;
  for (int i = 0; i < count; ++i) v.push_back(name(static_cast<E>(i)));
  return v;
}

}  // namespace

std::optional<Op> LookupMnemonic(std::string_view word) { return Lookup<Op>(word, kNumOps, OpName); }

const std::vector<std::string>& AllMnemonics() {
  static const std::vector<std::string> names = Names<Op>(kNumOps, OpName);
  return names;
}

std::optional<RseqField> LookupField(std::string_view word) {
  return Lookup<RseqField>(word, kNumFields, RseqFieldName);
}

const std::vector<std::string>& AllFieldNames() {
  static const std::vector<std::string> names = Names<RseqField>(kNumFields, RseqFieldName);
  return names;
}

std::optional<Verdict> LookupVerdict(std::string_view word) {
  std::optional<Verdict> v = Lookup<Verdict>(word, kNumVerdicts, VerdictName);
  if (v == Verdict::kPass) return std::nullopt;
  return v;
}

bool IsAlu(Op op) { return op >= Op::kAdd && op <= Op::kMul; }

bool IsConditionalBranch(Op op) { return op >= Op::kBeq && op <= Op::kBgeu; }

bool IsIdentStart(char c) { return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || c == '_'; }

bool IsIdentChar(char c) { return IsIdentStart(c) || (c >= '0' && c <= '9') || c == '.'; }

bool IsIdentifier(std::string_view s) {
  if (s.empty() || !IsIdentStart(s[0])) return false;
  for (char c : s) {
    if (!IsIdentChar(c)) return false;
  }
  return true;
}

bool LooksLikeRegister(std::string_view s) {
  if (s.size() < 2 || s[0] != 'r') return false;
  for (size_t i = 1; i < s.size(); ++i) {
    if (s[i] < '0' || s[i] > '9') return false;
  }
  return true;
}

std::string QuoteString(std::string_view s) {
  std::string out = "\"";
  for (char c : s) {
    auto u = static_cast<unsigned char>(c);
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\t': out += "\\t"; break;
      case '\r': out += "\\r"; break;
      default:
        if (u < 0x20 || u == 0x7f) {
          char buf[8];
          std::snprintf(buf, sizeof(buf), "\\x%02x", u);
          out += buf;
        } else {
          out += c;
        }
    }
  }
  out += "\"";
  return out;
}

}  // namespace rseqmc::syntax
