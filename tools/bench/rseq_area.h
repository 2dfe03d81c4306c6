// The calling thread's registered struct rseq, for code that runs real rseq
// critical sections on this machine (tools/bench/percpu_ops_bench.cc,
// tools/alloc/): glibc's registration (__rseq_offset) when glibc registered
// (__rseq_size != 0), else a thread_local struct rseq registered with the raw
// rseq(2) system call (include/uapi/linux/rseq.h; unregistered at thread exit).
#ifndef RSEQMC_TOOLS_BENCH_RSEQ_AREA_H_
#define RSEQMC_TOOLS_BENCH_RSEQ_AREA_H_

#include <sys/rseq.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>

namespace rseqmc {

struct ThreadRseq {
  struct rseq* area = nullptr;  // nullptr: not available (see `why`)
  bool own = false;             // registered by us rather than by glibc
};

namespace rseq_area_internal {
struct OwnRseq {
  struct rseq area {};
  bool tried = false;
  int error = 0;
  ~OwnRseq() {
    if (tried && error == 0) syscall(SYS_rseq, &area, sizeof area, RSEQ_FLAG_UNREGISTER, RSEQ_SIG);
  }
};
inline thread_local OwnRseq own_rseq;
}  // namespace rseq_area_internal

// The calling thread's area; on failure area == nullptr and *why says why.
inline ThreadRseq CurrentThreadRseq(std::string* why) {
  ThreadRseq r;
  if (__rseq_size != 0) {
    r.area = reinterpret_cast<struct rseq*>(static_cast<char*>(__builtin_thread_pointer()) + __rseq_offset);
    if (static_cast<int>(r.area->cpu_id) >= 0) return r;
    *why = "glibc reports an rseq area (__rseq_size " + std::to_string(__rseq_size) + ") but its cpu_id is " +
           std::to_string(static_cast<int>(r.area->cpu_id)) + " (registration failed)";
    r.area = nullptr;
    return r;
  }
  rseq_area_internal::OwnRseq& own = rseq_area_internal::own_rseq;
  if (!own.tried) {
    own.tried = true;
    own.area.cpu_id = static_cast<uint32_t>(RSEQ_CPU_ID_UNINITIALIZED);
    if (syscall(SYS_rseq, &own.area, sizeof own.area, 0, RSEQ_SIG) != 0) own.error = errno;
  }
  if (own.error != 0) {
    *why = std::string("glibc did not register rseq (__rseq_size 0) and rseq(2) failed: ") + std::strerror(own.error);
    return r;
  }
  r.area = &own.area;
  r.own = true;
  return r;
}

}  // namespace rseqmc

#endif  // RSEQMC_TOOLS_BENCH_RSEQ_AREA_H_
