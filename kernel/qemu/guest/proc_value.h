/* SPDX-License-Identifier: GPL-2.0 */
/* Reading a /proc/sys value, shared by the guest's self-tests. */
#ifndef RSEQMC_GUEST_PROC_VALUE_H
#define RSEQMC_GUEST_PROC_VALUE_H

#include <stdio.h>

/*
 * The number in @path (e.g. a counter of kernel patch 0004), or -1 when
 * the file is missing or holds no number (the counters are never
 * negative, so -1 only ever means "no such counter").
 */
static inline long proc_value(const char *path)
{
	FILE *f = fopen(path, "r");
	long v = -1;

	if (f) {
		if (fscanf(f, "%ld", &v) != 1)
			v = -1;
		fclose(f);
	}
	return v;
}

#endif
