// `rseqmc simulate`: one execution under simulated time (sim/timed_scheduler.h).
#include <cstdio>
#include <iostream>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "sim/cost_model.h"
#include "sim/diag.h"
#include "sim/kernel_model.h"
#include "sim/timed_scheduler.h"
#include "tools/rseqmc/cli_util.h"
#include "tools/rseqmc/commands.h"

namespace rseqmc::cli {

std::string SimulateHelp() {
  return "usage: rseqmc simulate FILE --cost-model FILE [--seed N] [-D NAME=VALUE]... [--kernel VERSION] [options]\n"
         "\n"
         "Runs one execution of the scenario FILE in simulated time: every virtual CPU has a\n"
         "clock moved by the cost model (ns per instruction kind, coherence misses, system\n"
         "calls, futex wait/wake, context switches, migrations, signal delivery), with the CFS\n"
         "tick, time slices, wake-up placement and load balancing of sim/timed_scheduler.h.\n"
         "The scenario reads the clock with `clock` and spends CPU time with `work NS`.\n"
         "Prints the simulated span, throughput (observations named by --latency per second of\n"
         "the window), p50/p99 of those observations, CPU idle %, the memory figure (sum of the\n"
         "--memory symbols) and scheduler counts. The same FILE, -D, cost model and seed give\n"
         "the same figures.\n"
         "\n"
         "Options of simulate:\n"
         "  --cost-model FILE     cost-model file (sim/cost_model.h format; required),\n"
         "                        e.g. tools/alloc/cost_model.txt (calibrated on this machine)\n"
         "  --seed N              tick phases of the CPUs (default 1); also sets the scenario\n"
         "                        constant SEED when it declares one\n"
         "  -D NAME=VALUE         override a scenario constant (repeatable)\n"
         "  --window-ns N         measure idle % and throughput over [0, N) ns (default: the\n"
         "                        scenario constant DURATION_NS if declared, else the whole run)\n"
         "  --latency NAME        observation name of request latencies (default latency; a name\n"
         "                        given must be observed by the scenario)\n"
         "  --memory SYM          symbol summed as the memory figure (repeatable)\n"
         "  --show SYM[:STRIDE]   list the symbol's final values, every STRIDE-th element\n"
         "                        (default 1; 8 for per-thread figures padded to a cache\n"
         "                        line); repeatable; in --csv one column per symbol, the\n"
         "                        values separated by ';'\n"
         "  --max-steps N         instruction budget (default 4000000000; at least 1)\n"
         "  --kernel VERSION      rseq ABI to model (rseqmc kernels), as for check (default: the\n"
         "                        running kernel's if modelled, else 6.18)\n"
         "  --csv                 one CSV line with a header instead of the text report\n"
         "  -h [ --help ]         Show this help.\n"
         "\n"
         "Exit status: 0 the execution passed; 1 it failed (property, assert, deadlock, ...);\n"
         "2 bad usage or bad input (scenario, -D, cost-model file, with file:line:col).\n";
}

namespace {

uint64_t NeedUint(const std::vector<std::string>& args, size_t& i) {
  if (i + 1 >= args.size()) throw UsageError(args[i] + " needs a value");
  const std::optional<uint64_t> v = ParseUint64(args[++i]);
  if (!v) throw UsageError(args[i - 1] + " " + args[i] + ": not an unsigned integer");
  return *v;
}

std::string NeedText(const std::vector<std::string>& args, size_t& i) {
  if (i + 1 >= args.size()) throw UsageError(args[i] + " needs a value");
  return args[++i];
}

int64_t ConstantOr(const Scenario& s, const std::string& name, int64_t fallback) {
  for (const Constant& c : s.constants) {
    if (c.name == name) return c.value;
  }
  return fallback;
}

// SYM or SYM:STRIDE (--show).
std::pair<std::string, uint32_t> ParseShown(const std::string& text) {
  const size_t colon = text.find(':');
  if (colon == std::string::npos) return {text, 1};
  const std::optional<uint64_t> stride = ParseUint64(text.substr(colon + 1));
  if (!stride || *stride == 0 || *stride > 1u << 20) {
    throw UsageError("--show " + text + ": the stride after ':' must be an integer from 1 to 1048576");
  }
  return {text.substr(0, colon), static_cast<uint32_t>(*stride)};
}

std::string JoinValues(const std::vector<int64_t>& values, const char* sep) {
  std::string out;
  for (size_t i = 0; i < values.size(); ++i) out += (i ? sep : "") + std::to_string(values[i]);
  return out;
}

// --latency NAME must name an `observe NAME, rs` of the scenario: a
// misspelt name would report no requests as if the run served none (review
// finding F8).
void CheckObservationName(const Scenario& s, const std::string& name) {
  std::set<std::string> names;
  for (const Instr& in : s.program.code) {
    if (in.op == Op::kObserve && in.target < s.program.strings.size()) names.insert(s.program.strings[in.target]);
  }
  if (names.count(name)) return;
  std::string known;
  for (const std::string& n : names) known += (known.empty() ? "" : ", ") + n;
  throw InputError(s.file, {}, "--latency " + name + ": the scenario has no `observe " + name + ", REG`", "",
                   names.empty() ? "the scenario observes nothing: add `observe " + name + ", REG` where a request ends"
                                 : "observation names of this scenario: " + known);
}

}  // namespace

int SimulateCommand(const std::vector<std::string>& args) {
  std::optional<std::string> file, cost_file;
  std::vector<std::string> defines;
  TimedRunOptions o;
  std::optional<uint64_t> window;
  std::optional<KernelVersion> kernel;
  bool latency_given = false;
  bool csv = false;
  bool seed_given = false;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (a == "-h" || a == "--help") {
      std::cout << SimulateHelp();
      return kExitPass;
    } else if (a == "--cost-model") {
      cost_file = NeedText(args, i);
    } else if (a == "--seed") {
      o.seed = NeedUint(args, i);
      seed_given = true;
    } else if (a == "-D" || a == "--define") {
      defines.push_back(NeedText(args, i));
    } else if (a.starts_with("-D") && a.size() > 2) {
      defines.push_back(a.substr(2));
    } else if (a == "--window-ns") {
      window = NeedUint(args, i);
    } else if (a == "--latency") {
      o.latency_observation = NeedText(args, i);
      latency_given = true;
    } else if (a == "--memory") {
      o.memory_symbols.push_back(NeedText(args, i));
    } else if (a == "--show") {
      o.shown_symbols.push_back(ParseShown(NeedText(args, i)));
    } else if (a == "--max-steps") {
      o.max_steps = NeedUint(args, i);
      // A budget of no instruction would end every run at once with a
      // meaningless verdict (review finding F7).
      if (o.max_steps == 0) throw UsageError("--max-steps 0: the budget must be at least 1 instruction");
    } else if (a == "--kernel") {
      const std::string v = NeedText(args, i);
      std::string why;
      kernel = ParseKernelVersion(v, &why);
      if (!kernel) throw UsageError("--kernel " + v + ": " + why);
    } else if (a == "--csv") {
      csv = true;
    } else if (a.starts_with("-")) {
      throw UsageError("unrecognised option '" + a + "'");
    } else if (file) {
      throw UsageError("unexpected argument '" + a + "' (simulate takes one FILE)");
    } else {
      file = a;
    }
  }
  if (!file) throw UsageError("needs FILE: the scenario to simulate");
  if (!cost_file) throw UsageError("needs --cost-model FILE (e.g. tools/alloc/cost_model.txt)");
  const CostModel cost = LoadCostModel(*cost_file);
  std::map<std::string, int64_t> defs = ParseDefines(defines);
  Scenario probe = LoadScenario(*file, defs);
  if (seed_given && !defs.contains("SEED") && ConstantOr(probe, "SEED", -1) != -1) {
    defs["SEED"] = static_cast<int64_t>(o.seed);
    probe = LoadScenario(*file, defs);
  }
  const Scenario& s = probe;
  const int64_t duration = ConstantOr(s, "DURATION_NS", 0);
  o.window_ns = window ? window : duration > 0 ? std::optional<uint64_t>(duration) : std::nullopt;
  if (latency_given) CheckObservationName(s, o.latency_observation);
  o.kernel = ChosenKernel(kernel, s);
  const TimedReport r = SimulateTimed(s, cost, o);
  const TimedStats& st = r.stats;
  if (csv) {
    std::printf(
        "cpus,threads,seed,window_ns,end_ns,requests,throughput_per_s,p50_ns,p99_ns,idle_pct,memory,aborts,"
        "context_switches,migrations,tick_preemptions,cacheline_transfers,signals,steps,verdict");
    for (const ShownSymbol& sh : r.shown) std::printf(",%s", sh.name.c_str());
    std::printf("\n");
    std::printf("%u,%zu,%llu,%llu,%llu,%llu,%.1f,%llu,%llu,%.2f,%lld,%llu,%llu,%llu,%llu,%llu,%llu,%llu,%s", s.num_cpus,
                s.threads.size(), static_cast<unsigned long long>(o.seed),
                static_cast<unsigned long long>(st.window_ns), static_cast<unsigned long long>(st.end_ns),
                static_cast<unsigned long long>(r.requests), r.throughput_per_s,
                static_cast<unsigned long long>(r.p50_ns), static_cast<unsigned long long>(r.p99_ns),
                100.0 * st.IdleFraction(), static_cast<long long>(r.memory), static_cast<unsigned long long>(r.aborts),
                static_cast<unsigned long long>(st.context_switches), static_cast<unsigned long long>(st.migrations),
                static_cast<unsigned long long>(st.tick_preemptions),
                static_cast<unsigned long long>(st.cacheline_transfers), static_cast<unsigned long long>(st.signals),
                static_cast<unsigned long long>(r.steps), VerdictName(r.verdict));
    for (const ShownSymbol& sh : r.shown) std::printf(",%s", JoinValues(sh.values, ";").c_str());
    std::printf("\n");
  } else {
    std::printf("scenario:    %s (%u CPUs, %zu threads, seed %llu)\n", s.name.c_str(), s.num_cpus, s.threads.size(),
                static_cast<unsigned long long>(o.seed));
    std::printf("simulated:   %.3f ms (window %.3f ms), %llu instructions\n", st.end_ns / 1e6, st.window_ns / 1e6,
                static_cast<unsigned long long>(r.steps));
    std::printf("requests:    %llu, throughput %.0f/s\n", static_cast<unsigned long long>(r.requests),
                r.throughput_per_s);
    std::printf("latency:     p50 %.1f us, p99 %.1f us\n", r.p50_ns / 1e3, r.p99_ns / 1e3);
    std::printf("cpu idle:    %.2f %%\n", 100.0 * st.IdleFraction());
    if (!o.memory_symbols.empty()) std::printf("memory:      %lld\n", static_cast<long long>(r.memory));
    std::printf("scheduler:   %llu context switches, %llu migrations (%llu by balancing), %llu tick preemptions\n",
                static_cast<unsigned long long>(st.context_switches), static_cast<unsigned long long>(st.migrations),
                static_cast<unsigned long long>(st.balance_migrations),
                static_cast<unsigned long long>(st.tick_preemptions));
    std::printf("coherence:   %llu cache-line transfers; rseq aborts %llu\n",
                static_cast<unsigned long long>(st.cacheline_transfers), static_cast<unsigned long long>(r.aborts));
    std::printf("signals:     %llu handler frames\n", static_cast<unsigned long long>(st.signals));
    for (const ShownSymbol& sh : r.shown) std::printf("%-12s %s\n", (sh.name + ":").c_str(), JoinValues(sh.values, " ").c_str());
    std::printf("verdict:     %s%s%s\n", VerdictName(r.verdict), r.message.empty() ? "" : ": ", r.message.c_str());
  }
  return r.verdict == Verdict::kPass ? kExitPass : kExitFail;
}

}  // namespace rseqmc::cli
