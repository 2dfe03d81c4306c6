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
//     them; a registration of rseq_len 32 is accepted and filled the same
//     (sys_rseq() accepts rseq_len == ORIG_RSEQ_SIZE or >= that feature size).
//   * rseq_reset_rseq_cpu_node_id() at unregistration: cpu_id_start = 0,
//     cpu_id = RSEQ_CPU_ID_UNINITIALIZED, node_id = 0, mm_cid = 0.
//   * node_id: cpu_to_node(); the scenario's `nodes N` statement places CPU
//     c on node c * N / cpus (default: one node, node_id 0 everywhere).
//   * mm_cid: the concurrency ID the scheduler gives the thread when it is
//     switched in (context_switch() -> switch_mm_cid() -> mm_cid_get(),
//     kernel/sched/sched.h); the model's allocator is KernelAbi::MmCidGet()
//     (sim/kernel/abi.cc), called by the Machine at every switch-in.
// Every other rule (event mask, descriptor validation, flags, lazy clear,
// registration) is the 6.0 ABI's (sim/kernel/abi_6_0.cc, LegacyRules{}).
//
// The concurrency-ID allocator. The model follows 6.3's mm_cid_get() ->
// __mm_cid_get(): the lowest ID not set in the process's cidmask
// (cpumask_first_zero()), taken at switch-in and given back by
// mm_cid_put() when the thread is switched out, migrates, blocks or exits.
// The IDs are therefore compacted per process, unique among the process's
// running threads and below the number of them, so below
// min(nr threads, nr allowed CPUs) - the guarantee librseq's
// rseq_current_mm_cid() users rely on. Where 6.18 differs and why the model
// is still sound for the checks rseqmc makes:
//   * 6.3's switch_mm_cid() hands prev's ID to next when both belong to the
//     mm; the model puts prev's ID back first, so next may get a lower one.
//   * 6.4-6.18 (223baf9d17f2, 7e019dcc470f, 02d954c0fdf9) keep an ID per
//     (mm, CPU) after the thread leaves the CPU (lazy put), prefer the CPU's
//     recent_cid, expand up to max_nr_cid = min(nr_cpus_allowed, mm_users)
//     and give lazily held IDs back after 100 ms (task_mm_cid_work). Which ID
//     a thread gets there depends on wall time and on what ran on the CPU
//     before: the same forced schedule gives 0 or 1 from run to run
//     (tests/replay/known_mm_cid_618.known).
//   The model picks one of the IDs the kernel may hand out (a deterministic
//   under-approximation of the value, never a value the kernel could not
//   give: a free ID below the bound), and it changes a thread's ID only at a
//   switch-in, which also raises the preempt event - as in every kernel
//   version, where a new mm_cid comes with rseq_preempt() (context switch,
//   or task_tick_mm_cid()'s recompaction). A critical section that indexes
//   by mm_cid is therefore aborted whenever its ID may have changed, in the
//   model as in the kernel; a program whose correctness depends on which
//   free ID it gets may pass here and fail on 6.18. The cross-check compares
//   verdicts, uniqueness and the range, not the values (kernel/README.md).
#include "sim/kernel/legacy.h"

namespace rseqmc {
namespace {

class AbiMmCid final : public LegacyAbi {
 public:
  constexpr AbiMmCid() : LegacyAbi(LegacyRules{}) {}
  const KernelAbiInfo& info() const override {
    static constexpr KernelAbiInfo kInfo{
        KernelModel::kMmCid, "mm_cid", "6.3-6.18",
        "6.0's legacy rules; node_id and mm_cid written with the CPU IDs; mm_cid = lowest free concurrency ID "
        "of the process at switch-in",
        "kernel/rseq.c@1260ed77: rseq_update_cpu_node_id; kernel/sched/sched.h: switch_mm_cid, mm_cid_get, "
        "__mm_cid_get (6.3 allocator)"};
    return kInfo;
  }
};

}  // namespace

const KernelAbi& AbiMmCidInstance() {
  static const AbiMmCid abi;
  return abi;
}

}  // namespace rseqmc
