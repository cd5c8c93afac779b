// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * KUnit tests that pin normative rules of RFC 5044 (MPA), RFC 6581
 * (enhanced MPA), RFC 5041 (DDP) and the RFC 5040/7306 values the code
 * relies on, for the rules the mpa, ddp and rdmap suites leave uncovered.
 * Documentation/rfc-coverage.md maps every rule to its code and test.
 *
 * Each case names the section it checks and restates the rule briefly.
 * Where RFC 5040 or RFC 7306 text was not at hand, only values confirmed
 * by the IANA RDDP registry or the Wireshark iWARP dissector are pinned.
 */
#include <kunit/test.h>
#include <linux/kernel.h>
#include <linux/string.h>
#include <asm/unaligned.h>

#include "../mpa.h"
#include "../ddp.h"

static void *zalloc(struct kunit *test, size_t n)
{
	void *p = kunit_kzalloc(test, n, GFP_KERNEL);

	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, p);
	return p;
}

/* ---- MPA receive harness ---- */

struct mpa_out {
	u8 *buf;		/* ULPDU octets back to back */
	size_t cap;
	size_t len;
	unsigned int ends;
	enum siw2_mpa_err err;
};

static void mpa_out_reset(struct mpa_out *o)
{
	o->len = 0;
	o->ends = 0;
	o->err = SIW2_MPA_OK;
}

/* Feeds @len octets in pieces of @chunk octets (0: all at once). */
static void mpa_feed(struct kunit *test, struct siw2_mpa_rx *rx,
		     const u8 *in, size_t len, size_t chunk,
		     struct mpa_out *o)
{
	struct siw2_mpa_rx_ev ev;

	while (len) {
		size_t n = chunk && chunk < len ? chunk : len;
		const u8 *p = in;

		in += n;
		len -= n;
		while (n) {
			size_t used = siw2_mpa_rx(rx, p, n, &ev);

			KUNIT_ASSERT_LE(test, used, n);
			p += used;
			n -= used;
			switch (ev.type) {
			case SIW2_MPA_RX_DATA:
				KUNIT_ASSERT_LE(test, o->len + ev.len, o->cap);
				memcpy(o->buf + o->len, ev.data, ev.len);
				o->len += ev.len;
				break;
			case SIW2_MPA_RX_END:
				o->ends++;
				break;
			case SIW2_MPA_RX_ERROR:
				o->err = ev.err;
				return;
			case SIW2_MPA_RX_NONE:
				KUNIT_ASSERT_EQ(test, n, (size_t)0);
				break;
			}
		}
	}
}

static struct mpa_out *mpa_out_new(struct kunit *test, size_t cap)
{
	struct mpa_out *o = zalloc(test, sizeof(*o));

	o->buf = zalloc(test, cap);
	o->cap = cap;
	return o;
}

/* Rewrites the CRC field (the last four octets) to match the content. */
static void fix_crc(u8 *wire, size_t n)
{
	u32 crc = siw2_mpa_crc_update(SIW2_MPA_CRC_SEED, wire, n - 4);

	siw2_mpa_crc_put(wire + n - 4, siw2_mpa_crc_final(crc));
}

/*
 * RFC 5044 4.3: the FPDUPTR is the distance back to ULPDU_Length, and
 * both sender and receiver must get it right when the sequence number
 * wraps between the header and the Marker. Several Markers in one FPDU
 * all point to the same ULPDU_Length.
 */
static void rfc_test_5044_marker_seq_wrap(struct kunit *test)
{
	const u32 start = 0xffffff00, len = 1000;
	static const size_t chunks[] = { 0, 1, 7, 300 };
	struct mpa_out *o = mpa_out_new(test, len);
	u8 *payload = zalloc(test, len);
	u8 *wire = zalloc(test, len + 100);
	struct siw2_mpa_rx rx;
	struct siw2_mpa_tx tx;
	u32 i, markers = 0;
	unsigned int k;
	size_t n;

	for (i = 0; i < len; i++)
		payload[i] = i * 13 + 1;
	siw2_mpa_tx_init(&tx, true, true);
	tx.pos = start;
	n = siw2_mpa_fpdu_build(&tx, payload, len, wire, len + 100);
	/* Body 2 + 1000 + 2 pad + 4 CRC, Markers at positions 0 and 512. */
	KUNIT_ASSERT_EQ(test, n, (size_t)1016);
	KUNIT_EXPECT_EQ(test, tx.pos, start + (u32)n);
	for (i = 0; i < n; i++) {
		u16 ptr;

		if ((start + i) % SIW2_MPA_MARKER_INTERVAL)
			continue;
		markers++;
		ptr = wire[i + 2] << 8 | wire[i + 3];
		KUNIT_EXPECT_EQ(test, wire[i] | wire[i + 1], 0);
		/* ULPDU_Length is the first octet sent, at @start. */
		KUNIT_EXPECT_EQ(test, (u32)ptr, i);
		i += SIW2_MPA_MARKER_LEN - 1;
	}
	KUNIT_EXPECT_EQ(test, markers, 2U);

	for (k = 0; k < ARRAY_SIZE(chunks); k++) {
		mpa_out_reset(o);
		siw2_mpa_rx_init(&rx, true, true);
		rx.pos = start;
		mpa_feed(test, &rx, wire, n, chunks[k], o);
		KUNIT_EXPECT_EQ(test, o->err, SIW2_MPA_OK);
		KUNIT_EXPECT_EQ(test, o->ends, 1U);
		KUNIT_ASSERT_EQ(test, o->len, (size_t)len);
		KUNIT_EXPECT_EQ(test, memcmp(o->buf, payload, len), 0);
		KUNIT_EXPECT_EQ(test, rx.pos, start + (u32)n);
	}

	/* The receiver checks the wrapped distance too (code 3). */
	wire[256 + 3] ^= 0x04;
	fix_crc(wire, n);
	mpa_out_reset(o);
	siw2_mpa_rx_init(&rx, true, true);
	rx.pos = start;
	mpa_feed(test, &rx, wire, n, 0, o);
	KUNIT_EXPECT_EQ(test, o->err, SIW2_MPA_ERR_MARKER);
	KUNIT_EXPECT_EQ(test, o->ends, 0U);
}

/*
 * RFC 5044 6, 4.4: an FPDU is passed on as complete (and may be acted
 * upon) only once ULPDU_Length says all of it arrived and its CRC was
 * verified; a CRC mismatch makes it invalid and it is never completed.
 */
static void rfc_test_5044_verify_before_delivery(struct kunit *test)
{
	const u32 len = 100;
	struct mpa_out *o = mpa_out_new(test, len);
	u8 *payload = zalloc(test, len);
	u8 *wire = zalloc(test, 200);
	struct siw2_mpa_rx rx;
	struct siw2_mpa_tx tx;
	size_t n, k;
	u32 i;

	for (i = 0; i < len; i++)
		payload[i] = 0xa0 ^ i;
	siw2_mpa_tx_init(&tx, true, true);
	n = siw2_mpa_fpdu_build(&tx, payload, len, wire, 200);
	KUNIT_ASSERT_EQ(test, n, (size_t)112);

	for (k = 1; k < n; k++) {
		mpa_out_reset(o);
		siw2_mpa_rx_init(&rx, true, true);
		mpa_feed(test, &rx, wire, k, 0, o);
		KUNIT_EXPECT_EQ_MSG(test, o->ends, 0U, "after %zu octets", k);
		KUNIT_EXPECT_EQ(test, o->err, SIW2_MPA_OK);
		mpa_feed(test, &rx, wire + k, n - k, 0, o);
		KUNIT_EXPECT_EQ_MSG(test, o->ends, 1U, "split at %zu", k);
		KUNIT_EXPECT_EQ(test, o->len, (size_t)len);
	}

	wire[n - 1] ^= 0x01;
	mpa_out_reset(o);
	siw2_mpa_rx_init(&rx, true, true);
	mpa_feed(test, &rx, wire, n, 0, o);
	KUNIT_EXPECT_EQ(test, o->err, SIW2_MPA_ERR_CRC);
	KUNIT_EXPECT_EQ(test, o->ends, 0U);
}

/* ---- MPA startup frames ---- */

static size_t mk_frame(u8 *out, const char *key, u8 flags, u8 rev,
		       const void *pd, u16 pd_len)
{
	memcpy(out, key, SIW2_MPA_KEY_LEN);
	out[16] = flags;
	out[17] = rev;
	out[18] = pd_len >> 8;
	out[19] = pd_len & 0xff;
	if (pd_len)
		memcpy(out + 20, pd, pd_len);
	return 20 + pd_len;
}

/* Feeds a whole frame; *@used gets the octets consumed. */
static enum siw2_mpa_cm_action cm_feed(struct siw2_mpa_cm *cm, const u8 *buf,
				       size_t len, bool bytewise,
				       size_t *used)
{
	enum siw2_mpa_cm_action a = SIW2_MPA_CM_NEED_MORE;
	size_t at = 0, n;

	while (at < len) {
		a = siw2_mpa_cm_rx(cm, buf + at, bytewise ? 1 : len - at, &n);
		at += n;
		if (a != SIW2_MPA_CM_NEED_MORE)
			break;
	}
	*used = at;
	return a;
}

/* An initiator with its Request sent, waiting for the Reply. */
static void init_sent(struct kunit *test, struct siw2_mpa_cm *cm,
		      const struct siw2_mpa_params *p)
{
	u8 req[SIW2_MPA_FRAME_MAX];
	size_t n;

	KUNIT_ASSERT_EQ(test, siw2_mpa_cm_init(cm, SIW2_MPA_INITIATOR, p),
			SIW2_MPA_OK);
	KUNIT_ASSERT_EQ(test, siw2_mpa_cm_request(cm, NULL, 0, req,
						  sizeof(req), &n),
			SIW2_MPA_OK);
}

/*
 * RFC 5044 7.1.1: R in a Request and the Res bits in any frame are not
 * checked on reception (in a rev 1 frame the RFC 6581 S bit is still a
 * Res bit), and a Reply whose Key is neither Key closes the connection
 * with an error (7.1.2 rule 5, 8 code 4).
 */
static void rfc_test_5044_frame_unchecked_bits(struct kunit *test)
{
	static const struct siw2_mpa_params p1 = { .rev = 1 };
	static const struct siw2_mpa_params p2 = {
		.rev = 2, .rtr = SIW2_MPA_RTR_WRITE, .ird = 4, .ord = 4,
	};
	static const u8 v2[4] = { 0x00, 0x04, 0x00, 0x04 };
	struct siw2_mpa_cm *cm = zalloc(test, sizeof(*cm));
	u8 *f = zalloc(test, SIW2_MPA_FRAME_MAX);
	size_t n, used;

	/* Responder, rev 1: every flag bit set in a rev 1 Request. */
	KUNIT_ASSERT_EQ(test, siw2_mpa_cm_init(cm, SIW2_MPA_RESPONDER, &p1),
			SIW2_MPA_OK);
	n = mk_frame(f, SIW2_MPA_KEY_REQ, 0xff, 1, "ab", 2);
	KUNIT_ASSERT_EQ(test, cm_feed(cm, f, n, true, &used),
			SIW2_MPA_CM_REQUEST);
	KUNIT_EXPECT_EQ(test, used, n);
	KUNIT_EXPECT_FALSE(test, cm->conn.enhanced);
	KUNIT_EXPECT_TRUE(test, cm->conn.tx_markers);
	KUNIT_EXPECT_TRUE(test, cm->conn.crc);
	KUNIT_ASSERT_EQ(test, cm->conn.pdata_len, 2);
	KUNIT_EXPECT_EQ(test, cm->conn.pdata[0], 'a');
	/* Our Reply leaves R and Res zero; C says CRCs are on. */
	KUNIT_ASSERT_EQ(test, siw2_mpa_cm_accept(cm, 0, 0, NULL, 0, f,
						 SIW2_MPA_FRAME_MAX, &n),
			SIW2_MPA_OK);
	KUNIT_EXPECT_EQ(test, f[16], SIW2_MPA_FLAG_C);
	KUNIT_EXPECT_EQ(test, f[17], 1);

	/* Responder, rev 2: R and Res set, S clear, in a rev 2 Request. */
	KUNIT_ASSERT_EQ(test, siw2_mpa_cm_init(cm, SIW2_MPA_RESPONDER, &p2),
			SIW2_MPA_OK);
	n = mk_frame(f, SIW2_MPA_KEY_REQ, SIW2_MPA_FLAG_R | 0x0f, 2, "xy", 2);
	KUNIT_ASSERT_EQ(test, cm_feed(cm, f, n, false, &used),
			SIW2_MPA_CM_REQUEST);
	KUNIT_EXPECT_FALSE(test, cm->conn.enhanced);
	KUNIT_EXPECT_EQ(test, cm->conn.pdata_len, 2);

	/* Initiator, rev 1: Res and S set in a rev 1 Reply. */
	init_sent(test, cm, &p1);
	n = mk_frame(f, SIW2_MPA_KEY_REP, 0x1f, 1, NULL, 0);
	KUNIT_EXPECT_EQ(test, cm_feed(cm, f, n, true, &used),
			SIW2_MPA_CM_ESTABLISHED);
	KUNIT_EXPECT_FALSE(test, cm->conn.enhanced);

	/* Initiator, rev 2: Res set beside S in the enhanced Reply. */
	init_sent(test, cm, &p2);
	n = mk_frame(f, SIW2_MPA_KEY_REP, SIW2_MPA_FLAG_S | 0x0f, 2, v2, 4);
	KUNIT_EXPECT_EQ(test, cm_feed(cm, f, n, false, &used),
			SIW2_MPA_CM_ESTABLISHED);
	KUNIT_EXPECT_TRUE(test, cm->conn.enhanced);

	/* Initiator: a Key that is neither, found at its 14th octet. */
	init_sent(test, cm, &p1);
	n = mk_frame(f, "MPA ID Rep Frbme", 0, 1, NULL, 0);
	KUNIT_EXPECT_EQ(test, cm_feed(cm, f, n, true, &used),
			SIW2_MPA_CM_ERROR);
	KUNIT_EXPECT_EQ(test, used, (size_t)14);
	KUNIT_EXPECT_EQ(test, cm->err, SIW2_MPA_ERR_KEY);
	KUNIT_EXPECT_EQ(test, siw2_mpa_err_ecode(cm->err),
			SIW2_MPA_ECODE_BAD_RR);
	KUNIT_EXPECT_FALSE(test, siw2_mpa_err_wants_term(cm->err));
	KUNIT_EXPECT_FALSE(test, siw2_mpa_cm_may_send(cm));
}

/*
 * RFC 5044 7.1.2 rules 2 and 3: a rejecting Reply has R set; both sides
 * then exit MPA with TCP left open (no MPA error). RFC 6581 9.1: the
 * initiator hands the responder's IRD and ORD to the ULP on a reject as
 * on an accept.
 */
static void rfc_test_5044_reject_leaves_tcp_open(struct kunit *test)
{
	static const struct siw2_mpa_params ip = {
		.rev = 2, .ird = 4, .ord = 4,
	};
	static const struct siw2_mpa_params rp = {
		.rev = 2, .rtr = SIW2_MPA_RTR_WRITE,
	};
	static const u8 rep_hdr[] = {
		SIW2_MPA_FLAG_R | SIW2_MPA_FLAG_S, 2, 0x00, 0x06,
		0x00, 0x02, 0x00, 0x07, 'n', 'o',
	};
	struct siw2_mpa_cm *i = zalloc(test, sizeof(*i));
	struct siw2_mpa_cm *r = zalloc(test, sizeof(*r));
	u8 *req = zalloc(test, SIW2_MPA_FRAME_MAX);
	u8 *rep = zalloc(test, SIW2_MPA_FRAME_MAX + 8);
	size_t req_len, rep_len, used;

	KUNIT_ASSERT_EQ(test, siw2_mpa_cm_init(i, SIW2_MPA_INITIATOR, &ip),
			SIW2_MPA_OK);
	KUNIT_ASSERT_EQ(test, siw2_mpa_cm_init(r, SIW2_MPA_RESPONDER, &rp),
			SIW2_MPA_OK);
	KUNIT_ASSERT_EQ(test, siw2_mpa_cm_request(i, "hi", 2, req,
						  SIW2_MPA_FRAME_MAX, &req_len),
			SIW2_MPA_OK);
	KUNIT_ASSERT_EQ(test, cm_feed(r, req, req_len, false, &used),
			SIW2_MPA_CM_REQUEST);
	KUNIT_ASSERT_EQ(test, siw2_mpa_cm_reject(r, 2, 7, "no", 2, rep,
						 SIW2_MPA_FRAME_MAX, &rep_len),
			SIW2_MPA_OK);
	KUNIT_ASSERT_EQ(test, rep_len, sizeof(rep_hdr) + 16);
	KUNIT_EXPECT_EQ(test, memcmp(rep, SIW2_MPA_KEY_REP, 16), 0);
	KUNIT_EXPECT_EQ(test, memcmp(rep + 16, rep_hdr, sizeof(rep_hdr)), 0);

	/* Responder: out of MPA, nothing to send, TCP is the ULP's. */
	KUNIT_EXPECT_FALSE(test, siw2_mpa_cm_may_send(r));
	KUNIT_EXPECT_EQ(test, siw2_mpa_cm_closed(r), SIW2_MPA_CM_REJECTED);
	KUNIT_EXPECT_EQ(test, siw2_mpa_cm_timeout(r), SIW2_MPA_CM_REJECTED);
	KUNIT_EXPECT_EQ(test, r->err, SIW2_MPA_OK);

	/* Initiator: the same, with the octets after the frame left alone. */
	memcpy(rep + rep_len, "ULP data", 8);
	KUNIT_EXPECT_EQ(test, siw2_mpa_cm_rx(i, rep, rep_len + 8, &used),
			SIW2_MPA_CM_REJECTED);
	KUNIT_EXPECT_EQ(test, used, rep_len);
	KUNIT_EXPECT_EQ(test, i->err, SIW2_MPA_OK);
	KUNIT_EXPECT_FALSE(test, siw2_mpa_cm_may_send(i));
	KUNIT_EXPECT_EQ(test, siw2_mpa_cm_closed(i), SIW2_MPA_CM_REJECTED);
	KUNIT_EXPECT_EQ(test, i->conn.peer_ird, 2);
	KUNIT_EXPECT_EQ(test, i->conn.peer_ord, 7);
	KUNIT_ASSERT_EQ(test, i->conn.pdata_len, 2);
	KUNIT_EXPECT_EQ(test, memcmp(i->conn.pdata, "no", 2), 0);
}

/*
 * RFC 6581 9.2: in the client-server model A is 0 in the Request and in
 * the Reply; with A clear, B, C and D are sent as 0 and ignored when
 * received. 9: the data is big endian with 14-bit IRD and ORD.
 */
static void rfc_test_6581_client_server_flags(struct kunit *test)
{
	static const struct siw2_mpa_params ip = {
		.rev = 2, .rtr = SIW2_MPA_RTR_ALL, .ird = 3, .ord = 2,
	};
	static const struct siw2_mpa_params rp = {
		.rev = 2, .rtr = SIW2_MPA_RTR_ALL,
	};
	static const struct siw2_mpa_params ip4 = {
		.rev = 2, .ird = 4, .ord = 4,
	};
	static const u8 req_v2[4] = { 0x00, 0x03, 0x00, 0x02 };
	static const u8 bcd_req[4] = { 0x40, 0x03, 0xc0, 0x02 };
	static const u8 rep_v2[4] = { 0x00, 0x05, 0x00, 0x01 };
	static const u8 bcd_rep[4] = { 0x40, 0x04, 0xc0, 0x02 };
	struct siw2_mpa_cm *cm = zalloc(test, sizeof(*cm));
	u8 *f = zalloc(test, SIW2_MPA_FRAME_MAX);
	size_t n, used;

	/* Sent: A, B, C, D all 0 although RTRs are supported locally. */
	KUNIT_ASSERT_EQ(test, siw2_mpa_cm_init(cm, SIW2_MPA_INITIATOR, &ip),
			SIW2_MPA_OK);
	KUNIT_ASSERT_EQ(test, siw2_mpa_cm_request(cm, NULL, 0, f,
						  SIW2_MPA_FRAME_MAX, &n),
			SIW2_MPA_OK);
	KUNIT_ASSERT_EQ(test, n, (size_t)24);
	KUNIT_EXPECT_EQ(test, f[16], SIW2_MPA_FLAG_S);
	KUNIT_EXPECT_EQ(test, memcmp(f + 20, req_v2, 4), 0);

	/* Received Request: B, C, D set with A clear are ignored. */
	KUNIT_ASSERT_EQ(test, siw2_mpa_cm_init(cm, SIW2_MPA_RESPONDER, &rp),
			SIW2_MPA_OK);
	n = mk_frame(f, SIW2_MPA_KEY_REQ, SIW2_MPA_FLAG_S, 2, bcd_req, 4);
	KUNIT_ASSERT_EQ(test, cm_feed(cm, f, n, false, &used),
			SIW2_MPA_CM_REQUEST);
	KUNIT_EXPECT_EQ(test, cm->conn.peer_ird, 3);
	KUNIT_EXPECT_EQ(test, cm->conn.peer_ord, 2);
	KUNIT_ASSERT_EQ(test, siw2_mpa_cm_accept(cm, 5, 1, NULL, 0, f,
						 SIW2_MPA_FRAME_MAX, &n),
			SIW2_MPA_OK);
	/* A echoed as 0, no RTR offered; IRD 5, ORD min(1, 3). */
	KUNIT_ASSERT_EQ(test, n, (size_t)24);
	KUNIT_EXPECT_EQ(test, memcmp(f + 20, rep_v2, 4), 0);
	KUNIT_EXPECT_FALSE(test, cm->conn.p2p);
	KUNIT_EXPECT_EQ(test, cm->conn.rtr, 0);

	/* Received Reply: B, C, D set with A clear are ignored. */
	init_sent(test, cm, &ip4);
	n = mk_frame(f, SIW2_MPA_KEY_REP, SIW2_MPA_FLAG_S, 2, bcd_rep, 4);
	KUNIT_ASSERT_EQ(test, cm_feed(cm, f, n, true, &used),
			SIW2_MPA_CM_ESTABLISHED);
	KUNIT_EXPECT_FALSE(test, cm->conn.p2p);
	KUNIT_EXPECT_EQ(test, cm->conn.rtr, 0);
	KUNIT_EXPECT_EQ(test, cm->conn.peer_ird, 4);
	KUNIT_EXPECT_EQ(test, cm->conn.peer_ord, 2);
	KUNIT_EXPECT_EQ(test, cm->conn.ird, 4);
	KUNIT_EXPECT_EQ(test, cm->conn.ord, 4);
}

/* ---- DDP ---- */

/*
 * RFC 5041 4.2, 4.3, 5.2: every segment of one message carries the same
 * RsvdULP (here the RDMAP control octet and the Invalidate STag), the
 * same STag (tagged) or QN and MSN (untagged); the MO is the offset of
 * the segment's first octet, 0 for the first; the TO is the message's
 * first TO plus that offset; no segment exceeds the MULPDU, and only the
 * final one has L. (The caller starts an untagged message at MO 0.)
 */
static void rfc_test_5041_segment_fields(struct kunit *test)
{
	const u32 len = 5000, mulpdu = 1000;
	struct siw2_rdmap_hdr m = {
		.opcode = SIW2_RDMAP_OP_SEND_SE_INV, .inval_stag = 0xabcd1234,
		.msn = 77,
	};
	struct siw2_ddp_tx_seg seg;
	struct siw2_ddp_tx tx;
	u8 first[sizeof(struct siw2_ddp_untagged_hdr)];
	const u64 to = 0xfffffff000000000ULL;
	u32 off = 0, segs = 0;

	KUNIT_ASSERT_EQ(test, siw2_ddp_tx_init(&tx, &m, len), 0);
	while (siw2_ddp_tx_next(&tx, mulpdu, &seg) == 1) {
		const u8 *h = seg.hdr;

		KUNIT_ASSERT_EQ(test, seg.hdr_len, (u32)sizeof(first));
		KUNIT_EXPECT_LE(test, seg.hdr_len + seg.len, mulpdu);
		if (!segs)
			memcpy(first, h, sizeof(first));
		/* RDMAP control, Invalidate STag, QN, MSN. */
		KUNIT_EXPECT_EQ(test, memcmp(h + 1, first + 1, 13), 0);
		KUNIT_EXPECT_EQ(test, get_unaligned_be32(h + 14), off);
		KUNIT_EXPECT_EQ(test, !!(h[0] & SIW2_DDP_L), seg.last);
		KUNIT_EXPECT_EQ(test, seg.last, off + seg.len == len);
		off += seg.len;
		segs++;
	}
	KUNIT_EXPECT_EQ(test, off, len);
	KUNIT_EXPECT_EQ(test, segs, DIV_ROUND_UP(len, mulpdu - 18));
	KUNIT_EXPECT_EQ(test, first[1], 0x40 | SIW2_RDMAP_OP_SEND_SE_INV);
	KUNIT_EXPECT_EQ(test, get_unaligned_be32(first + 2), 0xabcd1234U);
	KUNIT_EXPECT_EQ(test, get_unaligned_be32(first + 6), 0U);
	KUNIT_EXPECT_EQ(test, get_unaligned_be32(first + 10), 77U);

	memset(&m, 0, sizeof(m));
	m.opcode = SIW2_RDMAP_OP_WRITE;
	m.stag = 0x11223344;
	m.to = to;
	off = 0;
	segs = 0;
	KUNIT_ASSERT_EQ(test, siw2_ddp_tx_init(&tx, &m, len), 0);
	while (siw2_ddp_tx_next(&tx, mulpdu, &seg) == 1) {
		const u8 *h = seg.hdr;

		KUNIT_ASSERT_EQ(test, seg.hdr_len, 14U);
		KUNIT_EXPECT_LE(test, seg.hdr_len + seg.len, mulpdu);
		KUNIT_EXPECT_EQ(test, h[0] & ~SIW2_DDP_L, 0x81);
		KUNIT_EXPECT_EQ(test, h[1], 0x40 | SIW2_RDMAP_OP_WRITE);
		KUNIT_EXPECT_EQ(test, get_unaligned_be32(h + 2), 0x11223344U);
		KUNIT_EXPECT_EQ(test, get_unaligned_be64(h + 6), to + off);
		KUNIT_EXPECT_EQ(test, !!(h[0] & SIW2_DDP_L), seg.last);
		off += seg.len;
		segs++;
	}
	KUNIT_EXPECT_EQ(test, off, len);
	KUNIT_EXPECT_EQ(test, segs, DIV_ROUND_UP(len, mulpdu - 14));
}

struct ddp_out {
	unsigned int msgs;
	unsigned int errors;
	u32 cause;
};

static void ddp_count(struct ddp_out *o, const struct siw2_ddp_rx_ev *ev)
{
	if (ev->type == SIW2_DDP_EV_SEG_END && ev->msg_done)
		o->msgs++;
	if (ev->type == SIW2_DDP_EV_ERROR) {
		o->errors++;
		o->cause = ev->cause;
	}
}

/* One complete, single-segment Send of 10 octets with @msn. */
static void ddp_send_one(struct siw2_ddp_rx *rx, u32 msn, struct ddp_out *o)
{
	struct siw2_rdmap_hdr m = {
		.opcode = SIW2_RDMAP_OP_SEND, .last = true, .msn = msn,
	};
	union siw2_iwarp_hdr h;
	struct siw2_ddp_rx_ev ev;
	u8 ulpdu[28] = { 0 };

	siw2_rdmap_build(&h, &m);
	memcpy(ulpdu, h.raw, sizeof(struct siw2_ddp_untagged_hdr));
	siw2_ddp_rx_span(rx, ulpdu, sizeof(ulpdu), 0, sizeof(ulpdu));
	while (siw2_ddp_rx_next(rx, &ev) != SIW2_DDP_EV_NONE)
		ddp_count(o, &ev);
	siw2_ddp_rx_end(rx, &ev);
	ddp_count(o, &ev);
}

/*
 * RFC 5041 4.3: the MSN grows by one per message on a queue and wraps
 * from 0xFFFFFFFF to 0 (not to 1, the initial value). The receive state
 * is private to ddp.c; the test sets the queue's next MSN directly to
 * stand for 2^32 - 1 completed messages.
 */
static void rfc_test_5041_msn_wrap(struct kunit *test)
{
	struct siw2_ddp_rx *rx = zalloc(test, sizeof(*rx));
	struct ddp_out o = { 0 };

	siw2_ddp_rx_init(rx, false);
	rx->msn[SIW2_QN_SEND] = U32_MAX;
	ddp_send_one(rx, U32_MAX, &o);
	ddp_send_one(rx, 0, &o);
	ddp_send_one(rx, 1, &o);
	KUNIT_EXPECT_EQ(test, o.errors, 0U);
	KUNIT_EXPECT_EQ(test, o.msgs, 3U);

	memset(&o, 0, sizeof(o));
	siw2_ddp_rx_init(rx, false);
	rx->msn[SIW2_QN_SEND] = U32_MAX;
	ddp_send_one(rx, U32_MAX, &o);
	ddp_send_one(rx, 1, &o);
	KUNIT_EXPECT_EQ(test, o.msgs, 1U);
	KUNIT_EXPECT_EQ(test, o.errors, 1U);
	KUNIT_EXPECT_EQ(test, o.cause, SIW2_TERM_DDP_U_MSN_RANGE);
}

/* ---- Error numbers ---- */

/*
 * RFC 5041 7.2 (DDP) and RFC 5040 4.8 (RDMAP, values as in the IANA RDDP
 * registry of RFC 6580): the layer, error type and error code numbers
 * that must be used, and their place in the Terminate control word
 * (layer, type: one octet; code: the next).
 */
static void rfc_test_error_numbers(struct kunit *test)
{
	static const struct {
		u32 cause;
		u8 layer, etype, ecode;
	} want[] = {
		{ SIW2_TERM_DDP_CATASTROPHIC, 1, 0, 0x00 },
		{ SIW2_TERM_DDP_T_INVALID_STAG, 1, 1, 0x00 },
		{ SIW2_TERM_DDP_T_BASE_BOUNDS, 1, 1, 0x01 },
		{ SIW2_TERM_DDP_T_STAG_NOT_ASSOC, 1, 1, 0x02 },
		{ SIW2_TERM_DDP_T_TO_WRAP, 1, 1, 0x03 },
		{ SIW2_TERM_DDP_T_VERSION, 1, 1, 0x04 },
		{ SIW2_TERM_DDP_U_INVALID_QN, 1, 2, 0x01 },
		{ SIW2_TERM_DDP_U_MSN_NOBUF, 1, 2, 0x02 },
		{ SIW2_TERM_DDP_U_MSN_RANGE, 1, 2, 0x03 },
		{ SIW2_TERM_DDP_U_INVALID_MO, 1, 2, 0x04 },
		{ SIW2_TERM_DDP_U_TOO_LONG, 1, 2, 0x05 },
		{ SIW2_TERM_DDP_U_VERSION, 1, 2, 0x06 },
		{ SIW2_TERM_RDMAP_CATASTROPHIC, 0, 0, 0x00 },
		{ SIW2_TERM_RDMAP_INVALID_STAG, 0, 1, 0x00 },
		{ SIW2_TERM_RDMAP_BASE_BOUNDS, 0, 1, 0x01 },
		{ SIW2_TERM_RDMAP_ACCESS, 0, 1, 0x02 },
		{ SIW2_TERM_RDMAP_STAG_NOT_ASSOC, 0, 1, 0x03 },
		{ SIW2_TERM_RDMAP_TO_WRAP, 0, 1, 0x04 },
		{ SIW2_TERM_RDMAP_PROT_CANNOT_INV, 0, 1, 0x09 },
		{ SIW2_TERM_RDMAP_PROT_UNSPEC, 0, 1, 0xff },
		{ SIW2_TERM_RDMAP_VERSION, 0, 2, 0x05 },
		{ SIW2_TERM_RDMAP_OPCODE, 0, 2, 0x06 },
		{ SIW2_TERM_RDMAP_STREAM_CATASTROPHIC, 0, 2, 0x07 },
		{ SIW2_TERM_RDMAP_GLOBAL_CATASTROPHIC, 0, 2, 0x08 },
		{ SIW2_TERM_RDMAP_OP_CANNOT_INV, 0, 2, 0x09 },
		{ SIW2_TERM_RDMAP_OP_UNSPEC, 0, 2, 0xff },
	};
	struct siw2_term_info t;
	u8 buf[64];
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(want); i++) {
		u32 c = want[i].cause;

		KUNIT_EXPECT_EQ_MSG(test, SIW2_TERM_CAUSE_LAYER(c),
				    (u32)want[i].layer, "row %u", i);
		KUNIT_EXPECT_EQ_MSG(test, SIW2_TERM_CAUSE_ETYPE(c),
				    (u32)want[i].etype, "row %u", i);
		KUNIT_EXPECT_EQ_MSG(test, SIW2_TERM_CAUSE_ECODE(c),
				    (u32)want[i].ecode, "row %u", i);
		siw2_rdmap_term_prepare(&t, c, NULL, 0, 0);
		KUNIT_ASSERT_EQ(test, siw2_rdmap_term_build(buf, sizeof(buf),
							    &t), 22U);
		KUNIT_EXPECT_EQ_MSG(test, buf[18],
				    want[i].layer << 4 | want[i].etype,
				    "row %u", i);
		KUNIT_EXPECT_EQ_MSG(test, buf[19], want[i].ecode, "row %u", i);
		KUNIT_EXPECT_EQ(test, buf[20] | buf[21], 0);
	}
}

/*
 * RFC 5044 8 and RFC 6581 8: MPA errors are layer 2 (LLP), type 0, with
 * codes 1 (TCP lost), 2 (CRC), 3 (Marker), 4 (bad startup frame; TCP is
 * closed at once, no Terminate), 5 (local), 6 (IRD), 7 (RTR). Codes 2
 * and 3 must not close TCP: they are reported with a Terminate, as 6 and
 * 7 are (RFC 6581 9.1, 9.2).
 */
static void rfc_test_mpa_error_numbers(struct kunit *test)
{
	static const struct {
		enum siw2_mpa_err err;
		u8 ecode;
		bool term;
	} want[] = {
		{ SIW2_MPA_ERR_CLOSED, 1, false },
		{ SIW2_MPA_ERR_TIMEOUT, 1, false },
		{ SIW2_MPA_ERR_CRC, 2, true },
		{ SIW2_MPA_ERR_MARKER, 3, true },
		{ SIW2_MPA_ERR_KEY, 4, false },
		{ SIW2_MPA_ERR_INIT_INIT, 4, false },
		{ SIW2_MPA_ERR_REV, 4, false },
		{ SIW2_MPA_ERR_PD_LEN, 4, false },
		{ SIW2_MPA_ERR_PD_EXCESS, 4, false },
		{ SIW2_MPA_ERR_PD_TRUNCATED, 4, false },
		{ SIW2_MPA_ERR_ENH_SHORT, 4, false },
		{ SIW2_MPA_ERR_ENH_UNSOLICITED, 4, false },
		{ SIW2_MPA_ERR_ENH_MISSING, 4, false },
		{ SIW2_MPA_ERR_P2P_UNSOLICITED, 4, false },
		{ SIW2_MPA_ERR_PD_TOO_LONG, 5, false },
		{ SIW2_MPA_ERR_PARAM, 5, false },
		{ SIW2_MPA_ERR_IRD, 6, true },
		{ SIW2_MPA_ERR_NO_RTR, 7, true },
	};
	struct siw2_term_info t;
	u8 buf[64];
	unsigned int i;

	KUNIT_EXPECT_EQ(test, SIW2_MPA_TERM_LAYER, SIW2_LAYER_LLP);
	for (i = 0; i < ARRAY_SIZE(want); i++) {
		KUNIT_EXPECT_EQ_MSG(test, siw2_mpa_err_ecode(want[i].err),
				    want[i].ecode, "row %u", i);
		KUNIT_EXPECT_EQ_MSG(test, siw2_mpa_err_wants_term(want[i].err),
				    want[i].term, "row %u", i);
		KUNIT_EXPECT_EQ_MSG(test, siw2_mpa_err_cause(want[i].err),
				    SIW2_TERM(SIW2_MPA_TERM_LAYER,
					      SIW2_MPA_TERM_ETYPE,
					      want[i].ecode), "row %u", i);
	}
	/* An LLP cause goes out as 0x20, code, with no header copy. */
	siw2_rdmap_term_prepare(&t, siw2_mpa_err_cause(SIW2_MPA_ERR_IRD), NULL,
				0, 0);
	KUNIT_ASSERT_EQ(test, siw2_rdmap_term_build(buf, sizeof(buf), &t), 22U);
	KUNIT_EXPECT_EQ(test, buf[18], 0x20);
	KUNIT_EXPECT_EQ(test, buf[19], 0x06);
}

/* ---- RDMAP wire layouts ---- */

static void expect_octets(struct kunit *test, const u8 *got, const u8 *want,
			  size_t n, const char *what)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (got[i] != want[i])
			break;
	KUNIT_EXPECT_EQ_MSG(test, i, n, "%s: first difference at octet %zu",
			    what, i);
}

/*
 * RFC 5040 4.4 (RDMA Read Request), 4.8 (Terminate) and RFC 7306 (Atomic
 * Request and Response), octet by octet, as the Wireshark iWARP dissector
 * decodes them: fields big endian, reserved octets zero. The queue number
 * of the RFC 7306 messages and the CmpSwap subcode are not pinned here
 * (see Documentation/rfc-coverage.md).
 */
static void rfc_test_rdmap_wire_layouts(struct kunit *test)
{
	static const u8 rreq[46] = {
		0x41, 0x41, 0, 0, 0, 0,			/* DV 1, L; RV 1, op 1 */
		0, 0, 0, 1, 1, 2, 3, 4, 0, 0, 0, 0,	/* QN 1, MSN, MO 0 */
		0x11, 0x12, 0x13, 0x14,			/* sink STag */
		0x21, 0x22, 0x23, 0x24, 0x25, 0x26, 0x27, 0x28,
		0x31, 0x32, 0x33, 0x34,			/* size */
		0x41, 0x42, 0x43, 0x44,			/* source STag */
		0x51, 0x52, 0x53, 0x54, 0x55, 0x56, 0x57, 0x58,
	};
	static const u8 term[24] = {
		0x41, 0x47, 0, 0, 0, 0,			/* untagged, op 7 */
		0, 0, 0, 2, 0, 0, 0, 1, 0, 0, 0, 0,	/* QN 2, MSN 1, MO 0 */
		0x12, 0x03, 0xc0, 0x00,			/* DDP/untagged/3, M D */
		0x00, 0x3a,				/* segment length 58 */
	};
	static const u8 areq_body[52] = {
		0, 0, 0, 0,				/* FetchAdd */
		0x0a, 0x0b, 0x0c, 0x0d,			/* request id */
		0x11, 0x12, 0x13, 0x14,			/* remote STag */
		0x21, 0x22, 0x23, 0x24, 0x25, 0x26, 0x27, 0x28,
		0x31, 0x32, 0x33, 0x34, 0x35, 0x36, 0x37, 0x38,
		0x41, 0x42, 0x43, 0x44, 0x45, 0x46, 0x47, 0x48,
		0x51, 0x52, 0x53, 0x54, 0x55, 0x56, 0x57, 0x58,
		0x61, 0x62, 0x63, 0x64, 0x65, 0x66, 0x67, 0x68,
	};
	static const u8 aresp_body[12] = {
		0x0a, 0x0b, 0x0c, 0x0d,			/* original request id */
		0x71, 0x72, 0x73, 0x74, 0x75, 0x76, 0x77, 0x78,
	};
	struct siw2_rdmap_hdr send = {
		.opcode = SIW2_RDMAP_OP_SEND, .last = true, .msn = 9,
	};
	struct siw2_rdmap_hdr m = { 0 };
	union siw2_iwarp_hdr h, bad;
	struct siw2_term_info t;
	u8 buf[96];

	m.opcode = SIW2_RDMAP_OP_READ_REQ;
	m.last = true;
	m.msn = 0x01020304;
	m.rreq.sink_stag = 0x11121314;
	m.rreq.sink_to = 0x2122232425262728ULL;
	m.rreq.size = 0x31323334;
	m.rreq.src_stag = 0x41424344;
	m.rreq.src_to = 0x5152535455565758ULL;
	KUNIT_ASSERT_EQ(test, siw2_rdmap_build(&h, &m), 46U);
	expect_octets(test, h.raw, rreq, sizeof(rreq), "Read Request");

	/* A Terminate about an untagged segment of 58 octets. */
	siw2_rdmap_build(&bad, &send);
	siw2_rdmap_term_prepare(&t, SIW2_TERM_DDP_U_MSN_RANGE, bad.raw, 18, 58);
	KUNIT_ASSERT_EQ(test, siw2_rdmap_term_build(buf, sizeof(buf), &t),
			24U + 18);
	expect_octets(test, buf, term, sizeof(term), "Terminate");
	expect_octets(test, buf + 24, bad.raw, 18, "Terminated DDP header");

	memset(&m, 0, sizeof(m));
	m.opcode = SIW2_RDMAP_OP_ATOMIC_REQ;
	m.last = true;
	m.msn = 5;
	m.atomic.op = SIW2_ATOMIC_FETCH_ADD;
	m.atomic.req_id = 0x0a0b0c0d;
	m.atomic.stag = 0x11121314;
	m.atomic.to = 0x2122232425262728ULL;
	m.atomic.add_swap = 0x3132333435363738ULL;
	m.atomic.add_swap_mask = 0x4142434445464748ULL;
	m.atomic.cmp = 0x5152535455565758ULL;
	m.atomic.cmp_mask = 0x6162636465666768ULL;
	KUNIT_ASSERT_EQ(test, siw2_rdmap_build(&h, &m), 70U);
	KUNIT_EXPECT_EQ(test, h.raw[0], 0x41);
	KUNIT_EXPECT_EQ(test, h.raw[1], 0x4a);
	KUNIT_EXPECT_EQ(test, get_unaligned_be32(h.raw + 10), 5U);
	expect_octets(test, h.raw + 18, areq_body, sizeof(areq_body),
		      "Atomic Request");

	memset(&m, 0, sizeof(m));
	m.opcode = SIW2_RDMAP_OP_ATOMIC_RESP;
	m.last = true;
	m.aresp.req_id = 0x0a0b0c0d;
	m.aresp.orig = 0x7172737475767778ULL;
	KUNIT_ASSERT_EQ(test, siw2_rdmap_build(&h, &m), 30U);
	KUNIT_EXPECT_EQ(test, h.raw[1], 0x4b);
	expect_octets(test, h.raw + 18, aresp_body, sizeof(aresp_body),
		      "Atomic Response");
}

static struct kunit_case rfc_test_cases[] = {
	KUNIT_CASE(rfc_test_5044_marker_seq_wrap),
	KUNIT_CASE(rfc_test_5044_verify_before_delivery),
	KUNIT_CASE(rfc_test_5044_frame_unchecked_bits),
	KUNIT_CASE(rfc_test_5044_reject_leaves_tcp_open),
	KUNIT_CASE(rfc_test_6581_client_server_flags),
	KUNIT_CASE(rfc_test_5041_segment_fields),
	KUNIT_CASE(rfc_test_5041_msn_wrap),
	KUNIT_CASE(rfc_test_error_numbers),
	KUNIT_CASE(rfc_test_mpa_error_numbers),
	KUNIT_CASE(rfc_test_rdmap_wire_layouts),
	{}
};

static struct kunit_suite rfc_test_suite = {
	.name = "siw2_rfc",
	.test_cases = rfc_test_cases,
};

kunit_test_suite(rfc_test_suite);
