// The exhaustive search restricted to one subtree of its search tree: the
// hooks model/parallel.cc's work-stealing is built on (issue 14). Internal to
// the checker: users call Explore (model/explorer.h) or ExploreParallel
// (model/parallel.h).
//
// A subtree is named by a schedule prefix (TreePrefix): the alternative taken
// at each boundary from the initial state down to the subtree's root. The
// sequential explorer is the subtree with the empty prefix. A SubtreeSearch
// replays the prefix (its nodes are fixed: backtracking never goes above
// them) and explores everything below it in the sequential explorer's order,
// with the same alternatives at every boundary (kDfs, kStateful); between
// executions its owner may take away the shallowest unexplored alternative
// (GiveAway), which is then no longer explored here: the leaves of the
// subtrees handed out and of the one kept partition the leaves of the
// original subtree, so DFS execution counts add up to the sequential ones.
//
// Every leaf (execution) has a position in the sequential explorer's order:
// its TreeKey, the rank of the alternative taken at each boundary; keys
// compare lexicographically in that order, and a subtree's leaves all have
// keys that start with its prefix's. The sequential explorer's first failure
// is the failing leaf with the smallest key.
#ifndef RSEQMC_MODEL_SUBTREE_H_
#define RSEQMC_MODEL_SUBTREE_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <vector>

#include "model/explorer.h"
#include "model/state_set.h"
#include "sim/simulator.h"

namespace rseqmc {

// One boundary of a prefix: the thread the transition is named after, what
// happens to it (its step or an injected event with `arg`: preempt to thread
// `arg` or -1, migrate to CPU `arg`, signal `arg`), and the alternative's rank
// in the sequential order at that boundary (0 = explored first), and whether
// the boundary offered every running thread's alternatives (`full`: no ample
// set left one out; the cycle proviso C3 of model/explorer.cc looks for such
// a node on a cycle, prefix nodes included).
struct TreeChoice {
  int16_t thread = 0;
  DecisionKind kind = DecisionKind::kStep;
  int16_t arg = -1;
  uint32_t rank = 0;
  bool full = true;
};
using TreePrefix = std::vector<TreeChoice>;
// A leaf's or a prefix's position in the sequential order (ranks by depth).
using TreeKey = std::vector<uint32_t>;
TreeKey KeyOf(const TreePrefix& p);

// The callbacks of SubtreeSearch::Run, each called on the thread running it.
struct SubtreeHooks {
  // A finished execution (not pruned); false ends the subtree's search.
  std::function<bool(ExecutionResult&)> after;
  // An execution pruned (visited state, spin with a queued thread); false ends it.
  std::function<bool()> after_pruned;
  // Polled every 1024 boundaries inside an execution; true cuts it short and
  // ends the search (the execution is not counted).
  std::function<bool()> deadline;
  // Stateful search: adds a state hash to the (shared) visited set; true if
  // it was new. Unset: the search's own visited set.
  std::function<bool(const StateSet::Key&)> insert_state;
};

// Thrown by SubtreeSearch::Run when an execution read mm_cid that the
// reductions assumed unreadable: run again with mm_cid_readable (see Explore).
struct SubtreeMmCidLoaded {};

class SubtreeSearch {
 public:
  // o.strategy must be kDfs or kStateful (DPOR's backtrack sets are not
  // final while their subtrees are explored elsewhere); `bounds` is the
  // events bound of this level; checkpoint_budget_bytes the machine
  // checkpoints' share of memory.
  SubtreeSearch(const Scenario& s, const ExploreOptions& o, const Bounds& bounds, bool mm_cid_readable,
                uint64_t checkpoint_budget_bytes);
  ~SubtreeSearch();
  SubtreeSearch(const SubtreeSearch&) = delete;
  SubtreeSearch& operator=(const SubtreeSearch&) = delete;

  // Explores the subtree under `prefix` with `sim` (of the same scenario and
  // run options), adding executions, redundant and max_depth to `res`.
  // Returns true if the subtree was exhausted. Throws SubtreeMmCidLoaded.
  bool Run(Simulator& sim, const TreePrefix& prefix, const SubtreeHooks& hooks, ExploreResult& res);

  // Between executions (from hooks.after / hooks.after_pruned): removes the
  // last alternative, in the sequential order, of the shallowest boundary
  // below the prefix that has one not yet explored, and returns the prefix
  // naming its subtree; nullopt if there is none.
  std::optional<TreePrefix> GiveAway();
  // The key of the execution that just finished (from the hooks).
  TreeKey LeafKey() const;
  // Bytes held by the path's nodes and the machine checkpoints (--max-memory).
  uint64_t MemoryBytes() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace rseqmc

#endif  // RSEQMC_MODEL_SUBTREE_H_
