// The ABI of the Oct 2015 restartable-sequences RFC (never merged).
//
// Source: the LKML series "restartable sequences benchmarks" (Paul Turner,
// Oct 2015; patch 1/3 the generic kernel part, 2/3 the x86 ABI, 3/3 the
// self-tests), read into ../shared/reference/rfc2015.md; each rule below names
// the section of that file it follows. No code of the series is used (GPL-2.0):
// this is a re-write from those facts.
//
// The ABI (reference "ABI"): one system call, restartable_sequences(op, flags,
// val1, val2, val3) - x86-64 number 325 in the series, 335 in a 6.1 port -
// with
//   * op 0: register the process-wide region [val1, val2) with restart address
//     val3. start >= end, or an address at or above TASK_SIZE (access_ok),
//     -> EINVAL; overlap with a registered region (adjacent ones are allowed)
//     -> EBUSY; once any thread of the process set a CPU pointer -> EBUSY.
//     ENOMEM is not modelled (the table is unbounded). `flags` is ignored.
//   * op 1: set the calling thread's CPU pointer (a user address of a u32).
//     NULL unregisters; the same pointer again is a no-op returning 0; an
//     address failing access_ok(ptr, 4) -> EINVAL; the first non-NULL pointer
//     requests notify-resume at once, so the CPU number is written before the
//     thread returns to user space. A fixed port: a call while the process
//     has no regions returns EINVAL (the series computed EINVAL for a
//     non-leader thread but returned 0 with nothing registered, reference
//     "ABI"; rseqmc models the fix and says so). An unmapped pointer that
//     passes access_ok faults at the first write: SIGSEGV.
//   * any other op -> EINVAL. EFAULT is never returned.
// No struct rseq, no rseq_cs, no descriptor, no signature, no flags: a
// scenario that uses them is not applicable (NotApplicable()).
//
// When a thread is restarted (reference "When a thread is restarted"):
//   * switch-out (prepare_task_switch() in a port, a preempt notifier in the
//     series): notify-resume is requested on every switch-out under
//     CONFIG_PREEMPT (`preempt full`, the default), else only when the
//     thread's saved user IP is inside a region (`preempt voluntary`).
//     Switch-in does nothing; migration has no hook of its own (a migrated
//     thread was switched out first).
//   * notify-resume on return to user, only for a thread with a CPU pointer:
//     the current CPU number is written to the pointer (a fault -> SIGSEGV),
//     then, if the user IP is inside a region, IP := its crit_restart.
//   * signal delivery: when the frame is set up with the IP inside a region,
//     the IP saved in the frame is first moved to crit_restart (the handler
//     returns to the restart address). Signals come before notify-resume in
//     the exit-to-user loop (Machine::ReturnToUser). The reference does not
//     make this depend on a CPU pointer, and neither does this model.
//   * lookup: binary search of the table sorted by start, half-open
//     start <= ip < end (reference "ABI", lookup).
// Membarrier's RSEQ command (2020) did not exist: IpiRseq() is never reached
// for an applicable program, and an injected IPI changes nothing.
// Not modelled: ptrace (POKE into a region -> EIO, single-step through a
// region; the IR has no ptrace), fork/exec (the IR has neither; reference
// "Process life cycle": a new thread or fork child starts with no CPU
// pointer, which is how every scenario thread starts here).
#include <algorithm>

#include "sim/kernel/abi.h"
#include "sim/machine.h"

namespace rseqmc {
namespace {

class AbiRfc2015 final : public KernelAbi {
 public:
  const KernelAbiInfo& info() const override {
    static constexpr KernelAbiInfo kInfo{
        KernelModel::kRfc2015, "rfc2015", "RFC 2015-10",
        "never merged: process-wide regions [start, end) with one restart address, a per-thread CPU pointer; "
        "restart on switch-out or signal inside a region",
        "LKML RFC \"restartable sequences benchmarks\" (Oct 2015), reference/rfc2015.md"};
    return kInfo;
  }
  bool HasNodeAndMmCid() const override { return false; }

  // A new thread has no CPU pointer (reference "Process life cycle").
  void RseqStartRegistered(Machine&, int, bool) const override {}
  void IrqEntryFromUser(Machine&, int) const override {}

  // Switch-out: notify-resume always (CONFIG_PREEMPT) or only inside a region.
  void RseqPreempt(Machine& m, int t) const override {
    if (m.scenario().preemption == Preemption::kFull || FindRegion(m, m.UserIp(t)) != nullptr) {
      m.kthread(t).notify_resume = true;
    }
  }
  // No migration hook: the switch-out before it did the work.
  void RseqMigrate(Machine&, int) const override {}
  // No membarrier RSEQ command in 2015 (see the header comment).
  void IpiRseq(Machine&, int) const override {}

  // setup_rt_frame(): the frame saves crit_restart if the IP is in a region.
  bool RseqSignalDeliver(Machine& m, int t) const override {
    const RfcRegion* r = FindRegion(m, m.UserIp(t));
    return r == nullptr || m.RestartTo(t, r->restart, r->start);
  }

  // Notify-resume: the CPU number first, then the restart.
  bool RseqHandleNotifyResume(Machine& m, int t) const override {
    SimThread& th = m.kthread(t);
    if (th.rfc_cpu_ptr == 0) return true;
    if (!m.UserReadable(th.rfc_cpu_ptr, 4)) {
      m.ForceSigsegv(t, "rfc2015: writing the CPU number to the thread's CPU pointer faults (put_user)");
      return false;
    }
    m.UserStore(th.rfc_cpu_ptr, static_cast<uint32_t>(th.cpu), 4);
    const RfcRegion* r = FindRegion(m, m.UserIp(t));
    return r == nullptr || m.RestartTo(t, r->restart, r->start);
  }

  // The restart test of a switch-out or signal (reference "ABI", lookup):
  // ip in a registered region, whatever thread t (regions are process-wide).
  bool InRseqCs(const Machine& m, int, uint64_t ip) const override {
    return FindRegionIn(m.rfc_process().regions, ip) != nullptr;
  }

  // sys_rseq() does not exist.
  int64_t SysRseqRegister(Machine&, int, uint32_t) const override { return kErrEnosys; }
  int64_t SysRseqUnregister(Machine&, int, uint32_t) const override { return kErrEnosys; }

  int64_t SysRestartableSequences(Machine& m, int t, int op, uint64_t v1, uint64_t v2, uint64_t v3) const override {
    if (op == 0) return RegisterRegion(m, v1, v2, v3);
    if (op == 1) return SetCpuPointer(m, t, v1);
    return kErrEinval;
  }

  // Programs that use struct rseq (or membarrier's RSEQ command) do not run
  // on the RFC, which has neither.
  std::optional<AbiMismatch> NotApplicable(const Scenario& s) const override {
    for (const Instr& in : s.program.code) {
      switch (in.op) {
        case Op::kRseqLoad:
        case Op::kRseqAddr:
        case Op::kRseqArm:
        case Op::kRseqRegister:
        case Op::kRseqUnregister:
        case Op::kMembarrierRseq:
          return AbiMismatch{in.loc,
                             std::string("`") + OpName(in.op) +
                                 "` needs struct rseq / sys_rseq (Linux 4.18+), which the 2015 RFC does not have",
                             "run this scenario with --kernel 4.18, 6.0 or 6.19; rfc2015 runs scenarios written "
                             "with `region` and `rfc_region` (scenarios/README.md)"};
        default: break;
      }
    }
    for (const CsDescriptor& d : s.program.descriptors) {
      if (!d.region) {
        return AbiMismatch{d.loc, "descriptor '" + d.name + "' is a struct rseq_cs, which the 2015 RFC does not have",
                           "declare a 2015-RFC region with `region NAME start=LABEL end=LABEL restart=LABEL`"};
      }
    }
    return std::nullopt;
  }

 private:
  // Binary search of the table (sorted by start, non-overlapping) for the
  // region with start <= ip < end.
  static const RfcRegion* FindRegion(Machine& m, uint64_t ip) {
    m.TouchRfcProcess(false);
    return FindRegionIn(m.rfc_process().regions, ip);
  }
  static const RfcRegion* FindRegionIn(const std::vector<RfcRegion>& v, uint64_t ip) {
    auto it = std::upper_bound(v.begin(), v.end(), ip, [](uint64_t x, const RfcRegion& r) { return x < r.start; });
    if (it == v.begin()) return nullptr;
    --it;
    return ip < it->end ? &*it : nullptr;
  }

  // op 0 (reference "ABI"): EINVAL, then EBUSY (overlap; after a CPU pointer).
  // Only a call that changes the table writes it (for the footprint).
  static int64_t RegisterRegion(Machine& m, uint64_t start, uint64_t end, uint64_t restart) {
    if (start >= end || end > kTaskSize || restart >= kTaskSize) return kErrEinval;
    RfcProcess& p = m.rfc_process();
    m.TouchRfcProcess(false);
    if (p.cpu_ptr_set) return kErrEbusy;
    auto it = std::upper_bound(p.regions.begin(), p.regions.end(), start,
                               [](uint64_t x, const RfcRegion& r) { return x < r.start; });
    if (it != p.regions.end() && it->start < end) return kErrEbusy;
    if (it != p.regions.begin() && std::prev(it)->end > start) return kErrEbusy;
    m.TouchRfcProcess(true);
    p.regions.insert(it, RfcRegion{start, end, restart});
    return 0;
  }

  // op 1 (reference "ABI").
  static int64_t SetCpuPointer(Machine& m, int t, uint64_t ptr) {
    SimThread& th = m.kthread(t);
    if (ptr == 0) {
      th.rfc_cpu_ptr = 0;
      return 0;
    }
    if (ptr > kTaskSize - 4) return kErrEinval;
    if (ptr == th.rfc_cpu_ptr) return 0;
    RfcProcess& p = m.rfc_process();
    m.TouchRfcProcess(!p.cpu_ptr_set);
    if (p.regions.empty()) return kErrEinval;
    th.rfc_cpu_ptr = ptr;
    p.cpu_ptr_set = true;
    th.notify_resume = true;
    return 0;
  }
};

}  // namespace

const KernelAbi& AbiRfc2015Instance() {
  static const AbiRfc2015 abi;
  return abi;
}

}  // namespace rseqmc
