// SPDX-License-Identifier: GPL-2.0
/*
 * Shared receive queues, and the receive queue element both an SRQ and a
 * QP's own RQ carry.
 *
 * An SRQ is one ring of struct siw2_rqe: the poster produces (the
 * provider, or siw2_srq_post_recv() for a kernel SRQ), the receive path
 * consumes through siw2_srq_get_rqe(), in softirq context, hence
 * srq->lock with interrupts off. An RQE leaves the ring when it is
 * fetched: the receive engine owns the copy until it completes it.
 *
 * The limit (IB_SRQ_LIMIT): once armed, the first fetch that leaves fewer
 * RQEs than the limit disarms it and raises IB_EVENT_SRQ_LIMIT_REACHED;
 * the consumer re-arms with modify_srq.
 *
 * Lifetime: the core allocates and frees struct ib_srq and refuses to
 * destroy an SRQ a QP still uses; QPs are the only path to
 * siw2_srq_get_rqe().
 */
#include <linux/log2.h>

#include "siw2.h"
#include <rdma/siw2-abi.h>

static_assert(sizeof(struct siw2_rqe) == 128);
static_assert(SIW2_MAX_SGE == SIW2_UMAX_SGE);

/* Fills an RQE (in a ring slot the caller owns) from a kernel WR. */
int siw2_rqe_from_wr(struct siw2_rqe *rqe, const struct ib_recv_wr *wr,
		     u32 max_sge)
{
	int i;

	if (wr->num_sge < 0 || wr->num_sge > max_sge)
		return -EINVAL;
	memset(rqe, 0, sizeof(*rqe));
	rqe->wr_id = wr->wr_id;
	rqe->num_sge = wr->num_sge;
	for (i = 0; i < wr->num_sge; i++) {
		rqe->sge[i].addr = wr->sg_list[i].addr;
		rqe->sge[i].length = wr->sg_list[i].length;
		rqe->sge[i].lkey = wr->sg_list[i].lkey;
	}
	return 0;
}

static void srq_event(struct siw2_srq *srq, enum ib_event_type type)
{
	struct ib_event ev = {
		.device = srq->base.device,
		.element.srq = &srq->base,
		.event = type,
	};

	if (srq->base.event_handler)
		srq->base.event_handler(&ev, srq->base.srq_context);
}

int siw2_srq_create(struct ib_srq *ibsrq, struct ib_srq_init_attr *attr,
		    struct ib_udata *udata)
{
	struct siw2_device *sdev = to_siw2_dev(ibsrq->device);
	struct siw2_srq *srq = to_siw2_srq(ibsrq);
	struct siw2_uresp_create_srq uresp = {};
	u32 size;
	int ret;

	if (attr->srq_type != IB_SRQT_BASIC)
		return -EOPNOTSUPP;
	if (!attr->attr.max_wr || attr->attr.max_wr > SIW2_MAX_SRQ_WR ||
	    attr->attr.max_sge > SIW2_MAX_SGE)
		return -EINVAL;
	if (udata) {
		if (udata->outlen < sizeof(uresp))
			return -EINVAL;
		if (udata->inlen &&
		    !ib_is_udata_cleared(udata, 0, udata->inlen))
			return -EOPNOTSUPP;
	}
	if (atomic_inc_return(&sdev->num_srq) > SIW2_MAX_SRQ) {
		ret = -ENOMEM;
		goto err_count;
	}

	size = roundup_pow_of_two(attr->attr.max_wr);
	spin_lock_init(&srq->lock);
	ret = siw2_queue_init(&srq->q, udata, size, sizeof(struct siw2_rqe),
			      &srq->lock);
	if (ret)
		goto err_count;
	srq->max_sge = SIW2_MAX_SGE;
	srq->user = !!udata;
	/* The limit given at creation is ignored; modify_srq arms it. */
	srq->limit = 0;

	if (udata) {
		uresp.num_rqe = size;
		uresp.rq_key = siw2_queue_key(&srq->q);
		ret = ib_copy_to_udata(udata, &uresp, sizeof(uresp));
		if (ret)
			goto err_queue;
	}
	attr->attr.max_wr = size;
	attr->attr.max_sge = srq->max_sge;
	siw2_obj_created(SIW2_OBJ_SRQ);
	return 0;

err_queue:
	siw2_queue_uninit(&srq->q);
err_count:
	atomic_dec(&sdev->num_srq);
	return ret;
}

/*
 * IB_SRQ_LIMIT arms (or with 0 disarms) the limit. Resizing
 * (IB_SRQ_MAX_WR) is not supported: the device does not report
 * IB_DEVICE_SRQ_RESIZE.
 */
int siw2_srq_modify(struct ib_srq *ibsrq, struct ib_srq_attr *attr,
		    enum ib_srq_attr_mask mask, struct ib_udata *udata)
{
	struct siw2_srq *srq = to_siw2_srq(ibsrq);
	unsigned long flags;

	if (udata && udata->inlen &&
	    !ib_is_udata_cleared(udata, 0, udata->inlen))
		return -EOPNOTSUPP;
	if (mask & IB_SRQ_MAX_WR)
		return -EOPNOTSUPP;
	if (mask & ~IB_SRQ_LIMIT)
		return -EINVAL;
	if (!(mask & IB_SRQ_LIMIT))
		return 0;
	if (attr->srq_limit > srq->q.size)
		return -EINVAL;
	spin_lock_irqsave(&srq->lock, flags);
	srq->limit = attr->srq_limit;
	spin_unlock_irqrestore(&srq->lock, flags);
	return 0;
}

int siw2_srq_query(struct ib_srq *ibsrq, struct ib_srq_attr *attr)
{
	struct siw2_srq *srq = to_siw2_srq(ibsrq);
	unsigned long flags;

	spin_lock_irqsave(&srq->lock, flags);
	attr->srq_limit = srq->limit;
	spin_unlock_irqrestore(&srq->lock, flags);
	attr->max_wr = srq->q.size;
	attr->max_sge = srq->max_sge;
	return 0;
}

int siw2_srq_destroy(struct ib_srq *ibsrq, struct ib_udata *udata)
{
	struct siw2_srq *srq = to_siw2_srq(ibsrq);

	siw2_queue_uninit(&srq->q);
	atomic_dec(&to_siw2_dev(ibsrq->device)->num_srq);
	siw2_obj_destroyed(SIW2_OBJ_SRQ);
	return 0;
}

/* ib_device_ops.post_srq_recv: kernel SRQs; user space writes its ring. */
int siw2_srq_post_recv(struct ib_srq *ibsrq, const struct ib_recv_wr *wr,
		       const struct ib_recv_wr **bad_wr)
{
	struct siw2_srq *srq = to_siw2_srq(ibsrq);
	unsigned long flags;
	int ret = 0;

	if (srq->user) {
		*bad_wr = wr;
		return -EINVAL;
	}
	spin_lock_irqsave(&srq->lock, flags);
	for (; wr; wr = wr->next) {
		if (!siw2_queue_space(&srq->q)) {
			ret = -ENOMEM;
			break;
		}
		ret = siw2_rqe_from_wr(siw2_queue_slot(&srq->q), wr,
				       srq->max_sge);
		if (ret)
			break;
		siw2_queue_publish(&srq->q);
	}
	spin_unlock_irqrestore(&srq->lock, flags);
	if (ret)
		*bad_wr = wr;
	return ret;
}

/**
 * siw2_srq_get_rqe() - take the next receive from an SRQ
 * @srq: the SRQ
 * @out: the RQE's copy; the receive engine owns it from now on
 *
 * Any context. Checks the limit.
 *
 * Return: 0; -ENOENT if the SRQ is empty; -EIO if its ring is broken
 * (IB_EVENT_SRQ_ERR is raised once); -EINVAL if the RQE is malformed (it
 * is consumed, @out holds it for an error completion).
 */
int siw2_srq_get_rqe(struct siw2_srq *srq, struct siw2_rqe *out)
{
	bool limit = false, broken = false;
	unsigned long flags;
	u32 avail;
	int ret;

	spin_lock_irqsave(&srq->lock, flags);
	avail = siw2_queue_avail(&srq->q);
	if (!avail) {
		ret = -ENOENT;
		if (srq->q.broken) {
			ret = -EIO;
			broken = !srq->err_sent;
			srq->err_sent = true;
		}
		goto unlock;
	}
	siw2_rqe_read(out, siw2_queue_entry(&srq->q, srq->q.cons));
	siw2_queue_consume(&srq->q, 1);
	if (srq->limit && avail - 1 < srq->limit) {
		srq->limit = 0;
		limit = true;
	}
	ret = siw2_rqe_valid(out, srq->max_sge) ? 0 : -EINVAL;
unlock:
	spin_unlock_irqrestore(&srq->lock, flags);

	if (limit)
		srq_event(srq, IB_EVENT_SRQ_LIMIT_REACHED);
	if (broken)
		srq_event(srq, IB_EVENT_SRQ_ERR);
	return ret;
}
