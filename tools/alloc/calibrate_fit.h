// The fitting step of the cost-model calibration (issue 12 §4): from what
// tools/alloc/calibrate measured on this machine to the parameters of
// sim/cost_model.h. Pure arithmetic, so that a test with fixed inputs pins
// the exact parameters.
#ifndef RSEQMC_TOOLS_ALLOC_CALIBRATE_FIT_H_
#define RSEQMC_TOOLS_ALLOC_CALIBRATE_FIT_H_

#include "sim/cost_model.h"

namespace rseqmc::alloc {

// Host figures, each in ns (means over many repetitions).
struct HostMeasurements {
  double add_ns = 0;             // one dependent register add in a loop
  double load_ns = 0;            // one L1-resident load in a loop
  double atomic_ns = 0;          // one uncontended lock xadd
  double line_pingpong_ns = 0;   // round trip of one cache line between two CPUs (two transfers)
  double clock_ns = 0;           // clock_gettime(CLOCK_MONOTONIC)
  double syscall_ns = 0;         // getppid()
  double yield_switch_ns = 0;    // one sched_yield that switches to the other thread on the CPU
  double futex_roundtrip_ns = 0; // wake + wait ping-pong between two threads on one CPU, per round trip
  double migrate_ns = 0;         // sched_setaffinity that moves the caller to another CPU (reported only)
  double migrate_refill_ns = 0;  // first pass over a 32 KiB working set after a move to another CPU,
                                 // minus a warm pass: what a migration costs the migrated thread
  double signal_ns = 0;          // raise(SIGUSR1) to a handler and back (kill + delivery + sigreturn)
  double hz = 250;               // CONFIG_HZ of the running kernel
  int cpus = 1;                  // online CPUs (CFS scales its defaults by 1 + ilog2(min(cpus, 8)))
};

// The parameters (each clamped at 0):
//   alu_ns = add_ns; load_ns = store_ns = load_ns; atomic_ns = fence_ns = atomic_ns;
//   cacheline_transfer_ns = line_pingpong_ns / 2 - atomic_ns (a transfer beyond the op itself);
//   clock_ns, syscall_ns as measured;
//   context_switch_ns = yield_switch_ns - syscall_ns (the yield's own call removed);
//   a futex round trip is two halves of (wake call + wait call + one switch), and
//   futex_wake_ns = futex_wait_ns = (futex_roundtrip_ns / 2 - context_switch_ns - syscall_ns) / 2
//   (the simulator charges syscall_ns + futex_wake_ns per woken thread to the
//   waker and futex_wait_ns to the waiter);
//   migration_ns = migrate_refill_ns (the kernel's set_task_cpu() is a few
//   hundred ns; the cache refill on the new CPU is the cost). Not
//   migrate_ns: sched_setaffinity waits for the stopper thread, IPIs and, on
//   a VM, vCPU exits (382 us on this host in the first calibration), which a
//   load-balancer or wake-up migration does not make the thread pay; charged
//   per migration it kept the simulated service CPU-bound (idle ~1.5 % for
//   every variant, issue 12);
//   signal_delivery_ns = signal_ns - syscall_ns;
//   tick_ns = 1e9 / hz; CFS (kernel/sched/fair.c, SCHED_TUNABLESCALING_LOG):
//   factor = 1 + ilog2(min(cpus, 8)), sched_latency_ns = 6e6 * factor,
//   sched_min_granularity_ns = 0.75e6 * factor.
CostModel FitCostModel(const HostMeasurements& m);

}  // namespace rseqmc::alloc

#endif  // RSEQMC_TOOLS_ALLOC_CALIBRATE_FIT_H_
