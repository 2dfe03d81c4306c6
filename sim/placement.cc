#include "sim/placement.h"

#include "sim/diag.h"

namespace rseqmc {

PlacementSpace::PlacementSpace(const Scenario& s, uint64_t max) {
  const uint64_t cpu_mask = s.num_cpus >= 64 ? ~0ull : (uint64_t{1} << s.num_cpus) - 1;
  choices_.resize(s.threads.size());
  for (size_t t = 0; t < s.threads.size(); ++t) {
    const ThreadSpec& ts = s.threads[t];
    std::vector<uint8_t>& c = choices_[t];
    c.push_back(static_cast<uint8_t>(ts.cpu));
    if (!ts.any_cpu) continue;
    const uint64_t allowed = ts.affinity & cpu_mask;
    for (uint32_t k = 1; k < s.num_cpus; ++k) {
      const uint32_t cpu = (ts.cpu + k) % s.num_cpus;
      if ((allowed >> cpu) & 1) c.push_back(static_cast<uint8_t>(cpu));
    }
    if (size_ > max / c.size()) {
      throw InputError(s.file, ts.loc,
                       "too many initial placements: `cpu any` threads up to '" + ts.name + "' already allow more than " +
                           std::to_string(max) + (max == kMaxPlacements ? " (the sampling strategies random and pct allow more)" : ""),
                       "", "give some threads a fixed `cpu` (or a narrower affinity)");
    }
    size_ *= c.size();
  }
}

void PlacementSpace::At(uint64_t index, Placement& out) const {
  out.resize(choices_.size());
  for (size_t t = 0; t < choices_.size(); ++t) {
    const uint64_t n = choices_[t].size();
    out[t] = choices_[t][index % n];
    index /= n;
  }
}

std::optional<std::string> ValidatePlacement(const Scenario& s, const Placement& p) {
  if (p.size() != s.threads.size()) {
    return "the placement has " + std::to_string(p.size()) + " threads, the scenario " +
           std::to_string(s.threads.size());
  }
  for (size_t t = 0; t < p.size(); ++t) {
    if (p[t] >= s.num_cpus) {
      return "thread '" + s.threads[t].name + "' is placed on CPU " + std::to_string(p[t]) + " but the scenario has " +
             std::to_string(s.num_cpus) + " CPU(s)";
    }
    if (((s.threads[t].affinity >> p[t]) & 1) == 0) {
      return "thread '" + s.threads[t].name + "' is placed on CPU " + std::to_string(p[t]) +
             ", which its affinity does not allow";
    }
  }
  return std::nullopt;
}

void AllowEveryPlacement(Scenario& s) {
  for (ThreadSpec& t : s.threads) t.any_cpu = true;
}

Scenario WithPlacement(const Scenario& s, const Placement& p) {
  Scenario placed = s;
  for (size_t t = 0; t < placed.threads.size() && t < p.size(); ++t) {
    placed.threads[t].cpu = p[t];
    placed.threads[t].any_cpu = false;
  }
  return placed;
}

std::string DescribePlacement(const Scenario& s, const Placement& p) {
  std::string out;
  for (size_t t = 0; t < p.size() && t < s.threads.size(); ++t) {
    if (!out.empty()) out += ", ";
    out += s.threads[t].name + " on CPU " + std::to_string(p[t]);
  }
  return out;
}

}  // namespace rseqmc
