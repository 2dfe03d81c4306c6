// The random strategy's local-step shortcut (issue 14; Scheduler::
// LocalBoundaries, RandomOptions::skip_local_boundaries): the machine takes
// the boundaries before a thread-local step of the default thread itself,
// and the random scheduler is asked only where a CPU switch or an event can
// make a difference.
//   * Machine::LocalBoundaryIsFree (inline, table-driven) gives exactly the
//     answer of its definition LocalBoundaryIsFreeByRule, for every running
//     thread at every boundary of random executions with events, on every
//     built-in under every ABI that runs it;
//   * with the shortcut, the scheduler is never asked at a boundary the
//     rule calls free, and is asked less often than at every boundary;
//   * the shortcut loses no outcome: on every built-in whose exhaustive
//     search at K=0 takes at most 5,000 executions, 1,000 seeded random
//     executions with it reach exactly the exhaustive outcome set (asking
//     at every boundary, 3,000 executions missed one of mm_cid_counter's
//     three);
//   * its executions replay exactly under a scheduler that asks at every
//     boundary (recorded boundaries count the taken ones), and the fiber
//     path (Decide at each boundary) runs the same executions as RunPlain's.
#include <set>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "model/explorer.h"
#include "scenarios/builtin.h"
#include "scenarios/parser.h"
#include "sim/kernel/abi.h"
#include "sim/machine.h"
#include "sim/outcome.h"
#include "sim/schedule.h"
#include "sim/simulator.h"

namespace rseqmc {
namespace {

using Mode = Scheduler::LocalBoundaries;

// Every modelled kernel that runs `s`.
std::vector<RunOptions> KernelsFor(const Scenario& s) {
  std::vector<RunOptions> out;
  for (const KernelAbi* abi : AllAbis()) {
    if (abi->NotApplicable(s)) continue;
    RunOptions o;
    o.kernel.model = abi->info().model;
    out.push_back(o);
  }
  return out;
}

RandomOptions WithEvents(bool skip) {
  RandomOptions o;
  o.max_events = 3;
  o.skip_local_boundaries = skip;
  return o;
}

// Wraps a RandomScheduler: hands its promises (defaults_ahead,
// local_boundaries) to the machine and checks each boundary it is asked at.
class Spy : public Scheduler {
 public:
  explicit Spy(RandomScheduler& inner) : inner_(inner) {}
  void BeginExecution(const Machine& m) override {
    inner_.BeginExecution(m);
    Take();
    after_event_ = false;
  }
  Decision Choose(const ChoiceView& v) override {
    const Machine& m = v.machine();
    for (int c = 0; c < m.num_cpus(); ++c) {
      const int t = m.cpu(c).running;
      if (t < 0) continue;
      for (const Mode mode : {Mode::kNoEvents, Mode::kUnlessEventMatters}) {
        const bool fast = m.LocalBoundaryIsFree(t, mode), rule = m.LocalBoundaryIsFreeByRule(t, mode);
        EXPECT_EQ(fast, rule) << "thread " << t << " pc " << m.thread(t).cur().pc << " mode "
                              << static_cast<int>(mode);
        ++(rule ? free_answers[static_cast<int>(mode)] : other_answers);
      }
    }
    // The first question at this boundary (not the one after an event
    // there): the machine takes a free boundary itself.
    const int def = m.cpu(m.default_cpu()).running;
    if (!after_event_ && def >= 0 && local_boundaries != Mode::kAsked) {
      EXPECT_FALSE(m.LocalBoundaryIsFreeByRule(def, local_boundaries)) << "asked at a free boundary";
    }
    ++asked;
    inner_.defaults_ahead = defaults_ahead;
    const Decision d = inner_.Choose(v);
    Take();
    after_event_ = d.IsEvent();
    return d;
  }
  uint64_t asked = 0, other_answers = 0;
  uint64_t free_answers[3] = {};

 private:
  void Take() {
    defaults_ahead = inner_.defaults_ahead;
    inner_.defaults_ahead = 0;
    local_boundaries = inner_.local_boundaries;
  }
  RandomScheduler& inner_;
  bool after_event_ = false;
};

TEST(RandomLocalBoundariesTest, FastAnswerIsTheRuleOnEveryBuiltin) {
  uint64_t free_no_events = 0, free_events = 0, other = 0;
  for (const BuiltinScenario& b : BuiltinScenarios()) {
    SCOPED_TRACE(b.name);
    const Scenario s = ParseScenario(b.text, b.path);
    for (const RunOptions& o : KernelsFor(s)) {
      // Asked at every boundary: the check sees every state.
      RandomScheduler inner(3, WithEvents(false));
      Spy spy(inner);
      Simulator sim(s, o);
      ExecutionResult r;
      for (int i = 0; i < 30; ++i) sim.RunInto(spy, r);
      free_no_events += spy.free_answers[static_cast<int>(Mode::kNoEvents)];
      free_events += spy.free_answers[static_cast<int>(Mode::kUnlessEventMatters)];
      other += spy.other_answers;
    }
  }
  // Not vacuous: both answers occur in both modes, and events make fewer
  // boundaries free (inside critical sections, before getcpu).
  EXPECT_GT(free_events, 1000u);
  EXPECT_GT(free_no_events, free_events);
  EXPECT_GT(other, 1000u);
}

TEST(RandomLocalBoundariesTest, NeverAskedAtAFreeBoundary) {
  for (const BuiltinScenario& b : BuiltinScenarios()) {
    SCOPED_TRACE(b.name);
    const Scenario s = ParseScenario(b.text, b.path);
    const RunOptions o = KernelsFor(s).front();
    RandomScheduler with(5, WithEvents(true)), without(5, WithEvents(false));
    Spy a(with), c(without);
    Simulator sim(s, o);
    ExecutionResult r;
    uint64_t boundaries_a = 0;
    for (int i = 0; i < 50; ++i) {
      sim.RunInto(a, r);
      boundaries_a += r.steps;
    }
    for (int i = 0; i < 50; ++i) sim.RunInto(c, r);
    // Fewer questions than boundaries: the shortcut did something.
    EXPECT_LT(a.asked, boundaries_a);
  }
}

// Outcomes of `n` random executions (seed 1) at most `k` events, with or
// without the shortcut.
std::set<Outcome> RandomOutcomes(const Scenario& s, const RunOptions& run, uint32_t k, bool skip, uint64_t n) {
  ExploreOptions o;
  o.strategy = StrategyKind::kRandom;
  o.run = run;
  o.bounds.max_events = k;
  o.max_executions = n;
  o.stop_at_first_failure = false;
  o.defer_events = skip;
  return Explore(s, o).outcomes;
}

TEST(RandomLocalBoundariesTest, ReachesEveryOutcomeAtNoEventOnEveryBuiltin) {
  int compared = 0;
  for (const BuiltinScenario& b : BuiltinScenarios()) {
    SCOPED_TRACE(b.name);
    const Scenario s = ParseScenario(b.text, b.path);
    const RunOptions run = KernelsFor(s).front();
    ExploreOptions dfs;
    dfs.strategy = StrategyKind::kDfs;
    dfs.run = run;
    dfs.bounds.max_events = 0;
    dfs.stop_at_first_failure = false;
    dfs.max_executions = 5000;
    const ExploreResult all = Explore(s, dfs);
    const std::set<Outcome> with = RandomOutcomes(s, run, 0, true, 1000);
    // Where the exhaustive search completed (within 5,000 executions), 1,000
    // random executions reached exactly its outcomes.
    if (all.stop_reason != "exhausted") continue;
    EXPECT_EQ(with, all.outcomes);
    ++compared;
  }
  EXPECT_GT(compared, 10);
}

TEST(RandomLocalBoundariesTest, ShortcutExecutionsReplayExactly) {
  uint64_t taken = 0;
  for (const BuiltinScenario& b : BuiltinScenarios()) {
    SCOPED_TRACE(b.name);
    const Scenario s = ParseScenario(b.text, b.path);
    for (RunOptions o : KernelsFor(s)) {
      RandomScheduler sched(9, WithEvents(true));
      Simulator sim(s, o);
      o.fibers = true;
      Simulator fibers(s, o);
      RandomScheduler sched_f(9, WithEvents(true));
      ExecutionResult r, f;
      for (int i = 0; i < 40; ++i) {
        sim.RunInto(sched, r);
        fibers.RunInto(sched_f, f);
        ASSERT_EQ(f.schedule, r.schedule) << "execution " << i << ": fibers";
        ASSERT_EQ(f.memory, r.memory) << "execution " << i << ": fibers";
        ASSERT_EQ(f.steps, r.steps) << "execution " << i << ": fibers";
        ReplayScheduler replay(r.schedule);
        ExecutionResult again;
        sim.RunInto(replay, again);
        ASSERT_EQ(again.verdict, r.verdict) << "execution " << i;
        ASSERT_EQ(again.memory, r.memory) << "execution " << i;
        ASSERT_EQ(again.steps, r.steps) << "execution " << i;
        ASSERT_EQ(again.schedule, r.schedule) << "execution " << i;
        taken += r.schedule.entries.size();
      }
    }
  }
  EXPECT_GT(taken, 1000u);  // the schedules had decisions to replay
}

}  // namespace
}  // namespace rseqmc
