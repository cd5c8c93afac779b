// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Drives libsiw2 through the public verbs API against fake_uverbs.so.
 *
 *   smoke DEV ok      open DEV, query device and port, PD round trip,
 *                     an unimplemented verb fails with EOPNOTSUPP
 *   smoke DEV eproto  opening DEV fails with EPROTO (ABI mismatch)
 *   smoke DEV verbs   CQ, QP, SRQ and MR verbs (ODP registration and
 *                     ibv_advise_mr too) and the shared-ring data
 *                     path against the shim's fake kernel (see
 *                     fake_uverbs.c), which the test inspects through
 *                     the shim's fake_uverbs_*() functions; the extended
 *                     API too: ibv_create_cq_ex with start/next/end_poll
 *                     and the read accessors, ibv_create_qp_ex with every
 *                     ibv_wr_*() builder and setter siw2 offers
 */
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <endian.h>
#include <infiniband/verbs.h>
#include <rdma/siw2-abi.h>

#define FAIL(...)							\
	do {								\
		fprintf(stderr, "smoke: FAIL: " __VA_ARGS__);		\
		fputc('\n', stderr);					\
		return 1;						\
	} while (0)

static int run_ok(struct ibv_context *ctx)
{
	struct ibv_device_attr_ex dattr;
	struct ibv_port_attr pattr;
	struct ibv_pd *pd;
	struct ibv_dm *dm;
	int err;

	err = ibv_query_device_ex(ctx, NULL, &dattr);
	if (err)
		FAIL("ibv_query_device_ex: %s", strerror(err));
	if (strcmp(dattr.orig_attr.fw_ver, "1.2.3") ||
	    dattr.orig_attr.phys_port_cnt != 1 ||
	    dattr.orig_attr.max_qp != 1024)
		FAIL("device attrs: fw_ver '%s' ports %u max_qp %d",
		     dattr.orig_attr.fw_ver, dattr.orig_attr.phys_port_cnt,
		     dattr.orig_attr.max_qp);
	/* Handed through from the kernel's extended QUERY_DEVICE as is. */
	if (dattr.odp_caps.general_caps != IBV_ODP_SUPPORT ||
	    dattr.odp_caps.per_transport_caps.rc_odp_caps !=
		    (IBV_ODP_SUPPORT_SEND | IBV_ODP_SUPPORT_RECV |
		     IBV_ODP_SUPPORT_WRITE | IBV_ODP_SUPPORT_READ |
		     IBV_ODP_SUPPORT_ATOMIC) ||
	    dattr.odp_caps.per_transport_caps.uc_odp_caps ||
	    dattr.odp_caps.per_transport_caps.ud_odp_caps)
		FAIL("odp_caps: general %#llx rc %#x",
		     (unsigned long long)dattr.odp_caps.general_caps,
		     dattr.odp_caps.per_transport_caps.rc_odp_caps);

	err = ibv_query_port(ctx, 1, &pattr);
	if (err)
		FAIL("ibv_query_port: %s", strerror(err));
	if (pattr.state != IBV_PORT_ACTIVE ||
	    pattr.link_layer != IBV_LINK_LAYER_ETHERNET)
		FAIL("port attrs: state %d link_layer %d", pattr.state,
		     pattr.link_layer);

	pd = ibv_alloc_pd(ctx);
	if (!pd)
		FAIL("ibv_alloc_pd: %s", strerror(errno));
	if (pd->handle != 7 || pd->context != ctx)
		FAIL("pd: handle %u", pd->handle);
	err = ibv_dealloc_pd(pd);
	if (err)
		FAIL("ibv_dealloc_pd: %s", strerror(err));

	errno = 0;
	dm = ibv_alloc_dm(ctx, &(struct ibv_alloc_dm_attr){ .length = 64 });
	if (dm || errno != EOPNOTSUPP)
		FAIL("ibv_alloc_dm: want NULL/EOPNOTSUPP, got %p/%s",
		     (void *)dm, strerror(errno));
	return 0;
}

/* The shim's window into its fake kernel, found at run time. */
static struct {
	struct siw2_ring_ctl *(*qp_ring)(uint32_t qpn, int which);
	struct siw2_ring_ctl *(*cq_ring)(uint32_t handle);
	void (*cq_push)(uint32_t handle, const struct siw2_cqe *cqe);
	unsigned int (*doorbells)(int which);
	const struct siw2_sqe *(*last_sqe)(void);
	unsigned int (*objects)(void);
	struct siw2_ring_ctl *(*srq_ring)(uint32_t handle);
	const struct siw2_rqe *(*srq_rqe)(uint32_t handle, uint32_t idx);
	const struct siw2_sqe *(*qp_sqe)(uint32_t qpn, uint32_t idx);
	int (*mr_access)(uint32_t handle);
	unsigned int (*advise_calls)(void);
	const struct ibv_sge *(*last_advise)(uint32_t *advice, uint32_t *flags,
					     uint32_t *num_sge);
} fk;

static int find_shim(void)
{
	fk.qp_ring = dlsym(RTLD_DEFAULT, "fake_uverbs_qp_ring");
	fk.cq_ring = dlsym(RTLD_DEFAULT, "fake_uverbs_cq_ring");
	fk.cq_push = dlsym(RTLD_DEFAULT, "fake_uverbs_cq_push");
	fk.doorbells = dlsym(RTLD_DEFAULT, "fake_uverbs_doorbells");
	fk.last_sqe = dlsym(RTLD_DEFAULT, "fake_uverbs_last_sqe");
	fk.objects = dlsym(RTLD_DEFAULT, "fake_uverbs_objects");
	fk.srq_ring = dlsym(RTLD_DEFAULT, "fake_uverbs_srq_ring");
	fk.srq_rqe = dlsym(RTLD_DEFAULT, "fake_uverbs_srq_rqe");
	fk.qp_sqe = dlsym(RTLD_DEFAULT, "fake_uverbs_qp_sqe");
	fk.mr_access = dlsym(RTLD_DEFAULT, "fake_uverbs_mr_access");
	fk.advise_calls = dlsym(RTLD_DEFAULT, "fake_uverbs_advise_calls");
	fk.last_advise = dlsym(RTLD_DEFAULT, "fake_uverbs_last_advise");
	return fk.qp_ring && fk.cq_ring && fk.cq_push && fk.doorbells &&
	       fk.last_sqe && fk.objects && fk.srq_ring && fk.srq_rqe &&
	       fk.qp_sqe && fk.mr_access && fk.advise_calls &&
	       fk.last_advise ? 0 : -1;
}

/*
 * Threads: pollers of one CQ must each get distinct CQEs while the fake
 * kernel keeps producing; posters to one SRQ must get distinct slots.
 */
#define THREADS 4
#define PER_THREAD 1000
#define CQ_TOTAL 200000

static pthread_barrier_t start;
static unsigned int polled;

struct worker {
	pthread_t tid;
	struct ibv_cq *cq;
	struct ibv_srq *srq;
	int idx;
	unsigned char *seen;
	int err;
};

static void *poller(void *arg)
{
	struct worker *w = arg;
	struct ibv_wc wc[3];
	int n, i;

	pthread_barrier_wait(&start);
	while (__atomic_load_n(&polled, __ATOMIC_RELAXED) < CQ_TOTAL) {
		n = ibv_poll_cq(w->cq, 3, wc);
		if (n < 0) {
			w->err = 1;
			break;
		}
		for (i = 0; i < n; i++)
			if (wc[i].wr_id >= CQ_TOTAL ||
			    __atomic_fetch_add(&w->seen[wc[i].wr_id], 1,
					       __ATOMIC_RELAXED))
				w->err = 1;
		__atomic_fetch_add(&polled, n, __ATOMIC_RELAXED);
	}
	return NULL;
}

static void *srq_poster(void *arg)
{
	struct worker *w = arg;
	struct ibv_sge sge = { .addr = 0x1000, .length = 1, .lkey = 1 };
	struct ibv_recv_wr wr = { .sg_list = &sge, .num_sge = 1 }, *bad;
	int i;

	pthread_barrier_wait(&start);
	for (i = 0; i < PER_THREAD; i++) {
		wr.wr_id = (uint64_t)w->idx * PER_THREAD + i;
		if (ibv_post_srq_recv(w->srq, &wr, &bad))
			w->err = 1;
	}
	return NULL;
}

static int test_threads(struct ibv_context *ctx, struct ibv_pd *pd)
{
	static unsigned char seen[CQ_TOTAL];
	struct ibv_srq_init_attr sinit = {
		.attr = { .max_wr = THREADS * PER_THREAD, .max_sge = 1 },
	};
	struct worker w[THREADS] = {};
	struct siw2_cqe cqe = {};
	struct siw2_ring_ctl *ctl;
	struct ibv_srq *srq;
	struct ibv_cq *cq;
	uint32_t i;

	cq = ibv_create_cq(ctx, 64, NULL, NULL, 0);
	if (!cq)
		FAIL("threads: ibv_create_cq: %s", strerror(errno));
	ctl = fk.cq_ring(cq->handle);
	pthread_barrier_init(&start, NULL, THREADS + 1);
	for (i = 0; i < THREADS; i++) {
		w[i] = (struct worker){ .cq = cq, .seen = seen };
		pthread_create(&w[i].tid, NULL, poller, &w[i]);
	}
	pthread_barrier_wait(&start);
	for (i = 0; i < CQ_TOTAL; i++) {
		unsigned long spins = 0;

		/* Pollers that died leave the ring full: give up, fail. */
		while (ctl->prod - __atomic_load_n(&ctl->cons,
						   __ATOMIC_ACQUIRE) >= 64 &&
		       ++spins < 1000000000UL)
			;
		if (spins == 1000000000UL)
			break;
		cqe.wr_id = i;
		fk.cq_push(cq->handle, &cqe);
	}
	if (i < CQ_TOTAL)
		__atomic_store_n(&polled, CQ_TOTAL, __ATOMIC_RELAXED);
	for (i = 0; i < THREADS; i++) {
		pthread_join(w[i].tid, NULL);
		if (w[i].err)
			FAIL("threads: poller %u saw a CQE twice or failed", i);
	}
	for (i = 0; i < CQ_TOTAL; i++)
		if (seen[i] != 1)
			FAIL("threads: CQE %u polled %u times", i, seen[i]);
	if (ibv_destroy_cq(cq))
		FAIL("threads: ibv_destroy_cq");

	srq = ibv_create_srq(pd, &sinit);
	if (!srq)
		FAIL("threads: ibv_create_srq: %s", strerror(errno));
	memset(seen, 0, sizeof(seen));
	for (i = 0; i < THREADS; i++) {
		w[i] = (struct worker){ .srq = srq, .idx = (int)i };
		pthread_create(&w[i].tid, NULL, srq_poster, &w[i]);
	}
	pthread_barrier_wait(&start);
	for (i = 0; i < THREADS; i++) {
		pthread_join(w[i].tid, NULL);
		if (w[i].err)
			FAIL("threads: SRQ poster %u failed", i);
	}
	pthread_barrier_destroy(&start);
	if (fk.srq_ring(srq->handle)->prod != THREADS * PER_THREAD)
		FAIL("threads: SRQ prod %u", fk.srq_ring(srq->handle)->prod);
	for (i = 0; i < THREADS * PER_THREAD; i++) {
		uint64_t id = fk.srq_rqe(srq->handle, i)->wr_id;

		if (id >= THREADS * PER_THREAD || seen[id]++)
			FAIL("threads: SRQ slot %u holds wr_id %llu", i,
			     (unsigned long long)id);
	}
	if (ibv_destroy_srq(srq))
		FAIL("threads: ibv_destroy_srq");
	return 0;
}

static int test_cq(struct ibv_context *ctx)
{
	struct siw2_cqe cqe = {};
	struct siw2_ring_ctl *ctl;
	struct ibv_wc wc[4];
	struct ibv_cq *cq;
	int i, n;

	cq = ibv_create_cq(ctx, 10, NULL, NULL, 0);
	if (!cq)
		FAIL("ibv_create_cq: %s", strerror(errno));
	if (cq->cqe < 10)
		FAIL("cq->cqe %d < 10", cq->cqe);
	ctl = fk.cq_ring(cq->handle);
	if (ibv_poll_cq(cq, 4, wc) != 0)
		FAIL("poll of an empty CQ");

	cqe = (struct siw2_cqe){ .wr_id = 1, .opcode = SIW2_WC_RECV_IMM,
				 .flags = SIW2_CQE_WITH_IMM, .byte_len = 5,
				 .imm_inv = 0x11223344, .qp_num = 9 };
	fk.cq_push(cq->handle, &cqe);
	cqe = (struct siw2_cqe){ .wr_id = 2, .opcode = SIW2_WC_RECV,
				 .flags = SIW2_CQE_WITH_INV,
				 .imm_inv = 0xabcd, .qp_num = 9 };
	fk.cq_push(cq->handle, &cqe);
	cqe = (struct siw2_cqe){ .wr_id = 3, .opcode = SIW2_WC_RECV_WRITE_IMM,
				 .flags = SIW2_CQE_WITH_IMM, .imm_inv = 7,
				 .status = IBV_WC_REM_ACCESS_ERR,
				 .vendor_err = 42 };
	fk.cq_push(cq->handle, &cqe);
	cqe = (struct siw2_cqe){ .wr_id = 4, .opcode = 200 };
	fk.cq_push(cq->handle, &cqe);

	n = ibv_poll_cq(cq, 2, wc);
	if (n != 2 || ctl->cons != 2)
		FAIL("poll 2 of 4: got %d, cons %u", n, ctl->cons);
	if (wc[0].wr_id != 1 || wc[0].opcode != IBV_WC_RECV ||
	    wc[0].status != IBV_WC_SUCCESS || wc[0].byte_len != 5 ||
	    !(wc[0].wc_flags & IBV_WC_WITH_IMM) ||
	    wc[0].imm_data != 0x11223344 || wc[0].qp_num != 9)
		FAIL("wc[0] (recv with imm) mapped wrong");
	if (wc[1].wr_id != 2 || wc[1].opcode != IBV_WC_RECV ||
	    wc[1].wc_flags != IBV_WC_WITH_INV ||
	    wc[1].invalidated_rkey != 0xabcd)
		FAIL("wc[1] (recv with inv) mapped wrong");
	n = ibv_poll_cq(cq, 4, wc);
	if (n != 2)
		FAIL("poll rest: got %d", n);
	if (wc[0].wr_id != 3 || wc[0].opcode != IBV_WC_RECV_RDMA_WITH_IMM ||
	    wc[0].status != IBV_WC_REM_ACCESS_ERR || wc[0].vendor_err != 42)
		FAIL("wc (write with imm, error) mapped wrong");
	if (wc[1].wr_id != 4 || wc[1].status != IBV_WC_GENERAL_ERR)
		FAIL("unknown CQE opcode not turned into an error");

	if (ibv_req_notify_cq(cq, 1) || ctl->flags != SIW2_CQ_ARM_SOLICITED)
		FAIL("arm solicited: flags %#x", ctl->flags);
	if (ibv_req_notify_cq(cq, 0) ||
	    ctl->flags != (SIW2_CQ_ARM_SOLICITED | SIW2_CQ_ARM_NEXT))
		FAIL("arm next after solicited: flags %#x", ctl->flags);
	ctl->flags = 0;

	/* Resize keeps unconsumed CQEs, in order, and uses the new ring. */
	for (i = 0; i < 3; i++) {
		cqe = (struct siw2_cqe){ .wr_id = 100 + i,
					 .opcode = SIW2_WC_SEND };
		fk.cq_push(cq->handle, &cqe);
	}
	if (ibv_poll_cq(cq, 1, wc) != 1 || wc[0].wr_id != 100)
		FAIL("poll before resize");
	if (ibv_resize_cq(cq, 100) || cq->cqe < 100)
		FAIL("ibv_resize_cq: cqe %d", cq->cqe);
	if (fk.cq_ring(cq->handle) == ctl)
		FAIL("resize kept the old ring");
	cqe = (struct siw2_cqe){ .wr_id = 103, .opcode = SIW2_WC_SEND };
	fk.cq_push(cq->handle, &cqe);
	n = ibv_poll_cq(cq, 4, wc);
	if (n != 3 || wc[0].wr_id != 101 || wc[1].wr_id != 102 ||
	    wc[2].wr_id != 103)
		FAIL("after resize: %d CQEs, first wr_id %llu", n,
		     n > 0 ? (unsigned long long)wc[0].wr_id : 0ULL);
	if (ibv_resize_cq(cq, 2) || ibv_poll_cq(cq, 4, wc) != 0)
		FAIL("shrink an empty CQ");

	/* Gone (siw2-abi.h): what was produced first is still delivered. */
	ctl = fk.cq_ring(cq->handle);
	cqe = (struct siw2_cqe){ .wr_id = 200, .opcode = SIW2_WC_SEND };
	fk.cq_push(cq->handle, &cqe);
	ctl->flags |= SIW2_RING_GONE;
	n = ibv_poll_cq(cq, 4, wc);
	if (n != 1 || wc[0].wr_id != 200)
		FAIL("gone CQ: the last CQE: got %d", n);
	errno = 0;
	if (ibv_poll_cq(cq, 4, wc) != -1 || errno != EIO)
		FAIL("gone CQ: an empty poll does not fail with EIO");
	ctl->flags = 0;

	if (ibv_destroy_cq(cq))
		FAIL("ibv_destroy_cq");
	return 0;
}

/* Polls exactly @want completions and checks them against @ids. */
static int expect_wcs(struct ibv_cq *cq, int want, const uint64_t *ids,
		      enum ibv_wc_status status, const char *what)
{
	struct ibv_wc wc[16];
	int i, n;

	n = ibv_poll_cq(cq, 16, wc);
	if (n != want)
		FAIL("%s: %d completions, want %d", what, n, want);
	for (i = 0; i < n; i++)
		if (wc[i].wr_id != ids[i] || wc[i].status != status)
			FAIL("%s: wc %d: wr_id %llu status %s", what, i,
			     (unsigned long long)wc[i].wr_id,
			     ibv_wc_status_str(wc[i].status));
	return 0;
}

static int test_qp(struct ibv_context *ctx, struct ibv_pd *pd)
{
	static char buf[256];
	struct ibv_sge sge[3] = {
		{ .addr = (uintptr_t)buf, .length = 16, .lkey = 5 },
		{ .addr = (uintptr_t)buf + 16, .length = 48, .lkey = 6 },
		{ .addr = (uintptr_t)buf + 64, .length = 1, .lkey = 7 },
	};
	struct ibv_qp_init_attr init = {
		.cap = { .max_send_wr = 6, .max_recv_wr = 6,
			 .max_send_sge = 2, .max_recv_sge = 2,
			 .max_inline_data = 64 },
		.qp_type = IBV_QPT_RC,
	};
	struct ibv_send_wr swr[3], *bad;
	struct ibv_recv_wr rwr[4], *rbad;
	struct ibv_qp_init_attr qinit;
	struct siw2_ring_ctl *sq, *rq;
	const struct siw2_sqe *sqe;
	struct ibv_qp_attr attr;
	unsigned int db_sq, db_rq;
	struct ibv_cq *cq;
	struct ibv_qp *qp;
	uint64_t ids[16];
	int i, err;

	for (i = 0; i < (int)sizeof(buf); i++)
		buf[i] = (char)i;
	cq = ibv_create_cq(ctx, 32, NULL, NULL, 0);
	if (!cq)
		FAIL("ibv_create_cq: %s", strerror(errno));
	init.send_cq = init.recv_cq = cq;

	init.qp_type = IBV_QPT_UD;
	errno = 0;
	if (ibv_create_qp(pd, &init) || errno != EOPNOTSUPP)
		FAIL("a UD QP: want EOPNOTSUPP, got %s", strerror(errno));
	init.qp_type = IBV_QPT_RC;

	qp = ibv_create_qp(pd, &init);
	if (!qp)
		FAIL("ibv_create_qp: %s", strerror(errno));
	if (init.cap.max_send_wr != 8 || init.cap.max_send_sge != 2 ||
	    init.cap.max_inline_data != 64)
		FAIL("caps: send_wr %u send_sge %u inline %u",
		     init.cap.max_send_wr, init.cap.max_send_sge,
		     init.cap.max_inline_data);
	sq = fk.qp_ring(qp->qp_num, 0);
	rq = fk.qp_ring(qp->qp_num, 1);
	if (!sq || !rq)
		FAIL("no rings for qpn %u", qp->qp_num);

	if (ibv_query_qp(qp, &attr, IBV_QP_STATE | IBV_QP_CAP, &qinit) ||
	    attr.qp_state != IBV_QPS_RESET || qinit.cap.max_recv_wr != 8)
		FAIL("query after create: state %d", attr.qp_state);
	attr = (struct ibv_qp_attr){ .qp_state = IBV_QPS_INIT };
	if (ibv_modify_qp(qp, &attr, IBV_QP_STATE) || qp->state != IBV_QPS_INIT)
		FAIL("modify to INIT");

	/* Receives: straight into the ring, no command. */
	db_rq = fk.doorbells(1);
	for (i = 0; i < 4; i++)
		rwr[i] = (struct ibv_recv_wr){ .wr_id = 10 + i,
					       .next = i < 3 ? &rwr[i + 1] : NULL,
					       .sg_list = sge, .num_sge = 2 };
	rwr[3].num_sge = 3;
	err = ibv_post_recv(qp, rwr, &rbad);
	if (err != EINVAL || rbad != &rwr[3] || rq->prod != 3 ||
	    fk.doorbells(1) != db_rq)
		FAIL("post_recv 3 good + 1 bad: err %d prod %u", err, rq->prod);

	/* A send with two SGEs: in the ring, doorbell, completion. */
	db_sq = fk.doorbells(0);
	swr[0] = (struct ibv_send_wr){ .wr_id = 20, .sg_list = sge,
				       .num_sge = 2, .opcode = IBV_WR_SEND,
				       .send_flags = IBV_SEND_SIGNALED };
	if (ibv_post_send(qp, swr, &bad) || fk.doorbells(0) != db_sq + 1)
		FAIL("post_send: no doorbell");
	sqe = fk.last_sqe();
	if (sqe->wr_id != 20 || sqe->opcode != SIW2_OP_SEND ||
	    sqe->num_sge != 2 || sqe->sge[1].addr != (uintptr_t)buf + 16 ||
	    sqe->sge[1].length != 48 || sqe->sge[1].lkey != 6 ||
	    sqe->flags != SIW2_WQE_SIGNALED)
		FAIL("SQE of a send");
	ids[0] = 20;
	if (expect_wcs(cq, 1, ids, IBV_WC_SUCCESS, "send"))
		return 1;

	/* Inline, write with immediate, read, atomic, local invalidate. */
	swr[0] = (struct ibv_send_wr){ .wr_id = 21, .sg_list = sge,
				       .num_sge = 2,
				       .opcode = IBV_WR_RDMA_WRITE_WITH_IMM,
				       .imm_data = 0x01020304,
				       .send_flags = IBV_SEND_INLINE |
						     IBV_SEND_SOLICITED,
				       .wr.rdma = { .remote_addr = 0x1000,
						    .rkey = 77 } };
	if (ibv_post_send(qp, swr, &bad))
		FAIL("inline write with imm");
	sqe = fk.last_sqe();
	if (sqe->opcode != SIW2_OP_WRITE_IMM || sqe->num_sge ||
	    sqe->inline_len != 64 || memcmp(sqe->inline_data, buf, 64) ||
	    sqe->imm_inv != 0x01020304 || sqe->raddr != 0x1000 ||
	    sqe->rkey != 77 ||
	    sqe->flags != (SIW2_WQE_INLINE | SIW2_WQE_SOLICITED))
		FAIL("SQE of an inline write with imm");
	swr[0].sg_list = &sge[1];
	swr[0].num_sge = 2;		/* 48 + 1 bytes: fits */
	swr[0].opcode = IBV_WR_SEND_WITH_INV;
	swr[0].invalidate_rkey = 99;
	if (ibv_post_send(qp, swr, &bad) || fk.last_sqe()->inline_len != 49 ||
	    fk.last_sqe()->imm_inv != 99 ||
	    fk.last_sqe()->opcode != SIW2_OP_SEND_INV)
		FAIL("inline send with invalidate");
	sge[0].length = 17;		/* 17 + 48 > 64 */
	swr[0].sg_list = sge;
	if (ibv_post_send(qp, swr, &bad) != EINVAL || bad != swr)
		FAIL("inline beyond max_inline_data accepted");
	sge[0].length = 16;
	swr[0] = (struct ibv_send_wr){ .wr_id = 22, .sg_list = sge,
				       .num_sge = 1, .opcode = IBV_WR_RDMA_READ,
				       .wr.rdma = { .remote_addr = 0x2000,
						    .rkey = 78 } };
	if (ibv_post_send(qp, swr, &bad) ||
	    fk.last_sqe()->opcode != SIW2_OP_READ ||
	    fk.last_sqe()->raddr != 0x2000)
		FAIL("read");
	swr[0].send_flags = IBV_SEND_INLINE;
	if (ibv_post_send(qp, swr, &bad) != EINVAL)
		FAIL("inline read accepted");
	swr[0] = (struct ibv_send_wr){ .wr_id = 23, .sg_list = sge,
				       .num_sge = 1,
				       .opcode = IBV_WR_ATOMIC_CMP_AND_SWP,
				       .wr.atomic = { .remote_addr = 0x3000,
						      .compare_add = 5,
						      .swap = 6, .rkey = 79 } };
	if (ibv_post_send(qp, swr, &bad) != EINVAL)
		FAIL("atomic on 16 bytes accepted");
	sge[0].length = 8;
	if (ibv_post_send(qp, swr, &bad) ||
	    fk.last_sqe()->opcode != SIW2_OP_ATOMIC_CMP_SWP ||
	    fk.last_sqe()->compare_add != 5 || fk.last_sqe()->swap != 6 ||
	    fk.last_sqe()->rkey != 79)
		FAIL("compare and swap");
	swr[0] = (struct ibv_send_wr){ .wr_id = 24,
				       .opcode = IBV_WR_LOCAL_INV,
				       .invalidate_rkey = 0x55 };
	if (ibv_post_send(qp, swr, &bad) ||
	    fk.last_sqe()->opcode != SIW2_OP_LOCAL_INV ||
	    fk.last_sqe()->imm_inv != 0x55)
		FAIL("local invalidate");

	/* A chain stops at the bad request; the ones before it are posted. */
	for (i = 0; i < 3; i++)
		swr[i] = (struct ibv_send_wr){ .wr_id = 30 + i,
					       .next = i < 2 ? &swr[i + 1] : NULL,
					       .sg_list = sge, .num_sge = 1,
					       .opcode = IBV_WR_SEND };
	swr[1].opcode = (enum ibv_wr_opcode)77;
	if (ibv_post_send(qp, swr, &bad) != EINVAL || bad != &swr[1] ||
	    fk.last_sqe()->wr_id != 30)
		FAIL("chain with a bad opcode");
	swr[1].opcode = IBV_WR_SEND;
	swr[1].num_sge = 3;
	if (ibv_post_send(qp, swr, &bad) != EINVAL || bad != &swr[1])
		FAIL("num_sge beyond the QP's cap accepted");
	swr[1].num_sge = 1;
	if (ibv_poll_cq(cq, 16, (struct ibv_wc[16]){}) != 0)
		FAIL("unsignaled requests completed");

	/*
	 * With the engine "watching" (no NEED_WAKEUP) nothing is consumed:
	 * 8 fit, the 9th finds the ring full, and no doorbell rings.
	 */
	sq->flags = 0;
	db_sq = fk.doorbells(0);
	for (i = 0; i < 9; i++) {
		swr[0] = (struct ibv_send_wr){ .wr_id = 40 + i,
					       .sg_list = sge, .num_sge = 1,
					       .opcode = IBV_WR_SEND };
		err = ibv_post_send(qp, swr, &bad);
		if (i < 8 ? err != 0 : err != ENOMEM || bad != swr)
			FAIL("SQ fill: post %d: %d", i, err);
	}
	if (fk.doorbells(0) != db_sq)
		FAIL("doorbell rung while the engine was watching");

	/* To error: the fake flushes both queues and raises both flags. */
	attr.qp_state = IBV_QPS_ERR;
	if (ibv_modify_qp(qp, &attr, IBV_QP_STATE))
		FAIL("modify to ERR");
	for (i = 0; i < 8; i++)
		ids[i] = 40 + i;
	for (i = 0; i < 3; i++)
		ids[8 + i] = 10 + i;
	if (expect_wcs(cq, 11, ids, IBV_WC_WR_FLUSH_ERR, "flush on ERR"))
		return 1;
	if (ibv_query_qp(qp, &attr, IBV_QP_STATE, &qinit) ||
	    attr.qp_state != IBV_QPS_ERR)
		FAIL("query in ERR");

	/* Posted in error: the RQ doorbell rings, both flush. */
	db_rq = fk.doorbells(1);
	rwr[0].next = NULL;
	rwr[0].wr_id = 50;
	if (ibv_post_recv(qp, rwr, &rbad) || fk.doorbells(1) != db_rq + 1)
		FAIL("post_recv in ERR: no doorbell");
	sq->flags = SIW2_SQ_NEED_WAKEUP;
	swr[0].wr_id = 51;
	if (ibv_post_send(qp, swr, &bad))
		FAIL("post_send in ERR");
	ids[0] = 50;
	ids[1] = 51;
	if (expect_wcs(cq, 2, ids, IBV_WC_WR_FLUSH_ERR, "posted in ERR"))
		return 1;

	/* Gone (siw2-abi.h): posts fail and publish nothing. */
	sq->flags |= SIW2_RING_GONE;
	rq->flags |= SIW2_RING_GONE;
	i = (int)sq->prod;
	if (ibv_post_send(qp, swr, &bad) != EIO || bad != swr ||
	    sq->prod != (uint32_t)i)
		FAIL("post_send to a gone QP");
	i = (int)rq->prod;
	if (ibv_post_recv(qp, rwr, &rbad) != EIO || rbad != rwr ||
	    rq->prod != (uint32_t)i)
		FAIL("post_recv to a gone QP");
	sq->flags = SIW2_SQ_NEED_WAKEUP;
	rq->flags = 0;

	if (ibv_destroy_cq(cq) != EBUSY)
		FAIL("CQ destroyed under a QP");
	if (ibv_destroy_qp(qp) || ibv_destroy_cq(cq))
		FAIL("destroy QP, CQ");
	return 0;
}

static int test_srq(struct ibv_context *ctx, struct ibv_pd *pd)
{
	struct ibv_srq_init_attr init = {
		.attr = { .max_wr = 10, .max_sge = 2, .srq_limit = 0 },
	};
	struct ibv_sge sge = { .addr = 0x1000, .length = 1, .lkey = 1 };
	struct ibv_recv_wr wr = { .wr_id = 1, .sg_list = &sge, .num_sge = 1 };
	struct ibv_qp_init_attr qinit = {
		.cap = { .max_send_wr = 1, .max_send_sge = 1 },
		.qp_type = IBV_QPT_RC,
	};
	struct ibv_recv_wr *bad;
	struct ibv_srq_attr attr;
	struct ibv_srq *srq;
	struct ibv_cq *cq;
	struct ibv_qp *qp;
	int i;

	srq = ibv_create_srq(pd, &init);
	if (!srq)
		FAIL("ibv_create_srq: %s", strerror(errno));
	if (init.attr.max_wr != 16 || init.attr.max_sge != 2)
		FAIL("SRQ caps %u/%u", init.attr.max_wr, init.attr.max_sge);
	for (i = 0; i < 16; i++)
		if (ibv_post_srq_recv(srq, &wr, &bad))
			FAIL("post_srq_recv %d", i);
	if (ibv_post_srq_recv(srq, &wr, &bad) != ENOMEM || bad != &wr)
		FAIL("a full SRQ took one more");
	wr.num_sge = 3;
	if (ibv_post_srq_recv(srq, &wr, &bad) != EINVAL)
		FAIL("SRQ took more SGEs than its max");

	attr.srq_limit = 4;
	if (ibv_modify_srq(srq, &attr, IBV_SRQ_LIMIT) ||
	    ibv_query_srq(srq, &attr) || attr.srq_limit != 4 ||
	    attr.max_wr != 16)
		FAIL("SRQ limit round trip");
	attr.max_wr = 32;
	if (ibv_modify_srq(srq, &attr, IBV_SRQ_MAX_WR) != EOPNOTSUPP)
		FAIL("SRQ resize not refused");

	cq = ibv_create_cq(ctx, 4, NULL, NULL, 0);
	if (!cq)
		FAIL("ibv_create_cq");
	qinit.send_cq = qinit.recv_cq = cq;
	qinit.srq = srq;
	qp = ibv_create_qp(pd, &qinit);
	if (!qp || fk.qp_ring(qp->qp_num, 1))
		FAIL("QP on an SRQ: %s", qp ? "has an RQ" : strerror(errno));
	wr.num_sge = 1;
	if (ibv_post_recv(qp, &wr, &bad) != EINVAL)
		FAIL("post_recv on a QP with an SRQ");
	if (ibv_destroy_srq(srq) != EBUSY)
		FAIL("SRQ destroyed under a QP");
	if (ibv_destroy_qp(qp) || ibv_destroy_srq(srq) || ibv_destroy_cq(cq))
		FAIL("destroy QP, SRQ, CQ");
	return 0;
}

static int test_mr(struct ibv_pd *pd)
{
	static char buf[4096];
	const int odp = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_READ |
			IBV_ACCESS_ON_DEMAND;
	struct ibv_mr *mr;

	mr = ibv_reg_mr(pd, buf, sizeof(buf), IBV_ACCESS_LOCAL_WRITE);
	if (!mr)
		FAIL("ibv_reg_mr: %s", strerror(errno));
	if (mr->lkey != 0x100 + mr->handle || mr->rkey != 0x200 + mr->handle ||
	    mr->addr != buf || mr->length != sizeof(buf) || mr->pd != pd)
		FAIL("MR fields");
	if (fk.mr_access(mr->handle) != IBV_ACCESS_LOCAL_WRITE)
		FAIL("reg_mr: the kernel got access %#x",
		     fk.mr_access(mr->handle));
	if (ibv_dereg_mr(mr))
		FAIL("ibv_dereg_mr");

	/* On-demand paging is the kernel's alone: the flag goes to it as is. */
	mr = ibv_reg_mr(pd, buf, sizeof(buf), odp);
	if (!mr)
		FAIL("ibv_reg_mr with IBV_ACCESS_ON_DEMAND: %s",
		     strerror(errno));
	if (fk.mr_access(mr->handle) != odp)
		FAIL("ODP reg_mr: the kernel got access %#x, want %#x",
		     fk.mr_access(mr->handle), odp);
	if (ibv_dereg_mr(mr))
		FAIL("ibv_dereg_mr of an ODP MR");
	return 0;
}

/*
 * ibv_advise_mr() of @num SGEs; the kernel must see exactly the caller's
 * advice, flags and SGEs.
 */
static int advise_reaches_kernel(struct ibv_pd *pd, uint32_t advice,
				 uint32_t flags, struct ibv_sge *sge,
				 uint32_t num, const char *what)
{
	unsigned int calls = fk.advise_calls();
	uint32_t k_advice, k_flags, k_num, i;
	const struct ibv_sge *k_sge;
	int err;

	err = ibv_advise_mr(pd, advice, flags, sge, num);
	if (err)
		FAIL("advise_mr %s: %s", what, strerror(err));
	k_sge = fk.last_advise(&k_advice, &k_flags, &k_num);
	if (fk.advise_calls() != calls + 1 || !k_sge)
		FAIL("advise_mr %s: %u kernel calls, want 1", what,
		     fk.advise_calls() - calls);
	if (k_advice != advice || k_flags != flags || k_num != num)
		FAIL("advise_mr %s: kernel got advice %u flags %#x SGEs %u",
		     what, k_advice, k_flags, k_num);
	for (i = 0; i < num && i < 8; i++)
		if (k_sge[i].addr != sge[i].addr ||
		    k_sge[i].length != sge[i].length ||
		    k_sge[i].lkey != sge[i].lkey)
			FAIL("advise_mr %s: SGE %u differs", what, i);
	return 0;
}

/* ibv_advise_mr() fails with @want, from the provider or the kernel. */
static int advise_fails(struct ibv_pd *pd, uint32_t advice, uint32_t flags,
			struct ibv_sge *sge, uint32_t num, int want,
			bool kernel, const char *what)
{
	unsigned int calls = fk.advise_calls();
	int err;

	err = ibv_advise_mr(pd, advice, flags, sge, num);
	if (err != want)
		FAIL("advise_mr %s: got %s, want %s", what, strerror(err),
		     strerror(want));
	if (fk.advise_calls() != calls + kernel)
		FAIL("advise_mr %s: %u kernel calls, want %d", what,
		     fk.advise_calls() - calls, kernel);
	return 0;
}

/*
 * Prefetch advice for on-demand MRs reaches the kernel's ADVISE_MR as the
 * caller gave it; what no kernel takes is refused before, and the
 * kernel's refusals come back as they are.
 */
static int test_advise_mr(struct ibv_pd *pd)
{
	static const uint32_t advices[] = {
		IBV_ADVISE_MR_ADVICE_PREFETCH,
		IBV_ADVISE_MR_ADVICE_PREFETCH_WRITE,
		IBV_ADVISE_MR_ADVICE_PREFETCH_NO_FAULT,
	};
	/* One more than an ioctl attribute can carry (64 KiB - 1). */
	static struct ibv_sge many[4096];
	static char buf[3 * 4096];
	struct ibv_mr *mr, *ro, *pinned;
	struct ibv_sge sge[3], bad;
	struct ibv_mw *mw;
	unsigned int a, f;
	char what[64];

	mr = ibv_reg_mr(pd, buf, 2 * 4096, IBV_ACCESS_LOCAL_WRITE |
			IBV_ACCESS_ON_DEMAND);
	ro = ibv_reg_mr(pd, buf + 2 * 4096, 4096, IBV_ACCESS_ON_DEMAND);
	pinned = ibv_reg_mr(pd, buf, 4096, IBV_ACCESS_LOCAL_WRITE);
	mw = ibv_alloc_mw(pd, IBV_MW_TYPE_2);
	if (!mr || !ro || !pinned || !mw)
		FAIL("advise_mr: reg_mr, alloc_mw: %s", strerror(errno));
	sge[0] = (struct ibv_sge){ .addr = (uintptr_t)buf, .length = 100,
				   .lkey = mr->lkey };
	sge[1] = (struct ibv_sge){ .addr = (uintptr_t)buf + 4096,
				   .length = 4096, .lkey = mr->lkey };
	sge[2] = (struct ibv_sge){ .addr = (uintptr_t)buf + 2 * 4096,
				   .length = 4096, .lkey = ro->lkey };

	/* Every advice, with and without FLUSH. */
	for (a = 0; a < sizeof(advices) / sizeof(advices[0]); a++) {
		for (f = 0; f < 2; f++) {
			snprintf(what, sizeof(what), "advice %u flags %u",
				 advices[a], f);
			if (advise_reaches_kernel(pd, advices[a],
						  f ? IBV_ADVISE_MR_FLAG_FLUSH :
						      0,
						  sge, 2, what))
				return 1;
		}
	}
	if (advise_reaches_kernel(pd, IBV_ADVISE_MR_ADVICE_PREFETCH,
				  IBV_ADVISE_MR_FLAG_FLUSH, sge, 3,
				  "read-only MR"))
		return 1;
	/* The most SGEs an ioctl attribute carries. */
	for (a = 0; a < 4096; a++)
		many[a] = (struct ibv_sge){ .addr = (uintptr_t)buf + a,
					    .length = 1, .lkey = mr->lkey };
	if (advise_reaches_kernel(pd, IBV_ADVISE_MR_ADVICE_PREFETCH_WRITE, 0,
				  many, 4095, "4095 SGEs"))
		return 1;

	/* Refused without a kernel call. */
	if (advise_fails(pd, IBV_ADVISE_MR_ADVICE_PREFETCH_NO_FAULT + 1, 0,
			 sge, 1, EOPNOTSUPP, false, "unknown advice") ||
	    advise_fails(pd, 0x7fffffff, IBV_ADVISE_MR_FLAG_FLUSH, sge, 1,
			 EOPNOTSUPP, false, "advice 0x7fffffff") ||
	    advise_fails(pd, IBV_ADVISE_MR_ADVICE_PREFETCH,
			 IBV_ADVISE_MR_FLAG_FLUSH << 1, sge, 1, EINVAL, false,
			 "unknown flag") ||
	    advise_fails(pd, IBV_ADVISE_MR_ADVICE_PREFETCH,
			 IBV_ADVISE_MR_FLAG_FLUSH | 1u << 31, sge, 1, EINVAL,
			 false, "FLUSH and an unknown flag") ||
	    advise_fails(pd, IBV_ADVISE_MR_ADVICE_PREFETCH_NO_FAULT + 1,
			 2, sge, 1, EINVAL, false,
			 "unknown advice and flag (flags first)") ||
	    advise_fails(pd, IBV_ADVISE_MR_ADVICE_PREFETCH, 0, sge, 0, EINVAL,
			 false, "no SGEs") ||
	    advise_fails(pd, IBV_ADVISE_MR_ADVICE_PREFETCH, 0, NULL, 1,
			 EINVAL, false, "a NULL SGE list") ||
	    advise_fails(pd, IBV_ADVISE_MR_ADVICE_PREFETCH, 0, many, 4096,
			 EINVAL, false, "4096 SGEs"))
		return 1;

	/* The kernel's refusals, passed on. */
	bad = sge[0];
	bad.lkey = 0x1ff;
	if (advise_fails(pd, IBV_ADVISE_MR_ADVICE_PREFETCH, 0, &bad, 1, ENOENT,
			 true, "an lkey of no MR"))
		return 1;
	bad.lkey = pinned->lkey;
	if (advise_fails(pd, IBV_ADVISE_MR_ADVICE_PREFETCH,
			 IBV_ADVISE_MR_FLAG_FLUSH, &bad, 1, ENOENT, true,
			 "a pinned MR"))
		return 1;
	bad.lkey = mw->rkey;
	if (advise_fails(pd, IBV_ADVISE_MR_ADVICE_PREFETCH, 0, &bad, 1, EINVAL,
			 true, "a memory window's STag"))
		return 1;
	if (advise_fails(pd, IBV_ADVISE_MR_ADVICE_PREFETCH_WRITE,
			 IBV_ADVISE_MR_FLAG_FLUSH, sge, 3, EPERM, true,
			 "PREFETCH_WRITE of a read-only MR"))
		return 1;
	bad = sge[1];
	bad.length = 4097;
	if (advise_fails(pd, IBV_ADVISE_MR_ADVICE_PREFETCH,
			 IBV_ADVISE_MR_FLAG_FLUSH, &bad, 1, EFAULT, true,
			 "a range past the MR's end"))
		return 1;

	if (ibv_dealloc_mw(mw) || ibv_dereg_mr(pinned) || ibv_dereg_mr(ro) ||
	    ibv_dereg_mr(mr))
		FAIL("advise_mr: dereg_mr, dealloc_mw");
	return 0;
}

/* ---- the extended API ---- */

static int cq_ex_refused(struct ibv_context *ctx, uint64_t wc_flags,
			 uint32_t comp_mask, uint32_t flags, const char *what)
{
	struct ibv_cq_init_attr_ex attr = {
		.cqe = 4, .wc_flags = wc_flags, .comp_mask = comp_mask,
		.flags = flags,
	};
	struct ibv_cq_ex *cq;

	errno = 0;
	cq = ibv_create_cq_ex(ctx, &attr);
	if (cq || errno != EOPNOTSUPP)
		FAIL("cq_ex with %s: want NULL/EOPNOTSUPP, got %p/%s", what,
		     (void *)cq, strerror(errno));
	return 0;
}

static int test_cq_ex(struct ibv_context *ctx)
{
	struct ibv_cq_init_attr_ex attr = {
		.cqe = 10, .wc_flags = IBV_WC_STANDARD_FLAGS,
		.comp_mask = IBV_CQ_INIT_ATTR_MASK_FLAGS,
		.flags = IBV_CREATE_CQ_ATTR_SINGLE_THREADED,
	};
	struct ibv_poll_cq_attr pattr = {};
	struct siw2_cqe cqe = {};
	struct siw2_ring_ctl *ctl;
	struct ibv_cq_ex *cq;
	struct ibv_wc wc;
	uint32_t h;

	if (cq_ex_refused(ctx, IBV_WC_EX_WITH_COMPLETION_TIMESTAMP, 0, 0,
			  "a completion timestamp") ||
	    cq_ex_refused(ctx, IBV_WC_EX_WITH_COMPLETION_TIMESTAMP_WALLCLOCK,
			  0, 0, "a wallclock timestamp") ||
	    cq_ex_refused(ctx, IBV_WC_EX_WITH_FLOW_TAG, 0, 0, "a flow tag") ||
	    cq_ex_refused(ctx, IBV_WC_EX_WITH_CVLAN, 0, 0, "a VLAN") ||
	    cq_ex_refused(ctx, 0, IBV_CQ_INIT_ATTR_MASK_FLAGS,
			  IBV_CREATE_CQ_ATTR_IGNORE_OVERRUN, "ignore overrun") ||
	    cq_ex_refused(ctx, 0, IBV_CQ_INIT_ATTR_MASK_PD, 0,
			  "a parent domain"))
		return 1;

	cq = ibv_create_cq_ex(ctx, &attr);
	if (!cq)
		FAIL("ibv_create_cq_ex: %s", strerror(errno));
	if (!cq->read_byte_len || !cq->read_imm_data || !cq->read_qp_num ||
	    !cq->read_src_qp || !cq->read_sl || cq->read_completion_ts ||
	    cq->read_cvlan || ibv_cq_ex_to_cq(cq)->cqe < 10)
		FAIL("cq_ex accessors or size");
	h = ibv_cq_ex_to_cq(cq)->handle;
	ctl = fk.cq_ring(h);
	if (ibv_start_poll(cq, &pattr) != ENOENT)
		FAIL("start_poll of an empty CQ: not ENOENT");
	/* ENOENT left the lock free: the legacy poll gets through. */
	if (ibv_poll_cq(ibv_cq_ex_to_cq(cq), 1, &wc) != 0)
		FAIL("poll_cq after ENOENT");

	cqe = (struct siw2_cqe){ .wr_id = 1, .opcode = SIW2_WC_RECV_IMM,
				 .flags = SIW2_CQE_WITH_IMM, .byte_len = 5,
				 .imm_inv = 0x11223344, .qp_num = 9 };
	fk.cq_push(h, &cqe);
	cqe = (struct siw2_cqe){ .wr_id = 2, .opcode = SIW2_WC_RECV,
				 .flags = SIW2_CQE_WITH_INV, .byte_len = 7,
				 .imm_inv = 0xabcd, .qp_num = 9 };
	fk.cq_push(h, &cqe);
	cqe = (struct siw2_cqe){ .wr_id = 3, .opcode = SIW2_WC_RECV_WRITE_IMM,
				 .flags = SIW2_CQE_WITH_IMM, .imm_inv = 7,
				 .status = IBV_WC_REM_ACCESS_ERR,
				 .vendor_err = 42 };
	fk.cq_push(h, &cqe);
	cqe = (struct siw2_cqe){ .wr_id = 4, .opcode = 200 };
	fk.cq_push(h, &cqe);

	if (ibv_start_poll(cq, &pattr) || cq->wr_id != 1 ||
	    cq->status != IBV_WC_SUCCESS || ibv_wc_read_opcode(cq) != IBV_WC_RECV ||
	    ibv_wc_read_byte_len(cq) != 5 ||
	    ibv_wc_read_wc_flags(cq) != IBV_WC_WITH_IMM ||
	    ibv_wc_read_imm_data(cq) != 0x11223344 ||
	    ibv_wc_read_qp_num(cq) != 9 || ibv_wc_read_src_qp(cq) ||
	    ibv_wc_read_slid(cq) || ibv_wc_read_sl(cq) ||
	    ibv_wc_read_dlid_path_bits(cq) || ibv_wc_read_vendor_err(cq))
		FAIL("cq_ex: first CQE (recv with imm) read wrong");
	if (ctl->cons != 0)
		FAIL("cq_ex: cons moved before end_poll");
	if (ibv_next_poll(cq) || cq->wr_id != 2 ||
	    ibv_wc_read_wc_flags(cq) != IBV_WC_WITH_INV ||
	    ibv_wc_read_invalidated_rkey(cq) != 0xabcd ||
	    ibv_wc_read_byte_len(cq) != 7)
		FAIL("cq_ex: second CQE (recv with inv) read wrong");
	if (ibv_next_poll(cq) || cq->wr_id != 3 ||
	    cq->status != IBV_WC_REM_ACCESS_ERR ||
	    ibv_wc_read_opcode(cq) != IBV_WC_RECV_RDMA_WITH_IMM ||
	    ibv_wc_read_vendor_err(cq) != 42 || ibv_wc_read_imm_data(cq) != 7)
		FAIL("cq_ex: third CQE (write with imm, error) read wrong");
	ibv_end_poll(cq);
	if (ctl->cons != 3)
		FAIL("cq_ex: end_poll left cons at %u, want 3", ctl->cons);
	if (ibv_start_poll(cq, &pattr) || cq->wr_id != 4 ||
	    cq->status != IBV_WC_GENERAL_ERR)
		FAIL("cq_ex: unknown CQE opcode not turned into an error");
	if (ibv_next_poll(cq) != ENOENT)
		FAIL("cq_ex: next_poll past the last CQE");
	ibv_end_poll(cq);
	if (ctl->cons != 4)
		FAIL("cq_ex: cons %u after the batch, want 4", ctl->cons);

	/* A CQE produced during a batch is found by next_poll. */
	cqe = (struct siw2_cqe){ .wr_id = 5, .opcode = SIW2_WC_SEND };
	fk.cq_push(h, &cqe);
	if (ibv_start_poll(cq, &pattr) || cq->wr_id != 5)
		FAIL("cq_ex: start_poll of a new batch");
	cqe.wr_id = 6;
	fk.cq_push(h, &cqe);
	if (ibv_next_poll(cq) || cq->wr_id != 6 ||
	    ibv_wc_read_opcode(cq) != IBV_WC_SEND)
		FAIL("cq_ex: next_poll missed a CQE produced meanwhile");
	if (ibv_next_poll(cq) != ENOENT)
		FAIL("cq_ex: next_poll after the last");
	ibv_end_poll(cq);
	if (ctl->cons != 6)
		FAIL("cq_ex: cons %u, want 6", ctl->cons);

	pattr.comp_mask = 1;
	if (ibv_start_poll(cq, &pattr) != EINVAL)
		FAIL("start_poll with an unknown comp_mask");
	cqe.wr_id = 7;
	fk.cq_push(h, &cqe);
	if (ibv_poll_cq(ibv_cq_ex_to_cq(cq), 1, &wc) != 1 || wc.wr_id != 7)
		FAIL("legacy poll_cq on an extended CQ");
	if (ibv_destroy_cq(ibv_cq_ex_to_cq(cq)))
		FAIL("destroy cq_ex");
	return 0;
}

/* One SQE of the batch, as the fake kernel sees it. */
static int sqe_is(const struct siw2_sqe *e, uint64_t wr_id, uint8_t op,
		  uint8_t flags, uint32_t rkey, uint64_t raddr,
		  uint32_t imm_inv, const char *what)
{
	if (e->wr_id != wr_id || e->opcode != op || e->flags != flags ||
	    e->rkey != rkey || e->raddr != raddr || e->imm_inv != imm_inv)
		FAIL("wr_* %s: SQE wr_id %llu op %u flags %#x rkey %#x raddr %#llx imm_inv %#x",
		     what, (unsigned long long)e->wr_id, e->opcode, e->flags,
		     e->rkey, (unsigned long long)e->raddr, e->imm_inv);
	return 0;
}

/* wr_start, @build, wr_complete: refused with @want, nothing published. */
static int wr_refused(struct ibv_qp *qp, struct ibv_cq *cq, int want,
		      void (*build)(struct ibv_qp_ex *, void *), void *arg,
		      const char *what)
{
	struct ibv_qp_ex *qpx = ibv_qp_to_qp_ex(qp);
	struct siw2_ring_ctl *sq = fk.qp_ring(qp->qp_num, 0);
	unsigned int db = fk.doorbells(0);
	uint32_t prod = sq->prod;
	struct ibv_wc wc;
	int err;

	ibv_wr_start(qpx);
	qpx->wr_flags = IBV_SEND_SIGNALED;
	build(qpx, arg);
	err = ibv_wr_complete(qpx);
	if (err != want || sq->prod != prod || fk.doorbells(0) != db ||
	    ibv_poll_cq(cq, 1, &wc) != 0)
		FAIL("wr_* %s: complete %d (want %d), prod %u -> %u", what,
		     err, want, prod, sq->prod);
	return 0;
}

static char xbuf[256];

static void b_setter_first(struct ibv_qp_ex *q, void *a)
{
	(void)a;
	ibv_wr_set_sge(q, 5, (uintptr_t)xbuf, 8);
	ibv_wr_send(q);
}

static void b_atomic_short(struct ibv_qp_ex *q, void *a)
{
	(void)a;
	ibv_wr_atomic_fetch_add(q, 1, 0x1000, 1);
	ibv_wr_set_sge(q, 5, (uintptr_t)xbuf, 4);
}

static void b_atomic_nodata(struct ibv_qp_ex *q, void *a)
{
	(void)a;
	ibv_wr_atomic_cmp_swp(q, 1, 0x1000, 1, 2);
}

static void b_inline_long(struct ibv_qp_ex *q, void *a)
{
	(void)a;
	ibv_wr_send(q);
	ibv_wr_set_inline_data(q, xbuf, 65);
}

static void b_inline_read(struct ibv_qp_ex *q, void *a)
{
	(void)a;
	ibv_wr_rdma_read(q, 1, 0x1000);
	ibv_wr_set_inline_data(q, xbuf, 8);
}

static void b_read_2sge(struct ibv_qp_ex *q, void *a)
{
	const struct ibv_sge sg[2] = {
		{ .addr = (uintptr_t)xbuf, .length = 8, .lkey = 5 },
		{ .addr = (uintptr_t)xbuf + 8, .length = 8, .lkey = 5 },
	};

	(void)a;
	ibv_wr_rdma_read(q, 1, 0x1000);
	ibv_wr_set_sge_list(q, 2, sg);
}

static void b_send_imm_data(struct ibv_qp_ex *q, void *a)
{
	(void)a;
	ibv_wr_send_imm(q, htobe32(1));
	ibv_wr_set_sge(q, 5, (uintptr_t)xbuf, 8);
}

static void b_three_sges(struct ibv_qp_ex *q, void *a)
{
	const struct ibv_sge sg[3] = {
		{ .addr = (uintptr_t)xbuf, .length = 1, .lkey = 5 },
		{ .addr = (uintptr_t)xbuf, .length = 1, .lkey = 5 },
		{ .addr = (uintptr_t)xbuf, .length = 1, .lkey = 5 },
	};

	(void)a;
	ibv_wr_send(q);
	ibv_wr_set_sge_list(q, 3, sg);
}

static void b_bad_flags(struct ibv_qp_ex *q, void *a)
{
	(void)a;
	q->wr_flags = IBV_SEND_IP_CSUM;
	ibv_wr_send(q);
}

static void b_good_then_bad(struct ibv_qp_ex *q, void *a)
{
	(void)a;
	ibv_wr_send(q);
	ibv_wr_set_sge(q, 5, (uintptr_t)xbuf, 8);
	ibv_wr_atomic_fetch_add(q, 1, 0x1000, 1);	/* no data */
}

static void b_overfill(struct ibv_qp_ex *q, void *a)
{
	int i, n = *(int *)a;

	for (i = 0; i < n; i++) {
		q->wr_id = 300 + i;
		ibv_wr_send(q);
	}
}

static int test_qp_ex(struct ibv_context *ctx, struct ibv_pd *pd)
{
	const uint64_t all_ops = IBV_QP_EX_WITH_SEND |
		IBV_QP_EX_WITH_SEND_WITH_IMM | IBV_QP_EX_WITH_SEND_WITH_INV |
		IBV_QP_EX_WITH_RDMA_WRITE | IBV_QP_EX_WITH_RDMA_WRITE_WITH_IMM |
		IBV_QP_EX_WITH_RDMA_READ | IBV_QP_EX_WITH_ATOMIC_CMP_AND_SWP |
		IBV_QP_EX_WITH_ATOMIC_FETCH_AND_ADD | IBV_QP_EX_WITH_LOCAL_INV;
	const struct ibv_sge sg[2] = {
		{ .addr = (uintptr_t)xbuf, .length = 16, .lkey = 5 },
		{ .addr = (uintptr_t)xbuf + 16, .length = 32, .lkey = 6 },
	};
	const struct ibv_data_buf dbufs[2] = {
		{ .addr = xbuf, .length = 3 },
		{ .addr = xbuf + 100, .length = 4 },
	};
	struct ibv_qp_init_attr_ex init = {
		.cap = { .max_send_wr = 16, .max_recv_wr = 1,
			 .max_send_sge = 2, .max_recv_sge = 1,
			 .max_inline_data = 64 },
		.qp_type = IBV_QPT_RC,
		.comp_mask = IBV_QP_INIT_ATTR_PD |
			     IBV_QP_INIT_ATTR_SEND_OPS_FLAGS,
		.pd = pd,
		.send_ops_flags = IBV_QP_EX_WITH_SEND,
	};
	struct ibv_qp_init_attr legacy = {
		.cap = { .max_send_wr = 1, .max_send_sge = 1 },
		.qp_type = IBV_QPT_RC,
	};
	struct ibv_send_wr swr, *bad;
	struct siw2_ring_ctl *sq;
	const struct siw2_sqe *e;
	struct ibv_qp_ex *qpx;
	struct ibv_wc wc[16];
	unsigned int db;
	struct ibv_qp *qp;
	struct ibv_cq *cq;
	uint32_t p0;
	int i, n;

	for (i = 0; i < (int)sizeof(xbuf); i++)
		xbuf[i] = (char)(i * 3);
	cq = ibv_create_cq(ctx, 32, NULL, NULL, 0);
	if (!cq)
		FAIL("qp_ex: ibv_create_cq: %s", strerror(errno));
	init.send_cq = init.recv_cq = legacy.send_cq = legacy.recv_cq = cq;

	init.send_ops_flags = IBV_QP_EX_WITH_TSO;
	errno = 0;
	if (ibv_create_qp_ex(ctx, &init) || errno != EOPNOTSUPP)
		FAIL("qp_ex with TSO: want EOPNOTSUPP, got %s",
		     strerror(errno));
	qp = ibv_create_qp(pd, &legacy);
	if (!qp || ibv_qp_to_qp_ex(qp))
		FAIL("a QP without send_ops_flags has a qp_ex");
	if (ibv_destroy_qp(qp))
		FAIL("destroy legacy QP");

	init.send_ops_flags = all_ops;
	qp = ibv_create_qp_ex(ctx, &init);
	if (!qp)
		FAIL("ibv_create_qp_ex: %s", strerror(errno));
	qpx = ibv_qp_to_qp_ex(qp);
	if (!qpx || !qpx->wr_send || !qpx->wr_local_inv ||
	    !qpx->wr_atomic_fetch_add || qpx->wr_bind_mw || qpx->wr_send_tso ||
	    qpx->wr_set_ud_addr || qpx->wr_set_xrc_srqn ||
	    init.cap.max_inline_data != 64)
		FAIL("qp_ex entry points");
	/* Not offered; the members came in v44 and v45 (pabi_layout.c). */
#if SIW2_RDMA_CORE >= 44
	if (qpx->wr_atomic_write)
		FAIL("qp_ex: atomic write is not offered");
#endif
#if SIW2_RDMA_CORE >= 45
	if (qpx->wr_flush)
		FAIL("qp_ex: flush is not offered");
#endif
	sq = fk.qp_ring(qp->qp_num, 0);
	p0 = sq->prod;
	db = fk.doorbells(0);

	/* One batch with every builder and setter. */
	ibv_wr_start(qpx);
	qpx->wr_id = 100;
	qpx->wr_flags = IBV_SEND_SIGNALED;
	ibv_wr_send(qpx);
	ibv_wr_set_sge_list(qpx, 2, sg);
	qpx->wr_id = 101;
	qpx->wr_flags = IBV_SEND_SIGNALED | IBV_SEND_SOLICITED;
	ibv_wr_send_inv(qpx, 0x77);
	ibv_wr_set_inline_data(qpx, xbuf, 10);
	qpx->wr_id = 102;
	qpx->wr_flags = 0;
	ibv_wr_rdma_write(qpx, 0x88, 0x1000);
	ibv_wr_set_inline_data_list(qpx, 2, dbufs);
	qpx->wr_id = 103;
	qpx->wr_flags = IBV_SEND_SIGNALED;
	ibv_wr_rdma_write_imm(qpx, 0x89, 0x2000, htobe32(0x01020304));
	ibv_wr_set_sge(qpx, 5, (uintptr_t)xbuf, 16);
	qpx->wr_id = 104;
	qpx->wr_flags = IBV_SEND_SIGNALED | IBV_SEND_FENCE;
	ibv_wr_rdma_read(qpx, 0x8a, 0x3000);
	ibv_wr_set_sge(qpx, 6, (uintptr_t)xbuf + 16, 32);
	qpx->wr_id = 105;
	qpx->wr_flags = IBV_SEND_SIGNALED;
	ibv_wr_atomic_cmp_swp(qpx, 0x8b, 0x4000, 5, 6);
	ibv_wr_set_sge(qpx, 7, (uintptr_t)xbuf + 64, 8);
	qpx->wr_id = 106;
	ibv_wr_atomic_fetch_add(qpx, 0x8c, 0x5000, 9);
	ibv_wr_set_sge(qpx, 7, (uintptr_t)xbuf + 72, 8);
	qpx->wr_id = 107;
	ibv_wr_local_inv(qpx, 0x8d);
	qpx->wr_id = 108;
	ibv_wr_send_imm(qpx, htobe32(0xdeadbeef));
	if (sq->prod != p0 || fk.doorbells(0) != db)
		FAIL("wr_*: published before wr_complete");
	if (ibv_wr_complete(qpx))
		FAIL("wr_complete of a good batch");
	if (sq->prod != p0 + 9 || fk.doorbells(0) != db + 1)
		FAIL("wr_complete: prod %u (want %u), %u doorbells (want 1)",
		     sq->prod, p0 + 9, fk.doorbells(0) - db);

	e = fk.qp_sqe(qp->qp_num, p0);
	if (sqe_is(e, 100, SIW2_OP_SEND, SIW2_WQE_SIGNALED, 0, 0, 0, "send") ||
	    e->num_sge != 2 || e->sge[1].addr != (uintptr_t)xbuf + 16 ||
	    e->sge[1].length != 32 || e->sge[1].lkey != 6)
		FAIL("wr_* send: SGE list");
	e = fk.qp_sqe(qp->qp_num, p0 + 1);
	if (sqe_is(e, 101, SIW2_OP_SEND_INV, SIW2_WQE_SIGNALED |
		   SIW2_WQE_SOLICITED | SIW2_WQE_INLINE, 0, 0, 0x77,
		   "send_inv") || e->num_sge || e->inline_len != 10 ||
	    memcmp(e->inline_data, xbuf, 10))
		FAIL("wr_* send_inv: inline data");
	e = fk.qp_sqe(qp->qp_num, p0 + 2);
	if (sqe_is(e, 102, SIW2_OP_WRITE, SIW2_WQE_INLINE, 0x88, 0x1000, 0,
		   "rdma_write") || e->inline_len != 7 ||
	    memcmp(e->inline_data, xbuf, 3) ||
	    memcmp(e->inline_data + 3, xbuf + 100, 4))
		FAIL("wr_* rdma_write: inline data list");
	e = fk.qp_sqe(qp->qp_num, p0 + 3);
	if (sqe_is(e, 103, SIW2_OP_WRITE_IMM, SIW2_WQE_SIGNALED, 0x89, 0x2000,
		   htobe32(0x01020304), "rdma_write_imm") ||
	    e->num_sge != 1 || e->sge[0].length != 16)
		FAIL("wr_* rdma_write_imm: SGE");
	e = fk.qp_sqe(qp->qp_num, p0 + 4);
	if (sqe_is(e, 104, SIW2_OP_READ, SIW2_WQE_SIGNALED | SIW2_WQE_FENCE,
		   0x8a, 0x3000, 0, "rdma_read") || e->num_sge != 1 ||
	    e->sge[0].lkey != 6)
		FAIL("wr_* rdma_read: SGE");
	e = fk.qp_sqe(qp->qp_num, p0 + 5);
	if (sqe_is(e, 105, SIW2_OP_ATOMIC_CMP_SWP, SIW2_WQE_SIGNALED, 0x8b,
		   0x4000, 0, "cmp_swp") || e->compare_add != 5 ||
	    e->swap != 6 || e->num_sge != 1 || e->sge[0].length != 8)
		FAIL("wr_* cmp_swp: operands");
	e = fk.qp_sqe(qp->qp_num, p0 + 6);
	if (sqe_is(e, 106, SIW2_OP_ATOMIC_FETCH_ADD, SIW2_WQE_SIGNALED, 0x8c,
		   0x5000, 0, "fetch_add") || e->compare_add != 9 ||
	    e->sge[0].addr != (uintptr_t)xbuf + 72)
		FAIL("wr_* fetch_add: operands");
	e = fk.qp_sqe(qp->qp_num, p0 + 7);
	if (sqe_is(e, 107, SIW2_OP_LOCAL_INV, SIW2_WQE_SIGNALED, 0, 0, 0x8d,
		   "local_inv") || e->num_sge)
		FAIL("wr_* local_inv: data");
	e = fk.qp_sqe(qp->qp_num, p0 + 8);
	if (sqe_is(e, 108, SIW2_OP_SEND_IMM, SIW2_WQE_SIGNALED, 0, 0,
		   htobe32(0xdeadbeef), "send_imm") || e->num_sge ||
	    e->flags & SIW2_WQE_INLINE)
		FAIL("wr_* send_imm: data");
	n = ibv_poll_cq(cq, 16, wc);
	if (n != 8)
		FAIL("wr_* batch: %d completions, want 8 (one unsignaled)", n);
	for (i = 0; i < n; i++)
		if (wc[i].wr_id != (uint64_t)(i < 2 ? 100 + i : 101 + i) ||
		    wc[i].status != IBV_WC_SUCCESS)
			FAIL("wr_* batch: completion %d wr_id %llu", i,
			     (unsigned long long)wc[i].wr_id);

	/* Refusals: the whole batch goes, nothing reaches the ring. */
	n = 17;
	if (wr_refused(qp, cq, EINVAL, b_setter_first, NULL,
		       "a setter before any builder") ||
	    wr_refused(qp, cq, EINVAL, b_atomic_short, NULL,
		       "an atomic into 4 bytes") ||
	    wr_refused(qp, cq, EINVAL, b_atomic_nodata, NULL,
		       "an atomic without a buffer") ||
	    wr_refused(qp, cq, EINVAL, b_inline_long, NULL,
		       "inline data beyond max_inline_data") ||
	    wr_refused(qp, cq, EINVAL, b_inline_read, NULL,
		       "a read into inline data") ||
	    wr_refused(qp, cq, EINVAL, b_read_2sge, NULL,
		       "a read into 2 SGEs (max_sge_rd 1)") ||
	    wr_refused(qp, cq, EINVAL, b_send_imm_data, NULL,
		       "a send with immediate carrying data") ||
	    wr_refused(qp, cq, EINVAL, b_three_sges, NULL,
		       "more SGEs than max_send_sge") ||
	    wr_refused(qp, cq, EINVAL, b_bad_flags, NULL,
		       "IBV_SEND_IP_CSUM") ||
	    wr_refused(qp, cq, EINVAL, b_good_then_bad, NULL,
		       "a good request, then a bad one") ||
	    wr_refused(qp, cq, ENOMEM, b_overfill, &n,
		       "17 requests for a 16-slot SQ"))
		return 1;

	/* Abort and an empty batch: nothing published, no doorbell. */
	db = fk.doorbells(0);
	p0 = sq->prod;
	ibv_wr_start(qpx);
	ibv_wr_send(qpx);
	ibv_wr_abort(qpx);
	ibv_wr_start(qpx);
	if (ibv_wr_complete(qpx) || sq->prod != p0 || fk.doorbells(0) != db)
		FAIL("wr_abort or an empty batch published something");

	/*
	 * With the engine watching the SQ, a batch rings no doorbell; the
	 * next, with NEED_WAKEUP set again, rings one for both.
	 */
	sq->flags = 0;
	n = 16;
	ibv_wr_start(qpx);
	qpx->wr_flags = IBV_SEND_SIGNALED;
	b_overfill(qpx, &n);	/* exactly the ring: 300..315 */
	if (ibv_wr_complete(qpx) || fk.doorbells(0) != db ||
	    sq->prod != p0 + 16)
		FAIL("a full batch while the engine watches");
	sq->flags = SIW2_SQ_NEED_WAKEUP;
	ibv_wr_start(qpx);
	qpx->wr_id = 400;
	ibv_wr_send(qpx);
	if (ibv_wr_complete(qpx) != ENOMEM)
		FAIL("a batch into a full SQ");
	swr = (struct ibv_send_wr){ .wr_id = 401, .opcode = IBV_WR_SEND,
				    .send_flags = IBV_SEND_SIGNALED };
	if (ibv_post_send(qp, &swr, &bad) != ENOMEM)
		FAIL("post_send into a full SQ");
	/* The fake consumes on a doorbell only: ring it by a good batch. */
	sq->cons = sq->prod - 15;	/* pretend one slot came back */
	ibv_wr_start(qpx);
	qpx->wr_id = 402;
	ibv_wr_send(qpx);
	if (ibv_wr_complete(qpx) || fk.doorbells(0) != db + 1)
		FAIL("the batch after NEED_WAKEUP rang no doorbell");
	n = ibv_poll_cq(cq, 16, wc);
	if (n != 16 || wc[0].wr_id != 301 || wc[15].wr_id != 402)
		FAIL("after the doorbell: %d completions, first %llu", n,
		     n ? (unsigned long long)wc[0].wr_id : 0ULL);

	/* ibv_post_send now applies the same rules to the same QP. */
	swr = (struct ibv_send_wr){ .wr_id = 500, .sg_list = (struct ibv_sge *)sg,
				    .num_sge = 1,
				    .opcode = IBV_WR_SEND_WITH_IMM };
	if (ibv_post_send(qp, &swr, &bad) != EINVAL || bad != &swr)
		FAIL("post_send: a send with immediate carrying data");
	swr.opcode = IBV_WR_RDMA_READ;
	swr.num_sge = 2;
	if (ibv_post_send(qp, &swr, &bad) != EINVAL)
		FAIL("post_send: a read into 2 SGEs");
	swr.opcode = IBV_WR_SEND_WITH_IMM;
	swr.num_sge = 0;
	swr.send_flags = IBV_SEND_SIGNALED;
	if (ibv_post_send(qp, &swr, &bad) || ibv_poll_cq(cq, 16, wc) != 1 ||
	    wc[0].wr_id != 500)
		FAIL("post_send: a send with immediate and no data");

	if (ibv_destroy_qp(qp) || ibv_destroy_cq(cq))
		FAIL("qp_ex: destroy QP, CQ");
	return 0;
}

/*
 * Memory windows: the SQEs a bind makes, through ibv_bind_mw() (type 1),
 * ibv_post_send() and ibv_wr_bind_mw() (type 2), and what each refuses.
 */
static int test_mw(struct ibv_context *ctx, struct ibv_pd *pd)
{
	static char buf[8192];
	struct ibv_qp_init_attr_ex init = {
		.cap = { .max_send_wr = 8, .max_send_sge = 1 },
		.qp_type = IBV_QPT_RC,
		.comp_mask = IBV_QP_INIT_ATTR_PD |
			     IBV_QP_INIT_ATTR_SEND_OPS_FLAGS,
		.pd = pd,
		.send_ops_flags = IBV_QP_EX_WITH_SEND |
				  IBV_QP_EX_WITH_BIND_MW,
	};
	struct ibv_mw_bind bind = {
		.wr_id = 600,
		.send_flags = IBV_SEND_SIGNALED,
		.bind_info = { .addr = (uintptr_t)buf + 4096, .length = 100,
			       .mw_access_flags = IBV_ACCESS_REMOTE_WRITE },
	};
	struct ibv_send_wr swr, *bad;
	struct ibv_mw *mw1, *mw2;
	const struct siw2_sqe *e;
	struct ibv_qp_ex *qpx;
	struct ibv_wc wc[4];
	struct ibv_mr *mr;
	struct ibv_cq *cq;
	struct ibv_qp *qp;
	uint32_t rkey;

	mr = ibv_reg_mr(pd, buf, sizeof(buf), IBV_ACCESS_LOCAL_WRITE |
			IBV_ACCESS_MW_BIND);
	mw1 = ibv_alloc_mw(pd, IBV_MW_TYPE_1);
	mw2 = ibv_alloc_mw(pd, IBV_MW_TYPE_2);
	if (!mr || !mw1 || !mw2)
		FAIL("mw: reg_mr, alloc_mw: %s", strerror(errno));
	if (mw1->type != IBV_MW_TYPE_1 || mw1->pd != pd ||
	    mw1->rkey != ((0x400 + mw1->handle) << 8 | 0x30))
		FAIL("mw: alloc_mw fields");
	cq = ibv_create_cq(ctx, 8, NULL, NULL, 0);
	if (!cq)
		FAIL("mw: ibv_create_cq");
	init.send_cq = init.recv_cq = cq;
	qp = ibv_create_qp_ex(ctx, &init);
	qpx = qp ? ibv_qp_to_qp_ex(qp) : NULL;
	if (!qpx || !qpx->wr_bind_mw)
		FAIL("mw: a QP with wr_bind_mw");

	/* Type 1: the next key, the MR's lkey, the rights, a completion. */
	bind.bind_info.mr = mr;
	rkey = mw1->rkey;
	if (ibv_bind_mw(qp, mw1, &bind))
		FAIL("ibv_bind_mw of a type 1 window");
	e = fk.last_sqe();
	if (sqe_is(e, 600, SIW2_OP_BIND_MW, SIW2_WQE_SIGNALED,
		   ibv_inc_rkey(rkey), 0, 0, "bind_mw") || e->num_sge ||
	    e->bind.addr != (uintptr_t)buf + 4096 || e->bind.length != 100 ||
	    e->bind.mr_lkey != mr->lkey ||
	    e->bind.access != IBV_ACCESS_REMOTE_WRITE)
		FAIL("ibv_bind_mw: SQE");
	if (mw1->rkey != ibv_inc_rkey(rkey))
		FAIL("ibv_bind_mw: mw->rkey %#x, want %#x", mw1->rkey,
		     ibv_inc_rkey(rkey));
	if (ibv_poll_cq(cq, 4, wc) != 1 || wc[0].opcode != IBV_WC_BIND_MW ||
	    wc[0].wr_id != 600)
		FAIL("ibv_bind_mw: completion opcode %d", wc[0].opcode);
	/* Unbinding: no MR, no length. */
	bind.bind_info = (struct ibv_mw_bind_info){};
	if (ibv_bind_mw(qp, mw1, &bind) || fk.last_sqe()->bind.length ||
	    fk.last_sqe()->bind.mr_lkey || ibv_poll_cq(cq, 4, wc) != 1)
		FAIL("ibv_bind_mw: unbind");
	if (ibv_bind_mw(qp, mw2, &bind) != EINVAL)
		FAIL("ibv_bind_mw of a type 2 window");

	/* Type 2 through ibv_post_send(); a type 1 window is refused. */
	swr = (struct ibv_send_wr){
		.wr_id = 601, .opcode = IBV_WR_BIND_MW,
		.bind_mw = { .mw = mw2, .rkey = ibv_inc_rkey(mw2->rkey),
			     .bind_info = { .mr = mr, .addr = (uintptr_t)buf,
					    .length = 8192,
					    .mw_access_flags =
						IBV_ACCESS_REMOTE_READ } },
	};
	if (ibv_post_send(qp, &swr, &bad))
		FAIL("post_send: bind of a type 2 window");
	e = fk.last_sqe();
	if (sqe_is(e, 601, SIW2_OP_BIND_MW, 0, ibv_inc_rkey(mw2->rkey), 0, 0,
		   "post_send bind_mw") || e->bind.length != 8192 ||
	    e->bind.access != IBV_ACCESS_REMOTE_READ)
		FAIL("post_send bind_mw: SQE");
	swr.bind_mw.mw = mw1;
	if (ibv_post_send(qp, &swr, &bad) != EINVAL || bad != &swr)
		FAIL("post_send: bind of a type 1 window not refused");

	/* Type 2 through ibv_wr_bind_mw(); a type 1 window is refused. */
	ibv_wr_start(qpx);
	qpx->wr_id = 602;
	qpx->wr_flags = 0;
	ibv_wr_bind_mw(qpx, mw2, mw2->rkey ^ 0x12, &swr.bind_mw.bind_info);
	if (ibv_wr_complete(qpx))
		FAIL("wr_bind_mw of a type 2 window");
	e = fk.last_sqe();
	if (sqe_is(e, 602, SIW2_OP_BIND_MW, 0, mw2->rkey ^ 0x12, 0, 0,
		   "wr_bind_mw") ||
	    e->bind.mr_lkey != mr->lkey || e->bind.addr != (uintptr_t)buf)
		FAIL("wr_bind_mw: SQE");
	ibv_wr_start(qpx);
	ibv_wr_bind_mw(qpx, mw1, mw1->rkey ^ 0x12, &swr.bind_mw.bind_info);
	if (ibv_wr_complete(qpx) != EINVAL)
		FAIL("wr_bind_mw of a type 1 window not refused");
	/* The rkey names the window by its index: another one's is refused. */
	ibv_wr_start(qpx);
	ibv_wr_bind_mw(qpx, mw2, ibv_inc_rkey(mw1->rkey),
		       &swr.bind_mw.bind_info);
	if (ibv_wr_complete(qpx) != EINVAL)
		FAIL("wr_bind_mw with another window's rkey not refused");
	swr.bind_mw.mw = mw2;
	swr.bind_mw.rkey = ibv_inc_rkey(mw1->rkey);
	if (ibv_post_send(qp, &swr, &bad) != EINVAL)
		FAIL("post_send bind with another window's rkey not refused");

	if (ibv_dealloc_mw(mw1) || ibv_dealloc_mw(mw2) ||
	    ibv_destroy_qp(qp) || ibv_destroy_cq(cq) || ibv_dereg_mr(mr))
		FAIL("mw: dealloc, destroy");
	return 0;
}

static int run_verbs(struct ibv_context *ctx)
{
	struct ibv_pd *pd;

	if (find_shim())
		FAIL("fake_uverbs.so is not preloaded");
	pd = ibv_alloc_pd(ctx);
	if (!pd)
		FAIL("ibv_alloc_pd");
	if (test_cq(ctx) || test_qp(ctx, pd) || test_srq(ctx, pd) ||
	    test_mr(pd) || test_threads(ctx, pd) || test_cq_ex(ctx) ||
	    test_qp_ex(ctx, pd) || test_mw(ctx, pd) || test_advise_mr(pd))
		return 1;
	if (ibv_dealloc_pd(pd))
		FAIL("ibv_dealloc_pd");
	if (fk.objects())
		FAIL("%u objects left in the fake kernel", fk.objects());
	return 0;
}

int main(int argc, char **argv)
{
	struct ibv_device **list, *dev = NULL;
	struct ibv_context *ctx;
	int i, n, ret;

	if (argc != 3)
		FAIL("usage: smoke DEV ok|eproto|verbs");

	list = ibv_get_device_list(&n);
	if (!list)
		FAIL("ibv_get_device_list: %s", strerror(errno));
	for (i = 0; i < n; i++)
		if (!strcmp(ibv_get_device_name(list[i]), argv[1]))
			dev = list[i];
	if (!dev)
		FAIL("device %s not found", argv[1]);
	if (dev->transport_type != IBV_TRANSPORT_IWARP)
		FAIL("transport %d, want iWARP", dev->transport_type);

	ctx = ibv_open_device(dev);
	if (!strcmp(argv[2], "eproto")) {
		if (ctx || errno != EPROTO)
			FAIL("open: want NULL/EPROTO, got %p/%s", (void *)ctx,
			     strerror(errno));
		ibv_free_device_list(list);
		printf("smoke: %s eproto: PASS\n", argv[1]);
		return 0;
	}
	if (!ctx)
		FAIL("ibv_open_device: %s", strerror(errno));

	ret = !strcmp(argv[2], "verbs") ? run_verbs(ctx) : run_ok(ctx);
	if (ibv_close_device(ctx))
		FAIL("ibv_close_device");
	ibv_free_device_list(list);
	if (!ret)
		printf("smoke: %s %s: PASS\n", argv[1], argv[2]);
	return ret;
}
