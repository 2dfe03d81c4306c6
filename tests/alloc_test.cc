// The allocator family (issue 12, scenarios/alloc_*.rsq, scenarios/README.md
// "The allocator family"):
//   * `include` of IR libraries (.rsqi): errors name the library's file, line
//     and column; a library may not hold threads, properties or includes;
//     included code keeps no line of the scenario's file;
//   * the allocator oracle (model/oracles.h CheckAllocatorHeap): a real final
//     state passes; for each rule a broken copy of it fails with the exact
//     message;
//   * every variant passes exhaustive DPOR with one injected event, and the
//     oracle agrees on every execution (exact execution counts are the
//     explorer's goldens, tests/golden/explore_counts.txt);
//   * every planted bug fails with the verdict it declares and its
//     counterexample minimises to the golden number of injected events;
//   * on this machine's kernel (kernel/harness), each merged-ABI planted bug's
//     minimal counterexample forced with ptrace follows the simulated run and
//     breaks the same rule: the bug is real, not a model artefact.
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <string>
#include <vector>

#include <sys/stat.h>

#include <gtest/gtest.h>

#include "kernel/harness/crosscheck.h"
#include "kernel/harness/jit.h"
#include "kernel/harness/tracer.h"
#include "model/explorer.h"
#include "model/minimize.h"
#include "model/oracles.h"
#include "scenarios/builtin.h"
#include "scenarios/parser.h"
#include "sim/diag.h"
#include "sim/kernel/abi.h"
#include "sim/machine.h"
#include "sim/schedule.h"
#include "sim/simulator.h"
#include "sim/trace.h"

namespace rseqmc {
namespace {

using harness::AsExecutionResult;
using harness::CompareRuns;
using harness::HarnessUnavailableReason;
using harness::JitOptions;
using harness::JitProgram;
using harness::Plan;
using harness::RealResult;
using harness::RunPlan;
using harness::SimulateForPlan;

Scenario Builtin(const std::string& name) {
  const BuiltinScenario* b = FindBuiltinScenario(name);
  if (b == nullptr) throw std::runtime_error("no built-in scenario " + name);
  return ParseScenario(b->text, b->path);
}

// The ABI a scenario runs under: rfc2015 for region programs, else the default.
RunOptions RunFor(const Scenario& s) {
  RunOptions run;
  if (FindRfc2015Use(s.program) != nullptr) run.kernel = {KernelModel::kRfc2015, "rfc2015"};
  return run;
}

ExecutionResult RunNoEvents(const Scenario& s) {
  Schedule none;
  ReplayScheduler replay(none);
  Simulator sim(s, RunFor(s));
  return sim.Run(replay);
}

void Poke(const Scenario& s, ExecutionResult& r, const std::string& sym, uint32_t index, uint64_t v) {
  const int i = s.program.FindSymbol(sym);
  ASSERT_GE(i, 0) << sym;
  const uint64_t offset = s.program.symbols[static_cast<size_t>(i)].address - kDataBase + 8ull * index;
  ASSERT_LE(offset + 8, r.memory.size());
  std::memcpy(&r.memory[offset], &v, 8);
}

std::string InputErrorOf(const std::string& text, const std::string& file) {
  try {
    ParseScenario(text, file);
  } catch (const InputError& e) {
    return e.Format();
  }
  return "";
}

const std::vector<std::string>& Variants() {
  static const std::vector<std::string> v = {"alloc_tcache",         "alloc_percpu_rseq",
                                             "alloc_percpu_rfc2015", "alloc_percpu_mutex",
                                             "alloc_percpu_spin",    "alloc_percpu_preempt_lock",
                                             "alloc_shared_cas",     "alloc_global_lock"};
  return v;
}

// ---------------------------------------------------------------------------
// include

TEST(AllocInclude, EveryAllocBuiltinIsAVariantOrAPlantedBug) {
  std::vector<std::string> found;
  for (const BuiltinScenario& b : BuiltinScenarios()) {
    if (b.name.starts_with("alloc_") || b.name.starts_with("buggy/alloc_")) found.push_back(b.name);
  }
  EXPECT_EQ(found, (std::vector<std::string>{"alloc_global_lock",
                                             "alloc_percpu_mutex",
                                             "alloc_percpu_preempt_lock",
                                             "alloc_percpu_rfc2015",
                                             "alloc_percpu_rseq",
                                             "alloc_percpu_spin",
                                             "alloc_shared_cas",
                                             "alloc_tcache",
                                             "buggy/alloc_aba_untagged",
                                             "buggy/alloc_commit_before_copy",
                                             "buggy/alloc_flush_double_count",
                                             "buggy/alloc_lock_released_early",
                                             "buggy/alloc_preempt_lock_flag_cleared_early",
                                             "buggy/alloc_rfc2015_stale_cpu"}));
  EXPECT_NE(FindBuiltinLibrary("scenarios/alloc_common.rsqi"), nullptr);
  EXPECT_EQ(FindBuiltinLibrary("scenarios/alloc_common.rsq"), nullptr);
  EXPECT_EQ(FindBuiltinScenario("alloc_common"), nullptr);
}

TEST(AllocInclude, IncludedCodeHasNoLineOfTheScenarioAndItsOwnCodeKeepsIts) {
  const Scenario s = Builtin("alloc_percpu_rseq");
  const int lib = s.program.FindFunction("rseq_push");
  const int own = s.program.FindFunction("rseq_pop");
  ASSERT_GE(lib, 0);
  ASSERT_GE(own, 0);
  const Function& push = s.program.functions[static_cast<size_t>(lib)];
  const Function& pop = s.program.functions[static_cast<size_t>(own)];
  EXPECT_EQ(s.program.code[push.first].loc.line, 0u);
  EXPECT_EQ(s.program.code[pop.first].loc.line, 46u);  // `rseq_arm pop_cs`
}

TEST(AllocInclude, AMissingLibraryIsAnErrorAtTheInclude) {
  EXPECT_EQ(InputErrorOf("scenario x\ninclude \"nowhere.rsqi\"\n", "/tmp/rseqmc_alloc_test/x.rsq"),
            "/tmp/rseqmc_alloc_test/x.rsq:2:9: error: cannot read library '/tmp/rseqmc_alloc_test/nowhere.rsqi'\n"
            "  include \"nowhere.rsqi\"\n"
            "          ^\n"
            "  hint: the path is relative to the including file's folder\n");
}

TEST(AllocInclude, AnErrorInsideALibraryNamesTheLibraryAndItsLine) {
  // scenarios/alloc_common.rsqi uses constants the scenario must declare first
  // (the built-in library: no scenarios/ folder below the test's directory).
  EXPECT_EQ(InputErrorOf("scenario x\ninclude \"alloc_common.rsqi\"\n", "scenarios/x.rsq"),
            "scenarios/alloc_common.rsqi:53:21: error: unknown constant 'CAP' (in the library included from "
            "scenarios/x.rsq:2:9)\n"
            "  const SLOT_BYTES = (CAP * 8)      # derived: bytes of one cache's slots\n"
            "                      ^\n"
            "  hint: declare it first with `const CAP = VALUE`\n");
}

// Review findings F2/F3: an error in an included library that is found
// after parsing (labels, calls, descriptors, duplicate symbols, signal
// handlers, found by the builder and validation) names the library's own
// file, line and column and the include, not the scenario's file with the
// library's line.
TEST(AllocInclude, ErrorsFoundAfterParsingNameTheLibraryItsPositionAndTheInclude) {
  const std::filesystem::path dir = std::filesystem::path(::testing::TempDir()).lexically_normal() / "rseqmc_f2";
  std::filesystem::create_directories(dir);
  const std::string lib = (dir / "lib.rsqi").string(), x = (dir / "x.rsq").string();
  const std::string scenario =
      "scenario x\ncpus 1\n\n\ninclude \"lib.rsqi\"\nfunc m\n  call h\n  ret\nend\nthread t entry m cpu 0\n";
  struct Case {
    std::string library;
    std::string first_line;  // of the formatted error, after "LIB:"
  };
  const std::vector<Case> cases = {
      {"func h\n  li r1, 1\n  jmp nowhere\n  ret\nend\n", "3:3: error: undefined label 'nowhere'"},
      {"func h\n  li r1, 1\n  call nof\n  ret\nend\n", "3:3: error: undefined function 'nof'"},
      {"var y: u64\nvar y: u64\nfunc h\n ret\nend\n", "2:5: error: duplicate symbol 'y'"},
      {"signal SIGUSR1 handler nope\nfunc h\n ret\nend\n", "1:8: error: undefined function 'nope'"},
      {"func h\n  rseq_arm c\ns:\n  li r1, 1\np:\n  ret\n  sig 0x53053053\na:\n  ret\n"
       "  cs c start=s post_commit=p abort=a\nend\n",
       "10:6: error: descriptor 'c': the last instruction of the section (line 4) must be the commit store"},
  };
  for (const Case& c : cases) {
    std::ofstream(lib) << c.library;
    const std::string e = InputErrorOf(scenario, x);
    const std::string first = e.substr(0, e.find('\n'));
    EXPECT_EQ(first.rfind(lib + ":" + c.first_line, 0), 0u) << e;
    EXPECT_NE(first.find("(in the library included from " + x + ":5:9)"), std::string::npos) << e;
  }
  // The caret line is the library's.
  std::ofstream(lib) << cases[0].library;
  const std::string e = InputErrorOf(scenario, x);
  EXPECT_NE(e.find("\n    jmp nowhere\n    ^\n"), std::string::npos) << e;
}

// A device or a FIFO is no library: `include "/dev/zero"` read until memory
// ran out and `include "fifo"` blocked in open() for ever; both are errors
// at the include.
TEST(AllocInclude, ADeviceOrAFifoIsAnErrorAtTheInclude) {
  const std::string dir = std::filesystem::path(::testing::TempDir()).lexically_normal().string();
  const std::string x = (std::filesystem::path(dir) / "x.rsq").string();
  const std::string fifo = (std::filesystem::path(dir) / "lib_fifo.rsqi").string();
  std::filesystem::remove(fifo);
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  for (const std::string& lib : {std::string("/dev/zero"), fifo}) {
    const std::string include = "include \"" + lib + "\"";
    EXPECT_EQ(InputErrorOf("scenario x\n" + include + "\n", x),
              x + ":2:9: error: cannot include '" + lib + "': it is not a regular file (a device, FIFO or socket)\n"
                  "  " + include + "\n"
                  "          ^\n"
                  "  hint: name an IR library file (.rsqi)\n");
  }
  std::filesystem::remove(fifo);
}

// Review findings F1 and F16: a directory or a file name with a NUL byte is
// an error at the include, not an empty library or a message cut short.
TEST(AllocInclude, ADirectoryOrANulByteIsAnErrorAtTheInclude) {
  const std::string dir = std::filesystem::path(::testing::TempDir()).lexically_normal().string();
  std::filesystem::create_directories(std::filesystem::path(dir) / "lib_dir.rsqi");
  const std::string x = (std::filesystem::path(dir) / "x.rsq").string();
  const std::string lib = (std::filesystem::path(dir) / "lib_dir.rsqi").string();
  EXPECT_EQ(InputErrorOf("scenario x\ninclude \"lib_dir.rsqi\"\n", x),
            x + ":2:9: error: cannot include '" + lib + "': it is a directory\n"
                "  include \"lib_dir.rsqi\"\n"
                "          ^\n"
                "  hint: name an IR library file (.rsqi) in it\n");
  const std::string nul = std::string("scenario x\ninclude \"a") + '\0' + "b.rsqi\"\n";
  const std::string e = InputErrorOf(nul, x);
  EXPECT_EQ(e.substr(0, e.find('\n')), x + ":2:9: error: the library file name contains a NUL byte") << e;
  EXPECT_NE(e.find("\n  include \"a?b.rsqi\"\n          ^\n  hint: write the file name without control characters"),
            std::string::npos)
      << e;
}

// Review finding F11: a built-in scenario (its embedded text) includes the
// embedded libraries, whatever the current directory holds at the same
// relative path; a scenario read from disk still includes from disk.
TEST(AllocInclude, BuiltinsIncludeTheEmbeddedLibrariesWhateverTheCurrentDirectory) {
  const std::filesystem::path dir = std::filesystem::path(::testing::TempDir()) / "rseqmc_f11";
  std::filesystem::create_directories(dir / "scenarios" / "buggy");
  {
    std::ofstream(dir / "scenarios" / "alloc_common.rsqi") << "bogus statement\n";
  }
  const std::filesystem::path before = std::filesystem::current_path();
  std::filesystem::current_path(dir);
  const BuiltinScenario* b = FindBuiltinScenario("buggy/alloc_commit_before_copy");
  ASSERT_NE(b, nullptr);
  std::string builtin_error, disk_error;
  try {
    const Scenario s = ParseScenario(b->text, b->path);
    EXPECT_GE(s.program.FindFunction("alloc"), 0);
  } catch (const InputError& e) {
    builtin_error = e.Format();
  }
  // The same text as a copy (a file on disk with that name) reads the
  // library next to it: the bogus one.
  try {
    ParseScenario(std::string(b->text), b->path);
  } catch (const InputError& e) {
    disk_error = e.Format();
  }
  std::filesystem::current_path(before);
  EXPECT_EQ(builtin_error, "");
  EXPECT_EQ(disk_error.substr(0, disk_error.find(':')), "scenarios/alloc_common.rsqi") << disk_error;
}

TEST(AllocInclude, ALibraryHoldsNoThreadsNoPropertiesNoIncludes) {
  const std::string dir = std::filesystem::path(::testing::TempDir()).lexically_normal().string();
  for (const char* bad : {"thread t entry f\n", "property 1 == 1\n", "include \"y.rsqi\"\n"}) {
    const std::string path = (std::filesystem::path(dir) / "alloc_test_lib.rsqi").string();
    FILE* f = std::fopen(path.c_str(), "w");
    ASSERT_NE(f, nullptr);
    std::fputs(bad, f);
    std::fclose(f);
    const std::string e =
        InputErrorOf("scenario x\ninclude \"alloc_test_lib.rsqi\"\n", (std::filesystem::path(dir) / "x.rsq").string());
    EXPECT_EQ(e.substr(0, e.find('\n')),
              path + ":1:1: error: a library holds only `const`, `var`, `percpu`, `scratch`, `func` and `signal` "
                     "statements (in the library included from " + (std::filesystem::path(dir) / "x.rsq").string() +
                     ":2:9)")
        << bad;
  }
}

// ---------------------------------------------------------------------------
// The allocator oracle on real final states

class AllocOracle : public ::testing::Test {
 protected:
  // alloc_percpu_rseq with no event: w0 runs both its rounds on CPU 0, then
  // w1 on CPU 0 too. Round 1 of w0 carves object 1 from the arena and frees
  // it into CPU 0's cache; every later round pops and pushes it again. At the
  // end (NOBJ 4, CAP 1): cache 0 holds object 1, cache 1 nothing, the arena
  // stack nothing, objects 2..4 were never carved.
  void SetUp() override {
    s_ = Builtin("alloc_percpu_rseq");
    r_ = RunNoEvents(s_);
    ASSERT_EQ(r_.verdict, Verdict::kPass) << r_.message;
  }
  uint64_t At(const std::string& sym, uint32_t i) const { return static_cast<uint64_t>(r_.SymbolValue(s_, sym, 0, i)); }
  Scenario s_;
  ExecutionResult r_;
};

TEST_F(AllocOracle, TheRealFinalStateHoldsEveryObjectOnce) {
  EXPECT_EQ(At("arena_stack", 0), 0u);
  EXPECT_EQ(At("arena_fresh", 0), 2u);
  EXPECT_EQ(At("cache_count", 0), 1u);
  EXPECT_EQ(At("cache_count", 1), 0u);
  EXPECT_EQ(At("cache_slots", 0), 1u);
  EXPECT_EQ(CheckAllocatorHeap(s_, r_), "");
}

TEST_F(AllocOracle, ArenaCountAboveCapacity) {
  Poke(s_, r_, "arena_stack", 0, 5);
  EXPECT_EQ(CheckAllocatorHeap(s_, r_), "allocator: arena count arena_stack[0] = 5 is above its capacity 4");
}

TEST_F(AllocOracle, CacheCountAboveCapacity) {
  Poke(s_, r_, "cache_count", 1, 2);
  EXPECT_EQ(CheckAllocatorHeap(s_, r_), "allocator: cache 1 count cache_count[1] = 2 is above its capacity 1");
}

TEST_F(AllocOracle, ASlotWithinTheCountThatIsNoObject) {
  Poke(s_, r_, "cache_slots", 0, 0);
  EXPECT_EQ(CheckAllocatorHeap(s_, r_),
            "allocator: cache_slots[0] (cache 0) = 0 is within the cache's count but is no object (1..4)");
}

TEST_F(AllocOracle, AnObjectCachedAndInTheArenaIsTwice) {
  Poke(s_, r_, "arena_stack", 0, 1);
  Poke(s_, r_, "arena_stack", 1, 1);
  EXPECT_EQ(CheckAllocatorHeap(s_, r_),
            "allocator: object 1 is in 2 places: arena_stack[1] and cache_slots[0] (cache 0)");
}

TEST_F(AllocOracle, AnObjectHeldAndCachedIsTwice) {
  Poke(s_, r_, "held", 2, 1);
  EXPECT_EQ(CheckAllocatorHeap(s_, r_),
            "allocator: object 1 is in 2 places: cache_slots[0] (cache 0) and held[2] (thread 1)");
}

TEST_F(AllocOracle, AnObjectNowhereIsLost) {
  Poke(s_, r_, "cache_count", 0, 0);  // object 1 dropped from cache 0
  EXPECT_EQ(CheckAllocatorHeap(s_, r_),
            "allocator: object 1 is lost: in no cache, not in the arena, held by no thread (3 of 4 objects found: "
            "arena 3, caches 0, held 0)");
}

TEST_F(AllocOracle, NeverCarvedObjectsBelongToTheArena) {
  Poke(s_, r_, "arena_fresh", 0, 1);  // object 1 never carved, yet cached
  EXPECT_EQ(CheckAllocatorHeap(s_, r_),
            "allocator: object 1 is in 2 places: arena_fresh (never handed out) and cache_slots[0] (cache 0)");
}

TEST(AllocOracleSharedList, CycleAndCountMismatchAreBroken) {
  const Scenario s = Builtin("alloc_shared_cas");
  ExecutionResult r = RunNoEvents(s);
  ASSERT_EQ(r.verdict, Verdict::kPass) << r.message;
  ASSERT_EQ(CheckAllocatorHeap(s, r), "");
  const uint64_t head = static_cast<uint64_t>(r.SymbolValue(s, "shared_head")) & 0xffffffffu;
  ASSERT_EQ(r.SymbolValue(s, "shared_count"), 2);
  const uint64_t second = static_cast<uint64_t>(r.SymbolValue(s, "obj_next", 0, static_cast<uint32_t>(head)));
  ASSERT_NE(second, 0u);
  ExecutionResult cycle = r;
  Poke(s, cycle, "obj_next", static_cast<uint32_t>(second), head);
  EXPECT_EQ(CheckAllocatorHeap(s, cycle), "allocator: the shared list is longer than the 4 objects (a cycle)");
  ExecutionResult miscount = r;
  Poke(s, miscount, "shared_count", 0, 1);
  EXPECT_EQ(CheckAllocatorHeap(s, miscount), "allocator: shared_count = 1 but the shared list holds 2 objects");
}

TEST(AllocOracleShape, OnlyAllocatorScenariosAreJudged) {
  const Scenario counter = Builtin("percpu_counter");
  EXPECT_FALSE(IsAllocatorScenario(counter));
  EXPECT_THROW(CheckAllocatorHeap(counter, RunNoEvents(counter)), std::invalid_argument);
  for (const std::string& v : Variants()) EXPECT_TRUE(IsAllocatorScenario(Builtin(v))) << v;
}

// ---------------------------------------------------------------------------
// Every variant checked; the oracle agrees on every execution

TEST(AllocVariants, EachPassesWithOneEventAndTheOracleAgreesOnEveryExecution) {
  for (const std::string& name : Variants()) {
    SCOPED_TRACE(name);
    const Scenario s = Builtin(name);
    ExploreOptions o;
    o.strategy = StrategyKind::kDpor;
    o.bounds.max_events = 1;
    o.run = RunFor(s);
    uint64_t judged = 0;
    o.oracle = [&](const ExecutionResult& r) {
      ++judged;
      return CheckAllocatorHeap(s, r);
    };
    const ExploreResult r = Explore(s, o);
    EXPECT_TRUE(r.complete) << r.stop_reason;
    EXPECT_FALSE(r.failure.has_value()) << (r.failure ? r.failure->message : "");
    EXPECT_GT(judged, 0u);
  }
}

// ---------------------------------------------------------------------------
// Planted bugs

struct PlantedBug {
  std::string name;
  uint32_t events;  // injected events of the minimal counterexample
};

TEST(AllocPlantedBugs, EachFailsAsDeclaredWithAMinimalCounterexample) {
  const std::vector<PlantedBug> bugs = {
      {"buggy/alloc_aba_untagged", 1},       {"buggy/alloc_commit_before_copy", 1},
      {"buggy/alloc_flush_double_count", 0}, {"buggy/alloc_lock_released_early", 1},
      {"buggy/alloc_rfc2015_stale_cpu", 1},  {"buggy/alloc_preempt_lock_flag_cleared_early", 1},
  };
  for (const PlantedBug& bug : bugs) {
    SCOPED_TRACE(bug.name);
    const Scenario s = Builtin(bug.name);
    ExploreOptions o;
    o.strategy = StrategyKind::kDpor;
    o.bounds.max_events = 1;
    o.iterative = true;
    o.run = RunFor(s);
    o.oracle = [&s](const ExecutionResult& e) { return CheckAllocatorHeap(s, e); };
    const ExploreResult r = Explore(s, o);
    ASSERT_TRUE(r.failure.has_value());
    EXPECT_EQ(r.failure->verdict, s.expected);
    MinimizeStats stats;
    const Schedule min = MinimizeEvents(s, r.failure->schedule, r.failure->verdict, o, &stats);
    EXPECT_EQ(min.NumEvents(), bug.events);
    Simulator sim(s, o.run);
    ReplayScheduler replay(min);
    const ExecutionResult again = sim.Run(replay);
    const std::string census = again.verdict == Verdict::kPass ? CheckAllocatorHeap(s, again) : "";
    EXPECT_EQ(census.empty() ? again.verdict : Verdict::kAssertFailed, s.expected) << census;
  }
}

// The preempt-lock planted bug's minimal counterexample, exactly: one event,
// a switch-out of a thread at its pop's commit (the boundary after the early
// flag clear, so the kernel sends nothing: no SIGUSR2 frame anywhere in the
// run), failing the accounting property; its token decodes to the same
// schedule and replays to the same final memory.
TEST(AllocPlantedBugs, PreemptLockFlagClearedEarlyCounterexampleAndReplay) {
  const Scenario s = Builtin("buggy/alloc_preempt_lock_flag_cleared_early");
  ExploreOptions o;
  o.strategy = StrategyKind::kDpor;
  o.bounds.max_events = 1;
  o.iterative = true;
  o.oracle = [&s](const ExecutionResult& e) { return CheckAllocatorHeap(s, e); };
  const ExploreResult r = Explore(s, o);
  ASSERT_TRUE(r.failure.has_value());
  ASSERT_EQ(r.failure->verdict, Verdict::kPropertyFailed);
  MinimizeStats stats;
  const Schedule min = MinimizeEvents(s, r.failure->schedule, r.failure->verdict, o, &stats);
  ASSERT_EQ(min.NumEvents(), 1u);

  RunOptions traced;
  traced.record_trace = true;
  Simulator sim(s, traced);
  ReplayScheduler replay(min);
  const ExecutionResult run = sim.Run(replay);
  EXPECT_EQ(run.verdict, Verdict::kPropertyFailed) << run.message;
  const int pop = s.program.FindFunction("pl_pop");
  ASSERT_GE(pop, 0);
  uint32_t commit = 0;
  for (const Label& l : s.program.functions[static_cast<size_t>(pop)].labels) {
    if (l.name == "post") commit = l.index - 1;  // st [r2], r7
  }
  ASSERT_EQ(s.program.code[commit].op, Op::kSt);
  int switches = 0, frames = 0;
  for (const TraceEntry& e : run.trace) {
    if (e.kind == TraceKind::kPreempt || e.kind == TraceKind::kMigrate) {
      ++switches;
      EXPECT_EQ(e.pc, commit) << s.program.DescribeIndex(e.pc);
    }
    if (e.kind == TraceKind::kSignalFrame) ++frames;
  }
  EXPECT_EQ(switches, 1);
  EXPECT_EQ(frames, 0);

  const std::string token = EncodeSchedule(s, min);
  const Schedule decoded = DecodeSchedule(s, token);
  EXPECT_EQ(decoded, min);
  Simulator again_sim(s);
  ReplayScheduler again_replay(decoded);
  const ExecutionResult again = again_sim.Run(again_replay);
  EXPECT_EQ(again.verdict, run.verdict);
  EXPECT_EQ(again.memory, run.memory);
}

// The verdict of a finished run as `rseqmc check` gives it: its own, or the
// allocator oracle's (kAssertFailed) when it passed.
Verdict JudgedVerdict(const Scenario& s, const ExecutionResult& r, std::string* why) {
  if (r.verdict != Verdict::kPass) {
    *why = r.message;
    return r.verdict;
  }
  *why = CheckAllocatorHeap(s, r);
  return why->empty() ? Verdict::kPass : Verdict::kAssertFailed;
}

// Named Crosscheck* so that ctest runs it alone (tests/CMakeLists.txt).
TEST(CrosscheckAlloc, EachMinimalCounterexampleBreaksTheRealKernelRunToo) {
  int bugs = 0;
  for (const char* name : {"buggy/alloc_aba_untagged", "buggy/alloc_commit_before_copy",
                           "buggy/alloc_flush_double_count", "buggy/alloc_lock_released_early"}) {
    SCOPED_TRACE(name);
    const Scenario s = Builtin(name);
    const std::string unavailable = HarnessUnavailableReason(s.num_cpus);
    if (!unavailable.empty()) GTEST_SKIP() << "real-kernel harness: " << unavailable;
    ExploreOptions o;
    o.bounds.max_events = 1;
    o.iterative = true;
    o.oracle = [&s](const ExecutionResult& e) { return CheckAllocatorHeap(s, e); };
    const ExploreResult er = Explore(s, o);
    ASSERT_TRUE(er.failure.has_value());
    MinimizeStats stats;
    const Schedule min = MinimizeEvents(s, er.failure->schedule, er.failure->verdict, o, &stats);
    Simulator sim(s);
    ReplayScheduler replay(min);
    Plan plan;
    const ExecutionResult simulated = SimulateForPlan(sim, replay, &plan);
    std::string sim_why;
    ASSERT_EQ(JudgedVerdict(s, simulated, &sim_why), s.expected);
    JitProgram jit(s, JitOptions{});
    RealResult real = RunPlan(jit, plan);
    if (!CompareRuns(s, simulated, plan, real).empty()) real = RunPlan(jit, plan);  // a foreign preemption: once more
    EXPECT_EQ(CompareRuns(s, simulated, plan, real), "");
    std::string real_why;
    EXPECT_EQ(JudgedVerdict(s, AsExecutionResult(s, real), &real_why), s.expected) << real.message;
    EXPECT_EQ(real_why, sim_why);
    ++bugs;
  }
  EXPECT_EQ(bugs, 4);
}

// ---------------------------------------------------------------------------
// Issue 12's rfc2015 mystery: the QEMU cross-check saw alloc_percpu_rfc2015
// fail on 3 of 171 schedules, model and kernel alike. The cross-check runs
// the default schedule with one injected event; "migrate w0 to CPU 1 before
// its first instruction" then runs only CPU 0 (the default continues the CPU
// that ran last), where w1 waited for w0's region registration spinning in
// sched_yield: verdict livelock, a starvation the schedule forces, not an
// allocator bug. The waiter now sleeps in futex_wait, so the default schedule
// runs w0 on CPU 1 and every such schedule ends in pass.

// The default schedule with Migrate(0 -> 1) at boundary `at` (when valid there).
class MigrateCpu0At : public Scheduler {
 public:
  explicit MigrateCpu0At(uint64_t at) : at_(at) {}
  Decision Choose(const ChoiceView& v) override {
    const Decision m = Decision::Migrate(0, 1);
    if (v.machine().boundary() == at_ && v.IsValid(m)) {
      ++injected;
      return m;
    }
    return Decision::Step(v.DefaultCpu());
  }
  int injected = 0;

 private:
  uint64_t at_;
};

TEST(AllocRfc2015, AMigrationBeforeThreadZeroRunsEndsInPassNotLivelock) {
  const Scenario s = Builtin("alloc_percpu_rfc2015");
  Simulator sim(s, RunFor(s));
  MigrateCpu0At first(0);
  const ExecutionResult r = sim.Run(first);
  EXPECT_EQ(first.injected, 1);
  EXPECT_EQ(r.verdict, Verdict::kPass) << r.message;
  EXPECT_EQ(r.SymbolValue(s, "regions_ready"), 1);
  // w0 ran on CPU 1, w1 on CPU 0: each CPU pointer holds its thread's CPU.
  EXPECT_EQ(r.SymbolValue(s, "cpu_word", 0, 0), 1);
  EXPECT_EQ(r.SymbolValue(s, "cpu_word", 0, 1), 0);
  // Each thread's second round popped what its first round cached: one object
  // per CPU cache, two never carved (arena_fresh = 3), none in the arena stack.
  EXPECT_EQ(r.SymbolValue(s, "cache_count", 0, 0), 1);
  EXPECT_EQ(r.SymbolValue(s, "cache_count", 0, 1), 1);
  EXPECT_EQ(r.SymbolValue(s, "arena_fresh"), 3);
  EXPECT_EQ(r.SymbolValue(s, "arena_stack"), 0);
}

TEST(AllocRfc2015, EveryMigrationOfCpuZerosThreadOffTheDefaultScheduleEndsInPass) {
  const Scenario s = Builtin("alloc_percpu_rfc2015");
  Simulator sim(s, RunFor(s));
  MigrateCpu0At none(~0ull);
  const uint64_t steps = sim.Run(none).steps;
  int valid = 0;
  for (uint64_t at = 0; at <= steps; ++at) {
    MigrateCpu0At m(at);
    const ExecutionResult r = sim.Run(m);
    valid += m.injected;
    EXPECT_EQ(r.verdict, Verdict::kPass) << "migration at boundary " << at << ": " << r.message;
  }
  EXPECT_EQ(valid, 360) << "golden: boundaries of the default execution where CPU 0 runs a thread";
}

// The QEMU guest (kernel/qemu/guest/init.c) cross-checks the planted bug on
// check's minimal counterexample: the token it names must still replay to
// the bug's failure (it breaks when the scenario or its libraries change).
TEST(AllocRfc2015, TheGuestsCounterexampleTokenStillFailsThePlantedBug) {
  std::ifstream f(std::string(RSEQMC_SOURCE_DIR) + "/kernel/qemu/guest/init.c");
  const std::string text((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  const std::string key = "\"buggy/alloc_rfc2015_stale_cpu\",\n\t\t\t  \"--schedule\", \"";
  const size_t at = text.find(key);
  ASSERT_NE(at, std::string::npos) << "init.c no longer forces the counterexample";
  const std::string token = text.substr(at + key.size(), text.find('"', at + key.size()) - at - key.size());
  const Scenario s = Builtin("buggy/alloc_rfc2015_stale_cpu");
  const Schedule schedule = DecodeSchedule(s, token);
  EXPECT_EQ(schedule.NumEvents(), 1u);
  ReplayScheduler replay(schedule);
  Simulator sim(s, RunFor(s));
  EXPECT_EQ(sim.Run(replay).verdict, Verdict::kPropertyFailed) << token;
}

}  // namespace
}  // namespace rseqmc
