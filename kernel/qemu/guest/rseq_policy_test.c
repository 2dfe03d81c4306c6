// SPDX-License-Identifier: GPL-2.0
/*
 * Upstream rseq on the patched kernel, with kernel.rseq_ids_on_change as
 * given (kernel patches 0002 and 0004):
 *
 *  - aborts: two threads per online CPU (at most MAX_THREADS; with one
 *    per CPU a 4-vCPU guest saw 1 or 2 aborts a run, too close to none)
 *    increment per-CPU counters in an rseq critical section and count
 *    the aborts they see at abort_ip; the total must be
 *    exact and the kernel's kernel.rseq_aborts must grow by exactly the
 *    aborts user space counted, and at least one abort must happen;
 *  - cpu_id_start: a thread pinned to one CPU overwrites cpu_id_start
 *    (the tcmalloc-style misuse), then is switched out by a 1 ms sleep on
 *    that CPU. With the 6.1 policy (0) the kernel writes cpu_id_start back;
 *    with the 6.19 policy (1) the CPU did not change, so the overwritten
 *    value stays.
 *
 * Usage: rseq_policy_test ITERS. Uses glibc's rseq registration.
 * Prints "policy:" lines and "COUNTER kernel.rseq_aborts user=U kernel=K";
 * exits 0 iff both checks hold, 77 when the
 * patch's sysctls are missing.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/rseq.h>
#include <time.h>
#include <unistd.h>

#include "proc_value.h"

#define MAX_THREADS 16
#define MAX_CPUS 64
#define OVERWRITTEN 0xfffffff0u

struct percpu {
	intptr_t v;
	char pad[56];
} __attribute__((aligned(64)));
static struct percpu counters[MAX_CPUS];
static long iters = 2500000;	/* per thread: about 10 aborts under TCG */

static struct rseq *rseq_area(void)
{
	return (struct rseq *)((char *)__builtin_thread_pointer() +
			       __rseq_offset);
}

/* Adds 1 to *v if still on @cpu; returns 0, or -1 after an abort. */
static int percpu_inc(intptr_t *v, int cpu)
{
	__asm__ __volatile__ goto(
		".pushsection __rseq_cs, \"aw\"\n\t"
		".balign 32\n\t"
		"3: .long 0x0, 0x0\n\t"
		".quad 1f, (2f - 1f), 4f\n\t"
		".popsection\n\t"
		"1: leaq 3b(%%rip), %%rax\n\t"
		"movq %%rax, %%fs:8(%[off])\n\t"
		"cmpl %[cpu], %%fs:4(%[off])\n\t"
		"jnz 4f\n\t"
		"addq $1, %[v]\n\t"
		"2:\n\t"
		".pushsection __rseq_failure, \"ax\"\n\t"
		".byte 0x0f, 0xb9, 0x3d\n\t"
		".long 0x53053053\n\t"
		"4: jmp %l[abort]\n\t"
		".popsection\n\t"
		:
		: [cpu] "r"(cpu), [off] "r"(__rseq_offset), [v] "m"(*v)
		: "memory", "cc", "rax"
		: abort);
	return 0;
abort:
	return -1;
}

static void *worker(void *arg)
{
	long *aborts = arg;
	struct rseq *rs = rseq_area();

	for (long i = 0; i < iters; i++) {
		for (;;) {
			int cpu = __atomic_load_n(&rs->cpu_id, __ATOMIC_RELAXED);

			if (percpu_inc(&counters[cpu].v, cpu) == 0)
				break;
			++*aborts;
		}
	}
	return NULL;
}

/*
 * 1 if the kernel rewrote cpu_id_start after a switch-out on one CPU. The
 * switch-out is a sleep: prepare_task_switch() calls rseq_preempt() for
 * every task switched out (kernel/sched/core.c), so a blocking nanosleep is
 * one for certain, where a sched_yield() to another thread on the CPU is
 * not (CFS may pick the yielding thread again when the other one's vruntime
 * is ahead, which made this check flaky under TCG on a loaded host).
 */
static int cpu_id_start_rewritten(void)
{
	struct rseq *rs = rseq_area();
	struct timespec ms = { .tv_nsec = 1000000 };
	cpu_set_t set;
	int rewritten;

	CPU_ZERO(&set);
	CPU_SET(0, &set);
	sched_setaffinity(0, sizeof(set), &set);
	sched_yield();		/* on CPU 0 from here on */
	__atomic_store_n(&rs->cpu_id_start, OVERWRITTEN, __ATOMIC_RELAXED);
	nanosleep(&ms, NULL);
	rewritten = rs->cpu_id_start != OVERWRITTEN;
	rs->cpu_id_start = rs->cpu_id;
	return rewritten;
}

int main(int argc, char **argv)
{
	long policy = proc_value("/proc/sys/kernel/rseq_ids_on_change");
	long k0 = proc_value("/proc/sys/kernel/rseq_aborts"), k1;
	long aborts[MAX_THREADS] = { 0 }, total = 0, sum = 0;
	pthread_t th[MAX_THREADS];
	long nthreads = 2 * sysconf(_SC_NPROCESSORS_ONLN);
	int rewritten, ok = 1;

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc > 1)
		iters = atol(argv[1]);
	if (policy < 0 || k0 < 0 || __rseq_size == 0) {
		printf("policy: SKIP no kernel.rseq_ids_on_change /"
		       " kernel.rseq_aborts or no rseq registration\n");
		return 77;
	}
	if (nthreads > MAX_THREADS)
		nthreads = MAX_THREADS;
	for (int i = 0; i < nthreads; i++)
		pthread_create(&th[i], NULL, worker, &aborts[i]);
	for (int i = 0; i < nthreads; i++) {
		pthread_join(th[i], NULL);
		total += aborts[i];
	}
	k1 = proc_value("/proc/sys/kernel/rseq_aborts");
	for (int c = 0; c < MAX_CPUS; c++)
		sum += counters[c].v;
	printf("policy: ids_on_change=%ld sum=%ld want=%ld aborts user=%ld kernel=%ld\n",
	       policy, sum, nthreads * iters, total, k1 - k0);
	printf("COUNTER kernel.rseq_aborts user=%ld kernel=%ld\n", total,
	       k1 - k0);
	/* With no abort the comparison would prove nothing. */
	if (sum != nthreads * iters || total != k1 - k0 || total == 0) {
		printf("policy: FAIL aborts\n");
		ok = 0;
	}
	rewritten = cpu_id_start_rewritten();
	printf("policy: ids_on_change=%ld cpu_id_start %s after a switch-out on the same CPU\n",
	       policy, rewritten ? "rewritten" : "kept the overwritten value");
	if (rewritten != (policy == 0)) {
		printf("policy: FAIL cpu_id_start\n");
		ok = 0;
	}
	return ok ? 0 : 1;
}
