// SPDX-License-Identifier: GPL-2.0
/*
 * The receive engine: runs in the socket's data_ready callback (softirq,
 * or process context when the socket was owned), walks the socket's queued
 * skbs in place with tcp_read_sock() and skb_seq_read(), and feeds the
 * octets through MPA (mpa.c) and DDP (ddp.c). Payload is copied exactly
 * once, from the skb into the registered memory it is destined for
 * (RFC 5041 5.3 Placement); no intermediate buffer exists.
 *
 * The protocol's rules live in the pure layers; this file finds the
 * objects they need and acts on their verdict. At each segment header
 * siw2_rdmap_rx_begin() gets the stream's view of its requests (the
 * oldest outstanding Read, a due or awaited RTR) and says what the
 * segment is: to be placed, skipped, or the RTR. At the segment's end
 * the rdmap.c functions match Responses and admit Requests against
 * IRD, and where the copy folds the CRC mpa.c keeps the folding in
 * order (siw2_mpa_rx_fold_to()).
 *
 * Checks precede placement (RFC 5041 7.1): a segment's STag, bounds,
 * receive buffer or IRD are checked when its header is complete, before
 * its first payload octet is placed. Delivery (completions, Read
 * Responses, invalidations) waits for MPA's verified end of the FPDU, as
 * only then is the CRC known to be good (RFC 5044 4.4).
 *
 * Any violation ends the stream with a Terminate naming the RFC's cause
 * (siw2_stream_terminate()); the receive side then drops everything
 * (RFC 5041 7.1, RFC 5044 8). Nothing here logs: a peer can cause all of
 * it, so it is counted instead.
 *
 * States (enum siw2_rx_state, changed only by rx_enter()):
 *
 *   FIRST_FPDU -> FIRST_MSG -> RUN      first verified FPDU, first message
 *   FIRST_FPDU, FIRST_MSG, RUN -> TERM_PENDING   a check failed
 *   any -> DEAD                          Terminate sent or received, MPA
 *                                        failed, the QP left RTS, close
 *
 * The first FPDU lets a responder send (RFC 5044 7.1.2 rule 4); before
 * the first message a peer-to-peer responder takes the RTR (RFC 6581
 * 9.2). TERM_PENDING lasts until MPA's verdict on the FPDU (see
 * rx_terminate()).
 *
 * Faults. A page of an on-demand paging MR (odp.c) that is not mapped
 * cannot be faulted in here, as data_ready may not sleep. The payload
 * destined for it, and all of the segment's payload after it, goes to a
 * bounce buffer instead, the CRC folded in as ever; at the FPDU's end,
 * with the CRC verified, the stream pauses: it stops taking octets from
 * the socket, which keeps them queued (TCP's window closes and the peer
 * stops; nothing is dropped), and the fault work, in process context,
 * faults the pages in, places the bounce buffer and delivers the FPDU as
 * rx_bytes() would have, then resumes reading where it stopped. A Read
 * Request whose source is not mapped, and an Atomic Request or Response
 * whose word is not, pause the stream the same way after their FPDU, and
 * the work answers or delivers them: their order with the messages after
 * them is kept. Where the process has no mapping at all, the fault fails
 * and the stream ends with the Terminate of a protection error (the
 * peer's access), or a local error (our own receive buffer or sink). The
 * bounce buffer holds at most one segment's payload (at most an FPDU),
 * one per stream, while the stream reads nothing.
 */
#include <linux/skbuff.h>
#include <net/tcp.h>

#include "engine.h"
#include "trace.h"

static struct ib_pd *pd_of(struct siw2_stream *s)
{
	return s->qp->base.pd;
}

/*
 * Every change of rx->state: forward only, so that a stream once dead
 * stays dead and a pending Terminate is never taken back.
 */
static void rx_enter(struct siw2_stream_rx *rx, enum siw2_rx_state to)
{
	if (to > rx->state)
		rx->state = to;
}

/* Segments are still acted upon: no Terminate pending, not dead. */
static bool rx_live(const struct siw2_stream_rx *rx)
{
	return rx->state < SIW2_RX_TERM_PENDING;
}

static bool rx_dead(const struct siw2_stream_rx *rx)
{
	return rx->state == SIW2_RX_DEAD;
}

/*
 * Nothing is placed or executed once the QP went to ERR or RESET, or was
 * reset under the stream's held work requests (siw2_qp.discard_held).
 */
static bool rx_stopped(struct siw2_stream *s)
{
	enum ib_qp_state state = READ_ONCE(s->qp->state);

	return state == IB_QPS_ERR || state == IB_QPS_RESET ||
	       READ_ONCE(s->qp->discard_held);
}

/* Ends a wait for a fault: what it held goes. */
static void wait_clear(struct siw2_stream_rx *rx)
{
	kfree(rx->bounce);
	rx->bounce = NULL;
	if (rx->miss_mr)
		siw2_mr_put(rx->miss_mr);
	rx->miss_mr = NULL;
	rx->wait = SIW2_RX_WAIT_NONE;
	rx->read_faulted = false;
}

/*
 * What the fault work is to map: @len octets at @addr of @mr, which the
 * caller holds, and if @ahead up to SIW2_ODP_AHEAD octets from @addr at
 * best (payload that follows lands there; a hole or a read-only mapping
 * past what the access needs must not fail it). A wait may need several
 * faults, one after the other.
 */
static void note_miss(struct siw2_stream_rx *rx, struct siw2_mr *mr,
		      u64 addr, u64 len, bool write, bool ahead)
{
	siw2_mr_hold(mr);
	if (rx->miss_mr)
		siw2_mr_put(rx->miss_mr);
	rx->miss_mr = mr;
	rx->miss_addr = addr;
	rx->miss_len = len;
	rx->miss_ahead = ahead && len < SIW2_ODP_AHEAD ? SIW2_ODP_AHEAD : 0;
	rx->miss_write = write;
}

/* Returned where a cause would be: the stream waits for a fault. */
#define RX_FAULT_WAIT 1

static void put_mrs(struct siw2_stream_rx *rx)
{
	if (rx->mr)
		siw2_mr_put(rx->mr);
	rx->mr = NULL;
	if (rx->sge_mr)
		siw2_mr_put(rx->sge_mr);
	rx->sge_mr = NULL;
}

/*
 * A segment failed a check. RFC 5044 4.4: the FPDU's CRC is verified
 * first, so the Terminate waits for MPA's verdict on the FPDU: a good CRC
 * sends this cause, a bad one the CRC error (rx_bytes()). DDP drops the
 * rest of the FPDU meanwhile.
 */
static void rx_terminate(struct siw2_stream *s, u32 cause)
{
	struct siw2_stream_rx *rx = &s->rx;

	if (!rx_live(rx))
		return;
	siw2_ddp_rx_term_prepare(&rx->ddp, &rx->pend_term, cause);
	siw2_ddp_rx_fail(&rx->ddp, cause);
	rx_enter(rx, SIW2_RX_TERM_PENDING);
}

static void rqe_complete(struct siw2_stream *s, enum ib_wc_status status,
			 u8 opcode, u8 flags, u32 byte_len, u32 imm_inv)
{
	struct siw2_stream_rx *rx = &s->rx;
	struct siw2_cqe cqe = {
		.wr_id = rx->rqe.wr_id,
		.opcode = opcode,
		.status = status,
		.flags = flags,
		.byte_len = byte_len,
		.imm_inv = imm_inv,
		.qp_num = s->qp->base.qp_num,
	};

	rx->have_rqe = false;
	if (rx->sge_mr)
		siw2_mr_put(rx->sge_mr);
	rx->sge_mr = NULL;
	siw2_cq_post(s->qp->rcq, &cqe);
}

/* ---- segment start: every check before the first octet is placed ---- */

static u32 begin_write(struct siw2_stream *s, const struct siw2_ddp_seg *seg)
{
	struct siw2_stream_rx *rx = &s->rx;
	struct siw2_stag_view view;
	u32 cause;

	rx->to = seg->hdr.to;
	if (rx->disp != SIW2_RX_PLACE)
		return 0;
	rx->mr = siw2_mr_lookup_view(s->sdev, seg->hdr.stag, s->qp,
				     IB_ACCESS_REMOTE_WRITE, &view);
	cause = siw2_ddp_check_tagged(&view, seg->hdr.to, seg->len);
	if (cause && rx->mr) {
		siw2_mr_put(rx->mr);
		rx->mr = NULL;
	}
	return cause;
}

/*
 * The Read it answers was matched by siw2_rdmap_rx_begin(): its sink is
 * the one our Read named, if still there.
 */
static u32 begin_read_resp(struct siw2_stream *s,
			   const struct siw2_ddp_seg *seg)
{
	struct siw2_stream_rx *rx = &s->rx;
	enum siw2_mr_fault fault;

	if (rx->disp == SIW2_RX_RTR) {
		clear_bit(SIW2_S_RTR_READ, &s->flags);
		return 0;
	}
	rx->to = seg->hdr.to;
	if (rx->disp != SIW2_RX_PLACE)
		return 0;
	rx->mr = siw2_mr_lookup(s->sdev, seg->hdr.stag, pd_of(s),
				IB_ACCESS_LOCAL_WRITE, seg->hdr.to, seg->len,
				&fault);
	return rx->mr ? 0 : SIW2_TERM_DDP_T_INVALID_STAG;
}

static u32 rqe_length(const struct siw2_rqe *rqe)
{
	u64 len = 0;
	u32 i;

	for (i = 0; i < rqe->num_sge; i++)
		len += rqe->sge[i].length;
	return min_t(u64, len, U32_MAX);
}

/* Untagged queue 0: a Send or an Immediate Data message. */
static u32 begin_untagged_rq(struct siw2_stream *s,
			     const struct siw2_ddp_seg *seg)
{
	struct siw2_stream_rx *rx = &s->rx;
	int ret;

	if (rx->disp == SIW2_RX_RTR)
		return 0;
	if (seg->first) {
		ret = siw2_qp_get_rqe(s->qp, &rx->rqe);
		if (ret == -ENOENT)
			return SIW2_TERM_DDP_U_MSN_NOBUF;
		if (ret == -EIO)
			return SIW2_TERM_RDMAP_CATASTROPHIC;
		rx->have_rqe = true;
		rx->sge_idx = 0;
		if (ret == -EINVAL) {
			rqe_complete(s, IB_WC_LOC_QP_OP_ERR, SIW2_WC_RECV, 0,
				     0, 0);
			return SIW2_TERM_RDMAP_CATASTROPHIC;
		}
		rx->rqe_len = rqe_length(&rx->rqe);
	}
	if (!rx->have_rqe)
		return SIW2_TERM_DDP_U_MSN_NOBUF;
	if (seg->op->cls == SIW2_CLASS_IMM)
		return 0;
	return siw2_ddp_rx_check_untagged(&rx->ddp, true, rx->rqe_len);
}

/* Our oldest outstanding Read or Atomic Request; under s->lock. */
static struct siw2_rdmap_read *orq_oldest(struct siw2_stream *s)
{
	lockdep_assert_held(&s->lock);
	if (s->orq_head == s->orq_tail)
		return NULL;
	return &siw2_orq_at(s, s->orq_head)->rd;
}

/* RDMAP's rules (rdmap.c) with the stream's view of its requests. */
static u32 rx_rules(struct siw2_stream *s, const struct siw2_ddp_seg *seg)
{
	struct siw2_stream_rx *rx = &s->rx;
	struct siw2_rdmap_rx_ctx ctx = {
		.await_rtr = s->conn.p2p && !s->initiator &&
			     rx->state < SIW2_RX_RUN,
		.rtr_read_out = test_bit(SIW2_S_RTR_READ, &s->flags),
	};
	unsigned long flags;
	u32 cause;

	/* Only a Read Response needs the ORQ, which the send engine fills. */
	if (seg->op->cls != SIW2_CLASS_READ_RESP)
		return siw2_rdmap_rx_begin(&ctx, seg, &rx->disp);
	spin_lock_irqsave(&s->lock, flags);
	ctx.oldest = orq_oldest(s);
	ctx.oldest_id = s->orq_head;
	cause = siw2_rdmap_rx_begin(&ctx, seg, &rx->disp);
	spin_unlock_irqrestore(&s->lock, flags);
	return cause;
}

static u32 seg_begin(struct siw2_stream *s)
{
	const struct siw2_ddp_seg *seg = siw2_ddp_rx_seg(&s->rx.ddp);
	struct siw2_stream_rx *rx = &s->rx;
	u32 cause;

	rx->cls = seg->op->cls;
	rx->hdr = seg->hdr;
	rx->seg_len = seg->len;
	cause = rx_rules(s, seg);
	if (cause)
		return cause;
	switch (rx->cls) {
	case SIW2_CLASS_WRITE:
		return begin_write(s, seg);
	case SIW2_CLASS_READ_RESP:
		return begin_read_resp(s, seg);
	case SIW2_CLASS_SEND:
	case SIW2_CLASS_IMM:
		return begin_untagged_rq(s, seg);
	default:
		return 0;
	}
}

/* ---- placement ---- */

/*
 * Places Send payload at message offset @mo into the RQE's scatter list,
 * continuing @crc over it unless that is NULL; *@done counts the octets
 * placed, which are less than @len only on error (-EAGAIN: a page of an
 * ODP MR, noted for the fault work).
 */
static int place_rqe(struct siw2_stream *s, u32 mo, const u8 *data, u32 len,
		     u32 *crc, u32 *done)
{
	struct siw2_stream_rx *rx = &s->rx;
	const struct siw2_sge *sge;
	enum siw2_mr_fault fault;
	u32 i, n, off = mo;
	int ret;

	for (i = 0; i < rx->rqe.num_sge && off >= rx->rqe.sge[i].length; i++)
		off -= rx->rqe.sge[i].length;
	while (len) {
		if (i >= rx->rqe.num_sge)
			return -ERANGE;
		sge = &rx->rqe.sge[i];
		if (!rx->sge_mr || rx->sge_idx != i) {
			if (rx->sge_mr)
				siw2_mr_put(rx->sge_mr);
			rx->sge_mr = siw2_mr_lookup(s->sdev, sge->lkey,
						    pd_of(s),
						    IB_ACCESS_LOCAL_WRITE,
						    sge->addr, sge->length,
						    &fault);
			rx->sge_idx = i;
			if (!rx->sge_mr)
				return -EACCES;
		}
		n = min(len, sge->length - off);
		ret = siw2_mr_copy_to_crc(rx->sge_mr, sge->lkey, sge->addr + off,
					  data, n, crc);
		if (ret == -EAGAIN)
			note_miss(rx, rx->sge_mr, sge->addr + off, n, true,
				  true);
		if (ret)
			return ret;
		*done += n;
		data += n;
		len -= n;
		off = 0;
		i++;
	}
	return 0;
}

/*
 * The segment's payload from octet @off on waits for a fault ("Faults"
 * above): @at is where it goes, an address for tagged payload, an MO for
 * a Send. Return: 0, or -ENOMEM.
 */
static int bounce_begin(struct siw2_stream_rx *rx, u32 off, u64 at)
{
	if (WARN_ON_ONCE(off >= rx->seg_len))
		return -EFAULT;
	rx->bounce_size = rx->seg_len - off;
	rx->bounce = kmalloc(rx->bounce_size, GFP_ATOMIC | __GFP_NOWARN);
	if (!rx->bounce)
		return -ENOMEM;
	rx->bounce_len = 0;
	rx->bounce_done = 0;
	rx->bounce_at = at;
	rx->wait = SIW2_RX_WAIT_PLACE;
	return 0;
}

/* Adds payload to the bounce buffer, folding @crc unless it is NULL. */
static int bounce_add(struct siw2_stream_rx *rx, const u8 *data, u32 len,
		      u32 *crc)
{
	u8 *to = rx->bounce + rx->bounce_len;

	if (WARN_ON_ONCE(len > rx->bounce_size - rx->bounce_len))
		return -EFAULT;
	if (crc)
		*crc = siw2_mpa_crc_copy(*crc, to, data, len);
	else
		memcpy(to, data, len);
	rx->bounce_len += len;
	return 0;
}

/* Payload whose place is not mapped now goes to the bounce buffer. */
static int place_later(struct siw2_stream *s, const struct siw2_ddp_rx_ev *ev,
		       u32 done, u32 *crc)
{
	struct siw2_stream_rx *rx = &s->rx;
	u64 at;
	int ret;

	if (!rx->bounce) {
		if (rx->cls == SIW2_CLASS_SEND) {
			at = rx->hdr.mo + ev->off + done;
		} else {
			at = rx->to + ev->off + done;
			note_miss(rx, rx->mr, at, rx->seg_len - ev->off - done,
				  true, true);
		}
		ret = bounce_begin(rx, ev->off + done, at);
		if (ret)
			return ret;
	}
	return bounce_add(rx, ev->data + done, ev->len - done, crc);
}

/*
 * Copies a payload span to its place and, where the stream folds the CRC
 * itself, folds it in the same pass. What is not placed here (headers,
 * skipped payload) rx_bytes() folds after the span.
 */
static void place(struct siw2_stream *s, const struct siw2_ddp_rx_ev *ev)
{
	struct siw2_stream_rx *rx = &s->rx;
	u32 *crc, done = 0;
	int ret;

	if (rx->disp != SIW2_RX_PLACE)
		return;
	crc = siw2_mpa_rx_crc_sink(&rx->mpa);
	if (crc)
		siw2_mpa_rx_fold_to(&rx->mpa, ev->data);
	if (rx->bounce) {
		ret = place_later(s, ev, 0, crc);
		goto out;
	}
	switch (rx->cls) {
	case SIW2_CLASS_WRITE:
	case SIW2_CLASS_READ_RESP:
		ret = siw2_mr_copy_to_crc(rx->mr, rx->hdr.stag,
					  rx->to + ev->off, ev->data, ev->len,
					  crc);
		if (ret == -EAGAIN)
			ret = place_later(s, ev, 0, crc);
		/* Invalidated since the segment began (mr.c). */
		if (ret == -EACCES) {
			rx_terminate(s, SIW2_TERM_DDP_T_INVALID_STAG);
			return;
		}
		break;
	case SIW2_CLASS_SEND:
		ret = place_rqe(s, rx->hdr.mo + ev->off, ev->data, ev->len,
				crc, &done);
		if (ret == -EAGAIN)
			ret = place_later(s, ev, done, crc);
		/* The receive's own memory failed: a local error. */
		if (ret)
			rqe_complete(s, IB_WC_LOC_PROT_ERR, SIW2_WC_RECV, 0,
				     0, 0);
		break;
	default:
		return;
	}
out:
	if (ret)
		rx_terminate(s, SIW2_TERM_RDMAP_CATASTROPHIC);
	else if (crc)
		siw2_mpa_rx_folded(&rx->mpa, ev->data + ev->len);
}

/*
 * The fault work places what waited in the bounce buffer. Return: 0,
 * -EAGAIN with another miss noted, or the error that ends the stream.
 */
static int bounce_place(struct siw2_stream *s)
{
	struct siw2_stream_rx *rx = &s->rx;
	u32 done = 0;
	int ret;

	switch (rx->cls) {
	case SIW2_CLASS_WRITE:
	case SIW2_CLASS_READ_RESP:
		ret = siw2_mr_copy_to(rx->mr, rx->hdr.stag, rx->bounce_at,
				      rx->bounce, rx->bounce_len);
		if (ret == -EAGAIN)
			note_miss(rx, rx->mr, rx->bounce_at, rx->bounce_len,
				  true, true);
		return ret;
	case SIW2_CLASS_SEND:
		ret = place_rqe(s, rx->bounce_at + rx->bounce_done,
				rx->bounce + rx->bounce_done,
				rx->bounce_len - rx->bounce_done, NULL, &done);
		rx->bounce_done += done;
		return ret;
	default:
		return -EFAULT;
	}
}

/*
 * The oldest Read of ours, which the Read Response being received answers,
 * completes with a local protection error (the QP's move to ERR then
 * flushes what follows it).
 */
static void read_fail_local(struct siw2_stream *s)
{
	struct siw2_wqe_rec *rec;
	unsigned long flags;
	bool found = false;

	spin_lock_irqsave(&s->lock, flags);
	if (s->orq_head != s->orq_tail) {
		rec = &s->recs[siw2_orq_at(s, s->orq_head)->slot];
		rec->status = IB_WC_LOC_PROT_ERR;
		rec->byte_len = 0;
		rec->done = true;
		found = true;
	}
	spin_unlock_irqrestore(&s->lock, flags);
	if (found)
		siw2_tx_retire(s);
}

/* The bounced payload cannot be placed: as place() would have failed. */
static void bounce_fail(struct siw2_stream *s, int err)
{
	struct siw2_stream_rx *rx = &s->rx;

	switch (rx->cls) {
	case SIW2_CLASS_WRITE:
		/* The peer's Write to memory we have no mapping for. */
		rx_terminate(s, err == -EACCES ? SIW2_TERM_DDP_T_INVALID_STAG :
			     err == -EFAULT || err == -EPERM ?
			     SIW2_TERM_RDMAP_PROT_UNSPEC :
			     SIW2_TERM_RDMAP_CATASTROPHIC);
		return;
	case SIW2_CLASS_READ_RESP:
		if (err == -EACCES) {
			rx_terminate(s, SIW2_TERM_DDP_T_INVALID_STAG);
			return;
		}
		/* Our Read's own sink failed: it completes with that. */
		read_fail_local(s);
		rx_terminate(s, SIW2_TERM_RDMAP_CATASTROPHIC);
		return;
	default:
		if (rx->have_rqe)
			rqe_complete(s, IB_WC_LOC_PROT_ERR, SIW2_WC_RECV, 0,
				     0, 0);
		rx_terminate(s, SIW2_TERM_RDMAP_CATASTROPHIC);
	}
}

/* ---- segment end: delivery ---- */

/* What siw2_mr_invalidate() found, as RDMAP's rule wants to see it. */
static u32 inval_cause(enum siw2_mr_fault fault)
{
	struct siw2_inval_view v = {
		.exists = fault != SIW2_MR_BAD_STAG,
		/* A type 2 window of another QP is not this stream's. */
		.same_pd = fault != SIW2_MR_BAD_PD && fault != SIW2_MR_BAD_QP,
		.invalidatable = fault == SIW2_MR_OK,
	};

	return siw2_rdmap_check_inval(&v);
}

static u32 end_send(struct siw2_stream *s, const struct siw2_ddp_rx_ev *ev)
{
	struct siw2_stream_rx *rx = &s->rx;
	const struct siw2_rdmap_op_info *op = siw2_rdmap_op(rx->hdr.opcode);
	u8 flags = op->se ? SIW2_CQE_SOLICITED : 0;
	enum siw2_mr_fault fault;
	u32 inv = 0;

	if (!ev->msg_done)
		return 0;
	if (rx->disp == SIW2_RX_RTR)
		return 0;
	if (op->inval) {
		/* RFC 5040 5.1: invalidate before the Send is delivered. */
		fault = siw2_mr_invalidate(s->sdev, rx->hdr.inval_stag,
					   s->qp, true);
		if (fault) {
			rqe_complete(s, IB_WC_REM_ACCESS_ERR, SIW2_WC_RECV, 0,
				     ev->msg_len, 0);
			return inval_cause(fault);
		}
		flags |= SIW2_CQE_WITH_INV;
		inv = rx->hdr.inval_stag;
	}
	rqe_complete(s, IB_WC_SUCCESS, SIW2_WC_RECV, flags, ev->msg_len, inv);
	return 0;
}

/*
 * RFC 7306 Immediate Data. Right after a Write it is that Write's
 * immediate (the verbs' RDMA Write with Immediate); otherwise a Send with
 * Immediate of no payload.
 */
static u32 end_imm(struct siw2_stream *s, const struct siw2_ddp_rx_ev *ev)
{
	struct siw2_stream_rx *rx = &s->rx;
	const struct siw2_rdmap_op_info *op = siw2_rdmap_op(rx->hdr.opcode);
	u8 flags = SIW2_CQE_WITH_IMM | (op->se ? SIW2_CQE_SOLICITED : 0);
	u32 imm = (__force u32)cpu_to_be32((u32)rx->hdr.imm);

	if (!ev->msg_done)
		return 0;
	if (rx->write == SIW2_RX_WRITE_ENDED)
		rqe_complete(s, IB_WC_SUCCESS, SIW2_WC_RECV_WRITE_IMM, flags,
			     rx->write_len, imm);
	else
		rqe_complete(s, IB_WC_SUCCESS, SIW2_WC_RECV_IMM, flags, 0,
			     imm);
	return 0;
}

/*
 * A response ended one of our outbound requests: its ORD credit is free.
 * Returns whether an SQE waits for that credit (or for the fence the
 * request held), so that the caller wakes the send engine; under s->lock.
 */
static bool ord_complete(struct siw2_stream *s)
{
	bool waits = s->ord_wait;

	lockdep_assert_held(&s->lock);
	siw2_rdmap_ord_complete(&s->ord);
	s->ord_wait = false;
	return waits;
}

static u32 end_read_resp(struct siw2_stream *s)
{
	struct siw2_stream_rx *rx = &s->rx;
	struct siw2_orq_entry *o;
	struct siw2_wqe_rec *rec;
	enum siw2_mr_fault fault = SIW2_MR_OK;
	unsigned long flags;
	bool done, kick = false;
	u32 inval = 0, len = 0, cause;
	bool do_inval = false;

	if (rx->mr)
		siw2_mr_put(rx->mr);
	rx->mr = NULL;
	if (rx->disp == SIW2_RX_RTR)
		return 0;

	spin_lock_irqsave(&s->lock, flags);
	o = siw2_orq_at(s, s->orq_head);
	cause = siw2_rdmap_read_resp_end(&o->rd, rx->seg_len, rx->hdr.last,
					 &done);
	if (done) {
		s->orq_head++;
		kick = ord_complete(s);
		rec = &s->recs[o->slot];
		len = o->rd.len;
		do_inval = o->do_inval;
		inval = o->inval;
	}
	spin_unlock_irqrestore(&s->lock, flags);
	if (!done)
		return cause;
	if (do_inval)
		fault = siw2_mr_invalidate(s->sdev, inval, s->qp, false);
	spin_lock_irqsave(&s->lock, flags);
	rec->status = fault ? IB_WC_LOC_PROT_ERR : IB_WC_SUCCESS;
	rec->byte_len = len;
	rec->done = true;
	spin_unlock_irqrestore(&s->lock, flags);
	siw2_tx_retire(s);
	if (kick)
		siw2_tx_resume(s);
	return 0;
}

static u32 end_read_req(struct siw2_stream *s)
{
	const struct siw2_rdmap_hdr *h = &s->rx.hdr;
	struct siw2_stag_view view;
	u32 first;
	struct siw2_inq_entry *e;
	struct siw2_mr *mr = NULL;
	bool rtr = s->rx.disp == SIW2_RX_RTR;
	unsigned long flags;
	u32 cause = 0;

	if (h->rreq.size) {
		mr = siw2_mr_lookup_view(s->sdev, h->rreq.src_stag, s->qp,
					 IB_ACCESS_REMOTE_READ, &view);
		cause = siw2_rdmap_check_stag(&view, h->rreq.src_to,
					      h->rreq.size);
		if (cause) {
			if (mr)
				siw2_mr_put(mr);
			return cause;
		}
		/*
		 * An ODP source whose start is not mapped: the fault work
		 * finds out whether it can be, once (a bounded fault, which
		 * a peer's Read size does not stretch), then the send
		 * engine faults what it needs as it goes.
		 */
		first = min_t(u32, h->rreq.size, SIW2_ODP_AHEAD);
		if (!s->rx.read_faulted &&
		    !siw2_mr_present(mr, h->rreq.src_stag, h->rreq.src_to,
				     first, false)) {
			note_miss(&s->rx, mr, h->rreq.src_to, first, false,
				  false);
			s->rx.wait = SIW2_RX_WAIT_READ_REQ;
			siw2_mr_put(mr);
			return RX_FAULT_WAIT;
		}
	}
	spin_lock_irqsave(&s->lock, flags);
	cause = siw2_rdmap_ird_admit(&s->ird, rtr, !siw2_inq_full(s));
	if (!cause) {
		e = siw2_inq_at(s, s->inq_tail);
		WRITE_ONCE(s->inq_tail, s->inq_tail + 1);
		memset(e, 0, sizeof(*e));
		e->mr = mr;
		e->src_stag = h->rreq.src_stag;
		e->sink_stag = h->rreq.sink_stag;
		e->sink_to = h->rreq.sink_to;
		e->len = h->rreq.size;
		e->src_to = h->rreq.src_to;
		e->counted = !rtr;
		mr = NULL;
	}
	spin_unlock_irqrestore(&s->lock, flags);
	if (mr)
		siw2_mr_put(mr);
	if (!cause)
		siw2_tx_resume(s);
	return cause;
}

/*
 * RFC 7306 Atomic Request: executed on arrival, under the device's atomic
 * lock, and answered in order with the Read Responses (IRD counts both).
 */
static u32 end_atomic_req(struct siw2_stream *s)
{
	const struct siw2_atomic *a = &s->rx.hdr.atomic;
	struct siw2_stag_view view;
	struct siw2_inq_entry *e;
	unsigned long flags;
	struct siw2_mr *mr;
	u64 old = 0, new;
	u32 cause;
	int ret;

	mr = siw2_mr_lookup_view(s->sdev, a->stag, s->qp,
				 IB_ACCESS_REMOTE_ATOMIC, &view);
	cause = siw2_rdmap_atomic_check(a, &view);
	if (cause)
		goto out;
	if (!siw2_mr_present(mr, a->stag, a->to, sizeof(old), true))
		goto wait;
	spin_lock_irqsave(&s->lock, flags);
	cause = siw2_rdmap_ird_admit(&s->ird, false, !siw2_inq_full(s));
	spin_unlock_irqrestore(&s->lock, flags);
	if (cause)
		goto out;

	spin_lock_bh(&s->sdev->atomic_lock);
	ret = siw2_mr_copy_from(mr, a->stag, a->to, &old, sizeof(old));
	if (!ret) {
		new = siw2_rdmap_atomic_apply(a, old);
		if (new != old)
			ret = siw2_mr_copy_to(mr, a->stag, a->to, &new,
					      sizeof(new));
	}
	spin_unlock_bh(&s->sdev->atomic_lock);

	spin_lock_irqsave(&s->lock, flags);
	if (ret) {
		/* -EAGAIN: unmapped since it was looked at; nothing changed. */
		siw2_rdmap_ird_end(&s->ird);
		cause = ret == -EAGAIN ? RX_FAULT_WAIT :
					 SIW2_TERM_RDMAP_CATASTROPHIC;
	} else {
		e = siw2_inq_at(s, s->inq_tail);
		WRITE_ONCE(s->inq_tail, s->inq_tail + 1);
		memset(e, 0, sizeof(*e));
		e->atomic = true;
		e->counted = true;
		e->req_id = a->req_id;
		e->orig = old;
	}
	spin_unlock_irqrestore(&s->lock, flags);
	if (cause == RX_FAULT_WAIT)
		goto wait;
	if (!cause)
		siw2_tx_resume(s);
out:
	if (mr)
		siw2_mr_put(mr);
	return cause;
wait:
	note_miss(&s->rx, mr, a->to, sizeof(old), true, false);
	s->rx.wait = SIW2_RX_WAIT_ATOMIC_REQ;
	siw2_mr_put(mr);
	return RX_FAULT_WAIT;
}

/*
 * Writes the Original Value of the Atomic Response that ended ORQ entry
 * rx->aresp_idx to its sink and completes the request; RX_FAULT_WAIT if
 * the sink is an ODP page not mapped now. @err: the sink could not be
 * mapped (the fault work).
 */
static u32 atomic_resp_deliver(struct siw2_stream *s, int err)
{
	struct siw2_stream_rx *rx = &s->rx;
	struct siw2_orq_entry *o = siw2_orq_at(s, rx->aresp_idx);
	u64 orig = rx->aresp_orig;
	enum siw2_mr_fault fault;
	struct siw2_wqe_rec *rec;
	unsigned long flags;
	struct siw2_mr *mr;
	int ret = -EFAULT;
	bool kick;

	mr = err ? NULL : siw2_mr_lookup(s->sdev, o->rd.sink_stag, pd_of(s),
					 IB_ACCESS_LOCAL_WRITE, o->rd.sink_to,
					 sizeof(orig), &fault);
	if (mr) {
		ret = siw2_mr_copy_to(mr, o->rd.sink_stag, o->rd.sink_to, &orig,
				      sizeof(orig));
		if (ret == -EAGAIN) {
			note_miss(rx, mr, o->rd.sink_to, sizeof(orig), true,
				  false);
			rx->wait = SIW2_RX_WAIT_ATOMIC_RESP;
		}
		siw2_mr_put(mr);
		if (ret == -EAGAIN)
			return RX_FAULT_WAIT;
	}
	spin_lock_irqsave(&s->lock, flags);
	kick = ord_complete(s);
	rec = &s->recs[o->slot];
	rec->status = ret ? IB_WC_LOC_PROT_ERR : IB_WC_SUCCESS;
	rec->byte_len = sizeof(orig);
	rec->done = true;
	spin_unlock_irqrestore(&s->lock, flags);
	siw2_tx_retire(s);
	if (kick)
		siw2_tx_resume(s);
	return 0;
}

/* RFC 7306 Atomic Response: the Original Value for our oldest request. */
static u32 end_atomic_resp(struct siw2_stream *s)
{
	const struct siw2_rdmap_hdr *h = &s->rx.hdr;
	struct siw2_rdmap_rx_ctx ctx = {};
	unsigned long flags;
	u32 cause;

	spin_lock_irqsave(&s->lock, flags);
	ctx.oldest = orq_oldest(s);
	ctx.oldest_id = s->orq_head;
	cause = siw2_rdmap_atomic_resp_check(&ctx, h->aresp.req_id);
	s->rx.aresp_idx = s->orq_head;
	if (!cause)
		s->orq_head++;
	spin_unlock_irqrestore(&s->lock, flags);
	if (cause)
		return cause;
	s->rx.aresp_orig = h->aresp.orig;
	return atomic_resp_deliver(s, 0);
}

/*
 * The Read or Atomic Request of ours that @t names (rdmap.c) completes
 * with the error the Terminate reports; the QP's move to ERR then flushes
 * the rest. Its completion shows at once if every work request before it
 * is done, else it is flushed with them.
 */
static void term_blame(struct siw2_stream *s, const struct siw2_term_info *t)
{
	struct siw2_term_blame b;
	struct siw2_orq_entry *o;
	struct siw2_wqe_rec *rec;
	unsigned long flags;
	bool found = false;
	u32 i;

	if (!siw2_rdmap_term_blame(t, &b))
		return;
	spin_lock_irqsave(&s->lock, flags);
	for (i = s->orq_head; i != s->orq_tail; i++) {
		o = siw2_orq_at(s, i);
		if (b.atomic ? o->rd.atomic && i == b.req_id :
		    !o->rd.atomic && o->rd.sink_stag == b.sink_stag &&
		    o->rd.sink_to == b.sink_to) {
			found = true;
			break;
		}
	}
	if (found) {
		rec = &s->recs[o->slot];
		rec->status = b.access ? IB_WC_REM_ACCESS_ERR :
					 IB_WC_REM_OP_ERR;
		rec->byte_len = 0;
		rec->done = true;
	}
	spin_unlock_irqrestore(&s->lock, flags);
	if (found)
		siw2_tx_retire(s);
}

/* @t: the Terminate as parsed, or NULL if it was malformed. */
static void got_terminate(struct siw2_stream *s,
			  const struct siw2_term_info *t)
{
	const struct siw2_term_info none = {};

	rx_enter(&s->rx, SIW2_RX_DEAD);
	if (t)
		term_blame(s, t);
	siw2_count(s->sdev, SIW2_CNT_TERM_RCVD);
	trace_siw2_term_rcvd(&s->sdev->ibdev, s->qp->base.qp_num,
			     t ? t : &none);
	/* RFC 5040 7.2: the stream is over; close it without answering. */
	siw2_qp_set_error(s->qp, SIW2_QP_CAUSE_TERM_RCVD);
	siw2_stream_close(s, -ECONNRESET, false);
	siw2_qp_event(s->qp, IB_EVENT_QP_FATAL);
}

/*
 * The one place rx->write changes: at the end of each Write segment, and
 * of each other message (@write false), which ends a Write's claim to
 * the Immediate Data that follows it but not a Write in progress.
 */
static void write_track(struct siw2_stream_rx *rx, bool write)
{
	if (write) {
		/* The length of this Write message, not of a run of Writes. */
		rx->write_len = (rx->write == SIW2_RX_WRITE_MID ?
				 rx->write_len : 0) + rx->seg_len;
		rx->write = rx->hdr.last ? SIW2_RX_WRITE_ENDED :
					   SIW2_RX_WRITE_MID;
	} else if (rx->write == SIW2_RX_WRITE_ENDED) {
		rx->write = SIW2_RX_WRITE_NONE;
	}
}

static void seg_end(struct siw2_stream *s, const struct siw2_ddp_rx_ev *ev)
{
	struct siw2_stream_rx *rx = &s->rx;
	u32 cause = 0;

	switch (rx->cls) {
	case SIW2_CLASS_WRITE:
		if (rx->mr)
			siw2_mr_put(rx->mr);
		rx->mr = NULL;
		write_track(rx, true);
		break;
	case SIW2_CLASS_READ_RESP:
		cause = end_read_resp(s);
		break;
	case SIW2_CLASS_SEND:
		cause = end_send(s, ev);
		break;
	case SIW2_CLASS_IMM:
		cause = end_imm(s, ev);
		break;
	case SIW2_CLASS_READ_REQ:
		if (ev->msg_done)
			cause = end_read_req(s);
		break;
	case SIW2_CLASS_ATOMIC_REQ:
		if (ev->msg_done)
			cause = end_atomic_req(s);
		break;
	case SIW2_CLASS_ATOMIC_RESP:
		if (ev->msg_done)
			cause = end_atomic_resp(s);
		break;
	default:
		break;
	}
	/* The rest of the FPDU's end goes on; the stream pauses after it. */
	if (cause == RX_FAULT_WAIT)
		cause = 0;
	if (cause) {
		rx_terminate(s, cause);
		return;
	}
	if (rx->cls != SIW2_CLASS_WRITE && ev->msg_done)
		write_track(rx, false);
	if (ev->msg_done || (rx->cls == SIW2_CLASS_WRITE && rx->hdr.last))
		rx_enter(rx, SIW2_RX_RUN);
}

static void ddp_event(struct siw2_stream *s, const struct siw2_ddp_rx_ev *ev)
{
	const struct siw2_ddp_seg *seg;
	u32 cause;

	switch (ev->type) {
	case SIW2_DDP_EV_HEADER:
		cause = seg_begin(s);
		if (cause)
			rx_terminate(s, cause);
		break;
	case SIW2_DDP_EV_PAYLOAD:
		place(s, ev);
		break;
	case SIW2_DDP_EV_SEG_END:
		seg_end(s, ev);
		break;
	case SIW2_DDP_EV_TERMINATE:
		got_terminate(s, ev->term);
		break;
	case SIW2_DDP_EV_ERROR:
		/* RFC 5040 5.4: a Terminate is never answered with one. */
		seg = siw2_ddp_rx_seg(&s->rx.ddp);
		if (seg->op && seg->op->cls == SIW2_CLASS_TERMINATE)
			got_terminate(s, NULL);
		else
			rx_terminate(s, ev->cause);
		break;
	default:
		break;
	}
}

/* RFC 5044 8: the MPA layer reports, then closes. */
static void mpa_failed(struct siw2_stream *s, enum siw2_mpa_err err)
{
	struct siw2_term_info t;

	rx_enter(&s->rx, SIW2_RX_DEAD);
	siw2_rdmap_term_prepare(&t, siw2_mpa_err_cause(err), NULL, 0, 0);
	siw2_stream_terminate(s, &t);
}

/* MPA verified an FPDU: it is delivered, or its Terminate sent. */
static void fpdu_end(struct siw2_stream *s)
{
	struct siw2_stream_rx *rx = &s->rx;
	struct siw2_ddp_rx_ev dev;

	if (rx->state == SIW2_RX_TERM_PENDING) {
		wait_clear(rx);
		rx_enter(rx, SIW2_RX_DEAD);
		siw2_stream_terminate(s, &rx->pend_term);
		return;
	}
	if (rx->state == SIW2_RX_FIRST_FPDU) {
		rx_enter(rx, SIW2_RX_FIRST_MSG);
		/* RFC 5044 7.1.2 rule 4: now we may send. */
		if (!test_and_set_bit(SIW2_S_TX_ALLOWED, &s->flags))
			siw2_tx_resume(s);
	}
	siw2_ddp_rx_end(&rx->ddp, &dev);
	ddp_event(s, &dev);
	if (rx->state == SIW2_RX_TERM_PENDING) {
		wait_clear(rx);
		rx_enter(rx, SIW2_RX_DEAD);
		siw2_stream_terminate(s, &rx->pend_term);
	}
}

/* The stream takes no more octets until the fault work is done. */
static void rx_pause(struct siw2_stream *s)
{
	s->rx.paused = true;
	siw2_count(s->sdev, SIW2_CNT_RX_FAULT);
	queue_work(siw2_fault_wq, &s->rx.fault_work);
}

/*
 * Feeds @len octets at @buf through MPA and DDP. Return: how many were
 * taken: all of them, unless the stream paused ("Faults" above).
 */
static size_t rx_bytes(struct siw2_stream *s, const u8 *buf, size_t len)
{
	struct siw2_stream_rx *rx = &s->rx;
	struct siw2_mpa_rx_ev mev;
	struct siw2_ddp_rx_ev dev;
	size_t n, left = len;

	while (left && !rx_dead(rx)) {
		n = siw2_mpa_rx(&rx->mpa, buf, left, &mev);
		buf += n;
		left -= n;
		switch (mev.type) {
		case SIW2_MPA_RX_DATA:
			siw2_ddp_rx_span(&rx->ddp, mev.data, mev.len,
					 mev.offset, mev.ulpdu_len);
			while (rx_live(rx) &&
			       siw2_ddp_rx_next(&rx->ddp, &dev) !=
			       SIW2_DDP_EV_NONE)
				ddp_event(s, &dev);
			/* Before the next siw2_mpa_rx() call, as it asks. */
			siw2_mpa_rx_fold_to(&rx->mpa, mev.data + mev.len);
			break;
		case SIW2_MPA_RX_END:
			/* Delivery waits for the bounced payload's place. */
			if (rx->wait == SIW2_RX_WAIT_PLACE && rx_live(rx)) {
				rx_pause(s);
				return len - left;
			}
			fpdu_end(s);
			if (rx->wait != SIW2_RX_WAIT_NONE && rx_live(rx)) {
				rx_pause(s);
				return len - left;
			}
			break;
		case SIW2_MPA_RX_ERROR:
			mpa_failed(s, mev.err);
			break;
		default:
			break;
		}
	}
	return len;
}

static int rx_actor(read_descriptor_t *desc, struct sk_buff *skb,
		    unsigned int off, size_t len)
{
	struct siw2_stream *s = desc->arg.data;
	struct skb_seq_state st;
	unsigned int got = 0, n;
	const u8 *data;

	/* Paused: the octets stay in the socket for the fault work. */
	if (s->rx.paused)
		return 0;
	if (rx_stopped(s))
		rx_enter(&s->rx, SIW2_RX_DEAD);
	if (rx_dead(&s->rx))
		return len;
	skb_prepare_seq_read(skb, off, off + len, &st);
	while ((n = skb_seq_read(got, &data, &st)) != 0) {
		got += rx_bytes(s, data, n);
		if (rx_dead(&s->rx) || s->rx.paused) {
			skb_abort_seq_read(&st);
			break;
		}
	}
	if (s->rx.paused)
		return got;
	/* Everything is consumed: after an error it is dropped. */
	return len;
}

/**
 * siw2_rx_data_ready() - process what the socket has queued
 * @s: the stream
 *
 * Called with the socket locked (from data_ready, or under lock_sock).
 */
void siw2_rx_data_ready(struct siw2_stream *s)
{
	read_descriptor_t desc = {
		.arg.data = s,
		.count = 1,
	};

	tcp_read_sock(s->sock->sk, &desc, rx_actor);
}

/* The close work, once no receive callback can run. */
void siw2_rx_release(struct siw2_stream *s)
{
	struct siw2_stream_rx *rx = &s->rx;

	rx_enter(&s->rx, SIW2_RX_DEAD);
	wait_clear(rx);
	rx->paused = false;
	/*
	 * RESET discards the QP's receives without completions; one from an
	 * SRQ goes back to its consumer as a flush all the same.
	 */
	if (rx->have_rqe && READ_ONCE(s->qp->discard_held) && !s->qp->srq)
		rx->have_rqe = false;
	if (rx->have_rqe)
		rqe_complete(s, IB_WC_WR_FLUSH_ERR, SIW2_WC_RECV, 0, 0, 0);
	put_mrs(rx);
}

/* Ends the stream after the FPDU's end passed: the Terminate goes now. */
static void rx_fail_now(struct siw2_stream *s, u32 cause)
{
	struct siw2_stream_rx *rx = &s->rx;

	rx_terminate(s, cause);
	if (rx->state == SIW2_RX_TERM_PENDING) {
		rx_enter(rx, SIW2_RX_DEAD);
		siw2_stream_terminate(s, &rx->pend_term);
	}
}

/*
 * Does what the stream waited for, @err being the fault's outcome.
 * Return: -EAGAIN with another miss noted, else 0 (done, or the stream
 * ended).
 */
static int wait_redo(struct siw2_stream *s, int err)
{
	struct siw2_stream_rx *rx = &s->rx;
	u32 cause;
	int ret;

	sock_owned_by_me(s->sock->sk);
	switch (rx->wait) {
	case SIW2_RX_WAIT_PLACE:
		ret = err ? err : bounce_place(s);
		if (ret == -EAGAIN)
			return ret;
		if (ret)
			bounce_fail(s, ret);
		wait_clear(rx);
		fpdu_end(s);
		return 0;
	case SIW2_RX_WAIT_READ_REQ:
	case SIW2_RX_WAIT_ATOMIC_REQ:
		/* The peer's Request names memory we have no mapping for. */
		if (err) {
			rx_fail_now(s, err == -EFAULT || err == -EPERM ?
				       SIW2_TERM_RDMAP_PROT_UNSPEC :
				       SIW2_TERM_RDMAP_CATASTROPHIC);
			return 0;
		}
		if (rx->wait == SIW2_RX_WAIT_ATOMIC_REQ) {
			cause = end_atomic_req(s);
			break;
		}
		rx->read_faulted = true;
		cause = end_read_req(s);
		break;
	case SIW2_RX_WAIT_ATOMIC_RESP:
		cause = atomic_resp_deliver(s, err);
		break;
	default:
		return 0;
	}
	if (cause == RX_FAULT_WAIT)
		return -EAGAIN;
	if (cause)
		rx_fail_now(s, cause);
	return 0;
}

/*
 * The fault work ("Faults" above): maps what the paused stream needs, in
 * process context and outside the socket lock, as a fault may take long;
 * then, under the socket lock, does what waited and reads on. A page
 * unmapped again before it was used, or a fault that timed out under
 * concurrent invalidations (-EBUSY), is tried once more, a bounded number
 * of times. Only this work touches rx while the stream is paused, so it
 * may read the miss before it takes the socket lock.
 */
static void rx_fault_work(struct work_struct *work)
{
	struct siw2_stream *s = container_of(work, struct siw2_stream,
					     rx.fault_work);
	struct siw2_stream_rx *rx = &s->rx;
	struct sock *sk = s->sock->sk;
	int tries = SIW2_ODP_TRIES;
	int err, ret;

	for (;;) {
		err = 0;
		if (rx->miss_mr && !rx_stopped(s))
			err = siw2_mr_fault(rx->miss_mr, rx->miss_addr,
					    rx->miss_len, rx->miss_write);
		/* Best effort: what the access needs is mapped. */
		if (!err && rx->miss_mr && rx->miss_ahead > rx->miss_len &&
		    !rx_stopped(s))
			siw2_mr_fault(rx->miss_mr,
				      rx->miss_addr + rx->miss_len,
				      rx->miss_ahead - rx->miss_len,
				      rx->miss_write);
		lock_sock(sk);
		if (rx_dead(rx) || rx_stopped(s)) {
			/* What waited is dropped with the rest. */
			rx_enter(rx, SIW2_RX_DEAD);
			break;
		}
		if (err == -EBUSY)
			err = -EAGAIN;
		ret = err == -EAGAIN ? err : wait_redo(s, err);
		if (ret != -EAGAIN)
			break;
		if (!tries--) {
			wait_redo(s, -EBUSY);
			break;
		}
		release_sock(sk);
	}
	wait_clear(rx);
	rx->paused = false;
	siw2_rx_data_ready(s);
	release_sock(sk);
}

/* At the stream's start. */
void siw2_rx_init(struct siw2_stream *s)
{
	INIT_WORK(&s->rx.fault_work, rx_fault_work);
}

/**
 * siw2_rx_stop() - the fault work is done, for good
 * @s: the stream, whose socket callbacks are gone (the close work)
 *
 * A stream paused while its QP is still in RTS and the peer's FIN arrived
 * (behind FPDUs TCP has acknowledged, which are all the peer will send)
 * finishes them first: the fault work reads on from the socket by itself
 * and may pause again. Any other close drops them. What is left
 * is then read and dropped, as it would have been without the pause, so
 * that the close does not find unread data (which would make TCP reset
 * the connection). What the work held goes in siw2_rx_release().
 *
 * Whether the stream is paused is read under the socket lock only: the
 * fault work clears the flag under it and may set it again before it
 * lets go, so a look without the lock may see the stream running while
 * the work is about to queue itself once more, and its FPDUs would be
 * dropped with the cancelled work.
 */
void siw2_rx_stop(struct siw2_stream *s)
{
	struct siw2_stream_rx *rx = &s->rx;
	struct sock *sk = s->sock->sk;
	bool finish;

	do {
		/* The work that pausing queued is done, ... */
		flush_work(&rx->fault_work);
		lock_sock(sk);
		/* ... so a stream paused again has queued it again. */
		finish = rx->paused && !rx_stopped(s) &&
			 (sk->sk_shutdown & RCV_SHUTDOWN);
		release_sock(sk);
	} while (finish);
	cancel_work_sync(&rx->fault_work);
	lock_sock(sk);
	if (rx->paused) {
		rx_enter(rx, SIW2_RX_DEAD);
		rx->paused = false;
		siw2_rx_data_ready(s);
	}
	release_sock(sk);
}
