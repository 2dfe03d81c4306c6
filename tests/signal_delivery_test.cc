// Signal delivery faults of issue 10 §3: a memory fault goes to a declared
// SIGSEGV handler (force_sig_fault), pending signals are dequeued synchronous
// ones first (kernel/signal.c next_signal(), SYNCHRONOUS_MASK), and a store
// past the end of a symbol lands in its neighbour (README, "Memory").
#include <cstdint>
#include <cstring>
#include <string>

#include <gtest/gtest.h>

#include "model/explorer.h"
#include "scenarios/parser.h"
#include "sim/builder.h"  // DescriptorAddress
#include "sim/schedule.h"
#include "sim/simulator.h"
#include "tests/cli_runner.h"

namespace rseqmc {
namespace {

ExecutionResult RunPlainSchedule(const Scenario& s) {
  RunOptions o;
  Simulator sim(s, o);
  ReplayScheduler sched(Schedule{});
  return sim.Run(sched);
}

uint64_t SymbolValue(const Scenario& s, const ExecutionResult& r, const std::string& name, uint64_t index = 0) {
  const Symbol& sym = s.program.symbols[static_cast<size_t>(s.program.FindSymbol(name))];
  uint64_t v = 0;
  std::memcpy(&v, r.memory.data() + (sym.address + 8 * index - kDataBase), 8);
  return v;
}

// The handler runs for each fault (the faulting load runs again after
// sigreturn and faults again); the third time it sends itself SIGTERM. Before
// the fix the first fault killed the process with SIGSEGV and hits stayed 0.
TEST(SignalDeliveryTest, MemoryFaultRunsDeclaredSigsegvHandler) {
  const Scenario s = ParseScenario(R"(scenario fault_handler
var hits: u64 = 0
func main
  li    r1, 16
  ld    r2, [r1]
  ret
end
func on_segv
  la    r1, hits
  li    r2, 1
  xadd  r3, [r1], r2
  bne   r3, 2, back
  tgkill t, SIGTERM
back:
  ret
end
signal SIGSEGV handler on_segv
thread t entry main
)",
                                   "fault_handler.rsq");
  const ExecutionResult r = RunPlainSchedule(s);
  EXPECT_EQ(r.verdict, Verdict::kKilled) << r.message;
  EXPECT_EQ(SymbolValue(s, r, "hits"), 3u);
}

// Without a handler, or with SIGSEGV blocked (inside the SIGSEGV handler
// itself), the fault kills at once.
TEST(SignalDeliveryTest, MemoryFaultWithoutHandlerOrBlockedKills) {
  const Scenario none = ParseScenario(R"(scenario fault_default
func main
  li    r1, 16
  ld    r2, [r1]
  ret
end
thread t entry main
)",
                                      "fault_default.rsq");
  EXPECT_EQ(RunPlainSchedule(none).verdict, Verdict::kSigsegv);
  const Scenario nested = ParseScenario(R"(scenario fault_in_handler
var hits: u64 = 0
func main
  li    r1, 16
  ld    r2, [r1]
  ret
end
func on_segv
  la    r1, hits
  li    r2, 1
  xadd  r3, [r1], r2
  li    r1, 16
  ld    r2, [r1]
  ret
end
signal SIGSEGV handler on_segv
thread t entry main
)",
                                        "fault_in_handler.rsq");
  const ExecutionResult r = RunPlainSchedule(nested);
  EXPECT_EQ(r.verdict, Verdict::kSigsegv);
  EXPECT_EQ(SymbolValue(nested, r, "hits"), 1u);
}

// SIGUSR1 (10) and SIGSEGV (11) pending together: the kernel dequeues SIGSEGV
// first, so its frame is built first and SIGUSR1's on top of it: the SIGUSR1
// handler runs first. (Lowest number first would run the SIGSEGV handler
// first.) The waiter is woken from its futex wait by the first tgkill and
// runs only after the kicker has sent both.
TEST(SignalDeliveryTest, SynchronousSignalsAreDequeuedFirst) {
  const Scenario s = ParseScenario(R"(scenario sync_first
var word: u64 = 0
var next: u64 = 0
var order: u64[2] = 0
func waiter
  la    r1, word
  futex_wait r1, 0
  ret
end
func kicker
  tgkill w, SIGUSR1
  tgkill w, SIGSEGV
  ret
end
func record
  la    r2, next
  li    r3, 1
  xadd  r4, [r2], r3
  la    r5, order
  shl   r6, r1, 3
  add   r5, r5, r6
  add   r4, r4, 1
  st    [r5], r4
  ret
end
func on_usr1
  li    r1, 0
  call  record
  ret
end
func on_segv
  li    r1, 1
  call  record
  ret
end
signal SIGUSR1 handler on_usr1
signal SIGSEGV handler on_segv
thread w entry waiter cpu 0
thread k entry kicker cpu 0
)",
                                   "sync_first.rsq");
  const ExecutionResult r = RunPlainSchedule(s);
  ASSERT_EQ(r.verdict, Verdict::kPass) << r.message;
  EXPECT_EQ(SymbolValue(s, r, "order", 0), 1u);  // SIGUSR1's handler ran first
  EXPECT_EQ(SymbolValue(s, r, "order", 1), 2u);
  EXPECT_EQ(r.threads[0].ret, -4);               // the futex wait was interrupted
}

// tgkill(SIGKILL) of another thread: the kernel's complete_signal() starts
// the group exit when the signal is generated, so the sender never runs the
// store after its tgkill (the simulator used to let it run on until the
// victim next returned to user space). tests/crosscheck_test.cc
// (Crosscheck.SigkillOfAnotherThreadKillsTheSenderToo) checks it on the kernel.
constexpr char kSigkillOther[] = R"(scenario tgkill_sigkill
cpus 2
var after: u64 = 0
func killer
  tgkill v, SIGKILL
  la    r1, after
  li    r2, 1
  st    [r1], r2
  ret
end
func victim
  li    r3, 0
loop:
  add   r3, r3, 1
  bne   r3, 50, loop
  ret
end
thread k entry killer cpu 0
thread v entry victim cpu 1
expect fail killed
)";

TEST(SignalDeliveryTest, SigkillOfAnotherThreadKillsTheWholeProcessAtOnce) {
  const Scenario s = ParseScenario(kSigkillOther, "tgkill_sigkill.rsq");
  const ExecutionResult r = RunPlainSchedule(s);
  EXPECT_EQ(r.verdict, Verdict::kKilled) << r.message;
  EXPECT_NE(r.message.find("SIGKILL sent by k to v"), std::string::npos) << r.message;
  EXPECT_EQ(SymbolValue(s, r, "after"), 0u);
  EXPECT_FALSE(r.threads[0].exited);
  EXPECT_FALSE(r.threads[1].exited);
}

// README "Memory": a store past the end of a symbol overwrites the next
// symbol (flat memory, as in a real process); a store past the end of the
// data image faults.
TEST(SignalDeliveryTest, StorePastSymbolLandsInNeighbourAndPastImageFaults) {
  const Scenario s = ParseScenario(R"(scenario overflow
var a: u64 = 0
var b: u64 = 0
func main
  la    r1, a
  li    r2, 42
  st    [r1 + 64], r2
  ret
end
thread t entry main
)",
                                   "overflow.rsq");
  const Symbol& a = s.program.symbols[0];
  const Symbol& b = s.program.symbols[1];
  ASSERT_EQ(b.address, a.address + 64) << "layout: symbols are 64-byte aligned";
  const ExecutionResult r = RunPlainSchedule(s);
  ASSERT_EQ(r.verdict, Verdict::kPass) << r.message;
  EXPECT_EQ(SymbolValue(s, r, "b"), 42u);
  const Scenario past = ParseScenario(R"(scenario past_image
var a: u64 = 0
func main
  la    r1, a
  li    r2, 42
  st    [r1 + 0x100000], r2
  ret
end
thread t entry main
)",
                                      "past_image.rsq");
  EXPECT_EQ(RunPlainSchedule(past).verdict, Verdict::kSigsegv);
}

// README "Memory": past the last symbol lie the rseq_cs descriptors, which
// are the kernel model's, not the program's: a store there faults (the
// real-kernel cross-check keeps them elsewhere; kernel/README.md "Memory
// layout"). The rseq areas after them stay accessible (rseq_addr).
TEST(SignalDeliveryTest, StorePastTheLastSymbolFaultsOnADescriptor) {
  const Scenario s = ParseScenario(R"(scenario past_data
var a: u64 = 0
func main
  rseq_arm c
start:
  la    r1, a
  li    r2, 1
  st    [r1 + 64], r2
post:
  ret
  sig 0x53053053
abort:
  ret
  cs c start=start post_commit=post abort=abort
end
thread t entry main
)",
                                   "past_data.rsq");
  ASSERT_EQ(DescriptorAddress(s.program, 0), s.program.symbols[0].address + 64);
  const ExecutionResult r = RunPlainSchedule(s);
  EXPECT_EQ(r.verdict, Verdict::kSigsegv);
  EXPECT_NE(r.message.find("invalid memory access at 0x10000040"), std::string::npos) << r.message;
  const Scenario area = ParseScenario(R"(scenario area_store
var a: u64 = 0
func main
  rseq_addr r1
  li    r2, 7
  st32  [r1], r2
  ld32  r3, [r1]
  observe v, r3
  ret
end
thread t entry main
)",
                                      "area_store.rsq");
  const ExecutionResult ra = RunPlainSchedule(area);
  ASSERT_EQ(ra.verdict, Verdict::kPass) << ra.message;
  ASSERT_EQ(ra.threads[0].observed.size(), 1u);
  EXPECT_EQ(ra.threads[0].observed[0].second, 7);
}

// tgkill(tgid, tid, 0) is the existence probe: do_send_specific()
// (kernel/signal.c) sends nothing for signal 0 and returns 0 for a live
// thread, -ESRCH for an exited one. In the default schedule `early` has
// returned when t probes it (-3) and t probes itself (0); no signal is
// recorded. Before, the parser refused signal 0 ("out of range (1..31)").
// Crosscheck.TgkillSignalZeroAgrees checks it on the kernel.
TEST(SignalDeliveryTest, TgkillSignalZeroProbesExistence) {
  const Scenario s = ParseScenario(testing::ReadFile(testing::Fixture("tgkill_probe.rsq")), "tgkill_probe.rsq");
  RunOptions o;
  o.record_trace = true;
  Simulator sim(s, o);
  ReplayScheduler sched(Schedule{});
  const ExecutionResult r = sim.Run(sched);
  ASSERT_EQ(r.verdict, Verdict::kPass) << r.message;
  ASSERT_EQ(r.threads[1].observed.size(), 2u);
  EXPECT_EQ(r.threads[1].observed[0].second, -3);  // -ESRCH: early has exited
  EXPECT_EQ(r.threads[1].observed[1].second, 0);   // itself: alive
  for (const TraceEntry& e : r.trace) EXPECT_NE(e.kind, TraceKind::kSignal) << "signal 0 sends nothing";
  // 32 is still no signal.
  EXPECT_THROW(ParseScenario("scenario bad\nfunc main\n  tgkill t, 32\n  ret\nend\nthread t entry main\n", "bad.rsq"),
               std::exception);
}

// rseq errors with a SIGSEGV handler installed and unblocked
// (tests/data/rseq_error_handler.rsq, KIND 0 bad signature, 1 rseq_cs above
// TASK_SIZE, 2 rseq_cs at garbage): without an event nothing evaluates and
// the thread finishes; with one, the 6.0-6.18 kernel's force_sigsegv(0)
// queues SIGSEGV, whose delivery evaluates rseq_cs again
// (rseq_signal_deliver() in handle_signal()) and fails with ksig->sig ==
// SIGSEGV: force_fatal_sig(). The handler never runs; the process dies with
// SIGSEGV, which is rseqmc's kill at once (Crosscheck.RseqErrorWithAHandlerKills
// shows the kernel agrees on every single-event schedule).
TEST(SignalDeliveryTest, RseqErrorWithAHandlerKills) {
  for (const int64_t kind : {0, 1, 2}) {
    SCOPED_TRACE(kind);
    const Scenario s = ParseScenarioFile(testing::Fixture("rseq_error_handler.rsq"), {{"KIND", kind}});
    const ExecutionResult plain = RunPlainSchedule(s);
    EXPECT_EQ(plain.verdict, Verdict::kPass) << plain.message;
    EXPECT_EQ(SymbolValue(s, plain, "done"), 1u);
    ExploreOptions o;
    o.bounds.max_events = 1;
    const ExploreResult res = Explore(s, o);
    ASSERT_TRUE(res.failure.has_value());
    EXPECT_EQ(res.failure->verdict, Verdict::kSigsegv) << res.failure->message;
    EXPECT_EQ(res.failure->message.rfind("rseq", 0), 0u) << res.failure->message;
    const ExecutionResult r = [&] {
      RunOptions ro;
      Simulator sim(s, ro);
      ReplayScheduler replay(res.failure->schedule);
      return sim.Run(replay);
    }();
    EXPECT_EQ(r.verdict, Verdict::kSigsegv);
    EXPECT_EQ(SymbolValue(s, r, "hits"), 0u);  // the handler never ran
  }
}

}  // namespace
}  // namespace rseqmc
