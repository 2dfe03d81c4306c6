// The 2015 RFC ABI (sim/kernel/rfc2015.cc): its rule table - one row per rule
// of reference/rfc2015.md, each with a minimal scenario, a hand-built
// schedule and the exact outcome under rfc2015, while every merged-kernel ABI
// rejects the same scenario (it has no restartable_sequences(): exit 2) -
// the syntax (regions, `rfc_region`, `rfc_cpu_ptr`, `preempt`), the built-in
// self-test and its planted-bug twin.
#include <cstdint>
#include <cstdio>
#include <functional>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "model/counterexample.h"
#include "model/explorer.h"
#include "scenarios/builtin.h"
#include "scenarios/parser.h"
#include "scenarios/printer.h"
#include "sim/builder.h"
#include "sim/diag.h"
#include "sim/kernel/abi.h"
#include "sim/schedule.h"
#include "sim/simulator.h"
#include "tests/cli_runner.h"
#include "tests/rule_helpers.h"

namespace rseqmc {
namespace {

using rules::Pc;
using rules::ScheduleMaker;

constexpr KernelModel kRfc = KernelModel::kRfc2015;

// "VERDICT aborts=N name=value..." of thread 0 (values in decimal).
std::string Describe(const Scenario& s, const ExecutionResult& r) {
  std::string out = VerdictName(r.verdict);
  out += " aborts=" + std::to_string(r.threads.at(0).aborts);
  for (const auto& [id, v] : r.threads.at(0).observed) out += " " + r.ObservationName(s, id) + "=" + std::to_string(v);
  return out;
}

// `main` (thread t0 on CPU 0, CPU pointer &cpu, unless `no_pointer`):
// registers region [start, post) with restart `restart`, sets its CPU
// pointer, then runs the region: `in` (a nop at label `in`), reads the CPU
// number, and commits x := 1. The restart path counts in r9 and re-enters.
// At the end it observes the CPU number it read in the region (`seen`) and the
// restarts (`restarts`). A second thread `other` (CPU 1) only spins briefly.
Scenario RegionProbe(Preemption p, bool no_pointer = false, bool with_handler = false) {
  ScenarioBuilder b("region_probe");
  b.Cpus(2).Preempt(p).Var("x", Width::kU64, 1).Var("cpu", Width::kU32, 1);
  FunctionBuilder& f = b.Func("main");
  f.RfcRegion("r").La(10, "cpu").La(11, "x");
  if (!no_pointer) f.RfcCpuPtr(R(10));
  f.Li(9, 0).Li(5, 1).Label("before").Nop().Label("start").Label("in").Nop().Ld32(1, Mem(10)).St(Mem(11), 5)
      .Label("post").Observe("seen", 1).Observe("restarts", 9).Li(0, 0).Ret()
      .Label("restart").Add(9, 9, Imm(1)).Jmp("start")
      .Region("r", "start", "post", "restart");
  b.Func("other").Nop().Nop().Li(0, 0).Ret();
  if (with_handler) {
    b.Func("handler").Li(0, 0).Ret();
    b.Signal(kSigUsr1, "handler");
  }
  b.Thread("t0", "main", 0);
  b.Thread("t1", "other", 1);
  return b.Build();
}

// Each syscall's return value observed in order (the errors of op 0 / op 1).
Scenario SyscallErrors() {
  ScenarioBuilder b("rfc_errors");
  b.Cpus(1).Var("cpu", Width::kU32, 1);
  FunctionBuilder& f = b.Func("main");
  f.La(10, "cpu")
      .RfcCpuPtr(R(10)).Observe("ptr_before_regions", 0)  // no region yet: EINVAL (fixed port)
      .RfcRegion("empty").Observe("start_eq_end", 0)      // start >= end: EINVAL
      .RfcRegion("a").Observe("a", 0)                     // 0
      .RfcRegion("overlap").Observe("overlap", 0)         // overlaps a: EBUSY
      .RfcRegion("adjacent").Observe("adjacent", 0)       // [end of a, ...): 0
      .RfcRegion("a").Observe("a_again", 0)               // EBUSY
      .Li(3, static_cast<int64_t>(kTaskSize)).RfcCpuPtr(R(3)).Observe("ptr_above_task_size", 0)  // EINVAL
      .RfcCpuPtr(R(10)).Observe("ptr", 0)                 // 0
      .RfcCpuPtr(R(10)).Observe("ptr_same", 0)            // 0, no-op
      .RfcRegion("late").Observe("region_after_ptr", 0)   // EBUSY
      .RfcCpuPtr(Imm(0)).Observe("ptr_null", 0)           // 0: unregistered
      .Li(0, 0).Ret()
      .Label("a0").Nop().Label("a1").Nop().Label("a2").Nop().Label("a3").Nop().Label("a4").Nop().Label("a5").Ret()
      .Region("empty", "a1", "a1", "a5", true)
      .Region("a", "a0", "a2", "a5", true)
      .Region("overlap", "a1", "a3", "a5", true)
      .Region("adjacent", "a2", "a3", "a5", true)
      .Region("late", "a3", "a4", "a5", true);
  b.Thread("t0", "main", 0);
  return b.Build();
}

ExecutionResult RunRfc(const Scenario& s, const Schedule& schedule, KernelModel k = kRfc) {
  RunOptions o;
  o.kernel = rules::Kernel(k);
  o.record_trace = true;
  ReplayScheduler replay(schedule);
  Simulator sim(s, o);
  return sim.Run(replay);
}

struct Row {
  const char* rule;
  const char* source;
  std::function<Scenario()> scenario;
  std::function<void(const Scenario&, ScheduleMaker&)> schedule;
  std::string on_rfc2015;  // expected outcome; every other ABI: not applicable (InputError)
};

std::vector<Row> Rows() {
  std::vector<Row> rows;
  rows.push_back({"op 0: start >= end -> EINVAL; overlap -> EBUSY; adjacent allowed; after a CPU pointer -> EBUSY. "
                  "op 1: no region yet -> EINVAL (fixed port); >= TASK_SIZE -> EINVAL; same pointer and NULL -> 0",
                  "reference/rfc2015.md ABI (op 0, op 1)", SyscallErrors, nullptr,
                  "pass aborts=0 ptr_before_regions=-22 start_eq_end=-22 a=0 overlap=-16 adjacent=0 a_again=-16 "
                  "ptr_above_task_size=-22 ptr=0 ptr_same=0 region_after_ptr=-16 ptr_null=0"});
  rows.push_back({"a switch-out with the IP inside a region restarts at crit_restart; the CPU number is rewritten",
                  "reference/rfc2015.md When a thread is restarted (switch-out, notify-resume)",
                  [] { return RegionProbe(Preemption::kFull); },
                  [](const Scenario& s, ScheduleMaker& m) { m.Migrate(0, Pc(s, "main", "in"), 1); },
                  "pass aborts=1 seen=1 restarts=1"});
  rows.push_back({"the lookup is half-open: a switch-out at `end` does not restart",
                  "reference/rfc2015.md ABI (lookup: start <= ip < end)",
                  [] { return RegionProbe(Preemption::kFull); },
                  [](const Scenario& s, ScheduleMaker& m) { m.Migrate(0, Pc(s, "main", "post"), 1); },
                  "pass aborts=0 seen=0 restarts=0"});
  rows.push_back({"preemptible kernel: every switch-out rewrites the CPU number (a migration outside the region)",
                  "reference/rfc2015.md When a thread is restarted (CONFIG_PREEMPT)",
                  [] { return RegionProbe(Preemption::kFull); },
                  [](const Scenario& s, ScheduleMaker& m) { m.Migrate(0, Pc(s, "main", "before"), 1); },
                  "pass aborts=0 seen=1 restarts=0"});
  rows.push_back({"voluntary preemption: a switch-out outside a region requests nothing, the CPU number stays stale",
                  "reference/rfc2015.md When a thread is restarted (no CONFIG_PREEMPT: only inside a region)",
                  [] { return RegionProbe(Preemption::kVoluntary); },
                  [](const Scenario& s, ScheduleMaker& m) { m.Migrate(0, Pc(s, "main", "before"), 1); },
                  "pass aborts=0 seen=0 restarts=0"});
  rows.push_back({"voluntary preemption: a switch-out inside a region still restarts and rewrites the CPU number",
                  "reference/rfc2015.md When a thread is restarted",
                  [] { return RegionProbe(Preemption::kVoluntary); },
                  [](const Scenario& s, ScheduleMaker& m) { m.Migrate(0, Pc(s, "main", "in"), 1); },
                  "pass aborts=1 seen=1 restarts=1"});
  rows.push_back({"notify-resume does nothing for a thread without a CPU pointer: no restart",
                  "reference/rfc2015.md When a thread is restarted (notify-resume, only with a CPU pointer)",
                  [] { return RegionProbe(Preemption::kFull, true); },
                  [](const Scenario& s, ScheduleMaker& m) { m.Migrate(0, Pc(s, "main", "in"), 1); },
                  "pass aborts=0 seen=0 restarts=0"});
  rows.push_back({"a signal delivered with the IP inside a region: the frame saves crit_restart",
                  "reference/rfc2015.md When a thread is restarted (signals, setup_rt_frame)",
                  [] { return RegionProbe(Preemption::kFull, false, true); },
                  [](const Scenario& s, ScheduleMaker& m) { m.Signal(0, Pc(s, "main", "in"), kSigUsr1); },
                  "pass aborts=1 seen=0 restarts=1"});
  rows.push_back({"a membarrier IPI does nothing (no RSEQ command in 2015; no switch-out)",
                  "reference/rfc2015.md When a thread is restarted (only switch-out and signals)",
                  [] { return RegionProbe(Preemption::kFull); },
                  [](const Scenario& s, ScheduleMaker& m) { m.Ipi(0, Pc(s, "main", "in")); },
                  "pass aborts=0 seen=0 restarts=0"});
  return rows;
}

TEST(Rfc2015Test, RuleTable) {
  for (const Row& row : Rows()) {
    SCOPED_TRACE(std::string(row.rule) + " [" + row.source + "]");
    const Scenario s = row.scenario();
    ScheduleMaker m(s, kRfc);
    if (row.schedule) row.schedule(s, m);
    EXPECT_EQ(Describe(s, RunRfc(s, m.schedule())), row.on_rfc2015);
    for (const KernelAbi* abi : AllAbis()) {
      if (abi->info().model == kRfc) continue;
      SCOPED_TRACE(abi->info().name);
      EXPECT_THROW(RunRfc(s, Schedule{}, abi->info().model), InputError);
    }
  }
}

TEST(Rfc2015Test, UnmappedCpuPointerFaultsAtTheFirstWrite) {
  ScenarioBuilder b("bad_pointer");
  b.Cpus(1);
  b.Func("main").RfcRegion("r").Li(3, 0x1000).RfcCpuPtr(R(3)).Li(0, 0).Label("s").Li(5, 1).Label("c").St(Mem(3), 5)
      .Label("p").Ret().Label("x").Jmp("s").Region("r", "c", "p", "x");
  b.Thread("t0", "main", 0);
  const Scenario s = b.Build();
  const ExecutionResult r = RunRfc(s, Schedule{});
  EXPECT_EQ(r.verdict, Verdict::kSigsegv);
  EXPECT_NE(r.message.find("CPU pointer faults"), std::string::npos) << r.message;
}

TEST(Rfc2015Test, MergedKernelsRejectRegionProgramsAndRfcRejectsStructRseq) {
  const Scenario rfc = RegionProbe(Preemption::kFull);
  try {
    RunRfc(rfc, Schedule{}, KernelModel::kLegacy60);
    FAIL() << "no InputError";
  } catch (const InputError& e) {
    EXPECT_NE(e.message().find("`rfc_region` calls the 2015 RFC's restartable_sequences(), which kernel 6.0"),
              std::string::npos)
        << e.message();
    EXPECT_EQ(e.hint(), "run this scenario with --kernel rfc2015");
  }
  const Scenario rseq = ParseScenario(FindBuiltinScenario("percpu_counter")->text, "scenarios/percpu_counter.rsq");
  try {
    RunRfc(rseq, Schedule{}, kRfc);
    FAIL() << "no InputError";
  } catch (const InputError& e) {
    EXPECT_NE(e.message().find("needs struct rseq / sys_rseq"), std::string::npos) << e.message();
    EXPECT_GT(e.loc().line, 0u);
  }
}

ExploreResult Check(const Scenario& s) {
  ExploreOptions o;
  o.run.kernel = rules::Kernel(kRfc);
  o.bounds.max_events = 1;
  return Explore(s, o);
}

TEST(Rfc2015Test, SelfTestPassesEveryScheduleWithOneEvent) {
  const BuiltinScenario* b = FindBuiltinScenario("rfc2015_selftest");
  ASSERT_NE(b, nullptr);
  const Scenario s = ParseScenario(b->text, b->path);
  const ExploreResult r = Check(s);
  EXPECT_FALSE(r.failure.has_value()) << r.failure->message;
  EXPECT_TRUE(r.complete);
  EXPECT_EQ(r.executions, 1379u) << "golden count";
}

TEST(Rfc2015Test, PlantedBugIsFoundWithAOneEventCounterexampleThatReplays) {
  const BuiltinScenario* b = FindBuiltinScenario("buggy/rfc2015_cpu_read_outside");
  ASSERT_NE(b, nullptr);
  const Scenario s = ParseScenario(b->text, b->path);
  EXPECT_EQ(s.ExpectedOn(kRfc), Verdict::kPropertyFailed);
  EXPECT_EQ(RunRfc(s, Schedule{}).verdict, Verdict::kPass);
  ExploreOptions o;
  o.run.kernel = rules::Kernel(kRfc);
  o.bounds.max_events = 1;
  const ExploreResult r = Explore(s, o);
  ASSERT_TRUE(r.failure.has_value());
  EXPECT_EQ(r.failure->verdict, Verdict::kPropertyFailed);
  const Counterexample cx = BuildCounterexample(s, o, *r.failure);
  EXPECT_TRUE(cx.deterministic) << cx.determinism_problem;
  // Migrate w0 (it read CPU 0) to CPU 1, run it into the region there, run w1
  // through the region on CPU 0: both take lock[0].
  EXPECT_EQ(cx.schedule.NumEvents(), 1u);
  ASSERT_EQ(cx.schedule.entries.size(), 3u);
  EXPECT_EQ(cx.schedule.entries[0].boundary, 11u);
  EXPECT_EQ(cx.schedule.entries[0].decision, Decision::Migrate(0, 1));
  EXPECT_EQ(cx.run.verdict, Verdict::kPropertyFailed);
  // The token replays to the same failure.
  const Schedule back = DecodeSchedule(s, cx.token);
  EXPECT_EQ(back.kernel, kRfc);
  EXPECT_EQ(RunRfc(s, back).verdict, Verdict::kPropertyFailed);
}

TEST(Rfc2015Test, RegionSyntaxRoundTrips) {
  const BuiltinScenario* b = FindBuiltinScenario("rfc2015_selftest");
  ASSERT_NE(b, nullptr);
  const Scenario s = ParseScenario(b->text, b->path);
  const std::string printed = PrintScenario(s);
  EXPECT_NE(printed.find("  region lock_region start=start end=post restart=restart\n"), std::string::npos);
  EXPECT_NE(printed.find("  rfc_cpu_ptr r10\n"), std::string::npos);
  EXPECT_EQ(ParseScenario(printed, "printed.rsq"), s);
  Scenario v = RegionProbe(Preemption::kVoluntary);
  const std::string pv = PrintScenario(v);
  EXPECT_NE(pv.find("preempt voluntary\n"), std::string::npos);
  EXPECT_EQ(ParseScenario(pv, "printed.rsq").preemption, Preemption::kVoluntary);
}

// Bad input: file:line:col, the message and the fix.
struct BadCase {
  const char* body;  // lines inside `func main` before `end`, or whole statements
  const char* where_and_message;
  const char* hint;
};

TEST(Rfc2015Test, BadRegionInputNamesLineColumnAndFix) {
  const std::string head = "scenario bad\ncpus 1\nvar x: u64 = 0\n";
  const std::vector<BadCase> cases = {
      {"func main\n  ret\ns:\n  ret\n  region r start=s restart=s\nend\n", "bad.rsq:8:3: error: region 'r' needs start=, end= and restart=",
       "region NAME start=LABEL end=LABEL restart=LABEL"},
      {"func main\n  ret\n  region r start=a end=b abort=c\nend\n", "bad.rsq:6:26: error: unknown region field 'abort'",
       "fields are start=, end=, restart= and unchecked (a region has no flags, version or signature)"},
      {"func main\ns:\n  li r1, 1\np:\n  ret\n  region r start=p end=s restart=s\nend\n",
       "bad.rsq:9:10: error: region 'r': start label 'p' does not come before end label 's'",
       nullptr},
      {"func main\ns:\n  la r1, x\n  st [r1], r1\np:\n  ret\n  region r start=s end=p restart=s\nend\n",
       "bad.rsq:10:10: error: region 'r': restart label", nullptr},
      {"func main\n  rfc_region nope\n  ret\nend\n", "bad.rsq:5:3: error: undefined region 'nope'", nullptr},
      {"func main\ns:\n  la r1, x\n  st [r1], r1\np:\n  rseq_arm r\n  ret\nq:\n  ret\n  region r start=s end=p restart=q\nend\n",
       "bad.rsq:9:3: error: `rseq_arm` names region 'r', which is no struct rseq_cs",
       "a 2015-RFC region is registered once with `rfc_region NAME`"},
      {"preempt sometimes\nfunc main\n  ret\nend\n", "bad.rsq:4:9: error: unknown preemption model 'sometimes'", nullptr},
      {"preempt full\npreempt full\nfunc main\n  ret\nend\n", "bad.rsq:5:1: error: duplicate `preempt` statement", nullptr},
  };
  for (const BadCase& c : cases) {
    SCOPED_TRACE(c.body);
    try {
      ParseScenario(head + c.body + "thread t entry main cpu 0\n", "bad.rsq");
      ADD_FAILURE() << "accepted";
    } catch (const InputError& e) {
      EXPECT_NE(e.Format().find(c.where_and_message), std::string::npos) << e.Format();
      if (c.hint != nullptr) {
        EXPECT_EQ(e.hint(), c.hint);
      }
    }
  }
}

// The CLI: without --kernel a 2015-RFC built-in runs under rfc2015 (exit 0,
// replayable); with a merged kernel, run and diff-kernels exit 2 at the
// `rfc_region` line before exploring anything.
TEST(Rfc2015Test, CliPicksRfc2015AndRejectsMergedKernelsWithExitTwo) {
  const testing::CliResult run = testing::RunCli({"run", "rfc2015_selftest"});
  EXPECT_EQ(run.code, 0) << run.out << run.err;
  EXPECT_NE(run.out.find("verdict: PASS"), std::string::npos) << run.out;
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{"run", "rfc2015_selftest", "--kernel", "6.0"},
        std::vector<std::string>{"diff-kernels", "rfc2015", "6.19", "rfc2015_selftest"}}) {
    const testing::CliResult r = testing::RunCli(args);
    EXPECT_EQ(r.code, 2) << r.out << r.err;
    EXPECT_NE(r.err.find("scenarios/rfc2015_selftest.rsq:"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("hint: run this scenario with --kernel rfc2015"), std::string::npos) << r.err;
  }
}

}  // namespace
}  // namespace rseqmc
