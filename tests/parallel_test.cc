// Work-stealing exhaustive search (model/parallel.h, model/subtree.h): DFS on
// N workers runs exactly the sequential executions and reports the same
// outcomes and the same first failure; stateful search on N workers reaches
// the same outcomes and verdicts; limits hold across workers. The subtree
// split itself is checked single-threaded, so that it is exercised whatever
// the machine's timing.
#include <algorithm>
#include <atomic>
#include <deque>
#include <map>
#include <set>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <rapidcheck.h>

#include "model/counterexample.h"
#include "model/explorer.h"
#include "model/parallel.h"
#include "model/subtree.h"
#include "scenarios/builtin.h"
#include "scenarios/parser.h"
#include "sim/kernel/abi.h"
#include "sim/schedule.h"
#include "tests/builtin_scenario.h"
#include "tests/cli_runner.h"
#include "tests/gen/program_gen.h"
#include "tests/gen/rc_cases.h"

namespace rseqmc {
namespace {

using testgen::CheckCases;
using testgen::GeneratedScenario;
using testgen::GenScenario;

using testing::Builtin;  // tests/builtin_scenario.h

// Built-ins the parallel search can take (IR threads, the current ABI),
// with one operation and one node per thread as the golden test uses.
std::vector<std::pair<std::string, Scenario>> ParallelBuiltins() {
  std::vector<std::pair<std::string, Scenario>> out;
  for (const BuiltinScenario& b : BuiltinScenarios()) {
    Scenario s = Builtin(b.name, {{"OPS", 1}, {"PER", 1}});
    if (FindRfc2015Use(s.program) != nullptr) continue;
    ExploreOptions probe;
    probe.strategy = StrategyKind::kDfs;
    if (WhyNotParallel(s, probe)) continue;
    out.emplace_back(b.name, std::move(s));
  }
  return out;
}

ExploreOptions Options(StrategyKind k, uint32_t events, bool stop_at_failure, uint64_t max_exec = 0) {
  ExploreOptions o;
  o.strategy = k;
  o.bounds.max_events = events;
  o.stop_at_first_failure = stop_at_failure;
  o.max_executions = max_exec;
  return o;
}

std::string FailureText(const Scenario& s, const ExploreResult& r) {
  if (!r.failure) return "none";
  return std::string(VerdictName(r.failure->verdict)) + " " + EncodeSchedule(s, r.failure->schedule) + " hash " +
         std::to_string(r.failure->trace_hash);
}

// ---------------------------------------------------------------------------
// The split, single-threaded: giving away a subtree after every execution and
// exploring every subtree handed out adds up to the sequential search.

struct SplitRun {
  uint64_t executions = 0, redundant = 0, subtrees = 0;
  std::set<Outcome> outcomes;
  std::set<Verdict> verdicts;  // of every finished execution
  std::vector<TreeKey> keys;            // every execution's, in the order run
  std::optional<TreeKey> first_failure;  // the smallest failing key
  std::optional<Schedule> failure_schedule;
};

// `shared`: stateful search's visited set, shared by every subtree as the
// workers of --jobs share theirs (null: each subtree its own).
SplitRun SplitEverywhere(const Scenario& s, const ExploreOptions& o, StateSet* shared = nullptr) {
  SplitRun out;
  Simulator sim(s, o.run);
  std::deque<TreePrefix> work{TreePrefix{}};
  while (!work.empty()) {
    const TreePrefix prefix = work.back();
    work.pop_back();
    ++out.subtrees;
    SubtreeSearch search(s, o, o.bounds, /*mm_cid_readable=*/false, uint64_t{1} << 24);
    SubtreeHooks h;
    auto give = [&] {
      const TreeKey leaf = search.LeafKey();
      const TreeKey root = KeyOf(prefix);
      EXPECT_TRUE(leaf.size() >= root.size() && std::equal(root.begin(), root.end(), leaf.begin()))
          << "a leaf outside its subtree";
      out.keys.push_back(leaf);
      if (std::optional<TreePrefix> p = search.GiveAway()) {
        EXPECT_LT(leaf, KeyOf(*p)) << "gave away a subtree already explored";
        work.push_back(std::move(*p));
      }
      return true;
    };
    if (shared != nullptr) h.insert_state = [shared](const StateSet::Key& k) { return shared->Insert(k); };
    h.after = [&](ExecutionResult& r) {
      out.outcomes.insert(OutcomeOf(s, r));
      out.verdicts.insert(r.verdict);
      if (r.verdict != Verdict::kPass && (!out.first_failure || search.LeafKey() < *out.first_failure)) {
        out.first_failure = search.LeafKey();
        out.failure_schedule = r.schedule;
      }
      return give();
    };
    h.after_pruned = give;
    h.deadline = [] { return false; };
    ExploreResult res;
    EXPECT_TRUE(search.Run(sim, prefix, h, res));
    out.executions += res.executions;
    out.redundant += res.redundant;
  }
  return out;
}

TEST(Parallel, SplittingEverywherePartitionsTheSequentialSearch) {
  for (const char* name : {"buggy/cpu_not_rechecked", "buggy/no_signature", "futex_mutex"}) {
    const Scenario s = Builtin(name);
    const ExploreOptions o = Options(StrategyKind::kDfs, 1, /*stop_at_failure=*/false);
    const ExploreResult seq = Explore(s, o);
    ASSERT_TRUE(seq.complete) << name;
    const SplitRun split = SplitEverywhere(s, o);
    EXPECT_GT(split.subtrees, 10u) << name << ": the test must split";
    EXPECT_EQ(split.executions, seq.executions) << name;
    EXPECT_EQ(split.redundant, seq.redundant) << name;
    EXPECT_EQ(split.outcomes, seq.outcomes) << name;
    // Every execution has its own key (the leaves are partitioned).
    std::set<TreeKey> distinct(split.keys.begin(), split.keys.end());
    EXPECT_EQ(distinct.size(), split.keys.size()) << name;
    // The smallest failing key is the sequential search's first failure.
    ASSERT_EQ(split.failure_schedule.has_value(), seq.failure.has_value()) << name;
    if (seq.failure) {
      EXPECT_EQ(EncodeSchedule(s, *split.failure_schedule), EncodeSchedule(s, seq.failure->schedule)) << name;
    }
  }
}

// A cycle of a subtree's path that starts in the subtree's prefix is seen as
// a cycle: the prefix nodes carry their state and whether they were fully
// expanded (SetPrefix, TreeChoice::full). Regression: the prefix nodes had
// no state and counted as fully expanded, so (1) stateful search with the
// visited set the workers share pruned a fair cycle that started in the
// prefix instead of reporting the livelock, and (2) DFS went once more round
// a sched_yield cycle that started in the prefix, running executions the
// sequential search prunes.
//
// A reduced cycle (C3: no fully expanded node on it) cannot cross into the
// prefix, because the prefix's last node is where the subtree was split off
// (GiveAway): either a full node, which is on the cycle, or a node whose
// alternatives are one thread's (an ample set), whose given-away alternative
// is then not its first (the step) but an injected event, and every event
// adds to the event count that every state hash holds (Machine::StateHash),
// so no state below it repeats one above it. The prefix's `full` flags keep
// ClosesReducedCycle exact anyway, without relying on that argument.
TEST(Parallel, CyclesThatStartInASubtreesPrefixAreCycles) {
  // Two threads each storing 1 then 0 to their own word forever: every
  // schedule is an infinite fair cycle, a livelock.
  const Scenario toggles = ParseScenario(
      "scenario toggles\ncpus 2\nvar x: u64\nvar y: u64\n"
      "func tx\n  la r1, x\n  li r2, 1\n  li r3, 0\nl:\n  st [r1], r2\n  st [r1], r3\n  jmp l\nend\n"
      "func ty\n  la r1, y\n  li r2, 1\n  li r3, 0\nl:\n  st [r1], r2\n  st [r1], r3\n  jmp l\nend\n"
      "thread a entry tx cpu 0 affinity 0\nthread b entry ty cpu 1 affinity 1\n",
      "toggles.rsq");
  for (uint32_t events : {0u, 1u}) {
    const ExploreOptions o = Options(StrategyKind::kStateful, events, /*stop_at_failure=*/false);
    const ExploreResult seq = Explore(toggles, o);
    ASSERT_TRUE(seq.complete);
    ASSERT_TRUE(seq.failure.has_value());
    EXPECT_EQ(seq.failure->verdict, Verdict::kLivelock);
    StateSet shared;
    const SplitRun split = SplitEverywhere(toggles, o, &shared);
    EXPECT_GT(split.subtrees, 2u) << "the test must split";
    EXPECT_EQ(split.outcomes, seq.outcomes) << "K=" << events;
    EXPECT_EQ(split.verdicts, std::set<Verdict>{Verdict::kLivelock}) << "K=" << events;
  }
  // DFS prunes a cycle through a sched_yield once round it: split, the same
  // executions and pruned ones as the sequential search.
  const Scenario yields = ParseScenario(testing::ReadFile(testing::Fixture("yield_wait_remote_holder.rsq")),
                                        "yield_wait_remote_holder.rsq", {{"RELEASE", 0}});
  for (uint32_t events : {0u, 1u}) {
    const ExploreOptions o = Options(StrategyKind::kDfs, events, /*stop_at_failure=*/false);
    const ExploreResult seq = Explore(yields, o);
    ASSERT_TRUE(seq.complete);
    ASSERT_GT(seq.cycles_pruned, 0u) << "the test needs pruned cycles";
    const SplitRun split = SplitEverywhere(yields, o);
    EXPECT_GT(split.subtrees, 2u) << "K=" << events;
    EXPECT_EQ(split.executions, seq.executions) << "K=" << events;
    EXPECT_EQ(split.redundant, seq.redundant) << "K=" << events;
    EXPECT_EQ(split.outcomes, seq.outcomes) << "K=" << events;
  }
}

// Within one subtree the keys grow: the sequential order is the key order.
TEST(Parallel, LeafKeysFollowTheSequentialOrder) {
  const Scenario s = Builtin("buggy/cpu_not_rechecked");
  const ExploreOptions o = Options(StrategyKind::kDfs, 1, false);
  Simulator sim(s, o.run);
  SubtreeSearch search(s, o, o.bounds, false, uint64_t{1} << 24);
  std::vector<TreeKey> keys;
  SubtreeHooks h;
  h.after = [&](ExecutionResult&) {
    keys.push_back(search.LeafKey());
    return true;
  };
  h.after_pruned = [&] {
    keys.push_back(search.LeafKey());
    return true;
  };
  h.deadline = [] { return false; };
  ExploreResult res;
  ASSERT_TRUE(search.Run(sim, {}, h, res));
  ASSERT_EQ(keys.size(), Explore(s, o).executions);
  EXPECT_TRUE(std::is_sorted(keys.begin(), keys.end()));
  EXPECT_EQ(std::adjacent_find(keys.begin(), keys.end()), keys.end());
}

// ---------------------------------------------------------------------------
// DFS on 2 and 4 workers: the sequential counts, outcomes and first failure.

void ExpectSameDfs(const std::string& name, const Scenario& s, const ExploreOptions& o, const ExploreResult& seq,
                   unsigned jobs) {
  const ExploreResult par = ExploreParallel(s, o, jobs);
  const std::string what = name + " with " + std::to_string(jobs) + " workers";
  EXPECT_EQ(par.executions, seq.executions) << what;
  EXPECT_EQ(par.redundant, seq.redundant) << what;
  EXPECT_EQ(par.complete, seq.complete) << what;
  EXPECT_EQ(par.stop_reason, seq.stop_reason) << what;
  EXPECT_EQ(par.max_depth, seq.max_depth) << what;
  EXPECT_EQ(par.outcomes, seq.outcomes) << what;
  EXPECT_EQ(FailureText(s, par), FailureText(s, seq)) << what;
}

// K=1 where plain DFS finishes within 20000 executions, else K=0 if it does
// there (plain DFS of the list/buffer/counter workloads runs to millions:
// time, not coverage; the planted-bug and generated-program tests add more).
TEST(Parallel, DfsOnTwoAndFourWorkersRunsTheSequentialExecutionsOnEveryBuiltin) {
  std::vector<std::string> compared;
  for (const auto& [name, s] : ParallelBuiltins()) {
    for (uint32_t events : {1u, 0u}) {
      const ExploreOptions o = Options(StrategyKind::kDfs, events, /*stop_at_failure=*/false, 20000);
      const ExploreResult seq = Explore(s, o);
      if (!seq.complete) continue;
      compared.push_back(name + "/ev:" + std::to_string(events));
      ExploreOptions unbounded = o;
      unbounded.max_executions = 0;
      for (unsigned jobs : {2u, 4u}) ExpectSameDfs(compared.back(), s, unbounded, seq, jobs);
      break;
    }
  }
  std::string list;
  for (const std::string& c : compared) list += " " + c;
  EXPECT_GE(compared.size(), 20u) << "too few built-ins compared:" << list;
}

TEST(Parallel, DfsOnThreeWorkersRunsTheSequentialExecutionsOnGeneratedPrograms) {
  static int compared = 0;
  CheckCases(40, [] {
    const GeneratedScenario g = *GenScenario();
    const Scenario& s = g.scenario;
    ExploreOptions o = Options(StrategyKind::kDfs, 1, false, 3000);
    const ExploreResult seq = Explore(s, o);
    RC_PRE(seq.complete);
    o.max_executions = 0;
    const ExploreResult par = ExploreParallel(s, o, 3);
    RC_ASSERT(par.executions == seq.executions);
    RC_ASSERT(par.redundant == seq.redundant);
    RC_ASSERT(par.outcomes == seq.outcomes);
    RC_ASSERT(FailureText(s, par) == FailureText(s, seq));
    ++compared;
  });
  EXPECT_GE(compared, 30);
}

// Stopping at the first failure: the same failure as one worker, so the same
// minimised counterexample.
TEST(Parallel, PlantedBugsGiveTheSequentialFirstFailureAndCounterexample) {
  size_t bugs = 0;
  for (const auto& [name, s] : ParallelBuiltins()) {
    if (!name.starts_with("buggy/") || name.starts_with("buggy/alloc_")) continue;
    ++bugs;
    const ExploreOptions o = Options(StrategyKind::kDfs, 1, /*stop_at_failure=*/true);
    const ExploreResult seq = Explore(s, o);
    ASSERT_TRUE(seq.failure) << name;
    for (unsigned jobs : {2u, 4u}) {
      const ExploreResult par = ExploreParallel(s, o, jobs);
      ASSERT_TRUE(par.failure) << name;
      EXPECT_EQ(par.stop_reason, "failure") << name;
      EXPECT_EQ(FailureText(s, par), FailureText(s, seq)) << name << " with " << jobs << " workers";
    }
    // Stateful on two workers: the same verdict (the failure may differ).
    const ExploreResult st = ExploreParallel(s, Options(StrategyKind::kStateful, 1, true), 2);
    ASSERT_TRUE(st.failure) << name;
    EXPECT_EQ(st.failure->verdict, seq.failure->verdict) << name;
  }
  EXPECT_GE(bugs, 5u);
  // And the minimised counterexample of one of them, end to end.
  const Scenario s = Builtin("buggy/cpu_not_rechecked");
  const ExploreOptions o = Options(StrategyKind::kDfs, 1, true);
  const Counterexample one = BuildCounterexample(s, FewerEventsSearch(o), *Explore(s, o).failure);
  const Counterexample four = BuildCounterexample(s, FewerEventsSearch(o), *ExploreParallel(s, o, 4).failure);
  EXPECT_EQ(four.token, one.token);
}

// ---------------------------------------------------------------------------
// Stateful on two workers: the sequential outcomes and verdicts.

TEST(Parallel, StatefulOnTwoWorkersReachesTheSequentialOutcomesAndVerdicts) {
  size_t compared = 0;
  for (const auto& [name, s] : ParallelBuiltins()) {
    const ExploreOptions o = Options(StrategyKind::kStateful, 1, /*stop_at_failure=*/false, 20000);
    const ExploreResult seq = Explore(s, o);
    if (!seq.complete) continue;
    ++compared;
    ExploreOptions unbounded = o;
    unbounded.max_executions = 0;
    const ExploreResult par = ExploreParallel(s, unbounded, 2);
    EXPECT_TRUE(par.complete) << name;
    EXPECT_EQ(par.outcomes, seq.outcomes) << name;
    EXPECT_EQ(par.failure.has_value(), seq.failure.has_value()) << name;
    if (par.failure && seq.failure) {
      EXPECT_EQ(par.failure->verdict, seq.failure->verdict) << name;
    }
    EXPECT_GT(par.states, 0u) << name;
  }
  EXPECT_GE(compared, 20u);
}

// Iterative bounding level by level on several workers.
TEST(Parallel, IterativeBoundingFindsTheSequentialFailure) {
  const Scenario s = Builtin("buggy/store_before_commit");
  ExploreOptions o = Options(StrategyKind::kDfs, 2, true);
  o.iterative = true;
  const ExploreResult seq = Explore(s, o);
  const ExploreResult par = ExploreParallel(s, o, 2);
  ASSERT_TRUE(seq.failure);
  EXPECT_EQ(par.bound_level, seq.bound_level);
  EXPECT_EQ(FailureText(s, par), FailureText(s, seq));
}

// ---------------------------------------------------------------------------
// Limits across workers.

TEST(Parallel, MaxExecutionsIsExactAcrossWorkers) {
  const Scenario s = Builtin("percpu_list");
  for (StrategyKind k : {StrategyKind::kDfs, StrategyKind::kStateful}) {
    const ExploreResult r = ExploreParallel(s, Options(k, 2, true, 777), 4);
    EXPECT_EQ(r.executions, 777u) << StrategyName(k);
    EXPECT_EQ(r.stop_reason, "max-executions") << StrategyName(k);
    EXPECT_FALSE(r.complete);
  }
}

TEST(Parallel, InterruptTimeAndMemoryLimitsStopEveryWorker) {
  const Scenario s = Builtin("percpu_list");
  std::atomic<bool> interrupted{true};
  ExploreOptions o = Options(StrategyKind::kDfs, 3, true);
  o.interrupt = &interrupted;
  ExploreResult r = ExploreParallel(s, o, 3);
  EXPECT_EQ(r.stop_reason, "interrupted");
  EXPECT_FALSE(r.complete);

  o = Options(StrategyKind::kDfs, 3, true);
  o.time_limit_s = 1e-9;
  r = ExploreParallel(s, o, 3);
  EXPECT_EQ(r.stop_reason, "time-limit");

  o = Options(StrategyKind::kStateful, 3, true);
  o.max_memory_bytes = 1;
  r = ExploreParallel(s, o, 3);
  EXPECT_EQ(r.stop_reason, "memory-limit");
  EXPECT_GT(r.peak_memory_bytes, 1u);
}

// DPOR, random and PCT run the sequential explorer, and say so.
TEST(Parallel, StrategiesThatCannotBeSplitRunSequentially) {
  const Scenario s = Builtin("percpu_counter");
  for (StrategyKind k : {StrategyKind::kDpor, StrategyKind::kRandom, StrategyKind::kPct}) {
    const ExploreOptions o = Options(k, 1, false, 300);
    ASSERT_TRUE(WhyNotParallel(s, o).has_value()) << StrategyName(k);
    const ExploreResult seq = Explore(s, o);
    const ExploreResult par = ExploreParallel(s, o, 4);
    EXPECT_EQ(par.executions, seq.executions) << StrategyName(k);
    EXPECT_EQ(par.outcomes, seq.outcomes) << StrategyName(k);
  }
  EXPECT_FALSE(WhyNotParallel(s, Options(StrategyKind::kDfs, 1, false)).has_value());
  EXPECT_EQ(ResolveJobs(3), 3u);
  EXPECT_GE(ResolveJobs(0), 1u);
}

}  // namespace
}  // namespace rseqmc
