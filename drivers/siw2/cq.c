// SPDX-License-Identifier: GPL-2.0
/*
 * Completion queues.
 *
 * A CQ is one ring of struct siw2_cqe. The kernel is its only producer:
 * siw2_cq_post(), under cq->lock with interrupts off, as completions come
 * from softirq context (RX) as well as from process context (flushes). The
 * consumer is the provider for a user CQ and siw2_cq_poll() (under the same
 * lock) for a kernel CQ. A kernel CQ keeps its arm in its own ring's
 * ctl->flags as a user CQ does, so both take one path.
 *
 * Notification (the contract of req_notify_cq): after publishing a CQE the
 * producer issues smp_mb() and only then looks at the arm; the consumer
 * stores the arm, issues a full barrier and then looks at prod. A CQE
 * produced while the CQ is being armed is therefore either seen by the
 * consumer's next poll or raises an event. The arm is consumed with
 * cmpxchg, since user space may rewrite it at any time.
 *
 * Overflow: a CQE that does not fit is dropped, never written, and the CQ
 * enters error for good (IB_EVENT_CQ_ERR, reported once). A user CQ whose
 * consumer index lies is treated the same way.
 *
 * Lifetime: the core allocates and frees struct ib_cq; it refuses to
 * destroy a CQ that a QP still uses, and QPs are the only path to
 * siw2_cq_post(), so destroy needs no synchronisation with producers.
 *
 * Lock order: a QP's locks, then cq->lock; a resize takes its mutex
 * before cq->lock. The comp_handler and event_handler run after cq->lock
 * is released but possibly with the posting QP's locks held (a flush):
 * they must not post to that QP synchronously. The core's ib_alloc_cq()
 * handlers defer to softirq or a workqueue, uverbs' handlers queue an
 * event.
 */
#include <linux/log2.h>
#include <linux/sched/clock.h>
#include <rdma/uverbs_ioctl.h>

#include "siw2.h"
#include <rdma/siw2-abi.h>

static_assert(sizeof(struct siw2_cqe) == 32);

static const enum ib_wc_opcode wc_opcode[] = {
	[SIW2_WC_SEND] = IB_WC_SEND,
	[SIW2_WC_WRITE] = IB_WC_RDMA_WRITE,
	[SIW2_WC_READ] = IB_WC_RDMA_READ,
	[SIW2_WC_COMP_SWAP] = IB_WC_COMP_SWAP,
	[SIW2_WC_FETCH_ADD] = IB_WC_FETCH_ADD,
	[SIW2_WC_LOCAL_INV] = IB_WC_LOCAL_INV,
	[SIW2_WC_REG_MR] = IB_WC_REG_MR,
	[SIW2_WC_RECV] = IB_WC_RECV,
	[SIW2_WC_RECV_IMM] = IB_WC_RECV,
	[SIW2_WC_RECV_WRITE_IMM] = IB_WC_RECV_RDMA_WITH_IMM,
	[SIW2_WC_BIND_MW] = IB_WC_BIND_MW,
};

static void cq_event(struct siw2_cq *cq, enum ib_event_type type)
{
	struct ib_event ev = {
		.device = cq->base.device,
		.element.cq = &cq->base,
		.event = type,
	};

	if (cq->base.event_handler)
		cq->base.event_handler(&ev, cq->base.cq_context);
}

static int check_udata(struct ib_udata *udata, size_t outlen)
{
	if (udata->outlen < outlen)
		return -EINVAL;
	/* Nothing is defined for input yet; zeroes keep room for later. */
	if (udata->inlen && !ib_is_udata_cleared(udata, 0, udata->inlen))
		return -EOPNOTSUPP;
	return 0;
}

int siw2_cq_create(struct ib_cq *ibcq, const struct ib_cq_init_attr *attr,
		   SIW2_CREATE_CQ_ARG *uarg)
{
	struct ib_udata *udata = uarg ? siw2_create_cq_udata(uarg) : NULL;
	struct siw2_device *sdev = to_siw2_dev(ibcq->device);
	struct siw2_cq *cq = to_siw2_cq(ibcq);
	struct siw2_uresp_create_cq uresp = {};
	u32 size;
	int ret;

	if (attr->flags)
		return -EOPNOTSUPP;
	if (attr->cqe < 1 || attr->cqe > SIW2_MAX_CQE)
		return -EINVAL;
	if (attr->comp_vector >= ibcq->device->num_comp_vectors)
		return -EINVAL;
	if (udata) {
		ret = check_udata(udata, sizeof(uresp));
		if (ret)
			return ret;
	}
	if (atomic_inc_return(&sdev->num_cq) > SIW2_MAX_CQ) {
		ret = -ENOMEM;
		goto err_count;
	}

	size = roundup_pow_of_two(attr->cqe);
	spin_lock_init(&cq->lock);
	mutex_init(&cq->resize_mutex);
	ret = siw2_queue_init(&cq->q, udata, size, sizeof(struct siw2_cqe),
			      &cq->lock);
	if (ret)
		goto err_count;
	cq->id = atomic_inc_return(&sdev->cq_ids);
	cq->comp_vector = attr->comp_vector;
	cq->user = !!udata;
	cq->base.cqe = size;

	if (udata) {
		uresp.cq_id = cq->id;
		uresp.num_cqe = size;
		uresp.mmap_key = siw2_queue_key(&cq->q);
		ret = ib_copy_to_udata(udata, &uresp, sizeof(uresp));
		if (ret)
			goto err_queue;
	}
	siw2_obj_created(SIW2_OBJ_CQ);
	return 0;

err_queue:
	siw2_queue_uninit(&cq->q);
err_count:
	atomic_dec(&sdev->num_cq);
	return ret;
}

int siw2_cq_destroy(struct ib_cq *ibcq, struct ib_udata *udata)
{
	struct siw2_cq *cq = to_siw2_cq(ibcq);

	siw2_queue_uninit(&cq->q);
	mutex_destroy(&cq->resize_mutex);
	atomic_dec(&to_siw2_dev(ibcq->device)->num_cq);
	siw2_obj_destroyed(SIW2_OBJ_CQ);
	return 0;
}

/*
 * wc->qp must point at the QP, while a CQE only names its number. The QP
 * is found by number; a CQE that outlived its QP yields NULL (a consumer
 * that destroys a QP before reaping its completions cannot use wc->qp).
 */
static void cqe_to_wc(struct siw2_cq *cq, const struct siw2_cqe *cqe,
		      struct ib_wc *wc)
{
	struct siw2_device *sdev = to_siw2_dev(cq->base.device);
	struct siw2_qp *qp = xa_load(&sdev->qps, cqe->qp_num);

	memset(wc, 0, sizeof(*wc));
	wc->wr_id = cqe->wr_id;
	wc->status = cqe->status;
	wc->opcode = cqe->opcode < ARRAY_SIZE(wc_opcode) ?
		     wc_opcode[cqe->opcode] : IB_WC_SEND;
	wc->vendor_err = cqe->vendor_err;
	wc->byte_len = cqe->byte_len;
	wc->qp = qp ? &qp->base : NULL;
	wc->port_num = 1;
	if (cqe->flags & SIW2_CQE_WITH_IMM) {
		/* Immediate data travels as the consumer gave it. */
		wc->ex.imm_data = (__force __be32)cqe->imm_inv;
		wc->wc_flags |= IB_WC_WITH_IMM;
	} else if (cqe->flags & SIW2_CQE_WITH_INV) {
		wc->ex.invalidate_rkey = cqe->imm_inv;
		wc->wc_flags |= IB_WC_WITH_INVALIDATE;
	}
}

/* ib_device_ops.poll_cq: kernel CQs only, user space polls its ring. */
int siw2_cq_poll(struct ib_cq *ibcq, int num, struct ib_wc *wc)
{
	struct siw2_cq *cq = to_siw2_cq(ibcq);
	struct siw2_cqe cqe;
	unsigned long flags;
	u32 avail;
	int i;

	if (cq->user)
		return -EINVAL;
	spin_lock_irqsave(&cq->lock, flags);
	avail = siw2_queue_avail(&cq->q);
	for (i = 0; i < num && i < avail; i++) {
		memcpy(&cqe, siw2_queue_entry(&cq->q, cq->q.cons), sizeof(cqe));
		siw2_queue_consume(&cq->q, 1);
		cqe_to_wc(cq, &cqe, &wc[i]);
	}
	spin_unlock_irqrestore(&cq->lock, flags);
	return i;
}

/*
 * ib_device_ops.req_notify_cq (kernel CQs). Arms are cumulative: a
 * solicited arm added to a pending next-completion arm changes nothing.
 * Under cq->lock no CQE can be produced between the arm and the look at
 * the ring, so a positive answer to IB_CQ_REPORT_MISSED_EVENTS is exact.
 */
int siw2_cq_req_notify(struct ib_cq *ibcq, enum ib_cq_notify_flags flags)
{
	struct siw2_cq *cq = to_siw2_cq(ibcq);
	unsigned long irqflags;
	bool missed;
	u32 arm;

	if (cq->user)
		return -EINVAL;
	arm = (flags & IB_CQ_SOLICITED_MASK) == IB_CQ_SOLICITED ?
	      SIW2_CQ_ARM_SOLICITED : SIW2_CQ_ARM_NEXT;
	spin_lock_irqsave(&cq->lock, irqflags);
	siw2_queue_set_flags(&cq->q, siw2_queue_flags(&cq->q) | arm);
	missed = (flags & IB_CQ_REPORT_MISSED_EVENTS) &&
		 siw2_queue_avail(&cq->q);
	spin_unlock_irqrestore(&cq->lock, irqflags);
	return missed ? 1 : 0;
}

/*
 * Does @cqe satisfy the arm, and did we consume it? As the verbs define
 * it, a solicited arm fires for a solicited or an unsuccessful completion.
 * User space may rewrite the flags concurrently; after a few lost races
 * the event is raised anyway, as a spurious event is harmless and a lost
 * one is not.
 */
static bool consume_arm(struct siw2_cq *cq, const struct siw2_cqe *cqe)
{
	u32 *arm = &cq->q.ctl->flags;
	bool sol = (cqe->flags & SIW2_CQE_SOLICITED) ||
		   cqe->status != IB_WC_SUCCESS;
	int tries;
	u32 old;

	for (tries = 0; tries < 4; tries++) {
		old = READ_ONCE(*arm);
		if (!(old & SIW2_CQ_ARM_NEXT) &&
		    !(sol && (old & SIW2_CQ_ARM_SOLICITED)))
			return false;
		if (cmpxchg(arm, old, 0) == old)
			return true;
	}
	return true;
}

/**
 * siw2_cq_post() - produce one completion
 * @cq: the CQ
 * @cqe: the completion; status uses enum ib_wc_status
 *
 * Any context. Raises the completion event if the CQE satisfies the arm.
 *
 * Return: 0; -EOVERFLOW if the CQ is full or in error (the CQE is
 * dropped and IB_EVENT_CQ_ERR raised once); -EIO if the consumer's index
 * in the ring is corrupt (treated as an overflow).
 */
int siw2_cq_post(struct siw2_cq *cq, const struct siw2_cqe *cqe)
{
	bool notify = false, report = false;
	unsigned long flags;
	int ret = 0;

	spin_lock_irqsave(&cq->lock, flags);
	if (cq->overflow) {
		ret = -EOVERFLOW;
		goto unlock;
	}
	if (!siw2_queue_space(&cq->q)) {
		cq->overflow = true;
		report = true;
		ret = cq->q.broken ? -EIO : -EOVERFLOW;
		goto unlock;
	}
	memcpy(siw2_queue_slot(&cq->q), cqe, sizeof(*cqe));
	siw2_queue_publish(&cq->q);
	/* Pairs with the consumer's barrier between its arm and its poll. */
	smp_mb();
	notify = consume_arm(cq, cqe);
unlock:
	spin_unlock_irqrestore(&cq->lock, flags);

	if (report) {
		siw2_count(to_siw2_dev(cq->base.device), SIW2_CNT_CQ_OVERFLOW);
		ibdev_dbg(cq->base.device, "cq %u: %s, completions lost\n",
			  cq->id, ret == -EIO ? "corrupt ring" : "overflow");
		cq_event(cq, IB_EVENT_CQ_ERR);
	}
	if (notify && cq->base.comp_handler)
		cq->base.comp_handler(&cq->base, cq->base.cq_context);
	return ret;
}

/*
 * ib_device_ops.resize_cq. The new ring is set up (and for user space its
 * key reported) before the switch, so that the switch itself cannot fail
 * halfway: under cq->lock the unpolled CQEs move over, or nothing changes.
 *
 * Locking: up to SIW2_MAX_CQE unpolled CQEs are copied while the old ring
 * stays the live one, without cq->lock (siw2_queue_precopy()); under the
 * lock, with interrupts off, only the few produced meanwhile are. The
 * resize mutex keeps the old ring in place for the copy.
 */
int siw2_cq_resize(struct ib_cq *ibcq, int cqe, struct ib_udata *udata)
{
	struct siw2_cq *cq = to_siw2_cq(ibcq);
	struct siw2_uresp_resize_cq uresp = {};
	struct siw2_queue nq, old;
	unsigned long flags;
	u32 size, copied;
	u64 start;
	int ret;

	if (cqe < 1 || cqe > SIW2_MAX_CQE)
		return -EINVAL;
	if (!!udata != cq->user)
		return -EINVAL;
	if (udata) {
		ret = check_udata(udata, sizeof(uresp));
		if (ret)
			return ret;
	}

	size = roundup_pow_of_two(cqe);
	mutex_lock(&cq->resize_mutex);
	ret = siw2_queue_init(&nq, udata, size, sizeof(struct siw2_cqe),
			      &cq->lock);
	if (ret)
		goto out;
	if (udata) {
		uresp.num_cqe = size;
		uresp.mmap_key = siw2_queue_key(&nq);
		ret = ib_copy_to_udata(udata, &uresp, sizeof(uresp));
		if (ret)
			goto err_queue;
	}

	copied = siw2_queue_precopy(&nq, &cq->q);
	spin_lock_irqsave(&cq->lock, flags);
	start = local_clock();
	/* A CQ in error takes no more completions, in a ring of any size. */
	ret = cq->overflow ? -EIO : siw2_queue_migrate(&nq, &cq->q, copied);
	if (!ret) {
		old = cq->q;
		cq->q = nq;
		cq->base.cqe = size;
	}
	siw2_irqoff_end(start);
	spin_unlock_irqrestore(&cq->lock, flags);
	if (ret)
		goto err_queue;

	siw2_queue_uninit(&old);
	mutex_unlock(&cq->resize_mutex);
	return 0;

err_queue:
	siw2_queue_uninit(&nq);
out:
	mutex_unlock(&cq->resize_mutex);
	return ret;
}
