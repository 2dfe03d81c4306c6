#include "model/counterexample.h"

#include <cinttypes>
#include <cstdio>
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

// Replays `schedule` under `search`'s RunOptions; its oracle, if set, judges a
// passing run as the explorer does (a message makes it kAssertFailed). `hash`
// gets the trace hash from before the oracle's verdict, as Failure::trace_hash.
ExecutionResult Replay(const Scenario& s, const ExploreOptions& search, const Schedule& schedule, bool trace,
                       uint64_t* hash = nullptr) {
  RunOptions o = search.run;
  o.record_trace = trace;
  Simulator sim(s, o);
  ReplayScheduler replay(schedule);
  ExecutionResult r = sim.Run(replay);
  if (hash != nullptr) *hash = r.TraceHash();
  if (r.verdict == Verdict::kPass && search.oracle) {
    std::string why = search.oracle(r);
    if (!why.empty()) {
      r.verdict = Verdict::kAssertFailed;
      r.message = std::move(why);
    }
  }
  return r;
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

  // Determinism self-check: the failing schedule, re-run, fails the same way.
  uint64_t again_hash = 0;
  const ExecutionResult again = Replay(s, search, failure.schedule, /*trace=*/false, &again_hash);
  if (again.verdict != replay_verdict) {
    cx.deterministic = false;
    cx.determinism_problem = "the failing schedule replayed to verdict " + std::string(VerdictName(again.verdict)) +
                             ", not " + VerdictName(replay_verdict);
  } else if (!livelock && again_hash != failure.trace_hash) {
    cx.deterministic = false;
    cx.determinism_problem = "the failing schedule replayed to trace hash " + Hex(again_hash) +
                             ", not the explored execution's " + Hex(failure.trace_hash);
  }

  cx.schedule = MinimizeEvents(s, failure.schedule, replay_verdict, search, &cx.stats);
  cx.token = EncodeSchedule(s, cx.schedule);
  // Untraced first: its step count says whether a trace fits the memory
  // budget (a spin-wait livelock replays to --max-steps, which may be 1e9).
  ExecutionResult untraced = Replay(s, search, cx.schedule, /*trace=*/false);
  if (search.max_memory_bytes != 0 && untraced.steps > search.max_memory_bytes / kCounterexampleBytesPerStep) {
    cx.trace_omitted = TraceOmittedText(untraced.steps, search.max_memory_bytes);
    cx.run = std::move(untraced);
    if (cx.deterministic && cx.run.verdict != replay_verdict) {
      cx.deterministic = false;
      cx.determinism_problem = "the minimised schedule replayed to verdict " +
                               std::string(VerdictName(cx.run.verdict)) + ", not " + VerdictName(replay_verdict);
    }
    return cx;
  }
  cx.run = Replay(s, search, cx.schedule, /*trace=*/true);
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
