#include "tools/alloc/calibrate_fit.h"

#include <algorithm>
#include <bit>

namespace rseqmc::alloc {

CostModel FitCostModel(const HostMeasurements& m) {
  const auto nonneg = [](double v) { return std::max(0.0, v); };
  CostModel c;
  c.alu_ns = nonneg(m.add_ns);
  c.load_ns = c.store_ns = nonneg(m.load_ns);
  c.atomic_ns = c.fence_ns = nonneg(m.atomic_ns);
  c.cacheline_transfer_ns = nonneg(m.line_pingpong_ns / 2 - m.atomic_ns);
  c.clock_ns = nonneg(m.clock_ns);
  c.syscall_ns = nonneg(m.syscall_ns);
  c.context_switch_ns = nonneg(m.yield_switch_ns - m.syscall_ns);
  c.futex_wake_ns = c.futex_wait_ns = nonneg((m.futex_roundtrip_ns / 2 - c.context_switch_ns - c.syscall_ns) / 2);
  c.migration_ns = nonneg(m.migrate_refill_ns);
  c.signal_delivery_ns = nonneg(m.signal_ns - m.syscall_ns);
  c.tick_ns = 1e9 / std::max(1.0, m.hz);
  const unsigned cpus = static_cast<unsigned>(std::clamp(m.cpus, 1, 8));
  const double factor = 1 + (std::bit_width(cpus) - 1);  // 1 + ilog2(min(cpus, 8))
  c.sched_latency_ns = 6e6 * factor;
  c.sched_min_granularity_ns = 0.75e6 * factor;
  return c;
}

}  // namespace rseqmc::alloc
