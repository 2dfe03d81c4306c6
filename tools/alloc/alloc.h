// The allocator-cache family of issue 12 (the 2015 RFC's jemalloc experiment,
// reference/rfc2015.md), one implementation of each variant behind one
// interface, for the real benchmark (tools/alloc/alloc_bench.cc) and its unit
// tests. Alloc(bytes) maps the size to one of kNumClasses size classes
// (SizeClassOf: jemalloc's small classes, 8 B .. 2 KiB); objects of each
// class come from a CentralArena (slabs from malloc, a mutex and a free stack
// per class); each variant is the cache in front of it, with one cache per
// class (per thread, per CPU or shared), refilled from and flushed to the
// arena per class:
//   kThreadCache   per-thread cache, jemalloc tcache-like: a stack per class,
//                  refilled/flushed in batches, incremental GC of low-water objects
//   kPerCpuRseq    per-CPU cache; push/pop are rseq critical sections (upstream
//                  ABI, x86-64 assembly in alloc.cc) on the thread's struct rseq
//   kPerCpuMutex   per-CPU cache under a per-CPU futex mutex (Drepper's mutex2)
//   kPerCpuSpin    per-CPU cache under a per-CPU test-and-test-and-set spinlock
//   kSharedCas     one shared cache: a Treiber stack per class, the head tagged
//                  against ABA (16-bit tag in the pointer's unused top bits)
//   kGlobalLock    one shared cache under a global futex mutex
//   kPerCpuPreemptLock  per-CPU cache under the preempt-lock + signal scheme
//                  (the seed's third variant): set the thread's flag, operate
//                  on the CPU's cache (CPU read with `lsl`), commit, clear the
//                  flag; the kernel (kernel/patches/0005, preempt_lock(),
//                  rules PL1..PL5 of sim/kernel/preempt_lock.h) sends SIGUSR2
//                  with si_addr = the flag when the thread returns to user
//                  space after a switch-out with the flag set, and the
//                  handler moves the saved RIP back to the operation's start
//                  when it lies in [start, commit] (the model's
//                  sigctx_restart). Runs only on a kernel with the patch
//                  (PreemptLockUnavailableReason()).
// Not here: the per-CPU cache under the 2015 RFC ABI (syscall 335 exists
// only in our patched guest kernel, see kernel/README.md), a simulation
// scenario only.
//
// Thread safety: Alloc/Free from any number of threads. CachedBytes is a
// snapshot (exact when no thread is inside Alloc/Free). Collect and the
// destructor need every other thread to have stopped using the allocator.
#ifndef RSEQMC_TOOLS_ALLOC_ALLOC_H_
#define RSEQMC_TOOLS_ALLOC_ALLOC_H_

#include <csignal>
#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

namespace rseqmc::alloc {

// The size classes: jemalloc's small classes up to 2 KiB (jemalloc 4/5,
// include/jemalloc/internal/size_classes.sh / sc.c with LG_QUANTUM = 4:
// 8 B, then the 16-byte quantum up to 128 B, then four classes per doubling:
// 128 * (1 + k/4) ... up to 2048). tcmalloc's table (size_classes.cc) has the
// same shape with more classes. Object size of each class, bytes:
inline constexpr int kNumClasses = 25;
inline constexpr std::array<size_t, kNumClasses> kClassBytes = {
    8,   16,  32,  48,  64,  80,  96,   112,  128,  160,  192,  224, 256,
    320, 384, 448, 512, 640, 768, 896, 1024, 1280, 1536, 1792, 2048};
// Largest size the caches serve; larger requests are "large" objects, which
// jemalloc and tcmalloc serve from page runs outside the thread/CPU caches
// (not modelled here).
inline constexpr size_t kMaxSmallBytes = kClassBytes[kNumClasses - 1];

// The size class of a request of `bytes` bytes: the smallest class whose
// objects hold `bytes` (0 bytes: class 0, as malloc(0) returns a minimal
// object); std::nullopt above kMaxSmallBytes. O(1): a table indexed by
// (bytes + 7) / 8, as jemalloc's size2index_tab and tcmalloc's class_array.
std::optional<int> SizeClassOf(size_t bytes);

inline constexpr int kCacheCap = 64;   // objects per cache and class
inline constexpr int kBatch = 32;      // refill / flush batch
inline constexpr int kSharedCap = 512; // objects per class in the shared CAS cache

enum class Variant : uint8_t {
  kThreadCache,
  kPerCpuRseq,
  kPerCpuMutex,
  kPerCpuSpin,
  kSharedCas,
  kGlobalLock,
  kPerCpuPreemptLock
};
inline constexpr std::array<Variant, 7> kAllVariants = {
    Variant::kThreadCache, Variant::kPerCpuRseq, Variant::kPerCpuMutex,       Variant::kPerCpuSpin,
    Variant::kSharedCas,   Variant::kGlobalLock, Variant::kPerCpuPreemptLock};
// "thread_cache", "percpu_rseq", "percpu_mutex", "percpu_spin", "shared_cas", "global_lock",
// "preempt_lock"; the same names as tools/alloc/sim/alloc_workload.rsq's VARIANT 0..6 (in this order).
const char* VariantName(Variant v);

// The preempt_lock() system call of kernel/patches/0005 (x86-64 number 336)
// and the signal kPerCpuPreemptLock registers with it.
inline constexpr long kSysPreemptLock = 336;
inline constexpr int kPreemptLockSignal = SIGUSR2;
// Why kPerCpuPreemptLock cannot run on this kernel, or std::nullopt when it
// can. Probes preempt_lock(NULL, 0) (unregister: no effect): 0 means the
// patch is there; ENOSYS is a kernel without it; another error means 336 is
// another call here (upstream took 336 later: this host's 6.18 answers ENXIO).
std::optional<std::string> PreemptLockUnavailableReason();

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
  // An object of at least `bytes` bytes (an object of SizeClassOf(bytes)),
  // never nullptr. Throws std::length_error above kMaxSmallBytes.
  void* Alloc(size_t bytes) { return AllocClass(ClassOrThrow(bytes)); }
  // Gives back `p`, which Alloc(bytes) returned: a sized free, as jemalloc's
  // sdallocx() and C++14 sized operator delete (the size picks the class;
  // nothing is stored in front of the object). Throws std::length_error
  // above kMaxSmallBytes.
  void Free(void* p, size_t bytes) { FreeClass(ClassOrThrow(bytes), p); }
  // The same by class index (0..kNumClasses-1): an object of kClassBytes[cls].
  virtual void* AllocClass(int cls) = 0;
  virtual void FreeClass(int cls, void* p) = 0;
  // Bytes held in caches (objects cached times their class size): the RSS
  // proxy the benchmark reports.
  virtual uint64_t CachedBytes() const = 0;
  // Appends every cached object of class `cls` (callers check that no object
  // is lost or held twice).
  virtual void Collect(int cls, std::vector<void*>* out) const = 0;
  // rseq aborts taken (kPerCpuRseq), operations restarted by the
  // preempt-lock signal's handler (kPerCpuPreemptLock), else 0.
  virtual uint64_t Aborts() const { return 0; }
  CentralArena& arena() { return arena_; }
  const CentralArena& arena() const { return arena_; }

 protected:
  CentralArena arena_;

 private:
  static int ClassOrThrow(size_t bytes);
};

// How kPerCpuRseq reads the CPU number inside its critical sections (the
// seed's "reading the CPU number with `lsl` cost about 3 %"; alloc.cc shows
// each read's instructions):
//   kRseqCpuId    load of the kernel-written rseq cpu_id (the upstream ABI)
//   kLsl          `lsl` of the per-CPU GDT segment (selector 0x7b), the vDSO
//                 getcpu fallback (arch/x86/include/asm/segment.h vdso_read_cpunode)
//   kRdpid        RDPID (TSC_AUX = node << 12 | cpu, set by the kernel's setup_getcpu())
//   kRdtscp       RDTSCP's TSC_AUX (the same value, plus a TSC read)
//   kSchedGetcpu  sched_getcpu() before the section, compared with cpu_id
//                 inside it (abort when it changed)
enum class CpuRead : uint8_t { kRseqCpuId, kLsl, kRdpid, kRdtscp, kSchedGetcpu };
inline constexpr std::array<CpuRead, 5> kAllCpuReads = {CpuRead::kRseqCpuId, CpuRead::kLsl, CpuRead::kRdpid,
                                                        CpuRead::kRdtscp, CpuRead::kSchedGetcpu};
// "cpu_id", "lsl", "rdpid", "rdtscp", "sched_getcpu".
const char* CpuReadName(CpuRead r);
// Whether this machine has the instruction (CPUID: RDPID leaf 7 ECX bit 22,
// RDTSCP leaf 0x80000001 EDX bit 27; the others: x86-64).
bool CpuReadAvailable(CpuRead r);

// A new allocator of variant `v` (`cpu_read`: kPerCpuRseq only). Throws
// std::runtime_error when the variant cannot run here (kPerCpuRseq without
// rseq, or without the instruction of `cpu_read`; kPerCpuPreemptLock on a
// kernel without preempt_lock(): the message says why) and
// std::invalid_argument for a `cpu_read` other than kRseqCpuId on another variant.
std::unique_ptr<Allocator> MakeAllocator(Variant v, CpuRead cpu_read = CpuRead::kRseqCpuId);

}  // namespace rseqmc::alloc

#endif  // RSEQMC_TOOLS_ALLOC_ALLOC_H_
