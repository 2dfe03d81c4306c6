// `rseqmc diff-kernels A B FILE`: the outcomes that one kernel ABI allows and
// the other does not, each with a schedule that replays it.
#include <algorithm>
#include <cstdio>
#include <iostream>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "model/counterexample.h"
#include "model/explorer.h"
#include "sim/diag.h"
#include "sim/ir.h"
#include "sim/kernel/abi.h"
#include "sim/kernel_model.h"
#include "sim/schedule.h"
#include "tools/rseqmc/cli_util.h"
#include "tools/rseqmc/commands.h"
#include "tools/rseqmc/progress_line.h"

namespace rseqmc::cli {
namespace {

// What one ABI's exploration reached: every outcome with the schedule of the
// first execution that reached it, and whether the bounded space was
// exhausted (else `stop_reason` says why not).
struct Explored {
  std::map<Outcome, Schedule> outcomes;
  uint64_t executions = 0;
  double elapsed_s = 0;
  bool complete = false;
  std::string stop_reason;
};

// The budgets of `diff-kernels`: per ABI, as --max-executions and
// --time-limit give them (0 = unlimited).
struct Budget {
  uint64_t max_executions = 0;
  double time_limit_s = 0;
};

// Explores `s` under `kernel` within `bounds` (DPOR), stopping early on the
// budget or Ctrl-C, with the progress line on stderr.
Explored Outcomes(const Scenario& s, const KernelVersion& kernel, const Bounds& bounds, const Budget& budget,
                  ProgressLine& progress) {
  Explored out;
  ExploreOptions o;
  o.strategy = StrategyKind::kDpor;
  o.bounds = bounds;
  o.run.kernel = kernel;
  o.stop_at_first_failure = false;
  o.collect_outcomes = false;
  o.max_executions = budget.max_executions;
  o.time_limit_s = budget.time_limit_s;
  o.interrupt = &InterruptFlag();
  const std::string who = "rseqmc diff-kernels: " + s.name + " under " + kernel.text;
  o.progress = [&](const ExploreProgress& p) { progress.Show(ExploreProgressText(who, p)); };
  o.on_execution = [&](const ExecutionResult& r) { out.outcomes.try_emplace(OutcomeOf(s, r), r.schedule); };
  const ExploreResult r = Explore(s, o);
  progress.Clear();
  out.executions = r.executions;
  out.elapsed_s = r.elapsed_s;
  out.complete = r.complete;
  out.stop_reason = r.stop_reason;
  return out;
}

// "complete (1234 executions, 0.8 s)" or "INCOMPLETE: time-limit after 1234
// executions (2.0 s)".
std::string Status(const Explored& e) {
  char secs[32];
  std::snprintf(secs, sizeof secs, "%.1f s", e.elapsed_s);
  const std::string n = std::to_string(e.executions) + " execution" + (e.executions == 1 ? "" : "s");
  if (e.complete) return "complete (" + n + ", " + secs + ")";
  return "INCOMPLETE: " + e.stop_reason + " after " + n + " (" + secs + ")";
}

// "pass; ret t0=2 t1=0; gen=1 slabs={2,0}; t0 saw cpu=0" for reports.
std::string Describe(const Scenario& s, const Outcome& o) {
  std::string out = VerdictName(o.verdict);
  out += "; ret";
  for (size_t t = 0; t < o.returns.size() && t < s.threads.size(); ++t) {
    out += " " + s.threads[t].name + "=" + std::to_string(o.returns[t]);
  }
  out += ";";
  for (const Symbol& sym : s.program.symbols) {
    const uint64_t width = sym.width == Width::kU64 ? 8 : 4;
    const uint64_t n = sym.size_bytes / width;
    out += " " + sym.name + "=" + (n > 1 ? "{" : "");
    for (uint64_t i = 0; i < n && i < 8; ++i) {
      uint64_t v = 0;
      const uint64_t at = sym.address - kDataBase + i * width;
      for (uint64_t b = 0; b < width && at + b < o.symbols.size(); ++b) v |= uint64_t{o.symbols[at + b]} << (8 * b);
      out += (i ? "," : "") + std::to_string(v);
    }
    out += n > 8 ? ",...}" : n > 1 ? "}" : "";
  }
  return out;
}

KernelVersion Kernel(const std::string& text) {
  std::string why;
  const std::optional<KernelVersion> k = ParseKernelVersion(text, &why);
  if (!k) throw UsageError("kernel '" + text + "': " + why);
  return *k;
}

}  // namespace

std::string DiffKernelsHelp() {
  return "usage: rseqmc diff-kernels A B FILE [--max-events N] [--max-executions N]\n"
         "                           [--time-limit SECONDS] [-D NAME=VALUE]...\n"
         "\n"
         "Explores FILE (a .rsq file or a built-in name) exhaustively (DPOR, within --max-events\n"
         "injected events, default 2) under kernel ABI A and under B (names as 'rseqmc kernels'\n"
         "lists them, or any version they cover), and prints the outcomes (verdict, return values,\n"
         "final memory) that one ABI reaches and the other does not, each with the command that\n"
         "replays it (the schedule token records its ABI).\n"
         "\n"
         "--max-executions N stops each ABI's exploration after N executions; --time-limit SECONDS\n"
         "bounds the whole command (A gets half, B the rest). A progress line goes to stderr about\n"
         "once a second; Ctrl-C stops the exploration under way within a second (a second Ctrl-C\n"
         "quits at once). For each ABI the report says whether its exploration is complete. An\n"
         "outcome reached under A but not under B is a proven difference only when B's exploration\n"
         "is complete; otherwise it is listed as 'not reached so far' (it may be unexplored).\n"
         "\n"
         "Exit status: 0 both explorations complete and the ABIs reach the same outcomes; 1 a proven\n"
         "difference; 2 bad usage or input; 3 no proven difference but an exploration is incomplete\n"
         "(--max-executions, --time-limit), or interrupted (Ctrl-C: always 3, as for 'check').\n";
}

namespace {

// The command line of `diff-kernels`.
struct DiffArgs {
  std::vector<std::string> pos;
  std::vector<std::string> define_args;
  Bounds bounds;
  uint64_t max_executions = 0;
  double time_limit_s = 0;
};

// Parses `args`; nullopt for --help (printed). Throws UsageError.
std::optional<DiffArgs> ParseDiffArgs(const std::vector<std::string>& args) {
  DiffArgs d;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (a == "--help" || a == "-h") {
      std::cout << DiffKernelsHelp();
      return std::nullopt;
    }
    if (a.starts_with("-") && a != "--max-events" && a != "-D" && a != "--max-executions" && a != "--time-limit") {
      throw UsageError("unrecognised option '" + a + "'");
    }
    if (!a.starts_with("-")) {
      d.pos.push_back(a);
      continue;
    }
    if (i + 1 >= args.size()) throw UsageError(a + " needs a value");
    const std::string& v = args[++i];
    if (a == "-D") {
      d.define_args.push_back(v);
    } else if (a == "--max-events") {
      if (v.empty() || v.size() > 2 || v.find_first_not_of("0123456789") != std::string::npos) {
        throw UsageError("--max-events " + v + ": expected a count 0..99");
      }
      d.bounds.max_events = static_cast<uint32_t>(std::stoul(v));
    } else if (a == "--max-executions") {
      const std::optional<uint64_t> n = ParseUint64(v);
      if (!n || *n == 0) throw UsageError("--max-executions " + v + ": expected a positive integer");
      d.max_executions = *n;
    } else {
      const std::optional<double> t = ParseSeconds(v);
      if (!t || *t <= 0) {
        throw UsageError("--time-limit " + v + ": expected seconds in decimal, more than 0 and below 1e9 (600, 0.5)");
      }
      d.time_limit_s = *t;
    }
  }
  if (d.pos.size() != 3) throw UsageError("expected two kernels and a scenario: diff-kernels A B FILE");
  return d;
}

}  // namespace

int DiffKernelsCommand(const std::vector<std::string>& args, const std::string& argv0) {
  const std::optional<DiffArgs> d = ParseDiffArgs(args);
  if (!d) return kExitPass;
  const std::vector<std::string>& pos = d->pos;
  const KernelVersion ka = Kernel(pos[0]), kb = Kernel(pos[1]);
  if (ka.model == kb.model) {
    // Nothing to compare: the same model explored twice has the same outcomes.
    throw UsageError("kernels '" + pos[0] + "' and '" + pos[1] + "' denote one model (" + KernelModelName(ka.model) +
                     "): there is nothing to compare; name kernels of two models ('rseqmc kernels' lists them)");
  }
  const std::map<std::string, int64_t> defines = ParseDefines(d->define_args);
  const Scenario s = LoadScenario(pos[2], defines);
  // A pair the scenario cannot run under (a 2015-RFC program and a merged
  // kernel) is bad input before any exploration.
  for (const KernelVersion& k : {ka, kb}) {
    if (std::optional<AbiMismatch> no = AbiFor(k.model).NotApplicable(s)) {
      throw InputError(s.file, no->loc, no->message, "", no->hint);
    }
  }
  SigintGuard sigint;
  ProgressLine progress;
  Budget budget{d->max_executions, d->time_limit_s / 2};
  const Explored a = Outcomes(s, ka, d->bounds, budget, progress);
  const bool interrupted_a = a.stop_reason == "interrupted";
  if (d->time_limit_s > 0) budget.time_limit_s = std::max(d->time_limit_s - a.elapsed_s, 0.05);
  // After Ctrl-C under A, B is not explored at all (its empty result is
  // incomplete, so nothing is claimed missing under it).
  const Explored b = interrupted_a ? Explored{{}, 0, 0, false, "interrupted"}
                                   : Outcomes(s, kb, d->bounds, budget, progress);
  std::cout << s.name << ": outcomes within " << d->bounds.ToString() << " under " << ka.text << " and " << kb.text
            << "\n"
            << "  under " << ka.text << ": " << Status(a) << "\n"
            << "  under " << kb.text << ": "
            << (interrupted_a ? std::string("not explored (interrupted)") : Status(b)) << "\n\n";
  size_t proven = 0, unproven = 0;
  auto only = [&](const KernelVersion& k, const Explored& here, const Explored& there, const KernelVersion& other) {
    size_t n = 0;
    for (const auto& [o, sched] : here.outcomes) {
      if (there.outcomes.count(o)) continue;
      ++n;
      std::cout << "only under " << k.text << " (" << KernelModelName(k.model) << ")"
                << (there.complete ? "" : " so far") << ": " << Describe(s, o) << "\n"
                << "  " << ReplayCommandLine(argv0, "replay", pos[2], EncodeSchedule(s, sched), defines, {}) << "\n";
    }
    std::cout << n << " outcome" << (n == 1 ? "" : "s") << " of " << here.outcomes.size() << " under " << k.text
              << (there.complete ? " not reached under " + other.text
                                 : " not reached so far under " + other.text + " (its exploration is incomplete: " +
                                       (n == 1 ? "it" : "they") + " may only be unexplored there)")
              << "\n\n";
    (there.complete ? proven : unproven) += n;
  };
  only(ka, a, b, kb);
  only(kb, b, a, ka);
  const bool interrupted = interrupted_a || b.stop_reason == "interrupted";
  if (interrupted || !a.complete || !b.complete) {
    std::cerr << "rseqmc diff-kernels: " << (interrupted ? "interrupted" : "incomplete")
              << "; the report above is partial: " << proven << " proven difference" << (proven == 1 ? "" : "s")
              << ", " << unproven << " unproven\n";
  }
  if (interrupted) return kExitInterrupted;
  if (proven > 0) return kExitFail;
  return a.complete && b.complete ? kExitPass : kExitInterrupted;
}

}  // namespace rseqmc::cli
