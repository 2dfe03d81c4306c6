// Helpers for the kernel-rule tests (tests/kernel_rules_test.cc): hand-built
// replay schedules whose events land at a chosen instruction boundary, and
// accessors for what an execution left (observations, trace entries, the
// addresses of descriptors and rseq areas).
//
// A schedule is built chronologically: each event is placed by running the
// schedule built so far once (traced, through a scheduler that logs the number
// of executed instructions at every boundary) and finding the boundary right
// before the instruction of interest. The final run replays the finished
// schedule with ReplayScheduler, so every test is deterministic.
//
// Example: migrate thread 0 from CPU 0 to CPU 1 right before it runs the
// instruction at label "commit" of function "inc", deliver SIGUSR1 to it at
// the same boundary (now on CPU 1), then run.
//
//     ScheduleMaker sm(s);
//     sm.Migrate(0, Pc(s, "inc", "commit"), 1).Next(Decision::Signal(1, kSigUsr1));
//     ExecutionResult r = sm.Run();
#ifndef RSEQMC_TESTS_RULE_HELPERS_H_
#define RSEQMC_TESTS_RULE_HELPERS_H_

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "sim/ir.h"
#include "sim/kernel_model.h"
#include "sim/machine.h"
#include "sim/scenario.h"
#include "sim/schedule.h"
#include "sim/scheduler.h"
#include "sim/simulator.h"
#include "sim/trace.h"

namespace rseqmc::rules {

// The run options' kernel for an ABI: its newest version ("4.18" stands for
// 4.18-5.19, "6.2" for 6.0-6.2, "6.18" for 6.3-6.18 (mm_cid), "6.19").
inline KernelVersion Kernel(KernelModel m) {
  switch (m) {
    case KernelModel::kLegacy418: return {m, "4.18"};
    case KernelModel::kLegacy60: return {m, "6.2"};
    case KernelModel::kMmCid: return {m, "6.18"};
    case KernelModel::k619: return {m, "6.19"};
    case KernelModel::kRfc2015: return {m, "rfc2015"};
  }
  return {m, "?"};
}

// Global instruction index of `label` in function `func`.
inline uint32_t Pc(const Scenario& s, const std::string& func, const std::string& label) {
  const int f = s.program.FindFunction(func);
  if (f < 0) throw std::invalid_argument("no function " + func);
  for (const Label& l : s.program.functions[f].labels) {
    if (l.name == label) return l.index;
  }
  throw std::invalid_argument("no label " + label + " in " + func);
}

// Global instruction index of the instruction `offset` after `label`.
inline uint32_t Pc(const Scenario& s, const std::string& func, const std::string& label, uint32_t offset) {
  return Pc(s, func, label) + offset;
}

// Address of descriptor `name` / of thread t's rseq area in simulated memory.
inline uint64_t DescriptorAddress(const Scenario& s, const std::string& name) {
  RunOptions o;
  Machine m(s, o);
  const int d = s.program.FindDescriptor(name);
  if (d < 0) throw std::invalid_argument("no descriptor " + name);
  return m.DescriptorAddress(static_cast<uint32_t>(d));
}
inline uint64_t AreaAddress(const Scenario& s, int t) {
  RunOptions o;
  Machine m(s, o);
  return m.AreaAddress(t);
}

// Values thread t observed under `name`, in order.
inline std::vector<int64_t> Observed(const Scenario& s, const ExecutionResult& r, int t, const std::string& name) {
  std::vector<int64_t> out;
  for (const auto& [id, v] : r.threads.at(t).observed) {
    if (r.ObservationName(s, id) == name) out.push_back(v);
  }
  return out;
}

// Trace entries of one kind (of thread t, or of every thread when t < 0).
inline std::vector<TraceEntry> Entries(const ExecutionResult& r, TraceKind k, int t = -1) {
  std::vector<TraceEntry> out;
  for (const TraceEntry& e : r.trace) {
    if (e.kind == k && (t < 0 || e.thread == t)) out.push_back(e);
  }
  return out;
}

// How many times thread t executed the instruction at `pc`.
inline int Executions(const ExecutionResult& r, int t, uint32_t pc) {
  int n = 0;
  for (const TraceEntry& e : r.trace) n += e.kind == TraceKind::kStep && e.thread == t && e.pc == pc;
  return n;
}

// Where an event can be injected: a boundary index and the CPU the thread runs on.
struct Where {
  uint64_t boundary = 0;
  int cpu = 0;
};

class ScheduleMaker {
 public:
  explicit ScheduleMaker(const Scenario& s, KernelModel k = KernelModel::kMmCid) : s_(s) {
    options_.record_trace = true;
    options_.kernel = Kernel(k);
    schedule_.kernel = k;
  }

  // The boundary at which thread t is about to execute the instruction at `pc`
  // for the (nth+1)-th time, counting only executions after the last entry of
  // the schedule so far, and the CPU it runs it on. Throws if it never does.
  Where Before(int t, uint32_t pc, int nth = 0) const {
    Logger log(schedule_);
    Simulator sim(s_, options_);
    ExecutionResult r = sim.Run(log);
    const int64_t after = schedule_.entries.empty() ? -1 : static_cast<int64_t>(schedule_.entries.back().boundary);
    for (const TraceEntry& e : r.trace) {
      if (e.kind != TraceKind::kStep || e.thread != t || e.pc != pc) continue;
      // The instruction ran after the last boundary at which e.step - 1
      // instructions had executed.
      int64_t b = -1;
      for (size_t i = 0; i < log.steps.size(); ++i) {
        if (log.steps[i] == e.step - 1) b = static_cast<int64_t>(i);
      }
      if (b <= after) continue;
      if (nth-- == 0) return {static_cast<uint64_t>(b), e.cpu};
    }
    throw std::logic_error("thread " + std::to_string(t) + " never runs " + s_.program.DescribeIndex(pc) +
                           " after the schedule so far");
  }

  ScheduleMaker& Add(uint64_t boundary, Decision d) {
    schedule_.entries.push_back({boundary, d});
    return *this;
  }
  ScheduleMaker& Preempt(int t, uint32_t pc, int nth = 0, int next = -1) {
    const Where w = Before(t, pc, nth);
    return Add(w.boundary, Decision::Preempt(w.cpu, next));
  }
  ScheduleMaker& Migrate(int t, uint32_t pc, int to, int nth = 0) {
    const Where w = Before(t, pc, nth);
    return Add(w.boundary, Decision::Migrate(w.cpu, to));
  }
  ScheduleMaker& Signal(int t, uint32_t pc, int signo, int nth = 0) {
    const Where w = Before(t, pc, nth);
    return Add(w.boundary, Decision::Signal(w.cpu, signo));
  }
  ScheduleMaker& Ipi(int t, uint32_t pc, int nth = 0) {
    const Where w = Before(t, pc, nth);
    return Add(w.boundary, Decision::Ipi(w.cpu));
  }
  // Another decision at the boundary right after the last entry, i.e. at the
  // same instruction boundary as the last event (events do not execute
  // instructions). Use it to stack events: an abort by the first one means the
  // instruction is never executed at all, so Before() would find the retry.
  ScheduleMaker& Next(Decision d) {
    if (schedule_.entries.empty()) throw std::logic_error("Next() needs an earlier entry");
    return Add(schedule_.entries.back().boundary + 1, d);
  }
  // Instead of letting thread t run `pc`, let CPU `cpu` run its thread.
  ScheduleMaker& RunCpu(int t, uint32_t pc, int cpu, int nth = 0) {
    return Add(Before(t, pc, nth).boundary, Decision::Step(cpu));
  }

  const Schedule& schedule() const { return schedule_; }

  // Replays the schedule (traced).
  ExecutionResult Run() const {
    ReplayScheduler replay(schedule_);
    Simulator sim(s_, options_);
    return sim.Run(replay);
  }

 private:
  // Replays the schedule and logs the executed-instruction count at every boundary.
  class Logger : public Scheduler {
   public:
    explicit Logger(const Schedule& s) : inner_(s) {}
    void BeginExecution(const Machine& m) override {
      steps.clear();
      inner_.BeginExecution(m);
    }
    Decision Choose(const ChoiceView& v) override {
      steps.push_back(v.Steps());
      return inner_.Choose(v);
    }
    std::vector<uint64_t> steps;

   private:
    ReplayScheduler inner_;
  };

  const Scenario& s_;
  RunOptions options_;
  Schedule schedule_;
};

}  // namespace rseqmc::rules

#endif  // RSEQMC_TESTS_RULE_HELPERS_H_
