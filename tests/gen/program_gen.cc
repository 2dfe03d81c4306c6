// The generator of tests/gen/program_gen.h: RapidCheck picks a ProgramSpec;
// BuildGenerated turns any spec into a valid scenario, normalising indices and
// counting worst-case steps and the deltas the invariants need.
#include "tests/gen/program_gen.h"

#include <algorithm>
#include <ostream>
#include <string>

#include "scenarios/printer.h"
#include "sim/builder.h"

namespace rseqmc::testgen {
namespace {

// Register roles (see the header): r0..r8 values, r9/r10 address temporaries,
// r10..r13 and r15 critical sections, r14 loop counter.
constexpr int kNumValueRegs = 9;
constexpr int kAddr = 9, kIdx = 10;
constexpr int kCpuId = 10, kTarget = 11, kCpuStart = 12, kRetries = 13, kLoopReg = 14, kValue = 15;
constexpr int kMaxLoopTrips = 3;
constexpr int kHandledSignals[] = {kSigUsr1, kSigUsr2};
constexpr int kSigAlrm = 14;
constexpr uint64_t kCounterStride = 64;
constexpr uint64_t kSpecStride = 64;
constexpr uint32_t kSpecCount = 2;

enum class Role { kEntry, kLoopBody, kHelper, kHandler };
enum class SectionKind { kAdd64, kAdd32, kCondStore };

int ValueReg(uint32_t r) { return static_cast<int>(r % kNumValueRegs); }

struct Cost {
  uint64_t steps = 0;
  uint64_t tgkills = 0;
  int64_t add64 = 0;  // deltas committed-or-given-up in thread context
  int64_t add32 = 0;
  Cost& operator+=(const Cost& o) {
    steps += o.steps;
    tgkills += o.tgkills;
    add64 += o.add64;
    add32 += o.add32;
    return *this;
  }
  Cost Times(uint64_t k) const {
    return {steps * k, tgkills * k, add64 * static_cast<int64_t>(k), add32 * static_cast<int64_t>(k)};
  }
};

struct DataSym {
  std::string name;
  bool per_cpu = false;
  Width width = Width::kU64;
  uint32_t count = 1;
  uint64_t stride = 0;  // effective, per-CPU only
};

// Everything a function body may refer to.
struct Context {
  const GenOptions* options = nullptr;
  uint32_t cpus = 1, nodes = 1, threads = 1;
  std::vector<DataSym> data;
  std::vector<std::string> thread_names;
  std::vector<int> signals;     // tgkill-able signal numbers (handled and ignored)
  std::vector<Cost> helpers;    // cost of each helper (filled before entries are built)
};

// Emits IR into one function, counting instructions and naming labels and
// descriptors uniquely.
class Emitter {
 public:
  Emitter(FunctionBuilder& f, const Context& ctx, std::string func, Role role)
      : f_(f), ctx_(ctx), func_(std::move(func)), role_(role) {}

  Cost Body(const std::vector<Stmt>& body, Role role) {
    Cost c;
    for (const Stmt& s : body) c += Statement(s, role);
    return c;
  }

  // The whole function: body then `ret`.
  Cost Function(const std::vector<Stmt>& body) {
    Cost c = Body(body, role_);
    E().Ret();
    c.steps += 1;
    return c;
  }

 private:
  FunctionBuilder& E() {
    ++emitted_;
    return f_;
  }
  std::string Fresh(const std::string& what) { return "L" + std::to_string(labels_++) + "_" + what; }

  const DataSym& Data(uint32_t i) const { return ctx_.data[i % ctx_.data.size()]; }
  uint32_t Cpu(uint32_t c) const { return c % ctx_.cpus; }
  // Byte offset of element [cpu][index] of `d`.
  uint64_t Offset(const DataSym& d, uint32_t cpu, uint32_t index) const {
    return (d.per_cpu ? Cpu(cpu) * d.stride : 0) + (index % d.count) * static_cast<uint64_t>(d.width);
  }

  // r9 := address of d[cpu][index]; for `indexed`, the element index comes
  // from value register rs masked into range (count is a power of two) and
  // the returned Mem uses it.
  Mem Address(const DataSym& d, const Stmt& s, bool indexed) {
    if (!indexed || d.count == 1) {
      E().La(kAddr, d.name, static_cast<int64_t>(Offset(d, s.cpu, s.index)));
      return Mem(kAddr);
    }
    E().La(kAddr, d.name, static_cast<int64_t>(d.per_cpu ? Cpu(s.cpu) * d.stride : 0));
    E().And(kIdx, ValueReg(s.rs), Imm(d.count - 1));
    return Mem(kAddr, kIdx, static_cast<int>(d.width));
  }

  int64_t SmallImm(int64_t v) const { return v % 1000; }

  Cost Statement(const Stmt& s, Role role) {
    const uint64_t before = emitted_;
    Cost c;
    const int rd = ValueReg(s.rd), rs = ValueReg(s.rs), rt = ValueReg(s.rt);
    switch (s.kind) {
      case StmtKind::kNop:
        E().Nop();
        break;
      case StmtKind::kLi:
        E().Li(rd, s.imm);
        break;
      case StmtKind::kMov:
        E().Mov(rd, rs);
        break;
      case StmtKind::kAlu: {
        static constexpr Op kOps[] = {Op::kAdd, Op::kSub, Op::kAnd, Op::kOr, Op::kXor, Op::kShl, Op::kShr, Op::kMul};
        const Op op = kOps[s.op % 8];
        E().Alu(op, rd, rs, (s.index & 1) ? Imm(SmallImm(s.imm)) : R(rt));
        break;
      }
      case StmtKind::kLoad: {
        const DataSym& d = Data(s.sym);
        const Mem m = Address(d, s, s.op & 1);
        if (d.width == Width::kU64) E().Ld(rd, m); else E().Ld32(rd, m);
        break;
      }
      case StmtKind::kStore: {
        const DataSym& d = Data(s.sym);
        const Mem m = Address(d, s, s.op & 1);
        if (d.width == Width::kU64) E().St(m, rt); else E().St32(m, rt);
        break;
      }
      case StmtKind::kAtomic: {
        // On a u64 data symbol (d0 always is one).
        const DataSym* d = &Data(s.sym);
        if (d->width != Width::kU64) d = &ctx_.data[0];
        E().La(kAddr, d->name, static_cast<int64_t>(Offset(*d, s.cpu, s.index)));
        switch (s.op % 3) {
          case 0: E().Cas(rd, Mem(kAddr), rs, rt); break;
          case 1: E().Xadd(rd, Mem(kAddr), rs); break;
          default: E().Xchg(rd, Mem(kAddr), rs); break;
        }
        break;
      }
      case StmtKind::kObserve:
        E().Observe("o" + std::to_string(s.index % 4), rs);
        break;
      case StmtKind::kRseqField: {
        static constexpr RseqField kFields[] = {RseqField::kCpuIdStart, RseqField::kCpuId, RseqField::kNodeId,
                                                RseqField::kMmCid};
        RseqField f = kFields[s.op % 4];
        if (f == RseqField::kMmCid && !ctx_.options->mm_cid) f = RseqField::kCpuId;
        // mm_cid < number of threads running at once <= min(cpus, threads).
        const uint32_t bound = f == RseqField::kNodeId  ? ctx_.nodes
                               : f == RseqField::kMmCid ? std::min(ctx_.cpus, ctx_.threads)
                                                        : ctx_.cpus;
        E().RseqLoad(rd, f);
        E().Assert(rd, CmpKind::kLtu, Imm(bound), std::string(RseqFieldName(f)) + " in range");
        break;
      }
      case StmtKind::kFence:
        E().Fence();
        break;
      case StmtKind::kRacyAssert:
        if (ctx_.options->racy_asserts) {
          E().Assert(rs, (s.op & 1) != 0 ? CmpKind::kEq : CmpKind::kNe, Imm(s.imm % 3), "racy");
        } else {
          E().Nop();
        }
        break;
      case StmtKind::kGetcpu:
        E().Getcpu();
        if (s.op & 1) E().Assert(0, CmpKind::kLtu, Imm(ctx_.cpus), "getcpu in range");
        break;
      case StmtKind::kYield:
        E().SchedYield();
        break;
      case StmtKind::kMembarrier:
        // -1 (all CPUs), one CPU, or one past the last (EINVAL).
        E().MembarrierRseq(Imm(static_cast<int64_t>(s.cpu % (ctx_.cpus + 2)) - 1));
        break;
      case StmtKind::kSetaffinity: {
        const uint64_t all = (1ull << ctx_.cpus) - 1;
        E().SchedSetaffinity(Imm(static_cast<int64_t>(s.imm == 0 ? all : static_cast<uint64_t>(s.imm) & all)));
        break;
      }
      case StmtKind::kTgkill: {
        if (ctx_.signals.empty() || role == Role::kHandler) {
          E().Nop();
          break;
        }
        const int sig = ctx_.signals[s.sym % ctx_.signals.size()];
        if (s.op & 1) {
          // By index in a register; one past the last thread is ESRCH.
          E().Li(kAddr, static_cast<int64_t>(s.index % (ctx_.threads + 1)));
          E().Tgkill(R(kAddr), sig);
        } else {
          E().Tgkill(ctx_.thread_names[s.index % ctx_.threads], sig);
        }
        c.tgkills = 1;
        break;
      }
      case StmtKind::kSection:
        c += Section(s, role);
        return c;
      case StmtKind::kCall:
        if (ctx_.helpers.empty() || (role != Role::kEntry && role != Role::kLoopBody)) {
          E().Nop();
          break;
        }
        E().Call("helper" + std::to_string(s.sym % ctx_.helpers.size()));
        c += ctx_.helpers[s.sym % ctx_.helpers.size()];
        c.steps += 1;  // the call
        return c;
      case StmtKind::kLoop: {
        if (role != Role::kEntry) {
          E().Nop();
          break;
        }
        const uint32_t trips = 1 + s.count % kMaxLoopTrips;
        const std::string top = Fresh("loop");
        E().Li(kLoopReg, trips);
        f_.Label(top);
        Cost body = Body(s.body, Role::kLoopBody);
        E().Sub(kLoopReg, kLoopReg, Imm(1));
        E().Bne(kLoopReg, Imm(0), top);
        body.steps += 2;  // sub, bne
        c += body.Times(trips);
        c.steps += 1;  // li
        return c;
      }
    }
    c.steps += emitted_ - before;
    return c;
  }

  // A critical section (see the header for the shape).
  Cost Section(const Stmt& s, Role role) {
    Cost c;
    SectionKind kind = static_cast<SectionKind>(s.op % 3);
    const DataSym* target = nullptr;
    if (kind == SectionKind::kCondStore) {
      // A per-CPU data element; without one, an add section.
      for (size_t i = 0; i < ctx_.data.size() && target == nullptr; ++i) {
        const DataSym& d = ctx_.data[(s.sym + i) % ctx_.data.size()];
        if (d.per_cpu) target = &d;
      }
      if (target == nullptr) kind = SectionKind::kAdd64;
    }
    const int64_t delta = 1 + (s.imm >= 0 ? s.imm : -s.imm) % 5;
    const uint32_t attempts = 2 + s.count % std::max<uint32_t>(1, ctx_.options->max_retries);
    const bool u32 = kind == SectionKind::kAdd32 || (target != nullptr && target->width == Width::kU32);
    const std::string counter = kind == SectionKind::kAdd32 ? "counter32" : "counter";
    const uint64_t stride = target != nullptr ? target->stride : kCounterStride;
    const uint64_t elem = target != nullptr ? (s.index % target->count) * static_cast<uint64_t>(target->width) : 0;

    const uint64_t start_emitted = emitted_;
    uint64_t prologue = 0;
    if (role == Role::kHandler && kind != SectionKind::kCondStore) {
      // Handler invocations are not known statically: account the delta first.
      E().La(kAddr, kind == SectionKind::kAdd32 ? "hexpect32" : "hexpect");
      E().Li(kIdx, delta);
      E().Xadd(kIdx, Mem(kAddr), kIdx);
      prologue = 3;
    }
    const std::string n = std::to_string(cs_++);
    const std::string retry = "s" + n + "_retry", start = "s" + n + "_start", post = "s" + n + "_post",
                      abort = "s" + n + "_abort", done = "s" + n + "_done";
    const std::string cs = func_ + "_cs" + n;
    E().Li(kRetries, 0);
    f_.Label(retry);
    E().RseqLoad(kCpuStart, RseqField::kCpuIdStart);
    E().Mul(kTarget, kCpuStart, Imm(static_cast<int64_t>(stride)));
    E().La(kAddr, target != nullptr ? target->name : counter, static_cast<int64_t>(elem));
    E().Add(kTarget, kTarget, R(kAddr));
    E().RseqArm(cs);
    f_.Label(start);
    E().RseqLoad(kCpuId, RseqField::kCpuId);
    E().Bne(kCpuId, R(kCpuStart), abort);
    if (u32) E().Ld32(kValue, Mem(kTarget)); else E().Ld(kValue, Mem(kTarget));
    for (const Stmt& noise : s.body) Noise(noise);
    if (kind == SectionKind::kCondStore) {
      E().Bne(kValue, Imm(SmallImm(s.rd)), done);
      E().Li(kValue, SmallImm(s.rt));
    } else {
      E().Add(kValue, kValue, Imm(delta));
    }
    if (u32) E().St32(Mem(kTarget), kValue); else E().St(Mem(kTarget), kValue);
    f_.Label(post);
    E().Jmp(done);
    E().Sig(kRseqSig);
    f_.Label(abort);
    E().Add(kRetries, kRetries, Imm(1));
    E().Blt(kRetries, Imm(attempts), retry);
    if (kind != SectionKind::kCondStore) {
      E().La(kTarget, kind == SectionKind::kAdd32 ? "gaveup32" : "gaveup");
      E().Li(kValue, delta);
      E().Xadd(kValue, Mem(kTarget), kValue);
    }
    f_.Label(done);
    f_.Cs(cs, start, post, abort);
    // Each attempt runs each instruction of the section at most once.
    c.steps = prologue + (emitted_ - start_emitted - prologue) * attempts;
    if (role != Role::kHandler) {
      if (kind == SectionKind::kAdd64) c.add64 = delta;
      if (kind == SectionKind::kAdd32) c.add32 = delta;
    }
    return c;
  }

  // One instruction-or-two of a section body: never a store outside `spec`,
  // never touching the section's registers.
  void Noise(const Stmt& s) {
    const int rd = ValueReg(s.rd), rs = ValueReg(s.rs);
    switch (s.op % 4) {
      case 0:
        E().Alu(s.index & 1 ? Op::kXor : Op::kAdd, rd, rs, Imm(SmallImm(s.imm)));
        break;
      case 1: {
        const DataSym& d = Data(s.sym);
        E().La(kAddr, d.name, static_cast<int64_t>(Offset(d, s.cpu, s.index)));
        if (d.width == Width::kU64) E().Ld(rd, Mem(kAddr)); else E().Ld32(rd, Mem(kAddr));
        break;
      }
      case 2:
        // Speculative store to spec[cpu_id_start][i].
        E().Mul(kAddr, kCpuStart, Imm(static_cast<int64_t>(kSpecStride)));
        E().La(kIdx, "spec");
        E().Add(kAddr, kAddr, R(kIdx));
        E().St(Mem(kAddr, static_cast<int64_t>(8 * (s.index % kSpecCount))), rs);
        break;
      default:
        E().Mov(rd, kValue);
        break;
    }
  }

  FunctionBuilder& f_;
  const Context& ctx_;
  std::string func_;
  Role role_;
  uint64_t emitted_ = 0;
  int labels_ = 0;
  int cs_ = 0;
};

std::string CmpOp(uint32_t c) {
  static const char* kOps[] = {"==", "!=", "<", "<=", ">", ">="};
  return kOps[c % 6];
}

// An element of a data symbol (in range) and its text.
std::pair<Expr, std::string> ElementExpr(const DataSym& d, uint32_t cpu_choice, uint32_t index_choice,
                                         uint32_t cpus) {
  const int64_t cpu = cpu_choice % cpus, index = index_choice % d.count;
  if (!d.per_cpu && d.count == 1) return {expr::Sym(d.name), d.name};
  if (!d.per_cpu) return {expr::Index(d.name, expr::Const(index)), d.name + "[" + std::to_string(index) + "]"};
  if (d.count == 1) return {expr::Index(d.name, expr::Const(cpu)), d.name + "[" + std::to_string(cpu) + "]"};
  return {expr::Index2(d.name, expr::Const(cpu), expr::Const(index)),
          d.name + "[" + std::to_string(cpu) + "][" + std::to_string(index) + "]"};
}

std::pair<Expr, std::string> RacyExpr(const PropGen& p, const Context& ctx, int depth) {
  const uint32_t form = p.form % (depth == 0 ? 5 : 4);
  const std::string cmp = CmpOp(p.cmp);
  const int64_t value = (p.value >= 0 ? p.value : -p.value) % 16;
  std::pair<Expr, std::string> lhs;
  switch (form) {
    case 0:
      lhs = ElementExpr(ctx.data[p.a % ctx.data.size()], p.b, p.c, ctx.cpus);
      break;
    case 1: {
      const std::string& name = ctx.data[p.a % ctx.data.size()].name;
      lhs = {expr::Sum(name), "sum(" + name + ")"};
      break;
    }
    case 2: {
      const std::string& name = ctx.thread_names[p.a % ctx.thread_names.size()];
      lhs = {expr::Ret(name), "ret(" + name + ")"};
      break;
    }
    case 3: {
      const int64_t cpu = p.b % ctx.cpus;
      lhs = {expr::Index("counter", expr::Const(cpu)), "counter[" + std::to_string(cpu) + "]"};
      break;
    }
    default: {
      // (x) || (y): two simpler forms.
      PropGen x = p, y = p;
      y.form = p.form / 5;
      y.a = p.b;
      y.b = p.c;
      y.c = p.a;
      y.cmp = p.cmp / 6;
      y.value = p.value / 16;
      auto [ex, tx] = RacyExpr(x, ctx, 1);
      auto [ey, ty] = RacyExpr(y, ctx, 1);
      return {expr::Binary("||", std::move(ex), std::move(ey)), tx + " || " + ty};
    }
  }
  return {expr::Binary(cmp, std::move(lhs.first), expr::Const(value)), lhs.second + " " + cmp + " " +
                                                                             std::to_string(value)};
}

// ---- RapidCheck generators (used inside gen::exec) ----

template <typename T>
T Pick(T lo, T hi) {  // [lo, hi]
  return *rc::gen::inRange<T>(lo, hi + 1);
}

rc::Gen<Stmt> GenStmt(Role role, GenOptions o);

// A body of 0..max statements; the length does not scale with RapidCheck's
// size (shrinking still shortens it), so small sizes still give real programs.
rc::Gen<std::vector<Stmt>> GenBody(Role role, GenOptions o, uint32_t max) {
  std::vector<uint32_t> lengths;
  for (uint32_t n = 0; n <= max; ++n) lengths.push_back(n);
  return rc::gen::mapcat(rc::gen::elementOf(lengths), [role, o](uint32_t n) {
    return rc::gen::container<std::vector<Stmt>>(n, GenStmt(role, o));
  });
}

// Operands of a statement (or of a section body's noise instruction), in
// ranges wide enough for every normalisation in BuildGenerated.
Stmt PickOperands() {
  Stmt s;
  s.op = Pick<uint32_t>(0, 11);
  s.rd = Pick<uint32_t>(0, 8);
  s.rs = Pick<uint32_t>(0, 8);
  s.rt = Pick<uint32_t>(0, 8);
  s.sym = Pick<uint32_t>(0, 5);
  s.cpu = Pick<uint32_t>(0, 5);
  s.index = Pick<uint32_t>(0, 7);
  s.imm = *rc::gen::weightedOneOf<int64_t>({{6, rc::gen::inRange<int64_t>(-8, 64)},
                                            {1, rc::gen::arbitrary<int64_t>()}});
  s.count = Pick<uint32_t>(0, 5);
  return s;
}

rc::Gen<Stmt> GenNoise() { return rc::gen::exec(PickOperands); }

rc::Gen<Stmt> GenStmt(Role role, GenOptions o) {
  return rc::gen::exec([role, o] {
    // Simplest kinds first: shrinking moves towards them.
    std::vector<std::pair<std::size_t, StmtKind>> kinds = {
        {2, StmtKind::kNop},     {6, StmtKind::kLi},         {3, StmtKind::kMov},    {8, StmtKind::kAlu},
        {6, StmtKind::kLoad},    {6, StmtKind::kStore},      {4, StmtKind::kAtomic}, {3, StmtKind::kObserve},
        {2, StmtKind::kRseqField}, {1, StmtKind::kFence},    {18, StmtKind::kSection}};
    if (o.syscalls) {
      kinds.insert(kinds.end(), {{2, StmtKind::kGetcpu},
                                 {2, StmtKind::kYield},
                                 {2, StmtKind::kMembarrier},
                                 {1, StmtKind::kSetaffinity}});
    }
    if (o.signals && role != Role::kHandler) kinds.push_back({3, StmtKind::kTgkill});
    if (role == Role::kEntry || role == Role::kLoopBody) kinds.push_back({3, StmtKind::kCall});
    if (role == Role::kEntry) kinds.push_back({5, StmtKind::kLoop});
    if (o.racy_asserts && role != Role::kHandler) kinds.push_back({10, StmtKind::kRacyAssert});
    std::vector<StmtKind> weighted;  // each kind repeated by its weight
    for (const auto& [weight, kind] : kinds) weighted.insert(weighted.end(), weight, kind);
    const StmtKind kind = *rc::gen::elementOf(weighted);
    Stmt s = PickOperands();
    s.kind = kind;
    if (s.kind == StmtKind::kLoop) s.body = *GenBody(Role::kLoopBody, o, 3);
    if (s.kind == StmtKind::kSection) {
      s.body = *rc::gen::mapcat(rc::gen::inRange<uint32_t>(0, 4), [](uint32_t n) {
        return rc::gen::container<std::vector<Stmt>>(n, GenNoise());
      });
    }
    return s;
  });
}

}  // namespace

GeneratedScenario BuildGenerated(const ProgramSpec& spec, const GenOptions& options) {
  GeneratedScenario g;
  g.spec = spec;
  Context ctx;
  ctx.options = &options;
  ctx.cpus = std::clamp<uint32_t>(spec.cpus, 1, std::max<uint32_t>(1, std::min<uint32_t>(options.max_cpus, 8)));
  ctx.nodes = 1 + (spec.nodes == 0 ? 0 : (spec.nodes - 1) % ctx.cpus);
  const size_t nthreads =
      std::clamp<size_t>(spec.threads.size(), 1, std::max<uint32_t>(1, std::min<uint32_t>(options.max_threads, 8)));
  ctx.threads = static_cast<uint32_t>(nthreads);
  for (size_t t = 0; t < nthreads; ++t) ctx.thread_names.push_back("t" + std::to_string(t));

  ScenarioBuilder b("generated");
  b.Description("random program from tests/gen/program_gen");
  b.Cpus(ctx.cpus).Nodes(ctx.nodes);

  // Data symbols: d0 is u64 (atomics need one).
  const size_t ndata = std::clamp<size_t>(spec.data.size(), 1, 3);
  for (size_t i = 0; i < ndata; ++i) {
    const DataSpec ds = i < spec.data.size() ? spec.data[i] : DataSpec{};
    DataSym d;
    d.name = "d" + std::to_string(i);
    d.per_cpu = ds.per_cpu;
    d.width = ds.u32 && i > 0 ? Width::kU32 : Width::kU64;
    d.count = 1u << (ds.count_log2 % 3);
    std::vector<int64_t> init(ds.init.begin(), ds.init.begin() + std::min<size_t>(ds.init.size(), d.count));
    if (d.width == Width::kU32) {
      for (int64_t& v : init) v = static_cast<int64_t>(static_cast<uint32_t>(v));
    }
    if (d.per_cpu) {
      const uint64_t explicit_stride = ds.stride % 3 == 0 ? 0 : 64ull << (ds.stride % 3 - 1);
      const uint64_t bytes = d.count * static_cast<uint64_t>(d.width);
      d.stride = explicit_stride != 0 ? explicit_stride : (bytes + 63) / 64 * 64;
      b.PerCpu(d.name, d.width, d.count, explicit_stride, init);
    } else {
      b.Var(d.name, d.width, d.count, init);
    }
    ctx.data.push_back(d);
  }
  b.PerCpu("counter", Width::kU64, 1, kCounterStride);
  b.PerCpu("counter32", Width::kU32, 1, kCounterStride);
  b.Var("gaveup", Width::kU64, 1).Var("gaveup32", Width::kU64, 1);
  b.Var("hexpect", Width::kU64, 1).Var("hexpect32", Width::kU64, 1);
  b.PerCpu("spec", Width::kU64, kSpecCount, kSpecStride).Scratch("spec");

  // Signals.
  const size_t nhandlers = options.signals ? std::min<size_t>(spec.handlers.size(), 2) : 0;
  std::vector<bool> used(2, false);
  if (nhandlers > 0) {
    for (const SignalGen& sg : spec.signals) {
      const uint32_t which = sg.which % 2;
      if (used[which]) continue;
      used[which] = true;
      const int signo = kHandledSignals[which];
      b.Signal(signo, "handler" + std::to_string(sg.handler % nhandlers), sg.nodefer);
      ctx.signals.push_back(signo);
    }
  }
  if (options.signals && spec.ignore_alrm) {
    b.Signal(kSigAlrm, "");
    ctx.signals.push_back(kSigAlrm);
  }

  // Functions, declared entries first; helpers are built first (their costs
  // feed the entries'), handlers last.
  const size_t nentries = std::clamp<size_t>(spec.entries.size(), 1, 3);
  const size_t nhelpers = std::min<size_t>(spec.helpers.size(), 2);
  std::vector<FunctionBuilder*> entry_fb, helper_fb, handler_fb;
  for (size_t i = 0; i < nentries; ++i) entry_fb.push_back(&b.Func("main" + std::to_string(i)));
  for (size_t i = 0; i < nhelpers; ++i) helper_fb.push_back(&b.Func("helper" + std::to_string(i)));
  for (size_t i = 0; i < nhandlers; ++i) handler_fb.push_back(&b.Func("handler" + std::to_string(i)));
  // A function body, clipped to max_stmts statements.
  auto clip = [&](const std::vector<std::vector<Stmt>>& v, size_t i) {
    std::vector<Stmt> body = i < v.size() ? v[i] : std::vector<Stmt>{};
    if (body.size() > options.max_stmts) body.resize(options.max_stmts);
    return body;
  };
  for (size_t i = 0; i < nhelpers; ++i) {
    Emitter e(*helper_fb[i], ctx, "helper" + std::to_string(i), Role::kHelper);
    ctx.helpers.push_back(e.Function(clip(spec.helpers, i)));
  }
  // A function's cost includes the `ret`; a call's cost counts it through the helper's.
  for (size_t i = 0; i < nhandlers; ++i) {
    Emitter e(*handler_fb[i], ctx, "handler" + std::to_string(i), Role::kHandler);
    g.handler_steps = std::max(g.handler_steps, e.Function(clip(spec.handlers, i)).steps);
  }
  std::vector<Cost> entry_cost;
  for (size_t i = 0; i < nentries; ++i) {
    Emitter e(*entry_fb[i], ctx, "main" + std::to_string(i), Role::kEntry);
    entry_cost.push_back(e.Function(clip(spec.entries, i)));
  }

  // Threads.
  Cost total;
  for (size_t t = 0; t < nthreads; ++t) {
    const ThreadGen tg = t < spec.threads.size() ? spec.threads[t] : ThreadGen{};
    const uint32_t cpu = tg.cpu % ctx.cpus;
    const uint64_t all = (1ull << ctx.cpus) - 1;
    const uint64_t affinity = tg.affinity == 0 ? ~0ull : ((tg.affinity & all) | (1ull << cpu));
    std::vector<std::pair<uint8_t, int64_t>> args;
    for (const auto& [reg, value] : tg.args) {
      const uint8_t r = static_cast<uint8_t>(1 + reg % 8);
      bool dup = false;
      for (const auto& a : args) dup |= a.first == r;
      if (!dup && args.size() < 3) args.emplace_back(r, value);
    }
    // Every entry function runs: thread i < nentries runs main<i>.
    const size_t entry = t < nentries ? t : tg.entry % nentries;
    b.Thread(ctx.thread_names[t], "main" + std::to_string(entry), cpu, affinity, args);
    total += entry_cost[entry];
  }
  g.base_steps = total.steps;
  g.max_tgkills = total.tgkills;

  // Invariants, then racy properties.
  b.Property(expr::Binary("==", expr::Binary("+", expr::Sum("counter"), expr::Sym("gaveup")),
                          expr::Binary("+", expr::Const(total.add64), expr::Sym("hexpect"))),
             "sum(counter) + gaveup == " + std::to_string(total.add64) + " + hexpect");
  b.Property(expr::Binary("==", expr::Binary("+", expr::Sum("counter32"), expr::Sym("gaveup32")),
                          expr::Binary("+", expr::Const(total.add32), expr::Sym("hexpect32"))),
             "sum(counter32) + gaveup32 == " + std::to_string(total.add32) + " + hexpect32");
  g.num_invariants = 2;
  if (options.racy_properties) {
    for (size_t i = 0; i < std::min<size_t>(spec.props.size(), 3); ++i) {
      auto [e, text] = RacyExpr(spec.props[i], ctx, 0);
      b.Property(std::move(e), std::move(text));
    }
  }
  b.Expect(Verdict::kPass);
  g.scenario = b.Build();
  return g;
}

rc::Gen<ProgramSpec> GenProgramSpec(GenOptions o) {
  return rc::gen::exec([o] {
    ProgramSpec p;
    p.cpus = Pick<uint32_t>(1, std::max<uint32_t>(1, o.max_cpus));
    p.nodes = Pick<uint32_t>(1, p.cpus);
    const uint32_t ndata = Pick<uint32_t>(1, 3);
    for (uint32_t i = 0; i < ndata; ++i) {
      DataSpec d;
      d.per_cpu = *rc::gen::arbitrary<bool>();
      d.u32 = *rc::gen::arbitrary<bool>();
      d.count_log2 = Pick<uint32_t>(0, 2);
      d.stride = Pick<uint32_t>(0, 2);
      d.init = *rc::gen::container<std::vector<int64_t>>(Pick<uint32_t>(0, 2), rc::gen::inRange<int64_t>(0, 10));
      p.data.push_back(std::move(d));
    }
    const uint32_t nthreads = Pick<uint32_t>(1, std::max<uint32_t>(1, o.max_threads));
    const uint32_t nentries = Pick<uint32_t>(1, std::min<uint32_t>(nthreads, 3));
    for (uint32_t i = 0; i < nentries; ++i) p.entries.push_back(*GenBody(Role::kEntry, o, o.max_stmts));
    const uint32_t nhelpers = Pick<uint32_t>(0, 2);
    for (uint32_t i = 0; i < nhelpers; ++i) p.helpers.push_back(*GenBody(Role::kHelper, o, o.max_stmts / 2 + 1));
    if (o.signals) {
      const uint32_t nhandlers = Pick<uint32_t>(0, 2);
      for (uint32_t i = 0; i < nhandlers; ++i) p.handlers.push_back(*GenBody(Role::kHandler, o, o.max_stmts / 2 + 1));
      const uint32_t nsignals = nhandlers == 0 ? 0 : Pick<uint32_t>(1, 2);
      for (uint32_t i = 0; i < nsignals; ++i) {
        p.signals.push_back({Pick<uint32_t>(0, 1), Pick<uint32_t>(0, 1), *rc::gen::arbitrary<bool>()});
      }
      p.ignore_alrm = *rc::gen::weightedElement<bool>({{4, false}, {1, true}});
    }
    for (uint32_t t = 0; t < nthreads; ++t) {
      ThreadGen tg;
      tg.entry = Pick<uint32_t>(0, nentries - 1);
      tg.cpu = Pick<uint32_t>(0, p.cpus - 1);
      tg.affinity = *rc::gen::weightedElement<bool>({{2, false}, {1, true}}) ? Pick<uint64_t>(1, 7) : 0;
      const uint32_t nargs = Pick<uint32_t>(0, 2);
      for (uint32_t i = 0; i < nargs; ++i) tg.args.emplace_back(Pick<uint32_t>(0, 7), Pick<int64_t>(-5, 100));
      p.threads.push_back(std::move(tg));
    }
    if (o.racy_properties) {
      const uint32_t nprops = Pick<uint32_t>(0, 2);
      for (uint32_t i = 0; i < nprops; ++i) {
        p.props.push_back({Pick<uint32_t>(0, 24), Pick<uint32_t>(0, 35), Pick<uint32_t>(0, 5), Pick<uint32_t>(0, 5),
                           Pick<uint32_t>(0, 5), Pick<int64_t>(0, 255)});
      }
    }
    return p;
  });
}

rc::Gen<GeneratedScenario> GenScenario(GenOptions options) {
  return rc::gen::map(GenProgramSpec(options),
                      [options](const ProgramSpec& spec) { return BuildGenerated(spec, options); });
}

rc::Gen<Scenario> GenScenarioOnly(GenOptions options) {
  return rc::gen::map(GenScenario(options), [](const GeneratedScenario& g) { return g.scenario; });
}

void showValue(const GeneratedScenario& g, std::ostream& os) {
  os << "\n" << PrintScenario(g.scenario) << "(step bound for 8 events: " << g.StepBound(8) << ")\n";
}

}  // namespace rseqmc::testgen
