// SPDX-License-Identifier: GPL-2.0
/*
 * The send engine: turns SQEs, inbound Read Requests and the RTR into
 * FPDUs on the stream's socket.
 *
 * Who runs it. Posting work sets SIW2_S_TX_PENDING and, for a user QP
 * (a doorbell's system call, an SQ poller), runs the engine right there:
 * no thread is woken for a work request. A kernel consumer's post (which
 * may come from any context), the receive path answering a Read, the CM
 * when the connection comes up, and the socket's write_space queue the
 * stream's work item instead. Whoever holds tx_mutex is the engine; a
 * kick that finds it taken leaves the pending bit, which the holder
 * checks before it lets go.
 *
 * Where the work item runs: on the consumer's CPU (tx_cpu), where it last
 * posted (or its SQ poller found the posts), and before any post where it
 * created the QP. Only posts move it. TCP announces room (write_space)
 * wherever it freed its buffers: where the peer's ACK was processed, or,
 * over a veth, where the receiving end let go of the data. A Read Request
 * arrives where the NIC's interrupt was taken, or, over a veth, on the
 * requester's CPU. Following either would put the QP's send work on a CPU
 * that already does receive work; over a veth, answering a Read on the
 * requester's CPU costs it two context switches per Read.
 *
 * What goes out, in order of priority at each message boundary: the RTR
 * of a peer-to-peer initiator before anything else (RFC 6581 9.2), then
 * Read Responses in the order their Requests arrived (RFC 5040 5.2), then
 * the SQ in order. A Terminate is sent by the close work once the engine
 * has stopped, as the stream's last message (RFC 5040 7.1).
 *
 * Batches. FPDUs go to TCP in batches of bio_vecs, built by batch.c
 * (which says what is referenced and what copied); this file fills a
 * batch while there is room, hands it to sendmsg() and completes the work
 * requests it carried: a work request is complete once the batch carrying
 * its last octet was accepted, even if TCP has not sent it. A batch that
 * TCP accepted only in part is resumed on write_space.
 */
#include <linux/net.h>
#include <net/sock.h>

#include "engine.h"
#include "batch.h"
#include "trace.h"

/* Messages started per round before the engine yields to its work item. */
#define TX_BUDGET 64

static bool closing(struct siw2_stream *s)
{
	return test_bit(SIW2_S_CLOSING, &s->flags) ||
	       test_bit(SIW2_S_CLOSED, &s->flags);
}

/*
 * The response to the oldest inbound Read or Atomic Request is in the batch
 * whole: its IRD credit and queue entry are free again. This happens before
 * the batch goes to TCP, as the peer may send its next Request the moment
 * it has the last octet (RFC 5040 5.2 counts a Read outstanding until then).
 */
static void inq_retire(struct siw2_stream *s)
{
	struct siw2_inq_entry *e;
	unsigned long flags;

	spin_lock_irqsave(&s->lock, flags);
	e = siw2_inq_at(s, s->inq_head++);
	if (e->counted)
		siw2_rdmap_ird_end(&s->ird);
	spin_unlock_irqrestore(&s->lock, flags);
}

/* Adds FPDUs of the current message until it is done or the batch full. */
static int build(struct siw2_stream *s)
{
	struct siw2_stream_tx *tx = &s->tx;
	struct siw2_ddp_tx_seg seg;
	u32 mulpdu = siw2_batch_mulpdu(s);
	int ret;

	while (tx->busy && siw2_batch_fits(s, mulpdu)) {
		ret = siw2_ddp_tx_next(&tx->ddp, mulpdu, &seg);
		if (ret <= 0)
			return ret ? ret : -EINVAL;
		ret = siw2_batch_add_seg(s, &seg);
		if (ret)
			return ret;
		if (seg.last) {
			tx->busy = false;
			if (tx->fin == SIW2_FIN_IRQ)
				inq_retire(s);
		}
	}
	siw2_batch_seal(tx);
	/*
	 * TCP will hold the staging page too: the next batch needs another.
	 * Without one this batch is copied, which is always correct.
	 */
	if (tx->zc && !tx->stage_next)
		tx->stage_next = alloc_page(GFP_KERNEL);
	tx->batch_zc = tx->zc && tx->stage_next;
	return 0;
}

/*
 * Hands the batch to TCP. Return: 0 once all of it was accepted, -EAGAIN
 * if the socket is full (write_space kicks the engine again), or an error.
 */
static int flush(struct siw2_stream *s, bool block)
{
	struct siw2_stream_tx *tx = &s->tx;
	struct msghdr msg = {};
	int ret;

	while (iov_iter_count(&tx->iter)) {
		/*
		 * A graceful end's drain stops at a reset asked for since, and
		 * at destroy_qp, which waits for it (a Terminate still goes).
		 */
		if (block && (READ_ONCE(s->abortive) ||
			      (test_bit(SIW2_S_DESTROY, &s->flags) &&
			       !test_bit(SIW2_S_TERM, &s->flags))))
			return -ECONNABORTED;
		msg.msg_flags = MSG_NOSIGNAL;
		if (!block)
			msg.msg_flags |= MSG_DONTWAIT;
		if (tx->busy)
			msg.msg_flags |= MSG_MORE;
		if (tx->batch_zc) {
			msg.msg_flags |= MSG_ZEROCOPY;
			msg.msg_ubuf = siw2_zc_ubuf(tx->zc);
		}
		msg.msg_iter = tx->iter;
		ret = sock_sendmsg(s->sock, &msg);
		if (ret == -EAGAIN && !tx->stalled) {
			tx->stalled = true;
			trace_siw2_tx_stall(&s->sdev->ibdev, s->qp->base.qp_num,
					    iov_iter_count(&tx->iter));
		}
		if (ret <= 0)
			return ret ? ret : -EPIPE;
		tx->iter = msg.msg_iter;
	}
	if (tx->stalled) {
		tx->stalled = false;
		trace_siw2_tx_unstall(&s->sdev->ibdev, s->qp->base.qp_num, 0);
	}
	if (tx->batch_zc) {
		put_page(tx->stage);
		tx->stage = tx->stage_next;
		tx->stage_next = NULL;
		tx->batch_zc = false;
	}
	siw2_batch_reset(tx);
	return 0;
}

/* ---- sources and records ---- */

/* Entries past @nr are never read: clearing them would be wasted stores. */
static void src_clear(struct siw2_tx_src *src)
{
	src->nr = 0;
	src->inline_data = NULL;
	src->copy = false;
}

/* Appends a held region to the message's sources. */
static void src_add(struct siw2_tx_src *src, struct siw2_mr *mr, u32 stag,
		    u64 addr, u32 len)
{
	bool copy = siw2_mr_may_invalidate(mr);

	src->sge[src->nr].mr = mr;
	src->sge[src->nr].stag = stag;
	src->sge[src->nr].addr = addr;
	src->sge[src->nr].len = len;
	src->sge[src->nr].copy = copy;
	src->copy |= copy;
	src->nr++;
}

static void src_put(struct siw2_tx_src *src)
{
	u32 i;

	for (i = 0; i < src->nr; i++)
		if (src->sge[i].mr)
			siw2_mr_put(src->sge[i].mr);
	src_clear(src);
}

/* Holds the regions the SQE's data comes from; *@len gets its length. */
static int src_from_sqe(struct siw2_stream *s, u32 *len)
{
	const struct siw2_sqe *sqe = &s->tx.sqe;
	struct siw2_tx_src *src = &s->tx.src;
	enum siw2_mr_fault fault;
	struct siw2_mr *mr;
	u64 total = 0;
	u32 i;

	src_clear(src);
	if (sqe->flags & SIW2_WQE_INLINE) {
		src->inline_data = sqe->inline_data;
		*len = sqe->inline_len;
		return 0;
	}
	for (i = 0; i < sqe->num_sge; i++) {
		if (!sqe->sge[i].length)
			continue;
		mr = siw2_mr_lookup(s->sdev, sqe->sge[i].lkey,
				    s->qp->base.pd, 0, sqe->sge[i].addr,
				    sqe->sge[i].length, &fault);
		if (!mr) {
			src_put(src);
			return -EACCES;
		}
		src_add(src, mr, sqe->sge[i].lkey, sqe->sge[i].addr,
			sqe->sge[i].length);
		total += sqe->sge[i].length;
	}
	if (total > U32_MAX) {
		src_put(src);
		return -EMSGSIZE;
	}
	*len = total;
	return 0;
}

static void retire_locked(struct siw2_stream *s)
{
	struct siw2_wqe_rec *rec;

	lockdep_assert_held(&s->lock);
	while (s->retire != s->fetched) {
		rec = &s->recs[s->retire & s->rec_mask];
		if (!rec->done)
			break;
		/* -ENOENT: a flush completed the rest already. */
		if (siw2_qp_sq_complete(s->qp, rec->wr_id, rec->opcode,
					rec->flags, rec->status,
					rec->byte_len) == -ENOENT) {
			s->retire = s->fetched;
			break;
		}
		s->retire++;
	}
}

/**
 * siw2_tx_retire() - post the completions of finished SQEs, in order
 * @s: the stream
 *
 * Any context.
 */
void siw2_tx_retire(struct siw2_stream *s)
{
	unsigned long flags;

	spin_lock_irqsave(&s->lock, flags);
	retire_locked(s);
	spin_unlock_irqrestore(&s->lock, flags);
}

/**
 * siw2_tx_rec_done() - a zero-copy message's pages are free: complete it
 * @s: the stream
 * @slot: its record, whose status and length finish() set
 *
 * Any context; called under zcopy.c's zc_lock.
 */
void siw2_tx_rec_done(struct siw2_stream *s, u32 slot)
{
	unsigned long flags;

	spin_lock_irqsave(&s->lock, flags);
	s->recs[slot].done = true;
	retire_locked(s);
	spin_unlock_irqrestore(&s->lock, flags);
}

static void sqe_done(struct siw2_stream *s, u32 slot,
		     enum ib_wc_status status, u32 byte_len)
{
	unsigned long flags;

	spin_lock_irqsave(&s->lock, flags);
	s->recs[slot].status = status;
	s->recs[slot].byte_len = byte_len;
	s->recs[slot].done = true;
	retire_locked(s);
	spin_unlock_irqrestore(&s->lock, flags);
}

/* A local error ends the stream: the QP goes to ERR and the peer is told. */
static void local_terminate(struct siw2_stream *s)
{
	struct siw2_term_info t;

	siw2_rdmap_term_prepare(&t, SIW2_TERM_RDMAP_CATASTROPHIC, NULL, 0, 0);
	siw2_stream_terminate(s, &t);
}

/* The SQE cannot be executed: it completes with @status, and the stream ends. */
static void sqe_fail(struct siw2_stream *s, enum ib_wc_status status)
{
	sqe_done(s, s->tx.slot, status, 0);
	local_terminate(s);
}

/* ---- messages ---- */

static int msg_start(struct siw2_stream *s, struct siw2_rdmap_hdr *m,
		     u32 len, enum siw2_tx_fin fin)
{
	const struct siw2_rdmap_op_info *op = siw2_rdmap_op(m->opcode);
	struct siw2_stream_tx *tx = &s->tx;
	int ret;

	if (!op)
		return -EINVAL;
	if (!op->tagged) {
		m->msn = tx->msn[op->qn]++;
		m->mo = 0;
	}
	ret = siw2_ddp_tx_init(&tx->ddp, m, len);
	if (ret)
		return ret;
	tx->busy = true;
	tx->fin = fin;
	tx->msg_len = len;
	return 0;
}

/* RFC 6581 9.2: the initiator's zero-length ready-to-receive message. */
static bool rtr_next(struct siw2_stream *s)
{
	struct siw2_rdmap_hdr m = {};
	u8 rtr = s->conn.rtr;

	s->tx.rtr_done = true;
	src_clear(&s->tx.src);
	if (rtr & SIW2_MPA_RTR_WRITE) {
		m.opcode = SIW2_RDMAP_OP_WRITE;
	} else if (rtr & SIW2_MPA_RTR_SEND) {
		m.opcode = SIW2_RDMAP_OP_SEND;
	} else {
		/* Its zero-length Read Response is not for any SQE. */
		set_bit(SIW2_S_RTR_READ, &s->flags);
		m.opcode = SIW2_RDMAP_OP_READ_REQ;
	}
	return !msg_start(s, &m, 0, SIW2_FIN_RTR);
}

/*
 * RFC 5040 5.2: Read Responses in the order the Requests came; RFC 7306
 * Atomic Responses share that order, as their Requests share queue 1.
 */
static bool inq_start(struct siw2_stream *s)
{
	struct siw2_tx_src *src = &s->tx.src;
	struct siw2_rdmap_hdr m = {};
	struct siw2_inq_entry *e;
	unsigned long flags;
	u32 len;

	spin_lock_irqsave(&s->lock, flags);
	e = siw2_inq_at(s, s->inq_head);
	src_clear(src);
	if (e->atomic) {
		/* RFC 7306: the Original Value, for the Request Identifier. */
		m.opcode = SIW2_RDMAP_OP_ATOMIC_RESP;
		m.aresp.req_id = e->req_id;
		m.aresp.orig = e->orig;
		spin_unlock_irqrestore(&s->lock, flags);
		return !msg_start(s, &m, 0, SIW2_FIN_IRQ);
	}
	if (e->len) {
		/* The entry's reference moves to the source. */
		src_add(src, e->mr, e->src_stag, e->src_to, e->len);
		e->mr = NULL;
	}
	m.opcode = SIW2_RDMAP_OP_READ_RESP;
	m.stag = e->sink_stag;
	m.to = e->sink_to;
	len = e->len;
	spin_unlock_irqrestore(&s->lock, flags);
	return !msg_start(s, &m, len, SIW2_FIN_IRQ);
}

/*
 * The receive engine adds a Request under s->lock and kicks us after: one
 * not seen here is seen by the round that kick asks for. The check is
 * apart from inq_start() so that the round which finds no work, the last
 * of every burst, does not initialise a message header on the stack.
 */
static bool inq_next(struct siw2_stream *s)
{
	if (READ_ONCE(s->inq_tail) == s->inq_head)
		return false;
	return inq_start(s);
}

static u8 send_opcode(const struct siw2_sqe *sqe)
{
	bool se = sqe->flags & SIW2_WQE_SOLICITED;

	switch (sqe->opcode) {
	case SIW2_OP_SEND_INV:
		return se ? SIW2_RDMAP_OP_SEND_SE_INV : SIW2_RDMAP_OP_SEND_INV;
	case SIW2_OP_SEND_IMM:
	case SIW2_OP_WRITE_IMM:
		return se ? SIW2_RDMAP_OP_IMM_SE : SIW2_RDMAP_OP_IMM;
	default:
		return se ? SIW2_RDMAP_OP_SEND_SE : SIW2_RDMAP_OP_SEND;
	}
}

/*
 * RFC 7306: the Immediate Data travels as 64 bits; the verbs' 32-bit
 * immediate (network order as the consumer gave it) is the low half.
 */
static int imm_start(struct siw2_stream *s)
{
	struct siw2_rdmap_hdr m = {
		.opcode = send_opcode(&s->tx.sqe),
		.imm = be32_to_cpu((__force __be32)s->tx.sqe.imm_inv),
	};

	src_clear(&s->tx.src);
	return msg_start(s, &m, 0, SIW2_FIN_SQE);
}

/*
 * A Read's sink must be ours to write before its STag goes on the wire:
 * 0 if it is, -EACCES if not.
 */
static int read_sink_error(struct siw2_stream *s)
{
	const struct siw2_sqe *sqe = &s->tx.sqe;
	enum siw2_mr_fault fault;
	struct siw2_mr *mr;

	if (!sqe->num_sge || !sqe->sge[0].length)
		return 0;
	mr = siw2_mr_lookup(s->sdev, sqe->sge[0].lkey, s->qp->base.pd,
			    IB_ACCESS_LOCAL_WRITE, sqe->sge[0].addr,
			    sqe->sge[0].length, &fault);
	if (!mr)
		return -EACCES;
	siw2_mr_put(mr);
	return 0;
}

static u8 first_rdmap_opcode(u8 op)
{
	switch (op) {
	case SIW2_OP_READ:
	case SIW2_OP_READ_INV:
		return SIW2_RDMAP_OP_READ_REQ;
	case SIW2_OP_ATOMIC_CMP_SWP:
	case SIW2_OP_ATOMIC_FETCH_ADD:
		return SIW2_RDMAP_OP_ATOMIC_REQ;
	default:
		return SIW2_RDMAP_OP_SEND;
	}
}

/* Local operations: no message, done in order with the others. */
static void sqe_local(struct siw2_stream *s)
{
	const struct siw2_sqe *sqe = &s->tx.sqe;
	struct siw2_qp *qp = s->qp;
	enum siw2_mr_fault fault;

	switch (sqe->opcode) {
	case SIW2_OP_LOCAL_INV:
		fault = siw2_mr_invalidate(s->sdev, sqe->imm_inv, qp, false);
		break;
	case SIW2_OP_BIND_MW:
		if (siw2_mw_bind(s->sdev, qp, sqe->rkey, &sqe->bind)) {
			sqe_fail(s, IB_WC_MW_BIND_ERR);
			return;
		}
		fault = SIW2_MR_OK;
		break;
	default:
		fault = siw2_mr_fast_reg(s->sdev, sqe->rkey, qp->base.pd,
					 sqe->imm_inv);
		break;
	}
	if (fault)
		sqe_fail(s, IB_WC_LOC_PROT_ERR);
	else
		sqe_done(s, s->tx.slot, IB_WC_SUCCESS, 0);
}

/* May the SQE just started go without a copy (zcopy.c)? */
static bool zc_eligible(struct siw2_stream *s, u32 len)
{
	const struct siw2_tx_src *src = &s->tx.src;
	u8 op = s->tx.sqe.opcode;
	u32 i;

	if (!s->tx_zerocopy || len < SIW2_ZC_MIN_LEN ||
	    src->inline_data)
		return false;
	/* Not WRITE_IMM: it completes after a second message. */
	if (op != SIW2_OP_WRITE && op != SIW2_OP_SEND &&
	    op != SIW2_OP_SEND_INV)
		return false;
	for (i = 0; i < src->nr; i++)
		if (!siw2_mr_user(src->sge[i].mr))
			return false;
	return true;
}

/* A record filled while past s->fetched becomes the retirer's to see. */
static void rec_publish(struct siw2_stream *s, u32 fetched)
{
	unsigned long flags;

	spin_lock_irqsave(&s->lock, flags);
	s->fetched = fetched;
	spin_unlock_irqrestore(&s->lock, flags);
}

/* @idx and @fresh: the SQE's ring index, and whether sq_next() just took it. */
static bool sq_start(struct siw2_stream *s, u32 idx, bool fresh)
{
	struct siw2_stream_tx *tx = &s->tx;
	struct siw2_sqe *sqe = &tx->sqe;
	struct siw2_rdmap_hdr m = {};
	struct siw2_orq_entry *o;
	unsigned long flags;
	bool is_read, is_atomic;
	u32 req_id = 0, len = 0;
	int ret;

	is_atomic = sqe->opcode == SIW2_OP_ATOMIC_CMP_SWP ||
		    sqe->opcode == SIW2_OP_ATOMIC_FETCH_ADD;
	is_read = sqe->opcode == SIW2_OP_READ ||
		  sqe->opcode == SIW2_OP_READ_INV || is_atomic;
	if (is_read && sqe->num_sge) {
		m.rreq.sink_stag = sqe->sge[0].lkey;
		m.rreq.sink_to = sqe->sge[0].addr;
		m.rreq.size = sqe->sge[0].length;
	}
	if (is_read && read_sink_error(s)) {
		tx->sqe_wait = false;
		if (fresh)
			rec_publish(s, idx + 1);
		sqe_fail(s, IB_WC_LOC_PROT_ERR);
		return false;
	}

	/* RFC 5040 5.5 fence, 5.2 ORD. */
	spin_lock_irqsave(&s->lock, flags);
	if (fresh)
		s->fetched = idx + 1;
	ret = siw2_rdmap_ord_issue(&s->ord, first_rdmap_opcode(sqe->opcode),
				   sqe->flags & SIW2_WQE_FENCE);
	if (!ret && is_read) {
		o = siw2_orq_at(s, s->orq_tail++);
		o->slot = tx->slot;
		o->rd.sink_stag = m.rreq.sink_stag;
		o->rd.sink_to = m.rreq.sink_to;
		o->rd.len = m.rreq.size;
		o->rd.got = 0;
		o->rd.atomic = is_atomic;
		o->do_inval = sqe->opcode == SIW2_OP_READ_INV;
		o->inval = sqe->imm_inv;
		req_id = s->orq_tail - 1;
	}
	/* The completion that frees the ORD or fence kicks the engine. */
	s->ord_wait = !!ret;
	spin_unlock_irqrestore(&s->lock, flags);
	if (ret) {
		tx->sqe_wait = true;
		return false;
	}
	tx->sqe_wait = false;

	switch (sqe->opcode) {
	case SIW2_OP_LOCAL_INV:
	case SIW2_OP_REG_MR:
	case SIW2_OP_BIND_MW:
		sqe_local(s);
		return true;
	case SIW2_OP_READ:
	case SIW2_OP_READ_INV:
		src_clear(&tx->src);
		m.opcode = SIW2_RDMAP_OP_READ_REQ;
		m.rreq.src_stag = sqe->rkey;
		m.rreq.src_to = sqe->raddr;
		break;
	case SIW2_OP_ATOMIC_CMP_SWP:
	case SIW2_OP_ATOMIC_FETCH_ADD:
		src_clear(&tx->src);
		m.opcode = SIW2_RDMAP_OP_ATOMIC_REQ;
		if (sqe->opcode == SIW2_OP_ATOMIC_CMP_SWP)
			siw2_rdmap_atomic_cmp_swap(&m.atomic, sqe->compare_add,
						   sqe->swap);
		else
			siw2_rdmap_atomic_fetch_add(&m.atomic,
						    sqe->compare_add);
		m.atomic.req_id = req_id;
		m.atomic.stag = sqe->rkey;
		m.atomic.to = sqe->raddr;
		break;
	case SIW2_OP_SEND_IMM:
		ret = imm_start(s);
		goto started;
	default:
		ret = src_from_sqe(s, &len);
		if (ret) {
			sqe_fail(s, ret == -EMSGSIZE ? IB_WC_LOC_LEN_ERR :
						       IB_WC_LOC_PROT_ERR);
			return false;
		}
		if (sqe->opcode == SIW2_OP_WRITE ||
		    sqe->opcode == SIW2_OP_WRITE_IMM) {
			m.opcode = SIW2_RDMAP_OP_WRITE;
			m.stag = sqe->rkey;
			m.to = sqe->raddr;
			tx->imm_next = sqe->opcode == SIW2_OP_WRITE_IMM;
		} else {
			m.opcode = send_opcode(sqe);
			m.inval_stag = sqe->imm_inv;
		}
		break;
	}
	ret = msg_start(s, &m, len, SIW2_FIN_SQE);
	if (!ret && zc_eligible(s, len))
		tx->zc = siw2_zc_new(s);
started:
	if (ret) {
		src_put(&tx->src);
		sqe_fail(s, IB_WC_LOC_LEN_ERR);
		return false;
	}
	return true;
}

/*
 * Takes the next SQE unless one waits for the ORD or a fence; sq_start()
 * does the rest, apart so that the round which finds the SQ empty does
 * not initialise its stack.
 */
static bool sq_next(struct siw2_stream *s)
{
	struct siw2_stream_tx *tx = &s->tx;
	struct siw2_sqe *sqe = &tx->sqe;
	struct siw2_wqe_rec *rec;
	u32 idx = 0;
	bool fresh = false;
	int ret;

	if (!tx->sqe_wait) {
		ret = siw2_qp_get_sqe(s->qp, sqe, &idx);
		if (ret == -ENOENT || ret == -EIO)
			return false;
		/*
		 * The record is past s->fetched, where retire_locked() does
		 * not look: it is filled without the lock, and published with
		 * s->fetched under it, in sq_start()'s ORD section or on
		 * failure.
		 */
		tx->slot = idx & s->rec_mask;
		rec = &s->recs[tx->slot];
		rec->wr_id = sqe->wr_id;
		rec->opcode = sqe->opcode;
		rec->flags = sqe->flags;
		rec->done = false;
		fresh = true;
		if (ret == -EINVAL) {
			rec_publish(s, idx + 1);
			sqe_fail(s, IB_WC_LOC_QP_OP_ERR);
			return false;
		}
	}
	return sq_start(s, idx, fresh);
}

/* The current message was accepted by TCP in full. */
static int finish(struct siw2_stream *s)
{
	struct siw2_stream_tx *tx = &s->tx;
	enum siw2_tx_fin fin = tx->fin;
	unsigned long flags;
	u8 op;

	tx->fin = SIW2_FIN_NONE;
	src_put(&tx->src);
	switch (fin) {
	case SIW2_FIN_SQE:
		if (tx->imm_next) {
			tx->imm_next = false;
			return imm_start(s);
		}
		op = tx->sqe.opcode;
		/* A Read or Atomic completes when its response arrived (rx.c). */
		if (tx->zc) {
			/* Complete once TCP let go of the pages. */
			spin_lock_irqsave(&s->lock, flags);
			s->recs[tx->slot].status = IB_WC_SUCCESS;
			s->recs[tx->slot].byte_len = tx->msg_len;
			spin_unlock_irqrestore(&s->lock, flags);
			siw2_zc_end(tx->zc, tx->slot);
			tx->zc = NULL;
		} else if (op != SIW2_OP_READ && op != SIW2_OP_READ_INV &&
			   op != SIW2_OP_ATOMIC_CMP_SWP &&
			   op != SIW2_OP_ATOMIC_FETCH_ADD) {
			sqe_done(s, tx->slot, IB_WC_SUCCESS,
				 op == SIW2_OP_WRITE_IMM ? tx->write_len :
				 tx->msg_len);
		}
		break;
	default:
		break;
	}
	return 0;
}

static bool next_msg(struct siw2_stream *s)
{
	if (!s->tx.rtr_done)
		return rtr_next(s);
	if (inq_next(s))
		return true;
	return sq_next(s);
}

/* The message in progress will not complete: its object can go. */
static void zc_drop(struct siw2_stream_tx *tx)
{
	if (tx->zc)
		siw2_zc_end(tx->zc, -1);
	tx->zc = NULL;
	tx->batch_zc = false;
}

/*
 * A region changed under a message in progress (@err -EACCES), or its
 * memory could not be read (-EFAULT: nothing mapped there, for an ODP
 * MR), or a batch could not be built.
 */
static void tx_abort(struct siw2_stream *s, int err)
{
	struct siw2_stream_tx *tx = &s->tx;

	siw2_batch_reset(tx);
	tx->busy = false;
	zc_drop(tx);
	/* The work request's own memory failed it: a local error. */
	if (err == -EFAULT && tx->fin == SIW2_FIN_SQE) {
		sqe_fail(s, IB_WC_LOC_PROT_ERR);
		return;
	}
	local_terminate(s);
}

/*
 * One round of the engine, under tx_mutex. Returns true if it stopped for
 * want of work: the SQ is empty and nothing else is due. Otherwise
 * whatever stopped it (a full socket, the budget, ORD credit, a fence)
 * resumes the engine later, or the stream is closing.
 */
static bool tx_round(struct siw2_stream *s)
{
	struct siw2_stream_tx *tx = &s->tx;
	int budget = TX_BUDGET;
	int ret;

	for (;;) {
		if (closing(s))
			return false;
		if (tx->iter_live) {
			ret = flush(s, false);
			if (ret == -EAGAIN)
				return false;
			if (ret) {
				siw2_qp_set_error(s->qp, SIW2_QP_CAUSE_LLP_ERROR);
				siw2_stream_close(s, ret, true);
				return false;
			}
		}
		if (!tx->busy && tx->fin != SIW2_FIN_NONE) {
			if (tx->imm_next)
				tx->write_len = tx->msg_len;
			ret = finish(s);
		} else if (tx->busy) {
			ret = build(s);
		} else {
			if (!test_bit(SIW2_S_TX_ALLOWED, &s->flags))
				return false;
			if (!budget--) {
				siw2_tx_resume(s);
				return false;
			}
			if (!next_msg(s))
				return !tx->sqe_wait && tx->rtr_done;
			ret = 0;
		}
		if (ret) {
			tx_abort(s, ret);
			return false;
		}
	}
}

/*
 * Marks work for the engine. What the caller published first (an SQE, a
 * Request in the INQ) is visible to whichever round clears the bit, even
 * one of another thread that holds tx_mutex now: a user's SQ index is
 * published without any lock the engine takes.
 */
static void set_pending(struct siw2_stream *s)
{
	/* Pairs with tx_run()'s smp_mb__after_atomic() and smp_mb(). */
	smp_mb__before_atomic();
	set_bit(SIW2_S_TX_PENDING, &s->flags);
}

/*
 * A user QP's engine watches the SQ from the moment it holds tx_mutex
 * until a round finds it empty (siw2_qp_sq_idle()): posts meanwhile need
 * no doorbell. A stream whose close work holds or held tx_mutex watches
 * no more; the close work cleared the bit (stream.c).
 */
static void tx_run(struct siw2_stream *s)
{
	bool user = s->qp->user;

	for (;;) {
		if (!mutex_trylock(&s->tx_mutex))
			return;
		clear_bit(SIW2_S_TX_PENDING, &s->flags);
		/* Work published before a kick is seen by this round. */
		smp_mb__after_atomic();
		if (user && !test_bit(SIW2_S_CLOSED, &s->flags))
			siw2_qp_sq_wake(s->qp, SIW2_SQW_ENGINE, 0);
		if (tx_round(s) && user && siw2_qp_sq_idle(s->qp))
			set_pending(s);
		mutex_unlock(&s->tx_mutex);
		/* A kick that found the mutex taken left the bit for us. */
		smp_mb();
		if (!test_bit(SIW2_S_TX_PENDING, &s->flags))
			return;
	}
}

void siw2_tx_work(struct work_struct *work)
{
	tx_run(container_of(work, struct siw2_stream, tx_work));
}

/**
 * siw2_tx_kick() - there may be work for the send engine: run it here
 * @s: the stream
 *
 * Context: process context that may sleep (the engine sends on the
 * socket). A caller that cannot promise that uses siw2_tx_kick_async().
 */
void siw2_tx_kick(struct siw2_stream *s)
{
	might_sleep();
	WRITE_ONCE(s->tx_cpu, raw_smp_processor_id());
	set_pending(s);
	/* The bit before the trylock; pairs with tx_run()'s smp_mb(). */
	smp_mb__after_atomic();
	tx_run(s);
}

/* Any context, for a post: the engine runs on the workqueue, on this CPU. */
void siw2_tx_kick_async(struct siw2_stream *s)
{
	WRITE_ONCE(s->tx_cpu, raw_smp_processor_id());
	set_pending(s);
	queue_work(siw2_tx_wq, &s->tx_work);
}

/**
 * siw2_tx_resume() - let the engine go on, on the consumer's CPU
 * @s: the stream
 *
 * Context: any. For the socket's write_space, an engine that used up its
 * budget, and work the receive path or the CM queued (a Response, ORD
 * credit, the first FPDU that lets it send). The work item runs on
 * tx_cpu, or here should that CPU have gone offline.
 */
void siw2_tx_resume(struct siw2_stream *s)
{
	int cpu = READ_ONCE(s->tx_cpu);

	if (!cpu_online(cpu))
		cpu = WORK_CPU_UNBOUND;
	set_pending(s);
	queue_work_on(cpu, siw2_tx_wq, &s->tx_work);
}

/* A message is half sent, or an FPDU built and not all taken by TCP. */
bool siw2_tx_begun(struct siw2_stream *s)
{
	lockdep_assert_held(&s->tx_mutex);
	return s->tx.busy || s->tx.iter_live;
}

/**
 * siw2_tx_close() - what a graceful end owes the peer
 * @s: the stream, with tx_mutex held and the engine stopped
 *
 * The message in progress is sent to its end, then the Terminate if one
 * is queued (RFC 5040 7.1: the last message). Blocking sends, bounded by
 * the socket's send timeout.
 */
void siw2_tx_close(struct siw2_stream *s)
{
	struct siw2_stream_tx *tx = &s->tx;
	u8 ulpdu[SIW2_HDR_MAX + SIW2_TERM_BODY_MAX];
	u32 len;

	lockdep_assert_held(&s->tx_mutex);
	if (!test_bit(SIW2_S_TERM, &s->flags)) {
		while (tx->iter_live || tx->busy) {
			if (tx->iter_live && flush(s, true))
				return;
			if (tx->busy && build(s))
				return;
			if (!tx->busy && !tx->iter_live &&
			    tx->fin != SIW2_FIN_NONE && finish(s))
				return;
		}
		return;
	}
	/* Only complete FPDUs may precede the Terminate. */
	if (tx->iter_live && flush(s, true))
		return;
	len = siw2_rdmap_term_build(ulpdu, sizeof(ulpdu), &s->term);
	if (!len)
		return;
	siw2_batch_reset(tx);
	tx->busy = false;
	/* The message cut short gives back the regions it held. */
	src_put(&tx->src);
	if (siw2_batch_add_fpdu(s, ulpdu, len, 0, 0))
		return;
	siw2_batch_seal(tx);
	if (!flush(s, true))
		trace_siw2_term_sent(&s->sdev->ibdev, s->qp->base.qp_num,
				     &s->term);
}

/* The close work, after the engine stopped for good. */
void siw2_tx_release(struct siw2_stream *s)
{
	struct siw2_inq_entry *e;
	unsigned long flags;
	u32 i;

	src_put(&s->tx.src);
	siw2_batch_reset(&s->tx);
	for (i = 0; i < SIW2_TX_COPY_PAGES; i++) {
		if (s->tx.copy[i])
			put_page(s->tx.copy[i]);
		s->tx.copy[i] = NULL;
	}
	zc_drop(&s->tx);
	siw2_zc_detach(s);
	if (s->tx.stage_next)
		put_page(s->tx.stage_next);
	s->tx.stage_next = NULL;
	spin_lock_irqsave(&s->lock, flags);
	for (i = s->inq_head; i != s->inq_tail; i++) {
		e = siw2_inq_at(s, i);
		if (e->mr)
			siw2_mr_put(e->mr);
		e->mr = NULL;
	}
	s->inq_head = s->inq_tail;
	spin_unlock_irqrestore(&s->lock, flags);
}
