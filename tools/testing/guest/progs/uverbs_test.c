// SPDX-License-Identifier: GPL-2.0
/*
 * Userspace verbs on a real siw2 device, through libsiw2: CQ, QP, SRQ and
 * MR lifecycles and the shared-ring data path up to flushed completions.
 * No peer is needed: everything here is local to one device.
 *
 *   uverbs_test DEV checks    run the checks, one line per check:
 *                             "PASS name", "FAIL name: why", "SKIP name: why"
 *   uverbs_test DEV nosys     set up a CQ, an extended CQ, a QP and an SRQ,
 *                             then poll (ibv_poll_cq, ibv_start_poll), arm and
 *                             post receives between two marker writes to
 *                             stdout; under strace, nothing may happen
 *                             between the markers (suites/uverbs.sh)
 *
 *   uverbs_test DEV gone      set up the same, post a receive, write
 *                             SIW2-GONE-READY and poll; once the device is
 *                             removed (the suite deletes the link), polls
 *                             and posts must fail with EIO: check lines as
 *                             for `checks`, 60 s at most
 *
 * Exit status: 0 when every check passed, 1 otherwise, 2 on bad usage or
 * when the device cannot be opened.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <infiniband/verbs.h>

#define NOSYS_BEGIN "SIW2-NOSYS-BEGIN\n"
#define NOSYS_END "SIW2-NOSYS-END\n"
#define GONE_READY "SIW2-GONE-READY\n"

static int failures;

static void result(bool ok, const char *name, const char *fmt, ...)
{
	va_list ap;

	if (ok) {
		printf("PASS %s\n", name);
	} else {
		failures++;
		printf("FAIL %s: ", name);
		va_start(ap, fmt);
		vprintf(fmt, ap);
		va_end(ap);
		putchar('\n');
	}
	fflush(stdout);
}

#define CHECK(cond, name, ...) result((cond), (name), __VA_ARGS__)

struct res {
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_mr *mr;
	char *buf;
	size_t len;
};

static const char *state_str(int s)
{
	static const char *const names[] = { "RESET", "INIT", "RTR", "RTS",
					     "SQD", "SQE", "ERR" };

	return s >= 0 && s <= IBV_QPS_ERR ? names[s] : "?";
}

/* Polls until @want completions arrived or a second passed. */
static int poll_n(struct ibv_cq *cq, struct ibv_wc *wc, int want)
{
	int n = 0, tries = 1000, r;

	while (n < want && tries--) {
		r = ibv_poll_cq(cq, want - n, wc + n);
		if (r < 0)
			return r;
		n += r;
		if (n < want)
			usleep(1000);
	}
	return n;
}

/* @n completions with the wr_ids in @ids, all with @status. */
static void expect_wcs(struct ibv_cq *cq, const uint64_t *ids, int n,
		       enum ibv_wc_status status, const char *name)
{
	struct ibv_wc wc[64], extra;
	int got, i;

	got = poll_n(cq, wc, n);
	if (got != n) {
		CHECK(false, name, "%d completions, want %d", got, n);
		return;
	}
	for (i = 0; i < n; i++) {
		if (wc[i].wr_id != ids[i] || wc[i].status != status) {
			CHECK(false, name,
			      "completion %d: wr_id %llu status %s, want wr_id %llu status %s",
			      i, (unsigned long long)wc[i].wr_id,
			      ibv_wc_status_str(wc[i].status),
			      (unsigned long long)ids[i],
			      ibv_wc_status_str(status));
			return;
		}
	}
	usleep(10000);
	got = ibv_poll_cq(cq, 1, &extra);
	CHECK(got == 0, name, "an extra completion (wr_id %llu)",
	      got > 0 ? (unsigned long long)extra.wr_id : 0ULL);
}

static int modify_state(struct ibv_qp *qp, enum ibv_qp_state state)
{
	struct ibv_qp_attr attr = { .qp_state = state };
	int mask = IBV_QP_STATE;

	if (state == IBV_QPS_INIT) {
		attr.qp_access_flags = IBV_ACCESS_LOCAL_WRITE |
				       IBV_ACCESS_REMOTE_WRITE |
				       IBV_ACCESS_REMOTE_READ;
		mask |= IBV_QP_ACCESS_FLAGS;
	}
	return ibv_modify_qp(qp, &attr, mask);
}

static void check_state(struct ibv_qp *qp, enum ibv_qp_state want,
			const char *name)
{
	struct ibv_qp_init_attr init;
	struct ibv_qp_attr attr;
	int err;

	memset(&attr, 0xff, sizeof(attr));
	err = ibv_query_qp(qp, &attr, IBV_QP_STATE, &init);
	CHECK(!err && attr.qp_state == want, name, "query_qp: %s, state %s",
	      strerror(err), state_str(attr.qp_state));
}

static void test_cq(struct res *r)
{
	struct ibv_comp_channel *ch;
	struct ibv_wc wc[4];
	struct ibv_cq *cq;
	int err;

	cq = ibv_create_cq(r->ctx, 16, NULL, NULL, 0);
	CHECK(cq && cq->cqe >= 16, "cq: create with 16 entries", "%s, cqe %d",
	      strerror(errno), cq ? cq->cqe : 0);
	if (!cq)
		return;
	CHECK(ibv_poll_cq(cq, 4, wc) == 0, "cq: poll of an empty CQ", "not 0");
	err = ibv_req_notify_cq(cq, 0);
	CHECK(!err, "cq: arm for the next completion", "%s", strerror(err));
	err = ibv_req_notify_cq(cq, 1);
	CHECK(!err, "cq: arm for solicited completions", "%s", strerror(err));
	err = ibv_resize_cq(cq, 200);
	CHECK(!err && cq->cqe >= 200, "cq: grow to 200 entries", "%s, cqe %d",
	      strerror(err), cq->cqe);
	CHECK(ibv_poll_cq(cq, 4, wc) == 0, "cq: poll after grow", "not 0");
	err = ibv_resize_cq(cq, 4);
	CHECK(!err && cq->cqe >= 4, "cq: shrink an empty CQ to 4", "%s, cqe %d",
	      strerror(err), cq->cqe);
	err = ibv_destroy_cq(cq);
	CHECK(!err, "cq: destroy", "%s", strerror(err));

	errno = 0;
	cq = ibv_create_cq(r->ctx, 0x7fffffff, NULL, NULL, 0);
	CHECK(!cq && errno, "cq: an impossible size is refused", "created");
	if (cq)
		ibv_destroy_cq(cq);

	ch = ibv_create_comp_channel(r->ctx);
	cq = ch ? ibv_create_cq(r->ctx, 8, NULL, ch, 0) : NULL;
	CHECK(cq, "cq: create with a completion channel", "%s",
	      strerror(errno));
	if (cq) {
		err = ibv_req_notify_cq(cq, 0);
		CHECK(!err, "cq: arm with a channel", "%s", strerror(err));
		err = ibv_destroy_cq(cq);
		CHECK(!err, "cq: destroy with a channel", "%s", strerror(err));
	}
	if (ch)
		ibv_destroy_comp_channel(ch);
}

static void test_qp(struct res *r)
{
	struct ibv_sge sges[8], sge = { .addr = (uintptr_t)r->buf,
					.length = 64, .lkey = r->mr->lkey };
	struct ibv_qp_init_attr init = {
		.cap = { .max_send_wr = 16, .max_recv_wr = 16,
			 .max_send_sge = 2, .max_recv_sge = 2,
			 .max_inline_data = 64 },
		.qp_type = IBV_QPT_RC,
	};
	struct ibv_send_wr swr[2], *sbad;
	struct ibv_recv_wr rwr[8], *rbad;
	struct ibv_qp_init_attr qinit;
	struct ibv_qp_attr attr;
	struct ibv_cq *scq, *rcq;
	struct ibv_wc wc[4];
	struct ibv_qp *qp;
	uint64_t ids[8];
	int err, i;

	scq = ibv_create_cq(r->ctx, 32, NULL, NULL, 0);
	rcq = ibv_create_cq(r->ctx, 32, NULL, NULL, 0);
	if (!scq || !rcq) {
		CHECK(false, "qp: CQs for the QP", "%s", strerror(errno));
		return;
	}
	init.send_cq = scq;
	init.recv_cq = rcq;

	init.qp_type = IBV_QPT_UD;
	errno = 0;
	qp = ibv_create_qp(r->pd, &init);
	CHECK(!qp && errno == EOPNOTSUPP, "qp: a UD QP is refused (EOPNOTSUPP)",
	      "%s", qp ? "created" : strerror(errno));
	if (qp)
		ibv_destroy_qp(qp);
	init.qp_type = IBV_QPT_RC;

	qp = ibv_create_qp(r->pd, &init);
	CHECK(qp, "qp: create RC", "%s", strerror(errno));
	if (!qp)
		goto out_cq;
	CHECK(init.cap.max_send_wr >= 16 && init.cap.max_recv_wr >= 16 &&
	      init.cap.max_send_sge >= 2 && init.cap.max_recv_sge >= 2 &&
	      init.cap.max_inline_data >= 64,
	      "qp: caps granted at least as asked",
	      "send_wr %u recv_wr %u send_sge %u recv_sge %u inline %u",
	      init.cap.max_send_wr, init.cap.max_recv_wr,
	      init.cap.max_send_sge, init.cap.max_recv_sge,
	      init.cap.max_inline_data);
	CHECK(qp->qp_num > 1, "qp: a QP number above 1", "qpn %u", qp->qp_num);

	/* iWARP QPs start idle, which the IB verbs call INIT. */
	err = ibv_query_qp(qp, &attr, IBV_QP_STATE | IBV_QP_CAP, &qinit);
	CHECK(!err && attr.qp_state == IBV_QPS_INIT &&
	      qinit.cap.max_send_wr == init.cap.max_send_wr &&
	      qinit.cap.max_recv_wr == init.cap.max_recv_wr &&
	      qinit.cap.max_inline_data == init.cap.max_inline_data &&
	      qinit.send_cq == scq && qinit.recv_cq == rcq,
	      "qp: query after create (INIT, caps, CQs)",
	      "%s: state %s send_wr %u recv_wr %u inline %u", strerror(err),
	      state_str(attr.qp_state), qinit.cap.max_send_wr,
	      qinit.cap.max_recv_wr, qinit.cap.max_inline_data);

	err = modify_state(qp, IBV_QPS_INIT);
	CHECK(!err, "qp: INIT -> INIT (access flags)", "%s", strerror(err));
	check_state(qp, IBV_QPS_INIT, "qp: query in INIT");
	err = modify_state(qp, IBV_QPS_RTS);
	CHECK(err == EINVAL, "qp: INIT -> RTS is refused (EINVAL)", "%s",
	      strerror(err));
	err = modify_state(qp, IBV_QPS_RTR);
	CHECK(!err, "qp: INIT -> RTR", "%s", strerror(err));
	check_state(qp, IBV_QPS_RTR, "qp: query in RTR");

	/* Provider-side refusals: nothing reaches the ring. */
	for (i = 0; i < 8; i++)
		sges[i] = sge;
	swr[0] = (struct ibv_send_wr){ .wr_id = 1, .sg_list = sges,
				       .num_sge = init.cap.max_send_sge + 1,
				       .opcode = IBV_WR_SEND };
	err = ibv_post_send(qp, swr, &sbad);
	CHECK(err == EINVAL && sbad == swr, "qp: more SGEs than the cap",
	      "%s", strerror(err));
	sge.length = init.cap.max_inline_data + 1;
	swr[0].sg_list = &sge;
	swr[0].num_sge = 1;
	swr[0].send_flags = IBV_SEND_INLINE;
	err = ibv_post_send(qp, swr, &sbad);
	CHECK(err == EINVAL && sbad == swr, "qp: inline beyond the cap",
	      "%s", strerror(err));
	sge.length = 64;

	/* Receives in RTR: consumed by nothing yet. */
	for (i = 0; i < 4; i++)
		rwr[i] = (struct ibv_recv_wr){ .wr_id = 100 + i,
					       .next = i < 3 ? &rwr[i + 1] : NULL,
					       .sg_list = &sge, .num_sge = 1 };
	err = ibv_post_recv(qp, rwr, &rbad);
	CHECK(!err, "qp: post 4 receives in RTR", "%s", strerror(err));
	CHECK(ibv_poll_cq(rcq, 4, wc) == 0, "qp: receives wait in RTR",
	      "completed");

	/* Error: what was posted flushes, in order. */
	err = modify_state(qp, IBV_QPS_ERR);
	CHECK(!err, "qp: RTR -> ERR", "%s", strerror(err));
	check_state(qp, IBV_QPS_ERR, "qp: query in ERR");
	for (i = 0; i < 4; i++)
		ids[i] = 100 + i;
	expect_wcs(rcq, ids, 4, IBV_WC_WR_FLUSH_ERR,
		   "qp: receives posted before ERR flush, in order");

	/* Posted in error: they flush too (the doorbells). */
	swr[0] = (struct ibv_send_wr){ .wr_id = 200, .sg_list = &sge,
				       .num_sge = 1, .opcode = IBV_WR_SEND,
				       .next = &swr[1] };
	swr[1] = (struct ibv_send_wr){ .wr_id = 201, .sg_list = &sge,
				       .num_sge = 1,
				       .opcode = IBV_WR_RDMA_WRITE,
				       .send_flags = IBV_SEND_INLINE,
				       .wr.rdma = { .remote_addr = 0x10000,
						    .rkey = 0x1234 } };
	err = ibv_post_send(qp, swr, &sbad);
	CHECK(!err, "qp: post 2 sends in ERR", "%s", strerror(err));
	ids[0] = 200;
	ids[1] = 201;
	expect_wcs(scq, ids, 2, IBV_WC_WR_FLUSH_ERR,
		   "qp: sends posted in ERR flush, unsignaled too");
	rwr[0].wr_id = 300;
	rwr[1].wr_id = 301;
	rwr[1].next = NULL;
	err = ibv_post_recv(qp, rwr, &rbad);
	CHECK(!err, "qp: post 2 receives in ERR", "%s", strerror(err));
	ids[0] = 300;
	ids[1] = 301;
	expect_wcs(rcq, ids, 2, IBV_WC_WR_FLUSH_ERR,
		   "qp: receives posted in ERR flush");

	err = modify_state(qp, IBV_QPS_RESET);
	CHECK(!err, "qp: ERR -> RESET", "%s", strerror(err));
	check_state(qp, IBV_QPS_RESET, "qp: query in RESET");
	CHECK(ibv_poll_cq(scq, 4, wc) == 0 && ibv_poll_cq(rcq, 4, wc) == 0,
	      "qp: nothing completes after RESET", "completions");
	err = modify_state(qp, IBV_QPS_INIT);
	CHECK(!err, "qp: RESET -> INIT", "%s", strerror(err));
	check_state(qp, IBV_QPS_INIT, "qp: query in INIT again");
	rwr[0].wr_id = 302;
	rwr[0].next = NULL;
	err = ibv_post_recv(qp, rwr, &rbad);
	CHECK(!err && ibv_poll_cq(rcq, 4, wc) == 0,
	      "qp: a receive after RESET -> INIT waits", "%s",
	      strerror(err));

	err = ibv_destroy_cq(scq);
	CHECK(err == EBUSY, "qp: a CQ in use is not destroyed (EBUSY)", "%s",
	      strerror(err));
	if (!err)
		scq = NULL;
	err = ibv_destroy_qp(qp);
	CHECK(!err, "qp: destroy", "%s", strerror(err));
out_cq:
	if (scq)
		ibv_destroy_cq(scq);
	ibv_destroy_cq(rcq);
}

/* Unconsumed completions survive a resize, in order. */
static void test_cq_resize_pending(struct res *r)
{
	struct ibv_sge sge = { .addr = (uintptr_t)r->buf, .length = 8,
			       .lkey = r->mr->lkey };
	struct ibv_qp_init_attr init = {
		.cap = { .max_send_wr = 4, .max_recv_wr = 8,
			 .max_send_sge = 1, .max_recv_sge = 1 },
		.qp_type = IBV_QPT_RC,
	};
	struct ibv_recv_wr rwr[8], *bad;
	struct ibv_wc wc[8];
	struct ibv_cq *cq;
	struct ibv_qp *qp;
	uint64_t ids[8];
	int err, i, n;

	cq = ibv_create_cq(r->ctx, 8, NULL, NULL, 0);
	init.send_cq = init.recv_cq = cq;
	qp = cq ? ibv_create_qp(r->pd, &init) : NULL;
	if (!qp) {
		CHECK(false, "cq resize: QP for completions", "%s",
		      strerror(errno));
		goto out;
	}
	for (i = 0; i < 8; i++)
		rwr[i] = (struct ibv_recv_wr){ .wr_id = 400 + i,
					       .next = i < 7 ? &rwr[i + 1] : NULL,
					       .sg_list = &sge, .num_sge = 1 };
	if (modify_state(qp, IBV_QPS_INIT) || ibv_post_recv(qp, rwr, &bad) ||
	    modify_state(qp, IBV_QPS_ERR)) {
		CHECK(false, "cq resize: 8 flushed receives", "setup failed");
		goto out;
	}
	n = poll_n(cq, wc, 3);
	CHECK(n == 3 && wc[0].wr_id == 400 && wc[2].wr_id == 402,
	      "cq resize: 3 of 8 completions polled", "%d", n);
	err = ibv_resize_cq(cq, 64);
	CHECK(!err && cq->cqe >= 64, "cq resize: grow with 5 pending",
	      "%s", strerror(err));
	for (i = 0; i < 5; i++)
		ids[i] = 403 + i;
	expect_wcs(cq, ids, 5, IBV_WC_WR_FLUSH_ERR,
		   "cq resize: pending completions kept, in order");
out:
	if (qp)
		ibv_destroy_qp(qp);
	if (cq)
		ibv_destroy_cq(cq);
}

/* A full RQ refuses with ENOMEM and names the first request left out. */
static void test_rq_full(struct res *r)
{
	struct ibv_sge sge = { .addr = (uintptr_t)r->buf, .length = 8,
			       .lkey = r->mr->lkey };
	struct ibv_qp_init_attr init = {
		.cap = { .max_send_wr = 4, .max_recv_wr = 5,
			 .max_send_sge = 1, .max_recv_sge = 1 },
		.qp_type = IBV_QPT_RC,
	};
	struct ibv_recv_wr wr = { .sg_list = &sge, .num_sge = 1 }, *bad;
	struct ibv_cq *cq;
	struct ibv_qp *qp;
	uint32_t posted = 0;
	int err = 0;

	cq = ibv_create_cq(r->ctx, 64, NULL, NULL, 0);
	init.send_cq = init.recv_cq = cq;
	qp = cq ? ibv_create_qp(r->pd, &init) : NULL;
	if (!qp || modify_state(qp, IBV_QPS_INIT)) {
		CHECK(false, "qp: RQ full", "setup: %s", strerror(errno));
		goto out;
	}
	while (posted < 1024) {
		wr.wr_id = posted;
		err = ibv_post_recv(qp, &wr, &bad);
		if (err)
			break;
		posted++;
	}
	CHECK(err == ENOMEM && bad == &wr && posted >= init.cap.max_recv_wr &&
	      posted < 1024, "qp: a full RQ refuses with ENOMEM",
	      "%s after %u receives (cap %u)", strerror(err), posted,
	      init.cap.max_recv_wr);
out:
	if (qp)
		ibv_destroy_qp(qp);
	if (cq)
		ibv_destroy_cq(cq);
}

static void test_srq(struct res *r)
{
	struct ibv_sge sge = { .addr = (uintptr_t)r->buf, .length = 64,
			       .lkey = r->mr->lkey };
	struct ibv_srq_init_attr init = {
		.attr = { .max_wr = 32, .max_sge = 2 },
	};
	struct ibv_qp_init_attr qinit = {
		.cap = { .max_send_wr = 4, .max_send_sge = 1 },
		.qp_type = IBV_QPT_RC,
	};
	struct ibv_recv_wr wr[4], *bad;
	struct ibv_srq_attr attr;
	struct ibv_cq *cq = NULL;
	struct ibv_qp *qp = NULL;
	struct ibv_srq *srq;
	int err, i;

	srq = ibv_create_srq(r->pd, &init);
	CHECK(srq && init.attr.max_wr >= 32 && init.attr.max_sge >= 2,
	      "srq: create", "%s, max_wr %u max_sge %u", strerror(errno),
	      init.attr.max_wr, init.attr.max_sge);
	if (!srq)
		return;
	for (i = 0; i < 4; i++)
		wr[i] = (struct ibv_recv_wr){ .wr_id = 500 + i,
					      .next = i < 3 ? &wr[i + 1] : NULL,
					      .sg_list = &sge, .num_sge = 1 };
	err = ibv_post_srq_recv(srq, wr, &bad);
	CHECK(!err, "srq: post 4 receives", "%s", strerror(err));
	wr[0].num_sge = init.attr.max_sge + 1;
	wr[0].next = NULL;
	err = ibv_post_srq_recv(srq, wr, &bad);
	CHECK(err == EINVAL && bad == wr, "srq: more SGEs than max_sge",
	      "%s", strerror(err));

	attr.srq_limit = 2;
	err = ibv_modify_srq(srq, &attr, IBV_SRQ_LIMIT);
	CHECK(!err, "srq: arm a limit of 2", "%s", strerror(err));
	memset(&attr, 0, sizeof(attr));
	err = ibv_query_srq(srq, &attr);
	CHECK(!err && attr.srq_limit == 2 && attr.max_wr >= 32 &&
	      attr.max_sge >= 2, "srq: query shows the limit",
	      "%s: limit %u max_wr %u max_sge %u", strerror(err),
	      attr.srq_limit, attr.max_wr, attr.max_sge);
	attr.max_wr = 64;
	err = ibv_modify_srq(srq, &attr, IBV_SRQ_MAX_WR);
	CHECK(err == EOPNOTSUPP, "srq: resize is refused (EOPNOTSUPP)", "%s",
	      strerror(err));

	cq = ibv_create_cq(r->ctx, 8, NULL, NULL, 0);
	qinit.send_cq = qinit.recv_cq = cq;
	qinit.srq = srq;
	qp = cq ? ibv_create_qp(r->pd, &qinit) : NULL;
	CHECK(qp, "srq: a QP on the SRQ", "%s", strerror(errno));
	if (qp) {
		wr[0].num_sge = 1;
		err = ibv_post_recv(qp, wr, &bad);
		CHECK(err == EINVAL, "srq: no post_recv on a QP with an SRQ",
		      "%s", strerror(err));
		err = ibv_destroy_srq(srq);
		CHECK(err == EBUSY, "srq: in use is not destroyed (EBUSY)",
		      "%s", strerror(err));
		if (!err)
			srq = NULL;
		ibv_destroy_qp(qp);
	}
	if (cq)
		ibv_destroy_cq(cq);
	if (srq) {
		err = ibv_destroy_srq(srq);
		CHECK(!err, "srq: destroy", "%s", strerror(err));
	}
}

static void test_mr(struct res *r)
{
	struct ibv_mr *mr;
	int err;

	mr = ibv_reg_mr(r->pd, r->buf, r->len, IBV_ACCESS_LOCAL_WRITE |
			IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ);
	CHECK(mr && mr->addr == r->buf && mr->length == r->len &&
	      mr->lkey != r->mr->lkey && mr->rkey != r->mr->rkey,
	      "mr: register with remote access", "%s", strerror(errno));
	if (mr) {
		err = ibv_dereg_mr(mr);
		CHECK(!err, "mr: deregister", "%s", strerror(err));
	}
	errno = 0;
	mr = ibv_reg_mr(r->pd, r->buf, r->len, IBV_ACCESS_REMOTE_WRITE);
	CHECK(!mr && errno == EINVAL,
	      "mr: remote write without local write is refused", "%s",
	      mr ? "registered" : strerror(errno));
	if (mr)
		ibv_dereg_mr(mr);
	errno = 0;
	mr = ibv_reg_mr(r->pd, NULL, 4096, IBV_ACCESS_LOCAL_WRITE);
	CHECK(!mr && errno, "mr: unmapped memory is refused", "%s",
	      mr ? "registered" : "no errno");
	if (mr)
		ibv_dereg_mr(mr);
}

/* A CQ, an extended CQ, an RC QP on the CQ (in INIT) and an SRQ. */
struct objs {
	struct ibv_cq_ex *cqx;
	struct ibv_cq *cq;
	struct ibv_qp *qp;
	struct ibv_srq *srq;
};

static int make_objs(struct res *r, struct objs *o)
{
	struct ibv_qp_init_attr init = {
		.cap = { .max_send_wr = 8, .max_recv_wr = 8,
			 .max_send_sge = 1, .max_recv_sge = 1 },
		.qp_type = IBV_QPT_RC,
	};
	struct ibv_srq_init_attr sinit = { .attr = { .max_wr = 8,
						     .max_sge = 1 } };
	struct ibv_cq_init_attr_ex xattr = {
		.cqe = 16, .wc_flags = IBV_WC_STANDARD_FLAGS,
	};

	o->cqx = ibv_create_cq_ex(r->ctx, &xattr);
	o->cq = ibv_create_cq(r->ctx, 16, NULL, NULL, 0);
	init.send_cq = init.recv_cq = o->cq;
	o->qp = o->cq ? ibv_create_qp(r->pd, &init) : NULL;
	o->srq = ibv_create_srq(r->pd, &sinit);
	if (!o->cqx || !o->qp || !o->srq || modify_state(o->qp, IBV_QPS_INIT))
		return -1;
	return 0;
}

/* 0 when all four are destroyed. */
static int destroy_objs(struct objs *o)
{
	return ibv_destroy_qp(o->qp) | ibv_destroy_srq(o->srq) |
	       ibv_destroy_cq(o->cq) | ibv_destroy_cq(ibv_cq_ex_to_cq(o->cqx));
}

/*
 * Everything a data path does all the time: nothing here may enter the
 * kernel. The markers are write(2)s, so that strace shows the window.
 */
static int nosys(struct res *r)
{
	struct ibv_sge sge = { .addr = (uintptr_t)r->buf, .length = 64,
			       .lkey = r->mr->lkey };
	struct ibv_recv_wr wr = { .sg_list = &sge, .num_sge = 1 }, *bad;
	struct ibv_poll_cq_attr pattr = {};
	struct ibv_wc wc[4];
	struct objs o;
	int i, bad_calls = 0;

	if (make_objs(r, &o) || modify_state(o.qp, IBV_QPS_RTR)) {
		fprintf(stderr, "nosys: setup failed: %s\n", strerror(errno));
		return 1;
	}

	if (write(1, NOSYS_BEGIN, strlen(NOSYS_BEGIN)) < 0)
		return 1;
	for (i = 0; i < 4; i++) {
		bad_calls += ibv_poll_cq(o.cq, 4, wc) != 0;
		bad_calls += ibv_start_poll(o.cqx, &pattr) != ENOENT;
		bad_calls += ibv_req_notify_cq(o.cq, i & 1) != 0;
		wr.wr_id = i;
		bad_calls += ibv_post_recv(o.qp, &wr, &bad) != 0;
		bad_calls += ibv_post_srq_recv(o.srq, &wr, &bad) != 0;
	}
	if (write(1, NOSYS_END, strlen(NOSYS_END)) < 0)
		return 1;

	destroy_objs(&o);
	if (bad_calls)
		fprintf(stderr, "nosys: %d verbs failed\n", bad_calls);
	return !!bad_calls;
}

/*
 * A process that never reads its async events and polls on while its
 * device is removed: the core disassociates it and it keeps its ring
 * mappings, which siw2 marks gone. It learns of the end from its next
 * poll or post (siw2-abi.h, "Gone") instead of polling for ever.
 */
static int gone(struct res *r)
{
	struct ibv_sge sge = { .addr = (uintptr_t)r->buf, .length = 64,
			       .lkey = r->mr->lkey };
	struct ibv_recv_wr wr = { .sg_list = &sge, .num_sge = 1 }, *bad;
	struct ibv_send_wr swr = { .sg_list = &sge, .num_sge = 1,
				   .opcode = IBV_WR_SEND }, *sbad;
	struct ibv_poll_cq_attr pattr = {};
	struct ibv_wc wc;
	struct objs o;
	int i, n = 0, err;

	if (make_objs(r, &o) || ibv_post_recv(o.qp, &wr, &bad)) {
		fprintf(stderr, "gone: setup failed: %s\n", strerror(errno));
		return 1;
	}
	if (write(1, GONE_READY, strlen(GONE_READY)) < 0)
		return 1;

	for (i = 0; i < 60000 && n >= 0; i++) {
		n = ibv_poll_cq(o.cq, 1, &wc);
		usleep(1000);
	}
	err = errno;
	CHECK(n < 0 && err == EIO, "gone: ibv_poll_cq fails with EIO",
	      "returned %d (%s)", n, n < 0 ? strerror(err) : "after 60 s");
	err = ibv_start_poll(o.cqx, &pattr);
	CHECK(err == EIO, "gone: ibv_start_poll fails with EIO", "returned %d",
	      err);
	err = ibv_post_recv(o.qp, &wr, &bad);
	CHECK(err == EIO && bad == &wr, "gone: ibv_post_recv fails with EIO",
	      "returned %d", err);
	err = ibv_post_send(o.qp, &swr, &sbad);
	CHECK(err == EIO && sbad == &swr, "gone: ibv_post_send fails with EIO",
	      "returned %d", err);
	err = ibv_post_srq_recv(o.srq, &wr, &bad);
	CHECK(err == EIO && bad == &wr,
	      "gone: ibv_post_srq_recv fails with EIO", "returned %d", err);
	/* The core destroyed them: the library takes EIO as done. */
	CHECK(!destroy_objs(&o), "gone: the objects are destroyed", "%s",
	      strerror(errno));
	return failures ? 1 : 0;
}

static int open_dev(const char *name, struct res *r)
{
	struct ibv_device **list;
	int i, n;

	list = ibv_get_device_list(&n);
	if (!list)
		return -1;
	for (i = 0; i < n; i++)
		if (!strcmp(ibv_get_device_name(list[i]), name))
			r->ctx = ibv_open_device(list[i]);
	ibv_free_device_list(list);
	if (!r->ctx)
		return -1;
	r->pd = ibv_alloc_pd(r->ctx);
	r->len = 1 << 16;
	r->buf = aligned_alloc(4096, r->len);
	if (!r->pd || !r->buf)
		return -1;
	memset(r->buf, 0x5a, r->len);
	r->mr = ibv_reg_mr(r->pd, r->buf, r->len, IBV_ACCESS_LOCAL_WRITE);
	return r->mr ? 0 : -1;
}

int main(int argc, char **argv)
{
	struct res r = {};
	int ret;

	if (argc != 3 || (strcmp(argv[2], "checks") &&
			  strcmp(argv[2], "nosys") && strcmp(argv[2], "gone"))) {
		fprintf(stderr, "usage: %s DEV checks|nosys|gone\n", argv[0]);
		return 2;
	}
	if (open_dev(argv[1], &r)) {
		fprintf(stderr, "%s: cannot open %s with a PD and an MR: %s\n",
			argv[0], argv[1], strerror(errno));
		return 2;
	}

	if (!strcmp(argv[2], "nosys")) {
		ret = nosys(&r);
	} else if (!strcmp(argv[2], "gone")) {
		ret = gone(&r);
	} else {
		test_cq(&r);
		test_qp(&r);
		test_cq_resize_pending(&r);
		test_rq_full(&r);
		test_srq(&r);
		test_mr(&r);
		ret = failures ? 1 : 0;
	}

	ibv_dereg_mr(r.mr);
	ibv_dealloc_pd(r.pd);
	ibv_close_device(r.ctx);
	free(r.buf);
	return ret;
}
