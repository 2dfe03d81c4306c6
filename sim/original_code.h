// The original machine code of a scenario's imported functions (issue 16),
// ready for the real-kernel harness to map and run instead of the JIT of
// their lifted IR (`rseqmc crosscheck --original-bytes`, kernel/README.md).
//
// Plain data: import/lift.h (FinishImport) fills it from the ELF file, the
// harness (kernel/harness/jit.h) maps it; sim/ itself never runs it.
//
// Addresses are run addresses: the file's flat addresses (import/elf_object.h)
// plus a per-file load bias, so that every file of a scenario has its own
// range, clear of the data symbols at kDataBase. The segments are the file's
// executable sections and its `__rseq_cs` section, with the relocations
// applied for that bias (System V x86-64 psABI §4.4: R_X86_64_PC32/PLT32 as
// S + A - P, R_X86_64_64 as S + A, R_X86_64_RELATIVE as B + A), so the
// descriptors point into the mapped code and a `lea DESCRIPTOR(%rip)` in the
// code yields the mapped descriptor.
#ifndef RSEQMC_SIM_ORIGINAL_CODE_H_
#define RSEQMC_SIM_ORIGINAL_CODE_H_

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace rseqmc {

// One section's bytes at its run address.
struct OriginalSegment {
  std::string name;           // section name, for error messages
  uint64_t address = 0;       // run address of bytes[0]
  std::vector<uint8_t> bytes;
  bool executable = false;    // mapped read+execute; otherwise read-only
};

// An imported function: the IR function it was lifted into and its entry.
struct OriginalFunction {
  uint32_t function = 0;      // index into Program::functions
  uint64_t entry = 0;         // run address of its first machine instruction
  // Empty when the harness can run it; else why not, in words: its code
  // uses a register the System V ABI makes callee-saved (rbx, rbp, r12-r15),
  // where the harness keeps its own state (import/lift.h refuses push/pop,
  // so a function cannot save them), or holds a relocation the importer
  // does not apply.
  std::string not_runnable;
};

struct OriginalCode {
  std::vector<OriginalSegment> segments;
  std::vector<OriginalFunction> functions;
  // The run address of each machine instruction, keyed by the global IR index
  // of the first IR instruction it was lifted into. IR instructions of
  // imported functions that are not keys here are the 2nd, 3rd... IR
  // instruction of one machine instruction: no machine boundary exists there.
  std::map<uint32_t, uint64_t> instr_address;
  // Run addresses of the abort_ip of every imported descriptor.
  std::vector<uint64_t> abort_ips;

  bool empty() const { return functions.empty(); }
  // The OriginalFunction of IR function `f`, nullptr if it is not imported.
  const OriginalFunction* Find(uint32_t f) const {
    for (const OriginalFunction& n : functions) {
      if (n.function == f) return &n;
    }
    return nullptr;
  }
};

}  // namespace rseqmc

#endif  // RSEQMC_SIM_ORIGINAL_CODE_H_
