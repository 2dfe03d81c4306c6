// SPDX-License-Identifier: GPL-2.0
/*
 * MAP_POPULATE against concurrent mmap() callers (kernel patch 0003).
 *
 * POPULATORS threads each map and populate SIZE bytes, ITERS times, while
 * one writer thread does small mmap()/munmap() pairs and records the
 * longest single call: with vm.populate_yield_mmap_lock=1 the populators
 * drop mmap_lock between chunks when the writer waits, so the writer's
 * worst call should be shorter. Usage: mmap_populate_test 0|1 (the
 * sysctl value to set). Prints one "mmap:" result line and "COUNTER
 * vm.populate_mmap_lock_drops user=- kernel=N" (no user-space count). Exits 1 if the
 * lock-drop counter does not match the setting (0 drops when off, at
 * least one when on), 77 without the patch's sysctl.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

#include "proc_value.h"

#define POPULATORS 2
#define SIZE (32UL << 20)
#define ITERS 4

static volatile int done;

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* Writes @value to the sysctl file @path; 0 or -1. */
static int sysctl_set(const char *path, const char *value)
{
	FILE *f = fopen(path, "w");

	if (!f)
		return -1;
	if (fputs(value, f) < 0) {
		fclose(f);
		return -1;
	}
	return fclose(f) ? -1 : 0;
}

static void *populator(void *arg)
{
	for (int i = 0; i < ITERS; i++) {
		void *p = mmap(NULL, SIZE, PROT_READ | PROT_WRITE,
			       MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE,
			       -1, 0);

		if (p == MAP_FAILED)
			return (void *)1L;
		munmap(p, SIZE);
	}
	(void)arg;
	return NULL;
}

static void *writer(void *arg)
{
	double *worst = arg;
	long calls = 0;

	while (!done) {
		double t0 = now(), dt;
		void *p = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
			       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

		if (p != MAP_FAILED)
			munmap(p, 4096);
		dt = now() - t0;
		if (dt > *worst)
			*worst = dt;
		calls++;
	}
	return (void *)calls;
}

int main(int argc, char **argv)
{
	const char *knob = "/proc/sys/vm/populate_yield_mmap_lock";
	const char *drops = "/proc/sys/vm/populate_mmap_lock_drops";
	pthread_t pop[POPULATORS], wr;
	int on = argc > 1 && !strcmp(argv[1], "1"), bad = 0;
	double worst = 0, t0, t1;
	long d0, d1;
	void *ret;

	if (sysctl_set(knob, on ? "1" : "0") < 0 || (d0 = proc_value(drops)) < 0) {
		printf("mmap: SKIP no %s (kernel without patch 0003)\n", knob);
		return 77;
	}
	t0 = now();
	pthread_create(&wr, NULL, writer, &worst);
	for (int i = 0; i < POPULATORS; i++)
		pthread_create(&pop[i], NULL, populator, NULL);
	for (int i = 0; i < POPULATORS; i++) {
		pthread_join(pop[i], &ret);
		bad += ret != NULL;
	}
	t1 = now();
	done = 1;
	pthread_join(wr, &ret);
	d1 = proc_value(drops);
	printf("mmap: yield=%d populate %d x %d x %lu MiB in %.3f s, writer %ld calls,"
	       " worst mmap+munmap %.3f ms, lock drops %ld\n", on, POPULATORS,
	       ITERS, SIZE >> 20, t1 - t0, (long)ret, worst * 1e3, d1 - d0);
	printf("COUNTER vm.populate_mmap_lock_drops user=- kernel=%ld\n",
	       d1 - d0);
	sysctl_set(knob, "0");
	if (bad || (on ? d1 - d0 < 1 : d1 != d0)) {
		printf("mmap: FAIL lock drops %ld with yield=%d%s\n", d1 - d0, on,
		       bad ? ", a MAP_POPULATE failed" : "");
		return 1;
	}
	return 0;
}
