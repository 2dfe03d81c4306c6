// Injected kernel runs per second of the real-kernel cross-check
// (kernel/harness/tracer.h): one run = fork a tracee, run the scenario's
// threads to their first instruction, force a simulated schedule with ptrace
// (one stop per CPU switch or event), collect, kill and reap. Reported per
// schedule shape of percpu_counter: no event, one preemption inside the
// critical section, one migration, one signal.
//
//   build/tools/bench/crosscheck_bench
#include <benchmark/benchmark.h>

#include <string>

#include "kernel/harness/crosscheck.h"
#include "kernel/harness/jit.h"
#include "kernel/harness/tracer.h"
#include "scenarios/builtin.h"
#include "scenarios/parser.h"
#include "sim/machine.h"
#include "sim/schedule.h"
#include "sim/simulator.h"

namespace rseqmc::harness {
namespace {

// Injects `d` the first time thread 0 reaches instruction `pc`.
class AtPc : public Scheduler {
 public:
  AtPc(uint32_t pc, Decision d) : pc_(pc), d_(d) {}
  void BeginExecution(const Machine&) override { done_ = false; }
  Decision Choose(const ChoiceView& v) override {
    const int cpu = v.DefaultCpu();
    const int t = v.Running(cpu);
    if (!done_ && t == 0 && v.machine().thread(t).cur().pc == pc_ && d_.IsEvent()) {
      done_ = true;
      Decision d = d_;
      d.cpu = static_cast<int8_t>(cpu);
      return d;
    }
    return Decision::Step(cpu);
  }

 private:
  uint32_t pc_;
  Decision d_;
  bool done_ = false;
};

void BM_InjectedRun(benchmark::State& state) {
  const BuiltinScenario* b = FindBuiltinScenario("percpu_counter");
  Scenario s = ParseScenario(b->text, b->path);
  const std::string why = HarnessUnavailableReason(s.num_cpus);
  if (!why.empty()) {
    state.SkipWithError(why.c_str());
    return;
  }
  const Function& f = s.program.functions[s.program.FindFunction("rseq_load_add_store")];
  const uint32_t in_section = f.first + 3;  // the load inside the section
  Decision d = Decision::Step(0);
  switch (state.range(0)) {
    case 1: d = Decision::Preempt(0); break;
    case 2: d = Decision::Migrate(0, 1); break;
    case 3: d = Decision::Signal(0, kSigUsr1); break;
    default: break;
  }
  Simulator sim(s);
  AtPc sched(in_section, d);
  Plan plan;
  ExecutionResult r = SimulateForPlan(sim, sched, &plan);
  JitProgram jit(s, JitOptions{});
  uint64_t stops = 0, flaky = 0;
  for (auto _ : state) {
    RealResult real = RunPlan(jit, plan);
    if (CompareRuns(s, r, plan, real) != "") {
      // As Crosscheck(): a preemption by another process is an event the
      // schedule does not have; only a difference that repeats counts.
      ++flaky;
      real = RunPlan(jit, plan);
      if (CompareRuns(s, r, plan, real) != "") {
        state.SkipWithError("the kernel run did not agree with the simulator");
        return;
      }
    }
    stops += real.stops;
  }
  state.counters["runs/s"] = benchmark::Counter(static_cast<double>(state.iterations()), benchmark::Counter::kIsRate);
  state.counters["stops/run"] = static_cast<double>(stops) / static_cast<double>(state.iterations());
  state.counters["flaky"] = static_cast<double>(flaky);
}
BENCHMARK(BM_InjectedRun)->Arg(0)->Arg(1)->Arg(2)->Arg(3)->ArgName("event")->UseRealTime()->Unit(benchmark::kMicrosecond);

}  // namespace
}  // namespace rseqmc::harness

BENCHMARK_MAIN();
