// x86-64 JIT of region programs for the real-kernel cross-check (DESIGN.md §2
// "JIT invariant", §7).
//
// Each IR instruction i compiles to a block of x86-64 code:
//
//     B_i: [F_i: mov [rbx], rax ; xor ecx, ecx   only if i-1 ends with `syscall`]
//          [abort stub, only if i is some descriptor's abort label]
//     L_i: dec r14 ; jnz 1f ; int3 ; 1:           (step countdown; `traps` only)
//          [append i to the thread's IR trace]      (`ir_trace` only)
//          body: loads into scratch registers, then ONE last instruction with
//          the instruction's effect (the store, the arming store, the register
//          write, the jump, the syscall...)
//
// so an event at any x86 boundary inside block i is equivalent to an event at
// the IR boundary before i (loads linearise at the x86 load; an async event
// between a load and the register write is the event after i). `observe`
// writes the thread's record, which its signal handlers share (the slot, then
// the count): a handler that interrupts it first moves the interrupted
// context back to L_i (RewindUnfinishedObserve(), tracer.h), so that the
// signal lands at the IR boundary. The injection address of IR instruction i
// is L_i, its first x86 instruction.
//
// Kernel calls (all but getcpu) end their block with the `syscall`
// instruction itself, so the address the kernel's exit-to-user work sees (the
// rseq fix-up of rseq_handle_notify_resume(), signal delivery) is B_{i+1}, the
// IR boundary after the call, as in the simulator (Machine::ExecSyscall runs
// that work with pc = i+1). The result in rax becomes r0 at F_{i+1}; the
// other paths of such a block (an argument the call refuses) jump there with
// the result in rax. An abort at that return skips F_{i+1}: the abort stub
// stores r0 when rcx (the `syscall` instruction's return address) is an
// F_i, as rax holds the result at abort_ip on the kernel and the simulator
// writes r0 before the fix-up.
//
// A descriptor's start_ip is B_start (the boundary before `start`: F_start
// and the abort stub of `start` lie in the section), post_commit_offset ends
// at B_post, abort_ip is the abort label's stub. So an abort label equal to
// `start` gives an abort_ip inside the section, which rseq_get_rseq_cs()
// (kernel/rseq.c) refuses with SIGSEGV, as the simulator's 6.x model does.
//
// Memory: a program's load/store/atomic may access its data symbols
// [kDataBase, end of the last symbol) and the rseq areas, as in the
// simulator (Machine::UserMemOk). An access to the simulator's address of
// thread k's area (computed from a symbol's address; `rseq_addr` gives the
// real one) goes to thread k's real area (ThreadRecord::rseq_area); one past
// the last symbol anywhere else in the data mapping (whose page tail would not
// fault, and where the simulator keeps its descriptors) goes to address 0,
// so that the access instruction itself raises SIGSEGV.
//
// Machine state mapping:
//   * IR registers r0..r15 live in a `JitContext` in memory; rbx points to it
//     for the whole run (a signal handler gets a fresh JitContext, r1 = signo,
//     as the simulator's handler context);
//   * r14 is the step countdown: every block decrements it and traps (int3)
//     when it reaches 0, so a tracer can stop a thread at its n-th IR
//     instruction without single-stepping (each ptrace stop is a preemption,
//     reference/inject-prototype.md §4, so stops must be exactly the schedule's);
//   * data symbols live at the simulator's addresses (kDataBase...), mapped
//     MAP_SHARED so the tracer reads the final memory directly;
//   * `struct rseq` is the thread's real registration (glibc's, at
//     fs:__rseq_offset; our own thread_local one where glibc did not register),
//     read with fs-relative loads; `struct rseq_cs` descriptors live in a
//     read-only page, 32-byte aligned (include/uapi/linux/rseq.h);
//   * the signature word: `sig` compiles to `jmp rel8` over its 4-byte
//     immediate, so when it precedes an abort label the 4 bytes before abort_ip
//     are exactly the IR's signature (kernel/rseq.c rseq_ip_fixup() checks them);
//   * abort_ip is a stub that counts the abort for the thread and falls into
//     the abort label's block (the IR trace then shows where it landed); plain
//     jumps to the label skip the stub.
// Code is written RW, then mapped RX (W^X).
//
// Original-bytes mode (JitOptions::original_code; issue 16): the imported
// functions (Scenario::original, sim/original_code.h) run as the machine code
// of their ELF file, mapped at its run addresses, not as the JIT of their
// lifted IR. An IR `call` of one is a bridge block: it loads the System V
// caller-saved registers (rax, rcx, rdx, rsi, rdi, r8-r11) from the IR
// registers of the same number (import/lift.h's numbering), calls the entry,
// and stores them back; rbx and r14 survive (callee-saved; code that uses
// them is refused: OriginalCode's not_runnable). The original code has no
// step countdown and no IR trace: the tracer stops it at machine-instruction
// boundaries with hardware breakpoints (kernel/harness/tracer.h).
//
// Differences from the simulator that are documented rather than modelled
// (none occurs in the built-in scenarios): `rseq_addr` gives the real area's
// address; x86
// is TSO, so store-buffering outcomes the SC simulator cannot produce can occur
// between CPUs (the built-ins use rseq, locked instructions or migrations, all
// ordering).
#ifndef RSEQMC_KERNEL_HARNESS_JIT_H_
#define RSEQMC_KERNEL_HARNESS_JIT_H_

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "sim/scenario.h"

namespace rseqmc::harness {

// Observations stored per thread by default (JitOptions::observation_slots);
// more are counted, not stored, and the run is reported as a harness limit.
inline constexpr uint32_t kDefaultObservationSlots = 1u << 16;

// One stored observation: the `observe` label's string id and the value.
struct ObservationSlot {
  uint32_t id;
  uint32_t pad;
  int64_t value;
};

// Per-thread results, in memory shared between tracee and tracer.
struct ThreadRecord {
  int64_t ret = 0;             // r0 when the entry function returned
  uint32_t exited = 0;         // 1 once the entry function returned
  int32_t final_cpu = -1;      // getcpu(2) at exit (internal::ThisThreadCpu())
  uint64_t aborts = 0;         // rseq aborts landed (abort stubs executed)
  int32_t tid = 0;             // kernel thread id (for tgkill and the tracer)
  uint32_t assert_failed = 0;  // 1: an assert failed at assert_pc
  uint32_t assert_pc = 0;
  uint32_t num_observed = 0;   // observations made (may exceed obs_capacity; only that many are stored)
  uint32_t obs_capacity = 0;   // ObservationSlots at obs_begin
  uint64_t obs_begin = 0;      // address of this thread's observation slots (in the shared area)
  uint64_t trace_pos = 0;      // address of the next IR trace slot (u32 each)
  uint64_t trace_end = 0;      // one past the last slot
  uint64_t trace_begin = 0;
  // Original-bytes mode: the abort_ip of an abort the tracee's signal wrapper
  // counted (the handler ran before the thread reached abort_ip; see
  // tracer.h), so that the tracer's breakpoint there does not count it again.
  uint64_t handler_abort_ip = 0;
  // The thread's real struct rseq (JitProgram::ThisThreadRseqArea()), set by
  // its wrapper before its first instruction: where the JIT sends an access
  // to the simulator's address of this thread's area (jit.h "Memory").
  uint64_t rseq_area = 0;
};

// The IR register file of one context (main or signal handler); rbx points here.
struct JitContext {
  int64_t r[16] = {};
  ThreadRecord* rec = nullptr;
  uint64_t call_depth = 0;     // IR call depth (the simulator kills at kMaxCallDepth)
};

struct JitOptions {
  bool traps = true;     // emit the step countdown + int3 (tracer-driven runs)
  bool ir_trace = true;  // record executed IR instructions (deterministic mode)
  // Keep every thread pinned to one CPU: a program's sched_setaffinity(mask)
  // becomes sched_setaffinity({c}) with c = the current CPU if the mask holds
  // it, else the lowest CPU of the mask (the simulator's choice, documented in
  // sim/machine.cc). With a wider mask the kernel may move the thread at any
  // wakeup (each ptrace resume is one), which the simulator never does. Off
  // in stress mode, where the real masks are the point.
  bool pin_affinity = true;
  // Observations stored per thread (16 bytes each, in the shared area; pages
  // are only touched when used). A thread that makes more has the surplus
  // counted in ThreadRecord::num_observed but not stored.
  uint32_t observation_slots = kDefaultObservationSlots;
  // Run the imported functions' original machine code (see above) instead of
  // the JIT of their lifted IR. Requires OriginalCodeUnavailableReason() == "".
  bool original_code = false;
};

// Why the scenario's imported functions cannot run as original bytes ("" if
// they can): it imports nothing, a thread's entry or a signal handler is an
// imported function (the harness enters those with its own calling
// convention), or an imported function is not runnable
// (OriginalFunction::not_runnable).
std::string OriginalCodeUnavailableReason(const Scenario& s);

// Where the JIT'd process keeps results: one ThreadRecord per scenario thread,
// the tid table, each thread's IR trace buffer and observation slots.
struct SharedArea {
  int32_t tgid = 0;
  int32_t ipi_request = 0;     // helper thread: 1 = run membarrier(RSEQ) on ipi_cpu, 2 = exit
  int32_t ipi_helper_tid = 0;  // the helper's thread id (0: none)
  int32_t hold_last = 0;       // tracer: 1 = the last thread to return traps again instead of exiting
  int32_t ipi_cpu = -1;
  int32_t ipi_done = 0;
  int32_t ipi_result = 0;
  ThreadRecord* threads = nullptr;  // num_threads records (inside this area)
};

// A compiled program. Owns the code, descriptor and data mappings; at most one
// exists per process (the data symbols are mapped at their fixed simulator
// addresses). Throws HarnessError when the mappings cannot be made.
class JitProgram {
 public:
  // `trace_slots`: IR trace capacity per thread (u32 entries).
  JitProgram(const Scenario& s, JitOptions opts, uint32_t trace_slots = 1u << 16);
  ~JitProgram();
  JitProgram(const JitProgram&) = delete;
  JitProgram& operator=(const JitProgram&) = delete;

  const Scenario& scenario() const { return s_; }
  const JitOptions& options() const { return opts_; }

  // Resets data memory to the scenario's initial values and clears the
  // shared records; the IR trace and observation buffers are emptied (their
  // positions reset), not zeroed.
  void ResetState();

  // Runs IR function `func` on the calling thread with context `ctx` (whose
  // rec must be set) and step countdown `countdown` (steps until the trap + 1;
  // use a huge value when no trap is wanted). Returns the countdown left.
  int64_t Call(uint32_t func, JitContext* ctx, int64_t countdown) const;

  // Address of IR instruction i's first x86 instruction (L_i); i == code size
  // gives the end of the code. In original-bytes mode, for an IR instruction
  // of an imported function: the address of the original machine instruction
  // it starts, or 0 when it is not the first IR instruction of one.
  uint64_t InstrAddress(uint32_t i) const { return instr_addr_[i]; }
  // True when IR instruction i runs as original machine code (original-bytes
  // mode, i in an imported function): it has no countdown and no IR trace.
  bool RunsOriginal(uint32_t i) const { return i < original_.size() && original_[i]; }
  // The run addresses of the imported descriptors' abort_ip (original-bytes
  // mode; duplicates removed), where the tracer counts aborts.
  const std::vector<uint64_t>& original_abort_ips() const { return original_abort_ips_; }
  // Address of IR instruction i's body (after the countdown and IR-trace
  // prologue): [BodyAddress(i), BlockEnd(i)) is the code with its effect.
  uint64_t BodyAddress(uint32_t i) const { return body_addr_[i]; }
  // B_i, the start of IR instruction i's block (F_i, its abort stub, L_i):
  // the boundary before i, a descriptor's start_ip when i is its start.
  uint64_t BlockStart(uint32_t i) const { return block_addr_[i]; }
  uint64_t BlockEnd(uint32_t i) const { return block_addr_[i + 1]; }
  // IR instruction whose block [B_i, B_{i+1}) contains `addr`; in
  // original-bytes mode also the first IR instruction of the original machine
  // instruction starting at `addr`; -1 if none.
  int IndexOf(uint64_t addr) const;
  uint64_t abort_ip(uint32_t d) const;     // descriptor d's abort_ip (its stub)
  uint64_t descriptor_address(uint32_t d) const;
  // The tracer's "pause without preempting" stub: with rip := stub and
  // rsp := rsp - 16, [rsp] = a value, [rsp + 8] = an address, it stores the
  // value into rseq->rseq_cs, restores rsp and continues at the address,
  // changing no register and no flag (the thread may be stopped in the middle
  // of a block, e.g. after a syscall, with live scratch registers). The two
  // words live on the thread's stack so that a signal delivered on resume
  // (its frame then returns to the stub) cannot lose them.
  uint64_t rearm_stub() const { return rearm_stub_; }
  // int3 addresses: a thread finished (its wrapper calls this) / an assert failed.
  uint64_t done_trap() const { return done_trap_; }
  uint64_t assert_trap() const { return assert_trap_; }
  void DoneTrap() const;  // executes the done trap (int3) on the calling thread
  // True when a thread interrupted at `rip` (a signal frame's saved rip) has
  // its step countdown in r14 ("Machine state mapping" above): in the IR
  // blocks and their stubs (abort, re-arm, assert, call-stack overflow), in
  // the imported original code (r14 survives it: OriginalCode's
  // not_runnable), and in the trampoline from its `mov r14, rdx` up to its
  // `mov rax, r14` that returns the countdown. Anywhere else (the rest of
  // the trampoline, the done trap, which the harness's C++ wrapper calls
  // after the program returned, any address outside the JIT code) r14 is the
  // interrupted C++ code's own callee-saved register: a signal handler must
  // neither take it for a countdown nor change it.
  bool HoldsCountdown(uint64_t rip) const;

  // Shared results (MAP_SHARED: visible in the parent after the child wrote them).
  SharedArea* shared() const { return shared_; }
  ThreadRecord* record(int t) const { return shared_->threads + t; }
  // Final data memory, as the simulator lays it out (byte i at kDataBase + i).
  std::vector<uint8_t> ReadMemory() const;
  // The IR trace recorded by thread t.
  std::vector<uint32_t> IrTrace(int t) const;
  // Its capacity per thread (IR instructions); a full trace may have lost the
  // instructions past it.
  uint32_t trace_slots() const { return trace_slots_; }

  // The offset of struct rseq from the thread pointer (glibc's __rseq_offset,
  // or ours), and the registered length.
  static int64_t RseqOffset();
  static uint32_t RseqLength();
  // Makes sure the calling thread has an rseq registration (glibc's or ours);
  // returns false with *why when rseq is unavailable.
  static bool EnsureRseqRegistered(std::string* why);
  // The calling thread's struct rseq address (thread pointer + RseqOffset()).
  static uint64_t ThisThreadRseqArea();

  size_t code_bytes() const { return code_bytes_; }
  // True if `addr` is in the JIT'd code (blocks, stubs, trampoline) or, in
  // original-bytes mode, in the mapped original code.
  bool Contains(uint64_t addr) const;
  // True if `addr` is in the mapped original code (original-bytes mode).
  bool InOriginalCode(uint64_t addr) const;
  // Human-readable listing: IR instruction, its x86 range (for reports).
  std::string Listing() const;

 private:
  void Compile();
  void MapOriginalCode();
  void UnmapOriginalCode();

  const Scenario& s_;
  JitOptions opts_;
  uint32_t trace_slots_;
  std::vector<uint64_t> block_addr_;  // B_i, size code+1
  std::vector<uint64_t> instr_addr_;  // L_i, size code+1
  std::vector<uint64_t> body_addr_;   // after the prologue, size code
  std::vector<uint64_t> abort_stub_;  // per descriptor
  uint64_t rearm_stub_ = 0, done_trap_ = 0, assert_trap_ = 0, trampoline_ = 0;
  // [countdown_from_, countdown_to_): the trampoline's instructions that run
  // with the countdown in r14 (HoldsCountdown()).
  uint64_t countdown_from_ = 0, countdown_to_ = 0;
  std::vector<uint64_t> func_addr_;
  void* code_ = nullptr;
  size_t code_bytes_ = 0, code_map_bytes_ = 0;
  void* desc_ = nullptr;
  size_t desc_bytes_ = 0;
  void* data_ = nullptr;
  size_t data_bytes_ = 0, data_used_ = 0;
  std::vector<uint8_t> data_init_;
  SharedArea* shared_ = nullptr;
  size_t shared_bytes_ = 0;
  // Original-bytes mode.
  std::vector<bool> original_;                      // per IR instruction
  std::map<uint64_t, uint32_t> original_index_;     // machine address -> first IR instruction
  std::vector<uint64_t> original_abort_ips_;
  std::vector<std::pair<void*, size_t>> original_maps_;  // mappings of the segments
};

// The error type of the harness (mapping failures, ptrace failures...).
class HarnessError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

}  // namespace rseqmc::harness

#endif  // RSEQMC_KERNEL_HARNESS_JIT_H_
