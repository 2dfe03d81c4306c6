#include "sim/schedule.h"

#include <array>
#include <bit>
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <optional>

#include "sim/diag.h"
#include "sim/machine.h"
#include "sim/placement.h"
#include "sim/scenario.h"

namespace rseqmc {

const char* DecisionKindName(DecisionKind k) {
  switch (k) {
    case DecisionKind::kStep: return "step";
    case DecisionKind::kPreempt: return "preempt";
    case DecisionKind::kMigrate: return "migrate";
    case DecisionKind::kSignal: return "signal";
    case DecisionKind::kIpi: return "ipi";
  }
  return "?";
}

std::string ToString(const Decision& d) {
  const std::string cpu = "cpu" + std::to_string(d.cpu);
  switch (d.kind) {
    case DecisionKind::kStep: return "step " + cpu;
    case DecisionKind::kPreempt:
      return "preempt " + cpu + (d.arg >= 0 ? " -> t" + std::to_string(d.arg) : std::string());
    case DecisionKind::kMigrate: return "migrate " + cpu + " -> cpu" + std::to_string(d.arg);
    case DecisionKind::kSignal: return "signal " + SignalName(d.arg) + " -> " + cpu;
    case DecisionKind::kIpi: return "ipi " + cpu;
  }
  return "?";
}

uint32_t Schedule::NumEvents() const {
  uint32_t n = 0;
  for (const ScheduleEntry& e : entries) n += e.decision.IsEvent();
  return n;
}

namespace {

class Fnv32 {
 public:
  void Add(uint64_t v) {
    for (int i = 0; i < 8; ++i) {
      h_ ^= static_cast<uint8_t>(v >> (8 * i));
      h_ *= 16777619u;
    }
  }
  void Add(const std::string& s) {
    Add(s.size());
    for (char c : s) {
      h_ ^= static_cast<uint8_t>(c);
      h_ *= 16777619u;
    }
  }
  uint32_t value() const { return h_; }

 private:
  uint32_t h_ = 2166136261u;
};

constexpr char kAlphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
constexpr const char* kTokenPrefix = "rsq1.";
constexpr const char* kTokenPrefix2 = "rsq2.";  // with an initial placement

void PutVarint(std::string& out, uint64_t v) {
  while (v >= 0x80) {
    out.push_back(static_cast<char>((v & 0x7f) | 0x80));
    v >>= 7;
  }
  out.push_back(static_cast<char>(v));
}

std::string Base64Url(const std::string& bytes) {
  std::string out;
  uint32_t acc = 0;
  int bits = 0;
  for (unsigned char c : bytes) {
    acc = (acc << 8) | c;
    bits += 8;
    while (bits >= 6) {
      bits -= 6;
      out.push_back(kAlphabet[(acc >> bits) & 63]);
    }
  }
  if (bits > 0) out.push_back(kAlphabet[(acc << (6 - bits)) & 63]);
  return out;
}

// A token decodes to one schedule, and that schedule has one token: the one
// EncodeSchedule writes. Anything else (a changed spare bit in the last
// character, an extra character holding no whole byte, a number written in
// more varint bytes than it needs) is refused, so that a damaged token is
// never replayed as the original (issue-tracker note: spare base64 bits were
// accepted). `canonical` is EncodeSchedule of what `token` decoded to.
template <class Fail>
void RejectNonCanonical(const std::string& canonical, const std::string& token, const Fail& fail) {
  if (canonical == token) return;
  size_t i = 0;
  while (i < canonical.size() && i < token.size() && canonical[i] == token[i]) ++i;
  const std::string what = i < canonical.size() && i < token.size()
                               ? "has '" + std::string(1, token[i]) + "' where rseqmc writes '" +
                                     std::string(1, canonical[i]) + "'"
                           : i < token.size() ? "has characters after the last one rseqmc writes"
                                              : "ends before the last character rseqmc writes";
  throw fail(i, "schedule token is not in canonical form: character " + std::to_string(i + 1) + " " + what +
                    " (a changed or added character that no whole byte of the token uses)",
             "copy the token exactly as rseqmc printed it: every character, nothing added");
}

}  // namespace

uint32_t ScenarioFingerprint(const Scenario& s) {
  Fnv32 h;
  h.Add(s.num_cpus);
  h.Add(s.num_nodes);
  const Program& p = s.program;
  for (const Instr& in : p.code) {
    h.Add(static_cast<uint64_t>(in.op) | uint64_t{in.rd} << 8 | uint64_t{in.rs} << 16 | uint64_t{in.rt} << 24 |
          uint64_t{in.ru} << 32 | uint64_t{in.scale} << 40 | uint64_t{in.use_imm} << 48 |
          uint64_t{in.has_index} << 49 | uint64_t{in.aux} << 56);
    h.Add(static_cast<uint64_t>(in.imm));
    h.Add(in.target);
  }
  for (const Function& f : p.functions) h.Add(uint64_t{f.first} << 32 | f.count);
  for (const CsDescriptor& d : p.descriptors) {
    h.Add(uint64_t{d.start} << 32 | d.post_commit);
    h.Add(uint64_t{d.abort} << 32 | d.flags);
    h.Add(d.version);
  }
  for (const Symbol& sym : p.symbols) {
    h.Add(static_cast<uint64_t>(sym.width) | uint64_t{sym.count} << 8 | uint64_t{sym.per_cpu} << 40);
    h.Add(sym.stride);
    for (int64_t v : sym.init) h.Add(static_cast<uint64_t>(v));
  }
  for (const ThreadSpec& t : s.threads) {
    h.Add(static_cast<uint64_t>(static_cast<uint32_t>(t.entry)) | uint64_t{t.cpu} << 32);
    h.Add(t.affinity);
    h.Add(uint64_t{t.rseq_registered} | uint64_t{static_cast<bool>(t.native)} << 1);
    for (auto [r, v] : t.args) {
      h.Add(r);
      h.Add(static_cast<uint64_t>(v));
    }
  }
  for (const SignalSpec& sg : s.signals) {
    h.Add(static_cast<uint64_t>(sg.signo) | static_cast<uint64_t>(static_cast<uint32_t>(sg.handler)) << 8 |
          uint64_t{sg.nodefer} << 40);
  }
  return h.value();
}

std::string EncodeSchedule(const Scenario& s, const Schedule& schedule) {
  std::string bytes;
  PutVarint(bytes, ScenarioFingerprint(s));
  PutVarint(bytes, static_cast<uint64_t>(schedule.kernel));
  if (!schedule.placement.empty()) {
    PutVarint(bytes, schedule.placement.size());
    for (uint8_t cpu : schedule.placement) PutVarint(bytes, cpu);
  }
  PutVarint(bytes, schedule.entries.size());
  uint64_t prev = 0;
  for (const ScheduleEntry& e : schedule.entries) {
    PutVarint(bytes, e.boundary - prev);
    prev = e.boundary;
    PutVarint(bytes, static_cast<uint64_t>(e.decision.kind) << 6 | static_cast<uint8_t>(e.decision.cpu));
    PutVarint(bytes, static_cast<uint64_t>(static_cast<int64_t>(e.decision.arg) + 1));
  }
  return (schedule.placement.empty() ? kTokenPrefix : kTokenPrefix2) + Base64Url(bytes);
}

Schedule DecodeSchedule(const Scenario& s, const std::string& token) {
  // Every error says how to fix it; most have the same cause (a token not
  // copied whole).
  auto fail = [&](size_t col, const std::string& msg, const std::string& hint = "") -> InputError {
    return InputError("<token>", {1, static_cast<uint32_t>(col + 1)}, msg, token,
                      hint.empty() ? "copy the whole token exactly as rseqmc run/check printed it after 'schedule:'"
                                   : hint);
  };
  const std::string prefix = kTokenPrefix;
  if (token.compare(0, 3, "rsq") != 0 || token.size() < prefix.size()) {
    throw fail(0, "not an rseqmc schedule token (tokens start with '" + prefix + "')",
               "copy the token printed after 'schedule:' by rseqmc run/check");
  }
  const bool has_placement = token.compare(0, prefix.size(), kTokenPrefix2) == 0;
  if (!has_placement && token.compare(0, prefix.size(), prefix) != 0) {
    throw fail(3, "schedule token version '" + token.substr(3, token.find('.') - 3) + "' is not supported",
               "this rseqmc reads version 1 and 2 tokens ('" + prefix + "...', '" + kTokenPrefix2 + "...')");
  }
  // base64url -> bytes
  std::string bytes;
  uint32_t acc = 0;
  int bits = 0;
  for (size_t i = prefix.size(); i < token.size(); ++i) {
    const char c = token[i];
    int v;
    if (c >= 'A' && c <= 'Z') v = c - 'A';
    else if (c >= 'a' && c <= 'z') v = c - 'a' + 26;
    else if (c >= '0' && c <= '9') v = c - '0' + 52;
    else if (c == '-') v = 62;
    else if (c == '_') v = 63;
    else throw fail(i, std::string("invalid character '") + c + "' in schedule token");
    acc = (acc << 6) | static_cast<uint32_t>(v);
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      bytes.push_back(static_cast<char>((acc >> bits) & 0xff));
    }
  }
  size_t pos = 0;
  auto get = [&](uint64_t limit) -> uint64_t {
    uint64_t v = 0;
    for (int shift = 0; shift < 64; shift += 7) {
      if (pos >= bytes.size()) throw fail(token.size(), "schedule token is truncated");
      const uint8_t b = static_cast<uint8_t>(bytes[pos++]);
      v |= static_cast<uint64_t>(b & 0x7f) << shift;
      if (!(b & 0x80)) {
        if (v > limit) throw fail(prefix.size() + pos * 4 / 3, "schedule token holds an out-of-range value");
        return v;
      }
    }
    throw fail(prefix.size() + pos * 4 / 3, "schedule token holds an over-long number");
  };
  const uint64_t fp = get(0xffffffffu);
  if (fp != ScenarioFingerprint(s)) {
    char buf[96];
    std::snprintf(buf, sizeof buf, "fingerprint %08llx, this scenario is %08x",
                  static_cast<unsigned long long>(fp), ScenarioFingerprint(s));
    throw fail(prefix.size(),
               "schedule token was made for another program (" + std::string(buf) + ")",
               "replay it on the scenario file and -D values it was printed for");
  }
  Schedule out;
  const uint64_t kernel = get(255);
  if (kernel == 0 || kernel > kMaxKernelModel) {
    throw fail(prefix.size(), "schedule token names an unknown kernel model");
  }
  out.kernel = static_cast<KernelModel>(kernel);
  if (has_placement) {
    const size_t at = prefix.size() + pos * 4 / 3;
    out.placement.resize(get(kMaxThreads));
    for (uint8_t& cpu : out.placement) cpu = static_cast<uint8_t>(get(kMaxCpus - 1));
    if (std::optional<std::string> why = ValidatePlacement(s, out.placement)) {
      throw fail(at, "schedule token holds an invalid initial placement: " + *why,
                 "replay it on the scenario file and -D values it was printed for");
    }
  }
  const uint64_t n = get(bytes.size());  // each entry takes >= 3 bytes
  out.entries.reserve(n);
  uint64_t boundary = 0;
  for (uint64_t i = 0; i < n; ++i) {
    boundary += get(uint64_t{1} << 48);
    const uint64_t kc = get(0x3ff);
    const uint64_t arg = get(0x8000);
    const uint64_t kind = kc >> 6;
    if (kind >= kNumDecisionKinds || (kc & 63) >= kMaxCpus) throw fail(prefix.size(), "schedule token holds an invalid decision");
    if (i > 0 && boundary == out.entries.back().boundary && out.entries.back().decision.kind == DecisionKind::kStep) {
      throw fail(prefix.size(), "schedule token holds two decisions after a step at one boundary");
    }
    ScheduleEntry e;
    e.boundary = boundary;
    e.decision.kind = static_cast<DecisionKind>(kind);
    e.decision.cpu = static_cast<int8_t>(kc & 63);
    e.decision.arg = static_cast<int16_t>(static_cast<int64_t>(arg) - 1);
    out.entries.push_back(e);
  }
  if (pos != bytes.size()) throw fail(token.size() - 1, "schedule token has trailing data");
  RejectNonCanonical(EncodeSchedule(s, out), token, fail);
  return out;
}

Decision ReplayScheduler::Choose(const ChoiceView& view) {
  // The machine's boundary index, so that replay stays right whether or not
  // the caller honours defaults_ahead (e.g. a scheduler wrapping this one).
  const uint64_t b = view.machine().boundary();
  while (next_ < schedule_.entries.size() && schedule_.entries[next_].boundary < b) ++next_;
  Decision d = Decision::Step(view.machine().default_cpu());
  if (next_ < schedule_.entries.size() && schedule_.entries[next_].boundary == b) {
    d = schedule_.entries[next_++].decision;
  }
  // Every boundary before the next entry takes the default.
  defaults_ahead = next_ < schedule_.entries.size() ? schedule_.entries[next_].boundary - b - 1 : ~0ull >> 1;
  return d;
}

// ---------------------------------------------------------------------------

namespace {
uint64_t SplitMix(uint64_t& x) {
  uint64_t z = (x += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}
uint32_t Threshold(double p) {
  if (p <= 0) return 0;
  if (p >= 1) return 0xffffffffu;
  return static_cast<uint32_t>(p * 4294967296.0);
}
}  // namespace

RandomScheduler::RandomScheduler(uint64_t seed, RandomOptions options) : seed_(seed), options_(options) {
  Reseed(seed);
  const double p_event = options_.p_preempt + options_.p_migrate + options_.p_signal + options_.p_ipi;
  p_any_ = std::min(1.0, p_event + options_.p_switch_cpu);
  t_event_ = p_any_ > 0 ? Threshold(p_event / p_any_) : 0;
  has_events_ = p_event > 0;
  log1m_p_ = std::log1p(-p_any_);
  if (p_any_ > 0.0625 && p_any_ < 1) {
    // Thresholds T_j = 2^53 - floor(y_j * 2^53), y_j = (1 - p)^j by repeated
    // multiplication (exact IEEE arithmetic: the same table everywhere), while
    // T_j < 2^53, i.e. while some 53-bit draw reaches it. At most about
    // 53 ln 2 / -ln(1 - 1/16) = 570 of them.
    constexpr double kTwo53 = 9007199254740992.0;
    double y = 1.0;
    for (;;) {
      y *= 1.0 - p_any_;
      const uint64_t t = (1ull << 53) - static_cast<uint64_t>(std::floor(y * kTwo53));
      if (t >= (1ull << 53)) break;
      quiet_t_.push_back(t);
    }
    const auto count_at_most = [&](uint64_t x) {
      return static_cast<uint16_t>(std::upper_bound(quiet_t_.begin(), quiet_t_.end(), x) - quiet_t_.begin());
    };
    constexpr int kShift = 53 - kQuietBucketBits;
    for (uint64_t k = 0; k < (1u << kQuietBucketBits); ++k) {
      quiet_lo_.push_back(count_at_most(k << kShift));
      quiet_hi_.push_back(count_at_most(((k + 1) << kShift) - 1));
    }
  }
}

void RandomScheduler::Reseed(uint64_t seed) {
  seed_ = seed;
  uint64_t x = seed;
  for (uint64_t& w : s_) w = SplitMix(x);
}

void RandomScheduler::BeginExecution(const Machine&) {
  defaults_ahead = SampleQuiet();
  SetLocalBoundaries(0);
}

// An injected event at a deviation (the rarer kind, kept out of Choose's
// path for CPU switches): false if the drawn kind has no possible target
// (a migration with no other allowed CPU, a signal with no handler), and the
// deviation becomes a switch.
bool RandomScheduler::ChooseEvent(const Machine& m, Decision& out) {
  const int ncpu = m.num_cpus();
  // Which CPU: uniformly among those running a thread.
  std::array<int8_t, kMaxCpus> running;
  int n = 0;
  for (int c = 0; c < ncpu; ++c) {
    if (m.cpu(c).running >= 0) running[n++] = static_cast<int8_t>(c);
  }
  const int cpu = running[Below(n)];
  const double total = options_.p_preempt + options_.p_migrate + options_.p_signal + options_.p_ipi;
  double x = NextUnit() * total;
  if ((x -= options_.p_preempt) < 0) {
    const int q = static_cast<int>(m.cpu(cpu).queue.size());
    const uint64_t pick = Below(static_cast<uint64_t>(q) + 1);
    out = Decision::Preempt(cpu, pick == 0 ? -1 : m.cpu(cpu).queue[pick - 1]);
    return true;
  }
  if ((x -= options_.p_migrate) < 0) {
    const uint64_t aff = m.thread(m.cpu(cpu).running).affinity & ~(1ull << cpu);
    if (aff != 0) {
      int k = static_cast<int>(Below(static_cast<uint64_t>(std::popcount(aff))));
      uint64_t a = aff;
      while (k-- > 0) a &= a - 1;
      out = Decision::Migrate(cpu, std::countr_zero(a));
      return true;
    }
  } else if ((x -= options_.p_signal) < 0) {
    const auto& sigs = m.scenario().signals;
    int handled = 0;
    for (const SignalSpec& s : sigs) handled += s.handler >= 0;
    if (handled > 0) {
      int k = static_cast<int>(Below(static_cast<uint64_t>(handled)));
      for (const SignalSpec& s : sigs) {
        if (s.handler >= 0 && k-- == 0) {
          out = Decision::Signal(cpu, s.signo);
          return true;
        }
      }
    }
  } else {
    out = Decision::Ipi(cpu);
    return true;
  }
  return false;
}

Decision RandomScheduler::Choose(const ChoiceView& view) {
  // Reads the machine directly (inline accessors): this runs at every boundary.
  const Machine& m = view.machine();
  // Quiet boundaries are normally taken by the machine itself
  // (defaults_ahead); if a caller asks anyway (a scheduler wrapping this one),
  // count them down here.
  if (defaults_ahead > 0) {
    --defaults_ahead;
    return Decision::Step(m.default_cpu());
  }
  // A deviation. Draw the length of the next quiet run first.
  defaults_ahead = SampleQuiet();
  SetLocalBoundaries(m.total_events());
  const uint64_t r = Next();
  // Which deviation: an event with probability p_event / p_any, else a switch.
  Decision event;
  if (static_cast<uint32_t>(r) < t_event_ && m.total_events() < options_.max_events && ChooseEvent(m, event)) {
    return event;
  }
  const int ncpu = m.num_cpus();
  const int cur = m.default_cpu();
  // Another CPU with a thread, uniformly. The mask is built without branches:
  // which CPU is current changes at random, and a branch on it mispredicts.
  // (Counted in the loop: std::popcount is a library call on baseline x86-64.)
  uint64_t others = 0;
  int n = 0;
  for (int c = 0; c < ncpu; ++c) {
    const bool other = (m.cpu(c).running >= 0) & (c != cur);
    others |= static_cast<uint64_t>(other) << c;
    n += other;
  }
  if (n == 0) return Decision::Step(cur);
  for (uint64_t k = Below(static_cast<uint64_t>(n)); k > 0; --k) others &= others - 1;
  return Decision::Step(std::countr_zero(others));
}

}  // namespace rseqmc
