// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * libsiw2: the extended poll API of a CQ made by ibv_create_cq_ex()
 * (ibv_start_poll, ibv_next_poll, ibv_end_poll and the ibv_wc_read_*()
 * accessors; libibverbs' ibv_create_cq_ex(3)).
 *
 * It walks the same ring as ibv_poll_cq() (cq.c), without copying CQEs
 * out: a successful start_poll takes the CQ's lock and points 'cur' at
 * the oldest CQE, next_poll moves on, and end_poll hands every CQE walked
 * over back to the kernel with one release store of cons and drops the
 * lock. The accessors read the current CQE in place; the kernel does not
 * touch a slot before cons has passed it.
 *
 * siw2 offers the standard fields (IBV_WC_STANDARD_FLAGS); an iWARP RC
 * completion has no source QP, LIDs or SL, which read as 0. Completion
 * timestamps, VLANs, flow tags and tag matching are not offered:
 * ibv_create_cq_ex() refuses them (EOPNOTSUPP) and their accessors stay
 * NULL, and the device reports no timestamp clock (hca_core_clock 0,
 * completion_timestamp_mask 0).
 */
#include <errno.h>

#include "siw2.h"

/* The CQE at free running index @idx becomes the current one. */
static void set_current(struct siw2_cq *cq, uint32_t idx)
{
	struct ibv_cq_ex *cq_ex = &cq->vcq.cq_ex;

	cq->cur = siw2_ring_ent(&cq->ring, idx);
	siw2_cqe_decode(cq->cur, &cq->cur_wc);
	cq_ex->status = cq->cur_wc.status;
	cq_ex->wr_id = cq->cur->wr_id;
	cq->poll_next = idx + 1;
}

/* On success the lock stays held until end_poll; on error it is not. */
static int start_poll(struct ibv_cq_ex *cq_ex, struct ibv_poll_cq_attr *attr)
{
	struct siw2_cq *cq = siw2_cq_ex_of(cq_ex);
	uint32_t cons, prod;
	int err;

	if (attr->comp_mask)
		return EINVAL;

	pthread_spin_lock(&cq->lock);
	err = siw2_cq_pending(cq, &cons, &prod);
	if (!err && cons == prod)
		err = ENOENT;
	if (err) {
		pthread_spin_unlock(&cq->lock);
		return err;
	}
	cq->poll_prod = prod;
	set_current(cq, cons);
	return 0;
}

/*
 * ENOENT when nothing more has arrived; the caller ends the batch with
 * end_poll either way.
 */
static int next_poll(struct ibv_cq_ex *cq_ex)
{
	struct siw2_cq *cq = siw2_cq_ex_of(cq_ex);
	uint32_t cons, prod;
	int err;

	if (cq->poll_next == cq->poll_prod) {
		err = siw2_cq_pending(cq, &cons, &prod);
		if (err)
			return err;
		cq->poll_prod = prod;
		if (cq->poll_next == prod)
			return ENOENT;
	}
	set_current(cq, cq->poll_next);
	return 0;
}

static void end_poll(struct ibv_cq_ex *cq_ex)
{
	struct siw2_cq *cq = siw2_cq_ex_of(cq_ex);

	siw2_cq_consume(cq, cq->poll_next);
	cq->cur = NULL;
	pthread_spin_unlock(&cq->lock);
}

/* ---- the current completion ---- */

static enum ibv_wc_opcode read_opcode(struct ibv_cq_ex *cq_ex)
{
	return siw2_cq_ex_of(cq_ex)->cur_wc.opcode;
}

static uint32_t read_vendor_err(struct ibv_cq_ex *cq_ex)
{
	return siw2_cq_ex_of(cq_ex)->cur->vendor_err;
}

static unsigned int read_wc_flags(struct ibv_cq_ex *cq_ex)
{
	return siw2_cq_ex_of(cq_ex)->cur_wc.wc_flags;
}

static uint32_t read_byte_len(struct ibv_cq_ex *cq_ex)
{
	return siw2_cq_ex_of(cq_ex)->cur->byte_len;
}

/*
 * Immediate data as the sender gave it, or (IBV_WC_WITH_INV) the
 * invalidated rkey, which ibv_wc_read_invalidated_rkey() reads here too.
 */
static __be32 read_imm_data(struct ibv_cq_ex *cq_ex)
{
	const struct siw2_cq *cq = siw2_cq_ex_of(cq_ex);

	return cq->cur_wc.wc_flags ? (__be32)cq->cur->imm_inv : 0;
}

static uint32_t read_qp_num(struct ibv_cq_ex *cq_ex)
{
	return siw2_cq_ex_of(cq_ex)->cur->qp_num;
}

/* RC over iWARP: no source QP, LID, SL or path bits. */
static uint32_t read_zero32(struct ibv_cq_ex *cq_ex)
{
	(void)cq_ex;
	return 0;
}

static uint8_t read_zero8(struct ibv_cq_ex *cq_ex)
{
	(void)cq_ex;
	return 0;
}

/*
 * Installs the extended poll API in a CQ being created, with the
 * accessors of @wc_flags (enum ibv_create_cq_wc_flags, already checked
 * against what siw2 offers); opcode, vendor_err and wc_flags are always
 * readable.
 */
int siw2_cq_ex_setup(struct siw2_cq *cq, uint64_t wc_flags)
{
	struct ibv_cq_ex *q = &cq->vcq.cq_ex;

	if (wc_flags & ~(uint64_t)IBV_WC_STANDARD_FLAGS)
		return EOPNOTSUPP;

	q->start_poll = start_poll;
	q->next_poll = next_poll;
	q->end_poll = end_poll;
	q->read_opcode = read_opcode;
	q->read_vendor_err = read_vendor_err;
	q->read_wc_flags = read_wc_flags;
	if (wc_flags & IBV_WC_EX_WITH_BYTE_LEN)
		q->read_byte_len = read_byte_len;
	if (wc_flags & IBV_WC_EX_WITH_IMM)
		q->read_imm_data = read_imm_data;
	if (wc_flags & IBV_WC_EX_WITH_QP_NUM)
		q->read_qp_num = read_qp_num;
	if (wc_flags & IBV_WC_EX_WITH_SRC_QP)
		q->read_src_qp = read_zero32;
	if (wc_flags & IBV_WC_EX_WITH_SLID)
		q->read_slid = read_zero32;
	if (wc_flags & IBV_WC_EX_WITH_SL)
		q->read_sl = read_zero8;
	if (wc_flags & IBV_WC_EX_WITH_DLID_PATH_BITS)
		q->read_dlid_path_bits = read_zero8;
	return 0;
}
