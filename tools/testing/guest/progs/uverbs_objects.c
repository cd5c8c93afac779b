// SPDX-License-Identifier: GPL-2.0
/*
 * siw2's user verbs objects through the raw uverbs interface: write()
 * commands on /dev/infiniband/uverbsN and mmap() of the shared rings,
 * exactly as <rdma/siw2-abi.h> describes them. It needs no provider, so
 * it tests the kernel side on its own: the provider (userspace/provider)
 * is tested through libibverbs by the same suite.
 *
 *   uverbs_objects IBDEV            the object tests (as root)
 *   uverbs_objects IBDEV memlock    reg_mr against RLIMIT_MEMLOCK (run as
 *                                   an unprivileged user with ulimit -l 64)
 *   uverbs_objects IBDEV irqsoff BOUND_US
 *                                   full rings flushed and a full CQ
 *                                   resized: siw2's longest lock hold
 *                                   with interrupts off meanwhile
 *                                   (debugfs irqoff_max_ns) must stay
 *                                   below BOUND_US
 *
 * Prints "ok   - ..." or "FAIL - ..." per check; exits 1 on any failure.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <rdma/ib_user_verbs.h>
#include <rdma/siw2-abi.h>

#define IB_QPS_RESET 0
#define IB_QPS_INIT 1
#define IB_QPS_RTR 2
#define IB_QPS_RTS 3
#define IB_QPS_ERR 6
#define WC_WR_FLUSH_ERR 5
#define EVENT_QP_FATAL 1

#define QP_STATE (1 << 0)
#define QP_ACCESS_FLAGS (1 << 3)
#define QP_PKEY_INDEX (1 << 4)
#define QP_PORT (1 << 5)
#define QP_AV (1 << 7)
#define QP_PATH_MTU (1 << 8)
#define QP_TIMEOUT (1 << 9)
#define QP_RETRY_CNT (1 << 10)
#define QP_RNR_RETRY (1 << 11)
#define QP_RQ_PSN (1 << 12)
#define QP_MAX_QP_RD_ATOMIC (1 << 13)
#define QP_MIN_RNR_TIMER (1 << 15)
#define QP_SQ_PSN (1 << 16)
#define QP_MAX_DEST_RD_ATOMIC (1 << 17)
#define QP_DEST_QPN (1 << 20)

#define SRQ_MAX_WR 1
#define SRQ_LIMIT 2

static int fails, passes;

static void check(int ok, const char *fmt, ...)
{
	va_list ap;

	printf(ok ? "ok   - " : "FAIL - ");
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	fflush(stdout);
	if (ok)
		passes++;
	else
		fails++;
}

static int fd;
static long page;

/*
 * A legacy uverbs command: header, core command, driver input; the
 * response (core part then driver part) goes to 'resp'.
 */
static int cmd(unsigned int op, void *core, size_t core_len,
	       const void *drv_in, size_t drv_in_len,
	       void *resp, size_t resp_len)
{
	char buf[1024];
	struct ib_uverbs_cmd_hdr hdr = {
		.command = op,
		.in_words = (sizeof(hdr) + core_len + drv_in_len) / 4,
		.out_words = resp_len / 4,
	};
	size_t len = sizeof(hdr) + core_len + drv_in_len;

	if (resp && core_len >= 8)
		*(uint64_t *)core = (uintptr_t)resp;
	memcpy(buf, &hdr, sizeof(hdr));
	memcpy(buf + sizeof(hdr), core, core_len);
	if (drv_in_len)
		memcpy(buf + sizeof(hdr) + core_len, drv_in, drv_in_len);
	if (write(fd, buf, len) != (ssize_t)len)
		return -errno;
	return 0;
}

static int open_dev(const char *ibdev)
{
	char path[512], name[64];
	struct dirent *d;
	DIR *dir;
	FILE *f;

	dir = opendir("/sys/class/infiniband_verbs");
	if (!dir)
		return -1;
	while ((d = readdir(dir))) {
		if (strncmp(d->d_name, "uverbs", 6))
			continue;
		snprintf(path, sizeof(path),
			 "/sys/class/infiniband_verbs/%s/ibdev", d->d_name);
		f = fopen(path, "r");
		if (!f)
			continue;
		if (fscanf(f, "%63s", name) == 1 && !strcmp(name, ibdev)) {
			fclose(f);
			snprintf(path, sizeof(path), "/dev/infiniband/%s",
				 d->d_name);
			closedir(dir);
			return open(path, O_RDWR | O_CLOEXEC);
		}
		fclose(f);
	}
	closedir(dir);
	return -1;
}

struct ctx {
	int async_fd;
	unsigned int nvec;
	uint32_t pd;
};

static int get_context(struct ctx *c)
{
	struct {
		struct ib_uverbs_get_context_resp core;
		struct siw2_uresp_alloc_ctx drv;
	} resp = {};
	struct ib_uverbs_get_context core = {};
	int ret;

	ret = cmd(IB_USER_VERBS_CMD_GET_CONTEXT, &core, sizeof(core), NULL, 0,
		  &resp, sizeof(resp));
	check(!ret && resp.drv.abi_version == SIW2_ABI_VERSION,
	      "context: abi version %u", resp.drv.abi_version);
	c->async_fd = resp.core.async_fd;
	c->nvec = resp.core.num_comp_vectors;
	return ret;
}

static uint32_t alloc_pd(void)
{
	struct ib_uverbs_alloc_pd_resp resp = {};
	struct ib_uverbs_alloc_pd core = {};

	if (cmd(IB_USER_VERBS_CMD_ALLOC_PD, &core, sizeof(core), NULL, 0,
		&resp, sizeof(resp)))
		return ~0U;
	return resp.pd_handle;
}

static void dealloc_pd(uint32_t pd)
{
	struct ib_uverbs_dealloc_pd core = { .pd_handle = pd };

	check(!cmd(IB_USER_VERBS_CMD_DEALLOC_PD, &core, sizeof(core), NULL, 0,
		   NULL, 0), "pd: dealloc");
}

/* A mapped ring. */
struct ring {
	struct siw2_ring_ctl *ctl;
	void *entries;
	size_t len;
	uint64_t key;
	uint32_t size;
};

static int map_ring(struct ring *r, uint64_t key, uint32_t size,
		    size_t esize)
{
	r->len = (SIW2_RING_CTL_SIZE + size * esize + page - 1) & ~(page - 1);
	r->size = size;
	r->key = key;
	r->ctl = mmap(NULL, r->len, PROT_READ | PROT_WRITE, MAP_SHARED, fd,
		      key);
	if (r->ctl == MAP_FAILED) {
		r->ctl = NULL;
		return -errno;
	}
	r->entries = (char *)r->ctl + SIW2_RING_CTL_SIZE;
	return 0;
}

static void unmap_ring(struct ring *r)
{
	if (r->ctl)
		munmap(r->ctl, r->len);
	r->ctl = NULL;
}

static uint32_t load_acq(uint32_t *p)
{
	return __atomic_load_n(p, __ATOMIC_ACQUIRE);
}

static void store_rel(uint32_t *p, uint32_t v)
{
	__atomic_store_n(p, v, __ATOMIC_RELEASE);
}

struct cq {
	uint32_t handle;
	struct ring r;
	uint32_t cons;
};

static int create_cq(struct cq *cq, uint32_t cqe, uint32_t vec)
{
	struct {
		struct ib_uverbs_create_cq_resp core;
		struct siw2_uresp_create_cq drv;
	} resp = {};
	struct ib_uverbs_create_cq core = {
		.cqe = cqe,
		.comp_vector = vec,
		.comp_channel = -1,
	};
	int ret;

	memset(cq, 0, sizeof(*cq));
	ret = cmd(IB_USER_VERBS_CMD_CREATE_CQ, &core, sizeof(core), NULL, 0,
		  &resp, sizeof(resp));
	if (ret)
		return ret;
	cq->handle = resp.core.cq_handle;
	if (resp.core.cqe != resp.drv.num_cqe)
		return -EPROTO;
	return map_ring(&cq->r, resp.drv.mmap_key, resp.drv.num_cqe,
			sizeof(struct siw2_cqe));
}

static int destroy_cq(struct cq *cq)
{
	struct ib_uverbs_destroy_cq_resp resp;
	struct ib_uverbs_destroy_cq core = { .cq_handle = cq->handle };

	unmap_ring(&cq->r);
	return cmd(IB_USER_VERBS_CMD_DESTROY_CQ, &core, sizeof(core), NULL, 0,
		   &resp, sizeof(resp));
}

/* Polls one CQE as a provider would; returns 0 if there is none. */
static int poll_cqe(struct cq *cq, struct siw2_cqe *out)
{
	uint32_t prod = load_acq(&cq->r.ctl->prod);

	if (prod == cq->cons)
		return 0;
	memcpy(out, (char *)cq->r.entries +
	       (cq->cons & (cq->r.size - 1)) * sizeof(*out), sizeof(*out));
	store_rel(&cq->r.ctl->cons, ++cq->cons);
	return 1;
}

static int resize_cq(struct cq *cq, uint32_t cqe)
{
	struct {
		struct ib_uverbs_resize_cq_resp core;
		struct siw2_uresp_resize_cq drv;
	} resp = {};
	struct ib_uverbs_resize_cq core = { .cq_handle = cq->handle,
					    .cqe = cqe };
	struct ring r;
	int ret;

	ret = cmd(IB_USER_VERBS_CMD_RESIZE_CQ, &core, sizeof(core), NULL, 0,
		  &resp, sizeof(resp));
	if (ret)
		return ret;
	ret = map_ring(&r, resp.drv.mmap_key, resp.drv.num_cqe,
		       sizeof(struct siw2_cqe));
	if (ret)
		return ret;
	unmap_ring(&cq->r);
	cq->r = r;
	return 0;
}

struct qp {
	uint32_t handle, qpn;
	struct ring sq, rq;
	uint32_t sq_prod, rq_prod;
};

static int create_qp(struct qp *qp, uint32_t pd, struct cq *cq,
		     uint32_t srq, int is_srq, uint32_t wr, uint8_t type,
		     uint32_t sge, uint32_t inl)
{
	struct {
		struct ib_uverbs_create_qp_resp core;
		struct siw2_uresp_create_qp drv;
	} resp = {};
	struct ib_uverbs_create_qp core = {
		.pd_handle = pd,
		.send_cq_handle = cq->handle,
		.recv_cq_handle = cq->handle,
		.srq_handle = srq,
		.max_send_wr = wr,
		.max_recv_wr = is_srq ? 0 : wr,
		.max_send_sge = sge,
		.max_recv_sge = sge,
		.max_inline_data = inl,
		.qp_type = type,
		.is_srq = is_srq,
	};
	int ret;

	memset(qp, 0, sizeof(*qp));
	ret = cmd(IB_USER_VERBS_CMD_CREATE_QP, &core, sizeof(core), NULL, 0,
		  &resp, sizeof(resp));
	if (ret)
		return ret;
	qp->handle = resp.core.qp_handle;
	qp->qpn = resp.core.qpn;
	if (resp.drv.qp_id != qp->qpn || resp.drv.num_sqe < wr ||
	    resp.core.max_send_wr != resp.drv.num_sqe ||
	    (!is_srq && resp.drv.num_rqe < wr) ||
	    (is_srq && (resp.drv.num_rqe || resp.drv.rq_key)))
		return -EPROTO;
	ret = map_ring(&qp->sq, resp.drv.sq_key, resp.drv.num_sqe,
		       sizeof(struct siw2_sqe));
	if (ret || is_srq)
		return ret;
	return map_ring(&qp->rq, resp.drv.rq_key, resp.drv.num_rqe,
			sizeof(struct siw2_rqe));
}

static int destroy_qp(struct qp *qp)
{
	struct ib_uverbs_destroy_qp_resp resp;
	struct ib_uverbs_destroy_qp core = { .qp_handle = qp->handle };

	unmap_ring(&qp->sq);
	unmap_ring(&qp->rq);
	return cmd(IB_USER_VERBS_CMD_DESTROY_QP, &core, sizeof(core), NULL, 0,
		   &resp, sizeof(resp));
}

static int modify_qp(struct qp *qp, uint8_t state, uint32_t mask)
{
	struct ib_uverbs_modify_qp core = {
		.dest.port_num = 1,
		.qp_handle = qp->handle,
		.attr_mask = QP_STATE | mask,
		.qp_state = state,
		.port_num = 1,
		.qp_access_flags = 1 | 2,	/* local and remote write */
		.path_mtu = 3,
		.max_rd_atomic = 4,
		.max_dest_rd_atomic = 4,
		.timeout = 14,
		.retry_cnt = 7,
		.rnr_retry = 7,
		.sq_psn = 0x123,
		.rq_psn = 0x456,
		.dest_qp_num = 0x77,
	};

	return cmd(IB_USER_VERBS_CMD_MODIFY_QP, &core, sizeof(core), NULL, 0,
		   NULL, 0);
}

/* A move to @state that sets one attribute (@mask, one of QP_*) to @v. */
static int set_attr(struct qp *qp, uint8_t state, uint32_t mask, uint8_t v)
{
	struct ib_uverbs_modify_qp core = {
		.qp_handle = qp->handle,
		.attr_mask = QP_STATE | mask,
		.qp_state = state,
	};

	switch (mask) {
	case QP_PATH_MTU:
		core.path_mtu = v;
		break;
	case QP_TIMEOUT:
		core.timeout = v;
		break;
	case QP_RETRY_CNT:
		core.retry_cnt = v;
		break;
	case QP_RNR_RETRY:
		core.rnr_retry = v;
		break;
	default:
		core.min_rnr_timer = v;
		break;
	}
	return cmd(IB_USER_VERBS_CMD_MODIFY_QP, &core, sizeof(core), NULL, 0,
		   NULL, 0);
}

static int query_qp(struct qp *qp, struct ib_uverbs_query_qp_resp *resp)
{
	struct ib_uverbs_query_qp core = { .qp_handle = qp->handle,
					   .attr_mask = ~0U };

	memset(resp, 0xa5, sizeof(*resp));
	return cmd(IB_USER_VERBS_CMD_QUERY_QP, &core, sizeof(core), NULL, 0,
		   resp, sizeof(*resp));
}

static int qp_state(struct qp *qp)
{
	struct ib_uverbs_query_qp_resp resp;

	return query_qp(qp, &resp) ? -1 : resp.qp_state;
}

/* The doorbells: post_send / post_recv without work requests. */
static int ring_sq(struct qp *qp)
{
	struct ib_uverbs_post_send_resp resp;
	struct ib_uverbs_post_send core = {
		.qp_handle = qp->handle,
		.wqe_size = sizeof(struct ib_uverbs_send_wr),
	};

	return cmd(IB_USER_VERBS_CMD_POST_SEND, &core, sizeof(core), NULL, 0,
		   &resp, sizeof(resp));
}

static int ring_rq(struct qp *qp)
{
	struct ib_uverbs_post_recv_resp resp;
	struct ib_uverbs_post_recv core = {
		.qp_handle = qp->handle,
		.wqe_size = sizeof(struct ib_uverbs_recv_wr),
	};

	return cmd(IB_USER_VERBS_CMD_POST_RECV, &core, sizeof(core), NULL, 0,
		   &resp, sizeof(resp));
}

/* Posting as a provider does: fill, publish, full barrier, check flags. */
static int post_sqe(struct qp *qp, uint64_t wr_id, uint8_t op)
{
	struct siw2_sqe *e = (struct siw2_sqe *)qp->sq.entries +
			     (qp->sq_prod & (qp->sq.size - 1));

	memset(e, 0, sizeof(*e));
	e->wr_id = wr_id;
	e->opcode = op;
	store_rel(&qp->sq.ctl->prod, ++qp->sq_prod);
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	if (__atomic_load_n(&qp->sq.ctl->flags, __ATOMIC_RELAXED) &
	    SIW2_SQ_NEED_WAKEUP)
		return ring_sq(qp);
	return 0;
}

static int post_rqe(struct qp *qp, uint64_t wr_id, int doorbell)
{
	struct siw2_rqe *e = (struct siw2_rqe *)qp->rq.entries +
			     (qp->rq_prod & (qp->rq.size - 1));

	memset(e, 0, sizeof(*e));
	e->wr_id = wr_id;
	store_rel(&qp->rq.ctl->prod, ++qp->rq_prod);
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	if (doorbell &&
	    (__atomic_load_n(&qp->rq.ctl->flags, __ATOMIC_RELAXED) &
	     SIW2_RQ_NEED_WAKEUP))
		return ring_rq(qp);
	return 0;
}

static int async_event(struct ctx *c, uint32_t *type)
{
	struct ib_uverbs_async_event_desc ev;
	struct pollfd p = { .fd = c->async_fd, .events = POLLIN };

	if (poll(&p, 1, 2000) != 1)
		return -ETIMEDOUT;
	if (read(c->async_fd, &ev, sizeof(ev)) != sizeof(ev))
		return -EIO;
	*type = ev.event_type;
	return 0;
}

static void test_cq(struct ctx *c)
{
	struct siw2_cqe e;
	struct cq cq;
	int ret;

	ret = create_cq(&cq, 10, 0);
	check(!ret && cq.r.size == 16, "cq: create 10 -> 16 entries, mapped");
	if (ret)
		return;
	check(cq.r.ctl->prod == 0 && cq.r.ctl->cons == 0 &&
	      cq.r.ctl->flags == 0, "cq: ring starts empty and unarmed");
	check(!poll_cqe(&cq, &e), "cq: nothing to poll");
	check(mmap(NULL, cq.r.len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0) ==
	      MAP_FAILED, "cq: offset 0 is not a key");
	check(mmap(NULL, cq.r.len, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd,
		   cq.r.key) == MAP_FAILED, "cq: a private mapping is refused");
	check(mmap(NULL, cq.r.len + page, PROT_READ | PROT_WRITE, MAP_SHARED,
		   fd, cq.r.key) == MAP_FAILED,
	      "cq: a mapping longer than the ring is refused");
	check(destroy_cq(&cq) == 0, "cq: destroy");

	check(create_cq(&cq, 65537, 0) == -EINVAL, "cq: 65537 entries refused");
	check(create_cq(&cq, 0, 0) == -EINVAL, "cq: 0 entries refused");
	check(create_cq(&cq, 8, c->nvec) == -EINVAL,
	      "cq: vector %u of %u refused", c->nvec, c->nvec);
	ret = create_cq(&cq, 8, c->nvec - 1);
	check(!ret, "cq: last vector %u", c->nvec - 1);
	if (!ret)
		destroy_cq(&cq);
	ret = create_cq(&cq, 65536, 0);
	check(!ret && cq.r.size == 65536, "cq: 65536 entries (max_cqe)");
	if (!ret)
		destroy_cq(&cq);
}

static void test_qp(struct ctx *c)
{
	struct ib_uverbs_query_qp_resp q;
	struct siw2_cqe e[8];
	uint32_t ev;
	struct cq cq;
	struct qp qp;
	int i, n, ret;

	if (create_cq(&cq, 8, 0)) {
		check(0, "qp: a CQ");
		return;
	}
	check(create_qp(&qp, c->pd, &cq, 0, 0, 16385, 2, 1, 0) == -EINVAL,
	      "qp: 16385 WRs refused");
	check(create_qp(&qp, c->pd, &cq, 0, 0, 8, 2, 7, 0) == -EINVAL,
	      "qp: 7 SGEs refused");
	check(create_qp(&qp, c->pd, &cq, 0, 0, 8, 2, 1, 193) == -EINVAL,
	      "qp: 193 inline octets refused");
	check(create_qp(&qp, c->pd, &cq, 0, 0, 8, 4, 1, 0) == -EOPNOTSUPP,
	      "qp: UD refused");
	check(create_qp(&qp, c->pd, &cq, 0, 0, 8, 3, 1, 0) == -EOPNOTSUPP,
	      "qp: UC refused");

	ret = create_qp(&qp, c->pd, &cq, 0, 0, 6, 2, 2, 64);
	check(!ret && qp.sq.size == 8 && qp.rq.size == 8,
	      "qp: RC create, both rings mapped (8/8)");
	if (ret)
		goto out_cq;
	check(qp.sq.ctl->flags & SIW2_SQ_NEED_WAKEUP,
	      "qp: SQ asks for doorbells (no send engine)");
	check(qp.rq.ctl->flags == 0, "qp: RQ needs no doorbell");
	ret = query_qp(&qp, &q);
	check(!ret && q.qp_state == IB_QPS_INIT && q.max_send_wr == 8 &&
	      q.max_inline_data == 192, "qp: query: INIT, caps (%d %u %u)",
	      q.qp_state, q.max_send_wr, q.max_inline_data);

	check(modify_qp(&qp, IB_QPS_RESET, 0) == 0 &&
	      qp_state(&qp) == IB_QPS_RESET, "qp: INIT -> RESET");
	check(modify_qp(&qp, IB_QPS_INIT, QP_PKEY_INDEX | QP_PORT |
			QP_ACCESS_FLAGS) == 0 && qp_state(&qp) == IB_QPS_INIT,
	      "qp: RESET -> INIT (IB attributes)");
	check(modify_qp(&qp, IB_QPS_RTS, 0) == -EINVAL, "qp: INIT -> RTS refused");
	check(modify_qp(&qp, IB_QPS_RTR, QP_AV | QP_PATH_MTU | QP_DEST_QPN |
			QP_RQ_PSN | QP_MAX_DEST_RD_ATOMIC |
			QP_MIN_RNR_TIMER) == 0 && qp_state(&qp) == IB_QPS_RTR,
	      "qp: INIT -> RTR (IB attributes)");
	check(!query_qp(&qp, &q) && q.max_dest_rd_atomic == 4 &&
	      q.rq_psn == 0x456 && q.qp_access_flags == 3,
	      "qp: RTR attributes reported");
	/* Only the CM moves an iWARP QP to RTS, with its connection. */
	ret = modify_qp(&qp, IB_QPS_RTS, QP_TIMEOUT | QP_RETRY_CNT |
			QP_RNR_RETRY | QP_SQ_PSN | QP_MAX_QP_RD_ATOMIC);
	check(ret == -EINVAL && qp_state(&qp) == IB_QPS_RTR,
	      "qp: rts without a connection: RTR -> RTS refused (%d)", ret);

	/* Work for the flush: 3 receives, 2 sends, no doorbells. */
	for (i = 0; i < 3; i++)
		post_rqe(&qp, 100 + i, 1);
	post_sqe(&qp, 200, SIW2_OP_SEND);
	post_sqe(&qp, 201, SIW2_OP_WRITE);
	check(!poll_cqe(&cq, e), "qp: nothing completes without a peer");
	check(modify_qp(&qp, IB_QPS_ERR, 0) == 0 &&
	      qp_state(&qp) == IB_QPS_ERR, "qp: RTR -> ERR");
	for (n = 0; n < 8 && poll_cqe(&cq, &e[n]); n++)
		;
	check(n == 5 && e[0].wr_id == 200 && e[1].wr_id == 201 &&
	      e[1].opcode == SIW2_WC_WRITE && e[2].wr_id == 100 &&
	      e[4].wr_id == 102 && e[4].opcode == SIW2_WC_RECV &&
	      e[0].status == WC_WR_FLUSH_ERR && e[4].qp_num == qp.qpn,
	      "qp: ERR flushes 2 sends and 3 receives into the user CQ (%d)",
	      n);
	check(qp.sq.ctl->cons == 2 && qp.rq.ctl->cons == 3,
	      "qp: the kernel consumed both rings");
	check(qp.rq.ctl->flags & SIW2_RQ_NEED_WAKEUP,
	      "qp: in ERR the RQ asks for doorbells");
	ret = post_rqe(&qp, 300, 1);
	check(!ret && poll_cqe(&cq, e) && e[0].wr_id == 300 &&
	      e[0].status == WC_WR_FLUSH_ERR,
	      "qp: an RQE posted in ERR flushes on the RQ doorbell (%d)", ret);
	ret = post_sqe(&qp, 301, SIW2_OP_SEND);
	check(!ret && poll_cqe(&cq, e) && e[0].wr_id == 301,
	      "qp: an SQE posted in ERR flushes on the SQ doorbell (%d)", ret);

	/* Resize with 2 unpolled CQEs: they move, the indices continue. */
	post_rqe(&qp, 400, 1);
	post_sqe(&qp, 401, SIW2_OP_SEND);
	check(resize_cq(&cq, 1) == -EINVAL,
	      "resize: below the 2 unpolled CQEs refused");
	ret = resize_cq(&cq, 30);
	check(!ret && cq.r.size == 32 && cq.r.ctl->prod == cq.cons + 2,
	      "resize: 8 -> 32, new mapping, indices continue");
	check(poll_cqe(&cq, &e[0]) && poll_cqe(&cq, &e[1]) &&
	      e[0].wr_id == 400 && e[1].wr_id == 401,
	      "resize: the unpolled CQEs moved in order");

	check(modify_qp(&qp, IB_QPS_RESET, 0) == 0 &&
	      qp_state(&qp) == IB_QPS_RESET &&
	      !(qp.rq.ctl->flags & SIW2_RQ_NEED_WAKEUP), "qp: ERR -> RESET");
	check(modify_qp(&qp, IB_QPS_INIT, QP_PKEY_INDEX | QP_PORT |
			QP_ACCESS_FLAGS) == 0, "qp: RESET -> INIT again");

	/*
	 * Attributes outside their IB fields' ranges are refused, in the
	 * transitions that take them (INIT -> RTR; RTR -> RTS, which a
	 * consumer is refused anyway, and RTS -> RTS).
	 */
	check(set_attr(&qp, IB_QPS_RTR, QP_PATH_MTU, 0) == -EINVAL &&
	      set_attr(&qp, IB_QPS_RTR, QP_PATH_MTU, 6) == -EINVAL &&
	      set_attr(&qp, IB_QPS_RTR, QP_MIN_RNR_TIMER, 32) == -EINVAL &&
	      qp_state(&qp) == IB_QPS_INIT,
	      "qp: path MTU or RNR timer out of range refused");
	check(set_attr(&qp, IB_QPS_RTR, QP_PATH_MTU, 5) == 0,
	      "qp: INIT -> RTR with the largest path MTU");
	check(set_attr(&qp, IB_QPS_RTS, QP_TIMEOUT, 32) == -EINVAL &&
	      set_attr(&qp, IB_QPS_RTS, QP_RETRY_CNT, 8) == -EINVAL &&
	      set_attr(&qp, IB_QPS_RTS, QP_RNR_RETRY, 8) == -EINVAL &&
	      qp_state(&qp) == IB_QPS_RTR,
	      "qp: timeout or retry counts out of range refused");
	check(set_attr(&qp, IB_QPS_RTS, QP_TIMEOUT, 31) == -EINVAL &&
	      qp_state(&qp) == IB_QPS_RTR,
	      "qp: rts without a connection: refused with attributes in range");

	/* A lying producer index: the QP goes to ERR, QP_FATAL once. */
	store_rel(&qp.sq.ctl->prod, qp.sq_prod + 1000);
	modify_qp(&qp, IB_QPS_ERR, 0);
	ret = async_event(c, &ev);
	check(!ret && ev == EVENT_QP_FATAL,
	      "qp: a corrupt SQ index raises IB_EVENT_QP_FATAL (%d)", ret);
	check(qp_state(&qp) == IB_QPS_ERR && ring_sq(&qp) == 0 &&
	      async_event(c, &ev) == -ETIMEDOUT,
	      "qp: stays in ERR, no second event");

	/* RESET empties the ring whatever its indices say: it works again. */
	check(modify_qp(&qp, IB_QPS_RESET, 0) == 0 &&
	      qp.sq.ctl->cons == qp.sq_prod + 1000,
	      "qp: RESET starts the SQ at the producer's index");
	qp.sq_prod += 1000;
	check(modify_qp(&qp, IB_QPS_INIT, QP_PKEY_INDEX | QP_PORT |
			QP_ACCESS_FLAGS) == 0 &&
	      modify_qp(&qp, IB_QPS_ERR, 0) == 0 &&
	      async_event(c, &ev) == -ETIMEDOUT,
	      "qp: RESET -> INIT -> ERR after a corrupt index, no event");
	ret = post_sqe(&qp, 500, SIW2_OP_SEND);
	check(!ret && poll_cqe(&cq, e) && e[0].wr_id == 500 &&
	      e[0].status == WC_WR_FLUSH_ERR,
	      "qp: the SQ takes work again after RESET (%d)", ret);
	check(modify_qp(&qp, IB_QPS_RESET, 0) == 0 &&
	      modify_qp(&qp, IB_QPS_INIT, QP_PKEY_INDEX | QP_PORT |
			QP_ACCESS_FLAGS) == 0, "qp: RESET -> INIT once more");
	store_rel(&qp.sq.ctl->prod, qp.sq_prod + 1000);
	modify_qp(&qp, IB_QPS_ERR, 0);
	ret = async_event(c, &ev);
	check(!ret && ev == EVENT_QP_FATAL,
	      "qp: a corrupt index after RESET raises QP_FATAL again (%d)",
	      ret);
	check(destroy_qp(&qp) == 0, "qp: destroy");
out_cq:
	check(destroy_cq(&cq) == 0, "cq: destroy");
}

static void test_cq_overflow(struct ctx *c)
{
	struct siw2_cqe e;
	uint32_t ev;
	struct cq cq;
	struct qp qp;
	int i, n;

	if (create_cq(&cq, 2, 0) || create_qp(&qp, c->pd, &cq, 0, 0, 8, 2, 1, 0)) {
		check(0, "overflow: CQ and QP");
		return;
	}
	modify_qp(&qp, IB_QPS_ERR, 0);
	for (i = 0; i < 4; i++)
		post_sqe(&qp, i, SIW2_OP_SEND);
	check(async_event(c, &ev) == 0 && ev == 0 /* IB_EVENT_CQ_ERR */,
	      "overflow: IB_EVENT_CQ_ERR");
	for (n = 0; poll_cqe(&cq, &e); n++)
		;
	check(n == 2, "overflow: the ring holds exactly its 2 CQEs");
	n = resize_cq(&cq, 16);
	check(n == -EIO, "overflow: a CQ in error cannot be resized (%d)", n);
	/* A consumer index beyond prod is a corrupt ring, not a crash. */
	store_rel(&cq.r.ctl->cons, cq.cons + 100);
	post_sqe(&qp, 9, SIW2_OP_SEND);
	check(1, "overflow: a corrupt consumer index is survived");
	destroy_qp(&qp);
	destroy_cq(&cq);
}

static void test_srq(struct ctx *c)
{
	struct {
		struct ib_uverbs_create_srq_resp core;
		struct siw2_uresp_create_srq drv;
	} resp = {};
	struct ib_uverbs_create_srq core = { .pd_handle = c->pd, .max_wr = 10,
					     .max_sge = 2 };
	struct ib_uverbs_modify_srq mod = {};
	struct ib_uverbs_query_srq qry = {};
	struct ib_uverbs_query_srq_resp qresp = {};
	struct ib_uverbs_destroy_srq des = {};
	struct ib_uverbs_destroy_srq_resp dresp;
	struct ring r = {};
	struct cq cq;
	struct qp qp;
	int ret;

	ret = cmd(IB_USER_VERBS_CMD_CREATE_SRQ, &core, sizeof(core), NULL, 0,
		  &resp, sizeof(resp));
	check(!ret && resp.drv.num_rqe == 16 && resp.core.max_wr == 16,
	      "srq: create 10 -> 16");
	if (ret)
		return;
	check(!map_ring(&r, resp.drv.rq_key, resp.drv.num_rqe,
			sizeof(struct siw2_rqe)), "srq: ring mapped");
	mod.srq_handle = resp.core.srq_handle;
	mod.attr_mask = SRQ_LIMIT;
	mod.srq_limit = 5;
	check(!cmd(IB_USER_VERBS_CMD_MODIFY_SRQ, &mod, sizeof(mod), NULL, 0,
		   NULL, 0), "srq: arm limit 5");
	qry.srq_handle = resp.core.srq_handle;
	ret = cmd(IB_USER_VERBS_CMD_QUERY_SRQ, &qry, sizeof(qry), NULL, 0,
		  &qresp, sizeof(qresp));
	check(!ret && qresp.srq_limit == 5 && qresp.max_wr == 16,
	      "srq: query (limit %u, max_wr %u)", qresp.srq_limit,
	      qresp.max_wr);
	mod.srq_limit = 100;
	check(cmd(IB_USER_VERBS_CMD_MODIFY_SRQ, &mod, sizeof(mod), NULL, 0,
		  NULL, 0) == -EINVAL, "srq: limit 100 refused");
	mod.attr_mask = SRQ_MAX_WR;
	mod.max_wr = 64;
	check(cmd(IB_USER_VERBS_CMD_MODIFY_SRQ, &mod, sizeof(mod), NULL, 0,
		  NULL, 0) == -EOPNOTSUPP, "srq: resize not supported");

	if (!create_cq(&cq, 8, 0)) {
		ret = create_qp(&qp, c->pd, &cq, resp.core.srq_handle, 1, 8, 2,
				1, 0);
		check(!ret, "srq: QP on the SRQ, no RQ ring");
		if (!ret) {
			ret = ring_rq(&qp);
			check(!ret, "srq: an RQ doorbell is harmless (%d)", ret);
			destroy_qp(&qp);
		}
		destroy_cq(&cq);
	}
	unmap_ring(&r);
	des.srq_handle = resp.core.srq_handle;
	check(!cmd(IB_USER_VERBS_CMD_DESTROY_SRQ, &des, sizeof(des), NULL, 0,
		   &dresp, sizeof(dresp)), "srq: destroy");
}

static int reg_mr(uint32_t pd, void *buf, size_t len, uint32_t access,
		  uint32_t *handle, uint32_t *lkey)
{
	struct ib_uverbs_reg_mr_resp resp = {};
	struct ib_uverbs_reg_mr core = {
		.start = (uintptr_t)buf,
		.length = len,
		.hca_va = (uintptr_t)buf,
		.pd_handle = pd,
		.access_flags = access,
	};
	int ret;

	ret = cmd(IB_USER_VERBS_CMD_REG_MR, &core, sizeof(core), NULL, 0,
		  &resp, sizeof(resp));
	*handle = resp.mr_handle;
	if (lkey)
		*lkey = resp.lkey;
	return ret ? ret : (resp.lkey == resp.rkey ? 0 : -EPROTO);
}

static int dereg_mr(uint32_t handle)
{
	struct ib_uverbs_dereg_mr core = { .mr_handle = handle };

	return cmd(IB_USER_VERBS_CMD_DEREG_MR, &core, sizeof(core), NULL, 0,
		   NULL, 0);
}

static void test_mr(struct ctx *c)
{
	size_t len = 64 * 1024;
	uint32_t h, lkey;
	void *buf;

	buf = aligned_alloc(page, len);
	memset(buf, 0, len);
	check(reg_mr(c->pd, buf, len, 1 | 2 | 4, &h, &lkey) == 0 && lkey >> 8,
	      "mr: reg 64 KiB, STag 0x%x", lkey);
	check(dereg_mr(h) == 0, "mr: dereg");
	check(reg_mr(c->pd, (char *)buf + 100, 5000, 4, &h, NULL) == 0 &&
	      dereg_mr(h) == 0, "mr: unaligned read-only region");
	check(reg_mr(c->pd, buf, len, 2, &h, NULL) == -EINVAL,
	      "mr: remote write without local write refused");
	check(reg_mr(c->pd, buf, 0, 1, &h, NULL) == -EINVAL,
	      "mr: zero length refused");
	/* siw2 has memory windows (issue 43): the right is taken. */
	check(reg_mr(c->pd, buf, len, 1 << 4 /* MW_BIND */, &h, NULL) == 0 &&
	      dereg_mr(h) == 0, "mr: memory window binding taken");
	free(buf);
}

/* Run unprivileged with a small RLIMIT_MEMLOCK (ulimit -l 64). */
static void test_memlock(struct ctx *c)
{
	size_t big = 4 << 20, small = 16 << 10;
	uint32_t h;
	void *buf;

	buf = aligned_alloc(page, big);
	memset(buf, 1, big);
	check(reg_mr(c->pd, buf, big, 1, &h, NULL) == -ENOMEM,
	      "memlock: 4 MiB beyond RLIMIT_MEMLOCK refused with ENOMEM");
	check(reg_mr(c->pd, buf, small, 1, &h, NULL) == 0 && dereg_mr(h) == 0,
	      "memlock: 16 KiB within RLIMIT_MEMLOCK");
	free(buf);
}

#define IRQOFF_STAT "/sys/kernel/debug/siw2/irqoff_max_ns"
#define IRQ_QPS 4
#define IRQ_WR 16384		/* SIW2_MAX_QP_WR */
#define IRQ_CQE (IRQ_QPS * IRQ_WR)	/* SIW2_MAX_CQE */
#define IRQ_RESIZES 3

/* siw2's longest interrupts-off hold since the last read, in us. */
static long irqoff_us(void)
{
	unsigned long long ns;
	FILE *f = fopen(IRQOFF_STAT, "r");
	int n;

	if (!f)
		return -1;
	n = fscanf(f, "%llu", &ns);
	fclose(f);
	return n == 1 ? (long)(ns / 1000) : -1;
}

/* Figures of a series of runs, and how many of them exceed a bound. */
struct irq_runs {
	char text[128];
	int over, failed;
};

static void irq_add(struct irq_runs *r, long us, long bound)
{
	size_t len = strlen(r->text);

	if (us < 0)
		r->failed = 1;
	if (us >= bound)
		r->over++;
	snprintf(r->text + len, sizeof(r->text) - len, "%s%ld", len ? " " : "",
		 us);
}

/*
 * IRQ_QPS QPs, each with a full SQ that a move to ERR flushes into one
 * CQ, which ends full and is then resized (to its own size: all of it is
 * copied) IRQ_RESIZES times. Any user may do this to the kernel; none of
 * it may keep interrupts off for long. A TCG guest's vCPU may lose the
 * host's CPU during a hold and make that one look longer, for a few
 * milliseconds at times: one run of each kind may exceed the bound. A
 * hold of the whole ring exceeds it in every run.
 */
static void test_irqsoff(struct ctx *c, long bound)
{
	struct irq_runs flush = {}, resize = {};
	struct qp qp[IRQ_QPS];
	struct siw2_cqe e;
	int i, j, nqp = 0, bad = 0;
	struct cq cq;

	if (irqoff_us() < 0) {
		check(0, "irqsoff: read %s", IRQOFF_STAT);
		return;
	}
	if (create_cq(&cq, IRQ_CQE, 0)) {
		check(0, "irqsoff: a CQ of %d", IRQ_CQE);
		return;
	}
	for (; nqp < IRQ_QPS; nqp++) {
		if (create_qp(&qp[nqp], c->pd, &cq, 0, 0, IRQ_WR, 2, 1, 0)) {
			check(0, "irqsoff: QP %d of %d SQEs", nqp, IRQ_WR);
			goto out;
		}
		/* INIT: published, never consumed, no doorbell needed. */
		for (j = 0; j < IRQ_WR; j++) {
			struct siw2_sqe *s = (struct siw2_sqe *)qp[nqp].sq.entries + j;

			memset(s, 0, sizeof(*s));
			s->wr_id = (uint64_t)nqp << 32 | j;
			s->opcode = SIW2_OP_SEND;
			s->flags = SIW2_WQE_SIGNALED;
		}
		qp[nqp].sq_prod = IRQ_WR;
		store_rel(&qp[nqp].sq.ctl->prod, IRQ_WR);
	}

	for (i = 0; i < IRQ_QPS; i++) {
		irqoff_us();
		if (modify_qp(&qp[i], IB_QPS_ERR, 0)) {
			check(0, "irqsoff: QP %d to ERR", i);
			goto out;
		}
		irq_add(&flush, irqoff_us(), bound);
	}
	for (i = 0; i < IRQ_RESIZES; i++) {
		irqoff_us();
		if (resize_cq(&cq, IRQ_CQE)) {
			check(0, "irqsoff: resize the full CQ");
			goto out;
		}
		irq_add(&resize, irqoff_us(), bound);
	}
	/* IB: flushed in posting order; each QP's ERR came after the last. */
	for (i = 0; i < IRQ_QPS; i++)
		for (j = 0; j < IRQ_WR; j++)
			if (!poll_cqe(&cq, &e) || e.status != WC_WR_FLUSH_ERR ||
			    e.wr_id != ((uint64_t)i << 32 | j) ||
			    e.qp_num != qp[i].qpn)
				bad++;
	check(!bad && !poll_cqe(&cq, &e),
	      "irqsoff: %d flush completions in posting order, across the resizes (%d wrong)",
	      IRQ_CQE, bad);
	check(!flush.failed && flush.over <= 1,
	      "irqsoff: interrupts stay on during a large flush (%d SQEs; longest hold of each flush: %s us; bound %ld us)",
	      IRQ_WR, flush.text, bound);
	check(!resize.failed && resize.over <= 1,
	      "irqsoff: interrupts stay on during a large CQ resize (%d CQEs; longest hold of each resize: %s us; bound %ld us)",
	      IRQ_CQE, resize.text, bound);
out:
	while (nqp--)
		destroy_qp(&qp[nqp]);
	destroy_cq(&cq);
}

int main(int argc, char **argv)
{
	struct ctx c = {};

	if (argc < 2) {
		fprintf(stderr, "usage: %s IBDEV [memlock | irqsoff BOUND_US]\n", argv[0]);
		return 2;
	}
	page = sysconf(_SC_PAGESIZE);
	fd = open_dev(argv[1]);
	check(fd >= 0, "open the uverbs device of %s", argv[1]);
	if (fd < 0)
		return 1;
	if (get_context(&c))
		return 1;
	c.pd = alloc_pd();
	check(c.pd != ~0U, "pd: alloc");

	if (argc > 2 && !strcmp(argv[2], "memlock")) {
		test_memlock(&c);
	} else if (argc > 3 && !strcmp(argv[2], "irqsoff")) {
		test_irqsoff(&c, atol(argv[3]));
	} else {
		test_cq(&c);
		test_qp(&c);
		test_cq_overflow(&c);
		test_srq(&c);
		test_mr(&c);
	}
	dealloc_pd(c.pd);
	close(c.async_fd);
	close(fd);
	printf("uverbs: %d passed, %d failed\n", passes, fails);
	return fails ? 1 : 0;
}
