// The fitting step of the mmap cost calibration (issue 13 §2): from what
// tools/mmap-seed/mmap_calibrate measured on this machine to the costs the
// simulated-time model tools/mmap-seed/sim/mmap_timed.rsq charges (its
// *_NS constants) and to the cost model (sim/cost_model.h) it runs under.
// Pure arithmetic, so that a test with fixed inputs pins the exact figures.
#ifndef RSEQMC_TOOLS_MMAP_SEED_CALIBRATE_FIT_H_
#define RSEQMC_TOOLS_MMAP_SEED_CALIBRATE_FIT_H_

#include <cstdint>
#include <string>
#include <vector>

#include "sim/cost_model.h"

namespace rseqmc::mmapseed {

// Host figures, each in ns (the minimum over repetitions of a mean).
struct MmapMeasurements {
  double syscall_ns = 0;      // getppid(): system call entry + exit
  double mmap_ns = 0;         // mmap() of 64 MiB anonymous memory, nothing populated
  double munmap_ns = 0;       // munmap() of one untouched page
  double touch_4k_ns = 0;     // a user write that faults one 4 KiB page in (THP off), per page
  double zero_4k_ns = 0;      // memset of 4 KiB already present (the zeroing alone), per page
  double populate_4k_ns = 0;  // MAP_POPULATE (THP off), per page
  double touch_2m_ns = 0;     // a user write that faults one 2 MiB THP in (MADV_HUGEPAGE), per huge page
  double zero_2m_ns = 0;      // memset of 2 MiB already present, per huge page
  double handoff_ns = 0;      // FUTEX_WAKE on one CPU until the woken thread runs on another (wake -> run)
};

// The constants of mmap_timed.rsq (integers, ns), each clamped at 0:
//   SYSCALL_NS = syscall_ns;  MMAP_NS = mmap_ns - syscall_ns;  MUNMAP_NS = munmap_ns - syscall_ns
//     (do_mmap / do_vmi_munmap under the write lock; the call itself is charged outside it);
//   ZERO_4K_NS = zero_4k_ns;  FAULT_NS = touch_4k_ns - zero_4k_ns;
//   POPULATE_PAGE_NS = populate_4k_ns - zero_4k_ns  (__get_user_pages per page, no exception);
//   ZERO_2M_NS = zero_2m_ns;  FAULT_2M_NS = touch_2m_ns - zero_2m_ns.
// Each is rounded to the nearest ns.
struct MmapCosts {
  int64_t syscall_ns = 0, mmap_ns = 0, munmap_ns = 0, fault_ns = 0, populate_page_ns = 0, zero_4k_ns = 0,
          fault_2m_ns = 0, zero_2m_ns = 0;
  friend bool operator==(const MmapCosts&, const MmapCosts&) = default;
};
MmapCosts FitMmapCosts(const MmapMeasurements& m);

// The cost model the mmap model runs under: `base` (the machine's general
// model, tools/alloc/cost_model.txt) with
//   futex_wake_ns = handoff_ns - base.syscall_ns - base.context_switch_ns (clamped at 0):
//     the simulator makes a woken rwsem waiter run at the waker's time after
//     its FUTEX_WAKE (syscall_ns + futex_wake_ns) plus a context switch, so
//     this makes a simulated lock hand-off (rwsem wake -> run) take handoff_ns;
//   clock_ns = 0: the model's clock reads measure mmap_lock waits, which the
//     kernel does not do, so measuring must cost nothing.
CostModel FitHandoff(const CostModel& base, const MmapMeasurements& m);

// The mmap cost file (one writer: this; its reader is tools/mmap-seed/seed-table):
// `header` lines as `# ` comments, then one `NAME = value  # meaning` line per
// constant of mmap_timed.rsq, in the order of MmapCosts.
std::string FormatMmapCosts(const MmapCosts& c, const std::vector<std::string>& header);

}  // namespace rseqmc::mmapseed

#endif  // RSEQMC_TOOLS_MMAP_SEED_CALIBRATE_FIT_H_
