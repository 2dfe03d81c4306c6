// The canonical `.rsq` printer (see printer.h for what round-trips).
#include "scenarios/printer.h"

#include "sim/kernel/abi.h"

#include <algorithm>
#include <cstdio>
#include <limits>
#include <map>
#include <set>

#include "scenarios/syntax.h"

namespace rseqmc {
namespace {

std::string RegName(int r) { return "r" + std::to_string(r); }

std::string Hex(uint64_t v) {
  char buf[24];
  std::snprintf(buf, sizeof(buf), "0x%llx", static_cast<unsigned long long>(v));
  return buf;
}

// " + 8", " - 8" (nothing for 0); INT64_MIN, which has no positive, as " + -N".
std::string Offset(int64_t v) {
  if (v == 0) return "";
  if (v > 0 || v == std::numeric_limits<int64_t>::min()) return " + " + std::to_string(v);
  return " - " + std::to_string(-v);
}

std::string SignalText(int signo) {
  std::string name = SignalName(signo);
  return SignalNumber(name) == signo ? name : std::to_string(signo);
}

// Names for instruction positions used as branch or descriptor targets: the
// first label at that position, else a synthesized `_L<index>` (unique within
// its function).
class LabelNames {
 public:
  explicit LabelNames(const Program& p) : p_(p) {
    by_pos_.resize(p.functions.size());
    taken_.resize(p.functions.size());
    for (size_t f = 0; f < p.functions.size(); ++f) {
      for (const Label& l : p.functions[f].labels) {
        by_pos_[f].emplace(l.index, l.name);  // keeps the first label at a position
        taken_[f].insert(l.name);
      }
    }
  }

  // The name for position `index` of function `f` (-1: the function holding it).
  const std::string& Name(int f, uint32_t index) {
    if (f < 0) f = p_.FunctionOf(index);
    if (f < 0 || static_cast<size_t>(f) >= by_pos_.size()) {
      // Outside every function: no label can name it; print something readable.
      orphan_ = "_L" + std::to_string(index);
      return orphan_;
    }
    auto it = by_pos_[f].find(index);
    if (it != by_pos_[f].end()) return it->second;
    std::string name = "_L" + std::to_string(index);
    while (taken_[f].count(name)) name += "_";
    taken_[f].insert(name);
    synthesized_[static_cast<size_t>(f)].emplace_back(index, name);
    return by_pos_[f].emplace(index, name).first->second;
  }

  // Labels synthesized for function `f`, as (position, name).
  std::vector<std::pair<uint32_t, std::string>> Synthesized(size_t f) const {
    auto it = synthesized_.find(f);
    return it == synthesized_.end() ? std::vector<std::pair<uint32_t, std::string>>{} : it->second;
  }

 private:
  const Program& p_;
  std::vector<std::map<uint32_t, std::string>> by_pos_;
  std::vector<std::set<std::string>> taken_;
  std::map<size_t, std::vector<std::pair<uint32_t, std::string>>> synthesized_;
  std::string orphan_;
};

class InstrPrinter {
 public:
  InstrPrinter(const Program& p, LabelNames& labels, const std::vector<ThreadSpec>* threads)
      : p_(p), labels_(labels), threads_(threads) {}

  std::string Print(const Instr& in) {
    const std::string m = OpName(in.op);
    if (syntax::IsAlu(in.op)) return m + " " + RegName(in.rd) + ", " + RegName(in.rs) + ", " + Second(in);
    if (syntax::IsConditionalBranch(in.op)) {
      return m + " " + RegName(in.rs) + ", " + Second(in) + ", " + labels_.Name(-1, in.target);
    }
    switch (in.op) {
      case Op::kLi: return m + " " + RegName(in.rd) + ", " + std::to_string(in.imm);
      case Op::kMov: return m + " " + RegName(in.rd) + ", " + RegName(in.rs);
      case Op::kLa: return m + " " + RegName(in.rd) + ", " + NameOf(p_.symbols, in.target, "symbol") + Offset(in.imm);
      case Op::kLd:
      case Op::kLd32: return m + " " + RegName(in.rd) + ", " + MemText(in);
      case Op::kSt:
      case Op::kSt32: return m + " " + MemText(in) + ", " + RegName(in.rt);
      case Op::kJmp: return m + " " + labels_.Name(-1, in.target);
      case Op::kCall: return m + " " + NameOf(p_.functions, in.target, "function");
      case Op::kRet:
      case Op::kFence:
      case Op::kSchedYield:
      case Op::kGetcpu:
      case Op::kClock:
      case Op::kNop: return m;
      case Op::kRseqLoad:
        return m + " " + RegName(in.rd) + ", " + RseqFieldName(static_cast<RseqField>(in.aux));
      case Op::kRseqAddr: return m + " " + RegName(in.rd);
      case Op::kRseqArm: return m + " " + NameOf(p_.descriptors, in.target, "descriptor");
      case Op::kRfcRegion: return m + " " + NameOf(p_.descriptors, in.target, "region");
      case Op::kRfcCpuPtr: return m + " " + (in.use_imm ? std::to_string(in.imm) : RegName(in.rs));
      case Op::kPreemptLock:
        return m + " " + (in.use_imm ? std::to_string(in.imm) : RegName(in.rs)) + ", " + SignalText(in.aux);
      case Op::kSigctxRestart: return m + " " + NameOf(p_.descriptors, in.target, "region");
      case Op::kSig: return m + " " + Hex(static_cast<uint64_t>(in.imm));
      case Op::kCas:
        return m + " " + RegName(in.rd) + ", " + MemText(in, /*index_allowed=*/false) + ", " + RegName(in.rt) + ", " +
               RegName(in.ru);
      case Op::kXadd:
      case Op::kXchg: return m + " " + RegName(in.rd) + ", " + MemText(in) + ", " + RegName(in.rt);
      case Op::kSchedSetaffinity:
      case Op::kSleep:
      case Op::kWork: return m + " " + (in.use_imm ? std::to_string(in.imm) : RegName(in.rs));
      case Op::kFutexWait:
      case Op::kFutexWake: return m + " " + RegName(in.rs) + ", " + Second(in);
      case Op::kTgkill: return m + " " + TgkillTarget(in) + ", " + SignalText(in.aux);
      case Op::kMembarrierRseq:
        if (in.use_imm && in.imm == -1) return m;
        return m + " " + (in.use_imm ? std::to_string(in.imm) : RegName(in.rs));
      case Op::kRseqRegister:
      case Op::kRseqUnregister: return m + " " + Hex(static_cast<uint64_t>(in.imm));
      case Op::kAssert: {
        std::string s = m + " " + RegName(in.rs) + " " + CmpName(static_cast<CmpKind>(in.aux)) + " " +
                        Second(in);
        if (in.target < p_.strings.size() && !p_.strings[in.target].empty()) {
          s += ", " + syntax::QuoteString(p_.strings[in.target]);
        }
        return s;
      }
      case Op::kObserve: {
        std::string name = in.target < p_.strings.size() ? p_.strings[in.target] : "<invalid string>";
        return m + " " + (syntax::IsIdentifier(name) ? name : syntax::QuoteString(name)) + ", " + RegName(in.rs);
      }
      default: break;  // add..mul and the conditional branches are handled above
    }
    return "<invalid opcode " + std::to_string(static_cast<int>(in.op)) + ">";
  }

 private:
  static std::string Second(const Instr& in) { return in.use_imm ? std::to_string(in.imm) : RegName(in.rt); }

  static std::string MemText(const Instr& in, bool index_allowed = true) {
    std::string s = "[" + RegName(in.rs);
    if (in.has_index && index_allowed) s += " + " + RegName(in.ru) + "*" + std::to_string(in.scale);
    return s + Offset(in.imm) + "]";
  }

  template <typename T>
  static std::string NameOf(const std::vector<T>& items, uint32_t i, const char* what) {
    if (i < items.size()) return items[i].name;
    return std::string("<invalid ") + what + " " + std::to_string(i) + ">";
  }

  std::string TgkillTarget(const Instr& in) const {
    if (!in.use_imm) return RegName(in.rs);
    if (threads_ != nullptr && in.imm >= 0 && static_cast<uint64_t>(in.imm) < threads_->size()) {
      const std::string& name = (*threads_)[in.imm].name;
      if (syntax::IsIdentifier(name) && !syntax::LooksLikeRegister(name)) return name;
    }
    return std::to_string(in.imm);
  }

  const Program& p_;
  LabelNames& labels_;
  const std::vector<ThreadSpec>* threads_;
};

// Property expression printing with C precedence.
int Precedence(const std::string& op) {
  if (op == "||") return 1;
  if (op == "&&") return 2;
  if (op == "==" || op == "!=") return 3;
  if (op == "<" || op == "<=" || op == ">" || op == ">=") return 4;
  if (op == "+" || op == "-") return 5;
  if (op == "*" || op == "/" || op == "%") return 6;
  return 0;
}

std::string ExprText(const Expr& e) {
  switch (e.kind) {
    case Expr::Kind::kConst: return e.name.empty() ? std::to_string(e.value) : e.name;
    case Expr::Kind::kSymbol: return e.name;
    case Expr::Kind::kIndex: {
      std::string s = e.name;
      for (const Expr& a : e.args) s += "[" + ExprText(a) + "]";
      return s;
    }
    case Expr::Kind::kSum: return "sum(" + e.name + ")";
    case Expr::Kind::kRet: return "ret(" + e.name + ")";
    case Expr::Kind::kUnary: {
      if (e.args.empty()) return e.op + "(<missing>)";
      const Expr& a = e.args[0];
      bool atom = a.kind == Expr::Kind::kSymbol || a.kind == Expr::Kind::kIndex || a.kind == Expr::Kind::kSum ||
                  a.kind == Expr::Kind::kRet || (a.kind == Expr::Kind::kConst && !a.name.empty());
      return e.op + (atom ? ExprText(a) : "(" + ExprText(a) + ")");
    }
    case Expr::Kind::kBinary: {
      if (e.args.size() != 2) return "(<invalid>)";
      int p = Precedence(e.op);
      auto side = [&](const Expr& a, bool right) {
        bool wrap = a.kind == Expr::Kind::kBinary && (right ? Precedence(a.op) <= p : Precedence(a.op) < p);
        if (p == 0) wrap = a.kind == Expr::Kind::kBinary;
        return wrap ? "(" + ExprText(a) + ")" : ExprText(a);
      };
      return side(e.args[0], false) + " " + e.op + " " + side(e.args[1], true);
    }
  }
  return "<invalid>";
}

}  // namespace

std::string PrintExpr(const Expr& e) { return ExprText(e); }

std::string PrintInstr(const Program& p, uint32_t global_index) {
  if (global_index >= p.code.size()) return "<invalid instruction " + std::to_string(global_index) + ">";
  LabelNames labels(p);
  return InstrPrinter(p, labels, nullptr).Print(p.code[global_index]);
}

std::string PrintScenario(const Scenario& s) {
  const Program& p = s.program;
  std::string out = "scenario " + s.name + "\n";
  if (!s.description.empty()) out += "description " + syntax::QuoteString(s.description) + "\n";
  out += "cpus " + std::to_string(s.num_cpus) + "\n";
  if (s.num_nodes != 1) out += "nodes " + std::to_string(s.num_nodes) + "\n";
  if (s.preemption == Preemption::kVoluntary) out += "preempt voluntary\n";
  if (!s.constants.empty()) out += "\n";
  for (const Constant& c : s.constants) {
    out += "const " + c.name + " = " + std::to_string(c.value) + (c.overridden ? "  # set with -D" : "") + "\n";
  }
  if (!p.symbols.empty()) out += "\n";
  for (const Symbol& sym : p.symbols) {
    out += std::string(sym.per_cpu ? "percpu " : "var ") + sym.name + ": " +
           (sym.width == Width::kU32 ? "u32" : "u64");
    if (sym.count != 1) out += "[" + std::to_string(sym.count) + "]";
    if (sym.per_cpu && sym.stride != 0) out += " stride " + std::to_string(sym.stride);
    if (sym.init.size() == 1) {
      out += " = " + std::to_string(sym.init[0]);
    } else if (!sym.init.empty()) {
      out += " = {";
      for (size_t i = 0; i < sym.init.size(); ++i) out += (i ? ", " : "") + std::to_string(sym.init[i]);
      out += "}";
    }
    out += "\n";
  }
  if (!s.scratch.empty()) {
    out += "scratch ";
    for (size_t i = 0; i < s.scratch.size(); ++i) out += (i ? ", " : "") + s.scratch[i];
    out += "\n";
  }

  // Resolve every branch/descriptor target name first, so that synthesized
  // labels are known before the functions are written.
  LabelNames labels(p);
  InstrPrinter printer(p, labels, &s.threads);
  std::vector<std::string> body(p.code.size());
  for (size_t i = 0; i < p.code.size(); ++i) body[i] = printer.Print(p.code[i]);
  struct CsText {
    std::string start, post, abort;
  };
  std::vector<CsText> cs_text;
  for (const CsDescriptor& d : p.descriptors) {
    int f = static_cast<int>(d.function);
    cs_text.push_back({labels.Name(f, d.start), labels.Name(f, d.post_commit), labels.Name(f, d.abort)});
  }

  for (size_t fi = 0; fi < p.functions.size(); ++fi) {
    const Function& f = p.functions[fi];
    out += "\nfunc " + f.name + "\n";
    // Labels in position order, declaration order among equals.
    std::vector<std::pair<uint32_t, std::string>> marks;
    for (const Label& l : f.labels) marks.emplace_back(l.index, l.name);
    for (auto& m : labels.Synthesized(fi)) marks.push_back(std::move(m));
    std::stable_sort(marks.begin(), marks.end(),
                     [](const auto& a, const auto& b) { return a.first < b.first; });
    size_t next_mark = 0;
    const uint64_t end = static_cast<uint64_t>(f.first) + f.count;
    for (uint64_t i = f.first; i <= end; ++i) {
      while (next_mark < marks.size() && marks[next_mark].first <= i) {
        out += marks[next_mark++].second + ":\n";
      }
      if (i < end && i < body.size()) out += "  " + body[i] + "\n";
    }
    for (; next_mark < marks.size(); ++next_mark) out += marks[next_mark].second + ":\n";
    for (size_t di = 0; di < p.descriptors.size(); ++di) {
      const CsDescriptor& d = p.descriptors[di];
      if (d.function != fi) continue;
      if (d.region) {
        out += "  region " + d.name + " start=" + cs_text[di].start + " end=" + cs_text[di].post +
               " restart=" + cs_text[di].abort + (d.unchecked ? " unchecked\n" : "\n");
        continue;
      }
      out += "  cs " + d.name + " start=" + cs_text[di].start + " post_commit=" + cs_text[di].post +
             " abort=" + cs_text[di].abort;
      if (d.flags != 0) out += " flags=" + std::to_string(d.flags);
      if (d.version != 0) out += " version=" + std::to_string(d.version);
      if (d.unchecked) out += " unchecked";
      out += "\n";
    }
    out += "end\n";
  }

  if (!s.threads.empty()) out += "\n";
  for (const ThreadSpec& t : s.threads) {
    if (t.native) {
      out += "# thread " + t.name + ": native C++ body (not printable)\n";
      continue;
    }
    std::string entry = t.entry >= 0 && static_cast<size_t>(t.entry) < p.functions.size()
                            ? p.functions[t.entry].name
                            : std::string("<invalid function>");
    // `cpu any` loses the default placement's CPU when it is not the lowest
    // allowed one (`--placements all`): the parser starts it there.
    out += "thread " + t.name + " entry " + entry + " cpu " + (t.any_cpu ? std::string("any") : std::to_string(t.cpu));
    if (t.affinity != ~0ull) {
      out += " affinity";
      bool first = true;
      for (int c = 0; c < 64; ++c) {
        if (((t.affinity >> c) & 1) == 0) continue;
        out += (first ? " " : ", ") + std::to_string(c);
        first = false;
      }
      // An affinity of 0 cannot be written; validation rejects it anyway.
      if (first) out += " <empty>";
    }
    if (!t.args.empty()) {
      out += " args ";
      for (size_t i = 0; i < t.args.size(); ++i) {
        out += (i ? ", " : "") + RegName(t.args[i].first) + " = " + std::to_string(t.args[i].second);
      }
    }
    if (!t.rseq_registered) out += " unregistered";
    out += "\n";
  }
  if (!s.signals.empty()) out += "\n";
  for (const SignalSpec& sig : s.signals) {
    out += "signal " + SignalText(sig.signo);
    if (sig.handler < 0) {
      out += " ignore\n";
      continue;
    }
    out += " handler " +
           (static_cast<size_t>(sig.handler) < p.functions.size() ? p.functions[sig.handler].name
                                                                  : std::string("<invalid function>"));
    if (sig.nodefer) out += " nodefer";
    out += "\n";
  }
  if (!s.properties.empty()) out += "\n";
  for (const Property& prop : s.properties) out += "property " + ExprText(prop.expr) + "\n";
  auto verdict = [](Verdict v) {
    return v == Verdict::kPass ? std::string("pass") : std::string("fail ") + VerdictName(v);
  };
  out += "expect " + verdict(s.expected) + "\n";
  for (const Scenario::KernelExpectation& e : s.expected_on) {
    out += "expect " + verdict(e.verdict) + " on " + AbiFor(e.kernel).info().name + "\n";
  }
  return out;
}

}  // namespace rseqmc
