// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * libsiw2: queue pairs (RC only: iWARP has no other type).
 *
 * Work requests go straight into the SQ and RQ rings shared with the kernel
 * (siw2-abi.h, "Shared queues"); sq.c builds and publishes SQEs for
 * ibv_post_send() here and for the ibv_wr_*() API (qp_ex.c) alike. Posting
 * costs a system call only when the kernel asks for one through the ring's
 * flags: the SQ doorbell while the send engine is idle, the RQ doorbell
 * while the QP is in error and new receives must be flushed. Everything
 * else about a QP is a plain uverbs command.
 *
 * Concurrency: one lock per queue; posting to the SQ and the RQ of one QP
 * from different threads does not contend. Doorbells are rung after the
 * lock is dropped: the kernel reads the ring, not the command.
 */
#include <errno.h>
#include <stdlib.h>

#include "siw2.h"

struct siw2_resp_create_qp {
	struct ib_uverbs_ex_create_qp_resp ibv_resp;
	struct siw2_uresp_create_qp drv;
};

PABI_ASSERT_DRV_LAYOUT(struct siw2_resp_create_qp, ibv_resp, drv);

#define SUPPORTED_INIT_ATTR (IBV_QP_INIT_ATTR_PD | \
			     IBV_QP_INIT_ATTR_CREATE_FLAGS | \
			     IBV_QP_INIT_ATTR_SEND_OPS_FLAGS)

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

	/* Before the command, which leaves the ibv_qp_ex part alone. */
	if (attr->comp_mask & IBV_QP_INIT_ATTR_SEND_OPS_FLAGS) {
		err = siw2_qp_ex_setup(qp, attr->send_ops_flags);
		if (err)
			goto err_rq_lock;
	}

	err = PABI_CMD_CREATE_QP_EX2(ibctx, &qp->vqp, attr, &cmd, sizeof(cmd),
				     &resp.ibv_resp, sizeof(resp));
	if (err)
		goto err_rq_lock;
	/* ibv_qp_to_qp_ex() hands out qp_ex only with this bit. */
	if (attr->comp_mask & IBV_QP_INIT_ATTR_SEND_OPS_FLAGS)
		qp->vqp.comp_mask |= VERBS_QP_EX;

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

/* The header of @wr in the provider's terms; EINVAL for an unknown opcode. */
static int wr_hdr(const struct ibv_send_wr *wr, struct siw2_wr *out)
{
	*out = (struct siw2_wr){
		.wr_id = wr->wr_id,
		.send_flags = wr->send_flags,
	};
	switch (wr->opcode) {
	case IBV_WR_SEND:
		out->opcode = SIW2_OP_SEND;
		return 0;
	case IBV_WR_SEND_WITH_IMM:
		out->opcode = SIW2_OP_SEND_IMM;
		out->imm_inv = wr->imm_data;	/* passed on as given */
		return 0;
	case IBV_WR_SEND_WITH_INV:
		out->opcode = SIW2_OP_SEND_INV;
		out->imm_inv = wr->invalidate_rkey;
		return 0;
	case IBV_WR_RDMA_WRITE:
		out->opcode = SIW2_OP_WRITE;
		break;
	case IBV_WR_RDMA_WRITE_WITH_IMM:
		out->opcode = SIW2_OP_WRITE_IMM;
		out->imm_inv = wr->imm_data;
		break;
	case IBV_WR_RDMA_READ:
		out->opcode = SIW2_OP_READ;
		break;
	case IBV_WR_ATOMIC_CMP_AND_SWP:
	case IBV_WR_ATOMIC_FETCH_AND_ADD:
		out->opcode = wr->opcode == IBV_WR_ATOMIC_CMP_AND_SWP ?
			      SIW2_OP_ATOMIC_CMP_SWP :
			      SIW2_OP_ATOMIC_FETCH_ADD;
		out->raddr = wr->wr.atomic.remote_addr;
		out->rkey = wr->wr.atomic.rkey;
		out->compare_add = wr->wr.atomic.compare_add;
		out->swap = wr->wr.atomic.swap;
		return 0;
	case IBV_WR_LOCAL_INV:
		out->opcode = SIW2_OP_LOCAL_INV;
		out->imm_inv = wr->invalidate_rkey;
		return 0;
	case IBV_WR_BIND_MW:
		out->opcode = SIW2_OP_BIND_MW;
		out->rkey = wr->bind_mw.rkey;
		return 0;
	default:
		return EINVAL;
	}
	out->raddr = wr->wr.rdma.remote_addr;
	out->rkey = wr->wr.rdma.rkey;
	return 0;
}

/* The SGEs of @wr, by reference or (IBV_SEND_INLINE) copied in. */
static int wr_data(const struct siw2_qp *qp, struct siw2_sqe *sqe,
		   const struct ibv_send_wr *wr)
{
	int i, err;

	if (wr->num_sge < 0)
		return EINVAL;
	if (!(wr->send_flags & IBV_SEND_INLINE))
		return siw2_sqe_set_sges(qp, sqe, wr->sg_list,
					 (size_t)wr->num_sge);
	if ((uint32_t)wr->num_sge > qp->max_send_sge)
		return EINVAL;
	for (i = 0; i < wr->num_sge; i++) {
		err = siw2_sqe_add_inline(qp, sqe,
			(const void *)(uintptr_t)wr->sg_list[i].addr,
			wr->sg_list[i].length);
		if (err)
			return err;
	}
	return 0;
}

/*
 * Translates @wr into @sqe, the free slot it will occupy (sq.c). A Local
 * Invalidate and a bind name no memory through SGEs: theirs, if any, are
 * ignored. ibv_post_send() binds type 2 windows only (ibv_post_send(3));
 * ibv_bind_mw() passes @type1 for its own.
 */
static int fill_sqe(const struct siw2_qp *qp, struct siw2_sqe *sqe,
		    const struct ibv_send_wr *wr, bool type1)
{
	struct siw2_wr hdr;
	int err;

	if (wr->opcode == IBV_WR_BIND_MW &&
	    (!wr->bind_mw.mw || wr->bind_mw.mw->type !=
	     (type1 ? IBV_MW_TYPE_1 : IBV_MW_TYPE_2)))
		return EINVAL;
	err = wr_hdr(wr, &hdr);
	if (!err)
		err = siw2_sqe_init(qp, sqe, &hdr);
	if (err)
		return err;
	if (wr->opcode == IBV_WR_BIND_MW)
		err = siw2_sqe_set_bind(sqe, wr->bind_mw.mw, wr->bind_mw.rkey,
					&wr->bind_mw.bind_info);
	else if (wr->opcode != IBV_WR_LOCAL_INV)
		err = wr_data(qp, sqe, wr);
	return err ?: siw2_sqe_check(sqe);
}

static int post_send(struct siw2_qp *qp, struct ibv_send_wr *wr,
		     struct ibv_send_wr **bad_wr, bool type1)
{
	struct siw2_sq_batch b;
	struct siw2_sqe *sqe;
	int err = 0;

	/* A QP the kernel destroyed takes nothing (siw2-abi.h, "Gone"). */
	if (siw2_ring_gone(&qp->sq)) {
		*bad_wr = wr;
		return EIO;
	}
	pthread_spin_lock(&qp->sq_lock);
	siw2_sq_begin(qp, &b);
	for (; wr; wr = wr->next, b.n++) {
		sqe = siw2_sq_next(qp, &b);
		if (!sqe) {
			err = ENOMEM;
			break;
		}
		err = fill_sqe(qp, sqe, wr, type1);
		if (err)
			break;
	}
	siw2_sq_publish(qp, &b);
	pthread_spin_unlock(&qp->sq_lock);

	if (err)
		*bad_wr = wr;
	/* Published requests are posted whatever the doorbell's fate. */
	if (b.n)
		siw2_sq_doorbell(qp);
	return err;
}

int siw2_qp_post_send(struct ibv_qp *ibqp, struct ibv_send_wr *wr,
		      struct ibv_send_wr **bad_wr)
{
	return post_send(siw2_qp_of(ibqp), wr, bad_wr, false);
}

/*
 * ibv_bind_mw(3): a type 1 window's bind, as a work request of @ibqp's
 * send queue under the window's next rkey, which the window carries from
 * the moment the request is posted. libibverbs checked the type and the
 * MR's protection domain.
 */
int siw2_mw_bind(struct ibv_qp *ibqp, struct ibv_mw *mw,
		 struct ibv_mw_bind *mw_bind)
{
	struct ibv_send_wr wr = {
		.wr_id = mw_bind->wr_id,
		.opcode = IBV_WR_BIND_MW,
		.send_flags = mw_bind->send_flags,
		.bind_mw = {
			.mw = mw,
			.rkey = ibv_inc_rkey(mw->rkey),
			.bind_info = mw_bind->bind_info,
		},
	};
	struct ibv_send_wr *bad;
	int err;

	err = post_send(siw2_qp_of(ibqp), &wr, &bad, true);
	if (!err)
		mw->rkey = wr.bind_mw.rkey;
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

	/* As for sends: what is published is posted. */
	if (n && siw2_ring_need_wakeup(&qp->rq, SIW2_RQ_NEED_WAKEUP))
		siw2_doorbell(ibqp, IB_USER_VERBS_CMD_POST_RECV);
	return err;
}
