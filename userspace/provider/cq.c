// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * libsiw2: completion queues.
 *
 * The kernel produces CQEs into a ring shared with this process (siw2-abi.h,
 * "Shared queues"); polling and arming happen entirely in that memory, with
 * no system call. Only create, resize and destroy talk to the kernel.
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

struct ibv_cq *siw2_cq_create(struct ibv_context *ibctx, int cqe,
			      struct ibv_comp_channel *channel,
			      int comp_vector)
{
	struct siw2_resp_create_cq resp = {};
	struct ibv_create_cq cmd = {};
	struct siw2_cq *cq;
	int err;

	cq = calloc(1, sizeof(*cq));
	if (!cq)
		return NULL;
	err = pthread_spin_init(&cq->lock, PTHREAD_PROCESS_PRIVATE);
	if (err)
		goto err_free;

	err = ibv_cmd_create_cq(ibctx, cqe, channel, comp_vector, &cq->ibcq,
				&cmd, sizeof(cmd), &resp.ibv_resp,
				sizeof(resp));
	if (err)
		goto err_lock;

	err = siw2_ring_map(&cq->ring, ibctx->cmd_fd, resp.drv.mmap_key,
			    resp.drv.num_cqe, sizeof(struct siw2_cqe));
	if (err)
		goto err_destroy;
	cq->id = resp.drv.cq_id;
	return &cq->ibcq;

err_destroy:
	ibv_cmd_destroy_cq(&cq->ibcq);
err_lock:
	pthread_spin_destroy(&cq->lock);
err_free:
	free(cq);
	errno = err;
	return NULL;
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
	pthread_spin_destroy(&cq->lock);
	free(cq);
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
 * The CQE was published before prod, which the caller loaded with
 * acquire semantics, so plain reads see it whole. A CQE this provider
 * cannot interpret still completes its work request, as an error.
 */
static void cqe_to_wc(const struct siw2_cqe *cqe, struct ibv_wc *wc)
{
	unsigned int wc_flags = 0;

	wc->wr_id = cqe->wr_id;
	wc->status = (enum ibv_wc_status)cqe->status;
	wc->vendor_err = cqe->vendor_err;
	wc->byte_len = cqe->byte_len;
	wc->qp_num = cqe->qp_num;
	wc->imm_data = 0;
	if (!wc_opcode(cqe->opcode, &wc->opcode)) {
		wc->opcode = IBV_WC_SEND;
		if (wc->status == IBV_WC_SUCCESS)
			wc->status = IBV_WC_GENERAL_ERR;
	}
	if (cqe->flags & SIW2_CQE_WITH_IMM) {
		wc->imm_data = cqe->imm_inv;	/* passed through as given */
		wc_flags |= IBV_WC_WITH_IMM;
	} else if (cqe->flags & SIW2_CQE_WITH_INV) {
		wc->invalidated_rkey = cqe->imm_inv;
		wc_flags |= IBV_WC_WITH_INV;
	}
	wc->wc_flags = wc_flags;
	wc->src_qp = 0;
	wc->pkey_index = 0;
	wc->slid = 0;
	wc->sl = 0;
	wc->dlid_path_bits = 0;
}

int siw2_cq_poll(struct ibv_cq *ibcq, int num, struct ibv_wc *wc)
{
	struct siw2_cq *cq = siw2_cq_of(ibcq);
	struct siw2_ring *ring = &cq->ring;
	uint32_t prod, cons, avail;
	int n;

	if (num <= 0)
		return 0;

	pthread_spin_lock(&cq->lock);
	if (cq->broken)
		goto err_broken;
	cons = __atomic_load_n(&ring->ctl->cons, __ATOMIC_RELAXED);
	prod = __atomic_load_n(&ring->ctl->prod, __ATOMIC_ACQUIRE);
	avail = prod - cons;
	/* More than the ring holds is a kernel bug; never follow it. */
	if (avail > ring->num)
		goto err_broken;

	for (n = 0; n < num && (uint32_t)n < avail; n++)
		cqe_to_wc(siw2_ring_ent(ring, cons + n), &wc[n]);
	if (n)
		__atomic_store_n(&ring->ctl->cons, cons + n, __ATOMIC_RELEASE);
	pthread_spin_unlock(&cq->lock);
	return n;

err_broken:
	pthread_spin_unlock(&cq->lock);
	errno = EIO;
	return -1;
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
