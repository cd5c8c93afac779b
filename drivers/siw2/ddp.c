// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * DDP (RFC 5041), pure code: segmentation, the receive path between MPA's
 * ULPDU spans and the caller's placement, and the reassembly books.
 *
 * Receive state is one struct per stream, owned and serialized by the
 * caller (its socket receive path). Header octets are gathered in the
 * struct; payload is never copied, only pointed at in the caller's input.
 * Every check a peer can fail yields a Terminate cause, reported once as
 * an event; afterwards the stream silently drops what it receives
 * (RFC 5041 7.1).
 */
#include <linux/kernel.h>
#include <linux/string.h>
#include <linux/errno.h>
#include <linux/minmax.h>
#include "ddp.h"

enum rx_state {
	RX_HDR,		/* gathering header octets */
	RX_BODY,	/* payload (or a Terminate body) */
	RX_WAIT_END,	/* all octets seen, MPA's end not yet */
	RX_ERROR,	/* an error is waiting to be reported */
	RX_DEAD,	/* error reported: drop everything */
};

#define CTRL_LEN	2

/* ---- Reassembly books ---- */

/**
 * siw2_ddp_reasm_empty() - has no segment of the message arrived yet?
 * @m: the books
 *
 * A segment without payload counts: the next one of the same message is
 * not its first, and does not take a second receive buffer.
 */
bool siw2_ddp_reasm_empty(const struct siw2_ddp_reasm *m)
{
	return !m->seen;
}

/**
 * siw2_ddp_reasm_done() - is the message complete?
 * @m: the books
 *
 * RFC 5041 5.4: the Last segment and every other segment were placed.
 */
bool siw2_ddp_reasm_done(const struct siw2_ddp_reasm *m)
{
	if (!m->last_seen)
		return false;
	if (!m->total)
		return true;
	return m->nr == 1 && m->r[0].start == 0 && m->r[0].end == m->total;
}

/* Range index bounds of what [mo, end) overlaps or touches. */
static void reasm_find(const struct siw2_ddp_reasm *m, u32 mo, u32 end,
		       unsigned int *first, unsigned int *last)
{
	unsigned int i = 0, j = m->nr;

	while (i < m->nr && m->r[i].end < mo)
		i++;
	while (j > 0 && m->r[j - 1].start > end)
		j--;
	*first = i;
	*last = j;	/* ranges [i, j) merge; none if j <= i */
}

static u32 reasm_check(const struct siw2_ddp_reasm *m, u32 mo, u32 len,
		       bool last)
{
	u64 end = (u64)mo + len;
	unsigned int i, j;

	/* RFC 5041 5.2: a ULP message is shorter than 2^32 octets. */
	if (end > U32_MAX)
		return SIW2_TERM_DDP_U_TOO_LONG;
	/*
	 * RFC 5041 4.1: the Last segment carries the highest MO, so no
	 * octet lies beyond its end and there is only one end.
	 */
	if (m->last_seen && (end > m->total || (last && end != m->total)))
		return SIW2_TERM_DDP_U_INVALID_MO;
	if (last && m->nr && m->r[m->nr - 1].end > end)
		return SIW2_TERM_DDP_U_INVALID_MO;
	if (!len)
		return 0;
	reasm_find(m, mo, end, &i, &j);
	/* Too fragmented to track: a local resource limit. */
	if (j <= i && m->nr == SIW2_DDP_REASM_RANGES)
		return SIW2_TERM_DDP_CATASTROPHIC;
	return 0;
}

/**
 * siw2_ddp_reasm_add() - record a placed segment
 * @m: the books
 * @mo: the segment's message offset
 * @len: its payload octets
 * @last: it had the Last flag
 *
 * Segments may come in any order and overlap (RFC 5041 5.3 allows placing
 * an octet more than once). @m is unchanged when an error is returned.
 *
 * Return: 0, or the Terminate cause.
 */
u32 siw2_ddp_reasm_add(struct siw2_ddp_reasm *m, u32 mo, u32 len, bool last)
{
	u32 end = mo + len;
	unsigned int i, j;
	u32 cause;

	cause = reasm_check(m, mo, len, last);
	if (cause)
		return cause;
	m->seen = true;
	if (last) {
		m->last_seen = true;
		m->total = end;
	}
	if (!len)
		return 0;
	reasm_find(m, mo, end, &i, &j);
	if (j <= i) {
		memmove(&m->r[i + 1], &m->r[i], (m->nr - i) * sizeof(m->r[0]));
		m->r[i].start = mo;
		m->r[i].end = end;
		m->nr++;
		return 0;
	}
	m->r[i].start = min(m->r[i].start, mo);
	m->r[i].end = max(m->r[j - 1].end, end);
	memmove(&m->r[i + 1], &m->r[j], (m->nr - j) * sizeof(m->r[0]));
	m->nr -= j - i - 1;
	return 0;
}

/* ---- Placement checks ---- */

/**
 * siw2_ddp_check_tagged() - RFC 5041 7.1 checks of a tagged segment
 * @v: what the caller found for the segment's STag
 * @to: the segment's Tagged Offset
 * @len: its payload octets
 *
 * Access rights are RDMAP's to report (RFC 5040 4.8); the rest are DDP
 * tagged buffer errors. A zero-length segment is not checked (RFC 5041
 * 5.2). A TO whose sum with the length wraps is reported as such rather
 * than as a bounds violation, which it also is.
 *
 * Return: 0, or the Terminate cause.
 */
u32 siw2_ddp_check_tagged(const struct siw2_stag_view *v, u64 to, u32 len)
{
	if (!len)
		return 0;
	if (!v->valid)
		return SIW2_TERM_DDP_T_INVALID_STAG;
	if (!v->assoc)
		return SIW2_TERM_DDP_T_STAG_NOT_ASSOC;
	if (!v->access)
		return SIW2_TERM_RDMAP_ACCESS;
	if (len - 1 > U64_MAX - to)
		return SIW2_TERM_DDP_T_TO_WRAP;
	if (!siw2_range_ok(to, len, v->base, v->len))
		return SIW2_TERM_DDP_T_BASE_BOUNDS;
	return 0;
}

/**
 * siw2_ddp_check_untagged() - RFC 5041 7.1 buffer checks of an untagged
 * segment
 * @mo: the segment's message offset
 * @len: its payload octets
 * @have_buf: a buffer is associated with its queue and MSN
 * @buf_len: that buffer's length
 *
 * Only a non-zero-length segment is checked against the buffer (7.1),
 * but even an empty message needs a buffer to complete into.
 *
 * Return: 0, or the Terminate cause.
 */
u32 siw2_ddp_check_untagged(u32 mo, u32 len, bool have_buf, u64 buf_len)
{
	if (!have_buf)
		return SIW2_TERM_DDP_U_MSN_NOBUF;
	if (!len)
		return 0;
	if (mo >= buf_len)
		return SIW2_TERM_DDP_U_INVALID_MO;
	if ((u64)mo + len > buf_len)
		return SIW2_TERM_DDP_U_TOO_LONG;
	return 0;
}

/* ---- Transmit ---- */

/**
 * siw2_ddp_tx_init() - prepare to segment one message
 * @tx: segmentation state
 * @m: header of the message's first segment (TO or MO of its first octet;
 *	the Last flag is set by the segmenter)
 * @msg_len: ULP payload octets of the message
 *
 * Return: 0, or -EINVAL for a reserved opcode or payload on an opcode that
 * carries none.
 */
int siw2_ddp_tx_init(struct siw2_ddp_tx *tx, const struct siw2_rdmap_hdr *m,
		     u32 msg_len)
{
	const struct siw2_rdmap_op_info *op = siw2_rdmap_op(m->opcode);

	if (!op || (!op->payload && msg_len))
		return -EINVAL;
	/* tx->hdr is written whole, per segment, by siw2_rdmap_build(). */
	tx->m = *m;
	tx->hdr_len = op->hdr_len;
	tx->msg_len = msg_len;
	tx->off = 0;
	tx->tagged = op->tagged;
	tx->done = false;
	return 0;
}

/**
 * siw2_ddp_tx_next() - the next segment of the message
 * @tx: segmentation state
 * @mulpdu: the LLP's current MULPDU; may differ from call to call (RFC
 *	5041 3 item 2)
 * @seg: filled with the segment
 *
 * RFC 5041 5.2: each segment, header included, is at most MULPDU octets;
 * a tagged segment's TO is the message's first TO plus the offset, an
 * untagged segment's MO is the offset; a zero-length message is one
 * segment; only the final segment has the Last flag (4.1).
 *
 * Return: 1 with @seg filled, 0 when the message is done, -EINVAL if
 * @mulpdu cannot hold the header and one payload octet.
 */
int siw2_ddp_tx_next(struct siw2_ddp_tx *tx, u32 mulpdu,
		     struct siw2_ddp_tx_seg *seg)
{
	struct siw2_rdmap_hdr m = tx->m;
	u32 room, len;

	if (tx->done)
		return 0;
	if (mulpdu < tx->hdr_len ||
	    (mulpdu == tx->hdr_len && tx->off < tx->msg_len))
		return -EINVAL;
	room = mulpdu - tx->hdr_len;
	len = min(tx->msg_len - tx->off, room);

	m.last = tx->off + len == tx->msg_len;
	if (tx->tagged)
		m.to = tx->m.to + tx->off;
	else
		m.mo = tx->m.mo + tx->off;
	siw2_rdmap_build(&tx->hdr, &m);

	seg->hdr = tx->hdr.raw;
	seg->hdr_len = tx->hdr_len;
	seg->off = tx->off;
	seg->len = len;
	seg->last = m.last;
	tx->off += len;
	tx->done = m.last;
	return 1;
}

/* ---- Receive ---- */

/**
 * siw2_ddp_rx_init() - start a stream's receive side
 * @rx: receive state
 * @ext: accept the RFC 7306 opcodes
 *
 * RFC 5041 4.3: the first MSN of every queue is 1.
 */
void siw2_ddp_rx_init(struct siw2_ddp_rx *rx, bool ext)
{
	unsigned int qn;

	memset(rx, 0, sizeof(*rx));
	rx->ext = ext;
	rx->state = RX_HDR;
	rx->need = CTRL_LEN;
	for (qn = 0; qn < SIW2_QN_COUNT; qn++)
		rx->msn[qn] = 1;
}

static void rx_error(struct siw2_ddp_rx *rx, u32 cause)
{
	rx->cause = cause;
	rx->state = RX_ERROR;
}

/**
 * siw2_ddp_rx_fail() - the caller's own checks of the segment failed
 * @rx: receive state
 * @cause: the Terminate cause the caller reports itself
 *
 * No event follows; the stream drops everything from now on.
 */
void siw2_ddp_rx_fail(struct siw2_ddp_rx *rx, u32 cause)
{
	rx->cause = cause;
	rx->state = RX_DEAD;
}

/**
 * siw2_ddp_rx_span() - hand over the next span of a ULPDU
 * @rx: receive state
 * @data: the span, inside the caller's input
 * @len: octets at @data
 * @offset: offset of @data[0] in the ULPDU
 * @ulpdu_len: length of the whole ULPDU, i.e. the DDP segment length
 *
 * Spans come as MPA delivers them: in order, the first at offset 0. Drain
 * the span with siw2_ddp_rx_next() before handing over the next one.
 */
void siw2_ddp_rx_span(struct siw2_ddp_rx *rx, const u8 *data, u32 len,
		      u32 offset, u32 ulpdu_len)
{
	rx->in = data;
	rx->in_len = len;
	if (rx->state == RX_ERROR || rx->state == RX_DEAD)
		return;
	if (!offset) {
		if (rx->state != RX_HDR || rx->pos)
			goto llp_broken;
		memset(&rx->seg, 0, sizeof(rx->seg));
		rx->hdr_have = 0;
		rx->pend = 0;
		rx->seg_len = ulpdu_len;
		rx->need = CTRL_LEN;
		if (ulpdu_len < CTRL_LEN)
			rx_error(rx, SIW2_TERM_DDP_CATASTROPHIC);
		return;
	}
	if (offset == rx->pos && ulpdu_len == rx->seg_len)
		return;
llp_broken:
	/* MPA broke its promise of ordered spans: a local failure. */
	rx_error(rx, SIW2_TERM_DDP_CATASTROPHIC);
}

static u32 ddp_hdr_len(bool tagged)
{
	return tagged ? sizeof(struct siw2_ddp_tagged_hdr) :
			sizeof(struct siw2_ddp_untagged_hdr);
}

/* The control octets are in: learn the header length. */
static u32 rx_ctrl(struct siw2_ddp_rx *rx)
{
	const struct siw2_rdmap_op_info *op;
	u32 cause, len;

	cause = siw2_rdmap_ctrl_check(rx->hdr.tagged.ddp_ctrl,
				      rx->hdr.tagged.rdmap_ctrl, rx->ext, &op);
	if (cause == SIW2_TERM_RDMAP_VERSION ||
	    cause == SIW2_TERM_RDMAP_OPCODE) {
		/*
		 * The DDP header is sound: gather it before reporting, so
		 * that the Terminate can carry a copy (RFC 5040 4.8).
		 */
		len = ddp_hdr_len(rx->hdr.tagged.ddp_ctrl & SIW2_DDP_T);
		if (rx->seg_len >= len) {
			rx->pend = cause;
			rx->need = len;
			return 0;
		}
	}
	if (cause)
		return cause;
	if (rx->seg_len < op->hdr_len)
		return rx->seg_len < ddp_hdr_len(op->tagged) ?
			SIW2_TERM_DDP_CATASTROPHIC : SIW2_TERM_RDMAP_OP_UNSPEC;
	rx->seg.op = op;
	rx->need = op->hdr_len;
	return 0;
}

/* The whole header is in: the checks that need no memory object. */
static u32 rx_header(struct siw2_ddp_rx *rx)
{
	struct siw2_ddp_seg *seg = &rx->seg;
	const struct siw2_rdmap_op_info *op = seg->op;
	struct siw2_rdmap_hdr *h = &seg->hdr;
	u32 cause;

	cause = siw2_rdmap_parse(&rx->hdr, rx->need, rx->ext, h);
	if (cause)
		return cause;
	seg->seg_len = rx->seg_len;
	seg->len = rx->seg_len - op->hdr_len;
	if (op->tagged)
		return 0;

	/* RFC 5041 7.1 item 1; RFC 5040 4.1 fixes each opcode's queue. */
	if (h->qn >= SIW2_QN_COUNT || h->qn != op->qn)
		return SIW2_TERM_DDP_U_INVALID_QN;
	/*
	 * RFC 5041 7.1 item 5: over an in-order LLP the only legal MSN is
	 * the one of the oldest message not yet complete.
	 */
	if (h->msn != rx->msn[h->qn])
		return SIW2_TERM_DDP_U_MSN_RANGE;
	/*
	 * Messages without ULP payload are one segment of exactly their
	 * header (RFC 5040 4.3, RFC 7306); a Terminate adds its body. More
	 * is more than the queue's buffer holds.
	 */
	if (!op->payload) {
		if (h->mo)
			return SIW2_TERM_DDP_U_INVALID_MO;
		if (!h->last ||
		    (seg->len && op->cls != SIW2_CLASS_TERMINATE))
			return SIW2_TERM_DDP_U_TOO_LONG;
	}
	cause = reasm_check(&rx->books[h->qn], h->mo,
			    op->payload ? seg->len : 0, h->last);
	if (cause)
		return cause;
	seg->first = siw2_ddp_reasm_empty(&rx->books[h->qn]);
	return 0;
}

static void rx_take(struct siw2_ddp_rx *rx, u32 n)
{
	rx->in += n;
	rx->in_len -= n;
	rx->pos += n;
}

/**
 * siw2_ddp_rx_next() - the next event of the current span
 * @rx: receive state
 * @ev: filled with the event
 *
 * Return: @ev->type; SIW2_DDP_EV_NONE once the span is used up.
 */
enum siw2_ddp_ev_type siw2_ddp_rx_next(struct siw2_ddp_rx *rx,
				       struct siw2_ddp_rx_ev *ev)
{
	u32 n, cause, keep;

	memset(ev, 0, sizeof(*ev));
	for (;;) {
		switch (rx->state) {
		case RX_HDR:
			if (!rx->in_len)
				return SIW2_DDP_EV_NONE;
			n = min(rx->in_len, rx->need - rx->pos);
			memcpy(rx->hdr.raw + rx->pos, rx->in, n);
			rx_take(rx, n);
			rx->hdr_have = rx->pos;
			if (rx->pos < rx->need)
				break;
			if (rx->need == CTRL_LEN) {
				cause = rx_ctrl(rx);
				if (cause)
					rx_error(rx, cause);
				break;
			}
			if (rx->pend) {
				rx_error(rx, rx->pend);
				break;
			}
			cause = rx_header(rx);
			if (cause) {
				rx_error(rx, cause);
				break;
			}
			rx->state = RX_BODY;
			ev->type = SIW2_DDP_EV_HEADER;
			return ev->type;
		case RX_BODY:
			if (rx->pos == rx->seg_len) {
				rx->state = RX_WAIT_END;
				break;
			}
			if (!rx->in_len)
				return SIW2_DDP_EV_NONE;
			n = min(rx->in_len, rx->seg_len - rx->pos);
			if (rx->seg.op->cls == SIW2_CLASS_TERMINATE) {
				keep = rx->pos - rx->need;
				if (keep < sizeof(rx->term_body))
					memcpy(rx->term_body + keep, rx->in,
					       min_t(u32, n,
						     sizeof(rx->term_body) -
						     keep));
				rx_take(rx, n);
				break;
			}
			ev->type = SIW2_DDP_EV_PAYLOAD;
			ev->data = rx->in;
			ev->len = n;
			ev->off = rx->pos - rx->need;
			rx_take(rx, n);
			return ev->type;
		case RX_WAIT_END:
			if (rx->in_len)
				rx_error(rx, SIW2_TERM_DDP_CATASTROPHIC);
			else
				return SIW2_DDP_EV_NONE;
			break;
		case RX_ERROR:
			rx->state = RX_DEAD;
			ev->type = SIW2_DDP_EV_ERROR;
			ev->cause = rx->cause;
			return ev->type;
		default:
			rx->in_len = 0;
			return SIW2_DDP_EV_NONE;
		}
	}
}

/* Ready for the next segment; the last one's header stays readable. */
static void rx_reset(struct siw2_ddp_rx *rx)
{
	rx->state = RX_HDR;
	rx->pos = 0;
	rx->need = CTRL_LEN;
}

/* The segment is verified: a Terminate's body is complete. */
static void rx_terminate(struct siw2_ddp_rx *rx, struct siw2_ddp_rx_ev *ev)
{
	u32 len = min_t(u32, rx->seg.len, sizeof(rx->term_body));

	ev->type = SIW2_DDP_EV_TERMINATE;
	ev->term_bad = siw2_rdmap_term_parse(rx->seg.hdr.term_ctrl,
					     rx->term_body, len, &rx->term) != 0;
	ev->term = &rx->term;
}

/**
 * siw2_ddp_rx_end() - MPA verified the end of the current segment
 * @rx: receive state
 * @ev: filled with the event
 *
 * Only now may the segment be acted upon (RFC 5044 4.4 verifies the CRC at
 * the end) and its message be delivered (RFC 5041 5.4).
 *
 * Return: @ev->type: SEG_END, TERMINATE, ERROR, or NONE after an error.
 */
enum siw2_ddp_ev_type siw2_ddp_rx_end(struct siw2_ddp_rx *rx,
				      struct siw2_ddp_rx_ev *ev)
{
	struct siw2_ddp_seg *seg = &rx->seg;
	struct siw2_ddp_reasm *books;
	u32 cause;

	memset(ev, 0, sizeof(*ev));
	if (rx->state == RX_BODY && rx->pos == rx->seg_len)
		rx->state = RX_WAIT_END;
	if (rx->state != RX_WAIT_END) {
		if (rx->state != RX_DEAD && rx->state != RX_ERROR)
			rx_error(rx, SIW2_TERM_DDP_CATASTROPHIC);
		return siw2_ddp_rx_next(rx, ev);
	}
	if (seg->op->tagged) {
		rx_reset(rx);
		ev->type = SIW2_DDP_EV_SEG_END;
		ev->msg_done = seg->hdr.last;
		return ev->type;
	}
	books = &rx->books[seg->hdr.qn];
	cause = siw2_ddp_reasm_add(books, seg->hdr.mo,
				   seg->op->payload ? seg->len : 0,
				   seg->hdr.last);
	/*
	 * Over an in-order LLP nothing can fill a hole once the Last
	 * segment is in (RFC 5041 4.1 sends it last): the message would
	 * never complete.
	 */
	if (!cause && books->last_seen && !siw2_ddp_reasm_done(books))
		cause = SIW2_TERM_DDP_U_INVALID_MO;
	if (cause) {
		rx_error(rx, cause);
		return siw2_ddp_rx_next(rx, ev);
	}
	rx_reset(rx);
	if (siw2_ddp_reasm_done(books)) {
		ev->msg_done = true;
		ev->msg_len = books->total;
		rx->msn[seg->hdr.qn]++;
		siw2_ddp_reasm_init(books);
	}
	if (seg->op->cls == SIW2_CLASS_TERMINATE) {
		rx_terminate(rx, ev);
		return ev->type;
	}
	ev->type = SIW2_DDP_EV_SEG_END;
	return ev->type;
}

/**
 * siw2_ddp_rx_term_prepare() - the Terminate body for an error of the
 * current segment
 * @rx: receive state
 * @t: filled (siw2_rdmap_term_prepare())
 * @cause: the Terminate cause, from an ERROR event or the caller's checks
 *
 * The header octets gathered so far are copied as RFC 5040 4.8 asks;
 * their layout is known only once the control octets passed.
 */
void siw2_ddp_rx_term_prepare(const struct siw2_ddp_rx *rx,
			      struct siw2_term_info *t, u32 cause)
{
	siw2_rdmap_term_prepare(t, cause, rx->hdr.raw, rx->hdr_have,
				rx->seg_len);
}
