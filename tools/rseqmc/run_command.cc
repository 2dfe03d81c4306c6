// `rseqmc run`: one execution of a scenario (seeded random or replayed from a
// token) with its timeline, or one seeded execution of every built-in scenario;
// `rseqmc replay`: the replay half of `run` on its own (a token is required).
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <iostream>
#include <map>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include <boost/program_options.hpp>

#include "model/oracles.h"
#include "model/counterexample.h"
#include "scenarios/builtin.h"
#include "scenarios/parser.h"
#include "sim/diag.h"
#include "sim/kernel/abi.h"
#include "sim/kernel_model.h"
#include "sim/placement.h"
#include "sim/schedule.h"
#include "sim/simulator.h"
#include "sim/trace.h"
#include "sim/trace_html.h"
#include "tools/rseqmc/cli_util.h"
#include "tools/rseqmc/commands.h"
#include "tools/rseqmc/options.h"
#include "tools/rseqmc/progress_line.h"

namespace rseqmc::cli {
namespace {

namespace po = boost::program_options;

constexpr uint64_t kDefaultSeed = 1;

// The parsed command line of `run`.
struct RunArgs {
  std::optional<std::string> file;
  std::optional<uint64_t> seed;
  std::optional<std::string> token;
  std::optional<KernelVersion> kernel;  // --kernel, if given
  std::map<std::string, int64_t> defines;
  bool json = false;
  std::optional<std::string> html;  // --html FILE: the timeline viewer page
  std::optional<uint64_t> max_steps;
  double time_limit_s = 0;  // --time-limit: 0 = unlimited
  bool help = false;
  bool replay_command = false;  // `rseqmc replay` rather than `rseqmc run`
};

po::options_description VisibleOptions(bool replay_command) {
  po::options_description d(replay_command ? "Options of replay" : "Options of run");
  if (replay_command) {
    d.add_options()
        ("schedule", po::value<std::string>()->value_name("TOKEN"),
         "The execution to replay (required): a token printed by 'rseqmc run' ('schedule:' line) or "
         "'rseqmc check' (counterexample). The token carries the kernel model.");
  } else {
    d.add_options()
        ("seed", po::value<std::string>()->value_name("N"),
         "Seed of the random scheduler (decimal or 0x hex; default 1). The same seed, scenario and "
         "kernel always give the same execution.")
        ("schedule", po::value<std::string>()->value_name("TOKEN"),
         "Replay the execution recorded in TOKEN (the 'schedule:' line of an earlier run) instead of a "
         "random one. Needs FILE; not with --seed. The token carries the kernel model.");
  }
  d.add_options()
      ("kernel", po::value<std::string>()->value_name("VERSION"),
       "rseq semantics to model: 4.18 .. 5.19 (NO_RESTART flags honoured) or 6.0 .. 6.18 (legacy). "
       "Default: the running kernel if it is modelled, else 6.18; with --schedule, the token's.")
      ("define,D", po::value<std::vector<std::string>>()->value_name("NAME=VALUE"),
       "Override the scenario constant NAME (repeatable; VALUE decimal or 0x hex). Needs FILE.")
      ("trace", po::value<std::string>()->value_name("text|json"),
       "Output: 'text' (default) prints the per-CPU timeline, final symbols, thread outcomes and "
       "property verdicts; 'json' prints one JSON object per execution on one line "
       "(docs/trace-schema.md).")
      ("json", "Same as --trace json.")
      ("html", po::value<std::string>()->value_name("OUT"),
       "Also write the execution as a self-contained HTML timeline viewer to OUT (lanes per CPU and "
       "thread, critical sections, injected events, aborts, a step slider). Needs FILE. An existing "
       "OUT that is not an earlier rseqmc page is never overwritten (exit 2).")
      ("max-steps", po::value<std::string>()->value_name("N"),
       "Instructions per execution before the verdict 'steplimit' (default 100000).")
      ("time-limit", po::value<std::string>()->value_name("SECONDS"),
       "Stop the execution after SECONDS (as Ctrl-C does): what ran so far is printed, marked "
       "INCOMPLETE, with no verdict (exit 3). Needs FILE.")
      ("help,h", "Show this help.");
  return d;
}

RunArgs ParseRunArgs(const std::vector<std::string>& args, bool replay_command) {
  po::options_description all;
  all.add(VisibleOptions(replay_command));
  all.add_options()("file", po::value<std::string>(), "scenario");
  po::positional_options_description positional;
  positional.add("file", 1);
  const po::variables_map vm = ParseOptions(args, all, positional);

  RunArgs a;
  a.replay_command = replay_command;
  a.help = vm.count("help") > 0;
  if (vm.count("file")) a.file = vm["file"].as<std::string>();
  if (vm.count("seed")) {
    const std::string text = vm["seed"].as<std::string>();
    a.seed = ParseUint64(text);
    if (!a.seed) throw UsageError("--seed " + text + ": not an unsigned 64-bit integer (decimal or 0x hex)");
  }
  if (vm.count("schedule")) a.token = vm["schedule"].as<std::string>();
  if (vm.count("kernel")) {
    std::string why;
    a.kernel = ParseKernelVersion(vm["kernel"].as<std::string>(), &why);
    if (!a.kernel) throw UsageError("--kernel " + vm["kernel"].as<std::string>() + ": " + why);
  }
  if (vm.count("define")) a.defines = ParseDefines(vm["define"].as<std::vector<std::string>>());
  if (vm.count("trace")) {
    const std::string format = vm["trace"].as<std::string>();
    if (format != "text" && format != "json") {
      throw UsageError("--trace " + format + ": expected 'text' or 'json'");
    }
    a.json = format == "json";
  }
  if (vm.count("json")) a.json = true;
  if (vm.count("html")) a.html = vm["html"].as<std::string>();
  if (vm.count("max-steps")) {
    const std::string text = vm["max-steps"].as<std::string>();
    a.max_steps = ParseUint64(text);
    if (!a.max_steps || *a.max_steps == 0) {
      throw UsageError("--max-steps " + text + ": expected a positive integer");
    }
  }
  if (vm.count("time-limit")) {
    const std::string text = vm["time-limit"].as<std::string>();
    const std::optional<double> v = ParseSeconds(text);
    if (!v || *v <= 0 || *v >= 1e9) {
      throw UsageError("--time-limit " + text + ": expected seconds in decimal, more than 0 and below 1e9 (600, 0.5)");
    }
    a.time_limit_s = *v;
  }
  if (!a.file && a.time_limit_s > 0) throw UsageError("--time-limit needs FILE: it bounds one execution");
  if (replay_command && !a.help && !a.file) throw UsageError("needs FILE: the scenario the token was made for");
  if (replay_command && !a.help && !a.token) throw UsageError("needs --schedule TOKEN: the execution to replay");
  if (a.seed && a.token) throw UsageError("--seed and --schedule exclude each other (a token fixes every choice)");
  if (!a.file && a.html) throw UsageError("--html needs FILE: the page shows one execution");
  if (a.html) CheckHtmlTarget(*a.html);
  if (!a.file && a.token) throw UsageError("--schedule needs FILE: a token belongs to one scenario");
  if (!a.file && !a.defines.empty()) throw UsageError("-D needs FILE: constants belong to one scenario");
  return a;
}

RunOptions MakeRunOptions(const RunArgs& a, const KernelVersion& kernel, bool trace) {
  RunOptions opt;
  opt.record_trace = trace;
  if (a.max_steps) opt.max_steps = *a.max_steps;
  opt.kernel = kernel;
  return opt;
}

uint32_t EventCount(const ExecutionResult& r, DecisionKind k) { return r.events[static_cast<int>(k)]; }

// Steps of a stopped execution whose timeline is still printed: past it the
// text would run to hundreds of MB (about 30 bytes a step) after the user
// asked to stop.
constexpr uint64_t kStoppedTimelineSteps = 100000;

// An execution that Ctrl-C or --time-limit (`by`) stopped: the timeline so
// far (text) or the execution so far (JSON, "incomplete":true), marked
// INCOMPLETE, no verdict; past kStoppedTimelineSteps without its trace; no
// --html page (a page shows whole executions).
int ReportStopped(const RunArgs& a, const Scenario& s, ExecutionResult& r, const std::string& by) {
  const std::string what = "stopped by " + by + " at step " + std::to_string(r.steps) +
                           ": the execution is INCOMPLETE, no verdict";
  const bool long_run = r.steps > kStoppedTimelineSteps;
  const std::string omitted = "the timeline of its " + std::to_string(r.steps) + " steps is not shown (more than " +
                              std::to_string(kStoppedTimelineSteps) + "); a smaller --max-steps shows a run whole";
  if (long_run) r.trace.clear();
  if (a.json) {
    WriteJson(std::cout, s, r,
              ",\"incomplete\":true,\"stopped\":" + JsonQuote(what) +
                  ",\"trace_omitted\":" + (long_run ? JsonQuote(omitted) : std::string("null")));
    std::cout << "\n";
  } else {
    WriteTimeline(std::cout, s, r);
    std::cout << "\nstopped:  " << what << "\n";
    if (long_run) std::cout << "          " << omitted << "\n";
  }
  std::cout.flush();
  if (a.html) std::cerr << "rseqmc: " << *a.html << " not written: the execution was stopped\n";
  std::cerr << "rseqmc: " << what << "\n";
  return kExitInterrupted;
}

// One execution of FILE, printed in full.
// Linux refuses one argument longer than MAX_ARG_STRLEN, 32 pages (131,072
// bytes with its NUL; include/uapi/linux/binfmts.h, checked by
// fs/exec.c:copy_strings): "Argument list too long". A seeded run's token
// can be longer (two threads ping-ponging for 400,000 steps: 217 KB; a
// 1.38 M-step percpu_list -D PER=16384: 309 KB).
constexpr size_t kMaxArgBytes = 131071;

// The command that replays a seeded run by its seed and kernel (the same
// execution: RandomScheduler is deterministic), for a token that cannot be
// passed as an argument. The kernel is named because the default follows
// the running kernel.
std::string SeededRunCommandLine(const std::string& argv0, const std::string& file, uint64_t seed,
                                 const KernelVersion& kernel, const std::map<std::string, int64_t>& defines,
                                 std::optional<uint64_t> max_steps) {
  std::string command = argv0 + " run " + ShellQuote(file) + " --seed " + std::to_string(seed) + " --kernel " +
                        ShellQuote(kernel.text);
  for (const auto& [name, value] : defines) command += " -D " + ShellQuote(name + "=" + std::to_string(value));
  if (max_steps) command += " --max-steps " + std::to_string(*max_steps);
  return command;
}

int RunOne(const RunArgs& a, const std::string& argv0) {
  Scenario s = LoadScenario(*a.file, a.defines);
  std::optional<Schedule> replay;
  KernelVersion kernel;
  if (a.token) {
    replay = DecodeSchedule(s, *a.token);
    if (a.kernel && a.kernel->model != replay->kernel) {
      throw InputError("<command line>", {},
                       "--kernel " + a.kernel->text + " selects the " + KernelModelName(a.kernel->model) +
                           " model, but the token was recorded under " + KernelModelName(replay->kernel),
                       "", "drop --kernel to replay under the token's model");
    }
    kernel = a.kernel ? *a.kernel : KernelVersion{replay->kernel, KernelModelName(replay->kernel)};
  } else {
    kernel = ChosenKernel(a.kernel, s);
  }

  Simulator sim(s, MakeRunOptions(a, kernel, /*trace=*/true));
  // Ctrl-C and --time-limit end the execution at the next poll (every
  // Machine::kStopPollSteps steps): within a second at any --max-steps.
  SigintGuard sigint;
  const auto start = std::chrono::steady_clock::now();
  bool stop_fired = false;
  sim.set_stop_poll([&] {
    const double el = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    stop_fired = InterruptFlag().load(std::memory_order_relaxed) || (a.time_limit_s > 0 && el >= a.time_limit_s);
    return stop_fired;
  });
  ExecutionResult r;
  const uint64_t seed = a.seed.value_or(kDefaultSeed);
  if (replay) {
    ReplayScheduler scheduler(*replay);
    r = sim.Run(scheduler);
  } else {
    RandomScheduler scheduler(seed);
    r = sim.Run(scheduler);
  }
  if (r.stopped && stop_fired) return ReportStopped(a, s, r, InterruptFlag().load() ? "Ctrl-C" : "--time-limit");
  // The allocator family's census, as `check` judges it (model/oracles.h).
  if (r.verdict == Verdict::kPass && IsAllocatorScenario(s)) {
    std::string why = CheckAllocatorHeap(s, r);
    if (!why.empty()) {
      r.verdict = Verdict::kAssertFailed;
      r.message = std::move(why);
    }
  }

  const std::string token = EncodeSchedule(s, r.schedule);
  const std::string command = replay || token.size() <= kMaxArgBytes
                                  ? ReplayCommandLine(argv0, a.replay_command ? "replay" : "run", *a.file, token,
                                                      a.defines, a.max_steps)
                                  : SeededRunCommandLine(argv0, *a.file, seed, kernel, a.defines, a.max_steps);

  if (a.html) WriteHtmlFile(*a.html, FormatHtml(s, r, {r.verdict == Verdict::kPass ? "" : FormatBroken(s, r), command}));
  if (a.json) {
    std::string extra = ",\"seed\":" + (replay ? std::string("null") : std::to_string(seed)) +
                        ",\"replay\":" + JsonQuote(command);
    WriteJson(std::cout, s, r, extra);
    std::cout << "\n";
  } else {
    WriteTimeline(std::cout, s, r);
    std::cout << "\n";
    std::cout << "schedule: " << token
              << (replay ? std::string(" (replayed)") : " (seed " + std::to_string(seed) + ")") << "\n";
    if (!r.schedule.placement.empty()) {
      std::cout << "          initial placement: " << DescribePlacement(s, r.schedule.placement) << "\n";
    }
    std::cout << "replay:   " << command << "\n";
  }
  if (r.stopped) {
    // The machine abandoned an unfair schedule at the step budget: no verdict.
    std::cerr << "rseqmc: " << r.message << "\n";
    return kExitFail;
  }
  return r.verdict == Verdict::kPass ? kExitPass : kExitFail;
}

// One seeded execution of every built-in scenario, one summary line each.
int RunAllBuiltins(const RunArgs& a) {
  const std::vector<BuiltinScenario>& all = BuiltinScenarios();
  if (all.empty()) {
    std::cout << "no built-in scenarios (add .rsq files under scenarios/ and rebuild)\n";
    return kExitPass;
  }
  const KernelVersion kernel = ChosenKernel(a.kernel);
  const uint64_t seed = a.seed.value_or(kDefaultSeed);
  size_t width = 8;
  for (const BuiltinScenario& b : all) width = std::max(width, b.name.size());

  if (!a.json) {
    std::printf("%-*s  %-14s %-14s %8s  %-11s %s\n", static_cast<int>(width), "SCENARIO", "VERDICT", "EXPECTS",
                "STEPS", "EVENTS", "SCHEDULE");
  }
  int passed = 0, failed = 0, errors = 0;
  for (const BuiltinScenario& b : all) {
    try {
      Scenario s = ParseScenario(b.text, b.path);
      const KernelVersion k = a.kernel ? kernel : ApplicableKernel(kernel, s);
      if (AbiFor(k.model).NotApplicable(s)) continue;  // --kernel names an ABI this scenario is not for
      Simulator sim(s, MakeRunOptions(a, k, /*trace=*/a.json));
      RandomScheduler scheduler(seed);
      ExecutionResult r = sim.Run(scheduler);
      (r.verdict == Verdict::kPass ? passed : failed)++;
      if (a.json) {
        std::cout << FormatJson(s, r, ",\"seed\":" + std::to_string(seed)) << "\n";
        continue;
      }
      const std::string events = std::to_string(EventCount(r, DecisionKind::kPreempt)) + "/" +
                                 std::to_string(EventCount(r, DecisionKind::kMigrate)) + "/" +
                                 std::to_string(EventCount(r, DecisionKind::kSignal)) + "/" +
                                 std::to_string(EventCount(r, DecisionKind::kIpi));
      std::printf("%-*s  %-14s %-14s %8llu  %-11s %s\n", static_cast<int>(width), b.name.c_str(),
                  ExpectText(r.verdict).c_str(), ExpectText(s.ExpectedOn(k.model)).c_str(),
                  static_cast<unsigned long long>(r.steps), events.c_str(), EncodeSchedule(s, r.schedule).c_str());
    } catch (const InputError& e) {
      ++errors;
      std::fflush(stdout);
      std::cerr << e.Format() << "\n";
      if (!a.json) std::printf("%-*s  %-14s\n", static_cast<int>(width), b.name.c_str(), "input-error");
    }
    std::fflush(stdout);
  }
  if (!a.json) {
    std::printf(
        "\n%zu scenarios, one random execution each (seed %llu): %d pass, %d fail, %d input errors.\n"
        "EVENTS = injected preempt/migrate/signal/ipi. One execution is a sample, not a check: a buggy/ "
        "scenario may pass it.\nReplay one with: rseqmc run NAME --schedule SCHEDULE\n",
        all.size(), static_cast<unsigned long long>(seed), passed, failed, errors);
  }
  std::fflush(stdout);
  return errors > 0 ? kExitUsage : kExitPass;
}

}  // namespace

std::string RunHelp() {
  std::ostringstream out;
  out << "usage: rseqmc run [FILE] [--seed N | --schedule TOKEN] [--kernel VERSION] [-D NAME=VALUE]...\n"
         "                  [--trace text|json | --json] [--html OUT] [--max-steps N] [--time-limit SECONDS]\n"
         "\n"
         "Runs one execution of the scenario FILE (a .rsq file, or the name of a built-in scenario\n"
         "as shown by 'rseqmc list') under a seeded random schedule, or replays the schedule TOKEN,\n"
         "and prints its timeline (one lane per virtual CPU), the final symbols, each thread's\n"
         "outcome, the property verdicts, the schedule token and a command line that replays it.\n"
         "Without FILE, runs every built-in scenario once and prints one summary line each.\n"
         "\n"
      << VisibleOptions(/*replay_command=*/false)
      << "\n"
         "Exit status: 0 the execution passed (without FILE: every scenario was read and run);\n"
         "1 a property or assert failed, the process was killed, a deadlock or the step limit;\n"
         "2 bad usage or bad input (scenario file, -D, token), with a message on stderr;\n"
         "3 stopped by Ctrl-C or --time-limit (the execution so far is printed, INCOMPLETE), or an\n"
         "internal error.\n";
  return out.str();
}

int RunCommand(const std::vector<std::string>& args, const std::string& argv0) {
  const RunArgs a = ParseRunArgs(args, /*replay_command=*/false);
  if (a.help) {
    std::cout << RunHelp();
    return kExitPass;
  }
  return a.file ? RunOne(a, argv0) : RunAllBuiltins(a);
}

std::string ReplayHelp() {
  std::ostringstream out;
  out << "usage: rseqmc replay FILE --schedule TOKEN [--kernel VERSION] [-D NAME=VALUE]...\n"
         "                     [--trace text|json | --json] [--html OUT] [--max-steps N] [--time-limit SECONDS]\n"
         "\n"
         "Re-runs the execution recorded in TOKEN (printed by 'rseqmc run' or as the counterexample of\n"
         "'rseqmc check') on the scenario FILE (a .rsq file or a built-in name), with the same -D\n"
         "values and --max-steps as when it was recorded, and prints its timeline, final symbols,\n"
         "thread outcomes and property verdicts: the same report as 'rseqmc run FILE --schedule TOKEN'.\n"
         "\n"
      << VisibleOptions(/*replay_command=*/true)
      << "\n"
         "Exit status: 0 the execution passed; 1 it failed (property, assert, kill, deadlock, step\n"
         "limit); 2 bad usage or bad input (a token made for another scenario or other -D values,\n"
         "a --kernel the token contradicts); 3 stopped by Ctrl-C or --time-limit (the execution so\n"
         "far is printed, INCOMPLETE), or an internal error.\n";
  return out.str();
}

int ReplayCommand(const std::vector<std::string>& args, const std::string& argv0) {
  const RunArgs a = ParseRunArgs(args, /*replay_command=*/true);
  if (a.help) {
    std::cout << ReplayHelp();
    return kExitPass;
  }
  return RunOne(a, argv0);
}

}  // namespace rseqmc::cli
