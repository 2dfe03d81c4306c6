// The ABI registry: which module implements each KernelModel.
#include "sim/kernel/abi.h"

#include <array>
#include <bit>
#include <cstdio>

#include "sim/machine.h"

namespace rseqmc {

const KernelAbi& Abi418Instance();  // sim/kernel/abi_4_18.cc
const KernelAbi& Abi60Instance();   // sim/kernel/abi_6_0.cc
const KernelAbi& Abi619Instance();  // sim/kernel/abi_6_19.cc
const KernelAbi& AbiRfc2015Instance();  // sim/kernel/rfc2015.cc
const KernelAbi& AbiMmCidInstance();    // sim/kernel/abi_mm_cid.cc

int64_t KernelAbi::SysRestartableSequences(Machine&, int, int, uint64_t, uint64_t, uint64_t) const {
  return kErrEnosys;
}

std::optional<uint32_t> KernelAbi::RulesDifferingFrom(const KernelAbi& other) const {
  if (&other == this) return 0u;
  return std::nullopt;
}

// in_rseq_cs() (kernel/rseq.c): ip - start_ip < post_commit_offset, one
// unsigned comparison, for the descriptor rseq->rseq_cs points to. Peek reads
// 0 outside data memory: a descriptor there answers "outside".
bool KernelAbi::InRseqCs(const Machine& m, int t, uint64_t ip) const {
  const uint64_t area = m.thread(t).rseq_area;
  const uint64_t cs = area == 0 ? 0 : m.Peek(area + kRseqOffRseqCs, 8);
  return cs != 0 && ip - m.Peek(cs + 8, 8) < m.Peek(cs + 16, 8);
}

// 6.3's allocator (kernel/sched/sched.h@v6.3 mm_cid_get() -> __mm_cid_get()
// -> __mm_cid_try_get(): cpumask_first_zero() of the cidmask).
int KernelAbi::MmCidGet(Machine& m, int t, int) const {
  MmCidState& st = m.mmcid();
  const int cid = std::countr_zero(~st.cidmask);
  st.cidmask |= uint64_t{1} << cid;
  m.kthread(t).last_mm_cid = cid;
  return cid;
}

// 6.3 switch_mm_cid() -> mm_cid_put(): the ID goes back to the cidmask.
void KernelAbi::MmCidSwitchOut(Machine& m, int t, int) const {
  const int cid = m.kthread(t).mm_cid;
  if (cid >= 0) m.mmcid().cidmask &= ~(uint64_t{1} << cid);
}

void KernelAbi::SchedMmCidMigrateTo(Machine&, int, int, int) const {}

// 6.3 sched_mm_cid_exit_signals() -> mm_cid_put().
void KernelAbi::SchedMmCidExitSignals(Machine& m, int t, int cpu) const {
  MmCidSwitchOut(m, t, cpu);
  m.kthread(t).last_mm_cid = -1;
}

std::optional<AbiMismatch> KernelAbi::NotApplicable(const Scenario& s) const {
  if (s.preemption == Preemption::kVoluntary) {
    return AbiMismatch{s.preemption_loc,
                       std::string("`preempt voluntary` is an option of the 2015 RFC's restart rule (only a "
                                   "switch-out inside a region restarts); kernel ") +
                           info().name + " has no such rule (reference/rfc2015.md)",
                       "remove the `preempt` line, or run this scenario with --kernel rfc2015"};
  }
  const Instr* rfc = FindRfc2015Use(s.program);
  if (rfc == nullptr) return std::nullopt;
  return AbiMismatch{rfc->loc,
                     std::string("`") + OpName(rfc->op) + "` calls the 2015 RFC's restartable_sequences(), which kernel " +
                         info().name + " does not have (the system call returns ENOSYS there)",
                     "run this scenario with --kernel rfc2015"};
}

const Instr* FindRfc2015Use(const Program& p) {
  for (const Instr& in : p.code) {
    if (in.op == Op::kRfcRegion || in.op == Op::kRfcCpuPtr) return &in;
  }
  return nullptr;
}

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
    case KernelModel::kRfc2015: return AbiRfc2015Instance();
    case KernelModel::kMmCid: return AbiMmCidInstance();
  }
  return AbiMmCidInstance();
}

std::span<const KernelAbi* const> AllAbis() {
  static const std::array<const KernelAbi*, 5> kAll{&AbiRfc2015Instance(), &Abi418Instance(), &Abi60Instance(),
                                                    &AbiMmCidInstance(), &Abi619Instance()};
  return kAll;
}

}  // namespace rseqmc
