// C++ builder API for scenarios: what tests, generators and the text parser use
// to make a Scenario. References (labels, functions, symbols, descriptors,
// threads) are by name and resolved by Build(), which then runs the semantic
// checks of sim/validate.h and throws InputError on the first problem.
//
// Example: a one-thread per-CPU counter increment (librseq addv pattern).
//
//     ScenarioBuilder b("counter");
//     b.Cpus(2).PerCpu("counter", Width::kU64, 1, 64, {0});
//     auto& f = b.Func("inc");
//     f.La(10, "counter")
//      .Label("retry").RseqLoad(1, RseqField::kCpuIdStart)
//      .Shl(2, 1, Imm(6)).Add(2, 2, R(10)).RseqArm("inc_cs")
//      .Label("start").RseqLoad(3, RseqField::kCpuId).Bne(3, R(1), "abort")
//      .Ld(4, Mem(2)).Add(4, 4, Imm(1)).St(Mem(2), 4)
//      .Label("post").Ret()
//      .Sig(kRseqSig).Label("abort").Jmp("retry")
//      .Cs("inc_cs", "start", "post", "abort");
//     b.Thread("t0", "inc", /*cpu=*/0);
//     b.Property(Expr::Binary("==", Expr::Sum("counter"), Expr::Const(1)));
//     Scenario s = b.Build();
#ifndef RSEQMC_SIM_BUILDER_H_
#define RSEQMC_SIM_BUILDER_H_

#include <cstdint>
#include <deque>
#include <string>
#include <vector>

#include "sim/ir.h"
#include "sim/scenario.h"

namespace rseqmc {

// A register or an immediate second operand.
struct Operand {
  bool is_imm = false;
  uint8_t reg = 0;
  int64_t imm = 0;
};
inline Operand R(int reg) { return {false, static_cast<uint8_t>(reg), 0}; }
inline Operand Imm(int64_t v) { return {true, 0, v}; }

// A memory operand: [base + disp] or [base + index*scale + disp].
struct Mem {
  uint8_t base = 0;
  int64_t disp = 0;
  bool has_index = false;
  uint8_t index = 0;
  uint8_t scale = 1;
  Mem() = default;
  explicit Mem(int b, int64_t d = 0) : base(static_cast<uint8_t>(b)), disp(d) {}
  Mem(int b, int i, int s, int64_t d = 0)
      : base(static_cast<uint8_t>(b)), disp(d), has_index(true), index(static_cast<uint8_t>(i)),
        scale(static_cast<uint8_t>(s)) {}
};

// Expression helpers for properties.
namespace expr {
Expr Const(int64_t v, std::string name = "");
Expr Sym(std::string name);
Expr Index(std::string name, Expr cpu_or_index);
Expr Index2(std::string name, Expr cpu, Expr index);
Expr Sum(std::string name);
Expr Ret(std::string thread);
Expr Unary(std::string op, Expr a);
Expr Binary(std::string op, Expr a, Expr b);
}  // namespace expr

class ScenarioBuilder;

class FunctionBuilder {
 public:
  // Source position attached to the next instructions/labels/descriptors
  // (the parser sets it; C++ users may ignore it).
  FunctionBuilder& At(SourceLoc loc) { loc_ = loc; return *this; }
  FunctionBuilder& Label(const std::string& name);
  FunctionBuilder& Li(int rd, int64_t imm);
  FunctionBuilder& Mov(int rd, int rs);
  FunctionBuilder& Alu(Op op, int rd, int rs, Operand b);  // kAdd..kMul
  FunctionBuilder& Add(int rd, int rs, Operand b) { return Alu(Op::kAdd, rd, rs, b); }
  FunctionBuilder& Sub(int rd, int rs, Operand b) { return Alu(Op::kSub, rd, rs, b); }
  FunctionBuilder& And(int rd, int rs, Operand b) { return Alu(Op::kAnd, rd, rs, b); }
  FunctionBuilder& Or(int rd, int rs, Operand b) { return Alu(Op::kOr, rd, rs, b); }
  FunctionBuilder& Xor(int rd, int rs, Operand b) { return Alu(Op::kXor, rd, rs, b); }
  FunctionBuilder& Shl(int rd, int rs, Operand b) { return Alu(Op::kShl, rd, rs, b); }
  FunctionBuilder& Shr(int rd, int rs, Operand b) { return Alu(Op::kShr, rd, rs, b); }
  FunctionBuilder& Mul(int rd, int rs, Operand b) { return Alu(Op::kMul, rd, rs, b); }
  FunctionBuilder& La(int rd, const std::string& symbol, int64_t offset = 0);
  FunctionBuilder& Ld(int rd, Mem m) { return MemOp(Op::kLd, rd, m, 0); }
  FunctionBuilder& Ld32(int rd, Mem m) { return MemOp(Op::kLd32, rd, m, 0); }
  FunctionBuilder& St(Mem m, int rt) { return MemOp(Op::kSt, 0, m, rt); }
  FunctionBuilder& St32(Mem m, int rt) { return MemOp(Op::kSt32, 0, m, rt); }
  FunctionBuilder& Branch(Op op, int rs, Operand b, const std::string& label);  // kBeq..kBgeu
  FunctionBuilder& Beq(int rs, Operand b, const std::string& l) { return Branch(Op::kBeq, rs, b, l); }
  FunctionBuilder& Bne(int rs, Operand b, const std::string& l) { return Branch(Op::kBne, rs, b, l); }
  FunctionBuilder& Blt(int rs, Operand b, const std::string& l) { return Branch(Op::kBlt, rs, b, l); }
  FunctionBuilder& Bge(int rs, Operand b, const std::string& l) { return Branch(Op::kBge, rs, b, l); }
  FunctionBuilder& Bltu(int rs, Operand b, const std::string& l) { return Branch(Op::kBltu, rs, b, l); }
  FunctionBuilder& Bgeu(int rs, Operand b, const std::string& l) { return Branch(Op::kBgeu, rs, b, l); }
  FunctionBuilder& Jmp(const std::string& label);
  FunctionBuilder& Call(const std::string& function);
  FunctionBuilder& Ret();
  FunctionBuilder& RseqLoad(int rd, RseqField f);
  FunctionBuilder& RseqAddr(int rd);
  FunctionBuilder& RseqArm(const std::string& descriptor);
  FunctionBuilder& Sig(uint32_t value);
  FunctionBuilder& Cas(int rd, Mem m, int expected, int desired);
  FunctionBuilder& Xadd(int rd, Mem m, int rt);
  FunctionBuilder& Xchg(int rd, Mem m, int rt);
  FunctionBuilder& Fence();
  FunctionBuilder& SchedYield();
  FunctionBuilder& SchedSetaffinity(Operand mask);
  FunctionBuilder& Getcpu();
  FunctionBuilder& Tgkill(Operand thread, int signo);            // register or thread index
  FunctionBuilder& Tgkill(const std::string& thread, int signo); // by thread name
  FunctionBuilder& MembarrierRseq(Operand cpu);                  // Imm(-1) = all CPUs
  // futex(FUTEX_WAIT_PRIVATE) on the u32 at the address in addr_reg; blocks while it equals `expected`.
  FunctionBuilder& FutexWait(int addr_reg, Operand expected);
  // futex(FUTEX_WAKE_PRIVATE): wakes up to `count` waiters of the u32 at the address in addr_reg.
  FunctionBuilder& FutexWake(int addr_reg, Operand count);
  // nanosleep for `ns` nanoseconds of simulated time.
  FunctionBuilder& Sleep(Operand ns);
  // r0 := CLOCK_MONOTONIC in ns (sim/ir.h Op::kClock).
  FunctionBuilder& Clock();
  // `ns` nanoseconds of user computation (sim/ir.h Op::kWork).
  FunctionBuilder& Work(Operand ns);
  FunctionBuilder& RseqRegister(uint32_t sig = kRseqSig);
  FunctionBuilder& RseqUnregister(uint32_t sig = kRseqSig);
  // restartable_sequences(0, 0, start, end, restart) of the 2015 RFC for the
  // region `region` (declared with Region()).
  FunctionBuilder& RfcRegion(const std::string& region);
  // restartable_sequences(1, 0, ptr): the caller's CPU pointer (Imm(0) = NULL).
  FunctionBuilder& RfcCpuPtr(Operand ptr);
  // The preempt-lock scheme (sim/kernel/preempt_lock.h): register the
  // caller's flag word `flag` (a u32 address; Imm(0) unregisters) and the
  // signal `signo` the kernel answers a flagged switch-out with.
  FunctionBuilder& PreemptLock(Operand flag, int signo);
  // In a handler: restart the interrupted context at region `region`'s
  // restart address if its IP lies in the region (declared with Region()).
  FunctionBuilder& SigctxRestart(const std::string& region);
  FunctionBuilder& Assert(int rs, CmpKind cmp, Operand b, const std::string& message = "");
  FunctionBuilder& Observe(const std::string& name, int rs);
  FunctionBuilder& Nop();
  // Critical-section descriptor `struct rseq_cs` over labels of this function.
  FunctionBuilder& Cs(const std::string& name, const std::string& start, const std::string& post_commit,
                      const std::string& abort, uint32_t flags = 0, uint32_t version = 0,
                      bool unchecked = false);
  // A 2015-RFC region [start, end) with restart address `restart`, over labels
  // of this function (CsDescriptor::region). Descriptors and regions share
  // one name space.
  FunctionBuilder& Region(const std::string& name, const std::string& start, const std::string& end,
                          const std::string& restart, bool unchecked = false);

 private:
  friend class ScenarioBuilder;
  FunctionBuilder& MemOp(Op op, int r, Mem m, int rt);
  FunctionBuilder& Push(Instr in, std::string ref = "");
  // An instruction whose one operand is a duration in ns (sleep, work).
  FunctionBuilder& PushTimed(Op op, Operand ns);
  struct PendingRef {
    size_t instr;       // index into instrs_
    std::string name;   // label / function / symbol / descriptor / thread
    SourceLoc loc;
  };
  struct PendingCs {
    std::string name, start, post_commit, abort;
    uint32_t flags, version;
    bool unchecked;
    SourceLoc loc;
    bool region = false;
  };
  std::string name_;
  SourceLoc func_loc_;
  SourceLoc loc_;
  std::vector<Instr> instrs_;
  std::vector<std::pair<std::string, std::pair<uint32_t, SourceLoc>>> labels_;  // name -> local index
  std::vector<PendingRef> refs_;
  std::vector<PendingCs> cs_;
  std::vector<std::string> strings_;  // observe/assert text, indexed by instr via refs
};

class ScenarioBuilder {
 public:
  explicit ScenarioBuilder(std::string name, std::string file = "");
  ScenarioBuilder& At(SourceLoc loc) { loc_ = loc; return *this; }
  ScenarioBuilder& Description(std::string d);
  ScenarioBuilder& Cpus(uint32_t n);
  ScenarioBuilder& Nodes(uint32_t n);
  // Whether the kernel is preemptible (Scenario::preemption).
  ScenarioBuilder& Preempt(Preemption p, SourceLoc loc = {});
  ScenarioBuilder& Const(const std::string& name, int64_t value, bool overridden = false);
  ScenarioBuilder& Var(const std::string& name, Width w, uint32_t count, std::vector<int64_t> init = {});
  // stride 0 = count*width rounded up to 64 bytes.
  ScenarioBuilder& PerCpu(const std::string& name, Width w, uint32_t count, uint64_t stride = 0,
                          std::vector<int64_t> init = {});
  ScenarioBuilder& Scratch(const std::string& symbol);
  // Functions are kept in declaration order; the returned reference stays valid.
  FunctionBuilder& Func(const std::string& name, SourceLoc loc = {});
  ScenarioBuilder& Thread(const std::string& name, const std::string& entry, uint32_t cpu,
                          uint64_t affinity = ~0ull, std::vector<std::pair<uint8_t, int64_t>> args = {},
                          bool registered = true);
  ScenarioBuilder& Native(const std::string& name, uint32_t cpu, NativeBody body, uint64_t affinity = ~0ull,
                          bool registered = true);
  // The thread added last may start on any CPU its affinity allows (`cpu
  // any`, ThreadSpec::any_cpu); its `cpu` stays the default placement's.
  ScenarioBuilder& AnyCpu();
  // handler "" = ignore the signal.
  ScenarioBuilder& Signal(int signo, const std::string& handler, bool nodefer = false);
  ScenarioBuilder& Property(Expr e, std::string text = "");
  ScenarioBuilder& Expect(Verdict v);
  // The verdict expected under one kernel ABI (replaces an earlier one for it).
  ScenarioBuilder& ExpectOn(KernelModel k, Verdict v);
  // Resolves names, lays out and validates. Throws InputError (with the
  // SourceLoc given through At()) on the first problem.
  Scenario Build();

 private:
  Scenario s_;
  SourceLoc loc_;
  std::deque<FunctionBuilder> funcs_;
  struct PendingThread {
    std::string entry;
    SourceLoc loc;
  };
  std::vector<PendingThread> thread_entries_;
  struct PendingSignal {
    std::string handler;
    SourceLoc loc;
  };
  std::vector<PendingSignal> signal_handlers_;
};

// Assigns data addresses (symbols in declaration order, each 64-byte aligned,
// per-CPU blocks `stride` apart) and sizes. Called by Build() and the parser.
void LayoutProgram(Program& p, uint32_t num_cpus);

// Address of descriptor d's `struct rseq_cs` in the data image of a laid-out
// program: after the symbols (each block rounded up to 64 bytes), 32-byte
// aligned, 32 bytes apart. The simulator places descriptors there
// (sim/machine.cc); the ELF importer writes it into `lea DESC(%rip)`.
uint64_t DescriptorAddress(const Program& p, uint32_t d);

// Writes every symbol element's initial value (little-endian, `width` bytes)
// into `image`, whose byte i holds address kDataBase + i; it must cover every
// symbol of the laid-out program. The simulator's memory and the real-kernel
// harness's data mapping both start from this image.
void WriteSymbolImage(const Program& p, uint32_t num_cpus, uint8_t* image);

}  // namespace rseqmc

#endif  // RSEQMC_SIM_BUILDER_H_
