/*
 * The kernel and machine part shared by counter.pml and spinlock.pml: virtual
 * CPUs with run queues, the per-thread rseq area and rseq state, the injected
 * events (an environment process), the exit-to-user work with the rseq fixup,
 * the SIGUSR1 handler of the scenarios (param_test's -k handler: counts
 * deliveries), thread exit with the final-state check, and the initial state.
 * It follows sim/machine.cc (legacy 6.x kernel model):
 *
 *   * an event sets bits of the thread's event mask and TIF_NOTIFY_RESUME
 *     (preempt, migrate, membarrier-RSEQ IPI) or makes SIGUSR1 pending (signal);
 *     a preempted thread with an empty run queue runs again; a migrated one runs
 *     on the destination if it is idle, else waits at the tail of its queue;
 *   * before the thread's next instruction the kernel delivers pending signals
 *     (each frame preceded by the rseq fixup) and runs the notify-resume fixup:
 *     with rseq_cs set and the ip in [start, post_commit) and a non-zero event
 *     mask, ip := abort_ip and rseq_cs := 0 (the mask is cleared whenever the ip
 *     is in the section); outside the section rseq_cs is lazily cleared; then
 *     cpu_id_start and cpu_id := the thread's CPU;
 *   * descriptor validation always passes in these scenarios and mm_cid /
 *     node_id are not modelled (they never read them).
 *
 * The including model defines, before the #include: CS_START, CS_POST,
 * ABORT_PC, HANDLER_PC (global IR indices of the section, its abort label and
 * on_sigusr1), SIGNALS_ADDR, MEM_WORDS (mem[] = data memory in 64-byte words,
 * as the .rsq layout), FINAL_PROPERTY (the scenario's properties); after it,
 * proctype Worker() whose locals are pc, hpc, hr1, hr2, hr3 and whose every
 * transition is
 *
 *     d_step { running[cpu[t]] == t -> return_to_user();
 *              if :: inh[t] -> handler_step() :: else -> <IR instruction at pc> fi }
 *
 * MAXEV (events per execution) defaults to 1; compare_spin.sh passes -DMAXEV=K.
 */
#define NT 2
#define NCPU 2
#define NONE 255
#define OPS 1
#ifndef MAXEV
#define MAXEV 1
#endif

#define EV_PREEMPT 1
#define EV_SIGNAL 2
#define EV_MIGRATE 4
#define SIGUSR1 10

short mem[MEM_WORDS];    /* data memory, one 64-byte word per symbol slot */
byte running[NCPU];      /* thread running on the CPU, NONE = idle */
byte queue[NCPU];        /* its run queue (2 threads: at most one waits) */
byte cpu[NT];            /* CPU each thread runs or waits on */
/* struct rseq of each thread, and the kernel's per-task rseq state */
byte cpu_id_start[NT];
byte cpu_id[NT];
bit rseq_cs[NT];         /* 0 or the address of the one descriptor */
byte event_mask[NT];
bit notify[NT];          /* TIF_NOTIFY_RESUME */
bit pending[NT];         /* SIGUSR1 pending */
bit inh[NT];             /* running its SIGUSR1 handler (SIGUSR1 blocked) */
byte nevents;
byte nexited;

#define t (_pid - 1)    /* the worker's thread number (init is process 0) */

/* __rseq_handle_notify_resume() on the context whose next instruction is p. */
inline rseq_fixup(p) {
  if
  :: rseq_cs[t] != 0 ->
    if
    :: p >= CS_START && p < CS_POST ->
      if
      :: event_mask[t] != 0 -> event_mask[t] = 0; rseq_cs[t] = 0; p = ABORT_PC
      :: else -> skip
      fi
    :: else -> rseq_cs[t] = 0
    fi
  :: else -> skip
  fi;
  cpu_id_start[t] = cpu[t];
  cpu_id[t] = cpu[t]
}

/* Exit-to-user work before the thread's next instruction. */
inline return_to_user() {
  if
  :: pending[t] && !inh[t] ->
    pending[t] = 0;
    event_mask[t] = event_mask[t] | EV_SIGNAL;
    rseq_fixup(pc);
    inh[t] = 1; hpc = HANDLER_PC; hr1 = SIGUSR1; hr2 = 0; hr3 = 0
  :: else -> skip
  fi;
  if
  :: notify[t] ->
    notify[t] = 0;
    if
    :: inh[t] -> rseq_fixup(hpc)
    :: else -> rseq_fixup(pc)
    fi
  :: else -> skip
  fi
}

/* One instruction of on_sigusr1 (la r1, signals; li r2, 1; xadd r3, [r1], r2; ret). */
inline handler_step() {
  if
  :: hpc == HANDLER_PC -> hr1 = SIGNALS_ADDR; hpc = HANDLER_PC + 1
  :: hpc == HANDLER_PC + 1 -> hr2 = 1; hpc = HANDLER_PC + 2
  :: hpc == HANDLER_PC + 2 -> hr3 = mem[hr1 / 64]; mem[hr1 / 64] = hr3 + hr2; hpc = HANDLER_PC + 3
  :: hpc == HANDLER_PC + 3 ->         /* sigreturn: then pending signals */
    inh[t] = 0;
    if
    :: pending[t] -> return_to_user()
    :: else -> skip
    fi
  fi
}

/* `ret` from the entry function: the thread exits, its CPU's queue head runs;
 * the last exit checks the scenario's properties on the final state. */
inline thread_exit() {
  pc = NONE;
  running[cpu[t]] = queue[cpu[t]];
  queue[cpu[t]] = NONE;
  nexited++;
  if
  :: nexited == NT -> assert(FINAL_PROPERTY)
  :: else -> skip
  fi
}

/* Injected events on the thread running on CPU c. */
inline preempt(c) {
  k = running[c];
  event_mask[k] = event_mask[k] | EV_PREEMPT;
  notify[k] = 1;
  if
  :: queue[c] != NONE -> running[c] = queue[c]; queue[c] = k
  :: else -> skip                      /* idle, then the same thread again */
  fi
}

inline migrate(c, d) {
  k = running[c];
  event_mask[k] = event_mask[k] | EV_PREEMPT | EV_MIGRATE;
  notify[k] = 1;
  running[c] = queue[c];
  queue[c] = NONE;
  cpu[k] = d;
  if
  :: running[d] == NONE -> running[d] = k
  :: else -> queue[d] = k
  fi
}

inline ipi(c) {
  k = running[c];
  event_mask[k] = event_mask[k] | EV_PREEMPT;
  notify[k] = 1
}

#define CAN(c) (nevents < MAXEV && running[c] != NONE)

proctype Env() {
  byte k;
end:
  do
  :: d_step { CAN(0) -> nevents++; preempt(0); k = 0 }
  :: d_step { CAN(0) -> nevents++; migrate(0, 1); k = 0 }
  :: d_step { CAN(0) -> nevents++; pending[running[0]] = 1 }
  :: d_step { CAN(0) -> nevents++; ipi(0); k = 0 }
  :: d_step { CAN(1) -> nevents++; preempt(1); k = 0 }
  :: d_step { CAN(1) -> nevents++; migrate(1, 0); k = 0 }
  :: d_step { CAN(1) -> nevents++; pending[running[1]] = 1 }
  :: d_step { CAN(1) -> nevents++; ipi(1); k = 0 }
  od
}

/* Initial state: w0 runs on CPU 0 and w1 on CPU 1, each area showing its CPU. */
init {
  d_step {
    running[0] = 0; running[1] = 1;
    queue[0] = NONE; queue[1] = NONE;
    cpu[0] = 0; cpu[1] = 1;
    cpu_id_start[0] = 0; cpu_id_start[1] = 1;
    cpu_id[0] = 0; cpu_id[1] = 1
  };
  atomic { run Worker(); run Worker(); run Env() }
}
