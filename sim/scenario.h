// A scenario: an IR program plus everything needed to run and judge it.
//
// Holds the number of virtual CPUs, the threads (entry function, initial CPU,
// affinity, initial registers), the signal dispositions, the final-state
// properties and the verdict the scenario declares it must produce (planted-bug
// scenarios declare a failure; DESIGN.md §12). Scenarios come from `.rsq` text
// (scenarios/parser.h) or the C++ builder (sim/builder.h).
#ifndef RSEQMC_SIM_SCENARIO_H_
#define RSEQMC_SIM_SCENARIO_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "sim/ir.h"
#include "sim/kernel_model.h"
#include "sim/original_code.h"

namespace rseqmc {

class ThreadApi;  // sim/thread_api.h

inline constexpr int kMaxCpus = 64;
// Threads per scenario (the allocator workload runs 400 on 32 CPUs). The
// exhaustive strategies (dfs, dpor, stateful) handle at most
// kMaxExhaustiveThreads (model/explorer.cc: one bit per thread in a node).
inline constexpr int kMaxThreads = 1024;
inline constexpr int kMaxExhaustiveThreads = 64;
inline constexpr int kMaxSignal = 31;
// Linux signal numbers used by the text format (x86-64).
inline constexpr int kSigKill = 9;
inline constexpr int kSigSegv = 11;
inline constexpr int kSigUsr1 = 10;
inline constexpr int kSigUsr2 = 12;

// Property expression over the final state. Values are 64-bit two's complement;
// comparisons and logic yield 0/1; division by zero evaluates to an error.
struct Expr {
  enum class Kind : uint8_t {
    kConst,   // value (name set if it came from a `const`)
    kSymbol,  // whole scalar symbol (count 1, not per-CPU): its value
    kIndex,   // sym[a] or sym[a][b]: args hold the index expressions
    kSum,     // sum(sym): all elements, all CPUs
    kRet,     // ret(thread): the thread's return value (r0 at exit)
    kUnary,   // op: '-', '!'
    kBinary,  // op: + - * / % == != < <= > >= && ||  (as strings)
  };
  Kind kind = Kind::kConst;
  int64_t value = 0;
  std::string name;  // constant / symbol / thread name
  std::string op;
  std::vector<Expr> args;
  SourceLoc loc;
  friend bool operator==(const Expr& a, const Expr& b);  // ignores loc
};

struct Property {
  Expr expr;
  std::string text;  // the expression as written (for reports)
  SourceLoc loc;
  friend bool operator==(const Property& a, const Property& b) { return a.expr == b.expr; }
};

// The body of a thread written in C++ against the thread API (sim/thread_api.h).
// It runs on its own fiber; every API call is one scheduling point.
using NativeBody = std::function<int64_t(ThreadApi&)>;

struct ThreadSpec {
  std::string name;
  int32_t entry = -1;          // function index; -1 when `native` is set
  uint32_t cpu = 0;            // initial CPU (with any_cpu: the default placement's)
  uint64_t affinity = ~0ull;   // allowed CPUs (bit i = CPU i), masked to the CPU count
  // `cpu any` (or `rseqmc check --placements all`): the thread may start on
  // any CPU its affinity allows, and exhaustive search explores every initial
  // placement in one exploration (sim/placement.h). Not part of the
  // scenario's fingerprint: a schedule token records the placement it ran.
  bool any_cpu = false;
  std::vector<std::pair<uint8_t, int64_t>> args;  // initial registers (reg, value)
  bool rseq_registered = true; // registered at start with kRseqSig (glibc 2.35+ does this)
  NativeBody native;           // C++ body instead of IR (builder only; not printable)
  SourceLoc loc;
  friend bool operator==(const ThreadSpec& a, const ThreadSpec& b) {
    return a.name == b.name && a.entry == b.entry && a.cpu == b.cpu && a.affinity == b.affinity &&
           a.any_cpu == b.any_cpu &&
           a.args == b.args && a.rseq_registered == b.rseq_registered &&
           static_cast<bool>(a.native) == static_cast<bool>(b.native);
  }
};

// Disposition of one signal number. Signals without a SignalSpec take the
// kernel's default action (signal(7)): SIGCHLD, SIGCONT, SIGURG and SIGWINCH
// are ignored (no rseq event either); the job-control stop signals are not
// modelled (a program's tgkill of one is discarded, injecting one is invalid);
// every other signal terminates the process (sim/machine.cc DefaultActionOf).
struct SignalSpec {
  int signo = kSigUsr1;
  int32_t handler = -1;  // function index; -1 = ignored (SIG_IGN: not an rseq event, rule §7.10)
  bool nodefer = false;  // SA_NODEFER: the signal is not blocked while its handler runs
  SourceLoc loc;
  friend bool operator==(const SignalSpec& a, const SignalSpec& b) {
    return a.signo == b.signo && a.handler == b.handler && a.nodefer == b.nodefer;
  }
};

// What an execution (or, for the checker, some execution) ends with.
enum class Verdict : uint8_t {
  kPass,            // every property and assert held, every thread returned
  kPropertyFailed,  // a final-state property evaluated to 0
  kAssertFailed,    // an `assert` instruction failed
  kSigsegv,         // the process was killed by SIGSEGV (rseq validation, bad access)
  kKilled,          // killed by another signal's default action
  kDeadlock,        // every live thread is blocked (futex wait) and none sleeps: nothing can wake them
  kStepLimit,       // the step budget ran out while threads still made progress (see kLivelock)
  kLivelock,        // no progress (README "Livelock") in the last half of the step budget, or every
                    // thread spins on memory no thread will change (found by exhaustive search)
};
inline constexpr Verdict kLastVerdict = Verdict::kLivelock;
const char* VerdictName(Verdict v);  // "pass", "property", "assert", "sigsegv", ...

struct Constant {
  std::string name;
  int64_t value = 0;
  bool overridden = false;  // set from the command line (-D)
  friend bool operator==(const Constant& a, const Constant& b) {
    return a.name == b.name && a.value == b.value;
  }
};

// Whether the kernel is preemptible. Only the 2015 RFC ABI's rules depend on
// it (reference/rfc2015.md "When a thread is restarted"): with kFull
// (CONFIG_PREEMPT) every switch-out requests notify-resume, with kVoluntary
// only a switch-out whose saved user IP is inside a region. `preempt full` /
// `preempt voluntary` in the text format.
enum class Preemption : uint8_t { kFull, kVoluntary };

struct Scenario {
  std::string name;
  std::string description;   // one line, shown by `rseqmc list`
  std::string file;          // where it was parsed from ("" if built in C++)
  uint32_t num_cpus = 1;
  uint32_t num_nodes = 1;    // NUMA nodes; CPU c is on node c * num_nodes / num_cpus
  Preemption preemption = Preemption::kFull;
  SourceLoc preemption_loc;  // the `preempt` statement (line 0: none)
  std::vector<Constant> constants;
  Program program;
  std::vector<ThreadSpec> threads;
  std::vector<SignalSpec> signals;
  std::vector<Property> properties;
  // The verdict expected under every kernel ABI that expected_on does not
  // name (`expect VERDICT`), and per ABI (`expect VERDICT on KERNEL`).
  Verdict expected = Verdict::kPass;
  struct KernelExpectation {
    KernelModel kernel;
    Verdict verdict;
    friend bool operator==(const KernelExpectation&, const KernelExpectation&) = default;
  };
  std::vector<KernelExpectation> expected_on;
  // Symbols an aborted attempt may write (speculative slots, per-thread scratch);
  // used by the checker's commit-serialisability oracle.
  std::vector<std::string> scratch;
  // The original machine code of imported functions (`import` statements),
  // for `rseqmc crosscheck --original-bytes`; empty without imports. Not part
  // of the scenario's identity (operator==): the IR is what is checked.
  OriginalCode original;

  const SignalSpec* FindSignal(int signo) const;
  int FindThread(const std::string& name) const;
  int FindConstant(const std::string& name) const;
  // The verdict expected under kernel ABI k.
  Verdict ExpectedOn(KernelModel k) const {
    for (const KernelExpectation& e : expected_on) {
      if (e.kernel == k) return e.verdict;
    }
    return expected;
  }
  friend bool operator==(const Scenario& a, const Scenario& b) {
    return a.name == b.name && a.description == b.description && a.num_cpus == b.num_cpus &&
           a.num_nodes == b.num_nodes && a.preemption == b.preemption && a.constants == b.constants && a.program == b.program &&
           a.threads == b.threads && a.signals == b.signals && a.properties == b.properties &&
           a.expected == b.expected && a.expected_on == b.expected_on && a.scratch == b.scratch;
  }
};

// Signal names accepted by the text format ("SIGUSR1", ...); -1 if unknown.
int SignalNumber(const std::string& name);
std::string SignalName(int signo);

}  // namespace rseqmc

#endif  // RSEQMC_SIM_SCENARIO_H_
