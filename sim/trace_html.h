// The timeline viewer: one execution as a single self-contained HTML page
// (`rseqmc check --html`, `rseqmc replay --html`, api::ReplayHtml).
//
// The page embeds the execution's JSON (FormatJson, the one trace writer;
// schema in docs/trace-schema.md) and a small hand-written script that draws
// it as SVG: a lane per virtual CPU and per thread over the trace's entries
// (instruction boundaries), critical sections shaded in the thread lanes,
// injected events (preempt, migrate, signal, IPI) marked, aborts drawn as
// arrows from the interrupted instruction to abort_ip, the failing properties
// with the values that broke them, and a step slider whose position shows the
// machine state after that entry: every symbol's value, each thread's CPU,
// last instruction and whether it is inside a critical section, and each
// CPU's running thread. A long repeated stretch of the trace (a livelock's
// loop: more than 256 entries that repeat a period of up to 32) keeps its
// first two periods and its last; the page's "Elided" section says which
// steps are left out. Nothing is fetched at view time (no network, no
// library): plain SVG and DOM code, so the page works offline and from file://.
//
// Example:
//
//     std::ofstream("cx.html") << FormatHtml(s, run, {FormatBroken(s, run), "rseqmc replay ..."});
#ifndef RSEQMC_SIM_TRACE_HTML_H_
#define RSEQMC_SIM_TRACE_HTML_H_

#include <string>
#include <string_view>

namespace rseqmc {

struct Scenario;
struct ExecutionResult;

// What the page shows besides the execution itself.
struct HtmlNotes {
  std::string broken;  // "broken: ..." lines (model/counterexample.h FormatBroken); "" if none
  std::string replay;  // the command line that replays the execution; "" if none
};

// The whole page (UTF-8). `r` must have been run with RunOptions::record_trace
// (an empty trace draws empty lanes). Never throws for a result of `s`.
std::string FormatHtml(const Scenario& s, const ExecutionResult& r, const HtmlNotes& notes);

// True when `text` begins as every page FormatHtml writes does (its doctype,
// <html>, <meta> and <title>rseqmc timeline</title> lines). The command line
// replaces an existing --html file only when this holds for it, so a file
// the user did not make with rseqmc is never overwritten.
bool IsTimelineHtml(std::string_view text);

// The length of the prefix IsTimelineHtml compares: read at least this many
// bytes of a file to decide.
size_t TimelineHtmlSignatureSize();

}  // namespace rseqmc

#endif  // RSEQMC_SIM_TRACE_HTML_H_
