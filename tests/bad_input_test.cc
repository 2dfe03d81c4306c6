// Bad input: every malformed scenario gets an InputError naming the exact
// file:line:column with a recognisable message (DESIGN.md §10), and nothing
// (deep nesting, huge numbers, huge counts, random bytes) crashes or hangs.
#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include <string>

#include "scenarios/parser.h"
#include "sim/kernel/abi.h"
#include "scenarios/printer.h"
#include "sim/builder.h"
#include "sim/diag.h"
#include "sim/validate.h"

namespace rseqmc {
namespace {

struct BadCase {
  const char* name;
  std::string text;
  uint32_t line;
  uint32_t column;
  std::string message;  // a fragment of InputError::message()
  std::string hint = "";  // a fragment of InputError::hint() ("" = not checked)
  std::map<std::string, int64_t> defines = {};
};

// A valid scenario; the cases below change one line of it.
//   1 scenario bad
//   2 cpus 2
//   3 const OPS = 1
//   4 var x: u64
//   5 func f
//   6 retry:
//   7   li r1, OPS
//   8   rseq_arm f_cs
//   9 start:
//  10   st [r2], r1
//  11 post:
//  12   ret
//  13   sig 0x53053053
//  14 abort:
//  15   jmp retry
//  16   cs f_cs start=start post_commit=post abort=abort
//  17 end
//  18 thread t0 entry f cpu 0
//  19 property x == 0
std::string Base(int replace_line = 0, const std::string& with = "") {
  static const char* kLines[] = {
      "scenario bad",       "cpus 2",   "const OPS = 1",     "var x: u64",       "func f",
      "retry:",             "  li r1, OPS", "  rseq_arm f_cs", "start:",           "  st [r2], r1",
      "post:",              "  ret",    "  sig 0x53053053",  "abort:",           "  jmp retry",
      "  cs f_cs start=start post_commit=post abort=abort",    "end",              "thread t0 entry f cpu 0",
      "property x == 0",
  };
  std::string text;
  for (int i = 1; i <= static_cast<int>(std::size(kLines)); ++i) {
    text += (i == replace_line ? with : std::string(kLines[i - 1])) + "\n";
  }
  return text;
}

std::string Replace(std::string text, const std::string& from, const std::string& to) {
  return text.replace(text.find(from), from.size(), to);
}

void Check(const BadCase& c) {
  SCOPED_TRACE(c.name);
  try {
    ParseScenario(c.text, "bad.rsq", c.defines);
    ADD_FAILURE() << "no error for:\n" << c.text;
  } catch (const InputError& e) {
    EXPECT_EQ(e.file(), "bad.rsq");
    EXPECT_EQ(e.loc().line, c.line) << e.Format();
    EXPECT_EQ(e.loc().column, c.column) << e.Format();
    EXPECT_NE(e.message().find(c.message), std::string::npos) << e.Format();
    EXPECT_NE(e.hint().find(c.hint), std::string::npos) << e.Format();
    if (c.line != 0) {
      std::string where = "bad.rsq:" + std::to_string(c.line) + ":" + std::to_string(c.column) + ": error: ";
      EXPECT_EQ(e.Format().rfind(where, 0), 0u) << e.Format();
    }
  }
}

TEST(BadInputTest, BaseIsValid) { EXPECT_NO_THROW(ParseScenario(Base(), "bad.rsq")); }

TEST(BadInputTest, RequiredCases) {
  const BadCase cases[] = {
      {"undefined label", Base(15, "  jmp retyr"), 15, 3, "undefined label 'retyr'", "did you mean 'retry'?"},
      {"undefined function", Base(7, "  call fn"), 7, 3, "undefined function 'fn'", "did you mean 'f'?"},
      {"unknown symbol", Base(7, "  la r1, y"), 7, 3, "undefined symbol 'y'", "`var` or `percpu`"},
      {"commit not a store", Base(10, "  add r1, r1, 1"), 16, 6,
       "the last instruction of the section (line 10) must be the commit store (`st` or `st32`), found `add`",
       "`unchecked`"},
      {"abort label without signature", Base(13, "  nop"), 16, 6,
       "no signature before abort label 'abort': line 13 is `nop`, not `sig`",
       "add `sig 0x53053053` right before the abort label, or mark the descriptor `unchecked`"},
      {"register out of range", Base(7, "  li r16, OPS"), 7, 6, "register 'r16' out of range", "r0..r15"},
      {"bad scale", Base(10, "  st [r2 + r3*3], r1"), 10, 15, "bad scale 3", "1, 2, 4 or 8"},
      {"duplicate label", Base(9, "retry:"), 9, 1, "duplicate label 'retry' in function 'f'"},
      {"duplicate symbol", Base(2, "var x: u32"), 4, 5, "duplicate symbol 'x' (first declared at line 2)"},
      {"unknown statement", Base(2, "cpu 2"), 2, 1, "unknown statement 'cpu'", "did you mean 'cpus'?"},
      {"unknown opcode", Base(7, "  lo r1, OPS"), 7, 3, "unknown instruction 'lo'", "did you mean"},
      {"unterminated string", Base(2, "description \"per-cpu # counter"), 2, 13, "unterminated string"},
      {"bad integer", Base(2, "cpus 2x"), 2, 6, "bad integer '2x'"},
      {"unknown -D constant", Base(), 0, 0,
       "unknown constant 'THREADS' given with -D; the scenario declares: OPS",
       "leave -D THREADS out, or name one of the declared constants", {{"THREADS", 4}}},
      {"unknown -D constant, no constants declared", Replace(Base(7, "  li r1, 1"), "const OPS = 1\n", ""), 0, 0,
       "unknown constant 'OPS' given with -D; the scenario declares no constants",
       "leave -D OPS out: this scenario has no `const` to override", {{"OPS", 4}}},
      {"thread on a CPU >= cpus", Base(18, "thread t0 entry f cpu 2"), 18, 8,
       "thread 't0' starts on CPU 2 but the scenario has 2 CPU(s)"},
      {"empty affinity (nothing listed)", Base(18, "thread t0 entry f affinity"), 18, 27, "empty affinity",
       "`affinity all`"},
      {"empty affinity (no existing CPU)", Base(18, "thread t0 entry f affinity 5"), 18, 8,
       "thread 't0' has an empty affinity (no CPU below 2)"},
      {"missing scenario line", Base(1, "# no name"), 2, 1, "the first statement must be `scenario NAME`"},
      {"missing scenario line (empty file)", "# nothing\n\n", 1, 1, "missing `scenario NAME` line"},
      {"missing entry", Base(18, "thread t0 cpu 0"), 18, 8, "thread 't0' has no `entry FUNC`"},
      {"property naming an unknown symbol", Base(19, "property y == 0"), 19, 10, "unknown symbol 'y' in property"},
  };
  for (const BadCase& c : cases) Check(c);
}

// Review finding F10: a -D value that no 64-bit integer holds is refused on
// the command line (CliTest.BadDefinesExitTwoWithAMessage); one that does
// but overflows where it is used (a u32 initial value, a derived constant,
// a declared range such as 1..64 CPUs) is an error at that use, naming its
// line and column.
TEST(BadInputTest, DefinedValuesOutOfRangeAreErrorsAtTheirUse) {
  const BadCase cases[] = {
      {"-D value too big for a u32", Base(4, "var x: u32 = OPS"), 4, 14, "initial value 4294967296 does not fit in u32",
       "OPS here is 4294967296 from -D OPS=4294967296: give -D a value this line accepts", {{"OPS", 4294967296}}},
      {"-D value overflowing a derived constant", Base(4, "const N = (OPS * 4)"), 4, 16,
       "integer overflow in constant expression", "from -D OPS=4611686018427387904", {{"OPS", int64_t{1} << 62}}},
      {"-D value outside the CPUs' range", Replace(Base(), "cpus 2\nconst OPS = 1", "const OPS = 1\ncpus OPS"), 3, 6, "cpus must be between 1 and 64 (got 65)",
       "OPS here is 65 from -D OPS=65", {{"OPS", 65}}},
      {"-D value outside an array size's range", Base(4, "var x: u64[OPS]"), 4, 12, "array size -1 out of range",
       "leave -D OPS out to use the file's value", {{"OPS", -1}}},
  };
  for (const BadCase& c : cases) Check(c);
}

TEST(BadInputTest, MoreCases) {
  const BadCase cases[] = {
      {"missing end", "scenario p\nfunc f\n  ret\n", 2, 1, "function 'f' has no `end`"},
      {"statement inside a function", Base(17, "thread t1 entry f"), 17, 1, "unknown instruction 'thread'",
       "opened at line 5 is missing its `end`"},
      {"instruction outside a function", Base(3, "li r1, 2"), 3, 1, "unknown statement 'li'", "inside `func"},
      {"undefined descriptor", Base(8, "  rseq_arm g_cs"), 8, 3, "undefined descriptor 'g_cs'"},
      {"undefined label in cs", Base(16, "  cs f_cs start=strt post_commit=post abort=abort"), 16, 6,
       "undefined label 'strt'", "did you mean 'start'?"},
      {"abort inside the section", Base(16, "  cs f_cs start=retry post_commit=post abort=start"), 16, 6,
       "abort label 'start' lies inside the section ['retry', 'post')"},
      {"start after post_commit", Base(16, "  cs f_cs start=post post_commit=start abort=abort"), 16, 6,
       "start label 'post' comes after post_commit label 'start'"},
      {"missing cs field", Base(16, "  cs f_cs start=start abort=abort"), 16, 3, "needs start=, post_commit= and abort="},
      {"unknown cs field", Base(16, "  cs f_cs start=start post=post abort=abort"), 16, 23,
       "unknown descriptor field 'post'", "post_commit="},
      {"unknown thread in tgkill", Base(7, "  tgkill t9, SIGUSR1"), 7, 3, "undefined thread 't9'"},
      {"unknown signal", Base(7, "  tgkill t0, SIGUSR3"), 7, 14, "unknown signal 'SIGUSR3'"},
      {"SIGKILL handler", Base(19, "signal SIGKILL handler f"), 19, 8, "SIGKILL cannot be caught or ignored"},
      {"duplicate signal", Base(19, "signal SIGUSR1 ignore\nsignal SIGUSR1 handler f"), 20, 8,
       "duplicate `signal SIGUSR1`"},
      {"unknown handler", Base(19, "signal SIGUSR1 handler g"), 19, 8, "undefined function 'g'"},
      {"unknown entry", Base(18, "thread t0 entry g"), 18, 8, "undefined function 'g'"},
      {"duplicate thread", Base(19, "thread t0 entry f"), 19, 8, "duplicate thread 't0'"},
      {"duplicate function", Base(19, "func f\n  ret\nend"), 19, 6, "duplicate function 'f'"},
      {"duplicate constant", Base(4, "const OPS = 2"), 4, 7, "duplicate constant 'OPS' (first declared at line 3)"},
      {"unknown constant", Base(7, "  li r1, OP"), 7, 10, "unknown constant 'OP'", "did you mean 'OPS'?"},
      {"bad register token", Base(7, "  li x1, 1"), 7, 6, "expected a register (r0..r15), found 'x1'"},
      {"missing comma", Base(7, "  li r1 1"), 7, 9, "expected ','"},
      {"trailing junk", Base(12, "  ret r0"), 12, 7, "unexpected 'r0' after the instruction"},
      {"parenthesised immediate", Base(7, "  li r1, (1+1)"), 7, 10, "not allowed in instructions"},
      {"cas with index", Base(10, "  cas r1, [r2 + r3*8], r4, r5"), 10, 11, "`cas` takes [rB] or [rB + IMM]"},
      {"signature too wide", Base(13, "  sig 0x153053053"), 13, 7, "does not fit in 32 bits"},
      {"unknown escape", Base(2, "description \"a\\qb\""), 2, 15, "unknown escape '\\q'"},
      {"unexpected character", Base(2, "cpus $2"), 2, 6, "unexpected character '$'"},
      {"non-ASCII byte", Base(2, "cpus \xc3\xa9"), 2, 6, "unexpected byte 0xc3"},
      {"integer too large", Base(3, "const OPS = 18446744073709551616"), 3, 13, "does not fit in 64 bits"},
      {"overflow in constant expression", Base(3, "const OPS = (0x7fffffffffffffff + 1)"), 3, 33,
       "integer overflow in constant expression"},
      {"division by zero", Base(3, "const OPS = (1 / (1 - 1))"), 3, 16, "division by zero"},
      {"shift too far", Base(3, "const OPS = (1 << 64)"), 3, 16, "shift count 64 out of range"},
      {"too many CPUs", Base(2, "cpus 65"), 2, 6, "cpus must be between 1 and 64 (got 65)"},
      {"nodes above cpus", Base(2, "cpus 2\nnodes 3"), 3, 7, "nodes (3) exceeds cpus (2)"},
      {"array too large", Base(4, "var x: u64[(1 << 21)]"), 4, 12, "array size 2097152 out of range"},
      {"too many initial values", Base(4, "var x: u64[2] = {1, 2, 3}"), 4, 24, "more initial values than the 2"},
      {"u32 value too wide", Base(4, "var x: u32 = 0x100000000"), 4, 14, "does not fit in u32"},
      {"unknown type", Base(4, "var x: u16"), 4, 8, "unknown type 'u16'", "use u64 or u32"},
      {"stride too small", Base(4, "percpu x: u64[2] stride 8"), 4, 8, "stride 8 is smaller than the per-CPU block"},
      {"too many replicas", Base(18, "thread w * 1025 entry f"), 18, 12, "thread count 1025 out of range (1..1024)"},
      {"too many threads", Base(18, "thread w * 1024 entry f\nthread z entry f"), 19, 8, "too many threads"},
      {"replica index outside replication", Base(18, "thread t0 entry f cpu i"), 18, 23, "unknown constant 'i'",
       "replica index"},
      {"affinity excludes the initial CPU", Base(18, "thread t0 entry f cpu 1 affinity 0"), 18, 8,
       "starts on CPU 1, which its affinity does not allow"},
      {"unknown thread attribute", Base(18, "thread t0 entry f cpus 1"), 18, 19, "unknown thread attribute 'cpus'",
       "did you mean 'cpu'?"},
      {"scratch of unknown symbol", Base(19, "scratch y"), 19, 9, "scratch names unknown symbol 'y'"},
      {"array property without index", Base(4, "var x: u64[2]"), 19, 10, "array 'x' needs an index"},
      {"property index out of range", Base(19, "property x[0] == 0"), 19, 10, "'x' is a scalar, not an array"},
      {"per-CPU index out of range", Replace(Base(4, "percpu x: u64"), "property x == 0", "property x[2] == 0"), 19, 12,
       "CPU 2 out of range (0..1)"},
      {"unknown thread in ret()", Base(19, "property ret(t1) == 0"), 19, 14, "unknown thread 't1' in ret()",
       "did you mean 't0'?"},
      {"bad property syntax", Base(19, "property x == "), 19, 14, "expected a value"},
      {"function falls off its end", Base(15, "  nop"), 15, 3, "function 'f' can run past its last instruction"},
      {"empty function", Base(19, "func g\nend"), 19, 6, "function 'g' has no instructions"},
      {"branch to the end of the function", Base(17, "done:\nend") + "func g\n  jmp done\nend\n", 22, 3,
       "undefined label 'done'", "labels are local"},
      {"no threads", Base(18, "# none"), 1, 1, "declares no threads"},
      {"duplicate scenario", Base(2, "scenario again"), 2, 1, "duplicate `scenario` statement (first at line 1)"},
      {"bad expect", Base(19, "expect fail crash"), 19, 13, "unknown failure kind 'crash'"},
      {"label with an instruction", Base(9, "start: nop"), 9, 8, "unexpected 'nop' after the label"},
  };
  for (const BadCase& c : cases) Check(c);
}

// The review's D7 findings: region errors in region words, the empty
// region's labels, every `expect ... on` kernel from the ABI registry, a
// MAJOR.MINOR.PATCH version, and a `hint:` for each case that had none.
TEST(BadInputTest, NewSyntaxDiagnosticsNameTheFix) {
  const std::string rfc = "scenario bad\nvar x: u64\nfunc f\ns:\n  la r1, x\n  st [r1], r1\ne:\n  ret\n";
  const std::string tail = "end\nthread t entry f\n";
  std::string kernels;
  for (const KernelAbi* abi : AllAbis()) kernels += (kernels.empty() ? "" : ", ") + std::string(abi->info().name);
  const std::vector<BadCase> cases = {
      {"restart label after the last instruction", rfc + "rs:\n  region R start=s end=e restart=rs\n" + tail, 10, 10,
       "region 'R': restart= must label an instruction of function 'f'", "restart code's first instruction"},
      {"empty region", "scenario bad\nvar x: u64\nfunc f\ns:\ne:\n  ret\nrs:\n  jmp s\n  region R start=s end=e "
       "restart=rs\n" + tail, 9, 10, "region 'R' is empty: its start and end labels mark the same place, 's', 'e' (+0)",
       "put at least one instruction between them"},
      {"duplicate region field", rfc + "rs:\n  jmp s\n  region R start=s start=s end=e restart=rs\n" + tail, 11, 20,
       "duplicate region field 'start'", "give each field once"},
      {"region outside a function", "scenario bad\nregion R start=s end=e restart=rs\n", 2, 1,
       "unknown statement 'region'", "inside the function whose labels it names"},
      {"expect on nothing", Base(19, "expect pass on"), 19, 15, "expected a kernel after `on`", "kernels are " + kernels},
      {"expect on a trailing comma", Base(19, "expect pass on 6.0,"), 19, 20, "expected a kernel after `on`",
       "kernels are " + kernels},
      {"duplicate expect on", Base(19, "expect pass on 6.0\nexpect fail property on 6.2"), 20, 25,
       "duplicate expectation for kernel 6.2 (first at line 19)", "one expectation per kernel ABI"},
      {"futex_wait without its value", Base(12, "  futex_wait r1"), 12, 16, "expected ','",
       "the form: futex_wait rADDR, rVALUE|INT"},
      {"futex_wait of a symbol", Base(12, "  futex_wait x, 0"), 12, 14, "expected a register",
       "the form: futex_wait rADDR"},
      {"futex_wake of memory", Base(12, "  futex_wake [r1], 1"), 12, 14, "expected a register",
       "the form: futex_wake rADDR, rCOUNT|INT"},
      {"sleep without a length", Base(12, "  sleep"), 12, 8, "expected an integer", "the form: sleep rNS|INT"},
      {"sleep with two operands", Base(12, "  sleep r1, r2"), 12, 11, "unexpected ','", "the form: sleep rNS|INT"},
      {"rfc_region without a region", Base(12, "  rfc_region"), 12, 13, "expected a region name",
       "the form: rfc_region REGION"},
      {"rfc_cpu_ptr with two operands", Base(12, "  rfc_cpu_ptr r1, r2"), 12, 17, "unexpected ','",
       "the form: rfc_cpu_ptr rADDR|INT"},
  };
  for (const BadCase& c : cases) Check(c);
  // A kernel version with a patch level is the ABI of its MAJOR.MINOR.
  const Scenario s = ParseScenario(Base(19, "expect pass on 6.19.1"), "bad.rsq");
  ASSERT_EQ(s.expected_on.size(), 1u);
  EXPECT_EQ(s.ExpectedOn(KernelModel::k619), Verdict::kPass);
}

// `preempt voluntary` (a 2015-RFC restart option) is refused by every other
// ABI at its line, with the fix; rfc2015 takes it.
TEST(BadInputTest, PreemptVoluntaryIsRfc2015Only) {
  const Scenario s = ParseScenario(Base(2, "cpus 2\npreempt voluntary"), "bad.rsq");
  for (const KernelAbi* abi : AllAbis()) {
    SCOPED_TRACE(abi->info().name);
    const std::optional<AbiMismatch> m = abi->NotApplicable(s);
    ASSERT_TRUE(m.has_value());
    if (abi->info().model == KernelModel::kRfc2015) {
      EXPECT_EQ(m->message.find("preempt voluntary"), std::string::npos) << m->message;  // refused for its cs
      continue;
    }
    EXPECT_EQ(m->loc.line, 3u);
    EXPECT_EQ(m->loc.column, 9u);
    EXPECT_EQ(m->message.rfind("`preempt voluntary` is an option of the 2015 RFC's restart rule", 0), 0u) << m->message;
    EXPECT_EQ(m->hint, "remove the `preempt` line, or run this scenario with --kernel rfc2015");
  }
}

TEST(BadInputTest, FileErrorsNameTheFile) {
  try {
    ParseScenarioFile("/nonexistent/dir/x.rsq");
    FAIL();
  } catch (const InputError& e) {
    EXPECT_EQ(e.file(), "/nonexistent/dir/x.rsq");
    EXPECT_NE(e.Format().find("/nonexistent/dir/x.rsq"), std::string::npos);
  }
}

TEST(BadInputTest, FormatShowsTheLineAndACaret) {
  try {
    ParseScenario(Base(7, "  li r16, OPS"), "bad.rsq");
    FAIL();
  } catch (const InputError& e) {
    std::string f = e.Format();
    EXPECT_NE(f.find("bad.rsq:7:6: error: register 'r16' out of range"), std::string::npos) << f;
    EXPECT_NE(f.find("  li r16, OPS\n"), std::string::npos) << f;
    EXPECT_NE(f.find("\n       ^\n"), std::string::npos) << f;
  }
  // Semantic errors found by the builder also show the source line.
  try {
    ParseScenario(Base(15, "  jmp retyr"), "bad.rsq");
    FAIL();
  } catch (const InputError& e) {
    EXPECT_NE(e.Format().find("  jmp retyr\n"), std::string::npos) << e.Format();
  }
}

TEST(BadInputTest, BuilderErrorsHaveNoPositionButAreClear) {
  ScenarioBuilder b("b");
  b.Func("f").Ld(1, Mem(2, 3, 3)).Ret();
  b.Thread("t", "f", 0);
  try {
    b.Build();
    FAIL();
  } catch (const InputError& e) {
    EXPECT_EQ(e.loc().line, 0u);
    EXPECT_EQ(e.message(), "bad scale 3 in `ld`");
  }
  ScenarioBuilder c("c");
  c.Func("f").Cas(1, Mem(2, 3, 8), 4, 5).Ret();
  c.Thread("t", "f", 0);
  EXPECT_THROW(c.Build(), InputError);
  ScenarioBuilder d("d");
  d.Func("f").Li(16, 0).Ret();
  d.Thread("t", "f", 0);
  EXPECT_THROW(d.Build(), InputError);
}

TEST(BadInputTest, ErrorsComeInSourceOrder) {
  // Two semantic problems: the earlier line wins, whatever the check order.
  std::string text = Base(19, "property y == 0");
  text.replace(text.find("  jmp retry"), 11, "  jmp nowhere");
  try {
    ParseScenario(text, "bad.rsq");
    FAIL();
  } catch (const InputError& e) {
    EXPECT_EQ(e.loc().line, 15u) << e.Format();
  }
}

TEST(BadInputTest, PathologicalInputsAreBounded) {
  auto expect_error = [](const std::string& text, const std::string& fragment) {
    try {
      ParseScenario(text, "p.rsq");
      ADD_FAILURE() << "no error";
    } catch (const InputError& e) {
      EXPECT_NE(e.message().find(fragment), std::string::npos) << e.Format();
    }
  };
  const std::string head = "scenario p\nfunc f\n  ret\nend\nthread t entry f\n";
  expect_error(head + "property " + std::string(100000, '(') + "1" + std::string(100000, ')') + "\n",
               "nested too deeply");
  expect_error(head + "property " + std::string(100000, '-') + "x\n", "nested too deeply");
  expect_error(head + "property " + std::string(100000, '!') + "x\n", "nested too deeply");
  std::string chain = "1";
  for (int i = 0; i < 50000; ++i) chain += " + 1";
  expect_error(head + "property " + chain + "\n", "nested too deeply");
  expect_error(head + "const C = " + std::string(100000, '(') + "1\n", "nested too deeply");
  expect_error(head + "const C = (" + std::string(100000, '-') + "1)\n", "nested too deeply");
  expect_error(head + "var big: u64[4294967296]\n", "array size");
  expect_error(head + "percpu big: u64 stride 0x7fffffffffffffff\n", "stride");
  expect_error("scenario p\nfunc f\n" + std::string(1000, '\n'), "has no `end`");
  // Large data in total is refused by validation, not allocated.
  std::string many = "scenario p\ncpus 64\n";
  for (int i = 0; i < 40; ++i) many += "percpu a" + std::to_string(i) + ": u64[(1 << 20)]\n";
  expect_error(many + "func f\n  ret\nend\nthread t entry f\n", "the data reaches");
}

RC_GTEST_PROP(BadInputProperty, RandomTextNeverCrashes, ()) {
  // Random lines built from the format's own words and punctuation.
  static const std::vector<std::string> kWords = {
      "scenario", "func",  "end",  "thread", "entry", "cpu",  "cs",   "start=",  "abort=", "post_commit=",
      "li",       "r1",    "r16",  "[",      "]",     "+",    "*",    ",",       ":",      "(",
      ")",        "\"x",   "0x",   "-1",     "9999999999999999999", "x",  "i",   "property", "sum(x)",
      "var",      "u64",   "=",    "{",      "}",     "sig",  "jmp",  "percpu",  "\n",     "#",
      "signal",   "SIGUSR1", "handler", "const", "affinity", "args", "<u", "&&", "expect", "fail"};
  auto words = *rc::gen::container<std::vector<std::string>>(rc::gen::elementOf(kWords));
  std::string text = "scenario s\n";
  for (const std::string& w : words) text += w + " ";
  try {
    Scenario s = ParseScenario(text, "r.rsq");
    RC_ASSERT(ParseScenario(PrintScenario(s), "r2.rsq") == s);
  } catch (const InputError& e) {
    RC_ASSERT(!e.message().empty());
  }
}

}  // namespace
}  // namespace rseqmc
