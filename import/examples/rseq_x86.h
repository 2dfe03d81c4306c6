/* Restartable-sequence building blocks for x86-64 in the conventions of
 * librseq (include/rseq/arch/x86.h, github.com/compudj/librseq): each critical
 * section has a `struct rseq_cs` descriptor in section __rseq_cs (32-byte
 * aligned, version 0, flags 0, start_ip, post_commit_offset, abort_ip), a
 * pointer to it in __rseq_cs_ptr_array, one (start_ip, exit_ip) pair per jump
 * out of the section in __rseq_exit_point_array, and its abort handler in
 * __rseq_failure behind the 4-byte signature (encoded as `ud1 SIG(%rip),%edi`,
 * so that a disassembler stays in sync). Written for rseqmc's ELF import
 * (import/); not copied from librseq.
 *
 * The thread's `struct rseq` is passed as an argument (`rs`) instead of being
 * found through %fs and __rseq_offset, so the compiled functions read it as a
 * plain memory operand: the importer models the code, not glibc's TLS. */
#ifndef RSEQMC_IMPORT_EXAMPLES_RSEQ_X86_H_
#define RSEQMC_IMPORT_EXAMPLES_RSEQ_X86_H_

#include <stdint.h>

#define RSEQ_SIG 0x53053053

/* include/uapi/linux/rseq.h */
struct rseq_abi {
  uint32_t cpu_id_start;
  uint32_t cpu_id;
  uint64_t rseq_cs;
  uint32_t flags;
  uint32_t node_id;
  uint32_t mm_cid;
} __attribute__((aligned(32)));

#define RSEQ_STR_1(x) #x
#define RSEQ_STR(x) RSEQ_STR_1(x)

/* The descriptor `label`, its pointer-array entry. */
#define RSEQ_ASM_DEFINE_TABLE(label, start_ip, post_commit_ip, abort_ip)                  \
  ".pushsection __rseq_cs, \"aw\"\n\t"                                                    \
  ".balign 32\n\t" RSEQ_STR(label) ":\n\t"                                                \
  ".long 0x0, 0x0\n\t"                                                                    \
  ".quad " RSEQ_STR(start_ip) ", (" RSEQ_STR(post_commit_ip) " - " RSEQ_STR(start_ip)    \
  "), " RSEQ_STR(abort_ip) "\n\t"                                                         \
  ".popsection\n\t"                                                                       \
  ".pushsection __rseq_cs_ptr_array, \"aw\"\n\t"                                          \
  ".quad " RSEQ_STR(label) "b\n\t"                                                        \
  ".popsection\n\t"

/* A jump from inside the section at `start_ip` to the C label `exit_ip`. */
#define RSEQ_ASM_DEFINE_EXIT_POINT(start_ip, exit_ip)                                     \
  ".pushsection __rseq_exit_point_array, \"aw\"\n\t"                                      \
  ".quad " RSEQ_STR(start_ip) ", " RSEQ_STR(exit_ip) "\n\t"                               \
  ".popsection\n\t"

/* rseq->rseq_cs = &descriptor: one 64-bit store, then the section begins. */
#define RSEQ_ASM_STORE_RSEQ_CS(label, cs_label, rseq_cs)                                  \
  "leaq " RSEQ_STR(cs_label) "(%%rip), %%rax\n\t"                                         \
  "movq %%rax, " RSEQ_STR(rseq_cs) "\n\t" RSEQ_STR(label) ":\n\t"

/* Abort if the thread is no longer on `cpu_id` (the CPU it read before). */
#define RSEQ_ASM_CMP_CPU_ID(cpu_id, current_cpu_id, label)                                \
  "cmpl %[" RSEQ_STR(cpu_id) "], %[" RSEQ_STR(current_cpu_id) "]\n\t"                     \
  "jnz " RSEQ_STR(label) "\n\t"

/* The abort handler in __rseq_failure: signature, then a jump to the C label. */
#define RSEQ_ASM_DEFINE_ABORT(label, abort_label)                                         \
  ".pushsection __rseq_failure, \"ax\"\n\t"                                               \
  ".byte 0x0f, 0xb9, 0x3d\n\t"                                                            \
  ".long " RSEQ_STR(RSEQ_SIG) "\n\t" RSEQ_STR(label) ":\n\t"                              \
  "jmp %l[" RSEQ_STR(abort_label) "]\n\t"                                                 \
  ".popsection\n\t"

#endif
