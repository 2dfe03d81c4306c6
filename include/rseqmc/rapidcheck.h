// RapidCheck glue for rseqmc: generate scenarios inside a user's property
// test. The generator wraps the user's own per-CPU operation (a `.rsq`
// function) in random workloads: CPU count, thread count, each thread's
// starting CPU, whether it is pinned there, operations per thread, the delta
// each adds, and whether a SIGUSR1 handler is installed (so injected signals
// can interrupt the operation). Each workload states the exact final sum, so
// the property "the workload is rseq-safe" needs no hand-written oracle.
//
// The operation's contract (the register convention of the built-in
// scenarios, scenarios/percpu_counter.rsq): `func OP` takes cpu in r1 (read
// from cpu_id_start by the caller), &counter[cpu] in r2 and the delta in r3;
// it adds the delta to counter[cpu] in a critical section and returns 0 in
// r0, or -1 when the section aborted (the caller then re-reads cpu_id_start
// and retries); it may clobber r0..r7 but not r8..r15. `counter` is a per-CPU
// u64 with a 64-byte stride.
//
//     RC_GTEST_PROP(MyOp, RseqSafeUnderAnyWorkload, ()) {
//       const auto w = *rseqmc::rcgen::GenCounterWorkload(kMyOpText, "my_add");
//       rseqmc::api::CheckOptions o;
//       o.kernel = *rseqmc::rcgen::GenKernel();
//       const auto r = rseqmc::api::Check(w.Build(), o);
//       RC_ASSERT(r.status == rseqmc::api::Status::kPass);
//     }
//
// Header-only on top of rseqmc/rseqmc.h and RapidCheck (link `rapidcheck`).
#ifndef RSEQMC_INCLUDE_RSEQMC_RAPIDCHECK_H_
#define RSEQMC_INCLUDE_RSEQMC_RAPIDCHECK_H_

#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

#include <rapidcheck.h>

#include "rseqmc/rseqmc.h"

namespace rseqmc::rcgen {

// One generated workload: the parameters and the `.rsq` text they make.
struct CounterWorkload {
  uint32_t cpus = 1;                  // 1..3 virtual CPUs
  std::vector<uint32_t> start_cpu;    // per thread, < cpus
  std::vector<bool> pinned;           // per thread: affinity = its start CPU only
  std::vector<int64_t> delta;         // per thread: what each operation adds (1..5)
  uint32_t ops = 1;                   // operations per thread, 1..3
  bool signal_handler = false;        // a SIGUSR1 handler counts deliveries
  std::string op_name;
  std::string op_text;                // the user's function body (without func/end)

  // sum(counter) after every thread finished: ops * sum of the deltas.
  int64_t ExpectedSum() const {
    int64_t sum = 0;
    for (int64_t d : delta) sum += d * ops;
    return sum;
  }

  // The scenario as `.rsq` text.
  std::string Text() const {
    std::string t = "scenario workload_" + op_name + "\ncpus " + std::to_string(cpus) +
                    "\npercpu counter: u64 stride 64 = 0\nvar signals: u64 = 0\n";
    t += "func " + op_name + "\n" + op_text + (op_text.empty() || op_text.back() == '\n' ? "" : "\n") + "end\n";
    t += "func on_sigusr1\n  la r1, signals\n  li r2, 1\n  xadd r3, [r1], r2\n  ret\nend\n";
    for (size_t i = 0; i < delta.size(); ++i) {
      const std::string n = std::to_string(i);
      t += "func worker" + n + "\n  la r10, counter\n  li r8, 0\nloop:\n  beq r8, " + std::to_string(ops) +
           ", done\nretry:\n  rseq_load r1, cpu_id_start\n  shl r2, r1, 6\n  add r2, r2, r10\n  li r3, " +
           std::to_string(delta[i]) + "\n  call " + op_name + "\n  bne r0, 0, retry\n  add r8, r8, 1\n  jmp loop\n" +
           "done:\n  mov r0, r8\n  ret\nend\n";
      t += "thread t" + n + " entry worker" + n + " cpu " + std::to_string(start_cpu[i]) + " affinity " +
           (pinned[i] ? std::to_string(start_cpu[i]) : std::string("all")) + "\n";
    }
    if (signal_handler) t += "signal SIGUSR1 handler on_sigusr1\n";
    return t + "property sum(counter) == " + std::to_string(ExpectedSum()) + "\nexpect pass\n";
  }

  // Parses Text(). Throws api::Error when the user's function is malformed.
  api::Scenario Build() const { return api::Scenario::FromText(Text(), "<workload " + op_name + ">"); }
};

// Workloads of 1..max_threads threads around the operation `op_name` whose
// body is `op_text` (see the contract above).
inline ::rc::Gen<CounterWorkload> GenCounterWorkload(std::string op_text, std::string op_name,
                                                     uint32_t max_threads = 3) {
  return ::rc::gen::exec([op_text, op_name, max_threads] {
    CounterWorkload w;
    w.op_name = op_name;
    w.op_text = op_text;
    w.cpus = *::rc::gen::inRange<uint32_t>(1, 4);
    const uint32_t threads = *::rc::gen::inRange<uint32_t>(1, max_threads + 1);
    for (uint32_t i = 0; i < threads; ++i) {
      w.start_cpu.push_back(*::rc::gen::inRange<uint32_t>(0, w.cpus));
      w.pinned.push_back(*::rc::gen::arbitrary<bool>());
      w.delta.push_back(*::rc::gen::inRange<int64_t>(1, 6));
    }
    w.ops = *::rc::gen::inRange<uint32_t>(1, 4);
    w.signal_handler = *::rc::gen::arbitrary<bool>();
    return w;
  });
}

// A modelled kernel ABI name for CheckOptions::kernel: the 4.18-5.19,
// 6.0-6.2 and 6.3-6.18 (mm_cid) models at their first and last versions.
inline ::rc::Gen<std::string> GenKernel() {
  return ::rc::gen::element<std::string>("4.18", "5.19", "6.0", "6.2", "6.3", "6.18");
}

// RapidCheck prints a failing workload as its `.rsq` text (save it and run
// `rseqmc check FILE`).
inline void showValue(const CounterWorkload& w, std::ostream& os) { os << "\n" << w.Text(); }

}  // namespace rseqmc::rcgen

#endif  // RSEQMC_INCLUDE_RSEQMC_RAPIDCHECK_H_
