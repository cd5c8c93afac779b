/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * RDMAP (RFC 5040) and its extensions (RFC 7306) as pure code: the opcode
 * table, header build and parse, Terminate build and parse, the checks
 * RDMAP makes on a message, the receive rules (a Read or Atomic Response
 * against our oldest request, the RFC 6581 RTR, IRD admission), ORD/IRD
 * accounting, fences, and the atomic arithmetic. Nothing here touches
 * memory objects, sockets or locks: the caller looks its STags up and
 * passes what it found.
 */
#ifndef SIW2_RDMAP_H
#define SIW2_RDMAP_H

#include <linux/types.h>
#include "wire.h"

/* What the receive path does with a message of an opcode. */
enum siw2_rdmap_class {
	SIW2_CLASS_RESERVED = 0,
	SIW2_CLASS_WRITE,
	SIW2_CLASS_READ_REQ,
	SIW2_CLASS_READ_RESP,
	SIW2_CLASS_SEND,
	SIW2_CLASS_TERMINATE,
	SIW2_CLASS_IMM,
	SIW2_CLASS_ATOMIC_REQ,
	SIW2_CLASS_ATOMIC_RESP,
};

/**
 * struct siw2_rdmap_op_info - fixed properties of one RDMAP opcode
 * @hdr_len: DDP plus RDMAP header octets at the start of every segment
 * @qn: untagged queue number (unused when @tagged)
 * @cls: handler class
 * @tagged: sent with the DDP tagged buffer model
 * @payload: may carry ULP payload, and so span several segments; opcodes
 *	without it are one segment of exactly @hdr_len octets
 * @consumes_rq: consumes a receive WQE at the Data Sink
 * @inval: carries an Invalidate STag
 * @se: asks for a solicited event
 * @ext: defined by RFC 7306 rather than RFC 5040
 */
struct siw2_rdmap_op_info {
	u8 hdr_len;
	u8 qn;
	enum siw2_rdmap_class cls;
	bool tagged;
	bool payload;
	bool consumes_rq;
	bool inval;
	bool se;
	bool ext;
};

/* RFC 7306 Atomic Request fields, host order. */
struct siw2_atomic {
	u8 op;
	u32 req_id;
	u32 stag;
	u64 to;
	u64 add_swap;
	u64 add_swap_mask;
	u64 cmp;
	u64 cmp_mask;
};

/**
 * struct siw2_rdmap_hdr - one segment's DDP and RDMAP header, host order
 * @opcode: RDMAP opcode
 * @last: DDP Last flag
 * @stag: tagged: the Data Sink's STag
 * @to: tagged: the Tagged Offset of the segment's first payload octet
 * @qn: untagged: queue number (the builder takes it from the opcode table)
 * @msn: untagged: message sequence number
 * @mo: untagged: message offset of the segment's first payload octet
 * @inval_stag: Send with Invalidate variants: the STag to invalidate
 * @rreq: Read Request: sink STag/TO, size, source STag/TO
 * @term_ctrl: Terminate: control word (layer, type, code, Hdr Ctrl)
 * @imm: Immediate Data variants: the immediate data
 * @atomic: Atomic Request
 * @aresp: Atomic Response: request identifier and original remote value
 */
struct siw2_rdmap_hdr {
	u8 opcode;
	bool last;
	u32 stag;
	u64 to;
	u32 qn;
	u32 msn;
	u32 mo;
	u32 inval_stag;
	union {
		struct {
			u32 sink_stag;
			u64 sink_to;
			u32 size;
			u32 src_stag;
			u64 src_to;
		} rreq;
		u32 term_ctrl;
		u64 imm;
		struct siw2_atomic atomic;
		struct {
			u32 req_id;
			u64 orig;
		} aresp;
	};
};

/* rdmap.c: indexed by opcode; reserved opcodes have SIW2_CLASS_RESERVED. */
extern const struct siw2_rdmap_op_info siw2_rdmap_ops[SIW2_RDMAP_OP_MAX + 1];

/**
 * siw2_rdmap_op() - properties of an opcode
 * @opcode: RDMAP opcode, any value
 *
 * Return: the table entry, or NULL for a reserved opcode.
 */
static inline const struct siw2_rdmap_op_info *siw2_rdmap_op(u8 opcode)
{
	if (opcode > SIW2_RDMAP_OP_MAX ||
	    siw2_rdmap_ops[opcode].cls == SIW2_CLASS_RESERVED)
		return NULL;
	return &siw2_rdmap_ops[opcode];
}

u32 siw2_rdmap_ctrl_check(u8 ddp_ctrl, u8 rdmap_ctrl, bool ext,
			  const struct siw2_rdmap_op_info **op);
u32 siw2_rdmap_build(union siw2_iwarp_hdr *h, const struct siw2_rdmap_hdr *m);
u32 siw2_rdmap_parse(const union siw2_iwarp_hdr *h, u32 len, bool ext,
		     struct siw2_rdmap_hdr *m);

/**
 * struct siw2_stag_view - what the caller found when it looked an STag up
 * @valid: the STag names a valid memory region or window
 * @assoc: it belongs to this stream's protection domain (or stream)
 * @access: it grants the access the operation needs
 * @base: first valid Tagged Offset
 * @len: octets valid from @base
 */
struct siw2_stag_view {
	bool valid;
	bool assoc;
	bool access;
	u64 base;
	u64 len;
};

/**
 * siw2_range_ok() - is [to, to + len) inside [base, base + size)?
 * @to: first octet
 * @len: octets
 * @base: first valid octet
 * @size: valid octets
 *
 * Overflow-safe for every input: no sum is formed.
 */
static inline bool siw2_range_ok(u64 to, u64 len, u64 base, u64 size)
{
	if (to < base || to - base > size)
		return false;
	return len <= size - (to - base);
}

u32 siw2_rdmap_check_stag(const struct siw2_stag_view *v, u64 to, u64 len);

/**
 * struct siw2_inval_view - the STag a Send with Invalidate names
 * @exists: the STag names a memory region or window
 * @same_pd: it belongs to this stream's protection domain
 * @invalidatable: it may be invalidated remotely (not a local-only STag,
 *	no windows bound to the region)
 */
struct siw2_inval_view {
	bool exists;
	bool same_pd;
	bool invalidatable;
};

u32 siw2_rdmap_check_inval(const struct siw2_inval_view *v);

/**
 * struct siw2_term_info - a Terminate message's body, to send or received
 * @cause: layer, error type and error code (SIW2_TERM_*)
 * @hdrctl: SIW2_TERM_M, SIW2_TERM_D and SIW2_TERM_R as on the wire
 * @seg_len: DDP segment length of the offending segment (valid with M)
 * @ddp_len: octets in @ddp_hdr (0, 14 or 18; nonzero only with D)
 * @rdmap_len: octets in @rdmap_hdr (0, 28 or 52; nonzero only with R)
 * @ddp_hdr: copy of the offending DDP header
 * @rdmap_hdr: copy of the offending RDMAP header
 */
struct siw2_term_info {
	u32 cause;
	u32 hdrctl;
	u16 seg_len;
	u8 ddp_len;
	u8 rdmap_len;
	u8 ddp_hdr[sizeof(struct siw2_ddp_untagged_hdr)];
	u8 rdmap_hdr[sizeof(struct siw2_rdmap_atomic_req)];
};

void siw2_rdmap_term_prepare(struct siw2_term_info *t, u32 cause,
			     const u8 *bad, u32 bad_len, u32 seg_len);
u32 siw2_rdmap_term_build(u8 *buf, u32 size, const struct siw2_term_info *t);
int siw2_rdmap_term_parse(u32 term_ctrl, const u8 *body, u32 len,
			  struct siw2_term_info *t);

/**
 * struct siw2_term_blame - the request of ours a received Terminate ends
 * @atomic: an Atomic Request, known by @req_id; else a Read Request,
 *	known by its sink, @sink_stag and @sink_to
 * @access: a protection error (the verbs' remote access error); else any
 *	other (a remote operation error)
 * @req_id: the Atomic Request's Request Identifier
 * @sink_stag: the Read Request's Data Sink STag
 * @sink_to: ... and Tagged Offset
 */
struct siw2_term_blame {
	bool atomic;
	bool access;
	u32 req_id;
	u32 sink_stag;
	u64 sink_to;
};

bool siw2_rdmap_term_blame(const struct siw2_term_info *t,
			   struct siw2_term_blame *b);

/*
 * ORD: the Local Peer's outbound RDMA Read and Atomic Requests that have
 * not yet been answered. IRD: inbound ones the Local Peer is answering.
 * Both are plain counters owned by the caller, under the caller's lock.
 */
struct siw2_rdmap_ord {
	u32 max;
	u32 outstanding;
};

struct siw2_rdmap_ird {
	u32 max;
	u32 active;
};

/* Why a send queue element cannot start yet. */
enum siw2_rdmap_issue {
	SIW2_ISSUE_NOW = 0,
	SIW2_ISSUE_WAIT_ORD,
	SIW2_ISSUE_WAIT_FENCE,
};

enum siw2_rdmap_issue siw2_rdmap_may_issue(const struct siw2_rdmap_ord *o,
					   u8 opcode, bool fence);
int siw2_rdmap_ord_issue(struct siw2_rdmap_ord *o, u8 opcode, bool fence);
int siw2_rdmap_ord_complete(struct siw2_rdmap_ord *o);
u32 siw2_rdmap_ird_begin(struct siw2_rdmap_ird *ird);
int siw2_rdmap_ird_end(struct siw2_rdmap_ird *ird);

/*
 * Receive rules that need the stream's view of its own requests. The
 * caller passes that view for every segment (struct siw2_rdmap_rx_ctx):
 * nothing here keeps a pointer across calls.
 */

/**
 * struct siw2_rdmap_read - an outstanding RDMA Read or Atomic Request of
 * ours, as its response is matched against it
 * @sink_stag: the Data Sink STag the Request named
 * @sink_to: its Tagged Offset
 * @len: octets asked for (an Atomic Request: 8, its Original Value)
 * @got: octets of the response placed so far
 * @atomic: an RFC 7306 Atomic Request
 */
struct siw2_rdmap_read {
	u32 sink_stag;
	u64 sink_to;
	u32 len;
	u32 got;
	bool atomic;
};

/**
 * struct siw2_rdmap_rx_ctx - what the receive rules need of the stream
 * @await_rtr: RFC 6581 9.2: we are a peer-to-peer responder and no
 *	message has arrived complete, so the next may be the RTR
 * @rtr_read_out: our zero-length Read RTR awaits its Read Response
 * @oldest: our oldest outstanding Read or Atomic Request, NULL if none
 * @oldest_id: its ORQ index, the Request Identifier an Atomic Request
 *	went out with
 */
struct siw2_rdmap_rx_ctx {
	bool await_rtr;
	bool rtr_read_out;
	const struct siw2_rdmap_read *oldest;
	u32 oldest_id;
};

/* What the receive path does with a segment whose header checked out. */
enum siw2_rdmap_rx_disp {
	SIW2_RX_PLACE = 0,	/* find its sink, place its payload */
	SIW2_RX_SKIP,		/* nothing to place; acted upon at its end */
	SIW2_RX_RTR,		/* the RTR: for the MPA layer alone */
};

struct siw2_ddp_seg;
u32 siw2_rdmap_rx_begin(const struct siw2_rdmap_rx_ctx *ctx,
			const struct siw2_ddp_seg *seg,
			enum siw2_rdmap_rx_disp *disp);
u32 siw2_rdmap_read_resp_end(struct siw2_rdmap_read *o, u32 len, bool last,
			     bool *done);
u32 siw2_rdmap_atomic_resp_check(const struct siw2_rdmap_rx_ctx *ctx,
				 u32 req_id);
u32 siw2_rdmap_ird_admit(struct siw2_rdmap_ird *ird, bool rtr, bool room);

void siw2_rdmap_atomic_fetch_add(struct siw2_atomic *a, u64 add);
void siw2_rdmap_atomic_cmp_swap(struct siw2_atomic *a, u64 cmp, u64 swap);
u32 siw2_rdmap_atomic_check(const struct siw2_atomic *a,
			    const struct siw2_stag_view *v);
u64 siw2_rdmap_atomic_apply(const struct siw2_atomic *a, u64 old);

#endif /* SIW2_RDMAP_H */
