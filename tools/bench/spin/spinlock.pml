/*
 * scenarios/percpu_spinlock.rsq in Promela, for the side-by-side comparison
 * with SPIN (tools/bench/spin_compare, tools/bench/README.md). The kernel
 * part (events, run queues, exit-to-user work, the abort rule, the signal
 * handler, thread exit and the initial state) is rseq_kernel.pml; the
 * granularity is that of counter.pml (one d_step = one simulator boundary =
 * exit-to-user work + one IR instruction).
 *
 * Same question, same bounds: 2 CPUs, NT threads (THREADS, -DNT=2 or 3; each
 * starts on a CPU chosen in init: every placement, affinity all), OPS
 * lock/increment/unlock each (-DOPS), at most MAXEV injected events per
 * execution (-DMAXEV = --max-events), the unlock-time assert of the IR
 * (`assert r14 == 1`), and the properties sum(count) == THREADS * OPS and
 * sum(lock) == 0 asserted in the final state.
 *
 * `pc` is the IR's global instruction index, as in the .rsq file:
 *
 *   rseq_load_cbne_store           worker
 *    0 rseq_arm load_cbne_store     13 la r10, lock             29 ld r5, [r2]
 *    1 start: rseq_load r6, cpu_id  14 la r11, count            30 bne r5, 0, busy
 *    2 bne r6, r1, abort            15 li r8, 0                 31 jmp acquire
 *    3 ld r7, [r2]                  16 loop: beq r8, OPS, done  32 locked: add r12, r9, r11
 *    4 bne r7, r3, ne               17 acquire: rseq_load r1, cpu_id_start
 *    5 st [r2], r4   (commit)       18 shl r9, r1, 6            33 ld r13, [r12]
 *    6 post: li r0, 0               19 add r2, r9, r10          34 add r13, r13, 1
 *    7 ret                          20 li r3, 0                 35 st [r12], r13
 *    8 ne: li r0, 1                 21 li r4, 1                 36 ld r14, [r2]
 *    9 ret                          22 call rseq_load_cbne_store 37 assert r14 == 1
 *   10 sig 0x53053053               23 beq r0, 0, locked        38 li r14, 0
 *   11 abort: li r0, -1             24 blt r0, 0, acquire       39 st [r2], r14
 *   12 ret                          25 busy: sched_yield        40 add r8, r8, 1
 *                                   26 rseq_load r1, cpu_id_start 41 jmp loop
 *                                   27 shl r9, r1, 6            42 done: mov r0, r8
 *                                   28 add r2, r9, r10          43 ret (thread exit)
 *   on_sigusr1: 44 la r1, signals; 45 li r2, 1; 46 xadd r3, [r1], r2; 47 ret
 *
 * sched_yield switches to the head of the CPU's run queue if there is one
 * (a switch: PREEMPT event bit and TIF_NOTIFY_RESUME, not an injected event);
 * with an empty queue it is no switch and no event.
 *
 * Memory: mem[addr / 64] with lock at 0 and count at 128 (two per-CPU slots
 * 64 bytes apart each) and signals at 256, as the .rsq layout.
 *
 * rsq-fingerprint: 3b228a5986831127 (scenarios/percpu_spinlock.rsq this model follows;
 * spin_compare warns when the scenario's statements change)
 */

#define CS_START 1         /* start: */
#define CS_POST 6          /* post: */
#define ABORT_PC 11        /* abort: */
#define HANDLER_PC 44      /* on_sigusr1 */
#define SIGNALS_ADDR 256
#define MEM_WORDS 5        /* lock[0..1] at 0 and 64, count[0..1] at 128 and 192, signals at 256 */
/* sum(count) == THREADS * OPS && sum(lock) == 0 */
#define FINAL_PROPERTY (mem[2] + mem[3] == NT * OPS && mem[0] + mem[1] == 0)

#include "rseq_kernel.pml"

proctype Worker() {
  byte pc = 13;
  short r0, r1, r2, r3, r4, r5, r6, r7, r8, r9, r10, r11, r12, r13, r14;
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
        :: pc == 2 -> if :: r6 != r1 -> pc = 11 :: else -> pc = 3 fi
        :: pc == 3 -> r7 = mem[r2 / 64]; pc = 4
        :: pc == 4 -> if :: r7 != r3 -> pc = 8 :: else -> pc = 5 fi
        :: pc == 5 -> mem[r2 / 64] = r4; pc = 6
        :: pc == 6 -> r0 = 0; pc = 7
        :: pc == 7 -> pc = ra
        :: pc == 8 -> r0 = 1; pc = 9
        :: pc == 9 -> pc = ra
        :: pc == 11 -> r0 = -1; pc = 12
        :: pc == 12 -> pc = ra
        :: pc == 13 -> r10 = 0; pc = 14
        :: pc == 14 -> r11 = 128; pc = 15
        :: pc == 15 -> r8 = 0; pc = 16
        :: pc == 16 -> if :: r8 == OPS -> pc = 42 :: else -> pc = 17 fi
        :: pc == 17 -> r1 = cpu_id_start[t]; pc = 18
        :: pc == 18 -> r9 = r1 << 6; pc = 19
        :: pc == 19 -> r2 = r9 + r10; pc = 20
        :: pc == 20 -> r3 = 0; pc = 21
        :: pc == 21 -> r4 = 1; pc = 22
        :: pc == 22 -> ra = 23; pc = 0
        :: pc == 23 -> if :: r0 == 0 -> pc = 32 :: else -> pc = 24 fi
        :: pc == 24 -> if :: r0 < 0 -> pc = 17 :: else -> pc = 25 fi
        :: pc == 25 ->                      /* busy: sched_yield */
          r0 = 0;
          pc = 26;
          if
          :: qlen[cpu[t]] > 0 ->             /* SwitchOut(cpu, -1, kYield) */
            event_mask[t] = event_mask[t] | EV_PREEMPT;
            notify[t] = 1;
            pick_next(cpu[t]);
            q_push(cpu[t], t)
          :: else -> skip
          fi
        :: pc == 26 -> r1 = cpu_id_start[t]; pc = 27
        :: pc == 27 -> r9 = r1 << 6; pc = 28
        :: pc == 28 -> r2 = r9 + r10; pc = 29
        :: pc == 29 -> r5 = mem[r2 / 64]; pc = 30
        :: pc == 30 -> if :: r5 != 0 -> pc = 25 :: else -> pc = 31 fi
        :: pc == 31 -> pc = 17
        :: pc == 32 -> r12 = r9 + r11; pc = 33
        :: pc == 33 -> r13 = mem[r12 / 64]; pc = 34
        :: pc == 34 -> r13 = r13 + 1; pc = 35
        :: pc == 35 -> mem[r12 / 64] = r13; pc = 36
        :: pc == 36 -> r14 = mem[r2 / 64]; pc = 37
        :: pc == 37 -> assert(r14 == 1); pc = 38
        :: pc == 38 -> r14 = 0; pc = 39
        :: pc == 39 -> mem[r2 / 64] = r14; pc = 40
        :: pc == 40 -> r8 = r8 + 1; pc = 41
        :: pc == 41 -> pc = 16
        :: pc == 42 -> r0 = r8; pc = 43
        :: pc == 43 -> thread_exit()
        fi
      fi
    }
  od
}
