// Measures this machine for the mmap model (issue 13 §2) and writes its two
// cost files: the figures of MmapMeasurements (calibrate_fit.h), each the
// minimum over repetitions of a mean (the host is shared: the minimum is the
// figure least disturbed by other load), then FitMmapCosts / FitHandoff,
// then the files with the date, host, kernel and every measured figure as
// comments.
//
// Usage: mmap_calibrate BASE_COST_MODEL OUT_MMAP_COSTS OUT_COST_MODEL [--mib N]
//   BASE_COST_MODEL  the machine's general cost model (tools/alloc/cost_model.txt)
//   OUT_MMAP_COSTS   the *_NS constants of sim/mmap_timed.rsq (tools/mmap-seed/mmap_costs.txt)
//   OUT_COST_MODEL   BASE with the measured lock hand-off (tools/mmap-seed/cost_model.txt)
//   --mib N          MiB mapped per page-cost measurement (default 64)
// About 10-20 s. Exit 0, 1 if a measurement failed (mmap), 2 bad usage or
// an unreadable base model (file:line:col for a malformed one).
#include <linux/futex.h>
#include <pthread.h>
#include <sched.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <fstream>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "sim/cost_model.h"
#include "sim/diag.h"
#include "tools/mmap-seed/calibrate_fit.h"

namespace rseqmc::mmapseed {
namespace {

constexpr size_t kPage = 4096, kHuge = 2u << 20;

double NowNs() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<double>(ts.tv_sec) * 1e9 + static_cast<double>(ts.tv_nsec);
}

[[noreturn]] void Fail(const char* what) {
  std::fprintf(stderr, "mmap_calibrate: %s: %s\n", what, std::strerror(errno));
  std::exit(1);
}

// min over `reps` of body() / units, where body returns the ns it measured.
double Best(const char* what, double units, const std::function<double()>& body, int reps = 5) {
  std::fprintf(stderr, "calibrate: %-34s", what);
  double best = 1e300;
  for (int r = 0; r < reps; ++r) best = std::min(best, body() / units);
  std::fprintf(stderr, " %12.1f ns\n", best);
  return best;
}

char* Map(size_t bytes, int extra_flags) {
  void* p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | extra_flags, -1, 0);
  if (p == MAP_FAILED) Fail("mmap");
  return static_cast<char*>(p);
}

// Touches every `step` bytes of a fresh mapping (THP per `huge`); returns the ns.
double TouchFresh(size_t bytes, size_t step, bool huge) {
  const size_t extra = huge ? kHuge : 0;
  char* raw = Map(bytes + extra, 0);
  char* p = huge ? reinterpret_cast<char*>((reinterpret_cast<uintptr_t>(raw) + kHuge - 1) & ~(kHuge - 1)) : raw;
  if (huge && madvise(p, bytes, MADV_HUGEPAGE) != 0) Fail("madvise(MADV_HUGEPAGE)");
  const double t0 = NowNs();
  for (size_t off = 0; off < bytes; off += step) p[off] = 1;
  const double ns = NowNs() - t0;
  munmap(raw, bytes + extra);
  return ns;
}

// memset of an already-faulted mapping (the zeroing alone); returns the ns.
double ZeroPresent(size_t bytes, bool huge) {
  const size_t extra = huge ? kHuge : 0;
  char* raw = Map(bytes + extra, 0);
  char* p = huge ? reinterpret_cast<char*>((reinterpret_cast<uintptr_t>(raw) + kHuge - 1) & ~(kHuge - 1)) : raw;
  if (huge) madvise(p, bytes, MADV_HUGEPAGE);
  std::memset(p, 1, bytes);
  const double t0 = NowNs();
  std::memset(p, 0, bytes);
  asm volatile("" : : "r"(p) : "memory");
  const double ns = NowNs() - t0;
  munmap(raw, bytes + extra);
  return ns;
}

void Pin(int cpu) {
  cpu_set_t s;
  CPU_ZERO(&s);
  CPU_SET(cpu % std::max(1, static_cast<int>(std::thread::hardware_concurrency())), &s);
  pthread_setaffinity_np(pthread_self(), sizeof s, &s);
}

// Wake -> run: the waker stamps the clock and FUTEX_WAKEs a thread blocked
// in FUTEX_WAIT on another CPU, which stamps on return; the minimum of n
// (as for every figure: on a loaded host the median is the wait for a CPU,
// up to a tick, not the hand-off).
double Handoff(int n) {
  std::atomic<uint32_t> word{0};
  std::atomic<double> stamp{0};
  std::vector<double> lat;
  std::thread waiter([&] {
    Pin(1);
    for (int i = 0; i < n; ++i) {
      while (word.load() == 0) syscall(SYS_futex, &word, FUTEX_WAIT_PRIVATE, 0, nullptr, nullptr, 0);
      lat.push_back(NowNs() - stamp.load());
      word.store(0);
    }
  });
  Pin(0);
  for (int i = 0; i < n; ++i) {
    timespec pause{0, 200000};  // let the waiter block
    nanosleep(&pause, nullptr);
    stamp.store(NowNs());
    word.store(1);
    syscall(SYS_futex, &word, FUTEX_WAKE_PRIVATE, 1, nullptr, nullptr, 0);
    while (word.load() != 0) sched_yield();
  }
  waiter.join();
  std::sort(lat.begin(), lat.end());
  std::fprintf(stderr, "calibrate: %-34s %12.1f ns (min of %d; median %.1f)\n", "futex wake -> run on another CPU",
               lat.front(), n, lat[lat.size() / 2]);
  return lat.front();
}

MmapMeasurements Measure(size_t bytes) {
  MmapMeasurements m;
  const double pages = static_cast<double>(bytes / kPage), huges = static_cast<double>(bytes / kHuge);
  m.syscall_ns = Best("getppid", 100000, [] {
    const double t0 = NowNs();
    for (int i = 0; i < 100000; ++i) syscall(SYS_getppid);
    return NowNs() - t0;
  });
  m.mmap_ns = Best("mmap (nothing populated)", 1, [bytes] {
    const double t0 = NowNs();
    char* p = Map(bytes, 0);
    const double ns = NowNs() - t0;
    munmap(p, bytes);
    return ns;
  }, 50);
  m.munmap_ns = Best("munmap of one untouched page", 1, [] {
    char* p = Map(kPage, 0);
    const double t0 = NowNs();
    munmap(p, kPage);
    return NowNs() - t0;
  }, 50);
  if (prctl(PR_SET_THP_DISABLE, 1, 0, 0, 0) != 0) Fail("prctl(PR_SET_THP_DISABLE)");
  m.touch_4k_ns = Best("touch fault per 4 KiB page", pages, [bytes] { return TouchFresh(bytes, kPage, false); });
  m.zero_4k_ns = Best("zeroing per 4 KiB (memset)", pages, [bytes] { return ZeroPresent(bytes, false); });
  m.populate_4k_ns = Best("MAP_POPULATE per 4 KiB page", pages, [bytes] {
    const double t0 = NowNs();
    char* p = Map(bytes, MAP_POPULATE);
    const double ns = NowNs() - t0;
    munmap(p, bytes);
    return ns;
  });
  if (prctl(PR_SET_THP_DISABLE, 0, 0, 0, 0) != 0) Fail("prctl(PR_SET_THP_DISABLE, 0)");
  m.touch_2m_ns = Best("touch fault per 2 MiB THP", huges, [bytes] { return TouchFresh(bytes, kHuge, true); });
  m.zero_2m_ns = Best("zeroing per 2 MiB (memset)", huges, [bytes] { return ZeroPresent(bytes, true); });
  m.handoff_ns = Handoff(200);
  return m;
}

std::string Today() {
  char buf[64];
  const time_t now = time(nullptr);
  strftime(buf, sizeof buf, "%Y-%m-%d %H:%M UTC", gmtime(&now));
  return buf;
}

int Main(int argc, char** argv) {
  std::vector<std::string> pos;
  size_t mib = 64;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--mib") == 0 && i + 1 < argc) {
      mib = std::strtoul(argv[++i], nullptr, 10);
    } else {
      pos.push_back(argv[i]);
    }
  }
  if (pos.size() != 3 || mib < 2 || mib % 2 != 0 || pos[1] == pos[0] || pos[2] == pos[0]) {
    std::fprintf(stderr,
                 "usage: mmap_calibrate BASE_COST_MODEL OUT_MMAP_COSTS OUT_COST_MODEL [--mib N (even, >= 2)]\n"
                 "  e.g. mmap_calibrate tools/alloc/cost_model.txt mmap_costs.txt cost_model.txt\n"
                 "  (the outputs must differ from BASE_COST_MODEL)\n");
    return 2;
  }
  CostModel base;
  try {
    base = LoadCostModel(pos[0]);
  } catch (const InputError& e) {
    std::fprintf(stderr, "%s\n", e.what());
    return 2;
  }
  const MmapMeasurements m = Measure(mib << 20);
  utsname u{};
  uname(&u);
  char figures[512];
  std::snprintf(figures, sizeof figures,
                "Host figures (ns, min of repetitions): getppid %.1f, mmap %.1f, munmap %.1f, touch/4K %.1f, "
                "zero/4K %.1f, populate/4K %.1f, touch/2M %.1f, zero/2M %.1f, wake->run %.1f.",
                m.syscall_ns, m.mmap_ns, m.munmap_ns, m.touch_4k_ns, m.zero_4k_ns, m.populate_4k_ns, m.touch_2m_ns,
                m.zero_2m_ns, m.handoff_ns);
  const std::vector<std::string> header = {
      "Measured by tools/mmap-seed/mmap_calibrate (tools/mmap-seed/calibrate_fit.h: the fit), " + std::to_string(mib) +
          " MiB mappings.",
      "Measured " + Today() + " on " + u.nodename + ", Linux " + u.release + " " + u.machine + ", " +
          std::to_string(std::thread::hardware_concurrency()) + " CPUs.",
      figures};
  std::ofstream costs(pos[1]);
  costs << FormatMmapCosts(FitMmapCosts(m), header);
  std::vector<std::string> model_header = header;
  model_header.push_back("The general figures are " + pos[0] +
                         "'s; futex_wake_ns makes a simulated rwsem wake -> run take the measured hand-off; "
                         "clock_ns = 0 (the model's clock reads are instrumentation).");
  std::ofstream model(pos[2]);
  model << FormatCostModel(FitHandoff(base, m), model_header);
  if (!costs || !model) {
    std::fprintf(stderr, "mmap_calibrate: cannot write %s or %s\n", pos[1].c_str(), pos[2].c_str());
    return 1;
  }
  std::fprintf(stderr, "mmap_calibrate: wrote %s and %s\n", pos[1].c_str(), pos[2].c_str());
  return 0;
}

}  // namespace
}  // namespace rseqmc::mmapseed

int main(int argc, char** argv) { return rseqmc::mmapseed::Main(argc, argv); }
