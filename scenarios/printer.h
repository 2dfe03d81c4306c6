// The `.rsq` printer: canonical text for a scenario or one instruction.
//
// PrintScenario writes a scenario in the format of scenarios/README.md so that
// ParseScenario(PrintScenario(s), ...) == s for every scenario the parser or
// the builder produces (Scenario's operator== ignores source positions).
// Canonical means: statements in a fixed order (scenario, description, cpus,
// nodes, const, var/percpu, scratch, func, thread, signal, property, expect),
// constants with their current (possibly -D overridden) values, replicated
// threads written out one by one, immediates in decimal (signatures in hex),
// property expressions with only the parentheses precedence needs.
//
// What cannot be printed, and so does not round-trip:
//   * native (C++) threads: printed as a comment line and otherwise omitted;
//   * names that are not identifiers ([A-Za-z_][A-Za-z0-9_.]*), which only the
//     C++ builder can create, are printed as they are;
//   * a branch or descriptor that refers to an instruction without a label (a
//     hand-assembled Program) gets a synthesized label `_L<index>`, which then
//     also appears in the re-parsed Function::labels.
//
// Example:
//
//     std::string text = PrintScenario(ParseScenarioFile("scenarios/percpu_counter.rsq"));
//     std::cout << PrintInstr(s.program, 7) << "\n";   // "bne r3, r1, abort"
#ifndef RSEQMC_SCENARIOS_PRINTER_H_
#define RSEQMC_SCENARIOS_PRINTER_H_

#include <cstdint>
#include <string>

#include "sim/scenario.h"

namespace rseqmc {

// The whole scenario as `.rsq` text (ends with a newline).
std::string PrintScenario(const Scenario& s);

// The text of instruction `global_index` of `p`, without indentation or label,
// e.g. "st [r2], r4" or "tgkill 1, SIGUSR1" (a Program does not know thread
// names, so tgkill shows the thread index). Never fails: an index out of range
// or a corrupt reference prints as "<invalid ...>".
std::string PrintInstr(const Program& p, uint32_t global_index);

// One property expression in the text syntax ("sum(counter) == THREADS * OPS").
std::string PrintExpr(const Expr& e);

}  // namespace rseqmc

#endif  // RSEQMC_SCENARIOS_PRINTER_H_
