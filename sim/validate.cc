// The semantic checks of sim/validate.h. Every check records a problem with the
// best position it has (instruction, descriptor, symbol, thread, signal or
// expression node); the earliest one in the source is thrown.
#include "sim/validate.h"

#include <limits>
#include <set>
#include <string>

#include "sim/diag.h"
#include "sim/problems.h"

namespace rseqmc {
namespace {

constexpr uint32_t kMaxArrayElements = 1u << 20;
constexpr uint64_t kMaxDataBytes = 1ull << 28;  // all symbols together, all CPUs
constexpr int kSigStop = 19;
constexpr const char* kSigHint = "add `sig 0x53053053` right before the abort label, or mark the descriptor `unchecked`";

std::string Quote(const std::string& name) { return "'" + name + "'"; }

std::string LineRef(SourceLoc loc) {
  return loc.line != 0 ? " (line " + std::to_string(loc.line) + ")" : "";
}

bool IsLabelOp(Op op) { return (op >= Op::kBeq && op <= Op::kBgeu) || op == Op::kJmp; }

bool IsMemOp(Op op) {
  return op == Op::kLd || op == Op::kLd32 || op == Op::kSt || op == Op::kSt32 || op == Op::kCas || op == Op::kXadd ||
         op == Op::kXchg;
}

uint64_t RoundUp64(uint64_t n) { return (n + 63) / 64 * 64; }

class Validator {
 public:
  explicit Validator(const Scenario& s) : s_(s), p_(s.program), problems_(s.file) {}

  void Run() {
    CheckMachine();
    CheckConstants();
    CheckSymbols();
    CheckFunctions();
    CheckCode();
    CheckDescriptors();
    CheckThreads();
    CheckSignals();
    for (const Property& prop : s_.properties) CheckExpr(prop.expr, prop.loc);
    CheckScratch();
    problems_.ThrowIfAny();
  }

 private:
  void Add(SourceLoc loc, std::string message, std::string hint = "") {
    problems_.Add(loc, std::move(message), std::move(hint));
  }

  // The name of a label at global index `index` in function `f`, or "".
  std::string LabelAt(const Function& f, uint32_t index) const {
    for (const Label& l : f.labels) {
      if (l.index == index) return l.name;
    }
    return "";
  }

  // Every label at `index`: "'s', 'e' (+3)".
  std::string LabelsAt(const Function& f, uint32_t index) const {
    std::string out;
    for (const Label& l : f.labels) {
      if (l.index == index) out += (out.empty() ? "" : ", ") + Quote(l.name);
    }
    return out + (out.empty() ? "" : " ") + "(+" + std::to_string(index - f.first) + ")";
  }

  std::string DescribeLabel(const Function& f, uint32_t index) const {
    std::string name = LabelAt(f, index);
    return name.empty() ? "+" + std::to_string(index - f.first) : Quote(name);
  }

  void CheckMachine() {
    if (s_.num_cpus < 1 || s_.num_cpus > kMaxCpus) {
      Add({}, "cpus must be between 1 and " + std::to_string(kMaxCpus) + " (got " + std::to_string(s_.num_cpus) + ")");
    }
    if (s_.num_nodes < 1 || s_.num_nodes > std::max<uint32_t>(1, s_.num_cpus)) {
      Add({}, "nodes must be between 1 and the number of CPUs (" + std::to_string(s_.num_cpus) + "), got " +
                  std::to_string(s_.num_nodes));
    }
    if (s_.threads.empty()) {
      Add({}, "scenario '" + s_.name + "' has no threads", "add `thread t0 entry FUNC cpu 0`");
    }
    if (s_.threads.size() > static_cast<size_t>(kMaxThreads)) {
      Add(s_.threads[kMaxThreads].loc,
          "too many threads (" + std::to_string(s_.threads.size()) + "; at most " + std::to_string(kMaxThreads) + ")");
    }
    if (s_.expected > kLastVerdict) Add({}, "invalid expected verdict");
  }

  void CheckConstants() {
    std::set<std::string> seen;
    for (const Constant& c : s_.constants) {
      if (!seen.insert(c.name).second) Add({}, "duplicate constant " + Quote(c.name));
    }
  }

  void CheckSymbols() {
    uint64_t total = 0;
    for (const Symbol& sym : p_.symbols) {
      const std::string what = "symbol " + Quote(sym.name);
      const uint64_t width = static_cast<uint64_t>(sym.width);
      if (sym.width != Width::kU64 && sym.width != Width::kU32) {
        Add(sym.loc, what + " has a bad element width (" + std::to_string(width) + " bytes)", "use u64 or u32");
        continue;
      }
      if (sym.count < 1 || sym.count > kMaxArrayElements) {
        Add(sym.loc, what + ": array size " + std::to_string(sym.count) + " out of range (1.." +
                         std::to_string(kMaxArrayElements) + ")");
        continue;
      }
      if (sym.init.size() > sym.count) {
        Add(sym.loc, what + " has " + std::to_string(sym.init.size()) + " initial values for " +
                         std::to_string(sym.count) + " element(s)");
      }
      if (sym.width == Width::kU32) {
        for (int64_t v : sym.init) {
          if (v < std::numeric_limits<int32_t>::min() || v > static_cast<int64_t>(UINT32_MAX)) {
            Add(sym.loc, what + ": initial value " + std::to_string(v) + " does not fit in u32");
            break;
          }
        }
      }
      const uint64_t block = sym.count * width;
      uint64_t bytes = block;
      if (sym.per_cpu) {
        uint64_t stride = sym.stride == 0 ? std::max<uint64_t>(64, RoundUp64(block)) : sym.stride;
        if (sym.stride != 0 && sym.stride < block) {
          Add(sym.loc, what + ": stride " + std::to_string(sym.stride) + " is smaller than the per-CPU block (" +
                           std::to_string(block) + " bytes)",
              "omit `stride` to get the block size rounded up to 64 bytes");
          continue;
        }
        if (sym.stride % width != 0) {
          Add(sym.loc, what + ": stride " + std::to_string(sym.stride) + " is not a multiple of the element size (" +
                           std::to_string(width) + ")");
          continue;
        }
        if (stride > kMaxDataBytes) {
          Add(sym.loc, what + ": stride " + std::to_string(stride) + " is too large");
          continue;
        }
        bytes = stride * std::max<uint32_t>(1, std::min<uint32_t>(s_.num_cpus, kMaxCpus));
      }
      total += RoundUp64(bytes);
      if (total > kMaxDataBytes) {
        Add(sym.loc, "the data reaches " + std::to_string(total) + " bytes with " + what + " (at most " +
                         std::to_string(kMaxDataBytes) + ")");
        return;
      }
    }
  }

  void CheckFunctions() {
    uint32_t next = 0;
    for (const Function& f : p_.functions) {
      if (f.first != next || static_cast<uint64_t>(f.first) + f.count > p_.code.size()) {
        Add(f.loc, "function " + Quote(f.name) + " has an inconsistent code range");
        return;
      }
      next = f.first + f.count;
      if (f.count == 0) {
        Add(f.loc, "function " + Quote(f.name) + " has no instructions", "add at least `ret`");
        continue;
      }
      const Instr& last = p_.code[f.first + f.count - 1];
      if (last.op != Op::kRet && last.op != Op::kJmp) {
        Add(last.loc.line != 0 ? last.loc : f.loc,
            "function " + Quote(f.name) + " can run past its last instruction (`" + OpName(last.op) + "`)",
            "end the function with `ret` or `jmp`");
      }
      for (const Label& l : f.labels) {
        if (l.index < f.first || l.index > f.first + f.count) {
          Add(f.loc, "label " + Quote(l.name) + " lies outside function " + Quote(f.name));
        }
      }
    }
    if (next != p_.code.size()) Add({}, "the program has instructions outside every function");
  }

  void CheckCode() {
    for (const Function& f : p_.functions) {
      if (static_cast<uint64_t>(f.first) + f.count > p_.code.size()) return;
      for (uint32_t i = f.first; i < f.first + f.count; ++i) CheckInstr(f, p_.code[i]);
    }
  }

  void CheckInstr(const Function& f, const Instr& in) {
    if (in.op > kLastOp) {
      Add(in.loc, "invalid opcode " + std::to_string(static_cast<int>(in.op)));
      return;
    }
    const std::string op = std::string("`") + OpName(in.op) + "`";
    for (uint8_t r : {in.rd, in.rs, in.rt, in.ru}) {
      if (r >= kNumRegs) {
        Add(in.loc, "register r" + std::to_string(r) + " out of range in " + op, "registers are r0..r15");
        return;
      }
    }
    if (in.has_index) {
      if (!IsMemOp(in.op)) {
        Add(in.loc, op + " has no memory operand but an index register is set");
      } else if (in.op == Op::kCas) {
        Add(in.loc, "`cas` takes [rB] or [rB + IMM]: an index register cannot be encoded",
            "compute the address first (`shl`, `add`), then `cas rd, [rX], rexp, rnew`");
      } else if (in.scale != 1 && in.scale != 2 && in.scale != 4 && in.scale != 8) {
        Add(in.loc, "bad scale " + std::to_string(in.scale) + " in " + op, "the index scale is 1, 2, 4 or 8");
      }
    }
    auto check_range = [&](uint64_t n, const char* what) {
      if (in.target >= n) {
        Add(in.loc, op + " refers to " + what + " #" + std::to_string(in.target) + ", which does not exist");
      }
    };
    auto check_u32 = [&](const char* what) {
      if (in.imm < 0 || in.imm > static_cast<int64_t>(UINT32_MAX)) {
        Add(in.loc, std::string(what) + " " + std::to_string(in.imm) + " does not fit in 32 bits");
      }
    };
    if (IsLabelOp(in.op)) {
      if (in.target < f.first || in.target >= f.first + f.count) {
        Add(in.loc, op + " jumps outside function " + Quote(f.name),
            "branch targets are labels of the same function, followed by an instruction");
      }
      return;
    }
    switch (in.op) {
      case Op::kCall: check_range(p_.functions.size(), "function"); break;
      case Op::kLa: check_range(p_.symbols.size(), "symbol"); break;
      case Op::kRseqArm:
      case Op::kRfcRegion:
      case Op::kSigctxRestart:
        check_range(p_.descriptors.size(), in.op == Op::kRseqArm ? "descriptor" : "region");
        if (in.target < p_.descriptors.size() && p_.descriptors[in.target].region != (in.op != Op::kRseqArm)) {
          const CsDescriptor& d = p_.descriptors[in.target];
          Add(in.loc,
              in.op == Op::kRseqArm ? "`rseq_arm` names region " + Quote(d.name) + ", which is no struct rseq_cs"
                                    : "`" + std::string(OpName(in.op)) + "` names descriptor " + Quote(d.name) +
                                          ", which is no region",
              in.op == Op::kRseqArm ? "a 2015-RFC region is registered once with `rfc_region NAME`"
                                    : "declare it with `region NAME start=LABEL end=LABEL restart=LABEL`");
        }
        break;
      case Op::kObserve:
      case Op::kAssert:
        check_range(p_.strings.size(), "string");
        if (in.op == Op::kAssert && in.aux > static_cast<uint8_t>(CmpKind::kGeu)) {
          Add(in.loc, "invalid comparison in `assert`");
        }
        break;
      case Op::kRseqLoad:
        if (in.aux > static_cast<uint8_t>(RseqField::kFlags)) Add(in.loc, "invalid struct rseq field in `rseq_load`");
        break;
      case Op::kTgkill:
        if (in.aux > kMaxSignal) {  // 0: the existence probe
          Add(in.loc, "signal " + std::to_string(in.aux) + " out of range in `tgkill`",
              "signals are 1..31, and 0 probes that the thread exists");
        }
        break;
      case Op::kPreemptLock:
        if (in.aux < 1 || in.aux > kMaxSignal) {
          Add(in.loc, "signal " + std::to_string(in.aux) + " out of range in `" + OpName(in.op) + "`",
              "signals are 1..31");
        }
        break;
      case Op::kSig: check_u32("signature"); break;
      case Op::kRseqRegister:
      case Op::kRseqUnregister: check_u32("signature"); break;
      default: break;
    }
  }

  void CheckDescriptors() {
    for (const CsDescriptor& d : p_.descriptors) {
      const std::string what = "descriptor " + Quote(d.name);
      if (d.function >= p_.functions.size()) {
        Add(d.loc, what + " belongs to no function");
        continue;
      }
      const Function& f = p_.functions[d.function];
      const uint32_t lo = f.first, hi = f.first + f.count;
      if (hi > p_.code.size()) continue;  // reported by CheckFunctions
      if (d.start < lo || d.start > hi || d.post_commit < lo || d.post_commit > hi) {
        Add(d.loc, what + ": start and post_commit must be labels of function " + Quote(f.name));
        continue;
      }
      if ((d.abort < lo || d.abort >= hi) && d.region) {
        Add(d.loc, "region " + Quote(d.name) + ": restart= must label an instruction of function " + Quote(f.name),
            "put the restart label before the restart code's first instruction (it re-reads the CPU number and "
            "jumps back to start)");
        continue;
      }
      if (d.abort < lo || d.abort >= hi) {
        Add(d.loc, what + ": abort must label an instruction of function " + Quote(f.name),
            "put the abort label before the handler's first instruction");
        continue;
      }
      if (d.region) {
        CheckRegion(d, f);
        continue;
      }
      if (d.start > d.post_commit) {
        Add(d.loc, what + ": start label " + DescribeLabel(f, d.start) + " comes after post_commit label " +
                       DescribeLabel(f, d.post_commit),
            "the section is [start, post_commit): start first");
        continue;
      }
      if (d.unchecked) continue;
      if (d.abort >= d.start && d.abort < d.post_commit) {
        Add(d.loc, what + ": abort label " + DescribeLabel(f, d.abort) + " lies inside the section [" +
                       DescribeLabel(f, d.start) + ", " + DescribeLabel(f, d.post_commit) + ")",
            "put the abort handler outside the section, or mark the descriptor `unchecked`");
      }
      if (d.post_commit > d.start) {
        const Instr& commit = p_.code[d.post_commit - 1];
        if (commit.op != Op::kSt && commit.op != Op::kSt32) {
          Add(d.loc, what + ": the last instruction of the section" + LineRef(commit.loc) +
                         " must be the commit store (`st` or `st32`), found `" + OpName(commit.op) + "`",
              "end the section with its single committing store and put the post_commit label right after it, "
              "or mark the descriptor `unchecked`");
        }
      }
      if (d.abort == lo || p_.code[d.abort - 1].op != Op::kSig) {
        std::string found = "it starts the function";
        if (d.abort > lo) {
          const Instr& before = p_.code[d.abort - 1];
          found = (before.loc.line != 0 ? "line " + std::to_string(before.loc.line) : std::string("the instruction before")) +
                  " is `" + OpName(before.op) + "`, not `sig`";
        }
        Add(d.loc, what + ": no signature before abort label " + DescribeLabel(f, d.abort) + ": " + found, kSigHint);
      }
    }
  }

  // A 2015-RFC region (labels already known to be in its function): start <
  // end (else op 0 returns EINVAL: allowed only `unchecked`, to show that),
  // restart outside [start, end), the last instruction the commit store. No
  // signature: the RFC has none (reference/rfc2015.md "ABI").
  void CheckRegion(const CsDescriptor& d, const Function& f) {
    if (d.unchecked) return;
    const std::string what = "region " + Quote(d.name);
    if (d.start == d.post_commit) {
      Add(d.loc, what + " is empty: its start and end labels mark the same place, " + LabelsAt(f, d.start),
          "the region is [start, end): put at least one instruction between them, or mark it `unchecked` to see "
          "the EINVAL of restartable_sequences(0, ...)");
      return;
    }
    if (d.start > d.post_commit) {
      Add(d.loc, what + ": start label " + DescribeLabel(f, d.start) + " does not come before end label " +
                     DescribeLabel(f, d.post_commit),
          "the region is [start, end): put at least one instruction between them, or mark it `unchecked` to see "
          "the EINVAL of restartable_sequences(0, ...)");
      return;
    }
    if (d.abort >= d.start && d.abort < d.post_commit) {
      Add(d.loc, what + ": restart label " + DescribeLabel(f, d.abort) + " lies inside the region",
          "put the restart code outside the region (it re-reads the CPU number and jumps back to start)");
    }
    const Instr& commit = p_.code[d.post_commit - 1];
    if (commit.op != Op::kSt && commit.op != Op::kSt32) {
      Add(d.loc, what + ": the last instruction of the region" + LineRef(commit.loc) +
                     " must be the commit store (`st` or `st32`), found `" + OpName(commit.op) + "`",
          "end the region with its single committing store and put the end label right after it, or mark the "
          "region `unchecked`");
    }
  }

  void CheckThreads() {
    const uint64_t cpu_mask = s_.num_cpus >= 64 ? ~0ull : (1ull << s_.num_cpus) - 1;
    for (const ThreadSpec& t : s_.threads) {
      const std::string what = "thread " + Quote(t.name);
      if (t.name.empty()) Add(t.loc, "a thread has no name");
      if (!t.native && (t.entry < 0 || static_cast<size_t>(t.entry) >= p_.functions.size())) {
        Add(t.loc, what + " has no entry function", "add `entry FUNC`");
      }
      if (t.cpu >= s_.num_cpus) {
        Add(t.loc, what + " starts on CPU " + std::to_string(t.cpu) + " but the scenario has " +
                       std::to_string(s_.num_cpus) + " CPU(s)",
            "CPUs are numbered 0.." + std::to_string(s_.num_cpus == 0 ? 0 : s_.num_cpus - 1) + "; raise `cpus`");
      } else if ((t.affinity & cpu_mask) == 0) {
        Add(t.loc, what + " has an empty affinity (no CPU below " + std::to_string(s_.num_cpus) + ")",
            "list at least one existing CPU, or use `affinity all`");
      } else if (((t.affinity >> t.cpu) & 1) == 0) {
        Add(t.loc, what + " starts on CPU " + std::to_string(t.cpu) + ", which its affinity does not allow",
            "add CPU " + std::to_string(t.cpu) + " to its affinity or start it elsewhere");
      }
      uint32_t seen = 0;
      for (const auto& [reg, value] : t.args) {
        if (reg >= kNumRegs) {
          Add(t.loc, what + ": argument register r" + std::to_string(reg) + " out of range", "registers are r0..r15");
        } else if ((seen >> reg) & 1) {
          Add(t.loc, what + ": register r" + std::to_string(reg) + " is given twice in `args`");
        } else {
          seen |= 1u << reg;
        }
      }
    }
  }

  void CheckSignals() {
    uint64_t seen = 0;
    for (const SignalSpec& sig : s_.signals) {
      if (sig.signo < 1 || sig.signo > kMaxSignal) {
        Add(sig.loc, "signal " + std::to_string(sig.signo) + " out of range", "signals are 1..31");
        continue;
      }
      if (sig.signo == kSigKill || sig.signo == kSigStop) {
        Add(sig.loc, SignalName(sig.signo) + " cannot be caught or ignored");
        continue;
      }
      if ((seen >> sig.signo) & 1) {
        Add(sig.loc, "duplicate disposition for " + SignalName(sig.signo), "declare each signal once");
      }
      seen |= 1ull << sig.signo;
      if (sig.handler < -1 || (sig.handler >= 0 && static_cast<size_t>(sig.handler) >= p_.functions.size())) {
        Add(sig.loc, "the handler of " + SignalName(sig.signo) + " is not a function");
      }
    }
  }

  std::vector<std::string> SymbolNames() const {
    std::vector<std::string> names;
    for (const Symbol& sym : p_.symbols) names.push_back(sym.name);
    return names;
  }

  // The symbol `e` names, or nullptr after recording a problem.
  const Symbol* FindSymbolOf(const Expr& e, SourceLoc loc) {
    int i = p_.FindSymbol(e.name);
    if (i >= 0) return &p_.symbols[i];
    std::string hint = DidYouMean(e.name, SymbolNames());
    if (hint.empty()) hint = "properties name symbols declared with `var` or `percpu`, or constants";
    Add(loc, "unknown symbol " + Quote(e.name) + " in property", hint);
    return nullptr;
  }

  void CheckIndexBound(const Expr& index, uint64_t bound, const std::string& what, SourceLoc loc) {
    if (index.kind == Expr::Kind::kConst && (index.value < 0 || static_cast<uint64_t>(index.value) >= bound)) {
      Add(index.loc.line != 0 ? index.loc : loc,
          what + " " + std::to_string(index.value) + " out of range (0.." + std::to_string(bound - 1) + ")");
    }
  }

  void CheckExpr(const Expr& e, SourceLoc parent) {
    const SourceLoc loc = e.loc.line != 0 ? e.loc : parent;
    for (const Expr& a : e.args) CheckExpr(a, loc);
    switch (e.kind) {
      case Expr::Kind::kConst:
        if (!e.name.empty() && s_.FindConstant(e.name) < 0) Add(loc, "unknown constant " + Quote(e.name));
        break;
      case Expr::Kind::kSymbol: {
        const Symbol* sym = FindSymbolOf(e, loc);
        if (sym == nullptr) break;
        if (sym->per_cpu) {
          Add(loc, "per-CPU symbol " + Quote(e.name) + " needs a CPU index",
              "write " + e.name + (sym->count == 1 ? "[cpu]" : "[cpu][i]") + " or sum(" + e.name + ")");
        } else if (sym->count != 1) {
          Add(loc, "array " + Quote(e.name) + " needs an index", "write " + e.name + "[i] or sum(" + e.name + ")");
        }
        break;
      }
      case Expr::Kind::kIndex: {
        const Symbol* sym = FindSymbolOf(e, loc);
        if (sym == nullptr) break;
        if (e.args.size() == 1) {
          if (sym->per_cpu && sym->count != 1) {
            Add(loc, "per-CPU array " + Quote(e.name) + " needs a CPU and an element index",
                "write " + e.name + "[cpu][i]");
          } else if (!sym->per_cpu && sym->count == 1) {
            Add(loc, Quote(e.name) + " is a scalar, not an array", "write " + e.name);
          } else if (sym->per_cpu) {
            CheckIndexBound(e.args[0], s_.num_cpus, "CPU", loc);
          } else {
            CheckIndexBound(e.args[0], sym->count, "index", loc);
          }
        } else if (e.args.size() == 2) {
          if (!sym->per_cpu || sym->count == 1) {
            Add(loc, Quote(e.name) + " is not a per-CPU array: [cpu][i] does not apply",
                sym->per_cpu ? "write " + e.name + "[cpu]" : "write " + e.name + "[i]");
          } else {
            CheckIndexBound(e.args[0], s_.num_cpus, "CPU", loc);
            CheckIndexBound(e.args[1], sym->count, "index", loc);
          }
        } else {
          Add(loc, "bad index expression on " + Quote(e.name));
        }
        break;
      }
      case Expr::Kind::kSum:
        FindSymbolOf(e, loc);
        break;
      case Expr::Kind::kRet:
        if (s_.FindThread(e.name) < 0) {
          std::vector<std::string> names;
          for (const ThreadSpec& t : s_.threads) names.push_back(t.name);
          Add(loc, "unknown thread " + Quote(e.name) + " in ret()", DidYouMean(e.name, names));
        }
        break;
      case Expr::Kind::kUnary:
        if ((e.op != "-" && e.op != "!") || e.args.size() != 1) Add(loc, "bad unary operator '" + e.op + "'");
        break;
      case Expr::Kind::kBinary: {
        static const std::set<std::string> kOps = {"+",  "-",  "*", "/",  "%",  "==", "!=",
                                                   "<",  "<=", ">", ">=", "&&", "||"};
        if (!kOps.count(e.op) || e.args.size() != 2) Add(loc, "bad binary operator '" + e.op + "'");
        break;
      }
    }
  }

  void CheckScratch() {
    for (const std::string& name : s_.scratch) {
      if (p_.FindSymbol(name) < 0) {
        Add({}, "scratch names unknown symbol " + Quote(name), DidYouMean(name, SymbolNames()));
      }
    }
  }

  const Scenario& s_;
  const Program& p_;
  ProblemList problems_;
};

}  // namespace

void ValidateScenario(const Scenario& s) { Validator(s).Run(); }

}  // namespace rseqmc
