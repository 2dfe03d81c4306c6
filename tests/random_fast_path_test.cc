// The per-execution fast paths of random exploration (issue 14) against the
// code they stand in for:
//   * CompiledExpr's postfix form (properties without a node that can fail)
//     gives exactly the tree walk's value, on every property of every
//     built-in scenario after random executions, and on every operator;
//   * OutcomeInserter leaves exactly the set `set.insert(OutcomeOf(s, r))`
//     leaves, with the same "new" answers, on random executions of every
//     built-in scenario, also when the set was filled behind its back;
//   * Machine::Reset's prepared start (the state before the first boundary,
//     copied instead of rebuilt by the registration and mm_cid hooks) is
//     exactly the state a fresh machine builds, after random executions with
//     events, on every built-in under every ABI that runs it;
//   * the random strategy's outcome set is OutcomeOf of its executions.
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
#include "tests/builtin_scenario.h"

namespace rseqmc {
namespace {

// Random executions with events (default probabilities, at most 3 events).
RandomOptions WithEvents() {
  RandomOptions o;
  o.max_events = 3;
  return o;
}

// The first modelled kernel that runs `s` (the 2015-RFC built-ins need rfc2015).
RunOptions KernelFor(const Scenario& s) {
  RunOptions o;
  for (const KernelAbi* abi : AllAbis()) {
    if (!abi->NotApplicable(s)) {
      o.kernel.model = abi->info().model;
      break;
    }
  }
  return o;
}

TEST(RandomFastPathTest, PostfixPropertiesEqualTheTreeOnEveryBuiltin) {
  int with_postfix = 0, without = 0;
  for (const BuiltinScenario& b : BuiltinScenarios()) {
    SCOPED_TRACE(b.name);
    const Scenario s = ParseScenario(b.text, b.path);
    std::vector<CompiledExpr> props;
    for (const Property& p : s.properties) {
      props.emplace_back(s, p.expr);
      ++(props.back().has_postfix() ? with_postfix : without);
    }
    Simulator sim(s, KernelFor(s));
    RandomScheduler sched(11, WithEvents());
    ExecutionResult r;
    for (int i = 0; i < 40; ++i) {
      sim.RunInto(sched, r);
      for (const CompiledExpr& c : props) {
        const PropertyOutcome fast = c.Evaluate(r), tree = c.EvaluateTree(r);
        EXPECT_EQ(fast.value, tree.value);
        EXPECT_EQ(fast.holds, tree.holds);
        EXPECT_EQ(fast.error, tree.error);
      }
    }
  }
  // Most built-in properties are sums and comparisons (postfix); those that
  // index an array (x[0]) keep the tree walk with its range checks.
  EXPECT_GT(with_postfix, 20);
  EXPECT_GT(without, 0);
}

constexpr const char* kOperators = R"(scenario operators
cpus 2
var a: u64 = 5
var b: u32 = 3
var arr: u64[2] = 7
percpu pc: u64 stride 64 = 4
func main
  la r1, a
  li r2, 0
  sub r2, r2, 9
  st [r1], r2
  ret
end
thread t entry main cpu 0
property a + b * 2 == 3
property a - b
property -a
property !a
property !(a == 0) || b == 4
property a < b && b <= 3
property a > b
property a >= 0
property a != b
property sum(pc) + sum(arr)
property b * b * b * b * b * b * b * b * b * b * b * b * b * b * b * b * b * b - 1
property a / b
property a % 0
property arr[1]
)";

TEST(RandomFastPathTest, PostfixCoversEveryOperatorWithTheTreesValues) {
  const Scenario s = ParseScenario(kOperators, "operators.rsq");
  Simulator sim(s);
  ReplayScheduler base(Schedule{});
  const ExecutionResult r = sim.Run(base);
  ASSERT_EQ(static_cast<int64_t>(r.Read(kDataBase, 8)), -9);  // a, as the program left it
  // value, postfix form expected
  const std::vector<std::pair<int64_t, bool>> want = {
      {0, true},    // -9 + 6 == 3 is false
      {-12, true},  // -9 - 3
      {9, true},
      {0, true},
      {1, true},
      {1, true},
      {0, true},
      {0, true},    // signed: -9 >= 0 is false
      {1, true},
      {22, true},   // 4 + 4 + 7 + 7
      {387420488, true},
      {-3, false},  // division: the tree walk (it can fail)
      {0, false},   // error: division by zero
      {7, false},   // an index: range-checked by the tree walk
  };
  ASSERT_EQ(s.properties.size(), want.size());
  for (size_t i = 0; i < want.size(); ++i) {
    SCOPED_TRACE(s.properties[i].text);
    const CompiledExpr c(s, s.properties[i].expr);
    EXPECT_EQ(c.has_postfix(), want[i].second);
    EXPECT_EQ(c.Evaluate(r).value, want[i].first);
    EXPECT_EQ(c.Evaluate(r).value, c.EvaluateTree(r).value);
    EXPECT_EQ(c.Evaluate(r).error, c.EvaluateTree(r).error);
  }
  EXPECT_EQ(CompiledExpr(s, s.properties[12].expr).Evaluate(r).error, "division by zero or overflow");
  // The machine's own verdict comes from the same evaluation.
  EXPECT_EQ(r.verdict, Verdict::kPropertyFailed);
  EXPECT_EQ(r.message, "property failed: a + b * 2 == 3");
}

TEST(RandomFastPathTest, OutcomeInserterEqualsInsertingOutcomeOfOnEveryBuiltin) {
  size_t total = 0;
  for (const BuiltinScenario& b : BuiltinScenarios()) {
    SCOPED_TRACE(b.name);
    const Scenario s = ParseScenario(b.text, b.path);
    Simulator sim(s, KernelFor(s));
    RandomScheduler sched(5, WithEvents());
    ExecutionResult r;
    std::set<Outcome> reference, fast;
    OutcomeInserter inserter(s);
    for (int i = 0; i < 60; ++i) {
      sim.RunInto(sched, r);
      const bool added = reference.insert(OutcomeOf(s, r)).second;
      EXPECT_EQ(inserter.Insert(r, fast), added);
      if (i == 30) {
        // Filled behind the inserter's back (a resumed snapshot's outcomes):
        // it re-indexes and still answers exactly.
        std::set<Outcome> copy = reference;
        fast.swap(copy);
      }
    }
    EXPECT_TRUE(fast == reference);
    total += reference.size();
  }
  EXPECT_GT(total, BuiltinScenarios().size());  // some scenarios reach several outcomes
}

TEST(RandomFastPathTest, OutcomeInserterTellsOutcomesApartByEveryField) {
  // Two executions of one scenario that differ only in one thread's return
  // value, only in an observation, or only in the verdict are different
  // outcomes; the same final state is one.
  const Scenario s = ParseScenario(kOperators, "operators.rsq");
  Simulator sim(s);
  ReplayScheduler base(Schedule{});
  ExecutionResult r = sim.Run(base);
  std::set<Outcome> set;
  OutcomeInserter inserter(s);
  EXPECT_TRUE(inserter.Insert(r, set));
  EXPECT_FALSE(inserter.Insert(r, set));
  ExecutionResult ret = r;
  ret.threads[0].ret += 1;
  EXPECT_TRUE(inserter.Insert(ret, set));
  ExecutionResult obs = r;
  obs.threads[0].observed.emplace_back(0, 42);
  EXPECT_TRUE(inserter.Insert(obs, set));
  obs.threads[0].observed.back().second = 43;
  EXPECT_TRUE(inserter.Insert(obs, set));
  ExecutionResult verdict = r;
  verdict.verdict = Verdict::kPass;
  EXPECT_TRUE(inserter.Insert(verdict, set));
  ExecutionResult mem = r;
  mem.memory[8] ^= 1;  // b
  EXPECT_TRUE(inserter.Insert(mem, set));
  mem.memory.back() ^= 1;  // past the symbols (rseq area): not part of the outcome
  EXPECT_FALSE(inserter.Insert(mem, set));
  EXPECT_EQ(set.size(), 6u);
  EXPECT_FALSE(inserter.Insert(ret, set));
}

TEST(RandomFastPathTest, RandomStrategyCollectsTheSameOutcomesAsOutcomeOf) {
  // The explorer's outcome set (OutcomeInserter) against OutcomeOf of every
  // execution it reports, on a scenario with several outcomes.
  const BuiltinScenario* b = FindBuiltinScenario("buggy/store_before_commit");
  ASSERT_NE(b, nullptr);
  const Scenario s = ParseScenario(b->text, b->path);
  ExploreOptions o;
  o.strategy = StrategyKind::kRandom;
  o.bounds.max_events = 2;
  o.max_executions = 3000;
  o.stop_at_first_failure = false;
  std::set<Outcome> reference;
  o.on_execution = [&](const ExecutionResult& r) { reference.insert(OutcomeOf(s, r)); };
  const ExploreResult res = Explore(s, o);
  EXPECT_EQ(res.executions, 3000u);
  EXPECT_GT(reference.size(), 1u);
  EXPECT_TRUE(res.outcomes == reference);
  ASSERT_TRUE(res.failure.has_value());
  EXPECT_EQ(res.failure->verdict, Verdict::kPropertyFailed);
}

// Probes the machine at the first boundary of an execution (the state Reset
// left), then lets the execution run on by defaults.
class StartProbe : public Scheduler {
 public:
  struct Seen {
    std::pair<uint64_t, uint64_t> hash;  // Machine::StateHash, mm_cid included
    int default_cpu = 0;
    std::vector<int64_t> threads;        // per thread: the fields the hash leaves out
    bool operator==(const Seen&) const = default;
  };
  void BeginExecution(const Machine&) override {
    defaults_ahead = 0;
    probed_ = false;
  }
  Decision Choose(const ChoiceView& view) override {
    const Machine& m = view.machine();
    if (!probed_) {
      probed_ = true;
      seen.hash = m.StateHash();
      seen.default_cpu = m.default_cpu();
      seen.threads.clear();
      for (int t = 0; t < m.num_threads(); ++t) {
        const SimThread& th = m.thread(t);
        seen.threads.insert(seen.threads.end(), {th.cpu, th.mm_cid, th.last_mm_cid, th.notify_resume,
                                                 th.rseq_ids_cpu, th.rseq_ids_mm_cid, th.event_mask, th.cur().pc});
      }
    }
    defaults_ahead = ~0ull >> 1;
    return Decision::Step(m.default_cpu());
  }
  Seen seen;

 private:
  bool probed_ = false;
};

TEST(RandomFastPathTest, PreparedStartIsTheStateAFreshMachineBuilds) {
  const int runs = testing::ForEachBuiltinUnderEachAbi([](const BuiltinScenario&, const Scenario& s, RunOptions small) {
    small.max_steps = 2000;  // the probe's executions only need their start
    StartProbe fresh_probe;
    Simulator fresh(s, small);
    ExecutionResult first;
    fresh.RunInto(fresh_probe, first);
    // The same machine, after random executions with events (which leave
    // memory, threads, run queues and the mm_cid allocator elsewhere).
    Simulator reused(s, small);
    RandomScheduler random(3, WithEvents());
    StartProbe probe;
    ExecutionResult r;
    for (int i = 0; i < 4; ++i) {
      reused.RunInto(probe, r);
      EXPECT_TRUE(probe.seen == fresh_probe.seen) << "execution " << i;
      for (int k = 0; k < 5; ++k) reused.RunInto(random, r);
    }
  });
  EXPECT_GT(runs, 40);
}

}  // namespace
}  // namespace rseqmc
