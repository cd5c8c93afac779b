// SPDX-License-Identifier: GPL-2.0
/*
 * Writes fuzz_rx's seed corpus into DIR: small inputs (under 4 KiB each)
 * that take every mode of the harness down its successful path, so that
 * the fuzzer starts from valid MPA Request/Reply exchanges and valid FPDU
 * streams of every opcode, Markers and CRCs on and off.
 *
 *   gen_seeds DIR
 *
 * The output depends on nothing but this file, fuzz_rx.h and the protocol
 * code it calls, so `make seeds` reproduces seeds/ octet for octet and
 * `make check` verifies that it does. Streams are framed with the
 * reference encoder of fuzz_rx.h; DDP/RDMAP headers come from the
 * transmit API of ddp.c and rdmap.c, which the KUnit tests pin to the RFC
 * layouts.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <linux/types.h>

#include "mpa.h"
#include "ddp.h"
#include "rdmap.h"
#include "fuzz_rx.h"

#define SEED_MAX 4096

struct seed {
	u8 b[SEED_MAX];
	size_t n;
};

static const char *out_dir;

static void __noreturn die(const char *what)
{
	fprintf(stderr, "gen_seeds: %s\n", what);
	exit(1);
}

static void put(struct seed *s, const void *p, size_t n)
{
	if (s->n + n > sizeof(s->b))
		die("a seed outgrew 4 KiB");
	memcpy(s->b + s->n, p, n);
	s->n += n;
}

static void put8(struct seed *s, u8 v)
{
	put(s, &v, 1);
}

static void put16(struct seed *s, u16 v)
{
	put8(s, v >> 8);
	put8(s, v & 0xff);
}

static void put32(struct seed *s, u32 v)
{
	put16(s, v >> 16);
	put16(s, v & 0xffff);
}

static void put64(struct seed *s, u64 v)
{
	put32(s, v >> 32);
	put32(s, v & 0xffffffff);
}

/* The FZ_HDR_LEN octet header (see fuzz_rx.h). */
static void header(struct seed *s, u8 mode, u8 fl, u8 split, u8 param,
		   u16 seed, u8 flags, u8 b5, u8 b6, u8 pos)
{
	s->n = 0;
	put8(s, mode | fl | split << FZ_SPLIT_SHIFT);
	put8(s, param);
	put16(s, seed);
	put8(s, flags);
	put8(s, b5);
	put8(s, b6);
	put8(s, pos);
}

static void save(const char *name, const struct seed *s)
{
	char path[4096];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", out_dir, name);
	f = fopen(path, "wb");
	if (!f || fwrite(s->b, 1, s->n, f) != s->n || fclose(f))
		die(path);
}

/* RFC 5044 7.1.1 frame, RFC 6581 enhanced data when @v2. */
static void frame(struct seed *s, const char *key, u8 flags, u8 rev, bool v2,
		  u16 ird, u16 ord, const char *pd)
{
	size_t pd_len = strlen(pd);

	put(s, key, SIW2_MPA_KEY_LEN);
	put8(s, flags | (v2 ? SIW2_MPA_FLAG_S : 0));
	put8(s, rev);
	put16(s, pd_len + (v2 ? 4 : 0));
	if (v2) {
		put16(s, ird);
		put16(s, ord);
	}
	put(s, pd, pd_len);
}

/* ---- FPDU streams ---- */

struct stream {
	struct fz_enc enc;
	u32 msn[SIW2_QN_COUNT];
	u32 mulpdu;
};

static void stream_init(struct stream *st, bool markers, bool crc,
			u32 mulpdu)
{
	unsigned int q;

	fz_enc_init(&st->enc, markers, crc, 0);
	for (q = 0; q < SIW2_QN_COUNT; q++)
		st->msn[q] = 1;
	st->mulpdu = mulpdu;
}

static void stream_put(struct seed *s, struct stream *st)
{
	if (st->enc.oom)
		die("out of memory");
	put(s, st->enc.buf, st->enc.len);
	fz_enc_free(&st->enc);
}

static void pattern(u8 *p, u32 n, u8 salt)
{
	u32 i;

	for (i = 0; i < n; i++)
		p[i] = i * 7 + salt;
}

/* One message, segmented by ddp.c, framed by the reference encoder. */
static void send_msg(struct stream *st, struct siw2_rdmap_hdr *m, u32 len)
{
	const struct siw2_rdmap_op_info *op = siw2_rdmap_op(m->opcode);
	u8 payload[2048], ulpdu[SIW2_HDR_MAX + 2048];
	struct siw2_ddp_tx_seg seg;
	struct siw2_ddp_tx tx;

	if (!op || len > sizeof(payload))
		die("bad message");
	pattern(payload, len, m->opcode);
	if (!op->tagged)
		m->msn = st->msn[op->qn]++;
	if (siw2_ddp_tx_init(&tx, m, len))
		die("siw2_ddp_tx_init");
	while (siw2_ddp_tx_next(&tx, st->mulpdu, &seg) == 1) {
		memcpy(ulpdu, seg.hdr, seg.hdr_len);
		memcpy(ulpdu + seg.hdr_len, payload + seg.off, seg.len);
		fz_enc_fpdu(&st->enc, ulpdu, seg.hdr_len + seg.len);
	}
}

static void send_op(struct stream *st, u8 opcode, u32 len)
{
	struct siw2_rdmap_hdr m;

	memset(&m, 0, sizeof(m));
	m.opcode = opcode;
	m.stag = 0x1000 + opcode;
	m.to = 0x10000ULL * opcode;
	m.inval_stag = 0x2000;
	switch (opcode) {
	case SIW2_RDMAP_OP_READ_REQ:
		m.rreq.sink_stag = 0x3000;
		m.rreq.sink_to = 0x4000;
		m.rreq.size = len;
		m.rreq.src_stag = 0x5000;
		m.rreq.src_to = 0x6000;
		len = 0;
		break;
	case SIW2_RDMAP_OP_IMM:
	case SIW2_RDMAP_OP_IMM_SE:
		m.imm = 0x0123456789abcdefULL;
		len = 0;
		break;
	case SIW2_RDMAP_OP_ATOMIC_REQ:
		siw2_rdmap_atomic_fetch_add(&m.atomic, 5);
		m.atomic.req_id = 7;
		m.atomic.stag = 0x7000;
		m.atomic.to = 0x8000;
		len = 0;
		break;
	case SIW2_RDMAP_OP_ATOMIC_RESP:
		m.aresp.req_id = 7;
		m.aresp.orig = 42;
		len = 0;
		break;
	default:
		break;
	}
	send_msg(st, &m, len);
}

/* A Terminate naming a bad Read Request (RFC 5040 4.8), as the last word. */
static void send_term(struct stream *st)
{
	u8 buf[sizeof(struct siw2_hdr_terminate) + SIW2_TERM_BODY_MAX];
	struct siw2_rdmap_hdr bad;
	union siw2_iwarp_hdr h;
	struct siw2_term_info t;
	u32 n;

	memset(&bad, 0, sizeof(bad));
	bad.opcode = SIW2_RDMAP_OP_READ_REQ;
	bad.last = true;
	bad.msn = 9;
	n = siw2_rdmap_build(&h, &bad);
	siw2_rdmap_term_prepare(&t, SIW2_TERM_DDP_U_MSN_RANGE, h.raw, n, n);
	n = siw2_rdmap_term_build(buf, sizeof(buf), &t);
	if (!n)
		die("siw2_rdmap_term_build");
	fz_enc_fpdu(&st->enc, buf, n);
}

/* Every opcode once, a multi-segment Send, and a Terminate to close. */
static void send_all(struct stream *st, bool ext, u32 big)
{
	send_op(st, SIW2_RDMAP_OP_SEND, 16);
	send_op(st, SIW2_RDMAP_OP_WRITE, 40);
	send_op(st, SIW2_RDMAP_OP_READ_REQ, 64);
	send_op(st, SIW2_RDMAP_OP_READ_RESP, 24);
	send_op(st, SIW2_RDMAP_OP_SEND_INV, 8);
	send_op(st, SIW2_RDMAP_OP_SEND_SE, 0);
	send_op(st, SIW2_RDMAP_OP_SEND_SE_INV, 12);
	if (ext) {
		send_op(st, SIW2_RDMAP_OP_IMM, 0);
		send_op(st, SIW2_RDMAP_OP_IMM_SE, 0);
		send_op(st, SIW2_RDMAP_OP_ATOMIC_REQ, 0);
		send_op(st, SIW2_RDMAP_OP_ATOMIC_RESP, 0);
	}
	send_op(st, SIW2_RDMAP_OP_SEND, big);
	send_term(st);
}

static void seed_raw(const char *name, bool markers, bool crc, u8 split,
		     u8 param, u32 big)
{
	struct stream st;
	struct seed s;

	header(&s, FZ_MODE_RAW, FZ_F_EXT | (markers ? FZ_F_MARKERS : 0) |
	       (crc ? FZ_F_CRC : 0), split, param, 0x0eed, 0, 0, 0, 0);
	stream_init(&st, markers, crc, 256);
	send_all(&st, true, big);
	stream_put(&s, &st);
	save(name, &s);
}

/* ---- Connection setup ---- */

static void seed_cm_init_rev1(void)
{
	struct stream st;
	struct seed s;

	/* We want CRCs, no Markers; the peer agrees to CRCs. */
	header(&s, FZ_MODE_CM_INIT, FZ_F_CRC, FZ_SPLIT_RANDOM, 7, 1, 0, 4, 4,
	       0);
	frame(&s, SIW2_MPA_KEY_REP, SIW2_MPA_FLAG_C, SIW2_MPA_REV_1, false, 0,
	      0, "siw2 reply");
	stream_init(&st, false, true, 512);
	send_op(&st, SIW2_RDMAP_OP_READ_RESP, 100);
	send_op(&st, SIW2_RDMAP_OP_SEND, 20);
	stream_put(&s, &st);
	save("cm_init_rev1", &s);
}

static void seed_cm_init_rev2(void)
{
	struct stream st;
	struct seed s;

	/*
	 * Rev 2, peer to peer with Write or Read RTRs, IRD = ORD = 8; the
	 * Reply echoes A, picks the Write RTR and asks for ORD 4.
	 */
	header(&s, FZ_MODE_CM_INIT, FZ_F_MARKERS | FZ_F_CRC | FZ_F_EXT,
	       FZ_SPLIT_FIXED, 5, 2,
	       FZ_CM_REV2 | FZ_CM_P2P |
	       (SIW2_MPA_RTR_WRITE | SIW2_MPA_RTR_READ) << FZ_CM_RTR_SHIFT,
	       8, 8, 0);
	frame(&s, SIW2_MPA_KEY_REP, SIW2_MPA_FLAG_M | SIW2_MPA_FLAG_C,
	      SIW2_MPA_REV_2, true, SIW2_MPA_V2_A | 4, SIW2_MPA_V2_C | 4,
	      "ok");
	stream_init(&st, true, true, 300);
	send_op(&st, SIW2_RDMAP_OP_WRITE, 0);
	send_op(&st, SIW2_RDMAP_OP_SEND, 700);
	send_op(&st, SIW2_RDMAP_OP_ATOMIC_RESP, 0);
	stream_put(&s, &st);
	save("cm_init_rev2_p2p", &s);
}

static void seed_cm_resp(const char *name, u8 fl, u8 flags, bool v2)
{
	bool markers = fl & FZ_F_MARKERS;
	struct stream st;
	struct seed s;

	header(&s, FZ_MODE_CM_RESP, fl, FZ_SPLIT_MIXED, 0, 3, flags, 4, 4, 0);
	if (v2)
		/* Peer to peer, Send or Read RTR, IRD 4, ORD 2. */
		frame(&s, SIW2_MPA_KEY_REQ, SIW2_MPA_FLAG_M | SIW2_MPA_FLAG_C,
		      SIW2_MPA_REV_2, true,
		      SIW2_MPA_V2_A | SIW2_MPA_V2_B | 4, SIW2_MPA_V2_D | 2,
		      "hello, responder");
	else
		frame(&s, SIW2_MPA_KEY_REQ, 0, SIW2_MPA_REV_1, false, 0, 0,
		      "hello");
	if (flags & FZ_CM_REJECT) {
		save(name, &s);
		return;
	}
	/* The RTR first, then ordinary traffic. */
	stream_init(&st, markers, true, 512);
	send_op(&st, v2 ? SIW2_RDMAP_OP_READ_REQ : SIW2_RDMAP_OP_SEND, 0);
	send_op(&st, SIW2_RDMAP_OP_WRITE, 600);
	send_op(&st, SIW2_RDMAP_OP_SEND_SE, 33);
	stream_put(&s, &st);
	save(name, &s);
}

/* ---- Framed ULPDUs, round trips, handshakes ---- */

static void seed_framed(const char *name, u8 fl, u8 flags, u16 seed)
{
	struct siw2_rdmap_hdr m;
	union siw2_iwarp_hdr h;
	u8 body[600];
	struct seed s;
	u32 n;

	header(&s, FZ_MODE_FRAMED, fl, FZ_SPLIT_RANDOM, 40, seed, flags, 0, 0,
	       0x7e);
	/* A Send of 20 octets as one ULPDU. */
	memset(&m, 0, sizeof(m));
	m.opcode = SIW2_RDMAP_OP_SEND;
	m.last = true;
	m.msn = 1;
	n = siw2_rdmap_build(&h, &m);
	put8(&s, n + 20 - 1);
	put(&s, h.raw, n);
	pattern(body, 20, 1);
	put(&s, body, 20);
	/* A Write of 600 octets, long enough for a Marker inside. */
	memset(&m, 0, sizeof(m));
	m.opcode = SIW2_RDMAP_OP_WRITE;
	m.last = true;
	m.stag = 0xabc;
	m.to = 0x1000;
	n = siw2_rdmap_build(&h, &m);
	put8(&s, FZ_REC_LONG);
	put16(&s, n + sizeof(body) - 1);
	put(&s, h.raw, n);
	pattern(body, sizeof(body), 2);
	put(&s, body, sizeof(body));
	save(name, &s);
}

/* Message records (FZ_MSG_*): one per opcode, payload where it has one. */
static void records(struct seed *s, bool ext, u16 big)
{
	static const u8 ops[] = {
		SIW2_RDMAP_OP_SEND, SIW2_RDMAP_OP_WRITE, SIW2_RDMAP_OP_READ_REQ,
		SIW2_RDMAP_OP_READ_RESP, SIW2_RDMAP_OP_SEND_INV, SIW2_RDMAP_OP_SEND_SE,
		SIW2_RDMAP_OP_SEND_SE_INV, SIW2_RDMAP_OP_IMM, SIW2_RDMAP_OP_IMM_SE,
		SIW2_RDMAP_OP_ATOMIC_REQ, SIW2_RDMAP_OP_ATOMIC_RESP,
	};
	const struct siw2_rdmap_op_info *op;
	u8 payload[2048];
	unsigned int i;
	u16 len;

	for (i = 0; i < sizeof(ops); i++) {
		op = siw2_rdmap_op(ops[i]);
		if (op->ext && !ext)
			continue;
		len = op->payload ? 10 + 5 * i : 0;
		put8(s, ops[i] | (i == 1 ? FZ_MSG_EDGE : 0));
		put16(s, len);
		pattern(payload, len, i);
		put(s, payload, len);
		/* A Read Request's size. */
		if (ops[i] == SIW2_RDMAP_OP_READ_REQ)
			put16(s, 4096);
	}
	/* One message bigger than the MULPDU, then a Terminate. */
	put8(s, SIW2_RDMAP_OP_SEND);
	put16(s, big);
	pattern(payload, big, 0x55);
	put(s, payload, big);
	put8(s, SIW2_RDMAP_OP_TERMINATE);
	put16(s, 0);
}

static void seed_roundtrip(const char *name, u8 fl, u8 split, u16 mulpdu,
			   u8 pos)
{
	struct seed s;

	header(&s, FZ_MODE_ROUNDTRIP, fl, split, 3, 5, 0,
	       (mulpdu - 128) >> 8, (mulpdu - 128) & 0xff, pos);
	records(&s, fl & FZ_F_EXT, 1500);
	save(name, &s);
}

static void seed_handshake(const char *name, u8 fl, u8 iflags, u8 rflags,
			   u8 ird, u8 ord)
{
	struct seed s;

	header(&s, FZ_MODE_HANDSHAKE, fl, FZ_SPLIT_RANDOM, 12, 6, iflags,
	       ird, ord, 0);
	put8(&s, rflags);
	put8(&s, ird);
	put8(&s, ord);
	put8(&s, 0x32);
	records(&s, fl & FZ_F_EXT, 900);
	save(name, &s);
}

/* ---- Parsers, DDP spans ---- */

static void seed_parse(void)
{
	struct siw2_rdmap_hdr m;
	union siw2_iwarp_hdr h;
	struct seed s;
	u32 n;

	header(&s, FZ_MODE_PARSE, FZ_F_EXT, 0, 0, 7, 0, 0, 0, 0);
	/* 0: a Read Request header, ext on. */
	memset(&m, 0, sizeof(m));
	m.opcode = SIW2_RDMAP_OP_READ_REQ;
	m.last = true;
	m.msn = 1;
	m.rreq.size = 64;
	n = siw2_rdmap_build(&h, &m);
	put8(&s, 0);
	put8(&s, n + 2 * (SIW2_HDR_MAX + 1));	/* length n, bit 7: ext */
	put(&s, h.raw, n);
	/* 1: control octets of an Atomic Request. */
	put8(&s, 1);
	put8(&s, SIW2_DDP_VERSION | SIW2_DDP_L);
	put8(&s, 0x40 | SIW2_RDMAP_OP_ATOMIC_REQ);
	/* 2: a Terminate body with M and D. */
	put8(&s, 2);
	put32(&s, SIW2_LAYER_DDP << SIW2_TERM_LAYER_SHIFT |
	      SIW2_ETYPE_DDP_UNTAGGED << SIW2_TERM_ETYPE_SHIFT |
	      0x03 << SIW2_TERM_ECODE_SHIFT | SIW2_TERM_M | SIW2_TERM_D);
	put8(&s, 2 + 18);
	put16(&s, 46);
	put(&s, h.raw, 18);
	/* 3: a Terminate prepared for a cause. */
	put8(&s, 3);
	put32(&s, SIW2_TERM_RDMAP_BASE_BOUNDS);
	put32(&s, 46);
	put8(&s, n);
	put(&s, h.raw, n);
	/* 4: books, three pieces out of order, the last one Last. */
	put8(&s, 4);
	put8(&s, 2);
	put8(&s, 0);
	put16(&s, 100);
	put8(&s, 50);
	put8(&s, 0);
	put16(&s, 0);
	put8(&s, 100);
	put8(&s, 1);
	put16(&s, 150);
	put8(&s, 10);
	/* 5: ranges at the top of the 64-bit space. */
	put8(&s, 5);
	put8(&s, 0x0f);
	put64(&s, 3);
	put64(&s, 4);
	put64(&s, 2);
	put64(&s, 8);
	/* 6: a Compare and Swap. */
	put8(&s, 6);
	put8(&s, SIW2_ATOMIC_CMP_SWAP);
	put64(&s, 1);
	put32(&s, 1);
	put32(&s, 2);
	put64(&s, 0x1000);
	put64(&s, 2);
	put64(&s, 1);
	/* 7: a 1000 octet Write cut at a MULPDU of 128. */
	put8(&s, 7);
	put8(&s, SIW2_RDMAP_OP_WRITE);
	put32(&s, 1000);
	put8(&s, 0);
	put16(&s, 128);
	put32(&s, 0x77);
	put64(&s, 0x1000);
	put32(&s, 0);
	/* 8: MULPDU of a 1460 octet EMSS, Markers on. */
	put8(&s, 8);
	put16(&s, 1461);
	put8(&s, 0);
	put32(&s, 0);
	put16(&s, 1000);
	put8(&s, SIW2_MPA_ERR_CRC);
	/* 9: ORD 2, IRD 1: two Reads, a fenced Send waits, answers. */
	put8(&s, 9);
	put8(&s, 2);
	put8(&s, 1);
	put8(&s, 6);
	put8(&s, SIW2_RDMAP_OP_READ_REQ);
	put8(&s, SIW2_RDMAP_OP_READ_REQ);
	put8(&s, 0x10 | SIW2_RDMAP_OP_SEND);
	put8(&s, 0x20);
	put8(&s, 0x40);
	put8(&s, 0x60);
	/* 10: responder parameters, rev 2 with every RTR. */
	put8(&s, 10);
	put8(&s, SIW2_MPA_RESPONDER | 6);
	put8(&s, 2);
	put8(&s, SIW2_MPA_RTR_ALL);
	put16(&s, 4);
	put16(&s, 4);
	save("parse_all", &s);
}

static void seed_ddp(void)
{
	struct siw2_rdmap_hdr m;
	union siw2_iwarp_hdr h;
	u8 body[30];
	struct seed s;
	u32 n;

	header(&s, FZ_MODE_DDP, 0, 0, 0, 8, 0, 0, 0, 0);
	memset(&m, 0, sizeof(m));
	m.opcode = SIW2_RDMAP_OP_SEND;
	m.last = true;
	m.msn = 1;
	n = siw2_rdmap_build(&h, &m);
	pattern(body, sizeof(body), 3);
	/* A 48 octet segment in two spans (0x40: new ULPDU length). */
	put8(&s, 0x40 | 0x20);
	put16(&s, n + sizeof(body));
	put8(&s, 10);
	put(&s, h.raw, 10);
	put8(&s, 0x20);
	put8(&s, n - 10 + sizeof(body));
	put(&s, h.raw + 10, n - 10);
	put(&s, body, sizeof(body));
	/* Its end, then a span that starts in the middle. */
	put8(&s, 2);
	put8(&s, 0x80 | 0x40 | 0x20);
	put16(&s, 5);
	put16(&s, 40);
	put8(&s, 3);
	put(&s, body, 3);
	put8(&s, 2);
	save("ddp_spans", &s);
}

int main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: gen_seeds DIR\n");
		return 2;
	}
	out_dir = argv[1];
	if (mkdir(out_dir, 0755) && errno != EEXIST)
		die(out_dir);

	seed_raw("raw_plain", false, false, FZ_SPLIT_WHOLE, 0, 300);
	seed_raw("raw_crc", false, true, FZ_SPLIT_FIXED, 0, 300);
	seed_raw("raw_markers", true, false, FZ_SPLIT_RANDOM, 63, 700);
	seed_raw("raw_markers_crc", true, true, FZ_SPLIT_MIXED, 0, 700);

	seed_cm_init_rev1();
	seed_cm_init_rev2();
	seed_cm_resp("cm_resp_rev1", FZ_F_CRC, 0, false);
	seed_cm_resp("cm_resp_rev2_p2p", FZ_F_MARKERS | FZ_F_CRC | FZ_F_EXT,
		     FZ_CM_REV2 | SIW2_MPA_RTR_ALL << FZ_CM_RTR_SHIFT, true);
	seed_cm_resp("cm_resp_reject", 0, FZ_CM_REJECT, false);

	seed_framed("framed_plain", FZ_F_EXT, 0, 4);
	seed_framed("framed_markers_crc", FZ_F_MARKERS | FZ_F_CRC, 0, 4);
	seed_framed("framed_corrupt", FZ_F_MARKERS | FZ_F_CRC,
		    FZ_FR_CORRUPT | 0x10, 5);
	seed_framed("framed_bad_fpduptr", FZ_F_MARKERS | FZ_F_CRC,
		    FZ_FR_BADPTR, 4);

	seed_roundtrip("roundtrip_plain", FZ_F_EXT, FZ_SPLIT_WHOLE, 1024, 0);
	seed_roundtrip("roundtrip_markers_crc",
		       FZ_F_MARKERS | FZ_F_CRC | FZ_F_EXT, FZ_SPLIT_MIXED,
		       200, 0x85);

	seed_handshake("handshake_rev1", FZ_F_CRC, 0, FZ_HS_MARKERS, 4, 4);
	seed_handshake("handshake_rev2_p2p", FZ_F_MARKERS | FZ_F_EXT,
		       FZ_CM_REV2 | FZ_CM_P2P |
		       SIW2_MPA_RTR_READ << FZ_CM_RTR_SHIFT,
		       FZ_CM_REV2 | FZ_HS_CRC |
		       (SIW2_MPA_RTR_READ | SIW2_MPA_RTR_SEND) <<
		       FZ_CM_RTR_SHIFT, 2, 0xff);
	seed_handshake("handshake_reject", 0, FZ_CM_REV2,
		       FZ_CM_REV2 | FZ_CM_REJECT |
		       SIW2_MPA_RTR_WRITE << FZ_CM_RTR_SHIFT, 1, 1);
	seed_handshake("handshake_rev_mismatch", FZ_F_CRC, FZ_CM_REV2, 0, 3,
		       3);

	seed_parse();
	seed_ddp();
	return 0;
}
