#include "model/counterexample.h"

#include <chrono>
#include <cinttypes>
#include <cstdio>
#include <functional>
#include <set>
#include <string_view>
#include <sstream>

#include "scenarios/printer.h"
#include "sim/placement.h"
#include "sim/trace.h"

namespace rseqmc {
namespace {

std::string Hex(uint64_t v) {
  char buf[24];
  std::snprintf(buf, sizeof buf, "%016" PRIx64, v);
  return buf;
}

// The explorer stops an execution in which every thread spins without effect
// and reports it as a livelock: replayed on its own the same schedule runs on
// to the step budget (verdict kLivelock there too), so its trace hash differs
// from the stopped execution's.
bool ExplorerLivelock(const Failure& f) { return f.verdict == Verdict::kLivelock; }

// search.interrupt and search.time_limit_s (counted from construction), as
// one poll for the runs and the minimisation; once true, stays true.
class StopPoll {
 public:
  explicit StopPoll(const ExploreOptions& search)
      : interrupt_(search.interrupt), time_limit_s_(search.time_limit_s), start_(std::chrono::steady_clock::now()) {}
  bool operator()() {
    fired_ = fired_ || (interrupt_ != nullptr && interrupt_->load(std::memory_order_relaxed)) ||
             (time_limit_s_ > 0 && ElapsedS() >= time_limit_s_);
    return fired_;
  }
  bool fired() const { return fired_; }
  // What is left of the time limit (0 = unlimited; a little when none is left).
  double RemainingS() const { return time_limit_s_ > 0 ? std::max(time_limit_s_ - ElapsedS(), 1e-9) : 0; }

 private:
  double ElapsedS() const { return std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count(); }
  const std::atomic<bool>* interrupt_;
  double time_limit_s_;
  std::chrono::steady_clock::time_point start_;
  bool fired_ = false;
};

// Replays `schedule` under `search`'s RunOptions; its oracle, if set, judges a
// passing run as the explorer does (a message makes it kAssertFailed). `hash`
// gets the trace hash from before the oracle's verdict, as Failure::trace_hash.
// `stop`, if set, is polled inside the run (Simulator::set_stop_poll); a run
// it ends comes back stopped, without a verdict.
ExecutionResult Replay(const Scenario& s, const ExploreOptions& search, const Schedule& schedule, bool trace,
                       uint64_t* hash = nullptr, StopPoll* stop = nullptr) {
  RunOptions o = search.run;
  o.record_trace = trace;
  Simulator sim(s, o);
  if (stop != nullptr) sim.set_stop_poll([stop] { return (*stop)(); });
  ReplayScheduler replay(schedule);
  ExecutionResult r = sim.Run(replay);
  if (hash != nullptr) *hash = r.TraceHash();
  if (r.stopped) return r;
  if (r.verdict == Verdict::kPass && search.oracle) {
    std::string why = search.oracle(r);
    if (!why.empty()) {
      r.verdict = Verdict::kAssertFailed;
      r.message = std::move(why);
    }
  }
  return r;
}

// Counterexample::trace_omitted for a replay stopped at step `steps`.
std::string TraceStoppedText(uint64_t steps) {
  return "not recorded: the interrupt or the time limit stopped its replay at step " + std::to_string(steps) +
         "; the schedule below replays it in full";
}

// Counterexample::trace_omitted for an execution of `steps` steps.
std::string TraceOmittedText(uint64_t steps, uint64_t max_memory_bytes) {
  const uint64_t mib = uint64_t{1} << 20;
  const bool overflows = steps > UINT64_MAX / kCounterexampleBytesPerStep;
  const std::string need =
      overflows ? "more than 2^64 bytes" : "about " + std::to_string(steps * kCounterexampleBytesPerStep / mib + 1) + " MiB";
  return "not recorded: the execution runs " + std::to_string(steps) + " steps, whose timeline would take " + need +
         ", over --max-memory " + std::to_string(max_memory_bytes / mib) +
         " MiB; replay it with a smaller --max-steps, or raise --max-memory";
}

void CollectSymbols(const Expr& e, std::set<std::string>& out) {
  if (e.kind == Expr::Kind::kSymbol || e.kind == Expr::Kind::kIndex || e.kind == Expr::Kind::kSum) {
    out.insert(e.name);
  }
  for (const Expr& a : e.args) CollectSymbols(a, out);
}

bool IsComparison(const Expr& e) {
  static const std::set<std::string> kOps = {"==", "!=", "<", "<=", ">", ">="};
  return e.kind == Expr::Kind::kBinary && e.args.size() == 2 && kOps.count(e.op) > 0;
}

}  // namespace

Counterexample BuildCounterexample(const Scenario& s, const ExploreOptions& search, const Failure& failure) {
  Counterexample cx;
  const bool livelock = ExplorerLivelock(failure);
  const Verdict replay_verdict = failure.verdict;
  // search.interrupt and search.time_limit_s bound all of it, inside the
  // runs too: a stop leaves what was done, marked (Counterexample::stopped).
  StopPoll stop(search);

  // Determinism self-check: the failing schedule, re-run, fails the same way.
  uint64_t again_hash = 0;
  const ExecutionResult again = Replay(s, search, failure.schedule, /*trace=*/false, &again_hash, &stop);
  const bool cut = again.stopped && stop.fired();
  bool checked = !cut;  // every replay ran to its end (Counterexample::verified)
  if (cut) {
    // Cut short: nothing to compare.
  } else if (again.verdict != replay_verdict) {
    cx.deterministic = false;
    cx.determinism_problem = "the failing schedule replayed to verdict " + std::string(VerdictName(again.verdict)) +
                             ", not " + VerdictName(replay_verdict);
  } else if (!livelock && again_hash != failure.trace_hash) {
    cx.deterministic = false;
    cx.determinism_problem = "the failing schedule replayed to trace hash " + Hex(again_hash) +
                             ", not the explored execution's " + Hex(failure.trace_hash);
  }

  ExploreOptions minimise = search;
  minimise.time_limit_s = stop.RemainingS();
  cx.schedule = MinimizeEvents(s, failure.schedule, replay_verdict, minimise, &cx.stats);
  cx.token = EncodeSchedule(s, cx.schedule);
  // Untraced first: its step count says whether a trace fits the memory
  // budget (a spin-wait livelock replays to --max-steps, which may be 1e9).
  ExecutionResult untraced = Replay(s, search, cx.schedule, /*trace=*/false, nullptr, &stop);
  if (untraced.stopped && stop.fired()) {
    cx.trace_omitted = TraceStoppedText(untraced.steps);
    cx.run = std::move(untraced);
    cx.stopped = true;
    return cx;
  }
  if (search.max_memory_bytes != 0 && untraced.steps > search.max_memory_bytes / kCounterexampleBytesPerStep) {
    cx.trace_omitted = TraceOmittedText(untraced.steps, search.max_memory_bytes);
    cx.run = std::move(untraced);
    if (cx.deterministic && cx.run.verdict != replay_verdict) {
      cx.deterministic = false;
      cx.determinism_problem = "the minimised schedule replayed to verdict " +
                               std::string(VerdictName(cx.run.verdict)) + ", not " + VerdictName(replay_verdict);
    }
    cx.verified = checked && cx.deterministic;
    cx.stopped = stop.fired() || cx.stats.stopped;
    return cx;
  }
  ExecutionResult traced = Replay(s, search, cx.schedule, /*trace=*/true, nullptr, &stop);
  if (traced.stopped && stop.fired()) {
    // The untraced replay stands for it: its verdict and final state.
    cx.trace_omitted = TraceStoppedText(traced.steps);
    cx.run = std::move(untraced);
    cx.stopped = true;
    return cx;
  }
  cx.run = std::move(traced);
  if (cx.deterministic && (cx.run.verdict != replay_verdict || untraced.verdict != replay_verdict)) {
    cx.deterministic = false;
    cx.determinism_problem = "the minimised schedule replayed to verdict " + std::string(VerdictName(cx.run.verdict)) +
                             " (traced) and " + VerdictName(untraced.verdict) + " (untraced), not " +
                             VerdictName(replay_verdict);
  } else if (cx.deterministic && cx.run.TraceHash() != untraced.TraceHash()) {
    cx.deterministic = false;
    cx.determinism_problem = "the minimised schedule replayed to trace hashes " + Hex(cx.run.TraceHash()) +
                             " (traced) and " + Hex(untraced.TraceHash()) + " (untraced)";
  }
  cx.verified = checked && cx.deterministic;
  cx.stopped = stop.fired() || cx.stats.stopped;
  return cx;
}

std::string FormatBroken(const Scenario& s, const ExecutionResult& r) {
  std::ostringstream out;
  bool any_property = false;
  const std::string symbols = FormatSymbols(s, r);
  for (size_t i = 0; i < s.properties.size() && i < r.properties.size(); ++i) {
    const Property& p = s.properties[i];
    const PropertyOutcome& po = r.properties[i];
    if (po.holds) continue;
    any_property = true;
    out << "broken: property " << p.text;
    if (!s.file.empty() && p.loc.line > 0) out << "  (" << s.file << ":" << p.loc.line << ")";
    out << "\n";
    if (!po.error.empty()) {
      out << "  error: " << po.error << "\n";
    } else {
      out << "  value: " << po.value << " (false)\n";
    }
    std::set<std::string> shown;
    if (IsComparison(p.expr)) {
      for (const Expr& side : p.expr.args) {
        if (side.kind == Expr::Kind::kConst && side.name.empty()) continue;  // a literal speaks for itself
        const PropertyOutcome v = EvaluateProperty(s, side, r);
        const std::string line = PrintExpr(side) + " = " + (v.error.empty() ? std::to_string(v.value) : v.error);
        if (shown.insert(line).second) out << "  " << line << "\n";
      }
    }
    std::set<std::string> names;
    CollectSymbols(p.expr, names);
    std::istringstream lines(symbols);
    for (std::string line; std::getline(lines, line);) {
      const std::string name = line.substr(0, line.find_first_of("[ "));
      if (names.count(name) && shown.insert(line).second) out << "  " << line << "\n";
    }
  }
  if (!any_property) out << "broken: " << VerdictName(r.verdict) << (r.message.empty() ? "" : ": " + r.message) << "\n";
  return out.str();
}

std::string FormatScheduleEntries(const Scenario& s, const Schedule& schedule) {
  std::string out;
  if (!schedule.placement.empty()) out += "  initial placement: " + DescribePlacement(s, schedule.placement) + "\n";
  for (const ScheduleEntry& e : schedule.entries) {
    out += "  at boundary " + std::to_string(e.boundary) + ": " + ToString(e.decision) + "\n";
  }
  return out;
}

ExploreOptions FewerEventsSearch(const ExploreOptions& explored) {
  ExploreOptions search;
  search.bounds = explored.bounds;
  search.run = explored.run;
  search.interrupt = explored.interrupt;
  search.oracle = explored.oracle;  // a failure the oracle found must stay one
  search.defer_events = explored.defer_events;  // --all-event-positions searches every position here too
  search.max_executions = kFewerEventsBudget;
  search.max_memory_bytes = explored.max_memory_bytes;  // also bounds the counterexample's trace
  return search;
}

std::string ReplayCommandLine(const std::string& argv0, const std::string& verb, const std::string& file,
                              const std::string& token, const std::map<std::string, int64_t>& defines,
                              std::optional<uint64_t> max_steps) {
  std::string command = argv0 + " " + verb + " " + ShellQuote(file) + " --schedule " + token;
  for (const auto& [name, value] : defines) command += " -D " + ShellQuote(name + "=" + std::to_string(value));
  if (max_steps) command += " --max-steps " + std::to_string(*max_steps);
  return command;
}

std::string ShellQuote(const std::string& arg) {
  bool plain = !arg.empty();
  for (char c : arg) {
    const bool ok = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
                    std::string_view("_./=:+,@%-").find(c) != std::string_view::npos;
    if (!ok) plain = false;
  }
  if (plain) return arg;
  std::string q = "'";
  for (char c : arg) {
    if (c == '\'') {
      q += "'\\''";
    } else {
      q += c;
    }
  }
  return q + "'";
}

}  // namespace rseqmc
