// `rseqmc list`: the built-in scenarios with their declared verdicts.
#include <algorithm>
#include <cstdio>
#include <iostream>
#include <string>
#include <vector>

#include "scenarios/builtin.h"
#include "scenarios/parser.h"
#include "sim/diag.h"
#include "sim/kernel/abi.h"
#include "tools/rseqmc/cli_util.h"
#include "tools/rseqmc/commands.h"

namespace rseqmc::cli {

std::string ListHelp() {
  return "usage: rseqmc list\n"
         "\n"
         "Lists the built-in scenarios (embedded from scenarios/*.rsq and scenarios/buggy/*.rsq),\n"
         "one line each: the name to give 'rseqmc run', the verdict the scenario declares\n"
         "(planted bugs under buggy/ declare a failure) and its description.\n"
         "\n"
         "Options of list:\n"
         "  -h [ --help ]         Show this help.\n"
         "\n"
         "Exit status: 0, or 2 if a built-in scenario does not parse (the error goes to stderr).\n";
}

int ListCommand(const std::vector<std::string>& args) {
  for (const std::string& arg : args) {
    if (arg == "--help" || arg == "-h") {
      std::cout << ListHelp();
      return kExitPass;
    }
    throw UsageError(arg.starts_with("-") ? "unrecognised option '" + arg + "'"
                                          : "unexpected argument '" + arg + "' (list takes none)");
  }
  const std::vector<BuiltinScenario>& all = BuiltinScenarios();
  if (all.empty()) {
    std::cout << "no built-in scenarios (add .rsq files under scenarios/ and rebuild)\n";
    return kExitPass;
  }
  size_t width = 8;
  for (const BuiltinScenario& b : all) width = std::max(width, b.name.size());
  int errors = 0;
  for (const BuiltinScenario& b : all) {
    try {
      const Scenario s = ParseScenario(b.text, b.path);
      std::string per_kernel;  // `expect ... on KERNEL` overrides
      for (const Scenario::KernelExpectation& e : s.expected_on) {
        per_kernel += std::string(per_kernel.empty() ? " [" : ", ") + AbiFor(e.kernel).info().name + ": " +
                      ExpectText(e.verdict);
      }
      if (!per_kernel.empty()) per_kernel += "]";
      std::printf("%-*s  %-14s %s%s\n", static_cast<int>(width), b.name.c_str(), ExpectText(s.expected).c_str(),
                  s.description.c_str(), per_kernel.c_str());
    } catch (const InputError& e) {
      ++errors;
      std::fflush(stdout);
      std::cerr << e.Format() << "\n";
      std::printf("%-*s  %-14s %s\n", static_cast<int>(width), b.name.c_str(), "input-error", "(does not parse)");
    }
    std::fflush(stdout);
  }
  return errors > 0 ? kExitUsage : kExitPass;
}

}  // namespace rseqmc::cli
