// The rseq ABI of Linux 6.0-6.2 (legacy, before node_id and mm_cid).
//
// Follows kernel/rseq.c of 6.0 (torvalds/linux@0190e4198e47, NO_RESTART flags
// deprecated) to 6.2: __rseq_handle_notify_resume(), rseq_ip_fixup(),
// rseq_get_rseq_cs(), rseq_need_restart(), rseq_update_cpu_id(),
// rseq_reset_rseq_cpu_id(), sys_rseq(); and
// include/linux/sched.h rseq_preempt() / rseq_migrate() /
// rseq_signal_deliver(). The hooks are sim/kernel/legacy.cc's, with:
//   * any RSEQ_CS_FLAG_* inside a section -> SIGSEGV (reference §2.9);
//   * the descriptor validated on every evaluation with a non-zero rseq_cs,
//     including the TASK_SIZE and overflow checks (reference §2.6, §7 rule 15);
//   * cpu_id_start and cpu_id rewritten on every evaluation
//     (rseq_update_cpu_id(), rule 13) - what tcmalloc relied on (tcmalloc
//     issue 292);
//   * struct rseq has no node_id / mm_cid: the kernel never writes offsets
//     20..31 (both fields came with 6.3, commits "rseq: Extend struct rseq
//     with numa node id" and "... per-memory-map concurrency id"; reference
//     §2.13); unregistration resets cpu_id_start and cpu_id only;
//   * registration clears a stale rseq_cs (fd881d0a085f, a 6.15 fix
//     backported to the 6.1 stable series, rule 3).
// 6.3-6.18 are the mm_cid ABI (sim/kernel/abi_mm_cid.cc): the same rules
// plus node_id and mm_cid.
#include "sim/kernel/legacy.h"

namespace rseqmc {
namespace {

class Abi60 final : public LegacyAbi {
 public:
  constexpr Abi60() : LegacyAbi(LegacyRules{.node_and_mm_cid = false}) {}
  const KernelAbiInfo& info() const override {
    static constexpr KernelAbiInfo kInfo{
        KernelModel::kLegacy60, "6.0", "6.0-6.2",
        "legacy event mask; flags in a section -> SIGSEGV; descriptor validated on every evaluation; "
        "cpu_id_start/cpu_id rewritten on every evaluation; no node_id/mm_cid",
        "kernel/rseq.c@0190e4198e47: __rseq_handle_notify_resume, rseq_ip_fixup, rseq_update_cpu_id"};
    return kInfo;
  }
};

}  // namespace

const KernelAbi& Abi60Instance() {
  static const Abi60 abi;
  return abi;
}

}  // namespace rseqmc
