// Threads that block: futex wait/wake, nanosleep on the simulated clock, the
// deadlock verdict, and the step budget's livelock verdict.
//
// Kernel rules followed (Linux 6.x):
//   * FUTEX_WAIT / FUTEX_WAKE: kernel/futex/waitwake.c futex_wait_setup(),
//     futex_wait(), futex_wake(); address checks in kernel/futex/core.c
//     get_futex_key(): -EINVAL unless 4-byte aligned, then -EFAULT unless
//     access_ok() (x86-64 6.18 valid_user_address(): addr <= TASK_SIZE_MAX;
//     older 6.x checked addr + 4 <= TASK_SIZE_MAX, which differs only for
//     the word at TASK_SIZE_MAX itself).
//     For a private futex (the harness uses FUTEX_*_PRIVATE) that is all:
//     the page is not touched, so FUTEX_WAKE of an unmapped address below
//     TASK_SIZE_MAX returns 0 (no waiter can be there). FUTEX_WAIT then reads
//     the word (futex_get_value_locked()), so it is -EFAULT if unmapped.
//   * FUTEX_WAKE's count: kernel/futex/syscalls.c sys_futex() takes `u32 val`
//     and futex_wake() `int nr_wake`, so only the low 32 bits count, read as
//     signed; its loop `if (++ret >= nr_wake) break;` wakes one waiter (if
//     any) when nr_wake <= 0 (0x80000000 or 0xffffffff: one).
//     Waiters of one word are woken in FIFO order (the hash bucket's plist
//     orders equal priorities by arrival). A woken thread is queued on the CPU
//     it last ran on (try_to_wake_up's select_task_rq is not modelled).
//   * Blocking is a context switch: prepare_task_switch() -> rseq_preempt()
//     (rule 8), so a thread that blocks inside a critical section aborts when
//     it runs again.
//   * A signal that the thread does not block, generated for a thread that
//     waits or sleeps, wakes it (signal_wake_up()); the call returns -EINTR.
//     The kernel's futex_wait() (kernel/futex/waitwake.c, no timeout) returns
//     -ERESTARTSYS and nanosleep -ERESTART_RESTARTBLOCK; arch/x86/kernel/
//     signal.c handle_signal() turns both into -EINTR when the handler has no
//     SA_RESTART, which is how scenario handlers are installed (kernel/harness
//     child.h InstallScenarioSignals()). The handler's frame is pushed when
//     the woken thread returns to user space, after the rseq fix-up
//     (rseq_signal_deliver()). Cross-checked: crosscheck_test.cc
//     SignalInterruptingABlockedThread.
//
// Simulated time: instructions take no time; the clock (now_ns_) moves only
// when every CPU is idle, to the earliest sleeper's wake time. So a sleep
// lasts "until nothing else can run and the clock reaches its end": the order
// of wake-ups is that of the deadlines, whatever the instruction counts.
// Under a time-driven scheduler (Scheduler::clock(), sim/timed_scheduler.h)
// instructions take the time its cost model says: a sleep's deadline starts
// from the sleeper's CPU clock, sleepers wake as soon as no CPU can run
// anything earlier (WakeDue), and woken threads go where SelectTaskRq puts
// them.
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "sim/kernel/abi.h"
#include "sim/kernel/preempt_lock.h"
#include "sim/machine.h"
#include "sim/trace.h"

namespace rseqmc {
namespace {
constexpr int64_t kEagain = -11, kEinvalErr = -22, kEfault = -14, kEintr = -4;
}  // namespace

int64_t Machine::FutexWait(int t, uint64_t addr, uint32_t expected) {
  if (addr % 4 != 0) return kEinvalErr;
  if (!MemOk(addr, 4)) return kEfault;
  // The wait and every wake of the same word are dependent (DPOR): both count
  // as writes of the word.
  TouchMem(addr, 4, true);
  if (static_cast<uint32_t>(Load(addr, 4)) != expected) return kEagain;
  SimThread& th = threads_[t];
  th.futex_addr = addr;
  th.wait_seq = wait_seq_++;
  BlockRunning(t, ThreadState::kBlocked);
  return 0;
}

int64_t Machine::FutexWake(int t, uint64_t addr, int64_t n) {
  if (addr % 4 != 0) return kEinvalErr;
  if (addr > kTaskSize) return kEfault;  // access_ok()
  // Private futex: get_futex_key() does not touch the page, and no thread
  // waits on a word it could not read, so nothing to wake.
  if (!MemOk(addr, 4)) return 0;
  TouchMem(addr, 4, true);
  // sys_futex(u32 val) -> futex_wake(int nr_wake).
  const int32_t nr_wake = static_cast<int32_t>(static_cast<uint32_t>(static_cast<uint64_t>(n)));
  int64_t woken = 0;
  for (;;) {
    int first = -1;
    for (int u = 0; u < num_threads(); ++u) {
      const SimThread& w = threads_[u];
      if (w.state == ThreadState::kBlocked && w.futex_addr == addr &&
          (first < 0 || w.wait_seq < threads_[first].wait_seq)) {
        first = u;
      }
    }
    if (first < 0) break;
    Wake(first, 0, t);
    ++wakes_;
    if (++woken >= nr_wake) break;
  }
  return woken;
}

int64_t Machine::Sleep(int t, int64_t ns) {
  if (ns < 0) return kEinvalErr;
  // hrtimer_nanosleep() -> hrtimer_set_expires_range_ns() -> ktime_add_safe()
  // (kernel/time/hrtimer.c): the deadline saturates at KTIME_MAX (INT64_MAX).
  constexpr uint64_t kKtimeMax = static_cast<uint64_t>(INT64_MAX);
  const uint64_t now = ClockNs(threads_[t].cpu);
  const uint64_t left = now >= kKtimeMax ? 0 : kKtimeMax - now;
  threads_[t].wake_at_ns = static_cast<uint64_t>(ns) >= left ? kKtimeMax : now + static_cast<uint64_t>(ns);
  next_due_ns_ = std::min(next_due_ns_, threads_[t].wake_at_ns);
  BlockRunning(t, ThreadState::kSleeping);
  return 0;
}

void Machine::BlockRunning(int t, ThreadState why) {
  SimThread& th = threads_[t];
  const int cpu = th.cpu;
  th.state = why;
  th.event_mask |= kEventPreempt;
  th.notify_resume = true;
  PreemptLockSchedOut(*this, t);
  abi_->MmCidSwitchOut(*this, t, cpu);
  TouchThread(t);
  if (record_) {
    Record(TraceKind::kBlock, cpu, t, th.cur().pc, static_cast<int64_t>(why == ThreadState::kBlocked ? th.futex_addr : 0),
           static_cast<int64_t>(why == ThreadState::kSleeping ? th.wake_at_ns : 0));
  }
  PickNext(cpu, -1);
  if (cpus_[last_cpu_].running < 0) OnAllIdle();
}

void Machine::Wake(int t, int64_t ret, int waker) {
  SimThread& th = threads_[t];
  th.state = ThreadState::kRunnable;
  th.cur().r[0] = ret;
  if (clock_ != nullptr) {
    // select_task_rq() may pick another CPU: set_task_cpu() -> rseq_migrate().
    const int to = clock_->SelectTaskRq(t, th.cpu);
    if (to != th.cpu) {
      abi_->RseqMigrate(*this, t);
      if (record_) Record(TraceKind::kMigrate, th.cpu, t, th.cur().pc, to);
      th.cpu = to;
    }
  }
  if (record_) Record(TraceKind::kWake, th.cpu, t, th.cur().pc, waker, ret);
  Enqueue(th.cpu, t);
  if (cpus_[last_cpu_].running < 0) MoveDefaultCpu(th.cpu, /*runs=*/false);
}

void Machine::OnAllIdle() {
  if (finished_ || live_threads_ == 0) return;
  uint64_t due = ~0ull;
  for (const SimThread& th : threads_) {
    if (th.state == ThreadState::kSleeping) due = std::min(due, th.wake_at_ns);
  }
  if (due == ~0ull) {
    std::string who;
    for (const SimThread& th : threads_) {
      if (th.state != ThreadState::kBlocked) continue;
      if (!who.empty()) who += ", ";
      char buf[32];
      std::snprintf(buf, sizeof buf, "0x%llx", static_cast<unsigned long long>(th.futex_addr));
      who += s_.threads[th.id].name + " on " + buf;
    }
    out_->verdict = Verdict::kDeadlock;
    out_->message = "deadlock: every live thread waits on a futex that no thread can wake (" + who + ")";
    if (record_) Record(TraceKind::kDeadlock, -1, -1, 0, live_threads_, 0, out_->message);
    EndExecution();
    return;
  }
  now_ns_ = due;
  next_due_ns_ = 0;  // rescanned by the next timed decision
  for (int u = 0; u < num_threads(); ++u) {
    if (threads_[u].state == ThreadState::kSleeping && threads_[u].wake_at_ns == due) Wake(u, 0, -1);
  }
}

void Machine::WakeDue(uint64_t horizon_ns) {
  std::vector<std::pair<uint64_t, int>> due;
  uint64_t next = ~0ull;
  for (int u = 0; u < num_threads(); ++u) {
    const SimThread& th = threads_[u];
    if (th.state != ThreadState::kSleeping) continue;
    if (th.wake_at_ns <= horizon_ns) {
      due.emplace_back(th.wake_at_ns, u);
    } else {
      next = std::min(next, th.wake_at_ns);
    }
  }
  std::sort(due.begin(), due.end());
  for (const auto& [at, u] : due) {
    now_ns_ = std::max(now_ns_, at);
    Wake(u, 0, -1);
  }
  next_due_ns_ = next;
}

bool Machine::FairWindow() {
  for (int c = 0; c < num_cpus_; ++c) {
    if ((c == last_cpu_ && !default_waiting_) || cpus_[c].running < 0) continue;
    const uint64_t since = std::max(cpus_[c].ran_until, opt_.max_steps / 2);
    if (steps_ > since) window_max_wait_ = std::max(window_max_wait_, steps_ - since);
  }
  return window_max_wait_ <= fair_wait_ + static_cast<uint64_t>(num_cpus_);
}

bool Machine::CycleWasFair(uint64_t since) const {
  for (const SimThread& th : threads_) {
    if (th.state != ThreadState::kRunnable) continue;
    if (cpus_[th.cpu].running != th.id || LastRanStep(th.cpu) <= since) return false;
  }
  return true;
}

bool Machine::CheckCycle() {
  // Why a repeated state is a livelock (sound): the machine is deterministic
  // given the decisions, and the state compared is all the machine has that
  // can influence what follows (StateHash's words: every thread's registers,
  // pc, call and signal frames, rseq registration and event mask; the CPUs'
  // run queues; mm_cid and rfc2015 state; the event counts; the
  // observations) plus all of memory. So the decisions taken from the mark
  // to now, taken again from now, lead back to this state, and so on
  // forever: an infinite execution that repeats the cycle. In it no thread
  // exits (thread states are hashed), observes (observations are hashed) or
  // is woken (wakes_ unchanged), no event is injected (the counts are
  // hashed), and it is fair: each runnable thread runs on its CPU in every
  // period (CycleWasFair; a queued thread only runs after a preemption,
  // which is an event, as FairWindow and stateful search's FairCycle treat
  // it). Left out, so never reported: scenarios with a native thread (its
  // C++ state is not hashed) and states with a sleeping thread (time moves
  // on even when the state does not, and a sleeper's wake-up is progress).
  for (const SimThread& th : threads_) {
    if (th.native || th.state == ThreadState::kSleeping) {
      cycle_mark_.reset();
      cycle_power_ = 1;
      return true;
    }
  }
  std::vector<uint64_t>& w = hash_words_;
  w.clear();
  LayOutStateButMemory(w, /*mm_cid=*/true, ~0u);
  const std::pair<uint64_t, uint64_t> rest = Xxh3_128(w.data(), w.size() * sizeof(uint64_t));
  if (cycle_mark_ && cycle_mark_->rest == rest && cycle_mark_->wakes == wakes_ &&
      cycle_mark_->memory == Xxh3_128(mem_, mem_size_) && CycleWasFair(cycle_mark_->steps)) {
    const CycleMark& m = *cycle_mark_;
    out_->verdict = Verdict::kLivelock;
    out_->message = "the state at boundary " + std::to_string(m.boundary) + " (step " + std::to_string(m.steps) +
                    ") comes back " + std::to_string(boundary_ - m.boundary) + " boundaries (" +
                    std::to_string(steps_ - m.steps) +
                    " steps) later, every runnable thread having run in between: a fair cycle without progress " +
                    "(no exit, observation, wake or event), repeated forever";
    EndExecution();
    return false;
  }
  if (!cycle_mark_ || steps_ - cycle_mark_->steps >= cycle_power_) {
    if (cycle_mark_) cycle_power_ *= 2;
    cycle_mark_ = CycleMark{rest, Xxh3_128(mem_, mem_size_), boundary_, steps_, wakes_};
  }
  return true;
}

bool Machine::CheckStepBudget() {
  size_t observed = 0;
  for (const ThreadOutcome& o : out_->threads) observed += o.observed.size();
  const uint64_t data_bytes = area_base_ - kDataBase;
  if (!mid_taken_) {
    // Half the budget: what the second half's progress is measured against.
    mid_taken_ = true;
    mid_live_ = live_threads_;
    mid_wakes_ = wakes_;
    mid_observed_ = observed;
    mid_memory_.assign(mem_, mem_ + data_bytes);
    window_max_wait_ = 0;
    step_check_ = opt_.max_steps;
    if (steps_ < opt_.max_steps) return true;
  }
  const bool progress = live_threads_ != mid_live_ || wakes_ != mid_wakes_ || observed != mid_observed_ ||
                        (data_bytes != 0 && std::memcmp(mid_memory_.data(), mem_, data_bytes) != 0);
  const std::string span = "steps " + std::to_string(opt_.max_steps / 2) + ".." + std::to_string(opt_.max_steps);
  if (!progress && !FairWindow()) {
    // No livelock verdict for a window in which a scheduler's own choices
    // kept a CPU with a runnable thread from running: real CPUs run in
    // parallel, so no machine runs that window. Abandoned like an explorer's
    // redundant execution: every fair continuation of its prefix is another
    // schedule (the default continuation is fair: RotateToStarvedCpu).
    out_->stopped = true;
    out_->message = "no progress in " + span + ", but the schedule kept a CPU with a runnable thread from running for " +
                    std::to_string(window_max_wait_) + " steps (more than " + std::to_string(fair_wait_) +
                    " + one per CPU): an unfair schedule, not a livelock";
  } else if (progress) {
    out_->verdict = Verdict::kStepLimit;
    out_->message = "execution exceeded " + std::to_string(opt_.max_steps) +
                    " steps while threads still made progress in " + span + " (raise --max-steps)";
  } else {
    out_->verdict = Verdict::kLivelock;
    out_->message = "no progress in " + span +
                    " (no thread exited, observed or was woken, and no data memory changed): the threads only spin";
  }
  EndExecution();
  return false;
}

}  // namespace rseqmc
