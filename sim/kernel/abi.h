// The kernel's rseq ABI as a module: what the kernel's rseq code does at each
// of its entry points, one implementation per ABI.
//
// sim::Machine owns the CPUs, threads, memory and clock; at every kernel
// entry point that rseq hooks into it calls the ABI chosen for the run
// (RunOptions::kernel, resolved once in Machine's constructor). The hooks are
// named after the kernel functions they stand for (kernel/rseq.c,
// include/linux/rseq.h, include/linux/rseq_entry.h,
// kernel/sched/membarrier.c). They run only at events and on returns to user
// space, never per instruction, so the interpreter's hot loop pays no call
// for them.
//
// Implementations (one file each, each with a header comment naming the
// kernel versions, files and functions it follows):
//   sim/kernel/rfc2015.cc   the Oct 2015 RFC (regions, a CPU pointer; no
//                           struct rseq)
//   sim/kernel/abi_4_18.cc  4.18-5.19 legacy (NO_RESTART flags honoured)
//   sim/kernel/abi_6_0.cc   6.0-6.2 legacy (no node_id/mm_cid yet)
//   sim/kernel/abi_6_19.cc  6.19 rework (IDs only on change, cs only after
//                           an interrupt, no validation outside the cs)
//   sim/kernel/abi_mm_cid.cc 6.3-6.18 legacy + node_id and mm_cid, IDs from
//                           6.13-6.18's per-CPU allocator (this machine's
//                           kernel)
// The legacy evaluation shared by the first two and mm_cid lives in
// sim/kernel/legacy.{h,cc}.
//
// Rule: nothing outside sim/kernel/ tests which kernel version runs
// (tests/static_checks greps for it); the Machine asks the ABI instead.
#ifndef RSEQMC_SIM_KERNEL_ABI_H_
#define RSEQMC_SIM_KERNEL_ABI_H_

#include <array>
#include <cstdint>
#include <optional>
#include <span>
#include <string>

#include "sim/kernel_model.h"
#include "sim/scenario.h"

namespace rseqmc {

class Machine;

// x86-64 TASK_SIZE_MAX with 4-level page tables: user addresses are below it
// (arch/x86/include/asm/page_64_types.h).
inline constexpr uint64_t kTaskSize = 0x00007ffffffff000ull;
// Syscall error returns (include/uapi/asm-generic/errno-base.h), negated.
inline constexpr int64_t kErrEperm = -1, kErrEbusy = -16, kErrEinval = -22, kErrEnosys = -38;

// The process's concurrency-ID allocator: the mm_struct fields the mm_cid
// hooks of KernelAbi read and write (include/linux/mm_types.h: mm_cidmask(),
// mm->pcpu_cid[cpu].cid / .recent_cid, mm->max_nr_cid; 6.13-6.18). IDs are
// below kMaxCpus: every allocator keeps them below the CPU count.
struct MmCidState {
  static constexpr int8_t kUnset = -1;  // MM_CID_UNSET
  uint64_t cidmask = 0;                 // IDs in use (bit = ID)
  // Per CPU: the ID the CPU holds for the mm (pcpu_cid->cid; 6.4+ keep it
  // after the thread leaves the CPU), and the last one it held
  // (pcpu_cid->recent_cid, 6.13+).
  std::array<int8_t, kMaxCpus> pcpu_cid;
  std::array<int8_t, kMaxCpus> recent_cid;
  int max_nr_cid = 0;  // mm->max_nr_cid (6.13+): IDs handed out so far, the expansion point
  MmCidState() { Clear(); }
  // Back to the state of a new mm (no ID in use), in place: Machine::Reset
  // runs this before every execution, and assigning a fresh MmCidState{}
  // there built it on the stack and copied it out, which stalled on
  // store-to-load forwarding (about half of Reset).
  void Clear() {
    cidmask = 0;
    pcpu_cid.fill(kUnset);
    recent_cid.fill(kUnset);
    max_nr_cid = 0;
  }
};

// A scenario that an ABI cannot run: where, why, and what to do instead.
struct AbiMismatch {
  SourceLoc loc;
  std::string message;
  std::string hint;
};

// The rules in which ABIs of one family (the legacy 4.18, 6.0 and mm_cid)
// differ. A hook whose decision would have been another under the other value
// of such a rule records its bit (Machine::NoteRuleSensitivity); an
// exploration that recorded none of the bits in which two ABIs differ ran
// exactly the executions the other ABI would have, so both have its verdict
// (`rseqmc check` shares it, tools/rseqmc/check_command.cc).
enum AbiRule : uint32_t {
  kRuleNoRestartFlags = 1u << 0,         // LegacyRules::no_restart_flags (a flag inside a section)
  kRuleAddressLimitChecks = 1u << 1,     // LegacyRules::address_limit_checks (a value >= TASK_SIZE, overflow)
  kRuleNodeAndMmCid = 1u << 2,           // LegacyRules::node_and_mm_cid (a write that changes what the program reads)
  kRuleClearRseqCsOnRegister = 1u << 3,  // LegacyRules::clear_rseq_cs_on_register (a stale rseq_cs)
};

// What `rseqmc kernels` prints about an ABI.
struct KernelAbiInfo {
  KernelModel model;
  const char* name;         // the --kernel name: "4.18", "6.0", "6.19", "mm_cid"
  const char* versions;     // kernel versions it stands for: "4.18-5.19"
  const char* description;  // one line
  const char* source;       // kernel files and functions it follows
};

// One rseq ABI. Stateless: per-thread kernel state lives in SimThread
// (event_mask, rseq_sched_switch, rseq_user_irq, rseq_ids) and is changed only
// through these hooks. `m` is the machine of the running execution, `t` a
// thread index.
class KernelAbi {
 public:
  virtual ~KernelAbi() = default;
  virtual const KernelAbiInfo& info() const = 0;

  // Does the struct rseq of this ABI have node_id and mm_cid (6.3+)?
  virtual bool HasNodeAndMmCid() const = 0;

  // A thread registered at start-up (glibc's registration before main, or
  // pthread_create's): fills its area as that registration leaves it.
  // `running`: it starts on its CPU (else it waits in a run queue and gets
  // notify-resume for its first switch-in).
  virtual void RseqStartRegistered(Machine& m, int t, bool running) const = 0;

  // irqentry_enter_from_user_mode(): an interrupt, exception or IPI entered
  // the kernel from thread t's user mode (every injected event does). 6.19
  // records it (user_irq); legacy kernels do not look.
  virtual void IrqEntryFromUser(Machine& m, int t) const = 0;
  // rseq_preempt() in prepare_task_switch() (legacy) /
  // rseq_sched_switch_event() (6.19): t is switched out.
  virtual void RseqPreempt(Machine& m, int t) const = 0;
  // rseq_migrate() in set_task_cpu() (legacy) / __set_task_cpu() (6.19).
  virtual void RseqMigrate(Machine& m, int t) const = 0;
  // ipi_rseq() of kernel/sched/membarrier.c, run on the CPU where t runs.
  virtual void IpiRseq(Machine& m, int t) const = 0;
  // rseq_signal_deliver() from setup_rt_frame(): before t's signal frame is
  // built. Returns false if the thread got SIGSEGV (execution ended).
  virtual bool RseqSignalDeliver(Machine& m, int t) const = 0;
  // rseq_handle_notify_resume() (legacy) / rseq_exit_to_user_mode() (6.19):
  // t returns to user space with TIF_NOTIFY_RESUME / TIF_RSEQ set. Returns
  // false if the thread got SIGSEGV.
  virtual bool RseqHandleNotifyResume(Machine& m, int t) const = 0;
  // in_rseq_cs() (kernel/rseq.c, called by rseq_ip_fixup(); 6.19:
  // include/linux/rseq_entry.h rseq_update_user_cs()): would an event on
  // thread t with its user IP at `ip` restart it now? Read-only (no
  // footprint, no fault: an unreadable rseq_cs answers false, where the
  // kernel would raise SIGSEGV whatever the IP). Flags are not looked at
  // (a NO_RESTART flag of 4.18-5.19 still counts as inside). For
  // Machine::IpMayRestart (events only where they can matter). This default:
  // t's rseq_cs is non-zero and start_ip <= ip < start_ip +
  // post_commit_offset (rseq-semantics.md §7.5), as every struct rseq ABI
  // tests it; rfc2015: ip lies in a registered region.
  virtual bool InRseqCs(const Machine& m, int t, uint64_t ip) const;
  // sys_rseq(): register (flags 0) thread t's area with signature `sig`.
  // Returns the syscall's value (0 or -errno).
  virtual int64_t SysRseqRegister(Machine& m, int t, uint32_t sig) const = 0;
  // sys_rseq(RSEQ_FLAG_UNREGISTER).
  virtual int64_t SysRseqUnregister(Machine& m, int t, uint32_t sig) const = 0;
  // The AbiRule bits in which this ABI's hooks differ from `other`'s, or
  // nullopt if they share no hook logic (then no exploration is shared).
  // This default: 0 for itself, nullopt for any other ABI.
  virtual std::optional<uint32_t> RulesDifferingFrom(const KernelAbi& other) const;
  // The concurrency-ID allocator (kernel/sched/sched.h, kernel/sched/core.c),
  // in four hooks named after the scheduler functions that call it. They
  // change Machine::mmcid() (the mm's cidmask and per-CPU IDs) and t's
  // mm_cid / last_mm_cid. This default is 6.3's allocator (also used by the
  // 6.19 model, which has no allocator of its own, and never read by ABIs
  // without mm_cid): an ID per running thread, the lowest free one at
  // switch-in, given back at every switch-out (6.3 switch_mm_cid() ->
  // mm_cid_put()). sim/kernel/abi_mm_cid.cc overrides all four with
  // 6.13-6.18's per-CPU IDs.
  //
  // switch_mm_cid() -> mm_cid_get(): t is switched in on `cpu`; returns the
  // ID it runs with (0 <= ID < number of CPUs).
  virtual int MmCidGet(Machine& m, int t, int cpu) const;
  // switch_mm_cid() for prev: t leaves `cpu` (preemption, blocking, or the
  // switch-out half of a migration). 6.3: mm_cid_put(); 6.4+:
  // mm_cid_put_lazy().
  virtual void MmCidSwitchOut(Machine& m, int t, int cpu) const;
  // sched_mm_cid_migrate_to(): t, switched out of `src` (MmCidSwitchOut ran),
  // is activated on `dst`; `src`'s next thread is already chosen. 6.3: nothing.
  virtual void SchedMmCidMigrateTo(Machine& m, int t, int src, int dst) const;
  // sched_mm_cid_exit_signals() (do_exit() -> exit_signals()): running
  // thread t on `cpu` exits; mm_cid_put() gives the ID back.
  virtual void SchedMmCidExitSignals(Machine& m, int t, int cpu) const;
  // restartable_sequences(op, 0, v1, v2, v3), the 2015 RFC's system call
  // (reference/rfc2015.md "ABI"): op 0 registers region [v1, v2) with restart
  // address v3, op 1 sets t's CPU pointer to v1. Returns 0 or -errno; every
  // kernel without the RFC returns -ENOSYS (this default).
  virtual int64_t SysRestartableSequences(Machine& m, int t, int op, uint64_t v1, uint64_t v2, uint64_t v3) const;
  // Does the exit to user space write cpu_id_start and cpu_id only when the
  // CPU differs from the one last written (6.19: rseq_set_ids_get_csaddr()
  // compares with task->rseq.ids), so that a value user space stored there
  // survives a switch-out that leaves the thread on its CPU? Legacy kernels
  // rewrite both on every notify-resume (kernel/rseq.c
  // rseq_update_cpu_node_id()): this default. The real-kernel cross-check
  // asks it because each of its ptrace stops is such a switch-out.
  virtual bool WritesIdsOnlyWhenChanged() const { return false; }
  // Why scenario `s` cannot run under this ABI (nullopt if it can): this
  // default rejects programs that use the 2015 RFC's system call, which no
  // merged kernel has, and `preempt voluntary` (an RFC restart option);
  // rfc2015 rejects programs that use struct rseq. The
  // Machine throws it as an InputError (exit 2); `rseqmc check` without
  // --kernel skips such pairs.
  virtual std::optional<AbiMismatch> NotApplicable(const Scenario& s) const;
};

// The first instruction of `p` that calls the 2015 RFC's system call
// (rfc_region, rfc_cpu_ptr), or nullptr.
const Instr* FindRfc2015Use(const Program& p);

// get_user() of the 4 bytes before abort_ip and their comparison with the
// registered signature `sig` (kernel/rseq.c rseq_get_rseq_cs(),
// include/linux/rseq_entry.h rseq_update_user_cs()): nullptr if they match,
// else the reason for SIGSEGV, with the detail in *why. A word that is an
// instruction other than `sig` never matches (Machine::ReadSignatureWord).
const char* CheckAbortSignature(Machine& m, uint64_t abort_ip, uint32_t sig, std::string* why);

// The ABI a KernelModel names (every enumerator has one).
const KernelAbi& AbiFor(KernelModel m);
// Every ABI, in the order `rseqmc kernels` lists them.
std::span<const KernelAbi* const> AllAbis();

}  // namespace rseqmc

#endif  // RSEQMC_SIM_KERNEL_ABI_H_
