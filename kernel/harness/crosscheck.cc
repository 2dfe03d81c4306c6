#include "kernel/harness/crosscheck.h"

#include <signal.h>
#include <sys/rseq.h>
#include <sys/utsname.h>

#include <algorithm>
#include <bit>
#include <chrono>
#include <iomanip>
#include <map>
#include <random>
#include <set>
#include <sstream>
#include <stdexcept>

#include "kernel/harness/jit.h"
#include "kernel/harness/tracer.h"
#include "sim/builder.h"
#include "sim/kernel/abi.h"
#include "sim/machine.h"
#include "sim/schedule.h"
#include "sim/trace.h"

namespace rseqmc::harness {

const char* CrosscheckModeName(CrosscheckMode m) {
  switch (m) {
    case CrosscheckMode::kDeterministic: return "deterministic";
    case CrosscheckMode::kOutcomes: return "outcomes";
    case CrosscheckMode::kStress: return "stress";
  }
  return "?";
}

std::string KernelRelease() {
  utsname u{};
  if (uname(&u) != 0) return "unknown";
  return u.release;
}

namespace {

using Clock = std::chrono::steady_clock;

double Since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

// Returns the default decision everywhere except at boundary `at`, where it
// returns `event` (if valid there).
class InjectAtScheduler : public Scheduler {
 public:
  InjectAtScheduler(uint64_t at, Decision event) : at_(at), event_(event) {}
  void BeginExecution(const Machine&) override {
    applied_ = false;
    invalid_ = false;
    defaults_ahead = at_;
  }
  Decision Choose(const ChoiceView& v) override {
    if (!applied_ && v.machine().boundary() == at_) {
      applied_ = true;
      defaults_ahead = ~0ull >> 1;
      if (v.IsValid(event_)) return event_;
      invalid_ = true;
    }
    defaults_ahead = ~0ull >> 1;
    return Decision::Step(v.DefaultCpu());
  }
  bool invalid() const { return invalid_; }

 private:
  uint64_t at_;
  Decision event_;
  bool applied_ = false, invalid_ = false;
};

// Records, at every boundary of the default execution, the events that could
// be injected there (each CPU with a thread: preempt, migrate to each other
// allowed CPU, each declared signal, IPI).
class ProbeScheduler : public Scheduler {
 public:
  explicit ProbeScheduler(const Scenario& s) : s_(s) {}
  Decision Choose(const ChoiceView& v) override {
    const uint64_t b = v.machine().boundary();
    for (int c = 0; c < v.NumCpus(); ++c) {
      if (v.Running(c) < 0) continue;
      auto add = [&](Decision d) {
        if (v.IsValid(d)) candidates.emplace_back(b, d);
      };
      add(Decision::Preempt(c));
      for (int to = 0; to < v.NumCpus(); ++to) {
        if (to != c) add(Decision::Migrate(c, to));
      }
      for (const SignalSpec& sg : s_.signals) add(Decision::Signal(c, sg.signo));
      add(Decision::Ipi(c));
    }
    return Decision::Step(v.DefaultCpu());
  }
  std::vector<std::pair<uint64_t, Decision>> candidates;

 private:
  const Scenario& s_;
};

std::string SymbolElement(const Scenario& s, uint64_t addr) {
  for (const Symbol& sym : s.program.symbols) {
    if (addr < sym.address || addr >= sym.address + sym.size_bytes) continue;
    const uint64_t off = addr - sym.address;
    std::string name = sym.name;
    uint64_t in = off;
    if (sym.per_cpu) {
      name += "[" + std::to_string(off / sym.stride) + "]";
      in = off % sym.stride;
    }
    const uint64_t idx = in / static_cast<uint64_t>(sym.width);
    if (sym.count > 1) name += "[" + std::to_string(idx) + "]";
    return name;
  }
  std::ostringstream o;
  o << "0x" << std::hex << addr;
  return o.str();
}

std::string Describe(const Scenario& s, uint32_t pc) { return s.program.DescribeIndex(pc); }

// Does the program read its concurrency ID (`rseq_load mm_cid`)? Then the
// kernel's value is not the model's (kernel/README.md "mm_cid values").
bool ReadsMmCid(const Scenario& s) {
  for (const Instr& in : s.program.code) {
    if (in.op == Op::kRseqLoad && static_cast<RseqField>(in.aux) == RseqField::kMmCid) return true;
  }
  return false;
}

// Does kernel model m write struct rseq's mm_cid (6.3 and later)?
bool WritesMmCid(KernelModel m) { return AbiFor(m).HasNodeAndMmCid(); }

// CompareRuns' prefix for a program that reads mm_cid and took another path
// on the kernel: the kernel gave a thread another concurrency ID than the
// model (or changed it where the model did not), so a compare at start_ip went
// the other way. Not comparable, not a disagreement (kernel/README.md).
constexpr const char* kMmCidPath = "mm_cid path: ";

// The same observations in the same order, whatever their values.
bool SameNames(const std::vector<std::pair<uint32_t, int64_t>>& a, const std::vector<std::pair<uint32_t, int64_t>>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (a[i].first != b[i].first) return false;
  }
  return true;
}

// The simulator's executed instructions of thread t as the kernel run records
// them: all of them, or in original-bytes mode those of JIT code only (the
// original machine code keeps no IR trace).
std::vector<uint32_t> ExpectedPcs(const Scenario& s, const Plan& plan, const RealResult& real, size_t t) {
  if (!real.original_code) return plan.pcs[t];
  std::vector<uint32_t> out;
  for (uint32_t pc : plan.pcs[t]) {
    const int f = s.program.FunctionOf(pc);
    if (f < 0 || s.original.Find(static_cast<uint32_t>(f)) == nullptr) out.push_back(pc);
  }
  return out;
}

std::string SideBySide(const Scenario& s, const Plan& plan, const RealResult& real) {
  std::ostringstream o;
  for (size_t t = 0; t < plan.pcs.size() && t < real.threads.size(); ++t) {
    const std::vector<uint32_t> a = ExpectedPcs(s, plan, real, t);
    const auto& b = real.threads[t].pcs;
    size_t first = 0;
    while (first < a.size() && first < b.size() && a[first] == b[first]) ++first;
    if (first == a.size() && first == b.size()) {
      o << "  " << s.threads[t].name << ": same " << a.size() << " instructions\n";
      continue;
    }
    o << "  " << s.threads[t].name << ": instructions " << a.size() << " (simulator) vs " << b.size()
      << " (kernel); first difference at #" << first + 1 << "\n";
    o << "      # | simulator                                | kernel\n";
    const size_t from = first > 4 ? first - 4 : 0;
    for (size_t i = from; i < std::min(std::max(a.size(), b.size()), first + 5); ++i) {
      std::string l = i < a.size() ? Describe(s, a[i]) : "-";
      std::string r = i < b.size() ? Describe(s, b[i]) : "-";
      std::ostringstream line;
      line << "    " << std::setw(3) << i + 1 << " | " << std::left << std::setw(40) << l << " | " << r
           << (i == first ? "   <<" : "");
      o << line.str() << "\n";
    }
  }
  return o.str();
}

std::string DetailOf(const Scenario& s, const ExecutionResult& sim, const Plan& plan, const RealResult& real) {
  std::ostringstream o;
  o << "simulator timeline:\n" << FormatTimeline(s, sim);
  o << "kernel run (what the tracer did):\n";
  for (const std::string& l : real.log) o << "  " << l << "\n";
  if (!real.harness_error.empty()) o << "  harness: " << real.harness_error << "\n";
  if (!real.divergence.empty()) o << "  left the plan: " << real.divergence << "\n";
  o << "  verdict: " << VerdictName(real.verdict) << (real.message.empty() ? "" : " (" + real.message + ")") << "\n";
  const ExecutionResult k = AsExecutionResult(s, real);
  o << "kernel final symbols:\n";
  {
    std::istringstream in(FormatSymbols(s, k));
    for (std::string line; std::getline(in, line);) o << "  " << line << "\n";
  }
  for (size_t t = 0; t < k.threads.size(); ++t) {
    o << "  " << s.threads[t].name << ": "
      << (k.threads[t].exited ? "returned " + std::to_string(k.threads[t].ret) : std::string("did not return")) << ", "
      << k.threads[t].aborts << " aborts, last on cpu" << real.threads[t].final_cpu << "\n";
  }
  o << "executed instructions per thread, side by side:\n" << SideBySide(s, plan, real);
  return o.str();
}

void StampEnvironment(const Scenario& s, const CrosscheckOptions& o, CrosscheckReport& r) {
  r.scenario = s.name;
  r.mode = CrosscheckModeName(o.mode);
  r.kernel_release = KernelRelease();
  r.kernel_model = KernelModelName(o.kernel.model);
  r.rseq_size = __rseq_size > 0 ? __rseq_size : JitProgram::RseqLength();  // ours: 32 bytes
  r.rseq_registration = __rseq_size > 0 ? "glibc" : "own";
}

bool Stopped(const std::atomic<bool>* stop) { return stop && stop->load(); }

// The pc of the first user store of execution `r` (recorded with its trace)
// into the cpu_id_start or cpu_id field of a struct rseq area, or -1 if none
// (see the skip rule in Crosscheck).
int64_t StoresIntoRseqIds(const Scenario& s, const ExecutionResult& r) {
  const uint64_t areas = DescriptorAddress(s.program, 0) + kRseqCsBytes * s.program.descriptors.size();
  const uint64_t end = areas + kRseqAreaBytes * s.threads.size();
  for (const TraceEntry& e : r.trace) {
    if (e.kind != TraceKind::kStep || e.a == 0) continue;
    const auto addr = static_cast<uint64_t>(e.a);
    if (addr >= areas && addr < end && (addr - areas) % kRseqAreaBytes < kRseqOffRseqCs) return e.pc;
  }
  return -1;
}

// Whether the tracer's stops break the comparison of a scenario that stores
// into its cpu_id_start/cpu_id (StoresIntoRseqIds): each stop is a switch-out,
// after which a kernel of the compared ABI rewrites those fields unless it
// writes them only when the CPU changed (6.19; on the patched guest kernel
// kernel.rseq_ids_on_change=1, kernel/patches/0002). With one CPU, or one
// thread, every switch of the simulator is a switch-out too.
bool TracerStopsRewriteIds(const Scenario& s, const KernelVersion& kernel) {
  return s.num_cpus > 1 && s.threads.size() > 1 && !AbiFor(kernel.model).WritesIdsOnlyWhenChanged();
}

// Whether execution `r` ran a membarrier_rseq while its thread was the
// process's last live one, at a point where the kernel run still has the
// tracee's IPI helper thread (created when the plan injects IPIs, gone after
// the last one: Session::StopIpiHelper(), tracer.cc), which counts in
// mm_users: membarrier_private_expedited() takes its mm_users == 1 shortcut
// in the simulation and not on the kernel. (Returned scenario threads exit
// on the kernel too: Session::LetExit().) Conservatively, "before the last
// IPI entry of the trace", injected or not.
bool LoneMembarrierWhileTheIpiHelperLives(const Scenario& s, const ExecutionResult& r, const Plan& plan) {
  const bool helper = std::any_of(plan.actions.begin(), plan.actions.end(),
                                  [](const PlanAction& a) { return a.kind == PlanAction::Kind::kIpi; });
  if (!helper) return false;
  size_t last_ipi = 0;
  for (size_t i = 0; i < r.trace.size(); ++i) {
    if (r.trace[i].kind == TraceKind::kIpi) last_ipi = i;
  }
  size_t live = s.threads.size();
  for (size_t i = 0; i < last_ipi; ++i) {
    const TraceEntry& e = r.trace[i];
    if (e.kind == TraceKind::kExit) --live;
    if (e.kind == TraceKind::kStep && live == 1 && s.program.code[e.pc].op == Op::kMembarrierRseq) return true;
  }
  return false;
}

// Interrupted, or the harness found it cannot run here (rep.skipped set).
bool Halted(const std::atomic<bool>* stop, const CrosscheckReport& rep) {
  return Stopped(stop) || !rep.skipped.empty();
}

// A run the harness could not complete (timeout, ptrace failure, a harness
// limit) is no evidence about the model: it counts in harness_errors, never
// as an agreement or a disagreement. A tracee that could not be traced at
// all means this machine cannot run the harness: rep.skipped says why, and
// the caller stops. Returns true when `real` is no result.
bool NoteHarnessTrouble(const RealResult& real, const std::string& token, CrosscheckReport& rep) {
  if (!real.unavailable.empty()) {
    rep.skipped = real.unavailable + "; deterministic and outcomes modes need ptrace, --mode stress does not";
    return true;
  }
  if (real.end != RunEnd::kHarnessError) return false;
  ++rep.harness_errors;
  if (rep.harness_error_details.size() < 5) {
    rep.harness_error_details.push_back(
        {token, real.harness_error, ""});
  }
  return true;
}

// ---- deterministic ----

// Real nanosleeps one forced schedule may make. A sleep on the kernel waits
// for its timer interrupt (PR_SET_TIMERSLACK 1 ns in the tracee): measured
// 73 us per `sleep 1` on this project's VM host (kernel 6.18), so 10,000 stay
// under 1 s per run. A sleep loop that reaches the simulator's step limit
// (50,000 sleeps at 100,000 steps) is not run: it took 8.5 s per schedule.
constexpr uint64_t kMaxRealSleeps = 10000;

void RunDeterministic(const Scenario& s, const CrosscheckOptions& o, const std::atomic<bool>* stop,
                      CrosscheckReport& rep) {
  RunOptions ro;
  ro.kernel = o.kernel;
  ro.fault = o.fault;
  Simulator sim(s, ro);
  // The kernel-side IR trace holds every instruction the simulator may run,
  // and so many observations (each is one instruction) fit too.
  const auto slots = static_cast<uint32_t>(std::min<uint64_t>(ro.max_steps + 64, 1u << 24));
  JitOptions jo;
  jo.observation_slots = std::max(jo.observation_slots, slots);
  jo.original_code = o.original_bytes;
  JitProgram jit(s, jo, slots);
  TracerOptions to;
  to.timeout_s = o.run_timeout_s;
  const auto t0 = Clock::now();
  uint64_t real_runs = 0;

  auto compare_one = [&](Scheduler& sched) {
    Plan plan;
    ExecutionResult r = SimulateForPlan(sim, sched, &plan);
    if (LoneMembarrierWhileTheIpiHelperLives(s, r, plan) || (TracerStopsRewriteIds(s, o.kernel) && StoresIntoRseqIds(s, r) >= 0)) {
      ++rep.not_comparable;
      return;
    }
    if (r.verdict == Verdict::kStepLimit) {
      // The simulator gave up while the threads still made progress: no
      // verdict to compare a kernel run with. (A livelock or a deadlock is
      // compared: the kernel run follows the plan to its end, where the
      // tracer checks the threads spin where the simulator left them or
      // sleep in futex_wait; Plan::open_end.)
      ++rep.not_comparable;
      return;
    }
    if (const uint64_t sleeps = RealSleeps(s, plan); sleeps > kMaxRealSleeps) {
      if (rep.not_forceable++ == 0) {
        rep.not_forceable_reason =
            EncodeSchedule(s, r.schedule) + ": it makes " + std::to_string(sleeps) + " real nanosleeps (at most " +
            std::to_string(kMaxRealSleeps) + " per run: each waits for a timer interrupt, ~70 us on a VM, so " +
            "this run would take seconds); shorten the sleep loop, e.g. with a -D constant";
      }
      return;
    }
    if (o.original_bytes) {
      std::vector<OriginalLeg> legs;
      const std::string why = OriginalLegs(jit, plan, &legs);
      if (!why.empty()) {
        if (rep.not_forceable++ == 0) rep.not_forceable_reason = EncodeSchedule(s, r.schedule) + ": " + why;
        return;
      }
    }
    RealResult real = RunPlan(jit, plan, to);
    if (Stopped(stop)) return;  // interrupted: the kernel run was killed, it is no result
    ++real_runs;
    if (NoteHarnessTrouble(real, EncodeSchedule(s, r.schedule), rep)) return;
    std::string diff = CompareRuns(s, r, plan, real);
    if (diff.starts_with(kMmCidPath)) {
      ++rep.not_comparable;
      return;
    }
    ++rep.compared;
    if (diff.empty()) {
      ++rep.agreements;
      if (r.verdict != Verdict::kPass) ++rep.failures_agreed;
      if (r.verdict != Verdict::kPass && r.verdict == s.ExpectedOn(o.kernel.model)) ++rep.declared_failures_agreed;
      return;
    }
    // Re-run (up to kConfirmRuns times): a preemption by another process is
    // an event the schedule does not have, and under load it can hit the
    // same section twice in a row. A wrong model differs on every run; a
    // difference that goes away once is reported as flaky, not counted as
    // an agreement.
    constexpr int kConfirmRuns = 3;
    for (int attempt = 0; attempt < kConfirmRuns; ++attempt) {
      RealResult again = RunPlan(jit, plan, to);
      if (Stopped(stop)) {
        --rep.compared;
        return;
      }
      ++real_runs;
      if (NoteHarnessTrouble(again, EncodeSchedule(s, r.schedule), rep)) {
        --rep.compared;  // the difference could not be confirmed or refuted
        return;
      }
      if (CompareRuns(s, r, plan, again).empty()) {
        ++rep.flaky;
        if (rep.flaky_details.size() < 5) rep.flaky_details.push_back(EncodeSchedule(s, r.schedule) + ": " + diff);
        return;
      }
    }
    ++rep.disagreements;
    if (rep.details.size() < o.max_details) {
      rep.details.push_back({EncodeSchedule(s, r.schedule), diff, DetailOf(s, r, plan, real)});
    } else if (rep.details.size() < 20) {
      rep.details.push_back({EncodeSchedule(s, r.schedule), diff, ""});
    }
  };

  if (!o.schedule.empty()) {
    ReplayScheduler one(DecodeSchedule(s, o.schedule));
    compare_one(one);
    rep.interrupted = Stopped(stop);
    rep.runs_per_s = real_runs / std::max(Since(t0), 1e-9);
    return;
  }
  // The default execution and every single-event schedule.
  {
    ReplayScheduler base(Schedule{});
    compare_one(base);
  }
  if (o.single_events && !Halted(stop, rep)) {
    const SingleEventSample sample = SampleSingleEvents(s, o);
    rep.single_events_total = sample.total;
    rep.single_events_run = sample.picked.size();
    for (const SingleEvent& e : sample.picked) {
      if (Halted(stop, rep)) break;
      InjectAtScheduler inj(e.boundary, e.event);
      compare_one(inj);
    }
  }
  // Seeded random multi-event schedules.
  RandomOptions ropt;
  ropt.max_events = std::max<uint32_t>(o.max_events, 1);
  ropt.p_preempt = 0.03;
  ropt.p_migrate = 0.02;
  ropt.p_signal = 0.02;
  ropt.p_ipi = 0.01;
  RandomScheduler rnd(o.seed, ropt);
  for (uint64_t i = 0; i < o.samples && !Halted(stop, rep); ++i) compare_one(rnd);
  rep.interrupted = Stopped(stop);
  const double el = Since(t0);
  rep.runs_per_s = el > 0 ? static_cast<double>(real_runs) / el : 0;
}

// ---- outcomes ----

void RunOutcomes(const Scenario& s, const CrosscheckOptions& o, const std::atomic<bool>* stop,
                 CrosscheckReport& rep) {
  if (!o.reachable) {
    throw std::invalid_argument("outcomes mode needs the checker's reachable outcome set (CrosscheckOptions::reachable)");
  }
  const ReachableOutcomes& er = *o.reachable;
  rep.reachable = er.outcomes.size();
  rep.reachable_complete = er.complete;
  rep.reachable_incomplete_reason = o.reachable_incomplete_reason;
  // Per-thread instruction counts of the default execution (where random
  // events may fall).
  std::vector<uint32_t> len(s.threads.size(), 1);
  {
    Plan plan;
    RunOptions ro;
    ro.kernel = o.kernel;
    Simulator sim(s, ro);
    ReplayScheduler base(Schedule{});
    SimulateForPlan(sim, base, &plan);
    for (size_t t = 0; t < s.threads.size(); ++t) len[t] = std::max<uint32_t>(1, static_cast<uint32_t>(plan.pcs[t].size()));
  }
  JitProgram jit(s, JitOptions{});
  TracerOptions to;
  to.timeout_s = o.run_timeout_s;
  std::mt19937_64 rng(o.seed);
  std::set<Outcome> seen;
  std::vector<int> handled;
  for (const SignalSpec& sg : s.signals) handled.push_back(sg.signo);
  const bool sets_affinity = std::any_of(s.program.code.begin(), s.program.code.end(),
                                         [](const Instr& in) { return in.op == Op::kSchedSetaffinity; });
  const auto t0 = Clock::now();
  uint64_t runs = 0;
  for (uint64_t i = 0; i < o.samples && !Halted(stop, rep); ++i) {
    std::vector<ThreadEvent> ev;
    const uint32_t k = static_cast<uint32_t>(rng() % (o.max_events + 1));
    for (uint32_t e = 0; e < k; ++e) {
      ThreadEvent te;
      te.thread = static_cast<int>(rng() % s.threads.size());
      te.step = static_cast<uint32_t>(rng() % len[te.thread]);
      const int kind = static_cast<int>(rng() % 4);
      // Migrations only within the thread's declared affinity, and none when
      // the program changes affinities itself (the allowed set would then
      // depend on when the event falls).
      const uint64_t allowed = s.threads[te.thread].affinity & ((s.num_cpus >= 64 ? 0 : 1ull << s.num_cpus) - 1);
      if (kind == 1 && s.num_cpus > 1 && !sets_affinity && std::popcount(allowed) > 0) {
        te.kind = PlanAction::Kind::kMigrate;
        int k = static_cast<int>(rng() % static_cast<uint64_t>(std::popcount(allowed)));
        uint64_t a = allowed;
        while (k-- > 0) a &= a - 1;
        te.arg = std::countr_zero(a);
      } else if (kind == 2 && !handled.empty()) {
        te.kind = PlanAction::Kind::kSignal;
        te.arg = handled[rng() % handled.size()];
      } else if (kind == 3) {
        te.kind = PlanAction::Kind::kIpi;
        te.arg = static_cast<int>(s.threads[te.thread].cpu);  // the thread's CPU at start
      } else {
        te.kind = PlanAction::Kind::kPreempt;
      }
      ev.push_back(te);
    }
    std::stable_sort(ev.begin(), ev.end(), [](const ThreadEvent& a, const ThreadEvent& b) {
      return a.thread != b.thread ? a.thread < b.thread : a.step < b.step;
    });
    // An IPI names the CPU the thread is on when it is hit: resolve it from
    // the thread's earlier migrations.
    for (size_t e = 0; e < ev.size(); ++e) {
      if (ev[e].kind != PlanAction::Kind::kIpi) continue;
      int cpu = static_cast<int>(s.threads[ev[e].thread].cpu);
      for (size_t f = 0; f < e; ++f) {
        if (ev[f].thread == ev[e].thread && ev[f].kind == PlanAction::Kind::kMigrate) cpu = ev[f].arg;
      }
      ev[e].arg = cpu;
    }
    RealResult real = RunConcurrent(jit, ev, to);
    if (Stopped(stop)) break;  // interrupted: the killed run is no result
    ++runs;
    if (NoteHarnessTrouble(real, "", rep)) continue;
    ++rep.compared;
    Outcome out = OutcomeOf(s, AsExecutionResult(s, real));
    if (er.outcomes.count(out)) {
      ++rep.agreements;
      seen.insert(out);
      continue;
    }
    if (!er.complete) {
      ++rep.outside_incomplete;  // perhaps only unexplored: no disagreement
      continue;
    }
    ++rep.disagreements;
    if (rep.details.size() < 20) {
      std::ostringstream d;
      ExecutionResult e = AsExecutionResult(s, real);
      d << "kernel outcome outside the checker's reachable set (events<=" << o.max_events << ", "
        << er.outcomes.size() << " outcomes" << (er.complete ? "" : ", exploration incomplete") << "): verdict "
        << VerdictName(e.verdict);
      std::ostringstream det;
      det << "injected events:";
      for (const ThreadEvent& te : ev) {
        det << " " << s.threads[te.thread].name << "@" << te.step << ":"
            << (te.kind == PlanAction::Kind::kPreempt  ? "preempt"
                : te.kind == PlanAction::Kind::kMigrate ? "migrate->cpu" + std::to_string(te.arg)
                : te.kind == PlanAction::Kind::kSignal  ? "signal " + SignalName(te.arg)
                                                        : "ipi cpu" + std::to_string(te.arg));
      }
      det << "\nkernel final state:\n" << FormatSymbols(s, e);
      for (size_t t = 0; t < e.threads.size(); ++t) {
        det << "  " << s.threads[t].name << ": " << (e.threads[t].exited ? "returned " + std::to_string(e.threads[t].ret) : "did not return")
            << ", " << e.threads[t].aborts << " aborts";
        // The observations are part of the outcome: show them.
        for (size_t k = 0; k < e.threads[t].observed.size(); ++k) {
          const auto& [id, value] = e.threads[t].observed[k];
          det << (k == 0 ? ", observed " : " ") << (id < s.program.strings.size() ? s.program.strings[id] : "?") << "="
              << value;
        }
        det << "\n";
      }
      rep.details.push_back({"", d.str(), det.str()});
    }
  }
  rep.seen = seen.size();
  rep.coverage = rep.reachable ? static_cast<double>(rep.seen) / static_cast<double>(rep.reachable) : 0;
  rep.interrupted = Stopped(stop);
  const double el = Since(t0);
  rep.runs_per_s = el > 0 ? static_cast<double>(runs) / el : 0;
}

std::string Num(double v, int prec) {
  std::ostringstream o;
  o << std::fixed << std::setprecision(prec) << v;
  return o.str();
}

}  // namespace

std::string CompareRuns(const Scenario& s, const ExecutionResult& sim, const Plan& plan, const RealResult& real) {
  // `rseq_load mm_cid`, or a plain load of the word (through rseq_addr, F9b).
  const bool reads_mm_cid = ReadsMmCid(s) || sim.mm_cid_read;
  if (real.end == RunEnd::kHarnessError) return "harness: " + real.harness_error;
  if (!real.divergence.empty()) {
    return std::string(reads_mm_cid ? kMmCidPath : "") + "control flow: " + real.divergence;
  }
  const ExecutionResult e = AsExecutionResult(s, real);
  if (e.verdict != sim.verdict) {
    return std::string("verdict: simulator ") + VerdictName(sim.verdict) + (sim.message.empty() ? "" : " (" + sim.message + ")") +
           ", kernel " + VerdictName(e.verdict) + (e.message.empty() ? "" : " (" + e.message + ")");
  }
  for (size_t t = 0; t < plan.pcs.size() && t < real.threads.size(); ++t) {
    std::vector<uint32_t> pcs = real.threads[t].pcs;
    // An instruction that faulted started on the kernel (its block's
    // prologue ran) but is not a step of the simulator.
    const std::vector<uint32_t> expected = ExpectedPcs(s, plan, real, t);
    if (static_cast<int>(t) == plan.kill_thread && pcs.size() == expected.size() + 1 &&
        static_cast<int64_t>(pcs.back()) == plan.kill_pc) {
      pcs.pop_back();
    }
    if (expected != pcs) {
      return std::string(reads_mm_cid ? kMmCidPath : "") + "instructions of " + s.threads[t].name + ": " + std::to_string(expected.size()) +
             " in the simulator, " + std::to_string(real.threads[t].pcs.size()) + " on the kernel" +
             (real.original_code ? " (outside the original code)" : "");
    }
  }
  // The kernel's concurrency IDs depend on real timing (6.4-6.18 per-CPU
  // IDs), and with them which slot a thread uses and whether an ID changed
  // between its read and the compare at start_ip: compare what the model
  // predicts - the verdict (the scenario's properties), returns, final CPUs,
  // the names of the observations. Data and abort counts are not compared.
  uint64_t end = 0;
  for (const Symbol& sym : s.program.symbols) end = std::max(end, sym.address + sym.size_bytes - kDataBase);
  if (reads_mm_cid) end = 0;
  for (uint64_t i = 0; i < end && i < real.memory.size() && i < sim.memory.size(); ++i) {
    if (real.memory[i] != sim.memory[i]) {
      const uint64_t a = (kDataBase + i) & ~uint64_t{7};
      return "memory " + SymbolElement(s, kDataBase + i) + ": simulator " +
             std::to_string(static_cast<int64_t>(sim.Read(a, 8))) + ", kernel " +
             std::to_string(static_cast<int64_t>(e.Read(a, 8)));
    }
  }
  for (size_t t = 0; t < sim.threads.size() && t < e.threads.size(); ++t) {
    const ThreadOutcome& a = sim.threads[t];
    const ThreadOutcome& b = e.threads[t];
    const std::string n = s.threads[t].name;
    if (a.exited != b.exited) return n + (a.exited ? " returned in the simulator only" : " returned on the kernel only");
    if (a.exited && a.ret != b.ret) {
      return "return value of " + n + ": simulator " + std::to_string(a.ret) + ", kernel " + std::to_string(b.ret);
    }
    if (a.aborts != b.aborts && !reads_mm_cid) {
      return "aborts of " + n + ": simulator " + std::to_string(a.aborts) + ", kernel " + std::to_string(b.aborts);
    }
    if (a.observed != b.observed && !(reads_mm_cid && SameNames(a.observed, b.observed))) {
      std::string d = "observations of " + n + ": simulator";
      auto list = [&](const std::vector<std::pair<uint32_t, int64_t>>& v) {
        std::string out;
        for (const auto& [id, val] : v) {
          out += " " + (id < s.program.strings.size() ? s.program.strings[id] : std::to_string(id)) + "=" +
                 std::to_string(val);
        }
        return out.empty() ? std::string(" (none)") : out;
      };
      return d + list(a.observed) + ", kernel" + list(b.observed);
    }
    if (a.exited && a.final_cpu != b.final_cpu) {
      return "final CPU of " + n + ": simulator " + std::to_string(a.final_cpu) + ", kernel " +
             std::to_string(b.final_cpu);
    }
  }
  return "";
}

CrosscheckReport Crosscheck(const Scenario& s, const CrosscheckOptions& o, const std::atomic<bool>* stop) {
  CrosscheckReport rep;
  StampEnvironment(s, o, rep);
  if (o.original_bytes) {
    if (o.mode != CrosscheckMode::kDeterministic) {
      throw std::invalid_argument("original bytes run in deterministic mode only");
    }
    rep.mode = "original";
    rep.skipped = OriginalCodeUnavailableReason(s);
    if (!rep.skipped.empty()) return rep;
  }
  const auto t0 = Clock::now();
  for (const ThreadSpec& ts : s.threads) {
    if (ts.entry < 0) {
      rep.skipped = "thread " + ts.name + " has a C++ body; only IR threads run on the kernel";
      return rep;
    }
  }
  if (const std::optional<AbiMismatch> no = AbiFor(o.kernel.model).NotApplicable(s)) {
    // A scenario of another ABI (an RFC program under 6.x, a struct rseq
    // one under rfc2015): the simulator cannot run it either.
    rep.skipped = std::string("not a program of the ") + KernelModelName(o.kernel.model) + " ABI: " + no->message;
    return rep;
  }
  // `clock` and `work` exist only in simulated time (rseqmc simulate,
  // sim/timed_scheduler.h); the JIT has no kernel counterpart for them. Nor
  // for the preempt-lock scheme (sim/kernel/preempt_lock.h): only our patched
  // guest kernel has it (kernel/patches/0005), and every ptrace stop of the
  // harness is a switch-out, which would signal a flagged thread at each pause
  // the simulator does not make (not handled yet).
  for (uint32_t i = 0; i < s.program.code.size(); ++i) {
    const Op op = s.program.code[i].op;
    if (op == Op::kPreemptLock || op == Op::kSigctxRestart) {
      rep.skipped = std::string("the scenario uses `") + OpName(op) + "` (at " + s.program.DescribeIndex(i) +
                    "), the preempt-lock scheme of the 2015 RFC thread (needs kernel support: only the patched guest "
                    "kernel has it, kernel/patches/0005, and the harness does not drive it yet; "
                    "sim/kernel/preempt_lock.h)";
      return rep;
    }
    if (op == Op::kClock || op == Op::kWork) {
      rep.skipped = std::string("the scenario uses `") + OpName(op) + "` (at " + s.program.DescribeIndex(i) +
                    "), a simulated-time operation of `rseqmc simulate` that has no real-kernel counterpart";
      return rep;
    }
  }
  rep.skipped = HarnessUnavailableReason(s, /*need_ptrace=*/o.mode != CrosscheckMode::kStress);
  if (rep.skipped.empty() && o.mode != CrosscheckMode::kStress) {
    // The tracer takes every SIGTRAP for one of its own stops (int3).
    if (s.FindSignal(SIGTRAP) != nullptr) {
      rep.skipped = "the scenario handles SIGTRAP, which the harness's own stops (int3) raise";
    }
    // A program's tgkill names its signal in the instruction (never in a
    // register), so every SIGTRAP it can send is found here.
    for (uint32_t i = 0; i < s.program.code.size() && rep.skipped.empty(); ++i) {
      const Instr& in = s.program.code[i];
      if (in.op == Op::kTgkill && in.aux == SIGTRAP) {
        rep.skipped = "the scenario sends SIGTRAP (tgkill at " + s.program.DescribeIndex(i) +
                      "), which the tracer cannot tell from its own stops (int3)";
      }
    }
    // Every stop of the tracer is a preemption, and the tracer stops a thread
    // whenever another CPU's thread is to run; on return to user space the
    // kernel then rewrites cpu_id_start and cpu_id (rseq_handle_notify_resume
    // -> rseq_update_cpu_node_id, kernel/rseq.c, 4.18-6.18). The simulator
    // interleaves CPUs without preempting anyone, so a scenario that stores
    // into those fields of its own struct rseq sees rewrites there that the
    // schedule does not have (tcmalloc_cached_slabs). Reading them through
    // rseq_addr is fine (the imported librseq code). With one CPU every
    // switch is a preemption on both sides. Decided on the default
    // execution; another execution that stores there is not compared
    // (StoresIntoRseqIds in RunDeterministic). Under an ABI that writes the
    // IDs only when the CPU changed (6.19) a stop rewrites nothing, and the
    // scenario is compared (TracerStopsRewriteIds).
    if (rep.skipped.empty() && TracerStopsRewriteIds(s, o.kernel)) {
      RunOptions ro;
      ro.kernel = o.kernel;
      Simulator sim(s, ro);
      ReplayScheduler base(Schedule{});
      Plan unused;
      const ExecutionResult r = SimulateForPlan(sim, base, &unused);
      const int64_t at = StoresIntoRseqIds(s, r);
      if (at >= 0) {
        rep.skipped = "the scenario takes its struct rseq's address and stores into its cpu_id_start/cpu_id (at " +
                      s.program.DescribeIndex(static_cast<uint32_t>(at)) +
                      ") and interleaves CPUs: each tracer stop is a preemption after which the kernel rewrites "
                      "cpu_id_start and cpu_id, which a CPU interleaving in the simulator does not";
      }
    }
  }
  if (!rep.skipped.empty()) return rep;
  // mm_cid exists from 6.3 on. The patched 6.1 guest offers 6.19's ID policy
  // (patch 0002) but no mm_cid: a program that reads it is compared only
  // where the running kernel and the model both write it, or both do not.
  if (ReadsMmCid(s) && WritesMmCid(o.kernel.model) && !WritesMmCid(DefaultKernelVersion().model)) {
    rep.skipped = std::string("the scenario reads mm_cid, which the ") + KernelModelName(o.kernel.model) +
                  " model writes and this " + KernelRelease() + " kernel does not have (mm_cid: 6.3 and later)";
    return rep;
  }
  {
    const KernelVersion running = DefaultKernelVersion();
    if (!RunningKernelOffers(o.kernel.model)) {
      rep.note = std::string("comparing the ") + KernelModelName(o.kernel.model) + " model with a " +
                 KernelRelease() + " kernel (" + KernelModelName(running.model) +
                 " semantics): disagreements are expected; --kernel defaults to the running kernel";
    }
  }
  for (const Instr& in : s.program.code) {
    if (!rep.note.empty()) break;
    if (in.op == Op::kRseqLoad && static_cast<RseqField>(in.aux) == RseqField::kMmCid) {
      rep.note = "reads mm_cid: the model follows 6.13-6.18's per-CPU ids but not their 100 ms compaction; "
                 "compared: verdict (properties), returns, final CPUs, observation names, and the path where "
                 "the kernel took the simulated one (other paths: not comparable; kernel/README.md)";
      break;
    }
  }
  switch (o.mode) {
    case CrosscheckMode::kDeterministic:
      RunDeterministic(s, o, stop, rep);
      break;
    case CrosscheckMode::kOutcomes:
      RunOutcomes(s, o, stop, rep);
      break;
    case CrosscheckMode::kStress: {
      rep.expected = VerdictName(s.ExpectedOn(o.kernel.model));
      rep.has_ops = s.FindConstant("OPS") >= 0;
      rep.stress = RunStress(s, o.stress);
      if (Stopped(stop)) {
        rep.interrupted = true;
        break;
      }
      if (!rep.stress.completed) {
        // Timed out (or killed from outside): the run says nothing about
        // the model, as in the other modes.
        rep.harness_errors = 1;
        rep.harness_error_details.push_back({"", "stress run incomplete: " + rep.stress.message, ""});
        rep.runs_per_s = 0;
        break;
      }
      rep.compared = 1;
      const bool as_expected = rep.stress.verdict == s.ExpectedOn(o.kernel.model);
      if (as_expected) {
        rep.agreements = 1;
      } else if (rep.stress.verdict == Verdict::kPass) {
        // A planted bug the storms did not hit: not a disagreement with the
        // model (its counterexample is forced in deterministic mode), but said.
        rep.not_reproduced = true;
      } else {
        rep.disagreements = 1;
        rep.details.push_back({"", std::string("stress verdict ") + VerdictName(rep.stress.verdict) + ", expected " +
                                       VerdictName(s.ExpectedOn(o.kernel.model)) +
                                       (rep.stress.message.empty() ? "" : ": " + rep.stress.message),
                               ""});
      }
      rep.runs_per_s = 0;  // one run; its rate is the stress figures' ops/s
      break;
    }
  }
  rep.elapsed_s = Since(t0);
  return rep;
}

bool ComparedNothing(const CrosscheckReport& r) {
  return r.skipped.empty() && !r.interrupted && r.compared == 0;
}

std::string FormatReportLine(const CrosscheckReport& r) {
  std::ostringstream o;
  o << std::left << std::setw(28) << r.scenario << " " << std::setw(13) << r.mode;
  if (!r.skipped.empty()) {
    o << " skipped: " << r.skipped;
    return o.str();
  }
  if (r.mode == "stress") {
    if (r.interrupted) {
      o << " [interrupted]";
      return o.str();
    }
    const StressReport& st = r.stress;
    if (r.harness_errors) {
      o << " harness error (not compared): " << (r.harness_error_details.empty() ? "" : r.harness_error_details[0].summary)
        << ", " << Num(r.elapsed_s, 2) << " s";
      return o.str();
    }
    o << " " << VerdictName(st.verdict)
      << (r.disagreements     ? " (NOT as expected)"
          : r.not_reproduced ? (r.has_ops ? " (the planted bug did not show: try more --ops)"
                                          : " (the planted bug did not show; the scenario has no OPS constant)")
                             : " (as expected)")
      << ", "
      << st.threads << " threads, " << st.operations << " ops, " << Num(st.ops_per_s / 1e6, 2) << " M ops/s, "
      << st.aborts << " aborts, " << st.signals_sent << " signals, " << st.affinity_changes << " affinity changes, "
      << Num(r.elapsed_s, 2) << " s";
    return o.str();
  }
  o << " compared " << r.compared << ", agree " << r.agreements;
  if (r.failures_agreed) {
    o << " (" << r.failures_agreed << " failing on both, " << r.declared_failures_agreed << " with the declared verdict)";
  }
  o << ", disagree " << r.disagreements;
  if (r.flaky) o << ", flaky " << r.flaky << " (differed once, agreed on re-run)";
  if (r.harness_errors) o << ", harness errors " << r.harness_errors << " (runs not completed, not compared)";
  if (r.not_comparable) {
    o << ", " << r.not_comparable
      << " not compared (simulator step limit with progress, or a state the harness's process cannot reach, or a path the kernel's mm_cid chose)";
  }
  if (r.not_forceable) {
    o << ", " << r.not_forceable << " not run (first: " << r.not_forceable_reason << ")";
  }
  if (r.single_events_total > r.single_events_run) {
    o << ", single events " << r.single_events_run << " of " << r.single_events_total << " (sampled)";
  }
  if (r.coverage >= 0) o << ", coverage " << r.seen << "/" << r.reachable << " = " << Num(100 * r.coverage, 1) << "%";
  if (r.coverage >= 0 && !r.reachable_complete) {
    o << " of an INCOMPLETE reachable set ("
      << (r.reachable_incomplete_reason.empty() ? "exploration stopped" : r.reachable_incomplete_reason) << "; "
      << r.outside_incomplete << " kernel outcomes outside it, not disagreements: they may only be unexplored)";
  }
  o << ", " << Num(r.elapsed_s, 2) << " s (" << Num(r.runs_per_s, 0) << " kernel runs/s)";
  if (r.interrupted) o << " [interrupted]";
  if (ComparedNothing(r)) o << "\n  NOTHING COMPARED: no kernel run was checked against the simulator (not agreement)";
  if (!r.note.empty()) o << "\n  note: " << r.note;
  return o.str();
}

std::string FormatReportJson(const CrosscheckReport& r) {
  std::ostringstream o;
  o << "{\"scenario\":" << JsonQuote(r.scenario) << ",\"mode\":" << JsonQuote(r.mode)
    << ",\"kernel_release\":" << JsonQuote(r.kernel_release) << ",\"kernel_model\":" << JsonQuote(r.kernel_model)
    << ",\"rseq_size\":" << r.rseq_size << ",\"rseq_registration\":" << JsonQuote(r.rseq_registration) << ",\"compared\":" << r.compared << ",\"agreements\":" << r.agreements
    << ",\"failures_agreed\":" << r.failures_agreed << ",\"declared_failures_agreed\":" << r.declared_failures_agreed
    << ",\"disagreements\":" << r.disagreements << ",\"flaky\":" << r.flaky
    << ",\"harness_errors\":" << r.harness_errors
    << ",\"nothing_compared\":" << (ComparedNothing(r) ? "true" : "false")
    << ",\"not_comparable\":" << r.not_comparable << ",\"not_forceable\":" << r.not_forceable
    << ",\"not_forceable_first\":" << (r.not_forceable_reason.empty() ? "null" : JsonQuote(r.not_forceable_reason)) << ",\"single_events\":" << r.single_events_run
    << ",\"single_events_total\":" << r.single_events_total << ",\"coverage\":";
  if (r.coverage >= 0) {
    o << Num(r.coverage, 4);
  } else {
    o << "null";
  }
  o << ",\"reachable\":" << r.reachable << ",\"reachable_complete\":" << (r.reachable_complete ? "true" : "false")
    << ",\"outside_incomplete\":" << r.outside_incomplete << ",\"seen\":" << r.seen << ",\"elapsed_s\":" << Num(r.elapsed_s, 3)
    << ",\"runs_per_s\":" << Num(r.runs_per_s, 1) << ",\"interrupted\":" << (r.interrupted ? "true" : "false")
    << ",\"skipped\":" << (r.skipped.empty() ? "null" : JsonQuote(r.skipped))
    << ",\"note\":" << (r.note.empty() ? "null" : JsonQuote(r.note));
  if (r.mode == "stress") {
    const StressReport& st = r.stress;
    o << ",\"stress\":{\"verdict\":" << JsonQuote(VerdictName(st.verdict))
      << ",\"expected\":" << JsonQuote(r.expected) << ",\"not_reproduced\":" << (r.not_reproduced ? "true" : "false")
      << ",\"threads\":" << st.threads
      << ",\"operations\":" << st.operations << ",\"ops_per_s\":" << Num(st.ops_per_s, 0) << ",\"aborts\":" << st.aborts
      << ",\"signals_sent\":" << st.signals_sent << ",\"affinity_changes\":" << st.affinity_changes
      << ",\"message\":" << JsonQuote(st.message) << "}";
  }
  auto list = [&o](const char* key, const std::vector<Disagreement>& v) {
    o << ",\"" << key << "\":[";
    for (size_t i = 0; i < v.size(); ++i) {
      if (i) o << ",";
      o << "{\"token\":" << JsonQuote(v[i].token) << ",\"summary\":" << JsonQuote(v[i].summary) << "}";
    }
    o << "]";
  };
  list("details", r.details);
  list("harness_error_details", r.harness_error_details);
  o << "}";
  return o.str();
}

SingleEventSample SampleSingleEvents(const Scenario& s, const CrosscheckOptions& o) {
  RunOptions ro;
  ro.kernel = o.kernel;
  ro.fault = o.fault;
  Simulator sim(s, ro);
  ProbeScheduler probe(s);
  ExecutionResult tmp;
  sim.RunInto(probe, tmp);
  // Long executions (loops, spinning) have too many boundaries to force
  // them all: a seeded sample, said in the report.
  std::vector<size_t> pick(probe.candidates.size());
  for (size_t i = 0; i < pick.size(); ++i) pick[i] = i;
  if (o.max_single_events > 0 && pick.size() > o.max_single_events) {
    std::mt19937_64 rng(o.seed);
    std::shuffle(pick.begin(), pick.end(), rng);
    pick.resize(o.max_single_events);
    std::sort(pick.begin(), pick.end());
  }
  SingleEventSample out;
  out.total = probe.candidates.size();
  for (size_t i : pick) out.picked.push_back({probe.candidates[i].first, probe.candidates[i].second});
  return out;
}

std::unique_ptr<Scheduler> SingleEventScheduler(const SingleEvent& e) {
  return std::make_unique<InjectAtScheduler>(e.boundary, e.event);
}

}  // namespace rseqmc::harness
