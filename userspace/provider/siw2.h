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
	bool doorbell_ioctl;	/* write() was refused: ring by ioctl */
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

/* What a CQE means in libibverbs' terms (cq.c decodes it, for both polls). */
struct siw2_wc_hdr {
	enum ibv_wc_status status;
	enum ibv_wc_opcode opcode;
	unsigned int wc_flags;
};

/*
 * One work request in the provider's terms, whichever API posted it
 * (ibv_post_send or ibv_wr_*): what sqe.c turns into an SQE's header.
 * The data (SGEs or inline bytes) is added to the SQE separately.
 */
struct siw2_wr {
	uint64_t wr_id;
	uint64_t raddr;
	uint64_t compare_add;
	uint64_t swap;
	uint32_t rkey;
	uint32_t imm_inv;		/* immediate data (as given) or an rkey */
	unsigned int send_flags;	/* IBV_SEND_* */
	uint8_t opcode;			/* SIW2_OP_* */
};

/*
 * SQEs being posted under the SQ's lock: slots prod .. prod + n - 1 are
 * filled but not yet published; cons is the kernel's index as last seen.
 */
struct siw2_sq_batch {
	uint32_t prod;
	uint32_t n;
	uint32_t cons;
};

static inline void *siw2_ring_ent(const struct siw2_ring *ring, uint32_t idx)
{
	return (char *)ring->ents + (size_t)(idx & (ring->num - 1)) *
				    ring->ent_size;
}

/*
 * The kernel destroyed the ring's object (siw2-abi.h, "Gone"): the
 * process destroyed it, or the device went away under it.
 */
static inline bool siw2_ring_gone(const struct siw2_ring *ring)
{
	return __atomic_load_n(&ring->ctl->flags, __ATOMIC_ACQUIRE) &
	       SIW2_RING_GONE;
}

/*
 * A CQ: the library's verbs_cq (ibv_create_cq_ex hands out &vcq.cq_ex).
 * 'lock' serialises pollers, arming and resize: resize replaces 'ring'
 * while the kernel moves the unconsumed CQEs to the new one, and a poller
 * must neither consume an entry the kernel is copying nor read a ring
 * that is going away. 'broken' is set when a resized ring could not be
 * mapped; the CQ can then only be destroyed.
 *
 * The extended poll (cq_ex.c) holds 'lock' from a successful start_poll
 * to end_poll; 'cur' is the CQE the read_*() accessors report (it stays
 * in the ring, unconsumed, until end_poll) and 'cur_wc' what it means,
 * decoded once.
 */
struct siw2_cq {
	struct verbs_cq vcq;
	pthread_spinlock_t lock;
	struct siw2_ring ring;
	uint32_t id;
	bool broken;
	const struct siw2_cqe *cur;
	struct siw2_wc_hdr cur_wc;
	uint32_t poll_next;		/* index after 'cur' */
	uint32_t poll_prod;		/* prod as last loaded */
};

/*
 * A QP: the library's verbs_qp (ibv_create_qp_ex hands out &vqp.qp_ex),
 * then the SQ and, without an SRQ, the RQ. Each queue has its own lock so
 * that senders and receivers do not contend; the limits are the
 * kernel's answer to create_qp, clamped to what an entry can hold.
 *
 * A QP created with IBV_QP_INIT_ATTR_SEND_OPS_FLAGS also takes work
 * requests through ibv_wr_*() (qp_ex.c): from wr_start to wr_complete or
 * wr_abort the caller holds sq_lock, 'wr' is the batch being built,
 * 'wr_sqe' the SQE the setters apply to (NULL before the first builder)
 * and 'wr_err' the first error, which wr_complete reports after
 * discarding the whole batch.
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
	struct siw2_sq_batch wr;
	struct siw2_sqe *wr_sqe;
	int wr_err;
};

struct siw2_srq {
	struct ibv_srq ibsrq;
	pthread_spinlock_t lock;
	struct siw2_ring rq;
	uint32_t max_sge;
};

static inline struct siw2_cq *siw2_cq_of(struct ibv_cq *ibcq)
{
	return pabi_container_of(ibcq, struct siw2_cq, vcq.cq);
}

static inline struct siw2_cq *siw2_cq_ex_of(struct ibv_cq_ex *cq_ex)
{
	return pabi_container_of(cq_ex, struct siw2_cq, vcq.cq_ex);
}

static inline struct siw2_qp *siw2_qp_of(struct ibv_qp *ibqp)
{
	return pabi_container_of(ibqp, struct siw2_qp, vqp.qp);
}

static inline struct siw2_qp *siw2_qp_ex_of(struct ibv_qp_ex *qp_ex)
{
	return pabi_container_of(qp_ex, struct siw2_qp, vqp.qp_ex);
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
bool siw2_ring_need_wakeup(const struct siw2_ring *ring, uint32_t bit);
int siw2_doorbell(struct ibv_qp *qp, uint32_t command);

/* sq.c */
void siw2_sq_begin(struct siw2_qp *qp, struct siw2_sq_batch *b);
struct siw2_sqe *siw2_sq_next(struct siw2_qp *qp, struct siw2_sq_batch *b);
void siw2_sq_publish(struct siw2_qp *qp, const struct siw2_sq_batch *b);
int siw2_sq_doorbell(struct siw2_qp *qp);
int siw2_sqe_init(const struct siw2_qp *qp, struct siw2_sqe *sqe,
		  const struct siw2_wr *wr);
int siw2_sqe_set_sges(const struct siw2_qp *qp, struct siw2_sqe *sqe,
		      const struct ibv_sge *sg, size_t num);
void siw2_sqe_clear_data(struct siw2_sqe *sqe);
int siw2_sqe_add_inline(const struct siw2_qp *qp, struct siw2_sqe *sqe,
			const void *addr, size_t len);
int siw2_sqe_check(const struct siw2_sqe *sqe);
int siw2_sqe_set_bind(struct siw2_sqe *sqe, const struct ibv_mw *mw,
		      uint32_t rkey, const struct ibv_mw_bind_info *info);

/* cq.c */
struct ibv_cq *siw2_cq_create(struct ibv_context *ibctx, int cqe,
			      struct ibv_comp_channel *channel,
			      int comp_vector);
int siw2_cq_destroy(struct ibv_cq *ibcq);
int siw2_cq_poll(struct ibv_cq *ibcq, int num, struct ibv_wc *wc);
int siw2_cq_req_notify(struct ibv_cq *ibcq, int solicited_only);
int siw2_cq_resize(struct ibv_cq *ibcq, int cqe);
struct ibv_cq_ex *siw2_cq_create_ex(struct ibv_context *ibctx,
				    struct ibv_cq_init_attr_ex *attr);
void siw2_cqe_decode(const struct siw2_cqe *cqe, struct siw2_wc_hdr *wc);
int siw2_cq_pending(struct siw2_cq *cq, uint32_t *cons, uint32_t *prod);
void siw2_cq_consume(struct siw2_cq *cq, uint32_t cons);

/* cq_ex.c */
int siw2_cq_ex_setup(struct siw2_cq *cq, uint64_t wc_flags);

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

/* qp_ex.c */
int siw2_qp_ex_setup(struct siw2_qp *qp, uint64_t send_ops_flags);

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
int siw2_mr_advise(struct ibv_pd *pd, enum ibv_advise_mr_advice advice,
		   uint32_t flags, struct ibv_sge *sg_list, uint32_t num_sge);
struct ibv_mw *siw2_mw_alloc(struct ibv_pd *pd, enum ibv_mw_type type);
int siw2_mw_dealloc(struct ibv_mw *mw);
int siw2_mw_bind(struct ibv_qp *qp, struct ibv_mw *mw,
		 struct ibv_mw_bind *mw_bind);

#endif /* SIW2_PROVIDER_H */
