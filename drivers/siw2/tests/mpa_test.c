// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * KUnit tests for mpa.c and mpa_cm.c: CRC32c against RFC 3720 B.4 and the RFC 5044
 * example FPDUs, framing under any split of the byte stream, Markers at
 * every stream offset, the CRC folding of a receiver that folds it itself,
 * connection setup outcomes and every error value.
 *
 * Randomness comes from a seeded xorshift generator so that every run sees
 * the same streams.
 */
#include <kunit/test.h>
#include <linux/errno.h>
#include <linux/kernel.h>
#include <linux/module.h>
#include <linux/slab.h>
#include <linux/string.h>

#include "../mpa.h"

struct prng {
	u64 s;
};

/* xorshift64 (Marsaglia, shifts 13, 7, 17). */
static u32 prng_next(struct prng *r)
{
	r->s ^= r->s << 13;
	r->s ^= r->s >> 7;
	r->s ^= r->s << 17;
	return r->s >> 32;
}

static u32 prng_range(struct prng *r, u32 lo, u32 hi)
{
	return lo + prng_next(r) % (hi - lo + 1);
}

static void *zalloc(struct kunit *test, size_t n)
{
	void *p = kunit_kzalloc(test, n, GFP_KERNEL);

	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, p);
	return p;
}

static void expect_mem(struct kunit *test, const u8 *got, const u8 *want,
		       size_t n, const char *what)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (got[i] != want[i])
			break;
	KUNIT_EXPECT_EQ_MSG(test, i, n, "%s: first difference at octet %zu",
			    what, i);
}

/* ---- CRC32c ---- */

/* The iSCSI SCSI Read (10) Command PDU of RFC 3720 B.4. */
static const u8 rfc3720_read_pdu[48] = {
	0x01, 0xc0, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
	0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
	0x14, 0x00, 0x00, 0x00, 0x00, 0x00, 0x04, 0x00,
	0x00, 0x00, 0x00, 0x14, 0x00, 0x00, 0x00, 0x18,
	0x28, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
	0x02, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
};

static u32 crc_by(bool table, u32 crc, const u8 *data, u32 len)
{
	siw2_mpa_crc_use_table(table);
	return siw2_mpa_crc_update(crc, data, len);
}

/*
 * Both implementations (crc.c chooses one at load) give @value, whole,
 * octet by octet, and when one takes over from the other half way.
 */
static void crc_vector(struct kunit *test, const u8 *data, u32 len,
		       u32 value, const u8 *wire, const char *what)
{
	u8 out[SIW2_MPA_CRC_LEN], copy[64];
	int table;
	u32 crc, i;

	for (table = 0; table < 2; table++) {
		crc = crc_by(table, SIW2_MPA_CRC_SEED, data, len);
		KUNIT_EXPECT_EQ_MSG(test, siw2_mpa_crc_final(crc), value,
				    "%s, table %d", what, table);
		crc = SIW2_MPA_CRC_SEED;
		for (i = 0; i < len; i++)
			crc = crc_by(table, crc, data + i, 1);
		KUNIT_EXPECT_EQ_MSG(test, siw2_mpa_crc_final(crc), value,
				    "%s, octet by octet, table %d", what, table);
		crc = crc_by(table, SIW2_MPA_CRC_SEED, data, len / 2);
		crc = crc_by(!table, crc, data + len / 2, len - len / 2);
		KUNIT_EXPECT_EQ_MSG(test, siw2_mpa_crc_final(crc), value,
				    "%s, table %d then %d", what, table, !table);
	}
	siw2_mpa_crc_use_table(false);
	/* The fused copy (its tables were built above) computes it too. */
	KUNIT_ASSERT_LE(test, len, (u32)sizeof(copy));
	crc = siw2_mpa_crc_copy(SIW2_MPA_CRC_SEED, copy, data, len);
	KUNIT_EXPECT_EQ_MSG(test, siw2_mpa_crc_final(crc), value,
			    "%s, fused copy", what);
	expect_mem(test, copy, data, len, what);
	siw2_mpa_crc_put(out, value);
	expect_mem(test, out, wire, sizeof(out), what);
}

/* RFC 3720 B.4: each CRC as listed there, in transmission order. */
static void mpa_test_crc_rfc3720(struct kunit *test)
{
	static const u8 w_zero[] = { 0xaa, 0x36, 0x91, 0x8a };
	static const u8 w_ones[] = { 0x43, 0xab, 0xa8, 0x62 };
	static const u8 w_inc[] = { 0x4e, 0x79, 0xdd, 0x46 };
	static const u8 w_dec[] = { 0x5c, 0xdb, 0x3f, 0x11 };
	static const u8 w_pdu[] = { 0x56, 0x3a, 0x96, 0xd9 };
	u8 buf[32];
	int i;

	memset(buf, 0, sizeof(buf));
	crc_vector(test, buf, 32, 0x8a9136aaU, w_zero, "32 zeroes");
	memset(buf, 0xff, sizeof(buf));
	crc_vector(test, buf, 32, 0x62a8ab43U, w_ones, "32 ones");
	for (i = 0; i < 32; i++)
		buf[i] = i;
	crc_vector(test, buf, 32, 0x46dd794eU, w_inc, "incrementing");
	for (i = 0; i < 32; i++)
		buf[i] = 31 - i;
	crc_vector(test, buf, 32, 0x113fdb5cU, w_dec, "decrementing");
	crc_vector(test, rfc3720_read_pdu, sizeof(rfc3720_read_pdu),
		   0xd9963a56U, w_pdu, "SCSI Read (10) PDU");
}

/* RFC 5044 Figure 5: the first FPDU of a stream with Markers and CRC. */
static const u8 rfc5044_fig5[52] = {
	0x00, 0x00, 0x00, 0x00,		/* Marker, FPDUPTR 0 */
	0x00, 0x2a,			/* ULPDU_Length 42 */
	0x41, 0x43,			/* DDP Send, Last */
	0x00, 0x00, 0x00, 0x00,		/* no STag */
	0x00, 0x00, 0x00, 0x00,		/* QN 0 */
	0x00, 0x00, 0x00, 0x01,		/* MSN 1 */
	0x00, 0x00, 0x00, 0x00,		/* MO 0 */
	0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,	/* 24 octets of Send data */
	0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
	0x52, 0x23, 0x99, 0x83,		/* CRC32c */
};

/* RFC 5044 Figure 6: stream octets 0x1ec..0x21f, the second FPDU. */
static const u8 rfc5044_fig6[52] = {
	0x00, 0x2a,			/* ULPDU_Length 42 */
	0x41, 0x43,
	0x00, 0x00, 0x00, 0x00,
	0x00, 0x00, 0x00, 0x00,
	0x00, 0x00, 0x00, 0x02,		/* MSN 2 */
	0x00, 0x00, 0x00, 0x00,
	0x00, 0x00, 0x00, 0x14,		/* Marker at 0x200, FPDUPTR 0x14 */
	0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
	0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
	0x84, 0x92, 0x58, 0x98,		/* CRC32c */
};

#define FIG6_POS 0x1ec

/* ---- Receive helpers ---- */

struct sink {
	u8 *out;		/* ULPDUs back to back */
	size_t cap;
	size_t len;
	u32 *lens;		/* ULPDU_Length of each END */
	u32 max_ends;
	u32 ends;
	u32 off;		/* next expected span offset */
	u32 spans;
	enum siw2_mpa_err err;
	size_t err_at;		/* input octets consumed when it came */
};

static void sink_reset(struct sink *sk)
{
	sk->len = 0;
	sk->ends = 0;
	sk->off = 0;
	sk->spans = 0;
	sk->err = SIW2_MPA_OK;
	sk->err_at = 0;
}

/*
 * A DATA span into the sink. A receiver that folds the CRC itself folds
 * the first octets alone and copies the rest in the fused pass, as the
 * stream does with a header in front of its payload.
 */
static void sink_data(struct siw2_mpa_rx *rx, struct sink *sk,
		      const struct siw2_mpa_rx_ev *ev)
{
	u32 *crc = siw2_mpa_rx_crc_sink(rx);
	u8 *to = sk->out + sk->len;
	u32 head;

	if (!crc) {
		memcpy(to, ev->data, ev->len);
		return;
	}
	head = min(ev->len, 3U);
	memcpy(to, ev->data, head);
	siw2_mpa_rx_fold_to(rx, ev->data + head);
	*crc = siw2_mpa_crc_copy(*crc, to + head, ev->data + head,
				 ev->len - head);
	siw2_mpa_rx_folded(rx, ev->data + ev->len);
}

/*
 * siw2_mpa_rx_init(), and with @fused the receiver folds DATA CRCs itself
 * (which it may only while the table implementation is chosen; the
 * choice changing later does not matter).
 */
static void rx_start(struct kunit *test, struct siw2_mpa_rx *rx,
		     bool markers, bool crc, bool fused)
{
	siw2_mpa_rx_init(rx, markers, crc);
	KUNIT_EXPECT_FALSE(test, siw2_mpa_rx_fold_by_caller(rx));
	if (!fused)
		return;
	siw2_mpa_crc_use_table(true);
	KUNIT_EXPECT_EQ(test, siw2_mpa_rx_fold_by_caller(rx), crc);
	siw2_mpa_crc_use_table(false);
}

/*
 * Feeds @len octets to @rx in chunks of 1..@maxchunk octets (random if
 * @r, fixed otherwise; 0: all at once), checking the span rules.
 */
static void feed(struct kunit *test, struct siw2_mpa_rx *rx, const u8 *buf,
		 size_t len, struct prng *r, u32 maxchunk, struct sink *sk)
{
	size_t at = 0;

	while (at < len) {
		size_t chunk = len - at;
		const u8 *p = buf + at;
		struct siw2_mpa_rx_ev ev;

		if (maxchunk)
			chunk = min_t(size_t, chunk,
				      r ? prng_range(r, 1, maxchunk) : maxchunk);
		at += chunk;
		do {
			size_t n = siw2_mpa_rx(rx, p, chunk, &ev);

			KUNIT_ASSERT_TRUE(test, n <= chunk);
			switch (ev.type) {
			case SIW2_MPA_RX_DATA:
				KUNIT_ASSERT_TRUE(test, ev.len >= 1);
				KUNIT_ASSERT_TRUE(test, ev.data >= p &&
						  ev.data + ev.len <= p + n);
				KUNIT_ASSERT_EQ(test, ev.offset, sk->off);
				KUNIT_ASSERT_TRUE(test, ev.offset + ev.len <=
						  ev.ulpdu_len);
				KUNIT_ASSERT_TRUE(test, sk->len + ev.len <=
						  sk->cap);
				sink_data(rx, sk, &ev);
				sk->len += ev.len;
				sk->off += ev.len;
				sk->spans++;
				break;
			case SIW2_MPA_RX_END:
				KUNIT_ASSERT_EQ(test, sk->off, ev.ulpdu_len);
				if (sk->ends < sk->max_ends)
					sk->lens[sk->ends] = ev.ulpdu_len;
				sk->ends++;
				sk->off = 0;
				break;
			case SIW2_MPA_RX_ERROR:
				sk->err = ev.err;
				sk->err_at = (p + n) - buf;
				return;
			case SIW2_MPA_RX_NONE:
				KUNIT_ASSERT_EQ(test, n, chunk);
				break;
			}
			p += n;
			chunk -= n;
		} while (ev.type != SIW2_MPA_RX_NONE);
	}
}

static struct sink *sink_new(struct kunit *test, size_t cap, u32 max_ends)
{
	struct sink *sk = zalloc(test, sizeof(*sk));

	sk->out = zalloc(test, cap);
	sk->cap = cap;
	sk->lens = zalloc(test, max_ends * sizeof(*sk->lens));
	sk->max_ends = max_ends;
	return sk;
}

static void mpa_test_rfc5044_fig5(struct kunit *test)
{
	const u8 *ulpdu = rfc5044_fig5 + 6;
	struct siw2_mpa_rx rx;
	struct siw2_mpa_tx tx;
	struct sink *sk = sink_new(test, 64, 4);
	u8 *wire = zalloc(test, 64);

	siw2_mpa_tx_init(&tx, true, true);
	KUNIT_EXPECT_EQ(test, siw2_mpa_fpdu_wire_len(0, 42, true), 52U);
	KUNIT_ASSERT_EQ(test, siw2_mpa_fpdu_build(&tx, ulpdu, 42, wire, 64),
			(size_t)52);
	expect_mem(test, wire, rfc5044_fig5, 52, "Figure 5 built");

	siw2_mpa_rx_init(&rx, true, true);
	feed(test, &rx, rfc5044_fig5, 52, NULL, 0, sk);
	KUNIT_EXPECT_EQ(test, sk->err, SIW2_MPA_OK);
	KUNIT_EXPECT_EQ(test, sk->ends, 1U);
	KUNIT_EXPECT_EQ(test, sk->spans, 1U);
	KUNIT_ASSERT_EQ(test, sk->len, (size_t)42);
	expect_mem(test, sk->out, ulpdu, 42, "Figure 5 received");
	KUNIT_EXPECT_EQ(test, rx.pos, 52U);
}

static void mpa_test_rfc5044_fig6(struct kunit *test)
{
	struct siw2_mpa_tx_piece pc;
	struct siw2_mpa_rx rx;
	struct siw2_mpa_tx tx;
	struct sink *sk = sink_new(test, 600, 4);
	u8 *wire = zalloc(test, 600);
	u8 *first = zalloc(test, 482);
	u8 ulpdu[42];
	size_t n;

	/* Send, MSN 2: Figure 5's ULPDU but for the MSN. */
	memcpy(ulpdu, rfc5044_fig5 + 6, sizeof(ulpdu));
	ulpdu[13] = 2;
	/* "The first FPDU ... had a length of 492 octets": 482 of ULPDU. */
	memcpy(first, rfc5044_fig5 + 6, 18);

	siw2_mpa_tx_init(&tx, true, true);
	KUNIT_EXPECT_EQ(test, siw2_mpa_fpdu_wire_len(0, 482, true), 492U);
	KUNIT_ASSERT_EQ(test, siw2_mpa_fpdu_build(&tx, first, 482, wire, 600),
			(size_t)492);
	KUNIT_ASSERT_EQ(test, tx.pos, (u32)FIG6_POS);
	n = siw2_mpa_fpdu_build(&tx, ulpdu, 42, wire + 492, 600 - 492);
	KUNIT_ASSERT_EQ(test, n, (size_t)52);
	expect_mem(test, wire + 492, rfc5044_fig6, 52, "Figure 6 built");

	siw2_mpa_rx_init(&rx, true, true);
	feed(test, &rx, wire, 544, NULL, 0, sk);
	KUNIT_EXPECT_EQ(test, sk->err, SIW2_MPA_OK);
	KUNIT_ASSERT_EQ(test, sk->ends, 2U);
	KUNIT_EXPECT_EQ(test, sk->lens[0], 482U);
	KUNIT_EXPECT_EQ(test, sk->lens[1], 42U);
	/* One span for the first, two around the Marker for the second. */
	KUNIT_EXPECT_EQ(test, sk->spans, 3U);
	KUNIT_ASSERT_EQ(test, sk->len, (size_t)524);
	expect_mem(test, sk->out + 482, ulpdu, 42, "Figure 6 received");

	/* The pieces a transmitter gets for Figure 6. */
	siw2_mpa_tx_init(&tx, true, true);
	tx.pos = FIG6_POS;
	KUNIT_ASSERT_EQ(test, siw2_mpa_tx_begin(&tx, 42), 52U);
	KUNIT_ASSERT_EQ(test, siw2_mpa_tx_next(&tx, &pc), 1);
	KUNIT_ASSERT_EQ(test, pc.len, 2U);
	expect_mem(test, pc.bytes, rfc5044_fig6, 2, "header piece");
	KUNIT_ASSERT_EQ(test, siw2_mpa_tx_next(&tx, &pc), 1);
	KUNIT_EXPECT_TRUE(test, !pc.bytes);
	KUNIT_EXPECT_EQ(test, pc.ulpdu_off, 0U);
	KUNIT_ASSERT_EQ(test, pc.len, 18U);
	siw2_mpa_tx_crc(&tx, ulpdu, 18);
	KUNIT_ASSERT_EQ(test, siw2_mpa_tx_next(&tx, &pc), 1);
	KUNIT_ASSERT_EQ(test, pc.len, 4U);
	expect_mem(test, pc.bytes, rfc5044_fig6 + 20, 4, "Marker piece");
	KUNIT_ASSERT_EQ(test, siw2_mpa_tx_next(&tx, &pc), 1);
	KUNIT_EXPECT_TRUE(test, !pc.bytes);
	KUNIT_EXPECT_EQ(test, pc.ulpdu_off, 18U);
	KUNIT_ASSERT_EQ(test, pc.len, 24U);
	siw2_mpa_tx_crc(&tx, ulpdu + 18, 24);
	KUNIT_ASSERT_EQ(test, siw2_mpa_tx_next(&tx, &pc), 1);
	KUNIT_ASSERT_EQ(test, pc.len, 4U);
	expect_mem(test, pc.bytes, rfc5044_fig6 + 48, 4, "CRC piece");
	KUNIT_EXPECT_EQ(test, siw2_mpa_tx_next(&tx, &pc), 0);
	KUNIT_EXPECT_EQ(test, tx.pos, (u32)FIG6_POS + 52);
}

/* ---- Framing ---- */

struct stream {
	u8 *wire;
	size_t wlen;
	size_t wcap;
	u8 *payload;
	size_t plen;
	size_t pcap;
	u32 *lens;
	u32 n;
};

static struct stream *stream_new(struct kunit *test, u32 count, u32 maxlen)
{
	struct stream *s = zalloc(test, sizeof(*s));

	s->pcap = (size_t)count * maxlen;
	s->wcap = s->pcap + s->pcap / 100 + (size_t)count * 16 + 16;
	s->wire = zalloc(test, s->wcap);
	s->payload = zalloc(test, s->pcap);
	s->lens = zalloc(test, count * sizeof(*s->lens));
	return s;
}

/* Appends @count FPDUs of random length 1..@maxlen and content. */
static void stream_fill(struct kunit *test, struct stream *s,
			struct siw2_mpa_tx *tx, struct prng *r, u32 count,
			u32 maxlen)
{
	u32 i, j;

	for (i = 0; i < count; i++) {
		u32 len = prng_range(r, 1, maxlen);
		u8 *p = s->payload + s->plen;
		u32 want = siw2_mpa_fpdu_wire_len(tx->pos, len, tx->markers);
		size_t n;

		for (j = 0; j < len; j++)
			p[j] = prng_next(r);
		n = siw2_mpa_fpdu_build(tx, p, len, s->wire + s->wlen,
					s->wcap - s->wlen);
		KUNIT_ASSERT_EQ(test, n, (size_t)want);
		s->wlen += n;
		s->plen += len;
		s->lens[s->n++] = len;
	}
}

static void expect_stream(struct kunit *test, const struct stream *s,
			  const struct sink *sk, const char *what)
{
	u32 i;

	KUNIT_EXPECT_EQ_MSG(test, sk->err, SIW2_MPA_OK, "%s", what);
	KUNIT_ASSERT_EQ_MSG(test, sk->ends, s->n, "%s", what);
	for (i = 0; i < s->n && i < sk->max_ends; i++)
		KUNIT_EXPECT_EQ_MSG(test, sk->lens[i], s->lens[i], "%s #%u",
				    what, i);
	KUNIT_ASSERT_EQ_MSG(test, sk->len, s->plen, "%s", what);
	expect_mem(test, sk->out, s->payload, s->plen, what);
}

/*
 * Every combination of Markers and CRC, streams of FPDUs fed whole, one
 * octet at a time and in random pieces; a ULPDU comes out identical with
 * and without Markers.
 */
static void mpa_test_framing_splits(struct kunit *test)
{
	static const u64 seeds[] = { 1, 0x5eed, 0x243f6a8885a308d3ULL };
	const u32 count = 48, maxlen = 1500;
	struct stream *s = stream_new(test, count, maxlen);
	struct sink *sk = sink_new(test, s->pcap, count);
	struct siw2_mpa_rx rx;
	struct siw2_mpa_tx tx;
	unsigned int k, cfg;

	for (k = 0; k < ARRAY_SIZE(seeds); k++) {
		for (cfg = 0; cfg < 4; cfg++) {
			bool markers = cfg & 1, crc = cfg & 2;
			struct prng r = { seeds[k] };
			struct prng split = { seeds[k] ^ 0x9e3779b97f4a7c15ULL };

			s->wlen = 0;
			s->plen = 0;
			s->n = 0;
			siw2_mpa_tx_init(&tx, markers, crc);
			stream_fill(test, s, &tx, &r, count, maxlen);

			sink_reset(sk);
			siw2_mpa_rx_init(&rx, markers, crc);
			feed(test, &rx, s->wire, s->wlen, NULL, 0, sk);
			expect_stream(test, s, sk, "whole");
			KUNIT_EXPECT_EQ(test, rx.pos, tx.pos);

			sink_reset(sk);
			siw2_mpa_rx_init(&rx, markers, crc);
			feed(test, &rx, s->wire, s->wlen, NULL, 1, sk);
			expect_stream(test, s, sk, "octet by octet");

			sink_reset(sk);
			siw2_mpa_rx_init(&rx, markers, crc);
			feed(test, &rx, s->wire, s->wlen, &split, 700, sk);
			expect_stream(test, s, sk, "random split");

			sink_reset(sk);
			siw2_mpa_rx_init(&rx, markers, crc);
			feed(test, &rx, s->wire, s->wlen, &split, 7, sk);
			expect_stream(test, s, sk, "small random split");

			sink_reset(sk);
			rx_start(test, &rx, markers, crc, true);
			feed(test, &rx, s->wire, s->wlen, &split, 7, sk);
			expect_stream(test, s, sk, "fused CRC, small random split");
			KUNIT_EXPECT_EQ(test, sk->err, SIW2_MPA_OK);

			sink_reset(sk);
			rx_start(test, &rx, markers, crc, true);
			feed(test, &rx, s->wire, s->wlen, NULL, 0, sk);
			expect_stream(test, s, sk, "fused CRC, whole");
			KUNIT_EXPECT_EQ(test, sk->err, SIW2_MPA_OK);
		}
	}
}

/* Where Markers were seen inside FPDUs, to prove the cases were hit. */
struct marker_cases {
	u32 at_start;		/* in front of ULPDU_Length, FPDUPTR 0 */
	u32 in_ddp_hdr;		/* within the first 18 ULPDU octets */
	u32 in_payload;
	u32 before_crc;		/* after the pad, in front of the CRC */
};

/*
 * Independent check of one FPDU on the wire against RFC 5044 4.1-4.4:
 * Markers at every 512th stream octet with the right FPDUPTR, the body
 * and a CRC over every octet before the CRC field.
 */
static void check_wire(struct kunit *test, const u8 *wire, u32 wlen,
		       u32 start, const u8 *payload, u32 len, bool crc_on,
		       u8 *body, struct marker_cases *mc)
{
	u32 pad = (4 - (len + 2) % 4) % 4;
	u32 crc_at = 2 + len + pad, body_len = crc_at + 4;
	u32 crc = SIW2_MPA_CRC_SEED, hdr_at = 0, b = 0, i = 0, k;
	u8 want[4];

	while (i < wlen) {
		u32 pos = start + i;

		if (pos % 512 == 0 && b < body_len) {
			u16 ptr;

			KUNIT_ASSERT_TRUE(test, i + 4 <= wlen);
			ptr = wire[i + 2] << 8 | wire[i + 3];
			KUNIT_EXPECT_EQ(test, wire[i] | wire[i + 1], 0);
			KUNIT_EXPECT_EQ_MSG(test, ptr, b ? pos - hdr_at : 0,
					    "start %u len %u", start, len);
			if (!b)
				mc->at_start++;
			else if (b == crc_at)
				mc->before_crc++;
			else if (b >= 2 && b < 20)
				mc->in_ddp_hdr++;
			else if (b >= 20 && b < 2 + len)
				mc->in_payload++;
			crc = siw2_mpa_crc_update(crc, wire + i, 4);
			i += 4;
			continue;
		}
		if (!b)
			hdr_at = pos;
		if (b < crc_at)
			crc = siw2_mpa_crc_update(crc, wire + i, 1);
		body[b++] = wire[i++];
	}
	KUNIT_ASSERT_EQ(test, b, body_len);
	KUNIT_EXPECT_EQ(test, body[0] << 8 | body[1], (int)len);
	expect_mem(test, body + 2, payload, len, "body");
	for (k = 0; k < pad; k++)
		KUNIT_EXPECT_EQ(test, body[2 + len + k], 0);
	siw2_mpa_crc_put(want, crc_on ? siw2_mpa_crc_final(crc) : 0);
	expect_mem(test, body + crc_at, want, 4, "CRC field");
}

/*
 * An FPDU starting at every 4-aligned stream offset mod 512 (FPDUs are
 * multiples of four and the stream starts with a Marker, so no other
 * offset occurs), with lengths that put Markers at its start, in the DDP
 * header, in the payload and in front of the CRC.
 */
static void mpa_test_marker_offsets(struct kunit *test)
{
	static const u32 lens[] = {
		1, 2, 3, 4, 5, 6, 7, 8, 17, 18, 19, 20, 499, 500, 501, 502,
		503, 504, 505, 506, 507, 508, 509, 510, 1013, 1014, 1015,
		1016, 1017, 2000,
	};
	struct marker_cases mc = { };
	u8 *payload = zalloc(test, 2000);
	u8 *wire = zalloc(test, 2100);
	u8 *body = zalloc(test, 2100);
	struct sink *sk = sink_new(test, 2000, 2);
	struct siw2_mpa_rx rx;
	struct siw2_mpa_tx tx;
	unsigned int k, i;
	u32 start;

	for (i = 0; i < 2000; i++)
		payload[i] = i * 7 + 3;
	for (start = 0; start < 512; start += 4) {
		for (k = 0; k < ARRAY_SIZE(lens); k++) {
			u32 len = lens[k];
			bool crc = (start / 4 + k) & 1;
			size_t n;

			siw2_mpa_tx_init(&tx, true, crc);
			tx.pos = start;
			n = siw2_mpa_fpdu_build(&tx, payload, len, wire, 2100);
			KUNIT_ASSERT_EQ(test, n, (size_t)
					siw2_mpa_fpdu_wire_len(start, len, true));
			KUNIT_ASSERT_EQ(test, tx.pos, start + (u32)n);
			check_wire(test, wire, n, start, payload, len, crc,
				   body, &mc);

			sink_reset(sk);
			siw2_mpa_rx_init(&rx, true, crc);
			rx.pos = start;
			feed(test, &rx, wire, n, NULL, (start / 4 + k) % 13,
			     sk);
			KUNIT_EXPECT_EQ(test, sk->err, SIW2_MPA_OK);
			KUNIT_EXPECT_EQ(test, sk->ends, 1U);
			KUNIT_ASSERT_EQ(test, sk->len, (size_t)len);
			expect_mem(test, sk->out, payload, len, "received");
			KUNIT_EXPECT_EQ(test, rx.pos, start + (u32)n);
		}
	}
	KUNIT_EXPECT_GT(test, mc.at_start, 0U);
	KUNIT_EXPECT_GT(test, mc.in_ddp_hdr, 0U);
	KUNIT_EXPECT_GT(test, mc.in_payload, 0U);
	KUNIT_EXPECT_GT(test, mc.before_crc, 0U);
}

/* The largest ULPDU RFC 5044 3 allows, and the sizes around it. */
static void mpa_test_ulpdu_limits(struct kunit *test)
{
	const u32 max = SIW2_MPA_MULPDU_MAX;
	u8 *payload = zalloc(test, max);
	u8 *wire = zalloc(test, max + 1024);
	struct sink *sk = sink_new(test, max, 2);
	struct siw2_mpa_rx rx;
	struct siw2_mpa_tx tx;
	static const u8 zero_len[] = { 0x00, 0x00 };
	static const u8 too_long[] = { 0xfd, 0x01 };
	size_t n;
	u32 i;

	for (i = 0; i < max; i++)
		payload[i] = i ^ (i >> 8);
	siw2_mpa_tx_init(&tx, true, true);
	n = siw2_mpa_fpdu_build(&tx, payload, max, wire, max + 1024);
	KUNIT_ASSERT_EQ(test, n, (size_t)siw2_mpa_fpdu_wire_len(0, max, true));
	siw2_mpa_rx_init(&rx, true, true);
	feed(test, &rx, wire, n, NULL, 0, sk);
	KUNIT_EXPECT_EQ(test, sk->err, SIW2_MPA_OK);
	KUNIT_ASSERT_EQ(test, sk->len, (size_t)max);
	expect_mem(test, sk->out, payload, max, "64768 octet ULPDU");

	siw2_mpa_tx_init(&tx, false, true);
	KUNIT_EXPECT_EQ(test, siw2_mpa_tx_begin(&tx, 0), 0U);
	KUNIT_EXPECT_EQ(test, siw2_mpa_tx_begin(&tx, max + 1), 0U);
	KUNIT_EXPECT_EQ(test, siw2_mpa_fpdu_build(&tx, payload, max + 1, wire,
						  max + 1024), (size_t)0);

	sink_reset(sk);
	siw2_mpa_rx_init(&rx, false, true);
	feed(test, &rx, zero_len, 2, NULL, 0, sk);
	KUNIT_EXPECT_EQ(test, sk->err, SIW2_MPA_ERR_ULPDU_LEN);
	KUNIT_EXPECT_EQ(test, sk->err_at, (size_t)2);

	sink_reset(sk);
	siw2_mpa_rx_init(&rx, false, false);
	feed(test, &rx, too_long, 2, NULL, 1, sk);
	KUNIT_EXPECT_EQ(test, sk->err, SIW2_MPA_ERR_ULPDU_LEN);
	KUNIT_EXPECT_EQ(test, siw2_mpa_err_ecode(sk->err),
			SIW2_MPA_ECODE_MARKER);
	KUNIT_EXPECT_TRUE(test, siw2_mpa_err_wants_term(sk->err));
}

/* One FPDU of @len patterned octets at stream position @pos. */
static size_t build_one(struct kunit *test, bool markers, bool crc, u32 pos,
			u32 len, u8 *payload, u8 *wire, size_t cap)
{
	struct siw2_mpa_tx tx;
	size_t n;
	u32 i;

	for (i = 0; i < len; i++)
		payload[i] = 0x80 | i;
	siw2_mpa_tx_init(&tx, markers, crc);
	tx.pos = pos;
	n = siw2_mpa_fpdu_build(&tx, payload, len, wire, cap);
	KUNIT_ASSERT_GT(test, n, (size_t)0);
	return n;
}

/* Rewrites the CRC field (the last four octets) to match the content. */
static void fix_crc(u8 *wire, size_t n)
{
	u32 crc = siw2_mpa_crc_update(SIW2_MPA_CRC_SEED, wire, n - 4);

	siw2_mpa_crc_put(wire + n - 4, siw2_mpa_crc_final(crc));
}

/* rx_one()'s receiver folds DATA CRCs itself (rx_start()). */
static bool rx_one_fused;

static void rx_one(struct kunit *test, bool markers, bool crc, const u8 *wire,
		   size_t n, struct sink *sk)
{
	struct siw2_mpa_rx rx;

	sink_reset(sk);
	rx_start(test, &rx, markers, crc, rx_one_fused);
	feed(test, &rx, wire, n, NULL, 0, sk);
}

static void crc_errors(struct kunit *test)
{
	u8 *payload = zalloc(test, 700);
	u8 *wire = zalloc(test, 800);
	struct sink *sk = sink_new(test, 700, 2);
	struct siw2_mpa_rx rx;
	struct siw2_mpa_rx_ev ev;
	size_t n;

	/* A payload bit. */
	n = build_one(test, false, true, 0, 100, payload, wire, 800);
	wire[50] ^= 0x01;
	rx_one(test, false, true, wire, n, sk);
	KUNIT_EXPECT_EQ(test, sk->err, SIW2_MPA_ERR_CRC);
	KUNIT_EXPECT_EQ(test, sk->err_at, n);
	KUNIT_EXPECT_EQ(test, sk->ends, 0U);
	KUNIT_EXPECT_EQ(test, siw2_mpa_err_ecode(sk->err), SIW2_MPA_ECODE_CRC);
	KUNIT_EXPECT_TRUE(test, siw2_mpa_err_wants_term(sk->err));
	/* Without CRCs nothing is checked (RFC 5044 4.1). */
	rx_one(test, false, false, wire, n, sk);
	KUNIT_EXPECT_EQ(test, sk->err, SIW2_MPA_OK);
	KUNIT_EXPECT_EQ(test, sk->ends, 1U);

	/* The CRC field itself, and a pad octet (101 octets: pad 1). */
	n = build_one(test, false, true, 0, 101, payload, wire, 800);
	wire[n - 1] ^= 0x80;
	rx_one(test, false, true, wire, n, sk);
	KUNIT_EXPECT_EQ(test, sk->err, SIW2_MPA_ERR_CRC);
	wire[n - 1] ^= 0x80;
	wire[n - 5] = 0xaa;
	rx_one(test, false, true, wire, n, sk);
	KUNIT_EXPECT_EQ(test, sk->err, SIW2_MPA_ERR_CRC);
	/* A pad octet that is not zero is ignored but for the CRC (4.1). */
	fix_crc(wire, n);
	rx_one(test, false, true, wire, n, sk);
	KUNIT_EXPECT_EQ(test, sk->err, SIW2_MPA_OK);
	KUNIT_EXPECT_EQ(test, sk->ends, 1U);

	/* The Reserved field of a Marker is in the CRC (4.2, 4.3). */
	n = build_one(test, true, true, 0, 600, payload, wire, 800);
	wire[512] ^= 0x01;
	rx_one(test, true, true, wire, n, sk);
	KUNIT_EXPECT_EQ(test, sk->err, SIW2_MPA_ERR_CRC);
	/* ... and otherwise ignored. */
	fix_crc(wire, n);
	rx_one(test, true, true, wire, n, sk);
	KUNIT_EXPECT_EQ(test, sk->err, SIW2_MPA_OK);

	/* After an error nothing more comes out (RFC 5044 8). */
	siw2_mpa_rx_init(&rx, false, true);
	n = build_one(test, false, true, 0, 40, payload, wire, 800);
	wire[10] ^= 0x10;
	memcpy(wire + n, wire, n);
	rx_one(test, false, true, wire, 2 * n, sk);
	KUNIT_EXPECT_EQ(test, sk->err, SIW2_MPA_ERR_CRC);
	KUNIT_EXPECT_EQ(test, sk->err_at, n);
	sink_reset(sk);
	feed(test, &rx, wire, 2 * n, NULL, 0, sk);
	KUNIT_EXPECT_EQ(test, sk->err, SIW2_MPA_ERR_CRC);
	KUNIT_EXPECT_EQ(test, siw2_mpa_rx(&rx, wire + n, n, &ev), (size_t)0);
	KUNIT_EXPECT_EQ(test, ev.type, SIW2_MPA_RX_ERROR);
	KUNIT_EXPECT_EQ(test, ev.err, SIW2_MPA_ERR_CRC);
}

/* Runs @body with the MPA layer folding DATA CRCs, then the receiver. */
static void both_folders(struct kunit *test, void (*body)(struct kunit *))
{
	rx_one_fused = false;
	body(test);
	rx_one_fused = true;
	body(test);
	rx_one_fused = false;
}

static void mpa_test_crc_errors(struct kunit *test)
{
	both_folders(test, crc_errors);
}

static void marker_errors(struct kunit *test)
{
	u8 *payload = zalloc(test, 700);
	u8 *wire = zalloc(test, 800);
	struct sink *sk = sink_new(test, 700, 2);
	size_t n;

	/* FPDU at 0 with 600 octets: a Marker at 512, FPDUPTR 508. */
	n = build_one(test, true, true, 0, 600, payload, wire, 800);
	KUNIT_ASSERT_EQ(test, wire[514] << 8 | wire[515], 508);

	/* The low two bits are treated as zero (4.2). */
	wire[515] |= 3;
	fix_crc(wire, n);
	rx_one(test, true, true, wire, n, sk);
	KUNIT_EXPECT_EQ(test, sk->err, SIW2_MPA_OK);

	/*
	 * With a valid CRC a wrong FPDUPTR is code 3 (8), reported at the
	 * end; nothing after the Marker is handed out.
	 */
	wire[514] ^= 0x01;
	fix_crc(wire, n);
	rx_one(test, true, true, wire, n, sk);
	KUNIT_EXPECT_EQ(test, sk->err, SIW2_MPA_ERR_MARKER);
	KUNIT_EXPECT_EQ(test, sk->err_at, n);
	KUNIT_EXPECT_EQ(test, sk->len, (size_t)(512 - 6));
	KUNIT_EXPECT_EQ(test, siw2_mpa_err_ecode(sk->err),
			SIW2_MPA_ECODE_MARKER);
	KUNIT_EXPECT_TRUE(test, siw2_mpa_err_wants_term(sk->err));

	/* With a bad CRC as well, the CRC error wins. */
	wire[600] ^= 0x40;
	rx_one(test, true, true, wire, n, sk);
	KUNIT_EXPECT_EQ(test, sk->err, SIW2_MPA_ERR_CRC);

	/* Without CRCs the Marker error comes at once. */
	rx_one(test, true, false, wire, n, sk);
	KUNIT_EXPECT_EQ(test, sk->err, SIW2_MPA_ERR_MARKER);
	KUNIT_EXPECT_EQ(test, sk->err_at, (size_t)516);

	/* A stream start Marker must be 0. */
	n = build_one(test, true, false, 0, 20, payload, wire, 800);
	wire[3] = 0x04;
	rx_one(test, true, false, wire, n, sk);
	KUNIT_EXPECT_EQ(test, sk->err, SIW2_MPA_ERR_MARKER);
	KUNIT_EXPECT_EQ(test, sk->err_at, (size_t)4);

	/* The peer sends no Markers although it was asked to. */
	n = build_one(test, false, false, 0, 20, payload, wire, 800);
	rx_one(test, true, false, wire, n, sk);
	KUNIT_EXPECT_EQ(test, sk->err, SIW2_MPA_ERR_MARKER);
}

static void mpa_test_marker_errors(struct kunit *test)
{
	both_folders(test, marker_errors);
}

static void mpa_test_tx_api(struct kunit *test)
{
	struct siw2_mpa_tx_piece pc;
	struct siw2_mpa_tx tx;
	u8 payload[100] = { };
	u8 wire[200];

	/* A Marker due at the start comes with ULPDU_Length in one piece. */
	siw2_mpa_tx_init(&tx, true, true);
	KUNIT_ASSERT_EQ(test, siw2_mpa_tx_begin(&tx, 100), 112U);
	KUNIT_EXPECT_EQ(test, siw2_mpa_tx_begin(&tx, 100), 0U);
	KUNIT_ASSERT_EQ(test, siw2_mpa_tx_next(&tx, &pc), 1);
	KUNIT_EXPECT_EQ(test, pc.len, 6U);
	KUNIT_ASSERT_EQ(test, siw2_mpa_tx_next(&tx, &pc), 1);
	KUNIT_EXPECT_EQ(test, pc.len, 100U);
	/* The ULPDU octets must reach the CRC before the next piece. */
	KUNIT_EXPECT_EQ(test, siw2_mpa_tx_next(&tx, &pc), -EPROTO);
	siw2_mpa_tx_crc(&tx, payload, 100);
	KUNIT_ASSERT_EQ(test, siw2_mpa_tx_next(&tx, &pc), 1);
	KUNIT_EXPECT_EQ(test, pc.len, 6U);	/* pad 2, CRC */
	KUNIT_EXPECT_EQ(test, siw2_mpa_tx_next(&tx, &pc), 0);
	KUNIT_EXPECT_EQ(test, siw2_mpa_tx_next(&tx, &pc), 0);
	KUNIT_EXPECT_EQ(test, tx.pos, 112U);

	/* Without CRCs the field is sent as zero; no CRC feeding needed. */
	siw2_mpa_tx_init(&tx, false, false);
	KUNIT_ASSERT_EQ(test, siw2_mpa_fpdu_build(&tx, payload, 3, wire, 200),
			(size_t)12);
	KUNIT_EXPECT_EQ(test, wire[8] | wire[9] | wire[10] | wire[11], 0);
	KUNIT_EXPECT_EQ(test, wire[1], 3);

	/* Too small a buffer leaves the state alone. */
	KUNIT_EXPECT_EQ(test, siw2_mpa_fpdu_build(&tx, payload, 100, wire, 107),
			(size_t)0);
	KUNIT_EXPECT_EQ(test, tx.pos, 12U);
	KUNIT_EXPECT_EQ(test, siw2_mpa_fpdu_build(&tx, payload, 100, wire, 108),
			(size_t)108);

	/* RFC 5044 4.5. */
	KUNIT_EXPECT_EQ(test, siw2_mpa_mulpdu(1460, false), 1454U);
	KUNIT_EXPECT_EQ(test, siw2_mpa_mulpdu(1460, true), 1442U);
	KUNIT_EXPECT_EQ(test, siw2_mpa_mulpdu(1461, false), 1454U);
	KUNIT_EXPECT_EQ(test, siw2_mpa_mulpdu(9000, true), 8922U);
	KUNIT_EXPECT_EQ(test, siw2_mpa_mulpdu(100, true), 128U);
	KUNIT_EXPECT_EQ(test, siw2_mpa_mulpdu(70000, false), 64768U);
	KUNIT_EXPECT_EQ(test, siw2_mpa_pad(1), 1U);
	KUNIT_EXPECT_EQ(test, siw2_mpa_pad(2), 0U);
	KUNIT_EXPECT_EQ(test, siw2_mpa_pad(16), 2U);
}

/* Framing in place gives the octets the piecewise transmitter gives. */
static void mpa_test_tx_frame(struct kunit *test)
{
	struct siw2_mpa_tx a, b;
	u8 *ref = zalloc(test, 300), *buf = zalloc(test, 300);
	u8 ulpdu[260];
	u32 len, n, i;
	size_t want;
	int crc;

	for (i = 0; i < sizeof(ulpdu); i++)
		ulpdu[i] = i * 7 + 1;
	for (crc = 0; crc < 2; crc++) {
		siw2_mpa_tx_init(&a, false, crc);
		siw2_mpa_tx_init(&b, false, crc);
		for (len = 1; len <= sizeof(ulpdu); len++) {
			want = siw2_mpa_fpdu_build(&a, ulpdu, len, ref, 300);
			KUNIT_ASSERT_GT(test, want, (size_t)0);
			memset(buf, 0xa5, 300);
			memcpy(buf + SIW2_MPA_HDR_LEN, ulpdu, len);
			n = siw2_mpa_tx_frame(&b, buf, len);
			KUNIT_ASSERT_EQ(test, (size_t)n, want);
			expect_mem(test, buf, ref, n, "framed in place");
			KUNIT_ASSERT_EQ(test, b.pos, a.pos);
		}
	}

	/* Not with Markers, not mid-FPDU, not for 0 or too many octets. */
	siw2_mpa_tx_init(&b, true, true);
	KUNIT_EXPECT_EQ(test, siw2_mpa_tx_frame(&b, buf, 8), 0U);
	siw2_mpa_tx_init(&b, false, true);
	KUNIT_EXPECT_EQ(test, siw2_mpa_tx_frame(&b, buf, 0), 0U);
	KUNIT_EXPECT_EQ(test, siw2_mpa_tx_frame(&b, buf,
						SIW2_MPA_MULPDU_MAX + 1), 0U);
	KUNIT_ASSERT_EQ(test, siw2_mpa_tx_begin(&b, 8), 16U);
	KUNIT_EXPECT_EQ(test, siw2_mpa_tx_frame(&b, buf, 8), 0U);
	KUNIT_EXPECT_EQ(test, b.pos, 0U);
}

/* ---- Connection setup ---- */

#define NONE SIW2_MPA_IRD_ORD_NONE

struct cm_pair {
	struct siw2_mpa_cm i;
	struct siw2_mpa_cm r;
	u8 req[SIW2_MPA_FRAME_MAX + 8];
	u8 rep[SIW2_MPA_FRAME_MAX + 8];
	size_t req_len;
	size_t rep_len;
	enum siw2_mpa_cm_action ia;	/* initiator's last action */
	enum siw2_mpa_cm_action ra;	/* responder's last action */
};

static const u8 pd_init[] = "from initiator";
static const u8 pd_resp[] = "from responder";

/*
 * Runs a startup between two state machines: Request, Reply (accept with
 * @ird/@ord, or reject), fed in @chunk octet pieces (0: whole).
 */
static void run_pair(struct kunit *test, struct cm_pair *cp,
		     const struct siw2_mpa_params *ip,
		     const struct siw2_mpa_params *rp, u16 ird, u16 ord,
		     bool reject, size_t chunk)
{
	size_t at, used, n;

	KUNIT_ASSERT_EQ(test, siw2_mpa_cm_init(&cp->i, SIW2_MPA_INITIATOR, ip),
			SIW2_MPA_OK);
	KUNIT_ASSERT_EQ(test, siw2_mpa_cm_init(&cp->r, SIW2_MPA_RESPONDER, rp),
			SIW2_MPA_OK);
	KUNIT_ASSERT_EQ(test, siw2_mpa_cm_request(&cp->i, pd_init,
						  sizeof(pd_init), cp->req,
						  sizeof(cp->req),
						  &cp->req_len), SIW2_MPA_OK);
	cp->ia = SIW2_MPA_CM_NEED_MORE;
	cp->ra = SIW2_MPA_CM_NEED_MORE;
	for (at = 0; at < cp->req_len; at += used) {
		n = chunk ? min(chunk, cp->req_len - at) : cp->req_len - at;
		cp->ra = siw2_mpa_cm_rx(&cp->r, cp->req + at, n, &used);
		KUNIT_ASSERT_TRUE(test, used <= n);
		if (cp->ra != SIW2_MPA_CM_NEED_MORE)
			break;
		KUNIT_ASSERT_EQ(test, used, n);
	}
	if (cp->ra == SIW2_MPA_CM_ERROR) {
		/* A responder that cannot go on closes TCP. */
		cp->ia = siw2_mpa_cm_closed(&cp->i);
		return;
	}
	KUNIT_ASSERT_EQ(test, cp->ra, SIW2_MPA_CM_REQUEST);
	KUNIT_ASSERT_EQ(test, at + used, cp->req_len);
	KUNIT_EXPECT_FALSE(test, siw2_mpa_cm_may_send(&cp->r));
	if (reject)
		KUNIT_ASSERT_EQ(test, siw2_mpa_cm_reject(&cp->r, ird, ord,
							 pd_resp,
							 sizeof(pd_resp),
							 cp->rep,
							 sizeof(cp->rep),
							 &cp->rep_len),
				SIW2_MPA_OK);
	else
		KUNIT_ASSERT_EQ(test, siw2_mpa_cm_accept(&cp->r, ird, ord,
							 pd_resp,
							 sizeof(pd_resp),
							 cp->rep,
							 sizeof(cp->rep),
							 &cp->rep_len),
				SIW2_MPA_OK);
	KUNIT_EXPECT_FALSE(test, siw2_mpa_cm_may_send(&cp->r));
	for (at = 0; at < cp->rep_len; at += used) {
		n = chunk ? min(chunk, cp->rep_len - at) : cp->rep_len - at;
		cp->ia = siw2_mpa_cm_rx(&cp->i, cp->rep + at, n, &used);
		KUNIT_ASSERT_TRUE(test, used <= n);
		if (cp->ia != SIW2_MPA_CM_NEED_MORE)
			break;
	}
	if (cp->ia != SIW2_MPA_CM_ERROR)
		KUNIT_EXPECT_EQ(test, at + used, cp->rep_len);
}

static struct siw2_mpa_params mk_params(u8 rev, bool m, bool c, bool p2p,
					u8 rtr, u16 ird, u16 ord)
{
	struct siw2_mpa_params p = {
		.rev = rev, .markers = m, .crc = c, .p2p = p2p, .rtr = rtr,
		.ird = ird, .ord = ord,
	};

	return p;
}

/* Outcome of one startup, written out by hand from the RFC rules. */
struct nego_row {
	const char *what;
	struct siw2_mpa_params i, r;
	u16 acc_ird, acc_ord;
	bool reject;
	enum siw2_mpa_cm_action ia, ra;
	enum siw2_mpa_err ierr, rerr;
	/* Valid when the initiator got ESTABLISHED or REJECTED. */
	u8 rev;
	bool enhanced, crc, i_tx_markers, i_rx_markers, p2p;
	u8 i_rtr, r_rtr;
	u16 i_ird, i_ord, r_ird, r_ord;
};

#define P(rev, m, c, p2p, rtr, ird, ord) \
	{ rev, m, c, p2p, rtr, ird, ord }
#define W SIW2_MPA_RTR_WRITE
#define R SIW2_MPA_RTR_READ
#define S SIW2_MPA_RTR_SEND
#define EST SIW2_MPA_CM_ESTABLISHED
#define REQ SIW2_MPA_CM_REQUEST
#define ERR SIW2_MPA_CM_ERROR

static const struct nego_row nego_rows[] = {
	{ "rev 1, nothing", P(1, 0, 0, 0, 0, 4, 4), P(1, 0, 0, 0, 0, 0, 0),
	  8, 8, false, EST, REQ, 0, 0,
	  1, false, false, false, false, false, 0, 0, 4, 4, 8, 8 },
	{ "rev 1, M from initiator, C from responder",
	  P(1, 1, 0, 0, 0, 0, 0), P(1, 0, 1, 0, 0, 0, 0),
	  0, 0, false, EST, REQ, 0, 0,
	  1, false, true, false, true, false, 0, 0, 0, 0, 0, 0 },
	{ "rev 1, M from responder", P(1, 0, 1, 0, 0, 0, 0),
	  P(1, 1, 0, 0, 0, 0, 0),
	  0, 0, false, EST, REQ, 0, 0,
	  1, false, true, true, false, false, 0, 0, 0, 0, 0, 0 },
	{ "rev 1 initiator, rev 2 responder", P(1, 1, 1, 0, 0, 2, 2),
	  P(2, 1, 1, 0, W, 0, 0),
	  16, 16, false, EST, REQ, 0, 0,
	  1, false, true, true, true, false, 0, 0, 2, 2, 16, 16 },
	{ "rev 2 client-server", P(2, 0, 0, 0, 0, 8, 4),
	  P(2, 0, 0, 0, W, 0, 0),
	  16, 16, false, EST, REQ, 0, 0,
	  2, true, false, false, false, false, 0, 0, 8, 4, 16, 8 },
	{ "rev 2 p2p, Write chosen", P(2, 0, 1, 1, S | W | R, 4, 4),
	  P(2, 0, 0, 0, W | R, 0, 0),
	  2, 2, false, EST, REQ, 0, 0,
	  2, true, true, false, false, true, W, W | R, 4, 2, 2, 2 },
	{ "rev 2 p2p, Read RTR raises IRD 0 to 1", P(2, 0, 0, 1, R, 1, 0),
	  P(2, 0, 0, 0, R, 0, 0),
	  0, 0, false, EST, REQ, 0, 0,
	  2, true, false, false, false, true, R, R, 1, 0, 1, 0 },
	{ "rev 2 p2p, Read over Send", P(2, 0, 0, 1, S | R, 4, 4),
	  P(2, 0, 0, 0, S | W | R, 0, 0),
	  4, 4, false, EST, REQ, 0, 0,
	  2, true, false, false, false, true, R, S | R, 4, 4, 4, 4 },
	{ "rev 2 p2p, no common RTR", P(2, 0, 0, 1, S, 4, 4),
	  P(2, 0, 0, 0, W, 0, 0),
	  4, 4, false, ERR, REQ, SIW2_MPA_ERR_NO_RTR, 0,
	  2, true, false, false, false, false, 0, W, 4, 4, 4, 4 },
	{ "rev 2 initiator, rev 1 responder", P(2, 0, 0, 0, 0, 4, 4),
	  P(1, 0, 0, 0, 0, 0, 0),
	  0, 0, false, ERR, ERR, SIW2_MPA_ERR_CLOSED, SIW2_MPA_ERR_REV },
	{ "0x3fff both ways", P(2, 0, 0, 0, 0, NONE, NONE),
	  P(2, 0, 0, 0, W, 0, 0),
	  8, 8, false, EST, REQ, 0, 0,
	  2, true, false, false, false, false, 0, 0, NONE, NONE, 8, 8 },
	{ "0x3fff initiator ORD", P(2, 0, 0, 0, 0, 4, NONE),
	  P(2, 0, 0, 0, W, 0, 0),
	  8, 8, false, EST, REQ, 0, 0,
	  2, true, false, false, false, false, 0, 0, 4, NONE, 8, 4 },
	{ "0x3fff responder ORD", P(2, 0, 0, 0, 0, 4, 2),
	  P(2, 0, 0, 0, W, 0, 0),
	  8, NONE, false, EST, REQ, 0, 0,
	  2, true, false, false, false, false, 0, 0, 4, 2, 8, NONE },
	{ "responder IRD below initiator ORD", P(2, 0, 0, 0, 0, 2, 8),
	  P(2, 0, 0, 0, W, 0, 0),
	  3, 1, false, EST, REQ, 0, 0,
	  2, true, false, false, false, false, 0, 0, 2, 3, 3, 1 },
	{ "rev 2 reject", P(2, 1, 1, 1, W, 4, 4), P(2, 0, 0, 0, W, 0, 0),
	  0, 7, true, SIW2_MPA_CM_REJECTED, REQ, 0, 0,
	  2, true, true, false, true, false, 0, W, 4, 4, 0, 7 },
	{ "rev 1 reject", P(1, 0, 0, 0, 0, 4, 4), P(2, 0, 0, 0, W, 0, 0),
	  0, 0, true, SIW2_MPA_CM_REJECTED, REQ, 0, 0,
	  1, false, false, false, false, false, 0, 0, 4, 4, 0, 0 },
};

#undef P
#undef W
#undef R
#undef S
#undef EST
#undef REQ
#undef ERR

static void check_row(struct kunit *test, struct cm_pair *cp,
		      const struct nego_row *t)
{
	const struct siw2_mpa_conn *ic = &cp->i.conn, *rc = &cp->r.conn;

	KUNIT_ASSERT_EQ_MSG(test, cp->ia, t->ia, "%s", t->what);
	KUNIT_ASSERT_EQ_MSG(test, cp->ra, t->ra, "%s", t->what);
	KUNIT_EXPECT_EQ_MSG(test, cp->i.err, t->ierr, "%s", t->what);
	KUNIT_EXPECT_EQ_MSG(test, cp->r.err, t->rerr, "%s", t->what);
	if (t->ra != SIW2_MPA_CM_REQUEST)
		return;
	KUNIT_EXPECT_EQ_MSG(test, ic->rev, t->rev, "%s", t->what);
	KUNIT_EXPECT_EQ_MSG(test, rc->rev, t->rev, "%s", t->what);
	KUNIT_EXPECT_EQ_MSG(test, ic->enhanced, t->enhanced, "%s", t->what);
	KUNIT_EXPECT_EQ_MSG(test, rc->enhanced, t->enhanced, "%s", t->what);
	KUNIT_EXPECT_EQ_MSG(test, ic->crc, t->crc, "%s", t->what);
	KUNIT_EXPECT_EQ_MSG(test, rc->crc, t->crc, "%s", t->what);
	/* The Reply's C says whether CRCs are on, whoever asked. */
	KUNIT_EXPECT_EQ_MSG(test,
			    !!(cp->rep[SIW2_MPA_KEY_LEN] & SIW2_MPA_FLAG_C),
			    t->crc, "%s", t->what);
	KUNIT_EXPECT_EQ_MSG(test, ic->tx_markers, t->i_tx_markers, "%s",
			    t->what);
	KUNIT_EXPECT_EQ_MSG(test, ic->rx_markers, t->i_rx_markers, "%s",
			    t->what);
	KUNIT_EXPECT_EQ_MSG(test, rc->rx_markers, t->i_tx_markers, "%s",
			    t->what);
	KUNIT_EXPECT_EQ_MSG(test, rc->tx_markers, t->i_rx_markers, "%s",
			    t->what);
	KUNIT_EXPECT_EQ_MSG(test, ic->p2p, t->p2p, "%s", t->what);
	KUNIT_EXPECT_EQ_MSG(test, ic->rtr, t->i_rtr, "%s", t->what);
	KUNIT_EXPECT_EQ_MSG(test, rc->rtr, t->r_rtr, "%s", t->what);
	KUNIT_EXPECT_EQ_MSG(test, ic->ird, t->i_ird, "%s", t->what);
	KUNIT_EXPECT_EQ_MSG(test, ic->ord, t->i_ord, "%s", t->what);
	KUNIT_EXPECT_EQ_MSG(test, rc->ird, t->r_ird, "%s", t->what);
	KUNIT_EXPECT_EQ_MSG(test, rc->ord, t->r_ord, "%s", t->what);
	/* Each side hands the peer's Private Data to its ULP. */
	KUNIT_EXPECT_EQ_MSG(test, rc->pdata_len, sizeof(pd_init), "%s",
			    t->what);
	expect_mem(test, rc->pdata, pd_init, sizeof(pd_init), t->what);
	KUNIT_EXPECT_EQ_MSG(test, ic->pdata_len, sizeof(pd_resp), "%s",
			    t->what);
	expect_mem(test, ic->pdata, pd_resp, sizeof(pd_resp), t->what);
}

static void mpa_test_nego_table(struct kunit *test)
{
	struct cm_pair *cp = zalloc(test, sizeof(*cp));
	unsigned int k;

	for (k = 0; k < ARRAY_SIZE(nego_rows); k++) {
		const struct nego_row *t = &nego_rows[k];

		run_pair(test, cp, &t->i, &t->r, t->acc_ird, t->acc_ord,
			 t->reject, 0);
		check_row(test, cp, t);
		/* The same, octet by octet. */
		run_pair(test, cp, &t->i, &t->r, t->acc_ird, t->acc_ord,
			 t->reject, 1);
		check_row(test, cp, t);
	}
	/* RFC 6581 10: an enhanced Request closed on may go again as rev 1. */
	run_pair(test, cp, &nego_rows[9].i, &nego_rows[9].r, 0, 0, false, 0);
	KUNIT_EXPECT_TRUE(test, siw2_mpa_cm_retry_rev1(&cp->i));
	run_pair(test, cp, &nego_rows[0].i, &nego_rows[0].r, 0, 0, false, 0);
	KUNIT_EXPECT_FALSE(test, siw2_mpa_cm_retry_rev1(&cp->i));
}

/*
 * Every combination of revision, M, C, P2P, RTR options and IRD/ORD
 * (0, 1, 5, 0x3fff) on both sides, checked against the RFC rules restated
 * below and against what both sides must agree on.
 */
static const u16 nego_vals[] = { 0, 1, 5, NONE };
static const u8 nego_rtrs[] = {
	SIW2_MPA_RTR_SEND, SIW2_MPA_RTR_WRITE, SIW2_MPA_RTR_READ,
	SIW2_MPA_RTR_ALL,
};

/* RFC 6581 9.1 seen from the responder, for the exhaustive test. */
static u16 want_reply_ord(u16 init_ird, u16 acc_ord)
{
	if (init_ird == NONE || acc_ord == NONE)
		return NONE;
	return min(init_ird, acc_ord);
}

static void nego_one(struct kunit *test, struct cm_pair *cp,
		     const struct siw2_mpa_params *ip,
		     const struct siw2_mpa_params *rp, u16 air, u16 aor,
		     u32 *established)
{
	const struct siw2_mpa_conn *ic = &cp->i.conn, *rc = &cp->r.conn;
	u16 rep_ird, rep_ord;
	u8 offer, usable;

	run_pair(test, cp, ip, rp, air, aor, false, 0);

	/* RFC 6581 10: a rev 1 responder closes on a rev 2 Request. */
	if (ip->rev > rp->rev) {
		KUNIT_EXPECT_EQ(test, cp->ra, SIW2_MPA_CM_ERROR);
		KUNIT_EXPECT_EQ(test, cp->r.err, SIW2_MPA_ERR_REV);
		KUNIT_EXPECT_EQ(test, cp->i.err, SIW2_MPA_ERR_CLOSED);
		return;
	}
	KUNIT_ASSERT_EQ(test, cp->ra, SIW2_MPA_CM_REQUEST);
	/* RFC 5044 7.1.1: C from either side; M per receiving side. */
	KUNIT_EXPECT_EQ(test, ic->crc, ip->crc || rp->crc);
	KUNIT_EXPECT_EQ(test, rc->crc, ic->crc);
	KUNIT_EXPECT_EQ(test, ic->rx_markers, ip->markers);
	KUNIT_EXPECT_EQ(test, ic->tx_markers, rp->markers);
	KUNIT_EXPECT_EQ(test, rc->rx_markers, rp->markers);
	KUNIT_EXPECT_EQ(test, rc->tx_markers, ip->markers);
	KUNIT_EXPECT_EQ(test, ic->rev, ip->rev);
	KUNIT_EXPECT_EQ(test, rc->rev, ip->rev);
	KUNIT_EXPECT_EQ(test, ic->enhanced, ip->rev == 2);

	if (ip->rev == 1) {
		KUNIT_EXPECT_EQ(test, cp->ia, SIW2_MPA_CM_ESTABLISHED);
		KUNIT_EXPECT_EQ(test, ic->ird, ip->ird);
		KUNIT_EXPECT_EQ(test, ic->ord, ip->ord);
		KUNIT_EXPECT_EQ(test, rc->ird, air);
		KUNIT_EXPECT_EQ(test, rc->ord, aor);
		KUNIT_EXPECT_FALSE(test, ic->p2p);
		(*established)++;
		return;
	}

	/* RFC 6581 9.1, 9.2 as the Reply carries them. */
	offer = 0;
	if (ip->p2p) {
		offer = ip->rtr & rp->rtr;
		if (!offer)
			offer = rp->rtr;
	}
	rep_ord = want_reply_ord(ip->ird, aor);
	rep_ird = ip->ord == NONE ? NONE : air;
	if (offer & SIW2_MPA_RTR_READ && rep_ird == 0)
		rep_ird = 1;
	KUNIT_EXPECT_EQ(test, ic->peer_ird, rep_ird);
	KUNIT_EXPECT_EQ(test, ic->peer_ord, rep_ord);
	KUNIT_EXPECT_EQ(test, rc->peer_ird, ip->ird);
	KUNIT_EXPECT_EQ(test, rc->peer_ord, ip->ord);
	KUNIT_EXPECT_EQ(test, rc->ird, rep_ird == NONE ? air : rep_ird);
	KUNIT_EXPECT_EQ(test, rc->ord, rep_ord == NONE ? aor : rep_ord);
	KUNIT_EXPECT_EQ(test, rc->rtr, offer);

	usable = offer & ip->rtr;
	if (rep_ird == 0)
		usable &= ~SIW2_MPA_RTR_READ;
	if (ip->p2p && !usable) {
		KUNIT_EXPECT_EQ(test, cp->ia, SIW2_MPA_CM_ERROR);
		KUNIT_EXPECT_EQ(test, cp->i.err, SIW2_MPA_ERR_NO_RTR);
		KUNIT_EXPECT_EQ(test, siw2_mpa_err_ecode(cp->i.err),
				SIW2_MPA_ECODE_RTR);
		return;
	}
	KUNIT_ASSERT_EQ(test, cp->ia, SIW2_MPA_CM_ESTABLISHED);
	(*established)++;
	KUNIT_EXPECT_EQ(test, ic->p2p, ip->p2p);
	KUNIT_EXPECT_EQ(test, rc->p2p, ip->p2p);
	if (ip->p2p) {
		/* One option, one both sides can use; Write is preferred. */
		KUNIT_EXPECT_TRUE(test, ic->rtr == SIW2_MPA_RTR_SEND ||
				  ic->rtr == SIW2_MPA_RTR_WRITE ||
				  ic->rtr == SIW2_MPA_RTR_READ);
		KUNIT_EXPECT_EQ(test, ic->rtr & ~usable, 0);
		if (usable & SIW2_MPA_RTR_WRITE)
			KUNIT_EXPECT_EQ(test, ic->rtr, SIW2_MPA_RTR_WRITE);
	} else {
		KUNIT_EXPECT_EQ(test, ic->rtr, 0);
	}
	/* 9.1: initiator ORD <= responder IRD, responder ORD <= initiator IRD. */
	KUNIT_EXPECT_EQ(test, ic->ird, ip->ird);
	if (ip->ord != NONE && rep_ird != NONE)
		KUNIT_EXPECT_EQ(test, ic->ord, min(ip->ord, rep_ird));
	else
		KUNIT_EXPECT_EQ(test, ic->ord, ip->ord);
	if (ic->ord != NONE && rc->ird != NONE && rep_ird != NONE)
		KUNIT_EXPECT_LE(test, ic->ord, rc->ird);
	if (rc->ord != NONE && ic->ird != NONE && rep_ord != NONE)
		KUNIT_EXPECT_LE(test, rc->ord, ic->ird);
}

static void mpa_test_nego_exhaustive(struct kunit *test)
{
	const u32 nv = ARRAY_SIZE(nego_vals), nr = ARRAY_SIZE(nego_rtrs);
	struct cm_pair *cp = zalloc(test, sizeof(*cp));
	struct siw2_mpa_params ip, rp;
	u32 established = 0, runs = 0, idx, x;

	for (idx = 0; idx < 2 * 2 * 32 * nr * nr * nv * nv * nv * nv; idx++) {
		u32 iv, rv, flags, ir, rr, iird, iord, aird, aord;
		bool p2p;

		x = idx;
		iv = 1 + x % 2;
		x /= 2;
		rv = 1 + x % 2;
		x /= 2;
		flags = x % 32;
		x /= 32;
		ir = x % nr;
		x /= nr;
		rr = x % nr;
		x /= nr;
		iird = nego_vals[x % nv];
		x /= nv;
		iord = nego_vals[x % nv];
		x /= nv;
		aird = nego_vals[x % nv];
		x /= nv;
		aord = nego_vals[x % nv];
		p2p = flags & 16;

		/* A needs rev 2; RTR options only matter with A or rev 2. */
		if ((p2p && iv == 1) || (!p2p && ir) || (rv == 1 && rr))
			continue;
		ip = mk_params(iv, flags & 1, flags & 2, p2p, nego_rtrs[ir],
			       iird, iord);
		rp = mk_params(rv, flags & 4, flags & 8, false, nego_rtrs[rr],
			       0, 0);
		nego_one(test, cp, &ip, &rp, aird, aord, &established);
		runs++;
	}
	KUNIT_EXPECT_GT(test, established, 0U);
	KUNIT_EXPECT_EQ(test, runs, 122880U);
}

/* Writes a frame header by hand. */
static size_t mk_frame(u8 *out, const char *key, u8 flags, u8 rev,
		       u16 pd_len, const void *pd, size_t pd_copy)
{
	memcpy(out, key, SIW2_MPA_KEY_LEN);
	out[16] = flags;
	out[17] = rev;
	out[18] = pd_len >> 8;
	out[19] = pd_len & 0xff;
	if (pd_copy)
		memcpy(out + 20, pd, pd_copy);
	return 20 + pd_copy;
}

/* Feeds a frame to @cm, one octet per call when @bytewise. */
static enum siw2_mpa_cm_action feed_cm(struct siw2_mpa_cm *cm, const u8 *buf,
				       size_t len, bool bytewise,
				       size_t *total)
{
	enum siw2_mpa_cm_action a = SIW2_MPA_CM_NEED_MORE;
	size_t used, at = 0;

	while (at < len) {
		a = siw2_mpa_cm_rx(cm, buf + at, bytewise ? 1 : len - at,
				   &used);
		at += used;
		if (a != SIW2_MPA_CM_NEED_MORE)
			break;
	}
	*total = at;
	return a;
}

static const struct siw2_mpa_params p_rev1 = {
	.rev = 1,
};

static const struct siw2_mpa_params p_rev2 = {
	.rev = 2, .rtr = SIW2_MPA_RTR_WRITE, .ird = 4, .ord = 4,
};

static const struct siw2_mpa_params p_rev2_p2p = {
	.rev = 2, .p2p = true, .rtr = SIW2_MPA_RTR_WRITE | SIW2_MPA_RTR_READ,
	.ird = 2, .ord = 2,
};

/* A responder given @frame ends with @err after @at octets. */
static void resp_err(struct kunit *test, struct siw2_mpa_cm *cm,
		     const struct siw2_mpa_params *p, const u8 *frame,
		     size_t len, enum siw2_mpa_err err, size_t at)
{
	size_t used;

	KUNIT_ASSERT_EQ(test, siw2_mpa_cm_init(cm, SIW2_MPA_RESPONDER, p),
			SIW2_MPA_OK);
	KUNIT_EXPECT_EQ(test, feed_cm(cm, frame, len, true, &used),
			SIW2_MPA_CM_ERROR);
	KUNIT_EXPECT_EQ(test, cm->err, err);
	KUNIT_EXPECT_EQ(test, used, at);
	KUNIT_EXPECT_EQ(test, siw2_mpa_err_ecode(err), SIW2_MPA_ECODE_BAD_RR);
	KUNIT_EXPECT_FALSE(test, siw2_mpa_err_wants_term(err));
	/* The error sticks. */
	KUNIT_EXPECT_EQ(test, siw2_mpa_cm_rx(cm, frame, len, &used),
			SIW2_MPA_CM_ERROR);
	KUNIT_EXPECT_EQ(test, used, (size_t)0);
}

/* An initiator (Request already built from @p) given @frame gets @err. */
static void init_err(struct kunit *test, struct siw2_mpa_cm *cm,
		     const struct siw2_mpa_params *p, const u8 *frame,
		     size_t len, enum siw2_mpa_err err)
{
	u8 req[SIW2_MPA_FRAME_MAX];
	size_t n;

	KUNIT_ASSERT_EQ(test, siw2_mpa_cm_init(cm, SIW2_MPA_INITIATOR, p),
			SIW2_MPA_OK);
	KUNIT_ASSERT_EQ(test, siw2_mpa_cm_request(cm, NULL, 0, req,
						  sizeof(req), &n),
			SIW2_MPA_OK);
	KUNIT_EXPECT_EQ(test, feed_cm(cm, frame, len, false, &n),
			SIW2_MPA_CM_ERROR);
	KUNIT_EXPECT_EQ(test, cm->err, err);
}

static void mpa_test_cm_frame_errors(struct kunit *test)
{
	struct siw2_mpa_cm *cm = zalloc(test, sizeof(*cm));
	u8 *f = zalloc(test, SIW2_MPA_FRAME_MAX + 8);
	static const u8 v2[4] = { 0x00, 0x04, 0x00, 0x04 };
	static const u8 v2_a[4] = { 0x80, 0x02, 0x00, 0x02 };	/* A */
	static const u8 v2_no_a[4] = { 0x00, 0x02, 0x00, 0x02 };
	static const u8 v2_read0[4] = { 0x80, 0x00, 0x40, 0x00 }; /* A, D */
	static const u8 v2_ord3[4] = { 0x80, 0x04, 0x80, 0x03 }; /* A, C */
	size_t n;

	/* RFC 5044 7.1.2 rule 5: the first octet off the Key ends it. */
	n = mk_frame(f, "XPA ID Req Frame", 0, 1, 0, NULL, 0);
	resp_err(test, cm, &p_rev1, f, n, SIW2_MPA_ERR_KEY, 1);
	n = mk_frame(f, "MPA ID Rex Frame", 0, 1, 0, NULL, 0);
	resp_err(test, cm, &p_rev1, f, n, SIW2_MPA_ERR_KEY, 10);
	/* A responder receiving a Reply. */
	n = mk_frame(f, SIW2_MPA_KEY_REP, 0, 1, 0, NULL, 0);
	resp_err(test, cm, &p_rev1, f, n, SIW2_MPA_ERR_KEY, 20);
	/* 7.1.1 Rev. */
	n = mk_frame(f, SIW2_MPA_KEY_REQ, 0, 0, 0, NULL, 0);
	resp_err(test, cm, &p_rev2, f, n, SIW2_MPA_ERR_REV, 20);
	n = mk_frame(f, SIW2_MPA_KEY_REQ, 0, 3, 0, NULL, 0);
	resp_err(test, cm, &p_rev2, f, n, SIW2_MPA_ERR_REV, 20);
	n = mk_frame(f, SIW2_MPA_KEY_REQ, SIW2_MPA_FLAG_S, 2, 4, v2, 4);
	resp_err(test, cm, &p_rev1, f, n, SIW2_MPA_ERR_REV, 20);
	/* 7.1.1 PD_Length, caught before any Private Data arrives. */
	n = mk_frame(f, SIW2_MPA_KEY_REQ, 0, 1, 513, NULL, 0);
	resp_err(test, cm, &p_rev1, f, n, SIW2_MPA_ERR_PD_LEN, 20);
	/* RFC 6581 6: S with less than the 4 octets of enhanced data. */
	n = mk_frame(f, SIW2_MPA_KEY_REQ, SIW2_MPA_FLAG_S, 2, 3, v2, 3);
	resp_err(test, cm, &p_rev2, f, n, SIW2_MPA_ERR_ENH_SHORT, 20);

	/* 7.1.2 rule 9: octets past PD_Length before the Reply. */
	KUNIT_ASSERT_EQ(test, siw2_mpa_cm_init(cm, SIW2_MPA_RESPONDER,
					       &p_rev1), SIW2_MPA_OK);
	n = mk_frame(f, SIW2_MPA_KEY_REQ, 0, 1, 2, "ab", 3);
	KUNIT_EXPECT_EQ(test, feed_cm(cm, f, n, false, &n),
			SIW2_MPA_CM_REQUEST);
	KUNIT_EXPECT_EQ(test, n, (size_t)22);
	KUNIT_EXPECT_EQ(test, siw2_mpa_cm_rx(cm, f + 22, 1, &n),
			SIW2_MPA_CM_ERROR);
	KUNIT_EXPECT_EQ(test, cm->err, SIW2_MPA_ERR_PD_EXCESS);

	/* ... and PD_Length beyond what arrived. */
	KUNIT_ASSERT_EQ(test, siw2_mpa_cm_init(cm, SIW2_MPA_RESPONDER,
					       &p_rev1), SIW2_MPA_OK);
	n = mk_frame(f, SIW2_MPA_KEY_REQ, 0, 1, 10, "abcde", 5);
	KUNIT_EXPECT_EQ(test, feed_cm(cm, f, n, false, &n),
			SIW2_MPA_CM_NEED_MORE);
	KUNIT_EXPECT_EQ(test, siw2_mpa_cm_closed(cm), SIW2_MPA_CM_ERROR);
	KUNIT_EXPECT_EQ(test, cm->err, SIW2_MPA_ERR_PD_TRUNCATED);
	KUNIT_ASSERT_EQ(test, siw2_mpa_cm_init(cm, SIW2_MPA_RESPONDER,
					       &p_rev1), SIW2_MPA_OK);
	KUNIT_EXPECT_EQ(test, feed_cm(cm, f, n, true, &n),
			SIW2_MPA_CM_NEED_MORE);
	KUNIT_EXPECT_EQ(test, siw2_mpa_cm_timeout(cm), SIW2_MPA_CM_ERROR);
	KUNIT_EXPECT_EQ(test, cm->err, SIW2_MPA_ERR_PD_TRUNCATED);

	/* Rules 8 and 10: nothing came. */
	KUNIT_ASSERT_EQ(test, siw2_mpa_cm_init(cm, SIW2_MPA_RESPONDER,
					       &p_rev1), SIW2_MPA_OK);
	KUNIT_EXPECT_EQ(test, siw2_mpa_cm_timeout(cm), SIW2_MPA_CM_ERROR);
	KUNIT_EXPECT_EQ(test, cm->err, SIW2_MPA_ERR_TIMEOUT);
	KUNIT_EXPECT_EQ(test, siw2_mpa_err_ecode(cm->err),
			SIW2_MPA_ECODE_LLP_LOST);
	KUNIT_ASSERT_EQ(test, siw2_mpa_cm_init(cm, SIW2_MPA_RESPONDER,
					       &p_rev1), SIW2_MPA_OK);
	KUNIT_EXPECT_EQ(test, siw2_mpa_cm_closed(cm), SIW2_MPA_CM_ERROR);
	KUNIT_EXPECT_EQ(test, cm->err, SIW2_MPA_ERR_CLOSED);
	KUNIT_EXPECT_EQ(test, siw2_mpa_err_ecode(cm->err),
			SIW2_MPA_ECODE_LLP_LOST);
	KUNIT_EXPECT_FALSE(test, siw2_mpa_cm_retry_rev1(cm));

	/* 7.1.2 rule 8: Initiator/Initiator. */
	n = mk_frame(f, SIW2_MPA_KEY_REQ, 0, 1, 0, NULL, 0);
	init_err(test, cm, &p_rev1, f, n, SIW2_MPA_ERR_INIT_INIT);
	n = mk_frame(f, SIW2_MPA_KEY_REP, 0, 3, 0, NULL, 0);
	init_err(test, cm, &p_rev2, f, n, SIW2_MPA_ERR_REV);
	/* RFC 6581 10: an enhanced Reply to a rev 1 Request. */
	n = mk_frame(f, SIW2_MPA_KEY_REP, SIW2_MPA_FLAG_S, 2, 4, v2, 4);
	init_err(test, cm, &p_rev1, f, n, SIW2_MPA_ERR_ENH_UNSOLICITED);
	/* RFC 6581 10: a plain Reply to an enhanced Request. */
	n = mk_frame(f, SIW2_MPA_KEY_REP, 0, 1, 0, NULL, 0);
	init_err(test, cm, &p_rev2, f, n, SIW2_MPA_ERR_ENH_MISSING);
	KUNIT_EXPECT_TRUE(test, siw2_mpa_cm_retry_rev1(cm));
	n = mk_frame(f, SIW2_MPA_KEY_REP, 0, 2, 4, v2, 4);
	init_err(test, cm, &p_rev2, f, n, SIW2_MPA_ERR_ENH_MISSING);
	/* RFC 6581 9.2: A echoed although not asked for ... */
	n = mk_frame(f, SIW2_MPA_KEY_REP, SIW2_MPA_FLAG_S, 2, 4, v2_a, 4);
	init_err(test, cm, &p_rev2, f, n, SIW2_MPA_ERR_P2P_UNSOLICITED);
	/* ... or missing when asked for (code 7). */
	n = mk_frame(f, SIW2_MPA_KEY_REP, SIW2_MPA_FLAG_S, 2, 4, v2_no_a, 4);
	init_err(test, cm, &p_rev2_p2p, f, n, SIW2_MPA_ERR_NO_RTR);
	/* A Read RTR offered by a responder with IRD 0 is unusable. */
	n = mk_frame(f, SIW2_MPA_KEY_REP, SIW2_MPA_FLAG_S, 2, 4, v2_read0, 4);
	init_err(test, cm, &p_rev2_p2p, f, n, SIW2_MPA_ERR_NO_RTR);
	KUNIT_EXPECT_EQ(test, siw2_mpa_err_ecode(cm->err), SIW2_MPA_ECODE_RTR);
	KUNIT_EXPECT_TRUE(test, siw2_mpa_err_wants_term(cm->err));
	/* RFC 6581 9.1: responder ORD 3 above initiator IRD 2 (code 6). */
	n = mk_frame(f, SIW2_MPA_KEY_REP, SIW2_MPA_FLAG_S | SIW2_MPA_FLAG_C,
		     2, 4, v2_ord3, 4);
	init_err(test, cm, &p_rev2_p2p, f, n, SIW2_MPA_ERR_IRD);
	KUNIT_EXPECT_EQ(test, siw2_mpa_err_ecode(cm->err), SIW2_MPA_ECODE_IRD);
	KUNIT_EXPECT_TRUE(test, siw2_mpa_err_wants_term(cm->err));
	/* The Terminate goes out in Full Operation: conn says how. */
	KUNIT_EXPECT_TRUE(test, cm->conn.crc);
	KUNIT_EXPECT_EQ(test, cm->conn.peer_ord, 3);
	KUNIT_EXPECT_FALSE(test, siw2_mpa_cm_may_send(cm));

	/* A plain rev 2 Reply to a rev 1 Request is fine. */
	KUNIT_ASSERT_EQ(test, siw2_mpa_cm_init(cm, SIW2_MPA_INITIATOR,
					       &p_rev1), SIW2_MPA_OK);
	KUNIT_ASSERT_EQ(test, siw2_mpa_cm_request(cm, NULL, 0, f,
						  SIW2_MPA_FRAME_MAX, &n),
			SIW2_MPA_OK);
	n = mk_frame(f, SIW2_MPA_KEY_REP, SIW2_MPA_FLAG_M, 2, 0, NULL, 0);
	KUNIT_EXPECT_EQ(test, feed_cm(cm, f, n, true, &n),
			SIW2_MPA_CM_ESTABLISHED);
	KUNIT_EXPECT_EQ(test, cm->conn.rev, 1);
	KUNIT_EXPECT_TRUE(test, cm->conn.tx_markers);
	KUNIT_EXPECT_TRUE(test, siw2_mpa_cm_may_send(cm));
}

static void mpa_test_cm_local_errors(struct kunit *test)
{
	struct siw2_mpa_cm *cm = zalloc(test, sizeof(*cm));
	u8 *pd = zalloc(test, 600);
	u8 *f = zalloc(test, 600);
	struct siw2_mpa_params p = p_rev1;
	size_t n;

	/* Parameters. */
	p.rev = 3;
	KUNIT_EXPECT_EQ(test, siw2_mpa_cm_init(cm, SIW2_MPA_INITIATOR, &p),
			SIW2_MPA_ERR_PARAM);
	KUNIT_EXPECT_EQ(test, siw2_mpa_cm_request(cm, NULL, 0, f, 600, &n),
			SIW2_MPA_ERR_STATE);
	p = p_rev1;
	p.p2p = true;
	p.rtr = SIW2_MPA_RTR_WRITE;
	KUNIT_EXPECT_EQ(test, siw2_mpa_cm_init(cm, SIW2_MPA_INITIATOR, &p),
			SIW2_MPA_ERR_PARAM);
	p = p_rev2_p2p;
	p.rtr = 0;
	KUNIT_EXPECT_EQ(test, siw2_mpa_cm_init(cm, SIW2_MPA_INITIATOR, &p),
			SIW2_MPA_ERR_PARAM);
	p = p_rev2;
	p.rtr = 0;
	KUNIT_EXPECT_EQ(test, siw2_mpa_cm_init(cm, SIW2_MPA_RESPONDER, &p),
			SIW2_MPA_ERR_PARAM);
	p = p_rev2;
	p.ird = 0x4000;
	KUNIT_EXPECT_EQ(test, siw2_mpa_cm_init(cm, SIW2_MPA_INITIATOR, &p),
			SIW2_MPA_ERR_PARAM);

	/* 7.1.1: 512 octets of Private Data, the RFC 6581 data included. */
	KUNIT_ASSERT_EQ(test, siw2_mpa_cm_init(cm, SIW2_MPA_INITIATOR, &p_rev1),
			SIW2_MPA_OK);
	KUNIT_EXPECT_EQ(test, siw2_mpa_cm_request(cm, pd, 513, f, 600, &n),
			SIW2_MPA_ERR_PD_TOO_LONG);
	KUNIT_EXPECT_EQ(test, siw2_mpa_cm_request(cm, pd, 512, f, 531, &n),
			SIW2_MPA_ERR_NOSPC);
	KUNIT_EXPECT_EQ(test, siw2_mpa_cm_request(cm, pd, 512, f, 600, &n),
			SIW2_MPA_OK);
	KUNIT_EXPECT_EQ(test, n, (size_t)532);
	KUNIT_EXPECT_EQ(test, siw2_mpa_cm_request(cm, pd, 1, f, 600, &n),
			SIW2_MPA_ERR_STATE);
	KUNIT_EXPECT_EQ(test, siw2_mpa_cm_accept(cm, 0, 0, NULL, 0, f, 600,
						 &n), SIW2_MPA_ERR_STATE);
	KUNIT_ASSERT_EQ(test, siw2_mpa_cm_init(cm, SIW2_MPA_INITIATOR, &p_rev2),
			SIW2_MPA_OK);
	KUNIT_EXPECT_EQ(test, siw2_mpa_cm_request(cm, pd, 509, f, 600, &n),
			SIW2_MPA_ERR_PD_TOO_LONG);
	KUNIT_EXPECT_EQ(test, siw2_mpa_cm_request(cm, pd, 508, f, 600, &n),
			SIW2_MPA_OK);
	KUNIT_EXPECT_EQ(test, n, (size_t)532);

	/* A responder: too long a Reply fails and can be retried. */
	KUNIT_ASSERT_EQ(test, siw2_mpa_cm_init(cm, SIW2_MPA_RESPONDER, &p_rev2),
			SIW2_MPA_OK);
	KUNIT_EXPECT_EQ(test, siw2_mpa_cm_accept(cm, 0, 0, NULL, 0, f, 600,
						 &n), SIW2_MPA_ERR_STATE);
	KUNIT_EXPECT_EQ(test, siw2_mpa_cm_first_fpdu(cm), SIW2_MPA_CM_ERROR);
	n = mk_frame(f, SIW2_MPA_KEY_REQ, SIW2_MPA_FLAG_S, 2, 4,
		     "\x00\x01\x00\x01", 4);
	KUNIT_ASSERT_EQ(test, feed_cm(cm, f, n, false, &n),
			SIW2_MPA_CM_REQUEST);
	KUNIT_EXPECT_EQ(test, siw2_mpa_cm_accept(cm, 1, 1, pd, 509, f, 600,
						 &n), SIW2_MPA_ERR_PD_TOO_LONG);
	KUNIT_EXPECT_EQ(test, siw2_mpa_cm_accept(cm, 0x4000, 1, pd, 1, f, 600,
						 &n), SIW2_MPA_ERR_PARAM);
	KUNIT_EXPECT_EQ(test, siw2_mpa_cm_accept(cm, 1, 1, pd, 508, f, 600,
						 &n), SIW2_MPA_OK);
	KUNIT_EXPECT_EQ(test, n, (size_t)532);
	KUNIT_EXPECT_EQ(test, siw2_mpa_cm_accept(cm, 1, 1, pd, 1, f, 600, &n),
			SIW2_MPA_ERR_STATE);
}

/* Exact octets of a Request, and the enhanced data of RFC 6581 9. */
static void mpa_test_cm_frames(struct kunit *test)
{
	static const u8 req1[] = {
		'M', 'P', 'A', ' ', 'I', 'D', ' ', 'R',
		'e', 'q', ' ', 'F', 'r', 'a', 'm', 'e',
		0xc0, 0x01, 0x00, 0x03, 'a', 'b', 'c',
	};
	static const u8 req2[] = {
		'M', 'P', 'A', ' ', 'I', 'D', ' ', 'R',
		'e', 'q', ' ', 'F', 'r', 'a', 'm', 'e',
		0x10, 0x02, 0x00, 0x05,
		0x80, 0x10,		/* A, IRD 16 */
		0xc0, 0x08,		/* C, D, ORD 8 */
		'x',
	};
	static const u8 rep2[] = {
		'M', 'P', 'A', ' ', 'I', 'D', ' ', 'R',
		'e', 'p', ' ', 'F', 'r', 'a', 'm', 'e',
		0x50, 0x02, 0x00, 0x04,	/* C, S */
		0x80, 0x01,		/* A, IRD 1 (raised for Read) */
		0x40, 0x00,		/* D, ORD 0 */
	};
	struct siw2_mpa_cm *cm = zalloc(test, sizeof(*cm));
	struct siw2_mpa_cm *rc = zalloc(test, sizeof(*rc));
	struct siw2_mpa_params p = {
		.rev = 1, .markers = true, .crc = true,
	};
	struct siw2_mpa_params r = {
		.rev = 2, .crc = true, .rtr = SIW2_MPA_RTR_READ,
	};
	u8 f[64];
	size_t n;

	KUNIT_ASSERT_EQ(test, siw2_mpa_cm_init(cm, SIW2_MPA_INITIATOR, &p),
			SIW2_MPA_OK);
	KUNIT_ASSERT_EQ(test, siw2_mpa_cm_request(cm, "abc", 3, f, sizeof(f),
						  &n), SIW2_MPA_OK);
	KUNIT_ASSERT_EQ(test, n, sizeof(req1));
	expect_mem(test, f, req1, n, "rev 1 Request");

	p = mk_params(2, false, false, true,
		      SIW2_MPA_RTR_WRITE | SIW2_MPA_RTR_READ, 16, 8);
	KUNIT_ASSERT_EQ(test, siw2_mpa_cm_init(cm, SIW2_MPA_INITIATOR, &p),
			SIW2_MPA_OK);
	KUNIT_ASSERT_EQ(test, siw2_mpa_cm_request(cm, "x", 1, f, sizeof(f),
						  &n), SIW2_MPA_OK);
	KUNIT_ASSERT_EQ(test, n, sizeof(req2));
	expect_mem(test, f, req2, n, "rev 2 Request");

	/* The responder offers Read only, IRD 0 raised to 1, ORD min(0, 16). */
	KUNIT_ASSERT_EQ(test, siw2_mpa_cm_init(rc, SIW2_MPA_RESPONDER, &r),
			SIW2_MPA_OK);
	KUNIT_ASSERT_EQ(test, feed_cm(rc, f, n, false, &n),
			SIW2_MPA_CM_REQUEST);
	KUNIT_EXPECT_EQ(test, rc->conn.peer_ird, 16);
	KUNIT_EXPECT_EQ(test, rc->conn.peer_ord, 8);
	KUNIT_EXPECT_EQ(test, rc->conn.pdata_len, 1);
	KUNIT_EXPECT_EQ(test, rc->conn.pdata[0], 'x');
	KUNIT_ASSERT_EQ(test, siw2_mpa_cm_accept(rc, 0, 0, NULL, 0, f,
						 sizeof(f), &n), SIW2_MPA_OK);
	KUNIT_ASSERT_EQ(test, n, sizeof(rep2));
	expect_mem(test, f, rep2, n, "rev 2 Reply");
	KUNIT_EXPECT_EQ(test, feed_cm(cm, f, n, true, &n),
			SIW2_MPA_CM_ESTABLISHED);
	KUNIT_EXPECT_EQ(test, cm->conn.rtr, SIW2_MPA_RTR_READ);
	KUNIT_EXPECT_EQ(test, cm->conn.ord, 1);
	KUNIT_EXPECT_EQ(test, cm->conn.ird, 16);
}

/*
 * The G flag (not RFC 5044: a Res bit, opt-in) on both revisions: each
 * frame carries it only when its sender opted in (the Reply only when the
 * Request had it), and FPDUs may exceed a segment only when both did. A
 * side that did not opt in ignores a received G, as 7.1.1 asks of Res.
 */
static void mpa_test_cm_large(struct kunit *test)
{
	struct cm_pair *cp = zalloc(test, sizeof(*cp));
	struct siw2_mpa_params ip, rp;
	u32 x;

	for (x = 0; x < 16; x++) {
		bool il = x & 1, rl = x & 2, both = il && rl;
		u8 rev = x & 4 ? 2 : 1;
		bool reject = x & 8;

		ip = mk_params(rev, false, true, false, 0, 4, 4);
		rp = mk_params(2, false, false, false, SIW2_MPA_RTR_ALL, 0, 0);
		ip.large = il;
		rp.large = rl;
		run_pair(test, cp, &ip, &rp, 4, 4, reject, 0);
		KUNIT_ASSERT_EQ(test, cp->ra, SIW2_MPA_CM_REQUEST);
		KUNIT_EXPECT_EQ_MSG(test, !!(cp->req[16] & SIW2_MPA_FLAG_G),
				    il, "case %u: Request", x);
		KUNIT_EXPECT_EQ_MSG(test, !!(cp->rep[16] & SIW2_MPA_FLAG_G),
				    both, "case %u: Reply", x);
		KUNIT_EXPECT_EQ_MSG(test, cp->ia, reject ?
				    SIW2_MPA_CM_REJECTED :
				    SIW2_MPA_CM_ESTABLISHED, "case %u", x);
		KUNIT_EXPECT_EQ_MSG(test, cp->r.conn.large, both,
				    "case %u: responder", x);
		if (!reject)
			KUNIT_EXPECT_EQ_MSG(test, cp->i.conn.large, both,
					    "case %u: initiator", x);
	}

	/* A Reply with G to a Request without it changes nothing. */
	ip = mk_params(2, false, true, false, 0, 4, 4);
	rp = mk_params(2, false, false, false, SIW2_MPA_RTR_ALL, 0, 0);
	run_pair(test, cp, &ip, &rp, 4, 4, false, 0);
	KUNIT_ASSERT_EQ(test, cp->ia, SIW2_MPA_CM_ESTABLISHED);
	cp->rep[16] |= SIW2_MPA_FLAG_G;
	KUNIT_ASSERT_EQ(test, siw2_mpa_cm_init(&cp->i, SIW2_MPA_INITIATOR, &ip),
			SIW2_MPA_OK);
	KUNIT_ASSERT_EQ(test, siw2_mpa_cm_request(&cp->i, NULL, 0, cp->req,
						  sizeof(cp->req),
						  &cp->req_len), SIW2_MPA_OK);
	KUNIT_EXPECT_EQ(test, feed_cm(&cp->i, cp->rep, cp->rep_len, false,
				      &cp->req_len), SIW2_MPA_CM_ESTABLISHED);
	KUNIT_EXPECT_FALSE(test, cp->i.conn.large);
}

/*
 * A whole startup followed by FPDUs both ways: asymmetric Markers, CRC,
 * the responder holding back until the initiator's RTR arrived.
 */
static void mpa_test_cm_to_fpdus(struct kunit *test)
{
	struct cm_pair *cp = zalloc(test, sizeof(*cp));
	struct sink *sk = sink_new(test, 2000, 4);
	u8 *wire = zalloc(test, 2200);
	u8 *buf = zalloc(test, 2200);
	u8 *payload = zalloc(test, 1000);
	struct siw2_mpa_params ip = mk_params(2, true, false, true,
					      SIW2_MPA_RTR_WRITE, 4, 4);
	struct siw2_mpa_params rp = mk_params(2, false, true, false,
					      SIW2_MPA_RTR_ALL, 0, 0);
	static const u8 rtr[14] = { 0xc0, 0x41 };	/* opaque to MPA */
	struct siw2_mpa_rx irx, rrx;
	struct siw2_mpa_tx itx, rtx;
	size_t n, used;
	u32 i;

	run_pair(test, cp, &ip, &rp, 4, 4, false, 0);
	KUNIT_ASSERT_EQ(test, cp->ia, SIW2_MPA_CM_ESTABLISHED);
	KUNIT_ASSERT_EQ(test, cp->i.conn.rtr, SIW2_MPA_RTR_WRITE);
	KUNIT_EXPECT_TRUE(test, siw2_mpa_cm_may_send(&cp->i));
	KUNIT_EXPECT_FALSE(test, siw2_mpa_cm_may_send(&cp->r));

	siw2_mpa_tx_init(&itx, cp->i.conn.tx_markers, cp->i.conn.crc);
	siw2_mpa_rx_init(&irx, cp->i.conn.rx_markers, cp->i.conn.crc);
	siw2_mpa_tx_init(&rtx, cp->r.conn.tx_markers, cp->r.conn.crc);
	siw2_mpa_rx_init(&rrx, cp->r.conn.rx_markers, cp->r.conn.crc);
	KUNIT_EXPECT_TRUE(test, irx.markers);
	KUNIT_EXPECT_TRUE(test, rtx.markers);
	KUNIT_EXPECT_FALSE(test, itx.markers);

	/* The Reply and the RTR in one segment: cm_rx stops at the frame. */
	memcpy(buf, cp->rep, cp->rep_len);
	n = siw2_mpa_fpdu_build(&itx, rtr, sizeof(rtr), buf + cp->rep_len,
				2200 - cp->rep_len);
	KUNIT_ASSERT_EQ(test, n, (size_t)20);
	KUNIT_ASSERT_EQ(test, siw2_mpa_cm_init(&cp->i, SIW2_MPA_INITIATOR, &ip),
			SIW2_MPA_OK);
	KUNIT_ASSERT_EQ(test, siw2_mpa_cm_request(&cp->i, pd_init,
						  sizeof(pd_init), wire, 2200,
						  &used), SIW2_MPA_OK);
	KUNIT_EXPECT_EQ(test, siw2_mpa_cm_rx(&cp->i, buf, cp->rep_len + n,
					     &used), SIW2_MPA_CM_ESTABLISHED);
	KUNIT_EXPECT_EQ(test, used, cp->rep_len);

	/* 7.1.2 rule 4: the responder sends after the first FPDU. */
	feed(test, &rrx, buf + used, n, NULL, 3, sk);
	KUNIT_ASSERT_EQ(test, sk->ends, 1U);
	KUNIT_EXPECT_EQ(test, sk->err, SIW2_MPA_OK);
	KUNIT_EXPECT_EQ(test, siw2_mpa_cm_first_fpdu(&cp->r),
			SIW2_MPA_CM_ESTABLISHED);
	KUNIT_EXPECT_TRUE(test, siw2_mpa_cm_may_send(&cp->r));
	KUNIT_EXPECT_EQ(test, siw2_mpa_cm_timeout(&cp->r),
			SIW2_MPA_CM_ESTABLISHED);

	for (i = 0; i < 1000; i++)
		payload[i] = i;
	n = siw2_mpa_fpdu_build(&rtx, payload, 1000, wire, 2200);
	/* Markers at 0 and 512 around a 1008 octet FPDU body. */
	KUNIT_ASSERT_EQ(test, n, (size_t)(1008 + 2 * 4));
	n += siw2_mpa_fpdu_build(&rtx, payload, 10, wire + n, 2200 - n);
	sink_reset(sk);
	feed(test, &irx, wire, n, NULL, 0, sk);
	KUNIT_EXPECT_EQ(test, sk->err, SIW2_MPA_OK);
	KUNIT_ASSERT_EQ(test, sk->ends, 2U);
	expect_mem(test, sk->out, payload, 1000, "responder to initiator");
}

static void mpa_test_err_table(struct kunit *test)
{
	unsigned int i, j;

	KUNIT_EXPECT_EQ(test, siw2_mpa_err_ecode(SIW2_MPA_ERR_CRC), 2);
	KUNIT_EXPECT_EQ(test, siw2_mpa_err_ecode(SIW2_MPA_ERR_MARKER), 3);
	KUNIT_EXPECT_EQ(test, siw2_mpa_err_ecode(SIW2_MPA_ERR_KEY), 4);
	KUNIT_EXPECT_EQ(test, siw2_mpa_err_ecode(SIW2_MPA_ERR_IRD), 6);
	KUNIT_EXPECT_EQ(test, siw2_mpa_err_ecode(SIW2_MPA_ERR_NO_RTR), 7);
	KUNIT_EXPECT_EQ(test, siw2_mpa_err_ecode(SIW2_MPA_ERR_PARAM), 5);
	KUNIT_EXPECT_EQ(test, siw2_mpa_err_ecode(SIW2_MPA_ERR_COUNT), 5);
	KUNIT_EXPECT_EQ(test, SIW2_MPA_TERM_LAYER, 2);
	KUNIT_EXPECT_EQ(test, SIW2_MPA_TERM_ETYPE, 0);
	/* Every value has its own text. */
	for (i = 0; i < SIW2_MPA_ERR_COUNT; i++) {
		const char *a = siw2_mpa_err_str(i);

		KUNIT_ASSERT_TRUE(test, a && *a);
		for (j = 0; j < i; j++)
			KUNIT_EXPECT_NE(test, strcmp(a, siw2_mpa_err_str(j)), 0);
	}
}

/*
 * RFC 5044 4.4 where the caller folds DATA CRCs: siw2_mpa_rx_fold_to()
 * folds each octet once, in order, whatever mix of folds and fused copies
 * covers a span; the FPDU then ends with a good CRC, and any octet folded
 * twice or not at all makes it a CRC error.
 */
static void mpa_test_fold_to(struct kunit *test)
{
	struct siw2_mpa_rx_ev ev;
	struct siw2_mpa_rx rx;
	struct siw2_mpa_tx tx;
	u8 ulpdu[100], out[100], wire[160];
	unsigned int mode, i;
	size_t wlen, n, at;
	const u8 *p;
	u32 *crc;

	for (i = 0; i < sizeof(ulpdu); i++)
		ulpdu[i] = i * 7 + 1;
	siw2_mpa_tx_init(&tx, false, true);
	wlen = siw2_mpa_fpdu_build(&tx, ulpdu, sizeof(ulpdu), wire,
				   sizeof(wire));
	KUNIT_ASSERT_GT(test, wlen, (size_t)0);

	/* 0: fold only; 1: fused copy in the middle; 2: folds repeated. */
	for (mode = 0; mode < 3; mode++) {
		siw2_mpa_rx_init(&rx, false, true);
		siw2_mpa_crc_use_table(true);
		KUNIT_ASSERT_TRUE(test, siw2_mpa_rx_fold_by_caller(&rx));
		siw2_mpa_crc_use_table(false);
		at = 0;
		do {
			n = siw2_mpa_rx(&rx, wire + at, wlen - at, &ev);
			at += n;
			if (ev.type != SIW2_MPA_RX_DATA)
				continue;
			p = ev.data;
			KUNIT_ASSERT_EQ(test, ev.len, (u32)sizeof(ulpdu));
			if (mode == 1) {
				siw2_mpa_rx_fold_to(&rx, p + 10);
				crc = siw2_mpa_rx_crc_sink(&rx);
				KUNIT_ASSERT_NOT_NULL(test, crc);
				*crc = siw2_mpa_crc_copy(*crc, out + 10,
							 p + 10, 60);
				siw2_mpa_rx_folded(&rx, p + 70);
			} else if (mode == 2) {
				siw2_mpa_rx_fold_to(&rx, p + 40);
				siw2_mpa_rx_fold_to(&rx, p + 40);
				siw2_mpa_rx_fold_to(&rx, p + 20);
			}
			siw2_mpa_rx_fold_to(&rx, p + ev.len);
			siw2_mpa_rx_fold_to(&rx, p + ev.len);
		} while (at < wlen && ev.type != SIW2_MPA_RX_ERROR);
		KUNIT_EXPECT_EQ_MSG(test, ev.type, SIW2_MPA_RX_END,
				    "mode %u, err %d", mode, ev.err);
		if (mode == 1)
			expect_mem(test, out + 10, ulpdu + 10, 60, "fused copy");
	}

	/* An octet left out: the CRC no longer matches. */
	siw2_mpa_rx_init(&rx, false, true);
	siw2_mpa_crc_use_table(true);
	siw2_mpa_rx_fold_by_caller(&rx);
	siw2_mpa_crc_use_table(false);
	at = 0;
	do {
		n = siw2_mpa_rx(&rx, wire + at, wlen - at, &ev);
		at += n;
		if (ev.type == SIW2_MPA_RX_DATA) {
			siw2_mpa_rx_folded(&rx, ev.data + 1);
			siw2_mpa_rx_fold_to(&rx, ev.data + ev.len);
		}
	} while (at < wlen && ev.type != SIW2_MPA_RX_ERROR);
	KUNIT_EXPECT_EQ(test, ev.type, SIW2_MPA_RX_ERROR);
	KUNIT_EXPECT_EQ(test, ev.err, SIW2_MPA_ERR_CRC);
}

static struct kunit_case mpa_test_cases[] = {
	KUNIT_CASE(mpa_test_crc_rfc3720),
	KUNIT_CASE(mpa_test_rfc5044_fig5),
	KUNIT_CASE(mpa_test_rfc5044_fig6),
	KUNIT_CASE(mpa_test_framing_splits),
	KUNIT_CASE(mpa_test_marker_offsets),
	KUNIT_CASE(mpa_test_ulpdu_limits),
	KUNIT_CASE(mpa_test_crc_errors),
	KUNIT_CASE(mpa_test_marker_errors),
	KUNIT_CASE(mpa_test_tx_api),
	KUNIT_CASE(mpa_test_tx_frame),
	KUNIT_CASE(mpa_test_nego_table),
	KUNIT_CASE(mpa_test_nego_exhaustive),
	KUNIT_CASE(mpa_test_cm_frame_errors),
	KUNIT_CASE(mpa_test_cm_local_errors),
	KUNIT_CASE(mpa_test_cm_frames),
	KUNIT_CASE(mpa_test_cm_large),
	KUNIT_CASE(mpa_test_cm_to_fpdus),
	KUNIT_CASE(mpa_test_err_table),
	KUNIT_CASE(mpa_test_fold_to),
	{}
};

static struct kunit_suite mpa_test_suite = {
	.name = "siw2_mpa",
	.test_cases = mpa_test_cases,
};

kunit_test_suites(&mpa_test_suite);

MODULE_LICENSE("Dual BSD/GPL");
