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

// Adds executions' outcomes to a std::set<Outcome> without building an
// Outcome (three vectors) for one the set already holds: each is found by a
// 64-bit hash of the execution's final state and compared field by field
// with the set's element (SameOutcome), so the set ends exactly as with
// `set.insert(OutcomeOf(s, r))`; only a new outcome is built. The set's
// elements are indexed by address: the inserter re-indexes the whole set
// when its size or its first element is not the one it left (elements added
// or removed by others, the set swapped with or assigned from another);
// erasing and adding the same number of elements behind its back, keeping
// the first, is not supported. Not thread-safe; one per set.
class OutcomeInserter {
 public:
  explicit OutcomeInserter(const Scenario& s);
  // set.insert(OutcomeOf(s, r)); true if the outcome was new.
  bool Insert(const ExecutionResult& r, std::set<Outcome>& set);

 private:
  uint64_t Hash(const ExecutionResult& r) const;
  uint64_t Hash(const Outcome& o) const;
  bool Same(const Outcome& o, const ExecutionResult& r) const;
  void Reindex(const std::set<Outcome>& set);
  // Adds an element to the open-addressing table (linear probing, at most
  // half full, grown by doubling).
  void Add(uint64_t hash, const Outcome* o);
  struct Slot {
    uint64_t hash = 0;
    const Outcome* outcome = nullptr;  // nullptr: empty slot
  };
  const Scenario& s_;
  size_t symbols_end_ = 0;  // bytes of the symbol region (OutcomeOf's `symbols`)
  const std::set<Outcome>* set_ = nullptr;  // the set indexed
  size_t indexed_ = 0;                       // its size when last indexed
  const Outcome* first_ = nullptr;           // its first element when last indexed
  std::vector<Slot> slots_;                  // a power of two, or empty
  size_t used_ = 0;
};

// A 64-bit FNV-1a digest of an outcome set (verdicts, symbol bytes, return
// values, observations, in the set's order): the `digest` of the golden
// execution counts (tests/golden/explore_counts.txt), which the explorer
// test writes and tools/bench/strategy_table compares against. Equal sets give
// equal digests; different sets collide with probability about 2^-64.
uint64_t OutcomeSetDigest(const std::set<Outcome>& outcomes);

}  // namespace rseqmc

#endif  // RSEQMC_SIM_OUTCOME_H_
