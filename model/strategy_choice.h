// `--strategy auto` (the default of `rseqmc check`): which exhaustive
// strategy explores a scenario, chosen from its program text, and why.
//
// Stateful search (model/explorer.h, kStateful) prunes every boundary whose
// machine state it has seen: on the built-ins at one event it runs 3-8x
// faster than DPOR (tools/bench/README.md, "Strategy chosen per scenario").
// It cannot run C++ threads (their state is not data), and it does not report
// livelocks: a loop that returns to a state it was in is pruned where DPOR's
// spin detection reports `livelock`. So the rule is:
//   * dpor when a thread's body is C++ (ThreadSpec::native);
//   * dpor when some loop of the program can run an iteration that leaves
//     the thread's state as it was: a backward branch or jmp whose body
//     (target .. branch, within one function) updates no register from its
//     own value (add r9, r9, 1), has no xadd and no observe. A spin-wait
//     (ld/cas/rseq_load + compare + branch back, sched_yield, futex_wait,
//     addresses recomputed from the CPU number) is such a loop; a counted
//     loop is not. Stores do not count: the same value may be stored again;
//   * stateful otherwise.
// Explicit strategies (`--strategy dpor|dfs|stateful|...`) are never changed.
#ifndef RSEQMC_MODEL_STRATEGY_CHOICE_H_
#define RSEQMC_MODEL_STRATEGY_CHOICE_H_

#include <string>

#include "model/explorer.h"
#include "sim/scenario.h"

namespace rseqmc {

struct StrategyChoice {
  StrategyKind kind = StrategyKind::kDpor;  // kStateful or kDpor
  // One sentence for people: why, naming the thread or the loop
  // ("function+offset .. function+offset") that decided it.
  std::string reason;
};

// The strategy `--strategy auto` runs `s` under. Reads only the program and
// the threads' kinds; never throws.
StrategyChoice ChooseStrategy(const Scenario& s);

}  // namespace rseqmc

#endif  // RSEQMC_MODEL_STRATEGY_CHOICE_H_
