// Wakeup trees (model/wakeup_tree.h): WakeupTree::Insert against a reference
// that erases each weak initial from the sequence itself, the way Insert did
// before it kept the rest of the sequence as indices (a cost fix that must
// not change one tree).
#include "model/wakeup_tree.h"

#include <gtest/gtest.h>
#include <rapidcheck.h>
#include <rapidcheck/gtest.h>

#include <string>
#include <utility>
#include <vector>

namespace rseqmc {
namespace {

// The reference: the same tree as nested vectors, Insert erasing from v.
struct RefTree {
  std::vector<std::pair<WakeupEvent, RefTree>> children;

  bool Insert(std::vector<WakeupEvent> v, bool events_left) {
    RefTree* t = this;
    for (;;) {
      RefTree* next = nullptr;
      for (auto& [ev, sub] : t->children) {
        const auto at = WeakInitialIndex(ev, v.size(), [&v](size_t k) -> const WakeupEvent& { return v[k]; },
                                         events_left);
        if (!at) continue;
        if (*at >= 0) v.erase(v.begin() + *at);
        next = &sub;
        break;
      }
      if (next == nullptr) break;
      if (next->children.empty() || v.empty()) return false;
      t = next;
    }
    if (v.empty()) return false;
    RefTree chain;
    for (size_t k = v.size(); k-- > 1;) {
      RefTree up;
      up.children.emplace_back(v[k], std::move(chain));
      chain = std::move(up);
    }
    t->children.emplace_back(v[0], std::move(chain));
    return true;
  }
};

std::string Describe(const WakeupEvent& e) {
  std::string s = "t" + std::to_string(e.alt.thread) + ":" + std::to_string(static_cast<int>(e.alt.kind)) + ":" +
                  std::to_string(e.alt.arg) + "[";
  for (int i = 0; i < e.fp.num_accesses; ++i) {
    s += (e.fp.accesses[i].write ? "w" : "r") + std::to_string(e.fp.accesses[i].addr);
  }
  return s + "]";
}

std::string Describe(const WakeupTree& t) {
  std::string s = "(";
  t.ForEachChild([&s](const WakeupEvent& e, const WakeupTree& sub) { s += Describe(e) + Describe(sub); });
  return s + ")";
}

std::string Describe(const RefTree& t) {
  std::string s = "(";
  for (const auto& [e, sub] : t.children) s += Describe(e) + Describe(sub);
  return s + ")";
}

// A transition of thread t: a step touching its own thread and one 8-byte
// word (read or write), or an injected preemption.
WakeupEvent Event(int t, bool preempt, int word, bool write) {
  WakeupEvent e;
  e.alt = {static_cast<int16_t>(t), preempt ? DecisionKind::kPreempt : DecisionKind::kStep, -1};
  e.fp.threads = uint64_t{1} << t;
  if (preempt) {
    e.fp.cpus = 1;
  } else {
    e.fp.Access(0x10000000 + 8 * static_cast<uint64_t>(word), 8, write);
  }
  return e;
}

// Races reversed at one node: t1's read of x before t0's write ([b, a]),
// then [c, b] with c a write of y by t2 that also touches t0 (as a tgkill
// would): b is a weak initial of it at index 1 (c is independent of b), so
// what is left, [c], goes under b, where c conflicts with a and becomes a
// new sibling of it.
TEST(WakeupTree, InsertFollowsWeakInitialsAndReportsGrowth) {
  WakeupTree t;
  const WakeupEvent a = Event(0, false, 0, true);   // t0 writes x
  const WakeupEvent b = Event(1, false, 0, false);  // t1 reads x
  WakeupEvent c = Event(2, false, 1, true);         // t2 writes y
  c.fp.threads |= 1;                                // and touches t0
  EXPECT_TRUE(t.Insert({b, a}, false));
  EXPECT_FALSE(t.Insert({b, a}, false));  // already there
  EXPECT_FALSE(t.Insert({b}, false));     // a prefix of a branch
  EXPECT_TRUE(t.Insert({c, b}, false));
  EXPECT_EQ(Describe(t), "(t1:0:-1[r268435456](t0:0:-1[w268435456]()t2:0:-1[w268435464]()))");
  WakeupTree sub;
  const WakeupEvent first = t.PopFront(sub);
  EXPECT_EQ(first.alt, b.alt);
  EXPECT_EQ(sub.NumChildren(), 2u);
  EXPECT_TRUE(t.Empty());
}

// Any sequence of inserts builds the reference's tree and reports the same growth.
RC_GTEST_PROP(WakeupTreeProperty, InsertBuildsTheReferenceTree, ()) {
  const auto num_inserts = *rc::gen::inRange(1, 12);
  WakeupTree tree;
  RefTree ref;
  for (int i = 0; i < num_inserts; ++i) {
    const auto len = *rc::gen::inRange(1, 9);
    std::vector<WakeupEvent> v;
    for (int k = 0; k < len; ++k) {
      const int t = *rc::gen::inRange(0, 3);
      const bool preempt = *rc::gen::inRange(0, 6) == 0;
      v.push_back(Event(t, preempt, *rc::gen::inRange(0, 3), *rc::gen::arbitrary<bool>()));
    }
    const bool events_left = *rc::gen::arbitrary<bool>();
    RC_ASSERT(tree.Insert(v, events_left) == ref.Insert(v, events_left));
    RC_ASSERT(Describe(tree) == Describe(ref));
  }
}

}  // namespace
}  // namespace rseqmc
