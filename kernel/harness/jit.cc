#include "kernel/harness/jit.h"

#include <linux/futex.h>
#include <sys/mman.h>
#include <sys/rseq.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstddef>
#include <cstring>
#include <sstream>

#include <xbyak/xbyak.h>

#include "sim/builder.h"  // WriteSymbolImage
#include "sim/ir.h"
#include "sim/machine.h"  // kMaxCallDepth

namespace rseqmc::harness {
namespace {

constexpr uint64_t kPage = 4096;
uint64_t PageUp(uint64_t n) { return (n + kPage - 1) / kPage * kPage; }

// Our own registration, for a glibc that did not register (tunable off).
struct alignas(32) OwnRseq {
  uint32_t cpu_id_start = 0;
  uint32_t cpu_id = static_cast<uint32_t>(-1);
  uint64_t rseq_cs = 0;
  uint32_t flags = 0;
  uint32_t node_id = 0;
  uint32_t mm_cid = 0;
  uint32_t pad = 0;
};
thread_local OwnRseq tls_own_rseq __attribute__((tls_model("initial-exec")));

std::atomic<bool> g_program_alive{false};

constexpr int kRegOffCtxRec = offsetof(JitContext, rec);
constexpr int kRegOffDepth = offsetof(JitContext, call_depth);
constexpr int kRecOffAborts = offsetof(ThreadRecord, aborts);
// The 2015 RFC's restartable_sequences() on the patched guest kernel
// (kernel/patches/0001; 325, the RFC's number, is mlock2 on 6.1).
constexpr int kRestartableSequencesX8664 = 335;
constexpr int kRecOffExited = offsetof(ThreadRecord, exited);
constexpr int kRecOffTid = offsetof(ThreadRecord, tid);
constexpr int kRecOffAssertFailed = offsetof(ThreadRecord, assert_failed);
constexpr int kRecOffAssertPc = offsetof(ThreadRecord, assert_pc);
constexpr int kRecOffNumObserved = offsetof(ThreadRecord, num_observed);
constexpr int kRecOffObsCapacity = offsetof(ThreadRecord, obs_capacity);
constexpr int kRecOffObsBegin = offsetof(ThreadRecord, obs_begin);
constexpr int kRecOffTracePos = offsetof(ThreadRecord, trace_pos);
constexpr int kRecOffTraceEnd = offsetof(ThreadRecord, trace_end);
constexpr int kRecOffRseqArea = offsetof(ThreadRecord, rseq_area);

constexpr int kMembarrierCmdPrivateExpeditedRseq = 1 << 7;  // include/uapi/linux/membarrier.h
constexpr int kMembarrierCmdFlagCpu = 1 << 0;
constexpr int kRseqFlagUnregister = 1;                      // include/uapi/linux/rseq.h


using Emitter = Xbyak::CodeGenerator;

// IR kernel calls whose block ends with the `syscall` instruction: the
// result (rax) becomes r0 at F_{i+1}, the start of the next block (jit.h).
// getcpu is not one: its result is read from memory after the syscall, and
// its own return is never an rseq event in the simulator (it raises none).
bool SyscallEnds(Op op) {
  switch (op) {
    case Op::kSchedYield: case Op::kSchedSetaffinity: case Op::kTgkill: case Op::kMembarrierRseq:
    case Op::kFutexWait: case Op::kFutexWake: case Op::kSleep: case Op::kRseqRegister:
    case Op::kRseqUnregister: case Op::kRfcRegion: case Op::kRfcCpuPtr:
      return true;
    default:
      return false;
  }
}

// `mov [rbx], rax` (r0 := rax), the first instruction at every F_i: an abort
// stub recognises a syscall return it interrupted by it (rcx = the return
// address, set by the `syscall` instruction).
constexpr char kStoreR0[] = "\x48\x89\x03";

}  // namespace

int64_t JitProgram::RseqOffset() {
  if (__rseq_size > 0) return static_cast<int64_t>(__rseq_offset);
  return reinterpret_cast<char*>(&tls_own_rseq) - static_cast<char*>(__builtin_thread_pointer());
}

uint32_t JitProgram::RseqLength() { return 32; }

uint64_t JitProgram::ThisThreadRseqArea() {
  return reinterpret_cast<uint64_t>(static_cast<char*>(__builtin_thread_pointer()) + RseqOffset());
}

bool JitProgram::EnsureRseqRegistered(std::string* why) {
  char* area = static_cast<char*>(__builtin_thread_pointer()) + RseqOffset();
  long r = syscall(SYS_rseq, area, RseqLength(), 0, kRseqSig);
  if (r == 0 || errno == EBUSY) return true;
  if (why) {
    *why = std::string("rseq registration failed: ") + std::strerror(errno) +
           (errno == ENOSYS ? " (kernel built without CONFIG_RSEQ)" : "");
  }
  return false;
}

JitProgram::JitProgram(const Scenario& s, JitOptions opts, uint32_t trace_slots)
    : s_(s), opts_(opts), trace_slots_(trace_slots) {
  bool expected = false;
  if (!g_program_alive.compare_exchange_strong(expected, true)) {
    throw HarnessError("another JIT program is alive in this process (data symbols have fixed addresses)");
  }
  try {
    // Data symbols at the simulator's addresses.
    uint64_t end = kDataBase;
    for (const Symbol& sym : s.program.symbols) end = std::max(end, sym.address + sym.size_bytes);
    data_used_ = end - kDataBase;
    data_bytes_ = PageUp(std::max<uint64_t>(data_used_, 1));
    data_ = mmap(reinterpret_cast<void*>(kDataBase), data_bytes_, PROT_READ | PROT_WRITE,
                 MAP_SHARED | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
    if (data_ == MAP_FAILED || data_ != reinterpret_cast<void*>(kDataBase)) {
      if (data_ != MAP_FAILED) munmap(data_, data_bytes_);
      data_ = nullptr;
      throw HarnessError("cannot map the data symbols at 0x" + [] {
        std::ostringstream o;
        o << std::hex << kDataBase;
        return o.str();
      }() + ": " + std::strerror(errno));
    }
    data_init_.assign(data_used_, 0);
    WriteSymbolImage(s.program, s.num_cpus, data_init_.data());
    // Shared records.
    const size_t nthreads = s.threads.size();
    shared_bytes_ = PageUp(sizeof(SharedArea) + 64 + nthreads * sizeof(ThreadRecord) +
                           nthreads * static_cast<size_t>(trace_slots_) * 4 +
                           nthreads * static_cast<size_t>(opts_.observation_slots) * sizeof(ObservationSlot));
    void* sh = mmap(nullptr, shared_bytes_, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (sh == MAP_FAILED) throw HarnessError(std::string("mmap of the shared records failed: ") + std::strerror(errno));
    shared_ = static_cast<SharedArea*>(sh);
    // Descriptors: one read-only page region, 32-byte aligned entries.
    desc_bytes_ = PageUp(std::max<size_t>(s.program.descriptors.size() * kRseqCsBytes, 1));
    desc_ = mmap(nullptr, desc_bytes_, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (desc_ == MAP_FAILED) {
      desc_ = nullptr;
      throw HarnessError(std::string("mmap of the descriptors failed: ") + std::strerror(errno));
    }
    if (opts_.original_code) MapOriginalCode();
    Compile();
    ResetState();
  } catch (...) {
    UnmapOriginalCode();
    if (data_) munmap(data_, data_bytes_);
    if (shared_) munmap(shared_, shared_bytes_);
    if (desc_) munmap(desc_, desc_bytes_);
    if (code_) munmap(code_, code_map_bytes_);
    g_program_alive = false;
    throw;
  }
}

JitProgram::~JitProgram() {
  UnmapOriginalCode();
  if (data_) munmap(data_, data_bytes_);
  if (shared_) munmap(shared_, shared_bytes_);
  if (desc_) munmap(desc_, desc_bytes_);
  if (code_) munmap(code_, code_map_bytes_);
  g_program_alive = false;
}

void JitProgram::ResetState() {
  if (data_used_ > 0) std::memcpy(data_, data_init_.data(), data_used_);
  std::memset(static_cast<char*>(data_) + data_used_, 0, data_bytes_ - data_used_);
  const size_t nthreads = s_.threads.size();
  char* base = reinterpret_cast<char*>(shared_) + (sizeof(SharedArea) + 63) / 64 * 64;
  // Header and records only: the buffers are read up to their positions.
  std::memset(static_cast<void*>(shared_), 0, static_cast<size_t>(base - reinterpret_cast<char*>(shared_)) +
                                                  nthreads * sizeof(ThreadRecord));
  shared_->threads = reinterpret_cast<ThreadRecord*>(base);
  char* traces = base + nthreads * sizeof(ThreadRecord);
  char* observations = traces + nthreads * static_cast<size_t>(trace_slots_) * 4;
  for (size_t t = 0; t < nthreads; ++t) {
    ThreadRecord& r = shared_->threads[t];
    r.final_cpu = -1;
    r.obs_capacity = opts_.observation_slots;
    r.obs_begin = reinterpret_cast<uint64_t>(observations + t * static_cast<size_t>(opts_.observation_slots) *
                                                                  sizeof(ObservationSlot));
    r.trace_begin = reinterpret_cast<uint64_t>(traces + t * static_cast<size_t>(trace_slots_) * 4);
    r.trace_pos = r.trace_begin;
    r.trace_end = r.trace_begin + static_cast<uint64_t>(trace_slots_) * 4;
  }
}

std::vector<uint8_t> JitProgram::ReadMemory() const {
  const auto* p = static_cast<const uint8_t*>(data_);
  return std::vector<uint8_t>(p, p + data_used_);
}

std::vector<uint32_t> JitProgram::IrTrace(int t) const {
  const ThreadRecord& r = shared_->threads[t];
  const auto* b = reinterpret_cast<const uint32_t*>(r.trace_begin);
  const auto* e = reinterpret_cast<const uint32_t*>(r.trace_pos);
  return std::vector<uint32_t>(b, e);
}

std::string OriginalCodeUnavailableReason(const Scenario& s) {
  const OriginalCode& oc = s.original;
  if (oc.empty()) return "the scenario imports no machine code (`import` in the .rsq); --original-bytes needs it";
  for (const OriginalFunction& f : oc.functions) {
    const std::string& name = s.program.functions[f.function].name;
    if (!f.not_runnable.empty()) return "imported " + name + " cannot run as original bytes: " + f.not_runnable;
    for (const ThreadSpec& t : s.threads) {
      if (t.entry == static_cast<int32_t>(f.function)) {
        return "thread " + t.name + " enters imported " + name + " directly; call it from an IR function";
      }
    }
    for (const SignalSpec& sg : s.signals) {
      if (sg.handler == static_cast<int32_t>(f.function)) {
        return "imported " + name + " is a signal handler; call it from an IR handler";
      }
    }
  }
  std::vector<uint64_t> aborts = oc.abort_ips;
  std::sort(aborts.begin(), aborts.end());
  aborts.erase(std::unique(aborts.begin(), aborts.end()), aborts.end());
  if (aborts.size() > 3) {
    return "the imported functions have " + std::to_string(aborts.size()) +
           " abort_ip addresses; the tracer counts aborts with debug registers DR1-DR3 (3 at most): import fewer "
           "functions per scenario";
  }
  return "";
}

void JitProgram::MapOriginalCode() {
  const std::string why = OriginalCodeUnavailableReason(s_);
  if (!why.empty()) throw HarnessError(why);
  const OriginalCode& oc = s_.original;
  const Program& p = s_.program;
  original_.assign(p.code.size(), false);
  for (const OriginalFunction& f : oc.functions) {
    const Function& fn = p.functions[f.function];
    for (uint32_t i = fn.first; i < fn.first + fn.count; ++i) original_[i] = true;
  }
  for (const auto& [i, addr] : oc.instr_address) original_index_[addr] = i;
  original_abort_ips_ = oc.abort_ips;
  std::sort(original_abort_ips_.begin(), original_abort_ips_.end());
  original_abort_ips_.erase(std::unique(original_abort_ips_.begin(), original_abort_ips_.end()),
                            original_abort_ips_.end());
  // Page ranges of the segments, merged (sections of a linked file share pages).
  std::map<uint64_t, uint64_t> ranges;  // first page -> end
  for (const OriginalSegment& seg : oc.segments) {
    if (seg.bytes.empty()) continue;
    uint64_t b = seg.address / kPage * kPage, e = PageUp(seg.address + seg.bytes.size());
    auto it = ranges.upper_bound(b);
    if (it != ranges.begin() && std::prev(it)->second >= b) {
      --it;
      b = it->first;
      e = std::max(e, it->second);
      it = ranges.erase(it);
    }
    while (it != ranges.end() && it->first <= e) {
      e = std::max(e, it->second);
      it = ranges.erase(it);
    }
    ranges[b] = e;
  }
  for (const auto& [b, e] : ranges) {
    void* m = mmap(reinterpret_cast<void*>(b), e - b, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
    if (m == MAP_FAILED || m != reinterpret_cast<void*>(b)) {
      if (m != MAP_FAILED) munmap(m, e - b);
      std::ostringstream o;
      o << "cannot map the original code at 0x" << std::hex << b << ": " << std::strerror(errno);
      throw HarnessError(o.str());
    }
    original_maps_.emplace_back(m, e - b);
  }
  for (const OriginalSegment& seg : oc.segments) {
    if (!seg.bytes.empty()) std::memcpy(reinterpret_cast<void*>(seg.address), seg.bytes.data(), seg.bytes.size());
  }
  // W^X: read+execute from now on (the descriptors in __rseq_cs are only read).
  for (const auto& [m, len] : original_maps_) {
    if (mprotect(m, len, PROT_READ | PROT_EXEC) != 0) {
      throw HarnessError(std::string("mprotect of the original code failed: ") + std::strerror(errno));
    }
  }
}

void JitProgram::UnmapOriginalCode() {
  for (const auto& [m, len] : original_maps_) munmap(m, len);
  original_maps_.clear();
}

bool JitProgram::Contains(uint64_t addr) const {
  return (addr >= reinterpret_cast<uint64_t>(code_) && addr < reinterpret_cast<uint64_t>(code_) + code_bytes_) ||
         InOriginalCode(addr);
}

bool JitProgram::InOriginalCode(uint64_t addr) const {
  for (const auto& [m, len] : original_maps_) {
    if (addr >= reinterpret_cast<uint64_t>(m) && addr < reinterpret_cast<uint64_t>(m) + len) return true;
  }
  return false;
}

int JitProgram::IndexOf(uint64_t addr) const {
  if (auto it = original_index_.find(addr); it != original_index_.end()) return static_cast<int>(it->second);
  if (block_addr_.empty() || addr < block_addr_.front() || addr >= block_addr_.back()) return -1;
  auto it = std::upper_bound(block_addr_.begin(), block_addr_.end(), addr);
  return static_cast<int>(it - block_addr_.begin()) - 1;
}

uint64_t JitProgram::abort_ip(uint32_t d) const { return abort_stub_.at(d); }

uint64_t JitProgram::descriptor_address(uint32_t d) const {
  return reinterpret_cast<uint64_t>(desc_) + kRseqCsBytes * d;
}

int64_t JitProgram::Call(uint32_t func, JitContext* ctx, int64_t countdown) const {
  using Fn = int64_t (*)(uint64_t, JitContext*, int64_t);
  return reinterpret_cast<Fn>(trampoline_)(func_addr_.at(func), ctx, countdown);
}

void JitProgram::DoneTrap() const { reinterpret_cast<void (*)()>(done_trap_)(); }

bool JitProgram::HoldsCountdown(uint64_t rip) const {
  if (InOriginalCode(rip)) return true;
  const auto code = reinterpret_cast<uint64_t>(code_);
  if (rip < code || rip >= code + code_bytes_) return false;
  // The layout of Compile(): trampoline, re-arm stub, done trap, assert trap, ...
  if (rip < rearm_stub_) return rip >= countdown_from_ && rip < countdown_to_;
  return rip < done_trap_ || rip >= assert_trap_;
}

void JitProgram::Compile() {
  const Program& p = s_.program;
  const uint32_t n = static_cast<uint32_t>(p.code.size());
  // Generous upper bound: ~260 bytes per instruction (a memory access with
  // its checks, the countdown and the IR trace) plus stubs.
  code_map_bytes_ = PageUp(4096 + static_cast<size_t>(n) * 384 + p.descriptors.size() * 128);
  code_ = mmap(nullptr, code_map_bytes_, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (code_ == MAP_FAILED) {
    code_ = nullptr;
    throw HarnessError(std::string("mmap of the JIT code failed: ") + std::strerror(errno));
  }
  Emitter g(code_map_bytes_, code_);
  const int64_t rseq_off = RseqOffset();
  const uint64_t cpu_mask = s_.num_cpus >= 64 ? ~0ull : ((1ull << s_.num_cpus) - 1);
  auto R = [&](int k) { return g.qword[g.rbx + 8 * k]; };
  auto cur = [&] { return reinterpret_cast<uint64_t>(g.getCurr()); };

  // Which instructions are abort labels (one stub per label).
  std::vector<int> stub_of(n + 1, -1);
  for (const CsDescriptor& d : p.descriptors) stub_of[d.abort] = 1;

  std::vector<Xbyak::Label> L(n + 1);
  // Block starts and abort stubs, for the addresses kRfcRegion passes.
  std::vector<Xbyak::Label> block_label(n + 1), stub_label(n + 1);
  Xbyak::Label assert_trap, segv;
  block_addr_.assign(n + 1, 0);
  instr_addr_.assign(n + 1, 0);
  body_addr_.assign(n, 0);
  std::vector<uint64_t> stub_addr(n + 1, 0);

  // --- trampoline: int64 (fn, ctx, countdown) ---
  trampoline_ = cur();
  g.push(g.rbx);
  g.push(g.rbp);
  g.push(g.r12);
  g.push(g.r13);
  g.push(g.r14);
  g.push(g.r15);
  g.sub(g.rsp, 8);
  g.mov(g.rbx, g.rsi);
  g.mov(g.r14, g.rdx);
  countdown_from_ = cur();
  // rcx says where a syscall returned (see SyscallEnds below); a handler
  // entered from a signal frame must not see the interrupted code's.
  g.xor_(g.ecx, g.ecx);
  g.call(g.rdi);
  g.mov(g.rax, g.r14);
  countdown_to_ = cur();  // from here on r14 is dead (popped), the countdown is in rax
  g.add(g.rsp, 8);
  g.pop(g.r15);
  g.pop(g.r14);
  g.pop(g.r13);
  g.pop(g.r12);
  g.pop(g.rbp);
  g.pop(g.rbx);
  g.ret();
  g.align(16);
  // --- re-arm stub. The tracer leaves [rsp] = the rseq_cs value to restore
  // and [rsp+8] = where to continue (on the thread's own stack, so that a
  // signal delivered before the stub runs, whose frame returns to the stub,
  // still finds them: the kernel builds frames below the red zone). Every
  // register and the flags are preserved (push/pop/mov/lea/ret set no flag).
  rearm_stub_ = cur();
  g.push(g.rax);
  g.push(g.rcx);
  g.mov(g.rcx, g.qword[g.rsp + 16]);  // the rseq_cs value
  g.mov(g.rax, rseq_off);
  g.putSeg(g.fs);
  g.mov(g.qword[g.rax + static_cast<int>(kRseqOffRseqCs)], g.rcx);
  g.pop(g.rcx);
  g.pop(g.rax);
  g.lea(g.rsp, g.ptr[g.rsp + 8]);     // drop the rseq_cs slot
  g.ret();                            // to the continuation; rsp back where it was
  g.align(16);
  // --- done trap ---
  done_trap_ = cur();
  g.int3();
  g.ret();
  g.align(16);
  // --- assert trap ---
  g.L(assert_trap);
  assert_trap_ = cur();
  if (opts_.traps) {
    g.int3();
    g.jmp(assert_trap);
  } else {
    g.mov(g.edi, 134);  // 128 + SIGABRT, as an abort() would report
    g.mov(g.eax, SYS_exit_group);
    g.syscall();
  }
  g.align(16);
  // --- SIGSEGV for call-stack overflow (the simulator kills at kMaxCallDepth) ---
  g.L(segv);
  g.xor_(g.eax, g.eax);
  g.mov(g.dword[g.rax], g.eax);
  g.align(16);

  auto load_b = [&](const Instr& in, const Xbyak::Reg64& reg) {
    if (in.use_imm) {
      g.mov(reg, in.imm);
    } else {
      g.mov(reg, R(in.rt));
    }
  };
  auto load_arg = [&](const Instr& in, const Xbyak::Reg64& reg) {  // rs or imm (kernel calls)
    if (in.use_imm) {
      g.mov(reg, in.imm);
    } else {
      g.mov(reg, R(in.rs));
    }
  };
  // The simulator's rseq areas (Machine::AreaAddress) and the shared records.
  const uint64_t sim_area_base = DescriptorAddress(p, static_cast<uint32_t>(p.descriptors.size()));
  const uint64_t sim_area_bytes = kRseqAreaBytes * s_.threads.size();
  const uint64_t records = reinterpret_cast<uint64_t>(shared_) + (sizeof(SharedArea) + 63) / 64 * 64;
  auto address = [&](const Instr& in) {  // into rdx
    g.mov(g.rdx, R(in.rs));
    if (in.has_index) {
      g.mov(g.rcx, R(in.ru));
      g.imul(g.rcx, g.rcx, static_cast<int>(in.scale));
      g.add(g.rdx, g.rcx);
    }
    if (in.imm != 0) {
      g.mov(g.rcx, in.imm);
      g.add(g.rdx, g.rcx);
    }
    // The program's memory is its data symbols, [kDataBase, data end), and
    // the rseq areas, as in the simulator (Machine::UserMemOk; jit.h
    // "Memory"). The simulator's address of thread k's area is thread k's
    // real area here; anything else past the last symbol in the data
    // mapping (whose page tail would not fault on its own) is sent to
    // address 0 (never mapped): the same instruction raises SIGSEGV.
    Xbyak::Label not_area, ok;
    g.mov(g.rax, sim_area_base);
    g.mov(g.rcx, g.rdx);
    g.sub(g.rcx, g.rax);
    g.cmp(g.rcx, static_cast<uint32_t>(sim_area_bytes));
    g.jae(not_area, Xbyak::CodeGenerator::T_SHORT);
    g.mov(g.rax, g.rcx);
    g.and_(g.eax, static_cast<uint32_t>(kRseqAreaBytes - 1));
    g.shr(g.rcx, 5);  // log2(kRseqAreaBytes)
    g.imul(g.rcx, g.rcx, static_cast<int>(sizeof(ThreadRecord)));
    g.mov(g.rdx, records);
    g.mov(g.rdx, g.qword[g.rdx + g.rcx + kRecOffRseqArea]);
    g.add(g.rdx, g.rax);
    g.jmp(ok, Xbyak::CodeGenerator::T_SHORT);
    g.L(not_area);
    const uint64_t bytes = AccessBytes(in.op);
    const uint64_t lo = kDataBase + data_used_ - bytes + 1, hi = kDataBase + data_bytes_;
    if (lo < hi) {
      g.mov(g.rax, lo);
      g.mov(g.rcx, g.rdx);
      g.sub(g.rcx, g.rax);
      g.mov(g.rax, hi - lo);
      g.cmp(g.rcx, g.rax);
      g.jae(ok, Xbyak::CodeGenerator::T_SHORT);
      g.xor_(g.edx, g.edx);
    }
    g.L(ok);
  };
  auto store_r0 = [&] { g.mov(R(0), g.rax); };
  static_assert(kRseqAreaBytes == 32);
  // In an abort stub: when the abort was the kernel's fix-up on the way back
  // from a syscall whose result was not stored yet (rcx = the syscall's
  // return address, an F_i: `syscall` before it, the r0 store at it), store
  // it: on the kernel rax holds the result at abort_ip, and the simulator
  // writes r0 before the exit-to-user work (Machine::ExecSyscall).
  // Clobbers rdx, r11 and the flags.
  auto store_pending_result = [&] {
    Xbyak::Label skip;
    g.lea(g.rdx, g.ptr[g.rcx - 2]);
    g.mov(g.r11, reinterpret_cast<uint64_t>(code_));
    g.sub(g.rdx, g.r11);
    g.cmp(g.rdx, static_cast<uint32_t>(code_map_bytes_ - 5));
    g.jae(skip, Xbyak::CodeGenerator::T_SHORT);
    g.cmp(g.dword[g.rcx - 2], 0x8948050f);  // syscall (0f 05), then mov [rbx], rax (48 89 03)
    g.jne(skip, Xbyak::CodeGenerator::T_SHORT);
    g.cmp(g.byte[g.rcx + 2], 0x03);
    g.jne(skip, Xbyak::CodeGenerator::T_SHORT);
    store_r0();
    g.L(skip);
  };
  // reg := the current CPU, from getcpu(2) (clobbers rax, rcx, rdx, rsi, rdi, r11).
  auto getcpu_into = [&](const Xbyak::Reg32& reg) {
    g.sub(g.rsp, 16);
    g.mov(g.rdi, g.rsp);
    g.xor_(g.esi, g.esi);
    g.xor_(g.edx, g.edx);
    g.mov(g.eax, SYS_getcpu);
    g.syscall();
    g.mov(reg, g.dword[g.rsp]);
    g.add(g.rsp, 16);
  };

  for (uint32_t i = 0; i < n; ++i) {
    const Instr& in = p.code[i];
    block_addr_[i] = cur();
    g.L(block_label[i]);
    if (i > 0 && SyscallEnds(p.code[i - 1].op)) {
      // F_i: where the previous block's syscall returns. Its result (rax)
      // becomes r0 here, so that the syscall is the last x86 instruction of
      // its block and the kernel's exit-to-user work (rseq fix-up, signal
      // delivery) sees the IR boundary's address, as the simulator does.
      const uint64_t f = cur();
      store_r0();
      g.xor_(g.ecx, g.ecx);  // the result is stored: no abort stub stores it again
      if (f < reinterpret_cast<uint64_t>(code_) + 2 || std::memcmp(reinterpret_cast<const void*>(f - 2), "\x0f\x05", 2) != 0 ||
          std::memcmp(reinterpret_cast<const void*>(f), kStoreR0, 3) != 0) {
        throw HarnessError("JIT layout: the result store does not follow its syscall at " + std::to_string(i));
      }
    }
    if (stub_of[i] >= 0) {
      // Fallthrough from the previous block skips the stub (a `sig` block
      // jumps over it itself).
      if (i > 0 && p.code[i - 1].op != Op::kSig) g.jmp(L[i], Xbyak::CodeGenerator::T_SHORT);
      stub_addr[i] = cur();
      g.L(stub_label[i]);
      g.mov(g.rdx, g.qword[g.rbx + kRegOffCtxRec]);
      g.inc(g.qword[g.rdx + kRecOffAborts]);
      store_pending_result();
    }
    g.L(L[i]);
    instr_addr_[i] = cur();
    if (opts_.traps) {
      Xbyak::Label go;
      g.dec(g.r14);
      g.jnz(go, Xbyak::CodeGenerator::T_SHORT);
      g.int3();
      g.L(go);
    }
    if (opts_.ir_trace) {
      Xbyak::Label full;
      g.mov(g.rax, g.qword[g.rbx + kRegOffCtxRec]);
      g.mov(g.rcx, g.qword[g.rax + kRecOffTracePos]);
      g.cmp(g.rcx, g.qword[g.rax + kRecOffTraceEnd]);
      g.jae(full, Xbyak::CodeGenerator::T_SHORT);
      g.mov(g.dword[g.rcx], i);
      g.add(g.qword[g.rax + kRecOffTracePos], 4);
      g.L(full);
    }
    body_addr_[i] = cur();
    switch (in.op) {
      case Op::kLi:
        g.mov(g.rax, in.imm);
        g.mov(R(in.rd), g.rax);
        break;
      case Op::kMov:
        g.mov(g.rax, R(in.rs));
        g.mov(R(in.rd), g.rax);
        break;
      case Op::kAdd: case Op::kSub: case Op::kAnd: case Op::kOr: case Op::kXor:
      case Op::kShl: case Op::kShr: case Op::kMul:
        g.mov(g.rax, R(in.rs));
        load_b(in, g.rcx);
        switch (in.op) {
          case Op::kAdd: g.add(g.rax, g.rcx); break;
          case Op::kSub: g.sub(g.rax, g.rcx); break;
          case Op::kAnd: g.and_(g.rax, g.rcx); break;
          case Op::kOr: g.or_(g.rax, g.rcx); break;
          case Op::kXor: g.xor_(g.rax, g.rcx); break;
          case Op::kShl: g.shl(g.rax, g.cl); break;   // x86 masks the count to 6 bits, as the IR
          case Op::kShr: g.shr(g.rax, g.cl); break;
          default: g.imul(g.rax, g.rcx); break;       // low 64 bits: wrapping
        }
        g.mov(R(in.rd), g.rax);
        break;
      case Op::kLa:
        g.mov(g.rax, static_cast<int64_t>(p.symbols[in.target].address + static_cast<uint64_t>(in.imm)));
        g.mov(R(in.rd), g.rax);
        break;
      case Op::kLd:
        address(in);
        g.mov(g.rax, g.qword[g.rdx]);
        g.mov(R(in.rd), g.rax);
        break;
      case Op::kLd32:
        address(in);
        g.mov(g.eax, g.dword[g.rdx]);  // zero-extends
        g.mov(R(in.rd), g.rax);
        break;
      case Op::kSt:
        address(in);
        g.mov(g.rcx, R(in.rt));
        g.mov(g.qword[g.rdx], g.rcx);
        break;
      case Op::kSt32:
        address(in);
        g.mov(g.rcx, R(in.rt));
        g.mov(g.dword[g.rdx], g.ecx);
        break;
      case Op::kCas:
        address(in);
        g.mov(g.rax, R(in.rt));
        g.mov(g.rcx, R(in.ru));
        g.lock();
        g.cmpxchg(g.qword[g.rdx], g.rcx);
        g.mov(R(in.rd), g.rax);
        break;
      case Op::kXadd:
        address(in);
        g.mov(g.rax, R(in.rt));
        g.lock();
        g.xadd(g.qword[g.rdx], g.rax);
        g.mov(R(in.rd), g.rax);
        break;
      case Op::kXchg:
        address(in);
        g.mov(g.rax, R(in.rt));
        g.xchg(g.qword[g.rdx], g.rax);
        g.mov(R(in.rd), g.rax);
        break;
      case Op::kBeq: case Op::kBne: case Op::kBlt: case Op::kBge: case Op::kBltu: case Op::kBgeu:
        g.mov(g.rax, R(in.rs));
        load_b(in, g.rcx);
        g.cmp(g.rax, g.rcx);
        switch (in.op) {
          case Op::kBeq: g.je(L[in.target], Xbyak::CodeGenerator::T_NEAR); break;
          case Op::kBne: g.jne(L[in.target], Xbyak::CodeGenerator::T_NEAR); break;
          case Op::kBlt: g.jl(L[in.target], Xbyak::CodeGenerator::T_NEAR); break;
          case Op::kBge: g.jge(L[in.target], Xbyak::CodeGenerator::T_NEAR); break;
          case Op::kBltu: g.jb(L[in.target], Xbyak::CodeGenerator::T_NEAR); break;
          default: g.jae(L[in.target], Xbyak::CodeGenerator::T_NEAR); break;
        }
        break;
      case Op::kJmp:
        g.jmp(L[in.target], Xbyak::CodeGenerator::T_NEAR);
        break;
      case Op::kCall:
        g.cmp(g.qword[g.rbx + kRegOffDepth], kMaxCallDepth);
        g.jae(segv, Xbyak::CodeGenerator::T_NEAR);
        if (const OriginalFunction* of = opts_.original_code ? s_.original.Find(in.target) : nullptr) {
          // Bridge to the original machine code (see jit.h): the caller-saved
          // registers in and out; the callee returns here with ret.
          static constexpr int kCallerSaved[] = {0, 1, 2, 6, 7, 8, 9, 10, 11};
          g.mov(g.r15, of->entry);
          for (int r : kCallerSaved) g.mov(Xbyak::Reg64(r), R(r));
          g.call(g.r15);
          for (int r : kCallerSaved) g.mov(R(r), Xbyak::Reg64(r));
          if (i + 1 <= n && stub_of[i + 1] >= 0) g.jmp(L[i + 1], Xbyak::CodeGenerator::T_SHORT);
          break;
        }
        g.inc(g.qword[g.rbx + kRegOffDepth]);
        g.call(L[p.functions[in.target].first]);
        // The return address is in this block; continue at L_{i+1}, not at an
        // abort stub that may start block i+1.
        if (i + 1 <= n && stub_of[i + 1] >= 0) g.jmp(L[i + 1], Xbyak::CodeGenerator::T_SHORT);
        break;
      case Op::kRet: {
        Xbyak::Label top;
        g.cmp(g.qword[g.rbx + kRegOffDepth], 0);
        g.je(top, Xbyak::CodeGenerator::T_SHORT);
        g.dec(g.qword[g.rbx + kRegOffDepth]);
        g.L(top);
        g.ret();
        break;
      }
      case Op::kRseqLoad: {
        static constexpr uint64_t kOff[] = {kRseqOffCpuIdStart, kRseqOffCpuId, kRseqOffNodeId, kRseqOffMmCid,
                                            kRseqOffFlags};
        g.mov(g.rax, rseq_off);
        g.putSeg(g.fs);
        g.mov(g.eax, g.dword[g.rax + static_cast<int>(kOff[in.aux])]);
        g.mov(R(in.rd), g.rax);
        break;
      }
      case Op::kRseqAddr:
        g.xor_(g.eax, g.eax);
        g.putSeg(g.fs);
        g.mov(g.rax, g.qword[g.rax]);  // the TCB's self pointer = thread pointer
        g.mov(g.rcx, rseq_off);
        g.add(g.rax, g.rcx);
        g.mov(R(in.rd), g.rax);
        break;
      case Op::kRseqArm:
        g.mov(g.rax, static_cast<int64_t>(descriptor_address(in.target)));
        g.mov(g.rcx, rseq_off);
        g.putSeg(g.fs);
        g.mov(g.qword[g.rcx + static_cast<int>(kRseqOffRseqCs)], g.rax);
        break;
      case Op::kSig:
        // jmp rel8 over the signature word (and the abort stub that follows
        // when the next instruction is an abort label).
        g.jmp(L[i + 1], Xbyak::CodeGenerator::T_SHORT);
        g.dd(static_cast<uint32_t>(in.imm));
        break;
      case Op::kFence:
        g.mfence();
        break;
      case Op::kNop:
        break;
      case Op::kAssert: {
        Xbyak::Label ok;
        g.mov(g.rax, R(in.rs));
        load_b(in, g.rcx);
        g.cmp(g.rax, g.rcx);
        switch (static_cast<CmpKind>(in.aux)) {
          case CmpKind::kEq: g.je(ok, Xbyak::CodeGenerator::T_NEAR); break;
          case CmpKind::kNe: g.jne(ok, Xbyak::CodeGenerator::T_NEAR); break;
          case CmpKind::kLt: g.jl(ok, Xbyak::CodeGenerator::T_NEAR); break;
          case CmpKind::kLe: g.jle(ok, Xbyak::CodeGenerator::T_NEAR); break;
          case CmpKind::kGt: g.jg(ok, Xbyak::CodeGenerator::T_NEAR); break;
          case CmpKind::kGe: g.jge(ok, Xbyak::CodeGenerator::T_NEAR); break;
          case CmpKind::kLtu: g.jb(ok, Xbyak::CodeGenerator::T_NEAR); break;
          case CmpKind::kLeu: g.jbe(ok, Xbyak::CodeGenerator::T_NEAR); break;
          case CmpKind::kGtu: g.ja(ok, Xbyak::CodeGenerator::T_NEAR); break;
          case CmpKind::kGeu: g.jae(ok, Xbyak::CodeGenerator::T_NEAR); break;
        }
        g.mov(g.rax, g.qword[g.rbx + kRegOffCtxRec]);
        g.mov(g.dword[g.rax + kRecOffAssertPc], i);
        g.mov(g.dword[g.rax + kRecOffAssertFailed], 1);
        g.jmp(assert_trap, Xbyak::CodeGenerator::T_NEAR);
        g.L(ok);
        break;
      }
      case Op::kObserve: {
        static_assert(sizeof(ObservationSlot) == 16 && offsetof(ObservationSlot, value) == 8);
        Xbyak::Label full;
        g.mov(g.rax, g.qword[g.rbx + kRegOffCtxRec]);
        g.mov(g.ecx, g.dword[g.rax + kRecOffNumObserved]);  // zero-extends into rcx
        g.cmp(g.ecx, g.dword[g.rax + kRecOffObsCapacity]);
        g.jae(full, Xbyak::CodeGenerator::T_SHORT);
        g.shl(g.rcx, 4);
        g.add(g.rcx, g.qword[g.rax + kRecOffObsBegin]);
        g.mov(g.dword[g.rcx], in.target);
        g.mov(g.r8, R(in.rs));
        g.mov(g.qword[g.rcx + 8], g.r8);
        g.L(full);
        g.inc(g.dword[g.rax + kRecOffNumObserved]);
        break;
      }
      case Op::kSchedYield:
        g.mov(g.eax, SYS_sched_yield);
        g.syscall();
        break;
      case Op::kSchedSetaffinity: {
        Xbyak::Label call, stay;
        load_arg(in, g.rax);
        g.mov(g.rcx, cpu_mask);
        g.and_(g.rax, g.rcx);
        g.jnz(call, Xbyak::CodeGenerator::T_NEAR);
        g.mov(g.rax, -EINVAL);
        g.jmp(block_label[i + 1], Xbyak::CodeGenerator::T_NEAR);  // to F_{i+1}: r0 := rax
        g.L(call);
        if (opts_.pin_affinity) {
          // rcx := the current CPU (getcpu); keep it if the mask allows it,
          // else the mask's lowest CPU; the syscall gets that single CPU.
          g.push(g.rax);
          getcpu_into(g.ecx);
          g.pop(g.rax);
          g.bt(g.rax, g.rcx);
          g.jc(stay, Xbyak::CodeGenerator::T_SHORT);
          g.bsf(g.rcx, g.rax);
          g.L(stay);
          g.mov(g.eax, 1);
          g.shl(g.rax, g.cl);
        }
        // The mask in the red zone (signal frames are built below it), so
        // that nothing follows the syscall.
        g.mov(g.qword[g.rsp - 8], g.rax);
        g.lea(g.rdx, g.ptr[g.rsp - 8]);
        g.mov(g.esi, 8);
        g.xor_(g.edi, g.edi);
        g.mov(g.eax, SYS_sched_setaffinity);
        g.syscall();
        break;
      }
      case Op::kGetcpu:
        getcpu_into(g.eax);
        store_r0();
        break;
      case Op::kTgkill: {
        Xbyak::Label esrch, go;
        load_arg(in, g.rax);
        g.cmp(g.rax, static_cast<int>(s_.threads.size()));
        g.jae(esrch, Xbyak::CodeGenerator::T_NEAR);  // unsigned: negative indices too
        g.imul(g.rax, g.rax, static_cast<int>(sizeof(ThreadRecord)));
        g.mov(g.rcx, reinterpret_cast<uint64_t>(shared_) + (sizeof(SharedArea) + 63) / 64 * 64);
        g.add(g.rcx, g.rax);
        g.cmp(g.dword[g.rcx + kRecOffExited], 0);
        g.jne(esrch, Xbyak::CodeGenerator::T_NEAR);
        g.mov(g.esi, g.dword[g.rcx + kRecOffTid]);
        g.mov(g.rdi, reinterpret_cast<uint64_t>(&shared_->tgid));
        g.mov(g.edi, g.dword[g.rdi]);
        g.jmp(go, Xbyak::CodeGenerator::T_SHORT);
        g.L(esrch);
        g.mov(g.rax, -ESRCH);
        g.jmp(block_label[i + 1], Xbyak::CodeGenerator::T_NEAR);  // to F_{i+1}: r0 := rax
        g.L(go);
        g.mov(g.edx, static_cast<int>(in.aux));
        g.mov(g.eax, SYS_tgkill);
        g.syscall();
        break;
      }
      case Op::kMembarrierRseq: {
        Xbyak::Label all, go, skip;
        load_arg(in, g.rdx);
        g.test(g.rdx, g.rdx);
        g.js(all, Xbyak::CodeGenerator::T_SHORT);
        g.cmp(g.rdx, static_cast<int>(s_.num_cpus));
        g.jge(skip, Xbyak::CodeGenerator::T_SHORT);  // not a CPU of the scenario: no-op, as the simulator
        g.mov(g.esi, kMembarrierCmdFlagCpu);
        g.jmp(go, Xbyak::CodeGenerator::T_SHORT);
        g.L(all);
        g.xor_(g.esi, g.esi);
        g.xor_(g.edx, g.edx);
        g.jmp(go, Xbyak::CodeGenerator::T_SHORT);
        g.L(skip);
        g.xor_(g.eax, g.eax);
        g.jmp(block_label[i + 1], Xbyak::CodeGenerator::T_NEAR);  // to F_{i+1}: r0 := rax
        g.L(go);
        g.mov(g.edi, kMembarrierCmdPrivateExpeditedRseq);
        g.mov(g.eax, SYS_membarrier);
        g.syscall();
        break;
      }
      case Op::kFutexWait:
      case Op::kFutexWake:
        // futex(addr, FUTEX_WAIT_PRIVATE, expected, NULL) / futex(addr, FUTEX_WAKE_PRIVATE, n): the
        // scenario's data lives at its simulated addresses, so rs holds the real address.
        g.mov(g.rdi, R(in.rs));
        g.mov(g.esi, in.op == Op::kFutexWait ? FUTEX_WAIT_PRIVATE : FUTEX_WAKE_PRIVATE);
        load_b(in, g.rdx);
        g.xor_(g.r10d, g.r10d);
        g.mov(g.eax, SYS_futex);
        g.syscall();
        break;
      case Op::kSleep:
        // nanosleep(&{ns / 1e9, ns % 1e9}, NULL); a negative ns gives an invalid timespec: -EINVAL.
        load_arg(in, g.rax);
        g.cqo();
        g.mov(g.rcx, 1000000000);
        g.idiv(g.rcx);
        // The timespec in the red zone (signal frames are built below it;
        // a restarted nanosleep uses the kernel's restart block, not it).
        g.mov(g.qword[g.rsp - 16], g.rax);
        g.mov(g.qword[g.rsp - 8], g.rdx);
        g.lea(g.rdi, g.ptr[g.rsp - 16]);
        g.xor_(g.esi, g.esi);
        g.mov(g.eax, SYS_nanosleep);
        g.syscall();
        break;
      case Op::kRseqRegister:
      case Op::kRseqUnregister:
        g.xor_(g.eax, g.eax);
        g.putSeg(g.fs);
        g.mov(g.rdi, g.qword[g.rax]);
        g.mov(g.rcx, rseq_off);
        g.add(g.rdi, g.rcx);
        g.mov(g.esi, RseqLength());
        g.mov(g.edx, in.op == Op::kRseqUnregister ? kRseqFlagUnregister : 0);
        g.mov(g.r10d, static_cast<uint32_t>(in.imm));
        g.mov(g.eax, SYS_rseq);
        g.syscall();
        break;
      case Op::kPreemptLock:
      case Op::kSigctxRestart:
        // The preempt-lock scheme (sim/kernel/preempt_lock.h; kernel side:
        // kernel/patches/0005): crosscheck skips such programs before
        // compiling them (its ptrace stops would be switch-outs).
        throw HarnessError(std::string("`") + OpName(in.op) +
                           "` belongs to the preempt-lock scheme, which the harness does not drive "
                           "(sim/kernel/preempt_lock.h; kernel/patches/0005)");
      case Op::kClock:
      case Op::kWork:
        // Simulated-time operations (sim/timed_scheduler.h): the cross-check
        // compares memory and control flow, never time.
        throw HarnessError(std::string("`") + OpName(in.op) +
                           "` is a simulated-time operation (rseqmc simulate); the real-kernel harness does not run it");
      case Op::kRfcRegion: {
        // restartable_sequences(0, 0, start, end, restart) of the 2015 RFC
        // (kernel/patches/0001, x86-64 number 335): the region is the x86
        // range of its IR range [start, end), from the first instruction
        // after the start block's countdown to the end's block; the restart
        // address is the restart label's abort stub, which counts the
        // restart as the simulator does (Machine::RestartTo) and runs on
        // into the label's block.
        const CsDescriptor& d = p.descriptors[in.target];
        g.xor_(g.edi, g.edi);
        g.xor_(g.esi, g.esi);
        g.mov(g.rdx, L[d.start]);
        g.mov(g.r10, block_label[std::min(d.post_commit, n)]);
        g.mov(g.r8, stub_label[d.abort]);
        g.mov(g.eax, kRestartableSequencesX8664);
        g.syscall();
        break;
      }
      case Op::kRfcCpuPtr:
        // restartable_sequences(1, 0, ptr): the data symbols are at the
        // simulator's addresses, so the pointer is the IR value.
        g.mov(g.edi, 1);
        g.xor_(g.esi, g.esi);
        load_arg(in, g.rdx);
        g.mov(g.eax, kRestartableSequencesX8664);
        g.syscall();
        break;
    }
  }
  block_addr_[n] = cur();
  g.L(block_label[n]);
  g.L(L[n]);
  instr_addr_[n] = cur();
  g.int3();  // running past the end of the code (the simulator kills with SIGSEGV)
  g.ud2();
  g.ready(Xbyak::CodeArray::PROTECT_RE);
  code_bytes_ = g.getSize();

  func_addr_.resize(p.functions.size());
  for (size_t f = 0; f < p.functions.size(); ++f) func_addr_[f] = instr_addr_[p.functions[f].first];
  // Original-bytes mode: the imported instructions' addresses are the
  // original ones (their JIT blocks are compiled but never entered).
  for (uint32_t i = 0; i < original_.size(); ++i) {
    if (!original_[i]) continue;
    auto it = s_.original.instr_address.find(i);
    instr_addr_[i] = it == s_.original.instr_address.end() ? 0 : it->second;
  }
  abort_stub_.resize(p.descriptors.size());
  auto* dp = static_cast<char*>(desc_);
  for (size_t d = 0; d < p.descriptors.size(); ++d) {
    const CsDescriptor& cs = p.descriptors[d];
    abort_stub_[d] = stub_addr[cs.abort];
    // start_ip is where the boundary before `start` is: the start of its
    // block (B_start), which holds F_start (the previous syscall's return
    // address) and the abort stub when `start` has them. So a syscall just
    // before `start` returns into the section, as in the simulator, and an
    // abort label equal to `start` is an abort_ip inside the section, which
    // rseq_get_rseq_cs() (kernel/rseq.c) refuses, as the simulator does.
    const uint64_t start = block_addr_[cs.start];
    const uint64_t post = cs.post_commit >= n ? block_addr_[n] : block_addr_[cs.post_commit];
    uint32_t version = cs.version, flags = cs.flags;
    uint64_t off = post >= start ? post - start : 0;
    std::memcpy(dp + d * kRseqCsBytes + 0, &version, 4);
    std::memcpy(dp + d * kRseqCsBytes + 4, &flags, 4);
    std::memcpy(dp + d * kRseqCsBytes + 8, &start, 8);
    std::memcpy(dp + d * kRseqCsBytes + 16, &off, 8);
    std::memcpy(dp + d * kRseqCsBytes + 24, &abort_stub_[d], 8);
  }
  if (mprotect(desc_, desc_bytes_, PROT_READ) != 0) {
    throw HarnessError(std::string("mprotect of the descriptors failed: ") + std::strerror(errno));
  }
  // W^X: the code was written RW; from now on it is RX only.
  if (mprotect(code_, code_map_bytes_, PROT_READ | PROT_EXEC) != 0) {
    throw HarnessError(std::string("mprotect of the JIT code failed: ") + std::strerror(errno));
  }
}

std::string JitProgram::Listing() const {
  std::ostringstream o;
  for (uint32_t i = 0; i < s_.program.code.size(); ++i) {
    o << s_.program.DescribeIndex(i) << ": L=0x" << std::hex << instr_addr_[i] << " block=[0x" << block_addr_[i]
      << ",0x" << block_addr_[i + 1] << ")" << std::dec << "\n";
  }
  return o.str();
}

}  // namespace rseqmc::harness
