// The legacy rseq ABI (kernel/rseq.c before the 6.19 rework), shared by the
// 4.18-5.19, 6.0-6.18 and mm_cid ABI modules: the event mask set by
// rseq_preempt() / rseq_migrate() / rseq_signal_deliver(), the evaluation in
// __rseq_handle_notify_resume() -> rseq_ip_fixup() -> rseq_get_rseq_cs() /
// rseq_need_restart() / clear_rseq_cs(), and rseq_update_cpu_node_id() on
// every evaluation (reference/rseq-semantics.md §2.5, §2.6, §7 rules 5-8,
// 12-15, 18). What differs between the legacy kernels is a LegacyRules value;
// each ABI file states its own with the source of every difference.
#ifndef RSEQMC_SIM_KERNEL_LEGACY_H_
#define RSEQMC_SIM_KERNEL_LEGACY_H_

#include <cstdint>

#include "sim/kernel/abi.h"

namespace rseqmc {

// The rules in which the legacy kernels differ.
struct LegacyRules {
  // 4.18-5.19: RSEQ_CS_FLAG_NO_RESTART_ON_* in rseq->flags | rseq_cs->flags
  // inhibit the restart for their event class (rseq_need_restart()); 6.0+:
  // any flag inside a section is SIGSEGV (reference §2.9).
  bool no_restart_flags = false;
  // rseq_get_rseq_cs() checks start_ip, start_ip + post_commit_offset and
  // abort_ip against TASK_SIZE and the sum for overflow: not in 4.18
  // (kernel/rseq.c@d82991a8688a checks version, abort_ip outside the section
  // and the signature only); present in the 6.x kernels.
  bool address_limit_checks = true;
  // struct rseq has node_id and mm_cid, written with the CPU IDs (6.3+).
  bool node_and_mm_cid = true;
  // sys_rseq() registration clears a non-NULL rseq_cs (6.15 and the 5.10+
  // stable backports of fd881d0a085f, reference §0; rule 3).
  bool clear_rseq_cs_on_register = true;
};

// The legacy hooks, driven by a LegacyRules value; a concrete ABI adds its
// info().
class LegacyAbi : public KernelAbi {
 public:
  explicit constexpr LegacyAbi(LegacyRules rules) : rules_(rules) {}
  bool HasNodeAndMmCid() const override { return rules_.node_and_mm_cid; }
  // Another legacy ABI differs in the LegacyRules fields that differ.
  std::optional<uint32_t> RulesDifferingFrom(const KernelAbi& other) const override;
  void RseqStartRegistered(Machine& m, int t, bool running) const override;
  void IrqEntryFromUser(Machine&, int) const override {}
  void RseqPreempt(Machine& m, int t) const override;
  void RseqMigrate(Machine& m, int t) const override;
  void IpiRseq(Machine& m, int t) const override;
  bool RseqSignalDeliver(Machine& m, int t) const override;
  bool RseqHandleNotifyResume(Machine& m, int t) const override;
  int64_t SysRseqRegister(Machine& m, int t, uint32_t sig) const override;
  int64_t SysRseqUnregister(Machine& m, int t, uint32_t sig) const override;

 private:
  // rseq_ip_fixup() and the ID update; false if the thread got SIGSEGV.
  bool Evaluate(Machine& m, int t, bool signal_delivery) const;
  LegacyRules rules_;
};

}  // namespace rseqmc

#endif  // RSEQMC_SIM_KERNEL_LEGACY_H_
