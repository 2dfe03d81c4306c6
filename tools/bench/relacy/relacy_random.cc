// Relacy's side of the random-executions comparison (issue 14;
// tools/bench/random_vs_relacy.cc runs it and prints the ratio).
//
// The test: two threads, OPS non-atomic increments each of one shared counter
// (a sequentially consistent load, then a store of the value plus one: the
// lost-update race), the final value checked to be in 1..2*OPS. rseqmc's side runs
// the same program as an .rsq scenario (random_vs_relacy.cc, RaceScenarioText).
// Relacy explores it with its random scheduler (rl::random_scheduler_type:
// at every atomic operation a thread drawn uniformly among the runnable
// ones), ITERATIONS executions, one thread of this process, fibers as Relacy
// makes them on Linux (ucontext).
//
// Run: relacy_random ITERATIONS [OPS]   (OPS default 1)
// Prints one line: relacy iterations=N cpu_s=S wall_s=W lost=A exact=B ok=0|1
// (lost/exact: executions ending with the counter below 2*OPS (an update
// lost) / at 2*OPS).
#include <time.h>

#include <cstdio>
#include <cstdlib>
#include <sstream>

// Relacy last: it defines `new`, `delete` and `assert` as macros.
#include <relacy/relacy.hpp>

namespace {

long g_ops = 1;                 // increments per thread
unsigned long long g_lost = 0;  // executions that ended below 2 * g_ops
unsigned long long g_exact = 0; // executions that ended at 2 * g_ops

double Seconds(clockid_t clock) {
  timespec ts{};
  clock_gettime(clock, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

struct SharedCounterRace : rl::test_suite<SharedCounterRace, 2> {
  rl::atomic<long> counter;

  void before() { counter($).store(0, rl::memory_order_seq_cst); }

  void thread(unsigned /*index*/) {
    for (long i = 0; i < g_ops; ++i) {
      const long v = counter($).load(rl::memory_order_seq_cst);
      counter($).store(v + 1, rl::memory_order_seq_cst);
    }
  }

  void after() {
    const long v = counter($).load(rl::memory_order_seq_cst);
    RL_ASSERT(v >= 1 && v <= 2 * g_ops);
    ++(v == 2 * g_ops ? g_exact : g_lost);
  }
};

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2 || argc > 3 || std::atoll(argv[1]) <= 0 || (argc == 3 && std::atol(argv[2]) <= 0)) {
    std::fprintf(stderr, "usage: relacy_random ITERATIONS [OPS]\n");
    return 2;
  }
  if (argc == 3) g_ops = std::atol(argv[2]);
  rl::test_params p;
  p.search_type = rl::random_scheduler_type;
  p.iteration_count = static_cast<rl::iteration_t>(std::atoll(argv[1]));
  std::ostringstream quiet;  // Relacy's progress and summary lines
  p.output_stream = &quiet;
  p.progress_stream = &quiet;
  const double cpu0 = Seconds(CLOCK_PROCESS_CPUTIME_ID), wall0 = Seconds(CLOCK_MONOTONIC);
  const bool ok = rl::simulate<SharedCounterRace>(p);
  const double cpu = Seconds(CLOCK_PROCESS_CPUTIME_ID) - cpu0, wall = Seconds(CLOCK_MONOTONIC) - wall0;
  std::printf("relacy iterations=%llu cpu_s=%.6f wall_s=%.6f lost=%llu exact=%llu ok=%d\n",
              static_cast<unsigned long long>(p.iteration_count), cpu, wall, g_lost, g_exact, ok ? 1 : 0);
  return ok ? 0 : 1;
}
