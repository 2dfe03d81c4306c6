// The legacy rseq hooks (see legacy.h). Sources: kernel/rseq.c at
// d82991a8688a (4.18), 0190e4198e47 (6.0 flag deprecation) and 1260ed77
// (6.x): __rseq_handle_notify_resume(), rseq_ip_fixup(), rseq_get_rseq_cs(),
// rseq_need_restart(), clear_rseq_cs(), rseq_update_cpu_node_id(),
// rseq_reset_rseq_cpu_node_id(), sys_rseq(); include/linux/sched.h
// rseq_preempt(), rseq_migrate(), rseq_signal_deliver().
#include "sim/kernel/legacy.h"

#include <string>

#include "sim/machine.h"

namespace rseqmc {

std::optional<uint32_t> LegacyAbi::RulesDifferingFrom(const KernelAbi& other) const {
  const auto* o = dynamic_cast<const LegacyAbi*>(&other);
  if (o == nullptr) return std::nullopt;
  const LegacyRules& a = rules_;
  const LegacyRules& b = o->rules_;
  return (a.no_restart_flags != b.no_restart_flags ? kRuleNoRestartFlags : 0u) |
         (a.address_limit_checks != b.address_limit_checks ? kRuleAddressLimitChecks : 0u) |
         (a.node_and_mm_cid != b.node_and_mm_cid ? kRuleNodeAndMmCid : 0u) |
         (a.clear_rseq_cs_on_register != b.clear_rseq_cs_on_register ? kRuleClearRseqCsOnRegister : 0u);
}

void LegacyAbi::RseqStartRegistered(Machine& m, int t, bool running) const {
  // glibc's registration: sys_rseq() wrote the IDs of the thread's CPU; a
  // running thread's mm_cid is its current one (rule 3).
  SimThread& th = m.kthread(t);
  if (running) m.NoteIdsWrite(th.rseq_area + kRseqOffMmCid, static_cast<uint32_t>(th.mm_cid));
  if (running && rules_.node_and_mm_cid) {
    m.UserStore(th.rseq_area + kRseqOffMmCid, static_cast<uint32_t>(th.mm_cid), 4);
  }
}

// rseq_preempt(): RSEQ_EVENT_PREEMPT + TIF_NOTIFY_RESUME (rule 8).
void LegacyAbi::RseqPreempt(Machine& m, int t) const {
  SimThread& th = m.kthread(t);
  th.event_mask |= kEventPreempt;
  th.notify_resume = true;
}

// rseq_migrate(): RSEQ_EVENT_MIGRATE + TIF_NOTIFY_RESUME (rule 11).
void LegacyAbi::RseqMigrate(Machine& m, int t) const {
  SimThread& th = m.kthread(t);
  th.event_mask |= kEventMigrate;
  th.notify_resume = true;
}

// ipi_rseq(): rseq_preempt(current) (rule 24).
void LegacyAbi::IpiRseq(Machine& m, int t) const { RseqPreempt(m, t); }

// rseq_signal_deliver(): RSEQ_EVENT_SIGNAL, then __rseq_handle_notify_resume()
// synchronously, before setup_rt_frame() writes the frame (rules 8, 12, 25).
bool LegacyAbi::RseqSignalDeliver(Machine& m, int t) const {
  m.kthread(t).event_mask |= kEventSignal;
  return Evaluate(m, t, true);
}

bool LegacyAbi::RseqHandleNotifyResume(Machine& m, int t) const { return Evaluate(m, t, false); }

namespace {

// rseq_get_rseq_cs()'s checks of a descriptor read from user memory; the
// reason for SIGSEGV, or nullptr if it is valid.
const char* CheckDescriptor(uint32_t version, uint64_t start_ip, uint64_t post_commit_offset, uint64_t abort_ip,
                            bool address_limit_checks) {
  if (address_limit_checks && (start_ip >= kTaskSize || start_ip + post_commit_offset >= kTaskSize ||
                               abort_ip >= kTaskSize)) {
    return "rseq_cs address above TASK_SIZE";
  }
  if (version > 0) return "rseq_cs version is not 0";
  if (address_limit_checks && start_ip + post_commit_offset < start_ip) {
    return "rseq_cs start_ip + post_commit_offset overflows";
  }
  if (abort_ip - start_ip < post_commit_offset) return "abort_ip lies inside the critical section";
  return nullptr;
}

}  // namespace

// __rseq_handle_notify_resume() -> rseq_ip_fixup(), then
// rseq_update_cpu_node_id() (rules 5-7, 13, 15, 18).
bool LegacyAbi::Evaluate(Machine& m, int t, bool signal_delivery) const {
  SimThread& th = m.kthread(t);
  if (th.rseq_area == 0) return true;
  const uint64_t area = th.rseq_area;
  const uint64_t ip = m.UserIp(t);
  const uint64_t ptr = m.Peek(area + kRseqOffRseqCs, 8);
  m.TouchUser(area + kRseqOffRseqCs, 8, ptr != 0);  // read; cleared (written) when set
  const char* segv = nullptr;
  std::string why;
  if (ptr != 0) {
    // rseq_get_rseq_cs(): validated on every evaluation, even with ip outside
    // the section (rule 15).
    if (ptr >= kTaskSize) m.NoteRuleSensitivity(kRuleAddressLimitChecks);
    if (rules_.address_limit_checks && ptr >= kTaskSize) {
      segv = "rseq_cs pointer above TASK_SIZE";
    } else if (!m.UserReadable(ptr, kRseqCsBytes)) {
      segv = "rseq_cs points to unreadable memory (EFAULT)";
    } else {
      m.TouchUser(ptr, kRseqCsBytes, false);
      const uint32_t version = static_cast<uint32_t>(m.Peek(ptr + 0, 4));
      const uint32_t cs_flags = static_cast<uint32_t>(m.Peek(ptr + 4, 4));
      const uint64_t start_ip = m.Peek(ptr + 8, 8);
      const uint64_t post_commit_offset = m.Peek(ptr + 16, 8);
      const uint64_t abort_ip = m.Peek(ptr + 24, 8);
      segv = CheckDescriptor(version, start_ip, post_commit_offset, abort_ip, rules_.address_limit_checks);
      if (segv != CheckDescriptor(version, start_ip, post_commit_offset, abort_ip, !rules_.address_limit_checks)) {
        m.NoteRuleSensitivity(kRuleAddressLimitChecks);
      }
      if (segv == nullptr) segv = CheckAbortSignature(m, abort_ip, th.rseq_sig, &why);
      if (segv == nullptr) {
        if (ip - start_ip < post_commit_offset) {
          // In the section (rule 5: unsigned half-open test, in_rseq_cs()).
          // rseq_need_restart() (rules 6, 18).
          const uint32_t flags = cs_flags | static_cast<uint32_t>(m.UserLoad(area + kRseqOffFlags, 4));
          if (flags != 0) m.NoteRuleSensitivity(kRuleNoRestartFlags);
          bool restart;
          if (rules_.no_restart_flags) {
            constexpr uint32_t kPm = kRseqCsFlagNoRestartOnPreempt | kRseqCsFlagNoRestartOnMigrate;
            if ((flags & kRseqCsFlagNoRestartOnSignal) && (flags & kPm) != kPm) {
              segv = "NO_RESTART_ON_SIGNAL without NO_RESTART_ON_PREEMPT|MIGRATE (EINVAL)";
            }
            restart = (th.event_mask & ~flags) != 0;
          } else {
            if (flags != 0) segv = "deprecated/unknown rseq flags inside a critical section (6.0+)";
            restart = th.event_mask != 0;
          }
          if (segv == nullptr) {
            th.event_mask = 0;
            // Abort (rule 6): rseq_cs := 0, ip := abort_ip; nothing else changes.
            if (restart && !m.AbortTo(t, abort_ip, ptr)) return false;
          }
        } else {
          // Outside: lazy clear (rule 7, clear_rseq_cs()).
          m.UserStore(area + kRseqOffRseqCs, 0, 8);
          m.RecordLazyClear(t);
        }
      }
    }
  }
  if (segv != nullptr) {
    std::string reason = std::string("rseq: ") + segv;
    if (!why.empty()) reason += " (" + why + ")";
    reason += signal_delivery ? " while delivering a signal" : "";
    m.ForceSigsegv(t, reason);
    return false;
  }
  m.WriteIds(t, rules_.node_and_mm_cid);
  return true;
}

// sys_rseq() registration (rules 1, 3): one registration per thread (same
// signature: EBUSY, another: EPERM); the IDs are written before the syscall
// returns (rseq_set_notify_resume()).
int64_t LegacyAbi::SysRseqRegister(Machine& m, int t, uint32_t sig) const {
  SimThread& th = m.kthread(t);
  if (th.rseq_area != 0) return th.rseq_sig == sig ? kErrEbusy : kErrEperm;
  th.rseq_area = m.AreaAddress(t);
  m.TouchUser(th.rseq_area, kRseqAreaBytes, true);
  th.rseq_len = kRseqAreaBytes;
  th.rseq_sig = sig;
  if (m.Peek(th.rseq_area + kRseqOffRseqCs, 8) != 0) m.NoteRuleSensitivity(kRuleClearRseqCsOnRegister);
  if (rules_.clear_rseq_cs_on_register) {
    m.UserStore(th.rseq_area + kRseqOffRseqCs, 0, 8);
    m.LogKernelClear(t);
  }
  th.notify_resume = true;
  return 0;
}

// sys_rseq(RSEQ_FLAG_UNREGISTER) (rule 4): must match (EINVAL / EPERM);
// rseq_reset_rseq_cpu_id() (4.18: the two CPU fields) /
// rseq_reset_rseq_cpu_node_id() (6.3+: also node_id and mm_cid).
int64_t LegacyAbi::SysRseqUnregister(Machine& m, int t, uint32_t sig) const {
  SimThread& th = m.kthread(t);
  if (th.rseq_area == 0) return kErrEinval;
  if (th.rseq_sig != sig) return kErrEperm;
  const uint64_t a = th.rseq_area;
  m.TouchUser(a, kRseqAreaBytes, true);
  m.UserStore(a + kRseqOffCpuIdStart, 0, 4);
  m.UserStore(a + kRseqOffCpuId, static_cast<uint32_t>(-1), 4);
  m.NoteIdsWrite(a + kRseqOffNodeId, 0);
  m.NoteIdsWrite(a + kRseqOffMmCid, 0);
  if (rules_.node_and_mm_cid) {
    m.UserStore(a + kRseqOffNodeId, 0, 4);
    m.UserStore(a + kRseqOffMmCid, 0, 4);
  }
  th.rseq_area = 0;
  th.rseq_len = 0;
  th.rseq_sig = 0;
  return 0;
}

}  // namespace rseqmc
