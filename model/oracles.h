// Oracles that judge one finished execution without any user property
// (DESIGN.md §5), and the livelock report.
//
// Commit serialisability. Every critical-section attempt of every thread
// context (a signal handler is its own context) is followed through the access
// log (sim/access_log.h) from its `rseq_arm` through `start_ip` to its end:
//   * commit: the section's last instruction (the commit store, rule 21)
//     executed and control fell through to post_commit;
//   * abort: the kernel moved it to abort_ip (rule 6), or its own code jumped
//     to the abort label (the cpu_id compare at start, rule 22);
//   * early exit: any other way out without committing (the librseq "ne"/"eq"
//     compare-failed exits, a `call`, a `ret`).
// Checked, for the first attempt that breaks one (in execution order):
//   (a) a committed attempt is equivalent to running it alone, atomically, at
//       its commit: every value it read inside the section (except bytes it
//       wrote itself first) is still the value in memory just before the
//       commit; otherwise another context wrote it in between (lost update);
//   (b) it committed on the CPU it started on, and every per-CPU symbol block
//       it read or wrote inside the section belongs to the CPU it ran on (or to
//       its mm_cid, when the section compared mm_cid rather than cpu_id);
//   (c) an aborted attempt and (d) an early exit left no write outside the
//       scenario's `scratch` symbols (an abort undoes nothing, rule 6);
//   (e) the section was entered at start_ip with rseq_cs pointing at its
//       descriptor (a kernel lazy clear between rseq_arm and start_ip leaves
//       the section unprotected).
//
// Example (what the `rseqmc check` command does):
//
//     ExploreOptions o;                    // strategy, bounds, ...
//     InstallDefaultOracle(s, o);          // o.run.record_accesses + o.oracle
//     ExploreResult r = Explore(s, o);     // a violation fails the execution
//
//     // Or on one execution:
//     Simulator sim(s, {.record_accesses = true});
//     ExecutionResult r = sim.Run(sched);
//     std::string why = DefaultOracle(s, r, /*max_events=*/2);   // "" = fine
//
// Precondition of every Check*: the execution ran with
// RunOptions::record_accesses (ExecutionResult::accesses_recorded); otherwise
// they throw std::invalid_argument.
#ifndef RSEQMC_MODEL_ORACLES_H_
#define RSEQMC_MODEL_ORACLES_H_

#include <cstdint>
#include <string>
#include <vector>

#include "model/explorer.h"
#include "sim/scenario.h"
#include "sim/simulator.h"

namespace rseqmc {

// Per-thread counts of critical-section attempts in one execution.
struct AttemptCounts {
  uint32_t attempts = 0;       // sections entered at start_ip
  uint32_t commits = 0;
  uint32_t kernel_aborts = 0;  // the kernel moved the thread to abort_ip
  uint32_t self_aborts = 0;    // the thread's own code jumped to the abort label
  uint32_t early_exits = 0;    // left without committing any other way ("ne"/"eq" exits)
  friend bool operator==(const AttemptCounts&, const AttemptCounts&) = default;
};

struct AttemptAnalysis {
  std::string violation;               // the first commit-serialisability violation ("" = none)
  std::vector<AttemptCounts> threads;  // by thread index
  // Kernel calls that may abort or move other threads without an injected
  // event (membarrier counts once per CPU, tgkill, sched_setaffinity,
  // sched_yield once each): the slack the abort-bound oracle allows for them.
  uint32_t disturbing_calls = 0;
};

// Follows every attempt of `r` (see the file comment). Throws
// std::invalid_argument if `r` was run without RunOptions::record_accesses.
AttemptAnalysis AnalyseAttempts(const Scenario& s, const ExecutionResult& r);

// The commit-serialisability oracle: "" if every attempt is fine, else one
// message naming the thread, descriptor, attempt number, the step of the
// commit or abort (as the timeline numbers them) and what broke, e.g. for
// scenarios/buggy/cpu_not_rechecked.rsq:
//   "commit serialisability: w0's attempt 1 of load_add_store_nocheck,
//    committed at step 25 on CPU 1 by `st [r2], r7` (line 61): committed to
//    counter[0] (CPU 0's block) while running on CPU 1; read counter[0] = 0 at
//    step 8 by `ld r7, [r2]` (line 59), but w1 wrote counter[0] = 1 at step 18
//    by `st [r2], r7` (line 61) before the commit: the operation is not atomic"
// and for scenarios/buggy/store_before_commit.rsq:
//   "commit serialisability: w0's attempt 1 of load_add_store_load_add_store
//    was aborted by the kernel at step 16 but left an effect outside the
//    declared scratch: it wrote nr_ops[0] = 1 at step 16 by `st [r2], r6`
//    (line 57) (an abort undoes no store: only the commit may publish; the
//    scenario declares no scratch)"
std::string CheckCommitSerialisability(const Scenario& s, const ExecutionResult& r);

// The self-inflicted abort loop oracle: each abort the kernel forces needs an
// injected event (or a disturbing kernel call), and so does a failed cpu_id
// compare at start_ip, so a thread whose aborts (kernel + its own jumps to the
// abort label) exceed max_events + 1 (+ disturbing calls) aborts itself in a
// loop that a fair schedule will not end (livelock suspect). "" = fine.
std::string CheckAbortBound(const Scenario& s, const ExecutionResult& r, uint32_t max_events);

// Both oracles above, from one pass over the log: the serialisability
// violation first, else the abort bound's message, else "".
std::string DefaultOracle(const Scenario& s, const ExecutionResult& r, uint32_t max_events);

// Hooks DefaultOracle into an exploration: sets o.run.record_accesses and
// o.oracle (chaining any oracle already set: it runs first). `s` must outlive
// the exploration; the bound is o.bounds.max_events.
void InstallDefaultOracle(const Scenario& s, ExploreOptions& o);

// The loop a thread is stuck in, from a traced execution (RunOptions::
// record_trace): the shortest repeating suffix of its instruction sequence
// (kernel aborts included), rendered from the first iteration's first
// instruction, e.g. for a retry loop that keeps a stale CPU number:
//   "retry: shl r2, r1, 6 → add r2, r2, r10 → rseq_arm inc_cs →
//    start: rseq_load r6, cpu_id → bne r6, r1, abort →
//    abort: add r9, r9, 1 → blt r9, 1000000, retry → retry
//    (7 instructions, repeated 285 times)"
// A kernel abort in the loop shows as "(kernel abort to abort)".
// "" if the thread's trace does not end in a loop that repeats at least twice.
std::string DescribeCycle(const Scenario& s, const ExecutionResult& traced_result, int thread);

// One line per thread that did not exit and ends in a loop:
// "w0 loops: <DescribeCycle>\n". For the report of a livelock (the explorer's
// Verdict::kLivelock, or Verdict::kStepLimit), after replaying
// the failing schedule with record_trace.
std::string DescribeLivelock(const Scenario& s, const ExecutionResult& traced_result);

// "counter[1]", "slots[0][2]", "done", or "0x10000100" outside every symbol.
std::string DescribeAddress(const Scenario& s, uint64_t addr);

// ---------------------------------------------------------------------------
// The allocator oracle (issue 12; scenarios/README.md "The allocator family").
//
// Judges the final state of a scenario built on scenarios/alloc_common.rsqi:
// objects are the indices 1..N (N + 1 = the length of `owner`), and each must
// be in exactly one place, with every count within its capacity:
//   * the arena: arena_stack[1..arena_stack[0]] and the never-carved objects
//     arena_fresh..N;
//   * array caches (scenarios/alloc_slabs.rsqi): cache k holds
//     cache_slots[k*CAP .. k*CAP + cache_count[k]), CAP = the slots per count;
//   * the shared lock-free list (scenarios/alloc_cas.rsqi): from the low 32
//     bits of shared_head through obj_next, of length shared_count;
//   * the threads: the non-zero elements of `held`.
// Rules, checked in this order, the first broken one reported:
//   (1) counts: each count is at most its capacity (arena: N, cache: CAP), the
//       shared list has no cycle and its length equals shared_count;
//   (2) values: every slot within a count holds an object (1..N);
//   (3) no object twice: no object in two places (or twice in one);
//   (4) no object lost: every object 1..N is somewhere;
// so that objects in caches + arena + held by threads == N exactly.
// Messages name the object and its places, e.g.
//   "allocator: object 2 is in two places: cache_slots[0] (cache 0) and
//    arena_stack[1] (arena)"
//   "allocator: object 3 is lost: in no cache, not in the arena, held by no
//    thread (3 of 4 objects found: arena 2, caches 1, held 0)"
// The scenario's own heap_check (alloc_common.rsqi) asserts the same rules in
// the IR, so that replay, minimisation and the real-kernel cross-check see
// them; this oracle is the independent judge tests run on every execution.

// True if `s` declares the symbols of alloc_common.rsqi (owner, held,
// arena_stack, arena_fresh).
bool IsAllocatorScenario(const Scenario& s);

// The allocator oracle over r's final memory: "" if every rule holds, else
// the first broken rule's message. Throws std::invalid_argument if `s` is not
// an allocator scenario (IsAllocatorScenario).
std::string CheckAllocatorHeap(const Scenario& s, const ExecutionResult& r);

}  // namespace rseqmc

#endif  // RSEQMC_MODEL_ORACLES_H_
