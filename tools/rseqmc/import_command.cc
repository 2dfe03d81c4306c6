// `rseqmc import OBJECT [--function NAME]...`: what the ELF importer
// (import/lift.h) finds in a compiled file and the IR it lifts, instruction
// by instruction next to the machine code (objdump -d style).
#include <algorithm>
#include <iostream>
#include <string>
#include <vector>

#include "import/elf_object.h"
#include "import/lift.h"
#include "scenarios/printer.h"
#include "sim/builder.h"
#include "tools/rseqmc/cli_util.h"
#include "tools/rseqmc/commands.h"

namespace rseqmc::cli {
namespace {

// The functions holding a descriptor's start_ip, in address order.
std::vector<std::string> FunctionsWithSections(const import::ElfObject& obj) {
  std::vector<std::string> names;
  for (const import::RseqCsEntry& e : obj.descriptors()) {
    const import::FunctionSymbol* f = obj.FunctionAt(e.start_ip);
    if (f != nullptr && std::find(names.begin(), names.end(), f->name) == names.end()) names.push_back(f->name);
  }
  return names;
}

void PrintDescriptors(const import::ElfObject& obj) {
  std::cout << "descriptors (__rseq_cs): " << obj.descriptors().size() << "\n";
  for (const import::RseqCsEntry& e : obj.descriptors()) {
    std::cout << "  " << obj.Describe(e.address) << ": version " << e.version << ", flags " << e.flags
              << ", start_ip " << obj.Describe(e.start_ip) << ", post_commit_offset " << e.post_commit_offset
              << ", abort_ip " << obj.Describe(e.abort_ip) << "\n";
  }
  for (const auto& [from, to] : obj.exit_points()) {
    std::cout << "  exit point (__rseq_exit_point_array): " << obj.Describe(from) << " -> " << obj.Describe(to)
              << "\n";
  }
}

}  // namespace

std::string ImportHelp() {
  return "rseqmc import OBJECT [--function NAME]...\n"
         "  Reads an x86-64 ELF file (.o, .so or executable), lists its rseq descriptors\n"
         "  (__rseq_cs, __rseq_cs_ptr_array, __rseq_exit_point_array) and lifts each named\n"
         "  function (default: every function holding a critical section) with its abort\n"
         "  handlers into the IR, printed under each machine instruction. A scenario uses\n"
         "  them with `import \"OBJECT\" function NAME` (scenarios/README.md). Unsupported\n"
         "  instructions are an error naming the address and the instruction (exit 2); the\n"
         "  supported subset is listed in import/lift.h.\n";
}

int ImportCommand(const std::vector<std::string>& args) {
  std::string path;
  std::vector<std::string> names;
  for (size_t i = 0; i < args.size(); ++i) {
    if (args[i] == "--function") {
      if (i + 1 >= args.size()) throw UsageError("--function needs a function name");
      names.push_back(args[++i]);
    } else if (args[i].starts_with("-")) {
      throw UsageError("unrecognised option '" + args[i] + "'");
    } else if (path.empty()) {
      path = args[i];
    } else {
      throw UsageError("import takes one OBJECT (got '" + path + "' and '" + args[i] + "')");
    }
  }
  if (path.empty()) throw UsageError("import needs an OBJECT file");
  try {
    const import::ElfObject obj = import::ElfObject::Open(path);
    PrintDescriptors(obj);
    if (names.empty()) names = FunctionsWithSections(obj);
    if (names.empty()) {
      std::cout << "no function holds a critical section; name one with --function\n";
      return kExitPass;
    }
    ScenarioBuilder b("import", path);
    auto lifted = import::ImportFunctions(obj, names, b);
    b.Thread("t0", lifted[0].name, 0);
    Scenario s = b.Build();
    import::FinishImport(lifted, s);
    for (const import::ImportedFunction& f : lifted) {
      const Function& fn = s.program.functions[s.program.FindFunction(f.name)];
      std::cout << "\nfunction " << f.name << ": " << f.code.size() << " machine instructions, " << fn.count
                << " IR instructions; temporaries r" << f.temps[0] << ", r" << f.temps[1] << ", r" << f.temps[2]
                << "\n";
      for (const std::string& cs : f.descriptors) {
        const CsDescriptor& d = s.program.descriptors[s.program.FindDescriptor(cs)];
        std::cout << "  cs " << cs << " start=" << s.program.DescribeIndex(d.start)
                  << " post_commit=" << s.program.DescribeIndex(d.post_commit)
                  << " abort=" << s.program.DescribeIndex(d.abort) << "\n";
      }
      for (const import::NativeInstr& n : f.code) {
        std::cout << "  " << n.Listing() << "\n";
        for (uint32_t k = 0; k < n.ir_count; ++k) {
          std::cout << "        " << PrintInstr(s.program, fn.first + n.first_ir + k) << "\n";
        }
      }
    }
  } catch (const import::ImportError& e) {
    std::cout.flush();
    std::cerr << "rseqmc import: error: " << e.what() << "\n"
              << "  hint: "
              << (!e.hint().empty() ? e.hint()
                                    : "`rseqmc import FILE` without --function lists the functions with a critical "
                                      "section; import/lift.h lists the supported instructions")
              << "\n";
    return kExitUsage;
  }
  return kExitPass;
}

}  // namespace rseqmc::cli
