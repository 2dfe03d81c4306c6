// What one transition touched: the objects the model checker's dependence
// relation compares (DESIGN.md §6: same address with a write, plus the
// kernel-level objects: threads, CPU run queues, the mm_cid allocator).
//
// A transition is one scheduler decision: an injected event, or one step of a
// thread (its exit-to-user work — signal frames, the rseq fixup, the ID update —
// followed by its instruction). The machine records footprints only when the
// scheduler asks for them (Scheduler::WantsFootprints()).
#ifndef RSEQMC_SIM_FOOTPRINT_H_
#define RSEQMC_SIM_FOOTPRINT_H_

#include <cstdint>

namespace rseqmc {

struct MemAccess {
  uint64_t addr = 0;
  uint8_t bytes = 0;
  bool write = false;
};

struct Footprint {
  static constexpr int kMaxAccesses = 8;
  // bit t % 64: thread t's registers, signal state, rseq registration or
  // scheduling state. Threads 64 apart share a bit: with more than 64 threads
  // two transitions may look dependent when they are not (never the reverse).
  uint64_t threads = 0;
  uint64_t cpus = 0;     // bit c: CPU c's running thread / run queue (read or changed)
  bool mm_cid = false;   // the mm_cid allocator (any switch in or out)
  bool all_memory = false;  // more accesses than fit: conflicts with every access
  uint8_t num_accesses = 0;
  MemAccess accesses[kMaxAccesses];

  void Clear() {
    threads = 0;
    cpus = 0;
    mm_cid = false;
    all_memory = false;
    num_accesses = 0;
  }
  void Access(uint64_t addr, int bytes, bool write) {
    for (int i = 0; i < num_accesses; ++i) {
      MemAccess& a = accesses[i];
      if (a.addr == addr && a.bytes == bytes) {
        a.write |= write;
        return;
      }
    }
    if (num_accesses == kMaxAccesses) {
      all_memory = true;
      return;
    }
    accesses[num_accesses++] = {addr, static_cast<uint8_t>(bytes), write};
  }
  bool HasMemory() const { return num_accesses > 0 || all_memory; }
};

// True if the two transitions do not commute: they touch a common thread, CPU
// or the mm_cid allocator, or overlapping memory with at least one write.
inline bool Dependent(const Footprint& a, const Footprint& b) {
  if ((a.threads & b.threads) != 0 || (a.cpus & b.cpus) != 0 || (a.mm_cid && b.mm_cid)) return true;
  if (!a.HasMemory() || !b.HasMemory()) return false;
  if (a.all_memory || b.all_memory) {
    // Conservative: conflicts if either side writes anything.
    auto writes = [](const Footprint& f) {
      if (f.all_memory) return true;
      for (int i = 0; i < f.num_accesses; ++i) {
        if (f.accesses[i].write) return true;
      }
      return false;
    };
    return writes(a) || writes(b);
  }
  for (int i = 0; i < a.num_accesses; ++i) {
    const MemAccess& x = a.accesses[i];
    for (int j = 0; j < b.num_accesses; ++j) {
      const MemAccess& y = b.accesses[j];
      if ((x.write || y.write) && x.addr < y.addr + y.bytes && y.addr < x.addr + x.bytes) return true;
    }
  }
  return false;
}

}  // namespace rseqmc

#endif  // RSEQMC_SIM_FOOTPRINT_H_
