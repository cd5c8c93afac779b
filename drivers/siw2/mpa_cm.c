// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * MPA connection setup (RFC 5044 7.1, RFC 6581) as pure code: the
 * Request and Reply frames and the state machine both roles walk through
 * before Full Operation, fed octets by cm.c (and by KUnit and the
 * fuzzer); mpa.c is the framing that follows. mpa.h has the interfaces.
 */
#include <linux/kernel.h>
#include <linux/errno.h>
#include <linux/minmax.h>
#include <linux/string.h>
#include <asm/byteorder.h>

#include "mpa.h"

enum {
	CM_INIT,	/* initiator: Request not built yet */
	CM_WAIT_REQ,	/* responder: receiving the Request */
	CM_WAIT_REP,	/* initiator: receiving the Reply */
	CM_REQ_RCVD,	/* responder: the ULP decides */
	CM_WAIT_FPDU,	/* responder: Reply sent, nothing may be sent yet */
	CM_ESTABLISHED,
	CM_REJECTED,
	CM_FAILED,
};

static enum siw2_mpa_cm_action cm_fail(struct siw2_mpa_cm *cm,
				       enum siw2_mpa_err err)
{
	cm->err = err;
	cm->state = CM_FAILED;
	return SIW2_MPA_CM_ERROR;
}

static u8 v2_rtr_mask(u16 ird, u16 ord)
{
	u8 rtr = 0;

	if (ird & SIW2_MPA_V2_B)
		rtr |= SIW2_MPA_RTR_SEND;
	if (ord & SIW2_MPA_V2_C)
		rtr |= SIW2_MPA_RTR_WRITE;
	if (ord & SIW2_MPA_V2_D)
		rtr |= SIW2_MPA_RTR_READ;
	return rtr;
}

static struct siw2_mpa_v2 v2_put(u16 ird, u16 ord, bool p2p, u8 rtr)
{
	struct siw2_mpa_v2 v2;

	/* 9.2: without A, B, C and D are zero. */
	if (p2p) {
		ird |= SIW2_MPA_V2_A;
		if (rtr & SIW2_MPA_RTR_SEND)
			ird |= SIW2_MPA_V2_B;
		if (rtr & SIW2_MPA_RTR_WRITE)
			ord |= SIW2_MPA_V2_C;
		if (rtr & SIW2_MPA_RTR_READ)
			ord |= SIW2_MPA_V2_D;
	}
	v2.ird = cpu_to_be16(ird);
	v2.ord = cpu_to_be16(ord);
	return v2;
}

static enum siw2_mpa_err put_frame(const char *key, u8 flags, u8 rev,
				   const struct siw2_mpa_v2 *v2,
				   const void *pd, u16 pd_len, u8 *out,
				   size_t cap, size_t *outlen)
{
	struct siw2_mpa_rr rr;
	size_t pre = v2 ? sizeof(*v2) : 0;
	size_t total = pre + pd_len;

	/* 7.1.1, RFC 6581 7: at most 512 octets, enhanced data included. */
	if (total > SIW2_MPA_PD_MAX)
		return SIW2_MPA_ERR_PD_TOO_LONG;
	if ((pd_len && !pd) || !out || !outlen)
		return SIW2_MPA_ERR_PARAM;
	if (sizeof(rr) + total > cap)
		return SIW2_MPA_ERR_NOSPC;

	memcpy(rr.key, key, SIW2_MPA_KEY_LEN);
	/*
	 * 7.1.1: Res is zero but for an opted-in G; RFC 6581 6: S flags the
	 * enhanced data.
	 */
	rr.flags = flags | (v2 ? SIW2_MPA_FLAG_S : 0);
	rr.rev = rev;
	rr.pd_len = cpu_to_be16(total);
	memcpy(out, &rr, sizeof(rr));
	if (v2)
		memcpy(out + sizeof(rr), v2, sizeof(*v2));
	if (pd_len)
		memcpy(out + sizeof(rr) + pre, pd, pd_len);
	*outlen = sizeof(rr) + total;
	return SIW2_MPA_OK;
}

enum siw2_mpa_err siw2_mpa_cm_init(struct siw2_mpa_cm *cm,
				   enum siw2_mpa_role role,
				   const struct siw2_mpa_params *p)
{
	memset(cm, 0, sizeof(*cm));
	cm->state = CM_FAILED;
	cm->err = SIW2_MPA_ERR_PARAM;
	if (role != SIW2_MPA_INITIATOR && role != SIW2_MPA_RESPONDER)
		return SIW2_MPA_ERR_PARAM;
	if (p->rev != SIW2_MPA_REV_1 && p->rev != SIW2_MPA_REV_2)
		return SIW2_MPA_ERR_PARAM;
	if (p->rtr & ~SIW2_MPA_RTR_ALL || p->ird > SIW2_MPA_IRD_ORD_NONE ||
	    p->ord > SIW2_MPA_IRD_ORD_NONE)
		return SIW2_MPA_ERR_PARAM;
	/* RFC 6581 6: enhanced features need rev 2; 9.2: A needs B, C or D. */
	if (role == SIW2_MPA_INITIATOR && p->p2p &&
	    (p->rev < SIW2_MPA_REV_2 || !p->rtr))
		return SIW2_MPA_ERR_PARAM;
	/* RFC 6581 9.2: an enhanced responder supports at least one RTR. */
	if (role == SIW2_MPA_RESPONDER && p->rev >= SIW2_MPA_REV_2 && !p->rtr)
		return SIW2_MPA_ERR_PARAM;

	cm->local = *p;
	cm->role = role;
	cm->err = SIW2_MPA_OK;
	cm->state = role == SIW2_MPA_INITIATOR ? CM_INIT : CM_WAIT_REQ;
	return SIW2_MPA_OK;
}

enum siw2_mpa_err siw2_mpa_cm_request(struct siw2_mpa_cm *cm, const void *pd,
				      u16 pd_len, u8 *out, size_t cap,
				      size_t *outlen)
{
	const struct siw2_mpa_params *p = &cm->local;
	struct siw2_mpa_v2 v2;
	bool enhanced = p->rev >= SIW2_MPA_REV_2;
	enum siw2_mpa_err err;
	u8 flags = 0;

	if (cm->role != SIW2_MPA_INITIATOR || cm->state != CM_INIT)
		return SIW2_MPA_ERR_STATE;
	if (p->markers)
		flags |= SIW2_MPA_FLAG_M;
	if (p->crc)
		flags |= SIW2_MPA_FLAG_C;
	if (p->large)
		flags |= SIW2_MPA_FLAG_G;
	/* RFC 6581 10: rev 2 is only sent with the enhanced data. */
	if (enhanced)
		v2 = v2_put(p->ird, p->ord, p->p2p, p->rtr);
	err = put_frame(SIW2_MPA_KEY_REQ, flags, p->rev, enhanced ? &v2 : NULL,
			pd, pd_len, out, cap, outlen);
	if (err)
		return err;
	cm->req_enhanced = enhanced;
	cm->req_p2p = enhanced && p->p2p;
	cm->req_rtr = cm->req_p2p ? p->rtr : 0;
	cm->have = 0;
	cm->state = CM_WAIT_REP;
	return SIW2_MPA_OK;
}

/* Responder: the RTR indications offered in the Reply (RFC 6581 9.2). */
static u8 resp_rtr(const struct siw2_mpa_cm *cm)
{
	u8 rtr = cm->req_rtr & cm->local.rtr;

	if (!cm->req_p2p)
		return 0;
	/* The initiator's options we support, or all of ours if none. */
	return rtr ? rtr : cm->local.rtr;
}

/* Responder: the RFC 6581 9 answer to an enhanced Request. */
static void accept_v2(struct siw2_mpa_cm *cm, u16 ird, u16 ord, u16 *rird,
		      u16 *rord)
{
	struct siw2_mpa_conn *c = &cm->conn;

	/*
	 * 9.1: the responder ORD is at most the initiator IRD. An initiator
	 * ORD (IRD) of 0x3fff leaves the local IRD (ORD) alone and is echoed
	 * in the Reply.
	 */
	*rird = ird;
	*rord = ord;
	if (c->peer_ird == SIW2_MPA_IRD_ORD_NONE)
		*rord = SIW2_MPA_IRD_ORD_NONE;
	else if (ord != SIW2_MPA_IRD_ORD_NONE)
		*rord = min(ord, c->peer_ird);
	if (c->peer_ord == SIW2_MPA_IRD_ORD_NONE)
		*rird = SIW2_MPA_IRD_ORD_NONE;

	c->p2p = cm->req_p2p;
	c->rtr = resp_rtr(cm);
	/* 9.1: an IRD of at least 1 for a Read RTR. */
	if (c->rtr & SIW2_MPA_RTR_READ && !*rird)
		*rird = 1;
	c->ird = *rird == SIW2_MPA_IRD_ORD_NONE ? ird : *rird;
	c->ord = *rord == SIW2_MPA_IRD_ORD_NONE ? ord : *rord;
}

static enum siw2_mpa_err cm_reply(struct siw2_mpa_cm *cm, bool reject,
				  u16 ird, u16 ord, const void *pd,
				  u16 pd_len, u8 *out, size_t cap,
				  size_t *outlen)
{
	struct siw2_mpa_conn saved = cm->conn;
	struct siw2_mpa_conn *c = &cm->conn;
	struct siw2_mpa_v2 v2;
	enum siw2_mpa_err err;
	u16 rird = ird, rord = ord;
	u8 flags = 0;

	if (cm->role != SIW2_MPA_RESPONDER || cm->state != CM_REQ_RCVD)
		return SIW2_MPA_ERR_STATE;
	if (ird > SIW2_MPA_IRD_ORD_NONE || ord > SIW2_MPA_IRD_ORD_NONE)
		return SIW2_MPA_ERR_PARAM;

	if (cm->local.markers)
		flags |= SIW2_MPA_FLAG_M;
	/*
	 * 7.1.1 C: the Request's C already turns CRCs on; the Reply says so
	 * too, for peers that want to see C in the Reply when they asked.
	 */
	if (c->crc)
		flags |= SIW2_MPA_FLAG_C;
	if (c->large)
		flags |= SIW2_MPA_FLAG_G;
	if (reject)
		flags |= SIW2_MPA_FLAG_R;

	c->ird = ird;
	c->ord = ord;
	if (c->enhanced) {
		if (reject) {
			c->p2p = cm->req_p2p;
			c->rtr = resp_rtr(cm);
		} else {
			accept_v2(cm, ird, ord, &rird, &rord);
		}
		/* RFC 6581 10: an enhanced Request gets an enhanced Reply. */
		v2 = v2_put(rird, rord, c->p2p, c->rtr);
	}
	/* RFC 6581 10: the Reply has the Request's revision. */
	err = put_frame(SIW2_MPA_KEY_REP, flags, c->rev,
			c->enhanced ? &v2 : NULL, pd, pd_len, out, cap,
			outlen);
	if (err) {
		*c = saved;
		return err;
	}
	/*
	 * 7.1.2 rule 2: a reject exits MPA with TCP left open; an accept
	 * enters Full Operation for receiving, and rule 4 holds back
	 * sending until the first FPDU has arrived.
	 */
	cm->state = reject ? CM_REJECTED : CM_WAIT_FPDU;
	return SIW2_MPA_OK;
}

enum siw2_mpa_err siw2_mpa_cm_accept(struct siw2_mpa_cm *cm, u16 ird, u16 ord,
				     const void *pd, u16 pd_len, u8 *out,
				     size_t cap, size_t *outlen)
{
	return cm_reply(cm, false, ird, ord, pd, pd_len, out, cap, outlen);
}

enum siw2_mpa_err siw2_mpa_cm_reject(struct siw2_mpa_cm *cm, u16 ird, u16 ord,
				     const void *pd, u16 pd_len, u8 *out,
				     size_t cap, size_t *outlen)
{
	return cm_reply(cm, true, ird, ord, pd, pd_len, out, cap, outlen);
}

static const char *cm_key_want(const struct siw2_mpa_cm *cm)
{
	return cm->role == SIW2_MPA_RESPONDER ? SIW2_MPA_KEY_REQ :
						SIW2_MPA_KEY_REP;
}

static const char *cm_key_other(const struct siw2_mpa_cm *cm)
{
	return cm->role == SIW2_MPA_RESPONDER ? SIW2_MPA_KEY_REP :
						SIW2_MPA_KEY_REQ;
}

static u16 cm_pd_len(const struct siw2_mpa_cm *cm)
{
	struct siw2_mpa_rr rr;

	memcpy(&rr, cm->frame, sizeof(rr));
	return be16_to_cpu(rr.pd_len);
}

static bool cm_enhanced(const struct siw2_mpa_rr *rr)
{
	/* RFC 6581 6: S is a Res bit, so rev 1 frames never carry it. */
	return rr->rev >= SIW2_MPA_REV_2 && rr->flags & SIW2_MPA_FLAG_S;
}

/* Checks the 20 octet frame header once complete. */
static enum siw2_mpa_err cm_check_hdr(const struct siw2_mpa_cm *cm)
{
	struct siw2_mpa_rr rr;
	u16 pd_len;

	memcpy(&rr, cm->frame, sizeof(rr));
	/* 7.1.1, 7.1.2 rules 5 and 8: the Key tells Request from Reply. */
	if (memcmp(rr.key, cm_key_want(cm), SIW2_MPA_KEY_LEN)) {
		if (cm->role == SIW2_MPA_INITIATOR &&
		    !memcmp(rr.key, SIW2_MPA_KEY_REQ, SIW2_MPA_KEY_LEN))
			return SIW2_MPA_ERR_INIT_INIT;
		return SIW2_MPA_ERR_KEY;
	}
	/*
	 * 7.1.1: close on a Rev we cannot interoperate with. RFC 6581 6, 10:
	 * a rev 2 responder takes rev 1 and 2, a rev 1 responder only 1.
	 */
	if (rr.rev < SIW2_MPA_REV_1 || rr.rev > SIW2_MPA_REV_2)
		return SIW2_MPA_ERR_REV;
	if (cm->role == SIW2_MPA_RESPONDER && rr.rev > cm->local.rev)
		return SIW2_MPA_ERR_REV;
	pd_len = be16_to_cpu(rr.pd_len);
	if (pd_len > SIW2_MPA_PD_MAX)
		return SIW2_MPA_ERR_PD_LEN;
	if (cm_enhanced(&rr)) {
		if (pd_len < sizeof(struct siw2_mpa_v2))
			return SIW2_MPA_ERR_ENH_SHORT;
		if (cm->role == SIW2_MPA_INITIATOR && !cm->req_enhanced)
			return SIW2_MPA_ERR_ENH_UNSOLICITED;
	}
	return SIW2_MPA_OK;
}

/* Fills conn from a complete, header-checked frame. */
static void cm_parse(struct siw2_mpa_cm *cm, u16 *ird_raw, u16 *ord_raw)
{
	struct siw2_mpa_conn *c = &cm->conn;
	const u8 *pd = cm->frame + sizeof(struct siw2_mpa_rr);
	struct siw2_mpa_rr rr;
	struct siw2_mpa_v2 v2;

	memcpy(&rr, cm->frame, sizeof(rr));
	c->rev = min(rr.rev, cm->local.rev);
	c->enhanced = cm_enhanced(&rr);
	/* 7.1.1 C: CRCs are used if either side asks for them. */
	c->crc = cm->local.crc || rr.flags & SIW2_MPA_FLAG_C;
	/* 7.1.1 M: each side declares the Markers it wants to receive. */
	c->tx_markers = rr.flags & SIW2_MPA_FLAG_M;
	c->rx_markers = cm->local.markers;
	/* A Res bit: looked at only by a side that sends it itself. */
	c->large = cm->local.large && rr.flags & SIW2_MPA_FLAG_G;
	c->pdata = pd;
	c->pdata_len = be16_to_cpu(rr.pd_len);
	*ird_raw = 0;
	*ord_raw = 0;
	if (!c->enhanced)
		return;
	memcpy(&v2, pd, sizeof(v2));
	*ird_raw = be16_to_cpu(v2.ird);
	*ord_raw = be16_to_cpu(v2.ord);
	c->peer_ird = *ird_raw & SIW2_MPA_V2_IRD_ORD_MASK;
	c->peer_ord = *ord_raw & SIW2_MPA_V2_IRD_ORD_MASK;
	c->pdata += sizeof(v2);
	c->pdata_len -= sizeof(v2);
}

static enum siw2_mpa_cm_action cm_request_done(struct siw2_mpa_cm *cm)
{
	u16 ird_raw, ord_raw;

	cm_parse(cm, &ird_raw, &ord_raw);
	/* RFC 6581 9.2: with A clear, B, C and D are ignored. */
	cm->req_enhanced = cm->conn.enhanced;
	cm->req_p2p = ird_raw & SIW2_MPA_V2_A;
	cm->req_rtr = cm->req_p2p ? v2_rtr_mask(ird_raw, ord_raw) : 0;
	cm->state = CM_REQ_RCVD;
	return SIW2_MPA_CM_REQUEST;
}

/* The initiator's choice among usable RTRs (9.2: at its discretion). */
static u8 pick_rtr(u8 rtr)
{
	/*
	 * A zero-length Write completes nothing at the responder, a Read
	 * costs a round trip, a Send consumes a receive buffer.
	 */
	if (rtr & SIW2_MPA_RTR_WRITE)
		return SIW2_MPA_RTR_WRITE;
	if (rtr & SIW2_MPA_RTR_READ)
		return SIW2_MPA_RTR_READ;
	return rtr & SIW2_MPA_RTR_SEND;
}

static enum siw2_mpa_cm_action cm_reply_done(struct siw2_mpa_cm *cm)
{
	struct siw2_mpa_conn *c = &cm->conn;
	const struct siw2_mpa_params *p = &cm->local;
	u16 ird_raw, ord_raw;
	bool rep_p2p;
	u8 usable;

	cm_parse(cm, &ird_raw, &ord_raw);
	c->ird = p->ird;
	c->ord = p->ord;
	/* 7.1.2 rule 3; RFC 6581 9.1: IRD/ORD reach the ULP either way. */
	if (cm->frame[offsetof(struct siw2_mpa_rr, flags)] & SIW2_MPA_FLAG_R) {
		cm->state = CM_REJECTED;
		return SIW2_MPA_CM_REJECTED;
	}
	if (!c->enhanced) {
		/*
		 * RFC 6581 10: an enhanced Request gets an enhanced Reply or
		 * a closed connection. A plain one means the responder took
		 * our enhanced data for ULP Private Data.
		 */
		if (cm->req_enhanced)
			return cm_fail(cm, SIW2_MPA_ERR_ENH_MISSING);
		goto established;
	}

	rep_p2p = ird_raw & SIW2_MPA_V2_A;
	/* 9.2: the responder echoes A. */
	if (rep_p2p && !cm->req_p2p)
		return cm_fail(cm, SIW2_MPA_ERR_P2P_UNSOLICITED);

	/*
	 * 9.1: ORD at most the responder IRD, IRD at least the responder
	 * ORD; 0x3fff on either side leaves the value alone. The IRD sent
	 * was all this side can support.
	 */
	if (p->ord != SIW2_MPA_IRD_ORD_NONE &&
	    c->peer_ird != SIW2_MPA_IRD_ORD_NONE)
		c->ord = min(p->ord, c->peer_ird);
	if (p->ird != SIW2_MPA_IRD_ORD_NONE &&
	    c->peer_ord != SIW2_MPA_IRD_ORD_NONE && c->peer_ord > p->ird)
		return cm_fail(cm, SIW2_MPA_ERR_IRD);

	if (cm->req_p2p) {
		/* 9.2: failing to agree on the model or RTR is code 7. */
		if (!rep_p2p)
			return cm_fail(cm, SIW2_MPA_ERR_NO_RTR);
		usable = v2_rtr_mask(ird_raw, ord_raw) & p->rtr;
		/* A Read RTR needs a slot in the responder's IRRQ. */
		if (!c->peer_ird)
			usable &= ~SIW2_MPA_RTR_READ;
		c->rtr = pick_rtr(usable);
		if (!c->rtr)
			return cm_fail(cm, SIW2_MPA_ERR_NO_RTR);
		c->p2p = true;
	}
established:
	cm->state = CM_ESTABLISHED;
	return SIW2_MPA_CM_ESTABLISHED;
}

enum siw2_mpa_cm_action siw2_mpa_cm_rx(struct siw2_mpa_cm *cm, const u8 *buf,
				       size_t len, size_t *consumed)
{
	const size_t hlen = sizeof(struct siw2_mpa_rr);
	enum siw2_mpa_err err;
	size_t used = 0;

	*consumed = 0;
	switch (cm->state) {
	case CM_WAIT_REQ:
	case CM_WAIT_REP:
		break;
	case CM_REQ_RCVD:
		if (!len)
			return SIW2_MPA_CM_NEED_MORE;
		/*
		 * 7.1.1, 7.1.2 rule 9: the Request ends at PD_Length and the
		 * initiator sends nothing more before the Reply.
		 */
		return cm_fail(cm, SIW2_MPA_ERR_PD_EXCESS);
	case CM_FAILED:
		return SIW2_MPA_CM_ERROR;
	default:
		cm->err = SIW2_MPA_ERR_STATE;
		return SIW2_MPA_CM_ERROR;
	}

	while (used < len) {
		size_t want = hlen;
		size_t n, k;

		if (cm->have >= hlen)
			want += cm_pd_len(cm);
		n = min(len - used, want - cm->have);
		memcpy(cm->frame + cm->have, buf + used, n);
		/* 7.1.2 rule 5: fail on the first octet off both Keys. */
		if (cm->have < SIW2_MPA_KEY_LEN) {
			k = min_t(size_t, cm->have + n, SIW2_MPA_KEY_LEN);
			if (memcmp(cm->frame, cm_key_want(cm), k) &&
			    memcmp(cm->frame, cm_key_other(cm), k)) {
				*consumed = used + n;
				return cm_fail(cm, SIW2_MPA_ERR_KEY);
			}
		}
		cm->have += n;
		used += n;
		*consumed = used;
		if (cm->have == hlen) {
			err = cm_check_hdr(cm);
			if (err)
				return cm_fail(cm, err);
		}
		if (cm->have >= hlen && cm->have == hlen + cm_pd_len(cm))
			return cm->role == SIW2_MPA_RESPONDER ?
				cm_request_done(cm) : cm_reply_done(cm);
	}
	return SIW2_MPA_CM_NEED_MORE;
}

enum siw2_mpa_cm_action siw2_mpa_cm_first_fpdu(struct siw2_mpa_cm *cm)
{
	/* 7.1.2 rule 4: the responder sends after one verified FPDU. */
	if (cm->state == CM_WAIT_FPDU)
		cm->state = CM_ESTABLISHED;
	if (cm->state == CM_ESTABLISHED)
		return SIW2_MPA_CM_ESTABLISHED;
	if (cm->state != CM_FAILED)
		cm->err = SIW2_MPA_ERR_STATE;
	return SIW2_MPA_CM_ERROR;
}

static enum siw2_mpa_cm_action cm_abort(struct siw2_mpa_cm *cm,
					enum siw2_mpa_err err)
{
	switch (cm->state) {
	case CM_WAIT_REQ:
	case CM_WAIT_REP:
		/* 7.1.2 rule 9: PD_Length promised more than arrived. */
		if (cm->have >= sizeof(struct siw2_mpa_rr))
			err = SIW2_MPA_ERR_PD_TRUNCATED;
		return cm_fail(cm, err);
	case CM_INIT:
	case CM_REQ_RCVD:
	case CM_WAIT_FPDU:
		return cm_fail(cm, err);
	case CM_ESTABLISHED:
		return SIW2_MPA_CM_ESTABLISHED;
	case CM_REJECTED:
		return SIW2_MPA_CM_REJECTED;
	default:
		return SIW2_MPA_CM_ERROR;
	}
}

enum siw2_mpa_cm_action siw2_mpa_cm_timeout(struct siw2_mpa_cm *cm)
{
	return cm_abort(cm, SIW2_MPA_ERR_TIMEOUT);
}

enum siw2_mpa_cm_action siw2_mpa_cm_closed(struct siw2_mpa_cm *cm)
{
	return cm_abort(cm, SIW2_MPA_ERR_CLOSED);
}

bool siw2_mpa_cm_may_send(const struct siw2_mpa_cm *cm)
{
	return cm->state == CM_ESTABLISHED;
}

bool siw2_mpa_cm_retry_rev1(const struct siw2_mpa_cm *cm)
{
	if (cm->role != SIW2_MPA_INITIATOR || !cm->req_enhanced)
		return false;
	return cm->err == SIW2_MPA_ERR_ENH_MISSING ||
	       (cm->err == SIW2_MPA_ERR_CLOSED && !cm->have);
}
