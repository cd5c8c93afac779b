// SPDX-License-Identifier: GPL-2.0
/*
 * Memory windows over a real siw2 connection, for the guest's mw suite
 * (the behaviour: issue 43, part 1). The server owns the windows: it
 * registers an MR with IBV_ACCESS_MW_BIND, allocates, binds, invalidates
 * and deallocates windows on it. The client is the peer that reaches the
 * owner's memory through them (RDMA Write, Read, Fetch and Add). The two
 * talk with Sends over the same connection (struct msg: a window's rkey,
 * address and length, "go on", "done"). Most scenarios end with a QP in
 * error, so each one runs on connections of its own.
 *
 * One line per check: "PASS name", "FAIL name: why" or "SKIP name: why";
 * other lines are information.
 *
 *   mw_test caps DEV [-T SEC]
 *     device attributes (max_mw, the two MEM_WINDOW flags), ibv_alloc_mw
 *     and ibv_dealloc_mw of both types as the debugfs "mw" counter sees
 *     them, other types refused with EINVAL.
 *
 *   mw_test -s SCENARIO server|client ADDR PORT [-T SEC]
 *     type1     ibv_bind_mw (signaled, IBV_WC_BIND_MW, mw->rkey
 *               incremented); Read, Write, Fetch and Add through the
 *               window over the binding QP and a Write and Read over a
 *               second QP of the PD; a rebind elsewhere, the new rkey
 *               works, the old one is refused.
 *     unbind    a bind of length 0 ends the window: its rkey is refused.
 *     unbound   the rkey of a window never bound is refused.
 *     outside   a Write just past the window's end, inside the MR.
 *     readonly  a Write to a window bound for remote read only.
 *     wrongkey  the window's index with another key.
 *     dealloc   the rkey of a deallocated window.
 *     type2     ibv_bind_mw on a type 2 window and IBV_WR_BIND_MW naming
 *               a type 1 window refused at once; IBV_WR_BIND_MW through
 *               ibv_post_send, the rkey sent in a Send posted right
 *               behind the bind; access over the binding QP, refused
 *               over a second QP of the PD; Local Invalidate ends it.
 *     type2x    ibv_wr_bind_mw on an extended QP; the peer's Send with
 *               Invalidate ends the window (IBV_WC_WITH_INV and the rkey
 *               at the owner), which then binds again with a new key.
 *     t1sinv    a Send with Invalidate naming a type 1 window gets a
 *               Terminate; the window still serves the PD's other QP.
 *     dereg     ibv_dereg_mr of an MR with windows bound: EBUSY, the MR
 *               still works; it succeeds once they are unbound,
 *               invalidated or deallocated.
 *     localerr  one connection per local error: binds that complete with
 *               IBV_WC_MW_BIND_ERR (no MW_BIND right, range beyond the MR,
 *               remote write without local write, ZERO_BASED, windows of
 *               another PD, a type 2 window bound twice), a window's rkey
 *               as an lkey and a Local Invalidate of a type 1 window
 *               (IBV_WC_LOC_PROT_ERR); each moves the QP to ERR and
 *               flushes the next WR.
 *     race      ibv_dealloc_mw while the peer's 64 MiB Write into the
 *               window arrives: it returns within a second, and nothing
 *               is placed after it returned.
 *
 * The owner keeps an image of what its MR must hold (the peer's permitted
 * Writes and atomics applied) and compares every octet of the MR with it,
 * so a refused access that changed anything, in the window or around it,
 * shows. The refusal itself is the owner's Terminate, which the suite
 * reads from the siw2_term_sent tracepoint. At the peer, a Terminate
 * moves the QP to ERR; the Read it names (its copy of the Read Request)
 * completes with IBV_WC_REM_ACCESS_ERR, the WRs after it are flushed. A
 * Write completes once TCP took it, so it may have completed before the
 * owner's Terminate arrives, which then names no WR: each refused Write
 * is followed by a Read of the owner's probe (a small MR of its own),
 * which the Terminate then ends (REM_ACCESS_ERR, REM_OP_ERR or a flush);
 * a Write still being sent when it arrives is flushed.
 *
 * -T SEC bounds every wait (default 30).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <netdb.h>
#include <poll.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <infiniband/verbs.h>
#include <rdma/rdma_cma.h>

#define MAXC 12			/* connections of one scenario */
#define NRECV 4			/* receives posted per connection */
#define MSG_LEN 64		/* one receive buffer */

/* The owner's window MR and where its windows go. */
#define WBUF_LEN 65536
#define WOFF 16384		/* the window */
#define WLEN 8192
#define W2OFF 40960		/* where a rebind moves it */
#define W2LEN 4096
#define ATOM_OFF 4096		/* in the window: one 64-bit word */
#define ATOM_START 1000ULL
#define ATOM_ADD 5ULL
#define XLEN 1024		/* one Write of the peer */

/* Control memory: the probe (remote read), a send slot, receives. */
#define CTL_LEN 8192
#define PROBE_LEN 64
#define CTL_SEND 256
#define CTL_RECV 1024

/* The peer's own buffer. */
#define CBUF_LEN 65536
#define L_SRC 0
#define L_READ 16384
#define L_ATOM 32768
#define L_PROBE 32832

#define RACE_LEN (64U << 20)

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

#define ACC_RW (IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_WRITE)
#define ACC_ALL (ACC_RW | IBV_ACCESS_REMOTE_ATOMIC)
#define MR_ACC (IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_MW_BIND)

/* wr_ids */
#define WR_BIND 11
#define WR_MSG 12
#define WR_OP 13
#define WR_PROBE 14
#define WR_INV 15
#define WR_BAD 16
#define WR_NEXT 17
#define NO_WC (~0ULL)		/* wr_id of "no completion came" */

/* Pattern seeds. */
enum { CANARY = 1, OWNER, P1, P2, P3, PROBE };

enum { MSG_WIN = 1, MSG_GO, MSG_DONE, MSG_ABORT };

/* A control message: the window to use (and the one before it). */
struct msg {
	uint32_t op;
	uint32_t rkey;
	uint64_t addr;
	uint64_t len;
	uint32_t old_rkey;
	uint32_t rsvd;
	uint64_t old_addr;
};

/* The owner's probe, in the Private Data of its accept. */
struct probe {
	uint64_t addr;
	uint32_t rkey;
	uint32_t rsvd;
};

struct conn {
	struct rdma_cm_id *id;
	struct ibv_cq *scq;
	struct ibv_cq *rcq;
	struct ibv_qp *qp;
	struct ibv_qp_ex *qpx;
	struct ibv_wc last_recv;	/* the last receive's completion */
	int idx;
	bool disc;
};

struct side {
	struct rdma_event_channel *ch;
	struct rdma_cm_id *listen_id;
	struct rdma_cm_event *stash;	/* a request that came early */
	struct ibv_context *verbs;
	struct ibv_pd *pd;
	unsigned char *ctl;
	struct ibv_mr *ctl_mr;
	unsigned char *buf;	/* owner: the window MR; peer: its own */
	size_t len;
	struct ibv_mr *mr;
	unsigned char *exp;	/* owner: what buf must hold */
	struct ibv_mw *mw[4];	/* owner: deallocated at the end */
	struct conn c[MAXC];
	struct probe probe;	/* peer: the owner's probe */
	bool server;
	bool ext;		/* owner: QPs with ibv_wr_bind_mw */
};

struct scenario {
	const char *name;
	int nconn;
	int (*server)(struct side *s);
	void (*client)(struct side *s);
	bool ext;
	bool seq;		/* a connection per case, one after another */
	size_t client_len;
};

static int timeout_s = 30;
static int failures;

static void check(bool ok, const char *name, const char *fmt, ...)
{
	va_list ap;

	if (ok) {
		printf("PASS %s\n", name);
		return;
	}
	failures++;
	printf("FAIL %s: ", name);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
}

static void skip(const char *name, const char *why)
{
	printf("SKIP %s: %s\n", name, why);
}

static const char *who(const struct side *s)
{
	return s->server ? "owner" : "peer";
}

static void info(const struct side *s, const char *fmt, ...)
{
	va_list ap;

	printf("%s: ", who(s));
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
}

static double now_s(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec + t.tv_nsec / 1e9;
}

static unsigned char pat(size_t i, unsigned int seed)
{
	return (unsigned char)(seed * 31 + i * 7 + (i >> 8));
}

static void pattern(unsigned char *p, size_t len, unsigned int seed)
{
	size_t i;

	for (i = 0; i < len; i++)
		p[i] = pat(i, seed);
}

static bool is_pattern(const unsigned char *p, size_t len, unsigned int seed)
{
	size_t i;

	for (i = 0; i < len; i++)
		if (p[i] != pat(i, seed))
			return false;
	return true;
}

/* What the owner puts in its window before the peer comes. */
static void window_image(unsigned char *p)
{
	uint64_t v = ATOM_START;

	pattern(p, WLEN, OWNER);
	memcpy(p + ATOM_OFF, &v, sizeof(v));
}

static const char *wc_str(const struct ibv_wc *wc)
{
	return wc->wr_id == NO_WC ? "no completion" :
				    ibv_wc_status_str(wc->status);
}

/* One completion of @cq within @secs seconds; wr_id NO_WC if none. */
static bool poll_wc(struct ibv_cq *cq, struct ibv_wc *wc, double secs)
{
	double end = now_s() + secs;

	do {
		if (ibv_poll_cq(cq, 1, wc) == 1)
			return true;
		usleep(200);
	} while (now_s() < end);
	memset(wc, 0, sizeof(*wc));
	wc->wr_id = NO_WC;
	return false;
}

/* ---- the RDMA CM ---- */

static struct conn *conn_of(struct side *s, struct rdma_cm_id *id)
{
	int i;

	for (i = 0; i < MAXC; i++)
		if (s->c[i].id == id)
			return &s->c[i];
	return NULL;
}

/*
 * The next CM event of type @want (for @id, or any with NULL) within
 * @secs seconds. Others are printed and acknowledged, except a connect
 * request, which is kept for the next wait for one. A connection's end
 * is noted in its conn. A connection that fails while @want is its
 * establishment ends the wait.
 */
static struct rdma_cm_event *get_event(struct side *s,
				       enum rdma_cm_event_type want,
				       struct rdma_cm_id *id, double secs)
{
	struct pollfd pfd = { .fd = s->ch->fd, .events = POLLIN };
	double end = now_s() + secs;
	enum rdma_cm_event_type type;
	struct rdma_cm_event *ev;
	bool mine;
	struct conn *c;

	if (want == RDMA_CM_EVENT_CONNECT_REQUEST && s->stash) {
		ev = s->stash;
		s->stash = NULL;
		return ev;
	}
	while (now_s() < end) {
		if (poll(&pfd, 1, 100) <= 0)
			continue;
		if (rdma_get_cm_event(s->ch, &ev))
			return NULL;
		c = conn_of(s, ev->id);
		info(s, "CM %s status=%d conn=%d", rdma_event_str(ev->event),
		     ev->status, c ? c->idx : -1);
		if (ev->event == RDMA_CM_EVENT_DISCONNECTED && c)
			c->disc = true;
		if (ev->event == want && (!id || ev->id == id))
			return ev;
		if (ev->event == RDMA_CM_EVENT_CONNECT_REQUEST && !s->stash) {
			s->stash = ev;
			continue;
		}
		if (ev->event == RDMA_CM_EVENT_CONNECT_REQUEST)
			rdma_reject(ev->id, NULL, 0);
		type = ev->event;
		mine = ev->id == id;
		rdma_ack_cm_event(ev);
		if (want == RDMA_CM_EVENT_ESTABLISHED && mine &&
		    (type == RDMA_CM_EVENT_REJECTED ||
		     type == RDMA_CM_EVENT_CONNECT_ERROR ||
		     type == RDMA_CM_EVENT_UNREACHABLE ||
		     type == RDMA_CM_EVENT_DISCONNECTED))
			return NULL;
	}
	info(s, "TIMEOUT waiting for %s", rdma_event_str(want));
	return NULL;
}

/* Waits up to @secs for every connection in use to be disconnected. */
static void wait_disconnected(struct side *s, double secs)
{
	double end = now_s() + secs;
	struct rdma_cm_event *ev;
	bool all;
	int i;

	for (;;) {
		all = true;
		for (i = 0; i < MAXC; i++)
			if (s->c[i].id && !s->c[i].disc)
				all = false;
		if (all || now_s() >= end)
			return;
		ev = get_event(s, RDMA_CM_EVENT_DISCONNECTED, NULL,
			       end - now_s());
		if (ev)
			rdma_ack_cm_event(ev);
	}
}

static int get_addr(const char *host, const char *port, struct sockaddr *sa)
{
	struct addrinfo hints = {
		.ai_flags = AI_NUMERICHOST,
		.ai_socktype = SOCK_STREAM,
	}, *res;

	if (getaddrinfo(host, port, &hints, &res))
		return -1;
	memcpy(sa, res->ai_addr, res->ai_addrlen);
	freeaddrinfo(res);
	return 0;
}

/* ---- resources ---- */

/* The PD and control memory of a side, on its first connection's device. */
static int side_init(struct side *s, struct ibv_context *verbs)
{
	s->verbs = verbs;
	s->pd = ibv_alloc_pd(verbs);
	s->ctl = aligned_alloc(4096, CTL_LEN);
	if (!s->pd || !s->ctl)
		return -1;
	memset(s->ctl, 0, CTL_LEN);
	pattern(s->ctl, PROBE_LEN, PROBE);
	s->ctl_mr = ibv_reg_mr(s->pd, s->ctl, CTL_LEN,
			       IBV_ACCESS_LOCAL_WRITE |
			       IBV_ACCESS_REMOTE_READ);
	if (!s->ctl_mr)
		return -1;
	s->probe = (struct probe){ .addr = (uintptr_t)s->ctl,
				   .rkey = s->ctl_mr->rkey };
	if (s->server)
		return 0;
	s->buf = aligned_alloc(4096, s->len);
	if (!s->buf)
		return -1;
	memset(s->buf, 0, s->len);
	s->mr = ibv_reg_mr(s->pd, s->buf, s->len, IBV_ACCESS_LOCAL_WRITE);
	return s->mr ? 0 : -1;
}

static unsigned char *recv_buf(struct side *s, struct conn *c, uint64_t slot)
{
	return s->ctl + CTL_RECV + (c->idx * NRECV + slot) * MSG_LEN;
}

static int post_recv(struct side *s, struct conn *c, uint64_t slot)
{
	struct ibv_sge sge = { .addr = (uintptr_t)recv_buf(s, c, slot),
			       .length = MSG_LEN, .lkey = s->ctl_mr->lkey };
	struct ibv_recv_wr wr = { .wr_id = slot, .sg_list = &sge,
				  .num_sge = 1 }, *bad;

	return ibv_post_recv(c->qp, &wr, &bad);
}

/* CQs, the QP (extended on the owner in scenario type2x), receives. */
static int conn_qp(struct side *s, struct conn *c)
{
	struct ibv_qp_init_attr_ex qa = {
		.cap = { .max_send_wr = 16, .max_recv_wr = NRECV,
			 .max_send_sge = 1, .max_recv_sge = 1 },
		.qp_type = IBV_QPT_RC,
		.comp_mask = IBV_QP_INIT_ATTR_PD,
		.pd = s->pd,
	};
	uint64_t i;

	c->scq = ibv_create_cq(s->verbs, 32, NULL, NULL, 0);
	c->rcq = ibv_create_cq(s->verbs, 32, NULL, NULL, 0);
	if (!c->scq || !c->rcq)
		return -1;
	qa.send_cq = c->scq;
	qa.recv_cq = c->rcq;
	if (s->server && s->ext) {
		qa.comp_mask |= IBV_QP_INIT_ATTR_SEND_OPS_FLAGS;
		qa.send_ops_flags = IBV_QP_EX_WITH_BIND_MW |
				    IBV_QP_EX_WITH_LOCAL_INV |
				    IBV_QP_EX_WITH_SEND;
	}
	if (s->server) {
		c->qp = ibv_create_qp_ex(s->verbs, &qa);
	} else {
		struct ibv_qp_init_attr ia = {
			.send_cq = c->scq, .recv_cq = c->rcq,
			.cap = qa.cap, .qp_type = IBV_QPT_RC,
		};

		if (!rdma_create_qp(c->id, s->pd, &ia))
			c->qp = c->id->qp;
	}
	if (s->server && s->ext) {
		c->qpx = c->qp ? ibv_qp_to_qp_ex(c->qp) : NULL;
		check(c->qpx && c->qpx->wr_bind_mw,
		      "ibv_create_qp_ex with IBV_QP_EX_WITH_BIND_MW gives a QP with wr_bind_mw",
		      "%s", c->qp ? "no wr_bind_mw" : strerror(errno));
		if (!c->qpx || !c->qpx->wr_bind_mw)
			return -1;
	}
	if (!c->qp)
		return -1;
	for (i = 0; i < NRECV; i++)
		if (post_recv(s, c, i))
			return -1;
	return 0;
}

static void conn_free(struct side *s, struct conn *c)
{
	if (c->qp) {
		if (s->server)
			ibv_destroy_qp(c->qp);
		else
			rdma_destroy_qp(c->id);
	}
	if (c->scq)
		ibv_destroy_cq(c->scq);
	if (c->rcq)
		ibv_destroy_cq(c->rcq);
	if (c->id)
		rdma_destroy_id(c->id);
	*c = (struct conn){ .idx = c->idx };
}

/* Everything, in an order that needs no window to be gone first. */
static void side_free(struct side *s)
{
	bool ok = true;
	int i;

	for (i = 0; i < 4; i++)
		if (s->mw[i])
			ok = !ibv_dealloc_mw(s->mw[i]) && ok;
	for (i = 0; i < MAXC; i++)
		conn_free(s, &s->c[i]);
	if (s->mr)
		ok = !ibv_dereg_mr(s->mr) && ok;
	if (s->ctl_mr)
		ok = !ibv_dereg_mr(s->ctl_mr) && ok;
	if (s->pd)
		ok = !ibv_dealloc_pd(s->pd) && ok;
	if (s->stash) {
		rdma_reject(s->stash->id, NULL, 0);
		rdma_ack_cm_event(s->stash);
	}
	if (s->listen_id)
		rdma_destroy_id(s->listen_id);
	if (s->ch)
		rdma_destroy_event_channel(s->ch);
	check(ok, s->server ?
	      "owner: windows, QPs, MRs and the PD are destroyed without error" :
	      "peer: QPs, MRs and the PD are destroyed without error",
	      "a destroy failed");
	free(s->buf);
	free(s->exp);
	free(s->ctl);
}

/* ---- control messages ---- */

static int send_msg(struct side *s, struct conn *c, const struct msg *m)
{
	struct ibv_sge sge = { .addr = (uintptr_t)s->ctl + CTL_SEND,
			       .length = sizeof(*m), .lkey = s->ctl_mr->lkey };
	struct ibv_send_wr wr = { .wr_id = WR_MSG, .sg_list = &sge,
				  .num_sge = 1, .opcode = IBV_WR_SEND,
				  .send_flags = IBV_SEND_SIGNALED }, *bad;
	struct ibv_wc wc;

	memcpy(s->ctl + CTL_SEND, m, sizeof(*m));
	if (ibv_post_send(c->qp, &wr, &bad)) {
		info(s, "control message %u not posted", m->op);
		return -1;
	}
	poll_wc(c->scq, &wc, timeout_s);
	if (wc.wr_id != WR_MSG || wc.status != IBV_WC_SUCCESS) {
		info(s, "control message %u: %s", m->op, wc_str(&wc));
		return -1;
	}
	return 0;
}

static void send_op(struct side *s, struct conn *c, uint32_t op)
{
	struct msg m = { .op = op };

	send_msg(s, c, &m);
}

/* The next message on @c, its receive posted again; -1 if none came. */
static int recv_msg(struct side *s, struct conn *c, struct msg *m)
{
	struct ibv_wc *wc = &c->last_recv;

	poll_wc(c->rcq, wc, timeout_s);
	if (wc->wr_id == NO_WC || wc->status != IBV_WC_SUCCESS) {
		info(s, "receive on connection %d: %s", c->idx, wc_str(wc));
		return -1;
	}
	memcpy(m, recv_buf(s, c, wc->wr_id), sizeof(*m));
	post_recv(s, c, wc->wr_id);
	return 0;
}

/* Waits for message @op; checks that it came, as @name. */
static bool expect_msg(struct side *s, struct conn *c, uint32_t op,
		       struct msg *m, const char *name)
{
	struct msg tmp;

	if (!m)
		m = &tmp;
	if (recv_msg(s, c, m)) {
		check(false, name, "no message (%s)", wc_str(&c->last_recv));
		return false;
	}
	if (m->op == MSG_ABORT) {
		info(s, "the owner gave up on this scenario");
		return false;
	}
	check(m->op == op, name, "message %u, want %u", m->op, op);
	return m->op == op;
}

/* ---- the owner's steps ---- */

/* A server step's result: go on, or tell the peer the scenario is off. */
#define ABORT 1

static uint64_t waddr(const struct side *s, size_t off)
{
	return (uintptr_t)s->buf + WOFF + off;
}

/* The window MR: canary pattern, the window's image, the expected copy. */
static int wsetup(struct side *s)
{
	s->len = WBUF_LEN;
	s->buf = aligned_alloc(4096, WBUF_LEN);
	s->exp = malloc(WBUF_LEN);
	if (!s->buf || !s->exp)
		return -1;
	pattern(s->buf, WBUF_LEN, CANARY);
	window_image(s->buf + WOFF);
	memcpy(s->exp, s->buf, WBUF_LEN);
	s->mr = ibv_reg_mr(s->pd, s->buf, WBUF_LEN, MR_ACC);
	check(s->mr,
	      "ibv_reg_mr with IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_MW_BIND",
	      "%s", strerror(errno));
	return s->mr ? 0 : -1;
}

/* The peer wrote pattern @seed at @off of the MR: expected now. */
static void exp_write(struct side *s, size_t off, size_t len,
		      unsigned int seed)
{
	pattern(s->exp + off, len, seed);
}

static void exp_atomic(struct side *s)
{
	uint64_t v = ATOM_START + ATOM_ADD;

	memcpy(s->exp + WOFF + ATOM_OFF, &v, sizeof(v));
}

/* Every octet of the window MR is what the permitted accesses made it. */
static void mem_check(struct side *s, const char *name)
{
	size_t i;

	for (i = 0; i < WBUF_LEN; i++)
		if (s->buf[i] != s->exp[i])
			break;
	check(i == WBUF_LEN, name,
	      "octet %zu (window offset %ld) is 0x%02x, want 0x%02x", i,
	      (long)i - WOFF, i < WBUF_LEN ? s->buf[i] : 0,
	      i < WBUF_LEN ? s->exp[i] : 0);
}

static struct ibv_mw *mw_alloc(struct side *s, struct ibv_pd *pd,
			       enum ibv_mw_type type, int slot,
			       const char *name)
{
	struct ibv_mw *mw;

	errno = 0;
	mw = ibv_alloc_mw(pd, type);
	check(mw && mw->type == type && mw->pd == pd, name, "%s",
	      mw ? "wrong type or PD" : strerror(errno));
	if (slot >= 0)
		s->mw[slot] = mw;
	return mw;
}

/* ibv_bind_mw of a type 1 window, signaled; its completion in @wc. */
static int bind1(struct conn *c, struct ibv_mw *mw, struct ibv_mr *mr,
		 uint64_t addr, uint64_t len, unsigned int acc,
		 struct ibv_wc *wc)
{
	struct ibv_mw_bind b = {
		.wr_id = WR_BIND,
		.send_flags = IBV_SEND_SIGNALED,
		.bind_info = { .mr = mr, .addr = addr, .length = len,
			       .mw_access_flags = acc },
	};
	int ret;

	memset(wc, 0, sizeof(*wc));
	wc->wr_id = NO_WC;
	ret = ibv_bind_mw(c->qp, mw, &b);
	if (!ret)
		poll_wc(c->scq, wc, timeout_s);
	return ret;
}

static bool bind_wc_ok(const struct ibv_wc *wc)
{
	return wc->wr_id == WR_BIND && wc->status == IBV_WC_SUCCESS &&
	       wc->opcode == IBV_WC_BIND_MW;
}

/* A type 1 bind that must work: posted, rkey incremented, completed. */
static bool bind1_ok(struct conn *c, struct ibv_mw *mw, struct ibv_mr *mr,
		     uint64_t addr, uint64_t len, unsigned int acc,
		     const char *name)
{
	uint32_t old;
	struct ibv_wc wc;
	int ret;

	if (!mw || !mr) {
		check(false, name, "no window or MR");
		return false;
	}
	old = mw->rkey;
	ret = bind1(c, mw, mr, addr, len, acc, &wc);
	check(!ret && mw->rkey == ibv_inc_rkey(old) && bind_wc_ok(&wc), name,
	      "post: %s, rkey 0x%x -> 0x%x (want 0x%x), completion: %s wr_id %llu opcode %d",
	      strerror(ret), old, mw->rkey, ibv_inc_rkey(old), wc_str(&wc),
	      (unsigned long long)wc.wr_id, wc.opcode);
	return !ret && mw->rkey == ibv_inc_rkey(old) && bind_wc_ok(&wc);
}

/*
 * IBV_WR_BIND_MW through ibv_post_send, signaled, and, if @m, a Send of
 * @m posted behind it in the same call. Completions in wc[0], wc[1].
 */
static int bind2(struct side *s, struct conn *c, struct ibv_mw *mw,
		 uint32_t rkey, struct ibv_mr *mr, uint64_t addr,
		 uint64_t len, unsigned int acc, const struct msg *m,
		 struct ibv_wc *wc)
{
	struct ibv_sge sge = { .addr = (uintptr_t)s->ctl + CTL_SEND,
			       .length = sizeof(*m), .lkey = s->ctl_mr->lkey };
	struct ibv_send_wr snd = { .wr_id = WR_MSG, .sg_list = &sge,
				   .num_sge = 1, .opcode = IBV_WR_SEND,
				   .send_flags = IBV_SEND_SIGNALED };
	struct ibv_send_wr wr = {
		.wr_id = WR_BIND,
		.next = m ? &snd : NULL,
		.opcode = IBV_WR_BIND_MW,
		.send_flags = IBV_SEND_SIGNALED,
		.bind_mw = { .mw = mw, .rkey = rkey,
			     .bind_info = { .mr = mr, .addr = addr,
					    .length = len,
					    .mw_access_flags = acc } },
	}, *bad;
	int ret;

	memset(wc, 0, 2 * sizeof(*wc));
	wc[0].wr_id = NO_WC;
	wc[1].wr_id = NO_WC;
	if (m)
		memcpy(s->ctl + CTL_SEND, m, sizeof(*m));
	ret = ibv_post_send(c->qp, &wr, &bad);
	if (ret)
		return ret;
	poll_wc(c->scq, &wc[0], timeout_s);
	if (m)
		poll_wc(c->scq, &wc[1], timeout_s);
	return 0;
}

/* The same through ibv_wr_bind_mw on an extended QP. */
static int bind2x(struct side *s, struct conn *c, struct ibv_mw *mw,
		  uint32_t rkey, struct ibv_mr *mr, uint64_t addr,
		  uint64_t len, unsigned int acc, const struct msg *m,
		  struct ibv_wc *wc)
{
	const struct ibv_mw_bind_info bi = { .mr = mr, .addr = addr,
					     .length = len,
					     .mw_access_flags = acc };
	struct ibv_qp_ex *q = c->qpx;
	int ret;

	memset(wc, 0, 2 * sizeof(*wc));
	wc[0].wr_id = NO_WC;
	wc[1].wr_id = NO_WC;
	memcpy(s->ctl + CTL_SEND, m, sizeof(*m));
	ibv_wr_start(q);
	q->wr_id = WR_BIND;
	q->wr_flags = IBV_SEND_SIGNALED;
	ibv_wr_bind_mw(q, mw, rkey, &bi);
	q->wr_id = WR_MSG;
	ibv_wr_send(q);
	ibv_wr_set_sge(q, s->ctl_mr->lkey, (uintptr_t)s->ctl + CTL_SEND,
		       sizeof(*m));
	ret = ibv_wr_complete(q);
	if (ret)
		return ret;
	poll_wc(c->scq, &wc[0], timeout_s);
	poll_wc(c->scq, &wc[1], timeout_s);
	return 0;
}

/* Checks a bind posted together with a control message. */
static bool bind_msg_ok(int ret, const struct ibv_wc *wc, const char *name)
{
	bool ok = !ret && bind_wc_ok(&wc[0]) && wc[1].wr_id == WR_MSG &&
		  wc[1].status == IBV_WC_SUCCESS;

	check(ok, name,
	      "post: %s, bind: %s wr_id %llu opcode %d, Send behind it: %s",
	      strerror(ret), wc_str(&wc[0]),
	      (unsigned long long)wc[0].wr_id, wc[0].opcode, wc_str(&wc[1]));
	return ok;
}

static int post_linv(struct conn *c, uint32_t rkey, struct ibv_wc *wc)
{
	struct ibv_send_wr wr = { .wr_id = WR_INV,
				  .opcode = IBV_WR_LOCAL_INV,
				  .send_flags = IBV_SEND_SIGNALED,
				  .invalidate_rkey = rkey }, *bad;
	int ret;

	memset(wc, 0, sizeof(*wc));
	wc->wr_id = NO_WC;
	ret = ibv_post_send(c->qp, &wr, &bad);
	if (!ret)
		poll_wc(c->scq, wc, timeout_s);
	return ret;
}

/* Nothing completes on @c's send queue for a while. */
static bool sq_quiet(struct conn *c)
{
	struct ibv_wc wc;

	return !poll_wc(c->scq, &wc, 0.3);
}

static enum ibv_qp_state qp_state(struct ibv_qp *qp)
{
	struct ibv_qp_init_attr init;
	struct ibv_qp_attr a;

	if (ibv_query_qp(qp, &a, IBV_QP_STATE, &init))
		return (enum ibv_qp_state)-1;
	return a.qp_state;
}

/*
 * The owner's QP @c went to ERR (a Terminate it sent): its receives
 * complete in error (the first may be the refused message's own).
 */
static bool wait_qp_err(struct side *s, struct conn *c, const char *name)
{
	enum ibv_qp_state st;
	struct ibv_wc wc;
	double end;

	for (;;) {
		poll_wc(c->rcq, &wc, timeout_s);
		if (wc.wr_id == NO_WC)
			break;
		info(s, "receive on connection %d: %s opcode %d flags 0x%x",
		     c->idx, wc_str(&wc), wc.opcode, wc.wc_flags);
		if (wc.status != IBV_WC_SUCCESS)
			break;
		post_recv(s, c, wc.wr_id);
	}
	/* the QP's state may follow the completion by a moment */
	end = now_s() + 5;
	while ((st = qp_state(c->qp)) != IBV_QPS_ERR && now_s() < end)
		usleep(10000);
	check(wc.wr_id != NO_WC && st == IBV_QPS_ERR, name,
	      "receives: %s, QP state %d", wc_str(&wc), st);
	return st == IBV_QPS_ERR;
}

/* ---- the peer's steps ---- */

static struct ibv_send_wr op_wr(struct side *s, struct ibv_sge *sge,
				enum ibv_wr_opcode op, uint32_t rkey,
				uint64_t raddr, size_t loff, uint32_t len,
				uint64_t wr_id)
{
	struct ibv_send_wr wr = { .wr_id = wr_id, .sg_list = sge,
				  .num_sge = 1, .opcode = op,
				  .send_flags = IBV_SEND_SIGNALED };

	*sge = (struct ibv_sge){ .addr = (uintptr_t)s->buf + loff,
				 .length = len, .lkey = s->mr->lkey };
	if (op == IBV_WR_ATOMIC_FETCH_AND_ADD) {
		wr.wr.atomic.remote_addr = raddr;
		wr.wr.atomic.rkey = rkey;
		wr.wr.atomic.compare_add = ATOM_ADD;
	} else {
		wr.wr.rdma.remote_addr = raddr;
		wr.wr.rdma.rkey = rkey;
	}
	return wr;
}

/*
 * One access, signaled: true if it completed as it should. A failure is
 * check @name's; its success is left to the caller (a data check).
 */
static bool access_ok(struct side *s, struct conn *c, enum ibv_wr_opcode op,
		      uint32_t rkey, uint64_t raddr, size_t loff,
		      uint32_t len, const char *name)
{
	static const enum ibv_wc_opcode wop[] = {
		[IBV_WR_RDMA_WRITE] = IBV_WC_RDMA_WRITE,
		[IBV_WR_RDMA_READ] = IBV_WC_RDMA_READ,
		[IBV_WR_ATOMIC_FETCH_AND_ADD] = IBV_WC_FETCH_ADD,
	};
	struct ibv_sge sge;
	struct ibv_send_wr wr = op_wr(s, &sge, op, rkey, raddr, loff, len,
				      WR_OP), *bad;
	struct ibv_wc wc = { .wr_id = NO_WC };
	int ret;

	ret = ibv_post_send(c->qp, &wr, &bad);
	if (!ret)
		poll_wc(c->scq, &wc, timeout_s);
	if (!ret && wc.wr_id == WR_OP && wc.status == IBV_WC_SUCCESS &&
	    wc.opcode == wop[op])
		return true;
	check(false, name,
	      "post: %s, completion: %s opcode %d (rkey 0x%x, address 0x%llx)",
	      strerror(ret), wc_str(&wc), wc.opcode, rkey,
	      (unsigned long long)raddr);
	return false;
}

/* Reads the whole window (@m) and compares it with the owner's image. */
static void c_read_window(struct side *s, struct conn *c,
			  const struct msg *m, const char *name)
{
	unsigned char img[WLEN];

	memset(s->buf + L_READ, 0, WLEN);
	if (!access_ok(s, c, IBV_WR_RDMA_READ, m->rkey, m->addr, L_READ,
		       WLEN, name))
		return;
	window_image(img);
	check(!memcmp(s->buf + L_READ, img, WLEN), name,
	      "the data read is not the owner's");
}

static void c_write(struct side *s, struct conn *c, uint32_t rkey,
		    uint64_t raddr, unsigned int seed, const char *name)
{
	pattern(s->buf + L_SRC, XLEN, seed);
	if (access_ok(s, c, IBV_WR_RDMA_WRITE, rkey, raddr, L_SRC, XLEN,
		      name))
		check(true, name, "");
}

static void c_readback(struct side *s, struct conn *c, uint32_t rkey,
		       uint64_t raddr, unsigned int seed, const char *name)
{
	memset(s->buf + L_READ, 0, XLEN);
	if (access_ok(s, c, IBV_WR_RDMA_READ, rkey, raddr, L_READ, XLEN,
		      name))
		check(is_pattern(s->buf + L_READ, XLEN, seed), name,
		      "the data read is not what was written");
}

static void c_fadd(struct side *s, struct conn *c, const struct msg *m,
		   const char *name)
{
	uint64_t orig;

	memset(s->buf + L_ATOM, 0, 8);
	if (!access_ok(s, c, IBV_WR_ATOMIC_FETCH_AND_ADD, m->rkey,
		       m->addr + ATOM_OFF, L_ATOM, 8, name))
		return;
	memcpy(&orig, s->buf + L_ATOM, 8);
	check(orig == ATOM_START, name, "original value %llu, want %llu",
	      (unsigned long long)orig, ATOM_START);
}

/* What c_refused() accepts besides REM_ACCESS_ERR. */
enum refusal {
	REFUSED,	/* or completed at send, the probe Read ended */
	ANY_ERROR,	/* an error at either (the spec names none) */
	OR_LANDED,	/* or both succeed: the owner saw it land whole */
};

/*
 * @wr must be refused by the owner: it completes with REM_ACCESS_ERR,
 * or, a Write or Send completed once TCP took it, the probe Read posted
 * behind it is ended by the Terminate (REM_ACCESS_ERR, REM_OP_ERR or a
 * flush).
 */
static void c_refused(struct side *s, struct conn *c, struct ibv_send_wr *wr,
		      enum refusal how, const char *name)
{
	struct ibv_sge psge;
	struct ibv_send_wr probe = op_wr(s, &psge, IBV_WR_RDMA_READ,
					 s->probe.rkey, s->probe.addr,
					 L_PROBE, PROBE_LEN, WR_PROBE), *bad;
	struct ibv_wc wc[2];
	enum ibv_wc_status a, b;
	bool ok;
	int ret;

	wr->next = &probe;
	memset(wc, 0, sizeof(wc));
	wc[0].wr_id = NO_WC;
	wc[1].wr_id = NO_WC;
	ret = ibv_post_send(c->qp, wr, &bad);
	if (!ret) {
		poll_wc(c->scq, &wc[0], timeout_s);
		poll_wc(c->scq, &wc[1], timeout_s);
	}
	a = wc[0].status;
	b = wc[1].status;
	ok = !ret && wc[0].wr_id == wr->wr_id && wc[1].wr_id == WR_PROBE;
	info(s, "refused: %s, then the probe Read: %s", wc_str(&wc[0]),
	     wc_str(&wc[1]));
	if (ok && how == OR_LANDED && a == IBV_WC_SUCCESS &&
	    b == IBV_WC_SUCCESS) {
		skip(name, "it completed before the window went");
		return;
	}
	if (how == ANY_ERROR)
		ok = ok && (a != IBV_WC_SUCCESS || b != IBV_WC_SUCCESS);
	else if (a == IBV_WC_REM_ACCESS_ERR || a == IBV_WC_WR_FLUSH_ERR)
		ok = ok && b != IBV_WC_SUCCESS;
	else
		ok = ok && a == IBV_WC_SUCCESS &&
		     (b == IBV_WC_REM_ACCESS_ERR || b == IBV_WC_REM_OP_ERR ||
		      b == IBV_WC_WR_FLUSH_ERR);
	check(ok, name, "post: %s, the access: %s, the probe Read behind it: %s",
	      strerror(ret), wc_str(&wc[0]), wc_str(&wc[1]));
}

static void c_refused_write(struct side *s, struct conn *c, uint32_t rkey,
			    uint64_t raddr, unsigned int seed,
			    const char *name)
{
	struct ibv_sge sge;
	struct ibv_send_wr wr = op_wr(s, &sge, IBV_WR_RDMA_WRITE, rkey, raddr,
				      L_SRC, XLEN, WR_OP);

	pattern(s->buf + L_SRC, XLEN, seed);
	c_refused(s, c, &wr, REFUSED, name);
}

/* A refused Read completes with REM_ACCESS_ERR (see top). */
static void c_refused_read(struct side *s, struct conn *c, uint32_t rkey,
			   uint64_t raddr, const char *name)
{
	struct ibv_sge sge;
	struct ibv_send_wr wr = op_wr(s, &sge, IBV_WR_RDMA_READ, rkey, raddr,
				      L_READ, XLEN, WR_OP), *bad;
	struct ibv_wc wc = { .wr_id = NO_WC };
	int ret;

	memset(s->buf + L_READ, 0, XLEN);
	ret = ibv_post_send(c->qp, &wr, &bad);
	if (!ret)
		poll_wc(c->scq, &wc, timeout_s);
	check(!ret && wc.wr_id == WR_OP && wc.status == IBV_WC_REM_ACCESS_ERR,
	      name, "post: %s, completion: %s", strerror(ret), wc_str(&wc));
	check(!s->buf[L_READ] &&
	      !memcmp(s->buf + L_READ, s->buf + L_READ + 1, XLEN - 1),
	      "the refused Read brought no data", "the read target changed");
}

static int c_win(struct side *s, struct conn *c, struct msg *m,
		 const char *name)
{
	return expect_msg(s, c, MSG_WIN, m, name) ? 0 : -1;
}

/* ---- scenarios ---- */

/* type1: bind, access over both QPs, rebind elsewhere, old rkey dead. */
static int srv_type1(struct side *s)
{
	struct conn *a = &s->c[0];
	struct ibv_mw *mw;
	struct msg m;
	uint32_t old;

	if (wsetup(s))
		return ABORT;
	mw = mw_alloc(s, s->pd, IBV_MW_TYPE_1, 0,
		      "ibv_alloc_mw(IBV_MW_TYPE_1)");
	if (!bind1_ok(a, mw, s->mr, waddr(s, 0), WLEN, ACC_ALL,
		      "ibv_bind_mw posts, mw->rkey is ibv_inc_rkey(old), IBV_WC_BIND_MW"))
		return ABORT;
	m = (struct msg){ .op = MSG_WIN, .rkey = mw->rkey,
			  .addr = waddr(s, 0), .len = WLEN };
	send_msg(s, a, &m);
	if (!expect_msg(s, a, MSG_DONE, NULL,
			"the peer's accesses through the window end"))
		return 0;
	exp_write(s, WOFF, XLEN, P1);
	exp_write(s, WOFF + 2048, XLEN, P2);
	exp_atomic(s);
	mem_check(s,
		  "owner's memory: the Writes over both QPs and the Fetch and Add landed in the window, nothing else changed");

	old = mw->rkey;
	if (!bind1_ok(a, mw, s->mr, (uintptr_t)s->buf + W2OFF, W2LEN, ACC_RW,
		      "rebind elsewhere: ibv_bind_mw posts, rkey incremented, IBV_WC_BIND_MW"))
		return ABORT;
	m = (struct msg){ .op = MSG_WIN, .rkey = mw->rkey,
			  .addr = (uintptr_t)s->buf + W2OFF, .len = W2LEN,
			  .old_rkey = old, .old_addr = waddr(s, 0) };
	send_msg(s, a, &m);
	wait_qp_err(s, a, "the owner's QP goes to ERR after refusing the old rkey");
	exp_write(s, W2OFF, XLEN, P3);
	mem_check(s,
		  "owner's memory: the Write through the moved window landed, nothing else changed");
	return 0;
}

static void cli_type1(struct side *s)
{
	struct conn *a = &s->c[0], *b = &s->c[1];
	struct msg m;

	if (c_win(s, a, &m, "the owner sends the window's rkey"))
		return;
	c_read_window(s, a, &m,
		      "Read of the whole window over the binding QP brings the owner's data");
	c_write(s, a, m.rkey, m.addr, P1,
		"Write into the window over the binding QP");
	c_fadd(s, a, &m,
	       "Fetch and Add in the window returns the original value");
	c_write(s, b, m.rkey, m.addr + 2048, P2,
		"a type 1 window serves another QP of its PD: Write over the second QP");
	c_readback(s, b, m.rkey, m.addr, P1,
		   "a type 1 window serves another QP of its PD: Read over the second QP brings the first QP's Write");
	send_op(s, a, MSG_DONE);
	if (c_win(s, a, &m, "the owner sends the moved window's new rkey"))
		return;
	c_write(s, a, m.rkey, m.addr, P3,
		"rebind: a Write with the new rkey lands in the new place");
	c_readback(s, a, m.rkey, m.addr, P3,
		   "rebind: a Read with the new rkey brings it back");
	c_refused_read(s, a, m.old_rkey, m.old_addr,
		       "rebind: the old rkey is refused (the Read completes with IBV_WC_REM_ACCESS_ERR)");
}

/* unbind: a bind of length 0 ends a type 1 window. */
static int srv_unbind(struct side *s)
{
	struct conn *a = &s->c[0];
	struct ibv_mw *mw;
	struct ibv_wc wc;
	struct msg m;
	int ret;

	if (wsetup(s))
		return ABORT;
	mw = mw_alloc(s, s->pd, IBV_MW_TYPE_1, 0,
		      "ibv_alloc_mw(IBV_MW_TYPE_1)");
	if (!bind1_ok(a, mw, s->mr, waddr(s, 0), WLEN, ACC_RW,
		      "ibv_bind_mw of the window completes"))
		return ABORT;
	m = (struct msg){ .op = MSG_WIN, .rkey = mw->rkey,
			  .addr = waddr(s, 0), .len = WLEN };
	send_msg(s, a, &m);
	if (!expect_msg(s, a, MSG_DONE, NULL, "the peer read the window"))
		return 0;
	ret = bind1(a, mw, NULL, 0, 0, 0, &wc);
	check(!ret && bind_wc_ok(&wc),
	      "unbind: ibv_bind_mw with length 0 posts and completes as IBV_WC_BIND_MW",
	      "post: %s, completion: %s opcode %d", strerror(ret),
	      wc_str(&wc), wc.opcode);
	info(s, "rkey after the unbind: 0x%x (bound as 0x%x)", mw->rkey,
	     m.rkey);
	send_op(s, a, MSG_GO);
	wait_qp_err(s, a, "the owner's QP goes to ERR after refusing the unbound window");
	mem_check(s,
		  "owner's memory: the Write through the unbound window changed nothing");
	return 0;
}

static void cli_unbind(struct side *s)
{
	struct conn *a = &s->c[0];
	struct msg m;

	if (c_win(s, a, &m, "the owner sends the window's rkey"))
		return;
	c_read_window(s, a, &m, "Read through the bound window works");
	send_op(s, a, MSG_DONE);
	if (!expect_msg(s, a, MSG_GO, NULL, "the owner unbound the window"))
		return;
	c_refused_write(s, a, m.rkey, m.addr, P1,
			"after the unbind (length 0) the rkey is refused (REM_ACCESS_ERR, or done at send and the Read behind it ended)");
}

/*
 * The refusal scenarios with one window: the owner binds it as @acc
 * (never, if @acc is -1), sends it, and waits for its QP to go to ERR;
 * @wrote: the peer's permitted Write at the window's start happened.
 */
static int srv_refusal(struct side *s, int acc, bool wrote,
		       const char *err_name, const char *mem_name)
{
	struct conn *a = &s->c[0];
	struct ibv_mw *mw;
	struct msg m;

	if (wsetup(s))
		return ABORT;
	mw = mw_alloc(s, s->pd, IBV_MW_TYPE_1, 0,
		      "ibv_alloc_mw(IBV_MW_TYPE_1)");
	if (!mw)
		return ABORT;
	if (acc >= 0 && !bind1_ok(a, mw, s->mr, waddr(s, 0), WLEN, acc,
				  "ibv_bind_mw of the window completes"))
		return ABORT;
	m = (struct msg){ .op = MSG_WIN, .rkey = mw->rkey,
			  .addr = waddr(s, 0), .len = WLEN };
	send_msg(s, a, &m);
	wait_qp_err(s, a, err_name);
	if (wrote)
		exp_write(s, WOFF, XLEN, P1);
	mem_check(s, mem_name);
	return 0;
}

static int srv_unbound(struct side *s)
{
	return srv_refusal(s, -1, false,
			   "the owner's QP goes to ERR after refusing the window",
			   "owner's memory: the Write through a window never bound changed nothing");
}

static void cli_unbound(struct side *s)
{
	struct msg m;

	if (c_win(s, &s->c[0], &m, "the owner sends the window's rkey"))
		return;
	c_refused_write(s, &s->c[0], m.rkey, m.addr, P1,
			"the rkey of a window never bound is refused (REM_ACCESS_ERR, or done at send and the Read behind it ended)");
}

static int srv_outside(struct side *s)
{
	return srv_refusal(s, ACC_RW, true,
			   "the owner's QP goes to ERR after refusing the Write",
			   "owner's memory: the Write inside the window landed, the one past its end (inside the MR) changed nothing");
}

static void cli_outside(struct side *s)
{
	struct msg m;

	if (c_win(s, &s->c[0], &m, "the owner sends the window's rkey"))
		return;
	c_write(s, &s->c[0], m.rkey, m.addr, P1,
		"a Write inside the window works");
	c_refused_write(s, &s->c[0], m.rkey, m.addr + m.len, P2,
			"a Write just past the window's end, inside the MR, is refused (REM_ACCESS_ERR, or done at send and the Read behind it ended)");
}

static int srv_readonly(struct side *s)
{
	return srv_refusal(s, IBV_ACCESS_REMOTE_READ, false,
			   "the owner's QP goes to ERR after refusing the Write",
			   "owner's memory: the Write to the read-only window changed nothing");
}

static void cli_readonly(struct side *s)
{
	struct msg m;

	if (c_win(s, &s->c[0], &m, "the owner sends the window's rkey"))
		return;
	c_read_window(s, &s->c[0], &m,
		      "a Read of the read-only window brings the owner's data");
	c_refused_write(s, &s->c[0], m.rkey, m.addr, P1,
			"a Write to a window bound for remote read only is refused (REM_ACCESS_ERR, or done at send and the Read behind it ended)");
}

static int srv_wrongkey(struct side *s)
{
	return srv_refusal(s, ACC_RW, true,
			   "the owner's QP goes to ERR after refusing the wrong key",
			   "owner's memory: the Write with the right rkey landed, the one with a wrong key changed nothing");
}

static void cli_wrongkey(struct side *s)
{
	struct msg m;
	uint32_t bad;

	if (c_win(s, &s->c[0], &m, "the owner sends the window's rkey"))
		return;
	c_write(s, &s->c[0], m.rkey, m.addr, P1,
		"a Write with the window's rkey works");
	bad = (m.rkey & ~0xffU) | ((m.rkey + 0x80) & 0xff);
	c_refused_write(s, &s->c[0], bad, m.addr + 2048, P2,
			"the window's index with a wrong key is refused (REM_ACCESS_ERR, or done at send and the Read behind it ended)");
}

static int srv_dealloc(struct side *s)
{
	struct conn *a = &s->c[0];
	struct ibv_mw *mw;
	struct msg m;
	int ret;

	if (wsetup(s))
		return ABORT;
	mw = mw_alloc(s, s->pd, IBV_MW_TYPE_1, 0,
		      "ibv_alloc_mw(IBV_MW_TYPE_1)");
	if (!bind1_ok(a, mw, s->mr, waddr(s, 0), WLEN, ACC_RW,
		      "ibv_bind_mw of the window completes"))
		return ABORT;
	m = (struct msg){ .op = MSG_WIN, .rkey = mw->rkey,
			  .addr = waddr(s, 0), .len = WLEN };
	send_msg(s, a, &m);
	if (!expect_msg(s, a, MSG_DONE, NULL, "the peer wrote the window"))
		return 0;
	ret = ibv_dealloc_mw(mw);
	check(!ret, "ibv_dealloc_mw of a bound window returns 0", "%s",
	      strerror(ret));
	if (!ret)
		s->mw[0] = NULL;
	send_op(s, a, MSG_GO);
	wait_qp_err(s, a, "the owner's QP goes to ERR after refusing the deallocated window");
	exp_write(s, WOFF, XLEN, P1);
	mem_check(s,
		  "owner's memory: the Write before the dealloc landed, the one after changed nothing");
	return 0;
}

static void cli_dealloc(struct side *s)
{
	struct conn *a = &s->c[0];
	struct msg m;

	if (c_win(s, a, &m, "the owner sends the window's rkey"))
		return;
	c_write(s, a, m.rkey, m.addr, P1, "a Write into the bound window works");
	send_op(s, a, MSG_DONE);
	if (!expect_msg(s, a, MSG_GO, NULL,
			"the owner deallocated the window"))
		return;
	c_refused_write(s, a, m.rkey, m.addr + 2048, P2,
			"the rkey of a deallocated window is refused (REM_ACCESS_ERR, or done at send and the Read behind it ended)");
}

/* type2: binds through ibv_post_send, QP-bound access, Local Invalidate. */
static int srv_type2(struct side *s)
{
	struct conn *a = &s->c[0], *b = &s->c[1];
	struct ibv_mw *mw1, *mw2;
	struct ibv_mw_bind mb = {
		.wr_id = WR_BIND, .send_flags = IBV_SEND_SIGNALED,
	};
	struct ibv_wc wc[2];
	uint32_t rkey;
	struct msg m;
	bool quiet, ok;
	int ret;

	if (wsetup(s))
		return ABORT;
	mw1 = mw_alloc(s, s->pd, IBV_MW_TYPE_1, 0,
		       "ibv_alloc_mw(IBV_MW_TYPE_1)");
	mw2 = mw_alloc(s, s->pd, IBV_MW_TYPE_2, 1,
		       "ibv_alloc_mw(IBV_MW_TYPE_2)");
	if (!mw1 || !mw2)
		return ABORT;
	mb.bind_info = (struct ibv_mw_bind_info){
		.mr = s->mr, .addr = waddr(s, 0), .length = WLEN,
		.mw_access_flags = ACC_RW,
	};
	ret = ibv_bind_mw(a->qp, mw2, &mb);
	quiet = sq_quiet(a);
	check(ret == EINVAL && quiet,
	      "ibv_bind_mw on a type 2 window: EINVAL at once, nothing posted",
	      "returned %d (%s), %s", ret, strerror(ret),
	      quiet ? "nothing completed" : "a completion came");
	ret = bind2(s, a, mw1, ibv_inc_rkey(mw1->rkey), s->mr, waddr(s, 0),
		    WLEN, ACC_RW, NULL, wc);
	check(ret == EINVAL && wc[0].wr_id == NO_WC,
	      "IBV_WR_BIND_MW naming a type 1 window: ibv_post_send refuses it with EINVAL, nothing completes",
	      "returned %d (%s), completion: %s", ret, strerror(ret),
	      wc_str(&wc[0]));

	/* The rkey goes out in a Send posted right behind the bind. */
	rkey = ibv_inc_rkey(mw2->rkey);
	m = (struct msg){ .op = MSG_WIN, .rkey = rkey, .addr = waddr(s, 0),
			  .len = WLEN };
	ret = bind2(s, a, mw2, rkey, s->mr, waddr(s, 0), WLEN, ACC_ALL, &m,
		    wc);
	ok = bind_msg_ok(ret, wc,
			 "IBV_WR_BIND_MW through ibv_post_send completes as IBV_WC_BIND_MW, before the Send posted behind it");
	if (!ok)
		return ABORT;
	if (!expect_msg(s, a, MSG_DONE, NULL,
			"the peer's accesses over both QPs end"))
		return 0;
	wait_qp_err(s, b, "the owner's second QP goes to ERR after refusing the type 2 window bound to the first");
	exp_write(s, WOFF, XLEN, P1);
	exp_atomic(s);
	mem_check(s,
		  "owner's memory: the Write and Fetch and Add over the binding QP landed, the Write over the other QP changed nothing");

	ret = post_linv(a, rkey, wc);
	check(!ret && wc[0].wr_id == WR_INV &&
	      wc[0].status == IBV_WC_SUCCESS &&
	      wc[0].opcode == IBV_WC_LOCAL_INV,
	      "Local Invalidate of the type 2 window's rkey completes as IBV_WC_LOCAL_INV",
	      "post: %s, completion: %s opcode %d", strerror(ret),
	      wc_str(&wc[0]), wc[0].opcode);
	send_op(s, a, MSG_GO);
	wait_qp_err(s, a, "the owner's QP goes to ERR after refusing the invalidated rkey");
	mem_check(s,
		  "owner's memory: the Write with the invalidated rkey changed nothing");
	return 0;
}

static void cli_type2(struct side *s)
{
	struct conn *a = &s->c[0], *b = &s->c[1];
	struct msg m;

	if (c_win(s, a, &m, "the owner sends the window's rkey"))
		return;
	c_read_window(s, a, &m,
		      "Read of the type 2 window over the binding QP, right after the bind, brings the owner's data");
	c_write(s, a, m.rkey, m.addr, P1,
		"Write into the type 2 window over the binding QP");
	c_fadd(s, a, &m,
	       "Fetch and Add in the type 2 window returns the original value");
	c_refused_write(s, b, m.rkey, m.addr + 2048, P2,
			"a type 2 window is refused over another QP of its PD (REM_ACCESS_ERR, or done at send and the Read behind it ended)");
	send_op(s, a, MSG_DONE);
	if (!expect_msg(s, a, MSG_GO, NULL,
			"the owner invalidated the window"))
		return;
	c_refused_write(s, a, m.rkey, m.addr + 2048, P2,
			"after Local Invalidate the rkey is refused over the binding QP (REM_ACCESS_ERR, or done at send and the Read behind it ended)");
}

/* type2x: ibv_wr_bind_mw, Send with Invalidate, a new bind. */
static int srv_type2x(struct side *s)
{
	struct conn *a = &s->c[0];
	struct ibv_wc wc[2];
	const struct ibv_wc *r = &a->last_recv;
	uint32_t rkey, rkey2;
	struct ibv_mw *mw;
	struct msg m;
	bool ok;
	int ret;

	if (wsetup(s))
		return ABORT;
	mw = mw_alloc(s, s->pd, IBV_MW_TYPE_2, 0,
		      "ibv_alloc_mw(IBV_MW_TYPE_2)");
	if (!mw)
		return ABORT;
	rkey = ibv_inc_rkey(mw->rkey);
	m = (struct msg){ .op = MSG_WIN, .rkey = rkey, .addr = waddr(s, 0),
			  .len = WLEN };
	ret = bind2x(s, a, mw, rkey, s->mr, waddr(s, 0), WLEN, ACC_ALL, &m,
		     wc);
	ok = bind_msg_ok(ret, wc,
			 "ibv_wr_bind_mw completes as IBV_WC_BIND_MW, before the Send posted behind it");
	if (!ok)
		return ABORT;
	if (!expect_msg(s, a, MSG_DONE, NULL,
			"the peer's Send with Invalidate arrives"))
		return 0;
	check(r->opcode == IBV_WC_RECV && (r->wc_flags & IBV_WC_WITH_INV) &&
	      r->invalidated_rkey == rkey,
	      "the receive of the peer's Send with Invalidate has IBV_WC_WITH_INV and the window's rkey",
	      "opcode %d flags 0x%x rkey 0x%x (want 0x%x)", r->opcode,
	      r->wc_flags, r->invalidated_rkey, rkey);
	exp_write(s, WOFF, XLEN, P1);
	exp_atomic(s);
	mem_check(s,
		  "owner's memory: the Write and the Fetch and Add landed, nothing else changed");

	rkey2 = ibv_inc_rkey(rkey);
	m = (struct msg){ .op = MSG_WIN, .rkey = rkey2, .addr = waddr(s, 0),
			  .len = WLEN, .old_rkey = rkey,
			  .old_addr = waddr(s, 0) };
	ret = bind2x(s, a, mw, rkey2, s->mr, waddr(s, 0), WLEN, ACC_RW, &m,
		     wc);
	ok = bind_msg_ok(ret, wc,
			 "after the Send with Invalidate the window binds again with a new key");
	if (!ok)
		return ABORT;
	wait_qp_err(s, a, "the owner's QP goes to ERR after refusing the invalidated rkey");
	exp_write(s, WOFF + 2048, XLEN, P3);
	mem_check(s,
		  "owner's memory: the Write with the new key landed, nothing else changed");
	return 0;
}

static void cli_type2x(struct side *s)
{
	struct conn *a = &s->c[0];
	struct ibv_sge sge = { .addr = (uintptr_t)s->ctl + CTL_SEND,
			       .length = sizeof(struct msg),
			       .lkey = s->ctl_mr->lkey };
	struct ibv_send_wr wr = { .wr_id = WR_MSG, .sg_list = &sge,
				  .num_sge = 1,
				  .opcode = IBV_WR_SEND_WITH_INV,
				  .send_flags = IBV_SEND_SIGNALED }, *bad;
	struct ibv_wc wc = { .wr_id = NO_WC };
	struct msg m, done = { .op = MSG_DONE };
	int ret;

	if (c_win(s, a, &m, "the owner sends the window's rkey"))
		return;
	c_read_window(s, a, &m,
		      "Read of the window bound by ibv_wr_bind_mw, right after the bind, brings the owner's data");
	c_write(s, a, m.rkey, m.addr, P1,
		"Write into the window bound by ibv_wr_bind_mw");
	c_fadd(s, a, &m,
	       "Fetch and Add in the window bound by ibv_wr_bind_mw returns the original value");
	memcpy(s->ctl + CTL_SEND, &done, sizeof(done));
	wr.invalidate_rkey = m.rkey;
	ret = ibv_post_send(a->qp, &wr, &bad);
	if (!ret)
		poll_wc(a->scq, &wc, timeout_s);
	check(!ret && wc.status == IBV_WC_SUCCESS && wc.wr_id == WR_MSG,
	      "a Send with Invalidate of the window's rkey completes",
	      "post: %s, completion: %s", strerror(ret), wc_str(&wc));
	if (c_win(s, a, &m, "the owner sends the rebound window's new key"))
		return;
	c_write(s, a, m.rkey, m.addr + 2048, P3,
		"a Write with the new key after the rebind works");
	c_refused_read(s, a, m.old_rkey, m.old_addr,
		       "the rkey the Send with Invalidate ended is refused (the Read completes with IBV_WC_REM_ACCESS_ERR)");
}

/* t1sinv: a Send with Invalidate naming a type 1 window. */
static int srv_t1sinv(struct side *s)
{
	struct conn *a = &s->c[0], *b = &s->c[1];
	struct ibv_mw *mw;
	struct msg m;

	if (wsetup(s))
		return ABORT;
	mw = mw_alloc(s, s->pd, IBV_MW_TYPE_1, 0,
		      "ibv_alloc_mw(IBV_MW_TYPE_1)");
	if (!bind1_ok(a, mw, s->mr, waddr(s, 0), WLEN, ACC_RW,
		      "ibv_bind_mw of the window completes"))
		return ABORT;
	m = (struct msg){ .op = MSG_WIN, .rkey = mw->rkey,
			  .addr = waddr(s, 0), .len = WLEN };
	send_msg(s, a, &m);
	wait_qp_err(s, a, "a Send with Invalidate naming a type 1 window: the owner's QP goes to ERR");
	send_op(s, b, MSG_GO);
	expect_msg(s, b, MSG_DONE, NULL, "the peer read over the second QP");
	mem_check(s, "owner's memory: nothing changed");
	return 0;
}

static void cli_t1sinv(struct side *s)
{
	struct conn *a = &s->c[0], *b = &s->c[1];
	struct ibv_sge sge = { .addr = (uintptr_t)s->buf + L_SRC,
			       .length = 16, .lkey = s->mr->lkey };
	struct ibv_send_wr wr = { .wr_id = WR_OP, .sg_list = &sge,
				  .num_sge = 1,
				  .opcode = IBV_WR_SEND_WITH_INV,
				  .send_flags = IBV_SEND_SIGNALED };
	struct msg m;

	if (c_win(s, a, &m, "the owner sends the window's rkey"))
		return;
	wr.invalidate_rkey = m.rkey;
	c_refused(s, a, &wr, ANY_ERROR,
		  "a Send with Invalidate naming a type 1 window ends in an error at the peer");
	if (!expect_msg(s, b, MSG_GO, NULL,
			"the owner goes on over the second QP"))
		return;
	c_read_window(s, b, &m,
		      "the type 1 window was not invalidated: a Read over the second QP works");
	send_op(s, b, MSG_DONE);
}

/* dereg: EBUSY while windows are bound; after unbind, invalidate, dealloc. */
static int srv_dereg(struct side *s)
{
	struct conn *a = &s->c[0];
	unsigned char *buf2 = NULL;
	struct ibv_mw *mw1, *mw2, *mw3;
	struct ibv_mr *mr2 = NULL;
	struct ibv_wc wc[2];
	uint32_t rkey2;
	struct msg m;
	int ret;

	if (wsetup(s))
		return ABORT;
	mw1 = mw_alloc(s, s->pd, IBV_MW_TYPE_1, 0,
		       "ibv_alloc_mw(IBV_MW_TYPE_1)");
	mw2 = mw_alloc(s, s->pd, IBV_MW_TYPE_2, 1,
		       "ibv_alloc_mw(IBV_MW_TYPE_2)");
	if (!mw1 || !mw2 ||
	    !bind1_ok(a, mw1, s->mr, waddr(s, 0), 2048, ACC_RW,
		      "ibv_bind_mw of a type 1 window completes"))
		return ABORT;
	rkey2 = ibv_inc_rkey(mw2->rkey);
	ret = bind2(s, a, mw2, rkey2, s->mr, waddr(s, 4096), 2048,
		    IBV_ACCESS_REMOTE_READ, NULL, wc);
	check(!ret && bind_wc_ok(&wc[0]),
	      "IBV_WR_BIND_MW of a type 2 window on the same MR completes",
	      "post: %s, completion: %s", strerror(ret), wc_str(&wc[0]));
	if (ret || !bind_wc_ok(&wc[0]))
		return ABORT;
	ret = ibv_dereg_mr(s->mr);
	check(ret == EBUSY, "ibv_dereg_mr of an MR with windows bound: EBUSY",
	      "returned %d (%s)", ret, strerror(ret));
	if (!ret) {
		s->mr = NULL;
		return ABORT;
	}
	m = (struct msg){ .op = MSG_WIN, .rkey = mw1->rkey,
			  .addr = waddr(s, 0), .len = 2048 };
	send_msg(s, a, &m);
	if (!expect_msg(s, a, MSG_DONE, NULL, "the peer wrote the window"))
		return 0;
	exp_write(s, WOFF, XLEN, P1);
	mem_check(s,
		  "the MR still works after the refused dereg: the Write through its window landed");

	ret = bind1(a, mw1, NULL, 0, 0, 0, &wc[0]);
	check(!ret && bind_wc_ok(&wc[0]),
	      "unbind of the type 1 window (length 0) completes",
	      "post: %s, completion: %s", strerror(ret), wc_str(&wc[0]));
	ret = ibv_dereg_mr(s->mr);
	check(ret == EBUSY,
	      "ibv_dereg_mr: still EBUSY while the type 2 window is bound",
	      "returned %d (%s)", ret, strerror(ret));
	if (!ret)
		s->mr = NULL;
	ret = post_linv(a, rkey2, &wc[0]);
	check(!ret && wc[0].status == IBV_WC_SUCCESS &&
	      wc[0].wr_id == WR_INV,
	      "Local Invalidate of the type 2 window completes",
	      "post: %s, completion: %s", strerror(ret), wc_str(&wc[0]));
	if (s->mr) {
		ret = ibv_dereg_mr(s->mr);
		check(!ret,
		      "ibv_dereg_mr succeeds once one window is unbound and the other invalidated",
		      "returned %d (%s)", ret, strerror(ret));
		if (!ret)
			s->mr = NULL;
	}

	buf2 = aligned_alloc(4096, 4096);
	mr2 = buf2 ? ibv_reg_mr(s->pd, buf2, 4096, MR_ACC) : NULL;
	mw3 = mw_alloc(s, s->pd, IBV_MW_TYPE_1, 2,
		       "ibv_alloc_mw(IBV_MW_TYPE_1), a third window");
	if (!bind1_ok(a, mw3, mr2, (uintptr_t)buf2, 4096, ACC_RW,
		      "ibv_bind_mw of a window on a second MR completes"))
		goto out;
	ret = ibv_dereg_mr(mr2);
	check(ret == EBUSY,
	      "ibv_dereg_mr of the second MR with its window bound: EBUSY",
	      "returned %d (%s)", ret, strerror(ret));
	if (!ret) {
		mr2 = NULL;
		goto out;
	}
	ret = ibv_dealloc_mw(mw3);
	check(!ret, "ibv_dealloc_mw of the bound window returns 0", "%s",
	      strerror(ret));
	if (!ret)
		s->mw[2] = NULL;
	ret = ibv_dereg_mr(mr2);
	check(!ret, "ibv_dereg_mr succeeds after ibv_dealloc_mw",
	      "returned %d (%s)", ret, strerror(ret));
	if (!ret)
		mr2 = NULL;
out:
	send_op(s, a, MSG_GO);
	if (s->mw[2]) {
		ibv_dealloc_mw(s->mw[2]);
		s->mw[2] = NULL;
	}
	if (mr2 && ibv_dereg_mr(mr2))
		buf2 = NULL;	/* the MR lives on, and with it its memory */
	free(buf2);
	return 0;
}

static void cli_dereg(struct side *s)
{
	struct conn *a = &s->c[0];
	struct msg m;

	if (c_win(s, a, &m, "the owner sends the window's rkey"))
		return;
	c_write(s, a, m.rkey, m.addr, P1,
		"a Write through the window of the MR whose dereg was refused");
	c_readback(s, a, m.rkey, m.addr, P1,
		   "a Read through it brings the Write back");
	send_op(s, a, MSG_DONE);
	expect_msg(s, a, MSG_GO, NULL, "the owner's checks end");
}

/* ---- localerr: one connection per local error ---- */

static int srv_accept(struct side *s, struct conn *c);

#define NLOCAL 9

struct lres {
	struct ibv_pd *pd2;
	struct ibv_mr *mr;
	struct ibv_mw *mw;
};

static void lres_free(struct lres *r)
{
	if (r->mw)
		ibv_dealloc_mw(r->mw);
	if (r->mr)
		ibv_dereg_mr(r->mr);
	if (r->pd2)
		ibv_dealloc_pd(r->pd2);
}

/*
 * Case @i on @c: posts the bad WR (WR_BAD, signaled); returns the post's
 * result, the name and the status it must complete with.
 */
static int local_case(struct side *s, struct conn *c, int i,
		      struct lres *r, const char **name,
		      enum ibv_wc_status *want)
{
	uint64_t wa = waddr(s, 0);
	struct ibv_sge sge = { .addr = wa, .length = 64 };
	struct ibv_send_wr wr = { .wr_id = WR_BAD,
				  .send_flags = IBV_SEND_SIGNALED }, *bad;
	struct ibv_mw_bind mb = { .wr_id = WR_BAD,
				  .send_flags = IBV_SEND_SIGNALED };
	struct ibv_pd *pd = s->pd;
	enum ibv_mw_type type = IBV_MW_TYPE_1;
	int mracc = MR_ACC;
	unsigned int acc = ACC_RW;
	uint64_t len = WLEN;
	bool prebind = false;
	struct ibv_wc wc[2];
	char pre[200];
	uint32_t key;

	*want = IBV_WC_MW_BIND_ERR;
	switch (i) {
	case 0:
		*name = "bind on an MR registered without IBV_ACCESS_MW_BIND";
		mracc = IBV_ACCESS_LOCAL_WRITE;
		break;
	case 1:
		*name = "bind of a range that goes beyond the MR's end";
		wa = (uintptr_t)s->buf + WBUF_LEN - 4096;
		break;
	case 2:
		*name = "bind asking remote write on an MR without IBV_ACCESS_LOCAL_WRITE";
		mracc = IBV_ACCESS_MW_BIND;
		break;
	case 3:
		*name = "bind asking IBV_ACCESS_ZERO_BASED";
		acc = IBV_ACCESS_REMOTE_READ | IBV_ACCESS_ZERO_BASED;
		break;
	case 4:
		*name = "IBV_WR_BIND_MW of a type 2 window of another PD than its MR and QP";
		type = IBV_MW_TYPE_2;
		break;
	case 5:
		*name = "ibv_bind_mw of a type 1 window and MR of another PD than the QP's";
		break;
	case 6:
		*name = "IBV_WR_BIND_MW of a type 2 window that is still bound";
		type = IBV_MW_TYPE_2;
		prebind = true;
		break;
	case 7:
		*name = "a bound window's rkey used as the lkey of a Send";
		*want = IBV_WC_LOC_PROT_ERR;
		prebind = true;
		break;
	default:
		*name = "Local Invalidate of a bound type 1 window";
		*want = IBV_WC_LOC_PROT_ERR;
		prebind = true;
		break;
	}
	if (i == 4 || i == 5) {
		r->pd2 = ibv_alloc_pd(s->verbs);
		if (!r->pd2)
			return errno;
	}
	snprintf(pre, sizeof(pre), "%s: the MR and the window", *name);
	r->mr = ibv_reg_mr(i == 5 ? r->pd2 : pd, s->buf, WBUF_LEN, mracc);
	if (!r->mr) {
		check(false, pre, "ibv_reg_mr: %s", strerror(errno));
		return -1;
	}
	errno = 0;
	r->mw = ibv_alloc_mw(i >= 4 && i <= 5 ? r->pd2 : pd, type);
	if (!r->mw) {
		check(false, pre, "ibv_alloc_mw: %s", strerror(errno));
		return -1;
	}
	if (prebind) {
		snprintf(pre, sizeof(pre), "%s: the first bind completes",
			 *name);
		if (type == IBV_MW_TYPE_2) {
			key = ibv_inc_rkey(r->mw->rkey);
			bind2(s, c, r->mw, key, r->mr, wa, len, acc, NULL, wc);
			check(bind_wc_ok(&wc[0]), pre, "%s", wc_str(&wc[0]));
			if (!bind_wc_ok(&wc[0]))
				return -1;
		} else if (!bind1_ok(c, r->mw, r->mr, wa, len, acc, pre)) {
			return -1;
		}
	}
	key = ibv_inc_rkey(prebind && type == IBV_MW_TYPE_2 ? key :
			   r->mw->rkey);
	switch (i) {
	case 4:
	case 6:
		wr.opcode = IBV_WR_BIND_MW;
		wr.bind_mw.mw = r->mw;
		wr.bind_mw.rkey = key;
		wr.bind_mw.bind_info = (struct ibv_mw_bind_info){
			.mr = r->mr, .addr = wa, .length = len,
			.mw_access_flags = acc,
		};
		return ibv_post_send(c->qp, &wr, &bad);
	case 7:
		sge.lkey = r->mw->rkey;
		wr.opcode = IBV_WR_SEND;
		wr.sg_list = &sge;
		wr.num_sge = 1;
		return ibv_post_send(c->qp, &wr, &bad);
	case 8:
		wr.opcode = IBV_WR_LOCAL_INV;
		wr.invalidate_rkey = r->mw->rkey;
		return ibv_post_send(c->qp, &wr, &bad);
	default:
		mb.bind_info = (struct ibv_mw_bind_info){
			.mr = r->mr, .addr = wa, .length = len,
			.mw_access_flags = acc,
		};
		return ibv_bind_mw(c->qp, r->mw, &mb);
	}
}

static int srv_localerr(struct side *s)
{
	struct ibv_sge sge;
	struct ibv_send_wr next = { .wr_id = WR_NEXT, .sg_list = &sge,
				    .num_sge = 1, .opcode = IBV_WR_SEND,
				    .send_flags = IBV_SEND_SIGNALED }, *bad;
	enum ibv_wc_status want;
	struct ibv_wc wc[2];
	enum ibv_qp_state st;
	const char *name;
	char full[300];
	struct conn *c;
	int i, ret;

	s->len = WBUF_LEN;
	s->buf = aligned_alloc(4096, WBUF_LEN);
	if (!s->buf)
		return 0;
	for (i = 0; i < NLOCAL; i++) {
		struct lres r = {};

		c = &s->c[i];
		/* the first was accepted by run_server() */
		if (!c->id && srv_accept(s, c)) {
			check(false, "the owner accepts a connection per case",
			      "connection %d failed", i);
			break;
		}
		sge = (struct ibv_sge){ .addr = (uintptr_t)s->ctl + CTL_SEND,
					.length = 16,
					.lkey = s->ctl_mr->lkey };
		memset(wc, 0, sizeof(wc));
		wc[0].wr_id = NO_WC;
		wc[1].wr_id = NO_WC;
		ret = local_case(s, c, i, &r, &name, &want);
		if (ret >= 0) {
			/* local errors complete at once: 5 s is plenty */
			if (!ret && !ibv_post_send(c->qp, &next, &bad)) {
				poll_wc(c->scq, &wc[0], 5);
				poll_wc(c->scq, &wc[1], 5);
			}
			st = qp_state(c->qp);
			snprintf(full, sizeof(full),
				 "%s: completes with %s, the QP goes to ERR, the next WR is flushed",
				 name, ibv_wc_status_str(want));
			check(!ret && wc[0].wr_id == WR_BAD &&
			      wc[0].status == want &&
			      wc[1].wr_id == WR_NEXT &&
			      wc[1].status == IBV_WC_WR_FLUSH_ERR &&
			      st == IBV_QPS_ERR, full,
			      "post: %s, completions: %s (wr_id %llu), %s (wr_id %llu), QP state %d",
			      strerror(ret), wc_str(&wc[0]),
			      (unsigned long long)wc[0].wr_id,
			      wc_str(&wc[1]), (unsigned long long)wc[1].wr_id,
			      st);
		}
		lres_free(&r);
		rdma_disconnect(c->id);
		conn_free(s, c);
	}
	return 0;
}

static void cli_localerr(struct side *s)
{
	(void)s;	/* the connections are made in run_client() */
}

/* ---- race: ibv_dealloc_mw during a large Write ---- */

static size_t count_placed(const unsigned char *p, size_t len)
{
	const uint64_t *w = (const uint64_t *)p;
	size_t i, n = 0;

	for (i = 0; i < len / 8; i++)
		if (w[i])
			n += 8;
	return n;
}

static int srv_race(struct side *s)
{
	struct conn *a = &s->c[0];
	uint64_t *first;
	double end, t0, dt;
	size_t n1, n2;
	struct ibv_mw *mw;
	struct msg m;
	int ret;

	s->len = RACE_LEN;
	s->buf = aligned_alloc(4096, RACE_LEN);
	if (!s->buf)
		return ABORT;
	memset(s->buf, 0, RACE_LEN);
	s->mr = ibv_reg_mr(s->pd, s->buf, RACE_LEN, MR_ACC);
	check(s->mr,
	      "ibv_reg_mr of 64 MiB with IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_MW_BIND",
	      "%s", strerror(errno));
	mw = s->mr ? mw_alloc(s, s->pd, IBV_MW_TYPE_1, 0,
			      "ibv_alloc_mw(IBV_MW_TYPE_1)") : NULL;
	if (!mw || !bind1_ok(a, mw, s->mr, (uintptr_t)s->buf, RACE_LEN,
			     IBV_ACCESS_REMOTE_WRITE,
			     "ibv_bind_mw of a 64 MiB window completes"))
		return ABORT;
	m = (struct msg){ .op = MSG_WIN, .rkey = mw->rkey,
			  .addr = (uintptr_t)s->buf, .len = RACE_LEN };
	send_msg(s, a, &m);

	first = (uint64_t *)s->buf;
	end = now_s() + timeout_s;
	while (!__atomic_load_n(first, __ATOMIC_RELAXED) && now_s() < end)
		usleep(20);
	if (!__atomic_load_n(first, __ATOMIC_RELAXED)) {
		check(false, "the peer's Write starts arriving", "nothing came");
		return 0;
	}
	t0 = now_s();
	ret = ibv_dealloc_mw(mw);
	dt = now_s() - t0;
	if (!ret)
		s->mw[0] = NULL;
	n1 = count_placed(s->buf, RACE_LEN);
	info(s, "ibv_dealloc_mw took %.3f s; %zu of %u octets placed by then",
	     dt, n1, RACE_LEN);
	check(!ret && dt < 1.0,
	      "ibv_dealloc_mw while the peer's Write arrives returns 0 within 1 s",
	      "returned %d (%s) after %.3f s", ret, strerror(ret), dt);
	if (n1 == RACE_LEN) {
		skip("what arrives after ibv_dealloc_mw is refused",
		     "the whole Write had landed before the window went");
		return 0;
	}
	wait_qp_err(s, a, "the owner's QP goes to ERR: the rest of the Write is refused");
	n2 = count_placed(s->buf, RACE_LEN);
	check(n2 == n1,
	      "no octet is placed after ibv_dealloc_mw returned",
	      "%zu octets placed when it returned, %zu now", n1, n2);
	return 0;
}

static void cli_race(struct side *s)
{
	struct conn *a = &s->c[0];
	struct ibv_sge sge;
	struct ibv_send_wr wr;
	struct msg m;

	if (c_win(s, a, &m, "the owner sends the window's rkey"))
		return;
	memset(s->buf, 0x5a, RACE_LEN);
	wr = op_wr(s, &sge, IBV_WR_RDMA_WRITE, m.rkey, m.addr, 0, RACE_LEN,
		   WR_OP);
	c_refused(s, a, &wr, OR_LANDED,
		  "the Write cut off by ibv_dealloc_mw is refused (REM_ACCESS_ERR, or done at send and the Read behind it ended)");
}

static const struct scenario scenarios[] = {
	{ .name = "type1", .nconn = 2,
	  .server = srv_type1, .client = cli_type1 },
	{ .name = "unbind", .nconn = 1,
	  .server = srv_unbind, .client = cli_unbind },
	{ .name = "unbound", .nconn = 1,
	  .server = srv_unbound, .client = cli_unbound },
	{ .name = "outside", .nconn = 1,
	  .server = srv_outside, .client = cli_outside },
	{ .name = "readonly", .nconn = 1,
	  .server = srv_readonly, .client = cli_readonly },
	{ .name = "wrongkey", .nconn = 1,
	  .server = srv_wrongkey, .client = cli_wrongkey },
	{ .name = "dealloc", .nconn = 1,
	  .server = srv_dealloc, .client = cli_dealloc },
	{ .name = "type2", .nconn = 2,
	  .server = srv_type2, .client = cli_type2 },
	{ .name = "type2x", .nconn = 1, .ext = true,
	  .server = srv_type2x, .client = cli_type2x },
	{ .name = "t1sinv", .nconn = 2,
	  .server = srv_t1sinv, .client = cli_t1sinv },
	{ .name = "dereg", .nconn = 1,
	  .server = srv_dereg, .client = cli_dereg },
	{ .name = "localerr", .nconn = NLOCAL, .seq = true,
	  .server = srv_localerr, .client = cli_localerr },
	{ .name = "race", .nconn = 1, .client_len = RACE_LEN,
	  .server = srv_race, .client = cli_race },
};

/* ---- the two sides ---- */

static int srv_accept(struct side *s, struct conn *c)
{
	struct rdma_conn_param param = {
		.responder_resources = 8,
		.initiator_depth = 8,
	};
	struct rdma_cm_event *ev;

	ev = get_event(s, RDMA_CM_EVENT_CONNECT_REQUEST, NULL, timeout_s);
	if (!ev)
		return -1;
	c->id = ev->id;
	rdma_ack_cm_event(ev);
	if ((!s->pd && side_init(s, c->id->verbs)) || conn_qp(s, c)) {
		info(s, "ERROR resources for connection %d: %s", c->idx,
		     strerror(errno));
		rdma_reject(c->id, NULL, 0);
		return -1;
	}
	param.qp_num = c->qp->qp_num;
	param.private_data = &s->probe;
	param.private_data_len = sizeof(s->probe);
	if (rdma_accept(c->id, &param)) {
		info(s, "ERROR rdma_accept: %s", strerror(errno));
		return -1;
	}
	ev = get_event(s, RDMA_CM_EVENT_ESTABLISHED, c->id, timeout_s);
	if (!ev)
		return -1;
	rdma_ack_cm_event(ev);
	return 0;
}

static int cli_connect(struct side *s, struct conn *c, struct sockaddr *dst)
{
	struct rdma_conn_param param = {
		.responder_resources = 8,
		.initiator_depth = 8,
		.retry_count = 7,
	};
	struct rdma_cm_event *ev;

	if (rdma_create_id(s->ch, &c->id, NULL, RDMA_PS_TCP) ||
	    rdma_resolve_addr(c->id, NULL, dst, 5000))
		return -1;
	ev = get_event(s, RDMA_CM_EVENT_ADDR_RESOLVED, c->id, timeout_s);
	if (!ev)
		return -1;
	rdma_ack_cm_event(ev);
	if (rdma_resolve_route(c->id, 5000))
		return -1;
	ev = get_event(s, RDMA_CM_EVENT_ROUTE_RESOLVED, c->id, timeout_s);
	if (!ev)
		return -1;
	rdma_ack_cm_event(ev);
	if ((!s->pd && side_init(s, c->id->verbs)) || conn_qp(s, c)) {
		info(s, "ERROR resources for connection %d: %s", c->idx,
		     strerror(errno));
		return -1;
	}
	if (rdma_connect(c->id, &param))
		return -1;
	ev = get_event(s, RDMA_CM_EVENT_ESTABLISHED, c->id, timeout_s);
	if (!ev)
		return -1;
	if (ev->param.conn.private_data_len >= sizeof(s->probe))
		memcpy(&s->probe, ev->param.conn.private_data,
		       sizeof(s->probe));
	rdma_ack_cm_event(ev);
	return 0;
}

/* Disconnects what is still connected; waits a little for the ends. */
static void finish(struct side *s)
{
	int i;

	for (i = 0; i < MAXC; i++)
		if (s->c[i].id && !s->c[i].disc)
			rdma_disconnect(s->c[i].id);
	wait_disconnected(s, 3);
}

static int run_server(const struct scenario *sc, const char *host,
		      const char *port)
{
	struct sockaddr_storage src;
	struct side s = { .server = true, .ext = sc->ext };
	int i, n = sc->seq ? 1 : sc->nconn;

	for (i = 0; i < MAXC; i++)
		s.c[i].idx = i;
	if (get_addr(host, port, (struct sockaddr *)&src))
		return 2;
	s.ch = rdma_create_event_channel();
	if (!s.ch || rdma_create_id(s.ch, &s.listen_id, NULL, RDMA_PS_TCP) ||
	    rdma_bind_addr(s.listen_id, (struct sockaddr *)&src) ||
	    rdma_listen(s.listen_id, 4)) {
		printf("owner: ERROR listen: %s\n", strerror(errno));
		return 2;
	}
	printf("owner: LISTENING\n");
	fflush(stdout);
	for (i = 0; i < n; i++) {
		if (srv_accept(&s, &s.c[i])) {
			check(false, "the owner accepts the peer's connections",
			      "connection %d failed", i);
			goto out;
		}
	}
	if (sc->server(&s) == ABORT)
		send_op(&s, &s.c[0], MSG_ABORT);
	finish(&s);
out:
	side_free(&s);
	printf("owner: DONE\n");
	return failures ? 1 : 0;
}

static int run_client(const struct scenario *sc, const char *host,
		      const char *port)
{
	struct sockaddr_storage dst;
	struct side s = { .len = sc->client_len ? sc->client_len : CBUF_LEN };
	int i;

	for (i = 0; i < MAXC; i++)
		s.c[i].idx = i;
	if (get_addr(host, port, (struct sockaddr *)&dst))
		return 2;
	s.ch = rdma_create_event_channel();
	if (!s.ch)
		return 2;
	for (i = 0; i < sc->nconn; i++) {
		if (cli_connect(&s, &s.c[i], (struct sockaddr *)&dst)) {
			check(false, "the peer's connections are established",
			      "connection %d failed", i);
			goto out;
		}
		if (!sc->seq)
			continue;
		/* localerr: the owner ends each connection after its case */
		wait_disconnected(&s, timeout_s);
		if (!s.c[i].disc)
			info(&s, "connection %d did not end", i);
		conn_free(&s, &s.c[i]);
	}
	sc->client(&s);
	finish(&s);
out:
	side_free(&s);
	printf("peer: DONE\n");
	return failures ? 1 : 0;
}

/* ---- caps: no connection ---- */

/* The debugfs object count NAME, -1 if not shown. */
static long debugfs_obj(const char *name)
{
	FILE *f = fopen("/sys/kernel/debug/siw2/objects", "r");
	char key[32];
	long v, r = -1;

	if (!f)
		return -1;
	while (fscanf(f, "%31s %ld", key, &v) == 2)
		if (!strcmp(key, name))
			r = v;
	fclose(f);
	return r;
}

static int run_caps(const char *name)
{
	static const int bad_types[] = { 0, 3, 0x7f };
	struct side s = { .server = true };
	struct ibv_device **list;
	struct ibv_context *ctx = NULL;
	struct ibv_device_attr a;
	struct ibv_mw *mw1, *mw2, *mw;
	struct ibv_pd *pd;
	long n0, n1, n2;
	char cname[80];
	int i, r1, r2;

	list = ibv_get_device_list(NULL);
	for (i = 0; list && list[i]; i++)
		if (!strcmp(ibv_get_device_name(list[i]), name))
			ctx = ibv_open_device(list[i]);
	if (list)
		ibv_free_device_list(list);
	if (!ctx || ibv_query_device(ctx, &a)) {
		check(false, "the device opens and answers ibv_query_device",
		      "%s: %s", name, strerror(errno));
		return 1;
	}
	info(&s, "max_mw %d max_mr %d device_cap_flags 0x%x", a.max_mw,
	     a.max_mr, a.device_cap_flags);
	check(a.max_mw > 0 && a.max_mw == a.max_mr,
	      "max_mw is positive and equal to max_mr", "max_mw %d max_mr %d",
	      a.max_mw, a.max_mr);
	check(a.device_cap_flags & IBV_DEVICE_MEM_WINDOW,
	      "device_cap_flags has IBV_DEVICE_MEM_WINDOW", "0x%x",
	      a.device_cap_flags);
	check(a.device_cap_flags & IBV_DEVICE_MEM_WINDOW_TYPE_2B,
	      "device_cap_flags has IBV_DEVICE_MEM_WINDOW_TYPE_2B", "0x%x",
	      a.device_cap_flags);

	pd = ibv_alloc_pd(ctx);
	if (!pd) {
		check(false, "ibv_alloc_pd", "%s", strerror(errno));
		goto out;
	}
	n0 = debugfs_obj("mw");
	mw1 = mw_alloc(&s, pd, IBV_MW_TYPE_1, -1,
		       "ibv_alloc_mw(IBV_MW_TYPE_1) returns a type 1 window of the PD");
	mw2 = mw_alloc(&s, pd, IBV_MW_TYPE_2, -1,
		       "ibv_alloc_mw(IBV_MW_TYPE_2) returns a type 2 window of the PD");
	n1 = debugfs_obj("mw");
	check(n0 >= 0 && n1 == n0 + 2,
	      "debugfs objects: \"mw\" counts the two live windows",
	      "%ld before, %ld with two windows", n0, n1);
	for (i = 0; i < 3; i++) {
		errno = 0;
		mw = ibv_alloc_mw(pd, (enum ibv_mw_type)bad_types[i]);
		snprintf(cname, sizeof(cname),
			 "ibv_alloc_mw of type %d is refused with EINVAL",
			 bad_types[i]);
		check(!mw && errno == EINVAL, cname, "%s",
		      mw ? "allocated" : strerror(errno));
		if (mw)
			ibv_dealloc_mw(mw);
	}
	r1 = mw1 ? ibv_dealloc_mw(mw1) : -1;
	r2 = mw2 ? ibv_dealloc_mw(mw2) : -1;
	check(!r1 && !r2, "ibv_dealloc_mw of both windows returns 0",
	      "%d, %d", r1, r2);
	n2 = debugfs_obj("mw");
	check(n0 >= 0 && n2 == n0,
	      "debugfs objects: \"mw\" is back to its count before",
	      "%ld before, %ld after", n0, n2);
	check(!ibv_dealloc_pd(pd), "ibv_dealloc_pd after the windows went",
	      "%s", strerror(errno));
out:
	ibv_close_device(ctx);
	printf("caps DONE\n");
	return failures ? 1 : 0;
}

static void help(void)
{
	size_t i;

	fprintf(stderr, "usage: mw_test caps DEV [-T SEC]\n"
		"       mw_test -s SCENARIO server|client ADDR PORT [-T SEC]\n"
		"scenarios:");
	for (i = 0; i < ARRAY_SIZE(scenarios); i++)
		fprintf(stderr, " %s", scenarios[i].name);
	fputc('\n', stderr);
}

int main(int argc, char **argv)
{
	const struct scenario *sc = NULL;
	const char *pos[4];
	int i, np = 0;
	size_t k;

	setvbuf(stdout, NULL, _IOLBF, 0);
	for (i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "-T") && i + 1 < argc) {
			timeout_s = atoi(argv[++i]);
		} else if (!strcmp(argv[i], "-s") && i + 1 < argc) {
			i++;
			for (k = 0; k < ARRAY_SIZE(scenarios); k++)
				if (!strcmp(argv[i], scenarios[k].name))
					sc = &scenarios[k];
			if (!sc) {
				help();
				return 2;
			}
		} else if (np < 4) {
			pos[np++] = argv[i];
		} else {
			help();
			return 2;
		}
	}
	if (timeout_s <= 0)
		timeout_s = 30;
	if (np == 2 && !strcmp(pos[0], "caps"))
		return run_caps(pos[1]);
	if (np != 3 || !sc) {
		help();
		return 2;
	}
	if (!strcmp(pos[0], "server"))
		return run_server(sc, pos[1], pos[2]);
	if (!strcmp(pos[0], "client"))
		return run_client(sc, pos[1], pos[2]);
	help();
	return 2;
}
