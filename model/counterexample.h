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
};

// Confirms, minimises and replays `failure` of `s`. `search` is what
// MinimizeEvents uses for the search for fewer events (bounds, RunOptions,
// oracle, interrupt flag, max_executions budget); its run.record_trace is
// ignored. Never throws for a schedule the explorer made.
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
