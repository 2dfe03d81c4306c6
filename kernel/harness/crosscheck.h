// The real-kernel cross-check (DESIGN.md §7, issue 4): how far the simulator's
// kernel model agrees with the running kernel, with every disagreement shown.
//
// Modes:
//   * deterministic: every single-event schedule of the scenario (each event
//     kind, on each CPU's thread, at each boundary of the default execution)
//     plus `samples` seeded random multi-event schedules are run in the
//     simulator and forced on the kernel (kernel/harness/tracer.h); verdict,
//     final memory, return values, observations, abort counts, final CPUs and
//     each thread's executed IR instructions must be equal;
//   * outcomes: `samples` real runs with the threads running concurrently on
//     their CPUs and random injected events (at most `max_events`); every real
//     outcome must be in the reachable outcome set the caller passes in
//     (`CrosscheckOptions::reachable`: the CLI explores with the checker,
//     model/explorer.h, DPOR, for the same bound); coverage = share of that
//     set the runs saw. The harness itself never runs the checker (it does
//     not link it: issue 10).
//   * stress: no ptrace; THREADS = threads per CPU * CPUS and OPS = operations
//     per thread, signal and affinity storms (kernel/harness/stress.h); the
//     properties must hold (or, for a planted bug, fail as declared).
// A disagreement seen once is re-run; one that does not reproduce counts as
// `flaky` (a real preemption the tracer did not cause), neither as an
// agreement nor as a disagreement. Executions the simulator ends at its step
// limit while the threads still make progress are not compared
// (`not_comparable`); a livelock or deadlock is (tracer.h, Plan::open_end). A kernel run the harness could
// not complete (timeout, a ptrace or tracee failure, more observations than
// the harness stores) is no evidence about the model: it counts in
// `harness_errors`, not in `compared` nor `disagreements`. A tracee that
// cannot be traced at all (PTRACE_TRACEME failed) ends the cross-check with
// `skipped` set, as when ptrace is unavailable from the start.
#ifndef RSEQMC_KERNEL_HARNESS_CROSSCHECK_H_
#define RSEQMC_KERNEL_HARNESS_CROSSCHECK_H_

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <optional>

#include "kernel/harness/stress.h"
#include "sim/kernel_model.h"
#include "sim/outcome.h"
#include "sim/scenario.h"
#include "sim/simulator.h"

namespace rseqmc::harness {

enum class CrosscheckMode { kDeterministic, kOutcomes, kStress };
const char* CrosscheckModeName(CrosscheckMode m);  // "deterministic", "outcomes", "stress"

struct CrosscheckOptions {
  CrosscheckMode mode = CrosscheckMode::kDeterministic;
  uint64_t samples = 100;       // deterministic: random multi-event schedules; outcomes: real runs
  uint64_t seed = 1;
  uint32_t max_events = 2;      // events per random schedule / outcome-mode run (and the checker's bound)
  bool single_events = true;    // deterministic: enumerate every single-event schedule
  uint64_t max_single_events = 5000;  // deterministic: more than this many are sampled (seeded); 0 = all
  KernelVersion kernel;         // the model compared with the running kernel
  RunOptions::ModelFault fault = RunOptions::ModelFault::kNone;  // tests only
  double run_timeout_s = 10;    // per real run
  uint32_t max_details = 2;     // disagreements described in full
  std::string schedule;         // deterministic: force only this schedule token (rsq1...), with full detail
  // deterministic only (std::invalid_argument otherwise): run the imported
  // functions' original machine code instead of the JIT of their lifted IR
  // (kernel/harness/jit.h, tracer.h "Original-bytes mode"); the report's mode
  // is then "original". Skipped when OriginalCodeUnavailableReason() says so.
  bool original_bytes = false;
  // outcomes (required there, std::invalid_argument without it): the outcome
  // set the scenario can reach with at most `max_events` events under
  // `kernel` (and `fault`), as the model checker computes it.
  std::optional<ReachableOutcomes> reachable;
  // When `reachable` is incomplete: why its exploration stopped
  // ("time-limit after 1200 executions"), for the report.
  std::string reachable_incomplete_reason;
  // stress
  uint32_t stress_threads_per_cpu = 4;
  uint64_t stress_ops_per_thread = 250000;
  StressOptions stress;
};

struct Disagreement {
  std::string token;    // the schedule (rsq1...), replayable with `rseqmc replay`
  std::string summary;  // the first difference, one line
  std::string detail;   // simulator timeline and real run side by side
};

struct CrosscheckReport {
  std::string scenario;
  std::string mode;
  std::string kernel_release;   // uname -r
  std::string kernel_model;     // the simulator's model ("6.3-6.18 legacy + mm_cid")
  uint32_t rseq_size = 0;       // glibc's __rseq_size, or 32 for our own registration
  std::string rseq_registration;  // "glibc" or "own" (glibc did not register: tunable off)
  std::string skipped;          // non-empty: not run, and why
  std::string note;             // something the reader must know about the figures (e.g. mm_cid)
  bool interrupted = false;
  uint64_t compared = 0;        // schedules (or runs) compared
  uint64_t agreements = 0;
  uint64_t failures_agreed = 0;  // agreements whose verdict is a failure (assert, property, kill...): reproduced on the kernel
  // Of failures_agreed, those whose verdict is the one the scenario declares
  // for this kernel (`expect fail property`, Scenario::ExpectedOn): a planted
  // bug reproduced as planted. A livelock the default continuation runs into
  // on the way is a failure agreed, not the planted bug (the QEMU guest counts
  // a planted bug found on this figure; kernel/qemu/guest/init.c).
  uint64_t declared_failures_agreed = 0;
  uint64_t disagreements = 0;
  uint64_t flaky = 0;           // differed once, agreed when re-run (not counted as agreements)
  uint64_t harness_errors = 0;  // kernel runs the harness could not complete (not compared)
  std::vector<Disagreement> harness_error_details;  // the first few: token (if any) and why
  std::vector<std::string> flaky_details;  // "token: first difference" of some of them
  uint64_t not_comparable = 0;  // the simulator hit its step limit with progress (steplimit): not run on the kernel;
                                // or a program that reads mm_cid took another path on the kernel (its IDs)
  // Schedules not run, the first one's reason: in original-bytes mode those
  // that cannot be forced at machine-instruction granularity (OriginalLegs,
  // tracer.h); any with more real nanosleeps than a run may make
  // (crosscheck.cc kMaxRealSleeps).
  uint64_t not_forceable = 0;
  std::string not_forceable_reason;
  uint64_t single_events_total = 0;  // deterministic: single-event schedules of the default execution
  uint64_t single_events_run = 0;    // of which forced (all, or a sample past max_single_events)
  uint64_t reachable = 0;       // outcomes mode: size of the checker's outcome set
  uint64_t seen = 0;            // outcomes mode: distinct reachable outcomes the kernel produced
  double coverage = -1;         // seen / reachable (-1 = not applicable)
  // Outcomes mode with an incomplete reachable set (its exploration was
  // stopped: time or execution limit, Ctrl-C): coverage is of that partial
  // set, and a kernel outcome outside it is counted here, not as a
  // disagreement (it may only be unexplored).
  bool reachable_complete = true;
  std::string reachable_incomplete_reason;
  uint64_t outside_incomplete = 0;
  double elapsed_s = 0;
  double runs_per_s = 0;        // real runs per second
  StressReport stress;          // stress mode
  std::string expected;         // stress mode: the scenario's declared verdict
  bool not_reproduced = false;  // stress mode: a planted bug that passed under the storms (not a disagreement)
  bool has_ops = false;         // stress mode: the scenario has an OPS constant (--ops applies)
  std::vector<Disagreement> details;
};

// Runs one cross-check. `stop` (may be null) is polled between runs (Ctrl-C).
// Throws HarnessError when the JIT cannot be set up, std::invalid_argument in
// outcomes mode without `o.reachable`; returns a report with
// `skipped` set when the machine cannot run it (no rseq, no ptrace outside
// stress mode, too few CPUs) or the harness cannot drive the scenario (C++
// thread bodies; outside stress mode, a scenario that handles or sends SIGTRAP,
// the signal of the tracer's own stops).
CrosscheckReport Crosscheck(const Scenario& s, const CrosscheckOptions& o, const std::atomic<bool>* stop = nullptr);

// One single-event schedule of the deterministic mode: the default execution
// with `event` injected at instruction boundary `boundary` (Machine::boundary)
// and the default continuation (ChoiceView::DefaultCpu, the fair rotation of
// sim/blocking.cc) at every other decision.
struct SingleEvent {
  uint64_t boundary = 0;
  Decision event;
};
struct SingleEventSample {
  uint64_t total = 0;               // single-event schedules of the default execution
  std::vector<SingleEvent> picked;  // all of them, or the seeded sample past o.max_single_events (boundary order)
};
// The single-event schedules the deterministic mode forces for `s` under
// o.kernel, o.fault, o.seed and o.max_single_events: every event kind (preempt,
// migrate to each other CPU, each declared signal, IPI) on every CPU with a
// thread at every boundary of the default execution where it is valid. Runs
// only the simulator (no ptrace, no kernel): a host can see which schedules a
// QEMU guest's run draws and what the model predicts for each. Throws
// InputError like Simulator.
SingleEventSample SampleSingleEvents(const Scenario& s, const CrosscheckOptions& o);
// A scheduler that forces `e` (an event no longer valid at its boundary is
// skipped: the default continues).
std::unique_ptr<Scheduler> SingleEventScheduler(const SingleEvent& e);

// The comparison of one forced schedule: "" when the simulator and the kernel
// agree, else the first difference.
struct RealResult;
struct Plan;
std::string CompareRuns(const Scenario& s, const ExecutionResult& sim, const Plan& plan, const RealResult& real);

// `uname -r`.
std::string KernelRelease();

// True when the scenario ran (not skipped, not interrupted) but no schedule or
// run was compared with the simulator (e.g. every schedule hit the simulator's
// step limit): no evidence, which reports and the CLI must not show as
// agreement (issue 19; `rseqmc crosscheck` exits 5).
bool ComparedNothing(const CrosscheckReport& r);

// One line per scenario: name, mode, compared, agreements, disagreements, coverage, time.
std::string FormatReportLine(const CrosscheckReport& r);
// One JSON object, one line (keys: scenario, mode, kernel_release, kernel_model,
// rseq_size, compared, agreements, failures_agreed, disagreements, flaky, harness_errors,
// not_forceable, not_forceable_first (token: reason, or null),
// nothing_compared (ComparedNothing()),
// coverage, elapsed_s, runs_per_s, skipped, and for stress the stress figures,
// the disagreements (`details`) and `harness_error_details`).
std::string FormatReportJson(const CrosscheckReport& r);

}  // namespace rseqmc::harness

#endif  // RSEQMC_KERNEL_HARNESS_CROSSCHECK_H_
