#include "sim/outcome.h"

#include <algorithm>
#include <cstddef>

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
