#include "model/snapshot.h"

#include <bit>
#include <cstring>

#include "sim/diag.h"

namespace rseqmc {

void SnapshotWriter::U64(uint64_t v) {
  while (v >= 0x80) {
    out_.push_back(static_cast<char>((v & 0x7f) | 0x80));
    v >>= 7;
  }
  out_.push_back(static_cast<char>(v));
}

void SnapshotWriter::F64(double v) { U64(std::bit_cast<uint64_t>(v)); }

void SnapshotWriter::Str(std::string_view s) {
  U64(s.size());
  out_.append(s);
}

void SnapshotWriter::Put(const Outcome& o) {
  U64(static_cast<uint64_t>(o.verdict));
  Str(std::string_view(reinterpret_cast<const char*>(o.symbols.data()), o.symbols.size()));
  U64(o.returns.size());
  for (int64_t v : o.returns) I64(v);
  U64(o.observed.size());
  for (const auto& per_thread : o.observed) {
    U64(per_thread.size());
    for (const auto& [id, value] : per_thread) {
      U64(id);
      I64(value);
    }
  }
}

void SnapshotWriter::Put(const Schedule& s) {
  U64(static_cast<uint64_t>(s.kernel));
  U64(s.entries.size());
  for (const ScheduleEntry& e : s.entries) {
    U64(e.boundary);
    U64(static_cast<uint64_t>(e.decision.kind));
    I64(e.decision.cpu);
    I64(e.decision.arg);
  }
  U64(s.placement.size());
  for (uint8_t cpu : s.placement) U64(cpu);
}

void SnapshotWriter::Put(const Footprint& f) {
  U64(f.threads);
  U64(f.cpus);
  Bool(f.mm_cid);
  Bool(f.all_memory);
  U64(f.num_accesses);
  for (int i = 0; i < f.num_accesses; ++i) {
    U64(f.accesses[i].addr);
    U64(f.accesses[i].bytes);
    Bool(f.accesses[i].write);
  }
}

void SnapshotWriter::Put(const Failure& f) {
  Put(f.schedule);
  U64(static_cast<uint64_t>(f.verdict));
  Str(f.message);
  U64(f.execution);
  U64(f.trace_hash);
}

void SnapshotReader::Corrupt(const std::string& what) const {
  throw InputError(name_, {}, "corrupt checkpoint: " + what + " (at byte " + std::to_string(pos_) + ")", "",
                   "delete the checkpoint file to start the exploration afresh");
}

uint64_t SnapshotReader::U64() {
  uint64_t v = 0;
  for (int shift = 0; shift < 64; shift += 7) {
    if (pos_ >= in_.size()) Corrupt("truncated");
    const auto byte = static_cast<uint8_t>(in_[pos_++]);
    v |= static_cast<uint64_t>(byte & 0x7f) << shift;
    if ((byte & 0x80) == 0) return v;
  }
  Corrupt("varint longer than 64 bits");
}

double SnapshotReader::F64() { return std::bit_cast<double>(U64()); }

std::string SnapshotReader::Str() {
  const uint64_t n = Count(1);
  std::string s(in_.substr(pos_, n));
  pos_ += n;
  return s;
}

uint64_t SnapshotReader::Count(uint64_t min_bytes) {
  const uint64_t n = U64();
  if (min_bytes != 0 && n > (in_.size() - pos_) / min_bytes) Corrupt("count " + std::to_string(n) + " exceeds the data");
  return n;
}

uint64_t SnapshotReader::Small(uint64_t max) {
  const uint64_t v = U64();
  if (v > max) Corrupt("value " + std::to_string(v) + " out of range");
  return v;
}

Outcome SnapshotReader::GetOutcome() {
  Outcome o;
  o.verdict = static_cast<Verdict>(Small(static_cast<uint64_t>(kLastVerdict)));
  const std::string symbols = Str();
  o.symbols.assign(symbols.begin(), symbols.end());
  o.returns.resize(Count());
  for (int64_t& v : o.returns) v = I64();
  o.observed.resize(Count());
  for (auto& per_thread : o.observed) {
    per_thread.resize(Count(2));
    for (auto& [id, value] : per_thread) {
      id = static_cast<uint32_t>(Small(UINT32_MAX));
      value = I64();
    }
  }
  return o;
}

Schedule SnapshotReader::GetSchedule() {
  Schedule s;
  s.kernel = static_cast<KernelModel>(Small(255));
  s.entries.resize(Count(4));
  for (ScheduleEntry& e : s.entries) {
    e.boundary = U64();
    e.decision.kind = static_cast<DecisionKind>(Small(kNumDecisionKinds - 1));
    const int64_t cpu = I64();
    const int64_t arg = I64();
    if (cpu < 0 || cpu > INT8_MAX || arg < INT16_MIN || arg > INT16_MAX) Corrupt("decision out of range");
    e.decision.cpu = static_cast<int8_t>(cpu);
    e.decision.arg = static_cast<int16_t>(arg);
  }
  s.placement.resize(Count(1));
  for (uint8_t& cpu : s.placement) cpu = static_cast<uint8_t>(Small(kMaxCpus - 1));
  return s;
}

Footprint SnapshotReader::GetFootprint() {
  Footprint f;
  f.threads = U64();
  f.cpus = U64();
  f.mm_cid = Bool();
  f.all_memory = Bool();
  f.num_accesses = static_cast<uint8_t>(Small(Footprint::kMaxAccesses));
  for (int i = 0; i < f.num_accesses; ++i) {
    f.accesses[i].addr = U64();
    f.accesses[i].bytes = static_cast<uint8_t>(Small(255));
    f.accesses[i].write = Bool();
  }
  return f;
}

Failure SnapshotReader::GetFailure() {
  Failure f;
  f.schedule = GetSchedule();
  f.verdict = static_cast<Verdict>(Small(static_cast<uint64_t>(kLastVerdict)));
  f.message = Str();
  f.execution = U64();
  f.trace_hash = U64();
  return f;
}

}  // namespace rseqmc
