// The rseq ABI of Linux 4.18-5.19 (legacy, NO_RESTART flags honoured).
//
// Follows kernel/rseq.c as merged in 4.18 (torvalds/linux@d82991a8688a:
// __rseq_handle_notify_resume(), rseq_ip_fixup(), rseq_get_rseq_cs(),
// rseq_need_restart(), rseq_update_cpu_id(), rseq_reset_rseq_cpu_id(),
// sys_rseq()) and include/linux/sched.h rseq_preempt() / rseq_migrate() /
// rseq_signal_deliver(); the hooks are sim/kernel/legacy.cc's. The rules in
// which it differs from 6.0-6.18, with their sources:
//   * NO_RESTART_ON_{PREEMPT,SIGNAL,MIGRATE} in rseq->flags | rseq_cs->flags
//     inhibit the restart for their event class; NO_RESTART_ON_SIGNAL
//     without both others is EINVAL -> SIGSEGV (rseq_need_restart(),
//     reference/rseq-semantics.md §2.9);
//   * rseq_get_rseq_cs() has no TASK_SIZE checks and no overflow check of
//     start_ip + post_commit_offset (added after 4.18, reference §2.6 step 2);
//   * struct rseq has no node_id / mm_cid (added in 6.3, reference §2.13);
//     unregistration resets cpu_id_start and cpu_id only;
//   * registration does not clear a stale rseq_cs (fd881d0a085f is a 6.15 fix
//     backported to 5.10+ stable only, reference §0).
// Granularity: one model for 4.18-5.19; membarrier's RSEQ command (5.10) is
// offered throughout.
#include "sim/kernel/legacy.h"

namespace rseqmc {
namespace {

class Abi418 final : public LegacyAbi {
 public:
  constexpr Abi418()
      : LegacyAbi(LegacyRules{.no_restart_flags = true,
                              .address_limit_checks = false,
                              .node_and_mm_cid = false,
                              .clear_rseq_cs_on_register = false}) {}
  const KernelAbiInfo& info() const override {
    static constexpr KernelAbiInfo kInfo{
        KernelModel::kLegacy418, "4.18", "4.18-5.19",
        "legacy event mask; NO_RESTART_ON_* flags honoured; no TASK_SIZE checks; no node_id/mm_cid",
        "kernel/rseq.c@d82991a8688a: rseq_ip_fixup, rseq_get_rseq_cs, rseq_need_restart, sys_rseq"};
    return kInfo;
  }
};

}  // namespace

const KernelAbi& Abi418Instance() {
  static const Abi418 abi;
  return abi;
}

}  // namespace rseqmc
