// The thread API for threads whose body is C++ rather than IR.
//
// A native body (ScenarioBuilder::Native) receives a ThreadApi and performs
// every shared-memory access and kernel call through it; each call is one
// scheduling point (the scheduler may inject events or run another CPU before
// it), exactly like one IR instruction. Critical sections are IR functions
// called with CallIr(), so rseq aborts keep their kernel semantics (a native
// thread's own code is never inside a section; a pending rseq_cs is lazily
// cleared). Signal handlers (IR) run on native threads too.
//
// Example: a thread that increments a per-CPU counter through an IR function.
//
//     b.Native("n0", /*cpu=*/0, [](ThreadApi& api) {
//       return api.CallIr("inc", {{10, api.SymbolAddress("counter")}});
//     });
//
// Do not catch(...) inside a body without rethrowing: the simulator unwinds
// bodies at the end of an execution by throwing.
#ifndef RSEQMC_SIM_THREAD_API_H_
#define RSEQMC_SIM_THREAD_API_H_

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "sim/ir.h"

namespace rseqmc {

class Machine;

class ThreadApi {
 public:
  ThreadApi(Machine& m, int thread) : m_(m), t_(thread) {}
  int thread() const { return t_; }

  // Memory (bytes address; 8- or 4-byte accesses). A bad address kills the
  // process with SIGSEGV, like an IR access.
  uint64_t Load(uint64_t address);
  uint32_t Load32(uint64_t address);
  void Store(uint64_t address, uint64_t value);
  void Store32(uint64_t address, uint32_t value);
  uint64_t Cas(uint64_t address, uint64_t expected, uint64_t desired);  // returns old
  uint64_t Xadd(uint64_t address, uint64_t delta);                      // returns old
  uint64_t Xchg(uint64_t address, uint64_t value);                      // returns old
  // Kernel calls (see Op); each returns what r0 would hold.
  int64_t SchedYield();
  int64_t SchedSetaffinity(uint64_t mask);
  int64_t Getcpu();
  int64_t Tgkill(int thread, int signo);
  int64_t MembarrierRseq(int cpu = -1);
  // Reads a field of the thread's struct rseq (u32; 0 if unregistered).
  uint32_t RseqLoad(RseqField f);
  // Calls IR function `name` with initial registers `args` (others 0); returns r0.
  int64_t CallIr(const std::string& name, const std::vector<std::pair<uint8_t, int64_t>>& args = {});
  void Observe(const std::string& name, int64_t value);
  // Fails the execution (verdict kAssertFailed) if !cond.
  void Assert(bool cond, const std::string& message);
  // Address of a symbol (for CPU c's block of a per-CPU symbol). No scheduling point.
  uint64_t SymbolAddress(const std::string& name, uint32_t cpu = 0) const;

  // Thrown to unwind a body when the execution ends; never catch it.
  struct Unwind {};

 private:
  // One scheduling point; runs signal handlers that got delivered; throws Unwind.
  void Sync();
  Machine& m_;
  int t_;
};

}  // namespace rseqmc

#endif  // RSEQMC_SIM_THREAD_API_H_
