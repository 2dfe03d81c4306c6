// The lifter's flag model (import/lift.h) against this processor: every
// function of import/examples/flags.c (`cmp`/`test`/`sub` in 64 and 32 bits,
// then one of 12 conditions) runs natively and lifted in the simulator on the
// same inputs, including 32-bit operands whose upper register halves hold
// garbage; the lifted result must equal the processor's.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "import/elf_object.h"
#include "import/lift.h"
#include "sim/builder.h"
#include "sim/schedule.h"
#include "sim/simulator.h"

#define RSEQMC_FLAG_FUNCS(cc)                                                                       \
  long cmpq_##cc(long, long);                                                                       \
  long cmpl_##cc(int, int);                                                                         \
  long testq_##cc(long, long);                                                                      \
  long testl_##cc(int, int);                                                                        \
  long subq_##cc(long, long);                                                                       \
  long subl_##cc(int, int);
extern "C" {
RSEQMC_FLAG_FUNCS(e) RSEQMC_FLAG_FUNCS(ne) RSEQMC_FLAG_FUNCS(b) RSEQMC_FLAG_FUNCS(ae)
RSEQMC_FLAG_FUNCS(be) RSEQMC_FLAG_FUNCS(a) RSEQMC_FLAG_FUNCS(l) RSEQMC_FLAG_FUNCS(ge)
RSEQMC_FLAG_FUNCS(le) RSEQMC_FLAG_FUNCS(g) RSEQMC_FLAG_FUNCS(s) RSEQMC_FLAG_FUNCS(ns)
}

namespace rseqmc {
namespace {

struct FlagFunc {
  std::string name;
  long (*wide)(long, long);
  long (*narrow)(int, int);
};

#define RSEQMC_FLAG_ENTRIES(cc)                                                                     \
  {"cmpq_" #cc, cmpq_##cc, nullptr}, {"cmpl_" #cc, nullptr, cmpl_##cc},                             \
      {"testq_" #cc, testq_##cc, nullptr}, {"testl_" #cc, nullptr, testl_##cc},                     \
      {"subq_" #cc, subq_##cc, nullptr}, {"subl_" #cc, nullptr, subl_##cc},

TEST(ImportFlagsTest, LiftedConditionsEqualTheProcessor) {
  const std::vector<FlagFunc> funcs = {RSEQMC_FLAG_ENTRIES(e) RSEQMC_FLAG_ENTRIES(ne) RSEQMC_FLAG_ENTRIES(b)
                                           RSEQMC_FLAG_ENTRIES(ae) RSEQMC_FLAG_ENTRIES(be) RSEQMC_FLAG_ENTRIES(a)
                                               RSEQMC_FLAG_ENTRIES(l) RSEQMC_FLAG_ENTRIES(ge)
                                                   RSEQMC_FLAG_ENTRIES(le) RSEQMC_FLAG_ENTRIES(g)
                                                       RSEQMC_FLAG_ENTRIES(s) RSEQMC_FLAG_ENTRIES(ns)};
  ASSERT_EQ(funcs.size(), 72u);
  // Edge values of both widths; the 32-bit functions get them with their
  // upper halves as they are (garbage for a 32-bit operand).
  const std::vector<int64_t> values = {0,          1,          -1,         5,          -5,
                                       INT32_MAX,  INT32_MIN,  0x80000000, 0xffffffff, 0x100000000,
                                       0x17fffffff, INT64_MAX, INT64_MIN};
  const import::ElfObject obj = import::ElfObject::Open(std::string(RSEQMC_IMPORT_EXAMPLES) + "/flags.o");
  int compared = 0, taken = 0;
  for (const FlagFunc& f : funcs) {
    ScenarioBuilder b("flags");
    const auto lifted = import::ImportFunctions(obj, {f.name}, b);
    b.Thread("t", f.name, 0);
    Scenario s = b.Build();
    import::FinishImport(lifted, s);
    for (int64_t a : values) {
      for (int64_t v : values) {
        s.threads[0].args = {{7, a}, {6, v}};  // rdi, rsi
        Simulator sim(s);
        RandomScheduler sched(1);
        const ExecutionResult r = sim.Run(sched);
        ASSERT_EQ(r.verdict, Verdict::kPass) << f.name;
        const long native = f.wide != nullptr ? f.wide(a, v) : f.narrow(static_cast<int>(a), static_cast<int>(v));
        EXPECT_EQ(r.threads[0].ret, native) << f.name << "(" << a << ", " << v << ")";
        ++compared;
        taken += native == 1;
      }
    }
  }
  EXPECT_EQ(compared, 72 * 13 * 13);
  EXPECT_GT(taken, 0);
  EXPECT_LT(taken, compared);
}

}  // namespace
}  // namespace rseqmc
