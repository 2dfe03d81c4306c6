// Events only where they can matter (issue 18): one test per rule of
// Machine::EventCommutesWithNextStep (sim/event_commute.cc), at chosen
// instruction boundaries of small programs, and what the exploration does
// with it (model/explorer.cc). The soundness tests over every built-in and
// generated programs are in tests/explorer_test.cc (DeferredEvents*).
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include "model/explorer.h"
#include "scenarios/parser.h"
#include "sim/machine.h"
#include "sim/scheduler.h"
#include "sim/simulator.h"
#include "tests/explore_helpers.h"
#include "tests/rule_helpers.h"

namespace rseqmc {
namespace {

// What Machine::EventCommutesWithNextStep answered for thread 0 at one
// boundary, per event.
struct Answers {
  bool preempt = false, migrate = false, ipi = false;
  std::map<int, bool> signal;  // by signo
  bool preempt_with_later = false;  // later_events = true
  // Machine::EventCommutesWithLoneMemoryStep (rule (a')): "preempt migrate ipi".
  std::string lone;
};

// The events merged here: "preempt preempt+later migrate ipi signal12"
// for all of them with SIGUSR2's only ("" for none).
std::string Merged(const Answers& a) {
  std::string out;
  auto add = [&out](bool merged, const std::string& what) {
    if (merged) out += (out.empty() ? "" : " ") + what;
  };
  add(a.preempt, "preempt");
  add(a.preempt_with_later, "preempt+later");
  add(a.migrate, "migrate");
  add(a.ipi, "ipi");
  for (const auto& [signo, merged] : a.signal) add(merged, "signal" + std::to_string(signo));
  return out;
}

// Runs thread 0 (every other thread waits: they start on CPU 1 and step only
// when thread 0 is done) and records the answers at every boundary, by pc,
// the first time thread 0 reaches it.
class Recorder : public Scheduler {
 public:
  Decision Choose(const ChoiceView& view) override {
    const Machine& m = view.machine();
    const int c0 = m.thread(0).cpu;
    if (m.cpu(c0).running == 0 && m.thread(0).depth == 0) {
      const uint32_t pc = m.thread(0).cur().pc;
      if (!at.count(pc)) {
        Answers a;
        a.preempt = m.EventCommutesWithNextStep(0, DecisionKind::kPreempt, -1, false);
        a.preempt_with_later = m.EventCommutesWithNextStep(0, DecisionKind::kPreempt, -1, true);
        a.migrate = m.EventCommutesWithNextStep(0, DecisionKind::kMigrate, -1, false);
        a.ipi = m.EventCommutesWithNextStep(0, DecisionKind::kIpi, -1, false);
        for (const SignalSpec& sg : m.scenario().signals) {
          a.signal[sg.signo] = m.EventCommutesWithNextStep(0, DecisionKind::kSignal, sg.signo, false);
        }
        for (const auto& [kind, name] : {std::pair{DecisionKind::kPreempt, "preempt"},
                                         std::pair{DecisionKind::kMigrate, "migrate"},
                                         std::pair{DecisionKind::kIpi, "ipi"}}) {
          if (m.EventCommutesWithLoneMemoryStep(0, kind, -1, false)) a.lone += a.lone.empty() ? name : std::string(" ") + name;
        }
        at[pc] = a;
      }
    }
    for (int c = 0; c < m.num_cpus(); ++c) {
      if (view.Runnable(c)) return Decision::Step(c);
    }
    return Decision::Stop();
  }
  std::map<uint32_t, Answers> at;
};

std::map<uint32_t, Answers> Record(const Scenario& s, KernelModel k = KernelModel::kMmCid) {
  RunOptions o;
  o.kernel = rules::Kernel(k);
  Simulator sim(s, o);
  Recorder rec;
  sim.Run(rec);
  return rec.at;
}

// A thread that arms a section and runs through it; register-only
// instructions before, at the edge of and after the section; a cpu_id load
// and a getcpu outside it; two signals, one whose handler reads the
// interrupted context (through a function it calls) and one whose does not.
constexpr const char* kRules = R"(
scenario event_rules
cpus 2
var x: u64 = 0
var hits: u64 = 0

func worker
  li    r1, 1
plain:
  add   r1, r1, 1
cpu_load:
  rseq_load r2, cpu_id
read_cpu:
  getcpu
  rseq_arm cs
before_start:
  li    r3, 2
start:
  la    r4, x
  st    [r4], r3
post:
  li    r5, 3
after:
  add   r5, r5, 1
  ret
  sig   0x53053053
abort:
  ret
  cs cs start=start post_commit=post abort=abort
end

func guard
start:
  st    [r9], r0
end:
  ret
restart:
  ret
  region guard_region start=start end=end restart=restart
end

func restart_guarded
  sigctx_restart guard_region
  ret
end

func on_usr1
  call  restart_guarded
  ret
end

func on_usr2
  la    r1, hits
  li    r2, 1
  xadd  r3, [r1], r2
  ret
end

func idle
  ret
end

signal SIGUSR1 handler on_usr1
signal SIGUSR2 handler on_usr2
thread w entry worker cpu 0 affinity all
thread z entry idle cpu 1
expect pass
)";

class EventCommute : public ::testing::Test {
 protected:
  void SetUp() override {
    s_ = ParseScenario(kRules, "event_rules.rsq");
    at_ = Record(s_);
  }
  const Answers& At(const std::string& label, uint32_t offset = 0) {
    const uint32_t pc = rules::Pc(s_, "worker", label, offset);
    EXPECT_TRUE(at_.count(pc)) << label;
    return at_[pc];
  }
  Scenario s_;
  std::map<uint32_t, Answers> at_;
};

// Before a register-only instruction outside every section (add r1, r1, 1
// at `plain`, going to a cpu_id load outside too): every event is merged
// with the same event one boundary later, except the signal whose handler
// reads the interrupted context.
TEST_F(EventCommute, ARegisterOnlyStepOutsideEverySectionIsMerged) {
  EXPECT_EQ(Merged(At("plain")), "preempt preempt+later migrate ipi signal12");
}

// A handler that calls a function with sigctx_restart reads the IP the
// signal interrupted: b and b+1 are different to it.
TEST_F(EventCommute, ASignalWhoseHandlerReadsSigctxIsNotMerged) {
  EXPECT_TRUE(s_.signals.size() == 2);
  for (const char* label : {"plain", "post", "after"}) {
    EXPECT_FALSE(At(label).signal.at(kSigUsr1)) << label;
    EXPECT_TRUE(At(label).signal.at(kSigUsr2)) << label;
  }
}

// rseq_load cpu_id reads the rseq area, which the kernel rewrites on return
// to user space after a migration (and on every notify-resume).
TEST_F(EventCommute, AnEventBeforeACpuIdLoadIsNotMerged) { EXPECT_EQ(Merged(At("cpu_load")), ""); }

// getcpu reads the CPU: merged for a preemption or an IPI only when no
// later event (a migration) can come before it; never for a migration, nor
// for a signal (its handler may call sched_setaffinity).
TEST_F(EventCommute, GetcpuIsMergedOnlyWhereNothingCanMoveTheThread) {
  EXPECT_EQ(Merged(At("read_cpu")), "preempt ipi");
}

// li r3, 2 right before start_ip, with rseq_cs armed: the event there finds
// the thread outside, the same event after the li finds it at start_ip,
// inside: it aborts. Inside the section, nothing is merged either.
TEST_F(EventCommute, AnEventJustBeforeStartIpIsNotMerged) {
  EXPECT_EQ(Merged(At("before_start")), "");
  EXPECT_EQ(Merged(At("start")), "");
}

// At post_commit (start_ip + post_commit_offset, outside) the li that
// follows is merged although rseq_cs still points to the descriptor.
TEST_F(EventCommute, AnEventAtPostCommitIsMerged) {
  EXPECT_TRUE(At("post").preempt);
  EXPECT_TRUE(At("after").preempt);
}

// A descriptor's range counts as inside even before anything arms it (a
// handler could arm it while the thread waits there), and so does a region
// of the 2015 RFC or the preempt-lock scheme.
TEST(EventCommuteRanges, EveryDescriptorRangeCountsAsInsideArmedOrNot) {
  const Scenario s = ParseScenario(R"(
scenario unarmed
cpus 1
var x: u64 = 0
func worker
  la    r9, x
start:
  st    [r9], r1
post:
  li    r3, 3
  ret
  sig   0x53053053
abort:
  li    r0, -1
  ret
  cs never_armed start=start post_commit=post abort=abort
end
thread w entry worker cpu 0
expect pass
)", "unarmed.rsq");
  const std::map<uint32_t, Answers> at = Record(s);
  EXPECT_FALSE(at.at(rules::Pc(s, "worker", "start") - 1).preempt);  // la r9, x: goes to start
  EXPECT_TRUE(at.at(rules::Pc(s, "worker", "post")).preempt);        // outside, goes outside
}

// Under the 2015 RFC ABI the kernel restarts inside a registered region
// (KernelAbi::InRseqCs of sim/kernel/rfc2015.cc): the same edges hold.
TEST(EventCommuteRanges, Rfc2015RegionsAreSectionsToo) {
  const Scenario s = ParseScenario(R"(
scenario rfc_edges
cpus 2
var cpu: u32 = 0
var n: u64 = 0
func worker
  rfc_region r
  la    r9, cpu
  rfc_cpu_ptr r9
outside:
  li    r1, 1
before:
  la    r2, n
start:
  li    r3, 3
  st    [r2], r3
post:
  li    r5, 5
  ret
restart:
  ret
  region r start=start end=post restart=restart
end
thread w entry worker cpu 0 affinity all
expect pass
)", "rfc_edges.rsq");
  const std::map<uint32_t, Answers> at = Record(s, KernelModel::kRfc2015);
  EXPECT_TRUE(at.at(rules::Pc(s, "worker", "outside")).preempt);
  EXPECT_TRUE(at.at(rules::Pc(s, "worker", "outside")).migrate);
  EXPECT_FALSE(at.at(rules::Pc(s, "worker", "before")).preempt);
  EXPECT_FALSE(at.at(rules::Pc(s, "worker", "start")).preempt);
  EXPECT_FALSE(at.at(rules::Pc(s, "worker", "start")).migrate);
  EXPECT_TRUE(at.at(rules::Pc(s, "worker", "post")).preempt);
}

// At most k events, every outcome (tests/explore_helpers.h).
ExploreResult ExploreEvents(const Scenario& s, StrategyKind st, uint32_t k, bool defer) {
  return testing::ExploreDeferring(s, st, k, defer, 0);
}

// Rule (a'): a thread alone in the process (`idle` absent) may take a
// preemption, migration or IPI before a load or store of data memory as
// well as after it; not before an access to its rseq area (the kernel
// rewrites it), not where the event could restart it (b), and not at all
// while another thread lives, which could read or write between the two.
constexpr const char* kLone = R"(
scenario lone
cpus 2
var x: u64 = 0
func worker
  la    r9, x
store:
  st    [r9], r1
load:
  ld    r2, [r9]
  rseq_addr r8
area:
  ld    r3, [r8]
  rseq_arm cs
before_start:
  st    [r9], r2
start:
  st    [r9], r3
post:
  ld    r4, [r9]
  ret
  sig   0x53053053
abort:
  li    r0, -1
  ret
  cs cs start=start post_commit=post abort=abort
end
func idle
  ret
end
thread w entry worker cpu 0 affinity all
%s
expect pass
)";

std::string LoneProgram(bool with_idle) {
  std::string text = kLone;
  text.replace(text.find("%s"), 2, with_idle ? "thread z entry idle cpu 1" : "");
  return text;
}

TEST(EventCommuteLone, ALoneThreadsMemoryStepsCommuteWithItsEvents) {
  const Scenario s = ParseScenario(LoneProgram(false), "lone.rsq");
  const std::map<uint32_t, Answers> at = Record(s);
  auto lone = [&](const char* label) { return at.at(rules::Pc(s, "worker", label)).lone; };
  EXPECT_EQ(lone("store"), "preempt migrate ipi");
  EXPECT_EQ(lone("load"), "preempt migrate ipi");
  EXPECT_EQ(lone("post"), "preempt migrate ipi");
  EXPECT_EQ(lone("area"), "");          // the rseq area: the kernel rewrites cpu_id there
  EXPECT_EQ(lone("before_start"), "");  // goes to start_ip: an event there aborts
  EXPECT_EQ(lone("start"), "");         // inside the section
  // The thread-local rule itself is unchanged: a store is not register-only.
  EXPECT_FALSE(at.at(rules::Pc(s, "worker", "store")).preempt);
}

TEST(EventCommuteLone, NotWhileAnotherThreadLives) {
  const Scenario s = ParseScenario(LoneProgram(true), "lone2.rsq");
  const std::map<uint32_t, Answers> at = Record(s);
  for (const char* label : {"store", "load", "post"}) EXPECT_EQ(at.at(rules::Pc(s, "worker", label)).lone, "") << label;
}

// ... but not for a store into the struct rseq_cs that rseq_cs points to,
// built in data memory: the kernel reads it at the event (the legacy ABIs
// validate it even outside the section), so the version word a store makes
// invalid for two instructions turns the lazy clear into SIGSEGV there and
// only there. Found by an attack on the rule: DFS, stateful search and DPOR
// at K=2 reported pass where every position gives sigsegv.
constexpr const char* kLoneDescriptor = R"(
scenario lone_descriptor
cpus 2
var x: u64[4] = {0, 0x400004, 4, 0x400014}   # a valid struct rseq_cs for cs_fn, ip outside it
func cs_fn
  rseq_arm c1
start:
  st    [r1], r2
post:
  li    r0, 0
  ret
  sig   0x53053053
abort:
  li    r0, 1
  ret
  cs c1 start=start post_commit=post abort=abort
end
func body
  la    r4, x
  rseq_addr r6
  st    [r6 + 8], r4   # rseq->rseq_cs = &x
  li    r5, 1
poison:
  st32  [r4], r5       # x.version = 1: invalid
  li    r5, 0
heal:
  st32  [r4], r5       # valid again
  li    r0, 7
  ret
end
thread a entry body
expect pass
)";

TEST(EventCommuteLone, NotForAStoreIntoTheDescriptorRseqCsPointsTo) {
  const Scenario s = ParseScenario(kLoneDescriptor, "lone_descriptor.rsq");
  const std::map<uint32_t, Answers> at = Record(s, KernelModel::kMmCid);
  EXPECT_EQ(at.at(rules::Pc(s, "body", "poison")).lone, "");
  EXPECT_EQ(at.at(rules::Pc(s, "body", "heal")).lone, "");
  for (uint32_t k : {1u, 2u}) {
    const ExploreResult plain = ExploreEvents(s, StrategyKind::kDfs, k, false);
    for (StrategyKind st : {StrategyKind::kDfs, StrategyKind::kStateful, StrategyKind::kDpor}) {
      EXPECT_EQ(ExploreEvents(s, st, k, true).outcomes, plain.outcomes) << StrategyName(st) << " K=" << k;
    }
    EXPECT_TRUE(std::any_of(plain.outcomes.begin(), plain.outcomes.end(),
                            [](const Outcome& x) { return x.verdict == Verdict::kSigsegv; }));
  }
}

// The exploration: DFS with events at every boundary and DFS, stateful
// search and DPOR with one position per class reach the same outcomes; the
// lone rule leaves out the events before the store, the load and at post.
TEST(EventCommuteLone, OneRepresentativePerClassKeepsTheOutcomes) {
  const Scenario s = ParseScenario(LoneProgram(false), "lone.rsq");
  const ExploreResult plain = ExploreEvents(s, StrategyKind::kDfs, 1, false);
  ASSERT_TRUE(plain.complete);
  for (StrategyKind k : {StrategyKind::kDfs, StrategyKind::kStateful, StrategyKind::kDpor}) {
    const ExploreResult merged = ExploreEvents(s, k, 1, true);
    ASSERT_TRUE(merged.complete) << StrategyName(k);
    EXPECT_EQ(merged.outcomes, plain.outcomes) << StrategyName(k);
    EXPECT_LT(merged.executions, plain.executions) << StrategyName(k);
  }
}

// What the exploration does with it: on the rules program, plain DFS with
// events at every boundary and DFS with one position per class reach the
// same outcomes, with fewer executions.
TEST(EventCommuteExplore, OneRepresentativePerClassKeepsTheOutcomes) {
  const Scenario s = ParseScenario(kRules, "event_rules.rsq");
  for (uint32_t k : {1u, 2u}) {
    const ExploreResult plain = ExploreEvents(s, StrategyKind::kDfs, k, false);
    const ExploreResult merged = ExploreEvents(s, StrategyKind::kDfs, k, true);
    ASSERT_TRUE(plain.complete);
    ASSERT_TRUE(merged.complete);
    EXPECT_EQ(merged.outcomes, plain.outcomes) << "K=" << k;
    EXPECT_LT(merged.executions, plain.executions) << "K=" << k;
    RecordProperty("executions_K" + std::to_string(k), std::to_string(plain.executions) + "->" +
                                                          std::to_string(merged.executions));
  }
}

}  // namespace
}  // namespace rseqmc
