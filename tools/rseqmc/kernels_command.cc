// `rseqmc kernels`: the kernel rseq ABIs the simulator models (sim/kernel/abi.h).
#include <cstdio>
#include <iostream>
#include <string>
#include <vector>

#include "sim/kernel/abi.h"
#include "sim/kernel_model.h"
#include "tools/rseqmc/cli_util.h"
#include "tools/rseqmc/commands.h"

namespace rseqmc::cli {

std::string KernelsHelp() {
  return "usage: rseqmc kernels\n"
         "\n"
         "Lists the kernel rseq ABIs that --kernel selects for check, run, replay and\n"
         "crosscheck, one block each: the name to pass to --kernel (any version in the\n"
         "range works too, e.g. --kernel 5.10), the kernel versions it stands for, what\n"
         "it does differently, and the kernel source it follows. The default (marked *)\n"
         "is the running kernel's ABI.\n"
         "\n"
         "Options of kernels:\n"
         "  -h [ --help ]         Show this help.\n"
         "\n"
         "Exit status: 0.\n";
}

int KernelsCommand(const std::vector<std::string>& args) {
  for (const std::string& arg : args) {
    if (arg == "--help" || arg == "-h") {
      std::cout << KernelsHelp();
      return kExitPass;
    }
    throw UsageError(arg.starts_with("-") ? "unrecognised option '" + arg + "'"
                                          : "unexpected argument '" + arg + "' (kernels takes none)");
  }
  const KernelModel running = DefaultKernelVersion().model;
  for (const KernelAbi* abi : AllAbis()) {
    const KernelAbiInfo& i = abi->info();
    std::printf("%s %-7s %-10s %s\n", i.model == running ? "*" : " ", i.name, i.versions, i.description);
    std::printf("  %-7s %-10s source: %s\n", "", "", i.source);
  }
  return kExitPass;
}

}  // namespace rseqmc::cli
