// The one interface through which every nondeterministic choice passes.
//
// At every IR instruction boundary the simulator asks the Scheduler what happens
// next (DESIGN.md §4). The answer is either "CPU c runs its current thread's next
// instruction" (kStep) or an injected event (preemption, migration, signal,
// membarrier-RSEQ IPI); after an event the scheduler is asked again at the same
// boundary, so one boundary may carry several events. Because nothing else is
// nondeterministic, recording the decisions replays the execution exactly
// (sim/schedule.h), and exploration strategies (model/) are just Schedulers.
//
// Example: a scheduler that always lets CPU 0 run first.
//
//     class Cpu0First : public Scheduler {
//       Decision Choose(const ChoiceView& v) override {
//         return v.Runnable(0) ? Decision::Step(0) : Decision::Step(v.DefaultCpu());
//       }
//     };
#ifndef RSEQMC_SIM_SCHEDULER_H_
#define RSEQMC_SIM_SCHEDULER_H_

#include <cstdint>
#include <string>
#include <vector>

namespace rseqmc {

class Machine;   // sim/machine.h
struct ExecutionResult;

enum class DecisionKind : uint8_t {
  kStep = 0,     // cpu: runs its current thread's next instruction
  kPreempt = 1,  // cpu: switch its current thread out; arg: thread to switch in, or -1 for the
                 // head of the CPU's run queue (idle, then the same thread, if the queue is empty)
  kMigrate = 2,  // cpu: move its current thread to CPU arg (must be allowed by its affinity)
  kSignal = 3,   // cpu: deliver signal arg to its current thread
  kIpi = 4,      // cpu: a membarrier-RSEQ IPI hits the CPU (rule §7.24)
};
inline constexpr int kNumDecisionKinds = 5;
const char* DecisionKindName(DecisionKind k);  // "step", "preempt", "migrate", "signal", "ipi"

struct Decision {
  DecisionKind kind = DecisionKind::kStep;
  int8_t cpu = 0;
  int16_t arg = -1;

  static constexpr Decision Step(int cpu) { return {DecisionKind::kStep, static_cast<int8_t>(cpu), -1}; }
  static constexpr Decision Preempt(int cpu, int next = -1) {
    return {DecisionKind::kPreempt, static_cast<int8_t>(cpu), static_cast<int16_t>(next)};
  }
  static constexpr Decision Migrate(int cpu, int to) {
    return {DecisionKind::kMigrate, static_cast<int8_t>(cpu), static_cast<int16_t>(to)};
  }
  static constexpr Decision Signal(int cpu, int signo) {
    return {DecisionKind::kSignal, static_cast<int8_t>(cpu), static_cast<int16_t>(signo)};
  }
  static constexpr Decision Ipi(int cpu) { return {DecisionKind::kIpi, static_cast<int8_t>(cpu), -1}; }
  // Ends the execution here without a verdict (ExecutionResult::stopped): an
  // explorer's way to abandon a redundant execution. Never recorded.
  static constexpr Decision Stop() { return {DecisionKind::kStep, -1, -1}; }
  bool IsStop() const { return cpu < 0; }
  bool IsEvent() const { return kind != DecisionKind::kStep; }
  friend bool operator==(const Decision&, const Decision&) = default;
};
std::string ToString(const Decision& d);  // "step cpu1", "preempt cpu0", "migrate cpu0->1", ...

// What the scheduler may look at when choosing. A thin read-only view of the
// machine; see sim/machine.h for the full state (threads, rseq areas, memory).
class ChoiceView {
 public:
  explicit ChoiceView(const Machine& m) : m_(m) {}
  const Machine& machine() const { return m_; }
  // Number of virtual CPUs.
  int NumCpus() const;
  // CPU whose thread ran the previous instruction (the default to continue).
  int DefaultCpu() const;
  // Thread currently on `cpu`, or -1 if the CPU is idle.
  int Running(int cpu) const;
  // True if `cpu` has a thread that can execute an instruction now.
  bool Runnable(int cpu) const;
  // Number of threads waiting in `cpu`'s run queue (not counting the running one).
  int Queued(int cpu) const;
  // Instructions executed so far in this execution.
  uint64_t Steps() const;
  // Events of each kind injected so far (index = DecisionKind; kStep unused).
  uint32_t Events(DecisionKind k) const;
  uint32_t TotalEvents() const;
  // True if `d` can be applied now (right kind of target, affinity, declared signal).
  bool IsValid(const Decision& d) const;

 private:
  const Machine& m_;
};

// Simulated time kept by a time-driven scheduler (sim/timed_scheduler.h).
// Without one (Scheduler::clock() == nullptr) instructions take no time and
// the machine's clock moves only when every CPU idles (sim/blocking.cc).
// With one, the machine asks it for the time a thread sees (`clock`, the
// start of a `sleep`), wakes every sleeper whose deadline is at or before
// HorizonNs() before each decision, and lets it place woken threads.
class SimClock {
 public:
  virtual ~SimClock() = default;
  // CLOCK_MONOTONIC in ns as a thread running on `cpu` reads it now.
  virtual uint64_t NowNs(int cpu) const = 0;
  // The simulated time of the next instruction any CPU will run: nothing
  // earlier can happen any more, so sleepers due by then wake now (in
  // deadline order). Only asked while some CPU has a thread to run.
  virtual uint64_t HorizonNs() const = 0;
  // The CPU a woken thread `t` (last on `prev_cpu`) is queued on:
  // try_to_wake_up() -> select_task_rq() (kernel/sched/core.c). Must be
  // allowed by the thread's affinity.
  virtual int SelectTaskRq(int t, int prev_cpu) const = 0;
};

// An initial placement: the CPU each thread starts on (index = thread id),
// chosen before the first step when threads may start on any CPU
// (ThreadSpec::any_cpu, `cpu any`; sim/placement.h enumerates them).
using Placement = std::vector<uint8_t>;

class Scheduler {
 public:
  // The scheduler's simulated time, or nullptr (the default: untimed).
  virtual const SimClock* clock() const { return nullptr; }

  virtual ~Scheduler() = default;
  // Called once before an execution starts.
  virtual void BeginExecution(const Machine& /*m*/) {}
  // Called at every boundary; must return a decision for which view.IsValid() holds
  // (an invalid one ends the execution with an InputError naming the step).
  // Machine::last_footprint() then describes the transition that just ended.
  virtual Decision Choose(const ChoiceView& view) = 0;
  // Called once when the execution has ended (the machine still holds the final
  // state and the last transition's footprint).
  virtual void EndExecution(const Machine& /*m*/) {}
  // True if the machine should record each transition's footprint (DPOR).
  virtual bool WantsFootprints() const { return false; }
  // True if the scheduler calls Machine::StateHash at most boundaries
  // (stateful search): the machine then keeps data memory's hash up to date
  // at every store (MemoryHash, sim/state_hash.h), so that a state hash costs
  // the size of the threads and CPUs instead of all of memory. Either way
  // StateHash returns the same value.
  virtual bool WantsStateHash() const { return false; }
  // The initial placement of the next execution, asked once per execution
  // after BeginExecution, or nullptr for the scenario's own (each thread's
  // ThreadSpec::cpu). The choice before the first step: exhaustive search
  // branches over it, replay gives the recorded one. It must be valid
  // (ValidatePlacement in sim/placement.h: one CPU per thread, allowed by
  // its affinity); an invalid one throws InputError from the run.
  virtual const Placement* InitialPlacement() const { return nullptr; }

  // A scheduler may promise that its next `defaults_ahead` answers are the
  // default (Decision::Step(view.DefaultCpu())); the machine then takes those
  // boundaries without calling Choose, decrementing the count (they still
  // count as boundaries). Set it in BeginExecution or Choose; it is the
  // random and replay schedulers' fast path for quiet stretches.
  uint64_t defaults_ahead = 0;

  // A scheduler may also let the machine take the boundaries that cannot make
  // a difference without asking it and without counting them in
  // defaults_ahead: a boundary where the default CPU's thread's next step is
  // thread-local (Machine::NextStepIsThreadLocal: registers only). Such a
  // step commutes with every transition of every other thread, so a CPU
  // switch there reaches, up to the order of independent steps, exactly what
  // the same switch one boundary later reaches; by induction, what the
  // switch reaches at the first boundary before a step that is not local,
  // which is asked. (The exhaustive strategies' rule, model/explorer.cc
  // StepIsLocal.) Injected events on other CPUs commute with the step too;
  // an event on the thread's own CPU is equivalent one boundary later only
  // where Machine::EventCommutesWithNextStep says so.
  //   kAsked: every boundary goes to Choose (or defaults_ahead).
  //   kNoEvents: local boundaries are taken; the scheduler promises to
  //     inject no event before its next Choose call.
  //   kUnlessEventMatters: local boundaries are taken where every injected
  //     event on the thread is equivalent to the same event at the next
  //     boundary (Machine::LocalBoundaryIsFree); the others are asked.
  // Recorded schedules number every boundary, taken or asked (boundary()),
  // so a schedule replays under any scheduler. Set it in BeginExecution or
  // Choose.
  enum class LocalBoundaries : uint8_t { kAsked, kNoEvents, kUnlessEventMatters };
  LocalBoundaries local_boundaries = LocalBoundaries::kAsked;
};

}  // namespace rseqmc

#endif  // RSEQMC_SIM_SCHEDULER_H_
