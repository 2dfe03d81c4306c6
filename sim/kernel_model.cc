#include "sim/kernel_model.h"

#include <sys/syscall.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <fstream>

namespace rseqmc {

namespace {
// What --kernel accepts, for the error messages (`rseqmc kernels` lists the
// ABIs with their sources).
constexpr const char* kSupported =
    "supported: the names rfc2015, 4.18, 6.0, mm_cid, 6.19 (`rseqmc kernels`), or a version 4.18..5.19 (4.18), "
    "6.0..6.2 (6.0), 6.3..6.18 (mm_cid), 6.19";
}  // namespace

std::optional<KernelVersion> ParseKernelVersion(const std::string& text, std::string* why) {
  int major = 0, minor = 0;
  if (text == "rfc2015") return KernelVersion{KernelModel::kRfc2015, "rfc2015"};
  if (text == "mm_cid") return KernelVersion{KernelModel::kMmCid, "mm_cid"};
  if (std::sscanf(text.c_str(), "%d.%d", &major, &minor) != 2 || major < 0 || minor < 0) {
    if (why) *why = "unknown kernel '" + text + "'; " + kSupported;
    return std::nullopt;
  }
  KernelVersion v;
  v.text = std::to_string(major) + "." + std::to_string(minor);
  if ((major == 4 && minor >= 18) || major == 5) {
    v.model = KernelModel::kLegacy418;
    return v;
  }
  if (major == 6 && minor <= 2) {
    v.model = KernelModel::kLegacy60;
    return v;
  }
  if (major == 6 && minor <= 18) {
    v.model = KernelModel::kMmCid;
    return v;
  }
  if (major == 6 && minor == 19) {
    v.model = KernelModel::k619;
    return v;
  }
  if (why) {
    if (major < 4 || (major == 4 && minor < 18)) {
      *why = "kernel " + v.text + " has no rseq (merged in 4.18); " + kSupported;
    } else {
      *why = "kernel " + v.text +
             " is newer than the newest modelled ABI (6.19); use --kernel 6.19 if its kernel/rseq.c and "
             "include/linux/rseq_entry.h are unchanged since; " + kSupported;
    }
  }
  return std::nullopt;
}

KernelVersion DefaultKernelVersion(std::string* note) {
  struct utsname u;
  if (uname(&u) == 0) {
    std::string why;
    if (auto v = ParseKernelVersion(u.release, &why)) return *v;
    if (note) *note = "running kernel " + std::string(u.release) + ": " + why + "; using 6.18";
  }
  return KernelVersion{};
}

bool RunningKernelOffers(KernelModel m) {
  switch (m) {
    case KernelModel::kRfc2015: {
      // op 2 is no operation of the RFC's call: EINVAL if it exists. Probed
      // in a child: a sandbox's seccomp filter may kill a caller of an
      // unknown system call (SIGSYS, or SIGILL on some hosts).
      static const bool offered = [] {
        constexpr long kRestartableSequencesX8664 = 335;
        const pid_t pid = fork();
        if (pid == 0) {
          const long r = syscall(kRestartableSequencesX8664, 2, 0, 0L, 0L, 0L);
          _exit(r == -1 && errno == EINVAL ? 0 : 1);
        }
        int status = 0;
        if (pid < 0 || waitpid(pid, &status, 0) != pid) return false;
        return WIFEXITED(status) && WEXITSTATUS(status) == 0;
      }();
      return offered;
    }
    default:
      break;
  }
  std::ifstream sysctl("/proc/sys/kernel/rseq_ids_on_change");
  int ids_on_change = 0;
  if (sysctl >> ids_on_change && ids_on_change == 1) return m == KernelModel::k619;
  return m == DefaultKernelVersion().model;
}

const char* KernelModelName(KernelModel m) {
  switch (m) {
    case KernelModel::kLegacy418: return "4.18-5.19 legacy";
    case KernelModel::kLegacy60: return "6.0-6.2 legacy";
    case KernelModel::kMmCid: return "6.3-6.18 legacy + mm_cid";
    case KernelModel::k619: return "6.19 rework";
    case KernelModel::kRfc2015: return "2015 RFC";
  }
  return "?";
}

}  // namespace rseqmc
