// --strategy auto (model/strategy_choice.h): the strategy chosen for
// scenarios of each kind and the reason given, and that a scenario checked
// under the chosen strategy gets the verdict and the outcome set of the
// explicit strategies.
#include <cstdlib>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "model/explorer.h"
#include "model/strategy_choice.h"
#include "scenarios/builtin.h"
#include "scenarios/parser.h"
#include "sim/builder.h"
#include "sim/kernel/abi.h"
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

// The pick and the reason on every built-in scenario, at the check's
// default bound (K=1), against tests/golden/strategy_auto.txt ("NAME |
// strategy | reason"; RSEQMC_UPDATE_GOLDEN=1 rewrites it: tools/update-golden.sh).
// 2015-RFC programs under the rfc2015 model, their only ABI.
TEST(StrategyChoice, GoldenPickAndReasonOnEveryBuiltin) {
  const std::string path = std::string(RSEQMC_SOURCE_DIR) + "/tests/golden/strategy_auto.txt";
  std::vector<std::pair<std::string, std::string>> picks;  // name, "strategy | reason"
  for (const BuiltinScenario& b : BuiltinScenarios()) {
    const Scenario s = ParseScenario(b.text, b.path);
    ExploreOptions o;
    o.bounds.max_events = 1;
    if (FindRfc2015Use(s.program) != nullptr) o.run.kernel = {KernelModel::kRfc2015, "rfc2015"};
    const StrategyChoice c = ChooseStrategy(s, o);
    picks.emplace_back(b.name, std::string(StrategyName(c.kind)) + " | " + c.reason);
    // At K=1 a pilot is kept only when it ran to its end, as the chosen strategy.
    if (c.pilot) {
      EXPECT_TRUE(c.pilot->complete || c.pilot->stop_reason == "failure") << b.name;
    }
  }
  if (std::getenv("RSEQMC_UPDATE_GOLDEN") != nullptr) {
    std::ofstream out(path);
    for (const auto& [name, pick] : picks) out << name << " | " << pick << "\n";
    GTEST_SKIP() << "rewrote " << path;
  }
  std::map<std::string, std::string> golden;  // name -> "strategy | reason"
  std::ifstream in(path);
  ASSERT_TRUE(in) << path << " is missing; create it with RSEQMC_UPDATE_GOLDEN=1";
  for (std::string line; std::getline(in, line);) {
    const size_t bar = line.find(" | ");
    golden[line.substr(0, bar)] = bar == std::string::npos ? "" : line.substr(bar + 3);
  }
  EXPECT_EQ(golden.size(), picks.size()) << "a built-in scenario was added or removed: update " << path;
  for (const auto& [name, pick] : picks) EXPECT_EQ(golden[name], pick) << name << " (" << path << ")";
}

// percpu_list at every size: the threads race in two places (2 event-free
// traces), stateful search's event-free states grow with PER^2: dpor.
TEST(StrategyChoice, PercpuListIsDporAtEveryPer) {
  for (int64_t per : {1, 4, 16, 64}) {
    const BuiltinScenario* b = FindBuiltinScenario("percpu_list");
    const StrategyChoice c = ChooseStrategy(ParseScenario(b->text, b->path, {{"PER", per}}));
    EXPECT_EQ(c.kind, StrategyKind::kDpor) << per << ": " << c.reason;
    EXPECT_EQ(c.reason.rfind("auto: without events DPOR ran 2 executions of ", 0), 0u) << c.reason;
    EXPECT_NE(c.reason.find(" (2 per DPOR step, its pilot's cap) without exhausting them: the threads race in few "
                            "places"),
              std::string::npos)
        << c.reason;
  }
}

// `n` threads on their own CPUs, each adding 1 to one shared counter `adds`
// times with xadd (no loop: straight-line code): every interleaving is its
// own Mazurkiewicz trace, and they converge on few states (the counter's
// value and the threads' positions).
Scenario ConvergingAdders(int n, int adds) {
  ScenarioBuilder b("adders");
  b.Cpus(static_cast<uint32_t>(n));
  b.Var("count", Width::kU64, 1);
  auto& f = b.Func("add").La(1, "count").Li(2, 1);
  for (int i = 0; i < adds; ++i) f.Xadd(3, Mem(1), 2);
  f.Ret();
  for (int t = 0; t < n; ++t) b.Thread("t" + std::to_string(t), "add", static_cast<uint32_t>(t));
  return b.Build();
}

TEST(StrategyChoice, StatefulWhereInterleavingsConverge) {
  const StrategyChoice c = ChooseStrategy(ConvergingAdders(2, 3));
  EXPECT_EQ(c.kind, StrategyKind::kStateful) << c.reason;
  EXPECT_EQ(c.reason.rfind("auto: without events stateful search stored ", 0), 0u) << c.reason;
  EXPECT_NE(c.reason.find("many interleavings converge on few states, which stateful search visits once"),
            std::string::npos)
      << c.reason;
}

TEST(StrategyChoice, StatefulWhenTheDporPilotReachesItsCap) {
  // 3 threads x 4 adds: 12!/(4!^3) = 34,650 event-free traces, past the cap.
  const StrategyChoice c = ChooseStrategy(ConvergingAdders(3, 4));
  EXPECT_EQ(c.kind, StrategyKind::kStateful) << c.reason;
  EXPECT_EQ(c.reason.rfind("auto: without events DPOR ran 256 executions of ", 0), 0u) << c.reason;
  EXPECT_NE(c.reason.find(" steps (its pilot's cap) and had not exhausted the interleavings: the threads race in "
                          "many places, whose converging states stateful search visits once"),
            std::string::npos)
      << c.reason;
  EXPECT_FALSE(c.pilot.has_value());
}

TEST(StrategyChoice, StatefulWhenTheThreadsDoNotInterleaveWithoutEvents) {
  const StrategyChoice c = ChooseStrategy(Builtin("buggy/cpu_not_rechecked"));
  EXPECT_EQ(c.kind, StrategyKind::kStateful);
  EXPECT_EQ(c.reason,
            "auto: without events stateful search stored 30 states where DPOR ran 1 execution of 30 steps: 1.00 "
            "states per DPOR step (< 2): the threads do not interleave without events, and a stateful branch ends at "
            "the first state it has seen where a DPOR execution runs to the end; use --strategy dpor for "
            "partial-order reduction instead");
}

// A pilot stopped by a limit of the check decides nothing: dpor, saying so.
// --max-executions is not such a limit: it leaves the choice as it is.
TEST(StrategyChoice, DporWhenThePilotIsStoppedByALimit) {
  ExploreOptions o;
  o.max_memory_bytes = 1;
  const StrategyChoice c = ChooseStrategy(Builtin("percpu_list"), o);
  EXPECT_EQ(c.kind, StrategyKind::kDpor);
  EXPECT_EQ(c.reason,
            "auto: the event-free pilot stopped (memory-limit) before it could compare the strategies; DPOR, whose "
            "memory stays linear in the execution's length");
  EXPECT_FALSE(c.pilot.has_value());

  for (const char* name : {"percpu_list", "buggy/cpu_not_rechecked"}) {
    ExploreOptions capped;
    capped.max_executions = 1;
    const StrategyChoice a = ChooseStrategy(Builtin(name), capped), b = ChooseStrategy(Builtin(name));
    EXPECT_EQ(a.kind, b.kind) << name;
    EXPECT_EQ(a.reason, b.reason) << name;
  }
}

// At K=0 the chosen strategy's pilot is the exploration: the same result as
// exploring with the same options.
TEST(StrategyChoice, KZeroPilotIsTheExploration) {
  for (const char* name : {"percpu_list", "buggy/cpu_not_rechecked", "mm_cid_counter"}) {
    const Scenario s = Builtin(name);
    ExploreOptions o;
    o.bounds.max_events = 0;
    const StrategyChoice c = ChooseStrategy(s, o);
    ASSERT_TRUE(c.pilot.has_value()) << name;
    o.strategy = c.kind;
    const ExploreResult direct = Explore(s, o);
    EXPECT_EQ(c.pilot->executions, direct.executions) << name;
    EXPECT_EQ(c.pilot->redundant, direct.redundant) << name;
    EXPECT_EQ(c.pilot->states, direct.states) << name;
    EXPECT_EQ(c.pilot->outcomes, direct.outcomes) << name;
    EXPECT_EQ(c.pilot->stop_reason, direct.stop_reason) << name;
    EXPECT_EQ(c.pilot->failure.has_value(), direct.failure.has_value()) << name;
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
