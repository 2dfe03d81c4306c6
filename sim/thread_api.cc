#include "sim/thread_api.h"

#include "sim/machine.h"

#include <stdexcept>

namespace rseqmc {

// Every API call is one scheduling point, like one IR instruction: pass the
// boundary (events, other CPUs), run any signal handler frame the kernel pushed
// (IR, until sigreturn brings the thread back to native code), then count the
// step. Throws Unwind when the execution ended.
void ThreadApi::Sync() {
  if (!m_.Boundary(t_)) throw Unwind{};
  if (m_.threads_[t_].cur().pc != kNativePc) {
    if (m_.Interpret(t_, true) != Machine::Stop::kNative) throw Unwind{};
  }
  ++m_.steps_;
}

namespace {
constexpr uint32_t kNativeStepPc = kNativePc;
}  // namespace

uint64_t ThreadApi::Load(uint64_t a) {
  Sync();
  if (!m_.MemOk(a, 8)) {
    m_.SegvAccess(t_, kNativeStepPc, a);
    throw Unwind{};
  }
  return m_.Load(a, 8);
}

uint32_t ThreadApi::Load32(uint64_t a) {
  Sync();
  if (!m_.MemOk(a, 4)) {
    m_.SegvAccess(t_, kNativeStepPc, a);
    throw Unwind{};
  }
  return static_cast<uint32_t>(m_.Load(a, 4));
}

void ThreadApi::Store(uint64_t a, uint64_t v) {
  Sync();
  if (!m_.MemOk(a, 8)) {
    m_.SegvAccess(t_, kNativeStepPc, a);
    throw Unwind{};
  }
  m_.NoteAreaStore(a, 8);
  m_.Store(a, v, 8);
  if (m_.acc_) m_.LogAccess(AccessKind::kInstr, t_, kNativePc, kNativePc, a, 8, kAccessWrite, 0, static_cast<int64_t>(v));
}

void ThreadApi::Store32(uint64_t a, uint32_t v) {
  Sync();
  if (!m_.MemOk(a, 4)) {
    m_.SegvAccess(t_, kNativeStepPc, a);
    throw Unwind{};
  }
  m_.NoteAreaStore(a, 4);
  m_.Store(a, v, 4);
  if (m_.acc_) m_.LogAccess(AccessKind::kInstr, t_, kNativePc, kNativePc, a, 4, kAccessWrite, 0, v);
}

uint64_t ThreadApi::Cas(uint64_t a, uint64_t expected, uint64_t desired) {
  Sync();
  if (!m_.MemOk(a, 8)) {
    m_.SegvAccess(t_, kNativeStepPc, a);
    throw Unwind{};
  }
  const uint64_t old = m_.Load(a, 8);
  if (old == expected) {
    m_.NoteAreaStore(a, 8);
    m_.Store(a, desired, 8);
    if (m_.acc_) m_.LogAccess(AccessKind::kInstr, t_, kNativePc, kNativePc, a, 8, kAccessWrite, 0, static_cast<int64_t>(desired));
  }
  return old;
}

uint64_t ThreadApi::Xadd(uint64_t a, uint64_t delta) {
  Sync();
  if (!m_.MemOk(a, 8)) {
    m_.SegvAccess(t_, kNativeStepPc, a);
    throw Unwind{};
  }
  const uint64_t old = m_.Load(a, 8);
  m_.NoteAreaStore(a, 8);
  m_.Store(a, old + delta, 8);
  if (m_.acc_) m_.LogAccess(AccessKind::kInstr, t_, kNativePc, kNativePc, a, 8, kAccessWrite, 0, static_cast<int64_t>(old + delta));
  return old;
}

uint64_t ThreadApi::Xchg(uint64_t a, uint64_t v) {
  Sync();
  if (!m_.MemOk(a, 8)) {
    m_.SegvAccess(t_, kNativeStepPc, a);
    throw Unwind{};
  }
  const uint64_t old = m_.Load(a, 8);
  m_.NoteAreaStore(a, 8);
  m_.Store(a, v, 8);
  if (m_.acc_) m_.LogAccess(AccessKind::kInstr, t_, kNativePc, kNativePc, a, 8, kAccessWrite, 0, static_cast<int64_t>(v));
  return old;
}

namespace {
Instr Syscall(Op op, bool use_imm, int64_t imm, uint8_t aux = 0) {
  Instr in;
  in.op = op;
  in.use_imm = use_imm;
  in.imm = imm;
  in.aux = aux;
  return in;
}
}  // namespace

int64_t ThreadApi::SchedYield() {
  Sync();
  if (!m_.ExecSyscall(t_, Syscall(Op::kSchedYield, true, 0))) throw Unwind{};
  return m_.threads_[t_].ctx[0].r[0];
}

int64_t ThreadApi::SchedSetaffinity(uint64_t mask) {
  Sync();
  if (!m_.ExecSyscall(t_, Syscall(Op::kSchedSetaffinity, true, static_cast<int64_t>(mask)))) throw Unwind{};
  return m_.threads_[t_].ctx[0].r[0];
}

int64_t ThreadApi::Getcpu() {
  Sync();
  return m_.threads_[t_].cpu;
}

int64_t ThreadApi::Tgkill(int thread, int signo) {
  Sync();
  if (signo < 1 || signo > kMaxSignal) return -22;
  if (!m_.ExecSyscall(t_, Syscall(Op::kTgkill, true, thread, static_cast<uint8_t>(signo)))) throw Unwind{};
  return m_.threads_[t_].ctx[0].r[0];
}

int64_t ThreadApi::MembarrierRseq(int cpu) {
  Sync();
  if (!m_.ExecSyscall(t_, Syscall(Op::kMembarrierRseq, true, cpu))) throw Unwind{};
  return m_.threads_[t_].ctx[0].r[0];
}

uint32_t ThreadApi::RseqLoad(RseqField f) {
  Sync();
  const SimThread& th = m_.threads_[t_];
  if (th.rseq_area == 0) return f == RseqField::kCpuId ? 0xffffffffu : 0;
  static constexpr uint64_t kOff[] = {kRseqOffCpuIdStart, kRseqOffCpuId, kRseqOffNodeId, kRseqOffMmCid,
                                      kRseqOffFlags};
  return static_cast<uint32_t>(m_.Load(th.rseq_area + kOff[static_cast<int>(f)], 4));
}

int64_t ThreadApi::CallIr(const std::string& name, const std::vector<std::pair<uint8_t, int64_t>>& args) {
  const int f = m_.s_.program.FindFunction(name);
  if (f < 0) throw std::invalid_argument("ThreadApi::CallIr: no IR function named '" + name + "'");
  SimThread& th = m_.threads_[t_];
  Context& c = th.ctx[0];
  c.r.fill(0);
  for (auto [reg, v] : args) c.r[reg & 15] = v;
  c.call_depth = 1;
  c.ret_stack[0] = kNativePc;  // `ret` from the function returns to native code
  c.pc = m_.s_.program.functions[f].first;
  if (m_.Interpret(t_, false) != Machine::Stop::kNative) throw Unwind{};
  return th.ctx[0].r[0];
}

void ThreadApi::Observe(const std::string& name, int64_t value) {
  Sync();
  // Names from native code are numbered after the program's strings.
  auto& extra = m_.out_->extra_strings;
  uint32_t id = 0;
  for (; id < extra.size() && extra[id] != name; ++id) {
  }
  if (id == extra.size()) extra.push_back(name);
  m_.out_->threads[t_].observed.emplace_back(static_cast<uint32_t>(m_.s_.program.strings.size()) + id, value);
}

void ThreadApi::Assert(bool cond, const std::string& message) {
  Sync();
  if (!cond) {
    m_.FailAssert(t_, kNativePc, message);
    throw Unwind{};
  }
}

uint64_t ThreadApi::SymbolAddress(const std::string& name, uint32_t cpu) const {
  const int i = m_.s_.program.FindSymbol(name);
  if (i < 0) throw std::invalid_argument("ThreadApi::SymbolAddress: no symbol named '" + name + "'");
  const Symbol& s = m_.s_.program.symbols[i];
  return s.address + (s.per_cpu ? cpu * s.stride : 0);
}

}  // namespace rseqmc
