// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * libsiw2: completion queues.
 *
 * The kernel produces CQEs into a ring shared with this process (siw2-abi.h,
 * "Shared queues"); polling and arming happen entirely in that memory, with
 * no system call. Only create, resize and destroy talk to the kernel. This
 * file polls for ibv_poll_cq(); cq_ex.c polls for the extended API of a
 * CQ made by ibv_create_cq_ex(), and both read CQEs through the helpers
 * here (siw2_cq_pending(), siw2_cqe_decode(), siw2_cq_consume()).
 *
 * Concurrency: libibverbs lets any number of threads poll, arm and resize
 * one CQ at once. cq->lock (a spinlock: the critical sections are a few
 * loads and stores) serialises them; see struct siw2_cq.
 */
#include <errno.h>
#include <stdlib.h>

#include "siw2.h"

struct siw2_resp_create_cq {
	struct ib_uverbs_create_cq_resp ibv_resp;
	struct siw2_uresp_create_cq drv;
};

PABI_ASSERT_DRV_LAYOUT(struct siw2_resp_create_cq, ibv_resp, drv);

struct siw2_resp_resize_cq {
	struct ib_uverbs_resize_cq_resp ibv_resp;
	struct siw2_uresp_resize_cq drv;
};

PABI_ASSERT_DRV_LAYOUT(struct siw2_resp_resize_cq, ibv_resp, drv);

struct siw2_resp_create_cq_ex {
	struct ib_uverbs_ex_create_cq_resp ibv_resp;
	struct siw2_uresp_create_cq drv;
};

PABI_ASSERT_DRV_LAYOUT(struct siw2_resp_create_cq_ex, ibv_resp, drv);

/* What ibv_create_cq_ex() may ask of siw2 CQs. */
#define SUPPORTED_WC_FLAGS IBV_WC_STANDARD_FLAGS
#define SUPPORTED_CQ_INIT_MASK IBV_CQ_INIT_ATTR_MASK_FLAGS
/*
 * A single-threaded CQ may skip locking; siw2's lock is uncontended then
 * and stays. Ignoring overrun is not offered: a siw2 CQ that overflows
 * is in error for good (drivers/siw2/cq.c).
 */
#define SUPPORTED_CQ_FLAGS IBV_CREATE_CQ_ATTR_SINGLE_THREADED

static struct siw2_cq *cq_alloc(void)
{
	struct siw2_cq *cq;
	int err;

	cq = calloc(1, sizeof(*cq));
	if (!cq)
		return NULL;
	err = pthread_spin_init(&cq->lock, PTHREAD_PROCESS_PRIVATE);
	if (err) {
		free(cq);
		errno = err;
		return NULL;
	}
	return cq;
}

static void cq_free(struct siw2_cq *cq)
{
	pthread_spin_destroy(&cq->lock);
	free(cq);
}

/* After the create command: the ring, or the kernel's CQ goes again. */
static int cq_map(struct siw2_cq *cq, int cmd_fd,
		  const struct siw2_uresp_create_cq *drv)
{
	int err;

	err = siw2_ring_map(&cq->ring, cmd_fd, drv->mmap_key, drv->num_cqe,
			    sizeof(struct siw2_cqe));
	if (err) {
		ibv_cmd_destroy_cq(&cq->vcq.cq);
		return err;
	}
	cq->id = drv->cq_id;
	return 0;
}

struct ibv_cq *siw2_cq_create(struct ibv_context *ibctx, int cqe,
			      struct ibv_comp_channel *channel,
			      int comp_vector)
{
	struct siw2_resp_create_cq resp = {};
	struct ibv_create_cq cmd = {};
	struct siw2_cq *cq;
	int err;

	cq = cq_alloc();
	if (!cq)
		return NULL;
	err = ibv_cmd_create_cq(ibctx, cqe, channel, comp_vector, &cq->vcq.cq,
				&cmd, sizeof(cmd), &resp.ibv_resp,
				sizeof(resp));
	if (!err)
		err = cq_map(cq, ibctx->cmd_fd, &resp.drv);
	if (err) {
		cq_free(cq);
		errno = err;
		return NULL;
	}
	return &cq->vcq.cq;
}

/*
 * The same CQ with the extended poll API. libibverbs refused wc_flags it
 * does not know and initialises the ibv_cq part (channel, context, event
 * counts) once this returns.
 */
struct ibv_cq_ex *siw2_cq_create_ex(struct ibv_context *ibctx,
				    struct ibv_cq_init_attr_ex *attr)
{
	struct siw2_resp_create_cq_ex resp = {};
	struct ibv_create_cq_ex cmd = {};
	struct siw2_cq *cq;
	int err;

	if (attr->wc_flags & ~(uint64_t)SUPPORTED_WC_FLAGS ||
	    attr->comp_mask & ~(uint32_t)SUPPORTED_CQ_INIT_MASK ||
	    (attr->comp_mask & IBV_CQ_INIT_ATTR_MASK_FLAGS &&
	     attr->flags & ~(uint32_t)SUPPORTED_CQ_FLAGS)) {
		errno = EOPNOTSUPP;
		return NULL;
	}

	cq = cq_alloc();
	if (!cq)
		return NULL;
	err = siw2_cq_ex_setup(cq, attr->wc_flags);
	if (!err)
		err = PABI_CMD_CREATE_CQ_EX(ibctx, attr, &cq->vcq, &cmd,
					    sizeof(cmd), &resp.ibv_resp,
					    sizeof(resp), 0);
	if (!err)
		err = cq_map(cq, ibctx->cmd_fd, &resp.drv);
	if (err) {
		cq_free(cq);
		errno = err;
		return NULL;
	}
	return &cq->vcq.cq_ex;
}

/* On failure the kernel's CQ lives on, and with it this memory. */
int siw2_cq_destroy(struct ibv_cq *ibcq)
{
	struct siw2_cq *cq = siw2_cq_of(ibcq);
	int err;

	err = ibv_cmd_destroy_cq(ibcq);
	if (err)
		return err;
	siw2_ring_unmap(&cq->ring);
	cq_free(cq);
	return 0;
}

/* False for an opcode a user CQ cannot carry (SIW2_WC_REG_MR) or unknown. */
static bool wc_opcode(uint8_t op, enum ibv_wc_opcode *out)
{
	switch (op) {
	case SIW2_WC_SEND:
		*out = IBV_WC_SEND;
		return true;
	case SIW2_WC_WRITE:
		*out = IBV_WC_RDMA_WRITE;
		return true;
	case SIW2_WC_READ:
		*out = IBV_WC_RDMA_READ;
		return true;
	case SIW2_WC_COMP_SWAP:
		*out = IBV_WC_COMP_SWAP;
		return true;
	case SIW2_WC_FETCH_ADD:
		*out = IBV_WC_FETCH_ADD;
		return true;
	case SIW2_WC_LOCAL_INV:
		*out = IBV_WC_LOCAL_INV;
		return true;
	case SIW2_WC_BIND_MW:
		*out = IBV_WC_BIND_MW;
		return true;
	case SIW2_WC_RECV:
	case SIW2_WC_RECV_IMM:
		*out = IBV_WC_RECV;
		return true;
	case SIW2_WC_RECV_WRITE_IMM:
		*out = IBV_WC_RECV_RDMA_WITH_IMM;
		return true;
	default:
		return false;
	}
}

/*
 * What @cqe means to libibverbs. A CQE this provider cannot interpret
 * still completes its work request, as an error.
 */
void siw2_cqe_decode(const struct siw2_cqe *cqe, struct siw2_wc_hdr *wc)
{
	wc->status = (enum ibv_wc_status)cqe->status;
	if (!wc_opcode(cqe->opcode, &wc->opcode)) {
		wc->opcode = IBV_WC_SEND;
		if (wc->status == IBV_WC_SUCCESS)
			wc->status = IBV_WC_GENERAL_ERR;
	}
	if (cqe->flags & SIW2_CQE_WITH_IMM)
		wc->wc_flags = IBV_WC_WITH_IMM;
	else if (cqe->flags & SIW2_CQE_WITH_INV)
		wc->wc_flags = IBV_WC_WITH_INV;
	else
		wc->wc_flags = 0;
}

/*
 * The CQE was published before prod, which the caller loaded with
 * acquire semantics, so plain reads see it whole.
 */
static void cqe_to_wc(const struct siw2_cqe *cqe, struct ibv_wc *wc)
{
	struct siw2_wc_hdr hdr;

	siw2_cqe_decode(cqe, &hdr);
	wc->wr_id = cqe->wr_id;
	wc->status = hdr.status;
	wc->opcode = hdr.opcode;
	wc->vendor_err = cqe->vendor_err;
	wc->byte_len = cqe->byte_len;
	wc->qp_num = cqe->qp_num;
	/* immediate data passed through as given, or the invalidated rkey */
	wc->imm_data = hdr.wc_flags ? cqe->imm_inv : 0;
	wc->wc_flags = hdr.wc_flags;
	wc->src_qp = 0;
	wc->pkey_index = 0;
	wc->slid = 0;
	wc->sl = 0;
	wc->dlid_path_bits = 0;
}

/*
 * The unconsumed CQEs: [*cons, *prod). Caller holds cq->lock. EIO for a
 * CQ that cannot be polled (broken, or a kernel claiming more CQEs than
 * the ring holds: a bug never followed), and for an empty CQ that the
 * kernel destroyed (siw2-abi.h, "Gone": the flag's acquire orders the
 * second look at prod after it).
 */
int siw2_cq_pending(struct siw2_cq *cq, uint32_t *cons, uint32_t *prod)
{
	struct siw2_ring *ring = &cq->ring;

	if (cq->broken)
		return EIO;
	*cons = __atomic_load_n(&ring->ctl->cons, __ATOMIC_RELAXED);
	*prod = __atomic_load_n(&ring->ctl->prod, __ATOMIC_ACQUIRE);
	if (*prod == *cons && siw2_ring_gone(ring)) {
		*prod = __atomic_load_n(&ring->ctl->prod, __ATOMIC_RELAXED);
		if (*prod == *cons)
			return EIO;
	}
	return *prod - *cons > ring->num ? EIO : 0;
}

/* Hands the slots before @cons back to the kernel. Caller holds the lock. */
void siw2_cq_consume(struct siw2_cq *cq, uint32_t cons)
{
	__atomic_store_n(&cq->ring.ctl->cons, cons, __ATOMIC_RELEASE);
}

int siw2_cq_poll(struct ibv_cq *ibcq, int num, struct ibv_wc *wc)
{
	struct siw2_cq *cq = siw2_cq_of(ibcq);
	uint32_t prod, cons;
	int n, err;

	if (num <= 0)
		return 0;

	pthread_spin_lock(&cq->lock);
	err = siw2_cq_pending(cq, &cons, &prod);
	if (err) {
		pthread_spin_unlock(&cq->lock);
		errno = err;
		return -1;
	}
	for (n = 0; n < num && cons + (uint32_t)n != prod; n++)
		cqe_to_wc(siw2_ring_ent(&cq->ring, cons + n), &wc[n]);
	if (n)
		siw2_cq_consume(cq, cons + n);
	pthread_spin_unlock(&cq->lock);
	return n;
}

/*
 * siw2-abi.h, "CQ notification": the arm is a store to shared memory and
 * the full barrier after it pairs with the kernel's smp_mb between storing
 * prod and taking the arm, so a CQE produced while we arm is either seen
 * by the caller's next poll or raises an event. The arm is OR-ed in: a
 * pending "next" must not be narrowed to "solicited" by a second request.
 */
int siw2_cq_req_notify(struct ibv_cq *ibcq, int solicited_only)
{
	struct siw2_cq *cq = siw2_cq_of(ibcq);
	uint32_t arm = solicited_only ? SIW2_CQ_ARM_SOLICITED :
					SIW2_CQ_ARM_NEXT;

	pthread_spin_lock(&cq->lock);
	if (cq->broken) {
		pthread_spin_unlock(&cq->lock);
		return EIO;
	}
	__atomic_fetch_or(&cq->ring.ctl->flags, arm, __ATOMIC_SEQ_CST);
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	pthread_spin_unlock(&cq->lock);
	return 0;
}

/*
 * The kernel moves every CQE we have not consumed (old cons up to old
 * prod) into the new ring and sets that ring's indices, and carries the
 * arm over; the old ring is dead once the command returns. Holding the
 * lock across the command keeps pollers from consuming entries that are
 * being copied, which would deliver them twice.
 */
int siw2_cq_resize(struct ibv_cq *ibcq, int cqe)
{
	struct siw2_cq *cq = siw2_cq_of(ibcq);
	struct siw2_resp_resize_cq resp = {};
	struct ibv_resize_cq cmd = {};
	struct siw2_ring ring = {};
	int err;

	pthread_spin_lock(&cq->lock);
	if (cq->broken) {
		err = EIO;
		goto out;
	}
	err = ibv_cmd_resize_cq(ibcq, cqe, &cmd, sizeof(cmd), &resp.ibv_resp,
				sizeof(resp));
	if (err)
		goto out;

	err = siw2_ring_map(&ring, ibcq->context->cmd_fd, resp.drv.mmap_key,
			    resp.drv.num_cqe, sizeof(struct siw2_cqe));
	if (err) {
		/* The kernel no longer writes the old ring: nothing to poll. */
		cq->broken = true;
		goto out;
	}
	siw2_ring_unmap(&cq->ring);
	cq->ring = ring;
out:
	pthread_spin_unlock(&cq->lock);
	return err;
}
