// The visited set of stateful search: what it keeps of each state is the
// StateStorage mode (`rseqmc check --state-storage`).
//
// kHash128 (the default): 128-bit state hashes (Machine::StateHash) in one
// flat open-addressing table with linear probing, kept at most half full (the
// table doubles when it gets there). A state costs 16 bytes of slot, 32 on
// average with the empty half; no allocation per state, unlike a node-based
// std::unordered_set (48 bytes and one malloc per state, which took a third
// of a stateful run's time).
//
// kHash64: hash compaction (Wolper and Leroy, "Reliable hashing without
// collision detection", CAV 1993): only the first 64 bits of the hash, in the
// same kind of table: 8 bytes of slot per state, 16 on average. Two states
// whose hashes agree in those bits are merged and the second one's future is
// not explored (an omission).
//
// kBitstate: supertrace / bitstate hashing (Holzmann, "An analysis of
// bitstate hashing", FMSD 1998): a fixed array of 2^log2 bits, k = 3 bits per
// state (double hashing over the two words of the 128-bit hash); a state
// whose 3 bits are all set already counts as visited. The memory is fixed,
// whatever the number of states.
//
// OmissionEstimate() is the expected number of states the search skipped
// because they collided with a visited one; it also bounds the probability of
// any omission (Markov). kHash128: n(n-1)/2 / 2^128 (each pair of distinct
// states collides with probability 2^-128); kHash64: n(n-1)/2 / 2^64;
// kBitstate: the sum over the i-th new state of (1 - e^{-k i / m})^k, the
// chance that its k bits were already set by the i before it (m bits).
// Only kHash128's counts are the golden ones (tests/golden/): the others can
// only store fewer states, and equal counts mean no omission happened.
//
// The hashes are uniformly distributed (XXH3-128), so the low bits of the
// first word index the table directly. The all-zero key marks an empty
// slot; a state whose hash is {0, 0} is stored as {0, 1} (a 2^-128 merge;
// for kHash64, 0 as 1).
//
// Example:
//
//     StateSet seen;
//     if (!seen.Insert(m.StateHash())) return Decision::Stop();  // visited
#ifndef RSEQMC_MODEL_STATE_SET_H_
#define RSEQMC_MODEL_STATE_SET_H_

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

#include "model/state_storage.h"

namespace rseqmc {

class StateSet {
 public:
  using Key = std::pair<uint64_t, uint64_t>;

  StateSet() = default;
  // bitstate_log2: the bit array's size as a power of two (kBitstate only;
  // the caller keeps it within kMinBitstateLog2 .. kMaxBitstateLog2).
  explicit StateSet(StateStorage mode, uint32_t bitstate_log2 = kDefaultBitstateLog2)
      : mode_(mode), log2_(bitstate_log2) {}

  // Adds `k`; true if it was not in the set (kBitstate: if one of its bits
  // was clear).
  bool Insert(Key k) {
    switch (mode_) {
      case StateStorage::kHash128: return Insert128(k);
      case StateStorage::kHash64: return Insert64(k.first);
      case StateStorage::kBitstate: return InsertBits(k);
    }
    return Insert128(k);
  }
  size_t size() const { return size_; }
  StateStorage mode() const { return mode_; }
  // Bytes held by the table or bit array, what --max-memory limits.
  size_t bytes() const {
    return slots_.size() * sizeof(Key) + slots64_.size() * sizeof(uint64_t) + bits_.size() * sizeof(uint64_t);
  }
  // Expected number of omitted states after size() insertions (file comment).
  double OmissionEstimate() const {
    const double n = static_cast<double>(size_);
    if (size_ < 2) return 0;
    if (mode_ == StateStorage::kHash128) return n * (n - 1) / 2 / std::ldexp(1.0, 128);
    if (mode_ == StateStorage::kHash64) return n * (n - 1) / 2 / std::ldexp(1.0, 64);
    // Integral of (1 - e^{-k x / m})^k over x in [0, n] (Simpson, 256 panels).
    const double m = std::ldexp(1.0, static_cast<int>(log2_));
    auto p = [&](double x) { return std::pow(-std::expm1(-kBitHashes * x / m), kBitHashes); };
    const int panels = 256;
    const double h = n / panels;
    double sum = p(0) + p(n);
    for (int i = 1; i < panels; ++i) sum += (i % 2 ? 4 : 2) * p(i * h);
    return sum * h / 3;
  }
  void Clear() {
    slots_.clear();
    slots64_.clear();
    bits_.clear();
    size_ = 0;
  }
  // Calls f(key) for every key, in table order (kHash64: {hash, 0}, which
  // Insert takes back; kBitstate keeps no keys and calls nothing).
  template <class F>
  void ForEach(F&& f) const {
    for (const Key& s : slots_) {
      if (s.first != 0 || s.second != 0) f(s);
    }
    for (uint64_t s : slots64_) {
      if (s != 0) f(Key{s, 0});
    }
  }

 private:
  static constexpr int kBitHashes = 3;

  bool Insert128(Key k) {
    if (k.first == 0 && k.second == 0) k.second = 1;
    return InsertInto(slots_, k, Index(k));
  }
  bool Insert64(uint64_t k) {
    if (k == 0) k = 1;
    return InsertInto(slots64_, k, Index(k));
  }
  // Linear probing from `index` in a table of T whose T{} marks an empty
  // slot (`k` is never T{}); the table doubles before it gets half full.
  template <class T>
  bool InsertInto(std::vector<T>& slots, T k, uint64_t index) {
    if ((size_ + 1) * 2 > slots.size()) Grow(slots);
    const size_t mask = slots.size() - 1;
    for (size_t i = static_cast<size_t>(index) & mask;; i = (i + 1) & mask) {
      T& s = slots[i];
      if (s == T{}) {
        s = k;
        ++size_;
        return true;
      }
      if (s == k) return false;
    }
  }
  template <class T>
  void Grow(std::vector<T>& slots) {
    std::vector<T> old = std::move(slots);
    slots.assign(old.empty() ? 1024 : old.size() * 2, T{});
    size_ = 0;
    for (const T& s : old) {
      if (!(s == T{})) InsertInto(slots, s, Index(s));
    }
  }
  static uint64_t Index(const Key& k) { return k.first; }
  static uint64_t Index(uint64_t k) { return k; }
  bool InsertBits(Key k) {
    if (bits_.empty()) bits_.assign(std::max<size_t>(1, (size_t{1} << log2_) / 64), 0);
    const uint64_t mask = (uint64_t{1} << log2_) - 1;
    const uint64_t step = k.second | 1;  // odd: the k positions differ
    bool fresh = false;
    for (int i = 0; i < kBitHashes; ++i) {
      const uint64_t bit = (k.first + static_cast<uint64_t>(i) * step) & mask;
      uint64_t& w = bits_[bit / 64];
      const uint64_t b = uint64_t{1} << (bit % 64);
      if ((w & b) == 0) {
        w |= b;
        fresh = true;
      }
    }
    if (fresh) ++size_;
    return fresh;
  }

  StateStorage mode_ = StateStorage::kHash128;
  uint32_t log2_ = kDefaultBitstateLog2;
  std::vector<Key> slots_;
  std::vector<uint64_t> slots64_;
  std::vector<uint64_t> bits_;
  size_t size_ = 0;
};

}  // namespace rseqmc

#endif  // RSEQMC_MODEL_STATE_SET_H_
