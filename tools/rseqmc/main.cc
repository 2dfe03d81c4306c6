// rseqmc: the command line of the rseq simulator (DESIGN.md §1, §10).
//
//   rseqmc check [FILE...] [options]  model-check within bounds (every built-in without FILE)
//   rseqmc run [FILE] [options]       one execution with its timeline (or every built-in once)
//   rseqmc replay FILE --schedule T   re-run a recorded execution
//   rseqmc crosscheck [FILE...]       compare with the running kernel (JIT + ptrace)
//   rseqmc list                       the built-in scenarios
//   rseqmc import OBJECT              lift rseq sections of an ELF file
//   rseqmc kernels                    the modelled kernel ABIs (--kernel NAME)
//   rseqmc diff-kernels A B FILE      outcomes one ABI reaches and the other not
//   rseqmc help [COMMAND]             help
//
// Exit status: 0 pass, 1 failing verdict, 2 bad usage or input, 3 internal
// error (check: 3 interrupted).
#include <cstdio>
#include <exception>
#include <iostream>
#include <string>
#include <vector>

#include "sim/diag.h"
#include "tools/rseqmc/cli_util.h"
#include "tools/rseqmc/commands.h"

namespace rseqmc::cli {
namespace {

std::string Overview() {
  return "rseqmc - deterministic simulator and model checker for Linux restartable sequences (rseq)\n"
         "\n"
         "usage:\n"
         "  rseqmc check [FILE...] [options]   model-check scenarios within bounds and print a minimal\n"
         "                                     counterexample for each failure; without FILE, check every\n"
         "                                     built-in scenario (one line each)\n"
         "  rseqmc run [FILE] [options]        run one execution of a scenario and print its timeline;\n"
         "                                     without FILE, run every built-in scenario once\n"
         "  rseqmc replay FILE --schedule TOKEN  re-run the execution a token records\n"
         "  rseqmc crosscheck [FILE...] [options]  run scenarios on this machine's kernel (x86-64 JIT,\n"
         "                                     ptrace injection) and compare with the simulator\n"
         "  rseqmc list                        list the built-in scenarios\n"
         "  rseqmc import OBJECT [--function NAME]  lift the rseq critical sections of an x86-64\n"
         "                                     ELF file into the IR and list them\n"
         "  rseqmc kernels                     list the kernel rseq ABIs that --kernel selects\n"
         "  rseqmc diff-kernels A B FILE       outcomes one kernel ABI reaches and the other does not\n"
         "  rseqmc simulate FILE --cost-model FILE  one execution in simulated time: throughput,\n"
         "                                     p50/p99 latency, CPU idle %, memory\n"
         "  rseqmc help [COMMAND]              show help (all commands, or one)\n"
         "\n"
         "FILE is a scenario file in the .rsq format (scenarios/README.md) or the name of a\n"
         "built-in scenario such as percpu_counter or buggy/no_signature.\n";
}

std::string FullHelp() {
  return Overview() + "\n" + CheckHelp() + "\n" + RunHelp() + "\n" + ReplayHelp() + "\n" + CrosscheckHelp() + "\n" + ListHelp() + "\n" +
         ImportHelp() + "\n" + KernelsHelp() + "\n" + DiffKernelsHelp() + "\n" + SimulateHelp();
}

int HelpCommand(const std::vector<std::string>& args) {
  if (args.empty()) {
    std::cout << FullHelp();
    return kExitPass;
  }
  if (args.size() > 1) throw UsageError("help takes at most one command name");
  if (args[0] == "check") {
    std::cout << CheckHelp();
  } else if (args[0] == "run") {
    std::cout << RunHelp();
  } else if (args[0] == "replay") {
    std::cout << ReplayHelp();
  } else if (args[0] == "crosscheck") {
    std::cout << CrosscheckHelp();
  } else if (args[0] == "list") {
    std::cout << ListHelp();
  } else if (args[0] == "import") {
    std::cout << ImportHelp();
  } else if (args[0] == "kernels") {
    std::cout << KernelsHelp();
  } else if (args[0] == "diff-kernels") {
    std::cout << DiffKernelsHelp();
  } else if (args[0] == "simulate") {
    std::cout << SimulateHelp();
  } else if (args[0] == "help") {
    std::cout << Overview();
  } else {
    throw UsageError("no command '" + args[0] + "' (commands: check, run, replay, crosscheck, list, import, kernels, diff-kernels, simulate, help)");
  }
  return kExitPass;
}

// The exit status of a command that returned `code`: kExitUsage, with a
// message, when its report could not be written to stdout (a full disk, a
// closed descriptor): a lost report must not read as "every verdict as
// expected" (0) nor as a failed property (1).
int CheckedExit(int code) {
  std::cout.flush();
  const bool failed = !std::cout || std::fflush(stdout) != 0 || std::ferror(stdout) != 0;
  if (!failed) return code;
  std::cerr << "rseqmc: error: cannot write the report to standard output (is the disk full?)\n"
            << "  hint: redirect the output to a file system with space, or to a pipe\n";
  return kExitUsage;
}

int Dispatch(const std::string& command, const std::vector<std::string>& rest, const std::string& argv0) {
  if (command == "check") return CheckCommand(rest, argv0);
  if (command == "run") return RunCommand(rest, argv0);
  if (command == "crosscheck") return CrosscheckCommand(rest, argv0);
  if (command == "replay") return ReplayCommand(rest, argv0);
  if (command == "list") return ListCommand(rest);
  if (command == "import") return ImportCommand(rest);
  if (command == "kernels") return KernelsCommand(rest);
  if (command == "diff-kernels") return DiffKernelsCommand(rest, argv0);
  if (command == "simulate") return SimulateCommand(rest);
  if (command == "help" || command == "--help" || command == "-h") return HelpCommand(rest);
  if (command.starts_with("-")) throw UsageError("unrecognised option '" + command + "' before the command");
  throw UsageError("unknown command '" + command + "' (commands: check, run, replay, crosscheck, list, import, kernels, diff-kernels, simulate, help)");
}

int Main(int argc, char** argv) {
  const std::string argv0 = argc > 0 && argv[0] != nullptr ? argv[0] : "rseqmc";
  std::vector<std::string> args;
  for (int i = 1; i < argc; ++i) args.emplace_back(argv[i]);
  if (args.empty()) {
    std::cerr << Overview() << "\nrseqmc: no command given; try 'rseqmc help'\n";
    return kExitUsage;
  }
  const std::string command = args[0];
  const std::vector<std::string> rest(args.begin() + 1, args.end());
  const bool known = command == "check" || command == "run" || command == "replay" || command == "crosscheck" || command == "list" ||
                     command == "import" || command == "kernels" || command == "diff-kernels" || command == "simulate" || command == "help";
  try {
    return CheckedExit(Dispatch(command, rest, argv0));
  } catch (const UsageError& e) {
    std::cout.flush();
    std::cerr << "rseqmc" << (known ? " " + command : std::string()) << ": " << e.what() << "\n"
              << "Try 'rseqmc help" << (known && command != "help" ? " " + command : std::string()) << "'.\n";
    return kExitUsage;
  } catch (const InputError& e) {
    std::cout.flush();
    std::cerr << e.Format() << "\n";
    return kExitUsage;
  } catch (const std::exception& e) {
    std::cout.flush();
    std::cerr << "rseqmc: internal error: " << e.what() << "\n";
    return kExitInternal;
  }
}

}  // namespace
}  // namespace rseqmc::cli

int main(int argc, char** argv) { return rseqmc::cli::Main(argc, argv); }
