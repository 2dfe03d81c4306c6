// Per-CPU counter increment on the real kernel (issue 4; figures in
// tools/bench/README.md): one run measures the cost of one increment through
//   * BM_Rseq      — a real rseq critical section (x86-64 assembly below:
//                    arm rseq_cs, read cpu_id, load/add/store the CPU's counter,
//                    retry on abort), on glibc's registration (__rseq_offset)
//                    or, where glibc did not register (__rseq_size == 0), on a
//                    thread_local struct rseq registered with the raw syscall;
//   * BM_LockAdd   — `lock add` (__atomic_fetch_add) on one shared counter;
//   * BM_Mutex     — a pthread mutex around one shared counter;
//   * BM_PerCpuSpin — a per-CPU spinlock (cmpxchg to take, release store to
//                    drop) and counter, indexed by sched_getcpu(),
// each with 1 and 8 threads, unpinned, on the machine's CPUs. Every operation
// is one non-inlined call, as in the rseq prototype's micro-benchmark
// (shared/reference/inject-prototype.md, section 5), so the paths compare.
//
// Real time is measured (UseRealTime). Columns: `Time` is wall time over the
// increments of all threads (the inverse of the total throughput);
// `thread_time_per_op` is one thread's wall time per increment (with more
// threads than CPUs it includes the time the thread waits for a CPU);
// `ops_per_s` is the increments per second of all threads together. After each
// run the counters must equal the number of increments performed, or the run
// is reported as an error: a lost update is a defect, not noise.
//
// Run: build/tools/bench/percpu_ops_bench [--benchmark_repetitions=3
//        --benchmark_report_aggregates_only=true]
#include <benchmark/benchmark.h>
#include <pthread.h>
#include <sched.h>
#include <sys/rseq.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <string>

#include "tools/bench/rseq_area.h"

namespace rseqmc {
namespace {

// Largest CPU number the per-CPU arrays cover; the process checks
// _SC_NPROCESSORS_CONF against it before any per-CPU benchmark runs.
constexpr int kMaxCpus = 1024;

struct alignas(64) PaddedLong {
  long value;
};
static_assert(sizeof(PaddedLong) == 64, "the assembly indexes counters by cpu * 64");

}  // namespace
}  // namespace rseqmc

#if defined(__x86_64__)
// The critical section, as librseq lays it out: the descriptor in __rseq_cs,
// RSEQ_SIG as the last 4 bytes before abort_ip (the bytes of
// `ud1 0x53053053(%rip),%edi`, as librseq's RSEQ_ASM_DEFINE_ABORT writes them).
// int rseqmc_bench_rseq_percpu_inc(struct rseq* rs, PaddedLong* counters):
// returns the CPU whose counter it incremented, or -1 after an abort (the
// caller retries, reading cpu_id afresh).
extern "C" __attribute__((visibility("hidden"))) int rseqmc_bench_rseq_percpu_inc(struct rseq* rs,
                                                                                   rseqmc::PaddedLong* counters);
asm(R"ASM(
        .pushsection .text
        .globl rseqmc_bench_rseq_percpu_inc
        .hidden rseqmc_bench_rseq_percpu_inc
        .type rseqmc_bench_rseq_percpu_inc, @function
        .p2align 4
rseqmc_bench_rseq_percpu_inc:
        .cfi_startproc
        leaq .Lrseqmc_bench_cs(%rip), %rax
        movq %rax, 8(%rdi)                # rs->rseq_cs = &descriptor (before start_ip)
.Lrseqmc_bench_start:
        movl 4(%rdi), %ecx                # cpu = rs->cpu_id          (start_ip)
        movl %ecx, %edx
        shlq $6, %rdx                     # one 64-byte line per CPU
        movq (%rsi,%rdx), %rax
        addq $1, %rax
        movq %rax, (%rsi,%rdx)            # commit store
.Lrseqmc_bench_post:
        movl %ecx, %eax                   # start_ip + post_commit_offset
        ret
        .byte 0x0f, 0xb9, 0x3d            # ud1 0x53053053(%rip),%edi:
        .long 0x53053053                  # RSEQ_SIG just before abort_ip
.Lrseqmc_bench_abort:
        movl $-1, %eax                    # abort_ip
        ret
        .cfi_endproc
        .size rseqmc_bench_rseq_percpu_inc, .-rseqmc_bench_rseq_percpu_inc
        .popsection

        .pushsection __rseq_cs, "aw"
        .balign 32
.Lrseqmc_bench_cs:
        .long 0, 0                        # version, flags
        .quad .Lrseqmc_bench_start
        .quad .Lrseqmc_bench_post - .Lrseqmc_bench_start
        .quad .Lrseqmc_bench_abort
        .popsection
)ASM");
#endif

namespace rseqmc {
namespace {

// Each benchmark resets its counters on thread 0 before the timed loop (the
// loop's start barrier orders that before every other thread's increments);
// after the loop every thread adds its increments to `ops`, and the last one
// to finish compares them with the counters.
struct RunCheck {
  std::atomic<long> ops{0};
  std::atomic<int> finished{0};
};

bool CpuArraysFit(std::string* why) {
  const long conf = sysconf(_SC_NPROCESSORS_CONF);
  if (conf > kMaxCpus) {
    *why = "more possible CPUs (" + std::to_string(conf) + ") than the per-CPU arrays hold (" +
           std::to_string(kMaxCpus) + ")";
    return false;
  }
  return true;
}

template <class Method>
void CounterBench(benchmark::State& state) {
  static Method method;
  static RunCheck check;
  if (state.thread_index() == 0) {
    method.Reset();
    check.ops.store(0);
    check.finished.store(0);
  }
  typename Method::Thread self;
  std::string why;
  if (!CpuArraysFit(&why) || !method.Prepare(&self, &why)) {
    state.SkipWithError(why.c_str());
  }
  for (auto _ : state) method.Op(&self);

  const long mine = static_cast<long>(state.iterations());
  check.ops.fetch_add(mine);
  if (check.finished.fetch_add(1) + 1 == state.threads() && !state.error_occurred()) {
    const long expected = check.ops.load();
    const long got = method.Sum();
    if (got != expected) {
      const std::string msg = "lost update: counters sum to " + std::to_string(got) + ", " +
                              std::to_string(expected) + " increments were performed";
      state.SkipWithError(msg.c_str());
    }
  }
  // Summed over threads, then: / wall seconds, / threads, inverted = seconds
  // per increment of one thread (printed as ns).
  state.counters["thread_time_per_op"] = benchmark::Counter(
      static_cast<double>(mine),
      benchmark::Counter::kIsRate | benchmark::Counter::kAvgThreads | benchmark::Counter::kInvert);
  state.counters["ops_per_s"] = benchmark::Counter(static_cast<double>(mine), benchmark::Counter::kIsRate);
  method.Report(self, state);
}

// ---- 1. rseq --------------------------------------------------------------

PaddedLong rseq_counters[kMaxCpus];

struct RseqMethod {
  struct Thread {
    struct rseq* rs = nullptr;
    bool own = false;
    long aborts = 0;
  };
  void Reset() {
    for (PaddedLong& c : rseq_counters) c.value = 0;
  }
  bool Prepare(Thread* t, std::string* why) {
#if !defined(__x86_64__)
    (void)t;
    *why = "the rseq critical section is written for x86-64 only";
    return false;
#else
    const ThreadRseq r = CurrentThreadRseq(why);
    if (r.area == nullptr) return false;
    t->rs = r.area;
    t->own = r.own;
    return true;
#endif
  }
  void Op(Thread* t) {
#if defined(__x86_64__)
    while (rseqmc_bench_rseq_percpu_inc(t->rs, rseq_counters) < 0) ++t->aborts;
#else
    (void)t;
#endif
  }
  long Sum() const {
    long s = 0;
    for (const PaddedLong& c : rseq_counters) s += c.value;
    return s;
  }
  void Report(const Thread& t, benchmark::State& state) const {
    state.counters["aborts"] = benchmark::Counter(static_cast<double>(t.aborts));
    if (state.thread_index() == 0) state.SetLabel(t.own ? "own rseq registration" : "glibc rseq registration");
  }
};

// ---- 2. lock add on one shared counter -------------------------------------

PaddedLong shared_counter;

[[gnu::noinline]] void LockAddInc(long* c) { __atomic_fetch_add(c, 1, __ATOMIC_SEQ_CST); }

struct LockAddMethod {
  struct Thread {};
  void Reset() { shared_counter.value = 0; }
  bool Prepare(Thread*, std::string*) { return true; }
  void Op(Thread*) { LockAddInc(&shared_counter.value); }
  long Sum() const { return __atomic_load_n(&shared_counter.value, __ATOMIC_SEQ_CST); }
  void Report(const Thread&, benchmark::State&) const {}
};

// ---- 3. pthread mutex around one shared counter ----------------------------

struct alignas(64) MutexCounter {
  pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
  long value = 0;
};
MutexCounter mutex_counter;

[[gnu::noinline]] void MutexInc(MutexCounter* m) {
  pthread_mutex_lock(&m->mu);
  ++m->value;
  pthread_mutex_unlock(&m->mu);
}

struct MutexMethod {
  struct Thread {};
  void Reset() { mutex_counter.value = 0; }
  bool Prepare(Thread*, std::string*) { return true; }
  void Op(Thread*) { MutexInc(&mutex_counter); }
  long Sum() const { return mutex_counter.value; }
  void Report(const Thread&, benchmark::State&) const {}
};

// ---- 4. per-CPU spinlock ---------------------------------------------------

struct alignas(64) PerCpuSpin {
  std::atomic<int> lock{0};
  long value = 0;
};
PerCpuSpin spin_counters[kMaxCpus];

// Take with cmpxchg; while taken, spin on a plain load with `pause`, and give
// the CPU away now and then: with more threads than CPUs the holder may have
// been preempted, and only its CPU's next thread can be spinning on its lock.
[[gnu::noinline]] void PerCpuSpinInc(PerCpuSpin* locks) {
  const int cpu = sched_getcpu();
  PerCpuSpin& l = locks[cpu < 0 ? 0 : cpu];
  int expected = 0;
  while (!l.lock.compare_exchange_strong(expected, 1, std::memory_order_acquire, std::memory_order_relaxed)) {
    for (int spins = 1; l.lock.load(std::memory_order_relaxed) != 0; ++spins) {
      __builtin_ia32_pause();
      if (spins % 256 == 0) sched_yield();
    }
    expected = 0;
  }
  ++l.value;
  l.lock.store(0, std::memory_order_release);
}

struct PerCpuSpinMethod {
  struct Thread {};
  void Reset() {
    for (PerCpuSpin& c : spin_counters) c.value = 0;
  }
  bool Prepare(Thread*, std::string*) { return true; }
  void Op(Thread*) { PerCpuSpinInc(spin_counters); }
  long Sum() const {
    long s = 0;
    for (const PerCpuSpin& c : spin_counters) s += c.value;
    return s;
  }
  void Report(const Thread&, benchmark::State&) const {}
};

void BM_Rseq(benchmark::State& state) { CounterBench<RseqMethod>(state); }
void BM_LockAdd(benchmark::State& state) { CounterBench<LockAddMethod>(state); }
void BM_Mutex(benchmark::State& state) { CounterBench<MutexMethod>(state); }
void BM_PerCpuSpin(benchmark::State& state) { CounterBench<PerCpuSpinMethod>(state); }
BENCHMARK(BM_Rseq)->Threads(1)->Threads(8)->UseRealTime();
BENCHMARK(BM_LockAdd)->Threads(1)->Threads(8)->UseRealTime();
BENCHMARK(BM_Mutex)->Threads(1)->Threads(8)->UseRealTime();
BENCHMARK(BM_PerCpuSpin)->Threads(1)->Threads(8)->UseRealTime();

}  // namespace
}  // namespace rseqmc

BENCHMARK_MAIN();
