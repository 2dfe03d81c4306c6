#include "tools/mmap-seed/calibrate_fit.h"

#include <algorithm>
#include <cmath>

namespace rseqmc::mmapseed {

namespace {
int64_t Ns(double v) { return std::llround(std::max(0.0, v)); }
}  // namespace

MmapCosts FitMmapCosts(const MmapMeasurements& m) {
  MmapCosts c;
  c.syscall_ns = Ns(m.syscall_ns);
  c.mmap_ns = Ns(m.mmap_ns - m.syscall_ns);
  c.munmap_ns = Ns(m.munmap_ns - m.syscall_ns);
  c.zero_4k_ns = Ns(m.zero_4k_ns);
  c.fault_ns = Ns(m.touch_4k_ns - m.zero_4k_ns);
  c.populate_page_ns = Ns(m.populate_4k_ns - m.zero_4k_ns);
  c.zero_2m_ns = Ns(m.zero_2m_ns);
  c.fault_2m_ns = Ns(m.touch_2m_ns - m.zero_2m_ns);
  return c;
}

CostModel FitHandoff(const CostModel& base, const MmapMeasurements& m) {
  CostModel c = base;
  c.futex_wake_ns = std::max(0.0, m.handoff_ns - base.syscall_ns - base.context_switch_ns);
  c.clock_ns = 0;
  return c;
}

std::string FormatMmapCosts(const MmapCosts& c, const std::vector<std::string>& header) {
  const struct {
    const char* name;
    int64_t value;
    const char* meaning;
  } rows[] = {
      {"SYSCALL_NS", c.syscall_ns, "entry + exit of mmap()/munmap(), outside mmap_lock"},
      {"MMAP_NS", c.mmap_ns, "do_mmap under the write lock"},
      {"MUNMAP_NS", c.munmap_ns, "do_vmi_munmap of one untouched page under the write lock"},
      {"FAULT_NS", c.fault_ns, "a 4 KiB write fault without the zeroing"},
      {"POPULATE_PAGE_NS", c.populate_page_ns, "one page of MAP_POPULATE's __get_user_pages without the zeroing"},
      {"ZERO_4K_NS", c.zero_4k_ns, "zeroing a 4 KiB page"},
      {"FAULT_2M_NS", c.fault_2m_ns, "a 2 MiB THP write fault without the zeroing"},
      {"ZERO_2M_NS", c.zero_2m_ns, "zeroing a 2 MiB huge page"},
  };
  std::string out;
  for (const std::string& h : header) out += "# " + h + "\n";
  for (const auto& r : rows) out += std::string(r.name) + " = " + std::to_string(r.value) + "  # " + r.meaning + "\n";
  return out;
}

}  // namespace rseqmc::mmapseed
