#include "model/minimize.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <tuple>
#include <vector>

#include "sim/machine.h"

namespace rseqmc {
namespace {

// ReplayScheduler that tolerates decisions a candidate put where they no
// longer apply: those become the default decision.
class LenientReplay : public Scheduler {
 public:
  explicit LenientReplay(const Schedule& s) : s_(s) {}
  void BeginExecution(const Machine&) override {
    next_ = 0;
    defaults_ahead = s_.entries.empty() ? ~0ull >> 1 : s_.entries[0].boundary;
  }
  // The failing execution's initial placement is kept: minimising removes
  // decisions after it.
  const Placement* InitialPlacement() const override { return s_.placement.empty() ? nullptr : &s_.placement; }
  Decision Choose(const ChoiceView& view) override {
    const uint64_t b = view.machine().boundary();
    const size_t n = s_.entries.size();
    while (next_ < n && s_.entries[next_].boundary < b) ++next_;
    Decision d = Decision::Step(view.DefaultCpu());
    if (next_ < n && s_.entries[next_].boundary == b) {
      const Decision e = s_.entries[next_++].decision;
      if (view.IsValid(e)) d = e;
    }
    // Every boundary before the next entry takes the default.
    defaults_ahead = next_ >= n ? ~0ull >> 1 : s_.entries[next_].boundary > b ? s_.entries[next_].boundary - b - 1 : 0;
    return d;
  }

 private:
  const Schedule& s_;
  size_t next_ = 0;
};

// The minimisation order: fewest events, then fewest steps, then fewest entries.
using Cost = std::tuple<uint32_t, uint64_t, size_t>;

class Minimizer {
 public:
  Minimizer(const Scenario& s, const RunOptions& run, Verdict v,
            const std::function<std::string(const ExecutionResult&)>& oracle, uint64_t max_runs,
            const std::function<bool()>& should_stop, MinimizeStats& stats)
      : sim_(s, WithoutTrace(run)), v_(v), oracle_(oracle), max_runs_(max_runs), should_stop_(should_stop),
        stats_(stats) {
    // Inside each run too (every Machine::kStopPollSteps steps): a long
    // execution ends at the next poll, stopped, and so does minimisation.
    if (should_stop_) {
      sim_.set_stop_poll([this] {
        if (!should_stop_()) return false;
        stats_.stopped = true;
        return true;
      });
    }
  }

  // Runs `failing`; true (and it becomes the current schedule) if it fails with the verdict.
  bool Start(const Schedule& failing) {
    if (!Run(failing)) return false;
    best_ = r_.schedule;
    cost_ = CostOf(r_);
    return true;
  }

  void Minimize() {
    for (;;) {
      bool changed = Ddmin(/*events_only=*/true);
      changed = Ddmin(/*events_only=*/false) || changed;
      changed = Shorten() || changed;
      if (!changed) changed = Relocate();
      if (!changed || Done()) return;
    }
  }

  const Schedule& best() const { return best_; }
  uint64_t best_steps() const { return std::get<1>(cost_); }

 private:
  // Out of runs, or stopped: every further candidate is refused.
  bool Done() const { return stats_.budget_exhausted || stats_.stopped; }

  static RunOptions WithoutTrace(RunOptions run) {
    run.record_trace = false;
    return run;
  }
  static Cost CostOf(const ExecutionResult& r) { return {r.schedule.NumEvents(), r.steps, r.schedule.entries.size()}; }

  // Runs a candidate; true if it fails with the verdict (the result is in r_).
  bool Run(const Schedule& candidate) {
    if (stats_.runs >= max_runs_) {
      stats_.budget_exhausted = true;
      return false;
    }
    // The first run (reproducing the input) always happens.
    if (stats_.stopped || (stats_.runs > 0 && should_stop_ && should_stop_())) {
      stats_.stopped = true;
      return false;
    }
    ++stats_.runs;
    LenientReplay replay(candidate);
    sim_.RunInto(replay, r_);
    if (r_.stopped) return false;
    if (r_.verdict == Verdict::kPass && oracle_) {
      std::string why = oracle_(r_);
      if (!why.empty()) {
        r_.verdict = Verdict::kAssertFailed;
        r_.message = std::move(why);
      }
    }
    return r_.verdict == v_;
  }

  // Adopts `candidate`'s recorded schedule if it fails the same way and is smaller.
  bool Try(const Schedule& candidate) {
    if (!Run(candidate)) return false;
    const Cost c = CostOf(r_);
    if (!(c < cost_)) return false;
    best_ = r_.schedule;
    cost_ = c;
    return true;
  }

  // The current schedule without the entries at `remove` (sorted indices):
  // first with later boundaries shifted back by the events removed before
  // them (each event took one Choose call), then unshifted.
  bool TryRemove(const std::vector<size_t>& remove) {
    Schedule shifted, plain;
    shifted.kernel = plain.kernel = best_.kernel;
    shifted.placement = plain.placement = best_.placement;
    size_t k = 0;
    uint64_t events_removed = 0;
    for (size_t i = 0; i < best_.entries.size(); ++i) {
      const ScheduleEntry& e = best_.entries[i];
      if (k < remove.size() && remove[k] == i) {
        ++k;
        events_removed += e.decision.IsEvent();
        continue;
      }
      plain.entries.push_back(e);
      shifted.entries.push_back({e.boundary - events_removed, e.decision});
    }
    if (Try(shifted)) return true;
    return shifted != plain && Try(plain);
  }

  // Indices of the entries ddmin works on.
  std::vector<size_t> Domain(bool events_only) const {
    std::vector<size_t> d;
    for (size_t i = 0; i < best_.entries.size(); ++i) {
      if (!events_only || best_.entries[i].decision.IsEvent()) d.push_back(i);
    }
    return d;
  }

  // ddmin: remove chunks of the domain (keep only one chunk, or drop one),
  // refining the partition until single entries cannot be removed.
  bool Ddmin(bool events_only) {
    bool changed_any = false;
    size_t n = 2;
    while (!Done()) {
      const std::vector<size_t> dom = Domain(events_only);
      if (dom.empty()) break;
      n = std::min(n, dom.size());
      bool changed = false;
      for (size_t part = 0; part < n && !changed; ++part) {
        const size_t lo = part * dom.size() / n, hi = (part + 1) * dom.size() / n;
        if (n > 2) {
          // Keep only this chunk.
          std::vector<size_t> rest(dom.begin(), dom.begin() + static_cast<std::ptrdiff_t>(lo));
          rest.insert(rest.end(), dom.begin() + static_cast<std::ptrdiff_t>(hi), dom.end());
          changed = TryRemove(rest);
        }
        if (!changed) {
          changed = TryRemove(std::vector<size_t>(dom.begin() + static_cast<std::ptrdiff_t>(lo),
                                                  dom.begin() + static_cast<std::ptrdiff_t>(hi)));
        }
      }
      if (changed) {
        changed_any = true;
        n = std::max<size_t>(n - 1, 2);
        continue;
      }
      if (n >= dom.size()) break;
      n = std::min(2 * n, dom.size());
    }
    return changed_any;
  }

  // Moves each entry to the earliest boundary (after the previous entry) at
  // which the schedule is smaller, e.g. an abort that wastes fewer steps.
  bool Shorten() {
    constexpr uint64_t kMaxTrialsPerEntry = 256;
    bool changed_any = false;
    for (size_t i = 0; i < best_.entries.size() && !Done(); ++i) {
      const uint64_t b = best_.entries[i].boundary;
      const uint64_t first = i == 0 ? 0 : best_.entries[i - 1].boundary + 1;
      const uint64_t lo = b - first > kMaxTrialsPerEntry ? b - kMaxTrialsPerEntry : first;
      for (uint64_t to = lo; to < b && !Done(); ++to) {
        Schedule c = best_;
        c.entries[i].boundary = to;
        if (Try(c)) {
          changed_any = true;
          break;
        }
      }
    }
    return changed_any;
  }

  // Where no subset of the current entries is smaller: drops one event (or
  // every CPU switch) and moves one remaining event to each boundary near
  // where it was. A random run's events are rarely where the bug needs them,
  // and its switches are rarely needed once an event is in the right place.
  bool Relocate() {
    constexpr uint64_t kWindow = 128;
    constexpr size_t kMaxEvents = 16;
    const std::vector<size_t> events = Domain(/*events_only=*/true);
    if (events.empty() || events.size() > kMaxEvents) return false;
    const Schedule current = best_;
    // Drop sets: each single event, then all CPU switches (if any).
    std::vector<std::vector<size_t>> drops;
    if (events.size() >= 2) {
      for (size_t e : events) drops.push_back({e});
    }
    std::vector<size_t> switches;
    for (size_t i = 0; i < current.entries.size(); ++i) {
      if (!current.entries[i].decision.IsEvent()) switches.push_back(i);
    }
    if (!switches.empty()) drops.push_back(switches);
    for (const std::vector<size_t>& drop : drops) {
      for (size_t move : events) {
        if (std::find(drop.begin(), drop.end(), move) != drop.end()) continue;
        // The current schedule without `drop`, later boundaries shifted back
        // by the events dropped before them.
        Schedule base;
        base.kernel = current.kernel;
        base.placement = current.placement;
        size_t moved_at = 0;
        uint64_t shift = 0;
        for (size_t i = 0; i < current.entries.size(); ++i) {
          const ScheduleEntry& e = current.entries[i];
          if (std::find(drop.begin(), drop.end(), i) != drop.end()) {
            shift += e.decision.IsEvent();
            continue;
          }
          if (i == move) moved_at = base.entries.size();
          base.entries.push_back({e.boundary - shift, e.decision});
        }
        const uint64_t b = base.entries[moved_at].boundary;
        const uint64_t first = moved_at == 0 ? 0 : base.entries[moved_at - 1].boundary + 1;
        const uint64_t last = moved_at + 1 < base.entries.size() ? base.entries[moved_at + 1].boundary - 1 : b + kWindow;
        for (uint64_t to = std::max(first, b > kWindow ? b - kWindow : 0); to <= std::min(last, b + kWindow); ++to) {
          if (Done()) return false;
          Schedule c = base;
          c.entries[moved_at].boundary = to;
          if (Try(c)) return true;
        }
      }
    }
    return false;
  }

  Simulator sim_;
  Verdict v_;
  const std::function<std::string(const ExecutionResult&)>& oracle_;
  uint64_t max_runs_;
  const std::function<bool()>& should_stop_;
  MinimizeStats& stats_;
  ExecutionResult r_;
  Schedule best_;
  Cost cost_{};
};

}  // namespace

Schedule MinimizeEvents(const Scenario& s, const Schedule& failing, Verdict v, const ExploreOptions& search,
                        MinimizeStats* stats) {
  MinimizeStats local;
  MinimizeStats& st = stats != nullptr ? *stats : local;
  // search.interrupt and search.time_limit_s bound all of it.
  const auto start = std::chrono::steady_clock::now();
  auto elapsed = [&start]() { return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(); };
  const std::function<bool()> should_stop = [&]() {
    return (search.interrupt != nullptr && search.interrupt->load(std::memory_order_relaxed)) ||
           (search.time_limit_s > 0 && elapsed() >= search.time_limit_s);
  };
  Schedule current = MinimizeSchedule(s, search.run, failing, v, &st, search.oracle, 200000, should_stop);
  if (!st.reproduced) return current;
  const MinimizeStats first = st;
  for (;;) {
    const uint32_t k = current.NumEvents();
    if (k == 0) {
      st.fewest_events_proven = true;
      break;
    }
    if (st.stopped || should_stop()) {
      st.stopped = true;
      break;
    }
    ExploreOptions o = search;
    o.strategy = StrategyKind::kDpor;
    o.iterative = true;
    o.bounds.max_events = k - 1;
    o.stop_at_first_failure = true;
    o.collect_outcomes = false;
    o.progress = nullptr;
    o.snapshot = nullptr;
    o.resume_from = nullptr;
    if (search.time_limit_s > 0) o.time_limit_s = std::max(search.time_limit_s - elapsed(), 1e-9);
    const ExploreResult r = Explore(s, o);
    st.search_executions += r.executions;
    st.stopped |= r.stop_reason == "interrupted" || r.stop_reason == "time-limit";
    if (!r.failure || r.failure->verdict != v) {
      st.fewest_events_proven = r.complete && !r.failure;
      break;
    }
    MinimizeStats again;
    Schedule smaller = MinimizeSchedule(s, search.run, r.failure->schedule, v, &again, search.oracle, 200000,
                                        should_stop);
    st.runs += again.runs;
    st.budget_exhausted |= again.budget_exhausted;
    st.stopped |= again.stopped;
    if (!again.reproduced || smaller.NumEvents() >= k) break;  // cannot happen for a deterministic simulator
    current = std::move(smaller);
    st.steps_after = again.steps_after;
  }
  st.events_before = first.events_before;
  st.entries_before = first.entries_before;
  st.steps_before = first.steps_before;
  st.events_after = current.NumEvents();
  st.entries_after = current.entries.size();
  return current;
}

Schedule MinimizeSchedule(const Scenario& s, const RunOptions& run, const Schedule& failing, Verdict v,
                          MinimizeStats* stats, const std::function<std::string(const ExecutionResult&)>& oracle,
                          uint64_t max_runs, const std::function<bool()>& should_stop) {
  MinimizeStats local;
  MinimizeStats& st = stats != nullptr ? *stats : local;
  st = MinimizeStats{};
  st.events_before = failing.NumEvents();
  st.entries_before = failing.entries.size();
  Minimizer m(s, run, v, oracle, max_runs, should_stop, st);
  if (!m.Start(failing)) {
    st.events_after = st.events_before;
    st.entries_after = st.entries_before;
    return failing;
  }
  st.reproduced = true;
  st.steps_before = m.best_steps();
  m.Minimize();
  st.events_after = m.best().NumEvents();
  st.entries_after = m.best().entries.size();
  st.steps_after = m.best_steps();
  return m.best();
}

}  // namespace rseqmc
