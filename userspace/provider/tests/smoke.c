// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Drives libsiw2 through the public verbs API against fake_uverbs.so.
 *
 *   smoke DEV ok      open DEV, query device and port, PD round trip,
 *                     an unimplemented verb fails with EOPNOTSUPP
 *   smoke DEV eproto  opening DEV fails with EPROTO (ABI mismatch)
 *   smoke DEV verbs   CQ, QP, SRQ and MR verbs and the shared-ring data
 *                     path against the shim's fake kernel (see
 *                     fake_uverbs.c), which the test inspects through
 *                     the shim's fake_uverbs_*() functions
 */
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

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
	return fk.qp_ring && fk.cq_ring && fk.cq_push && fk.doorbells &&
	       fk.last_sqe && fk.objects && fk.srq_ring && fk.srq_rqe ?
	       0 : -1;
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
	struct ibv_mr *mr;

	mr = ibv_reg_mr(pd, buf, sizeof(buf), IBV_ACCESS_LOCAL_WRITE);
	if (!mr)
		FAIL("ibv_reg_mr: %s", strerror(errno));
	if (mr->lkey != 0x100 + mr->handle || mr->rkey != 0x200 + mr->handle ||
	    mr->addr != buf || mr->length != sizeof(buf) || mr->pd != pd)
		FAIL("MR fields");
	if (ibv_dereg_mr(mr))
		FAIL("ibv_dereg_mr");
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
	    test_mr(pd) || test_threads(ctx, pd))
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
