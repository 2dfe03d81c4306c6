#include "sim/outcome.h"

#include <algorithm>
#include <cstddef>
#include <cstring>

#define XXH_INLINE_ALL
#include <xxhash.h>

#include "sim/ir.h"

namespace rseqmc {

Outcome OutcomeOf(const Scenario& s, const ExecutionResult& r) {
  Outcome o;
  o.verdict = r.verdict;
  uint64_t end = kDataBase;
  for (const Symbol& sym : s.program.symbols) end = std::max(end, sym.address + sym.size_bytes);
  const size_t n = std::min<size_t>(end - kDataBase, r.memory.size());
  o.symbols.assign(r.memory.begin(), r.memory.begin() + static_cast<std::ptrdiff_t>(n));
  o.returns.reserve(r.threads.size());
  o.observed.reserve(r.threads.size());
  for (const ThreadOutcome& t : r.threads) {
    o.returns.push_back(t.exited ? t.ret : 0);
    o.observed.push_back(t.observed);
  }
  return o;
}

OutcomeInserter::OutcomeInserter(const Scenario& s) : s_(s) {
  uint64_t end = kDataBase;
  for (const Symbol& sym : s.program.symbols) end = std::max(end, sym.address + sym.size_bytes);
  symbols_end_ = end - kDataBase;
}

namespace {
// The parts of an outcome hashed after its symbol bytes (one word each).
uint64_t Mix(uint64_t h, uint64_t v) { return (h ^ v) * 0x100000001b3ull + (h >> 29); }
}  // namespace

uint64_t OutcomeInserter::Hash(const ExecutionResult& r) const {
  const size_t n = std::min(symbols_end_, r.memory.size());
  uint64_t h = XXH3_64bits(r.memory.data(), n);
  h = Mix(h, static_cast<uint64_t>(r.verdict));
  for (const ThreadOutcome& t : r.threads) {
    h = Mix(h, static_cast<uint64_t>(t.exited ? t.ret : 0));
    h = Mix(h, t.observed.size());
    for (auto [k, v] : t.observed) h = Mix(Mix(h, k), static_cast<uint64_t>(v));
  }
  return h;
}

uint64_t OutcomeInserter::Hash(const Outcome& o) const {
  uint64_t h = XXH3_64bits(o.symbols.data(), o.symbols.size());
  h = Mix(h, static_cast<uint64_t>(o.verdict));
  // OutcomeOf gives one return value and one observation list per thread.
  for (size_t t = 0; t < o.returns.size() && t < o.observed.size(); ++t) {
    h = Mix(h, static_cast<uint64_t>(o.returns[t]));
    h = Mix(h, o.observed[t].size());
    for (auto [k, v] : o.observed[t]) h = Mix(Mix(h, k), static_cast<uint64_t>(v));
  }
  return h;
}

bool OutcomeInserter::Same(const Outcome& o, const ExecutionResult& r) const {
  const size_t n = std::min(symbols_end_, r.memory.size());
  if (o.verdict != r.verdict || o.symbols.size() != n || o.returns.size() != r.threads.size() ||
      o.observed.size() != r.threads.size()) {
    return false;
  }
  if (n != 0 && std::memcmp(o.symbols.data(), r.memory.data(), n) != 0) return false;
  for (size_t t = 0; t < r.threads.size(); ++t) {
    const ThreadOutcome& th = r.threads[t];
    if (o.returns[t] != (th.exited ? th.ret : 0) || o.observed[t] != th.observed) return false;
  }
  return true;
}

void OutcomeInserter::Add(uint64_t hash, const Outcome* o) {
  if (2 * (used_ + 1) > slots_.size()) {
    std::vector<Slot> old = std::move(slots_);
    slots_.assign(std::max<size_t>(16, 2 * old.size()), Slot{});
    used_ = 0;
    for (const Slot& e : old) {
      if (e.outcome != nullptr) Add(e.hash, e.outcome);
    }
  }
  const size_t mask = slots_.size() - 1;
  size_t i = hash & mask;
  while (slots_[i].outcome != nullptr) i = (i + 1) & mask;
  slots_[i] = {hash, o};
  ++used_;
}

void OutcomeInserter::Reindex(const std::set<Outcome>& set) {
  slots_.clear();
  used_ = 0;
  for (const Outcome& o : set) Add(Hash(o), &o);
  set_ = &set;
  indexed_ = set.size();
  first_ = set.empty() ? nullptr : &*set.begin();
}

bool OutcomeInserter::Insert(const ExecutionResult& r, std::set<Outcome>& set) {
  // Another set, or this one refilled behind our back (a resumed snapshot's
  // outcomes; a swap or assignment from another set, whose nodes are new
  // even where the size is equal): index what it holds now.
  const Outcome* first = set.empty() ? nullptr : &*set.begin();
  if (set_ != &set || indexed_ != set.size() || first_ != first) Reindex(set);
  const uint64_t h = Hash(r);
  if (!slots_.empty()) {
    const size_t mask = slots_.size() - 1;
    for (size_t i = h & mask; slots_[i].outcome != nullptr; i = (i + 1) & mask) {
      if (slots_[i].hash == h && Same(*slots_[i].outcome, r)) return false;
    }
  }
  // New here; the set decides (a hash index that missed it would be a bug,
  // and then the set's own comparison still keeps it exact).
  const auto [pos, added] = set.insert(OutcomeOf(s_, r));
  if (added) Add(h, &*pos);
  indexed_ = set.size();
  first_ = &*set.begin();
  return added;
}

uint64_t OutcomeSetDigest(const std::set<Outcome>& outcomes) {
  uint64_t h = 1469598103934665603ull;
  auto mix = [&h](uint64_t v) { h = (h ^ v) * 1099511628211ull; };
  for (const Outcome& o : outcomes) {
    mix(static_cast<uint64_t>(o.verdict));
    for (uint8_t b : o.symbols) mix(b);
    for (int64_t r : o.returns) mix(static_cast<uint64_t>(r));
    for (const auto& obs : o.observed) {
      for (auto [k, v] : obs) mix(k ^ static_cast<uint64_t>(v) << 8);
    }
  }
  return h;
}

}  // namespace rseqmc
