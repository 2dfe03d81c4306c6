// The cost model of simulated time (sim/timed_scheduler.h): how many ns each
// kind of instruction and each kernel action takes, and the CFS parameters
// the time-driven scheduler follows. General, not tied to one workload: the
// allocator (issue 12) and the mmap (issue 13) workloads share it.
//
// Text format (one writer: FormatCostModel; one reader: ParseCostModel):
//
//     # comment
//     alu_ns = 0.3            # every key below, in any order, each at most once
//     cacheline_transfer_ns = 60
//
// Keys not given keep the defaults of CostModel{}. Units: ns (doubles), and
// plain counts for the scheduler parameters named *_ns too (integers are
// accepted). Calibrated files come from tools/alloc/calibrate (which measures
// this machine) and carry their date and machine in comments.
#ifndef RSEQMC_SIM_COST_MODEL_H_
#define RSEQMC_SIM_COST_MODEL_H_

#include <string>
#include <vector>

namespace rseqmc {

struct CostModel {
  // User instructions.
  double alu_ns = 0.3;        // li, mov, add..mul, la, branches, jmp, call, ret, sig, nop, assert, observe
  double load_ns = 0.5;       // ld, ld32, rseq_load, rseq_addr (L1 hit)
  double store_ns = 0.5;      // st, st32, rseq_arm
  double atomic_ns = 6.0;     // cas, xadd, xchg (a locked instruction, line already owned)
  double fence_ns = 6.0;      // mfence
  // A load, store or atomic whose cache line another CPU wrote last (or, for
  // a write, that other CPUs hold): the coherence miss that makes shared
  // locks and shared lists contended (MESI-style ownership per 64-byte line).
  double cacheline_transfer_ns = 60.0;
  double clock_ns = 20.0;     // clock_gettime(CLOCK_MONOTONIC) through the vDSO
  // Kernel.
  double syscall_ns = 70.0;          // entry + exit of a cheap system call (getcpu, sched_yield, ...)
  double futex_wait_ns = 400.0;      // FUTEX_WAIT that blocks (the call, without the switch)
  double futex_wake_ns = 600.0;      // FUTEX_WAKE that wakes a thread (try_to_wake_up, IPI)
  double context_switch_ns = 1500.0; // switch_to + the cache refill a switched-in thread pays
  double migration_ns = 2000.0;      // set_task_cpu + the cache refill on the new CPU
  double signal_delivery_ns = 1500.0;  // setup_rt_frame + handler entry + sigreturn
  // Scheduler (CFS, kernel/sched/fair.c of 6.1; Debian's CONFIG_HZ=250).
  double tick_ns = 4000000.0;                   // scheduler_tick() period: 1/HZ
  double sched_latency_ns = 24000000.0;         // sysctl_sched_latency (6 ms * (1 + ilog2(min(ncpus, 8))))
  double sched_min_granularity_ns = 3000000.0;  // sysctl_sched_min_granularity (0.75 ms * the same factor)

  friend bool operator==(const CostModel&, const CostModel&) = default;
};

// One key of the text format: its name, what it means (the comment written
// by FormatCostModel), and the field.
struct CostModelKey {
  const char* name;
  const char* meaning;
  double CostModel::*field;
};
// Every key, in the order FormatCostModel writes them.
const std::vector<CostModelKey>& CostModelKeys();

// Parses the text format. `file` names the source in errors. Throws
// InputError (file, line, column, fix) for an unknown key, a key given twice,
// a value that is not a non-negative finite number, or a line that is not
// `key = value`; tick_ns, sched_latency_ns and sched_min_granularity_ns must
// be positive.
CostModel ParseCostModel(const std::string& text, const std::string& file);
// Reads and parses a file (InputError if it cannot be read).
CostModel LoadCostModel(const std::string& path);
// The text format, every key with its meaning; `header` lines are written
// first as comments (e.g. where and when the figures were measured).
// ParseCostModel(FormatCostModel(m, h)) == m.
std::string FormatCostModel(const CostModel& m, const std::vector<std::string>& header = {});

}  // namespace rseqmc

#endif  // RSEQMC_SIM_COST_MODEL_H_
