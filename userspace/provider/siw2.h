/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * libsiw2 internals shared between the provider's source files.
 *
 * Object model: libibverbs owns lookup and refcounting of every object; the
 * provider embeds the library's struct as the first member of its own so
 * that the library's pointer converts back with container_of. A
 * siw2_device lives from alloc_device until the library drops its last
 * reference (uninit_device); a siw2_context from alloc_context until
 * free_context, and holds a device reference for its whole life.
 */
#ifndef SIW2_PROVIDER_H
#define SIW2_PROVIDER_H

#include <pthread.h>

#include "pabi.h"
#include "rdma/siw2-abi.h"

#define SIW2_LOG_PREFIX "libsiw2: "

struct siw2_device {
	struct verbs_device vdev;
};

struct siw2_context {
	struct verbs_context vctx;
	uint32_t dev_flags;	/* siw2_uresp_alloc_ctx.dev_flags */
};

static inline struct siw2_context *siw2_context_of(struct ibv_context *ibctx)
{
	return pabi_container_of(ibctx, struct siw2_context, vctx.context);
}

static inline struct siw2_device *siw2_device_of(struct verbs_device *vdev)
{
	return pabi_container_of(vdev, struct siw2_device, vdev);
}

/*
 * One shared queue as this process sees it: the kernel's mapping of a
 * struct siw2_ring_ctl followed by 'num' entries (siw2-abi.h). The
 * provider keeps no copy of either index: the one it writes lives in the
 * mapping like the other, and is only ever read and written under the
 * owning object's lock.
 */
struct siw2_ring {
	struct siw2_ring_ctl *ctl;	/* NULL: no such queue */
	void *ents;
	size_t map_len;
	size_t ent_size;
	uint32_t num;			/* a power of two */
};

static inline void *siw2_ring_ent(const struct siw2_ring *ring, uint32_t idx)
{
	return (char *)ring->ents + (size_t)(idx & (ring->num - 1)) *
				    ring->ent_size;
}

/*
 * A CQ. 'lock' serialises pollers, arming and resize: resize replaces
 * 'ring' while the kernel moves the unconsumed CQEs to the new one, and
 * a poller must neither consume an entry the kernel is copying nor read
 * a ring that is going away. 'broken' is set when a resized ring could
 * not be mapped; the CQ can then only be destroyed.
 */
struct siw2_cq {
	struct ibv_cq ibcq;
	pthread_spinlock_t lock;
	struct siw2_ring ring;
	uint32_t id;
	bool broken;
};

/*
 * A QP: the library's verbs_qp (ibv_create_qp_ex hands out &vqp.qp_ex),
 * then the SQ and, without an SRQ, the RQ. Each queue has its own lock so
 * that senders and receivers do not contend; the limits are the
 * kernel's answer to create_qp, clamped to what an entry can hold.
 */
struct siw2_qp {
	struct verbs_qp vqp;
	pthread_spinlock_t sq_lock;
	pthread_spinlock_t rq_lock;
	struct siw2_ring sq;
	struct siw2_ring rq;
	uint32_t id;
	uint32_t max_send_sge;
	uint32_t max_recv_sge;
	uint32_t max_inline;
	bool sq_sig_all;
};

struct siw2_srq {
	struct ibv_srq ibsrq;
	pthread_spinlock_t lock;
	struct siw2_ring rq;
	uint32_t max_sge;
};

static inline struct siw2_cq *siw2_cq_of(struct ibv_cq *ibcq)
{
	return pabi_container_of(ibcq, struct siw2_cq, ibcq);
}

static inline struct siw2_qp *siw2_qp_of(struct ibv_qp *ibqp)
{
	return pabi_container_of(ibqp, struct siw2_qp, vqp.qp);
}

static inline struct siw2_srq *siw2_srq_of(struct ibv_srq *ibsrq)
{
	return pabi_container_of(ibsrq, struct siw2_srq, ibsrq);
}

/* ring.c */
int siw2_ring_map(struct siw2_ring *ring, int cmd_fd, uint64_t key,
		  uint32_t num, size_t ent_size);
void siw2_ring_unmap(struct siw2_ring *ring);
int siw2_ring_post_recv(struct siw2_ring *ring, uint32_t max_sge,
			struct ibv_recv_wr *wr, struct ibv_recv_wr **bad_wr,
			uint32_t *posted);

/* cq.c */
struct ibv_cq *siw2_cq_create(struct ibv_context *ibctx, int cqe,
			      struct ibv_comp_channel *channel,
			      int comp_vector);
int siw2_cq_destroy(struct ibv_cq *ibcq);
int siw2_cq_poll(struct ibv_cq *ibcq, int num, struct ibv_wc *wc);
int siw2_cq_req_notify(struct ibv_cq *ibcq, int solicited_only);
int siw2_cq_resize(struct ibv_cq *ibcq, int cqe);

/* qp.c */
struct ibv_qp *siw2_qp_create(struct ibv_pd *pd,
			      struct ibv_qp_init_attr *attr);
struct ibv_qp *siw2_qp_create_ex(struct ibv_context *ibctx,
				 struct ibv_qp_init_attr_ex *attr);
int siw2_qp_modify(struct ibv_qp *ibqp, struct ibv_qp_attr *attr,
		   int attr_mask);
int siw2_qp_query(struct ibv_qp *ibqp, struct ibv_qp_attr *attr,
		  int attr_mask, struct ibv_qp_init_attr *init_attr);
int siw2_qp_destroy(struct ibv_qp *ibqp);
int siw2_qp_post_send(struct ibv_qp *ibqp, struct ibv_send_wr *wr,
		      struct ibv_send_wr **bad_wr);
int siw2_qp_post_recv(struct ibv_qp *ibqp, struct ibv_recv_wr *wr,
		      struct ibv_recv_wr **bad_wr);

/* srq.c */
struct ibv_srq *siw2_srq_create(struct ibv_pd *pd,
				struct ibv_srq_init_attr *attr);
int siw2_srq_modify(struct ibv_srq *ibsrq, struct ibv_srq_attr *attr,
		    int attr_mask);
int siw2_srq_query(struct ibv_srq *ibsrq, struct ibv_srq_attr *attr);
int siw2_srq_destroy(struct ibv_srq *ibsrq);
int siw2_srq_post_recv(struct ibv_srq *ibsrq, struct ibv_recv_wr *wr,
		       struct ibv_recv_wr **bad_wr);

/* mr.c */
struct ibv_mr *siw2_mr_reg(struct ibv_pd *pd, void *addr, size_t length,
			   uint64_t hca_va, int access);
int siw2_mr_dereg(struct verbs_mr *vmr);

#endif /* SIW2_PROVIDER_H */
