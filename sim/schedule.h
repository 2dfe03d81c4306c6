// Schedules: the recorded decisions of one execution, their printable token, and
// the two basic schedulers (seeded random, replay).
//
// A Schedule stores only the non-default decisions: at boundary i (the i-th call
// of Scheduler::Choose in the execution) the default is "the CPU that ran the
// previous instruction runs again" (Decision::Step(view.DefaultCpu())). Replaying
// a schedule on the same scenario and kernel model reproduces the execution
// exactly (same trace, same final state).
//
// Token format (version 1): "rsq1." + base64url(varint stream), the stream being
//   scenario fingerprint (u32), kernel model (u8), entry count, then per entry
//   (boundary gap since the previous entry, kind<<6 | cpu, arg+1).
// Version 2 ("rsq2."), written when the schedule has an initial placement:
//   the same with, after the kernel model, the thread count and each
//   thread's initial CPU. A schedule without one is still written as version 1.
// Decoding checks the fingerprint, so a token made for another program (or other
// -D values) fails with an InputError that says so.
#ifndef RSEQMC_SIM_SCHEDULE_H_
#define RSEQMC_SIM_SCHEDULE_H_

#include <bit>
#include <cmath>
#include <cstdint>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "sim/kernel_model.h"
#include "sim/scheduler.h"

namespace rseqmc {

struct Scenario;

struct ScheduleEntry {
  uint64_t boundary = 0;  // index of the Choose call this decision answered
  Decision decision;
  friend bool operator==(const ScheduleEntry&, const ScheduleEntry&) = default;
};

struct Schedule {
  std::vector<ScheduleEntry> entries;
  KernelModel kernel = KernelModel::kMmCid;
  // The initial placement (Scheduler::InitialPlacement); empty = the
  // scenario's own (each thread's `cpu`).
  Placement placement;
  friend bool operator==(const Schedule&, const Schedule&) = default;
  // Number of injected events (entries that are not steps).
  uint32_t NumEvents() const;
};

// 32-bit fingerprint of everything that affects execution: code, data, threads,
// CPUs, signals (not names of properties or comments).
uint32_t ScenarioFingerprint(const Scenario& s);

std::string EncodeSchedule(const Scenario& s, const Schedule& schedule);
// Throws InputError (file = "<token>", column = offending character) on a
// malformed token, a wrong version, a token made for another scenario, or a
// token that is not exactly what EncodeSchedule writes for the schedule it
// decodes to (changed spare bits in the last character, an extra character,
// an over-long number): each schedule has one token.
Schedule DecodeSchedule(const Scenario& s, const std::string& token);

// Replays a schedule (kept by value); past its last entry it keeps choosing defaults.
class ReplayScheduler : public Scheduler {
 public:
  explicit ReplayScheduler(Schedule s) : schedule_(std::move(s)) {}
  const Placement* InitialPlacement() const override {
    return schedule_.placement.empty() ? nullptr : &schedule_.placement;
  }
  void BeginExecution(const Machine&) override {
    next_ = 0;
    defaults_ahead = schedule_.entries.empty() ? ~0ull >> 1 : schedule_.entries[0].boundary;
  }
  Decision Choose(const ChoiceView& view) override;

 private:
  Schedule schedule_;
  size_t next_ = 0;
};

// Per-kind probabilities (per boundary) and bounds of the random scheduler.
struct RandomOptions {
  double p_switch_cpu = 0.25;  // another CPU with a runnable thread runs next
  double p_preempt = 0.02;
  double p_migrate = 0.01;
  double p_signal = 0.01;
  double p_ipi = 0.005;
  uint32_t max_events = 8;     // total injected events per execution (preempt/migrate/signal/ipi)
  // Decide only at boundaries that can make a difference
  // (Scheduler::LocalBoundaries): the machine takes those before a
  // thread-local step of the default thread itself, and the probabilities
  // above are per boundary that is asked. false: every boundary is asked
  // (the stream of releases before this shortcut; `rseqmc check
  // --all-event-positions`).
  bool skip_local_boundaries = true;
};

// Seeded random scheduler (xoshiro256** seeded by splitmix64). At each boundary
// it deviates from the default with probability p_switch_cpu + the event
// probabilities (sampled as geometric run lengths, so a quiet boundary costs a
// decrement); a deviation is an event (kind by relative probability, target CPU
// uniform among running ones) while fewer than max_events were injected, else a
// switch to another runnable CPU. The same seed and scenario always give the
// same execution; successive executions continue the random stream.
// With RandomOptions::skip_local_boundaries, boundaries before a local step
// are taken by the machine (Scheduler::LocalBoundaries: kNoEvents once
// max_events were injected or no event has a probability, else
// kUnlessEventMatters) and neither asked nor counted in the quiet runs.
class RandomScheduler : public Scheduler {
 public:
  explicit RandomScheduler(uint64_t seed, RandomOptions options = {});
  void Reseed(uint64_t seed);
  void BeginExecution(const Machine&) override;
  Decision Choose(const ChoiceView& view) override;

 private:
  [[gnu::always_inline]] inline uint64_t Next();
  double NextUnit() { return static_cast<double>(Next() >> 11) * 0x1.0p-53; }
  // Uniform in [0, n): the high word of a 64x64-bit product (Lemire), not a
  // division (a 64-bit `%` costs tens of cycles); bias at most n / 2^64.
  uint64_t Below(uint64_t n) {
    return n <= 1 ? 0 : static_cast<uint64_t>((static_cast<unsigned __int128>(Next()) * n) >> 64);
  }
  [[gnu::always_inline]] inline uint64_t SampleQuiet();
  [[gnu::noinline]] bool ChooseEvent(const Machine& m, Decision& out);
  // local_boundaries after `events` injected events: kNoEvents only when no
  // further event can come (a wrapping scheduler that drops an event, like
  // BoundedRandomScheduler, never breaks that promise).
  void SetLocalBoundaries(uint32_t events) {
    local_boundaries = !options_.skip_local_boundaries ? LocalBoundaries::kAsked
                       : has_events_ && events < options_.max_events ? LocalBoundaries::kUnlessEventMatters
                                                                     : LocalBoundaries::kNoEvents;
  }
  uint64_t seed_;
  uint64_t s_[4];
  RandomOptions options_;
  double p_any_ = 0;        // probability that a boundary deviates from the default
  double log1m_p_ = 0;      // log(1 - p_any_)
  uint32_t t_event_ = 0;    // P(event | deviation) in 2^-32 units
  bool has_events_ = false; // some event kind has a probability above 0
  // Quiet-run sampler for p_any_ > 1/16 (see SampleQuiet): from one 53-bit
  // draw x, the run is the number of j >= 1 with x >= quiet_t_[j - 1], where
  // quiet_t_[j - 1] = 2^53 - floor((1 - p_any_)^j * 2^53), so that
  // P(run >= j) = (1 - p_any_)^j (to 2^-53). quiet_lo_/quiet_hi_ bound the run
  // over each of the 1024 ranges of x's top 10 bits, so most draws need no
  // search at all.
  static constexpr int kQuietBucketBits = 10;
  std::vector<uint64_t> quiet_t_;
  std::vector<uint16_t> quiet_lo_, quiet_hi_;
};

inline uint64_t RandomScheduler::Next() {
  // xoshiro256** (Blackman & Vigna).
  const uint64_t result = std::rotl(s_[1] * 5, 7) * 9;
  const uint64_t t = s_[1] << 17;
  s_[2] ^= s_[0];
  s_[3] ^= s_[1];
  s_[1] ^= s_[2];
  s_[0] ^= s_[3];
  s_[2] ^= t;
  s_[3] = std::rotl(s_[3], 45);
  return result;
}

// Boundaries until the next non-default decision: geometric with parameter
// p = p_event + p_switch (equivalent to rolling at every boundary, since the
// per-boundary roll is memoryless, but one random number per deviation).
inline uint64_t RandomScheduler::SampleQuiet() {
  if (!quiet_t_.empty()) {
    // Frequent deviations: the inverse of the geometric distribution's CDF by
    // table (one draw, integer compares only; a draw whose bucket holds a
    // threshold searches the few thresholds inside it).
    const uint64_t x = Next() >> 11;
    const uint64_t k = x >> (53 - kQuietBucketBits);
    uint64_t q = quiet_lo_[k];
    const uint64_t hi = quiet_hi_[k];
    while (q < hi && x >= quiet_t_[q]) ++q;
    return q;
  }
  if (p_any_ <= 0) return ~0ull;
  if (p_any_ >= 1) return 0;
  const double u = 1.0 - NextUnit();  // (0, 1]
  const double q = std::floor(std::log(u) / log1m_p_);
  return q >= 1e18 ? ~0ull : static_cast<uint64_t>(q);
}

}  // namespace rseqmc

#endif  // RSEQMC_SIM_SCHEDULE_H_
