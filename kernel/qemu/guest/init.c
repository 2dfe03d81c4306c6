// SPDX-License-Identifier: GPL-2.0
/*
 * /init of the rseqmc test guest (kernel/qemu/run boots it under QEMU).
 *
 * Runs, in order, every test of the patched kernel and prints one
 * "RESULT abi=... scenarios=... schedules=... disagreements=...
 * harness_errors=... selftests=PASSED/TOTAL counter=NAME kernel=K user=U
 * ok=0|1" line per ABI (K and U: the kernel counter's growth and the
 * count user space made of the same events, summed over the self-tests'
 * COUNTER lines), then "PASS" or "FAIL", and powers the guest off. The
 * host reads the serial console.
 *
 *   rfc2015   /bin/rfc2015_test (patch 0001)
 *   6.x       kernel.rseq_ids_on_change=0: the upstream rseq selftests,
 *             rseq_policy_test, rseqmc crosscheck of every built-in
 *   6.19      kernel.rseq_ids_on_change=1: the selftests, rseq_policy_test
 *   mmap      mmap_populate_test with vm.populate_yield_mmap_lock 0 and 1
 *
 * Kernel command line words key=value reach /init as its environment:
 * rseqmc_samples (crosscheck --samples, default 20),
 * rseqmc_max_single_events (crosscheck --max-single-events: the seeded
 * sample of single-event schedules per scenario, default 0 = all), rseqmc_iters
 * (iterations per thread of rfc2015_test, default 100000: at 20000 one
 * boot in about ten saw no restart),
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
	/* Summed "COUNTER name user=U kernel=K" lines of the self-tests. */
	char counter[48];
	long counter_kernel, counter_user;
	int has_counter, has_user;	/* user=- : the kernel's count only */
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
static double json_num(const char *line, const char *key)
{
	char pat[64];
	const char *p;

	snprintf(pat, sizeof(pat), "\"%s\":", key);
	p = strstr(line, pat);
	return p ? strtod(p + strlen(pat), NULL) : 0;
}

/* Adds a line of rseqmc crosscheck --json to @r and prints its summary. */
static void add_crosscheck(struct abi_result *r, const char *line)
{
	const char *name = line + strlen("{\"scenario\":\"");
	const char *model = strstr(line, "\"kernel_model\":\"");
	long compared = json_num(line, "compared");

	r->scenarios++;
	r->schedules += compared;
	r->disagreements += json_num(line, "disagreements");
	r->harness_errors += json_num(line, "harness_errors");
	model = model ? model + strlen("\"kernel_model\":\"") : "?\"";
	printf("  crosscheck %.*s: model %.*s, compared %ld (single events %ld of %ld), disagreements %ld, flaky %ld, harness errors %ld, nothing compared %s, %.1f s\n",
	       (int)strcspn(name, "\""), name, (int)strcspn(model, "\""), model,
	       compared, (long)json_num(line, "single_events"),
	       (long)json_num(line, "single_events_total"),
	       (long)json_num(line, "disagreements"),
	       (long)json_num(line, "flaky"),
	       (long)json_num(line, "harness_errors"),
	       strstr(line, "\"nothing_compared\":true") ? "yes" : "no",
	       json_num(line, "elapsed_s"));
	/* Why: the schedules' tokens (to replay on a host) and summaries. */
	if (json_num(line, "disagreements") || json_num(line, "harness_errors"))
		printf("  crosscheck details %.4000s\n",
		       strstr(line, ",\"details\":") ? strstr(line, ",\"details\":") : "-");
}

/* Adds a self-test's "COUNTER name user=U kernel=K" line to @r. */
static void add_counter(struct abi_result *r, const char *line)
{
	const char *user = strstr(line, " user="), *kernel = strstr(line, " kernel=");
	int len = strcspn(line + 8, " ");

	if (!user || !kernel)
		return;
	snprintf(r->counter, sizeof(r->counter), "%.*s", len, line + 8);
	r->has_counter = 1;
	r->counter_kernel += strtol(kernel + 8, NULL, 10);
	if (user[6] != '-') {
		r->has_user = 1;
		r->counter_user += strtol(user + 6, NULL, 10);
	}
}

/*
 * Runs argv with its output copied to the console, each line prefixed by
 * "  ". If @r is given, JSON lines of rseqmc crosscheck and the COUNTER
 * lines of self-tests are summed into it.
 * Returns the exit status (128+signal when killed).
 */
static int run(char *const argv[], struct abi_result *r)
{
	double t0 = now();
	char *line = NULL;
	size_t cap = 0;
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
	while (getline(&line, &cap, out) > 0) {
		if (r && !strncmp(line, "{\"scenario\":\"", 13)) {
			add_crosscheck(r, line);
			continue;
		}
		if (r && !strncmp(line, "COUNTER ", 8))
			add_counter(r, line);
		printf("  %s", line);
	}
	free(line);
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
	if (run(argv, r) == 0)
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
	char cc[128] = "scenarios=- schedules=- disagreements=- harness_errors=-";
	char user[24] = "-";

	if (r->crosschecked)
		snprintf(cc, sizeof(cc),
			 "scenarios=%ld schedules=%ld disagreements=%ld harness_errors=%ld",
			 r->scenarios, r->schedules, r->disagreements,
			 r->harness_errors);
	if (r->has_user)
		snprintf(user, sizeof(user), "%ld", r->counter_user);
	printf("RESULT abi=%s %s selftests=%d/%d counter=%s kernel=%ld user=%s ok=%d\n",
	       r->abi, cc, r->passed, r->total,
	       r->has_counter ? r->counter : "-", r->counter_kernel, user,
	       r->ok);
}

static int upstream_abi(struct abi_result *r, const char *policy)
{
	char *iters = (char *)env("rseqmc_policy_iters", "2500000");
	char *samples = (char *)env("rseqmc_samples", "20");
	char *max_single = (char *)env("rseqmc_max_single_events", "0");

	if (write_sysctl("/proc/sys/kernel/rseq_ids_on_change", policy))
		return 0;
	upstream_selftests(r, !strcmp(policy, "0") &&
			      !strcmp(env("rseqmc_percpu_ops", "1"), "1"));
	selftest(r, (char *[]){ "/bin/rseq_policy_test", iters, NULL });
	if (!strcmp(policy, "0")) {
		char *argv[] = { "/bin/rseqmc", "crosscheck", "--json",
				 "--samples", samples, "--max-single-events",
				 max_single, NULL };
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
	char *iters = (char *)env("rseqmc_iters", "100000");
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
