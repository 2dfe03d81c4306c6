// ELF import (import/, issue 16): the compiled examples of import/examples
// (gcc -O2 in the build) imported and model-checked with golden results, the
// planted bug found in the compiled code, unsupported code refused with exit 2.
#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "import/lift.h"
#include "kernel/harness/jit.h"
#include "kernel/harness/tracer.h"
#include "scenarios/parser.h"
#include "sim/machine.h"
#include "sim/scheduler.h"
#include "sim/simulator.h"
#include "tests/cli_runner.h"

namespace rseqmc {
namespace {

using testing::CliResult;
using testing::RunCli;

std::string Example(const std::string& name) { return std::string(RSEQMC_IMPORT_EXAMPLES) + "/" + name; }

// The line of `scenario` in a crosscheck output ("" if absent).
std::string LineOf(const std::string& out, const std::string& scenario) {
  const size_t at = out.find(scenario + " ");
  return at == std::string::npos ? "" : out.substr(at, out.find('\n', at) - at);
}

// Writes `text` to a file of the test's temporary folder; returns its path.
std::string WriteTemp(const std::string& name, const std::string& text) {
  const std::string path = ::testing::TempDir() + "/" + name;
  FILE* f = fopen(path.c_str(), "w");
  if (f == nullptr) return "";
  fputs(text.c_str(), f);
  fclose(f);
  return path;
}

// percpu_add.rsq with its object named by absolute path and each (from, to)
// edit applied once, written to the test's temporary folder as `name`;
// returns its path ("" and a test failure if an edit does not apply).
std::string PercpuAddVariant(const std::string& name, const std::vector<std::pair<std::string, std::string>>& edits) {
  std::string text = testing::ReadFile(Example("percpu_add.rsq"));
  std::vector<std::pair<std::string, std::string>> all = {{"\"percpu_ops.o\"", "\"" + Example("percpu_ops.o") + "\""}};
  all.insert(all.end(), edits.begin(), edits.end());
  for (const auto& [from, to] : all) {
    const size_t at = text.find(from);
    if (at == std::string::npos) {
      ADD_FAILURE() << "percpu_add.rsq has no '" << from << "'";
      return "";
    }
    text.replace(at, from.size(), to);
  }
  return WriteTemp(name, text);
}

struct Golden {
  const char* file;
  int code;                  // exit status of `rseqmc check`
  const char* explored;      // the golden "explored:" figures
  const char* verdict;       // the verdict line
};

// Golden counts: DPOR, at most one event, kernel model 6.18.
TEST(ImportTest, CompiledExamplesCheckWithGoldenResults) {
  const std::vector<Golden> cases = {
      {"percpu_add.rsq", 0, "explored: 165 executions (0 redundant), 3 distinct outcomes",
       "verdict:  pass   expected: pass   -> ok"},
      {"cbne_store.rsq", 0, "explored: 71 executions (0 redundant), 1 distinct outcome",
       "verdict:  pass   expected: pass   -> ok"},
      {"percpu_slab.rsq", 0, "explored: 221 executions (0 redundant), 8 distinct outcomes",
       "verdict:  pass   expected: pass   -> ok"},
      // The planted bug: no cpu_id comparison in the compiled section.
      {"percpu_add_nocheck.rsq", 0, "explored: 17 executions (0 redundant), 4 distinct outcomes",
       "verdict:  fail property   expected: fail property   -> ok"},
  };
  for (const Golden& g : cases) {
    const CliResult r = RunCli({"check", Example(g.file), "--kernel", "6.18"});
    EXPECT_EQ(r.code, g.code) << g.file << "\n" << r.out << r.err;
    EXPECT_NE(r.out.find(g.explored), std::string::npos) << g.file << "\n" << r.out;
    EXPECT_NE(r.out.find(g.verdict), std::string::npos) << g.file << "\n" << r.out;
  }
}

TEST(ImportTest, PlantedBugCounterexamplePointsAtTheMachineCode) {
  const CliResult r = RunCli({"check", Example("percpu_add_nocheck.rsq"), "--kernel", "6.18"});
  ASSERT_EQ(r.code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("sum(counter) = 3"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("MIGRATE"), std::string::npos) << r.out;
  // The lost update is the non-atomic `add %r8,(%rsi,%rdx,8)` at .text+0x1a
  // (no cmp/jnz before it in this copy),
  // lifted as load / add / store, shown with its address and bytes.
  EXPECT_NE(r.out.find(" | .text+0x1a:  4c 01 04 d6  add %r8, (%rsi,%rdx,8)\n"), std::string::npos) << r.out;
}

TEST(ImportTest, ImportListsDescriptorsAndLiftedCode) {
  const CliResult r = RunCli({"import", Example("percpu_ops.o"), "--function", "percpu_add"});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("__rseq_cs+0x0: version 0, flags 0, start_ip .text+0x1a, post_commit_offset 13, "
                       "abort_ip __rseq_failure+0x7"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("exit point (__rseq_exit_point_array): .text+0x5d -> .text+0x78"), std::string::npos);
  EXPECT_NE(r.out.find("cs percpu_add.cs0 start=percpu_add:text.0x1a post_commit=percpu_add:text.0x27 "
                       "abort=percpu_add:__rseq_failure.0x7"),
            std::string::npos)
      << r.out;
  // The signature word before abort_ip and the commit as load/add/store.
  EXPECT_NE(r.out.find("        sig 0x53053053\n"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("        ld r4, [r6 + r2*8]\n        add r4, r4, r8\n        st [r6 + r2*8], r4\n"),
            std::string::npos)
      << r.out;
}

// The arming store is modelled as rseq_arm only when it really stores to the
// thread's rseq->rseq_cs: given another pointer, the execution fails loudly.
TEST(ImportTest, ArmingStoreElsewhereFailsTheExecution) {
  const std::string path = PercpuAddVariant("import_arm_elsewhere.rsq", {{"  rseq_addr r7\n", "  la r7, counter\n"}});
  ASSERT_FALSE(path.empty());
  const CliResult r = RunCli({"run", path});
  EXPECT_EQ(r.code, 1) << r.out << r.err;
  EXPECT_NE(r.out.find("imported percpu_add stores the address of percpu_add.cs0 somewhere else than this "
                       "thread's rseq->rseq_cs"),
            std::string::npos)
      << r.out;
}

// The same source linked as a shared library (R_X86_64_RELATIVE descriptors,
// link-time addresses) lifts to the same IR: the same golden result.
TEST(ImportTest, SharedLibraryChecksLikeTheObject) {
  const CliResult l = RunCli({"import", Example("percpu_ops.so"), "--function", "percpu_add"});
  ASSERT_EQ(l.code, 0) << l.err;
  EXPECT_NE(l.out.find("function percpu_add: 15 machine instructions, 29 IR instructions"), std::string::npos)
      << l.out;
  std::string text = testing::ReadFile(Example("percpu_add.rsq"));
  const size_t at = text.find("\"percpu_ops.o\"");
  ASSERT_NE(at, std::string::npos);
  text.replace(at, 14, "\"" + Example("percpu_ops.so") + "\"");
  const std::string path = WriteTemp("import_so.rsq", text);
  ASSERT_FALSE(path.empty());
  const CliResult r = RunCli({"check", path, "--kernel", "6.18"});
  EXPECT_EQ(r.code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("explored: 165 executions (0 redundant), 3 distinct outcomes"), std::string::npos) << r.out;
}

// The original bytes of an import (Scenario::original): relocated sections at
// their run addresses, and every machine instruction's address keyed by its
// first IR instruction, as the harness maps and stops them.
TEST(ImportTest, OriginalCodeIsRelocatedAndMapsEachMachineInstruction) {
  const Scenario s = ParseScenarioFile(Example("percpu_add.rsq"));
  const OriginalCode& oc = s.original;
  ASSERT_EQ(oc.functions.size(), 1u);
  const OriginalFunction& f = oc.functions[0];
  EXPECT_EQ(s.program.functions[f.function].name, "percpu_add");
  EXPECT_EQ(f.not_runnable, "");
  auto segment = [&](const std::string& name) -> const OriginalSegment* {
    for (const OriginalSegment& seg : oc.segments) {
      if (seg.name == name) return &seg;
    }
    return nullptr;
  };
  const OriginalSegment* text = segment(".text");
  const OriginalSegment* fail = segment("__rseq_failure");
  const OriginalSegment* cs = segment("__rseq_cs");
  ASSERT_TRUE(text && fail && cs);
  EXPECT_TRUE(text->executable && fail->executable && !cs->executable);
  // The first file's sections: flat address (kRelSectionStride apart) + bias.
  EXPECT_EQ(text->address % import::kRelSectionStride, 0u);
  EXPECT_GE(text->address, import::kOriginalLoadBase);
  EXPECT_EQ(f.entry, text->address);  // percpu_add is at .text+0x0
  auto u64 = [](const OriginalSegment* seg, size_t off) {
    uint64_t v = 0;
    std::memcpy(&v, seg->bytes.data() + off, 8);
    return v;
  };
  auto s32 = [](const OriginalSegment* seg, size_t off) {
    int32_t v = 0;
    std::memcpy(&v, seg->bytes.data() + off, 4);
    return static_cast<int64_t>(v);
  };
  // Descriptor 0: start_ip .text+0x1a, post_commit_offset 13, abort_ip __rseq_failure+0x7.
  EXPECT_EQ(u64(cs, 8), text->address + 0x1a);
  EXPECT_EQ(u64(cs, 16), 13u);
  EXPECT_EQ(u64(cs, 24), fail->address + 0x7);
  EXPECT_EQ(oc.abort_ips, std::vector<uint64_t>{fail->address + 0x7});
  // The signature before abort_ip, as in the file.
  EXPECT_EQ(static_cast<uint32_t>(s32(fail, 0x3)), 0x53053053u);
  // `lea 0x0(%rip),%rax` at .text+0xf now reaches the descriptor, `jne` at
  // .text+0x1d abort_ip (R_X86_64_PC32: S + A - P).
  EXPECT_EQ(text->address + 0x16 + s32(text, 0x12), cs->address);
  EXPECT_EQ(text->address + 0x23 + s32(text, 0x1f), fail->address + 0x7);
  // 15 machine instructions, each the first of its IR instructions.
  std::set<uint64_t> addrs;
  for (const auto& [ir, addr] : oc.instr_address) {
    addrs.insert(addr);
    EXPECT_EQ(s.program.FunctionOf(ir), static_cast<int>(f.function));
  }
  EXPECT_EQ(addrs.size(), 15u);
  for (uint64_t off : {0x0, 0x2, 0x5, 0xc, 0xf, 0x16, 0x1a, 0x1d, 0x23, 0x27, 0x29, 0x30, 0x35}) {
    EXPECT_TRUE(addrs.count(text->address + off)) << std::hex << off;
  }
  EXPECT_TRUE(addrs.count(fail->address + 0x7));
  EXPECT_EQ(oc.instr_address.begin()->first, s.program.functions[f.function].first);
}

// Preempts the thread of `cpu` at boundary `at`, the default elsewhere.
class PreemptAt : public Scheduler {
 public:
  PreemptAt(uint64_t at, int cpu) : at_(at), cpu_(cpu) {}
  Decision Choose(const ChoiceView& v) override {
    const Decision d = Decision::Preempt(cpu_);
    if (v.machine().boundary() == at_ && v.IsValid(d)) return d;
    return Decision::Step(v.DefaultCpu());
  }

 private:
  uint64_t at_;
  int cpu_;
};

// How the tracer stops the original code (harness::OriginalLegs): every
// single-preemption schedule of percpu_add either has a machine-instruction
// boundary to stop at (DR0 = that instruction's run address; when the thread
// passes it earlier in the same run, a staging stop at a JIT instruction
// first) or is refused because its stop falls inside one machine instruction.
TEST(JitOriginalBytesTest, PlansStopAtMachineInstructionsOrAreRefused) {
  const Scenario s = ParseScenarioFile(Example("percpu_add.rsq"));
  if (!harness::HarnessUnavailableReason(s.num_cpus, /*need_ptrace=*/false).empty()) {
    GTEST_SKIP() << "real-kernel harness unavailable";
  }
  harness::JitOptions jo;
  jo.original_code = true;
  harness::JitProgram jit(s, jo);
  Simulator sim(s);
  uint64_t planned = 0, staged = 0, refused = 0, breakpoints = 0;
  for (uint64_t b = 0; b < 140; ++b) {
    PreemptAt sched(b, 0);
    harness::Plan plan;
    harness::SimulateForPlan(sim, sched, &plan);
    std::vector<harness::OriginalLeg> legs;
    const std::string why = harness::OriginalLegs(jit, plan, &legs);
    if (!why.empty()) {
      ++refused;
      EXPECT_NE(why.find("between the IR instructions of one machine instruction"), std::string::npos) << why;
      continue;
    }
    ++planned;
    for (size_t ai = 0; ai < plan.actions.size(); ++ai) {
      const harness::PlanAction& a = plan.actions[ai];
      const harness::OriginalLeg& leg = legs[ai];
      if (a.kind != harness::PlanAction::Kind::kRun) continue;
      if (a.next_pc >= 0 && jit.RunsOriginal(static_cast<uint32_t>(a.next_pc))) {
        ++breakpoints;
        EXPECT_EQ(leg.breakpoint, jit.InstrAddress(static_cast<uint32_t>(a.next_pc)));
        EXPECT_NE(leg.breakpoint, 0u);
      } else {
        EXPECT_EQ(leg.breakpoint, 0u);
      }
      if (leg.stage_pc >= 0) {
        ++staged;
        EXPECT_FALSE(jit.RunsOriginal(static_cast<uint32_t>(leg.stage_pc)));
        EXPECT_EQ(s.program.code[leg.stage_pc].op, Op::kCall) << s.program.DescribeIndex(leg.stage_pc);
      }
    }
  }
  // Golden: the first 140 boundaries hold both threads' two calls of
  // percpu_add (11 machine instructions run per successful call): a
  // preemption before each of those 44 machine instructions is a DR0 stop;
  // in each thread's second call (22 of them) the thread has already passed
  // the address, so it is first stopped at worker's `call percpu_add`; the
  // other 56 boundaries lie inside a machine instruction.
  EXPECT_EQ(planned, 84u);
  EXPECT_EQ(refused, 56u);
  EXPECT_EQ(breakpoints, 44u);
  EXPECT_EQ(staged, 22u);
}

TEST(ImportTest, UnsupportedInstructionIsAnErrorWithItsAddress) {
  const CliResult r = RunCli({"import", Example("unsupported.o"), "--function", "negate"});
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("unsupported.o: .text+0x3 (in negate): `neg %rax`: this instruction is not in the "
                       "supported subset"),
            std::string::npos)
      << r.err;
}

TEST(ImportTest, BadImportStatementsNameFileLineColumn) {
  struct Case {
    std::string text, expect;
  };
  const std::vector<Case> cases = {
      {"scenario s\nimport \"" + Example("unsupported.o") + "\" function negate\n", ":2:8: error: "},
      {"scenario s\nimport \"" + Example("percpu_ops.o") + "\" function nosuch\n", "no function 'nosuch'"},
      {"scenario s\nimport \"/nonexistent.o\" function f\n", ":2:8: error: /nonexistent.o: cannot open"},
      {"scenario s\nimport \"/dev/null\" function f\n", ":2:8: error: /dev/null: not a regular file"},
      {"scenario s\nimport \"" + Example("percpu_add.rsq") + "\" function f\n", "not an ELF file"},
      {"scenario s\nimport percpu_ops.o function f\n", ":2:8: error: expected the object file name as a string"},
      {"scenario s\nimport \"" + Example("percpu_ops.o") + "\" fn percpu_add\n", "expected `function`"},
  };
  int n = 0;
  for (const Case& c : cases) {
    const std::string path = WriteTemp("import_bad" + std::to_string(n++) + ".rsq", c.text);
    ASSERT_FALSE(path.empty());
    const CliResult r = RunCli({"check", path});
    EXPECT_EQ(r.code, 2) << c.text << r.err;
    EXPECT_NE(r.err.find(c.expect), std::string::npos) << c.text << "\n" << r.err;
  }
}

// Each import error says how to fix it (a `hint:` line), in a .rsq and from
// `rseqmc import`; a function named twice in one import is an error at the
// second name.
TEST(ImportTest, ImportErrorsCarryAHint) {
  const std::string obj = Example("percpu_ops.o");
  struct Case {
    std::string text, expect;
  };
  const std::vector<Case> cases = {
      {"scenario s\nimport \"/nonexistent.o\" function f\n",
       ":2:8: error: /nonexistent.o: cannot open: No such file or directory\n"},
      {"scenario s\nimport \"" + obj + "\" function nosuch\n", ":2:8: error: " + obj + ": no function 'nosuch' ("},
      {"scenario s\nimport \"" + obj + "\" function percpu_add, percpu_add\n",
       ":2:" + std::to_string(obj.size() + 32) + ": error: function 'percpu_add' is named twice in this import\n"},
  };
  const std::vector<std::string> hints = {
      "  hint: check the path; in a .rsq, a relative path is relative to the .rsq's folder\n",
      "  hint: name one of the functions listed\n",
      "  hint: name each function once\n",
  };
  for (size_t i = 0; i < cases.size(); ++i) {
    const std::string path = WriteTemp("import_hint" + std::to_string(i) + ".rsq", cases[i].text);
    ASSERT_FALSE(path.empty());
    const CliResult r = RunCli({"check", path});
    EXPECT_EQ(r.code, 2) << cases[i].text << r.err;
    EXPECT_NE(r.err.find(path + cases[i].expect), std::string::npos) << cases[i].text << "\n" << r.err;
    EXPECT_NE(r.err.find(hints[i]), std::string::npos) << cases[i].text << "\n" << r.err;
  }
  const CliResult open = RunCli({"import", "/nonexistent.o"});
  EXPECT_EQ(open.code, 2);
  EXPECT_NE(open.err.find("rseqmc import: error: /nonexistent.o: cannot open: No such file or directory\n" +
                          hints[0]),
            std::string::npos)
      << open.err;
  const CliResult fn = RunCli({"import", obj, "--function", "nosuch"});
  EXPECT_EQ(fn.code, 2);
  EXPECT_NE(fn.err.find(hints[1]), std::string::npos) << fn.err;
}

// percpu_ops.o as bytes, edited by the malformed-file tests below.
std::string ObjectBytes() {
  std::string bytes = testing::ReadFile(Example("percpu_ops.o"));
  EXPECT_GT(bytes.size(), 64u);
  return bytes;
}

template <typename T>
T Get(const std::string& b, size_t at) {
  T v{};
  if (at + sizeof(T) <= b.size()) std::memcpy(&v, b.data() + at, sizeof(T));
  return v;
}

template <typename T>
void Put(std::string& b, size_t at, T v) {
  ASSERT_LE(at + sizeof(T), b.size());
  std::memcpy(b.data() + at, &v, sizeof(T));
}

// The file offset of the ELF64 section header named `name` (0 if none).
size_t SectionHeader(const std::string& b, const std::string& name) {
  const auto shoff = Get<uint64_t>(b, 0x28);
  const auto shnum = Get<uint16_t>(b, 0x3c);
  const auto shstrndx = Get<uint16_t>(b, 0x3e);
  const auto strtab = Get<uint64_t>(b, shoff + 64 * shstrndx + 0x18);
  for (size_t i = 0; i < shnum; ++i) {
    const size_t h = shoff + 64 * i;
    const size_t at = strtab + Get<uint32_t>(b, h);
    if (at < b.size() && b.compare(at, name.size() + 1, name.c_str(), name.size() + 1) == 0) return h;
  }
  return 0;
}

// Writes `bytes` as `name.o` and a scenario importing percpu_add from it as
// `name.rsq`; returns the scenario's path.
std::string MalformedObjectScenario(const std::string& name, const std::string& bytes) {
  const std::string obj = ::testing::TempDir() + "/" + name + ".o";
  FILE* f = fopen(obj.c_str(), "wb");
  if (f == nullptr) return "";
  fwrite(bytes.data(), 1, bytes.size(), f);
  fclose(f);
  return WriteTemp(name + ".rsq", "scenario i\npercpu counter: u64\nimport \"" + obj +
                                      "\" function percpu_add\nfunc w\n  ret\nend\nthread a entry w\n");
}

// A malformed object is an input error (exit 2) at the import line on every
// path (`import`, `check`, `run`), never an internal error (exit 3) or an
// allocation of what a header claims: a NOBITS .bss of 2^63-1 bytes used to
// throw std::bad_alloc, one of 4 GiB took 4 GB of memory, and a PC-relative
// relocation that cannot be applied escaped `check` as an internal error.
TEST(ImportTest, MalformedObjectsAreInputErrorsAtTheImportLine) {
  struct Case {
    std::string name;
    std::string bytes;
    std::string expect;
  };
  std::vector<Case> cases;
  for (uint64_t size : {uint64_t{0x7fffffffffffffff}, uint64_t{0x100000000}, uint64_t{0x1000001}}) {
    std::string b = ObjectBytes();
    const size_t bss = SectionHeader(b, ".bss");
    ASSERT_NE(bss, 0u);
    ASSERT_EQ(Get<uint32_t>(b, bss + 4), 8u);  // SHT_NOBITS
    Put<uint64_t>(b, bss + 0x20, size);
    std::ostringstream hex;
    hex << std::hex << size;
    cases.push_back({"bss_" + hex.str(), b,
                     "section .bss (index 4) has sh_size 0x" + hex.str() +
                         ", more than the 0x1000000 bytes rseqmc lays out per section of a relocatable object; "
                         "the section header is malformed"});
  }
  {
    // The addend of the PC-relative relocation at .text+0x55 (the lea of the
    // second descriptor, outside percpu_add) pushed 2^36 away.
    std::string b = ObjectBytes();
    const size_t rela = SectionHeader(b, ".rela.text");
    ASSERT_NE(rela, 0u);
    const auto off = Get<uint64_t>(b, rela + 0x18);
    const auto size = Get<uint64_t>(b, rela + 0x20);
    size_t entry = 0;
    for (size_t e = off; e + 24 <= off + size; e += 24) {
      if (Get<uint64_t>(b, e) == 0x55) entry = e;
    }
    ASSERT_NE(entry, 0u);
    ASSERT_EQ(Get<uint64_t>(b, entry + 8) & 0xffffffff, 2u);  // R_X86_64_PC32
    Put<int64_t>(b, entry + 16, Get<int64_t>(b, entry + 16) + (int64_t{1} << 36));
    cases.push_back({"pc32_overflow", b,
                     "the PC-relative relocation at .text+0x55 (to a section symbol + 68719476764) does not fit in 32 "
                     "bits once the sections are laid out; the relocation or symbol table of this file is "
                     "malformed"});
  }
  for (const Case& c : cases) {
    const std::string rsq = MalformedObjectScenario(c.name, c.bytes);
    ASSERT_FALSE(rsq.empty());
    const std::string obj = ::testing::TempDir() + "/" + c.name + ".o";
    for (const char* cmd : {"check", "run"}) {
      const CliResult r = RunCli({cmd, rsq});
      EXPECT_EQ(r.code, 2) << c.name << " " << cmd << "\n" << r.err;
      EXPECT_NE(r.err.find(rsq + ":3:8: error: " + obj + ": " + c.expect), std::string::npos)
          << c.name << " " << cmd << "\n" << r.err;
      const std::string readelf = c.name == "pc32_overflow" ? "`readelf -r " : "`readelf -S ";
      EXPECT_NE(r.err.find("  hint: rebuild the file; " + readelf + obj + "` shows"),
                std::string::npos)
          << r.err;
      EXPECT_EQ(r.err.find("internal error"), std::string::npos) << r.err;
    }
    const CliResult r = RunCli({"import", obj, "--function", "percpu_add"});
    EXPECT_EQ(r.code, 2) << c.name << "\n" << r.err;
    EXPECT_NE(r.err.find(obj + ": " + c.expect), std::string::npos) << c.name << "\n" << r.err;
  }
}

// An object cut short (a partial copy) lost its section header table: libelf
// then lists no section, and `import` said "no function holds a critical
// section" with exit 0. It is an input error naming the table and the size.
TEST(ImportTest, TruncatedObjectIsAnInputError) {
  const std::string bytes = ObjectBytes();
  const auto shoff = Get<uint64_t>(bytes, 0x28);  // e_shoff
  const auto shnum = Get<uint16_t>(bytes, 0x3c);  // e_shnum
  ASSERT_EQ(Get<uint16_t>(bytes, 0x3a), 64u);     // e_shentsize
  ASSERT_EQ(shoff + shnum * 64u, bytes.size());   // gcc puts the table last
  const size_t cut = bytes.size() - 64;           // the last section header lost
  const std::string obj = ::testing::TempDir() + "/truncated.o";
  {
    std::ofstream(obj, std::ios::binary) << bytes.substr(0, cut);
  }
  std::ostringstream want;
  want << obj << ": the section header table (offset 0x" << std::hex << shoff << std::dec << ", " << shnum
       << " entries of 64 bytes) ends past the end of the file (" << cut
       << " bytes); the file is truncated or corrupt: copy or build it again";
  const CliResult r = RunCli({"import", obj});
  EXPECT_EQ(r.code, 2) << r.err;
  EXPECT_NE(r.err.find(want.str()), std::string::npos) << r.err;
  EXPECT_EQ(r.out, "");
  std::remove(obj.c_str());
}

// The lifted programs on this machine's kernel (kernel/harness: the JIT of the
// lifted IR, not the original bytes; ptrace-forced single-event schedules plus
// the random samples): no disagreement. Named Crosscheck* to run alone.
TEST(CrosscheckImportTest, LiftedExamplesAgreeWithTheKernel) {
  const CliResult r =
      RunCli({"crosscheck", Example("percpu_add.rsq"), Example("percpu_add_nocheck.rsq"), Example("cbne_store.rsq"),
              Example("percpu_slab.rsq")});
  if (r.code == 77) GTEST_SKIP() << "real-kernel harness unavailable: " << r.err;
  EXPECT_EQ(r.code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("4 scenarios cross-checked, 0 with disagreements"), std::string::npos) << r.out;
  for (const char* name : {"import_percpu_add ", "import_percpu_add_nocheck ", "import_cbne_store ",
                           "import_percpu_slab "}) {
    const size_t at = r.out.find(name);
    ASSERT_NE(at, std::string::npos) << name << r.out;
    const std::string line = r.out.substr(at, r.out.find('\n', at) - at);
    EXPECT_NE(line.find(", disagree 0,"), std::string::npos) << line;
  }
}

// The same examples running their original machine code (the .o bytes, not
// the JIT of the lifted IR) under the same schedules: no disagreement on any
// schedule the processor can have. The not-run counts are the schedules with
// a stop between the IR instructions of one machine instruction (golden: they
// follow from the simulator alone).
TEST(CrosscheckImportTest, OriginalBytesAgreeWithTheKernel) {
  const CliResult r = RunCli({"crosscheck", "--original-bytes", Example("percpu_add.rsq"),
                              Example("percpu_add_nocheck.rsq"), Example("cbne_store.rsq"),
                              Example("percpu_slab.rsq")});
  if (r.code == 77) GTEST_SKIP() << "real-kernel harness unavailable: " << r.err;
  EXPECT_EQ(r.code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("4 scenarios cross-checked, 0 with disagreements"), std::string::npos) << r.out;
  // Golden: schedules compared (all of them unless a run hit a harness error
  // or was flaky on this host) and schedules not run (the simulator alone
  // decides those).
  struct Golden {
    const char* scenario;
    uint64_t compared;
    const char* not_run;
  };
  const std::vector<Golden> golden = {
      {"import_percpu_add", 256, ", 241 not run ("},
      {"import_percpu_add_nocheck", 232, ", 193 not run ("},
      {"import_cbne_store", 171, ", 102 not run ("},
      {"import_percpu_slab", 315, ", 188 not run ("},
  };
  for (const Golden& g : golden) {
    const std::string line = LineOf(r.out, g.scenario);
    EXPECT_NE(line.find(" original "), std::string::npos) << line;
    EXPECT_NE(line.find(", disagree 0,"), std::string::npos) << line;
    EXPECT_NE(line.find(g.not_run), std::string::npos) << line;
    const size_t at = line.find("compared ");
    ASSERT_NE(at, std::string::npos) << line;
    const uint64_t compared = std::strtoull(line.c_str() + at + 9, nullptr, 10);
    EXPECT_LE(compared, g.compared) << line;
    EXPECT_GE(compared, g.compared * 9 / 10) << line;  // at most 10% lost to harness errors under load
  }
}

// An original-bytes cross-check of a percpu_add variant that agreed on every
// schedule it compared, with `not_run` schedules refused.
void ExpectAgreement(const CliResult& r, const std::string& not_run) {
  EXPECT_EQ(r.code, 0) << r.out << r.err;
  const std::string line = LineOf(r.out, "import_percpu_add");
  EXPECT_NE(line.find(", disagree 0,"), std::string::npos) << line;
  EXPECT_NE(line.find(not_run), std::string::npos) << line;
}

// A signal handler that itself runs the imported section: an abort applied
// at the signal's delivery is counted by the tracee's signal wrapper, since
// the handler arms rseq_cs again before the thread reaches abort_ip (where
// the tracer's breakpoint would take the armed rseq_cs for a jump). Without
// that, 14 of these schedules disagreed on abort counts.
TEST(CrosscheckImportTest, OriginalBytesCountAbortsUnderAHandlerThatArmsAgain) {
  const std::string path = PercpuAddVariant(
      "import_sig.rsq", {{"property sum(counter) == 2 * OPS", "property sum(counter) >= 2 * OPS"},
                         {"thread w * 2", "func on_sigusr1\nhagain:\n  rseq_addr r7\n  la r6, counter\n  li r2, 1\n"
                                          "  call percpu_add\n  bne r0, 0, hagain\n  ret\nend\n"
                                          "signal SIGUSR1 handler on_sigusr1\nthread w * 2"}});
  ASSERT_FALSE(path.empty());
  const CliResult r = RunCli({"crosscheck", "--original-bytes", path});
  if (r.code == 77) GTEST_SKIP() << "real-kernel harness unavailable: " << r.err;
  ExpectAgreement(r, ", 294 not run (");
}

// The shared library (R_X86_64_RELATIVE descriptors, link-time addresses)
// runs at its own load bias with the same result as the object.
TEST(CrosscheckImportTest, OriginalBytesOfTheSharedLibraryAgree) {
  const std::string path = PercpuAddVariant("import_so_orig.rsq", {{Example("percpu_ops.o"), Example("percpu_ops.so")}});
  ASSERT_FALSE(path.empty());
  const CliResult r = RunCli({"crosscheck", "--original-bytes", path});
  if (r.code == 77) GTEST_SKIP() << "real-kernel harness unavailable: " << r.err;
  ExpectAgreement(r, ", 241 not run (");
  // The first schedule not run names the instruction at its link address.
  EXPECT_NE(LineOf(r.out, "import_percpu_add").find("a stop before percpu_add:text.0x1105+1"), std::string::npos)
      << r.out;
}

// A planted mismatch: the commit `add %r8,(%rsi,%rdx,8)` of percpu_add lifted
// one too high (import/lift.h kMisliftEnv). The simulator and the JIT of the
// lifted IR share the mistake and agree; only the original bytes show it.
TEST(CrosscheckImportTest, MisliftedInstructionIsCaughtOnlyByOriginalBytes) {
  ASSERT_EQ(setenv(import::kMisliftEnv, ".text+0x23", 1), 0);
  const CliResult jit = RunCli({"crosscheck", Example("percpu_add.rsq"), "--samples", "10"});
  const CliResult orig = RunCli({"crosscheck", "--original-bytes", Example("percpu_add.rsq"), "--samples", "10"});
  unsetenv(import::kMisliftEnv);
  if (jit.code == 77 || orig.code == 77) GTEST_SKIP() << "real-kernel harness unavailable: " << jit.err;
  EXPECT_EQ(jit.code, 0) << jit.out << jit.err;
  EXPECT_NE(LineOf(jit.out, "import_percpu_add").find(", disagree 0,"), std::string::npos) << jit.out;
  EXPECT_EQ(orig.code, 1) << orig.out << orig.err;
  // Every compared schedule disagrees: the simulator loses the property, the kernel does not.
  const std::string line = LineOf(orig.out, "import_percpu_add");
  EXPECT_NE(line.find(", agree 0, disagree "), std::string::npos) << line;
  EXPECT_NE(line.find(", 212 not run ("), std::string::npos) << line;
  EXPECT_NE(orig.out.find("disagreement: verdict: simulator property (property failed: sum(counter) == 2 * OPS), "
                          "kernel pass"),
            std::string::npos)
      << orig.out;
}

}  // namespace
}  // namespace rseqmc
