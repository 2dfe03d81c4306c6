// The ABI registry: which module implements each KernelModel.
#include "sim/kernel/abi.h"

#include <array>
#include <cstdio>

#include "sim/machine.h"

namespace rseqmc {

const KernelAbi& Abi418Instance();  // sim/kernel/abi_4_18.cc
const KernelAbi& Abi60Instance();   // sim/kernel/abi_6_0.cc
const KernelAbi& Abi619Instance();  // sim/kernel/abi_6_19.cc

const char* CheckAbortSignature(Machine& m, uint64_t abort_ip, uint32_t sig, std::string* why) {
  const Machine::CodeWordRead word = m.ReadSignatureWord(abort_ip - 4);
  if (!word.readable) return "signature word before abort_ip is unreadable (EFAULT)";
  if (word.is_signature_word && word.value == sig) return nullptr;
  char buf[112];
  if (word.is_signature_word) {
    std::snprintf(buf, sizeof buf, "Possible attack attempt. Unexpected rseq signature 0x%x, expecting 0x%x", word.value,
                  sig);
  } else {
    std::snprintf(buf, sizeof buf, "the word before abort_ip is an instruction, not a signature; expecting 0x%x", sig);
  }
  *why = buf;
  return "bad signature";
}

const KernelAbi& AbiFor(KernelModel m) {
  switch (m) {
    case KernelModel::kLegacy418: return Abi418Instance();
    case KernelModel::kLegacy60: return Abi60Instance();
    case KernelModel::k619: return Abi619Instance();
  }
  return Abi60Instance();
}

std::span<const KernelAbi* const> AllAbis() {
  static const std::array<const KernelAbi*, 3> kAll{&Abi418Instance(), &Abi60Instance(), &Abi619Instance()};
  return kAll;
}

}  // namespace rseqmc
