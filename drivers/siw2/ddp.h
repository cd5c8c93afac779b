/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * DDP (RFC 5041) as pure code: segmentation of a message into segments no
 * larger than the LLP's MULPDU, the receive path that turns the ULPDU spans
 * of MPA into checked segment headers and payload spans, and the books that
 * say which octets of an untagged message have been placed.
 *
 * Receive, as the engine drives it beside MPA (see mpa.h):
 *
 *	n = siw2_mpa_rx(mrx, buf, len, &mev);
 *	if (mev.type == SIW2_MPA_RX_DATA) {
 *		siw2_ddp_rx_span(drx, mev.data, mev.len, mev.offset,
 *				 mev.ulpdu_len);
 *		while (siw2_ddp_rx_next(drx, &ev) != SIW2_DDP_EV_NONE)
 *			handle(&ev);
 *	} else if (mev.type == SIW2_MPA_RX_END) {
 *		siw2_ddp_rx_end(drx, &ev);
 *		handle(&ev);
 *	}
 *
 * SIW2_DDP_EV_HEADER: the segment's header is complete and passed every
 * check that needs no memory object; siw2_ddp_rx_seg() describes it. The
 * caller now makes the checks that need its objects, before placing a
 * single octet (RFC 5041 7.1): siw2_ddp_rx_check_untagged() with the
 * receive buffer, siw2_ddp_check_tagged() with the STag it looked up, or
 * the RDMAP checks of rdmap.h; on failure it calls siw2_ddp_rx_fail().
 * SIW2_DDP_EV_PAYLOAD: octets to place, pointing into the caller's input.
 * SIW2_DDP_EV_SEG_END (at MPA's verified end of the FPDU): the segment may
 * now be acted upon; msg_done says its message is complete and may be
 * delivered. SIW2_DDP_EV_TERMINATE: a Terminate arrived, parsed.
 * SIW2_DDP_EV_ERROR: reported once; cause is the Terminate to send, and
 * siw2_ddp_rx_term_prepare() fills the Terminate's copy of the offending
 * header. The stream then drops everything it receives (RFC 5041 7.1).
 */
#ifndef SIW2_DDP_H
#define SIW2_DDP_H

#include <linux/string.h>
#include <linux/types.h>
#include "wire.h"
#include "rdmap.h"

/* Disjoint octet ranges the books can hold for one message. */
#define SIW2_DDP_REASM_RANGES 8

/**
 * struct siw2_ddp_reasm - placed octets of one untagged message
 * @total: message length, known once the Last segment was placed
 * @last_seen: the Last segment was placed
 * @nr: ranges in use
 * @r: sorted, disjoint, non-adjacent [start, end) ranges
 *
 * Placement may happen out of order and more than once (RFC 5041 5.3); the
 * message is complete when its Last segment was placed and no octet below
 * @total is missing. Over TCP segments arrive in order and @nr stays 1.
 */
struct siw2_ddp_reasm {
	u32 total;
	bool seen;
	bool last_seen;
	u8 nr;
	struct {
		u32 start;
		u32 end;
	} r[SIW2_DDP_REASM_RANGES];
};

static inline void siw2_ddp_reasm_init(struct siw2_ddp_reasm *m)
{
	memset(m, 0, sizeof(*m));
}

u32 siw2_ddp_reasm_add(struct siw2_ddp_reasm *m, u32 mo, u32 len, bool last);
bool siw2_ddp_reasm_done(const struct siw2_ddp_reasm *m);
bool siw2_ddp_reasm_empty(const struct siw2_ddp_reasm *m);

u32 siw2_ddp_check_tagged(const struct siw2_stag_view *v, u64 to, u32 len);
u32 siw2_ddp_check_untagged(u32 mo, u32 len, bool have_buf, u64 buf_len);

/* ---- Transmit ---- */

/**
 * struct siw2_ddp_tx - segmentation of one message
 *
 * Fields are private to ddp.c. The header of the segment last returned
 * lives in @hdr and stays valid until the next call.
 */
struct siw2_ddp_tx {
	union siw2_iwarp_hdr hdr;
	struct siw2_rdmap_hdr m;
	u32 hdr_len;
	u32 msg_len;
	u32 off;
	bool tagged;
	bool done;
};

/**
 * struct siw2_ddp_tx_seg - one segment to send
 * @hdr: DDP + RDMAP header octets, inside the tx struct
 * @hdr_len: octets at @hdr
 * @off: message offset of the segment's first payload octet
 * @len: payload octets, which the caller sends from its buffers
 * @last: this is the message's Last segment
 */
struct siw2_ddp_tx_seg {
	const u8 *hdr;
	u32 hdr_len;
	u32 off;
	u32 len;
	bool last;
};

int siw2_ddp_tx_init(struct siw2_ddp_tx *tx, const struct siw2_rdmap_hdr *m,
		     u32 msg_len);
int siw2_ddp_tx_next(struct siw2_ddp_tx *tx, u32 mulpdu,
		     struct siw2_ddp_tx_seg *seg);

/* ---- Receive ---- */

enum siw2_ddp_ev_type {
	SIW2_DDP_EV_NONE = 0,
	SIW2_DDP_EV_HEADER,
	SIW2_DDP_EV_PAYLOAD,
	SIW2_DDP_EV_SEG_END,
	SIW2_DDP_EV_TERMINATE,
	SIW2_DDP_EV_ERROR,
};

/**
 * struct siw2_ddp_rx_ev - one receive event
 * @type: what happened
 * @cause: ERROR: the Terminate cause
 * @data: PAYLOAD: octets to place, inside the caller's input
 * @len: PAYLOAD: octets at @data
 * @off: PAYLOAD: offset of @data[0] in the segment's payload
 * @msg_done: SEG_END: the segment completed its message
 * @msg_len: SEG_END with @msg_done, untagged: the ULP message length
 *	(RFC 5041 5.4)
 * @term: TERMINATE: the Terminate received
 * @term_bad: TERMINATE: it was malformed; @term->cause is still valid
 */
struct siw2_ddp_rx_ev {
	enum siw2_ddp_ev_type type;
	u32 cause;
	const u8 *data;
	u32 len;
	u32 off;
	bool msg_done;
	u32 msg_len;
	const struct siw2_term_info *term;
	bool term_bad;
};

/**
 * struct siw2_ddp_seg - the segment being received
 * @hdr: its header fields
 * @op: its opcode's properties
 * @seg_len: DDP segment length (header and payload)
 * @len: ULP payload octets (for a Terminate, its body)
 * @first: untagged: the first segment placed for its message
 */
struct siw2_ddp_seg {
	struct siw2_rdmap_hdr hdr;
	const struct siw2_rdmap_op_info *op;
	u32 seg_len;
	u32 len;
	bool first;
};

/*
 * Receive state of one DDP stream, owned and serialized by the caller.
 * Fields are private to ddp.c.
 */
struct siw2_ddp_rx {
	bool ext;
	u8 state;
	u32 cause;
	u32 msn[SIW2_QN_COUNT];
	struct siw2_ddp_reasm books[SIW2_QN_COUNT];
	/* The current segment. */
	u32 seg_len;
	u32 pos;
	u32 need;
	u32 hdr_have;
	u32 pend;
	union siw2_iwarp_hdr hdr;
	struct siw2_ddp_seg seg;
	u8 term_body[SIW2_TERM_BODY_MAX];
	struct siw2_term_info term;
	/* The current input span. */
	const u8 *in;
	u32 in_len;
};

void siw2_ddp_rx_init(struct siw2_ddp_rx *rx, bool ext);
void siw2_ddp_rx_span(struct siw2_ddp_rx *rx, const u8 *data, u32 len,
		      u32 offset, u32 ulpdu_len);
enum siw2_ddp_ev_type siw2_ddp_rx_next(struct siw2_ddp_rx *rx,
				       struct siw2_ddp_rx_ev *ev);
enum siw2_ddp_ev_type siw2_ddp_rx_end(struct siw2_ddp_rx *rx,
				      struct siw2_ddp_rx_ev *ev);
void siw2_ddp_rx_term_prepare(const struct siw2_ddp_rx *rx,
			      struct siw2_term_info *t, u32 cause);
void siw2_ddp_rx_fail(struct siw2_ddp_rx *rx, u32 cause);

/**
 * siw2_ddp_rx_seg() - the segment whose header was last reported
 * @rx: receive state
 */
static inline const struct siw2_ddp_seg *
siw2_ddp_rx_seg(const struct siw2_ddp_rx *rx)
{
	return &rx->seg;
}

/**
 * siw2_ddp_rx_check_untagged() - buffer checks of the current segment
 * @rx: receive state, after SIW2_DDP_EV_HEADER of an untagged segment
 * @have_buf: the caller has the buffer of the segment's queue and MSN
 *	(a receive WQE for queue 0, an IRD slot for queue 1, ...)
 * @buf_len: its length in octets
 *
 * Return: 0, or the Terminate cause (siw2_ddp_check_untagged()).
 */
static inline u32 siw2_ddp_rx_check_untagged(const struct siw2_ddp_rx *rx,
					     bool have_buf, u64 buf_len)
{
	return siw2_ddp_check_untagged(rx->seg.hdr.mo, rx->seg.len, have_buf,
				       buf_len);
}

#endif /* SIW2_DDP_H */
