#include "tools/alloc/alloc.h"

#include <linux/futex.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <ucontext.h>
#include <sys/syscall.h>
#include <unistd.h>
#if defined(__x86_64__)
#include <cpuid.h>
#endif

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <cstdlib>
#include <new>
#include <stdexcept>
#include <utility>

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
    case Variant::kPerCpuPreemptLock: return "preempt_lock";
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
    if (static_cast<size_t>(b.end - b.bump) < kClassBytes[cls]) {  // the slab's tail holds no object (48 B, ...)
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
  template <class... Args>
  explicit CacheAllocator(Args&&... args) : cache_(std::forward<Args>(args)...) {}
  void* AllocClass(int cls) override { return AllocVia(cache_, arena_, cls); }
  void FreeClass(int cls, void* p) override { FreeVia(cache_, arena_, cls, p); }
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
// intptr_t rseqmc_alloc_pop_<read>(struct rseq* rs, Stack* stacks, int cls, int cpu_hint):
// the object, 0 if the CPU's stack is empty, -1 after an abort (retry).
//
//   rs->rseq_cs = &pop_cs                              arm
// start:
//   cpu = CPU_READ                                     the CPU, inside the section
//   s = &stacks[cpu * kNumClasses + cls]
//   n = s->count; if (n == 0) goto empty               (leaves the section)
//   obj = s->slot[n - 1]                               (at byte 8 * n)
//   s->count = n - 1                                   commit
// post:
//   return obj
// abort:                                               (RSEQ_SIG before it)
//   return -1
//
// int rseqmc_alloc_push_<read>(struct rseq* rs, Stack* stacks, int cls, void* obj, int cpu_hint):
// 0 pushed, 1 full, -1 after an abort.
//
//   rs->rseq_cs = &push_cs
// start:
//   cpu = CPU_READ; s = &stacks[cpu * kNumClasses + cls]
//   n = s->count; if (n == kCacheCap) goto full
//   s->slot[n] = obj                                   (at byte 8 * (n + 1); not yet visible)
//   s->count = n + 1                                   commit
// post:
//   return 0
//
// CPU_READ (into %eax; may clobber %rcx, %rdx; issue 12's `lsl` question), one
// pair of functions each:
//   cpuid         the kernel-written rseq cpu_id (the upstream ABI's way)
//   lsl           the segment limit of the per-CPU GDT entry (selector 0x7b,
//                 GDT_ENTRY_CPUNODE: the vDSO's vgetcpu fallback, the seed's
//                 `lsl`); limit = node << 12 | cpu
//   rdpid         RDPID: IA32_TSC_AUX, which Linux sets to node << 12 | cpu
//                 (arch/x86/kernel/cpu/common.c setup_getcpu())
//   rdtscp        RDTSCP's TSC_AUX in %ecx (the same value; also reads the TSC)
//   hint          the CPU the caller got from sched_getcpu() before the section,
//                 compared with cpu_id inside it, abort if it changed (librseq's
//                 rseq_cmpeqv pattern for a CPU number obtained outside)
// Registers: %rdi rs, %rsi stacks, %r10d cls, %r11 obj, %r9d cpu_hint, %r8 s, %rdx n.
extern "C" {
#define RSEQMC_ALLOC_DECLARE(read)                                                                       \
  __attribute__((visibility("hidden"))) intptr_t rseqmc_alloc_pop_##read(struct rseq*, void*, int, int); \
  __attribute__((visibility("hidden"))) int rseqmc_alloc_push_##read(struct rseq*, void*, int, void*, int);
RSEQMC_ALLOC_DECLARE(cpuid)
RSEQMC_ALLOC_DECLARE(lsl)
RSEQMC_ALLOC_DECLARE(rdpid)
RSEQMC_ALLOC_DECLARE(rdtscp)
RSEQMC_ALLOC_DECLARE(hint)
#undef RSEQMC_ALLOC_DECLARE
}

#define RSEQMC_STR2(x) #x
#define RSEQMC_STR(x) RSEQMC_STR2(x)
#define RSEQMC_READ_cpuid(abort) "movl 4(%rdi), %eax\n"
#define RSEQMC_READ_lsl(abort) "movl $0x7b, %eax\nlsl %eax, %eax\nandl $0xfff, %eax\n"
#define RSEQMC_READ_rdpid(abort) "rdpid %rax\nandl $0xfff, %eax\n"
#define RSEQMC_READ_rdtscp(abort) "rdtscp\nmovl %ecx, %eax\nandl $0xfff, %eax\n"
#define RSEQMC_READ_hint(abort) "movl %r9d, %eax\ncmpl 4(%rdi), %eax\njne " abort "\n"
// The function `op` ("pop"/"push") for CPU read `read`: entry (arguments to
// the registers above, arm rseq_cs), the section from start to post (its body
// `section`), `fail` after post, the signature and the abort returning -1.
#define RSEQMC_ALLOC_FN(op, read, entry, section, fail)                                           \
  ".globl rseqmc_alloc_" op "_" #read "\n.hidden rseqmc_alloc_" op "_" #read "\n"                  \
  ".type rseqmc_alloc_" op "_" #read ", @function\n.p2align 4\n"                                    \
  "rseqmc_alloc_" op "_" #read ":\n.cfi_startproc\n" entry                                          \
  "leaq .Lrseqmc_" op "_cs_" #read "(%rip), %rax\nmovq %rax, 8(%rdi)\n"                            \
  ".Lrseqmc_" op "_start_" #read ":\n" RSEQMC_READ_##read(".Lrseqmc_" op "_abort_" #read)          \
  RSEQMC_ALLOC_STACK section                                                                       \
  ".Lrseqmc_" op "_post_" #read ":\n" fail                                                          \
  ".byte 0x0f, 0xb9, 0x3d\n.long 0x53053053\n" /* RSEQ_SIG just before abort_ip */                 \
  ".Lrseqmc_" op "_abort_" #read ":\nmovq $-1, %rax\nret\n.cfi_endproc\n"                          \
  ".size rseqmc_alloc_" op "_" #read ", .-rseqmc_alloc_" op "_" #read "\n"                         \
  ".pushsection __rseq_cs, \"aw\"\n.balign 32\n.Lrseqmc_" op "_cs_" #read ":\n.long 0, 0\n"         \
  ".quad .Lrseqmc_" op "_start_" #read "\n"                                                         \
  ".quad .Lrseqmc_" op "_post_" #read " - .Lrseqmc_" op "_start_" #read "\n"                        \
  ".quad .Lrseqmc_" op "_abort_" #read "\n.popsection\n"
// The CPU number in %eax to s = &stacks[cpu * kNumClasses + cls] in %r8 and
// n = s->count in %rdx; then pop's and push's bodies, each ending with its
// commit (shared by the rseq and the preempt-lock regions).
#define RSEQMC_ALLOC_STACK                                                         \
  "imull $" RSEQMC_STR(RSEQMC_ALLOC_CLASSES) ", %eax, %eax\naddl %r10d, %eax\n" \
  "imulq $576, %rax, %r8\naddq %rsi, %r8\nmovq (%r8), %rdx\n"
#define RSEQMC_ALLOC_POP_BODY \
  "testq %rdx, %rdx\njz 1f\nmovq (%r8,%rdx,8), %rax\ndecq %rdx\nmovq %rdx, (%r8)\n" /* commit: s->count = n - 1 */
#define RSEQMC_ALLOC_PUSH_BODY                                                           \
  "cmpq $" RSEQMC_STR(RSEQMC_ALLOC_CAP) ", %rdx\nje 1f\nincq %rdx\n"                   \
  "movq %r11, (%r8,%rdx,8)\nmovq %rdx, (%r8)\n" /* commit: s->count = n + 1 */
#define RSEQMC_ALLOC_POP(read)                                                  \
  RSEQMC_ALLOC_FN("pop", read, "movl %edx, %r10d\nmovl %ecx, %r9d\n", RSEQMC_ALLOC_POP_BODY, \
                  "ret\n1:\nxorl %eax, %eax\nret\n")
#define RSEQMC_ALLOC_PUSH(read)                                                                        \
  RSEQMC_ALLOC_FN("push", read, "movl %edx, %r10d\nmovq %rcx, %r11\nmovl %r8d, %r9d\n", RSEQMC_ALLOC_PUSH_BODY, \
                  "xorl %eax, %eax\nret\n1:\nmovl $1, %eax\nret\n")
#define RSEQMC_ALLOC_CLASSES 25
#define RSEQMC_ALLOC_CAP 64
static_assert(rseqmc::alloc::kNumClasses == RSEQMC_ALLOC_CLASSES, "the rseq assembly indexes stacks by class count");
static_assert(rseqmc::alloc::kCacheCap == RSEQMC_ALLOC_CAP, "the rseq assembly compares with the cache capacity");
asm(".pushsection .text\n" RSEQMC_ALLOC_POP(cpuid) RSEQMC_ALLOC_PUSH(cpuid) RSEQMC_ALLOC_POP(lsl)
        RSEQMC_ALLOC_PUSH(lsl) RSEQMC_ALLOC_POP(rdpid) RSEQMC_ALLOC_PUSH(rdpid) RSEQMC_ALLOC_POP(rdtscp)
            RSEQMC_ALLOC_PUSH(rdtscp) RSEQMC_ALLOC_POP(hint) RSEQMC_ALLOC_PUSH(hint) ".popsection\n");
#endif

// ---- per-CPU caches under the preempt-lock + signal scheme ----------------------
#if defined(__x86_64__)
// intptr_t rseqmc_pl_pop(uint32_t* flag, Stack* stacks, int cls): the object,
// 0 if the CPU's stack is empty. int rseqmc_pl_push(uint32_t* flag, Stack*
// stacks, int cls, void* obj): 0 pushed, 1 full. The restartable region is
// [start, post): it reads only the argument registers (%rdi, %rsi, %r10d,
// %r11), never writes them, and ends with its commit, so moving the RIP back
// to start re-runs the whole operation (sim/kernel/preempt_lock.h PL3: "the
// commit must be the region's last instruction and the flag cleared after
// it").
//
//   flag = 1
// start:
//   cpu = lsl(0x7b) & 0xfff                  the CPU, inside the region
//   s = &stacks[cpu * kNumClasses + cls]; n = s->count
//   pop:  if (n == 0) goto empty; obj = s->slot[n - 1]; s->count = n - 1   commit
//   push: if (n == kCacheCap) goto full; s->slot[n] = obj; s->count = n + 1  commit
// post:
//   flag = 0; return
// empty/full (outside the region):
//   flag = 0; return 0 / 1
extern "C" {
__attribute__((visibility("hidden"))) intptr_t rseqmc_pl_pop(uint32_t*, void*, int);
__attribute__((visibility("hidden"))) int rseqmc_pl_push(uint32_t*, void*, int, void*);
__attribute__((visibility("hidden"))) extern const char rseqmc_pl_pop_start[], rseqmc_pl_pop_post[];
__attribute__((visibility("hidden"))) extern const char rseqmc_pl_push_start[], rseqmc_pl_push_post[];
}
#define RSEQMC_PL_FN(op, entry, section, tail)                                                     \
  ".globl rseqmc_pl_" op "\n.hidden rseqmc_pl_" op "\n.type rseqmc_pl_" op ", @function\n"         \
  ".p2align 4\nrseqmc_pl_" op ":\n.cfi_startproc\n" entry "movl $1, (%rdi)\n"                      \
  ".globl rseqmc_pl_" op "_start\n.hidden rseqmc_pl_" op "_start\nrseqmc_pl_" op "_start:\n"       \
  "movl $0x7b, %eax\nlsl %eax, %eax\nandl $0xfff, %eax\n"                                          \
  RSEQMC_ALLOC_STACK section                                                                       \
  ".globl rseqmc_pl_" op "_post\n.hidden rseqmc_pl_" op "_post\nrseqmc_pl_" op "_post:\n"          \
  "movl $0, (%rdi)\n" tail ".cfi_endproc\n.size rseqmc_pl_" op ", .-rseqmc_pl_" op "\n"
asm(".pushsection .text\n"
    RSEQMC_PL_FN("pop", "movl %edx, %r10d\n", RSEQMC_ALLOC_POP_BODY,
                 "ret\n1:\nmovl $0, (%rdi)\nxorl %eax, %eax\nret\n")
    RSEQMC_PL_FN("push", "movl %edx, %r10d\nmovq %rcx, %r11\n", RSEQMC_ALLOC_PUSH_BODY,
                 "xorl %eax, %eax\nret\n1:\nmovl $0, (%rdi)\nmovl $1, %eax\nret\n")
    ".popsection\n");
#endif

namespace rseqmc::alloc {
namespace {

#if defined(__x86_64__)
struct RseqOps {
  intptr_t (*pop)(struct rseq*, void*, int, int);
  int (*push)(struct rseq*, void*, int, void*, int);
};

RseqOps OpsFor(CpuRead r) {
  switch (r) {
    case CpuRead::kRseqCpuId: return {rseqmc_alloc_pop_cpuid, rseqmc_alloc_push_cpuid};
    case CpuRead::kLsl: return {rseqmc_alloc_pop_lsl, rseqmc_alloc_push_lsl};
    case CpuRead::kRdpid: return {rseqmc_alloc_pop_rdpid, rseqmc_alloc_push_rdpid};
    case CpuRead::kRdtscp: return {rseqmc_alloc_pop_rdtscp, rseqmc_alloc_push_rdtscp};
    case CpuRead::kSchedGetcpu: return {rseqmc_alloc_pop_hint, rseqmc_alloc_push_hint};
  }
  throw std::runtime_error("unknown CPU read");
}

class RseqCaches {
 public:
  explicit RseqCaches(CpuRead r)
      : stacks_(static_cast<size_t>(NumCpus()) * kNumClasses), ops_(OpsFor(r)), hint_(r == CpuRead::kSchedGetcpu) {}
  bool Pop(int cls, void** p) {
    struct rseq* rs = Area();
    for (;;) {
      const intptr_t r = ops_.pop(rs, stacks_.data(), cls, Hint());
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
      const int r = ops_.push(rs, stacks_.data(), cls, p, Hint());
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
  int Hint() const { return hint_ ? sched_getcpu() : 0; }
  std::vector<Stack> stacks_;
  RseqOps ops_;
  bool hint_;
  std::atomic<uint64_t> aborts_{0};
};
#endif

#if defined(__x86_64__)
// The calling thread's flag word and whether preempt_lock() has it (a fork
// child starts unregistered: kernel/patches/0005 preempt_lock_fork()).
thread_local uint32_t pl_flag = 0;
thread_local bool pl_registered = false;
std::atomic<uint64_t> pl_restarts{0};

// The preempt-lock signal's handler (SA_SIGINFO): a signal the kernel sent
// for this thread's flag (SI_KERNEL, si_addr = &pl_flag) that interrupted an
// operation inside its region restarts it (the saved RIP back to the region's
// start: the model's sigctx_restart). Any other (an IP outside a region: the
// commit is done, or the flag was set for another reason) returns unchanged.
void PreemptLockHandler(int, siginfo_t* si, void* ctx) {
  if (si->si_code != SI_KERNEL || si->si_addr != &pl_flag) return;
  greg_t& rip = static_cast<ucontext_t*>(ctx)->uc_mcontext.gregs[REG_RIP];
  const uintptr_t ip = static_cast<uintptr_t>(rip);
  const char* const regions[][2] = {{rseqmc_pl_pop_start, rseqmc_pl_pop_post},
                                    {rseqmc_pl_push_start, rseqmc_pl_push_post}};
  for (const auto& [start, post] : regions) {
    if (ip >= reinterpret_cast<uintptr_t>(start) && ip < reinterpret_cast<uintptr_t>(post)) {
      rip = static_cast<greg_t>(reinterpret_cast<uintptr_t>(start));
      pl_restarts.fetch_add(1, std::memory_order_relaxed);
      return;
    }
  }
}

void InstallPreemptLockHandler() {
  static std::once_flag once;
  std::call_once(once, [] {
    struct sigaction sa = {};
    sa.sa_sigaction = PreemptLockHandler;
    sa.sa_flags = SA_SIGINFO | SA_RESTART;
    sigemptyset(&sa.sa_mask);
    if (sigaction(kPreemptLockSignal, &sa, nullptr) != 0) {
      throw std::runtime_error(std::string("preempt_lock: sigaction: ") + std::strerror(errno));
    }
    pthread_atfork(nullptr, nullptr, [] { pl_registered = false; });
  });
}

class PreemptLockCaches {
 public:
  PreemptLockCaches()
      : stacks_(static_cast<size_t>(NumCpus()) * kNumClasses), restarts0_(pl_restarts.load()) {}
  bool Pop(int cls, void** p) {
    const intptr_t r = rseqmc_pl_pop(Flag(), stacks_.data(), cls);
    if (r == 0) return false;
    *p = reinterpret_cast<void*>(r);
    return true;
  }
  bool Push(int cls, void* p) { return rseqmc_pl_push(Flag(), stacks_.data(), cls, p) == 0; }
  uint64_t CachedBytes() const { return StackBytes(stacks_.data(), stacks_.size()); }
  void Collect(int cls, std::vector<void*>* out) const { CollectStacks(stacks_.data(), stacks_.size(), cls, out); }
  // Restarts of every preempt-lock allocator of the process since this one
  // was made (the handler cannot tell allocators apart).
  uint64_t Aborts() const { return pl_restarts.load(std::memory_order_relaxed) - restarts0_; }

 private:
  // This thread's flag, registered on first use.
  static uint32_t* Flag() {
    if (!pl_registered) {
      if (syscall(kSysPreemptLock, &pl_flag, kPreemptLockSignal) != 0) {
        throw std::runtime_error(std::string("preempt_lock: registering the flag: ") + std::strerror(errno));
      }
      pl_registered = true;
    }
    return &pl_flag;
  }
  std::vector<Stack> stacks_;
  uint64_t restarts0_;
};
#endif

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
  void* AllocClass(int cls) override {
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
  void FreeClass(int cls, void* p) override {
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

std::unique_ptr<Allocator> MakeAllocator(Variant v, CpuRead cpu_read) {
  if (v != Variant::kPerCpuRseq && cpu_read != CpuRead::kRseqCpuId) {
    throw std::invalid_argument(std::string(VariantName(v)) + ": the CPU read is chosen for percpu_rseq only");
  }
  switch (v) {
    case Variant::kThreadCache: return std::make_unique<ThreadCacheAllocator>();
    case Variant::kPerCpuRseq: {
#if !defined(__x86_64__)
      throw std::runtime_error("percpu_rseq: the critical sections are written for x86-64 only");
#else
      std::string why;
      if (CurrentThreadRseq(&why).area == nullptr) throw std::runtime_error("percpu_rseq: " + why);
      if (!CpuReadAvailable(cpu_read)) {
        throw std::runtime_error(std::string("percpu_rseq: this CPU has no ") + CpuReadName(cpu_read));
      }
      return std::make_unique<CacheAllocator<RseqCaches>>(cpu_read);
#endif
    }
    case Variant::kPerCpuMutex: return std::make_unique<CacheAllocator<PerCpuMutexCaches>>();
    case Variant::kPerCpuSpin: return std::make_unique<CacheAllocator<PerCpuSpinCaches>>();
    case Variant::kSharedCas: return std::make_unique<CacheAllocator<CasCaches>>();
    case Variant::kGlobalLock: return std::make_unique<CacheAllocator<GlobalLockCaches>>();
    case Variant::kPerCpuPreemptLock: {
      if (const std::optional<std::string> why = PreemptLockUnavailableReason()) {
        throw std::runtime_error("preempt_lock: " + *why);
      }
#if defined(__x86_64__)
      InstallPreemptLockHandler();
      return std::make_unique<CacheAllocator<PreemptLockCaches>>();
#endif
    }
  }
  throw std::runtime_error("unknown allocator variant");
}

std::optional<std::string> PreemptLockUnavailableReason() {
#if !defined(__x86_64__)
  return "the regions are written for x86-64 only";
#else
  if (syscall(kSysPreemptLock, 0, 0) == 0) return std::nullopt;
  const int e = errno;
  if (e == ENOSYS) {
    return "needs kernel support: this kernel has no preempt_lock() system call (ENOSYS from number 336; "
           "kernel/patches/0005-preempt-lock.patch adds it, kernel/qemu/run boots it)";
  }
  return std::string("needs kernel support: number 336 is another system call on this kernel (") + std::strerror(e) +
         "; upstream took 336 after 6.1), not preempt_lock() of kernel/patches/0005-preempt-lock.patch";
#endif
}

const char* CpuReadName(CpuRead r) {
  switch (r) {
    case CpuRead::kRseqCpuId: return "cpu_id";
    case CpuRead::kLsl: return "lsl";
    case CpuRead::kRdpid: return "rdpid";
    case CpuRead::kRdtscp: return "rdtscp";
    case CpuRead::kSchedGetcpu: return "sched_getcpu";
  }
  return "?";
}

bool CpuReadAvailable(CpuRead r) {
#if defined(__x86_64__)
  unsigned a = 0, b = 0, c = 0, d = 0;
  switch (r) {
    case CpuRead::kRdpid: return __get_cpuid_count(7, 0, &a, &b, &c, &d) && (c & (1u << 22)) != 0;
    case CpuRead::kRdtscp: return __get_cpuid(0x80000001, &a, &b, &c, &d) && (d & (1u << 27)) != 0;
    default: return true;
  }
#else
  return r == CpuRead::kRseqCpuId;
#endif
}

// ---- size classes -------------------------------------------------------------

namespace {
// class_of[(bytes + 7) / 8] for bytes in 0..kMaxSmallBytes.
constexpr auto kClassOf8 = [] {
  std::array<uint8_t, kMaxSmallBytes / 8 + 1> t{};
  int c = 0;
  for (size_t i = 0; i < t.size(); ++i) {
    while (kClassBytes[c] < i * 8) ++c;
    t[i] = static_cast<uint8_t>(c);
  }
  return t;
}();
}  // namespace

std::optional<int> SizeClassOf(size_t bytes) {
  if (bytes > kMaxSmallBytes) return std::nullopt;
  return kClassOf8[(bytes + 7) / 8];
}

int Allocator::ClassOrThrow(size_t bytes) {
  const std::optional<int> c = SizeClassOf(bytes);
  if (!c) {
    throw std::length_error("alloc: " + std::to_string(bytes) + " bytes is a large object (above " +
                            std::to_string(kMaxSmallBytes) + " B, the largest size class); the caches serve small ones");
  }
  return *c;
}

}  // namespace rseqmc::alloc
