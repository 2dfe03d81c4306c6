// Initial placements inside one exploration (issue 14, sim/placement.h):
// `cpu any` and `--placements all` make the exhaustive strategies branch over
// every placement at the root. Checked against one exploration per placement
// (a scenario copy whose threads start there): dfs and dpor execution counts
// are the sum over the placements, outcome sets the union, verdicts equal; a
// stateful search shares its visited set (never more states than the sum). A
// counterexample found only under a non-default placement replays from its
// token (version 2), also through the CLI; resuming a snapshot taken between
// or inside placements equals one uninterrupted run; bad placements are exit 2
// with their place.
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <regex>
#include <set>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "model/explorer.h"
#include "model/pct.h"
#include "scenarios/builtin.h"
#include "scenarios/parser.h"
#include "scenarios/printer.h"
#include "sim/diag.h"
#include "sim/placement.h"
#include "sim/schedule.h"
#include "sim/simulator.h"
#include "tests/cli_runner.h"

namespace rseqmc {
namespace {

using testing::Describe;
using testing::Fixture;
using testing::RunCli;

Scenario FixtureScenario(const std::string& name) { return ParseScenarioFile(Fixture(name)); }

Scenario Builtin(const std::string& name) {
  const BuiltinScenario* b = FindBuiltinScenario(name);
  if (b == nullptr) throw std::runtime_error("no built-in scenario " + name);
  return ParseScenario(b->text, b->path);
}

ExploreOptions Options(StrategyKind k, uint32_t events) {
  ExploreOptions o;
  o.strategy = k;
  o.bounds.max_events = events;
  o.stop_at_first_failure = false;
  return o;
}

TEST(Placement, CpuAnyAllowsEveryCpuOfTheAffinity) {
  const Scenario s = FixtureScenario("placement_any.rsq");
  ASSERT_EQ(s.threads.size(), 3u);
  EXPECT_TRUE(s.threads[0].any_cpu);
  EXPECT_TRUE(s.threads[1].any_cpu);
  EXPECT_FALSE(s.threads[2].any_cpu);
  // The default placement starts a `cpu any` thread on its lowest allowed CPU.
  EXPECT_EQ(s.threads[0].cpu, 0u);
  EXPECT_EQ(s.threads[1].cpu, 1u);
  const PlacementSpace space(s);
  ASSERT_EQ(space.size(), 6u);  // w0: 0, 1, 2; w1: 1, 2; w2: 2
  std::set<Placement> seen;
  Placement p;
  for (uint64_t i = 0; i < space.size(); ++i) {
    space.At(i, p);
    EXPECT_FALSE(ValidatePlacement(s, p).has_value()) << i;
    EXPECT_EQ(p[2], 2);
    seen.insert(p);
  }
  EXPECT_EQ(seen.size(), 6u);
  space.At(0, p);
  EXPECT_EQ(p, (Placement{0, 1, 2}));
  space.At(1, p);
  EXPECT_EQ(p, (Placement{1, 1, 2}));  // thread 0 varies fastest
  EXPECT_EQ(ValidatePlacement(s, Placement{0, 0, 2}).value(),
            "thread 'w1' is placed on CPU 0, which its affinity does not allow");
  EXPECT_EQ(ValidatePlacement(s, Placement{0, 1, 3}).value(),
            "thread 'w2' is placed on CPU 3 but the scenario has 3 CPU(s)");
  EXPECT_EQ(DescribePlacement(s, Placement{2, 1, 2}), "w0 on CPU 2, w1 on CPU 1, w2 on CPU 2");
  // The printer writes `cpu any` back.
  const Scenario again = ParseScenario(PrintScenario(s), "printed.rsq");
  EXPECT_EQ(again.threads, s.threads);
}

TEST(Placement, AllPlacementsAreTheOnesOfEveryThread) {
  Scenario s = Builtin("percpu_counter");
  EXPECT_EQ(PlacementSpace(s).size(), 1u);
  AllowEveryPlacement(s);
  EXPECT_EQ(PlacementSpace(s).size(), 4u);
  Placement p;
  PlacementSpace(s).At(0, p);
  EXPECT_EQ(p, (Placement{0, 1}));  // `cpu (i % CPUS)`: the default stays first
}

// One exploration over every placement against one per placement.
void ExpectUnionOfPerPlacementRuns(const Scenario& s, StrategyKind k, uint32_t events) {
  SCOPED_TRACE(s.name + " " + StrategyName(k) + " events<=" + std::to_string(events));
  const ExploreResult all = Explore(s, Options(k, events));
  const PlacementSpace space(s);
  ASSERT_GT(space.size(), 1u);
  uint64_t executions = 0, states = 0;
  std::set<Outcome> outcomes;
  bool failed = false;
  Placement p;
  for (uint64_t i = 0; i < space.size(); ++i) {
    space.At(i, p);
    const ExploreResult one = Explore(WithPlacement(s, p), Options(k, events));
    ASSERT_TRUE(one.complete);
    executions += one.executions;
    states += one.states;
    outcomes.insert(one.outcomes.begin(), one.outcomes.end());
    failed |= one.failure.has_value();
  }
  ASSERT_TRUE(all.complete);
  EXPECT_EQ(all.outcomes, outcomes);
  EXPECT_EQ(all.failure.has_value(), failed);
  if (k == StrategyKind::kStateful) {
    // Shared visited set: a state reached from two placements counts once.
    EXPECT_LE(all.states, states);
    EXPECT_GT(all.states, 0u);
  } else {
    EXPECT_EQ(all.executions, executions);
  }
}

TEST(Placement, ExplorationIsTheUnionOfPerPlacementRuns) {
  Scenario counter = Builtin("percpu_counter");
  AllowEveryPlacement(counter);
  Scenario owner = FixtureScenario("placement_owner.rsq");
  AllowEveryPlacement(owner);
  for (StrategyKind k : {StrategyKind::kDfs, StrategyKind::kDpor, StrategyKind::kStateful}) {
    ExpectUnionOfPerPlacementRuns(FixtureScenario("placement_any.rsq"), k, 1);
    ExpectUnionOfPerPlacementRuns(owner, k, 1);
    if (k != StrategyKind::kDfs) ExpectUnionOfPerPlacementRuns(counter, k, 1);  // dfs: 2.4 M executions
  }
}

TEST(Placement, GoldenCountsOverEveryPlacement) {
  // Measured; each is the sum (dfs, dpor) over the per-placement runs that
  // ExplorationIsTheUnionOfPerPlacementRuns compares with.
  Scenario counter = Builtin("percpu_counter");
  AllowEveryPlacement(counter);
  const ExploreResult dpor = Explore(counter, Options(StrategyKind::kDpor, 1));
  EXPECT_EQ(dpor.executions, 300u);  // 69 + 81 + 81 + 69
  EXPECT_EQ(dpor.distinct_outcomes, 6u);
  const ExploreResult stateful = Explore(counter, Options(StrategyKind::kStateful, 1));
  EXPECT_EQ(stateful.executions, 1090u);
  EXPECT_EQ(stateful.states, 7807u);
  const ExploreResult dfs = Explore(FixtureScenario("placement_any.rsq"), Options(StrategyKind::kDfs, 1));
  EXPECT_EQ(dfs.executions, 7956u);
}

TEST(Placement, ACounterexampleReplaysWithItsPlacement) {
  Scenario s = FixtureScenario("placement_owner.rsq");
  // Started as written, no schedule without events fails.
  EXPECT_FALSE(Explore(s, Options(StrategyKind::kDfs, 0)).failure.has_value());
  AllowEveryPlacement(s);
  ExploreOptions o = Options(StrategyKind::kDfs, 0);
  o.stop_at_first_failure = true;
  const ExploreResult r = Explore(s, o);
  ASSERT_TRUE(r.failure.has_value());
  EXPECT_EQ(r.failure->verdict, Verdict::kAssertFailed);
  const Placement& p = r.failure->schedule.placement;
  ASSERT_EQ(p.size(), 2u);
  EXPECT_EQ(p[0], p[1]) << "the bug needs both threads on one CPU";
  const std::string token = EncodeSchedule(s, r.failure->schedule);
  EXPECT_EQ(token.rfind("rsq2.", 0), 0u) << token;
  // The token replays on the scenario as written too (`cpu any` is no part
  // of the fingerprint: the token says where each thread starts).
  const Scenario plain = FixtureScenario("placement_owner.rsq");
  for (const Scenario* target_ptr : {static_cast<const Scenario*>(&s), &plain}) {
    const Scenario& target = *target_ptr;
    const Schedule decoded = DecodeSchedule(target, token);
    EXPECT_EQ(decoded, r.failure->schedule);
    EXPECT_EQ(EncodeSchedule(target, decoded), token);
    Simulator sim(target);
    ReplayScheduler replay(decoded);
    const ExecutionResult again = sim.Run(replay);
    EXPECT_EQ(again.verdict, Verdict::kAssertFailed);
    EXPECT_EQ(again.TraceHash(), r.failure->trace_hash);
    EXPECT_EQ(again.schedule.placement, p);
  }
  // A schedule without a placement is still a version 1 token.
  Schedule none = r.failure->schedule;
  none.placement.clear();
  EXPECT_EQ(EncodeSchedule(s, none).rfind("rsq1.", 0), 0u);
}

TEST(Placement, SamplingStrategiesDrawPlacements) {
  Scenario s = FixtureScenario("placement_owner.rsq");
  AllowEveryPlacement(s);
  for (StrategyKind k : {StrategyKind::kRandom, StrategyKind::kPct}) {
    ExploreOptions o = Options(k, 0);
    o.stop_at_first_failure = true;
    o.max_executions = 200;  // half of the four placements fail: found within a few
    const ExploreResult r = Explore(s, o);
    ASSERT_TRUE(r.failure.has_value()) << StrategyName(k);
    EXPECT_EQ(r.failure->schedule.placement[0], r.failure->schedule.placement[1]);
    EXPECT_EQ(Explore(s, o).failure->execution, r.failure->execution) << "same seed, same run";
  }
}

TEST(Placement, ResumingASnapshotEqualsOneRun) {
  Scenario s = Builtin("percpu_counter");
  AllowEveryPlacement(s);
  for (StrategyKind k : {StrategyKind::kStateful, StrategyKind::kDpor}) {
    const ExploreOptions o = Options(k, 1);
    const ExploreResult full = Explore(s, o);
    ExploreResult part;
    std::string snapshot;
    int hops = 0;
    for (;;) {
      ExploreOptions h = o;
      h.max_executions = (hops + 1) * 60;  // hops inside and across the four placements
      std::string next;
      h.snapshot = [&next](const std::string& bytes) { next = bytes; };
      h.resume_from = hops == 0 ? nullptr : &snapshot;
      part = Explore(s, h);
      ++hops;
      if (part.stop_reason != "max-executions") break;
      ASSERT_FALSE(next.empty());
      snapshot = std::move(next);
      ASSERT_LT(hops, 100);
    }
    EXPECT_GE(hops, 4);
    EXPECT_EQ(part.executions, full.executions) << StrategyName(k);
    EXPECT_EQ(part.redundant, full.redundant);
    EXPECT_EQ(part.states, full.states);
    EXPECT_EQ(part.outcomes, full.outcomes);
    EXPECT_TRUE(part.complete);
  }
}

TEST(Placement, BadPlacementsAreInputErrorsWithTheirPlace) {
  const Scenario s = FixtureScenario("placement_any.rsq");
  Schedule bad;
  bad.placement = {0, 0, 2};  // w1's affinity is CPUs 1 and 2
  const std::string token = EncodeSchedule(s, bad);
  try {
    DecodeSchedule(s, token);
    FAIL() << "decoded " << token;
  } catch (const InputError& e) {
    EXPECT_EQ(e.file(), "<token>");
    EXPECT_GT(e.loc().column, 5u);
    EXPECT_NE(e.message().find("invalid initial placement: thread 'w1' is placed on CPU 0"), std::string::npos)
        << e.message();
  }
  // A replay scheduler handing the machine an invalid placement.
  Simulator sim(s);
  ReplayScheduler replay(bad);
  EXPECT_THROW(sim.Run(replay), InputError);
}

TEST(PlacementCli, CheckFindsTheBugOfAPlacementAndReplaysIt) {
  const std::string file = Fixture("placement_owner.rsq");
  const std::vector<std::string> check = {"check", file, "--strategy", "dfs", "--max-events", "0", "--placements",
                                          "all"};
  const testing::CliResult r = RunCli(check);
  ASSERT_EQ(r.code, 0) << Describe(check, r);  // the planted bug is found as expected
  EXPECT_NE(r.out.find("4 initial placements"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("initial placement: w0 on CPU 1, w1 on CPU 1"), std::string::npos) << r.out;
  std::smatch m;
  ASSERT_TRUE(std::regex_search(r.out, m, std::regex("schedule: (rsq2\\.[A-Za-z0-9_-]+)"))) << r.out;
  const std::vector<std::string> replay = {"replay", file, "--schedule", m[1].str()};
  const testing::CliResult again = RunCli(replay);
  EXPECT_EQ(again.code, 1) << Describe(replay, again);  // the replayed execution fails
  EXPECT_NE(again.out.find("the CPU's slot is already claimed"), std::string::npos) << again.out;
  EXPECT_NE(again.out.find("initial placement: w0 on CPU 1, w1 on CPU 1"), std::string::npos) << again.out;
  // Without --placements the bug is not reachable with no event.
  const std::vector<std::string> plain = {"check", file, "--strategy", "dfs", "--max-events", "0"};
  EXPECT_EQ(RunCli(plain).code, 1);
}

TEST(PlacementCli, BadPlacementSyntaxIsExit2WithItsPlace) {
  const std::vector<std::string> flag = {"check", Fixture("placement_any.rsq"), "--placements", "some"};
  const testing::CliResult f = RunCli(flag);
  EXPECT_EQ(f.code, 2) << Describe(flag, f);
  EXPECT_NE(f.err.find("--placements some: expected all or scenario"), std::string::npos) << f.err;

  char path[] = "/tmp/rseqmc_placement_XXXXXX.rsq";
  const int fd = mkstemps(path, 4);
  ASSERT_GE(fd, 0);
  close(fd);
  {
    std::ofstream out(path);
    out << "scenario bad_any\ncpus 2\nfunc f\n  ret\nend\nthread t entry f cpu anyy\n";
  }
  const std::vector<std::string> args = {"check", path};
  const testing::CliResult r = RunCli(args);
  std::remove(path);
  EXPECT_EQ(r.code, 2) << Describe(args, r);
  EXPECT_NE(r.err.find(std::string(path) + ":6:"), std::string::npos) << r.err;

  // A token placing a thread outside its affinity.
  Schedule bad;
  bad.placement = {0, 0, 2};
  const std::string token = EncodeSchedule(FixtureScenario("placement_any.rsq"), bad);
  const std::vector<std::string> replay = {"replay", Fixture("placement_any.rsq"), "--schedule", token};
  const testing::CliResult t = RunCli(replay);
  EXPECT_EQ(t.code, 2) << Describe(replay, t);
  EXPECT_NE(t.err.find("<token>:1:"), std::string::npos) << t.err;
  EXPECT_NE(t.err.find("affinity does not allow"), std::string::npos) << t.err;
}

}  // namespace
}  // namespace rseqmc
