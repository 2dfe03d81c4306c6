// Printer tests: parse(print(s)) == s for hand-written and built scenarios and
// for every built-in scenario; printing is idempotent; PrintInstr's text; and a
// RapidCheck property over random property expressions.
#include "scenarios/printer.h"

#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "scenarios/parser.h"
#include "sim/builder.h"
#include "sim/diag.h"

namespace rseqmc {
namespace {

std::string ReadFile(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

std::string SourceDir() {
  const char* env = std::getenv("RSEQMC_SOURCE_DIR");
  return env != nullptr ? env : RSEQMC_SOURCE_DIR;
}

// Parse -> print -> parse must give an equal scenario, and printing that again
// the same text.
void ExpectRoundTrip(const Scenario& s) {
  std::string text = PrintScenario(s);
  Scenario again;
  try {
    again = ParseScenario(text, "printed.rsq");
  } catch (const InputError& e) {
    FAIL() << e.Format() << "\nprinted text:\n" << text;
  }
  EXPECT_EQ(again, s) << text;
  EXPECT_EQ(PrintScenario(again), text);
}

constexpr const char* kEveryOpcode = R"rsq(scenario every_opcode
description "tab\there, quote \" and \\ and \x01"
cpus 3
nodes 3
const K = -9223372036854775807
const BIG = 0x7fffffffffffffff
var w: u32[3] = {4294967295, -2147483648}
percpu p: u64[2] stride 24
scratch w
func main
  li r0, K
  li r1, BIG
  mov r2, r1
  add r3, r2, -1
  sub r3, r3, r2
  and r3, r3, r2
  or r3, r3, 1
  xor r3, r3, r2
  shl r3, r3, 63
  shr r3, r3, r2
  mul r3, r3, -3
  la r4, p - 16
  ld r5, [r4 + r3*2 - 8]
  ld32 r5, [r4 - 9223372036854775807]
  st [r4], r5
  st32 [r4 + r3*1], r5
top:
  beq r1, -1, top
  bne r1, r2, top
  blt r1, r2, top
  bge r1, r2, top
  bltu r1, r2, top
  bgeu r1, r2, top
  call leaf
  rseq_load r6, mm_cid
  rseq_addr r7
  rseq_arm c
s:
  cas r8, [r4 - 8], r1, r2
  xadd r8, [r4 + r1*8], r1
  xchg r8, [r4], r1
  st32 [r4], r8
e:
  fence
  sched_yield
  sched_setaffinity -1
  getcpu
  tgkill t1, SIGALRM
  tgkill 7, 31
  membarrier_rseq -2
  rseq_register 0xffffffff
  rseq_unregister 0
  assert r1 >=u -1, "m"
  assert r1 == 2, "m"
  observe x.y, r15
  observe "", r15
  nop
  ret
  sig 0
a:
  jmp top
  cs c start=s post_commit=e abort=a
  cs d start=s post_commit=s abort=a flags=7 version=4294967295
end
func leaf
  ret
end
thread t0 entry main cpu 2 affinity 2, 0
thread t1 entry leaf cpu 0 args r15 = -9223372036854775807, r0 = 1 unregistered
signal SIGALRM handler leaf
signal 3 ignore
property w[2] == 0 || -(5) == !(-5) && p[1][1] * (2 + 3) - (1 - 1) / 1 % 2 != K
property -p[0][0] < 1 - (2 - 3)
expect fail steplimit
)rsq";

TEST(PrinterTest, EveryOpcodeRoundTrips) {
  Scenario s = ParseScenario(kEveryOpcode, "every.rsq");
  ExpectRoundTrip(s);
}

TEST(PrinterTest, OverriddenConstantsPrintTheirValue) {
  Scenario s = ParseScenario(kEveryOpcode, "every.rsq", {{"K", 5}});
  std::string text = PrintScenario(s);
  EXPECT_NE(text.find("const K = 5  # set with -D"), std::string::npos) << text;
  Scenario again = ParseScenario(text, "printed.rsq");
  EXPECT_EQ(again, s);
  EXPECT_FALSE(again.constants[0].overridden);
}

TEST(PrinterTest, CanonicalText) {
  Scenario s = ParseScenario(R"(scenario canon   # comment
cpus 2
var v: u64[2] = {1}
func f
start: 
  la r1, v + 8
  ld r2, [r1 + r2 * 4 - 8]
  assert r2 <u 3 , "x\"y"
  tgkill t, SIGUSR1
  membarrier_rseq
  jmp start
end
thread t entry f affinity all
property (v[0] + 1) * 2 == 4 - (1 - 1)
)",
                             "canon.rsq");
  EXPECT_EQ(PrintScenario(s), R"(scenario canon
cpus 2

var v: u64[2] = 1

func f
start:
  la r1, v + 8
  ld r2, [r1 + r2*4 - 8]
  assert r2 <u 3, "x\"y"
  tgkill t, SIGUSR1
  membarrier_rseq
  jmp start
end

thread t entry f cpu 0

property (v[0] + 1) * 2 == 4 - (1 - 1)
expect pass
)");
}

TEST(PrinterTest, PrintInstr) {
  Scenario s = ParseScenario(kEveryOpcode, "every.rsq");
  const Program& p = s.program;
  EXPECT_EQ(PrintInstr(p, 0), "li r0, -9223372036854775807");
  EXPECT_EQ(PrintInstr(p, 11), "la r4, p - 16");
  EXPECT_EQ(PrintInstr(p, 12), "ld r5, [r4 + r3*2 - 8]");
  EXPECT_EQ(PrintInstr(p, 16), "beq r1, -1, top");
  EXPECT_EQ(PrintInstr(p, 22), "call leaf");
  EXPECT_EQ(PrintInstr(p, 23), "rseq_load r6, mm_cid");
  EXPECT_EQ(PrintInstr(p, 25), "rseq_arm c");
  EXPECT_EQ(PrintInstr(p, 26), "cas r8, [r4 - 8], r1, r2");
  EXPECT_EQ(PrintInstr(p, 34), "tgkill 1, SIGALRM");  // no thread names in a Program
  EXPECT_EQ(PrintInstr(p, 36), "membarrier_rseq -2");
  EXPECT_EQ(PrintInstr(p, 37), "rseq_register 0xffffffff");
  EXPECT_EQ(PrintInstr(p, 39), "assert r1 >=u -1, \"m\"");
  EXPECT_EQ(PrintInstr(p, 41), "observe x.y, r15");
  EXPECT_EQ(PrintInstr(p, 42), "observe \"\", r15");
  EXPECT_EQ(PrintInstr(p, 45), "sig 0x0");
  EXPECT_EQ(PrintInstr(p, 999), "<invalid instruction 999>");
}

TEST(PrinterTest, BuiltScenarioRoundTrips) {
  ScenarioBuilder b("built");
  b.Cpus(2).Description("built in C++").Const("N", 2);
  b.Var("x", Width::kU64, 1).PerCpu("c", Width::kU32, 4, 0, {1, 2, 3});
  b.Func("main")
      .Label("top")
      .La(1, "c", 4)
      .Ld32(2, Mem(1, 3, 4, -4))
      .Assert(2, CmpKind::kLeu, Imm(9), "bounded")
      .Observe("seen value", 2)
      .Tgkill("t1", kSigUsr2)
      .MembarrierRseq(Imm(-1))
      .Beq(2, Imm(0), "top")
      .Ret();
  b.Func("h").Ret();
  b.Thread("t0", "main", 0, 0b11, {{3, 0}});
  b.Thread("t1", "h", 1, ~0ull, {}, false);
  b.Signal(kSigUsr2, "h", true);
  b.Property(expr::Binary("<=", expr::Index2("c", expr::Const(1), expr::Const(3)), expr::Const(2, "N")));
  b.Property(expr::Unary("-", expr::Const(5)));
  b.Expect(Verdict::kPropertyFailed);
  ExpectRoundTrip(b.Build());
}

TEST(PrinterTest, NativeThreadsBecomeAComment) {
  ScenarioBuilder b("native");
  b.Func("f").Ret();
  b.Thread("t0", "f", 0);
  b.Native("n", 0, [](ThreadApi&) -> int64_t { return 0; });
  std::string text = PrintScenario(b.Build());
  EXPECT_NE(text.find("# thread n: native C++ body (not printable)"), std::string::npos) << text;
  EXPECT_EQ(ParseScenario(text, "n.rsq").threads.size(), 1u);
}

TEST(PrinterTest, LabelLessTargetsGetSynthesizedLabels) {
  Scenario s = ParseScenario("scenario l\nfunc f\nx:\n  nop\n  jmp x\nend\nthread t entry f\n", "l.rsq");
  // Hand-edit the program: the jump now targets the unlabelled `jmp` itself,
  // and a label named like the synthesized one already exists.
  s.program.functions[0].labels[0].name = "_L1";
  s.program.code[1].target = 1;
  s.program.functions[0].labels.push_back({"y", 0});
  std::string text = PrintScenario(s);
  EXPECT_NE(text.find("_L1_:\n  jmp _L1_\n"), std::string::npos) << text;
  Scenario again = ParseScenario(text, "l2.rsq");
  EXPECT_EQ(again.program.code, s.program.code);
  EXPECT_EQ(PrintInstr(s.program, 1), "jmp _L1_");
}

TEST(PrinterTest, BuiltinScenariosRoundTrip) {
  namespace fs = std::filesystem;
  int count = 0;
  for (const char* dir : {"scenarios", "scenarios/buggy"}) {
    fs::path root = fs::path(SourceDir()) / dir;
    if (!fs::is_directory(root)) continue;
    for (const auto& entry : fs::directory_iterator(root)) {
      if (entry.path().extension() != ".rsq") continue;
      SCOPED_TRACE(entry.path().string());
      Scenario s = ParseScenario(ReadFile(entry.path()), entry.path().string());
      ExpectRoundTrip(s);
      ++count;
    }
  }
  RecordProperty("scenarios", count);
}

// Random property expressions: print -> parse gives the same tree.
Expr RandomExpr(int depth) {
  static const char* kBinary[] = {"+", "-", "*", "/", "%", "==", "!=", "<", "<=", ">", ">=", "&&", "||"};
  int choice = *rc::gen::inRange(0, depth > 0 ? 9 : 5);
  switch (choice) {
    case 0: return expr::Const(*rc::gen::arbitrary<int64_t>());
    case 1: return expr::Const(*rc::gen::inRange<int64_t>(-3, 3), "N");
    case 2: return expr::Sym("x");
    case 3: return expr::Sum("arr");
    case 4: return expr::Ret("t0");
    case 5: return expr::Index("arr", RandomExpr(depth - 1));
    case 6: return expr::Index2("pc", RandomExpr(depth - 1), RandomExpr(depth - 1));
    case 7: return expr::Unary(*rc::gen::element<std::string>("-", "!"), RandomExpr(depth - 1));
    default:
      return expr::Binary(kBinary[*rc::gen::inRange(0, 13)], RandomExpr(depth - 1), RandomExpr(depth - 1));
  }
}

RC_GTEST_PROP(PrinterProperty, ExpressionsRoundTrip, ()) {
  Expr e = RandomExpr(*rc::gen::inRange(0, 6));
  std::string text = PrintExpr(e);
  Expr again = ParsePropertyExpr(text, {{"N", 0, false}});
  // The constant N prints as its name and reads back with the declared value.
  std::function<void(Expr&)> fix = [&](Expr& x) {
    if (x.kind == Expr::Kind::kConst && x.name == "N") x.value = 0;
    for (Expr& a : x.args) fix(a);
  };
  fix(e);
  RC_ASSERT(again == e);
  RC_ASSERT(PrintExpr(again) == text);
}

}  // namespace
}  // namespace rseqmc
