// Spellings shared by the `.rsq` parser and printer (scenarios/README.md), kept
// in one place so that whatever the printer writes the parser reads back. The
// printer spells opcodes, struct rseq fields, comparisons and verdicts with
// OpName, RseqFieldName, CmpName and VerdictName (sim/ir.h, sim/scenario.h);
// the lookups here are their inverses. Also identifiers and string quoting.
#ifndef RSEQMC_SCENARIOS_SYNTAX_H_
#define RSEQMC_SCENARIOS_SYNTAX_H_

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "sim/ir.h"
#include "sim/scenario.h"

namespace rseqmc::syntax {

// The Op whose OpName is `word` ("li", "rseq_load", ...), and all mnemonics.
std::optional<Op> LookupMnemonic(std::string_view word);
const std::vector<std::string>& AllMnemonics();

// The field whose RseqFieldName is `word` ("cpu_id_start", ...), and all names.
std::optional<RseqField> LookupField(std::string_view word);
const std::vector<std::string>& AllFieldNames();

// The failure verdict whose VerdictName is `word` (the word after `expect
// fail`: "property", "assert", ...); never kPass.
std::optional<Verdict> LookupVerdict(std::string_view word);

// add..mul (`op rd, rs, rt|IMM`) and beq..bgeu (`op rs, rt|IMM, LABEL`).
bool IsAlu(Op op);
bool IsConditionalBranch(Op op);

// [A-Za-z_][A-Za-z0-9_.]*
bool IsIdentStart(char c);
bool IsIdentChar(char c);
bool IsIdentifier(std::string_view s);
// "r0".."r99...": the spelling of a register (whether or not in range).
bool LooksLikeRegister(std::string_view s);

// A string literal: quotes, with `\"`, `\\`, `\n`, `\t`, `\r` and `\xHH` for
// other control bytes (what the lexer accepts).
std::string QuoteString(std::string_view s);

}  // namespace rseqmc::syntax

#endif  // RSEQMC_SCENARIOS_SYNTAX_H_
