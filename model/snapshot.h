// The byte encoding of exploration snapshots: what Explore saves when it stops
// early and reads back to resume (ExploreOptions::snapshot / resume_from in
// model/explorer.h; `rseqmc check --checkpoint` stores the bytes in a file).
//
// A snapshot is a little-endian stream of LEB128 varints (signed values
// zigzagged), length-prefixed byte strings, and the composite values an
// exploration carries: outcomes, schedules, footprints, failures. The reader never reads
// past its input: truncated or malformed bytes are an InputError naming the
// checkpoint, never a crash.
//
// Example:
//
//     SnapshotWriter w;
//     w.U64(res.executions);
//     w.Put(outcome);
//     std::string bytes = w.Take();
//     SnapshotReader r(bytes, "run.ckpt");
//     uint64_t executions = r.U64();
//     Outcome o = r.GetOutcome();
#ifndef RSEQMC_MODEL_SNAPSHOT_H_
#define RSEQMC_MODEL_SNAPSHOT_H_

#include <cstdint>
#include <string>
#include <string_view>

#include "model/explorer.h"
#include "sim/footprint.h"
#include "sim/schedule.h"

namespace rseqmc {

class SnapshotWriter {
 public:
  void U64(uint64_t v);
  void I64(int64_t v) { U64((static_cast<uint64_t>(v) << 1) ^ static_cast<uint64_t>(v >> 63)); }
  void Bool(bool v) { U64(v ? 1 : 0); }
  void F64(double v);
  void Str(std::string_view s);
  void Put(const Outcome& o);
  void Put(const Schedule& s);
  void Put(const Footprint& f);
  void Put(const Failure& f);
  // The bytes written so far (the writer is empty afterwards).
  std::string Take() { return std::move(out_); }

 private:
  std::string out_;
};

class SnapshotReader {
 public:
  // `bytes` must outlive the reader; `name` is the file named in errors.
  SnapshotReader(std::string_view bytes, std::string name) : in_(bytes), name_(std::move(name)) {}
  uint64_t U64();
  int64_t I64() {
    const uint64_t z = U64();
    return static_cast<int64_t>((z >> 1) ^ (~(z & 1) + 1));
  }
  bool Bool() { return U64() != 0; }
  double F64();
  std::string Str();
  // A count of items that each take at least `min_bytes` bytes: checked against
  // what is left, so a corrupt count cannot make the caller allocate wildly.
  uint64_t Count(uint64_t min_bytes = 1);
  // U64() that must be at most `max` (an enum, a thread index, ...).
  uint64_t Small(uint64_t max);
  Outcome GetOutcome();
  Schedule GetSchedule();
  Footprint GetFootprint();
  Failure GetFailure();
  bool AtEnd() const { return pos_ == in_.size(); }
  // Throws the InputError for a corrupt snapshot.
  [[noreturn]] void Corrupt(const std::string& what) const;

 private:
  std::string_view in_;
  size_t pos_ = 0;
  std::string name_;
};

}  // namespace rseqmc

#endif  // RSEQMC_MODEL_SNAPSHOT_H_
