// Exploration helpers shared by the tests of events only where they can
// matter (tests/explorer_test.cc, tests/event_commute_test.cc).
#ifndef RSEQMC_TESTS_EXPLORE_HELPERS_H_
#define RSEQMC_TESTS_EXPLORE_HELPERS_H_

#include <cstdint>

#include "model/explorer.h"
#include "sim/scenario.h"

namespace rseqmc::testing {

// Explores s with strategy k and at most `events` injected events, keeping
// every outcome (no stop at the first failure), with events at one position
// per class (`defer`, ExploreOptions::defer_events) or at every position
// (the reference); `max_exec` executions at most (0: no limit).
inline ExploreResult ExploreDeferring(const Scenario& s, StrategyKind k, uint32_t events, bool defer,
                                      uint64_t max_exec, const RunOptions& run = {}) {
  ExploreOptions o;
  o.strategy = k;
  o.bounds.max_events = events;
  o.max_executions = max_exec;
  o.stop_at_first_failure = false;
  o.defer_events = defer;
  o.run = run;
  return Explore(s, o);
}

}  // namespace rseqmc::testing

#endif  // RSEQMC_TESTS_EXPLORE_HELPERS_H_
