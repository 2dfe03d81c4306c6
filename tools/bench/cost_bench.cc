// What exhaustive exploration costs as the test grows (issue 18; figures in
// tools/bench/README.md). One run prints two tables, each row measured in a
// forked child so that its peak RSS (wait4's ru_maxrss) is its own:
//   1. the cost curve: percpu_list with PER = 4, 8, 16, 32, 64, 128 at one
//      injected event (K=1) under the default strategy (`rseqmc check`'s
//      --strategy auto, model/strategy_choice.h, chosen per row; its pilots'
//      time included and shown apart), then under the other of dpor and
//      stateful for comparison: executions,
//      the redundant share (executions abandoned by sleep sets or reaching a
//      visited state), time, peak RSS, and the slopes of log(executions) and
//      log(time) against log(PER) fitted over the rows that completed;
//   2. memory of long executions: one execution of percpu_list PER=2048
//      under dfs, dpor and stateful, and tools/bench/scenarios/retry_forever_32k.rsq
//      (a thread that retries forever in a process with 32 KB of data)
//      explored to its verdict.
//
// Run: build/tools/bench/cost_bench [--time-limit SECONDS] [--per 4,8,...]
//        [--all-event-positions] [--curve-only]
// Each cost-curve row stops at the time limit (default 60 s) and says so.
// --all-event-positions explores the cost curve with events at every
// boundary (ExploreOptions::defer_events off: the figures without "events
// only where they can matter"); --curve-only leaves out table 2.
// Times are wall time of each child; on a shared machine say the load.
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "model/counterexample.h"
#include "model/explorer.h"
#include "model/strategy_choice.h"
#include "scenarios/builtin.h"
#include "scenarios/parser.h"
#include "sim/diag.h"
#include "sim/trace.h"

#ifndef RSEQMC_SOURCE_DIR
#define RSEQMC_SOURCE_DIR "."
#endif

namespace rseqmc {
namespace {

struct Row {
  StrategyKind strategy = StrategyKind::kDpor;
  double pilot_seconds = 0;  // --strategy auto's event-free pilots (table 1)
  uint64_t executions = 0;
  uint64_t redundant = 0;
  uint64_t max_depth = 0;
  double seconds = 0;
  double cx_seconds = 0;     // confirming and minimising the failure, and its timeline (what check prints)
  size_t timeline_bytes = 0;  // the counterexample's text timeline
  char stop[32] = {};
  char verdict[32] = {};
  long peak_rss_kib = 0;  // filled in by the parent
};

// Runs `explore` in a child; returns its result and peak RSS.
template <typename F>
Row Measure(F explore) {
  int fds[2];
  if (pipe(fds) != 0) {
    std::perror("pipe");
    std::exit(1);
  }
  const pid_t pid = fork();
  if (pid == 0) {
    close(fds[0]);
    Row r = explore();
    const ssize_t n = write(fds[1], &r, sizeof r);
    _exit(n == static_cast<ssize_t>(sizeof r) ? 0 : 1);
  }
  close(fds[1]);
  Row r;
  const ssize_t n = read(fds[0], &r, sizeof r);
  close(fds[0]);
  int status = 0;
  struct rusage ru {};
  wait4(pid, &status, 0, &ru);
  if (n != static_cast<ssize_t>(sizeof r) || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    std::snprintf(r.stop, sizeof r.stop, "child failed");
  }
  r.peak_rss_kib = ru.ru_maxrss;
  return r;
}

Row RowOf(const ExploreResult& res) {
  Row r;
  r.executions = res.executions;
  r.redundant = res.redundant;
  r.max_depth = res.max_depth;
  r.seconds = res.elapsed_s;
  std::snprintf(r.stop, sizeof r.stop, "%s", res.stop_reason.c_str());
  std::snprintf(r.verdict, sizeof r.verdict, "%s", res.failure ? VerdictName(res.failure->verdict) : "pass");
  return r;
}

// Run, then what `rseqmc check` does after finding a failure: confirm and
// minimise it (BuildCounterexample) and render its timeline, so the row's
// time and peak RSS are those of the check command (the first table's
// exploration figures were all the second table showed: 0.00 s and 5 MB for
// a retry-forever whose check takes 0.1-0.2 s and 22 MB).
Row RunAsCheck(const Scenario& s, const ExploreOptions& o) {
  const ExploreResult res = Explore(s, o);
  Row r = RowOf(res);
  if (res.failure) {
    const auto start = std::chrono::steady_clock::now();
    const Counterexample cx = BuildCounterexample(s, FewerEventsSearch(o), *res.failure);
    const std::string timeline = FormatTimeline(s, cx.run);
    r.timeline_bytes = timeline.size();
    r.cx_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  }
  return r;
}

Row Run(const Scenario& s, const ExploreOptions& o) { return RowOf(Explore(s, o)); }

Scenario PercpuList(int64_t per) {
  const BuiltinScenario* b = FindBuiltinScenario("percpu_list");
  return ParseScenario(b->text, b->path, {{"PER", per}});
}

// Least-squares slope of log(y) against log(x).
double LogLogSlope(const std::vector<double>& x, const std::vector<double>& y) {
  const size_t n = x.size();
  double sx = 0, sy = 0, sxx = 0, sxy = 0;
  for (size_t i = 0; i < n; ++i) {
    const double lx = std::log(x[i]), ly = std::log(y[i]);
    sx += lx;
    sy += ly;
    sxx += lx * lx;
    sxy += lx * ly;
  }
  return (n * sxy - sx * sy) / (n * sxx - sx * sx);
}

// Which strategy a cost-curve table explores a row with.
enum class Curve { kDefault, kOther };

// One cost-curve table: percpu_list at K=1 for each PER, under the default
// strategy (`rseqmc check`'s --strategy auto, chosen per row in the child:
// its pilots' time is in the row's time and shown apart) or under the other
// exhaustive strategy of dpor and stateful.
void CostCurve(Curve curve, const std::vector<int64_t>& pers, double time_limit, bool all_positions) {
  std::printf("cost curve: percpu_list, K=1 (one injected event), %s, time limit %.0f s%s\n",
              curve == Curve::kDefault ? "the default strategy (auto, chosen per row)"
                                       : "the other strategy (stateful where auto chose dpor, and the reverse)",
              time_limit, all_positions ? ", events at every boundary" : "");
  std::printf("%6s %-9s %12s %10s %9s %8s %10s %9s  %s\n", "PER", "strategy", "executions", "redundant", "time_s",
              "pilot_s", "peak_RSS", "depth", "stop");
  std::vector<double> xs, execs, times;
  for (int64_t per : pers) {
    const Row r = Measure([&] {
      ExploreOptions o;
      o.bounds.max_events = 1;
      o.time_limit_s = time_limit;
      o.stop_at_first_failure = true;
      o.defer_events = !all_positions;
      const Scenario s = PercpuList(per);
      const StrategyChoice choice = ChooseStrategy(s, o);
      o.strategy = curve == Curve::kDefault ? choice.kind
                   : choice.kind == StrategyKind::kDpor ? StrategyKind::kStateful
                                                        : StrategyKind::kDpor;
      Row row = Run(s, o);
      row.strategy = o.strategy;
      if (curve == Curve::kDefault) {
        row.pilot_seconds = choice.pilot_seconds;
        row.seconds += choice.pilot_seconds;
      }
      return row;
    });
    const double share = r.executions ? 100.0 * static_cast<double>(r.redundant) / static_cast<double>(r.executions) : 0;
    std::printf("%6lld %-9s %12llu %9.1f%% %9.2f %8.3f %7.1f MB %9llu  %s\n", static_cast<long long>(per),
                StrategyName(r.strategy), static_cast<unsigned long long>(r.executions), share, r.seconds,
                r.pilot_seconds, r.peak_rss_kib / 1024.0, static_cast<unsigned long long>(r.max_depth), r.stop);
    std::fflush(stdout);
    if (std::strcmp(r.stop, "exhausted") == 0) {
      xs.push_back(static_cast<double>(per));
      execs.push_back(static_cast<double>(r.executions));
      times.push_back(std::max(r.seconds, 1e-3));
    }
  }
  if (xs.size() >= 2) {
    std::printf("fitted slope over the %zu complete rows: executions ~ PER^%.2f, time ~ PER^%.2f\n\n", xs.size(),
                LogLogSlope(xs, execs), LogLogSlope(xs, times));
  } else {
    std::printf("fitted slope: fewer than two rows completed\n\n");
  }
}

int Main(int argc, char** argv) {
  double time_limit = 60;
  std::vector<int64_t> pers = {4, 8, 16, 32, 64, 128};
  bool all_positions = false, curve_only = false;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--all-event-positions") == 0) {
      all_positions = true;
    } else if (std::strcmp(argv[i], "--curve-only") == 0) {
      curve_only = true;
    } else if (std::strcmp(argv[i], "--time-limit") == 0 && i + 1 < argc) {
      time_limit = std::atof(argv[++i]);
    } else if (std::strcmp(argv[i], "--per") == 0 && i + 1 < argc) {
      pers.clear();
      for (char* p = argv[++i]; *p != '\0';) {
        pers.push_back(std::strtoll(p, &p, 10));
        if (*p == ',') ++p;
      }
    } else {
      std::fprintf(stderr, "usage: %s [--time-limit SECONDS] [--per 4,8,16,...] [--all-event-positions] [--curve-only]\n",
                   argv[0]);
      return 2;
    }
  }

  ExploreOptions k1;
  k1.bounds.max_events = 1;
  const StrategyChoice choice = ChooseStrategy(PercpuList(pers.front()), k1);
  std::printf("default strategy for percpu_list -D PER=%lld: %s (%s)\n\n", static_cast<long long>(pers.front()),
              StrategyName(choice.kind), choice.reason.c_str());
  CostCurve(Curve::kDefault, pers, time_limit, all_positions);
  CostCurve(Curve::kOther, pers, time_limit, all_positions);
  if (curve_only) return 0;

  std::printf("long executions: memory within the checkpoint budget (default --max-memory)\n");
  std::printf("%-34s %-9s %12s %9s %10s %9s  %s\n", "scenario", "strategy", "executions", "time_s", "peak_RSS",
              "depth", "verdict/stop");
  for (StrategyKind k : {StrategyKind::kDfs, StrategyKind::kDpor, StrategyKind::kStateful}) {
    const Row r = Measure([&] {
      ExploreOptions o;
      o.strategy = k;
      o.bounds.max_events = 1;  // rseqmc check's default (ExploreOptions' is 2)
      o.max_executions = 1;
      o.run.max_steps = 1000000;
      return Run(PercpuList(2048), o);
    });
    std::printf("%-34s %-9s %12llu %9.2f %7.1f MB %9llu  %s/%s\n", "percpu_list -D PER=2048", StrategyName(k),
                static_cast<unsigned long long>(r.executions), r.seconds, r.peak_rss_kib / 1024.0,
                static_cast<unsigned long long>(r.max_depth), r.verdict, r.stop);
    std::fflush(stdout);
  }
  const std::string retry = std::string(RSEQMC_SOURCE_DIR) + "/tools/bench/scenarios/retry_forever_32k.rsq";
  std::printf("\nretry forever, as `rseqmc check %s --strategy S` runs it: exploration, then the\n"
              "counterexample's confirmation, minimisation and timeline (cx_s; peak RSS covers both)\n",
              "tools/bench/scenarios/retry_forever_32k.rsq");
  std::printf("%-34s %-9s %12s %9s %9s %10s %9s %10s  %s\n", "scenario", "strategy", "executions", "time_s", "cx_s",
              "peak_RSS", "depth", "timeline", "verdict/stop");
  for (StrategyKind k : {StrategyKind::kDfs, StrategyKind::kDpor, StrategyKind::kStateful}) {
    const Row r = Measure([&] {
      ExploreOptions o;
      o.strategy = k;
      o.bounds.max_events = 1;  // rseqmc check's default (ExploreOptions' is 2)
      return RunAsCheck(ParseScenarioFile(retry), o);
    });
    std::printf("%-34s %-9s %12llu %9.2f %9.2f %7.1f MB %9llu %7.1f kB  %s/%s\n", "retry_forever_32k.rsq",
                StrategyName(k), static_cast<unsigned long long>(r.executions), r.seconds, r.cx_seconds,
                r.peak_rss_kib / 1024.0, static_cast<unsigned long long>(r.max_depth), r.timeline_bytes / 1024.0,
                r.verdict, r.stop);
    std::fflush(stdout);
  }
  return 0;
}

}  // namespace
}  // namespace rseqmc

int main(int argc, char** argv) {
  try {
    return rseqmc::Main(argc, argv);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "cost_bench: %s\n", e.what());
    return 2;
  }
}
