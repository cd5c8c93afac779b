// SPDX-License-Identifier: GPL-2.0
/*
 * Queue pairs: creation, the state machine, the kernel's post paths,
 * flushing, and the hooks the engines and the connection manager use.
 *
 * States. siw2 keeps the IB state names. An iWARP QP starts in the RDMAC
 * verbs' Idle state, which the IB verbs call INIT (as other iWARP drivers
 * report it, and as rdma-core's tests expect of an RNIC); RESET is reached
 * only through ERR. Transitions are those of the IB RC table
 * (ib_modify_qp_is_ok()); SQE is not modelled. SQD is how the iWARP CM
 * asks for a graceful disconnect: nothing new is sent and the stream ends
 * (llp.h), after which the QP is in ERR.
 *
 * Lifetime. The core allocates struct ib_qp and frees it when destroy_qp
 * returns. qp->ref keeps what siw2 owns alive beyond that point's start:
 * the creator's reference is dropped by destroy_qp, which then waits
 * until every other holder (the CM from iw_get_qp on, later the engines)
 * has dropped theirs. The QP number is removed from the device's table
 * first, so that no new holder can find it.
 *
 * Locks, all taken with interrupts off since the engines run in softirq:
 * qp->lock (state, attributes) before qp->sq_lock or qp->rq_lock (never
 * both at once), before a CQ's or the SRQ's lock. The state is written
 * under qp->lock and read under a queue lock, so that a post racing with
 * a move to ERR is either refused or flushed (the flush takes the queue
 * lock after the state is written).
 *
 * No lock is held for work whose length the user chooses: a flush takes
 * a queue lock for FLUSH_BATCH entries at a time, never under qp->lock,
 * so interrupts come in between batches whatever the caller's context
 * (one that may sleep also yields). Between two batches anything may
 * happen, and each batch therefore starts over from what the lock
 * protects: the state (RESET discards what is left, another state stops
 * the flush), cons (another flush, a doorbell's or a post's, may have
 * taken entries meanwhile; completions still come in ring order, as
 * every flush completes at cons under the queue lock), and sq_fetch.
 *
 * Flushing (what ib_drain_qp() relies on): in ERR every SQE and RQE in the
 * rings completes with IB_WC_WR_FLUSH_ERR, in ring order, signaled or
 * not. The kernel flushes when it is entered: on the move to ERR, on a
 * kernel post to a QP in ERR, and for a user QP on a doorbell
 * (post_send or post_recv without work requests), which the provider
 * rings while SIW2_SQ_NEED_WAKEUP or SIW2_RQ_NEED_WAKEUP is set (see the
 * uAPI header for the barriers).
 *
 * Trust. User rings are read through queue.c's checks; an SQE or RQE is
 * validated as a copy. A ring whose indices lie moves the QP to ERR with
 * IB_EVENT_QP_FATAL.
 */
#include <linux/cred.h>
#include <linux/log2.h>
#include <linux/sched.h>
#include <linux/sched/clock.h>
#include <rdma/uverbs_ioctl.h>

#include "siw2.h"
#include "engine.h"
#include "llp.h"
#include "trace.h"
#include <rdma/siw2-abi.h>

static_assert(sizeof(struct siw2_sqe) == 256);
static_assert(SIW2_MAX_INLINE == SIW2_UMAX_INLINE);

/* What set_state_locked() leaves for its caller to do unlocked. */
#define QP_EV_LAST_WQE	BIT(0)
#define QP_EV_BROKEN	BIT(1)
#define QP_EV_FLUSH	BIT(2)

/*
 * Entries a flush completes per hold of a queue lock (with interrupts
 * off): a few tens of microseconds, where a whole ring of SIW2_MAX_QP_WR
 * took milliseconds.
 */
#define FLUSH_BATCH	64

/* struct siw2_qp's @serial: 64 bits do not wrap. */
static atomic64_t qp_serials = ATOMIC64_INIT(0);

static const u8 sqe_wc_opcode[SIW2_OP_MAX] = {
	[SIW2_OP_SEND] = SIW2_WC_SEND,
	[SIW2_OP_SEND_INV] = SIW2_WC_SEND,
	[SIW2_OP_WRITE] = SIW2_WC_WRITE,
	[SIW2_OP_WRITE_IMM] = SIW2_WC_WRITE,
	[SIW2_OP_SEND_IMM] = SIW2_WC_SEND,
	[SIW2_OP_READ] = SIW2_WC_READ,
	[SIW2_OP_READ_INV] = SIW2_WC_READ,
	[SIW2_OP_ATOMIC_CMP_SWP] = SIW2_WC_COMP_SWAP,
	[SIW2_OP_ATOMIC_FETCH_ADD] = SIW2_WC_FETCH_ADD,
	[SIW2_OP_LOCAL_INV] = SIW2_WC_LOCAL_INV,
	[SIW2_OP_REG_MR] = SIW2_WC_REG_MR,
	[SIW2_OP_BIND_MW] = SIW2_WC_BIND_MW,
};

/**
 * siw2_qp_event() - raise an asynchronous event on the QP
 * @qp: the QP
 * @type: the event
 *
 * Any context: the consumers' handlers may not sleep.
 */
void siw2_qp_event(struct siw2_qp *qp, enum ib_event_type type)
{
	struct ib_event ev = {
		.device = qp->base.device,
		.element.qp = &qp->base,
		.event = type,
	};

	if (qp->base.event_handler)
		qp->base.event_handler(&ev, qp->base.qp_context);
}

void siw2_qp_get(struct siw2_qp *qp)
{
	kref_get(&qp->ref);
}

static void qp_released(struct kref *ref)
{
	complete(&container_of(ref, struct siw2_qp, ref)->released);
}

void siw2_qp_put(struct siw2_qp *qp)
{
	kref_put(&qp->ref, qp_released);
}

/*
 * May the caller name @qp to the iWARP CM? A user of the RDMA CM names
 * its QP by number (rdma_connect() and rdma_accept() take any number), so
 * without this any process could connect, say, another user's QP, or a
 * kernel consumer's, to a peer of its choosing. A user QP may be named by
 * a process of the user that created it, a kernel QP by a kernel thread
 * or by root (a ULP that connects from a mount(2), say). The iWARP CM
 * calls in the context of its caller.
 */
static bool may_name(const struct siw2_qp *qp)
{
	if (qp->user)
		return uid_eq(current_euid(), qp->owner);
	return (current->flags & PF_KTHREAD) ||
	       uid_eq(current_euid(), GLOBAL_ROOT_UID);
}

static bool connectable(enum ib_qp_state state)
{
	return state == IB_QPS_RESET || state == IB_QPS_INIT ||
	       state == IB_QPS_RTR;
}

/*
 * ib_device_ops.iw_get_qp. The iWARP CM calls it, then iw_add_ref() right
 * after (under one spinlock, interrupts off; the two come as a pair and
 * are called nowhere else). A destroy in between would free the QP under
 * the CM, so the reference is taken here, under the table's lock that
 * destroy's erase takes before it drops the creator's reference, and
 * iw_add_ref() keeps it. siw2's CM (cm.c) looks the QP up again in
 * iw_connect and iw_accept and keeps that reference for its CEP.
 *
 * Only a QP that can take a connection is named: in RESET, INIT or RTR
 * (a connected QP is in RTS or beyond until reset). Others make
 * rdma_connect() and rdma_accept() fail with EINVAL before anything goes
 * on the wire, instead of the peer seeing a connection that is reset.
 */
struct ib_qp *siw2_qp_iw_get(struct ib_device *ibdev, int qpn)
{
	struct siw2_device *sdev = to_siw2_dev(ibdev);
	struct siw2_qp *qp;
	unsigned long flags;

	if (qpn < 0)
		return NULL;
	xa_lock_irqsave(&sdev->qps, flags);
	qp = xa_load(&sdev->qps, qpn);
	if (qp && may_name(qp) && connectable(READ_ONCE(qp->state)))
		siw2_qp_get(qp);
	else
		qp = NULL;
	xa_unlock_irqrestore(&sdev->qps, flags);
	return qp ? &qp->base : NULL;
}

void siw2_qp_iw_add_ref(struct ib_qp *ibqp)
{
	/* siw2_qp_iw_get() took the reference. */
}

void siw2_qp_iw_rem_ref(struct ib_qp *ibqp)
{
	siw2_qp_put(to_siw2_qp(ibqp));
}

/*
 * Copies an SQE out of its slot: the fixed part, then only the SGEs or
 * inline octets it says it has (no more than the slot holds), or a
 * bind's arguments, a fraction of the slot for a small message. The rest
 * of @out is left alone; nothing reads beyond num_sge or inline_len, or
 * a bind's arguments for a bind.
 */
static void sqe_read(struct siw2_sqe *out, const struct siw2_sqe *slot)
{
	size_t n;

	memcpy(out, slot, offsetof(struct siw2_sqe, sge));
	if (out->opcode == SIW2_OP_BIND_MW)
		n = sizeof(out->bind);
	else if (out->flags & SIW2_WQE_INLINE)
		n = min_t(size_t, out->inline_len, sizeof(out->inline_data));
	else
		n = min_t(size_t, out->num_sge, ARRAY_SIZE(out->sge)) *
		    sizeof(out->sge[0]);
	memcpy(out->inline_data, slot->inline_data, n);
}

/*
 * Is this copy of an SQE one this QP may execute? The rule is the uAPI's,
 * which the provider applies too; the QP's own limits come on top.
 */
static bool sqe_valid(const struct siw2_qp *qp, const struct siw2_sqe *sqe)
{
	if (!siw2_sqe_valid(sqe, !qp->user))
		return false;
	if (sqe->flags & SIW2_WQE_INLINE)
		return sqe->inline_len <= qp->max_inline;
	return sqe->num_sge <= qp->max_send_sge;
}

/*
 * Copies the data of an inline send from the consumer's buffers. siw2 is
 * a virtual-DMA device: the addresses are kernel virtual addresses.
 */
static int sqe_inline(struct siw2_qp *qp, struct siw2_sqe *sqe,
		      const struct ib_send_wr *wr)
{
	u64 total = 0;
	int i;

	if (wr->num_sge < 0 || wr->num_sge > qp->max_send_sge)
		return -EINVAL;
	for (i = 0; i < wr->num_sge; i++)
		total += wr->sg_list[i].length;
	if (total > qp->max_inline)
		return -EINVAL;
	total = 0;
	for (i = 0; i < wr->num_sge; i++) {
		memcpy(sqe->inline_data + total,
		       (void *)(uintptr_t)wr->sg_list[i].addr,
		       wr->sg_list[i].length);
		total += wr->sg_list[i].length;
	}
	sqe->inline_len = total;
	sqe->flags |= SIW2_WQE_INLINE;
	return 0;
}

/* Fills an SQE (in a ring slot the caller owns) from a kernel WR. */
static int sqe_from_wr(struct siw2_qp *qp, struct siw2_sqe *sqe,
		       const struct ib_send_wr *wr)
{
	int i, ret;

	if (wr->send_flags & ~(IB_SEND_SIGNALED | IB_SEND_SOLICITED |
			       IB_SEND_FENCE | IB_SEND_INLINE))
		return -EINVAL;
	memset(sqe, 0, sizeof(*sqe));
	sqe->wr_id = wr->wr_id;
	if ((wr->send_flags & IB_SEND_SIGNALED) || qp->sig_all)
		sqe->flags |= SIW2_WQE_SIGNALED;
	if (wr->send_flags & IB_SEND_SOLICITED)
		sqe->flags |= SIW2_WQE_SOLICITED;
	if (wr->send_flags & IB_SEND_FENCE)
		sqe->flags |= SIW2_WQE_FENCE;

	switch (wr->opcode) {
	case IB_WR_SEND:
		sqe->opcode = SIW2_OP_SEND;
		break;
	case IB_WR_SEND_WITH_INV:
		sqe->opcode = SIW2_OP_SEND_INV;
		sqe->imm_inv = wr->ex.invalidate_rkey;
		break;
	case IB_WR_SEND_WITH_IMM:
		sqe->opcode = SIW2_OP_SEND_IMM;
		sqe->imm_inv = (__force u32)wr->ex.imm_data;
		break;
	case IB_WR_RDMA_WRITE:
	case IB_WR_RDMA_WRITE_WITH_IMM:
		sqe->opcode = wr->opcode == IB_WR_RDMA_WRITE ?
			      SIW2_OP_WRITE : SIW2_OP_WRITE_IMM;
		sqe->raddr = rdma_wr(wr)->remote_addr;
		sqe->rkey = rdma_wr(wr)->rkey;
		if (wr->opcode == IB_WR_RDMA_WRITE_WITH_IMM)
			sqe->imm_inv = (__force u32)wr->ex.imm_data;
		break;
	case IB_WR_RDMA_READ:
	case IB_WR_RDMA_READ_WITH_INV:
		sqe->opcode = wr->opcode == IB_WR_RDMA_READ ?
			      SIW2_OP_READ : SIW2_OP_READ_INV;
		sqe->raddr = rdma_wr(wr)->remote_addr;
		sqe->rkey = rdma_wr(wr)->rkey;
		if (wr->opcode != IB_WR_RDMA_READ_WITH_INV)
			break;
		/*
		 * The STag an iWARP Read with Local Invalidate ends is its
		 * data sink's. The core's rw API fills invalidate_rkey
		 * before it moves the MR to its next key, so only the
		 * index is trusted: it must name the sink's MR.
		 */
		if (wr->num_sge != 1 ||
		    wr->ex.invalidate_rkey >> 8 != wr->sg_list[0].lkey >> 8)
			return -EINVAL;
		sqe->imm_inv = wr->sg_list[0].lkey;
		break;
	case IB_WR_LOCAL_INV:
		sqe->opcode = SIW2_OP_LOCAL_INV;
		sqe->imm_inv = wr->ex.invalidate_rkey;
		break;
	case IB_WR_REG_MR:
		/*
		 * The MR is found again by its STag index when the SQE
		 * executes (siw2_mr_fast_reg()); the new key and the access
		 * rights travel in the SQE.
		 */
		if (reg_wr(wr)->mr->device != qp->base.device ||
		    reg_wr(wr)->mr->pd != qp->base.pd)
			return -EINVAL;
		sqe->opcode = SIW2_OP_REG_MR;
		sqe->rkey = reg_wr(wr)->key;
		sqe->imm_inv = reg_wr(wr)->access;
		sqe->raddr = reg_wr(wr)->mr->iova;
		break;
	case IB_WR_ATOMIC_CMP_AND_SWP:
	case IB_WR_ATOMIC_FETCH_AND_ADD:
		sqe->opcode = wr->opcode == IB_WR_ATOMIC_CMP_AND_SWP ?
			      SIW2_OP_ATOMIC_CMP_SWP :
			      SIW2_OP_ATOMIC_FETCH_ADD;
		sqe->raddr = atomic_wr(wr)->remote_addr;
		sqe->rkey = atomic_wr(wr)->rkey;
		sqe->compare_add = atomic_wr(wr)->compare_add;
		sqe->swap = atomic_wr(wr)->swap;
		break;
	case IB_WR_MASKED_ATOMIC_CMP_AND_SWP:
	case IB_WR_MASKED_ATOMIC_FETCH_AND_ADD:
		return -EOPNOTSUPP;
	default:
		return -EINVAL;
	}

	if (wr->send_flags & IB_SEND_INLINE) {
		ret = sqe_inline(qp, sqe, wr);
		if (ret)
			return ret;
	} else {
		if (wr->num_sge < 0 || wr->num_sge > qp->max_send_sge)
			return -EINVAL;
		sqe->num_sge = wr->num_sge;
		for (i = 0; i < wr->num_sge; i++) {
			sqe->sge[i].addr = wr->sg_list[i].addr;
			sqe->sge[i].length = wr->sg_list[i].length;
			sqe->sge[i].lkey = wr->sg_list[i].lkey;
		}
	}
	return sqe_valid(qp, sqe) ? 0 : -EINVAL;
}

/**
 * struct flush_mark - how far one flush goes
 * @end: the producer's index as the flush's first batch found it
 * @done: entries flushed so far, for the siw2_qp_flush tracepoint
 * @started: @end is set
 * @broken: a batch found the ring broken
 *
 * A flush completes the entries published when it began, not those
 * published while it runs: a producer that never stops could otherwise
 * keep it going for ever. Later entries are the next flush's, which the
 * wakeup bits (set in ERR) make the provider ask for with a doorbell; a
 * kernel poster flushes after its own posts.
 */
struct flush_mark {
	u32 end;
	u32 done;
	bool started;
	bool broken;
};

/*
 * How many of @q's entries @m still owes: published, not consumed (by
 * this flush or another), and below @m->end. A reset in between moves
 * cons to or beyond @m->end.
 */
static u32 flush_due(struct siw2_queue *q, struct flush_mark *m)
{
	u32 avail = siw2_queue_avail(q);

	m->broken |= q->broken;
	if (!m->started) {
		m->started = true;
		m->end = q->cons + avail;
		return avail;
	}
	if ((s32)(m->end - q->cons) <= 0)
		return 0;
	return min(avail, m->end - q->cons);
}

/*
 * One batch of an SQ flush: completes up to FLUSH_BATCH SQEs at cons with
 * a flush error. Only in ERR: after a reset the ring's content is
 * discarded instead. SQEs the send engine fetched are flushed like the
 * others; sq_fetch follows cons, so that an engine that completes one
 * late finds none in progress (siw2_qp_sq_complete()).
 *
 * Return: true if the flush owes more SQEs.
 */
static bool flush_sq(struct siw2_qp *qp, struct flush_mark *m)
{
	struct siw2_cqe cqe = {
		.status = IB_WC_WR_FLUSH_ERR,
		.qp_num = qp->base.qp_num,
	};
	const struct siw2_sqe *sqe;
	u32 due, n;
	u8 op;

	lockdep_assert_held(&qp->sq_lock);
	if (READ_ONCE(qp->state) != IB_QPS_ERR || READ_ONCE(qp->flush_held))
		return false;
	due = flush_due(&qp->sq, m);
	m->done += min_t(u32, due, FLUSH_BATCH);
	for (n = min_t(u32, due, FLUSH_BATCH); n; n--) {
		sqe = siw2_queue_entry(&qp->sq, qp->sq.cons);
		cqe.wr_id = READ_ONCE(sqe->wr_id);
		op = READ_ONCE(sqe->opcode);
		cqe.opcode = op < SIW2_OP_MAX ? sqe_wc_opcode[op] :
			     SIW2_WC_SEND;
		/* The slot is free before its CQE shows (sq_complete()). */
		siw2_queue_consume(&qp->sq, 1);
		/* An overflow is the CQ's error, reported there. */
		siw2_cq_post(qp->scq, &cqe);
	}
	qp->sq_fetch = qp->sq.cons;
	return due > FLUSH_BATCH;
}

/* One batch of an RQ flush, as flush_sq(). */
static bool flush_rq(struct siw2_qp *qp, struct flush_mark *m)
{
	struct siw2_cqe cqe = {
		.opcode = SIW2_WC_RECV,
		.status = IB_WC_WR_FLUSH_ERR,
		.qp_num = qp->base.qp_num,
	};
	const struct siw2_rqe *rqe;
	u32 due, n;

	lockdep_assert_held(&qp->rq_lock);
	if (READ_ONCE(qp->state) != IB_QPS_ERR || qp->srq ||
	    READ_ONCE(qp->flush_held))
		return false;
	due = flush_due(&qp->rq, m);
	m->done += min_t(u32, due, FLUSH_BATCH);
	for (n = min_t(u32, due, FLUSH_BATCH); n; n--) {
		rqe = siw2_queue_entry(&qp->rq, qp->rq.cons);
		cqe.wr_id = READ_ONCE(rqe->wr_id);
		siw2_queue_consume(&qp->rq, 1);
		siw2_cq_post(qp->rcq, &cqe);
	}
	return due > FLUSH_BATCH;
}

/*
 * Flushes one queue batch by batch, @lock (its queue lock) taken for each
 * @batch. @can_sleep: the caller may sleep (a system call), and yields
 * between batches. The caller holds a reference on the QP (or is its
 * verb) and no QP lock: under qp->lock, interrupts would stay off across
 * the batches.
 *
 * Return: true if the ring is broken.
 */
static bool flush_all(struct siw2_qp *qp, spinlock_t *lock,
		      bool (*batch)(struct siw2_qp *, struct flush_mark *),
		      bool can_sleep)
{
	struct flush_mark m = {};
	unsigned long flags;
	bool more;
	u64 start;

	lockdep_assert_not_held(&qp->lock);
	do {
		spin_lock_irqsave(lock, flags);
		start = local_clock();
		more = batch(qp, &m);
		siw2_irqoff_end(start);
		spin_unlock_irqrestore(lock, flags);
		if (more && can_sleep)
			cond_resched();
	} while (more);
	if (m.done)
		trace_siw2_qp_flush(qp->base.device, qp->base.qp_num,
				    lock == &qp->sq_lock ? m.done : 0,
				    lock == &qp->sq_lock ? 0 : m.done);
	return m.broken;
}

/* Return: true if a ring is broken. */
static bool flush_queues(struct siw2_qp *qp, bool can_sleep)
{
	bool broken;

	broken = flush_all(qp, &qp->sq_lock, flush_sq, can_sleep);
	if (!qp->srq)
		broken |= flush_all(qp, &qp->rq_lock, flush_rq, can_sleep);
	return broken;
}

/* RESET: whatever the rings hold is discarded without completions. */
static void discard_queues(struct siw2_qp *qp)
{
	unsigned long flags;

	spin_lock_irqsave(&qp->sq_lock, flags);
	siw2_queue_discard(&qp->sq);
	qp->sq_fetch = qp->sq.cons;
	spin_unlock_irqrestore(&qp->sq_lock, flags);
	if (!qp->srq) {
		spin_lock_irqsave(&qp->rq_lock, flags);
		siw2_queue_discard(&qp->rq);
		siw2_queue_set_flags(&qp->rq, 0);
		spin_unlock_irqrestore(&qp->rq_lock, flags);
	}
}

/*
 * Moves the QP to @next, which the caller checked. Returns QP_EV_* for the
 * caller to act on once qp->lock is released.
 */
static unsigned int set_state_locked(struct siw2_qp *qp,
				     enum ib_qp_state next,
				     enum siw2_qp_cause cause)
{
	unsigned int ev = 0;

	lockdep_assert_held(&qp->lock);
	if (qp->state != next)
		trace_siw2_qp_state(qp->base.device, qp->base.qp_num,
				    qp->state, next, cause);
	WRITE_ONCE(qp->state, next);
	/* The wakeup bit follows the state: posts ring out of RTS. */
	siw2_qp_sq_wake(qp, 0, 0);
	switch (next) {
	case IB_QPS_ERR:
		if (!qp->srq)
			siw2_queue_set_flags(&qp->rq, SIW2_RQ_NEED_WAKEUP);
		/*
		 * The wakeup bit before the flush reads prod; pairs with the
		 * provider's barrier between its store of prod and its load
		 * of the flags: entries published meanwhile are flushed by
		 * set_state_flush() or cause a doorbell.
		 */
		smp_mb();
		ev |= QP_EV_FLUSH;
		/*
		 * IB: a QP with an SRQ reports its last WQE in ERR, once its
		 * stream takes no more.
		 */
		if (qp->srq && !qp->flush_held && !qp->last_wqe) {
			qp->last_wqe = true;
			ev |= QP_EV_LAST_WQE;
		}
		break;
	case IB_QPS_RESET:
		/* A ring that was broken is whole again, and may break again. */
		discard_queues(qp);
		qp->fatal_sent = false;
		qp->last_wqe = false;
		/* What the stream holds goes too, whatever state comes next. */
		if (qp->flush_held)
			WRITE_ONCE(qp->discard_held, true);
		/*
		 * The next connection is another QP to its peer: type 2
		 * windows bound over this one serve it no more (mr.c).
		 */
		WRITE_ONCE(qp->serial, atomic64_inc_return(&qp_serials));
		break;
	default:
		break;
	}
	return ev;
}

/*
 * The flush of a move to ERR, once qp->lock is released: it takes the
 * queue locks batch by batch (see "Locks" above). @can_sleep as in
 * flush_all(). Returns @ev with QP_EV_BROKEN added if a ring is broken.
 */
static unsigned int set_state_flush(struct siw2_qp *qp, unsigned int ev,
				    bool can_sleep)
{
	if ((ev & QP_EV_FLUSH) && flush_queues(qp, can_sleep))
		ev |= QP_EV_BROKEN;
	return ev;
}

static void set_state_done(struct siw2_qp *qp, unsigned int ev)
{
	if (ev & QP_EV_LAST_WQE)
		siw2_qp_event(qp, IB_EVENT_QP_LAST_WQE_REACHED);
}

/*
 * A user ring's indices lied: the QP goes to ERR and user space hears of
 * it once through IB_EVENT_QP_FATAL.
 */
static void report_broken(struct siw2_qp *qp)
{
	unsigned long flags;
	unsigned int ev = 0;
	bool first;
	u64 start;

	spin_lock_irqsave(&qp->lock, flags);
	start = local_clock();
	first = !qp->fatal_sent;
	qp->fatal_sent = true;
	if (first && qp->state != IB_QPS_RESET && qp->state != IB_QPS_ERR)
		ev = set_state_locked(qp, IB_QPS_ERR, SIW2_QP_CAUSE_RING);
	siw2_irqoff_end(start);
	spin_unlock_irqrestore(&qp->lock, flags);

	if (!first)
		return;
	/* The broken ring has nothing to flush; the other one may. */
	ev = set_state_flush(qp, ev, false);
	ibdev_dbg(qp->base.device, "qp %u: corrupt ring indices\n",
		  qp->base.qp_num);
	siw2_stream_shutdown(qp, SIW2_CLOSE_ABORT);
	set_state_done(qp, ev);
	siw2_qp_event(qp, IB_EVENT_QP_FATAL);
}

/*
 * IB's RC table says which transitions exist; the attributes it requires
 * are IB transport parameters (paths, PSNs, timers) iWARP has no use for,
 * and the iWARP CM passes none of them. They are therefore supplied here.
 * The rdma_cm adds IB_QP_PORT to every iWARP modify, transitions where IB
 * does not allow it included; it is checked on its own.
 */
static int ib_required(enum ib_qp_state cur, enum ib_qp_state next)
{
	if (cur == IB_QPS_RESET && next == IB_QPS_INIT)
		return IB_QP_PKEY_INDEX | IB_QP_PORT | IB_QP_ACCESS_FLAGS;
	if (cur == IB_QPS_INIT && next == IB_QPS_RTR)
		return IB_QP_AV | IB_QP_PATH_MTU | IB_QP_DEST_QPN |
		       IB_QP_RQ_PSN | IB_QP_MAX_DEST_RD_ATOMIC |
		       IB_QP_MIN_RNR_TIMER;
	if (cur == IB_QPS_RTR && next == IB_QPS_RTS)
		return IB_QP_TIMEOUT | IB_QP_RETRY_CNT | IB_QP_RNR_RETRY |
		       IB_QP_SQ_PSN | IB_QP_MAX_QP_RD_ATOMIC;
	return 0;
}

static bool transition_ok(enum ib_qp_state cur, enum ib_qp_state next,
			  int mask)
{
	int ib_mask = mask & ~(IB_QP_PORT | IB_QP_CUR_STATE);

	/* Nothing but the port: the rdma_cm's move to RTS on iWARP. */
	if (!ib_mask)
		return true;
	return ib_modify_qp_is_ok(cur, next, IB_QPT_RC,
				  ib_mask | IB_QP_STATE |
				  ib_required(cur, next));
}

/* The engines' and the CM's state change, for @cause. */
static int set_state(struct siw2_qp *qp, enum ib_qp_state next,
		     enum siw2_qp_cause cause)
{
	unsigned long flags;
	unsigned int ev = 0;
	int ret = 0;
	u64 start;

	spin_lock_irqsave(&qp->lock, flags);
	start = local_clock();
	if (next > IB_QPS_ERR || next == IB_QPS_SQD || next == IB_QPS_SQE ||
	    !transition_ok(qp->state, next, IB_QP_STATE))
		ret = -EINVAL;
	else
		ev = set_state_locked(qp, next, cause);
	siw2_irqoff_end(start);
	spin_unlock_irqrestore(&qp->lock, flags);
	ev = set_state_flush(qp, ev, false);
	set_state_done(qp, ev);
	if (ev & QP_EV_BROKEN)
		report_broken(qp);
	return ret;
}

/*
 * siw2_qp_set_state() - the CM's state change
 * @qp: the QP
 * @next: the new state; any transition the IB RC table allows
 *
 * Any context.
 *
 * Return: 0, or -EINVAL for a transition that does not exist.
 */
int siw2_qp_set_state(struct siw2_qp *qp, enum ib_qp_state next)
{
	return set_state(qp, next, SIW2_QP_CAUSE_CM);
}

/* Any state but RESET may move to ERR; @cause says why it does. */
void siw2_qp_set_error(struct siw2_qp *qp, enum siw2_qp_cause cause)
{
	set_state(qp, IB_QPS_ERR, cause);
}

/**
 * siw2_qp_stream_done() - the stream holds no work request any more
 * @qp: the QP
 *
 * The close work, once no engine runs and the stream's own work requests
 * are completed: the QP moves to ERR, and the flush that was held back
 * completes the rest, after them (IB: completions in posting order). A
 * QP its consumer has reset meanwhile stays where the consumer put it,
 * RESET or a state it moved on to (ERR is flushed now).
 */
void siw2_qp_stream_done(struct siw2_qp *qp)
{
	unsigned long flags;
	bool move;

	spin_lock_irqsave(&qp->lock, flags);
	/* Before the queue locks that flush_sq() and flush_rq() take. */
	WRITE_ONCE(qp->flush_held, false);
	move = !qp->discard_held || qp->state == IB_QPS_ERR;
	WRITE_ONCE(qp->discard_held, false);
	spin_unlock_irqrestore(&qp->lock, flags);
	if (move)
		siw2_qp_set_error(qp, SIW2_QP_CAUSE_LLP_CLOSED);
}

static int check_attr(const struct ib_qp_attr *attr, int mask)
{
	if ((mask & IB_QP_STATE) && attr->qp_state > IB_QPS_ERR)
		return -EINVAL;
	if ((mask & IB_QP_CUR_STATE) && attr->cur_qp_state > IB_QPS_ERR)
		return -EINVAL;
	if ((mask & IB_QP_STATE) && attr->qp_state == IB_QPS_SQE)
		return -EOPNOTSUPP;
	if ((mask & IB_QP_PORT) && attr->port_num != 1)
		return -EINVAL;
	if ((mask & IB_QP_PKEY_INDEX) && attr->pkey_index)
		return -EINVAL;
	if ((mask & IB_QP_ACCESS_FLAGS) &&
	    (attr->qp_access_flags & ~(IB_ACCESS_LOCAL_WRITE |
				       IB_ACCESS_REMOTE_WRITE |
				       IB_ACCESS_REMOTE_READ |
				       IB_ACCESS_REMOTE_ATOMIC)))
		return -EINVAL;
	if ((mask & IB_QP_MAX_QP_RD_ATOMIC) &&
	    attr->max_rd_atomic > SIW2_MAX_ORD)
		return -EINVAL;
	if ((mask & IB_QP_MAX_DEST_RD_ATOMIC) &&
	    attr->max_dest_rd_atomic > SIW2_MAX_IRD)
		return -EINVAL;
	/*
	 * Kept only to be reported back, but in the ranges of their IB
	 * fields: a value no IB device would take is a consumer's mistake.
	 */
	if ((mask & IB_QP_PATH_MTU) &&
	    (attr->path_mtu < IB_MTU_256 || attr->path_mtu > IB_MTU_4096))
		return -EINVAL;
	if ((mask & IB_QP_TIMEOUT) && attr->timeout > 31)
		return -EINVAL;
	if ((mask & IB_QP_RETRY_CNT) && attr->retry_cnt > 7)
		return -EINVAL;
	if ((mask & IB_QP_RNR_RETRY) && attr->rnr_retry > 7)
		return -EINVAL;
	if ((mask & IB_QP_MIN_RNR_TIMER) && attr->min_rnr_timer > 31)
		return -EINVAL;
	return 0;
}

static void apply_attr(struct siw2_qp *qp, const struct ib_qp_attr *attr,
		       int mask)
{
	struct siw2_qp_attrs *a = &qp->attrs;

	lockdep_assert_held(&qp->lock);
	if (mask & IB_QP_ACCESS_FLAGS)
		a->access = attr->qp_access_flags;
	if (mask & IB_QP_MAX_QP_RD_ATOMIC)
		a->max_rd_atomic = attr->max_rd_atomic;
	if (mask & IB_QP_MAX_DEST_RD_ATOMIC)
		a->max_dest_rd_atomic = attr->max_dest_rd_atomic;
	if (mask & IB_QP_PATH_MTU)
		a->path_mtu = attr->path_mtu;
	if (mask & IB_QP_TIMEOUT)
		a->timeout = attr->timeout;
	if (mask & IB_QP_RETRY_CNT)
		a->retry_cnt = attr->retry_cnt;
	if (mask & IB_QP_RNR_RETRY)
		a->rnr_retry = attr->rnr_retry;
	if (mask & IB_QP_MIN_RNR_TIMER)
		a->min_rnr_timer = attr->min_rnr_timer;
	if (mask & IB_QP_SQ_PSN)
		a->sq_psn = attr->sq_psn;
	if (mask & IB_QP_RQ_PSN)
		a->rq_psn = attr->rq_psn;
	if (mask & IB_QP_DEST_QPN)
		a->dest_qp_num = attr->dest_qp_num;
}

int siw2_qp_modify(struct ib_qp *ibqp, struct ib_qp_attr *attr, int mask,
		   struct ib_udata *udata)
{
	struct siw2_qp *qp = to_siw2_qp(ibqp);
	enum ib_qp_state cur, next;
	unsigned long flags;
	unsigned int ev = 0;
	u64 start;
	int ret;

	if (udata && udata->inlen &&
	    !ib_is_udata_cleared(udata, 0, udata->inlen))
		return -EOPNOTSUPP;
	ret = check_attr(attr, mask);
	if (ret)
		return ret;

	spin_lock_irqsave(&qp->lock, flags);
	start = local_clock();
	cur = qp->state;
	next = (mask & IB_QP_STATE) ? attr->qp_state : cur;
	/*
	 * A graceful disconnect of a stream that already ended (the peer
	 * closed, a Terminate) finds the QP in ERR; it has nothing to do.
	 */
	if (next == IB_QPS_SQD && (cur == IB_QPS_ERR || cur == IB_QPS_SQD)) {
		spin_unlock_irqrestore(&qp->lock, flags);
		return 0;
	}
	/*
	 * Only the CM moves an iWARP QP to RTS, with the stream that RTS
	 * needs under it (cm.c). A consumer's RTS (an IB consumer that
	 * connects QPs by hand, with an address vector and the peer's QP
	 * number) would have none: its work requests would wait for ever,
	 * so it fails at once. RTR stays the consumer's: the rdma_cm itself
	 * moves an iWARP QP through INIT and RTR before it connects, and a
	 * QP in RTR sends nothing (siw2_qp_post_send() and the send engine
	 * want RTS). RTS to RTS changes attributes only.
	 */
	if ((mask & IB_QP_STATE) && next == IB_QPS_RTS && cur != IB_QPS_RTS) {
		ibdev_dbg(ibqp->device, "qp %u: RTS without a connection\n",
			  ibqp->qp_num);
		ret = -EINVAL;
		goto unlock;
	}
	if (((mask & IB_QP_CUR_STATE) && attr->cur_qp_state != cur) ||
	    !transition_ok(cur, next, mask)) {
		ret = -EINVAL;
		goto unlock;
	}
	apply_attr(qp, attr, mask);
	if (mask & IB_QP_STATE)
		ev = set_state_locked(qp, next, SIW2_QP_CAUSE_MODIFY);
unlock:
	siw2_irqoff_end(start);
	spin_unlock_irqrestore(&qp->lock, flags);
	/* uverbs calls in a system call; a kernel ULP in any context. */
	ev = set_state_flush(qp, ev, !!udata);

	/*
	 * The iWARP CM's disconnect: SQD ends the stream gracefully, ERR
	 * abortively (llp.h). RESET ends it abortively too: a QP there has
	 * no connection.
	 */
	if (!ret && (mask & IB_QP_STATE) && next != cur &&
	    (next == IB_QPS_SQD || next == IB_QPS_ERR ||
	     next == IB_QPS_RESET))
		siw2_stream_shutdown(qp, next == IB_QPS_SQD ?
					 SIW2_CLOSE_GRACEFUL : SIW2_CLOSE_ABORT);
	set_state_done(qp, ev);
	if (ev & QP_EV_BROKEN)
		report_broken(qp);
	return ret;
}

static void fill_cap(const struct siw2_qp *qp, struct ib_qp_cap *cap)
{
	cap->max_send_wr = qp->sq.size;
	cap->max_recv_wr = qp->srq ? 0 : qp->rq.size;
	cap->max_send_sge = qp->max_send_sge;
	cap->max_recv_sge = qp->max_recv_sge;
	cap->max_inline_data = qp->max_inline;
}

/* Reports the current state and attributes, whatever @mask asks for. */
int siw2_qp_query(struct ib_qp *ibqp, struct ib_qp_attr *attr, int mask,
		  struct ib_qp_init_attr *init)
{
	struct siw2_qp *qp = to_siw2_qp(ibqp);
	const struct siw2_qp_attrs *a = &qp->attrs;
	unsigned long flags;

	memset(attr, 0, sizeof(*attr));
	memset(init, 0, sizeof(*init));

	spin_lock_irqsave(&qp->lock, flags);
	attr->qp_state = qp->state;
	attr->cur_qp_state = qp->state;
	attr->qp_access_flags = a->access;
	attr->max_rd_atomic = a->max_rd_atomic;
	attr->max_dest_rd_atomic = a->max_dest_rd_atomic;
	attr->path_mtu = a->path_mtu;
	attr->timeout = a->timeout;
	attr->retry_cnt = a->retry_cnt;
	attr->rnr_retry = a->rnr_retry;
	attr->min_rnr_timer = a->min_rnr_timer;
	attr->sq_psn = a->sq_psn;
	attr->rq_psn = a->rq_psn;
	attr->dest_qp_num = a->dest_qp_num;
	spin_unlock_irqrestore(&qp->lock, flags);

	attr->port_num = 1;
	attr->pkey_index = 0;
	attr->sq_draining = 0;
	fill_cap(qp, &attr->cap);

	init->event_handler = ibqp->event_handler;
	init->qp_context = ibqp->qp_context;
	init->send_cq = ibqp->send_cq;
	init->recv_cq = ibqp->recv_cq;
	init->srq = ibqp->srq;
	init->cap = attr->cap;
	init->sq_sig_type = qp->sig_all ? IB_SIGNAL_ALL_WR : IB_SIGNAL_REQ_WR;
	init->qp_type = IB_QPT_RC;
	init->port_num = 1;
	return 0;
}

static int check_init_attr(const struct ib_qp_init_attr *attr)
{
	const struct ib_qp_cap *cap = &attr->cap;

	if (attr->qp_type != IB_QPT_RC)
		return -EOPNOTSUPP;
	if (attr->create_flags)
		return -EOPNOTSUPP;
	if (!attr->send_cq || !attr->recv_cq)
		return -EINVAL;
	if (attr->srq && attr->srq->srq_type != IB_SRQT_BASIC)
		return -EINVAL;
	if (attr->sq_sig_type != IB_SIGNAL_ALL_WR &&
	    attr->sq_sig_type != IB_SIGNAL_REQ_WR)
		return -EINVAL;
	if (cap->max_send_wr > SIW2_MAX_QP_WR ||
	    cap->max_recv_wr > SIW2_MAX_QP_WR ||
	    cap->max_send_sge > SIW2_MAX_SGE ||
	    cap->max_recv_sge > SIW2_MAX_SGE ||
	    cap->max_inline_data > SIW2_MAX_INLINE)
		return -EINVAL;
	return 0;
}

int siw2_qp_create(struct ib_qp *ibqp, struct ib_qp_init_attr *attr,
		   struct ib_udata *udata)
{
	struct siw2_device *sdev = to_siw2_dev(ibqp->device);
	struct siw2_qp *qp = to_siw2_qp(ibqp);
	struct siw2_uresp_create_qp uresp = {};
	u32 qpn, size;
	void *old;
	int ret;

	ret = check_init_attr(attr);
	if (ret)
		return ret;
	if (udata) {
		if (udata->outlen < sizeof(uresp))
			return -EINVAL;
		if (udata->inlen &&
		    !ib_is_udata_cleared(udata, 0, udata->inlen))
			return -EOPNOTSUPP;
	}
	if (atomic_inc_return(&sdev->num_qp) > SIW2_MAX_QP) {
		ret = -ENOMEM;
		goto err_count;
	}

	qp->sdev = sdev;
	kref_init(&qp->ref);
	init_completion(&qp->released);
	spin_lock_init(&qp->lock);
	spin_lock_init(&qp->sq_lock);
	spin_lock_init(&qp->rq_lock);
	spin_lock_init(&qp->sq_wake_lock);
	qp->state = IB_QPS_INIT;
	qp->user = !!udata;
	qp->owner = current_euid();
	qp->serial = atomic64_inc_return(&qp_serials);
	qp->scq = to_siw2_cq(attr->send_cq);
	qp->rcq = to_siw2_cq(attr->recv_cq);
	qp->srq = attr->srq ? to_siw2_srq(attr->srq) : NULL;
	qp->sig_all = attr->sq_sig_type == IB_SIGNAL_ALL_WR;
	qp->home_cpu = raw_smp_processor_id();
	qp->max_send_sge = SIW2_MAX_SGE;
	qp->max_recv_sge = SIW2_MAX_SGE;
	qp->max_inline = SIW2_MAX_INLINE;
	qp->attrs.path_mtu = ib_mtu_int_to_enum(READ_ONCE(sdev->netdev->mtu));

	size = roundup_pow_of_two(max(attr->cap.max_send_wr, 1U));
	ret = siw2_queue_init(&qp->sq, udata, size, sizeof(struct siw2_sqe),
			      &qp->sq_lock);
	if (ret)
		goto err_count;
	/* No send engine watches the SQ yet: every post rings. */
	siw2_queue_set_flags(&qp->sq, SIW2_SQ_NEED_WAKEUP);
	siw2_sqpoll_init_qp(qp);
	if (!qp->srq) {
		size = roundup_pow_of_two(max(attr->cap.max_recv_wr, 1U));
		ret = siw2_queue_init(&qp->rq, udata, size,
				      sizeof(struct siw2_rqe), &qp->rq_lock);
		if (ret)
			goto err_sq;
	}

	/* Reserve the number; the QP becomes visible when it is complete. */
	ret = xa_alloc_cyclic_irq(&sdev->qps, &qpn, NULL,
				  XA_LIMIT(SIW2_QPN_MIN, SIW2_QPN_MAX),
				  &sdev->next_qpn, GFP_KERNEL);
	if (ret < 0)
		goto err_rq;
	qp->base.qp_num = qpn;

	if (udata) {
		uresp.qp_id = qpn;
		uresp.num_sqe = qp->sq.size;
		uresp.num_rqe = qp->srq ? 0 : qp->rq.size;
		uresp.sq_key = siw2_queue_key(&qp->sq);
		uresp.rq_key = qp->srq ? 0 : siw2_queue_key(&qp->rq);
		ret = ib_copy_to_udata(udata, &uresp, sizeof(uresp));
		if (ret)
			goto err_qpn;
	}
	fill_cap(qp, &attr->cap);

	old = xa_store_irq(&sdev->qps, qpn, qp, GFP_KERNEL);
	if (xa_is_err(old)) {
		ret = xa_err(old);
		goto err_qpn;
	}
	siw2_obj_created(SIW2_OBJ_QP);
	return 0;

err_qpn:
	xa_erase_irq(&sdev->qps, qpn);
err_rq:
	if (!qp->srq)
		siw2_queue_uninit(&qp->rq);
err_sq:
	siw2_queue_uninit(&qp->sq);
err_count:
	atomic_dec(&sdev->num_qp);
	return ret;
}

/*
 * Destroying a QP discards its work requests without completions (that
 * is what ib_drain_qp() is for). The QP is marked in error so that a
 * holder still working on it stops, made unfindable, and its rings freed
 * once the last holder is gone.
 */
int siw2_qp_destroy(struct ib_qp *ibqp, struct ib_udata *udata)
{
	struct siw2_qp *qp = to_siw2_qp(ibqp);
	struct siw2_device *sdev = qp->sdev;
	struct siw2_stream *s;
	unsigned long flags;

	spin_lock_irqsave(&qp->lock, flags);
	if (qp->state != IB_QPS_ERR)
		trace_siw2_qp_state(ibqp->device, ibqp->qp_num, qp->state,
				    IB_QPS_ERR, SIW2_QP_CAUSE_DESTROY);
	WRITE_ONCE(qp->state, IB_QPS_ERR);
	/* Its consumer is not told of the QP it is destroying. */
	qp->last_wqe = true;
	spin_unlock_irqrestore(&qp->lock, flags);

	xa_erase_irq(&sdev->qps, qp->base.qp_num);
	siw2_sqpoll_unwatch(qp);
	siw2_stream_shutdown(qp, SIW2_CLOSE_DESTROY);
	siw2_qp_put(qp);
	/*
	 * Every holder lets go in bounded time: the stream once its close
	 * work ran, the iWARP CM on the CLOSE that work reports, a poller at
	 * once. One that does not is a bug, named here once. The QP is in
	 * ERR: no attach replaces its stream any more.
	 */
	s = rcu_dereference_protected(qp->stream, true);
	if (!wait_for_completion_timeout(&qp->released, 30 * HZ)) {
		ibdev_warn(&sdev->ibdev,
			   "qp %u: destroy still waits for %u references (stream flags %#lx, polled %d)\n",
			   qp->base.qp_num, kref_read(&qp->ref),
			   s ? READ_ONCE(s->flags) : 0UL,
			   !list_empty_careful(&qp->poll_node));
		wait_for_completion(&qp->released);
	}
	siw2_stream_free(s);

	if (!qp->srq)
		siw2_queue_uninit(&qp->rq);
	siw2_queue_uninit(&qp->sq);
	atomic_dec(&sdev->num_qp);
	siw2_obj_destroyed(SIW2_OBJ_QP);
	return 0;
}

/*
 * Runs the QP's send engine: here for a user QP's post (@resume false),
 * else on the workqueue. A QP in ERR has none to run; it flushes both
 * queues instead.
 */
static void tx_start(struct siw2_qp *qp, bool resume)
{
	struct siw2_stream *s;
	int idx;

	if (READ_ONCE(qp->state) == IB_QPS_ERR) {
		/* A user QP's doorbell comes in a system call or a poller. */
		if (flush_queues(qp, qp->user && !resume))
			report_broken(qp);
		return;
	}
	idx = srcu_read_lock(&siw2_stream_srcu);
	s = srcu_dereference(qp->stream, &siw2_stream_srcu);
	if (s && resume)
		siw2_tx_resume(s);
	else if (s && qp->user)
		siw2_tx_kick(s);
	else if (s)
		siw2_tx_kick_async(s);
	srcu_read_unlock(&siw2_stream_srcu, idx);
}

/**
 * siw2_qp_sq_wake() - who watches a user QP's send queue
 * @qp: the QP
 * @set: SIW2_SQW_* that watch from now on
 * @clear: SIW2_SQW_* that stop watching
 *
 * SIW2_SQ_NEED_WAKEUP is clear exactly while someone watches and the QP is
 * in RTS, so that a post finds its SQE picked up without a doorbell; any
 * other state lets posts ring (to be flushed in ERR). A move of the state
 * calls this with nothing to set or clear after writing it: under
 * @sq_wake_lock the last writer of the bit saw the newest state. The
 * caller orders the bit against its own look at prod (siw2-abi.h, "SQ
 * doorbell"). Any context.
 *
 * Return: true if the bit is set now.
 */
bool siw2_qp_sq_wake(struct siw2_qp *qp, unsigned int set,
		     unsigned int clear)
{
	unsigned long flags;
	bool need;

	spin_lock_irqsave(&qp->sq_wake_lock, flags);
	qp->sq_wake = (qp->sq_wake | set) & ~clear;
	need = !qp->sq_wake || READ_ONCE(qp->state) != IB_QPS_RTS;
	siw2_queue_set_flags(&qp->sq, need ? SIW2_SQ_NEED_WAKEUP : 0);
	spin_unlock_irqrestore(&qp->sq_wake_lock, flags);
	return need;
}

/**
 * siw2_qp_sq_idle() - the send engine found the SQ empty and stops
 * @qp: a user QP whose engine watched (SIW2_SQW_ENGINE)
 *
 * With no poller left watching, the wakeup bit is set, then (a full
 * barrier, pairing with the provider's between its store of prod and its
 * load of the bit) prod is looked at once more: an SQE published
 * meanwhile is seen here or makes its poster ring. Under tx_mutex.
 *
 * Return: true if SQEs wait: the engine runs once more.
 */
bool siw2_qp_sq_idle(struct siw2_qp *qp)
{
	unsigned long flags;
	u32 waiting;

	if (!siw2_qp_sq_wake(qp, 0, SIW2_SQW_ENGINE) ||
	    READ_ONCE(qp->state) != IB_QPS_RTS)
		return false;
	/* The bit before prod; pairs with the provider's barrier. */
	smp_mb();
	spin_lock_irqsave(&qp->sq_lock, flags);
	waiting = READ_ONCE(qp->sq.ctl->prod) - qp->sq_fetch;
	spin_unlock_irqrestore(&qp->sq_lock, flags);
	/*
	 * Only what the engine can fetch: a prod behind sq_fetch, or one that
	 * claims more than the ring holds, is for siw2_qp_get_sqe() to
	 * judge, and must not keep the engine going round.
	 */
	return waiting && waiting <= qp->sq.size;
}

/**
 * siw2_qp_kick_tx() - the send engine's doorbell
 * @qp: the QP
 *
 * Called after SQEs were published: a kernel post, a user doorbell, or a
 * poller that found posts. The stream's send work moves to this CPU. Any
 * context; takes the queue locks.
 *
 * A user QP's engine runs in the caller that posted: a system call or a
 * poller, both of which may sleep. A kernel QP's always runs on the
 * workqueue: kernel ULPs post from any context, also inside
 * rcu_read_lock() (blk-mq's dispatch of nvme-rdma), where a preemptible
 * RCU leaves preemptible() true but sleeping in a socket send is a bug.
 */
void siw2_qp_kick_tx(struct siw2_qp *qp)
{
	tx_start(qp, false);
}

/**
 * siw2_qp_start_tx() - the connection is up: let the send engine begin
 * @qp: the QP
 *
 * For the CM, once the stream is attached: an RTR to send, or SQEs posted
 * before the connection was up. The engine runs on the workqueue, on the
 * stream's CPU (the one that created the QP, until something is posted).
 * Any context.
 */
void siw2_qp_start_tx(struct siw2_qp *qp)
{
	tx_start(qp, true);
}

int siw2_qp_post_send(struct ib_qp *ibqp, const struct ib_send_wr *wr,
		      const struct ib_send_wr **bad_wr)
{
	struct siw2_qp *qp = to_siw2_qp(ibqp);
	enum ib_qp_state state;
	unsigned long flags;
	bool broken = false;
	int ret = 0;

	/*
	 * User space writes its SQ itself; no work requests is a doorbell.
	 * A poller may then watch the SQ so that the next posts need none.
	 */
	if (qp->user) {
		if (wr) {
			*bad_wr = wr;
			return -EINVAL;
		}
		siw2_count(qp->sdev, SIW2_CNT_SQ_DOORBELL);
		siw2_qp_kick_tx(qp);
		if (READ_ONCE(qp->sdev->conf.sq_poll_us))
			siw2_sqpoll_watch(qp);
		return 0;
	}

	spin_lock_irqsave(&qp->sq_lock, flags);
	state = READ_ONCE(qp->state);
	if (state != IB_QPS_RTS && state != IB_QPS_ERR) {
		ret = -EINVAL;
		goto unlock;
	}
	for (; wr; wr = wr->next) {
		if (!siw2_queue_space(&qp->sq)) {
			ret = -ENOMEM;
			break;
		}
		ret = sqe_from_wr(qp, siw2_queue_slot(&qp->sq), wr);
		if (ret)
			break;
		siw2_queue_publish(&qp->sq);
	}
unlock:
	spin_unlock_irqrestore(&qp->sq_lock, flags);

	/* Kernel ULPs post from any context. */
	if (state == IB_QPS_ERR)
		broken = flush_all(qp, &qp->sq_lock, flush_sq, false);
	if (ret)
		*bad_wr = wr;
	if (broken)
		report_broken(qp);
	else if (state == IB_QPS_RTS)
		siw2_qp_kick_tx(qp);
	return ret;
}

int siw2_qp_post_recv(struct ib_qp *ibqp, const struct ib_recv_wr *wr,
		      const struct ib_recv_wr **bad_wr)
{
	struct siw2_qp *qp = to_siw2_qp(ibqp);
	enum ib_qp_state state;
	unsigned long flags;
	bool broken = false;
	int ret = 0;

	if (qp->user) {
		if (wr) {
			*bad_wr = wr;
			return -EINVAL;
		}
		siw2_qp_kick_tx(qp);
		return 0;
	}
	if (qp->srq) {
		*bad_wr = wr;
		return -EINVAL;
	}

	spin_lock_irqsave(&qp->rq_lock, flags);
	state = READ_ONCE(qp->state);
	if (state == IB_QPS_RESET) {
		ret = -EINVAL;
		goto unlock;
	}
	for (; wr; wr = wr->next) {
		if (!siw2_queue_space(&qp->rq)) {
			ret = -ENOMEM;
			break;
		}
		ret = siw2_rqe_from_wr(siw2_queue_slot(&qp->rq), wr,
				       qp->max_recv_sge);
		if (ret)
			break;
		siw2_queue_publish(&qp->rq);
	}
unlock:
	spin_unlock_irqrestore(&qp->rq_lock, flags);

	if (state == IB_QPS_ERR)
		broken = flush_all(qp, &qp->rq_lock, flush_rq, false);
	if (ret)
		*bad_wr = wr;
	if (broken)
		report_broken(qp);
	return ret;
}

/**
 * siw2_qp_get_sqe() - the send engine fetches the next SQE
 * @qp: the QP, in RTS
 * @out: a validated copy of the SQE
 * @idx: its index in the ring (free running)
 *
 * The SQE keeps its slot until siw2_qp_sq_complete() (SQEs complete in
 * order). Any context.
 *
 * Return: 0; -ENOENT if there is none (or the QP is not in RTS); -EIO if
 * the ring is broken (the QP is moved to ERR); -EINVAL if the SQE is
 * malformed: @out holds it, to be completed with an error.
 */
int siw2_qp_get_sqe(struct siw2_qp *qp, struct siw2_sqe *out, u32 *idx)
{
	unsigned long flags;
	int ret = -ENOENT;
	u32 avail;

	spin_lock_irqsave(&qp->sq_lock, flags);
	if (READ_ONCE(qp->state) != IB_QPS_RTS)
		goto unlock;
	avail = siw2_queue_avail(&qp->sq);
	if (qp->sq.broken) {
		ret = -EIO;
		goto unlock;
	}
	if (qp->sq_fetch - qp->sq.cons >= avail)
		goto unlock;
	sqe_read(out, siw2_queue_entry(&qp->sq, qp->sq_fetch));
	*idx = qp->sq_fetch++;
	ret = sqe_valid(qp, out) ? 0 : -EINVAL;
unlock:
	spin_unlock_irqrestore(&qp->sq_lock, flags);
	if (ret == -EIO)
		report_broken(qp);
	return ret;
}

/**
 * siw2_qp_sq_complete() - the oldest fetched SQE is done
 * @qp: the QP
 * @wr_id: its work request id
 * @opcode: its SIW2_OP_*
 * @wqe_flags: its SIW2_WQE_* flags
 * @status: the outcome
 * @byte_len: octets transferred
 *
 * Posts the completion if the SQE is signaled or failed, and frees its
 * slot. Any context.
 *
 * Return: 0; -ENOENT if no SQE is in progress (a flush completed it);
 * or siw2_cq_post()'s error.
 */
int siw2_qp_sq_complete(struct siw2_qp *qp, u64 wr_id, u8 opcode,
			u8 wqe_flags, enum ib_wc_status status, u32 byte_len)
{
	struct siw2_cqe cqe = {
		.wr_id = wr_id,
		.status = status,
		.byte_len = byte_len,
		.qp_num = qp->base.qp_num,
	};
	unsigned long flags;
	int ret = 0;

	cqe.opcode = opcode < SIW2_OP_MAX ? sqe_wc_opcode[opcode] :
					    SIW2_WC_SEND;
	spin_lock_irqsave(&qp->sq_lock, flags);
	if (qp->sq_fetch == qp->sq.cons) {
		ret = -ENOENT;
		goto unlock;
	}
	/*
	 * The slot goes back before the completion is published: a consumer
	 * that has polled the CQE may reuse the slot at once (a user one
	 * polls without entering the kernel), and the CQ's release of prod
	 * orders the store of cons before it.
	 */
	siw2_queue_consume(&qp->sq, 1);
	if (status != IB_WC_SUCCESS || (wqe_flags & SIW2_WQE_SIGNALED) ||
	    qp->sig_all)
		ret = siw2_cq_post(qp->scq, &cqe);
unlock:
	spin_unlock_irqrestore(&qp->sq_lock, flags);
	return ret;
}

/**
 * siw2_qp_get_rqe() - the receive engine takes the next receive
 * @qp: the QP
 * @out: a validated copy of the RQE, from the QP's RQ or its SRQ
 *
 * The RQE leaves the ring: the caller completes it. Any context.
 *
 * Return: 0; -ENOENT if there is none (or the QP is in RESET or ERR,
 * where the flush owns the ring); -EIO if the ring is broken; -EINVAL if
 * the RQE is malformed (consumed, @out holds it for an error completion).
 */
int siw2_qp_get_rqe(struct siw2_qp *qp, struct siw2_rqe *out)
{
	enum ib_qp_state state = READ_ONCE(qp->state);
	unsigned long flags;
	int ret = -ENOENT;
	u32 avail;

	if (state == IB_QPS_RESET || state == IB_QPS_ERR)
		return -ENOENT;
	if (qp->srq)
		return siw2_srq_get_rqe(qp->srq, out);

	spin_lock_irqsave(&qp->rq_lock, flags);
	avail = siw2_queue_avail(&qp->rq);
	if (qp->rq.broken) {
		ret = -EIO;
	} else if (avail) {
		siw2_rqe_read(out, siw2_queue_entry(&qp->rq, qp->rq.cons));
		siw2_queue_consume(&qp->rq, 1);
		ret = siw2_rqe_valid(out, qp->max_recv_sge) ? 0 : -EINVAL;
	}
	spin_unlock_irqrestore(&qp->rq_lock, flags);
	if (ret == -EIO)
		report_broken(qp);
	return ret;
}
