// What every long-running subcommand (`check`, `diff-kernels`, `crosscheck
// --mode outcomes`) shares: Ctrl-C (SIGINT) as a clean stop request, and the
// progress line on stderr.
#ifndef RSEQMC_TOOLS_RSEQMC_PROGRESS_LINE_H_
#define RSEQMC_TOOLS_RSEQMC_PROGRESS_LINE_H_

#include <signal.h>

#include <atomic>
#include <string>

#include "model/explorer.h"

namespace rseqmc::cli {

// Set by SIGINT while a SigintGuard lives; polled by the explorer (between
// executions and every 1024 boundaries inside one), so a run stops within a
// second of Ctrl-C.
const std::atomic<bool>& InterruptFlag();

// Installs the SIGINT handler that sets InterruptFlag() (cleared first) for
// the lifetime of the object. SA_RESETHAND: a second Ctrl-C kills the process
// the ordinary way.
class SigintGuard {
 public:
  SigintGuard();
  ~SigintGuard();
  SigintGuard(const SigintGuard&) = delete;
  SigintGuard& operator=(const SigintGuard&) = delete;

 private:
  struct sigaction old_ = {};
  bool installed_ = false;
};

// The progress line on stderr: overwritten in place when stderr is a
// terminal, else one line per call (the explorer calls about once a second).
class ProgressLine {
 public:
  ProgressLine();
  // Shows `line` (no newline).
  void Show(const std::string& line);
  // Erases a line shown in place, so a report can follow on a clean line.
  void Clear();

 private:
  bool tty_;
  bool shown_ = false;
};

// "WHO: 1200 executions (400/s), 3 distinct outcomes, depth 41, events bound
// 1[, 900 states]": the progress of one exploration, for ProgressLine.
std::string ExploreProgressText(const std::string& who, const ExploreProgress& p);

}  // namespace rseqmc::cli

#endif  // RSEQMC_TOOLS_RSEQMC_PROGRESS_LINE_H_
