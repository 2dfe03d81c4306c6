// The `.rsq` scenario parser (format: scenarios/README.md).
//
// A hand-written lexer and recursive-descent parser that feeds the C++ builder
// (sim/builder.h), so a parsed scenario is resolved, laid out and validated
// exactly like a built one. Every problem, lexical, syntactic or semantic, is an
// InputError naming file:line:column, showing the offending line and, where it
// can, saying how to fix it (DESIGN.md §10). The parser never crashes, hangs or
// recurses without bound on any input: expression nesting, integer overflow,
// thread replication, array sizes and CPU counts are all limited.
//
// Example:
//
//     Scenario s = ParseScenarioFile("scenarios/percpu_counter.rsq", {{"THREADS", 4}});
//     // or, from memory:
//     Scenario t = ParseScenario(text, "inline.rsq");
#ifndef RSEQMC_SCENARIOS_PARSER_H_
#define RSEQMC_SCENARIOS_PARSER_H_

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "sim/scenario.h"

namespace rseqmc {

// Parses scenario `text`; `file` is the name used in diagnostics and stored in
// Scenario::file. `defines` (the command line's -D NAME=VALUE) replace the
// values of the scenario's `const` declarations (Constant::overridden is set);
// naming a constant the scenario does not declare is an InputError.
// Throws InputError on any problem.
Scenario ParseScenario(std::string_view text, const std::string& file,
                       const std::map<std::string, int64_t>& defines = {});

// Reads and parses the file at `path` (see ParseScenario). An unreadable file
// is an InputError naming it.
Scenario ParseScenarioFile(const std::string& path, const std::map<std::string, int64_t>& defines = {});

// Parses one property expression (the text after `property`, e.g.
// "sum(counter) == THREADS * OPS"); names of `constants` become constant
// nodes, every other name a symbol. No semantic check is made (see
// ValidateScenario). Positions are on line 1 of `file`. Throws InputError.
Expr ParsePropertyExpr(std::string_view text, const std::vector<Constant>& constants = {},
                       const std::string& file = "<property>");

// Parses a command-line define "NAME=VALUE" (VALUE: decimal or 0x hex, optional
// leading '-'). Throws InputError (no file or position) when malformed.
std::pair<std::string, int64_t> ParseDefine(std::string_view arg);

}  // namespace rseqmc

#endif  // RSEQMC_SCENARIOS_PARSER_H_
