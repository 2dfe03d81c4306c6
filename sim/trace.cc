// Rendering of one execution: the per-CPU timeline, the final symbols and the
// one-line JSON form (see sim/trace.h).
//
// sim/ must not depend on scenarios/, so instruction text is rendered here from
// the IR (OpName + operands) rather than with the scenario printer; it reads like
// the .rsq syntax of scenarios/README.md.
#include "sim/trace.h"

#include <algorithm>
#include <cinttypes>
#include <cstdint>
#include <cstdio>
#include <map>
#include <ostream>
#include <sstream>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "sim/builder.h"
#include "sim/ir.h"
#include "sim/kernel_model.h"
#include "sim/scenario.h"
#include "sim/schedule.h"
#include "sim/simulator.h"

namespace rseqmc {

const char* TraceKindName(TraceKind k) {
  switch (k) {
    case TraceKind::kStep: return "step";
    case TraceKind::kSwitchIn: return "switch_in";
    case TraceKind::kPreempt: return "preempt";
    case TraceKind::kYield: return "yield";
    case TraceKind::kMigrate: return "migrate";
    case TraceKind::kSignal: return "signal";
    case TraceKind::kSignalFrame: return "signal_frame";
    case TraceKind::kSigreturn: return "sigreturn";
    case TraceKind::kIpi: return "ipi";
    case TraceKind::kAbort: return "abort";
    case TraceKind::kLazyClear: return "lazy_clear";
    case TraceKind::kIdUpdate: return "id_update";
    case TraceKind::kExit: return "exit";
    case TraceKind::kKill: return "kill";
    case TraceKind::kAssertFail: return "assert_fail";
    case TraceKind::kObserve: return "observe";
    case TraceKind::kBlock: return "block";
    case TraceKind::kWake: return "wake";
    case TraceKind::kDeadlock: return "deadlock";
  }
  return "unknown";
}

void Trace::push_back(const TraceEntry& e) {
  if (size_ % kChunkEntries == 0) {
    chunks_.emplace_back();
    chunks_.back().base_step = e.step;
    chunks_.back().entries.reserve(kChunkEntries);
  }
  Chunk& c = chunks_.back();
  const bool near = e.step >= c.base_step && e.step - c.base_step <= UINT32_MAX;
  const bool wide = e.a != 0 || e.b != 0 || !near;
  const bool detail = !e.detail.empty();
  Packed p{};
  p.step_delta = wide ? 0 : static_cast<uint32_t>(e.step - c.base_step);
  p.pc = e.pc;
  p.thread = e.thread;
  p.cpu = e.cpu;
  p.depth = e.depth;
  p.kind_flags = static_cast<uint8_t>(static_cast<uint8_t>(e.kind) | (detail ? kHasDetail : 0) | (wide ? kHasWide : 0));
  if (wide) {
    p.wide = static_cast<uint16_t>(c.wide.size());
    c.wide.push_back({e.step, e.a, e.b});
  }
  c.entries.push_back(p);
  if (detail) details_.emplace_back(size_, e.detail);
  ++size_;
}

TraceEntry Trace::operator[](size_t i) const {
  const Chunk& c = chunks_[i >> kChunkBits];
  const Packed& p = c.entries[i & (kChunkEntries - 1)];
  TraceEntry e;
  e.kind = static_cast<TraceKind>(p.kind_flags & kKindMask);
  e.cpu = p.cpu;
  e.thread = p.thread;
  e.depth = p.depth;
  e.pc = p.pc;
  if (p.kind_flags & kHasWide) {
    const Wide& w = c.wide[p.wide];
    e.step = w.step;
    e.a = w.a;
    e.b = w.b;
  } else {
    e.step = c.base_step + p.step_delta;
  }
  if (p.kind_flags & kHasDetail) {
    auto it = std::lower_bound(details_.begin(), details_.end(), i,
                               [](const std::pair<size_t, std::string>& d, size_t at) { return d.first < at; });
    if (it != details_.end() && it->first == i) e.detail = it->second;
  }
  return e;
}

void Trace::resize(size_t n) {
  if (n >= size_) return;
  chunks_.resize((n + kChunkEntries - 1) >> kChunkBits);
  if (!chunks_.empty()) {
    Chunk& c = chunks_.back();
    c.entries.resize(n - ((chunks_.size() - 1) << kChunkBits));
    size_t wide = 0;  // Chunk::wide entries the kept entries use
    for (const Packed& p : c.entries) {
      if (p.kind_flags & kHasWide) wide = p.wide + size_t{1};
    }
    c.wide.resize(wide);
  }
  size_ = n;
  while (!details_.empty() && details_.back().first >= n) details_.pop_back();
}

size_t Trace::bytes() const {
  size_t b = chunks_.capacity() * sizeof(Chunk) + details_.capacity() * sizeof(details_[0]);
  for (const Chunk& c : chunks_) b += c.entries.capacity() * sizeof(Packed) + c.wide.capacity() * sizeof(Wide);
  for (const auto& d : details_) b += d.second.capacity();
  return b;
}

namespace {

// Two entries that draw alike and leave the same state: the same thread does
// the same thing at the same pc (a store or observation of the same value);
// the step count and, for other kinds, the payload (a sleep's deadline) may
// differ.
bool SameShape(const TraceEntry& x, const TraceEntry& y) {
  if (x.kind != y.kind || x.cpu != y.cpu || x.thread != y.thread || x.depth != y.depth || x.pc != y.pc) return false;
  if (x.kind == TraceKind::kStep || x.kind == TraceKind::kObserve) return x.a == y.a && x.b == y.b;
  return true;
}

// A maximal run: entries [start, start + len) each the same shape as the one
// `period` before, so entries [start - period, start + len) repeat a round.
struct RepeatRun {
  size_t start = 0, len = 0, period = 0;
  size_t round_start() const { return start - period; }
};

// Every maximal run longer than kTraceRepeatMinLength, for each period, in
// one pass over the trace holding the last kTraceRepeatMaxPeriod entries.
std::vector<RepeatRun> LongRuns(const Trace& trace) {
  constexpr size_t kRing = kTraceRepeatMaxPeriod + 1;
  std::vector<TraceEntry> ring(kRing);
  std::vector<size_t> len(kRing, 0);  // len[p]: run of period p ending just before entry j
  std::vector<RepeatRun> runs;
  const size_t n = trace.size();
  auto close = [&](size_t p, size_t end) {
    if (len[p] > kTraceRepeatMinLength) runs.push_back({end - len[p], len[p], p});
    len[p] = 0;
  };
  for (size_t j = 0; j < n; ++j) {
    TraceEntry e = trace[j];
    for (size_t p = 1; p <= kTraceRepeatMaxPeriod && p <= j; ++p) {
      if (SameShape(e, ring[(j - p) % kRing])) {
        ++len[p];
      } else {
        close(p, j);
      }
    }
    ring[j % kRing] = std::move(e);
  }
  for (size_t p = 1; p <= kTraceRepeatMaxPeriod; ++p) close(p, n);
  return runs;
}

}  // namespace

std::vector<TraceRepeat> FindRepeats(const Trace& trace) {
  if (trace.size() <= kTraceRepeatMinLength) return {};
  std::vector<RepeatRun> runs = LongRuns(trace);
  // The earliest round first; of two starting together, the longest (a run of
  // period p is also one of 2p, p entries shorter).
  std::sort(runs.begin(), runs.end(), [](const RepeatRun& x, const RepeatRun& y) {
    return x.round_start() != y.round_start() ? x.round_start() < y.round_start() : x.len > y.len;
  });
  std::vector<TraceRepeat> out;
  size_t next = 0;  // entries before it are kept or already left out
  for (RepeatRun r : runs) {
    if (r.round_start() < next) {  // overlaps what came before: what is left of it
      const size_t start = next + r.period;
      if (start >= r.start + r.len) continue;
      r.len -= start - r.start;
      r.start = start;
    }
    if (r.len <= kTraceRepeatMinLength) continue;
    // Rounds of the run: keep two, then leave out whole rounds, keeping the last.
    const size_t end = r.start + r.len;
    const size_t first = r.round_start() + 2 * r.period;
    if (end < first + r.period) continue;
    const size_t count = (end - r.period - first) / r.period * r.period;
    if (count == 0) continue;
    out.push_back({first, count, r.period});
    next = first + count;
  }
  return out;
}

namespace {

std::string Dec(int64_t v) { return std::to_string(v); }

std::string Hex(uint64_t v) {
  char buf[24];
  std::snprintf(buf, sizeof buf, "0x%" PRIx64, v);
  return buf;
}

std::string Reg(unsigned r) { return "r" + std::to_string(r); }

// ---- names of program objects, tolerant of out-of-range indices ----

std::string ThreadName(const Scenario& s, int t) {
  if (t < 0) return "-";
  if (static_cast<size_t>(t) < s.threads.size()) return s.threads[t].name;
  return "t?" + std::to_string(t);
}

// "t0" for a thread's main context, "t0/h1" inside its first signal handler.
std::string ThreadTag(const Scenario& s, int t, int depth) {
  std::string tag = ThreadName(s, t);
  if (depth > 0) tag += "/h" + std::to_string(depth);
  return tag;
}

std::string Where(const Program& p, int64_t index) {
  if (index >= 0 && static_cast<uint64_t>(index) < p.code.size()) {
    return p.DescribeIndex(static_cast<uint32_t>(index));
  }
  if (index == 0xFFFFFFFFll) return "native";
  return "@" + Dec(index);
}

std::string DescriptorName(const Program& p, int64_t d) {
  if (d >= 0 && static_cast<uint64_t>(d) < p.descriptors.size()) return p.descriptors[d].name;
  return "cs#" + Dec(d);
}

std::string StringAt(const Program& p, int64_t i) {
  if (i >= 0 && static_cast<uint64_t>(i) < p.strings.size()) return p.strings[i];
  return "str#" + Dec(i);
}

// A branch target: the bare label when it is a label of the branching
// function, else the program-wide description.
std::string Target(const Program& p, uint32_t from, uint32_t target) {
  int f = p.FunctionOf(target);
  if (f >= 0 && f == p.FunctionOf(from)) {
    for (const Label& l : p.functions[f].labels) {
      if (l.index == target) return l.name;
    }
  }
  return Where(p, target);
}

std::string MemOperand(const Instr& in) {
  std::string m = "[" + Reg(in.rs);
  if (in.has_index) m += " + " + Reg(in.ru) + "*" + std::to_string(in.scale);
  if (in.imm > 0) m += " + " + Dec(in.imm);
  if (in.imm < 0) m += " - " + std::to_string(0 - static_cast<uint64_t>(in.imm));
  return m + "]";
}

std::string SecondOperand(const Instr& in) { return in.use_imm ? Dec(in.imm) : Reg(in.rt); }

// The instruction at global index i in the syntax of scenarios/README.md.
std::string InstrText(const Scenario& s, uint32_t i) {
  const Program& p = s.program;
  if (i >= p.code.size()) return "";
  const Instr& in = p.code[i];
  std::string t = OpName(in.op);
  switch (in.op) {
    case Op::kLi: return t + " " + Reg(in.rd) + ", " + Dec(in.imm);
    case Op::kMov: return t + " " + Reg(in.rd) + ", " + Reg(in.rs);
    case Op::kAdd: case Op::kSub: case Op::kAnd: case Op::kOr:
    case Op::kXor: case Op::kShl: case Op::kShr: case Op::kMul:
      return t + " " + Reg(in.rd) + ", " + Reg(in.rs) + ", " + SecondOperand(in);
    case Op::kLa: {
      std::string sym = in.target < p.symbols.size() ? p.symbols[in.target].name : "sym#" + Dec(in.target);
      if (in.imm > 0) sym += " + " + Dec(in.imm);
      if (in.imm < 0) sym += " - " + std::to_string(0 - static_cast<uint64_t>(in.imm));
      return t + " " + Reg(in.rd) + ", " + sym;
    }
    case Op::kLd: case Op::kLd32: return t + " " + Reg(in.rd) + ", " + MemOperand(in);
    case Op::kSt: case Op::kSt32: return t + " " + MemOperand(in) + ", " + Reg(in.rt);
    case Op::kBeq: case Op::kBne: case Op::kBlt: case Op::kBge: case Op::kBltu: case Op::kBgeu:
      return t + " " + Reg(in.rs) + ", " + SecondOperand(in) + ", " + Target(p, i, in.target);
    case Op::kJmp: return t + " " + Target(p, i, in.target);
    case Op::kCall:
      return t + " " + (in.target < p.functions.size() ? p.functions[in.target].name : "func#" + Dec(in.target));
    case Op::kRseqLoad:
      return t + " " + Reg(in.rd) + ", " + RseqFieldName(static_cast<RseqField>(in.aux));
    case Op::kRseqAddr: return t + " " + Reg(in.rd);
    case Op::kRseqArm: return t + " " + DescriptorName(p, in.target);
    case Op::kSig: case Op::kRseqRegister: case Op::kRseqUnregister:
      return t + " " + Hex(static_cast<uint32_t>(in.imm));
    case Op::kCas:
      return t + " " + Reg(in.rd) + ", " + MemOperand(in) + ", " + Reg(in.rt) + ", " + Reg(in.ru);
    case Op::kXadd: case Op::kXchg: return t + " " + Reg(in.rd) + ", " + MemOperand(in) + ", " + Reg(in.rt);
    case Op::kSchedSetaffinity: return t + " " + (in.use_imm ? Hex(static_cast<uint64_t>(in.imm)) : Reg(in.rs));
    case Op::kTgkill:
      return t + " " + (in.use_imm ? ThreadName(s, static_cast<int>(in.imm)) : Reg(in.rs)) + ", " +
             (in.aux == 0 ? std::string("0") : SignalName(in.aux));  // 0: the existence probe
    case Op::kRfcRegion: case Op::kSigctxRestart: return t + " " + DescriptorName(p, in.target);
    case Op::kPreemptLock:
      return t + " " + (in.use_imm ? Hex(static_cast<uint64_t>(in.imm)) : Reg(in.rs)) + ", " + SignalName(in.aux);
    case Op::kRfcCpuPtr: return t + " " + (in.use_imm ? Hex(static_cast<uint64_t>(in.imm)) : Reg(in.rs));
    case Op::kMembarrierRseq: case Op::kSleep: case Op::kWork: return t + " " + (in.use_imm ? Dec(in.imm) : Reg(in.rs));
    case Op::kFutexWait: case Op::kFutexWake: return t + " " + Reg(in.rs) + ", " + SecondOperand(in);
    case Op::kAssert: {
      std::string a = t + " " + Reg(in.rs) + " " + CmpName(static_cast<CmpKind>(in.aux)) + " " + SecondOperand(in);
      if (in.target < p.strings.size() && !p.strings[in.target].empty()) a += ", \"" + p.strings[in.target] + "\"";
      return a;
    }
    case Op::kObserve: return t + " " + StringAt(p, in.target) + ", " + Reg(in.rs);
    case Op::kRet: case Op::kFence: case Op::kSchedYield: case Op::kGetcpu: case Op::kClock: case Op::kNop:
      return t;
  }
  return t;
}

// ---- data symbols ----

// Element stride of a symbol's CPU blocks (0 for plain symbols).
uint64_t CpuStride(const Symbol& sym) { return sym.per_cpu ? sym.stride : 0; }

uint64_t ElementAddress(const Symbol& sym, uint32_t cpu, uint32_t i) {
  return sym.address + CpuStride(sym) * cpu + static_cast<uint64_t>(i) * static_cast<int>(sym.width);
}

// Signed value of a u64 element; zero-extended value of a u32 element.
int64_t ElementValue(const ExecutionResult& r, const Symbol& sym, uint32_t cpu, uint32_t i) {
  int bytes = static_cast<int>(sym.width);
  return static_cast<int64_t>(r.Read(ElementAddress(sym, cpu, i), bytes));
}

// "counter[1]", "nodes[3]", "slots[0][2]", "x" (+ byte offset when unaligned)
// for an address inside a symbol; "" when it is in none.
std::string SymbolAt(const Scenario& s, uint64_t addr) {
  for (const Symbol& sym : s.program.symbols) {
    if (addr < sym.address || addr - sym.address >= sym.size_bytes) continue;
    uint64_t off = addr - sym.address;
    const uint64_t width = static_cast<uint64_t>(sym.width);
    std::string name = sym.name;
    if (sym.per_cpu && sym.stride > 0) {
      name += "[" + std::to_string(off / sym.stride) + "]";
      off %= sym.stride;
      if (off >= sym.count * width) return name + "+" + std::to_string(off);  // padding
      if (sym.count > 1) name += "[" + std::to_string(off / width) + "]";
    } else if (sym.count > 1) {
      name += "[" + std::to_string(off / width) + "]";
    }
    if (off % width != 0) name += "+" + std::to_string(off % width);
    return name;
  }
  return "";
}

// A value for people: decimal, and for what looks like a pointer into a
// symbol, the hex address and what it points to.
std::string ValueText(const Scenario& s, int64_t v) {
  std::string at = v >= static_cast<int64_t>(kDataBase) ? SymbolAt(s, static_cast<uint64_t>(v)) : "";
  if (at.empty()) return Dec(v);
  return Hex(static_cast<uint64_t>(v)) + " (&" + at + ")";
}

// Appends "name[range] = value" lines for `n` values, folding runs of at least
// four equal values into one "name[a..b] = v" line.
void AppendRuns(const Scenario& s, const std::string& prefix, const std::vector<int64_t>& values, std::string& out) {
  size_t i = 0;
  while (i < values.size()) {
    size_t j = i;
    while (j + 1 < values.size() && values[j + 1] == values[i]) ++j;
    if (j - i + 1 >= 4) {
      out += prefix + "[" + std::to_string(i) + ".." + std::to_string(j) + "] = " + ValueText(s, values[i]) + "\n";
    } else {
      for (size_t k = i; k <= j; ++k) out += prefix + "[" + std::to_string(k) + "] = " + ValueText(s, values[k]) + "\n";
    }
    i = j + 1;
  }
}

std::vector<int64_t> Elements(const ExecutionResult& r, const Symbol& sym, uint32_t cpu) {
  std::vector<int64_t> v(sym.count);
  for (uint32_t i = 0; i < sym.count; ++i) v[i] = ElementValue(r, sym, cpu, i);
  return v;
}

// ---- timeline cells ----

constexpr uint32_t kNoPc = 0xFFFFFFFFu;

std::string Cell(const Scenario& s, const TraceEntry& e) {
  const Program& p = s.program;
  const std::string who = ThreadTag(s, e.thread, e.depth);
  switch (e.kind) {
    case TraceKind::kStep: {
      std::string c = who + " " + Where(p, e.pc) + " " + InstrText(s, e.pc);
      // The store of rseq_arm (to the thread's struct rseq) is its own text.
      const bool arm = e.pc < p.code.size() && p.code[e.pc].op == Op::kRseqArm;
      if (e.a != 0 && !arm) {
        std::string at = SymbolAt(s, static_cast<uint64_t>(e.a));
        c += " => " + (at.empty() ? Hex(static_cast<uint64_t>(e.a)) : at) + "=" + ValueText(s, e.b);
      }
      return c;
    }
    case TraceKind::kSwitchIn:
      return ">> " + who + " switched in (was " + (e.a < 0 ? std::string("idle") : ThreadName(s, e.a)) + ")";
    case TraceKind::kPreempt:
      return "** PREEMPT " + who + " -> " + (e.a < 0 ? std::string("queue head") : ThreadName(s, e.a));
    case TraceKind::kYield:
      return "<< " + who + " sched_yield -> " + (e.a < 0 ? std::string("idle") : ThreadName(s, e.a));
    case TraceKind::kMigrate:
      return "** MIGRATE " + who + " cpu" + Dec(e.cpu) + " -> cpu" + Dec(e.a);
    case TraceKind::kSignal:
      return "** SIGNAL " + SignalName(static_cast<int>(e.a)) + " -> " + who + " (pending)";
    case TraceKind::kSignalFrame:
      return ">> " + who + " handler frame " + SignalName(static_cast<int>(e.a)) + " (interrupted at " +
             Where(p, e.b) + ")";
    case TraceKind::kSigreturn:
      return "<< " + who + " sigreturn -> " + Where(p, e.b);
    case TraceKind::kIpi:
      return "** IPI membarrier-rseq (" + (e.thread < 0 ? std::string("idle") : who) + ")";
    case TraceKind::kAbort:
      return "!! ABORT " + who + " " + Where(p, e.pc) + " -> " + Where(p, e.a) + " (" + DescriptorName(p, e.b) + ")";
    case TraceKind::kLazyClear:
      return "   " + who + " rseq_cs := 0 (ip " + Where(p, e.pc) + " outside " +
             (e.b < 0 ? std::string("the section") : DescriptorName(p, e.b)) + ")";
    case TraceKind::kIdUpdate:
      return "   " + who + " ids: cpu_id=" + Dec(e.a) + " mm_cid=" + Dec(e.b);
    case TraceKind::kExit:
      return "-- " + who + " EXIT ret=" + ValueText(s, e.a);
    case TraceKind::kKill:
      return "XX KILLED by " + SignalName(static_cast<int>(e.a)) + " (" + who + " on cpu" + Dec(e.cpu) + ")" +
             (e.detail.empty() ? "" : ": " + e.detail);
    case TraceKind::kAssertFail:
      return "XX ASSERT FAILED " + who + " on cpu" + Dec(e.cpu) + " at " + Where(p, e.pc) +
             (e.detail.empty() ? "" : ": " + e.detail);
    case TraceKind::kObserve:
      return "   " + who + " observe " + StringAt(p, e.a) + "=" + ValueText(s, e.b);
    case TraceKind::kBlock: {
      if (e.a == 0) return "zz " + who + " sleeps until t=" + Dec(e.b) + "ns";
      const std::string at = SymbolAt(s, static_cast<uint64_t>(e.a));
      return "zz " + who + " FUTEX_WAIT " + (at.empty() ? Hex(static_cast<uint64_t>(e.a)) : at) + " (blocked)";
    }
    case TraceKind::kWake:
      return "^^ " + who + " woken by " +
             (e.a >= 0 ? ThreadName(s, e.a) : std::string(e.b != 0 ? "a signal" : "the clock")) + " (r0=" + Dec(e.b) +
             ")";
    case TraceKind::kDeadlock:
      return "XX DEADLOCK: " + e.detail;
  }
  return who + " " + TraceKindName(e.kind);
}

// Rows written across the lanes, untruncated: entries tied to no CPU, and
// the failures (whose reason must be readable in full).
bool SpansLanes(const TraceEntry& e, int ncpus) {
  return e.cpu < 0 || e.cpu >= ncpus || e.kind == TraceKind::kKill || e.kind == TraceKind::kAssertFail ||
         e.kind == TraceKind::kDeadlock;
}

std::string Fit(const std::string& text, size_t width) {
  if (text.size() <= width) return text + std::string(width - text.size(), ' ');
  return text.substr(0, width - 2) + "..";
}

std::string ExpectedText(Verdict v) {
  return v == Verdict::kPass ? "pass" : std::string("fail ") + VerdictName(v);
}

// ---- JSON ----

// Appends one JSON document to a string; separators are inserted as needed.
// Flush() moves what was written so far to the sink (a long trace is written
// in pieces, never held whole).
class JsonWriter {
 public:
  explicit JsonWriter(std::ostream* sink) : sink_(sink) {}
  JsonWriter& Open(char bracket) {  // '{' or '['
    Separate();
    Put(bracket);
    return *this;
  }
  JsonWriter& Close(char bracket) {
    Put(bracket);
    return *this;
  }
  JsonWriter& Key(std::string_view key) {
    Separate();
    Quote(key);
    Put(':');
    after_key_ = true;
    return *this;
  }
  JsonWriter& Str(std::string_view v) {
    Separate();
    Quote(v);
    return *this;
  }
  JsonWriter& Int(int64_t v) {
    Separate();
    out_ += std::to_string(v);
    last_ = out_.back();
    return *this;
  }
  JsonWriter& Bool(bool v) {
    Separate();
    out_ += v ? "true" : "false";
    last_ = 'e';
    return *this;
  }
  JsonWriter& Ints(const std::vector<int64_t>& values) {
    Open('[');
    for (int64_t v : values) Int(v);
    return Close(']');
  }
  JsonWriter& Field(std::string_view key, std::string_view v) { return Key(key).Str(v); }
  JsonWriter& Field(std::string_view key, int64_t v) { return Key(key).Int(v); }
  // Writes the text so far to the sink once it holds more than `above` bytes.
  void Flush(size_t above = 0) {
    if (sink_ == nullptr || out_.size() <= above) return;
    sink_->write(out_.data(), static_cast<std::streamsize>(out_.size()));
    out_.clear();
  }

 private:
  void Put(char c) {
    out_ += c;
    last_ = c;
  }
  void Separate() {
    if (after_key_) {
      after_key_ = false;
    } else if (last_ != '\0' && last_ != '{' && last_ != '[') {
      Put(',');
    }
  }
  void Quote(std::string_view v) {
    out_ += JsonQuote(v);
    last_ = '"';
  }
  std::ostream* sink_;
  std::string out_;
  char last_ = '\0';  // the last character written, flushed or not
  bool after_key_ = false;
};

// Every symbol's values in `r`: scalar -> number, array -> [..], per-CPU
// scalar -> [per cpu], per-CPU array -> [[cpu 0 elements], ...].
void WriteSymbolValues(const Scenario& s, const ExecutionResult& r, JsonWriter& w) {
  w.Open('{');
  for (const Symbol& sym : s.program.symbols) {
    w.Key(sym.name);
    if (!sym.per_cpu) {
      if (sym.count == 1) {
        w.Int(ElementValue(r, sym, 0, 0));
      } else {
        w.Ints(Elements(r, sym, 0));
      }
    } else if (sym.count == 1) {
      std::vector<int64_t> per_cpu(s.num_cpus);
      for (uint32_t c = 0; c < s.num_cpus; ++c) per_cpu[c] = ElementValue(r, sym, c, 0);
      w.Ints(per_cpu);
    } else {
      w.Open('[');
      for (uint32_t c = 0; c < s.num_cpus; ++c) w.Ints(Elements(r, sym, c));
      w.Close(']');
    }
  }
  w.Close('}');
}

// The program as the viewer draws it: the data layout with initial values
// (so a reader can replay the trace's stores over them), the code listing and
// the critical-section descriptors (docs/trace-schema.md).
void WriteProgram(const Scenario& s, JsonWriter& w) {
  const Program& p = s.program;
  ExecutionResult initial;
  uint64_t end = 0;
  for (const Symbol& sym : p.symbols) end = std::max(end, sym.address + sym.size_bytes - kDataBase);
  initial.memory.assign(end, 0);
  if (end != 0) WriteSymbolImage(p, s.num_cpus, initial.memory.data());
  w.Key("initial");
  WriteSymbolValues(s, initial, w);
  w.Key("layout").Open('[');
  for (const Symbol& sym : p.symbols) {
    w.Open('{').Field("name", sym.name).Field("address", static_cast<int64_t>(sym.address));
    w.Field("width", static_cast<int64_t>(sym.width)).Field("count", static_cast<int64_t>(sym.count));
    w.Key("per_cpu").Bool(sym.per_cpu).Field("stride", static_cast<int64_t>(CpuStride(sym))).Close('}');
  }
  w.Close(']').Key("code").Open('[');
  for (uint32_t i = 0; i < p.code.size(); ++i) w.Open('{').Field("where", p.DescribeIndex(i)).Field("instr", InstrText(s, i)).Close('}');
  w.Close(']').Key("sections").Open('[');
  for (const CsDescriptor& d : p.descriptors) {
    w.Open('{').Field("name", d.name).Field("start", int64_t{d.start}).Field("post_commit", int64_t{d.post_commit});
    w.Field("abort", int64_t{d.abort}).Close('}');
  }
  w.Close(']');
}

}  // namespace

std::string FormatSymbols(const Scenario& s, const ExecutionResult& r) {
  std::string out;
  for (const Symbol& sym : s.program.symbols) {
    if (!sym.per_cpu) {
      if (sym.count == 1) {
        out += sym.name + " = " + ValueText(s, ElementValue(r, sym, 0, 0)) + "\n";
      } else {
        AppendRuns(s, sym.name, Elements(r, sym, 0), out);
      }
      continue;
    }
    if (sym.count == 1) {
      std::vector<int64_t> per_cpu(s.num_cpus);
      for (uint32_t c = 0; c < s.num_cpus; ++c) per_cpu[c] = ElementValue(r, sym, c, 0);
      AppendRuns(s, sym.name, per_cpu, out);
    } else {
      for (uint32_t c = 0; c < s.num_cpus; ++c) {
        AppendRuns(s, sym.name + "[" + std::to_string(c) + "]", Elements(r, sym, c), out);
      }
    }
  }
  return out;
}

namespace {

// The lane width of a timeline: its widest lane cell, at most `cap`. Stops
// reading the trace at the first cell that reaches the cap, so a long trace
// is rendered once more only as far as needed.
size_t LaneWidth(const Scenario& s, const ExecutionResult& r, int ncpus, size_t cap) {
  size_t widest = 4;
  for (const TraceEntry& e : r.trace) {
    if (SpansLanes(e, ncpus)) continue;
    widest = std::max(widest, Cell(s, e).size());
    if (widest >= cap) break;
  }
  return std::min(widest, cap);
}

// The row standing for a repeated stretch left out of the timeline.
std::string RepeatRow(const Trace& trace, const TraceRepeat& rep) {
  return "   ... | " + std::to_string(rep.count) + " entries (steps " + std::to_string(trace[rep.first].step) + ".." +
         std::to_string(trace[rep.first + rep.count - 1].step) + ") not shown: they repeat the " +
         std::to_string(rep.period) + " entries before them, the same instructions and stores again\n";
}

// The timeline's header and one row per trace entry but for long repeated
// stretches (FindRepeats: one row each), written to `os` row by row (a
// 1.38 M-entry trace is never held as text).
void WriteTimelineRows(std::ostream& os, const Scenario& s, const ExecutionResult& r) {
  const int ncpus = std::max<int>(1, static_cast<int>(s.num_cpus));
  const size_t width = LaneWidth(s, r, ncpus, std::clamp<size_t>(150 / ncpus, 32, 56));
  std::string header = "  step";
  for (int c = 0; c < ncpus; ++c) header += " | " + Fit("cpu" + std::to_string(c), width);
  while (!header.empty() && header.back() == ' ') header.pop_back();
  header += "\n" + std::string(6, '-');
  for (int c = 0; c < ncpus; ++c) header += "-+-" + std::string(width, '-');
  os << header << "\n";
  char stepbuf[32];
  std::string row;
  const std::vector<TraceRepeat> repeats = FindRepeats(r.trace);
  auto repeat = repeats.begin();
  for (size_t i = 0; i < r.trace.size(); ++i) {
    if (repeat != repeats.end() && i == repeat->first) {
      os << RepeatRow(r.trace, *repeat);
      i += repeat->count - 1;
      ++repeat;
      continue;
    }
    const TraceEntry e = r.trace[i];
    std::snprintf(stepbuf, sizeof stepbuf, "%6" PRIu64, e.step);
    row = stepbuf;
    if (SpansLanes(e, ncpus)) {
      row += " | " + Cell(s, e);
    } else {
      const std::string cell = Fit(Cell(s, e), width);
      for (int c = 0; c < ncpus; ++c) row += " | " + (c == e.cpu ? cell : std::string(width, ' '));
      // Imported code: the machine instruction this step begins, right of the lanes.
      const std::vector<std::string>& origin = s.program.origin;
      if (e.kind == TraceKind::kStep && e.pc < origin.size() && !origin[e.pc].empty()) row += " | " + origin[e.pc];
      while (!row.empty() && row.back() == ' ') row.pop_back();
    }
    row += '\n';
    os << row;
  }
}

}  // namespace

std::string FormatTimeline(const Scenario& s, const ExecutionResult& r) {
  std::ostringstream os;
  WriteTimeline(os, s, r);
  return os.str();
}

void WriteTimeline(std::ostream& os, const Scenario& s, const ExecutionResult& r) {
  std::string out;
  out += "scenario " + s.name + (s.file.empty() ? "" : " (" + s.file + ")") + ", kernel " +
         KernelModelName(r.schedule.kernel) + ", " + std::to_string(s.num_cpus) + " cpu" +
         (s.num_cpus == 1 ? "" : "s") + ", " + std::to_string(s.threads.size()) + " thread" +
         (s.threads.size() == 1 ? "" : "s") + "\n";
  out += "legend: ** injected event  !! rseq abort  >> switch-in / handler entry  << yield / sigreturn  "
         "XX failure  tN/hK = tN in nested signal handler K\n\n";
  os << out;
  out.clear();
  WriteTimelineRows(os, s, r);
  if (r.trace.empty()) out += "  (no trace recorded)\n";

  out += "\nsteps " + std::to_string(r.steps) + ", events: " +
         std::to_string(r.events[static_cast<int>(DecisionKind::kPreempt)]) + " preempt, " +
         std::to_string(r.events[static_cast<int>(DecisionKind::kMigrate)]) + " migrate, " +
         std::to_string(r.events[static_cast<int>(DecisionKind::kSignal)]) + " signal, " +
         std::to_string(r.events[static_cast<int>(DecisionKind::kIpi)]) + " ipi\n";

  out += "\nfinal symbols:\n";
  std::string symbols = FormatSymbols(s, r);
  if (symbols.empty()) symbols = "(none)\n";
  size_t pos = 0;
  while (pos < symbols.size()) {
    size_t nl = symbols.find('\n', pos);
    out += "  " + symbols.substr(pos, nl - pos + 1);
    pos = nl + 1;
  }

  out += "\nthreads:\n";
  for (size_t t = 0; t < s.threads.size(); ++t) {
    out += "  " + s.threads[t].name + ": ";
    if (t >= r.threads.size()) {
      out += "no outcome\n";
      continue;
    }
    const ThreadOutcome& o = r.threads[t];
    out += o.exited ? "returned " + ValueText(s, o.ret) : std::string("did not return");
    out += ", " + std::to_string(o.aborts) + " abort" + (o.aborts == 1 ? "" : "s") + ", last on cpu" +
           std::to_string(o.final_cpu);
    if (!o.observed.empty()) {
      out += ", observed";
      for (size_t k = 0; k < o.observed.size(); ++k) {
        out += (k ? ", " : " ") + StringAt(s.program, o.observed[k].first) + "=" + ValueText(s, o.observed[k].second);
      }
    }
    out += "\n";
  }

  out += "\nproperties:\n";
  if (s.properties.empty()) out += "  (none)\n";
  for (size_t i = 0; i < s.properties.size(); ++i) {
    const Property& prop = s.properties[i];
    if (i >= r.properties.size()) {
      out += "  ----  " + prop.text + "   (not evaluated)\n";
      continue;
    }
    const PropertyOutcome& po = r.properties[i];
    out += std::string("  ") + (po.holds ? "PASS" : "FAIL") + "  " + prop.text;
    if (!po.error.empty()) {
      out += "   (error: " + po.error + ")";
    } else if (!po.holds || (po.value != 0 && po.value != 1)) {
      out += "   (value " + Dec(po.value) + ")";
    }
    out += "\n";
  }

  out += "\nverdict: ";
  if (r.stopped) {
    out += "NONE (the execution was stopped before its end)";  // ExecutionResult::stopped: no verdict
  } else {
    out += r.verdict == Verdict::kPass ? std::string("PASS") : "FAIL (" + std::string(VerdictName(r.verdict)) + ")";
  }
  if (!r.message.empty()) out += ": " + r.message;
  out += "   [scenario expects: " + ExpectedText(s.ExpectedOn(r.schedule.kernel)) + "]\n";
  os << out;
}

std::string FormatJson(const Scenario& s, const ExecutionResult& r, std::string_view extra_members) {
  std::ostringstream os;
  WriteJson(os, s, r, extra_members);
  return os.str();
}

void WriteJson(std::ostream& os, const Scenario& s, const ExecutionResult& r, std::string_view extra_members) {
  JsonWriter w(&os);
  w.Open('{')
      .Field("scenario", s.name)
      .Field("file", s.file)
      .Field("kernel", KernelModelName(r.schedule.kernel))
      .Field("verdict", VerdictName(r.verdict))
      .Field("expected", VerdictName(s.expected))
      .Field("message", r.message)
      .Field("steps", static_cast<int64_t>(r.steps))
      .Field("cpus", int64_t{s.num_cpus});
  w.Key("events").Open('{');
  for (DecisionKind k : {DecisionKind::kPreempt, DecisionKind::kMigrate, DecisionKind::kSignal, DecisionKind::kIpi}) {
    w.Field(DecisionKindName(k), r.events[static_cast<int>(k)]);
  }
  w.Close('}');

  w.Key("symbols");
  WriteSymbolValues(s, r, w);

  // threads: `observed` maps each name to its last value; `observations` keeps
  // every (name, value) in order, for names observed more than once.
  w.Key("threads").Open('[');
  for (size_t t = 0; t < s.threads.size(); ++t) {
    const ThreadOutcome o = t < r.threads.size() ? r.threads[t] : ThreadOutcome{};
    w.Open('{').Field("name", s.threads[t].name).Field("start_cpu", int64_t{s.threads[t].cpu}).Field("ret", o.ret);
    w.Key("exited").Bool(o.exited).Field("aborts", o.aborts).Field("cpu", o.final_cpu);
    std::map<std::string, int64_t> last;
    for (const auto& [name, value] : o.observed) last[StringAt(s.program, name)] = value;
    w.Key("observed").Open('{');
    for (const auto& [name, value] : last) w.Field(name, value);
    w.Close('}').Key("observations").Open('[');
    for (const auto& [name, value] : o.observed) w.Open('[').Str(StringAt(s.program, name)).Int(value).Close(']');
    w.Close(']').Close('}');
  }
  w.Close(']');

  w.Key("properties").Open('[');
  for (size_t i = 0; i < s.properties.size(); ++i) {
    const bool evaluated = i < r.properties.size();
    const PropertyOutcome o = evaluated ? r.properties[i] : PropertyOutcome{};
    w.Open('{').Field("text", s.properties[i].text);
    w.Key("evaluated").Bool(evaluated).Key("holds").Bool(o.holds).Field("value", o.value).Field("error", o.error);
    w.Close('}');
  }
  w.Close(']');

  w.Key("trace").Open('[');
  for (const TraceEntry& e : r.trace) {
    w.Open('{').Field("step", static_cast<int64_t>(e.step)).Field("kind", TraceKindName(e.kind));
    w.Field("cpu", e.cpu).Field("thread", e.thread).Field("depth", e.depth);
    w.Field("pc", e.pc == kNoPc ? int64_t{-1} : int64_t{e.pc});
    w.Field("where", e.pc < s.program.code.size() ? s.program.DescribeIndex(e.pc) : "");
    if (e.kind == TraceKind::kStep) w.Field("instr", InstrText(s, e.pc));
    w.Field("a", e.a).Field("b", e.b).Field("detail", e.detail).Close('}');
    w.Flush(/*above=*/1 << 16);
  }
  w.Close(']');

  WriteProgram(s, w);
  w.Field("schedule", EncodeSchedule(s, r.schedule));
  w.Flush();
  os << extra_members << '}';
}

std::string JsonQuote(std::string_view v) {
  std::string out = "\"";
  auto escape = [&out](unsigned c) {
    char buf[8];
    std::snprintf(buf, sizeof buf, "\\u%04x", c);
    out += buf;
  };
  for (size_t i = 0; i < v.size();) {
    const unsigned char c = static_cast<unsigned char>(v[i]);
    switch (c) {
      case '"': out += "\\\""; ++i; continue;
      case '\\': out += "\\\\"; ++i; continue;
      case '\n': out += "\\n"; ++i; continue;
      case '\r': out += "\\r"; ++i; continue;
      case '\t': out += "\\t"; ++i; continue;
      default: break;
    }
    if (c < 0x20 || c == 0x7f) {
      escape(c);
      ++i;
      continue;
    }
    if (c < 0x80) {
      out += static_cast<char>(c);
      ++i;
      continue;
    }
    // A well-formed UTF-8 sequence is copied; any other byte is escaped.
    const size_t len = c >= 0xf0 && c <= 0xf4 ? 4 : c >= 0xe0 ? 3 : c >= 0xc2 && c <= 0xdf ? 2 : 0;
    bool ok = len != 0 && i + len <= v.size();
    for (size_t k = 1; ok && k < len; ++k) ok = (static_cast<unsigned char>(v[i + k]) & 0xc0) == 0x80;
    if (ok) {
      out.append(v.substr(i, len));
      i += len;
    } else {
      escape(c);
      ++i;
    }
  }
  out += '"';
  return out;
}

}  // namespace rseqmc
