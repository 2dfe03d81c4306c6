// Runs one execution of a scenario deterministically (DESIGN.md §1, §3, §4).
//
// A thread's body is IR (interpreted) or a C++ callable (sim/thread_api.h).
// With a C++ thread in the scenario, threads are fibers (Boost.Context, pooled
// stacks, reused across executions): at every instruction boundary the running
// fiber asks the Scheduler what happens next and switches fibers only when
// another thread is chosen. When every thread is IR, the whole state is data
// and executions run without fibers on the caller's stack (Machine::RunDirect),
// which also lets an execution be checkpointed at a boundary and resumed
// (ResumeInto). The kernel model (sim/machine.h) applies the rules of
// reference/rseq-semantics.md §7.
//
// Example:
//
//     Scenario s = ParseScenarioFile("scenarios/percpu_counter.rsq");
//     Simulator sim(s, {.record_trace = true});
//     RandomScheduler sched(/*seed=*/42);
//     ExecutionResult r = sim.Run(sched);
//     std::cout << FormatTimeline(s, r) << EncodeSchedule(s, r.schedule) << "\n";
//
// A Simulator is not thread-safe; use one per OS thread. It keeps a reference to
// the scenario, which must outlive it.
#ifndef RSEQMC_SIM_SIMULATOR_H_
#define RSEQMC_SIM_SIMULATOR_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "sim/access_log.h"
#include "sim/kernel_model.h"
#include "sim/schedule.h"
#include "sim/scenario.h"
#include "sim/scheduler.h"
#include "sim/trace.h"

namespace rseqmc {

class Machine;
class FiberPool;
struct MachineCheckpoint;

struct RunOptions {
  bool record_trace = false;
  uint64_t max_steps = 100000;  // instructions per execution before kStepLimit
  KernelVersion kernel;         // default: 6.3-6.18 legacy + mm_cid (this machine)
  // A deliberately wrong kernel model, to prove that the real-kernel
  // cross-check (kernel/harness) catches a model bug. Never for real checks.
  enum class ModelFault : uint8_t {
    kNone,
    kNoAbortOnMigrate,  // an injected migration sets no rseq event (the kernel's rseq_migrate() does)
  };
  ModelFault fault = ModelFault::kNone;
  // Log memory accesses and section control flow (sim/access_log.h) into
  // ExecutionResult::accesses, for the commit-serialisability oracle.
  bool record_accesses = false;
  // Run every thread on a fiber even when all are IR (which otherwise run
  // without fibers, Machine::RunDirect): the two ways must give the same
  // executions, and tests compare them. No checkpoints in this mode.
  bool fibers = false;
};

struct ThreadOutcome {
  bool exited = false;        // returned from its entry function
  int64_t ret = 0;            // r0 at exit
  uint32_t aborts = 0;        // rseq aborts it took
  uint32_t final_cpu = 0;
  std::vector<std::pair<uint32_t, int64_t>> observed;  // (Program::strings index, value)
};

struct PropertyOutcome {
  bool holds = false;
  int64_t value = 0;     // the expression's value (0 = false)
  std::string error;     // evaluation error (e.g. division by zero, index out of range)
};

struct ExecutionResult {
  Verdict verdict = Verdict::kPass;
  std::string message;            // why it failed: property text, assert text+location, kill reason
  std::vector<uint8_t> memory;    // final data memory (byte i at kDataBase + i)
  std::vector<ThreadOutcome> threads;
  std::vector<PropertyOutcome> properties;
  Schedule schedule;              // replays this execution exactly
  Trace trace;                    // empty unless RunOptions::record_trace
  uint64_t steps = 0;             // IR instructions executed
  // The scheduler ended it early (Decision::Stop), or the machine abandoned
  // it at the step budget because the scheduler's choices starved a CPU
  // (Machine::FairWindow; `message` says so); no verdict.
  bool stopped = false;
  uint32_t events[kNumDecisionKinds] = {};  // injected events by kind (kStep unused)
  std::vector<std::string> extra_strings;  // observe names from native threads (ids after Program::strings)
  std::vector<AccessEntry> accesses;  // empty unless RunOptions::record_accesses (sim/access_log.h)
  bool accesses_recorded = false;     // RunOptions::record_accesses was set for this execution
  // A plain load (ld, ld32, an atomic) read a thread's mm_cid word in this
  // execution, e.g. through `rseq_addr` (Machine::NoteAreaRead); `rseq_load
  // mm_cid` is seen in the program text. The cross-check needs it (review
  // finding F9b). Loads before a checkpoint that an execution resumed from
  // (Simulator::ResumeInto) are not seen; the cross-check runs from the start.
  bool mm_cid_read = false;

  // Name of an observation id (Program::strings, then extra_strings).
  const std::string& ObservationName(const Scenario& s, uint32_t id) const;

  // Reads a 64/32-bit word of final memory; 0 outside.
  uint64_t Read(uint64_t address, int bytes) const;
  // Final value of symbol element [cpu][index] (cpu ignored unless per-CPU).
  int64_t SymbolValue(const Scenario& s, const std::string& name, uint32_t cpu = 0, uint32_t index = 0) const;
  // The determinism self-check's hash (XXH3-64) over the decisions (schedule, with its placement),
  // the final memory, each thread's return value, abort count and exit, the
  // step count and the verdict: a replay of `schedule` must give the same
  // value. 0 for a stopped execution (no verdict to check). Computed on each
  // call (tens of nanoseconds for a small scenario) rather than after every
  // execution, since only counterexamples and replays are checked.
  uint64_t TraceHash() const;
};

class Simulator {
 public:
  // Lays out the program (addresses), validates it (throws InputError on a bad
  // scenario) and prepares the fiber pool.
  Simulator(const Scenario& scenario, RunOptions options = {});
  ~Simulator();
  Simulator(const Simulator&) = delete;
  Simulator& operator=(const Simulator&) = delete;

  // Runs one execution from the initial state. Throws InputError if the
  // scheduler returns an invalid decision (e.g. a replay token for another program).
  ExecutionResult Run(Scheduler& scheduler);

  // Faster variant for exploration: fills `out` (reusing its buffers) and
  // returns the verdict; trace recording follows the options.
  Verdict RunInto(Scheduler& scheduler, ExecutionResult& out);

  // True if every thread is IR: executions then run without fibers on the
  // caller's stack, and can be checkpointed at a boundary (Machine::Save,
  // called from Scheduler::Choose) and continued later with ResumeInto.
  bool can_resume() const { return direct_; }
  // Continues from `checkpoint` (saved in an earlier execution of this
  // simulator) under `scheduler` to the end of the execution, as RunInto
  // would have from that boundary on; `out` must be the ExecutionResult that
  // execution wrote (see Machine::ResumeFrom). Does not call
  // Scheduler::BeginExecution: the scheduler restores its own state. Throws
  // std::logic_error if !can_resume() or the checkpoint was never saved, and
  // InputError like RunInto for an invalid decision.
  Verdict ResumeInto(const MachineCheckpoint& checkpoint, Scheduler& scheduler, ExecutionResult& out);

  // Polls `poll` inside every later execution of this simulator, at a
  // boundary every Machine::kStopPollSteps (65536) steps: a counter, not a
  // clock read per step; true ends the execution there, stopped
  // (ExecutionResult::stopped, `message` saying so), without a verdict. For
  // Ctrl-C and time limits in long replays (the counterexample builder, the
  // minimiser, `rseqmc run`). Empty (the default): never polled. Not for an
  // explorer's simulator: the exhaustive strategies poll at their own
  // boundaries and take a stopped execution for one they abandoned.
  void set_stop_poll(std::function<bool()> poll);
  const Scenario& scenario() const { return scenario_; }
  const RunOptions& options() const { return options_; }
  // The AbiRule bits (sim/kernel/abi.h) the executions of this simulator
  // recorded so far: the rules of the kernel ABI in which another ABI would
  // have decided otherwise somewhere (Machine::rule_sensitivity).
  uint32_t rule_sensitivity() const;
  RunOptions& mutable_options() { return options_; }

 private:
  // Resumes every fiber still inside a thread body so that it unwinds.
  void Unwind();
  const Scenario& scenario_;
  RunOptions options_;
  std::unique_ptr<Machine> machine_;
  std::unique_ptr<FiberPool> fibers_;
  std::function<bool()> stop_poll_;  // set_stop_poll
  bool direct_ = false;  // every thread is IR: run without fibers (Machine::RunDirect)
};

// Evaluates a property expression against final memory and thread outcomes.
// Errors (unknown symbol or thread, a thread that did not return, an index out
// of range, division by zero) make the outcome not hold, with the reason in
// PropertyOutcome::error.
PropertyOutcome EvaluateProperty(const Scenario& s, const Expr& e, const ExecutionResult& r);

// A property expression with its symbols, threads and operators resolved once,
// for evaluating it after many executions (the machine evaluates every
// property after every execution). Evaluate gives exactly EvaluateProperty's
// outcome. The scenario and the expression must outlive it.
class CompiledExpr {
 public:
  CompiledExpr(const Scenario& s, const Expr& e);
  // The expression's value on r's final state: by the postfix form when the
  // expression has one (has_postfix()), else by walking the tree.
  PropertyOutcome Evaluate(const ExecutionResult& r) const;
  // Always by walking the tree (the reference the postfix form is tested
  // against: tests/random_fast_path_test.cc).
  PropertyOutcome EvaluateTree(const ExecutionResult& r) const;
  // True if no node can fail (see PostfixOp), so Evaluate runs the postfix form.
  bool has_postfix() const { return !postfix_.empty(); }

  enum class Op : uint8_t { kUnknown, kAnd, kOr, kAdd, kSub, kMul, kDiv, kMod, kEq, kNe, kLt, kLe, kGt, kGe, kNeg, kNot };

 private:
  struct Node {
    const Expr* src = nullptr;     // names and operator text for error messages
    Expr::Kind kind = Expr::Kind::kConst;
    Op op = Op::kUnknown;
    int64_t value = 0;
    int sym = -1;                  // kSymbol/kIndex/kSum: Program::symbols index; -1 if unknown
    int thread = -1;               // kRet; -1 if unknown
    uint8_t num_operands = 0;      // compiled operands (the first two of Expr::args)
    uint32_t operands[2] = {0, 0};
  };
  // The postfix form of an expression none of whose nodes can fail
  // (constants, known symbols and sums of them, unary operators, binary
  // operators other than / and %): evaluated without recursion, error
  // strings or bounds checks per element; built when the whole tree
  // qualifies (Evaluate then gives the same value as Eval).
  struct PostfixOp {
    enum class Kind : uint8_t { kConst, kLoad, kSum, kUnary, kBinary } kind = Kind::kConst;
    Op op = Op::kUnknown;
    uint8_t width = 0;      // kLoad/kSum: bytes per element
    uint32_t count = 0;     // kSum: elements per block
    uint32_t blocks = 0;    // kSum: CPU blocks
    uint64_t stride = 0;    // kSum: bytes between CPU blocks
    int64_t value = 0;      // kConst: the value; kLoad/kSum: the first element's address
  };
  static constexpr size_t kMaxPostfixDepth = 16;
  uint32_t Compile(const Expr& e);
  // Appends node i's postfix form to postfix_; false if some node of it can
  // fail. `depth`: the stack depth before it, updated; at most kMaxPostfixDepth.
  bool CompilePostfix(uint32_t i, size_t& depth);
  int64_t EvalPostfix(const ExecutionResult& r) const;
  // Operand k of `n`; throws std::out_of_range if the tree has no such operand
  // (as Expr::args.at(k) does).
  static uint32_t Operand(const Node& n, int k);
  int64_t Eval(uint32_t node, const ExecutionResult& r, std::string& error) const;
  int64_t Element(const Symbol& sym, int64_t cpu, int64_t index, const ExecutionResult& r, std::string& error) const;
  const Scenario* s_;
  std::vector<Node> nodes_;  // nodes_[0] is the root
  std::vector<PostfixOp> postfix_;  // empty: evaluate with Eval
};

}  // namespace rseqmc

#endif  // RSEQMC_SIM_SIMULATOR_H_
