// Exhaustive exploration (DFS, DPOR with sleep sets, stateful DFS) and the
// sampling strategies' driver. See model/explorer.h for the contract.
//
// The exhaustive strategies keep the current path as a stack of nodes, one
// per boundary; each execution extends the path with first choices, and
// afterwards the deepest node with an unexplored alternative is advanced (as
// in CHESS and Loom). A node keeps only what backtracking needs: its
// alternatives, backtrack/done/sleep sets and the footprint of the transition
// taken. The next execution does not replay the path from the initial state
// when the simulator can resume (every thread is IR): machine checkpoints
// (Machine::Save) are kept at nodes with alternatives, sparsely within a
// memory budget (see DfsEngine::CheckpointDue: the interval between them
// doubles whenever they outgrow it), and an execution continues from the
// deepest checkpoint at or before the node it backtracked to, replaying the
// nodes in between. With C++ threads the prefix is replayed from the initial
// state; after loading a snapshot the first execution replays it and
// checkpoints it on the way. The interrupt flag and the time limit are
// polled inside executions too (every 1024 boundaries), so a long execution
// stops within a second of either.
#include "model/explorer.h"

#include <algorithm>
#include <array>
#include <bit>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <memory>
#include <optional>
#include <set>
#include <unordered_map>
#include <utility>

#include <boost/container/small_vector.hpp>

#include "model/pct.h"
#include "model/snapshot.h"
#include "model/state_set.h"
#include "model/subtree.h"
#include "model/thread_set.h"
#include "model/wakeup_tree.h"
#include "sim/diag.h"
#include "sim/machine.h"
#include "sim/placement.h"

namespace rseqmc {

bool Bounds::Allows(DecisionKind kind, const uint32_t* counts, uint32_t total) const {
  if (total >= max_events) return false;
  const uint32_t n = counts[static_cast<int>(kind)];
  switch (kind) {
    case DecisionKind::kPreempt: return n < max_preemptions;
    case DecisionKind::kMigrate: return n < max_migrations;
    case DecisionKind::kSignal: return n < max_signals;
    case DecisionKind::kIpi: return n < max_ipis;
    case DecisionKind::kStep: return true;
  }
  return false;
}

std::string Bounds::ToString() const {
  std::string s = "events<=" + std::to_string(max_events);
  auto add = [&s](const char* name, uint32_t v) {
    if (v != kUnbounded) s += std::string(" ") + name + "<=" + std::to_string(v);
  };
  add("preempt", max_preemptions);
  add("migrate", max_migrations);
  add("signal", max_signals);
  add("ipi", max_ipis);
  return s;
}

const char* StrategyName(StrategyKind k) {
  switch (k) {
    case StrategyKind::kDfs: return "dfs";
    case StrategyKind::kDpor: return "dpor";
    case StrategyKind::kStateful: return "stateful";
    case StrategyKind::kRandom: return "random";
    case StrategyKind::kPct: return "pct";
  }
  return "?";
}

std::optional<StrategyKind> ParseStrategy(const std::string& name) {
  for (StrategyKind k : {StrategyKind::kDfs, StrategyKind::kDpor, StrategyKind::kStateful, StrategyKind::kRandom,
                         StrategyKind::kPct}) {
    if (name == StrategyName(k)) return k;
  }
  return std::nullopt;
}

namespace {

using Clock = std::chrono::steady_clock;

// A transition named relative to its thread (model/wakeup_tree.h).
using Alt = ThreadAlt;
// A node's alternatives, inline up to kInlineAlts (two threads' steps and a
// few events): one buffer less to miss in the cache at every node of a long
// path (a separate heap buffer per node cost 7 % of percpu_list PER=64).
constexpr size_t kInlineAlts = 6;
using AltList = boost::container::small_vector<Alt, kInlineAlts>;

Decision ToDecision(const Machine& m, const Alt& a) {
  const int cpu = m.thread(a.thread).cpu;
  switch (a.kind) {
    case DecisionKind::kStep: return Decision::Step(cpu);
    case DecisionKind::kPreempt: return Decision::Preempt(cpu, a.arg);
    case DecisionKind::kMigrate: return Decision::Migrate(cpu, a.arg);
    case DecisionKind::kSignal: return Decision::Signal(cpu, a.arg);
    case DecisionKind::kIpi: return Decision::Ipi(cpu);
  }
  return Decision::Step(cpu);
}

// Appends thread t's alternatives at this boundary: its step, then each
// event the bounds still allow, unless `defer` is set and the same event at t's next
// boundary reaches the same final states (events only where they can matter,
// issue 18: Machine::EventCommutesWithNextStep says when, sim/event_commute.cc
// why). An event is then explored at the last boundary of each chain of such
// positions, the first where t's next step could tell it apart: one event
// moved later, so the event bound K counts the same events and a
// counterexample keeps its number of events. `lone`: also where t's next step
// is a memory access while t is the only live thread
// (Machine::EventCommutesWithLoneMemoryStep).
void AppendAlternatives(const Machine& m, int t, const Bounds& b, bool defer, bool lone, AltList& out) {
  const int16_t th = static_cast<int16_t>(t);
  out.push_back({th, DecisionKind::kStep, -1});
  uint32_t counts[kNumDecisionKinds];
  for (int k = 0; k < kNumDecisionKinds; ++k) counts[k] = m.events(static_cast<DecisionKind>(k));
  const uint32_t total = m.total_events();
  // After this event, may another one hit t before its next step?
  const bool later_events = total + 1 < b.max_events;
  auto offered = [&](DecisionKind kind, int signo) {
    return b.Allows(kind, counts, total) &&
           !(defer && (m.EventCommutesWithNextStep(t, kind, signo, later_events) ||
                       (lone && m.EventCommutesWithLoneMemoryStep(t, kind, signo, later_events))));
  };
  const int cpu = m.thread(t).cpu;
  if (offered(DecisionKind::kPreempt, -1)) {
    const auto& q = m.cpu(cpu).queue;
    if (q.empty()) {
      out.push_back({th, DecisionKind::kPreempt, -1});
    } else {
      for (int32_t next : q) out.push_back({th, DecisionKind::kPreempt, static_cast<int16_t>(next)});
    }
  }
  if (offered(DecisionKind::kMigrate, -1)) {
    const uint64_t aff = m.thread(t).affinity;
    for (int c = 0; c < m.num_cpus(); ++c) {
      if (c != cpu && ((aff >> c) & 1)) out.push_back({th, DecisionKind::kMigrate, static_cast<int16_t>(c)});
    }
  }
  for (const SignalSpec& sg : m.scenario().signals) {
    if (sg.handler >= 0 && offered(DecisionKind::kSignal, sg.signo)) {
      out.push_back({th, DecisionKind::kSignal, static_cast<int16_t>(sg.signo)});
    }
  }
  if (offered(DecisionKind::kIpi, -1)) out.push_back({th, DecisionKind::kIpi, -1});
}

// True if the bound allows another injected event of some kind after what
// the machine has had (whether or not the boundary offers one): DPOR's weak
// initials need it (model/wakeup_tree.h WeakInitialIndex).
bool EventsLeft(const Machine& m, const Bounds& b) {
  uint32_t counts[kNumDecisionKinds];
  for (int k = 0; k < kNumDecisionKinds; ++k) counts[k] = m.events(static_cast<DecisionKind>(k));
  for (int k = 1; k < kNumDecisionKinds; ++k) {
    if (b.Allows(static_cast<DecisionKind>(k), counts, m.total_events())) return true;
  }
  return false;
}

// Ample sets of the exhaustive strategies dfs and stateful (Peled, "All from
// one, one for all", CAV'93; Clarke, Grumberg, Peled, Model Checking ch. 10).
// At a boundary where some running thread t, not spinning, has a next step
// that is independent of all other threads (Machine::NextStepIsIndependent:
// register-only, or an rseq_load / rseq_arm of t's own area when no load or
// store of the program reaches the rseq areas, and no other thread can
// interrupt t there in a way that tells the orders apart), only t's
// alternatives are explored: that step and the
// injected events on t that AppendAlternatives offers (events only where they
// can matter). t is the default CPU's thread if it qualifies (the schedule
// the user would see), else the one on the lowest CPU. Why each condition
// holds:
//  C0 (non-empty): t's step is enabled.
//  C1 (no dependent transition first): every transition of another thread,
//     enabled now or after any number of other threads' transitions, commutes
//     with t's step: it touches neither t's registers nor t's rseq area (the
//     kernel writes the area only on t's own transitions; a load or store
//     reaching an area makes the exploration start over without this:
//     Machine::area_accessed), and the two ways it can touch t (a membarrier
//     IPI, a tgkill signal) reach the same final states before and after the
//     step (sim/event_commute.cc). Other threads' events
//     (a preemption, migration, signal or IPI of their own) touch their own
//     thread and CPUs and the run queues, never t's registers, so they may
//     wait until after the step. An event on t is offered here as without the
//     reduction, and one left out here is equivalent to the same event after
//     the step (EventCommutesWithNextStep), which the next boundary offers.
//  C2 (invisibility): what an execution is judged and compared by is the
//     verdict, the symbols' memory, the threads' return values and
//     observations (sim/outcome.h), properties over memory, and the oracles'
//     order of memory accesses and kernel events per thread
//     (model/oracles.h); a register-only step changes none of them nor their
//     order; nor does an rseq area access (outcomes hold the symbols' memory,
//     not the areas). A step that ends the process (a failing assert, a call past the
//     depth limit: Machine::NextStepEndsProcess) is not thread-local, nor is
//     `observe`, exit (ret at depth 0) or sigreturn.
//  C3 (cycle proviso): a loop of register-only steps must not leave the
//     other threads out forever. A thread whose context repeats without a
//     write (Spinning) is never t. Stateful search: a revisit of a state on
//     the current path whose cycle has no fully expanded node (Node::full)
//     does not prune; that node is expanded fully instead
//     (ClosesReducedCycle), so every cycle of the reduced graph has a full
//     node (the stack proviso of Holzmann, Peled, Yannakakis 1996). DFS has
//     no visited set (an execution ends only at the step budget or a
//     detected spin), and its cycle pruning (ExploreOptions::prune_cycles)
//     prunes only a cycle with a full node (CycleProvisoHolds).
// DPOR does not use it: its persistent sets come from the races it finds.
// Machine::StateHash is meaningful only when every thread is IR.
bool AllThreadsIr(const Scenario& s) {
  for (const ThreadSpec& t : s.threads) {
    if (t.native) return false;
  }
  return true;
}

// True if no instruction of the program can touch another thread or CPU,
// block a thread, or end the process on its own (a failed assert ends only
// the execution): every thread is IR, at most 64 of them (one footprint bit
// each), and every instruction is computation, a memory access, a branch or
// call, an rseq operation, sched_yield (its own CPU's queue), getcpu, the
// clock, or an assert or observe. Such a thread's steps touch its own thread
// bit, the CPU it runs on and memory, and nothing else without an injected
// event (DoomedBySleep).
bool QuietProgram(const Scenario& s) {
  if (!AllThreadsIr(s) || s.threads.size() > 64) return false;
  for (const Instr& in : s.program.code) {
    switch (in.op) {
      case Op::kLi: case Op::kMov: case Op::kAdd: case Op::kSub: case Op::kAnd: case Op::kOr:
      case Op::kXor: case Op::kShl: case Op::kShr: case Op::kMul: case Op::kLa: case Op::kLd:
      case Op::kLd32: case Op::kSt: case Op::kSt32: case Op::kBeq: case Op::kBne: case Op::kBlt:
      case Op::kBge: case Op::kBltu: case Op::kBgeu: case Op::kJmp: case Op::kCall: case Op::kRet:
      case Op::kRseqLoad: case Op::kRseqAddr: case Op::kRseqArm: case Op::kSig: case Op::kCas:
      case Op::kXadd: case Op::kXchg: case Op::kFence: case Op::kSchedYield: case Op::kGetcpu:
      case Op::kAssert: case Op::kObserve: case Op::kNop: case Op::kClock: case Op::kWork:
        break;
      default:
        return false;
    }
  }
  return true;
}

bool MmCidObservable(const Scenario& s) {
  for (const ThreadSpec& t : s.threads) {
    if (t.native) return true;
  }
  for (const Instr& in : s.program.code) {
    if (in.op == Op::kRseqAddr) return true;
    if (in.op == Op::kRseqLoad && static_cast<RseqField>(in.aux) == RseqField::kMmCid) return true;
  }
  return false;
}

// Hash of a thread's user-visible local state (for spin detection), taken
// after every step of the thread (UpdateSpin). The registers go into four
// independent FNV-style lanes combined at the end: one chain of 16
// dependent multiplies was half of UpdateSpin's time. Compared only with
// the same thread's hashes in the same execution (equal contexts, equal
// hashes), so its value is nowhere recorded.
uint64_t ContextHash(const SimThread& th) {
  constexpr uint64_t kPrime = 0x100000001b3ull;
  uint64_t h = 0x84222325cbf29ce4ull ^ static_cast<uint64_t>(th.depth);
  for (int d = 0; d <= th.depth; ++d) {
    const Context& c = th.ctx[d];
    static_assert(std::tuple_size_v<decltype(c.r)> % 4 == 0, "registers in four lanes");
    uint64_t l0 = h, l1 = h ^ 0x9e3779b97f4a7c15ull, l2 = h ^ 0xbf58476d1ce4e5b9ull, l3 = h ^ 0x94d049bb133111ebull;
    for (size_t i = 0; i < c.r.size(); i += 4) {
      l0 = (l0 ^ static_cast<uint64_t>(c.r[i])) * kPrime;
      l1 = (l1 ^ static_cast<uint64_t>(c.r[i + 1])) * kPrime;
      l2 = (l2 ^ static_cast<uint64_t>(c.r[i + 2])) * kPrime;
      l3 = (l3 ^ static_cast<uint64_t>(c.r[i + 3])) * kPrime;
    }
    h = (l0 ^ std::rotl(l1, 16) ^ std::rotl(l2, 32) ^ std::rotl(l3, 48)) * kPrime;
    h = (h ^ (static_cast<uint64_t>(c.pc) << 8 | c.call_depth)) * kPrime;
    // The return addresses too: two calls of one function from different
    // places reach the same pc and registers without going round a loop.
    for (uint32_t i = 0; i < c.call_depth; ++i) h = (h ^ c.ret_stack[i]) * kPrime;
  }
  h = (h ^ th.pending ^ (static_cast<uint64_t>(th.blocked) << 32)) * kPrime;
  return h;
}

// Verdicts of an execution that the machine ended at a transition, killing
// every thread where it was (Machine::FailAssert, Machine::Kill).
bool EndsProcess(Verdict v) {
  return v == Verdict::kAssertFailed || v == Verdict::kSigsegv || v == Verdict::kKilled;
}

// Thrown out of an execution when the program turns out to read mm_cid
// (see Explore).
struct MmCidLoaded {};
// Thrown out of a DPOR execution when a plain store of the program wrote an
// rseq_cs word (see RseqCsWrittenByStores, Explore).
struct RseqCsStored {};

// A sleep-set entry: an alternative explored (here or at an ancestor, and
// independent of everything since) with its footprint.
using SleepEntry = WakeupEvent;

struct SpinMark {
  uint64_t ctx = 0;
  uint64_t writes = ~0ull;
};
struct SpinState : SpinMark {
  // The context hashes since the last change on the path, each with the
  // machine's step count then (one vector: a SpinState is copied at every
  // checkpoint and resume, and each vector copy cost a call).
  std::vector<std::pair<uint64_t, uint64_t>> seen;
  // A one-hash Bloom filter of `seen` (bit h >> 56 of 256): a hash whose bit
  // is clear is not in `seen`, without searching it (the search was half of
  // UpdateSpin's time in stateful runs).
  std::array<uint64_t, 4> seen_bits{};
  void ClearSeen() {
    seen.clear();
    seen_bits = {};
  }
  bool MaySee(uint64_t h) const { return (seen_bits[h >> 62] >> ((h >> 56) & 63)) & 1; }
  void See(uint64_t h, uint64_t steps) {
    seen.emplace_back(h, steps);
    seen_bits[h >> 62] |= uint64_t{1} << ((h >> 56) & 63);
  }
  bool spinning = false;
  uint64_t cycle_steps = 0;  // when spinning: steps since it was last in this state
};

struct Node {
  ThreadSet enabled;        // threads that may be chosen here
  ThreadSet backtrack;      // threads to explore here
  ThreadSet done;           // threads whose alternatives are exhausted
  int16_t thread = -1;      // thread being explored (alts[alt].thread: SelectAlt, SetPrefix, Load keep it so)
  int16_t first = -1;       // thread explored first here (TreeKey ranks)
  uint16_t alt = 0;         // its alternative being explored (index into alts)
  uint16_t alt_begin = 0, alt_end = 0;  // `thread`'s range in alts
  int16_t slots_thread = -1;  // DPOR event plans: the thread `slots` was counted for (-1: none yet)
  AltList alts;             // all enabled threads' alternatives, grouped by thread
  std::vector<SleepEntry> sleep;
  // DPOR: the wakeup tree of sequences still to explore from here, taken
  // before the backtrack set (null while empty: most nodes never have one).
  std::unique_ptr<WakeupTree> wut;
  Footprint fp;             // footprint of the transition taken on the current path
  uint64_t writes_before = 0;  // write transitions on the path before this node
  bool events_left = false;    // DPOR: the bound allows another event from here (EventsLeft)
  bool full = true;            // every running thread's alternatives were offered here (no ample set left one out)
  uint32_t slots = 0;          // DPOR event plans: the event slots offered to `thread` here (CountPosition)
  std::pair<uint64_t, uint64_t> state{};  // stateful search (dfs: before a sched_yield): Machine::StateHash here

  // Sizes the thread sets for a scenario of `nthreads` threads (once per node).
  void Resize(size_t nthreads) {
    enabled.Resize(nthreads);
    backtrack.Resize(nthreads);
    done.Resize(nthreads);
  }
  // Reuses the node's buffers for a new boundary.
  void Reset() {
    enabled.Clear();
    backtrack.Clear();
    done.Clear();
    thread = -1;
    first = -1;
    alt = alt_begin = alt_end = 0;
    alts.clear();
    sleep.clear();
    wut.reset();
    fp.Clear();
    writes_before = 0;
    events_left = false;
    slots_thread = -1;
  }
};

// Which nodes of the path hold which state, indexed by the state hash's first
// word: a table of slots (8 to 16 per node), each the head of a chain
// through the nodes whose first word falls there, newest first. CycleStart
// then looks only at the nodes of one chain - nearly every state a stateful
// search revisits has none - instead of scanning the whole path: the scan
// was 14 % of a stateful search of percpu_list PER=32 (depth 2,865) and grew
// with the depth.
//
// It indexes stack[0, indexed()) as they were when indexed: Node::state is
// written only when a node is pushed (Truncate first takes that node and the
// ones above it out) and the nodes are replaced wholesale only by a
// snapshot's Load and a subtree's SetPrefix (Clear). Sync(stack, len) indexes the nodes up to len.
// Nodes come and go in stack order, so a chain's head is its deepest node.
class PathStateIndex {
 public:
  void Clear() {
    heads_.assign(heads_.size(), kNone);
    firsts_.clear();
    next_.clear();
  }
  size_t indexed() const { return firsts_.size(); }
  // Takes nodes [len, indexed()) out.
  void Truncate(size_t len) {
    while (firsts_.size() > len) {
      heads_[Slot(firsts_.back())] = next_.back();
      firsts_.pop_back();
      next_.pop_back();
    }
  }
  // Indexes stack[0, len) (nodes past indexed() as they are now; nodes past
  // len taken out).
  template <class Stack>
  void Sync(const Stack& stack, size_t len) {
    Truncate(len);
    if (len * 8 > heads_.size()) Rehash(len);
    while (firsts_.size() < len) Push(stack[firsts_.size()].state.first);
  }
  // Calls f(k) for each indexed node k whose state's first word may be
  // `first` (every such node, and others of the same slot).
  template <class F>
  void ForEachCandidate(uint64_t first, F&& f) const {
    if (heads_.empty()) return;
    for (uint32_t k = heads_[Slot(first)]; k != kNone; k = next_[k]) f(k);
  }

 private:
  static constexpr uint32_t kNone = ~0u;
  size_t Slot(uint64_t first) const { return static_cast<size_t>(first ^ (first >> 32)) & (heads_.size() - 1); }
  void Push(uint64_t first) {
    uint32_t& head = heads_[Slot(first)];
    next_.push_back(head);
    head = static_cast<uint32_t>(firsts_.size());
    firsts_.push_back(first);
  }
  // Grows the table to at least 8 * len slots (re-chaining what is indexed).
  void Rehash(size_t len) {
    heads_.assign(std::bit_ceil(std::max<size_t>(len * 16, 1024)), kNone);
    const std::vector<uint64_t> firsts = std::move(firsts_);
    firsts_.clear();
    next_.clear();
    for (uint64_t f : firsts) Push(f);
  }
  std::vector<uint32_t> heads_;   // by slot: the deepest node of its chain
  std::vector<uint64_t> firsts_;  // by node: its state's first word when indexed
  std::vector<uint32_t> next_;    // by node: the next (shallower) node of its chain
};

// The machine at one boundary of the current path and the spin detector's
// state on entry there: an execution that backtracks to a node at or after
// `depth` continues from here (replaying the nodes in between) instead of
// from the initial state.
struct SavedBoundary {
  size_t depth = 0;
  MachineCheckpoint ck;
  std::vector<SpinState> spins;
};

class DfsEngine : public Scheduler {
 public:
  // mm_cid_readable: the program was seen loading mm_cid from memory
  // (Machine::mm_cid_loaded) even if MmCidObservable says it cannot.
  // rseq_cs_dependence: DPOR puts each transition's read of its thread's
  // rseq_cs and descriptor in its footprint (RseqCsWrittenByStores).
  DfsEngine(const Scenario& s, const ExploreOptions& o, Bounds bounds, bool mm_cid_readable,
            bool rseq_cs_dependence = false)
      : s_(s), o_(o), bounds_(bounds), dpor_(o.strategy == StrategyKind::kDpor),
        rseq_cs_dependence_(rseq_cs_dependence),
        stateful_(o.strategy == StrategyKind::kStateful),
        mm_cid_observable_(mm_cid_readable || MmCidObservable(s)),
        defer_events_(o.defer_events),
        plans_on_(dpor_ && bounds.max_events == 1),
        quiet_program_(QuietProgram(s)),
        prune_cycles_(o.prune_cycles && o.strategy == StrategyKind::kDfs && AllThreadsIr(s)),
        visited_(o.state_storage, o.bitstate_log2) {
    // The per-kind event counts matter to the future only for kinds with a
    // bound of their own (the total is always hashed).
    if (bounds.max_preemptions != kUnbounded) bounded_kinds_ |= 1u << static_cast<int>(DecisionKind::kPreempt);
    if (bounds.max_migrations != kUnbounded) bounded_kinds_ |= 1u << static_cast<int>(DecisionKind::kMigrate);
    if (bounds.max_signals != kUnbounded) bounded_kinds_ |= 1u << static_cast<int>(DecisionKind::kSignal);
    if (bounds.max_ipis != kUnbounded) bounded_kinds_ |= 1u << static_cast<int>(DecisionKind::kIpi);
    ResetPlans();
    plans_on_ = plans_on_ && NumberSignalSlots();
    new_slots_.assign(s.threads.size(), 0);
  }

  bool WantsFootprints() const override { return true; }
  // Stateful search hashes the state at every new node, DFS cycle pruning
  // before each sched_yield: the machine keeps memory's hash store by store.
  bool WantsStateHash() const override { return stateful_ || prune_cycles_; }
  const Placement* InitialPlacement() const override { return placement_; }

  // The initial placement of the executions Run explores next (nullptr: the
  // scenario's own), a choice before the first step. `fresh`: a new subtree
  // at the root (the path and its checkpoints belong to the previous
  // placement); the visited set is kept, so that states reached from
  // different placements are pruned once. Not fresh: the stack came from
  // Load for this placement.
  void SetPlacement(const Placement* p, bool fresh) {
    placement_ = p;
    if (!fresh) return;
    loaded_ = false;
    top_ = replay_len_ = 0;
    num_saved_ = 0;
    ResetPlans();
  }

  void BeginExecution(const Machine&) override {
    depth_ = 0;
    resumed_ = false;
    stopped_redundant_ = false;
    pruned_cycle_ = false;
    deadlock_ = false;
    path_writes_ = 0;
    local_.assign(s_.threads.size() * kSlots, 0);
    spins_.resize(s_.threads.size());
    for (SpinState& sp : spins_) {
      sp.ctx = 0;
      sp.writes = ~0ull;
      sp.ClearSeen();
      sp.spinning = false;
    }
    shadow_valid_ = false;
  }

  Decision Choose(const ChoiceView& view) override {
    const Machine& m = view.machine();
    // Stateful search at a new node: the state's hash first, so that the
    // visited set's slot is fetched while the transition is noted.
    std::pair<uint64_t, uint64_t> state{};
    const bool new_node = depth_ >= replay_len_;
    if (stateful_ && new_node) {
      state = m.StateHash(mm_cid_observable_, bounded_kinds_);
      if (!insert_state_) visited_.Prefetch(state);
    }
    // A resumed execution starts at a node whose incoming transition was
    // noted when the node was first reached.
    if (depth_ > 0 && !resumed_) NoteTransition(m);
    resumed_ = false;
    if (deadline_check_ && ++boundaries_ % kDeadlineEvery == 0 && deadline_check_()) {
      // Out of time (or interrupted) inside this execution: end it here; Run
      // neither counts it nor backtracks, so a snapshot resumes it.
      cut_short_ = true;
      return Decision::Stop();
    }
    if (!new_node) {
      Node& n = stack_[depth_];
      if (depth_ == prefix_states_ && depth_ < floor_) {
        n.state = NodeState(m);
        ++prefix_states_;
      }
      n.writes_before = path_writes_;
      if (WantsCheckpoint(n)) SaveBoundary(m, spins_);
      UpdateSpin(m, n);
      ++depth_;
      if (plans_on_) CountPosition(n, n.slots_thread == n.thread ? n.slots : OfferedSlots(m, n.thread));
      return ToDecision(m, n.alts[n.alt]);
    }
    // A new node.
    bool expand_fully = false;  // C3: this node closes a cycle of reduced nodes
    if (stateful_) {
      if (!(insert_state_ ? insert_state_(state) : visited_.Insert(state))) {
        if (FairCycle(m, state)) {
          deadlock_ = true;
          return Decision::Stop();
        }
        if (!ClosesReducedCycle(state)) {
          stopped_redundant_ = true;
          return Decision::Stop();
        }
        expand_fully = true;
      }
    } else if (prune_cycles_ && YieldAhead(m)) {
      state = m.StateHash(mm_cid_observable_, bounded_kinds_);
      if (FairCycle(m, state)) {
        deadlock_ = true;
        return Decision::Stop();
      }
      if (CycleProvisoHolds(state)) {
        stopped_redundant_ = pruned_cycle_ = true;
        return Decision::Stop();
      }
    }
    if (top_ == stack_.size()) stack_.emplace_back().Resize(s_.threads.size());
    Node& n = stack_[top_++];
    n.Reset();
    path_index_.Truncate(top_ - 1);  // the node's old state leaves the index
    n.state = state;
    n.writes_before = path_writes_;
    // Under an event plan no event is optional: each thread's next transition
    // is determined by its own state (see NextPlan).
    if (dpor_) n.events_left = (!plans_on_ || phase_ == PlanPhase::kTail) && EventsLeft(m, bounds_);
    if (dpor_ && depth_ > 0) {
      const Node& parent = stack_[depth_ - 1];
      for (const SleepEntry& e : parent.sleep) {
        if (!Dependent(e.fp, parent.fp)) n.sleep.push_back(e);
      }
      if (!guide_.Empty()) {
        n.wut = std::make_unique<WakeupTree>(std::move(guide_));
        guide_.Clear();
      }
    }
    // The spin state on entry, for a checkpoint here (decided once the
    // alternatives are known).
    const bool may_save = can_resume_ && CheckpointDue();
    spin_undo_.clear();
    UpdateSpin(m, n, may_save ? &spin_undo_ : nullptr);
    // Enabled threads: the running ones. A thread spinning without effect
    // keeps its event alternatives but loses its step.
    const int default_thread = m.cpu(m.default_cpu()).running;
    // dfs, stateful: the ample set, one thread's alternatives (AmpleThread),
    // unless the cycle proviso wants them all here.
    const int ample = dpor_ || expand_fully ? -1 : AmpleThread(m, default_thread);
    n.full = ample < 0 || !OtherThreadRuns(m, ample);
    for (int c = 0; c < m.num_cpus(); ++c) {
      const int t = m.cpu(c).running;
      if (t < 0 || (ample >= 0 && t != ample)) continue;
      const size_t before = n.alts.size();
      const bool spinning = Spinning(m, t);
      if (plans_on_ && !PositionCounted(t)) {
        n.alts.push_back({static_cast<int16_t>(t), DecisionKind::kStep, -1});
        new_slots_[t] = 0;
      } else {
        AppendAlternatives(m, t, bounds_, defer_events_ && !spinning, LoneRule(), n.alts);
        if (plans_on_) new_slots_[t] = spinning ? OfferedSlots(m, t) : SlotsOf(n.alts, before + 1);
      }
      if (plans_on_) ApplyPlan(t, before, n.alts);
      if (spinning && n.alts[before].kind == DecisionKind::kStep) {
        n.alts.erase(n.alts.begin() + static_cast<std::ptrdiff_t>(before));
      }
      if (quiet_program_ && phase_ == PlanPhase::kTail && !n.sleep.empty()) DropDoomedEvents(m, n, before);
      if (n.alts.size() > before) n.enabled.Add(t);
    }
    if (n.enabled.Empty()) {
      // Every running thread spins on memory nothing will change. If a thread
      // waits in a run queue, only the event bounds keep it from running (a
      // real kernel's tick would preempt the spinner): abandon the execution.
      // If none does, no schedule can make progress: a livelock.
      --top_;
      bool queued = false;
      for (int c = 0; c < m.num_cpus(); ++c) queued |= !m.cpu(c).queue.empty();
      if (queued) {
        stopped_redundant_ = true;
      } else {
        deadlock_ = true;
        livelock_cycle_ = "every running thread spins on memory that no thread will change: " + DescribeSpins(m);
      }
      return Decision::Stop();
    }
    // First choice: what the wakeup tree says, else a step (of the default
    // thread if possible), else an event.
    int first = dpor_ ? TakeWakeup(n) : -1;
    auto steps_first = [&](int t) {
      for (const Alt& a : n.alts) {
        if (a.thread == t) return a.kind == DecisionKind::kStep && !Asleep(n, a) && SelectThread(n, t);
      }
      return false;
    };
    if (first < 0 && default_thread >= 0 && n.enabled.Has(default_thread) && steps_first(default_thread)) {
      first = default_thread;
    }
    if (first < 0) {
      n.enabled.ForEach([&](int t) {
        if (first < 0 && steps_first(t)) first = t;
      });
    }
    if (first < 0) {
      n.enabled.ForEach([&](int t) {
        if (first < 0 && SelectThread(n, t)) first = t;
      });
    }
    if (first < 0) {
      // Sleep-set blocked: every continuation was explored elsewhere.
      --top_;
      stopped_redundant_ = true;
      return Decision::Stop();
    }
    n.first = static_cast<int16_t>(first);
    if (dpor_) {
      n.backtrack.Add(first);
    } else {
      n.backtrack.Assign(n.enabled);
    }
    if (may_save && n.alts.size() > 1) {
      SpinsBefore(spin_undo_, entry_spins_);
      SaveBoundary(m, entry_spins_);
    }
    ++depth_;
    if (plans_on_) CountPosition(n, new_slots_[n.thread]);
    return ToDecision(m, n.alts[n.alt]);
  }

  void EndExecution(const Machine& m) override {
    // The reductions assumed mm_cid unreadable and the program read it:
    // everything explored so far may have merged what it can tell apart.
    // Likewise the ample sets (dfs, stateful) assumed that only a thread's
    // rseq_load and rseq_arm reach its rseq area, and a load or store did.
    if (!mm_cid_observable_ && (m.mm_cid_loaded() || (!dpor_ && m.area_accessed()))) throw MmCidLoaded{};
    RseqCsWrittenByStores(m);
    // An execution cut short keeps the whole path: the nodes past the cut
    // still hold the search's backtracking state.
    if (cut_short_) return;
    if (depth_ > 0 && depth_ <= top_) NoteTransition(m);
    plan_fired_ = m.total_events() > 0;
    if (plans_on_ && phase_ == PlanPhase::kDiscover && !stopped_redundant_ && !cut_short_) {
      for (size_t k = 0; k < local_.size(); ++k) min_len_[k] = std::min(min_len_[k], local_[k]);
    }
    // Nodes past the end (from a Stop before pushing) are not on the path.
    top_ = std::min(top_, depth_);
  }

  // Runs the whole exploration (from the loaded stack after Load).
  void Run(Simulator& sim, ExploreResult& res, const std::function<bool(ExecutionResult&)>& after) {
    ExecutionResult r;
    if (!loaded_) {
      replay_len_ = 0;
      top_ = 0;
    }
    can_resume_ = sim.can_resume();
    live_ = &r;
    for (;;) {
      // Checkpoints past the node backtracked to are of another path.
      while (num_saved_ > 0 && saved_[num_saved_ - 1].depth >= replay_len_) --num_saved_;
      cut_short_ = false;
      const size_t run_start = num_saved_ > 0 ? saved_[num_saved_ - 1].depth : 0;
      if (num_saved_ > 0) {
        // Continue from the deepest checkpoint at or before the node
        // backtracked to (saved in an execution that `r` holds the path of),
        // replaying the nodes in between, instead of replaying the path.
        const SavedBoundary& b = saved_[num_saved_ - 1];
        depth_ = b.depth;
        stopped_redundant_ = false;
        pruned_cycle_ = false;
        deadlock_ = false;
        path_writes_ = stack_[b.depth].writes_before;
        spins_ = b.spins;
        local_.assign(s_.threads.size() * kSlots, 0);
        for (size_t k = 0; plans_on_ && k < b.depth; ++k) {
          for (uint32_t bits = stack_[k].slots; bits != 0; bits &= bits - 1) {
            ++local_[stack_[k].thread * kSlots + std::countr_zero(bits)];
          }
        }
        resumed_ = true;
        shadow_.assign(b.ck.memory.begin(), b.ck.memory.end());
        shadow_valid_ = true;
        sim.ResumeInto(b.ck, *this, r);
      } else {
        sim.RunInto(*this, r);
      }
      if (cut_short_) {
        // Stopped inside the execution by the deadline or an interrupt: the
        // path so far is a prefix of this execution's; a snapshot of it
        // resumes the execution.
        after_check_();
        if (snapshot_) snapshot_(/*more=*/true, /*forced=*/true);
        return;
      }
      if (deadlock_) {
        r.stopped = false;
        // Replaying this schedule runs the spinners to the step budget,
        // where the machine finds no progress: kLivelock too.
        r.verdict = Verdict::kLivelock;
        r.message = livelock_cycle_;
      }
      ++res.executions;
      UpdateCheckpointFloor(run_start);
      res.max_depth = std::max<uint64_t>(res.max_depth, depth_);
      // Before any oracle's verdict: the machine ended the process at the
      // last transition (an oracle judges a finished execution).
      const bool ended_process = !r.stopped && EndsProcess(r.verdict);
      bool go;
      if (r.stopped || (plans_on_ && phase_ != PlanPhase::kDiscover && !plan_fired_)) {
        // (An execution of an event plan that never reached the plan's
        // event is one of the plan-free executions explored first.)
        ++res.redundant;
        res.cycles_pruned += pruned_cycle_;
        go = after_check_();
      } else {
        go = after(r);
      }
      // A stop for a failure is final; any other stop is snapshotted after
      // this execution's analysis, so that resuming continues with the next.
      if (!go && !(snapshot_ && res.stop_reason != "failure")) return;
      if (dpor_) {
        AnalyzeRaces();
        if (ended_process) RaceWithPendingSteps();
      }
      const bool more = Backtrack() || NextPlan();
      if (snapshot_) snapshot_(more, /*forced=*/!go);
      if (!go) return;
      if (!more) {
        res.complete = true;
        return;
      }
    }
  }

  // Snapshot of the search (between executions, after Backtrack): the path's
  // nodes with their alternatives, backtrack/done/sleep sets and wakeup trees,
  // the pending wakeup subtree (guide_), and the visited set.
  void Save(SnapshotWriter& w) const {
    w.U64(top_);
    for (size_t i = 0; i < top_; ++i) {
      const Node& n = stack_[i];
      for (const ThreadSet* set : {&n.enabled, &n.backtrack, &n.done}) {
        for (size_t i = 0; i < set->words(); ++i) w.U64(set->word(i));
      }
      w.I64(n.thread);
      w.U64(n.alt);
      w.U64(n.alt_begin);
      w.U64(n.alt_end);
      w.U64(n.alts.size());
      for (const Alt& a : n.alts) PutAlt(w, a);
      w.U64(n.sleep.size());
      for (const SleepEntry& e : n.sleep) {
        PutAlt(w, e.alt);
        w.Put(e.fp);
      }
      if (n.wut) {
        PutTree(w, *n.wut);
      } else {
        w.U64(0);
      }
      w.Put(n.fp);
      w.U64(n.writes_before);
      w.U64(n.events_left ? 1 : 0);
    }
    PutTree(w, guide_);
    w.U64(visited_.size());
    visited_.ForEach([&w](const StateSet::Key& k) {
      w.U64(k.first);
      w.U64(k.second);
    });
    w.U64(static_cast<uint64_t>(phase_));
    for (const uint32_t len : min_len_) w.U64(len);
    w.U64(tail_ ? 1 : 0);
    w.U64(found_.size());
    for (const EventPlan& p : found_) PutPlan(w, p);
    w.U64(plans_.size());
    for (const EventPlan& p : plans_) PutPlan(w, p);
    w.U64(plan_);
  }

  // Restores what Save wrote; Run then continues with the next execution.
  void Load(SnapshotReader& rd) {
    const uint64_t nthreads = s_.threads.size();
    // An empty stack: a placement not started yet (the visited set follows).
    top_ = rd.Count(8);
    path_index_.Clear();
    stack_.clear();
    stack_.resize(top_);
    for (Node& n : stack_) {
      n.Resize(nthreads);
      for (ThreadSet* set : {&n.enabled, &n.backtrack, &n.done}) {
        for (size_t i = 0; i < set->words(); ++i) set->set_word(i, rd.U64());
      }
      const int64_t thread = rd.I64();
      n.alt = static_cast<uint16_t>(rd.Small(UINT16_MAX));
      n.alt_begin = static_cast<uint16_t>(rd.Small(UINT16_MAX));
      n.alt_end = static_cast<uint16_t>(rd.Small(UINT16_MAX));
      n.alts.resize(rd.Count(3));
      for (Alt& a : n.alts) a = GetAlt(rd, nthreads);
      n.sleep.resize(rd.Count(8));
      for (SleepEntry& e : n.sleep) {
        e.alt = GetAlt(rd, nthreads);
        e.fp = rd.GetFootprint();
      }
      if (WakeupTree t = GetTree(rd, nthreads); !t.Empty()) n.wut = std::make_unique<WakeupTree>(std::move(t));
      n.fp = rd.GetFootprint();
      n.writes_before = rd.U64();
      n.events_left = rd.Small(1) != 0;
      if (thread < 0 || static_cast<uint64_t>(thread) >= nthreads || n.alt_begin > n.alt || n.alt >= n.alt_end ||
          n.alt_end > n.alts.size() || n.alts[n.alt].thread != thread) {
        rd.Corrupt("inconsistent search node");
      }
      n.thread = static_cast<int16_t>(thread);
    }
    guide_ = GetTree(rd, nthreads);
    visited_.Clear();
    const uint64_t states = rd.Count(2);
    for (uint64_t i = 0; i < states; ++i) {
      const uint64_t a = rd.U64();
      visited_.Insert({a, rd.U64()});
    }
    phase_ = static_cast<PlanPhase>(rd.Small(2));
    for (uint32_t& len : min_len_) len = static_cast<uint32_t>(rd.Small(UINT32_MAX));
    tail_ = rd.Small(1) != 0;
    found_.clear();
    for (uint64_t k = rd.Count(4); k > 0; --k) found_.insert(GetPlan(rd));
    plans_.resize(rd.Count(4));
    for (EventPlan& p : plans_) p = GetPlan(rd);
    plan_ = rd.Small(UINT32_MAX);
    if ((phase_ == PlanPhase::kPlans && plan_ >= plans_.size()) ||
        (!plans_on_ && (phase_ != PlanPhase::kDiscover || !found_.empty()))) {
      rd.Corrupt("inconsistent event plans");
    }
    replay_len_ = top_;
    loaded_ = top_ > 0 || phase_ != PlanPhase::kDiscover;
  }

  bool loaded() const { return loaded_; }
  std::function<bool()> after_check_;
  // Polled every kDeadlineEvery boundaries inside an execution; true ends the
  // exploration there (time limit, interrupt), leaving cut_short() set.
  std::function<bool()> deadline_check_;
  static constexpr uint64_t kDeadlineEvery = 1024;
  bool cut_short() const { return cut_short_; }
  // The budget for machine checkpoints, in bytes (at least one is kept).
  void set_checkpoint_budget(uint64_t bytes) { checkpoint_budget_ = bytes; }
  // Bytes held by the checkpoints and by the path's nodes (an estimate from
  // the buffers' capacities), for the memory limit.
  uint64_t checkpoint_bytes() const {
    uint64_t total = 0;
    for (const SavedBoundary& b : saved_) total += CheckpointBytes(b);
    return total;
  }
  uint64_t path_bytes() const {
    uint64_t total = stack_.capacity() * sizeof(Node);
    for (const Node& n : stack_) {
      if (n.alts.capacity() > kInlineAlts) total += n.alts.capacity() * sizeof(Alt);
      total += n.sleep.capacity() * sizeof(SleepEntry);
      if (n.wut) total += sizeof(WakeupTree) + n.wut->Bytes();
    }
    return total + guide_.Bytes();
  }
  // Executions between two checks of the memory limit (a power of two): 64,
  // or more on a long path, so that adding up the path's and the
  // checkpoints' buffers (a walk over both: 8 % of a stateful search of
  // percpu_list PER=32, growing with the depth) costs at most about 8 nodes
  // per execution.
  uint64_t memory_check_period() const { return std::bit_ceil(std::max<uint64_t>(64, path_nodes() / 8)); }
  // The path's nodes with buffers (the longest path so far) and checkpoints.
  uint64_t path_nodes() const { return stack_.size() + saved_.size(); }
  // Current distance between checkpoints, in nodes: the budget's interval
  // (grows with the path) or, if larger, the floor that balances saving
  // against replaying (UpdateCheckpointFloor).
  size_t checkpoint_interval() const { return std::max(checkpoint_interval_, checkpoint_floor_); }
  // Set to take snapshots: called after each execution's backtracking with
  // `more` (false: this level is exhausted) and `forced` (exploration stops).
  std::function<void(bool more, bool forced)> snapshot_;
  uint64_t states() const { return visited_.size(); }
  uint64_t state_bytes() const { return visited_.bytes(); }
  double omission_estimate() const { return visited_.OmissionEstimate(); }
  const Schedule* last_schedule = nullptr;

  // --- Subtree search (model/subtree.h; model/parallel.cc's work-stealing) ---
  // Shared visited set of stateful search (unset: visited_).
  std::function<bool(const StateSet::Key&)> insert_state_;
  // Makes the nodes of `p` the fixed top of the stack: Run explores the
  // subtree under them and Backtrack never pops them.
  void SetPrefix(const TreePrefix& p) {
    path_index_.Clear();
    stack_.clear();
    stack_.resize(p.size());
    prefix_ranks_.clear();
    for (size_t i = 0; i < p.size(); ++i) {
      Node& n = stack_[i];
      n.Resize(s_.threads.size());
      n.alts.push_back({p[i].thread, p[i].kind, p[i].arg});
      n.thread = n.first = p[i].thread;
      n.alt_end = 1;
      n.full = p[i].full;
      n.enabled.Add(n.thread);
      n.backtrack.Add(n.thread);
      prefix_ranks_.push_back(p[i].rank);
    }
    top_ = replay_len_ = floor_ = p.size();
    prefix_states_ = 0;  // Choose records them on the first replay of the prefix
    loaded_ = true;
    plans_on_ = false;  // a subtree's prefix is fixed: no plan may start over from the root
  }
  // SubtreeSearch::GiveAway (between executions; not for DPOR).
  std::optional<TreePrefix> GiveAway() {
    for (size_t i = floor_; i < top_; ++i) {
      Node& n = stack_[i];
      const std::optional<size_t> k = LastUnexplored(n);
      if (!k) continue;
      TreePrefix p;
      p.reserve(i + 1);
      for (size_t j = 0; j < i; ++j) p.push_back(ChoiceAt(j, stack_[j].alt));
      p.push_back(ChoiceAt(i, *k));
      n.alts.erase(n.alts.begin() + static_cast<std::ptrdiff_t>(*k));
      if (*k < n.alt_begin) {
        --n.alt_begin;
        --n.alt;
        --n.alt_end;
      } else if (*k < n.alt_end) {
        --n.alt_end;
      }
      return p;
    }
    return std::nullopt;
  }
  // The ranks of the current path's alternatives (SubtreeSearch::LeafKey).
  TreeKey LeafKey() const {
    TreeKey key(prefix_ranks_.begin(), prefix_ranks_.end());
    for (size_t i = floor_; i < top_; ++i) key.push_back(Rank(stack_[i], stack_[i].alt));
    return key;
  }

 private:
  // Alternative k's position in the order Choose and Backtrack explore a
  // DFS node's alternatives: the first thread's, then the others' by
  // increasing thread id, each thread's in alts order.
  static uint32_t Rank(const Node& n, size_t k) {
    const int16_t t = n.alts[k].thread;
    size_t begin = 0;
    while (n.alts[begin].thread != t) ++begin;
    const uint32_t thread_rank = t == n.first ? 0 : static_cast<uint32_t>(t) + 1;
    return thread_rank << 16 | static_cast<uint32_t>(k - begin);
  }
  TreeChoice ChoiceAt(size_t depth, size_t k) const {
    const Alt& a = stack_[depth].alts[k];
    return {a.thread, a.kind, a.arg, depth < floor_ ? prefix_ranks_[depth] : Rank(stack_[depth], k),
            stack_[depth].full};
  }
  // The index of n's last alternative in that order not yet explored.
  static std::optional<size_t> LastUnexplored(const Node& n) {
    std::optional<size_t> last;
    n.backtrack.ForEach([&](int u) {
      if (u == n.thread || !n.enabled.Has(u) || n.done.Has(u)) return;
      for (size_t k = 0; k < n.alts.size(); ++k) {
        if (n.alts[k].thread == u) last = k;  // ForEach goes by increasing id
      }
    });
    if (!last && n.alt + 1 < n.alt_end) last = n.alt_end - 1u;
    return last;
  }

  // The tail's events that could only end sleep-set blocked (issue 18).
  // In the tail (K=1: an event here is the execution's only one) an event a
  // of thread t at node n is dropped when n's sleep set holds the step u of
  // another thread t_u that commutes with a and with every transition that
  // can follow it: u touches no memory and no mm_cid, and its thread and
  // CPU bits miss those of every other live thread (and a migration's
  // destination). Under QuietProgram no step of another thread reaches
  // beyond its own thread bit, its CPU (and a thread queued there), memory
  // and mm_cid, and after a no event can come; so u stays asleep and
  // enabled (nothing touches t_u) in every execution through a, and each of
  // them ends with u the only transition left, asleep: sleep-set blocked
  // (a step limit or a failure on the way is met by the same transitions
  // after u, which u's own subtree explores). On percpu_list the thread that
  // finished its work first waits at its exit (u) while the other drains
  // the lists: every preemption, signal and IPI of the drainer there was
  // such an execution (1,548 of 7,432 at PER=16). Keeps the thread's
  // alternatives non-empty (a spinning thread keeps its events).
  void DropDoomedEvents(const Machine& m, Node& n, size_t before) {
    if (n.alts.size() <= before + 1 || n.alts[before].kind != DecisionKind::kStep) return;
    const int t = n.alts[before].thread;
    uint64_t live = 0;
    for (int v = 0; v < m.num_threads(); ++v) {
      const ThreadState st = m.thread(v).state;
      if (st == ThreadState::kExited) continue;
      if (st != ThreadState::kRunnable) return;
      live |= uint64_t{1} << v;
    }
    auto doomed = [&](const Alt& a) {
      for (const SleepEntry& u : n.sleep) {
        const int tu = u.alt.thread;
        if (u.alt.kind != DecisionKind::kStep || tu == t || u.fp.HasMemory() || u.fp.mm_cid) continue;
        uint64_t cpus = a.kind == DecisionKind::kMigrate ? uint64_t{1} << a.arg : 0;
        for (int v = 0; v < m.num_threads(); ++v) {
          if (v != tu && ((live >> v) & 1)) cpus |= uint64_t{1} << m.thread(v).cpu;
        }
        if ((u.fp.threads & (live & ~(uint64_t{1} << tu))) == 0 && (u.fp.cpus & cpus) == 0) return true;
      }
      return false;
    };
    const auto end = std::remove_if(n.alts.begin() + static_cast<std::ptrdiff_t>(before) + 1, n.alts.end(), doomed);
    n.alts.erase(end, n.alts.end());
  }

  // Selects thread t at node n with its first awake alternative; false if all asleep.
  bool SelectThread(Node& n, int t) {
    uint16_t b = 0;
    while (b < n.alts.size() && n.alts[b].thread != t) ++b;
    for (uint16_t i = b; i < n.alts.size() && n.alts[i].thread == t; ++i) {
      if (!Asleep(n, n.alts[i])) {
        SelectAlt(n, i);
        return true;
      }
    }
    return false;
  }
  // Selects alternative i at node n (and its thread's range of alternatives).
  static void SelectAlt(Node& n, uint16_t i) {
    const int16_t t = n.alts[i].thread;
    uint16_t b = i, e = i;
    while (b > 0 && n.alts[b - 1].thread == t) --b;
    while (e < n.alts.size() && n.alts[e].thread == t) ++e;
    n.thread = t;
    n.alt_begin = b;
    n.alt_end = e;
    n.alt = i;
  }

  // DPOR: takes the leftmost alternative of n's wakeup tree that can be taken
  // here (offered and awake), selects it and keeps its subtree as guide_ for
  // the next node; returns its thread, or -1 when the tree is used up. The
  // rest of that thread's alternatives follow it (Backtrack), so injected
  // events, where they are offered (K>=2; at K=1 under a plan only the plan's
  // own, and in the tail: see NextPlan), keep their conservative treatment:
  // every alternative of a thread is tried wherever the thread is. An
  // alternative not offered here (an
  // event deferred, or past a bound) puts its thread in the backtrack set
  // instead (every enabled thread if it is not running), as the source-set
  // rule did.
  int TakeWakeup(Node& n) {
    while (n.wut && !n.wut->Empty()) {
      WakeupTree sub;
      const WakeupEvent ev = n.wut->PopFront(sub);
      const int t = ev.alt.thread;
      if (n.done.Has(t)) continue;
      const auto it = std::find(n.alts.begin(), n.alts.end(), ev.alt);
      if (it == n.alts.end()) {
        if (n.enabled.Has(t)) {
          n.backtrack.Add(t);
        } else {
          n.enabled.ForEach([&n](int u) { n.backtrack.Add(u); });
        }
        continue;
      }
      if (Asleep(n, *it)) continue;
      SelectAlt(n, static_cast<uint16_t>(it - n.alts.begin()));
      guide_ = std::move(sub);
      return t;
    }
    n.wut.reset();
    return -1;
  }

  // --- Event plans: DPOR at one injected event (issue 18) ---
  //
  // At K=1 an injected event hits one thread t: a preemption, migration,
  // signal or membarrier IPI acts on t (its registers, IP and rseq area) and
  // on the run queues of t's CPU (and of a migration's destination), never on
  // another thread's registers. Where AppendAlternatives offers it depends on
  // t's own state only (the bound, and events only where they can matter:
  // sim/event_commute.cc). So an event is named by its thread, its slot
  // (SlotOf: preemption, migration, IPI, each signal) and its position: how
  // many of t's boundaries before it offered that slot (CountPosition). Every
  // execution with the event is an execution of the program in which t's
  // transition at that position is the event: the plan (t, slot, position,
  // migration CPU). Instead of offering every event at every boundary of
  // every path (nothing races with an absent event, so DPOR could only try
  // them all, and most executions after them ended sleep-set blocked: 90% on
  // percpu_list PER=4, 98% at PER=32; all of them in branches that took an
  // event of the thread already explored at the same position elsewhere),
  // the search
  //   1. explores the executions without events (kDiscover: events are not
  //      offered; each one AppendAlternatives would offer is noted as a plan),
  //   2. for each plan, explores the program in which t's transition at the
  //      plan's boundary is the plan's event (each preemption target the run
  //      queue offers there is one alternative of t) and every other
  //      transition is a step (kPlans): threads deterministic but for those
  //      targets, so the thread-step optimal DPOR above applies unchanged
  //      (the event's footprint touches t and the CPUs, so a race with it is
  //      reversed like any other) with no optional event (events_left false),
  //   3. explores events at positions that some discovery execution run to
  //      its end did not reach (min_len_) with the conservative rule (kTail,
  //      see TakeWakeup): a plan there would not fire in the executions that
  //      end before it, and each of those would be a repeat of step 1.
  // Complete for the bound K=1: an execution X with one event E on t has an
  // event-free prefix up to E, which extends to a maximal event-free
  // execution; step 1 explores its Mazurkiewicz trace through an equivalent
  // execution, in which t runs its transitions in the same order with the
  // same local states, so passes E's boundary with E offered: E's plan is
  // noted, and step 2 (or 3, by position) explores X's trace under it. The
  // bound counts the one event as the plain search does (no reordering
  // changes how many events an execution has, unlike a preemption bound's
  // count of context switches: Coons, Musuvathi, McKinley, OOPSLA'13), and
  // plans differ in (t, slot, position, CPU), so no execution with an event
  // is explored under two plans. An execution of a plan whose event never
  // fires (its thread ends or stays queued first) has no event: it repeats
  // one of step 1's, is counted as redundant and not checked again. K>=2
  // keeps the conservative rule throughout.
  struct EventPlan {
    int16_t thread = 0;
    uint8_t slot = 0;  // SlotOf the event
    uint32_t pos = 0;  // the thread's count of boundaries offering the slot before the event
    int16_t arg = -1;  // a migration's CPU; -1 for the other kinds
    friend auto operator<=>(const EventPlan&, const EventPlan&) = default;
  };
  // Event slots: kinds whose offer (EventCommutesWithNextStep) may differ at
  // one boundary: a preemption (every target), a migration (every CPU), an
  // IPI, and each signal with a handler (signal_slot_; at most kSlots - 3 of
  // them, else the plans are off).
  static constexpr int kSlots = 32;
  uint8_t SlotOf(const Alt& a) const {
    switch (a.kind) {
      case DecisionKind::kPreempt: return 0;
      case DecisionKind::kMigrate: return 1;
      case DecisionKind::kIpi: return 2;
      default: return signal_slot_[static_cast<size_t>(a.arg)];
    }
  }
  // Numbers the signals with a handler from slot 3; false if there are too many.
  bool NumberSignalSlots() {
    signal_slot_.fill(0);
    uint8_t next = 3;
    for (const SignalSpec& sg : s_.signals) {
      if (sg.handler < 0 || sg.signo < 0 || sg.signo > kMaxSignal || signal_slot_[sg.signo] != 0) continue;
      if (next == kSlots) return false;
      signal_slot_[sg.signo] = next++;
    }
    return true;
  }
  uint32_t& Position(int t, uint8_t slot) { return local_[static_cast<size_t>(t) * kSlots + slot]; }
  EventPlan PlanOf(const Alt& a) {
    const uint8_t slot = SlotOf(a);
    return {a.thread, slot, Position(a.thread, slot), a.kind == DecisionKind::kMigrate ? a.arg : int16_t{-1}};
  }
  // Notes the transition chosen at n: `slots`, the slots offered to its
  // thread at this boundary (OfferedSlots), count one more position each.
  void CountPosition(Node& n, uint32_t slots) {
    const int t = n.thread;
    n.slots = slots;
    n.slots_thread = n.thread;
    for (uint32_t bits = slots; bits != 0; bits &= bits - 1) ++Position(t, static_cast<uint8_t>(std::countr_zero(bits)));
  }
  // The event slots of alts[from, end).
  uint32_t SlotsOf(const AltList& alts, size_t from) const {
    uint32_t slots = 0;
    for (size_t k = from; k < alts.size(); ++k) slots |= uint32_t{1} << SlotOf(alts[k]);
    return slots;
  }
  // The slots offered to thread t here, by the bounds and events only where
  // they can matter (a spinning thread's included: Choose offers it its
  // events without deferring them), if its positions are counted.
  uint32_t OfferedSlots(const Machine& m, int t) {
    if (!PositionCounted(t)) return 0;
    scratch_.clear();
    AppendAlternatives(m, t, bounds_, defer_events_, /*lone=*/false, scratch_);
    return SlotsOf(scratch_, 1);
  }
  // Whose positions matter: under a plan only its thread's (the others'
  // events are never offered, so Choose gives them their step alone);
  // while discovering and in the tail every thread's.
  bool PositionCounted(int t) const { return phase_ != PlanPhase::kPlans || plans_[plan_].thread == t; }
  // Whether events are also left out before a lone thread's memory step
  // (Machine::EventCommutesWithLoneMemoryStep): not while discovering or
  // under a plan, whose positions must not depend on other threads.
  bool LoneRule() const { return !plans_on_ || phase_ == PlanPhase::kTail; }
  // Restricts thread t's alternatives out[before, end) (its step, then the
  // events offered) to what the phase lets t do here: while discovering,
  // its step (noting the events as plans); under a plan, the plan's event
  // (every preemption target) if t is at the plan's position, else the step;
  // in the tail, the events at positions from min_len_ on, and the step.
  void ApplyPlan(int t, size_t before, AltList& out) {
    size_t w = before + 1;
    switch (phase_) {
      case PlanPhase::kDiscover:
        for (size_t k = before + 1; k < out.size(); ++k) found_.insert(PlanOf(out[k]));
        break;
      case PlanPhase::kTail:
        for (size_t k = before + 1; k < out.size(); ++k) {
          const uint8_t slot = SlotOf(out[k]);
          if (Position(t, slot) >= min_len_[static_cast<size_t>(t) * kSlots + slot]) out[w++] = out[k];
        }
        break;
      case PlanPhase::kPlans:
        if (plans_[plan_].thread != t) break;
        for (size_t k = before + 1; k < out.size(); ++k) {
          if (PlanOf(out[k]) == plans_[plan_]) out[w++] = out[k];
        }
        out.resize(w);
        if (w > before + 1) out.erase(out.begin() + static_cast<std::ptrdiff_t>(before));  // the event, not the step
        return;
    }
    out.resize(w);
  }
  // After the executions of a phase (or of one plan) are exhausted: starts
  // the next plan, or the tail, from an empty path; false when done.
  bool NextPlan() {
    if (!plans_on_) return false;
    bool tail = false;
    switch (phase_) {
      case PlanPhase::kDiscover:
        plans_.clear();
        for (const EventPlan& p : found_) {
          if (p.pos < min_len_[static_cast<size_t>(p.thread) * kSlots + p.slot]) {
            plans_.push_back(p);
          } else {
            tail = true;
          }
        }
        found_.clear();
        phase_ = PlanPhase::kPlans;
        plan_ = 0;
        tail_ = tail;
        break;
      case PlanPhase::kPlans:
        ++plan_;
        break;
      case PlanPhase::kTail:
        ResetPlans();
        return false;
    }
    if (plan_ >= plans_.size()) {
      if (!tail_) {
        ResetPlans();
        return false;
      }
      phase_ = PlanPhase::kTail;
    }
    top_ = replay_len_ = 0;
    num_saved_ = 0;
    guide_.Clear();
    return true;
  }
  // Every plan explored: the next placement starts with its own discovery.
  void ResetPlans() {
    phase_ = PlanPhase::kDiscover;
    found_.clear();
    plans_.clear();
    plan_ = 0;
    tail_ = false;
    min_len_.assign(s_.threads.size() * kSlots, UINT32_MAX);
  }
  void PutPlan(SnapshotWriter& w, const EventPlan& p) const {
    w.U64(static_cast<uint64_t>(p.thread));
    w.U64(p.pos);
    w.U64(p.slot);
    w.I64(p.arg);
  }
  EventPlan GetPlan(SnapshotReader& rd) const {
    EventPlan p;
    p.thread = static_cast<int16_t>(rd.Small(s_.threads.size() - 1));
    p.pos = static_cast<uint32_t>(rd.Small(UINT32_MAX));
    p.slot = static_cast<uint8_t>(rd.Small(kSlots - 1));
    const int64_t arg = rd.I64();
    if (arg < -1 || arg > INT16_MAX) rd.Corrupt("event plan out of range");
    p.arg = static_cast<int16_t>(arg);
    return p;
  }

  // Sparse checkpoints. The current path's checkpoints are saved_[0,
  // num_saved_), by increasing depth, at nodes with alternatives (the others
  // are never backtracked to) at least checkpoint_interval() nodes apart:
  // the larger of the floor that balances saving against replaying
  // (UpdateCheckpointFloor) and the budget's interval. When
  // they outgrow the budget, the interval doubles and every other one is
  // dropped: memory stays within the budget whatever the path's length, and
  // an execution replays at most about an interval's nodes after resuming.
  bool CheckpointDue() const {
    return num_saved_ == 0 || depth_ >= saved_[num_saved_ - 1].depth + checkpoint_interval();
  }
  // After an execution that resumed at depth `start` (0: from the initial
  // state): sets the checkpoints' least spacing, checkpoint_floor_, from the
  // nodes an execution adds (a moving average over the last 8 or so). A
  // checkpoint costs a copy of the machine (Machine::Save: the data memory,
  // every live context, the spin histories) at a node, to a buffer that is
  // cold by then; a checkpoint further back costs replaying the nodes in
  // between once per execution that resumes there. With F new nodes per
  // execution and a save costing about as much as replaying R nodes, an
  // interval of k costs F/k saves plus k/2 replayed nodes per execution,
  // least at k = sqrt(2 R F). Taking R = 1 (the engine's per-node work, not
  // the interpreter, is most of a replayed node's cost; a save's memory copy
  // into a cold buffer is of the same order) gives sqrt(2 F): on
  // percpu_list PER=32 under DPOR (F about 2,800: most executions of an
  // event plan start from the root) a checkpoint every ~75 nodes instead of
  // at every node with alternatives; on a stateful search (F of a few nodes)
  // every node or two, as before. The spacing decides only where an
  // execution resumes, never which executions run (ExploreCost tests).
  void UpdateCheckpointFloor(size_t start) {
    const uint64_t fresh = depth_ > start ? depth_ - start : 0;
    new_nodes_avg16_ = new_nodes_avg16_ - new_nodes_avg16_ / 8 + fresh * 2;  // 16 x the average
    const uint64_t two_f = new_nodes_avg16_ / 8;
    checkpoint_floor_ = std::max<size_t>(1, static_cast<size_t>(std::sqrt(static_cast<double>(two_f))));
  }
  bool WantsCheckpoint(const Node& n) const { return can_resume_ && n.alts.size() > 1 && CheckpointDue(); }
  static uint64_t CheckpointBytes(const SavedBoundary& b) {
    uint64_t spins = b.spins.capacity() * sizeof(SpinState);
    for (const SpinState& sp : b.spins) spins += sp.seen.capacity() * sizeof(sp.seen[0]);
    return sizeof(SavedBoundary) + b.ck.memory.capacity() + b.ck.threads.capacity() * sizeof(SimThread) +
           b.ck.cpus.capacity() * sizeof(SimCpu) + b.ck.out.capacity() * sizeof(MachineCheckpoint::Out) + spins;
  }
  void SaveBoundary(const Machine& m, const std::vector<SpinState>& spins) {
    if (num_saved_ == saved_.size()) saved_.emplace_back();
    SavedBoundary& b = saved_[num_saved_++];
    b.depth = depth_;
    b.spins = spins;
    m.Save(b.ck);
    if (num_saved_ < 2 || num_saved_ * CheckpointBytes(b) <= checkpoint_budget_) return;
    checkpoint_interval_ = 2 * checkpoint_interval();
    size_t kept = 1;
    for (size_t i = 1; i < num_saved_; ++i) {
      if (saved_[i].depth >= saved_[kept - 1].depth + checkpoint_interval_) std::swap(saved_[kept++], saved_[i]);
    }
    num_saved_ = kept;
    saved_.resize(num_saved_);  // frees the dropped checkpoints' buffers
  }

  static void PutAlt(SnapshotWriter& w, const Alt& a) {
    w.U64(static_cast<uint64_t>(a.thread));
    w.U64(static_cast<uint64_t>(a.kind));
    w.I64(a.arg);
  }
  static void PutTree(SnapshotWriter& w, const WakeupTree& t) {
    w.U64(t.NumChildren());
    t.ForEachChild([&w](const WakeupEvent& e, const WakeupTree& sub) {
      PutAlt(w, e.alt);
      w.Put(e.fp);
      PutTree(w, sub);
    });
  }
  static WakeupTree GetTree(SnapshotReader& rd, uint64_t nthreads) {
    WakeupTree t;
    for (uint64_t n = rd.Count(4); n > 0; --n) {
      WakeupEvent e;
      e.alt = GetAlt(rd, nthreads);
      e.fp = rd.GetFootprint();
      t.AppendChild(e, GetTree(rd, nthreads));
    }
    return t;
  }
  static Alt GetAlt(SnapshotReader& rd, uint64_t nthreads) {
    Alt a;
    a.thread = static_cast<int16_t>(rd.Small(nthreads - 1));
    a.kind = static_cast<DecisionKind>(rd.Small(kNumDecisionKinds - 1));
    const int64_t arg = rd.I64();
    if (arg < INT16_MIN || arg > INT16_MAX) rd.Corrupt("alternative out of range");
    a.arg = static_cast<int16_t>(arg);
    return a;
  }

  bool Asleep(const Node& n, const Alt& a) const {
    if (!dpor_) return false;
    for (const SleepEntry& e : n.sleep) {
      if (e.alt == a) return true;
    }
    return false;
  }

  // "thread c at consumer+2 returns there with the same registers and memory
  // every 9 steps; ..." for the running threads that spin.
  std::string DescribeSpins(const Machine& m) const {
    std::string out;
    for (int c = 0; c < m.num_cpus(); ++c) {
      const int t = m.cpu(c).running;
      if (t < 0 || !spins_[t].spinning) continue;
      const uint32_t pc = m.thread(t).cur().pc;
      if (!out.empty()) out += "; ";
      out += "thread " + s_.threads[t].name + " at " +
             (pc < s_.program.code.size() ? s_.program.DescribeIndex(pc) : std::string("native code")) +
             " returns there with the same registers and memory every " + std::to_string(spins_[t].cycle_steps) +
             " steps";
    }
    return out;
  }

  // True if the transition just taken changed data memory: a write access
  // whose bytes differ from the shadow copy (which it then updates). A store
  // of the value already there is no change: a loop that re-arms rseq_cs or
  // rewrites a flag with the same value goes round without effect.
  bool MemoryChanged(const Footprint& fp) {
    const std::vector<uint8_t>& mem = live_->memory;
    if (!shadow_valid_ || fp.all_memory) {
      shadow_ = mem;
      shadow_valid_ = true;
      return fp.all_memory || fp.HasMemory();
    }
    bool changed = false;
    for (int i = 0; i < fp.num_accesses; ++i) {
      const MemAccess& a = fp.accesses[i];
      if (!a.write || a.addr < kDataBase || a.addr - kDataBase + a.bytes > mem.size()) continue;
      const size_t off = a.addr - kDataBase;
      if (std::memcmp(&mem[off], &shadow_[off], a.bytes) != 0) {
        std::memcpy(&shadow_[off], &mem[off], a.bytes);
        changed = true;
      }
    }
    return changed;
  }

  void NoteTransition(const Machine& m) {
    Node& prev = stack_[depth_ - 1];
    prev.fp = m.last_footprint();
    if (!mm_cid_observable_) prev.fp.mm_cid = false;
    // What a spinner may see change: memory writes, events, switches (the
    // mm_cid allocator moves with every switch in or out: m.last_footprint()
    // before masking), and kernel actions on other threads. A yield that
    // finds its run queue empty only reads the CPU: not a change.
    const Alt& a = prev.alts[prev.alt];
    if (rseq_cs_dependence_) AddRseqCsReads(m, a.thread, prev.fp);
    const bool memory = MemoryChanged(prev.fp);
    if (memory || m.last_footprint().mm_cid || a.kind != DecisionKind::kStep ||
        (prev.fp.threads & ~(1ull << (a.thread & 63))) != 0) {
      ++path_writes_;
    }
  }

  // DPOR's dependence relation and its event plans (EventPlan) take where
  // an event on thread t is offered (IpMayRestart: t's rseq_cs and the
  // descriptor it points to, KernelAbi::InRseqCs) as a function of t's own
  // transitions: rseq_arm stores a static descriptor's address, the kernel
  // clears the word on t's return to user space. A plain store of the
  // program into an rseq_cs word (another thread's, or one's own pointing it
  // at a descriptor in data memory that others may write) breaks that: the
  // store commutes, by the footprints, with t's register-only steps, so
  // DPOR explored one order of them and missed the events that only the
  // other order offers (the conservative rule as well as the plans: both
  // offer an event where the state of the path allows it). Checked after
  // every execution (Machine::rseq_cs_stored); the exploration then starts
  // over with the reads below in every transition's footprint (Explore),
  // which orders such a store with every transition of the thread whose
  // word or descriptor it writes, and so restores both the races and the
  // plans' completeness argument (an equivalent execution then has the same
  // rseq_cs at each of t's boundaries). Test:
  // Explore.DporSeesAStoreIntoAnotherThreadsRseqCs.
  void RseqCsWrittenByStores(const Machine& m) const {
    if (dpor_ && !rseq_cs_dependence_ && m.rseq_cs_stored()) throw RseqCsStored{};
  }
  // The reads RseqCsWrittenByStores adds to a transition of thread t: t's
  // rseq_cs word, and the descriptor it points to when that is in data memory
  // (the static descriptors are never written).
  static void AddRseqCsReads(const Machine& m, int t, Footprint& fp) {
    const uint64_t word = m.AreaAddress(t) + kRseqOffRseqCs;
    fp.Access(word, 8, false);
    const uint64_t cs = m.Peek(word, 8);
    if (cs >= kDataBase && cs < m.DescriptorAddress(0) && m.UserReadable(cs, kRseqCsBytes)) {
      fp.Access(cs, kRseqCsBytes, false);
    }
  }

  // What UpdateSpin changed in one thread's SpinState, to give back the
  // state on entry (SpinsBefore) for a checkpoint, instead of copying every
  // thread's history at each new node before knowing whether it saves one
  // (those copies were 5-8 % of a stateful run).
  struct SpinUndo {
    int t = 0;
    uint64_t writes = 0;
    bool spinning = false;
    uint64_t cycle_steps = 0;
    size_t seen = 0;
    std::array<uint64_t, 4> seen_bits{};
    bool cleared = false;  // the history was stale and cleared
  };
  // `out` = spins_ as it was before the UpdateSpin that recorded `undo`. A
  // cleared history comes back empty with its old `writes`: replaying the
  // update from there clears it again, so the checkpoint resumes the same.
  void SpinsBefore(const std::vector<SpinUndo>& undo, std::vector<SpinState>& out) const {
    out = spins_;
    for (const SpinUndo& u : undo) {
      SpinState& sp = out[static_cast<size_t>(u.t)];
      if (u.cleared) {
        sp.ClearSeen();
      } else {
        sp.seen.resize(u.seen);
        sp.seen_bits = u.seen_bits;
      }
      sp.writes = u.writes;
      sp.spinning = u.spinning;
      sp.cycle_steps = u.cycle_steps;
    }
  }

  // Spin detection ("spin-assume"): a thread whose local state returns to a
  // value it had at an earlier boundary of this execution, with no write by
  // anyone in between, went round a loop without effect; it stays disabled
  // until something is written. Sound for final outcomes: removing effect-free
  // iterations of a busy-wait changes no reachable final state.
  // Only the thread that just stepped can have gone round a loop; a write
  // anywhere resets every thread's history, and a thread touched by someone
  // else's transition (a signal, a switch) is not spinning.
  // undo: if set, gets what this call changes (SpinsBefore).
  void UpdateSpin(const Machine& m, const Node&, std::vector<SpinUndo>* undo = nullptr) {
    uint64_t touched = ~0ull;
    int stepped = -1;
    if (depth_ > 0) {
      const Node& prev = stack_[depth_ - 1];
      touched = prev.fp.threads;
      if (prev.alts[prev.alt].kind == DecisionKind::kStep) stepped = prev.alts[prev.alt].thread;
    }
    for (int c = 0; c < m.num_cpus(); ++c) {
      const int t = m.cpu(c).running;
      if (t < 0) continue;
      SpinState& sm = spins_[t];
      const bool stale = sm.writes != path_writes_;
      if (!stale && !((touched >> (t & 63)) & 1)) continue;
      if (undo != nullptr) {
        undo->push_back({t, sm.writes, sm.spinning, sm.cycle_steps, sm.seen.size(), sm.seen_bits, stale});
      }
      if (stale) {
        sm.ClearSeen();
        sm.writes = path_writes_;
        sm.spinning = false;
      }
      if (t != stepped) {
        sm.spinning = false;
        continue;
      }
      const uint64_t h = ContextHash(m.thread(t));
      auto it = sm.seen.end();
      if (sm.MaySee(h)) it = std::find_if(sm.seen.begin(), sm.seen.end(), [h](const auto& e) { return e.first == h; });
      sm.spinning = it != sm.seen.end();
      if (sm.spinning) {
        sm.cycle_steps = m.steps() - it->second;
      } else if (sm.seen.size() < kMaxSpinHistory) {
        sm.See(h, m.steps());
      }
    }
  }
  bool Spinning(const Machine&, int t) const { return spins_[t].spinning; }

  // The thread whose alternatives alone are explored here (the ample set:
  // "Ample sets of the exhaustive strategies" above), or -1: a running thread
  // not spinning whose next step is independent of every other thread's
  // transitions (Machine::NextStepIsIndependent), the default CPU's first.
  int AmpleThread(const Machine& m, int default_thread) const {
    const bool later_events = m.total_events() < bounds_.max_events;
    // No load or store can reach an rseq area (no rseq_addr, no C++ thread;
    // checked at run time: EndExecution).
    const bool areas_private = !mm_cid_observable_;
    const auto qualifies = [&](int t) {
      return t >= 0 && !Spinning(m, t) && m.NextStepIsIndependent(t, later_events, areas_private);
    };
    if (qualifies(default_thread)) return default_thread;
    for (int c = 0; c < m.num_cpus(); ++c) {
      const int t = m.cpu(c).running;
      if (t != default_thread && qualifies(t)) return t;
    }
    return -1;
  }
  // True if a running thread other than t exists (an ample set of t then
  // leaves something out: the node is not full).
  static bool OtherThreadRuns(const Machine& m, int t) {
    for (int c = 0; c < m.num_cpus(); ++c) {
      const int u = m.cpu(c).running;
      if (u >= 0 && u != t) return true;
    }
    return false;
  }
  // Stateful search, C3 (the stack proviso): `state`, just revisited, is that
  // of a node of the current path after which every node explored one
  // thread's alternatives only (none is full): the reduced graph closes a
  // cycle that may leave the other threads out forever (a register-only
  // loop). The new node is then expanded fully instead of pruned; the next
  // time round the cycle has a full node and the revisit prunes. Scans only
  // the path's trailing run of reduced nodes.
  bool ClosesReducedCycle(const std::pair<uint64_t, uint64_t>& state) const {
    for (size_t j = depth_; j-- > 0;) {
      const Node& nj = stack_[j];
      if (nj.full) return false;
      if (nj.state == state) return true;
    }
    return false;
  }

  // Stateful search: the state just reached (`state`, already visited) is
  // that of node i of the current path, and in the transitions since then
  // every runnable thread (running or queued) ran one: a fair cycle. Repeating it is an
  // infinite execution that real parallel CPUs can run, with no progress
  // (the state hash covers memory, exits, observations and the event count),
  // so a livelock; sets livelock_cycle_. A cycle that leaves out a CPU whose
  // thread is runnable is unfair (the waiters on CPU 0 of
  // tests/data/yield_wait_remote_holder.rsq while the holder waits on CPU 1)
  // (nor is one that leaves a queued thread waiting: only the event bound
  // keeps the tick from preempting) and only pruned, as every revisit is.
  bool FairCycle(const Machine& m, const std::pair<uint64_t, uint64_t>& state) {
    const size_t i = CycleStart(state);
    if (i == depth_) return false;
    for (int u = 0; u < m.num_threads(); ++u) {
      if (m.thread(u).state != ThreadState::kRunnable) continue;
      bool ran = false;
      for (size_t j = i; j < depth_ && !ran; ++j) {
        const Alt& a = stack_[j].alts[stack_[j].alt];
        ran = a.kind == DecisionKind::kStep && a.thread == u;
      }
      if (!ran) return false;
    }
    livelock_cycle_ = "the state at boundary " + std::to_string(i) + " comes back " + std::to_string(depth_ - i) +
                      " boundaries later, every runnable thread having run in between: a fair cycle without " +
                      "progress (no exit, observation, event or memory change), repeated forever";
    return true;
  }
  // The first node of the current path whose state is `state` (depth_ if
  // none). DFS records states only before a sched_yield (the others hold 0).
  // Only the nodes of the state's chain in the index are looked at.
  size_t CycleStart(const std::pair<uint64_t, uint64_t>& state) {
    path_index_.Sync(stack_, depth_);
    size_t first = depth_;
    path_index_.ForEachCandidate(state.first, [&](size_t k) {
      if (k < first && stack_[k].state == state) first = k;
    });
    return first;
  }
  // Node::state as Choose records it at a new node: the state hash under
  // stateful search, and under DFS with cycle pruning before a sched_yield;
  // {} otherwise. Also recorded for a subtree's prefix nodes (SetPrefix) as
  // they are replayed, so that a cycle of the worker's path that starts in
  // the prefix is seen as one (FairCycle, CycleProvisoHolds,
  // ClosesReducedCycle): without them a --jobs worker pruned a fair cycle
  // there without reporting the livelock, and DFS went once more round a
  // cycle the sequential search prunes.
  std::pair<uint64_t, uint64_t> NodeState(const Machine& m) const {
    if (stateful_ || (prune_cycles_ && YieldAhead(m))) return m.StateHash(mm_cid_observable_, bounded_kinds_);
    return {};
  }
  // DFS cycle pruning (ExploreOptions::prune_cycles): `state` repeats on the
  // current path and some node of the cycle offered every running thread's
  // alternatives, so no thread's moves are ignored all the way round (the
  // cycle proviso of partial-order reduction): every continuation from here
  // is explored from the first occurrence.
  bool CycleProvisoHolds(const std::pair<uint64_t, uint64_t>& state) {
    for (size_t j = CycleStart(state); j < depth_; ++j) {
      if (stack_[j].full) return true;
    }
    return false;
  }
  // A running thread is about to sched_yield: where DFS records the state
  // (a cycle that goes through a yield passes such a boundary; a loop
  // without one is the spin detector's).
  static bool YieldAhead(const Machine& m) {
    const std::vector<Instr>& code = m.scenario().program.code;
    for (int c = 0; c < m.num_cpus(); ++c) {
      const int t = m.cpu(c).running;
      if (t < 0) continue;
      const uint32_t pc = m.thread(t).cur().pc;
      if (pc < code.size() && code[pc].op == Op::kSchedYield) return true;
    }
    return false;
  }
  // The states a thread's history keeps since the last write. A loop that
  // passes through more distinct states than this without any write (a retry
  // count in a register, as in abort_retry_livelock) is no busy-wait the
  // detector could prune, and an unbounded history costs a search and a
  // copy per step and per checkpoint: O(steps^2) per execution (3.7 s of CPU
  // for the 9 executions of abort_retry_livelock's 100,000-step livelocks).
  // A spin not detected only keeps a step alternative: sound.
  static constexpr size_t kMaxSpinHistory = 256;


  // Optimal DPOR (Abdulla, Aronis, Jonsson, Sagonas, POPL'14, Algorithm 2:
  // source sets with wakeup trees) with vector clocks over the last path. For each transition j (thread p),
  // its dependent predecessors are found through per-object indices (last
  // toucher of each thread, CPU, the mm_cid allocator; last write and the
  // reads since of each 8-byte memory word), so finding them is linear in the
  // path for the usual footprints. A dependent predecessor i of another thread
  // that j's clock does not already cover through a later one is a race. For
  // it, v = notdep(i).j is the sequence of the transitions after i that do not
  // happen after i, then j. InsertRace puts it into i's wakeup tree, and
  // the next executions that start from i follow it (TakeWakeup) instead of
  // choosing freely after its first transition, which is what left most
  // executions of source-set DPOR (Algorithm 1) sleep-set blocked.
  // Transitions are the threads' alternatives (ThreadAlt): a race whose
  // reversal starts with an injected event is reversed with that event, and
  // every thread tried at a node still gets all its alternatives there
  // (Backtrack), the conservative treatment of events that source-set DPOR
  // had (at K=1 only the plan's event is offered: see NextPlan). The events bound counts the multiset of events, which a reordering
  // keeps, so the bounded search needs no extra backtrack points (unlike a
  // preemption bound: Coons, Musuvathi, McKinley, OOPSLA'13).
  void AnalyzeRaces() {
    const size_t n = top_;
    const size_t nthreads = s_.threads.size();
    clocks_.assign(n * nthreads, 0);
    thread_clock_.assign(nthreads * nthreads, 0);
    seq_.assign(nthreads, 0);
    own_.assign(n, 0);
    constexpr int64_t kNone = -1;
    int64_t last_thread[64], last_cpu[64];
    std::fill(std::begin(last_thread), std::end(last_thread), kNone);
    std::fill(std::begin(last_cpu), std::end(last_cpu), kNone);
    int64_t last_mmcid = kNone;
    ++words_gen_;  // every word's history is empty (its buffers kept)
    all_memory_.clear();
    std::vector<int64_t>& cand = cand_;
    for (size_t j = 0; j < n; ++j) {
      const Node& nj = stack_[j];
      const Footprint& fj = nj.fp;
      const int p = nj.thread;  // = nj.alts[nj.alt].thread, without a miss on the alts buffer
      cand.clear();
      for (uint64_t b = fj.threads; b != 0; b &= b - 1) cand.push_back(last_thread[std::countr_zero(b)]);
      for (uint64_t b = fj.cpus; b != 0; b &= b - 1) cand.push_back(last_cpu[std::countr_zero(b)]);
      if (fj.mm_cid) cand.push_back(last_mmcid);
      if (fj.all_memory) {
        for (size_t i = 0; i < j; ++i) {
          if (stack_[i].fp.HasMemory()) cand.push_back(static_cast<int64_t>(i));
        }
      } else {
        for (int a = 0; a < fj.num_accesses; ++a) {
          const MemAccess& acc = fj.accesses[a];
          for (uint64_t w = acc.addr >> 3; w <= (acc.addr + acc.bytes - 1) >> 3; ++w) {
            auto it = words_.find(w);
            if (it == words_.end() || it->second.gen != words_gen_) continue;
            cand.push_back(it->second.last_write);
            if (acc.write) cand.insert(cand.end(), it->second.reads.begin(), it->second.reads.end());
          }
        }
        cand.insert(cand.end(), all_memory_.begin(), all_memory_.end());
      }
      std::sort(cand.begin(), cand.end(), std::greater<>());
      cand.erase(std::unique(cand.begin(), cand.end()), cand.end());
      uint32_t* cj = &clocks_[j * nthreads];
      const uint32_t* cp = &thread_clock_[static_cast<size_t>(p) * nthreads];
      std::copy(cp, cp + nthreads, cj);
      for (int64_t ii : cand) {
        if (ii < 0) break;
        const size_t i = static_cast<size_t>(ii);
        const Node& ni = stack_[i];
        const int q = ni.thread;
        if (q == p || !Dependent(ni.fp, fj)) continue;
        if (cj[q] < own_[i]) races_.push_back(i);
        const uint32_t* ci = &clocks_[i * nthreads];
        for (size_t k = 0; k < nthreads; ++k) cj[k] = std::max(cj[k], ci[k]);
      }
      own_[j] = ++seq_[p];
      cj[p] = own_[j];
      // j's clock is complete: the races it ends can be reversed now.
      for (const size_t i : races_) InsertRace(i, j, nthreads);
      races_.clear();
      std::copy(cj, cj + nthreads, &thread_clock_[static_cast<size_t>(p) * nthreads]);
      // Index j under every object it touched.
      const int64_t jj = static_cast<int64_t>(j);
      for (uint64_t b = fj.threads; b != 0; b &= b - 1) last_thread[std::countr_zero(b)] = jj;
      for (uint64_t b = fj.cpus; b != 0; b &= b - 1) last_cpu[std::countr_zero(b)] = jj;
      if (fj.mm_cid) last_mmcid = jj;
      if (fj.all_memory) {
        all_memory_.push_back(jj);
      } else {
        for (int a = 0; a < fj.num_accesses; ++a) {
          const MemAccess& acc = fj.accesses[a];
          for (uint64_t w = acc.addr >> 3; w <= (acc.addr + acc.bytes - 1) >> 3; ++w) {
            WordHistory& h = words_[w];
            if (h.gen != words_gen_) {
              h.gen = words_gen_;
              h.last_write = -1;
              h.reads.clear();
            }
            if (acc.write) {
              h.last_write = jj;
              h.reads.clear();
            } else {
              h.reads.push_back(jj);
            }
          }
        }
      }
    }
  }

  // The last transition ended the process (Machine::TouchEveryThread): every
  // other thread enabled at it had a next step that the end cut off, and
  // that step conflicts with it (it touches its own thread), so each such
  // race is reversed at the last node: the other thread runs first there.
  // AnalyzeRaces sees only executed transitions, so it cannot find these
  // (as in Flanagan-Godefroid DPOR's rule for threads still enabled in a
  // final state). Run in turn, their steps meet the end again and so on:
  // every point at which the end can cut the others off is explored.
  void RaceWithPendingSteps() {
    if (top_ == 0) return;
    Node& last = stack_[top_ - 1];
    last.enabled.ForEach([&last](int u) {
      if (u != last.thread) last.backtrack.Add(u);
    });
  }

  // The optimal-DPOR step for the race of transition i with the later
  // transition j (see AnalyzeRaces): clocks_ and own_ are complete up to j.
  // Transition k happens after transition i (of thread q) when
  // clocks_[k][q] >= own_[i]. v = notdep(i).j is inserted into i's wakeup
  // tree unless a weak initial of v is asleep at i (POPL'14 Algorithm 2,
  // lines 8-10: an execution starting with it was or will be explored from
  // an alternative already tried) or the tree already covers it.
  void InsertRace(size_t i, size_t j, size_t nthreads) {
    const Node& ni = stack_[i];
    const int q = ni.thread;
    race_v_.clear();
    for (size_t k = i + 1; k < j; ++k) {
      if (clocks_[k * nthreads + q] < own_[i]) race_v_.push_back(k);
    }
    race_v_.push_back(j);
    struct Ref {
      const Alt& alt;
      const Footprint& fp;
    };
    const auto at = [this](size_t k) {
      const Node& nk = stack_[race_v_[k]];
      return Ref{nk.alts[nk.alt], nk.fp};
    };
    Node& target = stack_[i];
    for (const SleepEntry& e : target.sleep) {
      if (WeakInitialIndex(e, race_v_.size(), at, target.events_left)) return;
    }
    std::vector<WakeupEvent> v;
    v.reserve(race_v_.size());
    for (const size_t k : race_v_) v.push_back({stack_[k].alts[stack_[k].alt], stack_[k].fp});
    if (!target.wut) target.wut = std::make_unique<WakeupTree>();
    target.wut->Insert(std::move(v), target.events_left);
  }

  // Advances the deepest node with an unexplored alternative; false when done.
  bool Backtrack() {
    while (top_ > floor_) {
      Node& n = stack_[top_ - 1];
      guide_.Clear();
      // Most nodes have nothing left: leave them without noting the
      // transition in the sleep set (it would be dropped with the node; the
      // push touched two buffers of every node of a long path).
      if (n.alt_end - n.alt_begin == 1 && (!n.wut || n.wut->Empty())) {
        n.done.Add(n.thread);
        if (!n.backtrack.FirstOf(n.enabled, n.done)) {
          --top_;
          continue;
        }
      }
      if (dpor_) n.sleep.push_back({n.alts[n.alt], n.fp});
      // The thread's next alternative. Under DPOR every alternative explored
      // here is asleep, so it is the first awake one of the range (a wakeup
      // tree may have started the thread in the middle of it).
      uint16_t a = dpor_ ? n.alt_begin : static_cast<uint16_t>(n.alt + 1);
      while (a < n.alt_end && Asleep(n, n.alts[a])) ++a;
      if (a < n.alt_end) {
        n.alt = a;
        replay_len_ = top_;
        return true;
      }
      n.done.Add(n.thread);
      bool moved = dpor_ && TakeWakeup(n) >= 0;
      while (const std::optional<int> t = moved ? std::nullopt : n.backtrack.FirstOf(n.enabled, n.done)) {
        if (SelectThread(n, *t)) {
          moved = true;
          break;
        }
        n.done.Add(*t);
      }
      if (moved) {
        replay_len_ = top_;
        return true;
      }
      --top_;
    }
    return false;
  }

  const Scenario& s_;
  const ExploreOptions& o_;
  Bounds bounds_;
  bool dpor_;
  bool rseq_cs_dependence_;  // see RseqCsWrittenByStores
  bool stateful_;
  const Placement* placement_ = nullptr;  // SetPlacement
  // The order of switches matters through mm_cid only if the program can read
  // mm_cid (rseq_load mm_cid, a load through rseq_addr, or native code);
  // outcomes exclude the rseq areas, so otherwise switches on different CPUs
  // commute.
  bool mm_cid_observable_;
  // Events are left out where they are equivalent to the same event one
  // boundary later (AppendAlternatives, Machine::EventCommutesWithNextStep).
  bool defer_events_;
  // DPOR at K=1 explores event plans (ApplyPlan, NextPlan).
  bool plans_on_;
  bool quiet_program_;  // QuietProgram(s_): see DoomedBySleep
  enum class PlanPhase : uint8_t {
    kDiscover,  // exploring the executions without events, noting plans
    kPlans,     // exploring plans_[plan_]
    kTail,      // the conservative rule, for events at positions past min_len_
  };
  PlanPhase phase_ = PlanPhase::kDiscover;
  // Per thread and slot: the fewest positions it counted in a discovery
  // execution that ran to its end. Events at later positions are left to
  // the tail.
  std::vector<uint32_t> min_len_;
  bool tail_ = false;              // some plan was left to the tail
  std::set<EventPlan> found_;      // the plans noted while discovering
  std::vector<EventPlan> plans_;   // then, in order
  size_t plan_ = 0;                // the one being explored
  bool plan_fired_ = false;        // the last execution had its plan's event
  std::vector<uint32_t> local_;    // per thread and slot: its position in this execution (CountPosition)
  std::array<uint8_t, kMaxSignal + 1> signal_slot_{};  // SlotOf a signal, by signo
  AltList scratch_;                // OfferedSlots'
  std::vector<uint32_t> new_slots_;  // Choose at a new node: OfferedSlots of each running thread
  bool prune_cycles_;  // ExploreOptions::prune_cycles, for DFS of an all-IR scenario
  uint32_t bounded_kinds_ = 0;  // DecisionKind bits with a per-kind bound (StateHash)
  std::vector<Node> stack_;  // the current path is stack_[0, top_); nodes past it keep their buffers
  PathStateIndex path_index_;  // the nodes of the path by state (CycleStart)
  size_t top_ = 0;
  size_t floor_ = 0;  // SetPrefix: stack_[0, floor_) is the subtree's fixed prefix
  // SetPrefix: the prefix nodes [0, prefix_states_) have their Node::state
  // (recorded when the prefix is first replayed: NodeState).
  size_t prefix_states_ = 0;
  std::vector<uint32_t> prefix_ranks_;  // and their TreeKey ranks
  size_t replay_len_ = 0;
  bool loaded_ = false;  // the stack came from Load
  bool can_resume_ = false;  // the simulator can continue from a node's checkpoint
  bool resumed_ = false;     // the current execution was resumed; no Choose yet
  size_t depth_ = 0;
  bool stopped_redundant_ = false;
  bool pruned_cycle_ = false;  // stopped_redundant_ at an unfair cycle (prune_cycles_)
  bool deadlock_ = false;
  std::string livelock_cycle_;  // the livelock's message when deadlock_ (DescribeSpins, FairCycle)
  uint64_t path_writes_ = 0;  // transitions on the path that changed something (see NoteTransition)
  // The execution being run (its memory is the machine's data memory) and a
  // copy of that memory as of the last noted transition (MemoryChanged).
  const ExecutionResult* live_ = nullptr;
  std::vector<uint8_t> shadow_;
  bool shadow_valid_ = false;
  std::vector<SpinState> spins_;
  std::vector<SpinState> entry_spins_;  // Choose: spins_ on entry to a new node (SpinsBefore)
  std::vector<SpinUndo> spin_undo_;     // Choose: what UpdateSpin changed at a new node
  std::vector<SavedBoundary> saved_;    // see CheckpointDue
  size_t num_saved_ = 0;
  size_t checkpoint_interval_ = 1;
  size_t checkpoint_floor_ = 1;     // the least interval (UpdateCheckpointFloor)
  uint64_t new_nodes_avg16_ = 0;    // 16 x the moving average of the nodes an execution adds
  uint64_t checkpoint_budget_ = ~0ull;
  uint64_t boundaries_ = 0;  // Choose calls, for deadline_check_
  bool cut_short_ = false;
  StateSet visited_;
  std::vector<uint32_t> clocks_;
  std::vector<uint32_t> thread_clock_;
  std::vector<uint32_t> own_;
  std::vector<size_t> races_;  // AnalyzeRaces: races ended by the current transition
  std::vector<size_t> race_v_;  // InsertRace's scratch: v's transitions (path indices)
  // The subtree of the wakeup tree continuing the alternative being explored
  // at the deepest node, stack_[top_ - 1]: the next new node's wakeup tree.
  WakeupTree guide_;
  // AnalyzeRaces' index of the path's memory accesses by 8-byte word. A
  // history of an older generation is empty: the map and the read lists'
  // buffers are kept from one execution to the next (clearing the map
  // freed and reallocated them all, a malloc per word per execution).
  struct WordHistory {
    uint64_t gen = 0;  // words_gen_ when last written; older: empty
    int64_t last_write = -1;
    std::vector<int64_t> reads;  // since last_write
  };
  std::unordered_map<uint64_t, WordHistory> words_;
  uint64_t words_gen_ = 0;
  std::vector<int64_t> cand_;   // AnalyzeRaces' scratch: a transition's dependent candidates
  std::vector<uint32_t> seq_;   // AnalyzeRaces' scratch: transitions per thread so far
  std::vector<int64_t> all_memory_;
};

// The share of the memory limit that machine checkpoints may take.
uint64_t CheckpointBudget(uint64_t max_memory_bytes) {
  constexpr uint64_t kMax = uint64_t{128} << 20;
  return max_memory_bytes == 0 ? kMax : std::min(kMax, max_memory_bytes / 8);
}

// Bytes held by a set of outcomes (an estimate: payloads plus the set's nodes).
uint64_t OutcomeBytes(const std::set<Outcome>& outcomes) {
  if (outcomes.empty()) return 0;
  const Outcome& o = *outcomes.begin();
  uint64_t one = sizeof(Outcome) + 48 + o.symbols.capacity() + o.returns.capacity() * sizeof(int64_t);
  for (const auto& per_thread : o.observed) one += 24 + per_thread.capacity() * sizeof(per_thread[0]);
  return one * outcomes.size();
}

// v2: XXH3 state hashes; v3: events left out where deferrable (another search tree);
// v4: the initial placement being explored; v5: DPOR nodes keep wakeup trees;
// v6: DPOR's event plans; v7: state hashes take memory as an incremental sum
// (sim/state_hash.h MemoryHash), so a v6 visited set holds other hashes.
constexpr char kSnapshotMagic[] = "rseqmc explore snapshot v7";

// ", 4 initial placements" when threads may start on any CPU (the
// scenario's fingerprint leaves `cpu any` out).
std::string Placements(const Scenario& s) {
  const uint64_t n = PlacementSpace(s, kMaxSampledPlacements).size();
  return n == 1 ? "" : ", " + std::to_string(n) + " initial placements";
}

// Everything a snapshot must agree on to be resumed, in words (so that a
// mismatch can say what differs).
std::string SnapshotIdentity(const Scenario& s, const ExploreOptions& o) {
  char fp[16];
  std::snprintf(fp, sizeof fp, "%08x", ScenarioFingerprint(s));
  return "scenario " + s.name + " (fingerprint " + fp + "), strategy " + StrategyName(o.strategy) + ", bounds " +
         o.bounds.ToString() + ", kernel " + KernelModelName(o.run.kernel.model) + ", max-steps " +
         std::to_string(o.run.max_steps) + ", seed " + std::to_string(o.seed) + ", pct-depth " +
         std::to_string(o.pct_depth) + (o.iterative ? ", iterative" : "") +
         (o.collect_outcomes ? "" : ", no outcomes") + (o.defer_events ? "" : ", events at every boundary") +
         Placements(s);
}

// The strategy-independent part: identity, counters, outcomes, failure.
void PutSnapshotHeader(SnapshotWriter& w, const Scenario& s, const ExploreOptions& o, const ExploreResult& res,
                       double elapsed_s) {
  w.Str(kSnapshotMagic);
  w.Str(SnapshotIdentity(s, o));
  w.U64(res.executions);
  w.U64(res.redundant);
  w.U64(res.max_depth);
  w.F64(elapsed_s);
  w.U64(res.outcomes.size());
  for (const Outcome& out : res.outcomes) w.Put(out);
  w.Bool(res.failure.has_value());
  if (res.failure) w.Put(*res.failure);
}

// Reads what PutSnapshotHeader wrote into `res`; returns the elapsed time.
double GetSnapshotHeader(SnapshotReader& rd, const Scenario& s, const ExploreOptions& o, ExploreResult& res) {
  if (rd.Str() != kSnapshotMagic) rd.Corrupt("not an exploration snapshot of this rseqmc version");
  const std::string made_for = rd.Str();
  const std::string now = SnapshotIdentity(s, o);
  if (made_for != now) {
    throw InputError("<checkpoint>", {}, "the checkpoint belongs to another exploration: it was made for " + made_for +
                                             "; this run is " + now,
                     "", "resume with the same scenario, -D values and options, or delete the checkpoint");
  }
  res.executions = rd.U64();
  res.redundant = rd.U64();
  res.max_depth = rd.U64();
  const double elapsed = rd.F64();
  for (uint64_t n = rd.Count(3); n > 0; --n) res.outcomes.insert(rd.GetOutcome());
  if (rd.Bool()) res.failure = rd.GetFailure();
  res.resumed_executions = res.executions;
  return elapsed;
}

}  // namespace

namespace {
ExploreResult ExploreOnce(const Scenario& s, const ExploreOptions& o, bool mm_cid_readable,
                          bool rseq_cs_dependence);

// Executions until Explore reads the clock again, given that `ran` of them
// took `seconds` since the last reading: as many as fit in 10 ms at that
// rate, 1 .. `most` (1 when there is no rate yet).
uint64_t NextClockInterval(uint64_t ran, double seconds, uint64_t most) {
  constexpr double kClockEvery_s = 0.01;
  if (ran == 0) return 1;
  if (seconds <= 0) return most;
  const double fit = static_cast<double>(ran) * kClockEvery_s / seconds;
  return fit >= static_cast<double>(most) ? most : std::max<uint64_t>(1, static_cast<uint64_t>(fit));
}
}  // namespace

ExploreResult Explore(const Scenario& s, const ExploreOptions& o) {
  // Each assumption below is given up at most once, so this ends.
  bool mm_cid_readable = false;
  bool rseq_cs_dependence = false;
  ExploreOptions again = o;
  for (;;) {
    try {
      return ExploreOnce(s, again, mm_cid_readable, rseq_cs_dependence);
    } catch (const MmCidLoaded&) {
      // The program loads mm_cid from its rseq area at a computed address
      // (which MmCidObservable cannot see): start again with mm_cid in the
      // dependence relation and the state hash.
      mm_cid_readable = true;
    } catch (const RseqCsStored&) {
      // A plain store wrote an rseq_cs word (DPOR): start again with the
      // rseq_cs reads in the footprints (RseqCsWrittenByStores).
      rseq_cs_dependence = true;
    }
    // A snapshot being resumed was made under the other assumption, so it
    // is not used.
    again.resume_from = nullptr;
  }
}

namespace {

ExploreResult ExploreOnce(const Scenario& s, const ExploreOptions& o, bool mm_cid_readable,
                          bool rseq_cs_dependence) {
  if (o.strategy == StrategyKind::kStateful) {
    for (const ThreadSpec& t : s.threads) {
      if (t.native) {
        throw InputError(s.file, t.loc, "stateful search needs threads whose bodies are IR; '" + t.name +
                                            "' is a C++ thread", "", "use --strategy dpor or dfs");
      }
    }
  }
  ExploreResult res;
  const auto start = Clock::now();
  auto last_progress = start;
  // Resuming: the counters, outcomes and failure so far, then the strategy's
  // part: nothing for random and PCT; for the exhaustive strategies the level
  // being explored, whether it is exhausted, and if not the engine's stack.
  // All of it is checked here, before the simulator is built.
  const bool sampling = o.strategy == StrategyKind::kRandom || o.strategy == StrategyKind::kPct;
  std::optional<SnapshotReader> resume;
  double elapsed_before = 0;
  uint32_t resume_level = 0;
  bool resume_level_done = true;
  // Exhaustive search explores every initial placement (sim/placement.h) in
  // turn at the root, one engine per events level: its visited set is shared
  // between them.
  const PlacementSpace placements(s, sampling ? kMaxSampledPlacements : kMaxPlacements);
  uint64_t resume_placement = 0;
  if (o.resume_from != nullptr) {
    resume.emplace(*o.resume_from, "<checkpoint>");
    elapsed_before = GetSnapshotHeader(*resume, s, o, res);
    if (!sampling) {
      resume_level = static_cast<uint32_t>(resume->Small(o.bounds.max_events));
      resume_level_done = resume->Bool();
      if (!o.iterative && resume_level != o.bounds.max_events) resume->Corrupt("events bound of another run");
      if (!resume_level_done) {
        resume_placement = resume->Small(placements.size() - 1);
        SnapshotReader probe = *resume;
        Bounds b = o.bounds;
        b.max_events = resume_level;
        DfsEngine probe_engine(s, o, b, mm_cid_readable);
        probe_engine.Load(probe);
        res.states = probe_engine.states();
        res.state_bytes = probe_engine.state_bytes();
        if (!probe.AtEnd()) probe.Corrupt("trailing bytes");
      }
    }
    if (resume_level_done && !resume->AtEnd()) resume->Corrupt("trailing bytes");
  }
  auto last_snapshot = start;
  // Hands a snapshot to o.snapshot when forced or when the interval is due;
  // `strategy_state` appends the strategy's part.
  auto take_snapshot = [&](bool forced, const std::function<void(SnapshotWriter&)>& strategy_state) {
    const auto now = Clock::now();
    if (!forced && (o.snapshot_interval_s <= 0 ||
                    std::chrono::duration<double>(now - last_snapshot).count() < o.snapshot_interval_s)) {
      return;
    }
    last_snapshot = now;
    SnapshotWriter w;
    PutSnapshotHeader(w, s, o, res, elapsed_before + std::chrono::duration<double>(now - start).count());
    strategy_state(w);
    o.snapshot(w.Take());
  };
  Simulator sim(s, o.run);
  uint64_t max_exec = o.max_executions;
  if (max_exec == 0 && (o.strategy == StrategyKind::kRandom || o.strategy == StrategyKind::kPct)) max_exec = 10000;

  // The interrupt and the time limit, checked inside long executions too;
  // sets stop_reason when exploration must end.
  auto within_deadline = [&]() -> bool {
    if (o.interrupt != nullptr && o.interrupt->load(std::memory_order_relaxed)) {
      res.stop_reason = "interrupted";
      return false;
    }
    if (o.time_limit_s > 0 && std::chrono::duration<double>(Clock::now() - start).count() >= o.time_limit_s) {
      res.stop_reason = "time-limit";
      return false;
    }
    return true;
  };
  // Checked between executions; sets stop_reason when exploration must end.
  uint64_t next_clock = 0, last_clock_executions = 0;
  auto last_clock = start;
  auto keep_going = [&]() -> bool {
    if (o.interrupt != nullptr && o.interrupt->load(std::memory_order_relaxed)) {
      res.stop_reason = "interrupted";
      return false;
    }
    if (max_exec != 0 && res.executions >= max_exec) {
      res.stop_reason = "max-executions";
      return false;
    }
    // The clock every 256 executions, every 16 with a progress callback (at
    // every execution it was 7 % of a random run of a 10-step scenario),
    // but sooner when executions are slow: at most as many as ran in the
    // last kClockEvery_s, so that a few-step execution over a large data image
    // (256 MiB: a second each) cannot overrun --time-limit 16 times over;
    // long executions check the deadline inside (deadline_check_).
    if (res.executions >= next_clock) {
      const auto now = Clock::now();
      const double el = std::chrono::duration<double>(now - start).count();
      next_clock = res.executions + NextClockInterval(res.executions - last_clock_executions,
                                                      std::chrono::duration<double>(now - last_clock).count(),
                                                      o.progress ? 16 : 256);
      last_clock = now;
      last_clock_executions = res.executions;
      if (o.time_limit_s > 0 && el >= o.time_limit_s) {
        res.stop_reason = "time-limit";
        return false;
      }
      if (o.progress && std::chrono::duration<double>(now - last_progress).count() >= 1.0) {
        last_progress = now;
        ExploreProgress p{res.executions, elapsed_before + el, res.outcomes.size(), res.max_depth, res.bound_level,
                          res.states};
        o.progress(p);
      }
    }
    return true;
  };

  // Records one finished execution; false when exploration must stop.
  OutcomeInserter outcomes(s);  // into res.outcomes (re-indexes what a resumed snapshot brought)
  auto after = [&](ExecutionResult& r) -> bool {
    // A failure's determinism hash is the execution's as the machine finished
    // it, before an oracle's verdict: a replay (which runs no oracle) must
    // reproduce it.
    uint64_t hash = 0;
    bool hashed = false;
    if (r.verdict == Verdict::kPass && o.oracle) {
      std::string why = o.oracle(r);
      if (!why.empty()) {
        if (!res.failure) {
          hash = r.TraceHash();
          hashed = true;
        }
        r.verdict = Verdict::kAssertFailed;
        r.message = why;
      }
    }
    if (o.collect_outcomes) outcomes.Insert(r, res.outcomes);
    if (o.on_execution) o.on_execution(r);
    if (r.verdict != Verdict::kPass && !res.failure) {
      res.failure = Failure{r.schedule, r.verdict, r.message, res.executions, hashed ? hash : r.TraceHash()};
      if (o.stop_at_first_failure) {
        res.stop_reason = "failure";
        return false;
      }
    }
    return keep_going();
  };

  // A resumed exploration that is already over its budget (a snapshot taken
  // when it reached max-executions) runs nothing: its snapshot stays valid.
  const bool over_budget = resume.has_value() && !keep_going();

  if (over_budget) {
    // Nothing to do; stop_reason says why.
    res.bound_level = resume_level;
  } else if (o.strategy == StrategyKind::kRandom || o.strategy == StrategyKind::kPct) {
    std::unique_ptr<Scheduler> sched;
    if (o.strategy == StrategyKind::kRandom) {
      RandomOptions ro;
      ro.max_events = o.bounds.max_events;
      ro.skip_local_boundaries = o.defer_events;
      sched = std::make_unique<BoundedRandomScheduler>(s, o.seed, ro, o.bounds);
    } else {
      sched = std::make_unique<PctScheduler>(s, o.seed, o.pct_depth, o.bounds);
    }
    ExecutionResult r;
    bool go = true;
    // The interrupt and the time limit inside each execution too (every
    // Machine::kStopPollSteps steps): one cut there is not counted, so a
    // snapshot runs it again whole.
    bool cut = false;
    sim.set_stop_poll([&] { return cut = !within_deadline(); });
    if (resume) {
      // The random stream advances with every execution: re-run those done.
      for (uint64_t i = 0; i < res.executions && go; ++i) {
        sim.RunInto(*sched, r);
        if (cut || (o.interrupt != nullptr && o.interrupt->load(std::memory_order_relaxed))) {
          if (!cut) res.stop_reason = "interrupted";
          if (o.snapshot) o.snapshot(*o.resume_from);
          go = false;
        }
      }
    }
    while (go) {
      sim.RunInto(*sched, r);
      if (cut) {
        if (o.snapshot) take_snapshot(true, [](SnapshotWriter&) {});
        break;
      }
      ++res.executions;
      res.max_depth = std::max<uint64_t>(res.max_depth, r.steps);
      if (r.stopped) {
        // The machine abandoned an unfair execution at the step budget
        // (Machine::FairWindow): no verdict, no outcome.
        ++res.redundant;
        go = keep_going();
      } else {
        go = after(r);
      }
      if (o.snapshot && (go || res.stop_reason != "failure")) take_snapshot(!go, [](SnapshotWriter&) {});
    }
    sim.set_stop_poll({});  // it refers to `cut`
  } else {
    uint32_t first_level = o.iterative ? 0 : o.bounds.max_events;
    bool load_engine = false;
    if (resume) {
      first_level = resume_level_done ? resume_level + 1 : resume_level;
      load_engine = !resume_level_done;
      res.bound_level = resume_level;
    }
    for (uint32_t level = first_level; level <= o.bounds.max_events; ++level) {
      Bounds b = o.bounds;
      b.max_events = level;
      res.bound_level = level;
      DfsEngine engine(s, o, b, mm_cid_readable, rseq_cs_dependence);
      uint64_t placement = 0;
      if (load_engine) {
        engine.Load(*resume);  // checked above
        placement = resume_placement;
        load_engine = false;
      }
      if (o.snapshot) {
        engine.snapshot_ = [&](bool more, bool forced) {
          take_snapshot(forced, [&](SnapshotWriter& w) {
            // Done with this placement: the next one starts from an empty stack.
            const bool level_more = more || placement + 1 < placements.size();
            w.U64(level);
            w.Bool(!level_more);
            if (!level_more) return;
            w.U64(more ? placement : placement + 1);
            engine.Save(w);
          });
        };
      }
      bool stopped = false;
      engine.set_checkpoint_budget(o.checkpoint_budget_bytes.value_or(CheckpointBudget(o.max_memory_bytes)));
      // The memory limit, after the first execution and every 64th, or
      // rarer on a long path (DfsEngine::memory_check_period: the path and
      // the checkpoints are largest after one; adding up their buffers walks
      // the path, which would cost more than a short resumed execution).
      auto within_memory = [&]() {
        if (o.max_states != 0 && engine.states() >= o.max_states) {
          res.stop_reason = "max-states";
          return false;
        }
        if (res.executions > 1 && (res.executions & (engine.memory_check_period() - 1)) != 0) return true;
        const uint64_t bytes = engine.state_bytes() + engine.path_bytes() + engine.checkpoint_bytes() +
                               OutcomeBytes(res.outcomes);
        res.peak_memory_bytes = std::max(res.peak_memory_bytes, bytes);
        if (o.max_memory_bytes == 0 || bytes <= o.max_memory_bytes) return true;
        res.stop_reason = "memory-limit";
        return false;
      };
      engine.after_check_ = [&]() {
        if (!keep_going() || !within_memory()) {
          stopped = true;
          return false;
        }
        return true;
      };
      // Inside a long execution: the deadline at every poll, and the memory
      // limit (the path and the checkpoints grow with the execution: about
      // 640 bytes per step, issue 18) once the boundaries since the last
      // walk reach memory_check_period(), so that the walks cost at most
      // about 8 nodes per boundary.
      // A walk is needed only once the path has grown by an eighth since the
      // last (a resumed execution mostly reuses nodes the last walk counted:
      // walking every period cost 8.6 % of percpu_list PER=64's time); the
      // walks between executions (within_memory) see the rest.
      uint64_t boundaries_since_walk = 0;
      uint64_t walked_nodes = 0;
      engine.deadline_check_ = [&]() {
        if (!within_deadline()) return true;
        boundaries_since_walk += DfsEngine::kDeadlineEvery;
        if (o.max_memory_bytes == 0 || boundaries_since_walk < engine.memory_check_period()) return false;
        boundaries_since_walk = 0;
        const uint64_t nodes = engine.path_nodes();
        if (nodes < walked_nodes + walked_nodes / 8) return false;
        walked_nodes = nodes;
        const uint64_t bytes = engine.state_bytes() + engine.path_bytes() + engine.checkpoint_bytes() +
                               OutcomeBytes(res.outcomes);
        res.peak_memory_bytes = std::max(res.peak_memory_bytes, bytes);
        if (bytes <= o.max_memory_bytes) return false;
        res.stop_reason = "memory-limit";
        return true;
      };
      Placement place;
      for (bool first = true; placement < placements.size() && !stopped; ++placement, first = false) {
        if (placements.size() > 1) placements.At(placement, place);
        engine.SetPlacement(placements.size() > 1 ? &place : nullptr, /*fresh=*/!first || !engine.loaded());
        engine.Run(sim, res, [&](ExecutionResult& r) {
          const bool go = after(r) && within_memory();
          if (!go) stopped = true;
          return go;
        });
        if (engine.cut_short()) stopped = true;
      }
      res.peak_memory_bytes = std::max(res.peak_memory_bytes, engine.path_bytes() + engine.checkpoint_bytes());
      if (engine.cut_short()) stopped = true;
      res.states = engine.states();
      res.state_bytes = engine.state_bytes();
      res.omission_estimate = engine.omission_estimate();
      if (stopped) break;
    }
    if (res.stop_reason.empty()) res.stop_reason = "exhausted";
    res.complete = res.stop_reason == "exhausted";
  }
  if (res.stop_reason.empty()) res.stop_reason = "exhausted";
  res.distinct_outcomes = res.outcomes.size();
  res.rule_sensitivity = sim.rule_sensitivity();
  res.elapsed_s = elapsed_before + std::chrono::duration<double>(Clock::now() - start).count();
  return res;
}

}  // namespace
// --- SubtreeSearch (model/subtree.h): DfsEngine on one subtree ---

TreeKey KeyOf(const TreePrefix& p) {
  TreeKey key;
  key.reserve(p.size());
  for (const TreeChoice& c : p) key.push_back(c.rank);
  return key;
}

struct SubtreeSearch::Impl {
  Impl(const Scenario& s, const ExploreOptions& o, const Bounds& b, bool mm_cid_readable)
      : engine(s, o, b, mm_cid_readable) {}
  DfsEngine engine;
};

SubtreeSearch::SubtreeSearch(const Scenario& s, const ExploreOptions& o, const Bounds& bounds, bool mm_cid_readable,
                             uint64_t checkpoint_budget_bytes)
    : impl_(std::make_unique<Impl>(s, o, bounds, mm_cid_readable)) {
  impl_->engine.set_checkpoint_budget(checkpoint_budget_bytes);
}

SubtreeSearch::~SubtreeSearch() = default;

bool SubtreeSearch::Run(Simulator& sim, const TreePrefix& prefix, const SubtreeHooks& hooks, ExploreResult& res) {
  DfsEngine& e = impl_->engine;
  e.SetPrefix(prefix);
  e.insert_state_ = hooks.insert_state;
  e.after_check_ = hooks.after_pruned;
  e.deadline_check_ = hooks.deadline;
  const bool complete_before = res.complete;
  res.complete = false;
  try {
    e.Run(sim, res, hooks.after);
  } catch (const MmCidLoaded&) {
    throw SubtreeMmCidLoaded{};
  }
  const bool exhausted = res.complete;
  res.complete = complete_before;
  return exhausted;
}

std::optional<TreePrefix> SubtreeSearch::GiveAway() { return impl_->engine.GiveAway(); }
TreeKey SubtreeSearch::LeafKey() const { return impl_->engine.LeafKey(); }
uint64_t SubtreeSearch::MemoryBytes() const {
  return impl_->engine.path_bytes() + impl_->engine.checkpoint_bytes();
}

ReachableOutcomes ReachableOutcomesOf(const Scenario& s, uint32_t max_events, const RunOptions& run,
                                      const std::atomic<bool>* interrupt) {
  ExploreOptions eo;
  eo.strategy = StrategyKind::kDpor;
  eo.bounds.max_events = max_events;
  eo.run = run;
  eo.stop_at_first_failure = false;
  eo.collect_outcomes = true;
  eo.interrupt = interrupt;
  ExploreResult er = Explore(s, eo);
  return ReachableOutcomes{std::move(er.outcomes), er.complete};
}

}  // namespace rseqmc
