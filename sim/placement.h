// Initial placements: the CPU each thread starts on (issue 14).
//
// A thread declared `cpu any` (ThreadSpec::any_cpu; `rseqmc check
// --placements all` marks every thread so) may start on any CPU its affinity
// allows. The placement is a choice made before the first step: exhaustive
// search (model/explorer.cc) explores every placement of PlacementSpace in one
// exploration (a stateful search shares its visited set between them, as
// SPIN's `init` choosing each process's CPU does), and a schedule records the
// placement it ran (Schedule::placement, token version 2), so that a
// counterexample replays with it. Placements are not reduced by symmetry.
//
// Example: two threads, `cpu any`, on 2 CPUs:
//
//     PlacementSpace space(s);         // space.size() == 4
//     Placement p;
//     space.At(0, p);                  // {0, 1}: each thread's `cpu`
//     space.At(1, p);                  // {1, 1}: thread 0 varies fastest
//
// Why a thread starts where it does on Linux is not modelled: the scenario
// says which CPUs are possible (fork's select_task_rq() may pick any CPU of the
// allowed mask, kernel/sched/core.c: wake_up_new_task()).
#ifndef RSEQMC_SIM_PLACEMENT_H_
#define RSEQMC_SIM_PLACEMENT_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "sim/scenario.h"
#include "sim/scheduler.h"

namespace rseqmc {

// At most this many placements per scenario (2^20: e.g. 20 threads on 2 CPUs);
// more is an InputError.
inline constexpr uint64_t kMaxPlacements = uint64_t{1} << 20;
// The limit for the sampling strategies (random, PCT), which draw one
// placement per execution and never enumerate them: 2^62 (the count must fit
// the 64-bit mixed-radix index).
inline constexpr uint64_t kMaxSampledPlacements = uint64_t{1} << 62;

// The placements a scenario allows, in a fixed order: placement 0 is the
// default (each thread's ThreadSpec::cpu); then a mixed-radix count where
// thread 0 varies fastest over its allowed CPUs (affinity within the CPU
// count), starting from its `cpu`. A thread without any_cpu has one choice.
class PlacementSpace {
 public:
  // Throws InputError (at the first `cpu any` thread) past `max`
  // (kMaxPlacements for enumeration, kMaxSampledPlacements for sampling).
  explicit PlacementSpace(const Scenario& s, uint64_t max = kMaxPlacements);
  // Number of placements (>= 1).
  uint64_t size() const { return size_; }
  // Writes placement `index` (< size()) into `out` (one CPU per thread).
  void At(uint64_t index, Placement& out) const;

 private:
  std::vector<std::vector<uint8_t>> choices_;  // per thread: its CPUs, its `cpu` first
  uint64_t size_ = 1;
};

// Why `p` cannot be the initial placement of `s` (wrong thread count, a CPU
// the scenario does not have or the thread's affinity does not allow), or
// nullopt if it can. Any thread may be placed (not only `cpu any` ones): a
// recorded placement replays on the scenario it was made for.
std::optional<std::string> ValidatePlacement(const Scenario& s, const Placement& p);

// `rseqmc check --placements all`: every thread of `s` may start on any CPU
// its affinity allows (ThreadSpec::any_cpu); its `cpu` stays the default.
void AllowEveryPlacement(Scenario& s);

// `s` with each thread started where `p` (valid) puts it, and no placement
// left to choose: for what takes one scenario per run and reads each
// thread's `cpu` (the real-kernel harness, kernel/harness/).
Scenario WithPlacement(const Scenario& s, const Placement& p);

// "w0 on CPU 1, w1 on CPU 0" (every thread, in thread order).
std::string DescribePlacement(const Scenario& s, const Placement& p);

}  // namespace rseqmc

#endif  // RSEQMC_SIM_PLACEMENT_H_
