// Sanitizer builds use Boost.Context's ucontext backend (the only one whose
// switches carry ASan's fiber annotations, BOOST_USE_ASAN). Debian's
// libboost_context is built for the fcontext backend and lacks the ucontext
// backend's per-thread activation record, so provide it here.
#if defined(BOOST_USE_UCONTEXT)
#include <boost/context/fiber.hpp>

namespace boost::context::detail {

fiber_activation_record*& fiber_activation_record::current() noexcept {
  thread_local fiber_activation_record main_record;
  thread_local fiber_activation_record* current = &main_record;
  return current;
}

}  // namespace boost::context::detail
#endif
