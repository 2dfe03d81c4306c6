// Semantic checks on a built scenario (run by ScenarioBuilder::Build and so by
// the parser). Each failure is an InputError naming the file:line:column of the
// offending instruction, descriptor, thread or property, with a hint:
//   * registers out of range (r0..r15), bad scale (1/2/4/8), bad widths;
//   * descriptor: start/post_commit/abort labels in the descriptor's function,
//     start <= post_commit, abort outside [start, post_commit) (rule §7.15),
//     the last instruction of a non-empty section is a single store (`st`/`st32`,
//     rule §7.21: the commit), the instruction before abort is `sig` (rule §7.17);
//     a descriptor marked `unchecked` skips the last three (planted bugs);
//   * version/flags are kept as written (the kernel model judges them at run time);
//   * threads: entry function exists, CPU < cpus, affinity non-empty and contains
//     the initial CPU, at most kMaxThreads threads and kMaxCpus CPUs;
//   * signals: 1..31, not SIGKILL/SIGSTOP, handler function exists;
//   * properties: symbols and threads they name exist; sym[i] only on arrays /
//     per-CPU symbols, sym[c][i] only on per-CPU arrays;
// and, so that the interpreter never leaves the code or the data: every
// function has at least one instruction and ends with `ret` or `jmp`, branch
// targets lie in the branch's function, references (call, la, rseq_arm,
// strings) are in range, `cas` has no index register (ru holds its new value),
// array sizes are 1..2^20 and all data together is at most 256 MiB.
#ifndef RSEQMC_SIM_VALIDATE_H_
#define RSEQMC_SIM_VALIDATE_H_

#include "sim/scenario.h"

namespace rseqmc {

// Throws InputError on the first problem (in source order where known).
void ValidateScenario(const Scenario& s);

}  // namespace rseqmc

#endif  // RSEQMC_SIM_VALIDATE_H_
