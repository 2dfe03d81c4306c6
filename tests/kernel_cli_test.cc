// The kernel-ABI parts of the scenario format and of the command line:
// `expect VERDICT on KERNEL` (errors at file:line:column, exit 2),
// `rseqmc kernels`, `rseqmc check --kernel` against per-ABI expectations and
// `rseqmc diff-kernels` with a replayable schedule for each difference.
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "scenarios/builtin.h"
#include "scenarios/parser.h"
#include "scenarios/printer.h"
#include "sim/diag.h"
#include "sim/scenario.h"
#include "tests/cli_runner.h"

namespace rseqmc {
namespace {

using testing::RunCli;

constexpr char kBase[] =
    "scenario p\n"
    "func f\n"
    "  li r0, 0\n"
    "  ret\n"
    "end\n"
    "thread t entry f\n";  // 6 lines; an appended line is line 7

struct Bad {
  std::string extra;
  uint32_t column;
  std::string message;
};

TEST(KernelExpectTest, BadKernelExpectationsNameLineAndColumn) {
  const Bad cases[] = {
      {"expect fail property on 7.3", 25, "7.3"},
      {"expect fail property on 4.2", 25, "has no rseq"},
      {"expect pass on", 15, "expected a kernel"},
      {"expect pass onto 6.19", 13, "expected `on KERNEL`"},
      {"expect pass on 6.19, 6.19", 22, "duplicate expectation for kernel 6.19"},
      {"expect pass on 6.19 6.0", 21, "unexpected"},
  };
  for (const Bad& c : cases) {
    SCOPED_TRACE(c.extra);
    try {
      ParseScenario(std::string(kBase) + c.extra + "\n", "bad.rsq");
      ADD_FAILURE() << "no error";
    } catch (const InputError& e) {
      EXPECT_EQ(e.loc().line, 7u) << e.Format();
      EXPECT_EQ(e.loc().column, c.column) << e.Format();
      EXPECT_NE(e.message().find(c.message), std::string::npos) << e.Format();
    }
  }
  try {
    ParseScenario(std::string(kBase) + "expect pass\nexpect fail property\n", "bad.rsq");
    ADD_FAILURE() << "no error";
  } catch (const InputError& e) {
    EXPECT_EQ(e.loc().line, 8u) << e.Format();
    EXPECT_NE(e.message().find("duplicate `expect` without `on KERNEL` (first at line 7)"), std::string::npos)
        << e.Format();
  }
}

TEST(KernelExpectTest, PerKernelVerdictsParsePrintAndOverride) {
  const Scenario s =
      ParseScenario(std::string(kBase) + "expect pass\nexpect fail sigsegv on 5.10, 6.19\n", "ok.rsq");
  EXPECT_EQ(s.ExpectedOn(KernelModel::kLegacy60), Verdict::kPass);
  EXPECT_EQ(s.ExpectedOn(KernelModel::kLegacy418), Verdict::kSigsegv);
  EXPECT_EQ(s.ExpectedOn(KernelModel::k619), Verdict::kSigsegv);
  const std::string text = PrintScenario(s);
  EXPECT_NE(text.find("expect fail sigsegv on 4.18\nexpect fail sigsegv on 6.19\n"), std::string::npos) << text;
  EXPECT_EQ(ParseScenario(text, "printed.rsq"), s);
}

TEST(KernelCliTest, KernelsListsEveryAbiAndMarksTheRunningOne) {
  const auto r = RunCli({"kernels"});
  EXPECT_EQ(r.code, 0) << r.err;
  for (const char* name : {"4.18    4.18-5.19", "6.0     6.0-6.2", "mm_cid  6.3-6.18", "6.19    6.19"}) {
    EXPECT_NE(r.out.find(name), std::string::npos) << r.out;
  }
  EXPECT_EQ(RunCli({"kernels", "extra"}).code, 2);
}

TEST(KernelCliTest, CheckUsesTheExpectationOfTheChosenKernel) {
  const auto on619 = RunCli({"check", "tcmalloc_cached_slabs", "--kernel", "6.19"});
  EXPECT_EQ(on619.code, 0) << on619.out << on619.err;
  EXPECT_NE(on619.out.find("verdict:  fail property   expected: fail property   -> ok"), std::string::npos)
      << on619.out;
  const auto bad = RunCli({"check", "tcmalloc_cached_slabs", "--kernel", "7.1"});
  EXPECT_EQ(bad.code, 2);
}

TEST(KernelCliTest, DiffKernelsPrintsEachDifferenceWithAReplayThatReproducesIt) {
  const auto r = RunCli({"diff-kernels", "6.0", "6.19", "tcmalloc_cached_slabs", "--max-events", "0"});
  ASSERT_EQ(r.code, 1) << r.out << r.err;
  EXPECT_NE(r.out.find("0 outcomes of 2 under 6.0 not reached under 6.19"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("1 outcome of 3 under 6.19 not reached under 6.0"), std::string::npos) << r.out;
  const std::string only = "only under 6.19 (6.19 rework): property; ret w=1 resize=0; gen=1";
  ASSERT_NE(r.out.find(only), std::string::npos) << r.out;
  const size_t at = r.out.find("--schedule ", r.out.find(only));
  ASSERT_NE(at, std::string::npos);
  const std::string token = r.out.substr(at + 11, r.out.find('\n', at) - at - 11);
  const auto replay = RunCli({"replay", "tcmalloc_cached_slabs", "--schedule", token});
  EXPECT_NE(replay.out.find("verdict: FAIL (property)"), std::string::npos) << replay.out;
  EXPECT_NE(replay.out.find("[scenario expects: fail property]"), std::string::npos) << replay.out;
  EXPECT_EQ(RunCli({"diff-kernels", "6.0", "6.19", "percpu_counter", "--max-events", "1"}).code, 0);
  EXPECT_EQ(RunCli({"diff-kernels", "6.0", "9.9", "percpu_counter"}).code, 2);
}

// A finished comparison says each ABI's exploration is complete, with the
// golden execution counts (148 under 6.0, 186 under 6.19, as in the test
// above).
TEST(KernelCliTest, DiffKernelsSaysEachExplorationIsComplete) {
  const auto r = RunCli({"diff-kernels", "6.0", "6.19", "tcmalloc_cached_slabs", "--max-events", "0"});
  ASSERT_EQ(r.code, 1) << r.out << r.err;
  EXPECT_NE(r.out.find("\n  under 6.0: complete (148 executions, "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("\n  under 6.19: complete (186 executions, "), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("so far"), std::string::npos) << r.out;
  EXPECT_EQ(rseqmc::testing::WithoutSanitizerNotes(r.err), "") << r.err;
}

// --max-executions: an outcome missing under an ABI whose exploration is
// incomplete is only "not reached so far"; one missing under a complete
// exploration stays a proven difference (exit 1), and with none proven the
// partial report exits 3.
TEST(KernelCliTest, DiffKernelsLabelsDifferencesFromAnIncompleteExploration) {
  const std::vector<std::string> base = {"diff-kernels", "6.0", "6.19", "tcmalloc_cached_slabs", "--max-events", "0",
                                         "--max-executions"};
  auto with = [&](const char* n) {
    std::vector<std::string> a = base;
    a.push_back(n);
    return RunCli(a);
  };
  const auto both = with("100");
  ASSERT_EQ(both.code, 3) << both.out << both.err;
  EXPECT_NE(both.out.find("\n  under 6.0: INCOMPLETE: max-executions after 100 executions ("), std::string::npos)
      << both.out;
  EXPECT_NE(both.out.find("\n  under 6.19: INCOMPLETE: max-executions after 100 executions ("), std::string::npos)
      << both.out;
  EXPECT_NE(both.out.find("only under 6.19 (6.19 rework) so far: property; ret w=1 resize=0; gen=1"),
            std::string::npos)
      << both.out;
  EXPECT_NE(both.out.find("0 outcomes of 2 under 6.0 not reached so far under 6.19 (its exploration is incomplete: "
                          "they may only be unexplored there)"),
            std::string::npos)
      << both.out;
  EXPECT_NE(both.out.find("1 outcome of 3 under 6.19 not reached so far under 6.0 (its exploration is incomplete: "
                          "it may only be unexplored there)"),
            std::string::npos)
      << both.out;
  EXPECT_EQ(rseqmc::testing::WithoutSanitizerNotes(both.err),
            "rseqmc diff-kernels: incomplete; the report above is partial: 0 proven differences, 1 unproven\n");
  // 150: 6.0 completes (148 executions), 6.19 (186) does not.
  const auto one = with("150");
  ASSERT_EQ(one.code, 1) << one.out << one.err;
  EXPECT_NE(one.out.find("\n  under 6.0: complete (148 executions, "), std::string::npos) << one.out;
  EXPECT_NE(one.out.find("\n  under 6.19: INCOMPLETE: max-executions after 150 executions ("), std::string::npos)
      << one.out;
  EXPECT_NE(one.out.find("only under 6.19 (6.19 rework): property"), std::string::npos) << one.out;
  EXPECT_NE(one.out.find("1 outcome of 3 under 6.19 not reached under 6.0\n"), std::string::npos) << one.out;
  EXPECT_NE(one.out.find("0 outcomes of 2 under 6.0 not reached so far under 6.19"), std::string::npos) << one.out;
  EXPECT_EQ(rseqmc::testing::WithoutSanitizerNotes(one.err),
            "rseqmc diff-kernels: incomplete; the report above is partial: 1 proven difference, 0 unproven\n");
  EXPECT_EQ(with("0").code, 2);
}

// --time-limit bounds the whole command (each ABI gets its share), on a
// scenario that explores for far longer (over 70,000 executions per half
// second within 3 events, unfinished): both explorations are reported
// incomplete and the exit status is 3. A real SIGINT stops it too.
TEST(KernelCliTest, DiffKernelsTimeLimitAndCtrlCReportAnIncompleteExploration) {
  const std::vector<std::string> args = {"diff-kernels", "6.0",  "6.19",         "tcmalloc_cached_slabs",
                                         "--max-events", "3",    "--time-limit", "0.4"};
  const auto r = RunCli(args);
  ASSERT_EQ(r.code, 3) << r.out << r.err;
  EXPECT_NE(r.out.find("\n  under 6.0: INCOMPLETE: time-limit after "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("\n  under 6.19: INCOMPLETE: time-limit after "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("not reached so far under 6.0 (its exploration is incomplete"), std::string::npos) << r.out;
  EXPECT_NE(r.err.find("rseqmc diff-kernels: incomplete; the report above is partial: 0 proven differences"),
            std::string::npos)
      << r.err;
  const std::vector<std::string> sig = {"diff-kernels", "6.0",  "6.19",         "tcmalloc_cached_slabs",
                                        "--max-events", "3",    "--time-limit", "120"};
  const auto i = RunCli(sig, testing::Interrupt{true, 0.5});
  ASSERT_EQ(i.code, 3) << i.out << i.err;
  EXPECT_NE(i.out.find("\n  under 6.0: INCOMPLETE: interrupted after "), std::string::npos) << i.out;
  EXPECT_NE(i.out.find("\n  under 6.19: not explored (interrupted)\n"), std::string::npos) << i.out;
  EXPECT_NE(i.err.find("rseqmc diff-kernels: interrupted; the report above is partial"), std::string::npos) << i.err;
}

// Two names of one model (6.5 and 6.18 are both the mm_cid ABI): nothing to
// compare, said as a usage error (exit 2) naming the model, before any
// exploration.
TEST(KernelCliTest, DiffKernelsOfOneModelIsAUsageError) {
  for (const auto& [a, b] : {std::pair{"6.5", "6.18"}, std::pair{"mm_cid", "mm_cid"}, std::pair{"5.4", "4.18"}}) {
    const auto r = RunCli({"diff-kernels", a, b, "percpu_counter"});
    EXPECT_EQ(r.code, 2) << r.out << r.err;
    EXPECT_NE(r.err.find("denote one model"), std::string::npos) << r.err;
    EXPECT_EQ(r.out, "") << r.out;
  }
  const auto r = RunCli({"diff-kernels", "6.5", "6.18", "percpu_counter"});
  EXPECT_NE(r.err.find("(6.3-6.18 legacy + mm_cid)"), std::string::npos) << r.err;
}

// An unknown kernel name: the message lists every name `rseqmc kernels` has,
// mm_cid included (review finding F14), and the version ranges.
TEST(KernelCliTest, UnknownKernelNameListsTheNames) {
  const auto r = RunCli({"check", "percpu_counter", "--kernel", "mmcid"});
  EXPECT_EQ(r.code, 2);
  for (const char* name : {"rfc2015", "4.18", "6.0", "mm_cid", "6.19", "6.3..6.18"}) {
    EXPECT_NE(r.err.find(name), std::string::npos) << name << "\n" << r.err;
  }
}

}  // namespace
}  // namespace rseqmc
