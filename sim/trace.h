// The trace of one execution: every step, injected event, abort, signal frame
// and kernel action, in order. Recorded only when RunOptions::record_trace is set
// (exploration runs without it; the CLI, replays and counterexamples with it).
#ifndef RSEQMC_SIM_TRACE_H_
#define RSEQMC_SIM_TRACE_H_

#include <cstddef>
#include <cstdint>
#include <iosfwd>
#include <iterator>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace rseqmc {

struct Scenario;
struct ExecutionResult;

enum class TraceKind : uint8_t {
  kStep,        // thread ran instruction `pc`; a = address written (0 if none), b = value written
  kSwitchIn,    // thread switched in on cpu (a = previous thread or -1 for idle)
  kPreempt,     // thread switched out by an injected preemption (a = next thread or -1)
  kYield,       // thread switched out by sched_yield (a = next thread)
  kMigrate,     // thread moved from cpu to CPU a
  kSignal,      // signal a generated for the thread (injected or tgkill)
  kSignalFrame, // handler frame pushed: a = signo, b = saved (interrupted) pc; depth = new depth
  kSigreturn,   // handler returned: b = resumed pc
  kIpi,         // membarrier-RSEQ IPI hit cpu (thread = the thread it interrupted, or -1)
  kAbort,       // rseq abort: pc = interrupted pc (from), a = abort_ip index (to), b = descriptor
  kLazyClear,   // kernel cleared rseq_cs with ip outside the section (b = descriptor or -1)
  kIdUpdate,    // kernel wrote cpu_id_start/cpu_id/node_id/mm_cid: a = cpu, b = mm_cid
  kExit,        // thread returned: a = return value
  kKill,        // process killed: a = signal number; detail holds the reason
  kAssertFail,  // assert failed at pc
  kObserve,     // observe: a = string index, b = value
  kBlock,       // thread left its CPU to wait: a = futex address (FUTEX_WAIT) or 0, b = wake time in ns (sleep) or 0
  kWake,        // thread made runnable on cpu: a = waking thread (-1: clock or signal), b = its r0 (0 or -EINTR)
  kDeadlock,    // every live thread waits on a futex (a = live threads); detail holds who waits where
};
const char* TraceKindName(TraceKind k);

struct TraceEntry {
  uint64_t step = 0;   // instructions executed before this entry
  TraceKind kind = TraceKind::kStep;
  int8_t cpu = -1;
  int16_t thread = -1;  // up to kMaxThreads
  uint8_t depth = 0;   // signal nesting depth of the thread's running context (0 = main)
  uint32_t pc = 0;     // global instruction index (meaningful for kStep, kAbort, ...)
  int64_t a = 0;
  int64_t b = 0;
  std::string detail;  // only for rare entries (kill reason, assert message)
};

// The entries of one execution, stored packed: 16 bytes per entry (step as an
// offset from its chunk's first step, kind, thread, cpu, depth, pc) plus 24
// for the few whose a or b is not 0 (stores, switches, aborts, ...), in
// chunks of 4096 entries, so a long trace grows without reallocating what it
// holds. A 1.38 M-step run of percpu_list -D PER=16384 keeps about 21 bytes
// per entry where a vector of TraceEntry took 72 (its detail string alone
// is 32). Rare details (kill reasons, assert messages, deadlock reports) are
// in a side table. Entries are appended in order and read back as TraceEntry
// values, by index or by iteration; resize() only shortens (a resumed
// execution drops what came after its checkpoint, Machine::ResumeFrom).
class Trace {
 public:
  class const_iterator {
   public:
    using iterator_category = std::random_access_iterator_tag;
    using value_type = TraceEntry;
    using difference_type = std::ptrdiff_t;
    using pointer = void;
    using reference = TraceEntry;
    const_iterator() = default;
    const_iterator(const Trace* t, size_t i) : t_(t), i_(i) {}
    TraceEntry operator*() const { return (*t_)[i_]; }
    const_iterator& operator++() { ++i_; return *this; }
    const_iterator operator++(int) { const_iterator old = *this; ++i_; return old; }
    difference_type operator-(const const_iterator& o) const {
      return static_cast<difference_type>(i_) - static_cast<difference_type>(o.i_);
    }
    bool operator==(const const_iterator& o) const { return i_ == o.i_; }
    bool operator!=(const const_iterator& o) const { return i_ != o.i_; }

   private:
    const Trace* t_ = nullptr;
    size_t i_ = 0;
  };

  void push_back(const TraceEntry& e);
  TraceEntry operator[](size_t i) const;  // i < size()
  TraceEntry back() const { return (*this)[size() - 1]; }  // !empty()
  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  void resize(size_t n);  // keeps the first min(n, size()) entries
  void clear() { resize(0); }
  const_iterator begin() const { return {this, 0}; }
  const_iterator end() const { return {this, size()}; }
  // Bytes of storage held (capacities, not sizes), for reports and tests.
  size_t bytes() const;

 private:
  static constexpr size_t kChunkBits = 12, kChunkEntries = size_t{1} << kChunkBits;
  static constexpr uint8_t kKindMask = 0x3f, kHasDetail = 0x40, kHasWide = 0x80;
  struct Packed {
    uint32_t step_delta;  // step - Chunk::base_step (0 when kHasWide)
    uint32_t pc;
    int16_t thread;
    int8_t cpu;
    uint8_t depth;
    uint8_t kind_flags;   // TraceKind | kHasDetail | kHasWide
    uint8_t unused;
    uint16_t wide;        // index into Chunk::wide when kHasWide
  };
  static_assert(sizeof(Packed) == 16, "a trace entry is stored in 16 bytes");
  // An entry whose a or b is not 0, or whose step is not within 2^32 of its
  // chunk's first one.
  struct Wide {
    uint64_t step;
    int64_t a;
    int64_t b;
  };
  struct Chunk {
    uint64_t base_step = 0;     // step of the chunk's first entry
    std::vector<Packed> entries;  // at most kChunkEntries
    std::vector<Wide> wide;
  };
  std::vector<Chunk> chunks_;
  size_t size_ = 0;
  std::vector<std::pair<size_t, std::string>> details_;  // (entry index, detail), ascending index
};

// A stretch of a trace left out of the timelines (text and HTML) because it
// repeats: entries [first, first + count) are each the same shape as the one
// `period` entries before them (the same thread doing the same thing at the
// same pc, storing or observing the same value), count a multiple of period.
struct TraceRepeat {
  size_t first = 0;   // index of the first entry left out
  size_t count = 0;   // entries left out
  size_t period = 0;  // entries per round of the loop (1..kTraceRepeatMaxPeriod)
};
constexpr size_t kTraceRepeatMaxPeriod = 32;   // longest loop round recognised, in entries
constexpr size_t kTraceRepeatMinLength = 256;  // shortest repeated run that is shortened, in entries
// The stretches to leave out of `trace`, ascending and disjoint: every run of
// more than kTraceRepeatMinLength entries that repeats a period of up to
// kTraceRepeatMaxPeriod entries keeps its first two rounds and its last one;
// the whole rounds between are left out (a livelock's loop: a 100,000-step
// spin shrinks to a few hundred rows). Entries left out repeat kept ones, so
// state rebuilt from the kept entries (the viewer's slider) stays right.
// Reads the trace once, in order, with memory independent of its length.
std::vector<TraceRepeat> FindRepeats(const Trace& trace);

// Renders the timeline: one lane (column) per virtual CPU, one row per trace
// entry, showing which thread ran which instruction (function+offset, label,
// source text), injected events and where aborts landed. A long repeated
// stretch (FindRepeats) is one row saying which steps it leaves out; the
// JSON form (FormatJson) keeps every entry.
std::string FormatTimeline(const Scenario& s, const ExecutionResult& r);
// The same text written to `os` row by row, without holding it whole (what
// `rseqmc run` prints: a million-step timeline is hundreds of MB of text).
void WriteTimeline(std::ostream& os, const Scenario& s, const ExecutionResult& r);
// One JSON object (one line) with the whole result: trace, final symbols,
// returns, observations, verdict, schedule token, and the program the trace
// refers to (data layout with initial values, code listing, critical
// sections). The one writer of execution JSON; the schema is
// docs/trace-schema.md. `extra_members` (raw JSON members, each starting with
// a comma: `,"seed":1`) are inserted before the closing brace.
std::string FormatJson(const Scenario& s, const ExecutionResult& r, std::string_view extra_members = {});
// The same JSON written to `os` in pieces of about 64 KB (no newline after it).
void WriteJson(std::ostream& os, const Scenario& s, const ExecutionResult& r, std::string_view extra_members = {});
// A JSON string literal for `s`: quotes, backslashes and control characters
// escaped; bytes that are not part of valid UTF-8 become \u00XX (read as
// Latin-1), so the output is always valid JSON whatever the scenario's strings.
std::string JsonQuote(std::string_view s);
// Final values of every symbol, "name = v" or "name[cpu] = v" lines.
std::string FormatSymbols(const Scenario& s, const ExecutionResult& r);

}  // namespace rseqmc

#endif  // RSEQMC_SIM_TRACE_H_
