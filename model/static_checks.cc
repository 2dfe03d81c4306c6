// Static checks on critical-section descriptors. See model/static_checks.h.
#include "model/static_checks.h"

#include <algorithm>
#include <fstream>
#include <set>
#include <sstream>

#include "scenarios/builtin.h"
#include "scenarios/printer.h"

namespace rseqmc {

namespace {

bool IsKernelCall(Op op) {
  switch (op) {
    case Op::kSchedYield:
    case Op::kSchedSetaffinity:
    case Op::kGetcpu:
    case Op::kTgkill:
    case Op::kMembarrierRseq:
    case Op::kRseqRegister:
    case Op::kRseqUnregister:
    case Op::kFutexWait:
    case Op::kFutexWake:
    case Op::kSleep:
    case Op::kRfcRegion:
    case Op::kRfcCpuPtr:
    case Op::kPreemptLock:
      return true;
    default:
      return false;
  }
}

bool IsBranch(Op op) {
  switch (op) {
    case Op::kBeq:
    case Op::kBne:
    case Op::kBlt:
    case Op::kBge:
    case Op::kBltu:
    case Op::kBgeu:
    case Op::kJmp:
      return true;
    default:
      return false;
  }
}

// "start", "post", or "func+3" for a code index.
std::string Where(const Program& p, uint32_t i) {
  const int f = p.FunctionOf(i);
  if (f >= 0) {
    for (const Label& l : p.functions[f].labels) {
      if (l.index == i) return l.name;
    }
  }
  return p.DescribeIndex(i);
}

class Checker {
 public:
  Checker(const Scenario& s, const StaticCheckOptions& o) : s_(s), p_(s.program), o_(o) {
    sigs_.insert(kRseqSig);
    for (const Instr& in : p_.code) {
      if (in.op == Op::kRseqRegister) sigs_.insert(static_cast<uint32_t>(in.imm));
    }
  }

  std::vector<Finding> Run() {
    for (uint32_t d = 0; d < p_.descriptors.size(); ++d) {
      const CsDescriptor& cs = p_.descriptors[d];
      if (cs.unchecked && !o_.include_unchecked) continue;
      std::vector<Finding> found;
      Check(d, cs, found);
      std::stable_sort(found.begin(), found.end(), [](const Finding& a, const Finding& b) {
        return a.loc.line != b.loc.line ? a.loc.line < b.loc.line : a.loc.column < b.loc.column;
      });
      out_.insert(out_.end(), found.begin(), found.end());
    }
    return std::move(out_);
  }

 private:
  void Add(std::vector<Finding>& found, SourceLoc loc, std::string message, std::string hint) {
    found.push_back({s_.file, loc, std::move(message), std::move(hint)});
  }

  std::string Text(uint32_t i) const { return "`" + PrintInstr(p_, i) + "`"; }

  void Check(uint32_t d, const CsDescriptor& cs, std::vector<Finding>& found) {
    const std::string name = "'" + cs.name + "'";
    const uint32_t start = cs.start, post = cs.post_commit;
    const auto inside = [&](uint32_t i) { return i >= start && i < post; };
    const std::string range = "[" + Where(p_, start) + ", " + Where(p_, post) + ")";

    if (post <= start) {
      Add(found, cs.loc, "critical section " + name + " is empty (start_ip == post_commit): no instruction is ever inside it",
          "put the post_commit label right after the commit store");
    }
    // Kernel calls and calls inside the section.
    for (uint32_t i = start; i < post && i < p_.code.size(); ++i) {
      const Instr& in = p_.code[i];
      if (IsKernelCall(in.op)) {
        Add(found, in.loc,
            "kernel call " + Text(i) + " inside critical section " + name + " " + range +
                ": a system call in a section is undefined (rule 19: debug kernels kill the process, legacy ones "
                "abort the section only if the call slept)",
            "make the call before `rseq_arm " + cs.name + "` or after the commit");
      } else if (in.op == Op::kCall) {
        Add(found, in.loc,
            Text(i) + " inside critical section " + name + " " + range +
                ": the callee runs outside the section's IP range, where preemption, migration and signals do not "
                "abort it, so the section is unprotected while the callee runs",
            "inline the callee into the section, or call it before `rseq_arm " + cs.name + "` or after the commit");
      } else if (in.op == Op::kRseqArm && in.target == d) {
        Add(found, in.loc, Text(i) + " inside its own critical section " + name + " " + range,
            "arm the descriptor once, right before its start label");
      }
    }
    // Branches and calls into the section from outside, except to start_ip.
    for (uint32_t j = 0; j < p_.code.size(); ++j) {
      if (inside(j)) continue;
      const Instr& in = p_.code[j];
      uint32_t target;
      if (IsBranch(in.op)) {
        target = in.target;
      } else if (in.op == Op::kCall && in.target < p_.functions.size()) {
        target = p_.functions[in.target].first;
      } else {
        continue;
      }
      if (!inside(target) || target == start) continue;
      Add(found, in.loc,
          Text(j) + " enters critical section " + name + " " + range + " at " + Where(p_, target) +
              ", not at its start_ip " + Where(p_, start) +
              ": the entry skips the cpu_id check and the kernel may have cleared rseq_cs since the arm",
          "branch to the instruction that arms the section (`rseq_arm " + cs.name + "`) or to " + Where(p_, start));
    }
    // The commit: a single store, the section's last instruction (rule 21).
    if (post > start && post - 1 < p_.code.size()) {
      const Instr& last = p_.code[post - 1];
      if (last.op != Op::kSt && last.op != Op::kSt32) {
        Add(found, last.loc,
            "the last instruction of critical section " + name + " is " + Text(post - 1) +
                ", not a store: the commit must be the single store right before post_commit (rule 21)",
            "end the section with the store that publishes the operation");
      }
    }
    // A 2015-RFC region is registered once, never armed, and has no
    // signature (reference/rfc2015.md "ABI"): nothing below applies.
    if (cs.region) return;
    // rseq_arm before start_ip, in the descriptor's function.
    bool armed_before = false;
    uint32_t nearest = 0;  // the last rseq_arm of d before start in its function
    std::string elsewhere;
    for (uint32_t i = 0; i < p_.code.size(); ++i) {
      const Instr& in = p_.code[i];
      if (in.op != Op::kRseqArm || in.target != d || inside(i)) continue;
      const int f = p_.FunctionOf(i);
      if (f == static_cast<int>(cs.function) && i < start) {
        armed_before = true;
        nearest = i;
      } else if (elsewhere.empty() && f >= 0 && f != static_cast<int>(cs.function)) {
        elsewhere = p_.functions[f].name;
      }
    }
    if (!armed_before) {
      const std::string fn = cs.function < p_.functions.size() ? p_.functions[cs.function].name : "?";
      Add(found, cs.loc,
          "critical section " + name + " is not armed: no `rseq_arm " + cs.name + "` before " + Where(p_, start) +
              " in function " + fn +
              (elsewhere.empty() ? "" : " (it is armed in function " + elsewhere + ")") +
              ", so rseq_cs may not point at it when the section runs",
          "add `rseq_arm " + cs.name + "` right before the " + Where(p_, start) + " label (§2.4 step [1])");
    } else if (nearest + 1 != start) {
      // A boundary between the arm and start_ip is outside the section: an
      // event there makes the kernel clear rseq_cs (lazy clear, rule 7) and
      // the section then runs unprotected.
      const uint32_t gap = start - nearest - 1;
      Add(found, p_.code[nearest].loc,
          Text(nearest) + " is not right before " + Where(p_, start) + ": a preemption, migration or signal at the " +
              std::to_string(gap) + (gap == 1 ? " instruction" : " instructions") +
              " in between lets the kernel clear rseq_cs (lazy clear, rule 7) and critical section " + name +
              " then runs unprotected",
          "move `rseq_arm " + cs.name + "` right before the " + Where(p_, start) + " label");
    }
    // abort_ip outside, preceded by the signature (rules 15, 17).
    if (inside(cs.abort)) {
      Add(found, cs.loc, "abort label " + Where(p_, cs.abort) + " of " + name + " lies inside the section " + range,
          "place the abort handler outside [start, post_commit), after a `sig 0x53053053`");
    }
    const bool sig_ok = cs.abort > 0 && cs.abort - 1 < p_.code.size() && p_.code[cs.abort - 1].op == Op::kSig &&
                        sigs_.count(static_cast<uint32_t>(p_.code[cs.abort - 1].imm)) != 0;
    if (!sig_ok) {
      Add(found, cs.loc,
          "abort label " + Where(p_, cs.abort) + " of " + name +
              " is not preceded by the signature: the kernel validates the 4 bytes before abort_ip on every "
              "evaluation and kills the process with SIGSEGV (rules 15, 17)",
          "put `sig 0x53053053` right before the " + Where(p_, cs.abort) + " label");
    }
  }

  const Scenario& s_;
  const Program& p_;
  const StaticCheckOptions& o_;
  std::set<uint32_t> sigs_;
  std::vector<Finding> out_;
};

// Line `line` (1-based) of the finding's file: the file on disk, else a
// built-in's embedded text; "" if neither is available.
std::string SourceLine(const std::string& file, uint32_t line) {
  if (file.empty() || line == 0) return "";
  std::string text;
  if (std::ifstream in(file); in) {
    std::stringstream ss;
    ss << in.rdbuf();
    text = ss.str();
  } else if (const BuiltinScenario* b = FindBuiltinScenario(file)) {
    text = std::string(b->text);
  } else {
    return "";
  }
  std::istringstream lines(text);
  std::string l;
  for (uint32_t n = 1; std::getline(lines, l); ++n) {
    if (n == line) return l;
  }
  return "";
}

}  // namespace

std::vector<Finding> StaticCheck(const Scenario& s, const StaticCheckOptions& options) {
  return Checker(s, options).Run();
}

std::string FormatFinding(const Finding& f) {
  std::string s;
  if (!f.file.empty()) s += f.file + ":";
  if (f.loc.line != 0) {
    s += std::to_string(f.loc.line) + ":";
    if (f.loc.column != 0) s += std::to_string(f.loc.column) + ":";
  }
  if (!s.empty()) s += " ";
  s += "error: " + f.message + "\n";
  const std::string line = SourceLine(f.file, f.loc.line);
  if (!line.empty()) {
    s += "  " + line + "\n";
    if (f.loc.column != 0) s += "  " + std::string(f.loc.column - 1, ' ') + "^\n";
  }
  if (!f.hint.empty()) s += "  hint: " + f.hint + "\n";
  return s;
}

}  // namespace rseqmc
