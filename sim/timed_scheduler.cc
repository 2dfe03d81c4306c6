#include "sim/timed_scheduler.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>

#include "sim/diag.h"
#include "sim/machine.h"
#include "sim/simulator.h"

namespace rseqmc {

double TimedStats::IdleFraction() const {
  if (window_ns == 0 || busy_ns.empty()) return 0;
  double busy = 0;
  for (double b : busy_ns) busy += b;
  const double total = static_cast<double>(window_ns) * static_cast<double>(busy_ns.size());
  return std::clamp(1.0 - busy / total, 0.0, 1.0);
}

TimedScheduler::TimedScheduler(const CostModel& cost, uint64_t seed, std::optional<uint64_t> window_ns)
    : cost_(cost), seed_(seed), window_(window_ns) {}

void TimedScheduler::BeginExecution(const Machine& m) {
  // Called before the machine's Reset: sizes come from the scenario.
  m_ = &m;
  const int n = static_cast<int>(m.scenario().num_cpus);
  const size_t threads = m.scenario().threads.size();
  clock_.assign(n, 0.0);
  next_tick_.resize(n);
  // The tick phases: std::mt19937_64's sequence is fixed by the standard.
  std::mt19937_64 rng(seed_);
  const uint64_t tick = static_cast<uint64_t>(std::max(1.0, cost_.tick_ns));
  for (int c = 0; c < n; ++c) next_tick_[c] = static_cast<double>(rng() % tick);
  slice_start_.assign(n, 0.0);
  seen_running_.assign(n, -1);
  last_cpu_.assign(threads, -1);
  slept_.assign(threads, 0);
  ready_.assign(threads, 0.0);
  gvt_ = 0;
  pending_ = {};
  lines_.clear();
  stats_ = {};
  stats_.busy_ns.assign(n, 0.0);
}

// A CPU clock past KTIME_MAX (2^63-1 ns: `work` of nearly 2^63 ns) reads as
// KTIME_MAX, as the kernel's ktime_t saturates (ktime_add_safe()), instead
// of a value no int64 holds (review finding F6; `sleep` saturates its
// deadline the same way, Machine::Sleep).
uint64_t TimedScheduler::NowNs(int cpu) const {
  constexpr double kKtimeMax = 9223372036854775807.0;
  return clock_[cpu] >= kKtimeMax ? static_cast<uint64_t>(INT64_MAX) : static_cast<uint64_t>(clock_[cpu]);
}

uint64_t TimedScheduler::HorizonNs() const {
  double h = INFINITY;
  for (int c = 0; c < static_cast<int>(clock_.size()); ++c) {
    if (m_->cpu(c).running >= 0) h = std::min(h, clock_[c]);
  }
  return std::isinf(h) ? 0 : static_cast<uint64_t>(h);
}

bool TimedScheduler::Idle(int cpu) const { return m_->cpu(cpu).running < 0 && m_->cpu(cpu).queue.empty(); }

int TimedScheduler::SelectTaskRq(int t, int prev_cpu) const {
  if (Idle(prev_cpu)) return prev_cpu;
  const int n = static_cast<int>(clock_.size());
  const uint64_t allowed = m_->thread(t).affinity;
  for (int k = 1; k < n; ++k) {
    const int c = (prev_cpu + k) % n;
    if (((allowed >> c) & 1) && Idle(c)) return c;
  }
  return prev_cpu;
}

void TimedScheduler::Advance(int cpu, double ns) {
  const double start = clock_[cpu];
  clock_[cpu] += ns;
  const double end = window_ ? std::min(clock_[cpu], static_cast<double>(*window_)) : clock_[cpu];
  if (end > start) stats_.busy_ns[cpu] += end - start;
}

double TimedScheduler::CoherenceCost(const Machine& m, int cpu) {
  const Footprint& fp = m.last_footprint();
  uint32_t misses = 0;
  const uint64_t me = 1ull << cpu;
  for (int i = 0; i < fp.num_accesses; ++i) {
    const MemAccess& a = fp.accesses[i];
    Line& l = lines_[a.addr >> 6];
    if (a.write) {
      if ((l.sharers & ~me) != 0 || (l.owner >= 0 && l.owner != cpu)) ++misses;
      l.owner = cpu;
      l.sharers = me;
    } else {
      if (!(l.sharers & me) && l.owner >= 0) ++misses;
      l.sharers |= me;
    }
  }
  stats_.cacheline_transfers += misses;
  return misses * cost_.cacheline_transfer_ns;
}

void TimedScheduler::ChargePending(const Machine& m) {
  if (!pending_.valid) return;
  pending_.valid = false;
  const int c = pending_.cpu;
  const SimThread& th = m.thread(pending_.thread);
  // Did the step block (sleep, or FUTEX_WAIT that waited)? It may have been
  // woken already (the machine wakes a sleeper at once when every CPU idles),
  // so a runnable thread's r0 tells: sleep returns 0 / -EINTR once it slept,
  // -EINVAL without sleeping; FUTEX_WAIT -EAGAIN / -EINVAL / -EFAULT without waiting.
  const int64_t r0 = th.ctx[0].r[0];
  bool blocked = th.state == ThreadState::kBlocked || th.state == ThreadState::kSleeping;
  if (th.state == ThreadState::kRunnable && th.depth == pending_.depth) {
    if (pending_.op == Op::kSleep) blocked = r0 != -22;
    if (pending_.op == Op::kFutexWait) blocked = r0 != -11 && r0 != -22 && r0 != -14;
  }
  double ns = 0;
  switch (pending_.op) {
    case Op::kLd: case Op::kLd32: case Op::kRseqLoad: case Op::kRseqAddr: ns = cost_.load_ns; break;
    case Op::kSt: case Op::kSt32: case Op::kRseqArm: ns = cost_.store_ns; break;
    case Op::kCas: case Op::kXadd: case Op::kXchg: ns = cost_.atomic_ns; break;
    case Op::kFence: ns = cost_.fence_ns; break;
    case Op::kClock: ns = cost_.clock_ns; break;
    case Op::kWork: ns = pending_.work_ns; break;
    case Op::kFutexWait:
      ns = blocked ? cost_.futex_wait_ns : cost_.syscall_ns;
      break;
    case Op::kFutexWake: {
      const int64_t woken = th.state == ThreadState::kRunnable ? std::max<int64_t>(0, th.ctx[0].r[0]) : 0;
      ns = cost_.syscall_ns + static_cast<double>(woken) * cost_.futex_wake_ns;
      break;
    }
    case Op::kSchedYield: case Op::kSchedSetaffinity: case Op::kGetcpu: case Op::kTgkill:
    case Op::kMembarrierRseq: case Op::kRseqRegister: case Op::kRseqUnregister: case Op::kSleep:
    case Op::kRfcRegion: case Op::kRfcCpuPtr: case Op::kPreemptLock:
      ns = cost_.syscall_ns;
      break;
    default: ns = cost_.alu_ns; break;
  }
  if (th.depth > pending_.depth) {
    ns += cost_.signal_delivery_ns;
    ++stats_.signals;
  }
  ns += CoherenceCost(m, c);
  Advance(c, ns);
  gvt_ = clock_[c];
  if (blocked && pending_.op == Op::kSleep) slept_[pending_.thread] = 1;
  // It blocked or exited: its CPU went idle (a thread it runs next, even the
  // same one woken at once, is a switch-in).
  if (blocked || th.state == ThreadState::kExited) seen_running_[c] = -1;
}

void TimedScheduler::ObserveSwitches(const Machine& m) {
  for (int c = 0; c < m.num_cpus(); ++c) {
    const int r = m.cpu(c).running;
    if (r == seen_running_[c]) continue;
    if (r >= 0) {
      // The time the thread became ready: a sleeper's deadline when its
      // timer ended the sleep (nanosleep returned 0), a balanced thread's
      // migration time, else the waker's (the last step's) time, as for a
      // sleep that a signal ended: signal_wake_up() wakes it at once and
      // nanosleep returns -EINTR then (kernel/time/hrtimer.c
      // do_nanosleep(): the loop ends on signal_pending()), not at its
      // deadline (review finding F18). The signal frame is not pushed yet:
      // r0 of the sleeping context is the sleep's return value.
      double ready = gvt_;
      if (slept_[r] && m.thread(r).cur().r[0] == 0) ready = static_cast<double>(m.thread(r).wake_at_ns);
      ready = std::max(ready, ready_[r]);
      if (seen_running_[c] < 0 && clock_[c] < ready) clock_[c] = ready;  // idle until then
      slept_[r] = 0;
      ready_[r] = 0;
      double ns = cost_.context_switch_ns;
      ++stats_.context_switches;
      if (last_cpu_[r] >= 0 && last_cpu_[r] != c) {
        ns += cost_.migration_ns;
        ++stats_.migrations;
      }
      last_cpu_[r] = c;
      Advance(c, ns);
      slice_start_[c] = clock_[c];
    }
    seen_running_[c] = r;
  }
}

std::optional<Decision> TimedScheduler::Tick(const ChoiceView& view, int cpu) {
  if (clock_[cpu] < next_tick_[cpu]) return std::nullopt;
  const double tick = cost_.tick_ns;
  next_tick_[cpu] += std::floor((clock_[cpu] - next_tick_[cpu]) / tick + 1) * tick;
  const int queued = view.Queued(cpu);
  if (queued == 0) return std::nullopt;
  // Load balancing: an idle CPU the running thread may use takes it.
  const int t = view.Running(cpu);
  for (int k = 1; k < view.NumCpus(); ++k) {
    const int to = (cpu + k) % view.NumCpus();
    const Decision d = Decision::Migrate(cpu, to);
    if (Idle(to) && view.IsValid(d)) {
      ++stats_.balance_migrations;
      ready_[t] = clock_[cpu];
      return d;
    }
  }
  // check_preempt_tick(): the slice of nr_running equal-weight threads.
  const double slice = std::max(cost_.sched_latency_ns / (queued + 1), cost_.sched_min_granularity_ns);
  if (clock_[cpu] - slice_start_[cpu] < slice) return std::nullopt;
  ++stats_.tick_preemptions;
  return Decision::Preempt(cpu);
}

Decision TimedScheduler::Choose(const ChoiceView& view) {
  const Machine& m = view.machine();
  ChargePending(m);
  ObserveSwitches(m);
  int best = -1;
  for (int c = 0; c < m.num_cpus(); ++c) {
    if (m.cpu(c).running >= 0 && (best < 0 || clock_[c] < clock_[best])) best = c;
  }
  if (best < 0) return Decision::Step(view.DefaultCpu());  // cannot happen: the machine decides only with a runnable CPU
  if (std::optional<Decision> d = Tick(view, best)) return *d;
  const int t = m.cpu(best).running;
  const SimThread& th = m.thread(t);
  pending_.valid = true;
  pending_.cpu = best;
  pending_.thread = t;
  pending_.depth = th.depth;
  const uint32_t pc = th.cur().pc;
  pending_.op = th.native || pc >= m.scenario().program.code.size() ? Op::kNop : m.scenario().program.code[pc].op;
  pending_.work_ns = 0;
  if (pending_.op == Op::kWork) {
    const Instr& in = m.scenario().program.code[pc];
    pending_.work_ns = static_cast<double>(std::max<int64_t>(0, in.use_imm ? in.imm : th.cur().r[in.rs]));
  }
  return Decision::Step(best);
}

void TimedScheduler::EndExecution(const Machine& m) {
  ChargePending(m);
  double end = 0;
  for (double c : clock_) end = std::max(end, c);
  stats_.end_ns = end >= 9223372036854775807.0 ? static_cast<uint64_t>(INT64_MAX) : static_cast<uint64_t>(end);
  stats_.window_ns = window_ ? *window_ : stats_.end_ns;
}

TimedReport SimulateTimed(const Scenario& s, const CostModel& cost, const TimedRunOptions& options) {
  for (const std::string& name : options.memory_symbols) {
    if (s.program.FindSymbol(name) < 0) {
      throw InputError(s.file, {}, "no symbol '" + name + "' to report as memory", "",
                       "name a `var` or `percpu` symbol of the scenario");
    }
  }
  for (const auto& [name, stride] : options.shown_symbols) {
    if (s.program.FindSymbol(name) < 0 || stride == 0) {
      throw InputError(s.file, {}, stride == 0 ? "a stride of 0 for '" + name + "'" : "no symbol '" + name + "' to show",
                       "", "name a `var` or `percpu` symbol of the scenario, with a stride of at least 1");
    }
  }
  RunOptions ro;
  ro.max_steps = options.max_steps;
  ro.kernel = options.kernel;
  Simulator sim(s, ro);
  TimedScheduler sched(cost, options.seed, options.window_ns);
  const ExecutionResult r = sim.Run(sched);
  TimedReport rep;
  rep.verdict = r.verdict;
  rep.message = r.message;
  rep.stats = sched.stats();
  rep.steps = r.steps;
  int latency_id = -1;
  for (size_t i = 0; i < s.program.strings.size(); ++i) {
    if (s.program.strings[i] == options.latency_observation) latency_id = static_cast<int>(i);
  }
  std::vector<int64_t> lat;
  for (const ThreadOutcome& t : r.threads) {
    rep.aborts += t.aborts;
    for (const auto& [id, v] : t.observed) {
      if (static_cast<int>(id) == latency_id) lat.push_back(v);
    }
  }
  // Every latency observation counts: a workload stops issuing requests at
  // the end of its window (it reads the clock), so all fall inside it.
  rep.requests = lat.size();
  if (!lat.empty()) {
    std::sort(lat.begin(), lat.end());
    const auto rank = [&](double q) {
      size_t k = static_cast<size_t>(std::ceil(q * static_cast<double>(lat.size())));
      return static_cast<uint64_t>(lat[std::clamp<size_t>(k, 1, lat.size()) - 1]);
    };
    rep.p50_ns = rank(0.50);
    rep.p99_ns = rank(0.99);
  }
  const double window = static_cast<double>(rep.stats.window_ns);
  rep.throughput_per_s = window > 0 ? static_cast<double>(rep.requests) * 1e9 / window : 0;
  for (const auto& [name, stride] : options.shown_symbols) {
    const Symbol& sym = s.program.symbols[s.program.FindSymbol(name)];
    ShownSymbol shown{name, stride, {}};
    for (uint32_t c = 0; c < (sym.per_cpu ? s.num_cpus : 1); ++c) {
      for (uint32_t i = 0; i < sym.count; i += stride) shown.values.push_back(r.SymbolValue(s, name, c, i));
    }
    rep.shown.push_back(std::move(shown));
  }
  for (const std::string& name : options.memory_symbols) {
    const Symbol& sym = s.program.symbols[s.program.FindSymbol(name)];
    const uint32_t cpus = sym.per_cpu ? s.num_cpus : 1;
    for (uint32_t c = 0; c < cpus; ++c) {
      for (uint32_t i = 0; i < sym.count; ++i) rep.memory += r.SymbolValue(s, name, c, i);
    }
  }
  return rep;
}

}  // namespace rseqmc
