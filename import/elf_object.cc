#include "import/elf_object.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <gelf.h>
#include <libelf.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <memory>
#include <sstream>

namespace rseqmc::import {
namespace {

std::string Hex(uint64_t v) {
  std::ostringstream o;
  o << "0x" << std::hex << v;
  return o.str();
}

// Closes the descriptor and the libelf handle on every path out of Open().
struct ElfHandle {
  int fd = -1;
  Elf* elf = nullptr;
  ~ElfHandle() {
    if (elf != nullptr) elf_end(elf);
    if (fd >= 0) close(fd);
  }
};

const Elf_Data* SectionData(Elf_Scn* scn) { return elf_getdata(scn, nullptr); }

}  // namespace

namespace {

// A file cut short (a partial copy) has its section header table past its
// end; libelf then lists no section at all, which read as "no critical
// section" with exit 0. `fail` makes the ImportError. With e_shnum 0 the
// count is in section 0 (extended numbering, gabi "Sections"), so at least
// that entry must be there.
template <typename Fail>
void CheckSectionTableInFile(const GElf_Ehdr& eh, uint64_t file_size, const Fail& fail) {
  if (eh.e_shoff == 0) return;  // no section table: nothing to import, said later
  const uint64_t count = eh.e_shnum != 0 ? eh.e_shnum : 1;
  const uint64_t entry = eh.e_shentsize;
  char buf[200];
  if (entry < sizeof(Elf64_Shdr)) {
    std::snprintf(buf, sizeof buf, "e_shentsize %llu is smaller than a section header (%zu bytes)",
                  static_cast<unsigned long long>(entry), sizeof(Elf64_Shdr));
    throw fail(std::string(buf) + "; the ELF header is corrupt");
  }
  if (eh.e_shoff > file_size || (file_size - eh.e_shoff) / entry < count) {
    std::snprintf(buf, sizeof buf,
                  "the section header table (offset 0x%llx, %llu entries of %llu bytes) ends past the end of the "
                  "file (%llu bytes)",
                  static_cast<unsigned long long>(eh.e_shoff), static_cast<unsigned long long>(count),
                  static_cast<unsigned long long>(entry), static_cast<unsigned long long>(file_size));
    throw fail(std::string(buf) + "; the file is truncated or corrupt: copy or build it again");
  }
}

}  // namespace

ElfObject ElfObject::Open(const std::string& path) {
  ElfObject o;
  o.path_ = path;
  auto fail = [&](const std::string& what) { return ImportError(path + ": " + what); };
  if (elf_version(EV_CURRENT) == EV_NONE) throw fail("libelf initialisation failed");
  ElfHandle h;
  h.fd = open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);  // a FIFO must not block
  if (h.fd < 0) {
    throw ImportError(path + ": cannot open: " + std::strerror(errno),
                      "check the path; in a .rsq, a relative path is relative to the .rsq's folder");
  }
  struct stat st;
  if (fstat(h.fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    throw fail("not a regular file; give an object (.o), shared library (.so) or executable");
  }
  h.elf = elf_begin(h.fd, ELF_C_READ, nullptr);
  if (h.elf == nullptr || elf_kind(h.elf) != ELF_K_ELF) {
    throw fail("not an ELF file; give an object (.o), shared library (.so) or executable");
  }
  GElf_Ehdr eh;
  if (gelf_getehdr(h.elf, &eh) == nullptr || eh.e_ident[EI_CLASS] != ELFCLASS64 || eh.e_machine != EM_X86_64) {
    throw fail("not an ELF64 x86-64 file; rseqmc imports x86-64 code only");
  }
  if (eh.e_type != ET_REL && eh.e_type != ET_EXEC && eh.e_type != ET_DYN) {
    throw fail("ELF type " + std::to_string(eh.e_type) + " is not an object, shared library or executable");
  }
  CheckSectionTableInFile(eh, static_cast<uint64_t>(st.st_size), fail);
  o.relocatable_ = eh.e_type == ET_REL;
  o.fixed_address_ = eh.e_type == ET_EXEC;
  size_t shstrndx = 0;
  if (elf_getshdrstrndx(h.elf, &shstrndx) != 0) throw fail("no section name table");

  // Sections: flat addresses for the loaded ones.
  std::map<uint32_t, uint64_t> base_of;  // section index -> flat address
  std::vector<Elf_Scn*> rela_sections;
  Elf_Scn* symtab = nullptr;
  Elf_Scn* dynsym = nullptr;
  for (Elf_Scn* scn = elf_nextscn(h.elf, nullptr); scn != nullptr; scn = elf_nextscn(h.elf, scn)) {
    GElf_Shdr sh;
    if (gelf_getshdr(scn, &sh) == nullptr) throw fail("unreadable section header");
    const char* name = elf_strptr(h.elf, shstrndx, sh.sh_name);
    if (sh.sh_type == SHT_RELA) rela_sections.push_back(scn);
    if (sh.sh_type == SHT_REL) throw fail("SHT_REL relocations (without addends) are not used on x86-64; rebuild the file");
    if (sh.sh_type == SHT_SYMTAB) symtab = scn;
    if (sh.sh_type == SHT_DYNSYM) dynsym = scn;
    if (!(sh.sh_flags & SHF_ALLOC)) continue;
    Section s;
    s.name = name != nullptr ? name : "";
    s.index = static_cast<uint32_t>(elf_ndxscn(scn));
    s.address = o.relocatable_ ? kRelSectionStride * (s.index + 1) : sh.sh_addr;
    s.executable = (sh.sh_flags & SHF_EXECINSTR) != 0;
    s.size = sh.sh_size;
    if (o.relocatable_ && sh.sh_size > kRelSectionStride) {
      // Each section of a relocatable file gets kRelSectionStride of flat space;
      // a larger one would overlap the next and make every address ambiguous.
      throw ImportError(path + ": section " + s.name + " (index " + std::to_string(s.index) + ") has sh_size " +
                            Hex(sh.sh_size) + ", more than the " + Hex(kRelSectionStride) +
                            " bytes rseqmc lays out per section of a relocatable object; the section header is "
                            "malformed",
                        "rebuild the file; `readelf -S " + path + "` shows each section's size");
    }
    if (sh.sh_type != SHT_NOBITS) {
      const Elf_Data* d = SectionData(scn);
      if (d != nullptr && d->d_buf != nullptr) {
        const auto* p = static_cast<const uint8_t*>(d->d_buf);
        s.bytes.assign(p, p + d->d_size);
      }
      s.size = s.bytes.size();
    }
    base_of[s.index] = s.address;
    o.sections_.push_back(std::move(s));
  }

  // Symbols: functions, and every symbol's flat address (for relocations).
  Elf_Scn* syms = symtab != nullptr ? symtab : dynsym;
  std::vector<std::pair<std::optional<uint64_t>, std::string>> sym_value;
  if (syms != nullptr) {
    GElf_Shdr sh;
    gelf_getshdr(syms, &sh);
    Elf_Data* d = elf_getdata(syms, nullptr);
    const size_t n = sh.sh_entsize ? sh.sh_size / sh.sh_entsize : 0;
    for (size_t i = 0; i < n; ++i) {
      GElf_Sym sym;
      if (gelf_getsym(d, static_cast<int>(i), &sym) == nullptr) throw fail("unreadable symbol table");
      const char* nm = elf_strptr(h.elf, sh.sh_link, sym.st_name);
      std::string name = nm != nullptr ? nm : "";
      std::optional<uint64_t> addr;
      if (sym.st_shndx == SHN_ABS) {
        addr = sym.st_value;
      } else if (sym.st_shndx != SHN_UNDEF && sym.st_shndx < SHN_LORESERVE) {
        auto it = base_of.find(sym.st_shndx);
        if (it != base_of.end()) addr = o.relocatable_ ? it->second + sym.st_value : sym.st_value;
      }
      if (GELF_ST_TYPE(sym.st_info) == STT_FUNC && addr && !name.empty()) {
        o.functions_.push_back({name, *addr, sym.st_size});
      }
      sym_value.emplace_back(addr, name);
    }
  }

  // Relocations of loaded sections.
  for (Elf_Scn* scn : rela_sections) {
    GElf_Shdr sh;
    gelf_getshdr(scn, &sh);
    uint64_t base = 0;
    if (o.relocatable_) {
      auto it = base_of.find(sh.sh_info);
      if (it == base_of.end()) continue;  // relocations of .eh_frame, debug sections...
      base = it->second;
    }
    Elf_Data* d = elf_getdata(scn, nullptr);
    const size_t n = sh.sh_entsize ? sh.sh_size / sh.sh_entsize : 0;
    for (size_t i = 0; i < n; ++i) {
      GElf_Rela r;
      if (gelf_getrela(d, static_cast<int>(i), &r) == nullptr) throw fail("unreadable relocation");
      Reloc rel;
      rel.type = static_cast<uint32_t>(GELF_R_TYPE(r.r_info));
      rel.addend = r.r_addend;
      const size_t si = GELF_R_SYM(r.r_info);
      if (rel.type == R_X86_64_RELATIVE) {
        rel.symbol_address = 0;
      } else if (si < sym_value.size() && (!o.relocatable_ || sh.sh_link == elf_ndxscn(syms))) {
        rel.symbol_address = sym_value[si].first;
        rel.symbol_name = sym_value[si].second;
      }
      o.relocs_[base + r.r_offset] = rel;
    }
  }
  o.ReadDescriptors();
  return o;
}

const Section* ElfObject::SectionAt(uint64_t a) const {
  for (const Section& s : sections_) {
    if (a >= s.address && a - s.address < s.size) return &s;
  }
  return nullptr;
}

const FunctionSymbol* ElfObject::FindFunction(const std::string& name) const {
  for (const FunctionSymbol& f : functions_) {
    if (f.name == name) return &f;
  }
  return nullptr;
}

const FunctionSymbol* ElfObject::FunctionAt(uint64_t a) const {
  for (const FunctionSymbol& f : functions_) {
    if (a >= f.address && a < f.address + f.size) return &f;
  }
  return nullptr;
}

std::string ElfObject::Describe(uint64_t a) const {
  const Section* s = SectionAt(a);
  if (relocatable_ && s != nullptr) return s->name + "+" + Hex(a - s->address);
  return Hex(a);
}

uint64_t ElfObject::ReadRaw(uint64_t a, int bytes) const {
  const Section* s = SectionAt(a);
  if (s == nullptr || a + bytes > s->address + s->bytes.size()) {
    throw ImportError(path_ + ": reading " + std::to_string(bytes) + " bytes at " + Describe(a) +
                      (s != nullptr && s->bytes.size() < s->size ? " beyond the file contents of " + s->name
                                                                  : std::string(" outside every loaded section")) +
                      "; the rseq tables of this file are malformed");
  }
  uint64_t v = 0;
  std::memcpy(&v, s->bytes.data() + (a - s->address), bytes);
  return v;
}

uint64_t ElfObject::ReadPointer(uint64_t a) const {
  auto it = relocs_.find(a);
  if (it == relocs_.end()) return ReadRaw(a, 8);
  const Reloc& r = it->second;
  if (r.type != R_X86_64_64 && r.type != R_X86_64_RELATIVE) {
    throw ImportError(path_ + ": relocation type " + std::to_string(r.type) + " at " + Describe(a) +
                      " in an rseq table; only R_X86_64_64 and R_X86_64_RELATIVE are applied there");
  }
  if (!r.symbol_address) {
    throw ImportError(path_ + ": the rseq table entry at " + Describe(a) + " points into undefined symbol '" +
                      r.symbol_name + "'; the descriptor and its code must be in the same file");
  }
  return *r.symbol_address + static_cast<uint64_t>(r.addend);
}

std::optional<uint64_t> ElfObject::PcRelTarget(uint64_t field, uint64_t next_ip, int64_t encoded,
                                                std::string* undefined) const {
  auto it = relocs_.find(field);
  if (it == relocs_.end()) return next_ip + static_cast<uint64_t>(encoded);
  const Reloc& r = it->second;
  if (r.type != R_X86_64_PC32 && r.type != R_X86_64_PLT32) {
    throw ImportError(path_ + ": relocation type " + std::to_string(r.type) + " at " + Describe(field) +
                      " in code; only R_X86_64_PC32 and R_X86_64_PLT32 are applied to instructions");
  }
  if (!r.symbol_address) {
    if (undefined != nullptr) *undefined = r.symbol_name;
    return std::nullopt;
  }
  return *r.symbol_address + static_cast<uint64_t>(r.addend) + (next_ip - field);
}

std::vector<uint8_t> ElfObject::RelocatedBytes(const Section& s, uint64_t bias,
                                               std::vector<uint64_t>* unrelocated) const {
  std::vector<uint8_t> out = s.bytes;
  const uint64_t end = s.address + s.bytes.size();
  for (auto it = relocs_.lower_bound(s.address); it != relocs_.end() && it->first < end; ++it) {
    const uint64_t field = it->first;
    const Reloc& r = it->second;
    const bool pc32 = r.type == R_X86_64_PC32 || r.type == R_X86_64_PLT32;
    const bool abs64 = r.type == R_X86_64_64 || r.type == R_X86_64_RELATIVE;
    const int width = pc32 ? 4 : 8;
    if ((!pc32 && !abs64) || !r.symbol_address || field + width > end) {
      unrelocated->push_back(field);
      continue;
    }
    uint8_t* at = out.data() + (field - s.address);
    if (pc32) {
      const int64_t v = static_cast<int64_t>(*r.symbol_address + static_cast<uint64_t>(r.addend) - field);
      if (v != static_cast<int32_t>(v)) {
        throw ImportError(path_ + ": the PC-relative relocation at " + Describe(field) +
                          " (to " +
                          (r.symbol_name.empty() ? std::string("a section symbol") : "'" + r.symbol_name + "'") +
                          " + " + std::to_string(r.addend) +
                          ") does not fit in 32 bits once the sections are laid out; the relocation or symbol "
                          "table of this file is malformed",
                        "rebuild the file; `readelf -r " + path_ + "` shows the relocation's addend");
      }
      const int32_t v32 = static_cast<int32_t>(v);
      std::memcpy(at, &v32, 4);
    } else {
      const uint64_t v = *r.symbol_address + static_cast<uint64_t>(r.addend) + bias;
      std::memcpy(at, &v, 8);
    }
  }
  return out;
}

void ElfObject::ReadDescriptors() {
  auto find = [&](const char* name) -> const Section* {
    for (const Section& s : sections_) {
      if (s.name == name) return &s;
    }
    return nullptr;
  };
  if (const Section* cs = find("__rseq_cs")) {
    if (cs->bytes.size() % 32 != 0) {
      throw ImportError(path_ + ": section __rseq_cs is " + std::to_string(cs->bytes.size()) +
                        " bytes, not a whole number of 32-byte struct rseq_cs; align each descriptor to 32");
    }
    for (uint64_t off = 0; off < cs->bytes.size(); off += 32) {
      RseqCsEntry e;
      e.address = cs->address + off;
      e.version = static_cast<uint32_t>(ReadRaw(e.address, 4));
      e.flags = static_cast<uint32_t>(ReadRaw(e.address + 4, 4));
      e.start_ip = ReadPointer(e.address + 8);
      e.post_commit_offset = ReadRaw(e.address + 16, 8);
      e.abort_ip = ReadPointer(e.address + 24);
      descriptors_.push_back(e);
    }
  }
  if (const Section* ptrs = find("__rseq_cs_ptr_array")) {
    for (uint64_t off = 0; off + 8 <= ptrs->bytes.size(); off += 8) {
      const uint64_t p = ReadPointer(ptrs->address + off);
      bool known = std::any_of(descriptors_.begin(), descriptors_.end(),
                               [&](const RseqCsEntry& e) { return e.address == p; });
      if (!known) {
        throw ImportError(path_ + ": __rseq_cs_ptr_array entry " + std::to_string(off / 8) + " points to " +
                          Describe(p) + ", not to a descriptor in __rseq_cs");
      }
    }
  }
  if (const Section* exits = find("__rseq_exit_point_array")) {
    for (uint64_t off = 0; off + 16 <= exits->bytes.size(); off += 16) {
      exit_points_.emplace_back(ReadPointer(exits->address + off), ReadPointer(exits->address + off + 8));
    }
  }
}

}  // namespace rseqmc::import
