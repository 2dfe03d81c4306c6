// Runs the built rseqmc binary (RSEQMC_BINARY) for the end-to-end CLI tests:
// stdout through a pipe, stderr into a temporary file (so neither can block
// the other), optionally interrupting it with SIGINT once it is exploring.
#ifndef RSEQMC_TESTS_CLI_RUNNER_H_
#define RSEQMC_TESTS_CLI_RUNNER_H_

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

extern char** environ;

namespace rseqmc::testing {

struct CliResult {
  int code = -1;  // exit status, or 128 + signal if it died of a signal
  std::string out;
  std::string err;
  long peak_rss_kib = 0;  // the child's peak resident set (wait4's ru_maxrss, KiB): for reports, never asserted
};

inline std::string Fixture(const std::string& name) {
  return std::string(RSEQMC_SOURCE_DIR) + "/tests/data/" + name;
}

inline std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// True once process `pid` has a handler installed for signal `sig`
// (/proc/PID/status, SigCgt); *exited is set if it has already exited.
inline bool CatchesSignal(pid_t pid, int sig, bool* exited) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/status");
  *exited = !in;
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("State:", 0) == 0 && line.find('Z') != std::string::npos) *exited = true;
    if (line.rfind("SigCgt:", 0) == 0) {
      const unsigned long long mask = std::strtoull(line.c_str() + 7, nullptr, 16);
      return ((mask >> (sig - 1)) & 1) != 0;
    }
  }
  return false;
}

struct Interrupt {
  bool enabled = false;
  double after_s = 0.5;  // after the SIGINT handler is installed (and the stderr text below has appeared)
  // If not empty: the SIGINT waits until the child's stderr contains this
  // text (e.g. the line a command prints when it starts minimising).
  std::string after_stderr = "";
};

// Runs the rseqmc binary with `args`. With `interrupt.enabled`, sends SIGINT
// `interrupt.after_s` seconds after the child has installed its SIGINT
// handler (so the signal can never kill it before it is ready). A non-empty
// `stdout_file` (e.g. /dev/full) receives the child's stdout instead of
// res.out.
inline CliResult RunCli(const std::vector<std::string>& args, Interrupt interrupt = {},
                        const std::string& stdout_file = "") {
  CliResult res;
  char err_path[] = "/tmp/rseqmc_cli_test_XXXXXX";
  const int err_fd = mkstemp(err_path);
  if (err_fd < 0) {
    ADD_FAILURE() << "mkstemp failed";
    return res;
  }
  int out_pipe[2];
  if (pipe(out_pipe) != 0) {
    ADD_FAILURE() << "pipe failed";
    close(err_fd);
    unlink(err_path);
    return res;
  }
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  if (stdout_file.empty()) {
    posix_spawn_file_actions_adddup2(&actions, out_pipe[1], 1);
  } else {
    posix_spawn_file_actions_addopen(&actions, 1, stdout_file.c_str(), O_WRONLY, 0);
  }
  posix_spawn_file_actions_adddup2(&actions, err_fd, 2);
  posix_spawn_file_actions_addclose(&actions, out_pipe[0]);
  posix_spawn_file_actions_addclose(&actions, out_pipe[1]);
  posix_spawn_file_actions_addclose(&actions, err_fd);
  // The child starts with SIGINT at its default action, whatever ours is.
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  sigset_t defaults;
  sigemptyset(&defaults);
  sigaddset(&defaults, SIGINT);
  posix_spawnattr_setsigdefault(&attr, &defaults);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGDEF);

  std::vector<std::string> argv_storage = {RSEQMC_BINARY};
  argv_storage.insert(argv_storage.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (std::string& a : argv_storage) argv.push_back(a.data());
  argv.push_back(nullptr);

  pid_t pid = -1;
  const int rc = posix_spawn(&pid, RSEQMC_BINARY, &actions, &attr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attr);
  close(out_pipe[1]);
  if (rc != 0) {
    ADD_FAILURE() << "posix_spawn " << RSEQMC_BINARY << " failed: " << rc;
  } else {
    std::thread interrupter;
    if (interrupt.enabled) {
      interrupter = std::thread([pid, interrupt, err = std::string(err_path)] {
        const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
        bool exited = false;
        while (!CatchesSignal(pid, SIGINT, &exited) && !exited && std::chrono::steady_clock::now() < deadline) {
          std::this_thread::sleep_for(std::chrono::milliseconds(5));
        }
        // A hang guard, not a timing: the text normally appears at once.
        while (!interrupt.after_stderr.empty() && !exited && std::chrono::steady_clock::now() < deadline &&
               ReadFile(err).find(interrupt.after_stderr) == std::string::npos) {
          std::this_thread::sleep_for(std::chrono::milliseconds(5));
          CatchesSignal(pid, SIGINT, &exited);
        }
        if (exited) return;
        std::this_thread::sleep_for(std::chrono::duration<double>(interrupt.after_s));
        kill(pid, SIGINT);  // the child is not reaped before this thread is joined
      });
    }
    char buf[65536];
    ssize_t n;
    while ((n = read(out_pipe[0], buf, sizeof buf)) > 0) res.out.append(buf, static_cast<size_t>(n));
    if (interrupter.joinable()) interrupter.join();
    int status = 0;
    rusage ru{};
    while (wait4(pid, &status, 0, &ru) < 0) {
    }
    res.peak_rss_kib = ru.ru_maxrss;
    res.code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  }
  close(out_pipe[0]);
  close(err_fd);
  res.err = ReadFile(err_path);
  unlink(err_path);
  return res;
}

// `err` without the one line AddressSanitizer prints for any program that
// switches fibers with swapcontext ("==PID==WARNING: ASan doesn't fully
// support makecontext/swapcontext ..."), so that a test can assert an exact
// standard error in the sanitizer build too. Every other line is kept.
inline std::string WithoutSanitizerNotes(const std::string& err) {
  std::istringstream in(err);
  std::string out, line;
  while (std::getline(in, line)) {
    const bool note = line.rfind("==", 0) == 0 && line.find("WARNING: ASan doesn't fully support") != std::string::npos;
    if (!note) out += line + "\n";
  }
  if (!err.empty() && err.back() != '\n' && !out.empty()) out.pop_back();
  return out;
}

inline std::string Describe(const std::vector<std::string>& args, const CliResult& r) {
  std::string cmd = "rseqmc";
  for (const std::string& a : args) cmd += " " + a;
  return cmd + "\n--- exit " + std::to_string(r.code) + "\n--- stdout:\n" + r.out + "--- stderr:\n" + r.err;
}

}  // namespace rseqmc::testing

#endif  // RSEQMC_TESTS_CLI_RUNNER_H_
