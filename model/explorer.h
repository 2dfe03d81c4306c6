// Exploration strategies: how the model checker drives the simulator through
// many executions of one scenario (DESIGN.md §6).
//
// Every strategy is a Scheduler (sim/scheduler.h) plus a loop over executions:
//   * kDfs      — exhaustive depth-first search over every decision at every
//                 boundary (which thread steps; every injectable event), within
//                 the bounds. The reference the others are checked against.
//   * kDpor     — DFS with optimal dynamic partial-order reduction: source
//                 sets with wakeup trees (Abdulla et al., POPL'14 Algorithm 2;
//                 model/wakeup_tree.h) over races found with vector clocks,
//                 and sleep sets. A reversed race is explored along its
//                 sequence v, so executions without injected events are never
//                 sleep-set blocked. A thread's injected events (preempt,
//                 migrate, signal, IPI of its CPU) are its local
//                 alternatives, still explored wherever the thread is
//                 explored (conservative); with events allowed most executions
//                 on the two-thread built-ins end sleep-set blocked in those
//                 alternatives (tools/bench/README.md). Dependence is the
//                 footprint relation of sim/footprint.h.
// The exhaustive strategies offer events only at boundaries where they can
// matter (ExploreOptions::defer_events), and size their thread sets to the
// scenario (model/thread_set.h: any number of threads up to kMaxThreads).
// kDfs and kStateful explore ample sets: where a running thread's next step
// is independent of every other thread (register-only, or an rseq_load /
// rseq_arm of its own area; Machine::NextStepIsIndependent), only that
// thread's alternatives are tried; stateful search expands a node fully where
// a revisit closes a cycle of such nodes (the cycle proviso). model/explorer.cc
// states Peled's conditions and why each holds.
//   * kStateful — DFS with a visited set of 128-bit state hashes (pure-IR
//                 scenarios only; model/state_set.h): a boundary whose state
//                 was seen is pruned. The hash (Machine::StateHash) leaves out
//                 the mm_cid allocation when the program cannot read mm_cid
//                 (no `rseq_load mm_cid`, no `rseq_addr`: the assumption DPOR's
//                 dependence makes too) and the per-kind event counts of kinds
//                 without a per-kind bound. It does not report livelocks: a
//                 busy-wait returns to a visited state (and is pruned) one
//                 iteration before spin detection would flag it; use dfs or
//                 dpor for livelock checks.
//   * kRandom   — seeded random walk (RandomScheduler with the bounds).
//   * kPct      — PCT (Burckhardt et al., ASPLOS'10): random thread priorities
//                 with d-1 priority change points, which may also be injected
//                 migrations and signals; see model/pct.h.
// Bounds count injected events by kind; all are functions of the multiset of
// transitions, so every interleaving of a Mazurkiewicz trace has the same cost
// and DPOR/state hashing stay sound under them (the outcome sets of kDfs, kDpor
// and kStateful are equal; tests/explorer_test.cc checks it). Interleaving of
// CPUs is not bounded: CPUs run in parallel. `--preemption-bound P` bounds
// injected preemptions (the kernel's), as CHESS/Loom bound theirs.
//
// Example:
//
//     ExploreOptions o;
//     o.strategy = StrategyKind::kDpor;
//     o.bounds.max_events = 2;
//     ExploreResult r = Explore(scenario, o);
//     if (r.failure) std::cout << EncodeSchedule(scenario, r.failure->schedule);
#ifndef RSEQMC_MODEL_EXPLORER_H_
#define RSEQMC_MODEL_EXPLORER_H_

#include <atomic>
#include <cstdint>
#include <functional>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "model/state_storage.h"
#include "sim/outcome.h"
#include "sim/schedule.h"
#include "sim/simulator.h"

namespace rseqmc {

inline constexpr uint32_t kUnbounded = 0xffffffffu;
// The default of ExploreOptions::max_memory_bytes and `rseqmc check
// --max-memory`: 4 GiB, a sixth of this project's 24 GiB machine that several
// users share.
inline constexpr uint64_t kDefaultMaxMemoryBytes = uint64_t{4} << 30;

// Bounds on injected events per execution (DESIGN.md §4).
struct Bounds {
  uint32_t max_events = 2;                // all kinds together
  uint32_t max_preemptions = kUnbounded;  // kPreempt events
  uint32_t max_migrations = kUnbounded;   // kMigrate events
  uint32_t max_signals = kUnbounded;      // kSignal events
  uint32_t max_ipis = kUnbounded;         // kIpi events
  // True if one more event of `kind` fits after `counts` (indexed by DecisionKind).
  bool Allows(DecisionKind kind, const uint32_t* counts, uint32_t total) const;
  // "events<=2 preempt<=1 ..." (unbounded kinds omitted).
  std::string ToString() const;
};

enum class StrategyKind { kDfs, kDpor, kStateful, kRandom, kPct };
const char* StrategyName(StrategyKind k);                  // "dfs", "dpor", ...
std::optional<StrategyKind> ParseStrategy(const std::string& name);

// Outcome and OutcomeOf (a final state, as compared across strategies and
// with the real kernel) are in sim/outcome.h.

struct ExploreProgress {
  uint64_t executions = 0;
  double elapsed_s = 0;
  uint64_t distinct_outcomes = 0;
  uint64_t max_depth = 0;   // longest execution, in decisions
  uint32_t bound_level = 0; // events bound currently explored (iterative bounding)
  uint64_t states = 0;      // visited states (stateful)
};

struct ExploreOptions {
  StrategyKind strategy = StrategyKind::kDpor;
  Bounds bounds;
  RunOptions run;                      // kernel model, step budget per execution
  uint64_t seed = 1;                   // random / PCT
  uint32_t pct_depth = 3;              // PCT bug depth d
  uint64_t max_executions = 0;         // 0 = unlimited (random/PCT default to 10000)
  // Stateful search: stop with "max-states" once the visited set holds this
  // many states (checked where the memory limit is). 0 = unlimited. The
  // bound of `--strategy auto`'s event-free pilot (model/strategy_choice.h).
  uint64_t max_states = 0;
  double time_limit_s = 0;             // 0 = unlimited
  // Bound on the exploration's memory: the path, the machine checkpoints
  // (which get at most an eighth of it, at most 128 MiB, and are spaced out
  // as executions get longer), the stateful visited set and the distinct
  // outcomes; past it the exploration stops with "memory-limit". 0 =
  // unlimited (checkpoints still within 128 MiB).
  uint64_t max_memory_bytes = kDefaultMaxMemoryBytes;
  // The machine checkpoints' share of it (at least two are kept); default
  // min(128 MiB, max_memory_bytes / 8). Any budget explores the same
  // executions: a smaller one replays more of each path.
  std::optional<uint64_t> checkpoint_budget_bytes;
  bool stop_at_first_failure = true;
  bool collect_outcomes = true;        // keep the set of distinct outcomes
  // Events only where they can matter (exhaustive strategies: dfs, dpor,
  // stateful, and each worker of --jobs): an event on a thread is left out
  // at a boundary where the same event at the thread's next boundary reaches
  // the same final states (Machine::EventCommutesWithNextStep: the thread is
  // outside every critical section / region at both, and its next step
  // touches only its own registers and reads nothing the event can change;
  // or, Machine::EventCommutesWithLoneMemoryStep, a preemption, migration or
  // IPI before a load or store of ordinary memory once every other thread
  // has exited; sim/event_commute.cc has the argument), so one position per class of
  // equivalent positions is explored: the last. Under every ABI, the 2015
  // RFC's included. false (`rseqmc check --all-event-positions`): events at
  // every boundary, the reference this reduction is tested against
  // (tests/explorer_test.cc). Random: true decides only at boundaries that
  // can make a difference (RandomOptions::skip_local_boundaries), false asks
  // at every boundary (the random stream before that shortcut). PCT ignores it.
  bool defer_events = true;
  // DFS only: cycle pruning. At a boundary where a thread is about to
  // sched_yield, the machine state (Machine::StateHash) is compared with the
  // earlier such boundaries of the current path; if it repeats, the threads
  // that ran in between only went round loops. A fair cycle (every runnable
  // thread ran) is reported as a livelock; an unfair one (a runnable thread
  // left out, e.g. a holder on another CPU) ends the branch as "pruned:
  // cycle" (ExploreResult::cycles_pruned), since every continuation of the
  // repeated state is one of the first occurrence's, which the search
  // explores. Only if some boundary of the cycle offered every running
  // thread's alternatives (the cycle proviso: no thread ignored around the
  // cycle); only for scenarios whose threads are all IR. Not for DPOR: its
  // backtrack points come from the races of whole executions, and a branch
  // cut at a repeated state hides the races of its continuation (naive DPOR
  // with state matching misses bugs: Yang, Chen, Gopalakrishnan, Kirby,
  // SPIN 2008), and a sleep set at the revisit need not contain the first
  // visit's. false: the reference without it (tests/blocking_test.cc).
  bool prune_cycles = true;
  // Stateful search: what the visited set keeps of each state
  // (model/state_set.h). kHash128 (default) gives the golden counts; kHash64
  // (hash compaction) and kBitstate trade a small, reported chance of skipping
  // states (ExploreResult::omission_estimate) for memory. A snapshot
  // (checkpoint) needs kHash128: a bit array cannot be saved as keys.
  StateStorage state_storage = StateStorage::kHash128;
  // kBitstate: the bit array holds 2^bitstate_log2 bits
  // (kMinBitstateLog2 .. kMaxBitstateLog2; default 2^27 bits = 16 MiB).
  uint32_t bitstate_log2 = kDefaultBitstateLog2;
  // Iterative bounding: explore with max_events = 0, 1, ..., bounds.max_events
  // (each level complete before the next), so the first failure found has the
  // fewest events. Only for the exhaustive strategies.
  bool iterative = false;
  // Optional extra judgement of each finished execution (oracles); may turn a
  // passing verdict into a failure by returning a message (empty = fine).
  std::function<std::string(const ExecutionResult&)> oracle;
  // Called with every finished execution, after any oracle's verdict (for
  // example to keep one schedule per outcome: `rseqmc diff-kernels`).
  std::function<void(const ExecutionResult&)> on_execution;
  // Set from a signal handler to stop cleanly; polled between executions
  // and, by the exhaustive strategies, every 1024 boundaries inside one (as
  // is time_limit_s). An execution stopped inside is not counted; a snapshot
  // taken then resumes it.
  const std::atomic<bool>* interrupt = nullptr;
  // Called about once a second while exploring.
  std::function<void(const ExploreProgress&)> progress;
  // Checkpoints (`rseqmc check --checkpoint`). When `snapshot` is set, Explore
  // calls it with an opaque, versioned snapshot of the exploration between
  // executions: when it stops early for a reason other than a failure
  // (interrupt, max-executions, time or memory limit) and, if
  // snapshot_interval_s > 0, about that often while exploring. Passing such
  // bytes as `resume_from` (same scenario, strategy, bounds, kernel, step budget,
  // seed, PCT depth, iterative flag and collect_outcomes) continues where the
  // snapshot was taken: executions, outcomes, failure and the final result are
  // those of one uninterrupted run. Budgets apply per call, except
  // max_executions, which counts the resumed executions too. Random and PCT
  // resume by re-running the executions done (their random stream depends on
  // each execution), the exhaustive strategies from their saved search stack
  // (and visited set). A snapshot that does not match throws InputError.
  std::function<void(const std::string&)> snapshot;
  double snapshot_interval_s = 0;
  const std::string* resume_from = nullptr;
};

struct Failure {
  Schedule schedule;        // replays the failing execution
  Verdict verdict = Verdict::kPass;
  std::string message;
  uint64_t execution = 0;   // index of the execution that failed (1-based)
  uint64_t trace_hash = 0;  // ExecutionResult::TraceHash() before any oracle's verdict (a replay must
                            // reproduce it; not for a livelock, whose replay runs to the step limit)
};

struct ExploreResult {
  uint64_t executions = 0;       // executions run (including pruned/redundant ones)
  uint64_t redundant = 0;        // executions abandoned by sleep sets / state hashing
  uint64_t cycles_pruned = 0;    // dfs: of the redundant ones, those ended at an unfair cycle (prune_cycles)
  bool complete = false;         // the bounded space was exhausted
  std::string stop_reason;       // "exhausted", "failure", "max-executions", "time-limit", "memory-limit", "interrupted"
  std::optional<Failure> failure;
  std::set<Outcome> outcomes;    // when collect_outcomes
  uint64_t distinct_outcomes = 0;
  uint64_t max_depth = 0;
  uint64_t states = 0;           // stateful: distinct states visited
  uint64_t state_bytes = 0;      // stateful: bytes held by the visited set
  // Stateful: expected number of states skipped because their stored form
  // (ExploreOptions::state_storage) collided with a visited state's; also an
  // upper bound on the probability that any was (StateSet::OmissionEstimate).
  double omission_estimate = 0;
  // Exhaustive strategies: the largest memory the exploration held after an
  // execution (path nodes, machine checkpoints, visited set, outcomes), in
  // bytes, as estimated from buffer capacities for the memory limit.
  uint64_t peak_memory_bytes = 0;
  uint32_t bound_level = 0;      // iterative: the events bound reached
  double elapsed_s = 0;          // including the time of the run a snapshot was resumed from
  uint64_t resumed_executions = 0;  // executions done before the snapshot this run resumed from
  // The AbiRule bits (sim/kernel/abi.h) recorded by the executions of this
  // run: an ABI that differs from the explored one in none of them would have
  // run the same executions (`rseqmc check` shares the result). Not kept in a
  // snapshot: a resumed run records only its own executions.
  uint32_t rule_sensitivity = 0;
};

// Explores `s` with `o`. Throws InputError for a strategy that cannot handle
// the scenario (stateful search with native threads).
ExploreResult Explore(const Scenario& s, const ExploreOptions& o);

// The outcome set `s` can reach with at most `max_events` injected events
// under `run` (kernel model, fault, step budget), explored exhaustively with
// DPOR; incomplete (`complete` false) when `interrupt` stopped it. The input
// of the real-kernel cross-check's outcome mode (kernel/harness/crosscheck.h),
// which does not run the checker itself.
ReachableOutcomes ReachableOutcomesOf(const Scenario& s, uint32_t max_events, const RunOptions& run,
                                      const std::atomic<bool>* interrupt = nullptr);

}  // namespace rseqmc

#endif  // RSEQMC_MODEL_EXPLORER_H_
