// SPDX-License-Identifier: GPL-2.0
/*
 * libFuzzer harness for siw2's receive path: MPA connection setup, MPA
 * framing with Markers and CRCs, DDP receive with the rules the engine
 * applies at every header and segment end (the same functions of rdmap.c
 * and ddp.c that rx.c calls: Read and Atomic Responses matched against a
 * made-up outstanding request, the RFC 6581 RTR, IRD admission, sink and
 * receive buffer checks), Terminate parsing, and round trips through the
 * transmit API. The input format is described in fuzz_rx.h.
 *
 * Beside memory errors (ASan) and undefined behaviour (UBSan) the harness
 * aborts when a layer breaks the contract its header promises: a span
 * outside the input or over a Marker, offsets that skip or repeat, an
 * event after an error, a header the layer accepted that its own rules
 * forbid, a round trip that does not return what was sent. Each abort
 * says which promise broke ("fuzz_rx: contract violated at ...").
 *
 * Every chunk of the stream is copied into a buffer of exactly its size,
 * so that ASan sees a read past the octets a layer was given.
 *
 * Built with -DFZ_TRACE (EXTRA_CFLAGS), it prints how far each input got,
 * which shows whether seeds take the paths they were made for.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <linux/types.h>
#include <linux/errno.h>

#include "mpa.h"
#include "ddp.h"
#include "rdmap.h"
#include "fuzz_rx.h"

int LLVMFuzzerTestOneInput(const u8 *data, size_t size);

#define FZ_MAX_CHUNKS	2048	/* then the rest goes in one chunk */
#define FZ_MAX_MSGS	16
#define FZ_MAX_FPDUS	64
#define FZ_RT_MAX	(96 * 1024)	/* payload octets of one round trip */
#define FZ_FRAMED_MAX	(128 * 1024)	/* ULPDU octets in FZ_MODE_FRAMED */
#define FZ_MAX_SEGS	256		/* segments of one parse_segment() */
#define FZ_U64_MAX	((u64)~0ULL)
#define FZ_NONE		SIW2_MPA_IRD_ORD_NONE
#define FZ_NO_RTR	0xff
#define FZ_ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

static void __noreturn __printf(3, 4)
fz_fail(const char *file, int line, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "fuzz_rx: contract violated at %s:%d: ", file, line);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	abort();
}

#ifdef FZ_TRACE
#define TRACE(...) fprintf(stderr, "fuzz_rx: " __VA_ARGS__)
#else
#define TRACE(...) do { } while (0)
#endif

#define FAIL(...) fz_fail(__FILE__, __LINE__, __VA_ARGS__)
#define CHECK(c) do { if (!(c)) FAIL("%s", #c); } while (0)

static void *xmalloc(size_t n)
{
	void *p = malloc(n ? n : 1);

	if (!p)
		abort();
	return p;
}

static u8 *dup_bytes(const u8 *p, size_t n)
{
	u8 *d = xmalloc(n);

	if (n)
		memcpy(d, p, n);
	return d;
}

/* ---- Input and generator ---- */

struct cur {
	const u8 *p;
	size_t n;
};

static u8 take8(struct cur *c)
{
	if (!c->n)
		return 0;
	c->n--;
	return *c->p++;
}

static u16 take16(struct cur *c)
{
	u16 v = take8(c) << 8;

	return v | take8(c);
}

static u32 take32(struct cur *c)
{
	u32 v = (u32)take16(c) << 16;

	return v | take16(c);
}

static u64 take64(struct cur *c)
{
	u64 v = (u64)take32(c) << 32;

	return v | take32(c);
}

/* Up to *@n octets; *@n gets how many there were. */
static const u8 *take(struct cur *c, size_t *n)
{
	const u8 *p = c->p;

	if (*n > c->n)
		*n = c->n;
	if (*n) {
		c->p += *n;
		c->n -= *n;
	}
	return p;
}

struct prng {
	u64 s;
};

/* splitmix64 */
static u64 rnd64(struct prng *r)
{
	u64 z = (r->s += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

static u32 rnd32(struct prng *r)
{
	return rnd64(r) >> 32;
}

static u32 rnd_below(struct prng *r, u32 n)
{
	return n ? rnd32(r) % n : 0;
}

/* True once in @n. */
static bool one_in(struct prng *r, u32 n)
{
	return !rnd_below(r, n);
}

static void rnd_fill(struct prng *r, u8 *p, size_t n)
{
	while (n--)
		*p++ = rnd32(r);
}

/* @n octets of @src (or of the generator if @len is 0), over and over. */
static void fill_cyclic(u8 *dst, u32 n, const u8 *src, size_t len,
			struct prng *r)
{
	u32 have;

	if (!n)
		return;
	if (!len) {
		have = n < 61 ? n : 61;
		rnd_fill(r, dst, have);
	} else {
		have = n < len ? n : len;
		memcpy(dst, src, have);
	}
	while (have < n) {
		u32 k = have < n - have ? have : n - have;

		memcpy(dst + have, dst, k);
		have += k;
	}
}

struct opts {
	u8 mode;
	bool markers;
	bool crc;
	bool ext;
	u8 split;
	u8 split_param;
	u8 flags;
	u8 b5;
	u8 b6;
	u8 picky;
	u32 pos0;
};

struct splitter {
	const struct opts *o;
	struct prng *r;
	u32 chunks;
};

static size_t split_next(struct splitter *s, size_t left)
{
	size_t n;

	if (++s->chunks > FZ_MAX_CHUNKS)
		return left;
	switch (s->o->split) {
	case FZ_SPLIT_WHOLE:
		n = left;
		break;
	case FZ_SPLIT_FIXED:
		n = s->o->split_param + 1;
		break;
	case FZ_SPLIT_RANDOM:
		n = 1 + rnd_below(s->r, s->o->split_param + 1);
		break;
	default:
		n = one_in(s->r, 2) ? 1 + rnd_below(s->r, 8) :
				      1 + rnd_below(s->r, 4096);
		break;
	}
	return n < left ? n : left;
}

/* ---- Independent models ---- */

/* Sorted, disjoint, non-touching [s, e) ranges: a model of the books. */
#define RSET_MAX 16

struct rset {
	u32 n;
	bool seen;	/* any segment, even one without payload */
	bool last_seen;
	u32 total;
	u64 s[RSET_MAX];
	u64 e[RSET_MAX];
};

static void rset_add(struct rset *set, u64 s, u64 e)
{
	u64 ns[RSET_MAX + 1], ne[RSET_MAX + 1];
	u32 i, j, n = 0;
	bool put = false;

	for (i = 0; i <= set->n; i++) {
		u64 cs, ce;

		if (i < set->n && (put || set->s[i] <= s)) {
			cs = set->s[i];
			ce = set->e[i];
		} else if (!put) {
			cs = s;
			ce = e;
			put = true;
			i--;
		} else {
			break;
		}
		if (n && cs <= ne[n - 1]) {
			if (ce > ne[n - 1])
				ne[n - 1] = ce;
			continue;
		}
		ns[n] = cs;
		ne[n] = ce;
		n++;
	}
	CHECK(n <= RSET_MAX);
	for (j = 0; j < n; j++) {
		set->s[j] = ns[j];
		set->e[j] = ne[j];
	}
	set->n = n;
}

static bool rset_empty(const struct rset *set)
{
	return !set->seen;
}

static bool rset_done(const struct rset *set)
{
	if (!set->last_seen)
		return false;
	if (!set->total)
		return !set->n;
	return set->n == 1 && set->s[0] == 0 && set->e[0] == set->total;
}

/* RFC 5041 4.1, 5.2, 5.3 rules of the books, on the model. */
static u32 rset_check(const struct rset *set, u32 mo, u32 len, bool last)
{
	u64 end = (u64)mo + len;
	struct rset t;

	if (end > 0xffffffffULL)
		return SIW2_TERM_DDP_U_TOO_LONG;
	if (set->last_seen && (end > set->total || (last && end != set->total)))
		return SIW2_TERM_DDP_U_INVALID_MO;
	if (last && set->n && set->e[set->n - 1] > end)
		return SIW2_TERM_DDP_U_INVALID_MO;
	if (!len)
		return 0;
	if (set->n < SIW2_DDP_REASM_RANGES)
		return 0;
	t = *set;
	rset_add(&t, mo, end);
	return t.n > SIW2_DDP_REASM_RANGES ? SIW2_TERM_DDP_CATASTROPHIC : 0;
}

static void rset_apply(struct rset *set, u32 mo, u32 len, bool last)
{
	set->seen = true;
	if (last) {
		set->last_seen = true;
		set->total = mo + len;
	}
	if (len)
		rset_add(set, mo, (u64)mo + len);
}

static bool in_range(u64 to, u64 len, u64 base, u64 size)
{
	return to >= base && (__uint128_t)to + len <= (__uint128_t)base + size;
}

static bool wraps(u64 to, u64 len)
{
	return len && (__uint128_t)to + len - 1 > FZ_U64_MAX;
}

static u32 model_tagged(const struct siw2_stag_view *v, u64 to, u32 len)
{
	if (!len)
		return 0;
	if (!v->valid)
		return SIW2_TERM_DDP_T_INVALID_STAG;
	if (!v->assoc)
		return SIW2_TERM_DDP_T_STAG_NOT_ASSOC;
	if (!v->access)
		return SIW2_TERM_RDMAP_ACCESS;
	if (wraps(to, len))
		return SIW2_TERM_DDP_T_TO_WRAP;
	if (!in_range(to, len, v->base, v->len))
		return SIW2_TERM_DDP_T_BASE_BOUNDS;
	return 0;
}

static u32 model_stag(const struct siw2_stag_view *v, u64 to, u64 len)
{
	if (!len)
		return 0;
	if (!v->valid)
		return SIW2_TERM_RDMAP_INVALID_STAG;
	if (!v->assoc)
		return SIW2_TERM_RDMAP_STAG_NOT_ASSOC;
	if (!v->access)
		return SIW2_TERM_RDMAP_ACCESS;
	if (wraps(to, len))
		return SIW2_TERM_RDMAP_TO_WRAP;
	if (!in_range(to, len, v->base, v->len))
		return SIW2_TERM_RDMAP_BASE_BOUNDS;
	return 0;
}

static u32 model_untagged(u32 mo, u32 len, bool have, u64 buf_len)
{
	if (!have)
		return SIW2_TERM_DDP_U_MSN_NOBUF;
	if (!len)
		return 0;
	if (mo >= buf_len)
		return SIW2_TERM_DDP_U_INVALID_MO;
	if ((u64)mo + len > buf_len)
		return SIW2_TERM_DDP_U_TOO_LONG;
	return 0;
}

static u32 model_inval(const struct siw2_inval_view *v)
{
	if (!v->exists || (v->same_pd && !v->invalidatable))
		return SIW2_TERM_RDMAP_OP_CANNOT_INV;
	if (!v->same_pd)
		return SIW2_TERM_RDMAP_PROT_CANNOT_INV;
	return 0;
}

/*
 * RFC 7306 masked Fetch and Add, bit by bit: a ripple carry that a set
 * bit of @bounds stops from leaving its field.
 */
static u64 model_fetch_add(u64 old, u64 add, u64 bounds)
{
	u64 res = 0;
	unsigned int c = 0, i, a, b;

	for (i = 0; i < 64; i++) {
		a = old >> i & 1;
		b = add >> i & 1;
		res |= (u64)(a ^ b ^ c) << i;
		c = (a & b) | (a & c) | (b & c);
		if (bounds >> i & 1)
			c = 0;
	}
	return res;
}

static u64 model_atomic(const struct siw2_atomic *a, u64 old)
{
	if (a->op == SIW2_ATOMIC_FETCH_ADD)
		return model_fetch_add(old, a->add_swap, a->add_swap_mask);
	if (a->op == SIW2_ATOMIC_SWAP)
		return (old & ~a->add_swap_mask) |
		       (a->add_swap & a->add_swap_mask);
	if (a->op != SIW2_ATOMIC_CMP_SWAP || (old ^ a->cmp) & a->cmp_mask)
		return old;
	return (old & ~a->add_swap_mask) | (a->add_swap & a->add_swap_mask);
}

static void put_be16(u8 *p, u16 v)
{
	p[0] = v >> 8;
	p[1] = v & 0xff;
}

static void put_be32(u8 *p, u32 v)
{
	put_be16(p, v >> 16);
	put_be16(p + 2, v & 0xffff);
}

static void put_be64(u8 *p, u64 v)
{
	put_be32(p, v >> 32);
	put_be32(p + 4, v & 0xffffffff);
}

static u16 get_be16(const u8 *p)
{
	return (u16)p[0] << 8 | p[1];
}

/*
 * RFC 5041 4.2, 4.3 and RFC 5040 4, 4.4, RFC 7306 layouts, written out
 * field by field: the reference for siw2_rdmap_build().
 */
static u32 model_hdr(u8 *o, const struct siw2_rdmap_hdr *m)
{
	const struct siw2_rdmap_op_info *op = siw2_rdmap_op(m->opcode);

	if (!op)
		return 0;
	memset(o, 0, op->hdr_len);
	o[0] = 0x01 | (op->tagged ? 0x80 : 0) | (m->last ? 0x40 : 0);
	o[1] = 0x40 | m->opcode;
	if (op->tagged) {
		put_be32(o + 2, m->stag);
		put_be64(o + 6, m->to);
		return 14;
	}
	if (op->inval)
		put_be32(o + 2, m->inval_stag);
	put_be32(o + 6, op->qn);
	put_be32(o + 10, m->msn);
	put_be32(o + 14, m->mo);
	switch (m->opcode) {
	case SIW2_RDMAP_OP_READ_REQ:
		put_be32(o + 18, m->rreq.sink_stag);
		put_be64(o + 22, m->rreq.sink_to);
		put_be32(o + 30, m->rreq.size);
		put_be32(o + 34, m->rreq.src_stag);
		put_be64(o + 38, m->rreq.src_to);
		return 46;
	case SIW2_RDMAP_OP_TERMINATE:
		put_be32(o + 18, m->term_ctrl);
		return 22;
	case SIW2_RDMAP_OP_IMM:
	case SIW2_RDMAP_OP_IMM_SE:
		put_be64(o + 18, m->imm);
		return 26;
	case SIW2_RDMAP_OP_ATOMIC_REQ:
		put_be32(o + 18, m->atomic.op & SIW2_ATOMIC_OP);
		put_be32(o + 22, m->atomic.req_id);
		put_be32(o + 26, m->atomic.stag);
		put_be64(o + 30, m->atomic.to);
		put_be64(o + 38, m->atomic.add_swap);
		put_be64(o + 46, m->atomic.add_swap_mask);
		put_be64(o + 54, m->atomic.cmp);
		put_be64(o + 62, m->atomic.cmp_mask);
		return 70;
	case SIW2_RDMAP_OP_ATOMIC_RESP:
		put_be32(o + 18, m->aresp.req_id);
		put_be64(o + 22, m->aresp.orig);
		return 30;
	default:
		return 18;
	}
}

/* Do two parsed headers say the same, for the fields their opcode has? */
static bool hdr_same(const struct siw2_rdmap_hdr *a,
		     const struct siw2_rdmap_hdr *b)
{
	const struct siw2_rdmap_op_info *op = siw2_rdmap_op(a->opcode);

	if (!op || a->opcode != b->opcode || a->last != b->last)
		return false;
	if (op->tagged)
		return a->stag == b->stag && a->to == b->to;
	if (a->qn != b->qn || a->msn != b->msn || a->mo != b->mo ||
	    a->inval_stag != b->inval_stag)
		return false;
	switch (op->cls) {
	case SIW2_CLASS_READ_REQ:
		return a->rreq.sink_stag == b->rreq.sink_stag &&
		       a->rreq.sink_to == b->rreq.sink_to &&
		       a->rreq.size == b->rreq.size &&
		       a->rreq.src_stag == b->rreq.src_stag &&
		       a->rreq.src_to == b->rreq.src_to;
	case SIW2_CLASS_TERMINATE:
		return a->term_ctrl == b->term_ctrl;
	case SIW2_CLASS_IMM:
		return a->imm == b->imm;
	case SIW2_CLASS_ATOMIC_REQ:
		return a->atomic.op == b->atomic.op &&
		       a->atomic.req_id == b->atomic.req_id &&
		       a->atomic.stag == b->atomic.stag &&
		       a->atomic.to == b->atomic.to &&
		       a->atomic.add_swap == b->atomic.add_swap &&
		       a->atomic.add_swap_mask == b->atomic.add_swap_mask &&
		       a->atomic.cmp == b->atomic.cmp &&
		       a->atomic.cmp_mask == b->atomic.cmp_mask;
	case SIW2_CLASS_ATOMIC_RESP:
		return a->aresp.req_id == b->aresp.req_id &&
		       a->aresp.orig == b->aresp.orig;
	default:
		return true;
	}
}

/* ---- Terminate ---- */

static u32 cause_wire(u32 cause)
{
	return SIW2_TERM(SIW2_TERM_CAUSE_LAYER(cause),
			 SIW2_TERM_CAUSE_ETYPE(cause),
			 SIW2_TERM_CAUSE_ECODE(cause));
}

static void term_sane(const struct siw2_term_info *t)
{
	CHECK(t->cause & SIW2_TERM_SET);
	CHECK(!(t->hdrctl & ~(SIW2_TERM_M | SIW2_TERM_D | SIW2_TERM_R)));
	CHECK(t->ddp_len == 0 || t->ddp_len == 14 || t->ddp_len == 18);
	CHECK(t->rdmap_len == 0 || t->rdmap_len == 28 || t->rdmap_len == 52);
	CHECK(!t->ddp_len == !(t->hdrctl & SIW2_TERM_D));
	CHECK(!t->rdmap_len == !(t->hdrctl & SIW2_TERM_R));
	CHECK(!t->rdmap_len || t->ddp_len == 18);
}

/* Build, parse back, compare: what a peer would read of our Terminate. */
static void term_roundtrip(const struct siw2_term_info *t)
{
	const u32 hl = sizeof(struct siw2_hdr_terminate);
	u8 buf[sizeof(struct siw2_hdr_terminate) + SIW2_TERM_BODY_MAX];
	u8 small[sizeof(buf)];
	struct siw2_term_info back;
	union siw2_iwarp_hdr h;
	struct siw2_rdmap_hdr m;
	u32 n;
	int ret;

	term_sane(t);
	n = siw2_rdmap_term_build(buf, sizeof(buf), t);
	CHECK(n >= hl && n <= sizeof(buf));
	CHECK(siw2_rdmap_term_build(small, n - 1, t) == 0);
	memcpy(&h, buf, hl);
	CHECK(siw2_rdmap_parse(&h, hl, false, &m) == 0);
	CHECK(m.opcode == SIW2_RDMAP_OP_TERMINATE && m.last);
	CHECK(m.qn == SIW2_QN_TERMINATE && m.msn == 1 && m.mo == 0);
	ret = siw2_rdmap_term_parse(m.term_ctrl, buf + hl, n - hl, &back);
	CHECK(back.cause == cause_wire(t->cause));
	if (SIW2_TERM_CAUSE_LAYER(t->cause) > SIW2_LAYER_LLP) {
		CHECK(ret == -EBADMSG);
		return;
	}
	CHECK(ret == 0);
	CHECK(back.hdrctl == t->hdrctl);
	CHECK(back.ddp_len == t->ddp_len && back.rdmap_len == t->rdmap_len);
	CHECK(!(t->hdrctl & SIW2_TERM_M) || back.seg_len == t->seg_len);
	CHECK(!memcmp(back.ddp_hdr, t->ddp_hdr, t->ddp_len));
	CHECK(!memcmp(back.rdmap_hdr, t->rdmap_hdr, t->rdmap_len));
}

static bool term_same(const struct siw2_term_info *a,
		      const struct siw2_term_info *b)
{
	return cause_wire(a->cause) == cause_wire(b->cause) &&
	       a->hdrctl == b->hdrctl && a->ddp_len == b->ddp_len &&
	       a->rdmap_len == b->rdmap_len &&
	       (!(a->hdrctl & SIW2_TERM_M) || a->seg_len == b->seg_len) &&
	       !memcmp(a->ddp_hdr, b->ddp_hdr, a->ddp_len) &&
	       !memcmp(a->rdmap_hdr, b->rdmap_hdr, a->rdmap_len);
}

/* ---- The receive engine ---- */

/* One DDP segment as the round trip sent it. */
struct xseg {
	struct siw2_rdmap_hdr h;	/* as siw2_rdmap_parse() must read it */
	const u8 *payload;		/* the segment's payload */
	u32 len;
	u32 msg_len;
	u64 to0;			/* tagged: the message's first TO */
	bool term;
	struct siw2_term_info ti;
};

struct xulpdu {
	u8 *p;
	u32 len;
};

struct eng {
	struct prng *r;
	bool ext;
	bool markers;
	bool crc;
	u32 pos0;
	u64 off;		/* FPDU stream octets consumed */
	struct siw2_mpa_rx mrx;
	struct siw2_ddp_rx drx;

	/* What MPA said so far. */
	bool in_fpdu;
	u32 ulen;
	u32 next_off;
	bool mpa_dead;
	enum siw2_mpa_err mpa_err;
	u32 ends;

	/* What DDP said so far. */
	bool ddp_dead;
	bool have_hdr;
	struct siw2_ddp_seg seg;
	u32 pay_next;
	u32 segs;
	u32 msn[SIW2_QN_COUNT];
	struct rset books[SIW2_QN_COUNT];

	/* The engine's own resources; picky: how often they do not fit. */
	u8 picky;
	struct siw2_rdmap_ird ird;
	struct siw2_rdmap_ord ord;
	/* Its view of its requests, as struct siw2_rdmap_rx_ctx has it. */
	bool await_rtr;		/* a p2p responder: the RTR may come first */
	bool rtr_read_out;	/* a p2p initiator: our Read RTR is out */
	bool msg_seen;		/* a message arrived complete */
	struct siw2_rdmap_read rd;	/* our oldest request, made up ... */
	bool rd_live;		/* ... when a response first needed one */
	u32 rd_id;		/* its Request Identifier */
	enum siw2_rdmap_rx_disp disp;	/* of the segment being received */

	/* Expectations: ULPDU contents, and for round trips every segment. */
	const struct xulpdu *xu;
	u32 nxu;
	const struct xseg *xs;
	u32 nxs;
	bool clean;		/* no error may happen */

	/* A responder that waits for its first FPDU (RFC 5044 7.1.2 rule 4). */
	struct siw2_mpa_cm *cm;
	bool cm_est;
};

static void eng_init(struct eng *e, const struct opts *o, struct prng *r,
		     bool markers, bool crc, u32 pos0)
{
	unsigned int q;

	memset(e, 0, sizeof(*e));
	e->r = r;
	e->picky = o->picky;
	e->ext = o->ext;
	e->markers = markers;
	e->crc = crc;
	e->pos0 = pos0;
	siw2_mpa_rx_init(&e->mrx, markers, crc);
	e->mrx.pos = pos0;
	siw2_ddp_rx_init(&e->drx, o->ext);
	for (q = 0; q < SIW2_QN_COUNT; q++)
		e->msn[q] = 1;
	e->ird.max = 1 + rnd_below(r, 4);
	e->ord.max = 8;
	e->ord.outstanding = rnd_below(r, 4);
}

static const struct xseg *eng_xseg(const struct eng *e)
{
	if (!e->xs)
		return NULL;
	CHECK(e->segs < e->nxs);
	return &e->xs[e->segs];
}

static struct siw2_stag_view view_ok(u64 base, u64 len)
{
	struct siw2_stag_view v = { true, true, true, base, len };

	return v;
}

/*
 * Does the engine's next object not fit what the peer asks? Never when
 * picky is 0 (streams go on to their end), once in 64, 8 or 2 checks
 * otherwise.
 */
static bool eng_odd(struct eng *e)
{
	static const u32 odds[4] = { 0, 64, 8, 2 };

	return e->picky && one_in(e->r, odds[e->picky & 3]);
}

/* What the engine found when it looked an STag up. */
static struct siw2_stag_view eng_view(struct eng *e, u64 to, u64 len)
{
	struct prng *r = e->r;
	struct siw2_stag_view v;
	u64 k;

	if (!eng_odd(e)) {
		/* A region around the range, where there is room for one. */
		k = rnd_below(r, 64);
		v = view_ok(to - k, len + k + rnd_below(r, 64));
		if (wraps(to, len) || !in_range(to, len, v.base, v.len))
			v = view_ok(to, len);
		return v;
	}
	v.valid = !one_in(r, 4);
	v.assoc = !one_in(r, 4);
	v.access = !one_in(r, 4);
	switch (rnd_below(r, 6)) {
	case 0:
		v.base = to;
		v.len = len;
		break;
	case 1:
		k = rnd_below(r, 64);
		v.base = to - k;
		v.len = len + k + rnd_below(r, 64) - 32;
		break;
	case 2:
		v.base = to;
		v.len = len ? len - 1 : 0;
		break;
	case 3:
		v.base = to + 1;
		v.len = len;
		break;
	case 4:
		v.base = rnd64(r);
		v.len = rnd64(r);
		break;
	default:
		v.base = FZ_U64_MAX - rnd_below(r, 16);
		v.len = rnd_below(r, 64);
		break;
	}
	return v;
}

/*
 * Our oldest outstanding Read or Atomic Request, made up when a response
 * first needs one: the request the peer answers (in a round trip, the
 * message that was sent), where picky sometimes none, or one of another
 * kind, sink, offset, length or identifier. It stays until answered, so
 * a Response's later segments are matched against what the first left.
 */
static const struct siw2_rdmap_read *eng_oldest(struct eng *e,
						const struct siw2_ddp_seg *seg)
{
	const struct siw2_rdmap_hdr *h = &seg->hdr;
	const struct xseg *x = eng_xseg(e);
	struct siw2_rdmap_read *rd = &e->rd;
	bool odd = !x && eng_odd(e);

	if (e->rd_live)
		return rd;
	if (odd && one_in(e->r, 4))
		return NULL;
	memset(rd, 0, sizeof(*rd));
	rd->atomic = seg->op->cls == SIW2_CLASS_ATOMIC_RESP;
	if (rd->atomic) {
		rd->len = 8;
		e->rd_id = h->aresp.req_id;
	} else {
		rd->sink_stag = h->stag;
		rd->sink_to = x ? x->to0 : h->to;
		rd->len = x ? x->msg_len : seg->len +
			  (h->last ? 0 : rnd_below(e->r, 8192));
		e->rd_id = (u32)rnd64(e->r);
	}
	if (odd) {
		switch (rnd_below(e->r, 5)) {
		case 0:
			rd->atomic = !rd->atomic;
			break;
		case 1:
			rd->sink_stag ^= 1U << rnd_below(e->r, 32);
			break;
		case 2:
			rd->sink_to += (u64)rnd_below(e->r, 64) - 32;
			break;
		case 3:
			rd->len = rnd_below(e->r, rd->len + 1);
			break;
		default:
			e->rd_id ^= 1U << rnd_below(e->r, 32);
			break;
		}
	}
	if (!e->ord.outstanding)
		CHECK(siw2_rdmap_ord_issue(&e->ord, SIW2_RDMAP_OP_READ_REQ,
					   false) == 0);
	e->rd_live = true;
	return rd;
}

/* The request was answered: its ORD credit is free. */
static void eng_answered(struct eng *e)
{
	u32 was = e->ord.outstanding;

	CHECK(siw2_rdmap_ord_complete(&e->ord) == 0 &&
	      e->ord.outstanding == was - 1);
	e->rd_live = false;
}

/* The engine's view of its requests; @oldest: a response needs it. */
static struct siw2_rdmap_rx_ctx eng_ctx(struct eng *e,
					const struct siw2_ddp_seg *seg,
					bool oldest)
{
	struct siw2_rdmap_rx_ctx ctx = {
		.await_rtr = e->await_rtr && !e->msg_seen,
		.rtr_read_out = e->rtr_read_out,
	};

	if (oldest) {
		ctx.oldest = eng_oldest(e, seg);
		ctx.oldest_id = e->rd_id;
	}
	return ctx;
}

/*
 * A header arrived: RDMAP's rules (siw2_rdmap_rx_begin(), as rx.c calls
 * it), then the checks of the sink the engine found, with objects made up
 * from the generator; in a round trip, with objects that fit what was
 * sent.
 */
static u32 eng_begin(struct eng *e, const struct siw2_ddp_seg *seg)
{
	const struct siw2_rdmap_hdr *h = &seg->hdr;
	const struct xseg *x = eng_xseg(e);
	struct siw2_rdmap_rx_ctx ctx;
	struct siw2_stag_view v;
	struct siw2_inval_view iv;
	u64 buf_len;
	bool have;
	u32 cause;

	ctx = eng_ctx(e, seg, seg->op->cls == SIW2_CLASS_READ_RESP);
	cause = siw2_rdmap_rx_begin(&ctx, seg, &e->disp);
	if (!cause && seg->op->cls == SIW2_CLASS_READ_RESP &&
	    e->disp != SIW2_RX_RTR) {
		/* What a Response may place lies in the Read's sink. */
		CHECK(ctx.oldest && h->stag == ctx.oldest->sink_stag &&
		      in_range(h->to, seg->len, ctx.oldest->sink_to,
			       ctx.oldest->len));
	}
	if (cause || e->disp != SIW2_RX_PLACE)
		goto out;
	switch (seg->op->cls) {
	case SIW2_CLASS_WRITE:
		v = x ? view_ok(x->to0, x->msg_len) : eng_view(e, h->to, seg->len);
		cause = siw2_ddp_check_tagged(&v, h->to, seg->len);
		CHECK(cause == model_tagged(&v, h->to, seg->len));
		break;
	case SIW2_CLASS_SEND:
	case SIW2_CLASS_IMM:
		have = true;
		buf_len = x ? x->msg_len : (u64)h->mo + seg->len +
					    rnd_below(e->r, 64);
		if (!x && eng_odd(e)) {
			have = !one_in(e->r, 4);
			buf_len = one_in(e->r, 2) ?
				(u64)h->mo + seg->len + rnd_below(e->r, 8) - 4 :
				rnd64(e->r) >> rnd_below(e->r, 64);
		}
		cause = siw2_ddp_rx_check_untagged(&e->drx, have, buf_len);
		CHECK(cause == model_untagged(h->mo, seg->len, have, buf_len));
		if (cause || !seg->op->inval)
			break;
		iv.exists = true;
		iv.same_pd = true;
		iv.invalidatable = true;
		if (!x && eng_odd(e)) {
			iv.exists = !one_in(e->r, 2);
			iv.same_pd = !one_in(e->r, 2);
			iv.invalidatable = !one_in(e->r, 2);
		}
		cause = siw2_rdmap_check_inval(&iv);
		CHECK(cause == model_inval(&iv));
		break;
	default:
		/* A Read Response's sink is the one our Read named. */
		break;
	}
out:
	if (x)
		CHECK(!cause);
	return cause;
}

/*
 * An inbound Read or Atomic Request is taken on (siw2_rdmap_ird_admit(),
 * the RTR without a credit) and, here, answered at once.
 */
static u32 eng_admit(struct eng *e)
{
	bool rtr = e->disp == SIW2_RX_RTR;
	bool room = !(!e->xs && eng_odd(e) && one_in(e->r, 4));
	u32 was = e->ird.active, cause;

	cause = siw2_rdmap_ird_admit(&e->ird, rtr, room);
	if (!room || (!rtr && was >= e->ird.max))
		CHECK(cause == SIW2_TERM_DDP_U_MSN_NOBUF && e->ird.active == was);
	else
		CHECK(!cause && e->ird.active == was + !rtr);
	if (!cause && !rtr)
		CHECK(siw2_rdmap_ird_end(&e->ird) == 0 && e->ird.active == was);
	return cause;
}

/*
 * MPA verified the FPDU of a segment: what the engine does at its end
 * (rx.c, seg_end()), through the same functions.
 */
static u32 eng_end(struct eng *e, const struct siw2_ddp_seg *seg,
		   bool msg_done)
{
	const struct siw2_rdmap_hdr *h = &seg->hdr;
	const struct xseg *x = eng_xseg(e);
	struct siw2_rdmap_rx_ctx ctx;
	struct siw2_stag_view v;
	bool done;
	u32 cause = 0;
	u64 old;

	switch (seg->op->cls) {
	case SIW2_CLASS_READ_RESP:
		if (e->disp == SIW2_RX_RTR) {
			e->rtr_read_out = false;
			break;
		}
		cause = siw2_rdmap_read_resp_end(&e->rd, seg->len, h->last,
						 &done);
		CHECK(!done || (h->last && e->rd.got == e->rd.len));
		if (done)
			eng_answered(e);
		break;
	case SIW2_CLASS_READ_REQ:
		v = x ? view_ok(h->rreq.src_to, h->rreq.size) :
			eng_view(e, h->rreq.src_to, h->rreq.size);
		cause = siw2_rdmap_check_stag(&v, h->rreq.src_to, h->rreq.size);
		CHECK(cause == model_stag(&v, h->rreq.src_to, h->rreq.size));
		if (!cause)
			cause = eng_admit(e);
		break;
	case SIW2_CLASS_ATOMIC_REQ:
		v = x ? view_ok(h->atomic.to, 8) : eng_view(e, h->atomic.to, 8);
		cause = siw2_rdmap_atomic_check(&h->atomic, &v);
		CHECK(cause == (h->atomic.op > SIW2_ATOMIC_CMP_SWAP ||
				h->atomic.to & 7 ? SIW2_TERM_RDMAP_OP_UNSPEC :
				model_stag(&v, h->atomic.to, 8)));
		if (cause)
			break;
		cause = eng_admit(e);
		old = rnd64(e->r);
		if (!cause)
			CHECK(siw2_rdmap_atomic_apply(&h->atomic, old) ==
			      model_atomic(&h->atomic, old));
		break;
	case SIW2_CLASS_ATOMIC_RESP:
		ctx = eng_ctx(e, seg, true);
		cause = siw2_rdmap_atomic_resp_check(&ctx, h->aresp.req_id);
		if (!cause)
			eng_answered(e);
		break;
	default:
		break;
	}
	if (x)
		CHECK(!cause);
	if (!cause && msg_done)
		e->msg_seen = true;
	return cause;
}

/* A Terminate we would send for @cause; it must survive the wire. */
static void eng_terminate(struct eng *e, u32 cause)
{
	struct siw2_term_info t;

	CHECK(cause & SIW2_TERM_SET);
	siw2_ddp_rx_term_prepare(&e->drx, &t, cause);
	CHECK(cause_wire(t.cause) == cause_wire(cause));
	term_roundtrip(&t);
}

static void ddp_header(struct eng *e)
{
	const struct siw2_ddp_seg *seg = siw2_ddp_rx_seg(&e->drx);
	const struct siw2_rdmap_op_info *op = seg->op;
	const struct siw2_rdmap_hdr *h = &seg->hdr;
	const struct xseg *x = eng_xseg(e);
	u32 cause;

	CHECK(!e->have_hdr);
	CHECK(op && op == siw2_rdmap_op(h->opcode));
	CHECK(!op->ext || e->ext);
	CHECK(e->in_fpdu && e->next_off >= op->hdr_len);
	CHECK(seg->seg_len == e->ulen && seg->len == e->ulen - op->hdr_len);
	if (!op->payload && op->cls != SIW2_CLASS_TERMINATE)
		CHECK(!seg->len);
	if (!op->tagged) {
		/* RFC 5041 7.1 items 1, 5; RFC 5040 4.1 queues. */
		CHECK(h->qn == op->qn && h->msn == e->msn[h->qn]);
		if (!op->payload)
			CHECK(!h->mo && h->last);
		CHECK(!rset_check(&e->books[h->qn], h->mo,
				  op->payload ? seg->len : 0, h->last));
		CHECK(seg->first == rset_empty(&e->books[h->qn]));
	}
	if (x) {
		CHECK(hdr_same(h, &x->h));
		CHECK(seg->len == x->len);
	}
	e->seg = *seg;
	e->have_hdr = true;
	e->pay_next = 0;

	cause = eng_begin(e, seg);
	if (cause) {
		TRACE("engine fails opcode %u: %#x\n", h->opcode, cause);
		eng_terminate(e, cause);
		siw2_ddp_rx_fail(&e->drx, cause);
		e->ddp_dead = true;
	}
}

static void ddp_error(struct eng *e, u32 cause)
{
	CHECK(!e->ddp_dead);
	if (e->clean)
		FAIL("DDP error %#x in a clean stream", cause);
	TRACE("DDP error %#x after %u segments\n", cause, e->segs);
	eng_terminate(e, cause);
	e->ddp_dead = true;
}

/* Drains the events of one span; every payload octet lies inside it. */
static void ddp_drain(struct eng *e, const u8 *span, u32 len)
{
	const struct xseg *x;
	const u8 *cursor = span;
	struct siw2_ddp_rx_ev ev;
	enum siw2_ddp_ev_type t;
	u32 i;

	for (i = 0; i < len + 4; i++) {
		t = siw2_ddp_rx_next(&e->drx, &ev);
		CHECK(t == ev.type);
		if (t == SIW2_DDP_EV_NONE)
			return;
		if (e->ddp_dead)
			FAIL("DDP event %d after an error", t);
		switch (t) {
		case SIW2_DDP_EV_HEADER:
			ddp_header(e);
			break;
		case SIW2_DDP_EV_PAYLOAD:
			CHECK(e->have_hdr);
			CHECK(e->seg.op->cls != SIW2_CLASS_TERMINATE);
			CHECK(ev.len >= 1 && ev.data >= cursor &&
			      ev.data + ev.len <= span + len);
			CHECK(ev.off == e->pay_next);
			CHECK(ev.len <= e->seg.len - ev.off);
			x = eng_xseg(e);
			if (x)
				CHECK(!memcmp(ev.data, x->payload + ev.off,
					      ev.len));
			cursor = ev.data + ev.len;
			e->pay_next += ev.len;
			break;
		case SIW2_DDP_EV_ERROR:
			ddp_error(e, ev.cause);
			break;
		default:
			FAIL("DDP event %d from siw2_ddp_rx_next()", t);
		}
	}
	FAIL("DDP makes no progress in a span of %u octets", len);
}

/* MPA verified the FPDU: the segment may be acted upon. */
static void ddp_end(struct eng *e)
{
	const struct siw2_ddp_seg *seg = &e->seg;
	const struct xseg *x;
	struct siw2_ddp_rx_ev ev;
	enum siw2_ddp_ev_type t;
	struct rset *books;
	bool want_err = false;
	u32 cause;

	t = siw2_ddp_rx_end(&e->drx, &ev);
	CHECK(t == ev.type);
	if (e->ddp_dead) {
		if (t != SIW2_DDP_EV_NONE)
			FAIL("DDP event %d at the end after an error", t);
		return;
	}
	if (!e->have_hdr) {
		/* The header never completed inside the segment. */
		CHECK(t == SIW2_DDP_EV_ERROR);
		ddp_error(e, ev.cause);
		return;
	}
	CHECK(e->pay_next == (seg->op->cls == SIW2_CLASS_TERMINATE ? 0 :
			      seg->len));
	books = &e->books[seg->hdr.qn];
	if (!seg->op->tagged) {
		rset_apply(books, seg->hdr.mo, seg->op->payload ? seg->len : 0,
			   seg->hdr.last);
		/* Over TCP nothing can fill a hole after the Last segment. */
		want_err = books->last_seen && !rset_done(books);
	}
	if (want_err) {
		CHECK(t == SIW2_DDP_EV_ERROR &&
		      ev.cause == SIW2_TERM_DDP_U_INVALID_MO);
		ddp_error(e, ev.cause);
		return;
	}
	if (t == SIW2_DDP_EV_ERROR)
		FAIL("DDP error %#x at the end of a sound segment", ev.cause);
	CHECK(t == (seg->op->cls == SIW2_CLASS_TERMINATE ?
		    SIW2_DDP_EV_TERMINATE : SIW2_DDP_EV_SEG_END));
	x = eng_xseg(e);
	if (seg->op->tagged) {
		CHECK(ev.msg_done == seg->hdr.last);
	} else {
		CHECK(ev.msg_done == rset_done(books));
		if (ev.msg_done) {
			CHECK(ev.msg_len == books->total);
			if (x)
				CHECK(ev.msg_len == x->msg_len);
			e->msn[seg->hdr.qn]++;
			memset(books, 0, sizeof(*books));
		}
	}
	if (t == SIW2_DDP_EV_SEG_END) {
		cause = eng_end(e, seg, ev.msg_done);
		if (cause) {
			TRACE("engine fails opcode %u at its end: %#x\n",
			      seg->hdr.opcode, cause);
			eng_terminate(e, cause);
			siw2_ddp_rx_fail(&e->drx, cause);
			e->ddp_dead = true;
		}
	}
	if (t == SIW2_DDP_EV_TERMINATE) {
		CHECK(ev.term);
		CHECK(ev.term->cause & SIW2_TERM_SET);
		if (!ev.term_bad)
			term_roundtrip(ev.term);
		if (x)
			CHECK(x->term && !ev.term_bad &&
			      term_same(ev.term, &x->ti));
	}
	e->segs++;
	e->have_hdr = false;
}

static void mpa_data(struct eng *e, const struct siw2_mpa_rx_ev *ev,
		     u64 at)
{
	const struct xulpdu *xu;
	u32 r;

	CHECK(ev->ulpdu_len >= 1 && ev->ulpdu_len <= SIW2_MPA_MULPDU_MAX);
	if (!e->in_fpdu) {
		CHECK(ev->offset == 0);
		e->in_fpdu = true;
		e->ulen = ev->ulpdu_len;
		e->next_off = 0;
	}
	CHECK(ev->ulpdu_len == e->ulen);
	CHECK(ev->offset == e->next_off);
	CHECK(ev->len <= e->ulen - ev->offset);
	e->next_off += ev->len;
	if (e->markers) {
		/* RFC 5044 4.3: Marker octets are never ULPDU octets. */
		/* (A Marker begun before the stream's start is not one.) */
		r = (e->pos0 + (u32)at) % SIW2_MPA_MARKER_INTERVAL;
		if ((r < SIW2_MPA_MARKER_LEN && at >= r) ||
		    r + ev->len > SIW2_MPA_MARKER_INTERVAL)
			FAIL("span of %u at stream offset %llu holds a Marker",
			     ev->len, (unsigned long long)at);
	}
	if (e->ends < e->nxu) {
		xu = &e->xu[e->ends];
		CHECK(e->ulen == xu->len);
		CHECK(!memcmp(ev->data, xu->p + ev->offset, ev->len));
	}
	siw2_ddp_rx_span(&e->drx, ev->data, ev->len, ev->offset,
			 ev->ulpdu_len);
	ddp_drain(e, ev->data, ev->len);
}

static void mpa_end(struct eng *e, const struct siw2_mpa_rx_ev *ev)
{
	CHECK(e->in_fpdu && e->next_off == e->ulen);
	CHECK(ev->ulpdu_len == e->ulen);
	if (e->ends < e->nxu)
		CHECK(e->xu[e->ends].len == e->ulen);
	e->in_fpdu = false;
	e->ends++;
	if (e->cm && !e->cm_est) {
		CHECK(!siw2_mpa_cm_may_send(e->cm));
		CHECK(siw2_mpa_cm_first_fpdu(e->cm) == SIW2_MPA_CM_ESTABLISHED);
		CHECK(siw2_mpa_cm_may_send(e->cm));
		e->cm_est = true;
	}
	ddp_end(e);
}

static void mpa_error(struct eng *e, const struct siw2_mpa_rx_ev *ev)
{
	switch (ev->err) {
	case SIW2_MPA_ERR_CRC:
		CHECK(e->crc);
		break;
	case SIW2_MPA_ERR_MARKER:
		CHECK(e->markers);
		break;
	case SIW2_MPA_ERR_ULPDU_LEN:
		break;
	default:
		FAIL("MPA receive error %d", ev->err);
	}
	if (e->clean)
		FAIL("MPA error %d in a clean stream", ev->err);
	CHECK(siw2_mpa_err_wants_term(ev->err));
	CHECK(siw2_mpa_err_ecode(ev->err) != 0);
	CHECK(siw2_mpa_err_str(ev->err));
	e->mpa_dead = true;
	e->mpa_err = ev->err;
}

/* The engine's socket callback: one chunk as TCP delivered it. */
static void eng_feed(struct eng *e, const u8 *buf, size_t len)
{
	struct siw2_mpa_rx_ev ev;
	size_t used = 0, n, left;

	if (!e->mpa_dead && one_in(e->r, 16)) {
		n = siw2_mpa_rx(&e->mrx, buf, 0, &ev);
		CHECK(n == 0 && ev.type == SIW2_MPA_RX_NONE);
	}
	while (!e->mpa_dead) {
		left = len - used;
		n = siw2_mpa_rx(&e->mrx, buf + used, left, &ev);
		CHECK(n <= left);
		switch (ev.type) {
		case SIW2_MPA_RX_NONE:
			CHECK(n == left);
			break;
		case SIW2_MPA_RX_DATA:
			CHECK(n >= 1 && ev.len >= 1);
			CHECK(ev.data >= buf + used &&
			      ev.data + ev.len <= buf + used + n);
			mpa_data(e, &ev, e->off + (ev.data - (buf + used)));
			break;
		case SIW2_MPA_RX_END:
			CHECK(n >= 1);
			mpa_end(e, &ev);
			break;
		case SIW2_MPA_RX_ERROR:
			mpa_error(e, &ev);
			break;
		default:
			FAIL("MPA event %d", ev.type);
		}
		used += n;
		e->off += n;
		if (used == len && ev.type != SIW2_MPA_RX_ERROR)
			return;
	}
	/* RFC 5044 8: latched; nothing is consumed or passed on any more. */
	n = siw2_mpa_rx(&e->mrx, buf + used, len - used, &ev);
	CHECK(n == 0 && ev.type == SIW2_MPA_RX_ERROR && ev.err == e->mpa_err);
}

static void eng_feed_split(struct eng *e, struct splitter *sp, const u8 *p,
			   size_t len)
{
	size_t off = 0, n;
	u8 *chunk;

	while (off < len) {
		n = split_next(sp, len - off);
		chunk = dup_bytes(p + off, n);
		eng_feed(e, chunk, n);
		free(chunk);
		off += n;
	}
}

static void eng_trace(const struct eng *e, const char *what)
{
	TRACE("%s: %llu octets, %u FPDUs, %u segments, MPA %s%s, DDP %s\n",
	      what, (unsigned long long)e->off, e->ends, e->segs,
	      e->mpa_dead ? "error " : "ok", e->mpa_dead ?
	      siw2_mpa_err_str(e->mpa_err) : "", e->ddp_dead ? "dead" : "ok");
}

/* ---- FZ_MODE_RAW ---- */

static void run_raw(const struct opts *o, struct prng *r, struct cur *c)
{
	struct splitter sp = { o, r, 0 };
	struct eng e;

	/* Any start position here, 4-aligned or not. */
	eng_init(&e, o, r, o->markers, o->crc, o->pos0 + (o->flags & 3));
	eng_feed_split(&e, &sp, c->p, c->n);
	eng_trace(&e, "raw");
}

/* ---- FZ_MODE_FRAMED ---- */

static void run_framed(const struct opts *o, struct prng *r, struct cur *c)
{
	struct xulpdu xu[FZ_MAX_FPDUS];
	size_t start[FZ_MAX_FPDUS + 1], hdr_at[FZ_MAX_FPDUS];
	struct splitter sp = { o, r, 0 };
	size_t idx = 0, avail;
	u32 nxu = 0, len, k = 0, at, m, total = 0;
	bool corrupt, bad_ptr, in_len, ptr_hit;
	struct fz_enc enc;
	struct eng e;
	const u8 *p;
	u8 mask;

	fz_enc_init(&enc, o->markers, o->crc, o->pos0);
	bad_ptr = o->flags & FZ_FR_BADPTR;
	corrupt = !bad_ptr && o->flags & FZ_FR_CORRUPT;
	mask = (o->flags & 0x3f) | 1;
	enc.bad_ptr = bad_ptr;
	while (c->n && nxu < FZ_MAX_FPDUS) {
		len = take8(c);
		len = len == FZ_REC_LONG ? take16(c) % SIW2_MPA_MULPDU_MAX + 1 :
					   len + 1;
		avail = len;
		p = take(c, &avail);
		if (!avail || total + len > FZ_FRAMED_MAX)
			break;
		total += len;
		xu[nxu].p = xmalloc(len);
		xu[nxu].len = len;
		fill_cyclic(xu[nxu].p, len, p, avail, r);
		start[nxu] = enc.len;
		fz_enc_fpdu(&enc, xu[nxu].p, len);
		hdr_at[nxu] = enc.hdr_pos - o->pos0;
		nxu++;
	}
	start[nxu] = enc.len;
	if (enc.oom || !nxu)
		goto out;

	/* A wrong FPDUPTR went out only if a Marker fell inside an FPDU. */
	bad_ptr = bad_ptr && !enc.bad_ptr;
	if (bad_ptr)
		idx = enc.bad_at;
	if (corrupt) {
		idx = rnd64(r) % enc.len;
		enc.buf[idx] ^= mask;
	}
	while ((corrupt || bad_ptr) && k + 1 < nxu && start[k + 1] <= idx)
		k++;

	eng_init(&e, o, r, o->markers, o->crc, o->pos0);
	e.xu = xu;
	e.nxu = corrupt || bad_ptr ? k : nxu;
	eng_feed_split(&e, &sp, enc.buf, enc.len);
	eng_trace(&e, corrupt ? "framed, corrupted" : bad_ptr ?
		  "framed, bad FPDUPTR" : "framed");

	if (bad_ptr) {
		/*
		 * RFC 5044 8 code 3, and with CRCs only once the CRC of the
		 * FPDU has proven the Marker was sent that way.
		 */
		CHECK(e.mpa_dead && e.mpa_err == SIW2_MPA_ERR_MARKER);
		CHECK(e.ends == k);
		goto out;
	}
	if (!corrupt) {
		CHECK(!e.mpa_dead && e.ends == nxu && !e.in_fpdu);
		goto out;
	}
	/* The FPDUs before the damaged one arrive intact. */
	CHECK(e.ends >= k);
	in_len = idx == hdr_at[k] || idx == hdr_at[k] + 1;
	at = (o->pos0 + (u32)idx) % SIW2_MPA_MARKER_INTERVAL;
	ptr_hit = o->markers && at < SIW2_MPA_MARKER_LEN &&
		  (at == 2 || (at == 3 && mask & 0xfc));
	if (in_len)
		goto out;
	if (o->crc) {
		/* RFC 5044 4.4: the CRC covers Markers, pad and all. */
		CHECK(e.mpa_dead && e.mpa_err == SIW2_MPA_ERR_CRC);
		CHECK(e.ends == k);
	} else if (ptr_hit) {
		CHECK(e.mpa_dead && e.mpa_err == SIW2_MPA_ERR_MARKER);
		CHECK(e.ends == k);
	} else {
		CHECK(!e.mpa_dead && e.ends == nxu);
	}
out:
	for (m = 0; m < nxu; m++)
		free(xu[m].p);
	fz_enc_free(&enc);
}

/* ---- FZ_MODE_PARSE ---- */

static void parse_hdr(struct cur *c)
{
	union siw2_iwarp_hdr h2;
	struct siw2_rdmap_hdr m, m2;
	const struct siw2_rdmap_op_info *op;
	u8 ctl = take8(c), ref[SIW2_HDR_MAX];
	size_t len = ctl % (SIW2_HDR_MAX + 1);
	bool ext = ctl & 0x80;
	const u8 *p = take(c, &len);
	u8 *buf = dup_bytes(p, len);
	u32 cause, n;

	/* Exactly @len octets: ASan catches a read beyond them. */
	cause = siw2_rdmap_parse((const union siw2_iwarp_hdr *)buf, len, ext,
				 &m);
	if (cause) {
		CHECK(cause & SIW2_TERM_SET);
		goto out;
	}
	op = siw2_rdmap_op(m.opcode);
	CHECK(op && len >= op->hdr_len && (!op->ext || ext));
	CHECK(op->tagged == !!(buf[0] & SIW2_DDP_T));
	CHECK(m.last == !!(buf[0] & SIW2_DDP_L));
	/* Build what was read, compare with the reference, read again. */
	n = siw2_rdmap_build(&h2, &m);
	CHECK(n == op->hdr_len);
	CHECK(model_hdr(ref, &m) == n && !memcmp(ref, h2.raw, n));
	CHECK(siw2_rdmap_parse(&h2, n, ext, &m2) == 0);
	if (!op->tagged)
		m.qn = op->qn;
	CHECK(hdr_same(&m, &m2));
	/* The fields that survive are the ones on the wire. */
	if (!op->tagged)
		CHECK(m.msn == m2.msn && !memcmp(buf + 10, h2.raw + 10, 8));
	else
		CHECK(!memcmp(buf + 2, h2.raw + 2, 12));
out:
	free(buf);
}

static void parse_ctrl(struct cur *c)
{
	const struct siw2_rdmap_op_info *op = NULL, *op2 = NULL;
	u8 d = take8(c), rc = take8(c);
	u32 plain = siw2_rdmap_ctrl_check(d, rc, false, &op);
	u32 ext = siw2_rdmap_ctrl_check(d, rc, true, &op2);

	if (!plain)
		CHECK(!ext && op == op2);
	if (ext)
		return;
	CHECK(op2 == siw2_rdmap_op(rc & SIW2_RDMAP_OPCODE));
	CHECK(op2->tagged == !!(d & SIW2_DDP_T));
	CHECK((d & SIW2_DDP_DV) == SIW2_DDP_VERSION && (rc >> 6) == 1);
	CHECK(!plain || op2->ext);
}

static void parse_term(struct cur *c)
{
	struct siw2_term_info t;
	u32 ctrl = take32(c);
	size_t len = take8(c);
	const u8 *p = take(c, &len);
	u8 *body = dup_bytes(p, len);
	int ret;

	ret = siw2_rdmap_term_parse(ctrl, body, len, &t);
	CHECK(ret == 0 || ret == -EBADMSG);
	CHECK(SIW2_TERM_CAUSE_LAYER(t.cause) == ctrl >> 28);
	CHECK(SIW2_TERM_CAUSE_ECODE(t.cause) == ((ctrl >> 16) & 0xff));
	if (!ret) {
		struct siw2_term_blame b;

		term_roundtrip(&t);
		CHECK(!t.ddp_len || !memcmp(t.ddp_hdr, body + 2, t.ddp_len));
		/* It names a request only from a copied Request header. */
		if (siw2_rdmap_term_blame(&t, &b))
			CHECK((t.hdrctl & SIW2_TERM_R) &&
			      t.rdmap_len == (b.atomic ? 52 : 28));
	}
	free(body);
}

static void parse_term_prepare(struct cur *c)
{
	struct siw2_term_info t;
	u32 cause = take32(c) | SIW2_TERM_SET;
	u32 seg_len = take32(c);
	size_t len = take8(c) % 80;
	const u8 *p = take(c, &len);
	u8 *bad = dup_bytes(p, len);

	siw2_rdmap_term_prepare(&t, cause, len ? bad : NULL, len, seg_len);
	CHECK(t.cause == cause);
	term_roundtrip(&t);
	free(bad);
}

static void parse_books(struct cur *c)
{
	struct siw2_ddp_reasm m, before;
	struct rset set = { 0 };
	u32 i, k, nops = 1 + take8(c) % 32, mo, len, got, want;
	bool last;
	u8 sel;

	siw2_ddp_reasm_init(&m);
	for (i = 0; i < nops && c->n; i++) {
		sel = take8(c);
		last = sel & 1;
		mo = sel & 2 ? take32(c) : take16(c);
		len = sel & 4 ? take32(c) : take8(c);
		before = m;
		want = rset_check(&set, mo, len, last);
		got = siw2_ddp_reasm_add(&m, mo, len, last);
		if (got != want)
			FAIL("books: add(%u, %u, %d) gave %#x, model %#x", mo,
			     len, last, got, want);
		if (got) {
			CHECK(!memcmp(&m, &before, sizeof(m)));
			continue;
		}
		rset_apply(&set, mo, len, last);
		CHECK(m.nr == set.n);
		for (k = 0; k < m.nr; k++)
			CHECK(m.r[k].start == set.s[k] && m.r[k].end == set.e[k]);
		CHECK(m.last_seen == set.last_seen);
		CHECK(!m.last_seen || m.total == set.total);
		CHECK(siw2_ddp_reasm_done(&m) == rset_done(&set));
		CHECK(siw2_ddp_reasm_empty(&m) == rset_empty(&set));
		if (siw2_ddp_reasm_done(&m)) {
			siw2_ddp_reasm_init(&m);
			memset(&set, 0, sizeof(set));
		}
	}
}

static void parse_ranges(struct cur *c)
{
	struct siw2_stag_view v;
	u8 sel = take8(c);
	u64 to = take64(c), len = take64(c), base = take64(c);
	u64 size = take64(c);
	u32 mo = to, l32 = len;

	/* Often near the edges, where the arithmetic can go wrong. */
	if (sel & 1)
		to = FZ_U64_MAX - (to & 0xff);
	if (sel & 2)
		len &= 0xfff;
	if (sel & 4)
		base = to - (base & 0xff);
	if (sel & 8)
		size = len + (size & 0xff) - 0x80;
	v.valid = !(sel & 0x10);
	v.assoc = !(sel & 0x20);
	v.access = !(sel & 0x40);
	v.base = base;
	v.len = size;
	CHECK(siw2_range_ok(to, len, base, size) ==
	      in_range(to, len, base, size));
	CHECK(siw2_ddp_check_tagged(&v, to, l32) == model_tagged(&v, to, l32));
	CHECK(siw2_rdmap_check_stag(&v, to, len) == model_stag(&v, to, len));
	CHECK(siw2_ddp_check_untagged(mo, l32, !(sel & 0x80), size) ==
	      model_untagged(mo, l32, !(sel & 0x80), size));
}

static void parse_atomic(struct cur *c)
{
	struct siw2_atomic a;
	struct siw2_stag_view v;
	u8 sel = take8(c);
	u64 old = take64(c);

	a.op = sel & 3;
	a.req_id = take32(c);
	a.stag = take32(c);
	a.to = take64(c);
	a.add_swap = take64(c);
	a.add_swap_mask = sel & 4 ? take64(c) : 0;
	a.cmp = take64(c);
	a.cmp_mask = sel & 8 ? take64(c) : FZ_U64_MAX;
	v = view_ok(a.to & ~7ULL, 16);
	CHECK(siw2_rdmap_atomic_check(&a, &v) ==
	      (a.op > SIW2_ATOMIC_CMP_SWAP || a.to & 7 ?
	       SIW2_TERM_RDMAP_OP_UNSPEC : model_stag(&v, a.to, 8)));
	CHECK(siw2_rdmap_atomic_apply(&a, old) == model_atomic(&a, old));
	if (sel & 0x10) {
		siw2_rdmap_atomic_fetch_add(&a, a.add_swap);
		CHECK(siw2_rdmap_atomic_apply(&a, old) == old + a.add_swap);
	} else {
		siw2_rdmap_atomic_cmp_swap(&a, a.cmp, a.add_swap);
		CHECK(siw2_rdmap_atomic_apply(&a, old) ==
		      (old == a.cmp ? a.add_swap : old));
	}
}

/* RFC 5041 5.2 segmentation of one message of any shape. */
static void parse_segment(struct cur *c)
{
	const struct siw2_rdmap_op_info *op;
	struct siw2_rdmap_hdr m = { 0 }, got;
	struct siw2_ddp_tx_seg seg;
	struct siw2_ddp_tx tx;
	union siw2_iwarp_hdr h;
	u8 sel = take8(c);
	u32 msg_len = take32(c);
	u32 mulpdu, off = 0, i;
	int ret;

	msg_len >>= take8(c) % 32;
	mulpdu = take16(c);

	m.opcode = sel & 0x0f;
	m.stag = take32(c);
	m.to = take64(c);
	m.msn = take32(c);
	m.mo = sel & 0x10 ? take32(c) : 0;
	op = siw2_rdmap_op(m.opcode);
	ret = siw2_ddp_tx_init(&tx, &m, msg_len);
	if (!op || (!op->payload && msg_len)) {
		CHECK(ret == -EINVAL);
		return;
	}
	CHECK(ret == 0);
	for (i = 0; i < FZ_MAX_SEGS; i++) {
		ret = siw2_ddp_tx_next(&tx, mulpdu, &seg);
		if (mulpdu < op->hdr_len ||
		    (mulpdu == op->hdr_len && off < msg_len)) {
			CHECK(ret == -EINVAL);
			return;
		}
		if (!ret)
			break;
		CHECK(ret == 1);
		CHECK(seg.hdr_len == op->hdr_len && seg.off == off);
		CHECK(seg.hdr_len + seg.len <= mulpdu);
		CHECK(seg.len || !msg_len);
		CHECK(seg.last == (off + seg.len == msg_len));
		memcpy(&h, seg.hdr, seg.hdr_len);
		CHECK(siw2_rdmap_parse(&h, seg.hdr_len, true, &got) == 0);
		CHECK(got.opcode == m.opcode && got.last == seg.last);
		if (op->tagged)
			CHECK(got.to == m.to + off && got.stag == m.stag);
		else
			CHECK(got.mo == m.mo + off && got.msn == m.msn &&
			      got.qn == op->qn);
		off += seg.len;
		if (seg.last) {
			CHECK(siw2_ddp_tx_next(&tx, mulpdu, &seg) == 0);
			break;
		}
		/* RFC 5041 3 item 2: MULPDU may change between segments. */
		if (sel & 0x20)
			mulpdu = op->hdr_len + 1 + take8(c);
	}
	CHECK(off == msg_len || i == FZ_MAX_SEGS);
}

static void parse_mpa_misc(struct cur *c)
{
	u32 emss = take16(c);
	u32 scale = take8(c) % 4 + 1, pos = take32(c);
	u32 mulpdu, len = take16(c) % SIW2_MPA_MULPDU_MAX + 1, wire;
	enum siw2_mpa_err err = take8(c);
	bool markers = emss & 1;

	emss *= scale;

	CHECK(siw2_mpa_err_str(err));
	siw2_mpa_err_ecode(err);
	siw2_mpa_err_wants_term(err);
	mulpdu = siw2_mpa_mulpdu(emss, markers);
	CHECK(mulpdu >= SIW2_MPA_MULPDU_MIN && mulpdu <= SIW2_MPA_MULPDU_MAX);
	/* RFC 5044 4.5: an FPDU of MULPDU octets fits the EMSS. */
	if (mulpdu > SIW2_MPA_MULPDU_MIN && mulpdu < SIW2_MPA_MULPDU_MAX)
		CHECK(siw2_mpa_fpdu_wire_len(pos & ~3U, mulpdu, markers) <= emss);
	wire = siw2_mpa_fpdu_wire_len(pos, len, markers);
	CHECK(wire >= len + 6 + siw2_mpa_pad(len));
	CHECK((len + 2 + siw2_mpa_pad(len)) % 4 == 0);
	if (!markers)
		CHECK(wire == len + 6 + siw2_mpa_pad(len));
}

static void parse_cm_params(struct cur *c)
{
	struct siw2_mpa_params p;
	struct siw2_mpa_cm cm;
	u8 sel = take8(c), frame[SIW2_MPA_FRAME_MAX];
	enum siw2_mpa_role role = sel % 3;	/* 2 is no role */
	size_t n;
	bool bad;

	memset(&p, 0, sizeof(p));
	p.rev = take8(c) % 4;
	p.markers = sel & 2;
	p.crc = sel & 4;
	p.p2p = sel & 8;
	p.large = sel & 16;
	p.rtr = take8(c) % 16;
	p.ird = take16(c) % 0x4002;
	p.ord = take16(c) % 0x4002;
	bad = role > SIW2_MPA_RESPONDER ||
	      (p.rev != 1 && p.rev != 2) || p.rtr > SIW2_MPA_RTR_ALL ||
	      p.ird > FZ_NONE || p.ord > FZ_NONE ||
	      (role == SIW2_MPA_INITIATOR && p.p2p && (p.rev < 2 || !p.rtr)) ||
	      (role == SIW2_MPA_RESPONDER && p.rev == 2 && !p.rtr);
	CHECK(siw2_mpa_cm_init(&cm, role, &p) ==
	      (bad ? SIW2_MPA_ERR_PARAM : SIW2_MPA_OK));
	CHECK(!siw2_mpa_cm_may_send(&cm));
	if (bad) {
		CHECK(siw2_mpa_cm_request(&cm, NULL, 0, NULL, 0, NULL) ==
		      SIW2_MPA_ERR_STATE);
		return;
	}
	/* Calls out of order change nothing but err. */
	CHECK(siw2_mpa_cm_first_fpdu(&cm) == SIW2_MPA_CM_ERROR);
	CHECK(cm.err == SIW2_MPA_ERR_STATE && !siw2_mpa_cm_may_send(&cm));
	CHECK(siw2_mpa_cm_accept(&cm, 0, 0, NULL, 0, frame, sizeof(frame),
				 &n) == SIW2_MPA_ERR_STATE);
	if (role == SIW2_MPA_INITIATOR) {
		CHECK(siw2_mpa_cm_rx(&cm, frame, 1, &n) == SIW2_MPA_CM_ERROR);
		CHECK(n == 0 && cm.err == SIW2_MPA_ERR_STATE);
		CHECK(siw2_mpa_cm_request(&cm, NULL, 1, frame, sizeof(frame),
					  &n) == SIW2_MPA_ERR_PARAM);
		CHECK(siw2_mpa_cm_request(&cm, NULL, 0, NULL, 0, &n) ==
		      SIW2_MPA_ERR_PARAM);
	} else {
		CHECK(siw2_mpa_cm_rx(&cm, frame, 0, &n) ==
		      SIW2_MPA_CM_NEED_MORE && n == 0);
		CHECK(siw2_mpa_cm_request(&cm, NULL, 0, frame, sizeof(frame),
					  &n) == SIW2_MPA_ERR_STATE);
	}
	/* RFC 5044 7.1.2 rule 10: nothing came in time. */
	CHECK(siw2_mpa_cm_timeout(&cm) == SIW2_MPA_CM_ERROR);
	CHECK(cm.err == SIW2_MPA_ERR_TIMEOUT);
	CHECK(!siw2_mpa_cm_retry_rev1(&cm));
}

/* RFC 5040 5.2, 5.5, RFC 7306: ORD, IRD and the read fence, on a model. */
static void parse_ord(struct cur *c)
{
	struct siw2_rdmap_ord o = { .max = take8(c) % 8 };
	struct siw2_rdmap_ird ird = { .max = take8(c) % 8 };
	u32 i, n = take8(c) % 64, was;
	enum siw2_rdmap_issue want;
	bool fence, uses;
	u8 sel, opc;
	int ret;

	for (i = 0; i < n && c->n; i++) {
		sel = take8(c);
		opc = sel & 0x0f;
		fence = sel & 0x10;
		uses = opc == SIW2_RDMAP_OP_READ_REQ || opc == SIW2_RDMAP_OP_ATOMIC_REQ;
		want = fence && o.outstanding ? SIW2_ISSUE_WAIT_FENCE :
		       uses && o.outstanding >= o.max ? SIW2_ISSUE_WAIT_ORD :
		       SIW2_ISSUE_NOW;
		switch (sel >> 5 & 3) {
		case 0:
			CHECK(siw2_rdmap_may_issue(&o, opc, fence) == want);
			was = o.outstanding;
			ret = siw2_rdmap_ord_issue(&o, opc, fence);
			CHECK(want == SIW2_ISSUE_NOW ?
			      !ret && o.outstanding == was + uses :
			      ret == -EAGAIN && o.outstanding == was);
			break;
		case 1:
			was = o.outstanding;
			ret = siw2_rdmap_ord_complete(&o);
			CHECK(was ? !ret && o.outstanding == was - 1 :
				    ret == -EPROTO);
			break;
		case 2:
			was = ird.active;
			CHECK(siw2_rdmap_ird_begin(&ird) ==
			      (was < ird.max ? 0 : SIW2_TERM_DDP_U_MSN_NOBUF));
			CHECK(ird.active == was + (was < ird.max));
			break;
		default:
			was = ird.active;
			ret = siw2_rdmap_ird_end(&ird);
			CHECK(was ? !ret && ird.active == was - 1 :
				    ret == -EINVAL);
			break;
		}
		CHECK(o.outstanding <= o.max && ird.active <= ird.max);
	}
}

static void run_parse(const struct opts *o, struct prng *r, struct cur *c)
{
	unsigned int i;

	for (i = 0; i < 256 && c->n; i++) {
		switch (take8(c) % 11) {
		case 0:
			parse_hdr(c);
			break;
		case 1:
			parse_ctrl(c);
			break;
		case 2:
			parse_term(c);
			break;
		case 3:
			parse_term_prepare(c);
			break;
		case 4:
			parse_books(c);
			break;
		case 5:
			parse_ranges(c);
			break;
		case 6:
			parse_atomic(c);
			break;
		case 7:
			parse_segment(c);
			break;
		case 8:
			parse_mpa_misc(c);
			break;
		case 9:
			parse_ord(c);
			break;
		default:
			parse_cm_params(c);
			break;
		}
	}
}

/* ---- Round trips ---- */

struct msg {
	struct siw2_rdmap_hdr m;	/* first segment's header */
	u8 *payload;
	u32 len;
	bool term;
	struct siw2_term_info ti;
};

struct msgs {
	struct msg v[FZ_MAX_MSGS + 1];
	u32 n;
};

static void msgs_free(struct msgs *ms)
{
	u32 i;

	for (i = 0; i < ms->n; i++)
		free(ms->v[i].payload);
	ms->n = 0;
}

static const u32 term_causes[] = {
	SIW2_TERM_RDMAP_INVALID_STAG, SIW2_TERM_RDMAP_BASE_BOUNDS,
	SIW2_TERM_RDMAP_ACCESS, SIW2_TERM_RDMAP_OPCODE,
	SIW2_TERM_RDMAP_VERSION, SIW2_TERM_RDMAP_CATASTROPHIC,
	SIW2_TERM_DDP_T_INVALID_STAG, SIW2_TERM_DDP_T_BASE_BOUNDS,
	SIW2_TERM_DDP_U_INVALID_QN, SIW2_TERM_DDP_U_MSN_RANGE,
	SIW2_TERM_DDP_U_INVALID_MO, SIW2_TERM_DDP_U_TOO_LONG,
	SIW2_TERM(SIW2_LAYER_LLP, SIW2_MPA_TERM_ETYPE, SIW2_MPA_ECODE_CRC),
	SIW2_TERM(SIW2_LAYER_LLP, SIW2_MPA_TERM_ETYPE, SIW2_MPA_ECODE_MARKER),
};

/* The Terminate for a cause met in a segment made up from the generator. */
static void make_term(struct prng *r, struct siw2_term_info *t)
{
	struct siw2_rdmap_hdr bad = { 0 };
	union siw2_iwarp_hdr h;
	u32 len;

	bad.opcode = rnd_below(r, SIW2_RDMAP_OP_ATOMIC_RESP + 1);
	bad.stag = rnd32(r);
	bad.to = rnd64(r);
	bad.msn = rnd32(r);
	bad.rreq.size = rnd32(r);
	bad.atomic.to = rnd64(r);
	len = siw2_rdmap_build(&h, &bad);
	if (len && one_in(r, 4))
		len = rnd_below(r, len);
	siw2_rdmap_term_prepare(t, term_causes[rnd_below(r, FZ_ARRAY_SIZE(term_causes))],
				len ? h.raw : NULL, len, rnd32(r));
}

/*
 * One message with sound header fields: @sel and @len from a record (the
 * payload octets from @c), the rest from the generator.
 */
static void msg_fill(struct msg *g, u8 opc, u8 sel, u32 len, u32 *msn,
		     struct prng *r, struct cur *c)
{
	const struct siw2_rdmap_op_info *op = siw2_rdmap_op(opc);
	size_t avail = len;
	const u8 *p;

	memset(g, 0, sizeof(*g));
	g->m.opcode = opc;
	g->len = len;
	p = take(c, &avail);
	g->payload = xmalloc(len);
	fill_cyclic(g->payload, len, p, avail, r);
	g->m.stag = rnd32(r);
	/* TOs up to the last octet of the 64-bit space, never past. */
	g->m.to = sel & FZ_MSG_EDGE ? FZ_U64_MAX - len + 1 : rnd64(r) >> 1;
	if (!op->tagged)
		g->m.msn = msn[op->qn]++;
	g->m.qn = op->qn;
	if (op->inval)
		g->m.inval_stag = rnd32(r);
	switch (op->cls) {
	case SIW2_CLASS_READ_REQ:
		g->m.rreq.sink_stag = rnd32(r);
		g->m.rreq.sink_to = rnd64(r);
		g->m.rreq.size = (u32)take16(c) << (sel >> 5 & 3) * 8;
		g->m.rreq.src_stag = rnd32(r);
		g->m.rreq.src_to = sel & FZ_MSG_EDGE ?
			FZ_U64_MAX - g->m.rreq.size + 1 : rnd64(r) >> 1;
		break;
	case SIW2_CLASS_IMM:
		g->m.imm = rnd64(r);
		break;
	case SIW2_CLASS_ATOMIC_REQ:
		g->m.atomic.op = (sel >> 5 & 1) ? SIW2_ATOMIC_CMP_SWAP :
			SIW2_ATOMIC_FETCH_ADD;
		g->m.atomic.req_id = rnd32(r);
		g->m.atomic.stag = rnd32(r);
		g->m.atomic.to = sel & FZ_MSG_EDGE ? FZ_U64_MAX - 7 :
			(rnd64(r) >> 1) & ~7ULL;
		g->m.atomic.add_swap = rnd64(r);
		g->m.atomic.add_swap_mask = rnd64(r);
		g->m.atomic.cmp = rnd64(r);
		g->m.atomic.cmp_mask = rnd64(r);
		break;
	case SIW2_CLASS_ATOMIC_RESP:
		g->m.aresp.req_id = rnd32(r);
		g->m.aresp.orig = rnd64(r);
		break;
	default:
		break;
	}
}

/*
 * Message records (FZ_MSG_*) into messages, after the RTR @rtr_op
 * (RFC 6581 9.2: a zero-length Send, Write or Read goes first) unless it
 * is FZ_NO_RTR.
 */
static void msgs_parse(struct msgs *ms, const struct opts *o, struct prng *r,
		       struct cur *c, u8 rtr_op)
{
	static const u8 remap[4] = {
		SIW2_RDMAP_OP_WRITE, SIW2_RDMAP_OP_SEND, SIW2_RDMAP_OP_READ_RESP, SIW2_RDMAP_OP_SEND_INV,
	};
	u32 msn[SIW2_QN_COUNT] = { 1, 1, 1, 1 }, total = 0, len;
	const struct siw2_rdmap_op_info *op;
	struct cur none = { NULL, 0 };
	struct msg *g;
	u8 sel, opc;

	ms->n = 0;
	if (rtr_op != FZ_NO_RTR)
		msg_fill(&ms->v[ms->n++], rtr_op, 0, 0, msn, r, &none);
	while (c->n && ms->n < FZ_MAX_MSGS) {
		sel = take8(c);
		g = &ms->v[ms->n];
		opc = sel & FZ_MSG_OP;
		if (opc > SIW2_RDMAP_OP_ATOMIC_RESP)
			opc = remap[opc - SIW2_RDMAP_OP_ATOMIC_RESP - 1];
		if (siw2_rdmap_op(opc)->ext && !o->ext)
			opc = SIW2_RDMAP_OP_SEND_SE;
		op = siw2_rdmap_op(opc);
		len = take16(c) | (sel & FZ_MSG_BIG ? 0x10000 : 0);
		if (!op->payload || total + len > FZ_RT_MAX)
			len = 0;
		total += len;
		if (opc == SIW2_RDMAP_OP_TERMINATE) {
			/* The last word on a stream (RFC 5040 5.4). */
			memset(g, 0, sizeof(*g));
			g->m.opcode = opc;
			g->term = true;
			make_term(r, &g->ti);
			ms->n++;
			return;
		}
		msg_fill(g, opc, sel, len, msn, r, c);
		ms->n++;
	}
}

/* The segment's expected header, as parse() reads it. */
static void xseg_hdr(struct siw2_rdmap_hdr *x, const struct siw2_rdmap_hdr *m,
		     const struct siw2_rdmap_op_info *op, u32 off, bool last)
{
	memset(x, 0, sizeof(*x));
	x->opcode = m->opcode;
	x->last = last;
	if (op->tagged) {
		x->stag = m->stag;
		x->to = m->to + off;
		return;
	}
	x->qn = op->qn;
	x->msn = m->msn;
	x->mo = m->mo + off;
	if (op->inval)
		x->inval_stag = m->inval_stag;
	switch (op->cls) {
	case SIW2_CLASS_READ_REQ:
		x->rreq = m->rreq;
		break;
	case SIW2_CLASS_TERMINATE:
		x->term_ctrl = m->term_ctrl;
		break;
	case SIW2_CLASS_IMM:
		x->imm = m->imm;
		break;
	case SIW2_CLASS_ATOMIC_REQ:
		x->atomic = m->atomic;
		x->atomic.op &= SIW2_ATOMIC_OP;
		break;
	case SIW2_CLASS_ATOMIC_RESP:
		x->aresp = m->aresp;
		break;
	default:
		break;
	}
}

struct rt {
	struct xseg xs[FZ_MAX_FPDUS * 4];
	struct xulpdu xu[FZ_MAX_FPDUS * 4];
	u32 n;
	struct fz_enc wire;	/* what mpa.c sent */
	struct fz_enc ref;	/* what the reference encoder sends */
	struct siw2_mpa_tx tx;
	bool full;
};

/*
 * Frames one ULPDU with the transmit API, whole (siw2_mpa_fpdu_build())
 * or piece by piece with header and payload from separate buffers, as the
 * engine sends without copying payload.
 */
static void rt_frame(struct rt *t, struct prng *r, const u8 *hdr, u32 hl,
		     const u8 *pay, u32 pl)
{
	u32 len = hl + pl, wl, sent = 0, k, piece;
	struct siw2_mpa_tx_piece pc, probe;
	u8 *ulpdu = xmalloc(len), *out;
	size_t n, ref_len;
	int ret;

	memcpy(ulpdu, hdr, hl);
	if (pl)
		memcpy(ulpdu + hl, pay, pl);
	wl = siw2_mpa_fpdu_wire_len(t->wire.pos, len, t->wire.markers);
	if (one_in(r, 2)) {
		out = xmalloc(wl);
		if (one_in(r, 8))
			CHECK(siw2_mpa_fpdu_build(&t->tx, ulpdu, len, out,
						  wl - 1) == 0);
		n = siw2_mpa_fpdu_build(&t->tx, ulpdu, len, out, wl);
		CHECK(n == wl);
		fz_enc_raw(&t->wire, out, n);
		free(out);
	} else {
		CHECK(siw2_mpa_tx_begin(&t->tx, len) == wl);
		CHECK(siw2_mpa_tx_begin(&t->tx, len) == 0);
		for (k = 0; k < 4 * len + 64; k++) {
			ret = siw2_mpa_tx_next(&t->tx, &pc);
			if (!ret)
				break;
			CHECK(ret == 1 && pc.len >= 1);
			if (pc.bytes) {
				CHECK(pc.len <= sizeof(t->tx.bytes));
				fz_enc_raw(&t->wire, pc.bytes, pc.len);
				sent += pc.len;
				continue;
			}
			CHECK(pc.ulpdu_off + pc.len <= len);
			if (t->tx.gen_crc && one_in(r, 8))
				CHECK(siw2_mpa_tx_next(&t->tx, &probe) == -EPROTO);
			/* Header and payload octets from their own buffers. */
			while (pc.len) {
				if (pc.ulpdu_off < hl) {
					piece = hl - pc.ulpdu_off;
					piece = piece < pc.len ? piece : pc.len;
					fz_enc_raw(&t->wire, hdr + pc.ulpdu_off,
						   piece);
					siw2_mpa_tx_crc(&t->tx,
							hdr + pc.ulpdu_off,
							piece);
				} else {
					piece = pc.len;
					fz_enc_raw(&t->wire,
						   pay + pc.ulpdu_off - hl,
						   piece);
					siw2_mpa_tx_crc(&t->tx,
							pay + pc.ulpdu_off - hl,
							piece);
				}
				pc.ulpdu_off += piece;
				pc.len -= piece;
				sent += piece;
			}
		}
		CHECK(ret == 0 && sent == wl);
	}
	t->wire.pos += wl;
	ref_len = t->ref.len;
	CHECK(fz_enc_fpdu(&t->ref, ulpdu, len) == wl);
	if (!t->wire.oom && !t->ref.oom &&
	    memcmp(t->wire.buf + ref_len, t->ref.buf + ref_len, wl))
		FAIL("FPDU %u differs from the reference encoding", t->n);
	t->xu[t->n].p = ulpdu;
	t->xu[t->n].len = len;
}

static void rt_add(struct rt *t, const struct siw2_rdmap_hdr *h,
		   const u8 *pay, u32 len, u32 msg_len, u64 to0)
{
	struct xseg *x = &t->xs[t->n];

	x->h = *h;
	x->payload = pay;
	x->len = len;
	x->msg_len = msg_len;
	x->to0 = to0;
	t->n++;
}

/*
 * Sends @ms with the transmit API (DDP segmentation, RDMAP headers, MPA
 * framing) and receives it in chunks: every segment must come back as
 * sent, with no error.
 */
static bool rt_run(const struct opts *o, struct prng *r,
		   const struct msgs *ms, bool markers, bool crc, u32 pos0,
		   u32 mulpdu, struct siw2_mpa_cm *cm)
{
	bool ran = false;
	struct rt *t = xmalloc(sizeof(*t));
	struct splitter sp = { o, r, 0 };
	const struct siw2_rdmap_op_info *op;
	const struct msg *g;
	struct siw2_ddp_tx_seg seg;
	struct siw2_ddp_tx dtx;
	u8 ref[SIW2_HDR_MAX], tbuf[sizeof(struct siw2_hdr_terminate) +
				   SIW2_TERM_BODY_MAX];
	struct eng e;
	u32 i, k, len, mp;
	int ret;

	memset(t, 0, offsetof(struct rt, wire));
	t->full = false;
	fz_enc_init(&t->wire, markers, crc, pos0);
	fz_enc_init(&t->ref, markers, crc, pos0);
	siw2_mpa_tx_init(&t->tx, markers, crc);
	t->tx.pos = pos0;

	for (i = 0; i < ms->n && !t->full; i++) {
		g = &ms->v[i];
		if (g->term) {
			len = siw2_rdmap_term_build(tbuf, sizeof(tbuf), &g->ti);
			CHECK(len >= sizeof(struct siw2_hdr_terminate));
			memset(&t->xs[t->n], 0, sizeof(t->xs[0]));
			t->xs[t->n].term = true;
			t->xs[t->n].ti = g->ti;
			t->xs[t->n].h.opcode = SIW2_RDMAP_OP_TERMINATE;
			t->xs[t->n].h.last = true;
			t->xs[t->n].h.qn = SIW2_QN_TERMINATE;
			t->xs[t->n].h.msn = 1;
			t->xs[t->n].h.term_ctrl = get_be16(tbuf + 18) << 16 |
						  get_be16(tbuf + 20);
			rt_frame(t, r, tbuf, len, NULL, 0);
			/* Its body is no payload: the message is empty. */
			t->xs[t->n].payload = t->xu[t->n].p + 22;
			t->xs[t->n].len = len - 22;
			t->n++;
			break;
		}
		op = siw2_rdmap_op(g->m.opcode);
		CHECK(siw2_ddp_tx_init(&dtx, &g->m, g->len) == 0);
		for (k = 0;; k++) {
			/* Sometimes smaller MULPDUs (RFC 5041 3 item 2). */
			mp = one_in(r, 8) ? op->hdr_len + 1 +
				rnd_below(r, mulpdu - op->hdr_len) : mulpdu;
			ret = siw2_ddp_tx_next(&dtx, mp, &seg);
			if (!ret)
				break;
			CHECK(ret == 1 && seg.hdr_len == op->hdr_len);
			CHECK(seg.hdr_len + seg.len <= mp);
			if (t->n == FZ_ARRAY_SIZE(t->xs)) {
				t->full = true;
				break;
			}
			xseg_hdr(&t->xs[t->n].h, &g->m, op, seg.off, seg.last);
			/* The header octets, against the reference layout. */
			CHECK(model_hdr(ref, &t->xs[t->n].h) == seg.hdr_len);
			if (memcmp(ref, seg.hdr, seg.hdr_len))
				FAIL("opcode %u header differs from RFC layout",
				     g->m.opcode);
			rt_frame(t, r, seg.hdr, seg.hdr_len,
				 g->payload + seg.off, seg.len);
			rt_add(t, &t->xs[t->n].h, g->payload + seg.off,
			       seg.len, g->len, g->m.to);
			CHECK(seg.last == (seg.off + seg.len == g->len));
			if (seg.last)
				break;
		}
	}
	if (t->wire.oom || t->ref.oom || !t->n)
		goto out;
	CHECK(t->wire.len == t->ref.len);

	eng_init(&e, o, r, markers, crc, pos0);
	e.xu = t->xu;
	e.nxu = t->n;
	e.xs = t->xs;
	e.nxs = t->n;
	e.clean = true;
	e.ord.max = FZ_MAX_FPDUS * 4;
	e.ord.outstanding = e.ord.max;
	e.cm = cm;
	e.await_rtr = cm && cm->conn.p2p;
	eng_feed_split(&e, &sp, t->wire.buf, t->wire.len);
	eng_trace(&e, "round trip");
	CHECK(!e.mpa_dead && !e.ddp_dead && !e.in_fpdu && !e.have_hdr);
	CHECK(e.ends == t->n && e.segs == t->n);
	ran = true;
out:
	for (i = 0; i < t->n; i++)
		free(t->xu[i].p);
	fz_enc_free(&t->wire);
	fz_enc_free(&t->ref);
	free(t);
	return ran;
}

static void run_roundtrip(const struct opts *o, struct prng *r, struct cur *c)
{
	struct msgs *ms = xmalloc(sizeof(*ms));

	msgs_parse(ms, o, r, c, FZ_NO_RTR);
	rt_run(o, r, ms, o->markers, o->crc, o->pos0, fz_mulpdu(o->b5, o->b6),
	       NULL);
	msgs_free(ms);
	free(ms);
}

/* ---- Connection setup ---- */

struct frame {
	u8 b[SIW2_MPA_FRAME_MAX];
	size_t len;
};

static u16 fr_pd_len(const struct frame *f)
{
	return get_be16(f->b + 18);
}

static bool fr_enhanced(const struct frame *f)
{
	return f->b[17] >= SIW2_MPA_REV_2 && f->b[16] & SIW2_MPA_FLAG_S;
}

/* May @f, as far as it goes, still become one of the two Keys? */
static bool fr_key_prefix(const struct frame *f)
{
	size_t k = f->len < SIW2_MPA_KEY_LEN ? f->len : SIW2_MPA_KEY_LEN;

	return !memcmp(f->b, SIW2_MPA_KEY_REQ, k) ||
	       !memcmp(f->b, SIW2_MPA_KEY_REP, k);
}

static u8 v2_rtr(u16 ird, u16 ord)
{
	return (ird & SIW2_MPA_V2_B ? SIW2_MPA_RTR_SEND : 0) |
	       (ord & SIW2_MPA_V2_C ? SIW2_MPA_RTR_WRITE : 0) |
	       (ord & SIW2_MPA_V2_D ? SIW2_MPA_RTR_READ : 0);
}

static bool one_bit(u8 v)
{
	return v && !(v & (v - 1));
}

static struct siw2_mpa_params cm_params(u8 flags, bool markers, bool crc,
					u8 b_ird, u8 b_ord,
					enum siw2_mpa_role role)
{
	struct siw2_mpa_params p;

	memset(&p, 0, sizeof(p));
	p.rev = flags & FZ_CM_REV2 ? SIW2_MPA_REV_2 : SIW2_MPA_REV_1;
	p.markers = markers;
	p.crc = crc;
	p.rtr = flags >> FZ_CM_RTR_SHIFT & SIW2_MPA_RTR_ALL;
	p.ird = fz_ird_ord(b_ird);
	p.ord = fz_ird_ord(b_ord);
	if (role == SIW2_MPA_INITIATOR) {
		p.p2p = p.rev == SIW2_MPA_REV_2 && flags & FZ_CM_P2P;
		if (p.p2p && !p.rtr)
			p.rtr = SIW2_MPA_RTR_WRITE;
		if (!p.p2p)
			p.rtr = 0;
	} else if (p.rev == SIW2_MPA_REV_2 && !p.rtr) {
		p.rtr = SIW2_MPA_RTR_ALL;
	}
	return p;
}

/*
 * A frame siw2_mpa_cm_request/_accept/_reject() wrote, read back by hand
 * (RFC 5044 7.1.1, RFC 6581 6): Key, flags, revision, length and data.
 */
static void check_out_frame(const u8 *b, size_t len, const char *key,
			    u8 flags, u8 rev, bool enh, const u8 *pd,
			    u16 pd_len, u16 *ird_raw, u16 *ord_raw)
{
	size_t pre = enh ? sizeof(struct siw2_mpa_v2) : 0;

	CHECK(len == sizeof(struct siw2_mpa_rr) + pre + pd_len);
	CHECK(!memcmp(b, key, SIW2_MPA_KEY_LEN));
	CHECK(b[16] == (flags | (enh ? SIW2_MPA_FLAG_S : 0)));
	CHECK(b[17] == rev);
	CHECK(get_be16(b + 18) == pre + pd_len);
	CHECK(!pd_len || !memcmp(b + 20 + pre, pd, pd_len));
	*ird_raw = enh ? get_be16(b + 20) : 0;
	*ord_raw = enh ? get_be16(b + 22) : 0;
}

/* What the peer's frame told us, in conn (RFC 5044 7.1.1, RFC 6581 9). */
static void check_conn_from(const struct siw2_mpa_cm *cm,
			    const struct frame *f)
{
	const struct siw2_mpa_conn *c = &cm->conn;
	bool enh = fr_enhanced(f);
	size_t pre = enh ? 4 : 0;

	CHECK(f->len == 20 + fr_pd_len(f));
	CHECK(c->enhanced == enh);
	CHECK(c->rev == (f->b[17] < cm->local.rev ? f->b[17] : cm->local.rev));
	CHECK(c->crc == (cm->local.crc || f->b[16] & SIW2_MPA_FLAG_C));
	CHECK(c->tx_markers == !!(f->b[16] & SIW2_MPA_FLAG_M));
	CHECK(c->rx_markers == cm->local.markers);
	CHECK(c->pdata_len == fr_pd_len(f) - pre);
	CHECK(c->pdata >= cm->frame && c->pdata + c->pdata_len <=
	      cm->frame + sizeof(cm->frame));
	CHECK(!c->pdata_len || !memcmp(c->pdata, f->b + 20 + pre,
				       c->pdata_len));
	if (enh) {
		CHECK(c->peer_ird == (get_be16(f->b + 20) & 0x3fff));
		CHECK(c->peer_ord == (get_be16(f->b + 22) & 0x3fff));
	}
}

/*
 * The initiator's verdict on a complete Reply, from RFC 5044 7.1.2 and
 * RFC 6581 9, 10, in the order the rules apply.
 */
static enum siw2_mpa_err reply_verdict(const struct siw2_mpa_params *p,
				       const struct frame *f,
				       enum siw2_mpa_cm_action *act)
{
	u16 pd_len = fr_pd_len(f), ird_raw, ord_raw, peer_ird, peer_ord;
	bool enh = fr_enhanced(f), req_enh = p->rev == SIW2_MPA_REV_2;
	u8 usable;

	*act = SIW2_MPA_CM_ERROR;
	if (memcmp(f->b, SIW2_MPA_KEY_REP, SIW2_MPA_KEY_LEN))
		return memcmp(f->b, SIW2_MPA_KEY_REQ, SIW2_MPA_KEY_LEN) ?
		       SIW2_MPA_ERR_KEY : SIW2_MPA_ERR_INIT_INIT;
	if (f->b[17] < 1 || f->b[17] > 2)
		return SIW2_MPA_ERR_REV;
	if (pd_len > SIW2_MPA_PD_MAX)
		return SIW2_MPA_ERR_PD_LEN;
	if (enh && pd_len < 4)
		return SIW2_MPA_ERR_ENH_SHORT;
	if (enh && !req_enh)
		return SIW2_MPA_ERR_ENH_UNSOLICITED;
	if (f->len < 20u + pd_len) {
		*act = SIW2_MPA_CM_NEED_MORE;
		return SIW2_MPA_OK;
	}
	if (f->b[16] & SIW2_MPA_FLAG_R) {
		*act = SIW2_MPA_CM_REJECTED;
		return SIW2_MPA_OK;
	}
	*act = SIW2_MPA_CM_ESTABLISHED;
	if (!enh)
		return req_enh ? (*act = SIW2_MPA_CM_ERROR,
				  SIW2_MPA_ERR_ENH_MISSING) : SIW2_MPA_OK;
	*act = SIW2_MPA_CM_ERROR;
	ird_raw = get_be16(f->b + 20);
	ord_raw = get_be16(f->b + 22);
	peer_ird = ird_raw & 0x3fff;
	peer_ord = ord_raw & 0x3fff;
	if (ird_raw & SIW2_MPA_V2_A && !p->p2p)
		return SIW2_MPA_ERR_P2P_UNSOLICITED;
	if (p->ird != FZ_NONE && peer_ord != FZ_NONE && peer_ord > p->ird)
		return SIW2_MPA_ERR_IRD;
	if (p->p2p) {
		usable = v2_rtr(ird_raw, ord_raw) & p->rtr;
		if (!peer_ird)
			usable &= ~SIW2_MPA_RTR_READ;
		if (!(ird_raw & SIW2_MPA_V2_A) || !usable)
			return SIW2_MPA_ERR_NO_RTR;
	}
	*act = SIW2_MPA_CM_ESTABLISHED;
	return SIW2_MPA_OK;
}

static void check_initiator_est(const struct siw2_mpa_cm *cm,
				const struct frame *f)
{
	const struct siw2_mpa_params *p = &cm->local;
	const struct siw2_mpa_conn *c = &cm->conn;
	u16 ird_raw = get_be16(f->b + 20), ord_raw = get_be16(f->b + 22);

	check_conn_from(cm, f);
	CHECK(siw2_mpa_cm_may_send(cm));
	CHECK(c->ird == p->ird);
	if (!c->enhanced) {
		CHECK(c->ord == p->ord && !c->p2p && !c->rtr);
		return;
	}
	/* RFC 6581 9.1: our ORD no more than the responder's IRD. */
	if (p->ord != FZ_NONE && c->peer_ird != FZ_NONE)
		CHECK(c->ord == (p->ord < c->peer_ird ? p->ord : c->peer_ird));
	else
		CHECK(c->ord == p->ord);
	/* RFC 6581 9.2: one RTR both sides can do, a Read one needs IRD. */
	CHECK(c->p2p == p->p2p);
	if (p->p2p) {
		CHECK(one_bit(c->rtr));
		CHECK(c->rtr & v2_rtr(ird_raw, ord_raw) & p->rtr);
		CHECK(c->rtr != SIW2_MPA_RTR_READ || c->peer_ird);
	} else {
		CHECK(!c->rtr);
	}
}

/*
 * Responder's answer, read back by hand: RFC 6581 9.1 IRD/ORD adjustment
 * and 9.2 RTR echo; conn must say what the frame says.
 */
static void check_reply(const struct siw2_mpa_cm *cm, const u8 *b,
			size_t len, bool reject, u16 ird, u16 ord,
			const u8 *pd, u16 pd_len, const struct frame *req)
{
	const struct siw2_mpa_params *p = &cm->local;
	const struct siw2_mpa_conn *c = &cm->conn;
	u8 flags = (p->markers ? SIW2_MPA_FLAG_M : 0) |
		   (c->crc ? SIW2_MPA_FLAG_C : 0) |
		   (reject ? SIW2_MPA_FLAG_R : 0);
	u16 ird_raw, ord_raw, rird, rord, req_ird = 0;
	bool req_p2p;
	u8 req_rtr;

	check_out_frame(b, len, SIW2_MPA_KEY_REP, flags, c->rev, c->enhanced,
			pd, pd_len, &ird_raw, &ord_raw);
	CHECK(!siw2_mpa_cm_may_send(cm));
	if (!c->enhanced)
		return;
	if (fr_enhanced(req))
		req_ird = get_be16(req->b + 20);
	req_p2p = req_ird & SIW2_MPA_V2_A;
	req_rtr = req_p2p ? v2_rtr(req_ird, get_be16(req->b + 22)) : 0;
	rird = ird_raw & 0x3fff;
	rord = ord_raw & 0x3fff;
	CHECK(!!(ird_raw & SIW2_MPA_V2_A) == req_p2p && c->p2p == req_p2p);
	CHECK(v2_rtr(ird_raw, ord_raw) == (req_p2p ? c->rtr : 0));
	if (req_p2p) {
		/* Ours that the initiator named, or all of ours. */
		CHECK(c->rtr == ((req_rtr & p->rtr) ? (req_rtr & p->rtr) :
			       p->rtr));
	}
	if (reject) {
		CHECK(rird == ird && rord == ord);
		return;
	}
	if (c->peer_ird == FZ_NONE)
		CHECK(rord == FZ_NONE);
	else if (ord != FZ_NONE)
		CHECK(rord == (ord < c->peer_ird ? ord : c->peer_ird));
	else
		CHECK(rord == FZ_NONE);
	if (c->peer_ord == FZ_NONE)
		CHECK(rird == FZ_NONE);
	else if (c->rtr & SIW2_MPA_RTR_READ && !ird)
		CHECK(rird == 1);
	else
		CHECK(rird == ird);
	CHECK(c->ird == (rird == FZ_NONE ? ird : rird));
	CHECK(c->ord == (rord == FZ_NONE ? ord : rord));
}

static bool conn_same(const struct siw2_mpa_conn *a,
		      const struct siw2_mpa_conn *b)
{
	return a->rev == b->rev && a->enhanced == b->enhanced &&
	       a->crc == b->crc && a->tx_markers == b->tx_markers &&
	       a->rx_markers == b->rx_markers && a->p2p == b->p2p &&
	       a->rtr == b->rtr && a->ird == b->ird && a->ord == b->ord &&
	       a->peer_ird == b->peer_ird && a->peer_ord == b->peer_ord &&
	       a->pdata == b->pdata && a->pdata_len == b->pdata_len;
}

/* The input ends during setup: the caller's timer or TCP's end. */
static void cm_give_up(struct siw2_mpa_cm *cm, const struct frame *f,
		       bool close)
{
	enum siw2_mpa_cm_action a;
	bool retry;

	a = close ? siw2_mpa_cm_closed(cm) : siw2_mpa_cm_timeout(cm);
	CHECK(a == SIW2_MPA_CM_ERROR);
	if (f->len >= sizeof(struct siw2_mpa_rr))
		CHECK(cm->err == SIW2_MPA_ERR_PD_TRUNCATED);
	else
		CHECK(cm->err == (close ? SIW2_MPA_ERR_CLOSED :
					  SIW2_MPA_ERR_TIMEOUT));
	retry = siw2_mpa_cm_retry_rev1(cm);
	CHECK(retry == (cm->role == SIW2_MPA_INITIATOR &&
			cm->local.rev == SIW2_MPA_REV_2 && close && !f->len));
	CHECK(siw2_mpa_cm_timeout(cm) == SIW2_MPA_CM_ERROR);
}

/*
 * Feeds @len octets to siw2_mpa_cm_rx(), keeping our own copy of the
 * frame. Returns the action; *@used gets the octets it took.
 */
static enum siw2_mpa_cm_action cm_feed(struct siw2_mpa_cm *cm,
				       struct frame *f, const u8 *buf,
				       size_t len, size_t *used)
{
	enum siw2_mpa_cm_action a;
	enum siw2_mpa_err err;
	size_t n;

	a = siw2_mpa_cm_rx(cm, buf, len, used);
	CHECK(*used <= len);
	CHECK(f->len + *used <= sizeof(f->b));
	memcpy(f->b + f->len, buf, *used);
	f->len += *used;
	switch (a) {
	case SIW2_MPA_CM_NEED_MORE:
		CHECK(*used == len);
		/* RFC 5044 7.1.2 rule 5: off both Keys is off at once. */
		CHECK(fr_key_prefix(f));
		break;
	case SIW2_MPA_CM_ERROR:
		err = cm->err;
		CHECK(err != SIW2_MPA_OK && siw2_mpa_err_str(err));
		CHECK(!siw2_mpa_cm_may_send(cm));
		/* Latched. */
		CHECK(siw2_mpa_cm_rx(cm, buf, len, &n) == SIW2_MPA_CM_ERROR);
		CHECK(n == 0 && cm->err == err);
		CHECK(siw2_mpa_cm_closed(cm) == SIW2_MPA_CM_ERROR);
		CHECK(cm->err == err);
		break;
	case SIW2_MPA_CM_REQUEST:
		CHECK(cm->role == SIW2_MPA_RESPONDER);
		break;
	case SIW2_MPA_CM_ESTABLISHED:
	case SIW2_MPA_CM_REJECTED:
		CHECK(cm->role == SIW2_MPA_INITIATOR);
		break;
	default:
		FAIL("siw2_mpa_cm_rx() action %d", a);
	}
	return a;
}

static void rnd_pd(struct prng *r, u8 *pd, u16 *len, u16 max)
{
	*len = one_in(r, 4) ? 0 : rnd_below(r, max + 1);
	rnd_fill(r, pd, *len);
}

static void run_cm_init(const struct opts *o, struct prng *r, struct cur *c)
{
	struct siw2_mpa_params p = cm_params(o->flags, o->markers, o->crc,
					     o->b5, o->b6, SIW2_MPA_INITIATOR);
	struct siw2_mpa_cm *cm = xmalloc(sizeof(*cm));
	struct splitter sp = { o, r, 0 };
	struct frame *f = xmalloc(sizeof(*f));
	u8 req[SIW2_MPA_FRAME_MAX], pd[SIW2_MPA_PD_MAX + 1];
	enum siw2_mpa_cm_action a = SIW2_MPA_CM_NEED_MORE, want;
	enum siw2_mpa_err verdict;
	u16 pd_len, ird_raw, ord_raw;
	size_t rlen, off = 0, n, used, want_len;
	bool enh = p.rev == SIW2_MPA_REV_2;
	struct eng e;
	u8 *chunk;

	memset(f, 0, sizeof(*f));
	CHECK(siw2_mpa_cm_init(cm, SIW2_MPA_INITIATOR, &p) == SIW2_MPA_OK);
	CHECK(!siw2_mpa_cm_may_send(cm));
	/* Local mistakes change nothing (RFC 5044 7.1.1: 512 at most). */
	rnd_fill(r, pd, sizeof(pd));
	CHECK(siw2_mpa_cm_request(cm, pd, SIW2_MPA_PD_MAX + 1 - (enh ? 4 : 0),
				  req, sizeof(req), &rlen) ==
	      SIW2_MPA_ERR_PD_TOO_LONG);
	rnd_pd(r, pd, &pd_len, 64);
	want_len = sizeof(struct siw2_mpa_rr) + (enh ? 4 : 0) + pd_len;
	CHECK(siw2_mpa_cm_request(cm, pd, pd_len, req, want_len - 1, &rlen) ==
	      SIW2_MPA_ERR_NOSPC);
	CHECK(siw2_mpa_cm_request(cm, pd, pd_len, req, want_len, &rlen) ==
	      SIW2_MPA_OK);
	check_out_frame(req, rlen, SIW2_MPA_KEY_REQ,
			(p.markers ? SIW2_MPA_FLAG_M : 0) |
			(p.crc ? SIW2_MPA_FLAG_C : 0), p.rev, enh, pd, pd_len,
			&ird_raw, &ord_raw);
	if (enh) {
		CHECK((ird_raw & 0x3fff) == p.ird && (ord_raw & 0x3fff) == p.ord);
		CHECK(!!(ird_raw & SIW2_MPA_V2_A) == p.p2p);
		CHECK(v2_rtr(ird_raw, ord_raw) == (p.p2p ? p.rtr : 0));
	}
	CHECK(siw2_mpa_cm_request(cm, pd, pd_len, req, sizeof(req), &rlen) ==
	      SIW2_MPA_ERR_STATE);

	while (off < c->n && a == SIW2_MPA_CM_NEED_MORE) {
		n = split_next(&sp, c->n - off);
		chunk = dup_bytes(c->p + off, n);
		a = cm_feed(cm, f, chunk, n, &used);
		free(chunk);
		off += used;
	}
	if (a == SIW2_MPA_CM_NEED_MORE) {
		cm_give_up(cm, f, o->flags & FZ_CM_CLOSE);
		goto out;
	}
	TRACE("initiator: action %d, err %d\n", a, cm->err);
	verdict = reply_verdict(&p, f, &want);
	if (a != want || (a == SIW2_MPA_CM_ERROR && cm->err != verdict))
		FAIL("initiator: action %d err %d, rules say %d err %d", a,
		     cm->err, want, verdict);
	if (a == SIW2_MPA_CM_REJECTED) {
		check_conn_from(cm, f);
		CHECK(!siw2_mpa_cm_may_send(cm));
		goto out;
	}
	if (a != SIW2_MPA_CM_ESTABLISHED)
		goto out;
	check_initiator_est(cm, f);
	CHECK(siw2_mpa_cm_timeout(cm) == SIW2_MPA_CM_ESTABLISHED);
	eng_init(&e, o, r, cm->conn.rx_markers, cm->conn.crc, 0);
	/* RFC 6581 9.2: our Read RTR went out first. */
	e.rtr_read_out = cm->conn.p2p && cm->conn.rtr == SIW2_MPA_RTR_READ;
	eng_feed_split(&e, &sp, c->p + off, c->n - off);
	eng_trace(&e, "initiator");
out:
	free(f);
	free(cm);
}

static void run_cm_resp(const struct opts *o, struct prng *r, struct cur *c)
{
	struct siw2_mpa_params p = cm_params(o->flags, o->markers, o->crc,
					     0, 0, SIW2_MPA_RESPONDER);
	struct siw2_mpa_cm *cm = xmalloc(sizeof(*cm));
	struct splitter sp = { o, r, 0 };
	struct frame *f = xmalloc(sizeof(*f));
	u8 rep[SIW2_MPA_FRAME_MAX], pd[SIW2_MPA_PD_MAX + 8];
	enum siw2_mpa_cm_action a = SIW2_MPA_CM_NEED_MORE;
	enum siw2_mpa_err err, want = SIW2_MPA_OK;
	u16 ird = fz_ird_ord(o->b5), ord = fz_ird_ord(o->b6), pd_len, room;
	size_t rlen, off = 0, n, used;
	bool reject = o->flags & FZ_CM_REJECT;
	struct siw2_mpa_conn saved;
	struct eng e;
	u8 *chunk;

	memset(f, 0, sizeof(*f));
	CHECK(siw2_mpa_cm_init(cm, SIW2_MPA_RESPONDER, &p) == SIW2_MPA_OK);
	CHECK(siw2_mpa_cm_accept(cm, 0, 0, NULL, 0, rep, sizeof(rep), &rlen) ==
	      SIW2_MPA_ERR_STATE);
	while (off < c->n && a == SIW2_MPA_CM_NEED_MORE) {
		n = split_next(&sp, c->n - off);
		chunk = dup_bytes(c->p + off, n);
		a = cm_feed(cm, f, chunk, n, &used);
		free(chunk);
		off += used;
	}
	if (a == SIW2_MPA_CM_NEED_MORE) {
		cm_give_up(cm, f, o->flags & FZ_CM_CLOSE);
		goto out;
	}
	TRACE("responder: action %d, err %d\n", a, cm->err);
	/* The rules of RFC 5044 7.1.1 and RFC 6581 6 for a Request. */
	if (memcmp(f->b, SIW2_MPA_KEY_REQ, SIW2_MPA_KEY_LEN))
		want = SIW2_MPA_ERR_KEY;
	else if (f->b[17] < 1 || f->b[17] > p.rev)
		want = SIW2_MPA_ERR_REV;
	else if (fr_pd_len(f) > SIW2_MPA_PD_MAX)
		want = SIW2_MPA_ERR_PD_LEN;
	else if (fr_enhanced(f) && fr_pd_len(f) < 4)
		want = SIW2_MPA_ERR_ENH_SHORT;
	if (want || a == SIW2_MPA_CM_ERROR) {
		if (a != SIW2_MPA_CM_ERROR || cm->err != want)
			FAIL("responder: action %d err %d, rules say err %d",
			     a, cm->err, want);
		goto out;
	}
	CHECK(a == SIW2_MPA_CM_REQUEST);
	check_conn_from(cm, f);
	CHECK(siw2_mpa_cm_rx(cm, c->p, 0, &used) == SIW2_MPA_CM_NEED_MORE);

	if (o->flags & FZ_CM_EARLY && off == c->n) {
		/* The ULP never decided (7.1.2 rule 10), or TCP ended. */
		a = o->flags & FZ_CM_CLOSE ? siw2_mpa_cm_closed(cm) :
					     siw2_mpa_cm_timeout(cm);
		CHECK(a == SIW2_MPA_CM_ERROR);
		CHECK(cm->err == (o->flags & FZ_CM_CLOSE ? SIW2_MPA_ERR_CLOSED :
				  SIW2_MPA_ERR_TIMEOUT));
		goto out;
	}
	if (o->flags & FZ_CM_EARLY && off < c->n) {
		/* 7.1.2 rule 9: nothing may follow the Request yet. */
		chunk = dup_bytes(c->p + off, 1);
		CHECK(cm_feed(cm, f, chunk, 1, &used) == SIW2_MPA_CM_ERROR);
		CHECK(cm->err == SIW2_MPA_ERR_PD_EXCESS);
		free(chunk);
		goto out;
	}

	/* Local mistakes leave everything as it was. */
	room = cm->conn.enhanced ? SIW2_MPA_PD_MAX - 4 : SIW2_MPA_PD_MAX;
	saved = cm->conn;
	rnd_fill(r, pd, sizeof(pd));
	err = siw2_mpa_cm_accept(cm, ird, ord, pd, room + 1, rep, sizeof(rep),
				 &rlen);
	CHECK(err == SIW2_MPA_ERR_PD_TOO_LONG);
	rnd_pd(r, pd, &pd_len, room);
	err = siw2_mpa_cm_reject(cm, ird, ord, pd, pd_len, rep, 19, &rlen);
	CHECK(err == SIW2_MPA_ERR_NOSPC);
	CHECK(conn_same(&saved, &cm->conn));
	CHECK(siw2_mpa_cm_accept(cm, 0x4000, ord, NULL, 0, rep, sizeof(rep),
				 &rlen) == SIW2_MPA_ERR_PARAM);

	if (reject) {
		CHECK(siw2_mpa_cm_reject(cm, ird, ord, pd, pd_len, rep,
					 sizeof(rep), &rlen) == SIW2_MPA_OK);
		check_reply(cm, rep, rlen, true, ird, ord, pd, pd_len, f);
		CHECK(siw2_mpa_cm_closed(cm) == SIW2_MPA_CM_REJECTED);
		goto out;
	}
	CHECK(siw2_mpa_cm_accept(cm, ird, ord, pd, pd_len, rep, sizeof(rep),
				 &rlen) == SIW2_MPA_OK);
	check_reply(cm, rep, rlen, false, ird, ord, pd, pd_len, f);
	CHECK(siw2_mpa_cm_accept(cm, ird, ord, pd, pd_len, rep, sizeof(rep),
				 &rlen) == SIW2_MPA_ERR_STATE);
	eng_init(&e, o, r, cm->conn.rx_markers, cm->conn.crc, 0);
	e.cm = cm;
	e.await_rtr = cm->conn.p2p;
	eng_feed_split(&e, &sp, c->p + off, c->n - off);
	eng_trace(&e, "responder");
	CHECK(siw2_mpa_cm_may_send(cm) == e.cm_est);
	if (!e.cm_est) {
		/* 7.1.2 rule 4: no verified FPDU before the timer or FIN. */
		a = o->flags & FZ_CM_CLOSE ? siw2_mpa_cm_closed(cm) :
					     siw2_mpa_cm_timeout(cm);
		CHECK(a == SIW2_MPA_CM_ERROR && !siw2_mpa_cm_may_send(cm));
		CHECK(cm->err == (o->flags & FZ_CM_CLOSE ? SIW2_MPA_ERR_CLOSED :
				  SIW2_MPA_ERR_TIMEOUT));
	} else {
		CHECK(siw2_mpa_cm_closed(cm) == SIW2_MPA_CM_ESTABLISHED);
	}
out:
	free(f);
	free(cm);
}

/* Hands a frame over in chunks, as TCP would. */
static enum siw2_mpa_cm_action cm_deliver(struct siw2_mpa_cm *cm,
					  struct splitter *sp, const u8 *b,
					  size_t len)
{
	enum siw2_mpa_cm_action a = SIW2_MPA_CM_NEED_MORE;
	struct frame f;
	size_t off = 0, n, used;
	u8 *chunk;

	memset(&f, 0, sizeof(f));
	while (off < len && a == SIW2_MPA_CM_NEED_MORE) {
		n = split_next(sp, len - off);
		chunk = dup_bytes(b + off, n);
		a = cm_feed(cm, &f, chunk, n, &used);
		free(chunk);
		off += used;
	}
	CHECK(a == SIW2_MPA_CM_NEED_MORE || a == SIW2_MPA_CM_ERROR ||
	      off == len);
	return a;
}

/*
 * Both ends of the connection setup, talking to each other: the outcome
 * RFC 5044 7.1 and RFC 6581 9 predict, agreeing views of the connection,
 * then the negotiated FPDU stream each way (RTR first).
 */
static void run_handshake(const struct opts *o, struct prng *r, struct cur *c)
{
	struct siw2_mpa_params ip, rp;
	struct siw2_mpa_cm *ic = xmalloc(sizeof(*ic));
	struct siw2_mpa_cm *rc = xmalloc(sizeof(*rc));
	struct splitter sp = { o, r, 0 };
	u8 rflags = take8(c), rird = take8(c), rord = take8(c), lens = take8(c);
	u8 req[SIW2_MPA_FRAME_MAX], rep[SIW2_MPA_FRAME_MAX];
	u8 ipd[SIW2_MPA_PD_MAX], rpd[SIW2_MPA_PD_MAX];
	u16 ipd_len = (lens & 0x0f) * 8, rpd_len = (lens >> 4) * 8;
	u16 rird_v = fz_ird_ord(rird), rord_v = fz_ird_ord(rord);
	struct msgs *ms = NULL;
	enum siw2_mpa_cm_action a;
	size_t qlen, plen;
	bool nortr;

	ip = cm_params(o->flags, o->markers, o->crc, o->b5, o->b6,
		       SIW2_MPA_INITIATOR);
	rp = cm_params(rflags, rflags & FZ_HS_MARKERS, rflags & FZ_HS_CRC,
		       0, 0, SIW2_MPA_RESPONDER);
	CHECK(siw2_mpa_cm_init(ic, SIW2_MPA_INITIATOR, &ip) == SIW2_MPA_OK);
	CHECK(siw2_mpa_cm_init(rc, SIW2_MPA_RESPONDER, &rp) == SIW2_MPA_OK);
	rnd_fill(r, ipd, ipd_len);
	rnd_fill(r, rpd, rpd_len);
	CHECK(siw2_mpa_cm_request(ic, ipd, ipd_len, req, sizeof(req), &qlen) ==
	      SIW2_MPA_OK);

	a = cm_deliver(rc, &sp, req, qlen);
	TRACE("handshake: responder action %d err %d\n", a, rc->err);
	if (ip.rev > rp.rev) {
		/* RFC 6581 10: an old responder closes; we try rev 1. */
		CHECK(a == SIW2_MPA_CM_ERROR && rc->err == SIW2_MPA_ERR_REV);
		CHECK(siw2_mpa_cm_closed(ic) == SIW2_MPA_CM_ERROR);
		CHECK(siw2_mpa_cm_retry_rev1(ic));
		goto out;
	}
	CHECK(a == SIW2_MPA_CM_REQUEST);
	CHECK(rc->conn.pdata_len == ipd_len &&
	      !memcmp(rc->conn.pdata, ipd, ipd_len));
	CHECK(rc->conn.enhanced == (ip.rev == SIW2_MPA_REV_2));
	if (rc->conn.enhanced)
		CHECK(rc->conn.peer_ird == ip.ird && rc->conn.peer_ord == ip.ord);

	if (rflags & FZ_CM_REJECT) {
		CHECK(siw2_mpa_cm_reject(rc, rird_v, rord_v, rpd, rpd_len, rep,
					 sizeof(rep), &plen) == SIW2_MPA_OK);
		CHECK(cm_deliver(ic, &sp, rep, plen) == SIW2_MPA_CM_REJECTED);
		CHECK(ic->conn.pdata_len == rpd_len &&
		      !memcmp(ic->conn.pdata, rpd, rpd_len));
		goto out;
	}
	if (rc->conn.enhanced && rpd_len > SIW2_MPA_PD_MAX - 4)
		rpd_len = SIW2_MPA_PD_MAX - 4;
	CHECK(siw2_mpa_cm_accept(rc, rird_v, rord_v, rpd, rpd_len, rep,
				 sizeof(rep), &plen) == SIW2_MPA_OK);
	a = cm_deliver(ic, &sp, rep, plen);
	TRACE("handshake: initiator action %d err %d, rtr %u\n", a, ic->err,
	      ic->conn.rtr);
	nortr = ip.p2p && !(ip.rtr & rp.rtr);
	if (nortr) {
		CHECK(a == SIW2_MPA_CM_ERROR && ic->err == SIW2_MPA_ERR_NO_RTR);
		CHECK(siw2_mpa_err_wants_term(ic->err));
		goto out;
	}
	if (a != SIW2_MPA_CM_ESTABLISHED)
		FAIL("handshake: initiator action %d err %d", a, ic->err);
	CHECK(ic->conn.pdata_len == rpd_len &&
	      !memcmp(ic->conn.pdata, rpd, rpd_len));

	/* Both ends agree on what the wire carries (RFC 5044 7.1.1). */
	CHECK(ic->conn.crc == rc->conn.crc && ic->conn.crc == (ip.crc || rp.crc));
	CHECK(ic->conn.tx_markers == rc->conn.rx_markers);
	CHECK(ic->conn.rx_markers == rc->conn.tx_markers);
	CHECK(ic->conn.tx_markers == rp.markers && ic->conn.rx_markers == ip.markers);
	CHECK(ic->conn.rev == rc->conn.rev && ic->conn.enhanced == rc->conn.enhanced);
	CHECK(ic->conn.p2p == rc->conn.p2p);
	CHECK(!ic->conn.rtr || (ic->conn.rtr & rc->conn.rtr));
	/* RFC 6581 9.1: no side may have more Reads out than the other takes. */
	if (ic->conn.enhanced && ic->conn.ord != FZ_NONE &&
	    rc->conn.ird != FZ_NONE)
		CHECK(ic->conn.ord <= rc->conn.ird);
	if (ic->conn.enhanced && rc->conn.ord != FZ_NONE &&
	    ic->conn.ird != FZ_NONE)
		CHECK(rc->conn.ord <= ic->conn.ird);
	CHECK(siw2_mpa_cm_may_send(ic) && !siw2_mpa_cm_may_send(rc));

	ms = xmalloc(sizeof(*ms));
	msgs_parse(ms, o, r, c, ic->conn.rtr == SIW2_MPA_RTR_WRITE ?
		   SIW2_RDMAP_OP_WRITE : ic->conn.rtr == SIW2_MPA_RTR_READ ?
		   SIW2_RDMAP_OP_READ_REQ : ic->conn.rtr == SIW2_MPA_RTR_SEND ?
		   SIW2_RDMAP_OP_SEND : FZ_NO_RTR);
	if (!ms->n)
		goto out;
	if (rt_run(o, r, ms, ic->conn.tx_markers, ic->conn.crc, 0,
		   fz_mulpdu(o->b5, o->b6), rc))
		CHECK(siw2_mpa_cm_may_send(rc));
	rt_run(o, r, ms, rc->conn.tx_markers, rc->conn.crc, 0,
	       fz_mulpdu(o->b6, o->b5), NULL);
out:
	if (ms) {
		msgs_free(ms);
		free(ms);
	}
	free(ic);
	free(rc);
}

/* ---- FZ_MODE_DDP ---- */

/*
 * DDP receive fed directly, spans made up by the input: offsets may skip,
 * repeat or disagree on the ULPDU length, as a broken MPA would. DDP must
 * stay inside each span and fall silent after its one error.
 */
static void run_ddp(const struct opts *o, struct prng *r, struct cur *c)
{
	struct siw2_ddp_rx *rx = xmalloc(sizeof(*rx));
	struct siw2_ddp_rx_ev ev;
	enum siw2_ddp_ev_type t;
	u32 off = 0, ulen = 0, i, k;
	bool dead = false;
	const u8 *cursor, *p;
	size_t n;
	u8 sel, *span;

	siw2_ddp_rx_init(rx, o->ext);
	for (i = 0; i < 512 && c->n; i++) {
		sel = take8(c);
		switch (sel & 3) {
		case 0:
		case 1:
			if (sel & 0x80)
				off = take16(c);
			if (!off || sel & 0x40)
				ulen = take16(c);
			n = sel & 0x20 ? take8(c) : ulen - off;
			p = take(c, &n);
			span = dup_bytes(p, n);
			siw2_ddp_rx_span(rx, span, n, off, ulen);
			cursor = span;
			for (k = 0; k < n + 4; k++) {
				t = siw2_ddp_rx_next(rx, &ev);
				CHECK(t == ev.type);
				if (t == SIW2_DDP_EV_NONE)
					break;
				CHECK(!dead);
				CHECK(t == SIW2_DDP_EV_HEADER ||
				      t == SIW2_DDP_EV_PAYLOAD ||
				      t == SIW2_DDP_EV_ERROR);
				if (t == SIW2_DDP_EV_ERROR) {
					CHECK(ev.cause & SIW2_TERM_SET);
					dead = true;
				} else if (t == SIW2_DDP_EV_HEADER) {
					CHECK(siw2_ddp_rx_seg(rx)->op);
					CHECK(siw2_ddp_rx_seg(rx)->seg_len == ulen);
				} else {
					CHECK(ev.len >= 1 && ev.data >= cursor &&
					      ev.data + ev.len <= span + n);
					CHECK(ev.off + ev.len <=
					      siw2_ddp_rx_seg(rx)->len);
					cursor = ev.data + ev.len;
				}
			}
			CHECK(k < n + 4);
			free(span);
			off += n;
			break;
		case 2:
			t = siw2_ddp_rx_end(rx, &ev);
			CHECK(t == ev.type);
			if (dead) {
				CHECK(t == SIW2_DDP_EV_NONE);
			} else if (t == SIW2_DDP_EV_ERROR) {
				CHECK(ev.cause & SIW2_TERM_SET);
				dead = true;
			} else {
				CHECK(t == SIW2_DDP_EV_SEG_END ||
				      t == SIW2_DDP_EV_TERMINATE);
				if (t == SIW2_DDP_EV_TERMINATE)
					CHECK(ev.term &&
					      ev.term->cause & SIW2_TERM_SET);
			}
			off = 0;
			break;
		default:
			if (sel & 0x80) {
				siw2_ddp_rx_fail(rx, take32(c) | SIW2_TERM_SET);
				dead = true;
			} else {
				struct siw2_term_info ti;

				siw2_ddp_rx_term_prepare(rx, &ti, take32(c) |
							 SIW2_TERM_SET);
				term_roundtrip(&ti);
			}
			break;
		}
	}
	free(rx);
}

/* ---- Entry ---- */

int LLVMFuzzerTestOneInput(const u8 *data, size_t size)
{
	struct cur c = { data, size };
	struct prng r;
	struct opts o;
	u8 b0;

	if (size < FZ_HDR_LEN)
		return 0;
	b0 = take8(&c);
	o.mode = b0 & FZ_MODE_MASK;
	o.markers = b0 & FZ_F_MARKERS;
	o.crc = b0 & FZ_F_CRC;
	o.ext = b0 & FZ_F_EXT;
	o.split = b0 >> FZ_SPLIT_SHIFT;
	o.split_param = take8(&c);
	r.s = take16(&c) | (u64)b0 << 16;
	o.picky = r.s >> 14 & 3;
	o.flags = take8(&c);
	o.b5 = take8(&c);
	o.b6 = take8(&c);
	o.pos0 = fz_pos(take8(&c));

	switch (o.mode) {
	case FZ_MODE_CM_INIT:
		run_cm_init(&o, &r, &c);
		break;
	case FZ_MODE_CM_RESP:
		run_cm_resp(&o, &r, &c);
		break;
	case FZ_MODE_RAW:
		run_raw(&o, &r, &c);
		break;
	case FZ_MODE_FRAMED:
		run_framed(&o, &r, &c);
		break;
	case FZ_MODE_PARSE:
		run_parse(&o, &r, &c);
		break;
	case FZ_MODE_ROUNDTRIP:
		run_roundtrip(&o, &r, &c);
		break;
	case FZ_MODE_HANDSHAKE:
		run_handshake(&o, &r, &c);
		break;
	default:
		run_ddp(&o, &r, &c);
		break;
	}
	return 0;
}
