// The rseqmc subcommands. Each takes the arguments after its name, writes its
// report to stdout and diagnostics to stderr, and returns the process exit code
// (tools/rseqmc/cli_util.h: 0 pass, 1 failing verdict, 2 usage/input error).
// Usage mistakes are thrown as cli::UsageError and input errors as InputError;
// main() turns both into exit code 2.
#ifndef RSEQMC_TOOLS_RSEQMC_COMMANDS_H_
#define RSEQMC_TOOLS_RSEQMC_COMMANDS_H_

#include <string>
#include <vector>

namespace rseqmc::cli {

// `rseqmc run [FILE] [options]`: one execution of FILE (a .rsq file or a
// built-in name) with its timeline, or, without FILE, one execution of every
// built-in scenario with a summary line each. `argv0` is how the binary was
// invoked (printed in the replay command line).
int RunCommand(const std::vector<std::string>& args, const std::string& argv0);
// The help text of `run`, listing every flag.
std::string RunHelp();

// `rseqmc list`: one line per built-in scenario (name, expected verdict,
// description).
int ListCommand(const std::vector<std::string>& args);
std::string ListHelp();

}  // namespace rseqmc::cli

#endif  // RSEQMC_TOOLS_RSEQMC_COMMANDS_H_
