// The allocator library of tools/alloc (issue 12 §1): under threads, every
// variant hands each object to one owner at a time and loses none: after the
// threads stop, the objects in caches plus those in the arena are exactly the
// objects the arena ever created, each once.
#include <pthread.h>
#include <sched.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
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

// Each thread keeps up to 48 objects live, writing its tag into each while it
// owns it and checking the tag before freeing: an object handed to two
// threads at once is overwritten by the other and caught.
void Worker(Allocator* a, int id, int ops, std::atomic<int64_t>* duplicates) {
  uint64_t rng = 0x9e3779b97f4a7c15ull * (id + 1);
  std::vector<std::pair<int, uint64_t*>> live;
  const uint64_t tag = 0xA110C000ull + id;
  for (int i = 0; i < ops; ++i) {
    rng = rng * 6364136223846793005ull + 1442695040888963407ull;
    const bool do_free = !live.empty() && (live.size() >= 48 || ((rng >> 40) & 1));
    if (do_free) {
      const size_t k = (rng >> 20) % live.size();
      auto [cls, p] = live[k];
      if (*p != tag) duplicates->fetch_add(1);
      *p = 0;
      a->Free(cls, p);
      live[k] = live.back();
      live.pop_back();
    } else {
      const int cls = static_cast<int>((rng >> 50) % kNumClasses);
      uint64_t* p = static_cast<uint64_t*>(a->Alloc(cls));
      *p = tag;
      live.emplace_back(cls, p);
      if (i % 97 == 0) sched_yield();  // let the threads of a CPU interleave
    }
  }
  for (auto [cls, p] : live) {
    if (*p != tag) duplicates->fetch_add(1);
    a->Free(cls, p);
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
  // Pin so that the per-CPU variants see one CPU throughout.
  cpu_set_t one;
  CPU_ZERO(&one);
  CPU_SET(sched_getcpu(), &one);
  cpu_set_t old;
  pthread_getaffinity_np(pthread_self(), sizeof old, &old);
  pthread_setaffinity_np(pthread_self(), sizeof one, &one);
  void* p = a->Alloc(2);
  EXPECT_EQ(a->CachedBytes(), (kBatch - 1) * kClassBytes[2]);  // the refill: a batch, one handed out
  a->Free(2, p);
  EXPECT_EQ(a->CachedBytes(), kBatch * kClassBytes[2]);
  EXPECT_EQ(a->Alloc(2), p);  // LIFO
  EXPECT_EQ(a->arena().Created(2), static_cast<uint64_t>(kBatch));
  pthread_setaffinity_np(pthread_self(), sizeof old, &old);
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
  m.migrate_ns = 3580;
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
  EXPECT_EQ(c.migration_ns, 2500);             // 3580 - 80 - 1000
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
