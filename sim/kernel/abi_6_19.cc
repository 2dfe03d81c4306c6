// The rseq ABI of Linux 6.19 (Gleixner's rework, as released in Dec 2025).
//
// Follows include/linux/rseq_entry.h (torvalds/linux@c17ee635, from the
// series "rseq: Provide and use rseq_update_user_cs()" dcb4a2aaadd8,
// "rseq: Provide and use rseq_set_ids()" 0b6c4ddf490d, "rseq: Record
// interrupt from user space" 59947acf3b90, "rseq: Avoid CPU/MM CID updates
// when no event pending" d323c04e1902): rseq_note_user_irq_entry(),
// rseq_sched_switch_event(), rseq_exit_to_user_mode() ->
// rseq_set_ids_get_csaddr() / rseq_update_user_cs(), __rseq_signal_deliver();
// kernel/rseq.c rseq_handle_cs(), rseq_reset_ids(), sys_rseq(). Summary in
// reference/rseq-semantics.md §2.7; each rule below names its function.
//   * user_irq: set by irqentry_enter_from_user_mode() (every interrupt,
//     exception and IPI from user mode), never by syscall entry; all events
//     are cleared on every exit to user.
//   * sched_switch: set when the task is switched (rseq_sched_switch_event())
//     and by membarrier's ipi_rseq().
//   * On exit with an event: the four IDs (cpu_id_start, cpu_id, node_id,
//     mm_cid) are written only if they differ from the ones last written
//     (task->rseq.ids): a value user space stored into cpu_id_start survives
//     a preemption or a membarrier IPI that changes no ID - the change that
//     broke tcmalloc (tcmalloc issue 292).
//   * rseq_cs is evaluated only if user_irq (a thread that entered through a
//     syscall has its cs ignored): rseq_update_user_cs() validates nothing
//     when the IP is outside the section (clears rseq_cs); inside it requires
//     abort_ip < TASK_SIZE, abort_ip >= 4 and the signature; version, flags
//     and "abort_ip inside the section" are not checked (non-debug).
//   * Signal delivery aborts the interrupted section only if user_irq; the IDs
//     are written later on that exit (rseq_signal_deliver()).
// Registration size: 6.19 accepts the original 32-byte struct rseq and the
// extended one (rseq_len = AT_RSEQ_FEATURE_SIZE, aligned); the simulator
// registers 32 bytes, which 6.19 as released treats by the same rules (the
// May-2026 stable fix that gives 32-byte registrations the legacy behaviour,
// reference §0, is not this ABI). The fields after mm_cid of an extended
// registration (slice_ctrl, 7.0 time-slice extension) are never read or
// written: time-slice extension is not modelled (reference §2.14).
// Not modelled: debug mode (rseq_debug=, CONFIG_RSEQ_DEBUG_DEFAULT_ENABLE).
#include <string>

#include "sim/kernel/abi.h"
#include "sim/machine.h"

namespace rseqmc {
namespace {

class Abi619 final : public KernelAbi {
 public:
  const KernelAbiInfo& info() const override {
    static constexpr KernelAbiInfo kInfo{
        KernelModel::k619, "6.19", "6.19",
        "rework: IDs written only when they change; rseq_cs evaluated only after an interrupt from user mode, "
        "validated only when the IP is inside",
        "include/linux/rseq_entry.h@c17ee635: rseq_exit_to_user_mode, rseq_update_user_cs, rseq_set_ids_get_csaddr"};
    return kInfo;
  }
  bool HasNodeAndMmCid() const override { return true; }
  // rseq_exit_to_user_mode() -> rseq_set_ids_get_csaddr(): see below.
  bool WritesIdsOnlyWhenChanged() const override { return true; }

  void RseqStartRegistered(Machine& m, int t, bool running) const override {
    SimThread& th = m.kthread(t);
    if (running) {
      m.UserStore(th.rseq_area + kRseqOffMmCid, static_cast<uint32_t>(th.mm_cid), 4);
      th.rseq_ids_cpu = th.cpu;
      th.rseq_ids_mm_cid = th.mm_cid;
    }
  }
  // rseq_note_user_irq_entry(). The work flag is raised too so that the exit
  // clears the event, as rseq_exit_to_user_mode() does on every exit.
  void IrqEntryFromUser(Machine& m, int t) const override {
    SimThread& th = m.kthread(t);
    th.rseq_user_irq = true;
    th.notify_resume = true;
  }
  // rseq_sched_switch_event().
  void RseqPreempt(Machine& m, int t) const override {
    SimThread& th = m.kthread(t);
    th.rseq_sched_switch = true;
    th.notify_resume = true;
  }
  // __set_task_cpu() marks ids_changed; here the change is seen when the IDs
  // are compared on exit.
  void RseqMigrate(Machine& m, int t) const override { RseqPreempt(m, t); }
  // ipi_rseq(): rseq_sched_switch_event(current).
  void IpiRseq(Machine& m, int t) const override { RseqPreempt(m, t); }

  // __rseq_signal_deliver(): the cs only if the signal interrupts user mode.
  bool RseqSignalDeliver(Machine& m, int t) const override {
    SimThread& th = m.kthread(t);
    if (th.rseq_area == 0 || !th.rseq_user_irq) return true;
    return HandleCs(m, t, true);
  }

  // rseq_exit_to_user_mode(): IDs if changed, then the cs if user_irq; the
  // events are cleared.
  bool RseqHandleNotifyResume(Machine& m, int t) const override {
    SimThread& th = m.kthread(t);
    const bool user_irq = th.rseq_user_irq;
    th.rseq_user_irq = false;
    th.rseq_sched_switch = false;
    if (th.rseq_area == 0) return true;
    if (th.rseq_ids_cpu != th.cpu || th.rseq_ids_mm_cid != th.mm_cid) {
      m.WriteIds(t, true);  // rseq_set_ids_get_csaddr()
      th.rseq_ids_cpu = th.cpu;
      th.rseq_ids_mm_cid = th.mm_cid;
    }
    return !user_irq || HandleCs(m, t, false);
  }

  // sys_rseq() registration: as legacy (EBUSY/EPERM, stale rseq_cs cleared);
  // the cached IDs are invalidated so that the exit writes all four.
  int64_t SysRseqRegister(Machine& m, int t, uint32_t sig) const override {
    SimThread& th = m.kthread(t);
    if (th.rseq_area != 0) return th.rseq_sig == sig ? kErrEbusy : kErrEperm;
    th.rseq_area = m.AreaAddress(t);
    m.TouchUser(th.rseq_area, kRseqAreaBytes, true);
    th.rseq_len = kRseqAreaBytes;
    th.rseq_sig = sig;
    m.UserStore(th.rseq_area + kRseqOffRseqCs, 0, 8);
    m.LogKernelClear(t);
    th.rseq_ids_cpu = -1;
    th.rseq_ids_mm_cid = -1;
    th.notify_resume = true;
    return 0;
  }
  // sys_rseq(RSEQ_FLAG_UNREGISTER): rseq_reset_ids() writes all four fields.
  int64_t SysRseqUnregister(Machine& m, int t, uint32_t sig) const override {
    SimThread& th = m.kthread(t);
    if (th.rseq_area == 0) return kErrEinval;
    if (th.rseq_sig != sig) return kErrEperm;
    const uint64_t a = th.rseq_area;
    m.TouchUser(a, kRseqAreaBytes, true);
    m.UserStore(a + kRseqOffCpuIdStart, 0, 4);
    m.UserStore(a + kRseqOffCpuId, static_cast<uint32_t>(-1), 4);
    m.UserStore(a + kRseqOffNodeId, 0, 4);
    m.UserStore(a + kRseqOffMmCid, 0, 4);
    th.rseq_area = 0;
    th.rseq_len = 0;
    th.rseq_sig = 0;
    th.rseq_ids_cpu = -1;
    th.rseq_ids_mm_cid = -1;
    return 0;
  }

 private:
  // rseq_handle_cs() -> rseq_update_user_cs() (non-debug).
  static bool HandleCs(Machine& m, int t, bool signal_delivery) {
    SimThread& th = m.kthread(t);
    const uint64_t area = th.rseq_area;
    const uint64_t csaddr = m.Peek(area + kRseqOffRseqCs, 8);
    m.TouchUser(area + kRseqOffRseqCs, 8, csaddr != 0);
    if (csaddr == 0) return true;
    const char* die = nullptr;
    std::string why;
    if (csaddr >= kTaskSize) {
      die = "rseq_cs pointer above TASK_SIZE";
    } else if (!m.UserReadable(csaddr, kRseqCsBytes)) {
      die = "rseq_cs points to unreadable memory (EFAULT)";
    } else {
      m.TouchUser(csaddr + 8, 24, false);
      const uint64_t start_ip = m.Peek(csaddr + 8, 8);
      const uint64_t offset = m.Peek(csaddr + 16, 8);
      const uint64_t abort_ip = m.Peek(csaddr + 24, 8);
      const uint64_t ip = m.UserIp(t);
      if (ip - start_ip >= offset) {
        // Outside: clear rseq_cs, nothing validated.
        m.UserStore(area + kRseqOffRseqCs, 0, 8);
        m.RecordLazyClear(t);
        return true;
      }
      if (abort_ip >= kTaskSize || abort_ip < 4) {
        die = "abort_ip above TASK_SIZE or below 4";
      } else {
        die = CheckAbortSignature(m, abort_ip, th.rseq_sig, &why);
      }
      if (die == nullptr) return m.AbortTo(t, abort_ip, csaddr);
    }
    std::string reason = std::string("rseq (6.19): ") + die;
    if (!why.empty()) reason += " (" + why + ")";
    if (signal_delivery) reason += " while delivering a signal";
    m.ForceSigsegv(t, reason);
    return false;
  }
};

}  // namespace

const KernelAbi& Abi619Instance() {
  static const Abi619 abi;
  return abi;
}

}  // namespace rseqmc
