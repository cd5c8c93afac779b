/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The guest's memory, from /proc/meminfo, for the benchmark's scale tests
 * (tcp_pp conns, qp_scale). Both ends of every connection live in the same
 * guest, so a delta covers both.
 */
#ifndef BENCH_MEMINFO_H
#define BENCH_MEMINFO_H

#include <stdio.h>
#include <string.h>

struct meminfo {
	long long mem_free;	/* KiB */
	long long slab;		/* Slab: SReclaimable + SUnreclaim */
	long long vmalloc;	/* VmallocUsed: queues mapped to userspace */
	long long page_tables;
	long long kernel_stack;
	long long percpu;
	long long anon;		/* AnonPages: the processes' own memory */
};

static inline void meminfo_read(struct meminfo *m)
{
	char key[64];
	long long val;
	FILE *f = fopen("/proc/meminfo", "r");

	memset(m, 0, sizeof(*m));
	if (!f)
		return;
	while (fscanf(f, "%63s %lld%*[^\n]", key, &val) == 2) {
		if (!strcmp(key, "MemFree:"))
			m->mem_free = val;
		else if (!strcmp(key, "Slab:"))
			m->slab = val;
		else if (!strcmp(key, "VmallocUsed:"))
			m->vmalloc = val;
		else if (!strcmp(key, "PageTables:"))
			m->page_tables = val;
		else if (!strcmp(key, "KernelStack:"))
			m->kernel_stack = val;
		else if (!strcmp(key, "Percpu:"))
			m->percpu = val;
		else if (!strcmp(key, "AnonPages:"))
			m->anon = val;
	}
	fclose(f);
}

static inline long long meminfo_used(const struct meminfo *m)
{
	return m->slab + m->vmalloc + m->page_tables + m->kernel_stack +
	       m->percpu + m->anon;
}

/*
 * Prints what grew between a and b, per unit, in KiB: mem (the sum of
 * Slab, VmallocUsed, PageTables, KernelStack, Percpu and AnonPages: what
 * the kernel and the processes hold, without the page cache that makes
 * MemFree noisy), then slab, vmalloc and anon on their own, and the drop of
 * MemFree for comparison.
 */
static inline void meminfo_print_delta(const struct meminfo *a,
				       const struct meminfo *b,
				       unsigned int units)
{
	double n = units ? units : 1;

	printf("mem_kib=%.2f slab_kib=%.2f vmalloc_kib=%.2f anon_kib=%.2f memfree_kib=%.2f",
	       (meminfo_used(b) - meminfo_used(a)) / n, (b->slab - a->slab) / n,
	       (b->vmalloc - a->vmalloc) / n, (b->anon - a->anon) / n,
	       (a->mem_free - b->mem_free) / n);
}

#endif
