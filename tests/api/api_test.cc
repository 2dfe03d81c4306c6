// The public API (include/rseqmc/rseqmc.h) and its GoogleTest and RapidCheck
// glue, used exactly as a user's project uses them: this target links only
// rseqmc::rseqmc (librseqmc.so), GoogleTest and RapidCheck.
#include <algorithm>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest-spi.h>
#include <gtest/gtest.h>
#include <rapidcheck.h>

#include "rseqmc/gtest.h"
#include "rseqmc/rapidcheck.h"
#include "rseqmc/rseqmc.h"

namespace {

using rseqmc::api::CheckOptions;
using rseqmc::api::CheckResult;
using rseqmc::api::Scenario;
using rseqmc::api::ScenarioBuilder;
using rseqmc::api::Status;

CheckOptions Kernel618() {
  CheckOptions o;
  o.kernel = "6.18";
  return o;
}

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// The per-CPU counter section of examples/percpu_counter, as builder input.
std::string CounterBody(bool check_cpu) {
  std::string body =
      "  la r10, counter\nretry:\n  rseq_load r1, cpu_id_start\n  shl r2, r1, 6\n  add r2, r2, r10\n"
      "  rseq_arm inc\nstart:\n";
  if (check_cpu) body += "  rseq_load r6, cpu_id\n  bne r6, r1, abort\n";
  return body +
         "  ld r7, [r2]\n  add r7, r7, 1\n  st [r2], r7\npost:\n  ret\n  sig 0x53053053\nabort:\n  jmp retry\n"
         "  cs inc start=start post_commit=post abort=abort\n";
}

Scenario BuiltCounter(bool check_cpu) {
  ScenarioBuilder b(check_cpu ? "built_fixed" : "built_bug");
  b.Cpus(2).PerCpu("counter", "u64", 64).Function("worker", CounterBody(check_cpu));
  // Both threads start on CPU 0: one migration before start_ip then races
  // the two increments on counter[0] (scenarios/buggy/cpu_not_rechecked.rsq).
  return b.Threads("w", "worker", 2, /*start_cpu=*/0).Property("sum(counter) == 2").Build();
}

TEST(Api, VersionIsTheProjects) { EXPECT_STREQ(rseqmc::api::Version(), "0.1.0"); }

TEST(Api, CorrectBuiltinPassesWithTheGoldenExecutionCount) {
  const CheckResult r = rseqmc::api::Check(Scenario::Builtin("percpu_counter"), Kernel618());
  EXPECT_EQ(r.status, Status::kPass);
  EXPECT_EQ(r.verdict, "pass");
  EXPECT_TRUE(r.as_expected);
  EXPECT_EQ(r.executions, 81u);  // tests/golden/explore_counts.txt: percpu_counter | dpor events<=1
  EXPECT_EQ(r.distinct_outcomes, 4u);
  EXPECT_EQ(r.stop_reason, "exhausted");
  EXPECT_EQ(r.bounds, "events<=1");
  EXPECT_EQ(r.kernel_model, "6.3-6.18 legacy + mm_cid");
  EXPECT_FALSE(r.counterexample.has_value());
}

TEST(Api, PlantedBugGivesAMinimalReplayableCounterexample) {
  const Scenario s = Scenario::Builtin("buggy/cpu_not_rechecked");
  EXPECT_EQ(s.expected(), "property");
  const CheckResult r = rseqmc::api::Check(s, Kernel618());
  ASSERT_EQ(r.status, Status::kFail);
  EXPECT_EQ(r.verdict, "property");
  EXPECT_TRUE(r.as_expected);
  const rseqmc::api::Counterexample& cx = *r.counterexample;
  EXPECT_EQ(cx.events, 1u);
  EXPECT_TRUE(cx.deterministic);
  EXPECT_NE(cx.broken.find("broken: property sum(counter) == THREADS * OPS"), std::string::npos) << cx.broken;
  EXPECT_NE(cx.broken.find("sum(counter) = 1"), std::string::npos) << cx.broken;
  EXPECT_NE(cx.timeline.find("** MIGRATE"), std::string::npos) << cx.timeline;
  EXPECT_EQ(cx.json.front(), '{');
  EXPECT_NE(cx.json.find("\"schedule\":\"" + cx.token + "\""), std::string::npos);
  // Replay round trip: the token gives the same failure and the same trace.
  const rseqmc::api::Replayed again = rseqmc::api::Replay(s, cx.token);
  EXPECT_EQ(again.verdict, "property");
  EXPECT_EQ(again.timeline, cx.timeline);
  EXPECT_EQ(again.json, cx.json);
  EXPECT_EQ(rseqmc::api::ReplayCommand(s, cx.token),
            "rseqmc replay scenarios/buggy/cpu_not_rechecked.rsq --schedule " + cx.token);
}

TEST(Api, DefinesChangeTheScenarioAndAreRepeatedInTheReplayCommand) {
  const Scenario s = Scenario::Builtin("buggy/cpu_not_rechecked", {{"OPS", 2}});
  const CheckResult r = rseqmc::api::Check(s, Kernel618());
  ASSERT_EQ(r.status, Status::kFail);
  EXPECT_NE(r.counterexample->broken.find("sum(counter) = 3"), std::string::npos) << r.counterexample->broken;
  EXPECT_NE(rseqmc::api::ReplayCommand(s, "TOKEN").find(" -D OPS=2"), std::string::npos);
}

TEST(Api, TextAndBuilderScenariosAreChecked) {
  EXPECT_EQ(rseqmc::api::Check(BuiltCounter(true), Kernel618()).status, Status::kPass);
  const CheckResult bug = rseqmc::api::Check(BuiltCounter(false), Kernel618());
  EXPECT_EQ(bug.status, Status::kFail);
  EXPECT_EQ(bug.verdict, "property");
  // The builder's text parses back to the same scenario.
  const Scenario s = BuiltCounter(true);
  const Scenario t = Scenario::FromText(s.Text(), "copy.rsq");
  EXPECT_EQ(t.Text(), s.Text());
  EXPECT_EQ(t.file(), "copy.rsq");
}

TEST(Api, BadInputIsAnErrorWithFileLineAndColumn) {
  try {
    Scenario::FromText("scenario x\ncpus 2\nvar v: u65 = 0\n", "bad.rsq");
    FAIL() << "no error";
  } catch (const rseqmc::api::Error& e) {
    EXPECT_EQ(e.file(), "bad.rsq");
    EXPECT_EQ(e.line(), 3u);
    EXPECT_GT(e.column(), 0u);
    EXPECT_NE(std::string(e.what()).find("bad.rsq:3:"), std::string::npos) << e.what();
  }
  ScenarioBuilder b("broken");
  b.Function("f", "  frobnicate r1\n");
  try {
    b.Build();
    FAIL() << "no error";
  } catch (const rseqmc::api::Error& e) {
    EXPECT_EQ(e.file(), "<builder broken>");
    EXPECT_EQ(e.line(), 3u);  // scenario, func, the instruction
  }
  EXPECT_THROW(Scenario::FromFile("/nonexistent/x.rsq"), rseqmc::api::Error);
  EXPECT_THROW(Scenario::Builtin("no_such_scenario"), rseqmc::api::Error);
  EXPECT_THROW(Scenario::FromText("scenario x\n", "x.rsq", {{"NOPE", 1}}), rseqmc::api::Error);
}

TEST(Api, BadOptionsAreErrorsNamingTheChoices) {
  const Scenario s = Scenario::Builtin("percpu_counter");
  CheckOptions o;
  o.kernel = "7.99";
  EXPECT_THROW(rseqmc::api::Check(s, o), rseqmc::api::Error);
  o = CheckOptions();
  o.strategy = "bfs";
  try {
    rseqmc::api::Check(s, o);
    FAIL() << "no error";
  } catch (const rseqmc::api::Error& e) {
    EXPECT_NE(std::string(e.what()).find("dpor, dfs, stateful, random or pct"), std::string::npos);
  }
  EXPECT_THROW(rseqmc::api::Replay(s, "rsq1.notatoken"), rseqmc::api::Error);
  for (auto spoil : std::vector<void (*)(CheckOptions&)>{
           [](CheckOptions& b) { b.pct_depth = 0; }, [](CheckOptions& b) { b.pct_depth = 65; },
           [](CheckOptions& b) { b.max_steps = 0; }, [](CheckOptions& b) { b.max_executions = 0; },
           [](CheckOptions& b) { b.time_limit_seconds = -1; }, [](CheckOptions& b) { b.time_limit_seconds = 0; }}) {
    CheckOptions bad = Kernel618();
    spoil(bad);
    EXPECT_THROW(rseqmc::api::Check(s, bad), rseqmc::api::Error);
  }
}

TEST(Api, BudgetStopsAreIncompleteNotPass) {
  CheckOptions o = Kernel618();
  o.max_executions = 10;
  const CheckResult r = rseqmc::api::Check(Scenario::Builtin("percpu_counter"), o);
  EXPECT_EQ(r.status, Status::kIncomplete);
  EXPECT_EQ(r.executions, 10u);
  EXPECT_EQ(r.stop_reason, "max-executions");
}

TEST(Api, ReplayHtmlIsOneSelfContainedPage) {
  const Scenario s = Scenario::Builtin("buggy/cpu_not_rechecked");
  const CheckResult r = rseqmc::api::Check(s, Kernel618());
  ASSERT_EQ(r.status, Status::kFail);
  const std::string html = rseqmc::api::ReplayHtml(s, r.counterexample->token);
  EXPECT_EQ(html.rfind("<!DOCTYPE html>", 0), 0u);
  EXPECT_NE(html.find(r.counterexample->json.substr(0, r.counterexample->json.size() - 1)), std::string::npos);
  EXPECT_EQ(html.find("<script src"), std::string::npos);
  EXPECT_EQ(html.find("<link"), std::string::npos);
  EXPECT_EQ(html.find("https://"), std::string::npos);
}

// ---- GoogleTest glue ----

const Scenario* g_scenario = nullptr;

TEST(ApiGtest, SafeScenarioPasses) { EXPECT_RSEQ_SAFE(Scenario::Builtin("percpu_counter"), Kernel618()); }

TEST(ApiGtest, UnsafeScenarioFailsWithTimelineAndReplayCommand) {
  const Scenario s = Scenario::Builtin("buggy/cpu_not_rechecked");
  g_scenario = &s;
  EXPECT_NONFATAL_FAILURE(EXPECT_RSEQ_SAFE(*g_scenario, Kernel618()), "is not rseq-safe: verdict property");
  EXPECT_NONFATAL_FAILURE(EXPECT_RSEQ_SAFE(*g_scenario, Kernel618()), "** MIGRATE");
  EXPECT_NONFATAL_FAILURE(EXPECT_RSEQ_SAFE(*g_scenario, Kernel618()), "replay:   rseqmc replay ");
  EXPECT_FATAL_FAILURE(ASSERT_RSEQ_SAFE(*g_scenario, Kernel618()), "broken: property sum(counter)");
  g_scenario = nullptr;
}

TEST(ApiGtest, ABuiltScenarioIsSavedSoItsReplayCommandRuns) {
  const Scenario s = BuiltCounter(false);
  const CheckResult r = rseqmc::api::Check(s, Kernel618());
  ASSERT_EQ(r.status, Status::kFail);
  const std::string message = rseqmc::gtest::DescribeFailure("s", s, r);
  const std::string saved = ::testing::TempDir() + "built_bug.rsq";
  EXPECT_NE(message.find("replay:   rseqmc replay " + saved + " --schedule " + r.counterexample->token),
            std::string::npos)
      << message;
  EXPECT_EQ(ReadFile(saved), s.Text());
  EXPECT_NE(ReadFile(::testing::TempDir() + "built_bug.html").find("<!DOCTYPE html>"), std::string::npos);
}

TEST(ApiGtest, OptionErrorsFailTheAssertionWithTheDiagnostic) {
  static const Scenario s = Scenario::Builtin("percpu_counter");
  static CheckOptions bad;
  bad.kernel = "3.0";
  EXPECT_NONFATAL_FAILURE(EXPECT_RSEQ_SAFE(s, bad), "rseqmc could not check");
}

TEST(ApiGtest, IncompleteSearchIsNotAPass) {
  static const Scenario s = Scenario::Builtin("percpu_counter");
  static CheckOptions small = [] {
    CheckOptions o = Kernel618();
    o.max_executions = 5;
    return o;
  }();
  EXPECT_NONFATAL_FAILURE(EXPECT_RSEQ_SAFE(s, small), "not proven rseq-safe");
}

// ---- RapidCheck glue ----

// rseq_load_add_store with or without the cpu_id compare at start_ip.
std::string AddOp(bool check_cpu) {
  return std::string("  rseq_arm add\nstart:\n") + (check_cpu ? "  rseq_load r6, cpu_id\n  bne r6, r1, abort\n" : "") +
         "  ld r7, [r2]\n  add r7, r7, r3\n  st [r2], r7\npost:\n  li r0, 0\n  ret\n  sig 0x53053053\n"
         "abort:\n  li r0, -1\n  ret\n  cs add start=start post_commit=post abort=abort\n";
}

TEST(ApiRapidcheck, WorkloadsBuildAndStateTheirSum) {
  EXPECT_TRUE(rc::check("every workload builds and states ops * sum(delta)", [] {
    const auto w = *rseqmc::rcgen::GenCounterWorkload(AddOp(true), "add_op");
    RC_ASSERT(w.start_cpu.size() == w.delta.size());
    RC_ASSERT(std::all_of(w.start_cpu.begin(), w.start_cpu.end(), [&](uint32_t c) { return c < w.cpus; }));
    const Scenario s = w.Build();
    RC_ASSERT(s.Text().find("property sum(counter) == " + std::to_string(w.ExpectedSum())) != std::string::npos);
  }));
}

TEST(ApiRapidcheck, CorrectOperationIsSafeInGeneratedWorkloads) {
  EXPECT_TRUE(rc::check("add with the cpu check is rseq-safe", [] {
    const auto w = *rseqmc::rcgen::GenCounterWorkload(AddOp(true), "add_op", /*max_threads=*/2);
    CheckOptions o;
    o.kernel = *rseqmc::rcgen::GenKernel();
    RC_ASSERT(rseqmc::api::Check(w.Build(), o).status == Status::kPass);
  }));
}

TEST(ApiRapidcheck, PlantedBugIsFoundByTheGenerator) {
  // Without the cpu_id compare, a workload with two unpinned threads sharing
  // a CPU loses an increment; RapidCheck must find one and shrink it.
  // A fixed seed makes the search repeatable: rc::check draws a new seed per
  // run, and some seeds (2066650429744630304) pass all its 100 tests: the
  // first tests are small, mostly one CPU or one thread, where the bug cannot
  // show (found after 51-65 tests on other seeds).
  rc::detail::TestParams params;
  params.seed = 20261202;
  params.maxSuccess = 1000;
  const rc::detail::TestResult r = rc::detail::checkTestable(
      [] {
        const auto w = *rseqmc::rcgen::GenCounterWorkload(AddOp(false), "add_op", /*max_threads=*/2);
        RC_ASSERT(rseqmc::api::Check(w.Build(), Kernel618()).status == Status::kPass);
      },
      rc::detail::TestMetadata{}, params);
  rc::detail::FailureResult failure;
  ASSERT_TRUE(r.match(failure)) << "the generator did not find the lost increment";
  EXPECT_NE(failure.counterExample.size(), 0u);
}

}  // namespace
