// Events only where they can matter (issue 18): the per-instruction facts
// behind one representative per class of equivalent injected-event positions.
// The pruning decision (which positions the exhaustive strategies offer) is
// model/explorer.cc's; this file says, for thread t at boundary b before its
// next instruction I, when an injected event E at b is equivalent to E at
// t's next boundary b+1.
//
// The argument. Let E1 be an execution with E at b and E2 the same execution
// with I moved to just before E. Nothing between E and I in E1 can tell them
// apart when
//   (a) I reads and writes only t's own registers (NextStepIsThreadLocal):
//       no other thread's transition touches them, a signal handler runs in
//       a fresh context (Machine::DeliverSignal: r1 = signo, r2 = si_addr,
//       the rest 0) and sigreturn restores t's context as it was, and the
//       kernel's work at E (switch-out, migration, the ID and rseq_cs
//       updates on return to user space, the signal frame) writes no
//       register of t but its IP;
//  (a') or E is a preemption, migration or IPI and I is a load, store or
//       atomic of data memory below the rseq areas while t is the only live
//       thread (NextStepIsLoneMemoryAccess): no other thread exists to read
//       or write memory between E and I, E runs no handler and writes only
//       t's rseq area (its IDs, and rseq_cs, which rule (b) keeps equal) and
//       kernel state, which I does not touch; the only user memory E reads
//       is the struct rseq_cs that rseq_cs points to, which I must not touch
//       either (a descriptor built in data memory: a store there turns the
//       event's lazy clear into SIGSEGV, or moves its range; found by an
//       attack on this rule, tests/event_commute_test.cc) (no 2015-RFC CPU pointer or
//       preempt-lock word, which the kernel writes or reads at a switch, is
//       registered), and I writes no register of t that E reads; the
//       allocator's and the commit oracle's per-thread orders are judged
//       inside critical sections only, which rule (b) keeps E out of.
//       Whether t is alone depends on the other threads, so DPOR's event
//       plans, whose positions must depend on t's state only, leave this
//       rule to their tail (model/explorer.cc). On percpu_list it merges
//       every event during the last thread's drain of the lists into one,
//       before its exit;
//   (b) the one thing of t that E and everything after it may read - t's IP
//       - makes no difference: the kernel's restart test (in_rseq_cs(), or a
//       2015-RFC region) and a handler's sigctx_restart give the same answer
//       at b as at b+1. IpMayRestart(b) and IpMayRestart(b+1) are false for
//       every place I may go to, including the range of every descriptor of
//       the program, so that neither a handler arming rseq_cs while t waits
//       at b nor a region registered meanwhile can make b and b+1 differ
//       (b+1 == start_ip is inside); and no handler E can run reads the
//       interrupted context (it could print the IP: such a signal is not
//       merged, nor any event on a thread whose preempt-lock signal has such
//       a handler, since its switch-out sends it, preempt_lock.h PL1-PL4);
//   (c) I reads no value E or a later event may change: getcpu reads t's
//       CPU, which only a migration changes (an injected one, or a handler's
//       sched_setaffinity), so getcpu is merged only for a preemption or an
//       IPI after which the bounds allow no further event, on a thread
//       without a preempt-lock signal (its handler may migrate). rseq area
//       loads (cpu_id, cpu_id_start, mm_cid, node_id) and every syscall are
//       not register-only and never merged.
// `rseq_cs` clearing is a store, but the kernel makes it at b exactly when
// it makes it at b+1 (both outside, the descriptor unchanged: I stores
// nothing). The final states of E1 and E2 are then equal, and E2's event
// is the same event at b+1; by induction along a chain of such boundaries
// every E is equivalent to E at the chain's last boundary, the first where
// this test fails, which model/explorer.cc keeps: counterexamples keep
// their length (an event moved later is still one event) and the event
// bound K counts the same events.
#include <bit>

#include "sim/machine.h"

namespace rseqmc {

LocalOp Machine::ClassifyLocalOp(Op op) {
  switch (op) {
    case Op::kLi: case Op::kMov: case Op::kAdd: case Op::kSub: case Op::kAnd: case Op::kOr:
    case Op::kXor: case Op::kShl: case Op::kShr: case Op::kMul: case Op::kLa:
    case Op::kBeq: case Op::kBne: case Op::kBlt: case Op::kBge: case Op::kBltu: case Op::kBgeu:
    case Op::kJmp: case Op::kSig: case Op::kNop: case Op::kFence: case Op::kGetcpu: case Op::kRseqAddr:
      return LocalOp::kAlways;
    case Op::kCall:    // within kMaxCallDepth (NextStepEndsProcess)
    case Op::kAssert:  // when it passes (NextStepEndsProcess)
    case Op::kRet:     // inside a function: exit and sigreturn are visible
      return LocalOp::kDepends;
    default:
      return LocalOp::kNever;
  }
}

bool Machine::NextStepIsThreadLocal(int t) const {
  const SimThread& th = threads_[t];
  if (th.notify_resume || th.preempt_lock_notify || (th.pending & ~th.blocked) != 0) return false;
  const Context& c = th.cur();
  if (c.pc == kNativePc || c.pc >= code_size_) return false;
  if (NextStepEndsProcess(t)) return false;
  switch (ClassifyLocalOp(code_[c.pc].op)) {
    case LocalOp::kAlways:
      return true;
    case LocalOp::kDepends:
      return code_[c.pc].op != Op::kRet || c.call_depth > 0;
    case LocalOp::kNever:
      break;
  }
  return false;
}

// The random strategy's shortcut (Scheduler::LocalBoundaries). Without
// events, a local step of the default thread commutes with every step of
// every other thread (NextStepIsThreadLocal), so a CPU switch before it is
// equivalent to the switch after it. With events still to come, it must also
// commute with every event the scheduler may inject on the thread here: the
// most restrictive kind is a migration with more events allowed after it
// (getcpu never commutes with it, rule (c) above), and a signal whose handler
// reads the interrupted context (rule (b)) is excluded for every signal at
// once. Events on other CPUs touch neither the thread's registers nor its CPU
// and commute with the step.
bool Machine::LocalBoundaryIsFreeByRule(int t, Scheduler::LocalBoundaries mode) const {
  if (mode == Scheduler::LocalBoundaries::kAsked || !NextStepIsThreadLocal(t)) return false;
  return mode == Scheduler::LocalBoundaries::kNoEvents ||
         (sigctx_handlers_ == 0 && EventCommutesWithNextStep(t, DecisionKind::kMigrate, -1, /*later_events=*/true));
}

bool Machine::IpMayRestart(int t, uint32_t pc) const {
  for (const CsDescriptor& d : s_.program.descriptors) {
    if (pc >= d.start && pc < d.post_commit) return true;
  }
  return abi_->InRseqCs(*this, t, CodeAddress(pc));
}

namespace {

// True if the next step may read a CPU the event (or a later one) changes:
// rule (c) above.
bool ReadsMovableCpu(const SimThread& th, DecisionKind kind, bool later_events) {
  return later_events || th.preempt_lock_flag != 0 ||
         (kind != DecisionKind::kPreempt && kind != DecisionKind::kIpi);
}

}  // namespace

bool Machine::EventCommutesWithNextStep(int t, DecisionKind kind, int signo, bool later_events) const {
  return kind != DecisionKind::kStep && NextStepIsThreadLocal(t) && EventCommutesAt(t, kind, signo, later_events);
}

bool Machine::EventCommutesWithLoneMemoryStep(int t, DecisionKind kind, int signo, bool later_events) const {
  return (kind == DecisionKind::kPreempt || kind == DecisionKind::kMigrate || kind == DecisionKind::kIpi) &&
         NextStepIsLoneMemoryAccess(t) && EventCommutesAt(t, kind, signo, later_events);
}

bool Machine::EventCommutesAt(int t, DecisionKind kind, int signo, bool later_events) const {
  const SimThread& th = threads_[t];
  if (kind == DecisionKind::kSignal && HandlerReadsSigctx(signo)) return false;
  if (th.preempt_lock_flag != 0 && HandlerReadsSigctx(th.preempt_lock_signo)) return false;
  const Context& c = th.cur();
  // getcpu; rseq_load of cpu_id, cpu_id_start, node_id, mm_cid: rewritten after a migration.
  const Op op = code_[c.pc].op;
  if ((op == Op::kGetcpu || op == Op::kRseqLoad) && ReadsMovableCpu(th, kind, later_events)) return false;
  const auto [a, b] = SuccessorsOf(t, c.pc);
  return !IpMayRestart(t, c.pc) && !IpMayRestart(t, a) && !IpMayRestart(t, b);
}

std::pair<uint32_t, uint32_t> Machine::SuccessorsOf(int t, uint32_t pc) const {
  const Instr& in = code_[pc];
  switch (in.op) {
    case Op::kBeq: case Op::kBne: case Op::kBlt: case Op::kBge: case Op::kBltu: case Op::kBgeu:
      return {pc + 1, in.target};
    case Op::kJmp:
      return {in.target, in.target};
    case Op::kCall:  // within kMaxCallDepth: NextStepEndsProcess
      return {s_.program.functions[in.target].first, s_.program.functions[in.target].first};
    case Op::kRet: {  // call_depth > 0: NextStepIsThreadLocal
      const Context& c = threads_[t].cur();
      return {c.ret_stack[c.call_depth - 1], c.ret_stack[c.call_depth - 1]};
    }
    default:
      return {pc + 1, pc + 1};
  }
}

bool Machine::AbiMayRestart(int t, uint32_t pc) const {
  const auto [a, b] = SuccessorsOf(t, pc);
  return abi_->InRseqCs(*this, t, CodeAddress(pc)) || abi_->InRseqCs(*this, t, CodeAddress(a)) ||
         (b != a && abi_->InRseqCs(*this, t, CodeAddress(b)));
}

void Machine::ClassifyFreeBoundaries() {
  std::vector<uint8_t> in_desc(code_size_ + 1, 0);  // + 1: the pc after the last instruction
  for (const CsDescriptor& d : s_.program.descriptors) {
    for (uint32_t i = d.start; i < d.post_commit && i <= code_size_; ++i) in_desc[i] = 1;
  }
  free_at_.assign(code_size_, 0);
  for (uint32_t pc = 0; pc < code_size_; ++pc) {
    if (local_op_[pc] != LocalOp::kAlways) continue;
    free_at_[pc] = kFreeWithoutEvents;
    const auto [a, b] = SuccessorsOf(0, pc);  // no ret: kDepends
    const bool inside = in_desc[pc] || (a <= code_size_ && in_desc[a]) || (b <= code_size_ && in_desc[b]) ||
                        a > code_size_ || b > code_size_;
    if (!inside && code_[pc].op != Op::kGetcpu && sigctx_handlers_ == 0) free_at_[pc] |= kFreeWithEvents;
  }
}

// Independence of a thread-local step (NextStepIsIndependent), the C1
// condition of model/explorer.cc's ample sets. A register-only step I of t
// reads and writes nothing another thread's transition writes or reads, with
// two exceptions, where another thread u makes kernel work pending on t
// without t's doing: u's membarrier_rseq IPIs t's CPU (ipi_rseq() ->
// rseq_preempt(): notify-resume, handled on t's return to user space at its
// next step) and u's tgkill makes a signal pending on t (delivered at t's
// next step). Running I first, then u's transition, leaves that work to run
// at t's next boundary b+1 instead of at b: the two orders reach the same
// final states exactly when the same IPI or signal injected at b and at b+1
// do (the argument above, EventCommutesWithNextStep for kIpi and kSignal):
// outside every critical section, no handler that reads the interrupted
// context, no getcpu that a handler or a later injected migration can make
// read another CPU. Inside a section they do not commute (t aborts with or
// without I's register write: tests/explorer_test.cc,
// ACrossThreadIpiInsideASectionIsNotReordered). A process-wide end (SIGKILL,
// a failed assert of u, a fault) stops t before or after I: the outcome
// holds memory, returns and observations, none of which I changes.
//
// The same holds for an rseq_load or rseq_arm of t when no load or store of
// the program reaches an rseq area (the caller's `areas_private`, checked by
// Machine::area_accessed): t's area is then written only by t's rseq_arm and
// by the kernel on t's own transitions (the ID updates and the rseq_cs clear
// on t's return to user space, registration by t: sim/kernel/legacy.cc,
// abi_6_19.cc), and read only by t's rseq_load and by the kernel on t's
// transitions. An interruption from another thread is pending work handled on
// t's next return to user space: before an rseq_arm it reads the old rseq_cs
// at the arm's IP, after it the new one at start_ip, hence IpMayRestart of the
// next IP; before an rseq_load it may rewrite the IDs (a handler's migration),
// hence the getcpu rule. The areas are not part of an outcome.
void Machine::NoteCrossThreadInterruptions(const Scenario& s) {
  for (const ThreadSpec& th : s.threads) {
    if (th.native) {
      cross_signals_ = ((uint64_t{1} << (kMaxSignal + 1)) - 1) & ~(uint64_t{1} | uint64_t{1} << kSigKill);
      cross_ipi_ = true;
      return;
    }
  }
  for (const Instr& in : s.program.code) {
    if (in.op == Op::kMembarrierRseq) cross_ipi_ = true;
    // SIGKILL ends the process when sent (the case above), no handler runs.
    if (in.op == Op::kTgkill && in.aux > 0 && in.aux <= kMaxSignal && in.aux != kSigKill) {
      cross_signals_ |= uint64_t{1} << in.aux;
    }
  }
}

namespace {

// t's next instruction touches only t's own rseq area (see
// NextStepIsIndependent).
bool OwnAreaOnly(Op op) { return op == Op::kRseqLoad || op == Op::kRseqArm; }

}  // namespace

bool Machine::NextStepIsIndependent(int t, bool later_events, bool areas_private) const {
  if (!NextStepIsThreadLocal(t)) {
    const SimThread& th = threads_[t];
    if (!areas_private || th.notify_resume || th.preempt_lock_notify || (th.pending & ~th.blocked) != 0) return false;
    const Context& c = th.cur();
    if (c.pc == kNativePc || c.pc >= code_size_ || !OwnAreaOnly(code_[c.pc].op)) return false;
  }
  if (cross_ipi_ && !EventCommutesAt(t, DecisionKind::kIpi, -1, later_events)) return false;
  for (uint64_t b = cross_signals_; b != 0; b &= b - 1) {
    if (!EventCommutesAt(t, DecisionKind::kSignal, std::countr_zero(b), later_events)) return false;
  }
  return true;
}

// Marks every function `f` may call (transitively) in `reach`.
static void MarkCallees(const Program& p, uint32_t f, std::vector<bool>& reach) {
  if (reach[f]) return;
  reach[f] = true;
  const Function& fn = p.functions[f];
  for (uint32_t i = fn.first; i < fn.first + fn.count; ++i) {
    if (p.code[i].op == Op::kCall) MarkCallees(p, p.code[i].target, reach);
  }
}

uint64_t Machine::SignalsWhoseHandlerReadsSigctx(const Scenario& s) {
  const Program& p = s.program;
  uint64_t bits = 0;
  for (const SignalSpec& sg : s.signals) {
    if (sg.handler < 0 || sg.signo < 0 || sg.signo > kMaxSignal) continue;
    std::vector<bool> reach(p.functions.size(), false);
    MarkCallees(p, static_cast<uint32_t>(sg.handler), reach);
    for (size_t f = 0; f < reach.size(); ++f) {
      const Function& fn = p.functions[f];
      for (uint32_t i = fn.first; reach[f] && i < fn.first + fn.count; ++i) {
        if (p.code[i].op == Op::kSigctxRestart) bits |= uint64_t{1} << sg.signo;
      }
    }
  }
  return bits;
}

}  // namespace rseqmc
