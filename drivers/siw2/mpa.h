/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * MPA (RFC 5044, RFC 6581): FPDU framing, CRC32c and Markers (mpa.c) and
 * connection setup (mpa_cm.c), as pure code. Nothing here touches a socket, allocates, sleeps
 * or locks: every state lives in a struct the caller owns and serializes.
 *
 * Stream positions: each direction counts octets from its MPA start point,
 * the first octet after the last startup frame in that direction, which is
 * where the first FPDU (or, with Markers, the first Marker) begins. RFC 5044
 * 4.3 places Markers where (position mod 512) == 0. Positions are u32 and
 * may wrap; only their residue mod 512 and differences matter.
 *
 * Receive (struct siw2_mpa_rx) takes bytes in any split and returns one
 * event per call: a span of ULPDU octets pointing into the caller's input
 * (never a copy, never a Marker octet), the end of a verified FPDU, or an
 * error. The DDP layer consumes a ULPDU span by span:
 *
 *	while (len) {
 *		n = siw2_mpa_rx(rx, buf, len, &ev);
 *		buf += n;
 *		len -= n;
 *		if (ev.type == SIW2_MPA_RX_DATA)
 *			ddp_span(ev.data, ev.len, ev.offset, ev.ulpdu_len);
 *		else if (ev.type == SIW2_MPA_RX_END)
 *			ddp_end_of_segment();
 *		else if (ev.type == SIW2_MPA_RX_ERROR)
 *			terminate(ev.err);
 *	}
 *
 * Spans of one ULPDU come in order, the first with offset 0, the last with
 * offset + len == ulpdu_len, each at least one octet. The CRC covers the
 * whole FPDU, so it can only be checked after the last span: spans allow
 * Placement (RFC 5041 5.3 separates Placement from Delivery), and only
 * SIW2_MPA_RX_END allows the DDP Segment to be Delivered or otherwise acted
 * upon. After an error no further span or end is ever returned (RFC 5044 8).
 *
 * Transmit (struct siw2_mpa_tx) describes each FPDU as a sequence of pieces:
 * short runs of fixed octets (Marker, ULPDU_Length, pad, CRC) held in the
 * tx struct, and ranges of the ULPDU that the caller sends from its own
 * buffers. The caller feeds the ULPDU octets it sends to siw2_mpa_tx_crc()
 * before asking for the next piece; that keeps the CRC in wire order.
 */
#ifndef SIW2_MPA_H
#define SIW2_MPA_H

#include <linux/string.h>
#include <linux/types.h>
#include <asm/byteorder.h>
#include "wire.h"

/* Every violation the MPA layer can detect, each named by the RFC rule. */
enum siw2_mpa_err {
	SIW2_MPA_OK = 0,

	/* Startup frames: close TCP without a Terminate (RFC 5044 8 code 4). */
	SIW2_MPA_ERR_KEY,		/* 7.1.1: not the expected Key */
	SIW2_MPA_ERR_INIT_INIT,		/* 7.1.2 rule 8: Initiator got a Request */
	SIW2_MPA_ERR_REV,		/* 7.1.1: a Rev we cannot interoperate with */
	SIW2_MPA_ERR_PD_LEN,		/* 7.1.1: PD_Length above 512 */
	SIW2_MPA_ERR_PD_EXCESS,		/* 7.1.2 rule 9: octets beyond PD_Length */
	SIW2_MPA_ERR_PD_TRUNCATED,	/* 7.1.2 rule 9: frame ended before PD_Length */
	SIW2_MPA_ERR_ENH_SHORT,		/* RFC 6581 6: S set, Private Data under 4 */
	SIW2_MPA_ERR_ENH_UNSOLICITED,	/* RFC 6581 10: enhanced Reply, plain Request */
	SIW2_MPA_ERR_ENH_MISSING,	/* RFC 6581 10: plain Reply, enhanced Request */
	SIW2_MPA_ERR_P2P_UNSOLICITED,	/* RFC 6581 9.2: Reply sets A, Request did not */
	SIW2_MPA_ERR_TIMEOUT,		/* 7.1.2 rules 8, 10: startup timed out */
	SIW2_MPA_ERR_CLOSED,		/* 7.1.2: TCP ended during startup */

	/* Negotiation: a Terminate in Full Operation, then close. */
	SIW2_MPA_ERR_IRD,		/* RFC 6581 9.1: responder ORD above our IRD */
	SIW2_MPA_ERR_NO_RTR,		/* RFC 6581 9.2: no usable RTR indication */

	/* Full Operation: a Terminate, then the ULP closes (RFC 5044 8). */
	SIW2_MPA_ERR_CRC,		/* 4.4: CRC mismatch */
	SIW2_MPA_ERR_MARKER,		/* 4.3, 8 code 3: FPDUPTR points elsewhere */
	SIW2_MPA_ERR_ULPDU_LEN,		/* 3: ULPDU_Length 0 or above 64768 */

	/* Local: the caller's parameters or buffers. */
	SIW2_MPA_ERR_PD_TOO_LONG,	/* 7.1.1: our Private Data exceeds 512 */
	SIW2_MPA_ERR_PARAM,		/* invalid local parameter */
	SIW2_MPA_ERR_NOSPC,		/* output buffer too small */
	SIW2_MPA_ERR_STATE,		/* call not valid in this state */

	SIW2_MPA_ERR_COUNT
};

/* Terminate Error Code (layer SIW2_MPA_TERM_LAYER, type SIW2_MPA_TERM_ETYPE). */
u8 siw2_mpa_err_ecode(enum siw2_mpa_err err);
/* The whole Terminate cause (SIW2_TERM()) an MPA error is reported with. */
u32 siw2_mpa_err_cause(enum siw2_mpa_err err);
/*
 * Whether the error is reported with a Terminate message in Full Operation
 * (CRC, Marker, ULPDU_Length, IRD, RTR); startup frame errors close TCP
 * right away (RFC 5044 8 code 4).
 */
bool siw2_mpa_err_wants_term(enum siw2_mpa_err err);
/* Short fixed text naming the rule, for ratelimited logs. */
const char *siw2_mpa_err_str(enum siw2_mpa_err err);

/* ---- CRC32c (RFC 5044 4.4, computed as RFC 3720 does) ---- */

#define SIW2_MPA_CRC_SEED 0xffffffffU

u32 siw2_mpa_crc_update(u32 crc, const void *data, size_t len);

/*
 * siw2_mpa_crc_update() uses crc32c(), the crypto API's preferred
 * implementation, unless this switched it to lib/crc32's table-driven
 * __crc32c_le(). Both compute the same function; crc.c chooses at load.
 */
void siw2_mpa_crc_use_table(bool table);

/*
 * Copies @len octets from @src to @dst and returns @crc continued over
 * them: one pass instead of a copy and a CRC pass, for the receiver that
 * must do both. Table-driven (slice by 8), so worth it only where the
 * table implementation was chosen: see siw2_mpa_rx_fold_by_caller().
 */
u32 siw2_mpa_crc_copy(u32 crc, void *dst, const void *src, size_t len);

/* The value of the CRC field for a running @crc begun at SIW2_MPA_CRC_SEED. */
static inline u32 siw2_mpa_crc_final(u32 crc)
{
	return ~crc;
}

/* Stores a final CRC value in wire order (see struct siw2_mpa_crc). */
static inline void siw2_mpa_crc_put(u8 out[SIW2_MPA_CRC_LEN], u32 value)
{
	__le32 wire = cpu_to_le32(value);

	memcpy(out, &wire, sizeof(wire));
}

/* ---- Sizes ---- */

/* Pad octets after a ULPDU of @ulpdu_len (RFC 5044 4.1). */
static inline u32 siw2_mpa_pad(u32 ulpdu_len)
{
	return (4 - ((ulpdu_len + SIW2_MPA_HDR_LEN) & 3)) & 3;
}

/*
 * Octets on the wire for an FPDU carrying @ulpdu_len octets whose first
 * octet (a Marker, if one is due there) sits at stream position @pos.
 */
u32 siw2_mpa_fpdu_wire_len(u32 pos, u32 ulpdu_len, bool markers);

/* RFC 5044 4.5: the largest ULPDU fitting an EMSS, within 128..64768. */
u32 siw2_mpa_mulpdu(u32 emss, bool markers);

/* ---- Receive ---- */

enum siw2_mpa_rx_type {
	SIW2_MPA_RX_NONE,	/* input used up, nothing to report */
	SIW2_MPA_RX_DATA,	/* a span of ULPDU octets */
	SIW2_MPA_RX_END,	/* FPDU complete and its CRC verified */
	SIW2_MPA_RX_ERROR,	/* err says why; the half connection is dead */
};

struct siw2_mpa_rx_ev {
	enum siw2_mpa_rx_type type;
	enum siw2_mpa_err err;		/* ERROR */
	const u8 *data;			/* DATA: inside the caller's input */
	u32 len;			/* DATA: octets at data */
	u32 offset;			/* DATA: offset of data[0] in the ULPDU */
	u32 ulpdu_len;			/* DATA, END: ULPDU_Length of this FPDU */
};

/*
 * Receive state of one half connection. Fields are private to mpa.c, but
 * for pos, which a test may set after siw2_mpa_rx_init() to start inside
 * the stream.
 */
struct siw2_mpa_rx {
	u32 pos;		/* stream position of the next input octet */
	u32 hdr_pos;		/* position of this FPDU's ULPDU_Length */
	u32 crc;		/* running CRC over this FPDU */
	u32 ulpdu_len;
	u32 ulpdu_off;		/* ULPDU octets consumed */
	u8 state;
	u8 have;		/* octets of the current fixed field */
	u8 pad;
	u8 marker_have;		/* octets of the current Marker, 0..3 */
	u8 field[SIW2_MPA_CRC_LEN];
	u8 marker[SIW2_MPA_MARKER_LEN];
	bool markers;		/* the peer inserts Markers (our M bit) */
	bool check_crc;
	bool caller_folds;	/* see siw2_mpa_rx_fold_by_caller() */
	const u8 *folded;	/* ... DATA span octets before it are folded */
	bool marker_bad;	/* FPDUPTR mismatch seen; CRC decides the code */
	enum siw2_mpa_err err;	/* latched, RFC 5044 8 */
};

/*
 * Starts a half connection at its MPA start point. @markers: the peer
 * inserts Markers, i.e. the M bit this side sent; @crc: CRCs negotiated.
 */
void siw2_mpa_rx_init(struct siw2_mpa_rx *rx, bool markers, bool crc);

/*
 * Consumes up to @len octets of @buf and reports at most one event in @ev.
 * Returns the number of octets consumed, which is less than @len only when
 * an event other than SIW2_MPA_RX_NONE is reported. A DATA span lies within
 * the consumed octets. Never fails on any input: a violation is reported as
 * SIW2_MPA_RX_ERROR, then every later call reports it again consuming
 * nothing.
 */
size_t siw2_mpa_rx(struct siw2_mpa_rx *rx, const u8 *buf, size_t len,
		   struct siw2_mpa_rx_ev *ev);

/*
 * Leaves the CRC of DATA spans to the caller, who can then fold it in the
 * pass that copies the payload (siw2_mpa_crc_copy() into the value that
 * siw2_mpa_rx_crc_sink() points at). Every octet of a DATA span must then
 * be folded, in order, before the next siw2_mpa_rx() call: a copy that
 * folds begins where siw2_mpa_rx_fold_to() stopped and reports its end
 * with siw2_mpa_rx_folded(); siw2_mpa_rx_fold_to() the span's end folds
 * what no copy did. Call right after siw2_mpa_rx_init(). Does nothing,
 * and returns false, when CRCs are off or the table implementation is
 * not in use (a copy fused with a CRC instruction pass would not beat the
 * two passes).
 */
bool siw2_mpa_rx_fold_by_caller(struct siw2_mpa_rx *rx);

void siw2_mpa_rx_fold_to(struct siw2_mpa_rx *rx, const u8 *end);

/* A fused copy continued the CRC over the span's octets up to @end. */
static inline void siw2_mpa_rx_folded(struct siw2_mpa_rx *rx, const u8 *end)
{
	rx->folded = end;
}

/* The running CRC a fused copy continues; NULL if the MPA layer folds. */
static inline u32 *siw2_mpa_rx_crc_sink(struct siw2_mpa_rx *rx)
{
	return rx->caller_folds ? &rx->crc : NULL;
}

/* ---- Transmit ---- */

/*
 * One piece of an FPDU. Fixed octets (bytes != NULL, valid until the next
 * call on the tx struct) or a ULPDU range (bytes == NULL) the caller sends
 * from its buffers and passes to siw2_mpa_tx_crc().
 */
struct siw2_mpa_tx_piece {
	const u8 *bytes;
	u32 len;
	u32 ulpdu_off;		/* ULPDU range: offset of its first octet */
};

/* Transmit state of one half connection; private to mpa.c as rx is. */
struct siw2_mpa_tx {
	u32 pos;		/* stream position of the next octet to send */
	u32 hdr_pos;
	u32 crc;
	u32 ulpdu_len;
	u32 ulpdu_off;		/* ULPDU octets handed out as pieces */
	u32 crc_fed;		/* ULPDU octets passed to siw2_mpa_tx_crc() */
	u8 state;
	u8 have;
	u8 pad;
	bool markers;		/* insert Markers: the peer's M bit */
	bool gen_crc;
	u8 bytes[12];		/* fixed octets of the current piece */
};

/* @markers: the peer's M bit; @crc: CRCs negotiated. */
void siw2_mpa_tx_init(struct siw2_mpa_tx *tx, bool markers, bool crc);

/*
 * Starts an FPDU of @ulpdu_len (1..64768) octets at the current position.
 * Returns its length on the wire, Markers included, or 0 if @ulpdu_len is
 * out of range or the previous FPDU is unfinished.
 */
u32 siw2_mpa_tx_begin(struct siw2_mpa_tx *tx, u32 ulpdu_len);

/*
 * Fills @pc with the next piece of the FPDU and advances the position past
 * it. Returns 1 for a piece, 0 once the FPDU is complete, -EPROTO if the
 * ULPDU octets of the previous piece were not all passed to
 * siw2_mpa_tx_crc() (only checked when CRCs are on).
 */
int siw2_mpa_tx_next(struct siw2_mpa_tx *tx, struct siw2_mpa_tx_piece *pc);

/* Folds ULPDU octets, in order, into the CRC of the FPDU being sent. */
void siw2_mpa_tx_crc(struct siw2_mpa_tx *tx, const void *data, size_t len);

/*
 * Serializes a whole FPDU (Markers, ULPDU_Length, @ulpdu, pad, CRC) into
 * @out for small messages, tests and the fuzzer. Returns the octets written
 * or 0 if @cap is too small or @len out of range (@tx is then unchanged).
 */
size_t siw2_mpa_fpdu_build(struct siw2_mpa_tx *tx, const void *ulpdu, u32 len,
			   u8 *out, size_t cap);

/*
 * Frames in place an FPDU whose @len octets of ULPDU the caller put at
 * @buf + SIW2_MPA_HDR_LEN: writes ULPDU_Length in front and pad and CRC
 * behind, so @buf needs siw2_mpa_fpdu_wire_len() octets. Only without
 * Markers, between FPDUs. Returns the FPDU's length, or 0 (@tx unchanged).
 */
u32 siw2_mpa_tx_frame(struct siw2_mpa_tx *tx, u8 *buf, u32 len);

/*
 * ---- Connection setup (RFC 5044 7.1, RFC 6581): mpa_cm.c ----
 *
 * The caller sends the frames siw2_mpa_cm_request()/_accept()/_reject()
 * write, feeds received bytes to siw2_mpa_cm_rx() until it returns an
 * action, and reports its timer and the end of TCP. Once in Full Operation
 * it sets up siw2_mpa_rx_init(conn.rx_markers, conn.crc) and
 * siw2_mpa_tx_init(conn.tx_markers, conn.crc); the octets after the frame
 * are the first octets of the FPDU stream. The responder passes its first
 * SIW2_MPA_RX_END to siw2_mpa_cm_first_fpdu() before it sends anything.
 */

enum siw2_mpa_role {
	SIW2_MPA_INITIATOR,
	SIW2_MPA_RESPONDER,
};

/* RTR indications (RFC 6581 9.2), usable as a mask. */
#define SIW2_MPA_RTR_SEND 0x1	/* zero-length Send (B) */
#define SIW2_MPA_RTR_WRITE 0x2	/* zero-length RDMA Write (C) */
#define SIW2_MPA_RTR_READ 0x4	/* zero-length RDMA Read (D) */
#define SIW2_MPA_RTR_ALL 0x7

struct siw2_mpa_params {
	/*
	 * Initiator: revision of the Request; 2 sends the RFC 6581 data.
	 * Responder: highest revision accepted (2 also accepts 1).
	 */
	u8 rev;
	bool markers;	/* M: we want to receive Markers */
	bool crc;	/* C: we want CRCs */
	bool p2p;	/* Initiator, rev 2: request an RTR indication (A) */
	u8 rtr;		/* SIW2_MPA_RTR_* we can send (initiator), accept (responder) */
	u16 ird;	/* Initiator: IRD and ORD sent, 0..0x3fff (0x3fff: none) */
	u16 ord;
	bool large;	/* offer FPDUs larger than a segment (SIW2_MPA_FLAG_G) */
};

/* What the startup phase agreed; valid from SIW2_MPA_CM_REQUEST on. */
struct siw2_mpa_conn {
	u8 rev;			/* revision of the frames exchanged (1 or 2) */
	bool enhanced;		/* RFC 6581 data exchanged */
	bool crc;		/* CRCs generated and checked (7.1.1 C) */
	bool tx_markers;	/* insert Markers when sending (peer's M) */
	bool rx_markers;	/* the peer inserts Markers (our M) */
	bool p2p;		/* RTR indication negotiated */
	bool large;		/* both offered G: FPDUs may exceed a segment */
	/*
	 * Initiator: the one RTR to send before any other FPDU (0 if none);
	 * a zero-length Read is answered by a zero-length Read Response.
	 * Responder: the RTR indications it advertised.
	 */
	u8 rtr;
	u16 ird;		/* local IRD/ORD to use; 0x3fff: left to the ULP */
	u16 ord;
	u16 peer_ird;		/* as received, for the ULP (RFC 6581 9.1) */
	u16 peer_ord;
	const u8 *pdata;	/* peer's ULP Private Data, inside the cm struct */
	u16 pdata_len;
};

enum siw2_mpa_cm_action {
	SIW2_MPA_CM_NEED_MORE,	/* feed more bytes */
	/*
	 * Responder: a valid Request; conn.peer_*, conn.pdata and the frame
	 * options are set. Answer with siw2_mpa_cm_accept() or _reject().
	 */
	SIW2_MPA_CM_REQUEST,
	/*
	 * Initiator: Full Operation, may send (conn.rtr first if set).
	 * Responder (from siw2_mpa_cm_first_fpdu()): may send.
	 */
	SIW2_MPA_CM_ESTABLISHED,
	/* Initiator: the peer rejected; MPA exits, TCP stays open (7.1.2). */
	SIW2_MPA_CM_REJECTED,
	/* err says why; see siw2_mpa_err_wants_term() for what comes next. */
	SIW2_MPA_CM_ERROR,
};

/* Setup state of one connection. Read conn and err; the rest is private. */
struct siw2_mpa_cm {
	struct siw2_mpa_params local;
	struct siw2_mpa_conn conn;
	enum siw2_mpa_err err;
	u8 role;
	u8 state;
	bool req_enhanced;	/* the Request carried RFC 6581 data */
	bool req_p2p;		/* ... with A set */
	u8 req_rtr;		/* ... and these B/C/D */
	u16 have;		/* octets of the peer's frame received */
	u8 frame[SIW2_MPA_FRAME_MAX];
};

/* Checks @p and prepares @cm; SIW2_MPA_ERR_PARAM if @p is inconsistent. */
enum siw2_mpa_err siw2_mpa_cm_init(struct siw2_mpa_cm *cm,
				   enum siw2_mpa_role role,
				   const struct siw2_mpa_params *p);

/*
 * Initiator: writes the Request frame with @pd_len octets of ULP Private
 * Data (at most 512, 508 with rev 2) into @out; *@outlen gets its length.
 */
enum siw2_mpa_err siw2_mpa_cm_request(struct siw2_mpa_cm *cm, const void *pd,
				      u16 pd_len, u8 *out, size_t cap,
				      size_t *outlen);

/*
 * Responder, after SIW2_MPA_CM_REQUEST: writes the accepting Reply. @ird
 * and @ord are the local endpoint's values (0x3fff: left to the ULP); the
 * Reply carries them as RFC 6581 9.1 adjusts them, conn holds the result.
 * Afterwards received bytes are FPDUs, and the responder may send only
 * once siw2_mpa_cm_first_fpdu() says so (7.1.2 rule 4).
 */
enum siw2_mpa_err siw2_mpa_cm_accept(struct siw2_mpa_cm *cm, u16 ird, u16 ord,
				     const void *pd, u16 pd_len, u8 *out,
				     size_t cap, size_t *outlen);

/*
 * Responder, after SIW2_MPA_CM_REQUEST: writes a Reply with R set; @ird and
 * @ord are sent as given (RFC 6581 9.1 lets a reject name the ORD needed).
 * MPA exits and TCP stays open (7.1.2 rule 2).
 */
enum siw2_mpa_err siw2_mpa_cm_reject(struct siw2_mpa_cm *cm, u16 ird, u16 ord,
				     const void *pd, u16 pd_len, u8 *out,
				     size_t cap, size_t *outlen);

/*
 * Feeds received bytes while a startup frame is expected. *@consumed gets
 * the octets used: exactly up to the end of the frame, so any rest of @buf
 * belongs to the FPDU stream (after ESTABLISHED) or to the ULP (after
 * REJECTED).
 */
enum siw2_mpa_cm_action siw2_mpa_cm_rx(struct siw2_mpa_cm *cm, const u8 *buf,
				       size_t len, size_t *consumed);

/*
 * Responder: the first FPDU was received and verified (SIW2_MPA_RX_END);
 * returns SIW2_MPA_CM_ESTABLISHED once, as sending is now allowed.
 */
enum siw2_mpa_cm_action siw2_mpa_cm_first_fpdu(struct siw2_mpa_cm *cm);

/* The caller's startup timer expired (7.1.2 rules 8 and 10). */
enum siw2_mpa_cm_action siw2_mpa_cm_timeout(struct siw2_mpa_cm *cm);

/* TCP ended (FIN, RST) while setting up. */
enum siw2_mpa_cm_action siw2_mpa_cm_closed(struct siw2_mpa_cm *cm);

/* May this side send FPDUs now? */
bool siw2_mpa_cm_may_send(const struct siw2_mpa_cm *cm);

/*
 * RFC 6581 10: an enhanced Request met a responder without RFC 6581, which
 * closed without a Reply (as it should) or sent a plain one. The caller may
 * connect again with rev 1 and leave IRD/ORD and RTR to the ULP.
 */
bool siw2_mpa_cm_retry_rev1(const struct siw2_mpa_cm *cm);

#endif /* SIW2_MPA_H */
