// The final state of one execution as outcome sets compare it: the model
// checker collects the set a scenario can reach (model/explorer.h), and the
// real-kernel cross-check's outcome mode (kernel/harness/crosscheck.h) checks
// that every outcome the kernel produces is in it. Here, in sim/, so that the
// harness needs the type and not the checker (issue 10).
//
// Example:
//   Simulator sim(s);
//   ReplayScheduler base(Schedule{});
//   ReachableOutcomes seen;
//   seen.outcomes.insert(OutcomeOf(s, sim.Run(base)));
//   // ... and later: bool known = seen.outcomes.count(OutcomeOf(s, other)) != 0;
#ifndef RSEQMC_SIM_OUTCOME_H_
#define RSEQMC_SIM_OUTCOME_H_

#include <cstdint>
#include <set>
#include <utility>
#include <vector>

#include "sim/scenario.h"
#include "sim/simulator.h"

namespace rseqmc {

// Verdict, the symbols' memory, each thread's return value and observations.
struct Outcome {
  Verdict verdict = Verdict::kPass;
  std::vector<uint8_t> symbols;  // bytes of the symbol region of data memory (from kDataBase)
  std::vector<int64_t> returns;  // per thread (0 if it did not return)
  std::vector<std::vector<std::pair<uint32_t, int64_t>>> observed;  // per thread: (observation id, value)
  friend auto operator<=>(const Outcome&, const Outcome&) = default;
};

// The outcome of execution `r` of scenario `s`. Never throws.
Outcome OutcomeOf(const Scenario& s, const ExecutionResult& r);

// The outcomes a search reached within its bounds; `complete` is false when
// the search stopped early (budget, interruption), so the set may lack some.
struct ReachableOutcomes {
  std::set<Outcome> outcomes;
  bool complete = false;
};

// A 64-bit FNV-1a digest of an outcome set (verdicts, symbol bytes, return
// values, observations, in the set's order): the `digest` of the golden
// execution counts (tests/golden/explore_counts.txt), which the explorer
// test writes and tools/bench/strategy_table compares against. Equal sets give
// equal digests; different sets collide with probability about 2^-64.
uint64_t OutcomeSetDigest(const std::set<Outcome>& outcomes);

}  // namespace rseqmc

#endif  // RSEQMC_SIM_OUTCOME_H_
