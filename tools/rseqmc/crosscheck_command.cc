// `rseqmc crosscheck`: the simulator's predictions against the running kernel
// (DESIGN.md §7, kernel/harness/crosscheck.h).
#include <sys/rseq.h>

#include <atomic>
#include <cmath>
#include <csignal>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <map>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include <boost/program_options.hpp>

#include "kernel/harness/crosscheck.h"
#include "kernel/harness/tracer.h"
#include "model/counterexample.h"
#include "model/explorer.h"
#include "scenarios/builtin.h"
#include "sim/diag.h"
#include "sim/kernel_model.h"
#include "sim/placement.h"
#include "sim/schedule.h"
#include "tools/rseqmc/cli_util.h"
#include "tools/rseqmc/commands.h"
#include "tools/rseqmc/options.h"
#include "tools/rseqmc/progress_line.h"

namespace rseqmc::cli {
namespace {

namespace po = boost::program_options;
using harness::CrosscheckMode;

constexpr int kExitUnavailable = 77;  // rseq or ptrace unavailable (automake's "skipped")
// Some kernel runs could not be completed (timeout, tracee failure, a harness
// limit) and no run disagreed: inconclusive, neither a pass nor evidence
// against the model.
constexpr int kExitHarnessErrors = 4;
// A scenario ran but compared nothing (every schedule hit the simulator's step
// limit, ...) and nothing disagreed and no run failed: no evidence either way,
// which must not read as agreement (issue 19).
constexpr int kExitNothingCompared = 5;

// Bounds of the numeric flags (documented in --help).
constexpr uint64_t kMaxEventsLimit = 1000;
constexpr uint64_t kMaxDetails = 10000;

std::atomic<bool> g_stop{false};
extern "C" void OnCrosscheckSigint(int) {
  g_stop.store(true, std::memory_order_relaxed);
  harness::KillCurrentTracee();  // kill(2): async-signal-safe
}

po::options_description Options() {
  po::options_description o("crosscheck options");
  o.add_options()
      ("mode", po::value<std::string>()->value_name("MODE"),
       "deterministic (default): every single-event schedule plus --samples random ones, forced on the kernel "
       "with ptrace and compared exactly; outcomes: --samples concurrent runs with random events, each outcome "
       "must be in the checker's reachable set; stress: no ptrace, THREADS = --threads-per-cpu * CPUS, "
       "OPS = --ops, signal and affinity storms, the properties must come out as the scenario expects.")
      ("samples", po::value<std::string>()->value_name("N"),
       "deterministic: random multi-event schedules (default 100); outcomes: real runs (default 300).")
      ("seed", po::value<std::string>()->value_name("N"), "seed of the random schedules and storms (default 1).")
      ("max-events", po::value<std::string>()->value_name("K"),
       "events per random schedule (deterministic, 1..1000, default 2) or per run (outcomes, 0..1000, where it "
       "is also the checker's bound: default 1, check's default).")
      ("no-single-events", "deterministic: skip the enumeration of every single-event schedule.")
      ("max-single-events", po::value<std::string>()->value_name("N"),
       "deterministic: with more single-event schedules than N (long loops), force a seeded sample of N "
       "(default 5000; 0 = all).")
      ("schedule", po::value<std::string>()->value_name("TOKEN"),
       "deterministic: force only this schedule (a token from rseqmc run/check/crosscheck) and show both "
       "timelines if the kernel disagrees.")
      ("original-bytes",
       "deterministic: run the functions a scenario imports (`import` in the .rsq) as the original machine code "
       "of their ELF file, stopped with hardware breakpoints, instead of the JIT of their lifted IR; schedules "
       "with a stop between the IR instructions of one machine instruction are not run (kernel/README.md).")
      ("threads-per-cpu", po::value<std::string>()->value_name("N"),
       "stress: threads per CPU, 1..64 (default 4; THREADS = N * CPUS must stay within 64).")
      ("ops", po::value<std::string>()->value_name("N"),
       "stress: operations per thread, 0..9223372036854775807 (default 250000).")
      ("storm-interval", po::value<std::string>()->value_name("MICROSECONDS"),
       "stress: pause between two actions of each storm thread, 0..1000000 (default 100; 0 = no pause).")
      ("timeout", po::value<std::string>()->value_name("SECONDS"), "limit of one kernel run (default 10; stress 120).")
      ("time-limit", po::value<std::string>()->value_name("SECONDS"),
       "outcomes: limit of the checker's exploration of each scenario's reachable set (default none); past it "
       "the set is incomplete and the coverage line says so.")
      ("max-executions", po::value<std::string>()->value_name("N"),
       "outcomes: stop the exploration of the reachable set after N executions (default none).")
      ("kernel", po::value<std::string>()->value_name("VERSION"),
       "kernel model compared (default: the running kernel's version, if modelled).")
      ("define,D", po::value<std::vector<std::string>>()->value_name("NAME=VALUE"), "override a scenario constant.")
      ("model-fault", po::value<std::string>()->value_name("FAULT"),
       "compare a deliberately wrong model, to see the cross-check fail: no-abort-on-migrate.")
      ("details", po::value<std::string>()->value_name("N"),
       "disagreements printed in full with both timelines (default 2 per scenario, at most 10000).")
      ("json", "one JSON object per scenario per line.")
      ("help,h", "this help.");
  return o;
}

}  // namespace

std::string CrosscheckHelp() {
  std::ostringstream o;
  o << "usage: rseqmc crosscheck [FILE...] [options]\n"
       "\n"
       "Runs scenarios on this machine's kernel (x86-64 JIT of the IR, ptrace injection) and compares\n"
       "what the kernel did with what the simulator predicts. Without FILE, every built-in scenario.\n"
       "One line per scenario: schedules compared, agreements, disagreements, coverage, time.\n"
       "Outcomes mode first explores each scenario's reachable set with the checker (DPOR), with a\n"
       "progress line on stderr; --time-limit / --max-executions bound that exploration, Ctrl-C stops it.\n"
       "A stopped exploration gives an INCOMPLETE reachable set: the coverage line says so, and a kernel\n"
       "outcome outside it is counted apart, not as a disagreement (it may only be unexplored); with\n"
       "no disagreement such a run exits 3, as an interrupted one.\n"
       "A kernel run the harness could not complete (timeout, tracee failure, more observations than it\n"
       "stores) is no evidence about the model: it is counted as a harness error, not as a disagreement.\n"
       "Exit status: 0 all agree, 1 a disagreement (also when Ctrl-C stopped the run after it was\n"
       "found), 2 usage or input error, 3 interrupted,\n"
       "4 harness errors and no disagreement (inconclusive: retry, e.g. with a larger --timeout),\n"
       "5 a scenario ran but compared nothing (e.g. every schedule hit the simulator's step limit):\n"
       "  no evidence, not agreement,\n"       "77 rseq or ptrace unavailable for every scenario (the reason is printed; --mode stress needs no ptrace).\n\n"
    << Options();
  return o.str();
}

int CrosscheckCommand(const std::vector<std::string>& args, const std::string& /*argv0*/) {
  po::options_description all = Options();
  all.add_options()("file", po::value<std::vector<std::string>>(), "");
  po::positional_options_description pos;
  pos.add("file", -1);
  po::variables_map vm = ParseOptions(args, all, pos);
  if (vm.count("help")) {
    std::cout << CrosscheckHelp();
    return kExitPass;
  }
  auto text = [&](const char* k) { return vm[k].as<std::string>(); };
  // An integer flag in [lo, hi] (the range named in the message), or `def`.
  auto uint_opt = [&](const char* k, uint64_t def, uint64_t lo = 0, uint64_t hi = UINT64_MAX) -> uint64_t {
    if (!vm.count(k)) return def;
    auto v = ParseUint64(text(k));
    if (!v && hi == UINT64_MAX && lo == 0) {
      throw UsageError(std::string("--") + k + " needs a non-negative integer, not '" + text(k) + "'");
    }
    if (!v || *v < lo || *v > hi) {
      throw UsageError(std::string("--") + k + " needs an integer from " + std::to_string(lo) + " to " +
                       std::to_string(hi) + ", not '" + text(k) + "'");
    }
    return *v;
  };
  harness::CrosscheckOptions o;
  if (vm.count("mode")) {
    const std::string m = text("mode");
    if (m == "deterministic") {
      o.mode = CrosscheckMode::kDeterministic;
    } else if (m == "outcomes") {
      o.mode = CrosscheckMode::kOutcomes;
    } else if (m == "stress") {
      o.mode = CrosscheckMode::kStress;
    } else {
      throw UsageError("--mode must be deterministic, outcomes or stress, not '" + m + "'");
    }
  }
  o.samples = uint_opt("samples", o.mode == CrosscheckMode::kOutcomes ? 300 : 100);
  o.seed = uint_opt("seed", 1);
  o.stress.seed = o.seed;
  o.max_events = static_cast<uint32_t>(uint_opt("max-events", o.mode == CrosscheckMode::kOutcomes ? 1 : 2, 0,
                                                 kMaxEventsLimit));
  if (o.mode == CrosscheckMode::kDeterministic && o.max_events == 0) {
    throw UsageError("--max-events must be at least 1 in deterministic mode (it bounds the events of each random "
                     "schedule); to run no random schedules use --samples 0");
  }
  o.single_events = !vm.count("no-single-events");
  o.max_single_events = uint_opt("max-single-events", o.max_single_events);
  if (vm.count("schedule")) {
    if (o.mode != CrosscheckMode::kDeterministic) throw UsageError("--schedule needs --mode deterministic");
    o.schedule = text("schedule");
  }
  if (vm.count("original-bytes")) {
    if (o.mode != CrosscheckMode::kDeterministic) throw UsageError("--original-bytes needs --mode deterministic");
    o.original_bytes = true;
  }
  o.stress_threads_per_cpu = static_cast<uint32_t>(uint_opt("threads-per-cpu", 4, 1, kMaxThreads));
  // OPS becomes a scenario constant (int64).
  o.stress_ops_per_thread = uint_opt("ops", 250000, 0, static_cast<uint64_t>(INT64_MAX));
  o.stress.storm_interval_us = 100;
  if (vm.count("storm-interval")) {
    const std::string v = text("storm-interval");
    // Plain decimal only (no nan, inf, exponent or hex: ParseSeconds's syntax).
    const std::optional<double> us = ParseSeconds(v);
    if (!us || !std::isfinite(*us) || *us > harness::kMaxStormIntervalUs) {
      throw UsageError("--storm-interval needs a number of microseconds from 0 to 1000000 (plain decimal, e.g. "
                       "100 or 2.5), not '" + v + "'");
    }
    o.stress.storm_interval_us = *us;
  }
  o.max_details = static_cast<uint32_t>(uint_opt("details", 2, 0, kMaxDetails));
  // Flags of one mode given in another are ignored: say so.
  auto warn_ignored = [&](const char* flag, const char* modes) {
    if (vm.count(flag)) {
      std::cerr << "rseqmc crosscheck: warning: --" << flag << " only applies to " << modes << "; ignored in "
                << harness::CrosscheckModeName(o.mode) << " mode\n";
    }
  };
  if (o.mode != CrosscheckMode::kStress) {
    for (const char* f : {"threads-per-cpu", "ops", "storm-interval"}) warn_ignored(f, "--mode stress");
  }
  if (o.mode != CrosscheckMode::kDeterministic) {
    for (const char* f : {"no-single-events", "max-single-events"}) warn_ignored(f, "--mode deterministic");
  }
  if (o.mode == CrosscheckMode::kStress) {
    for (const char* f : {"samples", "max-events", "model-fault", "details"}) {
      warn_ignored(f, "--mode deterministic and --mode outcomes");
    }
  }
  if (vm.count("timeout")) {
    auto v = ParseSeconds(text("timeout"));
    if (!v || *v <= 0) throw UsageError("--timeout needs a positive number of seconds, not '" + text("timeout") + "'");
    o.run_timeout_s = *v;
    o.stress.timeout_s = *v;
  }
  // Outcomes mode: the budget of the reachable set's exploration.
  double reach_time_limit_s = 0;
  uint64_t reach_max_executions = 0;
  if (vm.count("time-limit")) {
    auto v = ParseSeconds(text("time-limit"));
    if (!v || *v <= 0) {
      throw UsageError("--time-limit needs a positive number of seconds, not '" + text("time-limit") + "'");
    }
    reach_time_limit_s = *v;
  }
  if (vm.count("max-executions")) reach_max_executions = uint_opt("max-executions", 0, 1);
  if (o.mode != CrosscheckMode::kOutcomes) {
    for (const char* f : {"time-limit", "max-executions"}) warn_ignored(f, "--mode outcomes");
  }
  std::optional<KernelVersion> kernel;
  if (vm.count("kernel")) {
    std::string why;
    kernel = ParseKernelVersion(text("kernel"), &why);
    if (!kernel) throw UsageError("--kernel: " + why);
  }
  o.kernel = ChosenKernel(kernel);
  if (vm.count("model-fault")) {
    if (text("model-fault") != "no-abort-on-migrate") {
      throw UsageError("--model-fault must be no-abort-on-migrate, not '" + text("model-fault") + "'");
    }
    o.fault = RunOptions::ModelFault::kNoAbortOnMigrate;
  }
  std::map<std::string, int64_t> defines;
  if (vm.count("define")) defines = ParseDefines(vm["define"].as<std::vector<std::string>>());
  std::vector<std::string> files;
  if (vm.count("file")) files = vm["file"].as<std::vector<std::string>>();
  if (files.empty() && !defines.empty()) throw UsageError("-D needs FILE: constants belong to a scenario");
  if (files.empty()) {
    for (const BuiltinScenario& b : BuiltinScenarios()) files.push_back(b.name);
  }
  const bool json = vm.count("json") != 0;
  if (!o.schedule.empty() && files.size() != 1) throw UsageError("--schedule needs exactly one FILE (the token's scenario)");

  // Load everything first: an input error stops before any kernel run.
  std::vector<Scenario> scenarios;
  std::vector<std::string> names;  // as printed: a name given back as FILE finds the scenario again
  for (const std::string& f : files) {
    Scenario s = LoadScenario(f, defines);
    // A built-in by its built-in name ("buggy/store_before_commit", not the
    // scenario line's "store_before_commit"), as `check` prints it.
    std::error_code ec;
    const BuiltinScenario* b = std::filesystem::is_regular_file(f, ec) ? nullptr : FindBuiltinScenario(f);
    names.push_back(b ? b->name : s.name);
    if (o.mode == CrosscheckMode::kStress) {
      std::map<std::string, int64_t> d = defines;
      if (s.FindConstant("THREADS") >= 0 && !d.count("THREADS")) {
        const uint64_t threads = static_cast<uint64_t>(o.stress_threads_per_cpu) * s.num_cpus;
        if (threads > static_cast<uint64_t>(kMaxThreads)) {
          throw UsageError("--threads-per-cpu " + std::to_string(o.stress_threads_per_cpu) + " gives " +
                           std::to_string(threads) + " threads for " + names.back() + " (" +
                           std::to_string(s.num_cpus) + " CPUs); a scenario has at most " +
                           std::to_string(kMaxThreads) + ": use --threads-per-cpu " +
                           std::to_string(kMaxThreads / s.num_cpus) + " or less");
        }
        d["THREADS"] = static_cast<int64_t>(threads);
      }
      if (s.FindConstant("OPS") >= 0 && !d.count("OPS")) d["OPS"] = static_cast<int64_t>(o.stress_ops_per_thread);
      s = LoadScenario(f, d);
    }
    scenarios.push_back(std::move(s));
  }
  if (!o.schedule.empty()) {
    // A token with an initial placement (sim/placement.h): the harness
    // starts each thread on its ThreadSpec::cpu, so it runs the scenario
    // placed there, under the same decisions.
    Schedule forced = DecodeSchedule(scenarios[0], o.schedule);
    if (!forced.placement.empty()) {
      scenarios[0] = WithPlacement(scenarios[0], forced.placement);
      forced.placement.clear();
      o.schedule = EncodeSchedule(scenarios[0], forced);
    }
  }

  g_stop.store(false);
  struct sigaction sa = {}, old = {};
  sa.sa_handler = OnCrosscheckSigint;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGINT, &sa, &old);
  ProgressLine progress;
  int inconclusive = 0;  // kernel outcomes outside an incomplete reachable set
  int disagreements = 0, skipped_unavailable = 0, ran = 0, with_harness_errors = 0, nothing_compared = 0;
  bool interrupted = false;
  for (size_t i = 0; i < scenarios.size(); ++i) {
    const Scenario& s = scenarios[i];
    if (g_stop.load()) {
      interrupted = true;
      break;
    }
    if (o.mode == CrosscheckMode::kOutcomes) {
      // The harness does not run the checker: the reachable set for the
      // same bound, kernel model and fault comes from here.
      ExploreOptions eo;
      eo.strategy = StrategyKind::kDpor;
      eo.bounds.max_events = o.max_events;
      eo.run.kernel = o.kernel;
      eo.run.fault = o.fault;
      eo.stop_at_first_failure = false;
      eo.collect_outcomes = true;
      eo.interrupt = &g_stop;
      eo.time_limit_s = reach_time_limit_s;
      eo.max_executions = reach_max_executions;
      const std::string who = "rseqmc crosscheck: " + names[i] + ": reachable set";
      eo.progress = [&](const ExploreProgress& p) { progress.Show(ExploreProgressText(who, p)); };
      ExploreResult er = Explore(s, eo);
      progress.Clear();
      o.reachable = ReachableOutcomes{std::move(er.outcomes), er.complete};
      o.reachable_incomplete_reason =
          er.complete ? "" : er.stop_reason + " after " + std::to_string(er.executions) + " executions";
    }
    harness::CrosscheckReport r = harness::Crosscheck(s, o, &g_stop);
    r.scenario = names[i];
    if (r.interrupted || g_stop.load()) interrupted = true;
    if (!r.skipped.empty()) {
      ++skipped_unavailable;
    } else {
      ++ran;
    }
    if (r.disagreements) ++disagreements;
    if (r.outside_incomplete) ++inconclusive;
    if (r.harness_errors && r.skipped.empty()) ++with_harness_errors;
    if (harness::ComparedNothing(r)) ++nothing_compared;
    if (json) {
      std::cout << harness::FormatReportJson(r) << "\n";
    } else {
      std::cout << harness::FormatReportLine(r) << "\n";
      for (const std::string& f : r.flaky_details) std::cout << "  flaky: " << f << "\n";
      for (const harness::Disagreement& h : r.harness_error_details) {
        std::cout << "  harness error: " << h.summary << (h.token.empty() ? "" : " (schedule " + h.token + ")") << "\n";
      }
      size_t shown = 0;
      for (const harness::Disagreement& d : r.details) {
        std::cout << "  disagreement: " << d.summary << "\n";
        if (!d.token.empty()) {
          std::cout << "    schedule: " << d.token << "\n    replay:   rseqmc replay " << ShellQuote(s.file.empty() ? s.name : s.file)
                    << " --schedule " << d.token << "\n";
        }
        if (!d.detail.empty() && shown++ < o.max_details) {
          std::istringstream in(d.detail);
          for (std::string line; std::getline(in, line);) std::cout << "    " << line << "\n";
        }
      }
    }
    std::cout.flush();
  }
  sigaction(SIGINT, &old, nullptr);
  if (!json) {
    std::cout << "\nkernel " << harness::KernelRelease() << ", model " << KernelModelName(o.kernel.model)
              << ", rseq registration " << (__rseq_size ? "glibc (" + std::to_string(__rseq_size) + " bytes)" : std::string("own (32 bytes)")) << ": "
              << ran << " scenarios cross-checked, " << disagreements << " with disagreements"
              << (with_harness_errors ? ", " + std::to_string(with_harness_errors) + " with harness errors" : "")
              << (nothing_compared ? ", " + std::to_string(nothing_compared) + " compared NOTHING" : "")
              << (skipped_unavailable ? ", " + std::to_string(skipped_unavailable) + " skipped" : "")
              << (inconclusive ? ", " + std::to_string(inconclusive) +
                                     " INCONCLUSIVE (kernel outcomes outside an incomplete reachable set)"
                               : "")
              << (interrupted ? ", INTERRUPTED" : "") << ".\n";
    if (nothing_compared) {
      std::cout << "Nothing was compared for " << nothing_compared
                << (nothing_compared == 1 ? " scenario" : " scenarios")
                << ": no kernel run was checked against the simulator there, so this is not agreement (exit "
                << kExitNothingCompared << ").\n";
    }
  }
  // A disagreement found before Ctrl-C is the result (as in `check`).
  if (disagreements) return kExitFail;
  if (interrupted) return kExitInterrupted;
  if (inconclusive) return kExitInterrupted;  // nothing proven either way: as a stopped run
  if (with_harness_errors) return kExitHarnessErrors;
  if (nothing_compared) return kExitNothingCompared;
  if (ran == 0 && skipped_unavailable > 0) return kExitUnavailable;
  return kExitPass;
}

}  // namespace rseqmc::cli
