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
	}
	fclose(f);
}

/*
 * Prints what grew between a and b, per unit, in KiB: mem (what left
 * MemFree: kernel and user, both ends), slab, vmalloc, pagetables.
 */
static inline void meminfo_print_delta(const struct meminfo *a,
				       const struct meminfo *b,
				       unsigned int units)
{
	double n = units ? units : 1;

	printf("mem_kib=%.2f slab_kib=%.2f vmalloc_kib=%.2f pagetables_kib=%.2f",
	       (a->mem_free - b->mem_free) / n, (b->slab - a->slab) / n,
	       (b->vmalloc - a->vmalloc) / n,
	       (b->page_tables - a->page_tables) / n);
}

#endif
