// --strategy auto (model/strategy_choice.h): the strategy chosen for
// scenarios of each kind and the reason given, and that a scenario checked
// under the chosen strategy gets the verdict and the outcome set of the
// explicit strategies.
#include <string>

#include <gtest/gtest.h>

#include "model/explorer.h"
#include "model/strategy_choice.h"
#include "scenarios/builtin.h"
#include "scenarios/parser.h"
#include "sim/builder.h"
#include "sim/thread_api.h"

namespace rseqmc {
namespace {

Scenario Builtin(const std::string& name) {
  const BuiltinScenario* b = FindBuiltinScenario(name);
  if (b == nullptr) throw std::runtime_error("no built-in scenario " + name);
  return ParseScenario(b->text, b->path);
}

ExploreResult ExploreAll(const Scenario& s, StrategyKind k) {
  ExploreOptions o;
  o.strategy = k;
  o.bounds.max_events = 1;
  o.stop_at_first_failure = false;
  return Explore(s, o);
}

TEST(StrategyChoice, StatefulWhenEveryLoopChangesState) {
  for (const char* name : {"percpu_list", "percpu_buffer"}) {
    const StrategyChoice c = ChooseStrategy(Builtin(name));
    EXPECT_EQ(c.kind, StrategyKind::kStateful) << name << ": " << c.reason;
    EXPECT_EQ(c.reason,
              "auto: every thread is IR and every loop updates a register from itself or adds to memory, so no "
              "livelock hides in a pruned state; use --strategy dpor for partial-order reduction instead")
        << name;
  }
}

TEST(StrategyChoice, DporForASpinWait) {
  const StrategyChoice c = ChooseStrategy(Builtin("percpu_spinlock"));
  EXPECT_EQ(c.kind, StrategyKind::kDpor);
  EXPECT_EQ(c.reason.rfind("auto: the loop ", 0), 0u) << c.reason;
  EXPECT_NE(c.reason.find("can repeat a state (nothing in it updates a register from itself"), std::string::npos)
      << c.reason;

  // The smallest spin-wait: load, compare, branch back.
  ScenarioBuilder b("spin");
  b.Var("flag", Width::kU64, 1);
  b.Func("wait").La(1, "flag").Label("again").Ld(2, Mem(1)).Beq(2, Imm(0), "again").Ret();
  b.Thread("w", "wait", 0);
  const StrategyChoice spin = ChooseStrategy(b.Build());
  EXPECT_EQ(spin.kind, StrategyKind::kDpor);
  EXPECT_EQ(spin.reason,
            "auto: the loop wait:again .. wait:again+1 can repeat a state (nothing in it updates a register from "
            "itself or adds to memory), a livelock that stateful search would prune and DPOR reports; use "
            "--strategy stateful to prune it");
}

TEST(StrategyChoice, DporForCppThreads) {
  ScenarioBuilder b("native");
  b.Func("f").Ret();
  b.Native("n", 0, [](ThreadApi&) { return int64_t{0}; });
  const StrategyChoice c = ChooseStrategy(b.Build());
  EXPECT_EQ(c.kind, StrategyKind::kDpor);
  EXPECT_EQ(c.reason, "auto: thread 'n' is C++, and stateful search needs IR threads");
}

// Two scenarios auto explores with stateful search and two with DPOR, one of
// each a planted bug: the same verdict and distinct outcomes as DPOR and
// (for the stateful ones) as each other.
TEST(StrategyChoice, ChosenStrategyAgreesWithExplicitOnes) {
  for (const char* name : {"percpu_list", "buggy/cpu_not_rechecked", "percpu_spinlock", "buggy/abba_deadlock"}) {
    const Scenario s = Builtin(name);
    const StrategyChoice c = ChooseStrategy(s);
    const ExploreResult chosen = ExploreAll(s, c.kind);
    const ExploreResult dpor = ExploreAll(s, StrategyKind::kDpor);
    ASSERT_TRUE(chosen.complete) << name;
    EXPECT_EQ(chosen.failure.has_value(), dpor.failure.has_value()) << name;
    if (chosen.failure && dpor.failure) {
      EXPECT_EQ(chosen.failure->verdict, dpor.failure->verdict) << name;
    }
    EXPECT_EQ(chosen.outcomes, dpor.outcomes) << name << " under " << StrategyName(c.kind);
  }
}

}  // namespace
}  // namespace rseqmc
