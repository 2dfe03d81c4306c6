// Threads that block (sim/blocking.cc): FUTEX_WAIT / FUTEX_WAKE results and
// order, nanosleep on the simulated clock, -EINTR by a signal, the deadlock
// and livelock verdicts (with the step budget's definition of progress), the
// planted bugs under scenarios/buggy/, and hundreds of threads.
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "model/explorer.h"
#include "scenarios/parser.h"
#include "sim/builder.h"
#include "sim/machine.h"
#include "sim/schedule.h"
#include "sim/simulator.h"
#include "sim/trace.h"

namespace rseqmc {
namespace {

ExecutionResult RunSeed(const Scenario& s, uint64_t seed, uint64_t max_steps = 100000, bool trace = false) {
  RunOptions o;
  o.max_steps = max_steps;
  o.record_trace = trace;
  Simulator sim(s, o);
  RandomScheduler sched(seed);
  return sim.Run(sched);
}

ExecutionResult RunSchedule(const Scenario& s, const Schedule& schedule, bool trace = false) {
  RunOptions o;
  o.record_trace = trace;
  Simulator sim(s, o);
  ReplayScheduler sched(schedule);
  return sim.Run(sched);
}

// One thread per call under test, alone on CPU 0 (no other thread can run
// while it waits, so the results are those of the call itself).
TEST(BlockingTest, FutexWaitErrors) {
  const Scenario s = ParseScenario(R"(scenario futex_errors
var word: u64 = 7
func main
  la    r1, word
  futex_wait r1, 8          # value differs: -EAGAIN
  observe eagain, r0
  add   r2, r1, 2
  futex_wait r2, 0          # not 4-aligned: -EINVAL
  observe einval, r0
  li    r3, 16
  futex_wait r3, 0          # unmapped: -EFAULT
  observe efault, r0
  futex_wake r1, 5          # nobody waits: 0
  observe woken, r0
  ret
end
thread t entry main
)",
                                   "futex_errors.rsq");
  const ExecutionResult r = RunSeed(s, 1);
  ASSERT_EQ(r.verdict, Verdict::kPass) << r.message;
  ASSERT_EQ(r.threads[0].observed.size(), 4u);
  EXPECT_EQ(r.threads[0].observed[0].second, -11);
  EXPECT_EQ(r.threads[0].observed[1].second, -22);
  EXPECT_EQ(r.threads[0].observed[2].second, -14);
  EXPECT_EQ(r.threads[0].observed[3].second, 0);
}

// Three waiters block on one word in a known order (one CPU, FIFO run
// queue); the waker wakes with n = 0 (futex_wake wakes one anyway), then 5
// (the two left). The waiters record in which order they were woken.
constexpr const char* kWakeOrder = R"(scenario wake_order
var word: u64 = 0
var order: u64 = 0
var seq: u64[3] = 0
func waiter
  la    r1, word
  futex_wait r1, 0
  mov   r9, r0
  la    r2, order
  li    r3, 1
  xadd  r4, [r2], r3
  la    r5, seq
  shl   r6, r10, 3
  add   r5, r5, r6
  st    [r5], r4
  mov   r0, r9
  ret
end
func waker
  la    r1, word
  futex_wake r1, 0
  observe first, r0
  futex_wake r1, 5
  observe rest, r0
  ret
end
thread w * 3 entry waiter cpu 0 args r10 = i
thread k entry waker cpu 0
)";

TEST(BlockingTest, FutexWakeIsFifoAndWakesOneForZero) {
  const Scenario s = ParseScenario(kWakeOrder, "wake_order.rsq");
  // No event: w0, w1, w2 block in turn, then k runs and wakes them.
  const ExecutionResult r = RunSchedule(s, Schedule{}, /*trace=*/true);
  ASSERT_EQ(r.verdict, Verdict::kPass) << r.message;
  const ThreadOutcome& k = r.threads[3];
  ASSERT_EQ(k.observed.size(), 2u);
  EXPECT_EQ(k.observed[0].second, 1);  // nr_wake 0 wakes one
  EXPECT_EQ(k.observed[1].second, 2);
  const Symbol& seq = s.program.symbols[static_cast<size_t>(s.program.FindSymbol("seq"))];
  for (uint64_t i = 0; i < 3; ++i) {
    uint64_t v = 0;
    std::memcpy(&v, r.memory.data() + (seq.address + 8 * i - kDataBase), 8);
    EXPECT_EQ(v, i) << "waiter w" << i << " was not woken in FIFO order";
    EXPECT_EQ(r.threads[i].ret, 0);
  }
  int blocks = 0, wakes = 0;
  for (const TraceEntry& e : r.trace) {
    blocks += e.kind == TraceKind::kBlock;
    wakes += e.kind == TraceKind::kWake;
  }
  EXPECT_EQ(blocks, 3);
  EXPECT_EQ(wakes, 3);
}

// FUTEX_WAKE's count is futex_wake()'s `int nr_wake` (sys_futex's u32 val):
// only the low 32 bits, read as signed. The simulator used the full 64 bits,
// so 0x100000002 woke all three waiters (the kernel wakes 2).
TEST(BlockingTest, FutexWakeCountIsTheKernelsInt) {
  const Scenario s =
      ParseScenarioFile(std::string(RSEQMC_SOURCE_DIR) + "/tests/data/futex_wake_count.rsq");
  for (uint64_t seed = 1; seed <= 10; ++seed) {
    const ExecutionResult r = RunSeed(s, seed);
    ASSERT_EQ(r.verdict, Verdict::kPass) << r.message;
    const ThreadOutcome& k = r.threads[3];
    ASSERT_EQ(k.observed.size(), 3u);
    EXPECT_EQ(k.observed[0].second, 2) << "seed " << seed;  // 0x100000002 -> 2
    EXPECT_EQ(k.observed[1].second, 1) << "seed " << seed;  // 0x80000000 -> INT_MIN -> 1
    EXPECT_EQ(k.observed[2].second, 0) << "seed " << seed;  // none left
  }
  // More counts, one waker and five waiters on one CPU (FIFO, no event).
  const Scenario t = ParseScenario(R"(scenario wake_counts
var w: u64 = 0
func waiter
  la r1, w
  futex_wait r1, 0
  ret
end
func waker
  la r1, w
  li r2, 0x7fffffffffffffff
  futex_wake r1, r2
  observe m1, r0
  li r2, 0x100000000
  futex_wake r1, r2
  observe zero, r0
  li r2, 0xffffffff00000002
  futex_wake r1, r2
  observe two, r0
  li r2, 0x180000000
  futex_wake r1, r2
  observe min, r0
  ret
end
thread t * 5 entry waiter cpu 0
thread k entry waker cpu 0
)",
                                   "wake_counts.rsq");
  const ExecutionResult r = RunSchedule(t, Schedule{});
  ASSERT_EQ(r.verdict, Verdict::kPass) << r.message;
  const ThreadOutcome& k = r.threads[5];
  ASSERT_EQ(k.observed.size(), 4u);
  EXPECT_EQ(k.observed[0].second, 1);  // low 32 bits 0xffffffff = -1
  EXPECT_EQ(k.observed[1].second, 1);  // low 32 bits 0
  EXPECT_EQ(k.observed[2].second, 2);
  EXPECT_EQ(k.observed[3].second, 1);  // 0x80000000
}

// FUTEX_WAKE of a private futex checks only access_ok(): an unmapped address
// below TASK_SIZE_MAX wakes 0 (the simulator said -EFAULT), above it -EFAULT.
// FUTEX_WAIT reads the word: -EFAULT.
TEST(BlockingTest, FutexWakeOfAnUnmappedAddressWakesNone) {
  const Scenario s =
      ParseScenarioFile(std::string(RSEQMC_SOURCE_DIR) + "/tests/data/futex_wake_unmapped.rsq");
  const ExecutionResult r = RunSeed(s, 1);
  ASSERT_EQ(r.verdict, Verdict::kPass) << r.message;
  const auto& o = r.threads[0].observed;
  ASSERT_EQ(o.size(), 6u);
  EXPECT_EQ(o[0].second, 0);    // 0x20000000
  EXPECT_EQ(o[1].second, 0);    // 0
  EXPECT_EQ(o[2].second, 0);    // 0x7ffffffff000 == TASK_SIZE_MAX
  EXPECT_EQ(o[3].second, -14);  // 0x7ffffffff004
  EXPECT_EQ(o[4].second, -14);  // 0xfffffffffffffffc
  EXPECT_EQ(o[5].second, -14);  // futex_wait 0x20000000
}

// A sleep's deadline saturates at KTIME_MAX (ktime_add_safe()); it used to
// wrap on uint64 and the timeline printed negative deadlines.
TEST(BlockingTest, HugeSleepsSaturateAtKtimeMax) {
  const Scenario s = ParseScenario(R"(scenario s1
cpus 2
var x: u64 = 0
func f
  li r1, 0x7fffffffffffffff
  sleep r1
  observe a1, r0
  sleep r1
  observe a2, r0
  sleep r1
  observe a3, r0
  ret
end
func g
  li r1, 0x7ffffffffffffff0
  sleep r1
  observe b1, r0
  li r1, 100
  sleep r1
  observe b2, r0
  ret
end
thread a entry f cpu 0
thread b entry g cpu 1
)",
                                   "s1.rsq");
  const ExecutionResult r = RunSchedule(s, Schedule{}, /*trace=*/true);
  ASSERT_EQ(r.verdict, Verdict::kPass) << r.message;
  ASSERT_EQ(r.threads[0].observed.size(), 3u);
  ASSERT_EQ(r.threads[1].observed.size(), 2u);
  for (const auto& o : r.threads[0].observed) EXPECT_EQ(o.second, 0);
  for (const auto& o : r.threads[1].observed) EXPECT_EQ(o.second, 0);
  std::vector<int64_t> deadlines;
  for (const TraceEntry& e : r.trace) {
    if (e.kind == TraceKind::kBlock && e.a == 0) deadlines.push_back(e.b);
  }
  const std::vector<int64_t> want = {INT64_MAX, INT64_MAX - 15, INT64_MAX, INT64_MAX, INT64_MAX};
  std::vector<int64_t> sorted = deadlines;
  std::sort(sorted.begin(), sorted.end());
  std::vector<int64_t> want_sorted = want;
  std::sort(want_sorted.begin(), want_sorted.end());
  EXPECT_EQ(sorted, want_sorted);
  const std::string timeline = FormatTimeline(s, r);
  EXPECT_EQ(timeline.find("t=-"), std::string::npos) << timeline;
  EXPECT_NE(timeline.find("sleeps until t=9223372036854775807ns"), std::string::npos) << timeline;
  EXPECT_NE(timeline.find("sleeps until t=9223372036854775792ns"), std::string::npos) << timeline;
}

// Sleeps end in deadline order, whatever the instruction counts: the clock
// moves only when every CPU is idle.
TEST(BlockingTest, SleepWakesInDeadlineOrder) {
  const Scenario s = ParseScenario(R"(scenario sleepers
var order: u64 = 0
var at: u64[3] = 0
func sleeper
  sleep r10
  observe r, r0
  la    r2, order
  li    r3, 1
  xadd  r4, [r2], r3
  la    r5, at
  shl   r6, r11, 3
  add   r5, r5, r6
  st    [r5], r4
  ret
end
thread s * 3 entry sleeper cpu i args r10 = ((3 - i) * 1000), r11 = i
cpus 3
)",
                                   "sleepers.rsq");
  for (uint64_t seed = 1; seed <= 20; ++seed) {
    const ExecutionResult r = RunSeed(s, seed);
    ASSERT_EQ(r.verdict, Verdict::kPass) << r.message;
    const Symbol& at = s.program.symbols[static_cast<size_t>(s.program.FindSymbol("at"))];
    for (uint64_t i = 0; i < 3; ++i) {
      uint64_t v = 0;
      std::memcpy(&v, r.memory.data() + (at.address + 8 * i - kDataBase), 8);
      EXPECT_EQ(v, 2 - i) << "seed " << seed;  // s2 sleeps 1000 ns, s1 2000, s0 3000
    }
  }
}

// A signal with a handler wakes a futex waiter with -EINTR.
TEST(BlockingTest, SignalInterruptsFutexWait) {
  const Scenario s = ParseScenario(R"(scenario eintr
var word: u64 = 0
var hits: u64 = 0
func waiter
  la    r1, word
  futex_wait r1, 0
  ret
end
func kicker
  tgkill w, SIGUSR1
  ret
end
func on_usr1
  la    r1, hits
  li    r2, 1
  xadd  r3, [r1], r2
  ret
end
signal SIGUSR1 handler on_usr1
thread w entry waiter cpu 0
thread k entry kicker cpu 0
)",
                                   "eintr.rsq");
  const ExecutionResult r = RunSchedule(s, Schedule{});
  ASSERT_EQ(r.verdict, Verdict::kPass) << r.message;
  EXPECT_EQ(r.threads[0].ret, -4);
  const Symbol& hits = s.program.symbols[static_cast<size_t>(s.program.FindSymbol("hits"))];
  uint64_t v = 0;
  std::memcpy(&v, r.memory.data() + (hits.address - kDataBase), 8);
  EXPECT_EQ(v, 1u);
}

// The planted ABBA deadlock is found by DPOR with no injected event, and its
// counterexample replays to the same verdict, naming both waiters.
TEST(BlockingTest, AbbaDeadlockIsFound) {
  const Scenario s = ParseScenarioFile(std::string(RSEQMC_SOURCE_DIR) + "/scenarios/buggy/abba_deadlock.rsq");
  ExploreOptions o;
  o.bounds.max_events = 0;
  const ExploreResult res = Explore(s, o);
  ASSERT_TRUE(res.failure.has_value());
  EXPECT_EQ(res.failure->verdict, Verdict::kDeadlock);
  const ExecutionResult r = RunSchedule(s, res.failure->schedule, /*trace=*/true);
  EXPECT_EQ(r.verdict, Verdict::kDeadlock);
  EXPECT_NE(r.message.find("t0 on "), std::string::npos) << r.message;
  EXPECT_NE(r.message.find("t1 on "), std::string::npos) << r.message;
  ASSERT_FALSE(r.trace.empty());
  EXPECT_EQ(r.trace.back().kind, TraceKind::kDeadlock);
  // Without the interleaving (t0 runs through, then t1) there is no deadlock.
  const Scenario serial = ParseScenarioFile(std::string(RSEQMC_SOURCE_DIR) + "/scenarios/buggy/abba_deadlock.rsq");
  EXPECT_EQ(RunSchedule(serial, Schedule{}).verdict, Verdict::kPass);
}

// The planted retry loop that never commits: one migration inside the
// section, then livelock (not steplimit) at the step budget.
TEST(BlockingTest, AbortRetryLivelockIsFound) {
  const Scenario s =
      ParseScenarioFile(std::string(RSEQMC_SOURCE_DIR) + "/scenarios/buggy/abort_retry_livelock.rsq");
  ExploreOptions o;
  o.bounds.max_events = 1;
  o.run.max_steps = 2000;
  const ExploreResult res = Explore(s, o);
  ASSERT_TRUE(res.failure.has_value());
  EXPECT_EQ(res.failure->verdict, Verdict::kLivelock) << res.failure->message;
  RunOptions ro;
  ro.max_steps = 2000;
  Simulator sim(s, ro);
  ReplayScheduler replay(res.failure->schedule);
  const ExecutionResult r = sim.Run(replay);
  EXPECT_EQ(r.verdict, Verdict::kLivelock);
  EXPECT_EQ(r.steps, 2000u);
  EXPECT_EQ(r.message.rfind("no progress in steps 1000..2000", 0), 0u) << r.message;
}

// Progress at the step budget: a thread that keeps changing data memory ends
// in steplimit; one that changes only registers or rewrites the same value
// ends in livelock.
TEST(BlockingTest, StepBudgetSeparatesProgressFromSpinning) {
  const Scenario counting = ParseScenario(R"(scenario counting
var n: u64 = 0
func main
  la    r1, n
loop:
  ld    r2, [r1]
  add   r2, r2, 1
  st    [r1], r2
  jmp   loop
end
thread t entry main
)",
                                          "counting.rsq");
  EXPECT_EQ(RunSeed(counting, 1, 1000).verdict, Verdict::kStepLimit);
  const Scenario same = ParseScenario(R"(scenario same_value
var n: u64 = 0
func main
  la    r1, n
  li    r2, 5
loop:
  st    [r1], r2
  add   r3, r3, 1
  jmp   loop
end
thread t entry main
)",
                                      "same.rsq");
  const ExecutionResult r = RunSeed(same, 1, 1000);
  EXPECT_EQ(r.verdict, Verdict::kLivelock);
  EXPECT_EQ(r.steps, 1000u);
}

// 400 threads on 32 CPUs take a futex mutex OPS times each (blocking when it
// is held): exact count, every thread returns, and the schedule token of the
// execution round-trips and replays to the same trace.
TEST(BlockingTest, FourHundredThreadsOnThirtyTwoCpus) {
  const Scenario s = ParseScenarioFile(std::string(RSEQMC_SOURCE_DIR) + "/scenarios/futex_mutex.rsq",
                                       {{"THREADS", 400}, {"CPUS", 32}, {"OPS", 3}});
  ASSERT_EQ(s.threads.size(), 400u);
  RunOptions o;
  o.max_steps = 10'000'000;
  Simulator sim(s, o);
  RandomOptions ro;
  ro.p_preempt = 0.01;
  RandomScheduler sched(7, ro);
  const ExecutionResult r = sim.Run(sched);
  ASSERT_EQ(r.verdict, Verdict::kPass) << r.message;
  const Symbol& count = s.program.symbols[static_cast<size_t>(s.program.FindSymbol("count"))];
  uint64_t v = 0;
  std::memcpy(&v, r.memory.data() + (count.address - kDataBase), 8);
  EXPECT_EQ(v, 1200u);
  for (const ThreadOutcome& t : r.threads) {
    EXPECT_TRUE(t.exited);
    EXPECT_EQ(t.ret, 3);
  }
  // Preemptions naming threads above 255 and CPUs up to 31 are in it.
  bool high = false;
  for (const ScheduleEntry& e : r.schedule.entries) high |= e.decision.kind == DecisionKind::kPreempt && e.decision.arg > 255;
  const std::string token = EncodeSchedule(s, r.schedule);
  const Schedule back = DecodeSchedule(s, token);
  ASSERT_EQ(back.entries.size(), r.schedule.entries.size());
  for (size_t i = 0; i < back.entries.size(); ++i) {
    ASSERT_EQ(back.entries[i].boundary, r.schedule.entries[i].boundary);
    ASSERT_EQ(back.entries[i].decision, r.schedule.entries[i].decision);
  }
  Simulator again(s, o);
  ReplayScheduler replay(back);
  const ExecutionResult r2 = again.Run(replay);
  EXPECT_EQ(r2.verdict, Verdict::kPass);
  EXPECT_EQ(r2.TraceHash(), r.TraceHash());
  (void)high;
}

// ---- Fairness of the default continuation (Machine::RotateToStarvedCpu) ----

Scenario YieldWait(int64_t release) {
  return ParseScenarioFile(std::string(RSEQMC_SOURCE_DIR) + "/tests/data/yield_wait_remote_holder.rsq",
                           {{"RELEASE", release}});
}

// Chooses every boundary itself (no promised defaults): the default CPU, or
// CPU 0 whenever it has a thread (`starve`: a schedule unfair to CPU 1).
class EveryBoundary : public Scheduler {
 public:
  explicit EveryBoundary(bool starve) : starve_(starve) {}
  Decision Choose(const ChoiceView& v) override {
    return starve_ && v.Runnable(0) ? Decision::Step(0) : Decision::Step(v.DefaultCpu());
  }

 private:
  bool starve_;
};

// Two sched_yield() waiters on CPU 0, the lock holder on CPU 1: the default
// continuation used to run CPU 0 alone for 100,000 steps and call it a
// livelock. Now CPU 1 becomes the default after kFairWaitSteps: the empty
// schedule passes, and the same execution results whether the machine asks
// at every boundary or takes promised defaults (the replay's fast path).
TEST(BlockingTest, DefaultContinuationRotatesToAStarvedCpu) {
  const Scenario s = YieldWait(1);
  const ExecutionResult fast = RunSchedule(s, Schedule{}, /*trace=*/true);
  EXPECT_EQ(fast.verdict, Verdict::kPass) << fast.message;
  EXPECT_EQ(fast.steps, 1018u);
  EXPECT_TRUE(fast.schedule.entries.empty());
  RunOptions o;
  o.record_trace = true;
  Simulator sim(s, o);
  EveryBoundary every(/*starve=*/false);
  const ExecutionResult slow = sim.Run(every);
  EXPECT_EQ(slow.verdict, Verdict::kPass);
  EXPECT_EQ(slow.TraceHash(), fast.TraceHash());
  // The holder's first instruction is the one after kFairWaitSteps of CPU 0
  // (trace steps count from 1).
  uint64_t first_cpu1 = ~0ull;
  for (const TraceEntry& e : fast.trace) {
    if (e.cpu == 1 && e.kind == TraceKind::kStep) first_cpu1 = std::min(first_cpu1, e.step);
  }
  EXPECT_EQ(first_cpu1, kFairWaitSteps + 1);
}

// A scheduler that keeps CPU 1's runnable thread from running gets no
// livelock verdict: the machine abandons the unfair window (stopped, with a
// message saying so), for the holder that would release and for the one that
// would not.
TEST(BlockingTest, UnfairWindowIsNoLivelock) {
  for (const int64_t release : {1, 0}) {
    SCOPED_TRACE(release);
    const Scenario s = YieldWait(release);
    RunOptions o;
    o.max_steps = 4000;
    Simulator sim(s, o);
    EveryBoundary starve(/*starve=*/true);
    const ExecutionResult r = sim.Run(starve);
    EXPECT_TRUE(r.stopped);
    EXPECT_EQ(r.steps, 4000u);
    EXPECT_NE(r.message.find("an unfair schedule, not a livelock"), std::string::npos) << r.message;
  }
}

// The reproducer under every exhaustive strategy at 0 and 1 events. Its first
// execution (the default continuation) used to be the false livelock. Stateful
// search completes and passes. DFS completes too with cycle pruning
// (ExploreOptions::prune_cycles): a state before a waiter's sched_yield that
// repeats on the path while the holder, runnable on CPU 1, did not run ends
// the branch (an unfair cycle), where it used to try every position of the
// holder's store among ~1,000 steps of the waiters' loads. DPOR has no cycle
// pruning (its backtrack points come from whole executions), so it is bounded
// here to its first 100 executions, which must all pass. The twin whose
// holder never releases is a livelock under all three (stateful and DFS: a
// fair cycle of the two waiters), and the counterexample's token replays to
// the same trace.
TEST(BlockingTest, YieldWaitForARemoteHolderIsNoLivelock) {
  struct Case {
    StrategyKind k;
    uint32_t events;
    uint64_t executions;  // of the passing scenario
    uint64_t cycles_pruned;
    uint64_t twin_executions;  // of the livelocking twin, to its failure
  };
  for (const Case& c : {Case{StrategyKind::kDfs, 0, 80, 1, 1}, Case{StrategyKind::kDfs, 1, 10730, 41, 1},
                        Case{StrategyKind::kDpor, 0, 100, 0, 1}, Case{StrategyKind::kDpor, 1, 100, 0, 1},
                        Case{StrategyKind::kStateful, 0, 34, 0, 1}, Case{StrategyKind::kStateful, 1, 708, 0, 1}}) {
    SCOPED_TRACE(std::string(StrategyName(c.k)) + " K=" + std::to_string(c.events));
    ExploreOptions o;
    o.strategy = c.k;
    o.bounds.max_events = c.events;
    o.run.max_steps = 20000;
    if (c.k == StrategyKind::kDpor) o.max_executions = 100;
    const ExploreResult pass = Explore(YieldWait(1), o);
    EXPECT_FALSE(pass.failure.has_value()) << pass.failure->message;
    EXPECT_EQ(pass.executions, c.executions);
    EXPECT_EQ(pass.cycles_pruned, c.cycles_pruned);
    EXPECT_EQ(pass.complete, c.k != StrategyKind::kDpor);
    const Scenario twin = YieldWait(0);
    o.max_executions = 0;
    const ExploreResult live = Explore(twin, o);
    ASSERT_TRUE(live.failure.has_value());
    EXPECT_EQ(live.failure->verdict, Verdict::kLivelock) << live.failure->message;
    EXPECT_EQ(live.executions, c.twin_executions);
    if (c.k == StrategyKind::kDfs) {
      EXPECT_NE(live.failure->message.find("a fair cycle without progress"), std::string::npos) << live.failure->message;
    }
    const Schedule decoded = DecodeSchedule(twin, EncodeSchedule(twin, live.failure->schedule));
    RunOptions ro;
    ro.max_steps = 20000;
    Simulator sim(twin, ro);
    ReplayScheduler a(decoded), b(live.failure->schedule);
    const ExecutionResult ra = sim.Run(a);
    const ExecutionResult rb = sim.Run(b);
    EXPECT_EQ(ra.verdict, Verdict::kLivelock) << ra.message;
    EXPECT_EQ(ra.TraceHash(), rb.TraceHash());
  }
}

// Cycle pruning loses nothing: with a fair wait short enough for DFS without
// it to complete (kFairWaitSteps becomes max_steps / 4), DFS with and without
// it reach the same outcomes, apart from the livelock and step-limit verdicts
// of executions that only the short step budget ends: the waiters spin while
// the holder, runnable on CPU 1, takes one of its 4 steps before the store
// often enough that no window is unfair, and the last max_steps / 2 steps
// change nothing. Pruning ends those branches at their first unfair cycle.
TEST(BlockingTest, DfsCyclePruningKeepsEveryOutcome) {
  struct Case {
    uint32_t events;
    uint64_t max_steps;
    uint64_t pruned, whole;  // executions
  };
  for (const Case& c : {Case{0, 200, 80, 957}, Case{1, 60, 10730, 40009}}) {
    SCOPED_TRACE(c.events);
    ExploreOptions o;
    o.strategy = StrategyKind::kDfs;
    o.bounds.max_events = c.events;
    o.run.max_steps = c.max_steps;
    o.stop_at_first_failure = false;
    const ExploreResult pruned = Explore(YieldWait(1), o);
    o.prune_cycles = false;
    const ExploreResult whole = Explore(YieldWait(1), o);
    EXPECT_TRUE(pruned.complete);
    EXPECT_TRUE(whole.complete);
    auto ended = [](const std::set<Outcome>& all) {
      std::set<Outcome> out;
      for (const Outcome& x : all) {
        if (x.verdict != Verdict::kLivelock && x.verdict != Verdict::kStepLimit) out.insert(x);
      }
      return out;
    };
    EXPECT_EQ(ended(pruned.outcomes), ended(whole.outcomes));
    EXPECT_EQ(ended(pruned.outcomes).size(), 1u);  // pass, done == 2
    EXPECT_EQ(pruned.outcomes.size(), 1u);
    EXPECT_EQ(pruned.executions, c.pruned);
    EXPECT_EQ(whole.executions, c.whole);
    EXPECT_GT(pruned.cycles_pruned, 0u);
    EXPECT_EQ(whole.cycles_pruned, 0u);
  }
}

}  // namespace
}  // namespace rseqmc
