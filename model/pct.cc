#include "model/pct.h"

#include <algorithm>
#include <bit>

#include "sim/machine.h"

namespace rseqmc {

void PlacementSampler::Draw() {
  if (space_.size() <= 1) return;
  // splitmix64; the modulo's bias is below size / 2^64.
  uint64_t z = (state_ += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  space_.At((z ^ (z >> 31)) % space_.size(), current_);
}

Decision BoundedRandomScheduler::Choose(const ChoiceView& view) {
  // A caller that asks before the promise is used up (one that does not
  // honour defaults_ahead) gets it counted down by the inner scheduler.
  inner_.defaults_ahead = defaults_ahead;
  const Decision d = inner_.Choose(view);
  TakePromise();
  if (!d.IsEvent()) return d;
  const Machine& m = view.machine();
  uint32_t counts[kNumDecisionKinds];
  for (int k = 0; k < kNumDecisionKinds; ++k) counts[k] = m.events(static_cast<DecisionKind>(k));
  return bounds_.Allows(d.kind, counts, m.total_events()) ? d : Decision::Step(m.default_cpu());
}

PctScheduler::PctScheduler(const Scenario& s, uint64_t seed, uint32_t depth, Bounds bounds)
    : s_(s), state_(seed * 0x9e3779b97f4a7c15ull + 0x7f4a7c15ull), depth_(std::max<uint32_t>(depth, 1)),
      bounds_(bounds), placement_(s, seed) {}

uint64_t PctScheduler::Next() {
  // splitmix64
  uint64_t z = (state_ += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

void PctScheduler::BeginExecution(const Machine& m) {
  if (steps_ > k_) k_ = steps_;
  steps_ = 0;
  const size_t n = s_.threads.size();
  // Distinct random initial priorities d .. d+n-1 (a random permutation);
  // change points lower a thread to d-1, d-2, ... (below every initial one).
  priority_.resize(n);
  for (size_t i = 0; i < n; ++i) priority_[i] = static_cast<int64_t>(depth_ + i);
  for (size_t i = n; i > 1; --i) std::swap(priority_[i - 1], priority_[Below(i)]);
  low_ = static_cast<int64_t>(depth_) - 1;
  change_points_.clear();
  while (change_points_.size() + 1 < depth_ && change_points_.size() < k_) {
    const uint64_t c = 1 + Below(k_);
    if (std::find(change_points_.begin(), change_points_.end(), c) == change_points_.end()) change_points_.push_back(c);
  }
  std::sort(change_points_.begin(), change_points_.end());
  next_change_ = 0;
  placement_.Draw();
  (void)m;
}

Decision PctScheduler::Choose(const ChoiceView& view) {
  const Machine& m = view.machine();
  // The running thread with the highest priority steps.
  int best = -1;
  for (int c = 0; c < m.num_cpus(); ++c) {
    const int t = m.cpu(c).running;
    if (t >= 0 && (best < 0 || priority_[t] > priority_[best])) best = t;
  }
  if (next_change_ < change_points_.size() && steps_ + 1 >= change_points_[next_change_]) {
    ++next_change_;
    const int cpu = m.thread(best).cpu;
    uint32_t counts[kNumDecisionKinds];
    for (int k = 0; k < kNumDecisionKinds; ++k) counts[k] = m.events(static_cast<DecisionKind>(k));
    const uint32_t total = m.total_events();
    // Candidate change kinds: priority drop always; preempt, migrate and
    // signal when the bounds allow them and they apply.
    Decision options[4];
    int n = 0;
    options[n++] = Decision::Step(-2);  // marker: priority drop
    if (bounds_.Allows(DecisionKind::kPreempt, counts, total)) options[n++] = Decision::Preempt(cpu, -1);
    const uint64_t aff = m.thread(best).affinity & ~(1ull << cpu);
    if (aff != 0 && bounds_.Allows(DecisionKind::kMigrate, counts, total)) {
      int k = static_cast<int>(Below(static_cast<uint64_t>(std::popcount(aff))));
      uint64_t a = aff;
      while (k-- > 0) a &= a - 1;
      options[n++] = Decision::Migrate(cpu, std::countr_zero(a));
    }
    if (bounds_.Allows(DecisionKind::kSignal, counts, total)) {
      for (const SignalSpec& sg : s_.signals) {
        if (sg.handler >= 0) {
          options[n++] = Decision::Signal(cpu, sg.signo);
          break;
        }
      }
    }
    const Decision pick = options[Below(static_cast<uint64_t>(n))];
    if (pick.kind == DecisionKind::kStep) {
      priority_[best] = low_--;
      return Choose(view);  // re-pick with the new priorities (no change point left at this step)
    }
    return pick;
  }
  ++steps_;
  return Decision::Step(m.thread(best).cpu);
}

}  // namespace rseqmc
