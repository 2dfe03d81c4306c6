#include "tools/rseqmc/checkpoint_file.h"

#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <system_error>

#include "model/snapshot.h"
#include "sim/diag.h"

namespace rseqmc::cli {
namespace {

enum : uint64_t { kNotStarted = 0, kPartial = 1, kDone = 2 };

void PutResult(SnapshotWriter& w, const ExploreResult& r) {
  w.U64(r.executions);
  w.U64(r.redundant);
  w.Bool(r.complete);
  w.Str(r.stop_reason);
  w.U64(r.distinct_outcomes);
  w.U64(r.max_depth);
  w.U64(r.states);
  w.U64(r.state_bytes);
  w.U64(r.bound_level);
  w.F64(r.elapsed_s);
  w.U64(r.resumed_executions);
  w.Bool(r.failure.has_value());
  if (r.failure) w.Put(*r.failure);
}

ExploreResult GetResult(SnapshotReader& rd) {
  ExploreResult r;
  r.executions = rd.U64();
  r.redundant = rd.U64();
  r.complete = rd.Bool();
  r.stop_reason = rd.Str();
  r.distinct_outcomes = rd.U64();
  r.max_depth = rd.U64();
  r.states = rd.U64();
  r.state_bytes = rd.U64();
  r.bound_level = static_cast<uint32_t>(rd.Small(UINT32_MAX));
  r.elapsed_s = rd.F64();
  r.resumed_executions = rd.U64();
  if (rd.Bool()) r.failure = rd.GetFailure();
  return r;
}

std::string ReadAll(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

bool Exists(const std::string& path) {
  std::error_code ec;
  return std::filesystem::exists(std::filesystem::symlink_status(path, ec)) && !ec;
}

}  // namespace

const char* CheckpointFile::Header() {
  return "rseqmc checkpoint v1: resume with the same 'rseqmc check' command; safe to delete\n";
}

bool CheckpointFile::IsCheckpoint(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  const std::string header = Header();
  std::string first(header.size(), '\0');
  in.read(first.data(), static_cast<std::streamsize>(first.size()));
  return in.gcount() == static_cast<std::streamsize>(first.size()) && first == header;
}

CheckpointFile::CheckpointFile(std::string path, std::string identity, size_t num_scenarios)
    : path_(std::move(path)), identity_(std::move(identity)), states_(num_scenarios) {
  const std::string hint = "give --checkpoint a new file name, or a checkpoint written by 'rseqmc check'";
  for (const std::string& p : {path_, path_ + ".tmp"}) {
    if (!Exists(p)) continue;
    if (!std::filesystem::is_regular_file(p) || !IsCheckpoint(p)) {
      throw InputError(p, {}, "exists and is not an rseqmc checkpoint; refusing to overwrite it", "", hint);
    }
  }
  if (!Exists(path_)) return;
  resumed_ = true;
  const std::string bytes = ReadAll(path_);
  SnapshotReader rd(std::string_view(bytes).substr(std::strlen(Header())), path_);
  const std::string made_for = rd.Str();
  if (made_for != identity_) {
    throw InputError(path_, {},
                     "the checkpoint belongs to another check run: it was made for " + made_for + "; this run is " +
                         identity_,
                     "", "run the same command as before to resume, or delete the checkpoint to start afresh");
  }
  if (rd.U64() != num_scenarios) rd.Corrupt("scenario count");
  for (ScenarioState& st : states_) {
    switch (rd.Small(kDone)) {
      case kNotStarted:
        break;
      case kPartial:
        st.snapshot = rd.Str();
        break;
      case kDone:
        st.done = true;
        st.result = GetResult(rd);
        break;
    }
  }
  if (!rd.AtEnd()) rd.Corrupt("trailing bytes");
}

bool CheckpointFile::AllDone() const {
  for (const ScenarioState& st : states_) {
    if (!st.done) return false;
  }
  return true;
}

void CheckpointFile::SetPartial(size_t i, std::string snapshot) {
  states_[i].done = false;
  states_[i].snapshot = std::move(snapshot);
  Write();
}

void CheckpointFile::SetDone(size_t i, const ExploreResult& result) {
  states_[i].done = true;
  states_[i].result = result;
  states_[i].result.outcomes.clear();
  states_[i].snapshot.clear();
  Write();
}

void CheckpointFile::Remove() {
  std::error_code ec;
  std::filesystem::remove(path_, ec);
}

void CheckpointFile::Write() {
  SnapshotWriter w;
  w.Str(identity_);
  w.U64(states_.size());
  for (const ScenarioState& st : states_) {
    if (st.done) {
      w.U64(kDone);
      PutResult(w, st.result);
    } else if (!st.snapshot.empty()) {
      w.U64(kPartial);
      w.Str(st.snapshot);
    } else {
      w.U64(kNotStarted);
    }
  }
  const std::string body = w.Take();
  const std::string tmp = path_ + ".tmp";
  std::FILE* f = std::fopen(tmp.c_str(), "wb");
  if (f == nullptr) throw std::runtime_error("cannot write " + tmp + ": " + std::strerror(errno));
  const std::string header = Header();
  bool ok = std::fwrite(header.data(), 1, header.size(), f) == header.size() &&
            std::fwrite(body.data(), 1, body.size(), f) == body.size() && std::fflush(f) == 0 &&
            ::fsync(fileno(f)) == 0;
  const int err = errno;
  ok = std::fclose(f) == 0 && ok;
  if (!ok) {
    std::remove(tmp.c_str());
    throw std::runtime_error("cannot write " + tmp + ": " + std::strerror(err));
  }
  if (std::rename(tmp.c_str(), path_.c_str()) != 0) {
    const int e = errno;
    std::remove(tmp.c_str());
    throw std::runtime_error("cannot rename " + tmp + " to " + path_ + ": " + std::strerror(e));
  }
}

}  // namespace rseqmc::cli
