// The allocator library of tools/alloc (issue 12 §1): sizes map to the
// documented size classes; under threads, every variant hands each object to
// one owner at a time and loses none: after the threads stop, per size class,
// the objects in caches plus those in the arena are exactly the objects the
// arena ever created for that class, each once; a single-thread sequence
// gives exact per-class counts.
#include <pthread.h>
#include <sched.h>
#include <sys/wait.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "tools/alloc/alloc.h"

namespace rseqmc::alloc {
namespace {

class AllocLib : public ::testing::TestWithParam<Variant> {};

std::unique_ptr<Allocator> MakeOrSkip(Variant v, std::string* skip) {
  try {
    return MakeAllocator(v);
  } catch (const std::runtime_error& e) {
    *skip = e.what();
    return nullptr;
  }
}

// Pins the calling thread to the CPU it runs on; restores the old mask when
// destroyed (the per-CPU variants then see one CPU throughout).
class PinHere {
 public:
  PinHere() {
    pthread_getaffinity_np(pthread_self(), sizeof old_, &old_);
    cpu_set_t one;
    CPU_ZERO(&one);
    CPU_SET(sched_getcpu(), &one);
    pthread_setaffinity_np(pthread_self(), sizeof one, &one);
  }
  ~PinHere() { pthread_setaffinity_np(pthread_self(), sizeof old_, &old_); }

 private:
  cpu_set_t old_;
};

// Each thread keeps up to 48 objects live, writing its tag into each while it
// owns it and checking the tag before freeing: an object handed to two
// threads at once is overwritten by the other and caught.
void Worker(Allocator* a, int id, int ops, std::atomic<int64_t>* duplicates) {
  uint64_t rng = 0x9e3779b97f4a7c15ull * (id + 1);
  struct Live {
    size_t bytes;
    uint64_t* p;
  };
  std::vector<Live> live;
  const uint64_t tag = 0xA110C000ull + id;
  for (int i = 0; i < ops; ++i) {
    rng = rng * 6364136223846793005ull + 1442695040888963407ull;
    const bool do_free = !live.empty() && (live.size() >= 48 || ((rng >> 40) & 1));
    if (do_free) {
      const size_t k = (rng >> 20) % live.size();
      const Live l = live[k];
      if (*l.p != tag) duplicates->fetch_add(1);
      *l.p = 0;
      a->Free(l.p, l.bytes);
      live[k] = live.back();
      live.pop_back();
    } else {
      const size_t bytes = (rng >> 50) % (kMaxSmallBytes + 1);  // every class, 0 B included
      uint64_t* p = static_cast<uint64_t*>(a->Alloc(bytes));
      *p = tag;
      live.push_back({bytes, p});
      if (i % 97 == 0) sched_yield();  // let the threads of a CPU interleave
    }
  }
  for (const Live& l : live) {
    if (*l.p != tag) duplicates->fetch_add(1);
    a->Free(l.p, l.bytes);
  }
}

TEST_P(AllocLib, NoObjectLostOrHandedOutTwiceUnderThreads) {
  std::string skip;
  std::unique_ptr<Allocator> a = MakeOrSkip(GetParam(), &skip);
  if (!a) GTEST_SKIP() << skip;
  constexpr int kThreads = 8, kOps = 60000;
  std::atomic<int64_t> duplicates{0};
  std::vector<std::thread> ts;
  for (int t = 0; t < kThreads; ++t) ts.emplace_back(Worker, a.get(), t, kOps, &duplicates);
  for (std::thread& t : ts) t.join();
  EXPECT_EQ(duplicates.load(), 0);
  uint64_t cached_bytes = 0;
  for (int cls = 0; cls < kNumClasses; ++cls) {
    std::vector<void*> all;
    a->Collect(cls, &all);
    cached_bytes += all.size() * kClassBytes[cls];
    const std::vector<void*> free = a->arena().FreeObjects(cls);
    all.insert(all.end(), free.begin(), free.end());
    const std::set<void*> distinct(all.begin(), all.end());
    EXPECT_EQ(distinct.size(), all.size()) << "class " << cls << ": an object is held twice";
    EXPECT_EQ(all.size(), a->arena().Created(cls)) << "class " << cls << ": objects lost";
    EXPECT_GT(a->arena().Created(cls), 0u);
  }
  EXPECT_EQ(a->CachedBytes(), cached_bytes);
}

TEST_P(AllocLib, SingleThreadReusesTheCachedObject) {
  std::string skip;
  std::unique_ptr<Allocator> a = MakeOrSkip(GetParam(), &skip);
  if (!a) GTEST_SKIP() << skip;
  PinHere pin;
  void* p = a->Alloc(240);  // class 12, 256 B
  EXPECT_EQ(a->CachedBytes(), (kBatch - 1) * 256u);  // the refill: a batch, one handed out
  a->Free(p, 240);
  EXPECT_EQ(a->CachedBytes(), kBatch * 256u);
  EXPECT_EQ(a->Alloc(256), p);  // LIFO, the same class
  EXPECT_EQ(a->arena().Created(12), static_cast<uint64_t>(kBatch));
}

// Per class, one thread: 100 allocations of a size inside the class, then
// their 100 frees. Refills at allocations 1, 33, 65, 97 carve 4 batches: 128
// objects of that class and none of any other. The frees fill the cache to
// kCacheCap = 64 and flush kBatch = 32 to the arena whenever it is full: 64
// cached, 64 in the arena (the shared CAS cache holds up to 512 per class:
// all 128 cached). Every object once, none lost.
TEST_P(AllocLib, EachClassExactCountsAfterAllocsAndFrees) {
  std::string skip;
  std::unique_ptr<Allocator> a = MakeOrSkip(GetParam(), &skip);
  if (!a) GTEST_SKIP() << skip;
  PinHere pin;
  const uint64_t cached_expected = GetParam() == Variant::kSharedCas ? 128 : 64;
  uint64_t cached_bytes = 0;
  for (int cls = 0; cls < kNumClasses; ++cls) {
    SCOPED_TRACE("class " + std::to_string(cls) + " (" + std::to_string(kClassBytes[cls]) + " B)");
    const size_t bytes = cls == 0 ? 1 : kClassBytes[cls - 1] + 1;  // the smallest size of the class
    std::vector<void*> got;
    for (int i = 0; i < 100; ++i) got.push_back(a->Alloc(bytes));
    EXPECT_EQ(a->arena().Created(cls), 128u);
    for (void* p : got) a->Free(p, kClassBytes[cls]);  // any size of the class frees it
    std::vector<void*> cached;
    a->Collect(cls, &cached);
    const std::vector<void*> free = a->arena().FreeObjects(cls);
    EXPECT_EQ(cached.size(), cached_expected);
    EXPECT_EQ(free.size(), 128 - cached_expected);
    std::set<void*> all(cached.begin(), cached.end());
    all.insert(free.begin(), free.end());
    EXPECT_EQ(all.size(), 128u) << "an object is held twice";
    for (void* p : got) EXPECT_EQ(all.count(p), 1u) << "an object handed out is lost";
    for (int other = cls + 1; other < kNumClasses; ++other) EXPECT_EQ(a->arena().Created(other), 0u);
    cached_bytes += cached_expected * kClassBytes[cls];
  }
  EXPECT_EQ(a->CachedBytes(), cached_bytes);
}

TEST(AllocSizeClasses, TheTableAndItsBoundaries) {
  EXPECT_EQ(kNumClasses, 25);
  EXPECT_EQ(kMaxSmallBytes, 2048u);
  EXPECT_EQ(SizeClassOf(0), 0);
  EXPECT_EQ(SizeClassOf(8), 0);
  EXPECT_EQ(SizeClassOf(9), 1);      // 16
  EXPECT_EQ(SizeClassOf(17), 2);     // 32
  EXPECT_EQ(SizeClassOf(33), 3);     // 48
  EXPECT_EQ(SizeClassOf(128), 8);
  EXPECT_EQ(SizeClassOf(129), 9);    // 160
  EXPECT_EQ(SizeClassOf(1025), 21);  // 1280
  EXPECT_EQ(SizeClassOf(2048), 24);
  EXPECT_EQ(SizeClassOf(2049), std::nullopt);
  // Every size maps to the smallest class that holds it.
  for (size_t b = 0; b <= kMaxSmallBytes; ++b) {
    const int c = *SizeClassOf(b);
    ASSERT_GE(kClassBytes[c], b);
    if (c > 0) {
      ASSERT_LT(kClassBytes[c - 1], b) << b;
    }
  }
}

TEST(AllocSizeClasses, ALargeObjectIsALengthErrorNamingTheLimit) {
  std::unique_ptr<Allocator> a = MakeAllocator(Variant::kGlobalLock);
  try {
    a->Alloc(4096);
    FAIL() << "no error";
  } catch (const std::length_error& e) {
    EXPECT_STREQ(e.what(),
                 "alloc: 4096 bytes is a large object (above 2048 B, the largest size class); the caches serve small ones");
  }
}

// The CPU read of the per-CPU rseq cache (the `lsl` question): each one this
// machine has keeps every object once under threads; a read another variant
// cannot take is an error.
TEST(AllocCpuRead, EveryAvailableReadKeepsEveryObjectOnce) {
  for (CpuRead r : kAllCpuReads) {
    SCOPED_TRACE(CpuReadName(r));
    if (!CpuReadAvailable(r)) continue;
    std::unique_ptr<Allocator> a;
    try {
      a = MakeAllocator(Variant::kPerCpuRseq, r);
    } catch (const std::runtime_error& e) {
      GTEST_SKIP() << e.what();
    }
    std::atomic<int64_t> duplicates{0};
    std::vector<std::thread> ts;
    for (int t = 0; t < 4; ++t) ts.emplace_back(Worker, a.get(), t, 20000, &duplicates);
    for (std::thread& t : ts) t.join();
    EXPECT_EQ(duplicates.load(), 0);
    for (int cls = 0; cls < kNumClasses; ++cls) {
      std::vector<void*> all;
      a->Collect(cls, &all);
      const std::vector<void*> free = a->arena().FreeObjects(cls);
      all.insert(all.end(), free.begin(), free.end());
      EXPECT_EQ(std::set<void*>(all.begin(), all.end()).size(), all.size()) << "class " << cls;
      EXPECT_EQ(all.size(), a->arena().Created(cls)) << "class " << cls;
    }
  }
  EXPECT_THROW(MakeAllocator(Variant::kPerCpuMutex, CpuRead::kLsl), std::invalid_argument);
  EXPECT_STREQ(CpuReadName(CpuRead::kLsl), "lsl");
}

// alloc_bench (the real benchmark) through its command line: the same seed
// gives the same op counts (the size and lifetime mix is seeded; ops count
// allocations and frees, and ring replacements depend on the draws), bad
// input is exit 2 with the reason.
struct BenchRun {
  int code = -1;
  std::string out;
};

// Runs alloc_bench with `args`; stdout (and stderr when `with_stderr`: the
// progress lines would interleave with the CSV).
BenchRun Bench(const std::string& args, bool with_stderr = true) {
  std::string exe = RSEQMC_BINARY;  // build/tools/rseqmc/rseqmc
  exe.replace(exe.rfind("rseqmc/rseqmc"), std::string("rseqmc/rseqmc").size(), "alloc/alloc_bench");
  BenchRun r;
  FILE* p = popen((exe + " " + args + (with_stderr ? " 2>&1" : " 2>/dev/null")).c_str(), "r");
  if (p == nullptr) return r;
  char buf[512];
  while (fgets(buf, sizeof buf, p) != nullptr) r.out += buf;
  const int st = pclose(p);
  r.code = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
  return r;
}

TEST(AllocBench, SameSeedSameOpCountsAndBadInputIsExitTwo) {
  const BenchRun a = Bench("--variants global_lock --threads 1,2 --ops-per-thread 1000 --seed 7", false);
  ASSERT_EQ(a.code, 0) << a.out;
  EXPECT_NE(a.out.find("variant,cpu_read,threads,ops,wall_s,"), std::string::npos) << a.out;
  EXPECT_NE(a.out.find("\nglobal_lock,-,1,1011,"), std::string::npos) << a.out;
  EXPECT_NE(a.out.find("\nglobal_lock,-,2,2016,"), std::string::npos) << a.out;
  const BenchRun b = Bench("--variants global_lock --threads 1 --ops-per-thread 1000 --seed 8", false);
  EXPECT_EQ(b.out.find("\nglobal_lock,-,1,1011,"), std::string::npos) << "another seed, other draws: " << b.out;
  const BenchRun bad_read = Bench("--cpu-reads lsl,foo");
  EXPECT_EQ(bad_read.code, 2);
  EXPECT_NE(bad_read.out.find("unknown CPU read 'foo'"), std::string::npos) << bad_read.out;
  const BenchRun bad_seed = Bench("--seed x1");
  EXPECT_EQ(bad_seed.code, 2);
  EXPECT_NE(bad_seed.out.find("--seed wants a non-negative integer, not 'x1'"), std::string::npos) << bad_seed.out;
  EXPECT_EQ(Bench("--threads").code, 2);
  EXPECT_EQ(Bench("--help").code, 2);
}

// kPerCpuPreemptLock needs preempt_lock() (kernel/patches/0005); on a kernel
// without it (this host: number 336 is ENOSYS or another call) the variant
// says so, MakeAllocator throws that reason, and alloc_bench skips it (exit 0,
// the reason on stderr, no row). On a kernel with it, the AllocLib tests above
// run the variant; kernel/qemu/run runs it in the guest under the oracle.
TEST(AllocPreemptLock, WithoutTheSyscallTheVariantIsUnavailableAndSaysWhy) {
  const std::optional<std::string> why = PreemptLockUnavailableReason();
  if (!why) GTEST_SKIP() << "this kernel has preempt_lock(): the AllocLib tests run the variant";
  EXPECT_NE(why->find("needs kernel support"), std::string::npos) << *why;
  EXPECT_NE(why->find("0005-preempt-lock.patch"), std::string::npos) << *why;
  try {
    MakeAllocator(Variant::kPerCpuPreemptLock);
    ADD_FAILURE() << "MakeAllocator(kPerCpuPreemptLock) succeeded without the syscall";
  } catch (const std::runtime_error& e) {
    EXPECT_EQ(std::string(e.what()), "preempt_lock: " + *why);
  }
  EXPECT_THROW(MakeAllocator(Variant::kPerCpuPreemptLock, CpuRead::kLsl), std::invalid_argument);
  const BenchRun b = Bench("--variants preempt_lock,global_lock --threads 2 --ops-per-thread 1000 --seed 7 --check");
  EXPECT_EQ(b.code, 0) << b.out;
  EXPECT_NE(b.out.find("preempt_lock                 2 threads ... skipped: preempt_lock: " + *why), std::string::npos)
      << b.out;
  EXPECT_EQ(b.out.find("preempt_lock,-,"), std::string::npos) << b.out;
  EXPECT_NE(b.out.find("global_lock,-,2,2016,"), std::string::npos) << b.out;  // stderr interleaves
  EXPECT_NE(b.out.find("done, allocator oracle ok"), std::string::npos) << b.out;
}

INSTANTIATE_TEST_SUITE_P(Variants, AllocLib, ::testing::ValuesIn(kAllVariants),
                         [](const ::testing::TestParamInfo<Variant>& i) { return std::string(VariantName(i.param)); });

}  // namespace
}  // namespace rseqmc::alloc

#include "tools/alloc/calibrate_fit.h"

namespace rseqmc::alloc {
namespace {

TEST(CalibrateFit, FixedInputsGiveExactParameters) {
  HostMeasurements m;
  m.add_ns = 0.25;
  m.load_ns = 0.5;
  m.atomic_ns = 6;
  m.line_pingpong_ns = 140;
  m.clock_ns = 18;
  m.syscall_ns = 80;
  m.yield_switch_ns = 1080;
  m.futex_roundtrip_ns = 4400;
  m.migrate_ns = 383000;                       // reported only: not the migration cost
  m.migrate_refill_ns = 2500;
  m.signal_ns = 1580;
  m.hz = 250;
  m.cpus = 2;
  const CostModel c = FitCostModel(m);
  EXPECT_EQ(c.alu_ns, 0.25);
  EXPECT_EQ(c.load_ns, 0.5);
  EXPECT_EQ(c.store_ns, 0.5);
  EXPECT_EQ(c.atomic_ns, 6);
  EXPECT_EQ(c.fence_ns, 6);
  EXPECT_EQ(c.cacheline_transfer_ns, 64);      // 140 / 2 - 6
  EXPECT_EQ(c.clock_ns, 18);
  EXPECT_EQ(c.syscall_ns, 80);
  EXPECT_EQ(c.context_switch_ns, 1000);        // 1080 - 80
  EXPECT_EQ(c.futex_wake_ns, 560);             // (2200 - 1000 - 80) / 2
  EXPECT_EQ(c.futex_wait_ns, 560);
  EXPECT_EQ(c.migration_ns, 2500);             // the refill, not the setaffinity call
  EXPECT_EQ(c.signal_delivery_ns, 1500);       // 1580 - 80
  EXPECT_EQ(c.tick_ns, 4000000);
  EXPECT_EQ(c.sched_latency_ns, 12000000);     // factor 1 + ilog2(2) = 2
  EXPECT_EQ(c.sched_min_granularity_ns, 1500000);
  m.cpus = 32;                                 // factor 1 + ilog2(8) = 4
  EXPECT_EQ(FitCostModel(m).sched_latency_ns, 24000000);
  m.yield_switch_ns = 10;                      // below the syscall: clamped, never negative
  EXPECT_EQ(FitCostModel(m).context_switch_ns, 0);
}

}  // namespace
}  // namespace rseqmc::alloc
