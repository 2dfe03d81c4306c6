// The rseq ABI of Linux 6.3-6.18: the 6.0 legacy rules plus the struct rseq
// fields node_id (offset 20) and mm_cid (offset 24). This machine's kernel
// (6.18); `--kernel mm_cid`, or any version 6.3..6.18.
//
// Follows kernel/rseq.c of 6.3 (the commits "rseq: Extend struct rseq with
// numa node id" and "rseq: Extend struct rseq with per-memory-map concurrency
// id", Nov 2022, merged for 6.3) to 6.18 (@1260ed77):
//   * rseq_update_cpu_node_id(): on every evaluation (the legacy
//     __rseq_handle_notify_resume(), sim/kernel/legacy.cc) it writes
//     cpu_id_start, cpu_id, node_id = cpu_to_node(cpu) and
//     mm_cid = task_mm_cid(t), all four with unsafe_put_user() in one
//     user_access block. It writes them for the original 32-byte
//     registration too: node_id and mm_cid lie inside ORIG_RSEQ_SIZE (32),
//     in what 4.18-6.2 called padding. AT_RSEQ_FEATURE_SIZE (28 = offsetofend
//     mm_cid, rseq_feature_size) only tells user space that the kernel fills
//     them; a registration of rseq_len 32 is accepted and filled the same.
//     Checked against 6.3's kernel/rseq.c itself (not only the 6.13-6.18
//     patches this was first read from): sys_rseq() accepts rseq_len ==
//     ORIG_RSEQ_SIZE (32-byte aligned) or, aligned to __alignof__(struct
//     rseq), rseq_len >= offsetof(struct rseq, end) (28), else EINVAL;
//     rseq_update_cpu_node_id() writes the four fields with no test of
//     rseq_len (only fields after ORIG_RSEQ_SIZE would need one, its comment
//     says); 6.3 has no rseq_validate_ro_fields() (the CONFIG_DEBUG_RSEQ
//     check of the read-only fields came later and is not modelled).
//   * rseq_reset_rseq_cpu_node_id() at unregistration: cpu_id_start = 0,
//     cpu_id = RSEQ_CPU_ID_UNINITIALIZED, node_id = 0, mm_cid = 0.
//   * node_id: cpu_to_node(); the scenario's `nodes N` statement places CPU
//     c on node c * N / cpus (default: one node, node_id 0 everywhere).
//   * mm_cid: the concurrency ID the scheduler gives the thread when it is
//     switched in (context_switch() -> switch_mm_cid() -> mm_cid_get(),
//     kernel/sched/sched.h); the allocator is below.
// Every other rule (event mask, descriptor validation, flags, lazy clear,
// registration) is the 6.0 ABI's (sim/kernel/abi_6_0.cc, LegacyRules{}).
//
// The concurrency-ID allocator: 6.13-6.18's (kernel/sched/sched.h and
// kernel/sched/core.c as changed by 223baf9d17f2 "sched: Fix performance
// regression introduced by mm_cid" (6.4, per-CPU IDs and lazy put) and
// 02d954c0fdf9 "sched: Compact RSEQ concurrency IDs with reduced threads and
// affinity" (6.13, recent_cid and max_nr_cid); 6.19 replaced it). The hooks:
//   * mm_cid_get() (switch-in): the CPU keeps an ID for the mm
//     (pcpu_cid->cid) after the thread leaves it; a thread switched in on a
//     CPU that holds one runs with it. Else __mm_cid_get() ->
//     __mm_cid_try_get(): max_nr_cid shrinks to min(nr_cpus_allowed,
//     mm_users); the CPU's recent_cid if below max_nr_cid and free; else
//     expansion: the IDs from max_nr_cid up while below nr_cpus_allowed and
//     mm_users (max_nr_cid grows with them), the first free; else the lowest
//     free ID (cpumask_first_zero()). The CPU's cid and recent_cid become it.
//   * mm_cid_put_lazy() (switch-out): gives the CPU's ID back only if it
//     carries MM_CID_LAZY_PUT, which only sched_mm_cid_remote_clear() (the
//     compaction below) and a migration's steal set; both run atomically
//     here, so a switch-out gives nothing back: the ID stays with the CPU.
//   * sched_mm_cid_migrate_to() (a migrated thread activated on dst): if dst
//     holds (or recently held) an ID and mm_users >= nr_cpus_allowed,
//     nothing; the src CPU's ID is taken from it ("stolen": src cid and
//     recent_cid unset) only if it is the ID the thread last ran with and no
//     thread of the mm runs on src now (__sched_mm_cid_migrate_from_fetch_cid,
//     __sched_mm_cid_migrate_from_try_steal_cid; else last_mm_cid := -1);
//     the stolen ID moves to dst (cid and recent_cid) if dst has none, else
//     it goes back to the cidmask (__mm_cid_put()).
//   * sched_mm_cid_exit_signals() (exit): mm_cid_put(): the exiting thread's
//     CPU gives its ID back (cid unset, recent_cid kept); mm_users drops
//     with exit_mm() before the CPU's next thread is switched in.
// nr_cpus_allowed is the scenario's CPU count: the process starts allowed on
// all of them (the cross-check forks it so) and mm_cpus_allowed only grows
// (mm_set_cpus_allowed()). mm_users counts the threads that have not exited.
//
// Not modelled: the periodic compaction task_mm_cid_work() (6.4-6.16 from
// task_tick_mm_cid()'s task_work, 6.17-6.18 a work item): at most once per
// MM_CID_SCAN_DELAY (100 ms) after the mm was created it clears the IDs of
// CPUs whose mm thread has not run for SCHED_MM_CID_PERIOD_NS (100 ms,
// sched_mm_cid_remote_clear_old()) and those >= the cidmask's weight
// (sched_mm_cid_remote_clear_weight()). Every clear is of a CPU on which no
// thread of the mm runs at that moment, or sets MM_CID_LAZY_PUT for the
// running one, which keeps its ID until it is switched out; the next thread
// switched in there then allocates afresh. Injecting it needs a clock the
// explored schedules do not have (100 ms of wall time, which no scenario
// runs); a program that is correct only while a CPU keeps its ID (a slot
// indexed by an ID read before a switch-out and used after it, not
// compared at start_ip) can therefore pass here and fail on a kernel that
// compacted in between. The cross-check's runs are fresh processes that end
// well within the first 100 ms, where no scan runs.
//
// Where 6.3-6.12 differ (approximated by this model): 6.3 gives an ID per
// running thread (lowest free at switch-in, put at switch-out: the default
// hooks of sim/kernel/abi.cc, which the 6.19 model uses); 6.4-6.12 have the
// per-CPU IDs and lazy put but no recent_cid nor max_nr_cid (a CPU without
// an ID takes the lowest free one) and never drop a migrating thread's src
// recent_cid.
#include <algorithm>
#include <bit>

#include "sim/kernel/legacy.h"
#include "sim/machine.h"

namespace rseqmc {
namespace {

// __mm_cid_put() (kernel/sched/sched.h).
void MmCidPut(MmCidState& st, int cid) {
  if (cid >= 0) st.cidmask &= ~(uint64_t{1} << cid);
}

// __mm_cid_try_get() (6.13-6.18; never fails here: no concurrent remote clear).
int MmCidTryGet(Machine& m, int cpu) {
  MmCidState& st = m.mmcid();
  const int nr_cpus_allowed = m.num_cpus();
  const int mm_users = m.mm_users();
  st.max_nr_cid = std::min(st.max_nr_cid, std::min(nr_cpus_allowed, mm_users));
  auto take = [&](int cid) {
    if ((st.cidmask >> cid) & 1) return false;
    st.cidmask |= uint64_t{1} << cid;
    return true;
  };
  const int recent = st.recent_cid[cpu];
  if (recent != MmCidState::kUnset && recent < st.max_nr_cid && take(recent)) return recent;
  for (int cid = st.max_nr_cid; cid < nr_cpus_allowed && cid < mm_users; ++cid) {
    st.max_nr_cid = cid + 1;
    if (take(cid)) return cid;
  }
  const int cid = std::countr_zero(~st.cidmask);  // cpumask_first_zero()
  st.cidmask |= uint64_t{1} << cid;
  return cid;
}

// Is a thread of the mm running on `cpu` (rq->curr->mm_cid_active && same mm)?
bool MmThreadRunsOn(Machine& m, int cpu) { return m.cpu_running(cpu) >= 0; }

class AbiMmCid final : public LegacyAbi {
 public:
  constexpr AbiMmCid() : LegacyAbi(LegacyRules{}) {}

  // mm_cid_get(): the CPU's ID, else __mm_cid_get().
  int MmCidGet(Machine& m, int t, int cpu) const override {
    MmCidState& st = m.mmcid();
    int cid = st.pcpu_cid[cpu];
    if (cid == MmCidState::kUnset) {
      cid = MmCidTryGet(m, cpu);
      st.pcpu_cid[cpu] = static_cast<int8_t>(cid);
      st.recent_cid[cpu] = static_cast<int8_t>(cid);
    }
    m.kthread(t).last_mm_cid = cid;  // switch_mm_cid(): next->last_mm_cid = next->mm_cid
    return cid;
  }
  // mm_cid_put_lazy(): no MM_CID_LAZY_PUT is ever left set (see above).
  void MmCidSwitchOut(Machine&, int, int) const override {}
  // sched_mm_cid_migrate_to() (kernel/sched/core.c).
  void SchedMmCidMigrateTo(Machine& m, int t, int src, int dst) const override {
    MmCidState& st = m.mmcid();
    SimThread& th = m.kthread(t);
    const bool dst_cid_is_set = st.pcpu_cid[dst] != MmCidState::kUnset || st.recent_cid[dst] != MmCidState::kUnset;
    if (dst_cid_is_set && m.mm_users() >= m.num_cpus()) return;
    // __sched_mm_cid_migrate_from_fetch_cid() / _try_steal_cid().
    const int src_cid = st.pcpu_cid[src];
    if (th.last_mm_cid == -1 || src_cid == MmCidState::kUnset || th.last_mm_cid != src_cid) return;
    if (MmThreadRunsOn(m, src)) {
      th.last_mm_cid = -1;
      return;
    }
    st.pcpu_cid[src] = MmCidState::kUnset;
    st.recent_cid[src] = MmCidState::kUnset;
    if (dst_cid_is_set) {
      MmCidPut(st, src_cid);
      return;
    }
    st.pcpu_cid[dst] = static_cast<int8_t>(src_cid);
    st.recent_cid[dst] = static_cast<int8_t>(src_cid);
  }
  // sched_mm_cid_exit_signals() -> mm_cid_put(): the CPU's ID is unset.
  void SchedMmCidExitSignals(Machine& m, int t, int cpu) const override {
    MmCidState& st = m.mmcid();
    MmCidPut(st, st.pcpu_cid[cpu]);
    st.pcpu_cid[cpu] = MmCidState::kUnset;
    m.kthread(t).last_mm_cid = -1;
  }
  const KernelAbiInfo& info() const override {
    static constexpr KernelAbiInfo kInfo{
        KernelModel::kMmCid, "mm_cid", "6.3-6.18",
        "6.0's legacy rules; node_id and mm_cid written with the CPU IDs; mm_cid from 6.13-6.18's per-CPU "
        "concurrency IDs (kept by the CPU, recent_cid, expansion to min(CPUs, threads), moved on migration)",
        "kernel/rseq.c@1260ed77: rseq_update_cpu_node_id; kernel/sched/sched.h: mm_cid_get, __mm_cid_try_get, "
        "mm_cid_put_lazy; kernel/sched/core.c: sched_mm_cid_migrate_to, sched_mm_cid_exit_signals"};
    return kInfo;
  }
};

}  // namespace

const KernelAbi& AbiMmCidInstance() {
  static const AbiMmCid abi;
  return abi;
}

}  // namespace rseqmc
