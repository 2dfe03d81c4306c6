// SPDX-License-Identifier: GPL-2.0
/*
 * Self-test of preempt_lock(flag, signo) (kernel/patches/0005, x86-64
 * number 336), rule by rule of rseqmc's model sim/kernel/preempt_lock.h:
 *
 *   errors   misaligned or kernel flag, signo 0, 32, SIGKILL, SIGSTOP:
 *            EINVAL; NULL unregisters: 0; a second registration: 0
 *   PL1/PL2  a blocking call (a switch-out) with the flag set: exactly one
 *            signal on the return, si_code SI_KERNEL, si_addr = the flag;
 *            with the flag clear or unregistered: none
 *   PL2      blocked: stays pending through several switch-outs, one
 *            delivery after unblocking; ignored: discarded; SIG_DFL:
 *            the process dies of it; an unmapped flag: SIGSEGV
 *   PL4      SIGUSR1 sent to itself with the flag set: the preempt-lock
 *            signal's frame is set up first, SIGUSR1's on top of it (the
 *            SIGUSR1 handler's saved RIP is the preempt-lock handler's
 *            entry); with the flag clear, SIGUSR1 alone
 *   PL5      sched_setaffinity() off its CPU with the flag set: the
 *            signal, and the handler runs on the new CPU
 *   state    a new thread and a fork child start unregistered
 *
 * Every check is deterministic: the switch-outs are nanosleep() and
 * sched_setaffinity(), which always switch out. Prints one line per check
 * and "preempt_lock: N checks, F failures"; exit 0 iff none failed, 77
 * when the kernel has no preempt_lock() (ENOSYS).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <ucontext.h>
#include <unistd.h>

#define NR_PREEMPT_LOCK 336
#define KERNEL_ADDR 0xffff880000000000UL

static int checks, failures;
static volatile uint32_t flag;

/* What the handlers saw, in delivery order. */
static volatile int pl_count, usr1_count, order[8], norder;
static volatile uintptr_t pl_addr, usr1_rip;
static volatile int pl_code, pl_cpu;

static long pl(void *f, int signo)
{
	return syscall(NR_PREEMPT_LOCK, f, signo);
}

static void check(int ok, const char *what, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static void check(int ok, const char *what, const char *fmt, ...)
{
	va_list ap;

	checks++;
	failures += !ok;
	printf("preempt_lock: %s: %s (", ok ? "ok" : "FAIL", what);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf(")\n");
}

static void expect_errno(long rc, int err, const char *what)
{
	check(err ? rc == -1 && errno == err : rc == 0, what, "rc %ld errno %d",
	      rc, rc ? errno : 0);
}

static void pl_handler(int sig, siginfo_t *si, void *uc)
{
	(void)sig;
	(void)uc;
	if (norder < 8)
		order[norder++] = SIGUSR2;
	if (pl_count++ == 0) {
		pl_addr = (uintptr_t)si->si_addr;
		pl_code = si->si_code;
		pl_cpu = sched_getcpu();
	}
}

static void usr1_handler(int sig, siginfo_t *si, void *uc)
{
	(void)sig;
	(void)si;
	if (norder < 8)
		order[norder++] = SIGUSR1;
	usr1_count++;
	usr1_rip = ((ucontext_t *)uc)->uc_mcontext.gregs[REG_RIP];
}

static void handle(int sig, void (*h)(int, siginfo_t *, void *))
{
	struct sigaction sa = { .sa_sigaction = h, .sa_flags = SA_SIGINFO };

	sigemptyset(&sa.sa_mask);
	sigaction(sig, &sa, NULL);
}

static void reset(void)
{
	pl_count = usr1_count = norder = 0;
	pl_addr = usr1_rip = 0;
	pl_code = pl_cpu = -1;
}

/* A switch-out: nanosleep() blocks, so the thread is switched out. */
/*
 * One switch-out at least, proven by the thread's context-switch count:
 * nanosleep() does not always block (do_nanosleep() skips schedule() when
 * the hrtimer already fired, which a TCG guest's jumping clock on a loaded
 * host makes happen: seen once at -smp 4), so sleep again until the count
 * moved.
 */
static long switches(void)
{
	struct rusage ru;

	getrusage(RUSAGE_THREAD, &ru);
	return ru.ru_nvcsw + ru.ru_nivcsw;
}

static void switch_out(void)
{
	struct timespec ts = { 0, 1000000 };
	long before = switches();

	for (int i = 0; i < 1000 && switches() == before; i++)
		nanosleep(&ts, NULL);
}

static void errors(void)
{
	static uint32_t word[2] __attribute__((aligned(8)));

	expect_errno(pl((char *)word + 1, SIGUSR2), EINVAL, "misaligned flag: EINVAL");
	expect_errno(pl((void *)KERNEL_ADDR, SIGUSR2), EINVAL, "kernel-address flag: EINVAL");
	expect_errno(pl(word, 0), EINVAL, "signo 0: EINVAL");
	expect_errno(pl(word, 32), EINVAL, "signo 32 (real-time): EINVAL");
	expect_errno(pl(word, SIGKILL), EINVAL, "SIGKILL: EINVAL");
	expect_errno(pl(word, SIGSTOP), EINVAL, "SIGSTOP: EINVAL");
	expect_errno(pl(word, SIGUSR2), 0, "register: 0");
	expect_errno(pl(word, SIGUSR1), 0, "a second registration replaces the first: 0");
	expect_errno(pl(NULL, 12345), 0, "NULL unregisters, signo ignored: 0");
}

static void signal_after_switch_out(void)
{
	sigset_t set;

	pl((void *)&flag, SIGUSR2);
	reset();
	flag = 1;
	switch_out();
	flag = 0;
	check(pl_count == 1 && pl_addr == (uintptr_t)&flag && pl_code == SI_KERNEL,
	      "PL2: switched out with the flag set: one signal, si_addr = the flag, SI_KERNEL",
	      "signals %d si_addr %#lx flag %p si_code %d", pl_count,
	      (unsigned long)pl_addr, (void *)&flag, pl_code);
	reset();
	switch_out();
	check(pl_count == 0, "PL2: flag clear: no signal", "signals %d", pl_count);

	sigemptyset(&set);
	sigaddset(&set, SIGUSR2);
	sigprocmask(SIG_BLOCK, &set, NULL);
	flag = 1;
	for (int i = 0; i < 3; i++)
		switch_out();
	flag = 0;
	sigpending(&set);
	check(pl_count == 0 && sigismember(&set, SIGUSR2),
	      "PL2: blocked: pending through 3 switch-outs, not delivered",
	      "signals %d pending %d", pl_count, sigismember(&set, SIGUSR2));
	sigemptyset(&set);
	sigaddset(&set, SIGUSR2);
	sigprocmask(SIG_UNBLOCK, &set, NULL);
	check(pl_count == 1 && pl_addr == (uintptr_t)&flag,
	      "PL2: one delivery after unblocking (a standard signal queues once)",
	      "signals %d", pl_count);

	signal(SIGUSR2, SIG_IGN);
	reset();
	flag = 1;
	switch_out();
	flag = 0;
	sigpending(&set);
	check(!sigismember(&set, SIGUSR2), "PL2: ignored: discarded",
	      "pending %d", sigismember(&set, SIGUSR2));
	handle(SIGUSR2, pl_handler);

	pl(NULL, 0);
	reset();
	flag = 1;
	switch_out();
	flag = 0;
	check(pl_count == 0, "unregistered: no signal with the flag set",
	      "signals %d", pl_count);
}

static void delivery_order(void)
{
	pl((void *)&flag, SIGUSR2);
	reset();
	flag = 1;
	syscall(SYS_tgkill, getpid(), syscall(SYS_gettid), SIGUSR1);
	flag = 0;
	check(usr1_count == 1 && pl_count >= 1 && norder >= 2 &&
	      order[0] == SIGUSR1 && order[1] == SIGUSR2 &&
	      usr1_rip == (uintptr_t)pl_handler && pl_code == SI_KERNEL,
	      "PL4: SIGUSR1 with the flag set: the preempt-lock frame first, SIGUSR1's on top",
	      "SIGUSR1 %d, preempt-lock %d, first run %d then %d, SIGUSR1 frame RIP %#lx, handler %p",
	      usr1_count, pl_count, norder > 0 ? order[0] : 0,
	      norder > 1 ? order[1] : 0, (unsigned long)usr1_rip,
	      (void *)pl_handler);
	reset();
	syscall(SYS_tgkill, getpid(), syscall(SYS_gettid), SIGUSR1);
	check(usr1_count == 1 && pl_count == 0,
	      "PL4: SIGUSR1 with the flag clear: SIGUSR1 alone",
	      "SIGUSR1 %d, preempt-lock %d", usr1_count, pl_count);
}

static void migration(void)
{
	int ncpu = sysconf(_SC_NPROCESSORS_ONLN), from, to;
	cpu_set_t one;

	if (ncpu < 2) {
		printf("preempt_lock: skip PL5: one CPU\n");
		return;
	}
	from = sched_getcpu();
	to = (from + 1) % ncpu;
	CPU_ZERO(&one);
	CPU_SET(to, &one);
	reset();
	flag = 1;
	sched_setaffinity(0, sizeof(one), &one);
	flag = 0;
	check(pl_count == 1 && pl_cpu == to,
	      "PL5: migrated with the flag set: the signal, on the new CPU",
	      "signals %d, handler on CPU %d, from %d to %d", pl_count, pl_cpu,
	      from, to);
	for (int c = 0; c < ncpu; c++)
		CPU_SET(c, &one);
	sched_setaffinity(0, sizeof(one), &one);
}

/*
 * The new thread sets the flag the creating thread registered and is
 * switched out: it must get no signal (it inherits no registration). The
 * creator keeps SIGUSR2 blocked meanwhile, so that only the new thread's
 * delivery could count.
 */
static void *new_thread(void *arg)
{
	sigset_t set;

	(void)arg;
	sigemptyset(&set);
	sigaddset(&set, SIGUSR2);
	pthread_sigmask(SIG_UNBLOCK, &set, NULL);
	flag = 1;
	switch_out();
	flag = 0;
	return NULL;
}

/* Runs fn in a fork child; returns its wait status. */
static int in_child(void (*fn)(void))
{
	pid_t pid = fork();
	int st = 0;

	if (pid == 0) {
		fn();
		_exit(0);
	}
	waitpid(pid, &st, 0);
	return st;
}

static void child_unregistered(void)
{
	reset();
	flag = 1;
	switch_out();
	_exit(pl_count == 0 ? 0 : 1);
}

static void child_default_action(void)
{
	signal(SIGUSR2, SIG_DFL);
	pl((void *)&flag, SIGUSR2);
	flag = 1;
	switch_out();
	_exit(0);
}

static void child_unmapped_flag(void)
{
	uint32_t *page = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
			      MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	pl(page, SIGUSR2);
	munmap(page, 4096);
	switch_out();
	_exit(0);
}

static void thread_and_fork_state(void)
{
	pthread_t th;
	int st;

	sigset_t set;
	struct timespec zero = { 0, 0 };

	pl((void *)&flag, SIGUSR2);
	reset();
	sigemptyset(&set);
	sigaddset(&set, SIGUSR2);
	pthread_sigmask(SIG_BLOCK, &set, NULL);
	pthread_create(&th, NULL, new_thread, NULL);
	pthread_join(th, NULL);
	check(pl_count == 0, "a new thread starts unregistered",
	      "signals %d", pl_count);
	sigtimedwait(&set, NULL, &zero);	/* the creator's, if it got one */
	pthread_sigmask(SIG_UNBLOCK, &set, NULL);
	st = in_child(child_unregistered);
	check(WIFEXITED(st) && WEXITSTATUS(st) == 0,
	      "a fork child starts unregistered", "status %#x", st);
	st = in_child(child_default_action);
	check(WIFSIGNALED(st) && WTERMSIG(st) == SIGUSR2,
	      "PL2: SIG_DFL terminates", "status %#x", st);
	st = in_child(child_unmapped_flag);
	check(WIFSIGNALED(st) && WTERMSIG(st) == SIGSEGV,
	      "PL2: an unmapped flag is SIGSEGV", "status %#x", st);
	pl(NULL, 0);
}

int main(void)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (pl(NULL, 0) != 0) {
		printf("preempt_lock: SKIP preempt_lock(NULL, 0) gave errno %d (%s): kernel without patch 0005\n",
		       errno, strerror(errno));
		return 77;
	}
	handle(SIGUSR2, pl_handler);
	handle(SIGUSR1, usr1_handler);
	errors();
	signal_after_switch_out();
	delivery_order();
	migration();
	thread_and_fork_state();
	printf("preempt_lock: %d checks, %d failures\n", checks, failures);
	return failures ? 1 : 0;
}
