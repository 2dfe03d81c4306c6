// Forcing a simulator schedule on the real kernel with ptrace (DESIGN.md §7,
// reference/inject-prototype.md).
//
// A tracee process (fork of the caller) runs every scenario thread as a real
// thread pinned to the CPU the simulator gives it, executing the JIT'd IR
// (kernel/harness/jit.h). The tracer replays a `Plan` derived from one
// simulated execution:
//
//   * exactly one tracee thread runs at a time; the others are in ptrace stops
//     at IR boundaries, so the interleaving of the simulated execution is
//     reproduced instruction for instruction;
//   * a thread stops at its n-th next IR instruction through the JIT's step
//     countdown (r14) and inline int3; the tracer then rewinds rip to the first
//     x86 instruction of that IR instruction (L_i), so the kernel's membership
//     test (kernel/rseq.c in_rseq_cs()) sees exactly "stopped at the boundary";
//   * injected events, while the thread is stopped: preempt = nothing more (the
//     stop is itself a preemption, inject-prototype.md §3), migrate =
//     sched_setaffinity(tid, {cpu}), signal = tgkill then PTRACE_CONT with the
//     signal at its signal-delivery-stop, IPI = membarrier(PRIVATE_EXPEDITED_RSEQ,
//     FLAG_CPU) issued by an untraced helper thread of the tracee;
//   * a thread that only pauses (another CPU runs next in the simulation; no
//     event hit it) must not see the stop as a preemption: it is resumed through
//     the JIT's re-arm stub (rip outside any section, so rseq_ip_fixup() only
//     clears rseq_cs lazily; the stub stores the saved rseq_cs back and jumps to
//     L_i). Its rseq_event_mask keeps the PREEMPT bit, which only matters if a
//     notify-resume without any event hits a later section (none does here).
//
// Original-bytes mode (JitOptions::original_code): the imported functions run
// as their original machine code, which has no countdown. A plan's stops
// there are made with the debug registers (PTRACE_POKEUSER of
// offsetof(struct user, u_debugreg)): DR0 is an execute breakpoint on the
// machine instruction the thread must stop before, DR1..DR3 on the imported
// descriptors' abort_ip (each hit is one abort, counted by the tracer; the
// thread is resumed at once, its rseq_cs already cleared by the fix-up, so
// that stop changes nothing rseq sees; a jump there leaves rseq_cs armed and
// is no abort; an abort applied at a signal's delivery is counted by the
// tracee's signal wrapper instead, ThreadRecord::handler_abort_ip). The countdown still counts the IR
// instructions of the scenario's own (JIT) code, so a stop in JIT code is as
// before. A breakpoint stops at the first execution of its address, so when
// the thread passes the address again before the planned stop (a retry
// loop), the tracer first stops it, quietly (re-arm stub), at the last JIT
// instruction before the planned visit, and only then arms DR0. Plans that
// cannot be run this way are refused up front (OriginalLegs): a stop between
// the IR instructions of one machine instruction (the processor has no such
// boundary), a second visit without a JIT instruction in between (a loop
// inside the original code), or an execution that ends with a thread
// paused inside the original code.
//
// Every tracee has PR_SET_PDEATHSIG(SIGKILL) and PTRACE_O_EXITKILL, is killed
// and reaped at the end of each run, on timeout, and when KillCurrentTracee()
// is called (the CLI's SIGINT handler); no stopped or orphan process is left.
#ifndef RSEQMC_KERNEL_HARNESS_TRACER_H_
#define RSEQMC_KERNEL_HARNESS_TRACER_H_

#include <ucontext.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "kernel/harness/jit.h"
#include "sim/simulator.h"

namespace rseqmc::harness {

// One step of a plan.
struct PlanAction {
  enum class Kind : uint8_t {
    kRun,      // thread runs `steps` IR instructions, then must stop before `next_pc` (or exit)
    kPreempt,  // injected preemption of the (stopped) thread
    kMigrate,  // injected migration to CPU `arg`
    kSignal,   // injected signal `arg`
    kIpi,      // injected membarrier-RSEQ IPI of CPU `arg`
    kTouched,  // a program action (tgkill, membarrier, yield) hit the thread: resume it plainly
    kWoken,    // the thread, asleep in the kernel after a `blocks` run, was woken (FUTEX_WAKE of another
               // thread, its nanosleep's end, a signal): it returns to user space and must stop at its
               // next boundary, `next_pc`, without being resumed
  };
  Kind kind = Kind::kRun;
  int thread = 0;
  uint64_t steps = 0;  // kRun: IR instructions (the JIT's 64-bit step countdown)
  int arg = -1;
  int64_t next_pc = -1;  // kRun: pc of the thread's next instruction; -1 = it exits; -2 = the run ends;
                         // kExpectDeath = the kernel kills the process when the thread resumes
  bool blocked = false;  // kSignal: the thread blocks it (pending, no rseq event until it is delivered)
  // kRun: the run's last instruction (futex_wait, sleep) puts the thread to
  // sleep in the kernel (the simulator's kBlock): no trap follows; the tracer
  // waits until /proc shows it asleep in that system call, and a kWoken
  // action later collects its stop.
  bool blocks = false;
  // kWoken: the simulator's wake is a signal's (the call returns -EINTR).
  bool by_signal = false;
};
inline constexpr int64_t kExpectDeath = -3;

// The per-thread and whole-run expectations of one simulated execution.
struct Plan {
  std::vector<PlanAction> actions;
  std::vector<std::vector<uint32_t>> pcs;  // per thread: executed IR instructions, in order
  std::vector<uint32_t> start_cpu;         // per thread
  uint32_t events = 0;                     // injected events
  int kill_thread = -1;                    // the thread the process was killed in (kKill), if any
  int64_t kill_pc = -1;                    // and where (a faulting instruction may show in its IR trace)
  // Set when the simulated execution ended with threads alive: kDeadlock
  // (every live thread asleep on a futex), kLivelock or kStepLimit (its step
  // budget ran out). The kernel run then ends at the plan's end with the same
  // threads alive: asleep in futex_wait (checked in /proc) for a deadlock,
  // stopped where the plan leaves them otherwise; the run is completed and
  // given this verdict, the kernel having followed the simulated execution
  // instruction for instruction up to that point (CompareRuns checks it).
  std::optional<Verdict> open_end;
};

// A Scheduler wrapper that remembers at which trace position each injected
// event was recorded (so the plan can tell injected events from program ones).
class RecordingScheduler;

// Runs `sched` on the simulator with trace recording and returns the
// execution and its plan. Throws InputError for an invalid schedule.
ExecutionResult SimulateForPlan(Simulator& sim, Scheduler& sched, Plan* plan);

// Builds the plan of an execution whose trace was recorded; `injected` lists the
// trace indices of injected events, `blocked_signals` those of signals (injected
// or sent with tgkill) that the target thread had blocked when they came.
Plan MakePlan(const Scenario& s, const ExecutionResult& r, const std::vector<size_t>& injected,
              const std::vector<size_t>& blocked_signals = {});

// The `sleep` instructions (real nanosleeps) the threads of `plan` execute.
uint64_t RealSleeps(const Scenario& s, const Plan& plan);

struct RealThread {
  bool exited = false;
  int64_t ret = 0;
  uint64_t aborts = 0;
  int final_cpu = -1;
  std::vector<std::pair<uint32_t, int64_t>> observed;
  std::vector<uint32_t> pcs;  // executed IR instructions
};

// How a kernel run ended. The rule (issue 19): a run is kCompleted only when
// every thread reached its end trap (it returned), or the process ended with
// a verdict the scenario can produce: a failed assert, or death by a signal
// the harness did not send (a fault, an rseq kill; SIGKILL only where the plan
// expected the process to die, since the harness's own kills and the outside
// world's, e.g. the OOM killer, use it too). A run in which a thread stopped
// under the tracer's control somewhere the plan does not have it is
// kLeftPlan: a result (the kernel's control flow differs, `divergence` says
// where), compared as a disagreement. Anything else is kHarnessError with the
// reason in `harness_error`: the watchdog's timeout, an interruption, a
// SIGKILL nobody in the scenario sent, a ptrace or tracee failure, a harness
// limit, or a plan that ran out while a thread had neither returned nor met a
// verdict. A harness error wins over the other two.
enum class RunEnd : uint8_t { kHarnessError, kCompleted, kLeftPlan };
const char* RunEndName(RunEnd e);  // "harness error", "completed", "left the plan"

struct RealResult {
  // The run executed the imported functions' original bytes: `pcs` of each
  // thread then holds its JIT (non-imported) IR instructions only.
  bool original_code = false;
  RunEnd end = RunEnd::kHarnessError;  // see RunEnd; Session::Collect() decides it once
  bool completed() const { return end == RunEnd::kCompleted; }
  std::string harness_error;   // kHarnessError: why (timeout, ptrace failure, interrupted, harness limit, ...)
  // Non-empty: the tracee could not be traced at all (PTRACE_TRACEME failed
  // in it: seccomp, a tracer of our own, yama): the machine cannot run the
  // harness, so the run is no result. Also sets harness_error.
  std::string unavailable;
  std::string divergence;      // kLeftPlan: where the real run left the plan ("" = it followed it)
  Verdict verdict = Verdict::kPass;
  std::string message;
  std::vector<uint8_t> memory;  // data symbols
  std::vector<RealThread> threads;
  uint32_t stops = 0;           // ptrace stops taken
  std::vector<std::string> log; // what the tracer did, one line per action
};

struct TracerOptions {
  // Wall-clock limit of one run, in seconds: the watchdog SIGKILLs the tracee
  // then, and the run is a harness error ("timed out after ...").
  double timeout_s = 10;
};

// Checks that this process can run the harness: x86-64, rseq registered or
// registrable, enough CPUs for `num_cpus` (CPUs 0..num_cpus-1 in this
// process's affinity) and, when `need_ptrace` (the tracer-driven modes; stress
// mode runs without ptrace), that ptrace really works here
// (PtraceUnavailableReason()). Returns "" or why not, in words. Never throws.
std::string HarnessUnavailableReason(uint32_t num_cpus, bool need_ptrace = true);
// The same for a scenario, which must also have this machine's NUMA layout
// (CPU c on node c * nodes / cpus, as the simulator places it): node_id is
// the kernel's, not the scenario's; and must not call the 2015 RFC's system
// call (sim/kernel/rfc2015.cc), which this kernel lacks.
std::string HarnessUnavailableReason(const Scenario& s, bool need_ptrace = true);

// Probes ptrace the way the tracer uses it: forks a child that calls
// PTRACE_TRACEME and stops itself with SIGSTOP; the probe succeeds when this
// process sees the child's ptrace stop. The child is killed and reaped before
// returning, whatever happened (no stopped, traced or zombie process is left;
// only that child's pid is waited for). Returns "" when ptrace works, else why
// not: the errno of PTRACE_TRACEME (EPERM from a seccomp filter, a container's
// policy, kernel.yama.ptrace_scope = 3, or this process being traced itself, as
// under `strace -f` or a debugger) and what to do. Never throws. Costs one
// fork (~0.2 ms); not cached, so a filter installed later is seen.
std::string PtraceUnavailableReason();

// Original-bytes mode: how the tracer runs one kRun action of a plan.
struct OriginalLeg {
  uint64_t countdown = 0;   // IR instructions of JIT code to run before the countdown trap
  uint64_t breakpoint = 0;  // DR0 for the (last) resume; 0 = none
  int64_t stage_pc = -1;    // >= 0: stop (quietly) first before this JIT instruction...
  uint64_t countdown2 = 0;  // ...then resume with this countdown and the breakpoint
};
// The legs of every action of `plan` (kRun actions; others get a default
// leg) for a JitProgram in original-bytes mode. Returns "" or why the plan
// cannot be forced at machine-instruction granularity (see above); such a
// schedule is not run.
std::string OriginalLegs(const JitProgram& jit, const Plan& plan, std::vector<OriginalLeg>* legs);

// Forces `plan` on the real kernel (fresh tracee process). Never throws for
// what happens in the tracee; HarnessError for setup failures of this process.
RealResult RunPlan(JitProgram& jit, const Plan& plan, const TracerOptions& opt = {});

// Kills the tracee of the run in progress (async-signal-safe), for SIGINT.
void KillCurrentTracee();
// Registers the child process KillCurrentTracee() kills (0 = none); for the
// other modes' children (stress).
void SetCurrentTracee(int pid);

// Outcome mode: all threads run concurrently on their CPUs (the interleaving
// between CPUs is the hardware's); each thread takes the injected events of
// `events` at its own step counts. Events of one thread must be sorted by step.
struct ThreadEvent {
  int thread = 0;
  uint32_t step = 0;        // the event hits before the thread's step-th instruction (0-based)
  PlanAction::Kind kind = PlanAction::Kind::kPreempt;  // kPreempt, kMigrate, kSignal, kIpi
  int arg = -1;             // CPU (migrate), signal number (signal)
};
RealResult RunConcurrent(JitProgram& jit, const std::vector<ThreadEvent>& events, const TracerOptions& opt = {});

// For the tracee's signal wrapper (and tests): `uc` was interrupted by a
// signal inside the block of an `observe` (IR instruction i) before its last
// x86 instruction, the count's increment, ran. observe writes the thread's
// record (slot, then count), and a handler that observes too would take the
// same slot and leave one empty (issue 10 section 3: 44 of 300 outcome-mode
// runs of tests/data/observe_tgkill_race.rsq outside the reachable set). The
// context is moved back to the block's first instruction L_i and the IR
// trace entry its prologue appended is removed (from `rec`), so the signal
// lands at the IR boundary before i, where the simulator can put it; the
// caller gives back the countdown step the prologue took (returns true).
// Anything else (another block, after the increment, at an abort stub where
// rseq_signal_deliver() moved an aborted section) is left: false.
bool RewindUnfinishedObserve(const JitProgram& jit, ucontext_t* uc, ThreadRecord* rec);

// The step countdown a scenario signal handler runs with when the code it
// interrupted has none in r14 (JitProgram::HoldsCountdown()): one it never
// reaches, so it traps nowhere (as stress mode's handlers).
inline constexpr int64_t kHandlerNoCountdown = int64_t{1} << 60;

// For the tracee's signal wrapper (and tests): runs IR function `handler`
// on context `h` for the signal frame `uc`, interrupted with `live_r14` in
// r14 (the live value: an inner frame's sigreturn may have changed it).
// When the interrupted code holds the step countdown in r14
// (JitProgram::HoldsCountdown(), or it is the wrapper's entry: two frames
// pushed at one resume, the outer handler about to start), the handler
// counts on from it and the countdown it leaves goes into the frame's r14
// (restored by sigreturn); it is returned. Otherwise (a thread past its
// program's return, in the harness's C++ code: outcome mode's tgkill can
// reach it there) the handler runs with kHandlerNoCountdown and r14 is left
// as it was: it is that code's callee-saved register, and writing the
// handler's countdown into it corrupted the harness's frame (under ASan, a
// stack-buffer-overflow reported in ThisThreadCpu() after the return,
// observe_tgkill_race.rsq); nullopt.
std::optional<int64_t> RunHandlerFromSignal(const JitProgram& jit, uint32_t handler, JitContext* h, ucontext_t* uc,
                                            int64_t live_r14);

// Builds the simulator-shaped result of a real run (for property evaluation
// and outcome comparison).
ExecutionResult AsExecutionResult(const Scenario& s, const RealResult& r);

}  // namespace rseqmc::harness

#endif  // RSEQMC_KERNEL_HARNESS_TRACER_H_
