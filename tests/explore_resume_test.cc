// Resumable exploration (ExploreOptions::snapshot / resume_from): an
// exploration stopped every N executions and resumed from its snapshot, hop
// after hop, ends with exactly the result of one uninterrupted run (execution
// count, outcome set, failure and its schedule) for every strategy; a
// snapshot made for other options is refused; corrupt snapshots are input
// errors, never crashes.
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "model/explorer.h"
#include "scenarios/builtin.h"
#include "scenarios/parser.h"
#include "sim/diag.h"

namespace rseqmc {
namespace {

Scenario Load(const std::string& name) {
  const BuiltinScenario* b = FindBuiltinScenario(name);
  EXPECT_NE(b, nullptr) << name;
  return ParseScenario(b->text, b->path);
}

struct Case {
  std::string scenario;
  StrategyKind strategy;
  uint32_t max_events;
  bool iterative;
  uint64_t hop;  // executions per hop
  uint64_t max_executions = 0;
};

std::string Name(const Case& c) {
  std::string n = c.scenario.substr(c.scenario.find('/') + 1) + "_" + StrategyName(c.strategy) + "_" +
                  std::to_string(c.max_events) + (c.iterative ? "_iterative" : "");
  return n;
}

class ResumeTest : public ::testing::TestWithParam<Case> {};

TEST_P(ResumeTest, HopsEqualOneUninterruptedRun) {
  const Case& c = GetParam();
  const Scenario s = Load(c.scenario);
  ExploreOptions o;
  o.strategy = c.strategy;
  o.bounds.max_events = c.max_events;
  o.iterative = c.iterative;
  o.max_executions = c.max_executions;
  const ExploreResult full = Explore(s, o);
  ASSERT_GT(full.executions, c.hop) << "the case must take more than one hop";

  std::string snapshot;
  ExploreResult part;
  int hops = 0;
  for (;;) {
    ExploreOptions h = o;
    h.max_executions = (hops + 1) * c.hop;
    if (o.max_executions != 0 && h.max_executions >= o.max_executions) h.max_executions = o.max_executions;
    std::string next;
    h.snapshot = [&next](const std::string& bytes) { next = bytes; };
    h.resume_from = hops == 0 ? nullptr : &snapshot;
    part = Explore(s, h);
    ++hops;
    if (part.stop_reason != "max-executions" || part.executions == o.max_executions) break;
    ASSERT_FALSE(next.empty()) << "a stop for max-executions hands over a snapshot";
    EXPECT_EQ(part.executions, h.max_executions);
    snapshot = std::move(next);
    ASSERT_LT(hops, 1000);
  }
  EXPECT_GE(hops, 2);
  EXPECT_EQ(part.executions, full.executions);
  EXPECT_EQ(part.redundant, full.redundant);
  EXPECT_EQ(part.stop_reason, full.stop_reason);
  EXPECT_EQ(part.complete, full.complete);
  EXPECT_EQ(part.outcomes, full.outcomes);
  EXPECT_EQ(part.max_depth, full.max_depth);
  EXPECT_EQ(part.bound_level, full.bound_level);
  ASSERT_EQ(part.failure.has_value(), full.failure.has_value());
  if (full.failure) {
    EXPECT_EQ(part.failure->schedule, full.failure->schedule);
    EXPECT_EQ(part.failure->verdict, full.failure->verdict);
    EXPECT_EQ(part.failure->execution, full.failure->execution);
    EXPECT_EQ(part.failure->trace_hash, full.failure->trace_hash);
  }
  EXPECT_GT(part.resumed_executions, 0u);
}

INSTANTIATE_TEST_SUITE_P(
    Strategies, ResumeTest,
    ::testing::Values(Case{"percpu_counter", StrategyKind::kDpor, 1, false, 20},
                      Case{"percpu_spinlock", StrategyKind::kDpor, 1, true, 30},
                      Case{"percpu_counter", StrategyKind::kStateful, 1, false, 150},
                      Case{"buggy/cpu_not_rechecked", StrategyKind::kDfs, 1, false, 100},
                      Case{"buggy/cpu_not_rechecked", StrategyKind::kDpor, 1, false, 3},
                      Case{"buggy/stale_cpu_retry", StrategyKind::kStateful, 2, true, 20},
                      Case{"percpu_counter", StrategyKind::kRandom, 2, false, 300, 1000},
                      Case{"buggy/commit_not_last", StrategyKind::kPct, 3, false, 20}),
    [](const auto& info) { return Name(info.param); });

// The snapshot of a stopped dpor exploration of percpu_counter (81
// executions in all at one event).
std::string SomeSnapshot(const Scenario& s, ExploreOptions o) {
  std::string snapshot;
  o.max_executions = 40;
  o.snapshot = [&snapshot](const std::string& bytes) { snapshot = bytes; };
  const ExploreResult r = Explore(s, o);
  EXPECT_EQ(r.stop_reason, "max-executions");
  EXPECT_FALSE(snapshot.empty());
  return snapshot;
}

// A snapshot taken when the exploration reached max-executions, resumed with
// the same cap, runs nothing more (the CLI's SIGINT test hits this when the
// signal lands after the cap): same count, same reason, the states it had.
TEST(ResumeTest, ResumingAtTheCapRunsNoMoreExecutions) {
  const Scenario s = Load("percpu_counter");
  for (StrategyKind k : {StrategyKind::kDpor, StrategyKind::kStateful, StrategyKind::kRandom}) {
    SCOPED_TRACE(StrategyName(k));
    ExploreOptions o;
    o.strategy = k;
    o.bounds.max_events = 1;
    o.max_executions = 40;  // dpor: 81 executions in all
    std::string snapshot;
    o.snapshot = [&snapshot](const std::string& bytes) { snapshot = bytes; };
    const ExploreResult first = Explore(s, o);
    ASSERT_EQ(first.stop_reason, "max-executions");
    ASSERT_FALSE(snapshot.empty());
    const std::string saved = snapshot;
    o.resume_from = &saved;
    snapshot.clear();
    const ExploreResult again = Explore(s, o);
    EXPECT_EQ(again.executions, 40u);
    EXPECT_EQ(again.stop_reason, "max-executions");
    EXPECT_FALSE(again.complete);
    EXPECT_EQ(again.states, first.states);
    EXPECT_EQ(again.outcomes, first.outcomes);
  }
}

TEST(ResumeTest, SnapshotForOtherOptionsIsRefusedSayingWhatDiffers) {
  const Scenario s = Load("percpu_counter");
  ExploreOptions o;
  o.bounds.max_events = 1;
  const std::string snapshot = SomeSnapshot(s, o);
  ExploreOptions other = o;
  other.bounds.max_events = 2;
  other.resume_from = &snapshot;
  try {
    Explore(s, other);
    FAIL() << "resumed a snapshot made with other bounds";
  } catch (const InputError& e) {
    EXPECT_NE(e.message().find("events<=1"), std::string::npos) << e.message();
    EXPECT_NE(e.message().find("events<=2"), std::string::npos) << e.message();
  }
  ExploreOptions strategy = o;
  strategy.strategy = StrategyKind::kDfs;
  strategy.resume_from = &snapshot;
  EXPECT_THROW(Explore(s, strategy), InputError);
  const Scenario list = Load("buggy/no_signature");
  ExploreOptions same = o;
  same.resume_from = &snapshot;
  EXPECT_THROW(Explore(list, same), InputError);
}

TEST(ResumeTest, CorruptSnapshotsAreInputErrorsNeverCrashes) {
  const Scenario s = Load("percpu_counter");
  ExploreOptions o;
  o.bounds.max_events = 1;
  const std::string good = SomeSnapshot(s, o);
  // Every truncation.
  for (size_t n = 0; n < good.size(); ++n) {
    const std::string cut = good.substr(0, n);
    ExploreOptions r = o;
    r.resume_from = &cut;
    EXPECT_THROW(Explore(s, r), InputError) << "truncated to " << n << " of " << good.size();
  }
  // Byte flips: either an InputError or a run that completes (a flipped bit in
  // a footprint or a count may still be well-formed); never a crash or hang.
  uint64_t x = 12345;
  for (int i = 0; i < 300; ++i) {
    x = x * 6364136223846793005ull + 1442695040888963407ull;
    std::string bad = good;
    bad[(x >> 33) % bad.size()] ^= static_cast<char>(1u << ((x >> 20) % 8));
    ExploreOptions r = o;
    r.resume_from = &bad;
    r.max_executions = 500;
    try {
      Explore(s, r);
    } catch (const InputError&) {
    }
  }
  // Trailing garbage.
  const std::string longer = good + "x";
  ExploreOptions r = o;
  r.resume_from = &longer;
  EXPECT_THROW(Explore(s, r), InputError);
}

TEST(ResumeTest, NoSnapshotAfterAFailureOrACompleteRun) {
  const Scenario s = Load("buggy/no_signature");
  ExploreOptions o;
  int snapshots = 0;
  o.snapshot = [&snapshots](const std::string&) { ++snapshots; };
  const ExploreResult r = Explore(s, o);
  ASSERT_TRUE(r.failure.has_value());
  EXPECT_EQ(snapshots, 0);
  const Scenario counter = Load("percpu_counter");
  const ExploreResult done = Explore(counter, o);
  EXPECT_TRUE(done.complete);
  EXPECT_EQ(snapshots, 0);
}

}  // namespace
}  // namespace rseqmc
