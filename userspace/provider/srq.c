// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * libsiw2: shared receive queues.
 *
 * An SRQ is one receive ring (siw2-abi.h, "Shared queues") that the kernel
 * drains for every QP attached to it. Posting never needs a system call:
 * an SRQ is not flushed when one of its QPs fails, so there is nothing to
 * wake. The ring cannot be resized (the ABI has no remap for it).
 */
#include <errno.h>
#include <stdlib.h>

#include "siw2.h"

struct siw2_resp_create_srq {
	struct ib_uverbs_create_srq_resp ibv_resp;
	struct siw2_uresp_create_srq drv;
};

PABI_ASSERT_DRV_LAYOUT(struct siw2_resp_create_srq, ibv_resp, drv);

struct ibv_srq *siw2_srq_create(struct ibv_pd *pd,
				struct ibv_srq_init_attr *attr)
{
	struct siw2_resp_create_srq resp = {};
	struct ibv_create_srq cmd = {};
	struct siw2_srq *srq;
	int err;

	srq = calloc(1, sizeof(*srq));
	if (!srq)
		return NULL;
	err = pthread_spin_init(&srq->lock, PTHREAD_PROCESS_PRIVATE);
	if (err)
		goto err_free;

	err = ibv_cmd_create_srq(pd, &srq->ibsrq, attr, &cmd, sizeof(cmd),
				 &resp.ibv_resp, sizeof(resp));
	if (err)
		goto err_lock;

	err = siw2_ring_map(&srq->rq, pd->context->cmd_fd, resp.drv.rq_key,
			    resp.drv.num_rqe, sizeof(struct siw2_rqe));
	if (err)
		goto err_destroy;

	if (attr->attr.max_sge > SIW2_UMAX_SGE)
		attr->attr.max_sge = SIW2_UMAX_SGE;
	srq->max_sge = attr->attr.max_sge;
	return &srq->ibsrq;

err_destroy:
	ibv_cmd_destroy_srq(&srq->ibsrq);
err_lock:
	pthread_spin_destroy(&srq->lock);
err_free:
	free(srq);
	errno = err;
	return NULL;
}

/* Only the limit can change: a new max_wr would need a new ring. */
int siw2_srq_modify(struct ibv_srq *ibsrq, struct ibv_srq_attr *attr,
		    int attr_mask)
{
	struct ibv_modify_srq cmd = {};

	if (attr_mask & IBV_SRQ_MAX_WR)
		return EOPNOTSUPP;
	return ibv_cmd_modify_srq(ibsrq, attr, attr_mask, &cmd, sizeof(cmd));
}

int siw2_srq_query(struct ibv_srq *ibsrq, struct ibv_srq_attr *attr)
{
	struct ibv_query_srq cmd = {};
	int err;

	err = ibv_cmd_query_srq(ibsrq, attr, &cmd, sizeof(cmd));
	if (err)
		return err;
	if (attr->max_sge > SIW2_UMAX_SGE)
		attr->max_sge = SIW2_UMAX_SGE;
	return 0;
}

/* On failure the kernel's SRQ lives on, and with it the ring. */
int siw2_srq_destroy(struct ibv_srq *ibsrq)
{
	struct siw2_srq *srq = siw2_srq_of(ibsrq);
	int err;

	err = ibv_cmd_destroy_srq(ibsrq);
	if (err)
		return err;
	siw2_ring_unmap(&srq->rq);
	pthread_spin_destroy(&srq->lock);
	free(srq);
	return 0;
}

int siw2_srq_post_recv(struct ibv_srq *ibsrq, struct ibv_recv_wr *wr,
		       struct ibv_recv_wr **bad_wr)
{
	struct siw2_srq *srq = siw2_srq_of(ibsrq);
	uint32_t n;
	int err;

	pthread_spin_lock(&srq->lock);
	err = siw2_ring_post_recv(&srq->rq, srq->max_sge, wr, bad_wr, &n);
	pthread_spin_unlock(&srq->lock);
	return err;
}
