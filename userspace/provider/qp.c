// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * libsiw2: queue pairs (RC only: iWARP has no other type).
 *
 * Work requests go straight into the SQ and RQ rings shared with the kernel
 * (siw2-abi.h, "Shared queues"). Posting costs a system call only when the
 * kernel asks for one through the ring's flags: the SQ doorbell while the
 * send engine is idle, the RQ doorbell while the QP is in error and new
 * receives must be flushed. Everything else about a QP is a plain uverbs
 * command.
 *
 * Concurrency: one lock per queue; posting to the SQ and the RQ of one QP
 * from different threads does not contend. Doorbells are rung after the
 * lock is dropped: the kernel reads the ring, not the command.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "siw2.h"

struct siw2_resp_create_qp {
	struct ib_uverbs_ex_create_qp_resp ibv_resp;
	struct siw2_uresp_create_qp drv;
};

PABI_ASSERT_DRV_LAYOUT(struct siw2_resp_create_qp, ibv_resp, drv);

#define SUPPORTED_INIT_ATTR (IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_CREATE_FLAGS)
#define SUPPORTED_SEND_FLAGS (IBV_SEND_FENCE | IBV_SEND_SIGNALED | \
			      IBV_SEND_SOLICITED | IBV_SEND_INLINE)

static uint32_t min_u32(uint32_t a, uint32_t b)
{
	return a < b ? a : b;
}

/*
 * What an SQE or RQE can hold bounds what the kernel may grant; report
 * the bounded value so that the caller's caps are the truth.
 */
static void clamp_caps(struct ibv_qp_cap *cap)
{
	cap->max_send_sge = min_u32(cap->max_send_sge, SIW2_UMAX_SGE);
	cap->max_recv_sge = min_u32(cap->max_recv_sge, SIW2_UMAX_SGE);
	cap->max_inline_data = min_u32(cap->max_inline_data,
				       SIW2_UMAX_INLINE);
}

static struct ibv_qp *create_qp(struct ibv_context *ibctx,
				struct ibv_qp_init_attr_ex *attr)
{
	struct siw2_resp_create_qp resp = {};
	struct ibv_create_qp_ex cmd = {};
	struct siw2_qp *qp;
	int err;

	if (attr->qp_type != IBV_QPT_RC ||
	    (attr->comp_mask & ~SUPPORTED_INIT_ATTR) ||
	    ((attr->comp_mask & IBV_QP_INIT_ATTR_CREATE_FLAGS) &&
	     attr->create_flags)) {
		errno = EOPNOTSUPP;
		return NULL;
	}
	if (!(attr->comp_mask & IBV_QP_INIT_ATTR_PD) || !attr->pd) {
		errno = EINVAL;
		return NULL;
	}

	qp = calloc(1, sizeof(*qp));
	if (!qp)
		return NULL;
	err = pthread_spin_init(&qp->sq_lock, PTHREAD_PROCESS_PRIVATE);
	if (err)
		goto err_free;
	err = pthread_spin_init(&qp->rq_lock, PTHREAD_PROCESS_PRIVATE);
	if (err)
		goto err_sq_lock;

	err = ibv_cmd_create_qp_ex2(ibctx, &qp->vqp, attr, &cmd, sizeof(cmd),
				    &resp.ibv_resp, sizeof(resp));
	if (err)
		goto err_rq_lock;

	err = siw2_ring_map(&qp->sq, ibctx->cmd_fd, resp.drv.sq_key,
			    resp.drv.num_sqe, sizeof(struct siw2_sqe));
	if (err)
		goto err_destroy;
	if (!attr->srq) {
		err = siw2_ring_map(&qp->rq, ibctx->cmd_fd, resp.drv.rq_key,
				    resp.drv.num_rqe, sizeof(struct siw2_rqe));
		if (err)
			goto err_sq;
	}

	clamp_caps(&attr->cap);
	qp->id = resp.drv.qp_id;
	qp->max_send_sge = attr->cap.max_send_sge;
	qp->max_recv_sge = attr->cap.max_recv_sge;
	qp->max_inline = attr->cap.max_inline_data;
	qp->sq_sig_all = attr->sq_sig_all;
	return &qp->vqp.qp;

err_sq:
	siw2_ring_unmap(&qp->sq);
err_destroy:
	ibv_cmd_destroy_qp(&qp->vqp.qp);
err_rq_lock:
	pthread_spin_destroy(&qp->rq_lock);
err_sq_lock:
	pthread_spin_destroy(&qp->sq_lock);
err_free:
	free(qp);
	errno = err;
	return NULL;
}

struct ibv_qp *siw2_qp_create_ex(struct ibv_context *ibctx,
				 struct ibv_qp_init_attr_ex *attr)
{
	return create_qp(ibctx, attr);
}

/* The legacy verb: the same QP, reported back through the old struct. */
struct ibv_qp *siw2_qp_create(struct ibv_pd *pd, struct ibv_qp_init_attr *attr)
{
	struct ibv_qp_init_attr_ex attr_ex = {
		.qp_context = attr->qp_context,
		.send_cq = attr->send_cq,
		.recv_cq = attr->recv_cq,
		.srq = attr->srq,
		.cap = attr->cap,
		.qp_type = attr->qp_type,
		.sq_sig_all = attr->sq_sig_all,
		.comp_mask = IBV_QP_INIT_ATTR_PD,
		.pd = pd,
	};
	struct ibv_qp *qp;

	qp = create_qp(pd->context, &attr_ex);
	if (qp)
		attr->cap = attr_ex.cap;
	return qp;
}

int siw2_qp_modify(struct ibv_qp *ibqp, struct ibv_qp_attr *attr,
		   int attr_mask)
{
	struct ibv_modify_qp cmd = {};

	return ibv_cmd_modify_qp(ibqp, attr, attr_mask, &cmd, sizeof(cmd));
}

int siw2_qp_query(struct ibv_qp *ibqp, struct ibv_qp_attr *attr,
		  int attr_mask, struct ibv_qp_init_attr *init_attr)
{
	struct ibv_query_qp cmd = {};
	int err;

	err = ibv_cmd_query_qp(ibqp, attr, attr_mask, init_attr, &cmd,
			       sizeof(cmd));
	if (err)
		return err;
	clamp_caps(&attr->cap);
	clamp_caps(&init_attr->cap);
	return 0;
}

/* On failure the kernel's QP lives on, and with it the rings. */
int siw2_qp_destroy(struct ibv_qp *ibqp)
{
	struct siw2_qp *qp = siw2_qp_of(ibqp);
	int err;

	err = ibv_cmd_destroy_qp(ibqp);
	if (err)
		return err;
	siw2_ring_unmap(&qp->rq);
	siw2_ring_unmap(&qp->sq);
	pthread_spin_destroy(&qp->rq_lock);
	pthread_spin_destroy(&qp->sq_lock);
	free(qp);
	return 0;
}

/* Gathers the SGEs' bytes into the SQE; the caller checked num_sge. */
static int fill_inline(const struct siw2_qp *qp, struct siw2_sqe *sqe,
		       const struct ibv_send_wr *wr)
{
	uint64_t len = 0;
	int i;

	for (i = 0; i < wr->num_sge; i++) {
		uint32_t l = wr->sg_list[i].length;

		if (len + l > qp->max_inline)
			return EINVAL;
		memcpy(sqe->inline_data + len,
		       (const void *)(uintptr_t)wr->sg_list[i].addr, l);
		len += l;
	}
	sqe->inline_len = (uint32_t)len;
	sqe->num_sge = 0;
	sqe->flags |= SIW2_WQE_INLINE;
	return 0;
}

/*
 * Translates @wr into @sqe, the free slot it will occupy; the slot is only
 * published once this succeeded, so a half-written slot is harmless.
 */
static int fill_sqe(const struct siw2_qp *qp, struct siw2_sqe *sqe,
		    const struct ibv_send_wr *wr)
{
	bool can_inline = false;
	bool atomic = false;
	int i;

	if (wr->num_sge < 0 || (uint32_t)wr->num_sge > qp->max_send_sge ||
	    (wr->send_flags & ~SUPPORTED_SEND_FLAGS))
		return EINVAL;

	sqe->wr_id = wr->wr_id;
	sqe->flags = 0;
	sqe->rsvd0 = 0;
	sqe->imm_inv = 0;
	sqe->raddr = 0;
	sqe->rkey = 0;
	sqe->inline_len = 0;
	sqe->compare_add = 0;
	sqe->swap = 0;
	sqe->rsvd1[0] = 0;
	sqe->rsvd1[1] = 0;

	switch (wr->opcode) {
	case IBV_WR_SEND:
		sqe->opcode = SIW2_OP_SEND;
		can_inline = true;
		break;
	case IBV_WR_SEND_WITH_IMM:
		sqe->opcode = SIW2_OP_SEND_IMM;
		sqe->imm_inv = wr->imm_data;
		can_inline = true;
		break;
	case IBV_WR_SEND_WITH_INV:
		sqe->opcode = SIW2_OP_SEND_INV;
		sqe->imm_inv = wr->invalidate_rkey;
		can_inline = true;
		break;
	case IBV_WR_RDMA_WRITE:
		sqe->opcode = SIW2_OP_WRITE;
		sqe->raddr = wr->wr.rdma.remote_addr;
		sqe->rkey = wr->wr.rdma.rkey;
		can_inline = true;
		break;
	case IBV_WR_RDMA_WRITE_WITH_IMM:
		sqe->opcode = SIW2_OP_WRITE_IMM;
		sqe->raddr = wr->wr.rdma.remote_addr;
		sqe->rkey = wr->wr.rdma.rkey;
		sqe->imm_inv = wr->imm_data;
		can_inline = true;
		break;
	case IBV_WR_RDMA_READ:
		sqe->opcode = SIW2_OP_READ;
		sqe->raddr = wr->wr.rdma.remote_addr;
		sqe->rkey = wr->wr.rdma.rkey;
		break;
	case IBV_WR_ATOMIC_CMP_AND_SWP:
		sqe->opcode = SIW2_OP_ATOMIC_CMP_SWP;
		atomic = true;
		break;
	case IBV_WR_ATOMIC_FETCH_AND_ADD:
		sqe->opcode = SIW2_OP_ATOMIC_FETCH_ADD;
		atomic = true;
		break;
	case IBV_WR_LOCAL_INV:
		sqe->opcode = SIW2_OP_LOCAL_INV;
		sqe->imm_inv = wr->invalidate_rkey;
		sqe->num_sge = 0;
		break;
	default:
		return EINVAL;
	}

	if (atomic) {
		/* RFC 7306 atomics act on one 64-bit word: one 8-byte SGE */
		if (wr->num_sge != 1 || wr->sg_list[0].length != 8)
			return EINVAL;
		sqe->raddr = wr->wr.atomic.remote_addr;
		sqe->rkey = wr->wr.atomic.rkey;
		sqe->compare_add = wr->wr.atomic.compare_add;
		sqe->swap = wr->wr.atomic.swap;
	}

	if (wr->send_flags & IBV_SEND_SIGNALED || qp->sq_sig_all)
		sqe->flags |= SIW2_WQE_SIGNALED;
	if (wr->send_flags & IBV_SEND_SOLICITED)
		sqe->flags |= SIW2_WQE_SOLICITED;
	if (wr->send_flags & IBV_SEND_FENCE)
		sqe->flags |= SIW2_WQE_FENCE;

	if (wr->opcode == IBV_WR_LOCAL_INV)
		return 0;
	if (wr->send_flags & IBV_SEND_INLINE) {
		if (!can_inline)
			return EINVAL;
		return fill_inline(qp, sqe, wr);
	}
	sqe->num_sge = (uint8_t)wr->num_sge;
	for (i = 0; i < wr->num_sge; i++) {
		sqe->sge[i].addr = wr->sg_list[i].addr;
		sqe->sge[i].length = wr->sg_list[i].length;
		sqe->sge[i].lkey = wr->sg_list[i].lkey;
	}
	return 0;
}

/*
 * siw2-abi.h, "SQ doorbell"/"RQ doorbell": the full barrier orders our
 * store of prod before the load of flags; it pairs with the kernel's
 * smp_mb between setting a NEED_WAKEUP flag and its last look at prod.
 */
static bool need_wakeup(const struct siw2_ring *ring, uint32_t bit)
{
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	return __atomic_load_n(&ring->ctl->flags, __ATOMIC_RELAXED) & bit;
}

int siw2_qp_post_send(struct ibv_qp *ibqp, struct ibv_send_wr *wr,
		      struct ibv_send_wr **bad_wr)
{
	struct siw2_qp *qp = siw2_qp_of(ibqp);
	struct siw2_ring *sq = &qp->sq;
	struct ibv_send_wr *first = wr;
	uint32_t prod, cons, n = 0;
	int err = 0;

	pthread_spin_lock(&qp->sq_lock);
	prod = __atomic_load_n(&sq->ctl->prod, __ATOMIC_RELAXED);
	cons = __atomic_load_n(&sq->ctl->cons, __ATOMIC_ACQUIRE);
	for (; wr; wr = wr->next, n++) {
		/* A kernel cons past prod reads as full: never overwrite. */
		if (prod + n - cons >= sq->num) {
			cons = __atomic_load_n(&sq->ctl->cons,
					       __ATOMIC_ACQUIRE);
			if (prod + n - cons >= sq->num) {
				err = ENOMEM;
				break;
			}
		}
		err = fill_sqe(qp, siw2_ring_ent(sq, prod + n), wr);
		if (err)
			break;
	}
	if (n)
		__atomic_store_n(&sq->ctl->prod, prod + n, __ATOMIC_RELEASE);
	pthread_spin_unlock(&qp->sq_lock);

	if (err)
		*bad_wr = wr;
	if (n && need_wakeup(sq, SIW2_SQ_NEED_WAKEUP)) {
		struct ibv_send_wr *unused;
		int ret;

		/*
		 * The kernel refuses a doorbell only for a QP it cannot run
		 * any more; then none of these requests will execute.
		 */
		ret = ibv_cmd_post_send(ibqp, NULL, &unused);
		if (ret && !err) {
			*bad_wr = first;
			err = ret;
		}
	}
	return err;
}

int siw2_qp_post_recv(struct ibv_qp *ibqp, struct ibv_recv_wr *wr,
		      struct ibv_recv_wr **bad_wr)
{
	struct siw2_qp *qp = siw2_qp_of(ibqp);
	uint32_t n;
	int err;

	/* With an SRQ, receives go to the SRQ (ibv_post_srq_recv). */
	if (!qp->rq.ctl) {
		*bad_wr = wr;
		return EINVAL;
	}

	pthread_spin_lock(&qp->rq_lock);
	err = siw2_ring_post_recv(&qp->rq, qp->max_recv_sge, wr, bad_wr, &n);
	pthread_spin_unlock(&qp->rq_lock);

	if (n && need_wakeup(&qp->rq, SIW2_RQ_NEED_WAKEUP)) {
		struct ibv_recv_wr *unused;
		int ret;

		ret = ibv_cmd_post_recv(ibqp, NULL, &unused);
		if (ret && !err) {
			*bad_wr = wr;
			err = ret;
		}
	}
	return err;
}
