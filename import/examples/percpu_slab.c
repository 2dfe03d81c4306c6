/* A per-CPU slab in the style of tcmalloc's TcmallocSlab (tcmalloc/internal/
 * percpu_tcmalloc.h, percpu_rseq_x86_64.S): CPU c owns the region
 * slabs + (c << SLAB_SHIFT), a header {u32 current; u32 end;} followed by
 * item slots 1..end (slot i at byte 8 * i). Push and pop read the CPU number
 * inside the critical section (any preemption or migration after that read
 * aborts), so they need no CPU comparison; the commit is the store of the new
 * `current`. Simplified from tcmalloc (one size class, 32-bit header fields);
 * written for rseqmc's ELF import, compiled with gcc -O2. */
#include "rseq_x86.h"

#define SLAB_SHIFT 6

/* 0: pushed; 1: the CPU's slab is full; -1: aborted (retry). */
int slab_push(struct rseq_abi *rs, char *slabs, intptr_t item) {
  uint64_t region, cur;
  __asm__ __volatile__ goto(
      RSEQ_ASM_DEFINE_TABLE(3, 1f, 2f, 4f)
      RSEQ_ASM_DEFINE_EXIT_POINT(1f, %l[full])
      RSEQ_ASM_STORE_RSEQ_CS(1, 3b, %[rseq_cs])
      "movl %[current_cpu_id], %k[region]\n\t"
      "shlq $" RSEQ_STR(SLAB_SHIFT) ", %[region]\n\t"
      "addq %[slabs], %[region]\n\t"
      "movl (%[region]), %k[cur]\n\t"
      "cmpl 4(%[region]), %k[cur]\n\t"
      "jae %l[full]\n\t"
      "movq %[item], 8(%[region], %[cur], 8)\n\t"
      "addl $1, %k[cur]\n\t"
      "movl %k[cur], (%[region])\n\t"
      "2:\n\t"
      RSEQ_ASM_DEFINE_ABORT(4, abort)
      : [region] "=&r"(region), [cur] "=&r"(cur)
      : [current_cpu_id] "m"(rs->cpu_id), [rseq_cs] "m"(rs->rseq_cs), [slabs] "r"(slabs), [item] "r"(item)
      : "memory", "cc", "rax"
      : abort, full);
  (void)region;
  (void)cur;
  return 0;
abort:
  return -1;
full:
  return 1;
}

/* 0: popped into *out; 1: the CPU's slab is empty; -1: aborted (retry).
 * The item goes through memory: with register outputs, gcc 12 -O2 compiled
 * the abort path of this asm goto into the success return (rseqmc found it;
 * import/examples/README.md). */
int slab_pop(struct rseq_abi *rs, char *slabs, intptr_t *out) {
  __asm__ __volatile__ goto(
      RSEQ_ASM_DEFINE_TABLE(3, 1f, 2f, 4f)
      RSEQ_ASM_DEFINE_EXIT_POINT(1f, %l[empty])
      RSEQ_ASM_STORE_RSEQ_CS(1, 3b, %[rseq_cs])
      "movl %[current_cpu_id], %%ecx\n\t"
      "shlq $" RSEQ_STR(SLAB_SHIFT) ", %%rcx\n\t"
      "addq %[slabs], %%rcx\n\t"
      "movl (%%rcx), %%r8d\n\t"
      "testl %%r8d, %%r8d\n\t"
      "jz %l[empty]\n\t"
      "movq (%%rcx, %%r8, 8), %%rdx\n\t"
      "movq %%rdx, %[out]\n\t"
      "subl $1, %%r8d\n\t"
      "movl %%r8d, (%%rcx)\n\t"
      "2:\n\t"
      RSEQ_ASM_DEFINE_ABORT(4, abort)
      : /* no outputs */
      : [current_cpu_id] "m"(rs->cpu_id), [rseq_cs] "m"(rs->rseq_cs), [slabs] "r"(slabs), [out] "m"(*out)
      : "memory", "cc", "rax", "rcx", "rdx", "r8"
      : abort, empty);
  return 0;
abort:
  return -1;
empty:
  return 1;
}
