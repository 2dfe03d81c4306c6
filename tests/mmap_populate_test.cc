// Seed workload 2 (issue 13): the mmap_lock / MAP_POPULATE model of
// scenarios/mmap_populate.rsq, checked through the CLI exactly as a user runs
// it. Each configuration (6.1 or c.2013 rwsem rules; populate under the write
// lock, under the read lock, or patch 0003's drop-when-contended) passes with
// its golden DPOR execution count; each planted bug is found with a one-event
// counterexample whose replay gives the same verdict; the invariants' oracles
// (no page outside a live VMA, VMA tree consistent, no lost wake-up, writer
// starvation bound) each fire on a model that breaks them.
#include <cstdio>
#include <fstream>
#include <string>
#include <string_view>
#include <vector>

#include <gtest/gtest.h>

#include "scenarios/builtin.h"
#include "tests/cli_runner.h"

namespace rseqmc {
namespace {

using testing::CliResult;
using testing::RunCli;

// `rseqmc check SCENARIO --json --kernel 6.19 DEFINES...` (one JSON line).
CliResult Check(const std::string& scenario, const std::vector<std::string>& defines) {
  std::vector<std::string> args = {"check", scenario, "--json", "--kernel", "6.19"};
  for (const std::string& d : defines) {
    args.push_back("-D");
    args.push_back(d);
  }
  return RunCli(args);
}

bool Has(const std::string& text, const std::string& needle) { return text.find(needle) != std::string::npos; }

// The counterexample token of a --json report ("token":"rsq1...").
std::string Token(const std::string& json) {
  const std::string key = "\"token\":\"";
  const size_t at = json.find(key);
  if (at == std::string::npos) return "";
  const size_t from = at + key.size();
  return json.substr(from, json.find('"', from) - from);
}

struct PassCase {
  std::vector<std::string> defines;
  const char* executions;  // golden DPOR count at --max-events 1 (the default)
};

TEST(MmapPopulate, EveryLockAndPopulateVariantPassesWithGoldenCounts) {
  const std::vector<PassCase> cases = {
      {{}, "\"executions\":303,"},                                   // 6.1 rwsem, patch 0003 (CHUNK 2)
      {{"POPULATE=1"}, "\"executions\":291,"},                       // 6.1: read lock held throughout
      {{"POPULATE=0"}, "\"executions\":258,"},                       // pre-3.9: under the write lock
      {{"RWSEM_2013=1"}, "\"executions\":363,"},                     // c.2013 rwsem, patch 0003
      {{"RWSEM_2013=1", "POPULATE=0"}, "\"executions\":300,"},  // the 2013 kernel itself
      {{"TOUCH=1"}, "\"executions\":335,"},                          // plus a faulting reader
      {{"HPAGE=2"}, "\"executions\":285,"},                          // THP: 2-page huge pages
      {{"HPAGE=4", "TOUCH=1"}, "\"executions\":329,"},               // THP, the whole VMA one huge page
  };
  for (const PassCase& c : cases) {
    const CliResult r = Check("mmap_populate", c.defines);
    const std::string what = c.defines.empty() ? "defaults" : c.defines.front();
    EXPECT_EQ(r.code, 0) << what << "\n" << r.out << r.err;
    EXPECT_TRUE(Has(r.out, "\"verdict\":\"pass\"")) << what << "\n" << r.out;
    EXPECT_TRUE(Has(r.out, "\"complete\":true")) << what << "\n" << r.out;
    EXPECT_TRUE(Has(r.out, c.executions)) << what << "\n" << r.out.substr(0, 600);
  }
}

struct BugCase {
  std::vector<std::string> defines;
  const char* verdict;
  const char* message;
};

TEST(MmapPopulate, PlantedBugsAreFoundWithOneEventAndReplay) {
  const std::vector<BugCase> cases = {
      {{"BUG=1"}, "assert", "page populated outside a live VMA"},
      {{"BUG=2"}, "assert", "page populated for a VMA that is no longer live"},
      {{"BUG=2", "RWSEM_2013=1"}, "assert", "page populated for a VMA that is no longer live"},
      {{"BUG=2", "HPAGE=2"}, "assert", "page populated for a VMA that is no longer live"},
      {{"BUG=3"}, "deadlock", "every live thread waits on a futex that no thread can wake"},
      {{"BUG=3", "RWSEM_2013=1"}, "deadlock", "every live thread waits on a futex that no thread can wake"},
      {{"BUG=4"}, "assert", "VMA tree: two live VMAs overlap"},
      {{"STARVE_BOUND=0", "TOUCH=1"}, "assert", "writer starved"},
  };
  for (const BugCase& c : cases) {
    const CliResult r = Check("mmap_populate", c.defines);
    const std::string what = c.defines.front() + (c.defines.size() > 1 ? " " + c.defines[1] : "");
    EXPECT_EQ(r.code, 1) << what << "\n" << r.err;
    EXPECT_TRUE(Has(r.out, std::string("\"verdict\":\"") + c.verdict + "\"")) << what << "\n" << r.out.substr(0, 800);
    EXPECT_TRUE(Has(r.out, c.message)) << what << "\n" << r.out.substr(0, 800);
    EXPECT_TRUE(Has(r.out, "\"events\":1,\"decisions\":1")) << what << ": not a one-event counterexample";
    EXPECT_TRUE(Has(r.out, "\"fewest_events_proven\":true")) << what;
    const std::string token = Token(r.out);
    ASSERT_FALSE(token.empty()) << what;
    std::vector<std::string> replay = {"replay", "mmap_populate", "--schedule", token, "--kernel", "6.19"};
    for (const std::string& d : c.defines) {
      replay.push_back("-D");
      replay.push_back(d);
    }
    const CliResult again = RunCli(replay);
    EXPECT_TRUE(Has(again.out, c.message)) << what << " replay:\n" << again.out << again.err;
  }
}

// Two CPUs (the threads run in parallel): a seeded random sample of 2,000
// schedules passes, and every planted bug is still found by it.
TEST(MmapPopulate, TwoCpusRandomSample) {
  const std::vector<std::string> base = {"check", "mmap_populate", "--json", "--kernel", "6.19", "-D", "CPUS=2",
                                         "--strategy", "random", "--seed", "1", "--max-executions", "2000"};
  const CliResult ok = RunCli(base);
  EXPECT_EQ(ok.code, 0) << ok.out.substr(0, 600) << ok.err;
  EXPECT_TRUE(Has(ok.out, "\"executions\":2000,")) << ok.out.substr(0, 600);
  for (const char* bug : {"BUG=1", "BUG=2", "BUG=3", "BUG=4"}) {
    std::vector<std::string> args = base;
    args.insert(args.end(), {"-D", bug});
    const CliResult r = RunCli(args);
    EXPECT_EQ(r.code, 1) << bug << "\n" << r.out.substr(0, 600) << r.err;
    EXPECT_FALSE(Has(r.out, "\"verdict\":\"pass\"")) << bug;
  }
}

// The drop-when-contended path is reached: some schedule of the default model
// drops mmap_lock (drops == 0 is refuted), and the 6.1 model never drops it.
TEST(MmapPopulate, PatchDropsTheLockOnlyWhenEnabled) {
  const BuiltinScenario* b = FindBuiltinScenario("mmap_populate");
  ASSERT_NE(b, nullptr);
  const std::string path = ::testing::TempDir() + "mmap_populate_drops.rsq";
  std::ofstream(path) << b->text << "\nproperty drops == 0\n";
  // The scenario includes the rwsem library from its own folder.
  const std::string_view* lib = FindBuiltinLibrary("scenarios/mmap_lock.rsqi");
  ASSERT_NE(lib, nullptr);
  const std::string lib_path = ::testing::TempDir() + "mmap_lock.rsqi";
  std::ofstream(lib_path) << *lib;
  const CliResult patched = Check(path, {});
  EXPECT_TRUE(Has(patched.out, "\"verdict\":\"property\"")) << patched.out.substr(0, 600);
  const CliResult held = Check(path, {"POPULATE=1"});
  EXPECT_TRUE(Has(held.out, "\"verdict\":\"pass\"")) << held.out.substr(0, 600);
  std::remove(path.c_str());
  std::remove(lib_path.c_str());
}

}  // namespace
}  // namespace rseqmc
