/*
 * scenarios/percpu_counter.rsq in Promela, for the side-by-side comparison
 * with SPIN (tools/bench/spin_compare, tools/bench/README.md).
 *
 * Same question, same bounds: 2 CPUs, NT threads (THREADS, -DNT=2 or 3; each
 * starts on a CPU chosen in init: every placement, affinity all), OPS
 * increments each (-DOPS), at most MAXEV injected events per execution
 * (-DMAXEV = --max-events; preempt, migrate, SIGUSR1, membarrier-RSEQ IPI, on
 * whichever thread is running on a CPU), and the property sum(counter) ==
 * THREADS * OPS asserted in the final state (when the last thread exits).
 *
 * Planted bug (-DBUG_NO_CPU_CHECK): instruction 2 (`bne r6, r1, abort`, the
 * RSEQ_ASM_CMP_CPU_ID step) falls through, as if deleted; spin_compare
 * deletes the same line from the .rsq for rseqmc. A migration between the
 * cpu_id_start read and start_ip then aborts nothing and the section runs
 * against the old CPU's counter, racing with that CPU's thread
 * (scenarios/buggy/cpu_not_rechecked.rsq): sum(counter) < THREADS * OPS with
 * one event when two threads start on one CPU.
 *
 * Granularity: one Promela transition (a d_step) is one boundary of the
 * simulator: the thread's exit-to-user work (signal frame with the rseq fixup,
 * then the notify-resume fixup and ID update) followed by exactly one IR
 * instruction. `pc` is the IR's global instruction index, numbered as in the
 * .rsq file (functions in file order), so the table below can be checked line
 * by line against it:
 *
 *   rseq_load_add_store            worker                      on_sigusr1
 *    0 rseq_arm load_add_store      11 la r10, counter          24 la r1, signals
 *    1 start: rseq_load r6, cpu_id  12 li r8, 0                 25 li r2, 1
 *    2 bne r6, r1, abort            13 loop: beq r8, OPS, done  26 xadd r3, [r1], r2
 *    3 ld r7, [r2]                  14 retry: rseq_load r1, cpu_id_start
 *    4 add r7, r7, r3               15 shl r2, r1, 6            27 ret (sigreturn)
 *    5 st [r2], r7   (commit)       16 add r2, r2, r10
 *    6 post: li r0, 0               17 li r3, 1
 *    7 ret                          18 call rseq_load_add_store
 *    8 sig 0x53053053               19 bne r0, 0, retry
 *    9 abort: li r0, -1             20 add r8, r8, 1
 *   10 ret                          21 jmp loop
 *                                   22 done: mov r0, r8
 *                                   23 ret (thread exit)
 *
 * The kernel part (events, run queues, exit-to-user work, the abort rule,
 * the signal handler, thread exit and the initial state) is rseq_kernel.pml,
 * shared with spinlock.pml.
 *
 * Memory: mem[addr / 64] with counter at 0 (two per-CPU slots 64 bytes apart)
 * and signals at 128, as the .rsq layout.
 *
 * rsq-fingerprint: b6f15ab74fe8239f (scenarios/percpu_counter.rsq this model follows;
 * spin_compare warns when the scenario's statements change)
 */

#define CS_START 1         /* start: */
#define CS_POST 6          /* post: */
#define ABORT_PC 9         /* abort: */
#define HANDLER_PC 24      /* on_sigusr1 */
#define SIGNALS_ADDR 128
#define MEM_WORDS 3        /* counter[0] at 0, counter[1] at 64, signals at 128 */
#define FINAL_PROPERTY (mem[0] + mem[1] == NT * OPS)   /* sum(counter) == THREADS * OPS */

#include "rseq_kernel.pml"

proctype Worker() {
  byte pc = 11;
  short r0, r1, r2, r3, r6, r7, r8, r10;
  byte ra;
  byte hpc;
  short hr1, hr2, hr3;
end:
  do
  :: d_step {
      running[cpu[t]] == t ->
      return_to_user();
      if
      :: inh[t] -> handler_step()          /* the SIGUSR1 handler */
      :: else ->
        if
        :: pc == 0 -> rseq_cs[t] = 1; pc = 1
        :: pc == 1 -> r6 = cpu_id[t]; pc = 2
#ifdef BUG_NO_CPU_CHECK
        :: pc == 2 -> pc = 3                 /* the planted bug: no cpu_id compare */
#else
        :: pc == 2 -> if :: r6 != r1 -> pc = 9 :: else -> pc = 3 fi
#endif
        :: pc == 3 -> r7 = mem[r2 / 64]; pc = 4
        :: pc == 4 -> r7 = r7 + r3; pc = 5
        :: pc == 5 -> mem[r2 / 64] = r7; pc = 6
        :: pc == 6 -> r0 = 0; pc = 7
        :: pc == 7 -> pc = ra
        :: pc == 9 -> r0 = -1; pc = 10
        :: pc == 10 -> pc = ra
        :: pc == 11 -> r10 = 0; pc = 12
        :: pc == 12 -> r8 = 0; pc = 13
        :: pc == 13 -> if :: r8 == OPS -> pc = 22 :: else -> pc = 14 fi
        :: pc == 14 -> r1 = cpu_id_start[t]; pc = 15
        :: pc == 15 -> r2 = r1 << 6; pc = 16
        :: pc == 16 -> r2 = r2 + r10; pc = 17
        :: pc == 17 -> r3 = 1; pc = 18
        :: pc == 18 -> ra = 19; pc = 0
        :: pc == 19 -> if :: r0 != 0 -> pc = 14 :: else -> pc = 20 fi
        :: pc == 20 -> r8 = r8 + 1; pc = 21
        :: pc == 21 -> pc = 13
        :: pc == 22 -> r0 = r8; pc = 23
        :: pc == 23 -> thread_exit()
        fi
      fi
    }
  od
}
