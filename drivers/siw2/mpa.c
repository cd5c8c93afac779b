// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * MPA (RFC 5044) framing as pure code: FPDUs with their Markers and
 * CRCs, both ways, and MPA's error causes; mpa_cm.c is the connection
 * setup (RFC 5044 7.1, RFC 6581). mpa.h has the interfaces of both.
 *
 * Receive and transmit walk the same layout: a stream of 512 octet periods,
 * each opening with a 4 octet Marker when Markers are on, over which FPDUs
 * (ULPDU_Length, ULPDU, pad, CRC) are laid without regard to the periods.
 * Both sides handle a Marker at any stream position, so they never depend
 * on FPDUs being 4-aligned, although a conforming stream always is.
 */
#include <linux/kernel.h>
#include <linux/errno.h>
#include <linux/minmax.h>
#include <linux/string.h>
#include <linux/crc32.h>
#include <linux/crc32c.h>
#include <linux/cache.h>
#include <asm/barrier.h>
#include <asm/byteorder.h>

#include "mpa.h"

static const struct {
	u8 ecode;
	bool term;
	const char *str;
} mpa_errs[SIW2_MPA_ERR_COUNT] = {
	[SIW2_MPA_OK] = { 0, false, "no error" },
	[SIW2_MPA_ERR_KEY] = { SIW2_MPA_ECODE_BAD_RR, false,
		"RFC 5044 7.1.1: unexpected Key" },
	[SIW2_MPA_ERR_INIT_INIT] = { SIW2_MPA_ECODE_BAD_RR, false,
		"RFC 5044 7.1.2 rule 8: Request frame received by the Initiator" },
	[SIW2_MPA_ERR_REV] = { SIW2_MPA_ECODE_BAD_RR, false,
		"RFC 5044 7.1.1: unsupported Rev" },
	[SIW2_MPA_ERR_PD_LEN] = { SIW2_MPA_ECODE_BAD_RR, false,
		"RFC 5044 7.1.1: PD_Length exceeds 512" },
	[SIW2_MPA_ERR_PD_EXCESS] = { SIW2_MPA_ECODE_BAD_RR, false,
		"RFC 5044 7.1.2 rule 9: data beyond PD_Length" },
	[SIW2_MPA_ERR_PD_TRUNCATED] = { SIW2_MPA_ECODE_BAD_RR, false,
		"RFC 5044 7.1.2 rule 9: Private Data shorter than PD_Length" },
	[SIW2_MPA_ERR_ENH_SHORT] = { SIW2_MPA_ECODE_BAD_RR, false,
		"RFC 6581 6: S set without enhanced connection data" },
	[SIW2_MPA_ERR_ENH_UNSOLICITED] = { SIW2_MPA_ECODE_BAD_RR, false,
		"RFC 6581 10: enhanced Reply to an unenhanced Request" },
	[SIW2_MPA_ERR_ENH_MISSING] = { SIW2_MPA_ECODE_BAD_RR, false,
		"RFC 6581 10: plain Reply to an enhanced Request" },
	[SIW2_MPA_ERR_P2P_UNSOLICITED] = { SIW2_MPA_ECODE_BAD_RR, false,
		"RFC 6581 9.2: Reply sets A, Request did not" },
	[SIW2_MPA_ERR_TIMEOUT] = { SIW2_MPA_ECODE_LLP_LOST, false,
		"RFC 5044 7.1.2 rule 10: startup timed out" },
	[SIW2_MPA_ERR_CLOSED] = { SIW2_MPA_ECODE_LLP_LOST, false,
		"RFC 5044 8 code 1: TCP closed during startup" },
	[SIW2_MPA_ERR_IRD] = { SIW2_MPA_ECODE_IRD, true,
		"RFC 6581 9.1: insufficient IRD for the responder ORD" },
	[SIW2_MPA_ERR_NO_RTR] = { SIW2_MPA_ECODE_RTR, true,
		"RFC 6581 9.2: no matching RTR option" },
	[SIW2_MPA_ERR_CRC] = { SIW2_MPA_ECODE_CRC, true,
		"RFC 5044 4.4: CRC error" },
	[SIW2_MPA_ERR_MARKER] = { SIW2_MPA_ECODE_MARKER, true,
		"RFC 5044 4.3: Marker does not point to the FPDU start" },
	[SIW2_MPA_ERR_ULPDU_LEN] = { SIW2_MPA_ECODE_MARKER, true,
		"RFC 5044 3: ULPDU_Length outside 1..64768" },
	[SIW2_MPA_ERR_PD_TOO_LONG] = { SIW2_MPA_ECODE_LOCAL, false,
		"RFC 5044 7.1.1: local Private Data exceeds 512" },
	[SIW2_MPA_ERR_PARAM] = { SIW2_MPA_ECODE_LOCAL, false,
		"invalid local MPA parameter" },
	[SIW2_MPA_ERR_NOSPC] = { SIW2_MPA_ECODE_LOCAL, false,
		"MPA frame buffer too small" },
	[SIW2_MPA_ERR_STATE] = { SIW2_MPA_ECODE_LOCAL, false,
		"MPA call in the wrong state" },
};

u8 siw2_mpa_err_ecode(enum siw2_mpa_err err)
{
	if ((unsigned int)err >= SIW2_MPA_ERR_COUNT)
		return SIW2_MPA_ECODE_LOCAL;
	return mpa_errs[err].ecode;
}

u32 siw2_mpa_err_cause(enum siw2_mpa_err err)
{
	return SIW2_TERM(SIW2_MPA_TERM_LAYER, SIW2_MPA_TERM_ETYPE,
			 siw2_mpa_err_ecode(err));
}

bool siw2_mpa_err_wants_term(enum siw2_mpa_err err)
{
	if ((unsigned int)err >= SIW2_MPA_ERR_COUNT)
		return false;
	return mpa_errs[err].term;
}

const char *siw2_mpa_err_str(enum siw2_mpa_err err)
{
	if ((unsigned int)err >= SIW2_MPA_ERR_COUNT)
		return "unknown MPA error";
	return mpa_errs[err].str;
}

static bool crc_table __read_mostly;

/* Slice by 8: tab[k][b] is the CRC register after b and then k zeroes. */
static u32 crc_tab[8][256] __read_mostly;
static bool crc_tab_built;

#define CRC32C_POLY_REFLECTED 0x82f63b78U

static void crc_tab_build(void)
{
	u32 b, k, bit, r;

	for (b = 0; b < 256; b++) {
		r = b;
		for (bit = 0; bit < 8; bit++)
			r = r >> 1 ^ (r & 1 ? CRC32C_POLY_REFLECTED : 0);
		crc_tab[0][b] = r;
	}
	for (k = 1; k < 8; k++)
		for (b = 0; b < 256; b++) {
			r = crc_tab[k - 1][b];
			crc_tab[k][b] = r >> 8 ^ crc_tab[0][r & 0xff];
		}
	crc_tab_built = true;
}

/*
 * Called at load and from the module parameter's setter, which the
 * kernel serialises. The release pairs with siw2_mpa_rx_fold_by_caller():
 * a stream that sees the table implementation chosen sees the tables.
 */
void siw2_mpa_crc_use_table(bool table)
{
	if (table && !crc_tab_built)
		crc_tab_build();
	/* The tables before the flag: see siw2_mpa_rx_fold_by_caller(). */
	smp_store_release(&crc_table, table);
}

u32 siw2_mpa_crc_copy(u32 crc, void *dst, const void *src, size_t len)
{
	const u8 *s = src;
	u8 *d = dst;
	__le64 word;
	u64 w;

	for (; len >= 8; len -= 8, s += 8, d += 8) {
		memcpy(&word, s, sizeof(word));
		memcpy(d, &word, sizeof(word));
		w = le64_to_cpu(word) ^ crc;
		crc = crc_tab[7][w & 0xff] ^ crc_tab[6][w >> 8 & 0xff] ^
		      crc_tab[5][w >> 16 & 0xff] ^ crc_tab[4][w >> 24 & 0xff] ^
		      crc_tab[3][w >> 32 & 0xff] ^ crc_tab[2][w >> 40 & 0xff] ^
		      crc_tab[1][w >> 48 & 0xff] ^ crc_tab[0][w >> 56];
	}
	for (; len; len--, s++, d++) {
		*d = *s;
		crc = crc >> 8 ^ crc_tab[0][(crc ^ *s) & 0xff];
	}
	return crc;
}

u32 siw2_mpa_crc_update(u32 crc, const void *data, size_t len)
{
	if (READ_ONCE(crc_table))
		return __crc32c_le(crc, data, len);
	return crc32c(crc, data, len);
}

static u32 fpdu_body_len(u32 ulpdu_len)
{
	return SIW2_MPA_HDR_LEN + ulpdu_len + siw2_mpa_pad(ulpdu_len) +
	       SIW2_MPA_CRC_LEN;
}

/* Octets from @pos to the next Marker position, 0 if a Marker is due. */
static u32 marker_gap(u32 pos)
{
	return (SIW2_MPA_MARKER_INTERVAL - pos % SIW2_MPA_MARKER_INTERVAL) %
	       SIW2_MPA_MARKER_INTERVAL;
}

u32 siw2_mpa_fpdu_wire_len(u32 pos, u32 ulpdu_len, bool markers)
{
	u32 body = fpdu_body_len(ulpdu_len);
	u32 gap = marker_gap(pos);

	/* A Marker right after the CRC belongs to the next FPDU (4.3). */
	if (!markers || gap >= body)
		return body;
	return body + SIW2_MPA_MARKER_LEN *
		DIV_ROUND_UP(body - gap,
			     SIW2_MPA_MARKER_INTERVAL - SIW2_MPA_MARKER_LEN);
}

u32 siw2_mpa_mulpdu(u32 emss, bool markers)
{
	u32 overhead = SIW2_MPA_HDR_LEN + SIW2_MPA_CRC_LEN + emss % 4;

	if (markers)
		overhead += SIW2_MPA_MARKER_LEN *
			    DIV_ROUND_UP(emss, SIW2_MPA_MARKER_INTERVAL);
	/* 4.5: never below 128, even when the EMSS is smaller. */
	if (emss < overhead + SIW2_MPA_MULPDU_MIN)
		return SIW2_MPA_MULPDU_MIN;
	return min_t(u32, emss - overhead, SIW2_MPA_MULPDU_MAX);
}

/* FPDU fields, in wire order, for both directions. */
enum {
	FPDU_IDLE,	/* tx only: no FPDU begun */
	FPDU_HDR,
	FPDU_DATA,
	FPDU_PAD,
	FPDU_CRC,
};

/* ---- Receive ---- */

void siw2_mpa_rx_init(struct siw2_mpa_rx *rx, bool markers, bool crc)
{
	memset(rx, 0, sizeof(*rx));
	rx->markers = markers;
	rx->check_crc = crc;
	rx->crc = SIW2_MPA_CRC_SEED;
	rx->state = FPDU_HDR;
}

static void rx_fold(struct siw2_mpa_rx *rx, const u8 *p, u32 n)
{
	if (rx->check_crc)
		rx->crc = siw2_mpa_crc_update(rx->crc, p, n);
}

bool siw2_mpa_rx_fold_by_caller(struct siw2_mpa_rx *rx)
{
	/* Pairs with siw2_mpa_crc_use_table(): the flag, then the tables. */
	rx->caller_folds = rx->check_crc && smp_load_acquire(&crc_table);
	return rx->caller_folds;
}

/**
 * siw2_mpa_rx_fold_to() - fold the current DATA span up to a point
 * @rx: receive state
 * @end: inside the span last reported, or just past it
 *
 * RFC 5044 4.4: the CRC covers every octet of the FPDU, in order. Where
 * the caller folds (siw2_mpa_rx_fold_by_caller()), this folds the span's
 * octets from where folding stopped (the span's start, a copy's end given
 * to siw2_mpa_rx_folded()) up to @end; octets before that point are never
 * folded twice. Does nothing where the MPA layer folds.
 */
void siw2_mpa_rx_fold_to(struct siw2_mpa_rx *rx, const u8 *end)
{
	if (!rx->caller_folds || end <= rx->folded)
		return;
	rx->crc = siw2_mpa_crc_update(rx->crc, rx->folded, end - rx->folded);
	rx->folded = end;
}

static size_t rx_fail(struct siw2_mpa_rx *rx, enum siw2_mpa_err err,
		      size_t used, struct siw2_mpa_rx_ev *ev)
{
	rx->err = err;
	ev->type = SIW2_MPA_RX_ERROR;
	ev->err = err;
	return used;
}

/* The Marker just completed, at rx->pos - 4, is where 4.3 puts it. */
static bool rx_marker_ok(const struct siw2_mpa_rx *rx)
{
	struct siw2_mpa_marker m;
	u32 at = rx->pos - SIW2_MPA_MARKER_LEN;
	u32 want;

	memcpy(&m, rx->marker, sizeof(m));
	/*
	 * 4.3: a Marker falling between FPDUs is 0 and counts as part of the
	 * following FPDU; any other points back to ULPDU_Length. The low two
	 * bits are treated as zero.
	 */
	if (rx->state == FPDU_HDR && rx->have == 0)
		want = 0;
	else
		want = at - rx->hdr_pos;
	return (be16_to_cpu(m.fpduptr) & SIW2_MPA_FPDUPTR_MASK) == want;
}

static size_t rx_end(struct siw2_mpa_rx *rx, size_t used,
		     struct siw2_mpa_rx_ev *ev)
{
	struct siw2_mpa_crc wire;

	/* 4.4: with CRCs off the field is present but MUST NOT be checked. */
	if (rx->check_crc) {
		memcpy(&wire, rx->field, sizeof(wire));
		if (le32_to_cpu(wire.crc) != siw2_mpa_crc_final(rx->crc))
			return rx_fail(rx, SIW2_MPA_ERR_CRC, used, ev);
	}
	/* 8 code 3 is the error of an FPDU whose CRC is valid. */
	if (rx->marker_bad)
		return rx_fail(rx, SIW2_MPA_ERR_MARKER, used, ev);

	ev->type = SIW2_MPA_RX_END;
	ev->ulpdu_len = rx->ulpdu_len;
	rx->state = FPDU_HDR;
	rx->have = 0;
	rx->crc = SIW2_MPA_CRC_SEED;
	rx->ulpdu_len = 0;
	rx->ulpdu_off = 0;
	return used;
}

/* Consumes Marker octets at @p; returns false once the stream is dead. */
static bool rx_marker(struct siw2_mpa_rx *rx, const u8 *p, u32 n,
		      struct siw2_mpa_rx_ev *ev)
{
	memcpy(rx->marker + rx->marker_have, p, n);
	/* 4.4: Markers up to the CRC field are covered by the CRC. */
	if (rx->state != FPDU_CRC || rx->have == 0)
		rx_fold(rx, p, n);
	rx->marker_have += n;
	rx->pos += n;
	if (rx->marker_have < SIW2_MPA_MARKER_LEN)
		return true;
	rx->marker_have = 0;
	if (rx_marker_ok(rx))
		return true;
	/*
	 * With CRCs on, a bad CRC takes precedence (8), known at the FPDU's
	 * end; its remaining octets are consumed but no longer handed out.
	 */
	if (rx->check_crc) {
		rx->marker_bad = true;
		return true;
	}
	rx_fail(rx, SIW2_MPA_ERR_MARKER, 0, ev);
	return false;
}

size_t siw2_mpa_rx(struct siw2_mpa_rx *rx, const u8 *buf, size_t len,
		   struct siw2_mpa_rx_ev *ev)
{
	size_t used = 0;

	memset(ev, 0, sizeof(*ev));
	/* 8: after an error no further FPDU is passed on. */
	if (rx->err)
		return rx_fail(rx, rx->err, 0, ev);

	while (used < len) {
		const u8 *p = buf + used;
		u32 n = min_t(size_t, len - used, U32_MAX);

		if (rx->markers) {
			u32 gap = marker_gap(rx->pos);

			if (rx->marker_have || !gap) {
				n = min_t(u32, n, SIW2_MPA_MARKER_LEN -
					  rx->marker_have);
				used += n;
				if (!rx_marker(rx, p, n, ev))
					return used;
				continue;
			}
			n = min(n, gap);
		}

		switch (rx->state) {
		case FPDU_HDR:
			n = min_t(u32, n, SIW2_MPA_HDR_LEN - rx->have);
			if (!rx->have)
				rx->hdr_pos = rx->pos;
			memcpy(rx->field + rx->have, p, n);
			rx_fold(rx, p, n);
			rx->have += n;
			rx->pos += n;
			used += n;
			if (rx->have < SIW2_MPA_HDR_LEN)
				break;
			rx->ulpdu_len = rx->field[0] << 8 | rx->field[1];
			/* 3: a ULPDU is 1..64768 octets. */
			if (!rx->ulpdu_len ||
			    rx->ulpdu_len > SIW2_MPA_MULPDU_MAX)
				return rx_fail(rx, SIW2_MPA_ERR_ULPDU_LEN,
					       used, ev);
			rx->pad = siw2_mpa_pad(rx->ulpdu_len);
			rx->ulpdu_off = 0;
			rx->have = 0;
			rx->state = FPDU_DATA;
			break;
		case FPDU_DATA:
			n = min(n, rx->ulpdu_len - rx->ulpdu_off);
			/* The caller folds what it is handed, not what marker_bad keeps. */
			if (!rx->caller_folds || rx->marker_bad)
				rx_fold(rx, p, n);
			rx->pos += n;
			used += n;
			rx->ulpdu_off += n;
			if (rx->ulpdu_off == rx->ulpdu_len)
				rx->state = rx->pad ? FPDU_PAD : FPDU_CRC;
			if (rx->marker_bad)
				break;
			ev->type = SIW2_MPA_RX_DATA;
			ev->offset = rx->ulpdu_off - n;
			ev->data = p;
			rx->folded = p;
			ev->len = n;
			ev->ulpdu_len = rx->ulpdu_len;
			return used;
		case FPDU_PAD:
			/* 4.1: pad is ignored, except by the CRC. */
			n = min_t(u32, n, rx->pad - rx->have);
			rx_fold(rx, p, n);
			rx->have += n;
			rx->pos += n;
			used += n;
			if (rx->have == rx->pad) {
				rx->have = 0;
				rx->state = FPDU_CRC;
			}
			break;
		case FPDU_CRC:
			n = min_t(u32, n, SIW2_MPA_CRC_LEN - rx->have);
			memcpy(rx->field + rx->have, p, n);
			rx->have += n;
			rx->pos += n;
			used += n;
			if (rx->have == SIW2_MPA_CRC_LEN)
				return rx_end(rx, used, ev);
			break;
		}
	}
	return used;
}

/* ---- Transmit ---- */

void siw2_mpa_tx_init(struct siw2_mpa_tx *tx, bool markers, bool crc)
{
	memset(tx, 0, sizeof(*tx));
	tx->markers = markers;
	tx->gen_crc = crc;
	tx->state = FPDU_IDLE;
}

u32 siw2_mpa_tx_begin(struct siw2_mpa_tx *tx, u32 ulpdu_len)
{
	/* 3: DDP never hands MPA a ULPDU above 64768 octets. */
	if (tx->state != FPDU_IDLE || !ulpdu_len ||
	    ulpdu_len > SIW2_MPA_MULPDU_MAX)
		return 0;
	tx->ulpdu_len = ulpdu_len;
	tx->ulpdu_off = 0;
	tx->crc_fed = 0;
	tx->have = 0;
	tx->pad = siw2_mpa_pad(ulpdu_len);
	tx->crc = SIW2_MPA_CRC_SEED;
	tx->state = FPDU_HDR;
	return siw2_mpa_fpdu_wire_len(tx->pos, ulpdu_len, tx->markers);
}

void siw2_mpa_tx_crc(struct siw2_mpa_tx *tx, const void *data, size_t len)
{
	if (tx->gen_crc)
		tx->crc = siw2_mpa_crc_update(tx->crc, data, len);
	tx->crc_fed += len;
}

/* Appends up to @room fixed octets of the current field to tx->bytes. */
static u32 tx_fixed(struct siw2_mpa_tx *tx, u32 at, u32 room)
{
	u8 field[SIW2_MPA_CRC_LEN] = { };
	u32 size, n;

	switch (tx->state) {
	case FPDU_HDR:
		if (!tx->have)
			tx->hdr_pos = tx->pos;
		field[0] = tx->ulpdu_len >> 8;
		field[1] = tx->ulpdu_len & 0xff;
		size = SIW2_MPA_HDR_LEN;
		break;
	case FPDU_PAD:
		/* 4.1: pad octets are zero. */
		size = tx->pad;
		break;
	default:
		/* 4.4: the CRC covers everything before it, sent or not. */
		if (!tx->have)
			tx->crc = tx->gen_crc ? siw2_mpa_crc_final(tx->crc) : 0;
		siw2_mpa_crc_put(field, tx->crc);
		size = SIW2_MPA_CRC_LEN;
		break;
	}
	n = min(room, size - tx->have);
	memcpy(tx->bytes + at, field + tx->have, n);
	if (tx->gen_crc && tx->state != FPDU_CRC)
		tx->crc = siw2_mpa_crc_update(tx->crc, tx->bytes + at, n);
	tx->have += n;
	tx->pos += n;
	if (tx->have == size) {
		tx->have = 0;
		if (tx->state == FPDU_HDR)
			tx->state = FPDU_DATA;
		else if (tx->state == FPDU_PAD)
			tx->state = FPDU_CRC;
		else
			tx->state = FPDU_IDLE;
	}
	return n;
}

/* Appends the Marker due at tx->pos to tx->bytes. */
static u32 tx_marker(struct siw2_mpa_tx *tx, u32 at)
{
	struct siw2_mpa_marker m = { };
	u16 ptr = 0;

	/*
	 * 4.3: a Marker in front of ULPDU_Length is 0 and belongs to this
	 * FPDU; later ones point back to ULPDU_Length.
	 */
	if (tx->state != FPDU_HDR || tx->have)
		ptr = tx->pos - tx->hdr_pos;
	m.fpduptr = cpu_to_be16(ptr);
	memcpy(tx->bytes + at, &m, sizeof(m));
	/* 4.4: Markers up to the CRC field are covered by the CRC. */
	if (tx->gen_crc && (tx->state != FPDU_CRC || !tx->have))
		tx->crc = siw2_mpa_crc_update(tx->crc, tx->bytes + at,
					      sizeof(m));
	tx->pos += sizeof(m);
	return sizeof(m);
}

int siw2_mpa_tx_next(struct siw2_mpa_tx *tx, struct siw2_mpa_tx_piece *pc)
{
	u32 n = 0;

	memset(pc, 0, sizeof(*pc));
	if (tx->gen_crc && tx->crc_fed != tx->ulpdu_off)
		return -EPROTO;

	/*
	 * Fixed octets collect in tx->bytes until a ULPDU range or the end.
	 * The longest run is pad, Marker, CRC: 11 octets.
	 */
	while (tx->state != FPDU_IDLE) {
		u32 room = U32_MAX;

		if (tx->markers) {
			room = marker_gap(tx->pos);
			if (!room) {
				n += tx_marker(tx, n);
				continue;
			}
		}
		if (tx->state != FPDU_DATA) {
			n += tx_fixed(tx, n, room);
			continue;
		}
		if (n)
			break;
		pc->ulpdu_off = tx->ulpdu_off;
		pc->len = min(room, tx->ulpdu_len - tx->ulpdu_off);
		tx->ulpdu_off += pc->len;
		tx->pos += pc->len;
		if (tx->ulpdu_off == tx->ulpdu_len)
			tx->state = tx->pad ? FPDU_PAD : FPDU_CRC;
		return 1;
	}
	if (!n)
		return 0;
	pc->bytes = tx->bytes;
	pc->len = n;
	return 1;
}

size_t siw2_mpa_fpdu_build(struct siw2_mpa_tx *tx, const void *ulpdu, u32 len,
			   u8 *out, size_t cap)
{
	struct siw2_mpa_tx_piece pc;
	size_t done = 0;

	if (tx->state != FPDU_IDLE || !len || len > SIW2_MPA_MULPDU_MAX ||
	    siw2_mpa_fpdu_wire_len(tx->pos, len, tx->markers) > cap)
		return 0;
	siw2_mpa_tx_begin(tx, len);
	while (siw2_mpa_tx_next(tx, &pc) > 0) {
		if (pc.bytes) {
			memcpy(out + done, pc.bytes, pc.len);
		} else {
			memcpy(out + done, (const u8 *)ulpdu + pc.ulpdu_off,
			       pc.len);
			siw2_mpa_tx_crc(tx, out + done, pc.len);
		}
		done += pc.len;
	}
	return done;
}

u32 siw2_mpa_tx_frame(struct siw2_mpa_tx *tx, u8 *buf, u32 len)
{
	u32 crc = 0, end;

	if (tx->markers || tx->state != FPDU_IDLE || !len ||
	    len > SIW2_MPA_MULPDU_MAX)
		return 0;
	buf[0] = len >> 8;
	buf[1] = len & 0xff;
	end = SIW2_MPA_HDR_LEN + len;
	/* 4.1: pad octets are zero. */
	memset(buf + end, 0, siw2_mpa_pad(len));
	end += siw2_mpa_pad(len);
	/* 4.4: the CRC covers ULPDU_Length, the ULPDU and the pad. */
	if (tx->gen_crc)
		crc = siw2_mpa_crc_final(siw2_mpa_crc_update(SIW2_MPA_CRC_SEED,
							     buf, end));
	siw2_mpa_crc_put(buf + end, crc);
	end += SIW2_MPA_CRC_LEN;
	tx->pos += end;
	return end;
}
