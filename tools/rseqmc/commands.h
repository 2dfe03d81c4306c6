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

// `rseqmc replay FILE --schedule TOKEN [options]`: re-runs one recorded
// execution and prints it as `run --schedule` does (shares its code).
int ReplayCommand(const std::vector<std::string>& args, const std::string& argv0);
std::string ReplayHelp();

// `rseqmc check [FILE...] [options]`: model-checks each FILE (or every built-in
// scenario) within bounds, compares the verdict with the scenario's `expect`,
// and prints a minimal counterexample for each failure. Exit status 0 every
// verdict as expected, 1 a mismatch, 2 usage/input error, 3 interrupted.
int CheckCommand(const std::vector<std::string>& args, const std::string& argv0);
std::string CheckHelp();

// `rseqmc crosscheck [FILE...] [options]`: runs scenarios on the running kernel
// (kernel/harness/crosscheck.h) and compares with the simulator. Exit status 0
// all agree, 1 a disagreement, 2 usage/input error, 3 interrupted, 77 rseq or
// ptrace unavailable.
int CrosscheckCommand(const std::vector<std::string>& args, const std::string& argv0);
std::string CrosscheckHelp();

// `rseqmc list`: one line per built-in scenario (name, expected verdict,
// description).
int ListCommand(const std::vector<std::string>& args);
std::string ListHelp();

// `rseqmc import OBJECT [--function NAME]...`: the rseq descriptors of an
// x86-64 ELF file and the IR lifted from its functions (import/lift.h). Exit
// 0, or 2 on bad usage or an unsupported file or instruction.
int ImportCommand(const std::vector<std::string>& args);
std::string ImportHelp();

// `rseqmc kernels`: one block per modelled kernel ABI (name, versions,
// description, source); the running kernel's is marked.
int KernelsCommand(const std::vector<std::string>& args);
std::string KernelsHelp();

// `rseqmc diff-kernels A B FILE`: outcomes reachable under one kernel ABI and
// not the other, each with a replay command. Exit 0 same, 1 different.
int DiffKernelsCommand(const std::vector<std::string>& args, const std::string& argv0);
std::string DiffKernelsHelp();

// `rseqmc simulate FILE --cost-model FILE [--seed N]`: one execution in
// simulated time (sim/timed_scheduler.h) with its throughput, latency, idle %
// and memory figures. Exit 0 pass, 1 failing verdict, 2 usage/input error.
int SimulateCommand(const std::vector<std::string>& args);
std::string SimulateHelp();

}  // namespace rseqmc::cli

#endif  // RSEQMC_TOOLS_RSEQMC_COMMANDS_H_
