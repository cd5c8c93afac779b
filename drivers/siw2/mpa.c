// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * MPA (RFC 5044, RFC 6581) as pure code; see mpa.h for the interfaces.
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

/* ---- Connection setup ---- */

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
