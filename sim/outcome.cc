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

}  // namespace rseqmc
