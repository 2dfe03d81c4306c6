// Tests of the property-free oracles (model/oracles.h):
//   * the correct built-ins never trip commit serialisability or the abort
//     bound, on thousands of aggressive random schedules and under exhaustive
//     DPOR with one injected event;
//   * every planted bug is flagged by the oracle alone (its properties
//     cleared), with a golden message on its minimal schedule, and found by
//     DPOR; no_signature, whose failure is a SIGSEGV and not a wrong result,
//     is the documented exception;
//   * each check (stale read, CPU / per-CPU block, effect of an aborted attempt
//     or early exit, unprotected entry, abort loop) on a small scenario made
//     for it, with golden messages; mm_cid-indexed data and critical sections
//     in signal handlers raise no false alarm;
//   * the livelock cycle report.
// Golden messages name steps and source lines of the scenario texts: a change
// there means the scenario, the simulator or the oracle changed behaviour.
#include <gtest/gtest.h>

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "model/explorer.h"
#include "model/oracles.h"
#include "scenarios/builtin.h"
#include "scenarios/parser.h"
#include "sim/schedule.h"
#include "sim/simulator.h"

namespace rseqmc {
namespace {

Scenario Builtin(const std::string& name, const std::map<std::string, int64_t>& defines = {}) {
  const BuiltinScenario* b = FindBuiltinScenario(name);
  if (b == nullptr) throw std::runtime_error("no built-in " + name);
  return ParseScenario(b->text, b->path, defines);
}

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

RunOptions Recording(bool trace = false) {
  RunOptions o;
  o.record_accesses = true;
  o.record_trace = trace;
  return o;
}

ExecutionResult Replay(const Scenario& s, const std::vector<ScheduleEntry>& entries, RunOptions o = Recording()) {
  Schedule schedule;
  schedule.entries = entries;
  ReplayScheduler replay(schedule);
  Simulator sim(s, o);
  return sim.Run(replay);
}

ScheduleEntry At(uint64_t boundary, Decision d) { return {boundary, d}; }

// Runs `seeds` aggressive random executions; every one must pass and satisfy
// the default oracle. Returns the summed attempt counts.
AttemptCounts RandomRunsPassTheOracle(const Scenario& s, uint64_t seeds) {
  Simulator sim(s, Recording());
  ExecutionResult r;
  AttemptCounts total;
  for (uint64_t seed = 0; seed < seeds; ++seed) {
    RandomScheduler sched(seed, Aggressive());
    sim.RunInto(sched, r);
    EXPECT_EQ(r.verdict, Verdict::kPass) << s.name << " seed " << seed << ": " << r.message;
    const AttemptAnalysis a = AnalyseAttempts(s, r);
    EXPECT_EQ(a.violation, "") << s.name << " seed " << seed << " (" << EncodeSchedule(s, r.schedule) << ")";
    EXPECT_EQ(CheckAbortBound(s, r, Aggressive().max_events), "") << s.name << " seed " << seed;
    if (!a.violation.empty()) break;
    for (const AttemptCounts& c : a.threads) {
      total.attempts += c.attempts;
      total.commits += c.commits;
      total.kernel_aborts += c.kernel_aborts;
      total.self_aborts += c.self_aborts;
      total.early_exits += c.early_exits;
    }
  }
  return total;
}

// ---------------------------------------------------------------------------
// Correct built-ins.

const char* const kCorrect[] = {"percpu_counter", "percpu_spinlock", "percpu_list", "percpu_buffer"};

class CorrectBuiltinOracleTest : public ::testing::TestWithParam<const char*> {};

TEST_P(CorrectBuiltinOracleTest, ThousandsOfAggressiveRandomSchedulesPassTheOracle) {
  const Scenario s = Builtin(GetParam());
  const AttemptCounts c = RandomRunsPassTheOracle(s, 5000);
  // The runs exercised what the oracle judges: commits, kernel aborts and
  // failed cpu_id compares (migrations before start_ip).
  EXPECT_GT(c.commits, 5000u);
  EXPECT_GT(c.kernel_aborts, 500u);
  EXPECT_GT(c.self_aborts, 500u);
  EXPECT_EQ(c.attempts, c.commits + c.kernel_aborts + c.self_aborts + c.early_exits);
}

TEST_P(CorrectBuiltinOracleTest, ExhaustiveDporWithOneEventPassesTheOracle) {
  // PER=1 keeps the list and the buffer small (the others ignore it).
  const std::map<std::string, int64_t> defines =
      std::string(GetParam()) == "percpu_list" || std::string(GetParam()) == "percpu_buffer"
          ? std::map<std::string, int64_t>{{"PER", 1}}
          : std::map<std::string, int64_t>{};
  const Scenario s = Builtin(GetParam(), defines);
  ExploreOptions o;
  o.strategy = StrategyKind::kDpor;
  o.bounds.max_events = 1;
  o.collect_outcomes = false;
  InstallDefaultOracle(s, o);
  EXPECT_TRUE(o.run.record_accesses);
  const ExploreResult r = Explore(s, o);
  EXPECT_TRUE(r.complete) << r.stop_reason;
  EXPECT_FALSE(r.failure.has_value()) << r.failure->message << " (" << EncodeSchedule(s, r.failure->schedule) << ")";
  EXPECT_GT(r.executions, 50u);  // percpu_counter: 81
}

INSTANTIATE_TEST_SUITE_P(Builtins, CorrectBuiltinOracleTest, ::testing::ValuesIn(kCorrect),
                         [](const auto& info) { return std::string(info.param); });

TEST(CorrectBuiltinOracleTest, ScratchIsWhatLetsTheBufferPushStoreSpeculatively) {
  // percpu_buffer's push stores the node into the slot above the offset before
  // its commit; `scratch slots` declares that. Without the declaration an
  // aborted push is an effect outside scratch.
  Scenario s = Builtin("percpu_buffer");
  s.scratch.clear();
  Simulator sim(s, Recording());
  ExecutionResult r;
  std::string found;
  for (uint64_t seed = 0; seed < 3000 && found.empty(); ++seed) {
    RandomScheduler sched(seed, Aggressive());
    sim.RunInto(sched, r);
    found = CheckCommitSerialisability(s, r);
  }
  EXPECT_NE(found.find("but left an effect outside the declared scratch: it wrote slots["), std::string::npos)
      << found;
  EXPECT_NE(found.find("the scenario declares no scratch"), std::string::npos) << found;
}

TEST(CorrectBuiltinOracleTest, CountsMatchTheKernelsAbortCount) {
  const Scenario s = Builtin("percpu_spinlock");
  Simulator sim(s, Recording());
  ExecutionResult r;
  for (uint64_t seed = 0; seed < 300; ++seed) {
    RandomScheduler sched(seed, Aggressive());
    sim.RunInto(sched, r);
    const AttemptAnalysis a = AnalyseAttempts(s, r);
    ASSERT_EQ(a.threads.size(), r.threads.size());
    for (size_t t = 0; t < r.threads.size(); ++t) {
      EXPECT_EQ(a.threads[t].kernel_aborts, r.threads[t].aborts) << "seed " << seed << " thread " << t;
      EXPECT_GE(a.threads[t].commits, 1u);  // OPS = 1: one lock acquisition each
    }
  }
}

TEST(OracleTest, NeedsRecordedAccesses) {
  const Scenario s = Builtin("percpu_counter");
  ExecutionResult r = Replay(s, {}, RunOptions{});
  EXPECT_FALSE(r.accesses_recorded);
  EXPECT_THROW(CheckCommitSerialisability(s, r), std::invalid_argument);
  r = Replay(s, {});
  EXPECT_TRUE(r.accesses_recorded);
  EXPECT_FALSE(r.accesses.empty());
  EXPECT_EQ(DefaultOracle(s, r, 0), "");
}

// ---------------------------------------------------------------------------
// Planted bugs, judged by the oracle alone.

struct PlantedCase {
  const char* name;
  std::vector<ScheduleEntry> minimal;  // scenarios_test.cc's minimal failing schedule
  const char* message;                 // the oracle's message on it
  // Where the bug leaves the user's property intact (no update lost) but the
  // oracle still sees it: a schedule and the oracle's message (none if {}).
  std::vector<ScheduleEntry> property_holds = {};
  const char* property_holds_message = "";
};

std::vector<PlantedCase> PlantedCases() {
  return {
      {"buggy/store_before_commit",
       {At(16, Decision::Preempt(0))},
       "commit serialisability: w0's attempt 1 of load_add_store_load_add_store was aborted by the kernel at step "
       "16 but left an effect outside the declared scratch: it wrote nr_ops[0] = 1 at step 16 by `st [r2], r6` "
       "(line 57) (an abort undoes no store: only the commit may publish; the scenario declares no scratch)"},
      {"buggy/cpu_not_rechecked",
       {At(6, Decision::Migrate(0, 1)), At(7, Decision::Step(1)), At(9, Decision::Step(0))},
       "commit serialisability: w0's attempt 1 of load_add_store_nocheck, committed at step 25 on CPU 1 by "
       "`st [r2], r7` (line 61): committed to counter[0] (CPU 0's block) while running on CPU 1; read counter[0] = "
       "0 at step 8 by `ld r7, [r2]` (line 59), but w1 wrote counter[0] = 1 at step 18 by `st [r2], r7` (line 61) "
       "before the commit: the operation is not atomic",
       // Only the migration between the cpu_id_start read and start_ip: w0
       // increments CPU 0's counter from CPU 1 while nobody else touches it.
       {At(6, Decision::Migrate(0, 1))},
       "commit serialisability: w0's attempt 1 of load_add_store_nocheck, committed at step 25 on CPU 1 by "
       "`st [r2], r7` (line 61): committed to counter[0] (CPU 0's block) while running on CPU 1"},
      {"buggy/commit_not_last",
       {At(48, Decision::Preempt(0))},
       // Preempted at the link store, w0 waits in CPU 0's queue while w1 runs
       // to its exit; the abort happens when w0 is switched back in.
       "commit serialisability: w0's attempt 2 of load_cbne_store_link was aborted by the kernel at step 112 but "
       "left an effect outside the declared scratch: it wrote head[0] = 0x10000010 (&nodes[2]) at step 48 by "
       "`st [r2], r4` (line 67) (an abort undoes no store: only the commit may publish; the scenario declares no "
       "scratch)"},
      {"buggy/stale_cpu_retry",
       {At(9, Decision::Migrate(0, 1)), At(10, Decision::Step(1)), At(16, Decision::Step(0))},
       "commit serialisability: w0's attempt 2 of load_add_store_stale, committed at step 34 on CPU 1 by "
       "`st [r2], r7` (line 67): committed to counter[0] (CPU 0's block) while running on CPU 1; read counter[0] = "
       "0 at step 15 by `ld r7, [r2]` (line 65), but w1 wrote counter[0] = 1 at step 27 by `st [r2], r7` (line 67) "
       "before the commit: the operation is not atomic",
       {At(9, Decision::Migrate(0, 1))},
       "commit serialisability: w0's attempt 2 of load_add_store_stale, committed at step 34 on CPU 1 by "
       "`st [r2], r7` (line 67): committed to counter[0] (CPU 0's block) while running on CPU 1"},
  };
}

void PrintTo(const PlantedCase& c, std::ostream* os) { *os << c.name; }

class PlantedBugOracleTest : public ::testing::TestWithParam<PlantedCase> {};

TEST_P(PlantedBugOracleTest, MinimalScheduleFailsTheOracleWithoutProperties) {
  const PlantedCase& c = GetParam();
  Scenario s = Builtin(c.name);
  s.properties.clear();
  const ExecutionResult r = Replay(s, c.minimal);
  ASSERT_EQ(r.verdict, Verdict::kPass) << r.message;  // nothing else fails it
  EXPECT_EQ(CheckCommitSerialisability(s, r), c.message);
  EXPECT_EQ(DefaultOracle(s, r, 1), c.message);
  // With no event the same scenario is fine.
  EXPECT_EQ(DefaultOracle(s, Replay(s, {}), 0), "");
}

TEST_P(PlantedBugOracleTest, FlaggedEvenWhereTheUserPropertyHolds) {
  const PlantedCase& c = GetParam();
  if (c.property_holds.empty()) GTEST_SKIP() << "every failing schedule of " << c.name << " breaks its property";
  const Scenario s = Builtin(c.name);
  const ExecutionResult r = Replay(s, c.property_holds);
  ASSERT_EQ(r.verdict, Verdict::kPass) << r.message;  // properties kept: they hold
  EXPECT_EQ(CheckCommitSerialisability(s, r), c.property_holds_message);
}

TEST_P(PlantedBugOracleTest, DporFindsItWithTheOracleAloneAtOneEvent) {
  const PlantedCase& c = GetParam();
  Scenario s = Builtin(c.name, std::string(c.name) == "buggy/commit_not_last"
                                   ? std::map<std::string, int64_t>{{"PER", 1}}
                                   : std::map<std::string, int64_t>{});
  s.properties.clear();
  ExploreOptions o;
  o.strategy = StrategyKind::kDpor;
  o.bounds.max_events = 1;
  o.iterative = true;
  InstallDefaultOracle(s, o);
  const ExploreResult r = Explore(s, o);
  ASSERT_TRUE(r.failure.has_value()) << c.name;
  EXPECT_EQ(r.failure->verdict, Verdict::kAssertFailed);  // the explorer's verdict for an oracle failure
  EXPECT_EQ(r.failure->message.rfind("commit serialisability: ", 0), 0u) << r.failure->message;
  EXPECT_EQ(r.failure->schedule.NumEvents(), 1u);
  EXPECT_EQ(r.bound_level, 1u);
}

INSTANTIATE_TEST_SUITE_P(Builtins, PlantedBugOracleTest, ::testing::ValuesIn(PlantedCases()), [](const auto& info) {
  std::string n = info.param.name;
  return n.substr(n.find('/') + 1);
});

TEST(PlantedBugOracleTest, NoSignatureIsNotASerialisabilityViolation) {
  // no_signature's failure is the kernel killing the process (SIGSEGV on the
  // first evaluation of the bad descriptor), not a wrong result: every
  // execution that survives has had no event after arming, hence no abort,
  // and is serialisable. It is semantically impossible for this oracle to
  // flag it. The weaker assertions: without its property the scenario still
  // fails (SIGSEGV, found by DPOR at one event), the oracle is clean on every
  // passing execution, and the static check flags the missing signature once
  // it is asked to look at `unchecked` descriptors (model/static_checks.h).
  Scenario s = Builtin("buggy/no_signature");
  s.properties.clear();
  const ExecutionResult killed = Replay(s, {At(9, Decision::Preempt(0))});
  EXPECT_EQ(killed.verdict, Verdict::kSigsegv);
  ExploreOptions o;
  o.strategy = StrategyKind::kDpor;
  o.bounds.max_events = 1;
  o.stop_at_first_failure = false;
  o.collect_outcomes = false;
  uint64_t judged = 0;
  o.oracle = [&](const ExecutionResult&) -> std::string {
    ++judged;
    return "";
  };
  InstallDefaultOracle(s, o);  // chains after the counter above
  const ExploreResult r = Explore(s, o);
  ASSERT_TRUE(r.failure.has_value());
  EXPECT_EQ(r.failure->verdict, Verdict::kSigsegv);
  EXPECT_GT(judged, 0u);  // passing executions were judged, and none was flagged
}

// ---------------------------------------------------------------------------
// Each check on a scenario made for it.

// A per-CPU counter whose section also reads a global `limit` that a thread
// on the other CPU may change: the read is not protected by rseq.
constexpr const char* kSharedRead = R"(scenario shared_read
cpus 2
var limit: u64 = 10
percpu counter: u64 = 0
func inc
  la    r10, counter
retry:
  rseq_load r1, cpu_id_start
  shl   r2, r1, 6
  add   r2, r2, r10
  la    r3, limit
  rseq_arm inc_cs
start:
  rseq_load r6, cpu_id
  bne   r6, r1, abort
  ld    r7, [r3]
  st    [r2], r7
post:
  li    r0, 0
  ret
  sig   0x53053053
abort:
  jmp   retry
  cs inc_cs start=start post_commit=post abort=abort
end
func set_limit
  la    r3, limit
  li    r4, 20
  st    [r3], r4
  li    r0, 0
  ret
end
thread reader entry inc cpu 0
thread writer entry set_limit cpu 1
expect pass
)";

TEST(OracleCheckTest, StaleReadOfSharedData) {
  const Scenario s = ParseScenario(kSharedRead, "shared_read.rsq");
  // reader runs to just after its load of `limit` (boundary 9), writer runs to
  // the end on CPU 1, reader commits.
  const ExecutionResult r = Replay(s, {At(9, Decision::Step(1))});
  ASSERT_EQ(r.verdict, Verdict::kPass) << r.message;
  EXPECT_EQ(CheckCommitSerialisability(s, r),
            "commit serialisability: reader's attempt 1 of inc_cs, committed at step 15 on CPU 0 by `st [r2], r7` "
            "(line 17): read limit = 10 at step 9 by `ld r7, [r3]` (line 16), but writer wrote limit = 20 at step 12 "
            "by `st [r3], r4` (line 29) before the commit: the operation is not atomic");
  // The writer before the read, or after the commit: serialisable.
  EXPECT_EQ(CheckCommitSerialisability(s, Replay(s, {At(0, Decision::Step(1))})), "");
  EXPECT_EQ(CheckCommitSerialisability(s, Replay(s, {})), "");
}

// The section's early exit ("ne") comes after a store to `log`, which is not
// scratch: leaving without the commit must leave nothing behind.
constexpr const char* kEarlyExit = R"(scenario early_exit
cpus 1
var flag: u64 = 0
var log: u64 = 0
var note: u64 = 0
func try_set
  rseq_load r1, cpu_id_start
  la    r2, flag
  la    r3, log
  la    r4, note
  li    r5, 1
  rseq_arm set_cs
start:
  rseq_load r6, cpu_id
  bne   r6, r1, abort
  st    [r4], r5
  st    [r3], r5
  ld    r7, [r2]
  bne   r7, 1, ne
  st    [r2], r5
post:
  li    r0, 0
  ret
ne:
  li    r0, 1
  ret
  sig   0x53053053
abort:
  li    r0, -1
  ret
  cs set_cs start=start post_commit=post abort=abort
end
scratch note
thread w entry try_set
expect pass
)";

TEST(OracleCheckTest, EarlyExitWithAnEffectOutsideScratch) {
  const Scenario s = ParseScenario(kEarlyExit, "early_exit.rsq");
  const ExecutionResult r = Replay(s, {});
  ASSERT_EQ(r.verdict, Verdict::kPass) << r.message;
  // The store to `note` (scratch) is fine; the one to `log` is not.
  EXPECT_EQ(CheckCommitSerialisability(s, r),
            "commit serialisability: w's attempt 1 of set_cs left the section without committing at step 12 "
            "(`bne r7, 1, ne` (line 19)) but left an effect outside the declared scratch: it wrote log = 1 at step 10 "
            "by `st [r3], r5` (line 17) (an abort undoes no store: only the commit may publish)");
  const AttemptAnalysis a = AnalyseAttempts(s, r);
  ASSERT_EQ(a.threads.size(), 1u);
  EXPECT_EQ(a.threads[0], (AttemptCounts{1, 0, 0, 0, 1}));
}

// An instruction between rseq_arm and start_ip: a preemption there lets the
// kernel clear rseq_cs (lazy clear), and the section runs unprotected.
constexpr const char* kGap = R"(scenario arm_gap
cpus 1
percpu counter: u64 = 0
func inc
  rseq_load r1, cpu_id_start
  la    r2, counter
  rseq_arm inc_cs
  li    r3, 1
start:
  rseq_load r6, cpu_id
  bne   r6, r1, abort
  ld    r7, [r2]
  add   r7, r7, r3
  st    [r2], r7
post:
  li    r0, 0
  ret
  sig   0x53053053
abort:
  li    r0, -1
  ret
  cs inc_cs start=start post_commit=post abort=abort
end
thread w entry inc
expect pass
)";

TEST(OracleCheckTest, SectionEnteredAfterTheKernelClearedRseqCs) {
  const Scenario s = ParseScenario(kGap, "arm_gap.rsq");
  EXPECT_EQ(CheckCommitSerialisability(s, Replay(s, {})), "");
  const ExecutionResult r = Replay(s, {At(3, Decision::Preempt(0))});  // at `li r3, 1`
  ASSERT_EQ(r.verdict, Verdict::kPass) << r.message;
  EXPECT_EQ(CheckCommitSerialisability(s, r),
            "commit serialisability: w's attempt 1 of inc_cs entered the section at start_ip at step 5 while rseq_cs "
            "did not point at its descriptor (the kernel cleared rseq_cs at step 3): the section ran unprotected (arm "
            "it with `rseq_arm inc_cs` right before start_ip, after any code that may be preempted)");
}

// A stale CPU number that the abort handler keeps for up to LIMIT retries:
// every retry fails the cpu_id compare at start_ip and jumps to abort.
constexpr const char* kRetry = R"(scenario abort_loop
const LIMIT = 5
cpus 2
percpu counter: u64 = 0
func inc
  la    r10, counter
  rseq_load r1, cpu_id_start
  li    r9, 0
retry:
  shl   r2, r1, 6
  add   r2, r2, r10
  rseq_arm inc_cs
start:
  rseq_load r6, cpu_id
  bne   r6, r1, abort
  ld    r7, [r2]
  add   r7, r7, 1
  st    [r2], r7
post:
  li    r0, 0
  ret
  sig   0x53053053
abort:
  add   r9, r9, 1
  blt   r9, LIMIT, retry
  rseq_load r1, cpu_id_start
  li    r9, 0
  jmp   retry
  cs inc_cs start=start post_commit=post abort=abort
end
thread w entry inc cpu 0 affinity all
expect pass
)";

TEST(OracleCheckTest, SelfInflictedAbortLoop) {
  const Scenario s = ParseScenario(kRetry, "abort_loop.rsq");
  // Migrate w to CPU 1 after it read cpu_id_start (at `li r9, 0`).
  const ExecutionResult r = Replay(s, {At(2, Decision::Migrate(0, 1))});
  ASSERT_EQ(r.verdict, Verdict::kPass) << r.message;
  EXPECT_EQ(CheckCommitSerialisability(s, r), "");
  const AttemptAnalysis a = AnalyseAttempts(s, r);
  ASSERT_EQ(a.threads.size(), 1u);
  EXPECT_EQ(a.threads[0], (AttemptCounts{6, 1, 0, 5, 0}));
  EXPECT_EQ(CheckAbortBound(s, r, 1),
            "abort loop: w aborted 5 critical-section attempts (0 by the kernel, 5 by jumping to its own abort label) "
            "with at most 1 injected events: each abort needs an event, so the thread aborts itself in a loop that a "
            "fair schedule does not end (livelock suspect)");
  EXPECT_EQ(DefaultOracle(s, r, 1), CheckAbortBound(s, r, 1));
  EXPECT_EQ(CheckAbortBound(s, r, 4), "");  // 5 <= 4 + 1
  // Exploration with the default oracle finds it at one event.
  ExploreOptions o;
  o.strategy = StrategyKind::kDpor;
  o.bounds.max_events = 1;
  InstallDefaultOracle(s, o);
  const ExploreResult e = Explore(s, o);
  ASSERT_TRUE(e.failure.has_value());
  EXPECT_EQ(e.failure->message.rfind("abort loop: w aborted 5 critical-section attempts", 0), 0u)
      << e.failure->message;
}

TEST(OracleCheckTest, LivelockCycle) {
  // LIMIT beyond the step budget: the stale CPU is never re-read.
  const Scenario s = ParseScenario(kRetry, "abort_loop.rsq", {{"LIMIT", 1000000}});
  RunOptions o = Recording(true);
  o.max_steps = 2000;
  const ExecutionResult r = Replay(s, {At(2, Decision::Migrate(0, 1))}, o);
  ASSERT_EQ(r.verdict, Verdict::kLivelock);
  const std::string cycle =
      "retry: shl r2, r1, 6 \u2192 add r2, r2, r10 \u2192 rseq_arm inc_cs \u2192 start: rseq_load r6, cpu_id "
      "\u2192 bne r6, r1, abort \u2192 abort: add r9, r9, 1 \u2192 blt r9, 1000000, retry \u2192 retry "
      "(7 instructions, repeated 285 times)";
  EXPECT_EQ(DescribeCycle(s, r, 0), cycle);
  EXPECT_EQ(DescribeLivelock(s, r), "w loops: " + cycle + "\n");
  // No loop: a thread that ran straight through.
  const ExecutionResult straight = Replay(s, {}, o);
  EXPECT_EQ(DescribeCycle(s, straight, 0), "");
  EXPECT_EQ(DescribeLivelock(s, straight), "");
}

TEST(OracleCheckTest, LivelockCycleWithKernelAborts) {
  // A thread preempted inside its section again and again (an event every
  // iteration, at `bne r6, r1, abort`): the kernel aborts are part of the cycle.
  const Scenario s = ParseScenario(kRetry, "abort_loop.rsq", {{"LIMIT", 1000000}});
  RunOptions o = Recording(true);
  o.max_steps = 60;
  std::vector<ScheduleEntry> preempts;
  for (uint64_t b = 7; b < 80; b += 7) preempts.push_back(At(b, Decision::Preempt(0)));
  const ExecutionResult r = Replay(s, preempts, o);
  ASSERT_EQ(r.verdict, Verdict::kLivelock) << r.message;
  EXPECT_EQ(DescribeCycle(s, r, 0),
            "retry: shl r2, r1, 6 \u2192 add r2, r2, r10 \u2192 rseq_arm inc_cs \u2192 start: rseq_load r6, cpu_id "
            "\u2192 (kernel abort to abort) \u2192 abort: add r9, r9, 1 \u2192 blt r9, 1000000, retry \u2192 retry "
            "(6 instructions, repeated 9 times)");
}

// The counter indexed by mm_cid (librseq RSEQ_PERCPU_MM_CID): the section
// compares mm_cid, so the block it owns is its mm_cid's, not its CPU's.
constexpr const char* kMmCid = R"(scenario mm_cid_counter
const THREADS = 3
const OPS = 2
cpus 2
percpu counter: u64 = 0
func inc
  la    r10, counter
  li    r8, 0
loop:
  beq   r8, OPS, done
retry:
  rseq_load r1, mm_cid
  shl   r2, r1, 6
  add   r2, r2, r10
  rseq_arm inc_cs
start:
  rseq_load r6, mm_cid
  bne   r6, r1, abort
  ld    r7, [r2]
  add   r7, r7, 1
  st    [r2], r7
post:
  add   r8, r8, 1
  jmp   loop
  sig   0x53053053
abort:
  jmp   retry
done:
  li    r0, 0
  ret
  cs inc_cs start=start post_commit=post abort=abort
end
func on_usr1
  call  inc
  ret
end
signal SIGUSR1 handler on_usr1
thread w * THREADS entry inc cpu (i % 2) affinity all
property sum(counter) >= THREADS * OPS
expect pass
)";

TEST(OracleCheckTest, MmCidIndexedDataAndSectionsInSignalHandlersAreFine) {
  // Blocks owned by mm_cid (which differs from the CPU after migrations) and
  // handlers that run their own sections on top of an aborted one: no false
  // alarm over thousands of aggressive schedules.
  const Scenario s = ParseScenario(kMmCid, "mm_cid_counter.rsq");
  const AttemptCounts c = RandomRunsPassTheOracle(s, 3000);
  EXPECT_GT(c.kernel_aborts, 500u);
  EXPECT_GT(c.self_aborts, 100u);
}

TEST(OracleCheckTest, MmCidSectionOnTheCpusBlockIsFlagged) {
  // The same section (it compares mm_cid) but the address computed from
  // cpu_id_start: once mm_cid and CPU disagree it commits to another block.
  std::string text = kMmCid;
  const std::string from = "  shl   r2, r1, 6\n";
  text.replace(text.find(from), from.size(), "  rseq_load r5, cpu_id_start\n  shl   r2, r5, 6\n");
  const Scenario s = ParseScenario(text, "mm_cid_counter.rsq");
  Simulator sim(s, Recording());
  ExecutionResult r;
  std::string found;
  for (uint64_t seed = 0; seed < 3000 && found.empty(); ++seed) {
    RandomScheduler sched(seed, Aggressive());
    sim.RunInto(sched, r);
    found = CheckCommitSerialisability(s, r);
  }
  EXPECT_NE(found.find("'s block) while its mm_cid was "), std::string::npos) << found;
}

TEST(OracleCheckTest, DescribeAddress) {
  const Scenario s = Builtin("percpu_buffer");
  const Symbol& slots = s.program.symbols[s.program.FindSymbol("slots")];
  EXPECT_EQ(DescribeAddress(s, slots.address), "slots[0][0]");
  EXPECT_EQ(DescribeAddress(s, slots.address + slots.stride + 8), "slots[1][1]");
  const Symbol& done = s.program.symbols[s.program.FindSymbol("done")];
  EXPECT_EQ(DescribeAddress(s, done.address), "done");
  EXPECT_EQ(DescribeAddress(s, done.address + 4), "done+4");
  EXPECT_EQ(DescribeAddress(s, done.address + 8), "done[1] (0x" + [&] {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%llx", static_cast<unsigned long long>(done.address + 8));
    return std::string(buf);
  }() + ", past the end of done[1])");
  EXPECT_EQ(DescribeAddress(s, 0x10), "0x10");
}

}  // namespace
}  // namespace rseqmc
