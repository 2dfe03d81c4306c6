// `rseqmc check`: bounded model checking of scenarios (DESIGN.md §4-§6).
//
// Each scenario is explored (model/explorer.h) within the bounds; its verdict
// (the first failure, or pass) is compared with the one it declares; a failure
// gets a minimal counterexample (model/counterexample.h). Without FILE
// every built-in scenario is checked, one line each.
//
// Default bounds, measured on the built-in scenarios (README "Usage"): at
// most one injected event per execution, under the strategy --strategy auto
// picks per scenario (model/strategy_choice.h: stateful or DPOR). Every planted bug under
// scenarios/buggy/ needs exactly one event and is found by dpor, dfs and
// stateful within these bounds in well under a second; zero events find none
// of them; two events make the correct per-CPU list and buffer scenarios
// orders of magnitude slower.
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <csignal>
#include <cstdio>
#include <iostream>
#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <boost/program_options.hpp>

#include "model/explorer.h"
#include "model/oracles.h"
#include "model/parallel.h"
#include "model/strategy_choice.h"
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
#include "tools/rseqmc/checkpoint_file.h"
#include "tools/rseqmc/cli_util.h"
#include "tools/rseqmc/progress_line.h"
#include "tools/rseqmc/commands.h"
#include "tools/rseqmc/options.h"
#include "model/counterexample.h"

namespace rseqmc::cli {
namespace {

namespace po = boost::program_options;

constexpr uint32_t kDefaultMaxEvents = 1;
constexpr double kCheckpointIntervalS = 30;

// The parsed command line of `check`.
struct CheckArgs {
  std::vector<std::string> files;
  std::optional<StrategyKind> strategy;  // nullopt: --strategy auto (the default), per scenario
  Bounds bounds;
  uint64_t seed = 1;
  uint32_t pct_depth = 3;
  std::map<std::string, int64_t> defines;
  std::optional<KernelVersion> kernel;
  bool json = false;
  std::optional<std::string> html;  // --html FILE: the counterexample's timeline viewer
  uint64_t max_executions = 0;
  double time_limit_s = 0;
  uint64_t max_memory = kDefaultMaxMemoryBytes;
  bool iterative = false;
  bool all_event_positions = false;  // --all-event-positions: ExploreOptions::defer_events off
  std::optional<std::string> checkpoint;
  std::optional<uint64_t> max_steps;
  unsigned jobs = 1;  // --jobs: workers of dfs and stateful search (0 = hardware threads)
  StateStorage state_storage = StateStorage::kHash128;
  uint32_t bitstate_log2 = kDefaultBitstateLog2;
  bool all_placements = false;  // --placements all
  bool help = false;
};

po::options_description VisibleOptions() {
  po::options_description d("Options of check");
  d.add_options()
      ("strategy", po::value<std::string>()->value_name("NAME"),
       "auto (default): stateful or dpor per scenario, with the reason printed: stateful when every "
       "thread is IR and no loop can repeat a state (a spin-wait), else dpor; dpor: exhaustive, with "
       "partial-order reduction and sleep sets; dfs: exhaustive, every interleaving; stateful: "
       "exhaustive DFS that prunes states seen before (reports no livelock a pruned loop hides); "
       "random: seeded random executions; pct: PCT, random priorities with --pct-depth change points.")
      ("max-events", po::value<std::string>()->value_name("K"),
       "Injected events (preemptions, migrations, signals, IPIs) per execution, all kinds together "
       "(default 1: every planted bug needs one).")
      ("preemption-bound", po::value<std::string>()->value_name("P"), "Injected preemptions per execution.")
      ("max-migrations", po::value<std::string>()->value_name("M"), "Injected migrations per execution.")
      ("max-signals", po::value<std::string>()->value_name("S"), "Injected signals per execution.")
      ("max-ipis", po::value<std::string>()->value_name("I"), "Injected membarrier-RSEQ IPIs per execution.")
      ("iterative", po::bool_switch(),
       "Exhaustive strategies: explore with 0, 1, ..., K events, each level complete before the next, "
       "so the first failure found has the fewest events.")
      ("all-event-positions", po::bool_switch(),
       "Exhaustive strategies: inject events at every boundary. By default an event is left out where "
       "the same event one instruction later is equivalent (the thread is outside every critical "
       "section and its next instruction touches only its own registers, or, once it is the only "
       "thread left, ordinary memory); this switch turns that "
       "reduction off, for debugging it: same verdicts and outcomes, more executions.")
      ("seed", po::value<std::string>()->value_name("N"), "Seed of random and pct (default 1).")
      ("pct-depth", po::value<std::string>()->value_name("D"), "PCT bug depth: D-1 change points (default 3).")
      ("define,D", po::value<std::vector<std::string>>()->value_name("NAME=VALUE"),
       "Override the scenario constant NAME in every FILE (repeatable). Needs FILE.")
      ("kernel", po::value<std::string>()->value_name("VERSION"),
       "rseq ABI to model (rseqmc kernels): 4.18 .. 5.19, 6.0 .. 6.2, mm_cid (6.3 .. 6.18) or 6.19 (default: the running kernel's "
       "if modelled, else 6.18; without FILE and --kernel, every built-in under every ABI).")
      ("max-steps", po::value<std::string>()->value_name("N"),
       "Instructions per execution before the verdict 'steplimit' (default 100000).")
      ("max-executions", po::value<std::string>()->value_name("N"),
       "Stop a scenario after N executions (default: unlimited; random and pct: 10000). Counts the "
       "executions of a resumed checkpoint too.")
      ("time-limit", po::value<std::string>()->value_name("SECONDS"), "Stop a scenario after SECONDS.")
      ("jobs", po::value<std::string>()->value_name("N"),
       "Workers exploring at once (dfs and stateful; work-stealing over the search tree, "
       "model/parallel.h): 1 (default), or 0 for one per hardware thread. dfs gives the same "
       "executions, outcomes and counterexample as one worker; stateful the same outcomes and verdict "
       "(its execution and state counts then depend on timing). dpor, random and pct run on one worker.")
      ("max-memory", po::value<std::string>()->value_name("BYTES"),
       "Stop a scenario when the exploration's memory exceeds BYTES (suffix K, M, G or T; default 4G): "
       "the path, the machine checkpoints (at most BYTES/8, at most 128M: the longer the executions, the "
       "sparser they are), stateful search's visited set and the distinct outcomes. A counterexample "
       "whose timeline would exceed it (256 bytes a step) is printed without the timeline, saying so.")
      ("state-storage", po::value<std::string>()->value_name("MODE"),
       "Stateful search's visited set: hash128 (default; 128-bit state hashes, the golden counts), "
       "hash64 (hash compaction: half the bytes per state) or bitstate (a fixed bit array, 3 bits per "
       "state: --bitstate-log2). The report gives bytes per state and the expected number of states "
       "skipped by hash collisions (the omission estimate).")
      ("bitstate-log2", po::value<std::string>()->value_name("N"),
       "bitstate: the array holds 2^N bits (10 .. 40; default 27 = 16 MiB).")
      ("placements", po::value<std::string>()->value_name("MODE"),
       "Initial placements: 'scenario' (default: threads start where the scenario says; `cpu any` "
       "threads on any CPU) or 'all' (every thread may start on any CPU its affinity allows). The "
       "exhaustive strategies explore every placement in one exploration, random and pct draw one "
       "per execution; a counterexample's token records its placement.")
      ("json", po::bool_switch(),
       "Print one JSON object per scenario, one per line; a counterexample carries its execution "
       "(docs/trace-schema.md).")
      ("html", po::value<std::string>()->value_name("OUT"),
       "Write the counterexample as a self-contained HTML timeline viewer to OUT (one FILE only; "
       "nothing is written when the scenario passes). An existing OUT that is not an earlier rseqmc "
       "page is never overwritten: exit 2 before the exploration.")
      ("checkpoint", po::value<std::string>()->value_name("FILE"),
       "Keep the run's progress in FILE (written every 30 s and when a scenario stops early: Ctrl-C, "
       "a time, execution or memory limit) and resume from it when it exists: run the same command "
       "again. Removed when every scenario is done. A FILE that is not an rseqmc checkpoint is never "
       "overwritten.")
      ("help,h", "Show this help.");
  return d;
}

CheckArgs ParseCheckArgs(const std::vector<std::string>& args) {
  po::options_description all;
  all.add(VisibleOptions());
  all.add_options()("file", po::value<std::vector<std::string>>(), "scenarios");
  po::positional_options_description positional;
  positional.add("file", -1);
  const po::variables_map vm = ParseOptions(args, all, positional);
  auto given = [&vm](const char* flag) { return vm.count(flag) > 0; };
  auto text = [&vm](const char* flag) { return vm[flag].as<std::string>(); };
  // "--flag VALUE: expected ..." for a value that does not parse.
  auto bad = [&text](const char* flag, const std::string& expected) {
    return UsageError(std::string("--") + flag + " " + text(flag) + ": " + expected);
  };
  auto bound = [&](const char* flag) {
    const std::optional<uint64_t> v = ParseUint64(text(flag));
    if (!v || *v >= kUnbounded) throw bad(flag, "expected a count");
    return static_cast<uint32_t>(*v);
  };
  auto positive = [&](const char* flag) {
    const std::optional<uint64_t> v = ParseUint64(text(flag));
    if (!v || *v == 0) throw bad(flag, "expected a positive integer");
    return *v;
  };
  // An integer lo .. hi; the message gives the range (0 is as wrong as 99).
  auto in_range = [&](const char* flag, uint64_t lo, uint64_t hi) {
    const std::optional<uint64_t> v = ParseUint64(text(flag));
    if (!v || *v < lo || *v > hi) throw bad(flag, "expected " + std::to_string(lo) + " .. " + std::to_string(hi));
    return *v;
  };

  CheckArgs a;
  a.bounds.max_events = kDefaultMaxEvents;
  a.help = given("help");
  if (given("file")) a.files = vm["file"].as<std::vector<std::string>>();
  if (given("strategy") && text("strategy") != "auto") {
    const std::optional<StrategyKind> k = ParseStrategy(text("strategy"));
    if (!k) throw bad("strategy", "expected auto, dpor, dfs, stateful, random or pct");
    a.strategy = *k;
  }
  if (given("max-events")) a.bounds.max_events = bound("max-events");
  if (given("preemption-bound")) a.bounds.max_preemptions = bound("preemption-bound");
  if (given("max-migrations")) a.bounds.max_migrations = bound("max-migrations");
  if (given("max-signals")) a.bounds.max_signals = bound("max-signals");
  if (given("max-ipis")) a.bounds.max_ipis = bound("max-ipis");
  a.iterative = vm["iterative"].as<bool>();
  a.all_event_positions = vm["all-event-positions"].as<bool>();
  a.json = vm["json"].as<bool>();
  if (given("html")) a.html = text("html");
  if (given("seed")) {
    const std::optional<uint64_t> v = ParseUint64(text("seed"));
    if (!v) throw bad("seed", "not an unsigned 64-bit integer (decimal or 0x hex)");
    a.seed = *v;
  }
  if (given("pct-depth")) {
    a.pct_depth = static_cast<uint32_t>(in_range("pct-depth", 1, 64));
  }
  if (given("define")) a.defines = ParseDefines(vm["define"].as<std::vector<std::string>>());
  if (given("kernel")) {
    std::string why;
    a.kernel = ParseKernelVersion(text("kernel"), &why);
    if (!a.kernel) throw bad("kernel", why);
  }
  if (given("max-steps")) a.max_steps = positive("max-steps");
  if (given("max-executions")) a.max_executions = positive("max-executions");
  if (given("time-limit")) {
    const std::optional<double> v = ParseSeconds(text("time-limit"));
    if (!v || *v <= 0) throw bad("time-limit", "expected seconds in decimal, more than 0 and below 1e9 (600, 0.5)");
    a.time_limit_s = *v;
  }
  if (given("max-memory")) {
    const std::optional<uint64_t> v = ParseByteSize(text("max-memory"));
    if (!v || *v == 0) throw bad("max-memory", "expected a byte count such as 512M or 2G");
    a.max_memory = *v;
  }
  if (given("jobs")) {
    const std::optional<uint64_t> v = ParseUint64(text("jobs"));
    if (!v || *v > 4096) throw bad("jobs", "expected a number of workers, 0 .. 4096 (0 = one per hardware thread)");
    a.jobs = static_cast<unsigned>(*v);
  }
  if (given("checkpoint")) {
    a.checkpoint = text("checkpoint");
    if (a.checkpoint->empty()) throw UsageError("--checkpoint needs a file name");
  }
  if (given("placements")) {
    if (text("placements") != "all" && text("placements") != "scenario") throw bad("placements", "expected all or scenario");
    a.all_placements = text("placements") == "all";
  }
  if (given("state-storage")) {
    const std::optional<StateStorage> m = ParseStateStorage(text("state-storage"));
    if (!m) throw bad("state-storage", "expected hash128, hash64 or bitstate");
    a.state_storage = *m;
  }
  if (given("bitstate-log2")) {
    const uint64_t n = in_range("bitstate-log2", kMinBitstateLog2, kMaxBitstateLog2);
    if (a.state_storage != StateStorage::kBitstate) throw UsageError("--bitstate-log2 needs --state-storage bitstate");
    a.bitstate_log2 = static_cast<uint32_t>(n);
  }
  if (a.state_storage != StateStorage::kHash128 && a.strategy != StrategyKind::kStateful) {
    throw UsageError("--state-storage is for --strategy stateful");
  }
  if (a.jobs != 1 && a.checkpoint) {
    throw UsageError("--checkpoint needs --jobs 1 (a checkpoint saves one worker's search stack)");
  }
  if (a.state_storage != StateStorage::kHash128 && a.checkpoint) {
    throw UsageError("--checkpoint needs --state-storage hash128 (a checkpoint saves the visited states' hashes)");
  }
  const bool sampling = a.strategy == StrategyKind::kRandom || a.strategy == StrategyKind::kPct;
  if (a.iterative && sampling) throw UsageError("--iterative is for the exhaustive strategies (dpor, dfs, stateful)");
  if (a.all_event_positions && sampling) {
    throw UsageError("--all-event-positions is for the exhaustive strategies (dpor, dfs, stateful)");
  }
  if (a.html && a.files.size() != 1) throw UsageError("--html needs exactly one FILE: the page shows one counterexample");
  if (a.html) CheckHtmlTarget(*a.html);
  if (a.files.empty() && !a.defines.empty()) throw UsageError("-D needs FILE: constants belong to a scenario");
  return a;
}

// A scenario to check: how it was named and what it is.
struct Target {
  std::string arg;   // FILE as given, or the built-in name
  std::string name;  // shown in reports
  Scenario scenario;
  KernelVersion kernel;  // the ABI it is checked under
  // ABIs of kernel's family (KernelAbi::RulesDifferingFrom) that take this
  // exploration's verdict when it recorded none of the rules in which they
  // differ (ExploreResult::rule_sensitivity); the others are explored on
  // their own. Only for the main job (no FILE, no --kernel, no checkpoint).
  std::vector<KernelVersion> sharers;
  StrategyChoice strategy;  // --strategy, or what auto chose (with its reason)
  bool strategy_auto = false;
  Verdict expected() const { return scenario.ExpectedOn(kernel.model); }
};

// The result of checking one scenario.
struct Checked {
  ExploreResult res;
  Verdict found = Verdict::kPass;
  bool as_expected = true;
  bool interrupted = false;
  bool incomplete = false;  // stopped early by a budget without a failure
  bool from_checkpoint = false;
  bool pilot_reused = false;  // auto at K=0: the strategy choice's pilot is this exploration
  std::optional<Counterexample> cx;
};

// A failure found counts even when Ctrl-C stopped its minimisation.
bool IsMismatch(const Checked& c) { return !c.as_expected && (!c.interrupted || c.res.failure.has_value()); }

std::string ResultWord(const Checked& c) {
  if (IsMismatch(c)) return "MISMATCH";
  if (c.interrupted) return "interrupted";
  return c.incomplete ? "incomplete" : "ok";
}

std::string Seconds(double s) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2f s", s);
  return buf;
}

std::string Plural(uint64_t n, const std::string& word) {
  return std::to_string(n) + " " + word + (n == 1 ? "" : "s");
}

// "scenario x@1234abcd y@..., strategy dpor, ...": what a checkpoint belongs to.
std::string RunIdentity(const CheckArgs& a, const RunOptions& run, const std::vector<Target>& targets) {
  std::string id = "check of";
  for (const Target& t : targets) {
    char fp[16];
    std::snprintf(fp, sizeof fp, "%08x", ScenarioFingerprint(t.scenario));
    id += " " + t.name + "@" + fp + "/" + t.kernel.text;
  }
  id += "; strategy " + std::string(a.strategy ? StrategyName(*a.strategy) : "auto") + ", bounds " +
        a.bounds.ToString() + ", kernel " +
        KernelModelName(run.kernel.model) + ", max-steps " + std::to_string(run.max_steps) + ", seed " +
        std::to_string(a.seed) + ", pct-depth " + std::to_string(a.pct_depth) + (a.iterative ? ", iterative" : "") +
        (a.all_event_positions ? ", all event positions" : "");
  return id;
}

class Checker {
 public:
  Checker(const CheckArgs& a, const std::string& argv0, std::vector<Target> targets)
      : a_(a), argv0_(argv0), targets_(std::move(targets)), summary_(a.files.empty()) {
    run_.kernel = ChosenKernel(a.kernel);
    if (a.max_steps) run_.max_steps = *a.max_steps;
  }

  int Run() {
    if (a_.checkpoint) {
      ckpt_.emplace(*a_.checkpoint, RunIdentity(a_, run_, targets_), targets_.size());
      if (ckpt_->resumed()) std::cerr << "rseqmc check: resuming from checkpoint " << ckpt_->path() << "\n";
    }
    SigintGuard sigint;
    if (summary_ && !a_.json) PrintTableHeader();
    size_t done = 0, mismatches = 0, incomplete = 0;
    bool interrupted = false;
    double total_s = 0;
    for (size_t i = 0; i < targets_.size() && !interrupted; ++i) {
      const Checked c = CheckOne(i);
      total_s += c.res.elapsed_s;
      interrupted = c.interrupted;
      const Target cur = targets_[i];  // targets_ may grow below
      std::vector<std::pair<Target, Checked>> results{{cur, c}};
      if (!interrupted) {
        size_t own = i + 1;  // where a sharer that cannot share is explored: right after
        for (const KernelVersion& k : cur.sharers) {
          Target other = cur;
          other.kernel = k;
          other.name = other.arg + " @" + k.text;
          other.sharers.clear();
          if (Shares(cur, c, k)) {
            results.emplace_back(other, SharedResult(other, c));
          } else {
            targets_.insert(targets_.begin() + static_cast<std::ptrdiff_t>(own++), std::move(other));
          }
        }
      }
      for (size_t r = 0; r < results.size(); ++r) {
        const auto& [t, rc] = results[r];
        ++done;
        ++chosen_[t.strategy.kind];
        mismatches += IsMismatch(rc);
        incomplete += rc.incomplete;
        if (a_.html) WriteHtml(t, rc);
        const std::string shared_from = r == 0 ? "" : cur.kernel.text;
        if (a_.json) {
          std::cout << Json(t, rc, shared_from) << "\n";
        } else if (summary_) {
          PrintTableLine(t, rc, shared_from);
        } else {
          PrintReport(t, rc);
        }
      }
      std::cout.flush();
    }
    if (summary_ && !a_.json) PrintFooter(done, mismatches, incomplete, interrupted, total_s);
    if (interrupted) {
      std::cerr << "rseqmc check: interrupted; the report above is partial ("
                << Plural(targets_.size() - done, "scenario") << " not checked)";
      if (ckpt_) std::cerr << "; progress saved in " << ckpt_->path() << ": run the same command to resume";
      std::cerr << "\n";
      // A verdict that differs was found before the stop: that is the result.
      return mismatches > 0 ? kExitFail : kExitInterrupted;
    }
    if (ckpt_ && ckpt_->AllDone() && checkpoint_ok_) {
      ckpt_->Remove();
      std::cerr << "rseqmc check: every scenario is done; removed checkpoint " << ckpt_->path() << "\n";
    }
    return mismatches > 0 ? kExitFail : kExitPass;
  }

 private:
  // Would ABI k have run exactly the executions of t's exploration c? Yes if
  // it is of t's family and c recorded none of the rules in which the two
  // differ: every hook decided under k as under t.kernel.
  static bool Shares(const Target& t, const Checked& c, const KernelVersion& k) {
    const std::optional<uint32_t> differ = AbiFor(t.kernel.model).RulesDifferingFrom(AbiFor(k.model));
    return differ.has_value() && (*differ & c.res.rule_sensitivity) == 0;
  }

  // c (explored under another ABI that Shares it) as the result of `other`:
  // the same verdict against other's expectation, the same counterexample
  // with other's ABI in its token (it replays there to the same execution).
  static Checked SharedResult(const Target& other, const Checked& c) {
    Checked s = c;
    s.as_expected = s.found == other.expected();
    if (s.cx) {
      s.cx->schedule.kernel = other.kernel.model;
      s.cx->run.schedule.kernel = other.kernel.model;
      s.cx->token = EncodeSchedule(other.scenario, s.cx->schedule);
      s.as_expected = s.as_expected && s.cx->deterministic;
    }
    return s;
  }

  ExploreOptions Options(size_t i) {
    ExploreOptions o;
    o.strategy = targets_[i].strategy.kind;
    o.bounds = a_.bounds;
    o.run = RunFor(targets_[i]);
    o.seed = a_.seed;
    o.pct_depth = a_.pct_depth;
    o.max_executions = a_.max_executions;
    o.time_limit_s = a_.time_limit_s;
    o.max_memory_bytes = a_.max_memory;
    o.iterative = a_.iterative;
    o.defer_events = !a_.all_event_positions;
    o.state_storage = a_.state_storage;
    o.bitstate_log2 = a_.bitstate_log2;
    o.interrupt = &InterruptFlag();
    o.progress = [this, i](const ExploreProgress& p) { Progress(targets_[i].name, p); };
    // The allocator family's census (scenarios/alloc_common.rsqi).
    if (IsAllocatorScenario(targets_[i].scenario)) {
      o.oracle = [&s = targets_[i].scenario](const ExecutionResult& r) { return CheckAllocatorHeap(s, r); };
    }
    if (ckpt_) {
      o.snapshot_interval_s = kCheckpointIntervalS;
      o.snapshot = [this, i](const std::string& bytes) {
        try {
          ckpt_->SetPartial(i, bytes);
        } catch (const std::exception& e) {
          Warn(e.what());
        }
      };
    }
    return o;
  }

  // Explore on a_.jobs workers; the first time a scenario cannot be spread
  // over them, says why on stderr.
  ExploreResult Explore(const Scenario& s, const ExploreOptions& o, unsigned jobs) {
    if (jobs == 1) return rseqmc::Explore(s, o);
    if (const std::optional<std::string> why = WhyNotParallel(s, o); why && notes_.insert(*why).second) {
      ClearProgress();
      std::cerr << "rseqmc check: note: --jobs: " << s.name << ": " << *why << "\n";
    }
    return ExploreParallel(s, o, jobs);
  }

  void Warn(const std::string& what) {
    checkpoint_ok_ = false;
    ClearProgress();
    std::cerr << "rseqmc check: warning: checkpoint not saved: " << what << "\n";
  }

  // auto at K=0: the chosen strategy's pilot ran with this check's options
  // and to its end, so it is the exploration (not when resuming a snapshot,
  // nor on several workers or iteratively, whose counts are their own).
  bool ReusesPilot(const StrategyChoice& chosen, bool resuming) const {
    return chosen.pilot && a_.bounds.max_events == 0 && a_.jobs == 1 && !a_.iterative && !resuming;
  }

  Checked CheckOne(size_t i) {
    const Target& t = targets_[i];
    Checked c;
    if (t.strategy_auto) targets_[i].strategy = ChooseStrategy(t.scenario, Options(i));
    if (ckpt_ && ckpt_->state(i).done) {
      c.res = ckpt_->state(i).result;
      c.from_checkpoint = true;
    } else {
      const bool resuming = ckpt_ && !ckpt_->state(i).snapshot.empty();
      ExploreOptions o = Options(i);
      if (resuming) o.resume_from = &ckpt_->state(i).snapshot;
      // auto's pilots share the scenario's time limit.
      if (a_.time_limit_s > 0) o.time_limit_s = std::max(a_.time_limit_s - t.strategy.pilot_seconds, 0.05);
      try {
        c.pilot_reused = ReusesPilot(t.strategy, resuming);
        if (c.pilot_reused) {
          c.res = *t.strategy.pilot;  // the event-free pilot is this K=0 exploration
        } else {
          c.res = Explore(t.scenario, o, a_.jobs);
        }
      } catch (const InputError& e) {
        ClearProgress();
        if (e.file() != "<checkpoint>") throw;
        throw InputError(ckpt_->path(), e.loc(), e.message(), "", e.hint());
      }
      ClearProgress();
      const bool final = c.res.failure.has_value() || c.res.stop_reason == "exhausted";
      if (ckpt_ && final) {
        try {
          ckpt_->SetDone(i, c.res);
        } catch (const std::exception& e) {
          Warn(e.what());
        }
      }
    }
    c.interrupted = c.res.stop_reason == "interrupted";
    c.found = c.res.failure ? c.res.failure->verdict : Verdict::kPass;
    c.as_expected = c.found == t.expected();
    c.incomplete = !c.res.failure && !c.res.complete && !c.interrupted;
    if (c.res.failure) {
      ExploreOptions search = FewerEventsSearch(Options(i));
      // Confirmation and minimisation share the scenario's time limit (what
      // is left of it; a little when exploration used it all).
      if (a_.time_limit_s > 0) search.time_limit_s = std::max(a_.time_limit_s - c.res.elapsed_s, 0.05);
      // Said before it starts: a long execution makes this take a while.
      progress_.Show("rseqmc check: " + t.name + ": failure found; confirming and minimising the counterexample "
                     "(Ctrl-C stops it, keeping the smallest failing schedule so far)");
      c.cx = BuildCounterexample(t.scenario, search, *c.res.failure);
      ClearProgress();
      // Ctrl-C there stops the whole run, as in an exploration.
      c.interrupted = c.cx->stopped && InterruptFlag().load();
    }
    if (c.cx && !c.cx->deterministic) {
      // Loud: a replay that does not reproduce is a bug in rseqmc.
      std::cerr << "rseqmc check: DETERMINISM CHECK FAILED for " << t.name << ": " << c.cx->determinism_problem
                << "\n";
      c.as_expected = false;
    }
    return c;
  }

  // The progress line (stderr): overwritten in place on a terminal.
  void Progress(const std::string& name, const ExploreProgress& p) {
    progress_.Show(ExploreProgressText("rseqmc check: " + name, p));
  }

  void ClearProgress() { progress_.Clear(); }

  std::string StopText(const Checked& c) const {
    const ExploreResult& r = c.res;
    if (r.failure) return "stopped at the first failure (execution " + std::to_string(r.failure->execution) + ")";
    if (r.complete) return "bounded space exhausted";
    if (r.stop_reason == "interrupted") return "interrupted (Ctrl-C)";
    return "stopped early: " + r.stop_reason + " (no failure found so far; not a proof)";
  }

  void WriteHtml(const Target& t, const Checked& c) const {
    if (!c.cx) {
      std::cerr << "rseqmc check: no counterexample for " << t.name << ": " << *a_.html << " not written\n";
      return;
    }
    const Counterexample& cx = *c.cx;
    if (cx.trace_omitted) {
      std::cerr << "rseqmc check: the counterexample's timeline was " << *cx.trace_omitted << ": " << *a_.html
                << " not written\n";
      return;
    }
    const std::string broken = (cx.stopped ? IncompleteText(cx) + "\n" : "") + FormatBroken(t.scenario, cx.run);
    WriteHtmlFile(*a_.html, FormatHtml(t.scenario, cx.run, {broken, ReplayCommand(t, cx.token)}));
  }

  // " (16.0 bytes/state, hash128, expected omissions 3e-27)": the visited
  // set's cost per state and the chance that it skipped any (stateful).
  std::string StorageText(const ExploreResult& r) const {
    char buf[128];
    std::snprintf(buf, sizeof buf, " (%.1f bytes/state, %s, expected omissions %.2g)",
                  r.states ? static_cast<double>(r.state_bytes) / r.states : 0.0, StateStorageName(a_.state_storage),
                  r.omission_estimate);
    // Past one expected omission the visited set is too small to trust the
    // coverage: say so where the count is read.
    return r.omission_estimate < 1 ? std::string(buf)
                                   : std::string(buf) + " -- states were likely skipped: a larger --bitstate-log2 or "
                                                        "another --state-storage";
  }

  std::string ReplayCommand(const Target& t, const std::string& token) const {
    return ReplayCommandLine(argv0_, "replay", t.arg, token, a_.defines, a_.max_steps);
  }

  void PrintReport(const Target& t, const Checked& c) {
    const Scenario& s = t.scenario;
    std::ostringstream out;
    out << "== " << t.name << (s.file.empty() || s.file == t.name ? "" : " (" + s.file + ")") << "\n";
    out << "check:    strategy " << StrategyName(t.strategy.kind) << ", bounds " << a_.bounds.ToString()
        << (a_.iterative ? " (iterative)" : "") << (a_.all_event_positions ? " (all event positions)" : "")
        << ", kernel " << t.kernel.text << " ("
        << KernelModelName(t.kernel.model) << ")";
    if (a_.strategy == StrategyKind::kRandom || a_.strategy == StrategyKind::kPct) out << ", seed " << a_.seed;
    if (a_.strategy == StrategyKind::kPct) out << ", depth " << a_.pct_depth;
    out << "\n";
    if (t.strategy_auto) {
      out << "strategy: " << StrategyName(t.strategy.kind) << " (" << t.strategy.reason << "; pilot "
          << Seconds(t.strategy.pilot_seconds) << (c.pilot_reused ? ", reused as the K=0 exploration" : "")
          << ")\n";
    }
    out << "explored: " << Plural(c.res.executions, "execution") << " (" << c.res.redundant << " redundant";
    if (c.res.cycles_pruned > 0) out << ", " << c.res.cycles_pruned << " pruned: cycle";
    out << "), "
        << Plural(c.res.distinct_outcomes, "distinct outcome") << ", depth " << c.res.max_depth;
    if (const uint64_t n = PlacementSpace(s, kMaxSampledPlacements).size(); n > 1) out << ", " << n << " initial placements";
    if (t.strategy.kind == StrategyKind::kStateful) out << ", " << Plural(c.res.states, "state") << StorageText(c.res);
    out << ", " << Seconds(c.res.elapsed_s);
    if (c.res.resumed_executions != 0) out << ", resumed after " << c.res.resumed_executions;
    if (c.from_checkpoint) out << ", from the checkpoint";
    out << "\n          " << StopText(c) << "\n";
    out << "verdict:  " << ExpectText(c.found) << "   expected: " << ExpectText(t.expected()) << "   -> "
        << ResultWord(c) << "\n";
    if (c.cx) {
      const Counterexample& cx = *c.cx;
      const Failure& f = *c.res.failure;
      out << "message:  " << f.message << "\n";
      if (!cx.deterministic) out << "!! DETERMINISM CHECK FAILED: " << cx.determinism_problem << " !!\n";
      out << "\n" << BrokenText(s, c) << "\n";
      if (cx.stats.reproduced) {
        out << "counterexample: " << Plural(cx.stats.events_after, "event") << ", "
            << Plural(cx.stats.entries_after, "decision") << ", " << cx.stats.steps_after << " steps (minimised from "
            << Plural(cx.stats.events_before, "event") << ", " << Plural(cx.stats.entries_before, "decision") << ", "
            << cx.stats.steps_before << " steps in " << Plural(cx.stats.runs, "run")
            << (cx.verified ? "; replay verified" : "; replay NOT verified") << ")\n";
      } else {
        // Stopped inside the run that reproduces it: the explored schedule.
        out << "counterexample: " << Plural(cx.stats.events_after, "event") << ", "
            << Plural(cx.stats.entries_after, "decision") << " (as explored: not re-run, not minimised; replay NOT "
            << "verified)\n";
      }
      out << "                fewest events "
          << (cx.stats.fewest_events_proven
                  ? "proven: no schedule with fewer events fails within the bounds"
                  : "not proven: the search for fewer events did not complete")
          << " (" << Plural(cx.stats.search_executions, "execution") << ")\n";
      if (cx.stopped) out << "                " << IncompleteText(cx) << "\n";
      if (cx.trace_omitted) {
        out << "timeline: " << *cx.trace_omitted << "\n\n";
      } else {
        out << FormatTimeline(s, cx.run) << "\n";
      }
      out << "schedule: " << cx.token << (cx.stopped ? " (NOT minimal)" : " (minimised)") << "\n"
          << FormatScheduleEntries(s, cx.schedule);
      out << "replay:   " << ReplayCommand(t, cx.token) << "\n";
    }
    out << "\n";
    std::cout << out.str();
  }

  // "minimisation INCOMPLETE: stopped by Ctrl-C ...": what a stop left of a
  // counterexample (Counterexample::stopped).
  static std::string IncompleteText(const Counterexample& cx) {
    std::string text = std::string("minimisation INCOMPLETE: stopped by ") +
                       (InterruptFlag().load() ? "Ctrl-C" : "the time limit") + "; ";
    if (!cx.stats.reproduced) return text + "the schedule is the explored one, not re-run (NOT minimal)";
    return text + "this is the smallest failing schedule found so far (NOT minimal)";
  }

  // The "broken: ..." lines; from the explorer's failure when the stop cut
  // the counterexample's replay (no final values to show).
  static std::string BrokenText(const Scenario& s, const Checked& c) {
    if (!c.cx->run.stopped) return FormatBroken(s, c.cx->run);
    const Failure& f = *c.res.failure;
    return "broken: " + std::string(VerdictName(f.verdict)) + (f.message.empty() ? "" : ": " + f.message) +
           " (final values not shown: the replay was stopped)\n";
  }

  size_t NameWidth() const {
    size_t w = 8;
    for (const Target& t : targets_) w = std::max(w, t.name.size());
    return w;
  }

  void PrintTableHeader() {
    std::printf("%-*s  %-14s %-14s %-11s %11s %8s %10s  %s\n", static_cast<int>(NameWidth()), "SCENARIO", "EXPECTED",
                "FOUND", "RESULT", "EXECUTIONS", "OUTCOMES", "TIME", "COUNTEREXAMPLE");
  }

  // shared_from: the ABI whose exploration t shares ("" if its own); such a
  // line says so instead of a time.
  void PrintTableLine(const Target& t, const Checked& c, const std::string& shared_from = "") {
    std::string cx;
    if (c.cx) cx = c.cx->token + " (" + Plural(c.cx->stats.events_after, "event") + (c.cx->stopped ? ", NOT minimal" : "") + ")";
    if (!shared_from.empty()) {
      cx = "shares the exploration of @" + shared_from + (cx.empty() ? "" : "; " + cx);
      std::printf("%-*s  %-14s %-14s %-11s %11s %8s %10s  %s\n", static_cast<int>(NameWidth()), t.name.c_str(),
                  ExpectText(t.expected()).c_str(), ExpectText(c.found).c_str(), ResultWord(c).c_str(), "=", "=",
                  "0.00 s", cx.c_str());
      return;
    }
    std::printf("%-*s  %-14s %-14s %-11s %11llu %8llu %10s  %s\n", static_cast<int>(NameWidth()), t.name.c_str(),
                ExpectText(t.expected()).c_str(), ExpectText(c.found).c_str(), ResultWord(c).c_str(),
                static_cast<unsigned long long>(c.res.executions),
                static_cast<unsigned long long>(c.res.distinct_outcomes), Seconds(c.res.elapsed_s).c_str(),
                cx.c_str());
  }

  // The run options of target t: the common ones under its kernel ABI.
  RunOptions RunFor(const Target& t) const {
    RunOptions r = run_;
    r.kernel = t.kernel;
    return r;
  }

  // "kernel 6.18", or "kernels 4.18, 6.0, 6.19" when the targets use several.
  std::string KernelsText() const {
    std::vector<std::string> names;
    for (const Target& t : targets_) {
      if (std::find(names.begin(), names.end(), t.kernel.text) == names.end()) names.push_back(t.kernel.text);
    }
    std::string out = names.size() == 1 ? "kernel " : "kernels ";
    for (size_t i = 0; i < names.size(); ++i) out += (i ? ", " : "") + names[i];
    return out;
  }

  // "dpor", or for --strategy auto "auto: 20 stateful, 31 dpor" (the
  // scenarios reported so far under each).
  std::string StrategiesText() const {
    if (a_.strategy) return StrategyName(*a_.strategy);
    std::string text = "auto:";
    for (const auto& [kind, n] : chosen_) {
      text += (text.back() == ':' ? " " : ", ") + std::to_string(n) + " " + StrategyName(kind);
    }
    return text;
  }

  void PrintFooter(size_t done, size_t mismatches, size_t incomplete, bool interrupted, double total_s) {
    std::printf("\n%s checked (%s, bounds %s%s, %s): %zu as expected, %zu mismatches, %zu incomplete%s; %s.\n",
                Plural(done, "scenario").c_str(), StrategiesText().c_str(), a_.bounds.ToString().c_str(),
                a_.iterative ? " iterative" : "", KernelsText().c_str(), done - mismatches, mismatches, incomplete,
                interrupted ? ", INTERRUPTED" : "", Seconds(total_s).c_str());
    std::printf("A scenario's counterexample in full: %s check NAME; replay one: %s replay NAME --schedule TOKEN\n",
                argv0_.c_str(), argv0_.c_str());
  }

  // shared_from: the ABI whose exploration t shares ("" if its own).
  std::string Json(const Target& t, const Checked& c, const std::string& shared_from = "") const {
    auto bound = [](uint32_t v) { return v == kUnbounded ? std::string("null") : std::to_string(v); };
    const ExploreResult& r = c.res;
    const bool sampling = a_.strategy == StrategyKind::kRandom || a_.strategy == StrategyKind::kPct;
    char elapsed[32];
    std::snprintf(elapsed, sizeof elapsed, "%.3f", r.elapsed_s);
    char pilot_s[32];
    std::snprintf(pilot_s, sizeof pilot_s, "%.3f", t.strategy.pilot_seconds);
    std::ostringstream j;
    j << "{\"scenario\":" << JsonQuote(t.name) << ",\"file\":" << JsonQuote(t.scenario.file)
      << ",\"kernel\":" << JsonQuote(t.kernel.text) << ",\"kernel_model\":" << JsonQuote(KernelModelName(t.kernel.model))
      << ",\"strategy\":" << JsonQuote(StrategyName(t.strategy.kind))
      << ",\"strategy_auto\":" << (t.strategy_auto ? "true" : "false")
      << ",\"strategy_reason\":" << JsonQuote(t.strategy.reason) << ",\"strategy_pilot_s\":" << pilot_s
      << ",\"strategy_pilot_reused\":" << (c.pilot_reused ? "true" : "false")
      << ",\"bounds\":{\"max_events\":"
      << a_.bounds.max_events << ",\"max_preemptions\":" << bound(a_.bounds.max_preemptions)
      << ",\"max_migrations\":" << bound(a_.bounds.max_migrations) << ",\"max_signals\":"
      << bound(a_.bounds.max_signals) << ",\"max_ipis\":" << bound(a_.bounds.max_ipis)
      << ",\"text\":" << JsonQuote(a_.bounds.ToString()) << "}"
      << ",\"iterative\":" << (a_.iterative ? "true" : "false")
      << ",\"all_event_positions\":" << (a_.all_event_positions ? "true" : "false")
      << ",\"seed\":" << (sampling ? std::to_string(a_.seed) : "null")
      << ",\"verdict\":" << JsonQuote(VerdictName(c.found)) << ",\"expected\":"
      << JsonQuote(VerdictName(t.expected())) << ",\"as_expected\":" << (c.as_expected ? "true" : "false")
      << ",\"result\":" << JsonQuote(ResultWord(c)) << ",\"executions\":" << r.executions
      << ",\"redundant\":" << r.redundant << ",\"cycles_pruned\":" << r.cycles_pruned << ",\"distinct_outcomes\":" << r.distinct_outcomes
      << ",\"max_depth\":" << r.max_depth << ",\"placements\":" << PlacementSpace(t.scenario, kMaxSampledPlacements).size()
      << ",\"states\":" << r.states << ",\"bound_level\":" << r.bound_level
      << ",\"complete\":" << (r.complete ? "true" : "false") << ",\"stop_reason\":" << JsonQuote(r.stop_reason)
      << ",\"interrupted\":" << (c.interrupted ? "true" : "false")
      << ",\"resumed_executions\":" << r.resumed_executions << ",\"elapsed_s\":" << elapsed
      << ",\"explored_under\":" << JsonQuote(shared_from.empty() ? t.kernel.text : shared_from);
    if (t.strategy.kind == StrategyKind::kStateful) {
      char per[32], omit[32];
      std::snprintf(per, sizeof per, "%.2f", r.states ? static_cast<double>(r.state_bytes) / r.states : 0.0);
      std::snprintf(omit, sizeof omit, "%.3g", r.omission_estimate);
      j << ",\"state_storage\":" << JsonQuote(StateStorageName(a_.state_storage)) << ",\"state_bytes\":"
        << r.state_bytes << ",\"bytes_per_state\":" << per << ",\"omission_estimate\":" << omit;
    }
    if (c.cx) {
      const Counterexample& cx = *c.cx;
      j << ",\"counterexample\":{\"token\":" << JsonQuote(cx.token) << ",\"events\":" << cx.stats.events_after
        << ",\"decisions\":" << cx.stats.entries_after << ",\"steps\":" << cx.run.steps
        << ",\"replay_stopped\":" << (cx.run.stopped ? "true" : "false")
        << ",\"verdict\":" << JsonQuote(VerdictName(cx.run.stopped ? r.failure->verdict : cx.run.verdict))
        << ",\"message\":" << JsonQuote(cx.run.stopped ? r.failure->message : cx.run.message)
        << ",\"explored_message\":" << JsonQuote(r.failure->message)
        << ",\"execution\":" << r.failure->execution << ",\"schedule\":[";
      for (size_t k = 0; k < cx.schedule.entries.size(); ++k) {
        const ScheduleEntry& e = cx.schedule.entries[k];
        j << (k ? "," : "") << "{\"boundary\":" << e.boundary << ",\"decision\":" << JsonQuote(ToString(e.decision))
          << "}";
      }
      j << "],\"minimised_from\":{\"events\":" << cx.stats.events_before << ",\"decisions\":"
        << cx.stats.entries_before << ",\"steps\":" << cx.stats.steps_before << ",\"runs\":" << cx.stats.runs
        << "},\"fewest_events_proven\":" << (cx.stats.fewest_events_proven ? "true" : "false")
        << ",\"search_executions\":" << cx.stats.search_executions
        << ",\"minimisation_complete\":" << (cx.stopped ? "false" : "true")
        << ",\"deterministic\":" << (cx.deterministic ? "true" : "false")
        << ",\"verified\":" << (cx.verified ? "true" : "false")
        << ",\"trace_omitted\":" << (cx.trace_omitted ? JsonQuote(*cx.trace_omitted) : std::string("null"))
        << ",\"replay\":" << JsonQuote(ReplayCommand(t, cx.token)) << ",\"trace\":" << FormatJson(t.scenario, cx.run)
        << "}";
    }
    j << "}";
    return j.str();
  }

  const CheckArgs& a_;
  std::string argv0_;
  std::vector<Target> targets_;
  bool summary_;
  RunOptions run_;
  std::optional<CheckpointFile> ckpt_;
  bool checkpoint_ok_ = true;
  ProgressLine progress_;
  std::set<std::string> notes_;  // --jobs notes already printed
  std::map<StrategyKind, size_t> chosen_;  // scenarios reported, by the strategy that explored them
};

// Makes the targets [first, end) of one scenario that are of one ABI family
// (KernelAbi::RulesDifferingFrom) sharers of one of them: the default ABI
// (KernelVersion{}) if it is in the family, else the first; that target
// moves to the family's first place.
void GroupSharers(std::vector<Target>& targets, size_t first) {
  for (size_t r = first; r < targets.size(); ++r) {
    const KernelAbi& rep = AbiFor(targets[r].kernel.model);
    std::vector<size_t> family;
    for (size_t j = r + 1; j < targets.size(); ++j) {
      if (rep.RulesDifferingFrom(AbiFor(targets[j].kernel.model))) family.push_back(j);
    }
    if (family.empty()) continue;
    size_t lead = r;
    for (size_t j : family) {
      if (&AbiFor(targets[j].kernel.model) == &AbiFor(KernelVersion{}.model)) lead = j;  // the default ABI leads
    }
    std::vector<Target> group;
    group.push_back(std::move(targets[lead]));
    if (lead != r) group.push_back(std::move(targets[r]));
    for (size_t j : family) {
      if (j != lead) group.push_back(std::move(targets[j]));
    }
    for (size_t g = 1; g < group.size(); ++g) group[0].sharers.push_back(group[g].kernel);
    for (auto it = family.rbegin(); it != family.rend(); ++it) targets.erase(targets.begin() + static_cast<std::ptrdiff_t>(*it));
    targets[r] = std::move(group[0]);
  }
}

// Each target's strategy: --strategy, or for auto a placeholder that the
// checker resolves (ChooseStrategy, with the target's options) just before
// exploring it.
void ChooseStrategies(const CheckArgs& a, std::vector<Target>& targets) {
  for (Target& t : targets) {
    t.strategy_auto = !a.strategy;
    t.strategy = StrategyChoice{a.strategy.value_or(StrategyKind::kDpor), "", {}, 0};
  }
}

// FILEs under --kernel (default: the running kernel's ABI); without FILE
// every built-in under --kernel, or, without --kernel, under every ABI
// (`rseqmc kernels`) that can run it (KernelAbi::NotApplicable), each
// against the verdict it expects there.
std::vector<Target> LoadTargets(const CheckArgs& a) {
  std::vector<Target> targets;
  const KernelVersion chosen = ChosenKernel(a.kernel);
  if (a.files.empty()) {
    for (const BuiltinScenario& b : BuiltinScenarios()) {
      Scenario s = ParseScenario(b.text, b.path);
      if (a.all_placements) AllowEveryPlacement(s);
      if (a.kernel) {
        if (AbiFor(chosen.model).NotApplicable(s)) continue;
        targets.push_back({b.name, b.name, s, chosen, {}, {}, false});
        continue;
      }
      const size_t first = targets.size();
      for (const KernelAbi* abi : AllAbis()) {
        if (abi->NotApplicable(s)) continue;  // e.g. a 2015-RFC program on a merged kernel
        const KernelVersion k{abi->info().model, abi->info().name};
        targets.push_back({b.name, b.name + " @" + k.text, s, k, {}, {}, false});
      }
      if (!a.checkpoint) GroupSharers(targets, first);
    }
    ChooseStrategies(a, targets);
    return targets;
  }
  for (const std::string& f : a.files) {
    Scenario s = LoadScenario(f, a.defines);
    if (a.all_placements) AllowEveryPlacement(s);
    const KernelVersion k = ChosenKernel(a.kernel, s);
    targets.push_back({f, f, std::move(s), k, {}, {}, false});
  }
  ChooseStrategies(a, targets);
  return targets;
}

}  // namespace

std::string CheckHelp() {
  std::ostringstream out;
  out << "usage: rseqmc check [FILE...] [--strategy auto|dpor|dfs|stateful|random|pct] [--max-events K]\n"
         "                    [--preemption-bound P] [--max-migrations M] [--max-signals S] [--max-ipis I]\n"
         "                    [--iterative] [--all-event-positions] [--seed N] [--pct-depth D]\n"
         "                    [-D NAME=VALUE]... [--kernel VERSION] [--max-steps N] [--max-executions N]\n"
         "                    [--time-limit SECONDS] [--max-memory BYTES] [--jobs N] [--checkpoint FILE]\n"
         "                    [--placements all|scenario]\n"
         "                    [--json] [--html OUT]\n"
         "\n"
         "Model-checks each scenario FILE (a .rsq file, or the name of a built-in scenario as shown by\n"
         "'rseqmc list'): explores its executions with at most K injected events each, stops at the\n"
         "first failure, and compares the verdict with the scenario's 'expect' line (a file without one\n"
         "is expected to pass). A failure is re-run to confirm it (same verdict and trace hash), its\n"
         "schedule is minimised (fewest events, then fewest steps) and printed with the values that\n"
         "broke the property, the per-CPU timeline and a command that replays it. Without FILE, every\n"
         "built-in scenario is checked and reported on one line.\n"
         "\n"
         "Defaults: --strategy auto --max-events 1. auto explores a scenario with dpor when a thread is\n"
         "C++ or a loop can repeat a state (a spin-wait, whose livelock stateful search would prune);\n"
         "otherwise it runs both dpor and stateful without events (a pilot, capped) and picks dpor when\n"
         "stateful search's states reach twice DPOR's steps (the threads race in few places), else\n"
         "stateful; it prints which and why, with the figures (at --max-events 0 the pilot is the\n"
         "exploration). Every planted bug under\n"
         "scenarios/buggy/ needs one event and is found by auto, dpor, dfs and stateful with these\n"
         "bounds; the exhaustive strategies check the correct built-in scenarios completely within them.\n"
         "\n"
         "A progress line goes to stderr during explorations longer than a second. Ctrl-C stops the\n"
         "exploration cleanly: the report so far is printed, marked interrupted (a second Ctrl-C\n"
         "quits at once). Ctrl-C and --time-limit act within a second, inside one long execution and\n"
         "while a counterexample is confirmed and minimised too: the failure found is then reported\n"
         "with the smallest failing schedule so far, marked 'minimisation INCOMPLETE' and NOT minimal.\n"
         "The same inputs and seed always give the same result.\n"
         "\n"
      << VisibleOptions()
      << "\n"
         "Exit status: 0 every verdict as expected (a scenario stopped early by --time-limit,\n"
         "--max-executions or --max-memory without a failure counts, its result 'incomplete'); 1 a\n"
         "verdict differs from the expected one (a bug found in a scenario expected to pass, also when\n"
         "Ctrl-C or --time-limit stopped its minimisation, or a planted bug not found); 2 bad usage or\n"
         "bad input; 3 interrupted by Ctrl-C with no differing verdict found, or an internal error.\n";
  return out.str();
}

int CheckCommand(const std::vector<std::string>& args, const std::string& argv0) {
  const CheckArgs a = ParseCheckArgs(args);
  if (a.help) {
    std::cout << CheckHelp();
    return kExitPass;
  }
  std::vector<Target> targets = LoadTargets(a);
  if (targets.empty()) {
    std::cout << "no built-in scenarios (add .rsq files under scenarios/ and rebuild)\n";
    return kExitPass;
  }
  Checker checker(a, argv0, std::move(targets));
  return checker.Run();
}

}  // namespace rseqmc::cli
