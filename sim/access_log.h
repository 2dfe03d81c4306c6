// The access log of one execution: what the commit-serialisability oracle
// (model/oracles.h) needs to follow every critical-section attempt. Recorded
// only when RunOptions::record_accesses is set (runs without it pay one
// predictable branch per instruction); ExecutionResult::accesses holds it.
//
// One entry per logged instruction, in execution order (the same global order
// as the trace), plus the kernel's rseq actions:
//   * kInstr for every instruction that wrote memory (anywhere: st/st32, a
//     cas that stored, xadd, xchg, rseq_arm's store to rseq_cs, a native
//     thread's store), for every kernel call (they may abort other threads:
//     membarrier, tgkill, ...), and for every instruction at a pc inside some
//     descriptor's [start, post_commit), whatever it does (loads, rseq_load of
//     the area fields, branches, calls): `next` says where control went, so an
//     exit from the section is visible;
//   * kAbort when the kernel aborts a section (rule 6: pc = interrupted pc,
//     next = abort_ip index, addr = descriptor index or ~0 if rseq_cs points
//     elsewhere);
//   * kClear when the kernel clears rseq_cs without an abort (lazy clear with
//     ip outside, rule 7; registration clearing a stale rseq_cs, rule 3).
// Loads outside sections are not logged (nothing needs them).
//
// Example: what w0 of percpu_counter logs for its increment on CPU 0 when no
// event is injected (step, pc, what):
//   9   rseq_arm load_add_store   write 8 bytes at &w0's rseq_cs (next: start)
//   10  start: rseq_load r6, cpu_id   read 4 bytes of the rseq area = 0
//   11  bne r6, r1, abort         no access; next = start+2
//   12  ld r7, [r2]               read counter[0] = 0
//   13  add r7, r7, r3            no access
//   14  st [r2], r7               write counter[0] = 1; next = post (the commit)
#ifndef RSEQMC_SIM_ACCESS_LOG_H_
#define RSEQMC_SIM_ACCESS_LOG_H_

#include <cstdint>

namespace rseqmc {

enum class AccessKind : uint8_t { kInstr, kAbort, kClear };

inline constexpr uint8_t kAccessRead = 1;   // AccessEntry::flags: read `bytes` at addr (value rv)
inline constexpr uint8_t kAccessWrite = 2;  // AccessEntry::flags: wrote `bytes` at addr (value wv)
// AccessEntry::next of an instruction after which the context does not
// continue at a code index (the thread returned from its entry function, a
// handler did sigreturn, a native thread's CallIr returned).
inline constexpr uint32_t kAccessNoPc = 0xFFFFFFFFu;

struct AccessEntry {
  uint64_t step = 0;    // as TraceEntry::step: instructions executed so far (this one included for kInstr)
  uint64_t addr = 0;    // memory address of the access; kAbort: descriptor index (~0 if unknown)
  int64_t rv = 0;       // value read (zero-extended for 4-byte reads)
  int64_t wv = 0;       // value written
  uint32_t pc = 0;      // global instruction index (kNativePc for a native thread's access)
  uint32_t next = 0;    // kInstr: the context's next pc; kAbort: abort_ip index
  AccessKind kind = AccessKind::kInstr;
  uint8_t bytes = 0;    // 4 or 8 (0: no memory access)
  uint8_t flags = 0;    // kAccessRead | kAccessWrite
  int16_t thread = -1;  // up to kMaxThreads
  int8_t cpu = -1;
  uint8_t depth = 0;    // signal nesting depth of the running context (0 = main)
};

}  // namespace rseqmc

#endif  // RSEQMC_SIM_ACCESS_LOG_H_
