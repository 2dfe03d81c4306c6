// Helpers for reporting bad input (shared by the builder, the semantic checks
// and the text parser): a list that collects problems and throws the first one
// in source order as an InputError, and a cheap "did you mean" suggestion.
//
// Example:
//
//     ProblemList problems(s.file);
//     if (f < 0) problems.Add(ref.loc, "undefined function 'incr'", DidYouMean("incr", names));
//     problems.ThrowIfAny();  // throws InputError for the earliest problem
#ifndef RSEQMC_SIM_PROBLEMS_H_
#define RSEQMC_SIM_PROBLEMS_H_

#include <string>
#include <string_view>
#include <vector>

#include "sim/ir.h"

namespace rseqmc {

class ProblemList {
 public:
  explicit ProblemList(std::string file) : file_(std::move(file)) {}
  // Records a problem at `loc` (line 0 = position unknown).
  void Add(SourceLoc loc, std::string message, std::string hint = "");
  bool empty() const { return problems_.empty(); }
  // Throws InputError for the problem that comes first in the source (problems
  // without a position come after positioned ones, in the order they were
  // added). Does nothing when the list is empty.
  void ThrowIfAny() const;

 private:
  struct Problem {
    SourceLoc loc;
    std::string message;
    std::string hint;
  };
  std::string file_;
  std::vector<Problem> problems_;
};

// "did you mean 'retry'?" when one of `candidates` is a plausible misspelling of
// `name` (small edit distance), else "". Bounded work: very long names and very
// long candidate lists are not searched.
std::string DidYouMean(std::string_view name, const std::vector<std::string>& candidates);

// "a, b, c" (at most `max` names, then ", ...").
std::string JoinNames(const std::vector<std::string>& names, size_t max = 12);

}  // namespace rseqmc

#endif  // RSEQMC_SIM_PROBLEMS_H_
