// The real benchmark of issue 12 §3: every allocator variant of
// tools/alloc/alloc.h on this machine's kernel, with 1..N threads and with
// many more threads than CPUs, under a request workload (seeded, the same
// for every variant and run):
//   sizes: a power-of-two bucket drawn by the weights of kSizeMix below, the
//   byte count uniform inside it (then the allocator's size class). Small
//   objects dominate, falling roughly geometrically towards 2 KiB, the shape
//   the allocation-size histograms published for tcmalloc and jemalloc show
//   (e.g. Hunter et al., "Beyond malloc efficiency to fleet efficiency",
//   OSDI '21; tcmalloc docs/stats.md). The weights are our choice, not data
//   from those papers.
//   lifetimes: each request allocates 16 objects and writes a word of each;
//   13 of 16 die at the request's end (short: most objects die young, the
//   generational hypothesis), 2 of 16 go into a per-thread ring of 16 slots
//   (freed ~8 requests later), 1 of 16 into a ring of 256 (freed ~256
//   requests later: the long-lived set behind RSS); kinds drawn at random.
// Each configuration runs in a child process (fork), so that its peak RSS and
// CPU time are its own. Reports, one CSV line each (stdout):
//   variant, cpu_read (percpu_rseq's CPU-number read, else "-"), threads,
//   ops (allocs + frees), wall_s, ns_per_op (CPU time per op: user + system,
//   all threads), wall_ns_per_op (wall time per op of one thread: threads *
//   wall / ops, includes waiting for a CPU), cpu_s, cached_bytes (held in
//   caches at the end: the RSS proxy), peak_rss_kb (getrusage ru_maxrss of
//   the child), aborts (rseq aborts; preempt_lock: operations restarted by
//   the signal handler). Progress goes to stderr. A variant that cannot run
//   here (preempt_lock without kernel/patches/0005, percpu_rseq without
//   rseq) is skipped with the reason on stderr, not a failure.
// --check runs the allocator oracle after each configuration: per size class,
// the objects in caches plus those in the arena are exactly the objects the
// arena created, each once (every request frees what it allocated); a
// violation names the class and fails the run (exit 3). kernel/qemu/run uses
// it for preempt_lock in the guest.
//
// Usage: alloc_bench [--threads 1,2,4,40] [--ops-per-thread N] [--variants a,b]
//                    [--cpu-reads cpu_id,lsl,rdpid,rdtscp,sched_getcpu|all] [--seed N] [--check]
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iterator>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "tools/alloc/alloc.h"

namespace rseqmc::alloc {
namespace {

constexpr int kPerRequest = 16;
constexpr int kMediumRing = 16;
constexpr int kLongRing = 256;

// Size buckets (lo, hi] bytes and their weight in 1/1000.
struct Bucket {
  uint32_t lo, hi, weight;
};
constexpr Bucket kSizeMix[] = {{0, 8, 100},     {8, 16, 200},    {16, 32, 220},   {32, 64, 160},      {64, 128, 120},
                               {128, 256, 80},  {256, 512, 60},  {512, 1024, 40}, {1024, 2048, 20}};

struct Rng {
  uint64_t s;
  uint32_t Next() {
    s = s * 6364136223846793005ull + 1442695040888963407ull;
    return static_cast<uint32_t>(s >> 33);
  }
};

size_t DrawSize(Rng& r) {
  uint32_t x = r.Next() % 1000;
  for (const Bucket& b : kSizeMix) {
    if (x < b.weight) return b.lo + 1 + r.Next() % (b.hi - b.lo);
    x -= b.weight;
  }
  return 16;  // unreachable: the weights sum to 1000
}

struct Obj {
  void* p = nullptr;
  size_t bytes = 0;
};

// Puts `o` into `ring` at the next slot, freeing the object it replaces.
void Keep(Allocator* a, std::vector<Obj>& ring, size_t& next, Obj o) {
  Obj& slot = ring[next++ % ring.size()];
  if (slot.p != nullptr) a->Free(slot.p, slot.bytes);
  slot = o;
}

uint64_t Requests(Allocator* a, int id, long ops, uint64_t seed) {
  Rng rng{(seed + 1) * 0x5851F42D4C957F2Dull * (id + 1)};
  std::vector<Obj> medium(kMediumRing), longer(kLongRing);
  size_t next_medium = 0, next_long = 0;
  uint64_t done = 0;
  Obj held[kPerRequest];
  while (done < static_cast<uint64_t>(ops)) {
    for (Obj& h : held) {
      h.bytes = DrawSize(rng);
      h.p = a->Alloc(h.bytes);
      *static_cast<volatile uint64_t*>(h.p) = done;
    }
    done += kPerRequest;
    for (Obj& h : held) {
      const uint32_t kind = rng.Next() % 16;
      if (kind < 2) {
        done += medium[next_medium % kMediumRing].p != nullptr;
        Keep(a, medium, next_medium, h);
      } else if (kind < 3) {
        done += longer[next_long % kLongRing].p != nullptr;
        Keep(a, longer, next_long, h);
      } else {
        a->Free(h.p, h.bytes);
        ++done;
      }
    }
  }
  for (auto* ring : {&medium, &longer}) {
    for (const Obj& o : *ring) {
      if (o.p != nullptr) a->Free(o.p, o.bytes);
    }
  }
  return done;
}

struct Result {
  uint64_t ops = 0;
  double wall_s = 0, cpu_s = 0;
  uint64_t cached = 0, aborts = 0;
  long peak_rss_kb = 0;
  std::string error;           // the variant cannot run here
  std::string oracle_failure;  // --check found an object lost or held twice
};

// The allocator oracle (every object freed): "" or what is wrong.
std::string Oracle(const Allocator& a) {
  for (int cls = 0; cls < kNumClasses; ++cls) {
    std::vector<void*> all;
    a.Collect(cls, &all);
    const std::vector<void*> free = a.arena().FreeObjects(cls);
    all.insert(all.end(), free.begin(), free.end());
    std::sort(all.begin(), all.end());
    const bool twice = std::adjacent_find(all.begin(), all.end()) != all.end();
    if (twice || all.size() != a.arena().Created(cls)) {
      return "class " + std::to_string(cls) + ": " + std::to_string(all.size()) + " objects in caches and arena, " +
             std::to_string(a.arena().Created(cls)) + " created" + (twice ? ", one held twice" : ", objects lost");
    }
  }
  return "";
}

Result RunChild(Variant v, CpuRead cr, int threads, long ops_per_thread, uint64_t seed, bool check) {
  Result r;
  std::unique_ptr<Allocator> a;
  try {
    a = MakeAllocator(v, cr);
  } catch (const std::exception& e) {
    r.error = e.what();
    return r;
  }
  std::vector<std::thread> ts;
  std::vector<uint64_t> done(threads);
  const auto t0 = std::chrono::steady_clock::now();
  for (int t = 0; t < threads; ++t) ts.emplace_back([&, t] { done[t] = Requests(a.get(), t, ops_per_thread, seed); });
  for (auto& t : ts) t.join();
  r.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  for (uint64_t d : done) r.ops += d;
  rusage u;
  getrusage(RUSAGE_SELF, &u);
  r.cpu_s = u.ru_utime.tv_sec + u.ru_utime.tv_usec / 1e6 + u.ru_stime.tv_sec + u.ru_stime.tv_usec / 1e6;
  r.peak_rss_kb = u.ru_maxrss;
  r.cached = a->CachedBytes();
  r.aborts = a->Aborts();
  if (check) r.oracle_failure = Oracle(*a);
  return r;
}

std::vector<std::string> Split(const std::string& s) {
  std::vector<std::string> out;
  std::stringstream ss(s);
  std::string x;
  while (std::getline(ss, x, ',')) out.push_back(x);
  return out;
}

struct Options {
  std::vector<int> threads = {1, 2, 4, 40};
  long ops_per_thread = 2000000;
  uint64_t seed = 1;
  std::vector<Variant> variants{kAllVariants.begin(), kAllVariants.end()};
  std::vector<CpuRead> cpu_reads = {CpuRead::kRseqCpuId};
  bool check = false;
};

constexpr const char* kUsage =
    "usage: alloc_bench [--threads 1,2,4,40] [--ops-per-thread N] [--variants a,b]\n"
    "                   [--cpu-reads cpu_id,lsl,rdpid,rdtscp,sched_getcpu|all] [--seed N] [--check]\n";

// Parses argv into `o`; an error message (exit 2) or "".
std::string Parse(int argc, char** argv, Options& o) {
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--check") {
      o.check = true;
      continue;
    }
    static const std::string kTakesValue[] = {"--threads", "--ops-per-thread", "--seed", "--variants", "--cpu-reads"};
    if (std::find(std::begin(kTakesValue), std::end(kTakesValue), a) == std::end(kTakesValue)) return kUsage;
    if (i + 1 >= argc) return "alloc_bench: " + a + " wants a value\n";
    const std::string val = argv[++i];
    if (a == "--threads") {
      o.threads.clear();
      for (const std::string& t : Split(val)) o.threads.push_back(std::atoi(t.c_str()));
    } else if (a == "--ops-per-thread") {
      o.ops_per_thread = std::atol(val.c_str());
    } else if (a == "--seed") {
      if (val.empty() || val.find_first_not_of("0123456789") != std::string::npos) {
        return "alloc_bench: --seed wants a non-negative integer, not '" + val + "'\n";
      }
      o.seed = std::strtoull(val.c_str(), nullptr, 10);
    } else if (a == "--variants") {
      o.variants.clear();
      for (const std::string& n : Split(val)) {
        const auto* it = std::find_if(kAllVariants.begin(), kAllVariants.end(), [&](Variant v) { return n == VariantName(v); });
        if (it == kAllVariants.end()) return "alloc_bench: unknown variant '" + n + "'\n";
        o.variants.push_back(*it);
      }
    } else if (a == "--cpu-reads") {
      o.cpu_reads.clear();
      for (const std::string& n : Split(val)) {
        const size_t before = o.cpu_reads.size();
        for (CpuRead r : kAllCpuReads) {
          if (n == "all" || n == CpuReadName(r)) o.cpu_reads.push_back(r);
        }
        if (o.cpu_reads.size() == before) {
          return "alloc_bench: unknown CPU read '" + n + "' (cpu_id, lsl, rdpid, rdtscp, sched_getcpu, all)\n";
        }
      }
    } else {
      return kUsage;
    }
  }
  for (int t : o.threads) {
    if (t < 1 || t > 4096) return "alloc_bench: --threads wants counts in 1..4096\n";
  }
  if (o.ops_per_thread < 1) return "alloc_bench: --ops-per-thread wants a positive count\n";
  return "";
}

// Runs one configuration in a child; its CSV line, "#why" when it cannot run
// here, or "" when the child failed.
std::string RunInChild(Variant v, CpuRead cr, int threads, const Options& o) {
  int fd[2];
  if (pipe(fd) != 0) return "";
  const pid_t pid = fork();
  if (pid == 0) {
    close(fd[0]);
    const Result r = RunChild(v, cr, threads, o.ops_per_thread, o.seed, o.check);
    if (!r.oracle_failure.empty()) {
      std::fprintf(stderr, "allocator oracle: FAIL: %s, %d threads: %s\n", VariantName(v), threads,
                   r.oracle_failure.c_str());
      _exit(4);
    }
    char line[512];
    const char* read = v == Variant::kPerCpuRseq ? CpuReadName(cr) : "-";
    const int n = r.error.empty()
                      ? std::snprintf(line, sizeof line, "%s,%s,%d,%llu,%.4f,%.2f,%.2f,%.4f,%llu,%ld,%llu\n",
                                      VariantName(v), read, threads, static_cast<unsigned long long>(r.ops), r.wall_s,
                                      r.cpu_s * 1e9 / static_cast<double>(r.ops),
                                      r.wall_s * 1e9 * threads / static_cast<double>(r.ops), r.cpu_s,
                                      static_cast<unsigned long long>(r.cached), r.peak_rss_kb,
                                      static_cast<unsigned long long>(r.aborts))
                      : std::snprintf(line, sizeof line, "#%s\n", r.error.c_str());
    if (write(fd[1], line, n) != n) _exit(3);
    _exit(0);
  }
  close(fd[1]);
  std::string out;
  char buf[512];
  ssize_t n;
  while ((n = read(fd[0], buf, sizeof buf)) > 0) out.append(buf, n);
  close(fd[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) return "";
  return out;
}

}  // namespace
}  // namespace rseqmc::alloc

int main(int argc, char** argv) {
  using namespace rseqmc::alloc;
  Options o;
  if (const std::string err = Parse(argc, argv, o); !err.empty()) {
    std::fputs(err.c_str(), stderr);
    return 2;
  }
  std::vector<std::pair<Variant, CpuRead>> configs;
  for (Variant v : o.variants) {
    if (v != Variant::kPerCpuRseq) configs.emplace_back(v, CpuRead::kRseqCpuId);
    else for (CpuRead r : o.cpu_reads) configs.emplace_back(v, r);
  }
  std::printf("variant,cpu_read,threads,ops,wall_s,ns_per_op,wall_ns_per_op,cpu_s,cached_bytes,peak_rss_kb,aborts\n");
  std::fflush(stdout);
  const size_t total = o.threads.size() * configs.size();
  size_t k = 0;
  for (const auto& [v, cr] : configs) {
    for (int t : o.threads) {
      std::fprintf(stderr, "[%zu/%zu] %-13s %-12s %3d threads ... ", ++k, total, VariantName(v),
                   v == Variant::kPerCpuRseq ? CpuReadName(cr) : "", t);
      const std::string out = RunInChild(v, cr, t, o);
      if (out.empty()) {
        std::fprintf(stderr, "failed\n");
        return 3;
      }
      if (out[0] == '#') {
        std::fprintf(stderr, "skipped: %s", out.c_str() + 1);
        continue;
      }
      std::fputs(out.c_str(), stdout);
      std::fflush(stdout);
      std::fprintf(stderr, o.check ? "done, allocator oracle ok\n" : "done\n");
    }
  }
  return 0;
}
