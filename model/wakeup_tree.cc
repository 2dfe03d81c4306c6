// Wakeup trees (see model/wakeup_tree.h).
#include "model/wakeup_tree.h"

#include <utility>

namespace rseqmc {

WakeupTree::~WakeupTree() = default;

bool WakeupTree::Insert(std::vector<WakeupEvent> v, bool events_left) {
  WakeupTree* t = this;
  for (;;) {
    Child* next = nullptr;
    for (Child& c : t->children_) {
      const std::optional<std::ptrdiff_t> at =
          WeakInitialIndex(c.ev, v.size(), [&v](size_t k) -> const WakeupEvent& { return v[k]; }, events_left);
      if (!at) continue;
      if (*at >= 0) v.erase(v.begin() + *at);
      next = &c;
      break;
    }
    if (next == nullptr) break;
    // The branch so far is a weak prefix of v: a leaf means the exploration
    // from it covers v; an empty rest is covered by the branch's extensions.
    if (next->sub.Empty() || v.empty()) return false;
    t = &next->sub;
  }
  if (v.empty()) return false;
  // What is left of v, as a chain under t.
  WakeupTree chain;
  for (size_t k = v.size(); k-- > 1;) {
    WakeupTree up;
    up.children_.push_back(Child{v[k], std::move(chain)});
    chain = std::move(up);
  }
  t->children_.push_back(Child{v[0], std::move(chain)});
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
