// `--json` and `--html` of check, run and replay: one trace schema
// (docs/trace-schema.md) written by one writer (sim/trace.cc FormatJson), and
// the timeline viewer page that embeds it (sim/trace_html.h). The page's
// drawing is tested in a browser by tests/browser/viewer_test.py.
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "tests/cli_runner.h"
#include "tests/json_check.h"

namespace rseqmc {
namespace {

using testing::CliResult;
using testing::ReadFile;
using testing::IsValidJson;
using testing::RunCli;

std::string TempPath(const std::string& name) {
  return (std::filesystem::temp_directory_path() / ("rseqmc_viewer_" + std::to_string(getpid()) + "_" + name)).string();
}

// The value of the first "key": "..." string member after `from`.
std::string StringMember(const std::string& json, const std::string& key, size_t from = 0) {
  const std::string k = "\"" + key + "\":\"";
  const size_t at = json.find(k, from);
  if (at == std::string::npos) return "";
  return json.substr(at + k.size(), json.find('"', at + k.size()) - at - k.size());
}

TEST(ViewerCliTest, CheckJsonCarriesTheCounterexampleTraceInTheRunSchema) {
  const CliResult c = RunCli({"check", "buggy/cpu_not_rechecked", "--kernel", "6.18", "--json"});
  ASSERT_EQ(c.code, 0) << c.err;
  std::string error;
  ASSERT_TRUE(IsValidJson(c.out, &error)) << error;
  const size_t trace = c.out.find("\"trace\":{\"scenario\":\"cpu_not_rechecked\"");
  ASSERT_NE(trace, std::string::npos) << c.out;
  const std::string token = StringMember(c.out, "token");
  // The trace object is the one `replay --json` prints for the same token.
  const CliResult r = RunCli({"replay", "buggy/cpu_not_rechecked", "--schedule", token, "--json"});
  EXPECT_EQ(r.code, 1) << r.err;
  const std::string replay_doc = r.out.substr(0, r.out.find(",\"seed\":null"));
  EXPECT_NE(c.out.find(replay_doc), std::string::npos) << "check's trace differs from replay's:\n" << r.out;
  for (const char* member : {"\"layout\":[", "\"initial\":{", "\"code\":[", "\"sections\":[{\"name\":\"load_add_store_nocheck\"",
                             "\"start_cpu\":0", "\"cpus\":2"}) {
    EXPECT_NE(r.out.find(member), std::string::npos) << member << " missing from\n" << r.out;
  }
}

// A 100,000-step livelock (a sleep loop) has a 233,000-entry trace whose
// page was 35 MB (D8). Its repeated stretch is elided, the page says which
// steps it leaves out and why, and it stays under 2 MB; a short trace
// loses nothing.
TEST(ViewerCliTest, LongRepeatedStretchesAreElidedAndThePageSaysSo) {
  const std::string page_path = TempPath("livelock.html");
  const CliResult c =
      RunCli({"check", testing::Fixture("sleep_loop.rsq"), "-D", "N=0", "--html", page_path});
  ASSERT_EQ(c.code, 1) << c.err;  // the livelock
  const std::string page = ReadFile(page_path);
  EXPECT_LT(page.size(), 2u * 1024 * 1024);
  EXPECT_NE(page.find("<section id=\"elided\"><h2>Elided</h2><pre>233303 trace entries (steps 9..99995) are not "
                      "shown: they repeat the 7 entries before them, the same instructions and stores again"),
            std::string::npos)
      << page.substr(0, 4000);
  std::filesystem::remove(page_path);
  const CliResult d = RunCli({"check", testing::Fixture("sleep_loop.rsq"), "-D", "N=3", "--html", page_path});
  ASSERT_EQ(d.code, 0) << d.err;
  EXPECT_EQ(ReadFile(page_path).find("id=\"elided\""), std::string::npos);
  std::filesystem::remove(page_path);
}

TEST(ViewerCliTest, CheckAndReplayWriteTheSamePage) {
  const std::string check_page = TempPath("check.html"), replay_page = TempPath("replay.html");
  const CliResult c = RunCli({"check", "buggy/cpu_not_rechecked", "--kernel", "6.18", "--json", "--html", check_page});
  ASSERT_EQ(c.code, 0) << c.err;
  const std::string token = StringMember(c.out, "token");
  const CliResult r = RunCli({"replay", "buggy/cpu_not_rechecked", "--schedule", token, "--html", replay_page});
  EXPECT_EQ(r.code, 1) << r.err;
  const std::string page = ReadFile(check_page);
  EXPECT_EQ(page.rfind("<!DOCTYPE html>", 0), 0u);
  EXPECT_NE(page.find("broken: property sum(counter) == THREADS * OPS"), std::string::npos);
  EXPECT_NE(page.find("\"schedule\":\"" + token + "\""), std::string::npos);
  EXPECT_EQ(page.find("<script src"), std::string::npos);
  // The same execution, broken values and replay command (both print `rseqmc replay`).
  EXPECT_EQ(ReadFile(replay_page), page);
  std::filesystem::remove(check_page);
  std::filesystem::remove(replay_page);
}

TEST(ViewerCliTest, HtmlUsageErrors) {
  const std::string page = TempPath("usage.html");
  EXPECT_EQ(RunCli({"check", "--html", page}).code, 2);  // every built-in: which one?
  EXPECT_EQ(RunCli({"check", "percpu_counter", "buggy/no_signature", "--html", page}).code, 2);
  EXPECT_EQ(RunCli({"run", "--html", page}).code, 2);
  const CliResult unwritable = RunCli({"run", "percpu_counter", "--html", "/nonexistent/dir/x.html"});
  EXPECT_EQ(unwritable.code, 2);
  EXPECT_NE(unwritable.err.find("/nonexistent/dir/x.html"), std::string::npos) << unwritable.err;
  // A passing scenario has no counterexample: nothing is written, and it says so.
  const CliResult pass = RunCli({"check", "percpu_counter", "--kernel", "6.18", "--html", page});
  EXPECT_EQ(pass.code, 0);
  EXPECT_FALSE(std::filesystem::exists(page));
  EXPECT_NE(pass.err.find("not written"), std::string::npos) << pass.err;
}

// --html OUT never replaces a file rseqmc did not write (the project rule:
// nothing the user gave is overwritten): an existing file that is not a
// timeline page is refused with exit 2 before anything runs, and kept byte
// for byte; a page rseqmc wrote earlier is replaced, so the same command
// can be run again.
TEST(ViewerCliTest, HtmlNeverOverwritesAFileRseqmcDidNotWrite) {
  const std::string page = TempPath("precious.html");
  const std::string precious = "my notes: do not lose\n";
  const std::string refusal = page + ": error: exists and is not an rseqmc timeline page; refusing to overwrite it";
  {
    std::ofstream(page, std::ios::binary) << precious;
  }
  const CliResult run = RunCli({"run", "percpu_counter", "--html", page});
  EXPECT_EQ(run.code, 2) << run.err;
  EXPECT_NE(run.err.find(refusal), std::string::npos) << run.err;
  EXPECT_EQ(run.out, "");  // refused before the execution ran
  const CliResult check = RunCli({"check", "buggy/no_signature", "--kernel", "6.18", "--html", page});
  EXPECT_EQ(check.code, 2) << check.err;
  EXPECT_NE(check.err.find(refusal), std::string::npos) << check.err;
  EXPECT_EQ(check.out, "");  // refused before the exploration
  const CliResult replay = RunCli({"replay", "percpu_counter", "--schedule", "rsq1.AAAA", "--html", page});
  EXPECT_EQ(replay.code, 2) << replay.err;
  EXPECT_NE(replay.err.find(refusal), std::string::npos) << replay.err;
  EXPECT_EQ(ReadFile(page), precious);
  // A page rseqmc wrote is replaced; an empty file (mktemp) is written.
  std::filesystem::remove(page);
  ASSERT_EQ(RunCli({"run", "percpu_counter", "--html", page}).code, 0);
  const CliResult again = RunCli({"check", "buggy/no_signature", "--kernel", "6.18", "--html", page});
  EXPECT_EQ(again.code, 0) << again.err;
  EXPECT_NE(ReadFile(page).find("no_signature"), std::string::npos);
  {
    std::ofstream(page, std::ios::binary | std::ios::trunc);
  }
  EXPECT_EQ(RunCli({"run", "percpu_counter", "--html", page}).code, 0);
  EXPECT_EQ(ReadFile(page).rfind("<!DOCTYPE html>", 0), 0u);
  std::filesystem::remove(page);
}

}  // namespace
}  // namespace rseqmc
