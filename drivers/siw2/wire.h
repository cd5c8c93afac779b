/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Every iWARP wire format siw2 sends or receives: MPA (RFC 5044, RFC 6581),
 * DDP (RFC 5041), RDMAP (RFC 5040) and the RDMAP extensions (RFC 7306).
 *
 * All multi-octet fields are big endian on the wire and declared with
 * __be types so that sparse catches a missing conversion. Structures are
 * __packed where the RFC layout is not naturally aligned; sizes are pinned
 * with static_assert below each structure.
 */
#ifndef SIW2_WIRE_H
#define SIW2_WIRE_H

#include <linux/types.h>
#include <linux/build_bug.h>

/* ===== MPA (RFC 5044, RFC 6581) ===== */

/*
 * RFC 5044 7.1.1: MPA Request and Reply frames, sent in streaming mode
 * before Full Operation. RFC 6581 6 takes the S bit out of Res.
 */
#define SIW2_MPA_KEY_LEN 16
#define SIW2_MPA_KEY_REQ "MPA ID Req Frame"
#define SIW2_MPA_KEY_REP "MPA ID Rep Frame"

struct siw2_mpa_rr {
	u8 key[SIW2_MPA_KEY_LEN];
	u8 flags;			/* SIW2_MPA_FLAG_* */
	u8 rev;
	__be16 pd_len;			/* octets of Private Data that follow */
};

static_assert(sizeof(struct siw2_mpa_rr) == 20);

#define SIW2_MPA_FLAG_M 0x80	/* sender wants Markers in what it receives */
#define SIW2_MPA_FLAG_C 0x40	/* sender prefers CRCs */
#define SIW2_MPA_FLAG_R 0x20	/* Reply only: connection rejected */
#define SIW2_MPA_FLAG_S 0x10	/* RFC 6581: Private Data starts with siw2_mpa_v2 */
/*
 * Not RFC 5044, whose 7.1.1 wants the Res bits zero: the sender takes and
 * sends FPDUs larger than a TCP segment. Upstream siw's try_gso uses this
 * bit the same way. Sent only when the administrator opts in.
 */
#define SIW2_MPA_FLAG_G 0x08

#define SIW2_MPA_REV_1 1	/* RFC 5044 */
#define SIW2_MPA_REV_2 2	/* RFC 6581 enhanced connection establishment */

/* RFC 5044 7.1.1: Private Data is 0..512 octets, the RFC 6581 prefix included. */
#define SIW2_MPA_PD_MAX 512
#define SIW2_MPA_FRAME_MAX (sizeof(struct siw2_mpa_rr) + SIW2_MPA_PD_MAX)

/*
 * RFC 6581 9: enhanced connection establishment data, the first four octets
 * of Private Data when S is set: A|B|IRD(14) then C|D|ORD(14).
 */
struct siw2_mpa_v2 {
	__be16 ird;
	__be16 ord;
};

static_assert(sizeof(struct siw2_mpa_v2) == 4);

#define SIW2_MPA_V2_A 0x8000		/* in ird: peer-to-peer model */
#define SIW2_MPA_V2_B 0x4000		/* in ird: zero-length Send RTR */
#define SIW2_MPA_V2_C 0x8000		/* in ord: zero-length RDMA Write RTR */
#define SIW2_MPA_V2_D 0x4000		/* in ord: zero-length RDMA Read RTR */
#define SIW2_MPA_V2_IRD_ORD_MASK 0x3fff
/* RFC 6581 9.1: all ones, no automatic IRD/ORD negotiation (the ULP's job). */
#define SIW2_MPA_IRD_ORD_NONE 0x3fff

/*
 * RFC 5044 4.1: an FPDU is ULPDU_Length, the ULPDU, 0..3 octets of pad to a
 * multiple of four, then the CRC field; Markers are inserted on top.
 */
struct siw2_mpa_fpdu_hdr {
	__be16 ulpdu_len;
};

static_assert(sizeof(struct siw2_mpa_fpdu_hdr) == 2);

/*
 * RFC 5044 4.4 computes the CRC "as iSCSI does" (RFC 3720): the CRC32c value
 * goes on the wire least significant octet first. RFC 5044 Figure 5 sends
 * the value 0x83992352 as 52 23 99 83, RFC 3720 B.4 sends 0x8a9136aa as
 * aa 36 91 8a.
 */
struct siw2_mpa_crc {
	__le32 crc;
};

static_assert(sizeof(struct siw2_mpa_crc) == 4);

/* RFC 5044 4.2 */
struct siw2_mpa_marker {
	__be16 reserved;
	__be16 fpduptr;		/* back to ULPDU_Length; low two bits zero */
};

static_assert(sizeof(struct siw2_mpa_marker) == 4);

#define SIW2_MPA_HDR_LEN sizeof(struct siw2_mpa_fpdu_hdr)
#define SIW2_MPA_CRC_LEN sizeof(struct siw2_mpa_crc)
#define SIW2_MPA_MARKER_LEN sizeof(struct siw2_mpa_marker)
/* RFC 5044 4.3: one Marker every 512 octets of TCP sequence space. */
#define SIW2_MPA_MARKER_INTERVAL 512
#define SIW2_MPA_FPDUPTR_MASK 0xfffc

/* RFC 5044 3: MULPDU stays within 128..64768; no ULPDU exceeds 64768. */
#define SIW2_MPA_MULPDU_MIN 128
#define SIW2_MPA_MULPDU_MAX 64768

/*
 * Terminate Layer / Error Type / Error Code for MPA errors: layer LLP, type
 * MPA (RFC 6581 8; registry RFC 6580 3.3); codes 1..4 from RFC 5044 8,
 * 5..7 from RFC 6581 8.
 */
#define SIW2_MPA_TERM_LAYER 0x2
#define SIW2_MPA_TERM_ETYPE 0x0
#define SIW2_MPA_ECODE_LLP_LOST 0x01		/* TCP closed, reset or timed out */
#define SIW2_MPA_ECODE_CRC 0x02			/* CRC mismatch */
#define SIW2_MPA_ECODE_MARKER 0x03		/* Marker and ULPDU_Length disagree */
#define SIW2_MPA_ECODE_BAD_RR 0x04		/* invalid Request or Reply frame */
#define SIW2_MPA_ECODE_LOCAL 0x05		/* local catastrophic */
#define SIW2_MPA_ECODE_IRD 0x06			/* insufficient IRD resources */
#define SIW2_MPA_ECODE_RTR 0x07			/* no matching RTR option */

/* ===== DDP (RFC 5041), RDMAP (RFC 5040, RFC 7306) ===== */

/*
 * Every DDP segment starts with two control octets: the DDP control field
 * (RFC 5041 4.1) and the first octet of the DDP RsvdULP field, which RDMAP
 * uses as its control field (RFC 5040 4.2).
 */
#define SIW2_DDP_VERSION	1
#define SIW2_DDP_T		0x80	/* tagged buffer model */
#define SIW2_DDP_L		0x40	/* last segment of the message */
#define SIW2_DDP_RSVD		0x3c	/* zero on transmit, not checked */
#define SIW2_DDP_DV		0x03	/* DDP version */

#define SIW2_RDMAP_VERSION	1
#define SIW2_RDMAP_RV		0xc0	/* RDMAP version */
#define SIW2_RDMAP_RV_SHIFT	6
#define SIW2_RDMAP_RSVD		0x30	/* zero on transmit, not checked */
#define SIW2_RDMAP_OPCODE	0x0f

/*
 * RFC 5040 4.3 (0x0-0x7) and RFC 7306 (0x8-0xb); the rest is reserved.
 * RFC 7306 gives RDMA Write with Immediate Data no opcode of its own: it
 * is an RDMA Write message followed by an Immediate Data message.
 */
enum siw2_rdmap_opcode {
	SIW2_RDMAP_OP_WRITE		= 0x0,
	SIW2_RDMAP_OP_READ_REQ		= 0x1,
	SIW2_RDMAP_OP_READ_RESP		= 0x2,
	SIW2_RDMAP_OP_SEND		= 0x3,
	SIW2_RDMAP_OP_SEND_INV		= 0x4,
	SIW2_RDMAP_OP_SEND_SE		= 0x5,
	SIW2_RDMAP_OP_SEND_SE_INV	= 0x6,
	SIW2_RDMAP_OP_TERMINATE		= 0x7,
	SIW2_RDMAP_OP_IMM		= 0x8,
	SIW2_RDMAP_OP_IMM_SE		= 0x9,
	SIW2_RDMAP_OP_ATOMIC_REQ	= 0xa,
	SIW2_RDMAP_OP_ATOMIC_RESP	= 0xb,
	SIW2_RDMAP_OP_MAX		= 0xf,
};

/*
 * Untagged queue numbers. RFC 5040 4.1: Sends use queue 0, RDMA Read
 * Requests queue 1, Terminate queue 2. RFC 7306 puts Atomic Requests on
 * queue 1 beside the Read Requests (both draw on the responder's IRD) and
 * Atomic Responses on the new queue 3.
 */
enum siw2_ddp_qn {
	SIW2_QN_SEND		= 0,
	SIW2_QN_READ_REQ	= 1,
	SIW2_QN_TERMINATE	= 2,
	SIW2_QN_ATOMIC_RESP	= 3,
	SIW2_QN_COUNT		= 4,
};

/* RFC 5041 4.2: tagged buffer header; RsvdULP is the RDMAP control field. */
struct siw2_ddp_tagged_hdr {
	u8 ddp_ctrl;
	u8 rdmap_ctrl;
	__be32 stag;
	__be64 to;
} __packed;
static_assert(sizeof(struct siw2_ddp_tagged_hdr) == 14);

/*
 * RFC 5041 4.3: untagged buffer header. RsvdULP[8:39] carries the
 * Invalidate STag of the Send with Invalidate variants (RFC 5040 4.3) and
 * is zero otherwise.
 */
struct siw2_ddp_untagged_hdr {
	u8 ddp_ctrl;
	u8 rdmap_ctrl;
	__be32 inval_stag;
	__be32 qn;
	__be32 msn;
	__be32 mo;
} __packed;
static_assert(sizeof(struct siw2_ddp_untagged_hdr) == 18);

/* RFC 5040 4.4: RDMA Read Request header, after the untagged DDP header. */
struct siw2_rdmap_read_req {
	__be32 sink_stag;
	__be64 sink_to;
	__be32 size;
	__be32 src_stag;
	__be64 src_to;
} __packed;
static_assert(sizeof(struct siw2_rdmap_read_req) == 28);

/*
 * RFC 5040 4.8: Terminate header. The control word is followed, as the
 * Hdr Ctrl bits say, by the DDP segment length (16 bits) and copies of the
 * offending DDP header and RDMAP header.
 */
struct siw2_rdmap_term {
	__be32 ctrl;
} __packed;
static_assert(sizeof(struct siw2_rdmap_term) == 4);

#define SIW2_TERM_LAYER		0xf0000000
#define SIW2_TERM_LAYER_SHIFT	28
#define SIW2_TERM_ETYPE		0x0f000000
#define SIW2_TERM_ETYPE_SHIFT	24
#define SIW2_TERM_ECODE		0x00ff0000
#define SIW2_TERM_ECODE_SHIFT	16
#define SIW2_TERM_M		0x00008000	/* DDP segment length valid */
#define SIW2_TERM_D		0x00004000	/* DDP header included */
#define SIW2_TERM_R		0x00002000	/* RDMAP header included */
#define SIW2_TERM_RSVD		0x00001fff

/* RFC 7306: Immediate Data (with SE) message body. */
struct siw2_rdmap_imm {
	__be64 data;
} __packed;
static_assert(sizeof(struct siw2_rdmap_imm) == 8);

/* RFC 7306: Atomic Request header, after the untagged DDP header. */
struct siw2_rdmap_atomic_req {
	__be32 op;		/* low 4 bits: atomic operation subcode */
	__be32 req_id;
	__be32 stag;
	__be64 to;
	__be64 add_swap;
	__be64 add_swap_mask;
	__be64 cmp;
	__be64 cmp_mask;
} __packed;
static_assert(sizeof(struct siw2_rdmap_atomic_req) == 52);

#define SIW2_ATOMIC_OP		0x0000000f

/* RFC 7306 Atomic Operation Subcodes (IANA RDDP registry) */
enum siw2_atomic_op {
	SIW2_ATOMIC_FETCH_ADD	= 0x0,
	SIW2_ATOMIC_SWAP	= 0x1,
	SIW2_ATOMIC_CMP_SWAP	= 0x2,
};

/* RFC 7306: Atomic Response header, after the untagged DDP header. */
struct siw2_rdmap_atomic_resp {
	__be32 req_id;
	__be64 orig;
} __packed;
static_assert(sizeof(struct siw2_rdmap_atomic_resp) == 12);

/* Whole DDP + RDMAP headers, one per message layout. */
struct siw2_hdr_read_req {
	struct siw2_ddp_untagged_hdr ddp;
	struct siw2_rdmap_read_req rreq;
} __packed;
static_assert(sizeof(struct siw2_hdr_read_req) == 46);

struct siw2_hdr_terminate {
	struct siw2_ddp_untagged_hdr ddp;
	struct siw2_rdmap_term term;
} __packed;
static_assert(sizeof(struct siw2_hdr_terminate) == 22);

struct siw2_hdr_imm {
	struct siw2_ddp_untagged_hdr ddp;
	struct siw2_rdmap_imm imm;
} __packed;
static_assert(sizeof(struct siw2_hdr_imm) == 26);

struct siw2_hdr_atomic_req {
	struct siw2_ddp_untagged_hdr ddp;
	struct siw2_rdmap_atomic_req areq;
} __packed;
static_assert(sizeof(struct siw2_hdr_atomic_req) == 70);

struct siw2_hdr_atomic_resp {
	struct siw2_ddp_untagged_hdr ddp;
	struct siw2_rdmap_atomic_resp aresp;
} __packed;
static_assert(sizeof(struct siw2_hdr_atomic_resp) == 30);

union siw2_iwarp_hdr {
	u8 raw[70];
	struct siw2_ddp_tagged_hdr tagged;
	struct siw2_ddp_untagged_hdr untagged;
	struct siw2_hdr_read_req read_req;
	struct siw2_hdr_terminate term;
	struct siw2_hdr_imm imm;
	struct siw2_hdr_atomic_req atomic_req;
	struct siw2_hdr_atomic_resp atomic_resp;
};

static_assert(sizeof(union siw2_iwarp_hdr) == 70);

#define SIW2_HDR_MAX		sizeof(union siw2_iwarp_hdr)

/*
 * Largest Terminate body after the control word: segment length, an
 * untagged DDP header and the largest RDMAP header that may be copied
 * (an Atomic Request's).
 */
#define SIW2_TERM_BODY_MAX	(2 + sizeof(struct siw2_ddp_untagged_hdr) + \
				 sizeof(struct siw2_rdmap_atomic_req))

/*
 * Terminate causes (RFC 5040 4.8, RFC 5041 7.2): layer, error type
 * and error code packed into one value; bit 31 marks it as set, so that
 * zero means "no error" although 0/0/0 is a real cause.
 */
#define SIW2_TERM_SET		0x80000000u
#define SIW2_TERM(layer, etype, ecode) \
	(SIW2_TERM_SET | (u32)(layer) << 16 | (u32)(etype) << 8 | (u32)(ecode))
#define SIW2_TERM_CAUSE_LAYER(t)	(((t) >> 16) & 0xf)
#define SIW2_TERM_CAUSE_ETYPE(t)	(((t) >> 8) & 0xf)
#define SIW2_TERM_CAUSE_ECODE(t)	((t) & 0xff)

#define SIW2_LAYER_RDMAP	0x0
#define SIW2_LAYER_DDP		0x1
#define SIW2_LAYER_LLP		0x2	/* MPA: its codes are in the MPA section */

#define SIW2_ETYPE_CATASTROPHIC	0x0	/* RDMAP and DDP */
#define SIW2_ETYPE_RDMAP_PROT	0x1	/* remote protection error */
#define SIW2_ETYPE_RDMAP_OP	0x2	/* remote operation error */
#define SIW2_ETYPE_DDP_TAGGED	0x1
#define SIW2_ETYPE_DDP_UNTAGGED	0x2

/* RDMAP layer (RFC 5040 4.8). */
#define SIW2_TERM_RDMAP_CATASTROPHIC \
	SIW2_TERM(SIW2_LAYER_RDMAP, SIW2_ETYPE_CATASTROPHIC, 0x00)
#define SIW2_TERM_RDMAP_INVALID_STAG \
	SIW2_TERM(SIW2_LAYER_RDMAP, SIW2_ETYPE_RDMAP_PROT, 0x00)
#define SIW2_TERM_RDMAP_BASE_BOUNDS \
	SIW2_TERM(SIW2_LAYER_RDMAP, SIW2_ETYPE_RDMAP_PROT, 0x01)
#define SIW2_TERM_RDMAP_ACCESS \
	SIW2_TERM(SIW2_LAYER_RDMAP, SIW2_ETYPE_RDMAP_PROT, 0x02)
#define SIW2_TERM_RDMAP_STAG_NOT_ASSOC \
	SIW2_TERM(SIW2_LAYER_RDMAP, SIW2_ETYPE_RDMAP_PROT, 0x03)
#define SIW2_TERM_RDMAP_TO_WRAP \
	SIW2_TERM(SIW2_LAYER_RDMAP, SIW2_ETYPE_RDMAP_PROT, 0x04)
#define SIW2_TERM_RDMAP_PROT_CANNOT_INV \
	SIW2_TERM(SIW2_LAYER_RDMAP, SIW2_ETYPE_RDMAP_PROT, 0x09)
#define SIW2_TERM_RDMAP_PROT_UNSPEC \
	SIW2_TERM(SIW2_LAYER_RDMAP, SIW2_ETYPE_RDMAP_PROT, 0xff)
#define SIW2_TERM_RDMAP_VERSION \
	SIW2_TERM(SIW2_LAYER_RDMAP, SIW2_ETYPE_RDMAP_OP, 0x05)
#define SIW2_TERM_RDMAP_OPCODE \
	SIW2_TERM(SIW2_LAYER_RDMAP, SIW2_ETYPE_RDMAP_OP, 0x06)
#define SIW2_TERM_RDMAP_STREAM_CATASTROPHIC \
	SIW2_TERM(SIW2_LAYER_RDMAP, SIW2_ETYPE_RDMAP_OP, 0x07)
#define SIW2_TERM_RDMAP_GLOBAL_CATASTROPHIC \
	SIW2_TERM(SIW2_LAYER_RDMAP, SIW2_ETYPE_RDMAP_OP, 0x08)
#define SIW2_TERM_RDMAP_OP_CANNOT_INV \
	SIW2_TERM(SIW2_LAYER_RDMAP, SIW2_ETYPE_RDMAP_OP, 0x09)
#define SIW2_TERM_RDMAP_OP_UNSPEC \
	SIW2_TERM(SIW2_LAYER_RDMAP, SIW2_ETYPE_RDMAP_OP, 0xff)

/* DDP layer (RFC 5041 7.2). */
#define SIW2_TERM_DDP_CATASTROPHIC \
	SIW2_TERM(SIW2_LAYER_DDP, SIW2_ETYPE_CATASTROPHIC, 0x00)
#define SIW2_TERM_DDP_T_INVALID_STAG \
	SIW2_TERM(SIW2_LAYER_DDP, SIW2_ETYPE_DDP_TAGGED, 0x00)
#define SIW2_TERM_DDP_T_BASE_BOUNDS \
	SIW2_TERM(SIW2_LAYER_DDP, SIW2_ETYPE_DDP_TAGGED, 0x01)
#define SIW2_TERM_DDP_T_STAG_NOT_ASSOC \
	SIW2_TERM(SIW2_LAYER_DDP, SIW2_ETYPE_DDP_TAGGED, 0x02)
#define SIW2_TERM_DDP_T_TO_WRAP \
	SIW2_TERM(SIW2_LAYER_DDP, SIW2_ETYPE_DDP_TAGGED, 0x03)
#define SIW2_TERM_DDP_T_VERSION \
	SIW2_TERM(SIW2_LAYER_DDP, SIW2_ETYPE_DDP_TAGGED, 0x04)
#define SIW2_TERM_DDP_U_INVALID_QN \
	SIW2_TERM(SIW2_LAYER_DDP, SIW2_ETYPE_DDP_UNTAGGED, 0x01)
#define SIW2_TERM_DDP_U_MSN_NOBUF \
	SIW2_TERM(SIW2_LAYER_DDP, SIW2_ETYPE_DDP_UNTAGGED, 0x02)
#define SIW2_TERM_DDP_U_MSN_RANGE \
	SIW2_TERM(SIW2_LAYER_DDP, SIW2_ETYPE_DDP_UNTAGGED, 0x03)
#define SIW2_TERM_DDP_U_INVALID_MO \
	SIW2_TERM(SIW2_LAYER_DDP, SIW2_ETYPE_DDP_UNTAGGED, 0x04)
#define SIW2_TERM_DDP_U_TOO_LONG \
	SIW2_TERM(SIW2_LAYER_DDP, SIW2_ETYPE_DDP_UNTAGGED, 0x05)
#define SIW2_TERM_DDP_U_VERSION \
	SIW2_TERM(SIW2_LAYER_DDP, SIW2_ETYPE_DDP_UNTAGGED, 0x06)

#endif /* SIW2_WIRE_H */
