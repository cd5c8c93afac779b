// SPDX-License-Identifier: GPL-2.0
/*
 * Object accounting, for tests: every object siw2 creates is counted up when
 * created and down when freed, and /sys/kernel/debug/siw2/objects shows the
 * live counts. The guest suites fail on any object created but not destroyed.
 *
 * /sys/kernel/debug/siw2/counters shows the module's event counters
 * (counters.c).
 */
#include <linux/atomic.h>
#include <linux/debugfs.h>
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
	[SIW2_OBJ_CEP] = "cep",
	[SIW2_OBJ_LISTENER] = "listener",
};

static struct dentry *debug_dir;

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

void siw2_debug_init(void)
{
	/* Debugfs failures are not errors: the driver works without it. */
	debug_dir = debugfs_create_dir(SIW2_DRV_NAME, NULL);
	debugfs_create_file("objects", 0400, debug_dir, NULL, &objects_fops);
	debugfs_create_file("counters", 0400, debug_dir, NULL, &counters_fops);
}

void siw2_debug_uninit(void)
{
	debugfs_remove(debug_dir);
}
