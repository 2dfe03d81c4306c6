// A RapidCheck generator of small, valid, always-terminating rseq scenarios,
// for property tests of the simulator, the text format and (later) the model
// checker's soundness tests.
//
// Shape of a generated scenario (built with sim/builder.h):
//   * 1..3 CPUs (1..cpus NUMA nodes), 1..3 IR threads, each rseq-registered,
//     with an initial CPU, an affinity (all, or a subset holding that CPU) and
//     a few initial registers r1..r8;
//   * data symbols d0..d2 (d0 always u64; plain or per-CPU, u64/u32, 1/2/4
//     elements) that ordinary code reads and writes, and reserved symbols
//     that only critical sections write: `counter` (per-CPU u64), `counter32`
//     (per-CPU u32), `gaveup`/`gaveup32` (u64), `hexpect`/`hexpect32` (u64,
//     handler accounting) and `spec` (per-CPU u64 x2, declared `scratch`: the
//     speculative stores of a section body);
//   * entry functions main0.. (thread i < #entries runs main<i>), helper functions
//     helper0.. (called from entry functions) and signal handlers handler0..;
//     bodies are straight-line code (li/mov/ALU, la+ld/st within symbol bounds,
//     indexed loads/stores with the index masked into range, cas/xadd/xchg on
//     u64 elements, observe, rseq_load of an ID field followed by an `assert`
//     that it is in range, getcpu, sched_yield, fence, nop, tgkill,
//     membarrier_rseq, sched_setaffinity), bounded loops (`li r14, K` .. `sub`
//     .. `bne`, K <= 3, no nesting, entry functions only), calls to helpers
//     (entry functions only: no recursion) and critical sections;
//   * every critical section is the librseq shape:
//         li r13, 0                      # retries
//       retry:
//         rseq_load r12, cpu_id_start ; r11 := &target[cpu]
//         rseq_arm CS                    # immediately before start
//       start:
//         rseq_load r10, cpu_id ; bne r10, r12, abort
//         ld r15, [r11] ; <body: ALU, loads, speculative stores to spec[cpu]>
//         [bne r15, EXPECT, done]        # cond-store sections leave early
//         add r15, r15, D | li r15, NEW
//         st [r11], r15                  # the commit: a single store, last
//       post:
//         jmp done
//         sig 0x53053053
//       abort:
//         add r13, r13, 1 ; blt r13, A, retry     # A = 2..4 attempts, then give up:
//         la r11, gaveup ; li r15, D ; xadd r15, [r11], r15
//       done:
//     in three kinds: add to counter[cpu] (u64), add to counter32[cpu] (u32,
//     ld32/st32), or compare-and-store on a per-CPU data element. Handlers
//     account their add sections first (`xadd hexpect, D`);
//   * signals: up to two of SIGUSR1/SIGUSR2 with handlers (maybe nodefer), and
//     maybe SIGALRM ignored; tgkill sends only those, and never from a handler;
//   * properties: first the invariants (below), then optionally "racy" ones
//     (an element, a sum or a return value compared with a constant) that may
//     hold or fail depending on the schedule.
//
// Guarantees (for every value the generator, or a shrink of it, produces), for
// executions whose injected signals are declared ones with a handler (as the
// random scheduler's are) and with the kernel models 4.18 and 6.0:
//   * Build() succeeds (BuildGenerated never throws, whatever the spec);
//   * every memory access stays inside a symbol, every descriptor is valid and
//     no thread unregisters, so no execution ends with kSigsegv, kKilled or
//     kDeadlock; asserts only state facts (IDs in range), so none fails;
//   * every execution terminates: loops are bounded, each section makes at
//     most A attempts, handlers send no signals and do not loop or call. An
//     execution with at most E injected events runs at most StepBound(E)
//     instructions (checked < RunOptions::max_steps for E <= 64);
//   * the first `num_invariants` properties hold in every execution whose
//     kernel model is correct:
//         sum(counter) + gaveup == S64 + hexpect
//         sum(counter32) + gaveup32 == S32 + hexpect32
//     (S = the deltas of the sections run in thread context, known
//     statically: each section either commits exactly once or gives up once,
//     and rseq makes the per-CPU read-modify-write atomic).
//   So with racy_properties off, every execution's verdict is kPass.
//
// Example:
//
//     RC_GTEST_PROP(Sim, Terminates, ()) {
//       const auto g = *testgen::GenScenario();
//       Simulator sim(g.scenario);
//       RandomScheduler sched(*rc::gen::arbitrary<uint64_t>());
//       RC_ASSERT(sim.Run(sched).steps <= g.StepBound(8));
//     }
#ifndef RSEQMC_TESTS_GEN_PROGRAM_GEN_H_
#define RSEQMC_TESTS_GEN_PROGRAM_GEN_H_

#include <cstddef>
#include <cstdint>
#include <iosfwd>
#include <utility>
#include <vector>

#include <rapidcheck.h>

#include "sim/scenario.h"

namespace rseqmc::testgen {

struct GenOptions {
  uint32_t max_cpus = 3;           // 1..max_cpus
  uint32_t max_threads = 3;        // 1..max_threads
  uint32_t max_stmts = 10;         // statements per function body
  uint32_t max_retries = 3;        // a section retries 1..max_retries times, then gives up
  bool signals = true;             // handlers, tgkill
  bool syscalls = true;            // sched_yield, getcpu, membarrier_rseq, sched_setaffinity
  bool racy_properties = true;     // properties that may fail under some schedules
  bool mm_cid = true;              // rseq_load of mm_cid (off: cpu_id instead); its values are the
                                   // simulator's 6.3 bitmap model, which 6.18 kernels do not follow
  // Asserts on register values (loaded from memory, so schedule-dependent)
  // that may fail, ending the process where the other threads are: the
  // exhaustive strategies must then agree on the memory as it died too. Off
  // by default: with it, the guarantees below that no assert fails and every
  // verdict is kPass do not hold.
  bool racy_asserts = false;
};

// ---- The generated description. Every field is normalised when built (indices
// taken modulo what exists), so any value, and any shrink, builds. ----

enum class StmtKind : uint8_t {
  kNop,
  kLi,
  kMov,
  kAlu,
  kLoad,       // op bit 0: indexed
  kStore,      // op bit 0: indexed
  kAtomic,     // op % 3: cas, xadd, xchg
  kObserve,
  kRseqField,  // rseq_load + assert in range; op % 4: cpu_id_start, cpu_id, node_id, mm_cid
  kFence,
  kGetcpu,
  kYield,
  kMembarrier,
  kSetaffinity,
  kTgkill,     // op bit 0: target by register
  kSection,    // op % 3: add64, add32, cond-store
  kCall,
  kLoop,
  kRacyAssert,  // `assert rs != imm % 3` (op bit 0: ==), which may fail (GenOptions::racy_asserts; else a nop)
};
inline constexpr int kNumStmtKinds = static_cast<int>(StmtKind::kRacyAssert) + 1;

struct Stmt {
  StmtKind kind = StmtKind::kNop;
  uint32_t op = 0;              // sub-kind (see StmtKind)
  uint32_t rd = 0, rs = 0, rt = 0;  // value registers, taken modulo 9 (r0..r8)
  uint32_t sym = 0;             // symbol / thread / signal / helper choice
  uint32_t cpu = 0, index = 0;  // element choice
  int64_t imm = 0;
  uint32_t count = 0;           // loop trips (1..3), section retries (1..max_retries)
  std::vector<Stmt> body;       // loop body; section body (noise)
  friend bool operator==(const Stmt&, const Stmt&) = default;
};

struct DataSpec {
  bool per_cpu = false;
  bool u32 = false;
  uint32_t count_log2 = 0;      // 1, 2 or 4 elements
  uint32_t stride = 0;          // per-CPU: 0 = default, 1 = 64, 2 = 128
  std::vector<int64_t> init;
  friend bool operator==(const DataSpec&, const DataSpec&) = default;
};

struct ThreadGen {
  uint32_t entry = 0, cpu = 0;
  uint64_t affinity = 0;        // 0 = all
  std::vector<std::pair<uint32_t, int64_t>> args;
  friend bool operator==(const ThreadGen&, const ThreadGen&) = default;
};

struct SignalGen {
  uint32_t which = 0;           // 0: SIGUSR1, 1: SIGUSR2
  uint32_t handler = 0;
  bool nodefer = false;
  friend bool operator==(const SignalGen&, const SignalGen&) = default;
};

struct PropGen {
  uint32_t form = 0;            // element, sum, ret, counter element, disjunction of two
  uint32_t cmp = 0;
  uint32_t a = 0, b = 0, c = 0;
  int64_t value = 0;
  friend bool operator==(const PropGen&, const PropGen&) = default;
};

struct ProgramSpec {
  uint32_t cpus = 1, nodes = 1;
  std::vector<DataSpec> data;                      // 1..3
  std::vector<std::vector<Stmt>> entries, helpers, handlers;
  std::vector<ThreadGen> threads;                  // 1..max_threads
  std::vector<SignalGen> signals;
  bool ignore_alrm = false;
  std::vector<PropGen> props;
  friend bool operator==(const ProgramSpec&, const ProgramSpec&) = default;
};

struct GeneratedScenario {
  ProgramSpec spec;
  Scenario scenario;
  size_t num_invariants = 0;     // properties [0, n) hold in every execution
  uint64_t base_steps = 0;       // worst-case instructions of all threads, no handlers
  uint64_t handler_steps = 0;    // worst-case instructions of one handler invocation
  uint64_t max_tgkills = 0;      // most tgkill instructions an execution runs

  // Upper bound on the instructions of any execution with at most
  // `max_events` injected events (handler invocations <= events + tgkills).
  uint64_t StepBound(uint32_t max_events) const {
    return base_steps + (max_events + max_tgkills) * handler_steps;
  }
};

// Builds the scenario a spec describes (never throws for any spec value).
GeneratedScenario BuildGenerated(const ProgramSpec& spec, const GenOptions& options = {});

rc::Gen<ProgramSpec> GenProgramSpec(GenOptions options = {});
rc::Gen<GeneratedScenario> GenScenario(GenOptions options = {});
// Just the scenario.
rc::Gen<Scenario> GenScenarioOnly(GenOptions options = {});

// RapidCheck's rendering of counterexamples: the scenario as `.rsq` text.
void showValue(const GeneratedScenario& g, std::ostream& os);

}  // namespace rseqmc::testgen

#endif  // RSEQMC_TESTS_GEN_PROGRAM_GEN_H_
