// Wakeup trees of optimal DPOR (Abdulla, Aronis, Jonsson, Sagonas, "Optimal
// dynamic partial order reduction", POPL'14, Algorithm 2, and "Source Sets",
// JACM 2017 §7; as in Nidhugg's src/WakeupTrees.h): the sequences of
// transitions still to be explored from one node of the DPOR search path, so
// that an execution that reverses a race follows the reversal instead of
// making free choices that end sleep-set blocked.
//
// A transition is named relative to its thread (ThreadAlt: the thread steps,
// or an injected event hits it) and carries the footprint it had on the path
// where the race was found; dependence is sim/footprint.h's Dependent. Under
// the POPL'14 assumption that a thread's next transition is determined by
// what happened before it, a transition of v = notdep(e).e' has the same
// footprint wherever it is replayed before e.
//
// The explorer (model/explorer.cc) keeps one tree per path node: the children
// of the root are the alternatives still to be tried there, leftmost first;
// when one is taken, its subtree moves to the next node.
//
// Example (two threads: a writes x, b reads x; race a:w ≺ b:r on the path
// a:w b:r, found at node 0):
//
//     WakeupTree t;
//     t.Insert({{b_read, fp_rx}}, false);  // true: a new leaf
//     t.Insert({{b_read, fp_rx}}, false);  // false: already there
//     WakeupTree sub;
//     WakeupEvent first = t.PopFront(sub);  // b_read; sub is empty (a leaf)
#ifndef RSEQMC_MODEL_WAKEUP_TREE_H_
#define RSEQMC_MODEL_WAKEUP_TREE_H_

#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

#include "sim/footprint.h"
#include "sim/scheduler.h"

namespace rseqmc {

// One scheduler choice named relative to its thread, so that it stays the
// same choice when independent transitions are reordered around it (CPU
// numbers do not): thread `thread` steps (kStep), or an event hits it —
// preempt in favour of thread `arg` (-1: the CPU's run queue is empty),
// migrate to CPU `arg`, deliver signal `arg`, or the membarrier IPI of its
// CPU (kIpi, arg -1).
struct ThreadAlt {
  int16_t thread = 0;
  DecisionKind kind = DecisionKind::kStep;
  int16_t arg = -1;
  friend bool operator==(const ThreadAlt&, const ThreadAlt&) = default;
};

// A transition of a sequence in a wakeup tree: the choice and its footprint.
struct WakeupEvent {
  ThreadAlt alt;
  Footprint fp;
};

// What a transition of a thread absent from v must commute with to be
// inevitable after v while injected events are still possible: an event hitting
// its thread first (preempt, migrate: its CPU, the destination, the mm_cid
// allocator, the thread switched in) would replace it.
inline Footprint WithEventsOnItsThread(Footprint fp) {
  fp.cpus = ~uint64_t{0};
  fp.mm_cid = true;
  return fp;
}

// Where `e` stands in `v` as a weak initial (POPL'14 Def. 6.1 WI[E](v)):
// the index of the first transition of e's thread in v if that transition
// is `e`'s choice and no earlier transition of v is dependent with it (an
// initial); -1 if v has no transition of e's thread and `e` commutes to the
// front of every maximal extension of v; nullopt if `e` is no weak initial.
// `at(k)` gives v's k-th transition (anything with .alt and .fp), k < size.
//
// POPL'14's -1 case assumes e is inevitable: every maximal execution after v
// runs it. Here a thread is no deterministic process, so that holds only
// for a step, and only if nothing in v conflicts with the events that could
// hit e's thread before it (`events_left`: the bound allows another event).
// An injected event is optional (a maximal execution need not contain it,
// and under the bound it may not fit after v at all): it is a weak initial
// only where v contains it. (Without this, a sleeping preemption of t0
// independent of t1's step hid the reversal "t1's signal handler runs before
// t0's tgkill to t1" at K=1: Explore.OptimalDporKeepsARaceThatOnlyASleepingEventCommutesWith.)
template <typename At>
std::optional<std::ptrdiff_t> WeakInitialIndex(const WakeupEvent& e, size_t size, At at, bool events_left) {
  for (size_t k = 0; k < size; ++k) {
    const auto& x = at(k);
    if (x.alt.thread != e.alt.thread) continue;
    if (!(x.alt == e.alt)) return std::nullopt;
    for (size_t y = 0; y < k; ++y) {
      if (Dependent(at(y).fp, x.fp)) return std::nullopt;
    }
    return static_cast<std::ptrdiff_t>(k);
  }
  if (e.alt.kind != DecisionKind::kStep) return std::nullopt;
  const Footprint fp = events_left ? WithEventsOnItsThread(e.fp) : e.fp;
  for (size_t k = 0; k < size; ++k) {
    if (Dependent(at(k).fp, fp)) return std::nullopt;
  }
  return -1;
}

// An ordered tree of transition sequences (the root is the node it belongs
// to and has no transition of its own).
class WakeupTree {
 public:
  WakeupTree() = default;
  WakeupTree(WakeupTree&&) noexcept = default;
  WakeupTree& operator=(WakeupTree&&) noexcept = default;
  WakeupTree(const WakeupTree&) = delete;
  WakeupTree& operator=(const WakeupTree&) = delete;
  ~WakeupTree();

  bool Empty() const { return children_.empty(); }
  size_t NumChildren() const { return children_.size(); }
  void Clear() { children_.clear(); }

  // POPL'14 insert[E](v, wut): follows from the root, leftmost first, the
  // child whose transition is a weak initial of what is left of v (removing
  // it from v when v contains it); v is covered, and nothing changes, when
  // that reaches a leaf or uses up v. Otherwise what is left of v becomes a
  // new rightmost branch there. Returns true if the tree grew.
  // `events_left`: injected events are still possible from the root (see
  // WeakInitialIndex).
  bool Insert(std::vector<WakeupEvent> v, bool events_left);

  // Removes the leftmost child of the root: returns its transition and moves
  // its subtree (the sequences that continue it) into `subtree`. Not empty.
  WakeupEvent PopFront(WakeupTree& subtree);

  // Bytes held (an estimate from the buffers' capacities), for the memory limit.
  uint64_t Bytes() const;

  // Calls f(event, subtree) for each child of the root, leftmost first (for
  // snapshots).
  template <typename F>
  void ForEachChild(F&& f) const;
  // Appends a child (snapshot loading; no coverage check).
  void AppendChild(const WakeupEvent& e, WakeupTree subtree);

 private:
  struct Child;
  std::vector<Child> children_;
};

struct WakeupTree::Child {
  WakeupEvent ev;
  WakeupTree sub;
};

template <typename F>
void WakeupTree::ForEachChild(F&& f) const {
  for (const Child& c : children_) f(c.ev, c.sub);
}

}  // namespace rseqmc

#endif  // RSEQMC_MODEL_WAKEUP_TREE_H_
