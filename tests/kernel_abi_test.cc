// Per-ABI rule tables (sim/kernel/abi.h): one row per kernel rule in which the
// modelled ABIs differ or which §3 of issue 10 fixed, each with the kernel
// source it follows, a minimal scenario, a hand-built schedule
// (tests/rule_helpers.h) and the exact outcome expected under each ABI -
// the same scenario and schedule, different ABIs, different verdicts.
// The outcome is "VERDICT aborts=N name=value..." (thread 0's observations).
#include <cstdint>
#include <cstdio>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "scenarios/builtin.h"
#include "scenarios/parser.h"
#include "sim/builder.h"
#include "sim/ir.h"
#include "sim/kernel/abi.h"
#include "sim/kernel_model.h"
#include "sim/scenario.h"
#include "sim/simulator.h"
#include "sim/trace.h"
#include "model/explorer.h"
#include "tests/rule_helpers.h"

namespace rseqmc {
namespace {

using rules::Pc;
using rules::ScheduleMaker;

constexpr KernelModel k418 = KernelModel::kLegacy418;
constexpr KernelModel k60 = KernelModel::kLegacy60;
constexpr KernelModel kCid = KernelModel::kMmCid;
constexpr KernelModel k619 = KernelModel::k619;

struct Row {
  const char* rule;
  const char* source;
  std::function<Scenario()> scenario;
  std::function<void(const Scenario&, ScheduleMaker&)> schedule;
  std::string on_418, on_60, on_619;  // expected outcome per ABI
  // Expected under mm_cid (6.3-6.18). It has every rule of 6.0 plus node_id
  // and mm_cid, so a row that does not read those fields expects on_60 (left
  // empty here); the rows about the two fields say it.
  std::string on_cid;
};

// Thread 0's observations, then other threads' as "tN.name=value".
std::string Describe(const Scenario& s, const ExecutionResult& r) {
  std::string out = VerdictName(r.verdict);
  out += " aborts=" + std::to_string(r.threads.at(0).aborts);
  for (size_t t = 0; t < r.threads.size(); ++t) {
    for (const auto& [id, v] : r.threads[t].observed) {
      char buf[32];
      std::snprintf(buf, sizeof buf, "0x%llx", static_cast<unsigned long long>(v));
      out += " " + (t == 0 ? std::string() : "t" + std::to_string(t) + ".") + r.ObservationName(s, id) + "=" + buf;
    }
  }
  return out;
}

// `main` on CPU 0 stores 0x55 into node_id and 0x66 into mm_cid, runs `nop`
// at `probe`, then observes both; `other` runs on CPU 1 (node 1 of 2).
Scenario NodeAndCidProbe() {
  ScenarioBuilder b("node_cid_probe");
  b.Cpus(2).Nodes(2);
  b.Func("main").RseqAddr(2).Li(3, 0x55).St32(Mem(2, kRseqOffNodeId), 3).Li(3, 0x66)
      .St32(Mem(2, kRseqOffMmCid), 3).Label("probe").Nop()
      .Ld32(4, Mem(2, kRseqOffNodeId)).Observe("node_id", 4)
      .Ld32(4, Mem(2, kRseqOffMmCid)).Observe("mm_cid", 4).Li(0, 0).Ret();
  b.Func("other").Nop().Li(0, 0).Ret();
  b.Thread("t0", "main", 0).Thread("t1", "other", 1);
  return b.Build();
}

// Every thread (one per CPU `first`..`first + n - 1`) reads cpu_id and mm_cid
// with rseq_load before anyone ends.
Scenario CidReaders(uint32_t cpus, uint32_t first, uint32_t n) {
  ScenarioBuilder b("cid_readers");
  b.Cpus(cpus);
  b.Func("main").RseqLoad(1, RseqField::kCpuId).Observe("cpu_id", 1).RseqLoad(1, RseqField::kMmCid)
      .Observe("mm_cid", 1).Label("done").Li(0, 0).Ret();
  for (uint32_t i = 0; i < n; ++i) b.Thread("t" + std::to_string(i), "main", first + i);
  return b.Build();
}

// `first` (CPU 0) sets `done` and returns; `second` (CPU 1) waits for it,
// runs `nop` at `probe` and observes its mm_cid (rseq_load). The process
// may run on `cpus` CPUs.
Scenario CidAfterExit(uint32_t cpus) {
  ScenarioBuilder b("cid_after_exit");
  b.Cpus(cpus).Var("done", Width::kU64, 1);
  b.Func("first").La(1, "done").Li(2, 1).St(Mem(1), 2).Li(0, 0).Ret();
  b.Func("second").La(1, "done").Label("wait").Ld(2, Mem(1)).Beq(2, Imm(0), "wait").Nop().Nop().Label("probe")
      .Nop().RseqLoad(3, RseqField::kMmCid).Observe("mm_cid", 3).Li(0, 0).Ret();
  b.Thread("t0", "first", 0).Thread("t1", "second", 1);
  return b.Build();
}

// `main`: stores 0x1234 into cpu_id_start, runs `nop` at label `probe`, then
// observes cpu_id_start. A second thread `other` spins on CPU 1 (or queues).
Scenario IdsProbe(uint32_t cpus, bool membarrier_own_cpu) {
  ScenarioBuilder b("ids_probe");
  b.Cpus(cpus);
  FunctionBuilder& f = b.Func("main");
  f.RseqAddr(2).Li(3, 0x1234).St32(Mem(2, kRseqOffCpuIdStart), 3);
  if (membarrier_own_cpu) f.MembarrierRseq(Imm(0));
  f.Label("probe").Nop().Ld32(4, Mem(2, kRseqOffCpuIdStart)).Observe("cpu_id_start", 4).Li(0, 0).Ret();
  b.Func("other").Nop().Nop().Li(0, 0).Ret();
  b.Thread("t0", "main", 0);
  b.Thread("t1", "other", cpus > 1 ? 1 : 0);
  return b.Build();
}

// `main`: a section [start, post) over `commit` whose descriptor has the given
// flags/version; `body` runs inside; the abort path counts and leaves.
Scenario Section(uint32_t flags, uint32_t version, const std::function<void(FunctionBuilder&)>& body,
                 bool second_thread_on_cpu0 = false) {
  ScenarioBuilder b("section");
  b.Cpus(2).Var("x", Width::kU64, 1);
  FunctionBuilder& f = b.Func("main");
  f.La(10, "x").RseqArm("cs").Label("start");
  body(f);
  f.Li(5, 1).Label("commit").St(Mem(10), 5).Label("post").Li(0, 0).Ret()
      .Sig(kRseqSig).Label("abort").Li(0, 1).Ret()
      .Cs("cs", "start", "post", "abort", flags, version, true);
  b.Func("other").Nop().Li(0, 0).Ret();
  b.Thread("t0", "main", 0);
  b.Thread("t1", "other", second_thread_on_cpu0 ? 0 : 1);
  return b.Build();
}

// A hand-made descriptor in `desc` (version 0, flags 0, start_ip = label
// `start`, post_commit_offset = `offset`, abort_ip = label `abort` + skew),
// armed by stores; `nop`s at `start`.. form the section. The code addresses are
// those of a first build (the layout does not depend on the immediates).
Scenario HandMade(uint64_t offset, int64_t abort_skew, bool abort_before_start) {
  auto build = [&](uint64_t start_ip, uint64_t abort_ip) {
    ScenarioBuilder b("hand_made");
    b.Cpus(2).Var("desc", Width::kU64, 4);
    FunctionBuilder& f = b.Func("main");
    f.La(10, "desc").Li(3, static_cast<int64_t>(start_ip)).St(Mem(10, 8), 3)
        .Li(3, static_cast<int64_t>(offset)).St(Mem(10, 16), 3)
        .Li(3, static_cast<int64_t>(abort_ip)).St(Mem(10, 24), 3)
        .RseqAddr(2);
    if (abort_before_start) f.Jmp("arm").Sig(kRseqSig).Label("abort").Li(0, 1).Ret();
    f.Label("arm").St(Mem(2, kRseqOffRseqCs), 10).Label("start").Nop().Label("in").Nop().Nop().Li(0, 0).Ret();
    if (!abort_before_start) f.Sig(kRseqSig).Label("abort").Li(0, 1).Ret();
    b.Thread("t0", "main", 0);
    return b.Build();
  };
  const Scenario first = build(0, 0);
  const uint64_t start = CodeAddress(Pc(first, "main", "start"));
  const uint64_t abort = CodeAddress(Pc(first, "main", "abort")) + static_cast<uint64_t>(abort_skew);
  return build(start, abort);
}

// The preempt-lock scheme (sim/kernel/preempt_lock.h), the same under every
// ABI: `main` registers `flag` with SIGUSR2 (observes r0 as reg), sets the
// flag at `set`, reads its CPU (getcpu), runs the region [start, post) (`in` inside, the commit store
// last), clears the flag at `clear`, observes its restarts and its CPU. The
// SIGUSR2 handler restarts the region (observes r0 of sigctx_restart as
// moved); SIGUSR1's handler observes its signal as usr1. `flag_addr` replaces
// the flag's address (0: the real one), `signo` the registered signal,
// `handler` false leaves SIGUSR2 at SIG_DFL. The program writes the real
// flag whatever address it registered.
Scenario PreemptLockProbe(int64_t flag_addr = 0, int signo = 12, bool handler = true) {
  ScenarioBuilder b("preempt_lock_probe");
  b.Cpus(2).Var("flag", Width::kU64, 1).Var("x", Width::kU64, 1);
  FunctionBuilder& f = b.Func("main");
  f.La(10, "flag").La(11, "x");
  flag_addr != 0 ? f.Li(12, flag_addr) : f.Mov(12, 10);
  f.PreemptLock(R(12), signo).Observe("reg", 0).Li(6, 0)
      .Label("again").Li(5, 1).Label("set").St32(Mem(10), 5).Getcpu()
      .Label("start").Mov(7, 0).Label("in").Nop().Li(5, 2).Label("commit").St(Mem(11), 5)
      .Label("post").Nop().Label("clear").Li(5, 0).St32(Mem(10), 5).Observe("restarts", 6).Getcpu()
      .Observe("cpu", 0).Li(0, 0).Ret()
      .Label("restart").Add(6, 6, Imm(1)).Jmp("again")
      .Region("r", "start", "post", "restart");
  b.Func("on_pl").SigctxRestart("r").Observe("moved", 0).Ret();
  b.Func("on_usr1").Observe("usr1", 1).Ret();
  b.Thread("t0", "main", 0);
  if (handler) b.Signal(12, "on_pl");
  b.Signal(10, "on_usr1");
  return b.Build();
}

std::vector<Row> Rows() {
  std::vector<Row> rows;
  const auto same = [&rows](const char* rule, const char* source, std::function<Scenario()> scenario,
                            std::function<void(const Scenario&, ScheduleMaker&)> schedule, const std::string& on) {
    rows.push_back({rule, source, std::move(scenario), std::move(schedule), on, on, on, ""});
  };
  same("PL1/PL2 preempt-lock: a preemption with the flag set sends the registered signal before the thread runs "
       "again; its handler restarts the region",
       "sim/kernel/preempt_lock.h PL1 preempt_lock_sched_out(), PL2 preempt_lock_handle_notify_resume()",
       [] { return PreemptLockProbe(); },
       [](const Scenario& s, ScheduleMaker& m) { m.Preempt(0, Pc(s, "main", "in")); },
       "pass aborts=1 reg=0x0 moved=0x1 restarts=0x1 cpu=0x0");
  same("PL1 preempt-lock: a preemption before the flag is set sends nothing",
       "sim/kernel/preempt_lock.h PL1 (the flag is read at PL2)", [] { return PreemptLockProbe(); },
       [](const Scenario& s, ScheduleMaker& m) { m.Preempt(0, Pc(s, "main", "set")); },
       "pass aborts=0 reg=0x0 restarts=0x0 cpu=0x0");
  same("PL2/PL3 preempt-lock: after the commit, with the flag still set, the signal comes and the handler leaves "
       "the IP alone",
       "sim/kernel/preempt_lock.h PL3 (sigctx_restart tests [start, end))", [] { return PreemptLockProbe(); },
       [](const Scenario& s, ScheduleMaker& m) { m.Preempt(0, Pc(s, "main", "post")); },
       "pass aborts=0 reg=0x0 moved=0x0 restarts=0x0 cpu=0x0");
  same("PL5 preempt-lock: a migration is a switch-out; the signal comes on the new CPU and the restart reads it",
       "sim/kernel/preempt_lock.h PL5", [] { return PreemptLockProbe(); },
       [](const Scenario& s, ScheduleMaker& m) { m.Migrate(0, Pc(s, "main", "in"), 1); },
       "pass aborts=1 reg=0x0 moved=0x1 restarts=0x1 cpu=0x1");
  same("PL4 preempt-lock: an ordinary signal with the flag set is preceded by the preempt-lock signal (its frame "
       "lies on the operation, the ordinary handler runs first on top of it)",
       "sim/kernel/preempt_lock.h PL4 preempt_lock_signal_deliver()", [] { return PreemptLockProbe(); },
       [](const Scenario& s, ScheduleMaker& m) { m.Signal(0, Pc(s, "main", "in"), 10); },
       "pass aborts=1 reg=0x0 usr1=0xa moved=0x1 restarts=0x1 cpu=0x0");
  same("PL4 preempt-lock: an ordinary signal with the flag clear is delivered alone",
       "sim/kernel/preempt_lock.h PL4", [] { return PreemptLockProbe(); },
       [](const Scenario& s, ScheduleMaker& m) { m.Signal(0, Pc(s, "main", "clear", 2), 10); },
       "pass aborts=0 reg=0x0 usr1=0xa restarts=0x0 cpu=0x0");
  same("preempt-lock registration: a flag word not 4-aligned is EINVAL and nothing is registered",
       "sim/kernel/preempt_lock.h sys_preempt_lock()",
       [] { return PreemptLockProbe(static_cast<int64_t>(kDataBase) + 2); },
       [](const Scenario& s, ScheduleMaker& m) { m.Preempt(0, Pc(s, "main", "in")); },
       "pass aborts=0 reg=0xffffffffffffffea restarts=0x0 cpu=0x0");
  same("preempt-lock registration: SIGKILL cannot be the signal (EINVAL)", "sim/kernel/preempt_lock.h sys_preempt_lock()",
       [] { return PreemptLockProbe(0, 9); },
       [](const Scenario& s, ScheduleMaker& m) { m.Preempt(0, Pc(s, "main", "in")); },
       "pass aborts=0 reg=0xffffffffffffffea restarts=0x0 cpu=0x0");
  same("preempt-lock registration: the last word below TASK_SIZE_MAX passes access_ok() (registered; unmapped, so "
       "the check faults: SIGSEGV)",
       "sim/kernel/preempt_lock.h sys_preempt_lock() (access_ok(flag, 4); kernel/patches/0005)",
       [] { return PreemptLockProbe(static_cast<int64_t>(kTaskSize - 4)); },
       [](const Scenario& s, ScheduleMaker& m) { m.Preempt(0, Pc(s, "main", "in")); }, "sigsegv aborts=0 reg=0x0");
  same("preempt-lock registration: a flag word at TASK_SIZE_MAX is EINVAL",
       "sim/kernel/preempt_lock.h sys_preempt_lock() (access_ok(flag, 4))",
       [] { return PreemptLockProbe(static_cast<int64_t>(kTaskSize)); },
       [](const Scenario& s, ScheduleMaker& m) { m.Preempt(0, Pc(s, "main", "in")); },
       "pass aborts=0 reg=0xffffffffffffffea restarts=0x0 cpu=0x0");
  same("PL2 preempt-lock: an unmapped flag word faults at the check: SIGSEGV",
       "sim/kernel/preempt_lock.h PL2 (get_user fails)", [] { return PreemptLockProbe(0x1000); },
       [](const Scenario& s, ScheduleMaker& m) { m.Preempt(0, Pc(s, "main", "in")); }, "sigsegv aborts=0 reg=0x0");
  same("PL2 preempt-lock: the registered signal at SIG_DFL terminates the process",
       "sim/kernel/preempt_lock.h PL2 (no handler check)", [] { return PreemptLockProbe(0, 12, false); },
       [](const Scenario& s, ScheduleMaker& m) { m.Preempt(0, Pc(s, "main", "in")); }, "killed aborts=0 reg=0x0");
  rows.push_back(
      {"IDs are rewritten on every evaluation (legacy) / only when they change (6.19): a preemption on the same "
       "CPU",
       "kernel/rseq.c rseq_update_cpu_node_id() / include/linux/rseq_entry.h rseq_exit_to_user_mode()",
       [] { return IdsProbe(2, false); },
       [](const Scenario& s, ScheduleMaker& m) { m.Preempt(0, Pc(s, "main", "probe")); },
       "pass aborts=0 cpu_id_start=0x0", "pass aborts=0 cpu_id_start=0x0", "pass aborts=0 cpu_id_start=0x1234", ""});
  rows.push_back({"A migration changes the IDs: every ABI rewrites them",
                  "kernel/rseq.c rseq_migrate() / kernel/sched/core.c __set_task_cpu()",
                  [] { return IdsProbe(2, false); },
                  [](const Scenario& s, ScheduleMaker& m) { m.Migrate(0, Pc(s, "main", "probe"), 1); },
                  "pass aborts=0 cpu_id_start=0x1", "pass aborts=0 cpu_id_start=0x1",
                  "pass aborts=0 cpu_id_start=0x1", ""});
  rows.push_back({"membarrier RSEQ IPI: rseq_preempt() (legacy) / rseq_sched_switch_event(), IDs only on change "
                  "(6.19)",
                  "kernel/sched/membarrier.c ipi_rseq()", [] { return IdsProbe(2, false); },
                  [](const Scenario& s, ScheduleMaker& m) { m.Ipi(0, Pc(s, "main", "probe")); },
                  "pass aborts=0 cpu_id_start=0x0", "pass aborts=0 cpu_id_start=0x0",
                  "pass aborts=0 cpu_id_start=0x1234", ""});
  rows.push_back(
      {"membarrier's one-CPU shortcut is num_online_cpus() of the machine, not the scenario's CPUs: a 1-CPU "
       "scenario's membarrier on its own CPU interrupts the caller",
       "kernel/sched/membarrier.c membarrier_private_expedited()", [] { return IdsProbe(1, true); },
       [](const Scenario&, ScheduleMaker&) {}, "pass aborts=0 cpu_id_start=0x0", "pass aborts=0 cpu_id_start=0x0",
       "pass aborts=0 cpu_id_start=0x1234", ""});
  rows.push_back(
      {"The descriptor is validated on every evaluation (legacy), only with the IP inside (6.19): version 1, IP "
       "outside",
       "kernel/rseq.c rseq_get_rseq_cs() / include/linux/rseq_entry.h rseq_update_user_cs()",
       [] { return Section(0, 1, [](FunctionBuilder& f) { f.Nop(); }); },
       [](const Scenario& s, ScheduleMaker& m) { m.Preempt(0, Pc(s, "main", "post")); }, "sigsegv aborts=0",
       "sigsegv aborts=0", "pass aborts=0", ""});
  rows.push_back({"NO_RESTART_ON_PREEMPT inside a section: honoured (4.18), SIGSEGV (6.0), not read (6.19)",
                  "kernel/rseq.c rseq_need_restart() (4.18, 6.0) / rseq_update_user_cs() (6.19)",
                  [] { return Section(kRseqCsFlagNoRestartOnPreempt, 0, [](FunctionBuilder& f) { f.Nop(); }); },
                  [](const Scenario& s, ScheduleMaker& m) { m.Preempt(0, Pc(s, "main", "commit")); },
                  "pass aborts=0", "sigsegv aborts=0", "pass aborts=1", ""});
  rows.push_back(
      {"A switch entered through a syscall inside a section: aborted (legacy), cs ignored without user_irq (6.19)",
       "include/linux/rseq_entry.h rseq_exit_to_user_mode() (user_irq)",
       [] { return Section(0, 0, [](FunctionBuilder& f) { f.SchedYield(); }, true); },
       [](const Scenario&, ScheduleMaker&) {}, "pass aborts=1", "pass aborts=1", "pass aborts=0", ""});
  rows.push_back(
      {"start_ip + post_commit_offset above TASK_SIZE: no such check in 4.18 (restart), SIGSEGV (6.0), not "
       "checked by 6.19 (restart)",
       "kernel/rseq.c@d82991a8688a rseq_get_rseq_cs() (4.18) / rseq_get_rseq_cs() (6.x)",
       [] { return HandMade(0x0000800000000000ull, 0, true); },
       [](const Scenario& s, ScheduleMaker& m) { m.Preempt(0, Pc(s, "main", "in")); }, "pass aborts=1",
       "sigsegv aborts=0", "pass aborts=1", ""});
  rows.push_back({"abort_ip not aligned to an instruction: the word before it is no signature -> SIGSEGV (was a "
                  "crash of rseqmc)",
                  "kernel/rseq.c rseq_get_rseq_cs() (signature) / rseq_update_user_cs()",
                  [] { return HandMade(8, 2, false); },
                  [](const Scenario& s, ScheduleMaker& m) { m.Preempt(0, Pc(s, "main", "in")); },
                  "sigsegv aborts=0", "sigsegv aborts=0", "sigsegv aborts=0", ""});
  rows.push_back(
      {"A registered signature 0 and an instruction (not `sig`) before abort_ip: no match -> SIGSEGV (it read as "
       "signature 0)",
       "kernel/rseq.c rseq_get_rseq_cs(): get_user(sig, abort_ip - 4)",
       [] {
         ScenarioBuilder b("sig0");
         b.Cpus(2).Var("x", Width::kU64, 1);
         b.Func("main").RseqRegister(0).La(10, "x").RseqArm("cs").Label("start").Nop().Li(5, 1)
             .Label("commit").St(Mem(10), 5).Label("post").Li(0, 0).Ret()
             .Nop().Label("abort").Li(0, 1).Ret()
             .Cs("cs", "start", "post", "abort", 0, 0, true);
         b.Thread("t0", "main", 0, ~0ull, {}, false);
         return b.Build();
       },
       [](const Scenario& s, ScheduleMaker& m) { m.Preempt(0, Pc(s, "main", "commit")); }, "sigsegv aborts=0",
       "sigsegv aborts=0", "sigsegv aborts=0", ""});
  rows.push_back(
      {"rseq_addr after unregistering: the area stays in TLS; cpu_id reads RSEQ_CPU_ID_UNINITIALIZED",
       "kernel/rseq.c rseq_reset_rseq_cpu_id() / rseq_reset_ids()",
       [] {
         ScenarioBuilder b("unregistered_addr");
         b.Cpus(1);
         b.Func("main").RseqUnregister().Observe("ret", 0).RseqAddr(2).Ld32(3, Mem(2, kRseqOffCpuId))
             .Observe("cpu_id", 3).Li(0, 0).Ret();
         b.Thread("t0", "main", 0);
         return b.Build();
       },
       [](const Scenario&, ScheduleMaker&) {}, "pass aborts=0 ret=0x0 cpu_id=0xffffffff",
       "pass aborts=0 ret=0x0 cpu_id=0xffffffff", "pass aborts=0 ret=0x0 cpu_id=0xffffffff", ""});
  rows.push_back(
      {"node_id = cpu_to_node() and mm_cid written with the CPU IDs (6.3+); 4.18-6.2 never write offsets 20..31: "
       "a migration to CPU 1 (node 1) while `other` runs there; after it ends the thread gets ID 1 (6.4-6.18: CPU 0 "
       "keeps ID 0, sched_mm_cid_migrate_to() moves nothing to a CPU that holds one), 0 under 6.3's allocator "
       "(the 6.19 model's)",
       "kernel/rseq.c rseq_update_cpu_node_id() (6.3-6.18) / include/linux/rseq_entry.h rseq_set_ids_get_csaddr() "
       "(6.19)",
       [] { return NodeAndCidProbe(); },
       [](const Scenario& s, ScheduleMaker& m) { m.Migrate(0, Pc(s, "main", "probe"), 1); },
       "pass aborts=0 node_id=0x55 mm_cid=0x66", "pass aborts=0 node_id=0x55 mm_cid=0x66",
       "pass aborts=0 node_id=0x1 mm_cid=0x0", "pass aborts=0 node_id=0x1 mm_cid=0x1"});
  rows.push_back(
      {"A preemption that changes no ID: legacy 6.3+ rewrites node_id/mm_cid on every evaluation, 6.19 only when "
       "an ID changed, 4.18-6.2 never",
       "kernel/rseq.c rseq_update_cpu_node_id() / include/linux/rseq_entry.h rseq_exit_to_user_mode()",
       [] { return NodeAndCidProbe(); },
       [](const Scenario& s, ScheduleMaker& m) { m.Preempt(0, Pc(s, "main", "probe")); },
       "pass aborts=0 node_id=0x55 mm_cid=0x66", "pass aborts=0 node_id=0x55 mm_cid=0x66",
       "pass aborts=0 node_id=0x55 mm_cid=0x66", "pass aborts=0 node_id=0x0 mm_cid=0x0"});
  rows.push_back(
      {"Concurrency IDs are unique among the process's running threads: two threads running at once read 0 and 1 "
       "(4.18-6.2: the word is never written, both read 0)",
       "kernel/sched/sched.h mm_cid_get() -> __mm_cid_get() (cpumask_first_zero of the cidmask)",
       [] { return CidReaders(2, 0, 2); }, [](const Scenario&, ScheduleMaker&) {},
       "pass aborts=0 cpu_id=0x0 mm_cid=0x0 t1.cpu_id=0x1 t1.mm_cid=0x0",
       "pass aborts=0 cpu_id=0x0 mm_cid=0x0 t1.cpu_id=0x1 t1.mm_cid=0x0",
       "pass aborts=0 cpu_id=0x0 mm_cid=0x0 t1.cpu_id=0x1 t1.mm_cid=0x1",
       "pass aborts=0 cpu_id=0x0 mm_cid=0x0 t1.cpu_id=0x1 t1.mm_cid=0x1"});
  rows.push_back(
      {"Concurrency IDs are compacted per process: two threads on CPUs 2 and 3 of 4 get 0 and 1, below "
       "min(nr threads, nr allowed CPUs), not their CPU numbers",
       "kernel/sched/sched.h __mm_cid_get(); 6.13+ bound min(nr_cpus_allowed, mm_users) (02d954c0fdf9)",
       [] { return CidReaders(4, 2, 2); }, [](const Scenario&, ScheduleMaker&) {},
       "pass aborts=0 cpu_id=0x2 mm_cid=0x0 t1.cpu_id=0x3 t1.mm_cid=0x0",
       "pass aborts=0 cpu_id=0x2 mm_cid=0x0 t1.cpu_id=0x3 t1.mm_cid=0x0",
       "pass aborts=0 cpu_id=0x2 mm_cid=0x0 t1.cpu_id=0x3 t1.mm_cid=0x1",
       "pass aborts=0 cpu_id=0x2 mm_cid=0x0 t1.cpu_id=0x3 t1.mm_cid=0x1"});
  rows.push_back(
      {"6.4-6.18 keep a concurrency ID per CPU (pcpu_cid, lazy put): a thread switched out and in again on its CPU "
       "after another thread exited keeps the CPU's ID 1; 6.3's allocator (the 6.19 model's) gives the lowest free "
       "ID 0 (review finding F9)",
       "kernel/sched/sched.h mm_cid_get(), mm_cid_put_lazy() (6.4-6.18); sched_mm_cid_exit_signals() -> "
       "mm_cid_put() (kernel/sched/core.c)",
       [] { return CidAfterExit(2); },
       [](const Scenario& s, ScheduleMaker& m) { m.Preempt(1, Pc(s, "second", "probe")); },
       "pass aborts=0 t1.mm_cid=0x0", "pass aborts=0 t1.mm_cid=0x0", "pass aborts=0 t1.mm_cid=0x0",
       "pass aborts=0 t1.mm_cid=0x1"});
  rows.push_back(
      {"A migrating thread takes its CPU's ID along when the destination CPU has none and no thread of the process "
       "runs on the source (6.4-6.18): 1 on CPU 2 after the holder of 0 exited; 6.3: the lowest free, 0",
       "kernel/sched/core.c sched_mm_cid_migrate_to(), __sched_mm_cid_migrate_from_try_steal_cid()",
       [] { return CidAfterExit(3); },
       [](const Scenario& s, ScheduleMaker& m) { m.Migrate(1, Pc(s, "second", "probe"), 2); },
       "pass aborts=0 t1.mm_cid=0x0", "pass aborts=0 t1.mm_cid=0x0", "pass aborts=0 t1.mm_cid=0x0",
       "pass aborts=0 t1.mm_cid=0x1"});
  return rows;
}

TEST(KernelAbiTest, RuleTable) {
  for (const Row& row : Rows()) {
    SCOPED_TRACE(std::string(row.rule) + " [" + row.source + "]");
    const Scenario s = row.scenario();
    const std::string on_cid = row.on_cid.empty() ? row.on_60 : row.on_cid;
    for (const auto& [k, want] : {std::pair{k418, row.on_418}, std::pair{k60, row.on_60}, std::pair{kCid, on_cid},
                                  std::pair{k619, row.on_619}}) {
      SCOPED_TRACE(KernelModelName(k));
      ScheduleMaker m(s, k);
      row.schedule(s, m);
      const ExecutionResult r = m.Run();
      EXPECT_EQ(Describe(s, r), want) << r.message;
    }
  }
}

TEST(KernelAbiTest, EveryModelHasItsAbiAndNamesParseBack) {
  ASSERT_EQ(AllAbis().size(), 5u);  // rfc2015, 4.18, 6.0, mm_cid, 6.19
  for (const KernelAbi* abi : AllAbis()) {
    EXPECT_EQ(&AbiFor(abi->info().model), abi);
    std::string why;
    const auto v = ParseKernelVersion(abi->info().name, &why);
    ASSERT_TRUE(v.has_value()) << why;
    EXPECT_EQ(v->model, abi->info().model);
  }
  std::string why;
  EXPECT_FALSE(ParseKernelVersion("7.0", &why).has_value());
  EXPECT_NE(why.find("6.19"), std::string::npos) << why;
}

// tcmalloc issue 292 as a built-in: exhaustive search passes on 4.18 and 6.0
// and finds the failure on 6.19, whose replay shows the membarrier IPI to the
// worker with no ID write after it and a push into the retired slab 0.
TEST(KernelAbiTest, TcmallocCachedSlabsPassesUpTo618AndFailsOn619) {
  const BuiltinScenario* b = FindBuiltinScenario("tcmalloc_cached_slabs");
  ASSERT_NE(b, nullptr);
  const Scenario s = ParseScenario(b->text, b->path);
  EXPECT_EQ(s.ExpectedOn(k60), Verdict::kPass);
  EXPECT_EQ(s.ExpectedOn(k619), Verdict::kPropertyFailed);
  for (KernelModel k : {k418, k60, k619}) {
    SCOPED_TRACE(KernelModelName(k));
    ExploreOptions o;
    o.run.kernel = rules::Kernel(k);
    o.bounds.max_events = 1;  // rseqmc check's default
    const ExploreResult r = Explore(s, o);
    if (k != k619) {
      EXPECT_FALSE(r.failure.has_value()) << r.failure->message;
      EXPECT_TRUE(r.complete);
      continue;
    }
    ASSERT_TRUE(r.failure.has_value());
    EXPECT_EQ(r.failure->verdict, Verdict::kPropertyFailed);
    // Without injected events the only way is the resizer's own membarrier.
    o.bounds.max_events = 0;
    const ExploreResult r0 = Explore(s, o);
    ASSERT_TRUE(r0.failure.has_value());
    EXPECT_EQ(r0.failure->schedule.kernel, k619);
    RunOptions ro;
    ro.kernel = rules::Kernel(k);
    ro.record_trace = true;
    ReplayScheduler replay(r0.failure->schedule);
    Simulator sim(s, ro);
    const ExecutionResult e = sim.Run(replay);
    EXPECT_EQ(e.verdict, Verdict::kPropertyFailed);
    size_t ipi = e.trace.size();
    for (size_t i = 0; i < e.trace.size(); ++i) {
      if (e.trace[i].kind == TraceKind::kIpi && e.trace[i].thread == 0) ipi = i;
    }
    ASSERT_LT(ipi, e.trace.size()) << "no membarrier IPI reached the worker";
    for (size_t i = ipi; i < e.trace.size(); ++i) {
      EXPECT_FALSE(e.trace[i].kind == TraceKind::kIdUpdate && e.trace[i].thread == 0) << "IDs written at " << i;
    }
  }
}

// mm_cid_counter (per-mm_cid counters, librseq RSEQ_PERCPU_MM_CID): passes
// where the kernel writes mm_cid (6.3-6.18, 6.19) and loses an increment
// where it does not (4.18-6.2: every thread reads 0), with no event needed.
TEST(KernelAbiTest, MmCidCounterPassesWhereTheKernelWritesMmCid) {
  const BuiltinScenario* b = FindBuiltinScenario("mm_cid_counter");
  ASSERT_NE(b, nullptr);
  const Scenario s = ParseScenario(b->text, b->path);
  for (KernelModel k : {k418, k60, kCid, k619}) {
    SCOPED_TRACE(KernelModelName(k));
    const bool writes = k == kCid || k == k619;
    EXPECT_EQ(s.ExpectedOn(k), writes ? Verdict::kPass : Verdict::kPropertyFailed);
    ExploreOptions o;
    o.run.kernel = rules::Kernel(k);
    o.bounds.max_events = 1;
    const ExploreResult r = Explore(s, o);
    if (writes) {
      EXPECT_FALSE(r.failure.has_value()) << r.failure->message;
      EXPECT_TRUE(r.complete);
      continue;
    }
    ASSERT_TRUE(r.failure.has_value());
    EXPECT_EQ(r.failure->verdict, Verdict::kPropertyFailed);
    o.bounds.max_events = 0;  // the interleaving of the CPUs alone loses an increment
    const ExploreResult r0 = Explore(s, o);
    ASSERT_TRUE(r0.failure.has_value());
    EXPECT_EQ(r0.failure->verdict, Verdict::kPropertyFailed);
  }
}

// One exploration shared by ABIs that a scenario cannot tell apart
// (ExploreResult::rule_sensitivity, `rseqmc check`): percpu_counter records
// no rule in which 4.18, 6.0 and mm_cid differ, and separate explorations
// under each give the same executions and verdict; mm_cid_counter records
// kRuleNodeAndMmCid (it reads mm_cid, which only mm_cid writes), so 4.18 and
// 6.0 are explored on their own, with another verdict; a flag inside a
// section records kRuleNoRestartFlags (4.18 honours it, 6.0 kills).
TEST(KernelAbiTest, RuleSensitivityTellsWhichAbisCanShareAnExploration) {
  auto explore = [](const Scenario& s, KernelModel k) {
    ExploreOptions o;
    o.run.kernel = rules::Kernel(k);
    o.bounds.max_events = 1;
    return Explore(s, o);
  };
  const uint32_t cid_vs_418 = *AbiFor(kCid).RulesDifferingFrom(AbiFor(k418));
  const uint32_t cid_vs_60 = *AbiFor(kCid).RulesDifferingFrom(AbiFor(k60));
  EXPECT_EQ(cid_vs_60, uint32_t{kRuleNodeAndMmCid});
  EXPECT_EQ(cid_vs_418, kRuleNodeAndMmCid | kRuleNoRestartFlags | kRuleAddressLimitChecks | kRuleClearRseqCsOnRegister);
  EXPECT_FALSE(AbiFor(kCid).RulesDifferingFrom(AbiFor(k619)).has_value());
  EXPECT_FALSE(AbiFor(k619).RulesDifferingFrom(AbiFor(k60)).has_value());

  const Scenario counter = ParseScenario(FindBuiltinScenario("percpu_counter")->text, "percpu_counter.rsq");
  const ExploreResult shared = explore(counter, kCid);
  EXPECT_EQ(shared.rule_sensitivity & cid_vs_418, 0u);
  for (KernelModel k : {k418, k60}) {
    SCOPED_TRACE(KernelModelName(k));
    const ExploreResult own = explore(counter, k);
    EXPECT_EQ(own.executions, shared.executions);
    EXPECT_EQ(own.failure.has_value(), shared.failure.has_value());
    EXPECT_TRUE(own.complete);
  }

  const Scenario cid = ParseScenario(FindBuiltinScenario("mm_cid_counter")->text, "mm_cid_counter.rsq");
  const ExploreResult on_cid = explore(cid, kCid);
  EXPECT_NE(on_cid.rule_sensitivity & kRuleNodeAndMmCid, 0u);
  EXPECT_FALSE(on_cid.failure.has_value());
  EXPECT_TRUE(explore(cid, k60).failure.has_value());

  const Scenario flagged = Section(kRseqCsFlagNoRestartOnPreempt, 0, [](FunctionBuilder& f) { f.Nop(); });
  const ExploreResult on_60 = explore(flagged, k60);
  EXPECT_NE(on_60.rule_sensitivity & kRuleNoRestartFlags, 0u);
  EXPECT_NE(explore(flagged, k418).failure.has_value(), on_60.failure.has_value());
}

}  // namespace
}  // namespace rseqmc
