// The allocator-cache family of issue 12 (the 2015 RFC's jemalloc experiment,
// reference/rfc2015.md), one implementation of each variant behind one
// interface, for the real benchmark (tools/alloc/alloc_bench.cc) and its unit
// tests. Objects of four size classes come from a CentralArena (slabs from
// malloc, a mutex and a free stack per class); each variant is the cache in
// front of it:
//   kThreadCache   per-thread cache, jemalloc tcache-like: a stack per class,
//                  refilled/flushed in batches, incremental GC of low-water objects
//   kPerCpuRseq    per-CPU cache; push/pop are rseq critical sections (upstream
//                  ABI, x86-64 assembly in alloc.cc) on the thread's struct rseq
//   kPerCpuMutex   per-CPU cache under a per-CPU futex mutex (Drepper's mutex2)
//   kPerCpuSpin    per-CPU cache under a per-CPU test-and-test-and-set spinlock
//   kSharedCas     one shared cache: a Treiber stack per class, the head tagged
//                  against ABA (16-bit tag in the pointer's unused top bits)
//   kGlobalLock    one shared cache under a global futex mutex
// Not here (they cannot run on this kernel): the per-CPU cache under the
// 2015 RFC ABI (syscall 335 exists only in our patched guest kernel, see
// kernel/README.md) and under the preempt-lock + signal scheme (needs a
// kernel that signals a flagged thread at preemption): both are simulation
// scenarios only.
//
// Thread safety: Alloc/Free from any number of threads. CachedBytes is a
// snapshot (exact when no thread is inside Alloc/Free). Collect and the
// destructor need every other thread to have stopped using the allocator.
#ifndef RSEQMC_TOOLS_ALLOC_ALLOC_H_
#define RSEQMC_TOOLS_ALLOC_ALLOC_H_

#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace rseqmc::alloc {

inline constexpr int kNumClasses = 4;
// Object size of each class, bytes.
inline constexpr std::array<size_t, kNumClasses> kClassBytes = {16, 64, 256, 1024};
inline constexpr int kCacheCap = 64;   // objects per cache and class
inline constexpr int kBatch = 32;      // refill / flush batch
inline constexpr int kSharedCap = 512; // objects per class in the shared CAS cache

enum class Variant : uint8_t { kThreadCache, kPerCpuRseq, kPerCpuMutex, kPerCpuSpin, kSharedCas, kGlobalLock };
inline constexpr std::array<Variant, 6> kAllVariants = {Variant::kThreadCache, Variant::kPerCpuRseq,
                                                        Variant::kPerCpuMutex, Variant::kPerCpuSpin,
                                                        Variant::kSharedCas,   Variant::kGlobalLock};
// "thread_cache", "percpu_rseq", "percpu_mutex", "percpu_spin", "shared_cas", "global_lock";
// the same names as tools/alloc/sim/alloc_workload.rsq's VARIANT 0..5 (in this order).
const char* VariantName(Variant v);

// The central arena: objects carved from 64 KiB slabs, a free stack per class.
class CentralArena {
 public:
  CentralArena() = default;
  ~CentralArena();
  CentralArena(const CentralArena&) = delete;
  CentralArena& operator=(const CentralArena&) = delete;
  // Fills out[0..n) with objects of class `cls` (reusing freed ones first).
  void PopBatch(int cls, void** out, int n);
  // Takes back n objects of class `cls`.
  void PushBatch(int cls, void* const* objs, int n);
  // Objects of `cls` ever carved from slabs / now on the free stack.
  uint64_t Created(int cls) const;
  std::vector<void*> FreeObjects(int cls) const;
  // Bytes of slabs obtained from malloc.
  uint64_t SlabBytes() const;

 private:
  struct alignas(64) Bin {
    mutable std::mutex mu;
    std::vector<void*> free;
    char* bump = nullptr;
    char* end = nullptr;
    uint64_t created = 0;
  };
  std::array<Bin, kNumClasses> bins_;
  std::mutex slabs_mu_;
  std::vector<void*> slabs_;
};

class Allocator {
 public:
  virtual ~Allocator() = default;
  // An object of class `cls` (0..kNumClasses-1), never nullptr.
  virtual void* Alloc(int cls) = 0;
  // Gives back `p`, which Alloc(cls) returned.
  virtual void Free(int cls, void* p) = 0;
  // Bytes held in caches (objects cached times their class size): the RSS
  // proxy the benchmark reports.
  virtual uint64_t CachedBytes() const = 0;
  // Appends every cached object of class `cls` (callers check that no object
  // is lost or held twice).
  virtual void Collect(int cls, std::vector<void*>* out) const = 0;
  // rseq aborts taken (kPerCpuRseq), else 0.
  virtual uint64_t Aborts() const { return 0; }
  CentralArena& arena() { return arena_; }
  const CentralArena& arena() const { return arena_; }

 protected:
  CentralArena arena_;
};

// A new allocator of variant `v`. Throws std::runtime_error when the variant
// cannot run here (kPerCpuRseq without rseq: the message says why).
std::unique_ptr<Allocator> MakeAllocator(Variant v);

}  // namespace rseqmc::alloc

#endif  // RSEQMC_TOOLS_ALLOC_ALLOC_H_
