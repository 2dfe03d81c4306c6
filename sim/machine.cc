// The kernel model and the IR interpreter.
//
// Every rseq rule implemented here cites reference/rseq-semantics.md §7 by rule
// number ("rule 8") and the kernel function it follows (kernel/rseq.c of the
// legacy kernels: __rseq_handle_notify_resume, rseq_ip_fixup, rseq_get_rseq_cs,
// rseq_need_restart, rseq_update_cpu_node_id, clear_rseq_cs).
#include "sim/machine.h"

#include <algorithm>
#include <bit>
#include <cstddef>
#include <utility>

#define XXH_INLINE_ALL
#include <xxhash.h>

#include "sim/builder.h"
#include "sim/diag.h"
#include "sim/placement.h"
#include "sim/fiber_pool.h"
#include "sim/kernel/preempt_lock.h"
#include "sim/state_hash.h"
#include "sim/thread_api.h"

namespace rseqmc {

namespace {
// The code address reported for a native (C++) thread's own code.
constexpr uint64_t kNativeIp = 0x00007f0000000000ull;
constexpr int64_t kEinval = -22, kEsrch = -3, kEintr = -4;

// Default action of a signal without a disposition (SIG_DFL), x86-64 numbers,
// as include/linux/signal.h's SIG_KERNEL_IGNORE_MASK / SIG_KERNEL_STOP_MASK /
// SIG_KERNEL_COREDUMP_MASK and signal(7) give it. SIGCONT's "continue" does
// nothing to a running process, so it counts as ignored (the kernel's ignore
// mask holds it too).
enum class DefaultAction : uint8_t { kTerminate, kCoreDump, kIgnore, kStop };

DefaultAction DefaultActionOf(int signo) {
  switch (signo) {
    case 17:  // SIGCHLD
    case 18:  // SIGCONT
    case 23:  // SIGURG
    case 28:  // SIGWINCH
      return DefaultAction::kIgnore;
    case 19:  // SIGSTOP
    case 20:  // SIGTSTP
    case 21:  // SIGTTIN
    case 22:  // SIGTTOU
      return DefaultAction::kStop;
    case 3:   // SIGQUIT
    case 4:   // SIGILL
    case 5:   // SIGTRAP
    case 6:   // SIGABRT
    case 7:   // SIGBUS
    case 8:   // SIGFPE
    case 11:  // SIGSEGV
    case 24:  // SIGXCPU
    case 25:  // SIGXFSZ
    case 31:  // SIGSYS
      return DefaultAction::kCoreDump;
    default:
      return DefaultAction::kTerminate;
  }
}
}  // namespace

Machine::Machine(const Scenario& s, const RunOptions& options)
    : s_(s),
      opt_(options),
      abi_(&AbiFor(options.kernel.model)),
      code_(s.program.code.data()),
      code_size_(static_cast<uint32_t>(s.program.code.size())),
      num_cpus_(static_cast<int>(s.num_cpus)) {
  if (std::optional<AbiMismatch> no = abi_->NotApplicable(s)) throw InputError(s.file, no->loc, no->message, "", no->hint);
  const Program& p = s.program;
  properties_.reserve(s.properties.size());
  for (const Property& prop : s.properties) properties_.emplace_back(s, prop.expr);
  // Data image: symbols, then descriptors (32-byte aligned), then rseq areas.
  desc_base_ = rseqmc::DescriptorAddress(p, 0);
  for (const Symbol& sym : p.symbols) data_end_ = std::max(data_end_, sym.address + sym.size_bytes);
  area_base_ = desc_base_ + kRseqCsBytes * p.descriptors.size();
  mem_size_ = area_base_ - kDataBase + kRseqAreaBytes * s.threads.size();
  init_mem_.assign(mem_size_, 0);
  mem_ = init_mem_.data();
  WriteSymbolImage(p, s.num_cpus, init_mem_.data());
  for (size_t d = 0; d < p.descriptors.size(); ++d) {
    const CsDescriptor& cs = p.descriptors[d];
    uint64_t a = DescriptorAddress(static_cast<uint32_t>(d));
    Store(a + 0, cs.version, 4);
    Store(a + 4, cs.flags, 4);
    Store(a + 8, CodeAddress(cs.start), 8);
    Store(a + 16, (static_cast<uint64_t>(cs.post_commit) - cs.start) * kInstrBytes, 8);
    Store(a + 24, CodeAddress(cs.abort), 8);
  }
  cpu_mask_ = num_cpus_ >= 64 ? ~0ull : ((1ull << num_cpus_) - 1);
  signal_handler_.assign(kMaxSignal + 1, 0);
  signal_nodefer_.assign(kMaxSignal + 1, 0);
  for (const SignalSpec& sg : s.signals) {
    if (sg.signo < 1 || sg.signo > kMaxSignal) continue;
    signal_handler_[sg.signo] = sg.handler < 0 ? ~0u : static_cast<uint32_t>(sg.handler) + 1;
    signal_nodefer_[sg.signo] = sg.nodefer;
  }
  sigctx_handlers_ = SignalsWhoseHandlerReadsSigctx(s);
  NoteCrossThreadInterruptions(s);
  // Initial threads: registered ones have their area filled as glibc's
  // registration leaves it (IDs of the initial CPU, rule 3); unregistered ones
  // read cpu_id == -1 (RSEQ_CPU_ID_UNINITIALIZED).
  init_threads_.resize(s.threads.size());
  for (const Instr& in : p.code) {
    const bool id_load = in.op == Op::kRseqLoad && (static_cast<RseqField>(in.aux) == RseqField::kNodeId ||
                                                    static_cast<RseqField>(in.aux) == RseqField::kMmCid);
    if (id_load) node_cid_readable_ = true;  // loads through rseq_addr: NoteAreaRead
  }
  for (const ThreadSpec& ts : s.threads) node_cid_readable_ |= static_cast<bool>(ts.native);
  for (size_t t = 0; t < s.threads.size(); ++t) {
    const ThreadSpec& ts = s.threads[t];
    SimThread& th = init_threads_[t];
    th.id = static_cast<int>(t);
    th.cpu = static_cast<int>(ts.cpu);
    th.affinity = ts.affinity & cpu_mask_;
    th.native = static_cast<bool>(ts.native);
    Context& c = th.ctx[0];
    c.pc = th.native ? kNativePc : p.functions[ts.entry].first;
    for (auto [reg, v] : ts.args) c.r[reg] = v;
    uint64_t area = AreaAddress(static_cast<int>(t));
    if (ts.rseq_registered) {
      th.rseq_area = area;
      th.rseq_len = kRseqAreaBytes;
      th.rseq_sig = kRseqSig;
      Store(area + kRseqOffCpuIdStart, th.cpu, 4);
      Store(area + kRseqOffCpuId, th.cpu, 4);
      // node_id and mm_cid exist since 6.3; the 4.18 struct rseq has neither.
      if (NodeOf(th.cpu) != 0) ids_write_changed_ = true;
      if (abi_->HasNodeAndMmCid()) Store(area + kRseqOffNodeId, NodeOf(th.cpu), 4);
    } else {
      Store(area + kRseqOffCpuId, static_cast<uint32_t>(-1), 4);
    }
  }
  cpus_.resize(num_cpus_);
  fiber_active_.assign(s.threads.size(), 0);
  local_op_.reserve(code_size_);
  for (const Instr& in : p.code) local_op_.push_back(ClassifyLocalOp(in.op));
  ClassifyFreeBoundaries();
}

Machine::~Machine() = default;

uint32_t Machine::NodeOf(int cpu) const {
  return static_cast<uint32_t>(static_cast<uint64_t>(cpu) * s_.num_nodes / s_.num_cpus);
}

void Machine::Attach(Scheduler* scheduler, ExecutionResult* out) {
  sched_ = scheduler;
  out_ = out;
  record_ = opt_.record_trace;
  fp_on_ = scheduler->WantsFootprints();
  mem_hash_on_ = scheduler->WantsStateHash();
  clock_ = scheduler->clock();
  fp_.Clear();
  acc_ = opt_.record_accesses;
  out->accesses_recorded = acc_;
  out->mm_cid_read = false;
  if (acc_ && in_cs_.size() != code_size_) {
    in_cs_.assign(code_size_, 0);
    for (const CsDescriptor& d : s_.program.descriptors) {
      for (uint32_t i = d.start; i < d.post_commit && i < code_size_; ++i) in_cs_[i] = 1;
    }
  }
  out->verdict = Verdict::kPass;
  out->stopped = false;
  out->message.clear();
  out->properties.clear();
  out->schedule.kernel = opt_.kernel.model;
}

namespace {
// Copies a thread's fields and its live contexts (0..depth); the handler
// contexts above are rewritten whenever a frame is pushed.
void CopyLiveThread(const SimThread& from, SimThread& to) {
  std::memcpy(static_cast<void*>(&to), &from, offsetof(SimThread, ctx));
  for (int d = 0; d <= from.depth; ++d) to.ctx[d] = from.ctx[d];
}
// A context's live part: return addresses above call_depth are never read
// (nor hashed), and copying all 272 bytes took a `rep movsq` whose start-up
// was half of Reset.
void CopyLiveContext(const Context& from, Context& to) {
  to.r = from.r;
  to.pc = from.pc;
  to.call_depth = from.call_depth;
  std::copy_n(from.ret_stack.begin(), from.call_depth, to.ret_stack.begin());
  to.signo = from.signo;
  to.saved_blocked = from.saved_blocked;
}
}  // namespace

void Machine::Save(MachineCheckpoint& ck) const {
  ck.valid = true;
  ck.memory.assign(mem_, mem_ + mem_size_);
  ck.memory_hash = mem_hash_on_ ? std::optional<MemoryHash>(mem_hash_) : std::nullopt;
  ck.threads.resize(threads_.size());
  for (size_t t = 0; t < threads_.size(); ++t) CopyLiveThread(threads_[t], ck.threads[t]);
  ck.cpus.resize(cpus_.size());
  for (size_t c = 0; c < cpus_.size(); ++c) {
    ck.cpus[c].running = cpus_[c].running;
    ck.cpus[c].queue.assign(cpus_[c].queue.begin(), cpus_[c].queue.end());
    ck.cpus[c].ran_until = cpus_[c].ran_until;
  }
  ck.fair_check = fair_check_;
  ck.window_max_wait = window_max_wait_;
  ck.default_waiting = default_waiting_;
  ck.out.resize(out_->threads.size());
  for (size_t t = 0; t < out_->threads.size(); ++t) {
    const ThreadOutcome& o = out_->threads[t];
    ck.out[t] = {o.exited, o.ret, o.aborts, o.final_cpu, o.observed.size()};
  }
  ck.schedule = out_->schedule.entries.size();
  ck.trace = out_->trace.size();
  ck.accesses = out_->accesses.size();
  ck.extra_strings = out_->extra_strings.size();
  ck.last_cpu = last_cpu_;
  ck.live_threads = live_threads_;
  ck.steps = steps_;
  ck.boundary = boundary_;
  ck.mmcid = mmcid_;
  ck.rfc = rfc_;
  std::copy(std::begin(events_), std::end(events_), std::begin(ck.events));
  ck.total_events = total_events_;
  ck.now_ns = now_ns_;
  ck.wait_seq = wait_seq_;
  ck.wakes = wakes_;
  ck.mid_taken = mid_taken_;
  if (mid_taken_) {
    ck.mid_live = mid_live_;
    ck.mid_wakes = mid_wakes_;
    ck.mid_observed = mid_observed_;
    ck.mid_memory = mid_memory_;
  }
}

void Machine::ResumeFrom(const MachineCheckpoint& ck, Scheduler* scheduler, ExecutionResult* out) {
  Attach(scheduler, out);
  out->memory.assign(ck.memory.begin(), ck.memory.end());
  mem_ = out->memory.data();
  if (mem_hash_on_) mem_hash_ = ck.memory_hash ? *ck.memory_hash : MemoryHashFromScratch();
  for (size_t t = 0; t < threads_.size(); ++t) CopyLiveThread(ck.threads[t], threads_[t]);
  for (size_t c = 0; c < cpus_.size(); ++c) {
    cpus_[c].running = ck.cpus[c].running;
    cpus_[c].queue.assign(ck.cpus[c].queue.begin(), ck.cpus[c].queue.end());
    cpus_[c].ran_until = ck.cpus[c].ran_until;
  }
  fair_wait_ = FairWaitSteps();
  fair_check_ = ck.fair_check;
  window_max_wait_ = ck.window_max_wait;
  default_waiting_ = ck.default_waiting;
  for (size_t t = 0; t < out->threads.size(); ++t) {
    ThreadOutcome& o = out->threads[t];
    const MachineCheckpoint::Out& c = ck.out[t];
    o.exited = c.exited;
    o.ret = c.ret;
    o.aborts = c.aborts;
    o.final_cpu = c.final_cpu;
    o.observed.resize(c.observed);
  }
  out->schedule.entries.resize(ck.schedule);
  out->trace.resize(ck.trace);
  out->accesses.resize(ck.accesses);
  out->extra_strings.resize(ck.extra_strings);
  last_cpu_ = ck.last_cpu;
  live_threads_ = ck.live_threads;
  steps_ = ck.steps;
  boundary_ = ck.boundary;
  mmcid_ = ck.mmcid;
  rfc_ = ck.rfc;
  std::copy(std::begin(ck.events), std::end(ck.events), std::begin(events_));
  total_events_ = ck.total_events;
  now_ns_ = ck.now_ns;
  next_due_ns_ = 0;  // unknown: the next timed decision rescans the sleepers
  wait_seq_ = ck.wait_seq;
  wakes_ = ck.wakes;
  mid_taken_ = ck.mid_taken;
  step_check_ = mid_taken_ ? opt_.max_steps : opt_.max_steps / 2;
  poll_check_ = stop_poll_ != nullptr ? steps_ + kStopPollSteps : ~0ull;
  check_at_ = NextCheck();
  // A cycle is looked for along this path only from here (CheckCycle).
  cycle_mark_.reset();
  cycle_power_ = 1;
  if (mid_taken_) check_at_ = std::min(check_at_, ck.steps);
  if (mid_taken_) {
    mid_live_ = ck.mid_live;
    mid_wakes_ = ck.mid_wakes;
    mid_observed_ = ck.mid_observed;
    mid_memory_ = ck.mid_memory;
  }
  finished_ = false;
}

void Machine::PrepareStart(const Placement* place, ExecutionResult* out) {
  out->memory.assign(init_mem_.begin(), init_mem_.end());
  mem_ = out->memory.data();
  if (mem_hash_on_) {
    if (!init_mem_hash_) init_mem_hash_ = MemoryImageHash(init_mem_.data(), init_mem_.size());
    mem_hash_ = *init_mem_hash_;
  }
  if (threads_.size() != init_threads_.size()) threads_ = init_threads_;
  for (size_t t = 0; t < threads_.size(); ++t) {
    // Only the main context starts with state; handler contexts are written
    // when a frame is pushed.
    SimThread& th = threads_[t];
    const SimThread& init = init_threads_[t];
    th.state = init.state;
    th.cpu = init.cpu;
    th.affinity = init.affinity;
    th.rseq_area = init.rseq_area;
    th.rseq_len = init.rseq_len;
    th.rseq_sig = init.rseq_sig;
    th.event_mask = 0;
    th.rseq_sched_switch = false;
    th.rseq_user_irq = false;
    th.rseq_ids_cpu = -1;
    th.rseq_ids_mm_cid = -1;
    th.notify_resume = false;
    th.chosen = false;
    th.mm_cid = -1;
    th.last_mm_cid = -1;
    th.rfc_cpu_ptr = 0;
    th.preempt_lock_flag = 0;
    th.preempt_lock_signo = 0;
    th.preempt_lock_notify = false;
    th.preempt_lock_siginfo = false;
    th.futex_addr = 0;
    th.wait_seq = 0;
    th.wake_at_ns = 0;
    th.pending = 0;
    th.blocked = 0;
    th.depth = 0;
    CopyLiveContext(init.ctx[0], th.ctx[0]);
  }
  out->schedule.placement.clear();
  if (place != nullptr) Place(*place, out);
  for (SimCpu& c : cpus_) {
    c.running = -1;
    c.queue.clear();
  }
  mmcid_.Clear();
  rfc_.regions.clear();
  rfc_.cpu_ptr_set = false;
  first_thread_ = -1;
  for (SimThread& th : threads_) {
    SimCpu& c = cpus_[th.cpu];
    if (c.running < 0) {
      c.running = th.id;
      AssignMmCid(th.id);
      if (th.rseq_area) abi_->RseqStartRegistered(*this, th.id, true);
    } else {
      c.queue.push_back(th.id);
      th.notify_resume = true;  // IDs are refreshed when it first switches in
      if (th.rseq_area) abi_->RseqStartRegistered(*this, th.id, false);
    }
  }
  last_cpu_ = 0;
  for (int c = 0; c < num_cpus_; ++c) {
    if (cpus_[c].running >= 0) {
      last_cpu_ = c;
      first_thread_ = cpus_[c].running;
      break;
    }
  }
}

void Machine::Reset(Scheduler* scheduler, ExecutionResult* out) {
  Attach(scheduler, out);
  out->accesses.clear();
  const Placement* place = scheduler->InitialPlacement();
  const bool plain = place == nullptr && !record_ && !acc_ && !fp_on_ && !mem_hash_on_;
  if (plain && prepared_.valid) {
    out->memory.assign(prepared_.memory.begin(), prepared_.memory.end());
    mem_ = out->memory.data();
    for (size_t t = 0; t < threads_.size(); ++t) {
      // Depth 0 at the start: the fields, then the main context.
      std::memcpy(static_cast<void*>(&threads_[t]), &prepared_.threads[t], offsetof(SimThread, ctx));
      CopyLiveContext(prepared_.threads[t].ctx[0], threads_[t].ctx[0]);
    }
    for (size_t c = 0; c < cpus_.size(); ++c) {
      const SimCpu& from = prepared_.cpus[c];
      cpus_[c].running = from.running;
      cpus_[c].queue.clear();
      if (!from.queue.empty()) cpus_[c].queue.assign(from.queue.begin(), from.queue.end());
    }
    mmcid_ = prepared_.mmcid;
    rfc_.regions.clear();
    rfc_.cpu_ptr_set = false;
    first_thread_ = prepared_.first_thread;
    last_cpu_ = prepared_.last_cpu;
    out->schedule.placement.clear();
  } else {
    PrepareStart(place, out);
    if (plain) {
      prepared_.memory.assign(mem_, mem_ + mem_size_);
      prepared_.threads.resize(threads_.size());
      for (size_t t = 0; t < threads_.size(); ++t) CopyLiveThread(threads_[t], prepared_.threads[t]);
      prepared_.cpus = cpus_;
      prepared_.mmcid = mmcid_;
      prepared_.first_thread = first_thread_;
      prepared_.last_cpu = last_cpu_;
      prepared_.valid = true;
    }
  }
  live_threads_ = static_cast<int>(threads_.size());
  steps_ = 0;
  boundary_ = 0;
  now_ns_ = 0;
  next_due_ns_ = ~0ull;
  wait_seq_ = 0;
  wakes_ = 0;
  step_check_ = opt_.max_steps / 2;
  mid_taken_ = false;
  cycle_mark_.reset();
  cycle_power_ = 1;
  fair_wait_ = FairWaitSteps();
  for (SimCpu& c : cpus_) c.ran_until = 0;
  fair_check_ = fair_wait_;
  poll_check_ = stop_poll_ != nullptr ? kStopPollSteps : ~0ull;
  check_at_ = NextCheck();
  window_max_wait_ = 0;
  default_waiting_ = false;
  total_events_ = 0;
  for (uint32_t& e : events_) e = 0;
  finished_ = false;
  out->trace.clear();
  out->schedule.entries.clear();
  if (out->threads.size() != threads_.size()) {
    out->threads.assign(threads_.size(), ThreadOutcome{});
  } else {
    for (ThreadOutcome& o : out->threads) {  // in place: keeps the observation buffers
      o.exited = false;
      o.ret = 0;
      o.aborts = 0;
      o.final_cpu = 0;
      o.observed.clear();
    }
  }
  out->extra_strings.clear();
  std::fill(fiber_active_.begin(), fiber_active_.end(), 0);
  if (live_threads_ == 0) finished_ = true;
}

void Machine::Place(const Placement& place, ExecutionResult* out) {
  if (std::optional<std::string> why = ValidatePlacement(s_, place)) {
    throw InputError("<schedule>", {}, "initial placement: " + *why, "",
                     "the schedule was made for another scenario or other -D values");
  }
  for (size_t t = 0; t < threads_.size(); ++t) {
    SimThread& th = threads_[t];
    th.cpu = place[t];
    // The IDs glibc's registration leaves in the area (see the constructor).
    if (th.rseq_area == 0) continue;
    Store(th.rseq_area + kRseqOffCpuIdStart, static_cast<uint32_t>(th.cpu), 4);
    Store(th.rseq_area + kRseqOffCpuId, static_cast<uint32_t>(th.cpu), 4);
    if (NodeOf(th.cpu) != 0) ids_write_changed_ = true;
    if (abi_->HasNodeAndMmCid()) Store(th.rseq_area + kRseqOffNodeId, NodeOf(th.cpu), 4);
  }
  out->schedule.placement = place;
}

bool Machine::IsValid(const Decision& d) const {
  if (d.cpu < 0 || d.cpu >= num_cpus_) return false;
  const int t = cpus_[d.cpu].running;
  if (t < 0) return false;
  switch (d.kind) {
    case DecisionKind::kStep:
      return true;
    case DecisionKind::kPreempt: {
      if (d.arg == -1) return true;
      for (int32_t q : cpus_[d.cpu].queue) {
        if (q == d.arg) return true;
      }
      return false;
    }
    case DecisionKind::kMigrate:
      return d.arg >= 0 && d.arg < num_cpus_ && d.arg != d.cpu && ((threads_[t].affinity >> d.arg) & 1);
    case DecisionKind::kSignal:
      // Not SIGKILL or SIGSTOP (no disposition can be declared for them), nor a
      // job-control stop signal left at its default action: the simulator does
      // not model stopping the process (see RaiseSignal).
      if (d.arg < 1 || d.arg > kMaxSignal || d.arg == 9 || d.arg == 19) return false;
      return !(signal_handler_[d.arg] == 0 && DefaultActionOf(d.arg) == DefaultAction::kStop);
    case DecisionKind::kIpi:
      return true;
  }
  return false;
}

void Machine::Record(TraceKind k, int cpu, int t, uint32_t pc, int64_t a, int64_t b, std::string detail) {
  TraceEntry e;
  e.step = steps_;
  e.kind = k;
  e.cpu = static_cast<int8_t>(cpu);
  e.thread = static_cast<int16_t>(t);
  e.depth = t >= 0 ? static_cast<uint8_t>(threads_[t].depth) : 0;
  e.pc = pc;
  e.a = a;
  e.b = b;
  e.detail = std::move(detail);
  out_->trace.push_back(std::move(e));
}

void Machine::LogAccess(AccessKind k, int t, uint32_t pc, uint32_t next, uint64_t addr, uint8_t bytes, uint8_t flags,
                        int64_t rv, int64_t wv) {
  AccessEntry e;
  e.step = steps_;
  e.addr = addr;
  e.rv = rv;
  e.wv = wv;
  e.pc = pc;
  e.next = next;
  e.kind = k;
  e.bytes = bytes;
  e.flags = flags;
  e.thread = static_cast<int16_t>(t);
  e.cpu = static_cast<int8_t>(threads_[t].cpu);
  e.depth = static_cast<uint8_t>(threads_[t].depth);
  out_->accesses.push_back(e);
}

// ---------------------------------------------------------------------------
// Scheduling: boundaries, switches, events.

bool Machine::Boundary(int self) {
  if (finished_) return false;
  if (self >= 0 && threads_[self].chosen) {
    // A fiber's first boundary: the boundary that started it already chose it.
    threads_[self].chosen = false;
    return true;
  }
  const int t = Decide();
  if (t < 0) return false;
  if (t != self) {
    if (!fiber_active_[t]) threads_[t].chosen = true;
    fibers_->SwitchTo(t);
    // Resumed: either chosen to run (state already prepared) or the execution
    // ended and we are being unwound.
    if (finished_) return false;
  }
  return true;
}

int Machine::Decide() {
  if (finished_) return -1;
  if (steps_ >= check_at_) {
    if (steps_ >= step_check_ && !CheckStepBudget()) return -1;
    if (mid_taken_ && !CheckCycle()) return -1;
    if (steps_ >= fair_check_) RotateToStarvedCpu();
    if (steps_ >= poll_check_ && StopRequested()) return -1;
    check_at_ = NextCheck();
    // In the budget's second half every step's first boundary is looked at.
    if (mid_taken_) check_at_ = std::min(check_at_, steps_ + 1);
  }
  if (clock_ != nullptr && next_due_ns_ <= clock_->HorizonNs()) WakeDue(clock_->HorizonNs());
  int cpu;
  for (bool asked = false;; asked = true) {
    // A boundary before a local step of the default thread, where the
    // scheduler has not chosen an event yet: nothing to decide
    // (Scheduler::local_boundaries).
    if (!asked && sched_->local_boundaries != Scheduler::LocalBoundaries::kAsked && cpus_[last_cpu_].running >= 0 &&
        LocalBoundaryIsFree(cpus_[last_cpu_].running, sched_->local_boundaries)) {
      ++boundary_;
      if (fp_on_) fp_.Clear();
      cpu = last_cpu_;
      break;
    }
    if (sched_->defaults_ahead > 0) {
      // Promised default (Scheduler::defaults_ahead): continue on the same CPU.
      --sched_->defaults_ahead;
      ++boundary_;
      if (fp_on_) fp_.Clear();
      cpu = last_cpu_;
      break;
    }
    const Decision d = sched_->Choose(ChoiceView(*this));
    const uint64_t b = boundary_++;
    if (d.kind == DecisionKind::kStep && d.cpu == last_cpu_) {
      if (fp_on_) fp_.Clear();
      cpu = last_cpu_;
      break;
    }
    if (d.IsStop()) {  // of any kind: a negative CPU
      out_->stopped = true;
      EndExecution();
      return -1;
    }
    if (d.kind == DecisionKind::kStep) {
      if (fp_on_) fp_.Clear();
      // IsValid for a step, inline: this is every CPU switch.
      if (d.cpu >= num_cpus_ || cpus_[d.cpu].running < 0) InvalidDecision(d, b);
      out_->schedule.entries.push_back({b, d});
      cpu = d.cpu;
      break;
    }
    if (fp_on_) fp_.Clear();
    if (!IsValid(d)) InvalidDecision(d, b);
    out_->schedule.entries.push_back({b, d});
    ++events_[static_cast<int>(d.kind)];
    ++total_events_;
    ApplyEvent(d);
    if (finished_) {
      EndExecution();
      return -1;
    }
  }
  MoveDefaultCpu(cpu, /*runs=*/true);
  const int t = cpus_[cpu].running;
  SimThread& th = threads_[t];
  TouchThread(t);
  if (th.notify_resume || th.preempt_lock_notify || (th.pending & ~th.blocked)) {
    ReturnToUser(t);
    if (finished_) {
      EndExecution();
      return -1;
    }
  }
  return t;
}

bool Machine::StopRequested() {
  poll_check_ = steps_ + kStopPollSteps;
  if (!(*stop_poll_)()) return false;
  out_->stopped = true;
  out_->message = "stopped at step " + std::to_string(steps_) + " by the caller's stop request (Ctrl-C or a time limit)";
  EndExecution();
  return true;
}

void Machine::InvalidDecision(const Decision& d, uint64_t boundary) const {
  throw InputError("<schedule>", {}, "decision '" + ToString(d) + "' at boundary " + std::to_string(boundary) +
                                         " (step " + std::to_string(steps_) + ") is not possible in this state",
                   "", "the schedule was made for another scenario, other -D values or another kernel model");
}

void Machine::RunDirect() {
  // With nothing recorded per instruction, plain instructions run in
  // RunPlain's loop and only the others go through Step.
  const bool plain = !record_ && !acc_ && !fp_on_ && !mem_hash_on_;
  for (;;) {
    const int t = Decide();
    if (t < 0) return;
    for (;;) {
      // Here the boundary before t's next instruction has been taken.
      // (Under exhaustive search, which promises nothing, Step alone.)
      if (plain && (sched_->defaults_ahead > 0 || sched_->local_boundaries != Scheduler::LocalBoundaries::kAsked)) {
        bool taken = false;
        RunPlain(t, taken);
        if (!taken) break;
      }
      const Stop st = Step(t);
      if (st == Stop::kEnded) return;
      if (st != Stop::kNext || !TakeQuietBoundary(t)) break;
    }
  }
}

bool Machine::TakeQuietBoundary(int t) {
  // What Decide does at such a boundary, without the call.
  if (finished_ || steps_ >= check_at_) return false;
  const SimThread& th = threads_[t];
  if (cpus_[last_cpu_].running != t || th.notify_resume || th.preempt_lock_notify || (th.pending & ~th.blocked)) {
    return false;
  }
  if (!LocalBoundaryIsFree(t, sched_->local_boundaries)) {
    if (sched_->defaults_ahead == 0) return false;
    --sched_->defaults_ahead;  // a promised default (Scheduler::defaults_ahead)
  }
  ++boundary_;
  if (fp_on_) fp_.Clear();
  TouchThread(t);
  return true;
}

void Machine::EndExecution() {
  finished_ = true;
}

uint64_t Machine::FairWaitSteps() const { return std::max<uint64_t>(1, std::min(kFairWaitSteps, opt_.max_steps / 4)); }

void Machine::MoveDefaultCpu(int cpu, bool runs) {
  if (cpu != last_cpu_) {
    if (cpus_[last_cpu_].running >= 0) {
      // The CPU left waits from now if it ran, else since it began waiting.
      if (!default_waiting_) cpus_[last_cpu_].ran_until = steps_;
      NoteWaitStart(cpus_[last_cpu_].ran_until);
    }
    last_cpu_ = cpu;
    default_waiting_ = true;
  }
  if (!runs || !default_waiting_) return;
  default_waiting_ = false;
  if (mid_taken_) {
    const uint64_t since = std::max(cpus_[cpu].ran_until, opt_.max_steps / 2);
    if (steps_ > since) window_max_wait_ = std::max(window_max_wait_, steps_ - since);
  }
}

void Machine::RotateToStarvedCpu() {
  int oldest = -1;
  for (int c = 0; c < num_cpus_; ++c) {
    if (c == last_cpu_ || cpus_[c].running < 0) continue;
    if (oldest < 0 || cpus_[c].ran_until < cpus_[oldest].ran_until) oldest = c;
  }
  if (oldest >= 0 && steps_ - cpus_[oldest].ran_until >= fair_wait_) MoveDefaultCpu(oldest, /*runs=*/false);
  fair_check_ = ~0ull;
  for (int c = 0; c < num_cpus_; ++c) {
    if (c != last_cpu_ && cpus_[c].running >= 0) fair_check_ = std::min(fair_check_, cpus_[c].ran_until + fair_wait_);
  }
}

void Machine::Enqueue(int cpu, int t) {
  SimCpu& c = cpus_[cpu];
  threads_[t].cpu = cpu;
  TouchCpu(cpu);
  TouchThread(t);
  if (c.running < 0) {
    // An idle CPU other than the default starts waiting to run t now.
    if (cpu != last_cpu_) {
      c.ran_until = steps_;
      NoteWaitStart(steps_);
    }
    SwitchIn(cpu, t, -1);
  } else {
    c.queue.push_back(t);
  }
}

void Machine::AssignMmCid(int t) {
  // mm_cid: the ABI's switch_mm_cid() -> mm_cid_get() (rule 23,
  // sim/kernel/abi.h); the other allocator hooks run at switch-out,
  // migration, blocking and exit.
  SimThread& th = threads_[t];
  th.mm_cid = abi_->MmCidGet(*this, t, th.cpu);
}

int Machine::mm_users() const {
  int n = 0;
  for (const SimThread& th : threads_) n += th.state != ThreadState::kExited ? 1 : 0;
  return n;
}

void Machine::SwitchIn(int cpu, int t, int prev) {
  SimCpu& c = cpus_[cpu];
  c.running = t;
  SimThread& th = threads_[t];
  th.cpu = cpu;
  TouchThread(t);
  TouchCpu(cpu);
  if (fp_on_) fp_.mm_cid = true;
  AssignMmCid(t);
  if (record_) Record(TraceKind::kSwitchIn, cpu, t, th.cur().pc, prev);
}

void Machine::PickNext(int cpu, int next) {
  SimCpu& c = cpus_[cpu];
  c.running = -1;
  TouchCpu(cpu);
  if (fp_on_) fp_.mm_cid = true;
  if (!c.queue.empty()) {
    int n = c.queue.front();
    size_t pos = 0;
    if (next >= 0) {
      for (pos = 0; pos < c.queue.size() && c.queue[pos] != next; ++pos) {
      }
      n = next;
    }
    c.queue.erase(c.queue.begin() + static_cast<std::ptrdiff_t>(pos));
    SwitchIn(cpu, n, -1);
  }
  if (cpus_[last_cpu_].running < 0) {
    for (int i = 1; i <= num_cpus_; ++i) {
      int cand = (last_cpu_ + i) % num_cpus_;
      if (cpus_[cand].running >= 0) {
        MoveDefaultCpu(cand, /*runs=*/false);
        break;
      }
    }
  }
}

// Context switch away from the thread running on `cpu` (rule 8: rseq_preempt()
// in prepare_task_switch(): PREEMPT event + TIF_NOTIFY_RESUME). The thread goes
// to the tail of the run queue; `next` (or the queue head) runs. With an empty
// queue the CPU runs another process (idle) and then the same thread again:
// prev != next, so it is still a switch (rule 10 excludes only a schedule()
// that re-picks the same task without switching).
void Machine::SwitchOut(int cpu, int next, TraceKind why) {
  SimCpu& c = cpus_[cpu];
  const int t = c.running;
  SimThread& th = threads_[t];
  abi_->RseqPreempt(*this, t);
  PreemptLockSchedOut(*this, t);
  abi_->MmCidSwitchOut(*this, t, cpu);
  if (record_) Record(why, cpu, t, th.cur().pc, next);
  c.queue.push_back(t);
  PickNext(cpu, next);
}

void Machine::ApplyEvent(const Decision& d) {
  const int cpu = d.cpu;
  const int t = cpus_[cpu].running;
  SimThread& th = threads_[t];
  TouchThread(t);
  if (d.kind == DecisionKind::kPreempt || d.kind == DecisionKind::kMigrate) TouchCpu(cpu);
  if (d.kind == DecisionKind::kMigrate) TouchCpu(d.arg);
  // Every injected event reaches the thread through an interrupt (timer,
  // reschedule or function-call IPI) taken in user mode.
  if (d.kind != DecisionKind::kStep) abi_->IrqEntryFromUser(*this, t);
  switch (d.kind) {
    case DecisionKind::kPreempt:
      SwitchOut(cpu, d.arg, TraceKind::kPreempt);
      break;
    case DecisionKind::kMigrate: {
      // Rule 11: migration = switch out, set_task_cpu (MIGRATE event), switch in
      // on the destination (now, if it is idle; else at the tail of its queue).
      if (opt_.fault != RunOptions::ModelFault::kNoAbortOnMigrate) {
        abi_->RseqPreempt(*this, t);
        abi_->RseqMigrate(*this, t);
      } else {
        th.notify_resume = true;  // the IDs are still updated (only the abort is lost)
      }
      PreemptLockSchedOut(*this, t);
      abi_->MmCidSwitchOut(*this, t, cpu);
      if (record_) Record(TraceKind::kMigrate, cpu, t, th.cur().pc, d.arg);
      PickNext(cpu, -1);
      abi_->SchedMmCidMigrateTo(*this, t, cpu, d.arg);
      Enqueue(d.arg, t);
      if (cpus_[last_cpu_].running < 0) MoveDefaultCpu(d.arg, /*runs=*/false);
      break;
    }
    case DecisionKind::kSignal:
      if (record_) Record(TraceKind::kSignal, cpu, t, th.cur().pc, d.arg);
      RaiseSignal(t, d.arg);
      break;
    case DecisionKind::kIpi:
      // Rule 24: membarrier's ipi_rseq() runs rseq_preempt(current) on the CPU.
      if (record_) Record(TraceKind::kIpi, cpu, t, th.cur().pc);
      abi_->IpiRseq(*this, t);
      break;
    case DecisionKind::kStep:
      break;
  }
}

void Machine::RaiseSignal(int t, int signo) {
  // Ignored signals are discarded when generated and are no rseq event (rule
  // 10): SIG_IGN, and SIG_DFL of a signal whose default action is to ignore it
  // (kernel/signal.c: sig_ignored() -> sig_task_ignored() ->
  // sig_handler_ignored(), true for SIG_DFL when sig_kernel_ignore(sig)).
  const uint32_t h = signal_handler_[signo];
  if (h == ~0u) return;
  if (h == 0) {
    switch (DefaultActionOf(signo)) {
      case DefaultAction::kIgnore:
        return;
      case DefaultAction::kStop:
        // Job-control stop not modelled: the process is an orphaned process
        // group's member, where the kernel discards SIGTSTP/SIGTTIN/SIGTTOU
        // (kernel/signal.c get_signal(): is_current_pgrp_orphaned() before
        // do_signal_stop()); SIGSTOP would stop it until SIGCONT, which nothing
        // sends. Either way no handler frame is set up, so it is no rseq event;
        // here it is discarded at generation. Injecting one is refused (IsValid);
        // only a program's tgkill gets here.
        return;
      case DefaultAction::kTerminate:
      case DefaultAction::kCoreDump:
        break;
    }
  }
  SimThread& th = threads_[t];
  th.pending |= 1u << signo;
  // signal_wake_up(): an unblocked signal interrupts a futex wait or a sleep.
  if ((th.state == ThreadState::kBlocked || th.state == ThreadState::kSleeping) && (th.pending & ~th.blocked)) {
    Wake(t, kEintr, -1);
  }
}

// Exit-to-user work (rule 12), as exit_to_user_mode_loop(): signal delivery
// first (each frame set-up runs the rseq fixup before the frame is written),
// then the notify-resume work (the rseq step, then the preempt-lock check,
// sim/kernel/preempt_lock.h PL2), again while that made a signal pending.
void Machine::ReturnToUser(int t) {
  SimThread& th = threads_[t];
  for (;;) {
    while (uint32_t deliverable = th.pending & ~th.blocked) {
      if (th.depth >= kMaxSignalDepth) break;  // stays pending until a handler returns
      // next_signal() (kernel/signal.c): the synchronous signals of
      // SYNCHRONOUS_MASK first, then the lowest number.
      constexpr uint32_t kSynchronous = 1u << 11 | 1u << 7 | 1u << 4 | 1u << 5 | 1u << 8 | 1u << 31;
      const uint32_t sync = deliverable & kSynchronous;
      const int signo = PreemptLockSignalDeliver(*this, t, std::countr_zero(sync != 0 ? sync : deliverable));
      th.pending &= ~(1u << signo);
      if (!DeliverSignal(t, signo)) return;
    }
    if (th.notify_resume) {
      th.notify_resume = false;
      abi_->RseqHandleNotifyResume(*this, t);
      if (finished_) return;
    }
    if (!th.preempt_lock_notify) return;
    th.preempt_lock_notify = false;
    if (!PreemptLockHandleNotifyResume(*this, t)) return;
  }
}

void Machine::SendSignal(int t, int signo, const std::string& why) {
  SimThread& th = threads_[t];
  TouchThread(t);
  if (record_) Record(TraceKind::kSignal, th.cpu, t, th.cur().pc, signo, 0, why);
  RaiseSignal(t, signo);
}

bool Machine::DeliverSignal(int t, int signo) {
  SimThread& th = threads_[t];
  const uint32_t h = signal_handler_[signo];
  if (h == 0) {
    // Only terminating defaults are ever pending (RaiseSignal discards the
    // others). A core dump changes nothing the simulator reports: the verdict
    // is "killed by signal N" (kSigsegv for SIGSEGV, kKilled otherwise).
    const bool core = DefaultActionOf(signo) == DefaultAction::kCoreDump;
    Kill(signo,
         SignalName(signo) + " delivered to " + s_.threads[t].name +
             (core ? " (default action: terminate with core dump)" : " (default action: terminate)"),
         t);
    return false;
  }
  // rseq_signal_deliver(): the fixup runs synchronously before the frame is
  // built, so the frame saves abort_ip (rules 8, 12, 25).
  if (!abi_->RseqSignalDeliver(*this, t)) return false;
  const Context& interrupted = th.cur();
  Context& hc = th.ctx[th.depth + 1];
  hc.r.fill(0);
  hc.r[1] = signo;
  hc.r[2] = static_cast<int64_t>(PreemptLockSigAddr(*this, t, signo));  // siginfo's si_addr
  hc.pc = s_.program.functions[h - 1].first;
  hc.call_depth = 0;
  hc.signo = signo;
  hc.saved_blocked = th.blocked;
  if (!signal_nodefer_[signo]) th.blocked |= 1u << signo;
  ++th.depth;
  if (record_) Record(TraceKind::kSignalFrame, th.cpu, t, hc.pc, signo, interrupted.pc);
  return true;
}

void Machine::WriteIds(int t, bool node_and_mm_cid) {
  SimThread& th = threads_[t];
  const uint64_t a = th.rseq_area;
  TouchMem(a + kRseqOffCpuIdStart, 8, true);
  TouchMem(a + kRseqOffNodeId, 8, true);
  NoteIdsWrite(a + kRseqOffNodeId, NodeOf(th.cpu));
  NoteIdsWrite(a + kRseqOffMmCid, static_cast<uint32_t>(th.mm_cid));
  Store(a + kRseqOffCpuIdStart, static_cast<uint32_t>(th.cpu), 4);
  Store(a + kRseqOffCpuId, static_cast<uint32_t>(th.cpu), 4);
  if (node_and_mm_cid) {
    Store(a + kRseqOffNodeId, NodeOf(th.cpu), 4);
    Store(a + kRseqOffMmCid, static_cast<uint32_t>(th.mm_cid), 4);
  }
  if (record_) Record(TraceKind::kIdUpdate, th.cpu, t, th.cur().pc, th.cpu, th.mm_cid);
}

Machine::CodeWordRead Machine::ReadSignatureWord(uint64_t ip) const {
  CodeWordRead r;
  if (ip >= kCodeBase && ip <= CodeAddress(code_size_) - 4) {
    r.readable = true;
    if ((ip - kCodeBase) % kInstrBytes == 0) {
      const Instr& in = code_[(ip - kCodeBase) / kInstrBytes];
      if (in.op == Op::kSig) {
        r.is_signature_word = true;
        r.value = static_cast<uint32_t>(in.imm);
      }
    }
    return r;
  }
  if (MemOk(ip, 4)) {
    r.readable = true;
    r.is_signature_word = true;
    r.value = static_cast<uint32_t>(Load(ip, 4));
  }
  return r;
}

uint64_t Machine::UserIp(int t) const {
  const Context& c = threads_[t].cur();
  return c.pc == kNativePc ? kNativeIp : CodeAddress(c.pc);
}

bool Machine::AbortTo(int t, uint64_t abort_ip, uint64_t cs) {
  Store(threads_[t].rseq_area + kRseqOffRseqCs, 0, 8);
  const int d = (cs - desc_base_) % kRseqCsBytes == 0 && cs >= desc_base_ && cs < area_base_
                    ? static_cast<int>((cs - desc_base_) / kRseqCsBytes)
                    : -1;
  return JumpAfterAbort(t, abort_ip, d);
}

bool Machine::RestartTo(int t, uint64_t restart_ip, uint64_t region_start) {
  int d = -1;
  for (size_t i = 0; i < s_.program.descriptors.size(); ++i) {
    const CsDescriptor& r = s_.program.descriptors[i];
    if (r.region && CodeAddress(r.start) == region_start) {
      d = static_cast<int>(i);
      break;
    }
  }
  return JumpAfterAbort(t, restart_ip, d);
}

bool Machine::JumpAfterAbort(int t, uint64_t ip, int from_desc) {
  SimThread& th = threads_[t];
  Context& c = th.cur();
  ++out_->threads[t].aborts;
  const bool instruction = ip >= kCodeBase && ip < CodeAddress(code_size_) && (ip - kCodeBase) % kInstrBytes == 0;
  const uint32_t to = instruction ? static_cast<uint32_t>((ip - kCodeBase) / kInstrBytes) : c.pc;
  if (record_) Record(TraceKind::kAbort, th.cpu, t, c.pc, to, from_desc);
  if (acc_) LogAccess(AccessKind::kAbort, t, c.pc, to, static_cast<uint64_t>(static_cast<int64_t>(from_desc)));
  if (!instruction) {
    // The kernel sets the IP without looking at what is there; the return to
    // user space then fetches from it: a page fault on an unmapped or
    // non-executable address, or an instruction decoded from its middle.
    char buf[40];
    std::snprintf(buf, sizeof buf, "0x%llx", static_cast<unsigned long long>(ip));
    ForceSigsegv(t, std::string("rseq abort to abort_ip ") + buf +
                        ", which is not the start of an instruction of the program: the instruction fetch there faults");
    return false;
  }
  c.pc = to;
  return true;
}

void Machine::RecordLazyClear(int t) {
  const SimThread& th = threads_[t];
  if (record_) Record(TraceKind::kLazyClear, th.cpu, t, th.cur().pc, 0, -1);
  if (acc_) LogAccess(AccessKind::kClear, t, th.cur().pc, th.cur().pc);
}

void Machine::LogKernelClear(int t) {
  if (acc_) LogAccess(AccessKind::kClear, t, threads_[t].cur().pc, threads_[t].cur().pc);
}

void Machine::ForceSigsegv(int t, const std::string& reason) { Kill(kSigSegv, reason, t); }

void Machine::Kill(int signo, const std::string& reason, int t) {
  if (finished_) return;
  TouchEveryThread();
  out_->verdict = signo == kSigSegv ? Verdict::kSigsegv : Verdict::kKilled;
  out_->message = reason;
  if (record_) Record(TraceKind::kKill, t >= 0 ? threads_[t].cpu : -1, t, t >= 0 ? threads_[t].cur().pc : 0, signo, 0,
                      reason);
  finished_ = true;
}

void Machine::FailAssert(int t, uint32_t pc, const std::string& msg) {
  if (finished_) return;
  TouchEveryThread();
  out_->verdict = Verdict::kAssertFailed;
  out_->message = "assert failed in " + s_.threads[t].name + " at " +
                  (pc == kNativePc ? std::string("native code") : s_.program.DescribeIndex(pc));
  if (pc != kNativePc && code_[pc].loc.line != 0) out_->message += " (line " + std::to_string(code_[pc].loc.line) + ")";
  if (!msg.empty()) out_->message += ": " + msg;
  if (record_) Record(TraceKind::kAssertFail, threads_[t].cpu, t, pc, 0, 0, msg);
  finished_ = true;
}

void Machine::ExitThread(int t, int64_t v) {
  SimThread& th = threads_[t];
  th.state = ThreadState::kExited;
  TouchThread(t);
  ThreadOutcome& o = out_->threads[t];
  o.exited = true;
  o.ret = v;
  o.final_cpu = static_cast<uint32_t>(th.cpu);
  if (record_) Record(TraceKind::kExit, th.cpu, t, th.cur().pc, v);
  abi_->SchedMmCidExitSignals(*this, t, th.cpu);
  PickNext(th.cpu, -1);
  if (--live_threads_ == 0) {
    finished_ = true;
  } else if (cpus_[last_cpu_].running < 0) {
    OnAllIdle();  // the others all wait or sleep
  }
}

// After every execution: the counts and the property verdicts.
void Machine::Finish() {
  finished_ = true;
  ExecutionResult& r = *out_;
  r.steps = steps_;
  for (int k = 0; k < kNumDecisionKinds; ++k) r.events[k] = events_[k];
  for (size_t t = 0; t < threads_.size(); ++t) {
    if (!r.threads[t].exited) r.threads[t].final_cpu = static_cast<uint32_t>(threads_[t].cpu);
  }
  if (r.verdict == Verdict::kPass && !r.stopped) {
    r.properties.reserve(s_.properties.size());
    for (size_t i = 0; i < s_.properties.size(); ++i) {
      const Property& p = s_.properties[i];
      PropertyOutcome po = properties_[i].Evaluate(r);
      if (!po.holds && r.verdict == Verdict::kPass) {
        r.verdict = Verdict::kPropertyFailed;
        r.message = "property failed: " + p.text + (po.error.empty() ? "" : " (" + po.error + ")");
      }
      r.properties.push_back(std::move(po));
    }
  }
}

// ---------------------------------------------------------------------------
// Interpreter.

void Machine::ThreadMain(int t) {
  fiber_active_[t] = 1;
  SimThread& th = threads_[t];
  Stop stop = Stop::kEnded;
  try {
    if (th.native) {
      ThreadApi api(*this, t);
      try {
        const int64_t v = s_.threads[t].native(api);
        if (!finished_) {
          ExitThread(t, v);
          stop = finished_ ? Stop::kEnded : Stop::kExited;
        }
      } catch (const ThreadApi::Unwind&) {
        stop = Stop::kEnded;
      }
    } else {
      stop = Interpret(t, false);
    }
  } catch (const std::exception&) {
    // Cannot propagate across fibers: park it for Simulator::RunInto.
    error_ = std::current_exception();
    finished_ = true;
    stop = Stop::kEnded;
  }
  fiber_active_[t] = 0;
  // Hand the CPU to whoever runs next: another thread, or main when the
  // execution is over.
  if (stop == Stop::kExited && !finished_) {
    try {
      if (Boundary(-1)) return;  // resumed in a later execution: back to the worker loop
    } catch (const std::exception&) {
      // An invalid decision right after the exit: park it like the body's.
      error_ = std::current_exception();
      finished_ = true;
    }
  }
  fibers_->SwitchTo(FiberPool::kMain);
}

void Machine::NoteAreaRead(uint64_t addr, int bytes) {
  for (uint64_t a = std::max(addr, area_base_); a < addr + static_cast<uint64_t>(bytes); ++a) {
    const uint64_t off = (a - area_base_) % kRseqAreaBytes;
    if (off >= kRseqOffMmCid && off < kRseqOffMmCid + 4) mm_cid_loaded_ = out_->mm_cid_read = true;
    if (off >= kRseqOffNodeId && off < kRseqOffMmCid + 4) node_cid_loaded_ = true;
  }
}

void Machine::NoteRseqCsStore(uint64_t addr, int bytes) {
  for (uint64_t a = std::max(addr, area_base_); a < addr + static_cast<uint64_t>(bytes); ++a) {
    const uint64_t off = (a - area_base_) % kRseqAreaBytes;
    if (off >= kRseqOffRseqCs && off < kRseqOffRseqCs + 8) rseq_cs_stored_ = true;
  }
}

bool Machine::SegvAccess(int t, uint32_t pc, uint64_t addr) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "0x%llx", static_cast<unsigned long long>(addr));
  return ForceSigFault(t, "invalid memory access at " + std::string(buf) + " by " + s_.threads[t].name + " at " +
                             (pc == kNativePc ? std::string("native code") : s_.program.DescribeIndex(pc)));
}

bool Machine::ForceSigFault(int t, const std::string& reason) {
  SimThread& th = threads_[t];
  const uint32_t h = signal_handler_[kSigSegv];
  if (h == 0 || h == ~0u || ((th.blocked >> kSigSegv) & 1) || th.depth >= kMaxSignalDepth || th.native) {
    Kill(kSigSegv, reason, t);
    return false;
  }
  if (record_) Record(TraceKind::kSignal, th.cpu, t, th.cur().pc, kSigSegv, 0, reason);
  th.pending |= 1u << kSigSegv;
  ReturnToUser(t);  // synchronous signals are dequeued first
  return !finished_;
}

// The instructions whose whole effect is on the running context's registers
// and pc, as switch cases: the one definition Step and RunPlain share. Uses
// `r` (the registers), `in` (the instruction), `b` (its second operand,
// register or immediate), `th` (the thread) and `next` (the next pc, pc + 1
// unless a branch is taken).
#define RSEQMC_REGISTER_CASES                                                                                     \
  case Op::kLi: r[in.rd] = in.imm; break;                                                                        \
  case Op::kMov: r[in.rd] = r[in.rs]; break;                                                                     \
  case Op::kAdd: r[in.rd] = static_cast<int64_t>(static_cast<uint64_t>(r[in.rs]) + static_cast<uint64_t>(b)); break; \
  case Op::kSub: r[in.rd] = static_cast<int64_t>(static_cast<uint64_t>(r[in.rs]) - static_cast<uint64_t>(b)); break; \
  case Op::kAnd: r[in.rd] = r[in.rs] & b; break;                                                                 \
  case Op::kOr: r[in.rd] = r[in.rs] | b; break;                                                                  \
  case Op::kXor: r[in.rd] = r[in.rs] ^ b; break;                                                                 \
  case Op::kShl: r[in.rd] = static_cast<int64_t>(static_cast<uint64_t>(r[in.rs]) << (b & 63)); break;            \
  case Op::kShr: r[in.rd] = static_cast<int64_t>(static_cast<uint64_t>(r[in.rs]) >> (b & 63)); break;            \
  case Op::kMul: r[in.rd] = static_cast<int64_t>(static_cast<uint64_t>(r[in.rs]) * static_cast<uint64_t>(b)); break; \
  case Op::kLa: r[in.rd] = static_cast<int64_t>(s_.program.symbols[in.target].address + in.imm); break;         \
  case Op::kBeq: if (r[in.rs] == b) next = in.target; break;                                                     \
  case Op::kBne: if (r[in.rs] != b) next = in.target; break;                                                     \
  case Op::kBlt: if (r[in.rs] < b) next = in.target; break;                                                      \
  case Op::kBge: if (r[in.rs] >= b) next = in.target; break;                                                     \
  case Op::kBltu: if (static_cast<uint64_t>(r[in.rs]) < static_cast<uint64_t>(b)) next = in.target; break;       \
  case Op::kBgeu: if (static_cast<uint64_t>(r[in.rs]) >= static_cast<uint64_t>(b)) next = in.target; break;      \
  case Op::kJmp: next = in.target; break;                                                                        \
  case Op::kRseqAddr: r[in.rd] = static_cast<int64_t>(AreaAddress(t)); break;                                    \
  case Op::kSig:                                                                                                 \
  case Op::kFence:                                                                                               \
  case Op::kWork: /* its time is the scheduler's (sim/timed_scheduler.h) */                           \
  case Op::kNop: break;

// The memory instructions, as switch case labels (Step and RunPlain).
#define RSEQMC_MEMORY_CASES \
  case Op::kLd:             \
  case Op::kLd32:           \
  case Op::kSt:             \
  case Op::kSt32:           \
  case Op::kCas:            \
  case Op::kXadd:           \
  case Op::kXchg

namespace {
// A memory instruction's address: base + displacement (+ index * scale).
inline uint64_t EffectiveAddress(const Instr& in, const int64_t* r) {
  uint64_t addr = static_cast<uint64_t>(r[in.rs]) + static_cast<uint64_t>(in.imm);
  if (in.has_index) addr += static_cast<uint64_t>(r[in.ru]) * in.scale;
  return addr;
}

// A memory instruction's effect on the registers and on the bytes at `p` (its
// address, already checked): the one definition Step and RunPlain share.
// Returns true if it stored, with the value stored in `stored` (zero-extended
// for st32); a failed cas stores nothing.
inline bool MemoryOp(const Instr& in, int64_t* r, uint8_t* p, int64_t& stored) {
  uint64_t old = 0;
  switch (in.op) {
    case Op::kLd:
      std::memcpy(&old, p, 8);
      r[in.rd] = static_cast<int64_t>(old);
      return false;
    case Op::kLd32:
      std::memcpy(&old, p, 4);
      r[in.rd] = static_cast<int64_t>(old);
      return false;
    case Op::kSt:
      stored = r[in.rt];
      std::memcpy(p, &stored, 8);
      return true;
    case Op::kSt32:
      stored = static_cast<int64_t>(static_cast<uint32_t>(r[in.rt]));
      std::memcpy(p, &stored, 4);
      return true;
    case Op::kCas: {
      std::memcpy(&old, p, 8);
      const bool hit = old == static_cast<uint64_t>(r[in.rt]);
      if (hit) {
        stored = r[in.ru];
        std::memcpy(p, &stored, 8);
      }
      r[in.rd] = static_cast<int64_t>(old);
      return hit;
    }
    case Op::kXadd:
      std::memcpy(&old, p, 8);
      stored = static_cast<int64_t>(old + static_cast<uint64_t>(r[in.rt]));
      std::memcpy(p, &stored, 8);
      r[in.rd] = static_cast<int64_t>(old);
      return true;
    default:  // kXchg
      std::memcpy(&old, p, 8);
      stored = r[in.rt];
      std::memcpy(p, &stored, 8);
      r[in.rd] = static_cast<int64_t>(old);
      return true;
  }
}

inline bool Compare(CmpKind k, int64_t a, int64_t b) {
  const uint64_t ua = static_cast<uint64_t>(a), ub = static_cast<uint64_t>(b);
  switch (k) {
    case CmpKind::kEq: return a == b;
    case CmpKind::kNe: return a != b;
    case CmpKind::kLt: return a < b;
    case CmpKind::kLe: return a <= b;
    case CmpKind::kGt: return a > b;
    case CmpKind::kGe: return a >= b;
    case CmpKind::kLtu: return ua < ub;
    case CmpKind::kLeu: return ua <= ub;
    case CmpKind::kGtu: return ua > ub;
    case CmpKind::kGeu: return ua >= ub;
  }
  return false;
}
}  // namespace

bool Machine::NextStepIsLoneMemoryAccess(int t) const {
  if (live_threads_ != 1) return false;
  const SimThread& th = threads_[t];
  if (th.notify_resume || th.preempt_lock_notify || (th.pending & ~th.blocked) != 0) return false;
  if (th.rfc_cpu_ptr != 0 || th.preempt_lock_flag != 0) return false;
  const Context& c = th.cur();
  if (c.pc == kNativePc || c.pc >= code_size_) return false;
  const Instr& in = code_[c.pc];
  switch (in.op) {
    RSEQMC_MEMORY_CASES:
      break;
    default:
      return false;
  }
  const uint64_t addr = EffectiveAddress(in, &c.r[0]);
  const uint64_t bytes = static_cast<uint64_t>(AccessBytes(in.op));
  if (!UserMemOk(addr, static_cast<int>(bytes)) || addr + bytes > area_base_) return false;
  // The event reads the struct rseq_cs that rseq_cs points to (validated on
  // every evaluation by the legacy ABIs: a lazy clear or SIGSEGV, and its
  // range decides a restart): an access to a descriptor built in data memory
  // can change what the event does.
  if (th.rseq_area == 0) return true;
  const uint64_t cs = Peek(th.rseq_area + kRseqOffRseqCs, 8);
  return cs == 0 || addr >= cs + kRseqCsBytes || cs >= addr + bytes;
}

bool Machine::NextStepEndsProcess(int t) const {
  const Context& c = threads_[t].cur();
  if (c.pc == kNativePc) return false;
  if (c.pc >= code_size_) return true;  // Step: "ran past the end of the code"
  const Instr& in = code_[c.pc];
  switch (in.op) {
    case Op::kAssert: return !Compare(static_cast<CmpKind>(in.aux), c.r[in.rs], in.use_imm ? in.imm : c.r[in.rt]);
    case Op::kCall: return c.call_depth >= kMaxCallDepth;
    default: return false;
  }
}

Machine::Stop Machine::Interpret(int t, bool skip_boundary) {
  for (;;) {
    if (!skip_boundary && !Boundary(t)) return Stop::kEnded;
    skip_boundary = false;
    const Stop st = Step(t);
    if (st != Stop::kNext) return st;
  }
}

inline Machine::Stop Machine::Step(int t) {
  SimThread& th = threads_[t];
  {
    Context& c = th.cur();
    const uint32_t pc = c.pc;
    if (pc == kNativePc) return Stop::kNative;
    if (pc >= code_size_) {
      Kill(kSigSegv, s_.threads[t].name + " ran past the end of the code", t);
      return Stop::kEnded;
    }
    const Instr& in = code_[pc];
    ++steps_;
    auto& r = c.r;
    const int64_t b = in.use_imm ? in.imm : r[in.rt];
    uint32_t next = pc + 1;
    uint64_t wrote_addr = 0;
    int64_t wrote_val = 0;
    uint64_t read_addr = 0;  // access log only: what a logged instruction read
    uint8_t read_bytes = 0;
    switch (in.op) {
      RSEQMC_REGISTER_CASES
      RSEQMC_MEMORY_CASES: {
        const uint64_t addr = EffectiveAddress(in, &r[0]);
        const int bytes = AccessBytes(in.op);
        if (!UserMemOk(addr, bytes)) {
          // The instruction does not complete: pc stays on it.
          return SegvAccess(t, pc, addr) ? Stop::kNext : Stop::kEnded;
        }
        // Atomics count as writes even when a cas fails: dependence must hold
        // for the transition in any order.
        TouchMem(addr, bytes, in.op != Op::kLd && in.op != Op::kLd32);
        if (addr + static_cast<uint64_t>(bytes) > area_base_) {
          area_accessed_ = true;
          if (in.op != Op::kLd && in.op != Op::kLd32) NoteRseqCsStore(addr, bytes);
        }
        if (in.op != Op::kSt && in.op != Op::kSt32) {
          read_addr = addr;
          read_bytes = static_cast<uint8_t>(bytes);
          // The rseq areas are the last region of data memory.
          if (addr + static_cast<uint64_t>(bytes) > area_base_) NoteAreaRead(addr, bytes);
        }
        const bool writes = in.op != Op::kLd && in.op != Op::kLd32;
        if (mem_hash_on_ && writes) HashWords(addr - kDataBase, bytes, -1);
        if (MemoryOp(in, &r[0], mem_ + (addr - kDataBase), wrote_val)) wrote_addr = addr;
        if (mem_hash_on_ && writes) HashWords(addr - kDataBase, bytes, +1);
        break;
      }
      case Op::kCall:
        if (c.call_depth >= kMaxCallDepth) {
          Kill(kSigSegv, "call stack overflow (depth " + std::to_string(kMaxCallDepth) + ") in " + s_.threads[t].name, t);
          return Stop::kEnded;
        }
        c.ret_stack[c.call_depth++] = pc + 1;
        next = s_.program.functions[in.target].first;
        break;
      case Op::kRet:
        if (c.call_depth > 0) {
          next = c.ret_stack[--c.call_depth];
          break;
        }
        if (record_) Record(TraceKind::kStep, th.cpu, t, pc);
        if (acc_ && in_cs_[pc]) LogAccess(AccessKind::kInstr, t, pc, kAccessNoPc);
        if (th.depth > 0) {
          // sigreturn: restore the interrupted context (whose ip the frame
          // set-up may have moved to abort_ip) and the blocked mask; then the
          // syscall's own exit-to-user work (pending signals).
          th.blocked = c.saved_blocked;
          --th.depth;
          if (record_) Record(TraceKind::kSigreturn, th.cpu, t, th.cur().pc, 0, th.cur().pc);
          if (th.pending & ~th.blocked) {
            ReturnToUser(t);
            if (finished_) return Stop::kEnded;
          }
          return Stop::kNext;
        }
        ExitThread(t, r[0]);
        return finished_ ? Stop::kEnded : Stop::kExited;
      case Op::kRseqLoad: {
        uint64_t v = 0;
        if (th.rseq_area != 0) {
          static constexpr uint64_t kOff[] = {kRseqOffCpuIdStart, kRseqOffCpuId, kRseqOffNodeId, kRseqOffMmCid,
                                              kRseqOffFlags};
          TouchMem(th.rseq_area + kOff[in.aux], 4, false);
          v = Load(th.rseq_area + kOff[in.aux], 4);
          read_addr = th.rseq_area + kOff[in.aux];
          read_bytes = 4;
        } else if (static_cast<RseqField>(in.aux) == RseqField::kCpuId) {
          v = 0xffffffffu;  // RSEQ_CPU_ID_UNINITIALIZED as read from an unregistered area
        }
        r[in.rd] = static_cast<int64_t>(v);
        break;
      }
      case Op::kRseqArm: {
        // The single store of the descriptor address (§2.4 step [1]); to the
        // registered area, or to our own area if unregistered (no effect then).
        const uint64_t area = th.rseq_area ? th.rseq_area : AreaAddress(t);
        wrote_addr = area + kRseqOffRseqCs;
        wrote_val = static_cast<int64_t>(DescriptorAddress(in.target));
        TouchMem(wrote_addr, 8, true);
        Store(wrote_addr, static_cast<uint64_t>(wrote_val), 8);
        break;
      }
      case Op::kAssert:
        if (!Compare(static_cast<CmpKind>(in.aux), r[in.rs], b)) {
          c.pc = pc;
          FailAssert(t, pc, in.target < s_.program.strings.size() ? s_.program.strings[in.target] : "");
          return Stop::kEnded;
        }
        break;
      case Op::kObserve:
        out_->threads[t].observed.emplace_back(in.target, r[in.rs]);
        if (record_) Record(TraceKind::kObserve, th.cpu, t, pc, in.target, r[in.rs]);
        break;
      case Op::kSigctxRestart: {
        // A handler's write of its own frame's saved RIP (sim/kernel/preempt_lock.h
        // PL3): no memory another thread can see.
        r[0] = 0;
        if (th.depth == 0) break;
        const CsDescriptor& d = s_.program.descriptors[in.target];
        Context& interrupted = th.ctx[th.depth - 1];
        if (interrupted.pc < d.start || interrupted.pc >= d.post_commit) break;
        r[0] = 1;
        ++out_->threads[t].aborts;
        if (record_) Record(TraceKind::kAbort, th.cpu, t, interrupted.pc, d.abort, in.target);
        if (acc_) LogAccess(AccessKind::kAbort, t, interrupted.pc, d.abort, in.target);
        interrupted.pc = d.abort;
        break;
      }
      default:  // kernel calls
        c.pc = next;
        if (record_) Record(TraceKind::kStep, th.cpu, t, pc);
        if (acc_) LogAccess(AccessKind::kInstr, t, pc, next);
        if (!ExecSyscall(t, in)) return Stop::kEnded;
        return Stop::kNext;
    }
    c.pc = next;
    if (record_) Record(TraceKind::kStep, th.cpu, t, pc, static_cast<int64_t>(wrote_addr), wrote_val);
    if (acc_ && (wrote_addr != 0 || in_cs_[pc])) {
      // One entry per instruction: a read-modify-write logs its read and its
      // write together (the read's address is the write's).
      const uint8_t flags = (read_bytes != 0 ? kAccessRead : 0) | (wrote_addr != 0 ? kAccessWrite : 0);
      const uint8_t bytes = read_bytes != 0 ? read_bytes
                            : in.op == Op::kSt32 ? 4 : 8;
      LogAccess(AccessKind::kInstr, t, pc, next, wrote_addr != 0 ? wrote_addr : read_addr, flags != 0 ? bytes : 0,
                flags, read_bytes != 0 ? r[in.rd] : 0, wrote_val);
    }
  }
  return Stop::kNext;
}

uint64_t Machine::RunPlain(int t, bool& taken) {
  // Step's semantics for the instructions that cannot end the execution or
  // change what the scheduler sees, with the pc, code and memory bounds held
  // in registers (the memory stores through mem_ would otherwise force every
  // member to be reloaded at each instruction).
  SimThread& th = threads_[t];
  Context& c = th.cur();
  int64_t* const r = c.r.data();
  const Instr* const code = code_;
  const LocalOp* const local = local_op_.data();
  const uint32_t code_size = code_size_;
  uint8_t* const mem = mem_;
  const uint64_t area_base = area_base_;
  Scheduler& sched = *sched_;
  const Scheduler::LocalBoundaries mode = sched.local_boundaries;
  // Return-to-user work makes no step local; no plain instruction changes it.
  const bool may_be_free = mode != Scheduler::LocalBoundaries::kAsked && !th.notify_resume &&
                           !th.preempt_lock_notify && (th.pending & ~th.blocked) == 0;
  // Instructions before the next budget or fairness check (Decide checks at
  // check_at_; it has just checked, or the caller saw steps_ < check_at_).
  const uint64_t limit = check_at_ > steps_ ? check_at_ - steps_ : 1;
  uint64_t defaults = sched.defaults_ahead;
  uint64_t boundaries = 0;
  uint32_t pc = c.pc;
  uint64_t n = 0;
  taken = true;
  for (;; ++n) {
    if (n > 0) {
      // The boundary before the next instruction: free, a promised default,
      // or Decide's.
      bool free = false;
      if (may_be_free && pc < code_size && local[pc] != LocalOp::kNever) {
        if (mode == Scheduler::LocalBoundaries::kNoEvents && local[pc] == LocalOp::kAlways) {
          free = true;  // LocalBoundaryIsFree without the calls
        } else {
          c.pc = pc;
          free = LocalBoundaryIsFree(t, mode);
        }
      }
      if (n >= limit || (!free && defaults == 0)) {
        taken = false;
        break;
      }
      defaults -= !free;
      ++boundaries;
    }
    if (pc >= code_size) break;  // also kNativePc
    const Instr& in = code[pc];
    const int64_t b = in.use_imm ? in.imm : r[in.rt];
    uint32_t next = pc + 1;
    switch (in.op) {
      RSEQMC_REGISTER_CASES
      RSEQMC_MEMORY_CASES: {
        const uint64_t addr = EffectiveAddress(in, &r[0]);
        const int bytes = AccessBytes(in.op);
        if (!UserMemOk(addr, bytes)) goto out;  // Step faults
        uint8_t* const p = mem + (addr - kDataBase);
        if (addr + static_cast<uint64_t>(bytes) > area_base) {
          area_accessed_ = true;
          if (in.op != Op::kSt && in.op != Op::kSt32) NoteAreaRead(addr, bytes);
          if (in.op != Op::kLd && in.op != Op::kLd32) NoteRseqCsStore(addr, bytes);
        }
        int64_t stored;
        MemoryOp(in, r, p, stored);
        break;
      }
      case Op::kCall:
        if (c.call_depth >= kMaxCallDepth) goto out;  // Step kills
        c.ret_stack[c.call_depth++] = pc + 1;
        next = s_.program.functions[in.target].first;
        break;
      case Op::kRet:
        if (c.call_depth == 0) goto out;  // thread exit or sigreturn: Step
        next = c.ret_stack[--c.call_depth];
        break;
      case Op::kRseqLoad: {
        static constexpr uint64_t kOff[] = {kRseqOffCpuIdStart, kRseqOffCpuId, kRseqOffNodeId, kRseqOffMmCid,
                                            kRseqOffFlags};
        uint32_t v = 0;
        if (th.rseq_area != 0) {
          std::memcpy(&v, mem + (th.rseq_area + kOff[in.aux] - kDataBase), 4);
        } else if (static_cast<RseqField>(in.aux) == RseqField::kCpuId) {
          v = 0xffffffffu;
        }
        r[in.rd] = static_cast<int64_t>(v);
        break;
      }
      case Op::kRseqArm: {
        const uint64_t area = th.rseq_area ? th.rseq_area : AreaAddress(t);
        const uint64_t desc = DescriptorAddress(in.target);
        std::memcpy(mem + (area + kRseqOffRseqCs - kDataBase), &desc, 8);
        break;
      }
      case Op::kAssert:
        if (!Compare(static_cast<CmpKind>(in.aux), r[in.rs], b)) goto out;  // Step fails it
        break;
      case Op::kObserve: out_->threads[t].observed.emplace_back(in.target, r[in.rs]); break;
      default: goto out;  // kernel calls
    }
    pc = next;
  }
out:
  c.pc = pc;
  steps_ += n;
  boundary_ += boundaries;
  sched.defaults_ahead = defaults;
  return n;
}

bool Machine::ExecSyscall(int t, const Instr& in) {
  SimThread& th = threads_[t];
  Context& c = th.cur();
  int64_t ret = 0;
  const int64_t arg = in.use_imm ? in.imm : c.r[in.rs];
  switch (in.op) {
    case Op::kSchedYield: {
      TouchCpu(th.cpu);
      // Rule 10: a yield that re-picks the same task is no switch and no event.
      if (!cpus_[th.cpu].queue.empty()) SwitchOut(th.cpu, -1, TraceKind::kYield);
      break;
    }
    case Op::kSchedSetaffinity: {
      const uint64_t mask = static_cast<uint64_t>(arg) & cpu_mask_;
      if (mask == 0) {
        ret = kEinval;
        break;
      }
      th.affinity = mask;
      if (!((mask >> th.cpu) & 1)) {
        // Migrated off by the stopper: switch + set_task_cpu (rule 11). The
        // destination is the lowest allowed CPU (documented simplification of
        // cpumask_any_and_distribute()).
        const int from = th.cpu;
        const int to = std::countr_zero(mask);
        abi_->RseqPreempt(*this, t);
        abi_->RseqMigrate(*this, t);
        PreemptLockSchedOut(*this, t);
        abi_->MmCidSwitchOut(*this, t, from);
        if (record_) Record(TraceKind::kMigrate, from, t, c.pc, to);
        PickNext(from, -1);
        abi_->SchedMmCidMigrateTo(*this, t, from, to);
        Enqueue(to, t);
        if (cpus_[last_cpu_].running < 0) MoveDefaultCpu(to, /*runs=*/false);
      }
      break;
    }
    case Op::kGetcpu:
      ret = th.cpu;
      break;
    case Op::kClock:
      ret = static_cast<int64_t>(ClockNs(th.cpu));
      break;
    case Op::kFutexWait:
      ret = FutexWait(t, static_cast<uint64_t>(c.r[in.rs]), static_cast<uint32_t>(in.use_imm ? in.imm : c.r[in.rt]));
      break;
    case Op::kFutexWake:
      ret = FutexWake(t, static_cast<uint64_t>(c.r[in.rs]), in.use_imm ? in.imm : c.r[in.rt]);
      break;
    case Op::kSleep:
      ret = Sleep(t, arg);
      break;
    case Op::kTgkill: {
      const int64_t target = in.use_imm ? in.imm : c.r[in.rs];
      // Reading whether the target still exists is an access to it (its exit
      // and this call do not commute).
      if (target >= 0 && target < num_threads()) TouchThread(static_cast<int>(target));
      if (target < 0 || target >= num_threads() || threads_[target].state == ThreadState::kExited) {
        ret = kEsrch;
        break;
      }
      // Signal 0 probes existence: do_send_specific() (kernel/signal.c) runs
      // the permission check and sends nothing when sig == 0; the call
      // returns 0 for a live thread (-ESRCH above for an exited one). No
      // event, no signal pending, nothing changes in the target.
      if (in.aux == 0) break;
      TouchThread(static_cast<int>(target));
      if (record_) Record(TraceKind::kSignal, threads_[target].cpu, static_cast<int>(target), threads_[target].cur().pc, in.aux);
      if (in.aux == kSigKill) {
        // complete_signal() (kernel/signal.c): SIGKILL starts a group exit
        // when it is generated (SIGKILL queued to every thread, each woken),
        // so no thread runs another user instruction: the sender dies on its
        // way back from tgkill, whichever thread it named.
        Kill(kSigKill,
             "SIGKILL sent by " + s_.threads[t].name + " to " + s_.threads[target].name +
                 ": the kernel kills the whole process at once (complete_signal(): group exit)",
             t);
        break;
      }
      RaiseSignal(static_cast<int>(target), in.aux);
      break;
    }
    case Op::kMembarrierRseq: {
      // MEMBARRIER_CMD_PRIVATE_EXPEDITED_RSEQ (rule 24), as
      // membarrier_private_expedited() (kernel/sched/membarrier.c): nothing
      // when the process has one live thread (mm_users == 1) or the machine
      // has one CPU online (num_online_cpus() == 1, see below); a CPU number that is not online is a silent no-op (returns 0);
      // a negative one means all CPUs. IPIs go to every CPU (or the given one)
      // running a thread of the process; targeting all CPUs skips the caller,
      // naming its own CPU interrupts it too.
      int64_t target_cpu = in.use_imm ? in.imm : c.r[in.rs];
      if (target_cpu < 0) target_cpu = -1;
      // mm_users reads every thread's liveness.
      for (int u = 0; u < num_threads(); ++u) TouchThread(u);
      // num_online_cpus() is the machine's, not the scenario's: a scenario's
      // CPUs are those its threads may run on, of a machine with more online
      // (every machine rseqmc cross-checks on has >= 2), so only mm_users
      // takes the shortcut.
      if (live_threads_ == 1 || target_cpu >= num_cpus_) break;
      for (int cpu = 0; cpu < num_cpus_; ++cpu) {
        if (target_cpu >= 0 && cpu != target_cpu) continue;
        TouchCpu(cpu);
        const int victim = cpus_[cpu].running;
        if (victim < 0 || (victim == t && target_cpu < 0)) continue;
        if (record_) Record(TraceKind::kIpi, cpu, victim, threads_[victim].cur().pc);
        TouchThread(victim);
        // smp_call_function_many/single(): an IPI interrupts the victim's user
        // mode; on the caller's own CPU the function runs in its syscall.
        if (victim != t) abi_->IrqEntryFromUser(*this, victim);
        abi_->IpiRseq(*this, victim);
      }
      break;
    }
    case Op::kRseqRegister:
      ret = abi_->SysRseqRegister(*this, t, static_cast<uint32_t>(in.imm));
      break;
    case Op::kRseqUnregister:
      ret = abi_->SysRseqUnregister(*this, t, static_cast<uint32_t>(in.imm));
      break;
    case Op::kRfcRegion: {
      const CsDescriptor& d = s_.program.descriptors[in.target];
      ret = abi_->SysRestartableSequences(*this, t, 0, CodeAddress(d.start), CodeAddress(d.post_commit),
                                          CodeAddress(d.abort));
      break;
    }
    case Op::kRfcCpuPtr:
      ret = abi_->SysRestartableSequences(*this, t, 1, static_cast<uint64_t>(arg), 0, 0);
      break;
    case Op::kPreemptLock:
      ret = SysPreemptLock(*this, t, static_cast<uint64_t>(arg), in.aux);
      break;
    default:
      break;
  }
  // A thread that blocked gets its result when it is woken (Wake).
  if (th.state == ThreadState::kRunnable) th.cur().r[0] = ret;
  // Syscall exit: exit-to-user work of the caller (signals sent to itself,
  // the evaluation after a yield/migration/IPI of its own CPU).
  const bool on_cpu = cpus_[th.cpu].running == t;
  if (!finished_ && on_cpu && (th.notify_resume || th.preempt_lock_notify || (th.pending & ~th.blocked))) {
    ReturnToUser(t);
  }
  return !finished_;
}

// ---------------------------------------------------------------------------
// ChoiceView (declared in sim/scheduler.h).

int ChoiceView::NumCpus() const { return m_.num_cpus(); }
int ChoiceView::DefaultCpu() const { return m_.default_cpu(); }
int ChoiceView::Running(int cpu) const { return m_.cpu(cpu).running; }
bool ChoiceView::Runnable(int cpu) const { return m_.cpu(cpu).running >= 0; }
int ChoiceView::Queued(int cpu) const { return static_cast<int>(m_.cpu(cpu).queue.size()); }
uint64_t ChoiceView::Steps() const { return m_.steps(); }
uint32_t ChoiceView::Events(DecisionKind k) const { return m_.events(k); }
uint32_t ChoiceView::TotalEvents() const { return m_.total_events(); }
bool ChoiceView::IsValid(const Decision& d) const { return m_.IsValid(d); }

std::pair<uint64_t, uint64_t> Machine::StateHash(bool mm_cid, uint32_t event_kinds) const {
  // The state is laid out as 64-bit words in a reused buffer, then hashed
  // with XXH3-128 (sim/state_hash.h; AVX2 where the CPU has it): memory's
  // MemoryHash first (kept store by store under stateful search), then each
  // thread, the CPUs' run queues, the mm_cid allocator, the event counts and
  // the observations made so far.
  std::vector<uint64_t>& w = hash_words_;
  w.clear();
  const MemoryHash mem = memory_hash(mm_cid);
  w.push_back(mem.lo);
  w.push_back(mem.hi);
  LayOutStateButMemory(w, mm_cid, event_kinds);
  return Xxh3_128(w.data(), w.size() * sizeof(uint64_t));
}

void Machine::LayOutStateButMemory(std::vector<uint64_t>& w, bool mm_cid, uint32_t event_kinds) const {
  for (const SimThread& th : threads_) {
    w.push_back(static_cast<uint64_t>(th.state) | static_cast<uint64_t>(th.cpu) << 8 |
                static_cast<uint64_t>(th.event_mask) << 16 | static_cast<uint64_t>(th.notify_resume) << 24 |
                static_cast<uint64_t>(th.depth) << 32 |
                static_cast<uint64_t>(mm_cid ? static_cast<uint32_t>(th.mm_cid) : 0u) << 40);
    w.push_back(th.affinity ^ (static_cast<uint64_t>(static_cast<uint32_t>(th.rseq_ids_cpu)) |
                               static_cast<uint64_t>(static_cast<uint32_t>(mm_cid ? th.rseq_ids_mm_cid : 0)) << 32));
    w.push_back(static_cast<uint64_t>(th.rseq_sched_switch) | static_cast<uint64_t>(th.rseq_user_irq) << 1);
    w.push_back(th.rseq_area ^ (static_cast<uint64_t>(th.rseq_sig) << 32));
    w.push_back(static_cast<uint64_t>(th.pending) | static_cast<uint64_t>(th.blocked) << 32);
    if (th.rfc_cpu_ptr != 0) w.push_back(th.rfc_cpu_ptr ^ 0x2015);
    if (th.preempt_lock_flag != 0) {
      w.push_back(th.preempt_lock_flag ^ (static_cast<uint64_t>(th.preempt_lock_signo) << 56 |
                                          static_cast<uint64_t>(th.preempt_lock_notify) << 54 |
                                          static_cast<uint64_t>(th.preempt_lock_siginfo) << 53));
    }
    if (th.state == ThreadState::kBlocked) {
      w.push_back(th.futex_addr);
      w.push_back(th.wait_seq);
    } else if (th.state == ThreadState::kSleeping) {
      w.push_back(th.wake_at_ns - now_ns_);
    }
    for (int d = 0; d <= th.depth; ++d) {
      const Context& c = th.ctx[d];
      // The registers as one block (a push_back each was a third of this
      // function's time); the same words as before, so the same hashes.
      const size_t at = w.size();
      w.resize(at + c.r.size());
      std::memcpy(&w[at], c.r.data(), sizeof c.r);
      w.push_back(static_cast<uint64_t>(c.pc) | static_cast<uint64_t>(c.call_depth) << 32);
      w.insert(w.end(), c.ret_stack.begin(), c.ret_stack.begin() + c.call_depth);
      w.push_back(static_cast<uint64_t>(c.signo) | static_cast<uint64_t>(c.saved_blocked) << 32);
    }
  }
  for (const SimCpu& c : cpus_) {
    w.push_back(static_cast<uint64_t>(static_cast<uint32_t>(c.running)) | static_cast<uint64_t>(c.queue.size()) << 32);
    for (int32_t q : c.queue) w.push_back(static_cast<uint64_t>(q));
  }
  if (mm_cid) {
    w.push_back(mmcid_.cidmask);
    w.push_back(static_cast<uint64_t>(mmcid_.max_nr_cid));
    for (int c = 0; c < num_cpus_; ++c) {
      w.push_back(static_cast<uint64_t>(static_cast<uint8_t>(mmcid_.pcpu_cid[c])) |
                  static_cast<uint64_t>(static_cast<uint8_t>(mmcid_.recent_cid[c])) << 8);
    }
    for (const SimThread& th : threads_) w.push_back(static_cast<uint64_t>(static_cast<uint32_t>(th.last_mm_cid)));
  }
  if (!rfc_.regions.empty() || rfc_.cpu_ptr_set) {
    w.push_back(rfc_.regions.size() << 1 | static_cast<uint64_t>(rfc_.cpu_ptr_set));
    for (const RfcRegion& r : rfc_.regions) {
      w.push_back(r.start);
      w.push_back(r.end);
      w.push_back(r.restart);
    }
  }
  w.push_back(total_events_);
  for (int k = 0; k < kNumDecisionKinds; ++k) {
    if ((event_kinds >> k) & 1) w.push_back(events_[k]);
  }
  // The observations made so far are part of the outcome: two histories that
  // reach the same memory and registers after observing different values (or
  // in another order) must not be merged.
  if (out_ != nullptr) {
    for (const ThreadOutcome& o : out_->threads) {
      w.push_back(o.observed.size());
      for (const auto& [id, v] : o.observed) {
        w.push_back(id);
        w.push_back(static_cast<uint64_t>(v));
      }
    }
  }
}

uint64_t Machine::MemoryWord(uint64_t index) const {
  const uint64_t off = index * 8;
  uint64_t v = 0;
  if (off < mem_size_) std::memcpy(&v, mem_ + off, std::min<uint64_t>(8, mem_size_ - off));
  return v;
}

MemoryHash Machine::MemoryHashFromScratch() const {
  return mem_ == nullptr ? MemoryHash{} : MemoryImageHash(mem_, mem_size_);
}

void Machine::HashWords(uint64_t off, int bytes, int sign) {
  for (uint64_t i = off / 8; i <= (off + static_cast<uint64_t>(bytes) - 1) / 8; ++i) {
    const MemoryHash term = MemoryWordTerm(i, MemoryWord(i));
    if (sign < 0) {
      mem_hash_.Sub(term);
    } else {
      mem_hash_.Add(term);
    }
  }
}

void Machine::StoreHashed(uint64_t addr, uint64_t v, int bytes) {
  uint8_t* const p = mem_ + (addr - kDataBase);
  if (std::memcmp(p, &v, bytes) == 0) return;  // the same bytes: no term changes
  HashWords(addr - kDataBase, bytes, -1);
  std::memcpy(p, &v, bytes);
  HashWords(addr - kDataBase, bytes, +1);
}

MemoryHash Machine::MaskMmCid(MemoryHash h) const {
  // mask_words_ holds pairs (word index, mask of its mm_cid bytes), each
  // word once however many areas share it (a linear merge: few threads).
  std::vector<uint64_t>& pairs = mask_words_;
  pairs.clear();
  auto add = [&pairs](uint64_t word, uint64_t mask) {
    for (size_t i = 0; i < pairs.size(); i += 2) {
      if (pairs[i] == word) {
        pairs[i + 1] |= mask;
        return;
      }
    }
    pairs.push_back(word);
    pairs.push_back(mask);
  };
  for (const SimThread& th : threads_) {
    if (th.rseq_area == 0 || !MemOk(th.rseq_area + kRseqOffMmCid, 4)) continue;
    const uint64_t off = th.rseq_area + kRseqOffMmCid - kDataBase;
    const uint64_t shift = 8 * (off % 8);
    add(off / 8, uint64_t{0xffffffff} << shift);
    if (shift > 32) add(off / 8 + 1, uint64_t{0xffffffff} >> (64 - shift));
  }
  // Each word's correction G(i, v & ~mask) - G(i, v) is kept with the
  // value it was computed for: the mm_cid words change only when an ID is
  // written, so nearly every state reuses it (computing it was 3.5 % of a
  // stateful search of counter2 K=3).
  if (mask_terms_.size() < pairs.size() / 2) mask_terms_.resize(pairs.size() / 2);
  for (size_t i = 0; i < pairs.size(); i += 2) {
    const uint64_t v = MemoryWord(pairs[i]);
    if ((v & pairs[i + 1]) == 0) continue;
    MaskTerm& c = mask_terms_[i / 2];
    if (!c.valid || c.word != pairs[i] || c.mask != pairs[i + 1] || c.value != v) {
      c = {true, pairs[i], pairs[i + 1], v, MemoryWordTerm(pairs[i], v & ~pairs[i + 1])};
      c.delta.Sub(MemoryWordTerm(pairs[i], v));
    }
    h.Add(c.delta);
  }
  return h;
}

bool Machine::InCriticalSection(int t) const {
  const SimThread& th = threads_[t];
  if (th.rseq_area == 0 || mem_ == nullptr) return false;
  const uint64_t ptr = Load(th.rseq_area + kRseqOffRseqCs, 8);
  if (ptr == 0 || !MemOk(ptr, kRseqCsBytes)) return false;
  const uint32_t pc = th.cur().pc;
  if (pc == kNativePc) return false;
  const uint64_t ip = CodeAddress(pc);
  return ip - Load(ptr + 8, 8) < Load(ptr + 16, 8);
}

}  // namespace rseqmc
