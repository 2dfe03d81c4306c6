// The checkpoint file of `rseqmc check --checkpoint FILE`: where a long check
// run keeps what it has done, so that the same command resumes it.
//
// Per scenario of the run it holds either the final result (exhausted, or a
// failure: the counterexample is re-derived from the failing schedule, which
// is deterministic) or the explorer's snapshot of an exploration that stopped
// early (Ctrl-C, --time-limit, --max-executions, --max-memory; see
// ExploreOptions::snapshot in model/explorer.h). The file starts with a
// one-line text header naming it as an rseqmc checkpoint, then the run's
// identity (scenarios with their fingerprints, strategy, bounds, kernel,
// seed, ...) and the per-scenario states in the model/snapshot.h encoding.
//
// Safety: every write goes to FILE.tmp, which is then renamed over FILE, so a
// crash leaves the previous checkpoint intact. An existing FILE (or FILE.tmp)
// that does not start with the header is never overwritten: opening refuses
// with an InputError. A checkpoint made by another run (other scenarios,
// -D values or options) is refused too, naming what differs.
//
// Example:
//
//     CheckpointFile ckpt("run.ckpt", identity, scenarios.size());  // reads it if it exists
//     if (ckpt.state(i).done) ... else o.resume_from = ckpt.state(i).snapshot.empty() ? nullptr : &...;
//     o.snapshot = [&](const std::string& b) { ckpt.SetPartial(i, b); };
//     ckpt.SetDone(i, result);
#ifndef RSEQMC_TOOLS_RSEQMC_CHECKPOINT_FILE_H_
#define RSEQMC_TOOLS_RSEQMC_CHECKPOINT_FILE_H_

#include <cstddef>
#include <string>
#include <vector>

#include "model/explorer.h"

namespace rseqmc::cli {

class CheckpointFile {
 public:
  struct ScenarioState {
    bool done = false;
    ExploreResult result;  // when done (outcomes not kept; distinct_outcomes is)
    std::string snapshot;  // when not done: the explorer's snapshot, or empty (not started)
  };

  // Opens `path` for the check run described by `identity` (one line of
  // text) over `num_scenarios` scenarios: reads it if it exists. Throws
  // InputError if it exists but is not an rseqmc checkpoint (it is left
  // alone), is corrupt, or belongs to another run. Nothing is written yet.
  CheckpointFile(std::string path, std::string identity, size_t num_scenarios);

  const std::string& path() const { return path_; }
  // True if the file existed (this run resumes it).
  bool resumed() const { return resumed_; }
  const ScenarioState& state(size_t i) const { return states_[i]; }
  bool AllDone() const;

  // Records scenario i's progress and rewrites the file. Throws
  // std::runtime_error if the file cannot be written.
  void SetPartial(size_t i, std::string snapshot);
  void SetDone(size_t i, const ExploreResult& result);
  // Deletes the file (the run is complete). Never throws.
  void Remove();

  // The first line of every checkpoint file.
  static const char* Header();
  // True if the file at `path` starts with Header() (false if it cannot be read).
  static bool IsCheckpoint(const std::string& path);

 private:
  void Write();
  std::string path_;
  std::string identity_;
  std::vector<ScenarioState> states_;
  bool resumed_ = false;
};

}  // namespace rseqmc::cli

#endif  // RSEQMC_TOOLS_RSEQMC_CHECKPOINT_FILE_H_
