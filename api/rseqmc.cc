// The public API (include/rseqmc/rseqmc.h): a thin layer over scenarios/
// (parser, printer, built-ins), model/ (Explore, counterexamples) and sim/
// (replay, timeline, JSON, HTML). It converts internal types to the public
// ones and every InputError into api::Error; it decides nothing itself.
#include "rseqmc/rseqmc.h"

#include <optional>
#include <string>
#include <utility>

#include "model/counterexample.h"
#include "model/explorer.h"
#include "scenarios/builtin.h"
#include "scenarios/parser.h"
#include "scenarios/printer.h"
#include "sim/diag.h"
#include "sim/kernel_model.h"
#include "sim/schedule.h"
#include "sim/simulator.h"
#include "sim/trace.h"
#include "sim/trace_html.h"

#ifndef RSEQMC_VERSION_STRING
#error "the build defines RSEQMC_VERSION_STRING (api/CMakeLists.txt)"
#endif

namespace rseqmc::api {

struct Scenario::Impl {
  rseqmc::Scenario scenario;
  Defines defines;  // what it was parsed with: the replay command repeats them
};

namespace {

Error FromInputError(const InputError& e) { return Error(e.Format(), e.file(), e.loc().line, e.loc().column); }

Error OptionError(const std::string& what) { return Error("rseqmc: " + what, "", 0, 0); }

// Runs `f`, turning the library's InputError into api::Error.
template <typename F>
auto Translating(F&& f) -> decltype(f()) {
  try {
    return f();
  } catch (const InputError& e) {
    throw FromInputError(e);
  }
}

KernelVersion PickKernel(const std::string& name) {
  if (name.empty()) return DefaultKernelVersion();
  std::string why;
  const std::optional<KernelVersion> k = ParseKernelVersion(name, &why);
  if (!k) throw OptionError("kernel \"" + name + "\": " + why);
  return *k;
}

Bounds PickBounds(const CheckOptions& o) {
  Bounds b;
  b.max_events = o.max_events;
  b.max_preemptions = o.preemption_bound.value_or(kUnbounded);
  b.max_migrations = o.max_migrations.value_or(kUnbounded);
  b.max_signals = o.max_signals.value_or(kUnbounded);
  b.max_ipis = o.max_ipis.value_or(kUnbounded);
  return b;
}

ExploreOptions PickExploreOptions(const CheckOptions& o) {
  ExploreOptions e;
  const std::optional<StrategyKind> strategy = ParseStrategy(o.strategy);
  if (!strategy) throw OptionError("strategy \"" + o.strategy + "\": expected dpor, dfs, stateful, random or pct");
  if (o.pct_depth < 1 || o.pct_depth > 64) throw OptionError("pct_depth " + std::to_string(o.pct_depth) + ": expected 1 .. 64");
  if (o.max_steps == 0u) throw OptionError("max_steps 0: expected a positive number of instructions");
  if (o.max_executions == 0u) throw OptionError("max_executions 0: expected a positive count (leave it unset for no limit)");
  if (o.time_limit_seconds && !(*o.time_limit_seconds > 0)) {
    throw OptionError("time_limit_seconds " + std::to_string(*o.time_limit_seconds) + ": expected a positive number of seconds");
  }
  e.strategy = *strategy;
  e.bounds = PickBounds(o);
  e.run.kernel = PickKernel(o.kernel);
  if (o.max_steps) e.run.max_steps = *o.max_steps;
  e.seed = o.seed;
  e.pct_depth = o.pct_depth;
  e.max_executions = o.max_executions.value_or(0);
  e.time_limit_s = o.time_limit_seconds.value_or(0);
  e.iterative = o.iterative;
  return e;
}

Counterexample MakeCounterexample(const rseqmc::Scenario& s, const rseqmc::Counterexample& cx) {
  Counterexample out;
  out.verdict = VerdictName(cx.run.verdict);
  out.message = cx.deterministic ? cx.run.message : cx.determinism_problem;
  out.broken = FormatBroken(s, cx.run);
  out.timeline = FormatTimeline(s, cx.run);
  out.token = cx.token;
  out.json = FormatJson(s, cx.run);
  out.events = cx.stats.events_after;
  out.steps = cx.run.steps;
  out.deterministic = cx.deterministic;
  return out;
}

ExecutionResult ReplayTraced(const rseqmc::Scenario& s, const std::string& token, std::optional<uint64_t> max_steps) {
  const Schedule schedule = DecodeSchedule(s, token);
  RunOptions run;
  run.record_trace = true;
  run.kernel = KernelVersion{schedule.kernel, KernelModelName(schedule.kernel)};
  if (max_steps) run.max_steps = *max_steps;
  Simulator sim(s, run);
  ReplayScheduler replay(schedule);
  return sim.Run(replay);
}

std::string Broken(const rseqmc::Scenario& s, const ExecutionResult& r) {
  return r.verdict == Verdict::kPass ? "" : FormatBroken(s, r);
}

}  // namespace

const char* Version() { return RSEQMC_VERSION_STRING; }

Error::Error(const std::string& what, std::string file, uint32_t line, uint32_t column)
    : std::runtime_error(what), file_(std::move(file)), line_(line), column_(column) {}

Scenario::Scenario(std::shared_ptr<const Impl> impl) : impl_(std::move(impl)) {}

Scenario Scenario::FromText(std::string_view rsq_text, const std::string& file, const Defines& defines) {
  return Translating([&] { return Scenario(std::make_shared<const Impl>(Impl{ParseScenario(rsq_text, file, defines), defines})); });
}

Scenario Scenario::FromFile(const std::string& path, const Defines& defines) {
  return Translating([&] { return Scenario(std::make_shared<const Impl>(Impl{ParseScenarioFile(path, defines), defines})); });
}

Scenario Scenario::Builtin(std::string_view name, const Defines& defines) {
  const BuiltinScenario* b = FindBuiltinScenario(name);
  if (b == nullptr) throw OptionError("no built-in scenario \"" + std::string(name) + "\" (Scenario::BuiltinNames lists them)");
  return FromText(b->text, b->path, defines);
}

std::vector<std::string> Scenario::BuiltinNames() {
  std::vector<std::string> names;
  for (const BuiltinScenario& b : BuiltinScenarios()) names.push_back(b.name);
  return names;
}

const std::string& Scenario::name() const { return impl_->scenario.name; }
const std::string& Scenario::file() const { return impl_->scenario.file; }
std::string Scenario::expected() const { return VerdictName(impl_->scenario.expected); }
std::string Scenario::Text() const { return PrintScenario(impl_->scenario); }

CheckResult Check(const Scenario& scenario, const CheckOptions& o) {
  const rseqmc::Scenario& s = scenario.impl().scenario;
  const ExploreOptions options = PickExploreOptions(o);
  const ExploreResult r = Translating([&] { return Explore(s, options); });
  CheckResult out;
  out.executions = r.executions;
  out.distinct_outcomes = r.distinct_outcomes;
  out.stop_reason = r.stop_reason;
  out.bounds = options.bounds.ToString();
  out.kernel_model = KernelModelName(options.run.kernel.model);
  out.seconds = r.elapsed_s;
  const Verdict found = r.failure ? r.failure->verdict : Verdict::kPass;
  out.verdict = VerdictName(found);
  out.as_expected = found == s.expected;
  if (r.failure) {
    out.status = Status::kFail;
    out.counterexample = MakeCounterexample(s, BuildCounterexample(s, FewerEventsSearch(options), *r.failure));
  } else {
    out.status = r.complete ? Status::kPass : Status::kIncomplete;
  }
  return out;
}

Replayed Replay(const Scenario& scenario, const std::string& token, std::optional<uint64_t> max_steps) {
  const rseqmc::Scenario& s = scenario.impl().scenario;
  const ExecutionResult r = Translating([&] { return ReplayTraced(s, token, max_steps); });
  return Replayed{VerdictName(r.verdict), Broken(s, r), FormatTimeline(s, r), FormatJson(s, r)};
}

std::string ReplayHtml(const Scenario& scenario, const std::string& token, std::optional<uint64_t> max_steps) {
  const rseqmc::Scenario& s = scenario.impl().scenario;
  const ExecutionResult r = Translating([&] { return ReplayTraced(s, token, max_steps); });
  return FormatHtml(s, r, {Broken(s, r), ReplayCommand(scenario, token)});
}

std::string ReplayCommand(const Scenario& scenario, const std::string& token, const std::string& scenario_file) {
  const std::string file = scenario_file.empty() ? scenario.file() : scenario_file;
  return ReplayCommandLine("rseqmc", "replay", file, token, scenario.impl().defines, std::nullopt);
}

}  // namespace rseqmc::api
