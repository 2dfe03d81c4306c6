// The rseq ABI of Linux 6.0-6.18 (legacy; this machine's kernel, 6.18).
//
// Follows kernel/rseq.c of 6.0 (torvalds/linux@0190e4198e47, NO_RESTART flags
// deprecated) to 6.18 (@1260ed77): __rseq_handle_notify_resume(),
// rseq_ip_fixup(), rseq_get_rseq_cs(), rseq_need_restart(),
// rseq_update_cpu_node_id(), rseq_reset_rseq_cpu_node_id(), sys_rseq(); and
// include/linux/sched.h rseq_preempt() / rseq_migrate() /
// rseq_signal_deliver(). The hooks are sim/kernel/legacy.cc's, with:
//   * any RSEQ_CS_FLAG_* inside a section -> SIGSEGV (reference §2.9);
//   * the descriptor validated on every evaluation with a non-zero rseq_cs,
//     including the TASK_SIZE and overflow checks (reference §2.6, §7 rule 15);
//   * all IDs (cpu_id_start, cpu_id, node_id, mm_cid) rewritten on every
//     evaluation (rseq_update_cpu_node_id(), rule 13) - what tcmalloc relied
//     on (tcmalloc issue 292);
//   * registration clears a stale rseq_cs (fd881d0a085f, rule 3).
// Granularity: node_id and mm_cid (added in 6.3) are written for 6.0-6.2 too.
#include "sim/kernel/legacy.h"

namespace rseqmc {
namespace {

class Abi60 final : public LegacyAbi {
 public:
  constexpr Abi60() : LegacyAbi(LegacyRules{}) {}
  const KernelAbiInfo& info() const override {
    static constexpr KernelAbiInfo kInfo{
        KernelModel::kLegacy60, "6.0", "6.0-6.18",
        "legacy event mask; flags in a section -> SIGSEGV; descriptor validated on every evaluation; "
        "IDs rewritten on every evaluation",
        "kernel/rseq.c@1260ed77: __rseq_handle_notify_resume, rseq_ip_fixup, rseq_update_cpu_node_id"};
    return kInfo;
  }
};

}  // namespace

const KernelAbi& Abi60Instance() {
  static const Abi60 abi;
  return abi;
}

}  // namespace rseqmc
