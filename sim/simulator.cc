#include "sim/simulator.h"

#include "sim/fiber_pool.h"
#include "sim/machine.h"

#include <cstring>
#include <exception>
#include <stdexcept>

#define XXH_INLINE_ALL
#include <xxhash.h>

namespace rseqmc {

uint64_t ExecutionResult::Read(uint64_t address, int bytes) const {
  if (address < kDataBase || address - kDataBase + bytes > memory.size()) return 0;
  uint64_t v = 0;
  std::memcpy(&v, memory.data() + (address - kDataBase), bytes);
  return v;
}

uint64_t ExecutionResult::TraceHash() const {
  // The final memory (zero-padded to whole words), then the decisions, the
  // thread outcomes, the steps and the verdict, laid out as 64-bit words.
  if (stopped) return 0;
  std::vector<uint64_t> w((memory.size() + 7) / 8, 0);
  if (!memory.empty()) std::memcpy(w.data(), memory.data(), memory.size());
  w.reserve(w.size() + 2 * schedule.entries.size() + 2 * threads.size() + 2);
  for (const ScheduleEntry& e : schedule.entries) {
    w.push_back(e.boundary);
    w.push_back(static_cast<uint64_t>(e.decision.kind) |
                static_cast<uint64_t>(static_cast<uint8_t>(e.decision.cpu)) << 8 |
                static_cast<uint64_t>(static_cast<uint16_t>(e.decision.arg)) << 16);
  }
  // The initial placement, when one was chosen (a schedule without one
  // hashes as before placements existed).
  for (uint8_t cpu : schedule.placement) w.push_back(0x91ace000u | cpu);
  for (const ThreadOutcome& o : threads) {
    w.push_back(static_cast<uint64_t>(o.ret));
    w.push_back(static_cast<uint64_t>(o.aborts) | static_cast<uint64_t>(o.exited) << 32);
  }
  w.push_back(steps);
  w.push_back(static_cast<uint64_t>(verdict));
  return XXH3_64bits(w.data(), w.size() * sizeof(uint64_t));
}

const std::string& ExecutionResult::ObservationName(const Scenario& s, uint32_t id) const {
  static const std::string kUnknown = "?";
  if (id < s.program.strings.size()) return s.program.strings[id];
  id -= static_cast<uint32_t>(s.program.strings.size());
  return id < extra_strings.size() ? extra_strings[id] : kUnknown;
}

int64_t ExecutionResult::SymbolValue(const Scenario& s, const std::string& name, uint32_t cpu, uint32_t index) const {
  const int i = s.program.FindSymbol(name);
  if (i < 0) return 0;
  const Symbol& sym = s.program.symbols[i];
  const uint64_t a = sym.address + (sym.per_cpu ? cpu * sym.stride : 0) + index * static_cast<uint64_t>(sym.width);
  return static_cast<int64_t>(Read(a, static_cast<int>(sym.width)));
}

Simulator::Simulator(const Scenario& scenario, RunOptions options)
    : scenario_(scenario), options_(std::move(options)), machine_(std::make_unique<Machine>(scenario_, options_)) {
  direct_ = !options_.fibers;
  for (const ThreadSpec& t : scenario_.threads) direct_ &= !t.native;
  fibers_ = std::make_unique<FiberPool>([m = machine_.get()](int t) { m->ThreadMain(t); });
  fibers_->Reserve(static_cast<int>(scenario_.threads.size()));
  machine_->set_fibers(fibers_.get());
}

Simulator::~Simulator() {
  // Fibers reference the machine: destroy (unwind) them first.
  fibers_.reset();
}

void Simulator::set_stop_poll(std::function<bool()> poll) {
  stop_poll_ = std::move(poll);
  machine_->set_stop_poll(stop_poll_ ? &stop_poll_ : nullptr);
}

Verdict Simulator::RunInto(Scheduler& scheduler, ExecutionResult& out) {
  Machine& m = *machine_;
  scheduler.BeginExecution(m);
  m.Reset(&scheduler, &out);
  if (direct_) {
    m.RunDirect();
    m.Finish();
    scheduler.EndExecution(m);
    return out.verdict;
  }
  if (!m.finished()) {
    fibers_->SwitchTo(m.first_thread());
    // Exceptions cannot cross fibers: one raised on a thread's fiber (an invalid
    // decision, an exception from a native body) was parked in the machine.
    if (std::exception_ptr e = m.TakeError()) {
      Unwind();
      std::rethrow_exception(e);
    }
  }
  Unwind();
  m.Finish();
  scheduler.EndExecution(m);
  return out.verdict;
}

uint32_t Simulator::rule_sensitivity() const { return machine_->rule_sensitivity(); }

Verdict Simulator::ResumeInto(const MachineCheckpoint& ck, Scheduler& scheduler, ExecutionResult& out) {
  if (!direct_ || !ck.valid) {
    throw std::logic_error("Simulator::ResumeInto: no checkpoint, or a scenario with C++ threads");
  }
  Machine& m = *machine_;
  m.ResumeFrom(ck, &scheduler, &out);
  m.RunDirect();
  m.Finish();
  scheduler.EndExecution(m);
  return out.verdict;
}

void Simulator::Unwind() {
  Machine& m = *machine_;
  m.ForceFinished();
  for (int t = 0; t < static_cast<int>(scenario_.threads.size()); ++t) {
    if (m.fiber_active(t)) fibers_->SwitchTo(t);
  }
}

ExecutionResult Simulator::Run(Scheduler& scheduler) {
  ExecutionResult r;
  RunInto(scheduler, r);
  return r;
}

}  // namespace rseqmc
