// One focused test per rule of reference/rseq-semantics.md §7 that the legacy
// kernel models (sim/kernel_model.h: 6.0-6.18 and 4.18-5.19) implement, with
// the rule number in the test name, plus signal delivery, tgkill,
// sched_setaffinity and native-thread tests. Every test replays a hand-built
// schedule (tests/rule_helpers.h) and asserts exact values: memory, registers
// (through `observe`), abort counts and trace entries. Rule 26 reproduces the
// results table that the real 6.18 kernel gave in reference/inject-prototype.md.
#include <algorithm>
#include <cstdint>
#include <initializer_list>
#include <utility>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "sim/builder.h"
#include "sim/diag.h"
#include "sim/ir.h"
#include "sim/kernel_model.h"
#include "sim/scenario.h"
#include "sim/simulator.h"
#include "sim/thread_api.h"
#include "sim/trace.h"
#include "tests/rule_helpers.h"

namespace rseqmc {
namespace {

using rules::AreaAddress;
using rules::DescriptorAddress;
using rules::Entries;
using rules::Executions;
using rules::Observed;
using rules::Pc;
using rules::ScheduleMaker;
using V = std::vector<int64_t>;

constexpr KernelModel k60 = KernelModel::kLegacy60;
constexpr KernelModel kCid = KernelModel::kMmCid;  // 6.3-6.18: node_id, mm_cid
constexpr KernelModel k418 = KernelModel::kLegacy418;
constexpr int64_t kEbusy = -16, kEperm = -1, kEinval = -22, kEsrch = -3;
constexpr int64_t kU32Minus1 = 0xffffffffll;  // (u32)-1 as read by ld32 / rseq_load
constexpr uint32_t kOtherSig = 0x12345678;

// ---------------------------------------------------------------------------
// Building blocks.

// `inc`: the librseq per-CPU counter increment (rseq_load_add_store__ptr with
// the CPU compare at start_ip). The abort handler records the counter it sees
// and counts abort-path executions in `aborts`, then retries. After the commit
// it records rseq_cs twice ("cs_at_post", then "cs_later" from label `later`),
// then the CPU it used; returns that CPU.
void AddCounter(ScenarioBuilder& b) {
  b.PerCpu("counter", Width::kU64, 1, 64, {0}).Var("aborts", Width::kU64, 1);
  b.Func("inc")
      .La(10, "counter")
      .La(11, "aborts")
      .Label("retry").RseqLoad(1, RseqField::kCpuIdStart)
      .Shl(2, 1, Imm(6))
      .Add(2, 2, R(10))
      .Label("arm").RseqArm("cs")
      .Label("start").RseqLoad(3, RseqField::kCpuId)
      .Bne(3, R(1), "abort")
      .Label("load").Ld(4, Mem(2))
      .Add(4, 4, Imm(1))
      .Label("commit").St(Mem(2), 4)
      .Label("post").RseqAddr(12)
      .Ld(13, Mem(12, 8))
      .Observe("cs_at_post", 13)
      .Label("later").Ld(13, Mem(12, 8))
      .Observe("cs_later", 13)
      .Observe("cpu", 1)
      .Mov(0, 1)
      .Ret()
      .Sig(kRseqSig)
      .Label("abort").Ld(6, Mem(2))
      .Observe("counter_at_abort", 6)
      .Ld(5, Mem(11))
      .Add(5, 5, Imm(1))
      .St(Mem(11), 5)
      .Jmp("retry")
      .Cs("cs", "start", "post", "abort");
}

// `on_sig` handles SIGUSR1 and records what a handler sees; SIGUSR2 is ignored.
void AddSigHandler(ScenarioBuilder& b) {
  b.Func("on_sig")
      .RseqAddr(2)
      .Ld(3, Mem(2, 8))
      .Observe("sig_rseq_cs", 3)
      .RseqLoad(4, RseqField::kCpuId)
      .Observe("sig_cpu_id", 4)
      .RseqLoad(5, RseqField::kCpuIdStart)
      .Observe("sig_cpu_id_start", 5)
      .Ret();
  b.Signal(kSigUsr1, "on_sig").Signal(kSigUsr2, "");
}

// One thread running `inc` on CPU 0 of a 2-CPU machine.
Scenario CounterScenario() {
  ScenarioBuilder b("counter");
  b.Cpus(2);
  AddCounter(b);
  AddSigHandler(b);
  b.Thread("t0", "inc", 0);
  return b.Build();
}

// `ids`: overwrites cpu_id_start with 0x1234 and mm_cid with 0x777 through
// rseq_addr, runs a `nop` at label `probe`, then records cpu_id_start, cpu_id
// and mm_cid as they are in memory.
void AddIdsProbe(ScenarioBuilder& b) {
  b.Func("ids")
      .RseqAddr(2)
      .Li(3, 0x1234)
      .St32(Mem(2, kRseqOffCpuIdStart), 3)
      .Li(3, 0x777)
      .St32(Mem(2, kRseqOffMmCid), 3)
      .Label("probe").Nop()
      .Ld32(4, Mem(2, kRseqOffCpuIdStart))
      .Observe("cpu_id_start", 4)
      .Ld32(4, Mem(2, kRseqOffCpuId))
      .Observe("cpu_id", 4)
      .Ld32(4, Mem(2, kRseqOffMmCid))
      .Observe("mm_cid", 4)
      .Ret();
}

Scenario IdsScenario() {
  ScenarioBuilder b("ids");
  b.Cpus(2);
  AddIdsProbe(b);
  AddSigHandler(b);
  b.Thread("t0", "ids", 0);
  return b.Build();
}

// `simple`: one critical section over `data` (no CPU compare) whose abort
// handler returns -1; returns 0 after the commit. Descriptor `d` gets the given
// flags/version; `sig` is the signature word before the abort label.
Scenario SimpleSectionScenario(uint32_t flags = 0, uint32_t version = 0, uint32_t sig = kRseqSig) {
  ScenarioBuilder b("simple");
  b.Cpus(2).Var("data", Width::kU64, 1);
  b.Func("simple")
      .La(10, "data")
      .Label("arm").RseqArm("d")
      .Label("start").Ld(4, Mem(10))
      .Add(4, 4, Imm(1))
      .Label("commit").St(Mem(10), 4)
      .Label("post").Nop()
      .Label("after").Li(0, 0)
      .Ret()
      .Sig(sig)
      .Label("abort").Li(0, -1)
      .Ret()
      .Cs("d", "start", "post", "abort", flags, version);
  AddSigHandler(b);
  b.Thread("t0", "simple", 0);
  return b.Build();
}

uint32_t FuncPc(const Scenario& s, const std::string& func) {
  return s.program.functions[s.program.FindFunction(func)].first;
}

// Expects thread t's observations under each name to be exactly the given values.
void ExpectObserved(const Scenario& s, const ExecutionResult& r, int t,
                    std::initializer_list<std::pair<const char*, V>> expected) {
  for (const auto& [name, values] : expected) EXPECT_EQ(Observed(s, r, t, name), values) << name;
}

// Index in the trace of the first entry of kind k (of thread t), or -1.
int64_t TraceIndex(const ExecutionResult& r, TraceKind k, int t = -1) {
  for (size_t i = 0; i < r.trace.size(); ++i) {
    if (r.trace[i].kind == k && (t < 0 || r.trace[i].thread == t)) return static_cast<int64_t>(i);
  }
  return -1;
}

// Index in the trace of the last entry of kind k (of thread t), or -1.
int64_t LastTraceIndex(const ExecutionResult& r, TraceKind k, int t = -1) {
  for (size_t i = r.trace.size(); i-- > 0;) {
    if (r.trace[i].kind == k && (t < 0 || r.trace[i].thread == t)) return static_cast<int64_t>(i);
  }
  return -1;
}

// Trace entries of kind k of thread t recorded after the step that ran `pc`.
std::vector<TraceEntry> EntriesAfter(const ExecutionResult& r, TraceKind k, int t, uint32_t pc) {
  std::vector<TraceEntry> out;
  bool seen = false;
  for (const TraceEntry& e : r.trace) {
    if (e.kind == TraceKind::kStep && e.thread == t && e.pc == pc) seen = true;
    if (seen && e.kind == k && e.thread == t) out.push_back(e);
  }
  return out;
}

// ---------------------------------------------------------------------------
// Rule 1: one registration per thread.

TEST(KernelRules, Rule01_SecondRegistration_SameSigEbusy_OtherSigEperm_RegistrationKept) {
  ScenarioBuilder b("rule01");
  b.Cpus(2);
  AddCounter(b);
  b.Func("main")
      .RseqRegister(kRseqSig)
      .Observe("same_sig", 0)
      .RseqRegister(kOtherSig)
      .Observe("other_sig", 0)
      .RseqAddr(2)
      .Observe("area", 2)
      .Call("inc")
      .Ret();
  b.Thread("t0", "main", 0);
  Scenario s = b.Build();
  for (KernelModel k : {k60, k418}) {
    SCOPED_TRACE(KernelModelName(k));
    // The abort after the failed registrations still checks RSEQ_SIG: the
    // registration (area, signature) is unchanged.
    ScheduleMaker sm(s, k);
    sm.Preempt(0, Pc(s, "inc", "load"));
    ExecutionResult r = sm.Run();
    EXPECT_EQ(r.verdict, Verdict::kPass) << r.message;
    ExpectObserved(s, r, 0, {{"same_sig", V{kEbusy}},
                             {"other_sig", V{kEperm}},
                             {"area", V{static_cast<int64_t>(AreaAddress(s, 0))}}});
    EXPECT_EQ(r.threads[0].aborts, 1u);
    EXPECT_EQ(r.SymbolValue(s, "counter", 0), 1);
  }
}

// ---------------------------------------------------------------------------
// Rule 3: registration side effects.

TEST(KernelRules, Rule03_RegistrationPublishesCurrentIdsBeforeReturning) {
  ScenarioBuilder b("rule03_ids");
  b.Cpus(2).Nodes(2);
  b.Func("main")
      .RseqLoad(1, RseqField::kCpuId)
      .Observe("cpu_id_before", 1)
      .RseqRegister(kRseqSig)
      .Observe("reg", 0)
      .RseqAddr(2)
      .Ld32(3, Mem(2, kRseqOffCpuIdStart))
      .Observe("cpu_id_start", 3)
      .Ld32(3, Mem(2, kRseqOffCpuId))
      .Observe("cpu_id", 3)
      .Ld32(3, Mem(2, kRseqOffNodeId))
      .Observe("node_id", 3)
      .Ret();
  b.Thread("t0", "main", 1, ~0ull, {}, /*registered=*/false);
  Scenario s = b.Build();
  for (KernelModel k : {kCid, k60, k418}) {
    SCOPED_TRACE(KernelModelName(k));
    ExecutionResult r = ScheduleMaker(s, k).Run();
    EXPECT_EQ(r.verdict, Verdict::kPass) << r.message;
    EXPECT_EQ(Observed(s, r, 0, "cpu_id_before"), V{kU32Minus1});  // RSEQ_CPU_ID_UNINITIALIZED
    ExpectObserved(s, r, 0, {{"reg", V{0}},
                             {"cpu_id_start", V{1}},
                             {"cpu_id", V{1}}});
    // node_id exists since 6.3; the 4.18-6.2 kernels never write it.
    EXPECT_EQ(Observed(s, r, 0, "node_id"), V{k == kCid ? 1 : 0});
    ASSERT_EQ(Entries(r, TraceKind::kIdUpdate, 0).size(), 1u);
  }
}

// A stale rseq_cs (here a pointer to unreadable memory, as left by an older
// glibc reusing an area) is cleared by registration (fd881d0a085f, 6.15 and
// stable 5.10+): no SIGSEGV on the return to user.
TEST(KernelRules, Rule03_Legacy60_RegistrationClearsStaleRseqCs) {
  ScenarioBuilder b("rule03_stale");
  b.Cpus(1);
  b.Func("main")
      .RseqAddr(2)
      .RseqUnregister(kRseqSig)
      .Li(3, 0x1000)
      .St(Mem(2, kRseqOffRseqCs), 3)
      .RseqRegister(kRseqSig)
      .Observe("reg", 0)
      .Ld(4, Mem(2, kRseqOffRseqCs))
      .Observe("rseq_cs", 4)
      .Ret();
  b.Thread("t0", "main", 0);
  Scenario s = b.Build();
  ExecutionResult r = ScheduleMaker(s, k60).Run();
  EXPECT_EQ(r.verdict, Verdict::kPass) << r.message;
  EXPECT_EQ(Observed(s, r, 0, "reg"), V{0});
  EXPECT_EQ(Observed(s, r, 0, "rseq_cs"), V{0});
  EXPECT_TRUE(Entries(r, TraceKind::kLazyClear).empty());
}

// The 4.18 kernel does not clear it: the return from registration evaluates
// the stale pointer and the process gets SIGSEGV (the bug fd881d0a085f fixed).
TEST(KernelRules, Rule03_Legacy418_StaleRseqCsNotClearedByRegistration) {
  ScenarioBuilder b("rule03_stale418");
  b.Cpus(1);
  b.Func("main")
      .RseqAddr(2)
      .RseqUnregister(kRseqSig)
      .Li(3, 0x1000)
      .St(Mem(2, kRseqOffRseqCs), 3)
      .RseqRegister(kRseqSig)
      .Ret();
  b.Thread("t0", "main", 0);
  Scenario s = b.Build();
  ExecutionResult r = ScheduleMaker(s, k418).Run();
  EXPECT_EQ(r.verdict, Verdict::kSigsegv);
  EXPECT_NE(r.message.find("unreadable"), std::string::npos) << r.message;
}

// A stale but valid descriptor: 6.x clears it in the syscall, 4.18 leaves it
// and the return to user lazily clears it (IP is outside its section).
TEST(KernelRules, Rule03_StaleValidDescriptor_ClearedBySyscallIn60_LazilyIn418) {
  ScenarioBuilder b("rule03_valid");
  b.Cpus(1);
  AddCounter(b);
  b.Func("main")
      .RseqAddr(2)
      .RseqArm("cs")
      .RseqUnregister(kRseqSig)
      .Label("reg").RseqRegister(kRseqSig)
      .Ld(4, Mem(2, kRseqOffRseqCs))
      .Observe("rseq_cs", 4)
      .Ret();
  b.Thread("t0", "main", 0);
  Scenario s = b.Build();
  for (KernelModel k : {k60, k418}) {
    SCOPED_TRACE(KernelModelName(k));
    ExecutionResult r = ScheduleMaker(s, k).Run();
    EXPECT_EQ(r.verdict, Verdict::kPass) << r.message;
    EXPECT_EQ(Observed(s, r, 0, "rseq_cs"), V{0});
    const auto clears = Entries(r, TraceKind::kLazyClear, 0);
    if (k == k60) {
      EXPECT_TRUE(clears.empty());
    } else {
      ASSERT_EQ(clears.size(), 1u);
      EXPECT_EQ(clears[0].pc, Pc(s, "main", "reg", 1));  // the return address of rseq_register
    }
  }
}

// ---------------------------------------------------------------------------
// Rule 4: unregistration.

TEST(KernelRules, Rule04_Unregister_EpermOnOtherSig_EinvalWhenNotRegistered) {
  ScenarioBuilder b("rule04_err");
  b.Cpus(1);
  b.Func("main")
      .RseqUnregister(kOtherSig)
      .Observe("other_sig", 0)
      .RseqAddr(2)
      .Observe("area", 2)
      .RseqUnregister(kRseqSig)
      .Observe("ok", 0)
      .RseqUnregister(kRseqSig)
      .Observe("again", 0)
      .Ret();
  b.Thread("t0", "main", 0);
  Scenario s = b.Build();
  ExecutionResult r = ScheduleMaker(s).Run();
  EXPECT_EQ(r.verdict, Verdict::kPass) << r.message;
  ExpectObserved(s, r, 0, {{"other_sig", V{kEperm}},
                           {"area", V{static_cast<int64_t>(AreaAddress(s, 0))}},
                           {"ok", V{0}},
                           {"again", V{kEinval}}});
}

// Unregistering resets cpu_id_start=0, cpu_id=-1 (and node_id/mm_cid=0 in 6.x);
// afterwards the kernel never writes the area again: neither a preemption nor
// a migration rewrites the IDs or clears an rseq_cs stored there.
TEST(KernelRules, Rule04_UnregisterResetsIds_KernelStopsWriting) {
  ScenarioBuilder b("rule04_reset");
  b.Cpus(2).Nodes(2);
  AddCounter(b);
  b.Func("main")
      .RseqAddr(2)
      .Ld32(3, Mem(2, kRseqOffCpuIdStart))
      .Observe("cpu_id_start", 3)
      .Ld32(3, Mem(2, kRseqOffNodeId))
      .Observe("node_id", 3)
      .RseqUnregister(kRseqSig)
      .Observe("unreg", 0)
      .Ld32(3, Mem(2, kRseqOffCpuIdStart))
      .Observe("cpu_id_start", 3)
      .Ld32(3, Mem(2, kRseqOffCpuId))
      .Observe("cpu_id", 3)
      .Ld32(3, Mem(2, kRseqOffNodeId))
      .Observe("node_id", 3)
      .RseqAddr(4)
      .Observe("rseq_addr", 4)
      .RseqArm("cs")  // lands in the (no longer registered) area
      .Label("probe").Nop()
      .Ld32(3, Mem(2, kRseqOffCpuIdStart))
      .Observe("cpu_id_start", 3)
      .Ld32(3, Mem(2, kRseqOffCpuId))
      .Observe("cpu_id", 3)
      .Ld(3, Mem(2, kRseqOffRseqCs))
      .Observe("rseq_cs", 3)
      .Ret();
  b.Thread("t0", "main", 1);
  Scenario s = b.Build();
  const uint32_t probe = Pc(s, "main", "probe");
  for (KernelModel k : {kCid, k60, k418}) {
    SCOPED_TRACE(KernelModelName(k));
    ScheduleMaker sm(s, k);
    sm.Preempt(0, probe).Migrate(0, probe, 0);
    ExecutionResult r = sm.Run();
    EXPECT_EQ(r.verdict, Verdict::kPass) << r.message;
    ExpectObserved(s, r, 0, {{"unreg", V{0}},
                             {"cpu_id_start", V{1, 0, 0}},
                             {"cpu_id", V{kU32Minus1, kU32Minus1}}});
    if (k == kCid) {
      EXPECT_EQ(Observed(s, r, 0, "node_id"), (V{1, 0}));  // 4.18-6.2: Rule04_UnregisterResetsNodeIdAndMmCidOnlyFrom63
    }
    // The area stays in the thread's TLS: rseq_addr still names it (as on the
    // kernel, where it is glibc's __rseq_offset from the thread pointer).
    EXPECT_EQ(Observed(s, r, 0, "rseq_addr"), V{static_cast<int64_t>(AreaAddress(s, 0))});
    EXPECT_EQ(Observed(s, r, 0, "rseq_cs"), V{static_cast<int64_t>(DescriptorAddress(s, "cs"))});
    EXPECT_EQ(r.threads[0].final_cpu, 0u);
    EXPECT_TRUE(Entries(r, TraceKind::kIdUpdate, 0).empty());
    EXPECT_TRUE(Entries(r, TraceKind::kLazyClear, 0).empty());
  }
}

// 4.18-6.2's rseq_reset_rseq_cpu_id() writes only cpu_id_start and cpu_id
// (the struct had no node_id/mm_cid); 6.3+'s rseq_reset_rseq_cpu_node_id()
// also zeroes node_id and mm_cid.
TEST(KernelRules, Rule04_UnregisterResetsNodeIdAndMmCidOnlyFrom63) {
  ScenarioBuilder b("rule04_fields");
  b.Cpus(1);
  b.Func("main")
      .RseqAddr(2)
      .Li(3, 0x55)
      .St32(Mem(2, kRseqOffNodeId), 3)
      .Li(3, 0x66)
      .St32(Mem(2, kRseqOffMmCid), 3)
      .RseqUnregister(kRseqSig)
      .Ld32(4, Mem(2, kRseqOffNodeId))
      .Observe("node_id", 4)
      .Ld32(4, Mem(2, kRseqOffMmCid))
      .Observe("mm_cid", 4)
      .Ret();
  b.Thread("t0", "main", 0);
  Scenario s = b.Build();
  for (KernelModel k : {kCid, k60, k418}) {
    SCOPED_TRACE(KernelModelName(k));
    ExecutionResult r = ScheduleMaker(s, k).Run();
    EXPECT_EQ(r.verdict, Verdict::kPass) << r.message;
    EXPECT_EQ(Observed(s, r, 0, "node_id"), V{k == kCid ? 0 : 0x55});
    EXPECT_EQ(Observed(s, r, 0, "mm_cid"), V{k == kCid ? 0 : 0x66});
  }
}

// ---------------------------------------------------------------------------
// Rule 5: membership is the half-open range [start_ip, post_commit_ip).

TEST(KernelRules, Rule05_MembershipIsHalfOpen_BeforeStartIsOutside) {
  Scenario s = CounterScenario();
  ScheduleMaker sm(s);
  sm.Preempt(0, Pc(s, "inc", "arm"));  // rseq_cs not yet stored
  ExecutionResult r = sm.Run();
  EXPECT_EQ(r.verdict, Verdict::kPass) << r.message;
  EXPECT_EQ(r.threads[0].aborts, 0u);
  EXPECT_TRUE(Entries(r, TraceKind::kAbort).empty());
  EXPECT_EQ(r.SymbolValue(s, "aborts"), 0);
  EXPECT_EQ(r.SymbolValue(s, "counter", 0), 1);
  EXPECT_EQ(Executions(r, 0, Pc(s, "inc", "commit")), 1);
}

TEST(KernelRules, Rule05_MembershipIsHalfOpen_StartInside) {
  Scenario s = CounterScenario();
  ScheduleMaker sm(s);
  sm.Preempt(0, Pc(s, "inc", "start"));
  ExecutionResult r = sm.Run();
  EXPECT_EQ(r.verdict, Verdict::kPass) << r.message;
  EXPECT_EQ(r.threads[0].aborts, 1u);
  const auto aborts = Entries(r, TraceKind::kAbort);
  ASSERT_EQ(aborts.size(), 1u);
  EXPECT_EQ(aborts[0].pc, Pc(s, "inc", "start"));
  EXPECT_EQ(aborts[0].a, Pc(s, "inc", "abort"));
  EXPECT_EQ(aborts[0].b, s.program.FindDescriptor("cs"));
  // The instruction at start_ip never ran in the aborted attempt: once, in the retry.
  EXPECT_EQ(Executions(r, 0, Pc(s, "inc", "start")), 1);
  EXPECT_EQ(r.SymbolValue(s, "aborts"), 1);
  EXPECT_EQ(r.SymbolValue(s, "counter", 0), 1);
}

TEST(KernelRules, Rule05_MembershipIsHalfOpen_CommitInside_StoreNotDone) {
  Scenario s = CounterScenario();
  ScheduleMaker sm(s);
  sm.Preempt(0, Pc(s, "inc", "commit"));
  ExecutionResult r = sm.Run();
  EXPECT_EQ(r.verdict, Verdict::kPass) << r.message;
  const auto aborts = Entries(r, TraceKind::kAbort);
  ASSERT_EQ(aborts.size(), 1u);
  EXPECT_EQ(aborts[0].pc, Pc(s, "inc", "commit"));
  EXPECT_EQ(aborts[0].a, Pc(s, "inc", "abort"));
  EXPECT_EQ(Observed(s, r, 0, "counter_at_abort"), V{0});  // the commit store did not happen
  EXPECT_EQ(Executions(r, 0, Pc(s, "inc", "commit")), 1);
  EXPECT_EQ(r.SymbolValue(s, "counter", 0), 1);
  EXPECT_EQ(r.SymbolValue(s, "aborts"), 1);
}

TEST(KernelRules, Rule05_MembershipIsHalfOpen_PostCommitOutside_LazyClear) {
  Scenario s = CounterScenario();
  ScheduleMaker sm(s);
  sm.Preempt(0, Pc(s, "inc", "post"));
  ExecutionResult r = sm.Run();
  EXPECT_EQ(r.verdict, Verdict::kPass) << r.message;
  EXPECT_EQ(r.threads[0].aborts, 0u);
  EXPECT_TRUE(Entries(r, TraceKind::kAbort).empty());
  const auto clears = Entries(r, TraceKind::kLazyClear, 0);
  ASSERT_EQ(clears.size(), 1u);
  EXPECT_EQ(clears[0].pc, Pc(s, "inc", "post"));
  EXPECT_EQ(Observed(s, r, 0, "cs_at_post"), V{0});
  EXPECT_EQ(r.SymbolValue(s, "counter", 0), 1);
}

TEST(KernelRules, Rule05_OffsetZero_EmptySectionNeverAborts) {
  ScenarioBuilder b("rule05_empty");
  b.Cpus(1).Var("data", Width::kU64, 1);
  b.Func("empty")
      .La(10, "data")
      .RseqArm("e")
      .Label("start").Ld(4, Mem(10))
      .Add(4, 4, Imm(1))
      .St(Mem(10), 4)
      .Li(0, 0)
      .Ret()
      .Sig(kRseqSig)
      .Label("abort").Li(0, -1)
      .Ret()
      .Cs("e", "start", "start", "abort");
  b.Thread("t0", "empty", 0);
  Scenario s = b.Build();
  for (KernelModel k : {k60, k418}) {
    SCOPED_TRACE(KernelModelName(k));
    ScheduleMaker sm(s, k);
    sm.Preempt(0, Pc(s, "empty", "start"));
    ExecutionResult r = sm.Run();
    EXPECT_EQ(r.verdict, Verdict::kPass) << r.message;
    EXPECT_EQ(r.threads[0].ret, 0);
    EXPECT_EQ(r.threads[0].aborts, 0u);
    const auto clears = Entries(r, TraceKind::kLazyClear, 0);
    ASSERT_EQ(clears.size(), 1u);
    EXPECT_EQ(clears[0].pc, Pc(s, "empty", "start"));
    EXPECT_EQ(r.SymbolValue(s, "data"), 1);
  }
}

// ---------------------------------------------------------------------------
// Rule 6: the abort moves IP and clears rseq_cs; nothing else changes.

TEST(KernelRules, Rule06_AbortSetsPcAndClearsRseqCs_RegistersAndEarlierStoresUnchanged) {
  ScenarioBuilder b("rule06");
  b.Cpus(1).Var("spec", Width::kU64, 1).Var("data", Width::kU64, 1, {40});
  auto& f = b.Func("main");
  f.Li(1, 0x11).Li(2, 0x22).Li(3, 0x33).Li(5, 0x55).Li(6, 0x66).La(7, "spec").La(8, "data")
      .Li(11, -7).Li(12, 0x7fffffffffffffffll).Li(13, 0x1313)
      .RseqArm("d")
      .Label("start").Li(9, 0x99)
      .St(Mem(7), 9)          // a store inside the section: stays
      .Li(6, 0x666)           // a register changed inside the section: stays
      .Ld(4, Mem(8))
      .Add(4, 4, Imm(2))
      .Label("commit").St(Mem(8), 4)
      .Label("post").Li(0, 0)
      .Ret()
      .Sig(kRseqSig)
      .Label("abort").RseqAddr(15)
      .Ld(14, Mem(15, kRseqOffRseqCs))
      .Observe("rseq_cs", 14);
  for (int reg = 0; reg <= 13; ++reg) f.Observe("r" + std::to_string(reg), reg);
  f.Li(0, -1).Ret().Cs("d", "start", "post", "abort");
  b.Thread("t0", "main", 0);
  Scenario s = b.Build();
  for (KernelModel k : {k60, k418}) {
    SCOPED_TRACE(KernelModelName(k));
    ScheduleMaker sm(s, k);
    sm.Preempt(0, Pc(s, "main", "commit"));
    ExecutionResult r = sm.Run();
    EXPECT_EQ(r.verdict, Verdict::kPass) << r.message;
    EXPECT_EQ(r.threads[0].ret, -1);
    const auto aborts = Entries(r, TraceKind::kAbort);
    ASSERT_EQ(aborts.size(), 1u);
    EXPECT_EQ(aborts[0].pc, Pc(s, "main", "commit"));
    EXPECT_EQ(aborts[0].a, Pc(s, "main", "abort"));
    EXPECT_EQ(Observed(s, r, 0, "rseq_cs"), V{0});
    const Symbol& sym_spec = s.program.symbols[s.program.FindSymbol("spec")];
    const Symbol& sym_data = s.program.symbols[s.program.FindSymbol("data")];
    const V expected = {0, 0x11, 0x22, 0x33, 42, 0x55, 0x666, static_cast<int64_t>(sym_spec.address),
                        static_cast<int64_t>(sym_data.address), 0x99, 0, -7, 0x7fffffffffffffffll, 0x1313};
    for (int reg = 0; reg <= 13; ++reg) {
      EXPECT_EQ(Observed(s, r, 0, "r" + std::to_string(reg)), V{expected[reg]}) << "r" << reg;
    }
    EXPECT_EQ(r.SymbolValue(s, "spec"), 0x99);  // the earlier store survived the abort
    EXPECT_EQ(r.SymbolValue(s, "data"), 40);    // the commit did not happen
  }
}

// ---------------------------------------------------------------------------
// Rule 7: lazy clear.

TEST(KernelRules, Rule07_LazyClear_RseqCsStaysSetAfterSuccessUntilNextEvent) {
  Scenario s = CounterScenario();
  const int64_t desc = static_cast<int64_t>(DescriptorAddress(s, "cs"));
  {
    ExecutionResult r = ScheduleMaker(s).Run();
    EXPECT_EQ(r.verdict, Verdict::kPass) << r.message;
    EXPECT_EQ(Observed(s, r, 0, "cs_at_post"), V{desc});
    EXPECT_EQ(Observed(s, r, 0, "cs_later"), V{desc});
    EXPECT_TRUE(Entries(r, TraceKind::kLazyClear).empty());
  }
  ScheduleMaker sm(s);
  sm.Preempt(0, Pc(s, "inc", "later"));
  ExecutionResult r = sm.Run();
  EXPECT_EQ(r.verdict, Verdict::kPass) << r.message;
  EXPECT_EQ(Observed(s, r, 0, "cs_at_post"), V{desc});
  EXPECT_EQ(Observed(s, r, 0, "cs_later"), V{0});
  const auto clears = Entries(r, TraceKind::kLazyClear, 0);
  ASSERT_EQ(clears.size(), 1u);
  EXPECT_EQ(clears[0].pc, Pc(s, "inc", "later"));
  EXPECT_EQ(r.threads[0].aborts, 0u);
}

// ---------------------------------------------------------------------------
// Rule 8: every trigger aborts a section it interrupts.

void ExpectOneAbortAtLoad(const Scenario& s, const ExecutionResult& r, int64_t cpu_used) {
  EXPECT_EQ(r.verdict, Verdict::kPass) << r.message;
  EXPECT_EQ(r.threads[0].aborts, 1u);
  const auto aborts = Entries(r, TraceKind::kAbort, 0);
  ASSERT_EQ(aborts.size(), 1u);
  EXPECT_EQ(aborts[0].pc, Pc(s, "inc", "load"));
  EXPECT_EQ(aborts[0].a, Pc(s, "inc", "abort"));
  EXPECT_EQ(Observed(s, r, 0, "counter_at_abort"), V{0});
  EXPECT_EQ(Observed(s, r, 0, "cpu"), V{cpu_used});
  EXPECT_EQ(r.SymbolValue(s, "aborts"), 1);
  EXPECT_EQ(r.SymbolValue(s, "counter", static_cast<uint32_t>(cpu_used)), 1);
  EXPECT_EQ(r.SymbolValue(s, "counter", static_cast<uint32_t>(1 - cpu_used)), 0);
}

TEST(KernelRules, Rule08_PreemptionAborts) {
  Scenario s = CounterScenario();
  for (KernelModel k : {k60, k418}) {
    SCOPED_TRACE(KernelModelName(k));
    ScheduleMaker sm(s, k);
    sm.Preempt(0, Pc(s, "inc", "load"));
    ExpectOneAbortAtLoad(s, sm.Run(), 0);
  }
}

TEST(KernelRules, Rule08_MigrationAborts) {
  Scenario s = CounterScenario();
  for (KernelModel k : {k60, k418}) {
    SCOPED_TRACE(KernelModelName(k));
    ScheduleMaker sm(s, k);
    sm.Migrate(0, Pc(s, "inc", "load"), 1);
    ExecutionResult r = sm.Run();
    ExpectOneAbortAtLoad(s, r, 1);
    EXPECT_EQ(r.threads[0].final_cpu, 1u);
  }
}

// `signo`, injected right before `inc`'s load, sets up a handler frame (over
// abort_ip) and aborts the section.
void ExpectSignalFrameAbortsAtLoad(const Scenario& s, int signo, KernelModel k) {
  ScheduleMaker sm(s, k);
  sm.Signal(0, Pc(s, "inc", "load"), signo);
  ExecutionResult r = sm.Run();
  ExpectOneAbortAtLoad(s, r, 0);
  const auto frames = Entries(r, TraceKind::kSignalFrame, 0);
  ASSERT_EQ(frames.size(), 1u);
  EXPECT_EQ(frames[0].a, signo);
  EXPECT_EQ(frames[0].b, Pc(s, "inc", "abort"));
}

TEST(KernelRules, Rule08_SignalWithHandlerFrameAborts) {
  Scenario s = CounterScenario();
  for (KernelModel k : {k60, k418}) {
    SCOPED_TRACE(KernelModelName(k));
    ExpectSignalFrameAbortsAtLoad(s, kSigUsr1, k);
  }
}

TEST(KernelRules, Rule08_InjectedMembarrierIpiAborts) {
  Scenario s = CounterScenario();
  ScheduleMaker sm(s);
  sm.Ipi(0, Pc(s, "inc", "load"));
  ExecutionResult r = sm.Run();
  ExpectOneAbortAtLoad(s, r, 0);
  ASSERT_EQ(Entries(r, TraceKind::kIpi).size(), 1u);
}

// membarrier(MEMBARRIER_CMD_PRIVATE_EXPEDITED_RSEQ) issued by a thread on
// CPU 1 while thread 0 is inside its section on CPU 0.
TEST(KernelRules, Rule08_MembarrierRseqSyscallFromOtherCpuAborts) {
  ScenarioBuilder b("rule08_mb");
  b.Cpus(2);
  AddCounter(b);
  b.Func("fence").MembarrierRseq(Imm(-1)).Observe("mb", 0).Ret();
  b.Thread("t0", "inc", 0).Thread("t1", "fence", 1);
  Scenario s = b.Build();
  ScheduleMaker sm(s);
  sm.RunCpu(0, Pc(s, "inc", "load"), 1);
  ExecutionResult r = sm.Run();
  ExpectOneAbortAtLoad(s, r, 0);
  EXPECT_EQ(Observed(s, r, 1, "mb"), V{0});
  const auto ipis = Entries(r, TraceKind::kIpi);
  ASSERT_EQ(ipis.size(), 1u);
  EXPECT_EQ(ipis[0].cpu, 0);
  EXPECT_EQ(ipis[0].thread, 0);
}

// sched_yield is a syscall, so legal code never yields inside a section; the
// event is the switch it causes: with another runnable thread on the CPU the
// yielding thread is switched out, and its next return to user evaluates rseq:
// the stale rseq_cs is lazily cleared and the IDs (overwritten with garbage)
// are rewritten.
TEST(KernelRules, Rule08_YieldThatSwitchesIsAnEvent) {
  ScenarioBuilder b("rule08_yield");
  b.Cpus(1);
  AddCounter(b);
  b.Func("main")
      .Call("inc")
      .RseqAddr(2)
      .Li(3, 0x1234)
      .St32(Mem(2, kRseqOffCpuIdStart), 3)
      .SchedYield()
      .Observe("yield", 0)
      .Ld32(4, Mem(2, kRseqOffCpuIdStart))
      .Observe("cpu_id_start", 4)
      .Ld(4, Mem(2, kRseqOffRseqCs))
      .Observe("rseq_cs", 4)
      .Ret();
  b.Func("other").Li(0, 7).Ret();
  b.Thread("t0", "main", 0).Thread("t1", "other", 0);
  Scenario s = b.Build();
  ExecutionResult r = ScheduleMaker(s).Run();
  EXPECT_EQ(r.verdict, Verdict::kPass) << r.message;
  ExpectObserved(s, r, 0, {{"yield", V{0}},
                           {"cpu_id_start", V{0}},
                           {"rseq_cs", V{0}}});
  ASSERT_EQ(Entries(r, TraceKind::kYield, 0).size(), 1u);
  ASSERT_EQ(Entries(r, TraceKind::kLazyClear, 0).size(), 1u);
  EXPECT_TRUE(r.threads[1].exited);
  // t1 ran (and exited) before t0 came back.
  EXPECT_LT(TraceIndex(r, TraceKind::kExit, 1), TraceIndex(r, TraceKind::kLazyClear, 0));
}

// The non-debug legacy kernel evaluates a section on the exit of a syscall
// that switched (rule 19): a yield inside a section aborts it exactly when it
// switches to another thread.
TEST(KernelRules, Rule08_YieldInsideSectionAbortsOnlyIfItSwitches) {
  for (bool other : {true, false}) {
    SCOPED_TRACE(other ? "another runnable thread" : "alone on the CPU");
    ScenarioBuilder b("rule08_yield_cs");
    b.Cpus(1).Var("data", Width::kU64, 1);
    b.Func("main")
        .La(10, "data")
        .RseqArm("y")
        .Label("start").SchedYield()
        .Ld(4, Mem(10))
        .Add(4, 4, Imm(1))
        .St(Mem(10), 4)
        .Label("post").Li(0, 0)
        .Ret()
        .Sig(kRseqSig)
        .Label("abort").Li(0, -1)
        .Ret()
        .Cs("y", "start", "post", "abort");
    b.Func("other").Ret();
    b.Thread("t0", "main", 0);
    if (other) b.Thread("t1", "other", 0);
    Scenario s = b.Build();
    ExecutionResult r = ScheduleMaker(s).Run();
    EXPECT_EQ(r.verdict, Verdict::kPass) << r.message;
    EXPECT_EQ(r.threads[0].ret, other ? -1 : 0);
    EXPECT_EQ(r.threads[0].aborts, other ? 1u : 0u);
    EXPECT_EQ(r.SymbolValue(s, "data"), other ? 0 : 1);
    if (other) {
      const auto aborts = Entries(r, TraceKind::kAbort, 0);
      ASSERT_EQ(aborts.size(), 1u);
      EXPECT_EQ(aborts[0].pc, Pc(s, "main", "start", 1));  // the syscall's return address
      EXPECT_EQ(aborts[0].a, Pc(s, "main", "abort"));
    }
  }
}

// ---------------------------------------------------------------------------
// Rule 10: non-triggers.

TEST(KernelRules, Rule10_YieldWithNoOtherRunnableThreadIsNoEvent) {
  ScenarioBuilder b("rule10_yield");
  b.Cpus(2);
  b.Func("main")
      .RseqAddr(2)
      .Li(3, 0x1234)
      .St32(Mem(2, kRseqOffCpuIdStart), 3)
      .SchedYield()
      .Observe("yield", 0)
      .Ld32(4, Mem(2, kRseqOffCpuIdStart))
      .Observe("cpu_id_start", 4)
      .Ret();
  b.Func("other").Ret();
  // t1 is runnable, but on the other CPU.
  b.Thread("t0", "main", 0).Thread("t1", "other", 1);
  Scenario s = b.Build();
  for (KernelModel k : {k60, k418}) {
    SCOPED_TRACE(KernelModelName(k));
    ExecutionResult r = ScheduleMaker(s, k).Run();
    EXPECT_EQ(r.verdict, Verdict::kPass) << r.message;
    EXPECT_EQ(Observed(s, r, 0, "yield"), V{0});
    EXPECT_EQ(Observed(s, r, 0, "cpu_id_start"), V{0x1234});
    EXPECT_TRUE(Entries(r, TraceKind::kYield).empty());
    EXPECT_TRUE(Entries(r, TraceKind::kIdUpdate, 0).empty());
  }
}

// `signo`, injected inside the section of `inc` and right before `ids`'s
// probe, changes nothing: no kill, no frame, no abort, not even an ID update
// (no notify-resume).
void ExpectInjectedSignalIsNoEvent(int signo, KernelModel k) {
  {
    Scenario s = CounterScenario();
    ScheduleMaker sm(s, k);
    sm.Signal(0, Pc(s, "inc", "load"), signo);
    ExecutionResult r = sm.Run();
    EXPECT_EQ(r.verdict, Verdict::kPass) << r.message;
    EXPECT_EQ(r.events[static_cast<int>(DecisionKind::kSignal)], 1u);
    EXPECT_EQ(r.threads[0].aborts, 0u);
    EXPECT_TRUE(r.threads[0].exited);
    EXPECT_TRUE(Entries(r, TraceKind::kKill).empty());
    EXPECT_TRUE(Entries(r, TraceKind::kSignalFrame).empty());
    EXPECT_EQ(r.SymbolValue(s, "aborts"), 0);
    EXPECT_EQ(r.SymbolValue(s, "counter", 0), 1);
  }
  Scenario s = IdsScenario();
  ScheduleMaker sm(s, k);
  sm.Signal(0, Pc(s, "ids", "probe"), signo);
  ExecutionResult r = sm.Run();
  EXPECT_EQ(r.verdict, Verdict::kPass) << r.message;
  EXPECT_EQ(Observed(s, r, 0, "cpu_id_start"), V{0x1234});
  EXPECT_EQ(Observed(s, r, 0, "mm_cid"), V{0x777});
  EXPECT_TRUE(Entries(r, TraceKind::kIdUpdate).empty());
}

TEST(KernelRules, Rule10_IgnoredSignalIsNoEvent) {
  ASSERT_NE(CounterScenario().FindSignal(kSigUsr2), nullptr);  // `signal SIGUSR2 ignore`
  for (KernelModel k : {k60, k418}) {
    SCOPED_TRACE(KernelModelName(k));
    ExpectInjectedSignalIsNoEvent(kSigUsr2, k);
  }
}

// A signal generated while blocked (its own handler is running) is no event:
// the handler's section is not aborted.
TEST(KernelRules, Rule10_BlockedSignalIsNoEvent) {
  ScenarioBuilder b("rule10_blocked");
  b.Cpus(1).Var("hcount", Width::kU64, 1).Var("haborts", Width::kU64, 1);
  b.Func("main").Label("probe").Nop().Nop().Ret();
  b.Func("h")
      .La(10, "hcount")
      .La(11, "haborts")
      .Label("retry").RseqArm("hcs")
      .Label("start").Ld(4, Mem(10))
      .Add(4, 4, Imm(1))
      .St(Mem(10), 4)
      .Label("post").Ret()
      .Sig(kRseqSig)
      .Label("abort").Ld(5, Mem(11))
      .Add(5, 5, Imm(1))
      .St(Mem(11), 5)
      .Jmp("retry")
      .Cs("hcs", "start", "post", "abort");
  b.Signal(kSigUsr1, "h");
  b.Thread("t0", "main", 0);
  Scenario s = b.Build();
  ScheduleMaker sm(s);
  sm.Signal(0, Pc(s, "main", "probe"), kSigUsr1).Signal(0, Pc(s, "h", "start", 1), kSigUsr1);
  ExecutionResult r = sm.Run();
  EXPECT_EQ(r.verdict, Verdict::kPass) << r.message;
  EXPECT_EQ(r.threads[0].aborts, 0u);
  EXPECT_EQ(r.SymbolValue(s, "haborts"), 0);
  // Delivered after the first handler's sigreturn: the handler ran twice.
  EXPECT_EQ(r.SymbolValue(s, "hcount"), 2);
  const auto frames = Entries(r, TraceKind::kSignalFrame, 0);
  ASSERT_EQ(frames.size(), 2u);
  EXPECT_EQ(frames[0].depth, 1);
  EXPECT_EQ(frames[1].depth, 1);
}

// Signals whose default action is to ignore them (SIGCHLD, SIGCONT, SIGURG,
// SIGWINCH), with no disposition declared, are discarded at generation like
// SIG_IGN'd ones (kernel/signal.c: sig_handler_ignored() is true for SIG_DFL
// when sig_kernel_ignore(sig)): no kill, no frame, no abort.
constexpr int kSigChld = 17, kSigCont = 18, kSigStop = 19, kSigTstp = 20, kSigTtin = 21, kSigTtou = 22,
              kSigUrg = 23, kSigWinch = 28, kSigQuit = 3;
constexpr int kDefaultIgnored[] = {kSigWinch, kSigChld, kSigUrg, kSigCont};

// t1 runs `inc` on CPU 1 up to its load (inside the section); then t0, on CPU
// 0, sends it `signo` with tgkill and exits; then t1 resumes. No signal has a
// disposition.
Scenario TgkillIntoSectionScenario(int signo) {
  ScenarioBuilder b("tgkill_into_section");
  b.Cpus(2);
  AddCounter(b);
  b.Func("sender").Tgkill("t1", signo).Observe("tgkill", 0).Ret();
  b.Thread("t0", "sender", 0).Thread("t1", "inc", 1);
  return b.Build();
}

ExecutionResult RunTgkillIntoSection(const Scenario& s, KernelModel k) {
  ScheduleMaker sm(s, k);
  sm.Add(0, Decision::Step(1));
  sm.RunCpu(1, Pc(s, "inc", "load"), 0);
  return sm.Run();
}

// The signal was generated for t1 (one kSignal entry) and then had no effect:
// t1 completed its section without an abort, nothing was delivered or killed.
void ExpectDiscardedTgkill(const Scenario& s, const ExecutionResult& r, int signo) {
  EXPECT_EQ(r.verdict, Verdict::kPass) << r.message;
  EXPECT_EQ(Observed(s, r, 0, "tgkill"), V{0});
  const auto gen = Entries(r, TraceKind::kSignal, 1);
  ASSERT_EQ(gen.size(), 1u);
  EXPECT_EQ(gen[0].a, signo);
  EXPECT_TRUE(Entries(r, TraceKind::kKill).empty());
  EXPECT_TRUE(Entries(r, TraceKind::kSignalFrame).empty());
  EXPECT_TRUE(Entries(r, TraceKind::kAbort).empty());
  EXPECT_EQ(r.threads[1].aborts, 0u);
  EXPECT_TRUE(r.threads[1].exited);
  EXPECT_EQ(Observed(s, r, 1, "cpu"), V{1});
  EXPECT_EQ(Observed(s, r, 1, "counter_at_abort"), V{});
  EXPECT_EQ(r.SymbolValue(s, "aborts"), 0);
  EXPECT_EQ(r.SymbolValue(s, "counter", 1), 1);
  EXPECT_EQ(r.SymbolValue(s, "counter", 0), 0);
}

TEST(KernelRules, Rule10_DefaultIgnoredSignalTgkilledIntoSectionIsNoEvent) {
  for (int signo : kDefaultIgnored) {
    SCOPED_TRACE(SignalName(signo));
    Scenario s = TgkillIntoSectionScenario(signo);
    ASSERT_EQ(s.FindSignal(signo), nullptr);
    for (KernelModel k : {k60, k418}) {
      SCOPED_TRACE(KernelModelName(k));
      ExpectDiscardedTgkill(s, RunTgkillIntoSection(s, k), signo);
    }
  }
}

TEST(KernelRules, Rule10_DefaultIgnoredSignalInjectedIntoSectionIsNoEvent) {
  for (int signo : kDefaultIgnored) {
    SCOPED_TRACE(SignalName(signo));
    ASSERT_EQ(CounterScenario().FindSignal(signo), nullptr);
    ASSERT_EQ(IdsScenario().FindSignal(signo), nullptr);
    for (KernelModel k : {k60, k418}) {
      SCOPED_TRACE(KernelModelName(k));
      ExpectInjectedSignalIsNoEvent(signo, k);
    }
  }
}

// ---------------------------------------------------------------------------
// Rule 11: migration = switch + new CPU.

TEST(KernelRules, Rule11_MigrationChangesIdsSeenByRetry) {
  Scenario s = CounterScenario();
  ScheduleMaker sm(s);
  sm.Migrate(0, Pc(s, "inc", "load", 1), 1);
  ExecutionResult r = sm.Run();
  EXPECT_EQ(r.verdict, Verdict::kPass) << r.message;
  EXPECT_EQ(r.threads[0].aborts, 1u);
  EXPECT_EQ(Observed(s, r, 0, "cpu"), V{1});
  EXPECT_EQ(r.threads[0].ret, 1);
  EXPECT_EQ(r.SymbolValue(s, "counter", 0), 0);
  EXPECT_EQ(r.SymbolValue(s, "counter", 1), 1);
  // The IDs were rewritten before the abort handler ran.
  const int64_t update = TraceIndex(r, TraceKind::kIdUpdate, 0);
  ASSERT_GE(update, 0);
  EXPECT_EQ(r.trace[update].a, 1);
}

// For every instruction of `inc`, a migration there aborts exactly when a
// preemption there does.
TEST(KernelRules, Rule11_MigrationNeverAbortsMoreThanPreemption) {
  Scenario s = CounterScenario();
  const Function& f = s.program.functions[s.program.FindFunction("inc")];
  const uint32_t abort = Pc(s, "inc", "abort");
  int compared = 0;
  for (uint32_t pc = f.first; pc < abort; ++pc) {
    SCOPED_TRACE(s.program.DescribeIndex(pc));
    if (s.program.code[pc].op == Op::kSig) continue;
    ScheduleMaker p(s), m(s);
    p.Preempt(0, pc);
    m.Migrate(0, pc, 1);
    ExecutionResult rp = p.Run(), rm = m.Run();
    EXPECT_EQ(rp.verdict, Verdict::kPass) << rp.message;
    EXPECT_EQ(rm.verdict, Verdict::kPass) << rm.message;
    EXPECT_EQ(rm.threads[0].aborts, rp.threads[0].aborts);
    EXPECT_EQ(Entries(rm, TraceKind::kAbort).size(), Entries(rp, TraceKind::kAbort).size());
    const bool inside = pc >= Pc(s, "inc", "start") && pc < Pc(s, "inc", "post");
    EXPECT_EQ(rp.threads[0].aborts, inside ? 1u : 0u);
    EXPECT_EQ(rm.SymbolValue(s, "counter", 0) + rm.SymbolValue(s, "counter", 1), 1);
    ++compared;
  }
  EXPECT_EQ(compared, 19);
}

// ---------------------------------------------------------------------------
// Rule 12: signal delivery runs the fixup before building the frame.

TEST(KernelRules, Rule12_HandlerSeesClearedRseqCs_SigreturnResumesAtAbortIp) {
  Scenario s = CounterScenario();
  for (KernelModel k : {k60, k418}) {
    SCOPED_TRACE(KernelModelName(k));
    ScheduleMaker sm(s, k);
    sm.Signal(0, Pc(s, "inc", "load"), kSigUsr1);
    ExecutionResult r = sm.Run();
    EXPECT_EQ(r.verdict, Verdict::kPass) << r.message;
    EXPECT_EQ(Observed(s, r, 0, "sig_rseq_cs"), V{0});
    EXPECT_EQ(Observed(s, r, 0, "sig_cpu_id"), V{0});
    const uint32_t abort = Pc(s, "inc", "abort");
    // The abort happens before the frame is built, at depth 0.
    const int64_t ia = TraceIndex(r, TraceKind::kAbort, 0), ifr = TraceIndex(r, TraceKind::kSignalFrame, 0);
    ASSERT_GE(ia, 0);
    ASSERT_GE(ifr, 0);
    EXPECT_LT(ia, ifr);
    EXPECT_EQ(r.trace[ia].depth, 0);
    EXPECT_EQ(r.trace[ifr].b, abort);
    EXPECT_EQ(r.trace[ifr].pc, FuncPc(s, "on_sig"));
    EXPECT_EQ(r.trace[ifr].depth, 1);
    const auto rets = Entries(r, TraceKind::kSigreturn, 0);
    ASSERT_EQ(rets.size(), 1u);
    EXPECT_EQ(rets[0].b, abort);
    // The first instruction the interrupted context runs after sigreturn is abort_ip.
    const auto after = EntriesAfter(r, TraceKind::kStep, 0, FuncPc(s, "on_sig") + 7);
    ASSERT_GE(after.size(), 2u);
    EXPECT_EQ(after[1].pc, abort);
    EXPECT_EQ(after[1].depth, 0);
    EXPECT_EQ(r.SymbolValue(s, "counter", 0), 1);
    EXPECT_EQ(r.threads[0].aborts, 1u);
  }
}

// The handler runs with the IDs of the CPU it was migrated to.
TEST(KernelRules, Rule12_HandlerRunsWithUpdatedIds) {
  Scenario s = CounterScenario();
  const uint32_t load = Pc(s, "inc", "load");
  ScheduleMaker sm(s);
  sm.Migrate(0, load, 1).Next(Decision::Signal(1, kSigUsr1));
  ExecutionResult r = sm.Run();
  EXPECT_EQ(r.verdict, Verdict::kPass) << r.message;
  ExpectObserved(s, r, 0, {{"sig_cpu_id", V{1}},
                           {"sig_cpu_id_start", V{1}},
                           {"sig_rseq_cs", V{0}}});
  EXPECT_EQ(r.threads[0].aborts, 1u);
  EXPECT_EQ(r.SymbolValue(s, "counter", 1), 1);
  const auto frames = Entries(r, TraceKind::kSignalFrame, 0);
  ASSERT_EQ(frames.size(), 1u);
  EXPECT_EQ(frames[0].cpu, 1);
  EXPECT_EQ(frames[0].b, Pc(s, "inc", "abort"));
}

// ---------------------------------------------------------------------------
// Rule 13: legacy kernels rewrite the IDs on every evaluation.

TEST(KernelRules, Rule13_IdsRewrittenAfterPreemption) {
  Scenario s = IdsScenario();
  for (KernelModel k : {kCid, k60, k418}) {
    SCOPED_TRACE(KernelModelName(k));
    ScheduleMaker sm(s, k);
    sm.Preempt(0, Pc(s, "ids", "probe"));
    ExecutionResult r = sm.Run();
    EXPECT_EQ(r.verdict, Verdict::kPass) << r.message;
    EXPECT_EQ(Observed(s, r, 0, "cpu_id_start"), V{0});
    EXPECT_EQ(Observed(s, r, 0, "cpu_id"), V{0});
    // mm_cid exists since 6.3: the 4.18-6.2 kernels leave the word alone.
    EXPECT_EQ(Observed(s, r, 0, "mm_cid"), V{k == kCid ? 0 : 0x777});
    EXPECT_EQ(Entries(r, TraceKind::kIdUpdate, 0).size(), 1u);
  }
}

// The 4.18-6.2 struct rseq has no node_id/mm_cid (offsets 20..31 are padding):
// neither the registration nor any later evaluation writes them.
TEST(KernelRules, Rule13_Legacy418_NeverWritesNodeIdOrMmCid) {
  ScenarioBuilder b("rule13_418_fields");
  b.Cpus(2).Nodes(2);
  b.Func("fields")
      .RseqAddr(2)
      .Ld32(4, Mem(2, kRseqOffNodeId))
      .Observe("node_id", 4)
      .Ld32(4, Mem(2, kRseqOffMmCid))
      .Observe("mm_cid", 4)
      .Label("probe").Nop()
      .Ld32(4, Mem(2, kRseqOffNodeId))
      .Observe("node_id", 4)
      .Ld32(4, Mem(2, kRseqOffMmCid))
      .Observe("mm_cid", 4)
      .Ret();
  b.Thread("t0", "fields", 0).Thread("t1", "fields", 1);
  Scenario s = b.Build();
  for (KernelModel k : {kCid, k60, k418}) {
    SCOPED_TRACE(KernelModelName(k));
    ScheduleMaker sm(s, k);
    sm.Add(0, Decision::Step(1));  // t1 (CPU 1, node 1) runs while t0 holds mm_cid 0
    sm.Preempt(1, Pc(s, "fields", "probe"));
    ExecutionResult r = sm.Run();
    EXPECT_EQ(r.verdict, Verdict::kPass) << r.message;
    EXPECT_EQ(Observed(s, r, 1, "node_id"), (k == kCid ? V{1, 1} : V{0, 0}));
    EXPECT_EQ(Observed(s, r, 1, "mm_cid"), (k == kCid ? V{1, 1} : V{0, 0}));
  }
}

// tools/testing/selftests/rseq/legacy_check.c: overwrite cpu_id_start with -1,
// raise(SIGUSR1) (tgkill to self): rewritten both in the handler and after it.
TEST(KernelRules, Rule13_LegacyCheck_SignalToSelfRewritesIdsInHandlerAndAfter) {
  ScenarioBuilder b("rule13_legacy_check");
  b.Cpus(2);
  b.Func("main")
      .RseqAddr(2)
      .Li(3, -1)
      .St32(Mem(2, kRseqOffCpuIdStart), 3)
      .Tgkill(Imm(0), kSigUsr1)
      .Observe("tgkill", 0)
      .Ld32(4, Mem(2, kRseqOffCpuIdStart))
      .Observe("after", 4)
      .Li(3, -1)
      .St32(Mem(2, kRseqOffCpuIdStart), 3)
      .Label("sleep").Nop()
      .Ld32(4, Mem(2, kRseqOffCpuIdStart))
      .Observe("after_sleep", 4)
      .Ret();
  AddSigHandler(b);
  b.Thread("t0", "main", 1);
  Scenario s = b.Build();
  for (KernelModel k : {k60, k418}) {
    SCOPED_TRACE(KernelModelName(k));
    ScheduleMaker sm(s, k);
    sm.Preempt(0, Pc(s, "main", "sleep"));  // the selftest's sleep: a switch away and back
    ExecutionResult r = sm.Run();
    EXPECT_EQ(r.verdict, Verdict::kPass) << r.message;
    ExpectObserved(s, r, 0, {{"tgkill", V{0}},
                             {"sig_cpu_id_start", V{1}},
                             {"after", V{1}},
                             {"after_sleep", V{1}}});
    const auto frames = Entries(r, TraceKind::kSignalFrame, 0);
    ASSERT_EQ(frames.size(), 1u);
    EXPECT_EQ(frames[0].b, FuncPc(s, "main") + 4);  // returns right after the tgkill
  }
}

// ---------------------------------------------------------------------------
// Rule 15: legacy descriptor validation on every evaluation, even with IP
// outside the section (rseq_get_rseq_cs()).

TEST(KernelRules, Rule15_VersionNotZero_SigsegvEvenOutsideSection) {
  Scenario s = SimpleSectionScenario(/*flags=*/0, /*version=*/1);
  for (KernelModel k : {k60, k418}) {
    SCOPED_TRACE(KernelModelName(k));
    {
      ExecutionResult r = ScheduleMaker(s, k).Run();  // no event: never evaluated
      EXPECT_EQ(r.verdict, Verdict::kPass) << r.message;
    }
    ScheduleMaker sm(s, k);
    sm.Preempt(0, Pc(s, "simple", "after"));
    ExecutionResult r = sm.Run();
    EXPECT_EQ(r.verdict, Verdict::kSigsegv);
    EXPECT_NE(r.message.find("version"), std::string::npos) << r.message;
    EXPECT_EQ(r.SymbolValue(s, "data"), 1);
    const auto kills = Entries(r, TraceKind::kKill);
    ASSERT_EQ(kills.size(), 1u);
    EXPECT_EQ(kills[0].a, kSigSegv);
    EXPECT_EQ(kills[0].pc, Pc(s, "simple", "after"));
  }
}

TEST(KernelRules, Rule15_AbortIpInsideSection_Sigsegv) {
  ScenarioBuilder b("rule15_abort_inside");
  b.Cpus(1).Var("data", Width::kU64, 1);
  b.Func("main")
      .La(10, "data")
      .RseqArm("d")
      .Label("start").Ld(4, Mem(10))
      .Sig(kRseqSig)
      .Label("inside").Add(4, 4, Imm(1))
      .St(Mem(10), 4)
      .Label("post").Nop()
      .Label("after").Li(0, 0)
      .Ret()
      .Cs("d", "start", "post", "inside", 0, 0, /*unchecked=*/true);
  b.Thread("t0", "main", 0);
  Scenario s = b.Build();
  for (const char* at : {"after", "inside"}) {
    SCOPED_TRACE(at);
    ScheduleMaker sm(s);
    sm.Preempt(0, Pc(s, "main", at));
    ExecutionResult r = sm.Run();
    EXPECT_EQ(r.verdict, Verdict::kSigsegv);
    EXPECT_NE(r.message.find("abort_ip lies inside"), std::string::npos) << r.message;
    EXPECT_TRUE(Entries(r, TraceKind::kAbort).empty());
  }
}

TEST(KernelRules, Rule15_BadSignature_SigsegvEvenOutsideSection) {
  Scenario s = SimpleSectionScenario(0, 0, /*sig=*/0x53053054);
  for (KernelModel k : {k60, k418}) {
    for (const char* at : {"after", "commit"}) {
      SCOPED_TRACE(std::string(KernelModelName(k)) + " at " + at);
      ScheduleMaker sm(s, k);
      sm.Preempt(0, Pc(s, "simple", at));
      ExecutionResult r = sm.Run();
      EXPECT_EQ(r.verdict, Verdict::kSigsegv);
      EXPECT_NE(r.message.find("Unexpected rseq signature 0x53053054, expecting 0x53053053"), std::string::npos)
          << r.message;
      EXPECT_TRUE(Entries(r, TraceKind::kAbort).empty());
    }
  }
}

// rseq_cs pointing to unreadable memory (EFAULT) or above TASK_SIZE (EINVAL):
// harmless until the next evaluation, then SIGSEGV although IP is outside.
TEST(KernelRules, Rule15_RseqCsPointerUnreadableOrAboveTaskSize_Sigsegv) {
  for (int64_t bad : {int64_t{0x1000}, int64_t{0x0000800000000000}}) {
    SCOPED_TRACE(bad);
    ScenarioBuilder b("rule15_ptr");
    b.Cpus(1);
    b.Func("main")
        .RseqAddr(2)
        .Li(3, bad)
        .St(Mem(2, kRseqOffRseqCs), 3)
        .Label("probe").Nop()
        .Li(0, 0)
        .Ret();
    b.Thread("t0", "main", 0);
    Scenario s = b.Build();
    {
      ExecutionResult r = ScheduleMaker(s).Run();
      EXPECT_EQ(r.verdict, Verdict::kPass) << r.message;
    }
    ScheduleMaker sm(s);
    sm.Preempt(0, Pc(s, "main", "probe"));
    ExecutionResult r = sm.Run();
    EXPECT_EQ(r.verdict, Verdict::kSigsegv);
    EXPECT_NE(r.message.find(bad == 0x1000 ? "unreadable" : "TASK_SIZE"), std::string::npos) << r.message;
  }
}

// ---------------------------------------------------------------------------
// Rule 17: the signature must equal the one registered.

TEST(KernelRules, Rule17_SignatureMustEqualRegisteredOne) {
  for (uint32_t word : {kOtherSig, kRseqSig}) {
    SCOPED_TRACE(word);
    ScenarioBuilder b("rule17");
    b.Cpus(1).Var("data", Width::kU64, 1);
    b.Func("main")
        .RseqUnregister(kRseqSig)
        .Observe("unreg", 0)
        .RseqRegister(kOtherSig)
        .Observe("reg", 0)
        .La(10, "data")
        .Label("retry").RseqArm("d")
        .Label("start").Ld(4, Mem(10))
        .Add(4, 4, Imm(1))
        .St(Mem(10), 4)
        .Label("post").Li(0, 0)
        .Ret()
        .Sig(word)
        .Label("abort").Jmp("retry")
        .Cs("d", "start", "post", "abort");
    b.Thread("t0", "main", 0);
    Scenario s = b.Build();
    ScheduleMaker sm(s);
    sm.Preempt(0, Pc(s, "main", "start"));
    ExecutionResult r = sm.Run();
    EXPECT_EQ(Observed(s, r, 0, "unreg"), V{0});
    EXPECT_EQ(Observed(s, r, 0, "reg"), V{0});
    if (word == kOtherSig) {
      EXPECT_EQ(r.verdict, Verdict::kPass) << r.message;
      EXPECT_EQ(r.threads[0].aborts, 1u);
      EXPECT_EQ(r.SymbolValue(s, "data"), 1);
    } else {
      EXPECT_EQ(r.verdict, Verdict::kSigsegv);
      EXPECT_NE(r.message.find("Unexpected rseq signature 0x53053053, expecting 0x12345678"), std::string::npos)
          << r.message;
    }
  }
}

// ---------------------------------------------------------------------------
// Rule 18: RSEQ_CS_FLAG_NO_RESTART_ON_* flags.

TEST(KernelRules, Rule18_Legacy60_DescriptorFlagsKillInsideOnly) {
  for (uint32_t flag : {kRseqCsFlagNoRestartOnPreempt, kRseqCsFlagNoRestartOnSignal, kRseqCsFlagNoRestartOnMigrate,
                        8u}) {
    SCOPED_TRACE(flag);
    Scenario s = SimpleSectionScenario(flag);
    {
      ScheduleMaker sm(s, k60);
      sm.Preempt(0, Pc(s, "simple", "commit"));
      ExecutionResult r = sm.Run();
      EXPECT_EQ(r.verdict, Verdict::kSigsegv);
      EXPECT_NE(r.message.find("flags"), std::string::npos) << r.message;
      EXPECT_EQ(r.SymbolValue(s, "data"), 0);
    }
    ScheduleMaker sm(s, k60);
    sm.Preempt(0, Pc(s, "simple", "post"));
    ExecutionResult r = sm.Run();
    EXPECT_EQ(r.verdict, Verdict::kPass) << r.message;
    EXPECT_EQ(Entries(r, TraceKind::kLazyClear).size(), 1u);
    EXPECT_EQ(r.SymbolValue(s, "data"), 1);
  }
}

// The thread's rseq->flags word is checked too (rseq_need_restart()).
TEST(KernelRules, Rule18_Legacy60_ThreadFlagsKillInsideOnly) {
  ScenarioBuilder b("rule18_thread_flags");
  b.Cpus(1).Var("data", Width::kU64, 1);
  b.Func("main")
      .RseqAddr(2)
      .Li(3, kRseqCsFlagNoRestartOnPreempt)
      .St32(Mem(2, kRseqOffFlags), 3)
      .La(10, "data")
      .RseqArm("d")
      .Label("start").Ld(4, Mem(10))
      .Add(4, 4, Imm(1))
      .St(Mem(10), 4)
      .Label("post").Li(0, 0)
      .Ret()
      .Sig(kRseqSig)
      .Label("abort").Li(0, -1)
      .Ret()
      .Cs("d", "start", "post", "abort");
  b.Thread("t0", "main", 0);
  Scenario s = b.Build();
  {
    ScheduleMaker sm(s, k60);
    sm.Preempt(0, Pc(s, "main", "start"));
    EXPECT_EQ(sm.Run().verdict, Verdict::kSigsegv);
  }
  ScheduleMaker sm(s, k60);
  sm.Preempt(0, Pc(s, "main", "post"));
  EXPECT_EQ(sm.Run().verdict, Verdict::kPass);
  // 4.18 honours it: the preemption does not restart.
  ScheduleMaker old(s, k418);
  old.Preempt(0, Pc(s, "main", "start"));
  ExecutionResult r = old.Run();
  EXPECT_EQ(r.verdict, Verdict::kPass) << r.message;
  EXPECT_EQ(r.threads[0].ret, 0);
  EXPECT_EQ(r.threads[0].aborts, 0u);
}

TEST(KernelRules, Rule18_Legacy418_NoRestartOnPreemptSuppressesPreemptNotSignalNorMigrate) {
  Scenario s = SimpleSectionScenario(kRseqCsFlagNoRestartOnPreempt);
  const uint32_t commit = Pc(s, "simple", "commit");
  {
    ScheduleMaker sm(s, k418);
    sm.Preempt(0, commit);
    ExecutionResult r = sm.Run();
    EXPECT_EQ(r.verdict, Verdict::kPass) << r.message;
    EXPECT_EQ(r.threads[0].ret, 0);
    EXPECT_EQ(r.threads[0].aborts, 0u);
    EXPECT_EQ(r.SymbolValue(s, "data"), 1);
    EXPECT_EQ(Entries(r, TraceKind::kIdUpdate, 0).size(), 1u);  // evaluated, IDs written, no restart
  }
  {
    ScheduleMaker sm(s, k418);
    sm.Signal(0, commit, kSigUsr1);
    ExecutionResult r = sm.Run();
    EXPECT_EQ(r.verdict, Verdict::kPass) << r.message;
    EXPECT_EQ(r.threads[0].ret, -1);
    EXPECT_EQ(r.threads[0].aborts, 1u);
    EXPECT_EQ(r.SymbolValue(s, "data"), 0);
  }
  ScheduleMaker sm(s, k418);
  sm.Migrate(0, commit, 1);
  ExecutionResult r = sm.Run();
  EXPECT_EQ(r.verdict, Verdict::kPass) << r.message;
  EXPECT_EQ(r.threads[0].ret, -1);
  EXPECT_EQ(r.threads[0].aborts, 1u);
}

TEST(KernelRules, Rule18_Legacy418_NoRestartOnSignalWithoutOthersIsSigsegv) {
  Scenario s = SimpleSectionScenario(kRseqCsFlagNoRestartOnSignal);
  {
    ScheduleMaker sm(s, k418);
    sm.Preempt(0, Pc(s, "simple", "commit"));
    ExecutionResult r = sm.Run();
    EXPECT_EQ(r.verdict, Verdict::kSigsegv);
    EXPECT_NE(r.message.find("NO_RESTART_ON_SIGNAL"), std::string::npos) << r.message;
  }
  // Outside the section the flags are not looked at.
  ScheduleMaker sm(s, k418);
  sm.Preempt(0, Pc(s, "simple", "post"));
  EXPECT_EQ(sm.Run().verdict, Verdict::kPass);
  // With all three bits the signal does not restart either: the frame saves the
  // interrupted IP inside the section and the commit completes after sigreturn.
  Scenario all = SimpleSectionScenario(kRseqCsFlagNoRestartOnPreempt | kRseqCsFlagNoRestartOnSignal |
                                       kRseqCsFlagNoRestartOnMigrate);
  ScheduleMaker sa(all, k418);
  sa.Signal(0, Pc(all, "simple", "commit"), kSigUsr1);
  ExecutionResult r = sa.Run();
  EXPECT_EQ(r.verdict, Verdict::kPass) << r.message;
  EXPECT_EQ(r.threads[0].ret, 0);
  EXPECT_EQ(r.threads[0].aborts, 0u);
  const auto frames = Entries(r, TraceKind::kSignalFrame, 0);
  ASSERT_EQ(frames.size(), 1u);
  EXPECT_EQ(frames[0].b, Pc(all, "simple", "commit"));
}

// 4.18 clears the event mask only when it evaluates with IP inside a section
// (rseq_need_restart()): a signal taken outside leaves its SIGNAL bit, so a
// later preemption inside a NO_RESTART_ON_PREEMPT section still restarts.
TEST(KernelRules, Rule18_Legacy418_StaleSignalEventDefeatsNoRestartOnPreempt) {
  ScenarioBuilder b("rule18_stale_event");
  b.Cpus(1).Var("data", Width::kU64, 1);
  b.Func("main")
      .La(10, "data")
      .Label("outside").Nop()
      .RseqArm("d")
      .Label("start").Ld(4, Mem(10))
      .Add(4, 4, Imm(1))
      .Label("commit").St(Mem(10), 4)
      .Label("post").Li(0, 0)
      .Ret()
      .Sig(kRseqSig)
      .Label("abort").Li(0, -1)
      .Ret()
      .Cs("d", "start", "post", "abort", kRseqCsFlagNoRestartOnPreempt);
  AddSigHandler(b);
  b.Thread("t0", "main", 0);
  Scenario s = b.Build();
  {
    ScheduleMaker sm(s, k418);
    sm.Preempt(0, Pc(s, "main", "commit"));
    ExecutionResult r = sm.Run();
    EXPECT_EQ(r.threads[0].ret, 0);
  }
  ScheduleMaker sm(s, k418);
  sm.Signal(0, Pc(s, "main", "outside"), kSigUsr1).Preempt(0, Pc(s, "main", "commit"));
  ExecutionResult r = sm.Run();
  EXPECT_EQ(r.verdict, Verdict::kPass) << r.message;
  EXPECT_EQ(r.threads[0].ret, -1);
  EXPECT_EQ(r.threads[0].aborts, 1u);
  EXPECT_EQ(r.SymbolValue(s, "data"), 0);
}

// ---------------------------------------------------------------------------
// Rule 21: the op is done iff the commit store executed.

TEST(KernelRules, Rule21_PreemptionRightAfterCommitDoesNotAbort_OpCompletesOnce) {
  Scenario s = CounterScenario();
  for (KernelModel k : {k60, k418}) {
    SCOPED_TRACE(KernelModelName(k));
    ScheduleMaker sm(s, k);
    sm.Preempt(0, Pc(s, "inc", "post"));
    ExecutionResult r = sm.Run();
    EXPECT_EQ(r.verdict, Verdict::kPass) << r.message;
    EXPECT_EQ(r.threads[0].aborts, 0u);
    EXPECT_EQ(r.SymbolValue(s, "aborts"), 0);
    EXPECT_EQ(Executions(r, 0, Pc(s, "inc", "commit")), 1);
    EXPECT_EQ(Executions(r, 0, Pc(s, "inc", "retry")), 1);
    EXPECT_EQ(r.SymbolValue(s, "counter", 0), 1);
    EXPECT_EQ(r.SymbolValue(s, "counter", 1), 0);
  }
}

// ---------------------------------------------------------------------------
// Rule 22: a migration between the cpu_id_start read and start_ip is caught
// by the CPU compare at start_ip (no kernel abort: the section was not armed
// or not entered yet).

TEST(KernelRules, Rule22_MigrationBeforeStartFailsCpuCompare_OneAbortPath) {
  Scenario s = CounterScenario();
  const uint32_t read = Pc(s, "inc", "retry");
  for (uint32_t pc = read + 1; pc <= Pc(s, "inc", "arm"); ++pc) {
    SCOPED_TRACE(s.program.DescribeIndex(pc));
    ScheduleMaker sm(s);
    sm.Migrate(0, pc, 1);
    ExecutionResult r = sm.Run();
    EXPECT_EQ(r.verdict, Verdict::kPass) << r.message;
    EXPECT_EQ(r.threads[0].aborts, 0u);  // no kernel abort...
    EXPECT_TRUE(Entries(r, TraceKind::kAbort).empty());
    EXPECT_EQ(r.SymbolValue(s, "aborts"), 1);  // ...but exactly one pass through the abort path
    EXPECT_EQ(Executions(r, 0, Pc(s, "inc", "abort")), 1);
    EXPECT_EQ(Observed(s, r, 0, "counter_at_abort"), V{0});
    EXPECT_EQ(Observed(s, r, 0, "cpu"), V{1});
    EXPECT_EQ(r.SymbolValue(s, "counter", 0), 0);
    EXPECT_EQ(r.SymbolValue(s, "counter", 1), 1);
  }
  // Before the read: the thread simply reads the new CPU.
  ScheduleMaker sm(s);
  sm.Migrate(0, read, 1);
  ExecutionResult r = sm.Run();
  EXPECT_EQ(r.SymbolValue(s, "aborts"), 0);
  EXPECT_EQ(Observed(s, r, 0, "cpu"), V{1});
}

// ---------------------------------------------------------------------------
// Rule 23: mm_cid.

Scenario MmCidScenario() {
  ScenarioBuilder b("rule23");
  b.Cpus(2);
  b.Func("cid")
      .RseqLoad(1, RseqField::kMmCid)
      .Observe("mm_cid", 1)
      .Label("probe").Nop()
      .RseqLoad(1, RseqField::kMmCid)
      .Observe("mm_cid", 1)
      .RseqLoad(1, RseqField::kCpuId)
      .Observe("cpu_id", 1)
      .Ret();
  b.Thread("t0", "cid", 0).Thread("t1", "cid", 1);
  return b.Build();
}

TEST(KernelRules, Rule23_ConcurrentlyRunningThreadsHaveDistinctMmCid) {
  Scenario s = MmCidScenario();
  ScheduleMaker sm(s);
  // Both threads read mm_cid while both run: t0 reads, then t1 runs to the end, then t0.
  sm.RunCpu(0, Pc(s, "cid", "probe"), 1);
  ExecutionResult r = sm.Run();
  EXPECT_EQ(r.verdict, Verdict::kPass) << r.message;
  EXPECT_EQ(Observed(s, r, 0, "mm_cid"), (V{0, 0}));
  EXPECT_EQ(Observed(s, r, 1, "mm_cid"), (V{1, 1}));
}

// A switch without migration keeps the CPU's mm_cid on 6.4-6.18 (pcpu_cid,
// lazy put; review finding F9): t0 exits (cid 0 is free), then t1 is
// switched out and back in on CPU 1 and still gets CPU 1's cid 1. Under 6.3's
// allocator (the 6.19 model's) it gets the lowest free cid, 0.
TEST(KernelRules, Rule23_MmCidKeptByTheCpuOnSwitchWithoutMigration) {
  Scenario s = MmCidScenario();
  for (const auto& [k, want] : {std::pair{KernelModel::kMmCid, V{1, 1}}, std::pair{KernelModel::k619, V{1, 0}}}) {
    SCOPED_TRACE(KernelModelName(k));
    ScheduleMaker sm(s, k);
    sm.Preempt(1, Pc(s, "cid", "probe"));
    ExecutionResult r = sm.Run();
    EXPECT_EQ(r.verdict, Verdict::kPass) << r.message;
    EXPECT_LT(TraceIndex(r, TraceKind::kExit, 0), TraceIndex(r, TraceKind::kPreempt, 1));
    EXPECT_EQ(Observed(s, r, 1, "mm_cid"), want);
    EXPECT_EQ(Observed(s, r, 1, "cpu_id"), V{1});
    EXPECT_TRUE(Entries(r, TraceKind::kMigrate).empty());
  }
}

// Invariant at every boundary of a schedule with preemptions and migrations:
// the running threads hold distinct mm_cids in [0, nr_cpus).
TEST(KernelRules, Rule23_MmCidUniqueAmongRunningThreadsAtEveryBoundary) {
  ScenarioBuilder b("rule23_many");
  b.Cpus(2);
  AddCounter(b);
  for (int t = 0; t < 4; ++t) b.Thread("t" + std::to_string(t), "inc", t % 2);
  Scenario s = b.Build();
  ScheduleMaker sm(s);
  const uint32_t load = Pc(s, "inc", "load"), later = Pc(s, "inc", "later");
  // t0 is preempted (t2 runs on CPU 0), CPU 1 runs t1, which migrates to CPU 0
  // (t3 runs on CPU 1) as t3 does later; then t2 is preempted after its commit.
  sm.Preempt(0, load).RunCpu(2, load, 1).Migrate(1, load, 0).Migrate(3, load, 0).Preempt(2, later);
  class Checker : public Scheduler {
   public:
    explicit Checker(const Schedule& s) : inner_(s) {}
    void BeginExecution(const Machine& m) override { inner_.BeginExecution(m); }
    Decision Choose(const ChoiceView& v) override {
      const Machine& m = v.machine();
      uint64_t used = 0;
      for (int c = 0; c < m.num_cpus(); ++c) {
        const int t = m.cpu(c).running;
        if (t < 0) continue;
        const int32_t cid = m.thread(t).mm_cid;
        EXPECT_GE(cid, 0);
        EXPECT_LT(cid, m.num_cpus());
        EXPECT_EQ((used >> cid) & 1, 0u) << "mm_cid " << cid << " held twice at step " << v.Steps();
        used |= 1ull << cid;
      }
      ++checked;
      return inner_.Choose(v);
    }
    int checked = 0;

   private:
    ReplayScheduler inner_;
  };
  Checker checker(sm.schedule());
  RunOptions o;
  Simulator sim(s, o);
  ExecutionResult r = sim.Run(checker);
  EXPECT_EQ(r.verdict, Verdict::kPass) << r.message;
  EXPECT_EQ(r.events[static_cast<int>(DecisionKind::kMigrate)], 2u);
  EXPECT_GT(checker.checked, 50);
  EXPECT_EQ(r.SymbolValue(s, "counter", 0) + r.SymbolValue(s, "counter", 1), 4);
}

// ---------------------------------------------------------------------------
// Rule 24: membarrier RSEQ aborts the sections of the running threads.

// Threads t0 (CPU 0) and t1 (CPU 1) are inside their sections; t2 on CPU 2
// overwrites its cpu_id_start, calls membarrier RSEQ for `target`, records the
// result and its cpu_id_start.
Scenario MembarrierScenario(int64_t target) {
  ScenarioBuilder b("rule24");
  b.Cpus(3);
  AddCounter(b);
  b.Func("fence")
      .RseqAddr(2)
      .Li(3, 0x1234)
      .St32(Mem(2, kRseqOffCpuIdStart), 3)
      .MembarrierRseq(Imm(target))
      .Observe("mb", 0)
      .Ld32(4, Mem(2, kRseqOffCpuIdStart))
      .Observe("cpu_id_start", 4)
      .Ret();
  b.Thread("t0", "inc", 0).Thread("t1", "inc", 1).Thread("t2", "fence", 2);
  return b.Build();
}

ExecutionResult RunMembarrier(const Scenario& s) {
  ScheduleMaker sm(s);
  const uint32_t load = Pc(s, "inc", "load");
  sm.RunCpu(0, load, 1).RunCpu(1, load, 2);
  return sm.Run();
}

TEST(KernelRules, Rule24_MembarrierTargetingOneCpuAbortsOnlyThatThread) {
  Scenario s = MembarrierScenario(1);
  ExecutionResult r = RunMembarrier(s);
  EXPECT_EQ(r.verdict, Verdict::kPass) << r.message;
  EXPECT_EQ(Observed(s, r, 2, "mb"), V{0});
  EXPECT_EQ(r.threads[0].aborts, 0u);
  EXPECT_EQ(r.threads[1].aborts, 1u);
  const auto ipis = Entries(r, TraceKind::kIpi);
  ASSERT_EQ(ipis.size(), 1u);
  EXPECT_EQ(ipis[0].cpu, 1);
  EXPECT_EQ(ipis[0].thread, 1);
  EXPECT_EQ(Observed(s, r, 2, "cpu_id_start"), V{0x1234});
  EXPECT_EQ(r.SymbolValue(s, "counter", 0), 1);
  EXPECT_EQ(r.SymbolValue(s, "counter", 1), 1);
}

TEST(KernelRules, Rule24_MembarrierAllCpusAbortsOthersButNotCaller) {
  Scenario s = MembarrierScenario(-1);
  ExecutionResult r = RunMembarrier(s);
  EXPECT_EQ(r.verdict, Verdict::kPass) << r.message;
  EXPECT_EQ(Observed(s, r, 2, "mb"), V{0});
  EXPECT_EQ(r.threads[0].aborts, 1u);
  EXPECT_EQ(r.threads[1].aborts, 1u);
  const auto ipis = Entries(r, TraceKind::kIpi);
  ASSERT_EQ(ipis.size(), 2u);
  EXPECT_EQ(ipis[0].thread, 0);
  EXPECT_EQ(ipis[1].thread, 1);
  // The caller got no IPI: no evaluation, its garbage cpu_id_start survives.
  EXPECT_EQ(Observed(s, r, 2, "cpu_id_start"), V{0x1234});
}

// smp_call_function_single() runs ipi_rseq() on the caller's own CPU too.
TEST(KernelRules, Rule24_MembarrierNamingOwnCpuInterruptsCaller) {
  Scenario s = MembarrierScenario(2);
  ExecutionResult r = RunMembarrier(s);
  EXPECT_EQ(r.verdict, Verdict::kPass) << r.message;
  EXPECT_EQ(r.threads[0].aborts, 0u);
  EXPECT_EQ(r.threads[1].aborts, 0u);
  EXPECT_EQ(Observed(s, r, 2, "cpu_id_start"), V{2});
}

// membarrier_private_expedited(): a cpu_id >= nr_cpu_ids "goto out" and
// returns 0 without any IPI (kernel/sched/membarrier.c).
TEST(KernelRules, Rule24_MembarrierCpuOutOfRangeReturnsZeroWithoutIpi) {
  Scenario s = MembarrierScenario(5);
  ExecutionResult r = RunMembarrier(s);
  EXPECT_EQ(r.verdict, Verdict::kPass) << r.message;
  EXPECT_EQ(Observed(s, r, 2, "mb"), V{0});
  EXPECT_TRUE(Entries(r, TraceKind::kIpi).empty());
  EXPECT_EQ(r.threads[0].aborts, 0u);
  EXPECT_EQ(r.threads[1].aborts, 0u);
}

// membarrier_private_expedited() returns 0 before sending any IPI when
// mm_users == 1 (a single-threaded process) or only one CPU is online - of
// the machine (num_online_cpus()), not of the scenario: two threads on a
// 1-CPU scenario are still interrupted (the caller itself, naming its CPU),
// as the real kernel shows (Crosscheck.MembarrierOnItsOwnCpuRewritesTheIdsOfAOneCpuScenario).
TEST(KernelRules, Rule24_MembarrierIsNoOpForSingleThreadNotForOneScenarioCpu) {
  for (uint32_t cpus : {1u, 2u}) {
    SCOPED_TRACE(cpus);
    ScenarioBuilder b("rule24_single");
    b.Cpus(cpus);
    b.Func("fence")
        .RseqAddr(2)
        .Li(3, 0x1234)
        .St32(Mem(2, kRseqOffCpuIdStart), 3)
        .MembarrierRseq(Imm(0))
        .Observe("mb", 0)
        .Ld32(4, Mem(2, kRseqOffCpuIdStart))
        .Observe("cpu_id_start", 4)
        .Ret();
    b.Func("other").Ret();
    b.Thread("t0", "fence", 0);
    if (cpus == 1) b.Thread("t1", "other", 0);  // 2 threads, 1 CPU
    Scenario s = b.Build();
    ExecutionResult r = ScheduleMaker(s).Run();
    EXPECT_EQ(r.verdict, Verdict::kPass) << r.message;
    EXPECT_EQ(Observed(s, r, 0, "mb"), V{0});
    if (cpus == 2) {  // one thread: mm_users == 1
      EXPECT_TRUE(Entries(r, TraceKind::kIpi).empty());
      EXPECT_EQ(Observed(s, r, 0, "cpu_id_start"), V{0x1234});
    } else {  // ipi_rseq() on the caller's CPU: IDs rewritten at the syscall's exit
      EXPECT_EQ(Entries(r, TraceKind::kIpi).size(), 1u);
      EXPECT_EQ(Observed(s, r, 0, "cpu_id_start"), V{0});
    }
  }
}

// ---------------------------------------------------------------------------
// Rule 25: signal handlers are nested contexts with their own sections.

// Main runs `inc`; the SIGUSR1 handler `h` runs its own section on `hcount`
// (abort handler counts in `haborts` and retries); SIGUSR2's handler `h2` just
// returns.
Scenario NestedScenario(bool nodefer = false) {
  ScenarioBuilder b("rule25");
  b.Cpus(2).Var("hcount", Width::kU64, 1).Var("haborts", Width::kU64, 1);
  AddCounter(b);
  b.Func("h")
      .La(10, "hcount")
      .La(11, "haborts")
      .Label("retry").RseqArm("hcs")
      .Label("start").Ld(4, Mem(10))
      .Add(4, 4, Imm(1))
      .Label("commit").St(Mem(10), 4)
      .Label("post").Ret()
      .Sig(kRseqSig)
      .Label("abort").Ld(5, Mem(11))
      .Add(5, 5, Imm(1))
      .St(Mem(11), 5)
      .Jmp("retry")
      .Cs("hcs", "start", "post", "abort");
  b.Func("h2").Ret();
  b.Signal(kSigUsr1, "h", nodefer).Signal(kSigUsr2, "h2");
  b.Thread("t0", "inc", 0);
  return b.Build();
}

void ExpectNestedOutcome(const Scenario& s, const ExecutionResult& r) {
  EXPECT_EQ(r.verdict, Verdict::kPass) << r.message;
  const auto aborts = Entries(r, TraceKind::kAbort, 0);
  ASSERT_EQ(aborts.size(), 2u);
  EXPECT_EQ(aborts[0].pc, Pc(s, "inc", "load"));
  EXPECT_EQ(aborts[0].a, Pc(s, "inc", "abort"));
  EXPECT_EQ(aborts[0].depth, 0);
  EXPECT_EQ(aborts[1].pc, Pc(s, "h", "commit"));
  EXPECT_EQ(aborts[1].a, Pc(s, "h", "abort"));
  EXPECT_EQ(aborts[1].b, s.program.FindDescriptor("hcs"));
  EXPECT_EQ(aborts[1].depth, 1);
  EXPECT_EQ(r.threads[0].aborts, 2u);
  EXPECT_EQ(r.SymbolValue(s, "hcount"), 1);
  EXPECT_EQ(r.SymbolValue(s, "haborts"), 1);
  EXPECT_EQ(r.SymbolValue(s, "counter", 0), 1);
  EXPECT_EQ(r.SymbolValue(s, "aborts"), 1);
  // The main context resumed at its own abort_ip.
  const auto rets = Entries(r, TraceKind::kSigreturn, 0);
  ASSERT_FALSE(rets.empty());
  EXPECT_EQ(rets.back().b, Pc(s, "inc", "abort"));
  EXPECT_EQ(rets.back().depth, 0);
}

TEST(KernelRules, Rule25_HandlerSectionAbortedByNestedSignal_MainResumesAtItsAbortIp) {
  Scenario s = NestedScenario();
  ScheduleMaker sm(s);
  sm.Signal(0, Pc(s, "inc", "load"), kSigUsr1).Signal(0, Pc(s, "h", "commit"), kSigUsr2);
  ExecutionResult r = sm.Run();
  ExpectNestedOutcome(s, r);
  const auto frames = Entries(r, TraceKind::kSignalFrame, 0);
  ASSERT_EQ(frames.size(), 2u);
  EXPECT_EQ(frames[0].a, kSigUsr1);
  EXPECT_EQ(frames[0].b, Pc(s, "inc", "abort"));
  EXPECT_EQ(frames[1].a, kSigUsr2);
  EXPECT_EQ(frames[1].b, Pc(s, "h", "abort"));
  EXPECT_EQ(frames[1].depth, 2);
}

TEST(KernelRules, Rule25_HandlerSectionAbortedByPreemption_MainResumesAtItsAbortIp) {
  Scenario s = NestedScenario();
  ScheduleMaker sm(s);
  sm.Signal(0, Pc(s, "inc", "load"), kSigUsr1).Preempt(0, Pc(s, "h", "commit"));
  ExecutionResult r = sm.Run();
  ExpectNestedOutcome(s, r);
  EXPECT_EQ(Entries(r, TraceKind::kSignalFrame, 0).size(), 1u);
}

// ---------------------------------------------------------------------------
// Rule 26 (as modelled): the results table of reference/inject-prototype.md,
// "Results table (3): what the real kernel did" (6.18.44, x86-64). The
// prototype's `rseq_inc` (cs.S) as IR, one instruction per label; `main` is
// the tracee's `tracee_case` (call until the return is >= 0); `on_usr1` is its
// SIGUSR1 handler. A ptrace stop at label k is a preemption at the boundary
// before k; "migrate" is the stop plus an affinity change to CPU 1 (a
// migration at that boundary); "signal" is PTRACE_CONT(SIGUSR1) after the
// stop (a preemption, then the signal at the same boundary); "tgkill" is the
// stop, then a tgkill from another thread on CPU 1.

Scenario PrototypeScenario(bool with_killer) {
  ScenarioBuilder b(with_killer ? "proto_tgkill" : "proto");
  b.Cpus(2).Var("counters", Width::kU64, 2).Var("abort_count", Width::kU64, 1).Var("sigs", Width::kU64, 1);
  // int rseq_inc(long *counters /* r10 */, long *abort_count /* r11 */), r12 = 1.
  b.Func("rseq_inc")
      .Label("L_arm0").Nop()                    // lea rseq_inc_cs(%rip),%rax
      .Label("L_arm").RseqArm("rseq_inc_cs")    // mov %rax,%fs:0x8(%r8)
      .Label("L_start").RseqLoad(1, RseqField::kCpuId)
      .Label("L_load").Ld(2, Mem(10, 1, 8))
      .Label("L_add").Add(2, 2, Imm(1))
      .Label("L_commit").St(Mem(10, 1, 8), 2)
      .Label("L_post").Mov(0, 1)
      .Label("L_ret").Ret()
      .Sig(kRseqSig)
      .Label("L_abort").Xadd(3, Mem(11), 12)   // addq $0x1,(%rsi)
      .Label("L_abort1").Li(0, -1)
      .Label("L_abort2").Ret()
      .Cs("rseq_inc_cs", "L_start", "L_post", "L_abort");
  b.Func("main")
      .La(10, "counters")
      .La(11, "abort_count")
      .Li(12, 1)
      .RseqLoad(5, RseqField::kCpuId)
      .Observe("cpu_before", 5)
      .Li(13, 0)
      .Label("loop").Add(13, 13, Imm(1))
      .Call("rseq_inc")
      .Observe("ret", 0)
      .Blt(0, Imm(0), "loop")
      .Observe("calls", 13)
      .RseqLoad(5, RseqField::kCpuId)
      .Observe("cpu_after", 5)
      .Ret();
  b.Func("on_usr1")
      .RseqAddr(2)
      .Ld(3, Mem(2, kRseqOffRseqCs))
      .Observe("sig_rseq_cs", 3)
      .RseqLoad(4, RseqField::kCpuId)
      .Observe("sig_cpu_id", 4)
      .La(5, "sigs")
      .Ld(6, Mem(5))
      .Add(6, 6, Imm(1))
      .St(Mem(5), 6)
      .Ret();
  b.Signal(kSigUsr1, "on_usr1");
  b.Thread("tracee", "main", 0);
  if (with_killer) b.Func("killer").Tgkill("tracee", kSigUsr1).Ret(), b.Thread("tracer", "killer", 1);
  return b.Build();
}

struct ProtoRow {
  const char* label;  // k
  bool aborts;        // the real kernel aborted in this row (every column)
};
// k = -1 .. 5.
constexpr ProtoRow kProtoRows[] = {{"L_arm", false},   {"L_start", true}, {"L_load", true}, {"L_add", true},
                                   {"L_commit", true}, {"L_post", false}, {"L_ret", false}};

// One cell: exactly one increment, on CPU `counted`; the first call returns -1
// in exactly the abort cells and the second succeeds; the abort counter is
// exactly 1 in those cells; the kernel's abort moved IP from k to L_abort.
void ExpectProtoCell(const Scenario& s, const ExecutionResult& r, const ProtoRow& row, int counted,
                     int cpu_after) {
  const uint32_t k = Pc(s, "rseq_inc", row.label);
  EXPECT_EQ(r.verdict, Verdict::kPass) << r.message;
  ExpectObserved(s, r, 0, {{"cpu_before", V{0}},
                           {"ret", row.aborts ? (V{-1, counted}) : V{counted}},
                           {"calls", V{row.aborts ? 2 : 1}}});
  EXPECT_EQ(r.SymbolValue(s, "abort_count"), row.aborts ? 1 : 0);
  EXPECT_EQ(r.SymbolValue(s, "counters", 0, 0), counted == 0 ? 1 : 0);
  EXPECT_EQ(r.SymbolValue(s, "counters", 0, 1), counted == 1 ? 1 : 0);
  EXPECT_EQ(Observed(s, r, 0, "cpu_after"), V{cpu_after});
  EXPECT_EQ(r.threads[0].aborts, row.aborts ? 1u : 0u);
  const auto aborts = Entries(r, TraceKind::kAbort, 0);
  ASSERT_EQ(aborts.size(), row.aborts ? 1u : 0u);
  if (row.aborts) {
    EXPECT_EQ(aborts[0].pc, k);
    EXPECT_EQ(aborts[0].a, Pc(s, "rseq_inc", "L_abort"));
    EXPECT_EQ(aborts[0].b, s.program.FindDescriptor("rseq_inc_cs"));
    EXPECT_EQ(Executions(r, 0, k), 1);  // only in the retry: k never ran in the aborted call
  }
  // At k = 4, 5 rseq_cs still pointed to the descriptor; the evaluation on
  // resume cleared it lazily.
  const bool after_commit = std::string(row.label) == "L_post" || std::string(row.label) == "L_ret";
  const auto clears = Entries(r, TraceKind::kLazyClear, 0);
  ASSERT_EQ(clears.size(), after_commit ? 1u : 0u);
  if (after_commit) {
    EXPECT_EQ(clears[0].pc, k);
  }
}

// The signal and tgkill columns: the handler ran once, saw rseq_cs == 0 and
// cpu_id 0, and its frame returns to abort_ip in the abort cells, else to k.
void ExpectProtoSignal(const Scenario& s, const ExecutionResult& r, const ProtoRow& row, uint32_t k) {
  EXPECT_EQ(r.SymbolValue(s, "sigs"), 1);
  EXPECT_EQ(Observed(s, r, 0, "sig_rseq_cs"), V{0});
  EXPECT_EQ(Observed(s, r, 0, "sig_cpu_id"), V{0});
  const auto frames = Entries(r, TraceKind::kSignalFrame, 0);
  ASSERT_EQ(frames.size(), 1u);
  EXPECT_EQ(frames[0].b, row.aborts ? Pc(s, "rseq_inc", "L_abort") : k);
  const auto rets = Entries(r, TraceKind::kSigreturn, 0);
  ASSERT_EQ(rets.size(), 1u);
  EXPECT_EQ(rets[0].b, frames[0].b);
}

TEST(KernelRules, Rule26_PrototypeTable_PreemptColumn) {
  Scenario s = PrototypeScenario(false);
  {
    SCOPED_TRACE("baseline, no stop");
    ExpectProtoCell(s, ScheduleMaker(s).Run(), {"L_arm", false}, 0, 0);
  }
  for (const ProtoRow& row : kProtoRows) {
    SCOPED_TRACE(row.label);
    ScheduleMaker sm(s);
    sm.Preempt(0, Pc(s, "rseq_inc", row.label));
    ExpectProtoCell(s, sm.Run(), row, /*counted=*/0, /*cpu_after=*/0);
  }
}

TEST(KernelRules, Rule26_PrototypeTable_MigrateColumn) {
  Scenario s = PrototypeScenario(false);
  for (const ProtoRow& row : kProtoRows) {
    SCOPED_TRACE(row.label);
    ScheduleMaker sm(s);
    sm.Migrate(0, Pc(s, "rseq_inc", row.label), 1);
    ExecutionResult r = sm.Run();
    // Before start_ip the section itself runs on CPU 1; inside, the retry runs
    // there; after the commit the increment stays on CPU 0 and only cpu_id moves.
    const bool committed_on_0 = std::string(row.label) == "L_post" || std::string(row.label) == "L_ret";
    ExpectProtoCell(s, r, row, committed_on_0 ? 0 : 1, /*cpu_after=*/1);
    EXPECT_EQ(r.threads[0].final_cpu, 1u);
  }
}

TEST(KernelRules, Rule26_PrototypeTable_SignalColumn) {
  Scenario s = PrototypeScenario(false);
  for (const ProtoRow& row : kProtoRows) {
    SCOPED_TRACE(row.label);
    const uint32_t k = Pc(s, "rseq_inc", row.label);
    ScheduleMaker sm(s);
    sm.Preempt(0, k).Next(Decision::Signal(0, kSigUsr1));
    ExecutionResult r = sm.Run();
    ExpectProtoCell(s, r, row, 0, 0);
    ExpectProtoSignal(s, r, row, k);
  }
}

TEST(KernelRules, Rule26_PrototypeTable_TgkillColumn) {
  Scenario s = PrototypeScenario(true);
  for (const ProtoRow& row : kProtoRows) {
    SCOPED_TRACE(row.label);
    const uint32_t k = Pc(s, "rseq_inc", row.label);
    ScheduleMaker sm(s);
    sm.Preempt(0, k).Next(Decision::Step(1));  // stopped at k; the tracer's thread sends SIGUSR1
    ExecutionResult r = sm.Run();
    ExpectProtoCell(s, r, row, 0, 0);
    ExpectProtoSignal(s, r, row, k);
    EXPECT_LT(TraceIndex(r, TraceKind::kSignal, 0), TraceIndex(r, TraceKind::kSignalFrame, 0));
  }
}

// Row "L_abort (abort_ip, reached after one forced abort at L_load)": an event
// at abort_ip causes no additional abort (rseq_cs is already 0).
TEST(KernelRules, Rule26_PrototypeTable_AbortIpRow) {
  Scenario s = PrototypeScenario(false);
  const uint32_t load = Pc(s, "rseq_inc", "L_load"), abort = Pc(s, "rseq_inc", "L_abort");
  const ProtoRow forced = {"L_load", true};
  for (DecisionKind kind : {DecisionKind::kPreempt, DecisionKind::kMigrate, DecisionKind::kSignal}) {
    SCOPED_TRACE(DecisionKindName(kind));
    ScheduleMaker sm(s);
    sm.Preempt(0, load);
    if (kind == DecisionKind::kPreempt) sm.Preempt(0, abort);
    if (kind == DecisionKind::kMigrate) sm.Migrate(0, abort, 1);
    if (kind == DecisionKind::kSignal) sm.Preempt(0, abort).Next(Decision::Signal(0, kSigUsr1));
    ExecutionResult r = sm.Run();
    const bool moved = kind == DecisionKind::kMigrate;
    ExpectProtoCell(s, r, forced, moved ? 1 : 0, moved ? 1 : 0);
    if (kind == DecisionKind::kSignal) {
      const auto frames = Entries(r, TraceKind::kSignalFrame, 0);
      ASSERT_EQ(frames.size(), 1u);
      EXPECT_EQ(frames[0].b, abort);
      EXPECT_EQ(Observed(s, r, 0, "sig_rseq_cs"), V{0});
    }
  }
}

// ---------------------------------------------------------------------------
// Signal delivery details.

// Without SA_NODEFER the signal is blocked while its handler runs and is
// delivered after sigreturn; with SA_NODEFER it nests at once (and aborts the
// handler's own section).
TEST(KernelRules, Signals_BlockedWhileHandlerRunsUnlessNodefer) {
  for (bool nodefer : {false, true}) {
    SCOPED_TRACE(nodefer ? "nodefer" : "default");
    Scenario s = NestedScenario(nodefer);
    ScheduleMaker sm(s);
    sm.Signal(0, Pc(s, "inc", "load"), kSigUsr1).Signal(0, Pc(s, "h", "commit"), kSigUsr1);
    ExecutionResult r = sm.Run();
    EXPECT_EQ(r.verdict, Verdict::kPass) << r.message;
    const auto frames = Entries(r, TraceKind::kSignalFrame, 0);
    ASSERT_EQ(frames.size(), 2u);
    EXPECT_EQ(r.SymbolValue(s, "hcount"), 2);
    EXPECT_EQ(r.SymbolValue(s, "counter", 0), 1);
    if (nodefer) {
      EXPECT_EQ(frames[1].depth, 2);
      EXPECT_EQ(frames[1].b, Pc(s, "h", "abort"));
      EXPECT_EQ(r.SymbolValue(s, "haborts"), 1);
      EXPECT_EQ(r.threads[0].aborts, 2u);
    } else {
      // Delivered when the first handler returned: over the main context, whose
      // IP is already abort_ip; the handler's section was never aborted.
      EXPECT_EQ(frames[1].depth, 1);
      EXPECT_EQ(frames[1].b, Pc(s, "inc", "abort"));
      EXPECT_EQ(r.SymbolValue(s, "haborts"), 0);
      EXPECT_EQ(r.threads[0].aborts, 1u);
      const auto rets = Entries(r, TraceKind::kSigreturn, 0);
      ASSERT_EQ(rets.size(), 2u);
      EXPECT_LT(TraceIndex(r, TraceKind::kSigreturn, 0), LastTraceIndex(r, TraceKind::kSignalFrame, 0));
    }
  }
}

// The simulator nests at most kMaxSignalDepth (4) handler frames per thread; a
// signal arriving deeper stays pending until a handler returns.
TEST(KernelRules, Signals_NestingDepthIsCapped_ExtraSignalWaitsForSigreturn) {
  ScenarioBuilder b("signals_depth");
  b.Cpus(1);
  b.Func("main").Label("probe").Nop().Li(0, 0).Ret();
  b.Func("hn").Label("entry").Nop().Ret();
  b.Signal(kSigUsr1, "hn", /*nodefer=*/true);
  b.Thread("t0", "main", 0);
  Scenario s = b.Build();
  ScheduleMaker sm(s);
  sm.Signal(0, Pc(s, "main", "probe"), kSigUsr1);
  // Each further signal arrives while the innermost handler is about to return.
  for (int i = 0; i < kMaxSignalDepth; ++i) sm.Signal(0, Pc(s, "hn", "entry", 1), kSigUsr1);
  ExecutionResult r = sm.Run();
  EXPECT_EQ(r.verdict, Verdict::kPass) << r.message;
  const auto frames = Entries(r, TraceKind::kSignalFrame, 0);
  ASSERT_EQ(frames.size(), static_cast<size_t>(kMaxSignalDepth + 1));
  for (int i = 0; i < kMaxSignalDepth; ++i) EXPECT_EQ(frames[i].depth, i + 1);
  // The extra one was delivered right after the innermost handler returned.
  EXPECT_EQ(frames[kMaxSignalDepth].depth, kMaxSignalDepth);
  const auto rets = Entries(r, TraceKind::kSigreturn, 0);
  ASSERT_EQ(rets.size(), static_cast<size_t>(kMaxSignalDepth + 1));
  EXPECT_EQ(rets[0].depth, kMaxSignalDepth - 1);
  EXPECT_EQ(r.threads[0].ret, 0);
}

// tgkill to another thread: generated at once, delivered (with the rseq fixup)
// when the target next runs.
TEST(KernelRules, Signals_TgkillToOtherThreadDeliveredAtItsNextStep) {
  ScenarioBuilder b("tgkill_other");
  b.Cpus(2);
  AddCounter(b);
  AddSigHandler(b);
  b.Func("sender").Tgkill("t1", kSigUsr1).Observe("tgkill", 0).Ret();
  b.Thread("t0", "sender", 0).Thread("t1", "inc", 1);
  Scenario s = b.Build();
  ScheduleMaker sm(s);
  sm.Add(0, Decision::Step(1));  // t1 runs first...
  sm.RunCpu(1, Pc(s, "inc", "load"), 0);  // ...until its load; then t0 sends
  ExecutionResult r = sm.Run();
  EXPECT_EQ(r.verdict, Verdict::kPass) << r.message;
  EXPECT_EQ(Observed(s, r, 0, "tgkill"), V{0});
  const int64_t gen = TraceIndex(r, TraceKind::kSignal, 1);
  const int64_t exit0 = TraceIndex(r, TraceKind::kExit, 0);
  const int64_t frame = TraceIndex(r, TraceKind::kSignalFrame, 1);
  ASSERT_GE(gen, 0);
  EXPECT_EQ(r.trace[gen].a, kSigUsr1);
  EXPECT_LT(gen, exit0);
  EXPECT_LT(exit0, frame);  // nothing happened to t1 until it ran again
  EXPECT_EQ(r.trace[frame].b, Pc(s, "inc", "abort"));
  EXPECT_EQ(r.threads[1].aborts, 1u);
  EXPECT_EQ(Observed(s, r, 1, "sig_cpu_id"), V{1});
  EXPECT_EQ(r.SymbolValue(s, "counter", 1), 1);
}

TEST(KernelRules, Signals_TgkillEsrchForMissingOrExitedThread) {
  ScenarioBuilder b("tgkill_esrch");
  b.Cpus(2);
  AddSigHandler(b);
  b.Func("sender").Tgkill(Imm(5), kSigUsr1).Observe("missing", 0).Tgkill("t1", kSigUsr1).Observe("exited", 0).Ret();
  b.Func("other").Ret();
  b.Thread("t0", "sender", 0).Thread("t1", "other", 1);
  Scenario s = b.Build();
  ScheduleMaker sm(s);
  sm.Add(0, Decision::Step(1));  // t1 exits first
  ExecutionResult r = sm.Run();
  EXPECT_EQ(r.verdict, Verdict::kPass) << r.message;
  EXPECT_EQ(Observed(s, r, 0, "missing"), V{kEsrch});
  EXPECT_EQ(Observed(s, r, 0, "exited"), V{kEsrch});
  EXPECT_TRUE(Entries(r, TraceKind::kSignal).empty());
  EXPECT_TRUE(Entries(r, TraceKind::kSignalFrame).empty());
}

// A signal without a disposition whose default action terminates the process
// kills it when delivered (kKilled; kSigsegv only for SIGSEGV), core-dumping
// ones included.
TEST(KernelRules, Signals_UndeclaredTerminatingSignalKills) {
  struct Case {
    int signo;
    Verdict verdict;
    const char* action;
  };
  for (const Case& c : {Case{kSigUsr2, Verdict::kKilled, "(default action: terminate)"},
                        Case{kSigQuit, Verdict::kKilled, "(default action: terminate with core dump)"},
                        Case{kSigSegv, Verdict::kSigsegv, "(default action: terminate with core dump)"}}) {
    SCOPED_TRACE(SignalName(c.signo));
    Scenario s = TgkillIntoSectionScenario(c.signo);
    ASSERT_EQ(s.FindSignal(c.signo), nullptr);
    ExecutionResult r = RunTgkillIntoSection(s, k60);
    EXPECT_EQ(r.verdict, c.verdict) << r.message;
    EXPECT_EQ(r.message, SignalName(c.signo) + " delivered to t1 " + c.action);
    const auto kills = Entries(r, TraceKind::kKill);
    ASSERT_EQ(kills.size(), 1u);
    EXPECT_EQ(kills[0].a, c.signo);
    EXPECT_EQ(kills[0].thread, 1);
    EXPECT_FALSE(r.threads[1].exited);
    EXPECT_EQ(r.SymbolValue(s, "counter", 1), 0);
  }
  // Injected: the same.
  Scenario s = IdsScenario();
  ASSERT_EQ(s.FindSignal(kSigQuit), nullptr);
  ScheduleMaker sm(s);
  sm.Signal(0, Pc(s, "ids", "probe"), kSigQuit);
  ExecutionResult r = sm.Run();
  EXPECT_EQ(r.verdict, Verdict::kKilled) << r.message;
  EXPECT_FALSE(r.threads[0].exited);
}

// Job-control stops are not modelled: a program's tgkill of a stop signal
// left at its default action is discarded (the kernel discards SIGTSTP/SIGTTIN/
// SIGTTOU in an orphaned process group), and no handler frame means no rseq event.
TEST(KernelRules, Signals_TgkillOfDefaultStopSignalIsDiscarded) {
  for (int signo : {kSigStop, kSigTstp, kSigTtin, kSigTtou}) {
    SCOPED_TRACE(SignalName(signo));
    Scenario s = TgkillIntoSectionScenario(signo);
    ExpectDiscardedTgkill(s, RunTgkillIntoSection(s, k60), signo);
  }
}

// Injecting SIGKILL, SIGSTOP, or a job-control stop signal at its default
// action is not a valid decision; one with a declared handler is, and so are
// the default-ignored and default-terminating ones.
TEST(KernelRules, Signals_InjectingDefaultStopSignalIsInvalid) {
  class Probe : public Scheduler {
   public:
    Decision Choose(const ChoiceView& v) override {
      const int cpu = v.DefaultCpu();
      if (!probed && v.Running(cpu) >= 0) {
        probed = true;
        for (int signo = 0; signo <= kMaxSignal + 1; ++signo) {
          if (v.IsValid(Decision::Signal(cpu, signo))) valid.push_back(signo);
        }
      }
      return Decision::Step(cpu);
    }
    bool probed = false;
    std::vector<int> valid;
  };
  auto all_but = [](std::initializer_list<int> excluded) {
    std::vector<int> out;
    for (int signo = 1; signo <= kMaxSignal; ++signo) {
      if (std::find(excluded.begin(), excluded.end(), signo) == excluded.end()) out.push_back(signo);
    }
    return out;
  };
  {
    Scenario s = CounterScenario();
    Probe probe;
    ExecutionResult r = Simulator(s).Run(probe);
    EXPECT_EQ(r.verdict, Verdict::kPass) << r.message;
    ASSERT_TRUE(probe.probed);
    EXPECT_EQ(probe.valid, all_but({9, kSigStop, kSigTstp, kSigTtin, kSigTtou}));
    // A replay schedule that injects SIGTSTP is refused.
    ScheduleMaker sm(s);
    sm.Signal(0, Pc(s, "inc", "load"), kSigTstp);
    EXPECT_THROW(sm.Run(), InputError);
  }
  // With a disposition (handler or SIG_IGN) SIGTSTP/SIGTTIN can be injected;
  // the handler's frame aborts the section.
  ScenarioBuilder b("tstp_handled");
  b.Cpus(2);
  AddCounter(b);
  AddSigHandler(b);
  b.Signal(kSigTstp, "on_sig").Signal(kSigTtin, "");
  b.Thread("t0", "inc", 0);
  Scenario s = b.Build();
  Probe probe;
  ExecutionResult probed = Simulator(s).Run(probe);
  EXPECT_EQ(probed.verdict, Verdict::kPass) << probed.message;
  EXPECT_EQ(probe.valid, all_but({9, kSigStop, kSigTtou}));
  ExpectSignalFrameAbortsAtLoad(s, kSigTstp, k60);
}

// ---------------------------------------------------------------------------
// sched_setaffinity.

TEST(KernelRules, SchedSetaffinity_MaskExcludingCurrentCpuMigrates_EventAndIdsUpdated) {
  ScenarioBuilder b("affinity");
  b.Cpus(2);
  AddCounter(b);
  b.Func("main")
      .Call("inc")  // leaves rseq_cs set (lazy clear pending)
      .RseqAddr(2)
      .Li(3, 0x1234)
      .St32(Mem(2, kRseqOffCpuIdStart), 3)
      .SchedSetaffinity(Imm(3))  // includes CPU 0: no move, no event
      .Observe("keep", 0)
      .Ld32(4, Mem(2, kRseqOffCpuIdStart))
      .Observe("cpu_id_start", 4)
      .SchedSetaffinity(Imm(2))  // CPU 1 only
      .Observe("move", 0)
      .Getcpu()
      .Observe("getcpu", 0)
      .Ld32(4, Mem(2, kRseqOffCpuIdStart))
      .Observe("cpu_id_start", 4)
      .Ld32(4, Mem(2, kRseqOffCpuId))
      .Observe("cpu_id", 4)
      .Ld(4, Mem(2, kRseqOffRseqCs))
      .Observe("rseq_cs", 4)
      .Ret();
  b.Thread("t0", "main", 0);
  Scenario s = b.Build();
  for (KernelModel k : {k60, k418}) {
    SCOPED_TRACE(KernelModelName(k));
    ExecutionResult r = ScheduleMaker(s, k).Run();
    EXPECT_EQ(r.verdict, Verdict::kPass) << r.message;
    ExpectObserved(s, r, 0, {{"keep", V{0}},
                             {"move", V{0}},
                             {"getcpu", V{1}},
                             {"cpu_id_start", V{0x1234, 1}},
                             {"cpu_id", V{1}},
                             {"rseq_cs", V{0}}});
    const auto moves = Entries(r, TraceKind::kMigrate, 0);
    ASSERT_EQ(moves.size(), 1u);
    EXPECT_EQ(moves[0].cpu, 0);
    EXPECT_EQ(moves[0].a, 1);
    EXPECT_EQ(Entries(r, TraceKind::kLazyClear, 0).size(), 1u);
    EXPECT_EQ(r.threads[0].final_cpu, 1u);
  }
}

TEST(KernelRules, SchedSetaffinity_EmptyMaskIsEinval) {
  ScenarioBuilder b("affinity_einval");
  b.Cpus(2);
  b.Func("main")
      .SchedSetaffinity(Imm(0))
      .Observe("empty", 0)
      .SchedSetaffinity(Imm(4))  // only a CPU that does not exist
      .Observe("absent", 0)
      .Getcpu()
      .Observe("getcpu", 0)
      .Ret();
  b.Thread("t0", "main", 0);
  Scenario s = b.Build();
  ExecutionResult r = ScheduleMaker(s).Run();
  EXPECT_EQ(r.verdict, Verdict::kPass) << r.message;
  ExpectObserved(s, r, 0, {{"empty", V{kEinval}},
                           {"absent", V{kEinval}},
                           {"getcpu", V{0}}});
  EXPECT_TRUE(Entries(r, TraceKind::kMigrate).empty());
}

// ---------------------------------------------------------------------------
// Native (C++) threads run their critical sections as IR through CallIr and
// are aborted exactly like IR threads; their own code is never inside a section.

TEST(KernelRules, Native_CallIrSectionAbortedLikeIr) {
  uint64_t area = 0;
  ScenarioBuilder b("native");
  b.Cpus(2);
  AddCounter(b);
  b.Func("probe").Nop().Ret();
  b.Native("n0", 0, [&area](ThreadApi& api) {
    const int64_t cpu = api.CallIr("inc");
    api.Observe("ret", cpu);
    api.Observe("cs_after_call", static_cast<int64_t>(api.Load(area + kRseqOffRseqCs)));
    api.CallIr("probe");
    api.Observe("cs_after_probe", static_cast<int64_t>(api.Load(area + kRseqOffRseqCs)));
    return cpu;
  });
  Scenario s = b.Build();
  area = AreaAddress(s, 0);
  const int64_t desc = static_cast<int64_t>(DescriptorAddress(s, "cs"));
  const uint32_t load = Pc(s, "inc", "load");
  for (bool migrate : {false, true}) {
    SCOPED_TRACE(migrate ? "migrate" : "preempt");
    ScheduleMaker sm(s);
    if (migrate) {
      sm.Migrate(0, load, 1);
    } else {
      sm.Preempt(0, load);
    }
    sm.Preempt(0, FuncPc(s, "probe"));
    ExecutionResult r = sm.Run();
    EXPECT_EQ(r.verdict, Verdict::kPass) << r.message;
    const int64_t cpu = migrate ? 1 : 0;
    EXPECT_EQ(r.threads[0].aborts, 1u);
    const auto aborts = Entries(r, TraceKind::kAbort, 0);
    ASSERT_EQ(aborts.size(), 1u);
    EXPECT_EQ(aborts[0].pc, load);
    EXPECT_EQ(aborts[0].a, Pc(s, "inc", "abort"));
    EXPECT_EQ(Observed(s, r, 0, "ret"), V{cpu});
    EXPECT_EQ(r.threads[0].ret, cpu);
    EXPECT_EQ(r.SymbolValue(s, "counter", static_cast<uint32_t>(cpu)), 1);
    EXPECT_EQ(r.SymbolValue(s, "aborts"), 1);
    EXPECT_EQ(Observed(s, r, 0, "cs_after_call"), V{desc});  // left set after success
    EXPECT_EQ(Observed(s, r, 0, "cs_after_probe"), V{0});    // lazily cleared outside
  }
}

}  // namespace
}  // namespace rseqmc
