// The preempt-lock + signal scheme (rules PL1..PL5): see preempt_lock.h.
#include "sim/kernel/preempt_lock.h"

#include <cstdio>
#include <string>

#include "sim/kernel/abi.h"
#include "sim/machine.h"

namespace rseqmc {

namespace {
constexpr int kSigStop = 19;  // arch/x86/include/uapi/asm/signal.h

// get_user() of t's flag word. nullopt: unreadable (the caller sends SIGSEGV).
std::optional<uint32_t> ReadFlag(Machine& m, int t) {
  const uint64_t flag = m.kthread(t).preempt_lock_flag;
  if (!m.UserReadable(flag, 4)) return std::nullopt;
  return static_cast<uint32_t>(m.UserLoad(flag, 4));
}

// send_sig_info(signo, SI_KERNEL with si_addr = flag) to t. True if it is
// now pending (an ignored signal is discarded when sent).
bool SendPreemptLockSignal(Machine& m, int t) {
  SimThread& th = m.kthread(t);
  const uint32_t bit = 1u << th.preempt_lock_signo;
  // A standard signal already pending is not queued again (legacy_queue()):
  // its siginfo stays the first one's.
  if (th.pending & bit) return true;
  m.SendSignal(t, th.preempt_lock_signo, "preempt-lock: switched out with its flag set");
  if (!(th.pending & bit)) return false;
  th.preempt_lock_siginfo = true;
  return true;
}
}  // namespace

int64_t SysPreemptLock(Machine& m, int t, uint64_t flag, int signo) {
  SimThread& th = m.kthread(t);
  m.TouchUser(flag, 0, false);
  if (flag == 0) {
    th.preempt_lock_flag = 0;
    th.preempt_lock_signo = 0;
    th.preempt_lock_notify = false;
    return 0;
  }
  // access_ok(flag, 4) (include/asm-generic/access_ok.h: flag + 4 <=
  // TASK_SIZE_MAX, so the last word below it is accepted, as in
  // kernel/patches/0005) and the u32's alignment; a signal a handler can take.
  if (flag % 4 != 0 || flag > kTaskSize - 4 || signo < 1 || signo > kMaxSignal || signo == kSigKill ||
      signo == kSigStop) {
    return kErrEinval;
  }
  th.preempt_lock_flag = flag;
  th.preempt_lock_signo = static_cast<uint8_t>(signo);
  return 0;
}

void PreemptLockSchedOut(Machine& m, int t) {
  SimThread& th = m.kthread(t);
  if (th.preempt_lock_flag != 0) th.preempt_lock_notify = true;  // PL1
}

bool PreemptLockHandleNotifyResume(Machine& m, int t) {
  SimThread& th = m.kthread(t);
  if (th.preempt_lock_flag == 0) return true;
  const std::optional<uint32_t> flag = ReadFlag(m, t);  // PL2
  if (!flag) {
    char buf[40];
    std::snprintf(buf, sizeof buf, "0x%llx", static_cast<unsigned long long>(th.preempt_lock_flag));
    m.ForceSigsegv(t, std::string("preempt-lock: the flag word at ") + buf + " is not mapped (get_user faults)");
    return false;
  }
  if (*flag != 0) SendPreemptLockSignal(m, t);
  return true;
}

int PreemptLockSignalDeliver(Machine& m, int t, int signo) {
  SimThread& th = m.kthread(t);
  if (th.preempt_lock_flag == 0 || signo == th.preempt_lock_signo) return signo;
  if (th.blocked & (1u << th.preempt_lock_signo)) return signo;  // PL4 needs it deliverable
  const std::optional<uint32_t> flag = ReadFlag(m, t);
  // An unreadable flag is PL2's SIGSEGV, at the next check; the ordinary
  // signal goes on.
  if (!flag || *flag == 0) return signo;
  return SendPreemptLockSignal(m, t) ? th.preempt_lock_signo : signo;
}

uint64_t PreemptLockSigAddr(Machine& m, int t, int signo) {
  SimThread& th = m.kthread(t);
  if (signo != th.preempt_lock_signo || !th.preempt_lock_siginfo) return 0;
  th.preempt_lock_siginfo = false;
  return th.preempt_lock_flag;
}

const Instr* FindPreemptLockUse(const Program& p) {
  for (const Instr& in : p.code) {
    if (in.op == Op::kPreemptLock || in.op == Op::kSigctxRestart) return &in;
  }
  return nullptr;
}

}  // namespace rseqmc
