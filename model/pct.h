// Sampling schedulers for the model checker: bounded random walk and PCT.
//
// PctScheduler implements PCT (Burckhardt, Kothari, Musuvathi, Nagarakatte,
// "A Randomized Scheduler with Probabilistic Guarantees of Finding Bugs",
// ASPLOS 2010) over the simulator's choice points: threads get distinct random
// priorities; the highest-priority running thread steps; at d-1 change points
// (steps drawn uniformly from [1, k], k the expected execution length) the
// running thread's priority drops below all others. As an rseq extension, a
// change point may instead inject a migration or a signal into the running
// thread (when the bounds allow it and the scenario has handlers), since those
// are the rseq "preemptions" that matter. For a bug of depth d in a program
// with n threads and k steps, one execution finds it with probability at least
// 1 / (n * (c*k)^(d-1)), c <= 4 being the number of kinds a change point can
// take (priority drop, preemption, migration, signal), since each change point
// must also pick the right kind.
#ifndef RSEQMC_MODEL_PCT_H_
#define RSEQMC_MODEL_PCT_H_

#include <cstdint>
#include <vector>

#include "model/explorer.h"
#include "sim/placement.h"
#include "sim/schedule.h"

namespace rseqmc {

// The sampling strategies' initial placement (sim/placement.h): uniformly
// random per execution from its own splitmix64 stream (so that the
// scheduler's stream, and every scenario without `cpu any`, is unchanged);
// nothing (the scenario's own) when the scenario allows one placement.
class PlacementSampler {
 public:
  PlacementSampler(const Scenario& s, uint64_t seed) : space_(s, kMaxSampledPlacements), state_(seed ^ 0x51ace5eedull) {}
  // Draws the next execution's placement.
  void Draw();
  const Placement* current() const { return space_.size() > 1 ? &current_ : nullptr; }

 private:
  PlacementSpace space_;
  uint64_t state_;
  Placement current_;
};

// RandomScheduler that also respects per-kind event bounds (a disallowed event
// becomes the default step).
class BoundedRandomScheduler : public Scheduler {
 public:
  BoundedRandomScheduler(const Scenario& s, uint64_t seed, RandomOptions options, Bounds bounds)
      : inner_(seed, options), bounds_(bounds), placement_(s, seed) {}
  void BeginExecution(const Machine& m) override {
    placement_.Draw();
    inner_.BeginExecution(m);
    TakePromise();
  }
  Decision Choose(const ChoiceView& view) override;
  const Placement* InitialPlacement() const override { return placement_.current(); }

 private:
  // The inner scheduler's promised defaults (Scheduler::defaults_ahead)
  // become this one's, so that the machine takes those boundaries itself
  // (Machine::RunPlain's loop) instead of calling Choose at each: the same
  // decisions at the same boundaries, from the same random stream.
  void TakePromise() {
    defaults_ahead = inner_.defaults_ahead;
    inner_.defaults_ahead = 0;
    local_boundaries = inner_.local_boundaries;
  }
  RandomScheduler inner_;
  Bounds bounds_;
  PlacementSampler placement_;
};

class PctScheduler : public Scheduler {
 public:
  // depth: d (>= 1). Successive executions draw new priorities and change points.
  PctScheduler(const Scenario& s, uint64_t seed, uint32_t depth, Bounds bounds);
  void BeginExecution(const Machine& m) override;
  Decision Choose(const ChoiceView& view) override;
  // Steps of the longest execution seen so far (the k of the next executions).
  uint64_t expected_steps() const { return k_; }
  const Placement* InitialPlacement() const override { return placement_.current(); }

 private:
  uint64_t Next();
  uint64_t Below(uint64_t n) { return n <= 1 ? 0 : Next() % n; }
  const Scenario& s_;
  uint64_t state_;
  uint32_t depth_;
  Bounds bounds_;
  uint64_t k_ = 64;
  std::vector<int64_t> priority_;      // per thread
  std::vector<uint64_t> change_points_; // step numbers (sorted)
  size_t next_change_ = 0;
  int64_t low_ = 0;                     // next priority below all others
  uint64_t steps_ = 0;
  PlacementSampler placement_;
};

}  // namespace rseqmc

#endif  // RSEQMC_MODEL_PCT_H_
