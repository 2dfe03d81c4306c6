// Stress mode of the real-kernel cross-check (DESIGN.md §7, issue 4): the
// scenario's threads run the JIT'd IR at full speed on the real CPUs, with no
// ptrace, while a signal storm (tgkill of random workers with the scenario's
// handled signals) and an affinity storm (sched_setaffinity of random workers
// to random non-empty subsets of the scenario's CPUs) hit them; the scenario's
// properties must hold at the end (reference/inject-prototype.md §5 is the
// prototype: 8 threads, 400 M increments, exact sum, ~3,000 aborts).
//
// Everything runs in a forked child process (a planted bug may kill it with
// SIGSEGV; the parent reports that as the verdict), killed and reaped on
// timeout or KillCurrentTracee().
#ifndef RSEQMC_KERNEL_HARNESS_STRESS_H_
#define RSEQMC_KERNEL_HARNESS_STRESS_H_

#include <cstdint>
#include <string>
#include <vector>

#include "sim/scenario.h"

namespace rseqmc::harness {

// The longest pause between two storm actions RunStress() accepts, us (1 s).
inline constexpr double kMaxStormIntervalUs = 1e6;

struct StressOptions {
  // Pause between two storm actions (each storm thread), us; 0 = no pause;
  // finite and at most kMaxStormIntervalUs. A pause ends early when the last
  // worker returns (the storms stop at once, whatever the interval).
  // With a pause the storm threads run SCHED_FIFO where permitted, so they act
  // at about this rate however busy the workers keep the CPUs (on a 2-CPU VM,
  // 10 us: ~40,000 actions/s per storm, and the workers run up to ~50x slower
  // than undisturbed; 100 us: ~8,000/s, hardly slower); without one they stay
  // SCHED_OTHER.
  double storm_interval_us = 10;
  bool signal_storm = true;
  bool affinity_storm = true;
  double timeout_s = 120;         // wall-clock limit of the whole child, s; past it: SIGKILL, verdict killed,
                                  // completed = false
  uint64_t seed = 1;              // storms' random choices
};

struct StressReport {
  Verdict verdict = Verdict::kPass;  // pass, property, assert, sigsegv, killed
  std::string message;               // why it failed / was not run
  bool completed = false;            // ran to the end (false: timeout, harness error)
  uint64_t threads = 0;
  uint64_t operations = 0;           // THREADS * OPS when the scenario declares both and every thread
                                     // returned, else the threads that returned
  double elapsed_s = 0;               // wall time from the workers' release to the last return (or the child's death)
  double ops_per_s = 0;              // operations / elapsed_s (0 when elapsed_s is 0)
  uint64_t aborts = 0;               // rseq aborts landed (JIT abort stubs), all threads
  uint64_t signals_sent = 0;
  uint64_t affinity_changes = 0;
  // Final data memory, laid out as the simulator's (byte i at kDataBase + i;
  // ExecutionResult::memory, so SymbolValue() reads it); filled whenever the
  // child ran, whatever the verdict.
  std::vector<uint8_t> memory;
};

// Runs `s` (already instantiated with the caller's -D values, e.g.
// THREADS = threads per CPU * CPUS, OPS = operations per thread) once under the
// storms. Threads start on their declared CPU with their declared affinity.
// Verdict: killed by SIGSEGV -> sigsegv; by another signal -> killed (a
// timeout or KillCurrentTracee() also sets completed = false); an IR assert
// failed -> assert; otherwise the properties are evaluated on the final memory
// (property, or pass). Throws std::invalid_argument when
// opt.storm_interval_us is not finite or outside [0, kMaxStormIntervalUs];
// HarnessError when the harness cannot run (see HarnessUnavailableReason; no
// ptrace needed), a thread has a C++ body, or the child's setup failed
// (pinning, rseq registration, thread creation).
StressReport RunStress(const Scenario& s, const StressOptions& opt = {});

}  // namespace rseqmc::harness

#endif  // RSEQMC_KERNEL_HARNESS_STRESS_H_
