// Simulator benchmarks (issue "Simulator core"; figures in tools/bench/README.md):
//   * BM_FiberSwitch        — one symmetric fiber switch (ns; target <= 20 ns);
//   * BM_InterpretNoInject  — IR instructions per second with no injection
//                             (target >= 50 M/s);
//   * BM_RandomExecutions   — random-schedule executions per second of the
//                             built-in per-CPU counter scenario with 2 CPUs,
//                             2 threads, 1 op each (target >= 1 M/s).
//   * BM_RandomExecutionsBreakdown — the same with only CPU switches, only
//                             events, both or neither (what deviations cost).
// Run: build/tools/bench/sim_bench --benchmark_repetitions=5
//        --benchmark_report_aggregates_only=true
#include <benchmark/benchmark.h>

#include <cstdio>
#include <cstdlib>

#include "scenarios/builtin.h"
#include "scenarios/parser.h"
#include "sim/builder.h"
#include "sim/fiber_pool.h"
#include "sim/machine.h"
#include "sim/schedule.h"
#include "sim/simulator.h"

namespace rseqmc {
namespace {

// Two fibers switching to each other `remaining` times, then back to main.
void BM_FiberSwitch(benchmark::State& state) {
  constexpr int kSwitchesPerRound = 10000;
  int remaining = 0;
  FiberPool* pool_ptr = nullptr;
  FiberPool pool([&](int self) {
    for (;;) {
      if (remaining-- <= 0) {
        pool_ptr->SwitchTo(FiberPool::kMain);
      } else {
        pool_ptr->SwitchTo(1 - self);
      }
    }
  });
  pool_ptr = &pool;
  pool.Reserve(2);
  for (auto _ : state) {
    remaining = kSwitchesPerRound;
    pool.SwitchTo(0);
  }
  state.SetItemsProcessed(state.iterations() * kSwitchesPerRound);
  state.counters["ns_per_switch"] = benchmark::Counter(
      static_cast<double>(state.iterations()) * kSwitchesPerRound,
      benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
}
BENCHMARK(BM_FiberSwitch)->Unit(benchmark::kMicrosecond);

// Always the default decision: the running thread keeps running.
class ContinueScheduler : public Scheduler {
 public:
  Decision Choose(const ChoiceView& v) override { return Decision::Step(v.machine().default_cpu()); }
};

// One thread: a loop of loads, ALU ops, stores and a branch over a small array
// (per iteration 6 instructions), N iterations.
Scenario LoopScenario(int64_t iterations) {
  ScenarioBuilder b("interp_loop");
  b.Cpus(1).Var("a", Width::kU64, 8);
  b.Func("main")
      .La(1, "a")
      .Li(2, iterations)
      .Label("loop")
      .Ld(3, Mem(1, 8))
      .Add(3, 3, Imm(1))
      .St(Mem(1, 8), 3)
      .Xor(4, 4, R(3))
      .Sub(2, 2, Imm(1))
      .Bne(2, Imm(0), "loop")
      .Ret();
  b.Thread("t0", "main", 0);
  return b.Build();
}

void BM_InterpretNoInject(benchmark::State& state) {
  const Scenario s = LoopScenario(100000);
  RunOptions opt;
  opt.max_steps = 1ull << 40;
  Simulator sim(s, opt);
  ContinueScheduler sched;
  ExecutionResult r;
  uint64_t steps = 0;
  for (auto _ : state) {
    sim.RunInto(sched, r);
    steps += r.steps;
  }
  if (r.verdict != Verdict::kPass || r.SymbolValue(s, "a", 0, 1) != 100000) state.SkipWithError("wrong result");
  state.counters["instr_per_s"] = benchmark::Counter(static_cast<double>(steps), benchmark::Counter::kIsRate);
}
BENCHMARK(BM_InterpretNoInject)->Unit(benchmark::kMillisecond);

Scenario CounterScenario() {
  const BuiltinScenario* b = FindBuiltinScenario("percpu_counter");
  if (b == nullptr) {
    std::fprintf(stderr, "built-in scenario percpu_counter is missing\n");
    std::abort();
  }
  return ParseScenario(b->text, b->path, {{"THREADS", 2}, {"OPS", 1}});
}

void BM_RandomExecutions(benchmark::State& state) {
  const Scenario s = CounterScenario();
  Simulator sim(s);
  RandomScheduler sched(1);
  ExecutionResult r;
  uint64_t failures = 0, steps = 0;
  for (auto _ : state) {
    failures += sim.RunInto(sched, r) != Verdict::kPass;
    steps += r.steps;
  }
  if (failures != 0) state.SkipWithError("the correct counter scenario failed");
  state.SetItemsProcessed(state.iterations());
  state.counters["steps_per_exec"] = static_cast<double>(steps) / static_cast<double>(state.iterations());
}
BENCHMARK(BM_RandomExecutions);

// The same executions with every thread on a fiber (RunOptions::fibers, the
// way scenarios with a C++ thread run): what running all-IR scenarios without
// fibers saves.
void BM_RandomExecutionsOnFibers(benchmark::State& state) {
  const Scenario s = CounterScenario();
  RunOptions o;
  o.fibers = true;
  Simulator sim(s, o);
  RandomScheduler sched(1);
  ExecutionResult r;
  for (auto _ : state) sim.RunInto(sched, r);
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_RandomExecutionsOnFibers);

// Where a random execution's time goes: the same scenario with CPU switches
// only (p_switch_cpu = arg0 %), events only (each of the four kinds arg1 ‰),
// both, or neither. Counters: steps and deviations (schedule entries) per
// execution.
void BM_RandomExecutionsBreakdown(benchmark::State& state) {
  const Scenario s = CounterScenario();
  Simulator sim(s);
  RandomOptions o;
  o.p_switch_cpu = static_cast<double>(state.range(0)) / 100.0;
  o.p_preempt = o.p_migrate = o.p_signal = o.p_ipi = static_cast<double>(state.range(1)) / 1000.0;
  RandomScheduler sched(1, o);
  ExecutionResult r;
  uint64_t steps = 0, deviations = 0;
  for (auto _ : state) {
    sim.RunInto(sched, r);
    steps += r.steps;
    deviations += r.schedule.entries.size();
  }
  state.SetItemsProcessed(state.iterations());
  state.counters["steps_per_exec"] = static_cast<double>(steps) / static_cast<double>(state.iterations());
  state.counters["deviations_per_exec"] = static_cast<double>(deviations) / static_cast<double>(state.iterations());
}
BENCHMARK(BM_RandomExecutionsBreakdown)->ArgNames({"switch_pct", "event_permille"})
    ->Args({0, 0})->Args({25, 0})->Args({0, 11})->Args({25, 11});

}  // namespace
}  // namespace rseqmc

BENCHMARK_MAIN();
