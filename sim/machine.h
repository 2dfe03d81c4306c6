// The state of one execution and the kernel model that changes it.
//
// Machine holds simulated memory, the threads (register contexts, signal frames,
// rseq registration), the virtual CPUs with their run queues, and implements the
// rseq rules of reference/rseq-semantics.md §7 for the legacy kernels (see
// sim/kernel_model.h). The interpreter (Machine::Interpret) runs on the thread's
// fiber; Simulator (sim/simulator.h) owns the fibers and drives executions.
//
// Schedulers see a Machine through ChoiceView and may read anything public here;
// only the simulator mutates it.
#ifndef RSEQMC_SIM_MACHINE_H_
#define RSEQMC_SIM_MACHINE_H_

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstring>
#include <exception>
#include <functional>
#include <optional>
#include <utility>
#include <string>
#include <vector>

#include "sim/footprint.h"
#include "sim/ir.h"
#include "sim/kernel/abi.h"
#include "sim/kernel_model.h"
#include "sim/scenario.h"
#include "sim/scheduler.h"
#include "sim/simulator.h"
#include "sim/state_hash.h"

namespace rseqmc {

class FiberPool;
class ThreadApi;

inline constexpr int kMaxCallDepth = 32;
inline constexpr int kMaxSignalDepth = 4;  // nested handler frames per thread
// Bytes a load/store/atomic instruction accesses in data memory (ld32/st32:
// 4; ld, st, cas, xadd, xchg: 8): the width the memory rule checks, in the
// simulator (Machine::UserMemOk) and in the JIT (kernel/harness/jit.h).
inline constexpr int AccessBytes(Op op) { return (op == Op::kLd32 || op == Op::kSt32) ? 4 : 8; }
// Pseudo code index of a native (C++) thread's own code: never inside a section.
inline constexpr uint32_t kNativePc = 0xFFFFFFFFu;

// One user-mode register context: the thread's main context, or a signal
// handler's (which starts with fresh registers, r1 = signal number).
struct Context {
  std::array<int64_t, kNumRegs> r{};
  uint32_t pc = 0;              // global instruction index of the next instruction
  uint32_t call_depth = 0;
  std::array<uint32_t, kMaxCallDepth> ret_stack{};  // return indices
  int signo = 0;                // signal being handled (handler contexts)
  uint32_t saved_blocked = 0;   // blocked mask to restore at sigreturn
};

// kRunnable: running on its CPU or in its run queue. kBlocked: in FUTEX_WAIT on
// futex_addr (not in any run queue; a FUTEX_WAKE of that word or a signal wakes
// it). kSleeping: in nanosleep until the simulated clock reaches wake_at_ns.
// kExited: returned from its entry function.
enum class ThreadState : uint8_t { kRunnable, kBlocked, kSleeping, kExited };

// rseq_event_mask bits of the legacy kernel (RSEQ_EVENT_PREEMPT/SIGNAL/MIGRATE).
inline constexpr uint8_t kEventPreempt = 1;
inline constexpr uint8_t kEventSignal = 2;
inline constexpr uint8_t kEventMigrate = 4;

struct SimThread {
  int id = 0;
  ThreadState state = ThreadState::kRunnable;
  int cpu = 0;                  // CPU it runs on or is queued on
  uint64_t affinity = ~0ull;
  bool native = false;          // C++ body
  bool in_native_ir = false;    // native body currently running an IR call (ThreadApi::CallIr)
  // rseq registration (0 area = unregistered)
  uint64_t rseq_area = 0;
  uint32_t rseq_len = 0;
  uint32_t rseq_sig = 0;
  uint8_t event_mask = 0;       // task->rseq_event_mask (legacy ABIs)
  // 6.19 (sim/kernel/abi_6_19.cc): task->rseq.event.sched_switch / user_irq,
  // and the IDs last written to the area (task->rseq.ids; cpu -1 = none yet).
  bool rseq_sched_switch = false;
  bool rseq_user_irq = false;
  int32_t rseq_ids_cpu = -1;
  int32_t rseq_ids_mm_cid = -1;
  bool notify_resume = false;   // TIF_NOTIFY_RESUME: evaluate rseq before user code runs
  bool chosen = false;          // its fiber was started by a boundary that already chose it
  int32_t mm_cid = -1;
  // t->last_mm_cid (6.4-6.18): the ID it held when it last ran, -1 after
  // exit or when sched_mm_cid_migrate_to() decided not to move it.
  int32_t last_mm_cid = -1;
  // 2015 RFC (sim/kernel/rfc2015.cc): the thread's CPU pointer, the user
  // address of a u32 the kernel writes the CPU number to (0 = none).
  uint64_t rfc_cpu_ptr = 0;
  // The preempt-lock scheme (sim/kernel/preempt_lock.h): the registered flag
  // word's address (0 = none) and signal; the check requested by a
  // switch-out (PL1); the pending signal was sent by PL2/PL4 (its siginfo
  // carries the flag's address).
  uint64_t preempt_lock_flag = 0;
  uint8_t preempt_lock_signo = 0;
  bool preempt_lock_notify = false;
  bool preempt_lock_siginfo = false;
  uint64_t futex_addr = 0;      // kBlocked: the futex word waited on
  uint64_t wait_seq = 0;        // kBlocked: FIFO position among the futex's waiters (smaller = earlier)
  uint64_t wake_at_ns = 0;      // kSleeping: simulated time (ns) at which the sleep ends
  uint32_t pending = 0;         // pending signals (bit = signo)
  uint32_t blocked = 0;         // blocked signals
  int depth = 0;                // index of the running context in ctx
  std::array<Context, kMaxSignalDepth + 1> ctx;

  Context& cur() { return ctx[depth]; }
  const Context& cur() const { return ctx[depth]; }
};

// 2015 RFC (sim/kernel/rfc2015.cc): one registered region [start, end) with
// its restart address (code addresses), and the process-wide state kept by
// the thread-group leader: the regions sorted by start, and whether any thread
// has set a CPU pointer (after which op 0 fails with EBUSY).
struct RfcRegion {
  uint64_t start = 0, end = 0, restart = 0;
  friend bool operator==(const RfcRegion&, const RfcRegion&) = default;
};
struct RfcProcess {
  std::vector<RfcRegion> regions;
  bool cpu_ptr_set = false;
};

struct SimCpu {
  int running = -1;                 // thread id, -1 = idle
  std::vector<int32_t> queue;       // FIFO run queue (thread ids), excluding `running`
  // Machine::steps() since which this CPU, not the default CPU, has waited
  // to run its thread: when the default moved away from it, or when a thread
  // arrived on it while it was idle (Machine::LastRanStep).
  uint64_t ran_until = 0;
};

// Fairness across CPUs of the default continuation (Machine::Decide): a CPU
// whose thread has waited this many steps while other CPUs ran becomes the
// default CPU. Real CPUs run in parallel; a default that stayed on one CPU
// would run threads there that wait with sched_yield() or spin for a thread
// runnable on another CPU forever, and the step budget would call that a
// livelock that no real machine has (tests/data/yield_wait_remote_holder.rsq).
// 1,000 steps: far longer than any critical section or commit sequence of
// the built-in scenarios (so short executions are unchanged), far shorter
// than the budget's 50,000-step window (so the window sees every CPU run
// about 50 times). Capped at max_steps / 4 for small budgets (FairWaitSteps).
inline constexpr uint64_t kFairWaitSteps = 1000;

// The state of an all-IR execution at one boundary, before the scheduler's
// choice there (Machine::Save / Machine::ResumeFrom). Exhaustive search keeps
// one per node of its path and continues from the deepest node it backtracks
// to, instead of replaying the path from the initial state. Buffers are reused
// when a checkpoint is saved again.
struct MachineCheckpoint {
  bool valid = false;
  std::vector<uint8_t> memory;
  std::vector<SimThread> threads;     // contexts above each thread's depth are not copied
  std::vector<SimCpu> cpus;
  RfcProcess rfc;
  struct Out {
    bool exited = false;
    int64_t ret = 0;
    uint32_t aborts = 0;
    uint32_t final_cpu = 0;
    size_t observed = 0;
  };
  std::vector<Out> out;
  size_t schedule = 0, trace = 0, accesses = 0, extra_strings = 0;
  int last_cpu = 0, live_threads = 0;
  uint64_t steps = 0, boundary = 0;
  MmCidState mmcid;
  uint32_t events[kNumDecisionKinds] = {};
  uint32_t total_events = 0;
  uint64_t now_ns = 0, wait_seq = 0, wakes = 0;
  uint64_t mid_wakes = 0, mid_observed = 0;
  int mid_live = 0;
  bool mid_taken = false;
  std::vector<uint8_t> mid_memory;
  uint64_t fair_check = 0, window_max_wait = 0;
  bool default_waiting = false;
  // Machine::memory_hash() of `memory`, if the machine kept it when saving
  // (Scheduler::WantsStateHash); else ResumeFrom computes it when needed.
  std::optional<MemoryHash> memory_hash;
};

// Whether an instruction's step touches only its thread's registers
// (Machine::NextStepIsThreadLocal), by opcode: always, never, or depending on
// the thread's state (a call within kMaxCallDepth, a passing assert, a ret
// inside a function).
enum class LocalOp : uint8_t { kNever, kAlways, kDepends };

class Machine {
 public:
  Machine(const Scenario& s, const RunOptions& options);
  ~Machine();

  // ---- read-only state (schedulers, tests, reports) ----
  const Scenario& scenario() const { return s_; }
  int num_cpus() const { return num_cpus_; }
  int num_threads() const { return static_cast<int>(threads_.size()); }
  const SimThread& thread(int t) const { return threads_[t]; }
  const SimCpu& cpu(int c) const { return cpus_[c]; }
  // The CPU whose thread a default decision runs (Decide): the CPU that ran
  // the previous instruction, unless another CPU's thread has waited
  // FairWaitSteps(); then the CPU that has waited longest.
  int default_cpu() const { return last_cpu_; }
  // The step count at which CPU c last ran an instruction (steps() for the
  // default CPU), or since which its thread waits (SimCpu::ran_until).
  uint64_t LastRanStep(int c) const {
    return c == last_cpu_ && !default_waiting_ ? steps_ : cpus_[c].ran_until;
  }
  // kFairWaitSteps, or max_steps / 4 if smaller (at least 1): the longest a
  // CPU with a runnable thread waits under the default continuation, plus
  // one step per other CPU starved at the same time.
  uint64_t FairWaitSteps() const;
  uint64_t steps() const { return steps_; }
  // The simulated clock in ns (sim/blocking.cc: it moves only when every CPU is idle).
  uint64_t now_ns() const { return now_ns_; }
  // Index of the boundary being decided (the n-th Choose call or promised
  // default of this execution, from 0).
  uint64_t boundary() const { return boundary_; }
  uint32_t events(DecisionKind k) const { return events_[static_cast<int>(k)]; }
  uint32_t total_events() const { return total_events_; }
  bool IsValid(const Decision& d) const;
  // Reads simulated memory (0 if outside); for schedulers and tests.
  // (Inline: the kernel model's hooks read the rseq area with it at every
  // return to user space.)
  uint64_t Peek(uint64_t address, int bytes) const {
    if (mem_ == nullptr || !MemOk(address, bytes)) return 0;
    return Load(address, bytes);
  }
  // Address of the descriptor / thread rseq area in data memory.
  uint64_t DescriptorAddress(uint32_t d) const { return desc_base_ + kRseqCsBytes * d; }
  uint64_t AreaAddress(int t) const { return area_base_ + kRseqAreaBytes * t; }
  // True once an instruction of any execution of this machine loaded bytes of
  // a thread's rseq-area mm_cid field with a plain memory access (ld, ld32,
  // cas, xadd, xchg at a computed address) rather than `rseq_load mm_cid`:
  // exploration that assumed mm_cid unreadable must then start again
  // treating it as readable (model/explorer.cc). Never reset.
  // The mm's concurrency-ID allocator state, written only by the ABI's
  // mm_cid hooks (sim/kernel/abi.h).
  MmCidState& mmcid() { return mmcid_; }
  // The thread running on `cpu` (rq->curr of the process), or -1.
  int cpu_running(int cpu) const { return cpus_[cpu].running; }
  // atomic_read(&mm->mm_users) as the allocator sees it: the threads that
  // have not exited (exit_mm() drops the reference before the exiting
  // thread's CPU switches to the next one).
  int mm_users() const;
  bool mm_cid_loaded() const { return mm_cid_loaded_; }
  // True if a load, store or atomic of the program (not rseq_load or
  // rseq_arm) has touched the rseq areas' region since this machine was made
  // (through rseq_addr or an address computed otherwise): the exhaustive
  // strategies' ample sets assume that only a thread's own rseq_load and
  // rseq_arm reach its area (NextStepIsIndependent's `areas_private`) and
  // start over without that assumption when this turns true.
  bool area_accessed() const { return area_accessed_; }
  // True if a store or atomic of the program (an IR instruction or a C++
  // thread's ThreadApi call; not rseq_arm, not the kernel) has written into
  // the rseq_cs word of any thread's rseq area since this machine was made.
  // Where the exhaustive strategies offer an event on thread t depends on t's
  // rseq_cs and the descriptor it points to (IpMayRestart via
  // KernelAbi::InRseqCs); DPOR's dependence relation assumes both change
  // only by t's own transitions (rseq_arm: static descriptors) and starts
  // over with them in every transition's footprint when this turns true
  // (model/explorer.cc, RseqCsWrittenByStores).
  bool rseq_cs_stored() const { return rseq_cs_stored_; }
  // Notes a program store of `bytes` at `addr` (rseq_cs_stored()).
  void NoteAreaStore(uint64_t addr, int bytes) {
    if (addr + static_cast<uint64_t>(bytes) > area_base_) [[unlikely]] {
      NoteRseqCsStore(addr, bytes);
    }
  }
  // True if thread t's running context is at an instruction inside the section
  // that its rseq_cs currently points to.
  bool InCriticalSection(int t) const;
  // Events only where they can matter (issue 18; sim/event_commute.cc has
  // the argument). The per-instruction facts the exhaustive strategies of
  // model/explorer.cc use to inject an event at one representative of each
  // class of equivalent positions.
  //
  // True if thread t's next step reads and writes only t's own registers
  // (li, mov, the ALU ops, la, branches, jmp, a call within kMaxCallDepth, a
  // ret inside a function, sig, nop, fence, a passing assert, getcpu,
  // rseq_addr), t has no kernel work pending on return to user space
  // (notify-resume, the preempt-lock check, an unblocked pending signal), and
  // the step does not end the process (NextStepEndsProcess). No other
  // thread's transition reads or writes anything such a step touches, so it
  // commutes with all of them.
  bool NextStepIsThreadLocal(int t) const;
  // True if injected event `kind` on thread t here (`signo` for kSignal,
  // else ignored) reaches exactly the final states of the same event at t's
  // next boundary, after t's next step. `later_events`: the bounds may let
  // another injected event hit t before that step (a migration would change
  // what getcpu reads). Requires NextStepIsThreadLocal(t); the step must not
  // read t's CPU when the event or a later one can move t (getcpu before
  // kMigrate, a kSignal whose handler may migrate, or any later event); no
  // handler the event can run may read the interrupted context (a
  // sigctx_restart reachable from the signal's handler, or from the
  // preempt-lock signal of a thread registered for it, whose switch-out
  // sends it: sim/kernel/preempt_lock.h PL1-PL4); and neither t's current
  // instruction nor any the step may go to may be restarted
  // (IpMayRestart). False for an event that is not injectable (kStep).
  bool EventCommutesWithNextStep(int t, DecisionKind kind, int signo, bool later_events) const;
  // The same for a preemption, migration or IPI before a step that is not
  // thread-local but NextStepIsLoneMemoryAccess(t) (rule (a') of
  // sim/event_commute.cc). Depends on whether other threads live, not on t's
  // own state alone: DPOR's event plans count positions without it.
  bool EventCommutesWithLoneMemoryStep(int t, DecisionKind kind, int signo, bool later_events) const;
  // True if thread t is the only live thread and its next step is a load,
  // store or atomic of data memory below the rseq areas that completes (no
  // fault), with no signal pending, no rseq notify-resume work, no 2015-RFC
  // CPU pointer and no preempt-lock flag registered (words the kernel writes
  // or reads at a switch), and not into the 32-byte struct rseq_cs its
  // rseq_cs points to (a descriptor built in data memory, which the kernel
  // reads at the event): nothing but t can read or write memory, and a
  // preemption, migration or IPI writes only t's rseq area.
  bool NextStepIsLoneMemoryAccess(int t) const;
  // NextStepIsThreadLocal's classification of opcode `op`.
  static LocalOp ClassifyLocalOp(Op op);
  // True if the boundary before thread t's next step may be taken without
  // asking the scheduler whose Scheduler::local_boundaries is `mode`: t's next
  // step is thread-local and, unless `mode` is kNoEvents, every event the
  // scheduler may inject on t here is equivalent to the same event at t's
  // next boundary (EventCommutesWithNextStep for the most restrictive kind, a
  // migration with more events to come; and no signal handler of the
  // scenario reads the interrupted context). Always false for kAsked.
  // The argument is in sim/event_commute.cc and sim/scheduler.h.
  // (Inline: asked at every boundary of a random execution. The per-opcode
  // facts come from a table made once per program; LocalBoundaryIsFreeByRule
  // is the definition, tests/random_local_boundaries_test.cc checks they
  // agree.)
  bool LocalBoundaryIsFree(int t, Scheduler::LocalBoundaries mode) const {
    if (mode == Scheduler::LocalBoundaries::kAsked) return false;
    const SimThread& th = threads_[t];
    if (th.notify_resume || th.preempt_lock_notify || (th.pending & ~th.blocked) != 0) return false;
    const uint32_t pc = th.cur().pc;
    if (pc >= code_size_) return false;  // also kNativePc
    const uint8_t f = free_at_[pc];
    if (mode == Scheduler::LocalBoundaries::kNoEvents) {
      if (f & kFreeWithoutEvents) return true;
    } else if (f & kFreeWithEvents) {
      return !AbiMayRestart(t, pc);
    }
    if (local_op_[pc] != LocalOp::kDepends) return false;
    // A call, ret or assert: the cases decided by the thread's state alone.
    const Op op = code_[pc].op;
    const uint32_t depth = th.cur().call_depth;
    if (op == Op::kRet && depth == 0) return false;  // thread exit or sigreturn
    if (op != Op::kAssert && mode == Scheduler::LocalBoundaries::kNoEvents) {
      return op == Op::kRet || depth < kMaxCallDepth;
    }
    return LocalBoundaryIsFreeByRule(t, mode);
  }
  bool LocalBoundaryIsFreeByRule(int t, Scheduler::LocalBoundaries mode) const;
  // True if thread t's next step commutes with every transition any other
  // thread can take, now or later (the C1 condition of the exhaustive
  // strategies' ample sets, model/explorer.cc). The step is either
  // NextStepIsThreadLocal(t), or, when `areas_private` (the caller knows that
  // no load or store of the program reaches an rseq area: area_accessed()),
  // an `rseq_load` or `rseq_arm`, which touch only t's own area, written and
  // read otherwise only by the kernel on t's own transitions; with no kernel
  // work pending and not ending the process either way. Where another thread
  // can interrupt t without t's doing (a `membarrier_rseq` IPI to t's CPU, a
  // `tgkill` of a signal to t, or any C++ thread, which may do either), that
  // interruption must reach the same final states at t's next boundary as
  // here: the rule of EventCommutesWithNextStep for kIpi and for each signal
  // a tgkill can send (not inside any critical section nor entering one, no
  // handler that reads the interrupted context, no read of t's CPU - getcpu,
  // rseq_load - when a handler may run first or the bounds still allow an
  // injected event on t: `later_events`). sim/event_commute.cc has the
  // argument.
  bool NextStepIsIndependent(int t, bool later_events, bool areas_private) const;
  // True if an event with thread t at instruction `pc` may move t's IP
  // there, now or before t steps again: `pc` lies in the range
  // [start, post_commit) of any descriptor of the program (a struct rseq_cs
  // that t or a handler may arm, a 2015-RFC region that may be registered)
  // or in what the ABI restarts now (KernelAbi::InRseqCs: the section t's
  // rseq_cs points to, or a registered region).
  bool IpMayRestart(int t, uint32_t pc) const;
  // True if signal `signo`'s handler, or a function it may call, contains
  // `sigctx_restart`: it reads the interrupted context's IP.
  bool HandlerReadsSigctx(int signo) const {
    return signo >= 0 && signo <= kMaxSignal && ((sigctx_handlers_ >> signo) & 1) != 0;
  }
  // True if thread t's next instruction, run now, would end the process: an
  // `assert` whose condition is false with t's current registers, a `call`
  // past kMaxCallDepth, or a pc past the end of the code. (Kernel work pending
  // on return to user space is not looked at.) Such a step stops every other
  // thread where it is (TouchEveryThread), so the exhaustive strategies must
  // let the other threads run before it (model/explorer.cc: StepIsLocal).
  bool NextStepEndsProcess(int t) const;
  // Node of a CPU.
  uint32_t NodeOf(int cpu) const;
  // Footprint of the transition that ended just before the current
  // Scheduler::Choose call (or before EndExecution). Only recorded when the
  // scheduler's WantsFootprints() is true.
  const Footprint& last_footprint() const { return fp_; }
  // 128-bit hash (XXH3-128) of the machine state at this boundary that can
  // still matter: memory, thread contexts and signal state, rseq
  // registrations and event masks, CPU run queues, the number of events
  // injected so far, and the observations made so far; for stateful search.
  // Memory enters as its MemoryHash (memory_hash(mm_cid) below: a sum of
  // per-word terms kept store by store while the scheduler WantsStateHash(),
  // so a state costs the few hundred bytes of the rest, not all of memory);
  // the rest is laid out as 64-bit words after it and hashed with Xxh3_128
  // (sim/state_hash.h).
  // What a caller knows cannot matter is left out, so that states differing
  // only there are merged:
  //   * mm_cid == false: the mm_cid allocation (each thread's mm_cid, the
  //     allocator, and the mm_cid field of each registered rseq area), for a
  //     program that cannot read mm_cid;
  //   * per-kind event counts are included only for the kinds whose bit
  //     (1 << DecisionKind) is set in `event_kinds` (those with a per-kind
  //     bound); the total is always included.
  // Meaningful only for scenarios whose threads are all IR.
  std::pair<uint64_t, uint64_t> StateHash(bool mm_cid = true, uint32_t event_kinds = ~0u) const;
  // MemoryHash (sim/state_hash.h) of data memory now, the part of StateHash
  // that covers memory (before the mm_cid masking): kept up to date store by
  // store while the scheduler WantsStateHash(), else computed from scratch.
  MemoryHash memory_hash() const { return mem_hash_on_ ? mem_hash_ : MemoryHashFromScratch(); }
  // The same with each registered rseq area's mm_cid field read as 0 unless
  // `mm_cid` (what StateHash hashes for memory).
  MemoryHash memory_hash(bool mm_cid) const { return mm_cid ? memory_hash() : MaskMmCid(memory_hash()); }
  // The same, always computed from the whole image (what tests compare the
  // incrementally kept hash with).
  MemoryHash MemoryHashFromScratch() const;
  // True while the machine keeps memory_hash() up to date at every store.
  bool memory_hash_incremental() const { return mem_hash_on_; }

  // ---- kernel primitives, for the ABI modules (sim/kernel/) only ----
  // The ABI of this run.
  const KernelAbi& abi() const { return *abi_; }
  SimThread& kthread(int t) { return threads_[t]; }
  // User memory as the kernel's get_user/put_user see it: readable if mapped
  // (data memory); loads and stores are recorded in the footprint.
  bool UserReadable(uint64_t addr, int bytes) const { return MemOk(addr, bytes); }
  uint64_t UserLoad(uint64_t addr, int bytes) {
    TouchMem(addr, bytes, false);
    return Load(addr, bytes);
  }
  void UserStore(uint64_t addr, uint64_t v, int bytes) {
    TouchMem(addr, bytes, true);
    Store(addr, v, bytes);
  }
  // Records a kernel access to user memory in the footprint only.
  void TouchUser(uint64_t addr, int bytes, bool write) { TouchMem(addr, bytes, write); }
  // What get_user() reads for the 4 bytes at `ip` (the signature before
  // abort_ip): a data word, a `sig` instruction's word, or - for any other
  // instruction and for an address inside an instruction - a word that is
  // no signature (the IR has no byte encoding; a real instruction's bytes
  // there are not the registered signature). Unreadable: EFAULT.
  struct CodeWordRead {
    bool readable = false;
    bool is_signature_word = false;  // value is meaningful
    uint32_t value = 0;
  };
  CodeWordRead ReadSignatureWord(uint64_t ip) const;
  // The user IP of thread t's running context.
  uint64_t UserIp(int t) const;
  // rseq_ip_fixup()'s abort: instruction_pointer_set(regs, abort_ip) for t
  // (whose rseq_cs was `cs`). An abort_ip that is not an instruction of the
  // program faults on the instruction fetch when t returns to user space:
  // SIGSEGV (returns false).
  bool AbortTo(int t, uint64_t abort_ip, uint64_t cs);
  // The 2015 RFC's restart: instruction_pointer_set(regs, crit_restart) for
  // t, whose IP is in the region that starts at `region_start` (for the
  // trace). No user memory is written. Counted and traced as an abort;
  // false (SIGSEGV) as AbortTo for an address that is no instruction.
  bool RestartTo(int t, uint64_t restart_ip, uint64_t region_start);
  // The process's 2015-RFC state (regions, whether a CPU pointer was set).
  // Every use records an access to it (TouchRfcProcess: a read by a lookup,
  // a write by a registration) at a kernel address no user access reaches,
  // so that partial-order reduction orders registrations with lookups only.
  RfcProcess& rfc_process() { return rfc_; }
  const RfcProcess& rfc_process() const { return rfc_; }
  void TouchRfcProcess(bool write) { TouchMem(kRfcProcessObject, 8, write); }
  static constexpr uint64_t kRfcProcessObject = 0xffffffffff600000ull;
  // send_sig() from the kernel to thread t (traced with `why`): pending
  // until its next return to user space, discarded if ignored.
  void SendSignal(int t, int signo, const std::string& why);
  // clear_rseq_cs() outside the section (recorded).
  void RecordLazyClear(int t);
  // force_sig(SIGSEGV) / force_sigsegv() for thread t with `reason`: the one
  // place where the ABI makes a thread take SIGSEGV.
  void ForceSigsegv(int t, const std::string& reason);
  // Writes thread t's current CPU (and, if node_and_mm_cid, node and mm_cid)
  // into its area: rseq_update_cpu_node_id() / rseq_set_ids().
  void WriteIds(int t, bool node_and_mm_cid);
  // Sharing one exploration between ABIs (sim/kernel/abi.h AbiRule): a hook
  // records the rules whose other value would have decided otherwise here.
  void NoteRuleSensitivity(uint32_t rule_bits) { rule_sensitivity_ |= rule_bits; }
  // A kernel write of `value` to the node_id or mm_cid word at `addr`, made
  // by an ABI that has the fields, or that one which has them would make
  // here: it matters (kRuleNodeAndMmCid) if it changes the word and the
  // program can read the word.
  void NoteIdsWrite(uint64_t addr, uint32_t value) {
    if (static_cast<uint32_t>(Peek(addr, 4)) != value) ids_write_changed_ = true;
  }
  // The AbiRule bits recorded by every execution of this machine so far
  // (never reset: an exploration's union, partial executions included).
  uint32_t rule_sensitivity() const {
    return rule_sensitivity_ |
           (ids_write_changed_ && (node_cid_readable_ || node_cid_loaded_) ? uint32_t{kRuleNodeAndMmCid} : 0u);
  }
  // Appends to the access log a clear of rseq_cs by the kernel (registration).
  void LogKernelClear(int t);

  // ---- driving (Simulator only) ----
  void Reset(Scheduler* scheduler, ExecutionResult* out);
  // Reset's part for a scheduler's initial placement: each thread starts on
  // place[t], with the IDs of that CPU in its rseq area; recorded in the
  // schedule. Throws InputError for an invalid placement.
  void Place(const Placement& place, ExecutionResult* out);
  // Runs thread `t`'s body on the current fiber until the execution ends or the
  // thread exits; switches to other threads' fibers through the FiberPool.
  void ThreadMain(int t);
  // Runs the execution to its end on the caller's stack, without fibers:
  // every boundary decides who runs, then that thread's next instruction is
  // interpreted. Only for scenarios whose threads are all IR (their whole
  // state is the machine's data); exceptions propagate to the caller.
  void RunDirect();
  // Saves the state of this execution at the current boundary into `ck`
  // (reusing its buffers). Call only from Scheduler::Choose of an execution
  // run with RunDirect; ResumeFrom continues from there.
  void Save(MachineCheckpoint& ck) const;
  // Restores `ck` as the state of an execution that `scheduler` continues,
  // writing into `out`. `out` must be the ExecutionResult of the execution in
  // which `ck` was saved or of a later one that passed through the same
  // boundary with the same decisions before it (its trace, schedule,
  // observations and access log up to that boundary are kept, the rest cut).
  void ResumeFrom(const MachineCheckpoint& ck, Scheduler* scheduler, ExecutionResult* out);
  void set_fibers(FiberPool* f) { fibers_ = f; }
  // A stop request polled inside executions (Simulator::set_stop_poll): at
  // every kStopPollSteps-th step, at a boundary; true ends the execution
  // there, stopped (ExecutionResult::stopped), without a verdict. nullptr
  // (the default): never polled, and nothing per step is added. `poll` must
  // outlive the executions.
  void set_stop_poll(const std::function<bool()>* poll) { stop_poll_ = poll; }
  static constexpr uint64_t kStopPollSteps = uint64_t{1} << 16;
  bool finished() const { return finished_; }
  // Called after the last fiber returned control: finalises `out`.
  void Finish();
  // Marks the execution over (so resumed fibers unwind).
  void ForceFinished() { finished_ = true; }
  // An exception raised on a fiber, if any (cleared).
  std::exception_ptr TakeError() { return std::exchange(error_, nullptr); }
  // First thread to run.
  int first_thread() const { return first_thread_; }
  // Threads whose fibers are inside their body (started, not returned); the
  // simulator resumes them after the execution so they unwind.
  bool fiber_active(int t) const { return fiber_active_[t] != 0; }
  // Native-body operations (sim/thread_api.h); each is one scheduling point.
  friend class ThreadApi;

 private:
  // The HandlerReadsSigctx bits of scenario `s` (sim/event_commute.cc).
  static uint64_t SignalsWhoseHandlerReadsSigctx(const Scenario& s);
  // Sets cross_signals_ and cross_ipi_ from `s` (sim/event_commute.cc).
  void NoteCrossThreadInterruptions(const Scenario& s);
  // EventCommutesWithNextStep past its first test: the IP and CPU rules
  // for an event `kind` at t's boundary before its next instruction, which
  // reads or writes only t's registers or (rseq_load, rseq_arm) t's area.
  bool EventCommutesAt(int t, DecisionKind kind, int signo, bool later_events) const;
  // The per-execution settings both Reset and ResumeFrom make.
  void Attach(Scheduler* scheduler, ExecutionResult* out);
  // Scheduling point for thread `self` before it executes its next instruction:
  // asks the scheduler (events, who runs), switches fibers, runs return-to-user
  // work. Returns false if the execution ended (self must unwind).
  bool Boundary(int self);
  void ApplyEvent(const Decision& d);
  // Context switch on `cpu`: the running thread goes to `dest` run queue tail (or
  // nowhere if exited); `next` (-1 = queue head) runs. Sets event bits (rule §7.8).
  void SwitchOut(int cpu, int next, TraceKind why);
  void SwitchIn(int cpu, int t, int prev);
  void Enqueue(int cpu, int t);
  // Generate signal for thread t (pending); delivery happens on its next return to user.
  // Discarded at once if ignored: SIG_IGN, or SIG_DFL of SIGCHLD/SIGCONT/SIGURG/
  // SIGWINCH, and (job control not modelled) of SIGSTOP/SIGTSTP/SIGTTIN/SIGTTOU.
  void RaiseSignal(int t, int signo);
  // Exit-to-user work for thread t (rule §7.12): signal frames (each preceded by
  // the rseq fixup), then the notify-resume rseq evaluation and ID update.
  void ReturnToUser(int t);
  bool DeliverSignal(int t, int signo);
  void Kill(int signo, const std::string& reason, int t);
  void FailAssert(int t, uint32_t pc, const std::string& msg);
  void EndExecution();
  // Interprets IR for thread t (its running context) until the thread exits,
  // the execution ends, or control returns to native code (a native thread's
  // CallIr returned or its signal handler did sigreturn). skip_boundary: the
  // caller already passed the boundary before the first instruction.
  enum class Stop { kExited, kEnded, kNative, kNext };
  Stop Interpret(int t, bool skip_boundary);
  // One instruction of thread t's running context (plus a sigreturn's or a
  // kernel call's own exit-to-user work). kNext: the thread goes on at the
  // next boundary.
  [[gnu::always_inline]] inline Stop Step(int t);
  // Runs thread t's running context while its instructions are plain: register
  // and memory instructions, branches, call, ret within the thread's calls,
  // rseq field reads, arming, passing asserts, observe. Stops before any other
  // instruction (a kernel call, a ret that exits or returns from a signal
  // handler, a faulting access, a failing assert, a call over the depth
  // limit) and returns the number run; steps_ and the pc are updated, the
  // rest is exactly Step's effect. Only while nothing is recorded per
  // instruction (no trace, access log or footprint).
  //
  // Boundaries: the first instruction's was taken by the caller; RunPlain
  // takes each further one itself if it is free (Scheduler::local_boundaries,
  // LocalBoundaryIsFree) or a promised default is left (counted down in
  // Scheduler::defaults_ahead), never once steps_ reaches check_at_, and
  // counts them in boundary_. `taken` says whether the boundary before the
  // instruction it stopped at was taken (that instruction is not plain: the
  // caller runs it with Step) or not (Decide must decide it).
  uint64_t RunPlain(int t, bool& taken);
  // After thread t's step (Stop::kNext), outside RunPlain: takes the next
  // boundary without Decide if nothing happens there (t still runs on the
  // default CPU with no return-to-user work, no budget or fairness check
  // due) and it is free or a promised default is left. False: Decide.
  bool TakeQuietBoundary(int t);
  // The decision part of a boundary: asks the scheduler (events, who runs)
  // until a thread is chosen to run, then does its return-to-user work.
  // Returns that thread, or -1 if the execution ended.
  int Decide();
  // Makes `cpu` the default CPU (last_cpu_). `runs`: it runs the next
  // instruction (Decide's choice), which ends its wait (the wait's length
  // counts for the livelock window's fairness, window_max_wait_); else it
  // only became the default (a rotation, or the old default went idle) and
  // keeps waiting until it runs. The CPU left starts waiting if it ran.
  void MoveDefaultCpu(int cpu, bool runs);
  // A CPU that has a thread started waiting at step `since`.
  void NoteWaitStart(uint64_t since) {
    fair_check_ = std::min(fair_check_, since + fair_wait_);
    check_at_ = std::min(check_at_, fair_check_);
  }
  // At Decide when steps_ >= fair_check_: the default CPU moves to the CPU
  // that has waited longest if that is FairWaitSteps() or more; fair_check_
  // becomes the step at which the next CPU's wait reaches it.
  void RotateToStarvedCpu();
  // Throws the InputError for decision `d`, invalid at `boundary`.
  [[noreturn, gnu::cold, gnu::noinline]] void InvalidDecision(const Decision& d, uint64_t boundary) const;
  // Thread t returned from its entry function with value v.
  void ExitThread(int t, int64_t v);
  // After the running thread left `cpu` (exit, preempt, migrate, yield): switch
  // in `next` (-1 = head of the run queue), keeping last_cpu_ valid.
  void PickNext(int cpu, int next);
  // Executes a kernel-call instruction for t (r0 := result). Returns false if
  // the execution ended.
  bool ExecSyscall(int t, const Instr& in);
  bool SegvAccess(int t, uint32_t pc, uint64_t addr);
  // A synchronous SIGSEGV for t (a memory fault), as force_sig_fault() ->
  // force_sig_info_to_task(HANDLER_CURRENT) in kernel/signal.c: with a
  // handler installed and SIGSEGV not blocked, the handler runs at once (its
  // frame saves the faulting instruction, which runs again after sigreturn);
  // blocked, ignored, without a handler or with no frame left: the process is
  // killed. Returns false if it was killed.
  bool ForceSigFault(int t, const std::string& reason);
  // Sets mm_cid_loaded_ if [addr, addr+bytes) overlaps an mm_cid field.
  void NoteAreaRead(uint64_t addr, int bytes);
  // Sets rseq_cs_stored_ if [addr, addr+bytes) overlaps an rseq_cs word.
  void NoteRseqCsStore(uint64_t addr, int bytes);
  void AssignMmCid(int t);
  void TouchThread(int t) {
    if (fp_on_) fp_.threads |= 1ull << (t & 63);
  }
  void TouchCpu(int c) {
    if (fp_on_) fp_.cpus |= 1ull << c;
  }
  // The transition ends the process (a failed assert, a fatal signal): it
  // stops every other thread where it is, as the kernel's do_group_exit()
  // -> zap_other_threads() does, so the outcome (the memory as the process
  // died) depends on how far each of them got. The transition therefore
  // conflicts with every thread's transitions: DPOR must also explore the
  // orders in which other threads' independent steps come after it, not
  // only before (without this, DPOR found 15 of the 23 outcomes of
  // buggy/alloc_commit_before_copy at one event).
  void TouchEveryThread() {
    for (int u = 0; u < num_threads(); ++u) TouchThread(u);
  }
  void TouchMem(uint64_t addr, int bytes, bool write) {
    if (fp_on_) fp_.Access(addr, bytes, write);
  }
  void Record(TraceKind k, int cpu, int t, uint32_t pc, int64_t a = 0, int64_t b = 0, std::string detail = {});
  // Appends to the access log (RunOptions::record_accesses; sim/access_log.h).
  void LogAccess(AccessKind k, int t, uint32_t pc, uint32_t next, uint64_t addr = 0, uint8_t bytes = 0,
                 uint8_t flags = 0, int64_t rv = 0, int64_t wv = 0);
  // Data memory as the kernel model reads it (descriptors, rseq areas,
  // futex words, signature words): the whole image.
  bool MemOk(uint64_t addr, int bytes) const {
    return addr >= kDataBase && addr - kDataBase + bytes <= mem_size_;
  }
  // What a program's load, store or atomic may access: its data symbols
  // [kDataBase, data_end_) and the rseq areas (through rseq_addr). The
  // descriptors after the last symbol are not the program's: an access past
  // the last symbol faults, as on the kernel, where the JIT keeps them
  // elsewhere (kernel/README.md "Memory layout").
  bool UserMemOk(uint64_t addr, int bytes) const {
    if (addr < kDataBase) return false;
    const uint64_t off = addr - kDataBase;
    return off + bytes <= data_end_ - kDataBase || (addr >= area_base_ && off + bytes <= mem_size_);
  }
  uint64_t Load(uint64_t addr, int bytes) const {
    uint64_t v = 0;
    std::memcpy(&v, mem_ + (addr - kDataBase), bytes);
    return v;
  }
  void Store(uint64_t addr, uint64_t v, int bytes) {
    if (mem_hash_on_) [[unlikely]] {
      StoreHashed(addr, v, bytes);
      return;
    }
    std::memcpy(mem_ + (addr - kDataBase), &v, bytes);
  }
  // Store while the memory hash is kept: the terms of the words it changes
  // are replaced (MemoryHash).
  void StoreHashed(uint64_t addr, uint64_t v, int bytes);
  // The 8-byte word `index` of data memory (offset 8 * index; zero-padded
  // past the end), as MemoryHash sees it.
  uint64_t MemoryWord(uint64_t index) const;
  // mem_hash_ -= (sign < 0) or += (sign > 0) the terms of the words that the
  // `bytes` bytes at data-memory offset `off` lie in: around a write that
  // does not go through Store (the interpreter's memory instructions).
  void HashWords(uint64_t off, int bytes, int sign);
  // `h` with each registered rseq area's mm_cid field read as 0 (StateHash
  // with mm_cid == false; each word once, however many areas it holds).
  MemoryHash MaskMmCid(MemoryHash h) const;
  // Sets t's pc to the instruction at `ip` after an abort or restart from
  // code index `from_desc`'s section (-1 unknown): counted and traced; false
  // (SIGSEGV) if `ip` is no instruction of the program.
  bool JumpAfterAbort(int t, uint64_t ip, int from_desc);

  // ---- threads that block (sim/blocking.cc) ----
  // FUTEX_WAIT (kernel/futex/waitwake.c futex_wait_setup, futex_wait): the
  // caller blocks if the u32 at addr equals `expected`. Returns r0: 0 (it
  // blocked; the wake or signal sets the final value), -EAGAIN, -EINVAL (addr
  // not 4-aligned, get_futex_key), -EFAULT (not mapped).
  int64_t FutexWait(int t, uint64_t addr, uint32_t expected);
  // FUTEX_WAKE (kernel/futex/waitwake.c futex_wake): FIFO; n is sys_futex's u32 val read as `int nr_wake` (<= 0
  // wakes one); r0 = the number woken, -EINVAL if unaligned, -EFAULT above TASK_SIZE_MAX (get_futex_key's
  // access_ok()); an unmapped address below it wakes 0 (a private key never touches the page). sim/blocking.cc
  int64_t FutexWake(int t, uint64_t addr, int64_t n);
  // nanosleep(ns) (see OnAllIdle): 0, or -EINVAL if ns < 0; deadline saturates at KTIME_MAX (ktime_add_safe()).
  int64_t Sleep(int t, int64_t ns);
  // Takes the running thread t off its CPU into `why` (kBlocked / kSleeping):
  // a context switch (rule 8: PREEMPT event + notify-resume), no run queue.
  void BlockRunning(int t, ThreadState why);
  // Makes blocked/sleeping thread t runnable on its CPU with r0 := ret
  // (try_to_wake_up; the thread stays on its last CPU).
  void Wake(int t, int64_t ret, int waker);
  // The time a thread on `cpu` reads: the time-driven scheduler's clock
  // (SimClock::NowNs), else now_ns_.
  uint64_t ClockNs(int cpu) const { return clock_ != nullptr ? clock_->NowNs(cpu) : now_ns_; }
  // Under a time-driven scheduler: wakes every sleeper whose deadline is at
  // or before `horizon_ns`, earliest deadline first (then thread index), and
  // recomputes next_due_ns_.
  void WakeDue(uint64_t horizon_ns);
  // Every CPU is idle while threads live: the simulated clock jumps to the
  // earliest sleeper's wake time and wakes every sleeper due then (thread
  // order); with no sleeper every live thread waits on a futex: kDeadlock.
  void OnAllIdle();
  // Decide() at steps_ == step_check_: at half the budget records what
  // progress is measured against; at the budget ends the execution with
  // kLivelock (no progress since, in a fair window: FairWindow) or
  // kStepLimit. Returns false if it ended.
  bool CheckStepBudget();
  // At the budget: true if no CPU with a runnable thread waited more than
  // FairWaitSteps() + num_cpus() steps in the budget's second half (what the
  // default continuation guarantees: RotateToStarvedCpu moves to one starved
  // CPU per step). Only such a window can give kLivelock; an unfair one ends
  // the execution as stopped.
  bool FairWindow();
  // Decide() at each step's first boundary in the budget's second half:
  // Brent's cycle detection (Brent, "An improved Monte Carlo factorization
  // algorithm", BIT 1980) over the whole machine state. A state is marked at
  // boundaries 2^k steps apart; if the state now equals the marked one (the
  // rest of StateHash and a hash of all of memory), no futex wake happened
  // in between and the cycle was fair (CycleWasFair), the execution ends as
  // kLivelock with the cycle in the message. Returns false if it ended.
  bool CheckCycle();
  // True if every runnable thread is its CPU's running thread (none queued)
  // and every CPU with a thread ran an instruction after step `since`.
  bool CycleWasFair(uint64_t since) const;
  // The words StateHash hashes after memory's MemoryHash: threads, CPUs,
  // mm_cid allocation, rfc2015 state, event counts and observations.
  void LayOutStateButMemory(std::vector<uint64_t>& w, bool mm_cid, uint32_t event_kinds) const;

  const Scenario& s_;
  const RunOptions& opt_;
  const KernelAbi* abi_;
  const Instr* code_;
  uint32_t code_size_;
  int num_cpus_;
  std::vector<SimThread> threads_;
  std::vector<SimThread> init_threads_;
  std::vector<SimCpu> cpus_;
  std::vector<uint8_t> init_mem_;
  // The state Reset builds before the first boundary when the scheduler
  // gives no initial placement: memory, threads, run queues and mm_cid
  // allocator after the registration and mm_cid hooks of thread start
  // (PrepareStart). It depends only on the scenario and the ABI, so later
  // such Resets copy it instead of running the hooks again; only while
  // nothing is recorded (no trace, access log or footprint: the hooks' own
  // records would be missing).
  struct PreparedStart {
    bool valid = false;
    std::vector<uint8_t> memory;
    std::vector<SimThread> threads;  // main contexts only (depth 0)
    std::vector<SimCpu> cpus;
    MmCidState mmcid;
    int first_thread = -1, last_cpu = 0;
  };
  PreparedStart prepared_;
  // Reset's part up to the first boundary (placement, run queues, the
  // registration and mm_cid hooks), from init_threads_ and init_mem_.
  void PrepareStart(const Placement* place, ExecutionResult* out);
  uint8_t* mem_ = nullptr;   // points into out_->memory
  uint64_t mem_size_ = 0;
  uint64_t desc_base_ = 0, area_base_ = 0;
  uint64_t data_end_ = kDataBase;  // end of the last data symbol
  std::vector<uint32_t> signal_handler_;  // by signo: function index+1, 0 default, ~0 ignored
  std::vector<uint8_t> signal_nodefer_;
  uint64_t cpu_mask_ = 0;
  int first_thread_ = 0;

  Scheduler* sched_ = nullptr;
  ExecutionResult* out_ = nullptr;
  FiberPool* fibers_ = nullptr;
  bool record_ = false;
  bool finished_ = false;
  int last_cpu_ = 0;
  int live_threads_ = 0;
  uint64_t steps_ = 0;
  uint64_t boundary_ = 0;
  uint32_t events_[kNumDecisionKinds] = {};
  uint32_t total_events_ = 0;
  MmCidState mmcid_;        // the process's concurrency-ID allocator (mm_struct)
  RfcProcess rfc_;          // 2015 RFC: the process's regions
  std::vector<uint8_t> fiber_active_;
  std::exception_ptr error_;
  bool fp_on_ = false;
  Footprint fp_;
  bool acc_ = false;            // RunOptions::record_accesses, for this execution
  std::vector<uint8_t> in_cs_;  // by code index: 1 inside some descriptor's [start, post_commit)
  std::vector<LocalOp> local_op_;  // by code index: ClassifyLocalOp of its opcode (RunPlain)
  // By code index, what LocalBoundaryIsFree knows from the program alone:
  // kFreeWithoutEvents, the opcode is always local (LocalOp::kAlways);
  // kFreeWithEvents, also no getcpu, neither it nor any instruction its step
  // may go to lies in a descriptor's [start, post_commit), and no signal
  // handler reads the interrupted context, so only the ABI's restart test
  // of the moment is left (AbiMayRestart).
  static constexpr uint8_t kFreeWithoutEvents = 1, kFreeWithEvents = 2;
  std::vector<uint8_t> free_at_;
  // The part of IpMayRestart that changes during an execution
  // (KernelAbi::InRseqCs) at a kFreeWithEvents instruction `pc` and the
  // instructions its step may go to (SuccessorsOf).
  bool AbiMayRestart(int t, uint32_t pc) const;
  // The instructions a step of thread-local instruction `pc` may go to
  // (both the same if only one); for a ret, of thread t's running context.
  std::pair<uint32_t, uint32_t> SuccessorsOf(int t, uint32_t pc) const;
  // Fills free_at_ (after sigctx_handlers_ is known).
  void ClassifyFreeBoundaries();
  mutable std::vector<uint64_t> hash_words_;  // StateHash's buffer
  // Scheduler::WantsStateHash() of this execution: mem_hash_ is data
  // memory's MemoryHash, kept by every store (Store, HashWords) and set by
  // every bulk copy of memory (PrepareStart, ResumeFrom). The initial
  // image's hash is computed once.
  bool mem_hash_on_ = false;
  MemoryHash mem_hash_;
  std::optional<MemoryHash> init_mem_hash_;
  mutable std::vector<uint64_t> mask_words_;  // MaskMmCid's buffer
  // MaskMmCid's corrections, by position in mask_words_: word `word` held
  // `value`; masking `mask` there adds `delta` to the hash.
  struct MaskTerm {
    bool valid = false;
    uint64_t word = 0, mask = 0, value = 0;
    MemoryHash delta;
  };
  mutable std::vector<MaskTerm> mask_terms_;
  std::vector<CompiledExpr> properties_;       // s_.properties, resolved once
  bool mm_cid_loaded_ = false;                 // see mm_cid_loaded()
  bool area_accessed_ = false;                 // see area_accessed()
  bool rseq_cs_stored_ = false;                // see rseq_cs_stored()
  uint64_t sigctx_handlers_ = 0;               // bit signo: HandlerReadsSigctx(signo)
  // NextStepIsIndependent: signals another thread may send to a running
  // thread (bit signo: a `tgkill` of it; all when a C++ thread exists) and
  // whether another thread may IPI it (`membarrier_rseq` or a C++ thread).
  uint64_t cross_signals_ = 0;
  bool cross_ipi_ = false;
  // rule_sensitivity(): the recorded bits; a kernel write changed a node_id or
  // mm_cid word; the program can read them (rseq_load node_id/mm_cid or C++
  // threads: known from the program) or did (a plain load at a computed
  // address, e.g. through rseq_addr: NoteAreaRead).
  uint32_t rule_sensitivity_ = 0;
  bool ids_write_changed_ = false;
  bool node_cid_readable_ = false;
  bool node_cid_loaded_ = false;
  // Blocking and the simulated clock (sim/blocking.cc). Instructions take no
  // simulated time: the clock moves only when every CPU is idle (OnAllIdle).
  uint64_t now_ns_ = 0;
  const SimClock* clock_ = nullptr;  // Scheduler::clock() of this execution
  uint64_t next_due_ns_ = ~0ull;     // no sleeper is due before this (may be early, never late)
  uint64_t wait_seq_ = 0;      // next FUTEX_WAIT's FIFO position
  uint64_t wakes_ = 0;         // futex wakes that woke a thread (progress)
  // The step budget: step_check_ is max_steps / 2, then max_steps. At the
  // midpoint the progress measures are recorded (mid_*).
  uint64_t step_check_ = 0;
  bool mid_taken_ = false;
  int mid_live_ = 0;
  uint64_t mid_wakes_ = 0, mid_observed_ = 0;
  std::vector<uint8_t> mid_memory_;  // data memory below the rseq areas at the midpoint
  // CheckCycle's marked state: the hashes of the state but memory and of
  // memory, where it was marked, and wakes_ then; none before the second
  // half and after a ResumeFrom (a mark from another path must not be
  // compared). cycle_power_: steps from the mark at which a new one is set.
  struct CycleMark {
    std::pair<uint64_t, uint64_t> rest, memory;
    uint64_t boundary = 0, steps = 0, wakes = 0;
  };
  std::optional<CycleMark> cycle_mark_;
  uint64_t cycle_power_ = 1;
  // Fairness of the default continuation (RotateToStarvedCpu): the wait
  // bound, the step at which a rotation may be due (may be early, never
  // late), min(step_check_, fair_check_), and the longest wait of a CPU with
  // a thread in the budget's second half (CheckStepBudget).
  uint64_t fair_wait_ = kFairWaitSteps;
  uint64_t fair_check_ = ~0ull;
  uint64_t check_at_ = 0;
  // The stop poll (set_stop_poll) and the step at which it is next asked
  // (~0: never).
  const std::function<bool()>* stop_poll_ = nullptr;
  uint64_t poll_check_ = ~0ull;
  uint64_t NextCheck() const { return std::min({step_check_, fair_check_, poll_check_}); }
  // Decide() at steps_ >= poll_check_: asks the stop poll; true ends the
  // execution stopped (and returns true).
  bool StopRequested();
  uint64_t window_max_wait_ = 0;
  // The default CPU has not run since it became the default (its wait goes
  // on from its ran_until).
  bool default_waiting_ = false;
};

}  // namespace rseqmc

#endif  // RSEQMC_SIM_MACHINE_H_
