// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * KUnit tests of rdmap.c: the opcode table, header round trips, control
 * checks, Terminate build and parse, STag and invalidate checks, ORD/IRD
 * accounting with fences, the RFC 7306 atomic arithmetic, and the receive
 * rules: a Read Response against the oldest outstanding Read, the RFC 6581
 * RTR, and IRD admission.
 */
#include <kunit/test.h>
#include <linux/kernel.h>
#include <linux/string.h>
#include <linux/errno.h>
#include "../rdmap.h"
#include "../ddp.h"

/* Deterministic xorshift64, so that every run checks the same values. */
static u64 rnd(u64 *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

static void rdmap_test_op_table(struct kunit *test)
{
	static const struct {
		u8 opcode;
		u8 hdr_len;
		bool tagged;
		u8 qn;
		bool consumes_rq;
		bool inval;
		bool se;
	} want[] = {
		{ SIW2_RDMAP_OP_WRITE, 14, true, 0, false, false, false },
		{ SIW2_RDMAP_OP_READ_REQ, 46, false, 1, false, false, false },
		{ SIW2_RDMAP_OP_READ_RESP, 14, true, 0, false, false, false },
		{ SIW2_RDMAP_OP_SEND, 18, false, 0, true, false, false },
		{ SIW2_RDMAP_OP_SEND_INV, 18, false, 0, true, true, false },
		{ SIW2_RDMAP_OP_SEND_SE, 18, false, 0, true, false, true },
		{ SIW2_RDMAP_OP_SEND_SE_INV, 18, false, 0, true, true, true },
		{ SIW2_RDMAP_OP_TERMINATE, 22, false, 2, false, false, false },
		{ SIW2_RDMAP_OP_IMM, 26, false, 0, true, false, false },
		{ SIW2_RDMAP_OP_IMM_SE, 26, false, 0, true, false, true },
		{ SIW2_RDMAP_OP_ATOMIC_REQ, 70, false, 1, false, false, false },
		{ SIW2_RDMAP_OP_ATOMIC_RESP, 30, false, 3, false, false, false },
	};
	const struct siw2_rdmap_op_info *op;
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(want); i++) {
		op = siw2_rdmap_op(want[i].opcode);
		KUNIT_ASSERT_NOT_NULL(test, op);
		KUNIT_EXPECT_EQ(test, op->hdr_len, want[i].hdr_len);
		KUNIT_EXPECT_EQ(test, op->tagged, want[i].tagged);
		if (!op->tagged)
			KUNIT_EXPECT_EQ(test, op->qn, want[i].qn);
		KUNIT_EXPECT_EQ(test, op->consumes_rq, want[i].consumes_rq);
		KUNIT_EXPECT_EQ(test, op->inval, want[i].inval);
		KUNIT_EXPECT_EQ(test, op->se, want[i].se);
		KUNIT_EXPECT_EQ(test, op->ext, want[i].opcode >= SIW2_RDMAP_OP_IMM);
	}
	for (i = 0xc; i <= 0xff; i++)
		KUNIT_EXPECT_NULL(test, siw2_rdmap_op(i));
}

static void fill_random(struct siw2_rdmap_hdr *m, u8 opcode, u64 *s)
{
	memset(m, 0, sizeof(*m));
	m->opcode = opcode;
	m->last = rnd(s) & 1;
	m->stag = rnd(s);
	m->to = rnd(s);
	m->msn = rnd(s);
	m->mo = rnd(s);
	m->inval_stag = rnd(s);
	switch (opcode) {
	case SIW2_RDMAP_OP_READ_REQ:
		m->rreq.sink_stag = rnd(s);
		m->rreq.sink_to = rnd(s);
		m->rreq.size = rnd(s);
		m->rreq.src_stag = rnd(s);
		m->rreq.src_to = rnd(s);
		break;
	case SIW2_RDMAP_OP_TERMINATE:
		m->term_ctrl = rnd(s);
		break;
	case SIW2_RDMAP_OP_IMM:
	case SIW2_RDMAP_OP_IMM_SE:
		m->imm = rnd(s);
		break;
	case SIW2_RDMAP_OP_ATOMIC_REQ:
		m->atomic.op = rnd(s) & SIW2_ATOMIC_OP;
		m->atomic.req_id = rnd(s);
		m->atomic.stag = rnd(s);
		m->atomic.to = rnd(s);
		m->atomic.add_swap = rnd(s);
		m->atomic.add_swap_mask = rnd(s);
		m->atomic.cmp = rnd(s);
		m->atomic.cmp_mask = rnd(s);
		break;
	case SIW2_RDMAP_OP_ATOMIC_RESP:
		m->aresp.req_id = rnd(s);
		m->aresp.orig = rnd(s);
		break;
	}
}

static void expect_same(struct kunit *test, const struct siw2_rdmap_hdr *a,
			const struct siw2_rdmap_hdr *b)
{
	const struct siw2_rdmap_op_info *op = siw2_rdmap_op(a->opcode);

	KUNIT_EXPECT_EQ(test, a->opcode, b->opcode);
	KUNIT_EXPECT_EQ(test, a->last, b->last);
	if (op->tagged) {
		KUNIT_EXPECT_EQ(test, a->stag, b->stag);
		KUNIT_EXPECT_EQ(test, a->to, b->to);
		return;
	}
	KUNIT_EXPECT_EQ(test, (u32)op->qn, b->qn);
	KUNIT_EXPECT_EQ(test, a->msn, b->msn);
	KUNIT_EXPECT_EQ(test, a->mo, b->mo);
	KUNIT_EXPECT_EQ(test, op->inval ? a->inval_stag : 0, b->inval_stag);
	switch (a->opcode) {
	case SIW2_RDMAP_OP_READ_REQ:
		KUNIT_EXPECT_EQ(test, a->rreq.sink_stag, b->rreq.sink_stag);
		KUNIT_EXPECT_EQ(test, a->rreq.sink_to, b->rreq.sink_to);
		KUNIT_EXPECT_EQ(test, a->rreq.size, b->rreq.size);
		KUNIT_EXPECT_EQ(test, a->rreq.src_stag, b->rreq.src_stag);
		KUNIT_EXPECT_EQ(test, a->rreq.src_to, b->rreq.src_to);
		break;
	case SIW2_RDMAP_OP_TERMINATE:
		KUNIT_EXPECT_EQ(test, a->term_ctrl, b->term_ctrl);
		break;
	case SIW2_RDMAP_OP_IMM:
	case SIW2_RDMAP_OP_IMM_SE:
		KUNIT_EXPECT_EQ(test, a->imm, b->imm);
		break;
	case SIW2_RDMAP_OP_ATOMIC_REQ:
		KUNIT_EXPECT_EQ(test, a->atomic.op, b->atomic.op);
		KUNIT_EXPECT_EQ(test, a->atomic.req_id, b->atomic.req_id);
		KUNIT_EXPECT_EQ(test, a->atomic.stag, b->atomic.stag);
		KUNIT_EXPECT_EQ(test, a->atomic.to, b->atomic.to);
		KUNIT_EXPECT_EQ(test, a->atomic.add_swap, b->atomic.add_swap);
		KUNIT_EXPECT_EQ(test, a->atomic.add_swap_mask,
				b->atomic.add_swap_mask);
		KUNIT_EXPECT_EQ(test, a->atomic.cmp, b->atomic.cmp);
		KUNIT_EXPECT_EQ(test, a->atomic.cmp_mask, b->atomic.cmp_mask);
		break;
	case SIW2_RDMAP_OP_ATOMIC_RESP:
		KUNIT_EXPECT_EQ(test, a->aresp.req_id, b->aresp.req_id);
		KUNIT_EXPECT_EQ(test, a->aresp.orig, b->aresp.orig);
		break;
	}
}

/* Every opcode: build, check the wire octets that are fixed, parse back. */
static void rdmap_test_roundtrip(struct kunit *test)
{
	union siw2_iwarp_hdr h;
	struct siw2_rdmap_hdr m, p;
	u64 seed = 0x5eed0001;
	unsigned int op, i;
	u32 len;

	for (op = 0; op <= SIW2_RDMAP_OP_ATOMIC_RESP; op++) {
		for (i = 0; i < 64; i++) {
			fill_random(&m, op, &seed);
			memset(&h, 0xa5, sizeof(h));
			len = siw2_rdmap_build(&h, &m);
			KUNIT_ASSERT_EQ(test, len,
					(u32)siw2_rdmap_op(op)->hdr_len);
			KUNIT_EXPECT_EQ(test, h.raw[0] & SIW2_DDP_DV, 1);
			KUNIT_EXPECT_EQ(test, h.raw[0] & SIW2_DDP_RSVD, 0);
			KUNIT_EXPECT_EQ(test, h.raw[1], 0x40 | op);
			KUNIT_EXPECT_EQ(test, !!(h.raw[0] & SIW2_DDP_T),
					siw2_rdmap_op(op)->tagged);
			if (!siw2_rdmap_op(op)->tagged &&
			    !siw2_rdmap_op(op)->inval)
				KUNIT_EXPECT_EQ(test,
						be32_to_cpu(h.untagged.inval_stag),
						0U);
			KUNIT_EXPECT_EQ(test, siw2_rdmap_parse(&h, len, true, &p),
					0);
			expect_same(test, &m, &p);
		}
	}
}

/* Known octets for one header of each layout, so byte order is pinned. */
static void rdmap_test_wire_layout(struct kunit *test)
{
	static const u8 write[] = {
		0xc1, 0x40, 0x11, 0x22, 0x33, 0x44,
		0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08,
	};
	static const u8 send_inv[] = {
		0x01, 0x44, 0xde, 0xad, 0xbe, 0xef,
		0, 0, 0, 0, 0, 0, 0, 7, 0, 0, 0x10, 0,
	};
	struct siw2_rdmap_hdr m = {
		.opcode = SIW2_RDMAP_OP_WRITE, .last = true,
		.stag = 0x11223344, .to = 0x0102030405060708ULL,
	};
	union siw2_iwarp_hdr h;

	KUNIT_ASSERT_EQ(test, siw2_rdmap_build(&h, &m), 14U);
	KUNIT_EXPECT_EQ(test, memcmp(h.raw, write, sizeof(write)), 0);

	memset(&m, 0, sizeof(m));
	m.opcode = SIW2_RDMAP_OP_SEND_INV;
	m.inval_stag = 0xdeadbeef;
	m.msn = 7;
	m.mo = 0x1000;
	KUNIT_ASSERT_EQ(test, siw2_rdmap_build(&h, &m), 18U);
	KUNIT_EXPECT_EQ(test, memcmp(h.raw, send_inv, sizeof(send_inv)), 0);
}

static void rdmap_test_ctrl_errors(struct kunit *test)
{
	const struct siw2_rdmap_op_info *op;
	union siw2_iwarp_hdr h;
	struct siw2_rdmap_hdr m = { .opcode = SIW2_RDMAP_OP_SEND, .last = true };
	unsigned int v;

	/* RFC 5041 4.1: DV other than 1, by buffer model. */
	for (v = 0; v < 4; v++) {
		if (v == 1)
			continue;
		KUNIT_EXPECT_EQ(test, siw2_rdmap_ctrl_check(0x80 | v, 0x40,
							    true, &op),
				SIW2_TERM_DDP_T_VERSION);
		KUNIT_EXPECT_EQ(test, siw2_rdmap_ctrl_check(v, 0x43, true, &op),
				SIW2_TERM_DDP_U_VERSION);
	}
	/* RFC 5040 4.2: RV other than 1. */
	KUNIT_EXPECT_EQ(test, siw2_rdmap_ctrl_check(0x41, 0x03, true, &op),
			SIW2_TERM_RDMAP_VERSION);
	KUNIT_EXPECT_EQ(test, siw2_rdmap_ctrl_check(0x41, 0x83, true, &op),
			SIW2_TERM_RDMAP_VERSION);
	KUNIT_EXPECT_EQ(test, siw2_rdmap_ctrl_check(0x41, 0xc3, true, &op),
			SIW2_TERM_RDMAP_VERSION);
	/* Reserved opcodes; RFC 7306 opcodes when not enabled. */
	for (v = 0xc; v <= 0xf; v++)
		KUNIT_EXPECT_EQ(test, siw2_rdmap_ctrl_check(0x41, 0x40 | v,
							    true, &op),
				SIW2_TERM_RDMAP_OPCODE);
	for (v = SIW2_RDMAP_OP_IMM; v <= SIW2_RDMAP_OP_ATOMIC_RESP; v++) {
		KUNIT_EXPECT_EQ(test, siw2_rdmap_ctrl_check(0x41, 0x40 | v,
							    false, &op),
				SIW2_TERM_RDMAP_OPCODE);
		KUNIT_EXPECT_EQ(test, siw2_rdmap_ctrl_check(0x41, 0x40 | v,
							    true, &op), 0U);
	}
	/* An opcode in the wrong buffer model. */
	KUNIT_EXPECT_EQ(test, siw2_rdmap_ctrl_check(0xc1, 0x43, true, &op),
			SIW2_TERM_RDMAP_OPCODE);
	KUNIT_EXPECT_EQ(test, siw2_rdmap_ctrl_check(0x41, 0x40, true, &op),
			SIW2_TERM_RDMAP_OPCODE);
	/* Reserved bits are not checked on receive. */
	KUNIT_EXPECT_EQ(test, siw2_rdmap_ctrl_check(0x7d, 0x73, true, &op), 0U);
	KUNIT_EXPECT_PTR_EQ(test, op, siw2_rdmap_op(SIW2_RDMAP_OP_SEND));

	/* Builders refuse reserved opcodes, parsers short headers. */
	m.opcode = 0xc;
	KUNIT_EXPECT_EQ(test, siw2_rdmap_build(&h, &m), 0U);
	m.opcode = SIW2_RDMAP_OP_READ_REQ;
	KUNIT_ASSERT_EQ(test, siw2_rdmap_build(&h, &m), 46U);
	KUNIT_EXPECT_EQ(test, siw2_rdmap_parse(&h, 45, true, &m),
			SIW2_TERM_RDMAP_OP_UNSPEC);
	KUNIT_EXPECT_EQ(test, siw2_rdmap_parse(&h, 1, true, &m),
			SIW2_TERM_DDP_CATASTROPHIC);
}

static void rdmap_test_range(struct kunit *test)
{
	KUNIT_EXPECT_TRUE(test, siw2_range_ok(100, 10, 100, 10));
	KUNIT_EXPECT_TRUE(test, siw2_range_ok(110, 0, 100, 10));
	KUNIT_EXPECT_FALSE(test, siw2_range_ok(99, 1, 100, 10));
	KUNIT_EXPECT_FALSE(test, siw2_range_ok(101, 10, 100, 10));
	KUNIT_EXPECT_FALSE(test, siw2_range_ok(111, 0, 100, 10));
	KUNIT_EXPECT_TRUE(test, siw2_range_ok(U64_MAX - 1, 1, U64_MAX - 1, 1));
	KUNIT_EXPECT_FALSE(test, siw2_range_ok(U64_MAX, U64_MAX, 0, U64_MAX));
	KUNIT_EXPECT_TRUE(test, siw2_range_ok(0, U64_MAX, 0, U64_MAX));
	KUNIT_EXPECT_FALSE(test, siw2_range_ok(1, U64_MAX, 0, U64_MAX));
}

static void rdmap_test_check_stag(struct kunit *test)
{
	struct siw2_stag_view v = {
		.valid = true, .assoc = true, .access = true,
		.base = 0x1000, .len = 0x100,
	};

	KUNIT_EXPECT_EQ(test, siw2_rdmap_check_stag(&v, 0x1000, 0x100), 0U);
	KUNIT_EXPECT_EQ(test, siw2_rdmap_check_stag(&v, 0x1001, 0x100),
			SIW2_TERM_RDMAP_BASE_BOUNDS);
	KUNIT_EXPECT_EQ(test, siw2_rdmap_check_stag(&v, 0xfff, 1),
			SIW2_TERM_RDMAP_BASE_BOUNDS);
	KUNIT_EXPECT_EQ(test, siw2_rdmap_check_stag(&v, U64_MAX - 4, 8),
			SIW2_TERM_RDMAP_TO_WRAP);
	v.access = false;
	KUNIT_EXPECT_EQ(test, siw2_rdmap_check_stag(&v, 0x1000, 1),
			SIW2_TERM_RDMAP_ACCESS);
	v.assoc = false;
	KUNIT_EXPECT_EQ(test, siw2_rdmap_check_stag(&v, 0x1000, 1),
			SIW2_TERM_RDMAP_STAG_NOT_ASSOC);
	v.valid = false;
	KUNIT_EXPECT_EQ(test, siw2_rdmap_check_stag(&v, 0x1000, 1),
			SIW2_TERM_RDMAP_INVALID_STAG);
	/* Zero length checks nothing (RFC 5041 5.2). */
	KUNIT_EXPECT_EQ(test, siw2_rdmap_check_stag(&v, 0, 0), 0U);
}

static void rdmap_test_check_inval(struct kunit *test)
{
	struct siw2_inval_view v = {
		.exists = true, .same_pd = true, .invalidatable = true,
	};

	KUNIT_EXPECT_EQ(test, siw2_rdmap_check_inval(&v), 0U);
	v.invalidatable = false;
	KUNIT_EXPECT_EQ(test, siw2_rdmap_check_inval(&v),
			SIW2_TERM_RDMAP_OP_CANNOT_INV);
	v.same_pd = false;
	KUNIT_EXPECT_EQ(test, siw2_rdmap_check_inval(&v),
			SIW2_TERM_RDMAP_PROT_CANNOT_INV);
	v.exists = false;
	KUNIT_EXPECT_EQ(test, siw2_rdmap_check_inval(&v),
			SIW2_TERM_RDMAP_OP_CANNOT_INV);
	KUNIT_EXPECT_EQ(test, SIW2_TERM_RDMAP_PROT_CANNOT_INV,
			SIW2_TERM(0, 1, 9));
	KUNIT_EXPECT_EQ(test, SIW2_TERM_RDMAP_OP_CANNOT_INV,
			SIW2_TERM(0, 2, 9));
}

/* Builds a Terminate for @cause about @bad and reads it back. */
static void term_roundtrip(struct kunit *test, u32 cause, const u8 *bad,
			   u32 bad_len, u32 seg_len, u32 want_hdrctl,
			   u32 want_ddp, u32 want_rdmap)
{
	struct siw2_term_info t, r;
	struct siw2_rdmap_hdr m;
	u8 buf[128];
	u32 len, want_len;

	siw2_rdmap_term_prepare(&t, cause, bad, bad_len, seg_len);
	KUNIT_EXPECT_EQ(test, t.hdrctl, want_hdrctl);
	KUNIT_EXPECT_EQ(test, (u32)t.ddp_len, want_ddp);
	KUNIT_EXPECT_EQ(test, (u32)t.rdmap_len, want_rdmap);

	want_len = 22 + (want_hdrctl ? 2 + want_ddp + want_rdmap : 0);
	KUNIT_EXPECT_EQ(test, siw2_rdmap_term_build(buf, want_len - 1, &t), 0U);
	len = siw2_rdmap_term_build(buf, sizeof(buf), &t);
	KUNIT_ASSERT_EQ(test, len, want_len);

	/* RFC 5040 5.4: untagged, queue 2, MSN 1, MO 0, Last. */
	KUNIT_ASSERT_EQ(test, siw2_rdmap_parse((union siw2_iwarp_hdr *)buf,
					       len, false, &m), 0U);
	KUNIT_EXPECT_EQ(test, m.opcode, SIW2_RDMAP_OP_TERMINATE);
	KUNIT_EXPECT_EQ(test, m.qn, (u32)SIW2_QN_TERMINATE);
	KUNIT_EXPECT_EQ(test, m.msn, 1U);
	KUNIT_EXPECT_EQ(test, m.mo, 0U);
	KUNIT_EXPECT_TRUE(test, m.last);
	KUNIT_EXPECT_EQ(test, buf[18] >> 4, SIW2_TERM_CAUSE_LAYER(cause));
	KUNIT_EXPECT_EQ(test, buf[18] & 0xf, SIW2_TERM_CAUSE_ETYPE(cause));
	KUNIT_EXPECT_EQ(test, buf[19], SIW2_TERM_CAUSE_ECODE(cause));

	KUNIT_ASSERT_EQ(test, siw2_rdmap_term_parse(m.term_ctrl, buf + 22,
						    len - 22, &r), 0);
	KUNIT_EXPECT_EQ(test, r.cause, cause);
	KUNIT_EXPECT_EQ(test, r.hdrctl, want_hdrctl);
	KUNIT_EXPECT_EQ(test, (u32)r.ddp_len, want_ddp);
	KUNIT_EXPECT_EQ(test, (u32)r.rdmap_len, want_rdmap);
	if (want_hdrctl & SIW2_TERM_M)
		KUNIT_EXPECT_EQ(test, (u32)r.seg_len, seg_len);
	if (want_ddp)
		KUNIT_EXPECT_EQ(test, memcmp(r.ddp_hdr, bad, want_ddp), 0);
	if (want_rdmap)
		KUNIT_EXPECT_EQ(test, memcmp(r.rdmap_hdr, bad + want_ddp,
					     want_rdmap), 0);
}

static void rdmap_test_terminate(struct kunit *test)
{
	const u32 md = SIW2_TERM_M | SIW2_TERM_D;
	struct siw2_rdmap_hdr m = { .last = true, .msn = 3 };
	union siw2_iwarp_hdr h;
	u64 seed = 77;

	m.opcode = SIW2_RDMAP_OP_WRITE;
	m.stag = 0x1234;
	m.to = 0x99;
	siw2_rdmap_build(&h, &m);
	term_roundtrip(test, SIW2_TERM_DDP_T_BASE_BOUNDS, h.raw, 14, 1000,
		       md, 14, 0);
	term_roundtrip(test, SIW2_TERM_RDMAP_ACCESS, h.raw, 14, 1000, md, 14, 0);
	/* Wrong version: the layout is unknown, nothing is copied. */
	term_roundtrip(test, SIW2_TERM_DDP_T_VERSION, h.raw, 14, 1000, 0, 0, 0);

	m.opcode = SIW2_RDMAP_OP_SEND_SE_INV;
	m.inval_stag = 0xabcd;
	siw2_rdmap_build(&h, &m);
	term_roundtrip(test, SIW2_TERM_DDP_U_MSN_NOBUF, h.raw, 18, 60, md, 18,
		       0);
	term_roundtrip(test, SIW2_TERM_RDMAP_OP_CANNOT_INV, h.raw, 18, 60, md,
		       18, 0);
	term_roundtrip(test, SIW2_TERM_DDP_U_VERSION, h.raw, 18, 60, 0, 0, 0);
	/* Catastrophic and LLP errors carry no copy. */
	term_roundtrip(test, SIW2_TERM_RDMAP_CATASTROPHIC, h.raw, 18, 60, 0, 0,
		       0);
	term_roundtrip(test, SIW2_TERM_DDP_CATASTROPHIC, h.raw, 18, 60, 0, 0, 0);
	term_roundtrip(test, SIW2_TERM(SIW2_LAYER_LLP, 0, 2), h.raw, 18, 60, 0,
		       0, 0);
	/* No header available. */
	term_roundtrip(test, SIW2_TERM_DDP_U_INVALID_QN, NULL, 0, 60, 0, 0, 0);
	term_roundtrip(test, SIW2_TERM_DDP_U_INVALID_QN, h.raw, 17, 60, 0, 0, 0);

	/* A Read Request's RDMAP header is copied too (R). */
	fill_random(&m, SIW2_RDMAP_OP_READ_REQ, &seed);
	m.last = true;
	siw2_rdmap_build(&h, &m);
	term_roundtrip(test, SIW2_TERM_RDMAP_BASE_BOUNDS, h.raw, 46, 46,
		       md | SIW2_TERM_R, 18, 28);
	term_roundtrip(test, SIW2_TERM_DDP_U_MSN_NOBUF, h.raw, 46, 46,
		       md | SIW2_TERM_R, 18, 28);
	/* ... but not when only part of it arrived ... */
	term_roundtrip(test, SIW2_TERM_DDP_U_MSN_RANGE, h.raw, 40, 46, md, 18,
		       0);
	/* ... nor at a wrong RDMAP version or opcode. */
	term_roundtrip(test, SIW2_TERM_RDMAP_VERSION, h.raw, 46, 46, md, 18, 0);
	term_roundtrip(test, SIW2_TERM_RDMAP_OPCODE, h.raw, 46, 46, md, 18, 0);

	fill_random(&m, SIW2_RDMAP_OP_ATOMIC_REQ, &seed);
	siw2_rdmap_build(&h, &m);
	term_roundtrip(test, SIW2_TERM_RDMAP_INVALID_STAG, h.raw, 70, 70,
		       md | SIW2_TERM_R, 18, 52);
}

static void rdmap_test_terminate_malformed(struct kunit *test)
{
	struct siw2_term_info t;
	u8 body[80] = { 0 };
	u32 ctrl = 0x11020000;	/* DDP, tagged buffer error, code 2 */

	KUNIT_EXPECT_EQ(test, siw2_rdmap_term_parse(ctrl, body, 0, &t), 0);
	KUNIT_EXPECT_EQ(test, t.cause, SIW2_TERM_DDP_T_STAG_NOT_ASSOC);
	/* Unknown layer. */
	KUNIT_EXPECT_EQ(test, siw2_rdmap_term_parse(0x31020000, body, 0, &t),
			-EBADMSG);
	/* R without D. */
	KUNIT_EXPECT_EQ(test, siw2_rdmap_term_parse(ctrl | SIW2_TERM_R, body,
						    80, &t), -EBADMSG);
	/* Announced copies missing. */
	KUNIT_EXPECT_EQ(test, siw2_rdmap_term_parse(ctrl | SIW2_TERM_M, body,
						    1, &t), -EBADMSG);
	body[2] = 0x81;	/* tagged DDP header copy: 14 octets */
	KUNIT_EXPECT_EQ(test, siw2_rdmap_term_parse(ctrl | SIW2_TERM_D, body,
						    15, &t), -EBADMSG);
	KUNIT_EXPECT_EQ(test, siw2_rdmap_term_parse(ctrl | SIW2_TERM_D, body,
						    16, &t), 0);
	KUNIT_EXPECT_EQ(test, (u32)t.ddp_len, 14U);
	/* R for a tagged header: nothing to delimit it. */
	KUNIT_EXPECT_EQ(test, siw2_rdmap_term_parse(ctrl | SIW2_TERM_D |
						    SIW2_TERM_R, body, 80, &t),
			-EBADMSG);
	/* R for a Send: Sends have no RDMAP header. */
	body[2] = 0x41;
	body[3] = 0x43;
	KUNIT_EXPECT_EQ(test, siw2_rdmap_term_parse(ctrl | SIW2_TERM_D |
						    SIW2_TERM_R, body, 80, &t),
			-EBADMSG);
	body[3] = 0x41;	/* Read Request: 28 more octets */
	KUNIT_EXPECT_EQ(test, siw2_rdmap_term_parse(ctrl | SIW2_TERM_D |
						    SIW2_TERM_R, body, 47, &t),
			-EBADMSG);
	KUNIT_EXPECT_EQ(test, siw2_rdmap_term_parse(ctrl | SIW2_TERM_D |
						    SIW2_TERM_R, body, 48, &t),
			0);
	KUNIT_EXPECT_EQ(test, (u32)t.rdmap_len, 28U);
}

/* @bad's Terminate for @cause, through the wire and back, then blamed. */
static bool term_blames(struct kunit *test, u32 cause, const u8 *bad,
			u32 bad_len, struct siw2_term_blame *b)
{
	struct siw2_term_info t, r;
	struct siw2_rdmap_hdr m;
	u8 buf[128];
	u32 len;

	siw2_rdmap_term_prepare(&t, cause, bad, bad_len, bad_len);
	len = siw2_rdmap_term_build(buf, sizeof(buf), &t);
	KUNIT_EXPECT_EQ(test, siw2_rdmap_parse((union siw2_iwarp_hdr *)buf,
					       len, false, &m), 0U);
	KUNIT_EXPECT_EQ(test, siw2_rdmap_term_parse(m.term_ctrl, buf + 22,
						    len - 22, &r), 0);
	return siw2_rdmap_term_blame(&r, b);
}

static void rdmap_test_term_blame(struct kunit *test)
{
	struct siw2_rdmap_hdr m = { .last = true, .msn = 5 };
	struct siw2_term_blame b;
	union siw2_iwarp_hdr h;

	/* A Read Request: named by its sink; protection or operation. */
	m.opcode = SIW2_RDMAP_OP_READ_REQ;
	m.rreq.sink_stag = 0x123456aa;
	m.rreq.sink_to = 0x1122334455667788ULL;
	m.rreq.size = 4096;
	m.rreq.src_stag = 0x777;
	m.rreq.src_to = 0x9000;
	siw2_rdmap_build(&h, &m);
	KUNIT_EXPECT_TRUE(test, term_blames(test, SIW2_TERM_RDMAP_INVALID_STAG,
					    h.raw, 46, &b));
	KUNIT_EXPECT_FALSE(test, b.atomic);
	KUNIT_EXPECT_TRUE(test, b.access);
	KUNIT_EXPECT_EQ(test, b.sink_stag, 0x123456aaU);
	KUNIT_EXPECT_EQ(test, b.sink_to, 0x1122334455667788ULL);
	KUNIT_EXPECT_TRUE(test, term_blames(test, SIW2_TERM_RDMAP_ACCESS,
					    h.raw, 46, &b));
	KUNIT_EXPECT_TRUE(test, b.access);
	KUNIT_EXPECT_TRUE(test, term_blames(test, SIW2_TERM_RDMAP_OP_UNSPEC,
					    h.raw, 46, &b));
	KUNIT_EXPECT_FALSE(test, b.access);
	/* Without the RDMAP copy (only part arrived) it names nothing. */
	KUNIT_EXPECT_FALSE(test, term_blames(test, SIW2_TERM_DDP_U_MSN_RANGE,
					     h.raw, 40, &b));
	/* Nor do catastrophic errors, which copy nothing. */
	KUNIT_EXPECT_FALSE(test, term_blames(test,
					     SIW2_TERM_RDMAP_CATASTROPHIC,
					     h.raw, 46, &b));

	/* An Atomic Request: named by its Request Identifier. */
	memset(&m, 0, sizeof(m));
	m.opcode = SIW2_RDMAP_OP_ATOMIC_REQ;
	m.last = true;
	m.atomic.req_id = 42;
	m.atomic.stag = 0x999;
	siw2_rdmap_build(&h, &m);
	KUNIT_EXPECT_TRUE(test, term_blames(test, SIW2_TERM_RDMAP_BASE_BOUNDS,
					    h.raw, 70, &b));
	KUNIT_EXPECT_TRUE(test, b.atomic);
	KUNIT_EXPECT_TRUE(test, b.access);
	KUNIT_EXPECT_EQ(test, b.req_id, 42U);

	/* A Write is tagged: it completed when sent, nothing to name. */
	memset(&m, 0, sizeof(m));
	m.opcode = SIW2_RDMAP_OP_WRITE;
	m.last = true;
	m.stag = 0x1234;
	siw2_rdmap_build(&h, &m);
	KUNIT_EXPECT_FALSE(test, term_blames(test, SIW2_TERM_DDP_T_BASE_BOUNDS,
					     h.raw, 14, &b));
	/* Nor does a Send. */
	m.opcode = SIW2_RDMAP_OP_SEND;
	siw2_rdmap_build(&h, &m);
	KUNIT_EXPECT_FALSE(test, term_blames(test, SIW2_TERM_DDP_U_MSN_NOBUF,
					     h.raw, 18, &b));
}

static void rdmap_test_ord_fence(struct kunit *test)
{
	struct siw2_rdmap_ord o = { .max = 2 };

	KUNIT_EXPECT_EQ(test, siw2_rdmap_ord_issue(&o, SIW2_RDMAP_OP_READ_REQ, false),
			0);
	KUNIT_EXPECT_EQ(test, siw2_rdmap_ord_issue(&o, SIW2_RDMAP_OP_ATOMIC_REQ,
						   false), 0);
	KUNIT_EXPECT_EQ(test, o.outstanding, 2U);
	/* ORD reached: no third request, other messages still go. */
	KUNIT_EXPECT_EQ(test, siw2_rdmap_may_issue(&o, SIW2_RDMAP_OP_READ_REQ, false),
			SIW2_ISSUE_WAIT_ORD);
	KUNIT_EXPECT_EQ(test, siw2_rdmap_ord_issue(&o, SIW2_RDMAP_OP_READ_REQ, false),
			-EAGAIN);
	KUNIT_EXPECT_EQ(test, siw2_rdmap_may_issue(&o, SIW2_RDMAP_OP_SEND, false),
			SIW2_ISSUE_NOW);
	KUNIT_EXPECT_EQ(test, siw2_rdmap_may_issue(&o, SIW2_RDMAP_OP_WRITE, false),
			SIW2_ISSUE_NOW);
	/* A fenced message waits for every outstanding request. */
	KUNIT_EXPECT_EQ(test, siw2_rdmap_may_issue(&o, SIW2_RDMAP_OP_SEND, true),
			SIW2_ISSUE_WAIT_FENCE);
	KUNIT_EXPECT_EQ(test, siw2_rdmap_ord_issue(&o, SIW2_RDMAP_OP_WRITE, true),
			-EAGAIN);
	KUNIT_EXPECT_EQ(test, siw2_rdmap_ord_complete(&o), 0);
	KUNIT_EXPECT_EQ(test, siw2_rdmap_may_issue(&o, SIW2_RDMAP_OP_SEND, true),
			SIW2_ISSUE_WAIT_FENCE);
	KUNIT_EXPECT_EQ(test, siw2_rdmap_may_issue(&o, SIW2_RDMAP_OP_READ_REQ, false),
			SIW2_ISSUE_NOW);
	KUNIT_EXPECT_EQ(test, siw2_rdmap_ord_complete(&o), 0);
	KUNIT_EXPECT_EQ(test, siw2_rdmap_ord_issue(&o, SIW2_RDMAP_OP_SEND, true), 0);
	KUNIT_EXPECT_EQ(test, o.outstanding, 0U);
	/* A fenced Read Request waits for the earlier ones too. */
	KUNIT_EXPECT_EQ(test, siw2_rdmap_ord_issue(&o, SIW2_RDMAP_OP_READ_REQ, true),
			0);
	KUNIT_EXPECT_EQ(test, siw2_rdmap_ord_issue(&o, SIW2_RDMAP_OP_READ_REQ, true),
			-EAGAIN);
	KUNIT_EXPECT_EQ(test, siw2_rdmap_ord_complete(&o), 0);
	/* An unsolicited response. */
	KUNIT_EXPECT_EQ(test, siw2_rdmap_ord_complete(&o), -EPROTO);
	/* ORD 0: no Read at all. */
	o.max = 0;
	KUNIT_EXPECT_EQ(test, siw2_rdmap_may_issue(&o, SIW2_RDMAP_OP_READ_REQ, false),
			SIW2_ISSUE_WAIT_ORD);
}

static void rdmap_test_ird(struct kunit *test)
{
	struct siw2_rdmap_ird ird = { .max = 2 };

	KUNIT_EXPECT_EQ(test, siw2_rdmap_ird_begin(&ird), 0U);
	KUNIT_EXPECT_EQ(test, siw2_rdmap_ird_begin(&ird), 0U);
	/* One over IRD: queue 1 has no buffer. */
	KUNIT_EXPECT_EQ(test, siw2_rdmap_ird_begin(&ird),
			SIW2_TERM_DDP_U_MSN_NOBUF);
	KUNIT_EXPECT_EQ(test, ird.active, 2U);
	KUNIT_EXPECT_EQ(test, siw2_rdmap_ird_end(&ird), 0);
	KUNIT_EXPECT_EQ(test, siw2_rdmap_ird_begin(&ird), 0U);
	KUNIT_EXPECT_EQ(test, siw2_rdmap_ird_end(&ird), 0);
	KUNIT_EXPECT_EQ(test, siw2_rdmap_ird_end(&ird), 0);
	KUNIT_EXPECT_EQ(test, siw2_rdmap_ird_end(&ird), -EINVAL);
	ird.max = 0;
	KUNIT_EXPECT_EQ(test, siw2_rdmap_ird_begin(&ird),
			SIW2_TERM_DDP_U_MSN_NOBUF);
}

static void rdmap_test_atomic_math(struct kunit *test)
{
	struct siw2_atomic a = { 0 };
	u64 seed = 99, old, x, y;
	unsigned int i;

	siw2_rdmap_atomic_fetch_add(&a, 5);
	KUNIT_EXPECT_EQ(test, siw2_rdmap_atomic_apply(&a, 10), 15ULL);
	KUNIT_EXPECT_EQ(test, siw2_rdmap_atomic_apply(&a, U64_MAX), 4ULL);
	for (i = 0; i < 256; i++) {
		x = rnd(&seed);
		y = rnd(&seed);
		siw2_rdmap_atomic_fetch_add(&a, y);
		KUNIT_EXPECT_EQ(test, siw2_rdmap_atomic_apply(&a, x), x + y);
	}
	/* Two 32-bit fields: no carry from the low into the high one. */
	a.add_swap = 1;
	a.add_swap_mask = BIT_ULL(31);
	KUNIT_EXPECT_EQ(test, siw2_rdmap_atomic_apply(&a, 0x00000005ffffffffULL),
			0x0000000500000000ULL);
	/* Eight 8-bit fields. */
	a.add_swap = 0x0101010101010101ULL;
	a.add_swap_mask = 0x8080808080808080ULL;
	KUNIT_EXPECT_EQ(test, siw2_rdmap_atomic_apply(&a, 0xff00ff00ff00ff00ULL),
			0x0001000100010001ULL);

	siw2_rdmap_atomic_cmp_swap(&a, 7, 9);
	KUNIT_EXPECT_EQ(test, siw2_rdmap_atomic_apply(&a, 7), 9ULL);
	KUNIT_EXPECT_EQ(test, siw2_rdmap_atomic_apply(&a, 8), 8ULL);
	for (i = 0; i < 256; i++) {
		old = rnd(&seed);
		y = rnd(&seed);
		siw2_rdmap_atomic_cmp_swap(&a, old, y);
		KUNIT_EXPECT_EQ(test, siw2_rdmap_atomic_apply(&a, old), y);
		KUNIT_EXPECT_EQ(test, siw2_rdmap_atomic_apply(&a, old ^ 1),
				old ^ 1);
	}
	/* Masked: compare the low half, replace the high half. */
	a.cmp = 0x1234;
	a.cmp_mask = 0xffffffff;
	a.add_swap = 0xaaaaaaaa00000000ULL;
	a.add_swap_mask = 0xffffffff00000000ULL;
	KUNIT_EXPECT_EQ(test, siw2_rdmap_atomic_apply(&a, 0x5555555500001234ULL),
			0xaaaaaaaa00001234ULL);
	KUNIT_EXPECT_EQ(test, siw2_rdmap_atomic_apply(&a, 0x5555555500001235ULL),
			0x5555555500001235ULL);
	/* An empty compare mask always matches. */
	a.cmp_mask = 0;
	KUNIT_EXPECT_EQ(test, siw2_rdmap_atomic_apply(&a, 1), 0xaaaaaaaa00000001ULL);
	/* Swap ignores the compare operands and replaces the masked bits. */
	a.op = SIW2_ATOMIC_SWAP;
	a.cmp_mask = U64_MAX;
	KUNIT_EXPECT_EQ(test, siw2_rdmap_atomic_apply(&a, 0x5555555500001235ULL),
			0xaaaaaaaa00001235ULL);
	/* A reserved subcode changes nothing. */
	a.op = 3;
	KUNIT_EXPECT_EQ(test, siw2_rdmap_atomic_apply(&a, 1), 1ULL);
}

/* RFC 7306 / IANA: 0 FetchAdd, 1 Swap, 2 CmpSwap; the rest are reserved. */
static void rdmap_test_atomic_subcodes(struct kunit *test)
{
	struct siw2_stag_view v = { 0 };
	struct siw2_atomic a = { 0 };

	KUNIT_EXPECT_EQ(test, SIW2_ATOMIC_FETCH_ADD, 0);
	KUNIT_EXPECT_EQ(test, SIW2_ATOMIC_SWAP, 1);
	KUNIT_EXPECT_EQ(test, SIW2_ATOMIC_CMP_SWAP, 2);
	siw2_rdmap_atomic_cmp_swap(&a, 1, 2);
	KUNIT_EXPECT_EQ(test, a.op, (u8)SIW2_ATOMIC_CMP_SWAP);
	a.op = 3;
	a.to = 0x1000;
	KUNIT_EXPECT_EQ(test, siw2_rdmap_atomic_check(&a, &v),
			SIW2_TERM_RDMAP_OP_UNSPEC);
}

static void rdmap_test_atomic_check(struct kunit *test)
{
	struct siw2_stag_view v = {
		.valid = true, .assoc = true, .access = true,
		.base = 0x1000, .len = 0x40,
	};
	struct siw2_atomic a = { .to = 0x1038 };

	siw2_rdmap_atomic_fetch_add(&a, 1);
	KUNIT_EXPECT_EQ(test, siw2_rdmap_atomic_check(&a, &v), 0U);
	a.to = 0x1040;
	KUNIT_EXPECT_EQ(test, siw2_rdmap_atomic_check(&a, &v),
			SIW2_TERM_RDMAP_BASE_BOUNDS);
	a.to = 0x1004;
	KUNIT_EXPECT_EQ(test, siw2_rdmap_atomic_check(&a, &v),
			SIW2_TERM_RDMAP_OP_UNSPEC);
	a.to = 0x1000;
	a.op = 5;
	KUNIT_EXPECT_EQ(test, siw2_rdmap_atomic_check(&a, &v),
			SIW2_TERM_RDMAP_OP_UNSPEC);
	a.op = SIW2_ATOMIC_CMP_SWAP;
	v.access = false;
	KUNIT_EXPECT_EQ(test, siw2_rdmap_atomic_check(&a, &v),
			SIW2_TERM_RDMAP_ACCESS);
	v.valid = false;
	KUNIT_EXPECT_EQ(test, siw2_rdmap_atomic_check(&a, &v),
			SIW2_TERM_RDMAP_INVALID_STAG);
}

/* A segment as siw2_ddp_rx_seg() would describe it. */
static struct siw2_ddp_seg seg_of(u8 opcode, u32 len, bool first, bool last)
{
	struct siw2_ddp_seg seg = {
		.op = siw2_rdmap_op(opcode),
		.len = len,
		.first = first,
	};

	seg.hdr.opcode = opcode;
	seg.hdr.last = last;
	return seg;
}

static u32 read_resp(const struct siw2_rdmap_rx_ctx *ctx, u32 stag, u64 to,
		     u32 len, bool last, enum siw2_rdmap_rx_disp *disp)
{
	struct siw2_ddp_seg seg = seg_of(SIW2_RDMAP_OP_READ_RESP, len, true,
					 last);

	seg.hdr.stag = stag;
	seg.hdr.to = to;
	return siw2_rdmap_rx_begin(ctx, &seg, disp);
}

/* RFC 5040 4.4, 5.2: a Response lands only where the oldest Read asked. */
static void rdmap_test_read_resp_match(struct kunit *test)
{
	struct siw2_rdmap_read rd = {
		.sink_stag = 0x1234, .sink_to = 0x10000, .len = 300,
	};
	struct siw2_rdmap_rx_ctx ctx = { .oldest = &rd };
	enum siw2_rdmap_rx_disp disp;
	bool done;

	/* The right one, in two segments. */
	KUNIT_EXPECT_EQ(test, read_resp(&ctx, 0x1234, 0x10000, 100, false,
					&disp), 0U);
	KUNIT_EXPECT_EQ(test, disp, SIW2_RX_PLACE);
	KUNIT_EXPECT_EQ(test, siw2_rdmap_read_resp_end(&rd, 100, false, &done),
			0U);
	KUNIT_EXPECT_FALSE(test, done);
	/* The second segment must follow the first: not again, not beyond. */
	KUNIT_EXPECT_EQ(test, read_resp(&ctx, 0x1234, 0x10000, 100, true,
					&disp), SIW2_TERM_DDP_T_BASE_BOUNDS);
	KUNIT_EXPECT_EQ(test, read_resp(&ctx, 0x1234, 0x10000 + 101, 100, true,
					&disp), SIW2_TERM_DDP_T_BASE_BOUNDS);
	KUNIT_EXPECT_EQ(test, read_resp(&ctx, 0x1234, 0x10000 + 99, 100, true,
					&disp), SIW2_TERM_DDP_T_BASE_BOUNDS);
	/* Not more than the Read asked for. */
	KUNIT_EXPECT_EQ(test, read_resp(&ctx, 0x1234, 0x10000 + 100, 201, true,
					&disp), SIW2_TERM_DDP_T_BASE_BOUNDS);
	/* Not another sink. */
	KUNIT_EXPECT_EQ(test, read_resp(&ctx, 0x1235, 0x10000 + 100, 200, true,
					&disp), SIW2_TERM_DDP_T_INVALID_STAG);
	KUNIT_EXPECT_EQ(test, read_resp(&ctx, 0x1234, 0x10000 + 100, 200, true,
					&disp), 0U);
	KUNIT_EXPECT_EQ(test, disp, SIW2_RX_PLACE);
	KUNIT_EXPECT_EQ(test, siw2_rdmap_read_resp_end(&rd, 200, true, &done),
			0U);
	KUNIT_EXPECT_TRUE(test, done);

	/* A Last segment short of the length the Read asked for. */
	rd.got = 0;
	KUNIT_EXPECT_EQ(test, read_resp(&ctx, 0x1234, 0x10000, 299, true,
					&disp), 0U);
	KUNIT_EXPECT_EQ(test, siw2_rdmap_read_resp_end(&rd, 299, true, &done),
			SIW2_TERM_DDP_T_BASE_BOUNDS);
	KUNIT_EXPECT_FALSE(test, done);

	/* A zero-length Read is answered by a zero-length Response. */
	rd.got = 0;
	rd.len = 0;
	KUNIT_EXPECT_EQ(test, read_resp(&ctx, 0x1234, 0x10000, 0, true, &disp),
			0U);
	KUNIT_EXPECT_EQ(test, disp, SIW2_RX_SKIP);
	KUNIT_EXPECT_EQ(test, siw2_rdmap_read_resp_end(&rd, 0, true, &done),
			0U);
	KUNIT_EXPECT_TRUE(test, done);

	/* No Read outstanding, or the oldest is an Atomic Request. */
	ctx.oldest = NULL;
	KUNIT_EXPECT_EQ(test, read_resp(&ctx, 0x1234, 0x10000, 0, true, &disp),
			SIW2_TERM_RDMAP_OP_UNSPEC);
	rd.atomic = true;
	ctx.oldest = &rd;
	KUNIT_EXPECT_EQ(test, read_resp(&ctx, 0x1234, 0x10000, 0, true, &disp),
			SIW2_TERM_RDMAP_OP_UNSPEC);

	/* Offsets near the top of the TO space do not wrap into a match. */
	rd = (struct siw2_rdmap_read){ .sink_stag = 7, .sink_to = U64_MAX - 9,
				       .len = 10 };
	KUNIT_EXPECT_EQ(test, read_resp(&ctx, 7, U64_MAX - 9, 10, true, &disp),
			0U);
	KUNIT_EXPECT_EQ(test, read_resp(&ctx, 7, U64_MAX - 9, 11, true, &disp),
			SIW2_TERM_DDP_T_BASE_BOUNDS);
}

/* RFC 7306: an Atomic Response names the oldest request by its identifier. */
static void rdmap_test_atomic_resp_match(struct kunit *test)
{
	struct siw2_rdmap_read rd = { .len = 8, .atomic = true };
	struct siw2_rdmap_rx_ctx ctx = { .oldest = &rd, .oldest_id = 41 };

	KUNIT_EXPECT_EQ(test, siw2_rdmap_atomic_resp_check(&ctx, 41), 0U);
	KUNIT_EXPECT_EQ(test, siw2_rdmap_atomic_resp_check(&ctx, 42),
			SIW2_TERM_RDMAP_OP_UNSPEC);
	rd.atomic = false;
	KUNIT_EXPECT_EQ(test, siw2_rdmap_atomic_resp_check(&ctx, 41),
			SIW2_TERM_RDMAP_OP_UNSPEC);
	ctx.oldest = NULL;
	KUNIT_EXPECT_EQ(test, siw2_rdmap_atomic_resp_check(&ctx, 41),
			SIW2_TERM_RDMAP_OP_UNSPEC);
}

/* RFC 6581 9.2: which frames are the peer-to-peer RTR. */
static void rdmap_test_rtr(struct kunit *test)
{
	static const struct {
		bool await;
		u8 opcode;
		u32 len;	/* payload, or a Read Request's size */
		bool first;
		bool last;
		enum siw2_rdmap_rx_disp want;
	} rows[] = {
		/* A zero-length Send, whole in one segment. */
		{ true, SIW2_RDMAP_OP_SEND, 0, true, true, SIW2_RX_RTR },
		/* With payload, not whole, or not first: a Send. */
		{ true, SIW2_RDMAP_OP_SEND, 1, true, true, SIW2_RX_PLACE },
		{ true, SIW2_RDMAP_OP_SEND, 0, true, false, SIW2_RX_PLACE },
		{ true, SIW2_RDMAP_OP_SEND, 0, false, true, SIW2_RX_PLACE },
		/* Immediate Data is no RTR kind. */
		{ true, SIW2_RDMAP_OP_IMM, 0, true, true, SIW2_RX_PLACE },
		/* A zero-length Read Request; one asking for octets is a Read. */
		{ true, SIW2_RDMAP_OP_READ_REQ, 0, true, true, SIW2_RX_RTR },
		{ true, SIW2_RDMAP_OP_READ_REQ, 1, true, true, SIW2_RX_SKIP },
		/* A zero-length Write places nothing, RTR or not. */
		{ true, SIW2_RDMAP_OP_WRITE, 0, true, true, SIW2_RX_SKIP },
		/* Once a message arrived (or not peer-to-peer), none is. */
		{ false, SIW2_RDMAP_OP_SEND, 0, true, true, SIW2_RX_PLACE },
		{ false, SIW2_RDMAP_OP_READ_REQ, 0, true, true, SIW2_RX_SKIP },
	};
	struct siw2_rdmap_rx_ctx ctx = {};
	enum siw2_rdmap_rx_disp disp;
	struct siw2_ddp_seg seg;
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(rows); i++) {
		ctx.await_rtr = rows[i].await;
		seg = seg_of(rows[i].opcode, 0, rows[i].first, rows[i].last);
		if (rows[i].opcode == SIW2_RDMAP_OP_READ_REQ)
			seg.hdr.rreq.size = rows[i].len;
		else
			seg.len = rows[i].len;
		KUNIT_EXPECT_EQ_MSG(test, siw2_rdmap_rx_begin(&ctx, &seg, &disp),
				    0U, "row %u", i);
		KUNIT_EXPECT_EQ_MSG(test, disp, rows[i].want, "row %u", i);
	}

	/*
	 * The initiator's side: while our Read RTR is out, the next Read
	 * Response answers it, whatever Reads followed; it carries nothing.
	 */
	ctx.await_rtr = false;
	ctx.rtr_read_out = true;
	KUNIT_EXPECT_EQ(test, read_resp(&ctx, 5, 0, 0, true, &disp), 0U);
	KUNIT_EXPECT_EQ(test, disp, SIW2_RX_RTR);
	KUNIT_EXPECT_EQ(test, read_resp(&ctx, 5, 0, 1, true, &disp),
			SIW2_TERM_DDP_T_BASE_BOUNDS);
	KUNIT_EXPECT_EQ(test, read_resp(&ctx, 5, 0, 0, false, &disp),
			SIW2_TERM_DDP_T_BASE_BOUNDS);
}

/* RFC 5040 5.2, RFC 6581 9.1 and 9.2: admission of inbound Requests. */
static void rdmap_test_ird_admit(struct kunit *test)
{
	struct siw2_rdmap_ird ird = { .max = 1 };

	KUNIT_EXPECT_EQ(test, siw2_rdmap_ird_admit(&ird, false, true), 0U);
	KUNIT_EXPECT_EQ(test, ird.active, 1U);
	/* One over IRD. */
	KUNIT_EXPECT_EQ(test, siw2_rdmap_ird_admit(&ird, false, true),
			SIW2_TERM_DDP_U_MSN_NOBUF);
	KUNIT_EXPECT_EQ(test, ird.active, 1U);
	/* The RTR takes no credit, even with IRD used up ... */
	KUNIT_EXPECT_EQ(test, siw2_rdmap_ird_admit(&ird, true, true), 0U);
	KUNIT_EXPECT_EQ(test, ird.active, 1U);
	/* ... but needs a queue entry, as every Request does. */
	KUNIT_EXPECT_EQ(test, siw2_rdmap_ird_admit(&ird, true, false),
			SIW2_TERM_DDP_U_MSN_NOBUF);
	KUNIT_EXPECT_EQ(test, siw2_rdmap_ird_end(&ird), 0);
	/* No room: refused, and no credit kept. */
	KUNIT_EXPECT_EQ(test, siw2_rdmap_ird_admit(&ird, false, false),
			SIW2_TERM_DDP_U_MSN_NOBUF);
	KUNIT_EXPECT_EQ(test, ird.active, 0U);
	/* An IRD of 0 takes the RTR only. */
	ird.max = 0;
	KUNIT_EXPECT_EQ(test, siw2_rdmap_ird_admit(&ird, false, true),
			SIW2_TERM_DDP_U_MSN_NOBUF);
	KUNIT_EXPECT_EQ(test, siw2_rdmap_ird_admit(&ird, true, true), 0U);
	KUNIT_EXPECT_EQ(test, ird.active, 0U);
}

static struct kunit_case rdmap_test_cases[] = {
	KUNIT_CASE(rdmap_test_op_table),
	KUNIT_CASE(rdmap_test_roundtrip),
	KUNIT_CASE(rdmap_test_wire_layout),
	KUNIT_CASE(rdmap_test_ctrl_errors),
	KUNIT_CASE(rdmap_test_range),
	KUNIT_CASE(rdmap_test_check_stag),
	KUNIT_CASE(rdmap_test_check_inval),
	KUNIT_CASE(rdmap_test_terminate),
	KUNIT_CASE(rdmap_test_terminate_malformed),
	KUNIT_CASE(rdmap_test_term_blame),
	KUNIT_CASE(rdmap_test_ord_fence),
	KUNIT_CASE(rdmap_test_ird),
	KUNIT_CASE(rdmap_test_atomic_math),
	KUNIT_CASE(rdmap_test_atomic_check),
	KUNIT_CASE(rdmap_test_atomic_subcodes),
	KUNIT_CASE(rdmap_test_read_resp_match),
	KUNIT_CASE(rdmap_test_atomic_resp_match),
	KUNIT_CASE(rdmap_test_rtr),
	KUNIT_CASE(rdmap_test_ird_admit),
	{}
};

static struct kunit_suite rdmap_test_suite = {
	.name = "siw2_rdmap",
	.test_cases = rdmap_test_cases,
};

kunit_test_suite(rdmap_test_suite);
