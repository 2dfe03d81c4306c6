#include "tools/rseqmc/cli_util.h"

#include <filesystem>
#include <system_error>

#include "scenarios/builtin.h"
#include "scenarios/parser.h"
#include "sim/diag.h"

namespace rseqmc::cli {
namespace {

bool IsIdentifier(const std::string& s) {
  if (s.empty()) return false;
  auto alpha = [](char c) { return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || c == '_'; };
  if (!alpha(s[0])) return false;
  for (char c : s) {
    if (!alpha(c) && !(c >= '0' && c <= '9') && c != '.') return false;
  }
  return true;
}

}  // namespace

std::optional<uint64_t> ParseUint64(const std::string& text) {
  size_t i = 0;
  unsigned base = 10;
  if (text.size() > 2 && text[0] == '0' && (text[1] == 'x' || text[1] == 'X')) {
    base = 16;
    i = 2;
  }
  if (i >= text.size()) return std::nullopt;
  uint64_t v = 0;
  for (; i < text.size(); ++i) {
    const char c = text[i];
    unsigned d;
    if (c >= '0' && c <= '9') {
      d = c - '0';
    } else if (base == 16 && c >= 'a' && c <= 'f') {
      d = c - 'a' + 10;
    } else if (base == 16 && c >= 'A' && c <= 'F') {
      d = c - 'A' + 10;
    } else {
      return std::nullopt;
    }
    if (v > (UINT64_MAX - d) / base) return std::nullopt;
    v = v * base + d;
  }
  return v;
}

std::optional<int64_t> ParseInt64(const std::string& text) {
  const bool negative = !text.empty() && text[0] == '-';
  std::optional<uint64_t> magnitude = ParseUint64(negative ? text.substr(1) : text);
  if (!magnitude) return std::nullopt;
  const uint64_t limit = negative ? uint64_t{1} << 63 : (uint64_t{1} << 63) - 1;
  if (*magnitude > limit) return std::nullopt;
  return negative ? static_cast<int64_t>(0 - *magnitude) : static_cast<int64_t>(*magnitude);
}

std::map<std::string, int64_t> ParseDefines(const std::vector<std::string>& args) {
  std::map<std::string, int64_t> defines;
  for (const std::string& arg : args) {
    const size_t eq = arg.find('=');
    if (eq == std::string::npos) {
      throw UsageError("-D " + arg + ": expected NAME=VALUE, e.g. -D OPS=4");
    }
    const std::string name = arg.substr(0, eq);
    const std::string value = arg.substr(eq + 1);
    if (!IsIdentifier(name)) {
      throw UsageError("-D " + arg + ": '" + name + "' is not a constant name ([A-Za-z_][A-Za-z0-9_.]*)");
    }
    std::optional<int64_t> v = ParseInt64(value);
    if (!v) {
      throw UsageError("-D " + arg + ": '" + value +
                       "' is not a 64-bit integer (decimal such as -7 or 42, or hex such as 0x40)");
    }
    defines[name] = *v;
  }
  return defines;
}

Scenario LoadScenario(const std::string& file_or_name, const std::map<std::string, int64_t>& defines) {
  std::error_code ec;
  const auto status = std::filesystem::status(file_or_name, ec);
  Scenario s;
  if (!ec && std::filesystem::is_regular_file(status)) {
    s = ParseScenarioFile(file_or_name, defines);
  } else if (!ec && std::filesystem::exists(status)) {
    throw InputError(file_or_name, {}, "not a regular file", "", "give a .rsq scenario file or a built-in name");
  } else if (const BuiltinScenario* b = FindBuiltinScenario(file_or_name)) {
    s = ParseScenario(b->text, b->path, defines);
  } else {
    throw InputError(file_or_name, {}, "no such file, and no built-in scenario of that name", "",
                     "run 'rseqmc list' to see the built-in scenarios");
  }
  for (const auto& [name, value] : defines) {
    if (s.FindConstant(name) >= 0) continue;
    std::string known;
    for (const Constant& c : s.constants) known += (known.empty() ? "" : ", ") + c.name;
    throw InputError("<command line>", {}, "-D " + name + ": scenario '" + s.name + "' has no constant '" + name + "'",
                     "", known.empty() ? "it declares no constants" : "its constants: " + known);
  }
  return s;
}

std::string ExpectText(Verdict v) {
  return v == Verdict::kPass ? "pass" : std::string("fail ") + VerdictName(v);
}

std::string ShellQuote(const std::string& arg) {
  bool plain = !arg.empty();
  for (char c : arg) {
    const bool ok = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
                    std::string_view("_./=:+,@%-").find(c) != std::string_view::npos;
    if (!ok) plain = false;
  }
  if (plain) return arg;
  std::string q = "'";
  for (char c : arg) {
    if (c == '\'') {
      q += "'\\''";
    } else {
      q += c;
    }
  }
  return q + "'";
}

}  // namespace rseqmc::cli
