// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * KUnit tests of ddp.c: the reassembly books in any order, segmentation
 * into MULPDU-sized segments and reassembly through the receive path with
 * spans split at random, every receive error with its Terminate cause, and
 * Terminate messages through the receive path.
 */
#include <kunit/test.h>
#include <linux/kernel.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/errno.h>
#include "../ddp.h"
#include "../mpa.h"

/* Deterministic xorshift64, so that every run checks the same cases. */
static u64 rnd(u64 *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

static u32 rnd_below(u64 *s, u32 n)
{
	return n ? rnd(s) % n : 0;
}

/* ---- Books ---- */

#define REF_MAX 512

/* Places pieces of a message in a random order and checks the books. */
static void books_random_case(struct kunit *test, u64 *seed)
{
	struct siw2_ddp_reasm m;
	struct { u32 mo, len; } piece[16];
	bool ref[REF_MAX] = { false };
	u32 total = 1 + rnd_below(seed, REF_MAX - 1);
	unsigned int n = 1 + rnd_below(seed, 16), i, j, k;
	unsigned int order[16];
	bool last_in = false;
	u32 mo = 0, cut;

	/* Cut [0, total) into n pieces, then let some grow into overlaps. */
	for (i = 0; i < n; i++) {
		cut = i == n - 1 ? total :
			mo + rnd_below(seed, (total - mo) / (n - i) + 1);
		piece[i].mo = mo;
		piece[i].len = cut - mo;
		mo = cut;
	}
	for (i = 0; i + 1 < n; i++)
		if (rnd(seed) & 1)
			piece[i].len += min_t(u32, rnd_below(seed, 8),
					      total - piece[i].mo -
					      piece[i].len);
	for (i = 0; i < n; i++)
		order[i] = i;
	for (i = n - 1; i > 0; i--) {
		j = rnd_below(seed, i + 1);
		swap(order[i], order[j]);
	}

	siw2_ddp_reasm_init(&m);
	KUNIT_EXPECT_TRUE(test, siw2_ddp_reasm_empty(&m));
	for (i = 0; i < n; i++) {
		bool last = order[i] == n - 1, full = true;
		const typeof(piece[0]) *p = &piece[order[i]];

		KUNIT_ASSERT_EQ(test, siw2_ddp_reasm_add(&m, p->mo, p->len,
							 last), 0U);
		for (k = p->mo; k < p->mo + p->len; k++)
			ref[k] = true;
		last_in |= last;
		for (k = 0; k < total; k++)
			full &= ref[k];
		KUNIT_EXPECT_EQ(test, siw2_ddp_reasm_done(&m), last_in && full);
		KUNIT_EXPECT_LE(test, (unsigned int)m.nr,
				(unsigned int)SIW2_DDP_REASM_RANGES);
	}
	KUNIT_EXPECT_TRUE(test, siw2_ddp_reasm_done(&m));
	KUNIT_EXPECT_EQ(test, m.total, total);
	/* Placing again is allowed (RFC 5041 5.3). */
	KUNIT_EXPECT_EQ(test, siw2_ddp_reasm_add(&m, 0, total, false), 0U);
	KUNIT_EXPECT_TRUE(test, siw2_ddp_reasm_done(&m));
}

static void ddp_test_books_random(struct kunit *test)
{
	u64 seed = 0xb00c5;
	unsigned int i;

	for (i = 0; i < 500; i++)
		books_random_case(test, &seed);
}

static void ddp_test_books_rules(struct kunit *test)
{
	struct siw2_ddp_reasm m;
	unsigned int i;

	/* Zero-length message: one empty Last segment. */
	siw2_ddp_reasm_init(&m);
	KUNIT_EXPECT_EQ(test, siw2_ddp_reasm_add(&m, 0, 0, true), 0U);
	KUNIT_EXPECT_TRUE(test, siw2_ddp_reasm_done(&m));

	/* Last first, then the rest. */
	siw2_ddp_reasm_init(&m);
	KUNIT_EXPECT_EQ(test, siw2_ddp_reasm_add(&m, 100, 50, true), 0U);
	KUNIT_EXPECT_FALSE(test, siw2_ddp_reasm_done(&m));
	/* Beyond the end the Last segment set. */
	KUNIT_EXPECT_EQ(test, siw2_ddp_reasm_add(&m, 140, 20, false),
			SIW2_TERM_DDP_U_INVALID_MO);
	/* A second, different end. */
	KUNIT_EXPECT_EQ(test, siw2_ddp_reasm_add(&m, 0, 10, true),
			SIW2_TERM_DDP_U_INVALID_MO);
	KUNIT_EXPECT_EQ(test, siw2_ddp_reasm_add(&m, 0, 100, false), 0U);
	KUNIT_EXPECT_TRUE(test, siw2_ddp_reasm_done(&m));

	/* A Last segment below octets already placed. */
	siw2_ddp_reasm_init(&m);
	KUNIT_EXPECT_EQ(test, siw2_ddp_reasm_add(&m, 0, 100, false), 0U);
	KUNIT_EXPECT_EQ(test, siw2_ddp_reasm_add(&m, 10, 10, true),
			SIW2_TERM_DDP_U_INVALID_MO);
	KUNIT_EXPECT_FALSE(test, m.last_seen);

	/* 2^32 octets or more. */
	KUNIT_EXPECT_EQ(test, siw2_ddp_reasm_add(&m, U32_MAX, 1, false),
			SIW2_TERM_DDP_U_TOO_LONG);
	KUNIT_EXPECT_EQ(test, siw2_ddp_reasm_add(&m, U32_MAX - 1, 1, true), 0U);

	/* Too fragmented: a local limit, and the books stay as they were. */
	siw2_ddp_reasm_init(&m);
	for (i = 0; i < SIW2_DDP_REASM_RANGES; i++)
		KUNIT_EXPECT_EQ(test, siw2_ddp_reasm_add(&m, i * 10, 5, false),
				0U);
	KUNIT_EXPECT_EQ(test, siw2_ddp_reasm_add(&m, 200, 5, false),
			SIW2_TERM_DDP_CATASTROPHIC);
	KUNIT_EXPECT_EQ(test, (unsigned int)m.nr,
			(unsigned int)SIW2_DDP_REASM_RANGES);
	/* Filling the holes merges everything into one range. */
	for (i = 0; i < SIW2_DDP_REASM_RANGES; i++)
		KUNIT_EXPECT_EQ(test, siw2_ddp_reasm_add(&m, i * 10 + 5, 5,
							 i == 7), 0U);
	KUNIT_EXPECT_EQ(test, (unsigned int)m.nr, 1U);
	KUNIT_EXPECT_TRUE(test, siw2_ddp_reasm_done(&m));
}

static void ddp_test_check_tagged(struct kunit *test)
{
	struct siw2_stag_view v = {
		.valid = true, .assoc = true, .access = true,
		.base = 0x10000, .len = 0x1000,
	};

	KUNIT_EXPECT_EQ(test, siw2_ddp_check_tagged(&v, 0x10000, 0x1000), 0U);
	KUNIT_EXPECT_EQ(test, siw2_ddp_check_tagged(&v, 0x10fff, 1), 0U);
	KUNIT_EXPECT_EQ(test, siw2_ddp_check_tagged(&v, 0x10fff, 2),
			SIW2_TERM_DDP_T_BASE_BOUNDS);
	KUNIT_EXPECT_EQ(test, siw2_ddp_check_tagged(&v, 0xffff, 1),
			SIW2_TERM_DDP_T_BASE_BOUNDS);
	KUNIT_EXPECT_EQ(test, siw2_ddp_check_tagged(&v, U64_MAX, 2),
			SIW2_TERM_DDP_T_TO_WRAP);
	KUNIT_EXPECT_EQ(test, siw2_ddp_check_tagged(&v, U64_MAX, 1),
			SIW2_TERM_DDP_T_BASE_BOUNDS);
	v.access = false;
	KUNIT_EXPECT_EQ(test, siw2_ddp_check_tagged(&v, 0x10000, 1),
			SIW2_TERM_RDMAP_ACCESS);
	v.assoc = false;
	KUNIT_EXPECT_EQ(test, siw2_ddp_check_tagged(&v, 0x10000, 1),
			SIW2_TERM_DDP_T_STAG_NOT_ASSOC);
	v.valid = false;
	KUNIT_EXPECT_EQ(test, siw2_ddp_check_tagged(&v, 0x10000, 1),
			SIW2_TERM_DDP_T_INVALID_STAG);
	/* RFC 5041 5.2: STag and TO of a zero-length segment are unchecked. */
	KUNIT_EXPECT_EQ(test, siw2_ddp_check_tagged(&v, U64_MAX, 0), 0U);
}

static void ddp_test_check_untagged(struct kunit *test)
{
	KUNIT_EXPECT_EQ(test, siw2_ddp_check_untagged(0, 100, true, 100), 0U);
	KUNIT_EXPECT_EQ(test, siw2_ddp_check_untagged(0, 0, true, 0), 0U);
	KUNIT_EXPECT_EQ(test, siw2_ddp_check_untagged(0, 0, false, 0),
			SIW2_TERM_DDP_U_MSN_NOBUF);
	KUNIT_EXPECT_EQ(test, siw2_ddp_check_untagged(100, 1, true, 100),
			SIW2_TERM_DDP_U_INVALID_MO);
	KUNIT_EXPECT_EQ(test, siw2_ddp_check_untagged(99, 2, true, 100),
			SIW2_TERM_DDP_U_TOO_LONG);
	KUNIT_EXPECT_EQ(test, siw2_ddp_check_untagged(U32_MAX, U32_MAX, true,
						      U64_MAX), 0U);
}

/* ---- Receive harness ---- */

/*
 * The caller's side of the receive path in these tests: @buf is the
 * placement target (receive buffer or tagged buffer, @base its first TO),
 * @have_buf the answer to the untagged buffer check; the rest counts and
 * records what happened.
 */
struct sink {
	u8 *buf;
	u32 buf_len;
	u64 base;
	bool have_buf;
	u32 seg_start;
	unsigned int headers, firsts, payloads, seg_ends, msgs, errors, terms;
	u32 msg_len;
	u32 cause;
	struct siw2_rdmap_hdr last_hdr;
	struct siw2_term_info term;
	bool term_bad;
	bool bad_payload;
};

static void sink_event(struct siw2_ddp_rx *rx, struct sink *s,
		       const struct siw2_ddp_rx_ev *ev)
{
	const struct siw2_ddp_seg *seg;
	u32 cause;

	switch (ev->type) {
	case SIW2_DDP_EV_HEADER:
		seg = siw2_ddp_rx_seg(rx);
		s->headers++;
		s->firsts += seg->first;
		s->last_hdr = seg->hdr;
		if (seg->op->tagged) {
			s->seg_start = seg->hdr.to - s->base;
			break;
		}
		s->seg_start = seg->hdr.mo;
		if (!seg->op->consumes_rq)
			break;
		cause = siw2_ddp_rx_check_untagged(rx, s->have_buf, s->buf_len);
		if (cause) {
			siw2_ddp_rx_fail(rx, cause);
			s->errors++;
			s->cause = cause;
		}
		break;
	case SIW2_DDP_EV_PAYLOAD:
		s->payloads++;
		if ((u64)s->seg_start + ev->off + ev->len > s->buf_len) {
			s->bad_payload = true;
			break;
		}
		memcpy(s->buf + s->seg_start + ev->off, ev->data, ev->len);
		break;
	case SIW2_DDP_EV_SEG_END:
		s->seg_ends++;
		if (ev->msg_done) {
			s->msgs++;
			s->msg_len = ev->msg_len;
		}
		break;
	case SIW2_DDP_EV_TERMINATE:
		s->terms++;
		s->term = *ev->term;
		s->term_bad = ev->term_bad;
		break;
	case SIW2_DDP_EV_ERROR:
		s->errors++;
		s->cause = ev->cause;
		break;
	default:
		break;
	}
}

/* Feeds one ULPDU in spans of random size, then its verified end. */
static void feed_ulpdu(struct siw2_ddp_rx *rx, const u8 *ulpdu, u32 len,
		       u64 *seed, struct sink *s)
{
	struct siw2_ddp_rx_ev ev;
	u32 off = 0, n;

	while (off < len) {
		switch (rnd(seed) & 3) {
		case 0:
			n = 1;
			break;
		case 1:
			n = len - off;
			break;
		default:
			n = 1 + rnd_below(seed, len - off);
		}
		siw2_ddp_rx_span(rx, ulpdu + off, n, off, len);
		while (siw2_ddp_rx_next(rx, &ev) != SIW2_DDP_EV_NONE)
			sink_event(rx, s, &ev);
		off += n;
	}
	if (siw2_ddp_rx_end(rx, &ev) != SIW2_DDP_EV_NONE)
		sink_event(rx, s, &ev);
}

/* Segments @m with @mulpdu and feeds every segment. */
static int send_msg(struct kunit *test, struct siw2_ddp_rx *rx,
		    const struct siw2_rdmap_hdr *m, const u8 *payload,
		    u32 len, u32 mulpdu, u64 *seed, struct sink *s)
{
	struct siw2_ddp_tx tx;
	struct siw2_ddp_tx_seg seg;
	u8 *ulpdu;
	int rc, segs = 0;

	ulpdu = kunit_kmalloc(test, mulpdu, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, ulpdu);
	KUNIT_ASSERT_EQ(test, siw2_ddp_tx_init(&tx, m, len), 0);
	while ((rc = siw2_ddp_tx_next(&tx, mulpdu, &seg)) == 1) {
		KUNIT_ASSERT_LE(test, seg.hdr_len + seg.len, mulpdu);
		memcpy(ulpdu, seg.hdr, seg.hdr_len);
		memcpy(ulpdu + seg.hdr_len, payload + seg.off, seg.len);
		feed_ulpdu(rx, ulpdu, seg.hdr_len + seg.len, seed, s);
		segs++;
	}
	KUNIT_EXPECT_EQ(test, rc, 0);
	kunit_kfree(test, ulpdu);
	return segs;
}

/* Segments one message and checks every segment. */
static void check_segments(struct kunit *test, u8 opcode, u32 mulpdu,
			   u32 len, u64 to)
{
	struct siw2_rdmap_hdr m = { .opcode = opcode, .to = to, .msn = 5 };
	u32 room = mulpdu - siw2_rdmap_op(opcode)->hdr_len, next = 0, segs = 0;
	const union siw2_iwarp_hdr *h;
	struct siw2_ddp_tx_seg seg;
	struct siw2_rdmap_hdr p;
	struct siw2_ddp_tx tx;

	KUNIT_ASSERT_EQ(test, siw2_ddp_tx_init(&tx, &m, len), 0);
	while (siw2_ddp_tx_next(&tx, mulpdu, &seg) == 1) {
		KUNIT_ASSERT_EQ(test, seg.off, next);
		KUNIT_ASSERT_EQ(test, seg.last, seg.off + seg.len == len);
		KUNIT_ASSERT_TRUE(test, seg.last || seg.len == room);
		h = (const union siw2_iwarp_hdr *)seg.hdr;
		KUNIT_ASSERT_EQ(test, siw2_rdmap_parse(h, seg.hdr_len, false,
						       &p), 0U);
		KUNIT_EXPECT_EQ(test, p.last, seg.last);
		if (opcode == SIW2_RDMAP_OP_WRITE)
			KUNIT_EXPECT_EQ(test, p.to, to + seg.off);
		else
			KUNIT_EXPECT_EQ(test, p.mo, seg.off);
		next += seg.len;
		segs++;
	}
	KUNIT_EXPECT_EQ(test, next, len);
	KUNIT_EXPECT_EQ(test, segs, len ? DIV_ROUND_UP(len, room) : 1);
}

/* Segmentation: counts, offsets, TO/MO and Last, for many lengths. */
static void ddp_test_segmentation(struct kunit *test)
{
	static const u32 mulpdus[] = { 19, 20, 64, 100, 1500, 9000, 65535 };
	static const u8 opcodes[] = { SIW2_RDMAP_OP_SEND, SIW2_RDMAP_OP_WRITE };
	struct siw2_rdmap_hdr m = { 0 }, p;
	struct siw2_ddp_tx tx;
	struct siw2_ddp_tx_seg seg;
	u64 seed = 1234;
	unsigned int i, o, k;
	u32 len, room;

	for (o = 0; o < ARRAY_SIZE(opcodes); o++) {
		for (i = 0; i < ARRAY_SIZE(mulpdus); i++) {
			room = mulpdus[i] - siw2_rdmap_op(opcodes[o])->hdr_len;
			for (k = 0; k < 40; k++) {
				len = k < 20 ? k * 97 :
				      rnd_below(&seed,
						room < 100 ? 3000 : 200000);
				check_segments(test, opcodes[o], mulpdus[i],
					       len, rnd(&seed));
			}
		}
	}
	/* RFC 5041 5.2's examples: 2048 octets at MULPDU 1500. */
	m.opcode = SIW2_RDMAP_OP_SEND;
	siw2_ddp_tx_init(&tx, &m, 2048);
	siw2_ddp_tx_next(&tx, 1500, &seg);
	KUNIT_EXPECT_EQ(test, seg.len, 1482U);
	siw2_ddp_tx_next(&tx, 1500, &seg);
	KUNIT_EXPECT_EQ(test, seg.len, 566U);
	m.opcode = SIW2_RDMAP_OP_WRITE;
	m.to = 16384;
	siw2_ddp_tx_init(&tx, &m, 2048);
	siw2_ddp_tx_next(&tx, 1500, &seg);
	KUNIT_EXPECT_EQ(test, seg.len, 1486U);
	siw2_ddp_tx_next(&tx, 1500, &seg);
	KUNIT_EXPECT_EQ(test, seg.len, 562U);
	siw2_rdmap_parse((const union siw2_iwarp_hdr *)seg.hdr, 14, false, &p);
	KUNIT_EXPECT_EQ(test, p.to, 17870ULL);
	/* The MULPDU may change between segments (RFC 5041 3 item 2). */
	siw2_ddp_tx_init(&tx, &m, 100);
	KUNIT_EXPECT_EQ(test, siw2_ddp_tx_next(&tx, 14, &seg), -EINVAL);
	KUNIT_EXPECT_EQ(test, siw2_ddp_tx_next(&tx, 64, &seg), 1);
	KUNIT_EXPECT_EQ(test, siw2_ddp_tx_next(&tx, 1000, &seg), 1);
	KUNIT_EXPECT_TRUE(test, seg.last);
	KUNIT_EXPECT_EQ(test, seg.off + seg.len, 100U);
	KUNIT_EXPECT_EQ(test, siw2_ddp_tx_next(&tx, 1000, &seg), 0);
	/* Header-only opcodes carry no payload. */
	m.opcode = SIW2_RDMAP_OP_READ_REQ;
	KUNIT_EXPECT_EQ(test, siw2_ddp_tx_init(&tx, &m, 1), -EINVAL);
	KUNIT_EXPECT_EQ(test, siw2_ddp_tx_init(&tx, &m, 0), 0);
	KUNIT_EXPECT_EQ(test, siw2_ddp_tx_next(&tx, 45, &seg), -EINVAL);
	KUNIT_EXPECT_EQ(test, siw2_ddp_tx_next(&tx, 46, &seg), 1);
	KUNIT_EXPECT_TRUE(test, seg.last);
	m.opcode = 0xe;
	KUNIT_EXPECT_EQ(test, siw2_ddp_tx_init(&tx, &m, 0), -EINVAL);
}

/* Segment, feed in random spans, and compare what was placed. */
static void ddp_test_reassembly(struct kunit *test)
{
	static const u32 mulpdus[] = { 19, 33, 128, 1500, 9000 };
	struct siw2_rdmap_hdr m = { 0 };
	struct siw2_ddp_rx rx;
	struct sink s = { 0 };
	u64 seed = 0xfeed;
	u32 max = 20000, len, msn = 1, i, k, segs;
	u8 *src, *dst;

	src = kunit_kmalloc(test, max, GFP_KERNEL);
	dst = kunit_kzalloc(test, max, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, src);
	KUNIT_ASSERT_NOT_NULL(test, dst);
	for (i = 0; i < max; i++)
		src[i] = rnd(&seed);

	siw2_ddp_rx_init(&rx, true);
	for (i = 0; i < ARRAY_SIZE(mulpdus); i++) {
		for (k = 0; k < 30; k++) {
			len = k < 10 ? k : rnd_below(&seed, mulpdus[i] < 128 ?
							  2000 : max);
			memset(&s, 0, sizeof(s));
			memset(dst, 0, max);
			s.buf = dst;
			s.buf_len = len;
			s.have_buf = true;

			/* A Send on queue 0. */
			m.opcode = SIW2_RDMAP_OP_SEND_SE;
			m.msn = msn++;
			segs = send_msg(test, &rx, &m, src, len, mulpdus[i],
					&seed, &s);
			KUNIT_EXPECT_EQ(test, s.errors, 0U);
			KUNIT_EXPECT_FALSE(test, s.bad_payload);
			KUNIT_EXPECT_EQ(test, s.headers, segs);
			KUNIT_EXPECT_EQ(test, s.seg_ends, segs);
			KUNIT_EXPECT_EQ(test, s.msgs, 1U);
			KUNIT_EXPECT_EQ(test, s.msg_len, len);
			KUNIT_EXPECT_EQ(test, memcmp(dst, src, len), 0);

			/* An RDMA Write into a tagged buffer. */
			memset(&s, 0, sizeof(s));
			memset(dst, 0, max);
			s.buf = dst;
			s.buf_len = max;
			s.base = rnd(&seed) >> 1;
			m.opcode = SIW2_RDMAP_OP_WRITE;
			m.stag = 0x100;
			m.to = s.base + rnd_below(&seed, max - len + 1);
			segs = send_msg(test, &rx, &m, src, len, mulpdus[i],
					&seed, &s);
			KUNIT_EXPECT_EQ(test, s.errors, 0U);
			KUNIT_EXPECT_FALSE(test, s.bad_payload);
			KUNIT_EXPECT_EQ(test, s.msgs, 1U);
			KUNIT_EXPECT_EQ(test, memcmp(dst + (m.to - s.base), src,
						     len), 0);
		}
	}
}

/* Feeds segments of one Send in a given order. */
static void feed_send_pieces(struct kunit *test, struct siw2_ddp_rx *rx,
			     u32 msn, const u8 *src, const u32 *mo,
			     const u32 *len, const bool *last, unsigned int n,
			     u64 *seed, struct sink *s)
{
	struct siw2_rdmap_hdr m = { .opcode = SIW2_RDMAP_OP_SEND, .msn = msn };
	union siw2_iwarp_hdr h;
	unsigned int i;
	u8 *ulpdu;

	ulpdu = kunit_kmalloc(test, 18 + 4096, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, ulpdu);
	for (i = 0; i < n; i++) {
		m.mo = mo[i];
		m.last = last[i];
		siw2_rdmap_build(&h, &m);
		memcpy(ulpdu, h.raw, 18);
		memcpy(ulpdu + 18, src + mo[i], len[i]);
		feed_ulpdu(rx, ulpdu, 18 + len[i], seed, s);
	}
	kunit_kfree(test, ulpdu);
}

/* Out of order within a message (the Last segment still last). */
static void ddp_test_out_of_order(struct kunit *test)
{
	static const u32 mo[] = { 3000, 0, 1000, 2000, 500, 3500 };
	static const u32 len[] = { 500, 500, 1000, 1000, 600, 100 };
	static const bool last[] = { false, false, false, false, false, true };
	struct siw2_ddp_rx rx;
	struct sink s = { 0 };
	u64 seed = 42;
	const u32 size = 3600;
	unsigned int i;
	u8 *src, *dst;

	src = kunit_kmalloc(test, size, GFP_KERNEL);
	dst = kunit_kzalloc(test, size, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, src);
	KUNIT_ASSERT_NOT_NULL(test, dst);
	for (i = 0; i < size; i++)
		src[i] = rnd(&seed);
	s.buf = dst;
	s.buf_len = size;
	s.have_buf = true;
	siw2_ddp_rx_init(&rx, false);
	feed_send_pieces(test, &rx, 1, src, mo, len, last, ARRAY_SIZE(mo),
			 &seed, &s);
	KUNIT_EXPECT_EQ(test, s.errors, 0U);
	KUNIT_EXPECT_EQ(test, s.msgs, 1U);
	KUNIT_EXPECT_EQ(test, s.msg_len, size);
	KUNIT_EXPECT_EQ(test, memcmp(dst, src, size), 0);

	/* The next message: overlapping segments are fine. */
	memset(&s, 0, sizeof(s));
	s.buf = dst;
	s.buf_len = size;
	s.have_buf = true;
	{
		static const u32 mo2[] = { 0, 50 };
		static const u32 len2[] = { 100, 100 };
		static const bool last2[] = { false, true };

		feed_send_pieces(test, &rx, 2, src, mo2, len2, last2, 2, &seed,
				 &s);
	}
	KUNIT_EXPECT_EQ(test, s.errors, 0U);
	KUNIT_EXPECT_EQ(test, s.msgs, 1U);
	KUNIT_EXPECT_EQ(test, s.msg_len, 150U);

	/* A hole when the Last segment is in can never be filled. */
	memset(&s, 0, sizeof(s));
	s.buf = dst;
	s.buf_len = size;
	s.have_buf = true;
	{
		static const u32 mo3[] = { 0, 200 };
		static const u32 len3[] = { 100, 100 };
		static const bool last3[] = { false, true };

		feed_send_pieces(test, &rx, 3, src, mo3, len3, last3, 2, &seed,
				 &s);
	}
	KUNIT_EXPECT_EQ(test, s.errors, 1U);
	KUNIT_EXPECT_EQ(test, s.cause, SIW2_TERM_DDP_U_INVALID_MO);
	KUNIT_EXPECT_EQ(test, s.msgs, 0U);
}

/* A stream of mixed messages, as one peer would send them. */
static void ddp_test_stream(struct kunit *test)
{
	struct siw2_rdmap_hdr m;
	struct siw2_ddp_rx rx;
	struct sink s;
	u32 msn[SIW2_QN_COUNT] = { 1, 1, 1, 1 }, len;
	u64 seed = 0xabcdef;
	u8 *src, *dst;
	unsigned int i, msgs = 0, errors = 0;
	const struct siw2_rdmap_op_info *op;
	u8 opcode;

	src = kunit_kmalloc(test, 4096, GFP_KERNEL);
	dst = kunit_kzalloc(test, 4096, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, src);
	KUNIT_ASSERT_NOT_NULL(test, dst);
	for (i = 0; i < 4096; i++)
		src[i] = rnd(&seed);
	memset(&s, 0, sizeof(s));
	s.buf = dst;
	s.buf_len = 4096;
	s.have_buf = true;

	siw2_ddp_rx_init(&rx, true);
	for (i = 0; i < 400; i++) {
		opcode = rnd_below(&seed, SIW2_RDMAP_OP_ATOMIC_RESP + 1);
		if (opcode == SIW2_RDMAP_OP_TERMINATE)
			continue;
		op = siw2_rdmap_op(opcode);
		memset(&m, 0, sizeof(m));
		m.opcode = opcode;
		m.to = 0;
		m.stag = rnd(&seed);
		m.inval_stag = rnd(&seed);
		m.imm = rnd(&seed);
		if (!op->tagged)
			m.msn = msn[op->qn]++;
		len = op->payload ? rnd_below(&seed, 4096) : 0;
		send_msg(test, &rx, &m, src, len, 64 + rnd_below(&seed, 2000),
			 &seed, &s);
		msgs++;
		KUNIT_ASSERT_EQ(test, s.errors, errors);
		KUNIT_ASSERT_EQ(test, s.msgs, msgs);
		KUNIT_EXPECT_EQ(test, s.last_hdr.opcode, opcode);
		if (op->inval)
			KUNIT_EXPECT_EQ(test, s.last_hdr.inval_stag,
					m.inval_stag);
		if (op->cls == SIW2_CLASS_IMM)
			KUNIT_EXPECT_EQ(test, s.last_hdr.imm, m.imm);
		if (len)
			KUNIT_EXPECT_EQ(test, memcmp(dst, src, len), 0);
	}
	KUNIT_EXPECT_FALSE(test, s.bad_payload);
}

/*
 * DDP over MPA, as the engine joins them: messages segmented at the MPA
 * MULPDU, framed with Markers and CRCs into one byte stream, which is fed
 * to MPA in chunks of random size; MPA's spans and ends drive DDP.
 */
static void ddp_test_over_mpa(struct kunit *test)
{
	const u32 max = 6000, cap = 64 * 1024;
	struct siw2_rdmap_hdr m = { 0 };
	struct siw2_mpa_rx_ev mev;
	struct siw2_ddp_rx_ev ev;
	struct siw2_ddp_tx_seg seg;
	struct siw2_ddp_tx tx;
	struct siw2_mpa_tx *mtx;
	struct siw2_mpa_rx *mrx;
	struct siw2_ddp_rx *drx;
	u8 *src, *dst, *ulpdu, *wire;
	u32 mulpdu, wire_len, pos, n, len, i;
	u64 seed = 0x3a9;
	struct sink s = { 0 };
	size_t used;

	mtx = kunit_kzalloc(test, sizeof(*mtx), GFP_KERNEL);
	mrx = kunit_kzalloc(test, sizeof(*mrx), GFP_KERNEL);
	drx = kunit_kzalloc(test, sizeof(*drx), GFP_KERNEL);
	src = kunit_kmalloc(test, max, GFP_KERNEL);
	dst = kunit_kzalloc(test, max, GFP_KERNEL);
	ulpdu = kunit_kmalloc(test, cap, GFP_KERNEL);
	wire = kunit_kmalloc(test, cap, GFP_KERNEL);
	KUNIT_ASSERT_TRUE(test, mtx && mrx && drx && src && dst && ulpdu &&
			  wire);
	for (i = 0; i < max; i++)
		src[i] = rnd(&seed);

	siw2_mpa_tx_init(mtx, true, true);
	siw2_mpa_rx_init(mrx, true, true);
	siw2_ddp_rx_init(drx, true);
	mulpdu = siw2_mpa_mulpdu(1460, true);
	s.buf = dst;
	s.have_buf = true;

	for (i = 0; i < 40; i++) {
		len = rnd_below(&seed, max);
		s.buf_len = len;
		s.msgs = 0;
		m.opcode = i & 1 ? SIW2_RDMAP_OP_SEND : SIW2_RDMAP_OP_SEND_SE_INV;
		m.msn = i + 1;
		KUNIT_ASSERT_EQ(test, siw2_ddp_tx_init(&tx, &m, len), 0);

		/* Frame every segment of the message into the stream. */
		wire_len = 0;
		while (siw2_ddp_tx_next(&tx, mulpdu, &seg) == 1) {
			memcpy(ulpdu, seg.hdr, seg.hdr_len);
			memcpy(ulpdu + seg.hdr_len, src + seg.off, seg.len);
			n = siw2_mpa_fpdu_build(mtx, ulpdu, seg.hdr_len + seg.len,
						wire + wire_len,
						cap - wire_len);
			KUNIT_ASSERT_NE(test, n, 0U);
			wire_len += n;
		}

		/* Feed the stream as TCP might deliver it. */
		for (pos = 0; pos < wire_len; pos += n) {
			n = 1 + rnd_below(&seed, min(wire_len - pos, 3000U));
			for (used = 0; used < n; ) {
				used += siw2_mpa_rx(mrx, wire + pos + used,
						    n - used, &mev);
				KUNIT_ASSERT_NE(test, mev.type,
						SIW2_MPA_RX_ERROR);
				if (mev.type == SIW2_MPA_RX_DATA) {
					siw2_ddp_rx_span(drx, mev.data, mev.len,
							 mev.offset,
							 mev.ulpdu_len);
					while (siw2_ddp_rx_next(drx, &ev) !=
					       SIW2_DDP_EV_NONE)
						sink_event(drx, &s, &ev);
				} else if (mev.type == SIW2_MPA_RX_END) {
					siw2_ddp_rx_end(drx, &ev);
					sink_event(drx, &s, &ev);
				}
			}
		}
		KUNIT_ASSERT_EQ(test, s.errors, 0U);
		KUNIT_EXPECT_EQ(test, s.msgs, 1U);
		KUNIT_EXPECT_EQ(test, s.msg_len, len);
		KUNIT_EXPECT_EQ(test, memcmp(dst, src, len), 0);
	}
}

/*
 * Segments without payload that are not Last: one message still, which
 * takes one receive buffer however many of them come (a peer must not
 * use them to empty the receive queue).
 */
static void ddp_test_rx_empty_segments(struct kunit *test)
{
	struct siw2_rdmap_hdr m = { .opcode = SIW2_RDMAP_OP_SEND, .msn = 1 };
	struct siw2_ddp_rx rx;
	union siw2_iwarp_hdr h;
	u8 ulpdu[64], dst[16];
	struct sink s = { .buf = dst, .buf_len = sizeof(dst),
			  .have_buf = true };
	u64 seed = 7;
	u32 len;
	int i;

	siw2_ddp_rx_init(&rx, false);
	len = siw2_rdmap_build(&h, &m);
	memcpy(ulpdu, h.raw, len);
	for (i = 0; i < 4; i++)
		feed_ulpdu(&rx, ulpdu, len, &seed, &s);
	m.last = true;
	len = siw2_rdmap_build(&h, &m);
	memcpy(ulpdu, h.raw, len);
	ulpdu[len] = 0x5a;
	feed_ulpdu(&rx, ulpdu, len + 1, &seed, &s);
	KUNIT_EXPECT_EQ(test, s.errors, 0U);
	KUNIT_EXPECT_EQ(test, s.headers, 5U);
	KUNIT_EXPECT_EQ(test, s.firsts, 1U);
	KUNIT_EXPECT_EQ(test, s.msgs, 1U);
	KUNIT_EXPECT_EQ(test, s.msg_len, 1U);
	KUNIT_EXPECT_EQ(test, dst[0], 0x5a);
}

/* ---- Receive errors ---- */

/* A fresh stream receives one ULPDU: @hdr, then @extra zero octets. */
static struct sink rx_one(struct kunit *test, bool ext,
			  const union siw2_iwarp_hdr *hdr, u32 hdr_len,
			  u32 extra, bool have_buf, u32 buf_len,
			  struct siw2_ddp_rx *rx)
{
	static u8 ulpdu[512];
	struct sink s = { 0 };
	u64 seed = hdr_len * 31 + extra;
	static u8 dst[256];

	KUNIT_ASSERT_LE(test, hdr_len + extra, (u32)sizeof(ulpdu));
	memset(ulpdu, 0, sizeof(ulpdu));
	memcpy(ulpdu, hdr->raw, hdr_len);
	s.buf = dst;
	s.buf_len = buf_len;
	s.have_buf = have_buf;
	siw2_ddp_rx_init(rx, ext);
	feed_ulpdu(rx, ulpdu, hdr_len + extra, &seed, &s);
	return s;
}

static void expect_rx_error(struct kunit *test, bool ext,
			    const union siw2_iwarp_hdr *hdr, u32 hdr_len,
			    u32 extra, bool have_buf, u32 buf_len, u32 cause)
{
	struct siw2_ddp_rx rx;
	struct sink s = rx_one(test, ext, hdr, hdr_len, extra, have_buf,
			       buf_len, &rx);

	KUNIT_EXPECT_EQ(test, s.errors, 1U);
	KUNIT_EXPECT_EQ(test, s.cause, cause);
	KUNIT_EXPECT_EQ(test, s.msgs, 0U);
	KUNIT_EXPECT_EQ(test, s.payloads, 0U);
}

static void ddp_test_rx_errors(struct kunit *test)
{
	struct siw2_rdmap_hdr m = { .opcode = SIW2_RDMAP_OP_SEND, .msn = 1,
				    .last = true };
	union siw2_iwarp_hdr h, w;

	siw2_rdmap_build(&h, &m);
	/* RFC 5041 7.2, tagged and untagged: invalid DDP version. */
	h.raw[0] = (h.raw[0] & ~SIW2_DDP_DV) | 2;
	expect_rx_error(test, false, &h, 18, 10, true, 100,
			SIW2_TERM_DDP_U_VERSION);
	m.opcode = SIW2_RDMAP_OP_WRITE;
	siw2_rdmap_build(&w, &m);
	w.raw[0] &= ~SIW2_DDP_DV;
	expect_rx_error(test, false, &w, 14, 10, true, 100,
			SIW2_TERM_DDP_T_VERSION);
	/* RFC 5040 4.2: invalid RDMAP version. */
	m.opcode = SIW2_RDMAP_OP_SEND;
	siw2_rdmap_build(&h, &m);
	h.raw[1] = 0x80 | SIW2_RDMAP_OP_SEND;
	expect_rx_error(test, false, &h, 18, 10, true, 100,
			SIW2_TERM_RDMAP_VERSION);
	/* Unexpected opcodes. */
	h.raw[1] = 0x40 | 0xd;
	expect_rx_error(test, true, &h, 18, 10, true, 100,
			SIW2_TERM_RDMAP_OPCODE);
	m.opcode = SIW2_RDMAP_OP_IMM;
	siw2_rdmap_build(&h, &m);
	expect_rx_error(test, false, &h, 26, 0, true, 100,
			SIW2_TERM_RDMAP_OPCODE);
	/* Invalid QN: a Send on queue 1, and on a queue that is none. */
	m.opcode = SIW2_RDMAP_OP_SEND;
	siw2_rdmap_build(&h, &m);
	h.untagged.qn = cpu_to_be32(1);
	expect_rx_error(test, false, &h, 18, 10, true, 100,
			SIW2_TERM_DDP_U_INVALID_QN);
	h.untagged.qn = cpu_to_be32(7);
	expect_rx_error(test, false, &h, 18, 10, true, 100,
			SIW2_TERM_DDP_U_INVALID_QN);
	/* MSN out of range: the stream expects 1. */
	m.msn = 2;
	siw2_rdmap_build(&h, &m);
	expect_rx_error(test, false, &h, 18, 10, true, 100,
			SIW2_TERM_DDP_U_MSN_RANGE);
	m.msn = 0;
	siw2_rdmap_build(&h, &m);
	expect_rx_error(test, false, &h, 18, 10, true, 100,
			SIW2_TERM_DDP_U_MSN_RANGE);
	/* No receive buffer, MO outside it, message longer than it. */
	m.msn = 1;
	siw2_rdmap_build(&h, &m);
	expect_rx_error(test, false, &h, 18, 10, false, 100,
			SIW2_TERM_DDP_U_MSN_NOBUF);
	expect_rx_error(test, false, &h, 18, 0, false, 100,
			SIW2_TERM_DDP_U_MSN_NOBUF);
	expect_rx_error(test, false, &h, 18, 101, true, 100,
			SIW2_TERM_DDP_U_TOO_LONG);
	m.mo = 100;
	siw2_rdmap_build(&h, &m);
	expect_rx_error(test, false, &h, 18, 1, true, 100,
			SIW2_TERM_DDP_U_INVALID_MO);

	/* Read Request: one segment, MO 0, exactly its header. */
	memset(&m, 0, sizeof(m));
	m.opcode = SIW2_RDMAP_OP_READ_REQ;
	m.msn = 1;
	siw2_rdmap_build(&h, &m);
	expect_rx_error(test, false, &h, 46, 0, true, 0,
			SIW2_TERM_DDP_U_TOO_LONG);
	m.last = true;
	siw2_rdmap_build(&h, &m);
	expect_rx_error(test, false, &h, 46, 4, true, 0,
			SIW2_TERM_DDP_U_TOO_LONG);
	m.mo = 8;
	siw2_rdmap_build(&h, &m);
	expect_rx_error(test, false, &h, 46, 0, true, 0,
			SIW2_TERM_DDP_U_INVALID_MO);
	/* A segment too short for its header. */
	m.mo = 0;
	siw2_rdmap_build(&h, &m);
	expect_rx_error(test, false, &h, 30, 0, true, 0,
			SIW2_TERM_RDMAP_OP_UNSPEC);
	expect_rx_error(test, false, &h, 10, 0, true, 0,
			SIW2_TERM_DDP_CATASTROPHIC);
	expect_rx_error(test, false, &h, 1, 0, true, 0,
			SIW2_TERM_DDP_CATASTROPHIC);
	/* Atomic Request: queue 1, atomic response: queue 3. */
	m.opcode = SIW2_RDMAP_OP_ATOMIC_REQ;
	siw2_rdmap_build(&h, &m);
	h.untagged.qn = cpu_to_be32(SIW2_QN_ATOMIC_RESP);
	expect_rx_error(test, true, &h, 70, 0, true, 0,
			SIW2_TERM_DDP_U_INVALID_QN);
	m.opcode = SIW2_RDMAP_OP_ATOMIC_RESP;
	siw2_rdmap_build(&h, &m);
	h.untagged.qn = cpu_to_be32(SIW2_QN_READ_REQ);
	expect_rx_error(test, true, &h, 30, 0, true, 0,
			SIW2_TERM_DDP_U_INVALID_QN);
}

static void ddp_test_rx_llp_contract(struct kunit *test)
{
	struct siw2_rdmap_hdr m = { .opcode = SIW2_RDMAP_OP_SEND, .msn = 1,
				    .last = true };
	struct siw2_ddp_rx_ev ev;
	struct siw2_ddp_rx rx;
	struct sink s = { 0 };
	union siw2_iwarp_hdr h;
	u8 ulpdu[40] = { 0 };
	u8 dst[64];

	siw2_rdmap_build(&h, &m);
	memcpy(ulpdu, h.raw, 18);
	s.buf = dst;
	s.buf_len = sizeof(dst);
	s.have_buf = true;

	/* A span that skips octets. */
	siw2_ddp_rx_init(&rx, false);
	siw2_ddp_rx_span(&rx, ulpdu, 10, 0, 40);
	while (siw2_ddp_rx_next(&rx, &ev) != SIW2_DDP_EV_NONE)
		sink_event(&rx, &s, &ev);
	siw2_ddp_rx_span(&rx, ulpdu + 12, 28, 12, 40);
	while (siw2_ddp_rx_next(&rx, &ev) != SIW2_DDP_EV_NONE)
		sink_event(&rx, &s, &ev);
	KUNIT_EXPECT_EQ(test, s.errors, 1U);
	KUNIT_EXPECT_EQ(test, s.cause, SIW2_TERM_DDP_CATASTROPHIC);
	/* Dead: nothing more is reported, whatever arrives. */
	siw2_ddp_rx_span(&rx, ulpdu, 40, 0, 40);
	KUNIT_EXPECT_EQ(test, siw2_ddp_rx_next(&rx, &ev), SIW2_DDP_EV_NONE);
	KUNIT_EXPECT_EQ(test, siw2_ddp_rx_end(&rx, &ev), SIW2_DDP_EV_NONE);

	/* The end before all octets arrived. */
	memset(&s, 0, sizeof(s));
	s.buf = dst;
	s.buf_len = sizeof(dst);
	s.have_buf = true;
	siw2_ddp_rx_init(&rx, false);
	siw2_ddp_rx_span(&rx, ulpdu, 30, 0, 40);
	while (siw2_ddp_rx_next(&rx, &ev) != SIW2_DDP_EV_NONE)
		sink_event(&rx, &s, &ev);
	KUNIT_EXPECT_EQ(test, s.errors, 0U);
	KUNIT_EXPECT_EQ(test, siw2_ddp_rx_end(&rx, &ev), SIW2_DDP_EV_ERROR);
	KUNIT_EXPECT_EQ(test, ev.cause, SIW2_TERM_DDP_CATASTROPHIC);

	/* The caller's own check failed: silence afterwards. */
	siw2_ddp_rx_init(&rx, false);
	siw2_ddp_rx_span(&rx, ulpdu, 40, 0, 40);
	KUNIT_EXPECT_EQ(test, siw2_ddp_rx_next(&rx, &ev), SIW2_DDP_EV_HEADER);
	siw2_ddp_rx_fail(&rx, SIW2_TERM_DDP_U_MSN_NOBUF);
	KUNIT_EXPECT_EQ(test, siw2_ddp_rx_next(&rx, &ev), SIW2_DDP_EV_NONE);
	KUNIT_EXPECT_EQ(test, siw2_ddp_rx_end(&rx, &ev), SIW2_DDP_EV_NONE);

	/* A segment after its message completed reuses a spent MSN. */
	memset(&s, 0, sizeof(s));
	s.buf = dst;
	s.buf_len = sizeof(dst);
	s.have_buf = true;
	siw2_ddp_rx_init(&rx, false);
	feed_ulpdu(&rx, ulpdu, 40, &(u64){ 3 }, &s);
	KUNIT_EXPECT_EQ(test, s.msgs, 1U);
	feed_ulpdu(&rx, ulpdu, 40, &(u64){ 3 }, &s);
	KUNIT_EXPECT_EQ(test, s.errors, 1U);
	KUNIT_EXPECT_EQ(test, s.cause, SIW2_TERM_DDP_U_MSN_RANGE);
}

/* Terminate messages through the receive path, and the copy they carry. */
static void ddp_test_rx_terminate(struct kunit *test)
{
	struct siw2_rdmap_hdr m = { .opcode = SIW2_RDMAP_OP_READ_REQ, .msn = 2,
				    .last = true };
	struct siw2_term_info t;
	struct siw2_ddp_rx rx;
	union siw2_iwarp_hdr h;
	struct sink s;
	u8 buf[128];
	u32 len;

	/* An out-of-range Read Request: the Terminate copies it whole. */
	m.rreq.size = 4096;
	m.rreq.src_stag = 0x77;
	siw2_rdmap_build(&h, &m);
	s = rx_one(test, false, &h, 46, 0, true, 0, &rx);
	KUNIT_EXPECT_EQ(test, s.cause, SIW2_TERM_DDP_U_MSN_RANGE);
	siw2_ddp_rx_term_prepare(&rx, &t, s.cause);
	KUNIT_EXPECT_EQ(test, t.hdrctl,
			SIW2_TERM_M | SIW2_TERM_D | SIW2_TERM_R);
	KUNIT_EXPECT_EQ(test, (u32)t.seg_len, 46U);
	KUNIT_EXPECT_EQ(test, memcmp(t.ddp_hdr, h.raw, 18), 0);
	KUNIT_EXPECT_EQ(test, memcmp(t.rdmap_hdr, h.raw + 18, 28), 0);
	len = siw2_rdmap_term_build(buf, sizeof(buf), &t);
	KUNIT_ASSERT_EQ(test, len, 22U + 2 + 18 + 28);

	/* The peer receives it. */
	memset(&s, 0, sizeof(s));
	siw2_ddp_rx_init(&rx, false);
	feed_ulpdu(&rx, buf, len, &(u64){ 9 }, &s);
	KUNIT_EXPECT_EQ(test, s.errors, 0U);
	KUNIT_EXPECT_EQ(test, s.terms, 1U);
	KUNIT_EXPECT_FALSE(test, s.term_bad);
	KUNIT_EXPECT_EQ(test, s.term.cause, SIW2_TERM_DDP_U_MSN_RANGE);
	KUNIT_EXPECT_EQ(test, s.term.hdrctl, t.hdrctl);
	KUNIT_EXPECT_EQ(test, memcmp(s.term.rdmap_hdr, t.rdmap_hdr, 28), 0);

	/* A wrong DDP version: nothing can be copied. */
	h.raw[0] &= ~SIW2_DDP_DV;
	s = rx_one(test, false, &h, 46, 0, true, 0, &rx);
	KUNIT_EXPECT_EQ(test, s.cause, SIW2_TERM_DDP_U_VERSION);
	siw2_ddp_rx_term_prepare(&rx, &t, s.cause);
	KUNIT_EXPECT_EQ(test, t.hdrctl, 0U);
	KUNIT_EXPECT_EQ(test, siw2_rdmap_term_build(buf, sizeof(buf), &t), 22U);
	memset(&s, 0, sizeof(s));
	siw2_ddp_rx_init(&rx, true);
	feed_ulpdu(&rx, buf, 22, &(u64){ 10 }, &s);
	KUNIT_EXPECT_EQ(test, s.terms, 1U);
	KUNIT_EXPECT_EQ(test, s.term.cause, SIW2_TERM_DDP_U_VERSION);

	/* A wrong RDMAP version: the DDP header is still copied. */
	h.raw[0] |= SIW2_DDP_VERSION;
	h.raw[1] = SIW2_RDMAP_OP_READ_REQ;
	s = rx_one(test, false, &h, 46, 0, true, 0, &rx);
	KUNIT_EXPECT_EQ(test, s.cause, SIW2_TERM_RDMAP_VERSION);
	siw2_ddp_rx_term_prepare(&rx, &t, s.cause);
	KUNIT_EXPECT_EQ(test, t.hdrctl, SIW2_TERM_M | SIW2_TERM_D);
	KUNIT_EXPECT_EQ(test, (u32)t.ddp_len, 18U);
	KUNIT_EXPECT_EQ(test, memcmp(t.ddp_hdr, h.raw, 18), 0);
	/* So is it at a reserved opcode, tagged. */
	m.opcode = SIW2_RDMAP_OP_WRITE;
	siw2_rdmap_build(&h, &m);
	h.raw[1] = 0x40 | 0xf;
	s = rx_one(test, false, &h, 14, 0, true, 0, &rx);
	KUNIT_EXPECT_EQ(test, s.cause, SIW2_TERM_RDMAP_OPCODE);
	siw2_ddp_rx_term_prepare(&rx, &t, s.cause);
	KUNIT_EXPECT_EQ(test, t.hdrctl, SIW2_TERM_M | SIW2_TERM_D);
	KUNIT_EXPECT_EQ(test, (u32)t.ddp_len, 14U);
	KUNIT_EXPECT_EQ(test, (u32)t.seg_len, 14U);
	/* ... unless the segment is shorter than a DDP header. */
	h.raw[0] &= ~SIW2_DDP_T;
	s = rx_one(test, false, &h, 14, 0, true, 0, &rx);
	KUNIT_EXPECT_EQ(test, s.cause, SIW2_TERM_RDMAP_OPCODE);
	siw2_ddp_rx_term_prepare(&rx, &t, s.cause);
	KUNIT_EXPECT_EQ(test, t.hdrctl, 0U);

	/* A malformed Terminate is reported, flagged. */
	t.hdrctl = SIW2_TERM_R;
	len = siw2_rdmap_term_build(buf, sizeof(buf), &t);
	memset(&s, 0, sizeof(s));
	siw2_ddp_rx_init(&rx, false);
	feed_ulpdu(&rx, buf, len, &(u64){ 11 }, &s);
	KUNIT_EXPECT_EQ(test, s.terms, 1U);
	KUNIT_EXPECT_TRUE(test, s.term_bad);
	KUNIT_EXPECT_EQ(test, s.term.cause, SIW2_TERM_RDMAP_OPCODE);
}

/* Garbage in: events stay inside the input and the segment, never more. */
static void ddp_test_rx_garbage(struct kunit *test)
{
	struct siw2_ddp_rx_ev ev;
	struct siw2_ddp_rx rx;
	const struct siw2_ddp_seg *seg;
	u64 seed = 0x6a7b;
	u8 ulpdu[160];
	u32 len, off, n, i, k, placed;
	bool dead = false;

	siw2_ddp_rx_init(&rx, true);
	for (i = 0; i < 20000; i++) {
		if (dead) {
			siw2_ddp_rx_init(&rx, rnd(&seed) & 1);
			dead = false;
		}
		len = 1 + rnd_below(&seed, sizeof(ulpdu));
		for (k = 0; k < len; k++)
			ulpdu[k] = rnd(&seed);
		if (rnd(&seed) & 1) {
			/* Mostly valid control octets, so deeper checks run. */
			ulpdu[0] = (ulpdu[0] & 0xfc) | SIW2_DDP_VERSION;
			ulpdu[1] = 0x40 | (ulpdu[1] & 0x0f);
			if (len >= 18 && (rnd(&seed) & 1)) {
				memset(ulpdu + 6, 0, 8);
				ulpdu[9] = rnd_below(&seed, 4);
				ulpdu[13] = 1;
			}
		}
		placed = 0;
		for (off = 0; off < len; off += n) {
			n = 1 + rnd_below(&seed, len - off);
			siw2_ddp_rx_span(&rx, ulpdu + off, n, off, len);
			while (siw2_ddp_rx_next(&rx, &ev) != SIW2_DDP_EV_NONE) {
				if (ev.type == SIW2_DDP_EV_ERROR) {
					KUNIT_EXPECT_NE(test, ev.cause, 0U);
					dead = true;
				}
				if (ev.type != SIW2_DDP_EV_PAYLOAD)
					continue;
				seg = siw2_ddp_rx_seg(&rx);
				KUNIT_ASSERT_TRUE(test, ev.data >= ulpdu + off);
				KUNIT_ASSERT_TRUE(test, ev.data + ev.len <=
						  ulpdu + off + n);
				KUNIT_ASSERT_LE(test, ev.off + ev.len, seg->len);
				placed += ev.len;
			}
		}
		KUNIT_EXPECT_LE(test, placed, len);
		if (siw2_ddp_rx_end(&rx, &ev) == SIW2_DDP_EV_ERROR)
			dead = true;
	}
}

static struct kunit_case ddp_test_cases[] = {
	KUNIT_CASE(ddp_test_books_random),
	KUNIT_CASE(ddp_test_books_rules),
	KUNIT_CASE(ddp_test_check_tagged),
	KUNIT_CASE(ddp_test_check_untagged),
	KUNIT_CASE(ddp_test_segmentation),
	KUNIT_CASE(ddp_test_reassembly),
	KUNIT_CASE(ddp_test_out_of_order),
	KUNIT_CASE(ddp_test_stream),
	KUNIT_CASE(ddp_test_over_mpa),
	KUNIT_CASE(ddp_test_rx_empty_segments),
	KUNIT_CASE(ddp_test_rx_errors),
	KUNIT_CASE(ddp_test_rx_llp_contract),
	KUNIT_CASE(ddp_test_rx_terminate),
	KUNIT_CASE(ddp_test_rx_garbage),
	{}
};

static struct kunit_suite ddp_test_suite = {
	.name = "siw2_ddp",
	.test_cases = ddp_test_cases,
};

kunit_test_suite(ddp_test_suite);
