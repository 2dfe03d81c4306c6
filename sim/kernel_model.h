// Which Linux rseq semantics the simulator models (`--kernel VERSION`).
//
// Implemented:
//   * kLegacy60  — "6.0".."6.2": legacy event mask, validation of the descriptor on
//     every evaluation with a non-zero rseq_cs, any NO_RESTART flag inside a section
//     is SIGSEGV, cpu_id_start/cpu_id rewritten on every evaluation (reference §2.5,
//     §2.6, §7 rules 8, 13, 15, 18); struct rseq has no node_id/mm_cid yet.
//   * kMmCid — "6.3".."6.18" (`--kernel mm_cid`): kLegacy60's rules plus node_id
//     and mm_cid (6.3) written with the CPU IDs, mm_cid from a per-process
//     concurrency-ID allocator (sim/kernel/abi_mm_cid.cc). This machine's kernel
//     (6.18).
//   * kLegacy418 — "4.18".."5.19": as above, but the NO_RESTART_ON_* flags of
//     rseq->flags | rseq_cs->flags inhibit the restart for their event class
//     (NO_RESTART_ON_SIGNAL without both others is EINVAL -> SIGSEGV), §2.9.
// Granularity: each model stands for a range of versions and follows its
// newest behaviour where the range differs: the legacy models offer
// MEMBARRIER_CMD_PRIVATE_EXPEDITED_RSEQ (added in 5.10) and treat the process
// as registered for it. Cross-checks record the exact running version.
//   * k619 — "6.19": the rework (sim/kernel/abi_6_19.cc).
// The rules of each live in its module under sim/kernel/ (sim/kernel/abi.h).
//   * kRfc2015 — "rfc2015": the Oct 2015 RFC's restartable_sequences()
//     (regions instead of descriptors; sim/kernel/rfc2015.h).
// Not yet modelled (rejected with a clear error): 7.0+ (time-slice
// extension, V2/legacy split by registration size).
#ifndef RSEQMC_SIM_KERNEL_MODEL_H_
#define RSEQMC_SIM_KERNEL_MODEL_H_

#include <cstdint>
#include <optional>
#include <string>

namespace rseqmc {

// The rseq ABIs rseqmc models; each is implemented by one module in
// sim/kernel/ (sim/kernel/abi.h), which alone may test which one runs. The
// values are recorded in schedule tokens: never renumber.
enum class KernelModel : uint8_t {
  kLegacy418 = 1,  // 4.18-5.19, sim/kernel/abi_4_18.cc
  kLegacy60 = 2,   // 6.0-6.18, sim/kernel/abi_6_0.cc
  k619 = 3,        // 6.19, sim/kernel/abi_6_19.cc
  kRfc2015 = 4,    // the Oct 2015 RFC (never merged), sim/kernel/rfc2015.cc
  kMmCid = 5,      // 6.3-6.18 (node_id, mm_cid), sim/kernel/abi_mm_cid.cc
};
inline constexpr uint8_t kMaxKernelModel = 5;

struct KernelVersion {
  KernelModel model = KernelModel::kMmCid;
  std::string text = "6.18";  // the version string it was chosen from
};

// Parses "6.18", "6.1.0-13-amd64", "4.18", "5.10", ... into a model. Returns
// nullopt and sets *why for versions that are not modelled (with the list of
// supported ones).
std::optional<KernelVersion> ParseKernelVersion(const std::string& text, std::string* why);

// The running kernel's version (uname -r) if it is modelled, else 6.18 (and
// *note says why).
KernelVersion DefaultKernelVersion(std::string* note = nullptr);

// Whether the running kernel has the semantics of ABI `m`. Normally only its
// release's (DefaultKernelVersion). The patched kernel that kernel/qemu/run
// boots (kernel/patches/) also has: 6.19's ID policy instead of 6.0's while
// /proc/sys/kernel/rseq_ids_on_change reads 1 (patch 0002), and the 2015
// RFC's restartable_sequences(), x86-64 system call 335 (patch 0001; probed
// with an unknown op, which it refuses with EINVAL where other kernels give
// ENOSYS).
bool RunningKernelOffers(KernelModel m);

// "4.18-5.19 legacy", "6.0-6.2 legacy", "6.3-6.18 legacy + mm_cid",
// "6.19 rework", "2015 RFC".
const char* KernelModelName(KernelModel m);

}  // namespace rseqmc

#endif  // RSEQMC_SIM_KERNEL_MODEL_H_
