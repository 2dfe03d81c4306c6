// Wakeup trees (see model/wakeup_tree.h).
#include "model/wakeup_tree.h"

#include <cstdint>
#include <utility>

namespace rseqmc {

WakeupTree::~WakeupTree() = default;

bool WakeupTree::Insert(std::vector<WakeupEvent> v, bool events_left) {
  // What is left of v, as indices into it: rest[head, end). Taking out a
  // weak initial moves 4-byte indices (none when it is the first, the usual
  // case), not events with their footprints: erasing from v itself cost
  // O(|v| x depth) event moves, and a race between distant transitions of a
  // long path has a v of thousands (a third of DPOR's time on percpu_list
  // PER=32).
  // (A per-thread scratch buffer: parallel workers insert concurrently.)
  thread_local std::vector<uint32_t> rest;
  rest.resize(v.size());
  for (size_t k = 0; k < rest.size(); ++k) rest[k] = static_cast<uint32_t>(k);
  size_t head = 0;
  const auto left = [&] { return rest.size() - head; };
  WakeupTree* t = this;
  for (;;) {
    Child* next = nullptr;
    for (Child& c : t->children_) {
      const std::optional<std::ptrdiff_t> at = WeakInitialIndex(
          c.ev, left(), [&](size_t k) -> const WakeupEvent& { return v[rest[head + k]]; }, events_left);
      if (!at) continue;
      if (*at == 0) {
        ++head;
      } else if (*at > 0) {
        rest.erase(rest.begin() + static_cast<std::ptrdiff_t>(head) + *at);
      }
      next = &c;
      break;
    }
    if (next == nullptr) break;
    // The branch so far is a weak prefix of v: a leaf means the exploration
    // from it covers v; an empty rest is covered by the branch's extensions.
    if (next->sub.Empty() || left() == 0) return false;
    t = &next->sub;
  }
  if (left() == 0) return false;
  // What is left of v, as a chain under t.
  WakeupTree chain;
  for (size_t k = rest.size(); k-- > head + 1;) {
    WakeupTree up;
    up.children_.push_back(Child{std::move(v[rest[k]]), std::move(chain)});
    chain = std::move(up);
  }
  t->children_.push_back(Child{std::move(v[rest[head]]), std::move(chain)});
  return true;
}

WakeupEvent WakeupTree::PopFront(WakeupTree& subtree) {
  Child c = std::move(children_.front());
  children_.erase(children_.begin());
  subtree = std::move(c.sub);
  return c.ev;
}

uint64_t WakeupTree::Bytes() const {
  uint64_t total = children_.capacity() * sizeof(Child);
  for (const Child& c : children_) total += c.sub.Bytes();
  return total;
}

void WakeupTree::AppendChild(const WakeupEvent& e, WakeupTree subtree) {
  children_.push_back(Child{e, std::move(subtree)});
}

}  // namespace rseqmc
