/* PLANTED-BUG COPY of percpu_ops.c (see percpu_add_nocheck.rsq). librseq-style per-CPU operations, compiled with gcc -O2 and imported by
 * rseqmc (import/examples/percpu_add.rsq, cbne_store.rsq). Each returns 0 on
 * commit, -1 when the section was aborted (the caller retries), and
 * rseq_load_cbne_store returns 1 when *v != expect. */
#include "rseq_x86.h"

/* PLANTED BUG (copy of percpu_ops.c): the section does not compare cpu_id with
 * the CPU read before it, so a thread migrated in between adds to another
 * CPU's counter, concurrently with that CPU's thread. */
static inline __attribute__((always_inline)) int rseq_addv(struct rseq_abi *rs, intptr_t *v,
                                                           intptr_t count, int cpu) {
  __asm__ __volatile__ goto(
      RSEQ_ASM_DEFINE_TABLE(3, 1f, 2f, 4f)
      RSEQ_ASM_STORE_RSEQ_CS(1, 3b, %[rseq_cs])
      "addq %[count], %[v]\n\t"
      "2:\n\t"
      RSEQ_ASM_DEFINE_ABORT(4, abort)
      : /* no outputs */
      : [cpu_id] "r"(cpu), [current_cpu_id] "m"(rs->cpu_id), [rseq_cs] "m"(rs->rseq_cs),
        [v] "m"(*v), [count] "er"(count)
      : "memory", "cc", "rax"
      : abort);
  return 0;
abort:
  return -1;
}

/* if (*v != expect) return 1; else *v = newv, on CPU `cpu`. */
static inline __attribute__((always_inline)) int rseq_cbne_store(struct rseq_abi *rs, intptr_t *v,
                                                                 intptr_t expect, intptr_t newv,
                                                                 int cpu) {
  __asm__ __volatile__ goto(
      RSEQ_ASM_DEFINE_TABLE(3, 1f, 2f, 4f)
      RSEQ_ASM_DEFINE_EXIT_POINT(1f, %l[ne])
      RSEQ_ASM_STORE_RSEQ_CS(1, 3b, %[rseq_cs])
      RSEQ_ASM_CMP_CPU_ID(cpu_id, current_cpu_id, 4f)
      "cmpq %[v], %[expect]\n\t"
      "jnz %l[ne]\n\t"
      "movq %[newv], %[v]\n\t"
      "2:\n\t"
      RSEQ_ASM_DEFINE_ABORT(4, abort)
      : /* no outputs */
      : [cpu_id] "r"(cpu), [current_cpu_id] "m"(rs->cpu_id), [rseq_cs] "m"(rs->rseq_cs),
        [v] "m"(*v), [expect] "r"(expect), [newv] "r"(newv)
      : "memory", "cc", "rax"
      : abort, ne);
  return 0;
abort:
  return -1;
ne:
  return 1;
}

/* counters[cpu * 8] += count for the CPU the thread runs on (64-byte stride). */
int percpu_add(struct rseq_abi *rs, intptr_t *counters, intptr_t count) {
  int cpu = *(volatile uint32_t *)&rs->cpu_id_start;
  return rseq_addv(rs, &counters[cpu * 8], count, cpu);
}

/* Compare-and-store on this CPU's slot of `slots` (64-byte stride). */
int percpu_cbne_store(struct rseq_abi *rs, intptr_t *slots, intptr_t expect, intptr_t newv) {
  int cpu = *(volatile uint32_t *)&rs->cpu_id_start;
  return rseq_cbne_store(rs, &slots[cpu * 8], expect, newv, cpu);
}
