// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * libsiw2: the send queue, shared by both ways of posting to it:
 * ibv_post_send() (qp.c) and the ibv_wr_*() API (qp_ex.c). Both reserve
 * slots, build SQEs and publish them here, so an SQE means the same
 * whichever API made it.
 *
 * Building an SQE: siw2_sqe_init() writes the header from a struct
 * siw2_wr, a data setter adds the SGEs or the inline bytes, and
 * siw2_sqe_check() judges the finished entry by the rule the kernel
 * applies to every SQE it fetches (siw2_sqe_valid(), siw2-abi.h), so that
 * a request the kernel would fail is refused when it is posted instead.
 *
 * Publishing follows siw2-abi.h, "Shared queues": slots are filled, then
 * prod is stored with release semantics, and the doorbell is rung only
 * while the kernel asks for it (SIW2_SQ_NEED_WAKEUP). The caller holds
 * the QP's sq_lock from siw2_sq_begin() to siw2_sq_publish() and rings
 * the doorbell after dropping it: the kernel reads the ring, not the
 * command.
 */
#include <errno.h>
#include <string.h>

#include "siw2.h"

/* IBV_SEND_* flags an SQE can carry (inline is the data setter's choice). */
#define SUPPORTED_SEND_FLAGS (IBV_SEND_FENCE | IBV_SEND_SIGNALED | \
			      IBV_SEND_SOLICITED | IBV_SEND_INLINE)

void siw2_sq_begin(struct siw2_qp *qp, struct siw2_sq_batch *b)
{
	struct siw2_ring_ctl *ctl = qp->sq.ctl;

	b->prod = __atomic_load_n(&ctl->prod, __ATOMIC_RELAXED);
	b->cons = __atomic_load_n(&ctl->cons, __ATOMIC_ACQUIRE);
	b->n = 0;
}

/*
 * The slot for the batch's next SQE, or NULL when the ring is full. The
 * caller counts the slot in (b->n++) once the SQE is built. A kernel cons
 * past prod reads as full: never overwrite.
 */
struct siw2_sqe *siw2_sq_next(struct siw2_qp *qp, struct siw2_sq_batch *b)
{
	struct siw2_ring *sq = &qp->sq;
	uint32_t idx = b->prod + b->n;

	if (idx - b->cons >= sq->num) {
		b->cons = __atomic_load_n(&sq->ctl->cons, __ATOMIC_ACQUIRE);
		if (idx - b->cons >= sq->num)
			return NULL;
	}
	return siw2_ring_ent(sq, idx);
}

void siw2_sq_publish(struct siw2_qp *qp, const struct siw2_sq_batch *b)
{
	if (b->n)
		__atomic_store_n(&qp->sq.ctl->prod, b->prod + b->n,
				 __ATOMIC_RELEASE);
}

/*
 * After a publish, without the lock. The published requests are in the
 * kernel's hands from then on: it runs them, or flushes them with the QP.
 * A doorbell fails only when the kernel cannot take the command at all
 * (out of memory); the requests then wait for the next doorbell or the
 * flush, and the callers do not report them as not posted.
 */
int siw2_sq_doorbell(struct siw2_qp *qp)
{
	if (!siw2_ring_need_wakeup(&qp->sq, SIW2_SQ_NEED_WAKEUP))
		return 0;
	return siw2_doorbell(&qp->vqp.qp, IB_USER_VERBS_CMD_POST_SEND);
}

/*
 * Writes the header of @wr into @sqe, a free slot (published only once
 * the whole SQE is good, so a half-written slot is harmless), with no
 * data yet.
 */
int siw2_sqe_init(const struct siw2_qp *qp, struct siw2_sqe *sqe,
		  const struct siw2_wr *wr)
{
	uint8_t flags = 0;

	if (wr->send_flags & ~SUPPORTED_SEND_FLAGS || wr->opcode >= SIW2_OP_MAX)
		return EINVAL;
	if (wr->send_flags & IBV_SEND_SIGNALED || qp->sq_sig_all)
		flags |= SIW2_WQE_SIGNALED;
	if (wr->send_flags & IBV_SEND_SOLICITED)
		flags |= SIW2_WQE_SOLICITED;
	if (wr->send_flags & IBV_SEND_FENCE)
		flags |= SIW2_WQE_FENCE;

	sqe->wr_id = wr->wr_id;
	sqe->opcode = wr->opcode;
	sqe->flags = flags;
	sqe->num_sge = 0;
	sqe->rsvd0 = 0;
	sqe->imm_inv = wr->imm_inv;
	sqe->raddr = wr->raddr;
	sqe->rkey = wr->rkey;
	sqe->inline_len = 0;
	sqe->compare_add = wr->compare_add;
	sqe->swap = wr->swap;
	sqe->rsvd1[0] = 0;
	sqe->rsvd1[1] = 0;
	return 0;
}

/*
 * A bind's arguments (SIW2_OP_BIND_MW): the window's range of @info's MR
 * and its rights. No MR and no length unbind a type 1 window. The kernel
 * finds the window by @rkey's index, which must be @mw's own (only the
 * key changes).
 */
int siw2_sqe_set_bind(struct siw2_sqe *sqe, const struct ibv_mw *mw,
		      uint32_t rkey, const struct ibv_mw_bind_info *info)
{
	if (!mw || ((rkey ^ mw->rkey) & ~(uint32_t)0xff))
		return EINVAL;
	siw2_sqe_clear_data(sqe);
	sqe->bind.addr = info->addr;
	sqe->bind.length = info->length;
	sqe->bind.mr_lkey = info->mr ? info->mr->lkey : 0;
	sqe->bind.access = info->mw_access_flags;
	return 0;
}

/* The SQE goes back to carrying no data. */
void siw2_sqe_clear_data(struct siw2_sqe *sqe)
{
	sqe->flags &= ~SIW2_WQE_INLINE;
	sqe->num_sge = 0;
	sqe->inline_len = 0;
}

/* The SQE's data becomes @num SGEs (replacing any set before). */
int siw2_sqe_set_sges(const struct siw2_qp *qp, struct siw2_sqe *sqe,
		      const struct ibv_sge *sg, size_t num)
{
	size_t i;

	if (num > qp->max_send_sge)
		return EINVAL;
	siw2_sqe_clear_data(sqe);
	for (i = 0; i < num; i++) {
		sqe->sge[i].addr = sg[i].addr;
		sqe->sge[i].length = sg[i].length;
		sqe->sge[i].lkey = sg[i].lkey;
	}
	sqe->num_sge = (uint8_t)num;
	return 0;
}

/*
 * Appends @len bytes at @addr to the SQE's inline data; the first call
 * after siw2_sqe_init() or siw2_sqe_clear_data() starts it.
 */
int siw2_sqe_add_inline(const struct siw2_qp *qp, struct siw2_sqe *sqe,
			const void *addr, size_t len)
{
	if (sqe->num_sge || len > qp->max_inline - sqe->inline_len)
		return EINVAL;
	if (len)
		memcpy(sqe->inline_data + sqe->inline_len, addr, len);
	sqe->inline_len += (uint32_t)len;
	sqe->flags |= SIW2_WQE_INLINE;
	return 0;
}

/*
 * Is the finished SQE one the kernel will execute? The setters bounded
 * the SGE count and the inline length by the QP's limits, which is what
 * the kernel checks on top of the uAPI's rule; a user QP has no use of
 * the kernel-only opcodes.
 */
int siw2_sqe_check(const struct siw2_sqe *sqe)
{
	return siw2_sqe_valid(sqe, 0) ? 0 : EINVAL;
}
