// Lifting x86-64 machine code of rseq critical sections into rseqmc's IR.
//
// `ImportFunctions` decodes (Zydis) a function of an ElfObject from its entry,
// following fall-through and branches into any executable section (the abort
// handlers of __rseq_failure), and emits it through a FunctionBuilder: one IR
// function per imported function, its instructions in address order, a label
// `SECTION.0xOFFSET` (section name without leading dots) at the first IR
// instruction of every machine instruction, and a `cs NAME.csK` per
// descriptor of __rseq_cs whose start_ip lies in the function.
//
// Registers: x86-64 register number n (rax=0, rcx=1, rdx=2, rbx=3, rsp=4,
// rbp=5, rsi=6, rdi=7, r8..r15) is IR register rn, so the System V arguments
// are r7, r6, r2, r1, r8, r9 and the return value r0. The lifter uses three
// IR registers the function does not use as temporaries (listed in
// ImportedFunction::temps); a caller must treat them as clobbered.
//
// Supported subset (64- and 32-bit operands; a 32-bit result zero-extends):
//   mov (reg/imm/mem), movsxd, lea (base+index*scale+disp; rip-relative only to
//   an rseq descriptor of the function: `li` of the simulator's descriptor
//   address, and the 64-bit store of that register in the same basic block is
//   `assert` (the target is this thread's rseq->rseq_cs) + `rseq_arm`), add, sub, and, or, xor, inc, dec (reg,
//   imm or memory operands; a memory destination is a load, the operation and
//   a store), shl/shr by an immediate, imul reg, cmp, test, jcc, jmp, call (to
//   a function of the same file), ret, nop/endbr64, xchg mem,reg (64-bit),
//   lock xadd / lock add / lock cmpxchg on 64-bit memory, and the signature
//   word before each abort_ip (`ud1 SIG(%rip),%edi` or a nop with a 32-bit
//   displacement) as `sig`.
// Flags: a jcc must follow its flag-setting instruction in the same basic
// block. After cmp, sub, test, and, or, xor every condition except
// parity/overflow-only ones (jp, jnp, jo, jno) is exact: ZF, SF, CF and OF are
// those of the 64- or 32-bit operation (32-bit operands are compared
// sign-extended, which preserves both the signed and the unsigned order).
// After add, inc, dec and lock cmpxchg only ZF (je/jne; and SF: js/jns, for
// add/inc/dec) is modelled; another condition there is refused.
// One machine instruction may become several IR instructions (each a
// scheduling point): all but one write only the temporaries, and the one that
// writes memory or an x86 register is the last, so an abort or a signal between
// them acts as at the instruction's start (temporaries are dead at abort_ip,
// and a handler's context is its own). What the split does expose: a
// non-locked read-modify-write of memory (`add %r8,(%rsi)`) is a load, the
// operation and a store, so another thread may write the location in between,
// which is faithful across CPUs but also happens on one CPU through a
// preemption (or, outside a critical section, through the thread's own signal
// handler) where the processor would not split the instruction: a possible
// false report, never a missed one, for code that relies on a non-locked
// instruction being atomic on one CPU.
// Everything else (8/16-bit operands, push/pop/stack, %fs/%gs, rip-relative
// data, sar, neg, not, setcc, cmov, string ops, indirect branches, calls
// outside the file, ...) is refused with ImportError naming the file, the
// address, the instruction and what to do.
#ifndef RSEQMC_IMPORT_LIFT_H_
#define RSEQMC_IMPORT_LIFT_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "import/elf_object.h"
#include "sim/builder.h"
#include "sim/scenario.h"

namespace rseqmc::import {

// Load bias of the original-bytes cross-check: the k-th imported file's
// sections run at flat address + kOriginalLoadBase + k * kOriginalLoadStride
// (bytes), far from the data symbols (kDataBase) and from each other (flat
// ranges are < 4 GiB), below a PIE's load address (0x55...), and where
// AddressSanitizer leaves memory to the program: its shadow and shadow gap
// cover 0x7fff8000..0x10007fff8000 on x86-64, which an ASan-built harness's
// forked tracee inherits.
inline constexpr uint64_t kOriginalLoadBase = uint64_t{0x5} << 44;  // 0x500000000000
inline constexpr uint64_t kOriginalLoadStride = uint64_t{1} << 36;  // 64 GiB per file

// One machine instruction of an imported function, as objdump -d shows it.
struct NativeInstr {
  uint64_t address = 0;        // flat address (ElfObject)
  std::string where;           // "section+0xOFF" (.o) or "0xADDR"
  std::vector<uint8_t> bytes;
  std::string text;            // AT&T syntax, like objdump -d
  uint32_t first_ir = 0;       // local index of its first IR instruction
  uint32_t ir_count = 0;       // IR instructions it became
  // "where:  bytes  text", the line shown next to its IR in timelines.
  std::string Listing() const;
};

struct ImportedFunction {
  std::string name;
  std::vector<NativeInstr> code;  // address order = IR order
  std::vector<std::string> descriptors;  // names of its `cs`, in __rseq_cs order
  std::vector<int> temps;         // IR registers used as temporaries
  // `li rd, 0` placeholders for `lea DESCRIPTOR(%rip), rd`: (local IR index,
  // descriptor name); FinishImport writes the descriptor's address.
  std::vector<std::pair<uint32_t, std::string>> descriptor_loads;
  // For the original-bytes cross-check (Scenario::original, FinishImport):
  std::shared_ptr<const ElfObject> object;  // the file it came from
  uint64_t entry = 0;                       // flat address of its entry
  std::vector<uint64_t> abort_ips;          // flat abort_ip of each of its descriptors
  // Its machine code reads or writes rbx, rbp or r12-r15 (callee-saved in
  // the System V ABI; the harness keeps its state there).
  bool uses_callee_saved = false;
};

// Test-only hook (tests/import_test.cc): when the environment variable
// RSEQMC_TEST_MISLIFT names a machine instruction as the listing does
// (".text+0x1a" in a .o, "0x1139" otherwise), that instruction is lifted
// wrongly on purpose: its destination (register or memory) gets one more
// than the machine code writes. The simulator and the JIT of the lifted IR
// then agree with each other, and only `rseqmc crosscheck --original-bytes`
// (which runs the real instruction) can tell. Never set outside tests.
inline constexpr const char* kMisliftEnv = "RSEQMC_TEST_MISLIFT";

// Lifts the functions `names` of `obj` and every function they call into `b`
// (one FunctionBuilder each, created with `at` as their source position).
// Throws ImportError on anything outside the supported subset.
std::vector<ImportedFunction> ImportFunctions(const ElfObject& obj, const std::vector<std::string>& names,
                                              ScenarioBuilder& b, SourceLoc at = {});

// After ScenarioBuilder::Build(): writes the laid-out descriptor addresses
// into the `lea` placeholders and each machine instruction's listing into
// Program::origin, so timelines show the original instructions, and fills
// Scenario::original (sim/original_code.h): each file's executable sections
// and __rseq_cs relocated for a load bias of kOriginalLoadBase + k * kOriginalLoadStride
// for the k-th file (0 for an ET_EXEC, which runs at its link addresses), and
// the run address of every imported machine instruction. Throws ImportError
// when a relocation does not fit.
void FinishImport(const std::vector<ImportedFunction>& imported, Scenario& s);

}  // namespace rseqmc::import

#endif  // RSEQMC_IMPORT_LIFT_H_
