#include "import/lift.h"

#include <Zydis/Zydis.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <optional>
#include <set>

namespace rseqmc::import {
namespace {

constexpr int64_t kLow32 = 0xffffffff;
constexpr int64_t kSign32 = 0x80000000;

std::string Hex(uint64_t v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "0x%llx", static_cast<unsigned long long>(v));
  return buf;
}

// What a jcc may test after its flag-setting instruction (see lift.h).
enum class FlagModel : uint8_t {
  kNone,     // flags not modelled: no jcc may consume them
  kCompare,  // cmp/sub (FA - FB) and test/and/or/xor (FA = result, FB = 0): all but P/O
  kZfSf,     // add/inc/dec: FA = result, FB = 0; ZF and SF only
  kZf,       // lock cmpxchg: FA = old rax, FB = old memory; ZF only
};

struct Decoded {
  uint64_t addr = 0;
  const Section* section = nullptr;
  ZydisDecodedInstruction in{};
  ZydisDecodedOperand ops[ZYDIS_MAX_OPERAND_COUNT]{};
  std::optional<uint64_t> target;  // branch / call target
  bool merge = false;              // reached other than by falling through (flags unknown)
  bool is_sig = false;             // the signature word before an abort_ip
  // Flag setter: which conditions its consumers test.
  bool flags_used = false, signed_use = false, fb_in_reg = false;
  int setter = -1;                 // jcc: index of its flag setter
  uint64_t end() const { return addr + in.length; }
};

bool IsJcc(ZydisMnemonic m) {
  switch (m) {
    case ZYDIS_MNEMONIC_JB: case ZYDIS_MNEMONIC_JBE: case ZYDIS_MNEMONIC_JL: case ZYDIS_MNEMONIC_JLE:
    case ZYDIS_MNEMONIC_JNB: case ZYDIS_MNEMONIC_JNBE: case ZYDIS_MNEMONIC_JNL: case ZYDIS_MNEMONIC_JNLE:
    case ZYDIS_MNEMONIC_JNO: case ZYDIS_MNEMONIC_JNP: case ZYDIS_MNEMONIC_JNS: case ZYDIS_MNEMONIC_JNZ:
    case ZYDIS_MNEMONIC_JO: case ZYDIS_MNEMONIC_JP: case ZYDIS_MNEMONIC_JS: case ZYDIS_MNEMONIC_JZ:
      return true;
    default:
      return false;
  }
}

bool WritesFlags(const ZydisDecodedInstruction& in) {
  const ZydisAccessedFlags* f = in.cpu_flags;
  return f != nullptr && (f->modified | f->set_0 | f->set_1 | f->undefined) != 0;
}

FlagModel ModelOf(const ZydisDecodedInstruction& in) {
  switch (in.mnemonic) {
    case ZYDIS_MNEMONIC_CMP: case ZYDIS_MNEMONIC_SUB: case ZYDIS_MNEMONIC_TEST:
    case ZYDIS_MNEMONIC_AND: case ZYDIS_MNEMONIC_OR: case ZYDIS_MNEMONIC_XOR:
      return (in.attributes & ZYDIS_ATTRIB_HAS_LOCK) ? FlagModel::kNone : FlagModel::kCompare;
    case ZYDIS_MNEMONIC_ADD: case ZYDIS_MNEMONIC_INC: case ZYDIS_MNEMONIC_DEC:
      return (in.attributes & ZYDIS_ATTRIB_HAS_LOCK) ? FlagModel::kNone : FlagModel::kZfSf;
    case ZYDIS_MNEMONIC_CMPXCHG:
      return FlagModel::kZf;
    default:
      return FlagModel::kNone;
  }
}

bool ConditionAllowed(FlagModel m, ZydisMnemonic j) {
  const bool zf = j == ZYDIS_MNEMONIC_JZ || j == ZYDIS_MNEMONIC_JNZ;
  const bool sf = j == ZYDIS_MNEMONIC_JS || j == ZYDIS_MNEMONIC_JNS;
  const bool po = j == ZYDIS_MNEMONIC_JO || j == ZYDIS_MNEMONIC_JNO || j == ZYDIS_MNEMONIC_JP ||
                  j == ZYDIS_MNEMONIC_JNP;
  switch (m) {
    case FlagModel::kCompare: return !po;
    case FlagModel::kZfSf: return zf || sf;
    case FlagModel::kZf: return zf;
    case FlagModel::kNone: return false;
  }
  return false;
}

bool IsSignedCondition(ZydisMnemonic j) {
  return j == ZYDIS_MNEMONIC_JL || j == ZYDIS_MNEMONIC_JLE || j == ZYDIS_MNEMONIC_JNL || j == ZYDIS_MNEMONIC_JNLE;
}
// Conditions lifted as a branch with FB as the first operand (b OP a).
bool IsSwapped(ZydisMnemonic j) {
  return j == ZYDIS_MNEMONIC_JBE || j == ZYDIS_MNEMONIC_JNBE || j == ZYDIS_MNEMONIC_JLE || j == ZYDIS_MNEMONIC_JNLE;
}

std::string LabelFor(const ElfObject& obj, const Decoded& d) {
  std::string sec = d.section->name;
  while (!sec.empty() && sec[0] == '.') sec.erase(0, 1);
  for (char& c : sec) {
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_' && c != '.') c = '_';
  }
  if (sec.empty() || std::isdigit(static_cast<unsigned char>(sec[0]))) sec = "s" + sec;
  return sec + "." + Hex(obj.relocatable() ? d.addr - d.section->address : d.addr);
}

class Lifter {
 public:
  Lifter(const ElfObject& obj, const FunctionSymbol& fn, FunctionBuilder& fb)
      : obj_(obj), fn_(fn), fb_(fb) {
    ZydisDecoderInit(&dec_, ZYDIS_MACHINE_MODE_LONG_64, ZYDIS_STACK_WIDTH_64);
    ZydisFormatterInit(&fmt_, ZYDIS_FORMATTER_STYLE_ATT);
  }

  ImportedFunction Run(std::vector<std::string>* callees);

 private:
  [[noreturn]] void Fail(const Decoded& d, const std::string& why, const std::string& fix) const {
    throw ImportError(obj_.path() + ": " + obj_.Describe(d.addr) + " (in " + fn_.name + "): `" + Text(d) +
                      "`: " + why + "; " + fix);
  }
  std::string Text(const Decoded& d) const {
    char buf[256];
    if (ZYAN_FAILED(ZydisFormatterFormatInstruction(&fmt_, &d.in, d.ops, d.in.operand_count_visible, buf,
                                                    sizeof buf, Shown(d), nullptr))) {
      return "?";
    }
    return buf;
  }
  // The runtime address Zydis prints targets against: the section offset in a
  // .o (as objdump -d shows it), the address otherwise.
  uint64_t Shown(const Decoded& d) const { return obj_.relocatable() ? d.addr - d.section->address : d.addr; }
  Decoded Decode(uint64_t addr) const;
  void Explore(const std::vector<uint64_t>& roots);
  void AddSignature(uint64_t abort_ip);
  void AnalyseFlags();
  void PickTemps();
  void Emit(const Decoded& d);
  void EmitAlu(const Decoded& d);
  void EmitMov(const Decoded& d);
  void EmitLea(const Decoded& d);
  void EmitCompare(const Decoded& d);
  void EmitJcc(const Decoded& d);
  void EmitAtomic(const Decoded& d);
  void EmitOffByOne(const Decoded& d);
  void EmitArm(const Decoded& d, const Mem& m);
  // Operand access.
  int Reg(const Decoded& d, ZydisRegister r) const;
  int Width(const Decoded& d) const;  // 64 or 32 (operand size), else Fail
  Mem MemOf(const Decoded& d, const ZydisDecodedOperand& op) const;
  Operand Source(const Decoded& d, const ZydisDecodedOperand& op, int width);  // may load into t_
  void Extend(const Decoded& d, int reg, int width);  // flag operand: zero- or sign-extended in place
  const std::string& LabelAt(const Decoded& d, uint64_t a) const;
  // Counting wrappers: every IR instruction goes through one of these.
  FunctionBuilder& B() {
    ++count_;
    return fb_;
  }

  const ElfObject& obj_;
  const FunctionSymbol& fn_;
  FunctionBuilder& fb_;
  ZydisDecoder dec_;
  ZydisFormatter fmt_;
  std::map<uint64_t, Decoded> code_;
  std::vector<Decoded*> order_;
  std::map<uint64_t, std::string> labels_;
  std::set<uint64_t> sig_addrs_;
  int t_ = -1, fa_ = -1, fb_reg_ = -1;  // temporaries
  // The register holding a descriptor's address from `lea DESC(%rip)` in the
  // current basic block (-1: none), and the descriptor's name.
  int desc_reg_ = -1;
  std::string desc_name_;
  uint32_t count_ = 0;
  ImportedFunction out_;
  std::vector<std::string>* callees_ = nullptr;
};

Decoded Lifter::Decode(uint64_t addr) const {
  Decoded d;
  d.addr = addr;
  d.section = obj_.SectionAt(addr);
  if (d.section == nullptr || !d.section->executable) {
    throw ImportError(obj_.path() + ": " + fn_.name + " reaches " + obj_.Describe(addr) +
                      ", which is not in an executable section; check the descriptors' start_ip/abort_ip");
  }
  const uint64_t off = addr - d.section->address;
  if (off >= d.section->bytes.size()) {
    throw ImportError(obj_.path() + ": " + fn_.name + " reaches " + obj_.Describe(addr) + ", beyond the contents of " +
                      d.section->name + " in the file (an SHT_NOBITS or truncated section); is this code?");
  }
  if (ZYAN_FAILED(ZydisDecoderDecodeFull(&dec_, d.section->bytes.data() + off, d.section->bytes.size() - off, &d.in,
                                         d.ops))) {
    throw ImportError(obj_.path() + ": " + obj_.Describe(addr) + " (in " + fn_.name +
                      "): bytes that do not decode as an x86-64 instruction; is this code?");
  }
  return d;
}

void Lifter::Explore(const std::vector<uint64_t>& roots) {
  std::vector<std::pair<uint64_t, bool>> work;  // address, reached by a jump
  for (uint64_t r : roots) work.emplace_back(r, true);
  while (!work.empty()) {
    auto [a, jumped] = work.back();
    work.pop_back();
    auto it = code_.find(a);
    if (it != code_.end()) {
      it->second.merge |= jumped;
      continue;
    }
    Decoded d = Decode(a);
    d.merge = jumped;
    const ZydisMnemonic m = d.in.mnemonic;
    const bool rel = d.in.operand_count_visible >= 1 && d.ops[0].type == ZYDIS_OPERAND_TYPE_IMMEDIATE &&
                     d.ops[0].imm.is_relative;
    bool falls = true;
    if (m == ZYDIS_MNEMONIC_JMP || m == ZYDIS_MNEMONIC_CALL || IsJcc(m)) {
      if (!rel) Fail(d, "indirect branches and calls are not supported", "use a direct jump or call");
      std::string undefined;
      d.target = obj_.PcRelTarget(a + d.in.raw.imm[0].offset, d.end(), d.ops[0].imm.value.s, &undefined);
      if (!d.target) {
        Fail(d, "calls '" + undefined + "', which is not defined in this file",
             "import an object that defines it, or keep the section free of calls");
      }
      if (m == ZYDIS_MNEMONIC_CALL) {
        const FunctionSymbol* callee = obj_.FunctionAt(*d.target);
        if (callee == nullptr || callee->address != *d.target) {
          Fail(d, "calls " + obj_.Describe(*d.target) + ", which is not a function symbol of the file",
               "call a function of the same file");
        }
        callees_->push_back(callee->name);
      } else {
        work.emplace_back(*d.target, true);
      }
      falls = m != ZYDIS_MNEMONIC_JMP;
    } else if (m == ZYDIS_MNEMONIC_RET) {
      falls = false;
    } else if (m == ZYDIS_MNEMONIC_UD1 || m == ZYDIS_MNEMONIC_UD2 || m == ZYDIS_MNEMONIC_INT3 ||
               m == ZYDIS_MNEMONIC_HLT) {
      Fail(d, "the code runs into a trapping instruction", "a signature word must never be executed");
    }
    if (falls) work.emplace_back(d.end(), false);
    code_.emplace(a, d);
  }
}

void Lifter::AddSignature(uint64_t abort_ip) {
  const uint64_t a = abort_ip - 7;
  const Section* s = obj_.SectionAt(a);
  bool ok = s != nullptr && s == obj_.SectionAt(abort_ip) && s->executable && abort_ip - s->address <= s->bytes.size();
  if (ok) {
    const uint8_t* p = s->bytes.data() + (a - s->address);
    // ud1 SIG(%rip),%edi (librseq) or nopl SIG(%rip) (tcmalloc): 0f b9 3d / 0f 1f 05 + imm32.
    ok = p[0] == 0x0f && ((p[1] == 0xb9 && p[2] == 0x3d) || (p[1] == 0x1f && p[2] == 0x05));
  }
  if (!ok) {
    throw ImportError(obj_.path() + ": abort_ip " + obj_.Describe(abort_ip) + " (in " + fn_.name +
                      ") is not preceded by the signature instruction (`ud1 SIG(%rip),%edi` or "
                      "`nopl SIG(%rip)`); the kernel would kill the thread with SIGSEGV at the first abort. "
                      "Emit RSEQ_SIG in the 4 bytes before the abort handler");
  }
  if (code_.count(a)) {
    Decoded& d = code_.at(a);
    if (d.in.mnemonic != ZYDIS_MNEMONIC_NOP) Fail(d, "the signature word is executed", "jump around it");
    d.is_sig = true;
    return;
  }
  Decoded d = Decode(a);
  d.is_sig = true;
  code_.emplace(a, d);
}

void Lifter::AnalyseFlags() {
  for (size_t i = 0; i < order_.size(); ++i) {
    Decoded& j = *order_[i];
    if (!IsJcc(j.in.mnemonic)) continue;
    // Walk back through the basic block to the flag setter.
    size_t k = i;
    const Decoded* cur = &j;
    int setter = -1;
    while (!cur->merge && k > 0 && order_[k - 1]->end() == cur->addr) {
      --k;
      cur = order_[k];
      if (WritesFlags(cur->in)) {
        setter = static_cast<int>(k);
        break;
      }
    }
    if (setter < 0) {
      Fail(j, "its flags come from another basic block (or a merge point)",
           "only a jcc in the same basic block as its cmp/test/sub is supported");
    }
    Decoded& s = *order_[setter];
    if (!ConditionAllowed(ModelOf(s.in), j.in.mnemonic)) {
      Fail(j, "tests flags of `" + Text(s) + "` that are not modelled",
           "use cmp/test/sub before this condition, or je/jne (js/jns after add/inc/dec)");
    }
    j.setter = setter;
    s.flags_used = true;
    s.signed_use |= IsSignedCondition(j.in.mnemonic);
    s.fb_in_reg |= IsSwapped(j.in.mnemonic);
  }
}

void Lifter::PickTemps() {
  bool used[16] = {};
  for (const Decoded* d : order_) {
    for (int k = 0; k < d->in.operand_count; ++k) {
      const ZydisDecodedOperand& op = d->ops[k];
      std::vector<ZydisRegister> regs;
      if (op.type == ZYDIS_OPERAND_TYPE_REGISTER) regs.push_back(op.reg.value);
      if (op.type == ZYDIS_OPERAND_TYPE_MEMORY) regs = {op.mem.base, op.mem.index};
      for (ZydisRegister r : regs) {
        const ZydisRegister big = ZydisRegisterGetLargestEnclosing(ZYDIS_MACHINE_MODE_LONG_64, r);
        // rsp: only call/ret use it (implicitly), which the IR's own call stack models.
        if (big >= ZYDIS_REGISTER_RAX && big <= ZYDIS_REGISTER_R15 && big != ZYDIS_REGISTER_RSP) {
          used[big - ZYDIS_REGISTER_RAX] = true;
        }
      }
    }
  }
  std::vector<int> free;
  for (int r : {4, 15, 14, 13, 12, 11, 10, 9, 8, 5, 3}) {
    if (!used[r]) free.push_back(r);
  }
  if (free.size() < 3) {
    throw ImportError(obj_.path() + ": " + fn_.name +
                      " uses 14 or more registers; the lifter needs 3 unused ones as temporaries. "
                      "Split the function or lower its register pressure");
  }
  out_.uses_callee_saved = used[3] || used[5] || used[12] || used[13] || used[14] || used[15];
  t_ = free[0];
  fa_ = free[1];
  fb_reg_ = free[2];
  out_.temps = {t_, fa_, fb_reg_};
}

int Lifter::Reg(const Decoded& d, ZydisRegister r) const {
  const ZydisRegister big = ZydisRegisterGetLargestEnclosing(ZYDIS_MACHINE_MODE_LONG_64, r);
  if (big < ZYDIS_REGISTER_RAX || big > ZYDIS_REGISTER_R15) {
    Fail(d, std::string("register ") + ZydisRegisterGetString(r) + " is not a general-purpose register",
         "only rax..r15 are modelled");
  }
  const int n = big - ZYDIS_REGISTER_RAX;
  if (n == 4) Fail(d, "uses the stack pointer", "keep the critical section free of stack accesses (no push/pop)");
  const ZyanU16 w = ZydisRegisterGetWidth(ZYDIS_MACHINE_MODE_LONG_64, r);
  if (w != 64 && w != 32) Fail(d, "8- and 16-bit registers are not supported", "use 32- or 64-bit operands");
  return n;
}

int Lifter::Width(const Decoded& d) const {
  if (d.in.operand_width != 64 && d.in.operand_width != 32) {
    Fail(d, "operand size " + std::to_string(d.in.operand_width) + " is not supported",
         "use 32- or 64-bit operands (8/16-bit memory is not modelled)");
  }
  return d.in.operand_width;
}

Mem Lifter::MemOf(const Decoded& d, const ZydisDecodedOperand& op) const {
  const auto& m = op.mem;
  if (m.segment == ZYDIS_REGISTER_FS || m.segment == ZYDIS_REGISTER_GS) {
    Fail(d, "accesses thread-local storage through %fs/%gs",
         "pass the struct rseq pointer (and other per-thread data) as an argument");
  }
  if (m.base == ZYDIS_REGISTER_RIP) {
    Fail(d, "accesses data rip-relative (a global of the object)",
         "pass the data's address as an argument; the .rsq scenario supplies the data");
  }
  if (m.base == ZYDIS_REGISTER_NONE) Fail(d, "a memory operand without a base register", "use base+index*scale+disp");
  const int base = Reg(d, m.base);
  if (m.index != ZYDIS_REGISTER_NONE) return Mem(base, Reg(d, m.index), m.scale, m.disp.value);
  return Mem(base, m.disp.value);
}

Operand Lifter::Source(const Decoded& d, const ZydisDecodedOperand& op, int width) {
  switch (op.type) {
    case ZYDIS_OPERAND_TYPE_REGISTER: return R(Reg(d, op.reg.value));
    case ZYDIS_OPERAND_TYPE_IMMEDIATE:
      return Imm(width == 32 ? static_cast<int64_t>(op.imm.value.u & kLow32) : op.imm.value.s);
    case ZYDIS_OPERAND_TYPE_MEMORY:
      if (width == 64) {
        B().Ld(t_, MemOf(d, op));
      } else {
        B().Ld32(t_, MemOf(d, op));
      }
      return R(t_);
    default:
      Fail(d, "an operand kind that is not modelled", "see the supported subset in import/lift.h");
  }
}

void Lifter::Extend(const Decoded& d, int reg, int width) {
  if (width == 64) return;
  B().And(reg, reg, Imm(kLow32));
  if (d.signed_use) {
    B().Xor(reg, reg, Imm(kSign32));
    B().Sub(reg, reg, Imm(kSign32));
  }
}

const std::string& Lifter::LabelAt(const Decoded& d, uint64_t a) const {
  auto it = labels_.find(a);
  if (it == labels_.end()) Fail(d, "jumps into the middle of an instruction", "is this code?");
  return it->second;
}

ImportedFunction Lifter::Run(std::vector<std::string>* callees) {
  callees_ = callees;
  out_.name = fn_.name;
  out_.entry = fn_.address;
  const char* mislift = std::getenv(kMisliftEnv);
  std::vector<uint64_t> roots = {fn_.address};
  std::vector<const RseqCsEntry*> mine;
  for (const RseqCsEntry& e : obj_.descriptors()) {
    if (e.start_ip >= fn_.address && e.start_ip < fn_.address + fn_.size) {
      mine.push_back(&e);
      roots.push_back(e.abort_ip);
      out_.abort_ips.push_back(e.abort_ip);
    }
  }
  Explore(roots);
  for (const RseqCsEntry* e : mine) AddSignature(e->abort_ip);
  for (auto& [a, d] : code_) order_.push_back(&d);
  for (const Decoded* d : order_) labels_[d->addr] = LabelFor(obj_, *d);
  AnalyseFlags();
  PickTemps();
  for (Decoded* d : order_) {
    NativeInstr n;
    n.address = d->addr;
    n.where = obj_.Describe(d->addr);
    const uint8_t* p = d->section->bytes.data() + (d->addr - d->section->address);
    n.bytes.assign(p, p + d->in.length);
    n.text = Text(*d);
    n.first_ir = count_;
    fb_.Label(labels_.at(d->addr));
    if (d->merge) desc_reg_ = -1;
    const int desc_before = desc_reg_;
    Emit(*d);
    if (mislift != nullptr && n.where == mislift) EmitOffByOne(*d);
    // Any other write of the register forgets the descriptor address.
    if (desc_reg_ == desc_before && desc_reg_ >= 0 && d->ops[0].type == ZYDIS_OPERAND_TYPE_REGISTER &&
        (d->ops[0].actions & ZYDIS_OPERAND_ACTION_MASK_WRITE) &&
        ZydisRegisterGetLargestEnclosing(ZYDIS_MACHINE_MODE_LONG_64, d->ops[0].reg.value) ==
            ZYDIS_REGISTER_RAX + desc_reg_) {
      desc_reg_ = -1;
    }
    n.ir_count = count_ - n.first_ir;
    out_.code.push_back(std::move(n));
  }
  // Descriptors: labels at start_ip, start_ip + post_commit_offset, abort_ip.
  int k = 0;
  for (const RseqCsEntry* e : mine) {
    const std::string name = fn_.name + ".cs" + std::to_string(k++);
    auto label = [&](uint64_t a, const char* what) -> const std::string& {
      auto it = labels_.find(a);
      if (it == labels_.end()) {
        throw ImportError(obj_.path() + ": descriptor at " + obj_.Describe(e->address) + " (" + name + "): " +
                          what + " " + obj_.Describe(a) + " is not the address of an instruction of " + fn_.name +
                          "; check RSEQ_ASM_DEFINE_TABLE's labels");
      }
      return it->second;
    };
    fb_.Cs(name, label(e->start_ip, "start_ip"), label(e->start_ip + e->post_commit_offset, "start_ip + post_commit_offset"),
           label(e->abort_ip, "abort_ip"), e->flags, e->version);
    out_.descriptors.push_back(name);
  }
  return out_;
}

void Lifter::Emit(const Decoded& d) {
  const ZydisMnemonic m = d.in.mnemonic;
  if (d.is_sig) {
    const uint8_t* p = d.section->bytes.data() + (d.end() - 4 - d.section->address);
    uint32_t sig = 0;
    std::memcpy(&sig, p, 4);
    B().Sig(sig);
    return;
  }
  const bool lock = (d.in.attributes & ZYDIS_ATTRIB_HAS_LOCK) != 0;
  if (lock || m == ZYDIS_MNEMONIC_XCHG || m == ZYDIS_MNEMONIC_CMPXCHG || m == ZYDIS_MNEMONIC_XADD) {
    EmitAtomic(d);
    return;
  }
  switch (m) {
    case ZYDIS_MNEMONIC_NOP: case ZYDIS_MNEMONIC_ENDBR64:
      B().Nop();
      return;
    case ZYDIS_MNEMONIC_RET:
      if (d.in.operand_count_visible != 0) Fail(d, "ret with a stack adjustment", "use a plain ret");
      B().Ret();
      return;
    case ZYDIS_MNEMONIC_JMP:
      B().Jmp(LabelAt(d, *d.target));
      return;
    case ZYDIS_MNEMONIC_CALL:
      B().Call(obj_.FunctionAt(*d.target)->name);
      return;
    case ZYDIS_MNEMONIC_MOV: case ZYDIS_MNEMONIC_MOVSXD:
      EmitMov(d);
      return;
    case ZYDIS_MNEMONIC_LEA:
      EmitLea(d);
      return;
    case ZYDIS_MNEMONIC_CMP: case ZYDIS_MNEMONIC_TEST:
      EmitCompare(d);
      return;
    case ZYDIS_MNEMONIC_ADD: case ZYDIS_MNEMONIC_SUB: case ZYDIS_MNEMONIC_AND: case ZYDIS_MNEMONIC_OR:
    case ZYDIS_MNEMONIC_XOR: case ZYDIS_MNEMONIC_INC: case ZYDIS_MNEMONIC_DEC: case ZYDIS_MNEMONIC_SHL:
    case ZYDIS_MNEMONIC_SHR: case ZYDIS_MNEMONIC_IMUL:
      EmitAlu(d);
      return;
    default:
      if (IsJcc(m)) {
        EmitJcc(d);
        return;
      }
      Fail(d, "this instruction is not in the supported subset",
           "rewrite the critical section with the instructions listed in import/lift.h (rseqmc help import)");
  }
}

void Lifter::EmitMov(const Decoded& d) {
  const ZydisDecodedOperand& dst = d.ops[0];
  const ZydisDecodedOperand& src = d.ops[1];
  const int w = Width(d);
  if (d.in.mnemonic == ZYDIS_MNEMONIC_MOVSXD) {  // rd := sign-extended 32-bit source
    if (src.type == ZYDIS_OPERAND_TYPE_MEMORY) {
      B().Ld32(t_, MemOf(d, src));
    } else {
      B().And(t_, Reg(d, src.reg.value), Imm(kLow32));
    }
    B().Xor(t_, t_, Imm(kSign32));
    B().Sub(Reg(d, dst.reg.value), t_, Imm(kSign32));
    return;
  }
  if (dst.type == ZYDIS_OPERAND_TYPE_MEMORY) {
    const Mem m = MemOf(d, dst);
    int rt = 0;
    if (src.type == ZYDIS_OPERAND_TYPE_IMMEDIATE) {
      B().Li(t_, w == 32 ? static_cast<int64_t>(src.imm.value.u & kLow32) : src.imm.value.s);
      rt = t_;
    } else {
      rt = Reg(d, src.reg.value);
    }
    if (w == 64 && rt == desc_reg_) {
      EmitArm(d, m);
      return;
    }
    if (w == 64) {
      B().St(m, rt);
    } else {
      B().St32(m, rt);
    }
    return;
  }
  const int rd = Reg(d, dst.reg.value);
  switch (src.type) {
    case ZYDIS_OPERAND_TYPE_IMMEDIATE:
      B().Li(rd, w == 32 ? static_cast<int64_t>(src.imm.value.u & kLow32) : src.imm.value.s);
      return;
    case ZYDIS_OPERAND_TYPE_MEMORY:
      if (w == 64) {
        B().Ld(rd, MemOf(d, src));
      } else {
        B().Ld32(rd, MemOf(d, src));
      }
      return;
    default:
      if (w == 64) {
        B().Mov(rd, Reg(d, src.reg.value));
      } else {
        B().And(rd, Reg(d, src.reg.value), Imm(kLow32));
      }
  }
}

void Lifter::EmitLea(const Decoded& d) {
  const int rd = Reg(d, d.ops[0].reg.value);
  const auto& m = d.ops[1].mem;
  if (m.base == ZYDIS_REGISTER_RIP) {
    const uint64_t a = *obj_.PcRelTarget(d.addr + d.in.raw.disp.offset, d.end(), m.disp.value, nullptr);
    int k = 0;
    for (const RseqCsEntry& e : obj_.descriptors()) {
      if (e.address == a && e.start_ip >= fn_.address && e.start_ip < fn_.address + fn_.size) {
        out_.descriptor_loads.emplace_back(count_, fn_.name + ".cs" + std::to_string(k));
        B().Li(rd, 0);
        desc_reg_ = rd;
        desc_name_ = fn_.name + ".cs" + std::to_string(k);
        return;
      }
      if (e.start_ip >= fn_.address && e.start_ip < fn_.address + fn_.size) ++k;
    }
    Fail(d, "takes the address of " + obj_.Describe(a) + ", which is not a descriptor of " + fn_.name,
         "only `lea DESCRIPTOR(%rip)` of the function's own rseq_cs is modelled; pass other addresses as arguments");
  }
  const int w = Width(d);
  const int64_t disp = m.disp.value;
  const bool has_base = m.base != ZYDIS_REGISTER_NONE;
  const bool has_index = m.index != ZYDIS_REGISTER_NONE;
  const int out = w == 64 ? rd : t_;
  if (!has_base && !has_index) {
    B().Li(out, disp);
  } else if (!has_index) {
    B().Add(out, Reg(d, m.base), Imm(disp));
  } else {  // t_ := index << log2(scale); then + base, + disp, the last step writing `out`
    const int shift = m.scale == 8 ? 3 : m.scale == 4 ? 2 : m.scale == 2 ? 1 : 0;
    const bool more = has_base || disp != 0;
    B().Shl(more ? t_ : out, Reg(d, m.index), Imm(shift));
    if (has_base) B().Add(disp != 0 ? t_ : out, t_, R(Reg(d, m.base)));
    if (disp != 0) B().Add(out, t_, Imm(disp));
  }
  if (w == 32) B().And(rd, t_, Imm(kLow32));
}

void Lifter::EmitCompare(const Decoded& d) {
  if (!d.flags_used) {  // no jcc reads its flags: no effect at all
    B().Nop();
    return;
  }
  const int w = Width(d);
  Operand a = Source(d, d.ops[0], w);
  if (a.is_imm) Fail(d, "an immediate first operand", "is this code?");
  if (d.in.mnemonic == ZYDIS_MNEMONIC_TEST) {
    const Operand b = Source(d, d.ops[1], w);
    B().Alu(Op::kAnd, fa_, a.reg, b);
    Extend(d, fa_, w);
    B().Li(fb_reg_, 0);
    return;
  }
  B().Mov(fa_, a.reg);
  Extend(d, fa_, w);
  Operand b = Source(d, d.ops[1], w);
  if (b.is_imm) {
    int64_t v = b.imm;
    if (w == 32) v = d.signed_use ? static_cast<int32_t>(static_cast<uint32_t>(v)) : (v & kLow32);
    B().Li(fb_reg_, v);
  } else {
    B().Mov(fb_reg_, b.reg);
    Extend(d, fb_reg_, w);
  }
}

void Lifter::EmitAlu(const Decoded& d) {
  const ZydisMnemonic m = d.in.mnemonic;
  const int w = Width(d);
  const ZydisDecodedOperand& dst = d.ops[0];
  Op op = Op::kAdd;
  switch (m) {
    case ZYDIS_MNEMONIC_SUB: case ZYDIS_MNEMONIC_DEC: op = Op::kSub; break;
    case ZYDIS_MNEMONIC_AND: op = Op::kAnd; break;
    case ZYDIS_MNEMONIC_OR: op = Op::kOr; break;
    case ZYDIS_MNEMONIC_XOR: op = Op::kXor; break;
    case ZYDIS_MNEMONIC_SHL: op = Op::kShl; break;
    case ZYDIS_MNEMONIC_SHR: op = Op::kShr; break;
    case ZYDIS_MNEMONIC_IMUL: op = Op::kMul; break;
    default: break;
  }
  // Second operand: the visible source (imul's 3-operand form: ops[1] * ops[2]).
  const bool unary = m == ZYDIS_MNEMONIC_INC || m == ZYDIS_MNEMONIC_DEC;
  const bool imul3 = m == ZYDIS_MNEMONIC_IMUL && d.in.operand_count_visible == 3;
  if (m == ZYDIS_MNEMONIC_IMUL && d.in.operand_count_visible < 2) Fail(d, "one-operand imul", "use imul r, r/m");
  if ((op == Op::kShl || op == Op::kShr) && d.ops[1].type != ZYDIS_OPERAND_TYPE_IMMEDIATE) {
    Fail(d, "a shift by %cl", "shift by an immediate");
  }
  // Current value of the destination (memory destinations are loaded into t_).
  int cur = 0;
  std::optional<Mem> mem;
  if (dst.type == ZYDIS_OPERAND_TYPE_MEMORY) {
    mem = MemOf(d, dst);
    if (w == 64) {
      B().Ld(t_, *mem);
    } else {
      B().Ld32(t_, *mem);
    }
    cur = t_;
  } else {
    cur = Reg(d, dst.reg.value);
  }
  Operand b = unary ? Imm(1) : Source(d, d.ops[imul3 ? 2 : 1], w);
  // A 64-bit register destination is written by the operation itself; otherwise
  // the result goes to t_ and one last instruction stores or zero-extends it.
  const bool direct = !mem && w == 64 && !imul3;
  const int res = direct ? cur : t_;
  if (imul3) {
    const Operand a = Source(d, d.ops[1], w);
    B().Mul(t_, a.reg, b);
  } else {
    if (op == Op::kShr && w == 32) {  // the bits above 31 must not shift in
      B().And(t_, cur, Imm(kLow32));
      cur = t_;
    }
    if (op == Op::kShl || op == Op::kShr) b = Imm(b.imm & (w - 1));
    if (d.flags_used && op == Op::kSub) {  // flags of cmp old, src
      B().Mov(fa_, cur);
      Extend(d, fa_, w);
      if (b.is_imm) {
        int64_t v = w == 32 && d.signed_use ? static_cast<int32_t>(static_cast<uint32_t>(b.imm)) : b.imm;
        B().Li(fb_reg_, v);
      } else {
        B().Mov(fb_reg_, b.reg);
        Extend(d, fb_reg_, w);
      }
    }
    B().Alu(op, res, cur, b);
  }
  // The one architectural effect, last.
  if (mem) {
    if (w == 64) {
      B().St(*mem, t_);
    } else {
      B().St32(*mem, t_);
    }
  } else if (!direct) {
    if (w == 64) {
      B().Mov(Reg(d, dst.reg.value), t_);
    } else {
      B().And(Reg(d, dst.reg.value), t_, Imm(kLow32));
    }
  }
  if (d.flags_used && op != Op::kSub) {  // flags of the result against 0
    B().Mov(fa_, res);
    Extend(d, fa_, w);
    B().Li(fb_reg_, 0);
  }
}

void Lifter::EmitJcc(const Decoded& d) {
  const Decoded& s = *order_[d.setter];
  const int w = s.in.mnemonic == ZYDIS_MNEMONIC_CMPXCHG ? 64 : Width(s);
  const std::string& target = LabelAt(d, *d.target);
  switch (d.in.mnemonic) {
    case ZYDIS_MNEMONIC_JZ: B().Beq(fa_, R(fb_reg_), target); return;
    case ZYDIS_MNEMONIC_JNZ: B().Bne(fa_, R(fb_reg_), target); return;
    case ZYDIS_MNEMONIC_JB: B().Bltu(fa_, R(fb_reg_), target); return;
    case ZYDIS_MNEMONIC_JNB: B().Bgeu(fa_, R(fb_reg_), target); return;
    case ZYDIS_MNEMONIC_JBE: B().Bgeu(fb_reg_, R(fa_), target); return;
    case ZYDIS_MNEMONIC_JNBE: B().Bltu(fb_reg_, R(fa_), target); return;
    case ZYDIS_MNEMONIC_JL: B().Blt(fa_, R(fb_reg_), target); return;
    case ZYDIS_MNEMONIC_JNL: B().Bge(fa_, R(fb_reg_), target); return;
    case ZYDIS_MNEMONIC_JLE: B().Bge(fb_reg_, R(fa_), target); return;
    case ZYDIS_MNEMONIC_JNLE: B().Blt(fb_reg_, R(fa_), target); return;
    case ZYDIS_MNEMONIC_JS: case ZYDIS_MNEMONIC_JNS: {
      // SF: the sign bit of the operation's width of FA - FB.
      B().Sub(t_, fa_, R(fb_reg_));
      B().And(t_, t_, Imm(w == 64 ? INT64_MIN : kSign32));
      if (d.in.mnemonic == ZYDIS_MNEMONIC_JS) {
        B().Bne(t_, Imm(0), target);
      } else {
        B().Beq(t_, Imm(0), target);
      }
      return;
    }
    default:
      Fail(d, "a condition that is not modelled", "see import/lift.h");
  }
}

// `mov %reg, m` of a descriptor's address: the arming store (rseq_arm),
// after an assert that m is the running thread's rseq->rseq_cs, so that code
// storing the address anywhere else fails loudly instead of being modelled as
// arming. rseq_arm (rather than a store of the simulator's descriptor address)
// keeps the program valid for the JIT of kernel/harness, whose descriptors
// live elsewhere.
void Lifter::EmitArm(const Decoded& d, const Mem& m) {
  if (m.has_index) Fail(d, "stores a descriptor address through an index register", "use base+disp");
  B().Add(t_, m.base, Imm(m.disp));
  B().RseqAddr(fa_);
  B().Add(fa_, fa_, Imm(static_cast<int64_t>(kRseqOffRseqCs)));
  B().Assert(t_, CmpKind::kEq, R(fa_),
             "imported " + fn_.name + " stores the address of " + desc_name_ +
                 " somewhere else than this thread's rseq->rseq_cs (pass the thread's struct rseq)");
  B().RseqArm(desc_name_);
}

// The test-only wrong lifting (kMisliftEnv): one more in the destination.
void Lifter::EmitOffByOne(const Decoded& d) {
  const ZydisDecodedOperand& dst = d.ops[0];
  if (!(dst.actions & ZYDIS_OPERAND_ACTION_MASK_WRITE)) return;
  if (dst.type == ZYDIS_OPERAND_TYPE_REGISTER) {
    const int r = Reg(d, dst.reg.value);
    B().Add(r, r, Imm(1));
  } else if (dst.type == ZYDIS_OPERAND_TYPE_MEMORY) {
    const Mem m = MemOf(d, dst);
    B().Ld(t_, m);
    B().Add(t_, t_, Imm(1));
    B().St(m, t_);
  }
}

void Lifter::EmitAtomic(const Decoded& d) {
  const ZydisMnemonic m = d.in.mnemonic;
  const int w = Width(d);
  if (w != 64) Fail(d, "a 32-bit atomic operation", "the model has 64-bit xchg/xadd/cmpxchg only");
  if (d.ops[0].type != ZYDIS_OPERAND_TYPE_MEMORY) {
    Fail(d, "a register-to-register exchange", "exchange with memory, or use mov");
  }
  const Mem mem = MemOf(d, d.ops[0]);
  if (mem.has_index && m == ZYDIS_MNEMONIC_CMPXCHG) {
    Fail(d, "cmpxchg with an index register", "compute the address with lea first");
  }
  if (d.flags_used && m != ZYDIS_MNEMONIC_CMPXCHG) Fail(d, "jcc on the flags of a locked operation", "compare after it");
  switch (m) {
    case ZYDIS_MNEMONIC_XCHG: {
      const int r = Reg(d, d.ops[1].reg.value);
      B().Xchg(r, mem, r);
      return;
    }
    case ZYDIS_MNEMONIC_XADD: {
      const int r = Reg(d, d.ops[1].reg.value);
      B().Xadd(r, mem, r);
      return;
    }
    case ZYDIS_MNEMONIC_CMPXCHG: {
      if (d.flags_used) B().Mov(fa_, 0);
      B().Cas(0, mem, 0, Reg(d, d.ops[1].reg.value));
      if (d.flags_used) B().Mov(fb_reg_, 0);  // ZF: old rax == old memory (now in rax)
      return;
    }
    case ZYDIS_MNEMONIC_ADD: {
      Operand b = Source(d, d.ops[1], w);
      if (b.is_imm) B().Li(t_, b.imm);
      B().Xadd(t_, mem, b.is_imm ? t_ : b.reg);
      return;
    }
    default:
      Fail(d, "this locked operation is not modelled", "use lock add, lock xadd, xchg or lock cmpxchg");
  }
}

}  // namespace

std::string NativeInstr::Listing() const {
  std::string s = where + ":  ";
  for (uint8_t b : bytes) {
    char buf[4];
    std::snprintf(buf, sizeof buf, "%02x ", b);
    s += buf;
  }
  return s + " " + text;
}

std::vector<ImportedFunction> ImportFunctions(const ElfObject& obj, const std::vector<std::string>& names,
                                              ScenarioBuilder& b, SourceLoc at) {
  std::vector<ImportedFunction> out;
  std::shared_ptr<const ElfObject> shared;  // one copy for the original-bytes image
  std::vector<std::string> todo(names.rbegin(), names.rend());
  std::set<std::string> done;
  while (!todo.empty()) {
    const std::string name = todo.back();
    todo.pop_back();
    if (!done.insert(name).second) continue;
    const FunctionSymbol* fn = obj.FindFunction(name);
    if (fn == nullptr) {
      std::string have;
      for (const FunctionSymbol& f : obj.functions()) have += (have.empty() ? "" : ", ") + f.name;
      throw ImportError(obj.path() + ": no function '" + name + "' (functions: " + (have.empty() ? "none" : have) +
                            ")",
                        have.empty() ? "the file has no function symbols (STT_FUNC); was it stripped?"
                                     : "name one of the functions listed");
    }
    std::vector<std::string> callees;
    FunctionBuilder& fb = b.Func(name, at);
    fb.At(at);
    out.push_back(Lifter(obj, *fn, fb).Run(&callees));
    if (!shared) shared = std::make_shared<const ElfObject>(obj);
    out.back().object = shared;
    for (auto it = callees.rbegin(); it != callees.rend(); ++it) todo.push_back(*it);
  }
  // Apply the relocations FillOriginalCode will apply now, so that one that
  // cannot be applied is an error at this import (the PC-relative values do
  // not depend on the load bias).
  for (const Section& sec : obj.sections()) {
    if (!sec.executable && sec.name != "__rseq_cs") continue;
    std::vector<uint64_t> unrelocated;
    (void)obj.RelocatedBytes(sec, 0, &unrelocated);
  }
  return out;
}

namespace {

// Scenario::original (sim/original_code.h) from the imported functions: each
// file's executable sections and __rseq_cs, relocated for its load bias.
void FillOriginalCode(const std::vector<ImportedFunction>& imported, Scenario& s) {
  OriginalCode& oc = s.original;
  oc = OriginalCode{};
  std::map<const ElfObject*, uint64_t> bias_of;
  std::map<const ElfObject*, std::vector<uint64_t>> unrelocated;
  for (const ImportedFunction& f : imported) {
    const ElfObject* obj = f.object.get();
    if (obj == nullptr || bias_of.count(obj)) continue;
    const uint64_t bias = obj->fixed_address() ? 0 : kOriginalLoadBase + kOriginalLoadStride * bias_of.size();
    bias_of[obj] = bias;
    for (const Section& sec : obj->sections()) {
      if (!sec.executable && sec.name != "__rseq_cs") continue;
      oc.segments.push_back({sec.name, sec.address + bias, obj->RelocatedBytes(sec, bias, &unrelocated[obj]),
                             sec.executable});
    }
  }
  const Program& p = s.program;
  for (const ImportedFunction& f : imported) {
    const int fi = p.FindFunction(f.name);
    if (fi < 0 || f.object == nullptr) continue;
    const uint64_t bias = bias_of.at(f.object.get());
    const uint32_t first = p.functions[fi].first;
    OriginalFunction of{static_cast<uint32_t>(fi), f.entry + bias, ""};
    if (f.uses_callee_saved) {
      of.not_runnable = "its machine code uses rbx, rbp or r12-r15, where the harness keeps its state";
    }
    for (const NativeInstr& n : f.code) {
      oc.instr_address[first + n.first_ir] = n.address + bias;
      for (uint64_t field : unrelocated.at(f.object.get())) {
        if (field >= n.address && field < n.address + n.bytes.size() && of.not_runnable.empty()) {
          of.not_runnable = "`" + n.text + "` at " + n.where + " has a relocation the harness does not apply";
        }
      }
    }
    for (uint64_t a : f.abort_ips) oc.abort_ips.push_back(a + bias);
    oc.functions.push_back(std::move(of));
  }
}

}  // namespace

void FinishImport(const std::vector<ImportedFunction>& imported, Scenario& s) {
  if (imported.empty()) return;  // a scenario without imports keeps an empty origin
  Program& p = s.program;
  p.origin.resize(p.code.size());
  for (const ImportedFunction& f : imported) {
    const int fi = p.FindFunction(f.name);
    if (fi < 0) continue;
    const uint32_t first = p.functions[fi].first;
    for (const auto& [local, cs] : f.descriptor_loads) {
      p.code[first + local].imm = static_cast<int64_t>(DescriptorAddress(p, static_cast<uint32_t>(p.FindDescriptor(cs))));
    }
    for (const NativeInstr& n : f.code) p.origin[first + n.first_ir] = n.Listing();
  }
  FillOriginalCode(imported, s);
}

}  // namespace rseqmc::import
