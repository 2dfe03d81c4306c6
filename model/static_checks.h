// Static checks on every critical-section descriptor, run before exploring
// (DESIGN.md §5). Each finding names the file:line:column of the offending
// instruction (or of the descriptor) and says how to fix it; any finding makes
// the scenario's verdict a failure.
//
// For each descriptor `cs NAME start=S post_commit=P abort=A` (the section is
// the half-open range [S, P), rule §7.5):
//   * no kernel call inside the section (sched_yield, sched_setaffinity,
//     getcpu, tgkill, membarrier_rseq, rseq_register, rseq_unregister): a
//     syscall in a section is undefined (rule §7.19: debug kernels SIGSEGV,
//     legacy ones abort only if it slept);
//   * no `call` inside the section: the callee runs outside [S, P), so an
//     event there does not abort and the section is unprotected;
//   * no branch, jump or call into the section from outside except to S;
//   * the commit is the section's last instruction and a single store
//     (`st`/`st32`, rule §7.21) — the parser's validator already requires it;
//     repeated here for descriptors marked `unchecked` when asked to;
//   * `rseq_arm NAME` appears in the descriptor's function before S, as the
//     instruction right before S (an event at a boundary in between lets the
//     kernel clear rseq_cs, rule §7.7, and the section runs unprotected), and
//     no `rseq_arm NAME` lies inside the section (§2.4 step [1]);
//   * A lies outside [S, P) and the instruction before A is `sig` with the
//     registered signature (rules §7.15, §7.17) — validator checks, repeated
//     for `unchecked` descriptors when asked to.
// Descriptors marked `unchecked` (planted bugs that must reach the kernel
// model) are skipped unless StaticCheckOptions::include_unchecked.
//
// Example (what `rseqmc check` does before exploring):
//
//     for (const Finding& f : StaticCheck(s)) std::cerr << FormatFinding(f);
//     // scenarios/x.rsq:14:3: error: kernel call `sched_yield` inside critical
//     //   section 'inc_cs' [start, post): ...
//     //   hint: move the call before rseq_arm or after post_commit
#ifndef RSEQMC_MODEL_STATIC_CHECKS_H_
#define RSEQMC_MODEL_STATIC_CHECKS_H_

#include <string>
#include <vector>

#include "sim/ir.h"
#include "sim/scenario.h"

namespace rseqmc {

struct Finding {
  std::string file;     // Scenario::file ("" for a C++-built scenario)
  SourceLoc loc;        // the offending instruction, or the descriptor
  std::string message;  // what is wrong, naming the descriptor
  std::string hint;     // how to fix it
  friend bool operator==(const Finding&, const Finding&) = default;
};

struct StaticCheckOptions {
  bool include_unchecked = false;  // also check descriptors marked `unchecked`
};

// All findings, ordered by descriptor (declaration order) and then by the
// position of the offending instruction. Empty = the scenario passes.
std::vector<Finding> StaticCheck(const Scenario& s, const StaticCheckOptions& options = {});

// "file:line:col: error: message\n  hint: hint\n" (the shape of InputError).
std::string FormatFinding(const Finding& f);

}  // namespace rseqmc

#endif  // RSEQMC_MODEL_STATIC_CHECKS_H_
