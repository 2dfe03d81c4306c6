// The model checker's exploration strategies (model/explorer.h):
//   * soundness: on generated programs, DPOR and stateful search find exactly
//     the outcomes plain DFS finds under the same bounds (RapidCheck);
//   * golden execution counts and outcome sets per built-in scenario and
//     strategy (tests/golden/explore_counts.txt; more executions = lost
//     reduction, fewer = unsoundness). Regenerate only on purpose:
//     RSEQMC_UPDATE_GOLDEN=1 build/tests/rseqmc_tests --gtest_filter='Explore.Golden*'
//   * every planted bug is found by every exhaustive strategy with iterative
//     bounding, with one injected event;
//   * PCT finds each planted bug within its probabilistic bound;
//   * determinism and budgets;
//   * cost: checkpoints within a memory budget, stops inside an execution.
#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <optional>
#include <sstream>
#include <tuple>
#include <utility>

#include "gen/program_gen.h"
#include "gen/rc_cases.h"
#include "model/counterexample.h"
#include "model/explorer.h"
#include "model/oracles.h"
#include "model/pct.h"
#include "model/state_set.h"
#include "scenarios/builtin.h"
#include "scenarios/parser.h"
#include "sim/kernel/abi.h"
#include "sim/kernel/preempt_lock.h"
#include "sim/builder.h"
#include "sim/machine.h"
#include "sim/schedule.h"
#include "sim/diag.h"
#include "sim/thread_api.h"
#include "tests/builtin_scenario.h"
#include "tests/explore_helpers.h"
#include "tests/cli_runner.h"

namespace rseqmc {
namespace {

using testing::Builtin;  // tests/builtin_scenario.h

ExploreResult ExploreWith(const Scenario& s, StrategyKind k, uint32_t events, uint64_t max_exec = 0,
                  bool stop_at_failure = false) {
  ExploreOptions o;
  o.strategy = k;
  o.bounds.max_events = events;
  o.max_executions = max_exec;
  o.stop_at_first_failure = stop_at_failure;
  return Explore(s, o);
}

// A stable digest of an outcome set (order-independent, since std::set is ordered).
uint64_t Digest(const std::set<Outcome>& outcomes) { return OutcomeSetDigest(outcomes); }

// ---------------------------------------------------------------------------
// Soundness on generated programs.

testgen::GenOptions SmallPrograms() {
  testgen::GenOptions g;
  g.max_cpus = 2;
  g.max_threads = 2;
  g.max_stmts = 3;
  g.max_retries = 2;
  // Failing asserts too: an execution that ends the process must reach the
  // same outcomes (memory as it died) under every strategy.
  g.racy_asserts = true;
  return g;
}

RC_GTEST_PROP(Explore, DporAndStatefulFindExactlyTheOutcomesOfDfs, ()) {
  const auto g = *testgen::GenScenario(SmallPrograms());
  const uint32_t events = *rc::gen::inRange<uint32_t>(0, 2);
  const ExploreResult dfs = ExploreWith(g.scenario, StrategyKind::kDfs, events, 20000);
  RC_PRE(dfs.complete);  // only programs small enough for plain DFS
  RC_CLASSIFY(std::any_of(dfs.outcomes.begin(), dfs.outcomes.end(),
                          [](const Outcome& o) { return o.verdict == Verdict::kAssertFailed; }),
              "an assert fails");
  const ExploreResult dpor = ExploreWith(g.scenario, StrategyKind::kDpor, events);
  const ExploreResult stateful = ExploreWith(g.scenario, StrategyKind::kStateful, events);
  RC_ASSERT(dpor.complete);
  RC_ASSERT(stateful.complete);
  RC_ASSERT(dpor.outcomes == dfs.outcomes);
  RC_ASSERT(stateful.outcomes == dfs.outcomes);
  // How much each reduction saves is pinned by the golden counts below, not
  // here: DFS's visible-step reduction and DPOR's sleep sets prune different
  // schedules, so neither count bounds the other on every program (a
  // two-thread getcpu loop: DPOR 77 complete executions, DFS 75).
}

// DPOR at one event explores event plans (model/explorer.cc NextPlan): the
// executions without events, then each event pinned to its thread's
// position, then the tail. Three threads and longer bodies than above, so
// that threads end at different lengths in different schedules (the plans
// past a thread's shortest run go to the tail), signals, migrations and
// blocking included: the outcomes are DFS's.
void DporAtOneEventFindsTheOutcomesOfDfs(const testgen::GenOptions& opts) {
  const auto g = *testgen::GenScenario(opts);
  const ExploreResult dfs = ExploreWith(g.scenario, StrategyKind::kDfs, 1, 20000);
  RC_PRE(dfs.complete);
  const ExploreResult dpor = ExploreWith(g.scenario, StrategyKind::kDpor, 1);
  RC_ASSERT(dpor.complete);
  RC_ASSERT(dpor.outcomes == dfs.outcomes);
}

RC_GTEST_PROP(Explore, DporEventPlansFindExactlyTheOutcomesOfDfs, ()) {
  testgen::GenOptions opts = SmallPrograms();
  opts.max_threads = 3;
  opts.max_stmts = 4;
  DporAtOneEventFindsTheOutcomesOfDfs(opts);
}

// The tail's doomed events (model/explorer.cc DropDoomedEvents) apply only
// to programs without system calls that reach another thread or CPU: the
// same with 1,000 such programs, longer and with loops (threads end at
// lengths that differ by schedule, so the tail has work), at one event: the
// outcomes are still DFS's.
TEST(Explore, DporWithoutDoomedTailEventsFindsExactlyTheOutcomesOfDfs) {
  testgen::GenOptions opts = SmallPrograms();
  opts.max_threads = 3;
  opts.max_stmts = 5;
  opts.signals = false;
  opts.syscalls = false;
  testgen::CheckCases(1000, [&] { DporAtOneEventFindsTheOutcomesOfDfs(opts); });
}

// The same with a bound per kind too: stateful search hashes the count of a
// kind only where that kind has its own bound, so two histories that spent
// their events on different kinds merge exactly when no per-kind bound can
// tell them apart.
TEST(Explore, PerKindBoundsKeepStatefulEqualToDfs) {
  // 400 cases: RapidCheck's default 100 did not reliably catch a state hash
  // that left out the event counts.
  testgen::CheckCases(400, [] {
  const auto g = *testgen::GenScenario(SmallPrograms());
  Bounds b;
  b.max_events = *rc::gen::inRange<uint32_t>(1, 3);
  const auto pick = [] { return *rc::gen::element(kUnbounded, uint32_t{0}, uint32_t{1}); };
  b.max_preemptions = pick();
  b.max_migrations = pick();
  b.max_signals = pick();
  b.max_ipis = pick();
  RC_LOG() << b.ToString();
  ExploreOptions o;
  o.bounds = b;
  o.stop_at_first_failure = false;
  o.strategy = StrategyKind::kDfs;
  o.max_executions = 20000;
  const ExploreResult dfs = Explore(g.scenario, o);
  RC_PRE(dfs.complete);
  o.max_executions = 0;
  o.strategy = StrategyKind::kStateful;
  const ExploreResult stateful = Explore(g.scenario, o);
  o.strategy = StrategyKind::kDpor;
  const ExploreResult dpor = Explore(g.scenario, o);
  RC_ASSERT(stateful.complete);
  RC_ASSERT(dpor.complete);
  RC_ASSERT(stateful.outcomes == dfs.outcomes);
  RC_ASSERT(dpor.outcomes == dfs.outcomes);
  });
}

// ---------------------------------------------------------------------------
// Golden counts for the built-in scenarios.

struct GoldenCase {
  std::string scenario;
  std::map<std::string, int64_t> defines;
  StrategyKind strategy;
  uint32_t events;
  uint64_t max_exec;
};

std::vector<GoldenCase> GoldenCases() {
  std::vector<GoldenCase> cases;
  const std::map<std::string, int64_t> small = {{"OPS", 1}, {"PER", 1}};
  for (const BuiltinScenario& b : BuiltinScenarios()) {
    // 2015-RFC programs run under rfc2015 only: tests/rfc2015_test.cc.
    if (FindRfc2015Use(ParseScenario(b.text, b.path).program) != nullptr) continue;
    // The list/buffer workloads are explored with one node per thread to keep
    // the suite (and its ASan run) short.
    const bool heavy = b.name.find("list") != std::string::npos || b.name.find("buffer") != std::string::npos ||
                       b.name.find("commit_not_last") != std::string::npos;
    const std::map<std::string, int64_t> d = heavy ? small : std::map<std::string, int64_t>{};
    for (StrategyKind k : {StrategyKind::kDpor, StrategyKind::kStateful}) {
      cases.push_back({b.name, d, k, 0, 0});
      cases.push_back({b.name, d, k, 1, 0});
    }
    cases.push_back({b.name, d, StrategyKind::kDfs, 0, 50000});
  }
  return cases;
}

std::string GoldenLine(const GoldenCase& c, const ExploreResult& r) {
  std::ostringstream os;
  os << c.scenario;
  for (const auto& [k, v] : c.defines) os << " -D" << k << "=" << v;
  os << " | " << StrategyName(c.strategy) << " events<=" << c.events << " | executions " << r.executions
     << " redundant " << r.redundant << " outcomes " << r.distinct_outcomes << " digest " << std::hex << Digest(r.outcomes)
     << std::dec << " | " << (r.complete ? "complete" : r.stop_reason);
  return os.str();
}

TEST(Explore, GoldenExecutionCountsAndOutcomeSets) {
  const std::string path = std::string(RSEQMC_SOURCE_DIR) + "/tests/golden/explore_counts.txt";
  std::vector<std::string> lines;
  std::map<std::string, uint64_t> complete_digest;  // scenario+defines+events -> digest of a complete run
  for (const GoldenCase& c : GoldenCases()) {
    const Scenario s = Builtin(c.scenario, c.defines);
    const ExploreResult r = ExploreWith(s, c.strategy, c.events, c.max_exec);
    lines.push_back(GoldenLine(c, r));
    // Exhaustive strategies that completed agree on the outcome set.
    if (r.complete) {
      const std::string key = c.scenario + "/" + std::to_string(c.events);
      auto [it, inserted] = complete_digest.emplace(key, Digest(r.outcomes));
      EXPECT_EQ(it->second, Digest(r.outcomes)) << "outcome sets differ for " << key << " ("
                                                 << StrategyName(c.strategy) << ")";
    }
  }
  std::string now;
  for (const std::string& l : lines) now += l + "\n";
  if (std::getenv("RSEQMC_UPDATE_GOLDEN") != nullptr) {
    std::ofstream(path) << now;
    GTEST_SKIP() << "rewrote " << path;
  }
  std::ifstream in(path);
  ASSERT_TRUE(in) << path << " is missing; create it with RSEQMC_UPDATE_GOLDEN=1";
  std::stringstream want;
  want << in.rdbuf();
  std::istringstream a(want.str()), b(now);
  std::string la, lb;
  int line = 0;
  while (true) {
    const bool ga = static_cast<bool>(std::getline(a, la));
    const bool gb = static_cast<bool>(std::getline(b, lb));
    ++line;
    if (!ga && !gb) break;
    ASSERT_EQ(la, lb) << "golden line " << line << " of " << path
                      << " differs (more executions: lost reduction; fewer: unsoundness)";
  }
}

// ---------------------------------------------------------------------------
// Planted bugs.

std::vector<std::string> BuggyScenarios() {
  std::vector<std::string> names;
  for (const BuiltinScenario& b : BuiltinScenarios()) {
    // The allocator family's planted bugs are judged partly by the allocator
    // oracle and have their own test: tests/alloc_test.cc.
    if (b.name.starts_with("buggy/alloc_")) continue;
    // 2015-RFC programs run under rfc2015 only: tests/rfc2015_test.cc.
    if (b.name.rfind("buggy/", 0) == 0 && FindRfc2015Use(ParseScenario(b.text, b.path).program) == nullptr) {
      names.push_back(b.name);
    }
  }
  return names;
}

// Spin detection must not mistake two calls of one function for a loop that
// went round without effect: same pc and registers, different return address
// (found by the soundness property: DFS reported a livelock here).
TEST(Explore, TwoCallsOfOneFunctionAreNoSpin) {
  const Scenario s = ParseScenario(
      "scenario calls\ncpus 1\nvar d0: u64\nfunc main0\n  li r14, 1\nL0_loop:\n  call helper0\n"
      "  call helper0\n  sub r14, r14, 1\n  bne r14, 0, L0_loop\n  ret\nend\nfunc helper0\n  ret\nend\n"
      "thread t0 entry main0 cpu 0 affinity 0\n",
      "calls.rsq");
  for (StrategyKind k : {StrategyKind::kDfs, StrategyKind::kDpor, StrategyKind::kStateful}) {
    const ExploreResult r = ExploreWith(s, k, 1, 0, true);
    EXPECT_TRUE(r.complete) << StrategyName(k);
    EXPECT_FALSE(r.failure.has_value()) << StrategyName(k) << ": " << (r.failure ? r.failure->message : "");
    EXPECT_EQ(r.outcomes.size(), 1u) << StrategyName(k);
  }
}

// The ample sets of dfs and stateful (model/explorer.cc) take a thread's
// register-only step alone only where no other thread can tell the orders
// apart. Inside a critical section a membarrier IPI (or a tgkill signal) from
// another thread aborts t with the registers it has then: IPI'd before or
// after `li r5, 1`, the abort handler stores 0, 1 or 2. Regression: dfs and
// stateful ran t's register-only steps alone even there (the IPI landed only
// at t's visible steps) and missed x == 1 with no injected event at all,
// which dpor found.
Scenario InterruptedSectionScenario(const std::string& interrupt) {
  return ParseScenario(
      "scenario interrupted_section\ncpus 2\nvar x: u64 = 9\nvar y: u64\n"
      "func a\n  la r9, x\n  la r10, y\n  li r5, 0\n  rseq_arm cs1\nstart:\n  li r5, 1\n  li r5, 2\n"
      "  li r6, 9\n  st [r10], r6\npost:\n  li r0, 0\n  ret\n  sig 0x53053053\nabort:\n  st [r9], r5\n"
      "  li r0, 0\n  ret\n  cs cs1 start=start post_commit=post abort=abort\nend\n"
      "func b\n  " + interrupt + "\n  li r0, 0\n  ret\nend\n"
      "func on_usr1\n  ret\nend\nsignal SIGUSR1 handler on_usr1\n"
      "thread ta entry a cpu 0 affinity 0\nthread tb entry b cpu 1 affinity 1\n",
      "interrupted_section.rsq");
}

TEST(Explore, ACrossThreadIpiInsideASectionIsNotReordered) {
  for (const std::string interrupt : {"membarrier_rseq -1", "tgkill ta, SIGUSR1"}) {
    const Scenario s = InterruptedSectionScenario(interrupt);
    const ExploreResult dpor = ExploreWith(s, StrategyKind::kDpor, 0);
    ASSERT_TRUE(dpor.complete) << interrupt;
    std::set<uint64_t> aborted_with;  // x: 9 (committed without abort) or r5 at the abort
    for (const Outcome& o : dpor.outcomes) {
      uint64_t x = 0;
      std::memcpy(&x, o.symbols.data(), 8);
      aborted_with.insert(x);
    }
    EXPECT_EQ(aborted_with, (std::set<uint64_t>{0, 1, 2, 9})) << interrupt;
    for (StrategyKind k : {StrategyKind::kDfs, StrategyKind::kStateful}) {
      const ExploreResult r = ExploreWith(s, k, 0);
      EXPECT_TRUE(r.complete) << interrupt << " " << StrategyName(k);
      EXPECT_EQ(r.outcomes, dpor.outcomes) << interrupt << " " << StrategyName(k);
    }
  }
}

// C3, the cycle proviso of stateful search's ample sets: a register-only
// loop revisits its state with only its own thread explored on the way. The
// revisit expands that node fully instead of pruning it, so the other thread
// runs and its store and the livelock are found. Regression: stateful search
// pruned the revisit after one step and reported a pass with no outcome.
TEST(Explore, StatefulExpandsAReducedCycleFully) {
  const Scenario s = ParseScenario(
      "scenario reduced_cycle\ncpus 2\nvar x: u64\nfunc spin\nl:\n  jmp l\nend\n"
      "func w\n  la r1, x\n  li r2, 1\n  st [r1], r2\n  li r0, 0\n  ret\nend\n"
      "thread a entry spin cpu 0 affinity 0\nthread b entry w cpu 1 affinity 1\n",
      "reduced_cycle.rsq");
  for (StrategyKind k : {StrategyKind::kDfs, StrategyKind::kStateful}) {
    const ExploreResult r = ExploreWith(s, k, 0, 0, true);
    ASSERT_TRUE(r.failure.has_value()) << StrategyName(k);
    EXPECT_EQ(r.failure->verdict, Verdict::kLivelock) << StrategyName(k);
    ASSERT_EQ(r.outcomes.size(), 1u) << StrategyName(k);
    EXPECT_EQ(r.outcomes.begin()->symbols[0], 1) << StrategyName(k);  // b's store before the livelock
  }
}

// Where an event on thread a is offered depends on a's rseq_cs and the
// descriptor it points to. Here another thread's plain store decides both:
// (1) b stores the address of a descriptor it built in data memory into a's
// rseq_cs (a never arms), (2) a points its own rseq_cs at a descriptor in
// data memory whose empty range b widens over a's region. Either way a
// preemption of a inside `region` after b's store aborts it with r6 = how
// far it got (0-3 of its 4 adds) + 100. b's store commutes with a's register-only steps by their
// footprints, so DPOR explored one order of them and missed the 4 aborts,
// with event plans (K=1) and with the conservative rule (K=2) alike: 1
// outcome of 5 (Machine::rseq_cs_stored, RseqCsWrittenByStores).
// Code addresses: instruction i of the program is at 0x400000 + 4 * i
// (sim/ir.h kCodeBase); `region` and `abort` are at the indices noted.
TEST(Explore, DporSeesAStoreIntoAnotherThreadsRseqCs) {
  const std::string tail =
      "  add r6, r6, 1\n  add r6, r6, 1\n  add r6, r6, 1\n  add r6, r6, 1\n  la r4, done\n  st [r4], r6\n"
      "  ret\n  sig 0x53053053\nabort:\n  add r6, r6, 100\n  la r4, aborted\n  st [r4], r6\n  ret\nend\n";
  const std::string threads = "thread a entry fa cpu 0 affinity 0\nthread b entry fb cpu 1 affinity 1\n";
  const Scenario foreign = ParseScenario(
      "scenario foreign_cs\ncpus 2\nvar x: u64\nvar done: u64\nvar aborted: u64\nvar fake: u64[4]\n"
      // region at index 4, abort at 12
      "func fa\n  la r1, x\n  li r2, 1\n  li r6, 0\n  st [r1], r2\nregion:\n" + tail +
          "func fb\n  la r3, fake\n  li r4, 0x400010\n  st [r3 + 8], r4\n  li r4, 16\n  st [r3 + 16], r4\n"
          "  li r4, 0x400030\n  st [r3 + 24], r4\n  rseq_addr r1\n  add r1, r1, -24\n  st [r1], r3\n"
          "  li r0, 0\n  ret\nend\n" +
          threads,
      "foreign_cs.rsq");
  const Scenario shared = ParseScenario(
      "scenario shared_cs\ncpus 2\nvar x: u64\nvar done: u64\nvar aborted: u64\n"
      "var fake: u64[4] = {0, 0x400018, 0, 0x400038}\n"
      // region at index 6, abort at 14
      "func fa\n  la r1, x\n  li r2, 1\n  li r6, 0\n  rseq_addr r5\n  la r3, fake\n  st [r5 + 8], r3\n"
      "region:\n" + tail + "func fb\n  la r3, fake\n  li r4, 16\n  st [r3 + 16], r4\n  li r0, 0\n  ret\nend\n" +
          threads,
      "shared_cs.rsq");
  for (const Scenario* s : {&foreign, &shared}) {
    const uint64_t aborted = s->program.symbols[s->program.FindSymbol("aborted")].address - kDataBase;
    for (uint32_t events : {1u, 2u}) {
      const ExploreResult dfs = ExploreWith(*s, StrategyKind::kDfs, events);
      const ExploreResult dpor = ExploreWith(*s, StrategyKind::kDpor, events);
      ASSERT_TRUE(dfs.complete && dpor.complete) << s->name;
      std::set<int64_t> aborts;
      for (const Outcome& o : dfs.outcomes) aborts.insert(o.symbols[aborted]);
      EXPECT_EQ(aborts, (std::set<int64_t>{0, 100, 101, 102, 103})) << s->name << " K=" << events;
      EXPECT_EQ(dpor.outcomes, dfs.outcomes) << s->name << " K=" << events;
      EXPECT_EQ(Digest(dpor.outcomes), Digest(dfs.outcomes)) << s->name << " K=" << events;
    }
  }
}

// A failed assert ends the process where every other thread is: the outcome
// (memory, observations, return values as the process died) depends on how
// far the others got, so every exhaustive strategy must reach every such
// point. Regression: DPOR took the assert as independent of the other
// threads' steps and ran it first (1 outcome of 5 here; 15 of 27 of
// buggy/alloc_commit_before_copy with one event), and DFS and stateful search
// ran a thread's `observe` or the assert itself as a local step without
// trying the others before it (1 and 23 of 27).
Scenario EndsProcessScenario(bool asserter_first) {
  const std::string asserter = "func dies\n  li r1, 0\n  assert r1 == 1, \"dies\"\n  ret\nend\n";
  const std::string writer =
      "func writes\n  li r3, 1\n  observe seen, r3\n  la r2, x\n  st [r2], r3\n  observe seen, r3\n"
      "  la r2, y\n  st [r2], r3\n  li r0, 7\n  ret\nend\n";
  const std::string threads = asserter_first
                                  ? "thread a entry dies cpu 0 affinity 0\nthread w entry writes cpu 1 affinity 1\n"
                                  : "thread w entry writes cpu 0 affinity 0\nthread a entry dies cpu 1 affinity 1\n";
  return ParseScenario("scenario ends_process\ncpus 2\nvar x: u64\nvar y: u64\n" + asserter + writer + threads +
                           "expect fail assert\n",
                       "ends_process.rsq");
}

TEST(Explore, AFailedAssertCutsTheOtherThreadsOffAtEveryPoint) {
  for (const bool asserter_first : {true, false}) {
    const Scenario s = EndsProcessScenario(asserter_first);
    const int w = asserter_first ? 1 : 0;
    const uint64_t x = s.program.symbols[s.program.FindSymbol("x")].address - kDataBase;
    const uint64_t y = s.program.symbols[s.program.FindSymbol("y")].address - kDataBase;
    // The writer's progress when the assert ends the process: (observations,
    // x, y, return value). Its steps before its first observe and between
    // a store and the next observe change nothing an outcome holds.
    const std::set<std::tuple<size_t, int, int, int64_t>> want = {
        {0, 0, 0, 0}, {1, 0, 0, 0}, {1, 1, 0, 0}, {2, 1, 0, 0}, {2, 1, 1, 0}, {2, 1, 1, 7}};
    for (StrategyKind k : {StrategyKind::kDfs, StrategyKind::kDpor, StrategyKind::kStateful}) {
      for (uint32_t events : {0u, 1u}) {
        const ExploreResult r = ExploreWith(s, k, events);
        const std::string what = std::string(StrategyName(k)) + " events<=" + std::to_string(events) +
                                 (asserter_first ? ", asserter on CPU 0" : ", writer on CPU 0");
        EXPECT_TRUE(r.complete) << what;
        std::set<std::tuple<size_t, int, int, int64_t>> got;
        for (const Outcome& o : r.outcomes) {
          EXPECT_EQ(o.verdict, Verdict::kAssertFailed) << what;
          got.insert({o.observed[w].size(), o.symbols[x], o.symbols[y], o.returns[w]});
        }
        EXPECT_EQ(got, want) << what;
        EXPECT_EQ(r.outcomes.size(), want.size()) << what;
      }
    }
  }
}

// The outcome sets of every exhaustive strategy agree on every planted bug
// and allocator scenario at K=1, collecting all failures (the golden test
// checks the other built-ins and these with their counts), including the
// 2015-RFC programs under the rfc2015 ABI (which the golden test leaves out).
TEST(Explore, PlantedBugsAndAllocatorsReachTheSameOutcomesUnderEveryExhaustiveStrategy) {
  int checked = 0;
  for (const BuiltinScenario& b : BuiltinScenarios()) {
    if (!b.name.starts_with("buggy/") && !b.name.starts_with("alloc_")) continue;
    const Scenario s = Builtin(b.name, {{"PER", 1}});
    ExploreOptions o;
    o.bounds.max_events = 1;
    o.stop_at_first_failure = false;
    if (FindRfc2015Use(s.program) != nullptr) o.run.kernel = {KernelModel::kRfc2015, "rfc2015"};
    o.strategy = StrategyKind::kDpor;
    const ExploreResult dpor = Explore(s, o);
    o.strategy = StrategyKind::kStateful;
    const ExploreResult stateful = Explore(s, o);
    ASSERT_TRUE(dpor.complete) << b.name;
    ASSERT_TRUE(stateful.complete) << b.name;
    EXPECT_EQ(dpor.outcomes, stateful.outcomes)
        << b.name << ": dpor " << dpor.outcomes.size() << " outcomes, stateful " << stateful.outcomes.size();
    ++checked;
  }
  EXPECT_GE(checked, 16);
}

TEST(Explore, EveryPlantedBugIsFoundByEveryExhaustiveStrategyWithOneEvent) {
  const auto names = BuggyScenarios();
  ASSERT_GE(names.size(), 5u);
  for (const std::string& name : names) {
    const Scenario s = Builtin(name, {{"PER", 1}});
    for (StrategyKind k : {StrategyKind::kDpor, StrategyKind::kStateful, StrategyKind::kDfs}) {
      ExploreOptions o;
      o.strategy = k;
      o.bounds.max_events = 1;
      o.iterative = true;
      o.max_executions = 500000;
      const ExploreResult r = Explore(s, o);
      ASSERT_TRUE(r.failure.has_value()) << name << " not found by " << StrategyName(k);
      EXPECT_EQ(r.failure->verdict, s.expected) << name << " / " << StrategyName(k) << ": " << r.failure->message;
      // The ABBA deadlock needs no event: the interleaving of two CPUs reaches it.
      const uint32_t events = s.expected == Verdict::kDeadlock ? 0u : 1u;
      EXPECT_EQ(r.failure->schedule.NumEvents(), events) << name << " / " << StrategyName(k);
      EXPECT_EQ(r.bound_level, events) << name << ": failure at another events bound";
    }
  }
}

// tests/data/mm_cid_not_rechecked.rsq (a fixture, not a built-in: its header
// says why): DPOR and stateful search find the lost increment with one event
// (a migration between the mm_cid read and start_ip), in these exact counts
// under the 6.4-6.18 allocator; plain DFS reaches it only at execution
// 1,490,756 (its order, not a bound), too slow for this suite.
TEST(Explore, MmCidNotRecheckedIsFoundWithOneEvent) {
  const Scenario s =
      ParseScenario(testing::ReadFile(testing::Fixture("mm_cid_not_rechecked.rsq")), "mm_cid_not_rechecked.rsq");
  for (const auto& [k, executions] : {std::pair{StrategyKind::kDpor, 38u}, std::pair{StrategyKind::kStateful, 169u}}) {
    ExploreOptions o;
    o.strategy = k;
    o.bounds.max_events = 1;
    o.iterative = true;
    o.stop_at_first_failure = true;
    const ExploreResult r = Explore(s, o);
    ASSERT_TRUE(r.failure.has_value()) << StrategyName(k);
    EXPECT_EQ(r.failure->verdict, Verdict::kPropertyFailed) << StrategyName(k);
    EXPECT_EQ(r.failure->schedule.NumEvents(), 1u) << StrategyName(k);
    EXPECT_EQ(r.executions, executions) << StrategyName(k);
  }
}

TEST(Explore, CorrectBuiltinsPassExhaustivelyWithOneEvent) {
  for (const std::string name : {"percpu_counter", "percpu_spinlock"}) {
    const Scenario s = Builtin(name);
    const ExploreResult r = ExploreWith(s, StrategyKind::kDpor, 1, 0, true);
    EXPECT_TRUE(r.complete) << name;
    EXPECT_FALSE(r.failure.has_value()) << name << ": " << (r.failure ? r.failure->message : "");
  }
}

// PCT: a bug of depth d in a program of n threads and k steps is found by one
// execution with probability >= 1/(n (c k)^(d-1)), c = 4 change kinds (see
// model/pct.h), so that many runs find it with probability >= 1 - 1/e. The
// planted bugs have depth <= 3: one injected event at the right step (a change
// point) plus at most one ordering constraint between the CPUs (the second
// change point). Each must be found within n (4k)^2 runs for every seed tried.
TEST(Explore, PctFindsEachPlantedBugWithinItsProbabilisticBound) {
  for (const std::string& name : BuggyScenarios()) {
    const Scenario s = Builtin(name, {{"PER", 1}});
    // k: steps of the execution PCT makes without change points.
    Simulator sim(s);
    PctScheduler probe(s, 1, 1, Bounds{});
    const uint64_t k = sim.Run(probe).steps;
    const uint64_t n = s.threads.size();
    const uint64_t bound = n * (4 * k) * (4 * k);  // n * (c k)^(d-1), c = 4, d = 3
    uint64_t worst = 0;
    for (uint64_t seed = 1; seed <= 5; ++seed) {
      ExploreOptions o;
      o.strategy = StrategyKind::kPct;
      o.pct_depth = 3;
      o.seed = seed;
      o.bounds.max_events = 1;
      o.max_executions = bound;
      const ExploreResult r = Explore(s, o);
      ASSERT_TRUE(r.failure.has_value()) << name << " seed " << seed << ": not found in " << bound << " PCT runs";
      EXPECT_EQ(r.failure->verdict, s.expected);
      worst = std::max(worst, r.failure->execution);
    }
    RecordProperty(name + "_pct_runs_worst", static_cast<int>(worst));
    std::printf("[pct] %-28s n=%llu k=%llu d=3 bound=%llu worst runs over seeds 1-5: %llu\n", name.c_str(),
                static_cast<unsigned long long>(n), static_cast<unsigned long long>(k),
                static_cast<unsigned long long>(bound), static_cast<unsigned long long>(worst));
  }
}

TEST(Explore, SameInputsAndSeedGiveTheSameResult) {
  const Scenario s = Builtin("percpu_spinlock");
  for (StrategyKind k : {StrategyKind::kDpor, StrategyKind::kRandom, StrategyKind::kPct}) {
    ExploreOptions o;
    o.strategy = k;
    o.bounds.max_events = 1;
    o.seed = 7;
    o.max_executions = 3000;
    const ExploreResult a = Explore(s, o);
    const ExploreResult b = Explore(s, o);
    EXPECT_EQ(a.executions, b.executions) << StrategyName(k);
    EXPECT_EQ(a.outcomes, b.outcomes) << StrategyName(k);
  }
}

TEST(Explore, BudgetsStopTheExploration) {
  const Scenario s = Builtin("percpu_list");
  ExploreOptions o;
  o.strategy = StrategyKind::kDpor;
  o.bounds.max_events = 2;
  o.max_executions = 100;
  ExploreResult r = Explore(s, o);
  EXPECT_EQ(r.executions, 100u);
  EXPECT_EQ(r.stop_reason, "max-executions");
  EXPECT_FALSE(r.complete);
  std::atomic<bool> stop{true};
  o.max_executions = 0;
  o.interrupt = &stop;
  r = Explore(s, o);
  EXPECT_EQ(r.stop_reason, "interrupted");
  EXPECT_EQ(r.executions, 1u);
}

// 64-bit xorshift words from `seed`: well-spread test keys.
std::vector<uint64_t> XorshiftWords(uint64_t seed, int n) {
  std::vector<uint64_t> out;
  for (int i = 0; i < n; ++i) {
    seed ^= seed << 13;
    seed ^= seed >> 7;
    seed ^= seed << 17;
    out.push_back(seed);
  }
  return out;
}

// The visited set keeps every key through its growth, answers duplicates,
// stores the all-zero hash (its empty-slot marker) as a state like any other,
// and accounts its table in bytes.
TEST(StateSet, InsertFindsDuplicatesAcrossGrowth) {
  StateSet set;
  EXPECT_EQ(set.size(), 0u);
  EXPECT_EQ(set.bytes(), 0u);
  std::vector<StateSet::Key> keys;
  int i = 0;
  for (uint64_t x : XorshiftWords(0x9e3779b97f4a7c15ull, 5000)) {
    // Colliding first words (same slot) with different second words too.
    keys.push_back({i % 7 == 0 ? 42 : x, static_cast<uint64_t>(i)});
    ++i;
  }
  for (const auto& k : keys) EXPECT_TRUE(set.Insert(k));
  EXPECT_EQ(set.size(), keys.size());
  for (const auto& k : keys) EXPECT_FALSE(set.Insert(k));
  EXPECT_EQ(set.size(), keys.size());
  EXPECT_TRUE(set.Insert({0, 0}));
  EXPECT_FALSE(set.Insert({0, 0}));
  EXPECT_EQ(set.size(), keys.size() + 1);
  // 64 segments by bits 32..37 of the first word, each a power of two of
  // 16-byte slots at most 3/4 full: segment 0 holds the
  // 715 keys with first word 42, {0, 1} and 61 others (2048 slots), the
  // fullest other one 84 (128 slots), the emptiest 48 (64 slots).
  EXPECT_EQ(set.bytes(), (2048u + 62 * 128 + 64) * 16);
  size_t seen = 0;
  set.ForEach([&seen](const StateSet::Key&) { ++seen; });
  EXPECT_EQ(seen, set.size());
  set.Clear();
  EXPECT_EQ(set.size(), 0u);
  EXPECT_TRUE(set.Insert(keys[0]));
}

// Hash compaction keeps the first 64 bits of each hash: 8-byte slots, the
// same duplicates found (keys differing only in their second word are one
// state, by design), and ForEach gives back keys that Insert takes again.
TEST(StateSet, Hash64StoresEightBytesPerSlot) {
  StateSet set(StateStorage::kHash64);
  std::vector<StateSet::Key> keys;
  int i = 0;
  for (uint64_t x : XorshiftWords(0x9e3779b97f4a7c15ull, 5000)) keys.push_back({x, static_cast<uint64_t>(i++)});
  for (const auto& k : keys) EXPECT_TRUE(set.Insert(k));
  for (const auto& k : keys) EXPECT_FALSE(set.Insert({k.first, k.second + 1}));
  EXPECT_TRUE(set.Insert({0, 0}));
  EXPECT_FALSE(set.Insert({1, 7}));  // 0 is stored as 1
  EXPECT_EQ(set.size(), 5001u);
  // 8-byte slots: the fullest of the 64 segments holds 98 keys (256 slots),
  // the others at most 96 (128 slots).
  EXPECT_EQ(set.bytes(), (256u + 63 * 128) * 8);
  StateSet copy(StateStorage::kHash64);
  set.ForEach([&copy](const StateSet::Key& k) { copy.Insert(k); });
  EXPECT_EQ(copy.size(), set.size());
  for (const auto& k : keys) EXPECT_FALSE(copy.Insert(k));
  // n(n-1)/2 pairs, each colliding with probability 2^-64 (2^-128 by default).
  EXPECT_DOUBLE_EQ(set.OmissionEstimate(), 5001.0 * 5000 / 2 / 18446744073709551616.0);
  StateSet full;
  for (const auto& k : keys) full.Insert(k);
  EXPECT_DOUBLE_EQ(full.OmissionEstimate(), 5000.0 * 4999 / 2 / 18446744073709551616.0 / 18446744073709551616.0);
}

// Bitstate: a fixed array whatever the number of states; in a large array
// every distinct key is new (3 bits of 2^20), in a saturated one most keys
// are wrongly taken for visited and the estimate says so.
TEST(StateSet, BitstateHasFixedSizeAndReportsSaturation) {
  // Two independent words per key, as the two halves of XXH3-128 are.
  const std::vector<uint64_t> a = XorshiftWords(0x2545f4914f6cdd1dull, 5000);
  const std::vector<uint64_t> b = XorshiftWords(0x9e3779b97f4a7c15ull, 10000);
  std::vector<StateSet::Key> keys;
  for (size_t i = 0; i < a.size(); ++i) keys.push_back({a[i], b[5000 + i]});
  StateSet big(StateStorage::kBitstate, 20);
  for (const auto& k : keys) EXPECT_TRUE(big.Insert(k));
  for (const auto& k : keys) EXPECT_FALSE(big.Insert(k));
  EXPECT_EQ(big.size(), 5000u);
  EXPECT_EQ(big.bytes(), (1u << 20) / 8);
  EXPECT_LT(big.OmissionEstimate(), 0.01);  // about 27 n^4 / (4 m^3) = 0.0037
  StateSet small(StateStorage::kBitstate, 10);
  for (const auto& k : keys) small.Insert(k);
  EXPECT_LT(small.size(), 1000u);  // 1024 bits: saturated after a few hundred keys
  EXPECT_EQ(small.bytes(), 128u);
  EXPECT_GT(small.OmissionEstimate(), 1.0);
  size_t seen = 0;
  small.ForEach([&seen](const StateSet::Key&) { ++seen; });
  EXPECT_EQ(seen, 0u);  // no keys to give back (hence no checkpoint)
}

// The compact modes explore exactly the default's states and executions when
// nothing collides (percpu_counter, 2 ops, 2 events: 174,577 states), report
// their bytes, and a saturated bit array skips states (fewer of them) while
// still reaching a verdict.
TEST(Explore, StateStorageModesAgreeWithoutCollisions) {
  const Scenario s = Builtin("percpu_counter", {{"OPS", 2}});
  ExploreOptions o;
  o.strategy = StrategyKind::kStateful;
  o.bounds.max_events = 2;
  const ExploreResult base = Explore(s, o);
  ASSERT_TRUE(base.complete);
  EXPECT_EQ(base.states, 119099u);
  for (StateStorage m : {StateStorage::kHash64, StateStorage::kBitstate}) {
    o.state_storage = m;
    const ExploreResult r = Explore(s, o);
    EXPECT_TRUE(r.complete) << StateStorageName(m);
    EXPECT_EQ(r.states, base.states) << StateStorageName(m);
    EXPECT_EQ(r.executions, base.executions) << StateStorageName(m);
    EXPECT_EQ(r.outcomes, base.outcomes) << StateStorageName(m);
    EXPECT_LT(r.omission_estimate, 0.01) << StateStorageName(m);
  }
  EXPECT_EQ(Explore(s, o).state_bytes, (size_t{1} << kDefaultBitstateLog2) / 8);
  o.state_storage = StateStorage::kHash64;
  // The same slots as hash128's (the same first words), of 8 bytes.
  EXPECT_EQ(Explore(s, o).state_bytes * 2, base.state_bytes);
  o.state_storage = StateStorage::kBitstate;
  o.bitstate_log2 = 14;
  const ExploreResult tiny = Explore(s, o);
  EXPECT_TRUE(tiny.complete);
  EXPECT_LT(tiny.states, base.states);
  EXPECT_GT(tiny.omission_estimate, 1.0);
  EXPECT_EQ(tiny.state_bytes, 2048u);
}

// A program that reads mm_cid with a plain load at a computed address into
// thread d's rseq area (found by review): the reductions, which assume mm_cid
// unreadable unless the program uses rseq_load mm_cid or rseq_addr, notice the
// load and explore again with mm_cid in the dependence relation and the state
// hash, so stateful and DPOR find the outcome DFS finds (d running with cid 1
// while a still holds cid 0, then a exits: the tgkill to a fails with -3).
TEST(Explore, MmCidReadThroughAComputedAddressIsNotMerged) {
  const std::string text = R"(scenario cid_leak
cpus 2
var x: u64[2] = 7
signal SIGUSR1 ignore
func quick
  li r0, 0
  ret
end
func reader
  tgkill 0, SIGUSR1
  la r1, x + 152
  ld32 r2, [r1]
  la r3, x
  st [r3], r2
  la r3, x + 8
  st [r3], r0
  li r0, 0
  ret
end
thread a entry quick cpu 0
thread b entry quick cpu 1
thread d entry reader cpu 1
property !(x[0] == 1 && x[1] == -3)
)";
  const Scenario s = ParseScenario(text, "cid_leak.rsq");
  // x + 152 is thread d's (index 2) mm_cid field: the layout this relies on.
  const RunOptions ro;
  const Machine layout(s, ro);
  ASSERT_EQ(s.program.symbols[s.program.FindSymbol("x")].address + 152, layout.AreaAddress(2) + kRseqOffMmCid);
  const ExploreResult dfs = ExploreWith(s, StrategyKind::kDfs, 0);
  ASSERT_TRUE(dfs.complete);
  EXPECT_EQ(dfs.distinct_outcomes, 3u);
  for (StrategyKind k : {StrategyKind::kStateful, StrategyKind::kDpor}) {
    SCOPED_TRACE(StrategyName(k));
    const ExploreResult r = ExploreWith(s, k, 0);
    EXPECT_TRUE(r.complete);
    EXPECT_EQ(r.outcomes, dfs.outcomes);
    const ExploreResult first = ExploreWith(s, k, 0, 0, /*stop_at_failure=*/true);
    ASSERT_TRUE(first.failure.has_value());
    EXPECT_EQ(first.failure->verdict, Verdict::kPropertyFailed);
  }
}

TEST(Explore, StatefulRefusesNativeThreads) {
  ScenarioBuilder b("native");
  b.Func("f").Ret();
  b.Native("n", 0, [](ThreadApi&) { return int64_t{0}; });
  const Scenario s = b.Build();
  ExploreOptions o;
  o.strategy = StrategyKind::kStateful;
  EXPECT_THROW(Explore(s, o), InputError);
}

// Independent per-CPU operations: DPOR explores one interleaving whatever the
// number of threads (each pinned to its own CPU); plain DFS explores all of them.
// A race reversed through a third thread: t0 writes x, t1 writes y, t2 reads
// y then x, each pinned to its own CPU and starting at its shared access
// (addresses in argument registers). For the race of t0's write with t2's
// read of x, t2's read of x happens after its read of y, which happens after
// t1's write: the source-set initials are {t1} where Flanagan–Godefroid adds
// t2. Here both reach the optimum, one execution per outcome (4, none
// redundant; measured with either rule), which this pins together with DFS's
// outcome set.
TEST(Explore, SourceSetsReverseARaceThroughAThirdThread) {
  // Built twice: the first time to learn the symbols' addresses.
  const auto build = [](int64_t x, int64_t y) {
    ScenarioBuilder b("source_sets");
    b.Cpus(3).Var("x", Width::kU64, 1).Var("y", Width::kU64, 1);
    b.Func("w").St(Mem(1), 2).Ret();
    b.Func("r").Ld(2, Mem(1)).Ld(4, Mem(3)).Observe("y", 2).Observe("x", 4).Ret();
    b.Thread("t0", "w", 0, 1, {{1, x}, {2, 1}}).Thread("t1", "w", 1, 2, {{1, y}, {2, 1}});
    b.Thread("t2", "r", 2, 4, {{1, y}, {3, x}});
    return b.Build();
  };
  const Scenario probe = build(0, 0);
  const auto address = [&probe](const char* name) {
    return static_cast<int64_t>(probe.program.symbols[probe.program.FindSymbol(name)].address);
  };
  const Scenario s = build(address("x"), address("y"));
  const ExploreResult dfs = ExploreWith(s, StrategyKind::kDfs, 0);
  const ExploreResult dpor = ExploreWith(s, StrategyKind::kDpor, 0);
  ASSERT_TRUE(dfs.complete);
  ASSERT_TRUE(dpor.complete);
  EXPECT_EQ(dpor.outcomes, dfs.outcomes);
  EXPECT_EQ(dfs.distinct_outcomes, 4u);  // (y, x) = 00, 01, 10, 11 as t2 sees them
  EXPECT_EQ(dpor.executions, 4u);
  EXPECT_EQ(dpor.redundant, 0u);
}

// Threads each pinned to its own CPU, thread i running ops[i] in order: a
// store of i + 1 to x[k] ({true, k}) or a load of x[k] that it observes
// ({false, k}). The variables' addresses are passed in registers, so every
// instruction but the accesses is local.
Scenario SharedAccesses(const std::vector<std::vector<std::pair<bool, int>>>& ops, int nvars) {
  const auto build = [&](const std::vector<int64_t>& addr) {
    ScenarioBuilder b("shared_accesses");
    b.Cpus(static_cast<uint32_t>(ops.size()));
    for (int v = 0; v < nvars; ++v) b.Var("x" + std::to_string(v), Width::kU64, 1);
    for (size_t i = 0; i < ops.size(); ++i) {
      FunctionBuilder& f = b.Func("f" + std::to_string(i));
      for (size_t k = 0; k < ops[i].size(); ++k) {
        const auto [write, var] = ops[i][k];
        if (write) {
          f.St(Mem(10 + var), 1);
        } else {
          f.Ld(2, Mem(10 + var)).Observe("o" + std::to_string(k), 2);
        }
      }
      f.Ret();
      std::vector<std::pair<uint8_t, int64_t>> regs = {{1, static_cast<int64_t>(i) + 1}};
      for (int v = 0; v < nvars; ++v) regs.emplace_back(static_cast<uint8_t>(10 + v), addr[v]);
      b.Thread("t" + std::to_string(i), "f" + std::to_string(i), static_cast<uint32_t>(i), 1ull << i, regs);
    }
    return b.Build();
  };
  const Scenario probe = build(std::vector<int64_t>(nvars, 0));
  std::vector<int64_t> addr;
  for (int v = 0; v < nvars; ++v) {
    addr.push_back(static_cast<int64_t>(
        probe.program.symbols[probe.program.FindSymbol("x" + std::to_string(v))].address));
  }
  return build(addr);
}

// Optimal DPOR (issue 18): programs on which source-set DPOR (POPL'14
// Algorithm 1, this explorer before wakeup trees) ran sleep-set-blocked
// executions, and wakeup trees run exactly one execution per Mazurkiewicz
// trace, none blocked. Every trace here has its own outcome (each load
// observes which store it read), so that is one execution per distinct
// outcome of DFS. Measured with `rseqmc check --strategy dpor --max-events 0`
// before (source sets) -> now:
//   * t0: x = 1; r = x   t1: x = 2   t2: r = x: 10 executions (1 blocked) -> 9;
//   * t0: x = 1; r = x   t1: x = 2; r = x   t2: r = x: 13 (1 blocked) -> 12;
//   * four threads t0: r = x; x = 1   t1: x = 2; y = 2   t2: r = y; r = x
//     t3: x = 4; r = y: 152 (12 blocked) -> 140 executions, 86 outcomes (here
//     traces outnumber outcomes: no redundant execution, but not one per outcome).
TEST(Explore, OptimalDporRunsNoSleepSetBlockedExecution) {
  struct Case {
    std::vector<std::vector<std::pair<bool, int>>> ops;
    int nvars;
    uint64_t executions;
    uint64_t outcomes;
  };
  const std::vector<Case> cases = {
      {{{{true, 0}, {false, 0}}, {{true, 0}}, {{false, 0}}}, 1, 9, 9},
      {{{{true, 0}, {false, 0}}, {{true, 0}, {false, 0}}, {{false, 0}}}, 1, 12, 12},
      {{{{false, 0}, {true, 0}}, {{true, 0}, {true, 1}}, {{false, 1}, {false, 0}}, {{true, 0}, {false, 1}}}, 2, 140, 86},
  };
  for (size_t c = 0; c < cases.size(); ++c) {
    const Scenario s = SharedAccesses(cases[c].ops, cases[c].nvars);
    const ExploreResult dfs = ExploreWith(s, StrategyKind::kDfs, 0);
    const ExploreResult dpor = ExploreWith(s, StrategyKind::kDpor, 0);
    ASSERT_TRUE(dfs.complete) << "case " << c;
    ASSERT_TRUE(dpor.complete) << "case " << c;
    EXPECT_EQ(dpor.outcomes, dfs.outcomes) << "case " << c;
    EXPECT_EQ(dfs.distinct_outcomes, cases[c].outcomes) << "case " << c;
    EXPECT_EQ(dpor.executions, cases[c].executions) << "case " << c;
    EXPECT_EQ(dpor.redundant, 0u) << "case " << c;
  }
}

// Regression (found by DporAndStatefulFindExactlyTheOutcomesOfDfs, shrunk
// by hand): at K=1, t0's tgkill to t1 races with t1's exit, and the outcome
// "the SIGUSR1 handler runs on t1 (hits[1] = 1), t1 exits, then t0's tgkill
// fails with -ESRCH" needs the race between the tgkill and t1's first handler
// step reversed, after the signal hit t1. There a preemption of t0, explored
// before the signal and still asleep (it commutes with the signal), looked
// like a weak initial of v = t1's step, so the race was dropped and one of
// DFS's six outcomes was lost. An injected event is optional (and under the
// bound no longer possible there): it is a weak initial only where v holds
// it (model/wakeup_tree.h WeakInitialIndex). Golden counts: dpor 53
// executions, 7 sleep-set blocked (the source-set DPOR before wakeup trees
// ran the same 53/7); dfs 147.
TEST(Explore, OptimalDporKeepsARaceThatOnlyASleepingEventCommutesWith) {
  const Scenario s = ParseScenario(R"(scenario sleeping_event_hides_a_race
cpus 2
percpu hits: u64 stride 64
func main0
  nop
  observe o0, r0
  li r9, 1
  tgkill r9, SIGALRM
  ret
end
func main1
  ret
end
func handler0
  getcpu
  mul r11, r0, 64
  la r9, hits
  add r11, r11, r9
  li r10, 1
  st [r11], r10
  ret
end
thread t0 entry main0 cpu 0
thread t1 entry main1 cpu 1
signal SIGUSR1 handler handler0
signal SIGALRM ignore
)",
                                   "sleeping_event_hides_a_race.rsq");
  const ExploreResult dfs = ExploreWith(s, StrategyKind::kDfs, 1);
  const ExploreResult dpor = ExploreWith(s, StrategyKind::kDpor, 1);
  const ExploreResult stateful = ExploreWith(s, StrategyKind::kStateful, 1);
  ASSERT_TRUE(dfs.complete);
  ASSERT_TRUE(dpor.complete);
  ASSERT_TRUE(stateful.complete);
  EXPECT_EQ(dfs.executions, 147u);
  EXPECT_EQ(dfs.distinct_outcomes, 6u);
  EXPECT_EQ(dpor.outcomes, dfs.outcomes);
  EXPECT_EQ(stateful.outcomes, dfs.outcomes);
  EXPECT_EQ(dpor.executions, 46u);
  EXPECT_EQ(dpor.redundant, 0u);
  // The outcome the unsound rule lost: t0's tgkill returned -ESRCH (t1 had
  // exited) and the handler ran on t1's CPU 1.
  const uint64_t hits1 = s.program.symbols[s.program.FindSymbol("hits")].address + 64 - kDataBase;
  const auto lost = [&](const Outcome& o) {
    uint64_t v = 0;
    std::memcpy(&v, o.symbols.data() + hits1, 8);
    return o.returns.at(0) == -3 && v == 1;
  };
  EXPECT_EQ(std::count_if(dfs.outcomes.begin(), dfs.outcomes.end(), lost), 1);
  EXPECT_EQ(std::count_if(dpor.outcomes.begin(), dpor.outcomes.end(), lost), 1);
}

// A classic where source sets are not optimal (Abdulla et al., POPL'14 §3:
// source-set DPOR starts a reversal with the right thread but may then
// continue into a sleep-set blocked execution; wakeup trees do not): t0
// writes x and reads it back, t1 writes x, and n readers read x. Every
// Mazurkiewicz trace gives a distinct outcome (3^(n+1) of them), so optimal
// DPOR runs exactly one execution per outcome and none is sleep-set
// blocked; source-set DPOR ran 10/30/88 executions (1/3/7 blocked) for
// n = 1/2/3.
TEST(Explore, OptimalDporExploresEachTraceOfWritersAndReadersOnce) {
  for (int n = 1; n <= 3; ++n) {
    std::vector<std::vector<std::pair<bool, int>>> ops = {{{true, 0}, {false, 0}}, {{true, 0}}};
    for (int r = 0; r < n; ++r) ops.push_back({{false, 0}});
    const Scenario s = SharedAccesses(ops, 1);
    const ExploreResult dpor = ExploreWith(s, StrategyKind::kDpor, 0);
    ASSERT_TRUE(dpor.complete) << n << " readers";
    const uint64_t traces = n == 1 ? 9 : n == 2 ? 27 : 81;
    EXPECT_EQ(dpor.executions, traces) << n << " readers";
    EXPECT_EQ(dpor.redundant, 0u) << n << " readers";
    EXPECT_EQ(dpor.distinct_outcomes, traces) << n << " readers";
    // Plain DFS (too slow for five threads) finds the same outcomes.
    if (n <= 2) {
      EXPECT_EQ(dpor.outcomes, ExploreWith(s, StrategyKind::kDfs, 0).outcomes) << n << " readers";
    }
  }
}

TEST(Explore, DporIsLinearOnIndependentPinnedThreads) {
  for (int n = 2; n <= 4; ++n) {
    ScenarioBuilder b("pinned");
    b.Cpus(static_cast<uint32_t>(n)).PerCpu("c", Width::kU64, 1);
    b.Func("inc").La(1, "c").Getcpu().Shl(2, 0, Imm(6)).Add(1, 1, R(2)).Ld(3, Mem(1)).Add(3, 3, Imm(1))
        .St(Mem(1), 3).Ret();
    for (int t = 0; t < n; ++t) b.Thread("t" + std::to_string(t), "inc", static_cast<uint32_t>(t), 1ull << t);
    b.Property(expr::Binary("==", expr::Sum("c"), expr::Const(n)));
    const Scenario s = b.Build();
    const ExploreResult dpor = ExploreWith(s, StrategyKind::kDpor, 0);
    EXPECT_TRUE(dpor.complete);
    EXPECT_EQ(dpor.executions - dpor.redundant, 1u) << n << " threads";
    EXPECT_EQ(dpor.distinct_outcomes, 1u);
  }
}

// More than 64 threads (issue 18): exhaustive search sizes its thread sets to
// the scenario. 64 CPUs each run a thread that exits at once; threads 68 and
// 69 wait behind threads 4 and 5 and store 1 and 2 to x, so DPOR must reverse
// a race between two threads whose indices no 64-bit mask holds, and finds
// both final values of x (the property x == 1 fails in one of them).
TEST(Explore, DporHandlesMoreThan64Threads) {
  ScenarioBuilder b("many_threads");
  b.Cpus(64).Var("x", Width::kU64, 1);
  b.Func("quit").Ret();
  b.Func("w").La(1, "x").St(Mem(1), 2).Ret();
  for (uint32_t t = 0; t < 70; ++t) {
    if (t < 68) {
      b.Thread("t" + std::to_string(t), "quit", t % 64, uint64_t{1} << (t % 64));
    } else {
      b.Thread("t" + std::to_string(t), "w", t - 64, uint64_t{1} << (t - 64), {{2, t - 67}});
    }
  }
  b.Property(expr::Binary("==", expr::Sum("x"), expr::Const(1)));
  const Scenario s = b.Build();
  const ExploreResult r = ExploreWith(s, StrategyKind::kDpor, 0);
  EXPECT_TRUE(r.complete);
  ASSERT_EQ(r.distinct_outcomes, 2u);
  std::set<Verdict> verdicts;
  for (const Outcome& o : r.outcomes) verdicts.insert(o.verdict);
  EXPECT_EQ(verdicts, (std::set<Verdict>{Verdict::kPass, Verdict::kPropertyFailed}));
  // Golden counts. Most executions are sleep-set blocked: the exits of the
  // threads that share a CPU bit race, and a footprint names thread t by bit
  // t % 64 (sim/footprint.h), so threads 64..69 also look dependent on
  // threads 0..5. Source-set DPOR took 2,832 executions (2,830 redundant);
  // wakeup trees reverse each race once along its v (optimal DPOR), 365 (363).
  EXPECT_EQ(r.executions, 365u);
  EXPECT_EQ(r.redundant, 363u);
}

// ---------------------------------------------------------------------------
// Events only where they can matter (ExploreOptions::defer_events, issue 18;
// the rules: tests/event_commute_test.cc): with events left out where the
// same event one boundary later is equivalent, every exhaustive strategy
// finds exactly the outcomes (final states and verdicts) of plain DFS with
// events at every boundary, at K = 1 and K = 2, on generated programs and on
// every built-in (the 2015-RFC ones under the rfc2015 ABI, the preempt-lock
// ones too). The built-ins whose plain DFS does not complete within its cap
// are compared with plain stateful search, then plain DPOR (both checked
// equal to DFS above).
//
// Cases: RSEQMC_DEFER_EVENTS_CASES generated programs (default 1000). On the
// built-ins at K = 2, unless RSEQMC_DEFER_EVENTS_FULL is set (then every
// strategy, uncapped: a quarter of an hour under load), the reference is
// plain stateful search and DPOR with deferred events is compared only
// where it completes within kDporK2Cap executions (percpu_list,
// percpu_buffer, rfc2015_selftest and abba_deadlock need 0.2-2 million).

using testing::ExploreDeferring;  // tests/explore_helpers.h

int EnvCount(const char* name, int fallback) {
  const char* v = std::getenv(name);
  return v == nullptr ? fallback : std::atoi(v);
}

TEST(Explore, DeferredEventsKeepTheOutcomesOfPlainDfsOnGeneratedPrograms) {
  uint64_t plain_total = 0, deferred_total = 0;
  testgen::CheckCases(EnvCount("RSEQMC_DEFER_EVENTS_CASES", 1000), [&] {
    const auto g = *testgen::GenScenario(SmallPrograms());
    for (uint32_t events : {1u, 2u}) {
      const ExploreResult plain = ExploreDeferring(g.scenario, StrategyKind::kDfs, events, false, 20000);
      RC_PRE(plain.complete);
      for (StrategyKind k : {StrategyKind::kDfs, StrategyKind::kDpor, StrategyKind::kStateful}) {
        const ExploreResult r = ExploreDeferring(g.scenario, k, events, true, 0);
        RC_LOG() << StrategyName(k) << " K=" << events << ": " << r.executions << " executions, plain DFS "
                 << plain.executions;
        RC_ASSERT(r.complete);
        RC_ASSERT(r.outcomes == plain.outcomes);
        if (k == StrategyKind::kDfs) {
          RC_ASSERT(r.executions <= plain.executions);
          plain_total += plain.executions;
          deferred_total += r.executions;
        }
      }
    }
  });
  // The reduction does something on these programs (not a test that cannot fail).
  EXPECT_LT(deferred_total, plain_total);
  std::cout << "plain DFS " << plain_total << " executions, with deferred events " << deferred_total << "\n";
}

// The ABI a built-in runs under here: the 2015-RFC programs under rfc2015.
// With a 20,000-step budget: no built-in needs more with OPS=1, PER=1, and
// abort_retry_livelock's livelocks then cost a fifth of the default's.
RunOptions BuiltinRun(const Scenario& s) {
  RunOptions run;
  run.max_steps = 20000;
  if (FindRfc2015Use(s.program) != nullptr) run.kernel = {KernelModel::kRfc2015, "rfc2015"};
  return run;
}

constexpr uint64_t kDporK2Cap = 50000;

// The reference outcomes of `s` at K = `events` without deferred events:
// plain DFS if it completes within 20,000 executions (tried at K = 2 only in
// a full run: there it rarely does), else plain stateful search, else plain
// DPOR; `kind` says which.
ExploreResult PlainReference(const Scenario& s, uint32_t events, const RunOptions& run, bool full,
                             StrategyKind& kind) {
  if (events == 1 || full) {
    kind = StrategyKind::kDfs;
    ExploreResult dfs = ExploreDeferring(s, kind, events, false, 20000, run);
    if (dfs.complete) return dfs;
  }
  kind = StrategyKind::kStateful;
  ExploreResult stateful = ExploreDeferring(s, kind, events, false, 0, run);
  if (stateful.complete) return stateful;
  kind = StrategyKind::kDpor;
  return ExploreDeferring(s, kind, events, false, 0, run);
}

TEST(Explore, DeferredEventsKeepTheOutcomesOfPlainSearchOnEveryBuiltin) {
  const bool full = std::getenv("RSEQMC_DEFER_EVENTS_FULL") != nullptr;
  int checked = 0, dpor_k2_capped = 0;
  for (const BuiltinScenario& b : BuiltinScenarios()) {
    const Scenario s = Builtin(b.name, {{"OPS", 1}, {"PER", 1}});
    const RunOptions run = BuiltinRun(s);
    for (uint32_t events : {1u, 2u}) {
      StrategyKind ref_kind;
      const ExploreResult ref = PlainReference(s, events, run, full, ref_kind);
      ASSERT_TRUE(ref.complete) << b.name;
      for (StrategyKind k : {StrategyKind::kDfs, StrategyKind::kDpor, StrategyKind::kStateful}) {
        // Plain DFS did not finish within its cap: deferred DFS is not tried.
        if (k == StrategyKind::kDfs && ref_kind != StrategyKind::kDfs) continue;
        const bool capped = k == StrategyKind::kDpor && events == 2 && !full;
        const ExploreResult r = ExploreDeferring(s, k, events, true, capped ? kDporK2Cap : 0, run);
        std::cout << b.name << " K=" << events << " " << StrategyName(k) << ": " << r.executions << " executions ("
                  << (r.complete ? "complete" : "capped") << "), plain " << StrategyName(ref_kind) << " "
                  << ref.executions << "\n";
        if (capped && !r.complete) {
          ++dpor_k2_capped;
          continue;
        }
        EXPECT_TRUE(r.complete) << b.name << " " << StrategyName(k) << " K=" << events;
        EXPECT_EQ(r.outcomes, ref.outcomes) << b.name << ": " << StrategyName(k) << " with deferred events, plain "
                                            << StrategyName(ref_kind) << ", K=" << events;
      }
    }
    ++checked;
  }
  EXPECT_GE(checked, 30);
  std::cout << checked << " built-ins; DPOR at K=2 left out on " << dpor_k2_capped << " (over " << kDporK2Cap
            << " executions)\n";
}

// Every planted bug (the 2015-RFC and allocator ones included) is found with
// one position per class of event positions exactly when it is found with
// events at every boundary, with as many events; the counterexample `rseqmc
// check` prints (confirmed, minimised) has the same number of events and a
// token no longer, and its token replays to the failure.
TEST(Explore, DeferredEventsKeepPlantedBugsWithMinimalCounterexamples) {
  int found = 0, planted = 0;
  for (const BuiltinScenario& b : BuiltinScenarios()) {
    if (!b.name.starts_with("buggy/")) continue;
    ++planted;
    const Scenario s = Builtin(b.name, {{"PER", 1}});
    ExploreOptions o;
    // The allocator family's bugs are judged partly by its heap census.
    if (IsAllocatorScenario(s)) o.oracle = [&s](const ExecutionResult& r) { return CheckAllocatorHeap(s, r); };
    o.bounds.max_events = 1;
    o.iterative = true;
    o.max_executions = 500000;
    o.run = BuiltinRun(s);
    std::optional<Failure> failure[2];
    std::string token[2];
    for (const bool defer : {false, true}) {
      o.defer_events = defer;
      const ExploreResult r = Explore(s, o);
      if (!r.failure) continue;
      failure[defer] = r.failure;
      const Counterexample cx = BuildCounterexample(s, o, *r.failure);
      EXPECT_TRUE(cx.deterministic) << b.name << ": " << cx.determinism_problem;
      token[defer] = cx.token;
      Simulator sim(s, o.run);
      ReplayScheduler replay(DecodeSchedule(s, cx.token));
      const ExecutionResult again = sim.Run(replay);
      // The same verdict, or the heap census's (judged after the run).
      EXPECT_TRUE(again.verdict == r.failure->verdict || (o.oracle && !o.oracle(again).empty()))
          << b.name << " " << cx.token << ": " << VerdictName(again.verdict);
      EXPECT_EQ(cx.schedule.NumEvents(), r.failure->schedule.NumEvents()) << b.name;
    }
    ASSERT_EQ(failure[1].has_value(), failure[0].has_value()) << b.name;
    EXPECT_TRUE(failure[0].has_value()) << b.name << " not found with one event";
    if (!failure[0]) continue;
    ++found;
    EXPECT_EQ(failure[1]->verdict, failure[0]->verdict) << b.name;
    EXPECT_EQ(failure[1]->schedule.NumEvents(), failure[0]->schedule.NumEvents()) << b.name;
    EXPECT_LE(token[1].size(), token[0].size()) << b.name << ": " << token[1] << " vs " << token[0];
  }
  EXPECT_GE(planted, 14);
  std::cout << found << " of " << planted << " planted bugs found with and without deferred events\n";
}

// ---------------------------------------------------------------------------
// What exhaustive exploration costs (issue 18):
//   * machine checkpoints within a budget: any budget explores exactly the
//     same executions, redundant executions and outcomes (a smaller one
//     replays more of each path), and one long execution keeps its
//     checkpoints within the budget;
//   * the time limit and an interrupt stop inside one long execution, and a
//     snapshot taken there resumes it to the uninterrupted result.

struct Case {
  const char* name;
  std::map<std::string, int64_t> defines;
};

// Checkpoints as often as the spacing floor allows (an unlimited budget:
// every node with alternatives on these short executions) and at most a few
// of them (a budget of one byte: the interval doubles at every checkpoint)
// give the same exploration.
TEST(ExploreCost, CheckpointBudgetDoesNotChangeTheExploration) {
  const Case cases[] = {{"percpu_counter", {}},
                        {"percpu_spinlock", {}},
                        {"percpu_list", {{"OPS", 1}, {"PER", 1}}},
                        {"buggy/cpu_not_rechecked", {}}};
  for (const Case& c : cases) {
    const Scenario s = Builtin(c.name, c.defines);
    for (StrategyKind k : {StrategyKind::kDfs, StrategyKind::kDpor, StrategyKind::kStateful}) {
      ExploreOptions o;
      o.strategy = k;
      o.bounds.max_events = 1;
      o.stop_at_first_failure = false;
      o.max_executions = 20000;
      o.checkpoint_budget_bytes = ~uint64_t{0};
      const ExploreResult full = Explore(s, o);
      o.checkpoint_budget_bytes = 1;
      const ExploreResult sparse = Explore(s, o);
      SCOPED_TRACE(std::string(c.name) + " " + StrategyName(k));
      EXPECT_GT(full.executions, 1u);
      EXPECT_EQ(sparse.executions, full.executions);
      EXPECT_EQ(sparse.redundant, full.redundant);
      EXPECT_EQ(sparse.stop_reason, full.stop_reason);
      EXPECT_EQ(sparse.outcomes, full.outcomes);
      EXPECT_EQ(sparse.failure.has_value(), full.failure.has_value());
      if (sparse.failure && full.failure) {
        EXPECT_EQ(sparse.failure->schedule, full.failure->schedule);
        EXPECT_EQ(sparse.failure->trace_hash, full.failure->trace_hash);
      }
    }
  }
}

// percpu_list with PER=256 runs about 21,700 steps; each checkpoint holds the
// whole data memory, so a checkpoint per node would take hundreds of MB.
TEST(ExploreCost, OneLongExecutionKeepsItsCheckpointsWithinTheBudget) {
  const Scenario s = Builtin("percpu_list", {{"PER", 256}});
  for (StrategyKind k : {StrategyKind::kDfs, StrategyKind::kDpor}) {
    ExploreOptions o;
    o.strategy = k;
    o.max_executions = 3;
    o.checkpoint_budget_bytes = uint64_t{4} << 20;
    const ExploreResult r = Explore(s, o);
    SCOPED_TRACE(StrategyName(k));
    EXPECT_EQ(r.executions, 3u);
    EXPECT_GT(r.max_depth, 20000u);
    // Checkpoints (4 MiB, plus one that may be saved past it before the
    // thinning) and the path's nodes (a few hundred bytes each, counted by
    // the capacity of the node vector: about 530 since a node holds its
    // alternatives inline; a checkpoint per node would be tens of KB each).
    EXPECT_LE(r.peak_memory_bytes, (uint64_t{5} << 20) + r.max_depth * 640);
  }
}

// A memory limit below what the path needs stops the exploration inside
// the first execution (PER=256: 21,700 boundaries), polled with the
// deadline (attack4 F1): no execution is finished, and the path measured
// when it stopped is far shorter than the execution.
TEST(ExploreCost, MemoryLimitCoversThePath) {
  const Scenario s = Builtin("percpu_list", {{"PER", 256}});
  for (StrategyKind k : {StrategyKind::kDfs, StrategyKind::kDpor}) {
    SCOPED_TRACE(StrategyName(k));
    ExploreOptions o;
    o.strategy = k;
    o.max_memory_bytes = 1 << 20;
    const ExploreResult r = Explore(s, o);
    EXPECT_EQ(r.stop_reason, "memory-limit");
    EXPECT_FALSE(r.complete);
    EXPECT_EQ(r.executions, 0u);
    EXPECT_GT(r.peak_memory_bytes, uint64_t{1} << 20);
    EXPECT_LT(r.peak_memory_bytes, uint64_t{4} << 20);
  }
}

// The deadline is polled every 1024 boundaries inside an execution: an
// interrupt raised before the exploration (or a time limit already passed)
// stops the first execution of PER=256 (21,700 boundaries) there, which is
// then not counted, and a snapshot taken there resumes to the same result as
// an uninterrupted exploration.
TEST(ExploreCost, InterruptAndTimeLimitStopInsideOneExecution) {
  const Scenario s = Builtin("percpu_list", {{"PER", 256}});
  ExploreOptions o;
  o.strategy = StrategyKind::kDpor;
  o.max_executions = 4;
  const ExploreResult whole = Explore(s, o);
  ASSERT_EQ(whole.executions, 4u);

  std::atomic<bool> stop{true};
  std::string snapshot;
  ExploreOptions cut = o;
  cut.interrupt = &stop;
  cut.snapshot = [&snapshot](const std::string& bytes) { snapshot = bytes; };
  const ExploreResult interrupted = Explore(s, cut);
  EXPECT_EQ(interrupted.stop_reason, "interrupted");
  EXPECT_EQ(interrupted.executions, 0u);
  ASSERT_FALSE(snapshot.empty());

  ExploreOptions again = o;
  again.resume_from = &snapshot;
  const ExploreResult resumed = Explore(s, again);
  EXPECT_EQ(resumed.executions, whole.executions);
  EXPECT_EQ(resumed.outcomes, whole.outcomes);
  EXPECT_EQ(resumed.max_depth, whole.max_depth);

  ExploreOptions timed = o;
  timed.time_limit_s = 1e-9;
  const ExploreResult late = Explore(s, timed);
  EXPECT_EQ(late.stop_reason, "time-limit");
  EXPECT_EQ(late.executions, 0u);
}

// --time-limit when every execution is slow: a few steps over 16 MiB of data
// take milliseconds each (the image is reset and the outcome hashed), and the
// clock used to be read only every 256 executions (16 with a progress line),
// so `check --time-limit 0.001` on a 64 MiB scenario ran 4.5 s. The explorer
// now reads it as often as the executions' speed asks: a limit shorter than
// one execution stops the search after at most that one, for every strategy.
TEST(ExploreLimits, ATimeLimitShorterThanOneExecutionStopsAfterIt) {
  const Scenario s = ParseScenario(R"(scenario slow_executions
cpus 2
var a: u64[1048576] = 0
var b: u64[1048576] = 0
var x: u64 = 0
func f
  la r1, x
  li r2, 1
  xadd r3, [r1], r2
  xadd r3, [r1], r2
  ret
end
thread t * 2 entry f cpu (i)
property x == 4
)",
                                   "slow.rsq");
  for (StrategyKind k : {StrategyKind::kDfs, StrategyKind::kStateful, StrategyKind::kDpor, StrategyKind::kRandom}) {
    SCOPED_TRACE(StrategyName(k));
    ExploreOptions o;
    o.strategy = k;
    o.time_limit_s = 1e-3;
    const ExploreResult r = Explore(s, o);
    EXPECT_EQ(r.stop_reason, "time-limit");
    EXPECT_LE(r.executions, 1u);
    EXPECT_FALSE(r.failure.has_value());
  }
}

// A thread that returns to a state it was in, with nothing else changed, is
// reported at once as a livelock with its cycle: the consumer of
// tools/bench/scenarios/retry_forever_32k.rsq re-arms rseq_cs (a store of the
// value already there) and retries a pop from an empty list every 13 steps.
// A loop whose stores change memory is no livelock: it runs to the step limit.
TEST(ExploreCost, ARetryLoopWithoutEffectIsALivelockWithItsCycle) {
  const Scenario s =
      ParseScenarioFile(std::string(RSEQMC_SOURCE_DIR) + "/tools/bench/scenarios/retry_forever_32k.rsq");
  EXPECT_EQ(s.expected, Verdict::kLivelock);  // stateful too: tests/check_cli_test.cc
  for (StrategyKind k : {StrategyKind::kDfs, StrategyKind::kDpor}) {
    ExploreOptions o;
    o.strategy = k;
    const ExploreResult r = Explore(s, o);
    SCOPED_TRACE(StrategyName(k));
    ASSERT_TRUE(r.failure.has_value());
    EXPECT_EQ(r.failure->verdict, Verdict::kLivelock);
    EXPECT_EQ(r.executions, 1u);
    EXPECT_LT(r.max_depth, 100u);  // a few rounds of 13 steps, each with the event alternatives tried first
    EXPECT_NE(r.failure->message.find("thread c at pop:"), std::string::npos) << r.failure->message;
    EXPECT_NE(r.failure->message.find(" returns there with the same registers and memory every 13 steps"),
              std::string::npos)
        << r.failure->message;
  }
  const Scenario counting = ParseScenario(R"(scenario counting
var n: u64 = 0
func count
  la r1, n
loop:
  ld r2, [r1]
  add r2, r2, 1
  st [r1], r2
  jmp loop
end
thread t entry count cpu 0
expect fail steplimit
)", "counting.rsq");
  ExploreOptions o;
  o.run.max_steps = 4000;
  const ExploreResult r = Explore(counting, o);
  ASSERT_TRUE(r.failure.has_value());
  EXPECT_EQ(r.failure->verdict, Verdict::kStepLimit);
  EXPECT_EQ(r.failure->message.find("livelock"), std::string::npos) << r.failure->message;
  EXPECT_GE(r.max_depth, 4000u);
}

}  // namespace
}  // namespace rseqmc
