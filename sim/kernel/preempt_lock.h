// The preempt-lock + signal scheme: a kernel feature of the 2015 RFC thread's
// allocator experiment, usable under every ABI of sim/kernel/abi.h.
//
// Source: the Oct 2015 LKML thread "restartable sequences benchmarks" (Paul
// Turner), read into ../shared/reference/rfc2015.md "The jemalloc
// experiment": per-CPU caches "protected by a preempt-lock scheme (user space
// sets a flag; the kernel, at preemption, sends a signal that undoes the
// operation): 32 % idle, about 2x slower than rseq in microbenchmarks but
// faster than atomics". No kernel ever merged it and the thread shows no
// code: the interface and every rule below are rseqmc's reading of that one
// sentence, each choice named where the thread is silent. It is no ABI of its
// own (it needs no struct rseq and replaces no rseq rule), so it is a
// registration any ABI accepts, with its hooks beside the ABI's in the places
// a kernel patch would put them.
//
// Interface (IR: `preempt_lock rFLAG|INT, SIGNAL`, sim/ir.h Op::kPreemptLock):
//   sys_preempt_lock(flag, signo) registers the calling thread's flag word
//   (the u32 at user address `flag`) and the signal the kernel answers with.
//   flag 0 unregisters (signo ignored); a flag not 4-aligned or whose 4
//   bytes reach past TASK_SIZE_MAX (access_ok), or signo outside 1..31 or SIGKILL/SIGSTOP (no
//   handler can catch them) -> -EINVAL; a second registration replaces the
//   first. A new thread starts unregistered. Chosen: the signal is named at
//   registration (the thread says only "a signal"; naming it lets a program
//   keep SIGUSR1 for its own use, as alloc_common.rsqi does).
//
// The kernel side exists: kernel/patches/0005-preempt-lock.patch implements
// this interface and PL1..PL5 in Debian's 6.1 (x86-64 syscall 336), and
// kernel/qemu/guest/preempt_lock_test.c checks it rule by rule in the guest.
//
// Rules (PL1..PL5; tests/kernel_abi_test.cc RuleTable has a row for each):
//   PL1 preempt_lock_sched_out(), in prepare_task_switch() next to
//       rseq_preempt(): every switch-out of a registered thread (preemption,
//       sched_yield that switches, migration, blocking in futex_wait or
//       nanosleep, sched_setaffinity off its CPU) requests the check on its
//       next return to user space. Chosen: the flag is not read here but at
//       PL2, because prepare_task_switch() runs with preemption disabled and
//       cannot fault in user memory (rseq defers its own work the same way,
//       TIF_NOTIFY_RESUME); the thread runs no instruction in between, so
//       only another thread writing this thread's flag could tell.
//   PL2 preempt_lock_handle_notify_resume(), in resume_user_mode_work() after
//       rseq_handle_notify_resume(): on the first return to user space after
//       the switch-back (so on the new CPU after a migration), get_user() of
//       the flag; a fault -> SIGSEGV; non-zero -> the registered signal is
//       sent to the thread (send_sig_info, si_code SI_KERNEL, si_addr = the
//       flag's address). exit_to_user_mode_loop() then delivers it before the
//       thread runs another user instruction. Several switch-outs before one
//       return send one signal (TIF bit; a standard signal does not queue
//       twice). A blocked signal stays pending until unblocked; an ignored
//       one is discarded; SIG_DFL terminates the process (no handler check:
//       the kernel sends what it was told to).
//   PL3 the handler (user code) gets si_addr: in the IR a handler starts with
//       r1 = signo and r2 = si_addr (0 for every other signal). It reads the
//       flag and, with `sigctx_restart REGION` (Op::kSigctxRestart: the
//       frame's saved RIP moved to the region's restart address when it lies
//       in [start, end)), restarts the interrupted operation; sigreturn then
//       resumes there. The commit must be the region's last instruction and
//       the flag cleared after it (the planted bug
//       buggy/alloc_preempt_lock_flag_cleared_early.rsq clears it first).
//   PL4 preempt_lock_signal_deliver(), in get_signal() before an ordinary
//       signal's frame is set up (next to rseq_signal_deliver()): with the
//       flag set and the preempt-lock signal not blocked, the preempt-lock
//       signal is sent and delivered first, so its frame lies directly on the
//       interrupted operation and the ordinary handler's frame on top of it.
//       Chosen (the thread is silent): a handler can run for any time and be
//       preempted itself; a preempt-lock signal delivered then would see the
//       ordinary handler's IP, not the operation's, and could not restart
//       it. rseq treats signal delivery as an abort trigger for the same
//       reason (rseq-semantics.md §7 rule 12). While the preempt-lock
//       handler's frame is live its signal is blocked (SA_NODEFER aside), so
//       a preemption of the ordinary handler leaves the signal pending and
//       it is delivered after the preempt-lock handler returns, to an IP
//       that is then outside the region.
//   PL5 migration is a switch-out (PL1); the check runs on the destination
//       CPU, and the restarted operation reads the CPU again (getcpu()).
#ifndef RSEQMC_SIM_KERNEL_PREEMPT_LOCK_H_
#define RSEQMC_SIM_KERNEL_PREEMPT_LOCK_H_

#include <cstdint>

#include "sim/ir.h"

namespace rseqmc {

class Machine;

// sys_preempt_lock(flag, signo) for thread t: registration as above.
// Returns 0 or -EINVAL.
int64_t SysPreemptLock(Machine& m, int t, uint64_t flag, int signo);
// PL1: t is switched out.
void PreemptLockSchedOut(Machine& m, int t);
// PL2: t returns to user space with the check requested. Returns false if
// the thread got SIGSEGV (execution ended).
bool PreemptLockHandleNotifyResume(Machine& m, int t);
// PL4: the exit to user space is about to deliver `signo` to t; returns the
// signal to deliver now (the preempt-lock signal, sent here, when PL4
// applies, else `signo`).
int PreemptLockSignalDeliver(Machine& m, int t, int signo);
// PL3: the si_addr the frame of `signo` carries for t (the flag's address if
// the kernel sent this pending signal under PL2/PL4, else 0); consumes it.
uint64_t PreemptLockSigAddr(Machine& m, int t, int signo);

// The first instruction of `p` that registers a preempt-lock flag or
// restarts from a handler (preempt_lock, sigctx_restart), or nullptr.
const Instr* FindPreemptLockUse(const Program& p);

}  // namespace rseqmc

#endif  // RSEQMC_SIM_KERNEL_PREEMPT_LOCK_H_
