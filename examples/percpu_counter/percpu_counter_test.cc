// Model-checks our per-CPU counter from GoogleTest with rseqmc
// (rseqmc/gtest.h): the fixed critical section is rseq-safe under every
// single injected preemption, migration, signal or membarrier IPI; the planted
// bug (no cpu_id check at start_ip) is not, and the failure message shows the
// counterexample and how to replay it.
#include <string>

#include <gtest/gtest.h>
#include <gtest/gtest-spi.h>

#include <rseqmc/gtest.h>
#include <rseqmc/rseqmc.h>

namespace {

const std::string kDir = EXAMPLE_DIR;

rseqmc::api::CheckOptions Options() {
  rseqmc::api::CheckOptions o;
  o.kernel = "6.18";  // the rseq ABI of 6.0 .. 6.18
  o.max_events = 1;   // one injected event per execution, at every instruction boundary
  return o;
}

TEST(PercpuCounter, FixedSectionIsRseqSafe) {
  EXPECT_RSEQ_SAFE(rseqmc::api::Scenario::FromFile(kDir + "/counter_fixed.rsq"), Options());
}

// The planted bug must be caught, with a readable counterexample. (gtest-spi
// checks the failure without failing this test; the DISABLED_ test below is
// the same check as a user would see it fail.)
const rseqmc::api::Scenario* g_buggy = nullptr;

TEST(PercpuCounter, PlantedBugIsCaught) {
  const rseqmc::api::Scenario buggy = rseqmc::api::Scenario::FromFile(kDir + "/counter_planted_bug.rsq");
  g_buggy = &buggy;
  EXPECT_NONFATAL_FAILURE(EXPECT_RSEQ_SAFE(*g_buggy, Options()), "broken: property sum(counter) == THREADS");
  EXPECT_NONFATAL_FAILURE(EXPECT_RSEQ_SAFE(*g_buggy, Options()), "replay:   rseqmc replay ");
  g_buggy = nullptr;
}

TEST(PercpuCounter, DISABLED_PlantedBugAsUsersSeeIt) {
  EXPECT_RSEQ_SAFE(rseqmc::api::Scenario::FromFile(kDir + "/counter_planted_bug.rsq"), Options());
}

// A scenario built in C++ (no file): on failure its .rsq text is saved under
// the test's temporary directory so the replay command works.
TEST(PercpuCounter, BuiltScenarioIsRseqSafe) {
  rseqmc::api::ScenarioBuilder b("built_counter");
  b.Cpus(2).PerCpu("counter", "u64", 64)
      .Function("worker",
                "  la r10, counter\n"
                "retry:\n"
                "  rseq_load r1, cpu_id_start\n"
                "  shl r2, r1, 6\n"
                "  add r2, r2, r10\n"
                "  rseq_arm inc\n"
                "start:\n"
                "  rseq_load r6, cpu_id\n"
                "  bne r6, r1, abort\n"
                "  ld r7, [r2]\n"
                "  add r7, r7, 1\n"
                "  st [r2], r7\n"
                "post:\n"
                "  ret\n"
                "  sig 0x53053053\n"
                "abort:\n"
                "  jmp retry\n"
                "  cs inc start=start post_commit=post abort=abort\n")
      .Threads("w", "worker", 2)
      .Property("sum(counter) == 2")
      .Expect("pass");
  EXPECT_RSEQ_SAFE(b.Build(), Options());
}

}  // namespace
