// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * libsiw2: the ibv_wr_*() work request API of a QP created with
 * IBV_QP_INIT_ATTR_SEND_OPS_FLAGS (libibverbs' ibv_wr_post(3)).
 *
 * wr_start takes the SQ's lock and opens a batch (sq.c); every builder
 * (wr_send, wr_rdma_write, ...) takes the next free slot and writes an
 * SQE header there from qp_ex->wr_id and wr_flags, the setters that
 * follow it (wr_set_sge, wr_set_inline_data, ...) give that SQE its data,
 * and wr_complete publishes the whole batch at once with the release
 * store and doorbell rule of ibv_post_send(). Nothing is visible to the
 * kernel before wr_complete; wr_abort drops the batch.
 *
 * The API reports no error before wr_complete: the first one (a full
 * ring, a setter without a builder, data the operation cannot take, ...)
 * is kept, everything after it ignored, and wr_complete then discards the
 * whole batch and returns it. Each SQE is judged by siw2_sqe_check() once
 * it is finished, that is when the next builder or wr_complete comes.
 *
 * iWARP RC QPs have no UD address, XRC SRQ, TSO or atomic write: those
 * builders and setters stay NULL, and a QP asking for them is refused
 * (EOPNOTSUPP), as ibv_create_qp_ex(3) requires.
 */
#include <errno.h>

#include "siw2.h"

#define SUPPORTED_SEND_OPS (IBV_QP_EX_WITH_SEND | \
			    IBV_QP_EX_WITH_SEND_WITH_IMM | \
			    IBV_QP_EX_WITH_SEND_WITH_INV | \
			    IBV_QP_EX_WITH_RDMA_WRITE | \
			    IBV_QP_EX_WITH_RDMA_WRITE_WITH_IMM | \
			    IBV_QP_EX_WITH_RDMA_READ | \
			    IBV_QP_EX_WITH_ATOMIC_CMP_AND_SWP | \
			    IBV_QP_EX_WITH_ATOMIC_FETCH_AND_ADD | \
			    IBV_QP_EX_WITH_LOCAL_INV | \
			    IBV_QP_EX_WITH_BIND_MW)

static void wr_fail(struct siw2_qp *qp, int err)
{
	if (!qp->wr_err)
		qp->wr_err = err;
}

/* The SQE the setters worked on is finished: is it a valid one? */
static void wr_close(struct siw2_qp *qp)
{
	if (qp->wr_sqe && !qp->wr_err)
		wr_fail(qp, siw2_sqe_check(qp->wr_sqe));
	qp->wr_sqe = NULL;
}

/* Every builder: the next slot gets @wr's header. */
static void wr_build(struct ibv_qp_ex *qp_ex, struct siw2_wr *wr)
{
	struct siw2_qp *qp = siw2_qp_ex_of(qp_ex);
	struct siw2_sqe *sqe;
	int err;

	wr_close(qp);
	if (qp->wr_err)
		return;
	sqe = siw2_sq_next(qp, &qp->wr);
	if (!sqe) {
		wr_fail(qp, ENOMEM);
		return;
	}
	wr->wr_id = qp_ex->wr_id;
	wr->send_flags = qp_ex->wr_flags;
	err = siw2_sqe_init(qp, sqe, wr);
	if (err) {
		wr_fail(qp, err);
		return;
	}
	qp->wr.n++;
	qp->wr_sqe = sqe;
}

/* Every setter: the SQE it applies to, or NULL (the batch has failed). */
static struct siw2_sqe *wr_target(struct siw2_qp *qp)
{
	if (qp->wr_err)
		return NULL;
	if (!qp->wr_sqe) {
		wr_fail(qp, EINVAL);	/* a setter before any builder */
		return NULL;
	}
	return qp->wr_sqe;
}

/* ---- builders ---- */

static void wr_send(struct ibv_qp_ex *qp_ex)
{
	wr_build(qp_ex, &(struct siw2_wr){ .opcode = SIW2_OP_SEND });
}

static void wr_send_imm(struct ibv_qp_ex *qp_ex, __be32 imm_data)
{
	wr_build(qp_ex, &(struct siw2_wr){
		.opcode = SIW2_OP_SEND_IMM,
		.imm_inv = (uint32_t)imm_data,	/* passed on as given */
	});
}

static void wr_send_inv(struct ibv_qp_ex *qp_ex, uint32_t invalidate_rkey)
{
	wr_build(qp_ex, &(struct siw2_wr){
		.opcode = SIW2_OP_SEND_INV,
		.imm_inv = invalidate_rkey,
	});
}

static void wr_rdma_write(struct ibv_qp_ex *qp_ex, uint32_t rkey,
			  uint64_t remote_addr)
{
	wr_build(qp_ex, &(struct siw2_wr){
		.opcode = SIW2_OP_WRITE,
		.raddr = remote_addr,
		.rkey = rkey,
	});
}

static void wr_rdma_write_imm(struct ibv_qp_ex *qp_ex, uint32_t rkey,
			      uint64_t remote_addr, __be32 imm_data)
{
	wr_build(qp_ex, &(struct siw2_wr){
		.opcode = SIW2_OP_WRITE_IMM,
		.raddr = remote_addr,
		.rkey = rkey,
		.imm_inv = (uint32_t)imm_data,
	});
}

static void wr_rdma_read(struct ibv_qp_ex *qp_ex, uint32_t rkey,
			 uint64_t remote_addr)
{
	wr_build(qp_ex, &(struct siw2_wr){
		.opcode = SIW2_OP_READ,
		.raddr = remote_addr,
		.rkey = rkey,
	});
}

static void wr_atomic_cmp_swp(struct ibv_qp_ex *qp_ex, uint32_t rkey,
			      uint64_t remote_addr, uint64_t compare,
			      uint64_t swap)
{
	wr_build(qp_ex, &(struct siw2_wr){
		.opcode = SIW2_OP_ATOMIC_CMP_SWP,
		.raddr = remote_addr,
		.rkey = rkey,
		.compare_add = compare,
		.swap = swap,
	});
}

static void wr_atomic_fetch_add(struct ibv_qp_ex *qp_ex, uint32_t rkey,
				uint64_t remote_addr, uint64_t add)
{
	wr_build(qp_ex, &(struct siw2_wr){
		.opcode = SIW2_OP_ATOMIC_FETCH_ADD,
		.raddr = remote_addr,
		.rkey = rkey,
		.compare_add = add,
	});
}

static void wr_local_inv(struct ibv_qp_ex *qp_ex, uint32_t invalidate_rkey)
{
	wr_build(qp_ex, &(struct siw2_wr){
		.opcode = SIW2_OP_LOCAL_INV,
		.imm_inv = invalidate_rkey,
	});
}

/* A type 2 window's bind; ibv_bind_mw() binds type 1 windows (qp.c). */
static void wr_bind_mw(struct ibv_qp_ex *qp_ex, struct ibv_mw *mw,
		       uint32_t rkey, const struct ibv_mw_bind_info *bind_info)
{
	struct siw2_qp *qp = siw2_qp_ex_of(qp_ex);

	wr_build(qp_ex, &(struct siw2_wr){
		.opcode = SIW2_OP_BIND_MW,
		.rkey = rkey,
	});
	if (!wr_target(qp))
		return;
	if (!mw || mw->type != IBV_MW_TYPE_2) {
		wr_fail(qp, EINVAL);
		return;
	}
	wr_fail(qp, siw2_sqe_set_bind(qp->wr_sqe, mw, rkey, bind_info));
}

/* ---- data setters ---- */

static void wr_set_sge_list(struct ibv_qp_ex *qp_ex, size_t num_sge,
			    const struct ibv_sge *sg_list)
{
	struct siw2_qp *qp = siw2_qp_ex_of(qp_ex);
	struct siw2_sqe *sqe = wr_target(qp);

	if (sqe)
		wr_fail(qp, siw2_sqe_set_sges(qp, sqe, sg_list, num_sge));
}

static void wr_set_sge(struct ibv_qp_ex *qp_ex, uint32_t lkey, uint64_t addr,
		       uint32_t length)
{
	const struct ibv_sge sge = {
		.addr = addr,
		.length = length,
		.lkey = lkey,
	};

	wr_set_sge_list(qp_ex, 1, &sge);
}

static void wr_set_inline_data_list(struct ibv_qp_ex *qp_ex, size_t num_buf,
				    const struct ibv_data_buf *buf_list)
{
	struct siw2_qp *qp = siw2_qp_ex_of(qp_ex);
	struct siw2_sqe *sqe = wr_target(qp);
	size_t i;

	if (!sqe)
		return;
	siw2_sqe_clear_data(sqe);
	for (i = 0; i < num_buf && !qp->wr_err; i++)
		wr_fail(qp, siw2_sqe_add_inline(qp, sqe, buf_list[i].addr,
						buf_list[i].length));
	/* No buffers at all is still inline data, of length 0. */
	if (!num_buf)
		wr_fail(qp, siw2_sqe_add_inline(qp, sqe, "", 0));
}

static void wr_set_inline_data(struct ibv_qp_ex *qp_ex, void *addr,
			       size_t length)
{
	const struct ibv_data_buf buf = { .addr = addr, .length = length };

	wr_set_inline_data_list(qp_ex, 1, &buf);
}

/* ---- the batch ---- */

static void wr_start(struct ibv_qp_ex *qp_ex)
{
	struct siw2_qp *qp = siw2_qp_ex_of(qp_ex);

	pthread_spin_lock(&qp->sq_lock);
	siw2_sq_begin(qp, &qp->wr);
	qp->wr_sqe = NULL;
	qp->wr_err = 0;
}

static int wr_complete(struct ibv_qp_ex *qp_ex)
{
	struct siw2_qp *qp = siw2_qp_ex_of(qp_ex);
	uint32_t n;
	int err;

	wr_close(qp);
	err = qp->wr_err;
	/* A QP the kernel destroyed takes nothing (siw2-abi.h, "Gone"). */
	if (!err && siw2_ring_gone(&qp->sq))
		err = EIO;
	n = err ? 0 : qp->wr.n;
	if (n)
		siw2_sq_publish(qp, &qp->wr);
	pthread_spin_unlock(&qp->sq_lock);

	if (err)
		return err;
	/* Published requests are posted whatever the doorbell's fate. */
	if (n)
		siw2_sq_doorbell(qp);
	return 0;
}

static void wr_abort(struct ibv_qp_ex *qp_ex)
{
	struct siw2_qp *qp = siw2_qp_ex_of(qp_ex);

	qp->wr_sqe = NULL;
	pthread_spin_unlock(&qp->sq_lock);
}

/*
 * Installs the ibv_wr_*() entry points of @send_ops_flags (enum
 * ibv_qp_create_send_ops_flags) in a QP that is being created. Builders
 * of operations not asked for stay NULL, as in every provider.
 */
int siw2_qp_ex_setup(struct siw2_qp *qp, uint64_t send_ops_flags)
{
	struct ibv_qp_ex *q = &qp->vqp.qp_ex;

	if (send_ops_flags & ~(uint64_t)SUPPORTED_SEND_OPS)
		return EOPNOTSUPP;

	if (send_ops_flags & IBV_QP_EX_WITH_SEND)
		q->wr_send = wr_send;
	if (send_ops_flags & IBV_QP_EX_WITH_SEND_WITH_IMM)
		q->wr_send_imm = wr_send_imm;
	if (send_ops_flags & IBV_QP_EX_WITH_SEND_WITH_INV)
		q->wr_send_inv = wr_send_inv;
	if (send_ops_flags & IBV_QP_EX_WITH_RDMA_WRITE)
		q->wr_rdma_write = wr_rdma_write;
	if (send_ops_flags & IBV_QP_EX_WITH_RDMA_WRITE_WITH_IMM)
		q->wr_rdma_write_imm = wr_rdma_write_imm;
	if (send_ops_flags & IBV_QP_EX_WITH_RDMA_READ)
		q->wr_rdma_read = wr_rdma_read;
	if (send_ops_flags & IBV_QP_EX_WITH_ATOMIC_CMP_AND_SWP)
		q->wr_atomic_cmp_swp = wr_atomic_cmp_swp;
	if (send_ops_flags & IBV_QP_EX_WITH_ATOMIC_FETCH_AND_ADD)
		q->wr_atomic_fetch_add = wr_atomic_fetch_add;
	if (send_ops_flags & IBV_QP_EX_WITH_LOCAL_INV)
		q->wr_local_inv = wr_local_inv;
	if (send_ops_flags & IBV_QP_EX_WITH_BIND_MW)
		q->wr_bind_mw = wr_bind_mw;

	q->wr_set_sge = wr_set_sge;
	q->wr_set_sge_list = wr_set_sge_list;
	q->wr_set_inline_data = wr_set_inline_data;
	q->wr_set_inline_data_list = wr_set_inline_data_list;
	q->wr_start = wr_start;
	q->wr_complete = wr_complete;
	q->wr_abort = wr_abort;
	return 0;
}
