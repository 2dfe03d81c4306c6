#include "kernel/harness/stress.h"

#include <linux/futex.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <climits>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

#include "kernel/harness/child.h"
#include "kernel/harness/jit.h"
#include "kernel/harness/tracer.h"
#include "sim/simulator.h"

namespace rseqmc::harness {
namespace {

constexpr int kMembarrierCmdRegisterPrivateExpeditedRseq = 1 << 8;  // include/uapi/linux/membarrier.h
constexpr int kRseqFlagUnregister = 1;                              // include/uapi/linux/rseq.h
constexpr int kExitParentGone = 111;
constexpr int kExitSetupFailed = 113;
constexpr int kExitAssert = 134;  // the JIT's assert path (exit_group(128 + SIGABRT))

// What the child tells the parent besides the JIT's records (MAP_SHARED).
struct StressShared {
  int64_t start_ns;    // CLOCK_MONOTONIC: workers released
  int64_t end_ns;      // CLOCK_MONOTONIC: the last worker returned (0 = never)
  uint64_t signals;    // tgkill()s of the signal storm that succeeded
  uint64_t affinity;   // sched_setaffinity()s of the affinity storm that succeeded
  char error[256];     // why the child's setup failed (exit kExitSetupFailed)
};

// Child-side state, set by the parent before fork (the child runs on its copy).
const JitProgram* g_jit = nullptr;
StressShared* g_sh = nullptr;
StressOptions g_opt;
std::vector<int> g_storm_signals;  // the scenario's signals with a handler
std::atomic<int> g_ready{0};       // workers and storms set up and waiting at the start barrier
int g_go = 0;                      // start barrier (futex word)
int g_stop = 0;                    // storms: every worker returned (futex word; wakes pausing storms)
thread_local ThreadRecord* tl_rec = nullptr;

int64_t NowNs() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1000000000 + ts.tv_nsec;
}

[[noreturn]] void SetupFailed(const std::string& why) {
  std::snprintf(g_sh->error, sizeof(g_sh->error), "%s", why.c_str());
  _exit(kExitSetupFailed);
}

// Runs the scenario's IR handler. With traps off r14 means nothing, so the
// handler gets a countdown it never reaches; the interrupted code's registers
// (r14 included) come back with sigreturn.
void OnStressSignal(int signo, siginfo_t*, void*) {
  ThreadRecord* rec = tl_rec;
  const SignalSpec* spec = g_jit->scenario().FindSignal(signo);
  if (!spec || spec->handler < 0 || !rec) return;
  JitContext h;
  h.rec = rec;
  h.r[1] = signo;
  g_jit->Call(static_cast<uint32_t>(spec->handler), &h, INT64_MAX / 2);
}

uint64_t CpuMask(uint32_t num_cpus) { return num_cpus >= 64 ? ~0ull : (1ull << num_cpus) - 1; }

bool SetAffinity(pid_t tid, uint64_t mask) {
  cpu_set_t set;
  CPU_ZERO(&set);
  for (int c = 0; c < 64; ++c) {
    if (mask >> c & 1) CPU_SET(c, &set);
  }
  return sched_setaffinity(tid, sizeof(set), &set) == 0;
}

// The start barrier: workers and storms are released together by the main thread.
void AwaitStart() {
  g_ready.fetch_add(1);
  while (__atomic_load_n(&g_go, __ATOMIC_ACQUIRE) == 0) {
    syscall(SYS_futex, &g_go, FUTEX_WAIT_PRIVATE, 0, nullptr, nullptr, 0);
  }
}

void* StressWorker(void* arg) {
  const int t = static_cast<int>(reinterpret_cast<intptr_t>(arg));
  const Scenario& s = g_jit->scenario();
  const ThreadSpec& ts = s.threads[t];
  ThreadRecord* rec = g_jit->record(t);
  // Start CPU first, then the declared affinity (which keeps it there when it allows it).
  if (!SetAffinity(0, 1ull << ts.cpu)) SetupFailed("cannot pin " + ts.name + " to cpu" + std::to_string(ts.cpu));
  const uint64_t allowed = ts.affinity & CpuMask(s.num_cpus);
  if (allowed != 0 && !SetAffinity(0, allowed)) SetupFailed("cannot set the affinity of " + ts.name);
  std::string why;
  if (!JitProgram::EnsureRseqRegistered(&why)) SetupFailed(why);
  if (!ts.rseq_registered) {
    char* area = static_cast<char*>(__builtin_thread_pointer()) + JitProgram::RseqOffset();
    syscall(SYS_rseq, area, JitProgram::RseqLength(), kRseqFlagUnregister, kRseqSig);
  }
  JitContext ctx;
  ctx.rec = rec;
  for (const auto& [reg, value] : ts.args) ctx.r[reg] = value;
  tl_rec = rec;
  rec->rseq_area = JitProgram::ThisThreadRseqArea();
  __atomic_store_n(&rec->tid, static_cast<int32_t>(syscall(SYS_gettid)), __ATOMIC_RELEASE);
  AwaitStart();
  g_jit->Call(static_cast<uint32_t>(ts.entry), &ctx, INT64_MAX / 2);
  tl_rec = nullptr;  // no handler runs for a returned thread (the simulator sends it nothing)
  rec->ret = ctx.r[0];
  internal::DisarmRseqCs();
  rec->final_cpu = internal::ThisThreadCpu();
  __atomic_store_n(&rec->exited, 1, __ATOMIC_RELEASE);
  return nullptr;
}

// splitmix64: the storms' random numbers.
uint64_t NextRandom(uint64_t& state) {
  uint64_t z = (state += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

// A random worker that has not returned (its tid), or 0 when none is left.
pid_t PickLiveWorker(uint64_t& rng) {
  const int n = static_cast<int>(g_jit->scenario().threads.size());
  const int first = static_cast<int>(NextRandom(rng) % static_cast<uint64_t>(n));
  for (int k = 0; k < n; ++k) {
    const ThreadRecord* rec = g_jit->record((first + k) % n);
    if (__atomic_load_n(&rec->exited, __ATOMIC_ACQUIRE) == 0) {
      const pid_t tid = __atomic_load_n(&rec->tid, __ATOMIC_ACQUIRE);
      if (tid != 0) return tid;
    }
  }
  return 0;
}

bool StormsStopped() { return __atomic_load_n(&g_stop, __ATOMIC_ACQUIRE) != 0; }

// Pauses storm_interval_us (validated: finite, at most kMaxStormIntervalUs),
// or less: a pause ends as soon as the workers are done (StopStorms()), so a
// long interval never keeps the child alive after the last worker returned.
void StormPause() {
  if (g_opt.storm_interval_us <= 0) return;
  const int64_t deadline = NowNs() + static_cast<int64_t>(g_opt.storm_interval_us * 1000);
  while (!StormsStopped()) {
    const int64_t left = deadline - NowNs();
    if (left <= 0) return;
    const timespec ts{static_cast<time_t>(left / 1000000000), static_cast<long>(left % 1000000000)};
    syscall(SYS_futex, &g_stop, FUTEX_WAIT_PRIVATE, 0, &ts, nullptr, 0);  // relative, CLOCK_MONOTONIC
  }
}

// Ends the storms: their loops see it, and a storm in StormPause() wakes now.
void StopStorms() {
  __atomic_store_n(&g_stop, 1, __ATOMIC_RELEASE);
  syscall(SYS_futex, &g_stop, FUTEX_WAKE_PRIVATE, INT_MAX, nullptr, nullptr, 0);
}

// A storm thread competes with THREADS busy workers: with plain CFS/EEVDF
// scheduling its wakeups wait for a worker's slice (milliseconds), so a short
// run would see a handful of actions. When it pauses between actions it runs
// SCHED_FIFO where permitted (it sleeps most of the time, so the workers keep
// the CPUs); with no pause it would starve them and stays SCHED_OTHER.
void StormSchedule() {
  prctl(PR_SET_TIMERSLACK, 1UL);  // microsecond pauses, not the default 50 us slack
  if (g_opt.storm_interval_us > 0) {
    sched_param sp{};
    sp.sched_priority = 1;
    pthread_setschedparam(pthread_self(), SCHED_FIFO, &sp);  // EPERM: stays SCHED_OTHER
  }
}

void* SignalStorm(void*) {
  StormSchedule();
  uint64_t rng = g_opt.seed * 2 + 1;
  const pid_t tgid = getpid();
  AwaitStart();
  while (!StormsStopped()) {
    const pid_t tid = PickLiveWorker(rng);
    const int sig = g_storm_signals[NextRandom(rng) % g_storm_signals.size()];
    if (tid != 0 && syscall(SYS_tgkill, tgid, tid, sig) == 0) __atomic_add_fetch(&g_sh->signals, 1, __ATOMIC_RELAXED);
    StormPause();
  }
  return nullptr;
}

void* AffinityStorm(void*) {
  StormSchedule();
  uint64_t rng = g_opt.seed * 2 + 2;
  const uint64_t all = CpuMask(g_jit->scenario().num_cpus);
  AwaitStart();
  while (!StormsStopped()) {
    const pid_t tid = PickLiveWorker(rng);
    uint64_t mask = 0;
    while (mask == 0) mask = NextRandom(rng) & all;
    if (tid != 0 && SetAffinity(tid, mask)) __atomic_add_fetch(&g_sh->affinity, 1, __ATOMIC_RELAXED);
    StormPause();
  }
  return nullptr;
}

[[noreturn]] void StressChildMain(pid_t parent) {
  prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (getppid() != parent) _exit(kExitParentGone);
  // A planted bug dies of SIGSEGV on purpose: no core file, no core handler.
  const rlimit no_core{0, 0};
  setrlimit(RLIMIT_CORE, &no_core);
  prctl(PR_SET_DUMPABLE, 0);
  const Scenario& s = g_jit->scenario();
  g_jit->shared()->tgid = getpid();
  syscall(SYS_membarrier, kMembarrierCmdRegisterPrivateExpeditedRseq, 0, 0);
  internal::InstallScenarioSignals(s, OnStressSignal);
  const size_t n = s.threads.size();
  std::vector<pthread_t> workers(n);
  for (size_t t = 0; t < n; ++t) {
    if (pthread_create(&workers[t], nullptr, StressWorker, reinterpret_cast<void*>(static_cast<intptr_t>(t))) != 0) {
      SetupFailed("pthread_create failed for thread " + s.threads[t].name);
    }
  }
  // The storms wait at the start barrier too, so that they hit from the
  // workers' first instruction on (a short run lasts milliseconds).
  std::vector<pthread_t> storms;
  auto start_storm = [&](void* (*fn)(void*)) {
    pthread_t th;
    if (pthread_create(&th, nullptr, fn, nullptr) != 0) SetupFailed("pthread_create failed for a storm thread");
    storms.push_back(th);
  };
  if (g_opt.signal_storm && !g_storm_signals.empty() && n > 0) start_storm(SignalStorm);
  if (g_opt.affinity_storm && n > 0) start_storm(AffinityStorm);
  while (g_ready.load() < static_cast<int>(n + storms.size())) {
    timespec ts{0, 100 * 1000};
    nanosleep(&ts, nullptr);
  }
  g_sh->start_ns = NowNs();
  __atomic_store_n(&g_go, 1, __ATOMIC_RELEASE);
  syscall(SYS_futex, &g_go, FUTEX_WAKE_PRIVATE, INT_MAX, nullptr, nullptr, 0);
  for (pthread_t th : workers) pthread_join(th, nullptr);
  g_sh->end_ns = NowNs();
  StopStorms();
  for (pthread_t th : storms) pthread_join(th, nullptr);
  _exit(0);
}

// Waits until child `pid` has ended, without reaping it (so its pid cannot be
// reused while KillCurrentTracee() may still signal it).
void AwaitExit(pid_t pid) {
  siginfo_t si{};
  while (waitid(P_PID, static_cast<id_t>(pid), &si, WEXITED | WNOWAIT) < 0 && errno == EINTR) {
  }
}

// Reaps child `pid`; on a waitpid error, kills it and waits again, so the
// child is never left behind. Returns its wait status.
int Reap(pid_t pid) {
  int st = 0;
  for (;;) {
    const pid_t r = waitpid(pid, &st, 0);
    if (r == pid) return st;
    if (r < 0 && errno == EINTR) continue;
    kill(pid, SIGKILL);  // should not happen: make sure nothing is left behind
    while (waitpid(pid, &st, 0) < 0 && errno == EINTR) {
    }
    return st;
  }
}

}  // namespace

StressReport RunStress(const Scenario& s, const StressOptions& opt) {
  if (!std::isfinite(opt.storm_interval_us) || opt.storm_interval_us < 0 ||
      opt.storm_interval_us > kMaxStormIntervalUs) {
    throw std::invalid_argument("StressOptions::storm_interval_us must be from 0 to " +
                                std::to_string(kMaxStormIntervalUs) + " us, not " +
                                std::to_string(opt.storm_interval_us));
  }
  for (const ThreadSpec& ts : s.threads) {
    if (ts.entry < 0) throw HarnessError("thread " + ts.name + " has a C++ body; only IR threads run on the kernel");
  }
  if (const std::string why = HarnessUnavailableReason(s.num_cpus, /*need_ptrace=*/false); !why.empty()) {
    throw HarnessError(why);
  }
  StressReport rep;
  const int nthreads = static_cast<int>(s.threads.size());
  rep.threads = static_cast<uint64_t>(nthreads);

  JitProgram jit(s, JitOptions{.traps = false, .ir_trace = false, .pin_affinity = false}, /*trace_slots=*/1);
  jit.ResetState();
  void* mem = mmap(nullptr, sizeof(StressShared), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  if (mem == MAP_FAILED) throw HarnessError(std::string("mmap of the stress counters failed: ") + std::strerror(errno));
  struct Unmap {
    void* p;
    ~Unmap() { munmap(p, sizeof(StressShared)); }
  } unmap{mem};
  StressShared* sh = static_cast<StressShared*>(mem);
  std::memset(sh, 0, sizeof(*sh));

  g_jit = &jit;
  g_sh = sh;
  g_opt = opt;
  g_storm_signals.clear();
  for (const SignalSpec& spec : s.signals) {
    if (spec.handler >= 0) g_storm_signals.push_back(spec.signo);
  }
  g_ready = 0;
  g_go = 0;
  g_stop = 0;

  const pid_t parent = getpid();
  const pid_t pid = fork();
  if (pid < 0) throw HarnessError(std::string("fork failed: ") + std::strerror(errno));
  if (pid == 0) StressChildMain(parent);
  SetCurrentTracee(pid);
  bool timed_out = false;
  try {
    internal::Watchdog wd(pid, opt.timeout_s);
    AwaitExit(pid);
    timed_out = wd.Disarm();
  } catch (...) {  // the watchdog's thread could not start
    kill(pid, SIGKILL);
    SetCurrentTracee(0);
    Reap(pid);
    throw;
  }
  SetCurrentTracee(0);
  const int st = Reap(pid);
  const int64_t reaped_ns = NowNs();

  // --- results ---
  if (WIFEXITED(st) && WEXITSTATUS(st) == kExitSetupFailed) {
    throw HarnessError(std::string("stress child setup failed: ") + sh->error);
  }
  if (WIFEXITED(st) && WEXITSTATUS(st) == kExitParentGone) throw HarnessError("stress child lost its parent");
  RealResult rr;
  internal::CollectRecords(jit, rr);
  uint64_t returned = 0;
  for (const RealThread& rt : rr.threads) {
    rep.aborts += rt.aborts;
    returned += rt.exited ? 1 : 0;
  }
  rep.completed = true;
  if (WIFSIGNALED(st)) {
    const int sig = WTERMSIG(st);
    if (rr.verdict != Verdict::kAssertFailed || timed_out) {
      rr.verdict = sig == SIGSEGV && !timed_out ? Verdict::kSigsegv : Verdict::kKilled;
    }
    if (timed_out) {
      rr.message = "timed out after " + std::to_string(opt.timeout_s) + " s (killed)";
      rep.completed = false;
    } else {
      rr.message = "the stress child was killed by " + SignalName(sig);
      rep.completed = sig != SIGKILL;  // SIGKILL from outside: KillCurrentTracee()
    }
  } else if (rr.verdict != Verdict::kAssertFailed && WEXITSTATUS(st) != 0) {
    throw HarnessError("stress child exited with status " + std::to_string(WEXITSTATUS(st)) +
                       (WEXITSTATUS(st) == kExitAssert ? " without a failed assert" : ""));
  }
  const ExecutionResult e = AsExecutionResult(s, rr);  // evaluates the properties when nothing else failed
  rep.verdict = e.verdict;
  rep.message = e.message;
  rep.memory = rr.memory;

  const int tc = s.FindConstant("THREADS"), oc = s.FindConstant("OPS");
  if (tc >= 0 && oc >= 0 && returned == static_cast<uint64_t>(nthreads)) {
    rep.operations = static_cast<uint64_t>(s.constants[tc].value) * static_cast<uint64_t>(s.constants[oc].value);
  } else {
    rep.operations = returned;
  }
  if (sh->start_ns != 0) {
    const int64_t end = sh->end_ns != 0 ? sh->end_ns : reaped_ns;
    rep.elapsed_s = static_cast<double>(end - sh->start_ns) * 1e-9;
  }
  rep.ops_per_s = rep.elapsed_s > 0 ? static_cast<double>(rep.operations) / rep.elapsed_s : 0;
  rep.signals_sent = sh->signals;
  rep.affinity_changes = sh->affinity;
  return rep;
}

}  // namespace rseqmc::harness
