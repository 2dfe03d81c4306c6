// The trace of one execution: every step, injected event, abort, signal frame
// and kernel action, in order. Recorded only when RunOptions::record_trace is set
// (exploration runs without it; the CLI, replays and counterexamples with it).
#ifndef RSEQMC_SIM_TRACE_H_
#define RSEQMC_SIM_TRACE_H_

#include <cstdint>
#include <string>
#include <string_view>
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

using Trace = std::vector<TraceEntry>;

// Renders the timeline: one lane (column) per virtual CPU, one row per trace
// entry, showing which thread ran which instruction (function+offset, label,
// source text), injected events and where aborts landed.
std::string FormatTimeline(const Scenario& s, const ExecutionResult& r);
// One JSON object (one line) with the whole result: trace, final symbols,
// returns, observations, verdict, schedule token, and the program the trace
// refers to (data layout with initial values, code listing, critical
// sections). The one writer of execution JSON; the schema is
// docs/trace-schema.md. `extra_members` (raw JSON members, each starting with
// a comma: `,"seed":1`) are inserted before the closing brace.
std::string FormatJson(const Scenario& s, const ExecutionResult& r, std::string_view extra_members = {});
// A JSON string literal for `s`: quotes, backslashes and control characters
// escaped; bytes that are not part of valid UTF-8 become \u00XX (read as
// Latin-1), so the output is always valid JSON whatever the scenario's strings.
std::string JsonQuote(std::string_view s);
// Final values of every symbol, "name = v" or "name[cpu] = v" lines.
std::string FormatSymbols(const Scenario& s, const ExecutionResult& r);

}  // namespace rseqmc

#endif  // RSEQMC_SIM_TRACE_H_
