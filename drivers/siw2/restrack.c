// SPDX-License-Identifier: GPL-2.0
/*
 * Driver details in the core's resource tracking: what `rdma resource
 * show qp|cq|mr -dd` prints after the core's own attributes.
 *
 * The core calls these in process context, holding a reference that the
 * object's destruction waits for before it asks siw2 (the core's
 * rdma_restrack_begin_del() precedes destroy_qp and destroy_cq, and
 * rdma_restrack_del() precedes dereg_mr), so nothing siw2 frees in those
 * verbs is gone yet. Each report is a snapshot taken under the object's
 * locks and written to the message after they are dropped. The index a
 * user ring's application publishes is shown as it was written, unchecked.
 */
#include <rdma/restrack.h>

#include "siw2.h"
#include "engine.h"

/* One attribute of a report, printed as a decimal number. */
struct siw2_attr {
	const char *name;
	u32 val;
};

static int put_attrs(struct sk_buff *msg, const struct siw2_attr *a,
		     unsigned int n)
{
	unsigned int i;

	for (i = 0; i < n; i++)
		if (rdma_nl_put_driver_u32(msg, a[i].name, a[i].val))
			return -EMSGSIZE;
	return 0;
}

/* A ring's size, both indices and its flags word. */
struct ring_report {
	u32 size, prod, cons, flags;
};

static void ring_report(struct siw2_queue *q, struct ring_report *r)
{
	r->size = q->size;
	siw2_queue_indices(q, &r->prod, &r->cons);
	r->flags = q->size ? siw2_queue_flags(q) : 0;
}

static int stream_attrs(struct sk_buff *msg, struct siw2_stream *s)
{
	/* Set by the CM before the stream was attached; fixed since. */
	const struct siw2_mpa_conn *c = &s->conn;
	struct siw2_rdmap_ird ird;
	struct siw2_rdmap_ord ord;
	unsigned long irqf;

	spin_lock_irqsave(&s->lock, irqf);
	ird = s->ird;
	ord = s->ord;
	spin_unlock_irqrestore(&s->lock, irqf);
	{
		const struct siw2_attr a[] = {
			{ "mpa_rev", c->rev },
			{ "mpa_enhanced", c->enhanced },
			{ "crc", c->crc },
			{ "markers_tx", c->tx_markers },
			{ "markers_rx", c->rx_markers },
			{ "p2p", c->p2p },
			{ "large_fpdu", c->large },
			{ "ird", ird.max },
			{ "ird_active", ird.active },
			{ "ord", ord.max },
			{ "ord_outstanding", ord.outstanding },
			{ "tx_cpu", READ_ONCE(s->tx_cpu) },
			{ "tx_zerocopy", s->tx_zerocopy },
		};

		if (put_attrs(msg, a, ARRAY_SIZE(a)))
			return -EMSGSIZE;
	}
	return rdma_nl_put_driver_u64_hex(msg, "stream_flags",
					  READ_ONCE(s->flags));
}

static int qp_attrs(struct sk_buff *msg, struct siw2_qp *qp)
{
	struct ring_report sq, rq = {};
	struct siw2_stream *s;
	unsigned long irqf;
	u32 sq_fetch;
	int idx, ret;

	spin_lock_irqsave(&qp->sq_lock, irqf);
	ring_report(&qp->sq, &sq);
	sq_fetch = qp->sq_fetch;
	spin_unlock_irqrestore(&qp->sq_lock, irqf);
	if (!qp->srq) {
		spin_lock_irqsave(&qp->rq_lock, irqf);
		ring_report(&qp->rq, &rq);
		spin_unlock_irqrestore(&qp->rq_lock, irqf);
	}
	{
		const struct siw2_attr a[] = {
			{ "sq_size", sq.size },
			{ "sq_prod", sq.prod },
			{ "sq_cons", sq.cons },
			{ "sq_fetch", sq_fetch },
			{ "sq_flags", sq.flags },
			{ "rq_size", rq.size },
			{ "rq_prod", rq.prod },
			{ "rq_cons", rq.cons },
			{ "rq_flags", rq.flags },
			{ "sq_polled", !list_empty_careful(&qp->poll_node) },
		};

		if (put_attrs(msg, a, ARRAY_SIZE(a)))
			return -EMSGSIZE;
	}
	idx = srcu_read_lock(&siw2_stream_srcu);
	s = srcu_dereference(qp->stream, &siw2_stream_srcu);
	ret = s ? stream_attrs(msg, s) : 0;
	srcu_read_unlock(&siw2_stream_srcu, idx);
	return ret;
}

static int cq_attrs(struct sk_buff *msg, struct siw2_cq *cq)
{
	struct ring_report q;
	unsigned long irqf;
	bool overflow;

	spin_lock_irqsave(&cq->lock, irqf);
	ring_report(&cq->q, &q);
	overflow = cq->overflow;
	spin_unlock_irqrestore(&cq->lock, irqf);
	{
		const struct siw2_attr a[] = {
			{ "cq_size", q.size },
			{ "cq_prod", q.prod },
			{ "cq_cons", q.cons },
			{ "cq_arm", q.flags },
			{ "cq_overflow", overflow },
		};

		return put_attrs(msg, a, ARRAY_SIZE(a));
	}
}

static int mr_attrs(struct sk_buff *msg, struct siw2_mr *mr)
{
	static const char * const kinds[] = {
		[SIW2_MR_USER] = "user",
		[SIW2_MR_DMA] = "dma",
		[SIW2_MR_FAST] = "fast",
		[SIW2_MR_MW] = "mw",
		[SIW2_MR_ODP] = "odp",
	};
	u32 windows;
	bool valid;
	int access;

	/* Fast registration, invalidation and binds change these. */
	read_lock_bh(&mr->lock);
	valid = mr->valid;
	access = mr->access;
	windows = mr->windows;
	read_unlock_bh(&mr->lock);

	if (rdma_nl_put_driver_string(msg, "kind", kinds[mr->kind]) ||
	    rdma_nl_put_driver_u32(msg, "valid", valid) ||
	    rdma_nl_put_driver_u32_hex(msg, "access", access) ||
	    rdma_nl_put_driver_u32(msg, "windows", windows) ||
	    rdma_nl_put_driver_u32(msg, "npages", READ_ONCE(mr->npages)))
		return -EMSGSIZE;
	return 0;
}

/*
 * The attributes go into the entry's driver table, which a tool prints
 * after the core's attributes (iproute2's rdma with -dd). A table that
 * does not fit is taken out again.
 */
static int table_end(struct sk_buff *msg, struct nlattr *table, int err)
{
	if (err) {
		nla_nest_cancel(msg, table);
		return -EMSGSIZE;
	}
	nla_nest_end(msg, table);
	return 0;
}

static int fill_qp(struct sk_buff *msg, struct ib_qp *ibqp)
{
	struct nlattr *table;

	table = nla_nest_start_noflag(msg, RDMA_NLDEV_ATTR_DRIVER);
	if (!table)
		return -EMSGSIZE;
	return table_end(msg, table, qp_attrs(msg, to_siw2_qp(ibqp)));
}

static int fill_cq(struct sk_buff *msg, struct ib_cq *ibcq)
{
	struct nlattr *table;

	table = nla_nest_start_noflag(msg, RDMA_NLDEV_ATTR_DRIVER);
	if (!table)
		return -EMSGSIZE;
	return table_end(msg, table, cq_attrs(msg, to_siw2_cq(ibcq)));
}

static int fill_mr(struct sk_buff *msg, struct ib_mr *ibmr)
{
	struct nlattr *table;

	table = nla_nest_start_noflag(msg, RDMA_NLDEV_ATTR_DRIVER);
	if (!table)
		return -EMSGSIZE;
	return table_end(msg, table, mr_attrs(msg, to_siw2_mr(ibmr)));
}

const struct ib_device_ops siw2_restrack_ops = {
	.fill_res_qp_entry = fill_qp,
	.fill_res_cq_entry = fill_cq,
	.fill_res_mr_entry = fill_mr,
};
