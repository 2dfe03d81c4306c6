/*
 * The kernel and machine part shared by counter.pml and spinlock.pml: virtual
 * CPUs with run queues, the per-thread rseq area and rseq state, the injected
 * events (an environment process), the exit-to-user work with the rseq fixup,
 * the SIGUSR1 handler of the scenarios (param_test's -k handler: counts
 * deliveries), thread exit with the final-state check, and the initial state.
 *
 * Every construct and the rseqmc rule it transcribes (rule numbers:
 * shared/reference/rseq-semantics.md section 7; functions: sim/machine.cc and
 * the legacy 6.x ABI module sim/kernel/legacy.cc, the one `rseqmc check`
 * explores these scenarios under, see `kernel_model` in its JSON):
 *
 *   Promela                         rseqmc
 *   running[c], q[], qlen[c]        SimCpu::running and SimCpu::queue (FIFO)
 *   cpu[t]                          SimThread::cpu
 *   event_mask[t], notify[t]        SimThread::event_mask, notify_resume
 *                                   (RSEQ_EVENT_* bits, TIF_NOTIFY_RESUME)
 *   rseq_cs[t], cpu_id_start[t],    the thread's struct rseq (rseq_cs holds the
 *   cpu_id[t]                       one descriptor's address: 0 or 1 here)
 *   pending[t], inh[t], hpc, hr*    a pending SIGUSR1, the signal frame of
 *                                   on_sigusr1 (SIGUSR1 blocked while it runs)
 *   preempt(c, i)   (Env)           Decision kPreempt, Machine::SwitchOut: the
 *                                   thread goes to the tail of the queue, the
 *                                   queued thread it names runs (one
 *                                   alternative per queued thread, as
 *                                   AppendAlternatives in model/explorer.cc);
 *                                   with an empty queue the CPU idles and the
 *                                   same thread runs again (still a switch,
 *                                   rule 8/10: rseq_preempt())
 *   migrate(c, d)   (Env)           kMigrate, rule 11: rseq_preempt() +
 *                                   rseq_migrate() (set_task_cpu), the queue
 *                                   head runs on c, the thread runs on d if it
 *                                   is idle, else waits at the tail (Enqueue)
 *   pending[...] = 1 (Env)          kSignal, RaiseSignal: SIGUSR1 made pending
 *   ipi(c)          (Env)           kIpi, rule 24: membarrier's ipi_rseq() =
 *                                   rseq_preempt(current)
 *   nevents < MAXEV                 Bounds::max_events (model/explorer.h), the
 *                                   only bound `--max-events K` sets: all kinds
 *                                   together, per execution
 *   return_to_user()                Machine's exit-to-user work before the
 *                                   thread's next instruction: signal frames
 *                                   (rseq_signal_deliver(): SIGNAL bit, then
 *                                   the fixup on the interrupted context), then
 *                                   __rseq_handle_notify_resume()
 *   rseq_fixup(p)                   rseq_ip_fixup() (legacy.cc): rseq_cs set and
 *                                   ip in [start_ip, start_ip +
 *                                   post_commit_offset) with a non-zero event
 *                                   mask: ip := abort_ip, rseq_cs := 0; the
 *                                   mask is cleared whenever the ip is in the
 *                                   section; outside it rseq_cs is lazily
 *                                   cleared; then rseq_update_cpu_node_id():
 *                                   cpu_id_start, cpu_id := the thread's CPU
 *   one Worker d_step               one scheduling boundary of the simulator:
 *                                   exit-to-user work + exactly one IR
 *                                   instruction of the thread (any CPU's
 *                                   running thread may take the next one,
 *                                   rseqmc interleaves CPUs freely)
 *   thread_exit()                   Machine::ExitThread: the queue head runs;
 *                                   the last exit checks the scenario's
 *                                   `property` lines on the final state
 *   init: PLACE_THREAD(i)           the scenario's `thread ... cpu EXPR` line,
 *                                   Machine's initial state: threads in id
 *                                   order, the first on a CPU runs, the others
 *                                   wait in its queue with TIF_NOTIFY_RESUME
 *                                   set (IDs refreshed when they switch in).
 *                                   Here each thread's CPU is chosen
 *                                   nondeterministically (any of the 2^NT
 *                                   placements in one search); rseqmc gets
 *                                   the same with `--placements all` (see
 *                                   tools/bench/spin_compare)
 *
 * Where the two differ (none of it changes which final states are reachable;
 * the differences are in what is counted as a state):
 *   * rseqmc injects an event on a thread only where it can matter
 *     (ExploreOptions::defer_events: not at a boundary outside every critical
 *     section whose next instruction touches only the thread's registers);
 *     Env here may fire at every boundary. The reachable final states are the
 *     same; SPIN stores the extra intermediate states.
 *   * rseqmc's stateful search hashes the machine state (Machine::StateHash:
 *     registers, pcs, memory, queues, rseq state, event counts) and stores the
 *     128-bit hash; SPIN stores the whole state vector, which also holds
 *     Env's and init's control state, the registers of exited threads
 *     (rseqmc hashes an exited thread as exited) and the unused queue slots.
 *     Both merge states only when everything the future depends on is equal.
 *   * rseqmc --strategy stateful skips a boundary's thread-local steps of other
 *     threads (schedules other threads only at visible steps, explorer.cc
 *     IsLocalStep); SPIN's partial-order reduction cannot, since every
 *     Worker d_step reads shared globals (running[], cpu[]).
 *   * Not modelled because these scenarios cannot observe them: descriptor
 *     validation (always valid here), mm_cid and node_id (never read),
 *     registers the code never uses. Memory is mem[addr / 64] with the .rsq
 *     layout (one 64-byte word per slot; the code only uses whole slots).
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
 * Parameters (spin -D...): NT threads (2 or 3, default 2 = THREADS), OPS
 * operations per thread (default 1 = OPS), MAXEV events per execution
 * (default 1 = --max-events).
 */
#ifndef NT
#define NT 2
#endif
#if NT < 1 || NT > 3
#error "NT must be 1..3 (the run queues hold at most 2 waiting threads)"
#endif
#define NCPU 2
#define NONE 255
#ifndef OPS
#define OPS 1
#endif
#ifndef MAXEV
#define MAXEV 1
#endif

#define EV_PREEMPT 1
#define EV_SIGNAL 2
#define EV_MIGRATE 4
#define SIGUSR1 10

short mem[MEM_WORDS];    /* data memory, one 64-byte word per symbol slot */
byte running[NCPU];      /* thread running on the CPU, NONE = idle */
byte q[NCPU * 2];        /* run queues: q[2c], q[2c+1], head first (NT <= 3: at most 2 wait) */
byte qlen[NCPU];
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

/* Run queue of CPU c (Machine::Enqueue / PickNext): append k at the tail;
 * run the head, or idle (running NONE) when the queue is empty. */
inline q_push(c, k) {
  q[2 * c + qlen[c]] = k;
  qlen[c]++
}
inline pick_next(c) {
  if
  :: qlen[c] > 0 ->
    running[c] = q[2 * c];
    q[2 * c] = q[2 * c + 1];
    q[2 * c + 1] = NONE;
    qlen[c]--
  :: else -> running[c] = NONE
  fi
}

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

/* `ret` from the entry function (Machine::ExitThread): the thread exits, its
 * CPU's queue head runs; the last exit checks the scenario's properties on the
 * final state. */
inline thread_exit() {
  pc = NONE;
  pick_next(cpu[t]);
  nexited++;
  if
  :: nexited == NT -> assert(FINAL_PROPERTY)
  :: else -> skip
  fi
}

/* Injected events on the thread running on CPU c (k: Env's scratch, reset to
 * 0 after each event so that it never tells two states apart). */

/* kPreempt naming queue entry i (Machine::SwitchOut then PickNext(c, next)):
 * entry i runs, the preempted thread goes to the tail; with an empty queue the
 * CPU idles and the same thread runs again. Both set PREEMPT + NOTIFY_RESUME. */
inline preempt(c, i) {
  k = running[c];
  event_mask[k] = event_mask[k] | EV_PREEMPT;
  notify[k] = 1;
  if
  :: qlen[c] > 0 ->
    running[c] = q[2 * c + i];
    if
    :: i == 0 -> q[2 * c] = q[2 * c + 1]
    :: else -> skip
    fi;
    q[2 * c + qlen[c] - 1] = k           /* the tail slot the taken entry freed */
  :: else -> skip
  fi
}

/* kMigrate to CPU d (rule 11): the queue head runs on c; the thread runs on d
 * when d is idle, else it waits at the tail of d's queue. */
inline migrate(c, d) {
  k = running[c];
  event_mask[k] = event_mask[k] | EV_PREEMPT | EV_MIGRATE;
  notify[k] = 1;
  pick_next(c);
  cpu[k] = d;
  if
  :: running[d] == NONE -> running[d] = k
  :: else -> q_push(d, k)
  fi
}

/* kIpi (rule 24): ipi_rseq() -> rseq_preempt(current). */
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
  :: d_step { CAN(0) -> nevents++; preempt(0, 0); k = 0 }
  :: d_step { CAN(0) && qlen[0] == 2 -> nevents++; preempt(0, 1); k = 0 }
  :: d_step { CAN(0) -> nevents++; migrate(0, 1); k = 0 }
  :: d_step { CAN(0) -> nevents++; pending[running[0]] = 1 }
  :: d_step { CAN(0) -> nevents++; ipi(0); k = 0 }
  :: d_step { CAN(1) -> nevents++; preempt(1, 0); k = 0 }
  :: d_step { CAN(1) && qlen[1] == 2 -> nevents++; preempt(1, 1); k = 0 }
  :: d_step { CAN(1) -> nevents++; migrate(1, 0); k = 0 }
  :: d_step { CAN(1) -> nevents++; pending[running[1]] = 1 }
  :: d_step { CAN(1) -> nevents++; ipi(1); k = 0 }
  od
}

/* Initial placement of thread i on a CPU chosen here (any placement), then
 * as Machine's initial state: the first thread on a CPU runs, later ones wait
 * in its queue (id order) with TIF_NOTIFY_RESUME set; each area shows its CPU. */
#define CHOOSE_CPU(i) if :: cpu[i] = 0 :: cpu[i] = 1 fi
#define PLACE_THREAD(i) \
    if \
    :: running[cpu[i]] == NONE -> running[cpu[i]] = i \
    :: else -> q_push(cpu[i], i); notify[i] = 1 \
    fi; \
    cpu_id_start[i] = cpu[i]; \
    cpu_id[i] = cpu[i]

init {
  atomic {
    running[0] = NONE; running[1] = NONE;
    q[0] = NONE; q[1] = NONE; q[2] = NONE; q[3] = NONE;
    CHOOSE_CPU(0);
#if NT > 1
    CHOOSE_CPU(1);
#endif
#if NT > 2
    CHOOSE_CPU(2);
#endif
    PLACE_THREAD(0);
#if NT > 1
    PLACE_THREAD(1);
#endif
#if NT > 2
    PLACE_THREAD(2);
#endif
    run Worker();
#if NT > 1
    run Worker();
#endif
#if NT > 2
    run Worker();
#endif
    run Env()
  }
}
