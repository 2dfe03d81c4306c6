#include "tools/rseqmc/progress_line.h"

#include <unistd.h>

#include <cstdio>

namespace rseqmc::cli {
namespace {

std::atomic<bool> g_interrupted{false};
static_assert(std::atomic<bool>::is_always_lock_free);

extern "C" void OnSigint(int) { g_interrupted.store(true, std::memory_order_relaxed); }

}  // namespace

const std::atomic<bool>& InterruptFlag() { return g_interrupted; }

SigintGuard::SigintGuard() {
  g_interrupted.store(false);
  struct sigaction sa = {};
  sa.sa_handler = OnSigint;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = SA_RESETHAND;
  installed_ = sigaction(SIGINT, &sa, &old_) == 0;
}

SigintGuard::~SigintGuard() {
  if (installed_) sigaction(SIGINT, &old_, nullptr);
}

ProgressLine::ProgressLine() : tty_(isatty(STDERR_FILENO) == 1) {}

void ProgressLine::Show(const std::string& line) {
  if (tty_) {
    std::fprintf(stderr, "\r%s\033[K", line.c_str());
    shown_ = true;
  } else {
    std::fprintf(stderr, "%s\n", line.c_str());
  }
  std::fflush(stderr);
}

void ProgressLine::Clear() {
  if (shown_) std::fprintf(stderr, "\r\033[K");
  shown_ = false;
}

std::string ExploreProgressText(const std::string& who, const ExploreProgress& p) {
  char line[320];
  const double rate = p.elapsed_s > 0 ? static_cast<double>(p.executions) / p.elapsed_s : 0;
  std::snprintf(line, sizeof line, "%s: %llu executions (%.0f/s), %llu distinct outcomes, depth %llu, events bound %u%s",
                who.c_str(), static_cast<unsigned long long>(p.executions), rate,
                static_cast<unsigned long long>(p.distinct_outcomes), static_cast<unsigned long long>(p.max_depth),
                p.bound_level, p.states != 0 ? (", " + std::to_string(p.states) + " states").c_str() : "");
  return line;
}

}  // namespace rseqmc::cli
