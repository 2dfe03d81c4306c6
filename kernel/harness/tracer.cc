#include "kernel/harness/tracer.h"

#include <dirent.h>
#include <fcntl.h>
#include <linux/futex.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <ucontext.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <optional>
#include <cerrno>
#include <cstdlib>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <cstring>
#include <fstream>
#include <memory>
#include <mutex>
#include <set>
#include <sstream>
#include <thread>

#include "kernel/harness/child.h"
#include "sim/kernel/abi.h"
#include "sim/machine.h"
#include "sim/diag.h"

namespace rseqmc::harness {

// ---------------------------------------------------------------------------
// Plans from simulated executions.

class RecordingScheduler : public Scheduler {
 public:
  RecordingScheduler(Scheduler& inner, ExecutionResult* out) : inner_(inner), out_(out) {}
  void BeginExecution(const Machine& m) override {
    injected.clear();
    blocked.clear();
    scanned_ = 0;
    owed_ = 0;
    inner_.BeginExecution(m);
    owed_ = inner_.defaults_ahead;  // answered one by one (Scan runs at every boundary)
    inner_.defaults_ahead = 0;
    defaults_ahead = 0;
  }
  Decision Choose(const ChoiceView& v) override {
    Scan(v.machine());
    if (owed_ > 0) {
      // A default the inner scheduler promised: answered here, so that Scan
      // sees the state after every step (a signal's target blocks it or not).
      --owed_;
      return Decision::Step(v.DefaultCpu());
    }
    Decision d = inner_.Choose(v);
    owed_ = inner_.defaults_ahead;
    inner_.defaults_ahead = 0;
    if (d.IsEvent() && !d.IsStop()) injected.push_back(out_->trace.size());
    return d;
  }
  void EndExecution(const Machine& m) override {
    Scan(m);
    inner_.EndExecution(m);
  }
  std::vector<size_t> injected;
  std::vector<size_t> blocked;

 private:
  // Signals recorded since the last boundary that their (not yet resumed)
  // target blocks: they stay pending and are no rseq event for now.
  void Scan(const Machine& m) {
    for (; scanned_ < out_->trace.size(); ++scanned_) {
      const TraceEntry& e = out_->trace[scanned_];
      if (e.kind != TraceKind::kSignal || e.thread < 0 || e.a < 1 || e.a > kMaxSignal) continue;
      if ((m.thread(e.thread).blocked >> e.a) & 1) blocked.push_back(scanned_);
    }
  }
  size_t scanned_ = 0;
  uint64_t owed_ = 0;
  Scheduler& inner_;
  ExecutionResult* out_;
};

ExecutionResult SimulateForPlan(Simulator& sim, Scheduler& sched, Plan* plan) {
  const bool had_trace = sim.options().record_trace;
  sim.mutable_options().record_trace = true;
  ExecutionResult r;
  RecordingScheduler rec(sched, &r);
  sim.RunInto(rec, r);
  sim.mutable_options().record_trace = had_trace;
  if (plan) *plan = MakePlan(sim.scenario(), r, rec.injected, rec.blocked);
  return r;
}

namespace {
// A signal the scenario ignores (SIG_IGN), or one whose default action is to
// ignore it (SIGCHLD, SIGCONT, SIGURG, SIGWINCH: sig_kernel_ignore() in
// include/linux/signal.h), or a job-control stop (see below): discarded when
// sent, no rseq event (the simulator's rule). Traced, it still stops the
// thread, which the tracer must not let count.
bool Ignored(const Scenario& s, int signo) {
  const SignalSpec* spec = s.FindSignal(signo);
  if (spec != nullptr) return spec->handler < 0;
  // Job-control stops are not modelled: the simulator discards them (as the
  // kernel does for SIGTSTP/SIGTTIN/SIGTTOU in an orphaned process group), so
  // the tracer drops them too instead of letting the tracee stop.
  return signo == SIGCHLD || signo == SIGCONT || signo == SIGURG || signo == SIGWINCH || signo == SIGSTOP ||
         signo == SIGTSTP || signo == SIGTTIN || signo == SIGTTOU;
}

// Where a thread woken at trace entry `wake` first stops on the kernel: the
// boundary it returns to user space at (its next step, the abort_ip the
// return's rseq fix-up sent it to, or where an event finds it while it waits
// in a run queue); -2 if it never runs again. A thread that has a signal to
// deliver when it returns (the signal that woke it with -EINTR, or one sent
// while it was queued) first stops in the kernel's signal-delivery-stop
// (kernel/signal.c get_signal() -> ptrace_signal()), before the rseq fix-up
// and the frame (arch/x86/kernel/signal.c handle_signal()): at the boundary
// after its blocking call, the wake entry's pc.
int64_t WokenNextPc(const Trace& trace, size_t wake, int thread) {
  for (size_t i = wake + 1; i < trace.size(); ++i) {
    const TraceEntry& e = trace[i];
    if (e.thread != thread) continue;
    if (e.kind == TraceKind::kSignalFrame) return trace[wake].pc;
    if (e.kind == TraceKind::kStep || e.kind == TraceKind::kExit || e.kind == TraceKind::kKill) break;
  }
  for (size_t i = wake + 1; i < trace.size(); ++i) {
    const TraceEntry& e = trace[i];
    if (e.thread != thread) continue;
    switch (e.kind) {
      case TraceKind::kAbort: return e.a;
      case TraceKind::kStep:
      case TraceKind::kSignalFrame:
      case TraceKind::kPreempt:
      case TraceKind::kMigrate:
      case TraceKind::kSignal:
      case TraceKind::kIpi: return e.pc;
      case TraceKind::kExit:
      case TraceKind::kKill: return -2;
      default: break;
    }
  }
  return -2;
}

// Joins each nanosleep run of a thread with the run that follows its wake
// by the clock when nothing else happens in between (no other thread runs,
// no event): on the kernel the thread sleeps and goes on by itself, the
// sleep being the context switch the simulator makes of it (BlockRunning()),
// and no tracer stop is needed at the wake. A sleep loop is then one run
// instead of a stop, a /proc poll and a resume per iteration (each iteration
// cost ~170 us: 50,000 of them before the step limit took 8.5 s).
void JoinSleeps(Plan* plan) {
  std::vector<PlanAction>& acts = plan->actions;
  std::vector<PlanAction> out;
  out.reserve(acts.size());
  for (size_t i = 0; i < acts.size(); ++i) {
    const PlanAction& a = acts[i];
    PlanAction* last = out.empty() ? nullptr : &out.back();
    if (a.kind == PlanAction::Kind::kWoken && !a.by_signal && last != nullptr &&
        last->kind == PlanAction::Kind::kRun && last->blocks && last->arg == SYS_nanosleep &&
        last->thread == a.thread && i + 1 < acts.size() && acts[i + 1].kind == PlanAction::Kind::kRun &&
        acts[i + 1].thread == a.thread) {
      const PlanAction& next = acts[++i];
      last->steps += next.steps;
      last->next_pc = next.next_pc;
      last->blocks = next.blocks;
      last->arg = next.arg;
      continue;
    }
    out.push_back(a);
  }
  acts = std::move(out);
}

}  // namespace

Plan MakePlan(const Scenario& s, const ExecutionResult& r, const std::vector<size_t>& injected,
              const std::vector<size_t>& blocked_signals) {
  Plan plan;
  const int nthreads = static_cast<int>(s.threads.size());
  plan.pcs.assign(nthreads, {});
  for (const ThreadSpec& t : s.threads) plan.start_cpu.push_back(t.cpu);
  std::set<size_t> inj(injected.begin(), injected.end());
  std::set<size_t> blocked(blocked_signals.begin(), blocked_signals.end());
  const bool rfc_program = FindRfc2015Use(s.program) != nullptr;
  PlanAction run;
  size_t run_last = 0;                 // trace index of the open run's last step
  std::vector<size_t> run_end;         // per action: trace index of a run's last step
  bool open = false;
  int runner = -1;                     // thread of the latest step
  auto flush = [&] {
    if (open) {
      plan.actions.push_back(run);
      run_end.resize(plan.actions.size(), 0);
      run_end.back() = run_last;
    }
    open = false;
  };
  // One more step of `thread` (trace entry i): the open run grows, or a new one starts.
  auto extend_run = [&](int thread, size_t i) {
    if (open && run.thread == thread) {
      ++run.steps;
    } else {
      flush();
      run = PlanAction{PlanAction::Kind::kRun, thread, 1, -1, -1};
      open = true;
    }
    run_last = i;
  };
  std::vector<int> runner_at(r.trace.size(), -1);  // thread of the latest step at each entry
  for (size_t i = 0; i < r.trace.size(); ++i) {
    const TraceEntry& e = r.trace[i];
    // A memory fault delivered to a handler (Machine::ForceSigFault(), the
    // one signal entry with a reason): the attempt is a step of the thread
    // that executes nothing, and on the kernel it runs its block's countdown
    // (the tracee's UndoFaultingAttempt()): counted in the run, not in pcs.
    const bool fault = e.kind == TraceKind::kSignal && !e.detail.empty() && e.thread >= 0 && inj.count(i) == 0;
    if (e.kind == TraceKind::kStep || fault) runner = e.thread;
    runner_at[i] = runner;
    if (fault) {
      extend_run(e.thread, i);
      continue;
    }
    switch (e.kind) {
      case TraceKind::kStep:
        extend_run(e.thread, i);
        plan.pcs[e.thread].push_back(e.pc);
        break;
      case TraceKind::kPreempt:
      case TraceKind::kMigrate:
      case TraceKind::kSignal:
      case TraceKind::kIpi:
      case TraceKind::kYield: {
        // tgkill(SIGKILL) ends the process in the sender's run (kKill below).
        if (e.kind == TraceKind::kSignal && e.a == SIGKILL) break;
        const bool injected_event = inj.count(i) != 0;
        if (injected_event) ++plan.events;
        // A 2015-RFC program (it runs only under that ABI) has no use for
        // membarrier's RSEQ command, and an injected IPI changes nothing
        // there (sim/kernel/rfc2015.cc IpiRseq()); nor does it on the
        // patched kernel, whose RFC restarts only on a switch-out or a
        // signal. Forcing it as a tracer stop would be a switch-out: the
        // thread keeps running instead.
        if (injected_event && e.kind == TraceKind::kIpi && rfc_program) break;
        if (e.thread < 0) break;  // IPI of an idle CPU: nothing to do
        PlanAction a;
        a.thread = e.thread;
        if (injected_event) {
          switch (e.kind) {
            case TraceKind::kPreempt: a.kind = PlanAction::Kind::kPreempt; break;
            case TraceKind::kMigrate: a.kind = PlanAction::Kind::kMigrate; a.arg = static_cast<int>(e.a); break;
            case TraceKind::kSignal:
              a.kind = PlanAction::Kind::kSignal;
              a.arg = static_cast<int>(e.a);
              a.blocked = blocked.count(i) != 0;
              break;
            default: a.kind = PlanAction::Kind::kIpi; a.arg = e.cpu; break;
          }
        } else if ((e.thread != runner || e.kind == TraceKind::kYield) &&
                   !(e.kind == TraceKind::kSignal && (blocked.count(i) || Ignored(s, static_cast<int>(e.a))))) {
          // A program action of another thread (tgkill, membarrier) hit this
          // one while it was paused, or it yielded: its next resume must let
          // the kernel see the switch. A thread's own syscall is handled by
          // the real kernel at the syscall's return, as the simulator does.
          a.kind = PlanAction::Kind::kTouched;
        } else {
          break;
        }
        flush();
        run_end.resize(plan.actions.size() + 1, 0);
        plan.actions.push_back(a);
        break;
      }
      case TraceKind::kBlock: {
        // The thread's last step (futex_wait, sleep) put it to sleep: its run
        // ends there, with no trap to wait for.
        PlanAction* last = open ? &run : (plan.actions.empty() ? nullptr : &plan.actions.back());
        if (last != nullptr && last->kind == PlanAction::Kind::kRun && last->thread == e.thread &&
            !plan.pcs[e.thread].empty()) {
          last->blocks = true;
          last->arg = s.program.code[plan.pcs[e.thread].back()].op == Op::kSleep ? SYS_nanosleep : SYS_futex;
        }
        flush();
        break;
      }
      case TraceKind::kWake:
        // Woken by a FUTEX_WAKE in another thread's run (which stops right
        // after it, so that one thread runs at a time), by the clock or by a
        // signal: the woken thread returns to user space on its own.
        flush();
        run_end.resize(plan.actions.size() + 1, 0);
        run_end.back() = i;
        plan.actions.push_back(PlanAction{PlanAction::Kind::kWoken, e.thread, 0, -1, -2});
        plan.actions.back().by_signal = e.a < 0 && e.b != 0;
        break;
      case TraceKind::kKill:
      case TraceKind::kAssertFail:
        // The kernel kills the process when this thread next returns to user
        // space (rseq validation), or its next instruction faults or fails
        // an assert: resume it for that instruction and expect the end.
        if (e.thread >= 0 && open && run.thread == e.thread && !plan.pcs[e.thread].empty() &&
            s.program.code[plan.pcs[e.thread].back()].op == Op::kTgkill &&
            s.program.code[plan.pcs[e.thread].back()].aux == SIGKILL) {
          // tgkill(SIGKILL): the process dies inside the sender's run, in
          // its tgkill (complete_signal()'s group exit).
          plan.kill_thread = e.thread;
          run.next_pc = kExpectDeath;
          flush();
        } else if (e.thread >= 0) {
          plan.kill_thread = e.thread;
          plan.kill_pc = e.pc;
          flush();
          run_end.resize(plan.actions.size() + 1, 0);
          // One step: the kill happens on the way back to user space (rseq)
          // or in the faulting instruction itself; either way, no trap follows.
          plan.actions.push_back(PlanAction{PlanAction::Kind::kRun, e.thread, 1, -1, kExpectDeath});
        }
        break;
      default:
        break;
    }
  }
  flush();
  if (r.verdict == Verdict::kDeadlock || r.verdict == Verdict::kLivelock || r.verdict == Verdict::kStepLimit) {
    plan.open_end = r.verdict;
  }
  // next_pc of each run: where the thread is at the next trace entry about it
  // (its next step, the pc an event or abort found it at, the first
  // instruction of a handler whose frame the kernel pushed on its own), or -1 when it exits after the run, -2 when the run ends.
  for (size_t ai = 0; ai < plan.actions.size(); ++ai) {
    PlanAction& a = plan.actions[ai];
    if (a.kind == PlanAction::Kind::kWoken) {
      a.next_pc = WokenNextPc(r.trace, run_end[ai], a.thread);
      continue;
    }
    if (a.kind != PlanAction::Kind::kRun || a.next_pc == kExpectDeath || a.blocks) continue;
    a.next_pc = a.thread < static_cast<int>(r.threads.size()) && r.threads[a.thread].exited ? -1 : -2;
    // A run that ends in a fault ends in its handler's frame; the abort its
    // delivery made (a fault in a critical section) names the interrupted pc.
    const bool ends_in_fault = r.trace[run_end[ai]].kind == TraceKind::kSignal;
    for (size_t i = run_end[ai] + 1; i < r.trace.size(); ++i) {
      const TraceEntry& e = r.trace[i];
      if (e.thread != a.thread) continue;
      if (ends_in_fault && e.kind == TraceKind::kAbort) continue;
      // The thread's own syscalls (tgkill of itself, membarrier of its own
      // CPU, sched_setaffinity) take effect at their return, before it traps:
      // look further (a handler frame the return pushed, its next step). So
      // does the abort of that return's rseq fix-up (a call just before
      // start_ip returns into the section): the thread traps at abort_ip.
      if (!inj.count(i) && runner_at[i] == a.thread &&
          (e.kind == TraceKind::kSignal || e.kind == TraceKind::kIpi || e.kind == TraceKind::kMigrate ||
           e.kind == TraceKind::kAbort)) {
        continue;
      }
      if (e.kind == TraceKind::kStep || e.kind == TraceKind::kPreempt || e.kind == TraceKind::kMigrate ||
          e.kind == TraceKind::kSignal || e.kind == TraceKind::kIpi || e.kind == TraceKind::kAbort ||
          e.kind == TraceKind::kYield) {
        a.next_pc = e.pc;
        break;
      }
      if (e.kind == TraceKind::kSignalFrame) {  // delivered on its own (pending at sigreturn): in the handler
        a.next_pc = e.pc;
        break;
      }
      if (e.kind == TraceKind::kExit || e.kind == TraceKind::kKill) break;
    }
  }
  JoinSleeps(&plan);
  return plan;
}

uint64_t RealSleeps(const Scenario& s, const Plan& plan) {
  uint64_t n = 0;
  for (const std::vector<uint32_t>& pcs : plan.pcs) {
    for (uint32_t pc : pcs) n += s.program.code[pc].op == Op::kSleep ? 1 : 0;
  }
  return n;
}

// ---------------------------------------------------------------------------
// The tracee.

namespace {

JitProgram* g_jit = nullptr;  // set by RunPlan before fork; read by the child
bool g_need_ipi_helper = false;  // likewise: the run injects membarrier IPIs
thread_local ThreadRecord* tl_rec = nullptr;
std::atomic<pid_t> g_tracee{0};
// Set by KillCurrentTracee(): the tracee's SIGKILL was a request (Ctrl-C), not
// the scenario's doing. Reset by each Session before it forks.
std::atomic<bool> g_kill_requested{false};
constexpr int kExitTracemeFailed = 112;  // the tracee's exit status when PTRACE_TRACEME fails

constexpr int kMembarrierCmdPrivateExpeditedRseq = 1 << 7;
constexpr int kMembarrierCmdRegisterPrivateExpeditedRseq = 1 << 8;
constexpr int kMembarrierCmdFlagCpu = 1;

long Futex(int* addr, int op, int val, const timespec* ts = nullptr) {
  return syscall(SYS_futex, addr, op, val, ts, nullptr, 0);
}

}  // namespace

// The handler's entry: passes the live r14 (the step countdown) as a fourth
// argument. The live value, not the saved context's: when the kernel pushes
// two frames at once (two signals pending at one resume), the inner handler
// runs first and its sigreturn hands the outer one the countdown it left,
// while the outer frame's saved r14 is still the interrupted code's.
extern "C" void rseqmc_on_signal(int signo, siginfo_t*, void* uctx, int64_t live_r14);
asm(".text\n"
    ".globl rseqmc_signal_entry\n"
    ".type rseqmc_signal_entry, @function\n"
    "rseqmc_signal_entry:\n"
    "  mov %r14, %rcx\n"
    "  jmp rseqmc_on_signal\n"
    ".size rseqmc_signal_entry, .-rseqmc_signal_entry\n");
extern "C" void rseqmc_signal_entry(int, siginfo_t*, void*);

namespace {

// A fault (SIGSEGV, SIGBUS... raised by the kernel for the instruction at
// the frame's IP, si_code > 0: force_sig_fault(), not a tgkill) in IR
// instruction i. The kernel delivers it with the frame's IP at the faulting
// x86 instruction, or at abort_ip when rseq_signal_deliver() aborted a
// critical section first (kernel/signal.c handle_signal(), before
// setup_rt_frame()); sigreturn restarts the faulting instruction. The
// simulator counts each attempt as a scheduling step that executes nothing
// (Machine::ForceSigFault(); MakePlan counts it in the run), so on the kernel
// each attempt must run the block's countdown (one step) and leave no IR
// trace entry: the entry is removed here, and a frame in the body is moved
// back to the block's start (the body's loads before the fault are re-run:
// they only read registers), where the restart runs the countdown again and
// a stop after the handler's sigreturn is possible, as in the simulation.
// Before, the restart ran on inside the body: the kernel counted 17
// instructions where the simulator has 16 (fault_handler.rsq, 158 of 158
// schedules) and its stops fell one instruction early.
//
// At an abort stub the faulting instruction is the last one the thread
// started, the last entry of its IR trace (the tracer delivers no event
// inside a block). Any other IP (the call-depth overflow's store, a SIGSEGV
// raised on a system call's way out) is left alone.
void UndoFaultingAttempt(const siginfo_t* info, ucontext_t* uc) {
  const auto rip = static_cast<uint64_t>(uc->uc_mcontext.gregs[REG_RIP]);
  if (info == nullptr || info->si_code <= 0 || !g_jit->Contains(rip) || g_jit->InOriginalCode(rip)) return;
  const int k = g_jit->IndexOf(rip);
  if (k < 0) return;
  const bool in_body = rip >= g_jit->BodyAddress(static_cast<uint32_t>(k));
  const bool at_abort_stub = rip < g_jit->InstrAddress(static_cast<uint32_t>(k));
  if (!in_body && !at_abort_stub) return;
  const auto* code = reinterpret_cast<const uint8_t*>(rip);
  if (in_body && code[-2] == 0x0f && code[-1] == 0x05) return;  // right after `syscall`: no fault of its own
  if (!g_jit->options().ir_trace || tl_rec->trace_pos <= tl_rec->trace_begin) return;
  const auto* last = reinterpret_cast<const uint32_t*>(tl_rec->trace_pos) - 1;
  const uint32_t i = at_abort_stub ? *last : static_cast<uint32_t>(k);
  const std::vector<Instr>& prog = g_jit->scenario().program.code;
  if (*last != i || i >= prog.size()) return;
  switch (prog[i].op) {
    case Op::kLd: case Op::kLd32: case Op::kSt: case Op::kSt32: case Op::kCas: case Op::kXadd: case Op::kXchg:
      break;
    default:
      return;  // no memory access of the program's own: not its fault
  }
  tl_rec->trace_pos -= sizeof(uint32_t);
  if (in_body) uc->uc_mcontext.gregs[REG_RIP] = static_cast<greg_t>(g_jit->InstrAddress(i));
}

}  // namespace

bool RewindUnfinishedObserve(const JitProgram& jit, ucontext_t* uc, ThreadRecord* rec) {
  const auto rip = static_cast<uint64_t>(uc->uc_mcontext.gregs[REG_RIP]);
  if (!jit.Contains(rip) || jit.InOriginalCode(rip)) return false;
  const int i = jit.IndexOf(rip);
  if (i < 0 || jit.scenario().program.code[static_cast<uint32_t>(i)].op != Op::kObserve) return false;
  if (rip < jit.BodyAddress(static_cast<uint32_t>(i))) return false;  // before the body: at the boundary already
  if (jit.options().ir_trace && rec != nullptr && rec->trace_pos > rec->trace_begin &&
      *(reinterpret_cast<const uint32_t*>(rec->trace_pos) - 1) == static_cast<uint32_t>(i)) {
    rec->trace_pos -= sizeof(uint32_t);
  }
  uc->uc_mcontext.gregs[REG_RIP] = static_cast<greg_t>(jit.InstrAddress(static_cast<uint32_t>(i)));
  return true;
}

std::optional<int64_t> RunHandlerFromSignal(const JitProgram& jit, uint32_t handler, JitContext* h, ucontext_t* uc,
                                            int64_t live_r14) {
  const auto rip = static_cast<uint64_t>(uc->uc_mcontext.gregs[REG_RIP]);
  if (!jit.HoldsCountdown(rip) && rip != reinterpret_cast<uint64_t>(&rseqmc_signal_entry)) {
    jit.Call(handler, h, kHandlerNoCountdown);
    return std::nullopt;
  }
  const int64_t left = jit.Call(handler, h, live_r14);
  uc->uc_mcontext.gregs[REG_R14] = left;  // sigreturn restores it
  return left;
}

extern "C" void rseqmc_on_signal(int signo, siginfo_t* info, void* uctx, int64_t live_r14) {
  auto* uc = static_cast<ucontext_t*>(uctx);
  const Scenario& s = g_jit->scenario();
  const SignalSpec* spec = s.FindSignal(signo);
  if (!spec || spec->handler < 0 || !tl_rec) return;
  UndoFaultingAttempt(info, uc);
  if (RewindUnfinishedObserve(*g_jit, uc, tl_rec) && g_jit->options().traps) ++live_r14;
  if (g_jit->options().original_code) {
    // An abort the kernel applied while delivering this signal: the frame
    // returns to abort_ip with rseq_cs cleared by the fix-up; count it here,
    // since the handler may arm rseq_cs again before the thread gets there.
    const auto rip = static_cast<uint64_t>(uc->uc_mcontext.gregs[REG_RIP]);
    const auto& aborts = g_jit->original_abort_ips();
    const auto* cs = reinterpret_cast<const uint64_t*>(static_cast<char*>(__builtin_thread_pointer()) +
                                                       JitProgram::RseqOffset() + kRseqOffRseqCs);
    if (std::find(aborts.begin(), aborts.end(), rip) != aborts.end() && *cs == 0) {
      ++tl_rec->aborts;
      tl_rec->handler_abort_ip = rip;
    }
  }
  JitContext h;
  h.rec = tl_rec;
  h.r[1] = signo;
  RunHandlerFromSignal(*g_jit, static_cast<uint32_t>(spec->handler), &h, uc, live_r14);
}

namespace {

void* IpiHelper(void*) {
  SharedArea* sh = g_jit->shared();
  __atomic_store_n(&sh->ipi_helper_tid, static_cast<int32_t>(syscall(SYS_gettid)), __ATOMIC_RELEASE);
  for (;;) {
    while (__atomic_load_n(&sh->ipi_request, __ATOMIC_ACQUIRE) == 0) Futex(&sh->ipi_request, FUTEX_WAIT, 0);
    // After the plan's last IPI: exit, so that it no longer counts in
    // mm_users (Session::StopIpiHelper()).
    if (__atomic_load_n(&sh->ipi_request, __ATOMIC_ACQUIRE) == 2) syscall(SYS_exit, 0);
    const int cpu = sh->ipi_cpu;
    sh->ipi_result = static_cast<int>(
        syscall(SYS_membarrier, kMembarrierCmdPrivateExpeditedRseq, kMembarrierCmdFlagCpu, cpu));
    __atomic_store_n(&sh->ipi_request, 0, __ATOMIC_RELEASE);
    __atomic_store_n(&sh->ipi_done, 1, __ATOMIC_RELEASE);
    Futex(&sh->ipi_done, FUTEX_WAKE, 1);
  }
  return nullptr;
}

void PinToCpu(uint32_t cpu) {
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(cpu, &set);
  sched_setaffinity(0, sizeof(set), &set);
}

void* Worker(void* arg) {
  const int t = static_cast<int>(reinterpret_cast<intptr_t>(arg));
  prctl(PR_SET_PDEATHSIG, SIGKILL);  // per thread
  const ThreadSpec& ts = g_jit->scenario().threads[t];
  ThreadRecord* rec = g_jit->record(t);
  rec->rseq_area = JitProgram::ThisThreadRseqArea();
  __atomic_store_n(&rec->tid, static_cast<int32_t>(syscall(SYS_gettid)), __ATOMIC_RELEASE);  // ChildMain waits for it
  PinToCpu(ts.cpu);
  JitProgram::EnsureRseqRegistered(nullptr);
  if (!ts.rseq_registered) {
    char* area = static_cast<char*>(__builtin_thread_pointer()) + JitProgram::RseqOffset();
    syscall(SYS_rseq, area, JitProgram::RseqLength(), 1, kRseqSig);
  }
  JitContext ctx;
  ctx.rec = rec;
  for (const auto& [reg, value] : ts.args) ctx.r[reg] = value;
  tl_rec = rec;
  g_jit->Call(static_cast<uint32_t>(ts.entry), &ctx, 1);  // traps before the first instruction
  rec->ret = ctx.r[0];
  internal::DisarmRseqCs();
  rec->final_cpu = internal::ThisThreadCpu();
  __atomic_store_n(&rec->exited, 1, __ATOMIC_RELEASE);
  g_jit->DoneTrap();
  // The last thread to return is resumed only to take a signal still pending
  // for it (Session::DeliverPendingToLast()): it traps again and stays.
  if (__atomic_load_n(&g_jit->shared()->hold_last, __ATOMIC_ACQUIRE) != 0) {
    g_jit->DoneTrap();
    for (;;) pause();
  }
  // The tracer resumes a returned thread only when others are still to run
  // (Session::LetExit()): it exits, as the simulator's thread does, and
  // stops counting in mm_users (membarrier's single-thread shortcut) and
  // holding an mm_cid. The thread exits alone (SYS_exit, not exit_group);
  // the main thread (scenario thread 0) stays a zombie leader until the
  // process ends. The last thread to return is never resumed.
  syscall(SYS_exit, 0);
  for (;;) pause();
  return nullptr;
}

[[noreturn]] void ChildMain(pid_t parent) {
  prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (getppid() != parent) _exit(111);
  SharedArea* sh = g_jit->shared();
  sh->tgid = getpid();
  syscall(SYS_membarrier, kMembarrierCmdRegisterPrivateExpeditedRseq, 0, 0);
  // A nanosleep lasts its length plus the timer slack (50 us by default,
  // hrtimer_nanosleep() -> current->timer_slack_ns); 1 ns makes a scenario's
  // nanosecond sleeps last about as long as they say. Threads inherit it.
  prctl(PR_SET_TIMERSLACK, 1UL, 0, 0, 0);
  const Scenario& s = g_jit->scenario();
  internal::InstallScenarioSignals(s, rseqmc_signal_entry);
  // The concurrency IDs as the simulator starts them (sim/kernel/abi_mm_cid.cc):
  // the CPUs get IDs in the order of their first scenario thread. 6.4-6.18
  // keep an ID per CPU (pcpu_cid) and a running thread's migration moves it
  // (sched_mm_cid_migrate_to()), so the main thread moves to thread 0's CPU
  // first, taking ID 0 along. The IPI helper is created there (it inherits
  // the affinity) and runs with that CPU's ID, taking none of its own (it
  // still counts in mm_users). Each scenario thread is created on its own
  // CPU (pthread_attr_setaffinity_np: it never runs elsewhere, so it moves
  // no ID) and has run there, taking that CPU's ID or the next free one,
  // before the next is created.
  PinToCpu(s.threads[0].cpu);
  // The tracee has the scenario's threads and nothing else that holds an
  // mm_cid or counts in mm_users (membarrier's single-thread shortcut): the
  // IPI helper exists only when the run injects IPIs, and the main thread is
  // scenario thread 0.
  if (g_need_ipi_helper) {
    pthread_t helper;
    pthread_create(&helper, nullptr, IpiHelper, nullptr);
  }
  if (ptrace(PTRACE_TRACEME, 0, nullptr, nullptr) != 0) _exit(kExitTracemeFailed);
  raise(SIGSTOP);
  std::vector<pthread_t> th(s.threads.size());
  for (size_t t = 1; t < s.threads.size(); ++t) {
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(s.threads[t].cpu, &set);
    pthread_attr_setaffinity_np(&attr, sizeof(set), &set);
    pthread_create(&th[t], &attr, Worker, reinterpret_cast<void*>(static_cast<intptr_t>(t)));
    pthread_attr_destroy(&attr);
    while (__atomic_load_n(&g_jit->record(static_cast<int>(t))->tid, __ATOMIC_ACQUIRE) == 0) sched_yield();
  }
  Worker(nullptr);  // scenario thread 0 is this (main) thread
  for (;;) pause();
}

std::string Hex(uint64_t v) {
  std::ostringstream o;
  o << "0x" << std::hex << v;
  return o.str();
}

}  // namespace

void KillCurrentTracee() {
  const pid_t p = g_tracee.load();
  if (p > 0) {
    g_kill_requested.store(true);
    kill(p, SIGKILL);
  }
}

const char* RunEndName(RunEnd e) {
  switch (e) {
    case RunEnd::kCompleted: return "completed";
    case RunEnd::kLeftPlan: return "left the plan";
    case RunEnd::kHarnessError: break;
  }
  return "harness error";
}

std::string PtraceUnavailableReason() {
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0) return std::string("cannot probe ptrace: pipe failed: ") + std::strerror(errno);
  const pid_t parent = getpid();
  const pid_t pid = fork();
  if (pid < 0) {
    const int e = errno;
    close(fds[0]);
    close(fds[1]);
    return std::string("cannot probe ptrace: fork failed: ") + std::strerror(e);
  }
  if (pid == 0) {
    // Async-signal-safe calls only (the parent may have threads).
    close(fds[0]);
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != parent) _exit(1);
    if (ptrace(PTRACE_TRACEME, 0, nullptr, nullptr) != 0) {
      const int e = errno;
      if (write(fds[1], &e, sizeof e) != static_cast<ssize_t>(sizeof e)) _exit(3);
      _exit(2);
    }
    raise(SIGSTOP);  // a ptrace stop, reported to the parent
    _exit(0);
  }
  close(fds[1]);
  int st = 0;
  pid_t r;
  do {
    r = waitpid(pid, &st, __WALL);
  } while (r < 0 && errno == EINTR);
  std::string why;
  bool ended = r == pid && (WIFEXITED(st) || WIFSIGNALED(st));
  if (r != pid) {
    why = std::string("cannot probe ptrace: waitpid failed: ") + std::strerror(errno);
  } else if (WIFSTOPPED(st)) {
    why = "";  // stopped under our ptrace: it works
  } else if (WIFEXITED(st) && WEXITSTATUS(st) == 2) {
    int e = 0;
    ssize_t n;
    do {
      n = read(fds[0], &e, sizeof e);
    } while (n < 0 && errno == EINTR);
    const char* name = n == static_cast<ssize_t>(sizeof e) ? strerrorname_np(e) : nullptr;
    why = std::string("ptrace is not permitted here: PTRACE_TRACEME failed with ") +
          (name ? std::string(name) + " (" + std::strerror(e) + ")" : std::string("an unknown error"));
    std::ifstream yama("/proc/sys/kernel/yama/ptrace_scope");
    int scope = 0;
    if (yama >> scope && scope >= 3) {
      why += ": kernel.yama.ptrace_scope = 3 disables ptrace";
    } else {
      why += ": a seccomp filter or container policy denies ptrace, or rseqmc is itself traced (a debugger, "
             "strace -f)";
    }
    why += "; deterministic and outcomes modes need ptrace, --mode stress does not";
  } else {
    why = "cannot probe ptrace: the probe child ended unexpectedly (status " + std::to_string(st) + ")";
  }
  if (!ended) {
    kill(pid, SIGKILL);  // a traced, stopped child dies of SIGKILL too
    for (;;) {
      r = waitpid(pid, &st, __WALL);
      if (r < 0 && errno == EINTR) continue;
      if (r < 0) break;  // ECHILD: already reaped
      if (WIFEXITED(st) || WIFSIGNALED(st)) break;
    }
  }
  close(fds[0]);
  return why;
}

std::string HarnessUnavailableReason(uint32_t num_cpus, bool need_ptrace) {
#if !defined(__x86_64__)
  return "the real-kernel harness is x86-64 only";
#endif
  std::string why;
  if (!JitProgram::EnsureRseqRegistered(&why)) return why;
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof(set), &set) != 0) return "sched_getaffinity failed";
  uint32_t usable = 0;  // CPUs 0..usable-1 are all available
  while (usable < CPU_SETSIZE && CPU_ISSET(usable, &set)) ++usable;
  for (uint32_t c = 0; c < num_cpus; ++c) {
    if (!CPU_ISSET(c, &set)) {
      return "the scenario runs on CPUs 0.." + std::to_string(num_cpus - 1) + " and virtual CPU c runs on CPU c, but CPU " +
             std::to_string(c) + " is not available to this process" +
             (usable > 0 ? "; a scenario with at most " + std::to_string(usable) +
                               " CPUs can run here (its `cpus` line, or -D if it takes the count from a constant)"
                         : "; CPU 0 must be available (check taskset)");
    }
  }
  return need_ptrace ? PtraceUnavailableReason() : "";
}

void SetCurrentTracee(int pid) { g_tracee = pid; }

namespace {

// One tracee process: fork, setup until every worker stopped before its first
// instruction, the ptrace primitives, results, and teardown.
class Session {
 public:
  Session(JitProgram& jit, const TracerOptions& opt, RealResult& res, bool ipi_helper)
      : jit_(jit), s_(jit.scenario()), res_(res), n_(static_cast<int>(s_.threads.size())) {
    g_need_ipi_helper = ipi_helper;
    for (const ThreadSpec& ts : s_.threads) {
      if (ts.entry < 0) throw HarnessError("thread " + ts.name + " has a C++ body; only IR threads run on the kernel");
    }
    jit.ResetState();
    g_jit = &jit;
    const pid_t parent = getpid();
    // Fork with the scenario's CPUs as affinity: the child's mm starts with
    // that CPU set (mm_cpus_allowed, which bounds mm_cid, only grows), as a
    // process started on those CPUs would.
    cpu_set_t saved, cpus;
    const bool restrict = sched_getaffinity(0, sizeof(saved), &saved) == 0;
    CPU_ZERO(&cpus);
    for (uint32_t c = 0; c < s_.num_cpus; ++c) CPU_SET(c, &cpus);
    if (restrict) sched_setaffinity(0, sizeof(cpus), &cpus);
    pid_ = fork();
    if (pid_ == 0) ChildMain(parent);
    const int fork_errno = errno;
    if (restrict) sched_setaffinity(0, sizeof(saved), &saved);
    if (pid_ < 0) throw HarnessError(std::string("fork failed: ") + std::strerror(fork_errno));
    g_kill_requested = false;
    g_tracee = pid_;
    wd_ = std::make_unique<internal::Watchdog>(pid_, opt.timeout_s);
    timeout_s_ = opt.timeout_s;
    tids.assign(n_, 0);
    at_pc.assign(n_, -1);
    plain.assign(n_, false);
    done.assign(n_, false);
    resumed_plainly.assign(n_, false);
    asleep.assign(n_, false);
    woke.assign(n_, false);
    held_signal.assign(n_, 0);
    sleep_nr.assign(n_, -1);
    original_ = jit.options().original_code;
    original_aborts.assign(n_, 0);
    breakpoint.assign(n_, 0);
    res.original_code = original_;
  }
  ~Session() { Teardown(); }

  JitProgram& jit_;
  const Scenario& s_;
  RealResult& res_;
  const int n_;
  pid_t pid_ = 0;
  std::unique_ptr<internal::Watchdog> wd_;
  double timeout_s_ = 0;
  std::vector<pid_t> tids;
  std::vector<int64_t> at_pc;
  std::vector<bool> plain, done;
  std::vector<bool> resumed_plainly;  // the last resume let the kernel see the stop (an event is due)
  bool dead = false;
  int term_signal = 0;       // the tracee's death: the signal that killed it (0: it exited)
  int exit_status = 0;       // or its exit status
  bool assert_failed = false;
  bool death_expected = false;  // the running plan action expects the process to die (kExpectDeath)
  std::vector<bool> asleep;     // put to sleep in the kernel by a `blocks` run; its next stop not yet seen
  std::vector<bool> woke;       // was asleep; its stop after waking was seen (at_pc is where)
  // A woken thread stopped in a signal-delivery-stop (WokenNextPc): the
  // signal it holds there (0 = none); Resume() hands it back to the kernel.
  std::vector<int> held_signal;
  std::vector<long> sleep_nr;  // the system call of each thread's latest `blocks` run
  std::optional<Verdict> open_end;  // Plan::open_end

  // What one wait produced, after handling the stops that need no decision.
  // kWoke: a thread that was asleep in the kernel stopped at its first
  // boundary after waking (at_pc set, woke[t] set).
  enum class Got { kTrap, kDone, kAssert, kDeath, kOther, kError, kWoke };
  // /proc/<tid>/stat's state letter of thread t ('S' asleep, 't' in a ptrace
  // stop, 'R' running), and the number of the system call it sleeps in
  // (/proc/<tid>/syscall; -1 when it runs or the file cannot be read).
  char ProcState(int t, long* syscall_nr) const {
    const std::string dir = "/proc/" + std::to_string(pid_) + "/task/" + std::to_string(tids[t]);
    *syscall_nr = -1;
    std::ifstream sc(dir + "/syscall");
    std::string first;
    if (sc >> first && !first.empty() && first[0] >= '0' && first[0] <= '9') *syscall_nr = std::atol(first.c_str());
    std::ifstream st(dir + "/stat");
    std::string line;
    if (!std::getline(st, line)) return 0;
    const size_t rp = line.rfind(')');
    return rp != std::string::npos && rp + 2 < line.size() ? line[rp + 2] : 0;
  }
  // After a `blocks` run of t ending in system call `nr` (futex, nanosleep):
  // waits until /proc shows t asleep in it. A futex_wait that returned (its
  // thread stopped at a trap instead) is a divergence; a nanosleep may end
  // before it is seen (its stop is then collected as the woken thread's). The
  // thread needs microseconds to get there; the 2 s limit is a margin of
  // 1000 over what a loaded host (load 35) was seen to take for a wake-up.
  //
  // On its way there the thread may stop in the tracer's hands: a
  // signal-delivery-stop (a signal pending when it was resumed, delivered
  // before its first instruction), passed on as Next() would; a trap, which
  // after a nanosleep is its stop after waking (collected as such), and
  // after a futex_wait means the call returned.
  bool WaitAsleep(int t, long nr) {
    sleep_nr[t] = nr;
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(2);
    for (;;) {
      long in = -1;
      const char state = ProcState(t, &in);
      if (state == 'S' && in == nr) break;
      if (state != 'R' && state != 'S' && state != 'D') {
        int st = 0;
        const pid_t w = waitpid(tids[t], &st, __WALL | WNOHANG);
        std::optional<Got> got;
        if (w == tids[t]) {
          int got_t = t;
          got = OnStop(w, st, &got_t);
          if (got == Got::kTrap && nr == SYS_nanosleep) {
            woke[t] = true;  // slept and woke before /proc showed it
            Log(s_.threads[t].name + " slept in the kernel (system call " + std::to_string(nr) + ") and woke");
            return true;
          }
          if (got && got != Got::kTrap && got != Got::kDone) return false;
        }
        // Not yet reported to waitpid, or passed on: it goes on to its call.
        if (got || (w != tids[t] && !(w == 0 && state == 't'))) {
          res_.divergence = s_.threads[t].name + " did not sleep in futex_wait on the kernel (the call returned; " +
                            "the simulator has it wait)";
          return false;
        }
      }
      if (std::chrono::steady_clock::now() > deadline) {
        Fail(s_.threads[t].name + " did not reach its sleep in system call " + std::to_string(nr) + " within 2 s");
        return false;
      }
      timespec ts{0, 50 * 1000};
      nanosleep(&ts, nullptr);
    }
    asleep[t] = true;
    Log(s_.threads[t].name + " sleeps in the kernel (system call " + std::to_string(nr) + ")");
    return true;
  }
  // The plan's kWoken for t: waits for t's first stop after waking (other
  // woken threads' stops are kept for their own kWoken) and checks it is at
  // `next_pc` (-2: not checked). False if the run ends or diverged here.
  //
  // `by_signal`: the simulation ends the sleep with a signal (-EINTR). A real
  // nanosleep that ended first (the thread stopped at a trap, not at the
  // signal's delivery) cannot be held that long: simulated time stands still
  // while instructions run, the real clock does not. That run is a harness
  // error, not a disagreement.
  bool CollectWoken(int t, int64_t next_pc, bool by_signal) {
    while (!woke[t]) {
      int got_t = -1;
      const std::optional<Got> got = NextOrStillAsleep(t, &got_t);
      if (!got) return false;  // left asleep: res_.divergence says so
      if (got == Got::kWoke) continue;
      if (got == Got::kTrap || got == Got::kDone) {
        res_.divergence = s_.threads[got_t].name + " stopped while " + s_.threads[t].name + " was waking up";
      }
      return false;
    }
    woke[t] = false;
    if (by_signal && sleep_nr[t] == SYS_nanosleep && held_signal[t] == 0) {
      Fail(s_.threads[t].name + "'s nanosleep ended on the kernel before the signal that ends it in the " +
           "simulation came (simulated time stands still while instructions run; the real clock does not)");
      return false;
    }
    Log(s_.threads[t].name + " woke and stopped at " + s_.program.DescribeIndex(static_cast<uint32_t>(at_pc[t])));
    if (next_pc >= 0 && at_pc[t] != next_pc) {
      res_.divergence = s_.threads[t].name + " woke and stopped at " +
                        s_.program.DescribeIndex(static_cast<uint32_t>(at_pc[t])) + "; the simulation has it at " +
                        s_.program.DescribeIndex(static_cast<uint32_t>(next_pc));
      return false;
    }
    return true;
  }

  // Next() for CollectWoken(t): a stop, or nullopt (with res_.divergence) when
  // t, asleep in futex_wait, was not woken. The plan wakes it in a call that
  // has returned (the waker's FUTEX_WAKE or tgkill, the tracer's tgkill):
  // try_to_wake_up() has then made it runnable, 'R' in /proc, so it is
  // reported at once when /proc still shows it asleep in futex_wait
  // throughout kLeftAsleepMargin. The margin is not a wait for the wake (that
  // is done): it keeps a woken thread that sleeps again on its way out of the
  // call (a sleeping lock, a page fault) from passing for one left asleep,
  // and is 1000 times what such a sleep takes. A nanosleep ends on the real
  // clock; its end is waited for (the watchdog bounds it).
  static constexpr auto kLeftAsleepMargin = std::chrono::milliseconds(20);
  std::optional<Got> NextOrStillAsleep(int t, int* got_t) {
    if (sleep_nr[t] != SYS_futex) return Next(got_t);
    bool seen_asleep = false;  // in the latest polls without a break
    std::chrono::steady_clock::time_point asleep_since{};
    for (;;) {
      int st = 0;
      const pid_t w = waitpid(-1, &st, __WALL | WNOHANG);
      if (w < 0 && errno == EINTR) continue;
      if (w < 0) {
        Fail("waitpid failed");
        dead = true;
        return Got::kError;
      }
      if (w > 0) {
        if (const std::optional<Got> got = OnStop(w, st, got_t)) return got;
        seen_asleep = false;
        continue;
      }
      long in = -1;
      const auto now = std::chrono::steady_clock::now();
      if (ProcState(t, &in) == 'S' && in == SYS_futex) {
        if (!seen_asleep) asleep_since = now;
        seen_asleep = true;
        if (now - asleep_since >= kLeftAsleepMargin) {
          res_.divergence = s_.threads[t].name + " still sleeps in futex_wait on the kernel; the simulation has it " +
                            "woken here (the kernel woke fewer threads)";
          return std::nullopt;
        }
      } else {
        seen_asleep = false;
      }
      timespec ts{0, 50 * 1000};
      nanosleep(&ts, nullptr);
    }
  }

  // Original-bytes mode (tracer.h): aborts counted at the abort_ip breakpoints,
  // and each thread's DR0 (0 = disarmed).
  bool original_ = false;
  std::vector<uint64_t> original_aborts;
  std::vector<uint64_t> breakpoint;

  void Log(std::string line) { res_.log.push_back(std::move(line)); }
  void Fail(std::string why) {
    if (res_.harness_error.empty()) res_.harness_error = std::move(why);
  }
  int ThreadOf(pid_t tid) {
    for (int t = 0; t < n_; ++t) {
      if (tids[t] == tid) return t;
    }
    for (int t = 0; t < n_; ++t) {
      if (jit_.record(t)->tid == tid) {
        tids[t] = tid;
        return t;
      }
    }
    return -1;
  }
  void NoteDeath(int st) {
    dead = true;
    if (WIFSIGNALED(st)) term_signal = WTERMSIG(st);
    if (WIFEXITED(st)) exit_status = WEXITSTATUS(st);
  }
  static bool WaitAny(pid_t* tid, int* st) {
    for (;;) {
      pid_t r = waitpid(-1, st, __WALL);
      if (r > 0) {
        *tid = r;
        return true;
      }
      if (errno == EINTR) continue;
      return false;
    }
  }
  static bool Regs(pid_t tid, user_regs_struct* regs) { return ptrace(PTRACE_GETREGS, tid, nullptr, regs) == 0; }
  static uint64_t RseqCsAddr(const user_regs_struct& regs) {
    return regs.fs_base + JitProgram::RseqOffset() + kRseqOffRseqCs;
  }
  // Resume through the re-arm stub: no rseq abort for this stop.
  bool ResumeQuiet(int t, user_regs_struct& regs, uint64_t continue_at) {
    const pid_t tid = tids[t];
    errno = 0;
    long w = ptrace(PTRACE_PEEKDATA, tid, reinterpret_cast<void*>(RseqCsAddr(regs)), nullptr);
    if (errno != 0) return false;
    const uint64_t cs = static_cast<uint64_t>(w);
    // rseq_cs := 0 while stopped: rseq_get_rseq_cs() validates a non-zero
    // rseq_cs (signature, abort_ip outside the section) on every
    // notify-resume, even with ip outside the section; the stub re-arms it.
    if (cs != 0 && ptrace(PTRACE_POKEDATA, tid, reinterpret_cast<void*>(RseqCsAddr(regs)), nullptr) != 0) {
      return false;
    }
    // The stub's two words, just below the thread's stack pointer (JIT code
    // keeps nothing below rsp).
    regs.rsp -= 16;
    if (ptrace(PTRACE_POKEDATA, tid, reinterpret_cast<void*>(regs.rsp), reinterpret_cast<void*>(cs)) != 0 ||
        ptrace(PTRACE_POKEDATA, tid, reinterpret_cast<void*>(regs.rsp + 8), reinterpret_cast<void*>(continue_at)) != 0) {
      return false;
    }
    regs.rip = jit_.rearm_stub();
    return ptrace(PTRACE_SETREGS, tid, nullptr, &regs) == 0 && ptrace(PTRACE_CONT, tid, nullptr, nullptr) == 0;
  }
  static bool PokeDebugReg(pid_t tid, int k, uint64_t value) {
    return ptrace(PTRACE_POKEUSER, tid, reinterpret_cast<void*>(offsetof(struct user, u_debugreg) + 8 * k),
                  reinterpret_cast<void*>(value)) == 0;
  }
  // Original-bytes mode: DR1..DR3 := the abort_ips, DR0 := `bp` (0 = off);
  // DR7 enables them as 1-byte execute breakpoints (L0..L3; R/W and LEN 0).
  bool SetBreakpoints(int t, uint64_t bp, bool with_aborts) {
    const std::vector<uint64_t>& aborts = jit_.original_abort_ips();
    uint64_t dr7 = 0;
    if (with_aborts) {
      for (size_t k = 0; k < aborts.size() && k < 3; ++k) {
        if (!PokeDebugReg(tids[t], static_cast<int>(k) + 1, aborts[k])) return false;
      }
    }
    for (size_t k = 0; k < aborts.size() && k < 3; ++k) dr7 |= uint64_t{1} << (2 * (k + 1));
    if (bp != 0) {
      if (!PokeDebugReg(tids[t], 0, bp)) return false;
      dr7 |= 1;
    }
    breakpoint[t] = bp;
    return PokeDebugReg(tids[t], 7, dr7);
  }
  // Resumes woken thread t from its signal-delivery-stop (held_signal[t]):
  // the countdown is set where it stands (in its blocking call's code, the
  // handler about to run counts down first) and the held signal is sent
  // again and dropped from the stop, so that get_signal() dequeues it with any
  // other pending one in the kernel's order (next_signal(): synchronous
  // signals, then the lowest number), as the simulator delivers them when
  // the thread runs. The blocking call was a context switch already, so
  // there is no quiet resume to choose.
  bool ResumeHeld(int t, user_regs_struct& regs, uint64_t steps) {
    const int sig = held_signal[t];
    held_signal[t] = 0;
    regs.r14 = steps + 1;
    if (syscall(SYS_tgkill, pid_, tids[t], sig) != 0) return false;
    return ptrace(PTRACE_SETREGS, tids[t], nullptr, &regs) == 0 && ptrace(PTRACE_CONT, tids[t], nullptr, nullptr) == 0;
  }
  // Resumes thread t at its boundary with `steps` instructions to run before
  // the next trap (huge = none): plainly (the stop counts as the preemption it
  // is) or quietly. Original-bytes mode: `steps` counts JIT instructions only
  // and `bp` is the DR0 breakpoint (0 = none).
  bool Resume(int t, uint64_t steps, bool plainly, uint64_t bp = 0) {
    user_regs_struct regs;
    if (!Regs(tids[t], &regs)) return false;
    resumed_plainly[t] = plainly;
    if (held_signal[t] != 0) return ResumeHeld(t, regs, steps);
    const uint64_t at = jit_.InstrAddress(static_cast<uint32_t>(at_pc[t]));
    regs.r14 = steps + 1;
    if (original_) {
      if (bp != breakpoint[t] && !SetBreakpoints(t, bp, false)) return false;
      // RF (set by the kernel after a breakpoint stop) would let the first
      // instruction after an abort fix-up pass its abort_ip breakpoint.
      constexpr uint64_t kEflagsRf = 1u << 16;
      regs.eflags &= ~kEflagsRf;
    }
    if (plainly) {
      regs.rip = at;
      return ptrace(PTRACE_SETREGS, tids[t], nullptr, &regs) == 0 &&
             ptrace(PTRACE_CONT, tids[t], nullptr, nullptr) == 0;
    }
    return ResumeQuiet(t, regs, at);
  }

  // Waits for the tracee's SIGSTOP, then for every worker's first trap.
  void Setup() {
    int st = 0;
    pid_t w = waitpid(pid_, &st, __WALL);
    if (w != pid_ || !WIFSTOPPED(st)) {
      if (w == pid_ && WIFEXITED(st) && WEXITSTATUS(st) == kExitTracemeFailed) {
        res_.unavailable = "PTRACE_TRACEME failed in the tracee (ptrace not permitted)";
        Fail(res_.unavailable);
      } else {
        Fail("the tracee did not stop after fork");
      }
      dead = true;
      return;
    }
    ptrace(PTRACE_SETOPTIONS, pid_, nullptr, reinterpret_cast<void*>(PTRACE_O_TRACECLONE | PTRACE_O_EXITKILL));
    ptrace(PTRACE_CONT, pid_, nullptr, nullptr);
    int ready = 0;
    while (!dead && ready < n_) {
      pid_t tid;
      if (!WaitAny(&tid, &st)) {
        Fail("waitpid failed during setup");
        dead = true;
        break;
      }
      if (WIFEXITED(st) || WIFSIGNALED(st)) {
        NoteDeath(st);
        Fail("the tracee died during setup");
        dead = true;
        break;
      }
      if (!WIFSTOPPED(st)) continue;
      const int sig = WSTOPSIG(st);
      if ((st >> 16) != 0 || sig == SIGSTOP) {
        ptrace(PTRACE_CONT, tid, nullptr, nullptr);
        continue;
      }
      if (sig == SIGTRAP) {
        const int t = ThreadOf(tid);
        user_regs_struct regs;
        if (t < 0 || !Regs(tid, &regs)) {
          Fail("trap from an unknown thread during setup");
          dead = true;
          break;
        }
        at_pc[t] = jit_.IndexOf(regs.rip - 1);
        ++ready;
        ++res_.stops;
        continue;
      }
      ptrace(PTRACE_CONT, tid, nullptr, reinterpret_cast<void*>(static_cast<intptr_t>(sig)));
    }
    for (int t = 0; t < n_ && !dead && original_; ++t) {
      if (!SetBreakpoints(t, 0, true)) {
        Fail(std::string("setting the debug registers of the tracee failed: ") + std::strerror(errno));
        dead = true;
      }
    }
    if (!dead) Log("setup: " + std::to_string(n_) + " threads stopped before their first instruction");
  }

  // Applies an injected event to stopped thread t.
  void ApplyEvent(int t, PlanAction::Kind kind, int arg, bool blocked = false) {
    const std::string who = s_.threads[t].name;
    const std::string where = at_pc[t] >= 0 ? s_.program.DescribeIndex(static_cast<uint32_t>(at_pc[t])) : "?";
    switch (kind) {
      case PlanAction::Kind::kPreempt:
        plain[t] = true;
        Log("preempt " + who + " (stopped at " + where + ")");
        break;
      case PlanAction::Kind::kMigrate: {
        cpu_set_t set;
        CPU_ZERO(&set);
        CPU_SET(arg, &set);
        if (sched_setaffinity(tids[t], sizeof(set), &set) != 0) Fail("sched_setaffinity of the tracee failed");
        plain[t] = true;
        Log("migrate " + who + " to cpu" + std::to_string(arg) + " (sched_setaffinity while stopped at " + where + ")");
        break;
      }
      case PlanAction::Kind::kSignal: {
        if (Ignored(s_, arg)) {
          Log("signal " + SignalName(arg) + " to " + who + ": ignored, not sent");
          break;
        }
        if (syscall(SYS_tgkill, pid_, tids[t], arg) != 0) Fail("tgkill of the tracee failed");
        // A blocked signal stays pending: no rseq event until its delivery,
        // so this stop must not count as a preemption either.
        if (!blocked) plain[t] = true;
        Log("signal " + SignalName(arg) + " to " + who + " (tgkill while stopped at " + where + ")" +
            (blocked ? "; blocked, pending" : ""));
        break;
      }
      case PlanAction::Kind::kIpi: {
        SharedArea* sh = jit_.shared();
        __atomic_store_n(&sh->ipi_done, 0, __ATOMIC_RELEASE);
        sh->ipi_cpu = arg;
        __atomic_store_n(&sh->ipi_request, 1, __ATOMIC_RELEASE);
        Futex(&sh->ipi_request, FUTEX_WAKE, 1);
        const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(2);
        while (__atomic_load_n(&sh->ipi_done, __ATOMIC_ACQUIRE) == 0 && std::chrono::steady_clock::now() < deadline) {
          timespec ts{0, 10 * 1000 * 1000};
          Futex(&sh->ipi_done, FUTEX_WAIT, 0, &ts);
        }
        if (__atomic_load_n(&sh->ipi_done, __ATOMIC_ACQUIRE) == 0) Fail("the IPI helper did not answer");
        plain[t] = true;
        Log("membarrier(RSEQ) IPI of cpu" + std::to_string(arg) + " hitting " + who + " (stopped at " + where +
            "; returned " + std::to_string(sh->ipi_result) + ")");
        break;
      }
      case PlanAction::Kind::kTouched:
        plain[t] = true;
        break;
      case PlanAction::Kind::kRun:
      case PlanAction::Kind::kWoken:
        break;
    }
  }

  // Runs thread t for one kRun action: resumes it (plainly if an event is
  // due) for leg.countdown JIT instructions; in original-bytes mode first to
  // the staging stop, then quietly on to the DR0 breakpoint (tracer.h).
  // Returns what the last wait produced, its thread in *got_t; kOther when
  // the staging stop was not where the plan has it (res_.divergence says so).
  Got RunLeg(int t, const OriginalLeg& leg, int* got_t) {
    const std::string who = s_.threads[t].name;
    if (!Resume(t, leg.countdown, plain[t], leg.stage_pc >= 0 ? 0 : leg.breakpoint)) {
      Fail("resuming " + who + " failed: " + std::strerror(errno));
      dead = true;
      return Got::kError;
    }
    plain[t] = false;
    const Got got = Next(got_t);
    if (leg.stage_pc < 0 || got != Got::kTrap || *got_t != t) return got;
    // The staging stop is not in the schedule: resumed quietly.
    if (at_pc[t] != leg.stage_pc) {
      res_.divergence = who + " is at " + s_.program.DescribeIndex(static_cast<uint32_t>(at_pc[t])) +
                        " where the simulation has it pass " +
                        s_.program.DescribeIndex(static_cast<uint32_t>(leg.stage_pc));
      return Got::kOther;
    }
    if (!Resume(t, leg.countdown2, false, leg.breakpoint)) {
      Fail("resuming " + who + " failed: " + std::strerror(errno));
      dead = true;
      return Got::kError;
    }
    return Next(got_t);
  }

  // Original-bytes mode: a breakpoint stop of thread t (tid wt) in the
  // original code. An abort_ip breakpoint counts an abort if one landed and
  // resumes the thread (nullopt: keep waiting); DR0 is the planned stop.
  std::optional<Got> OriginalTrap(int t, pid_t wt, const user_regs_struct& r2) {
    const auto& aborts = jit_.original_abort_ips();
    if (std::find(aborts.begin(), aborts.end(), r2.rip) != aborts.end()) {
      // The breakpoint fires before abort_ip's first instruction (the kernel
      // sets RF, so it runs on). An abort landed if the kernel's fix-up
      // cleared rseq->rseq_cs (kernel/rseq.c rseq_ip_fixup()); code jumping
      // there itself (librseq's failed cpu_id comparison) leaves it armed,
      // and the simulator counts no abort then.
      errno = 0;
      const long cs = ptrace(PTRACE_PEEKDATA, wt, reinterpret_cast<void*>(RseqCsAddr(r2)), nullptr);
      if (errno != 0) {
        Fail("reading rseq->rseq_cs of the tracee failed");
        dead = true;
        return Got::kError;
      }
      ThreadRecord* rec = jit_.record(t);
      if (rec->handler_abort_ip == r2.rip) {
        rec->handler_abort_ip = 0;  // counted by the signal wrapper
      } else if (cs == 0) {
        ++original_aborts[t];
      }
      ptrace(PTRACE_CONT, wt, nullptr, nullptr);
      return std::nullopt;
    }
    if (r2.rip == breakpoint[t]) {
      at_pc[t] = jit_.IndexOf(r2.rip);
      return Got::kTrap;
    }
    res_.divergence = s_.threads[t].name + " stopped at original instruction " + Hex(r2.rip) +
                      ", where no breakpoint of the plan was";
    return Got::kOther;
  }

  // Thread t returned (its done trap) while others are still to run: it is
  // resumed and exits (Worker()), as the simulator's thread does, and this
  // waits until it is gone, so that the thread that runs next sees the
  // process without it (membarrier_private_expedited()'s mm_users == 1
  // shortcut, kernel/sched/membarrier.c; exit_mm() runs before the exit is
  // reported). A thread other than the leader is
  // reported to waitpid(); the leader (scenario thread 0, tid = pid) is not
  // while other threads live (delay_group_leader()), so /proc is watched
  // until it is a zombie. False (with the reason) if it did not exit.
  bool LetExit(int t) {
    const pid_t tid = tids[t];
    if (ptrace(PTRACE_CONT, tid, nullptr, nullptr) != 0) {
      Fail("resuming returned thread " + s_.threads[t].name + " to exit failed: " + std::strerror(errno));
      dead = true;
      return false;
    }
    const bool leader = tid == pid_;
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(2);
    for (;;) {
      int st = 0;
      const pid_t w = waitpid(tid, &st, __WALL | (leader ? WNOHANG : 0));
      if (w < 0 && errno == EINTR) continue;
      if (w < 0) {
        Fail("waiting for returned thread " + s_.threads[t].name + " to exit failed: " + std::strerror(errno));
        dead = true;
        return false;
      }
      if (w == tid && (WIFEXITED(st) || WIFSIGNALED(st))) {
        if (WIFSIGNALED(st) || leader) {
          NoteDeath(st);  // the whole process ended (a kill, or the leader was the last)
          return false;
        }
        break;
      }
      if (w == tid && WIFSTOPPED(st)) {
        // On its way out. A signal (outcome mode: another thread's tgkill
        // checked `exited` just before this thread set it) is delivered: its
        // handler runs as if before the return, an outcome the simulator has
        // too (the handler's observations last, the sender's tgkill 0). A
        // trap (the handler's countdown) or an event stop just goes on.
        const int sig = WSTOPSIG(st);
        const bool deliver = (st >> 16) == 0 && sig != SIGTRAP && sig != SIGSTOP;
        ptrace(PTRACE_CONT, tid, nullptr, reinterpret_cast<void*>(static_cast<intptr_t>(deliver ? sig : 0)));
        continue;
      }
      long in = -1;
      const char state = ProcState(t, &in);
      if (leader && (state == 'Z' || state == 'X' || state == 0)) break;
      if (std::chrono::steady_clock::now() > deadline) {
        Fail("returned thread " + s_.threads[t].name + " did not exit within 2 s");
        dead = true;
        return false;
      }
      timespec ts{0, 20 * 1000};
      nanosleep(&ts, nullptr);
    }
    Log(s_.threads[t].name + " returned and exited");
    return true;
  }

  // Whether a signal is pending for thread t (/proc: SigPnd, its own, or
  // ShdPnd, the process's).
  bool HasPendingSignal(int t) const {
    std::ifstream st("/proc/" + std::to_string(pid_) + "/task/" + std::to_string(tids[t]) + "/status");
    std::string line;
    while (std::getline(st, line)) {
      if ((line.rfind("SigPnd:", 0) == 0 || line.rfind("ShdPnd:", 0) == 0) &&
          line.find_first_not_of("0", line.find_first_not_of(" \t", 7)) != std::string::npos) {
        return true;
      }
    }
    return false;
  }
  // Thread t returned last (every other one has). A signal sent to it just
  // before its return (outcome mode: the sender's tgkill checked `exited`
  // just before t set it) is still pending: it is delivered, its handler
  // running as if before the return (the simulator's outcome: the sender's
  // tgkill returned 0, so the handler ran), and t traps again and stays
  // (SharedArea::hold_last). Without a pending signal t stays where it is.
  bool DeliverPendingToLast(int t) {
    if (!HasPendingSignal(t)) return true;
    __atomic_store_n(&jit_.shared()->hold_last, 1, __ATOMIC_RELEASE);
    if (ptrace(PTRACE_CONT, tids[t], nullptr, nullptr) != 0) {
      Fail("resuming returned thread " + s_.threads[t].name + " for its pending signal failed");
      dead = true;
      return false;
    }
    for (;;) {
      int st = 0;
      const pid_t w = waitpid(tids[t], &st, __WALL);
      if (w < 0 && errno == EINTR) continue;
      if (w != tids[t] || !WIFSTOPPED(st)) {
        if (w == tids[t]) NoteDeath(st);
        dead = true;
        return false;
      }
      const int sig = WSTOPSIG(st);
      user_regs_struct regs;
      if (sig == SIGTRAP && Regs(tids[t], &regs) && regs.rip - 1 == jit_.done_trap()) break;
      const bool deliver = (st >> 16) == 0 && sig != SIGTRAP && sig != SIGSTOP;
      ptrace(PTRACE_CONT, tids[t], nullptr, reinterpret_cast<void*>(static_cast<intptr_t>(deliver ? sig : 0)));
    }
    Log(s_.threads[t].name + " returned last and took the signal pending for it");
    return true;
  }

  // After the plan's last injected IPI: the IPI helper thread exits, and
  // this waits until it is gone (an untraced thread leaves /proc once
  // released, after exit_mm()), so that a later membarrier of the process's
  // last scenario thread takes the mm_users == 1 shortcut as in the
  // simulator. False (with the reason) if it did not go within 2 s.
  bool StopIpiHelper() {
    SharedArea* sh = jit_.shared();
    const pid_t tid = __atomic_load_n(&sh->ipi_helper_tid, __ATOMIC_ACQUIRE);
    __atomic_store_n(&sh->ipi_request, 2, __ATOMIC_RELEASE);
    Futex(&sh->ipi_request, FUTEX_WAKE, 1);
    const std::string dir = "/proc/" + std::to_string(pid_) + "/task/" + std::to_string(tid);
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(2);
    while (tid > 0 && access(dir.c_str(), F_OK) == 0) {
      if (std::chrono::steady_clock::now() > deadline) {
        Fail("the IPI helper did not exit within 2 s");
        return false;
      }
      timespec ts{0, 20 * 1000};
      nanosleep(&ts, nullptr);
    }
    Log("the IPI helper exited after the plan's last IPI");
    return true;
  }

  // Waits for the next stop that needs a decision. `*t` = the thread.
  Got Next(int* t) {
    for (;;) {
      pid_t wt;
      int st;
      if (!WaitAny(&wt, &st)) {
        Fail("waitpid failed");
        dead = true;
        return Got::kError;
      }
      if (const std::optional<Got> got = OnStop(wt, st, t)) return *got;
    }
  }

  // Handles wait status `st` of tracee thread `wt`: a stop that needs no
  // decision (a ptrace event, a signal-delivery-stop to pass on or drop, an
  // abort_ip breakpoint) is resumed and gives nullopt; otherwise what it is,
  // with its thread in *t.
  std::optional<Got> OnStop(pid_t wt, int st, int* t) {
    if (WIFEXITED(st) || WIFSIGNALED(st)) {
      NoteDeath(st);
      return Got::kDeath;
    }
    if (!WIFSTOPPED(st)) return std::nullopt;
    const int sig = WSTOPSIG(st);
    if ((st >> 16) != 0 || sig == SIGSTOP) {
      ptrace(PTRACE_CONT, wt, nullptr, nullptr);
      return std::nullopt;
    }
    *t = ThreadOf(wt);
    if (*t < 0) {
      // The tracee's main thread: pass its signals on.
      ptrace(PTRACE_CONT, wt, nullptr, reinterpret_cast<void*>(static_cast<intptr_t>(sig == SIGTRAP ? 0 : sig)));
      return std::nullopt;
    }
    if (sig == SIGTRAP) {
      user_regs_struct r2;
      if (!Regs(wt, &r2)) {
        Fail("PTRACE_GETREGS failed");
        dead = true;
        return Got::kError;
      }
      ++res_.stops;
      if (original_ && jit_.InOriginalCode(r2.rip)) {
        return OriginalTrap(*t, wt, r2);
      }
      const uint64_t trap = r2.rip - 1;
      if (trap == jit_.done_trap()) {
        done[*t] = true;
        const bool last = std::count(done.begin(), done.end(), false) == 0;
        if (!(last ? DeliverPendingToLast(*t) : LetExit(*t))) return Got::kError;
        return Got::kDone;
      }
      if (trap == jit_.assert_trap()) {
        assert_failed = true;
        return Got::kAssert;
      }
      const int idx = jit_.IndexOf(trap);
      if (idx < 0 || jit_.InstrAddress(static_cast<uint32_t>(idx)) + 5 != trap) {
        res_.divergence = s_.threads[*t].name + " trapped at " + Hex(trap) + ", not at an IR boundary";
        return Got::kOther;
      }
      at_pc[*t] = idx;
      if (asleep[*t]) {
        asleep[*t] = false;
        woke[*t] = true;
        return Got::kWoke;
      }
      return Got::kTrap;
    }
    // A signal-delivery-stop: deliver (handler or default action), or
    // drop an ignored one without letting the stop count as a preemption.
    if (Ignored(s_, sig)) {
      // An ignored signal is no rseq event; its stop must neither add a
      // preemption (a quiet resume) nor hide the event a plain resume is
      // delivering (the signal stop comes before the rseq fix-up).
      user_regs_struct r2;
      if (!Regs(wt, &r2)) {
        Fail("PTRACE_GETREGS failed");
        dead = true;
        return Got::kError;
      }
      // Outside JIT code (the thread's C++ wrapper) there is no section and
      // the stack below rsp may be live (red zone): just continue.
      if (resumed_plainly[*t] || !jit_.Contains(r2.rip)) {
        ptrace(PTRACE_CONT, wt, nullptr, nullptr);
        return std::nullopt;
      }
      if (!ResumeQuiet(*t, r2, r2.rip)) {
        Fail("suppressing an ignored signal failed");
        dead = true;
        return Got::kError;
      }
      return std::nullopt;
    }
    const SignalSpec* spec = s_.FindSignal(sig);
    if (asleep[*t] && spec != nullptr && spec->handler >= 0) {
      // Woken to take a signal (WokenNextPc): the stop before its delivery
      // is the boundary after the blocking call.
      user_regs_struct r2;
      if (!Regs(wt, &r2) || jit_.IndexOf(r2.rip - 1) < 0) {
        Fail("a woken thread's signal-delivery-stop is outside its code");
        dead = true;
        return Got::kError;
      }
      // Stopped on the way back from its blocking call: rip is the call's
      // return address (F_{i+1}, the next block's start), so rip - 1 is in
      // the syscall instruction, the last of the call's block.
      at_pc[*t] = jit_.IndexOf(r2.rip - 1) + 1;
      held_signal[*t] = sig;
      asleep[*t] = false;
      woke[*t] = true;
      Log(s_.threads[*t].name + " woke to take " + SignalName(sig) + " (held at its signal-delivery-stop)");
      return Got::kWoke;
    }
    Log("kernel delivers " + SignalName(sig) + " to " + s_.threads[*t].name);
    ptrace(PTRACE_CONT, wt, nullptr, reinterpret_cast<void*>(static_cast<intptr_t>(sig)));
    return std::nullopt;
  }

  // Ends the run: disarms the watchdog (from here on it has fired or never
  // will), copies the records, and decides res_.end by RunEnd's rule
  // (tracer.h). Called once, after the plan's loop.
  void Collect() {
    const bool timed_out = wd_->Disarm();
    const bool interrupted = g_kill_requested.load();
    internal::CollectRecords(jit_, res_);  // may find a harness limit (observation slots)
    for (int t = 0; t < n_ && original_; ++t) res_.threads[t].aborts += original_aborts[t];
    if (dead && term_signal != 0 && res_.verdict == Verdict::kPass) {
      res_.verdict = term_signal == SIGSEGV ? Verdict::kSigsegv : Verdict::kKilled;
      res_.message = "the tracee was killed by " + SignalName(term_signal);
    }
    res_.end = DecideEnd(timed_out, interrupted);
  }

  // RunEnd's rule; sets res_.harness_error when the answer is kHarnessError.
  RunEnd DecideEnd(bool timed_out, bool interrupted) {
    if (timed_out) {
      std::ostringstream o;
      o << "timed out after " << timeout_s_ << " s (the watchdog killed the tracee)";
      res_.harness_error = o.str();  // the cause of whatever else went wrong
      return RunEnd::kHarnessError;
    }
    if (interrupted) {
      res_.harness_error = "interrupted: the tracee was killed on request";
      return RunEnd::kHarnessError;
    }
    if (!res_.harness_error.empty()) return RunEnd::kHarnessError;
    if (dead) {
      if (term_signal == 0) {
        res_.harness_error = "the tracee exited with status " + std::to_string(exit_status) +
                             " outside the scenario's control";
        return RunEnd::kHarnessError;
      }
      if (term_signal == SIGKILL && !death_expected) {
        res_.harness_error =
            "the tracee was killed by a SIGKILL that neither the harness nor the plan sent (the OOM killer, "
            "another process)";
        return RunEnd::kHarnessError;
      }
      return RunEnd::kCompleted;  // a verdict of the scenario (or a different one: compared)
    }
    if (assert_failed) return RunEnd::kCompleted;
    if (!res_.divergence.empty()) return RunEnd::kLeftPlan;
    if (open_end) return DecideOpenEnd();
    for (int t = 0; t < n_; ++t) {
      if (done[t]) continue;
      res_.harness_error =
          "the run ended while " + s_.threads[t].name + " had neither returned nor met a verdict (stopped at " +
          (at_pc[t] >= 0 ? s_.program.DescribeIndex(static_cast<uint32_t>(at_pc[t])) : std::string("?")) + ")";
      return RunEnd::kHarnessError;
    }
    return RunEnd::kCompleted;
  }

  // The end of a plan that leaves threads alive (Plan::open_end): each
  // thread the plan put to sleep must still sleep there; for a deadlock every
  // live thread must sleep in futex_wait. Then the run has the plan's verdict.
  RunEnd DecideOpenEnd() {
    std::string sleepers;
    for (int t = 0; t < n_; ++t) {
      if (done[t]) continue;
      long in = -1;
      const char state = asleep[t] ? ProcState(t, &in) : 't';
      const bool in_futex = state == 'S' && in == SYS_futex;
      if (asleep[t] && state != 'S') {
        res_.divergence = s_.threads[t].name + " woke on the kernel; the simulator has it asleep to the end";
        return RunEnd::kLeftPlan;
      }
      if (*open_end == Verdict::kDeadlock && !in_futex) {
        res_.divergence = s_.threads[t].name + " does not sleep in futex_wait at the end on the kernel; the " +
                          "simulator ends in a deadlock";
        return RunEnd::kLeftPlan;
      }
      if (in_futex) sleepers += (sleepers.empty() ? "" : ", ") + s_.threads[t].name;
    }
    res_.verdict = *open_end;
    res_.message = *open_end == Verdict::kDeadlock
                       ? "every live thread sleeps in futex_wait on the kernel (" + sleepers + ")"
                       : "the kernel followed the simulated execution to its step budget";
    return RunEnd::kCompleted;
  }

  // Kills the tracee and reaps it and its traced threads, waiting only for
  // those tids (never waitpid(-1): other children of this process are not
  // ours to reap). A traced thread that exits stays a zombie until its
  // tracer waits for it, and the leader is reported only once every other
  // thread is gone, so the threads are reaped first: the ones /proc lists
  // (a thread stays listed until it is released), then the leader.
  void Teardown() {
    if (pid_ <= 0) return;
    // No KillCurrentTracee() nor watchdog kill from here on: once reaped, the
    // pid may be reused.
    g_tracee = 0;
    if (wd_) wd_->Disarm();
    kill(pid_, SIGKILL);
    int st;
    for (;;) {
      bool waited = false;
      std::vector<pid_t> others = TasksOf(pid_);
      others.insert(others.end(), tids.begin(), tids.end());  // known even without /proc
      std::sort(others.begin(), others.end());
      others.erase(std::unique(others.begin(), others.end()), others.end());
      for (pid_t tid : others) {
        if (tid <= 0 || tid == pid_) continue;
        for (;;) {  // blocking: SIGKILL ends it promptly
          const pid_t r = waitpid(tid, &st, __WALL);
          if (r < 0 && errno == EINTR) continue;
          if (r < 0) break;  // ECHILD: not traced by us (the IPI helper) or already reaped
          waited = true;
          if (WIFEXITED(st) || WIFSIGNALED(st)) break;
        }
      }
      const pid_t r = waitpid(pid_, &st, __WALL | WNOHANG);
      if (r == pid_ && (WIFEXITED(st) || WIFSIGNALED(st))) break;
      if (r < 0 && errno == EINTR) continue;
      if (r < 0) break;  // ECHILD: already reaped
      if (TasksOf(pid_) == std::vector<pid_t>{pid_}) {
        // Only the leader is left: it is reported as soon as it has exited.
        pid_t w;
        do {
          w = waitpid(pid_, &st, __WALL);
        } while ((w < 0 && errno == EINTR) || (w == pid_ && !WIFEXITED(st) && !WIFSIGNALED(st)));
        break;
      }
      // Still threads to go (untraced ones reap themselves): if nothing was
      // reaped this round, wait a little before looking again.
      if (!waited) {
        timespec ts{0, 100 * 1000};
        nanosleep(&ts, nullptr);
      }
    }
    wd_.reset();
    pid_ = 0;
  }

  // The thread ids of process `pid` (/proc/<pid>/task); empty once it is gone.
  static std::vector<pid_t> TasksOf(pid_t pid) {
    std::vector<pid_t> out;
    if (DIR* d = opendir(("/proc/" + std::to_string(pid) + "/task").c_str())) {
      while (dirent* e = readdir(d)) {
        if (e->d_name[0] >= '0' && e->d_name[0] <= '9') out.push_back(static_cast<pid_t>(std::atoi(e->d_name)));
      }
      closedir(d);
    }
    return out;
  }
};

}  // namespace

std::string HarnessUnavailableReason(const Scenario& s, bool need_ptrace) {
  std::string why = HarnessUnavailableReason(s.num_cpus, need_ptrace);
  if (!why.empty()) return why;
  if (FindRfc2015Use(s.program) != nullptr && !RunningKernelOffers(KernelModel::kRfc2015)) {
    return "the scenario calls the 2015 RFC's restartable_sequences(), which only a patched kernel has (system call "
           "335 of kernel/patches/0001; kernel/qemu/run cross-checks it there)";
  }
  for (uint32_t c = 0; c < s.num_cpus; ++c) {
    // /sys/devices/system/cpu/cpuC/nodeN names the CPU's node (none: node 0).
    int node = 0;
    const std::string dir = "/sys/devices/system/cpu/cpu" + std::to_string(c);
    if (DIR* d = opendir(dir.c_str())) {
      while (dirent* e = readdir(d)) {
        if (std::strncmp(e->d_name, "node", 4) == 0 && e->d_name[4] >= '0' && e->d_name[4] <= '9') {
          node = std::atoi(e->d_name + 4);
        }
      }
      closedir(d);
    }
    const uint32_t want = c * s.num_nodes / s.num_cpus;
    if (static_cast<uint32_t>(node) != want) {
      return "the scenario puts CPU " + std::to_string(c) + " on NUMA node " + std::to_string(want) +
             " (nodes " + std::to_string(s.num_nodes) + "), this machine has it on node " + std::to_string(node) +
             "; node_id would differ";
    }
  }
  return "";
}

namespace {

// One kRun action's leg (OriginalLegs): thread position `at` before it, the
// thread's executed instructions `pcs`, the action covering [c, e).
std::string OriginalLegOf(const JitProgram& jit, const std::vector<uint32_t>& pcs, size_t c, size_t e, int64_t at,
                          int64_t next_pc, OriginalLeg* leg) {
  const Program& p = jit.scenario().program;
  auto jit_steps = [&](size_t from, size_t to) {
    uint64_t k = 0;
    for (size_t i = from; i < to; ++i) k += jit.RunsOriginal(pcs[i]) ? 0 : 1;
    return k;
  };
  leg->countdown = jit_steps(c, e);
  if (next_pc == -2 && e > c && jit.RunsOriginal(pcs[e - 1])) {
    return "the execution ends with a thread paused inside the original code (after " + p.DescribeIndex(pcs[e - 1]) +
           "), where no breakpoint address is known";
  }
  if (next_pc < 0 || !jit.RunsOriginal(static_cast<uint32_t>(next_pc))) return "";
  const uint32_t target = static_cast<uint32_t>(next_pc);
  leg->breakpoint = jit.InstrAddress(target);
  if (leg->breakpoint == 0) {
    return "a stop before " + p.DescribeIndex(target) +
           ", between the IR instructions of one machine instruction (the processor has no such boundary)";
  }
  if (std::find(jit.original_abort_ips().begin(), jit.original_abort_ips().end(), leg->breakpoint) !=
      jit.original_abort_ips().end()) {
    return "a stop at abort_ip " + p.DescribeIndex(target) + ", where the tracer counts aborts";
  }
  // A visit of the address before the planned one (or the thread standing on
  // it): first a quiet stop at the last JIT instruction after that visit.
  std::optional<size_t> after;
  if (at == next_pc) after = c;
  for (size_t i = c; i < e; ++i) {
    if (pcs[i] == target) after = i + 1;
  }
  if (!after) return "";
  size_t j = e;
  for (size_t i = e; i > *after; --i) {
    if (!jit.RunsOriginal(pcs[i - 1])) {
      j = i - 1;
      break;
    }
  }
  if (j == e) {
    return "the thread passes " + p.DescribeIndex(target) +
           " again before the planned stop there with no IR instruction of the scenario in between (a loop inside "
           "the original code)";
  }
  leg->stage_pc = pcs[j];
  leg->countdown2 = jit_steps(j, e);
  leg->countdown = jit_steps(c, j);
  return "";
}

}  // namespace

std::string OriginalLegs(const JitProgram& jit, const Plan& plan, std::vector<OriginalLeg>* legs) {
  const Scenario& s = jit.scenario();
  legs->assign(plan.actions.size(), OriginalLeg{});
  std::vector<size_t> cursor(s.threads.size(), 0);
  std::vector<int64_t> at(s.threads.size(), -1);
  for (size_t t = 0; t < s.threads.size(); ++t) {
    if (s.threads[t].entry >= 0) at[t] = s.program.functions[s.threads[t].entry].first;
  }
  for (size_t ai = 0; ai < plan.actions.size(); ++ai) {
    const PlanAction& a = plan.actions[ai];
    if (a.kind != PlanAction::Kind::kRun) continue;
    const std::vector<uint32_t>& pcs = plan.pcs[a.thread];
    const size_t c = cursor[a.thread], e = std::min(pcs.size(), c + a.steps);
    const std::string why = OriginalLegOf(jit, pcs, c, e, at[a.thread], a.next_pc, &(*legs)[ai]);
    if (!why.empty()) return why;
    cursor[a.thread] = e;
    if (a.next_pc >= 0) at[a.thread] = a.next_pc;
  }
  return "";
}

RealResult RunPlan(JitProgram& jit, const Plan& plan, const TracerOptions& opt) {
  RealResult res;
  std::vector<OriginalLeg> legs;
  if (jit.options().original_code) {
    const std::string why = OriginalLegs(jit, plan, &legs);
    if (!why.empty()) {
      res.original_code = true;
      res.harness_error = "the schedule cannot be forced on the original code: " + why;
      return res;
    }
  }
  size_t last_ipi = plan.actions.size();  // the plan's last injected IPI (none: size)
  for (size_t ai = 0; ai < plan.actions.size(); ++ai) {
    if (plan.actions[ai].kind == PlanAction::Kind::kIpi) last_ipi = ai;
  }
  Session ss(jit, opt, res, last_ipi < plan.actions.size());
  const Scenario& s = jit.scenario();
  ss.open_end = plan.open_end;
  ss.Setup();
  for (size_t ai = 0; ai < plan.actions.size() && !ss.dead && !ss.assert_failed && res.divergence.empty(); ++ai) {
    const PlanAction& a = plan.actions[ai];
    const int t = a.thread;
    const std::string who = s.threads[t].name;
    if (a.kind == PlanAction::Kind::kWoken) {
      if (!ss.CollectWoken(t, a.next_pc, a.by_signal)) break;
      continue;
    }
    if (a.kind != PlanAction::Kind::kRun) {
      ss.ApplyEvent(t, a.kind, a.arg, a.blocked);
      if (ai == last_ipi && !ss.StopIpiHelper()) break;
      continue;
    }
    if (ss.done[t]) {
      res.divergence = who + " was to run " + std::to_string(a.steps) + " more instructions but had returned";
      break;
    }
    ss.death_expected = a.next_pc == kExpectDeath;
    const OriginalLeg leg = legs.empty() ? OriginalLeg{a.steps, 0, -1, 0} : legs[ai];
    if (a.blocks) {
      // The run ends asleep in the kernel: no trap to wait for.
      if (!ss.Resume(t, leg.countdown, ss.plain[t], 0)) {
        ss.Fail("resuming " + who + " failed: " + std::strerror(errno));
        ss.dead = true;
        break;
      }
      ss.plain[t] = false;
      if (!ss.WaitAsleep(t, a.arg)) break;
      continue;
    }
    int got_t = -1;
    Session::Got got = ss.RunLeg(t, leg, &got_t);
    while (got == Session::Got::kWoke) got = ss.Next(&got_t);
    if (got == Session::Got::kDeath || got == Session::Got::kError || got == Session::Got::kAssert ||
        got == Session::Got::kOther) {
      break;
    }
    if (got_t != t) {
      res.divergence = s.threads[got_t].name + " stopped while only " + who + " was running";
      break;
    }
    if (got == Session::Got::kDone) {
      if (a.next_pc != -1) {
        res.divergence = who + " returned after " + std::to_string(a.steps) +
                         " instructions; the simulation had it continue at " +
                         (a.next_pc >= 0 ? s.program.DescribeIndex(static_cast<uint32_t>(a.next_pc)) : "(end)");
      }
      continue;
    }
    const int64_t idx = ss.at_pc[t];
    if (a.next_pc == kExpectDeath) {
      res.divergence = "the simulator ends the execution when " + who +
                       " resumes (a kill or a failed assert); on the kernel it ran on to " +
                       s.program.DescribeIndex(static_cast<uint32_t>(idx));
    } else if (a.next_pc == -1) {
      res.divergence = who + " did not return after " + std::to_string(a.steps) + " instructions: it is at " +
                       s.program.DescribeIndex(static_cast<uint32_t>(idx));
    } else if (a.next_pc >= 0 && idx != a.next_pc) {
      res.divergence = who + " is at " + s.program.DescribeIndex(static_cast<uint32_t>(idx)) + " after " +
                       std::to_string(a.steps) + " instructions; the simulation has it at " +
                       s.program.DescribeIndex(static_cast<uint32_t>(a.next_pc));
    }
  }
  ss.Collect();
  ss.Teardown();
  return res;
}

namespace {
// The CPU a (stopped) thread last ran on: /proc/<tid>/stat field 39.
int CurrentCpu(pid_t tid, int fallback) {
  std::ifstream in("/proc/" + std::to_string(tid) + "/stat");
  std::string line;
  if (!std::getline(in, line)) return fallback;
  const size_t rp = line.rfind(')');
  if (rp == std::string::npos) return fallback;
  std::istringstream rest(line.substr(rp + 2));
  std::string field;
  for (int i = 3; i <= 39 && rest >> field; ++i) {
    if (i == 39) return std::atoi(field.c_str());
  }
  return fallback;
}
}  // namespace

RealResult RunConcurrent(JitProgram& jit, const std::vector<ThreadEvent>& events, const TracerOptions& opt) {
  RealResult res;
  const bool ipis = std::any_of(events.begin(), events.end(),
                                [](const ThreadEvent& e) { return e.kind == PlanAction::Kind::kIpi; });
  Session ss(jit, opt, res, ipis);
  const Scenario& s = jit.scenario();
  const int n = static_cast<int>(s.threads.size());
  std::vector<std::vector<ThreadEvent>> per(n);
  for (const ThreadEvent& e : events) per.at(e.thread).push_back(e);
  std::vector<size_t> next(n, 0);
  std::vector<uint64_t> steps_done(n, 0);
  constexpr uint64_t kNoTrap = uint64_t{1} << 60;
  // The simulator's per-CPU FIFO run queues (rule: a queued thread runs only
  // when the running one is preempted, migrates away or exits). Threads that
  // share a CPU therefore never time-slice: that would be preemptions the
  // bound does not count.
  std::vector<int> running(s.num_cpus, -1), cpu_of(n, 0);
  std::vector<std::deque<int>> queue(s.num_cpus);
  for (int t = 0; t < n; ++t) {
    cpu_of[t] = static_cast<int>(s.threads[t].cpu);
    if (running[cpu_of[t]] < 0) {
      running[cpu_of[t]] = t;
    } else {
      queue[cpu_of[t]].push_back(t);
    }
  }
  auto gap = [&](int t) -> uint64_t {
    return next[t] < per[t].size() ? per[t][next[t]].step - steps_done[t] : kNoTrap;
  };
  int live = n;
  auto resume = [&](int t) {
    const uint64_t g = gap(t);
    if (!ss.Resume(t, g, ss.plain[t])) {
      ss.Fail("resuming " + s.threads[t].name + " failed");
      ss.dead = true;
      return;
    }
    ss.plain[t] = false;
    steps_done[t] += g == kNoTrap ? 0 : g;
  };
  // Runs the head of cpu c's queue, if any.
  auto run_next_on = [&](int c) {
    running[c] = -1;
    if (queue[c].empty()) return;
    running[c] = queue[c].front();
    queue[c].pop_front();
    resume(running[c]);
  };
  // Applies the events due for stopped, running thread t; then resumes the
  // thread that runs next on its CPU.
  auto due = [&](int t) {
    bool stays = true;  // t keeps its CPU
    while (next[t] < per[t].size() && per[t][next[t]].step <= steps_done[t]) {
      const ThreadEvent& e = per[t][next[t]++];
      // An IPI hits the CPU the thread is on now (the program may have moved it).
      const int arg = e.kind == PlanAction::Kind::kIpi ? CurrentCpu(ss.tids[t], cpu_of[t]) : e.arg;
      ss.ApplyEvent(t, e.kind, arg);
      const int c = cpu_of[t];
      if (e.kind == PlanAction::Kind::kPreempt && !queue[c].empty()) {
        queue[c].push_back(t);
        stays = false;
        run_next_on(c);
        break;
      }
      if (e.kind == PlanAction::Kind::kMigrate && e.arg != c) {
        cpu_of[t] = e.arg;
        run_next_on(c);
        if (running[e.arg] < 0) {
          running[e.arg] = t;
        } else {
          queue[e.arg].push_back(t);
          stays = false;
          break;
        }
      }
    }
    if (stays) resume(t);
  };
  ss.Setup();
  // The first runners, taken before any of them moves (a step-0 migration to
  // an idle CPU must not start a thread twice).
  const std::vector<int> first = running;
  for (int c = 0; c < static_cast<int>(s.num_cpus) && !ss.dead; ++c) {
    if (first[c] >= 0) due(first[c]);
  }
  while (live > 0 && !ss.dead && !ss.assert_failed) {
    int t = -1;
    const Session::Got got = ss.Next(&t);
    if (got == Session::Got::kDeath || got == Session::Got::kError || got == Session::Got::kAssert ||
        got == Session::Got::kOther) {
      break;
    }
    if (got == Session::Got::kDone) {
      --live;
      run_next_on(cpu_of[t]);
      continue;
    }
    due(t);
  }
  ss.Collect();
  ss.Teardown();
  return res;
}

ExecutionResult AsExecutionResult(const Scenario& s, const RealResult& r) {
  ExecutionResult e;
  e.verdict = r.verdict;
  e.message = r.message;
  e.memory = r.memory;
  e.threads.resize(r.threads.size());
  for (size_t t = 0; t < r.threads.size(); ++t) {
    ThreadOutcome& o = e.threads[t];
    o.exited = r.threads[t].exited;
    o.ret = r.threads[t].ret;
    o.aborts = static_cast<uint32_t>(r.threads[t].aborts);
    o.final_cpu = r.threads[t].final_cpu < 0 ? 0 : static_cast<uint32_t>(r.threads[t].final_cpu);
    o.observed = r.threads[t].observed;
  }
  const bool all_exited = std::all_of(e.threads.begin(), e.threads.end(), [](const ThreadOutcome& o) { return o.exited; });
  for (const Property& p : s.properties) {
    PropertyOutcome po = EvaluateProperty(s, p.expr, e);
    if (e.verdict == Verdict::kPass && all_exited && !po.holds) {
      e.verdict = Verdict::kPropertyFailed;
      e.message = "property failed: " + p.text;
    }
    e.properties.push_back(po);
  }
  return e;
}

}  // namespace rseqmc::harness
