#include "sim/cost_model.h"

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include "sim/diag.h"

namespace rseqmc {

const std::vector<CostModelKey>& CostModelKeys() {
  static const std::vector<CostModelKey> keys = {
      {"alu_ns", "register, branch and call instructions", &CostModel::alu_ns},
      {"load_ns", "a load that hits the cache", &CostModel::load_ns},
      {"store_ns", "a store to an owned line", &CostModel::store_ns},
      {"atomic_ns", "cas / xadd / xchg on an owned line", &CostModel::atomic_ns},
      {"fence_ns", "a full fence", &CostModel::fence_ns},
      {"cacheline_transfer_ns", "an access to a line another CPU wrote or holds (coherence miss)",
       &CostModel::cacheline_transfer_ns},
      {"clock_ns", "clock_gettime through the vDSO", &CostModel::clock_ns},
      {"syscall_ns", "a cheap system call, entry to exit", &CostModel::syscall_ns},
      {"futex_wait_ns", "FUTEX_WAIT that blocks, without the context switch", &CostModel::futex_wait_ns},
      {"futex_wake_ns", "FUTEX_WAKE that wakes a thread", &CostModel::futex_wake_ns},
      {"context_switch_ns", "a context switch, with the cache refill", &CostModel::context_switch_ns},
      {"migration_ns", "a migration to another CPU, with the cache refill", &CostModel::migration_ns},
      {"signal_delivery_ns", "signal frame set-up, handler entry and sigreturn", &CostModel::signal_delivery_ns},
      {"tick_ns", "scheduler tick period (1/HZ)", &CostModel::tick_ns},
      {"sched_latency_ns", "CFS sysctl_sched_latency", &CostModel::sched_latency_ns},
      {"sched_min_granularity_ns", "CFS sysctl_sched_min_granularity", &CostModel::sched_min_granularity_ns},
  };
  return keys;
}

namespace {

const CostModelKey* FindKey(const std::string& name) {
  for (const CostModelKey& k : CostModelKeys()) {
    if (name == k.name) return &k;
  }
  return nullptr;
}

bool MustBePositive(const std::string& name) {
  return name == "tick_ns" || name == "sched_latency_ns" || name == "sched_min_granularity_ns";
}

std::string KeyList() {
  std::string s;
  for (const CostModelKey& k : CostModelKeys()) s += (s.empty() ? "" : ", ") + std::string(k.name);
  return s;
}

}  // namespace

CostModel ParseCostModel(const std::string& text, const std::string& file) {
  CostModel m;
  std::set<std::string> seen;
  std::istringstream in(text);
  std::string line;
  uint32_t line_no = 0;
  while (std::getline(in, line)) {
    ++line_no;
    std::string body = line.substr(0, line.find('#'));
    const size_t first = body.find_first_not_of(" \t\r");
    if (first == std::string::npos) continue;
    const auto at = [&](size_t col) { return SourceLoc{line_no, static_cast<uint32_t>(col + 1)}; };
    const size_t eq = body.find('=');
    if (eq == std::string::npos) {
      throw InputError(file, at(first), "expected `key = value`", line, "keys are " + KeyList());
    }
    std::string key = body.substr(first, eq - first);
    key.erase(key.find_last_not_of(" \t") + 1);
    const CostModelKey* k = FindKey(key);
    if (k == nullptr) throw InputError(file, at(first), "unknown cost-model key '" + key + "'", line, "keys are " + KeyList());
    if (!seen.insert(key).second) {
      throw InputError(file, at(first), "key '" + key + "' given twice", line, "keep one of the two lines");
    }
    const size_t vpos = body.find_first_not_of(" \t", eq + 1);
    std::string value = vpos == std::string::npos ? "" : body.substr(vpos);
    value.erase(value.find_last_not_of(" \t\r") + 1);
    errno = 0;
    char* end = nullptr;
    const double v = value.empty() ? NAN : std::strtod(value.c_str(), &end);
    const size_t col = vpos == std::string::npos ? eq + 1 : vpos;
    if (value.empty() || end != value.c_str() + value.size() || errno != 0 || !std::isfinite(v) || v < 0 ||
        (MustBePositive(key) && v == 0)) {
      throw InputError(file, at(col), "bad value '" + value + "' for " + key, line,
                       MustBePositive(key) ? "write a positive number of ns" : "write a non-negative number of ns (e.g. 0.5)");
    }
    m.*(k->field) = v;
  }
  return m;
}

CostModel LoadCostModel(const std::string& path) {
  // An ifstream opens a directory and reads nothing from it: the defaults
  // would be used as if the file had set them (review finding F5).
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) {
    throw InputError(path, {}, "the cost-model file is a directory", "", "give a cost-model file (e.g. tools/alloc/cost_model.txt)");
  }
  std::ifstream f(path);
  if (!f) throw InputError(path, {}, "cannot read the cost-model file", "", "give an existing file (e.g. tools/alloc/cost_model.txt)");
  std::stringstream ss;
  ss << f.rdbuf();
  return ParseCostModel(ss.str(), path);
}

std::string FormatCostModel(const CostModel& m, const std::vector<std::string>& header) {
  std::string out;
  for (const std::string& h : header) out += "# " + h + "\n";
  for (const CostModelKey& k : CostModelKeys()) {
    // The shortest decimal that reads back as the same double.
    char buf[64];
    for (int digits = 6; digits <= 17; ++digits) {
      std::snprintf(buf, sizeof buf, "%.*g", digits, m.*(k.field));
      if (std::strtod(buf, nullptr) == m.*(k.field)) break;
    }
    out += std::string(k.name) + " = " + buf + "  # " + k.meaning + "\n";
  }
  return out;
}

}  // namespace rseqmc
