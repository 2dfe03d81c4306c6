// Helpers shared by the rseqmc subcommands: strict number and -D parsing,
// loading a scenario from a file or the built-in set, shell quoting.
#ifndef RSEQMC_TOOLS_RSEQMC_CLI_UTIL_H_
#define RSEQMC_TOOLS_RSEQMC_CLI_UTIL_H_

#include <cstdint>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "sim/kernel_model.h"
#include "sim/scenario.h"

namespace rseqmc::cli {

// Exit codes of every subcommand.
inline constexpr int kExitPass = 0;         // the execution(s) passed / the command succeeded
inline constexpr int kExitFail = 1;         // a property or assert failed, the process was killed, ...
inline constexpr int kExitUsage = 2;        // bad command line or bad input (scenario, token, -D)
inline constexpr int kExitInternal = 3;     // a bug in rseqmc (unexpected exception)
inline constexpr int kExitInterrupted = 3;  // stopped by Ctrl-C (SIGINT), or diff-kernels incomplete: a partial report

// A command-line mistake (unknown flag, malformed value). The CLI prints
// "rseqmc <command>: <what>" and a pointer to the command's help, then exits 2.
class UsageError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Parses a whole string as an unsigned 64-bit integer: decimal digits, or
// 0x/0X and hex digits. Returns nullopt on anything else (empty, a sign,
// trailing characters, overflow).
std::optional<uint64_t> ParseUint64(const std::string& text);

// Parses a byte count: an unsigned integer with an optional K, M, G or T
// suffix (powers of 1024; "512M", "2G"). Returns nullopt on anything else or
// on overflow.
std::optional<uint64_t> ParseByteSize(const std::string& text);

// Parses a non-negative decimal number of seconds ("10", "0.5"). Returns
// nullopt on anything else (a sign, an exponent, trailing characters).
std::optional<double> ParseSeconds(const std::string& text);

// Parses the -D arguments ("NAME=VALUE", see ParseDefine in scenarios/parser.h)
// into a map; a later definition of the same NAME wins. Throws InputError
// naming the bad argument.
std::map<std::string, int64_t> ParseDefines(const std::vector<std::string>& args);

// Loads the scenario `file_or_name`: a path to an existing .rsq file, else the
// name of a built-in scenario (scenarios/builtin.h), with `defines` (-D)
// replacing constants. Throws InputError for a missing file/name, a parse or
// validation error, or a -D naming no constant of the scenario.
Scenario LoadScenario(const std::string& file_or_name, const std::map<std::string, int64_t>& defines);

// The kernel model to use: `chosen` (--kernel) if given, else the running
// kernel's (with a note on stderr when it is not modelled).
KernelVersion ChosenKernel(const std::optional<KernelVersion>& chosen);
// The same for scenario `s`: without --kernel, a scenario that the default
// ABI cannot run (KernelAbi::NotApplicable: a 2015-RFC program) runs under
// the first ABI of `rseqmc kernels` that can. An explicit --kernel is kept
// (the Machine then rejects the pair with exit 2).
KernelVersion ChosenKernel(const std::optional<KernelVersion>& chosen, const Scenario& s);
// `k` if its ABI can run `s`, else the first ABI of `rseqmc kernels` that can.
KernelVersion ApplicableKernel(const KernelVersion& k, const Scenario& s);

// --html OUT, checked when the options are read (before any exploration) and
// again before writing: throws InputError (exit 2) naming OUT when it is an
// existing regular file that is neither empty nor a timeline page rseqmc
// wrote (sim/trace_html.h IsTimelineHtml). Nothing the user made is
// overwritten; a page of an earlier run is, so a command can be re-run.
void CheckHtmlTarget(const std::string& path);

// Writes the timeline page `page` to `path` (--html) after CheckHtmlTarget,
// replacing an earlier page. A regular file is written whole or not at all
// (a temporary file beside it, renamed over it): an interrupted run never
// leaves half a page. Throws InputError naming the file when it may not or
// cannot be written.
void WriteHtmlFile(const std::string& path, const std::string& page);

// `s` as a JSON string literal (quotes, backslashes and control characters escaped).
std::string JsonQuote(const std::string& s);

// "pass" or "fail <verdict>", the way a scenario's `expect` line spells it.
std::string ExpectText(Verdict v);

}  // namespace rseqmc::cli

#endif  // RSEQMC_TOOLS_RSEQMC_CLI_UTIL_H_
