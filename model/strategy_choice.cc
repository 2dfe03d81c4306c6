// --strategy auto (model/strategy_choice.h).
#include "model/strategy_choice.h"

#include <optional>
#include <utility>

#include "sim/ir.h"

namespace rseqmc {
namespace {

// An instruction after which the thread's state differs from the state
// before it whatever the loop around it does: a register updated from its own
// value (add r9, r9, 1: an induction variable), an atomic add to memory, an
// observation. A register computed afresh from others (shl r9, r1, 6) or a
// store (of a value the iteration may compute the same again) repeats.
bool ChangesState(const Instr& in) {
  switch (in.op) {
    case Op::kAdd: case Op::kSub: case Op::kAnd: case Op::kOr:
    case Op::kXor: case Op::kShl: case Op::kShr: case Op::kMul:
      return in.rd == in.rs || (!in.use_imm && in.rd == in.rt);
    case Op::kXadd: case Op::kObserve:
      return true;
    default:
      return false;
  }
}

bool IsBranch(Op op) {
  switch (op) {
    case Op::kBeq: case Op::kBne: case Op::kBlt: case Op::kBge: case Op::kBltu: case Op::kBgeu: case Op::kJmp:
      return true;
    default:
      return false;
  }
}

// The first loop of `p` that can repeat an iteration without changing the
// thread's state: (first, last) instruction indices of its body.
std::optional<std::pair<uint32_t, uint32_t>> SpinLoop(const Program& p) {
  for (uint32_t i = 0; i < p.code.size(); ++i) {
    const Instr& in = p.code[i];
    if (!IsBranch(in.op) || in.target > i || p.FunctionOf(in.target) != p.FunctionOf(i)) continue;
    bool changes = false;
    for (uint32_t k = in.target; k <= i && !changes; ++k) changes = ChangesState(p.code[k]);
    if (!changes) return std::make_pair(in.target, i);
  }
  return std::nullopt;
}

}  // namespace

StrategyChoice ChooseStrategy(const Scenario& s) {
  for (const ThreadSpec& t : s.threads) {
    if (t.native) {
      return {StrategyKind::kDpor, "auto: thread '" + t.name + "' is C++, and stateful search needs IR threads"};
    }
  }
  if (const auto loop = SpinLoop(s.program)) {
    return {StrategyKind::kDpor, "auto: the loop " + s.program.DescribeIndex(loop->first) + " .. " +
                                     s.program.DescribeIndex(loop->second) +
                                     " can repeat a state (nothing in it updates a register from itself or adds to memory), a "
                                     "livelock that stateful search would prune and DPOR reports; use --strategy stateful to "
                                     "prune it"};
  }
  return {StrategyKind::kStateful,
          "auto: every thread is IR and every loop updates a register from itself or adds to memory, so no "
          "livelock hides in a pruned state; use --strategy dpor for partial-order reduction instead"};
}

}  // namespace rseqmc
