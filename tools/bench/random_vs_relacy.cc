// Random executions per second: rseqmc against Relacy on the same small test
// (issue 14: ">= 2x Relacy's executions/s in random mode on an equivalent
// small test"; figures in tools/bench/README.md). A benchmark, never a timed
// test (DESIGN.md §9); the ctest random_vs_relacy_smoke runs it with
// --counts-only and checks the seeded final-state counts of both sides.
//
// The test, on both sides: two threads, --ops (default 1) non-atomic
// increments each of one shared counter (load, add one, store); the final
// value is 2 * OPS, or less when an update was lost (column `lost`).
//   * Relacy (tools/bench/relacy/, vendored; its own process, relacy_random):
//     `rl::atomic<long>` with seq_cst load and store, random scheduler.
//   * rseqmc: RaceScenarioText below (2 CPUs, one thread each; a CPU switch is
//     the interleaving; no injected events, Relacy has none), run as
//       - the simulator loop of BM_RandomExecutions (Simulator::RunInto with a
//         RandomScheduler switching CPU with probability 0.25, the default,
//         and 0.5, Relacy's choice between two runnable threads), and
//       - the random strategy as `rseqmc check --strategy random --max-events 0`
//         runs it (Explore, outcome set not collected), which judges the goal;
//         and the same asked at every boundary (`--all-event-positions`: the
//         random stream before the local-step shortcut, for comparison);
//     plus, for reference (not the same test), BM_RandomExecutions' own
//     percpu_counter with the default event mix.
// Each run does --iterations executions; the sides alternate for
// --repetitions rounds (the machine is shared: alternating spreads the load
// over both), and the table gives each side's median executions per CPU
// second (CPU time of the process: Relacy's child, this process for rseqmc).
//
// Run: build/tools/bench/random_vs_relacy [--iterations N] [--repetitions R]
//        [--ops N] [--counts-only] [--relacy PATH]
// Exit status: 0 done, 1 a side failed (a verdict, or Relacy's run), 2 bad usage.
#include <time.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "model/explorer.h"
#include "scenarios/builtin.h"
#include "scenarios/parser.h"
#include "sim/schedule.h"
#include "sim/simulator.h"

namespace rseqmc {
namespace {

// The same program as relacy_random's SharedCounterRace, OPS increments
// unrolled (Relacy's loop is native code with no scheduling point; an IR loop
// would add interpreted instructions, each a scheduling point).
std::string RaceScenarioText(int64_t ops) {
  std::string t =
      "scenario shared_counter_race\n"
      "description \"two threads, OPS non-atomic increments each of one shared counter (Relacy's equivalent: "
      "tools/bench/relacy/relacy_random.cc)\"\n"
      "cpus 2\n"
      "var counter: u64 = 0\n"
      "func worker\n"
      "  la    r1, counter\n";
  for (int64_t i = 0; i < ops; ++i) t += "  ld    r2, [r1]\n  add   r2, r2, 1\n  st    [r1], r2\n";
  t += "  ret\n"
       "end\n"
       "thread w * 2 entry worker cpu (i % 2) affinity all\n"
       "property counter >= 1\n"
       "property counter <= " + std::to_string(2 * ops) + "\n"
       "expect pass\n";
  return t;
}

struct Config {
  uint64_t iterations = 1000000;
  int repetitions = 5;
  int64_t ops = 1;  // increments per thread
  bool counts_only = false;
  std::string relacy = RSEQMC_RELACY_RANDOM;
};

// One run of one side.
struct Run {
  double cpu_s = 0;
  // Executions ending with the counter below 2 * OPS (an update lost) and at
  // 2 * OPS; failed verdicts.
  uint64_t lost = 0, exact = 0, failures = 0;
};

double CpuSeconds() {
  timespec ts{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

// Relacy's side: relacy_random in its own process, its printed line parsed.
bool RunRelacy(const Config& c, Run& out) {
  const std::string cmd = "'" + c.relacy + "' " + std::to_string(c.iterations) + " " + std::to_string(c.ops);
  FILE* p = popen(cmd.c_str(), "r");
  if (p == nullptr) return false;
  char line[512] = {};
  const bool got = std::fgets(line, sizeof line, p) != nullptr;
  const int status = pclose(p);
  unsigned long long n = 0, lost = 0, exact = 0;
  int ok = 0;
  if (!got || status != 0 ||
      std::sscanf(line, "relacy iterations=%llu cpu_s=%lf wall_s=%*f lost=%llu exact=%llu ok=%d", &n, &out.cpu_s,
                  &lost, &exact, &ok) != 5 || ok != 1 || n != c.iterations) {
    std::fprintf(stderr, "random_vs_relacy: %s failed (status %d): %s\n", cmd.c_str(), status, line);
    return false;
  }
  out.lost = lost;
  out.exact = exact;
  return true;
}

// Counts the final value of the counter at `counter` (address; 0: none)
// against `full` (2 * OPS).
void Count(const ExecutionResult& r, uint64_t counter, uint64_t full, Run& out) {
  if (counter == 0) return;
  ++(r.Read(counter, 8) == full ? out.exact : out.lost);
}

// The simulator loop (BM_RandomExecutions) on `s`.
Run RunSimulator(const Scenario& s, const RandomOptions& ro, uint64_t iterations, uint64_t counter, uint64_t full) {
  Simulator sim(s);
  RandomScheduler sched(1, ro);
  ExecutionResult r;
  Run out;
  const double t0 = CpuSeconds();
  for (uint64_t i = 0; i < iterations; ++i) {
    out.failures += sim.RunInto(sched, r) != Verdict::kPass;
    Count(r, counter, full, out);
  }
  out.cpu_s = CpuSeconds() - t0;
  return out;
}

// The random strategy as `rseqmc check --strategy random --max-events 0` runs it.
// `every_boundary`: the scheduler is asked at every boundary
// (ExploreOptions::defer_events false, `--all-event-positions`), as before the
// local-step shortcut (Scheduler::LocalBoundaries).
Run RunStrategy(const Scenario& s, uint64_t iterations, uint64_t counter, uint64_t full, bool every_boundary) {
  ExploreOptions o;
  o.defer_events = !every_boundary;
  o.strategy = StrategyKind::kRandom;
  o.bounds.max_events = 0;
  o.max_executions = iterations;
  o.stop_at_first_failure = false;
  o.collect_outcomes = false;
  Run out;
  o.on_execution = [&](const ExecutionResult& r) {
    Count(r, counter, full, out);
    out.failures += r.verdict != Verdict::kPass;
  };
  const double t0 = CpuSeconds();
  const ExploreResult res = Explore(s, o);
  out.cpu_s = CpuSeconds() - t0;
  if (res.executions != iterations) ++out.failures;
  return out;
}

struct Side {
  Side(std::string n, std::function<bool(Run&)> f, bool eq = true) : name(std::move(n)), run(std::move(f)), equivalent(eq) {}
  std::string name;
  std::function<bool(Run&)> run;
  bool equivalent;  // the same test as Relacy's (a ratio is printed)
  std::vector<Run> runs;
};

double MedianRate(const Side& s, uint64_t iterations) {
  std::vector<double> rates;
  for (const Run& r : s.runs) rates.push_back(r.cpu_s > 0 ? static_cast<double>(iterations) / r.cpu_s : 0);
  std::sort(rates.begin(), rates.end());
  return rates.empty() ? 0 : rates[rates.size() / 2];
}

std::vector<Side> MakeSides(const Config& c, const Scenario& race, const Scenario& percpu) {
  const uint64_t counter = race.program.symbols[race.program.FindSymbol("counter")].address;
  const auto switches_only = [](double p) {
    RandomOptions ro;
    ro.p_switch_cpu = p;
    ro.p_preempt = ro.p_migrate = ro.p_signal = ro.p_ipi = 0;
    ro.max_events = 0;
    return ro;
  };
  const uint64_t n = c.iterations, full = 2 * static_cast<uint64_t>(c.ops);
  std::vector<Side> sides;
  sides.emplace_back("Relacy, random scheduler", [&c](Run& r) { return RunRelacy(c, r); });
  sides.emplace_back("rseqmc sim loop, CPU switch p=0.25", [&race, n, counter, full, switches_only](Run& r) {
                     r = RunSimulator(race, switches_only(0.25), n, counter, full);
                     return r.failures == 0;
                   });
  sides.emplace_back("rseqmc sim loop, CPU switch p=0.5", [&race, n, counter, full, switches_only](Run& r) {
                     r = RunSimulator(race, switches_only(0.5), n, counter, full);
                     return r.failures == 0;
                   });
  sides.emplace_back("rseqmc check --strategy random, K=0", [&race, n, counter, full](Run& r) {
                     r = RunStrategy(race, n, counter, full, false);
                     return r.failures == 0;
                   });
  sides.emplace_back("  the same, every boundary asked", [&race, n, counter, full](Run& r) {
                     r = RunStrategy(race, n, counter, full, true);
                     return r.failures == 0;
                   });
  sides.emplace_back("(ref.) percpu_counter, default mix", [&percpu, n](Run& r) {
                     r = RunSimulator(percpu, RandomOptions{}, n, 0, 0);
                     return r.failures == 0;
                   },
                   false);
  return sides;
}

void PrintTable(const Config& c, const std::vector<Side>& sides) {
  std::printf("random executions: rseqmc vs Relacy, 2 threads x %lld non-atomic increment(s) of one shared counter, "
              "%llu executions per run, %d run(s) per side alternated%s\n",
              static_cast<long long>(c.ops), static_cast<unsigned long long>(c.iterations), c.repetitions,
              c.counts_only ? "" : ", median per CPU second");
  std::printf("%-38s", "side");
  if (!c.counts_only) std::printf(" %12s %9s", "execs/CPU_s", "ns/exec");
  std::printf(" %9s %9s", "lost", "exact");
  if (!c.counts_only) std::printf(" %10s", "vs_Relacy");
  std::printf("\n");
  const double relacy = MedianRate(sides[0], c.iterations);
  for (const Side& s : sides) {
    const double rate = MedianRate(s, c.iterations);
    std::printf("%-38s", s.name.c_str());
    if (!c.counts_only) std::printf(" %10.2f M %9.1f", rate / 1e6, rate > 0 ? 1e9 / rate : 0);
    if (s.equivalent) {
      std::printf(" %9llu %9llu", static_cast<unsigned long long>(s.runs.back().lost),
                  static_cast<unsigned long long>(s.runs.back().exact));
    } else {
      std::printf(" %9s %9s", "-", "-");
    }
    if (!c.counts_only) {
      if (s.equivalent && relacy > 0) std::printf(" %9.2fx", rate / relacy);
      else std::printf(" %10s", "-");
    }
    std::printf("\n");
  }
  if (!c.counts_only && relacy > 0) {
    const double ratio = MedianRate(sides[3], c.iterations) / relacy;
    std::printf("goal >= 2x Relacy (random strategy row): %s, %.2fx\n", ratio >= 2 ? "met" : "NOT met", ratio);
  }
}

int Main(const Config& c) {
  const Scenario race = ParseScenario(RaceScenarioText(c.ops), "shared_counter_race.rsq");
  const BuiltinScenario* b = FindBuiltinScenario("percpu_counter");
  const Scenario percpu = ParseScenario(b->text, b->path, {{"THREADS", 2}, {"OPS", 1}});
  std::vector<Side> sides = MakeSides(c, race, percpu);
  for (int rep = 0; rep < c.repetitions; ++rep) {
    for (Side& s : sides) {
      Run r;
      if (!s.run(r)) {
        std::fprintf(stderr, "random_vs_relacy: %s: a run failed (%llu failed executions)\n", s.name.c_str(),
                     static_cast<unsigned long long>(r.failures));
        return 1;
      }
      s.runs.push_back(r);
    }
  }
  PrintTable(c, sides);
  return 0;
}

}  // namespace
}  // namespace rseqmc

int main(int argc, char** argv) {
  rseqmc::Config c;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    const bool has_value = i + 1 < argc;
    if (a == "--iterations" && has_value) {
      c.iterations = std::strtoull(argv[++i], nullptr, 10);
    } else if (a == "--repetitions" && has_value) {
      c.repetitions = std::atoi(argv[++i]);
    } else if (a == "--ops" && has_value) {
      c.ops = std::atoll(argv[++i]);
    } else if (a == "--relacy" && has_value) {
      c.relacy = argv[++i];
    } else if (a == "--counts-only") {
      c.counts_only = true;
    } else {
      std::fprintf(stderr,
                   "usage: random_vs_relacy [--iterations N] [--repetitions R] [--ops N] [--counts-only] "
                   "[--relacy PATH]\n");
      return 2;
    }
  }
  if (c.iterations == 0 || c.repetitions <= 0 || c.ops <= 0) {
    std::fprintf(stderr, "random_vs_relacy: --iterations, --repetitions and --ops must be positive\n");
    return 2;
  }
  try {
    return rseqmc::Main(c);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "random_vs_relacy: %s\n", e.what());
    return 2;
  }
}
