// The seed experiment of issue 13 ("mmap() scalability in the presence of the
// MAP_POPULATE flag", Jan 2013), re-written from its description
// (../shared/reference/mmap-populate.md §5): N threads, released together by
// a barrier, each do M anonymous private mmap()s of S bytes and never unmap.
//   none      mmap only
//   touch     mmap, then write one byte per 4 KiB page
//   populate  mmap with MAP_POPULATE
// Optional munmap-heavy competitor threads mmap()+munmap() one page in a loop
// while the workers run and report their worst call (the mmap_lock writers
// that patch 0003 is about). Every repetition runs in a fresh child process
// (nothing is unmapped, so each leaves N*M*S bytes mapped). THP is disabled
// per process (prctl PR_SET_THP_DISABLE) unless --thp, to match the 2013
// 4 KiB-page case. Time: CLOCK_MONOTONIC per thread around its M mmaps; a
// repetition's time is its slowest thread (the wall time of the parallel
// part), as the seed reported.
//
// --lock-drops FILE (e.g. /proc/sys/vm/populate_mmap_lock_drops, the counter
// of kernel patches 0003/0004 in the QEMU guest) reads that counter before
// and after each repetition and records its growth in the lock_drops column
// (empty without the option).
//
// Output: one CSV row per repetition on stdout (or --csv FILE), a progress
// bar on stderr, and a summary line per cell (median, min, max).
// Exit status: 0 ok, 1 an mmap failed or a child died, 2 bad usage.
#include <pthread.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <string>
#include <vector>

namespace {

constexpr size_t kPage = 4096;

enum class Mode { kNone, kTouch, kPopulate };

struct Options {
  std::vector<Mode> modes = {Mode::kNone, Mode::kTouch, Mode::kPopulate};
  std::vector<int> threads = {4};
  int maps = 10;
  size_t size = 64ul << 20;
  int competitors = 0;
  int reps = 5;
  bool thp = false;
  bool progress = true;
  std::string csv;
  std::string label = "host";
  std::string lock_drops;  // a counter file to read around each repetition, or empty
};

const char* ModeName(Mode m) {
  switch (m) {
    case Mode::kNone: return "none";
    case Mode::kTouch: return "touch";
    case Mode::kPopulate: return "populate";
  }
  return "?";
}

double Now() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) / 1e9;
}

[[noreturn]] void Usage(const char* why) {
  std::fprintf(stderr,
               "mmap_seed_bench: %s\n"
               "usage: mmap_seed_bench [--mode none|touch|populate|all] [--threads N[,N...]] [--maps M]\n"
               "                       [--size BYTES[K|M|G]] [--competitors K] [--reps R] [--thp]\n"
               "                       [--csv FILE] [--label NAME] [--lock-drops FILE] [--no-progress]\n",
               why);
  std::exit(2);
}

// "64M" -> 67108864; 0 on a malformed or zero size.
size_t ParseSize(const char* s) {
  char* end = nullptr;
  errno = 0;
  unsigned long long v = std::strtoull(s, &end, 10);
  if (errno != 0 || end == s || v == 0) return 0;
  unsigned shift = 0;
  if (*end == 'K') shift = 10, ++end;
  else if (*end == 'M') shift = 20, ++end;
  else if (*end == 'G') shift = 30, ++end;
  if (*end != '\0' || v > (~0ull >> shift)) return 0;
  return static_cast<size_t>(v << shift);
}

int ParsePositive(const char* s, int max) {
  char* end = nullptr;
  errno = 0;
  const long v = std::strtol(s, &end, 10);
  if (errno != 0 || end == s || *end != '\0' || v < 1 || v > max) return 0;
  return static_cast<int>(v);
}

Options Parse(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto value = [&]() -> const char* {
      if (i + 1 >= argc) Usage((a + " needs a value").c_str());
      return argv[++i];
    };
    if (a == "--mode") {
      const std::string m = value();
      if (m == "all") o.modes = {Mode::kNone, Mode::kTouch, Mode::kPopulate};
      else if (m == "none") o.modes = {Mode::kNone};
      else if (m == "touch") o.modes = {Mode::kTouch};
      else if (m == "populate") o.modes = {Mode::kPopulate};
      else Usage("--mode is none, touch, populate or all");
    } else if (a == "--threads") {
      o.threads.clear();
      std::string list = value();
      for (size_t at = 0; at <= list.size();) {
        const size_t comma = std::min(list.find(',', at), list.size());
        const int n = ParsePositive(list.substr(at, comma - at).c_str(), 1024);
        if (n == 0) Usage("--threads takes numbers 1..1024, comma-separated");
        o.threads.push_back(n);
        at = comma + 1;
      }
    } else if (a == "--maps") {
      if ((o.maps = ParsePositive(value(), 1 << 20)) == 0) Usage("--maps takes 1..1048576");
    } else if (a == "--size") {
      if ((o.size = ParseSize(value())) == 0) Usage("--size takes a positive byte count, optionally K, M or G");
    } else if (a == "--competitors") {
      const char* v = value();
      o.competitors = std::strcmp(v, "0") == 0 ? 0 : ParsePositive(v, 64);
      if (o.competitors == 0 && std::strcmp(v, "0") != 0) Usage("--competitors takes 0..64");
    } else if (a == "--reps") {
      if ((o.reps = ParsePositive(value(), 10000)) == 0) Usage("--reps takes 1..10000");
    } else if (a == "--thp") {
      o.thp = true;
    } else if (a == "--no-progress") {
      o.progress = false;
    } else if (a == "--csv") {
      o.csv = value();
    } else if (a == "--label") {
      o.label = value();
    } else if (a == "--lock-drops") {
      o.lock_drops = value();
    } else {
      Usage(("unknown argument " + a).c_str());
    }
  }
  return o;
}

struct Shared {
  Mode mode;
  int maps;
  size_t size;
  pthread_barrier_t start;
  volatile int done = 0;
};

struct Worker {
  Shared* shared;
  double seconds = 0;
  bool failed = false;
};

void* RunWorker(void* arg) {
  Worker* w = static_cast<Worker*>(arg);
  Shared* s = w->shared;
  const int flags = MAP_PRIVATE | MAP_ANONYMOUS | (s->mode == Mode::kPopulate ? MAP_POPULATE : 0);
  pthread_barrier_wait(&s->start);
  const double t0 = Now();
  for (int i = 0; i < s->maps; ++i) {
    char* p = static_cast<char*>(mmap(nullptr, s->size, PROT_READ | PROT_WRITE, flags, -1, 0));
    if (p == MAP_FAILED) {
      w->failed = true;
      break;
    }
    if (s->mode == Mode::kTouch) {
      for (size_t off = 0; off < s->size; off += kPage) p[off] = 1;
    }
  }
  w->seconds = Now() - t0;
  return nullptr;
}

struct Competitor {
  Shared* shared;
  long calls = 0;
  double worst = 0;
};

void* RunCompetitor(void* arg) {
  Competitor* c = static_cast<Competitor*>(arg);
  pthread_barrier_wait(&c->shared->start);
  while (!c->shared->done) {
    const double t0 = Now();
    void* p = mmap(nullptr, kPage, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p != MAP_FAILED) munmap(p, kPage);
    c->worst = std::max(c->worst, Now() - t0);
    ++c->calls;
  }
  return nullptr;
}

// One repetition's result, as the child sends it to the parent.
struct RepResult {
  double slowest = 0;
  double fastest = 0;
  double competitor_worst = 0;
  long competitor_calls = 0;
  int failed = 0;
};

// Runs one repetition in this (fresh) process.
RepResult RunRep(const Options& o, Mode mode, int nthreads) {
  if (!o.thp) prctl(PR_SET_THP_DISABLE, 1, 0, 0, 0);
  Shared s;
  s.mode = mode;
  s.maps = o.maps;
  s.size = o.size;
  pthread_barrier_init(&s.start, nullptr, static_cast<unsigned>(nthreads + o.competitors));
  std::vector<Worker> workers(static_cast<size_t>(nthreads), Worker{&s});
  std::vector<Competitor> comps(static_cast<size_t>(o.competitors), Competitor{&s});
  std::vector<pthread_t> wt(workers.size()), ct(comps.size());
  for (size_t i = 0; i < comps.size(); ++i) pthread_create(&ct[i], nullptr, RunCompetitor, &comps[i]);
  for (size_t i = 0; i < workers.size(); ++i) pthread_create(&wt[i], nullptr, RunWorker, &workers[i]);
  for (pthread_t t : wt) pthread_join(t, nullptr);
  s.done = 1;
  for (pthread_t t : ct) pthread_join(t, nullptr);
  RepResult r;
  r.fastest = workers.front().seconds;
  for (const Worker& w : workers) {
    r.slowest = std::max(r.slowest, w.seconds);
    r.fastest = std::min(r.fastest, w.seconds);
    r.failed += w.failed ? 1 : 0;
  }
  for (const Competitor& c : comps) {
    r.competitor_worst = std::max(r.competitor_worst, c.worst);
    r.competitor_calls += c.calls;
  }
  return r;
}

// Forks a child for one repetition; false if it failed or died.
bool RunRepInChild(const Options& o, Mode mode, int nthreads, RepResult* out) {
  int fd[2];
  if (pipe(fd) != 0) return false;
  const pid_t pid = fork();
  if (pid < 0) return false;
  if (pid == 0) {
    close(fd[0]);
    const RepResult r = RunRep(o, mode, nthreads);
    const ssize_t n = write(fd[1], &r, sizeof r);
    _exit(n == static_cast<ssize_t>(sizeof r) && r.failed == 0 ? 0 : 1);
  }
  close(fd[1]);
  const ssize_t n = read(fd[0], out, sizeof *out);
  close(fd[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  return n == static_cast<ssize_t>(sizeof *out) && WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

void Progress(const Options& o, int done, int total, const char* what) {
  if (!o.progress) return;
  constexpr int kWidth = 30;
  const int filled = total == 0 ? kWidth : done * kWidth / total;
  std::fprintf(stderr, "\r[%.*s%.*s] %d/%d %-28s", filled, "##############################", kWidth - filled,
               "..............................", done, total, what);
  if (done == total) std::fputc('\n', stderr);
  std::fflush(stderr);
}

// The number in the counter file @path; false if it cannot be read.
bool ReadCounter(const std::string& path, long long* value) {
  FILE* f = std::fopen(path.c_str(), "r");
  if (f == nullptr) return false;
  const bool ok = std::fscanf(f, "%lld", value) == 1;
  std::fclose(f);
  return ok;
}

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 == 1 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

}  // namespace

int main(int argc, char** argv) {
  const Options o = Parse(argc, argv);
  FILE* csv = stdout;
  if (!o.csv.empty() && (csv = std::fopen(o.csv.c_str(), "w")) == nullptr) {
    std::fprintf(stderr, "mmap_seed_bench: cannot write %s: %s\n", o.csv.c_str(), std::strerror(errno));
    return 2;
  }
  long long drops_before = 0;
  if (!o.lock_drops.empty() && !ReadCounter(o.lock_drops, &drops_before)) {
    std::fprintf(stderr, "mmap_seed_bench: --lock-drops %s: cannot read a number from it (%s); give the counter file"
                 " of kernel patch 0004, e.g. /proc/sys/vm/populate_mmap_lock_drops\n",
                 o.lock_drops.c_str(), std::strerror(errno));
    return 2;
  }
  std::fprintf(csv, "label,mode,threads,maps,size_bytes,competitors,thp,rep,slowest_s,fastest_s,"
                    "competitor_calls,competitor_worst_ms,lock_drops\n");
  const int total = static_cast<int>(o.modes.size() * o.threads.size()) * o.reps;
  int done = 0, bad = 0;
  std::string summary;
  for (int nthreads : o.threads) {
    for (Mode mode : o.modes) {
      std::vector<double> times;
      for (int rep = 0; rep < o.reps; ++rep) {
        char what[64];
        std::snprintf(what, sizeof what, "%s %d threads rep %d", ModeName(mode), nthreads, rep + 1);
        Progress(o, done, total, what);
        RepResult r;
        const bool ran = RunRepInChild(o, mode, nthreads, &r);
        char drops[32] = "";  // empty: no --lock-drops
        long long drops_after = 0;
        if (!o.lock_drops.empty() && ReadCounter(o.lock_drops, &drops_after)) {
          std::snprintf(drops, sizeof drops, "%lld", drops_after - drops_before);
          drops_before = drops_after;
        }
        if (!ran) {
          std::fprintf(stderr, "\nmmap_seed_bench: %s: an mmap failed or the child died (memory? --size %zu x %d x %d)\n",
                       what, o.size, o.maps, nthreads);
          ++bad;
        } else {
          times.push_back(r.slowest);
          std::fprintf(csv, "%s,%s,%d,%d,%zu,%d,%d,%d,%.6f,%.6f,%ld,%.3f,%s\n", o.label.c_str(), ModeName(mode),
                       nthreads, o.maps, o.size, o.competitors, o.thp ? 1 : 0, rep, r.slowest, r.fastest,
                       r.competitor_calls, r.competitor_worst * 1e3, drops);
          std::fflush(csv);
        }
        ++done;
      }
      if (!times.empty()) {
        char line[160];
        std::snprintf(line, sizeof line, "%-6s %-9s %3d threads: median %.3f s  min %.3f  max %.3f  (%zu reps)\n",
                      o.label.c_str(), ModeName(mode), nthreads, Median(times),
                      *std::min_element(times.begin(), times.end()), *std::max_element(times.begin(), times.end()),
                      times.size());
        summary += line;
      }
    }
  }
  Progress(o, total, total, "done");
  std::fputs(summary.c_str(), stderr);
  if (csv != stdout) std::fclose(csv);
  return bad == 0 ? 0 : 1;
}
