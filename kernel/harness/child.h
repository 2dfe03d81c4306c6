// Internal to kernel/harness: what the forked child processes that run JIT'd
// scenarios (the tracer's tracee, the stress runner's child) share: their
// deadline, their signal dispositions, the collection of their results. Not
// part of the harness API.
#ifndef RSEQMC_KERNEL_HARNESS_CHILD_H_
#define RSEQMC_KERNEL_HARNESS_CHILD_H_

#include <signal.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <string>
#include <thread>

#include "kernel/harness/jit.h"
#include "kernel/harness/tracer.h"
#include "sim/scenario.h"

namespace rseqmc::harness::internal {

// Sends SIGKILL to process `pid` once `seconds` (wall clock) have passed,
// unless disarmed (or destroyed) first. Reaping the child stays the owner's
// job. Throws std::system_error if its thread cannot be started.
//
// Disarm() makes the outcome final: after it returns, the watchdog has either
// fired (and says so) or never will. Reading fired() while it is still armed
// races with the deadline; decisions about a run use Disarm().
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
  ~Watchdog() { Disarm(); }
  Watchdog(const Watchdog&) = delete;
  Watchdog& operator=(const Watchdog&) = delete;

  // Stops the deadline (joins the thread) and returns whether it had fired,
  // i.e. whether the SIGKILL was sent. Idempotent.
  bool Disarm() {
    {
      std::lock_guard lk(mu_);
      done_ = true;
    }
    cv_.notify_all();
    if (th_.joinable()) th_.join();
    return fired_;
  }

  // True once the deadline passed and the SIGKILL was sent (final only after
  // Disarm()).
  bool fired() const { return fired_; }

 private:
  pid_t pid_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool done_ = false;
  std::atomic<bool> fired_{false};
  std::thread th_;
};

// The CPU the calling thread runs on, from getcpu(2), or -1 if it fails. Not
// glibc's sched_getcpu(): when glibc registered rseq it returns the cpu_id of
// the thread's struct rseq, a field the scenario can overwrite (issue 10).
inline int32_t ThisThreadCpu() {
  unsigned cpu = 0;
  return syscall(SYS_getcpu, &cpu, nullptr, nullptr) == 0 ? static_cast<int32_t>(cpu) : -1;
}

// Disarms the calling thread's critical section (rseq->rseq_cs := 0), for the
// harness's own code after a scenario thread returned. The descriptor the
// program left armed is the program's, and the simulator judges nothing after
// the return; but a kernel built with CONFIG_DEBUG_RSEQ validates a non-zero
// rseq_cs at every system call exit (rseq_syscall() -> rseq_get_rseq_cs(),
// kernel/rseq.c, 4.18 to 6.18) and kills with SIGSEGV on a bad signature, so
// the getcpu(2) of ThisThreadCpu() killed a thread the simulator saw return
// (buggy/no_signature on the patched 6.1 kernel under QEMU, issue 11).
inline void DisarmRseqCs() {
  char* area = static_cast<char*>(__builtin_thread_pointer()) + JitProgram::RseqOffset();
  __atomic_store_n(reinterpret_cast<uint64_t*>(area + kRseqOffRseqCs), uint64_t{0}, __ATOMIC_RELAXED);
}

// Installs the scenario's signal dispositions in the calling process: a
// signal with an IR handler gets `handler` (SA_SIGINFO, SA_NODEFER when the
// scenario says so; the handler runs the IR function), one without is
// ignored (SIG_IGN); fault signals get their default action back. Errors of
// sigaction() (an invalid number) are ignored:
// the scenario was validated.
inline void InstallScenarioSignals(const Scenario& s, void (*handler)(int, siginfo_t*, void*)) {
  // A fault kills the child as it would the scenario's process, even when the
  // parent installed its own handlers (sanitizers catch SIGSEGV and exit(1)).
  for (int sig : {SIGSEGV, SIGBUS, SIGILL, SIGFPE}) signal(sig, SIG_DFL);
  for (const SignalSpec& spec : s.signals) {
    struct sigaction sa {};
    if (spec.handler >= 0) {
      sa.sa_sigaction = handler;
      sa.sa_flags = SA_SIGINFO | (spec.nodefer ? SA_NODEFER : 0);
    } else {
      sa.sa_handler = SIG_IGN;
    }
    sigemptyset(&sa.sa_mask);
    sigaction(spec.signo, &sa, nullptr);
  }
}

// Copies what the child left in `jit`'s shared records into `res`: final
// memory, each thread's outcome (pcs = its IR trace, empty without
// JitOptions::ir_trace) and, when a thread's assert failed, verdict
// kAssertFailed with "assert failed in <thread> at <instruction>: <text>" (the
// last such thread's). A thread that made more observations than its slots
// (JitOptions::observation_slots) has only the stored ones copied, and
// res.harness_error (if still empty) says so: the run hit a harness limit and
// its observations cannot be compared; likewise a thread whose IR trace
// filled its slots (JitProgram's trace_slots).
inline void CollectRecords(const JitProgram& jit, RealResult& res) {
  const Scenario& s = jit.scenario();
  const int n = static_cast<int>(s.threads.size());
  res.memory = jit.ReadMemory();
  res.threads.resize(n);
  for (int t = 0; t < n; ++t) {
    const ThreadRecord* rec = jit.record(t);
    RealThread& rt = res.threads[t];
    rt.exited = rec->exited != 0;
    rt.ret = rec->ret;
    rt.aborts = rec->aborts;
    rt.final_cpu = rec->final_cpu;
    const auto* slots = reinterpret_cast<const ObservationSlot*>(rec->obs_begin);
    for (uint32_t k = 0; k < std::min(rec->num_observed, rec->obs_capacity); ++k) {
      rt.observed.emplace_back(slots[k].id, slots[k].value);
    }
    if (rec->num_observed > rec->obs_capacity && res.harness_error.empty()) {
      res.harness_error = "harness limit: " + s.threads[t].name + " made " + std::to_string(rec->num_observed) +
                          " observations, more than the " + std::to_string(rec->obs_capacity) +
                          " the harness stores per thread (not a disagreement; observe less, e.g. -D a smaller "
                          "loop bound)";
    }
    rt.pcs = jit.IrTrace(t);
    if (!rt.pcs.empty() && rt.pcs.size() >= jit.trace_slots() && res.harness_error.empty()) {
      res.harness_error = "harness limit: " + s.threads[t].name + "'s IR trace filled its " +
                          std::to_string(jit.trace_slots()) +
                          " slots, so the instructions past them are not known (not a disagreement; "
                          "construct the JitProgram with more trace slots)";
    }
    if (rec->assert_failed) {
      res.verdict = Verdict::kAssertFailed;
      const uint32_t pc = rec->assert_pc;
      const Instr& in = s.program.code[pc];
      res.message = "assert failed in " + s.threads[t].name + " at " + s.program.DescribeIndex(pc) +
                    (in.target < s.program.strings.size() ? ": " + s.program.strings[in.target] : "");
    }
  }
}

}  // namespace rseqmc::harness::internal

#endif  // RSEQMC_KERNEL_HARNESS_CHILD_H_
