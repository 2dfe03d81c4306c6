// Diagnostics for bad input: a message that names file, line and column, shows
// the offending line and says how to fix it (DESIGN.md §10). Every input error
// in rseqmc (scenario text, semantic checks, schedule tokens, -D overrides) is
// reported as an InputError and leads to exit code 2.
#ifndef RSEQMC_SIM_DIAG_H_
#define RSEQMC_SIM_DIAG_H_

#include <stdexcept>
#include <string>

#include "sim/ir.h"

namespace rseqmc {

class InputError : public std::runtime_error {
 public:
  // `file` may be empty (C++-built scenario, command line); loc.line 0 = no position.
  InputError(std::string file, SourceLoc loc, std::string message, std::string source_line = "",
             std::string hint = "");
  const std::string& file() const { return file_; }
  SourceLoc loc() const { return loc_; }
  const std::string& message() const { return message_; }
  const std::string& hint() const { return hint_; }
  // "file:line:col: error: message\n  <line>\n  ^\n  hint: ..." (what the CLI prints).
  std::string Format() const;

 private:
  std::string file_;
  SourceLoc loc_;
  std::string message_;
  std::string source_line_;
  std::string hint_;
  std::string formatted_;
};

}  // namespace rseqmc

#endif  // RSEQMC_SIM_DIAG_H_
