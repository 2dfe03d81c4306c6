// ScenarioBuilder / FunctionBuilder: instructions are recorded per function with
// names for their references; Build() concatenates the functions, resolves the
// names (labels are function-local; functions, symbols, descriptors and threads
// are global), lays out the data and runs the semantic checks.
#include "sim/builder.h"

#include <algorithm>
#include <stdexcept>
#include <unordered_map>
#include <utility>

#include "sim/diag.h"
#include "sim/problems.h"
#include "sim/validate.h"

namespace rseqmc {

namespace expr {
namespace {

Expr Make(Expr::Kind kind, std::string name, std::string op = "", std::vector<Expr> args = {}) {
  Expr e;
  e.kind = kind;
  e.name = std::move(name);
  e.op = std::move(op);
  e.args = std::move(args);
  return e;
}

}  // namespace

Expr Const(int64_t v, std::string name) {
  Expr e = Make(Expr::Kind::kConst, std::move(name));
  e.value = v;
  return e;
}

Expr Sym(std::string name) { return Make(Expr::Kind::kSymbol, std::move(name)); }

Expr Index(std::string name, Expr cpu_or_index) {
  std::vector<Expr> args;
  args.push_back(std::move(cpu_or_index));
  return Make(Expr::Kind::kIndex, std::move(name), "", std::move(args));
}

Expr Index2(std::string name, Expr cpu, Expr index) {
  std::vector<Expr> args;
  args.push_back(std::move(cpu));
  args.push_back(std::move(index));
  return Make(Expr::Kind::kIndex, std::move(name), "", std::move(args));
}

Expr Sum(std::string name) { return Make(Expr::Kind::kSum, std::move(name)); }

Expr Ret(std::string thread) { return Make(Expr::Kind::kRet, std::move(thread)); }

Expr Unary(std::string op, Expr a) {
  std::vector<Expr> args;
  args.push_back(std::move(a));
  return Make(Expr::Kind::kUnary, "", std::move(op), std::move(args));
}

Expr Binary(std::string op, Expr a, Expr b) {
  std::vector<Expr> args;
  args.push_back(std::move(a));
  args.push_back(std::move(b));
  return Make(Expr::Kind::kBinary, "", std::move(op), std::move(args));
}

}  // namespace expr

namespace {

bool IsLabelRef(Op op) { return (op >= Op::kBeq && op <= Op::kBgeu) || op == Op::kJmp; }

// Ops whose reference is a name recorded through Push().
bool TakesNameRef(Op op) {
  return IsLabelRef(op) || op == Op::kCall || op == Op::kLa || op == Op::kRseqArm || op == Op::kRfcRegion ||
         op == Op::kSigctxRestart;
}

void SetOperand(Instr& in, Operand b) {
  if (b.is_imm) {
    in.use_imm = true;
    in.imm = b.imm;
  } else {
    in.rt = b.reg;
  }
}

Instr Make(Op op) {
  Instr in;
  in.op = op;
  return in;
}

}  // namespace

// ---------------------------------------------------------------------------
// FunctionBuilder

FunctionBuilder& FunctionBuilder::Push(Instr in, std::string ref) {
  in.loc = loc_;
  instrs_.push_back(in);
  if (!ref.empty() || TakesNameRef(in.op)) refs_.push_back({instrs_.size() - 1, std::move(ref), loc_});
  return *this;
}

FunctionBuilder& FunctionBuilder::Label(const std::string& name) {
  labels_.push_back({name, {static_cast<uint32_t>(instrs_.size()), loc_}});
  return *this;
}

FunctionBuilder& FunctionBuilder::Li(int rd, int64_t imm) {
  Instr in = Make(Op::kLi);
  in.rd = static_cast<uint8_t>(rd);
  in.imm = imm;
  in.use_imm = true;
  return Push(in);
}

FunctionBuilder& FunctionBuilder::Mov(int rd, int rs) {
  Instr in = Make(Op::kMov);
  in.rd = static_cast<uint8_t>(rd);
  in.rs = static_cast<uint8_t>(rs);
  return Push(in);
}

FunctionBuilder& FunctionBuilder::Alu(Op op, int rd, int rs, Operand b) {
  Instr in = Make(op);
  in.rd = static_cast<uint8_t>(rd);
  in.rs = static_cast<uint8_t>(rs);
  SetOperand(in, b);
  return Push(in);
}

FunctionBuilder& FunctionBuilder::La(int rd, const std::string& symbol, int64_t offset) {
  Instr in = Make(Op::kLa);
  in.rd = static_cast<uint8_t>(rd);
  in.imm = offset;
  return Push(in, symbol);
}

FunctionBuilder& FunctionBuilder::MemOp(Op op, int r, Mem m, int rt) {
  Instr in = Make(op);
  in.rd = static_cast<uint8_t>(r);
  in.rt = static_cast<uint8_t>(rt);
  in.rs = m.base;
  in.imm = m.disp;
  in.has_index = m.has_index;
  if (m.has_index) {
    in.ru = m.index;
    in.scale = m.scale;
  }
  return Push(in);
}

FunctionBuilder& FunctionBuilder::Branch(Op op, int rs, Operand b, const std::string& label) {
  Instr in = Make(op);
  in.rs = static_cast<uint8_t>(rs);
  SetOperand(in, b);
  return Push(in, label);
}

FunctionBuilder& FunctionBuilder::Jmp(const std::string& label) { return Push(Make(Op::kJmp), label); }

FunctionBuilder& FunctionBuilder::Call(const std::string& function) { return Push(Make(Op::kCall), function); }

FunctionBuilder& FunctionBuilder::Ret() { return Push(Make(Op::kRet)); }

FunctionBuilder& FunctionBuilder::RseqLoad(int rd, RseqField f) {
  Instr in = Make(Op::kRseqLoad);
  in.rd = static_cast<uint8_t>(rd);
  in.aux = static_cast<uint8_t>(f);
  return Push(in);
}

FunctionBuilder& FunctionBuilder::RseqAddr(int rd) {
  Instr in = Make(Op::kRseqAddr);
  in.rd = static_cast<uint8_t>(rd);
  return Push(in);
}

FunctionBuilder& FunctionBuilder::RseqArm(const std::string& descriptor) {
  return Push(Make(Op::kRseqArm), descriptor);
}

FunctionBuilder& FunctionBuilder::Sig(uint32_t value) {
  Instr in = Make(Op::kSig);
  in.imm = value;
  in.use_imm = true;
  return Push(in);
}

FunctionBuilder& FunctionBuilder::Cas(int rd, Mem m, int expected, int desired) {
  // The index register and the new value would both live in `ru`: a cas with an
  // index keeps has_index set so that validation rejects it.
  Instr in = Make(Op::kCas);
  in.rd = static_cast<uint8_t>(rd);
  in.rs = m.base;
  in.imm = m.disp;
  in.has_index = m.has_index;
  in.scale = m.has_index ? m.scale : 1;
  in.rt = static_cast<uint8_t>(expected);
  in.ru = static_cast<uint8_t>(desired);
  return Push(in);
}

FunctionBuilder& FunctionBuilder::Xadd(int rd, Mem m, int rt) { return MemOp(Op::kXadd, rd, m, rt); }

FunctionBuilder& FunctionBuilder::Xchg(int rd, Mem m, int rt) { return MemOp(Op::kXchg, rd, m, rt); }

FunctionBuilder& FunctionBuilder::Fence() { return Push(Make(Op::kFence)); }

FunctionBuilder& FunctionBuilder::SchedYield() { return Push(Make(Op::kSchedYield)); }

FunctionBuilder& FunctionBuilder::SchedSetaffinity(Operand mask) {
  Instr in = Make(Op::kSchedSetaffinity);
  if (mask.is_imm) {
    in.use_imm = true;
    in.imm = mask.imm;
  } else {
    in.rs = mask.reg;
  }
  return Push(in);
}

FunctionBuilder& FunctionBuilder::Getcpu() { return Push(Make(Op::kGetcpu)); }

FunctionBuilder& FunctionBuilder::Tgkill(Operand thread, int signo) {
  Instr in = Make(Op::kTgkill);
  if (thread.is_imm) {
    in.use_imm = true;
    in.imm = thread.imm;
  } else {
    in.rs = thread.reg;
  }
  in.aux = static_cast<uint8_t>(signo);
  return Push(in);
}

FunctionBuilder& FunctionBuilder::Tgkill(const std::string& thread, int signo) {
  Instr in = Make(Op::kTgkill);
  in.use_imm = true;
  in.aux = static_cast<uint8_t>(signo);
  Push(in);
  refs_.push_back({instrs_.size() - 1, thread, loc_});
  return *this;
}

FunctionBuilder& FunctionBuilder::MembarrierRseq(Operand cpu) {
  Instr in = Make(Op::kMembarrierRseq);
  if (cpu.is_imm) {
    in.use_imm = true;
    in.imm = cpu.imm;
  } else {
    in.rs = cpu.reg;
  }
  return Push(in);
}

FunctionBuilder& FunctionBuilder::FutexWait(int addr_reg, Operand expected) {
  Instr in = Make(Op::kFutexWait);
  in.rs = static_cast<uint8_t>(addr_reg);
  SetOperand(in, expected);
  return Push(in);
}

FunctionBuilder& FunctionBuilder::FutexWake(int addr_reg, Operand count) {
  Instr in = Make(Op::kFutexWake);
  in.rs = static_cast<uint8_t>(addr_reg);
  SetOperand(in, count);
  return Push(in);
}

FunctionBuilder& FunctionBuilder::Sleep(Operand ns) { return PushTimed(Op::kSleep, ns); }

FunctionBuilder& FunctionBuilder::Clock() { return Push(Make(Op::kClock)); }

FunctionBuilder& FunctionBuilder::Work(Operand ns) { return PushTimed(Op::kWork, ns); }

FunctionBuilder& FunctionBuilder::PushTimed(Op op, Operand ns) {
  Instr in = Make(op);
  if (ns.is_imm) {
    in.use_imm = true;
    in.imm = ns.imm;
  } else {
    in.rs = ns.reg;
  }
  return Push(in);
}

FunctionBuilder& FunctionBuilder::RseqRegister(uint32_t sig) {
  Instr in = Make(Op::kRseqRegister);
  in.use_imm = true;
  in.imm = sig;
  return Push(in);
}

FunctionBuilder& FunctionBuilder::RseqUnregister(uint32_t sig) {
  Instr in = Make(Op::kRseqUnregister);
  in.use_imm = true;
  in.imm = sig;
  return Push(in);
}

FunctionBuilder& FunctionBuilder::RfcRegion(const std::string& region) {
  return Push(Make(Op::kRfcRegion), region);
}

FunctionBuilder& FunctionBuilder::PreemptLock(Operand flag, int signo) {
  Instr in = Make(Op::kPreemptLock);
  if (flag.is_imm) {
    in.use_imm = true;
    in.imm = flag.imm;
  } else {
    in.rs = flag.reg;
  }
  in.aux = static_cast<uint8_t>(signo);
  return Push(in);
}

FunctionBuilder& FunctionBuilder::SigctxRestart(const std::string& region) {
  return Push(Make(Op::kSigctxRestart), region);
}

FunctionBuilder& FunctionBuilder::RfcCpuPtr(Operand ptr) {
  Instr in = Make(Op::kRfcCpuPtr);
  if (ptr.is_imm) {
    in.use_imm = true;
    in.imm = ptr.imm;
  } else {
    in.rs = ptr.reg;
  }
  return Push(in);
}

FunctionBuilder& FunctionBuilder::Assert(int rs, CmpKind cmp, Operand b, const std::string& message) {
  Instr in = Make(Op::kAssert);
  in.rs = static_cast<uint8_t>(rs);
  SetOperand(in, b);
  in.aux = static_cast<uint8_t>(cmp);
  in.target = static_cast<uint32_t>(strings_.size());  // local; Build() interns it
  strings_.push_back(message);
  return Push(in);
}

FunctionBuilder& FunctionBuilder::Observe(const std::string& name, int rs) {
  Instr in = Make(Op::kObserve);
  in.rs = static_cast<uint8_t>(rs);
  in.target = static_cast<uint32_t>(strings_.size());  // local; Build() interns it
  strings_.push_back(name);
  return Push(in);
}

FunctionBuilder& FunctionBuilder::Nop() { return Push(Make(Op::kNop)); }

FunctionBuilder& FunctionBuilder::Cs(const std::string& name, const std::string& start,
                                     const std::string& post_commit, const std::string& abort, uint32_t flags,
                                     uint32_t version, bool unchecked) {
  cs_.push_back({name, start, post_commit, abort, flags, version, unchecked, loc_});
  return *this;
}

FunctionBuilder& FunctionBuilder::Region(const std::string& name, const std::string& start, const std::string& end,
                                         const std::string& restart, bool unchecked) {
  cs_.push_back({name, start, end, restart, 0, 0, unchecked, loc_, true});
  return *this;
}

// ---------------------------------------------------------------------------
// ScenarioBuilder

ScenarioBuilder::ScenarioBuilder(std::string name, std::string file) {
  s_.name = std::move(name);
  s_.file = std::move(file);
}

ScenarioBuilder& ScenarioBuilder::Description(std::string d) {
  s_.description = std::move(d);
  return *this;
}

ScenarioBuilder& ScenarioBuilder::Cpus(uint32_t n) {
  s_.num_cpus = n;
  return *this;
}

ScenarioBuilder& ScenarioBuilder::Nodes(uint32_t n) {
  s_.num_nodes = n;
  return *this;
}

ScenarioBuilder& ScenarioBuilder::Preempt(Preemption p, SourceLoc loc) {
  s_.preemption = p;
  s_.preemption_loc = loc;
  return *this;
}

ScenarioBuilder& ScenarioBuilder::Const(const std::string& name, int64_t value, bool overridden) {
  s_.constants.push_back({name, value, overridden});
  return *this;
}

ScenarioBuilder& ScenarioBuilder::Var(const std::string& name, Width w, uint32_t count, std::vector<int64_t> init) {
  Symbol sym;
  sym.name = name;
  sym.width = w;
  sym.count = count;
  sym.init = std::move(init);
  sym.loc = loc_;
  s_.program.symbols.push_back(std::move(sym));
  return *this;
}

ScenarioBuilder& ScenarioBuilder::PerCpu(const std::string& name, Width w, uint32_t count, uint64_t stride,
                                         std::vector<int64_t> init) {
  Symbol sym;
  sym.name = name;
  sym.width = w;
  sym.count = count;
  sym.per_cpu = true;
  sym.stride = stride;
  sym.init = std::move(init);
  sym.loc = loc_;
  s_.program.symbols.push_back(std::move(sym));
  return *this;
}

ScenarioBuilder& ScenarioBuilder::Scratch(const std::string& symbol) {
  s_.scratch.push_back(symbol);
  return *this;
}

FunctionBuilder& ScenarioBuilder::Func(const std::string& name, SourceLoc loc) {
  FunctionBuilder& f = funcs_.emplace_back();
  f.name_ = name;
  f.func_loc_ = loc.line != 0 ? loc : loc_;
  f.loc_ = f.func_loc_;
  return f;
}

ScenarioBuilder& ScenarioBuilder::Thread(const std::string& name, const std::string& entry, uint32_t cpu,
                                         uint64_t affinity, std::vector<std::pair<uint8_t, int64_t>> args,
                                         bool registered) {
  ThreadSpec t;
  t.name = name;
  t.cpu = cpu;
  t.affinity = affinity;
  t.args = std::move(args);
  t.rseq_registered = registered;
  t.loc = loc_;
  s_.threads.push_back(std::move(t));
  thread_entries_.push_back({entry, loc_});
  return *this;
}

ScenarioBuilder& ScenarioBuilder::AnyCpu() {
  if (s_.threads.empty()) throw std::logic_error("ScenarioBuilder::AnyCpu before any Thread");
  s_.threads.back().any_cpu = true;
  return *this;
}

ScenarioBuilder& ScenarioBuilder::Native(const std::string& name, uint32_t cpu, NativeBody body, uint64_t affinity,
                                         bool registered) {
  ThreadSpec t;
  t.name = name;
  t.cpu = cpu;
  t.affinity = affinity;
  t.rseq_registered = registered;
  t.native = std::move(body);
  t.loc = loc_;
  s_.threads.push_back(std::move(t));
  thread_entries_.push_back({"", loc_});
  return *this;
}

ScenarioBuilder& ScenarioBuilder::Signal(int signo, const std::string& handler, bool nodefer) {
  SignalSpec sig;
  sig.signo = signo;
  sig.nodefer = nodefer;
  sig.loc = loc_;
  s_.signals.push_back(sig);
  signal_handlers_.push_back({handler, loc_});
  return *this;
}

ScenarioBuilder& ScenarioBuilder::Property(Expr e, std::string text) {
  rseqmc::Property p;
  p.expr = std::move(e);
  p.text = std::move(text);
  p.loc = loc_;
  s_.properties.push_back(std::move(p));
  return *this;
}

ScenarioBuilder& ScenarioBuilder::Expect(Verdict v) {
  s_.expected = v;
  return *this;
}

ScenarioBuilder& ScenarioBuilder::ExpectOn(KernelModel k, Verdict v) {
  for (Scenario::KernelExpectation& e : s_.expected_on) {
    if (e.kernel == k) {
      e.verdict = v;
      return *this;
    }
  }
  s_.expected_on.push_back({k, v});
  return *this;
}

namespace {

// Name -> index of the first declaration; later duplicates are reported.
template <typename T>
std::unordered_map<std::string, int> IndexNames(const std::vector<T>& items, const char* what,
                                                ProblemList& problems) {
  std::unordered_map<std::string, int> index;
  for (size_t i = 0; i < items.size(); ++i) {
    auto [it, inserted] = index.emplace(items[i].name, static_cast<int>(i));
    if (!inserted) {
      const SourceLoc first = items[it->second].loc;
      std::string where = first.line != 0 ? " (first declared at line " + std::to_string(first.line) + ")" : "";
      problems.Add(items[i].loc, std::string("duplicate ") + what + " '" + items[i].name + "'" + where,
                   std::string("give each ") + what + " a unique name");
    }
  }
  return index;
}

std::vector<std::string> Keys(const std::unordered_map<std::string, int>& m) {
  std::vector<std::string> v;
  v.reserve(m.size());
  for (const auto& [k, unused] : m) v.push_back(k);
  std::sort(v.begin(), v.end());
  return v;
}

// Resolves `name` in `index`; on failure records "<what> 'name' is not defined".
int Resolve(const std::unordered_map<std::string, int>& index, const std::string& name, const std::string& what,
            SourceLoc loc, ProblemList& problems, const std::string& extra_hint = "") {
  auto it = index.find(name);
  if (it != index.end()) return it->second;
  std::string hint = DidYouMean(name, Keys(index));
  if (hint.empty()) hint = extra_hint;
  problems.Add(loc, "undefined " + what + " '" + name + "'", hint);
  return -1;
}

}  // namespace

Scenario ScenarioBuilder::Build() {
  Scenario s = s_;
  Program& p = s.program;
  p.code.clear();
  p.functions.clear();
  p.descriptors.clear();
  p.strings.clear();
  ProblemList problems(s.file);

  // Functions and their code, concatenated in declaration order.
  for (const FunctionBuilder& fb : funcs_) {
    Function f;
    f.name = fb.name_;
    f.first = static_cast<uint32_t>(p.code.size());
    f.count = static_cast<uint32_t>(fb.instrs_.size());
    f.loc = fb.func_loc_;
    p.functions.push_back(std::move(f));
    p.code.insert(p.code.end(), fb.instrs_.begin(), fb.instrs_.end());
  }
  auto func_index = IndexNames(p.functions, "function", problems);
  auto sym_index = IndexNames(p.symbols, "symbol", problems);
  auto thread_index = IndexNames(s.threads, "thread", problems);

  // Descriptor names are global (rseq_arm may name one of another function).
  std::unordered_map<std::string, int> cs_index;
  {
    int n = 0;
    for (const FunctionBuilder& fb : funcs_) {
      for (const auto& cs : fb.cs_) {
        if (!cs_index.emplace(cs.name, n).second) {
          problems.Add(cs.loc, "duplicate descriptor '" + cs.name + "'", "give each `cs` a unique name");
        }
        ++n;
      }
    }
  }

  std::unordered_map<std::string, uint32_t> string_index;
  auto intern = [&](const std::string& text) {
    auto [it, inserted] = string_index.emplace(text, static_cast<uint32_t>(p.strings.size()));
    if (inserted) p.strings.push_back(text);
    return it->second;
  };

  for (size_t fi = 0; fi < funcs_.size(); ++fi) {
    const FunctionBuilder& fb = funcs_[fi];
    Function& f = p.functions[fi];
    std::unordered_map<std::string, int> labels;  // name -> global index
    for (const auto& [name, pos] : fb.labels_) {
      const auto& [local, loc] = pos;
      auto [it, inserted] = labels.emplace(name, static_cast<int>(f.first + local));
      if (!inserted) {
        problems.Add(loc, "duplicate label '" + name + "' in function '" + f.name + "'",
                     "labels are function-local; rename one of them");
        continue;
      }
      f.labels.push_back({name, f.first + local});
    }
    for (uint32_t i = 0; i < f.count; ++i) {
      Instr& in = p.code[f.first + i];
      if ((in.op == Op::kObserve || in.op == Op::kAssert) && in.target < fb.strings_.size()) {
        in.target = intern(fb.strings_[in.target]);
      }
    }
    const std::string label_hint = "labels are local to their function ('" + f.name + "')";
    for (const auto& ref : fb.refs_) {
      Instr& in = p.code[f.first + ref.instr];
      int r = -1;
      if (IsLabelRef(in.op)) {
        r = Resolve(labels, ref.name, "label", ref.loc, problems, label_hint);
      } else if (in.op == Op::kCall) {
        r = Resolve(func_index, ref.name, "function", ref.loc, problems);
      } else if (in.op == Op::kLa) {
        r = Resolve(sym_index, ref.name, "symbol", ref.loc, problems, "declare it with `var` or `percpu`");
      } else if (in.op == Op::kRseqArm) {
        r = Resolve(cs_index, ref.name, "descriptor", ref.loc, problems,
                    "declare it with `cs NAME start=... post_commit=... abort=...`");
      } else if (in.op == Op::kRfcRegion || in.op == Op::kSigctxRestart) {
        r = Resolve(cs_index, ref.name, "region", ref.loc, problems,
                    "declare it with `region NAME start=... end=... restart=...`");
      } else if (in.op == Op::kTgkill) {
        r = Resolve(thread_index, ref.name, "thread", ref.loc, problems);
        if (r >= 0) in.imm = r;
        continue;
      }
      if (r >= 0) in.target = static_cast<uint32_t>(r);
    }
    for (const auto& cs : fb.cs_) {
      CsDescriptor d;
      d.name = cs.name;
      d.function = static_cast<uint32_t>(fi);
      d.flags = cs.flags;
      d.version = cs.version;
      d.unchecked = cs.unchecked;
      d.region = cs.region;
      d.loc = cs.loc;
      int start = Resolve(labels, cs.start, "label", cs.loc, problems, label_hint);
      int post = Resolve(labels, cs.post_commit, "label", cs.loc, problems, label_hint);
      int abort = Resolve(labels, cs.abort, "label", cs.loc, problems, label_hint);
      if (start >= 0) d.start = static_cast<uint32_t>(start);
      if (post >= 0) d.post_commit = static_cast<uint32_t>(post);
      if (abort >= 0) d.abort = static_cast<uint32_t>(abort);
      p.descriptors.push_back(std::move(d));
    }
  }

  for (size_t i = 0; i < s.threads.size() && i < thread_entries_.size(); ++i) {
    ThreadSpec& t = s.threads[i];
    if (t.native) continue;
    int f = Resolve(func_index, thread_entries_[i].entry, "function", thread_entries_[i].loc, problems,
                    "a thread's `entry` names a `func`");
    t.entry = f;
  }
  for (size_t i = 0; i < s.signals.size() && i < signal_handlers_.size(); ++i) {
    const std::string& h = signal_handlers_[i].handler;
    if (h.empty()) continue;
    s.signals[i].handler = Resolve(func_index, h, "function", signal_handlers_[i].loc, problems,
                                   "a signal `handler` names a `func`");
  }
  problems.ThrowIfAny();

  // Validate before the layout: LayoutProgram trusts sizes and CPU counts.
  ValidateScenario(s);
  LayoutProgram(p, s.num_cpus);
  return s;
}

}  // namespace rseqmc
