// Program/scenario helpers: lookups, names, equality ignoring source positions,
// and the data layout.
#include "sim/ir.h"

#include <algorithm>
#include <cstdio>
#include <cstring>

#include "sim/builder.h"
#include "sim/scenario.h"

namespace rseqmc {

bool operator==(const Instr& a, const Instr& b) {
  return a.op == b.op && a.rd == b.rd && a.rs == b.rs && a.rt == b.rt && a.ru == b.ru && a.scale == b.scale &&
         a.use_imm == b.use_imm && a.has_index == b.has_index && a.aux == b.aux && a.imm == b.imm &&
         a.target == b.target;
}

bool operator==(const CsDescriptor& a, const CsDescriptor& b) {
  return a.name == b.name && a.function == b.function && a.start == b.start && a.post_commit == b.post_commit &&
         a.abort == b.abort && a.version == b.version && a.flags == b.flags && a.unchecked == b.unchecked &&
         a.region == b.region;
}

bool operator==(const Function& a, const Function& b) {
  return a.name == b.name && a.first == b.first && a.count == b.count && a.labels == b.labels;
}

bool operator==(const Symbol& a, const Symbol& b) {
  return a.name == b.name && a.width == b.width && a.count == b.count && a.per_cpu == b.per_cpu &&
         a.stride == b.stride && a.init == b.init;
}

bool operator==(const Expr& a, const Expr& b) {
  return a.kind == b.kind && a.value == b.value && a.name == b.name && a.op == b.op && a.args == b.args;
}

namespace {
template <typename T>
int FindByName(const std::vector<T>& v, const std::string& name) {
  for (size_t i = 0; i < v.size(); ++i) {
    if (v[i].name == name) return static_cast<int>(i);
  }
  return -1;
}
}  // namespace

int Program::FindFunction(const std::string& name) const { return FindByName(functions, name); }
int Program::FindSymbol(const std::string& name) const { return FindByName(symbols, name); }
int Program::FindDescriptor(const std::string& name) const { return FindByName(descriptors, name); }

int Program::FunctionOf(uint32_t i) const {
  for (size_t f = 0; f < functions.size(); ++f) {
    if (i >= functions[f].first && i < functions[f].first + functions[f].count) return static_cast<int>(f);
  }
  return -1;
}

std::string Program::DescribeIndex(uint32_t i) const {
  int f = FunctionOf(i);
  if (f < 0) return "?" + std::to_string(i);
  const Function& fn = functions[f];
  // Nearest label at or before i.
  const Label* best = nullptr;
  for (const Label& l : fn.labels) {
    if (l.index <= i && (best == nullptr || l.index > best->index)) best = &l;
  }
  std::string s = fn.name;
  if (best != nullptr) {
    s += ":" + best->name;
    if (i != best->index) s += "+" + std::to_string(i - best->index);
  } else if (i != fn.first) {
    s += "+" + std::to_string(i - fn.first);
  }
  return s;
}

const char* OpName(Op op) {
  switch (op) {
    case Op::kLi: return "li";
    case Op::kMov: return "mov";
    case Op::kAdd: return "add";
    case Op::kSub: return "sub";
    case Op::kAnd: return "and";
    case Op::kOr: return "or";
    case Op::kXor: return "xor";
    case Op::kShl: return "shl";
    case Op::kShr: return "shr";
    case Op::kMul: return "mul";
    case Op::kLa: return "la";
    case Op::kLd: return "ld";
    case Op::kLd32: return "ld32";
    case Op::kSt: return "st";
    case Op::kSt32: return "st32";
    case Op::kBeq: return "beq";
    case Op::kBne: return "bne";
    case Op::kBlt: return "blt";
    case Op::kBge: return "bge";
    case Op::kBltu: return "bltu";
    case Op::kBgeu: return "bgeu";
    case Op::kJmp: return "jmp";
    case Op::kCall: return "call";
    case Op::kRet: return "ret";
    case Op::kRseqLoad: return "rseq_load";
    case Op::kRseqAddr: return "rseq_addr";
    case Op::kRseqArm: return "rseq_arm";
    case Op::kSig: return "sig";
    case Op::kCas: return "cas";
    case Op::kXadd: return "xadd";
    case Op::kXchg: return "xchg";
    case Op::kFence: return "fence";
    case Op::kSchedYield: return "sched_yield";
    case Op::kSchedSetaffinity: return "sched_setaffinity";
    case Op::kGetcpu: return "getcpu";
    case Op::kTgkill: return "tgkill";
    case Op::kMembarrierRseq: return "membarrier_rseq";
    case Op::kFutexWait: return "futex_wait";
    case Op::kFutexWake: return "futex_wake";
    case Op::kSleep: return "sleep";
    case Op::kRfcRegion: return "rfc_region";
    case Op::kRfcCpuPtr: return "rfc_cpu_ptr";
    case Op::kClock: return "clock";
    case Op::kWork: return "work";
    case Op::kPreemptLock: return "preempt_lock";
    case Op::kSigctxRestart: return "sigctx_restart";
    case Op::kRseqRegister: return "rseq_register";
    case Op::kRseqUnregister: return "rseq_unregister";
    case Op::kAssert: return "assert";
    case Op::kObserve: return "observe";
    case Op::kNop: return "nop";
  }
  return "?";
}

const char* RseqFieldName(RseqField f) {
  switch (f) {
    case RseqField::kCpuIdStart: return "cpu_id_start";
    case RseqField::kCpuId: return "cpu_id";
    case RseqField::kNodeId: return "node_id";
    case RseqField::kMmCid: return "mm_cid";
    case RseqField::kFlags: return "flags";
  }
  return "?";
}

const char* CmpName(CmpKind c) {
  switch (c) {
    case CmpKind::kEq: return "==";
    case CmpKind::kNe: return "!=";
    case CmpKind::kLt: return "<";
    case CmpKind::kLe: return "<=";
    case CmpKind::kGt: return ">";
    case CmpKind::kGe: return ">=";
    case CmpKind::kLtu: return "<u";
    case CmpKind::kLeu: return "<=u";
    case CmpKind::kGtu: return ">u";
    case CmpKind::kGeu: return ">=u";
  }
  return "?";
}

void WriteSymbolImage(const Program& p, uint32_t num_cpus, uint8_t* image) {
  for (const Symbol& sym : p.symbols) {
    const uint32_t blocks = sym.per_cpu ? num_cpus : 1;
    for (uint32_t c = 0; c < blocks; ++c) {
      for (uint32_t i = 0; i < sym.count; ++i) {
        const int64_t v = sym.init.empty() ? 0 : (i < sym.init.size() ? sym.init[i] : sym.init.back());
        const uint64_t addr = sym.address + c * sym.stride + i * static_cast<uint64_t>(sym.width);
        std::memcpy(image + (addr - kDataBase), &v, static_cast<size_t>(sym.width));
      }
    }
  }
}

uint64_t DescriptorAddress(const Program& p, uint32_t d) {
  uint64_t end = kDataBase;
  for (const Symbol& sym : p.symbols) end = std::max(end, sym.address + (sym.size_bytes + 63) / 64 * 64);
  return (end + 31) / 32 * 32 + kRseqCsBytes * d;
}

void LayoutProgram(Program& p, uint32_t num_cpus) {
  uint64_t addr = kDataBase;
  for (Symbol& s : p.symbols) {
    uint64_t block = static_cast<uint64_t>(s.count) * static_cast<uint64_t>(s.width);
    if (s.per_cpu) {
      if (s.stride == 0) s.stride = std::max<uint64_t>(64, (block + 63) / 64 * 64);
      s.size_bytes = s.stride * num_cpus;
    } else {
      s.size_bytes = block;
    }
    s.address = addr;
    addr += (s.size_bytes + 63) / 64 * 64;
  }
}

const SignalSpec* Scenario::FindSignal(int signo) const {
  for (const SignalSpec& s : signals) {
    if (s.signo == signo) return &s;
  }
  return nullptr;
}
int Scenario::FindThread(const std::string& n) const { return FindByName(threads, n); }
int Scenario::FindConstant(const std::string& n) const { return FindByName(constants, n); }

namespace {
struct SigName {
  int no;
  const char* name;
};
constexpr SigName kSignals[] = {
    {1, "SIGHUP"},   {2, "SIGINT"},   {3, "SIGQUIT"},  {4, "SIGILL"},    {5, "SIGTRAP"},   {6, "SIGABRT"},
    {7, "SIGBUS"},   {8, "SIGFPE"},   {9, "SIGKILL"},  {10, "SIGUSR1"},  {11, "SIGSEGV"},  {12, "SIGUSR2"},
    {13, "SIGPIPE"}, {14, "SIGALRM"}, {15, "SIGTERM"}, {16, "SIGSTKFLT"}, {17, "SIGCHLD"}, {18, "SIGCONT"},
    {19, "SIGSTOP"}, {20, "SIGTSTP"}, {21, "SIGTTIN"}, {22, "SIGTTOU"},  {23, "SIGURG"},   {24, "SIGXCPU"},
    {25, "SIGXFSZ"}, {26, "SIGVTALRM"}, {27, "SIGPROF"}, {28, "SIGWINCH"}, {29, "SIGIO"}, {30, "SIGPWR"},
    {31, "SIGSYS"},
};
}  // namespace

int SignalNumber(const std::string& name) {
  for (const SigName& s : kSignals) {
    if (name == s.name) return s.no;
  }
  return -1;
}

std::string SignalName(int signo) {
  for (const SigName& s : kSignals) {
    if (signo == s.no) return s.name;
  }
  return "SIG" + std::to_string(signo);
}

const char* VerdictName(Verdict v) {
  switch (v) {
    case Verdict::kPass: return "pass";
    case Verdict::kPropertyFailed: return "property";
    case Verdict::kAssertFailed: return "assert";
    case Verdict::kSigsegv: return "sigsegv";
    case Verdict::kKilled: return "killed";
    case Verdict::kDeadlock: return "deadlock";
    case Verdict::kStepLimit: return "steplimit";
    case Verdict::kLivelock: return "livelock";
  }
  return "?";
}

}  // namespace rseqmc
