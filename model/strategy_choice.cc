// --strategy auto (model/strategy_choice.h).
#include "model/strategy_choice.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <optional>
#include <string>
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

// The options of an event-free pilot of `k`: base's run, oracle, memory and
// time limits and interrupt; its own execution cap (0: none), not base's, so
// that --max-executions (and a checkpoint resumed without it) leaves the
// choice as it is; no snapshot, resume, progress or on_execution hooks.
ExploreOptions PilotOptions(const ExploreOptions& base, StrategyKind k, uint64_t cap) {
  ExploreOptions o = base;
  o.strategy = k;
  o.bounds = Bounds{};
  o.bounds.max_events = 0;
  o.iterative = false;
  o.max_executions = cap;
  o.snapshot = nullptr;
  o.snapshot_interval_s = 0;
  o.resume_from = nullptr;
  o.progress = nullptr;
  o.on_execution = nullptr;
  return o;
}

// Ran to its end: what an exploration at K=0 without the pilot's cap returns.
bool Final(const ExploreResult& r) { return r.complete || r.stop_reason == "failure"; }

// `r` as StrategyChoice::pilot: only what Explore(s, base) at K=0 returns,
// which base's --max-executions would have stopped earlier otherwise.
std::optional<ExploreResult> Reusable(const ExploreResult& r, const ExploreOptions& base) {
  if (!Final(r) || (base.max_executions != 0 && r.executions >= base.max_executions)) return std::nullopt;
  return r;
}

std::string Count(uint64_t n) {
  std::string digits = std::to_string(n), out;
  for (size_t i = 0; i < digits.size(); ++i) {
    if (i != 0 && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return out;
}

std::string Fixed(double v, int decimals) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.*f", decimals, v);
  return buf;
}

// Rule 3 of the header: the event-free pilots and the figure they give.
StrategyChoice ChooseByPilot(const Scenario& s, const ExploreOptions& base) {
  StrategyChoice c;
  const ExploreResult dpor = Explore(s, PilotOptions(base, StrategyKind::kDpor, kPilotMaxTraces));
  c.pilot_seconds = dpor.elapsed_s;
  const std::string dpor_text = "DPOR ran " + Count(dpor.executions) + " execution" +
                                (dpor.executions == 1 ? "" : "s") + " of " + Count(dpor.max_depth) + " steps";
  if (!Final(dpor) && dpor.stop_reason == "max-executions" && dpor.executions >= kPilotMaxTraces) {
    c.kind = StrategyKind::kStateful;
    c.reason = "auto: without events " + dpor_text + " (its pilot's cap) and had not exhausted the interleavings: "
               "the threads race in many places, whose converging states stateful search visits once";
    return c;
  }
  if (!Final(dpor)) {
    c.kind = StrategyKind::kDpor;
    c.reason = "auto: the event-free pilot stopped (" + dpor.stop_reason +
               ") before it could compare the strategies; DPOR, whose memory stays linear in the execution's length";
    return c;
  }
  const uint64_t work = std::max<uint64_t>(1, dpor.executions * dpor.max_depth);
  // Enough states to decide: rho reaches kStatesPerDporStep there.
  ExploreOptions so = PilotOptions(base, StrategyKind::kStateful, 0);
  so.max_states = static_cast<uint64_t>(std::ceil(kStatesPerDporStep * static_cast<double>(work)));
  const ExploreResult st = Explore(s, so);
  c.pilot_seconds += st.elapsed_s;
  const bool capped = st.stop_reason == "max-states";
  const double rho = static_cast<double>(st.states) / static_cast<double>(work);
  const std::string figures =
      capped ? "without events " + dpor_text + " and stateful search passed " + Count(st.states) + " states (" +
                   Fixed(kStatesPerDporStep, 0) + " per DPOR step, its pilot's cap) without exhausting them"
             : "without events stateful search stored " + Count(st.states) + " states where " + dpor_text + ": " +
                   Fixed(rho, 2) + " states per DPOR step (" + (rho >= kStatesPerDporStep ? ">= " : "< ") +
                   Fixed(kStatesPerDporStep, 0) + ")";
  if (capped || rho >= kStatesPerDporStep) {
    c.kind = StrategyKind::kDpor;
    c.reason = "auto: " + figures + ": the threads race in few places, so DPOR's work grows with the event positions and stateful "
               "search's with positions x interleavings; use --strategy stateful to prune visited states instead";
    c.pilot = Reusable(dpor, base);
    return c;
  }
  if (!Final(st)) {
    c.kind = StrategyKind::kDpor;
    c.reason = "auto: the event-free stateful pilot stopped (" + st.stop_reason +
               ") before it could compare the strategies; DPOR, whose memory stays linear in the execution's length";
    c.pilot = Reusable(dpor, base);
    return c;
  }
  c.kind = StrategyKind::kStateful;
  c.reason = "auto: " + figures + ": " +
             (dpor.executions == 1 ? "the threads do not interleave without events, and a stateful branch ends at "
                                     "the first state it has seen where a DPOR execution runs to the end"
                                   : "many interleavings converge on few states, which stateful search visits once") +
             "; use --strategy dpor for partial-order reduction instead";
  c.pilot = Reusable(st, base);
  return c;
}

}  // namespace

StrategyChoice ChooseStrategy(const Scenario& s, const ExploreOptions& base) {
  for (const ThreadSpec& t : s.threads) {
    if (t.native) {
      return {StrategyKind::kDpor, "auto: thread '" + t.name + "' is C++, and stateful search needs IR threads", {}, 0};
    }
  }
  if (const auto loop = SpinLoop(s.program)) {
    return {StrategyKind::kDpor,
            "auto: the loop " + s.program.DescribeIndex(loop->first) + " .. " +
                s.program.DescribeIndex(loop->second) +
                " can repeat a state (nothing in it updates a register from itself or adds to memory), a "
                "livelock that stateful search would prune and DPOR reports; use --strategy stateful to prune it",
            {},
            0};
  }
  return ChooseByPilot(s, base);
}

}  // namespace rseqmc
