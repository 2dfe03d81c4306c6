// Fibers that stand in for simulated threads (Boost.Context `fiber`), with
// stacks allocated once and reused across executions.
//
// Slot kMain is the OS thread that drives executions; slots 0..n-1 are worker
// fibers, worker i running `body(i)` in a loop (body(i) returns when thread i
// has nothing more to do in the current execution; the worker then waits for
// the next execution). Switching is symmetric: any fiber may switch to any
// other with SwitchTo(), which is one Boost.Context jump (no scheduler fiber
// in between). In sanitizer builds Boost.Context's ucontext backend annotates
// each switch for ASan (BOOST_USE_ASAN).
#ifndef RSEQMC_SIM_FIBER_POOL_H_
#define RSEQMC_SIM_FIBER_POOL_H_

#include <boost/context/fiber.hpp>

#include <cstddef>
#include <functional>
#include <vector>

namespace rseqmc {

class FiberPool {
 public:
  static constexpr int kMain = -1;
  // stack_bytes: usable stack per worker fiber (a guard page is added).
  explicit FiberPool(std::function<void(int)> body, size_t stack_bytes = 256 * 1024);
  ~FiberPool();
  FiberPool(const FiberPool&) = delete;
  FiberPool& operator=(const FiberPool&) = delete;

  // Makes sure workers 0..n-1 exist (creating stacks only for new ones).
  void Reserve(int n);
  // Suspends the calling fiber (or main) and resumes `to` (kMain or a worker).
  void SwitchTo(int to);
  int current() const { return current_; }

 private:
  boost::context::fiber& Slot(int i) { return i == kMain ? main_ : workers_[i]; }
  std::function<void(int)> body_;
  size_t stack_bytes_;
  std::vector<boost::context::fiber> workers_;
  boost::context::fiber main_;
  int current_ = kMain;
  int from_ = kMain;  // who performed the last switch (read by the resumed side)
  bool destroying_ = false;
};

}  // namespace rseqmc

#endif  // RSEQMC_SIM_FIBER_POOL_H_
