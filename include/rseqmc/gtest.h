// GoogleTest glue for rseqmc: assert that a scenario is rseq-safe (no
// execution within the bounds fails) from a user's own test.
//
//     #include <rseqmc/gtest.h>
//
//     TEST(MyPercpuList, PushPopIsRseqSafe) {
//       rseqmc::api::CheckOptions o;
//       o.kernel = "6.6";
//       o.max_events = 1;
//       EXPECT_RSEQ_SAFE(rseqmc::api::Scenario::FromFile(MY_RSQ), o);
//     }
//
// On a failure the test fails with the verdict, the values that broke the
// property, the minimised counterexample's per-CPU timeline, and the command
// that replays it: `rseqmc replay FILE --schedule TOKEN`. When the scenario
// was not read from a file (FromText, the builder), its `.rsq` text is saved
// under ::testing::TempDir() and FILE names that copy; the HTML timeline
// viewer of the counterexample is saved next to it (`viewer:` line). A search
// stopped by a budget before exhausting the bounds fails too ("not proven"):
// raise the budget or lower the bounds. Errors in the scenario or the options
// (api::Error) fail the assertion with the diagnostic.
//
// Link `rseqmc::rseqmc` and `GTest::gtest`; nothing else is needed.
#ifndef RSEQMC_INCLUDE_RSEQMC_GTEST_H_
#define RSEQMC_INCLUDE_RSEQMC_GTEST_H_

#include <cctype>
#include <filesystem>
#include <fstream>
#include <string>

#include <gtest/gtest.h>

#include "rseqmc/rseqmc.h"

namespace rseqmc::gtest {

// Writes `text` to ::testing::TempDir()/`name`; returns the path ("" when it
// cannot be written).
inline std::string SaveTempFile(const std::string& name, const std::string& text) {
  std::string safe;
  for (char c : name) safe += (std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-' || c == '.') ? c : '_';
  const std::string path = ::testing::TempDir() + safe;
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << text;
  out.close();
  return out ? path : std::string();
}

// The readable failure message of a failed check.
inline std::string DescribeFailure(const char* scenario_expr, const api::Scenario& s, const api::CheckResult& r) {
  const api::Counterexample& cx = *r.counterexample;
  std::string file = s.file();
  if (file.empty() || !std::filesystem::exists(file)) file = SaveTempFile(s.name() + ".rsq", s.Text());
  const std::string viewer = SaveTempFile(s.name() + ".html", api::ReplayHtml(s, cx.token));
  std::string m = std::string(scenario_expr) + " (scenario " + s.name() + ") is not rseq-safe: verdict " + cx.verdict +
                  " after " + std::to_string(r.executions) + " executions (bounds " + r.bounds + ", kernel " +
                  r.kernel_model + ")\n" + cx.message + "\n\n" + cx.broken + "\ncounterexample (" +
                  std::to_string(cx.events) + " injected event" + (cx.events == 1 ? "" : "s") + ", minimised):\n" +
                  cx.timeline + "\nreplay:   " + api::ReplayCommand(s, cx.token, file) + "\n";
  if (!viewer.empty()) m += "viewer:   " + viewer + "\n";
  return m;
}

// Predicate-formatter behind EXPECT_RSEQ_SAFE / ASSERT_RSEQ_SAFE.
inline ::testing::AssertionResult RseqSafe(const char* scenario_expr, const char* options_expr,
                                           const api::Scenario& s, const api::CheckOptions& o) {
  api::CheckResult r;
  try {
    r = api::Check(s, o);
  } catch (const api::Error& e) {
    return ::testing::AssertionFailure() << "rseqmc could not check " << scenario_expr << " with " << options_expr
                                         << ":\n" << e.what();
  }
  switch (r.status) {
    case api::Status::kPass: return ::testing::AssertionSuccess();
    case api::Status::kIncomplete:
      return ::testing::AssertionFailure() << scenario_expr << " (scenario " << s.name() << ") not proven rseq-safe: "
                                           << "the search stopped early (" << r.stop_reason << ") after "
                                           << r.executions << " executions without a failure; raise the budget in "
                                           << options_expr << " or lower its bounds";
    case api::Status::kFail: break;
  }
  return ::testing::AssertionFailure() << DescribeFailure(scenario_expr, s, r);
}

}  // namespace rseqmc::gtest

// Non-fatal / fatal: every execution of `scenario` (an api::Scenario) within
// the bounds of `options` (an api::CheckOptions) passes.
#define EXPECT_RSEQ_SAFE(scenario, options) EXPECT_PRED_FORMAT2(::rseqmc::gtest::RseqSafe, scenario, options)
#define ASSERT_RSEQ_SAFE(scenario, options) ASSERT_PRED_FORMAT2(::rseqmc::gtest::RseqSafe, scenario, options)

#endif  // RSEQMC_INCLUDE_RSEQMC_GTEST_H_
