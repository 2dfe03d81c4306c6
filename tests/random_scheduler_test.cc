// Tests of the seeded random scheduler's distribution (sim/schedule.h): the
// quiet runs between deviations are geometric with parameter p_switch_cpu +
// the event probabilities, and a deviation is an event of each kind in
// proportion to its probability. Seeds are fixed, so each test's figures are
// exact and reproducible; the tolerances (5 standard errors) are what a correct
// sampler meets for almost every seed, and an off-by-one run length or a
// mis-weighted kind misses them by tens of standard errors.
#include <cmath>
#include <cstdint>
#include <vector>

#include <gtest/gtest.h>

#include "model/explorer.h"
#include "model/pct.h"
#include "scenarios/builtin.h"
#include "scenarios/parser.h"
#include "sim/builder.h"
#include "sim/schedule.h"
#include "sim/simulator.h"

namespace rseqmc {
namespace {

// Two threads on two CPUs, each counting up forever in a register: every
// boundary has another CPU to switch to, and nothing else happens. The
// execution ends at the step limit.
Scenario TwoSpinners() {
  ScenarioBuilder b("two_spinners");
  b.Cpus(2);
  b.Func("spin").Label("loop").Add(1, 1, Imm(1)).Jmp("loop");
  b.Thread("t0", "spin", 0).Thread("t1", "spin", 1);
  return b.Build();
}

// The quiet-run lengths of one long execution: the boundaries between
// consecutive recorded deviations, less one.
std::vector<uint64_t> QuietRuns(double p_switch, uint64_t seed, uint64_t steps) {
  const Scenario s = TwoSpinners();
  RunOptions o;
  o.max_steps = steps;
  Simulator sim(s, o);
  RandomOptions ro;
  ro.p_switch_cpu = p_switch;
  ro.p_preempt = ro.p_migrate = ro.p_signal = ro.p_ipi = 0;
  // The sampler at every boundary: the spinners' steps are all thread-local,
  // so with the shortcut (Scheduler::LocalBoundaries) none would be asked.
  ro.skip_local_boundaries = false;
  RandomScheduler sched(seed, ro);
  const ExecutionResult r = sim.Run(sched);
  EXPECT_EQ(r.verdict, Verdict::kLivelock);  // counting in registers is no progress
  std::vector<uint64_t> runs;
  uint64_t prev = 0;
  bool first = true;
  for (const ScheduleEntry& e : r.schedule.entries) {
    EXPECT_EQ(e.decision.kind, DecisionKind::kStep);
    runs.push_back(e.boundary - (first ? 0 : prev + 1));
    prev = e.boundary;
    first = false;
  }
  return runs;
}

// P(run >= j) = (1 - p)^j for j = 0..8 (where expected 200 times), and the mean (1 - p) / p, each within
// 5 standard errors. p = 0.3 and 0.1 use the table sampler (p > 1/16), 0.05
// and 0.01 the logarithm, 0.95 the table with most runs empty.
TEST(RandomSchedulerTest, QuietRunsAreGeometric) {
  for (const double p : {0.3, 0.1, 0.05, 0.01, 0.95}) {
    for (const uint64_t seed : {1u, 2u}) {
      const std::vector<uint64_t> runs = QuietRuns(p, seed, 400000);
      const double n = static_cast<double>(runs.size());
      ASSERT_GT(n, 1000) << "p " << p;
      // Only where at least 200 runs are expected: the normal approximation
      // behind the tolerance does not hold for rarer tails.
      for (int j = 0; j <= 8 && std::pow(1 - p, j) * n >= 200; ++j) {
        const double want = std::pow(1 - p, j);
        double got = 0;
        for (const uint64_t q : runs) got += q >= static_cast<uint64_t>(j);
        got /= n;
        const double se = std::sqrt(want * (1 - want) / n);
        EXPECT_NEAR(got, want, 5 * se + 1e-12) << "p " << p << " seed " << seed << " P(run >= " << j << ")";
      }
      double mean = 0;
      for (const uint64_t q : runs) mean += static_cast<double>(q);
      mean /= n;
      const double want_mean = (1 - p) / p;
      const double sd = std::sqrt(1 - p) / p;
      EXPECT_NEAR(mean, want_mean, 5 * sd / std::sqrt(n)) << "p " << p << " seed " << seed;
    }
  }
}

// The same seed gives the same runs; another seed gives other runs.
TEST(RandomSchedulerTest, QuietRunsFollowTheSeed) {
  EXPECT_EQ(QuietRuns(0.3, 7, 20000), QuietRuns(0.3, 7, 20000));
  EXPECT_NE(QuietRuns(0.3, 7, 20000), QuietRuns(0.3, 8, 20000));
  EXPECT_EQ(QuietRuns(0.02, 7, 20000), QuietRuns(0.02, 7, 20000));
}

// With events allowed, deviations split into switches and the four kinds in
// proportion to their probabilities (max_events high enough never to bind).
TEST(RandomSchedulerTest, DeviationsSplitByKindInProportion) {
  const Scenario s = TwoSpinners();
  RunOptions o;
  o.max_steps = 400000;
  Simulator sim(s, o);
  RandomOptions ro;
  ro.p_switch_cpu = 0.2;
  ro.p_preempt = 0.04;
  ro.p_migrate = 0;  // a migration would leave a CPU idle, and then no switch is possible
  ro.p_signal = 0;   // the spinners declare no handler
  ro.p_ipi = 0.01;
  ro.max_events = 1u << 30;
  ro.skip_local_boundaries = false;  // every boundary asked, as in QuietRuns
  RandomScheduler sched(5, ro);
  const ExecutionResult r = sim.Run(sched);
  ASSERT_EQ(r.verdict, Verdict::kLivelock);  // counting in registers is no progress
  const double total = static_cast<double>(r.schedule.entries.size());
  ASSERT_GT(total, 50000);
  uint64_t kinds[kNumDecisionKinds] = {};
  for (const ScheduleEntry& e : r.schedule.entries) ++kinds[static_cast<int>(e.decision.kind)];
  // Both CPUs stay busy (a preemption with an empty run queue lets the same
  // thread go on), so every deviation is recorded as drawn; a step entry is a
  // switch to the other CPU.
  const double p_any = 0.25;
  const double want[kNumDecisionKinds] = {0.2 / p_any, 0.04 / p_any, 0, 0, 0.01 / p_any};
  for (int k = 0; k < kNumDecisionKinds; ++k) {
    const double got = static_cast<double>(kinds[k]) / total;
    const double se = std::sqrt(want[k] * (1 - want[k]) / total);
    EXPECT_NEAR(got, want[k], 5 * se + 1e-12) << DecisionKindName(static_cast<DecisionKind>(k));
  }
}

// Asks `inner` at every boundary and promises nothing (Scheduler::
// defaults_ahead stays 0): the machine's path before BoundedRandomScheduler
// handed its inner scheduler's promise to the machine.
class EveryBoundary : public Scheduler {
 public:
  explicit EveryBoundary(Scheduler& inner) : inner_(inner) {}
  void BeginExecution(const Machine& m) override {
    inner_.BeginExecution(m);
    local_boundaries = inner_.local_boundaries;
  }
  Decision Choose(const ChoiceView& v) override {
    ++calls;
    const Decision d = inner_.Choose(v);
    // The boundaries before local steps stay the machine's (they are not
    // promised defaults, the path this test compares).
    local_boundaries = inner_.local_boundaries;
    return d;
  }
  void EndExecution(const Machine& m) override { inner_.EndExecution(m); }
  uint64_t calls = 0;

 private:
  Scheduler& inner_;
};

// The random strategy's scheduler (`rseqmc check --strategy random`) lets the
// machine take its quiet boundaries without asking (the fast path that the
// plain RandomScheduler has): the executions must be exactly those of asking
// at every boundary that is not before a local step (those are the
// machine's either way). percpu_counter, default probabilities, at most 2 events
// and no preemption (so the bound turns some drawn events into steps).
TEST(RandomSchedulerTest, BoundedSchedulerPromisesTheSameExecutions) {
  const BuiltinScenario* b = FindBuiltinScenario("percpu_counter");
  ASSERT_NE(b, nullptr);
  const Scenario s = ParseScenario(b->text, b->path);
  Bounds bounds;
  bounds.max_events = 2;
  bounds.max_preemptions = 0;
  RandomOptions ro;
  ro.max_events = bounds.max_events;
  BoundedRandomScheduler fast(s, 7, ro, bounds), slow_inner(s, 7, ro, bounds);
  EveryBoundary slow(slow_inner);
  Simulator sim_fast(s), sim_slow(s);
  ExecutionResult a, c;
  uint64_t events = 0, switches = 0, boundaries = 0;
  for (int i = 0; i < 3000; ++i) {
    sim_fast.RunInto(fast, a);
    sim_slow.RunInto(slow, c);
    ASSERT_EQ(a.schedule, c.schedule) << "execution " << i;
    ASSERT_EQ(a.steps, c.steps) << "execution " << i;
    ASSERT_EQ(a.memory, c.memory) << "execution " << i;
    for (const ScheduleEntry& e : a.schedule.entries) ++(e.decision.kind == DecisionKind::kStep ? switches : events);
    boundaries += a.steps;
  }
  // Both kinds of deviation happened (seed 7: exact). The slow path was
  // asked once per boundary that is not before a local step
  // (Scheduler::LocalBoundaries) and once per injected event: 56,595 of the
  // 144,211 boundaries and events (asking at every boundary, the figures
  // were 3,063 events, 24,959 switches, 147,170 steps).
  EXPECT_EQ(events, 1356u);
  EXPECT_EQ(switches, 9182u);
  EXPECT_EQ(boundaries, 142855u);
  EXPECT_EQ(slow.calls, 56595u);
}

}  // namespace
}  // namespace rseqmc
