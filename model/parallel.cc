// Work-stealing exhaustive search (model/parallel.h for the design).
#include "model/parallel.h"

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <exception>
#include <memory>
#include <mutex>
#include <set>
#include <stdexcept>
#include <thread>
#include <utility>
#include <vector>

#include "model/state_set.h"
#include "model/subtree.h"
#include "sim/placement.h"

namespace rseqmc {

unsigned ResolveJobs(unsigned jobs) {
  if (jobs != 0) return jobs;
  return std::max(1u, std::thread::hardware_concurrency());
}

std::optional<std::string> WhyNotParallel(const Scenario& s, const ExploreOptions& o) {
  if (o.strategy == StrategyKind::kDpor) {
    return "dpor runs on one worker: a node's DPOR backtrack and sleep sets are final only once every subtree "
           "below it has been explored in order (use --strategy dfs or stateful to use every worker)";
  }
  if (o.strategy == StrategyKind::kRandom || o.strategy == StrategyKind::kPct) {
    return std::string(StrategyName(o.strategy)) + " runs on one worker (one random stream)";
  }
  for (const ThreadSpec& t : s.threads) {
    if (t.native) return "runs on one worker: thread '" + t.name + "' is a C++ thread";
  }
  if (o.snapshot || o.resume_from != nullptr) return "runs on one worker: checkpoints are of the sequential search";
  if (PlacementSpace(s).size() > 1) {
    return "runs on one worker: the work-stealing split starts below the initial placement, so a scenario with "
           "several placements (`cpu any`, --placements all) is explored by the sequential loop over them";
  }
  return std::nullopt;
}

namespace {

using Clock = std::chrono::steady_clock;
constexpr auto kRelaxed = std::memory_order_relaxed;

// The stateful search's shared visited set: 2^kShardBits StateSets, each
// behind its own mutex, chosen by the top bits of the hash's first word
// (the StateSet indexes its table with the low bits). kBitstate: each shard
// holds 2^(log2 - kShardBits) bits, 2^log2 in all.
class ShardedStateSet {
 public:
  static constexpr int kShardBits = 6;
  ShardedStateSet(StateStorage mode, uint32_t bitstate_log2) {
    const uint32_t per_shard = mode == StateStorage::kBitstate ? bitstate_log2 - kShardBits : bitstate_log2;
    for (Shard& sh : shards_) sh.set = StateSet(mode, per_shard);
  }
  // True if `k` was new (StateSet::Insert).
  bool Insert(const StateSet::Key& k) {
    Shard& sh = shards_[k.first >> (64 - kShardBits)];
    std::lock_guard<std::mutex> lock(sh.m);
    const size_t before = sh.set.bytes();
    const bool fresh = sh.set.Insert(k);
    if (fresh) size_.fetch_add(1, kRelaxed);
    bytes_.fetch_add(sh.set.bytes() - before, kRelaxed);
    return fresh;
  }
  uint64_t size() const { return size_.load(kRelaxed); }
  uint64_t bytes() const { return bytes_.load(kRelaxed); }
  // The shards' omission estimates added up (states collide only within one).
  double OmissionEstimate() {
    double sum = 0;
    for (Shard& sh : shards_) {
      std::lock_guard<std::mutex> lock(sh.m);
      sum += sh.set.OmissionEstimate();
    }
    return sum;
  }

 private:
  struct alignas(64) Shard {
    std::mutex m;
    StateSet set;
  };
  std::array<Shard, size_t{1} << kShardBits> shards_;
  std::atomic<uint64_t> size_{0};
  std::atomic<uint64_t> bytes_{0};
};

// What the workers of one run (all events levels) share across levels.
struct RunShared {
  RunShared(const Scenario& s, const ExploreOptions& o, unsigned jobs, bool mm_cid_readable, uint64_t checkpoint_budget)
      : s(s), o(o), jobs(jobs), mm_cid_readable(mm_cid_readable), start(Clock::now()),
        checkpoint_budget(checkpoint_budget), last_progress(start) {}
  const Scenario& s;
  const ExploreOptions& o;
  unsigned jobs;
  bool mm_cid_readable;
  Clock::time_point start;
  uint64_t checkpoint_budget;
  std::atomic<uint64_t> tickets_issued{0};  // --max-executions
  std::atomic<uint64_t> finished{0};        // executions finished by all workers
  std::mutex callback_m;                    // o.on_execution
  std::mutex progress_m;                    // o.progress, last_progress
  Clock::time_point last_progress;
};

// One events level's pool of subtrees, stop flag and best failure.
class Level {
 public:
  Level(RunShared& run, Bounds bounds, ShardedStateSet* visited)
      : run(run), bounds(bounds), visited(visited), memory(std::make_unique<std::atomic<uint64_t>[]>(run.jobs)) {
    pool_.push_back({});  // the whole tree
    pool_size_.store(1);
    for (unsigned i = 0; i < run.jobs; ++i) memory[i].store(0);
  }

  RunShared& run;
  const Bounds bounds;
  ShardedStateSet* const visited;  // stateful search only
  std::unique_ptr<std::atomic<uint64_t>[]> memory;  // each worker's path and checkpoint bytes
  std::atomic<bool> stop{false};  // no worker starts another execution
  std::atomic<bool> cut{false};   // and executions under way are cut short
  std::atomic<bool> mm_cid_loaded{false};

  // A subtree to explore, the shallowest in the pool; nullopt when the
  // level is over (every worker idle with the pool empty, or stopped).
  std::optional<TreePrefix> Take() {
    std::unique_lock<std::mutex> lock(m_);
    ++idle_;
    idle_count_.store(idle_, kRelaxed);
    for (;;) {
      if (stop.load() || finished_) break;
      DropAfterFailure();
      if (!pool_.empty()) {
        auto it = std::min_element(pool_.begin(), pool_.end(),
                                   [](const TreePrefix& a, const TreePrefix& b) { return a.size() < b.size(); });
        TreePrefix p = std::move(*it);
        pool_.erase(it);
        pool_size_.store(pool_.size(), kRelaxed);
        --idle_;
        idle_count_.store(idle_, kRelaxed);
        return p;
      }
      if (idle_ == run.jobs) break;
      cv_.wait(lock);
    }
    finished_ = true;
    cv_.notify_all();
    return std::nullopt;
  }
  // True when a busy worker should give a subtree away: more idle workers
  // than subtrees waiting (two relaxed loads; a stale answer costs at most an
  // extra or a late steal).
  bool Hungry() const { return idle_count_.load(kRelaxed) > pool_size_.load(kRelaxed); }
  void Give(TreePrefix p) {
    std::lock_guard<std::mutex> lock(m_);
    if (PastFailure(p)) return;
    pool_.push_back(std::move(p));
    pool_size_.store(pool_.size(), kRelaxed);
    cv_.notify_one();
  }
  // Ends the level for every worker; the first reason given is kept. `cut`:
  // executions under way end at their next deadline poll (interrupt, time
  // limit); otherwise they finish (an execution holding a ticket runs).
  void Stop(const std::string& reason, bool cut_short = false) {
    std::lock_guard<std::mutex> lock(m_);
    if (stop_reason_.empty()) stop_reason_ = reason;
    if (cut_short) cut.store(true);
    stop.store(true);
    cv_.notify_all();
  }
  void SetError(std::exception_ptr e) {
    {
      std::lock_guard<std::mutex> lock(m_);
      if (!error_) error_ = e;
    }
    Stop("error", true);
  }
  // Keeps the failure with the smallest key.
  void RecordFailure(Failure f, TreeKey key) {
    std::lock_guard<std::mutex> lock(m_);
    if (failure_ && !(key < failure_key_)) return;
    failure_ = std::move(f);
    failure_key_ = std::move(key);
    failure_version_.fetch_add(1);
  }
  // The version of the best failure (0: none yet) and, when it changed
  // since `seen`, a copy of its key.
  uint64_t failure_version() const { return failure_version_.load(kRelaxed); }
  TreeKey FailureKey() {
    std::lock_guard<std::mutex> lock(m_);
    return failure_key_;
  }
  // After the workers have joined:
  const std::optional<Failure>& failure() const { return failure_; }
  const std::string& stop_reason() const { return stop_reason_; }
  std::exception_ptr error() const { return error_; }

 private:
  // True if the subtree of `p` comes after the failure found, which ends
  // the search (stop_at_first_failure): it need not be explored.
  bool PastFailure(const TreePrefix& p) const {
    return run.o.stop_at_first_failure && failure_ && failure_key_ < KeyOf(p);
  }
  void DropAfterFailure() {
    std::erase_if(pool_, [this](const TreePrefix& p) { return PastFailure(p); });
    pool_size_.store(pool_.size(), kRelaxed);
  }

  std::mutex m_;
  std::condition_variable cv_;
  std::vector<TreePrefix> pool_;
  unsigned idle_ = 0;
  bool finished_ = false;
  std::atomic<unsigned> idle_count_{0};
  std::atomic<size_t> pool_size_{0};
  std::string stop_reason_;
  std::exception_ptr error_;
  std::optional<Failure> failure_;
  TreeKey failure_key_;
  std::atomic<uint64_t> failure_version_{0};
};

// Bytes held by a set of outcomes, roughly (the explorer's estimate counts
// the payloads; this is for the memory limit across workers).
uint64_t OutcomeEstimate(const std::set<Outcome>& outcomes) { return outcomes.size() * (sizeof(Outcome) + 128); }

class Worker {
 public:
  Worker(Level& level, unsigned id)
      : lv_(level), run_(level.run), o_(level.run.o), id_(id), sim_(run_.s, o_.run), outcomes_(run_.s) {}

  // Explores subtrees from the pool until the level is over.
  void Main() {
    try {
      while (std::optional<TreePrefix> p = lv_.Take()) RunSubtree(*p);
    } catch (const SubtreeMmCidLoaded&) {
      lv_.mm_cid_loaded.store(true);
      lv_.Stop("mm_cid", true);
    } catch (...) {
      lv_.SetError(std::current_exception());
    }
  }

  ExploreResult res;  // this worker's executions, outcomes, depth, peak memory
  uint32_t rule_sensitivity() const { return sim_.rule_sensitivity(); }

 private:
  void RunSubtree(const TreePrefix& prefix) {
    if (!TakeTicket()) return;
    SubtreeSearch search(run_.s, o_, lv_.bounds, run_.mm_cid_readable, run_.checkpoint_budget);
    search_ = &search;
    SubtreeHooks hooks;
    hooks.after = [this](ExecutionResult& r) { return After(r); };
    hooks.after_pruned = [this] {
      run_.finished.fetch_add(1, kRelaxed);
      return KeepGoing();
    };
    hooks.deadline = [this] { return !WithinDeadline(); };
    if (lv_.visited != nullptr) {
      hooks.insert_state = [v = lv_.visited](const StateSet::Key& k) { return v->Insert(k); };
    }
    // Exhausted: the ticket KeepGoing took for a next execution is unused.
    if (search.Run(sim_, prefix, hooks, res)) ReturnTicket();
    search_ = nullptr;
  }

  bool TakeTicket() {
    if (o_.max_executions == 0) return true;
    if (run_.tickets_issued.fetch_add(1) < o_.max_executions) return true;
    lv_.Stop("max-executions");
    return false;
  }
  void ReturnTicket() {
    if (o_.max_executions != 0) run_.tickets_issued.fetch_sub(1);
  }

  // A finished execution: the sequential explorer's verdict handling, with
  // the failure recorded by its position in the sequential order.
  bool After(ExecutionResult& r) {
    const uint64_t finished = run_.finished.fetch_add(1, kRelaxed) + 1;
    std::optional<uint64_t> oracle_hash;  // the machine's verdict's hash, before the oracle's
    if (r.verdict == Verdict::kPass && o_.oracle) {
      std::string why = o_.oracle(r);
      if (!why.empty()) {
        oracle_hash = r.TraceHash();
        r.verdict = Verdict::kAssertFailed;
        r.message = std::move(why);
      }
    }
    if (o_.collect_outcomes) outcomes_.Insert(r, res.outcomes);
    if (o_.on_execution) {
      std::lock_guard<std::mutex> lock(run_.callback_m);
      o_.on_execution(r);
    }
    if (r.verdict != Verdict::kPass) {
      TreeKey key = search_->LeafKey();
      lv_.RecordFailure(Failure{r.schedule, r.verdict, r.message, finished, oracle_hash.value_or(r.TraceHash())},
                        std::move(key));
      // Everything after it in this subtree comes later in the order.
      if (o_.stop_at_first_failure) return false;
    }
    return KeepGoing();
  }

  // Between executions: false ends this subtree (a limit stops every worker).
  bool KeepGoing() {
    if (lv_.stop.load(kRelaxed) || !WithinDeadline() || !WithinMemory()) return false;
    if (o_.stop_at_first_failure && AfterFailure()) return false;
    Progress();
    if (lv_.Hungry()) {
      if (std::optional<TreePrefix> p = search_->GiveAway()) lv_.Give(std::move(*p));
    }
    return TakeTicket();
  }

  // True if a failure earlier in the order than this execution is known:
  // the rest of the subtree comes after it too.
  bool AfterFailure() {
    const uint64_t v = lv_.failure_version();
    if (v == 0) return false;
    if (v != failure_seen_) {
      failure_key_ = lv_.FailureKey();
      failure_seen_ = v;
    }
    return failure_key_ < search_->LeafKey();
  }

  // Polled between executions and inside them (SubtreeHooks::deadline).
  bool WithinDeadline() {
    if (lv_.cut.load(kRelaxed)) return false;
    if (o_.interrupt != nullptr && o_.interrupt->load(kRelaxed)) {
      lv_.Stop("interrupted", true);
      return false;
    }
    if (o_.time_limit_s > 0 && std::chrono::duration<double>(Clock::now() - run_.start).count() >= o_.time_limit_s) {
      lv_.Stop("time-limit", true);
      return false;
    }
    return true;
  }

  // Every 64th execution of this worker (and its first): this worker's
  // bytes published, everyone's added up.
  bool WithinMemory() {
    if (++executions_ > 1 && (executions_ & 63) != 0) return true;
    lv_.memory[id_].store(search_->MemoryBytes() + OutcomeEstimate(res.outcomes), kRelaxed);
    uint64_t total = lv_.visited != nullptr ? lv_.visited->bytes() : 0;
    for (unsigned i = 0; i < run_.jobs; ++i) total += lv_.memory[i].load(kRelaxed);
    res.peak_memory_bytes = std::max(res.peak_memory_bytes, total);
    if (o_.max_memory_bytes == 0 || total <= o_.max_memory_bytes) return true;
    lv_.Stop("memory-limit");
    return false;
  }

  void Progress() {
    if (!o_.progress || (executions_ & 63) != 0) return;
    std::unique_lock<std::mutex> lock(run_.progress_m, std::try_to_lock);
    if (!lock.owns_lock()) return;
    const auto now = Clock::now();
    if (now - run_.last_progress < std::chrono::seconds(1)) return;
    run_.last_progress = now;
    o_.progress(ExploreProgress{run_.finished.load(kRelaxed), std::chrono::duration<double>(now - run_.start).count(),
                                res.outcomes.size(), res.max_depth, lv_.bounds.max_events,
                                lv_.visited != nullptr ? lv_.visited->size() : 0});
  }

  Level& lv_;
  RunShared& run_;
  const ExploreOptions& o_;
  const unsigned id_;
  Simulator sim_;
  OutcomeInserter outcomes_;  // into res.outcomes
  SubtreeSearch* search_ = nullptr;
  uint64_t executions_ = 0;  // this worker's, for WithinMemory and Progress
  uint64_t failure_seen_ = 0;
  TreeKey failure_key_;
};

// Adds a level's workers' results to `total`.
void Merge(const std::vector<std::unique_ptr<Worker>>& workers, ExploreResult& total) {
  for (const auto& w : workers) {
    total.executions += w->res.executions;
    total.redundant += w->res.redundant;
    total.cycles_pruned += w->res.cycles_pruned;
    total.max_depth = std::max(total.max_depth, w->res.max_depth);
    total.peak_memory_bytes = std::max(total.peak_memory_bytes, w->res.peak_memory_bytes);
    total.outcomes.insert(w->res.outcomes.begin(), w->res.outcomes.end());
    total.rule_sensitivity |= w->rule_sensitivity();
  }
}

// Explores every events level on run.jobs workers; throws
// SubtreeMmCidLoaded when the program read mm_cid unexpectedly.
ExploreResult ExploreLevels(RunShared& run) {
  const ExploreOptions& o = run.o;
  ExploreResult total;
  for (uint32_t level = o.iterative ? 0 : o.bounds.max_events; level <= o.bounds.max_events; ++level) {
    Bounds b = o.bounds;
    b.max_events = level;
    total.bound_level = level;
    std::optional<ShardedStateSet> visited;
    if (o.strategy == StrategyKind::kStateful) visited.emplace(o.state_storage, o.bitstate_log2);
    Level lv(run, b, visited ? &*visited : nullptr);
    std::vector<std::unique_ptr<Worker>> workers;
    for (unsigned i = 0; i < run.jobs; ++i) workers.push_back(std::make_unique<Worker>(lv, i));
    std::vector<std::thread> threads;
    for (unsigned i = 1; i < run.jobs; ++i) threads.emplace_back([&w = *workers[i]] { w.Main(); });
    workers[0]->Main();
    for (std::thread& t : threads) t.join();
    if (lv.error()) std::rethrow_exception(lv.error());
    if (lv.mm_cid_loaded.load()) throw SubtreeMmCidLoaded{};
    Merge(workers, total);
    if (visited) {
      total.states = visited->size();
      total.state_bytes = visited->bytes();
      total.omission_estimate = visited->OmissionEstimate();
    }
    if (lv.failure() && (!total.failure || o.stop_at_first_failure)) total.failure = lv.failure();
    if (!lv.stop_reason().empty()) {
      total.stop_reason = lv.stop_reason();
      break;
    }
    if (total.failure && o.stop_at_first_failure) {
      total.stop_reason = "failure";
      break;
    }
  }
  if (total.stop_reason.empty()) total.stop_reason = "exhausted";
  total.complete = total.stop_reason == "exhausted";
  return total;
}

uint64_t CheckpointBudgetPerWorker(const ExploreOptions& o, unsigned jobs) {
  if (o.checkpoint_budget_bytes) return std::max<uint64_t>(1, *o.checkpoint_budget_bytes / jobs);
  constexpr uint64_t kMax = uint64_t{128} << 20;  // as Explore's
  const uint64_t all = o.max_memory_bytes == 0 ? kMax : std::min(kMax, o.max_memory_bytes / 8);
  return std::max<uint64_t>(1, all / jobs);
}

}  // namespace

ExploreResult ExploreParallel(const Scenario& s, const ExploreOptions& o, unsigned jobs) {
  jobs = ResolveJobs(jobs);
  if (jobs == 1 || WhyNotParallel(s, o)) return Explore(s, o);
  for (bool mm_cid_readable : {false, true}) {
    RunShared run(s, o, jobs, mm_cid_readable, CheckpointBudgetPerWorker(o, jobs));
    try {
      ExploreResult r = ExploreLevels(run);
      r.distinct_outcomes = r.outcomes.size();
      r.elapsed_s = std::chrono::duration<double>(Clock::now() - run.start).count();
      return r;
    } catch (const SubtreeMmCidLoaded&) {
      // The program read mm_cid at a computed address: explore again with
      // mm_cid in the dependence relation and the state hash (as Explore).
    }
  }
  // The second pass assumes mm_cid readable, which the explorer never throws for.
  throw std::logic_error("ExploreParallel: mm_cid read although assumed readable");
}

}  // namespace rseqmc
