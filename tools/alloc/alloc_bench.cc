// The real benchmark of issue 12 §3: every allocator variant of
// tools/alloc/alloc.h on this machine's kernel, with 1..N threads and with
// many more threads than CPUs, under a request workload:
//   each request allocates 16 objects (size classes 16/64/256/1024 B with
//   probability 1/2, 3/10, 3/20, 1/20: small objects dominate, as in the
//   size-class histograms tcmalloc and jemalloc publish), writes one word of
//   each, frees them (short lifetime: one request), and swaps one 64-byte
//   object in a ring of 8 per thread (freed 8 requests later) - the same mix
//   as tools/alloc/sim/alloc_workload.rsq.
// Each configuration runs in a child process (fork), so that its peak RSS and
// CPU time are its own. Reports, one CSV line each (stdout):
//   variant, threads, ops (allocs + frees), wall_s, ns_per_op (CPU time per
//   op: user + system, all threads), wall_ns_per_op (wall time per op of one
//   thread: threads * wall / ops, includes waiting for a CPU), cpu_s,
//   cached_bytes (held in caches at the end: the RSS proxy), peak_rss_kb,
//   aborts (rseq). Progress goes to stderr.
//
// Usage: alloc_bench [--threads 1,2,4,40] [--ops-per-thread N] [--variants a,b]
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "tools/alloc/alloc.h"

namespace rseqmc::alloc {
namespace {

constexpr int kPerRequest = 16;
constexpr int kRing = 8;

int ClassOf(uint64_t r) {
  const int x = static_cast<int>(r & 127);
  return x < 64 ? 0 : x < 102 ? 1 : x < 122 ? 2 : 3;
}

uint64_t Requests(Allocator* a, int id, long ops) {
  uint64_t rng = 0x5851F42D4C957F2Dull * (id + 1);
  void* ring[kRing] = {};
  uint64_t done = 0, requests = 0;
  std::pair<int, void*> held[kPerRequest];
  while (done < static_cast<uint64_t>(ops)) {
    for (auto& h : held) {
      rng = rng * 6364136223846793005ull + 1442695040888963407ull;
      h.first = ClassOf(rng >> 33);
      h.second = a->Alloc(h.first);
      *static_cast<volatile uint64_t*>(h.second) = done;
    }
    void*& r = ring[requests % kRing];
    if (r != nullptr) a->Free(1, r);
    r = a->Alloc(1);
    for (auto& h : held) a->Free(h.first, h.second);
    done += 2 * kPerRequest + 2;
    ++requests;
  }
  for (void* r : ring) {
    if (r != nullptr) a->Free(1, r);
  }
  return done;
}

struct Result {
  uint64_t ops = 0;
  double wall_s = 0, cpu_s = 0;
  uint64_t cached = 0, aborts = 0;
  long peak_rss_kb = 0;
  std::string error;
};

Result RunChild(Variant v, int threads, long ops_per_thread) {
  Result r;
  std::unique_ptr<Allocator> a;
  try {
    a = MakeAllocator(v);
  } catch (const std::exception& e) {
    r.error = e.what();
    return r;
  }
  std::vector<std::thread> ts;
  std::vector<uint64_t> done(threads);
  const auto t0 = std::chrono::steady_clock::now();
  for (int t = 0; t < threads; ++t) ts.emplace_back([&, t] { done[t] = Requests(a.get(), t, ops_per_thread); });
  for (auto& t : ts) t.join();
  r.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  for (uint64_t d : done) r.ops += d;
  rusage u;
  getrusage(RUSAGE_SELF, &u);
  r.cpu_s = u.ru_utime.tv_sec + u.ru_utime.tv_usec / 1e6 + u.ru_stime.tv_sec + u.ru_stime.tv_usec / 1e6;
  r.peak_rss_kb = u.ru_maxrss;
  r.cached = a->CachedBytes();
  r.aborts = a->Aborts();
  return r;
}

std::vector<std::string> Split(const std::string& s) {
  std::vector<std::string> out;
  std::stringstream ss(s);
  std::string x;
  while (std::getline(ss, x, ',')) out.push_back(x);
  return out;
}

}  // namespace
}  // namespace rseqmc::alloc

int main(int argc, char** argv) {
  using namespace rseqmc::alloc;
  std::vector<int> threads = {1, 2, 4, 40};
  long ops_per_thread = 2000000;
  std::vector<Variant> variants(kAllVariants.begin(), kAllVariants.end());
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    const bool has = i + 1 < argc;
    if (a == "--threads" && has) {
      threads.clear();
      for (const std::string& t : Split(argv[++i])) threads.push_back(std::atoi(t.c_str()));
    } else if (a == "--ops-per-thread" && has) {
      ops_per_thread = std::atol(argv[++i]);
    } else if (a == "--variants" && has) {
      variants.clear();
      for (const std::string& n : Split(argv[++i])) {
        bool found = false;
        for (Variant v : kAllVariants) {
          if (n == VariantName(v)) {
            variants.push_back(v);
            found = true;
          }
        }
        if (!found) {
          std::fprintf(stderr, "alloc_bench: unknown variant '%s'\n", n.c_str());
          return 2;
        }
      }
    } else {
      std::fprintf(stderr, "usage: alloc_bench [--threads 1,2,4,40] [--ops-per-thread N] [--variants a,b]\n");
      return 2;
    }
  }
  for (int t : threads) {
    if (t < 1 || t > 4096) {
      std::fprintf(stderr, "alloc_bench: --threads wants counts in 1..4096\n");
      return 2;
    }
  }
  if (ops_per_thread < 1) {
    std::fprintf(stderr, "alloc_bench: --ops-per-thread wants a positive count\n");
    return 2;
  }
  std::printf("variant,threads,ops,wall_s,ns_per_op,wall_ns_per_op,cpu_s,cached_bytes,peak_rss_kb,aborts\n");
  std::fflush(stdout);
  const size_t total = threads.size() * variants.size();
  size_t k = 0;
  for (Variant v : variants) {
    for (int t : threads) {
      ++k;
      std::fprintf(stderr, "[%zu/%zu] %-13s %3d threads ... ", k, total, VariantName(v), t);
      int fd[2];
      if (pipe(fd) != 0) return 3;
      const pid_t pid = fork();
      if (pid == 0) {
        close(fd[0]);
        const Result r = RunChild(v, t, ops_per_thread);
        char line[512];
        const int n = r.error.empty()
                          ? std::snprintf(line, sizeof line, "%s,%d,%llu,%.4f,%.2f,%.2f,%.4f,%llu,%ld,%llu\n",
                                          VariantName(v), t, static_cast<unsigned long long>(r.ops), r.wall_s,
                                          r.cpu_s * 1e9 / static_cast<double>(r.ops),
                                          r.wall_s * 1e9 * t / static_cast<double>(r.ops), r.cpu_s,
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
      if (!WIFEXITED(status) || WEXITSTATUS(status) != 0 || out.empty()) {
        std::fprintf(stderr, "failed (status %d)\n", status);
        return 3;
      }
      if (out[0] == '#') {
        std::fprintf(stderr, "skipped: %s", out.c_str() + 1);
        continue;
      }
      std::fputs(out.c_str(), stdout);
      std::fflush(stdout);
      std::fprintf(stderr, "done\n");
    }
  }
  return 0;
}
