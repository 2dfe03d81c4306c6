// Tests of the simulator's API contracts that schedulers and callers rely on
// (sim/scheduler.h, sim/simulator.h): Stop ends an execution without a
// verdict, ExecutionResult::TraceHash() is the determinism check's hash, and
// property expressions evaluate (and fail) exactly where the tree says.
#include <stdexcept>

#include <gtest/gtest.h>

#include "scenarios/parser.h"
#include "sim/machine.h"
#include "sim/schedule.h"
#include "sim/simulator.h"

namespace rseqmc {
namespace {

// One thread adds 1 to x three times, then returns 7.
Scenario Adder() {
  return ParseScenario(
      "scenario adder\n"
      "var x: u64 = 0\n"
      "func main\n"
      "  la r1, x\n"
      "  ld r2, [r1]\n  add r2, r2, 1\n  st [r1], r2\n"
      "  ld r2, [r1]\n  add r2, r2, 1\n  st [r1], r2\n"
      "  ld r2, [r1]\n  add r2, r2, 1\n  st [r1], r2\n"
      "  li r0, 7\n"
      "  ret\n"
      "end\n"
      "thread t entry main\n"
      "property x == 3\n",
      "adder.rsq");
}

// Answers the default until boundary `at`, then `d`.
class StopAt : public Scheduler {
 public:
  StopAt(uint64_t at, Decision d) : at_(at), d_(d) {}
  Decision Choose(const ChoiceView& v) override {
    return v.machine().boundary() == at_ ? d_ : Decision::Step(v.DefaultCpu());
  }

 private:
  uint64_t at_;
  Decision d_;
};

TEST(SimulatorApiTest, StopOfAnyKindEndsTheExecutionWithoutAVerdict) {
  const Scenario s = Adder();
  Simulator sim(s);
  // Decision::Stop() and any decision with a negative CPU (sim/scheduler.h).
  for (const Decision d : {Decision::Stop(), Decision::Preempt(-1), Decision::Migrate(-1, 0)}) {
    StopAt sched(4, d);
    const ExecutionResult r = sim.Run(sched);
    EXPECT_TRUE(r.stopped) << ToString(d);
    EXPECT_EQ(r.steps, 4u) << ToString(d);
    EXPECT_EQ(r.verdict, Verdict::kPass) << ToString(d);
    EXPECT_TRUE(r.properties.empty()) << ToString(d);
    EXPECT_EQ(r.TraceHash(), 0u) << ToString(d);
    EXPECT_TRUE(r.schedule.entries.empty()) << ToString(d);  // a stop is never recorded
  }
}

TEST(SimulatorApiTest, TraceHashFollowsTheExecution) {
  const Scenario s = Adder();
  Simulator sim(s);
  RandomScheduler a(1);
  const ExecutionResult r = sim.Run(a);
  ASSERT_EQ(r.verdict, Verdict::kPass);
  EXPECT_EQ(r.SymbolValue(s, "x"), 3);
  EXPECT_NE(r.TraceHash(), 0u);
  ReplayScheduler replay(r.schedule);
  EXPECT_EQ(sim.Run(replay).TraceHash(), r.TraceHash());
  // Every part it covers changes it: memory, a thread's return, the steps.
  ExecutionResult m = r;
  m.memory[0] ^= 1;
  EXPECT_NE(m.TraceHash(), r.TraceHash());
  ExecutionResult t = r;
  t.threads[0].ret = 8;
  EXPECT_NE(t.TraceHash(), r.TraceHash());
  ExecutionResult st = r;
  ++st.steps;
  EXPECT_NE(st.TraceHash(), r.TraceHash());
}

Expr Const(int64_t v) {
  Expr e;
  e.kind = Expr::Kind::kConst;
  e.value = v;
  return e;
}
Expr Binary(const std::string& op, std::vector<Expr> args) {
  Expr e;
  e.kind = Expr::Kind::kBinary;
  e.op = op;
  e.args = std::move(args);
  return e;
}

TEST(SimulatorApiTest, PropertiesEvaluateAndFailWhereTheTreeSays) {
  const Scenario s = Adder();
  Simulator sim(s);
  RandomScheduler a(1);
  const ExecutionResult r = sim.Run(a);
  // The scenario's own property, compiled once or evaluated directly.
  const PropertyOutcome own = CompiledExpr(s, s.properties[0].expr).Evaluate(r);
  EXPECT_TRUE(own.holds);
  EXPECT_EQ(own.value, 1);
  EXPECT_EQ(EvaluateProperty(s, s.properties[0].expr, r).value, 1);
  // Errors: unknown symbol and thread, a thread, division by zero.
  Expr sym;
  sym.kind = Expr::Kind::kSymbol;
  sym.name = "nosuch";
  EXPECT_EQ(EvaluateProperty(s, sym, r).error, "unknown symbol 'nosuch'");
  Expr ret;
  ret.kind = Expr::Kind::kRet;
  ret.name = "t";
  EXPECT_EQ(EvaluateProperty(s, ret, r).value, 7);
  ret.name = "u";
  EXPECT_EQ(EvaluateProperty(s, ret, r).error, "unknown thread 'u'");
  const PropertyOutcome div = EvaluateProperty(s, Binary("/", {Const(1), Const(0)}), r);
  EXPECT_FALSE(div.holds);
  EXPECT_EQ(div.error, "division by zero or overflow");
  EXPECT_EQ(EvaluateProperty(s, Binary("%", {Const(-7), Const(3)}), r).value, -1);
  EXPECT_EQ(EvaluateProperty(s, Binary("<=>", {Const(1), Const(1)}), r).error, "unknown operator '<=>'");
  // A tree with a missing operand fails only where evaluation reads it: the
  // short-circuit of `0 && ?` never does, `1 && ?` does.
  const PropertyOutcome short_circuit = EvaluateProperty(s, Binary("&&", {Const(0)}), r);
  EXPECT_FALSE(short_circuit.holds);
  EXPECT_TRUE(short_circuit.error.empty());
  EXPECT_THROW(EvaluateProperty(s, Binary("&&", {Const(1)}), r), std::out_of_range);
  EXPECT_EQ(EvaluateProperty(s, Binary("||", {Const(1)}), r).value, 1);
}

}  // namespace
}  // namespace rseqmc
