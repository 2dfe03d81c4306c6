// Model-checker benchmarks (DESIGN.md §9; figures in tools/bench/README.md):
//   * BM_Strategy/<scenario>/<strategy>/ev:<k>
//                     — executions per second of one strategy on a built-in
//                       scenario (2 CPUs, 2 threads, 1 op each) with at most k
//                       injected events per execution; exhaustive strategies
//                       explore the whole bounded space, random/PCT run a fixed
//                       number of executions.
//   * BM_Reduction/<scenario>/ev:<k>
//                     — executions of DPOR and of stateful DFS against plain DFS
//                       for the same bounds (counters dfs, dpor, stateful and the
//                       ratios dfs_over_dpor, dfs_over_stateful).
//   * BM_Pinned/<strategy>/n:<N>/ev:<k>
//                     — N threads, each pinned to its own CPU (affinity = that
//                       CPU only), each doing one independent per-CPU counter
//                       increment; counter `executions` must stay polynomial in
//                       N for DPOR (plain DFS is exponential and only run where
//                       it finishes).
//   * BM_StatefulMemory/<scenario>/ev:<k>
//                     — visited states of a stateful run and bytes per state:
//                       the explorer's own accounting (state_bytes / states) and
//                       the growth of the process's max RSS (getrusage), measured
//                       in a forked child so earlier benchmarks do not mask it.
//
//   * BM_Parallel/<scenario>/<strategy>/ev:<k>[/max:<N>]
//                     — the same exploration on 1 and on 2 workers
//                       (model/parallel.h, `rseqmc check --jobs`): wall-clock
//                       seconds of each (s_1, s_2), their executions (dfs: equal
//                       by construction; stateful: timing-dependent) and
//                       (stateful: complete; dfs, which does not finish on
//                       these even with 0 events: the first N executions)
//                       speedup = s_1 / s_2. Wall time, not CPU time: the point
//                       is how much sooner the answer comes; on a loaded machine
//                       the figure says more about the load than about the design.
//
// Counters named *_per_s are per CPU second (Google Benchmark divides rate
// counters by CPU time); execution and state counts are exact.
//
// Run: build/tools/bench/check_bench [--benchmark_filter=REGEX]
//        [--benchmark_repetitions=5 --benchmark_report_aggregates_only=true]
//
// Driver mode (one exploration, one JSON line on stdout; for timing one
// exploration without the command line's start-up, e.g. against an old build
// that has no `rseqmc check`):
//   check_bench --explore SCENARIO [--strategy S] [--max-events K] [-D NAME=V]...
// SCENARIO is a built-in name (percpu_counter), pinned:N or an .rsq file path.
#include <benchmark/benchmark.h>
#include <malloc.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <string>
#include <vector>

#include "model/explorer.h"
#include "sim/kernel/abi.h"
#include "model/parallel.h"
#include "scenarios/builtin.h"
#include "scenarios/parser.h"
#include "sim/diag.h"

namespace rseqmc {
namespace {

// ---------------------------------------------------------------------------
// Scenarios.

// N threads, thread i pinned to CPU i (affinity i only), each adding 1 once to
// its own CPU's counter with the librseq load-add-store section of
// scenarios/percpu_counter.rsq. No signal is declared, so the injectable
// events are preemptions and membarrier IPIs (migrations are impossible).
std::string PinnedText(int n) {
  std::string t =
      "scenario pinned_percpu\n"
      "description \"N threads each pinned to its own CPU, independent per-CPU increments\"\n"
      "cpus " + std::to_string(n) + "\n"
      "percpu counter: u64 stride 64 = 0\n"
      "func rseq_load_add_store\n"
      "  rseq_arm load_add_store\n"
      "start:\n"
      "  rseq_load r6, cpu_id\n"
      "  bne   r6, r1, abort\n"
      "  ld    r7, [r2]\n"
      "  add   r7, r7, r3\n"
      "  st    [r2], r7\n"
      "post:\n"
      "  li    r0, 0\n"
      "  ret\n"
      "  sig   0x53053053\n"
      "abort:\n"
      "  li    r0, -1\n"
      "  ret\n"
      "  cs load_add_store start=start post_commit=post abort=abort\n"
      "end\n"
      "func worker\n"
      "  la    r10, counter\n"
      "retry:\n"
      "  rseq_load r1, cpu_id_start\n"
      "  shl   r2, r1, 6\n"
      "  add   r2, r2, r10\n"
      "  li    r3, 1\n"
      "  call  rseq_load_add_store\n"
      "  bne   r0, 0, retry\n"
      "  li    r0, 1\n"
      "  ret\n"
      "end\n";
  for (int i = 0; i < n; ++i) {
    t += "thread w" + std::to_string(i) + " entry worker cpu " + std::to_string(i) + " affinity " +
         std::to_string(i) + "\n";
  }
  t += "property sum(counter) == " + std::to_string(n) + "\n";
  for (int i = 0; i < n; ++i) t += "property counter[" + std::to_string(i) + "] == 1\n";
  t += "expect pass\n";
  return t;
}

Scenario PinnedScenario(int n, const std::map<std::string, int64_t>& defines = {}) {
  return ParseScenario(PinnedText(n), "pinned_percpu.rsq", defines);
}

// A built-in name, "pinned:N" (the family above) or an .rsq path.
Scenario LoadScenario(const std::string& name, const std::map<std::string, int64_t>& defines = {}) {
  if (const BuiltinScenario* b = FindBuiltinScenario(name)) return ParseScenario(b->text, b->path, defines);
  if (name.rfind("pinned:", 0) == 0) return PinnedScenario(std::stoi(name.substr(7)), defines);
  return ParseScenarioFile(name, defines);
}

ExploreOptions Options(StrategyKind k, uint32_t max_events, uint64_t max_executions = 0) {
  ExploreOptions o;
  o.strategy = k;
  o.bounds.max_events = max_events;
  o.max_executions = max_executions;
  o.collect_outcomes = true;
  return o;
}

// 2015-RFC programs run under the rfc2015 kernel model, their only ABI (as in
// strategy_table and `rseqmc check`'s per-ABI expectations); every other
// scenario under the default model.
ExploreOptions ForScenario(ExploreOptions o, const Scenario& s) {
  if (FindRfc2015Use(s.program) != nullptr) o.run.kernel = {KernelModel::kRfc2015, "rfc2015"};
  return o;
}

// Sampling strategies run this many executions per exploration.
constexpr uint64_t kSampleExecutions = 20000;

void Report(benchmark::State& st, const ExploreResult& r, uint64_t total_execs) {
  st.counters["executions"] = static_cast<double>(r.executions);
  st.counters["execs_per_s"] = benchmark::Counter(static_cast<double>(total_execs), benchmark::Counter::kIsRate);
  st.counters["redundant"] = static_cast<double>(r.redundant);
  st.counters["complete"] = r.complete ? 1 : 0;
  st.counters["outcomes"] = static_cast<double>(r.distinct_outcomes);
  if (r.states != 0) st.counters["states"] = static_cast<double>(r.states);
}

// ---------------------------------------------------------------------------
// Benchmarks.

void BM_Strategy(benchmark::State& st, const std::string& scenario, StrategyKind k, uint32_t max_events,
                 double time_limit_s) {
  const Scenario s = LoadScenario(scenario);
  const bool sampling = k == StrategyKind::kRandom || k == StrategyKind::kPct;
  ExploreOptions o = ForScenario(Options(k, max_events, sampling ? kSampleExecutions : 0), s);
  o.time_limit_s = time_limit_s;
  ExploreResult r;
  uint64_t total = 0;
  for (auto _ : st) {
    r = Explore(s, o);
    total += r.executions;
    if (r.failure) {
      st.SkipWithError(("unexpected failure: " + r.failure->message).c_str());
      break;
    }
  }
  if (!sampling && time_limit_s == 0 && !r.complete) st.SkipWithError("exploration did not complete");
  Report(st, r, total);
}

void BM_Reduction(benchmark::State& st, const std::string& scenario, uint32_t max_events) {
  const Scenario s = LoadScenario(scenario);
  ExploreResult dfs, dpor, stateful;
  for (auto _ : st) {
    dfs = Explore(s, Options(StrategyKind::kDfs, max_events));
    dpor = Explore(s, Options(StrategyKind::kDpor, max_events));
    stateful = Explore(s, Options(StrategyKind::kStateful, max_events));
  }
  if (!dfs.complete || !dpor.complete || !stateful.complete) st.SkipWithError("an exploration did not complete");
  if (dfs.outcomes != dpor.outcomes || dfs.outcomes != stateful.outcomes) {
    st.SkipWithError("DFS, DPOR and stateful DFS disagree on the set of outcomes");
  }
  st.counters["dfs"] = static_cast<double>(dfs.executions);
  st.counters["dpor"] = static_cast<double>(dpor.executions);
  st.counters["stateful"] = static_cast<double>(stateful.executions);
  st.counters["states"] = static_cast<double>(stateful.states);
  st.counters["dfs_over_dpor"] = static_cast<double>(dfs.executions) / static_cast<double>(dpor.executions);
  st.counters["dfs_over_stateful"] = static_cast<double>(dfs.executions) / static_cast<double>(stateful.executions);
  st.counters["dfs_s"] = dfs.elapsed_s;
  st.counters["dpor_s"] = dpor.elapsed_s;
  st.counters["stateful_s"] = stateful.elapsed_s;
}

void BM_Pinned(benchmark::State& st, StrategyKind k, int n, uint32_t max_events) {
  const Scenario s = PinnedScenario(n);
  ExploreOptions o = Options(k, max_events);
  ExploreResult r;
  uint64_t total = 0;
  for (auto _ : st) {
    r = Explore(s, o);
    total += r.executions;
  }
  if (r.failure) st.SkipWithError(("unexpected failure: " + r.failure->message).c_str());
  if (!r.complete) st.SkipWithError("exploration did not complete");
  Report(st, r, total);
}

// One complete exploration on 1 worker, then on 2 (wall-clock seconds).
void BM_Parallel(benchmark::State& st, const std::string& scenario, const std::map<std::string, int64_t>& defines,
                 StrategyKind k, uint32_t max_events, uint64_t max_executions) {
  const Scenario s = LoadScenario(scenario, defines);
  const ExploreOptions o = Options(k, max_events, max_executions);
  ExploreResult one, two;
  double s1 = 0, s2 = 0;
  for (auto _ : st) {
    auto t0 = std::chrono::steady_clock::now();
    one = ExploreParallel(s, o, 1);
    auto t1 = std::chrono::steady_clock::now();
    two = ExploreParallel(s, o, 2);
    auto t2 = std::chrono::steady_clock::now();
    s1 = std::chrono::duration<double>(t1 - t0).count();
    s2 = std::chrono::duration<double>(t2 - t1).count();
  }
  if (max_executions == 0 && (!one.complete || !two.complete)) st.SkipWithError("an exploration did not complete");
  if (max_executions == 0 && one.outcomes != two.outcomes) {
    st.SkipWithError("1 and 2 workers disagree on the set of outcomes");
  }
  if (k == StrategyKind::kDfs && one.executions != two.executions) {
    st.SkipWithError("dfs on 2 workers ran another number of executions");
  }
  st.counters["executions_1"] = static_cast<double>(one.executions);
  st.counters["executions_2"] = static_cast<double>(two.executions);
  st.counters["s_1"] = s1;
  st.counters["s_2"] = s2;
  st.counters["speedup"] = s2 > 0 ? s1 / s2 : 0;
}

// Max RSS of this process in bytes.
uint64_t MaxRssBytes() {
  struct rusage u {};
  getrusage(RUSAGE_SELF, &u);
  return static_cast<uint64_t>(u.ru_maxrss) * 1024;
}

struct MemoryFigures {
  uint64_t states = 0, state_bytes = 0, executions = 0, rss_before = 0, rss_after = 0;
  double elapsed_s = 0;
  int complete = 0;
};

// Runs a stateful exploration in a forked child and returns its figures. The
// child first hands the heap that earlier benchmarks freed back to the kernel
// (malloc_trim) and resets its RSS high-water mark (clear_refs 5), so the max
// RSS that getrusage reports afterwards grows by what this exploration holds.
bool StatefulInChild(const Scenario& s, uint32_t max_events, MemoryFigures& out) {
  int fds[2];
  if (pipe(fds) != 0) return false;
  const pid_t pid = fork();
  if (pid < 0) return false;
  if (pid == 0) {
    close(fds[0]);
    MemoryFigures f;
    ExploreOptions o = Options(StrategyKind::kStateful, max_events);
    o.collect_outcomes = false;
    malloc_trim(0);
    if (FILE* cr = std::fopen("/proc/self/clear_refs", "w")) {
      std::fputs("5", cr);
      std::fclose(cr);
    }
    f.rss_before = MaxRssBytes();
    const ExploreResult r = Explore(s, o);
    f.rss_after = MaxRssBytes();
    f.states = r.states;
    f.state_bytes = r.state_bytes;
    f.executions = r.executions;
    f.elapsed_s = r.elapsed_s;
    f.complete = r.complete ? 1 : 0;
    const ssize_t w = write(fds[1], &f, sizeof f);
    _exit(w == static_cast<ssize_t>(sizeof f) ? 0 : 1);
  }
  close(fds[1]);
  size_t got = 0;
  while (got < sizeof out) {
    const ssize_t n = read(fds[0], reinterpret_cast<char*>(&out) + got, sizeof out - got);
    if (n <= 0) break;
    got += static_cast<size_t>(n);
  }
  close(fds[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  return got == sizeof out && WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

void BM_StatefulMemory(benchmark::State& st, const std::string& scenario, uint32_t max_events) {
  const Scenario s = LoadScenario(scenario);
  MemoryFigures f;
  for (auto _ : st) {
    if (!StatefulInChild(s, max_events, f)) {
      st.SkipWithError("the stateful child failed");
      return;
    }
  }
  const double states = static_cast<double>(f.states ? f.states : 1);
  st.counters["states"] = static_cast<double>(f.states);
  st.counters["executions"] = static_cast<double>(f.executions);
  st.counters["complete"] = f.complete;
  st.counters["state_bytes"] = static_cast<double>(f.state_bytes);
  st.counters["bytes_per_state"] = static_cast<double>(f.state_bytes) / states;
  st.counters["rss_growth"] = static_cast<double>(f.rss_after - f.rss_before);
  st.counters["rss_bytes_per_state"] = static_cast<double>(f.rss_after - f.rss_before) / states;
  st.counters["states_per_s"] = f.elapsed_s > 0 ? static_cast<double>(f.states) / f.elapsed_s : 0;
}

// ---------------------------------------------------------------------------
// Registration.

constexpr StrategyKind kAllStrategies[] = {StrategyKind::kDfs, StrategyKind::kDpor, StrategyKind::kStateful,
                                           StrategyKind::kRandom, StrategyKind::kPct};

// Events bound of BM_Strategy: 1 everywhere except plain DFS where that does
// not finish in seconds (percpu_spinlock: 0; percpu_buffer and percpu_list do
// not finish even with 0 and run under kDfsTimeLimit instead, reporting the
// rate of the partial search). See tools/bench/README.md.
uint32_t EventsFor(const std::string& scenario, StrategyKind k) {
  if (k == StrategyKind::kDfs && scenario != "percpu_counter") return 0;
  return 1;
}
constexpr double kDfsTimeLimit = 5;
bool DfsFinishes(const std::string& scenario) {
  return scenario == "percpu_counter" || scenario == "percpu_spinlock";
}

// BM_Parallel's sizes (tools/bench/README.md).
const std::map<std::string, int64_t> kParallelDefines = {{"OPS", 1}, {"PER", 1}};
constexpr uint32_t kParallelDfsEvents = 1;
constexpr uint64_t kParallelDfsExecutions = 40000;
constexpr uint32_t kParallelStatefulEvents = 1;

void RegisterAll() {
  std::vector<std::string> scenarios;
  for (const BuiltinScenario& b : BuiltinScenarios()) {
    if (b.name.find('/') == std::string::npos) scenarios.push_back(b.name);
  }
  for (const std::string& sc : scenarios) {
    for (StrategyKind k : kAllStrategies) {
      const uint32_t ev = EventsFor(sc, k);
      const bool partial = k == StrategyKind::kDfs && !DfsFinishes(sc);
      const std::string name = "BM_Strategy/" + sc + "/" + StrategyName(k) + "/ev:" + std::to_string(ev) +
                               (partial ? "/partial" : "");
      benchmark::RegisterBenchmark(name.c_str(), BM_Strategy, sc, k, ev, partial ? kDfsTimeLimit : 0.0)
          ->Unit(benchmark::kMillisecond);
    }
  }
  // Reductions where plain DFS completes.
  const std::pair<std::string, uint32_t> reductions[] = {
      {"percpu_counter", 0}, {"percpu_counter", 1}, {"percpu_spinlock", 0}, {"pinned:2", 0}, {"pinned:2", 1}};
  for (const auto& [sc, ev] : reductions) {
    const std::string name = "BM_Reduction/" + sc + "/ev:" + std::to_string(ev);
    benchmark::RegisterBenchmark(name.c_str(), BM_Reduction, sc, ev)->Unit(benchmark::kMillisecond)->Iterations(1);
  }
  // The pinned family: DPOR for every N; stateful and plain DFS where they
  // finish within ~30 s (both are exponential in N).
  for (uint32_t ev : {0u, 1u}) {
    for (int n = 2; n <= 6; ++n) {
      for (StrategyKind k : {StrategyKind::kDpor, StrategyKind::kStateful, StrategyKind::kDfs}) {
        if (k == StrategyKind::kDfs && n > 2) continue;
        if (k == StrategyKind::kStateful && ev == 1 && n > 4) continue;
        const std::string name = std::string("BM_Pinned/") + StrategyName(k) + "/n:" + std::to_string(n) +
                                 "/ev:" + std::to_string(ev);
        auto* b = benchmark::RegisterBenchmark(name.c_str(), BM_Pinned, k, n, ev)->Unit(benchmark::kMillisecond);
        if (k != StrategyKind::kDpor) b->Iterations(1);
      }
    }
  }
  // Parallel speed-up on the two list/buffer workloads, sized so that one
  // worker takes a few seconds here.
  for (const char* sc : {"percpu_list", "percpu_buffer"}) {
    for (StrategyKind k : {StrategyKind::kDfs, StrategyKind::kStateful}) {
      const bool dfs = k == StrategyKind::kDfs;
      const uint32_t ev = dfs ? kParallelDfsEvents : kParallelStatefulEvents;
      const uint64_t max = dfs ? kParallelDfsExecutions : 0;
      const std::string name = std::string("BM_Parallel/") + sc + "/" + StrategyName(k) + "/ev:" +
                               std::to_string(ev) + (dfs ? "/max:" + std::to_string(max) : "");
      benchmark::RegisterBenchmark(name.c_str(), BM_Parallel, sc, kParallelDefines, k, ev, max)
          ->Unit(benchmark::kMillisecond)
          ->UseRealTime()
          ->Iterations(1);
    }
  }
  const std::pair<std::string, uint32_t> memory[] = {{"percpu_counter", 2}, {"percpu_buffer", 1}};
  for (const auto& [sc, ev] : memory) {
    const std::string name = "BM_StatefulMemory/" + sc + "/ev:" + std::to_string(ev);
    benchmark::RegisterBenchmark(name.c_str(), BM_StatefulMemory, sc, ev)->Unit(benchmark::kMillisecond)->Iterations(1);
  }
}

// ---------------------------------------------------------------------------
// Driver mode.

std::string JsonEscape(const std::string& s) {
  std::string o;
  for (char c : s) {
    if (c == '"' || c == '\\') {
      o += '\\';
      o += c;
    } else if (static_cast<unsigned char>(c) < 0x20) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\u%04x", c);
      o += buf;
    } else {
      o += c;
    }
  }
  return o;
}

int ExploreMain(int argc, char** argv) {
  std::string scenario;
  std::string strategy = "dpor";
  uint32_t max_events = 1;
  std::map<std::string, int64_t> defines;
  for (int i = 2; i < argc; ++i) {
    const std::string a = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) {
        std::fprintf(stderr, "check_bench: %s needs a value\n", a.c_str());
        std::exit(2);
      }
      return argv[++i];
    };
    if (a == "--strategy") {
      strategy = value();
    } else if (a == "--max-events") {
      max_events = static_cast<uint32_t>(std::stoul(value()));
    } else if (a == "-D") {
      defines.insert(ParseDefine(value()));
    } else if (scenario.empty() && !a.empty() && a[0] != '-') {
      scenario = a;
    } else {
      std::fprintf(stderr, "check_bench: unknown argument '%s'\n", a.c_str());
      return 2;
    }
  }
  const auto k = ParseStrategy(strategy);
  if (scenario.empty() || !k) {
    std::fprintf(stderr,
                 "usage: check_bench --explore SCENARIO [--strategy dfs|dpor|stateful|random|pct] "
                 "[--max-events K] [-D NAME=VALUE]...\n");
    return 2;
  }
  const auto t0 = std::chrono::steady_clock::now();
  const Scenario s = LoadScenario(scenario, defines);
  const bool sampling = *k == StrategyKind::kRandom || *k == StrategyKind::kPct;
  const ExploreResult r = Explore(s, ForScenario(Options(*k, max_events, sampling ? kSampleExecutions : 0), s));
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  const char* verdict = r.failure ? VerdictName(r.failure->verdict) : "pass";
  std::printf(
      "{\"scenario\":\"%s\",\"strategy\":\"%s\",\"bounds\":\"%s\",\"verdict\":\"%s\",\"executions\":%llu,"
      "\"redundant\":%llu,\"complete\":%s,\"stop_reason\":\"%s\",\"distinct_outcomes\":%llu,\"max_depth\":%llu,"
      "\"states\":%llu,\"state_bytes\":%llu,\"elapsed_s\":%.6f,\"wall_s\":%.6f,\"failure\":\"%s\","
      "\"schedule\":\"%s\"}\n",
      JsonEscape(s.name).c_str(), StrategyName(*k), JsonEscape(Bounds{max_events}.ToString()).c_str(), verdict,
      static_cast<unsigned long long>(r.executions), static_cast<unsigned long long>(r.redundant),
      r.complete ? "true" : "false", JsonEscape(r.stop_reason).c_str(),
      static_cast<unsigned long long>(r.distinct_outcomes), static_cast<unsigned long long>(r.max_depth),
      static_cast<unsigned long long>(r.states), static_cast<unsigned long long>(r.state_bytes), r.elapsed_s, wall,
      r.failure ? JsonEscape(r.failure->message).c_str() : "",
      r.failure ? EncodeSchedule(s, r.failure->schedule).c_str() : "");
  return r.failure ? 1 : 0;
}

}  // namespace
}  // namespace rseqmc

int main(int argc, char** argv) {
  if (argc > 1 && std::strcmp(argv[1], "--explore") == 0) {
    try {
      return rseqmc::ExploreMain(argc, argv);
    } catch (const std::exception& e) {
      std::fprintf(stderr, "check_bench: %s\n", e.what());
      return 2;
    }
  }
  rseqmc::RegisterAll();
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
