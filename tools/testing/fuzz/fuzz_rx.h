/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The input format of fuzz_rx, shared by the harness (fuzz_rx.c) and the
 * seed generator (gen_seeds.c), and a reference FPDU encoder written from
 * RFC 5044 without looking at mpa.c: the harness compares mpa.c's transmit
 * side against it octet for octet, the generator makes its streams with it.
 *
 * Every input starts with an FZ_HDR_LEN octet header:
 *
 *   [0] bits 0-2: mode (FZ_MODE_*); FZ_F_MARKERS, FZ_F_CRC, FZ_F_EXT;
 *       bits 6-7: how the stream is cut into chunks (FZ_SPLIT_*)
 *   [1] the split parameter
 *   [2..3] seed of the harness's generator (split sizes, STag views,
 *       header field values, private data); its top two bits say how
 *       often the receive engine's STags and buffers do not fit what the
 *       peer sends: never (0, the seeds), or once in 64, 8 or 2 checks
 *   [4] mode flags (FZ_CM_* in the connection setup modes, FZ_FR_* in
 *       FZ_MODE_FRAMED; in FZ_MODE_RAW the low two bits are added to the
 *       start position, which need not be 4-aligned there)
 *   [5] [6] IRD and ORD (FZ_IRD_ORD()); in the round trip modes the
 *       MULPDU (FZ_MULPDU())
 *   [7] stream position of the first FPDU octet (FZ_POS())
 *
 * What follows depends on the mode; see the FZ_MODE_* comments.
 */
#ifndef SIW2_FUZZ_RX_H
#define SIW2_FUZZ_RX_H

#include <stdlib.h>
#include <string.h>

#include <linux/types.h>
#include <linux/crc32c.h>

#define FZ_HDR_LEN 8

enum {
	/* The peer's Reply, then its FPDUs; we are the initiator. */
	FZ_MODE_CM_INIT,
	/* The peer's Request, then its FPDUs; we are the responder. */
	FZ_MODE_CM_RESP,
	/* Raw FPDU stream octets. */
	FZ_MODE_RAW,
	/* ULPDU records the harness frames itself (FZ_REC_LEN()). */
	FZ_MODE_FRAMED,
	/* Records for the header, Terminate, books and range parsers. */
	FZ_MODE_PARSE,
	/* Message records (FZ_MSG_*), sent with the transmit API, received. */
	FZ_MODE_ROUNDTRIP,
	/*
	 * Four octets of responder parameters (FZ_HS_*), then message records:
	 * both ends of the connection setup, then a round trip each way.
	 */
	FZ_MODE_HANDSHAKE,
	/* DDP receive fed directly with spans, including impossible ones. */
	FZ_MODE_DDP,
	FZ_MODES
};

#define FZ_MODE_MASK	0x07
#define FZ_F_MARKERS	0x08
#define FZ_F_CRC	0x10
#define FZ_F_EXT	0x20
#define FZ_SPLIT_SHIFT	6

enum {
	FZ_SPLIT_WHOLE,		/* one chunk */
	FZ_SPLIT_FIXED,		/* chunks of param + 1 octets */
	FZ_SPLIT_RANDOM,	/* 1 .. param + 1 octets, at random */
	FZ_SPLIT_MIXED,		/* mostly tiny, sometimes up to 4 KiB */
};

/* Header octet 4 in the connection setup modes (our side's parameters). */
#define FZ_CM_REV2	0x01	/* rev 2 (initiator) / accept rev 2 (responder) */
#define FZ_CM_P2P	0x02	/* initiator: ask for an RTR */
#define FZ_CM_RTR_SHIFT	2	/* three bits of SIW2_MPA_RTR_* */
#define FZ_CM_REJECT	0x20	/* responder: reject the Request */
#define FZ_CM_CLOSE	0x40	/* input ends: TCP closed (else: timeout) */
#define FZ_CM_EARLY	0x80	/* responder: hand over octets before replying */

/*
 * FZ_MODE_HANDSHAKE: after the header, the responder's flags (FZ_CM_*,
 * with FZ_HS_MARKERS and FZ_HS_CRC for its M and C), IRD, ORD, and the
 * octets of ULP Private Data of the Request (low nibble) and Reply.
 */
#define FZ_HS_MARKERS	0x40
#define FZ_HS_CRC	0x80
#define FZ_HS_LEN	4

/*
 * Header octet 4 in FZ_MODE_FRAMED: flip an octet of the wire with the low
 * six bits (FZ_FR_CORRUPT), or send the first Marker inside an FPDU with
 * a wrong FPDUPTR under a valid CRC (FZ_FR_BADPTR).
 */
#define FZ_FR_CORRUPT	0x80
#define FZ_FR_BADPTR	0x40

/* FZ_MODE_FRAMED record: a length octet, 0xff for a be16 that follows. */
#define FZ_REC_LONG	0xff

/*
 * Message records of the round trip modes: a selector octet, a be16
 * length, then up to that many payload octets (repeated when short).
 */
#define FZ_MSG_OP	0x0f	/* opcode; 0xc-0xf: Write, Send, Read Resp, Send Inv */
#define FZ_MSG_EDGE	0x10	/* Tagged Offsets at the top of the 64-bit space */
#define FZ_MSG_BIG	0x40	/* add 64 KiB to the length */

static inline u16 fz_ird_ord(u8 b)
{
	/* 0x3fff is RFC 6581's "no IRD/ORD negotiation". */
	return b >= 0xc0 ? 0x3fff : b;
}

static inline u32 fz_mulpdu(u8 hi, u8 lo)
{
	return 128 + ((u32)hi << 8 | lo) % (64768 - 128 + 1);
}

/* 4-aligned, and near 2^32 when the top bit is set, to wrap in the stream. */
static inline u32 fz_pos(u8 b)
{
	return (b & 0x80 ? 0xfffffe00U : 0) + (b & 0x7f) * 4U;
}

/* ---- Reference encoder (RFC 5044 4) ---- */

struct fz_enc {
	u8 *buf;
	size_t len;
	size_t cap;
	u32 pos;	/* stream position of the next octet */
	u32 hdr_pos;	/* position of the current ULPDU_Length */
	u32 crc;
	bool markers;
	bool gen_crc;
	bool oom;
	bool bad_ptr;	/* next Marker inside an FPDU points elsewhere */
	size_t bad_at;	/* where that Marker went, once sent */
};

static inline void fz_enc_init(struct fz_enc *e, bool markers, bool crc,
			       u32 pos)
{
	memset(e, 0, sizeof(*e));
	e->markers = markers;
	e->gen_crc = crc;
	e->pos = pos;
}

static inline void fz_enc_free(struct fz_enc *e)
{
	free(e->buf);
	e->buf = NULL;
}

static inline void fz_enc_raw(struct fz_enc *e, const void *p, size_t n)
{
	if (e->len + n > e->cap) {
		size_t cap = e->cap ? e->cap : 1024;
		u8 *nb;

		while (cap < e->len + n)
			cap *= 2;
		nb = realloc(e->buf, cap);
		if (!nb) {
			e->oom = true;
			return;
		}
		e->buf = nb;
		e->cap = cap;
	}
	memcpy(e->buf + e->len, p, n);
	e->len += n;
}

/*
 * Before any octet at a position that is 0 mod 512 comes a Marker (4.3):
 * FPDUPTR is the distance back to ULPDU_Length, 0 when the Marker directly
 * precedes it (the Marker then belongs to this FPDU). The CRC covers
 * everything of the FPDU before the CRC field, Markers included (4.4).
 */
static inline void fz_enc_marker(struct fz_enc *e, bool starts_fpdu,
				 bool covered)
{
	u16 ptr;
	u8 m[4];

	if (!e->markers || e->pos % 512)
		return;
	ptr = starts_fpdu ? 0 : (u16)(e->pos - e->hdr_pos);
	if (ptr && e->bad_ptr) {
		ptr += 4;
		e->bad_ptr = false;
		e->bad_at = e->len;
	}
	m[0] = 0;
	m[1] = 0;
	m[2] = ptr >> 8;
	m[3] = ptr & 0xff;
	fz_enc_raw(e, m, 4);
	if (covered)
		e->crc = crc32c(e->crc, m, 4);
	e->pos += 4;
}

/* One field of an FPDU, Markers where they fall. */
static inline void fz_enc_field(struct fz_enc *e, const u8 *p, u32 n,
				bool starts_fpdu, bool crc_field)
{
	u32 i = 0, run, gap;

	while (i < n) {
		fz_enc_marker(e, starts_fpdu && !i, !crc_field);
		if (starts_fpdu && !i)
			e->hdr_pos = e->pos;
		/* Up to the next Marker position. */
		run = n - i;
		gap = 512 - e->pos % 512;
		if (e->markers && run > gap)
			run = gap;
		fz_enc_raw(e, p + i, run);
		if (!crc_field)
			e->crc = crc32c(e->crc, p + i, run);
		e->pos += run;
		i += run;
	}
}

/* Appends one FPDU carrying @len (1..64768) octets; returns its wire size. */
static inline size_t fz_enc_fpdu(struct fz_enc *e, const u8 *ulpdu, u32 len)
{
	u8 hdr[2] = { len >> 8, len & 0xff };
	u8 pad[3] = { 0, 0, 0 };
	size_t start = e->len;
	u8 crc[4];
	u32 v;

	e->crc = ~0U;
	fz_enc_field(e, hdr, 2, true, false);
	fz_enc_field(e, ulpdu, len, false, false);
	fz_enc_field(e, pad, (4 - ((len + 2) & 3)) & 3, false, false);
	/* A Marker in front of the CRC field is still covered by it. */
	fz_enc_marker(e, false, true);
	/* 4.4: CRC32c, least significant octet first; 0 when not in use. */
	v = e->gen_crc ? ~e->crc : 0;
	crc[0] = v & 0xff;
	crc[1] = (v >> 8) & 0xff;
	crc[2] = (v >> 16) & 0xff;
	crc[3] = v >> 24;
	fz_enc_field(e, crc, 4, false, true);
	return e->len - start;
}

#endif /* SIW2_FUZZ_RX_H */
