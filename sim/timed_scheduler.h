// A time-driven scheduler: simulated time for performance questions (how much
// CPU, memory and latency a per-CPU mechanism costs at a given scale), as
// opposed to the model checker's exploration of interleavings.
//
// Every virtual CPU has a clock (ns). The CPU whose clock is earliest among
// those with a thread to run executes the next instruction, and its clock
// moves by that instruction's cost (sim/cost_model.h): a conservative
// discrete-event simulation, so all CPUs advance together in simulated time.
// Costs: per instruction kind; a coherence miss when an access touches a
// 64-byte line another CPU wrote or holds (this is what makes a contended
// lock or a shared list slow); a system call; FUTEX_WAIT that blocks and
// FUTEX_WAKE per woken thread; a context switch whenever a CPU switches in
// another thread; a migration when a thread runs on another CPU than before;
// signal delivery. `work N` takes N ns.
//
// Kernel rules followed (Linux 6.1, kernel/sched/fair.c and core.c):
//   * the tick: scheduler_tick() every tick_ns (CONFIG_HZ=250: 4 ms) of each
//     CPU's clock, phase drawn from the seed per CPU;
//     check_preempt_tick(): the running thread is preempted at a tick when
//     another waits on its CPU and it has run for at least its slice,
//     sched_slice() = max(sched_latency / nr_running, sched_min_granularity)
//     for equal weights; the run queue is FIFO (equal nice: CFS's vruntime
//     order is round-robin). Wake-up preemption (check_preempt_wakeup) is
//     not modelled: a woken thread waits for the tick or a block.
//   * wake-up placement, select_task_rq_fair() -> select_idle_sibling(): the
//     previous CPU if idle, else the first idle CPU after it in CPU order
//     (select_idle_cpu()'s for_each_cpu_wrap(.., target + 1)), else the
//     previous CPU (one LLC domain; wake_affine not modelled).
//   * load balancing: at a tick, a CPU with waiting threads and an idle CPU
//     in the thread's affinity moves its running thread there
//     (active_load_balance_cpu_stop(); the kernel's periodic and new-idle
//     balancing pull queued threads instead, which the decision interface
//     cannot express: see sim/scheduler.h kMigrate). This is an injected
//     migration, so rseq aborts it like the kernel's stopper does.
//   * idle: a CPU with no thread idles until a thread is placed on it; its
//     clock then jumps to the time that thread became ready (a sleeper's
//     deadline, or the waker's time). Sleepers wake at their deadline
//     (Machine::WakeDue), at most one decision late.
//
// Deterministic: the same scenario, cost model and seed give the same
// execution and the same figures (the seed sets the tick phases).
#ifndef RSEQMC_SIM_TIMED_SCHEDULER_H_
#define RSEQMC_SIM_TIMED_SCHEDULER_H_

#include <cstdint>
#include <optional>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "sim/cost_model.h"
#include "sim/ir.h"
#include "sim/kernel_model.h"
#include "sim/scenario.h"
#include "sim/scheduler.h"

namespace rseqmc {

// What a timed execution cost, for reports.
struct TimedStats {
  uint64_t end_ns = 0;     // latest CPU clock when the execution ended
  uint64_t window_ns = 0;  // the span [0, window_ns) busy_ns counts
  std::vector<double> busy_ns;  // per CPU: time spent running threads (incl. kernel costs) inside the window
  uint64_t context_switches = 0;
  uint64_t migrations = 0;        // a thread ran on another CPU than before (wake placement or balancing)
  uint64_t tick_preemptions = 0;  // check_preempt_tick() preemptions
  uint64_t balance_migrations = 0;  // of which injected by load balancing
  uint64_t cacheline_transfers = 0;
  uint64_t signals = 0;             // signal frames set up
  // Fraction of CPU time idle inside the window, 0..1.
  double IdleFraction() const;
};

class TimedScheduler : public Scheduler, public SimClock {
 public:
  // `window_ns`: the span over which busy time is counted (idle % is measured
  // over it); nullopt: up to the end of the execution.
  TimedScheduler(const CostModel& cost, uint64_t seed, std::optional<uint64_t> window_ns = std::nullopt);

  const SimClock* clock() const override { return this; }
  void BeginExecution(const Machine& m) override;
  Decision Choose(const ChoiceView& view) override;
  void EndExecution(const Machine& m) override;
  bool WantsFootprints() const override { return true; }

  uint64_t NowNs(int cpu) const override;
  uint64_t HorizonNs() const override;
  int SelectTaskRq(int t, int prev_cpu) const override;

  // Valid after the execution ended.
  const TimedStats& stats() const { return stats_; }

 private:
  struct Pending {  // the step chosen last, charged at the next decision
    bool valid = false;
    int cpu = 0, thread = 0, depth = 0;
    Op op = Op::kNop;
    double work_ns = 0;
  };
  struct Line {  // coherence state of one 64-byte line
    int owner = -1;        // CPU that wrote it last (-1: never written)
    uint64_t sharers = 0;  // CPUs holding a copy
  };
  void ChargePending(const Machine& m);
  double CoherenceCost(const Machine& m, int cpu);
  void ObserveSwitches(const Machine& m);
  void Advance(int cpu, double ns);
  // A tick decision for `cpu` (preemption or balancing), if one is due.
  std::optional<Decision> Tick(const ChoiceView& view, int cpu);
  bool Idle(int cpu) const;

  CostModel cost_;
  uint64_t seed_;
  std::optional<uint64_t> window_;
  const Machine* m_ = nullptr;
  std::vector<double> clock_;       // per CPU, ns
  std::vector<double> next_tick_;   // per CPU
  std::vector<double> slice_start_; // per CPU: when the running thread was switched in
  std::vector<int> seen_running_;   // per CPU: the thread seen running at the last decision
  std::vector<int> last_cpu_;       // per thread: CPU it last ran on (-1 never)
  std::vector<uint8_t> slept_;      // per thread: went to sleep (ready time = its deadline)
  std::vector<double> ready_;       // per thread: migrated by balancing at this time
  double gvt_ = 0;                  // clock of the CPU that ran the last step
  Pending pending_;
  std::unordered_map<uint64_t, Line> lines_;
  TimedStats stats_;
};

// One timed execution of a scenario and its figures (`rseqmc simulate`).
struct TimedRunOptions {
  uint64_t seed = 1;
  std::optional<uint64_t> window_ns;  // see TimedScheduler; nullopt: the whole execution
  std::string latency_observation = "latency";  // `observe NAME, rX` values taken as request latencies (ns)
  std::vector<std::string> memory_symbols;      // summed (all elements, all CPUs) as the memory figure
  // Symbols whose final values the report lists (ShownSymbol), each with the
  // step between the elements listed (1: all; 8: elements 0, 8, 16, ... as
  // for per-thread figures padded to one 64-byte line each).
  std::vector<std::pair<std::string, uint32_t>> shown_symbols;
  uint64_t max_steps = 4000000000ull;
  KernelVersion kernel;
};
// A symbol's final values (`rseqmc simulate --show`): elements 0, stride,
// 2*stride, ... of each CPU's copy (one copy unless per-CPU), in that order.
struct ShownSymbol {
  std::string name;
  uint32_t stride = 1;
  std::vector<int64_t> values;
};
struct TimedReport {
  Verdict verdict = Verdict::kPass;
  std::string message;
  TimedStats stats;
  uint64_t steps = 0;
  uint64_t requests = 0;           // latency observations made inside the window
  double throughput_per_s = 0;     // requests / window
  uint64_t p50_ns = 0, p99_ns = 0; // latency percentiles (nearest rank) of those requests; 0 if none
  int64_t memory = 0;              // sum of memory_symbols in the final state
  uint64_t aborts = 0;             // rseq aborts, all threads
  std::vector<ShownSymbol> shown;  // TimedRunOptions::shown_symbols, in that order
};
// Runs `s` once under a TimedScheduler. Throws InputError for an unknown
// memory or shown symbol, a shown stride of 0, or a scenario the simulator rejects.
TimedReport SimulateTimed(const Scenario& s, const CostModel& cost, const TimedRunOptions& options);

}  // namespace rseqmc

#endif  // RSEQMC_SIM_TIMED_SCHEDULER_H_
