// Property tests over random valid scenarios (tests/gen/program_gen.h):
//   * the text format round-trips: parse(print(s)) == s and print is a fixed point;
//   * a schedule token replays the identical execution, in this process and in
//     a fresh `rseqmc run --schedule` process;
//   * random schedules with aggressive event rates never crash the simulator,
//     never end in SIGSEGV / step limit / assert / deadlock on these (valid,
//     terminating) programs, stay under the generator's step bound, and keep
//     the generator's rseq invariants;
//   * mutated, truncated and foreign tokens are rejected with InputError.
//
// Each property runs a fixed number of RapidCheck cases (kCases below), with
// RapidCheck's seed (random per run, printed with a failure); RC_PARAMS
// (e.g. RC_PARAMS="seed=42" or "max_success=1000") overrides as usual.
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <rapidcheck.h>
#include <rapidcheck/gtest.h>

#include "scenarios/parser.h"
#include "scenarios/printer.h"
#include "sim/builder.h"
#include "sim/machine.h"
#include "sim/diag.h"
#include "sim/schedule.h"
#include "sim/simulator.h"
#include "sim/trace.h"
#include "tests/gen/program_gen.h"
#include "tests/gen/rc_cases.h"

namespace rseqmc {
namespace {

using testgen::GeneratedScenario;
using testgen::GenOptions;
using testgen::GenScenario;
using testgen::CheckCases;

// An aggressive random scheduler: frequent switches and events.
RandomOptions Aggressive(uint32_t max_events) {
  RandomOptions o;
  o.p_switch_cpu = 0.3;
  o.p_preempt = 0.08;
  o.p_migrate = 0.05;
  o.p_signal = 0.05;
  o.p_ipi = 0.03;
  o.max_events = max_events;
  return o;
}

RunOptions TraceOptions() {
  RunOptions o;
  o.record_trace = true;
  return o;
}

std::string Describe(const Scenario& s, const std::string& token) {
  return "\n--- scenario ---\n" + PrintScenario(s) + "--- token: " + token + "\n";
}

// Everything observable of two executions is identical.
void AssertSameExecution(const Scenario& s, const ExecutionResult& a, const ExecutionResult& b) {
  RC_ASSERT(a.verdict == b.verdict);
  RC_ASSERT(a.message == b.message);
  RC_ASSERT(a.steps == b.steps);
  RC_ASSERT(a.TraceHash() == b.TraceHash());
  RC_ASSERT(a.memory == b.memory);
  RC_ASSERT(a.schedule == b.schedule);
  RC_ASSERT(a.threads.size() == b.threads.size());
  for (size_t t = 0; t < a.threads.size(); ++t) {
    RC_ASSERT(a.threads[t].exited == b.threads[t].exited);
    RC_ASSERT(a.threads[t].ret == b.threads[t].ret);
    RC_ASSERT(a.threads[t].aborts == b.threads[t].aborts);
    RC_ASSERT(a.threads[t].final_cpu == b.threads[t].final_cpu);
    RC_ASSERT(a.threads[t].observed == b.threads[t].observed);
  }
  for (int k = 0; k < kNumDecisionKinds; ++k) RC_ASSERT(a.events[k] == b.events[k]);
  RC_ASSERT(FormatTimeline(s, a) == FormatTimeline(s, b));
  RC_ASSERT(FormatSymbols(s, a) == FormatSymbols(s, b));
  RC_ASSERT(FormatJson(s, a) == FormatJson(s, b));
}

// ---------------------------------------------------------------------------
// The text format.

RC_GTEST_PROP(GeneratorProperties, AlwaysBuildsAndIsBounded, ()) {
  const GeneratedScenario g = *GenScenario();
  RC_ASSERT(g.num_invariants <= g.scenario.properties.size());
  // The guarantee the header makes: even 64 events stay far below the limit.
  RC_ASSERT(g.StepBound(64) < RunOptions{}.max_steps);
  RC_TAG(g.scenario.num_cpus, g.scenario.threads.size());
}

TEST(PropertiesTest, PrintParseRoundTrip) {
  CheckCases(300, [] {
    const GeneratedScenario g = *GenScenario();
    const std::string text = PrintScenario(g.scenario);
    Scenario parsed;
    try {
      parsed = ParseScenario(text, "generated.rsq");
    } catch (const InputError& e) {
      RC_FAIL("printed scenario does not parse: " + e.Format() + "\n" + text);
    }
    RC_ASSERT(parsed == g.scenario);
    RC_ASSERT(PrintScenario(parsed) == text);
    RC_ASSERT(ScenarioFingerprint(parsed) == ScenarioFingerprint(g.scenario));
  });
}

// ---------------------------------------------------------------------------
// Determinism.

TEST(PropertiesTest, TokenReplaysTheSameExecution) {
  CheckCases(200, [] {
    const GeneratedScenario g = *GenScenario();
    const Scenario& s = g.scenario;
    const uint64_t seed = *rc::gen::arbitrary<uint64_t>();
    const RandomOptions ro = *rc::gen::element(RandomOptions{}, Aggressive(16));

    Simulator sim(s, TraceOptions());
    RandomScheduler random(seed, ro);
    const ExecutionResult first = sim.Run(random);
    const std::string token = EncodeSchedule(s, first.schedule);
    RC_LOG() << Describe(s, token);

    // The same seed again, on the same simulator (reused fibers and buffers).
    RandomScheduler again(seed, ro);
    AssertSameExecution(s, first, sim.Run(again));

    // The token decodes to the recorded schedule and replays it, on the same
    // simulator and on a fresh one.
    const Schedule decoded = DecodeSchedule(s, token);
    RC_ASSERT(decoded == first.schedule);
    ReplayScheduler replay(decoded);
    AssertSameExecution(s, first, sim.Run(replay));
    Simulator fresh(s, TraceOptions());
    AssertSameExecution(s, first, fresh.Run(replay));
    // Without a trace the execution is the same too.
    Simulator quiet(s);
    const ExecutionResult untraced = quiet.Run(replay);
    RC_ASSERT(untraced.TraceHash() == first.TraceHash());
    RC_ASSERT(untraced.memory == first.memory);
    RC_ASSERT(untraced.trace.empty());
  });
}

// All-IR scenarios run without fibers (Machine::RunDirect); forced onto
// fibers (RunOptions::fibers, the path scenarios with a C++ thread take) the
// same seed gives exactly the same execution, traced and untraced.
TEST(PropertiesTest, FiberlessAndFiberRunsAreTheSame) {
  CheckCases(200, [] {
    const GeneratedScenario g = *GenScenario();
    const Scenario& s = g.scenario;
    const uint64_t seed = *rc::gen::arbitrary<uint64_t>();
    const RandomOptions ro = *rc::gen::element(RandomOptions{}, Aggressive(16));
    const bool trace = *rc::gen::arbitrary<bool>();
    RunOptions direct_options;
    direct_options.record_trace = trace;
    RunOptions fiber_options = direct_options;
    fiber_options.fibers = true;
    Simulator direct(s, direct_options), fibers(s, fiber_options);
    RC_PRE(direct.can_resume());
    RC_ASSERT(!fibers.can_resume());
    RandomScheduler a(seed, ro), b(seed, ro);
    const ExecutionResult ra = direct.Run(a);
    RC_LOG() << Describe(s, EncodeSchedule(s, ra.schedule));
    AssertSameExecution(s, ra, fibers.Run(b));
  });
}

// Replays a schedule asking at every boundary (no promised defaults), and
// saves a checkpoint when it reaches boundary `save_at`: it reads its position
// from the machine, so it continues correctly after a resume.
class CheckpointingReplay : public Scheduler {
 public:
  CheckpointingReplay(const Schedule& s, uint64_t save_at, MachineCheckpoint* ck) : save_at_(save_at), ck_(ck) {
    for (const ScheduleEntry& e : s.entries) decisions_.push_back(e);
  }
  Decision Choose(const ChoiceView& view) override {
    const Machine& m = view.machine();
    const uint64_t b = m.boundary();
    if (b == save_at_ && ck_ != nullptr) m.Save(*ck_);
    for (const ScheduleEntry& e : decisions_) {
      if (e.boundary == b) return e.decision;
    }
    return Decision::Step(view.DefaultCpu());
  }

 private:
  std::vector<ScheduleEntry> decisions_;
  uint64_t save_at_;
  MachineCheckpoint* ck_;
};

// A checkpoint saved at any boundary of an execution, resumed (twice, and
// after an unrelated execution rewrote the buffers), ends in exactly the
// execution that runs from the start: the state exhaustive search restores
// instead of replaying (Machine::Save / Simulator::ResumeInto).
TEST(PropertiesTest, ResumingACheckpointEqualsRunningFromTheStart) {
  CheckCases(200, [] {
    const GeneratedScenario g = *GenScenario();
    const Scenario& s = g.scenario;
    const uint64_t seed = *rc::gen::arbitrary<uint64_t>();
    Simulator sim(s, TraceOptions());
    RC_PRE(sim.can_resume());
    RandomScheduler random(seed, Aggressive(6));
    const ExecutionResult full = sim.Run(random);
    RC_LOG() << Describe(s, EncodeSchedule(s, full.schedule));
    // Boundaries: one per step, plus one per injected event, plus the last.
    uint64_t boundaries = full.steps + 1;
    for (int k = 0; k < kNumDecisionKinds; ++k) boundaries += full.events[k];
    const uint64_t at = *rc::gen::inRange<uint64_t>(0, boundaries);
    RC_LOG() << "checkpoint at boundary " << at;

    MachineCheckpoint ck;
    CheckpointingReplay saving(full.schedule, at, &ck);
    ExecutionResult r;
    sim.RunInto(saving, r);
    AssertSameExecution(s, full, r);
    if (!ck.valid) return;  // the execution ended before that boundary
    CheckpointingReplay rest(full.schedule, ~0ull, nullptr);
    sim.ResumeInto(ck, rest, r);
    AssertSameExecution(s, full, r);
    sim.ResumeInto(ck, rest, r);
    AssertSameExecution(s, full, r);
    // Another execution through the same prefix (here: the same one, with the
    // buffers it wrote) leaves `r` valid for the checkpoint too.
    sim.RunInto(rest, r);
    sim.ResumeInto(ck, rest, r);
    AssertSameExecution(s, full, r);
  });
}

// Runs `command` through the shell; returns its stdout and sets *status to the
// exit status (-1 if it did not exit normally).
std::string RunCommand(const std::string& command, int* status) {
  std::string out;
  FILE* p = popen(command.c_str(), "r");
  if (p == nullptr) {
    *status = -1;
    return out;
  }
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, p)) > 0) out.append(buf, n);
  const int raw = pclose(p);
  *status = WIFEXITED(raw) ? WEXITSTATUS(raw) : -1;
  return out;
}

class TempDir {
 public:
  TempDir() {
    std::string pattern = (std::filesystem::temp_directory_path() / "rseqmc_props_XXXXXX").string();
    if (mkdtemp(pattern.data()) != nullptr) path_ = pattern;
  }
  ~TempDir() {
    std::error_code ec;
    if (!path_.empty()) std::filesystem::remove_all(path_, ec);
  }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

TEST(PropertiesTest, TokenReplaysInAFreshProcess) {
  TempDir dir;
  ASSERT_FALSE(dir.path().empty());
  const std::string file = dir.path() + "/generated.rsq";
  CheckCases(20, [&] {
    const GeneratedScenario g = *GenScenario();
    const std::string text = PrintScenario(g.scenario);
    {
      std::ofstream out(file, std::ios::binary | std::ios::trunc);
      out << text;
    }
    // In this process: the scenario as the CLI will parse it.
    const Scenario parsed = ParseScenario(text, file);
    Simulator sim(parsed, TraceOptions());
    RandomScheduler random(*rc::gen::arbitrary<uint64_t>(), Aggressive(12));
    const ExecutionResult r = sim.Run(random);
    const std::string token = EncodeSchedule(parsed, r.schedule);
    RC_LOG() << Describe(parsed, token);
    // The built scenario runs the same execution.
    Simulator built(g.scenario);
    const Schedule decoded = DecodeSchedule(g.scenario, token);  // ReplayScheduler keeps a reference
    ReplayScheduler replay(decoded);
    RC_ASSERT(built.Run(replay).TraceHash() == r.TraceHash());

    int status = 0;
    const std::string out =
        RunCommand(std::string("'") + RSEQMC_BINARY + "' run '" + file + "' --schedule " + token + " --trace json",
                   &status);
    RC_ASSERT(status == (r.verdict == Verdict::kPass ? 0 : 1));
    // The CLI prints FormatJson's object with two more members (seed, replay)
    // before the closing brace; everything before them is identical.
    const std::string json = FormatJson(parsed, r);
    const std::string head = json.substr(0, json.size() - 1);
    RC_ASSERT(out.compare(0, head.size(), head) == 0);
    RC_ASSERT(out.find("\"seed\":null", head.size()) != std::string::npos);
  });
}

// ---------------------------------------------------------------------------
// Random schedules on valid programs.

TEST(PropertiesTest, RandomSchedulesNeverCrashOrFailInvariants) {
  CheckCases(300, [] {
    const GeneratedScenario g = *GenScenario();
    const Scenario& s = g.scenario;
    const uint32_t max_events = *rc::gen::inRange<uint32_t>(0, 33);
    RunOptions opt;
    if (*rc::gen::arbitrary<bool>()) opt.kernel = {KernelModel::kLegacy418, "4.18"};
    Simulator sim(s, opt);
    RandomScheduler sched(*rc::gen::arbitrary<uint64_t>(), Aggressive(max_events));
    ExecutionResult r;
    uint64_t aborts = 0, steps = 0, failed = 0;
    for (int run = 0; run < 40; ++run) {
      const Verdict v = sim.RunInto(sched, r);
      if (v != Verdict::kPass && v != Verdict::kPropertyFailed) {
        RC_FAIL("run " + std::to_string(run) + ": verdict " + VerdictName(v) + " (" + r.message + ")" +
                Describe(s, EncodeSchedule(s, r.schedule)));
      }
      for (size_t i = 0; i < g.num_invariants; ++i) {
        if (!r.properties.at(i).holds) {
          RC_FAIL("invariant " + s.properties[i].text + " failed (value " + std::to_string(r.properties[i].value) +
                  ")" + Describe(s, EncodeSchedule(s, r.schedule)));
        }
      }
      for (const PropertyOutcome& p : r.properties) RC_ASSERT(p.error.empty());
      for (const ThreadOutcome& t : r.threads) RC_ASSERT(t.exited);
      RC_ASSERT(r.schedule.NumEvents() <= max_events);
      RC_ASSERT(r.steps <= g.StepBound(max_events));
      for (const ThreadOutcome& t : r.threads) aborts += t.aborts;
      steps += r.steps;
      failed += r.verdict != Verdict::kPass;
    }
    RC_CLASSIFY(aborts > 0, "some aborts");
    RC_CLASSIFY(failed > 0, "a racy property failed");
    RC_CLASSIFY(steps > 40 * 200, "over 200 steps per run");
  });
}

// Every rseq abort in a trace interrupts an instruction inside the armed
// descriptor's section and lands on its abort label; every lazy clear
// happens outside it (rules 5-7).
TEST(PropertiesTest, AbortsLandOnTheAbortLabel) {
  CheckCases(200, [] {
    const GeneratedScenario g = *GenScenario();
    const Program& p = g.scenario.program;
    Simulator sim(g.scenario, TraceOptions());
    RandomScheduler sched(*rc::gen::arbitrary<uint64_t>(), Aggressive(16));
    const ExecutionResult r = sim.Run(sched);
    size_t aborts = 0, in_handler = 0;
    for (const TraceEntry& e : r.trace) {
      if (e.kind != TraceKind::kAbort) continue;
      ++aborts;
      in_handler += e.depth > 0;
      RC_ASSERT(e.b >= 0);
      RC_ASSERT(static_cast<size_t>(e.b) < p.descriptors.size());
      const CsDescriptor& d = p.descriptors[static_cast<size_t>(e.b)];
      RC_ASSERT(e.pc >= d.start);
      RC_ASSERT(e.pc < d.post_commit);
      RC_ASSERT(e.a == static_cast<int64_t>(d.abort));
    }
    size_t total_aborts = 0;
    for (const ThreadOutcome& t : r.threads) total_aborts += t.aborts;
    RC_ASSERT(aborts == total_aborts);
    RC_CLASSIFY(aborts > 0, "aborts");
    RC_CLASSIFY(in_handler > 0, "aborts in a signal handler's section");
  });
}

TEST(PropertiesTest, WithoutRacyPropertiesEveryExecutionPasses) {
  GenOptions o;
  o.racy_properties = false;
  CheckCases(100, [o] {
    const GeneratedScenario g = *GenScenario(o);
    Simulator sim(g.scenario);
    RandomScheduler sched(*rc::gen::arbitrary<uint64_t>(), Aggressive(24));
    ExecutionResult r;
    for (int run = 0; run < 25; ++run) {
      if (sim.RunInto(sched, r) != Verdict::kPass) {
        RC_FAIL(std::string(VerdictName(r.verdict)) + ": " + r.message +
                Describe(g.scenario, EncodeSchedule(g.scenario, r.schedule)));
      }
    }
  });
}

// ---------------------------------------------------------------------------
// Tokens.

// Runs `token` on `s` if it decodes; every outcome but a crash is fine, and
// an error must be an InputError.
void DecodeAndMaybeReplay(const Scenario& s, const std::string& token) {
  Schedule decoded;
  try {
    decoded = DecodeSchedule(s, token);
  } catch (const InputError& e) {
    RC_ASSERT(e.file() == "<token>");
    RC_ASSERT(!e.message().empty());
    return;
  }
  // Each schedule has one token: a damaged token that decodes is the
  // canonical token of what it decodes to, never a second spelling of it.
  RC_ASSERT(EncodeSchedule(s, decoded) == token);
  try {
    Simulator sim(s);
    ReplayScheduler replay(decoded);
    (void)sim.Run(replay);
  } catch (const InputError&) {
    // A decision that is impossible in its state.
  }
}

// The token of one random execution of `s` (aggressive scheduling), for the
// token-damage properties below.
std::string RandomToken(const Scenario& s) {
  Simulator sim(s);
  RandomScheduler random(*rc::gen::arbitrary<uint64_t>(), Aggressive(8));
  return EncodeSchedule(s, sim.Run(random).schedule);
}

TEST(PropertiesTest, DamagedTokensAreRejectedOrHarmless) {
  CheckCases(200, [] {
    const GeneratedScenario g = *GenScenario();
    const Scenario& s = g.scenario;
    const std::string token = RandomToken(s);
    RC_LOG() << Describe(s, token);

    // Truncated: always rejected.
    const size_t cut = *rc::gen::inRange<size_t>(0, token.size());
    RC_ASSERT_THROWS_AS(DecodeSchedule(s, token.substr(0, cut)), InputError);

    // Mutated: one to three edits (replace, insert, delete) of any byte.
    std::string bad = token;
    const int edits = *rc::gen::inRange(1, 4);
    for (int i = 0; i < edits; ++i) {
      const size_t pos = *rc::gen::inRange<size_t>(0, bad.size() + 1);
      const char c = *rc::gen::oneOf(rc::gen::elementOf(std::string(
                                         "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_")),
                                     rc::gen::arbitrary<char>());
      switch (*rc::gen::inRange(0, 3)) {
        case 0:
          if (pos < bad.size()) bad[pos] = c;
          break;
        case 1:
          bad.insert(bad.begin() + static_cast<std::ptrdiff_t>(pos), c);
          break;
        default:
          if (pos < bad.size()) bad.erase(pos, 1);
          break;
      }
    }
    DecodeAndMaybeReplay(s, bad);

    // Random text.
    DecodeAndMaybeReplay(s, *rc::gen::arbitrary<std::string>());
    DecodeAndMaybeReplay(s, "rsq1." + *rc::gen::container<std::string>(rc::gen::elementOf(std::string(
                                          "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"))));
  });
}

// Regression test for a simulator bug found by DamagedTokensAreRejectedOrHarmless:
// an impossible decision at the boundary right after a thread exits was thrown
// from Machine::ThreadMain outside its try block, so it escaped the fiber and
// terminated the process instead of surfacing as an InputError (`rseqmc run
// --schedule` aborted with exit 134).
TEST(PropertiesTest, ImpossibleDecisionAfterAThreadExitsIsAnInputError) {
  ScenarioBuilder b("exit_then_bad_decision");
  b.Cpus(2);
  b.Func("f").Ret();
  b.Thread("t0", "f", 0).Thread("t1", "f", 1);
  const Scenario s = b.Build();
  Schedule bad;
  bad.entries.push_back({1, Decision::Step(5)});  // boundary 1: right after t0's `ret`
  Simulator sim(s);
  ReplayScheduler replay(bad);
  EXPECT_THROW((void)sim.Run(replay), InputError);
}

// Each schedule has one token: changing the spare bits of the last character
// (which hold no part of any byte), adding a character that completes no
// byte, or writing a number in more varint bytes than it needs is refused
// with the character's position, not replayed as the original. Before this
// check both variants below (a changed spare bit, an added character)
// replayed the original schedule.
TEST(PropertiesTest, NonCanonicalTokensAreRejectedWithThePosition) {
  CheckCases(200, [] {
    const GeneratedScenario g = *GenScenario();
    const Scenario& s = g.scenario;
    const std::string token = RandomToken(s);
    RC_LOG() << Describe(s, token);
    const std::string alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
    const size_t chars = token.size() - 5;  // after "rsq1." / "rsq2."
    const size_t spare = chars * 6 % 8;     // bits of the last character no byte uses: 0, 2 or 4
    std::vector<std::pair<std::string, size_t>> variants;  // (token, the column the error must name)
    if (spare > 0) {
      std::string flipped = token;
      const size_t v = alphabet.find(flipped.back());
      flipped.back() = alphabet[v ^ *rc::gen::inRange<size_t>(1, size_t{1} << spare)];
      variants.emplace_back(flipped, token.size());
    } else {
      variants.emplace_back(token + "A", token.size() + 1);
    }
    for (const auto& [bad, column] : variants) {
      try {
        (void)DecodeSchedule(s, bad);
        RC_FAIL("a non-canonical token decoded: " + bad);
      } catch (const InputError& e) {
        RC_ASSERT(e.message().find("not in canonical form") != std::string::npos);
        RC_ASSERT(e.loc().column == column);
        RC_ASSERT(e.hint().find("exactly as rseqmc printed it") != std::string::npos);
      }
    }
  });
}

TEST(PropertiesTest, TokenForAnotherProgramIsRejected) {
  CheckCases(100, [] {
    const GeneratedScenario a = *GenScenario();
    const GeneratedScenario b = *GenScenario();
    RC_PRE(ScenarioFingerprint(a.scenario) != ScenarioFingerprint(b.scenario));
    Simulator sim(a.scenario);
    RandomScheduler random(*rc::gen::arbitrary<uint64_t>());
    const std::string token = EncodeSchedule(a.scenario, sim.Run(random).schedule);
    try {
      (void)DecodeSchedule(b.scenario, token);
      RC_FAIL("a token for another program decoded");
    } catch (const InputError& e) {
      RC_ASSERT(e.message().find("another program") != std::string::npos);
    }
  });
}

TEST(PropertiesTest, EncodeDecodeRoundTripsAnySchedule) {
  CheckCases(100, [] {
    const GeneratedScenario g = *GenScenario();
    Schedule s;
    s.kernel = *rc::gen::element(KernelModel::kLegacy418, KernelModel::kLegacy60);
    uint64_t boundary = 0;
    const int n = *rc::gen::inRange(0, 40);
    for (int i = 0; i < n; ++i) {
      // Several events may share a boundary; a step ends it.
      const bool same = i > 0 && s.entries.back().decision.IsEvent() && *rc::gen::arbitrary<bool>();
      if (!same) boundary += *rc::gen::inRange<uint64_t>(i == 0 ? 0 : 1, 5000);
      const int cpu = *rc::gen::inRange(0, kMaxCpus);
      Decision d;
      switch (*rc::gen::inRange(0, kNumDecisionKinds)) {
        case 0: d = Decision::Step(cpu); break;
        case 1: d = Decision::Preempt(cpu, *rc::gen::inRange(-1, kMaxThreads)); break;
        case 2: d = Decision::Migrate(cpu, *rc::gen::inRange(0, kMaxCpus)); break;
        case 3: d = Decision::Signal(cpu, *rc::gen::inRange(1, kMaxSignal + 1)); break;
        default: d = Decision::Ipi(cpu); break;
      }
      s.entries.push_back({boundary, d});
    }
    const std::string token = EncodeSchedule(g.scenario, s);
    RC_ASSERT(DecodeSchedule(g.scenario, token) == s);
  });
}

}  // namespace
}  // namespace rseqmc
