// The incremental memory hash of stateful search (sim/state_hash.h
// MemoryHash, kept by Machine::Store and the interpreter's memory
// instructions while the scheduler WantsStateHash): after every step of
// random executions with every kind of injected event, of every built-in
// under every kernel ABI that runs it and of generated programs, the kept
// hash equals the hash of the whole image computed from scratch; a resumed
// checkpoint gives the same state hashes as the execution it was saved in;
// and the hash with mm_cid masked is that of the image with each registered
// area's mm_cid field zeroed (what StateHash(mm_cid = false) hashed before).
#include <gtest/gtest.h>

#include <cstdint>
#include <utility>
#include <vector>

#include "scenarios/builtin.h"
#include "scenarios/parser.h"
#include "sim/kernel/abi.h"
#include "sim/machine.h"
#include "sim/scheduler.h"
#include "sim/simulator.h"
#include "sim/state_hash.h"
#include "tests/builtin_scenario.h"
#include "tests/gen/program_gen.h"
#include "tests/gen/rc_cases.h"

namespace rseqmc {
namespace {

// A random schedule with events (preempt, migrate, signal, IPI at any
// running CPU, at most max_events of them) that checks at every boundary
// that the machine's kept memory hash is the from-scratch one. It records
// its decisions and each boundary's state hashes.
class HashCheckingScheduler : public Scheduler {
 public:
  explicit HashCheckingScheduler(uint64_t seed, uint32_t max_events = 4) : rng_(seed), max_events_(max_events) {}
  bool WantsStateHash() const override { return true; }
  void BeginExecution(const Machine&) override {
    decisions.clear();
    hashes.clear();
    events_ = 0;
  }
  Decision Choose(const ChoiceView& view) override {
    const Machine& m = view.machine();
    Check(m);
    hashes.push_back({m.StateHash(true), m.StateHash(false, 0)});
    const Decision d = Pick(view);
    decisions.push_back(d);
    return d;
  }
  void EndExecution(const Machine& m) override { Check(m); }

  void Check(const Machine& m) {
    ++checks;
    EXPECT_TRUE(m.memory_hash_incremental());
    const MemoryHash kept = m.memory_hash(), full = m.MemoryHashFromScratch();
    if (!(kept == full)) {
      ++mismatches;
      ADD_FAILURE() << "kept memory hash differs from the from-scratch hash at boundary " << m.boundary()
                    << ", step " << m.steps();
    }
    if (live == nullptr) return;
    // The live image (the machine writes into the ExecutionResult it runs
    // for) with every registered area's mm_cid zeroed.
    std::vector<uint8_t> img = live->memory;
    for (int t = 0; t < m.num_threads(); ++t) {
      const uint64_t area = m.thread(t).rseq_area;
      if (area == 0 || area + kRseqOffMmCid + 4 - kDataBase > img.size()) continue;
      for (int b = 0; b < 4; ++b) img[area + kRseqOffMmCid - kDataBase + b] = 0;
    }
    if (!(m.memory_hash(/*mm_cid=*/false) == MemoryImageHash(img.data(), img.size()))) {
      ++mismatches;
      ADD_FAILURE() << "masked memory hash differs at boundary " << m.boundary();
    }
  }
  const ExecutionResult* live = nullptr;

  std::vector<Decision> decisions;
  std::vector<std::pair<std::pair<uint64_t, uint64_t>, std::pair<uint64_t, uint64_t>>> hashes;
  MachineCheckpoint checkpoint;
  uint64_t checks = 0, mismatches = 0;

 private:
  uint64_t Next() {
    rng_ ^= rng_ << 13;
    rng_ ^= rng_ >> 7;
    rng_ ^= rng_ << 17;
    return rng_;
  }
  Decision Pick(const ChoiceView& view) {
    std::vector<int> running;
    for (int c = 0; c < view.NumCpus(); ++c) {
      if (view.Runnable(c)) running.push_back(c);
    }
    if (running.empty()) return Decision::Step(view.DefaultCpu());
    const int cpu = running[Next() % running.size()];
    if (events_ < max_events_ && Next() % 8 == 0) {
      Decision d;
      switch (Next() % 4) {
        case 0: d = Decision::Preempt(cpu); break;
        case 1: d = Decision::Migrate(cpu, static_cast<int>(Next() % view.NumCpus())); break;
        case 2: d = Decision::Signal(cpu, static_cast<int>(10 + Next() % 3)); break;  // SIGUSR1, SIGSEGV, SIGUSR2
        default: d = Decision::Ipi(cpu); break;
      }
      if (view.IsValid(d)) {
        ++events_;
        return d;
      }
    }
    return Decision::Step(cpu);
  }
  uint64_t rng_;
  uint32_t max_events_;
  uint32_t events_ = 0;
};

// Replays `decisions` from a resumed checkpoint taken at boundary `from`,
// comparing each boundary's state hashes with the recorded ones.
class ResumeChecker : public Scheduler {
 public:
  ResumeChecker(const HashCheckingScheduler& recorded, size_t from) : rec_(recorded), at_(from) {}
  bool WantsStateHash() const override { return true; }
  Decision Choose(const ChoiceView& view) override {
    const Machine& m = view.machine();
    if (at_ >= rec_.decisions.size()) return Decision::Stop();
    ++compared;
    EXPECT_EQ(m.StateHash(true), rec_.hashes[at_].first) << "boundary " << at_;
    EXPECT_EQ(m.StateHash(false, 0), rec_.hashes[at_].second) << "boundary " << at_;
    EXPECT_TRUE(m.memory_hash() == m.MemoryHashFromScratch()) << "boundary " << at_;
    return rec_.decisions[at_++];
  }
  uint64_t compared = 0;

 private:
  const HashCheckingScheduler& rec_;
  size_t at_;
};

// Runs `executions` random executions of `s` with the hash checked at every
// boundary, and for each one resumes a checkpoint saved in its middle and
// replays the rest. Returns the number of boundaries checked.
uint64_t CheckScenario(const Scenario& s, const RunOptions& ro, uint64_t seed, int executions) {
  Simulator sim(s, ro);
  HashCheckingScheduler sched(seed);
  uint64_t checked = 0;
  for (int i = 0; i < executions; ++i) {
    ExecutionResult r;
    sched.live = &r;
    sim.RunInto(sched, r);
    checked += sched.checks;
    sched.checks = 0;
    if (!sim.can_resume() || sched.decisions.size() < 2) continue;
    // The same schedule again, saving at its middle boundary; then resume
    // there (into the result that execution wrote) and replay the rest.
    const std::vector<Decision> first = sched.decisions;
    const size_t mid = first.size() / 2;
    class Replay : public Scheduler {
     public:
      explicit Replay(HashCheckingScheduler& rec, std::vector<Decision> d, size_t save)
          : rec_(rec), d_(std::move(d)), save_(save) {}
      bool WantsStateHash() const override { return true; }
      Decision Choose(const ChoiceView& view) override {
        const Machine& m = view.machine();
        if (i_ >= d_.size()) return Decision::Stop();
        rec_.hashes.push_back({m.StateHash(true), m.StateHash(false, 0)});
        rec_.decisions.push_back(d_[i_]);
        if (i_ == save_) m.Save(rec_.checkpoint);
        return d_[i_++];
      }

     private:
      HashCheckingScheduler& rec_;
      std::vector<Decision> d_;
      size_t save_, i_ = 0;
    };
    sched.decisions.clear();
    sched.hashes.clear();
    Replay replay(sched, first, mid);
    ExecutionResult r2;
    sim.RunInto(replay, r2);
    EXPECT_EQ(sched.decisions.size(), first.size());
    ResumeChecker resume(sched, mid);
    sim.ResumeInto(sched.checkpoint, resume, r2);
    EXPECT_EQ(resume.compared, first.size() - mid);
    checked += resume.compared;
  }
  EXPECT_EQ(sched.mismatches, 0u);
  return checked;
}

TEST(MemoryHash, WordTermsSumToTheImageHash) {
  std::vector<uint8_t> img(21);  // not a multiple of 8: the last word is zero-padded
  for (size_t i = 0; i < img.size(); ++i) img[i] = static_cast<uint8_t>(i * 37 + 1);
  MemoryHash sum;
  for (uint64_t w = 0; w < 3; ++w) {
    uint64_t v = 0;
    for (size_t b = 0; b < 8 && w * 8 + b < img.size(); ++b) v |= static_cast<uint64_t>(img[w * 8 + b]) << (8 * b);
    sum.Add(MemoryWordTerm(w, v));
  }
  EXPECT_TRUE(sum == MemoryImageHash(img.data(), img.size()));
  // A store replaces one word's term; swapping two words' values changes the hash.
  MemoryHash h = sum;
  uint64_t w1 = 0;
  for (size_t b = 0; b < 8; ++b) w1 |= static_cast<uint64_t>(img[8 + b]) << (8 * b);
  h.Sub(MemoryWordTerm(1, w1));
  h.Add(MemoryWordTerm(1, 42));
  for (size_t b = 0; b < 8; ++b) img[8 + b] = b == 0 ? 42 : 0;
  EXPECT_TRUE(h == MemoryImageHash(img.data(), img.size()));
  std::vector<uint8_t> swapped = img;
  for (size_t b = 0; b < 8; ++b) std::swap(swapped[b], swapped[8 + b]);
  EXPECT_FALSE(MemoryImageHash(swapped.data(), swapped.size()) == MemoryImageHash(img.data(), img.size()));
  // Carries between the 64-bit halves: Add and Sub are inverse modulo 2^128.
  MemoryHash x{~0ull, 5}, y{1, ~0ull};
  MemoryHash z = x;
  z.Add(y);
  EXPECT_EQ(z.lo, 0u);
  EXPECT_EQ(z.hi, 5u);  // 5 + 2^64 - 1 + carry, modulo 2^64
  z.Sub(y);
  EXPECT_TRUE(z == x);
}

TEST(MemoryHash, KeptHashIsTheFullHashAtEveryBoundaryOfEveryBuiltin) {
  uint64_t checked = 0;
  uint64_t seed = 0x5eed;
  const int runs = testing::ForEachBuiltinUnderEachAbi([&](const BuiltinScenario&, const Scenario& s, RunOptions ro) {
    ro.max_steps = 5000;
    checked += CheckScenario(s, ro, seed++, 6);
  });
  EXPECT_GT(runs, 40);
  EXPECT_GT(checked, 100000u);
}

TEST(MemoryHash, KeptHashIsTheFullHashOnGeneratedPrograms) {
  uint64_t checked = 0;
  testgen::CheckCases(300, [&] {
    const auto g = *testgen::GenScenario();
    const uint64_t seed = *rc::gen::arbitrary<uint64_t>();
    for (KernelModel k : {KernelModel::kLegacy418, KernelModel::kLegacy60}) {
      RunOptions ro;
      ro.kernel.model = k;
      checked += CheckScenario(g.scenario, ro, seed | 1, 3);
      RC_ASSERT(!::testing::Test::HasFailure());
    }
  });
  EXPECT_GT(checked, 10000u);
}

}  // namespace
}  // namespace rseqmc
