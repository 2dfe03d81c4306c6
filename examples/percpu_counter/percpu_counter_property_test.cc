// RapidCheck glue (rseqmc/rapidcheck.h): our add operation is rseq-safe in
// every generated workload (CPUs, threads, starting CPUs, pinning, deltas,
// operations per thread, a signal handler), on every modelled kernel ABI.
#include <string>

#include <gtest/gtest.h>
#include <rapidcheck.h>

#include <rseqmc/rapidcheck.h>
#include <rseqmc/rseqmc.h>

namespace {

// rseq_load_add_store: cpu in r1, &counter[cpu] in r2, delta in r3; 0 or -1 in r0.
const char* const kAddOp =
    "  rseq_arm add\n"
    "start:\n"
    "  rseq_load r6, cpu_id\n"
    "  bne r6, r1, abort\n"
    "  ld r7, [r2]\n"
    "  add r7, r7, r3\n"
    "  st [r2], r7\n"
    "post:\n"
    "  li r0, 0\n"
    "  ret\n"
    "  sig 0x53053053\n"
    "abort:\n"
    "  li r0, -1\n"
    "  ret\n"
    "  cs add start=start post_commit=post abort=abort\n";

TEST(PercpuCounterProperty, AddIsRseqSafeInEveryWorkload) {
  const bool ok = rc::check("add is rseq-safe", [] {
    const auto w = *rseqmc::rcgen::GenCounterWorkload(kAddOp, "add_op", /*max_threads=*/2);
    rseqmc::api::CheckOptions o;
    o.kernel = *rseqmc::rcgen::GenKernel();
    const rseqmc::api::CheckResult r = rseqmc::api::Check(w.Build(), o);
    RC_ASSERT(r.status == rseqmc::api::Status::kPass);
  });
  EXPECT_TRUE(ok);
}

}  // namespace
