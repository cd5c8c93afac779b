// SPDX-License-Identifier: GPL-2.0
/*
 * siw2_selftest: exercises a siw2 device through the kernel verbs, the way
 * kernel consumers (NFS/RDMA, iSER, NVMe-oF) use it: PDs, CQs (polled
 * directly, from softirq, legacy with handlers), QPs and their state
 * machine, posting and flushing, ib_drain_qp(), SRQs and fast
 * registration MRs. No connection is made: what a peer would do is not
 * tested here, and without one a QP gets no further than RTR (only the
 * CM moves an iWARP QP to RTS), so work is posted in RTR and ERR.
 *
 * Loaded by the guest suite "objects" with dev=<ibdev>; runs at load time,
 * prints one line per check to the kernel log ("ok   - ..." or
 * "FAIL - ...") and a summary, and leaves the counts in
 * /sys/module/siw2_selftest/parameters/{passed,failed}. Every object it
 * creates is destroyed before init returns.
 *
 * With inval_addr= and inval_port= it runs none of that but serves one
 * connection to a peer instead (the hostile suite's remote invalidation
 * case, see "Remote invalidation" below).
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/completion.h>
#include <linux/inet.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/nsproxy.h>
#include <linux/scatterlist.h>
#include <linux/slab.h>
#include <linux/workqueue.h>
#include <rdma/ib_verbs.h>
#include <rdma/rdma_cm.h>

static char *dev = "siw2_0";
module_param(dev, charp, 0444);
MODULE_PARM_DESC(dev, "the siw2 device to test");

static int passed;
module_param(passed, int, 0444);
static int failed;
module_param(failed, int, 0444);

static __printf(3, 4) void check(bool ok, int line, const char *fmt, ...)
{
	struct va_format vaf;
	va_list args;

	va_start(args, fmt);
	vaf.fmt = fmt;
	vaf.va = &args;
	if (ok) {
		passed++;
		pr_info("ok   - %pV\n", &vaf);
	} else {
		failed++;
		pr_info("FAIL - %pV (line %d)\n", &vaf, line);
	}
	va_end(args);
}

#define CHECK(cond, ...) check(cond, __LINE__, __VA_ARGS__)

#define NWC 64

struct env {
	struct ib_device *dev;
	struct ib_pd *pd;
	struct ib_wc wc[NWC];
};

/* Reaps everything a directly polled CQ holds, up to NWC entries. */
static int poll_all(struct ib_cq *cq, struct ib_wc *wc)
{
	int n = 0, r;

	while (n < NWC) {
		r = ib_poll_cq(cq, NWC - n, wc + n);
		if (r <= 0)
			break;
		n += r;
	}
	return n;
}

static struct ib_qp *make_qp(struct env *e, struct ib_cq *scq,
			     struct ib_cq *rcq, struct ib_srq *srq, u32 wr,
			     void (*handler)(struct ib_event *, void *),
			     void *ctx)
{
	struct ib_qp_init_attr ia = {
		.event_handler = handler,
		.qp_context = ctx,
		.send_cq = scq,
		.recv_cq = rcq,
		.srq = srq,
		.cap = {
			.max_send_wr = wr,
			.max_recv_wr = srq ? 0 : wr,
			.max_send_sge = 2,
			.max_recv_sge = srq ? 0 : 2,
			.max_inline_data = 64,
		},
		.sq_sig_type = IB_SIGNAL_REQ_WR,
		.qp_type = IB_QPT_RC,
	};

	return ib_create_qp(e->pd, &ia);
}

static int set_state(struct ib_qp *qp, enum ib_qp_state s, int extra,
		     struct ib_qp_attr *a)
{
	struct ib_qp_attr attr = {};

	if (!a)
		a = &attr;
	a->qp_state = s;
	return ib_modify_qp(qp, a, IB_QP_STATE | extra);
}

static enum ib_qp_state qp_state(struct ib_qp *qp, struct ib_qp_attr *a)
{
	struct ib_qp_init_attr ia;
	struct ib_qp_attr attr;

	if (!a)
		a = &attr;
	if (ib_query_qp(qp, a, IB_QP_STATE, &ia))
		return -1;
	return a->qp_state;
}

/* INIT -> RTR as the rdma_cm does it before it connects an iWARP QP. */
static int to_rtr(struct ib_qp *qp)
{
	struct ib_qp_attr a = { .qp_access_flags = IB_ACCESS_REMOTE_WRITE };

	return set_state(qp, IB_QPS_RTR, IB_QP_ACCESS_FLAGS, &a);
}

static int post_send(struct ib_qp *qp, u64 wr_id, int flags)
{
	const struct ib_send_wr *bad;
	struct ib_send_wr wr = {
		.wr_id = wr_id,
		.opcode = IB_WR_SEND,
		.send_flags = flags,
	};

	return ib_post_send(qp, &wr, &bad);
}

static int post_recv(struct ib_qp *qp, u64 wr_id)
{
	const struct ib_recv_wr *bad;
	struct ib_recv_wr wr = { .wr_id = wr_id };

	return ib_post_recv(qp, &wr, &bad);
}

static void test_pd(struct env *e)
{
	CHECK(e->pd->local_dma_lkey && e->pd->__internal_mr,
	      "pd: a DMA MR stands for the local DMA lkey (0x%x)",
	      e->pd->local_dma_lkey);
	CHECK(e->dev->attrs.device_cap_flags & IB_DEVICE_MEM_MGT_EXTENSIONS,
	      "device: reports memory management extensions");
	CHECK(e->dev->attrs.max_fast_reg_page_list_len > 0,
	      "device: reports a fast registration page list length");
}

static void test_cq_create(struct env *e)
{
	struct ib_cq *cq;
	int nvec = e->dev->num_comp_vectors;

	cq = ib_alloc_cq(e->dev, NULL, 10, 0, IB_POLL_DIRECT);
	CHECK(!IS_ERR(cq), "cq: create with 10 entries");
	if (!IS_ERR(cq)) {
		CHECK(cq->cqe >= 10 && is_power_of_2(cq->cqe),
		      "cq: size %d is a power of two >= 10", cq->cqe);
		CHECK(poll_all(cq, e->wc) == 0, "cq: a new CQ is empty");
		ib_free_cq(cq);
	}
	cq = ib_alloc_cq(e->dev, NULL, e->dev->attrs.max_cqe, nvec - 1,
			 IB_POLL_DIRECT);
	CHECK(!IS_ERR(cq), "cq: create with max_cqe %d on vector %d",
	      e->dev->attrs.max_cqe, nvec - 1);
	if (!IS_ERR(cq))
		ib_free_cq(cq);
	cq = ib_alloc_cq(e->dev, NULL, e->dev->attrs.max_cqe + 1, 0,
			 IB_POLL_DIRECT);
	CHECK(PTR_ERR_OR_ZERO(cq) == -EINVAL, "cq: max_cqe + 1 refused");
	if (!IS_ERR(cq))
		ib_free_cq(cq);
	cq = ib_alloc_cq(e->dev, NULL, 10, nvec, IB_POLL_DIRECT);
	CHECK(PTR_ERR_OR_ZERO(cq) == -EINVAL,
	      "cq: completion vector %d (of %d) refused", nvec, nvec);
	if (!IS_ERR(cq))
		ib_free_cq(cq);
}

static void test_qp_create(struct env *e, struct ib_cq *cq)
{
	struct ib_device_attr *da = &e->dev->attrs;
	struct ib_qp_init_attr ia = {
		.send_cq = cq,
		.recv_cq = cq,
		.cap = { .max_send_wr = 4, .max_recv_wr = 4,
			 .max_send_sge = 1, .max_recv_sge = 1 },
		.sq_sig_type = IB_SIGNAL_REQ_WR,
		.qp_type = IB_QPT_RC,
	};
	struct ib_qp_init_attr bad;
	struct ib_qp *qp;

	bad = ia;
	bad.cap.max_send_wr = da->max_qp_wr + 1;
	qp = ib_create_qp(e->pd, &bad);
	CHECK(PTR_ERR_OR_ZERO(qp) == -EINVAL, "qp: max_send_wr beyond max_qp_wr refused");
	if (!IS_ERR(qp))
		ib_destroy_qp(qp);
	bad = ia;
	bad.cap.max_recv_sge = da->max_recv_sge + 1;
	qp = ib_create_qp(e->pd, &bad);
	CHECK(PTR_ERR_OR_ZERO(qp) == -EINVAL, "qp: max_recv_sge beyond the limit refused");
	if (!IS_ERR(qp))
		ib_destroy_qp(qp);
	bad = ia;
	bad.cap.max_inline_data = 4096;
	qp = ib_create_qp(e->pd, &bad);
	CHECK(PTR_ERR_OR_ZERO(qp) == -EINVAL, "qp: 4096 inline octets refused");
	if (!IS_ERR(qp))
		ib_destroy_qp(qp);
	bad = ia;
	bad.qp_type = IB_QPT_UD;
	qp = ib_create_qp(e->pd, &bad);
	CHECK(PTR_ERR_OR_ZERO(qp) == -EOPNOTSUPP, "qp: UD refused with EOPNOTSUPP");
	if (!IS_ERR(qp))
		ib_destroy_qp(qp);

	qp = ib_create_qp(e->pd, &ia);
	CHECK(!IS_ERR(qp), "qp: RC create");
	if (IS_ERR(qp))
		return;
	CHECK(ia.cap.max_send_wr >= 4 && ia.cap.max_recv_wr >= 4 &&
	      ia.cap.max_send_sge >= 1 && ia.cap.max_recv_sge >= 1,
	      "qp: caps reported back (wr %u/%u sge %u/%u inline %u)",
	      ia.cap.max_send_wr, ia.cap.max_recv_wr, ia.cap.max_send_sge,
	      ia.cap.max_recv_sge, ia.cap.max_inline_data);
	CHECK(qp->qp_num >= 2, "qp: number %u", qp->qp_num);
	ib_destroy_qp(qp);
}

static void test_qp_states(struct env *e, struct ib_cq *cq)
{
	struct ib_qp_attr a = {};
	struct ib_qp *qp;
	int ret;

	qp = make_qp(e, cq, cq, NULL, 8, NULL, NULL);
	CHECK(!IS_ERR(qp), "states: create");
	if (IS_ERR(qp))
		return;
	CHECK(qp_state(qp, NULL) == IB_QPS_INIT,
	      "states: an iWARP QP starts in INIT (Idle)");
	CHECK(set_state(qp, IB_QPS_RESET, 0, NULL) == 0 &&
	      qp_state(qp, NULL) == IB_QPS_RESET, "states: INIT -> RESET");
	CHECK(set_state(qp, IB_QPS_RTS, 0, NULL) == -EINVAL,
	      "states: RESET -> RTS refused");
	CHECK(post_recv(qp, 1) == -EINVAL, "states: post_recv in RESET refused");
	a.qp_access_flags = IB_ACCESS_REMOTE_READ | IB_ACCESS_LOCAL_WRITE;
	a.port_num = 1;
	a.pkey_index = 0;
	ret = set_state(qp, IB_QPS_INIT, IB_QP_ACCESS_FLAGS | IB_QP_PORT |
			IB_QP_PKEY_INDEX, &a);
	CHECK(ret == 0 && qp_state(qp, &a) == IB_QPS_INIT &&
	      a.qp_access_flags == (IB_ACCESS_REMOTE_READ | IB_ACCESS_LOCAL_WRITE),
	      "states: RESET -> INIT, access flags kept");
	/*
	 * Straight to the driver: the core trusts a kernel caller's port
	 * and would look up port 2's data (beyond its array) before siw2
	 * sees the request; uverbs checks a user's port itself.
	 */
	a.port_num = 2;
	a.qp_state = IB_QPS_INIT;
	CHECK(qp->device->ops.modify_qp(qp, &a, IB_QP_STATE | IB_QP_PORT,
					NULL) == -EINVAL,
	      "states: port 2 refused");
	a.qp_access_flags = IB_ACCESS_REMOTE_WRITE | IB_ACCESS_LOCAL_WRITE;
	a.port_num = 1;
	CHECK(set_state(qp, IB_QPS_INIT, IB_QP_ACCESS_FLAGS | IB_QP_PORT,
			&a) == 0, "states: INIT -> INIT as the rdma_cm does");
	CHECK(post_send(qp, 1, IB_SEND_SIGNALED) == -EINVAL,
	      "states: post_send in INIT refused");
	CHECK(post_recv(qp, 1) == 0, "states: post_recv in INIT");
	CHECK(set_state(qp, IB_QPS_RTR, IB_QP_ACCESS_FLAGS | IB_QP_PORT,
			&a) == 0 && qp_state(qp, NULL) == IB_QPS_RTR,
	      "states: INIT -> RTR with the iWARP CM's attributes");
	/* Only the CM, with a stream to go with it, moves a QP to RTS. */
	a.max_rd_atomic = 4;
	CHECK(set_state(qp, IB_QPS_RTS, IB_QP_MAX_QP_RD_ATOMIC, &a) == -EINVAL &&
	      qp_state(qp, NULL) == IB_QPS_RTR,
	      "states: rts without a connection refused (RTR -> RTS), stays in RTR");
	CHECK(post_send(qp, 1, IB_SEND_SIGNALED) == -EINVAL,
	      "states: rts without a connection: post_send in RTR refused, nothing waits");
	CHECK(ib_modify_qp(qp, &a, IB_QP_PORT) == 0,
	      "states: the rdma_cm's port-only modify accepted");
	CHECK(set_state(qp, IB_QPS_INIT, 0, NULL) == -EINVAL,
	      "states: RTR -> INIT refused");
	CHECK(set_state(qp, IB_QPS_ERR, 0, NULL) == 0 &&
	      qp_state(qp, NULL) == IB_QPS_ERR, "states: RTR -> ERR");
	CHECK(poll_all(cq, e->wc) == 1 &&
	      e->wc[0].status == IB_WC_WR_FLUSH_ERR,
	      "states: the receive posted in INIT is flushed");
	CHECK(set_state(qp, IB_QPS_RTS, 0, NULL) == -EINVAL,
	      "states: ERR -> RTS refused");
	CHECK(set_state(qp, IB_QPS_RESET, 0, NULL) == 0 &&
	      qp_state(qp, NULL) == IB_QPS_RESET, "states: ERR -> RESET");
	CHECK(set_state(qp, IB_QPS_INIT, 0, NULL) == 0 &&
	      qp_state(qp, NULL) == IB_QPS_INIT, "states: RESET -> INIT again");
	ib_destroy_qp(qp);
}

static void test_post_flush(struct env *e, struct ib_cq *scq,
			    struct ib_cq *rcq)
{
	const struct ib_send_wr *sbad;
	struct ib_send_wr swr[3] = {};
	struct ib_sge sge[7] = {};
	static char buf[512];
	struct ib_qp *qp;
	int i, n;
	bool ok;

	qp = make_qp(e, scq, rcq, NULL, 16, NULL, NULL);
	CHECK(!IS_ERR(qp), "flush: create");
	if (IS_ERR(qp))
		return;
	CHECK(to_rtr(qp) == 0, "flush: INIT -> RTR");
	for (i = 0; i < 3; i++)
		post_recv(qp, 100 + i);
	CHECK(poll_all(scq, e->wc) == 0 && poll_all(rcq, e->wc) == 0,
	      "flush: nothing completes without a peer");
	CHECK(set_state(qp, IB_QPS_ERR, 0, NULL) == 0, "flush: RTR -> ERR");
	n = poll_all(rcq, e->wc);
	ok = n == 3;
	for (i = 0; ok && i < n; i++)
		ok = e->wc[i].status == IB_WC_WR_FLUSH_ERR &&
		     e->wc[i].opcode == IB_WC_RECV && e->wc[i].wr_id == 100 + i;
	CHECK(ok, "flush: 3 receives flushed in order (%d)", n);

	/* In ERR a send is checked as in RTS, then flushed. */
	CHECK(post_send(qp, 200, IB_SEND_SIGNALED) == 0,
	      "flush: signaled send posted");
	CHECK(post_send(qp, 201, 0) == 0, "flush: unsignaled send posted");
	sge[0].addr = (uintptr_t)buf;
	sge[0].length = 32;
	swr[0].wr_id = 202;
	swr[0].opcode = IB_WR_SEND;
	swr[0].send_flags = IB_SEND_INLINE | IB_SEND_SIGNALED;
	swr[0].sg_list = sge;
	swr[0].num_sge = 1;
	CHECK(ib_post_send(qp, swr, &sbad) == 0, "flush: inline send posted");

	/* A chain whose second WR is bad: the first is posted, bad_wr. */
	memset(swr, 0, sizeof(swr));
	for (i = 0; i < 3; i++) {
		swr[i].wr_id = 203 + i;
		swr[i].opcode = IB_WR_SEND;
		swr[i].next = i < 2 ? &swr[i + 1] : NULL;
	}
	swr[1].num_sge = 7;
	swr[1].sg_list = sge;
	CHECK(ib_post_send(qp, swr, &sbad) == -EINVAL && sbad == &swr[1],
	      "flush: 7 SGEs refused, bad_wr names the second WR");
	swr[0].next = NULL;
	swr[0].wr_id = 206;
	swr[0].opcode = IB_WR_MASKED_ATOMIC_FETCH_AND_ADD;
	CHECK(ib_post_send(qp, swr, &sbad) == -EOPNOTSUPP && sbad == swr,
	      "flush: masked atomics refused (RFC 7306 has no masks in verbs)");
	swr[0].opcode = IB_WR_ATOMIC_FETCH_AND_ADD;
	CHECK(ib_post_send(qp, swr, &sbad) == -EINVAL && sbad == swr,
	      "flush: an atomic without its one 8-octet SGE refused");
	swr[0].opcode = IB_WR_SEND;
	swr[0].send_flags = IB_SEND_INLINE;
	swr[0].num_sge = 1;
	swr[0].sg_list = sge;
	sge[0].length = sizeof(buf);
	CHECK(ib_post_send(qp, swr, &sbad) == -EINVAL,
	      "flush: %zu inline octets refused", sizeof(buf));
	swr[0].send_flags = 0;
	swr[0].opcode = 77;
	swr[0].num_sge = 0;
	CHECK(ib_post_send(qp, swr, &sbad) == -EINVAL, "flush: opcode 77 refused");

	n = poll_all(scq, e->wc);
	ok = n == 4;
	for (i = 0; ok && i < n; i++)
		ok = e->wc[i].status == IB_WC_WR_FLUSH_ERR &&
		     e->wc[i].qp == qp &&
		     e->wc[i].wr_id == (i < 3 ? 200 + i : 203);
	CHECK(ok, "flush: 4 sends, unsignaled too, flushed in order (%d)", n);

	CHECK(post_send(qp, 300, 0) == 0 && poll_all(scq, e->wc) == 1 &&
	      e->wc[0].wr_id == 300 && e->wc[0].status == IB_WC_WR_FLUSH_ERR,
	      "flush: a send posted in ERR completes at once");
	CHECK(post_recv(qp, 301) == 0 && poll_all(rcq, e->wc) == 1 &&
	      e->wc[0].wr_id == 301 && e->wc[0].status == IB_WC_WR_FLUSH_ERR,
	      "flush: a receive posted in ERR completes at once");
	ib_destroy_qp(qp);
}

struct drain_cqe {
	struct ib_cqe cqe;
	atomic_t *count;
	enum ib_wc_status status;
};

static void drain_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct drain_cqe *d = container_of(wc->wr_cqe, struct drain_cqe, cqe);

	d->status = wc->status;
	atomic_inc(d->count);
}

/* ib_drain_qp() with CQs polled from softirq, as NFS and NVMe-oF run. */
static void test_drain(struct env *e)
{
	struct drain_cqe d[8];
	const struct ib_send_wr *sbad;
	const struct ib_recv_wr *rbad;
	struct ib_send_wr swr = {};
	struct ib_recv_wr rwr = {};
	struct ib_cq *scq, *rcq;
	struct ib_qp *qp;
	atomic_t count = ATOMIC_INIT(0);
	int i;
	bool ok;

	scq = ib_alloc_cq(e->dev, NULL, 16, 0, IB_POLL_SOFTIRQ);
	rcq = ib_alloc_cq(e->dev, NULL, 16, 0, IB_POLL_WORKQUEUE);
	CHECK(!IS_ERR(scq) && !IS_ERR(rcq), "drain: softirq and workqueue CQs");
	if (IS_ERR(scq) || IS_ERR(rcq))
		goto out_cq;
	qp = make_qp(e, scq, rcq, NULL, 16, NULL, NULL);
	CHECK(!IS_ERR(qp), "drain: create");
	if (IS_ERR(qp))
		goto out_cq;
	/* Receives wait in RTR; sends need RTS, which takes a connection. */
	CHECK(to_rtr(qp) == 0, "drain: to RTR");
	for (i = 0; i < 8; i++) {
		d[i].cqe.done = drain_done;
		d[i].count = &count;
		d[i].status = IB_WC_SUCCESS;
	}
	for (i = 0; i < 8; i++) {
		rwr.wr_cqe = &d[i].cqe;
		ib_post_recv(qp, &rwr, &rbad);
	}
	swr.wr_cqe = &d[0].cqe;
	swr.opcode = IB_WR_SEND;
	CHECK(ib_post_send(qp, &swr, &sbad) == -EINVAL,
	      "drain: a send in RTR refused");
	ib_drain_qp(qp);
	ok = atomic_read(&count) == 8;
	for (i = 0; ok && i < 8; i++)
		ok = d[i].status == IB_WC_WR_FLUSH_ERR;
	CHECK(ok, "drain: ib_drain_qp() returned, all 8 receives flushed (%d)",
	      atomic_read(&count));
	ib_destroy_qp(qp);
out_cq:
	if (!IS_ERR(rcq))
		ib_free_cq(rcq);
	if (!IS_ERR(scq))
		ib_free_cq(scq);
}

struct notify {
	atomic_t comp;
	atomic_t cq_err;
	atomic_t last_wqe;
	atomic_t other;
	struct completion last_wqe_done;
};

static void notify_comp(struct ib_cq *cq, void *ctx)
{
	struct notify *n = ctx;

	atomic_inc(&n->comp);
}

static void notify_cq_event(struct ib_event *ev, void *ctx)
{
	struct notify *n = ctx;

	atomic_inc(ev->event == IB_EVENT_CQ_ERR ? &n->cq_err : &n->other);
}

static void notify_qp_event(struct ib_event *ev, void *ctx)
{
	struct notify *n = ctx;

	if (ev->event == IB_EVENT_QP_LAST_WQE_REACHED) {
		atomic_inc(&n->last_wqe);
		complete(&n->last_wqe_done);
	} else {
		atomic_inc(&n->other);
	}
}

/* Legacy CQs: arming, missed events, solicited arms, resize, overflow. */
static void test_notify(struct env *e)
{
	struct ib_cq_init_attr ca = { .cqe = 4 };
	struct notify n = {};
	struct ib_qp *qp;
	struct ib_cq *cq;
	int i, r;
	bool ok;

	cq = ib_create_cq(e->dev, notify_comp, notify_cq_event, &n, &ca);
	CHECK(!IS_ERR(cq), "notify: legacy CQ of 4");
	if (IS_ERR(cq))
		return;
	qp = make_qp(e, cq, cq, NULL, 32, notify_qp_event, &n);
	CHECK(!IS_ERR(qp), "notify: create");
	if (IS_ERR(qp))
		goto out_cq;
	to_rtr(qp);

	CHECK(ib_req_notify_cq(cq, IB_CQ_NEXT_COMP) == 0, "notify: arm");
	post_recv(qp, 1);
	post_recv(qp, 2);
	CHECK(atomic_read(&n.comp) == 0, "notify: no event without completions");
	set_state(qp, IB_QPS_ERR, 0, NULL);
	CHECK(atomic_read(&n.comp) == 1,
	      "notify: one event for two completions (%d)", atomic_read(&n.comp));
	r = ib_req_notify_cq(cq, IB_CQ_NEXT_COMP | IB_CQ_REPORT_MISSED_EVENTS);
	CHECK(r > 0, "notify: re-arm reports the unpolled completions (%d)", r);
	CHECK(poll_all(cq, e->wc) == 2, "notify: two completions");
	r = ib_req_notify_cq(cq, IB_CQ_SOLICITED | IB_CQ_REPORT_MISSED_EVENTS);
	CHECK(r == 0, "notify: solicited arm on an empty CQ reports nothing");
	post_send(qp, 3, 0);
	CHECK(atomic_read(&n.comp) == 2,
	      "notify: an error completion satisfies a solicited arm (%d)",
	      atomic_read(&n.comp));
	post_send(qp, 4, 0);
	CHECK(atomic_read(&n.comp) == 2, "notify: the arm was consumed");

	/* Resize: 2 unpolled completions (3, 4) move over, in order. */
	CHECK(ib_resize_cq(cq, 16) == 0 && cq->cqe >= 16,
	      "resize: 4 -> %d", cq->cqe);
	post_send(qp, 5, 0);
	CHECK(ib_resize_cq(cq, 2) == -EINVAL,
	      "resize: below the 3 unpolled completions refused");
	r = poll_all(cq, e->wc);
	CHECK(r == 3 && e->wc[0].wr_id == 3 && e->wc[1].wr_id == 4 &&
	      e->wc[2].wr_id == 5, "resize: completions preserved in order (%d)",
	      r);
	CHECK(ib_resize_cq(cq, 4) == 0 && cq->cqe == 4, "resize: 16 -> 4");
	CHECK(ib_resize_cq(cq, e->dev->attrs.max_cqe + 1) == -EINVAL,
	      "resize: beyond max_cqe refused");

	/* Overflow: 6 flushes into 4 slots; 2 are lost, CQ_ERR once. */
	for (i = 0; i < 6; i++)
		post_send(qp, 10 + i, 0);
	CHECK(atomic_read(&n.cq_err) == 1, "overflow: IB_EVENT_CQ_ERR once (%d)",
	      atomic_read(&n.cq_err));
	r = poll_all(cq, e->wc);
	ok = r == 4;
	for (i = 0; ok && i < 4; i++)
		ok = e->wc[i].wr_id == 10 + i;
	CHECK(ok, "overflow: the 4 completions that fit are intact (%d)", r);
	CHECK(atomic_read(&n.other) == 0 && atomic_read(&n.last_wqe) == 0,
	      "notify: no other events");
	ib_destroy_qp(qp);
out_cq:
	ib_destroy_cq(cq);
}

static void test_srq(struct env *e)
{
	struct ib_srq_init_attr sa = {
		.attr = { .max_wr = 10, .max_sge = 2 },
		.srq_type = IB_SRQT_BASIC,
	};
	const struct ib_recv_wr *rbad;
	struct ib_recv_wr rwr = {};
	struct ib_srq_attr a = {};
	struct ib_srq_init_attr bad;
	struct notify n = {};
	struct ib_cq *cq;
	struct ib_srq *srq;
	struct ib_qp *qp;
	int i, ret = 0;

	init_completion(&n.last_wqe_done);
	bad = sa;
	bad.attr.max_wr = e->dev->attrs.max_srq_wr + 1;
	srq = ib_create_srq(e->pd, &bad);
	CHECK(PTR_ERR_OR_ZERO(srq) == -EINVAL, "srq: max_wr beyond the limit refused");
	if (!IS_ERR(srq))
		ib_destroy_srq(srq);

	srq = ib_create_srq(e->pd, &sa);
	CHECK(!IS_ERR(srq), "srq: create");
	if (IS_ERR(srq))
		return;
	CHECK(sa.attr.max_wr >= 10, "srq: max_wr %u reported", sa.attr.max_wr);
	for (i = 0; i < 5; i++) {
		rwr.wr_id = i;
		ret |= ib_post_srq_recv(srq, &rwr, &rbad);
	}
	CHECK(ret == 0, "srq: 5 receives posted");
	a.srq_limit = 3;
	CHECK(ib_modify_srq(srq, &a, IB_SRQ_LIMIT) == 0, "srq: arm limit 3");
	memset(&a, 0, sizeof(a));
	CHECK(ib_query_srq(srq, &a) == 0 && a.srq_limit == 3 &&
	      a.max_wr >= 10, "srq: query (limit %u, max_wr %u)", a.srq_limit,
	      a.max_wr);
	a.srq_limit = 1000;
	CHECK(ib_modify_srq(srq, &a, IB_SRQ_LIMIT) == -EINVAL,
	      "srq: limit beyond max_wr refused");
	a.max_wr = 100;
	CHECK(ib_modify_srq(srq, &a, IB_SRQ_MAX_WR) == -EOPNOTSUPP,
	      "srq: resize not supported");

	cq = ib_alloc_cq(e->dev, NULL, 16, 0, IB_POLL_DIRECT);
	if (IS_ERR(cq))
		goto out_srq;
	qp = make_qp(e, cq, cq, srq, 8, notify_qp_event, &n);
	CHECK(!IS_ERR(qp), "srq: QP on the SRQ");
	if (IS_ERR(qp))
		goto out_cq;
	CHECK(post_recv(qp, 1) == -EINVAL, "srq: post_recv on the QP refused");
	to_rtr(qp);
	set_state(qp, IB_QPS_ERR, 0, NULL);
	CHECK(atomic_read(&n.last_wqe) == 1,
	      "srq: IB_EVENT_QP_LAST_WQE_REACHED on entering ERR");
	CHECK(poll_all(cq, e->wc) == 0, "srq: the SRQ's receives are not flushed");
	ib_destroy_qp(qp);
out_cq:
	ib_free_cq(cq);
out_srq:
	ib_destroy_srq(srq);
}

/* ib_drain_qp() of a QP on an SRQ (6.11+ waits for the last WQE event). */
static void test_srq_drain(struct env *e)
{
	struct ib_srq_init_attr sa = {
		.attr = { .max_wr = 4, .max_sge = 1 },
		.srq_type = IB_SRQT_BASIC,
	};
	unsigned long t0 = jiffies;
	struct ib_srq *srq;
	struct ib_cq *cq;
	struct ib_qp *qp;

	srq = ib_create_srq(e->pd, &sa);
	if (IS_ERR(srq))
		return;
	cq = ib_alloc_cq(e->dev, NULL, 16, 0, IB_POLL_SOFTIRQ);
	if (IS_ERR(cq))
		goto out_srq;
	qp = make_qp(e, cq, cq, srq, 8, NULL, NULL);
	if (IS_ERR(qp))
		goto out_cq;
	to_rtr(qp);
	ib_drain_qp(qp);
	CHECK(time_before(jiffies, t0 + 5 * HZ),
	      "srq: ib_drain_qp() returns promptly (%u ms)",
	      jiffies_to_msecs(jiffies - t0));
	ib_destroy_qp(qp);
out_cq:
	ib_free_cq(cq);
out_srq:
	ib_destroy_srq(srq);
}

static void test_mr(struct env *e, struct ib_cq *cq)
{
	u32 max = e->dev->attrs.max_fast_reg_page_list_len;
	const struct ib_send_wr *sbad;
	struct ib_reg_wr reg = {};
	struct ib_send_wr inv = {};
	struct scatterlist sg[3];
	struct page *pages[3] = {};
	struct ib_pd *pd2;
	struct ib_mr *mr;
	struct ib_qp *qp;
	int i, n;

	mr = ib_alloc_mr(e->pd, IB_MR_TYPE_MEM_REG, max + 1);
	CHECK(PTR_ERR_OR_ZERO(mr) == -EINVAL, "mr: %u pages refused", max + 1);
	if (!IS_ERR(mr))
		ib_dereg_mr(mr);
	mr = ib_alloc_mr(e->pd, IB_MR_TYPE_SG_GAPS, 4);
	CHECK(IS_ERR(mr), "mr: SG_GAPS refused");
	if (!IS_ERR(mr))
		ib_dereg_mr(mr);

	mr = ib_alloc_mr(e->pd, IB_MR_TYPE_MEM_REG, 16);
	CHECK(!IS_ERR(mr), "mr: fast registration MR of 16 pages");
	if (IS_ERR(mr))
		return;
	CHECK(mr->lkey == mr->rkey && mr->lkey >> 8,
	      "mr: STag 0x%x (index %u)", mr->lkey, mr->lkey >> 8);

	sg_init_table(sg, 3);
	for (i = 0; i < 3; i++) {
		pages[i] = alloc_page(GFP_KERNEL);
		if (!pages[i])
			goto out_pages;
		sg_set_page(&sg[i], pages[i], PAGE_SIZE, 0);
		/* A virtual-DMA device: the DMA address is the kernel address. */
		sg_dma_address(&sg[i]) = (uintptr_t)page_address(pages[i]);
		sg_dma_len(&sg[i]) = PAGE_SIZE;
	}
	n = ib_map_mr_sg(mr, sg, 3, NULL, PAGE_SIZE);
	CHECK(n == 3 && mr->length == 3 * PAGE_SIZE,
	      "mr: 3 pages mapped (%d, %llu octets)", n, mr->length);

	qp = make_qp(e, cq, cq, NULL, 8, NULL, NULL);
	if (IS_ERR(qp))
		goto out_pages;
	/* Posted in ERR: checked as in RTS, then flushed. */
	to_rtr(qp);
	set_state(qp, IB_QPS_ERR, 0, NULL);
	ib_update_fast_reg_key(mr, ib_inc_rkey(mr->rkey));
	reg.wr.opcode = IB_WR_REG_MR;
	reg.wr.wr_id = 1;
	reg.wr.send_flags = IB_SEND_SIGNALED;
	reg.mr = mr;
	reg.key = mr->rkey;
	reg.access = IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_WRITE;
	CHECK(ib_post_send(qp, &reg.wr, &sbad) == 0, "mr: REG_MR posted");
	inv.opcode = IB_WR_LOCAL_INV;
	inv.wr_id = 2;
	inv.ex.invalidate_rkey = mr->rkey;
	CHECK(ib_post_send(qp, &inv, &sbad) == 0, "mr: LOCAL_INV posted");
	n = poll_all(cq, e->wc);
	CHECK(n == 2 && e->wc[0].opcode == IB_WC_REG_MR &&
	      e->wc[1].opcode == IB_WC_LOCAL_INV &&
	      e->wc[1].status == IB_WC_WR_FLUSH_ERR,
	      "mr: flushed with their opcodes (%d)", n);
	ib_destroy_qp(qp);

	pd2 = ib_alloc_pd(e->dev, 0);
	if (!IS_ERR(pd2)) {
		qp = make_qp(e, cq, cq, NULL, 8, NULL, NULL);
		if (!IS_ERR(qp)) {
			/* The QP is on e->pd; an MR of another PD is refused. */
			struct ib_mr *mr2 = ib_alloc_mr(pd2, IB_MR_TYPE_MEM_REG, 4);

			to_rtr(qp);
			set_state(qp, IB_QPS_ERR, 0, NULL);
			if (!IS_ERR(mr2)) {
				reg.mr = mr2;
				reg.key = mr2->rkey;
				CHECK(ib_post_send(qp, &reg.wr, &sbad) == -EINVAL,
				      "mr: REG_MR of another PD's MR refused");
				ib_dereg_mr(mr2);
			}
			ib_destroy_qp(qp);
		}
		ib_dealloc_pd(pd2);
	}
out_pages:
	for (i = 0; i < 3; i++)
		if (pages[i])
			__free_page(pages[i]);
	CHECK(ib_dereg_mr(mr) == 0, "mr: dereg");
}

/*
 * Remote invalidation while transmit stalls (issue 38). With inval_port
 * set, the module listens with the rdma_cm on inval_addr:inval_port in
 * the network namespace of the process that loads it (`ip netns exec NS
 * modprobe ...`) and serves one connection at a time as a kernel ULP
 * would: a fast registration MR over INV_PAGES pages holding peer_target.c's
 * pattern (octet i is (7 * i + (i >> 8)) & 0xff) is offered for remote
 * Read in the accept's Private Data ("stag=.. to=.. len=.."), registered
 * once the connection is up and followed by a Send "ready". A receive
 * that completes with the invalidation of that STag gives the pages back
 * to the ULP, which reuses them: INV_CANARY is written over all of them.
 * From then on no octet of the canary may reach the peer. The module
 * reports on "inval: " lines and counts such receives in inval_seen. A
 * connection's objects go when it ends, the listener at unload (which
 * must come before the device's removal).
 */
static char *inval_addr;
module_param(inval_addr, charp, 0444);
MODULE_PARM_DESC(inval_addr, "IPv4 address to listen on (invalidation mode)");
static int inval_port;
module_param(inval_port, int, 0444);
MODULE_PARM_DESC(inval_port, "port to listen on; 0: run the selftest");
static int inval_seen;
module_param(inval_seen, int, 0444);

#define INV_PAGES 64
#define INV_RECVS 4
#define INV_RECV_LEN 64
#define INV_CANARY 0xca

struct inv_conn {
	struct rdma_cm_id *id;
	struct ib_pd *pd;
	struct ib_cq *cq;
	struct ib_mr *mr;
	struct page *pages[INV_PAGES];
	struct scatterlist sg[INV_PAGES];
	int nsg;
	u8 *rbuf;
	u64 rbuf_dma;
	struct ib_cqe recv_cqe;
	struct ib_cqe send_cqe;
	bool ending;			/* free_work queued; the CM handler's */
	struct work_struct free_work;
};

static struct rdma_cm_id *inv_listen;
static struct workqueue_struct *inv_wq;	/* the connections' releases */
static DEFINE_MUTEX(inv_lock);
static struct inv_conn *inv_conn;	/* the live connection, inv_lock */

static void inv_recv_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct inv_conn *c = cq->cq_context;
	int i;

	if (wc->status != IB_WC_SUCCESS) {
		if (wc->status != IB_WC_WR_FLUSH_ERR)
			pr_info("inval: receive status %d\n", wc->status);
		return;
	}
	if (!(wc->wc_flags & IB_WC_WITH_INVALIDATE) ||
	    wc->ex.invalidate_rkey != c->mr->rkey) {
		pr_info("inval: receive of %u octets, no invalidation of 0x%08x\n",
			wc->byte_len, c->mr->rkey);
		return;
	}
	/* The region is the ULP's again: it reuses the pages. */
	for (i = 0; i < INV_PAGES; i++)
		memset(page_address(c->pages[i]), INV_CANARY, PAGE_SIZE);
	WRITE_ONCE(inval_seen, inval_seen + 1);
	pr_info("inval: receive with invalidation of stag 0x%08x, canary 0x%02x written over %lu octets\n",
		wc->ex.invalidate_rkey, INV_CANARY, INV_PAGES * PAGE_SIZE);
}

static void inv_send_done(struct ib_cq *cq, struct ib_wc *wc)
{
	if (wc->status != IB_WC_SUCCESS && wc->status != IB_WC_WR_FLUSH_ERR)
		pr_info("inval: send queue opcode %d status %d\n", wc->opcode,
			wc->status);
}

/* Releases what inv_setup() made; @c->id is the caller's. */
static void inv_release(struct inv_conn *c)
{
	struct ib_device *dev = c->id->device;
	int i;

	if (c->id->qp) {
		ib_drain_qp(c->id->qp);
		rdma_destroy_qp(c->id);
	}
	if (c->mr)
		ib_dereg_mr(c->mr);
	if (c->nsg > 0)
		ib_dma_unmap_sg(dev, c->sg, INV_PAGES, DMA_BIDIRECTIONAL);
	for (i = 0; i < INV_PAGES; i++)
		if (c->pages[i])
			__free_page(c->pages[i]);
	if (c->rbuf) {
		if (c->rbuf_dma)
			ib_dma_unmap_single(dev, c->rbuf_dma,
					    INV_RECVS * INV_RECV_LEN,
					    DMA_FROM_DEVICE);
		kfree(c->rbuf);
	}
	if (!IS_ERR_OR_NULL(c->cq))
		ib_free_cq(c->cq);
	if (!IS_ERR_OR_NULL(c->pd))
		ib_dealloc_pd(c->pd);
}

static int inv_setup(struct inv_conn *c)
{
	struct ib_device *dev = c->id->device;
	struct ib_qp_init_attr qa = {
		.cap = { .max_send_wr = 8, .max_recv_wr = INV_RECVS,
			 .max_send_sge = 1, .max_recv_sge = 1,
			 .max_inline_data = 16 },
		.sq_sig_type = IB_SIGNAL_REQ_WR,
		.qp_type = IB_QPT_RC,
	};
	const struct ib_recv_wr *rbad;
	struct ib_recv_wr rwr = {};
	struct ib_sge sge;
	u32 i, k;
	u8 *p;
	int ret;

	c->pd = ib_alloc_pd(dev, 0);
	if (IS_ERR(c->pd))
		return PTR_ERR(c->pd);
	c->cq = ib_alloc_cq(dev, c, 16, 0, IB_POLL_WORKQUEUE);
	if (IS_ERR(c->cq))
		return PTR_ERR(c->cq);
	qa.send_cq = c->cq;
	qa.recv_cq = c->cq;
	ret = rdma_create_qp(c->id, c->pd, &qa);
	if (ret)
		return ret;
	c->mr = ib_alloc_mr(c->pd, IB_MR_TYPE_MEM_REG, INV_PAGES);
	if (IS_ERR(c->mr)) {
		ret = PTR_ERR(c->mr);
		c->mr = NULL;
		return ret;
	}
	sg_init_table(c->sg, INV_PAGES);
	for (i = 0; i < INV_PAGES; i++) {
		c->pages[i] = alloc_page(GFP_KERNEL);
		if (!c->pages[i])
			return -ENOMEM;
		p = page_address(c->pages[i]);
		for (k = 0; k < PAGE_SIZE; k++) {
			u32 o = i * PAGE_SIZE + k;

			p[k] = (7 * o + (o >> 8)) & 0xff;
		}
		sg_set_page(&c->sg[i], c->pages[i], PAGE_SIZE, 0);
	}
	c->nsg = ib_dma_map_sg(dev, c->sg, INV_PAGES, DMA_BIDIRECTIONAL);
	if (c->nsg <= 0)
		return -EIO;
	if (ib_map_mr_sg(c->mr, c->sg, c->nsg, NULL, PAGE_SIZE) != c->nsg)
		return -EINVAL;
	ib_update_fast_reg_key(c->mr, ib_inc_rkey(c->mr->rkey));

	c->rbuf = kzalloc(INV_RECVS * INV_RECV_LEN, GFP_KERNEL);
	if (!c->rbuf)
		return -ENOMEM;
	c->rbuf_dma = ib_dma_map_single(dev, c->rbuf, INV_RECVS * INV_RECV_LEN,
					DMA_FROM_DEVICE);
	if (ib_dma_mapping_error(dev, c->rbuf_dma)) {
		c->rbuf_dma = 0;
		return -EIO;
	}
	c->recv_cqe.done = inv_recv_done;
	c->send_cqe.done = inv_send_done;
	for (i = 0; i < INV_RECVS; i++) {
		sge.addr = c->rbuf_dma + i * INV_RECV_LEN;
		sge.length = INV_RECV_LEN;
		sge.lkey = c->pd->local_dma_lkey;
		rwr.wr_cqe = &c->recv_cqe;
		rwr.sg_list = &sge;
		rwr.num_sge = 1;
		ret = ib_post_recv(c->id->qp, &rwr, &rbad);
		if (ret)
			return ret;
	}
	return 0;
}

static void inv_free_work(struct work_struct *w)
{
	struct inv_conn *c = container_of(w, struct inv_conn, free_work);
	bool mine;

	mutex_lock(&inv_lock);
	mine = inv_conn == c;
	if (mine)
		inv_conn = NULL;
	mutex_unlock(&inv_lock);
	/* Otherwise module exit took it. */
	if (!mine)
		return;
	inv_release(c);
	rdma_destroy_id(c->id);
	pr_info("inval: connection released\n");
	kfree(c);
}

static int inv_connect(struct rdma_cm_id *id)
{
	struct rdma_conn_param cp = {
		.responder_resources = 4,
		.initiator_depth = 1,
	};
	struct inv_conn *c;
	char pdata[64];
	int ret;

	mutex_lock(&inv_lock);
	if (inv_conn) {
		mutex_unlock(&inv_lock);
		pr_info("inval: a second connection refused\n");
		return -EBUSY;	/* the rdma_cm destroys @id */
	}
	c = kzalloc(sizeof(*c), GFP_KERNEL);
	if (!c) {
		mutex_unlock(&inv_lock);
		return -ENOMEM;
	}
	c->id = id;
	INIT_WORK(&c->free_work, inv_free_work);
	ret = inv_setup(c);
	if (ret) {
		pr_info("inval: setup failed (%d)\n", ret);
		goto fail;
	}
	snprintf(pdata, sizeof(pdata), "stag=0x%08x to=0x%llx len=%llu",
		 c->mr->rkey, c->mr->iova, c->mr->length);
	cp.private_data = pdata;
	cp.private_data_len = strlen(pdata);
	id->context = c;
	ret = rdma_accept(id, &cp);
	if (ret) {
		pr_info("inval: rdma_accept failed (%d)\n", ret);
		id->context = NULL;
		goto fail;
	}
	inv_conn = c;
	mutex_unlock(&inv_lock);
	pr_info("inval: accepted, %s\n", pdata);
	return 0;
fail:
	inv_release(c);
	kfree(c);
	mutex_unlock(&inv_lock);
	return ret;
}

/* The QP is in RTS: register the region, then tell the peer. */
static void inv_established(struct inv_conn *c)
{
	static const char ready[] = "ready";
	const struct ib_send_wr *bad;
	struct ib_reg_wr reg = {};
	struct ib_send_wr snd = {};
	struct ib_sge sge = {
		.addr = (uintptr_t)ready,
		.length = sizeof(ready) - 1,
	};
	int ret;

	reg.wr.opcode = IB_WR_REG_MR;
	reg.wr.wr_cqe = &c->send_cqe;
	reg.wr.send_flags = IB_SEND_SIGNALED;
	reg.wr.next = &snd;
	reg.mr = c->mr;
	reg.key = c->mr->rkey;
	reg.access = IB_ACCESS_REMOTE_READ | IB_ACCESS_LOCAL_WRITE;
	snd.opcode = IB_WR_SEND;
	snd.wr_cqe = &c->send_cqe;
	snd.send_flags = IB_SEND_SIGNALED | IB_SEND_INLINE;
	snd.sg_list = &sge;
	snd.num_sge = 1;
	ret = ib_post_send(c->id->qp, &reg.wr, &bad);
	pr_info("inval: established, REG_MR of stag 0x%08x and Send posted (%d)\n",
		c->mr->rkey, ret);
}

static int inv_cm_handler(struct rdma_cm_id *id, struct rdma_cm_event *ev)
{
	struct inv_conn *c = id->context;

	switch (ev->event) {
	case RDMA_CM_EVENT_CONNECT_REQUEST:
		return inv_connect(id);
	case RDMA_CM_EVENT_ESTABLISHED:
		if (c)
			inv_established(c);
		return 0;
	case RDMA_CM_EVENT_DISCONNECTED:
	case RDMA_CM_EVENT_CONNECT_ERROR:
	case RDMA_CM_EVENT_UNREACHABLE:
	case RDMA_CM_EVENT_REJECTED:
	case RDMA_CM_EVENT_DEVICE_REMOVAL:
		pr_info("inval: %s\n", rdma_event_msg(ev->event));
		if (c && !c->ending) {
			c->ending = true;
			queue_work(inv_wq, &c->free_work);
		}
		return 0;
	default:
		pr_info("inval: %s (%d)\n", rdma_event_msg(ev->event),
			ev->status);
		return 0;
	}
}

static int inv_start(void)
{
	struct sockaddr_in sin = {
		.sin_family = AF_INET,
		.sin_port = htons(inval_port),
	};
	struct rdma_cm_id *id;
	int ret;

	if (!inval_addr || inval_port <= 0 || inval_port > 65535 ||
	    !in4_pton(inval_addr, -1, (u8 *)&sin.sin_addr.s_addr, -1, NULL))
		return -EINVAL;
	inv_wq = alloc_workqueue("siw2_selftest", 0, 0);
	if (!inv_wq)
		return -ENOMEM;
	id = rdma_create_id(current->nsproxy->net_ns, inv_cm_handler, NULL,
			    RDMA_PS_TCP, IB_QPT_RC);
	if (IS_ERR(id)) {
		ret = PTR_ERR(id);
		goto out_wq;
	}
	ret = rdma_bind_addr(id, (struct sockaddr *)&sin);
	if (!ret)
		ret = rdma_listen(id, 1);
	if (ret) {
		rdma_destroy_id(id);
		goto out_wq;
	}
	inv_listen = id;
	pr_info("inval: listening on %pI4:%d\n", &sin.sin_addr, inval_port);
	return 0;
out_wq:
	destroy_workqueue(inv_wq);
	return ret;
}

static void inv_stop(void)
{
	struct inv_conn *c;

	if (!inv_listen)
		return;
	rdma_destroy_id(inv_listen);
	mutex_lock(&inv_lock);
	c = inv_conn;
	inv_conn = NULL;
	mutex_unlock(&inv_lock);
	if (c) {
		cancel_work_sync(&c->free_work);
		rdma_disconnect(c->id);
		inv_release(c);
		rdma_destroy_id(c->id);
		/* No event queues the work once the id is gone. */
		cancel_work_sync(&c->free_work);
		pr_info("inval: connection released at unload\n");
		kfree(c);
	}
	/* Waits for a release that took the connection before us. */
	destroy_workqueue(inv_wq);
}

static int __init selftest_init(void)
{
	struct ib_cq *cq1, *cq2;
	struct env *e;

	if (inval_port)
		return inv_start();
	e = kzalloc(sizeof(*e), GFP_KERNEL);
	if (!e)
		return -ENOMEM;
	e->dev = ib_device_get_by_name(dev, RDMA_DRIVER_UNKNOWN);
	if (!e->dev) {
		pr_info("FAIL - no device %s\n", dev);
		failed++;
		goto out;
	}
	e->pd = ib_alloc_pd(e->dev, 0);
	CHECK(!IS_ERR(e->pd), "pd: alloc on %s", dev);
	if (IS_ERR(e->pd))
		goto out_dev;
	cq1 = ib_alloc_cq(e->dev, NULL, NWC, 0, IB_POLL_DIRECT);
	cq2 = ib_alloc_cq(e->dev, NULL, NWC, 0, IB_POLL_DIRECT);
	if (IS_ERR(cq1) || IS_ERR(cq2)) {
		CHECK(0, "cq: two directly polled CQs");
		goto out_cq;
	}

	test_pd(e);
	test_cq_create(e);
	test_qp_create(e, cq1);
	test_qp_states(e, cq1);
	test_post_flush(e, cq1, cq2);
	test_drain(e);
	test_notify(e);
	test_srq(e);
	test_srq_drain(e);
	test_mr(e, cq1);

out_cq:
	if (!IS_ERR(cq2))
		ib_free_cq(cq2);
	if (!IS_ERR(cq1))
		ib_free_cq(cq1);
	ib_dealloc_pd(e->pd);
out_dev:
	ib_device_put(e->dev);
out:
	kfree(e);
	pr_info("%d passed, %d failed\n", passed, failed);
	return 0;
}

static void __exit selftest_exit(void)
{
	inv_stop();
}

module_init(selftest_init);
module_exit(selftest_exit);

MODULE_DESCRIPTION("Kernel verbs selftest for siw2 devices");
MODULE_LICENSE("GPL");
