// SPDX-License-Identifier: GPL-2.0
/*
 * Object accounting, for tests: every object siw2 creates is counted up when
 * created and down when freed, and /sys/kernel/debug/siw2/objects shows the
 * live counts. The guest suites fail on any object created but not destroyed.
 *
 * Event counters: what a peer can cause (a malformed MPA frame, a silent
 * connection) is counted rather than logged; /sys/kernel/debug/siw2/counters
 * shows the totals since the module was loaded.
 */
#include <linux/atomic.h>
#include <linux/debugfs.h>
#include <linux/percpu.h>
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

/* Per CPU: some count work requests, and must not share a cache line. */
static DEFINE_PER_CPU(unsigned long [SIW2_CNT_MAX], counts);

static const char *const counter_names[SIW2_CNT_MAX] = {
	[SIW2_CNT_CONNECT] = "cm_connect",
	[SIW2_CNT_CONNECTED] = "cm_connected",
	[SIW2_CNT_ACCEPTED] = "cm_accepted",
	[SIW2_CNT_REFUSED] = "cm_tcp_refused",
	[SIW2_CNT_TCP_TIMEOUT] = "cm_tcp_timeout",
	[SIW2_CNT_REPLY_TIMEOUT] = "cm_mpa_reply_timeout",
	[SIW2_CNT_REQUEST_TIMEOUT] = "cm_mpa_request_timeout",
	[SIW2_CNT_ULP_TIMEOUT] = "cm_ulp_timeout",
	[SIW2_CNT_PEER_CLOSED] = "cm_peer_closed",
	[SIW2_CNT_BAD_FRAME] = "cm_bad_frame",
	[SIW2_CNT_NEGOTIATION] = "cm_negotiation_failed",
	[SIW2_CNT_REJECT_SENT] = "cm_reject_sent",
	[SIW2_CNT_REJECT_RCVD] = "cm_reject_received",
	[SIW2_CNT_REV1_RETRY] = "cm_rev1_retry",
	[SIW2_CNT_REQUEST] = "cm_connect_request",
	[SIW2_CNT_NO_DEVICE] = "cm_no_device",
	[SIW2_CNT_OVERFLOW] = "cm_listen_overflow",
	[SIW2_CNT_LISTEN_DROP] = "cm_listen_teardown_drop",
	[SIW2_CNT_UPCALL_FAIL] = "cm_upcall_failed",
	[SIW2_CNT_DISCONNECT] = "cm_disconnect",
	[SIW2_CNT_TERM_SENT] = "term_sent",
	[SIW2_CNT_TERM_RCVD] = "term_rcvd",
	[SIW2_CNT_SQ_DOORBELL] = "sq_doorbell",
	[SIW2_CNT_TX_ZC] = "tx_zerocopy",
	[SIW2_CNT_CQ_OVERFLOW] = "cq_overflow",
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

void siw2_count(enum siw2_counter c)
{
	this_cpu_inc(counts[c]);
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
	unsigned long sum;
	int i, cpu;

	for (i = 0; i < SIW2_CNT_MAX; i++) {
		sum = 0;
		for_each_possible_cpu(cpu)
			sum += per_cpu(counts[i], cpu);
		seq_printf(m, "%s %lu\n", counter_names[i], sum);
	}
	return 0;
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
