// Counterexample minimisation: the smallest schedule that still fails the same
// way (DESIGN.md §6: "the schedule minimised to the fewest events that still
// fail").
//
// A failing schedule from the explorer (or from a random run) usually carries
// CPU switches and events that have nothing to do with the bug. MinimizeSchedule
// shrinks it by delta debugging (Zeller and Hildebrandt's ddmin) over the
// Schedule's entries, re-running every candidate from the initial state and
// keeping it only if the execution still ends with the same verdict:
//   1. ddmin over the injected events alone (the CPU switches stay);
//   2. ddmin over all entries (events and CPU switches), down to single
//      entries (1-minimal: no single entry can be removed);
//   3. shortening: each remaining entry moved to an earlier boundary;
//   4. when a round changes nothing: relocation, one event (or every CPU
//      switch) dropped and a remaining event moved to each boundary within
//      128 of where it was (a random run's events are rarely where the bug
//      needs them, so no subset of them fails);
// and repeats until a round changes nothing, so minimising the result again
// returns it unchanged. A candidate replaces the current schedule only
// if it is strictly smaller by the order (injected events, IR steps executed,
// entries): fewest events first, then the shortest execution, then the fewest
// scheduling decisions.
//
// Candidates are replayed leniently: a decision that is not valid where it
// lands (its CPU idle, its thread gone) becomes the default decision, and the
// schedule the run actually recorded is what is kept, so every schedule
// returned replays exactly with ReplayScheduler. Removing an event shifts the
// boundaries of the entries after it (an event takes one Choose call); both
// the shifted and unshifted candidates are tried.
//
// Delta debugging is local: a schedule whose events are all in the wrong
// places may have no failing subset although a schedule with fewer events
// fails elsewhere. MinimizeEvents closes that gap within bounds: an exhaustive
// search (DPOR, iterative bounding) for a failure with fewer events, whose
// finding is minimised in turn; when the search completes without one, the
// event count is proven minimal.
//
// Example:
//
//     ExploreResult r = Explore(s, o);
//     MinimizeStats st;
//     Schedule small = MinimizeSchedule(s, o.run, r.failure->schedule, r.failure->verdict, &st);
//     std::cout << EncodeSchedule(s, small) << " (" << st.events_after << " events)\n";
#ifndef RSEQMC_MODEL_MINIMIZE_H_
#define RSEQMC_MODEL_MINIMIZE_H_

#include <cstdint>
#include <functional>
#include <string>

#include "model/explorer.h"
#include "sim/schedule.h"
#include "sim/simulator.h"

namespace rseqmc {

struct MinimizeStats {
  uint64_t runs = 0;             // executions run (candidates and checks)
  uint32_t events_before = 0;    // injected events of the input schedule
  uint32_t events_after = 0;
  size_t entries_before = 0;     // schedule entries (events + CPU switches)
  size_t entries_after = 0;
  uint64_t steps_before = 0;     // IR instructions the failing execution ran
  uint64_t steps_after = 0;
  bool reproduced = false;       // the input schedule failed with the verdict when re-run
  bool budget_exhausted = false; // stopped at the run budget (the result still fails)
  // Stopped by an interrupt or the time limit (should_stop): the result is the
  // smallest failing schedule so far, not minimal. With reproduced false, the
  // stop came inside the run that reproduces the input (a long execution),
  // and the input is returned unchanged, unconfirmed.
  bool stopped = false;
  // MinimizeEvents only:
  uint64_t search_executions = 0;   // executions of the exhaustive searches for fewer events
  bool fewest_events_proven = false;  // a complete search found no failure with fewer events
};

// Returns the smallest schedule found that fails `s` with verdict `v` under
// `run` (record_trace is ignored: candidates run without traces). If
// `failing` does not fail with `v` when re-run, returns it unchanged with
// stats->reproduced = false. `oracle`, if set, judges each execution as
// ExploreOptions::oracle does (a non-empty message turns a pass into
// Verdict::kAssertFailed). `max_runs` bounds the executions spent; `should_stop`,
// if set, is asked before each run after the first and inside every run, the
// first included, every Machine::kStopPollSteps steps (Simulator::set_stop_poll);
// true stops with stats->stopped, returning the smallest failing schedule so
// far (the input, unconfirmed, if the reproducing run was cut). Ctrl-C and
// time limits so stop a minimisation of long executions within a second.
Schedule MinimizeSchedule(const Scenario& s, const RunOptions& run, const Schedule& failing, Verdict v,
                          MinimizeStats* stats,
                          const std::function<std::string(const ExecutionResult&)>& oracle = {},
                          uint64_t max_runs = 200000, const std::function<bool()>& should_stop = {});

// MinimizeSchedule, then: while the schedule has k > 0 events, explores `s`
// exhaustively with at most k-1 events (DPOR, iterative bounding; `search`
// supplies the per-kind bounds, RunOptions, oracle, interrupt flag and the
// max_executions budget of each search; its strategy, iterative flag and
// events bound are overridden). search.interrupt and search.time_limit_s
// bound the whole minimisation, searches and the runs inside included (polled
// as MinimizeSchedule's should_stop, and by the searches' explorer): when either stops it,
// stats->stopped is set and the smallest failing schedule so far returned. A failure with verdict `v` found there is
// minimised and the loop continues; a complete search without any failure
// sets stats->fewest_events_proven (no schedule with fewer events fails, in
// any way, within the bounds). A failure with another verdict, or a search
// stopped by its budget, ends the loop unproven. Deterministic for the same
// inputs (budgets are counts, not times).
Schedule MinimizeEvents(const Scenario& s, const Schedule& failing, Verdict v, const ExploreOptions& search,
                        MinimizeStats* stats);

}  // namespace rseqmc

#endif  // RSEQMC_MODEL_MINIMIZE_H_
