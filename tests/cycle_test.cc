// Issue 18 (attack4 F2): a loop whose whole machine state comes back is a
// livelock under every strategy, in `run` and in the counterexample's
// replay, found in the step budget's second half (Machine::CheckCycle), not
// steplimit because memory changes inside the cycle.
#include <cstdint>
#include <string>

#include <gtest/gtest.h>

#include "model/explorer.h"
#include "scenarios/parser.h"
#include "sim/schedule.h"
#include "sim/simulator.h"

namespace rseqmc {
namespace {

Scenario Data(const std::string& name) {
  return ParseScenarioFile(std::string(RSEQMC_SOURCE_DIR) + "/tests/data/" + name);
}

ExecutionResult Replay(const Scenario& s, const Schedule& schedule) {
  RunOptions o;
  Simulator sim(s, o);
  ReplayScheduler replay(schedule);
  return sim.Run(replay);
}

bool Has(const std::string& message, const std::string& part) { return message.find(part) != std::string::npos; }

// Every strategy finds the livelock; each counterexample's replay is a
// livelock too, ended by the cycle before the step budget (100,000) except
// PCT's (see below).
void ExpectLivelockEverywhere(const Scenario& s) {
  for (StrategyKind k : {StrategyKind::kDfs, StrategyKind::kDpor, StrategyKind::kStateful, StrategyKind::kRandom,
                         StrategyKind::kPct}) {
    SCOPED_TRACE(StrategyName(k));
    ExploreOptions o;
    o.strategy = k;
    o.max_executions = 20;
    const ExploreResult res = Explore(s, o);
    ASSERT_TRUE(res.failure.has_value());
    EXPECT_EQ(res.failure->verdict, Verdict::kLivelock) << res.failure->message;
    const ExecutionResult r = Replay(s, res.failure->schedule);
    EXPECT_EQ(r.verdict, Verdict::kLivelock) << r.message;
    // (PCT's pingpong counterexample replays to a livelock at the step
    // budget: its continuation's state does not come back within the
    // second half at the points Brent's marks compare.)
    if (k != StrategyKind::kPct) {
      EXPECT_TRUE(Has(r.message, "comes back")) << r.message;
      EXPECT_LT(r.steps, 100000u);
    }
  }
}

// DFS's counterexample for `s` is a livelock whose message names `period`.
void ExpectDfsCycle(const Scenario& s, const std::string& period) {
  ExploreOptions o;
  o.strategy = StrategyKind::kDfs;
  const ExploreResult res = Explore(s, o);
  ASSERT_TRUE(res.failure.has_value());
  EXPECT_EQ(res.failure->verdict, Verdict::kLivelock);
  EXPECT_TRUE(Has(res.failure->message, "comes back " + period + " later")) << res.failure->message;
}

// A u8 counter in memory (mod 256) while the thread waits for a flag nobody
// sets: 7 instructions per round, the state comes back every 256 rounds.
// Data memory differs between the budget's midpoint and its end (1792 does
// not divide 50,000), which the step budget alone took for progress.
TEST(CycleTest, WrappingCounterIsALivelockWithItsPeriod) {
  const Scenario s = Data("cycle_wrap8.rsq");
  ExpectDfsCycle(s, "1792 boundaries (1792 steps)");
  ExpectLivelockEverywhere(s);
  // `rseqmc run`: the random scheduler's execution, one thread: same cycle.
  RunOptions ro;
  Simulator sim(s, ro);
  RandomScheduler sched(1);
  const ExecutionResult r = sim.Run(sched);
  EXPECT_EQ(r.verdict, Verdict::kLivelock) << r.message;
  EXPECT_TRUE(Has(r.message, "1792 steps) later")) << r.message;
}

// Two threads pass a turn word back and forth forever: memory changes every
// round; the whole state comes back every round (14 steps under DFS's
// default schedule).
TEST(CycleTest, PingPongIsALivelock) {
  const Scenario s = Data("cycle_pingpong.rsq");
  ExpectDfsCycle(s, "14 boundaries (14 steps)");
  ExpectLivelockEverywhere(s);
  for (uint64_t seed : {1, 2, 3}) {
    RunOptions ro;
    Simulator sim(s, ro);
    RandomScheduler sched(seed);
    const ExecutionResult r = sim.Run(sched);
    EXPECT_EQ(r.verdict, Verdict::kLivelock) << r.message;
  }
}

// No false cycle: a cycle that is not fair (a thread never runs in it) is not reported: with
// one CPU and two threads the second waits queued while the first spins
// over a changing counter; without preemption events that is the step
// budget's verdict, never a cycle.
TEST(CycleTest, NoCycleWithoutFairness) {
  // (A counter that never repeats stays steplimit:
  // BlockingTest.StepBudgetSeparatesProgressFromSpinning.)
  RunOptions ro;
  ro.max_steps = 20000;
  const Scenario queued = ParseScenario(R"(scenario queued
cpus 1
var n: u64 = 0
func spin
  la    r1, n
loop:
  ld    r2, [r1]
  add   r2, r2, 1
  and   r2, r2, 0xf
  st    [r1], r2
  jmp   loop
end
func other
  ret
end
thread a entry spin cpu 0
thread b entry other cpu 0
)",
                                        "queued.rsq");
  Simulator sim2(queued, ro);
  ReplayScheduler none2(Schedule{});
  const ExecutionResult q = sim2.Run(none2);
  EXPECT_FALSE(Has(q.message, "comes back")) << q.message;
}

}  // namespace
}  // namespace rseqmc
