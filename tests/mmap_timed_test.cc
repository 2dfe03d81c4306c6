// The mmap model in simulated time (issue 13 §2): tools/mmap-seed/sim/
// mmap_timed.rsq under a fixed cost model gives exact, repeatable figures;
// populate under the write lock makes another mmap() wait at least the
// populate; under the 6.1 rwsem a populate holding the read lock (nearly)
// serialises the workers, under the c.2013 one and with patch 0003's
// drop-when-contended it does not; and the
// calibration's fit (tools/mmap-seed/calibrate_fit.h) is exact arithmetic.
#include <algorithm>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "scenarios/parser.h"
#include "sim/cost_model.h"
#include "sim/timed_scheduler.h"
#include "tests/cli_runner.h"
#include "tools/mmap-seed/calibrate_fit.h"

namespace rseqmc {
namespace {

using rseqmc::testing::CliResult;
using rseqmc::testing::RunCli;

const std::string kScenario = std::string(RSEQMC_SOURCE_DIR) + "/tools/mmap-seed/sim/mmap_timed.rsq";

// Round costs, so that expected figures can be derived by hand: a populated
// page costs POPULATE_PAGE_NS + ZERO_4K_NS = 500 ns, a touched one 1100 ns.
std::map<std::string, int64_t> Defines(std::map<std::string, int64_t> extra) {
  std::map<std::string, int64_t> d = {{"SYSCALL_NS", 500},      {"MMAP_NS", 1000},   {"MUNMAP_NS", 1000},
                                      {"FAULT_NS", 1000},       {"ZERO_4K_NS", 100}, {"POPULATE_PAGE_NS", 400},
                                      {"FAULT_2M_NS", 10000},   {"ZERO_2M_NS", 50000}};
  for (const auto& [k, v] : extra) d[k] = v;
  return d;
}

CostModel FixedCost() {
  CostModel c;  // the defaults of sim/cost_model.h
  c.clock_ns = 0;
  return c;
}

struct Figures {
  Verdict verdict;
  std::vector<int64_t> thread_ns, wait_ns, wwait_ns;
  int64_t drops;
  uint64_t end_ns;
};

Figures Simulate(const std::map<std::string, int64_t>& extra, uint64_t seed = 1) {
  const std::map<std::string, int64_t> d = Defines(extra);
  const Scenario s = ParseScenarioFile(kScenario, d);
  TimedRunOptions o;
  o.seed = seed;
  o.shown_symbols = {{"thread_ns", 8}, {"wait_ns", 8}, {"wwait_ns", 8}, {"drops", 8}};
  const TimedReport r = SimulateTimed(s, FixedCost(), o);
  const size_t n = static_cast<size_t>(d.contains("THREADS") ? d.at("THREADS") : 4);
  const auto first = [n](const std::vector<int64_t>& v) { return std::vector<int64_t>(v.begin(), v.begin() + n); };
  return {r.verdict, first(r.shown[0].values), first(r.shown[1].values), first(r.shown[2].values),
          r.shown[3].values[0], r.stats.end_ns};
}

TEST(MmapTimed, PopulateUnderTheWriteLockMakesTheOtherMmapWaitThePopulate) {
  // 2 threads, one 8 MiB MAP_POPULATE each, pre-3.9 (MODE 2) on the c.2013 rwsem.
  const Figures f = Simulate({{"THREADS", 2}, {"CPUS", 2}, {"MAPS", 1}, {"PAGES", 2048}, {"MODE", 2}, {"RWSEM_2013", 1}});
  ASSERT_EQ(f.verdict, Verdict::kPass);
  const int64_t populate_ns = 2048 * 500;  // the winner's populate, all under the write lock
  const int64_t loser = f.wwait_ns[0] > f.wwait_ns[1] ? 0 : 1;
  EXPECT_GE(f.wwait_ns[loser], populate_ns + 1000);  // + the winner's do_mmap
  EXPECT_EQ(f.wait_ns[loser], f.wwait_ns[loser]);   // no read lock taken in MODE 2
  EXPECT_EQ(f.thread_ns, (std::vector<int64_t>{1028130, 2054983}));
  EXPECT_EQ(f.wwait_ns, (std::vector<int64_t>{15, 1027681}));
}

TEST(MmapTimed, SameSeedSameFigures) {
  const std::map<std::string, int64_t> d = {{"MAPS", 3}, {"PAGES", 4096}, {"MODE", 4}};
  const Figures a = Simulate(d), b = Simulate(d);
  ASSERT_EQ(a.verdict, Verdict::kPass);
  EXPECT_EQ(a.thread_ns, b.thread_ns);
  EXPECT_EQ(a.wait_ns, b.wait_ns);
  EXPECT_EQ(a.drops, b.drops);
  EXPECT_EQ(a.thread_ns, (std::vector<int64_t>{7992215, 7992889, 7993563, 8247849}));
  EXPECT_EQ(a.wait_ns, (std::vector<int64_t>{1834596, 1836830, 1837758, 2091431}));
  EXPECT_EQ(a.wwait_ns, (std::vector<int64_t>{781554, 1041463, 1295510, 2077139}));
  EXPECT_EQ(a.drops, 8);
}

TEST(MmapTimed, ReadLockThroughoutSerialisesUnder61AndDropWhenContendedDoesNot) {
  const std::map<std::string, int64_t> shape = {{"MAPS", 4}, {"PAGES", 4096}};
  auto with = [&](int64_t mode, int64_t rwsem2013) {
    std::map<std::string, int64_t> d = shape;
    d["MODE"] = mode;
    d["RWSEM_2013"] = rwsem2013;
    return Simulate(d);
  };
  const int64_t alone_ns = 4 * 4096 * 500;  // one thread's populates, without waiting
  const Figures held61 = with(3, 0), drop61 = with(4, 0), held2013 = with(3, 1), pre39 = with(2, 1);
  const auto slowest = [](const Figures& f) { return *std::max_element(f.thread_ns.begin(), f.thread_ns.end()); };
  EXPECT_GT(slowest(held61), 3 * alone_ns);   // about one populate at a time, nearly as slow as under the write lock
  EXPECT_GE(slowest(pre39), 4 * alone_ns);
  EXPECT_LT(slowest(drop61), 2 * alone_ns);   // patch 0003: the populates overlap again
  EXPECT_GT(drop61.drops, 0);
  EXPECT_EQ(held61.drops, 0);
  // The 2013 rwsem (strict FIFO, no reader stealing: the readers queued behind the writers are granted
  // together) lets every populate overlap.
  EXPECT_LT(slowest(held2013), alone_ns + alone_ns / 50);
  EXPECT_EQ(slowest(held61), 30797043);
  EXPECT_EQ(slowest(drop61), 11083118);
  EXPECT_EQ(slowest(held2013), 8273622);
  EXPECT_EQ(slowest(pre39), 32831751);
  EXPECT_EQ(drop61.drops, 11);
}

TEST(MmapTimed, TouchFaultsEveryPageUnderTheReadLock) {
  // The worker asserts it populated MAPS * PAGES pages; 1100 ns a page, one read hold per fault.
  const Figures f = Simulate({{"THREADS", 1}, {"CPUS", 1}, {"MAPS", 2}, {"PAGES", 256}, {"MODE", 1}});
  ASSERT_EQ(f.verdict, Verdict::kPass);
  EXPECT_GE(f.thread_ns[0], 2 * 256 * 1100);
  EXPECT_EQ(f.thread_ns[0], 584458);
  EXPECT_EQ(f.wait_ns[0], 5428);  // 512 uncontended read acquisitions and 2 write ones
}

TEST(MmapTimed, SimulateShowListsFinalValuesAndRejectsBadSymbols) {
  const std::vector<std::string> base = {"simulate", kScenario, "--cost-model",
                                         std::string(RSEQMC_SOURCE_DIR) + "/tests/mmap_seed/cost_model.txt",
                                         "-D", "THREADS=2", "-D", "CPUS=2", "-D", "MAPS=1", "-D", "PAGES=2048",
                                         "-D", "MODE=2", "-D", "RWSEM_2013=1", "-D", "POPULATE_PAGE_NS=400",
                                         "-D", "ZERO_4K_NS=100", "-D", "SYSCALL_NS=500", "-D", "MMAP_NS=1000"};
  auto with = [&](std::vector<std::string> extra) {
    std::vector<std::string> a = base;
    a.insert(a.end(), extra.begin(), extra.end());
    return RunCli(a);
  };
  const CliResult text = with({"--show", "wwait_ns:8"});
  EXPECT_EQ(text.code, 0) << text.err;
  EXPECT_NE(text.out.find("wwait_ns:    15 1027681 0\n"), std::string::npos) << text.out;  // as the test above
  const CliResult csv = with({"--csv", "--show", "wwait_ns:8", "--show", "drops"});
  EXPECT_EQ(csv.code, 0) << csv.err;
  EXPECT_NE(csv.out.find(",verdict,wwait_ns,drops\n"), std::string::npos) << csv.out;
  EXPECT_NE(csv.out.find(",pass,15;1027681;0,0;0;0;0;0;0;0;0\n"), std::string::npos) << csv.out;
  const CliResult unknown = with({"--show", "no_such"});
  EXPECT_EQ(unknown.code, 2);
  EXPECT_NE(unknown.err.find("no symbol 'no_such' to show"), std::string::npos) << unknown.err;
  const CliResult zero = with({"--show", "wait_ns:0"});
  EXPECT_EQ(zero.code, 2);
  EXPECT_NE(zero.err.find("the stride after ':' must be an integer from 1 to 1048576"), std::string::npos) << zero.err;
}

TEST(MmapCalibrateFit, FixedInputsGiveExactParameters) {
  mmapseed::MmapMeasurements m;
  m.syscall_ns = 100;
  m.mmap_ns = 1600.4;
  m.munmap_ns = 900;
  m.touch_4k_ns = 1500;
  m.zero_4k_ns = 250.6;
  m.populate_4k_ns = 700;
  m.touch_2m_ns = 130000;
  m.zero_2m_ns = 90000;
  m.handoff_ns = 9000;
  const mmapseed::MmapCosts c = mmapseed::FitMmapCosts(m);
  EXPECT_EQ(c.syscall_ns, 100);
  EXPECT_EQ(c.mmap_ns, 1500);          // 1600.4 - 100, rounded
  EXPECT_EQ(c.munmap_ns, 800);
  EXPECT_EQ(c.zero_4k_ns, 251);        // 250.6 rounded
  EXPECT_EQ(c.fault_ns, 1249);         // 1500 - 250.6 = 1249.4
  EXPECT_EQ(c.populate_page_ns, 449);  // 700 - 250.6 = 449.4
  EXPECT_EQ(c.zero_2m_ns, 90000);
  EXPECT_EQ(c.fault_2m_ns, 40000);
  m.zero_4k_ns = 2000;  // zeroing dearer than the whole fault (noise): clamped, not negative
  EXPECT_EQ(mmapseed::FitMmapCosts(m).fault_ns, 0);

  CostModel base;
  base.syscall_ns = 500;
  base.context_switch_ns = 3000;
  base.clock_ns = 20;
  const CostModel h = mmapseed::FitHandoff(base, m);
  EXPECT_EQ(h.futex_wake_ns, 5500);  // 9000 - 500 - 3000: waker's syscall + wake + the switch = the hand-off
  EXPECT_EQ(h.clock_ns, 0);
  CostModel rest = h;
  rest.futex_wake_ns = base.futex_wake_ns;
  rest.clock_ns = base.clock_ns;
  EXPECT_EQ(rest, base);  // nothing else changes

  const std::string text = mmapseed::FormatMmapCosts(c, {"measured here"});
  EXPECT_EQ(text.rfind("# measured here\nSYSCALL_NS = 100  # ", 0), 0u);
  EXPECT_NE(text.find("\nZERO_2M_NS = 90000  # zeroing a 2 MiB huge page\n"), std::string::npos);
}

}  // namespace
}  // namespace rseqmc
