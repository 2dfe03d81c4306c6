// Tests of the static descriptor checks (model/static_checks.h): every
// built-in (correct ones and planted bugs, whose bugs are dynamic) has no
// finding; each rule is shown on a variant of one small scenario, with the
// exact file:line:column, message and hint.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "model/static_checks.h"
#include "scenarios/builtin.h"
#include "scenarios/parser.h"

namespace rseqmc {
namespace {

// Line numbers below refer to this text (line 1 = `scenario`).
constexpr const char* kBase = R"(scenario sc
cpus 2
percpu counter: u64 = 0
func helper
  li    r0, 0
  ret
end
func inc
  la    r10, counter
retry:
  rseq_load r1, cpu_id_start
  shl   r2, r1, 6
  add   r2, r2, r10
  rseq_arm inc_cs
start:
  rseq_load r6, cpu_id
  bne   r6, r1, abort
  ld    r7, [r2]
  add   r7, r7, 1
  st    [r2], r7
post:
  li    r0, 0
  ret
  sig   0x53053053
abort:
  jmp   retry
  cs inc_cs start=start post_commit=post abort=abort
end
thread w entry inc
expect pass
)";

// kBase with the first occurrence of `from` replaced by `to`.
std::string Variant(const std::string& from, const std::string& to) {
  std::string t = kBase;
  const size_t at = t.find(from);
  if (at == std::string::npos) throw std::runtime_error("no '" + from + "' in the base scenario");
  t.replace(at, from.size(), to);
  return t;
}

std::vector<Finding> Check(const std::string& text, StaticCheckOptions o = {}) {
  return StaticCheck(ParseScenario(text, "sc.rsq"), o);
}

std::string Where(const Finding& f) {
  return f.file + ":" + std::to_string(f.loc.line) + ":" + std::to_string(f.loc.column);
}

TEST(StaticCheckTest, EveryBuiltinHasNoFinding) {
  // The planted bugs are dynamic (their headers say the static checks pass);
  // no_signature's descriptor is `unchecked` and so skipped by default.
  ASSERT_GE(BuiltinScenarios().size(), 9u);
  for (const BuiltinScenario& b : BuiltinScenarios()) {
    const Scenario s = ParseScenario(b.text, b.path);
    const std::vector<Finding> f = StaticCheck(s);
    EXPECT_TRUE(f.empty()) << b.name << ": " << (f.empty() ? "" : FormatFinding(f[0]));
  }
  EXPECT_TRUE(Check(kBase).empty());
}

TEST(StaticCheckTest, KernelCallInsideASection) {
  const auto f = Check(Variant("  add   r7, r7, 1\n", "  add   r7, r7, 1\n  sched_yield\n"));
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(Where(f[0]), "sc.rsq:20:3");
  EXPECT_EQ(f[0].message,
            "kernel call `sched_yield` inside critical section 'inc_cs' [start, post): a system call in a section is "
            "undefined (rule 19: debug kernels kill the process, legacy ones abort the section only if the call "
            "slept)");
  EXPECT_EQ(f[0].hint, "make the call before `rseq_arm inc_cs` or after the commit");
  // Every kernel call counts, `rseq_unregister` included.
  for (const char* call : {"sched_setaffinity 1", "getcpu", "tgkill w, SIGUSR1", "membarrier_rseq",
                           "rseq_register", "rseq_unregister"}) {
    const auto g = Check(Variant("  ld    r7, [r2]\n", std::string("  ") + call + "\n  ld    r7, [r2]\n"));
    ASSERT_EQ(g.size(), 1u) << call;
    EXPECT_EQ(Where(g[0]), "sc.rsq:18:3") << call;
    EXPECT_EQ(g[0].message.rfind("kernel call `", 0), 0u) << g[0].message;
  }
}

TEST(StaticCheckTest, CallInsideASection) {
  const auto f = Check(Variant("  ld    r7, [r2]\n", "  call  helper\n  ld    r7, [r2]\n"));
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(Where(f[0]), "sc.rsq:18:3");
  EXPECT_EQ(f[0].message,
            "`call helper` inside critical section 'inc_cs' [start, post): the callee runs outside the section's IP "
            "range, where preemption, migration and signals do not abort it, so the section is unprotected while "
            "the callee runs");
  EXPECT_EQ(f[0].hint, "inline the callee into the section, or call it before `rseq_arm inc_cs` or after the commit");
}

TEST(StaticCheckTest, BranchIntoASectionPastItsStart) {
  std::string text = Variant("  ld    r7, [r2]\n", "mid:\n  ld    r7, [r2]\n");
  const std::string retry = "  la    r10, counter\n";
  text.replace(text.find(retry), retry.size(), retry + "  beq   r10, 0, mid\n");
  const auto f = Check(text);
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(Where(f[0]), "sc.rsq:10:3");
  EXPECT_EQ(f[0].message,
            "`beq r10, 0, mid` enters critical section 'inc_cs' [start, post) at mid, not at its start_ip start: the "
            "entry skips the cpu_id check and the kernel may have cleared rseq_cs since the arm");
  EXPECT_EQ(f[0].hint, "branch to the instruction that arms the section (`rseq_arm inc_cs`) or to start");
  // A branch to start_ip itself is allowed (DESIGN.md §5); the dynamic oracle
  // judges whether rseq_cs was still armed there.
  EXPECT_TRUE(Check(Variant("  jmp   retry\n", "  jmp   start\n")).empty());
}

TEST(StaticCheckTest, SectionNotArmedInItsFunction) {
  const auto f = Check(Variant("  rseq_arm inc_cs\n", ""));
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(Where(f[0]), "sc.rsq:26:6");
  EXPECT_EQ(f[0].message,
            "critical section 'inc_cs' is not armed: no `rseq_arm inc_cs` before start in function inc, so rseq_cs "
            "may not point at it when the section runs");
  EXPECT_EQ(f[0].hint, "add `rseq_arm inc_cs` right before the start label (§2.4 step [1])");
  // Armed only in another function.
  std::string text = Variant("  rseq_arm inc_cs\n", "");
  text.replace(text.find("  li    r0, 0\n  ret\nend"), 0, "  rseq_arm inc_cs\n");
  const auto g = Check(text);
  ASSERT_EQ(g.size(), 1u);
  EXPECT_EQ(g[0].message,
            "critical section 'inc_cs' is not armed: no `rseq_arm inc_cs` before start in function inc (it is armed "
            "in function helper), so rseq_cs may not point at it when the section runs");
}

TEST(StaticCheckTest, ArmInsideItsOwnSection) {
  const auto f = Check(Variant("  ld    r7, [r2]\n", "  rseq_arm inc_cs\n  ld    r7, [r2]\n"));
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(Where(f[0]), "sc.rsq:18:3");
  EXPECT_EQ(f[0].message, "`rseq_arm inc_cs` inside its own critical section 'inc_cs' [start, post)");
  EXPECT_EQ(f[0].hint, "arm the descriptor once, right before its start label");
}

TEST(StaticCheckTest, InstructionsBetweenTheArmAndStart) {
  const auto f = Check(Variant("  rseq_arm inc_cs\n", "  rseq_arm inc_cs\n  li    r3, 1\n  nop\n"));
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(Where(f[0]), "sc.rsq:14:3");
  EXPECT_EQ(f[0].message,
            "`rseq_arm inc_cs` is not right before start: a preemption, migration or signal at the 2 instructions in "
            "between lets the kernel clear rseq_cs (lazy clear, rule 7) and critical section 'inc_cs' then runs "
            "unprotected");
  EXPECT_EQ(f[0].hint, "move `rseq_arm inc_cs` right before the start label");
}

TEST(StaticCheckTest, UncheckedDescriptorsOnlyWhenAsked) {
  // Commit not a store, abort label inside the section, no signature: the
  // validator lets an `unchecked` descriptor through, and so does StaticCheck
  // unless include_unchecked.
  std::string text = Variant("  st    [r2], r7\npost:\n", "post:\n  st    [r2], r7\n");
  text = std::string(text).replace(text.find("  sig   0x53053053\n"), 19, "");
  text.replace(text.find("abort=abort"), 11, "abort=start unchecked");
  EXPECT_TRUE(Check(text).empty());
  const auto f = Check(text, {.include_unchecked = true});
  ASSERT_EQ(f.size(), 3u);
  EXPECT_EQ(Where(f[0]), "sc.rsq:19:3");
  EXPECT_EQ(f[0].message,
            "the last instruction of critical section 'inc_cs' is `add r7, r7, 1`, not a store: the commit must be the "
            "single store right before post_commit (rule 21)");
  EXPECT_EQ(Where(f[1]), "sc.rsq:26:6");
  EXPECT_EQ(f[1].message, "abort label start of 'inc_cs' lies inside the section [start, post)");
  EXPECT_EQ(Where(f[2]), "sc.rsq:26:6");
  EXPECT_EQ(f[2].message,
            "abort label start of 'inc_cs' is not preceded by the signature: the kernel validates the 4 bytes before "
            "abort_ip on every evaluation and kills the process with SIGSEGV (rules 15, 17)");
}

TEST(StaticCheckTest, NoSignatureBuiltinWhenAskedAndFormat) {
  const BuiltinScenario* b = FindBuiltinScenario("buggy/no_signature");
  ASSERT_NE(b, nullptr);
  const Scenario s = ParseScenario(b->text, b->path);
  EXPECT_TRUE(StaticCheck(s).empty());
  const auto f = StaticCheck(s, {.include_unchecked = true});
  ASSERT_EQ(f.size(), 1u);
  // The source line comes from the file, or from the embedded text.
  const std::string at = Where(f[0]);
  EXPECT_EQ(FormatFinding(f[0]),
            at + ": error: abort label abort of 'load_add_store_nosig' is not preceded by the signature: the kernel "
                 "validates the 4 bytes before abort_ip on every evaluation and kills the process with SIGSEGV (rules "
                 "15, 17)\n    cs load_add_store_nosig start=start post_commit=post abort=abort unchecked\n"
                 "       ^\n  hint: put `sig 0x53053053` right before the abort label\n");
}

TEST(StaticCheckTest, FormatWithoutSource) {
  const auto f = Check(Variant("  rseq_arm inc_cs\n", ""));
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(FormatFinding(f[0]),
            "sc.rsq:26:6: error: critical section 'inc_cs' is not armed: no `rseq_arm inc_cs` before start in "
            "function inc, so rseq_cs may not point at it when the section runs\n"
            "  hint: add `rseq_arm inc_cs` right before the start label (§2.4 step [1])\n");
  Finding bare{"", {}, "m", ""};
  EXPECT_EQ(FormatFinding(bare), "error: m\n");
}

}  // namespace
}  // namespace rseqmc
