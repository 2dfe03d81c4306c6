// Tests of the execution renderings in sim/trace.h: timeline lanes stay
// aligned and show injected events and aborts, symbols are named and folded,
// the JSON form is valid and escaped.
#include "sim/trace.h"

#include <algorithm>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "sim/builder.h"
#include "sim/machine.h"
#include "sim/schedule.h"
#include "sim/simulator.h"
#include "tests/json_check.h"

namespace rseqmc {
namespace {

// Two threads on two CPUs increment a per-CPU counter with rseq (librseq addv);
// `ptrs` ends holding the address of arr[2], `arr` stays all zero.
Scenario CounterScenario() {
  ScenarioBuilder b("trace_counter");
  b.Cpus(2).PerCpu("counter", Width::kU64, 1, 64, {0}).Var("arr", Width::kU64, 8).Var("ptr", Width::kU64, 1);
  auto& f = b.Func("inc");
  f.La(10, "counter")
      .La(11, "arr", 16)
      .La(12, "ptr")
      .St(Mem(12), 11)
      .Label("retry")
      .RseqLoad(1, RseqField::kCpuIdStart)
      .Shl(2, 1, Imm(6))
      .Add(2, 2, R(10))
      .RseqArm("inc_cs")
      .Label("start")
      .RseqLoad(3, RseqField::kCpuId)
      .Bne(3, R(1), "abort")
      .Ld(4, Mem(2))
      .Add(4, 4, Imm(1))
      .St(Mem(2), 4)
      .Label("post")
      .Observe("cpu \"seen\"", 1)
      .Li(0, 5)
      .Ret()
      .Sig(kRseqSig)
      .Label("abort")
      .Jmp("retry")
      .Cs("inc_cs", "start", "post", "abort");
  b.Thread("t0", "inc", 0).Thread("t1", "inc", 1);
  b.Property(expr::Binary("==", expr::Sum("counter"), expr::Const(2)), "sum(counter) == 2");
  return b.Build();
}

// Lets CPU 0 run, preempting its thread once while it is inside its critical
// section, then lets CPU 1 run.
class PreemptInsideSection : public Scheduler {
 public:
  Decision Choose(const ChoiceView& v) override {
    const Machine& m = v.machine();
    const int t = v.Running(0);
    if (!done_ && t >= 0 && m.InCriticalSection(t)) {
      done_ = true;
      return Decision::Preempt(0);
    }
    return v.Runnable(0) ? Decision::Step(0) : Decision::Step(v.DefaultCpu());
  }

 private:
  bool done_ = false;
};

RunOptions Traced() {
  RunOptions o;
  o.record_trace = true;
  return o;
}

std::vector<size_t> PipeColumns(const std::string& line) {
  std::vector<size_t> cols;
  for (size_t i = 0; i < line.size(); ++i) {
    if (line[i] == '|') cols.push_back(i);
  }
  return cols;
}

TEST(TraceTest, TimelineLanesStayAlignedAndShowAborts) {
  const Scenario s = CounterScenario();
  Simulator sim(s, Traced());
  PreemptInsideSection sched;
  const ExecutionResult r = sim.Run(sched);
  ASSERT_FALSE(r.trace.empty());
  const std::string timeline = FormatTimeline(s, r);

  std::istringstream in(timeline);
  std::string line;
  std::vector<size_t> header;
  int rows = 0;
  while (std::getline(in, line)) {
    if (header.empty()) {
      if (line.rfind("  step |", 0) == 0) header = PipeColumns(line);
      continue;
    }
    if (line.empty()) break;
    if (line[0] == '-') continue;  // the rule under the header
    ++rows;
    // Lane rows have their pipes exactly under the header's; rows not tied to
    // a CPU have one pipe, the first.
    const std::vector<size_t> cols = PipeColumns(line.substr(0, header.back() + 2));
    if (cols.size() == 1) {
      EXPECT_EQ(cols[0], header[0]) << line;
    } else {
      EXPECT_EQ(cols, header) << line;
    }
  }
  ASSERT_EQ(header.size(), 2u) << timeline;
  EXPECT_EQ(rows, static_cast<int>(r.trace.size())) << timeline;
  EXPECT_NE(timeline.find("cpu1"), std::string::npos) << timeline;
  EXPECT_NE(timeline.find("** PREEMPT t0"), std::string::npos) << timeline;
  EXPECT_NE(timeline.find("!! ABORT t0 inc:start"), std::string::npos) << timeline;
  EXPECT_NE(timeline.find("-> inc:abort (inc_cs)"), std::string::npos) << timeline;
  EXPECT_NE(timeline.find("ld r4, [r2]"), std::string::npos) << timeline;
  EXPECT_NE(timeline.find("bne r3, r1, abort"), std::string::npos) << timeline;
  EXPECT_NE(timeline.find("=> counter[0]=1"), std::string::npos) << timeline;
  EXPECT_NE(timeline.find("PASS  sum(counter) == 2"), std::string::npos) << timeline;
  EXPECT_NE(timeline.find("t0: returned 5, 1 abort"), std::string::npos) << timeline;
  EXPECT_NE(timeline.find("verdict: PASS"), std::string::npos) << timeline;
}

TEST(TraceTest, SymbolsAreNamedAndRunsFolded) {
  const Scenario s = CounterScenario();
  Simulator sim(s);
  RandomScheduler sched(3);
  const ExecutionResult r = sim.Run(sched);
  const std::string symbols = FormatSymbols(s, r);
  EXPECT_NE(symbols.find("counter[0] = "), std::string::npos) << symbols;
  EXPECT_NE(symbols.find("counter[1] = "), std::string::npos) << symbols;
  EXPECT_NE(symbols.find("arr[0..7] = 0\n"), std::string::npos) << symbols;
  EXPECT_NE(symbols.find("ptr = 0x"), std::string::npos) << symbols;
  EXPECT_NE(symbols.find(" (&arr[2])"), std::string::npos) << symbols;
}

TEST(TraceTest, JsonIsValidAndEscaped) {
  const Scenario s = CounterScenario();
  Simulator sim(s, Traced());
  for (uint64_t seed = 1; seed <= 20; ++seed) {
    RandomScheduler sched(seed);
    const ExecutionResult r = sim.Run(sched);
    const std::string json = FormatJson(s, r);
    std::string error;
    ASSERT_TRUE(testing::IsValidJson(json, &error)) << error << "\n" << json;
    EXPECT_EQ(json.find('\n'), std::string::npos);
    EXPECT_NE(json.find("\"symbols\":{\"counter\":["), std::string::npos) << json;
    EXPECT_NE(json.find("\"arr\":[0,0,0,0,0,0,0,0]"), std::string::npos) << json;
    EXPECT_NE(json.find("\"observed\":{\"cpu \\\"seen\\\"\":"), std::string::npos) << json;
    EXPECT_NE(json.find("\"schedule\":\"" + EncodeSchedule(s, r.schedule) + "\""), std::string::npos);
  }
}

TEST(TraceTest, TraceKindNamesAreDistinct) {
  std::set<std::string> names;
  for (int k = 0; k <= static_cast<int>(TraceKind::kObserve); ++k) {
    names.insert(TraceKindName(static_cast<TraceKind>(k)));
  }
  EXPECT_EQ(names.size(), static_cast<size_t>(TraceKind::kObserve) + 1);
  EXPECT_EQ(names.count("unknown"), 0u);
}

// A trace of 10 distinct entries, 1,000 that repeat a round of 3 (the same
// thread at pcs 100, 101, 102, storing the same value) and 5 distinct ones:
// the run of period 3 covers entries 13..1009, so the first two rounds
// (10..15) and the last (1006..1008, then 1009 closing a partial round) stay
// and the 990 entries 16..1005 (whole rounds) are left out. Its multiples
// (period 6, 9, ...) overlap it and add nothing.
TEST(TraceTest, FindRepeatsLeavesOutWholeRoundsOfALongRun) {
  Trace t;
  uint64_t step = 0;
  auto add = [&](uint32_t pc, int64_t a, int64_t b) {
    TraceEntry e;
    e.step = step++;
    e.cpu = 0;
    e.thread = 0;
    e.pc = pc;
    e.a = a;
    e.b = b;
    t.push_back(e);
  };
  for (uint32_t i = 0; i < 10; ++i) add(i, 0, 0);
  for (uint32_t i = 0; i < 1000; ++i) add(100 + i % 3, i % 3 == 1 ? 0x1000 : 0, i % 3 == 1 ? 7 : 0);
  for (uint32_t i = 0; i < 5; ++i) add(200 + i, 0, 0);
  const std::vector<TraceRepeat> reps = FindRepeats(t);
  ASSERT_EQ(reps.size(), 1u);
  EXPECT_EQ(reps[0].first, 16u);
  EXPECT_EQ(reps[0].count, 990u);
  EXPECT_EQ(reps[0].period, 3u);
  // A store of another value breaks the round: nothing repeats for long.
  Trace counting;
  for (uint32_t i = 0; i < 1000; ++i) {
    TraceEntry e;
    e.step = i;
    e.cpu = 0;
    e.thread = 0;
    e.pc = 100 + i % 2;
    e.a = i % 2 == 1 ? 0x1000 : 0;
    e.b = i % 2 == 1 ? i : 0;
    counting.push_back(e);
  }
  EXPECT_TRUE(FindRepeats(counting).empty());
}

// A thread spinning on a lock never released runs to the step budget: its
// text timeline was one row per step (20,000 rows here, 100,000 at the
// default budget: 9.6 MB for two threads), and now shows the loop's first
// two rounds and its last, with one row saying which steps it leaves out.
TEST(TraceTest, TimelineShowsALivelocksLoopOnceNotEveryRound) {
  ScenarioBuilder b("spin_on_lock");
  b.Var("lock", Width::kU64, 1, {1});
  b.Func("spin").La(1, "lock").Label("loop").Ld(2, Mem(1)).Bne(2, Imm(0), "loop").Ret();
  b.Thread("t0", "spin", /*cpu=*/0);
  const Scenario s = b.Build();
  RunOptions o = Traced();
  o.max_steps = 20000;
  Simulator sim(s, o);
  ReplayScheduler sched(Schedule{});  // no event: t0 runs alone from its first step
  const ExecutionResult r = sim.Run(sched);
  ASSERT_EQ(r.verdict, Verdict::kLivelock) << r.message;
  const std::string timeline = FormatTimeline(s, r);
  EXPECT_LT(std::count(timeline.begin(), timeline.end(), '\n'), 40) << timeline;
  // Entries: la (step 1), then ld / bne from step 2 to 10003, where the
  // machine's cycle check (past the budget's midpoint, Machine::CheckCycle)
  // ends the spin. The run of period 2 starts at entry 3 (the second ld);
  // rounds 1..2 and 3..4 stay, then whole rounds up to the last one.
  const std::vector<TraceRepeat> reps = FindRepeats(r.trace);
  ASSERT_EQ(reps.size(), 1u);
  EXPECT_EQ(reps[0].first, 5u);
  EXPECT_EQ(reps[0].count, 9996u);
  EXPECT_EQ(reps[0].period, 2u);  // ld, bne
  EXPECT_NE(timeline.find("     5 | t0 spin:loop+1 bne r2, 0, loop\n"
                          "   ... | 9996 entries (steps 6..10001) not shown: they repeat the 2 entries before them, "
                          "the same instructions and stores again\n"
                          " 10002 | t0 spin:loop ld r2, [r1]\n"
                          " 10003 | t0 spin:loop+1 bne r2, 0, loop\n\n"
                          "steps 10003,"),
            std::string::npos)
      << timeline;
}

}  // namespace
}  // namespace rseqmc
