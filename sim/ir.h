// The region-program IR: rseq critical sections and the code around them, as data.
//
// One IR instruction is one scheduling point (DESIGN.md §2). The same `Program`
// is interpreted by the simulator (sim/) and, later, compiled one-to-one to
// x86-64 by the real-kernel harness (kernel/harness), so both can run the *same*
// program under the *same* schedule.
//
// Machine model (units are bytes unless said otherwise):
//   * registers r0..r15, 64-bit, per thread context (a signal handler runs in a
//     fresh context; see sim/kernel.h);
//   * flat simulated memory, little-endian, sequentially consistent; 64-bit
//     (`ld`/`st`) and 32-bit (`ld32`/`st32`, zero-extending) accesses;
//   * code addresses: instruction i of the program (global index over all
//     functions, in declaration order) lives at `kCodeBase + 4 * i`, so a
//     `struct rseq_cs` holds real-looking `start_ip`, `post_commit_offset` (bytes)
//     and `abort_ip`, and "the 4 bytes before abort_ip" (the signature word, rule
//     §7.17) is exactly the slot of the instruction before the abort label.
//
// Example (the librseq `rseq_load_add_store__ptr` / `addv` pattern), in the text
// format of scenarios/README.md:
//
//     func inc
//     retry:
//       rseq_load r1, cpu_id_start
//       shl   r2, r1, 6
//       add   r2, r2, r10          # &counter[cpu]
//       rseq_arm inc_cs            # rseq->rseq_cs = &inc_cs
//     start:
//       rseq_load r3, cpu_id
//       bne   r3, r1, abort
//       ld    r4, [r2]
//       add   r4, r4, 1
//       st    [r2], r4             # commit
//     post:
//       ret
//       sig   0x53053053
//     abort:
//       jmp   retry
//       cs inc_cs start=start post_commit=post abort=abort
//     end
#ifndef RSEQMC_SIM_IR_H_
#define RSEQMC_SIM_IR_H_

#include <cstdint>
#include <string>
#include <vector>

namespace rseqmc {

inline constexpr int kNumRegs = 16;
// Code addresses: instruction i at kCodeBase + kInstrBytes * i.
inline constexpr uint64_t kCodeBase = 0x400000;
inline constexpr uint64_t kInstrBytes = 4;
// Data addresses: the first symbol lives at kDataBase.
inline constexpr uint64_t kDataBase = 0x10000000;
// x86-64 RSEQ_SIG (compudj/librseq include/rseq/arch/x86.h); glibc registers it.
inline constexpr uint32_t kRseqSig = 0x53053053;
// struct rseq (include/uapi/linux/rseq.h): field offsets and the 32-byte ABI size.
inline constexpr uint64_t kRseqOffCpuIdStart = 0;
inline constexpr uint64_t kRseqOffCpuId = 4;
inline constexpr uint64_t kRseqOffRseqCs = 8;
inline constexpr uint64_t kRseqOffFlags = 16;
inline constexpr uint64_t kRseqOffNodeId = 20;
inline constexpr uint64_t kRseqOffMmCid = 24;
inline constexpr uint64_t kRseqAreaBytes = 32;
// struct rseq_cs: u32 version, u32 flags, u64 start_ip, u64 post_commit_offset, u64 abort_ip.
inline constexpr uint64_t kRseqCsBytes = 32;
// RSEQ_CS_FLAG_NO_RESTART_ON_{PREEMPT,SIGNAL,MIGRATE} (deprecated in 6.0).
inline constexpr uint32_t kRseqCsFlagNoRestartOnPreempt = 1u << 0;
inline constexpr uint32_t kRseqCsFlagNoRestartOnSignal = 1u << 1;
inline constexpr uint32_t kRseqCsFlagNoRestartOnMigrate = 1u << 2;

inline constexpr uint64_t CodeAddress(uint32_t global_index) {
  return kCodeBase + kInstrBytes * global_index;
}

// Where a piece of program text came from (1-based line and column; 0 = unknown,
// e.g. built by the C++ builder).
struct SourceLoc {
  uint32_t line = 0;
  uint32_t column = 0;
  friend bool operator==(const SourceLoc&, const SourceLoc&) = default;
};

enum class Op : uint8_t {
  // rd := imm
  kLi,
  // rd := rs
  kMov,
  // rd := rs OP (rt | imm)   (shifts use the low 6 bits; mul is wrapping)
  kAdd, kSub, kAnd, kOr, kXor, kShl, kShr, kMul,
  // rd := address of symbol `sym` + imm
  kLa,
  // rd := mem[addr] (64 or 32 bits, zero-extended); see MemOperand below.
  kLd, kLd32,
  // mem[addr] := rt (64 or 32 bits)
  kSt, kSt32,
  // if (rs CMP (rt | imm)) goto target; blt/bge signed, bltu/bgeu unsigned.
  kBeq, kBne, kBlt, kBge, kBltu, kBgeu,
  // goto target
  kJmp,
  // push return address; goto function `func`'s first instruction.
  kCall,
  // return to the caller; at depth 0 it ends the thread (r0 = return value) or,
  // in a signal handler context, performs sigreturn.
  kRet,
  // rd := (u32) rseq area field `field` of the current thread (RseqField).
  kRseqLoad,
  // rd := address of the current thread's registered struct rseq (0 if none).
  kRseqAddr,
  // rseq->rseq_cs := &descriptor `cs` (a single 64-bit store; §2.4 step [1]).
  kRseqArm,
  // The signature word (imm, 32 bits) occupying one 4-byte code slot; executes
  // as a no-op (tcmalloc emits it inside a `nopl`).
  kSig,
  // rd := old mem[addr]; if old == rt then mem[addr] := ru.    (64-bit)
  kCas,
  // rd := old mem[addr]; mem[addr] := old + rt.                (64-bit)
  kXadd,
  // rd := old mem[addr]; mem[addr] := rt.                      (64-bit)
  kXchg,
  // full memory barrier (no effect under sequential consistency; kept for the JIT).
  kFence,
  // Kernel calls. Every one returns its result in r0 (0 or -errno) and is a
  // scheduling point like any instruction. Operands: see each.
  kSchedYield,        // no operands
  kSchedSetaffinity,  // CPU mask in rs (use_imm: in imm); affects the caller
  kGetcpu,            // r0 := current CPU
  kTgkill,            // target thread index in rs (use_imm: imm), signal in aux
  kMembarrierRseq,    // MEMBARRIER_CMD_PRIVATE_EXPEDITED_RSEQ; cpu in rs or imm (-1 = all); the process
                      // counts as registered (MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED_RSEQ)
  kRseqRegister,      // register the thread's area, len 32, signature imm
  kRseqUnregister,    // unregister, signature imm
  // Fail the execution unless (rs CMP (rt | imm)); aux = CmpKind, text = message.
  kAssert,
  // Record rs under the name `text` in the execution's outcome.
  kObserve,
  // No operation.
  kNop,
  // Blocking kernel calls (after kNop so that the values above, which schedule
  // tokens' scenario fingerprints hash, stay as they were).
  // futex(addr, FUTEX_WAIT_PRIVATE, expected): address in rs, expected u32 value in rt (use_imm: imm).
  // r0 := 0 (woken), -EAGAIN (value differs), -EINTR (a signal woke it), -EINVAL, -EFAULT.
  kFutexWait,
  // futex(addr, FUTEX_WAKE_PRIVATE, n): address in rs, n in rt (use_imm: imm); r0 := threads woken.
  kFutexWake,
  // nanosleep: ns of simulated time in rs (use_imm: imm); r0 := 0, -EINTR or -EINVAL (ns < 0).
  kSleep,
  // The 2015 RFC's restartable_sequences(op, flags, val1, val2, val3) system
  // call (sim/kernel/rfc2015.h; reference/rfc2015.md "ABI"). Kernels without
  // it return -ENOSYS.
  // op 0: register region `target` (a descriptor with `region` set): val1 =
  // its start_ip, val2 = its end, val3 = its restart address. r0 := 0,
  // -EINVAL or -EBUSY.
  kRfcRegion,
  // op 1: set the caller's CPU pointer to rs (use_imm: imm; 0 = NULL
  // unregisters). r0 := 0 or -EINVAL.
  kRfcCpuPtr,
  // Simulated time (sim/timed_scheduler.h). clock_gettime(CLOCK_MONOTONIC)
  // through the vDSO (no system call, no scheduling event): r0 := the
  // thread's CPU clock in ns under a time-driven scheduler, else the
  // simulated clock of sim/blocking.cc (which moves only when every CPU idles).
  kClock,
  // User computation that takes rs (use_imm: imm) ns of CPU time and touches
  // no memory or register: a request's own work in a workload. Under a
  // time-driven scheduler its CPU's clock moves by that much; otherwise it is a
  // no-op step. Negative values count as 0.
  kWork,
  // The preempt-lock + signal scheme (sim/kernel/preempt_lock.h; the 2015
  // RFC thread's third per-CPU arm). Registration, a system call: the
  // caller's flag word is the u32 at rs (use_imm: imm; 0 unregisters) and
  // the kernel answers a switch-out with the word non-zero by sending the
  // signal in aux. r0 := 0 or -EINVAL.
  kPreemptLock,
  // In a signal handler: if the interrupted context's IP (the frame's saved
  // uc_mcontext RIP) lies in region `target` [start, end), set it to the
  // region's restart address; r0 := 1 if it moved, else 0 (also outside a
  // handler). Touches only the caller's own signal frame.
  kSigctxRestart,
};
inline constexpr Op kLastOp = Op::kSigctxRestart;

// Comparison used by kAssert (branches encode theirs in the opcode).
enum class CmpKind : uint8_t { kEq, kNe, kLt, kLe, kGt, kGe, kLtu, kLeu, kGtu, kGeu };

enum class RseqField : uint8_t { kCpuIdStart, kCpuId, kNodeId, kMmCid, kFlags };

// One IR instruction. Fixed-size and trivially copyable; the interpreter reads
// it directly. Field use per opcode is documented on Op.
//
// Memory operand (kLd*, kSt*, kCas, kXadd, kXchg): address = r[base] + imm, or
// r[base] + r[index] * scale + imm when has_index.
struct Instr {
  Op op = Op::kNop;
  uint8_t rd = 0;
  uint8_t rs = 0;    // first source / base register of a memory operand
  uint8_t rt = 0;    // second source / value register of a store
  uint8_t ru = 0;    // third source (cas new value) / index register
  uint8_t scale = 1; // index scale (1, 2, 4, 8)
  bool use_imm = false;   // second operand is imm rather than rt
  bool has_index = false; // memory operand has an index register
  uint8_t aux = 0;   // CmpKind, RseqField, or signal number
  int64_t imm = 0;   // immediate / displacement
  // Resolved references: branch target (global instruction index), called
  // function index, symbol index (kLa), descriptor index (kRseqArm), or
  // observe/assert text index into Program::strings.
  uint32_t target = 0;
  SourceLoc loc;
  // Equality ignores `loc` (a printed-then-parsed program has other positions).
  friend bool operator==(const Instr& a, const Instr& b);
};

struct Label {
  std::string name;
  uint32_t index = 0;  // global instruction index the label names
  friend bool operator==(const Label&, const Label&) = default;
};

// A critical-section descriptor: `struct rseq_cs` with labels resolved to
// global instruction indices. start <= post_commit; the section is the
// half-open range [start, post_commit) (rule §7.5).
struct CsDescriptor {
  std::string name;
  uint32_t function = 0;
  uint32_t start = 0;        // start_ip
  uint32_t post_commit = 0;  // start_ip + post_commit_offset
  uint32_t abort = 0;        // abort_ip
  uint32_t version = 0;
  uint32_t flags = 0;
  bool unchecked = false;    // skip the static descriptor checks (planted bugs)
  // A region of the 2015 RFC ABI instead of a struct rseq_cs (`region NAME
  // start= end= restart=` in the text format): [start, post_commit) is the
  // region [crit_start, crit_end), `abort` its crit_restart; registered with
  // `rfc_region`, never armed, no signature, version or flags
  // (reference/rfc2015.md "ABI").
  bool region = false;
  SourceLoc loc;
  friend bool operator==(const CsDescriptor& a, const CsDescriptor& b);  // ignores loc
};

struct Function {
  std::string name;
  uint32_t first = 0;  // global index of its first instruction
  uint32_t count = 0;  // number of instructions
  std::vector<Label> labels;
  SourceLoc loc;
  friend bool operator==(const Function& a, const Function& b);  // ignores loc
};

enum class Width : uint8_t { kU64 = 8, kU32 = 4 };

// A named data object. A plain symbol is `count` elements of `width` bytes. A
// per-CPU symbol has one such block per CPU, `stride` bytes apart (stride >=
// count*width, default rounded up to 64 bytes), indexed in properties as
// `sym[cpu]` (count == 1) or `sym[cpu][i]`.
struct Symbol {
  std::string name;
  Width width = Width::kU64;
  uint32_t count = 1;
  bool per_cpu = false;
  uint64_t stride = 0;          // per_cpu only; bytes between CPU blocks
  std::vector<int64_t> init;    // element initial values; shorter => rest repeat the last (empty => 0)
  uint64_t address = 0;         // assigned by Program::Layout()
  uint64_t size_bytes = 0;      // assigned by Program::Layout()
  SourceLoc loc;
  friend bool operator==(const Symbol& a, const Symbol& b);  // ignores loc
};

// The code and data of a scenario.
struct Program {
  std::vector<Instr> code;            // all functions, concatenated
  std::vector<Function> functions;
  std::vector<CsDescriptor> descriptors;
  std::vector<Symbol> symbols;
  std::vector<std::string> strings;   // observe names, assert messages
  // Per code index, the machine instruction it was lifted from ("ADDR:  BYTES
  // MNEMONIC", objdump -d style) at the first IR instruction of each; empty
  // for code written in the IR (import/lift.h fills it).
  std::vector<std::string> origin;

  int FindFunction(const std::string& name) const;    // -1 if absent
  int FindSymbol(const std::string& name) const;      // -1 if absent
  int FindDescriptor(const std::string& name) const;  // -1 if absent
  // Function containing global instruction index `i` (-1 if none).
  int FunctionOf(uint32_t i) const;
  // "func+off" / "func:label" rendering of a global instruction index.
  std::string DescribeIndex(uint32_t i) const;

  friend bool operator==(const Program& a, const Program& b) = default;
};

const char* OpName(Op op);
const char* RseqFieldName(RseqField f);
const char* CmpName(CmpKind c);  // "==", "!=", "<", ... ("<u" for unsigned)

}  // namespace rseqmc

#endif  // RSEQMC_SIM_IR_H_
