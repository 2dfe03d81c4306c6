#include "tools/alloc/alloc.h"

#include <linux/futex.h>
#include <sched.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <new>
#include <stdexcept>

#include "tools/bench/rseq_area.h"

namespace rseqmc::alloc {

const char* VariantName(Variant v) {
  switch (v) {
    case Variant::kThreadCache: return "thread_cache";
    case Variant::kPerCpuRseq: return "percpu_rseq";
    case Variant::kPerCpuMutex: return "percpu_mutex";
    case Variant::kPerCpuSpin: return "percpu_spin";
    case Variant::kSharedCas: return "shared_cas";
    case Variant::kGlobalLock: return "global_lock";
  }
  return "?";
}

// ---- central arena ----------------------------------------------------------

namespace {
constexpr size_t kSlabBytes = 64 * 1024;
}  // namespace

CentralArena::~CentralArena() {
  for (void* s : slabs_) std::free(s);
}

void CentralArena::PopBatch(int cls, void** out, int n) {
  Bin& b = bins_[cls];
  std::lock_guard<std::mutex> l(b.mu);
  for (int i = 0; i < n; ++i) {
    if (!b.free.empty()) {
      out[i] = b.free.back();
      b.free.pop_back();
      continue;
    }
    if (b.bump == b.end) {
      char* slab = static_cast<char*>(std::aligned_alloc(64, kSlabBytes));
      if (slab == nullptr) throw std::bad_alloc();
      {
        std::lock_guard<std::mutex> s(slabs_mu_);
        slabs_.push_back(slab);
      }
      b.bump = slab;
      b.end = slab + kSlabBytes;
    }
    out[i] = b.bump;
    b.bump += kClassBytes[cls];
    ++b.created;
  }
}

void CentralArena::PushBatch(int cls, void* const* objs, int n) {
  Bin& b = bins_[cls];
  std::lock_guard<std::mutex> l(b.mu);
  b.free.insert(b.free.end(), objs, objs + n);
}

uint64_t CentralArena::Created(int cls) const {
  std::lock_guard<std::mutex> l(bins_[cls].mu);
  return bins_[cls].created;
}

std::vector<void*> CentralArena::FreeObjects(int cls) const {
  std::lock_guard<std::mutex> l(bins_[cls].mu);
  return bins_[cls].free;
}

uint64_t CentralArena::SlabBytes() const {
  std::lock_guard<std::mutex> s(const_cast<std::mutex&>(slabs_mu_));
  return slabs_.size() * kSlabBytes;
}

namespace {

// ---- building blocks ----------------------------------------------------------

// One cache's stack of one class. Slot n (1-based) at byte offset 8 * n: the
// layout the rseq assembly below indexes.
struct alignas(64) Stack {
  uint64_t count = 0;
  void* slot[kCacheCap] = {};
  bool Pop(void** p) {
    if (count == 0) return false;
    *p = slot[--count];
    return true;
  }
  bool Push(void* p) {
    if (count == kCacheCap) return false;
    slot[count++] = p;
    return true;
  }
};
static_assert(sizeof(Stack) == 576, "the rseq assembly indexes stacks by 576 bytes");

// Drepper, "Futexes Are Tricky" (2011) mutex2: 0 free, 1 locked, 2 locked with waiters.
class alignas(64) FutexMutex {
 public:
  void Lock() {
    uint32_t c = 0;
    if (v_.compare_exchange_strong(c, 1, std::memory_order_acquire)) return;
    if (c != 2) c = v_.exchange(2, std::memory_order_acquire);
    while (c != 0) {
      syscall(SYS_futex, &v_, FUTEX_WAIT_PRIVATE, 2, nullptr, nullptr, 0);
      c = v_.exchange(2, std::memory_order_acquire);
    }
  }
  void Unlock() {
    if (v_.fetch_sub(1, std::memory_order_release) != 1) {
      v_.store(0, std::memory_order_release);
      syscall(SYS_futex, &v_, FUTEX_WAKE_PRIVATE, 1, nullptr, nullptr, 0);
    }
  }

 private:
  std::atomic<uint32_t> v_{0};
};

// Test-and-test-and-set.
class alignas(64) SpinLock {
 public:
  void Lock() {
    for (;;) {
      if (!f_.exchange(true, std::memory_order_acquire)) return;
      while (f_.load(std::memory_order_relaxed)) __builtin_ia32_pause();
    }
  }
  void Unlock() { f_.store(false, std::memory_order_release); }

 private:
  std::atomic<bool> f_{false};
};

int NumCpus() {
  const long n = sysconf(_SC_NPROCESSORS_CONF);
  return n > 0 ? static_cast<int>(n) : 1;
}

// Alloc/Free around a cache's pop/push: refill a batch from the arena when
// empty (one returned, the rest pushed), flush a batch to it when full.
template <class Cache>
void* AllocVia(Cache& c, CentralArena& arena, int cls) {
  void* p;
  if (c.Pop(cls, &p)) return p;
  void* batch[kBatch];
  arena.PopBatch(cls, batch, kBatch);
  for (int i = 1; i < kBatch; ++i) {
    if (!c.Push(cls, batch[i])) arena.PushBatch(cls, &batch[i], 1);
  }
  return batch[0];
}

template <class Cache>
void FreeVia(Cache& c, CentralArena& arena, int cls, void* p) {
  if (c.Push(cls, p)) return;
  void* batch[kBatch];
  int n = 0;
  while (n < kBatch && c.Pop(cls, &batch[n])) ++n;
  arena.PushBatch(cls, batch, n);
  if (!c.Push(cls, p)) arena.PushBatch(cls, &p, 1);
}

template <class Cache>
class CacheAllocator : public Allocator {
 public:
  CacheAllocator() = default;
  void* Alloc(int cls) override { return AllocVia(cache_, arena_, cls); }
  void Free(int cls, void* p) override { FreeVia(cache_, arena_, cls, p); }
  uint64_t CachedBytes() const override { return cache_.CachedBytes(); }
  void Collect(int cls, std::vector<void*>* out) const override { cache_.Collect(cls, out); }
  uint64_t Aborts() const override { return cache_.Aborts(); }

 protected:
  Cache cache_;
};

uint64_t StackBytes(const Stack* stacks, size_t n) {
  uint64_t b = 0;
  for (size_t i = 0; i < n; ++i) b += __atomic_load_n(&stacks[i].count, __ATOMIC_RELAXED) * kClassBytes[i % kNumClasses];
  return b;
}

void CollectStacks(const Stack* stacks, size_t n, int cls, std::vector<void*>* out) {
  for (size_t i = cls; i < n; i += kNumClasses) out->insert(out->end(), stacks[i].slot, stacks[i].slot + stacks[i].count);
}

// ---- per-CPU caches under a lock -------------------------------------------------

template <class Lock>
class LockedCaches {
 public:
  // One cache (cpus = 1, the global lock) or one per CPU.
  explicit LockedCaches(int caches) : locks_(caches), stacks_(static_cast<size_t>(caches) * kNumClasses) {}
  bool Pop(int cls, void** p) { return Locked(cls, [&](Stack& s) { return s.Pop(p); }); }
  bool Push(int cls, void* p) { return Locked(cls, [&](Stack& s) { return s.Push(p); }); }
  uint64_t CachedBytes() const { return StackBytes(stacks_.data(), stacks_.size()); }
  void Collect(int cls, std::vector<void*>* out) const { CollectStacks(stacks_.data(), stacks_.size(), cls, out); }
  uint64_t Aborts() const { return 0; }

 private:
  template <class F>
  bool Locked(int cls, F f) {
    // The cache of the CPU the thread runs on now (glibc's sched_getcpu reads
    // rseq's cpu_id); the lock, not the CPU, protects it after a migration.
    const int k = locks_.size() == 1 ? 0 : sched_getcpu() % static_cast<int>(locks_.size());
    locks_[k].Lock();
    const bool ok = f(stacks_[static_cast<size_t>(k) * kNumClasses + cls]);
    locks_[k].Unlock();
    return ok;
  }
  std::vector<Lock> locks_;
  std::vector<Stack> stacks_;
};

struct PerCpuMutexCaches : LockedCaches<FutexMutex> {
  PerCpuMutexCaches() : LockedCaches<FutexMutex>(NumCpus()) {}
};
struct PerCpuSpinCaches : LockedCaches<SpinLock> {
  PerCpuSpinCaches() : LockedCaches<SpinLock>(NumCpus()) {}
};
struct GlobalLockCaches : LockedCaches<FutexMutex> {
  GlobalLockCaches() : LockedCaches<FutexMutex>(1) {}
};

}  // namespace
}  // namespace rseqmc::alloc

// ---- per-CPU caches with rseq ----------------------------------------------------
#if defined(__x86_64__)
// intptr_t rseqmc_alloc_rseq_pop(struct rseq* rs, Stack* stacks, int cls):
// the object, 0 if the CPU's stack is empty, -1 after an abort (retry).
//
//   rs->rseq_cs = &pop_cs                              arm
// start:
//   cpu = rs->cpu_id                                   the CPU, inside the section
//   s = &stacks[cpu * 4 + cls]
//   n = s->count; if (n == 0) goto empty               (leaves the section)
//   obj = s->slot[n - 1]                               (at byte 8 * n)
//   s->count = n - 1                                   commit
// post:
//   return obj
// abort:                                               (RSEQ_SIG before it)
//   return -1
//
// int rseqmc_alloc_rseq_push(struct rseq* rs, Stack* stacks, int cls, void* obj):
// 0 pushed, 1 full, -1 after an abort.
//
//   rs->rseq_cs = &push_cs
// start:
//   cpu = rs->cpu_id; s = &stacks[cpu * 4 + cls]
//   n = s->count; if (n == 64) goto full
//   s->slot[n] = obj                                   (at byte 8 * (n + 1); not yet visible)
//   s->count = n + 1                                   commit
// post:
//   return 0
extern "C" __attribute__((visibility("hidden"))) intptr_t rseqmc_alloc_rseq_pop(struct rseq* rs, void* stacks, int cls);
extern "C" __attribute__((visibility("hidden"))) int rseqmc_alloc_rseq_push(struct rseq* rs, void* stacks, int cls,
                                                                           void* obj);
asm(R"ASM(
        .pushsection .text
        .globl rseqmc_alloc_rseq_pop
        .hidden rseqmc_alloc_rseq_pop
        .type rseqmc_alloc_rseq_pop, @function
        .p2align 4
rseqmc_alloc_rseq_pop:
        .cfi_startproc
        leaq .Lrseqmc_alloc_pop_cs(%rip), %rax
        movq %rax, 8(%rdi)                # rs->rseq_cs = &pop_cs
.Lrseqmc_alloc_pop_start:
        movl 4(%rdi), %eax                # cpu = rs->cpu_id
        shll $2, %eax
        addl %edx, %eax
        imulq $576, %rax, %r8
        addq %rsi, %r8                    # s = &stacks[cpu * 4 + cls]
        movq (%r8), %r9                   # n = s->count
        testq %r9, %r9
        jz .Lrseqmc_alloc_pop_empty
        movq (%r8,%r9,8), %rax            # obj = slot[n - 1]
        decq %r9
        movq %r9, (%r8)                   # commit: s->count = n - 1
.Lrseqmc_alloc_pop_post:
        ret
.Lrseqmc_alloc_pop_empty:
        xorl %eax, %eax
        ret
        .byte 0x0f, 0xb9, 0x3d            # ud1 0x53053053(%rip),%edi:
        .long 0x53053053                  # RSEQ_SIG just before abort_ip
.Lrseqmc_alloc_pop_abort:
        movq $-1, %rax
        ret
        .cfi_endproc
        .size rseqmc_alloc_rseq_pop, .-rseqmc_alloc_rseq_pop

        .globl rseqmc_alloc_rseq_push
        .hidden rseqmc_alloc_rseq_push
        .type rseqmc_alloc_rseq_push, @function
        .p2align 4
rseqmc_alloc_rseq_push:
        .cfi_startproc
        leaq .Lrseqmc_alloc_push_cs(%rip), %rax
        movq %rax, 8(%rdi)                # rs->rseq_cs = &push_cs
.Lrseqmc_alloc_push_start:
        movl 4(%rdi), %eax                # cpu = rs->cpu_id
        shll $2, %eax
        addl %edx, %eax
        imulq $576, %rax, %r8
        addq %rsi, %r8                    # s = &stacks[cpu * 4 + cls]
        movq (%r8), %r9                   # n = s->count
        cmpq $64, %r9
        je .Lrseqmc_alloc_push_full
        incq %r9
        movq %rcx, (%r8,%r9,8)            # slot[n] = obj
        movq %r9, (%r8)                   # commit: s->count = n + 1
.Lrseqmc_alloc_push_post:
        xorl %eax, %eax
        ret
.Lrseqmc_alloc_push_full:
        movl $1, %eax
        ret
        .byte 0x0f, 0xb9, 0x3d
        .long 0x53053053
.Lrseqmc_alloc_push_abort:
        movl $-1, %eax
        ret
        .cfi_endproc
        .size rseqmc_alloc_rseq_push, .-rseqmc_alloc_rseq_push
        .popsection

        .pushsection __rseq_cs, "aw"
        .balign 32
.Lrseqmc_alloc_pop_cs:
        .long 0, 0
        .quad .Lrseqmc_alloc_pop_start
        .quad .Lrseqmc_alloc_pop_post - .Lrseqmc_alloc_pop_start
        .quad .Lrseqmc_alloc_pop_abort
        .balign 32
.Lrseqmc_alloc_push_cs:
        .long 0, 0
        .quad .Lrseqmc_alloc_push_start
        .quad .Lrseqmc_alloc_push_post - .Lrseqmc_alloc_push_start
        .quad .Lrseqmc_alloc_push_abort
        .popsection
)ASM");
#endif

namespace rseqmc::alloc {
namespace {

class RseqCaches {
 public:
  RseqCaches() : stacks_(static_cast<size_t>(NumCpus()) * kNumClasses) {}
  bool Pop(int cls, void** p) {
    struct rseq* rs = Area();
    for (;;) {
      const intptr_t r = rseqmc_alloc_rseq_pop(rs, stacks_.data(), cls);
      if (r == -1) {
        aborts_.fetch_add(1, std::memory_order_relaxed);
        continue;
      }
      if (r == 0) return false;
      *p = reinterpret_cast<void*>(r);
      return true;
    }
  }
  bool Push(int cls, void* p) {
    struct rseq* rs = Area();
    for (;;) {
      const int r = rseqmc_alloc_rseq_push(rs, stacks_.data(), cls, p);
      if (r != -1) return r == 0;
      aborts_.fetch_add(1, std::memory_order_relaxed);
    }
  }
  uint64_t CachedBytes() const { return StackBytes(stacks_.data(), stacks_.size()); }
  void Collect(int cls, std::vector<void*>* out) const { CollectStacks(stacks_.data(), stacks_.size(), cls, out); }
  uint64_t Aborts() const { return aborts_.load(std::memory_order_relaxed); }

 private:
  static struct rseq* Area() {
    thread_local struct rseq* area = nullptr;
    if (area == nullptr) {
      std::string why;
      area = CurrentThreadRseq(&why).area;
      if (area == nullptr) throw std::runtime_error("percpu_rseq: " + why);
    }
    return area;
  }
  std::vector<Stack> stacks_;
  std::atomic<uint64_t> aborts_{0};
};

// ---- shared Treiber stack, ABA-tagged ---------------------------------------------

class CasCaches {
 public:
  static constexpr uint64_t kPtrMask = (1ull << 48) - 1;  // x86-64 user addresses: 47 bits
  bool Pop(int cls, void** p) {
    Head& h = heads_[cls];
    uint64_t old = h.top.load(std::memory_order_acquire);
    for (;;) {
      void* top = reinterpret_cast<void*>(old & kPtrMask);
      if (top == nullptr) return false;
      // Type-stable memory (the arena never returns slabs): reading a link of
      // an object another thread popped meanwhile is safe; the tag makes the CAS fail.
      void* next = __atomic_load_n(static_cast<void**>(top), __ATOMIC_RELAXED);
      const uint64_t neu = (((old >> 48) + 1) << 48) | reinterpret_cast<uint64_t>(next);
      if (h.top.compare_exchange_weak(old, neu, std::memory_order_acq_rel, std::memory_order_acquire)) {
        h.count.fetch_sub(1, std::memory_order_relaxed);
        *p = top;
        return true;
      }
    }
  }
  bool Push(int cls, void* p) {
    Head& h = heads_[cls];
    if (h.count.fetch_add(1, std::memory_order_relaxed) >= kSharedCap) {
      h.count.fetch_sub(1, std::memory_order_relaxed);
      return false;
    }
    uint64_t old = h.top.load(std::memory_order_relaxed);
    for (;;) {
      __atomic_store_n(static_cast<void**>(p), reinterpret_cast<void*>(old & kPtrMask), __ATOMIC_RELAXED);
      const uint64_t neu = (((old >> 48) + 1) << 48) | reinterpret_cast<uint64_t>(p);
      if (h.top.compare_exchange_weak(old, neu, std::memory_order_release, std::memory_order_relaxed)) return true;
    }
  }
  uint64_t CachedBytes() const {
    uint64_t b = 0;
    for (int c = 0; c < kNumClasses; ++c) b += static_cast<uint64_t>(heads_[c].count.load()) * kClassBytes[c];
    return b;
  }
  void Collect(int cls, std::vector<void*>* out) const {
    for (void* p = reinterpret_cast<void*>(heads_[cls].top.load() & kPtrMask); p != nullptr;
         p = *static_cast<void**>(p)) {
      out->push_back(p);
    }
  }
  uint64_t Aborts() const { return 0; }

 private:
  struct alignas(64) Head {
    std::atomic<uint64_t> top{0};
    std::atomic<int64_t> count{0};
  };
  std::array<Head, kNumClasses> heads_;
};

// ---- per-thread caches (jemalloc tcache-like) ---------------------------------------

// jemalloc's incremental GC: one bin every 8192 / nbins events (TCACHE_GC_SWEEP),
// flushing 3/4 of the objects that stayed unused since the bin's last GC (its low water).
constexpr int kGcIncr = 8192 / kNumClasses;

class ThreadCacheAllocator : public Allocator {
 public:
  ThreadCacheAllocator() : id_(next_id_.fetch_add(1)) {}
  void* Alloc(int cls) override {
    Bins& b = Mine();
    Event(b);
    Bin& bin = b.bin[cls];
    if (bin.stack.count == 0) {
      void* batch[kBatch];
      arena_.PopBatch(cls, batch, kBatch);
      for (int i = 1; i < kBatch; ++i) bin.stack.Push(batch[i]);
      Account(b, cls, kBatch - 1);
      bin.low_water = 0;
      return batch[0];
    }
    void* p;
    bin.stack.Pop(&p);
    Account(b, cls, -1);
    if (static_cast<int>(bin.stack.count) < bin.low_water) bin.low_water = static_cast<int>(bin.stack.count);
    return p;
  }
  void Free(int cls, void* p) override {
    Bins& b = Mine();
    Event(b);
    Bin& bin = b.bin[cls];
    if (bin.stack.count == kCacheCap) Flush(b, cls, kCacheCap / 2);
    bin.stack.Push(p);
    Account(b, cls, 1);
  }
  uint64_t CachedBytes() const override {
    std::lock_guard<std::mutex> l(mu_);
    uint64_t s = 0;
    for (const auto& b : all_) s += b->bytes.load(std::memory_order_relaxed);
    return s;
  }
  void Collect(int cls, std::vector<void*>* out) const override {
    std::lock_guard<std::mutex> l(mu_);
    for (const auto& b : all_) {
      const Stack& s = b->bin[cls].stack;
      out->insert(out->end(), s.slot, s.slot + s.count);
    }
  }

 private:
  struct Bin {
    Stack stack;
    int low_water = 0;
  };
  struct Bins {
    std::array<Bin, kNumClasses> bin;
    int events = 0;
    int gc_bin = 0;
    std::atomic<uint64_t> bytes{0};
  };
  Bins& Mine() {
    thread_local std::vector<Bins*> mine;  // by allocator id
    if (mine.size() <= id_) mine.resize(id_ + 1, nullptr);
    if (mine[id_] == nullptr) {
      std::lock_guard<std::mutex> l(mu_);
      all_.push_back(std::make_unique<Bins>());
      mine[id_] = all_.back().get();
    }
    return *mine[id_];
  }
  void Account(Bins& b, int cls, int64_t objects) {
    b.bytes.store(b.bytes.load(std::memory_order_relaxed) + objects * static_cast<int64_t>(kClassBytes[cls]),
                  std::memory_order_relaxed);
  }
  // Moves `n` objects (the oldest) of bin `cls` to the arena.
  void Flush(Bins& b, int cls, int n) {
    Stack& s = b.bin[cls].stack;
    n = std::min<int>(n, static_cast<int>(s.count));
    arena_.PushBatch(cls, s.slot, n);
    for (uint64_t i = n; i < s.count; ++i) s.slot[i - n] = s.slot[i];
    s.count -= n;
    Account(b, cls, -n);
  }
  void Event(Bins& b) {
    if (++b.events < kGcIncr) return;
    b.events = 0;
    Bin& bin = b.bin[b.gc_bin];
    const int low = bin.low_water;
    if (low > 0) Flush(b, b.gc_bin, low - low / 4);
    bin.low_water = static_cast<int>(bin.stack.count);
    b.gc_bin = (b.gc_bin + 1) % kNumClasses;
  }
  static inline std::atomic<size_t> next_id_{0};
  const size_t id_;
  mutable std::mutex mu_;
  std::vector<std::unique_ptr<Bins>> all_;
};

}  // namespace

std::unique_ptr<Allocator> MakeAllocator(Variant v) {
  switch (v) {
    case Variant::kThreadCache: return std::make_unique<ThreadCacheAllocator>();
    case Variant::kPerCpuRseq: {
#if !defined(__x86_64__)
      throw std::runtime_error("percpu_rseq: the critical sections are written for x86-64 only");
#else
      std::string why;
      if (CurrentThreadRseq(&why).area == nullptr) throw std::runtime_error("percpu_rseq: " + why);
      return std::make_unique<CacheAllocator<RseqCaches>>();
#endif
    }
    case Variant::kPerCpuMutex: return std::make_unique<CacheAllocator<PerCpuMutexCaches>>();
    case Variant::kPerCpuSpin: return std::make_unique<CacheAllocator<PerCpuSpinCaches>>();
    case Variant::kSharedCas: return std::make_unique<CacheAllocator<CasCaches>>();
    case Variant::kGlobalLock: return std::make_unique<CacheAllocator<GlobalLockCaches>>();
  }
  throw std::runtime_error("unknown allocator variant");
}

}  // namespace rseqmc::alloc
