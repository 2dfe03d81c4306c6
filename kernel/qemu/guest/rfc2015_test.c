// SPDX-License-Identifier: GPL-2.0
/*
 * Self-test of the 2015 RFC restartable_sequences() ABI (kernel patch
 * 0001): written for rseqmc from the RFC's description
 * (../../../../shared/reference/rfc2015.md), no code of the series.
 *
 *  - every error code of both operations;
 *  - a per-CPU spinlock taken with a restartable compare-and-store that
 *    guards a per-CPU counter, and a per-CPU linked list with restartable
 *    push and pop, with several threads per CPU: exact sums, no node lost
 *    or duplicated;
 *  - signals inside a region: the handler's saved IP is the restart address;
 *  - ptrace: POKE into a region fails with EIO, PEEK works, single-step
 *    does not stop inside a region;
 *  - fork, clone and exec state;
 *  - the kernel's restart counter (kernel.rseq_rfc2015_restarts) equals
 *    the restarts user space counted at its restart addresses.
 *
 * Prints "rfc2015: ok NAME" / "rfc2015: FAIL NAME: why", a summary line and
 * "COUNTER kernel.rseq_rfc2015_restarts user=U kernel=K" for /init's table;
 * exits 0 iff every check passed, 77 if the system call is missing.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <ucontext.h>
#include <unistd.h>

#include "proc_value.h"

#define NR_RESTARTABLE_SEQUENCES 335
#define OP_REGISTER_REGION 0
#define OP_SET_CPU_POINTER 1
#define MAX_CPUS 64
#define KERNEL_ADDR 0xffff888000000000UL

/*
 * The regions. Each function's region is [X_start, X_end) and its restart
 * address X_restart counts the restart in *(long *)%rdx (or %rdi) and
 * retries. The restart code is outside the region.
 */
__asm__(
	".text\n"
	/* long lock_take(long *locks, volatile uint32_t *cpu, long *restarts)
	 * -> cpu whose lock was taken, or -1 if that lock was busy */
	".globl lock_take, lock_start, lock_end, lock_restart\n"
	"lock_take:\n"
	"lock_start:\n"
	"	movl (%rsi), %eax\n"
	"	movq %rax, %rcx\n"
	"	shlq $6, %rcx\n"
	"	addq %rdi, %rcx\n"
	"	cmpq $0, (%rcx)\n"
	"	jne 1f\n"
	"	movq $1, (%rcx)\n"		/* commit */
	"lock_end:\n"
	"	ret\n"
	"1:	movq $-1, %rax\n"
	"	ret\n"
	"lock_restart:\n"
	"	incq (%rdx)\n"
	"	jmp lock_start\n"
	/* void list_push(void **heads, void **node, cpu, long *restarts) */
	".globl list_push, push_start, push_end, push_restart\n"
	"list_push:\n"
	"push_start:\n"
	"	movl (%rdx), %eax\n"
	"	shlq $6, %rax\n"
	"	addq %rdi, %rax\n"
	"	movq (%rax), %r8\n"
	"	movq %r8, (%rsi)\n"
	"	movq %rsi, (%rax)\n"		/* commit */
	"push_end:\n"
	"	ret\n"
	"push_restart:\n"
	"	incq (%rcx)\n"
	"	jmp push_start\n"
	/* void **list_pop(void **heads, cpu, long *restarts) -> node or 0 */
	".globl list_pop, pop_start, pop_end, pop_restart\n"
	"list_pop:\n"
	"pop_start:\n"
	"	movl (%rsi), %ecx\n"
	"	shlq $6, %rcx\n"
	"	addq %rdi, %rcx\n"
	"	movq (%rcx), %rax\n"
	"	testq %rax, %rax\n"
	"	jz 2f\n"
	"	movq (%rax), %r8\n"
	"	movq %r8, (%rcx)\n"		/* commit */
	"pop_end:\n"
	"2:	ret\n"
	"pop_restart:\n"
	"	incq (%rdx)\n"
	"	jmp pop_start\n"
	/* void sig_spin(long *restarts): spins in the region until
	 * sig_stop is set and a restart happened */
	".globl sig_spin, sig_start, sig_end, sig_restart\n"
	"sig_spin:\n"
	"sig_start:\n"
	"	jmp sig_start\n"
	"sig_end:\n"
	"sig_restart:\n"
	"	incq (%rdi)\n"
	"	cmpl $0, sig_stop(%rip)\n"
	"	je sig_start\n"
	"	ret\n"
	/* void step_target(void): int3, then a 4-instruction region */
	".globl step_target, step_pre, step_start, step_end, step_done\n"
	"step_target:\n"
	"	int3\n"
	"step_pre:\n"
	"	nop\n"
	"step_start:\n"
	"	nop\n	nop\n	nop\n	nop\n"
	"step_end:\n"
	"	nop\n"
	"step_done:\n"
	"	ret\n");

extern char lock_start[], lock_end[], lock_restart[];
extern char push_start[], push_end[], push_restart[];
extern char pop_start[], pop_end[], pop_restart[];
extern char sig_start[], sig_end[], sig_restart[];
extern char step_pre[], step_start[], step_end[], step_done[];
long lock_take(long *locks, volatile uint32_t *cpu, long *restarts);
void list_push(void **heads, void **node, volatile uint32_t *cpu,
	       long *restarts);
void **list_pop(void **heads, volatile uint32_t *cpu, long *restarts);
void sig_spin(long *restarts);
void step_target(void);
volatile int sig_stop;

static int checks, failures;
static long user_restarts;	/* summed from every thread */

static long rs(int op, long v1, long v2, long v3)
{
	return syscall(NR_RESTARTABLE_SEQUENCES, op, 0, v1, v2, v3);
}

static void check(int ok, const char *name, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
#include <stdarg.h>
static void check(int ok, const char *name, const char *fmt, ...)
{
	va_list ap;

	checks++;
	if (ok) {
		printf("rfc2015: ok %s\n", name);
		return;
	}
	failures++;
	printf("rfc2015: FAIL %s: ", name);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
}

/* Expects rs(...) to fail with @err (0: succeed). */
static void expect(long ret, int err, const char *name)
{
	int got = ret == 0 ? 0 : errno;

	check(got == err && (ret == 0 || ret == -1), name,
	      "got ret %ld errno %d (%s), want %d", ret, got, strerror(got),
	      err);
}

static long kernel_restarts(void)
{
	return proc_value("/proc/sys/kernel/rseq_rfc2015_restarts");
}

/* Runs @fn in a fork child; its exit status is its failure count. */
static void in_child(const char *name, int (*fn)(void))
{
	int status;
	pid_t pid;

	fflush(stdout);
	pid = fork();
	if (pid == 0)
		_exit(fn());
	waitpid(pid, &status, 0);
	check(WIFEXITED(status) && WEXITSTATUS(status) == 0, name,
	      "child status 0x%x", status);
}

static char data_regions[128] __attribute__((aligned(64)));

/* A process with no regions: every error code that needs none. */
static int errors_without_regions(void)
{
	static uint32_t cpu;

	expect(rs(OP_SET_CPU_POINTER, (long)&cpu, 0, 0), EINVAL,
	       "set-cpu-pointer before any region: EINVAL");
	expect(rs(OP_SET_CPU_POINTER, 0, 0, 0), 0,
	       "set-cpu-pointer NULL: 0");
	expect(rs(7, 0, 0, 0), EINVAL, "unknown op: EINVAL");
	expect(rs(-1, 0, 0, 0), EINVAL, "negative op: EINVAL");
	expect(rs(OP_REGISTER_REGION, (long)data_regions + 8,
		  (long)data_regions, (long)data_regions), EINVAL,
	       "region start > end: EINVAL");
	expect(rs(OP_REGISTER_REGION, (long)data_regions, (long)data_regions,
		  (long)data_regions), EINVAL, "region start == end: EINVAL");
	expect(rs(OP_REGISTER_REGION, KERNEL_ADDR, KERNEL_ADDR + 16,
		  (long)data_regions), EINVAL,
	       "region at a kernel address: EINVAL");
	expect(rs(OP_REGISTER_REGION, (long)data_regions,
		  (long)data_regions + 8, KERNEL_ADDR), EINVAL,
	       "restart at a kernel address: EINVAL");
	return failures;
}

static long reg(char *start, char *end, char *restart)
{
	return rs(OP_REGISTER_REGION, (long)start, (long)end, (long)restart);
}

static void register_regions(void)
{
	char *d = data_regions;

	expect(reg(lock_start, lock_end, lock_restart), 0, "register lock");
	expect(reg(push_start, push_end, push_restart), 0, "register push");
	expect(reg(pop_start, pop_end, pop_restart), 0, "register pop");
	expect(reg(sig_start, sig_end, sig_restart), 0, "register sig");
	expect(reg(d + 32, d + 64, d), 0, "register data region");
	expect(reg(d + 64, d + 96, d), 0, "adjacent region: 0");
	expect(reg(d + 63, d + 65, d), EBUSY, "overlapping region: EBUSY");
	expect(reg(d, d + 128, d), EBUSY, "region covering two: EBUSY");
	expect(reg(lock_start, lock_start + 1, d), EBUSY,
	       "region inside a region: EBUSY");
}

/* A thread registers its own CPU pointer; returns 0 on success. */
static int set_cpu_pointer(volatile uint32_t *cpu)
{
	*cpu = 0xdeadbeef;
	if (rs(OP_SET_CPU_POINTER, (long)cpu, 0, 0))
		return -1;
	/* Written before the system call returned. */
	return *cpu < MAX_CPUS ? 0 : -1;
}

/* The main thread's CPU number, written by the kernel. */
static volatile uint32_t main_cpu;

/* fork: the child has no regions and no CPU pointer. */
static int fork_child_state(void)
{
	static volatile uint32_t cpu;
	int f = 0;

	main_cpu = 12345;	/* the parent's registered pointer */
	for (int i = 0; i < 100; i++)
		sched_yield();
	usleep(20000);
	f += main_cpu != 12345;	/* the kernel did not write it */
	f += rs(OP_SET_CPU_POINTER, (long)&cpu, 0, 0) != -1 || errno != EINVAL;
	f += reg(lock_start, lock_end, lock_restart) != 0;
	f += set_cpu_pointer(&cpu) != 0;
	return f;
}

static __thread volatile uint32_t tls_cpu;

static void *clone_thread_state(void *arg)
{
	long f = 0;

	tls_cpu = 12345;
	for (int i = 0; i < 100; i++)
		sched_yield();
	usleep(20000);
	f += tls_cpu != 12345;
	f += set_cpu_pointer(&tls_cpu) != 0;
	f += reg(data_regions, data_regions + 8, data_regions) != -1 ||
	     errno != EBUSY;
	(void)arg;
	return (void *)f;
}

static char *self_exe;

/* The child registers a region and a pointer, then execs the checks. */
static int exec_child(void)
{
	static volatile uint32_t cpu;

	if (reg(lock_start, lock_end, lock_restart) || set_cpu_pointer(&cpu))
		return 1;
	execl(self_exe, self_exe, "--after-exec", (char *)NULL);
	return 2;
}

/* Runs in the new image: no regions, no pointer, regions allowed. */
static int after_exec(void)
{
	static volatile uint32_t cpu;
	int f = 0;

	f += rs(OP_SET_CPU_POINTER, (long)&cpu, 0, 0) != -1 || errno != EINVAL;
	f += reg(lock_start, lock_end, lock_restart) != 0;
	f += set_cpu_pointer(&cpu) != 0;
	return f;
}

/* Per-CPU data: one cache line per CPU. */
struct percpu {
	long lock;
	long count;
	char pad[48];
};
static struct percpu locks[MAX_CPUS] __attribute__((aligned(64)));
static void *heads[MAX_CPUS * 8] __attribute__((aligned(64)));
#define NODES 512
static void *nodes[NODES];
static long iterations = 100000;

struct worker {
	pthread_t th;
	long restarts;
	long ops;
	long bad;
};

static void *worker(void *arg)
{
	struct worker *w = arg;

	if (set_cpu_pointer(&tls_cpu)) {
		w->bad++;
		return NULL;
	}
	for (long i = 0; i < iterations; i++) {
		long cpu;
		void **node;

		while ((cpu = lock_take(&locks[0].lock, &tls_cpu,
					&w->restarts)) < 0)
			sched_yield();
		locks[cpu].count++;
		__atomic_store_n(&locks[cpu].lock, 0, __ATOMIC_RELEASE);

		node = list_pop(heads, &tls_cpu, &w->restarts);
		if (node)
			list_push(heads, node, &tls_cpu, &w->restarts);
		w->ops++;
	}
	return NULL;
}

static void workload(int ncpu)
{
	int nthreads = 3 * ncpu, seen = 0, dup = 0;
	struct worker w[3 * MAX_CPUS];
	long sum = 0, restarts = 0, k0, k1;
	char name[96];

	memset(w, 0, sizeof(w));
	for (int i = 0; i < NODES; i++)	/* spread over the CPUs' lists */
		list_push(heads, &nodes[i], &(uint32_t){ i % ncpu },
			  &restarts);
	k0 = kernel_restarts();
	restarts = 0;
	for (int i = 0; i < nthreads; i++)
		pthread_create(&w[i].th, NULL, worker, &w[i]);
	for (int i = 0; i < nthreads; i++) {
		pthread_join(w[i].th, NULL);
		restarts += w[i].restarts;
		check(!w[i].bad, "worker registers its CPU pointer", "failed");
	}
	k1 = kernel_restarts();
	for (int c = 0; c < MAX_CPUS; c++) {
		sum += locks[c].count;
		for (void **n = heads[c * 8]; n; n = *n) {
			long idx = n - (void **)nodes;

			seen++;
			dup += idx < 0 || idx >= NODES;
		}
	}
	snprintf(name, sizeof(name),
		 "per-CPU spinlock counter, %d threads on %d CPUs", nthreads,
		 ncpu);
	check(sum == nthreads * iterations, name, "sum %ld want %ld", sum,
	      nthreads * iterations);
	check(seen == NODES && !dup, "per-CPU list push/pop keeps every node",
	      "%d nodes seen (%d bad), want %d", seen, dup, NODES);
	printf("rfc2015: workload restarts user=%ld kernel=%ld\n", restarts,
	       k1 - k0);
	check(restarts == k1 - k0, "kernel restart count equals user count",
	      "user %ld kernel %ld", restarts, k1 - k0);
	check(restarts > 0, "the workload was restarted at least once",
	      "no restart in %ld operations", nthreads * iterations * 3);
	user_restarts += restarts;
}

static volatile long sig_handled, sig_bad_ip, sig_at_restart;
static volatile int sig_ready;

/*
 * The kernel rule: a frame set up with the IP inside the region saves the
 * restart address instead, so a handler never sees an IP in
 * [sig_start, sig_end). A signal that finds the thread elsewhere (before
 * its first entry into the region on a loaded host, or in the three
 * instructions after a restart) says nothing about the rule.
 */
static void on_usr1(int sig, siginfo_t *si, void *uc_)
{
	ucontext_t *uc = uc_;
	long ip = uc->uc_mcontext.gregs[REG_RIP];

	if (ip >= (long)sig_start && ip < (long)sig_end)
		sig_bad_ip = ip;
	sig_at_restart += ip == (long)sig_restart;
	sig_handled++;
	(void)sig;
	(void)si;
}

static long sig_restarts;

static void *sig_thread(void *arg)
{
	if (set_cpu_pointer(&tls_cpu))
		return (void *)1L;
	sig_ready = 1;
	sig_spin(&sig_restarts);
	(void)arg;
	return NULL;
}

static void signal_in_region(void)
{
	struct sigaction sa = { .sa_sigaction = on_usr1,
				.sa_flags = SA_SIGINFO };
	long k0 = kernel_restarts(), k1;
	pthread_t th;
	void *ret;
	int n = 20;

	sigaction(SIGUSR1, &sa, NULL);
	pthread_create(&th, NULL, sig_thread, NULL);
	while (!sig_ready)
		usleep(1000);
	usleep(10000);
	for (int i = 0; i < n; i++) {
		long before = sig_handled;

		pthread_kill(th, SIGUSR1);
		while (sig_handled == before)
			usleep(100);
	}
	sig_stop = 1;
	pthread_kill(th, SIGUSR1);	/* restart it once more: it exits */
	pthread_join(th, &ret);
	k1 = kernel_restarts();
	check(!ret && !sig_bad_ip && sig_handled == n + 1 && sig_at_restart > 0,
	      "signal in a region: the handler returns to the restart address",
	      "saved ip inside the region %#lx, restart %p, %ld handled, %ld at the restart address",
	      sig_bad_ip, (void *)sig_restart, sig_handled, sig_at_restart);
	/*
	 * Not one restart per signal: a signal that arrives while the thread
	 * is switched out is delivered with the preemption's restart in one
	 * exit to user mode, and the handler returns to the restart address
	 * once, so both events make a single restart.
	 */
	check(sig_restarts > 0 && sig_restarts == k1 - k0,
	      "signal restarts counted by the kernel",
	      "user %ld kernel %ld (%d signals)", sig_restarts, k1 - k0,
	      n + 1);
	user_restarts += sig_restarts;
}

static int traced_child(void)
{
	char *d = data_regions;

	if (reg(step_start, step_end, step_end) || reg(d + 32, d + 64, d))
		return 1;
	ptrace(PTRACE_TRACEME, 0, 0, 0);
	raise(SIGSTOP);
	step_target();
	return 0;
}

static void ptrace_rules(void)
{
	char *d = data_regions;
	struct user_regs_struct r;
	unsigned long rips[16];
	int n = 0, status;
	long word;
	pid_t pid;

	fflush(stdout);
	pid = fork();
	if (pid == 0)
		_exit(traced_child());
	waitpid(pid, &status, 0);
	if (!WIFSTOPPED(status)) {
		check(0, "ptrace child stops", "status 0x%x", status);
		return;
	}
	errno = 0;
	word = ptrace(PTRACE_PEEKTEXT, pid, step_start, 0);
	check(errno == 0 && memcmp(&word, step_start, sizeof(word)) == 0,
	      "PEEKTEXT inside a region works", "errno %d", errno);
	expect(ptrace(PTRACE_POKETEXT, pid, step_start, word), EIO,
	       "POKETEXT into a code region: EIO");
	expect(ptrace(PTRACE_POKEDATA, pid, d + 32, 0), EIO,
	       "POKEDATA into a data region: EIO");
	expect(ptrace(PTRACE_POKEDATA, pid, d + 28, 0), EIO,
	       "POKEDATA overlapping a region's first byte: EIO");
	expect(ptrace(PTRACE_POKEDATA, pid, d + 64, 0), 0,
	       "POKEDATA right after a region: 0");
	expect(ptrace(PTRACE_POKEDATA, pid, d + 24, 0), 0,
	       "POKEDATA right before a region: 0");

	ptrace(PTRACE_CONT, pid, 0, 0);		/* to the int3 */
	waitpid(pid, &status, 0);
	ptrace(PTRACE_GETREGS, pid, 0, &r);
	check(WIFSTOPPED(status) && WSTOPSIG(status) == SIGTRAP &&
	      r.rip == (unsigned long)step_pre, "int3 before the region stops",
	      "status 0x%x rip %#llx", status, r.rip);
	while (n < 16 && r.rip != (unsigned long)step_done) {
		ptrace(PTRACE_SINGLESTEP, pid, 0, 0);
		waitpid(pid, &status, 0);
		if (!WIFSTOPPED(status))
			break;
		ptrace(PTRACE_GETREGS, pid, 0, &r);
		rips[n++] = r.rip;
	}
	check(n == 2 && rips[0] == (unsigned long)step_end &&
	      rips[1] == (unsigned long)step_done,
	      "single-step runs through a region without stopping inside",
	      "%d stops, first at %#lx (region %p..%p)", n, n ? rips[0] : 0,
	      (void *)step_start, (void *)step_end);
	kill(pid, SIGKILL);
	waitpid(pid, &status, 0);
}

int main(int argc, char **argv)
{
	volatile uint32_t *cpu = &main_cpu;
	int ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	long k0 = kernel_restarts(), k1;
	pthread_t th;
	void *ret;

	setvbuf(stdout, NULL, _IOLBF, 0);
	self_exe = argv[0];
	if (argc > 1 && !strcmp(argv[1], "--after-exec"))
		return after_exec();
	if (argc > 1)
		iterations = atol(argv[1]);
	/*
	 * Number 335 is uretprobe() since Linux 6.11, which sends SIGILL to
	 * a caller outside a uretprobe: probe with the patch's counter file.
	 */
	if (k0 < 0) {
		printf("rfc2015: SKIP no /proc/sys/kernel/rseq_rfc2015_restarts"
		       " (kernel without patch 0001)\n");
		return 77;
	}
	if (ncpu > MAX_CPUS)
		ncpu = MAX_CPUS;

	in_child("error codes without regions", errors_without_regions);
	register_regions();
	check(set_cpu_pointer(cpu) == 0 && *cpu == (uint32_t)sched_getcpu(),
	      "set-cpu-pointer writes the CPU number before returning",
	      "cpu %u sched_getcpu %d", *cpu, sched_getcpu());
	expect(rs(OP_SET_CPU_POINTER, (long)cpu, 0, 0), 0,
	       "same CPU pointer again: 0");
	expect(rs(OP_SET_CPU_POINTER, KERNEL_ADDR, 0, 0), EINVAL,
	       "CPU pointer at a kernel address: EINVAL");
	expect(reg(data_regions, data_regions + 8, data_regions), EBUSY,
	       "region after a CPU pointer: EBUSY");

	in_child("fork child: no regions, no CPU pointer", fork_child_state);
	pthread_create(&th, NULL, clone_thread_state, NULL);
	pthread_join(th, &ret);
	check(ret == NULL, "clone: new thread has no CPU pointer, shares regions",
	      "%ld failures", (long)ret);
	in_child("exec: regions and CPU pointer are gone", exec_child);

	workload(ncpu);
	signal_in_region();
	ptrace_rules();

	k1 = kernel_restarts();
	check(k1 - k0 == user_restarts, "all restarts counted by the kernel",
	      "user %ld kernel %ld", user_restarts, k1 - k0);
	printf("rfc2015: %d/%d checks passed, restarts user=%ld kernel=%ld\n",
	       checks - failures, checks, user_restarts, k1 - k0);
	printf("COUNTER kernel.rseq_rfc2015_restarts user=%ld kernel=%ld\n",
	       user_restarts, k1 - k0);
	return failures ? 1 : 0;
}
