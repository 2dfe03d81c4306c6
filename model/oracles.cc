// The commit-serialisability and abort-bound oracles, and the livelock cycle
// report. See model/oracles.h for the contract.
#include "model/oracles.h"

#include <algorithm>
#include <cstdio>
#include <map>
#include <stdexcept>
#include <utility>

#include "scenarios/printer.h"
#include "sim/machine.h"
#include "sim/trace.h"

namespace rseqmc {

namespace {

constexpr size_t kNone = ~size_t{0};

std::string Hex(uint64_t v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "0x%llx", static_cast<unsigned long long>(v));
  return buf;
}

const Symbol* SymbolOf(const Scenario& s, uint64_t addr) {
  for (const Symbol& sym : s.program.symbols) {
    if (addr >= sym.address && addr - sym.address < sym.size_bytes) return &sym;
  }
  return nullptr;
}

// CPU block of a per-CPU symbol that `addr` lies in (-1 if not per-CPU).
int64_t BlockOf(const Symbol& sym, uint64_t addr) {
  if (!sym.per_cpu || sym.stride == 0) return -1;
  return static_cast<int64_t>((addr - sym.address) / sym.stride);
}

// A value for people: decimal, and for a pointer into a symbol also "(&sym)".
std::string ValueText(const Scenario& s, int64_t v) {
  std::string text = std::to_string(v);
  if (v >= static_cast<int64_t>(kDataBase)) {
    if (const Symbol* sym = SymbolOf(s, static_cast<uint64_t>(v))) {
      (void)sym;
      text = Hex(static_cast<uint64_t>(v)) + " (&" + DescribeAddress(s, static_cast<uint64_t>(v)) + ")";
    }
  }
  return text;
}

// "`st [r2], r7` (line 68)": the instruction at code index `pc`.
std::string InstrText(const Scenario& s, uint32_t pc) {
  if (pc == kNativePc) return "native code";
  std::string t = "`" + PrintInstr(s.program, pc) + "`";
  if (pc < s.program.code.size() && s.program.code[pc].loc.line != 0) {
    t += " (line " + std::to_string(s.program.code[pc].loc.line) + ")";
  }
  return t;
}

std::string ThreadName(const Scenario& s, int t) {
  if (t >= 0 && static_cast<size_t>(t) < s.threads.size()) return s.threads[t].name;
  return "thread " + std::to_string(t);
}

// Replaces the bytes of `cur` (the `rbytes`-byte value at `raddr`) that the
// write [waddr, waddr + wbytes) := wv overlaps. Little-endian.
uint64_t MergeWrite(uint64_t cur, uint64_t raddr, int rbytes, uint64_t waddr, int wbytes, uint64_t wv) {
  for (int k = 0; k < rbytes; ++k) {
    const uint64_t a = raddr + static_cast<uint64_t>(k);
    if (a < waddr || a >= waddr + static_cast<uint64_t>(wbytes)) continue;
    const uint64_t byte = (wv >> (8 * (a - waddr))) & 0xff;
    cur = (cur & ~(0xffull << (8 * k))) | (byte << (8 * k));
  }
  return cur;
}

uint64_t Mask(int bytes) { return bytes >= 8 ? ~0ull : ((1ull << (8 * bytes)) - 1); }

bool Overlaps(uint64_t a, int an, uint64_t b, int bn) {
  return a < b + static_cast<uint64_t>(bn) && b < a + static_cast<uint64_t>(an);
}

struct Read {
  uint64_t addr = 0;
  int bytes = 0;
  uint64_t value = 0;    // what the attempt read
  uint64_t current = 0;  // the same bytes after every later write by another context
  size_t entry = 0;      // the reading instruction's log entry
  size_t writer = kNone; // the last other-context write that overlapped it
};

struct Attempt {
  bool active = false;
  int desc = -1;
  uint32_t number = 0;
  size_t start_entry = 0;
  int start_cpu = -1;
  int64_t mm_cid = -1;               // compared mm_cid (read inside the section), -1 if none
  std::vector<Read> reads;
  std::vector<size_t> writes;        // log entries that wrote, in order
  std::vector<size_t> reads_blocks;  // log entries that read (for the per-CPU check)
};

struct ThreadState {
  int rseq_cs = -1;            // descriptor rseq_cs points at (-1: none / cleared / elsewhere)
  uint64_t cleared_step = 0;   // when the kernel last cleared it
  bool cleared = false;
  std::vector<uint32_t> armed;  // by descriptor: attempts numbered so far
  int pending = -1;             // descriptor of the last rseq_arm no attempt has used yet
  std::vector<Attempt> ctx;     // by signal depth
};

// Buffers reused across executions (one per OS thread): the oracle runs after
// every execution of an exploration.
struct Workspace {
  std::vector<ThreadState> threads;
};

class Analyzer {
 public:
  Analyzer(const Scenario& s, const ExecutionResult& r, Workspace& w)
      : s_(s), r_(r), log_(r.accesses), threads_(w.threads) {}

  AttemptAnalysis Run() {
    if (!r_.accesses_recorded) {
      throw std::invalid_argument(
          "the commit-serialisability oracle needs an execution run with RunOptions::record_accesses");
    }
    const size_t nthreads = r_.threads.size();
    out_.threads.assign(nthreads, {});
    threads_.resize(nthreads);
    for (ThreadState& ts : threads_) {
      ts.rseq_cs = -1;
      ts.cleared = false;
      ts.cleared_step = 0;
      ts.pending = -1;
      ts.armed.assign(s_.program.descriptors.size(), 0);
      ts.ctx.resize(kMaxSignalDepth + 1);
      for (Attempt& a : ts.ctx) a.active = false;
    }
    for (size_t i = 0; i < log_.size(); ++i) Process(i);
    return std::move(out_);
  }

 private:
  const CsDescriptor& Desc(int d) const { return s_.program.descriptors[d]; }

  void Violation(std::string msg) {
    if (out_.violation.empty()) out_.violation = "commit serialisability: " + std::move(msg);
  }

  std::string Who(int t, const Attempt& a) const {
    return ThreadName(s_, t) + "'s attempt " + std::to_string(a.number) + " of " + Desc(a.desc).name;
  }

  bool IsScratch(uint64_t addr) const {
    const Symbol* sym = SymbolOf(s_, addr);
    if (sym == nullptr) return false;
    return std::find(s_.scratch.begin(), s_.scratch.end(), sym->name) != s_.scratch.end();
  }

  void Process(size_t i) {
    const AccessEntry& e = log_[i];
    if (e.thread < 0 || static_cast<size_t>(e.thread) >= threads_.size()) return;
    ThreadState& ts = threads_[e.thread];
    Attempt& a = ts.ctx[std::min<size_t>(e.depth, kMaxSignalDepth)];
    switch (e.kind) {
      case AccessKind::kAbort:
        ts.rseq_cs = -1;
        ts.cleared = true;
        ts.cleared_step = e.step;
        ++out_.threads[e.thread].kernel_aborts;
        if (a.active) {
          End(e.thread, a, i, EndKind::kKernelAbort);
        } else {
          // Aborted at start_ip, before its first instruction ran: an attempt
          // with no effect.
          ++out_.threads[e.thread].attempts;
          ts.pending = -1;
        }
        return;
      case AccessKind::kClear:
        ts.rseq_cs = -1;
        ts.cleared = true;
        ts.cleared_step = e.step;
        return;
      case AccessKind::kInstr:
        break;
    }
    if (e.flags & kAccessWrite) OtherContextsSee(i);
    if (e.pc == kNativePc || e.pc >= s_.program.code.size()) return;
    const Instr& in = s_.program.code[e.pc];
    switch (in.op) {
      case Op::kRseqArm:
        if (in.target < s_.program.descriptors.size()) {
          ts.rseq_cs = static_cast<int>(in.target);
          ts.pending = static_cast<int>(in.target);
          ++ts.armed[in.target];
        }
        return;  // its store is to rseq_cs, not data
      case Op::kMembarrierRseq:
        out_.disturbing_calls += s_.num_cpus;
        break;
      case Op::kTgkill:
      case Op::kSchedSetaffinity:
      case Op::kSchedYield:
      case Op::kFutexWait:  // may block: a switch
      case Op::kSleep:
        ++out_.disturbing_calls;
        break;
      default:
        break;
    }
    if (!a.active) {
      const int d = SectionStartingAt(ts, e.pc);
      if (d < 0) return;  // not at a start_ip (a jump into a section is a static finding)
      Begin(e.thread, ts, a, d, i);
    }
    const CsDescriptor& cs = Desc(a.desc);
    if (e.pc < cs.start || e.pc >= cs.post_commit) {
      // Control left the section without a logged exit (cannot happen with
      // the kernel model as it is; kept so that one lost entry cannot make a
      // later instruction count as part of the attempt).
      ++out_.threads[e.thread].early_exits;
      a.active = false;
      return;
    }
    if (in.op == Op::kRseqLoad) {
      if (static_cast<RseqField>(in.aux) == RseqField::kMmCid) a.mm_cid = e.rv;
    } else {
      if (e.flags & kAccessRead) AddRead(a, i);
      if (e.flags & kAccessWrite) a.writes.push_back(i);
    }
    if (e.pc + 1 == cs.post_commit && e.next == cs.post_commit) {
      Commit(e.thread, a, i);
    } else if (e.next < cs.start || e.next >= cs.post_commit) {
      const bool self_abort = e.next == cs.abort;
      ++(self_abort ? out_.threads[e.thread].self_aborts : out_.threads[e.thread].early_exits);
      End(e.thread, a, i, self_abort ? EndKind::kSelfAbort : EndKind::kEarlyExit);
    }
  }

  // The descriptor whose section starts at `pc`: the one rseq_cs points at if
  // it does, else the first declared. -1 if none starts there.
  int SectionStartingAt(const ThreadState& ts, uint32_t pc) const {
    if (ts.rseq_cs >= 0 && Desc(ts.rseq_cs).start == pc && Desc(ts.rseq_cs).post_commit > pc) return ts.rseq_cs;
    for (size_t d = 0; d < s_.program.descriptors.size(); ++d) {
      if (Desc(static_cast<int>(d)).start == pc && Desc(static_cast<int>(d)).post_commit > pc) {
        return static_cast<int>(d);
      }
    }
    return -1;
  }

  void Begin(int t, ThreadState& ts, Attempt& a, int d, size_t i) {
    const AccessEntry& e = log_[i];
    a.active = true;
    a.desc = d;
    a.start_entry = i;
    a.start_cpu = e.cpu;
    a.mm_cid = -1;
    a.reads.clear();
    a.writes.clear();
    a.reads_blocks.clear();
    ++out_.threads[t].attempts;
    // The attempt the last rseq_arm of d began, or a new one (a re-entry
    // without arming again).
    a.number = ts.pending == d ? ts.armed[d] : ++ts.armed[d];
    ts.pending = -1;
    if (ts.rseq_cs != d) {
      // (e) Entered without the descriptor armed.
      std::string why = ts.cleared ? "the kernel cleared rseq_cs at step " + std::to_string(ts.cleared_step)
                                   : "rseq_cs was never armed with it";
      if (ts.rseq_cs >= 0 && !ts.cleared) why = "rseq_cs points at " + Desc(ts.rseq_cs).name;
      Violation(Who(t, a) + " entered the section at start_ip at step " + std::to_string(e.step) +
                " while rseq_cs did not point at its descriptor (" + why +
                "): the section ran unprotected (arm it with `rseq_arm " + Desc(d).name +
                "` right before start_ip, after any code that may be preempted)");
    }
  }

  void AddRead(Attempt& a, size_t i) {
    const AccessEntry& e = log_[i];
    a.reads_blocks.push_back(i);
    // Bytes the attempt wrote itself before reading them are its own effect.
    bool own = true;
    for (int k = 0; k < e.bytes && own; ++k) {
      bool covered = false;
      for (size_t w : a.writes) {
        const AccessEntry& we = log_[w];
        covered |= e.addr + k >= we.addr && e.addr + k < we.addr + we.bytes;
      }
      own = covered;
    }
    if (own) return;
    Read rd;
    rd.addr = e.addr;
    rd.bytes = e.bytes;
    rd.value = static_cast<uint64_t>(e.rv) & Mask(e.bytes);
    rd.current = rd.value;
    rd.entry = i;
    a.reads.push_back(rd);
  }

  // A write by entry i: every other context's active attempt that read the
  // bytes sees them change.
  void OtherContextsSee(size_t i) {
    const AccessEntry& w = log_[i];
    for (size_t t = 0; t < threads_.size(); ++t) {
      for (size_t d = 0; d < threads_[t].ctx.size(); ++d) {
        if (static_cast<int>(t) == w.thread && d == w.depth) continue;
        Attempt& a = threads_[t].ctx[d];
        if (!a.active) continue;
        for (Read& rd : a.reads) {
          if (!Overlaps(rd.addr, rd.bytes, w.addr, w.bytes)) continue;
          rd.current = MergeWrite(rd.current, rd.addr, rd.bytes, w.addr, w.bytes, static_cast<uint64_t>(w.wv));
          rd.writer = i;
        }
      }
    }
  }

  // (b) "counter[0] (CPU 0's block)" if entry `i` touched a per-CPU block
  // other than `owner`; "" otherwise.
  std::string ForeignBlock(size_t i, int64_t owner, bool by_cid) const {
    const AccessEntry& e = log_[i];
    const Symbol* sym = SymbolOf(s_, e.addr);
    if (sym == nullptr) return "";
    const int64_t block = BlockOf(*sym, e.addr);
    if (block < 0 || block == owner) return "";
    return DescribeAddress(s_, e.addr) + (by_cid ? " (mm_cid " + std::to_string(block) + "'s block)"
                                                 : " (CPU " + std::to_string(block) + "'s block)");
  }

  void Commit(int t, Attempt& a, size_t i) {
    const AccessEntry& e = log_[i];
    ++out_.threads[t].commits;
    a.active = false;
    if (!out_.violation.empty()) return;
    std::vector<std::string> issues;
    // (b) the CPU, and the per-CPU blocks it touched.
    if (a.start_cpu != e.cpu) {
      issues.push_back("started on CPU " + std::to_string(a.start_cpu) + " at step " +
                       std::to_string(log_[a.start_entry].step) + " but committed on CPU " + std::to_string(e.cpu));
    }
    const bool by_cid = a.mm_cid >= 0;
    const int64_t owner = by_cid ? a.mm_cid : e.cpu;
    const std::string running =
        by_cid ? "while its mm_cid was " + std::to_string(a.mm_cid) : "while running on CPU " + std::to_string(e.cpu);
    std::string block;
    if ((e.flags & kAccessWrite) && !(block = ForeignBlock(i, owner, by_cid)).empty()) {
      issues.push_back("committed to " + block + " " + running);
    } else {
      for (size_t w : a.writes) {
        if (!(block = ForeignBlock(w, owner, by_cid)).empty()) {
          issues.push_back("wrote " + block + " at step " + std::to_string(log_[w].step) + " by " +
                           InstrText(s_, log_[w].pc) + " " + running);
          break;
        }
      }
      if (block.empty()) {
        for (size_t rd : a.reads_blocks) {
          if (!(block = ForeignBlock(rd, owner, by_cid)).empty()) {
            issues.push_back("read " + block + " at step " + std::to_string(log_[rd].step) + " by " +
                             InstrText(s_, log_[rd].pc) + " " + running);
            break;
          }
        }
      }
    }
    // (a) every value read is still there just before the commit.
    for (const Read& rd : a.reads) {
      if (((rd.current ^ rd.value) & Mask(rd.bytes)) == 0) continue;
      const AccessEntry& re = log_[rd.entry];
      std::string msg = "read " + DescribeAddress(s_, rd.addr) + " = " +
                        ValueText(s_, static_cast<int64_t>(rd.value)) + " at step " + std::to_string(re.step) +
                        " by " + InstrText(s_, re.pc);
      if (rd.writer != kNone) {
        const AccessEntry& we = log_[rd.writer];
        std::string who = ThreadName(s_, we.thread);
        if (we.depth > 0) who += " (in a signal handler)";
        msg += ", but " + who + " wrote " + DescribeAddress(s_, we.addr) + " = " + ValueText(s_, we.wv) +
               " at step " + std::to_string(we.step) + " by " + InstrText(s_, we.pc) + " before the commit";
        const uint64_t shown = MergeWrite(rd.value, rd.addr, rd.bytes, we.addr, we.bytes, static_cast<uint64_t>(we.wv));
        if (((shown ^ rd.current) & Mask(rd.bytes)) != 0) {
          msg += " (" + DescribeAddress(s_, rd.addr) + " then held " +
                 ValueText(s_, static_cast<int64_t>(rd.current)) + ")";
        }
        msg += ": the operation is not atomic";
      }
      issues.push_back(msg);
      break;
    }
    if (issues.empty()) return;
    std::string msg = Who(t, a) + ", committed at step " + std::to_string(e.step) + " on CPU " +
                      std::to_string(e.cpu) + " by " + InstrText(s_, e.pc) + ": ";
    for (size_t k = 0; k < issues.size(); ++k) msg += (k ? "; " : "") + issues[k];
    Violation(msg);
  }

  enum class EndKind { kKernelAbort, kSelfAbort, kEarlyExit };

  // (c), (d): the attempt ended without committing at log entry i.
  void End(int t, Attempt& a, size_t i, EndKind kind) {
    a.active = false;
    if (!out_.violation.empty()) return;
    for (size_t w : a.writes) {
      const AccessEntry& we = log_[w];
      if (IsScratch(we.addr)) continue;
      const AccessEntry& e = log_[i];
      const std::string step = std::to_string(e.step);
      const std::string how =
          kind == EndKind::kKernelAbort ? "was aborted by the kernel at step " + step
          : kind == EndKind::kSelfAbort ? "jumped to its abort label at step " + step + " (" + InstrText(s_, e.pc) + ")"
                                        : "left the section without committing at step " + step + " (" +
                                              InstrText(s_, e.pc) + ")";
      std::string msg = Who(t, a) + " " + how + " but left an effect outside the declared scratch: it wrote " +
                        DescribeAddress(s_, we.addr) + " = " + ValueText(s_, we.wv) + " at step " +
                        std::to_string(we.step) + " by " + InstrText(s_, we.pc) +
                        " (an abort undoes no store: only the commit may publish";
      msg += s_.scratch.empty() ? "; the scenario declares no scratch)" : ")";
      Violation(msg);
      return;
    }
  }

  const Scenario& s_;
  const ExecutionResult& r_;
  const std::vector<AccessEntry>& log_;
  std::vector<ThreadState>& threads_;
  AttemptAnalysis out_;
};

std::string AbortBoundMessage(const Scenario& s, const AttemptAnalysis& a, uint32_t max_events) {
  const uint64_t allowed = static_cast<uint64_t>(max_events) + 1 + a.disturbing_calls;
  for (size_t t = 0; t < a.threads.size(); ++t) {
    const AttemptCounts& c = a.threads[t];
    const uint64_t aborts = static_cast<uint64_t>(c.kernel_aborts) + c.self_aborts;
    if (aborts <= allowed) continue;
    std::string msg = "abort loop: " + ThreadName(s, static_cast<int>(t)) + " aborted " + std::to_string(aborts) +
                      " critical-section attempts (" + std::to_string(c.kernel_aborts) + " by the kernel, " +
                      std::to_string(c.self_aborts) + " by jumping to its own abort label) with at most " +
                      std::to_string(max_events) + " injected events";
    if (a.disturbing_calls != 0) msg += " and " + std::to_string(a.disturbing_calls) + " disturbing kernel calls";
    msg += ": each abort needs an event, so the thread aborts itself in a loop that a fair schedule does not end"
           " (livelock suspect)";
    return msg;
  }
  return "";
}

}  // namespace

std::string DescribeAddress(const Scenario& s, uint64_t addr) {
  const Symbol* sym = SymbolOf(s, addr);
  if (sym == nullptr) {
    // In the padding after a symbol (the layout rounds each up to 64 bytes):
    // name the element as if the array went on, the usual overflow.
    for (const Symbol& p : s.program.symbols) {
      if (p.per_cpu || addr < p.address + p.size_bytes || addr >= p.address + (p.size_bytes + 63) / 64 * 64) continue;
      const uint64_t off = addr - p.address, width = static_cast<uint64_t>(p.width);
      std::string name = p.name + "[" + std::to_string(off / width) + "]";
      if (off % width != 0) name += "+" + std::to_string(off % width);
      return name + " (" + Hex(addr) + ", past the end of " + p.name + "[" + std::to_string(p.count) + "])";
    }
    return Hex(addr);
  }
  uint64_t off = addr - sym->address;
  const uint64_t width = static_cast<uint64_t>(sym->width);
  std::string name = sym->name;
  if (sym->per_cpu && sym->stride > 0) {
    name += "[" + std::to_string(off / sym->stride) + "]";
    off %= sym->stride;
    if (off >= sym->count * width) return name + "+" + std::to_string(off);  // padding
    if (sym->count > 1) name += "[" + std::to_string(off / width) + "]";
  } else if (sym->count > 1) {
    name += "[" + std::to_string(off / width) + "]";
  }
  if (off % width != 0) name += "+" + std::to_string(off % width);
  return name;
}

AttemptAnalysis AnalyseAttempts(const Scenario& s, const ExecutionResult& r) {
  thread_local Workspace workspace;
  return Analyzer(s, r, workspace).Run();
}

std::string CheckCommitSerialisability(const Scenario& s, const ExecutionResult& r) {
  return AnalyseAttempts(s, r).violation;
}

std::string CheckAbortBound(const Scenario& s, const ExecutionResult& r, uint32_t max_events) {
  return AbortBoundMessage(s, AnalyseAttempts(s, r), max_events);
}

std::string DefaultOracle(const Scenario& s, const ExecutionResult& r, uint32_t max_events) {
  AttemptAnalysis a = AnalyseAttempts(s, r);
  if (!a.violation.empty()) return a.violation;
  return AbortBoundMessage(s, a, max_events);
}

void InstallDefaultOracle(const Scenario& s, ExploreOptions& o) {
  o.run.record_accesses = true;
  const uint32_t max_events = o.bounds.max_events;
  std::function<std::string(const ExecutionResult&)> prev = std::move(o.oracle);
  o.oracle = [&s, max_events, prev = std::move(prev)](const ExecutionResult& r) -> std::string {
    if (prev) {
      std::string why = prev(r);
      if (!why.empty()) return why;
    }
    return DefaultOracle(s, r, max_events);
  };
}

// ---------------------------------------------------------------------------
// Livelock cycles.

namespace {

// One element of a thread's control sequence: an instruction it ran (at a
// signal depth) or a kernel abort that moved it.
struct Token {
  bool abort = false;
  uint8_t depth = 0;
  uint32_t pc = 0;
  uint32_t to = 0;
  friend bool operator==(const Token&, const Token&) = default;
};

const Label* LabelAt(const Scenario& s, uint32_t pc) {
  const int f = s.program.FunctionOf(pc);
  if (f < 0) return nullptr;
  for (const Label& l : s.program.functions[f].labels) {
    if (l.index == pc) return &l;
  }
  return nullptr;
}

std::string TokenText(const Scenario& s, const Token& k) {
  if (k.abort) {
    const Label* l = LabelAt(s, k.to);
    return "(kernel abort to " + (l ? l->name : s.program.DescribeIndex(k.to)) + ")";
  }
  std::string t = k.depth > 0 ? "[handler] " : "";
  if (const Label* l = LabelAt(s, k.pc)) t += l->name + ": ";
  return t + PrintInstr(s.program, k.pc);
}

std::string TokenShort(const Scenario& s, const Token& k) {
  if (!k.abort) {
    if (const Label* l = LabelAt(s, k.pc)) return l->name;
  }
  return TokenText(s, k);
}

}  // namespace

std::string DescribeCycle(const Scenario& s, const ExecutionResult& r, int thread) {
  std::vector<Token> seq;
  for (const TraceEntry& e : r.trace) {
    if (e.thread != thread) continue;
    if (e.kind == TraceKind::kStep) {
      seq.push_back({false, e.depth, e.pc, 0});
    } else if (e.kind == TraceKind::kAbort) {
      seq.push_back({true, e.depth, e.pc, static_cast<uint32_t>(e.a)});
    }
  }
  const size_t n = seq.size();
  if (n < 2) return "";
  // Choose the period on a window at the end: the smallest p whose periodic
  // suffix (within the window) is the longest. Multiples of the true period
  // cover the same suffix, so the smallest is the loop itself.
  const size_t window = std::min<size_t>(n, 4096);
  size_t best_p = 0, best_cover = 0;
  for (size_t p = 1; p * 2 <= window; ++p) {
    size_t run = 0;  // trailing positions j (in the window) with seq[j] == seq[j - p]
    while (run + p < window && seq[n - 1 - run] == seq[n - 1 - run - p]) ++run;
    const size_t cover = run + p;
    if (cover >= 2 * p && cover > best_cover) {
      best_cover = cover;
      best_p = p;
    }
  }
  if (best_p == 0) return "";
  // The whole periodic suffix, beyond the window.
  size_t run = 0;
  while (run + best_p < n && seq[n - 1 - run] == seq[n - 1 - run - best_p]) ++run;
  const size_t cover = run + best_p;
  const size_t first = n - cover;  // the first iteration starts here
  std::string out;
  size_t instructions = 0;
  for (size_t k = 0; k < best_p; ++k) {
    const Token& tok = seq[first + k];
    if (!tok.abort) ++instructions;
    out += TokenText(s, tok) + " \u2192 ";
  }
  out += TokenShort(s, seq[first]);
  out += " (" + std::to_string(instructions) + (instructions == 1 ? " instruction" : " instructions") +
         ", repeated " + std::to_string(cover / best_p) + " times)";
  return out;
}

std::string DescribeLivelock(const Scenario& s, const ExecutionResult& r) {
  std::string out;
  for (size_t t = 0; t < r.threads.size(); ++t) {
    if (r.threads[t].exited) continue;
    const std::string cycle = DescribeCycle(s, r, static_cast<int>(t));
    if (!cycle.empty()) out += ThreadName(s, static_cast<int>(t)) + " loops: " + cycle + "\n";
  }
  return out;
}

// ---------------------------------------------------------------------------
// The allocator oracle.

namespace {

// One place an object was found, for messages: "cache_slots[3] (cache 1)".
struct Place {
  std::string where;
};

class HeapCensus {
 public:
  HeapCensus(const Scenario& s, const ExecutionResult& r)
      : s_(s), r_(r), objects_(static_cast<uint64_t>(Count("owner")) - 1), places_(objects_ + 1) {}

  // Runs the rules of oracles.h in order; "" if all hold.
  std::string Check() {
    std::string why = Arena();
    if (why.empty()) why = Caches();
    if (why.empty()) why = SharedList();
    if (why.empty()) why = Held();
    if (why.empty()) why = Twice();
    if (why.empty()) why = Lost();
    return why;
  }

 private:
  int64_t Count(const char* name) const {
    const int i = s_.program.FindSymbol(name);
    return i < 0 ? 0 : s_.program.symbols[static_cast<size_t>(i)].count;
  }
  uint64_t Value(const char* name, uint32_t index) const {
    return static_cast<uint64_t>(r_.SymbolValue(s_, name, 0, index));
  }
  // Records `obj` found at `where`; an error for a value that is no object.
  std::string Add(uint64_t obj, const std::string& where, const char* kind) {
    if (obj == 0 || obj > objects_) {
      return "allocator: " + where + " = " + std::to_string(obj) + " is within the " + kind +
             "'s count but is no object (1.." + std::to_string(objects_) + ")";
    }
    places_[obj].push_back({where});
    ++found_[kind];
    return "";
  }
  static std::string Elem(const char* sym, uint64_t i) { return std::string(sym) + "[" + std::to_string(i) + "]"; }

  std::string Arena() {
    const uint64_t n = Value("arena_stack", 0);
    if (n > objects_) {
      return "allocator: arena count arena_stack[0] = " + std::to_string(n) + " is above its capacity " +
             std::to_string(objects_);
    }
    for (uint64_t k = 1; k <= n; ++k) {
      std::string why = Add(Value("arena_stack", static_cast<uint32_t>(k)), Elem("arena_stack", k), "arena");
      if (!why.empty()) return why;
    }
    for (uint64_t obj = Value("arena_fresh", 0); obj >= 1 && obj <= objects_; ++obj) {
      places_[obj].push_back({"arena_fresh (never handed out)"});
      ++found_["arena"];
    }
    return "";
  }

  std::string Caches() {
    const int64_t caches = Count("cache_count");
    if (caches == 0) return "";
    const uint64_t cap = static_cast<uint64_t>(Count("cache_slots") / caches);
    for (int64_t k = 0; k < caches; ++k) {
      const uint64_t n = Value("cache_count", static_cast<uint32_t>(k));
      if (n > cap) {
        return "allocator: cache " + std::to_string(k) + " count " + Elem("cache_count", k) + " = " +
               std::to_string(n) + " is above its capacity " + std::to_string(cap);
      }
      for (uint64_t j = 0; j < n; ++j) {
        const uint64_t slot = static_cast<uint64_t>(k) * cap + j;
        std::string why = Add(Value("cache_slots", static_cast<uint32_t>(slot)),
                              Elem("cache_slots", slot) + " (cache " + std::to_string(k) + ")", "cache");
        if (!why.empty()) return why;
      }
    }
    return "";
  }

  std::string SharedList() {
    if (s_.program.FindSymbol("shared_head") < 0) return "";
    uint64_t obj = Value("shared_head", 0) & 0xffffffffu;
    uint64_t length = 0;
    std::string from = "shared_head";
    while (obj != 0) {
      if (length == objects_) {
        return "allocator: the shared list is longer than the " + std::to_string(objects_) + " objects (a cycle)";
      }
      std::string why = Add(obj, "the shared list (after " + from + ")", "cache");
      if (!why.empty()) return why;
      ++length;
      from = "object " + std::to_string(obj);
      obj = Value("obj_next", static_cast<uint32_t>(obj));
    }
    const uint64_t count = Value("shared_count", 0);
    if (count != length) {
      return "allocator: shared_count = " + std::to_string(count) + " but the shared list holds " +
             std::to_string(length) + " objects";
    }
    return "";
  }

  std::string Held() {
    for (int64_t k = 0; k < Count("held"); ++k) {
      const uint64_t obj = Value("held", static_cast<uint32_t>(k));
      if (obj == 0) continue;
      std::string why = Add(obj, Elem("held", k) + " (thread " + std::to_string(k / 2) + ")", "held");
      if (!why.empty()) return why;
    }
    return "";
  }

  std::string Twice() const {
    for (uint64_t obj = 1; obj <= objects_; ++obj) {
      if (places_[obj].size() < 2) continue;
      std::string where;
      for (size_t i = 0; i < places_[obj].size(); ++i) {
        where += (i == 0 ? "" : i + 1 == places_[obj].size() ? " and " : ", ") + places_[obj][i].where;
      }
      return "allocator: object " + std::to_string(obj) + " is in " + std::to_string(places_[obj].size()) +
             " places: " + where;
    }
    return "";
  }

  std::string Lost() const {
    for (uint64_t obj = 1; obj <= objects_; ++obj) {
      if (!places_[obj].empty()) continue;
      uint64_t total = 0;
      for (const auto& [kind, n] : found_) total += n;
      return "allocator: object " + std::to_string(obj) +
             " is lost: in no cache, not in the arena, held by no thread (" + std::to_string(total) + " of " +
             std::to_string(objects_) + " objects found: arena " + std::to_string(Found("arena")) + ", caches " +
             std::to_string(Found("cache")) + ", held " + std::to_string(Found("held")) + ")";
    }
    return "";
  }
  uint64_t Found(const std::string& kind) const {
    auto it = found_.find(kind);
    return it == found_.end() ? 0 : it->second;
  }

  const Scenario& s_;
  const ExecutionResult& r_;
  uint64_t objects_;
  std::vector<std::vector<Place>> places_;  // by object
  std::map<std::string, uint64_t> found_;   // objects found per kind: arena, cache, held
};

}  // namespace

bool IsAllocatorScenario(const Scenario& s) {
  for (const char* name : {"owner", "held", "arena_stack", "arena_fresh"}) {
    if (s.program.FindSymbol(name) < 0) return false;
  }
  return true;
}

std::string CheckAllocatorHeap(const Scenario& s, const ExecutionResult& r) {
  if (!IsAllocatorScenario(s)) {
    throw std::invalid_argument("CheckAllocatorHeap: " + s.name +
                                " does not declare the symbols of scenarios/alloc_common.rsqi");
  }
  return HeapCensus(s, r).Check();
}

}  // namespace rseqmc
