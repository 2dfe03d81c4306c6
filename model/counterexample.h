// The counterexample `rseqmc check` prints for a failure (DESIGN.md §6): the
// failing schedule re-run to confirm it (determinism self-check), minimised
// (model/minimize.h: delta debugging, then an exhaustive search for a failure
// with fewer events), replayed with a trace, and the values that broke the
// property.
//
// Example:
//
//     Counterexample cx = BuildCounterexample(s, explore_options, *result.failure);
//     if (!cx.deterministic) std::cerr << cx.determinism_problem;
//     std::cout << FormatBroken(s, cx.run) << FormatTimeline(s, cx.run);
#ifndef RSEQMC_MODEL_COUNTEREXAMPLE_H_
#define RSEQMC_MODEL_COUNTEREXAMPLE_H_

#include <cstdint>
#include <map>
#include <optional>
#include <string>

#include "model/explorer.h"
#include "model/minimize.h"
#include "sim/schedule.h"
#include "sim/simulator.h"

namespace rseqmc {

struct Counterexample {
  Schedule schedule;         // the minimised schedule
  std::string token;         // EncodeSchedule of it
  ExecutionResult run;       // its execution, with the trace
  MinimizeStats stats;
  // The failing schedule replayed to the failure's verdict and trace hash,
  // and the minimised one to the same verdict and hash twice (traced and not).
  bool deterministic = true;
  std::string determinism_problem;  // what differed, when !deterministic
  // Set when `run` carries no trace because recording it would exceed the
  // search's max_memory_bytes (kCounterexampleBytesPerStep per step): says
  // how many steps, the estimate and what to do. `run` is then the untraced
  // replay (verdict, final memory, thread outcomes and properties intact).
  std::optional<std::string> trace_omitted;
  // Every replay ran to its end and agreed (the "replay verified" of the
  // report); false when one was cut short by a stop, or !deterministic.
  bool verified = false;
  // The interrupt or the time limit (ExploreOptions::interrupt,
  // time_limit_s of `search`) stopped the building: `schedule` is the smallest
  // failing schedule found so far, not minimal (stats.stopped), possibly the
  // explored one unconfirmed (stats.reproduced false). When it cut the final
  // replay, trace_omitted says so and `run` is the untraced replay, or, if
  // that was cut too, a stopped run without a verdict (ExecutionResult::stopped).
  bool stopped = false;
};

// Bytes a traced counterexample costs per step of its execution: its Trace
// (about 21, sim/trace.h) and the timeline text the report builds from it
// (about 45 a line, held while the report is assembled). Measured: `rseqmc
// check` of a spin-wait livelock with --max-steps 4000000 peaked at 631 MB
// (about 155 per step); rounded up to stay an upper bound.
inline constexpr uint64_t kCounterexampleBytesPerStep = 256;

// Confirms, minimises and replays `failure` of `s`. `search` is what
// MinimizeEvents uses for the search for fewer events (bounds, RunOptions,
// oracle, interrupt flag, max_executions budget); its run.record_trace is
// ignored; its max_memory_bytes (0 = unlimited) bounds the trace recorded
// for the report (Counterexample::trace_omitted). Its interrupt and
// time_limit_s (0 = unlimited) bound the whole of it: polled between runs and
// inside every run (every Machine::kStopPollSteps steps), so a stop ends it
// within a second whatever the execution length (Counterexample::stopped).
// Never throws for a schedule the explorer made.
Counterexample BuildCounterexample(const Scenario& s, const ExploreOptions& search, const Failure& failure);

// "broken: ..." lines: for each property that does not hold, its text, value
// and, for a comparison, the value of each side, then the final values of the
// symbols it names; for another verdict, the message. Ends with a newline.
std::string FormatBroken(const Scenario& s, const ExecutionResult& r);

// One line per schedule entry: "  at boundary 43: preempt cpu0", after
// "  initial placement: w0 on CPU 1, w1 on CPU 1" when it has one.
std::string FormatScheduleEntries(const Scenario& s, const Schedule& schedule);

// Executions the search for a counterexample with fewer events may take
// (MinimizeEvents); a count, not a time, so reports stay deterministic.
inline constexpr uint64_t kFewerEventsBudget = 200000;

// The options BuildCounterexample's search for fewer events uses after an
// exploration with `explored`: its bounds, run options and interrupt flag,
// the exhaustive default strategy, and kFewerEventsBudget executions.
ExploreOptions FewerEventsSearch(const ExploreOptions& explored);

// "<argv0> <verb> FILE --schedule TOKEN [-D NAME=VALUE]... [--max-steps N]":
// the command line that replays TOKEN (verb "run" or "replay"), quoted for a shell.
std::string ReplayCommandLine(const std::string& argv0, const std::string& verb, const std::string& file,
                              const std::string& token, const std::map<std::string, int64_t>& defines,
                              std::optional<uint64_t> max_steps);

// `arg` quoted for a POSIX shell when it contains anything but
// [A-Za-z0-9_./=:+,@%-]; used to print command lines that can be pasted.
std::string ShellQuote(const std::string& arg);

}  // namespace rseqmc

#endif  // RSEQMC_MODEL_COUNTEREXAMPLE_H_
