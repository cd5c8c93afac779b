// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * RDMAP (RFC 5040) and the RDMAP extensions (RFC 7306), pure code.
 *
 * Everything here works on caller-owned values: the opcode table is
 * read-only, headers and Terminate bodies are built into and parsed from
 * caller buffers, and the ORD/IRD counters live in the caller's QP under
 * its lock. A remote peer reaches this code only through the parse and
 * check functions, which return a Terminate cause instead of logging.
 *
 * The receive rules (siw2_rdmap_rx_begin() at a segment's header, the
 * _end and _check functions at its end) get the stream's view of its own
 * requests for each call, struct siw2_rdmap_rx_ctx: the oldest
 * outstanding Read, whether an RTR is due or awaited. rx.c and the fuzzer
 * (tools/testing/fuzz) both call them, so neither keeps a copy.
 */
#include <linux/kernel.h>
#include <linux/string.h>
#include <linux/errno.h>
#include <linux/bits.h>
#include <asm/byteorder.h>
#include "rdmap.h"
#include "ddp.h"

#define TAGGED_LEN	sizeof(struct siw2_ddp_tagged_hdr)
#define UNTAGGED_LEN	sizeof(struct siw2_ddp_untagged_hdr)

/*
 * RFC 5040 4.3 (message definitions) and RFC 7306: buffer model, queue
 * number, invalidate and solicited-event behaviour of every opcode.
 */
const struct siw2_rdmap_op_info siw2_rdmap_ops[SIW2_RDMAP_OP_MAX + 1] = {
	[SIW2_RDMAP_OP_WRITE] = {
		.hdr_len = TAGGED_LEN,
		.cls = SIW2_CLASS_WRITE,
		.tagged = true,
		.payload = true,
	},
	[SIW2_RDMAP_OP_READ_REQ] = {
		.hdr_len = sizeof(struct siw2_hdr_read_req),
		.qn = SIW2_QN_READ_REQ,
		.cls = SIW2_CLASS_READ_REQ,
	},
	[SIW2_RDMAP_OP_READ_RESP] = {
		.hdr_len = TAGGED_LEN,
		.cls = SIW2_CLASS_READ_RESP,
		.tagged = true,
		.payload = true,
	},
	[SIW2_RDMAP_OP_SEND] = {
		.hdr_len = UNTAGGED_LEN,
		.qn = SIW2_QN_SEND,
		.cls = SIW2_CLASS_SEND,
		.payload = true,
		.consumes_rq = true,
	},
	[SIW2_RDMAP_OP_SEND_INV] = {
		.hdr_len = UNTAGGED_LEN,
		.qn = SIW2_QN_SEND,
		.cls = SIW2_CLASS_SEND,
		.payload = true,
		.consumes_rq = true,
		.inval = true,
	},
	[SIW2_RDMAP_OP_SEND_SE] = {
		.hdr_len = UNTAGGED_LEN,
		.qn = SIW2_QN_SEND,
		.cls = SIW2_CLASS_SEND,
		.payload = true,
		.consumes_rq = true,
		.se = true,
	},
	[SIW2_RDMAP_OP_SEND_SE_INV] = {
		.hdr_len = UNTAGGED_LEN,
		.qn = SIW2_QN_SEND,
		.cls = SIW2_CLASS_SEND,
		.payload = true,
		.consumes_rq = true,
		.inval = true,
		.se = true,
	},
	[SIW2_RDMAP_OP_TERMINATE] = {
		.hdr_len = sizeof(struct siw2_hdr_terminate),
		.qn = SIW2_QN_TERMINATE,
		.cls = SIW2_CLASS_TERMINATE,
	},
	[SIW2_RDMAP_OP_IMM] = {
		.hdr_len = sizeof(struct siw2_hdr_imm),
		.qn = SIW2_QN_SEND,
		.cls = SIW2_CLASS_IMM,
		.consumes_rq = true,
		.ext = true,
	},
	[SIW2_RDMAP_OP_IMM_SE] = {
		.hdr_len = sizeof(struct siw2_hdr_imm),
		.qn = SIW2_QN_SEND,
		.cls = SIW2_CLASS_IMM,
		.consumes_rq = true,
		.se = true,
		.ext = true,
	},
	[SIW2_RDMAP_OP_ATOMIC_REQ] = {
		.hdr_len = sizeof(struct siw2_hdr_atomic_req),
		.qn = SIW2_QN_READ_REQ,
		.cls = SIW2_CLASS_ATOMIC_REQ,
		.ext = true,
	},
	[SIW2_RDMAP_OP_ATOMIC_RESP] = {
		.hdr_len = sizeof(struct siw2_hdr_atomic_resp),
		.qn = SIW2_QN_ATOMIC_RESP,
		.cls = SIW2_CLASS_ATOMIC_RESP,
		.ext = true,
	},
};

/**
 * siw2_rdmap_ctrl_check() - check the two control octets of a segment
 * @ddp_ctrl: DDP control field
 * @rdmap_ctrl: RDMAP control field
 * @ext: RFC 7306 opcodes are enabled on this stream
 * @op: set to the opcode's table entry on success
 *
 * The order follows what each check needs: without a known DDP version
 * nothing else can be read, without a known RDMAP version the opcode
 * cannot.
 *
 * Return: 0, or the Terminate cause.
 */
u32 siw2_rdmap_ctrl_check(u8 ddp_ctrl, u8 rdmap_ctrl, bool ext,
			  const struct siw2_rdmap_op_info **op)
{
	const struct siw2_rdmap_op_info *info;
	bool tagged = ddp_ctrl & SIW2_DDP_T;

	/* RFC 5041 4.1, 7.2: DV must be 1; the error type follows T. */
	if ((ddp_ctrl & SIW2_DDP_DV) != SIW2_DDP_VERSION)
		return tagged ? SIW2_TERM_DDP_T_VERSION :
				SIW2_TERM_DDP_U_VERSION;
	/* RFC 5040 4.2: RV must be 1. */
	if ((rdmap_ctrl & SIW2_RDMAP_RV) >> SIW2_RDMAP_RV_SHIFT !=
	    SIW2_RDMAP_VERSION)
		return SIW2_TERM_RDMAP_VERSION;
	/* RFC 5040 4.3: reserved opcodes, and opcodes in the wrong model. */
	info = siw2_rdmap_op(rdmap_ctrl & SIW2_RDMAP_OPCODE);
	if (!info || (info->ext && !ext) || info->tagged != tagged)
		return SIW2_TERM_RDMAP_OPCODE;
	*op = info;
	return 0;
}

/**
 * siw2_rdmap_build() - write one segment's DDP and RDMAP header
 * @h: destination
 * @m: header fields; @m->qn is ignored, the opcode defines the queue
 *
 * Reserved fields are written as zero (RFC 5041 4.1, RFC 5040 4.2).
 *
 * Return: header length, or 0 for a reserved opcode.
 */
u32 siw2_rdmap_build(union siw2_iwarp_hdr *h, const struct siw2_rdmap_hdr *m)
{
	const struct siw2_rdmap_op_info *op = siw2_rdmap_op(m->opcode);

	if (!op)
		return 0;
	memset(h, 0, op->hdr_len);
	h->tagged.ddp_ctrl = SIW2_DDP_VERSION;
	if (op->tagged)
		h->tagged.ddp_ctrl |= SIW2_DDP_T;
	if (m->last)
		h->tagged.ddp_ctrl |= SIW2_DDP_L;
	h->tagged.rdmap_ctrl = SIW2_RDMAP_VERSION << SIW2_RDMAP_RV_SHIFT |
			       m->opcode;
	if (op->tagged) {
		h->tagged.stag = cpu_to_be32(m->stag);
		h->tagged.to = cpu_to_be64(m->to);
		return op->hdr_len;
	}
	if (op->inval)
		h->untagged.inval_stag = cpu_to_be32(m->inval_stag);
	h->untagged.qn = cpu_to_be32(op->qn);
	h->untagged.msn = cpu_to_be32(m->msn);
	h->untagged.mo = cpu_to_be32(m->mo);

	switch (op->cls) {
	case SIW2_CLASS_READ_REQ:
		h->read_req.rreq.sink_stag = cpu_to_be32(m->rreq.sink_stag);
		h->read_req.rreq.sink_to = cpu_to_be64(m->rreq.sink_to);
		h->read_req.rreq.size = cpu_to_be32(m->rreq.size);
		h->read_req.rreq.src_stag = cpu_to_be32(m->rreq.src_stag);
		h->read_req.rreq.src_to = cpu_to_be64(m->rreq.src_to);
		break;
	case SIW2_CLASS_TERMINATE:
		h->term.term.ctrl = cpu_to_be32(m->term_ctrl);
		break;
	case SIW2_CLASS_IMM:
		h->imm.imm.data = cpu_to_be64(m->imm);
		break;
	case SIW2_CLASS_ATOMIC_REQ:
		h->atomic_req.areq.op =
			cpu_to_be32(m->atomic.op & SIW2_ATOMIC_OP);
		h->atomic_req.areq.req_id = cpu_to_be32(m->atomic.req_id);
		h->atomic_req.areq.stag = cpu_to_be32(m->atomic.stag);
		h->atomic_req.areq.to = cpu_to_be64(m->atomic.to);
		h->atomic_req.areq.add_swap = cpu_to_be64(m->atomic.add_swap);
		h->atomic_req.areq.add_swap_mask =
			cpu_to_be64(m->atomic.add_swap_mask);
		h->atomic_req.areq.cmp = cpu_to_be64(m->atomic.cmp);
		h->atomic_req.areq.cmp_mask = cpu_to_be64(m->atomic.cmp_mask);
		break;
	case SIW2_CLASS_ATOMIC_RESP:
		h->atomic_resp.aresp.req_id = cpu_to_be32(m->aresp.req_id);
		h->atomic_resp.aresp.orig = cpu_to_be64(m->aresp.orig);
		break;
	default:
		break;
	}
	return op->hdr_len;
}

/**
 * siw2_rdmap_parse() - read one segment's DDP and RDMAP header
 * @h: the received header octets
 * @len: how many of them are valid
 * @ext: RFC 7306 opcodes are enabled on this stream
 * @m: filled with the fields, host order
 *
 * Only the control octets are checked (siw2_rdmap_ctrl_check()); queue,
 * sequence and buffer checks are DDP's (ddp.c). Reserved fields are not
 * checked (RFC 5041 4.1, RFC 5040 4.2); the Invalidate STag is read only
 * for the opcodes that carry one.
 *
 * Return: 0, or the Terminate cause.
 */
u32 siw2_rdmap_parse(const union siw2_iwarp_hdr *h, u32 len, bool ext,
		     struct siw2_rdmap_hdr *m)
{
	const struct siw2_rdmap_op_info *op;
	u32 cause;

	memset(m, 0, sizeof(*m));
	if (len < 2)
		return SIW2_TERM_DDP_CATASTROPHIC;
	cause = siw2_rdmap_ctrl_check(h->tagged.ddp_ctrl, h->tagged.rdmap_ctrl,
				      ext, &op);
	if (cause)
		return cause;
	if (len < op->hdr_len)
		return SIW2_TERM_RDMAP_OP_UNSPEC;

	m->opcode = h->tagged.rdmap_ctrl & SIW2_RDMAP_OPCODE;
	m->last = h->tagged.ddp_ctrl & SIW2_DDP_L;
	if (op->tagged) {
		m->stag = be32_to_cpu(h->tagged.stag);
		m->to = be64_to_cpu(h->tagged.to);
		return 0;
	}
	if (op->inval)
		m->inval_stag = be32_to_cpu(h->untagged.inval_stag);
	m->qn = be32_to_cpu(h->untagged.qn);
	m->msn = be32_to_cpu(h->untagged.msn);
	m->mo = be32_to_cpu(h->untagged.mo);

	switch (op->cls) {
	case SIW2_CLASS_READ_REQ:
		m->rreq.sink_stag = be32_to_cpu(h->read_req.rreq.sink_stag);
		m->rreq.sink_to = be64_to_cpu(h->read_req.rreq.sink_to);
		m->rreq.size = be32_to_cpu(h->read_req.rreq.size);
		m->rreq.src_stag = be32_to_cpu(h->read_req.rreq.src_stag);
		m->rreq.src_to = be64_to_cpu(h->read_req.rreq.src_to);
		break;
	case SIW2_CLASS_TERMINATE:
		m->term_ctrl = be32_to_cpu(h->term.term.ctrl);
		break;
	case SIW2_CLASS_IMM:
		m->imm = be64_to_cpu(h->imm.imm.data);
		break;
	case SIW2_CLASS_ATOMIC_REQ:
		m->atomic.op = be32_to_cpu(h->atomic_req.areq.op) &
			       SIW2_ATOMIC_OP;
		m->atomic.req_id = be32_to_cpu(h->atomic_req.areq.req_id);
		m->atomic.stag = be32_to_cpu(h->atomic_req.areq.stag);
		m->atomic.to = be64_to_cpu(h->atomic_req.areq.to);
		m->atomic.add_swap = be64_to_cpu(h->atomic_req.areq.add_swap);
		m->atomic.add_swap_mask =
			be64_to_cpu(h->atomic_req.areq.add_swap_mask);
		m->atomic.cmp = be64_to_cpu(h->atomic_req.areq.cmp);
		m->atomic.cmp_mask = be64_to_cpu(h->atomic_req.areq.cmp_mask);
		break;
	case SIW2_CLASS_ATOMIC_RESP:
		m->aresp.req_id = be32_to_cpu(h->atomic_resp.aresp.req_id);
		m->aresp.orig = be64_to_cpu(h->atomic_resp.aresp.orig);
		break;
	default:
		break;
	}
	return 0;
}

/* RFC 5041 7.1 item 5: the 64-bit sum of TO and length must not wrap. */
static bool to_wraps(u64 to, u64 len)
{
	return len && len - 1 > U64_MAX - to;
}

/**
 * siw2_rdmap_check_stag() - RDMAP's checks of a source or atomic target
 * @v: what the caller's STag lookup found
 * @to: Tagged Offset of the first octet
 * @len: octets accessed
 *
 * For the Data Source of an RDMA Read Request and the target of an Atomic
 * Request, errors are RDMAP remote protection errors (RFC 5040 4.8); a
 * zero-length access checks nothing (RFC 5041 5.2).
 *
 * Return: 0, or the Terminate cause.
 */
u32 siw2_rdmap_check_stag(const struct siw2_stag_view *v, u64 to, u64 len)
{
	if (!len)
		return 0;
	if (!v->valid)
		return SIW2_TERM_RDMAP_INVALID_STAG;
	if (!v->assoc)
		return SIW2_TERM_RDMAP_STAG_NOT_ASSOC;
	if (!v->access)
		return SIW2_TERM_RDMAP_ACCESS;
	if (to_wraps(to, len))
		return SIW2_TERM_RDMAP_TO_WRAP;
	if (!siw2_range_ok(to, len, v->base, v->len))
		return SIW2_TERM_RDMAP_BASE_BOUNDS;
	return 0;
}

/**
 * siw2_rdmap_check_inval() - may a Send with Invalidate void this STag?
 * @v: what the caller found for the Invalidate STag
 *
 * RFC 5040 5.3, 4.8: an STag of another protection domain is a remote
 * protection error, one that does not exist or may not be invalidated a
 * remote operation error; both use "STag cannot be invalidated". An STag
 * that is already invalid may be invalidated again.
 *
 * Return: 0, or the Terminate cause.
 */
u32 siw2_rdmap_check_inval(const struct siw2_inval_view *v)
{
	if (!v->exists)
		return SIW2_TERM_RDMAP_OP_CANNOT_INV;
	if (!v->same_pd)
		return SIW2_TERM_RDMAP_PROT_CANNOT_INV;
	if (!v->invalidatable)
		return SIW2_TERM_RDMAP_OP_CANNOT_INV;
	return 0;
}

/* Length of the RDMAP header that follows an untagged DDP header. */
static u32 rdmap_copy_len(u8 opcode)
{
	switch (opcode) {
	case SIW2_RDMAP_OP_READ_REQ:
		return sizeof(struct siw2_rdmap_read_req);
	case SIW2_RDMAP_OP_ATOMIC_REQ:
		return sizeof(struct siw2_rdmap_atomic_req);
	default:
		return 0;
	}
}

/**
 * siw2_rdmap_term_prepare() - fill a Terminate body for a cause
 * @t: filled
 * @cause: Terminate cause
 * @bad: the offending segment's header octets as received, or NULL
 * @bad_len: octets valid at @bad
 * @seg_len: the offending segment's DDP segment length (ULPDU length)
 *
 * RFC 5040 4.8: copy the offending DDP header (D) with its segment length
 * (M), and the offending RDMAP header (R) when the message has one (Read
 * and Atomic Requests). Nothing is copied when there is nothing trustworthy
 * to copy: for LLP errors and local catastrophic errors, and when the DDP
 * version is wrong and so the header's layout is unknown.
 */
void siw2_rdmap_term_prepare(struct siw2_term_info *t, u32 cause,
			     const u8 *bad, u32 bad_len, u32 seg_len)
{
	u32 layer = SIW2_TERM_CAUSE_LAYER(cause);
	u32 etype = SIW2_TERM_CAUSE_ETYPE(cause);
	u32 dlen, rlen = 0;

	memset(t, 0, sizeof(*t));
	t->cause = cause;
	if (!bad || bad_len < 2 || layer > SIW2_LAYER_DDP ||
	    etype == SIW2_ETYPE_CATASTROPHIC ||
	    cause == SIW2_TERM_DDP_T_VERSION ||
	    cause == SIW2_TERM_DDP_U_VERSION)
		return;

	dlen = bad[0] & SIW2_DDP_T ? TAGGED_LEN : UNTAGGED_LEN;
	if (bad_len < dlen)
		return;
	memcpy(t->ddp_hdr, bad, dlen);
	t->ddp_len = dlen;
	t->seg_len = min_t(u32, seg_len, U16_MAX);
	t->hdrctl = SIW2_TERM_M | SIW2_TERM_D;

	/* The RDMAP header cannot be read at a wrong version or opcode. */
	if (cause != SIW2_TERM_RDMAP_VERSION &&
	    cause != SIW2_TERM_RDMAP_OPCODE && !(bad[0] & SIW2_DDP_T))
		rlen = rdmap_copy_len(bad[1] & SIW2_RDMAP_OPCODE);
	if (rlen && bad_len >= dlen + rlen) {
		memcpy(t->rdmap_hdr, bad + dlen, rlen);
		t->rdmap_len = rlen;
		t->hdrctl |= SIW2_TERM_R;
	}
}

/**
 * siw2_rdmap_term_build() - write a whole Terminate message (one segment)
 * @buf: destination for the DDP + RDMAP header and the Terminate body
 * @size: room at @buf
 * @t: body, as from siw2_rdmap_term_prepare()
 *
 * RFC 5040 5.4: a Terminate is untagged on queue 2, one segment with the
 * Last flag set, and is sent at most once on a stream, so its MSN is the
 * initial one (RFC 5041 4.3) and its MO zero. The segment length field is
 * present whenever a header copy follows.
 *
 * Return: octets written (the ULPDU length), or 0 if @size is too small.
 */
u32 siw2_rdmap_term_build(u8 *buf, u32 size, const struct siw2_term_info *t)
{
	struct siw2_rdmap_hdr m = {
		.opcode = SIW2_RDMAP_OP_TERMINATE,
		.last = true,
		.msn = 1,
	};
	u32 pos = sizeof(struct siw2_hdr_terminate);
	u32 total = pos;
	__be16 seg_len;

	if (t->hdrctl)
		total += sizeof(seg_len) + t->ddp_len + t->rdmap_len;
	if (size < total)
		return 0;
	m.term_ctrl = SIW2_TERM_CAUSE_LAYER(t->cause) << SIW2_TERM_LAYER_SHIFT |
		      SIW2_TERM_CAUSE_ETYPE(t->cause) << SIW2_TERM_ETYPE_SHIFT |
		      SIW2_TERM_CAUSE_ECODE(t->cause) << SIW2_TERM_ECODE_SHIFT |
		      (t->hdrctl & (SIW2_TERM_M | SIW2_TERM_D | SIW2_TERM_R));
	siw2_rdmap_build((union siw2_iwarp_hdr *)buf, &m);
	if (!t->hdrctl)
		return total;
	seg_len = cpu_to_be16(t->hdrctl & SIW2_TERM_M ? t->seg_len : 0);
	memcpy(buf + pos, &seg_len, sizeof(seg_len));
	pos += sizeof(seg_len);
	memcpy(buf + pos, t->ddp_hdr, t->ddp_len);
	pos += t->ddp_len;
	memcpy(buf + pos, t->rdmap_hdr, t->rdmap_len);
	return total;
}

/**
 * siw2_rdmap_term_parse() - read a received Terminate body
 * @term_ctrl: the Terminate control word, host order
 * @body: the octets after the control word
 * @len: octets at @body
 * @t: filled with what could be read; @t->cause is always set
 *
 * A peer's Terminate is never answered with another (RFC 5040 5.4), so a
 * malformed one is only reported: the caller surfaces @t->cause anyway.
 *
 * Return: 0, or -EBADMSG if the layer is unknown or the header copies the
 * Hdr Ctrl bits announce are missing or cannot be delimited.
 */
int siw2_rdmap_term_parse(u32 term_ctrl, const u8 *body, u32 len,
			  struct siw2_term_info *t)
{
	u32 layer = (term_ctrl & SIW2_TERM_LAYER) >> SIW2_TERM_LAYER_SHIFT;
	u32 pos = 2, dlen, rlen;

	memset(t, 0, sizeof(*t));
	t->cause = SIW2_TERM(layer,
			     (term_ctrl & SIW2_TERM_ETYPE) >> SIW2_TERM_ETYPE_SHIFT,
			     (term_ctrl & SIW2_TERM_ECODE) >> SIW2_TERM_ECODE_SHIFT);
	t->hdrctl = term_ctrl & (SIW2_TERM_M | SIW2_TERM_D | SIW2_TERM_R);
	if (layer > SIW2_LAYER_LLP)
		return -EBADMSG;
	if (!t->hdrctl)
		return 0;
	if ((t->hdrctl & SIW2_TERM_R) && !(t->hdrctl & SIW2_TERM_D))
		return -EBADMSG;
	if (len < pos)
		return -EBADMSG;
	if (t->hdrctl & SIW2_TERM_M)
		t->seg_len = (u16)body[0] << 8 | body[1];
	if (!(t->hdrctl & SIW2_TERM_D))
		return 0;

	if (len < pos + 2)
		return -EBADMSG;
	dlen = body[pos] & SIW2_DDP_T ? TAGGED_LEN : UNTAGGED_LEN;
	if (len < pos + dlen)
		return -EBADMSG;
	memcpy(t->ddp_hdr, body + pos, dlen);
	t->ddp_len = dlen;
	pos += dlen;
	if (!(t->hdrctl & SIW2_TERM_R))
		return 0;

	rlen = t->ddp_hdr[0] & SIW2_DDP_T ? 0 :
		rdmap_copy_len(t->ddp_hdr[1] & SIW2_RDMAP_OPCODE);
	if (!rlen || len < pos + rlen)
		return -EBADMSG;
	memcpy(t->rdmap_hdr, body + pos, rlen);
	t->rdmap_len = rlen;
	return 0;
}

/**
 * siw2_rdmap_term_blame() - which request of ours a Terminate ends
 * @t: a received Terminate, as siw2_rdmap_term_parse() read it
 * @b: filled when it names one
 *
 * A Terminate copies the headers of the message that caused it as its
 * Hdr Ctrl bits say (RFC 5040 4.8). When it copies the RDMAP header of a
 * Read Request (RFC 5040 4.4) or an Atomic Request (RFC 7306 8.1), it
 * names one of our requests that is still outstanding: the Read by the
 * Data Sink its Responses were to fill, the Atomic by its Request
 * Identifier. The Local Peer can then end that request with the error
 * the Terminate reports instead of a flush. A Terminate without those
 * copies, or for any other message, names nothing we can find: a Write
 * or Send completed when it was sent.
 *
 * Return: true if @t names a request, described in @b.
 */
bool siw2_rdmap_term_blame(const struct siw2_term_info *t,
			   struct siw2_term_blame *b)
{
	u32 layer = SIW2_TERM_CAUSE_LAYER(t->cause);
	u32 etype = SIW2_TERM_CAUSE_ETYPE(t->cause);
	const struct siw2_rdmap_atomic_req *a;
	const struct siw2_rdmap_read_req *r;
	u8 opcode;

	memset(b, 0, sizeof(*b));
	if (!(t->hdrctl & SIW2_TERM_R) || !t->ddp_len || !t->rdmap_len ||
	    (t->ddp_hdr[0] & SIW2_DDP_T))
		return false;
	/* Remote protection errors of RDMAP, buffer errors of DDP. */
	b->access = (layer == SIW2_LAYER_RDMAP &&
		     etype == SIW2_ETYPE_RDMAP_PROT) ||
		    (layer == SIW2_LAYER_DDP &&
		     (etype == SIW2_ETYPE_DDP_TAGGED ||
		      etype == SIW2_ETYPE_DDP_UNTAGGED));
	opcode = t->ddp_hdr[1] & SIW2_RDMAP_OPCODE;
	if (opcode == SIW2_RDMAP_OP_READ_REQ &&
	    t->rdmap_len == sizeof(*r)) {
		r = (const void *)t->rdmap_hdr;
		b->sink_stag = be32_to_cpu(r->sink_stag);
		b->sink_to = be64_to_cpu(r->sink_to);
		return true;
	}
	if (opcode == SIW2_RDMAP_OP_ATOMIC_REQ &&
	    t->rdmap_len == sizeof(*a)) {
		a = (const void *)t->rdmap_hdr;
		b->atomic = true;
		b->req_id = be32_to_cpu(a->req_id);
		return true;
	}
	return false;
}

static bool uses_ord(u8 opcode)
{
	return opcode == SIW2_RDMAP_OP_READ_REQ || opcode == SIW2_RDMAP_OP_ATOMIC_REQ;
}

/**
 * siw2_rdmap_may_issue() - may the next send queue element start?
 * @o: the stream's outbound request accounting
 * @opcode: the RDMAP message the element starts with
 * @fence: the element carries the verbs' read fence
 *
 * RFC 5040 5.5: later messages may complete before the response to an
 * earlier RDMA Read Request arrives; a fenced element waits until every
 * outstanding Read and (RFC 7306) Atomic Request has been answered. A Read
 * or Atomic Request may not start while ORD requests are outstanding
 * (RFC 5040 5.2, RFC 7306: atomics count against ORD and IRD too).
 */
enum siw2_rdmap_issue siw2_rdmap_may_issue(const struct siw2_rdmap_ord *o,
					   u8 opcode, bool fence)
{
	if (fence && o->outstanding)
		return SIW2_ISSUE_WAIT_FENCE;
	if (uses_ord(opcode) && o->outstanding >= o->max)
		return SIW2_ISSUE_WAIT_ORD;
	return SIW2_ISSUE_NOW;
}

/**
 * siw2_rdmap_ord_issue() - account for a send queue element that starts
 * @o: the stream's outbound request accounting
 * @opcode: the RDMAP message the element starts with
 * @fence: the element carries the read fence
 *
 * Return: 0 if it may start (and a Read or Atomic Request is now
 * outstanding), -EAGAIN if it must wait (siw2_rdmap_may_issue()).
 */
int siw2_rdmap_ord_issue(struct siw2_rdmap_ord *o, u8 opcode, bool fence)
{
	if (siw2_rdmap_may_issue(o, opcode, fence) != SIW2_ISSUE_NOW)
		return -EAGAIN;
	if (uses_ord(opcode))
		o->outstanding++;
	return 0;
}

/**
 * siw2_rdmap_ord_complete() - a Read Response (last segment) or Atomic
 * Response answered the oldest outstanding request
 * @o: the stream's outbound request accounting
 *
 * Return: 0, or -EPROTO if nothing was outstanding (an unsolicited
 * response; the caller's STag or queue checks name the Terminate).
 */
int siw2_rdmap_ord_complete(struct siw2_rdmap_ord *o)
{
	if (!o->outstanding)
		return -EPROTO;
	o->outstanding--;
	return 0;
}

/**
 * siw2_rdmap_ird_begin() - an RDMA Read or Atomic Request arrived
 * @ird: the stream's inbound request accounting
 *
 * Read and Atomic Requests consume the untagged buffers of queue 1, of
 * which the responder has IRD (RFC 5040 5.2, RFC 5041 7.1 item 2): one
 * more than IRD finds no buffer.
 *
 * Return: 0, or SIW2_TERM_DDP_U_MSN_NOBUF.
 */
u32 siw2_rdmap_ird_begin(struct siw2_rdmap_ird *ird)
{
	if (ird->active >= ird->max)
		return SIW2_TERM_DDP_U_MSN_NOBUF;
	ird->active++;
	return 0;
}

/**
 * siw2_rdmap_ird_end() - the response to an inbound request was sent
 * @ird: the stream's inbound request accounting
 *
 * Return: 0, or -EINVAL if none was active (a caller bug).
 */
int siw2_rdmap_ird_end(struct siw2_rdmap_ird *ird)
{
	if (!ird->active)
		return -EINVAL;
	ird->active--;
	return 0;
}

/*
 * RFC 5040 4.4, 5.2: a Read Response carries the Data Sink STag and
 * Tagged Offset of its Read Request, and Responses come in the order of
 * their Requests. So a segment may only land where our oldest outstanding
 * Read asked for it, right after what arrived before: a peer cannot use a
 * Response to write anywhere else, nor into a sink twice.
 */
static u32 read_resp_match(const struct siw2_rdmap_read *o, u32 stag,
			   u64 to, u32 len)
{
	if (!o || o->atomic)
		return SIW2_TERM_RDMAP_OP_UNSPEC;
	if (stag != o->sink_stag)
		return SIW2_TERM_DDP_T_INVALID_STAG;
	if (to != o->sink_to + o->got || len > o->len - o->got)
		return SIW2_TERM_DDP_T_BASE_BOUNDS;
	return 0;
}

static u32 read_resp_begin(const struct siw2_rdmap_rx_ctx *ctx,
			   const struct siw2_ddp_seg *seg,
			   enum siw2_rdmap_rx_disp *disp)
{
	u32 cause;

	/*
	 * The answer to our Read RTR (RFC 6581 9.2). The RTR was the first
	 * Request, and Responses come in the order of their Requests
	 * (RFC 5040 5.2): while it is out, the next Response is its answer,
	 * even when Reads of the application followed it. It asked for no
	 * octets.
	 */
	if (ctx->rtr_read_out) {
		if (seg->len || !seg->hdr.last)
			return SIW2_TERM_DDP_T_BASE_BOUNDS;
		*disp = SIW2_RX_RTR;
		return 0;
	}
	cause = read_resp_match(ctx->oldest, seg->hdr.stag, seg->hdr.to,
				seg->len);
	if (!cause && !seg->len)
		*disp = SIW2_RX_SKIP;
	return cause;
}

/*
 * RFC 6581 9.2: a peer-to-peer initiator's first message may be the RTR,
 * a zero-length Send or Read Request (a zero-length Write, the third
 * kind, places nothing like any other). The RTR is for the MPA layer
 * alone: it completes no receive and takes no IRD credit.
 */
static bool is_rtr(const struct siw2_rdmap_rx_ctx *ctx,
		   const struct siw2_ddp_seg *seg)
{
	if (!ctx->await_rtr)
		return false;
	if (seg->op->cls == SIW2_CLASS_SEND)
		return seg->first && !seg->len && seg->hdr.last;
	return seg->op->cls == SIW2_CLASS_READ_REQ && !seg->hdr.rreq.size;
}

/**
 * siw2_rdmap_rx_begin() - RDMAP's rules for a segment whose header DDP
 * accepted, before its first payload octet is placed
 * @ctx: the stream's view of its requests
 * @seg: the segment (siw2_ddp_rx_seg())
 * @disp: set to what the caller does with it
 *
 * With SIW2_RX_PLACE the caller finds the segment's sink and checks it
 * before placing (siw2_ddp_check_tagged() for a Write; for a Send the
 * receive buffer, siw2_ddp_rx_check_untagged()); a Read Response matched
 * the oldest Read here, and its sink is the one that Read named. With
 * SIW2_RX_RTR on a Read Response, @ctx->rtr_read_out is answered.
 *
 * Return: 0, or the Terminate cause.
 */
u32 siw2_rdmap_rx_begin(const struct siw2_rdmap_rx_ctx *ctx,
			const struct siw2_ddp_seg *seg,
			enum siw2_rdmap_rx_disp *disp)
{
	*disp = SIW2_RX_PLACE;
	if (is_rtr(ctx, seg)) {
		*disp = SIW2_RX_RTR;
		return 0;
	}
	switch (seg->op->cls) {
	case SIW2_CLASS_WRITE:
		/* A zero-length Write names no buffer (RFC 5040 5.3). */
		if (!seg->len)
			*disp = SIW2_RX_SKIP;
		return 0;
	case SIW2_CLASS_READ_RESP:
		return read_resp_begin(ctx, seg, disp);
	case SIW2_CLASS_SEND:
	case SIW2_CLASS_IMM:
		return 0;
	case SIW2_CLASS_READ_REQ:
	case SIW2_CLASS_TERMINATE:
	case SIW2_CLASS_ATOMIC_REQ:
	case SIW2_CLASS_ATOMIC_RESP:
		/* One segment of header only: all is done at its end. */
		*disp = SIW2_RX_SKIP;
		return 0;
	default:
		return SIW2_TERM_RDMAP_OPCODE;
	}
}

/**
 * siw2_rdmap_read_resp_end() - a Read Response segment was placed and
 * its FPDU verified
 * @o: the Read it matched (siw2_rdmap_rx_begin())
 * @len: the segment's payload octets
 * @last: its DDP Last flag
 * @done: set when the Response is complete: the caller retires @o and
 *	frees its ORD credit (siw2_rdmap_ord_complete())
 *
 * Return: 0, or SIW2_TERM_DDP_T_BASE_BOUNDS if the Response ended short
 * of what the Read asked for.
 */
u32 siw2_rdmap_read_resp_end(struct siw2_rdmap_read *o, u32 len, bool last,
			     bool *done)
{
	*done = false;
	o->got += len;
	if (!last)
		return 0;
	if (o->got != o->len)
		return SIW2_TERM_DDP_T_BASE_BOUNDS;
	*done = true;
	return 0;
}

/**
 * siw2_rdmap_atomic_resp_check() - does an Atomic Response answer our
 * oldest request?
 * @ctx: the stream's view of its requests
 * @req_id: the Response's Original Request Identifier
 *
 * RFC 7306: Responses come in the order of the Requests, each naming its
 * Request by the identifier it was sent with.
 *
 * Return: 0, or SIW2_TERM_RDMAP_OP_UNSPEC.
 */
u32 siw2_rdmap_atomic_resp_check(const struct siw2_rdmap_rx_ctx *ctx,
				 u32 req_id)
{
	if (!ctx->oldest || !ctx->oldest->atomic || req_id != ctx->oldest_id)
		return SIW2_TERM_RDMAP_OP_UNSPEC;
	return 0;
}

/**
 * siw2_rdmap_ird_admit() - take an inbound Read or Atomic Request on
 * @ird: the stream's inbound request accounting
 * @rtr: it is the peer-to-peer RTR (RFC 6581 9.2), which takes no credit
 * @room: the caller has a queue entry to answer it from
 *
 * RFC 5040 5.2, RFC 6581 9.1: no more Requests in progress than our IRD
 * (siw2_rdmap_ird_begin()). A credit is taken only when 0 is returned
 * and @rtr is false; siw2_rdmap_ird_end() gives it back.
 *
 * Return: 0, or SIW2_TERM_DDP_U_MSN_NOBUF.
 */
u32 siw2_rdmap_ird_admit(struct siw2_rdmap_ird *ird, bool rtr, bool room)
{
	if (!room)
		return SIW2_TERM_DDP_U_MSN_NOBUF;
	return rtr ? 0 : siw2_rdmap_ird_begin(ird);
}

/**
 * siw2_rdmap_atomic_fetch_add() - set up an unmasked Fetch and Add
 * @a: request to fill (op, operands and masks; the caller sets the rest)
 * @add: value to add
 *
 * A zero add mask marks no field boundary: one 64-bit addition.
 */
void siw2_rdmap_atomic_fetch_add(struct siw2_atomic *a, u64 add)
{
	a->op = SIW2_ATOMIC_FETCH_ADD;
	a->add_swap = add;
	a->add_swap_mask = 0;
	a->cmp = 0;
	a->cmp_mask = 0;
}

/**
 * siw2_rdmap_atomic_cmp_swap() - set up an unmasked Compare and Swap
 * @a: request to fill (op, operands and masks; the caller sets the rest)
 * @cmp: value expected at the target
 * @swap: value stored if it matched
 *
 * All-ones masks compare and swap all 64 bits.
 */
void siw2_rdmap_atomic_cmp_swap(struct siw2_atomic *a, u64 cmp, u64 swap)
{
	a->op = SIW2_ATOMIC_CMP_SWAP;
	a->add_swap = swap;
	a->add_swap_mask = U64_MAX;
	a->cmp = cmp;
	a->cmp_mask = U64_MAX;
}

/**
 * siw2_rdmap_atomic_check() - the responder's checks of an Atomic Request
 * @a: the request
 * @v: what the caller's lookup of @a->stag found
 *
 * RFC 7306 operates on 64 bits at an 8-octet aligned Tagged Offset. It
 * names no error code of its own for a reserved subcode or a misaligned
 * offset; both are reported as unspecified remote operation errors. The
 * STag checks are RDMAP's (siw2_rdmap_check_stag()).
 *
 * Return: 0, or the Terminate cause.
 */
u32 siw2_rdmap_atomic_check(const struct siw2_atomic *a,
			    const struct siw2_stag_view *v)
{
	if (a->op > SIW2_ATOMIC_CMP_SWAP)
		return SIW2_TERM_RDMAP_OP_UNSPEC;
	if (a->to & 7)
		return SIW2_TERM_RDMAP_OP_UNSPEC;
	return siw2_rdmap_check_stag(v, a->to, sizeof(u64));
}

/*
 * Masked Fetch and Add: a set bit in @bounds marks the most significant
 * bit of a field; each field is added on its own and its carry out is
 * dropped. No bit set is one plain 64-bit addition.
 */
static u64 fetch_add(u64 old, u64 add, u64 bounds)
{
	u64 res = 0, field;
	unsigned int lo = 0, bit;

	for (bit = 0; bit < 64; bit++) {
		if (bit != 63 && !(bounds & BIT_ULL(bit)))
			continue;
		field = GENMASK_ULL(bit, lo);
		res |= ((old & field) + (add & field)) & field;
		lo = bit + 1;
	}
	return res;
}

/**
 * siw2_rdmap_atomic_apply() - the value an Atomic Request leaves behind
 * @a: a request that passed siw2_rdmap_atomic_check()
 * @old: the 64-bit value at the target before the operation
 *
 * The caller reads @old, stores the result and returns @old in the Atomic
 * Response, all under its lock; this is only the arithmetic.
 * Swap replaces the bits of the swap mask; Compare and Swap does so only
 * when the bits of the compare mask match; Fetch and Add adds field by
 * field (fetch_add()).
 *
 * Return: the new value (@old when nothing changes).
 */
u64 siw2_rdmap_atomic_apply(const struct siw2_atomic *a, u64 old)
{
	switch (a->op) {
	case SIW2_ATOMIC_FETCH_ADD:
		return fetch_add(old, a->add_swap, a->add_swap_mask);
	case SIW2_ATOMIC_CMP_SWAP:
		if ((old ^ a->cmp) & a->cmp_mask)
			return old;
		fallthrough;
	case SIW2_ATOMIC_SWAP:
		return (old & ~a->add_swap_mask) |
		       (a->add_swap & a->add_swap_mask);
	default:
		return old;
	}
}
