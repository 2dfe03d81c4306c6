// Parser tests: every statement and every opcode of scenarios/README.md parse to
// the IR fields sim/ir.h documents; constants, -D overrides, replication,
// properties, strings and the small public helpers.
#include "scenarios/parser.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>

#include "sim/builder.h"
#include "sim/diag.h"

namespace rseqmc {
namespace {

// Every statement and opcode once (the printer test reuses it through the file).
constexpr const char* kAllOps = R"rsq(# Every statement and every opcode.
scenario all_ops
description "every \"opcode\" \\ once"
cpus 4
nodes 2
const OPS = 3
const STRIDE = (64 * 2)
const NEG = -5
var counter: u64 = 0
var arr: u32[4] = {1, 2}
percpu slots: u64[2] stride STRIDE = {7, 8}
percpu pc: u64
scratch arr, slots

func main
  li r1, OPS
  li r2, NEG
  li r3, 0x53053053
  mov r4, r1
  add r5, r4, r1
  sub r5, r5, 1
  and r5, r5, 0xff
  or r5, r5, r2
  xor r5, r5, r5
  shl r6, r1, 6
  shr r6, r6, 2
  mul r6, r6, r1
  la r10, counter
  la r11, arr + 8
  la r12, slots - 8
  ld r7, [r10]
  ld32 r7, [r11 + 4]
  st [r10 - 8], r7
  st32 [r11 + r1*4], r7
  ld r8, [r12 + r1*8 + 16]
loop:
  beq r1, r2, done
  bne r1, 0, next
next:
  blt r1, r2, done
  bge r1, OPS, done
  bltu r1, r2, done
  bgeu r1, 1, done
  call helper
  rseq_load r1, cpu_id_start
  rseq_load r1, cpu_id
  rseq_load r1, node_id
  rseq_load r1, mm_cid
  rseq_load r1, flags
  rseq_addr r9
  rseq_arm main_cs
start:
  cas r1, [r10 + 8], r2, r3
  xadd r1, [r10], r2
  xchg r1, [r11 + r2*2], r2
  st [r10], r1
post:
  fence
  sched_yield
  sched_setaffinity 3
  sched_setaffinity r4
  getcpu
  tgkill t1, SIGUSR1
  tgkill r2, SIGUSR2
  tgkill 1, 10
  membarrier_rseq
  membarrier_rseq 2
  membarrier_rseq r3
  rseq_register
  rseq_unregister 0x12345678
  assert r1 == 0
  assert r1 != r2, "not equal"
  assert r1 <u 5, "unsigned \"less\""
  assert r1 <=u r2
  assert r1 >u 5
  assert r1 >=u 5
  assert r1 < 5
  assert r1 <= 5
  assert r1 > -5
  assert r1 >= r3
  observe result, r1
  observe "odd name", r2
  nop
  jmp done
  sig 0x53053053
abort:
  jmp loop
done:
  ret
  cs main_cs start=start post_commit=post abort=abort flags=0 version=0
  cs other_cs start=start post_commit=post abort=abort flags=1 version=2 unchecked
end

func helper
  ret
end

func handler
  observe sig, r1
  ret
end

thread t0 entry main cpu 0
thread t1 entry main cpu 1 affinity 1, 3 args r1 = 5, r2 = (OPS * 2) unregistered
thread w * 2 entry helper cpu (i + 2) args r3 = i
signal SIGUSR1 handler handler nodefer
signal SIGUSR2 ignore
property counter == 0
property sum(slots) + arr[1] * 2 >= OPS && !(ret(t0) != 0) || slots[1][0] == -1
property pc[3] - -5 == (1 - 2) - 3
expect fail assert
)rsq";

const Instr& At(const Scenario& s, const std::string& func, uint32_t offset) {
  int f = s.program.FindFunction(func);
  EXPECT_GE(f, 0) << func;
  return s.program.code.at(s.program.functions.at(f).first + offset);
}

uint32_t LabelIndex(const Scenario& s, const std::string& func, const std::string& label) {
  const Function& f = s.program.functions.at(s.program.FindFunction(func));
  for (const Label& l : f.labels) {
    if (l.name == label) return l.index;
  }
  ADD_FAILURE() << "no label " << label;
  return 0;
}

TEST(ParserTest, ScenarioLevelStatements) {
  Scenario s = ParseScenario(kAllOps, "all_ops.rsq");
  EXPECT_EQ(s.name, "all_ops");
  EXPECT_EQ(s.file, "all_ops.rsq");
  EXPECT_EQ(s.description, "every \"opcode\" \\ once");
  EXPECT_EQ(s.num_cpus, 4u);
  EXPECT_EQ(s.num_nodes, 2u);
  ASSERT_EQ(s.constants.size(), 3u);
  EXPECT_EQ(s.constants[0].name, "OPS");
  EXPECT_EQ(s.constants[0].value, 3);
  EXPECT_EQ(s.constants[1].value, 128);
  EXPECT_EQ(s.constants[2].value, -5);
  EXPECT_FALSE(s.constants[0].overridden);
  EXPECT_EQ(s.scratch, (std::vector<std::string>{"arr", "slots"}));
  EXPECT_EQ(s.expected, Verdict::kAssertFailed);

  const auto& syms = s.program.symbols;
  ASSERT_EQ(syms.size(), 4u);
  EXPECT_EQ(syms[0].name, "counter");
  EXPECT_EQ(syms[0].init, std::vector<int64_t>{0});
  EXPECT_EQ(syms[1].width, Width::kU32);
  EXPECT_EQ(syms[1].count, 4u);
  EXPECT_EQ(syms[1].init, (std::vector<int64_t>{1, 2}));
  EXPECT_TRUE(syms[2].per_cpu);
  EXPECT_EQ(syms[2].count, 2u);
  EXPECT_EQ(syms[2].stride, 128u);
  EXPECT_EQ(syms[2].init, (std::vector<int64_t>{7, 8}));
  EXPECT_TRUE(syms[3].per_cpu);
  EXPECT_TRUE(syms[3].init.empty());
  // Laid out: 64-byte aligned, in declaration order.
  EXPECT_EQ(syms[0].address, kDataBase);
  EXPECT_EQ(syms[1].address % 64, 0u);
  EXPECT_GT(syms[1].address, syms[0].address);
  EXPECT_EQ(syms[0].loc, (SourceLoc{9, 5}));
}

TEST(ParserTest, ThreadsSignalsAndReplication) {
  Scenario s = ParseScenario(kAllOps, "all_ops.rsq");
  ASSERT_EQ(s.threads.size(), 4u);
  const ThreadSpec& t0 = s.threads[0];
  EXPECT_EQ(t0.name, "t0");
  EXPECT_EQ(t0.entry, s.program.FindFunction("main"));
  EXPECT_EQ(t0.affinity, ~0ull);
  EXPECT_TRUE(t0.rseq_registered);
  const ThreadSpec& t1 = s.threads[1];
  EXPECT_EQ(t1.cpu, 1u);
  EXPECT_EQ(t1.affinity, 0b1010u);
  EXPECT_EQ(t1.args, (std::vector<std::pair<uint8_t, int64_t>>{{1, 5}, {2, 6}}));
  EXPECT_FALSE(t1.rseq_registered);
  EXPECT_EQ(s.threads[2].name, "w0");
  EXPECT_EQ(s.threads[2].cpu, 2u);
  EXPECT_EQ(s.threads[2].args, (std::vector<std::pair<uint8_t, int64_t>>{{3, 0}}));
  EXPECT_EQ(s.threads[3].name, "w1");
  EXPECT_EQ(s.threads[3].cpu, 3u);
  EXPECT_EQ(s.threads[3].args, (std::vector<std::pair<uint8_t, int64_t>>{{3, 1}}));
  EXPECT_EQ(s.threads[3].entry, s.program.FindFunction("helper"));

  ASSERT_EQ(s.signals.size(), 2u);
  EXPECT_EQ(s.signals[0].signo, kSigUsr1);
  EXPECT_EQ(s.signals[0].handler, s.program.FindFunction("handler"));
  EXPECT_TRUE(s.signals[0].nodefer);
  EXPECT_EQ(s.signals[1].signo, kSigUsr2);
  EXPECT_EQ(s.signals[1].handler, -1);
}

TEST(ParserTest, ArithmeticAndMemoryOperands) {
  Scenario s = ParseScenario(kAllOps, "all_ops.rsq");
  EXPECT_EQ(At(s, "main", 0).op, Op::kLi);
  EXPECT_EQ(At(s, "main", 0).imm, 3);  // the constant's value
  EXPECT_EQ(At(s, "main", 1).imm, -5);
  EXPECT_EQ(At(s, "main", 2).imm, 0x53053053);
  EXPECT_EQ(At(s, "main", 0).loc, (SourceLoc{16, 3}));

  const Instr& add = At(s, "main", 4);
  EXPECT_EQ(add.op, Op::kAdd);
  EXPECT_EQ(add.rd, 5);
  EXPECT_EQ(add.rs, 4);
  EXPECT_EQ(add.rt, 1);
  EXPECT_FALSE(add.use_imm);
  const Instr& andi = At(s, "main", 6);
  EXPECT_EQ(andi.op, Op::kAnd);
  EXPECT_TRUE(andi.use_imm);
  EXPECT_EQ(andi.imm, 0xff);

  const Instr& la = At(s, "main", 13);
  EXPECT_EQ(la.op, Op::kLa);
  EXPECT_EQ(la.target, 1u);
  EXPECT_EQ(la.imm, 8);
  EXPECT_EQ(At(s, "main", 14).imm, -8);

  const Instr& st = At(s, "main", 17);
  EXPECT_EQ(st.op, Op::kSt);
  EXPECT_EQ(st.rs, 10);
  EXPECT_EQ(st.imm, -8);
  EXPECT_EQ(st.rt, 7);
  EXPECT_FALSE(st.has_index);
  const Instr& st32 = At(s, "main", 18);
  EXPECT_EQ(st32.op, Op::kSt32);
  EXPECT_TRUE(st32.has_index);
  EXPECT_EQ(st32.ru, 1);
  EXPECT_EQ(st32.scale, 4);
  const Instr& ld = At(s, "main", 19);
  EXPECT_EQ(ld.rs, 12);
  EXPECT_EQ(ld.ru, 1);
  EXPECT_EQ(ld.scale, 8);
  EXPECT_EQ(ld.imm, 16);
}

TEST(ParserTest, ControlFlowAndRseq) {
  Scenario s = ParseScenario(kAllOps, "all_ops.rsq");
  const Program& p = s.program;
  const uint32_t done = LabelIndex(s, "main", "done");
  const Instr& beq = At(s, "main", 20);
  EXPECT_EQ(beq.op, Op::kBeq);
  EXPECT_EQ(beq.target, done);
  EXPECT_EQ(p.code[done].op, Op::kRet);
  EXPECT_EQ(At(s, "main", 21).target, LabelIndex(s, "main", "next"));
  EXPECT_TRUE(At(s, "main", 21).use_imm);
  const Instr& call = At(s, "main", 26);
  EXPECT_EQ(call.op, Op::kCall);
  EXPECT_EQ(call.target, static_cast<uint32_t>(p.FindFunction("helper")));
  EXPECT_EQ(At(s, "main", 27).aux, static_cast<uint8_t>(RseqField::kCpuIdStart));
  EXPECT_EQ(At(s, "main", 31).aux, static_cast<uint8_t>(RseqField::kFlags));
  const Instr& arm = At(s, "main", 33);
  EXPECT_EQ(arm.op, Op::kRseqArm);
  EXPECT_EQ(arm.target, 0u);

  ASSERT_EQ(p.descriptors.size(), 2u);
  const CsDescriptor& cs = p.descriptors[0];
  EXPECT_EQ(cs.name, "main_cs");
  EXPECT_EQ(cs.function, 0u);
  EXPECT_EQ(cs.start, LabelIndex(s, "main", "start"));
  EXPECT_EQ(cs.post_commit, LabelIndex(s, "main", "post"));
  EXPECT_EQ(cs.abort, LabelIndex(s, "main", "abort"));
  EXPECT_EQ(p.code[cs.post_commit - 1].op, Op::kSt);
  EXPECT_EQ(p.code[cs.abort - 1].op, Op::kSig);
  EXPECT_FALSE(cs.unchecked);
  EXPECT_EQ(p.descriptors[1].flags, 1u);
  EXPECT_EQ(p.descriptors[1].version, 2u);
  EXPECT_TRUE(p.descriptors[1].unchecked);

  const Instr& cas = p.code[cs.start];
  EXPECT_EQ(cas.op, Op::kCas);
  EXPECT_EQ(cas.rs, 10);
  EXPECT_EQ(cas.imm, 8);
  EXPECT_EQ(cas.rt, 2);
  EXPECT_EQ(cas.ru, 3);
}

TEST(ParserTest, KernelCallsAssertsAndObserves) {
  Scenario s = ParseScenario(kAllOps, "all_ops.rsq");
  const Program& p = s.program;
  uint32_t i = LabelIndex(s, "main", "post");
  EXPECT_EQ(p.code[i++].op, Op::kFence);
  EXPECT_EQ(p.code[i++].op, Op::kSchedYield);
  EXPECT_TRUE(p.code[i].use_imm);
  EXPECT_EQ(p.code[i++].imm, 3);
  EXPECT_EQ(p.code[i++].rs, 4);
  EXPECT_EQ(p.code[i++].op, Op::kGetcpu);
  const Instr& by_name = p.code[i++];
  EXPECT_EQ(by_name.op, Op::kTgkill);
  EXPECT_TRUE(by_name.use_imm);
  EXPECT_EQ(by_name.imm, 1);  // thread t1
  EXPECT_EQ(by_name.aux, kSigUsr1);
  EXPECT_FALSE(p.code[i].use_imm);
  EXPECT_EQ(p.code[i].rs, 2);
  EXPECT_EQ(p.code[i++].aux, kSigUsr2);
  EXPECT_EQ(p.code[i++].aux, 10);
  EXPECT_EQ(p.code[i].imm, -1);  // membarrier_rseq: all CPUs
  EXPECT_TRUE(p.code[i++].use_imm);
  EXPECT_EQ(p.code[i++].imm, 2);
  EXPECT_EQ(p.code[i++].rs, 3);
  EXPECT_EQ(p.code[i++].imm, kRseqSig);
  EXPECT_EQ(p.code[i++].imm, 0x12345678);

  const Instr& eq = p.code[i++];
  EXPECT_EQ(eq.op, Op::kAssert);
  EXPECT_EQ(eq.aux, static_cast<uint8_t>(CmpKind::kEq));
  EXPECT_EQ(p.strings.at(eq.target), "");
  const Instr& ne = p.code[i++];
  EXPECT_EQ(ne.aux, static_cast<uint8_t>(CmpKind::kNe));
  EXPECT_EQ(p.strings.at(ne.target), "not equal");
  const Instr& ltu = p.code[i++];
  EXPECT_EQ(ltu.aux, static_cast<uint8_t>(CmpKind::kLtu));
  EXPECT_EQ(p.strings.at(ltu.target), "unsigned \"less\"");
  EXPECT_EQ(p.code[i++].aux, static_cast<uint8_t>(CmpKind::kLeu));
  EXPECT_EQ(p.code[i++].aux, static_cast<uint8_t>(CmpKind::kGtu));
  EXPECT_EQ(p.code[i++].aux, static_cast<uint8_t>(CmpKind::kGeu));
  EXPECT_EQ(p.code[i++].aux, static_cast<uint8_t>(CmpKind::kLt));
  EXPECT_EQ(p.code[i++].aux, static_cast<uint8_t>(CmpKind::kLe));
  EXPECT_EQ(p.code[i].imm, -5);
  EXPECT_EQ(p.code[i++].aux, static_cast<uint8_t>(CmpKind::kGt));
  EXPECT_EQ(p.code[i++].aux, static_cast<uint8_t>(CmpKind::kGe));
  const Instr& obs = p.code[i++];
  EXPECT_EQ(obs.op, Op::kObserve);
  EXPECT_EQ(p.strings.at(obs.target), "result");
  EXPECT_EQ(p.strings.at(p.code[i++].target), "odd name");
  EXPECT_EQ(p.code[i++].op, Op::kNop);
  // The same assert message / observe name is stored once.
  const Instr& handler_obs = At(s, "handler", 0);
  EXPECT_EQ(p.strings.at(handler_obs.target), "sig");
}

TEST(ParserTest, PropertiesFollowCPrecedence) {
  Scenario s = ParseScenario(kAllOps, "all_ops.rsq");
  ASSERT_EQ(s.properties.size(), 3u);
  using expr::Binary;
  using expr::Const;
  EXPECT_EQ(s.properties[0].expr, Binary("==", expr::Sym("counter"), Const(0)));
  EXPECT_EQ(s.properties[0].text, "counter == 0");
  EXPECT_EQ(s.properties[0].loc, (SourceLoc{108, 10}));
  Expr lhs = Binary(">=", Binary("+", expr::Sum("slots"), Binary("*", expr::Index("arr", Const(1)), Const(2))),
                    Const(3, "OPS"));
  Expr mid = expr::Unary("!", Binary("!=", expr::Ret("t0"), Const(0)));
  Expr rhs = Binary("==", expr::Index2("slots", Const(1), Const(0)), Const(-1));
  EXPECT_EQ(s.properties[1].expr, Binary("||", Binary("&&", lhs, mid), rhs));
  EXPECT_EQ(s.properties[2].expr, Binary("==", Binary("-", expr::Index("pc", Const(3)), Const(-5)),
                                         Binary("-", Binary("-", Const(1), Const(2)), Const(3))));
}

TEST(ParserTest, DefinesOverrideConstants) {
  Scenario s = ParseScenario(kAllOps, "all_ops.rsq", {{"OPS", 7}});
  EXPECT_EQ(s.constants[0].value, 7);
  EXPECT_TRUE(s.constants[0].overridden);
  EXPECT_FALSE(s.constants[1].overridden);
  EXPECT_EQ(s.program.code[0].imm, 7);
  EXPECT_EQ(s.threads[1].args[1].second, 14);  // (OPS * 2)
}

TEST(ParserTest, ConstantExpressions) {
  Scenario s = ParseScenario(R"(scenario c
const A = 0x10
const B = ((A << 2) + (A >> 1) * 3 - -1)
const C = (B / 7 % 5)
const D = -(A)
const E = (-9223372036854775807 - 1)
const F = 0xffffffffffffffff
cpus (A / 8)
var v: u64[(A)] = {A, B, -1}
func f
  ret
end
thread t entry f cpu (C - 1 - C % 2)
)",
                             "c.rsq");
  EXPECT_EQ(s.constants[1].value, 64 + 24 + 1);
  EXPECT_EQ(s.constants[2].value, (89 / 7) % 5);
  EXPECT_EQ(s.constants[3].value, -16);
  EXPECT_EQ(s.constants[4].value, INT64_MIN);
  EXPECT_EQ(s.constants[5].value, -1);
  EXPECT_EQ(s.num_cpus, 2u);
  EXPECT_EQ(s.program.symbols[0].count, 16u);
  EXPECT_EQ(s.program.symbols[0].init, (std::vector<int64_t>{16, 89, -1}));
  EXPECT_EQ(s.threads[0].cpu, 1u);
}

TEST(ParserTest, LexicalDetails) {
  // CRLF line ends, tabs, comments everywhere, `#` inside strings, identifiers with dots,
  // keywords usable as names, constants declared after a property uses them.
  Scenario s = ParseScenario(
      "scenario lex.v2   # comment\r\n"
      "\tdescription \"a # not a comment\\t\\x41\"\r\n"
      "\r\n"
      "var end: u64\n"
      "func cs.helper\n"
      "end:\n"
      "\tli r1, 0\n"
      "cs:\n"
      "  jmp end\n"
      "end\n"
      "thread thread entry cs.helper\n"
      "property end == LIMIT\n"
      "const LIMIT = 2\n",
      "lex.rsq");
  EXPECT_EQ(s.name, "lex.v2");
  EXPECT_EQ(s.description, "a # not a comment\tA");
  EXPECT_EQ(s.program.functions[0].name, "cs.helper");
  EXPECT_EQ(s.program.functions[0].labels.size(), 2u);
  EXPECT_EQ(s.program.code[1].target, 0u);
  EXPECT_EQ(s.threads[0].name, "thread");
  EXPECT_EQ(s.properties[0].expr, expr::Binary("==", expr::Sym("end"), expr::Const(2, "LIMIT")));
}

TEST(ParserTest, ReplicatedThreadsUseTheReplicaIndex) {
  Scenario s = ParseScenario(R"(scenario r
cpus 4
const N = 4
func f
  ret
end
thread w * N entry f cpu (i % 2) affinity i, (i % 2) args r1 = (i * 10), r2 = N
)",
                             "r.rsq");
  ASSERT_EQ(s.threads.size(), 4u);
  for (int i = 0; i < 4; ++i) {
    EXPECT_EQ(s.threads[i].name, "w" + std::to_string(i));
    EXPECT_EQ(s.threads[i].cpu, static_cast<uint32_t>(i % 2));
    EXPECT_EQ(s.threads[i].affinity, (1ull << i) | (1ull << (i % 2)));
    EXPECT_EQ(s.threads[i].args, (std::vector<std::pair<uint8_t, int64_t>>{{1, i * 10}, {2, 4}}));
  }
}

TEST(ParserTest, ParsePropertyExprAndDefine) {
  Expr e = ParsePropertyExpr("sum(c) == N * 2", {{"N", 3, false}});
  EXPECT_EQ(e, expr::Binary("==", expr::Sum("c"), expr::Binary("*", expr::Const(3, "N"), expr::Const(2))));
  EXPECT_EQ(e.args[0].loc, (SourceLoc{1, 5}));
  EXPECT_THROW(ParsePropertyExpr("1 +"), InputError);
  EXPECT_THROW(ParsePropertyExpr("a\nb"), InputError);
  EXPECT_EQ(ParsePropertyExpr("x\n"), expr::Sym("x"));

  EXPECT_EQ(ParseDefine("THREADS=4"), (std::pair<std::string, int64_t>{"THREADS", 4}));
  EXPECT_EQ(ParseDefine("M=-0x10"), (std::pair<std::string, int64_t>{"M", -16}));
  EXPECT_EQ(ParseDefine("M=-9223372036854775808").second, INT64_MIN);
  for (const char* bad : {"THREADS", "=4", "X=", "X=4a", "X=9223372036854775808", "1X=2", "X=0x"}) {
    EXPECT_THROW(ParseDefine(bad), InputError) << bad;
  }
}

TEST(ParserTest, ParseScenarioFile) {
  std::string path = ::testing::TempDir() + "/parser_test_ok.rsq";
  {
    std::ofstream out(path);
    out << "scenario f\nfunc f\n  ret\nend\nthread t entry f\n";
  }
  Scenario s = ParseScenarioFile(path);
  EXPECT_EQ(s.file, path);
  EXPECT_EQ(s.name, "f");
  std::remove(path.c_str());
  try {
    ParseScenarioFile(path);
    FAIL() << "expected InputError";
  } catch (const InputError& e) {
    EXPECT_EQ(e.file(), path);
    EXPECT_NE(e.message().find("cannot read scenario file"), std::string::npos);
  }
}

TEST(ParserTest, BuilderExampleMatchesText) {
  // The builder.h example and its text form produce the same scenario.
  ScenarioBuilder b("counter");
  b.Cpus(2).PerCpu("counter", Width::kU64, 1, 64, {0});
  auto& f = b.Func("inc");
  f.La(10, "counter")
      .Label("retry").RseqLoad(1, RseqField::kCpuIdStart)
      .Shl(2, 1, Imm(6)).Add(2, 2, R(10)).RseqArm("inc_cs")
      .Label("start").RseqLoad(3, RseqField::kCpuId).Bne(3, R(1), "abort")
      .Ld(4, Mem(2)).Add(4, 4, Imm(1)).St(Mem(2), 4)
      .Label("post").Ret()
      .Sig(kRseqSig).Label("abort").Jmp("retry")
      .Cs("inc_cs", "start", "post", "abort");
  b.Thread("t0", "inc", /*cpu=*/0);
  b.Property(expr::Binary("==", expr::Sum("counter"), expr::Const(1)));
  Scenario built = b.Build();

  Scenario parsed = ParseScenario(R"(scenario counter
cpus 2
percpu counter: u64 stride 64 = 0
func inc
  la r10, counter
retry:
  rseq_load r1, cpu_id_start
  shl r2, r1, 6
  add r2, r2, r10          # &counter[cpu]
  rseq_arm inc_cs          # rseq->rseq_cs = &inc_cs
start:
  rseq_load r3, cpu_id
  bne r3, r1, abort
  ld r4, [r2]
  add r4, r4, 1
  st [r2], r4              # commit
post:
  ret
  sig 0x53053053
abort:
  jmp retry
  cs inc_cs start=start post_commit=post abort=abort
end
thread t0 entry inc cpu 0
property sum(counter) == 1
)",
                                  "counter.rsq");
  EXPECT_EQ(built, parsed);
}

}  // namespace
}  // namespace rseqmc
