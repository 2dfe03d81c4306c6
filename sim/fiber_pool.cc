#include "sim/fiber_pool.h"

#include <boost/context/protected_fixedsize_stack.hpp>

#include <utility>

namespace rseqmc {

namespace ctx = boost::context;

FiberPool::FiberPool(std::function<void(int)> body, size_t stack_bytes)
    : body_(std::move(body)), stack_bytes_(stack_bytes) {}

FiberPool::~FiberPool() {
  // Destroying a suspended fiber unwinds its stack (Boost.Context throws
  // forced_unwind inside it); workers never return on their own. The ucontext
  // backend (sanitizer builds) starts a never-resumed fiber to unwind it, so a
  // worker entered while destroying must return at once, touching no slot.
  destroying_ = true;
  workers_.clear();
}

void FiberPool::Reserve(int n) {
  workers_.reserve(n);
  while (static_cast<int>(workers_.size()) < n) {
    int id = static_cast<int>(workers_.size());
    workers_.emplace_back(std::allocator_arg, ctx::protected_fixedsize_stack(stack_bytes_),
                          [this, id](ctx::fiber&& caller) {
                            if (destroying_) return std::move(caller);
                            Slot(from_) = std::move(caller);
                            for (;;) body_(id);
                            return ctx::fiber{};
                          });
  }
}

void FiberPool::SwitchTo(int to) {
  if (to == current_) return;
  from_ = current_;
  current_ = to;
  ctx::fiber resumer = std::move(Slot(to)).resume();
  // Back on this fiber: `resumer` is the continuation of whoever switched to us.
  // (Empty only while the pool is being destroyed.)
  if (resumer) Slot(from_) = std::move(resumer);
}

}  // namespace rseqmc
