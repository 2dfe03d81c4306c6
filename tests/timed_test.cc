// Simulated time (sim/timed_scheduler.h) and its cost model (sim/cost_model.h):
// exact clocks for hand-computed programs, the text format's round trip and
// errors, the `clock` / `work` ops through parser and printer, and the
// determinism of a whole workload (same seed, same figures; another seed,
// other figures).
#include <algorithm>
#include <cstdint>
#include <fstream>
#include <string>
#include <utility>

#include <gtest/gtest.h>

#include "scenarios/parser.h"
#include "tests/cli_runner.h"
#include "scenarios/printer.h"
#include "sim/cost_model.h"
#include "sim/diag.h"
#include "sim/simulator.h"
#include "sim/timed_scheduler.h"

namespace rseqmc {
namespace {

void WriteFile(const std::string& path, const std::string& text) {
  std::ofstream(path) << text;
}

int64_t Observed(const ExecutionResult& r, int thread, size_t k) { return r.threads[thread].observed.at(k).second; }

TEST(CostModel, FormatThenParseIsTheSameModel) {
  CostModel m;
  m.alu_ns = 0.25;
  m.cacheline_transfer_ns = 71.5;
  m.context_switch_ns = 1234.0625;
  m.tick_ns = 1e6;
  const std::string text = FormatCostModel(m, {"measured on host X", "2026-12-02"});
  EXPECT_EQ(text.rfind("# measured on host X\n# 2026-12-02\n", 0), 0u);
  EXPECT_EQ(ParseCostModel(text, "m.txt"), m);
}

TEST(CostModel, KeysNotGivenKeepTheirDefaults) {
  const CostModel m = ParseCostModel("# only one\nsyscall_ns = 90  # comment\n", "m.txt");
  CostModel want;
  want.syscall_ns = 90;
  EXPECT_EQ(m, want);
}

void ExpectError(const std::string& text, uint32_t line, uint32_t column, const std::string& what) {
  try {
    ParseCostModel(text, "bad.txt");
    FAIL() << "no error for: " << text;
  } catch (const InputError& e) {
    EXPECT_EQ(e.file(), "bad.txt");
    EXPECT_EQ(e.loc().line, line) << e.Format();
    EXPECT_EQ(e.loc().column, column) << e.Format();
    EXPECT_NE(e.message().find(what), std::string::npos) << e.Format();
    EXPECT_FALSE(e.hint().empty());
  }
}

TEST(CostModel, BadInputNamesLineColumnAndFix) {
  ExpectError("alu_ns = 1\n  bogus_ns = 3\n", 2, 3, "unknown cost-model key 'bogus_ns'");
  ExpectError("alu_ns = 1\nalu_ns = 2\n", 2, 1, "given twice");
  ExpectError("load_ns =   -1\n", 1, 13, "bad value '-1'");
  ExpectError("load_ns = 1x\n", 1, 11, "bad value '1x'");
  ExpectError("load_ns = nan\n", 1, 11, "bad value");
  ExpectError("tick_ns = 0\n", 1, 11, "bad value '0' for tick_ns");
  ExpectError("load_ns 3\n", 1, 1, "expected `key = value`");
  ExpectError("load_ns =\n", 1, 10, "bad value ''");
}

TEST(TimedOps, ClockAndWorkRoundTripThroughThePrinter) {
  const Scenario s = ParseScenario(
      "scenario t\nfunc f\n  clock\n  work 500\n  work r3\n  ret\nend\nthread a entry f\n", "t.rsq");
  ASSERT_EQ(s.program.code.size(), 4u);
  EXPECT_EQ(s.program.code[0].op, Op::kClock);
  EXPECT_EQ(s.program.code[1].op, Op::kWork);
  EXPECT_EQ(s.program.code[1].imm, 500);
  EXPECT_EQ(s.program.code[2].rs, 3);
  const Scenario back = ParseScenario(PrintScenario(s), "back.rsq");
  EXPECT_EQ(back.program, s.program);
}

TEST(TimedOps, UntimedClockIsTheBlockingClockAndWorkIsANoOp) {
  const Scenario s = ParseScenario(
      "scenario t\nfunc f\n  work 1000000\n  clock\n  observe a, r0\n  sleep 700\n  clock\n  observe b, r0\n  ret\nend\n"
      "thread x entry f\n",
      "t.rsq");
  Simulator sim(s);
  class First : public Scheduler {
    Decision Choose(const ChoiceView& v) override { return Decision::Step(v.DefaultCpu()); }
  } first;
  const ExecutionResult r = sim.Run(first);
  ASSERT_EQ(r.verdict, Verdict::kPass) << r.message;
  EXPECT_EQ(Observed(r, 0, 0), 0);
  EXPECT_EQ(Observed(r, 0, 1), 700);
}

// One CPU, one thread: its switch-in (context_switch_ns), `work`, then the
// clock read; a sleep from that time, the idle gap, the switch-in again.
TEST(TimedScheduler, ClocksFollowTheCostModelExactly) {
  const Scenario s = ParseScenario(
      "scenario t\nfunc f\n  work 1000\n  clock\n  observe a, r0\n  sleep 10000\n  clock\n  observe b, r0\n  ret\nend\n"
      "thread x entry f\n",
      "t.rsq");
  CostModel cm;
  cm.context_switch_ns = 1500;
  cm.clock_ns = 20;
  cm.alu_ns = 0.5;
  cm.syscall_ns = 70;
  Simulator sim(s);
  TimedScheduler sched(cm, 1);
  const ExecutionResult r = sim.Run(sched);
  ASSERT_EQ(r.verdict, Verdict::kPass) << r.message;
  // switch-in 1500 + work 1000
  EXPECT_EQ(Observed(r, 0, 0), 2500);
  // sleep at 2500 + clock 20 + observe 0.5 = 2520.5 -> deadline 12520 (ns
  // truncated); idle until then; switch-in 1500.
  EXPECT_EQ(Observed(r, 0, 1), 12520 + 1500);
  EXPECT_EQ(sched.stats().context_switches, 2u);
  EXPECT_EQ(sched.stats().migrations, 0u);
}

// A 1 ms tick and 2 ms slices (max(latency / 2, min_granularity)).
CostModel FastTicks() {
  CostModel cm;
  cm.tick_ns = 1000000;
  cm.sched_latency_ns = 4000000;
  cm.sched_min_granularity_ns = 500000;
  return cm;
}

// A run of FastTicks() with seed 7: the result and the scheduler's counts.
struct FastTickRun {
  ExecutionResult result;
  TimedStats stats;
};
FastTickRun RunWithFastTicks(const Scenario& s) {
  Simulator sim(s);
  TimedScheduler sched(FastTicks(), 7);
  ExecutionResult r = sim.Run(sched);
  return {std::move(r), sched.stats()};
}

// Two threads on one CPU, each spinning in `work`: the tick preempts at the
// first tick after the CFS slice max(latency / 2, min_granularity).
TEST(TimedScheduler, TickPreemptsAfterTheSlice) {
  const Scenario s = ParseScenario(
      "scenario t\nfunc f\n  li r5, 0\nloop:\n  work 100000\n  add r5, r5, 1\n  blt r5, 100, loop\n  clock\n  "
      "observe end, r0\n  ret\nend\nthread x * 2 entry f cpu 0\n",
      "t.rsq");
  const auto [r, stats] = RunWithFastTicks(s);
  ASSERT_EQ(r.verdict, Verdict::kPass) << r.message;
  // 2 x 10 ms of work on one CPU, slices of 2 ms: about 10 preemptions.
  EXPECT_GE(stats.tick_preemptions, 8u);
  EXPECT_LE(stats.tick_preemptions, 11u);
  EXPECT_NEAR(stats.IdleFraction(), 0.0, 1e-9);
  // Interleaved: both end after 10 ms of their own work; the last after all 20 ms.
  EXPECT_GT(Observed(r, 0, 0), 15000000);
  EXPECT_GT(Observed(r, 1, 0), 15000000);
  EXPECT_GT(std::max(Observed(r, 0, 0), Observed(r, 1, 0)), 20000000);
}

// The preempt-lock scheme in simulated time (sim/kernel/preempt_lock.h PL1,
// PL2): two threads on one CPU spin in `work` with their flag set (or clear);
// every tick preemption of a flagged thread is answered by exactly one SIGUSR2
// frame on its way back, a clear flag by none. (The handler has two
// instructions: the scheduler charges a frame when it sees the handler's
// depth after a step, which a one-instruction handler has already left.)
TEST(TimedScheduler, EveryFlaggedTickPreemptionGetsOneSignal) {
  for (int flag : {1, 0}) {
    SCOPED_TRACE("flag " + std::to_string(flag));
    const Scenario s = ParseScenario(
        "scenario t\nvar flag: u32[2] = 0\nfunc f\n  la r10, flag\n  shl r6, r9, 2\n  add r10, r10, r6\n"
        "  preempt_lock r10, SIGUSR2\n  li r5, 0\nloop:\n  li r6, " + std::to_string(flag) + "\n  st32 [r10], r6\n"
        "  work 100000\n  li r6, 0\n  st32 [r10], r6\n  add r5, r5, 1\n  blt r5, 100, loop\n  ret\nend\n"
        "func h\n  nop\n  ret\nend\nsignal SIGUSR2 handler h\nthread x * 2 entry f cpu 0 args r9 = i\n",
        "t.rsq");
    const auto [r, stats] = RunWithFastTicks(s);
    ASSERT_EQ(r.verdict, Verdict::kPass) << r.message;
    EXPECT_GE(stats.tick_preemptions, 8u);
    EXPECT_EQ(stats.signals, flag ? stats.tick_preemptions : 0u);
  }
}

// A sleeper wakes onto an idle CPU (select_idle_sibling), not behind the busy thread on its own.
TEST(TimedScheduler, WokenThreadGoesToAnIdleCpu) {
  const Scenario s = ParseScenario(
      "scenario t\ncpus 2\nfunc busy\n  work 5000000\n  ret\nend\nfunc sleeper\n  sleep 1000\n  clock\n  observe woke, r0\n"
      "  getcpu\n  observe cpu, r0\n  ret\nend\nthread s entry sleeper cpu 0\nthread b entry busy cpu 0\n",
      "t.rsq");
  CostModel cm;
  Simulator sim(s);
  TimedScheduler sched(cm, 1);
  const ExecutionResult r = sim.Run(sched);
  ASSERT_EQ(r.verdict, Verdict::kPass) << r.message;
  EXPECT_EQ(Observed(r, 0, 1), 1);
  EXPECT_LT(Observed(r, 0, 0), 100000);
  EXPECT_EQ(sched.stats().migrations, 1u);
}

TimedReport SmallWorkload(uint64_t seed, int variant) {
  const std::string path = std::string(RSEQMC_SOURCE_DIR) + "/tools/alloc/sim/alloc_workload.rsq";
  const Scenario s = ParseScenarioFile(path,
                                   {{"CPUS", 4}, {"THREADS", 24}, {"BUSY", 6}, {"VARIANT", variant},
                                    {"DURATION_NS", 400000}, {"THINK_IDLE_NS", 400000}, {"SEED", static_cast<int64_t>(seed)}});
  TimedRunOptions o;
  o.seed = seed;
  o.window_ns = 400000;
  o.memory_symbols = {"cached"};
  return SimulateTimed(s, CostModel{}, o);
}

void ExpectSameFigures(const TimedReport& a, const TimedReport& b) {
  EXPECT_EQ(a.steps, b.steps);
  EXPECT_EQ(a.requests, b.requests);
  EXPECT_EQ(a.p50_ns, b.p50_ns);
  EXPECT_EQ(a.p99_ns, b.p99_ns);
  EXPECT_EQ(a.memory, b.memory);
  EXPECT_EQ(a.stats.end_ns, b.stats.end_ns);
  EXPECT_EQ(a.stats.busy_ns, b.stats.busy_ns);
  EXPECT_EQ(a.stats.context_switches, b.stats.context_switches);
  EXPECT_EQ(a.stats.cacheline_transfers, b.stats.cacheline_transfers);
}

TEST(TimedWorkload, SameSeedSameFiguresOtherSeedOtherFigures) {
  for (int variant : {0, 1, 2, 4, 6}) {
    SCOPED_TRACE("VARIANT=" + std::to_string(variant));
    const TimedReport a = SmallWorkload(1, variant);
    ASSERT_EQ(a.verdict, Verdict::kPass) << a.message;
    EXPECT_GT(a.requests, 30u);
    ExpectSameFigures(a, SmallWorkload(1, variant));
    const TimedReport c = SmallWorkload(2, variant);
    EXPECT_TRUE(c.steps != a.steps || c.p99_ns != a.p99_ns || c.stats.busy_ns != a.stats.busy_ns);
  }
}

// The effect the seed measured, in miniature: per-thread caches hold more
// bytes than per-CPU caches when most threads sleep.
TEST(TimedWorkload, PerThreadCachesHoldMoreThanPerCpuCaches) {
  const TimedReport per_thread = SmallWorkload(1, 0);
  const TimedReport per_cpu = SmallWorkload(1, 1);
  EXPECT_GT(per_thread.memory, per_cpu.memory);
}

// The seed's scale (400 threads, 80 busy, 32 CPUs; 2 ms of it) with the
// calibrated cost model checked in. Issue 12: with migration_ns = the
// sched_setaffinity round trip of this VM (377003 ns, the first calibration)
// every migration cost the migrated thread 0.38 ms and the service was
// CPU-bound (idle ~1.5 % for every variant); with the cache refill the
// calibration now measures, about a third of the CPUs idle, as in the seed
// (33 %). Same seed, same figures; the golden values change only with the
// cost model or the workload (say why in the commit).
TimedReport SeedScale(const CostModel& cm, int variant) {
  const std::string path = std::string(RSEQMC_SOURCE_DIR) + "/tools/alloc/sim/alloc_workload.rsq";
  const Scenario s = ParseScenarioFile(path, {{"VARIANT", variant}, {"DURATION_NS", 2000000}});
  TimedRunOptions o;
  o.window_ns = 2000000;
  o.memory_symbols = {"cached"};
  return SimulateTimed(s, cm, o);
}

TEST(TimedWorkload, CalibratedModelAtTheSeedsScaleIdlesAboutAThird) {
  const CostModel cm = LoadCostModel(std::string(RSEQMC_SOURCE_DIR) + "/tools/alloc/cost_model.txt");
  const TimedReport rseq = SeedScale(cm, 1);
  ASSERT_EQ(rseq.verdict, Verdict::kPass) << rseq.message;
  ExpectSameFigures(rseq, SeedScale(cm, 1));
  EXPECT_EQ(rseq.requests, 1163u);
  EXPECT_EQ(rseq.memory, 1501984);
  EXPECT_EQ(static_cast<int>(rseq.stats.IdleFraction() * 1000), 308);
  CostModel setaffinity = cm;
  setaffinity.migration_ns = 377003;
  const TimedReport bound = SeedScale(setaffinity, 1);
  EXPECT_EQ(static_cast<int>(bound.stats.IdleFraction() * 1000), 21);
}

// The preempt-lock variant (VARIANT 6, sim/kernel/preempt_lock.h) keeps
// per-CPU caches: less than per-thread caches hold.
TEST(TimedWorkload, PreemptLockVariantKeepsPerCpuMemory) {
  const TimedReport per_thread = SmallWorkload(1, 0);
  const TimedReport pl = SmallWorkload(1, 6);
  ASSERT_EQ(pl.verdict, Verdict::kPass) << pl.message;
  EXPECT_GT(per_thread.memory, pl.memory);
}

TEST(SimulateCli, FiguresAndBadCostModel) {
  const std::string dir = ::testing::TempDir();
  const std::string good = dir + "/cm_good.txt", bad = dir + "/cm_bad.txt";
  WriteFile(good, FormatCostModel(CostModel{}));
  WriteFile(bad, "alu_ns = 0.3\nload_ns = fast\n");
  const std::string workload = std::string(RSEQMC_SOURCE_DIR) + "/tools/alloc/sim/alloc_workload.rsq";
  const std::vector<std::string> small = {"-D", "CPUS=2", "-D", "THREADS=6", "-D", "BUSY=2", "-D", "DURATION_NS=200000",
                                          "-D", "THINK_IDLE_NS=200000", "--memory", "cached"};
  std::vector<std::string> args = {"simulate", workload, "--cost-model", good, "--csv"};
  args.insert(args.end(), small.begin(), small.end());
  const testing::CliResult ok = testing::RunCli(args);
  EXPECT_EQ(ok.code, 0) << ok.err;
  EXPECT_EQ(ok.out.rfind("cpus,threads,seed,window_ns,", 0), 0u) << ok.out;
  EXPECT_NE(ok.out.find("\n2,6,1,200000,"), std::string::npos) << ok.out;
  EXPECT_EQ(testing::RunCli(args).out, ok.out);  // deterministic across processes
  args[3] = bad;
  const testing::CliResult e = testing::RunCli(args);
  EXPECT_EQ(e.code, 2);
  EXPECT_NE(e.err.find(bad + ":2:11: error: bad value 'fast' for load_ns"), std::string::npos) << e.err;
  const testing::CliResult missing = testing::RunCli({"simulate", workload});
  EXPECT_EQ(missing.code, 2);
  EXPECT_NE(missing.err.find("needs --cost-model FILE"), std::string::npos) << missing.err;
}

// Review findings F6 and F18 under `rseqmc simulate`: the clock saturates at
// KTIME_MAX instead of wrapping after `work` of nearly 2^63 ns, and a sleep
// that a signal ends resumes at the signal (-EINTR, about 1 us into the run),
// not at its 10 ms deadline. The scenarios' properties check the values.
TEST(SimulateCli, HugeWorkSaturatesTheClockAndASignalEndsASleepAtTheSignal) {
  const std::string cost = ::testing::TempDir() + "/cm_f6.txt";
  WriteFile(cost, FormatCostModel(CostModel{}));
  const testing::CliResult work =
      testing::RunCli({"simulate", testing::Fixture("work_saturates.rsq"), "--cost-model", cost});
  EXPECT_EQ(work.code, 0) << work.out << work.err;
  EXPECT_NE(work.out.find("verdict:     pass"), std::string::npos) << work.out;
  const testing::CliResult sleep =
      testing::RunCli({"simulate", testing::Fixture("sleep_signal.rsq"), "--cost-model", cost});
  EXPECT_EQ(sleep.code, 0) << sleep.out << sleep.err;
  EXPECT_NE(sleep.out.find("verdict:     pass"), std::string::npos) << sleep.out;
  // The run ends when the sleeper does: about a microsecond, not 10 ms.
  EXPECT_NE(sleep.out.find("simulated:   0.0"), std::string::npos) << sleep.out;
}

// Review findings F5, F7, F8 and F17: a directory as the cost model, a step
// budget of 0 and a --latency name the scenario never observes are bad input
// (exit 2, naming what is wrong and the fix); --kernel chooses the ABI as in
// `check`, and an unknown one is bad input.
TEST(SimulateCli, BadCostModelPathStepBudgetLatencyNameAndKernel) {
  const std::string dir = ::testing::TempDir();
  const std::string good = dir + "/cm_f5.txt";
  WriteFile(good, FormatCostModel(CostModel{}));
  const std::string scenario = std::string(RSEQMC_SOURCE_DIR) + "/tests/data/sleep_order.rsq";
  const testing::CliResult as_dir = testing::RunCli({"simulate", scenario, "--cost-model", dir});
  EXPECT_EQ(as_dir.code, 2) << as_dir.out;
  EXPECT_NE(as_dir.err.find("the cost-model file is a directory"), std::string::npos) << as_dir.err;
  EXPECT_NE(as_dir.err.find("hint: give a cost-model file"), std::string::npos) << as_dir.err;
  const testing::CliResult zero = testing::RunCli({"simulate", scenario, "--cost-model", good, "--max-steps", "0"});
  EXPECT_EQ(zero.code, 2) << zero.out;
  EXPECT_NE(zero.err.find("--max-steps 0: the budget must be at least 1 instruction"), std::string::npos) << zero.err;
  const testing::CliResult misspelt = testing::RunCli({"simulate", scenario, "--cost-model", good, "--latency", "ordr"});
  EXPECT_EQ(misspelt.code, 2) << misspelt.out;
  EXPECT_NE(misspelt.err.find("--latency ordr: the scenario has no `observe ordr, REG`"), std::string::npos)
      << misspelt.err;
  EXPECT_NE(misspelt.err.find("hint: observation names of this scenario: order, rv"), std::string::npos)
      << misspelt.err;
  const testing::CliResult named = testing::RunCli({"simulate", scenario, "--cost-model", good, "--latency", "order"});
  EXPECT_EQ(named.code, 0) << named.err;
  EXPECT_NE(named.out.find("requests:    3,"), std::string::npos) << named.out;
  for (const char* k : {"4.18", "6.0", "6.19"}) {
    const testing::CliResult r = testing::RunCli({"simulate", scenario, "--cost-model", good, "--kernel", k});
    EXPECT_EQ(r.code, 0) << k << ": " << r.err;
    EXPECT_NE(r.out.find("verdict:     pass"), std::string::npos) << k << ": " << r.out;
  }
  const testing::CliResult bad_kernel = testing::RunCli({"simulate", scenario, "--cost-model", good, "--kernel", "3.1"});
  EXPECT_EQ(bad_kernel.code, 2) << bad_kernel.out;
  EXPECT_NE(bad_kernel.err.find("--kernel 3.1: "), std::string::npos) << bad_kernel.err;
}

}  // namespace
}  // namespace rseqmc
