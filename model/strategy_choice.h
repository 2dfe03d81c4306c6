// `--strategy auto` (the default of `rseqmc check`): which exhaustive
// strategy explores a scenario, chosen from its program text and from a
// short event-free pilot of both strategies, and why.
//
// The two candidates cost differently as a test grows (issue 18;
// tools/bench/README.md, "The cost curve" and "strategy_table"):
//   * DPOR (model/explorer.h, kDpor) runs one execution per Mazurkiewicz
//     trace, each the whole path; at one event it runs each event position
//     (plan) under the event-free traces' reduction, so its executions grow
//     with the event positions times the traces, its memory with the length
//     of one execution. percpu_list PER=4..128 at K=1: 2,200 .. 56,264
//     executions (~PER^0.94), 6 .. 141 MB, 18-22 % redundant.
//   * Stateful search (kStateful) stores every machine state it visits and
//     cuts a branch at a visited one. Where many interleavings converge on
//     few states (a futex handoff, tcmalloc's slab cache, abba) it visits
//     each state once where DPOR walks every trace through it (5-28x faster
//     at K=1 on futex_rwsem, tcmalloc_cached_slabs, buggy/abba_deadlock;
//     those spin-wait, so rule 2 gives them dpor all the same). Where threads
//     on different CPUs run side by side without racing, its states are the
//     product of the threads' positions: percpu_list PER=4..64 at K=1 stores
//     ~PER^2 states (1.09 GB at PER=64, past 4 GiB at PER=128), and nearly
//     all of its executions end at a visited state (99.8-100 % "redundant").
// The rule, in order:
//   1. dpor when a thread's body is C++ (ThreadSpec::native): stateful
//      search needs every thread's state as data;
//   2. dpor when some loop of the program can run an iteration that leaves
//      the thread's state as it was (SpinLoop: a backward branch or jmp whose
//      body updates no register from its own value, has no xadd and no
//      observe): a spin-wait, whose livelock stateful search can prune
//      (explorer.h, kStateful) and DPOR's spin detection reports;
//   3. otherwise two pilots at K=0 (no events) with the check's options
//      (kernel, step budget, oracle, memory and time limits): DPOR, at most
//      kPilotMaxTraces executions, then stateful search, stopped once it
//      holds kStatesPerDporStep x DPOR's work states (ExploreOptions::
//      max_states), DPOR's work being its executions x its depth (the
//      boundaries of the longest). The figure that decides is
//        rho = stateful search's event-free states / DPOR's event-free work:
//      rho >= kStatesPerDporStep -> dpor: the threads race in few places;
//      stateful search multiplies their positions and DPOR does not, and an
//      event multiplies both alike (percpu_list: rho 6.1 at PER=1, 10.4 at
//      4, 27 at 16, 94 at 64; percpu_buffer 8.2, percpu_counter 2.3,
//      mm_cid_counter 2.5);
//      rho < kStatesPerDporStep -> stateful: either the threads do not
//      interleave without events (one event-free execution, rho = 1:
//      buggy/cpu_not_rechecked, stale_cpu_retry, commit_not_last,
//      abort_retry_livelock; a stateful branch ends at the first state it has
//      seen where a DPOR execution runs to the end), or many interleavings
//      converge on few states (futex_rwsem 0.20, tcmalloc_cached_slabs 0.13,
//      abba_deadlock 0.11, were it not for rule 2);
//      a DPOR pilot that reaches kPilotMaxTraces -> stateful (the threads
//      race in many places); a pilot stopped by --time-limit, --max-memory
//      or Ctrl-C -> dpor, whose memory stays linear in the execution's
//      length. --max-executions does not bound the pilots (they have their
//      own caps), so it never changes the choice.
//      Calibrated on 2026-12-03 (main a13291d) against strategy_table
//      --strategies dpor,stateful on every built-in and cost_bench on
//      percpu_list PER=4..128 (tools/bench/README.md has the table with each
//      pick). Of the rows rule 3 decides, DPOR was slower than stateful at
//      K=1 only on tiny ones (buggy/no_signature 3x: 4 ms against 1 ms).
// Deterministic: the pilots are bounded by executions and states, not time,
// so the same scenario and options give the same choice and reason (unless
// --time-limit stops a pilot). Cheap: at most kPilotMaxTraces event-free DPOR
// executions and 2x their steps in stateful states; on percpu_list PER=128,
// 0.25 s against a K=1 exploration of minutes (StrategyChoice::pilot_seconds,
// `rseqmc check` prints it). At K=0 the chosen strategy's pilot is the
// exploration: `rseqmc check` reuses it instead of exploring again.
// Explicit strategies (`--strategy dpor|dfs|stateful|...`) are never changed.
#ifndef RSEQMC_MODEL_STRATEGY_CHOICE_H_
#define RSEQMC_MODEL_STRATEGY_CHOICE_H_

#include <cstdint>
#include <optional>
#include <string>

#include "model/explorer.h"
#include "sim/scenario.h"

namespace rseqmc {

// The DPOR pilot's cap, in executions (Mazurkiewicz traces without events).
inline constexpr uint64_t kPilotMaxTraces = 256;
// rho at or above which auto picks dpor (stateful states per DPOR step,
// event-free). Calibrated: the per-CPU built-ins have 2.3-8.2, the ones
// where stateful search wins at K=1 by 4x or more have 0.1-1.0.
inline constexpr double kStatesPerDporStep = 2.0;

struct StrategyChoice {
  StrategyKind kind = StrategyKind::kDpor;  // kStateful or kDpor
  // One sentence for people: why, naming the thread, the loop
  // ("function+offset .. function+offset") or the pilot's figures.
  std::string reason;
  // The chosen strategy's event-free pilot when it ran to its end
  // (exhausted, or stopped at a failure under stop_at_first_failure): what
  // Explore(s, base) returns when base.bounds.max_events is 0, so a check at
  // K=0 reuses it (same options but the snapshot, progress and on_execution
  // hooks, which the pilots do not call). Empty otherwise.
  std::optional<ExploreResult> pilot;
  double pilot_seconds = 0;  // wall time of both pilots
};

// The strategy `--strategy auto` explores `s` under, given the options the
// check would explore it with (`base`: kernel, step budget, oracle, memory
// and time limits, interrupt; its strategy, bounds, iterative flag,
// snapshot, resume and progress hooks are not used by the pilots). Throws
// only what Explore throws.
StrategyChoice ChooseStrategy(const Scenario& s, const ExploreOptions& base = {});

}  // namespace rseqmc

#endif  // RSEQMC_MODEL_STRATEGY_CHOICE_H_
