// Tests of the execution renderings in sim/trace.h: timeline lanes stay
// aligned and show injected events and aborts, symbols are named and folded,
// the JSON form is valid and escaped.
#include "sim/trace.h"

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

}  // namespace
}  // namespace rseqmc
