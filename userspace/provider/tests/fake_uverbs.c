// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * LD_PRELOAD stand-in for the kernel half of uverbs, so that libsiw2 can be
 * exercised on a host without siw2.ko.
 *
 * run.sh points the fake device's /dev/infiniband/uverbsN at /dev/zero:
 * its ioctl() fails with ENOTTY, which makes libibverbs fall back to the
 * write() command interface, and every write() to a character device with
 * the rdev named by FAKE_UVERBS_RDEV ("major:minor") is answered here the
 * way ib_uverbs would, for the commands libsiw2 issues today. Sizes are
 * checked as strictly as the kernel does, so a provider/library layout
 * mismatch shows up as EINVAL.
 *
 * The one command that has no write() form, ADVISE_MR, comes as an
 * ioctl(): that method alone is answered here, every other ioctl() gets
 * the ENOTTY of /dev/zero, so the library keeps to write() for the rest.
 *
 * FAKE_SIW2_ABI overrides the abi_version siw2's GET_CONTEXT part reports;
 * FAKE_SIW2_NO_UDATA=1 answers like a kernel without siw2's part.
 *
 * CQs, QPs and SRQs get real shared rings: each is a memfd, which this
 * shim maps for its own (the "kernel's") view, and hands to the provider
 * when it mmap()s the uverbs fd at the ring's key. The shim plays a tiny
 * kernel on them: a doorbell on the SQ completes every SQE (success, or
 * flushed in the error state), a doorbell on the RQ flushes it in the
 * error state, the move to error flushes both and raises both NEED_WAKEUP
 * flags. fake_uverbs_*() below let the test look at and poke that state.
 */
#include <assert.h>
#include <dlfcn.h>
#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <infiniband/verbs.h>

#include <rdma/ib_user_ioctl_cmds.h>
#include <rdma/ib_user_verbs.h>
#include <rdma/rdma_user_ioctl_cmds.h>
#include <rdma/siw2-abi.h>

#define FAKE_FW_VER 0x0000000100020003ULL	/* "1.2.3" */
#define FAKE_PD_HANDLE 7

static ssize_t (*real_write)(int, const void *, size_t);
static void *(*real_mmap)(void *, size_t, int, int, int, off_t);
static int (*real_ioctl)(int, unsigned long, ...);
static unsigned int pds_live;

static bool is_fake_uverbs(int fd)
{
	const char *want = getenv("FAKE_UVERBS_RDEV");
	unsigned int maj, min;
	struct stat st;

	if (!want || sscanf(want, "%u:%u", &maj, &min) != 2)
		return false;
	if (fstat(fd, &st) || !S_ISCHR(st.st_mode))
		return false;
	return st.st_rdev == makedev(maj, min);
}

static void *user_ptr(uint64_t v)
{
	return (void *)(uintptr_t)v;
}

static int get_context(const void *in, size_t in_len, size_t out_len)
{
	const struct ib_uverbs_get_context *cmd = in;
	struct ib_uverbs_get_context_resp resp = {};
	struct siw2_uresp_alloc_ctx uresp = {};
	const char *abi = getenv("FAKE_SIW2_ABI");
	char *out;
	int fd;

	if (in_len != sizeof(*cmd) || out_len < sizeof(resp))
		return EINVAL;
	/* siw2.ko will insist on its exact udata length; so do we. */
	if (out_len != sizeof(resp) && out_len != sizeof(resp) + sizeof(uresp))
		return EINVAL;

	fd = eventfd(0, EFD_CLOEXEC);
	if (fd < 0)
		return errno;
	resp.async_fd = fd;
	resp.num_comp_vectors = 1;
	uresp.abi_version = abi ? (uint32_t)strtoul(abi, NULL, 0) :
				  SIW2_ABI_VERSION;

	out = user_ptr(cmd->response);
	memcpy(out, &resp, sizeof(resp));
	if (out_len > sizeof(resp) && !getenv("FAKE_SIW2_NO_UDATA"))
		memcpy(out + sizeof(resp), &uresp, sizeof(uresp));
	return 0;
}

static void fill_device(struct ib_uverbs_query_device_resp *b)
{
	b->fw_ver = FAKE_FW_VER;
	b->vendor_id = 0x626d74;
	b->max_mr_size = ~0ULL;
	b->page_size_cap = 4096;
	b->max_qp = 1024;
	b->max_qp_wr = 1024;
	b->max_sge = 6;
	b->max_cq = 1024;
	b->max_cqe = 4096;
	b->max_mr = 1024;
	b->max_pd = 1024;
	b->phys_port_cnt = 1;
}

static int query_device(const void *in, size_t in_len, size_t out_len)
{
	const struct ib_uverbs_query_device *cmd = in;
	struct ib_uverbs_query_device_resp resp = {};

	if (in_len != sizeof(*cmd) || out_len != sizeof(resp))
		return EINVAL;
	fill_device(&resp);
	memcpy(user_ptr(cmd->response), &resp, sizeof(resp));
	return 0;
}

static int ex_query_device(const struct ib_uverbs_ex_cmd_hdr *ex,
			   size_t in_len, size_t out_len)
{
	struct ib_uverbs_ex_query_device_resp resp = {};

	if (in_len != sizeof(struct ib_uverbs_ex_query_device) ||
	    ex->provider_in_words || ex->provider_out_words ||
	    out_len < sizeof(resp.base))
		return EINVAL;
	fill_device(&resp.base);
	/* What siw2.ko reports: explicit ODP MRs, every RC operation. */
	resp.odp_caps.general_caps = IBV_ODP_SUPPORT;
	resp.odp_caps.per_transport_caps.rc_odp_caps =
		IBV_ODP_SUPPORT_SEND | IBV_ODP_SUPPORT_RECV |
		IBV_ODP_SUPPORT_WRITE | IBV_ODP_SUPPORT_READ |
		IBV_ODP_SUPPORT_ATOMIC;
	resp.response_length = out_len < sizeof(resp) ? out_len : sizeof(resp);
	memcpy(user_ptr(ex->response), &resp, resp.response_length);
	return 0;
}

static int query_port(const void *in, size_t in_len, size_t out_len)
{
	const struct ib_uverbs_query_port *cmd = in;
	struct ib_uverbs_query_port_resp resp = {};

	if (in_len != sizeof(*cmd) || out_len != sizeof(resp))
		return EINVAL;
	if (cmd->port_num != 1)
		return EINVAL;
	resp.state = 4;			/* IB_PORT_ACTIVE */
	resp.max_mtu = 5;		/* IB_MTU_4096 */
	resp.active_mtu = 5;
	resp.gid_tbl_len = 1;
	resp.pkey_tbl_len = 1;
	resp.max_msg_sz = 1 << 30;
	resp.phys_state = 5;		/* LinkUp */
	resp.link_layer = 2;		/* IB_LINK_LAYER_ETHERNET */
	resp.active_width = 1;
	resp.active_speed = 1;
	memcpy(user_ptr(cmd->response), &resp, sizeof(resp));
	return 0;
}

static int alloc_pd(const void *in, size_t in_len, size_t out_len)
{
	const struct ib_uverbs_alloc_pd *cmd = in;
	struct ib_uverbs_alloc_pd_resp resp = { .pd_handle = FAKE_PD_HANDLE };

	if (in_len != sizeof(*cmd) || out_len != sizeof(resp))
		return EINVAL;
	memcpy(user_ptr(cmd->response), &resp, sizeof(resp));
	pds_live++;
	return 0;
}

static int dealloc_pd(const void *in, size_t in_len)
{
	const struct ib_uverbs_dealloc_pd *cmd = in;

	if (in_len != sizeof(*cmd) || cmd->pd_handle != FAKE_PD_HANDLE ||
	    !pds_live)
		return EINVAL;
	pds_live--;
	return 0;
}

/* ---- shared rings and the objects that own them ---- */

#define MAX_OBJS 64
#define MAX_RINGS 128

enum obj_kind { OBJ_NONE, OBJ_CQ, OBJ_QP, OBJ_SRQ, OBJ_MR, OBJ_MW };

struct ring {
	int fd;				/* memfd; -1: slot free */
	struct siw2_ring_ctl *ctl;	/* the "kernel's" view */
	size_t len;
	size_t ent_size;
	uint32_t num;
};

struct obj {
	enum obj_kind kind;
	uint32_t handle;		/* index + 1 */
	int ring[2];			/* CQ/SRQ: [0]; QP: SQ, RQ (-1: none) */
	uint32_t send_cq, recv_cq, srq;	/* QP: handles */
	uint32_t state;			/* QP: enum ibv_qp_state */
	struct ibv_qp_cap cap;		/* QP */
	uint32_t max_wr, max_sge, limit; /* SRQ */
	uint32_t cqe;			/* CQ: what the user asked for */
	uint32_t access;		/* MR: access flags as the kernel got them */
	uint64_t va, len;		/* MR: its range of I/O addresses */
};

static struct ring rings[MAX_RINGS];
static struct obj objs[MAX_OBJS];
static unsigned int doorbells[2];	/* SQ, RQ */
static struct siw2_sqe last_sqe;

static uint64_t ring_key(int r)
{
	/* Page aligned and from 0 up, like rdma_user_mmap_entry_insert(). */
	return (uint64_t)r << 12;
}

static uint32_t roundup_pow2(uint32_t n)
{
	uint32_t p = 1;

	while (p < n)
		p <<= 1;
	return p;
}

static int ring_new(uint32_t num, size_t ent_size)
{
	int r, fd;
	void *p;
	size_t len = SIW2_RING_CTL_SIZE + num * ent_size;

	for (r = 0; r < MAX_RINGS; r++)
		if (!rings[r].ctl)
			break;
	if (r == MAX_RINGS)
		return -1;
	fd = memfd_create("fake_siw2_ring", MFD_CLOEXEC);
	if (fd < 0)
		return -1;
	if (ftruncate(fd, (off_t)len)) {
		close(fd);
		return -1;
	}
	p = real_mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (p == MAP_FAILED) {
		close(fd);
		return -1;
	}
	rings[r] = (struct ring){ .fd = fd, .ctl = p, .len = len,
				  .ent_size = ent_size, .num = num };
	return r;
}

/* The provider's mappings keep the memory alive, as in the kernel. */
static void ring_free(int r)
{
	if (r < 0 || !rings[r].ctl)
		return;
	munmap(rings[r].ctl, rings[r].len);
	close(rings[r].fd);
	rings[r].ctl = NULL;
}

static void *ring_ent(int r, uint32_t idx)
{
	return (char *)rings[r].ctl + SIW2_RING_CTL_SIZE +
	       (idx & (rings[r].num - 1)) * rings[r].ent_size;
}

static struct obj *obj_new(enum obj_kind kind)
{
	int i;

	for (i = 0; i < MAX_OBJS; i++) {
		if (objs[i].kind == OBJ_NONE) {
			objs[i] = (struct obj){ .kind = kind,
						.handle = (uint32_t)i + 1,
						.ring = { -1, -1 } };
			return &objs[i];
		}
	}
	return NULL;
}

static struct obj *obj_get(enum obj_kind kind, uint32_t handle)
{
	if (!handle || handle > MAX_OBJS || objs[handle - 1].kind != kind)
		return NULL;
	return &objs[handle - 1];
}

static void cq_push(uint32_t cq_handle, uint64_t wr_id, uint8_t opcode,
		    uint8_t status, uint32_t byte_len, uint32_t qpn)
{
	struct obj *cq = obj_get(OBJ_CQ, cq_handle);
	struct siw2_ring_ctl *ctl;
	struct siw2_cqe *cqe;

	if (!cq)
		return;
	ctl = rings[cq->ring[0]].ctl;
	if (ctl->prod - __atomic_load_n(&ctl->cons, __ATOMIC_ACQUIRE) >=
	    rings[cq->ring[0]].num)
		return;			/* overflow: a real kernel errors */
	cqe = ring_ent(cq->ring[0], ctl->prod);
	memset(cqe, 0, sizeof(*cqe));
	cqe->wr_id = wr_id;
	cqe->opcode = opcode;
	cqe->status = status;
	cqe->byte_len = byte_len;
	cqe->qp_num = qpn;
	__atomic_store_n(&ctl->prod, ctl->prod + 1, __ATOMIC_RELEASE);
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	__atomic_exchange_n(&ctl->flags, 0, __ATOMIC_SEQ_CST);
}

static const uint8_t sq_wc_op[SIW2_OP_MAX] = {
	[SIW2_OP_SEND] = SIW2_WC_SEND, [SIW2_OP_SEND_INV] = SIW2_WC_SEND,
	[SIW2_OP_SEND_IMM] = SIW2_WC_SEND, [SIW2_OP_WRITE] = SIW2_WC_WRITE,
	[SIW2_OP_WRITE_IMM] = SIW2_WC_WRITE, [SIW2_OP_READ] = SIW2_WC_READ,
	[SIW2_OP_ATOMIC_CMP_SWP] = SIW2_WC_COMP_SWAP,
	[SIW2_OP_ATOMIC_FETCH_ADD] = SIW2_WC_FETCH_ADD,
	[SIW2_OP_LOCAL_INV] = SIW2_WC_LOCAL_INV,
	[SIW2_OP_BIND_MW] = SIW2_WC_BIND_MW,
};

/* Consumes every posted SQE: completes it, or flushes it in error. */
static void sq_run(struct obj *qp)
{
	struct siw2_ring_ctl *ctl = rings[qp->ring[0]].ctl;
	uint32_t prod = __atomic_load_n(&ctl->prod, __ATOMIC_ACQUIRE);
	bool flush = qp->state == IBV_QPS_ERR;

	while (ctl->cons != prod) {
		struct siw2_sqe sqe;
		uint32_t len = 0;
		int i;

		memcpy(&sqe, ring_ent(qp->ring[0], ctl->cons), sizeof(sqe));
		last_sqe = sqe;
		if (sqe.flags & SIW2_WQE_INLINE)
			len = sqe.inline_len;
		else
			for (i = 0; i < sqe.num_sge && i < SIW2_UMAX_SGE; i++)
				len += sqe.sge[i].length;
		__atomic_store_n(&ctl->cons, ctl->cons + 1, __ATOMIC_RELEASE);
		if (flush || sqe.flags & SIW2_WQE_SIGNALED)
			cq_push(qp->send_cq, sqe.wr_id,
				sqe.opcode < SIW2_OP_MAX ?
				sq_wc_op[sqe.opcode] : 0xff,
				flush ? IBV_WC_WR_FLUSH_ERR : IBV_WC_SUCCESS,
				len, qp->handle);
	}
}

static void rq_flush(struct obj *qp)
{
	struct siw2_ring_ctl *ctl;
	uint32_t prod;

	if (qp->ring[1] < 0)
		return;
	ctl = rings[qp->ring[1]].ctl;
	prod = __atomic_load_n(&ctl->prod, __ATOMIC_ACQUIRE);
	while (ctl->cons != prod) {
		const struct siw2_rqe *rqe = ring_ent(qp->ring[1], ctl->cons);

		cq_push(qp->recv_cq, rqe->wr_id, SIW2_WC_RECV,
			IBV_WC_WR_FLUSH_ERR, 0, qp->handle);
		__atomic_store_n(&ctl->cons, ctl->cons + 1, __ATOMIC_RELEASE);
	}
}

/* Exact sizes, as the kernel insists: command, and response with udata. */
#define CHECK_SIZES(in_len, out_len, cmd, out)				\
	do {								\
		if ((in_len) != sizeof(cmd) || (out_len) != sizeof(out)) \
			return EINVAL;					\
	} while (0)

static int create_cq(const void *in, size_t in_len, size_t out_len)
{
	const struct ib_uverbs_create_cq *cmd = in;
	struct {
		struct ib_uverbs_create_cq_resp base;
		struct siw2_uresp_create_cq drv;
	} resp = {};
	struct obj *cq;
	int r;

	CHECK_SIZES(in_len, out_len, *cmd, resp);
	if (!cmd->cqe || cmd->cqe > 4096)
		return EINVAL;
	cq = obj_new(OBJ_CQ);
	if (!cq)
		return ENOMEM;
	r = ring_new(roundup_pow2(cmd->cqe), sizeof(struct siw2_cqe));
	if (r < 0) {
		cq->kind = OBJ_NONE;
		return ENOMEM;
	}
	cq->ring[0] = r;
	cq->cqe = cmd->cqe;
	resp.base.cq_handle = cq->handle;
	resp.base.cqe = cmd->cqe;
	resp.drv.cq_id = cq->handle;
	resp.drv.num_cqe = rings[r].num;
	resp.drv.mmap_key = ring_key(r);
	memcpy(user_ptr(cmd->response), &resp, sizeof(resp));
	return 0;
}

/* Moves the unconsumed CQEs into a new ring that starts at index 0. */
static int resize_cq(const void *in, size_t in_len, size_t out_len)
{
	const struct ib_uverbs_resize_cq *cmd = in;
	struct {
		struct ib_uverbs_resize_cq_resp base;
		struct siw2_uresp_resize_cq drv;
	} resp = {};
	struct siw2_ring_ctl *octl, *nctl;
	uint32_t n, i, num;
	struct obj *cq;
	int r;

	CHECK_SIZES(in_len, out_len, *cmd, resp);
	cq = obj_get(OBJ_CQ, cmd->cq_handle);
	if (!cq || !cmd->cqe || cmd->cqe > 4096)
		return EINVAL;
	octl = rings[cq->ring[0]].ctl;
	n = octl->prod - octl->cons;
	num = roundup_pow2(cmd->cqe);
	if (n > num)
		return EINVAL;
	r = ring_new(num, sizeof(struct siw2_cqe));
	if (r < 0)
		return ENOMEM;
	nctl = rings[r].ctl;
	for (i = 0; i < n; i++)
		memcpy(ring_ent(r, i), ring_ent(cq->ring[0], octl->cons + i),
		       sizeof(struct siw2_cqe));
	nctl->prod = n;
	nctl->cons = 0;
	nctl->flags = octl->flags;
	ring_free(cq->ring[0]);
	cq->ring[0] = r;
	cq->cqe = cmd->cqe;
	resp.base.cqe = cmd->cqe;
	resp.drv.num_cqe = num;
	resp.drv.mmap_key = ring_key(r);
	memcpy(user_ptr(cmd->response), &resp, sizeof(resp));
	return 0;
}

static int destroy_cq(const void *in, size_t in_len, size_t out_len)
{
	const struct ib_uverbs_destroy_cq *cmd = in;
	struct ib_uverbs_destroy_cq_resp resp = {};
	struct obj *cq;
	int i;

	CHECK_SIZES(in_len, out_len, *cmd, resp);
	cq = obj_get(OBJ_CQ, cmd->cq_handle);
	if (!cq)
		return EINVAL;
	for (i = 0; i < MAX_OBJS; i++)
		if (objs[i].kind == OBJ_QP && (objs[i].send_cq == cq->handle ||
					       objs[i].recv_cq == cq->handle))
			return EBUSY;
	ring_free(cq->ring[0]);
	cq->kind = OBJ_NONE;
	memcpy(user_ptr(cmd->response), &resp, sizeof(resp));
	return 0;
}

static int create_qp(const void *in, size_t in_len, size_t out_len)
{
	const struct ib_uverbs_create_qp *cmd = in;
	struct {
		struct ib_uverbs_create_qp_resp base;
		struct siw2_uresp_create_qp drv;
	} resp = {};
	struct obj *qp;

	CHECK_SIZES(in_len, out_len, *cmd, resp);
	if (cmd->qp_type != IBV_QPT_RC || cmd->pd_handle != FAKE_PD_HANDLE ||
	    !obj_get(OBJ_CQ, cmd->send_cq_handle) ||
	    !obj_get(OBJ_CQ, cmd->recv_cq_handle) ||
	    (cmd->is_srq && !obj_get(OBJ_SRQ, cmd->srq_handle)) ||
	    !cmd->max_send_wr || cmd->max_send_wr > 1024 ||
	    cmd->max_recv_wr > 1024 || cmd->max_send_sge > SIW2_UMAX_SGE ||
	    cmd->max_recv_sge > SIW2_UMAX_SGE ||
	    cmd->max_inline_data > SIW2_UMAX_INLINE)
		return EINVAL;
	qp = obj_new(OBJ_QP);
	if (!qp)
		return ENOMEM;
	qp->send_cq = cmd->send_cq_handle;
	qp->recv_cq = cmd->recv_cq_handle;
	qp->srq = cmd->is_srq ? cmd->srq_handle : 0;
	qp->state = IBV_QPS_RESET;
	qp->cap = (struct ibv_qp_cap){
		.max_send_wr = roundup_pow2(cmd->max_send_wr),
		.max_recv_wr = cmd->is_srq ? 0 : roundup_pow2(cmd->max_recv_wr),
		.max_send_sge = cmd->max_send_sge,
		.max_recv_sge = cmd->is_srq ? 0 : cmd->max_recv_sge,
		.max_inline_data = cmd->max_inline_data,
	};
	qp->ring[0] = ring_new(qp->cap.max_send_wr, sizeof(struct siw2_sqe));
	if (!cmd->is_srq)
		qp->ring[1] = ring_new(qp->cap.max_recv_wr ?
				       qp->cap.max_recv_wr : 1,
				       sizeof(struct siw2_rqe));
	if (qp->ring[0] < 0 || (!cmd->is_srq && qp->ring[1] < 0)) {
		ring_free(qp->ring[0]);
		ring_free(qp->ring[1]);
		qp->kind = OBJ_NONE;
		return ENOMEM;
	}
	/* The send engine of this fake never watches: every post rings. */
	rings[qp->ring[0]].ctl->flags = SIW2_SQ_NEED_WAKEUP;

	resp.base.qp_handle = qp->handle;
	resp.base.qpn = qp->handle;
	resp.base.max_send_wr = qp->cap.max_send_wr;
	resp.base.max_recv_wr = qp->cap.max_recv_wr;
	resp.base.max_send_sge = qp->cap.max_send_sge;
	resp.base.max_recv_sge = qp->cap.max_recv_sge;
	resp.base.max_inline_data = qp->cap.max_inline_data;
	resp.drv.qp_id = qp->handle;
	resp.drv.num_sqe = rings[qp->ring[0]].num;
	resp.drv.sq_key = ring_key(qp->ring[0]);
	if (qp->ring[1] >= 0) {
		resp.drv.num_rqe = rings[qp->ring[1]].num;
		resp.drv.rq_key = ring_key(qp->ring[1]);
	}
	memcpy(user_ptr(cmd->response), &resp, sizeof(resp));
	return 0;
}

static int modify_qp(const void *in, size_t in_len)
{
	const struct ib_uverbs_modify_qp *cmd = in;
	struct obj *qp;

	if (in_len != sizeof(*cmd))
		return EINVAL;
	qp = obj_get(OBJ_QP, cmd->qp_handle);
	if (!qp)
		return EINVAL;
	if (!(cmd->attr_mask & IBV_QP_STATE))
		return 0;
	if (cmd->qp_state > IBV_QPS_ERR)
		return EINVAL;
	qp->state = cmd->qp_state;
	if (qp->state == IBV_QPS_ERR) {
		if (qp->ring[1] >= 0)
			rings[qp->ring[1]].ctl->flags = SIW2_RQ_NEED_WAKEUP;
		sq_run(qp);
		rq_flush(qp);
	} else if (qp->state == IBV_QPS_RESET && qp->ring[1] >= 0) {
		rings[qp->ring[1]].ctl->flags = 0;
	}
	return 0;
}

static int query_qp(const void *in, size_t in_len, size_t out_len)
{
	const struct ib_uverbs_query_qp *cmd = in;
	struct ib_uverbs_query_qp_resp resp = {};
	struct obj *qp;

	CHECK_SIZES(in_len, out_len, *cmd, resp);
	qp = obj_get(OBJ_QP, cmd->qp_handle);
	if (!qp)
		return EINVAL;
	resp.qp_state = qp->state;
	resp.cur_qp_state = qp->state;
	resp.max_send_wr = qp->cap.max_send_wr;
	resp.max_recv_wr = qp->cap.max_recv_wr;
	resp.max_send_sge = qp->cap.max_send_sge;
	resp.max_recv_sge = qp->cap.max_recv_sge;
	resp.max_inline_data = qp->cap.max_inline_data;
	memcpy(user_ptr(cmd->response), &resp, sizeof(resp));
	return 0;
}

static int destroy_qp(const void *in, size_t in_len, size_t out_len)
{
	const struct ib_uverbs_destroy_qp *cmd = in;
	struct ib_uverbs_destroy_qp_resp resp = {};
	struct obj *qp;

	CHECK_SIZES(in_len, out_len, *cmd, resp);
	qp = obj_get(OBJ_QP, cmd->qp_handle);
	if (!qp)
		return EINVAL;
	ring_free(qp->ring[0]);
	ring_free(qp->ring[1]);
	qp->kind = OBJ_NONE;
	memcpy(user_ptr(cmd->response), &resp, sizeof(resp));
	return 0;
}

/* The provider's doorbells carry no work requests; anything else is a bug. */
static int doorbell(const void *in, size_t in_len, size_t out_len, bool sq)
{
	const struct ib_uverbs_post_send *cmd = in;
	struct ib_uverbs_post_send_resp resp = {};
	struct obj *qp;

	static_assert(sizeof(struct ib_uverbs_post_send) ==
		      sizeof(struct ib_uverbs_post_recv), "doorbell layout");
	CHECK_SIZES(in_len, out_len, *cmd, resp);
	qp = obj_get(OBJ_QP, cmd->qp_handle);
	if (!qp || cmd->wr_count || cmd->sge_count)
		return EINVAL;
	doorbells[!sq]++;
	if (sq)
		sq_run(qp);
	else if (qp->state == IBV_QPS_ERR)
		rq_flush(qp);
	memcpy(user_ptr(cmd->response), &resp, sizeof(resp));
	return 0;
}

static int create_srq(const void *in, size_t in_len, size_t out_len)
{
	const struct ib_uverbs_create_srq *cmd = in;
	struct {
		struct ib_uverbs_create_srq_resp base;
		struct siw2_uresp_create_srq drv;
	} resp = {};
	struct obj *srq;
	int r;

	CHECK_SIZES(in_len, out_len, *cmd, resp);
	if (cmd->pd_handle != FAKE_PD_HANDLE || !cmd->max_wr ||
	    cmd->max_wr > 4096 || cmd->max_sge > SIW2_UMAX_SGE)
		return EINVAL;
	srq = obj_new(OBJ_SRQ);
	if (!srq)
		return ENOMEM;
	r = ring_new(roundup_pow2(cmd->max_wr), sizeof(struct siw2_rqe));
	if (r < 0) {
		srq->kind = OBJ_NONE;
		return ENOMEM;
	}
	srq->ring[0] = r;
	srq->max_wr = rings[r].num;
	srq->max_sge = cmd->max_sge;
	srq->limit = cmd->srq_limit;
	resp.base.srq_handle = srq->handle;
	resp.base.max_wr = srq->max_wr;
	resp.base.max_sge = srq->max_sge;
	resp.drv.num_rqe = rings[r].num;
	resp.drv.rq_key = ring_key(r);
	memcpy(user_ptr(cmd->response), &resp, sizeof(resp));
	return 0;
}

static int modify_srq(const void *in, size_t in_len)
{
	const struct ib_uverbs_modify_srq *cmd = in;
	struct obj *srq;

	if (in_len != sizeof(*cmd))
		return EINVAL;
	srq = obj_get(OBJ_SRQ, cmd->srq_handle);
	if (!srq || (cmd->attr_mask & ~IBV_SRQ_LIMIT) ||
	    cmd->srq_limit > srq->max_wr)
		return EINVAL;
	if (cmd->attr_mask & IBV_SRQ_LIMIT)
		srq->limit = cmd->srq_limit;
	return 0;
}

static int query_srq(const void *in, size_t in_len, size_t out_len)
{
	const struct ib_uverbs_query_srq *cmd = in;
	struct ib_uverbs_query_srq_resp resp = {};
	struct obj *srq;

	CHECK_SIZES(in_len, out_len, *cmd, resp);
	srq = obj_get(OBJ_SRQ, cmd->srq_handle);
	if (!srq)
		return EINVAL;
	resp.max_wr = srq->max_wr;
	resp.max_sge = srq->max_sge;
	resp.srq_limit = srq->limit;
	memcpy(user_ptr(cmd->response), &resp, sizeof(resp));
	return 0;
}

static int destroy_srq(const void *in, size_t in_len, size_t out_len)
{
	const struct ib_uverbs_destroy_srq *cmd = in;
	struct ib_uverbs_destroy_srq_resp resp = {};
	struct obj *srq;
	int i;

	CHECK_SIZES(in_len, out_len, *cmd, resp);
	srq = obj_get(OBJ_SRQ, cmd->srq_handle);
	if (!srq)
		return EINVAL;
	for (i = 0; i < MAX_OBJS; i++)
		if (objs[i].kind == OBJ_QP && objs[i].srq == srq->handle)
			return EBUSY;
	ring_free(srq->ring[0]);
	srq->kind = OBJ_NONE;
	memcpy(user_ptr(cmd->response), &resp, sizeof(resp));
	return 0;
}

static int reg_mr(const void *in, size_t in_len, size_t out_len)
{
	const struct ib_uverbs_reg_mr *cmd = in;
	struct ib_uverbs_reg_mr_resp resp = {};
	struct obj *mr;

	CHECK_SIZES(in_len, out_len, *cmd, resp);
	if (cmd->pd_handle != FAKE_PD_HANDLE || !cmd->length)
		return EINVAL;
	mr = obj_new(OBJ_MR);
	if (!mr)
		return ENOMEM;
	mr->access = cmd->access_flags;
	mr->va = cmd->hca_va;
	mr->len = cmd->length;
	resp.mr_handle = mr->handle;
	resp.lkey = 0x100 + mr->handle;
	resp.rkey = 0x200 + mr->handle;
	memcpy(user_ptr(cmd->response), &resp, sizeof(resp));
	return 0;
}

static int dereg_mr(const void *in, size_t in_len)
{
	const struct ib_uverbs_dereg_mr *cmd = in;
	struct obj *mr;

	if (in_len != sizeof(*cmd))
		return EINVAL;
	mr = obj_get(OBJ_MR, cmd->mr_handle);
	if (!mr)
		return EINVAL;
	mr->kind = OBJ_NONE;
	return 0;
}

/* A window's rkey: its index and a key of 0x30; type 1 or 2 only. */
static int alloc_mw(const void *in, size_t in_len, size_t out_len)
{
	const struct ib_uverbs_alloc_mw *cmd = in;
	struct ib_uverbs_alloc_mw_resp resp = {};
	struct obj *mw;

	CHECK_SIZES(in_len, out_len, *cmd, resp);
	if (cmd->pd_handle != FAKE_PD_HANDLE ||
	    (cmd->mw_type != IBV_MW_TYPE_1 && cmd->mw_type != IBV_MW_TYPE_2))
		return EINVAL;
	mw = obj_new(OBJ_MW);
	if (!mw)
		return ENOMEM;
	resp.mw_handle = mw->handle;
	resp.rkey = (0x400 + mw->handle) << 8 | 0x30;
	memcpy(user_ptr(cmd->response), &resp, sizeof(resp));
	return 0;
}

static int dealloc_mw(const void *in, size_t in_len)
{
	const struct ib_uverbs_dealloc_mw *cmd = in;
	struct obj *mw;

	if (in_len != sizeof(*cmd))
		return EINVAL;
	mw = obj_get(OBJ_MW, cmd->mw_handle);
	if (!mw)
		return EINVAL;
	mw->kind = OBJ_NONE;
	return 0;
}

/* ---- ADVISE_MR, the one ioctl() method ---- */

#define ADVISE_ATTRS (UVERBS_ATTR_ADVISE_MR_SGE_LIST + 1)
#define ADVISE_SAVED 8

static struct {
	unsigned int calls;		/* ADVISE_MR ioctls, failed ones too */
	uint32_t advice, flags, num_sge;
	struct ibv_sge sge[ADVISE_SAVED];	/* the first ones */
} advised;

static_assert(sizeof(struct ibv_sge) == sizeof(struct ib_uverbs_sge),
	      "ibv_sge is the kernel's ib_uverbs_sge");

/*
 * The MR an SGE of ADVISE_MR names, checked with the errno values
 * siw2.ko is to give (mlx5's): an lkey naming no MR, or an MR that is not
 * on demand, is ENOENT; a memory window's STag EINVAL; PREFETCH_WRITE of
 * an MR without local write EPERM; all of them with or without FLUSH. A
 * range outside the MR is EFAULT when the pages are faulted in before
 * the call returns, with FLUSH; without, the work is best effort.
 */
static int advise_sge(uint32_t advice, uint64_t flags,
		      const struct ibv_sge *sge)
{
	struct obj *mr = sge->lkey > 0x100 ?
			 obj_get(OBJ_MR, sge->lkey - 0x100) : NULL;

	if (!mr) {
		if ((sge->lkey & 0xff) == 0x30 &&
		    (sge->lkey >> 8) > 0x400 &&
		    obj_get(OBJ_MW, (sge->lkey >> 8) - 0x400))
			return EINVAL;
		return ENOENT;
	}
	if (!(mr->access & IBV_ACCESS_ON_DEMAND))
		return ENOENT;
	if (advice == IB_UVERBS_ADVISE_MR_ADVICE_PREFETCH_WRITE &&
	    !(mr->access & IBV_ACCESS_LOCAL_WRITE))
		return EPERM;
	if (!(flags & IB_UVERBS_ADVISE_MR_FLAG_FLUSH))
		return 0;
	if (sge->addr < mr->va || sge->length > mr->len ||
	    sge->addr - mr->va > mr->len - sge->length)
		return EFAULT;
	return 0;
}

/*
 * ib_uverbs' checks of the attributes (UVERBS_METHOD_ADVISE_MR in
 * uverbs_std_types_mr.c), then the driver's of each SGE.
 */
static int advise_mr(const struct ib_uverbs_ioctl_hdr *hdr)
{
	const struct ib_uverbs_attr *attr[ADVISE_ATTRS] = {};
	const struct ibv_sge *sge;
	uint64_t advice = 0, flags = 0;
	uint32_t n, i;
	int err;

	advised.calls++;
	for (i = 0; i < hdr->num_attrs; i++) {
		const struct ib_uverbs_attr *a = &hdr->attrs[i];

		if (a->flags & ~UVERBS_ATTR_F_MANDATORY)
			return EINVAL;
		if (a->attr_id >= ADVISE_ATTRS) {
			if (a->flags & UVERBS_ATTR_F_MANDATORY)
				return EPROTONOSUPPORT;
			continue;
		}
		if (attr[a->attr_id] || a->attr_data.reserved)
			return EINVAL;
		attr[a->attr_id] = a;
	}
	for (i = 0; i < ADVISE_ATTRS; i++)
		if (!attr[i])
			return EINVAL;

	if (attr[UVERBS_ATTR_ADVISE_MR_PD_HANDLE]->data != FAKE_PD_HANDLE ||
	    !pds_live)
		return EINVAL;
	if (attr[UVERBS_ATTR_ADVISE_MR_ADVICE]->len != sizeof(uint64_t))
		return EINVAL;
	advice = attr[UVERBS_ATTR_ADVISE_MR_ADVICE]->data;
	switch (attr[UVERBS_ATTR_ADVISE_MR_FLAGS]->len) {
	case sizeof(uint32_t):
		memcpy(&n, &attr[UVERBS_ATTR_ADVISE_MR_FLAGS]->data, sizeof(n));
		flags = n;
		break;
	case sizeof(uint64_t):
		flags = attr[UVERBS_ATTR_ADVISE_MR_FLAGS]->data;
		break;
	default:
		return EINVAL;
	}
	if (flags & ~(uint64_t)IB_UVERBS_ADVISE_MR_FLAG_FLUSH)
		return EINVAL;
	n = attr[UVERBS_ATTR_ADVISE_MR_SGE_LIST]->len;
	if (n < sizeof(*sge) || n % sizeof(*sge))
		return EINVAL;
	n /= sizeof(*sge);
	sge = user_ptr(attr[UVERBS_ATTR_ADVISE_MR_SGE_LIST]->data);

	advised.advice = (uint32_t)advice;
	advised.flags = (uint32_t)flags;
	advised.num_sge = n;
	memcpy(advised.sge, sge,
	       (n < ADVISE_SAVED ? n : ADVISE_SAVED) * sizeof(*sge));

	/* The driver's part. */
	if (advice > IB_UVERBS_ADVISE_MR_ADVICE_PREFETCH_NO_FAULT)
		return EOPNOTSUPP;
	for (i = 0; i < n; i++) {
		err = advise_sge((uint32_t)advice, flags, &sge[i]);
		if (err)
			return err;
	}
	return 0;
}

/* ENOTTY: not answered here, left to /dev/zero. */
static int ioctl_dispatch(const struct ib_uverbs_ioctl_hdr *hdr)
{
	if (hdr->object_id != UVERBS_OBJECT_MR ||
	    hdr->method_id != UVERBS_METHOD_ADVISE_MR)
		return ENOTTY;
	if (hdr->length != sizeof(*hdr) +
			   hdr->num_attrs * sizeof(hdr->attrs[0]) ||
	    hdr->reserved1 || hdr->reserved2)
		return EINVAL;
	return advise_mr(hdr);
}

/* ---- what the test sees of the fake kernel ---- */

/* The kernel's view of QP @qpn's queue @which (0: SQ, 1: RQ), or NULL. */
struct siw2_ring_ctl *fake_uverbs_qp_ring(uint32_t qpn, int which)
{
	struct obj *qp = obj_get(OBJ_QP, qpn);

	if (!qp || which < 0 || which > 1 || qp->ring[which] < 0)
		return NULL;
	return rings[qp->ring[which]].ctl;
}

/* The kernel's view of the CQ created with handle @handle. */
struct siw2_ring_ctl *fake_uverbs_cq_ring(uint32_t handle)
{
	struct obj *cq = obj_get(OBJ_CQ, handle);

	return cq ? rings[cq->ring[0]].ctl : NULL;
}

/* The kernel's view of the SRQ created with handle @handle. */
struct siw2_ring_ctl *fake_uverbs_srq_ring(uint32_t handle)
{
	struct obj *srq = obj_get(OBJ_SRQ, handle);

	return srq ? rings[srq->ring[0]].ctl : NULL;
}

/* The SQE at free running index @idx of QP @qpn's SQ. */
const struct siw2_sqe *fake_uverbs_qp_sqe(uint32_t qpn, uint32_t idx)
{
	struct obj *qp = obj_get(OBJ_QP, qpn);

	return qp ? ring_ent(qp->ring[0], idx) : NULL;
}

/* The RQE at free running index @idx of that SRQ. */
const struct siw2_rqe *fake_uverbs_srq_rqe(uint32_t handle, uint32_t idx)
{
	struct obj *srq = obj_get(OBJ_SRQ, handle);

	return srq ? ring_ent(srq->ring[0], idx) : NULL;
}

/* Produces a CQE as the kernel would. */
void fake_uverbs_cq_push(uint32_t handle, const struct siw2_cqe *src)
{
	struct obj *cq = obj_get(OBJ_CQ, handle);
	struct siw2_ring_ctl *ctl;

	if (!cq)
		return;
	ctl = rings[cq->ring[0]].ctl;
	memcpy(ring_ent(cq->ring[0], ctl->prod), src, sizeof(*src));
	__atomic_store_n(&ctl->prod, ctl->prod + 1, __ATOMIC_RELEASE);
}

/* The access flags REG_MR got for the MR of @handle, or -1: none such. */
int fake_uverbs_mr_access(uint32_t handle)
{
	struct obj *mr = obj_get(OBJ_MR, handle);

	return mr ? (int)mr->access : -1;
}

/*
 * ADVISE_MR ioctls so far; and what the last one that got past the
 * attribute checks carried (its first SGEs; NULL before any).
 */
unsigned int fake_uverbs_advise_calls(void)
{
	return advised.calls;
}

const struct ibv_sge *fake_uverbs_last_advise(uint32_t *advice,
					      uint32_t *flags,
					      uint32_t *num_sge)
{
	*advice = advised.advice;
	*flags = advised.flags;
	*num_sge = advised.num_sge;
	return advised.num_sge ? advised.sge : NULL;
}

unsigned int fake_uverbs_doorbells(int which)
{
	return doorbells[which & 1];
}

const struct siw2_sqe *fake_uverbs_last_sqe(void)
{
	return &last_sqe;
}

/* Live objects of every kind: 0 after a test that cleaned up. */
unsigned int fake_uverbs_objects(void)
{
	unsigned int n = 0;
	int i;

	for (i = 0; i < MAX_OBJS; i++)
		n += objs[i].kind != OBJ_NONE;
	return n;
}

static int dispatch(const void *buf, size_t len)
{
	const struct ib_uverbs_cmd_hdr *hdr = buf;
	const char *p = (const char *)(hdr + 1);
	uint32_t cmd;

	if (len < sizeof(*hdr))
		return EINVAL;
	cmd = hdr->command;

	if (cmd & IB_USER_VERBS_CMD_FLAG_EXTENDED) {
		const struct ib_uverbs_ex_cmd_hdr *ex = (const void *)p;
		size_t in_len = hdr->in_words * 8;
		size_t out_len = hdr->out_words * 8;

		if (len != sizeof(*hdr) + sizeof(*ex) + in_len +
			   ex->provider_in_words * 8)
			return EINVAL;
		switch (cmd & ~IB_USER_VERBS_CMD_FLAG_EXTENDED) {
		case IB_USER_VERBS_EX_CMD_QUERY_DEVICE:
			return ex_query_device(ex, in_len, out_len);
		default:
			return EOPNOTSUPP;
		}
	}

	if (hdr->in_words * 4 != len)
		return EINVAL;
	len -= sizeof(*hdr);
	switch (cmd) {
	case IB_USER_VERBS_CMD_GET_CONTEXT:
		return get_context(p, len, hdr->out_words * 4);
	case IB_USER_VERBS_CMD_QUERY_DEVICE:
		return query_device(p, len, hdr->out_words * 4);
	case IB_USER_VERBS_CMD_QUERY_PORT:
		return query_port(p, len, hdr->out_words * 4);
	case IB_USER_VERBS_CMD_ALLOC_PD:
		return alloc_pd(p, len, hdr->out_words * 4);
	case IB_USER_VERBS_CMD_DEALLOC_PD:
		return dealloc_pd(p, len);
	case IB_USER_VERBS_CMD_CREATE_CQ:
		return create_cq(p, len, hdr->out_words * 4);
	case IB_USER_VERBS_CMD_RESIZE_CQ:
		return resize_cq(p, len, hdr->out_words * 4);
	case IB_USER_VERBS_CMD_DESTROY_CQ:
		return destroy_cq(p, len, hdr->out_words * 4);
	case IB_USER_VERBS_CMD_CREATE_QP:
		return create_qp(p, len, hdr->out_words * 4);
	case IB_USER_VERBS_CMD_MODIFY_QP:
		return modify_qp(p, len);
	case IB_USER_VERBS_CMD_QUERY_QP:
		return query_qp(p, len, hdr->out_words * 4);
	case IB_USER_VERBS_CMD_DESTROY_QP:
		return destroy_qp(p, len, hdr->out_words * 4);
	case IB_USER_VERBS_CMD_POST_SEND:
		return doorbell(p, len, hdr->out_words * 4, true);
	case IB_USER_VERBS_CMD_POST_RECV:
		return doorbell(p, len, hdr->out_words * 4, false);
	case IB_USER_VERBS_CMD_CREATE_SRQ:
		return create_srq(p, len, hdr->out_words * 4);
	case IB_USER_VERBS_CMD_MODIFY_SRQ:
		return modify_srq(p, len);
	case IB_USER_VERBS_CMD_QUERY_SRQ:
		return query_srq(p, len, hdr->out_words * 4);
	case IB_USER_VERBS_CMD_DESTROY_SRQ:
		return destroy_srq(p, len, hdr->out_words * 4);
	case IB_USER_VERBS_CMD_REG_MR:
		return reg_mr(p, len, hdr->out_words * 4);
	case IB_USER_VERBS_CMD_DEREG_MR:
		return dereg_mr(p, len);
	case IB_USER_VERBS_CMD_ALLOC_MW:
		return alloc_mw(p, len, hdr->out_words * 4);
	case IB_USER_VERBS_CMD_DEALLOC_MW:
		return dealloc_mw(p, len);
	default:
		return EOPNOTSUPP;
	}
}

static void resolve(void)
{
	if (!real_write)
		real_write = (ssize_t (*)(int, const void *, size_t))
			dlsym(RTLD_NEXT, "write");
	if (!real_mmap)
		real_mmap = (void *(*)(void *, size_t, int, int, int, off_t))
			dlsym(RTLD_NEXT, "mmap");
	if (!real_ioctl)
		real_ioctl = (int (*)(int, unsigned long, ...))
			dlsym(RTLD_NEXT, "ioctl");
}

/* A ring is mapped whole, at its key, shared: what siw2.ko will insist on. */
void *mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off)
{
	int r;

	resolve();
	if (fd < 0 || !is_fake_uverbs(fd))
		return real_mmap(addr, len, prot, flags, fd, off);
	for (r = 0; r < MAX_RINGS; r++) {
		if (rings[r].ctl && ring_key(r) == (uint64_t)off &&
		    rings[r].len == len && (flags & MAP_SHARED))
			return real_mmap(addr, len, prot, flags, rings[r].fd, 0);
	}
	errno = EINVAL;
	return MAP_FAILED;
}

ssize_t write(int fd, const void *buf, size_t len)
{
	int err;

	resolve();
	if (!is_fake_uverbs(fd))
		return real_write(fd, buf, len);

	err = dispatch(buf, len);
	if (getenv("FAKE_UVERBS_TRACE"))
		fprintf(stderr, "fake_uverbs: cmd 0x%x len %zu -> %d\n",
			((const struct ib_uverbs_cmd_hdr *)buf)->command, len,
			err);
	if (err) {
		errno = err;
		return -1;
	}
	return len;
}

int ioctl(int fd, unsigned long request, ...)
{
	va_list ap;
	void *arg;
	int err;

	va_start(ap, request);
	arg = va_arg(ap, void *);
	va_end(ap);

	resolve();
	if (request != RDMA_VERBS_IOCTL || !is_fake_uverbs(fd))
		return real_ioctl(fd, request, arg);
	err = ioctl_dispatch(arg);
	if (err == ENOTTY)
		return real_ioctl(fd, request, arg);
	if (getenv("FAKE_UVERBS_TRACE"))
		fprintf(stderr, "fake_uverbs: ioctl object %u method %u -> %d\n",
			((const struct ib_uverbs_ioctl_hdr *)arg)->object_id,
			((const struct ib_uverbs_ioctl_hdr *)arg)->method_id,
			err);
	if (err) {
		errno = err;
		return -1;
	}
	return 0;
}
