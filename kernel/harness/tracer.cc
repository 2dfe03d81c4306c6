#include "kernel/harness/tracer.h"

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

#include <atomic>
#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <fstream>
#include <mutex>
#include <set>
#include <sstream>
#include <thread>

#include "sim/diag.h"

namespace rseqmc::harness {

// ---------------------------------------------------------------------------
// Plans from simulated executions.

class RecordingScheduler : public Scheduler {
 public:
  RecordingScheduler(Scheduler& inner, ExecutionResult* out) : inner_(inner), out_(out) {}
  void BeginExecution(const Machine& m) override {
    injected.clear();
    inner_.BeginExecution(m);
    defaults_ahead = inner_.defaults_ahead;
    inner_.defaults_ahead = 0;
  }
  Decision Choose(const ChoiceView& v) override {
    Decision d = inner_.Choose(v);
    defaults_ahead = inner_.defaults_ahead;
    inner_.defaults_ahead = 0;
    if (d.IsEvent() && !d.IsStop()) injected.push_back(out_->trace.size());
    return d;
  }
  void EndExecution(const Machine& m) override { inner_.EndExecution(m); }
  std::vector<size_t> injected;

 private:
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
  if (plan) *plan = MakePlan(sim.scenario(), r, rec.injected);
  return r;
}

Plan MakePlan(const Scenario& s, const ExecutionResult& r, const std::vector<size_t>& injected) {
  Plan plan;
  const int nthreads = static_cast<int>(s.threads.size());
  plan.pcs.assign(nthreads, {});
  for (const ThreadSpec& t : s.threads) plan.start_cpu.push_back(t.cpu);
  std::set<size_t> inj(injected.begin(), injected.end());
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
  for (size_t i = 0; i < r.trace.size(); ++i) {
    const TraceEntry& e = r.trace[i];
    switch (e.kind) {
      case TraceKind::kStep:
        if (open && run.thread == e.thread) {
          ++run.steps;
        } else {
          flush();
          run = PlanAction{PlanAction::Kind::kRun, e.thread, 1, -1, -1};
          open = true;
        }
        run_last = i;
        runner = e.thread;
        plan.pcs[e.thread].push_back(e.pc);
        break;
      case TraceKind::kPreempt:
      case TraceKind::kMigrate:
      case TraceKind::kSignal:
      case TraceKind::kIpi:
      case TraceKind::kYield: {
        const bool injected_event = inj.count(i) != 0;
        if (injected_event) ++plan.events;
        if (e.thread < 0) break;  // IPI of an idle CPU: nothing to do
        PlanAction a;
        a.thread = e.thread;
        if (injected_event) {
          switch (e.kind) {
            case TraceKind::kPreempt: a.kind = PlanAction::Kind::kPreempt; break;
            case TraceKind::kMigrate: a.kind = PlanAction::Kind::kMigrate; a.arg = static_cast<int>(e.a); break;
            case TraceKind::kSignal: a.kind = PlanAction::Kind::kSignal; a.arg = static_cast<int>(e.a); break;
            default: a.kind = PlanAction::Kind::kIpi; a.arg = e.cpu; break;
          }
        } else if (e.thread != runner || e.kind == TraceKind::kYield) {
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
      default:
        break;
    }
  }
  flush();
  // next_pc of each run: where the thread is at the next trace entry about it
  // (its next step, the pc an event or abort found it at, the first
  // instruction of a handler whose frame the kernel pushed on its own), or -1 when it exits after the run, -2 when the run ends.
  for (size_t ai = 0; ai < plan.actions.size(); ++ai) {
    PlanAction& a = plan.actions[ai];
    if (a.kind != PlanAction::Kind::kRun) continue;
    a.next_pc = a.thread < static_cast<int>(r.threads.size()) && r.threads[a.thread].exited ? -1 : -2;
    for (size_t i = run_end[ai] + 1; i < r.trace.size(); ++i) {
      const TraceEntry& e = r.trace[i];
      if (e.thread != a.thread) continue;
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
  return plan;
}

// ---------------------------------------------------------------------------
// The tracee.

namespace {

JitProgram* g_jit = nullptr;  // set by RunPlan before fork; read by the child
thread_local ThreadRecord* tl_rec = nullptr;
std::atomic<pid_t> g_tracee{0};

constexpr int kMembarrierCmdPrivateExpeditedRseq = 1 << 7;
constexpr int kMembarrierCmdRegisterPrivateExpeditedRseq = 1 << 8;
constexpr int kMembarrierCmdFlagCpu = 1;

long Futex(int* addr, int op, int val, const timespec* ts = nullptr) {
  return syscall(SYS_futex, addr, op, val, ts, nullptr, 0);
}

void OnSignal(int signo, siginfo_t*, void* uctx) {
  auto* uc = static_cast<ucontext_t*>(uctx);
  const Scenario& s = g_jit->scenario();
  const SignalSpec* spec = s.FindSignal(signo);
  if (!spec || spec->handler < 0 || !tl_rec) return;
  JitContext h;
  h.rec = tl_rec;
  h.r[1] = signo;
  const int64_t countdown = uc->uc_mcontext.gregs[REG_R14];
  const int64_t left = g_jit->Call(static_cast<uint32_t>(spec->handler), &h, countdown);
  uc->uc_mcontext.gregs[REG_R14] = left;
}

void* IpiHelper(void*) {
  SharedArea* sh = g_jit->shared();
  for (;;) {
    while (__atomic_load_n(&sh->ipi_request, __ATOMIC_ACQUIRE) == 0) Futex(&sh->ipi_request, FUTEX_WAIT, 0);
    const int cpu = sh->ipi_cpu;
    sh->ipi_result = static_cast<int>(
        syscall(SYS_membarrier, kMembarrierCmdPrivateExpeditedRseq, kMembarrierCmdFlagCpu, cpu));
    __atomic_store_n(&sh->ipi_request, 0, __ATOMIC_RELEASE);
    __atomic_store_n(&sh->ipi_done, 1, __ATOMIC_RELEASE);
    Futex(&sh->ipi_done, FUTEX_WAKE, 1);
  }
  return nullptr;
}

void* Worker(void* arg) {
  const int t = static_cast<int>(reinterpret_cast<intptr_t>(arg));
  const ThreadSpec& ts = g_jit->scenario().threads[t];
  ThreadRecord* rec = g_jit->record(t);
  rec->tid = static_cast<int32_t>(syscall(SYS_gettid));
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(ts.cpu, &set);
  sched_setaffinity(0, sizeof(set), &set);
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
  rec->final_cpu = sched_getcpu();
  __atomic_store_n(&rec->exited, 1, __ATOMIC_RELEASE);
  g_jit->DoneTrap();
  for (;;) pause();
  return nullptr;
}

[[noreturn]] void ChildMain(pid_t parent) {
  prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (getppid() != parent) _exit(111);
  SharedArea* sh = g_jit->shared();
  sh->tgid = getpid();
  syscall(SYS_membarrier, kMembarrierCmdRegisterPrivateExpeditedRseq, 0, 0);
  const Scenario& s = g_jit->scenario();
  for (const SignalSpec& spec : s.signals) {
    struct sigaction sa {};
    if (spec.handler >= 0) {
      sa.sa_sigaction = OnSignal;
      sa.sa_flags = SA_SIGINFO | (spec.nodefer ? SA_NODEFER : 0);
    } else {
      sa.sa_handler = SIG_IGN;
    }
    sigemptyset(&sa.sa_mask);
    sigaction(spec.signo, &sa, nullptr);
  }
  pthread_t helper;
  pthread_create(&helper, nullptr, IpiHelper, nullptr);
  if (ptrace(PTRACE_TRACEME, 0, nullptr, nullptr) != 0) _exit(112);
  raise(SIGSTOP);
  std::vector<pthread_t> th(s.threads.size());
  for (size_t t = 0; t < s.threads.size(); ++t) {
    pthread_create(&th[t], nullptr, Worker, reinterpret_cast<void*>(static_cast<intptr_t>(t)));
  }
  for (;;) pause();
}

// Kills `pid` when the deadline passes unless cancelled.
class Watchdog {
 public:
  Watchdog(pid_t pid, double seconds) : pid_(pid) {
    th_ = std::thread([this, seconds] {
      std::unique_lock lk(mu_);
      if (!cv_.wait_for(lk, std::chrono::duration<double>(seconds), [this] { return done_; })) {
        fired_ = true;
        kill(pid_, SIGKILL);
      }
    });
  }
  ~Watchdog() {
    {
      std::lock_guard lk(mu_);
      done_ = true;
    }
    cv_.notify_all();
    th_.join();
  }
  bool fired() const { return fired_; }

 private:
  pid_t pid_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool done_ = false;
  std::atomic<bool> fired_{false};
  std::thread th_;
};

std::string Hex(uint64_t v) {
  std::ostringstream o;
  o << "0x" << std::hex << v;
  return o.str();
}

}  // namespace

void KillCurrentTracee() {
  const pid_t p = g_tracee.load();
  if (p > 0) kill(p, SIGKILL);
}

std::string HarnessUnavailableReason(uint32_t num_cpus) {
#if !defined(__x86_64__)
  return "the real-kernel harness is x86-64 only";
#endif
  std::string why;
  if (!JitProgram::EnsureRseqRegistered(&why)) return why;
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof(set), &set) != 0) return "sched_getaffinity failed";
  for (uint32_t c = 0; c < num_cpus; ++c) {
    if (!CPU_ISSET(c, &set)) {
      return "the scenario needs CPUs 0.." + std::to_string(num_cpus - 1) + " but CPU " + std::to_string(c) +
             " is not available to this process (" + std::to_string(CPU_COUNT(&set)) +
             " CPUs); set the scenario's CPU count with -D (e.g. -D CPUS=" + std::to_string(CPU_COUNT(&set)) + ")";
    }
  }
  std::ifstream yama("/proc/sys/kernel/yama/ptrace_scope");
  int scope = 0;
  if (yama >> scope && scope >= 3) return "ptrace is disabled (kernel.yama.ptrace_scope = 3)";
  return "";
}

RealResult RunPlan(JitProgram& jit, const Plan& plan, const TracerOptions& opt) {
  RealResult res;
  const Scenario& s = jit.scenario();
  const int nthreads = static_cast<int>(s.threads.size());
  for (const ThreadSpec& ts : s.threads) {
    if (ts.entry < 0) throw HarnessError("thread " + ts.name + " has a C++ body; only IR threads run on the kernel");
  }
  jit.ResetState();
  g_jit = &jit;
  const pid_t parent = getpid();
  const pid_t pid = fork();
  if (pid < 0) throw HarnessError(std::string("fork failed: ") + std::strerror(errno));
  if (pid == 0) ChildMain(parent);
  g_tracee = pid;
  Watchdog wd(pid, opt.timeout_s);
  SharedArea* sh = jit.shared();

  std::vector<pid_t> tids(nthreads, 0);
  std::vector<int64_t> at_pc(nthreads, -1);
  std::vector<bool> plain(nthreads, false), done(nthreads, false);
  bool dead = false;
  int term_signal = 0;
  bool assert_failed = false;
  auto log = [&](std::string line) { res.log.push_back(std::move(line)); };
  auto fail = [&](std::string why) {
    if (res.harness_error.empty()) res.harness_error = std::move(why);
  };
  auto thread_of = [&](pid_t tid) -> int {
    for (int t = 0; t < nthreads; ++t) {
      if (tids[t] == tid) return t;
    }
    for (int t = 0; t < nthreads; ++t) {
      if (jit.record(t)->tid == tid) {
        tids[t] = tid;
        return t;
      }
    }
    return -1;
  };
  auto note_death = [&](int st) {
    dead = true;
    if (WIFSIGNALED(st)) term_signal = WTERMSIG(st);
  };
  auto wait_any = [&](pid_t* tid, int* st) -> bool {
    for (;;) {
      pid_t r = waitpid(-1, st, __WALL);
      if (r > 0) {
        *tid = r;
        return true;
      }
      if (errno == EINTR) continue;
      return false;
    }
  };
  auto regs_of = [&](pid_t tid, user_regs_struct* regs) {
    return ptrace(PTRACE_GETREGS, tid, nullptr, regs) == 0;
  };
  auto rseq_cs_of = [&](pid_t tid, const user_regs_struct& regs, uint64_t* v) {
    errno = 0;
    long w = ptrace(PTRACE_PEEKDATA, tid,
                    reinterpret_cast<void*>(regs.fs_base + JitProgram::RseqOffset() + kRseqOffRseqCs), nullptr);
    if (errno != 0) return false;
    *v = static_cast<uint64_t>(w);
    return true;
  };
  // Resume through the re-arm stub: no rseq abort for this stop.
  auto resume_quiet = [&](pid_t tid, user_regs_struct& regs, uint64_t continue_at) {
    uint64_t cs = 0;
    if (!rseq_cs_of(tid, regs, &cs)) return false;
    // rseq_cs := 0 while stopped: rseq_get_rseq_cs() validates a non-zero
    // rseq_cs (signature, abort_ip outside the section) on every
    // notify-resume, even with ip outside the section; the stub re-arms it.
    if (cs != 0 && ptrace(PTRACE_POKEDATA, tid,
                          reinterpret_cast<void*>(regs.fs_base + JitProgram::RseqOffset() + kRseqOffRseqCs),
                          nullptr) != 0) {
      return false;
    }
    regs.rax = cs;
    regs.rcx = continue_at;
    regs.rip = jit.rearm_stub();
    return ptrace(PTRACE_SETREGS, tid, nullptr, &regs) == 0 && ptrace(PTRACE_CONT, tid, nullptr, nullptr) == 0;
  };

  // --- setup: wait for the tracee's SIGSTOP, then for every worker's first trap ---
  int st = 0;
  pid_t w = waitpid(pid, &st, __WALL);
  if (w != pid || !WIFSTOPPED(st)) {
    fail(WIFEXITED(st) && WEXITSTATUS(st) == 112 ? "PTRACE_TRACEME failed in the tracee (ptrace not permitted)"
                                                  : "the tracee did not stop after fork");
    dead = true;
  } else {
    ptrace(PTRACE_SETOPTIONS, pid, nullptr, reinterpret_cast<void*>(PTRACE_O_TRACECLONE | PTRACE_O_EXITKILL));
    ptrace(PTRACE_CONT, pid, nullptr, nullptr);
  }
  int ready = 0;
  while (!dead && ready < nthreads) {
    pid_t tid;
    if (!wait_any(&tid, &st)) {
      fail("waitpid failed during setup");
      dead = true;
      break;
    }
    if (WIFEXITED(st) || WIFSIGNALED(st)) {
      if (tid == pid) note_death(st);
      fail("the tracee died during setup");
      dead = true;
      break;
    }
    if (!WIFSTOPPED(st)) continue;
    const int sig = WSTOPSIG(st);
    const int event = st >> 16;
    if (event != 0 || sig == SIGSTOP) {
      ptrace(PTRACE_CONT, tid, nullptr, nullptr);
      continue;
    }
    if (sig == SIGTRAP) {
      const int t = thread_of(tid);
      user_regs_struct regs;
      if (t < 0 || !regs_of(tid, &regs)) {
        fail("trap from an unknown thread during setup");
        dead = true;
        break;
      }
      at_pc[t] = jit.IndexOf(regs.rip - 1);
      ++ready;
      ++res.stops;
      continue;
    }
    ptrace(PTRACE_CONT, tid, nullptr, reinterpret_cast<void*>(static_cast<intptr_t>(sig)));
  }
  if (!dead) log("setup: " + std::to_string(nthreads) + " threads stopped before their first instruction");

  // --- the plan ---
  for (size_t ai = 0; ai < plan.actions.size() && !dead && !assert_failed && res.divergence.empty(); ++ai) {
    const PlanAction& a = plan.actions[ai];
    const int t = a.thread;
    const pid_t tid = tids[t];
    const std::string who = s.threads[t].name;
    switch (a.kind) {
      case PlanAction::Kind::kPreempt:
        plain[t] = true;
        log("preempt " + who + " (stopped at " + s.program.DescribeIndex(static_cast<uint32_t>(at_pc[t])) + ")");
        break;
      case PlanAction::Kind::kMigrate: {
        cpu_set_t set;
        CPU_ZERO(&set);
        CPU_SET(a.arg, &set);
        if (sched_setaffinity(tid, sizeof(set), &set) != 0) fail("sched_setaffinity of the tracee failed");
        plain[t] = true;
        log("migrate " + who + " to cpu" + std::to_string(a.arg) + " (sched_setaffinity while stopped)");
        break;
      }
      case PlanAction::Kind::kSignal: {
        const SignalSpec* spec = s.FindSignal(a.arg);
        if (spec && spec->handler < 0) {
          log("signal " + SignalName(a.arg) + " to " + who + ": ignored (SIG_IGN), not sent");
          break;
        }
        if (syscall(SYS_tgkill, pid, tid, a.arg) != 0) fail("tgkill of the tracee failed");
        plain[t] = true;
        log("signal " + SignalName(a.arg) + " to " + who + " (tgkill while stopped)");
        break;
      }
      case PlanAction::Kind::kIpi: {
        __atomic_store_n(&sh->ipi_done, 0, __ATOMIC_RELEASE);
        sh->ipi_cpu = a.arg;
        __atomic_store_n(&sh->ipi_request, 1, __ATOMIC_RELEASE);
        Futex(&sh->ipi_request, FUTEX_WAKE, 1);
        const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(2);
        while (__atomic_load_n(&sh->ipi_done, __ATOMIC_ACQUIRE) == 0 && std::chrono::steady_clock::now() < deadline) {
          timespec ts{0, 10 * 1000 * 1000};
          Futex(&sh->ipi_done, FUTEX_WAIT, 0, &ts);
        }
        if (__atomic_load_n(&sh->ipi_done, __ATOMIC_ACQUIRE) == 0) fail("the IPI helper did not answer");
        plain[t] = true;
        log("membarrier(RSEQ) IPI of cpu" + std::to_string(a.arg) + " hitting " + who + " (returned " +
            std::to_string(sh->ipi_result) + ")");
        break;
      }
      case PlanAction::Kind::kTouched:
        plain[t] = true;
        break;
      case PlanAction::Kind::kRun: {
        if (done[t]) {
          res.divergence = who + " was to run " + std::to_string(a.steps) + " more instructions but had returned";
          break;
        }
        user_regs_struct regs;
        if (!regs_of(tid, &regs)) {
          fail("PTRACE_GETREGS failed");
          dead = true;
          break;
        }
        const uint64_t at = jit.InstrAddress(static_cast<uint32_t>(at_pc[t]));
        regs.r14 = a.steps + 1;
        bool ok;
        if (plain[t]) {
          regs.rip = at;
          ok = ptrace(PTRACE_SETREGS, tid, nullptr, &regs) == 0 && ptrace(PTRACE_CONT, tid, nullptr, nullptr) == 0;
        } else {
          ok = resume_quiet(tid, regs, at);
        }
        if (!ok) {
          fail("resuming " + who + " failed: " + std::strerror(errno));
          dead = true;
          break;
        }
        plain[t] = false;
        // Wait until this thread stops at its next boundary, returns, or dies.
        for (;;) {
          pid_t wt;
          if (!wait_any(&wt, &st)) {
            fail("waitpid failed");
            dead = true;
            break;
          }
          if (WIFEXITED(st) || WIFSIGNALED(st)) {
            note_death(st);
            break;
          }
          if (!WIFSTOPPED(st)) continue;
          const int sig = WSTOPSIG(st);
          if ((st >> 16) != 0 || sig == SIGSTOP) {
            ptrace(PTRACE_CONT, wt, nullptr, nullptr);
            continue;
          }
          if (wt != tid) {
            // Another thread of the tracee (a signal sent to it while stopped
            // is delivered when it resumes, not here): pass it on.
            ptrace(PTRACE_CONT, wt, nullptr, reinterpret_cast<void*>(static_cast<intptr_t>(sig == SIGTRAP ? 0 : sig)));
            continue;
          }
          if (sig == SIGTRAP) {
            user_regs_struct r2;
            if (!regs_of(tid, &r2)) {
              fail("PTRACE_GETREGS failed");
              dead = true;
              break;
            }
            ++res.stops;
            const uint64_t trap = r2.rip - 1;
            if (trap == jit.done_trap()) {
              done[t] = true;
              if (a.next_pc != -1) {
                res.divergence = who + " returned after " + std::to_string(a.steps) +
                                 " instructions; the simulation had it continue at " +
                                 (a.next_pc >= 0 ? s.program.DescribeIndex(static_cast<uint32_t>(a.next_pc)) : "(end)");
              }
              break;
            }
            if (trap == jit.assert_trap()) {
              assert_failed = true;
              break;
            }
            const int idx = jit.IndexOf(trap);
            if (idx < 0 || jit.InstrAddress(static_cast<uint32_t>(idx)) + 5 != trap) {
              res.divergence = who + " trapped at " + Hex(trap) + ", not at an IR boundary";
              break;
            }
            at_pc[t] = idx;
            if (a.next_pc == -1) {
              res.divergence = who + " did not return after " + std::to_string(a.steps) +
                               " instructions: it is at " + s.program.DescribeIndex(static_cast<uint32_t>(idx));
            } else if (a.next_pc >= 0 && idx != a.next_pc) {
              res.divergence = who + " is at " + s.program.DescribeIndex(static_cast<uint32_t>(idx)) + " after " +
                               std::to_string(a.steps) + " instructions; the simulation has it at " +
                               s.program.DescribeIndex(static_cast<uint32_t>(a.next_pc));
            }
            break;
          }
          // A signal-delivery-stop: deliver (handler or default action), or
          // drop an ignored one without letting the stop count as a preemption.
          const SignalSpec* spec = s.FindSignal(sig);
          if (spec && spec->handler < 0) {
            user_regs_struct r2;
            if (!regs_of(tid, &r2) || !resume_quiet(tid, r2, r2.rip)) {
              fail("suppressing an ignored signal failed");
              dead = true;
              break;
            }
            continue;
          }
          log("kernel delivers " + SignalName(sig) + " to " + who);
          ptrace(PTRACE_CONT, tid, nullptr, reinterpret_cast<void*>(static_cast<intptr_t>(sig)));
        }
        break;
      }
    }
  }
  if (!dead && res.harness_error.empty()) res.completed = true;
  if (wd.fired()) {
    res.completed = false;
    fail("timed out after " + std::to_string(opt.timeout_s) + " s");
  }

  // --- results ---
  res.memory = jit.ReadMemory();
  res.threads.resize(nthreads);
  for (int t = 0; t < nthreads; ++t) {
    const ThreadRecord* rec = jit.record(t);
    RealThread& rt = res.threads[t];
    rt.exited = rec->exited != 0;
    rt.ret = rec->ret;
    rt.aborts = rec->aborts;
    rt.final_cpu = rec->final_cpu;
    for (uint32_t k = 0; k < std::min<uint32_t>(rec->num_observed, kMaxObservations); ++k) {
      rt.observed.emplace_back(rec->observed[k].id, rec->observed[k].value);
    }
    rt.pcs = jit.IrTrace(t);
    if (rec->assert_failed) {
      res.verdict = Verdict::kAssertFailed;
      const uint32_t pc = rec->assert_pc;
      const Instr& in = s.program.code[pc];
      res.message = "assert failed in " + s.threads[t].name + " at " + s.program.DescribeIndex(pc) +
                    (in.target < s.program.strings.size() ? ": " + s.program.strings[in.target] : "");
    }
  }
  if (dead && term_signal != 0 && res.verdict == Verdict::kPass) {
    res.verdict = term_signal == SIGSEGV ? Verdict::kSigsegv : Verdict::kKilled;
    res.message = "the tracee was killed by " + SignalName(term_signal);
    if (term_signal != SIGKILL || !wd.fired()) res.completed = res.harness_error.empty();
  }

  // --- teardown: kill and reap everything ---
  kill(pid, SIGKILL);
  for (;;) {
    pid_t r = waitpid(-1, &st, __WALL);
    if (r < 0 && errno == EINTR) continue;
    if (r < 0) break;  // ECHILD: everything reaped
    if (r == pid && (WIFEXITED(st) || WIFSIGNALED(st))) {
      // The leader goes last; collect any stragglers without blocking.
      while (waitpid(-1, &st, __WALL | WNOHANG) > 0) {
      }
      break;
    }
  }
  g_tracee = 0;
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
