// The `.rsq` parser: a line-at-a-time lexer and a recursive-descent parser that
// drives ScenarioBuilder. Name resolution and the semantic checks happen in
// ScenarioBuilder::Build (sim/builder.cc, sim/validate.cc); this file checks
// syntax and the things only the text knows (constants, -D, replication).
#include "scenarios/parser.h"

#include <algorithm>
#include <bit>
#include <filesystem>
#include <fstream>
#include <memory>
#include <limits>
#include <optional>
#include <set>
#include <sstream>
#include <unordered_map>

#include "import/elf_object.h"
#include "import/lift.h"
#include "scenarios/builtin.h"
#include "scenarios/syntax.h"
#include "sim/builder.h"
#include "sim/diag.h"
#include "sim/kernel/abi.h"
#include "sim/problems.h"

namespace rseqmc {
namespace {

constexpr int kMaxExprDepth = 200;
constexpr int64_t kMaxArrayElements = 1 << 20;
constexpr int64_t kMaxStride = int64_t{1} << 28;
constexpr uint64_t kTwoTo63 = uint64_t{1} << 63;

enum class Tok : uint8_t { kIdent, kInt, kString, kPunct, kEnd };

struct Token {
  Tok kind = Tok::kEnd;
  std::string_view text;  // source spelling
  std::string str;        // decoded string literal
  uint64_t bits = 0;      // integer literal: value as 64-bit two's complement
  bool only_negated = false;  // decimal 9223372036854775808: valid only after '-'
  SourceLoc loc;
};

// A property expression under construction with its tree depth.
struct Node {
  Expr e;
  int depth = 1;
};

int64_t Wrap(uint64_t bits) { return static_cast<int64_t>(bits); }

class Parser {
 public:
  Parser(std::string_view text, std::string file, const std::map<std::string, int64_t>& defines)
      : file_(std::move(file)), defines_(defines), lines_(SplitLines(text)), embedded_(IsEmbedded(text, file_)) {
    main_file_ = file_;
    main_lines_ = lines_;
  }

  Scenario ParseFile();
  Expr ParseLoneProperty(const std::vector<Constant>& constants);

 private:
  // --- errors ---------------------------------------------------------------
  [[noreturn]] void Error(SourceLoc loc, const std::string& message, const std::string& hint = "") const {
    Located(loc, message, hint);
  }
  // Throws the error at `loc`: in the scenario's file, or (its column tagged
  // by column_base_) in the included library, with that file's own line and
  // column and the include that pulled it in (review findings F2/F3).
  [[noreturn]] void Located(SourceLoc loc, const std::string& message, const std::string& hint) const {
    if (loc.column < kLibraryColumn) {
      const std::string line = SourceLine(main_lines_, loc.line);
      throw InputError(main_file_, loc, message, line, hint.empty() ? DefineHint(line) : hint);
    }
    const Library& lib = libraries_[loc.column / kLibraryColumn - 1];
    const SourceLoc own{loc.line, loc.column % kLibraryColumn};
    const std::string line = SourceLine(lib.lines, loc.line);
    throw InputError(lib.path, own,
                     message + " (in the library included from " + main_file_ + ":" +
                         std::to_string(lib.at.line) + ":" + std::to_string(lib.at.column) + ")",
                     line, hint.empty() ? DefineHint(line) : hint);
  }
  // The hint of an error on a line that names a constant given with -D: the
  // value there is the command line's, not the file's ("" if the line names
  // none).
  std::string DefineHint(std::string_view line) const {
    for (const auto& [name, value] : defines_) {
      for (size_t at = line.find(name); at != std::string_view::npos; at = line.find(name, at + 1)) {
        const size_t end = at + name.size();
        if ((at > 0 && syntax::IsIdentChar(line[at - 1])) || (end < line.size() && syntax::IsIdentChar(line[end]))) {
          continue;
        }
        return name + " here is " + std::to_string(value) + " from -D " + name + "=" + std::to_string(value) +
               ": give -D a value this line accepts, or leave -D " + name + " out to use the file's value";
      }
    }
    return "";
  }
  static std::string SourceLine(const std::vector<std::string_view>& lines, uint32_t line) {
    return line >= 1 && line <= lines.size() ? std::string(lines[line - 1]) : "";
  }

  // The lines of `text` (views into it), without their `\n` or `\r\n`.
  static std::vector<std::string_view> SplitLines(std::string_view text) {
    std::vector<std::string_view> lines;
    size_t start = 0;
    while (start <= text.size()) {
      size_t nl = text.find('\n', start);
      size_t end = nl == std::string_view::npos ? text.size() : nl;
      std::string_view line = text.substr(start, end - start);
      if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
      lines.push_back(line);
      if (nl == std::string_view::npos) break;
      start = nl + 1;
    }
    return lines;
  }

  // --- lexer ----------------------------------------------------------------
  void LexLine(uint32_t line_no);
  void LexNumber(std::string_view s, size_t& i, Token& t);
  void LexString(std::string_view s, size_t& i, Token& t);

  // --- token access ---------------------------------------------------------
  const Token& Peek(size_t k = 0) const { return pos_ + k < toks_.size() ? toks_[pos_ + k] : end_; }
  const Token& Next() {
    const Token& t = Peek();
    if (pos_ < toks_.size()) ++pos_;
    return t;
  }
  bool AtEnd() const { return pos_ >= toks_.size(); }
  static bool IsPunct(const Token& t, std::string_view p) { return t.kind == Tok::kPunct && t.text == p; }
  static bool IsWord(const Token& t, std::string_view w) { return t.kind == Tok::kIdent && t.text == w; }
  bool Accept(std::string_view p) {
    if (!IsPunct(Peek(), p)) return false;
    Next();
    return true;
  }
  static std::string Describe(const Token& t) {
    switch (t.kind) {
      case Tok::kEnd: return "end of line";
      case Tok::kString: return "a string";
      default: break;
    }
    std::string s(t.text.substr(0, 40));
    return "'" + s + (t.text.size() > 40 ? "...'" : "'");
  }
  void Expect(std::string_view p, const std::string& context) {
    if (!Accept(p)) Error(Peek().loc, "expected '" + std::string(p) + "' " + context + ", found " + Describe(Peek()));
  }
  const Token& ExpectIdent(const std::string& what) {
    if (Peek().kind != Tok::kIdent) Error(Peek().loc, "expected " + what + ", found " + Describe(Peek()));
    return Next();
  }
  void ExpectEnd(const std::string& what) {
    if (AtEnd()) return;
    const Token& t = Peek();
    std::string hint;
    for (std::string_view op : {"+", "-", "*", "/", "%", "<<", ">>"}) {
      if (!IsPunct(t, op)) continue;
      hint = what == "the instruction"
                 ? "an instruction operand is one integer or constant; declare `const NAME = (...)` for an expression"
                 : "write a constant expression in parentheses: (A + 1)";
    }
    Error(t.loc, "unexpected " + Describe(t) + " after " + what, hint);
  }

  // --- integers and constant expressions -------------------------------------
  int64_t Literal(const Token& t, bool negated);
  int64_t NamedValue(const Token& t);
  int64_t ConstExpr();                 // top-level cexpr: ['-'] INT | IDENT | '(' expr ')'
  int64_t CShift(int depth);
  int64_t CAdd(int depth);
  int64_t CMul(int depth);
  int64_t CUnary(int depth);
  int64_t CPrimary(int depth);
  int64_t ImmValue();                  // instruction immediate: ['-'] (INT | CONST)
  uint32_t ImmU32(const std::string& what);
  int64_t EvalAt(size_t pos, std::optional<int64_t> replica);
  void CheckDepth(int depth, const Token& at) const {
    if (depth > kMaxExprDepth) {
      Error(at.loc, "expression nested too deeply (more than " + std::to_string(kMaxExprDepth) + " levels)");
    }
  }

  // --- statements -------------------------------------------------------------
  void Statement();
  void ParseConst(const Token& kw);
  void ParseSymbol(const Token& kw, bool per_cpu);
  std::vector<int64_t> ParseInit(Width w, int64_t count);
  void ParseFunc(const Token& kw);
  void ParseCs(FunctionBuilder& f);
  void ParseRegion(FunctionBuilder& f);
  void ParseInstr(FunctionBuilder& f, const Token& op_tok, uint32_t func_line);
  void ParseInstrOperands(FunctionBuilder& f, const Token& op_tok, uint32_t func_line);
  void ParseThread(const Token& kw);
  void ParseSignal(const Token& kw);
  void ParseExpect(const Token& kw);
  void ParseImport(const Token& kw);
  void ParseInclude();
  std::string ReadLibrary(const std::string& path, SourceLoc at);
  void ForgetIncludedPositions(Scenario& s) const;
  void Finish();

  // --- instruction operands ----------------------------------------------------
  int Reg();
  Operand RegOrImm();
  Mem MemOperand();
  CmpKind Cmp();
  bool NextIsRegister() const {
    return Peek().kind == Tok::kIdent && syntax::LooksLikeRegister(Peek().text);
  }

  // --- property expressions ------------------------------------------------------
  Node POr(int depth) { return PBinary(0, depth); }
  Node PBinary(int level, int depth);  // precedence level 0 (||) .. 5 (* / %)
  Node PUnary(int depth);
  Node PPrimary(int depth);
  Node Binary(const Token& op, Node a, Node b);
  void ResolveConstants(Expr& e) const;
  // A signal name or number 1..31; `probe`: 0 too (tgkill's existence probe).
  int SignalOf(const Token& t, bool probe = false);

  std::string file_;
  const std::map<std::string, int64_t>& defines_;
  std::vector<std::string_view> lines_;
  uint32_t line_ = 0;
  std::vector<Token> toks_;
  size_t pos_ = 0;
  Token end_;
  std::optional<int64_t> replica_;  // `i` inside a replicated thread's attributes

  std::optional<ScenarioBuilder> b_;
  SourceLoc scenario_loc_;
  std::unordered_map<std::string, uint32_t> statement_lines_;  // once-only statements -> line
  std::unordered_map<int, uint32_t> expect_kernels_;           // KernelModel of `expect ... on` -> line
  struct KernelAt {
    KernelModel model = KernelModel::kLegacy60;
    std::string text;
    SourceLoc loc;
  };
  KernelAt ParseKernelName();
  std::unordered_map<std::string, std::pair<int64_t, uint32_t>> consts_;  // name -> (value, line)
  std::vector<std::string> const_names_;
  std::set<std::string> used_defines_;
  uint32_t cpus_ = 1;
  SourceLoc nodes_loc_;
  uint32_t nodes_ = 1;
  std::vector<std::pair<std::string, SourceLoc>> symbols_;  // declaration order
  std::set<std::string> symbol_set_;
  std::vector<std::pair<std::string, SourceLoc>> scratch_;
  std::unordered_map<int, uint32_t> signal_lines_;
  size_t thread_count_ = 0;
  struct PendingProperty {
    Expr expr;
    std::string text;
    SourceLoc loc;
  };
  std::vector<PendingProperty> properties_;
  std::vector<import::ImportedFunction> imported_;  // from `import` statements
  SourceLoc first_import_loc_;                      // the first `import` statement's file name
  std::vector<std::unique_ptr<std::string>> library_texts_;  // texts of `include`d libraries (lines_ views)
  bool including_ = false;                                   // parsing an `include`d library
  // Positions in included libraries: library k's tokens (libraries_[k])
  // have kLibraryColumn * (k + 1) added to their column, so that a position
  // names its file wherever it ends up (Located); the scenario's own have
  // column_base_ 0. Scenario positions of included code are cleared after
  // the build (ForgetIncludedPositions).
  static constexpr uint32_t kLibraryColumn = 1u << 24;
  struct Library {
    std::string path;
    std::vector<std::string_view> lines;
    SourceLoc at;  // the `include` statement's file name in the scenario
  };
  std::vector<Library> libraries_;
  uint32_t column_base_ = 0;
  std::string main_file_;
  std::vector<std::string_view> main_lines_;
  // The text is a built-in scenario's embedded copy (scenarios/builtin.h):
  // its libraries are the embedded ones too, whatever the current directory
  // holds at the same relative path (review finding F11).
  bool embedded_ = false;
  static bool IsEmbedded(std::string_view text, const std::string& file) {
    const BuiltinScenario* b = FindBuiltinScenario(file);
    return b != nullptr && b->path == file && b->text.data() == text.data();
  }
  std::set<std::string> included_functions_;                 // functions an included library defines
};

// ---------------------------------------------------------------------------
// Lexer

void Parser::LexNumber(std::string_view s, size_t& i, Token& t) {
  size_t j = i;
  while (j < s.size() && syntax::IsIdentChar(s[j])) ++j;
  std::string_view text = s.substr(i, j - i);
  t.text = text;
  // MAJOR.MINOR[.PATCH] is a kernel version word (`expect ... on 6.19`,
  // `6.19.1`), read as a name.
  const size_t dot = text.find('.');
  if (dot != std::string_view::npos && dot > 0 && text.back() != '.' && text.find("..") == std::string_view::npos &&
      text.find_first_not_of("0123456789.") == std::string_view::npos) {
    t.kind = Tok::kIdent;
    i = j;
    return;
  }
  t.kind = Tok::kInt;
  const std::string hint = "integers are decimal (42, -7) or hexadecimal (0x53053053), 64-bit";
  const std::string bad = "bad integer '" + std::string(text.substr(0, 40)) + "'";
  uint64_t v = 0;
  if (text.size() > 2 && text[0] == '0' && (text[1] == 'x' || text[1] == 'X')) {
    for (char c : text.substr(2)) {
      int d;
      if (c >= '0' && c <= '9') {
        d = c - '0';
      } else if (c >= 'a' && c <= 'f') {
        d = c - 'a' + 10;
      } else if (c >= 'A' && c <= 'F') {
        d = c - 'A' + 10;
      } else {
        Error(t.loc, bad, hint);
      }
      if (v > (std::numeric_limits<uint64_t>::max() >> 4)) Error(t.loc, bad + ": does not fit in 64 bits", hint);
      v = v * 16 + static_cast<uint64_t>(d);
    }
  } else {
    for (char c : text) {
      if (c < '0' || c > '9') Error(t.loc, bad, hint);
      uint64_t d = static_cast<uint64_t>(c - '0');
      if (v > (kTwoTo63 - d) / 10) Error(t.loc, bad + ": does not fit in 64 bits", hint);
      v = v * 10 + d;
    }
    t.only_negated = v == kTwoTo63;
  }
  t.bits = v;
  i = j;
}

void Parser::LexString(std::string_view s, size_t& i, Token& t) {
  const SourceLoc open = t.loc;
  t.kind = Tok::kString;
  size_t j = i + 1;
  auto hex = [](char c) -> int {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
  };
  while (j < s.size()) {
    char c = s[j];
    if (c == '"') {
      t.text = s.substr(i, j + 1 - i);
      i = j + 1;
      return;
    }
    if (c != '\\') {
      t.str += c;
      ++j;
      continue;
    }
    if (j + 1 >= s.size()) break;
    const SourceLoc at{open.line, static_cast<uint32_t>(j + 1) + column_base_};
    char e = s[j + 1];
    switch (e) {
      case '"': t.str += '"'; break;
      case '\\': t.str += '\\'; break;
      case 'n': t.str += '\n'; break;
      case 't': t.str += '\t'; break;
      case 'r': t.str += '\r'; break;
      case 'x': {
        int hi = j + 2 < s.size() ? hex(s[j + 2]) : -1;
        int lo = j + 3 < s.size() ? hex(s[j + 3]) : -1;
        if (hi < 0 || lo < 0) Error(at, "bad escape in string: \\x needs two hex digits");
        t.str += static_cast<char>(hi * 16 + lo);
        j += 2;
        break;
      }
      default:
        Error(at, "unknown escape '\\" + std::string(1, e) + "' in string",
              "escapes are \\\" \\\\ \\n \\t \\r and \\xHH");
    }
    j += 2;
  }
  Error(open, "unterminated string", "close the string with '\"' on the same line");
}

void Parser::LexLine(uint32_t line_no) {
  line_ = line_no;
  toks_.clear();
  pos_ = 0;
  std::string_view s = lines_[line_no - 1];
  size_t i = 0;
  size_t last_end = 0;
  while (i < s.size()) {
    char c = s[i];
    if (c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v') {
      ++i;
      continue;
    }
    if (c == '#') break;
    Token t;
    t.loc = {line_no, static_cast<uint32_t>(i + 1) + column_base_};
    if (syntax::IsIdentStart(c)) {
      size_t j = i;
      while (j < s.size() && syntax::IsIdentChar(s[j])) ++j;
      t.kind = Tok::kIdent;
      t.text = s.substr(i, j - i);
      i = j;
    } else if (c >= '0' && c <= '9') {
      LexNumber(s, i, t);
    } else if (c == '"') {
      LexString(s, i, t);
    } else {
      static constexpr std::string_view kTwo[] = {"<<", ">>", "<=", ">=", "==", "!=", "&&", "||"};
      static constexpr std::string_view kOne = ",:=[]{}()+-*/%<>!";
      t.kind = Tok::kPunct;
      std::string_view two = s.substr(i, 2);
      bool matched = false;
      for (std::string_view p : kTwo) {
        if (two == p) {
          t.text = two;
          i += 2;
          matched = true;
          break;
        }
      }
      if (!matched) {
        if (kOne.find(c) == std::string_view::npos) {
          auto u = static_cast<unsigned char>(c);
          if (u >= 0x21 && u < 0x7f) Error(t.loc, "unexpected character '" + std::string(1, c) + "'");
          char buf[8];
          std::snprintf(buf, sizeof(buf), "0x%02x", u);
          Error(t.loc, std::string("unexpected byte ") + buf, "outside strings and comments the text is ASCII");
        }
        t.text = s.substr(i, 1);
        ++i;
      }
    }
    last_end = i;
    toks_.push_back(std::move(t));
  }
  end_ = Token();
  end_.loc = {line_no, static_cast<uint32_t>(last_end + 1) + column_base_};
}

// ---------------------------------------------------------------------------
// Integers and constant expressions

int64_t Parser::Literal(const Token& t, bool negated) {
  if (negated) return Wrap(0 - t.bits);
  if (t.only_negated) Error(t.loc, "integer " + std::string(t.text) + " does not fit in 64 bits");
  return Wrap(t.bits);
}

int64_t Parser::NamedValue(const Token& t) {
  std::string name(t.text);
  if (replica_ && name == "i") return *replica_;
  auto it = consts_.find(name);
  if (it != consts_.end()) return it->second.first;
  std::string hint = DidYouMean(name, const_names_);
  if (hint.empty() && name == "i") hint = "`i` is the replica index of `thread NAME * N` (in its cpu, affinity, args)";
  if (hint.empty() && syntax::LooksLikeRegister(name)) hint = "a register cannot appear here";
  if (hint.empty()) hint = "declare it first with `const " + name + " = VALUE`";
  Error(t.loc, "unknown constant '" + name + "'", hint);
}

int64_t Parser::ConstExpr() {
  const Token& t = Peek();
  if (IsPunct(t, "(")) return CPrimary(0);
  if (IsPunct(t, "-")) {
    Next();
    const Token& n = Peek();
    if (n.kind == Tok::kInt) return Literal(Next(), true);
    int64_t v = CPrimary(1);
    if (v == std::numeric_limits<int64_t>::min()) Error(t.loc, "integer overflow in constant expression");
    return -v;
  }
  if (t.kind == Tok::kInt || t.kind == Tok::kIdent) return CPrimary(0);
  Error(t.loc, "expected an integer, a constant or '(' expression ')', found " + Describe(t));
}

int64_t Parser::CPrimary(int depth) {
  const Token& t = Next();
  CheckDepth(depth, t);
  if (t.kind == Tok::kInt) return Literal(t, false);
  if (t.kind == Tok::kIdent) return NamedValue(t);
  if (IsPunct(t, "(")) {
    int64_t v = CShift(depth + 1);
    Expect(")", "to close the expression");
    return v;
  }
  Error(t.loc, "expected an integer, a constant or '(', found " + Describe(t));
}

int64_t Parser::CUnary(int depth) {
  const Token& t = Peek();
  CheckDepth(depth, t);
  if (IsPunct(t, "-")) {
    Next();
    if (Peek().kind == Tok::kInt) return Literal(Next(), true);
    int64_t v = CUnary(depth + 1);
    if (v == std::numeric_limits<int64_t>::min()) Error(t.loc, "integer overflow in constant expression");
    return -v;
  }
  if (IsPunct(t, "+")) {
    Next();
    return CUnary(depth + 1);
  }
  return CPrimary(depth);
}

int64_t Parser::CMul(int depth) {
  int64_t v = CUnary(depth);
  for (;;) {
    const Token& op = Peek();
    if (!IsPunct(op, "*") && !IsPunct(op, "/") && !IsPunct(op, "%")) return v;
    Next();
    int64_t r = CUnary(depth);
    if (op.text == "*") {
      if (__builtin_mul_overflow(v, r, &v)) Error(op.loc, "integer overflow in constant expression");
      continue;
    }
    if (r == 0) Error(op.loc, "division by zero in constant expression");
    if (v == std::numeric_limits<int64_t>::min() && r == -1) {
      Error(op.loc, "integer overflow in constant expression");
    }
    v = op.text == "/" ? v / r : v % r;
  }
}

int64_t Parser::CAdd(int depth) {
  int64_t v = CMul(depth);
  for (;;) {
    const Token& op = Peek();
    if (!IsPunct(op, "+") && !IsPunct(op, "-")) return v;
    Next();
    int64_t r = CMul(depth);
    bool overflow = op.text == "+" ? __builtin_add_overflow(v, r, &v) : __builtin_sub_overflow(v, r, &v);
    if (overflow) Error(op.loc, "integer overflow in constant expression");
  }
}

int64_t Parser::CShift(int depth) {
  int64_t v = CAdd(depth);
  for (;;) {
    const Token& op = Peek();
    if (!IsPunct(op, "<<") && !IsPunct(op, ">>")) return v;
    Next();
    int64_t r = CAdd(depth);
    if (r < 0 || r > 63) Error(op.loc, "shift count " + std::to_string(r) + " out of range (0..63)");
    if (op.text == ">>") {
      v >>= r;
      continue;
    }
    __int128 wide = static_cast<__int128>(v) * (static_cast<__int128>(1) << r);
    if (wide > std::numeric_limits<int64_t>::max() || wide < std::numeric_limits<int64_t>::min()) {
      Error(op.loc, "integer overflow in constant expression");
    }
    v = static_cast<int64_t>(wide);
  }
}

int64_t Parser::ImmValue() {
  const Token& start = Peek();
  bool neg = Accept("-");
  const Token& t = Next();
  if (t.kind == Tok::kInt) return Literal(t, neg);
  if (t.kind == Tok::kIdent) {
    if (syntax::LooksLikeRegister(t.text)) {
      Error(t.loc, "expected an integer or a constant, found register '" + std::string(t.text) + "'");
    }
    int64_t v = NamedValue(t);
    if (neg && v == std::numeric_limits<int64_t>::min()) Error(start.loc, "integer overflow");
    return neg ? -v : v;
  }
  if (IsPunct(t, "(")) {
    Error(t.loc, "constant expressions in parentheses are not allowed in instructions",
          "declare a `const NAME = (...)` and use NAME");
  }
  Error(t.loc, "expected an integer or a constant, found " + Describe(t));
}

uint32_t Parser::ImmU32(const std::string& what) {
  const Token& t = Peek();
  int64_t v = ImmValue();
  if (v < 0 || v > static_cast<int64_t>(UINT32_MAX)) {
    Error(t.loc, what + " " + std::to_string(v) + " does not fit in 32 bits (0..0xffffffff)");
  }
  return static_cast<uint32_t>(v);
}

int64_t Parser::EvalAt(size_t pos, std::optional<int64_t> replica) {
  size_t saved = pos_;
  pos_ = pos;
  replica_ = replica;
  int64_t v = ConstExpr();
  replica_.reset();
  pos_ = saved;
  return v;
}

// ---------------------------------------------------------------------------
// Statements

Scenario Parser::ParseFile() {
  for (uint32_t n = 1; n <= lines_.size(); ++n) {
    LexLine(n);
    if (toks_.empty()) continue;
    Statement();
    n = line_;  // a function consumes its body lines
  }
  Finish();
  try {
    Scenario s = b_->Build();
    import::FinishImport(imported_, s);
    ForgetIncludedPositions(s);
    return s;
  } catch (const import::ImportError& e) {
    // ImportFunctions already applied each file's relocations at its import
    // line; this is a backstop so an import problem is never an internal error.
    Error(first_import_loc_, e.what(), "`rseqmc import FILE` lists what can be imported");
  } catch (const InputError& e) {
    // Builder and validation errors carry positions but not the text.
    if (e.loc().line == 0) throw InputError(e.file(), e.loc(), e.message(), "", e.hint());
    Located(e.loc(), e.message(), e.hint());
  }
}

void Parser::Statement() {
  const Token& kw = Next();
  if (kw.kind != Tok::kIdent) Error(kw.loc, "expected a statement, found " + Describe(kw));
  const std::string word(kw.text);
  if (!b_) {
    if (word != "scenario") {
      Error(kw.loc, "the first statement must be `scenario NAME`, found '" + word + "'",
            "start the file with a line `scenario NAME`");
    }
  }
  static const std::vector<std::string> kStatements = {"scenario", "description", "cpus",   "nodes",   "const",
                                                       "var",      "percpu",      "scratch", "func",   "thread",
                                                       "signal",   "property",    "expect",   "import",
                                                       "preempt",  "include"};
  static const std::set<std::string> kOnce = {"scenario", "description", "cpus", "nodes", "preempt"};
  if (kOnce.count(word)) {
    auto [it, inserted] = statement_lines_.emplace(word, kw.loc.line);
    if (!inserted) {
      Error(kw.loc, "duplicate `" + word + "` statement (first at line " + std::to_string(it->second) + ")");
    }
  }
  if (word == "scenario") {
    const Token& name = ExpectIdent("the scenario name");
    ExpectEnd("the scenario name");
    b_.emplace(std::string(name.text), file_);
    scenario_loc_ = kw.loc;
  } else if (word == "description") {
    if (Peek().kind != Tok::kString) Error(Peek().loc, "expected a string after `description`, found " + Describe(Peek()));
    std::string d = Next().str;
    ExpectEnd("the description");
    b_->Description(std::move(d));
  } else if (word == "cpus" || word == "nodes") {
    const Token& at = Peek();
    int64_t n = ConstExpr();
    ExpectEnd("the count");
    if (n < 1 || n > kMaxCpus) Error(at.loc, word + " must be between 1 and 64 (got " + std::to_string(n) + ")");
    if (word == "cpus") {
      cpus_ = static_cast<uint32_t>(n);
      b_->Cpus(cpus_);
    } else {
      nodes_ = static_cast<uint32_t>(n);
      nodes_loc_ = at.loc;
      b_->Nodes(nodes_);
    }
  } else if (word == "preempt") {
    const Token& model = ExpectIdent("`full` or `voluntary`");
    if (model.text != "full" && model.text != "voluntary") {
      Error(model.loc, "unknown preemption model '" + std::string(model.text) + "'",
            "preempt full (CONFIG_PREEMPT: every switch-out) or preempt voluntary (only a switch-out inside a "
            "region requests notify-resume)");
    }
    ExpectEnd("the preemption model");
    b_->Preempt(model.text == "full" ? Preemption::kFull : Preemption::kVoluntary, model.loc);
  } else if (word == "const") {
    ParseConst(kw);
  } else if (word == "var" || word == "percpu") {
    ParseSymbol(kw, word == "percpu");
  } else if (word == "scratch") {
    do {
      const Token& name = ExpectIdent("a symbol name");
      scratch_.emplace_back(std::string(name.text), name.loc);
      b_->Scratch(std::string(name.text));
    } while (Accept(","));
    ExpectEnd("the scratch list");
  } else if (word == "func") {
    ParseFunc(kw);
  } else if (word == "thread") {
    ParseThread(kw);
  } else if (word == "signal") {
    ParseSignal(kw);
  } else if (word == "property") {
    if (AtEnd()) Error(Peek().loc, "expected an expression after `property`");
    const Token& first = Peek();
    Node n = POr(0);
    ExpectEnd("the property expression");
    const Token& last = toks_.back();
    size_t from = first.loc.column - 1, to = last.loc.column - 1 + last.text.size();
    properties_.push_back({std::move(n.e), std::string(lines_[line_ - 1].substr(from, to - from)), first.loc});
  } else if (word == "expect") {
    ParseExpect(kw);
  } else if (word == "import") {
    ParseImport(kw);
  } else if (word == "include") {
    ParseInclude();
  } else {
    std::string hint = DidYouMean(word, kStatements);
    if (hint.empty() && syntax::LookupMnemonic(word)) hint = "instructions go inside `func NAME` ... `end`";
    if (word == "cs" || word == "region") {
      hint = "`" + word + "` goes inside the function whose labels it names, before its `end`";
    }
    if (hint.empty()) hint = "statements are: " + JoinNames(kStatements, 20);
    Error(kw.loc, "unknown statement '" + word + "'", hint);
  }
}

// import "FILE" function NAME { ',' NAME }: lifts the named functions of an
// x86-64 ELF file (import/lift.h); FILE is relative to the scenario's folder.
void Parser::ParseImport(const Token& kw) {
  (void)kw;
  if (Peek().kind != Tok::kString) {
    Error(Peek().loc, "expected the object file name as a string after `import`, found " + Describe(Peek()),
          "import \"percpu_ops.o\" function percpu_add");
  }
  const Token& file_tok = Next();
  const SourceLoc file_loc = file_tok.loc;
  if (imported_.empty()) first_import_loc_ = file_loc;
  std::string path = file_tok.str;
  const size_t slash = file_.rfind('/');
  if (!path.empty() && path[0] != '/' && slash != std::string::npos) path = file_.substr(0, slash + 1) + path;
  const Token& fn_kw = ExpectIdent("`function` after the file name");
  if (fn_kw.text != "function") {
    Error(fn_kw.loc, "expected `function` after the file name, found " + Describe(fn_kw),
          "import \"FILE\" function NAME, NAME2");
  }
  std::vector<std::string> names;
  do {
    const Token& name_tok = ExpectIdent("a function name");
    std::string name(name_tok.text);
    if (std::find(names.begin(), names.end(), name) != names.end()) {
      Error(name_tok.loc, "function '" + name + "' is named twice in this import", "name each function once");
    }
    names.push_back(std::move(name));
  } while (Accept(","));
  ExpectEnd("the imported function names");
  try {
    const import::ElfObject obj = import::ElfObject::Open(path);
    auto lifted = import::ImportFunctions(obj, names, *b_, file_loc);
    for (auto& f : lifted) imported_.push_back(std::move(f));
  } catch (const import::ImportError& e) {
    Error(file_loc, e.what(),
          !e.hint().empty() ? e.hint()
                            : "`rseqmc import " + path +
                                  "` lists what can be imported; import/lift.h lists the supported instructions");
  }
}

// include "FILE": parses the statements of the IR library FILE (relative to
// the including file's folder; a built-in scenario's library is the embedded
// one when the file is not on disk) as if they stood here. Errors inside it
// name FILE and its line; its instructions keep no line number afterwards
// (Scenario positions are lines of the scenario's own file), so messages name
// them by function and label.
void Parser::ParseInclude() {
  if (Peek().kind != Tok::kString) {
    Error(Peek().loc, "expected the library file name as a string after `include`, found " + Describe(Peek()),
          "include \"alloc_common.rsqi\"");
  }
  const Token& file_tok = Next();
  const SourceLoc at = file_tok.loc;
  std::string path = file_tok.str;
  ExpectEnd("the library file name");
  if (including_) Error(at, "an included library cannot include another", "include every library from the scenario");
  if (path.find('\0') != std::string::npos) {
    Error(at, "the library file name contains a NUL byte", "write the file name without control characters");
  }
  const size_t slash = file_.rfind('/');
  if (!path.empty() && path[0] != '/' && slash != std::string::npos) path = file_.substr(0, slash + 1) + path;
  path = std::filesystem::path(path).lexically_normal().string();
  if (libraries_.size() + 1 >= std::numeric_limits<uint32_t>::max() / kLibraryColumn) {
    Error(at, "too many included libraries", "include at most 254 libraries");
  }
  library_texts_.push_back(std::make_unique<std::string>(ReadLibrary(path, at)));
  std::string saved_file = std::exchange(file_, path);
  std::vector<std::string_view> saved_lines = std::exchange(lines_, SplitLines(*library_texts_.back()));
  libraries_.push_back({path, lines_, at});
  column_base_ = static_cast<uint32_t>(libraries_.size()) * kLibraryColumn;
  const uint32_t saved_line = line_;
  including_ = true;
  static const std::set<std::string_view> kLibraryStatements = {"const", "var", "percpu", "scratch", "func",
                                                                          "signal"};
  for (uint32_t n = 1; n <= lines_.size(); ++n) {
    LexLine(n);
    if (toks_.empty()) continue;
    if (Peek().kind == Tok::kIdent && !kLibraryStatements.count(Peek().text)) {
      Error(Peek().loc, "a library holds only `const`, `var`, `percpu`, `scratch`, `func` and `signal` statements",
            "write `" + std::string(Peek().text.substr(0, 20)) + "` in the including scenario");
    }
    Statement();
    n = line_;
  }
  column_base_ = 0;
  including_ = false;
  file_ = std::move(saved_file);
  lines_ = std::move(saved_lines);
  line_ = saved_line;
  toks_.clear();
  pos_ = 0;
}

std::string Parser::ReadLibrary(const std::string& path, SourceLoc at) {
  if (embedded_) {
    if (const std::string_view* builtin = FindBuiltinLibrary(path)) return std::string(*builtin);
  }
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) {
    Error(at, "cannot include '" + path + "': it is a directory", "name an IR library file (.rsqi) in it");
  }
  // A device or FIFO would block or never end (`include "/dev/zero"` read
  // until memory ran out): a library is a regular file.
  const std::filesystem::file_status st = std::filesystem::status(path, ec);
  if (!ec && std::filesystem::exists(st) && !std::filesystem::is_regular_file(st)) {
    Error(at, "cannot include '" + path + "': it is not a regular file (a device, FIFO or socket)",
          "name an IR library file (.rsqi)");
  }
  std::ifstream in(path, std::ios::binary);
  if (in) {
    std::ostringstream text;
    text << in.rdbuf();
    if (!in.bad()) return text.str();
  }
  if (const std::string_view* builtin = FindBuiltinLibrary(path)) return std::string(*builtin);
  Error(at, "cannot read library '" + path + "'", "the path is relative to the including file's folder");
}

void Parser::ForgetIncludedPositions(Scenario& s) const {
  for (Function& f : s.program.functions) {
    if (!included_functions_.count(f.name)) continue;
    f.loc = {};
    for (uint32_t pc = f.first; pc < f.first + f.count; ++pc) s.program.code[pc].loc = {};
  }
  // Whatever else a library declared (symbols, descriptors, signals) keeps
  // no position either: Scenario positions are the scenario file's.
  auto forget = [](SourceLoc& loc) {
    if (loc.column >= kLibraryColumn) loc = {};
  };
  for (Symbol& sym : s.program.symbols) forget(sym.loc);
  for (CsDescriptor& d : s.program.descriptors) forget(d.loc);
  for (Instr& in : s.program.code) forget(in.loc);
  for (SignalSpec& sg : s.signals) forget(sg.loc);
}

void Parser::ParseConst(const Token& kw) {
  (void)kw;
  const Token& name_tok = ExpectIdent("a constant name");
  std::string name(name_tok.text);
  if (syntax::LooksLikeRegister(name)) Error(name_tok.loc, "a constant cannot be named like a register");
  auto prev = consts_.find(name);
  if (prev != consts_.end()) {
    Error(name_tok.loc,
          "duplicate constant '" + name + "' (first declared at line " + std::to_string(prev->second.second) + ")");
  }
  Expect("=", "after the constant name");
  int64_t v = ConstExpr();
  ExpectEnd("the constant's value");
  bool overridden = false;
  auto d = defines_.find(name);
  if (d != defines_.end()) {
    v = d->second;
    overridden = true;
    used_defines_.insert(name);
  }
  consts_.emplace(name, std::make_pair(v, name_tok.loc.line));
  const_names_.push_back(name);
  b_->Const(name, v, overridden);
}

std::vector<int64_t> Parser::ParseInit(Width w, int64_t count) {
  std::vector<int64_t> init;
  auto one = [&] {
    const Token& at = Peek();
    int64_t v = ConstExpr();
    if (w == Width::kU32 && (v < std::numeric_limits<int32_t>::min() || v > static_cast<int64_t>(UINT32_MAX))) {
      Error(at.loc, "initial value " + std::to_string(v) + " does not fit in u32");
    }
    if (static_cast<int64_t>(init.size()) >= count) {
      Error(at.loc, "more initial values than the " + std::to_string(count) + " element(s) declared");
    }
    init.push_back(v);
  };
  if (Accept("{")) {
    do {
      one();
    } while (Accept(","));
    Expect("}", "to close the initial values");
  } else {
    one();
  }
  return init;
}

void Parser::ParseSymbol(const Token& kw, bool per_cpu) {
  (void)kw;
  const Token& name_tok = ExpectIdent("a symbol name");
  std::string name(name_tok.text);
  Expect(":", "after the symbol name (as in `" + std::string(kw.text) + " " + name + ": u64`)");
  const Token& type = ExpectIdent("a type (u64 or u32)");
  Width w;
  if (type.text == "u64") {
    w = Width::kU64;
  } else if (type.text == "u32") {
    w = Width::kU32;
  } else {
    Error(type.loc, "unknown type '" + std::string(type.text) + "'", "use u64 or u32");
  }
  int64_t count = 1;
  if (Accept("[")) {
    const Token& at = Peek();
    count = ConstExpr();
    if (count < 1 || count > kMaxArrayElements) {
      Error(at.loc, "array size " + std::to_string(count) + " out of range (1.." + std::to_string(kMaxArrayElements) +
                        ")");
    }
    Expect("]", "to close the array size");
  }
  int64_t stride = 0;
  if (per_cpu && IsWord(Peek(), "stride")) {
    Next();
    const Token& at = Peek();
    stride = ConstExpr();
    if (stride < 1 || stride > kMaxStride) {
      Error(at.loc, "stride " + std::to_string(stride) + " out of range (1.." + std::to_string(kMaxStride) + ")");
    }
  }
  std::vector<int64_t> init;
  if (Accept("=")) init = ParseInit(w, count);
  ExpectEnd("the declaration");
  symbols_.emplace_back(name, name_tok.loc);
  symbol_set_.insert(name);
  b_->At(name_tok.loc);
  if (per_cpu) {
    b_->PerCpu(name, w, static_cast<uint32_t>(count), static_cast<uint64_t>(stride), std::move(init));
  } else {
    b_->Var(name, w, static_cast<uint32_t>(count), std::move(init));
  }
}

void Parser::ParseFunc(const Token& kw) {
  const Token& name_tok = ExpectIdent("a function name");
  const std::string name(name_tok.text);
  const SourceLoc name_loc = name_tok.loc;
  ExpectEnd("the function name");
  FunctionBuilder& f = b_->Func(name, name_loc);
  if (including_) included_functions_.insert(name);
  const SourceLoc func_loc = kw.loc;  // `kw` points into the token list, which the body's lines replace
  const uint32_t func_line = func_loc.line;
  for (uint32_t n = line_ + 1;; ++n) {
    if (n > lines_.size()) {
      Error(func_loc, "function '" + name + "' has no `end`", "close the function with a line `end`");
    }
    LexLine(n);
    if (toks_.empty()) continue;
    const Token& t = Peek();
    if (t.kind != Tok::kIdent) {
      Error(t.loc, "expected an instruction, a label, `cs` or `end`, found " + Describe(t));
    }
    if (IsPunct(Peek(1), ":")) {
      const Token& label = Next();
      Next();
      ExpectEnd("the label (a label stands on its own line)");
      f.At(label.loc).Label(std::string(label.text));
      continue;
    }
    if (t.text == "end") {
      Next();
      ExpectEnd("`end`");
      return;
    }
    if (t.text == "cs") {
      ParseCs(f);
      continue;
    }
    if (t.text == "region") {
      ParseRegion(f);
      continue;
    }
    ParseInstr(f, Next(), func_line);
  }
}

void Parser::ParseCs(FunctionBuilder& f) {
  const Token& cs_tok = Next();
  const Token& name_tok = ExpectIdent("a descriptor name");
  std::string label[3];
  bool have[3] = {false, false, false};
  static const std::vector<std::string> kKeys = {"start", "post_commit", "abort", "flags", "version", "unchecked"};
  uint32_t flags = 0, version = 0;
  bool unchecked = false;
  std::set<std::string> seen;
  while (!AtEnd()) {
    const Token& key = ExpectIdent("a descriptor field (start=, post_commit=, abort=, flags=, version=, unchecked)");
    std::string k(key.text);
    auto it = std::find(kKeys.begin(), kKeys.end(), k);
    if (it == kKeys.end()) {
      std::string hint = DidYouMean(k, kKeys);
      Error(key.loc, "unknown descriptor field '" + k + "'",
            hint.empty() ? "fields are start=, post_commit=, abort=, flags=, version= and unchecked" : hint);
    }
    if (!seen.insert(k).second) Error(key.loc, "duplicate descriptor field '" + k + "'");
    if (k == "unchecked") {
      unchecked = true;
      continue;
    }
    Expect("=", "after '" + k + "'");
    size_t idx = static_cast<size_t>(it - kKeys.begin());
    if (idx < 3) {
      label[idx] = std::string(ExpectIdent("a label").text);
      have[idx] = true;
    } else if (k == "flags") {
      flags = ImmU32("flags");
    } else {
      version = ImmU32("version");
    }
  }
  if (!have[0] || !have[1] || !have[2]) {
    Error(cs_tok.loc, "descriptor '" + std::string(name_tok.text) + "' needs start=, post_commit= and abort=",
          "cs NAME start=LABEL post_commit=LABEL abort=LABEL");
  }
  f.At(name_tok.loc).Cs(std::string(name_tok.text), label[0], label[1], label[2], flags, version, unchecked);
}

// region NAME start=LABEL end=LABEL restart=LABEL [unchecked]: a 2015-RFC
// region (CsDescriptor::region).
void Parser::ParseRegion(FunctionBuilder& f) {
  const Token& kw = Next();
  const Token& name_tok = ExpectIdent("a region name");
  static const std::vector<std::string> kKeys = {"start", "end", "restart", "unchecked"};
  std::string label[3];
  bool have[3] = {false, false, false};
  bool unchecked = false;
  while (!AtEnd()) {
    const Token& key = ExpectIdent("a region field (start=, end=, restart=, unchecked)");
    const std::string k(key.text);
    auto it = std::find(kKeys.begin(), kKeys.end(), k);
    if (it == kKeys.end()) {
      std::string hint = DidYouMean(k, kKeys);
      Error(key.loc, "unknown region field '" + k + "'",
            hint.empty() ? "fields are start=, end=, restart= and unchecked (a region has no flags, version or "
                           "signature)"
                         : hint);
    }
    const size_t idx = static_cast<size_t>(it - kKeys.begin());
    if ((idx < 3 && have[idx]) || (idx == 3 && unchecked)) {
      Error(key.loc, "duplicate region field '" + k + "'",
            "give each field once: region NAME start=LABEL end=LABEL restart=LABEL [unchecked]");
    }
    if (idx == 3) {
      unchecked = true;
      continue;
    }
    Expect("=", "after '" + k + "'");
    label[idx] = std::string(ExpectIdent("a label").text);
    have[idx] = true;
  }
  if (!have[0] || !have[1] || !have[2]) {
    Error(kw.loc, "region '" + std::string(name_tok.text) + "' needs start=, end= and restart=",
          "region NAME start=LABEL end=LABEL restart=LABEL");
  }
  f.At(name_tok.loc).Region(std::string(name_tok.text), label[0], label[1], label[2], unchecked);
}

int Parser::Reg() {
  const Token& t = Next();
  if (t.kind == Tok::kIdent && syntax::LooksLikeRegister(t.text)) {
    std::string_view digits = t.text.substr(1);
    if (digits.size() <= 2) {
      int n = 0;
      for (char c : digits) n = n * 10 + (c - '0');
      if (n < kNumRegs) return n;
    }
    Error(t.loc, "register '" + std::string(t.text.substr(0, 40)) + "' out of range", "registers are r0..r15");
  }
  Error(t.loc, "expected a register (r0..r15), found " + Describe(t));
}

Operand Parser::RegOrImm() {
  if (NextIsRegister()) return R(Reg());
  return rseqmc::Imm(ImmValue());
}

Mem Parser::MemOperand() {
  const Token& open = Peek();
  if (!IsPunct(open, "[")) {
    Error(open.loc, "expected a memory operand ([rB], [rB + 8], [rB + rI*8]), found " + Describe(open));
  }
  Next();
  Mem m(Reg());
  if (IsPunct(Peek(), "+") || IsPunct(Peek(), "-")) {
    const Token& sign = Next();
    if (NextIsRegister()) {
      if (sign.text == "-") Error(Peek().loc, "an index register cannot be subtracted");
      m.has_index = true;
      m.index = static_cast<uint8_t>(Reg());
      m.scale = 1;
      if (Accept("*")) {
        const Token& st = Peek();
        int64_t scale = ImmValue();
        if (scale != 1 && scale != 2 && scale != 4 && scale != 8) {
          Error(st.loc, "bad scale " + std::to_string(scale), "the index scale is 1, 2, 4 or 8");
        }
        m.scale = static_cast<uint8_t>(scale);
      }
      if (IsPunct(Peek(), "+") || IsPunct(Peek(), "-")) {
        const Token& sign2 = Next();
        int64_t d = ImmValue();
        if (sign2.text == "-") {
          if (d == std::numeric_limits<int64_t>::min()) Error(sign2.loc, "displacement out of range");
          d = -d;
        }
        m.disp = d;
      }
    } else {
      int64_t d = ImmValue();
      if (sign.text == "-") {
        if (d == std::numeric_limits<int64_t>::min()) Error(sign.loc, "displacement out of range");
        d = -d;
      }
      m.disp = d;
    }
  }
  Expect("]", "to close the memory operand");
  return m;
}

CmpKind Parser::Cmp() {
  const Token& t = Next();
  static const std::pair<std::string_view, CmpKind> kSigned[] = {
      {"==", CmpKind::kEq}, {"!=", CmpKind::kNe}, {"<", CmpKind::kLt},
      {"<=", CmpKind::kLe}, {">", CmpKind::kGt},  {">=", CmpKind::kGe}};
  if (t.kind == Tok::kPunct) {
    for (const auto& [text, kind] : kSigned) {
      if (t.text != text) continue;
      // `<u` etc.: the comparison immediately followed by the word `u`.
      const Token& u = Peek();
      bool unsigned_cmp = IsWord(u, "u") && u.loc.column == t.loc.column + t.text.size();
      if (!unsigned_cmp) return kind;
      if (kind == CmpKind::kEq || kind == CmpKind::kNe) Error(u.loc, "'" + std::string(t.text) + "u' is not a comparison");
      Next();
      switch (kind) {
        case CmpKind::kLt: return CmpKind::kLtu;
        case CmpKind::kLe: return CmpKind::kLeu;
        case CmpKind::kGt: return CmpKind::kGtu;
        default: return CmpKind::kGeu;
      }
    }
  }
  Error(t.loc, "expected a comparison (== != < <= > >= <u <=u >u >=u), found " + Describe(t));
}

int Parser::SignalOf(const Token& t, bool probe) {
  int signo = -1;
  if (t.kind == Tok::kInt) {
    int64_t v = Literal(t, false);
    signo = v >= (probe ? 0 : 1) && v <= kMaxSignal ? static_cast<int>(v) : -1;
    if (signo < 0) {
      Error(t.loc, "signal " + std::string(t.text) + " out of range (" + (probe ? "0" : "1") + "..31)",
            probe ? "0 sends nothing and only probes that the thread exists (tgkill(2))" : "");
    }
    return signo;
  }
  if (t.kind != Tok::kIdent) Error(t.loc, "expected a signal name (SIGUSR1, ...), found " + Describe(t));
  signo = SignalNumber(std::string(t.text));
  if (signo < 1 || signo > kMaxSignal) {
    std::vector<std::string> names;
    for (int s = 1; s <= kMaxSignal; ++s) names.push_back(SignalName(s));
    std::string hint = DidYouMean(t.text, names);
    Error(t.loc, "unknown signal '" + std::string(t.text.substr(0, 40)) + "'",
          hint.empty() ? "use a Linux x86-64 signal name such as SIGUSR1" : hint);
  }
  return signo;
}

// The operand forms of the blocking, signal and 2015-RFC instructions
// (scenarios/README.md's instruction table), for the hint of an operand
// error; "" for the others.
std::string OperandForm(Op op) {
  switch (op) {
    case Op::kFutexWait: return "futex_wait rADDR, rVALUE|INT (the u32 at rADDR; `la rADDR, SYMBOL` first)";
    case Op::kFutexWake: return "futex_wake rADDR, rCOUNT|INT (`la rADDR, SYMBOL` first)";
    case Op::kSleep: return "sleep rNS|INT (nanoseconds of simulated time)";
    case Op::kRfcRegion: return "rfc_region REGION (a `region NAME start= end= restart=` of the scenario)";
    case Op::kRfcCpuPtr: return "rfc_cpu_ptr rADDR|INT (the u32 the kernel writes the CPU number to; 0 unregisters)";
    case Op::kTgkill: return "tgkill THREAD|rINDEX|INT, SIGNAL|INT";
    case Op::kPreemptLock: return "preempt_lock rADDR|INT, SIGNAL (the u32 flag word; 0 unregisters)";
    case Op::kSigctxRestart: return "sigctx_restart REGION (a `region NAME start= end= restart=` of the scenario)";
    default: return "";
  }
}

void Parser::ParseInstr(FunctionBuilder& f, const Token& op_tok, uint32_t func_line) {
  try {
    ParseInstrOperands(f, op_tok, func_line);
  } catch (const InputError& e) {
    const std::optional<Op> op = syntax::LookupMnemonic(op_tok.text);
    if (!e.hint().empty() || !op || OperandForm(*op).empty()) throw;
    Error(e.loc(), e.message(), "the form: " + OperandForm(*op));
  }
}

void Parser::ParseInstrOperands(FunctionBuilder& f, const Token& op_tok, uint32_t func_line) {
  const std::string word(op_tok.text);
  std::optional<Op> op = syntax::LookupMnemonic(word);
  if (!op) {
    static const std::set<std::string> kTop = {"scenario", "description", "cpus",   "nodes",  "const",
                                               "var",      "percpu",      "scratch", "func",  "thread",
                                               "signal",   "property",    "expect",   "import",
                                               "preempt"};
    std::string hint = DidYouMean(word, syntax::AllMnemonics());
    if (kTop.count(word)) {
      hint = "the function opened at line " + std::to_string(func_line) + " is missing its `end`";
    }
    Error(op_tok.loc, "unknown instruction '" + word.substr(0, 40) + "'", hint);
  }
  f.At(op_tok.loc);
  auto comma = [&] { Expect(",", "between operands of `" + word + "`"); };
  switch (*op) {
    case Op::kLi: {
      int rd = Reg();
      comma();
      f.Li(rd, ImmValue());
      break;
    }
    case Op::kMov: {
      int rd = Reg();
      comma();
      f.Mov(rd, Reg());
      break;
    }
    case Op::kLa: {
      int rd = Reg();
      comma();
      std::string sym(ExpectIdent("a symbol name").text);
      int64_t off = 0;
      if (IsPunct(Peek(), "+") || IsPunct(Peek(), "-")) {
        const Token& sign = Next();
        off = ImmValue();
        if (sign.text == "-") {
          if (off == std::numeric_limits<int64_t>::min()) Error(sign.loc, "offset out of range");
          off = -off;
        }
      }
      f.La(rd, sym, off);
      break;
    }
    case Op::kLd:
    case Op::kLd32: {
      int rd = Reg();
      comma();
      Mem m = MemOperand();
      *op == Op::kLd ? f.Ld(rd, m) : f.Ld32(rd, m);
      break;
    }
    case Op::kSt:
    case Op::kSt32: {
      Mem m = MemOperand();
      comma();
      int rt = Reg();
      *op == Op::kSt ? f.St(m, rt) : f.St32(m, rt);
      break;
    }
    case Op::kJmp: f.Jmp(std::string(ExpectIdent("a label").text)); break;
    case Op::kCall: f.Call(std::string(ExpectIdent("a function name").text)); break;
    case Op::kRet: f.Ret(); break;
    case Op::kRseqLoad: {
      int rd = Reg();
      comma();
      const Token& field = ExpectIdent("a struct rseq field");
      std::optional<RseqField> fld = syntax::LookupField(field.text);
      if (!fld) {
        std::string hint = DidYouMean(field.text, syntax::AllFieldNames());
        Error(field.loc, "unknown struct rseq field '" + std::string(field.text.substr(0, 40)) + "'",
              hint.empty() ? "fields are " + JoinNames(syntax::AllFieldNames()) : hint);
      }
      f.RseqLoad(rd, *fld);
      break;
    }
    case Op::kRseqAddr: f.RseqAddr(Reg()); break;
    case Op::kRseqArm: f.RseqArm(std::string(ExpectIdent("a descriptor name").text)); break;
    case Op::kRfcRegion: f.RfcRegion(std::string(ExpectIdent("a region name").text)); break;
    case Op::kRfcCpuPtr: f.RfcCpuPtr(RegOrImm()); break;
    case Op::kPreemptLock: {
      const Operand flag = RegOrImm();
      comma();
      f.PreemptLock(flag, SignalOf(Next()));
      break;
    }
    case Op::kSigctxRestart: f.SigctxRestart(std::string(ExpectIdent("a region name").text)); break;
    case Op::kSig: f.Sig(ImmU32("signature")); break;
    case Op::kCas: {
      int rd = Reg();
      comma();
      const Token& mem_tok = Peek();
      Mem m = MemOperand();
      if (m.has_index) {
        Error(mem_tok.loc, "`cas` takes [rB] or [rB + IMM]: an index register cannot be encoded",
              "compute the address first (`shl`, `add`), then `cas rd, [rX], rexp, rnew`");
      }
      comma();
      int expected = Reg();
      comma();
      f.Cas(rd, m, expected, Reg());
      break;
    }
    case Op::kXadd:
    case Op::kXchg: {
      int rd = Reg();
      comma();
      Mem m = MemOperand();
      comma();
      int rt = Reg();
      *op == Op::kXadd ? f.Xadd(rd, m, rt) : f.Xchg(rd, m, rt);
      break;
    }
    case Op::kFence: f.Fence(); break;
    case Op::kSchedYield: f.SchedYield(); break;
    case Op::kSchedSetaffinity: f.SchedSetaffinity(RegOrImm()); break;
    case Op::kGetcpu: f.Getcpu(); break;
    case Op::kTgkill: {
      const Token& target = Peek();
      if (target.kind == Tok::kIdent && !syntax::LooksLikeRegister(target.text)) {
        std::string thread(Next().text);
        comma();
        f.Tgkill(thread, SignalOf(Next(), /*probe=*/true));
      } else {
        Operand who = RegOrImm();
        comma();
        f.Tgkill(who, SignalOf(Next(), /*probe=*/true));
      }
      break;
    }
    case Op::kMembarrierRseq: f.MembarrierRseq(AtEnd() ? rseqmc::Imm(-1) : RegOrImm()); break;
    case Op::kFutexWait:
    case Op::kFutexWake: {
      const int addr = Reg();
      comma();
      const Operand b = RegOrImm();
      *op == Op::kFutexWait ? f.FutexWait(addr, b) : f.FutexWake(addr, b);
      break;
    }
    case Op::kSleep: f.Sleep(RegOrImm()); break;
    case Op::kClock: f.Clock(); break;
    case Op::kWork: f.Work(RegOrImm()); break;
    case Op::kRseqRegister: f.RseqRegister(AtEnd() ? kRseqSig : ImmU32("signature")); break;
    case Op::kRseqUnregister: f.RseqUnregister(AtEnd() ? kRseqSig : ImmU32("signature")); break;
    case Op::kAssert: {
      int rs = Reg();
      CmpKind cmp = Cmp();
      Operand b = RegOrImm();
      std::string message;
      if (Accept(",")) {
        if (Peek().kind != Tok::kString) Error(Peek().loc, "expected a message string, found " + Describe(Peek()));
        message = Next().str;
      }
      f.Assert(rs, cmp, b, message);
      break;
    }
    case Op::kObserve: {
      const Token& name = Next();
      if (name.kind != Tok::kIdent && name.kind != Tok::kString) {
        Error(name.loc, "expected a name (identifier or string) to observe, found " + Describe(name));
      }
      std::string n = name.kind == Tok::kString ? name.str : std::string(name.text);
      comma();
      f.Observe(n, Reg());
      break;
    }
    case Op::kNop: f.Nop(); break;
    default:
      if (syntax::IsAlu(*op)) {  // op rd, rs, rt|IMM
        int rd = Reg();
        comma();
        int rs = Reg();
        comma();
        f.Alu(*op, rd, rs, RegOrImm());
      } else {  // conditional branch: op rs, rt|IMM, LABEL
        int rs = Reg();
        comma();
        Operand b = RegOrImm();
        comma();
        f.Branch(*op, rs, b, std::string(ExpectIdent("a label").text));
      }
      break;
  }
  ExpectEnd("the instruction");
}

void Parser::ParseThread(const Token& kw) {
  (void)kw;
  const Token& name_tok = ExpectIdent("a thread name");
  const std::string name(name_tok.text);
  const SourceLoc name_loc = name_tok.loc;
  bool replicated = false;
  int64_t count = 1;
  if (Accept("*")) {
    replicated = true;
    const Token& at = Peek();
    count = ConstExpr();
    if (count < 1 || count > kMaxThreads) {
      Error(at.loc, "thread count " + std::to_string(count) + " out of range (1.." + std::to_string(kMaxThreads) + ")");
    }
  }
  if (thread_count_ + static_cast<size_t>(count) > static_cast<size_t>(kMaxThreads)) {
    Error(name_loc, "too many threads (at most " + std::to_string(kMaxThreads) + ")");
  }
  std::optional<int64_t> probe;
  if (replicated) probe = 0;
  static const std::vector<std::string> kAttrs = {"entry", "cpu", "affinity", "args", "unregistered"};
  std::string entry;
  bool have_entry = false, registered = true, all_cpus = true, any_cpu = false;
  std::optional<size_t> cpu_pos;
  std::vector<size_t> affinity_pos;
  std::vector<std::pair<int, size_t>> arg_pos;
  std::set<std::string> seen;
  // Parses one constant expression (syntax and a probe evaluation) and
  // returns where it starts, for re-evaluation per replica.
  auto expr_pos = [&]() {
    size_t at = pos_;
    replica_ = probe;
    ConstExpr();
    replica_.reset();
    return at;
  };
  while (!AtEnd()) {
    const Token& attr = ExpectIdent("a thread attribute (entry, cpu, affinity, args, unregistered)");
    const std::string a(attr.text);
    if (std::find(kAttrs.begin(), kAttrs.end(), a) == kAttrs.end()) {
      std::string hint = DidYouMean(a, kAttrs);
      Error(attr.loc, "unknown thread attribute '" + a.substr(0, 40) + "'",
            hint.empty() ? "attributes are entry, cpu, affinity, args and unregistered" : hint);
    }
    if (!seen.insert(a).second) Error(attr.loc, "duplicate thread attribute '" + a + "'");
    if (a == "entry") {
      entry = std::string(ExpectIdent("the entry function's name").text);
      have_entry = true;
    } else if (a == "cpu") {
      if (IsWord(Peek(), "any")) {
        Next();  // any CPU its affinity allows: sim/placement.h
        any_cpu = true;
      } else {
        cpu_pos = expr_pos();
      }
    } else if (a == "affinity") {
      if (IsWord(Peek(), "all")) {
        Next();
      } else {
        const Token& next = Peek();
        bool is_attr = next.kind == Tok::kIdent &&
                       std::find(kAttrs.begin(), kAttrs.end(), std::string(next.text)) != kAttrs.end();
        if (AtEnd() || is_attr || next.kind == Tok::kString ||
            (next.kind == Tok::kPunct && !IsPunct(next, "(") && !IsPunct(next, "-"))) {
          Error(Peek().loc, "empty affinity", "list the allowed CPUs (`affinity 0, 1`) or write `affinity all`");
        }
        all_cpus = false;
        do {
          affinity_pos.push_back(expr_pos());
        } while (Accept(","));
      }
    } else if (a == "args") {
      do {
        int reg = Reg();
        Expect("=", "after the register in `args`");
        arg_pos.emplace_back(reg, expr_pos());
      } while (Accept(","));
    } else {
      registered = false;
    }
  }
  if (!have_entry) {
    Error(name_loc, "thread '" + name + "' has no `entry FUNC`", "add `entry FUNC` naming the function it runs");
  }
  b_->At(name_loc);
  for (int64_t r = 0; r < count; ++r) {
    std::optional<int64_t> i;
    if (replicated) i = r;
    int64_t cpu = 0;
    if (cpu_pos) {
      const SourceLoc at = toks_[*cpu_pos].loc;
      cpu = EvalAt(*cpu_pos, i);
      if (cpu < 0 || cpu >= kMaxCpus) Error(at, "CPU " + std::to_string(cpu) + " out of range (0..63)");
    }
    uint64_t affinity = ~0ull;
    if (!all_cpus) {
      affinity = 0;
      for (size_t p : affinity_pos) {
        const SourceLoc at = toks_[p].loc;
        int64_t c = EvalAt(p, i);
        if (c < 0 || c >= kMaxCpus) Error(at, "CPU " + std::to_string(c) + " out of range (0..63)");
        affinity |= 1ull << c;
      }
    }
    std::vector<std::pair<uint8_t, int64_t>> args;
    for (const auto& [reg, p] : arg_pos) args.emplace_back(static_cast<uint8_t>(reg), EvalAt(p, i));
    // `cpu any`: the default placement starts it on its lowest allowed CPU.
    if (any_cpu) cpu = std::countr_zero(affinity);
    std::string tname = replicated ? name + std::to_string(r) : name;
    b_->Thread(tname, entry, static_cast<uint32_t>(cpu), affinity, std::move(args), registered);
    if (any_cpu) b_->AnyCpu();
  }
  thread_count_ += static_cast<size_t>(count);
}

void Parser::ParseSignal(const Token& kw) {
  (void)kw;
  const Token& sig_tok = Next();
  int signo = SignalOf(sig_tok);
  if (signo == 9 || signo == 19) {
    Error(sig_tok.loc, SignalName(signo) + " cannot be caught or ignored", "use SIGUSR1, SIGUSR2, SIGALRM, ...");
  }
  auto [it, inserted] = signal_lines_.emplace(signo, sig_tok.loc.line);
  if (!inserted) {
    Error(sig_tok.loc, "duplicate `signal " + SignalName(signo) + "` (first at line " + std::to_string(it->second) + ")");
  }
  const Token& mode = ExpectIdent("`handler FUNC` or `ignore`");
  std::string handler;
  bool nodefer = false;
  if (mode.text == "handler") {
    handler = std::string(ExpectIdent("the handler function's name").text);
    if (IsWord(Peek(), "nodefer")) {
      Next();
      nodefer = true;
    }
  } else if (mode.text != "ignore") {
    Error(mode.loc, "expected `handler FUNC` or `ignore`, found " + Describe(mode));
  }
  ExpectEnd("the signal disposition");
  b_->At(sig_tok.loc).Signal(signo, handler, nodefer);
}

void Parser::ParseExpect(const Token& kw) {
  const Token& w = ExpectIdent("`pass` or `fail KIND`");
  std::optional<Verdict> v = Verdict::kPass;
  if (w.text != "pass") {
    if (w.text != "fail") Error(w.loc, "expected `pass` or `fail KIND`, found " + Describe(w));
    const Token& kind = ExpectIdent("a failure kind (property, assert, sigsegv, killed, deadlock, livelock, steplimit)");
    v = syntax::LookupVerdict(kind.text);
    if (!v) {
      Error(kind.loc, "unknown failure kind '" + std::string(kind.text.substr(0, 40)) + "'",
            "kinds are property, assert, sigsegv, killed, deadlock, livelock and steplimit");
    }
  }
  if (AtEnd()) {
    auto [it, inserted] = statement_lines_.emplace("expect", kw.loc.line);
    if (!inserted) {
      Error(kw.loc, "duplicate `expect` without `on KERNEL` (first at line " + std::to_string(it->second) + ")",
            "name the kernels it is for: `expect fail property on 6.19`");
    }
    b_->Expect(*v);
    return;
  }
  const Token& on = Next();
  if (on.kind != Tok::kIdent || on.text != "on") {
    Error(on.loc, "expected `on KERNEL` or the end of the line after the verdict, found " + Describe(on),
          "for example `expect fail property on 6.19`");
  }
  do {
    const KernelAt k = ParseKernelName();
    auto [it, inserted] = expect_kernels_.emplace(static_cast<int>(k.model), k.loc.line);
    if (!inserted) {
      Error(k.loc, "duplicate expectation for kernel " + k.text + " (first at line " + std::to_string(it->second) + ")",
            "one expectation per kernel ABI (versions of one ABI, such as 5.10 and 4.18, share it): drop this one "
            "or the first");
    }
    b_->ExpectOn(k.model, *v);
  } while (Accept(","));
  ExpectEnd("the kernels of `expect ... on`");
}

// A kernel ABI name as `rseqmc kernels` lists them (4.18, 6.0, 6.19) or any
// version they cover (5.10, 6.18): a MAJOR.MINOR word.
Parser::KernelAt Parser::ParseKernelName() {
  // The names `rseqmc kernels` lists: the ABI registry's.
  std::string names;
  for (const KernelAbi* abi : AllAbis()) names += (names.empty() ? "" : ", ") + std::string(abi->info().name);
  const std::string hint = "kernels are " + names + " or a version one of them covers (5.10, 6.18); see `rseqmc kernels`";
  if (AtEnd()) Error(Peek().loc, "expected a kernel after `on`", hint);
  const Token& first = Next();
  KernelAt k;
  k.loc = first.loc;
  k.text = std::string(first.text);
  if (first.kind != Tok::kIdent) Error(first.loc, "expected a kernel, found " + Describe(first), hint);
  std::string why;
  std::optional<KernelVersion> v = ParseKernelVersion(k.text, &why);
  if (!v) Error(first.loc, why, "`rseqmc kernels` lists the kernels");
  k.model = v->model;
  return k;
}

void Parser::ResolveConstants(Expr& e) const {
  for (Expr& a : e.args) ResolveConstants(a);
  if (e.kind != Expr::Kind::kSymbol) return;
  auto it = consts_.find(e.name);
  if (it == consts_.end()) return;
  e.kind = Expr::Kind::kConst;
  e.value = it->second.first;
}

void Parser::Finish() {
  if (!b_) {
    Error({1, 1}, "missing `scenario NAME` line", "a scenario file starts with `scenario NAME`");
  }
  std::vector<std::string> unknown;
  for (const auto& [name, value] : defines_) {
    if (!used_defines_.count(name)) unknown.push_back(name);
  }
  if (!unknown.empty()) {
    std::string declared =
        const_names_.empty() ? " declares no constants" : " declares: " + JoinNames(const_names_, 50);
    std::string hint = DidYouMean(unknown[0], const_names_);
    if (hint.empty()) {
      hint = const_names_.empty() ? "leave -D " + unknown[0] + " out: this scenario has no `const` to override"
                                  : "leave -D " + unknown[0] + " out, or name one of the declared constants";
    }
    throw InputError(file_, {}, "unknown constant '" + unknown[0] + "' given with -D; the scenario" + declared, "",
                     hint);
  }
  if (nodes_ > cpus_) {
    Error(nodes_loc_, "nodes (" + std::to_string(nodes_) + ") exceeds cpus (" + std::to_string(cpus_) + ")");
  }
  std::vector<std::string> symbol_names;
  for (const auto& [name, loc] : symbols_) symbol_names.push_back(name);
  std::sort(symbol_names.begin(), symbol_names.end());
  for (const auto& [name, loc] : scratch_) {
    if (!symbol_set_.count(name)) {
      std::string hint = DidYouMean(name, symbol_names);
      Error(loc, "scratch names unknown symbol '" + name + "'",
            hint.empty() ? "declare it with `var` or `percpu`" : hint);
    }
  }
  for (const auto& [name, loc] : symbols_) {
    if (consts_.count(name)) Error(loc, "symbol '" + name + "' has the name of a constant", "rename one of them");
  }
  for (PendingProperty& p : properties_) {
    ResolveConstants(p.expr);
    b_->At(p.loc).Property(std::move(p.expr), std::move(p.text));
  }
  if (thread_count_ == 0) {
    Error(scenario_loc_, "the scenario declares no threads", "add `thread t0 entry FUNC cpu 0`");
  }
}

// ---------------------------------------------------------------------------
// Property expressions (C precedence)

Node Parser::Binary(const Token& op, Node a, Node b) {
  Node n;
  n.depth = std::max(a.depth, b.depth) + 1;
  CheckDepth(n.depth, op);
  n.e.kind = Expr::Kind::kBinary;
  n.e.op = std::string(op.text);
  n.e.loc = op.loc;
  n.e.args.push_back(std::move(a.e));
  n.e.args.push_back(std::move(b.e));
  return n;
}

Node Parser::PBinary(int level, int depth) {
  // Lowest precedence first; every level is left-associative.
  static const std::vector<std::vector<std::string_view>> kLevels = {
      {"||"}, {"&&"}, {"==", "!="}, {"<", "<=", ">", ">="}, {"+", "-"}, {"*", "/", "%"}};
  if (level == 0) CheckDepth(depth, Peek());
  if (level == static_cast<int>(kLevels.size())) return PUnary(depth);
  Node n = PBinary(level + 1, depth);
  for (;;) {
    const Token& op = Peek();
    const auto& ops = kLevels[level];
    if (op.kind != Tok::kPunct || std::find(ops.begin(), ops.end(), op.text) == ops.end()) return n;
    Next();
    n = Binary(op, std::move(n), PBinary(level + 1, depth));
  }
}

Node Parser::PUnary(int depth) {
  const Token& t = Peek();
  CheckDepth(depth, t);
  if (IsPunct(t, "-") || IsPunct(t, "!")) {
    Next();
    if (t.text == "-" && Peek().kind == Tok::kInt) {
      // A negative literal is one constant (what the printer writes for it).
      const Token& lit = Next();
      Node n;
      n.e = expr::Const(Literal(lit, true));
      n.e.loc = t.loc;
      return n;
    }
    Node a = PUnary(depth + 1);
    Node n;
    n.depth = a.depth + 1;
    CheckDepth(n.depth, t);
    n.e = expr::Unary(std::string(t.text), std::move(a.e));
    n.e.loc = t.loc;
    return n;
  }
  return PPrimary(depth);
}

Node Parser::PPrimary(int depth) {
  const Token& t = Next();
  Node n;
  if (t.kind == Tok::kInt) {
    n.e = expr::Const(Literal(t, false));
  } else if (IsPunct(t, "(")) {
    n = POr(depth + 1);
    Expect(")", "to close the parenthesis");
    return n;
  } else if (t.kind == Tok::kIdent) {
    const std::string name(t.text);
    if ((name == "sum" || name == "ret") && IsPunct(Peek(), "(")) {
      Next();
      const Token& arg = ExpectIdent(name == "sum" ? "a symbol name" : "a thread name");
      Expect(")", "to close " + name + "(...)");
      n.e = name == "sum" ? expr::Sum(std::string(arg.text)) : expr::Ret(std::string(arg.text));
      n.e.loc = arg.loc;
      return n;
    }
    if (IsPunct(Peek(), "[")) {
      n.e.kind = Expr::Kind::kIndex;
      n.e.name = name;
      int depth_below = 0;
      for (int k = 0; k < 2 && Accept("["); ++k) {
        Node idx = POr(depth + 1);
        Expect("]", "to close the index");
        depth_below = std::max(depth_below, idx.depth);
        n.e.args.push_back(std::move(idx.e));
      }
      if (IsPunct(Peek(), "[")) Error(Peek().loc, "at most two indices: SYM[cpu][i]");
      n.depth = depth_below + 1;
    } else {
      n.e = expr::Sym(name);
    }
  } else {
    Error(t.loc, "expected a value (integer, constant, symbol, sum(...), ret(...) or '('), found " + Describe(t));
  }
  n.e.loc = t.loc;
  return n;
}

Expr Parser::ParseLoneProperty(const std::vector<Constant>& constants) {
  for (const Constant& c : constants) consts_.emplace(c.name, std::make_pair(c.value, 0u));
  if (lines_.size() != 1) {
    Error({2, 1}, "a property expression is one line");
  }
  LexLine(1);
  if (AtEnd()) Error(Peek().loc, "expected an expression");
  Node n = POr(0);
  ExpectEnd("the expression");
  ResolveConstants(n.e);
  return std::move(n.e);
}

}  // namespace

Scenario ParseScenario(std::string_view text, const std::string& file, const std::map<std::string, int64_t>& defines) {
  return Parser(text, file, defines).ParseFile();
}

Scenario ParseScenarioFile(const std::string& path, const std::map<std::string, int64_t>& defines) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(path, {}, "cannot read scenario file '" + path + "'", "", "check the path");
  std::ostringstream text;
  text << in.rdbuf();
  if (in.bad()) throw InputError(path, {}, "error reading scenario file '" + path + "'");
  return ParseScenario(text.str(), path, defines);
}

Expr ParsePropertyExpr(std::string_view text, const std::vector<Constant>& constants, const std::string& file) {
  static const std::map<std::string, int64_t> kNoDefines;
  while (!text.empty() && (text.back() == '\n' || text.back() == '\r')) text.remove_suffix(1);
  return Parser(text, file, kNoDefines).ParseLoneProperty(constants);
}

std::pair<std::string, int64_t> ParseDefine(std::string_view arg) {
  const std::string hint = "write -D NAME=VALUE with an integer VALUE (42, -7, 0x40)";
  size_t eq = arg.find('=');
  if (eq == std::string_view::npos || !syntax::IsIdentifier(arg.substr(0, eq))) {
    throw InputError("", {}, "bad -D '" + std::string(arg) + "': expected NAME=VALUE", "", hint);
  }
  std::string name(arg.substr(0, eq));
  std::string_view v = arg.substr(eq + 1);
  bool neg = !v.empty() && v[0] == '-';
  if (neg) v.remove_prefix(1);
  bool hex = v.size() > 2 && v[0] == '0' && (v[1] == 'x' || v[1] == 'X');
  std::string_view digits = hex ? v.substr(2) : v;
  uint64_t bits = 0;
  bool ok = !digits.empty();
  for (char c : digits) {
    int d = c >= '0' && c <= '9'   ? c - '0'
            : hex && c >= 'a' && c <= 'f' ? c - 'a' + 10
            : hex && c >= 'A' && c <= 'F' ? c - 'A' + 10
                                          : -1;
    uint64_t base = hex ? 16 : 10;
    if (d < 0 || bits > (std::numeric_limits<uint64_t>::max() - static_cast<uint64_t>(d)) / base) {
      ok = false;
      break;
    }
    bits = bits * base + static_cast<uint64_t>(d);
  }
  if (ok && !hex) ok = bits < kTwoTo63 || (neg && bits == kTwoTo63);
  if (!ok) throw InputError("", {}, "bad -D '" + std::string(arg) + "': the value is not a 64-bit integer", "", hint);
  return {name, neg ? Wrap(0 - bits) : Wrap(bits)};
}

}  // namespace rseqmc
