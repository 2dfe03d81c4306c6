#include "sim/problems.h"

#include <algorithm>
#include <limits>

#include "sim/diag.h"

namespace rseqmc {

void ProblemList::Add(SourceLoc loc, std::string message, std::string hint) {
  problems_.push_back({loc, std::move(message), std::move(hint)});
}

void ProblemList::ThrowIfAny() const {
  if (problems_.empty()) return;
  auto key = [](const Problem& p) {
    uint32_t line = p.loc.line == 0 ? std::numeric_limits<uint32_t>::max() : p.loc.line;
    return std::pair<uint32_t, uint32_t>(line, p.loc.column);
  };
  const Problem* best = &problems_[0];
  for (const Problem& p : problems_) {
    if (key(p) < key(*best)) best = &p;
  }
  throw InputError(file_, best->loc, best->message, "", best->hint);
}

namespace {

// Edit distance counting an adjacent transposition as one edit (optimal string
// alignment), giving up (returning limit + 1) once it exceeds `limit`.
size_t EditDistance(std::string_view a, std::string_view b, size_t limit) {
  if (a.size() > b.size() + limit || b.size() > a.size() + limit) return limit + 1;
  const size_t w = b.size() + 1;
  std::vector<size_t> d((a.size() + 1) * w);
  for (size_t j = 0; j <= b.size(); ++j) d[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    d[i * w] = i;
    size_t row_min = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      size_t cost = a[i - 1] == b[j - 1] ? 0 : 1;
      size_t v = std::min({d[(i - 1) * w + j] + 1, d[i * w + j - 1] + 1, d[(i - 1) * w + j - 1] + cost});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1]) v = std::min(v, d[(i - 2) * w + j - 2] + 1);
      d[i * w + j] = v;
      row_min = std::min(row_min, v);
    }
    if (row_min > limit) return limit + 1;
  }
  return d[a.size() * w + b.size()];
}

}  // namespace

std::string DidYouMean(std::string_view name, const std::vector<std::string>& candidates) {
  constexpr size_t kMaxName = 64;
  constexpr size_t kMaxCandidates = 4096;
  if (name.empty() || name.size() > kMaxName) return "";
  size_t limit = std::max<size_t>(1, name.size() / 3);
  size_t best = limit + 1;
  const std::string* best_name = nullptr;
  size_t n = std::min(candidates.size(), kMaxCandidates);
  for (size_t i = 0; i < n; ++i) {
    const std::string& c = candidates[i];
    if (c.size() > kMaxName || c == name) continue;
    size_t d = EditDistance(name, c, limit);
    // Replacing every character is not a misspelling ('y' is not a typo of 'x').
    if (d < best && d < std::max(name.size(), c.size())) {
      best = d;
      best_name = &c;
    }
  }
  if (best_name == nullptr) return "";
  return "did you mean '" + *best_name + "'?";
}

std::string JoinNames(const std::vector<std::string>& names, size_t max) {
  std::string out;
  for (size_t i = 0; i < names.size() && i < max; ++i) {
    if (i > 0) out += ", ";
    out += names[i];
  }
  if (names.size() > max) out += ", ...";
  return out;
}

}  // namespace rseqmc
