// The packed trace store (sim/trace.h, Trace): every entry reads back exactly
// as it was appended, across chunk boundaries, wide values, steps far apart
// and details; resize() drops exactly the tail; and a long real run keeps at
// most 32 bytes per entry.
#include <cstdint>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "scenarios/builtin.h"
#include "scenarios/parser.h"
#include "sim/schedule.h"
#include "sim/simulator.h"
#include "sim/trace.h"

namespace rseqmc {
namespace {

void ExpectSame(const TraceEntry& want, const TraceEntry& got, size_t i) {
  EXPECT_EQ(got.step, want.step) << i;
  EXPECT_EQ(got.kind, want.kind) << i;
  EXPECT_EQ(got.cpu, want.cpu) << i;
  EXPECT_EQ(got.thread, want.thread) << i;
  EXPECT_EQ(got.depth, want.depth) << i;
  EXPECT_EQ(got.pc, want.pc) << i;
  EXPECT_EQ(got.a, want.a) << i;
  EXPECT_EQ(got.b, want.b) << i;
  EXPECT_EQ(got.detail, want.detail) << i;
}

void ExpectTrace(const std::vector<TraceEntry>& want, const Trace& got) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < want.size(); ++i) ExpectSame(want[i], got[i], i);
  size_t i = 0;
  for (const TraceEntry& e : got) ExpectSame(want[i], e, i), ++i;
  EXPECT_EQ(i, want.size());
}

// 10,000 entries (three chunks), every field varied, a few steps that jump
// by more than 2^32 or go back, a detail every 997 entries.
std::vector<TraceEntry> Entries() {
  std::vector<TraceEntry> v;
  uint64_t step = 5;
  for (uint32_t i = 0; i < 10000; ++i) {
    TraceEntry e;
    step += i % 3 == 0 ? 1 : 0;
    if (i == 5000) step += uint64_t{1} << 33;  // far from its chunk's first step
    e.step = i == 7000 ? 3 : step;             // not monotonic
    e.kind = static_cast<TraceKind>(i % 19);
    e.cpu = static_cast<int8_t>(static_cast<int>(i % 5) - 1);
    e.thread = static_cast<int16_t>(static_cast<int>(i % 7) - 1);
    e.depth = static_cast<uint8_t>(i % 3);
    e.pc = i % 11 == 0 ? 0xFFFFFFFFu : i * 7;
    if (i % 4 == 0) e.a = 0x10000000 + i;
    if (i % 6 == 0) e.b = -static_cast<int64_t>(i) * 1000003;
    if (i == 9999) e.a = INT64_MIN, e.b = INT64_MAX;
    if (i % 997 == 0) e.detail = "detail " + std::to_string(i);
    v.push_back(e);
  }
  return v;
}

TEST(TraceStoreTest, ReadsBackEveryEntry) {
  const std::vector<TraceEntry> want = Entries();
  Trace t;
  for (const TraceEntry& e : want) t.push_back(e);
  ExpectTrace(want, t);
  EXPECT_EQ(t.back().a, INT64_MIN);
  EXPECT_EQ(t.end() - t.begin(), 10000);
}

TEST(TraceStoreTest, ResizeDropsTheTailOnly) {
  std::vector<TraceEntry> want = Entries();
  Trace t;
  for (const TraceEntry& e : want) t.push_back(e);
  for (size_t n : {size_t{9000}, size_t{8192}, size_t{4097}, size_t{4096}, size_t{1995}, size_t{1}}) {
    t.resize(n);
    want.resize(n);
    ExpectTrace(want, t);
    // Appending after a cut continues from there (as a resumed execution does).
    const std::vector<TraceEntry> more = Entries();
    for (size_t k = n; k < n + 3000 && k < more.size(); ++k) t.push_back(more[k]), want.push_back(more[k]);
    ExpectTrace(want, t);
  }
  t.resize(t.size() + 5);  // growing is not a thing: nothing changes
  ExpectTrace(want, t);
  t.clear();
  EXPECT_TRUE(t.empty());
  EXPECT_EQ(t.begin(), t.end());
}

// A real long run: percpu_list with 2,048 nodes per CPU (about 172 k steps).
// The store holds at most 32 bytes per entry (the bound), and the
// rendering reads the same entries back (the timeline has one row each).
TEST(TraceStoreTest, LongRunFitsIn32BytesPerEntry) {
  const BuiltinScenario* b = FindBuiltinScenario("percpu_list");
  ASSERT_NE(b, nullptr);
  const Scenario s = ParseScenario(b->text, b->path, {{"PER", 2048}});
  RunOptions opt;
  opt.record_trace = true;
  opt.max_steps = 1000000;
  Simulator sim(s, opt);
  RandomScheduler sched(1);
  const ExecutionResult r = sim.Run(sched);
  ASSERT_EQ(r.verdict, Verdict::kPass) << r.message;
  ASSERT_GT(r.steps, 100000u);
  ASSERT_GE(r.trace.size(), r.steps);
  EXPECT_LE(r.trace.bytes(), 32 * r.trace.size()) << r.trace.bytes() << " bytes for " << r.trace.size() << " entries";
  uint64_t steps = 0;
  for (const TraceEntry& e : r.trace) steps += e.kind == TraceKind::kStep;
  EXPECT_EQ(steps, r.steps);
}

}  // namespace
}  // namespace rseqmc
