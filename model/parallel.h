// Exhaustive search on several cores: work-stealing over the search tree
// (`rseqmc check --jobs N`, issue 14).
//
// Each worker owns a Simulator and runs the sequential explorer on a subtree
// of the search tree named by a schedule prefix (model/subtree.h). The work
// starts as one subtree, the empty prefix (the whole tree), in a pool of
// prefixes; a worker with nothing to do waits for the pool. A busy worker
// looks, between two executions, at two relaxed atomic counters (idle
// workers, prefixes in the pool): when more workers are idle than the pool
// can feed, it gives away the shallowest alternative of its path that it has
// not explored yet (the largest subtree it can spare) and pushes that prefix
// into the pool. The pool's lock is taken only to hand out or give away a
// subtree, never per execution: per execution a worker touches only its own
// search, two shared read-mostly counters and, for --max-executions, one
// fetch_add; so the cost of coordination grows with the number of steals,
// which stays small because each steal takes the shallowest (largest)
// subtree, not with executions or cores. For a node of 64+ cores the same
// design holds; the pool would be the first thing to split per socket.
//
// Stateful search shares one visited set: 64 shards selected by the state
// hash's top bits, each an ordinary StateSet (model/state_set.h) behind its
// own mutex, so two workers contend only when they insert into the same
// shard at the same time. With a shared visited set the pruning, and so the
// execution and state counts, depend on timing; the set of states reached
// (the closure of the initial state under the transitions, as every inserted
// state's successors are all tried by someone) and so the outcomes and the
// verdict do not.
//
// Results are merged deterministically: executions, pruned executions and
// outcomes are sums and unions over the workers. Every execution has a
// position in the sequential explorer's order (TreeKey); the failure reported
// is the one with the smallest key found. Once a failure is known, a worker
// stops a subtree as soon as its next execution would come after it, and
// prefixes after it are dropped from the pool, but everything before it is
// still explored: for kDfs the failure is exactly the sequential explorer's
// first failure (same schedule, so the same minimised counterexample); for
// kStateful it is the first among those reached, which may differ from the
// sequential one when another worker's visits pruned the way to it. A
// completed kDfs search runs exactly the sequential number of executions.
//
// Limits hold across workers: --max-executions is a pool of tickets (an
// execution starts only with one, so at most N run), the time limit and the
// interrupt flag are polled by every worker between executions and inside
// them, and --max-memory counts every worker's path and checkpoints, the
// shared visited set and the outcomes. Failure::execution is the number of
// executions all workers had finished when it was found (not the sequential
// index).
//
// Not parallel (ExploreParallel runs the sequential explorer; WhyNotParallel
// says why): DPOR, since its backtrack sets and sleep sets at a node are
// only final once every subtree below it has been explored in order (races
// found deep in one subtree add threads at its ancestors, whose other
// subtrees another worker may have taken); random and PCT; scenarios with
// C++ threads; checkpoints (snapshot/resume_from); several initial
// placements (sim/placement.h: the split starts below the placement loop).
//
// Example:
//
//     ExploreOptions o;
//     o.strategy = StrategyKind::kDfs;
//     ExploreResult r = ExploreParallel(scenario, o, /*jobs=*/4);
//     // r.executions, r.outcomes, r.failure as from Explore(scenario, o)
#ifndef RSEQMC_MODEL_PARALLEL_H_
#define RSEQMC_MODEL_PARALLEL_H_

#include <optional>
#include <string>

#include "model/explorer.h"

namespace rseqmc {

// The number of workers `jobs` means: 0 = std::thread::hardware_concurrency()
// (at least 1), otherwise jobs itself.
unsigned ResolveJobs(unsigned jobs);

// Why `s` under `o` is explored sequentially whatever the number of jobs
// (the strategy, C++ threads, a checkpoint), as a sentence for the user; nullopt
// if ExploreParallel can spread it over workers.
std::optional<std::string> WhyNotParallel(const Scenario& s, const ExploreOptions& o);

// Explores `s` with `o` on ResolveJobs(jobs) workers (see the file comment);
// with one worker, or when WhyNotParallel says so, it is Explore(s, o).
// ExploreOptions::on_execution and ::oracle may be called from several
// threads at once (on_execution under a lock, one call at a time); ::progress
// from one worker at a time. Throws what Explore throws.
ExploreResult ExploreParallel(const Scenario& s, const ExploreOptions& o, unsigned jobs);

}  // namespace rseqmc

#endif  // RSEQMC_MODEL_PARALLEL_H_
