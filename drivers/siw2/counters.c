// SPDX-License-Identifier: GPL-2.0
/*
 * Event counters. What a peer can cause (a malformed MPA frame, a silent
 * connection, a Terminate) is counted rather than logged, and so are a few
 * events of the data path worth knowing about (doorbells, zero-copy
 * messages, CQ overflows).
 *
 * Each device counts its own, shown as its port's hardware counters:
 * `rdma statistic show link DEV/1` and
 * /sys/class/infiniband/DEV/ports/1/hw_counters/. The module also keeps
 * totals over all devices since it was loaded, which include events no
 * device can be charged with (a connection to an address no listener
 * owns); /sys/kernel/debug/siw2/counters shows them.
 *
 * The counts are per CPU, as some are taken once per work request.
 */
#include <linux/percpu.h>
#include <linux/seq_file.h>

#include "siw2.h"

struct siw2_counters {
	unsigned long c[SIW2_CNT_MAX];
};

static DEFINE_PER_CPU(struct siw2_counters, totals);

static const struct rdma_stat_desc descs[SIW2_CNT_MAX] = {
	[SIW2_CNT_CONNECT].name = "cm_connect",
	[SIW2_CNT_CONNECTED].name = "cm_connected",
	[SIW2_CNT_ACCEPTED].name = "cm_accepted",
	[SIW2_CNT_REFUSED].name = "cm_tcp_refused",
	[SIW2_CNT_TCP_TIMEOUT].name = "cm_tcp_timeout",
	[SIW2_CNT_REPLY_TIMEOUT].name = "cm_mpa_reply_timeout",
	[SIW2_CNT_REQUEST_TIMEOUT].name = "cm_mpa_request_timeout",
	[SIW2_CNT_ULP_TIMEOUT].name = "cm_ulp_timeout",
	[SIW2_CNT_PEER_CLOSED].name = "cm_peer_closed",
	[SIW2_CNT_BAD_FRAME].name = "cm_bad_frame",
	[SIW2_CNT_NEGOTIATION].name = "cm_negotiation_failed",
	[SIW2_CNT_REJECT_SENT].name = "cm_reject_sent",
	[SIW2_CNT_REJECT_RCVD].name = "cm_reject_received",
	[SIW2_CNT_REV1_RETRY].name = "cm_rev1_retry",
	[SIW2_CNT_REQUEST].name = "cm_connect_request",
	[SIW2_CNT_NO_DEVICE].name = "cm_no_device",
	[SIW2_CNT_OVERFLOW].name = "cm_listen_overflow",
	[SIW2_CNT_LISTEN_DROP].name = "cm_listen_teardown_drop",
	[SIW2_CNT_UPCALL_FAIL].name = "cm_upcall_failed",
	[SIW2_CNT_DISCONNECT].name = "cm_disconnect",
	[SIW2_CNT_TERM_SENT].name = "term_sent",
	[SIW2_CNT_TERM_RCVD].name = "term_rcvd",
	[SIW2_CNT_SQ_DOORBELL].name = "sq_doorbell",
	[SIW2_CNT_TX_ZC].name = "tx_zerocopy",
	[SIW2_CNT_CQ_OVERFLOW].name = "cq_overflow",
	[SIW2_CNT_RX_FAULT].name = "rx_odp_fault",
};

/**
 * siw2_count() - count one event
 * @sdev: the device it happened on, or NULL for the module's totals only
 * @c: the event
 *
 * Any context.
 */
void siw2_count(struct siw2_device *sdev, enum siw2_counter c)
{
	this_cpu_inc(totals.c[c]);
	if (sdev)
		this_cpu_inc(sdev->counts->c[c]);
}

static unsigned long sum(const struct siw2_counters __percpu *counts, int i)
{
	unsigned long n = 0;
	int cpu;

	for_each_possible_cpu(cpu)
		n += per_cpu_ptr(counts, cpu)->c[i];
	return n;
}

/* /sys/kernel/debug/siw2/counters (debug.c) */
int siw2_counters_show(struct seq_file *m, void *unused)
{
	int i;

	for (i = 0; i < SIW2_CNT_MAX; i++)
		seq_printf(m, "%s %lu\n", descs[i].name, sum(&totals, i));
	return 0;
}

int siw2_counters_init_device(struct siw2_device *sdev)
{
	sdev->counts = alloc_percpu(struct siw2_counters);
	return sdev->counts ? 0 : -ENOMEM;
}

/* After the last event: every object and connection of @sdev is gone. */
void siw2_counters_uninit_device(struct siw2_device *sdev)
{
	free_percpu(sdev->counts);
	sdev->counts = NULL;
}

/* ib_device_ops.alloc_hw_port_stats */
static struct rdma_hw_stats *alloc_port_stats(struct ib_device *ibdev,
					      u32 port)
{
	return rdma_alloc_hw_stats_struct(descs, SIW2_CNT_MAX,
					  RDMA_HW_STATS_DEFAULT_LIFESPAN);
}

/* ib_device_ops.get_hw_stats: all counters at once, whichever was asked */
static int get_stats(struct ib_device *ibdev, struct rdma_hw_stats *stats,
		     u32 port, int index)
{
	struct siw2_device *sdev = to_siw2_dev(ibdev);
	int i;

	for (i = 0; i < SIW2_CNT_MAX; i++)
		stats->value[i] = sum(sdev->counts, i);
	return SIW2_CNT_MAX;
}

const struct ib_device_ops siw2_counters_ops = {
	.alloc_hw_port_stats = alloc_port_stats,
	.get_hw_stats = get_stats,
};
