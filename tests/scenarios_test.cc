// Tests of the built-in scenarios (scenarios/*.rsq) and the planted bugs
// (scenarios/buggy/*.rsq):
//   * every correct built-in passes with no injected event and under 2000
//     seeds of an aggressive random scheduler (preemptions, migrations,
//     signals, membarrier IPIs), which must actually abort sections;
//   * every planted bug passes with no injected event (the bug needs one) and
//     the first failing seed of a bounded random search fails with exactly the
//     verdict the file declares; that seed and the final values it leads to are
//     golden (the simulator and the random scheduler are deterministic);
//   * every planted bug fails under a minimal hand-written schedule (one
//     injected event; zero events pass), with golden final values; the event
//     count is the one quoted in the .rsq file's header.
// A changed golden seed or value means the scenario, the kernel model or the
// random scheduler changed behaviour: check which before updating it.
#include <cstdint>
#include <functional>
#include <map>
#include <ostream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "scenarios/builtin.h"
#include "scenarios/parser.h"
#include "sim/schedule.h"
#include "sim/simulator.h"

namespace rseqmc {
namespace {

std::string PathOf(const std::string& name) { return std::string(RSEQMC_SOURCE_DIR) + "/scenarios/" + name + ".rsq"; }

Scenario Load(const std::string& name, const std::map<std::string, int64_t>& defines = {}) {
  return ParseScenarioFile(PathOf(name), defines);
}

// The aggressive options every random run here uses.
RandomOptions Aggressive() {
  RandomOptions o;
  o.p_switch_cpu = 0.25;
  o.p_preempt = 0.05;
  o.p_migrate = 0.05;
  o.p_signal = 0.02;
  o.p_ipi = 0.01;
  o.max_events = 8;
  return o;
}

ExecutionResult RunDefault(const Scenario& s) {
  Schedule none;
  ReplayScheduler replay(none);
  Simulator sim(s);
  return sim.Run(replay);
}

ExecutionResult Replay(const Scenario& s, const Schedule& schedule) {
  ReplayScheduler replay(schedule);
  Simulator sim(s);
  return sim.Run(replay);
}

// One expected final value: symbol[cpu][index] (cpu ignored for plain symbols).
struct Value {
  const char* symbol;
  uint32_t cpu;
  uint32_t index;
  int64_t value;
};

void ExpectValues(const Scenario& s, const ExecutionResult& r, const std::vector<Value>& values) {
  for (const Value& v : values) {
    EXPECT_EQ(r.SymbolValue(s, v.symbol, v.cpu, v.index), v.value)
        << v.symbol << "[" << v.cpu << "][" << v.index << "] in " << s.name;
  }
}

std::string Describe(const Scenario& s, const ExecutionResult& r) {
  return std::string(VerdictName(r.verdict)) + ": " + r.message + " (replay: " + EncodeSchedule(s, r.schedule) + ")";
}

// Runs seeds [0, n) of the random scheduler with `o`: every execution must
// pass; `each` (if any) sees every result.
void ExpectSeedsPass(const Scenario& s, uint64_t n, const RandomOptions& o,
                     const std::function<void(const ExecutionResult&)>& each = {}) {
  Simulator sim(s);
  ExecutionResult r;
  for (uint64_t seed = 0; seed < n; ++seed) {
    RandomScheduler sched(seed, o);
    ASSERT_EQ(sim.RunInto(sched, r), Verdict::kPass) << s.name << " seed " << seed << ": " << Describe(s, r);
    if (each) each(r);
  }
}

// ---------------------------------------------------------------------------
// Correct built-ins.

const char* const kCorrect[] = {"percpu_counter", "percpu_spinlock", "percpu_list", "percpu_buffer"};

class CorrectScenarioTest : public ::testing::TestWithParam<const char*> {};

TEST_P(CorrectScenarioTest, DeclaresPass) {
  Scenario s = Load(GetParam());
  EXPECT_EQ(s.expected, Verdict::kPass);
  EXPECT_FALSE(s.description.empty());
}

TEST_P(CorrectScenarioTest, PassesWithNoInjectedEvent) {
  Scenario s = Load(GetParam());
  ExecutionResult r = RunDefault(s);
  EXPECT_EQ(r.verdict, Verdict::kPass) << Describe(s, r);
  EXPECT_EQ(r.schedule.NumEvents(), 0u);
  for (const ThreadOutcome& t : r.threads) {
    EXPECT_TRUE(t.exited);
    EXPECT_EQ(t.aborts, 0u);
  }
}

TEST_P(CorrectScenarioTest, Passes2000AggressiveRandomSeeds) {
  Scenario s = Load(GetParam());
  uint64_t aborts = 0, migrations = 0, signals = 0, preemptions = 0, ipis = 0;
  ExpectSeedsPass(s, 2000, Aggressive(), [&](const ExecutionResult& r) {
    for (const ThreadOutcome& t : r.threads) aborts += t.aborts;
    preemptions += r.events[static_cast<int>(DecisionKind::kPreempt)];
    migrations += r.events[static_cast<int>(DecisionKind::kMigrate)];
    signals += r.events[static_cast<int>(DecisionKind::kSignal)];
    ipis += r.events[static_cast<int>(DecisionKind::kIpi)];
  });
  // The runs must have exercised what they claim to survive.
  EXPECT_GT(aborts, 100u);
  EXPECT_GT(preemptions, 0u);
  EXPECT_GT(migrations, 0u);
  EXPECT_GT(signals, 0u);
  EXPECT_GT(ipis, 0u);
}

TEST_P(CorrectScenarioTest, PassesWithLargerParameters) {
  // The -D constants every built-in declares.
  ExpectSeedsPass(Load(GetParam(), {{"CPUS", 3}, {"THREADS", 4}, {"OPS", 3}}), 300, Aggressive());
}

INSTANTIATE_TEST_SUITE_P(Builtins, CorrectScenarioTest, ::testing::ValuesIn(kCorrect),
                         [](const auto& info) { return std::string(info.param); });

TEST(CorrectScenarioTest, ListAndBufferScaleWithPerThreadNodes) {
  for (const char* name : {"percpu_list", "percpu_buffer"}) {
    Scenario s = Load(name, {{"PER", 3}, {"THREADS", 3}});
    ExpectSeedsPass(s, 300, Aggressive(),
                    [&](const ExecutionResult& r) { EXPECT_EQ(r.SymbolValue(s, "recovered"), 9); });
  }
}

// ---------------------------------------------------------------------------
// Planted bugs.

struct BuggyCase {
  const char* name;
  Verdict verdict;
  // First seed in [0, kSearchSeeds) whose execution fails, and its final values.
  uint64_t first_failing_seed;
  std::vector<Value> at_seed;
  // A minimal failing schedule (its events are the fewest: none passes) and
  // the final values it leads to.
  std::vector<ScheduleEntry> minimal;
  std::vector<Value> at_minimal;
};

constexpr uint64_t kSearchSeeds = 20000;

ScheduleEntry At(uint64_t boundary, Decision d) { return {boundary, d}; }

std::vector<BuggyCase> BuggyCases() {
  return {
      // One preemption of w0 at `ld r7, [r3]`, after nr_ops[0] was stored and
      // before the commit: the retry adds 1 to nr_ops[0] again.
      {"buggy/store_before_commit",
       Verdict::kPropertyFailed,
       1,
       {{"nr_ops", 0, 0, 1}, {"nr_ops", 1, 0, 2}, {"nr_bytes", 0, 0, 64}, {"nr_bytes", 1, 0, 64}},
       {At(16, Decision::Preempt(0))},
       {{"nr_ops", 0, 0, 2}, {"nr_ops", 1, 0, 1}, {"nr_bytes", 0, 0, 64}, {"nr_bytes", 1, 0, 64}}},
      // Migrate w0 to CPU 1 at `rseq_arm` (it has read CPU 0), run it to just
      // after its load of counter[0], run w1 on CPU 0 to the end, finish w0.
      {"buggy/cpu_not_rechecked",
       Verdict::kPropertyFailed,
       0,
       {{"counter", 0, 0, 1}, {"counter", 1, 0, 0}},
       {At(6, Decision::Migrate(0, 1)), At(7, Decision::Step(1)), At(9, Decision::Step(0))},
       {{"counter", 0, 0, 1}, {"counter", 1, 0, 0}}},
      // Preempt w0 between the publish and the link of its second push (node
      // 1, above node 0): w1 runs and pushes nodes 2 and 3 above node 1, then
      // w0's retry publishes node 1 again above node 3, with next = node 3:
      // 1 -> 3 -> 2 -> 1 is a cycle and node 0 is lost.
      {"buggy/commit_not_last",
       Verdict::kPropertyFailed,
       3,
       {{"recovered", 0, 0, 7},
        {"duplicates", 0, 0, 4},
        {"seen", 0, 0, 1},
        {"seen", 0, 1, 4},
        {"seen", 0, 2, 1},
        {"seen", 0, 3, 1},
        {"head", 1, 0, 0}},
       {At(48, Decision::Preempt(0))},
       {{"recovered", 0, 0, 4},
        {"duplicates", 0, 0, 2},
        {"seen", 0, 0, 0},
        {"seen", 0, 1, 2},
        {"seen", 0, 2, 1},
        {"seen", 0, 3, 1},
        {"head", 1, 0, 0}}},
      // Any event after the first arm: here a preemption of w0 at `start`.
      {"buggy/no_signature",
       Verdict::kSigsegv,
       1,
       {{"counter", 0, 0, 0}, {"counter", 1, 0, 1}},
       {At(9, Decision::Preempt(0))},
       {{"counter", 0, 0, 0}, {"counter", 1, 0, 0}}},
      // Migrate w0 to CPU 1 at `ld r7, [r2]` (inside), let it abort, retry and
      // load counter[0], run w1 on CPU 0 to the end, finish w0.
      {"buggy/stale_cpu_retry",
       Verdict::kPropertyFailed,
       10,
       {{"counter", 0, 0, 1}, {"counter", 1, 0, 0}},
       {At(9, Decision::Migrate(0, 1)), At(10, Decision::Step(1)), At(16, Decision::Step(0))},
       {{"counter", 0, 0, 1}, {"counter", 1, 0, 0}}},
  };
}

void PrintTo(const BuggyCase& c, std::ostream* os) { *os << c.name; }

class BuggyScenarioTest : public ::testing::TestWithParam<BuggyCase> {};

TEST_P(BuggyScenarioTest, DeclaresItsFailure) {
  const BuggyCase& c = GetParam();
  Scenario s = Load(c.name);
  EXPECT_EQ(s.expected, c.verdict);
  EXPECT_NE(s.expected, Verdict::kPass);
}

TEST_P(BuggyScenarioTest, PassesWithNoInjectedEvent) {
  const BuggyCase& c = GetParam();
  Scenario s = Load(c.name);
  ExecutionResult r = RunDefault(s);
  EXPECT_EQ(r.verdict, Verdict::kPass) << Describe(s, r);
  EXPECT_EQ(r.schedule.NumEvents(), 0u);
}

TEST_P(BuggyScenarioTest, RandomSearchFindsTheDeclaredVerdictAtTheGoldenSeed) {
  const BuggyCase& c = GetParam();
  Scenario s = Load(c.name);
  Simulator sim(s);
  ExecutionResult r;
  uint64_t seed = 0;
  for (; seed < kSearchSeeds; ++seed) {
    RandomScheduler sched(seed, Aggressive());
    if (sim.RunInto(sched, r) != Verdict::kPass) break;
  }
  ASSERT_LT(seed, kSearchSeeds) << "no failure in " << kSearchSeeds << " seeds";
  EXPECT_EQ(r.verdict, s.expected) << Describe(s, r);
  EXPECT_EQ(seed, c.first_failing_seed);
  ExpectValues(s, r, c.at_seed);
  // The recorded schedule replays to the same execution.
  ExecutionResult again = Replay(s, r.schedule);
  EXPECT_EQ(again.verdict, r.verdict);
  EXPECT_EQ(again.memory, r.memory);
  EXPECT_EQ(again.TraceHash(), r.TraceHash());
}

TEST_P(BuggyScenarioTest, MinimalHandWrittenScheduleFails) {
  const BuggyCase& c = GetParam();
  Scenario s = Load(c.name);
  Schedule schedule;
  schedule.entries = c.minimal;
  ASSERT_EQ(schedule.NumEvents(), 1u);  // the count quoted in the .rsq header
  ExecutionResult r = Replay(s, schedule);
  EXPECT_EQ(r.verdict, s.expected) << Describe(s, r);
  EXPECT_EQ(r.schedule, schedule);  // every entry was taken as written
  ExpectValues(s, r, c.at_minimal);
}

TEST_P(BuggyScenarioTest, InterleavingsWithoutEventsPass) {
  // The hand-written schedule's one event is the fewest: a sample of 2000
  // interleavings of the CPUs with no injected event all pass (the exhaustive
  // version is the explorer's: it must reach bound level 1 before failing,
  // tests/explorer_test.cc).
  const BuggyCase& c = GetParam();
  Scenario s = Load(c.name);
  RandomOptions o;
  o.p_switch_cpu = 0.3;
  o.p_preempt = o.p_migrate = o.p_signal = o.p_ipi = 0;
  ExpectSeedsPass(s, 2000, o, [](const ExecutionResult& r) { EXPECT_EQ(r.schedule.NumEvents(), 0u); });
}

INSTANTIATE_TEST_SUITE_P(Builtins, BuggyScenarioTest, ::testing::ValuesIn(BuggyCases()), [](const auto& info) {
  std::string n = info.param.name;
  return n.substr(n.find('/') + 1);
});

TEST(BuggyScenarioTest, StoreBeforeCommitCountsTheRetriedOpTwice) {
  // The abort is visible: w0 took exactly one, and the commit happened once.
  Scenario s = Load("buggy/store_before_commit");
  Schedule schedule;
  schedule.entries = {At(16, Decision::Preempt(0))};
  ExecutionResult r = Replay(s, schedule);
  ASSERT_EQ(r.threads.size(), 2u);
  EXPECT_EQ(r.threads[0].aborts, 1u);
  EXPECT_EQ(r.threads[1].aborts, 0u);
  ASSERT_EQ(r.properties.size(), 2u);
  EXPECT_FALSE(r.properties[0].holds);  // sum(nr_ops) == THREADS * OPS
  EXPECT_TRUE(r.properties[1].holds);   // sum(nr_bytes) == THREADS * OPS * SIZE
}

TEST(BuggyScenarioTest, NoSignatureKillsEvenOutsideTheSection) {
  // Legacy kernels validate rseq_cs on every evaluation: a preemption after
  // w0's section completed (rseq_cs still set, lazy clear) is SIGSEGV too.
  Scenario s = Load("buggy/no_signature");
  Schedule schedule;
  schedule.entries = {At(17, Decision::Preempt(0))};  // w0 back in worker, after `bne r0, 0, retry`
  ExecutionResult r = Replay(s, schedule);
  EXPECT_EQ(r.verdict, Verdict::kSigsegv) << Describe(s, r);
  EXPECT_NE(r.message.find("rseq: bad signature (the word before abort_ip is an instruction, not a signature"), std::string::npos) << r.message;
  EXPECT_EQ(r.SymbolValue(s, "counter", 0), 1);
  // Before the first arm nothing is validated: the same event there is harmless.
  schedule.entries = {At(3, Decision::Preempt(0))};
  EXPECT_EQ(Replay(s, schedule).verdict, Verdict::kPass);
}

TEST(BuggyScenarioTest, CommitNotLastFailsAlreadyOnTheFirstPush) {
  // Preempted between the publish and the link of its first push (node 0, on
  // an empty list), w0 lets w1 push nodes 2 and 3 above node 0; its retry
  // publishes node 0 again above node 3: 0 -> 3 -> 2 -> 0 is a cycle. Every
  // node is found once before the drain meets a fifth one.
  Scenario s = Load("buggy/commit_not_last");
  Schedule schedule;
  schedule.entries = {At(22, Decision::Preempt(0))};
  ExecutionResult r = Replay(s, schedule);
  EXPECT_EQ(r.verdict, Verdict::kPropertyFailed) << Describe(s, r);
  ExpectValues(s, r,
               {{"recovered", 0, 0, 4},
                {"duplicates", 0, 0, 1},
                {"seen", 0, 0, 1},
                {"seen", 0, 1, 1},
                {"seen", 0, 2, 1},
                {"seen", 0, 3, 1}});
}

// ---------------------------------------------------------------------------
// The files are the embedded built-ins.

TEST(BuiltinScenarioFilesTest, EveryFileIsEmbeddedAndParsesTheSame) {
  std::vector<std::string> names(std::begin(kCorrect), std::end(kCorrect));
  for (const BuggyCase& c : BuggyCases()) names.push_back(c.name);
  for (const std::string& name : names) {
    const BuiltinScenario* b = FindBuiltinScenario(name);
    ASSERT_NE(b, nullptr) << name;
    EXPECT_EQ(ParseScenario(b->text, b->path), Load(name)) << name;
  }
}

}  // namespace
}  // namespace rseqmc
