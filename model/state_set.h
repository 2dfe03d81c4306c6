// The visited set of stateful search: 128-bit state hashes
// (Machine::StateHash) in one flat open-addressing table with linear
// probing, kept at most half full (the table doubles when it gets there).
// A state costs 16 bytes of slot, 32 on average with the empty half; no
// allocation per state, unlike a node-based std::unordered_set (48 bytes and
// one malloc per state, which took a third of a stateful run's time).
//
// The hashes are uniformly distributed (XXH3-128), so the low bits of the
// first word index the table directly. The all-zero key marks an empty
// slot; a state whose hash is {0, 0} is stored as {0, 1} (a 2^-128 merge).
//
// Example:
//
//     StateSet seen;
//     if (!seen.Insert(m.StateHash())) return Decision::Stop();  // visited
#ifndef RSEQMC_MODEL_STATE_SET_H_
#define RSEQMC_MODEL_STATE_SET_H_

#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

namespace rseqmc {

class StateSet {
 public:
  using Key = std::pair<uint64_t, uint64_t>;

  // Adds `k`; true if it was not in the set.
  bool Insert(Key k) {
    if (k.first == 0 && k.second == 0) k.second = 1;
    if ((size_ + 1) * 2 > slots_.size()) Grow();
    const size_t mask = slots_.size() - 1;
    for (size_t i = static_cast<size_t>(k.first) & mask;; i = (i + 1) & mask) {
      Key& s = slots_[i];
      if (s.first == 0 && s.second == 0) {
        s = k;
        ++size_;
        return true;
      }
      if (s == k) return false;
    }
  }
  size_t size() const { return size_; }
  // Bytes held by the table (capacity × 16), what --max-memory limits.
  size_t bytes() const { return slots_.size() * sizeof(Key); }
  void Clear() {
    slots_.clear();
    size_ = 0;
  }
  // Calls f(key) for every key, in table order.
  template <class F>
  void ForEach(F&& f) const {
    for (const Key& s : slots_) {
      if (s.first != 0 || s.second != 0) f(s);
    }
  }

 private:
  void Grow() {
    std::vector<Key> old = std::move(slots_);
    slots_.assign(old.empty() ? 1024 : old.size() * 2, Key{0, 0});
    size_ = 0;
    for (const Key& s : old) {
      if (s.first != 0 || s.second != 0) Insert(s);
    }
  }
  std::vector<Key> slots_;
  size_t size_ = 0;
};

}  // namespace rseqmc

#endif  // RSEQMC_MODEL_STATE_SET_H_
