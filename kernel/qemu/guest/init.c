// SPDX-License-Identifier: GPL-2.0
/*
 * /init of the rseqmc test guest (kernel/qemu/run boots it under QEMU).
 *
 * Runs, in order, every test of the patched kernel and prints one
 * "RESULT abi=... scenarios=... schedules=... disagreements=...
 * selftests=PASSED/TOTAL ok=0|1" line per ABI, then "PASS" or "FAIL", and
 * powers the guest off. The host reads the serial console.
 *
 *   rfc2015   /bin/rfc2015_test (patch 0001)
 *   6.x       kernel.rseq_ids_on_change=0: the upstream rseq selftests,
 *             rseq_policy_test, rseqmc crosscheck of every built-in
 *   6.19      kernel.rseq_ids_on_change=1: the selftests, rseq_policy_test
 *   mmap      mmap_populate_test with vm.populate_yield_mmap_lock 0 and 1
 *
 * Kernel command line words key=value reach /init as its environment:
 * rseqmc_samples (crosscheck --samples, default 20), rseqmc_iters
 * (iterations per thread of rfc2015_test, default 20000),
 * rseqmc_policy_iters (of rseq_policy_test, default 2500000), rseqmc_reps
 * (-r of param_test, default 200), rseqmc_percpu_ops (1, the default,
 * runs basic_percpu_ops_test).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/reboot.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

struct abi_result {
	const char *abi;
	long scenarios, schedules, disagreements, harness_errors;
	int crosschecked;
	int passed, total;	/* self-tests */
	int ok;
};

static const char *env(const char *name, const char *def)
{
	const char *v = getenv(name);

	return v && *v ? v : def;
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static int write_sysctl(const char *path, const char *value)
{
	FILE *f = fopen(path, "w");

	if (!f || fputs(value, f) < 0) {
		printf("init: cannot write %s: %s\n", path, strerror(errno));
		if (f)
			fclose(f);
		return -1;
	}
	return fclose(f);
}

/* The value of "key":N in a JSON line, or 0. */
static long json_long(const char *line, const char *key)
{
	char pat[64];
	const char *p;

	snprintf(pat, sizeof(pat), "\"%s\":", key);
	p = strstr(line, pat);
	return p ? strtol(p + strlen(pat), NULL, 10) : 0;
}

/*
 * Runs argv with its output copied to the console, each line prefixed by
 * "  ". If @r is given, JSON lines of rseqmc crosscheck are summed into it.
 * Returns the exit status (128+signal when killed).
 */
static int run(char *const argv[], struct abi_result *r)
{
	double t0 = now();
	char line[8192];
	int fd[2], status;
	FILE *out;
	pid_t pid;

	if (pipe(fd))
		return 127;
	fflush(stdout);
	pid = fork();
	if (pid == 0) {
		dup2(fd[1], 1);
		dup2(fd[1], 2);
		close(fd[0]);
		close(fd[1]);
		execv(argv[0], argv);
		printf("init: exec %s: %s\n", argv[0], strerror(errno));
		_exit(127);
	}
	close(fd[1]);
	out = fdopen(fd[0], "r");
	while (fgets(line, sizeof(line), out)) {
		if (r && line[0] == '{') {
			r->scenarios++;
			r->schedules += json_long(line, "compared");
			r->disagreements += json_long(line, "disagreements");
			r->harness_errors += json_long(line, "harness_errors");
			/* print the summary fields only, not the details */
			printf("  crosscheck %.*s\n", (int)(strstr(line,
			       ",\"elapsed_s\"") ? strstr(line, ",\"elapsed_s\"")
			       - line : 120), line);
			continue;
		}
		printf("  %s", line);
	}
	fclose(out);
	waitpid(pid, &status, 0);
	status = WIFEXITED(status) ? WEXITSTATUS(status)
				   : 128 + WTERMSIG(status);
	printf("init: %s -> %d (%.1f s)\n", argv[0], status, now() - t0);
	return status;
}

/* Runs one self-test, counting it in @r. */
static void selftest(struct abi_result *r, char *const argv[])
{
	r->total++;
	if (run(argv, NULL) == 0)
		r->passed++;
}

/*
 * The upstream tools/testing/selftests/rseq programs: basic_test, the
 * default round of run_param_test.sh (without its loop/yield/kill/sleep
 * injection rounds) and, if @percpu_ops, basic_percpu_ops_test (200
 * threads spinning on per-CPU locks: about 5 minutes under TCG, so it
 * runs once per boot).
 */
static void upstream_selftests(struct abi_result *r, int percpu_ops)
{
	static const struct {
		char *type;
		char *barrier;	/* "-M" or NULL */
	} tests[] = { { "s", NULL }, { "l", NULL }, { "b", NULL },
		      { "b", "-M" }, { "m", NULL }, { "m", "-M" },
		      { "i", NULL }, { "r", NULL } };
	char *reps = (char *)env("rseqmc_reps", "200");
	char threads[16];

	snprintf(threads, sizeof(threads), "%ld",
		 6 * sysconf(_SC_NPROCESSORS_ONLN));
	selftest(r, (char *[]){ "/bin/basic_test", NULL });
	if (percpu_ops)
		selftest(r, (char *[]){ "/bin/basic_percpu_ops_test", NULL });
	for (size_t i = 0; i < sizeof(tests) / sizeof(tests[0]); i++) {
		for (int twice = 0; twice < 2; twice++) {
			char *argv[] = {
				twice ? "/bin/param_test_compare_twice"
				      : "/bin/param_test",
				"-T", tests[i].type, "-r", reps, "-t", threads,
				tests[i].barrier, NULL
			};
			selftest(r, argv);
		}
	}
}

static void print_result(const struct abi_result *r)
{
	if (r->crosschecked)
		printf("RESULT abi=%s scenarios=%ld schedules=%ld disagreements=%ld harness_errors=%ld selftests=%d/%d ok=%d\n",
		       r->abi, r->scenarios, r->schedules, r->disagreements,
		       r->harness_errors, r->passed, r->total, r->ok);
	else
		printf("RESULT abi=%s scenarios=- schedules=- disagreements=- harness_errors=- selftests=%d/%d ok=%d\n",
		       r->abi, r->passed, r->total, r->ok);
}

static int upstream_abi(struct abi_result *r, const char *policy)
{
	char *iters = (char *)env("rseqmc_policy_iters", "2500000");
	char *samples = (char *)env("rseqmc_samples", "20");

	if (write_sysctl("/proc/sys/kernel/rseq_ids_on_change", policy))
		return 0;
	upstream_selftests(r, !strcmp(policy, "0") &&
			      !strcmp(env("rseqmc_percpu_ops", "1"), "1"));
	selftest(r, (char *[]){ "/bin/rseq_policy_test", iters, NULL });
	if (!strcmp(policy, "0")) {
		char *argv[] = { "/bin/rseqmc", "crosscheck", "--json",
				 "--samples", samples, NULL };
		int rc = run(argv, r);

		r->crosschecked = 1;
		if (rc != 0 || r->scenarios == 0 || r->disagreements)
			return 0;
	}
	return r->passed == r->total;
}

int main(void)
{
	struct abi_result rfc = { .abi = "rfc2015" };
	struct abi_result v6 = { .abi = "6.x(ids_on_change=0)" };
	struct abi_result v619 = { .abi = "6.19(ids_on_change=1)" };
	struct abi_result mm = { .abi = "mmap(populate_yield)" };
	char *iters = (char *)env("rseqmc_iters", "20000");
	double t0 = now();
	int ok;

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (getpid() != 1) {
		fprintf(stderr, "init: runs only as the guest's pid 1\n");
		return 2;
	}
	mkdir("/proc", 0755);
	mkdir("/sys", 0755);
	mkdir("/tmp", 01777);
	mount("proc", "/proc", "proc", 0, NULL);
	mount("sysfs", "/sys", "sysfs", 0, NULL);
	mount("tmpfs", "/tmp", "tmpfs", 0, NULL);
	printf("init: %ld CPUs online\n", sysconf(_SC_NPROCESSORS_ONLN));

	selftest(&rfc, (char *[]){ "/bin/rfc2015_test", iters, NULL });
	rfc.ok = rfc.passed == rfc.total;
	v6.ok = upstream_abi(&v6, "0");
	v619.ok = upstream_abi(&v619, "1");
	write_sysctl("/proc/sys/kernel/rseq_ids_on_change", "0");
	selftest(&mm, (char *[]){ "/bin/mmap_populate_test", "0", NULL });
	selftest(&mm, (char *[]){ "/bin/mmap_populate_test", "1", NULL });
	mm.ok = mm.passed == mm.total;

	print_result(&rfc);
	print_result(&v6);
	print_result(&v619);
	print_result(&mm);
	ok = rfc.ok && v6.ok && v619.ok && mm.ok;
	printf("init: all tests took %.1f s\n", now() - t0);
	printf("%s\n", ok ? "PASS" : "FAIL");
	fflush(stdout);
	sync();
	reboot(RB_POWER_OFF);
	return 1;	/* init exits: panic=-1 resets, QEMU -no-reboot exits */
}
