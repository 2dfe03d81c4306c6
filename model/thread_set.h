// A set of thread indices sized to the scenario, for the exhaustive
// strategies' per-node sets (enabled, backtrack, done) and the source-set
// computation (model/explorer.cc). The first 64 threads live in one inline
// word, so a scenario with at most 64 threads (every built-in) pays what a
// plain uint64_t mask paid: no allocation, one word per operation and a test
// of an empty vector; threads 64 and up (up to kMaxThreads, sim/scenario.h)
// live in words allocated once by Resize and reused with the set's buffers.
//
// Example:
//
//     ThreadSet s;
//     s.Resize(100);
//     s.Add(3);
//     s.Add(70);
//     s.ForEach([](int t) { std::printf("%d ", t); });  // 3 70
#ifndef RSEQMC_MODEL_THREAD_SET_H_
#define RSEQMC_MODEL_THREAD_SET_H_

#include <bit>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

namespace rseqmc {

class ThreadSet {
 public:
  // Makes room for threads [0, nthreads) and empties the set.
  void Resize(size_t nthreads) {
    low_ = 0;
    high_.assign(nthreads > 64 ? (nthreads - 1) / 64 : 0, 0);
  }
  // Empties the set (keeps its size).
  void Clear() {
    low_ = 0;
    for (uint64_t& w : high_) w = 0;
  }
  // Number of words (1 + one per further 64 threads).
  size_t words() const { return 1 + high_.size(); }
  uint64_t word(size_t i) const { return i == 0 ? low_ : high_[i - 1]; }
  void set_word(size_t i, uint64_t w) { (i == 0 ? low_ : high_[i - 1]) = w; }

  // t must be below the size given to Resize.
  bool Has(int t) const { return t < 64 ? ((low_ >> t) & 1) != 0 : ((high_[t / 64 - 1] >> (t % 64)) & 1) != 0; }
  void Add(int t) {
    if (t < 64) {
      low_ |= uint64_t{1} << t;
    } else {
      high_[t / 64 - 1] |= uint64_t{1} << (t % 64);
    }
  }
  void Remove(int t) {
    if (t < 64) {
      low_ &= ~(uint64_t{1} << t);
    } else {
      high_[t / 64 - 1] &= ~(uint64_t{1} << (t % 64));
    }
  }
  bool Empty() const {
    if (low_ != 0) return false;
    for (uint64_t w : high_) {
      if (w != 0) return false;
    }
    return true;
  }
  // *this = other (same size).
  void Assign(const ThreadSet& other) {
    low_ = other.low_;
    for (size_t i = 0; i < high_.size(); ++i) high_[i] = other.high_[i];
  }
  // True if *this and (a & b) share a thread (all three of one size).
  bool IntersectsBoth(const ThreadSet& a, const ThreadSet& b) const {
    if ((low_ & a.low_ & b.low_) != 0) return true;
    for (size_t i = 0; i < high_.size(); ++i) {
      if ((high_[i] & a.high_[i] & b.high_[i]) != 0) return true;
    }
    return false;
  }
  bool Intersects(const ThreadSet& a) const { return IntersectsBoth(a, a); }
  // The lowest thread in (*this & a & ~b), if any (all three of one size).
  std::optional<int> FirstOf(const ThreadSet& a, const ThreadSet& b) const {
    if (const uint64_t w = low_ & a.low_ & ~b.low_; w != 0) return std::countr_zero(w);
    for (size_t i = 0; i < high_.size(); ++i) {
      if (const uint64_t w = high_[i] & a.high_[i] & ~b.high_[i]; w != 0) {
        return static_cast<int>(64 * (i + 1)) + std::countr_zero(w);
      }
    }
    return std::nullopt;
  }
  // Calls f(t) for every thread t in the set, in increasing order.
  template <typename F>
  void ForEach(F&& f) const {
    for (uint64_t w = low_; w != 0; w &= w - 1) f(std::countr_zero(w));
    for (size_t i = 0; i < high_.size(); ++i) {
      for (uint64_t w = high_[i]; w != 0; w &= w - 1) f(static_cast<int>(64 * (i + 1)) + std::countr_zero(w));
    }
  }

 private:
  uint64_t low_ = 0;             // threads 0..63
  std::vector<uint64_t> high_;  // threads 64.. (64 per word)
};

}  // namespace rseqmc

#endif  // RSEQMC_MODEL_THREAD_SET_H_
