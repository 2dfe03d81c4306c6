// `rseqmc diff-kernels A B FILE`: the outcomes that one kernel ABI allows and
// the other does not, each with a schedule that replays it.
#include <cstdio>
#include <iostream>
#include <map>
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

namespace rseqmc::cli {
namespace {

// Every outcome reachable within `bounds` under `kernel`, with the schedule of
// the first execution that reached it.
std::map<Outcome, Schedule> Outcomes(const Scenario& s, const KernelVersion& kernel, const Bounds& bounds) {
  std::map<Outcome, Schedule> out;
  ExploreOptions o;
  o.strategy = StrategyKind::kDpor;
  o.bounds = bounds;
  o.run.kernel = kernel;
  o.stop_at_first_failure = false;
  o.collect_outcomes = false;
  o.on_execution = [&](const ExecutionResult& r) { out.try_emplace(OutcomeOf(s, r), r.schedule); };
  Explore(s, o);
  return out;
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
  return "usage: rseqmc diff-kernels A B FILE [--max-events N] [-D NAME=VALUE]...\n"
         "\n"
         "Explores FILE (a .rsq file or a built-in name) exhaustively (DPOR, within --max-events\n"
         "injected events, default 2) under kernel ABI A and under B (names as 'rseqmc kernels'\n"
         "lists them, or any version they cover), and prints the outcomes (verdict, return values,\n"
         "final memory) that one ABI reaches and the other does not, each with the command that\n"
         "replays it (the schedule token records its ABI).\n"
         "\n"
         "Exit status: 0 both ABIs reach the same outcomes; 1 they differ; 2 bad usage or input.\n";
}

int DiffKernelsCommand(const std::vector<std::string>& args, const std::string& argv0) {
  std::vector<std::string> pos;
  std::vector<std::string> define_args;
  Bounds bounds;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (a == "--help" || a == "-h") {
      std::cout << DiffKernelsHelp();
      return kExitPass;
    }
    if (a == "--max-events" || a == "-D") {
      if (i + 1 >= args.size()) throw UsageError(a + " needs a value");
      const std::string& v = args[++i];
      if (a == "-D") {
        define_args.push_back(v);
        continue;
      }
      if (v.empty() || v.size() > 2 || v.find_first_not_of("0123456789") != std::string::npos) {
        throw UsageError("--max-events " + v + ": expected a count 0..99");
      }
      bounds.max_events = static_cast<uint32_t>(std::stoul(v));
      continue;
    }
    if (a.starts_with("-")) throw UsageError("unrecognised option '" + a + "'");
    pos.push_back(a);
  }
  if (pos.size() != 3) throw UsageError("expected two kernels and a scenario: diff-kernels A B FILE");
  const KernelVersion ka = Kernel(pos[0]), kb = Kernel(pos[1]);
  if (ka.model == kb.model) {
    // Nothing to compare: the same model explored twice has the same outcomes.
    throw UsageError("kernels '" + pos[0] + "' and '" + pos[1] + "' denote one model (" + KernelModelName(ka.model) +
                     "): there is nothing to compare; name kernels of two models ('rseqmc kernels' lists them)");
  }
  const std::map<std::string, int64_t> defines = ParseDefines(define_args);
  const Scenario s = LoadScenario(pos[2], defines);
  // A pair the scenario cannot run under (a 2015-RFC program and a merged
  // kernel) is bad input before any exploration.
  for (const KernelVersion& k : {ka, kb}) {
    if (std::optional<AbiMismatch> no = AbiFor(k.model).NotApplicable(s)) {
      throw InputError(s.file, no->loc, no->message, "", no->hint);
    }
  }
  const std::map<Outcome, Schedule> a = Outcomes(s, ka, bounds), b = Outcomes(s, kb, bounds);
  size_t differences = 0;
  auto only = [&](const KernelVersion& k, const std::map<Outcome, Schedule>& here,
                  const std::map<Outcome, Schedule>& there, const KernelVersion& other) {
    size_t n = 0;
    for (const auto& [o, sched] : here) {
      if (there.count(o)) continue;
      ++n;
      std::cout << "only under " << k.text << " (" << KernelModelName(k.model) << "): " << Describe(s, o) << "\n"
                << "  " << ReplayCommandLine(argv0, "replay", pos[2], EncodeSchedule(s, sched), defines, {}) << "\n";
    }
    std::cout << n << " outcome" << (n == 1 ? "" : "s") << " of " << here.size() << " under " << k.text
              << " not reached under " << other.text << "\n\n";
    differences += n;
  };
  std::cout << s.name << ": outcomes within " << bounds.ToString() << " under " << ka.text << " and " << kb.text
            << "\n\n";
  only(ka, a, b, kb);
  only(kb, b, a, ka);
  return differences == 0 ? kExitPass : kExitFail;
}

}  // namespace rseqmc::cli
