// Measures this machine and writes the cost-model file of `rseqmc simulate`
// (issue 12 §4): the figures of HostMeasurements (tools/alloc/calibrate_fit.h),
// each the minimum over 5 repetitions of a mean over many operations (the
// host is shared: the minimum is the figure least disturbed by other load),
// then FitCostModel, then the file with the date, host, kernel and every
// measured figure as comments. Also measures each allocator variant's
// single-thread alloc+free pair (ns), written as comments for the report.
//
// Usage: alloc_calibrate OUT.txt      (about 10 s; progress on stderr)
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <linux/futex.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <fstream>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "sim/cost_model.h"
#include "tools/alloc/alloc.h"
#include "tools/alloc/calibrate_fit.h"

namespace rseqmc::alloc {
namespace {

double NowNs() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1e9 + ts.tv_nsec;
}

// min over `reps` repetitions of (time of body(n)) / n.
double Measure(const char* what, long n, const std::function<void(long)>& body, int reps = 5) {
  std::fprintf(stderr, "calibrate: %-28s", what);
  double best = 1e300;
  for (int rep = 0; rep < reps; ++rep) {
    const double t0 = NowNs();
    body(n);
    best = std::min(best, (NowNs() - t0) / static_cast<double>(n));
  }
  std::fprintf(stderr, " %10.2f ns\n", best);
  return best;
}

void Pin(int cpu) {
  cpu_set_t s;
  CPU_ZERO(&s);
  CPU_SET(cpu, &s);
  pthread_setaffinity_np(pthread_self(), sizeof s, &s);
}

int Cpus() { return static_cast<int>(std::max(1L, sysconf(_SC_NPROCESSORS_ONLN))); }

// Two threads pinned to cpu_a / cpu_b alternate `rounds` times through `step`
// (called with the thread's index and the round); returns ns per round.
// `reset` runs before each repetition.
double PingPong(const char* what, int cpu_a, int cpu_b, long rounds, const std::function<void(int, long)>& step,
                const std::function<void()>& reset = [] {}, int reps = 5) {
  return Measure(
      what, rounds,
      [&](long n) {
    reset();
    std::thread other([&] {
      Pin(cpu_b);
      for (long i = 0; i < n; ++i) step(1, i);
    });
    Pin(cpu_a);
    for (long i = 0; i < n; ++i) step(0, i);
    other.join();
      },
      reps);
}

std::atomic<int> signals_seen{0};
void OnSignal(int) { signals_seen.fetch_add(1, std::memory_order_relaxed); }

double ReadHz() {
  utsname u;
  uname(&u);
  std::ifstream f(std::string("/boot/config-") + u.release);
  std::string line;
  while (std::getline(f, line)) {
    if (line.rfind("CONFIG_HZ=", 0) == 0) return std::stod(line.substr(10));
  }
  return 250;  // Debian's default
}

// What a migration costs the migrated thread: one write per cache line over
// a 32 KiB working set (an L1d), timed after moving to CPU `other` (cold
// there: the lines come from the old CPU's caches) and again on the same CPU
// (warm); min over 2000 moves of the cold pass minus min of the warm pass.
double MigrationRefill(int other) {
  std::fprintf(stderr, "calibrate: %-28s", "migration refill (32 KiB)");
  static std::vector<uint64_t> ws(32 * 1024 / 8);
  const auto pass = [] {
    const double t0 = NowNs();
    for (size_t i = 0; i < ws.size(); i += 8) ws[i] += 1;
    asm volatile("" ::: "memory");
    return NowNs() - t0;
  };
  double cold = 1e300, warm = 1e300;
  for (int rep = 0; rep < 2000; ++rep) {
    Pin(rep & 1 ? other : 0);
    cold = std::min(cold, pass());
    warm = std::min(warm, pass());
  }
  Pin(0);
  std::fprintf(stderr, " %10.2f ns (cold %.0f, warm %.0f)\n", cold - warm, cold, warm);
  return cold - warm;
}

HostMeasurements MeasureHost() {
  HostMeasurements m;
  const int cpus = Cpus();
  const int other = cpus > 1 ? 1 : 0;
  Pin(0);
  m.add_ns = Measure("dependent add", 20000000, [](long n) {
    uint64_t x = 1;
    for (long i = 0; i < n; ++i) asm volatile("add $1, %0" : "+r"(x));
  });
  static volatile uint64_t cell = 0;
  m.load_ns = Measure("L1 load", 20000000, [](long n) {
    for (long i = 0; i < n; ++i) (void)cell;
  });
  static std::atomic<uint64_t> counter{0};
  m.atomic_ns = Measure("lock xadd", 20000000, [](long n) {
    for (long i = 0; i < n; ++i) counter.fetch_add(1);
  });
  static std::atomic<long> turn{0};
  // Short batches, many of them: on a loaded host the minimum is a batch in
  // which both threads ran at once (otherwise it measures the scheduler).
  m.line_pingpong_ns = PingPong("cache-line ping-pong", 0, other, 200, [](int me, long i) {
    const long want = 2 * i + me;
    while (turn.load(std::memory_order_acquire) != want) __builtin_ia32_pause();
    turn.store(want + 1, std::memory_order_release);
  }, [] { turn = 0; }, 300);
  m.clock_ns = Measure("clock_gettime", 10000000, [](long n) {
    timespec ts;
    for (long i = 0; i < n; ++i) clock_gettime(CLOCK_MONOTONIC, &ts);
  });
  m.syscall_ns = Measure("getppid", 2000000, [](long n) {
    for (long i = 0; i < n; ++i) syscall(SYS_getppid);
  });
  // Two threads on CPU 0 yielding to each other: one switch per yield.
  m.yield_switch_ns = PingPong("sched_yield switch", 0, 0, 50000, [](int, long) { sched_yield(); }) / 2;
  static std::atomic<uint32_t> word{0};
  m.futex_roundtrip_ns = PingPong("futex round trip (1 CPU)", 0, 0, 20000, [](int me, long) {
    const uint32_t mine = static_cast<uint32_t>(me);
    while (word.load(std::memory_order_acquire) != mine) {
      syscall(SYS_futex, &word, FUTEX_WAIT_PRIVATE, 1 - mine, nullptr, nullptr, 0);
    }
    word.store(1 - mine, std::memory_order_release);
    syscall(SYS_futex, &word, FUTEX_WAKE_PRIVATE, 1, nullptr, nullptr, 0);
  }, [] { word = 0; });
  if (cpus > 1) {
    m.migrate_ns = Measure("migration (setaffinity)", 20000, [](long n) {
      for (long i = 0; i < n; ++i) Pin(static_cast<int>(i & 1));
    });
    m.migrate_refill_ns = MigrationRefill(other);
  }
  Pin(0);
  struct sigaction sa {};
  sa.sa_handler = OnSignal;
  sigaction(SIGUSR1, &sa, nullptr);
  m.signal_ns = Measure("signal delivery", 500000, [](long n) {
    for (long i = 0; i < n; ++i) raise(SIGUSR1);
  });
  m.hz = ReadHz();
  m.cpus = cpus;
  return m;
}

}  // namespace
}  // namespace rseqmc::alloc

int main(int argc, char** argv) {
  using namespace rseqmc::alloc;
  if (argc != 2) {
    std::fprintf(stderr, "usage: alloc_calibrate OUT.txt\n");
    return 2;
  }
  const HostMeasurements m = MeasureHost();
  std::vector<std::string> header;
  char host[256] = "?";
  gethostname(host, sizeof host);
  utsname u;
  uname(&u);
  char when[64];
  const std::time_t now = std::time(nullptr);
  std::strftime(when, sizeof when, "%Y-%m-%d %H:%M UTC", std::gmtime(&now));
  header.push_back("Cost model calibrated by tools/alloc/alloc_calibrate (tools/alloc/calibrate_fit.h: the fit).");
  header.push_back(std::string("Measured ") + when + " on " + host + ", " + u.sysname + " " + u.release + " " + u.machine +
                   ", " + std::to_string(m.cpus) + " CPUs, CONFIG_HZ=" + std::to_string(static_cast<int>(m.hz)) + ".");
  char buf[512];
  std::snprintf(buf, sizeof buf,
                "Host figures (ns, min of 5 means): add %.3f, load %.3f, lock xadd %.2f, line ping-pong %.1f, "
                "clock_gettime %.1f, getppid %.1f, yield switch %.1f, futex round trip %.1f, setaffinity migration %.1f "
                "(not used), migration refill %.1f, signal %.1f.",
                m.add_ns, m.load_ns, m.atomic_ns, m.line_pingpong_ns, m.clock_ns, m.syscall_ns, m.yield_switch_ns,
                m.futex_roundtrip_ns, m.migrate_ns, m.migrate_refill_ns, m.signal_ns);
  header.push_back(buf);
  std::string per_variant = "Single-thread alloc+free pair, ns (pinned, 16 B class):";
  rseqmc::alloc::Variant vs[] = {Variant::kThreadCache, Variant::kPerCpuRseq, Variant::kPerCpuMutex,
                                 Variant::kPerCpuSpin, Variant::kSharedCas, Variant::kGlobalLock};
  for (Variant v : vs) {
    try {
      auto a = MakeAllocator(v);
      const double ns = Measure(VariantName(v), 2000000, [&](long n) {
        for (long i = 0; i < n; ++i) a->Free(a->Alloc(16), 16);
      });
      std::snprintf(buf, sizeof buf, " %s %.1f", VariantName(v), ns);
      per_variant += buf;
    } catch (const std::exception& e) {
      per_variant += std::string(" ") + VariantName(v) + " (" + e.what() + ")";
    }
  }
  header.push_back(per_variant);
  // The seed's `lsl` point: reading the CPU number from the segment limit of
  // the per-CPU GDT entry (the vDSO's vgetcpu: GDT_ENTRY_CPUNODE * 8 + 3 =
  // 0x7b on x86-64) instead of the kernel-written rseq cpu_id.
  const double lsl = Measure("lsl cpu number", 20000000, [](long n) {
    for (long i = 0; i < n; ++i) {
      unsigned p;
      asm volatile("lsl %1, %0" : "=r"(p) : "r"(0x7bu));
    }
  });
  std::snprintf(buf, sizeof buf,
                "lsl (CPU number from the GDT) %.2f ns vs an rseq cpu_id load %.2f ns: +%.2f ns per CPU-number read.",
                lsl, m.load_ns, lsl - m.load_ns);
  header.push_back(buf);
  std::ofstream out(argv[1]);
  out << rseqmc::FormatCostModel(FitCostModel(m), header);
  if (!out) {
    std::fprintf(stderr, "alloc_calibrate: cannot write %s\n", argv[1]);
    return 2;
  }
  std::fprintf(stderr, "calibrate: wrote %s\n", argv[1]);
  return 0;
}
