// DPOR vs plain DFS vs stateful search on every built-in scenario, one table
// (issue 14; figures in tools/bench/README.md). A benchmark, never a timed
// test (DESIGN.md §9): the ctest strategy_table_smoke runs it on two small
// scenarios with --counts-only and checks the counts.
//
// For each built-in scenario (the registry of scenarios/builtin.h, planted
// bugs included) and each strategy, one exploration at `--max-events K`
// (default 1) with every failure collected (stop_at_first_failure false, as
// the golden counts are taken), each in a forked child so that its peak RSS
// (getrusage of that child: wait4) and CPU time are its own, stopped at a
// per-case cap (`--cap-seconds`, `--cap-executions`, `--cap-memory-mb`).
// Constants: those of the scenario's lines in tests/golden/explore_counts.txt
// (list and buffer workloads there run with OPS=1 PER=1), else the file's own.
// 2015-RFC programs run under the rfc2015 kernel model (their only ABI).
//
// Columns: executions (all run, redundant ones included), redundant
// (sleep-set blocked / reached a visited state), states (stateful: visited
// states), outcomes (distinct final states), time (wall seconds of the
// exploration), cpu (CPU seconds of the child), RSS (peak resident MB of the
// child, start-up included), stop (exhausted or the cap that stopped it),
// golden: `= golden` when executions, redundant, outcomes, the outcome-set
// digest and the stop reason equal the golden line for the same scenario,
// strategy and bound; `capped` when this run stopped at a cap where the
// golden one finished; `DIFFERS` (exit status 1) otherwise; `-` when the
// goldens have no such line (plain DFS has goldens at K=0 only). After each
// scenario: the fastest strategy that exhausted the space and DPOR's CPU time
// over the fastest other exhaustive strategy's, then what `--strategy auto`
// picks for it (model/strategy_choice.h) with its reason and pilot time.
//
// Run: build/tools/bench/strategy_table [--max-events K] [--cap-seconds S]
//        [--cap-executions N] [--scenarios a,b,...] [--strategies dfs,dpor,stateful]
//        [--counts-only] [--all-event-positions]
// Exit status: 0 all consistent, 1 a count differs from the goldens or a
// case failed to run, 2 bad usage.
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <boost/program_options.hpp>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iostream>
#include <map>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "model/explorer.h"
#include "model/strategy_choice.h"
#include "scenarios/builtin.h"
#include "scenarios/parser.h"
#include "sim/kernel/abi.h"
#include "sim/outcome.h"

namespace rseqmc {
namespace {

struct Config {
  uint32_t max_events = 1;
  double cap_seconds = 5;
  uint64_t cap_executions = 1000000;
  uint64_t cap_memory_mb = 1024;
  std::vector<std::string> scenarios;  // empty: every built-in
  std::vector<StrategyKind> strategies;
  std::string golden_path;
  bool counts_only = false;
  bool all_event_positions = false;  // ExploreOptions::defer_events off
};

// ---------------------------------------------------------------------------
// The golden counts (tests/golden/explore_counts.txt): lines
// "NAME[ -DK=V]... | STRATEGY events<=K | executions E redundant R outcomes O digest D | STOP".

struct Goldens {
  std::map<std::string, std::string> counts;  // "HEAD | STRATEGY events<=K" -> "executions ... | STOP"
  std::map<std::string, std::string> heads;   // NAME -> HEAD, "NAME[ -DK=V]..." as the goldens write it
};

std::vector<std::string> SplitBars(const std::string& line) {
  std::vector<std::string> parts;
  size_t from = 0;
  for (size_t at; (at = line.find(" | ", from)) != std::string::npos; from = at + 3) {
    parts.push_back(line.substr(from, at - from));
  }
  parts.push_back(line.substr(from));
  return parts;
}

Goldens ReadGoldens(const std::string& path) {
  Goldens g;
  std::ifstream in(path);
  if (!in) {
    std::fprintf(stderr, "strategy_table: cannot read %s (pass --golden FILE); the golden column will be '-'\n",
                 path.c_str());
    return g;
  }
  std::string line;
  while (std::getline(in, line)) {
    const std::vector<std::string> p = SplitBars(line);
    if (p.size() != 4) continue;
    g.heads.emplace(p[0].substr(0, p[0].find(' ')), p[0]);
    g.counts[p[0] + " | " + p[1]] = p[2] + " | " + p[3];
  }
  return g;
}

// ---------------------------------------------------------------------------
// One case, run in a forked child.

struct CaseResult {
  uint64_t executions = 0, redundant = 0, outcomes = 0, digest = 0, states = 0;
  double elapsed_s = 0;
  bool complete = false;
  char stop_reason[32] = {};
  char error[256] = {};  // set when the exploration could not run (InputError, ...)
  // Filled in by the parent from the child's rusage.
  double cpu_s = 0;
  double peak_rss_mb = 0;
};

ExploreOptions CaseOptions(const Config& c, const Scenario& s, StrategyKind k) {
  ExploreOptions o;
  o.strategy = k;
  o.bounds.max_events = c.max_events;
  o.stop_at_first_failure = false;
  o.collect_outcomes = true;
  o.max_executions = c.cap_executions;
  o.time_limit_s = c.cap_seconds;
  o.max_memory_bytes = c.cap_memory_mb << 20;
  o.defer_events = !c.all_event_positions;
  if (FindRfc2015Use(s.program) != nullptr) o.run.kernel = {KernelModel::kRfc2015, "rfc2015"};
  return o;
}

CaseResult RunCase(const Config& c, const Scenario& s, StrategyKind k) {
  CaseResult out;
  try {
    const ExploreResult r = Explore(s, CaseOptions(c, s, k));
    out.executions = r.executions;
    out.redundant = r.redundant;
    out.outcomes = r.distinct_outcomes;
    out.digest = OutcomeSetDigest(r.outcomes);
    out.states = r.states;
    out.elapsed_s = r.elapsed_s;
    out.complete = r.complete;
    std::snprintf(out.stop_reason, sizeof out.stop_reason, "%s", r.stop_reason.c_str());
  } catch (const std::exception& e) {
    std::snprintf(out.error, sizeof out.error, "%s", e.what());
  }
  return out;
}

bool ReadAll(int fd, void* buf, size_t n) {
  size_t got = 0;
  while (got < n) {
    const ssize_t r = read(fd, static_cast<char*>(buf) + got, n - got);
    if (r <= 0) return false;
    got += static_cast<size_t>(r);
  }
  return true;
}

// Runs the case in a child; its rusage (wait4) gives the case's own peak RSS
// and CPU time. A child that dies (or overruns the cap by far: SIGALRM) is
// reported in `error`.
CaseResult RunCaseInChild(const Config& c, const Scenario& s, StrategyKind k) {
  CaseResult out;
  int fds[2];
  if (pipe(fds) != 0) {
    std::snprintf(out.error, sizeof out.error, "pipe: %s", std::strerror(errno));
    return out;
  }
  std::fflush(stdout);
  const pid_t pid = fork();
  if (pid < 0) {
    std::snprintf(out.error, sizeof out.error, "fork: %s", std::strerror(errno));
    close(fds[0]);
    close(fds[1]);
    return out;
  }
  if (pid == 0) {
    close(fds[0]);
    if (c.cap_seconds > 0) alarm(static_cast<unsigned>(c.cap_seconds * 3 + 30));
    const CaseResult r = RunCase(c, s, k);
    const ssize_t w = write(fds[1], &r, sizeof r);
    _exit(w == static_cast<ssize_t>(sizeof r) ? 0 : 1);
  }
  close(fds[1]);
  const bool got = ReadAll(fds[0], &out, sizeof out);
  close(fds[0]);
  struct rusage ru {};
  int status = 0;
  wait4(pid, &status, 0, &ru);
  if (!got) {
    out = CaseResult{};
    std::snprintf(out.error, sizeof out.error, "the child died (status 0x%x)", status);
  }
  out.cpu_s = static_cast<double>(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) +
              static_cast<double>(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) * 1e-6;
  out.peak_rss_mb = static_cast<double>(ru.ru_maxrss) / 1024.0;
  return out;
}

// ---------------------------------------------------------------------------
// The table.

// The -DK=V constants of a golden head that scenario `name` declares (the
// goldens' list/buffer constants OPS=1 PER=1 are written for every heavy
// scenario; explorer_test passes only the declared ones).
std::map<std::string, int64_t> HeadDefines(const std::string& head, const BuiltinScenario& b) {
  const Scenario plain = ParseScenario(b.text, b.path);
  std::map<std::string, int64_t> d;
  std::istringstream in(head);
  std::string tok;
  in >> tok;  // the name
  while (in >> tok) {
    const size_t eq = tok.find('=');
    if (tok.rfind("-D", 0) != 0 || eq == std::string::npos) continue;
    const std::string k = tok.substr(2, eq - 2);
    if (plain.FindConstant(k) >= 0) d[k] = std::stoll(tok.substr(eq + 1));
  }
  return d;
}

// "= golden", "capped", "DIFFERS (golden: ...)" or "-".
std::string GoldenCell(const Goldens& g, const std::string& head, StrategyKind k, uint32_t events,
                       const CaseResult& r, bool* differs) {
  const auto it = g.counts.find(head + " | " + StrategyName(k) + " events<=" + std::to_string(events));
  if (it == g.counts.end()) return "-";
  char mine[160];
  std::snprintf(mine, sizeof mine, "executions %llu redundant %llu outcomes %llu digest %llx | %s",
                static_cast<unsigned long long>(r.executions), static_cast<unsigned long long>(r.redundant),
                static_cast<unsigned long long>(r.outcomes), static_cast<unsigned long long>(r.digest),
                r.complete ? "complete" : r.stop_reason);
  if (it->second == mine) return "= golden";
  const bool golden_complete = it->second.ends_with("| complete");
  if (!r.complete && golden_complete) return "capped";
  *differs = true;
  return "DIFFERS (golden: " + it->second + ")";
}

void PrintHeader(const Config& c) {
  const std::string secs = c.cap_seconds > 0 ? std::to_string(c.cap_seconds).substr(0, 4) + " s" : "no time cap";
  const std::string execs = c.cap_executions > 0 ? std::to_string(c.cap_executions) + " executions" : "no execution cap";
  std::printf("strategy table: every built-in scenario at K=%u (max injected events per execution), "
              "per-case cap: %s, %s, %llu MB\n",
              c.max_events, secs.c_str(), execs.c_str(), static_cast<unsigned long long>(c.cap_memory_mb));
  std::printf("%-44s %-8s %10s %10s %9s %8s", "scenario", "strategy", "executions", "redundant", "states",
              "outcomes");
  if (!c.counts_only) std::printf(" %8s %8s %7s", "time_s", "cpu_s", "RSS_MB");
  std::printf("  %-14s %s\n", "stop", "golden");
}

void PrintRow(const Config& c, const std::string& label, StrategyKind k, const CaseResult& r,
              const std::string& golden) {
  if (r.error[0] != '\0') {
    std::printf("%-44s %-8s not run: %s\n", label.c_str(), StrategyName(k), r.error);
    return;
  }
  char states[24] = "-";
  if (k == StrategyKind::kStateful) std::snprintf(states, sizeof states, "%llu", static_cast<unsigned long long>(r.states));
  std::printf("%-44s %-8s %10llu %10llu %9s %8llu", label.c_str(), StrategyName(k),
              static_cast<unsigned long long>(r.executions), static_cast<unsigned long long>(r.redundant), states,
              static_cast<unsigned long long>(r.outcomes));
  if (!c.counts_only) std::printf(" %8.3f %8.3f %7.1f", r.elapsed_s, r.cpu_s, r.peak_rss_mb);
  std::printf("  %-14s %s\n", r.stop_reason, golden.c_str());
}

// The fastest exhaustive strategy, and DPOR's time over the fastest other
// one, by CPU time (on a shared machine a child's wall time says more about
// the other processes than about the strategy).
void PrintFastest(const std::vector<std::pair<StrategyKind, CaseResult>>& rows) {
  const CaseResult* best = nullptr;
  StrategyKind best_k = StrategyKind::kDpor;
  const CaseResult* dpor = nullptr;
  const CaseResult* best_other = nullptr;
  for (const auto& [k, r] : rows) {
    if (!r.complete) continue;
    if (best == nullptr || r.cpu_s < best->cpu_s) best = &r, best_k = k;
    if (k == StrategyKind::kDpor) dpor = &r;
    else if (best_other == nullptr || r.cpu_s < best_other->cpu_s) best_other = &r;
  }
  if (best == nullptr) {
    std::printf("%-44s fastest: none exhausted the space within the cap\n", "");
    return;
  }
  std::printf("%-44s fastest: %s (%.3f CPU s)", "", StrategyName(best_k), best->cpu_s);
  if (dpor != nullptr && best_other != nullptr && best_other->cpu_s > 0) {
    std::printf("; dpor / fastest other = %.2f", dpor->cpu_s / best_other->cpu_s);
  } else if (dpor == nullptr) {
    std::printf("; dpor did not exhaust the space");
  }
  std::printf("\n");
}

// What `rseqmc check --strategy auto` picks for the scenario at this K
// (model/strategy_choice.h; its pilots run with the check's options, which
// stop at the first failure), with the reason.
void PrintAutoPick(const Config& c, const Scenario& s) {
  ExploreOptions o = CaseOptions(c, s, StrategyKind::kDpor);
  o.stop_at_first_failure = true;
  const StrategyChoice pick = ChooseStrategy(s, o);
  std::printf("%-44s auto picks: %s (%s; pilot %.3f s)\n", "", StrategyName(pick.kind), pick.reason.c_str(),
              pick.pilot_seconds);
}

std::vector<std::string> ScenarioNames(const Config& c) {
  if (!c.scenarios.empty()) return c.scenarios;
  std::vector<std::string> names;
  for (const BuiltinScenario& b : BuiltinScenarios()) names.push_back(b.name);
  return names;
}

int RunTable(const Config& c) {
  for (const std::string& name : ScenarioNames(c)) {
    if (FindBuiltinScenario(name) == nullptr) {
      std::fprintf(stderr, "strategy_table: --scenarios: no built-in scenario '%s' (see `rseqmc list`)\n",
                   name.c_str());
      return 2;
    }
  }
  const Goldens g = ReadGoldens(c.golden_path);
  PrintHeader(c);
  bool differs = false, failed = false;
  for (const std::string& name : ScenarioNames(c)) {
    const BuiltinScenario* b = FindBuiltinScenario(name);
    const auto h = g.heads.find(name);
    const std::string head = h == g.heads.end() ? name : h->second;
    const Scenario s = ParseScenario(b->text, b->path, HeadDefines(head, *b));
    const std::string label = FindRfc2015Use(s.program) != nullptr ? head + " (rfc2015)" : head;
    std::vector<std::pair<StrategyKind, CaseResult>> rows;
    for (StrategyKind k : c.strategies) {
      const CaseResult r = RunCaseInChild(c, s, k);
      failed |= r.error[0] != '\0';
      PrintRow(c, label, k, r, r.error[0] != '\0' ? "" : GoldenCell(g, head, k, c.max_events, r, &differs));
      rows.emplace_back(k, r);
    }
    if (!c.counts_only) {
      PrintFastest(rows);
      PrintAutoPick(c, s);
    }
    std::fflush(stdout);
  }
  if (differs) std::printf("some counts DIFFER from %s\n", c.golden_path.c_str());
  return differs || failed ? 1 : 0;
}

// ---------------------------------------------------------------------------
// Command line.

std::optional<Config> ParseArgs(int argc, char** argv) {
  namespace po = boost::program_options;
  Config c;
  std::string scenarios, strategies = "dfs,dpor,stateful";
  c.golden_path = std::string(RSEQMC_SOURCE_DIR) + "/tests/golden/explore_counts.txt";
  po::options_description d("strategy_table: DPOR vs DFS vs stateful on every built-in scenario");
  d.add_options()("help,h", "this text")(
      "max-events", po::value(&c.max_events)->default_value(1), "K: injected events per execution")(
      "cap-seconds", po::value(&c.cap_seconds)->default_value(5), "per-case wall-time cap (0: none)")(
      "cap-executions", po::value(&c.cap_executions)->default_value(1000000), "per-case execution cap (0: none)")(
      "cap-memory-mb", po::value(&c.cap_memory_mb)->default_value(1024), "per-case exploration memory cap")(
      "scenarios", po::value(&scenarios), "comma-separated built-in names (default: all)")(
      "strategies", po::value(&strategies)->default_value(strategies), "comma-separated: dfs,dpor,stateful")(
      "golden", po::value(&c.golden_path)->default_value(c.golden_path), "golden execution counts")(
      "counts-only", po::bool_switch(&c.counts_only),
      "print no times, RSS or fastest (reproducible output); with no --cap-seconds given, no time cap")(
      "all-event-positions", po::bool_switch(&c.all_event_positions),
      "events at every boundary (no \"events only where they can matter\"): the golden column then differs");
  po::variables_map vm;
  po::store(po::parse_command_line(argc, argv, d), vm);
  po::notify(vm);
  if (vm.count("help")) {
    std::cout << d;
    std::exit(0);
  }
  if (c.counts_only && vm["cap-seconds"].defaulted()) c.cap_seconds = 0;
  const auto words = [](std::string v) {
    for (char& ch : v) ch = ch == ',' ? ' ' : ch;
    return std::istringstream(v);
  };
  std::istringstream sc = words(scenarios), st = words(strategies);
  for (std::string w; sc >> w;) c.scenarios.push_back(w);
  for (std::string w; st >> w;) {
    const auto k = ParseStrategy(w);
    if (!k || (*k != StrategyKind::kDfs && *k != StrategyKind::kDpor && *k != StrategyKind::kStateful)) {
      std::fprintf(stderr, "strategy_table: --strategies: '%s' is not one of dfs, dpor, stateful\n", w.c_str());
      return std::nullopt;
    }
    c.strategies.push_back(*k);
  }
  return c;
}

}  // namespace
}  // namespace rseqmc

int main(int argc, char** argv) {
  try {
    const auto c = rseqmc::ParseArgs(argc, argv);
    if (!c) return 2;
    return rseqmc::RunTable(*c);
  } catch (const boost::program_options::error& e) {
    std::fprintf(stderr, "strategy_table: %s (see --help)\n", e.what());
    return 2;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "strategy_table: %s\n", e.what());
    return 2;
  }
}
