// A strict RFC 8259 syntax check for the JSON that rseqmc prints (tests only):
// objects, arrays, strings with escapes, numbers, true/false/null; no trailing
// commas, no control characters in strings, nothing after the value but
// whitespace.
#ifndef RSEQMC_TESTS_JSON_CHECK_H_
#define RSEQMC_TESTS_JSON_CHECK_H_

#include <cctype>
#include <cstddef>
#include <string>
#include <string_view>

namespace rseqmc::testing {

class JsonChecker {
 public:
  explicit JsonChecker(std::string_view text) : t_(text) {}

  // True if the whole text is one JSON value; otherwise *error says where.
  bool Check(std::string* error) {
    bool ok = Value(0);
    Space();
    if (ok && i_ != t_.size()) ok = Fail("trailing characters");
    if (!ok && error) *error = error_;
    return ok;
  }

 private:
  bool Fail(const char* what) {
    if (error_.empty()) error_ = std::string(what) + " at offset " + std::to_string(i_);
    return false;
  }
  void Space() {
    while (i_ < t_.size() && (t_[i_] == ' ' || t_[i_] == '\t' || t_[i_] == '\n' || t_[i_] == '\r')) ++i_;
  }
  bool Eat(char c) {
    Space();
    if (i_ < t_.size() && t_[i_] == c) {
      ++i_;
      return true;
    }
    return false;
  }
  bool Literal(std::string_view word) {
    if (t_.substr(i_, word.size()) != word) return Fail("bad literal");
    i_ += word.size();
    return true;
  }
  static bool Digit(char c) { return c >= '0' && c <= '9'; }
  bool Number() {
    if (i_ < t_.size() && t_[i_] == '-') ++i_;
    if (i_ >= t_.size() || !Digit(t_[i_])) return Fail("bad number");
    if (t_[i_] == '0') {
      ++i_;
    } else {
      while (i_ < t_.size() && Digit(t_[i_])) ++i_;
    }
    if (i_ < t_.size() && t_[i_] == '.') {
      ++i_;
      if (i_ >= t_.size() || !Digit(t_[i_])) return Fail("bad fraction");
      while (i_ < t_.size() && Digit(t_[i_])) ++i_;
    }
    if (i_ < t_.size() && (t_[i_] == 'e' || t_[i_] == 'E')) {
      ++i_;
      if (i_ < t_.size() && (t_[i_] == '+' || t_[i_] == '-')) ++i_;
      if (i_ >= t_.size() || !Digit(t_[i_])) return Fail("bad exponent");
      while (i_ < t_.size() && Digit(t_[i_])) ++i_;
    }
    return true;
  }
  bool String() {
    if (!Eat('"')) return Fail("expected string");
    while (i_ < t_.size()) {
      const unsigned char c = static_cast<unsigned char>(t_[i_++]);
      if (c == '"') return true;
      if (c < 0x20) return Fail("control character in string");
      if (c != '\\') continue;
      if (i_ >= t_.size()) break;
      const char e = t_[i_++];
      if (e == 'u') {
        for (int k = 0; k < 4; ++k, ++i_) {
          if (i_ >= t_.size() || !std::isxdigit(static_cast<unsigned char>(t_[i_]))) return Fail("bad \\u escape");
        }
      } else if (std::string_view("\"\\/bfnrt").find(e) == std::string_view::npos) {
        return Fail("bad escape");
      }
    }
    return Fail("unterminated string");
  }
  bool Value(int depth) {
    if (depth > 64) return Fail("nesting too deep");
    Space();
    if (i_ >= t_.size()) return Fail("expected a value");
    const char c = t_[i_];
    if (c == '{') {
      ++i_;
      if (Eat('}')) return true;
      do {
        if (!String() || !Eat(':') || !Value(depth + 1)) return Fail("bad object member");
      } while (Eat(','));
      return Eat('}') || Fail("expected '}'");
    }
    if (c == '[') {
      ++i_;
      if (Eat(']')) return true;
      do {
        if (!Value(depth + 1)) return Fail("bad array element");
      } while (Eat(','));
      return Eat(']') || Fail("expected ']'");
    }
    if (c == '"') return String();
    if (c == 't') return Literal("true");
    if (c == 'f') return Literal("false");
    if (c == 'n') return Literal("null");
    return Number();
  }

  std::string_view t_;
  size_t i_ = 0;
  std::string error_;
};

inline bool IsValidJson(std::string_view text, std::string* error = nullptr) {
  return JsonChecker(text).Check(error);
}

}  // namespace rseqmc::testing

#endif  // RSEQMC_TESTS_JSON_CHECK_H_
