// Reading an ELF object for rseq import: sections, function symbols,
// relocations, and the rseq descriptors of the librseq/tcmalloc conventions.
//
// Every loaded section (SHF_ALLOC) gets a flat address: in a linked file
// (ET_EXEC, ET_DYN) its sh_addr; in a relocatable object (ET_REL), whose
// sections all start at 0, a synthetic base (kRelSectionStride apart) so that
// code in .text and __rseq_failure never collide. Relocations (R_X86_64_64,
// PC32, PLT32 in .o files; R_X86_64_RELATIVE in .so/PIE files) are resolved
// against those addresses, the way a linker would (System V x86-64 psABI §4.4).
//
// Descriptors are read from section `__rseq_cs`: 32-byte `struct rseq_cs`
// entries (include/uapi/linux/rseq.h: u32 version, u32 flags, u64 start_ip,
// u64 post_commit_offset, u64 abort_ip), as librseq's RSEQ_ASM_DEFINE_TABLE
// emits them; `__rseq_cs_ptr_array` lists pointers to them and
// `__rseq_exit_point_array` (start_ip, exit_ip) pairs.
//
// Errors: every problem (unreadable file, not ELF64 x86-64, a malformed
// descriptor, a relocation type the importer does not apply) throws
// ImportError whose message names the file and says what to do.
#ifndef RSEQMC_IMPORT_ELF_OBJECT_H_
#define RSEQMC_IMPORT_ELF_OBJECT_H_

#include <cstdint>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace rseqmc::import {

// A problem with the imported file; what() is the complete message
// ("FILE: ..."), hint() the fix when one is known ("" otherwise); the CLI
// prints both and exits 2.
class ImportError : public std::runtime_error {
 public:
  explicit ImportError(const std::string& message, std::string hint = "")
      : std::runtime_error(message), hint_(std::move(hint)) {}
  const std::string& hint() const { return hint_; }

 private:
  std::string hint_;
};

// Distance between the synthetic section bases of a relocatable object.
inline constexpr uint64_t kRelSectionStride = 0x1000000;

struct Section {
  std::string name;
  uint32_t index = 0;        // ELF section header index
  uint64_t address = 0;      // flat address of its first byte (see above)
  uint64_t size = 0;         // sh_size: the flat range is [address, address+size)
  // The file's contents; empty for SHT_NOBITS (.bss, .tbss), whose zeros are
  // never materialised: a header can claim any size, and neither the lifter
  // nor the rseq tables read them (a read there is refused as malformed).
  std::vector<uint8_t> bytes;
  bool executable = false;   // SHF_EXECINSTR
};

struct FunctionSymbol {
  std::string name;
  uint64_t address = 0;  // flat address of its entry
  uint64_t size = 0;     // bytes (st_size)
};

// One `struct rseq_cs` found in __rseq_cs; addresses are flat.
struct RseqCsEntry {
  uint64_t address = 0;  // of the descriptor itself
  uint32_t version = 0;
  uint32_t flags = 0;
  uint64_t start_ip = 0;
  uint64_t post_commit_offset = 0;  // bytes
  uint64_t abort_ip = 0;
};

class ElfObject {
 public:
  // Reads `path` with libelf. Throws ImportError.
  static ElfObject Open(const std::string& path);

  const std::string& path() const { return path_; }
  bool relocatable() const { return relocatable_; }
  // True for an executable linked at a fixed address (ET_EXEC): its code
  // and descriptors can only run at their link addresses (load bias 0).
  bool fixed_address() const { return fixed_address_; }
  const std::vector<Section>& sections() const { return sections_; }
  const std::vector<FunctionSymbol>& functions() const { return functions_; }
  const std::vector<RseqCsEntry>& descriptors() const { return descriptors_; }
  // (start_ip, exit_ip) pairs of __rseq_exit_point_array.
  const std::vector<std::pair<uint64_t, uint64_t>>& exit_points() const { return exit_points_; }

  // The loaded section holding flat address `a` (nullptr if none).
  const Section* SectionAt(uint64_t a) const;
  const FunctionSymbol* FindFunction(const std::string& name) const;
  // The function whose [address, address+size) holds `a` (nullptr if none).
  const FunctionSymbol* FunctionAt(uint64_t a) const;
  // "section+0xOFF" in a .o (objdump -d's addresses there), "0xADDR" otherwise.
  std::string Describe(uint64_t a) const;

  // The flat target of a PC-relative field of 4 bytes at flat address `field`
  // in an instruction ending at `next_ip`, whose encoded value is `encoded`:
  // S + A + (next_ip - field) when a relocation applies there, next_ip +
  // encoded otherwise. nullopt when the relocation names an undefined symbol
  // (its name in `undefined`).
  std::optional<uint64_t> PcRelTarget(uint64_t field, uint64_t next_ip, int64_t encoded,
                                      std::string* undefined) const;

  // The bytes of section `s` as a loader would place them at run address
  // flat address + `bias` (the original-bytes cross-check maps them there):
  // R_X86_64_PC32/PLT32 fields get S + A - P (flat addresses: the bias
  // cancels), R_X86_64_64 fields S + A + bias, R_X86_64_RELATIVE ones
  // A + bias (System V x86-64 psABI §4.4). A field whose relocation names an
  // undefined symbol or has another type keeps the file's bytes and its flat
  // address is appended to `unrelocated` (an error only if code that runs
  // contains it). Throws ImportError when a PC-relative value does not fit
  // in 32 bits.
  std::vector<uint8_t> RelocatedBytes(const Section& s, uint64_t bias, std::vector<uint64_t>* unrelocated) const;

 private:
  struct Reloc {
    uint32_t type = 0;
    std::optional<uint64_t> symbol_address;  // nullopt: undefined symbol
    std::string symbol_name;
    int64_t addend = 0;
  };
  // The 8-byte pointer at flat address `a`, relocated.
  uint64_t ReadPointer(uint64_t a) const;
  uint64_t ReadRaw(uint64_t a, int bytes) const;
  void ReadDescriptors();

  std::string path_;
  bool relocatable_ = false;
  bool fixed_address_ = false;
  std::vector<Section> sections_;
  std::vector<FunctionSymbol> functions_;
  std::vector<RseqCsEntry> descriptors_;
  std::vector<std::pair<uint64_t, uint64_t>> exit_points_;
  std::map<uint64_t, Reloc> relocs_;  // by flat address of the relocated field
};

}  // namespace rseqmc::import

#endif  // RSEQMC_IMPORT_ELF_OBJECT_H_
