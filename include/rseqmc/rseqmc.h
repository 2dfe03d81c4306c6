// rseqmc's public C++ API: model-check rseq region programs from your own
// tests. This header (with rseqmc/gtest.h and rseqmc/rapidcheck.h) is the
// whole installed interface of the library `rseqmc::rseqmc`
// (`find_package(rseqmc)`); it exposes no type of the simulator or the model
// checker, so their internals can change without breaking your build.
//
// What it does, in the words of the README: a scenario (a `.rsq` program:
// per-CPU data, region programs with critical sections, threads on virtual
// CPUs, properties; format in scenarios/README.md) is explored under a chosen
// kernel's rseq semantics with injected preemptions, migrations, signals and
// membarrier IPIs at every instruction boundary, within bounds. A failure comes
// back as a minimised counterexample: the values that broke the property, the
// per-CPU timeline, a replay token, a one-line JSON trace (docs/trace-schema.md)
// and a self-contained HTML timeline viewer.
//
// Example:
//
//     rseqmc::api::Scenario s = rseqmc::api::Scenario::FromFile("my_counter.rsq");
//     rseqmc::api::CheckOptions o;
//     o.kernel = "6.6";
//     o.max_events = 1;
//     rseqmc::api::CheckResult r = rseqmc::api::Check(s, o);
//     if (r.status == rseqmc::api::Status::kFail) {
//       std::cerr << r.counterexample->timeline << rseqmc::api::ReplayCommand(s, r.counterexample->token);
//     }
//
// Errors: every function that takes user input throws rseqmc::api::Error
// (a std::runtime_error) with the file, line, column and a hint when the input
// is malformed; none aborts the process on bad input.
#ifndef RSEQMC_INCLUDE_RSEQMC_RSEQMC_H_
#define RSEQMC_INCLUDE_RSEQMC_RSEQMC_H_

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#if defined(RSEQMC_API_BUILD)
#define RSEQMC_API __attribute__((visibility("default")))
#else
#define RSEQMC_API
#endif

namespace rseqmc::api {

// The library's version (the CMake package's, "MAJOR.MINOR.PATCH"); the
// shared library's soname carries MAJOR.
RSEQMC_API const char* Version();

// Bad input: a malformed scenario, an unknown kernel or strategy name, a
// schedule token that does not belong to the scenario. what() is the full
// diagnostic ("file:line:col: error: ...", the offending line, a hint).
class RSEQMC_API Error : public std::runtime_error {
 public:
  Error(const std::string& what, std::string file, uint32_t line, uint32_t column);
  const std::string& file() const { return file_; }  // "" when the error has no file (an option)
  uint32_t line() const { return line_; }             // 1-based; 0 = no position
  uint32_t column() const { return column_; }         // 1-based; 0 = no position

 private:
  std::string file_;
  uint32_t line_;
  uint32_t column_;
};

// Scenario constants to override (`const NAME = V` in the .rsq text), as the
// command line's `-D NAME=V` does. Naming a constant the scenario does not
// declare is an Error.
using Defines = std::map<std::string, int64_t>;

// A parsed and validated scenario. Cheap to copy (shares the immutable
// program). Made by FromText, FromFile, Builtin or ScenarioBuilder::Build.
class RSEQMC_API Scenario {
 public:
  // Parses `.rsq` text; `file` is the name used in diagnostics and in the
  // replay command (pass the path the text was read from, if any).
  static Scenario FromText(std::string_view rsq_text, const std::string& file = "<text>",
                           const Defines& defines = {});
  // Reads and parses a `.rsq` file. An unreadable file is an Error naming it.
  static Scenario FromFile(const std::string& path, const Defines& defines = {});
  // One of the scenarios built into the library (`rseqmc list`), e.g.
  // "percpu_counter" or "buggy/cpu_not_rechecked". Unknown name: Error.
  static Scenario Builtin(std::string_view name, const Defines& defines = {});
  // Names of the built-in scenarios, top level first, then buggy/.
  static std::vector<std::string> BuiltinNames();

  const std::string& name() const;  // the `scenario NAME` line
  const std::string& file() const;  // as given to FromText / FromFile; "" for a built one
  // The verdict the scenario declares with `expect`: "pass", or the failing
  // verdict's name ("property", "assert", "sigsegv", ...).
  std::string expected() const;
  // The scenario as `.rsq` text (the printer's canonical form): save it to
  // replay a counterexample of a scenario that was never a file.
  std::string Text() const;

  struct Impl;
  const Impl& impl() const { return *impl_; }

 private:
  explicit Scenario(std::shared_ptr<const Impl> impl);
  std::shared_ptr<const Impl> impl_;
  friend class ScenarioBuilder;
};

// Builds a scenario piece by piece: declarations with methods, function
// bodies as `.rsq` instruction text (scenarios/README.md, "Instructions").
// Build() assembles the `.rsq` text and parses it, so a built scenario is
// validated exactly like a file; an error names "<builder NAME>" with the line
// of the assembled text (shown in the message) that is wrong.
//
//     ScenarioBuilder b("inc");
//     b.Cpus(2).PerCpu("counter", "u64", /*stride_bytes=*/64)
//      .Function("worker", "  rseq_load r1, cpu_id_start\n  ...")
//      .Threads("w", "worker", 2).Property("sum(counter) == 2").Expect("pass");
//     Scenario s = b.Build();
class RSEQMC_API ScenarioBuilder {
 public:
  explicit ScenarioBuilder(std::string name);
  ScenarioBuilder& Description(const std::string& text);
  ScenarioBuilder& Cpus(uint32_t n);                                  // virtual CPUs, 1..64
  ScenarioBuilder& Const(const std::string& name, int64_t value);     // `const NAME = V`
  // A plain variable: `count` elements of `width` ("u64" or "u32"), all `init`.
  ScenarioBuilder& Var(const std::string& name, const std::string& width, uint32_t count = 1, int64_t init = 0);
  // A per-CPU variable, one block per CPU `stride_bytes` apart (0: packed).
  ScenarioBuilder& PerCpu(const std::string& name, const std::string& width, uint64_t stride_bytes = 0,
                          int64_t init = 0);
  // `func NAME` .. `end`; `body` is instruction lines, labels and `cs` lines.
  ScenarioBuilder& Function(const std::string& name, const std::string& body);
  // `count` threads NAME0.. running `entry`, affinity all CPUs, thread i
  // starting on CPU `start_cpu` if given, else on CPU i % the CPU count set so
  // far (call Cpus first).
  ScenarioBuilder& Threads(const std::string& name, const std::string& entry, uint32_t count,
                           std::optional<uint32_t> start_cpu = std::nullopt);
  ScenarioBuilder& Signal(const std::string& signal, const std::string& handler);  // "SIGUSR1", handler function
  ScenarioBuilder& Property(const std::string& expression);  // e.g. "sum(counter) == 2"
  ScenarioBuilder& Expect(const std::string& verdict);       // "pass" or "fail property" / "fail assert" ...
  // The assembled `.rsq` text (what Build parses).
  std::string Text() const;
  // Parses and validates Text(). Throws Error.
  Scenario Build(const Defines& defines = {}) const;

 private:
  std::string name_;
  uint32_t cpus_ = 1;
  std::string head_, decls_, funcs_, tail_;  // .rsq text: header, data, functions, threads..expect
};

// How to explore. Every field has the `rseqmc check` default.
struct CheckOptions {
  // rseq semantics: "4.18" .. "5.19" or "6.0" .. "6.18" (also a `uname -r`
  // string such as "6.1.0-13-amd64"); "" = the running kernel's model if it
  // is modelled, else 6.18. Anything else is an Error naming the choices.
  std::string kernel;
  // "dpor" (exhaustive, partial-order reduction), "dfs", "stateful",
  // "random" or "pct". Anything else is an Error.
  std::string strategy = "dpor";
  uint32_t max_events = 1;                    // injected events per execution, all kinds
  std::optional<uint32_t> preemption_bound;   // injected preemptions per execution
  std::optional<uint32_t> max_migrations;
  std::optional<uint32_t> max_signals;
  std::optional<uint32_t> max_ipis;
  bool iterative = false;                     // 0, 1, .., max_events: the first failure has the fewest events
  uint64_t seed = 1;                          // random and pct
  uint32_t pct_depth = 3;                     // pct: depth-1 change points, 1..64
  std::optional<uint64_t> max_executions;     // stop early (verdict kIncomplete); random/pct default 10000
  std::optional<double> time_limit_seconds;   // stop early (verdict kIncomplete)
  std::optional<uint64_t> max_steps;          // IR instructions per execution (default 100000)
  // Check throws Error for a pct_depth outside 1..64, a max_steps or
  // max_executions of 0, or a time limit that is not a positive number.
};

enum class Status {
  kPass,        // the bounded space was exhausted without a failure
  kFail,        // an execution failed: see CheckResult::counterexample
  kIncomplete,  // a budget stopped the search first: no failure so far, not a proof
};

// A failing execution, confirmed by replay and minimised to the fewest events.
struct Counterexample {
  std::string verdict;       // "property", "assert", "sigsegv", "deadlock", "steplimit", ...
  std::string message;       // why it failed (property text, assert location, kill reason)
  std::string broken;        // "broken: property ..." lines with the values that broke it
  std::string timeline;      // the per-CPU timeline text, as `rseqmc replay` prints it
  std::string token;         // replay token (`rseqmc replay FILE --schedule TOKEN`, api::Replay)
  std::string json;          // the execution as one JSON object (docs/trace-schema.md)
  uint32_t events = 0;       // injected events in the minimised schedule
  uint64_t steps = 0;        // IR instructions executed
  bool deterministic = true;  // the replay reproduced the failure (false: a bug in rseqmc; see message)
};

struct CheckResult {
  Status status = Status::kPass;
  std::string verdict;        // "pass" or the failure's verdict name
  bool as_expected = true;    // verdict equals the scenario's `expect` line
  uint64_t executions = 0;    // executions explored
  uint64_t distinct_outcomes = 0;
  std::string stop_reason;    // "exhausted", "failure", "max-executions", "time-limit", ...
  std::string bounds;         // the bounds explored, "events<=1 ..."
  std::string kernel_model;   // e.g. "6.3-6.18 legacy + mm_cid"
  double seconds = 0;         // wall time of the exploration
  std::optional<Counterexample> counterexample;  // set iff status == kFail
};

// Model-checks `s` within the bounds of `o` (as `rseqmc check FILE`). Throws
// Error for a bad option (kernel, strategy) or a strategy that cannot run `s`.
RSEQMC_API CheckResult Check(const Scenario& s, const CheckOptions& o = {});

// One execution replayed from a token; its verdict, trace and timeline.
struct Replayed {
  std::string verdict;    // "pass" or the failure's verdict name
  std::string broken;     // as Counterexample::broken ("" when it passed)
  std::string timeline;
  std::string json;
};

// Replays `token` (from a Counterexample or `rseqmc check`) on `s`, under the
// kernel model the token records. `max_steps` as in CheckOptions. Throws Error
// for a token of another scenario or a malformed one.
RSEQMC_API Replayed Replay(const Scenario& s, const std::string& token, std::optional<uint64_t> max_steps = {});

// The self-contained HTML timeline viewer of a replayed execution (what
// `rseqmc replay --html` writes): lanes per CPU and thread, shaded critical
// sections, injected events, aborts, broken values, a step slider.
RSEQMC_API std::string ReplayHtml(const Scenario& s, const std::string& token, std::optional<uint64_t> max_steps = {});

// "rseqmc replay FILE --schedule TOKEN" with FILE as `scenario_file` (or the
// scenario's file), quoted for a POSIX shell.
RSEQMC_API std::string ReplayCommand(const Scenario& s, const std::string& token, const std::string& scenario_file = "");

}  // namespace rseqmc::api

#endif  // RSEQMC_INCLUDE_RSEQMC_RSEQMC_H_
