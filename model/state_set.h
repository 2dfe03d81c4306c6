// The visited set of stateful search: what it keeps of each state is the
// StateStorage mode (`rseqmc check --state-storage`).
//
// kHash128 (the default): 128-bit state hashes (Machine::StateHash) in
// open-addressing tables with linear probing (ProbeTable below). A state
// costs a 16-byte slot, the tables being between 3/8 and 3/4 full: 21 to 43
// bytes per state; no allocation per state,
// unlike a node-based std::unordered_set (48 bytes and one malloc per state,
// which took a third of a stateful run's time).
//
// kHash64: hash compaction (Wolper and Leroy, "Reliable hashing without
// collision detection", CAV 1993): only the first 64 bits of the hash, in the
// same kind of table: 8-byte slots, 11 to 21 bytes per state. Two states
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
// The all-zero key marks an empty slot: a state whose hash is {0, 0} is
// stored as {0, 1} (a 2^-128 merge; for kHash64, 0 as 1).
//
// Example:
//
//     StateSet seen;
//     if (!seen.Insert(m.StateHash())) return Decision::Stop();  // visited
#ifndef RSEQMC_MODEL_STATE_SET_H_
#define RSEQMC_MODEL_STATE_SET_H_

#include <algorithm>
#include <array>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <new>
#include <sys/mman.h>
#include <utility>
#include <vector>

#include "model/state_storage.h"

namespace rseqmc {

// A set of uniformly distributed hash keys (uint64_t, or a pair of them whose
// `first` word is uniform), the tables of StateSet's kHash128 and kHash64.
//
// Layout: kSegments independent open-addressing tables ("segments"), chosen
// by bits 32..37 of the key's first word; each a power-of-two array of keys
// (the all-zero key marks an empty slot), linear probing from the slot the
// low bits of the first word name. Why:
//   * a segment grows alone (doubles when a new key would make it more than
//     3/4 full): at most 1/64 of the set is copied at a time, so a growth
//     holds 1/64 more memory, where one flat table held the old table and
//     the new one together (the peak RSS of counter2 K=2 was 1.7x its table);
//   * 3/4 full rather than 1/2: a third less memory for two more probes on
//     average, within the cache line the first probe loaded (that first
//     load, a cache and TLB miss, is most of an insertion's time);
//   * bits 58..63 are left alone for the shards of model/parallel.cc.
// No allocation per insert; a new table comes from calloc (zero pages that
// the kernel maps on first touch). A parallel array of one-byte tags probed
// instead of the keys was tried: no faster (its 1 MB for 538 k states
// missed the cache as the keys do) and 1/16 more memory.
template <class T>
class ProbeTable {
 public:
  static constexpr int kSegmentBits = 6;
  static constexpr size_t kSegments = size_t{1} << kSegmentBits;
  static constexpr uint32_t kMinLog2 = 4;    // a segment's first table: 16 slots
  static constexpr uint32_t kMaxLog2 = 32;   // the low 32 bits index a segment

  // Adds `k` (never the all-zero key, which marks an empty slot: StateSet
  // maps it to another); true if it was not there. Only a new key can grow
  // the table.
  bool Insert(const T& k) {
    const uint64_t w = First(k);
    Segment& s = segments_[(w >> 32) & (kSegments - 1)];
    size_t i = 0;
    if (s.log2 != 0) {
      const size_t mask = s.capacity() - 1;
      for (i = static_cast<size_t>(w) & mask;; i = (i + 1) & mask) {
        const T& t = s.keys[i];
        if (t == k) return false;
        if (t == T{}) break;
      }
    }
    if ((s.size + 1) * 4 > s.capacity() * 3 && s.log2 < kMaxLog2) {
      Grow(s);
      i = FreeSlot(s, w);
    }
    s.keys[i] = k;
    ++s.size;
    ++size_;
    return true;
  }
  // Brings the slot `k` would probe first into the cache.
  void Prefetch(const T& k) const {
    const uint64_t w = First(k);
    const Segment& s = segments_[(w >> 32) & (kSegments - 1)];
    if (s.log2 == 0) return;
    __builtin_prefetch(&s.keys[static_cast<size_t>(w) & (s.capacity() - 1)]);
  }
  size_t size() const { return size_; }
  // Bytes of keys allocated (the segments' capacities).
  size_t bytes() const {
    size_t b = 0;
    for (const Segment& s : segments_) b += s.capacity() * sizeof(T);
    return b;
  }
  void Clear() {
    for (Segment& s : segments_) s = Segment{};
    size_ = 0;
  }
  // Calls f(key) for every key, segment by segment in table order.
  template <class F>
  void ForEach(F&& f) const {
    for (const Segment& s : segments_) {
      for (size_t i = 0; i < s.capacity(); ++i) {
        if (!(s.keys[i] == T{})) f(s.keys[i]);
      }
    }
  }

 private:
  struct Free {
    void operator()(T* p) const { std::free(p); }
  };
  struct Segment {
    std::unique_ptr<T[], Free> keys;  // calloc'ed: all empty
    uint32_t log2 = 0;  // 0: not allocated yet
    size_t size = 0;
    size_t capacity() const { return log2 == 0 ? 0 : size_t{1} << log2; }
  };
  static uint64_t First(uint64_t k) { return k; }
  static uint64_t First(const std::pair<uint64_t, uint64_t>& k) { return k.first; }
  // The first free slot from the home slot of first word `w` in `s`.
  static size_t FreeSlot(const Segment& s, uint64_t w) {
    const size_t mask = s.capacity() - 1;
    size_t i = static_cast<size_t>(w) & mask;
    while (!(s.keys[i] == T{})) i = (i + 1) & mask;
    return i;
  }
  // Maps the pages of a large new table writable at once (madvise(2)
  // MADV_POPULATE_WRITE, Linux 5.14; a hint, ignored where it fails). calloc
  // maps a large block to the zero page, so a probe's read and then its
  // write each took a page fault: 5.7 % of counter2 K=2's time (perf,
  // do_wp_page among them), for pages the table fills anyway (256 slots a
  // page, every page touched by 3/8 full).
  static void Populate(void* p, size_t bytes) {
    constexpr uintptr_t kPage = 4096;
    if (bytes < 16 * kPage) return;
    const uintptr_t begin = (reinterpret_cast<uintptr_t>(p) + kPage - 1) & ~(kPage - 1);
    const uintptr_t end = (reinterpret_cast<uintptr_t>(p) + bytes) & ~(kPage - 1);
    madvise(reinterpret_cast<void*>(begin), end - begin, MADV_POPULATE_WRITE);
  }
  // Doubles `s` (allocates its first table), moving its keys over.
  static void Grow(Segment& s) {
    Segment old = std::move(s);
    s.log2 = old.log2 == 0 ? kMinLog2 : old.log2 + 1;
    s.keys.reset(static_cast<T*>(std::calloc(s.capacity(), sizeof(T))));
    if (!s.keys) throw std::bad_alloc();
    Populate(s.keys.get(), s.capacity() * sizeof(T));
    s.size = old.size;
    for (size_t j = 0; j < old.capacity(); ++j) {
      if (!(old.keys[j] == T{})) s.keys[FreeSlot(s, First(old.keys[j]))] = old.keys[j];
    }
  }

  std::array<Segment, kSegments> segments_;
  size_t size_ = 0;
};

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
      case StateStorage::kHash128:
        if (k.first == 0 && k.second == 0) k.second = 1;
        return table128_.Insert(k);
      case StateStorage::kHash64: return table64_.Insert(k.first == 0 ? 1 : k.first);
      case StateStorage::kBitstate: return InsertBits(k);
    }
    return false;
  }
  // Brings what Insert(k) reads first into the cache (a hint: call it as
  // soon as the key is known, and other work before Insert).
  void Prefetch(const Key& k) const {
    if (mode_ == StateStorage::kHash128) table128_.Prefetch(k);
    if (mode_ == StateStorage::kHash64) table64_.Prefetch(k.first);
  }
  size_t size() const { return table128_.size() + table64_.size() + bits_size_; }
  StateStorage mode() const { return mode_; }
  // Bytes held by the tables or bit array, what --max-memory limits.
  size_t bytes() const { return table128_.bytes() + table64_.bytes() + bits_.size() * sizeof(uint64_t); }
  // Expected number of omitted states after size() insertions (file comment).
  double OmissionEstimate() const {
    const double n = static_cast<double>(size());
    if (size() < 2) return 0;
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
    table128_.Clear();
    table64_.Clear();
    bits_.clear();
    bits_size_ = 0;
  }
  // Calls f(key) for every key, in table order (kHash64: {hash, 0}, which
  // Insert takes back; kBitstate keeps no keys and calls nothing).
  template <class F>
  void ForEach(F&& f) const {
    table128_.ForEach(f);
    table64_.ForEach([&f](uint64_t k) { f(Key{k, 0}); });
  }

 private:
  static constexpr int kBitHashes = 3;

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
    if (fresh) ++bits_size_;
    return fresh;
  }

  StateStorage mode_ = StateStorage::kHash128;
  uint32_t log2_ = kDefaultBitstateLog2;
  ProbeTable<Key> table128_;
  ProbeTable<uint64_t> table64_;
  std::vector<uint64_t> bits_;
  size_t bits_size_ = 0;
};

}  // namespace rseqmc

#endif  // RSEQMC_MODEL_STATE_SET_H_
