// Golden timelines: a few scenarios run under fixed schedules (seeds, and one
// scripted schedule with a preemption inside a critical section, a migration
// and a signal); FormatTimeline + FormatSymbols + the schedule token are
// compared byte for byte with tests/golden/<case>.txt, and the scripted run's
// FormatJson and FormatHtml too.
//
// A difference fails with a unified diff (expected -, actual +) of the first
// differing lines. When a change of the rendering or of a scenario is
// intended, regenerate the files with tools/update-golden.sh (which runs this
// test with RSEQMC_UPDATE_GOLDEN=1: the files are rewritten, nothing compared)
// and review `git diff tests/golden`.
#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "scenarios/parser.h"
#include "sim/diag.h"
#include "sim/machine.h"
#include "sim/schedule.h"
#include "sim/simulator.h"
#include "sim/trace.h"
#include "sim/trace_html.h"

namespace rseqmc {
namespace {

const std::string kSourceDir = RSEQMC_SOURCE_DIR;

bool Updating() {
  const char* v = std::getenv("RSEQMC_UPDATE_GOLDEN");
  return v != nullptr && std::string(v) == "1";
}

bool ReadFile(const std::string& path, std::string* out) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return false;
  std::stringstream ss;
  ss << in.rdbuf();
  *out = ss.str();
  return true;
}

std::vector<std::string> Lines(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

// A one-hunk unified diff of `expected` against `actual`: the common leading
// and trailing lines are trimmed, three lines of context are kept, and at
// most `max_lines` lines of each side are shown.
std::string UnifiedDiff(const std::string& expected, const std::string& actual, const std::string& name,
                        size_t max_lines = 25) {
  const std::vector<std::string> a = Lines(expected), b = Lines(actual);
  size_t prefix = 0;
  while (prefix < a.size() && prefix < b.size() && a[prefix] == b[prefix]) ++prefix;
  size_t suffix = 0;
  while (suffix < a.size() - prefix && suffix < b.size() - prefix &&
         a[a.size() - 1 - suffix] == b[b.size() - 1 - suffix]) {
    ++suffix;
  }
  const size_t context = 3;
  const size_t from = prefix > context ? prefix - context : 0;
  const size_t a_changed = a.size() - suffix, b_changed = b.size() - suffix;  // ends of the changed lines
  const size_t after = std::min(suffix, context);
  std::ostringstream out;
  out << "--- " << name << " (expected)\n+++ " << name << " (actual)\n";
  out << "@@ -" << from + 1 << "," << a_changed + after - from << " +" << from + 1 << "," << b_changed + after - from
      << " @@\n";
  for (size_t i = from; i < prefix; ++i) out << " " << a[i] << "\n";
  auto side = [&](const std::vector<std::string>& v, size_t end, char mark) {
    for (size_t i = prefix; i < end; ++i) {
      if (i - prefix == max_lines) {
        out << mark << " ... (" << end - i << " more lines)\n";
        break;
      }
      out << mark << v[i] << "\n";
    }
  };
  side(a, a_changed, '-');
  side(b, b_changed, '+');
  for (size_t i = a_changed; i < a_changed + after; ++i) out << " " << a[i] << "\n";
  if (expected.empty() != actual.empty() || (!expected.empty() && expected.back() != actual.back())) {
    out << "(the files differ in their final newline)\n";
  }
  return out.str();
}

// Compares `actual` with tests/golden/<name>.txt, or rewrites the file when
// RSEQMC_UPDATE_GOLDEN=1.
void CheckGolden(const std::string& name, const std::string& actual) {
  const std::string path = kSourceDir + "/tests/golden/" + name + ".txt";
  if (Updating()) {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out << actual;
    ASSERT_TRUE(out.good()) << "cannot write " << path;
    std::cout << "updated " << path << "\n";
    return;
  }
  std::string expected;
  ASSERT_TRUE(ReadFile(path, &expected)) << path << " is missing; run tools/update-golden.sh to create it";
  if (expected != actual) {
    ADD_FAILURE() << "the output differs from " << path << "\n"
                  << UnifiedDiff(expected, actual, "tests/golden/" + name + ".txt")
                  << "If the change is intended, run tools/update-golden.sh and review `git diff tests/golden`.";
  }
}

// Parses a scenario by its path relative to the source tree (which is also
// the name the rendering shows, so the output does not depend on where the
// tree lives).
Scenario Load(const std::string& relative) {
  std::string text;
  if (!ReadFile(kSourceDir + "/" + relative, &text)) throw std::runtime_error("cannot read " + relative);
  return ParseScenario(text, relative);
}

// The golden text of one execution; also checks that its token replays it.
std::string Render(const std::string& title, const Scenario& s, const ExecutionResult& r) {
  const std::string token = EncodeSchedule(s, r.schedule);
  std::string out = "# " + title + "\n# regenerate with tools/update-golden.sh\n\n";
  out += FormatTimeline(s, r);
  out += "\n--- FormatSymbols\n" + FormatSymbols(s, r);
  out += "schedule: " + token + "\n";

  RunOptions opt;
  opt.record_trace = true;
  Simulator replay_sim(s, opt);
  const Schedule decoded = DecodeSchedule(s, token);
  ReplayScheduler replay(decoded);
  const ExecutionResult again = replay_sim.Run(replay);
  EXPECT_EQ(FormatTimeline(s, again), FormatTimeline(s, r)) << "the token does not replay " << title;
  return out;
}

std::string RunSeeded(const std::string& relative, uint64_t seed, const RandomOptions& ro, const std::string& how) {
  const Scenario s = Load(relative);
  RunOptions opt;
  opt.record_trace = true;
  Simulator sim(s, opt);
  RandomScheduler sched(seed, ro);
  const ExecutionResult r = sim.Run(sched);
  return Render(relative + ", seed " + std::to_string(seed) + how, s, r);
}

RandomOptions Busy() {
  RandomOptions o;
  o.p_preempt = 0.06;
  o.p_migrate = 0.04;
  o.p_signal = 0.04;
  o.p_ipi = 0.03;
  return o;
}

TEST(GoldenTest, PercpuCounterSeed1) {
  CheckGolden("percpu_counter_seed1", RunSeeded("scenarios/percpu_counter.rsq", 1, {}, ""));
}

TEST(GoldenTest, PercpuCounterSeed7Busy) {
  CheckGolden("percpu_counter_seed7_busy",
              RunSeeded("scenarios/percpu_counter.rsq", 7, Busy(), " (busy: more preemptions, migrations, signals)"));
}

TEST(GoldenTest, PercpuSpinlockSeed1) {
  CheckGolden("percpu_spinlock_seed1", RunSeeded("scenarios/percpu_spinlock.rsq", 1, {}, ""));
}

TEST(GoldenTest, PercpuSpinlockSeed3Busy) {
  CheckGolden("percpu_spinlock_seed3_busy",
              RunSeeded("scenarios/percpu_spinlock.rsq", 3, Busy(), " (busy: more preemptions, migrations, signals)"));
}

TEST(GoldenTest, HandlerSectionSeed2Busy) {
  CheckGolden("handler_section_seed2_busy",
              RunSeeded("tests/golden/handler_section.rsq", 2, Busy(), " (busy: more preemptions, migrations, signals)"));
}

// Fires each scripted decision once, in order, at the first boundary where its
// trigger holds; otherwise lets the previous CPU run on.
class ScriptedScheduler : public Scheduler {
 public:
  struct Step {
    std::function<bool(const ChoiceView&)> when;
    Decision what;
  };
  explicit ScriptedScheduler(std::vector<Step> steps) : steps_(std::move(steps)) {}
  void BeginExecution(const Machine&) override { next_ = 0; }
  Decision Choose(const ChoiceView& v) override {
    if (next_ < steps_.size() && steps_[next_].when(v)) return steps_[next_++].what;
    return Decision::Step(v.DefaultCpu());
  }
  size_t fired() const { return next_; }

 private:
  std::vector<Step> steps_;
  size_t next_ = 0;
};

// Global index of `label` + `offset` in `function` (throws if the scenario
// no longer has them).
uint32_t CodeIndex(const Scenario& s, const std::string& function, const std::string& label, uint32_t offset) {
  const int f = s.program.FindFunction(function);
  if (f < 0) throw std::runtime_error("no function " + function);
  for (const Label& l : s.program.functions[f].labels) {
    if (l.name == label) return l.index + offset;
  }
  throw std::runtime_error("no label " + function + ":" + label);
}

// True when thread `t` runs on `cpu` and is about to execute instruction `pc`.
std::function<bool(const ChoiceView&)> At(int t, int cpu, uint32_t pc) {
  return [=](const ChoiceView& v) {
    const Machine& m = v.machine();
    return v.Running(cpu) == t && m.thread(t).cur().pc == pc && m.InCriticalSection(t);
  };
}

TEST(GoldenTest, PercpuCounterScripted) {
  // percpu_counter: w0 starts on cpu0, w1 on cpu1; the previous CPU runs on
  // unless the script says otherwise.
  const Scenario s = Load("scenarios/percpu_counter.rsq");
  ASSERT_EQ(s.num_cpus, 2u);
  ASSERT_EQ(s.threads.size(), 2u);
  const uint32_t ld = CodeIndex(s, "rseq_load_add_store", "start", 2);   // ld r7, [r2]
  const uint32_t add = CodeIndex(s, "rseq_load_add_store", "start", 3);  // add r7, r7, r3
  const uint32_t st = CodeIndex(s, "rseq_load_add_store", "start", 4);   // st [r2], r7 (commit)
  const uint32_t chk = CodeIndex(s, "rseq_load_add_store", "start", 1);  // bne r6, r1, abort
  const int sigusr1 = SignalNumber("SIGUSR1");
  ScriptedScheduler sched({
      // 1. w0 is preempted inside its section (before the load): with an
      //    empty run queue cpu0 idles, w0 comes back and aborts.
      {At(0, 0, ld), Decision::Preempt(0)},
      // 2. On its retry w0 migrates to cpu1 between the load and the add: cpu0
      //    is left idle, w1 runs on cpu1 and w0 waits in its queue.
      {At(0, 0, add), Decision::Migrate(0, 1)},
      // 3. w1 gets SIGUSR1 right before its commit: the section aborts before
      //    the handler frame is built, the handler runs, w1 retries.
      {At(1, 1, st), Decision::Signal(1, sigusr1)},
      // 4. w1 is preempted in its retry in favour of w0, which resumes at its
      //    abort handler (the migration aborted it) and retries on cpu1.
      {At(1, 1, chk), Decision::Preempt(1, 0)},
  });
  RunOptions opt;
  opt.record_trace = true;
  Simulator sim(s, opt);
  const ExecutionResult r = sim.Run(sched);
  ASSERT_EQ(sched.fired(), 4u) << "the script did not play out; the scenario changed?\n" << FormatTimeline(s, r);
  EXPECT_EQ(r.verdict, Verdict::kPass);
  EXPECT_GE(r.threads[0].aborts, 2u);
  EXPECT_GE(r.threads[1].aborts, 1u);
  CheckGolden("percpu_counter_scripted",
              Render("scenarios/percpu_counter.rsq, scripted: preempt in section, migrate, signal before commit, "
                     "preempt",
                     s, r));
  // The same execution as JSON and as the viewer page: the trace store
  // (sim/trace.h) and the streamed writers must give these bytes exactly.
  CheckGolden("percpu_counter_scripted_json", FormatJson(s, r, ",\"seed\":null") + "\n");
  CheckGolden("percpu_counter_scripted_html", FormatHtml(s, r, {"", "rseqmc replay scenarios/percpu_counter.rsq"}));
}

// The diff helper itself.
TEST(GoldenTest, UnifiedDiffShowsTheFirstDifference) {
  const std::string d = UnifiedDiff("a\nb\nc\nd\ne\nf\ng\n", "a\nb\nc\nd\nX\nf\ng\n", "x.txt");
  EXPECT_NE(d.find("@@ -2,6 +2,6 @@"), std::string::npos) << d;
  EXPECT_NE(d.find("\n-e\n+X\n"), std::string::npos) << d;
  EXPECT_NE(d.find("\n b\n c\n d\n"), std::string::npos) << d;
  EXPECT_NE(d.find("\n f\n g\n"), std::string::npos) << d;
  const std::string longer = UnifiedDiff("a\n", "a\nb\nc\n", "y.txt");
  EXPECT_NE(longer.find("+b\n+c\n"), std::string::npos) << longer;
}

}  // namespace
}  // namespace rseqmc
