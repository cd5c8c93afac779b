// SPDX-License-Identifier: GPL-2.0
/*
 * Object accounting, for tests: every object siw2 creates is counted up when
 * created and down when freed, and /sys/kernel/debug/siw2/objects shows the
 * live counts. The guest suites fail on any object created but not destroyed.
 *
 * /sys/kernel/debug/siw2/counters shows the module's event counters
 * (counters.c).
 *
 * /sys/kernel/debug/siw2/irqoff_max_ns shows the longest hold, in ns, of
 * a lock taken with interrupts off around work whose length a user
 * chooses (a flush, a move to ERR, a CQ resize) since it was last read;
 * reading it starts over. Debian's kernels have no irqsoff tracer, and a
 * timer's lateness in a TCG guest mostly shows the host's scheduling.
 */
#include <linux/atomic.h>
#include <linux/debugfs.h>
#include <linux/sched/clock.h>
#include <linux/seq_file.h>

#include "siw2.h"

static atomic_long_t live[SIW2_OBJ_MAX];

static const char *const obj_names[SIW2_OBJ_MAX] = {
	[SIW2_OBJ_DEVICE] = "device",
	[SIW2_OBJ_UCONTEXT] = "ucontext",
	[SIW2_OBJ_PD] = "pd",
	[SIW2_OBJ_CQ] = "cq",
	[SIW2_OBJ_QP] = "qp",
	[SIW2_OBJ_SRQ] = "srq",
	[SIW2_OBJ_MR] = "mr",
	[SIW2_OBJ_MW] = "mw",
	[SIW2_OBJ_CEP] = "cep",
	[SIW2_OBJ_LISTENER] = "listener",
};

static struct dentry *debug_dir;
static atomic64_t irqoff_max;

/**
 * siw2_irqoff_end() - a lock taken with interrupts off is released
 * @start: local_clock() when it was taken
 *
 * Two clock reads per hold: only for the holds named above, none of which
 * is on the data path.
 */
void siw2_irqoff_end(u64 start)
{
	s64 held = local_clock() - start;
	s64 old = atomic64_read(&irqoff_max);

	while (held > old && !atomic64_try_cmpxchg(&irqoff_max, &old, held))
		;
}

void siw2_obj_created(enum siw2_obj obj)
{
	atomic_long_inc(&live[obj]);
}

void siw2_obj_destroyed(enum siw2_obj obj)
{
	WARN_ON_ONCE(atomic_long_dec_return(&live[obj]) < 0);
}

static int objects_show(struct seq_file *m, void *unused)
{
	int i;

	for (i = 0; i < SIW2_OBJ_MAX; i++)
		seq_printf(m, "%s %ld\n", obj_names[i],
			   atomic_long_read(&live[i]));
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(objects);

static int counters_show(struct seq_file *m, void *unused)
{
	return siw2_counters_show(m, unused);
}
DEFINE_SHOW_ATTRIBUTE(counters);

static int irqoff_get(void *data, u64 *val)
{
	*val = atomic64_xchg(&irqoff_max, 0);
	return 0;
}
DEFINE_DEBUGFS_ATTRIBUTE(irqoff_fops, irqoff_get, NULL, "%llu\n");

void siw2_debug_init(void)
{
	/* Debugfs failures are not errors: the driver works without it. */
	debug_dir = debugfs_create_dir(SIW2_DRV_NAME, NULL);
	debugfs_create_file("objects", 0400, debug_dir, NULL, &objects_fops);
	debugfs_create_file("counters", 0400, debug_dir, NULL, &counters_fops);
	debugfs_create_file_unsafe("irqoff_max_ns", 0400, debug_dir, NULL,
				   &irqoff_fops);
}

void siw2_debug_uninit(void)
{
	debugfs_remove(debug_dir);
}
