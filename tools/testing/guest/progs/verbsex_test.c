// SPDX-License-Identifier: GPL-2.0
/*
 * The extended verbs over a real siw2 connection, for the guest's verbsex
 * suite: a client posts every ibv_wr_*() operation libsiw2 offers to a
 * server in another network namespace, both poll their CQs with
 * ibv_start_poll/ibv_next_poll/ibv_end_poll, and each side checks what it
 * sees. One line per check: "PASS name" or "FAIL name: why"; other lines
 * are information.
 *
 *   verbsex_test server ADDR PORT [-m MODE] [-T SEC]
 *   verbsex_test client ADDR PORT [-m MODE] [-T SEC]
 *
 * MODE main (default):
 *   The client's QP is made as perftest -R makes it for the new post-send
 *   API (rdma_create_qp_ex with send_ops_flags), the server's with
 *   ibv_create_qp_ex; both CQs with ibv_create_cq_ex. The server accepts
 *   with its region R (address, rkey) in the Private Data. The client
 *   then posts, each batch between ibv_wr_start and ibv_wr_complete:
 *   A  Sends with an SGE list, inline data and an inline data list (the
 *      sources are overwritten before wr_complete: inline copies), RDMA
 *      Writes from an SGE and inline, a Write with Immediate, a Send with
 *      Immediate (RFC 7306: no payload);
 *   B  an unsignaled Write, Reads of everything written and of the
 *      server's own pattern, Fetch and Add and Compare and Swap (a
 *      matching and a failing compare), whose original values come back;
 *   C  invalid sequences, each refused by wr_complete with nothing sent,
 *      then one more Send, which must be the next message the server gets;
 *   D  a Send with Invalidate of R's rkey. R is a user MR, which siw2
 *      lets nobody invalidate (only fast registration MRs of kernel
 *      consumers): the server's receive completes with REM_ACCESS_ERR and
 *      its Terminate ends the connection.
 *   The server checks every receive (opcode, byte_len, immediate data,
 *   flags, data) and, at the end, R's contents.
 * MODE localinv:
 *   The client posts a Local Invalidate of its own (user) MR through
 *   ibv_wr_local_inv: it completes as LOCAL_INV with LOC_PROT_ERR, and the
 *   connection ends.
 *
 * MODE badsqe, badinline, badrqe:
 *   A process that writes its rings behind libsiw2's back. The client
 *   puts a malformed entry straight into its QP's shared ring (libsiw2's
 *   own header says where the rings are): an SQE with 255 SGEs, an inline
 *   SQE that claims 65535 octets, or an RQE with 255 SGEs, which the
 *   server's Send then meets. The kernel must complete that entry with
 *   LOC_QP_OP_ERR, flush what follows and end the connection; the rest
 *   of the run shows nothing broke (no oops, the objects go).
 *
 * MODE ringrace:
 *   Another thread of the client rewrites the SQ ring's entries while
 *   libsiw2 posts RDMA Writes and the kernel reads them (ring_race()).
 *   Every Write completes exactly once: done, or caught malformed with
 *   LOC_QP_OP_ERR and the rest flushed.
 * MODE rtrread (the suite sets mpa_rtr to 4, so that the peer-to-peer RTR
 *   is a zero-length Read):
 *   The client posts a zero-length Read before it connects (siw2 runs
 *   work posted early once connected), so that its Request follows the
 *   RTR's on the wire and is outstanding when the RTR's answer, also a
 *   zero-length Read Response, comes back. That answer must not be taken
 *   for the Read's (RFC 5040 5.2: Responses come in the order of their
 *   Requests): both Reads complete, the second bringing the server's
 *   data, and the client then disconnects.
 * MODE setuid:
 *   Before it connects, the client forks a child that becomes nobody and
 *   asks the RDMA CM to connect the client's QP, which it names by number
 *   (the only way a user of the RDMA CM names a QP): siw2 must refuse.
 *   Once connected, the client gives up root for nobody, then posts
 *   batches A and B and a Send through ibv_post_send(). The kernel
 *   refuses write() on a uverbs file to a process whose credentials
 *   changed since it opened it, which libsiw2's doorbell must survive;
 *   the RDMA CM, which has no other way in, is left alone (the client's
 *   exit ends the connection).
 *
 *   verbsex_test rts DEV [-T SEC]
 *
 * Two QPs of DEV moved RESET -> INIT -> RTR -> RTS with ibv_modify_qp()
 * and IB attributes, each naming the other as its destination, as
 * rdma-core's own tests connect RC QPs (test_cq_events_rc, say). An
 * iWARP QP has a connection only through the CM: the move to RTS must be
 * refused with EINVAL, so that no work request waits for a stream that
 * never comes; a Send posted anyway is flushed once the QP goes to ERR,
 * and the QPs are reset, used again and destroyed.
 *
 * -T SEC bounds every wait (default 60).
 */
#define _GNU_SOURCE
#include <endian.h>
#include <errno.h>
#include <grp.h>
#include <netdb.h>
#include <poll.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/wait.h>

#include <infiniband/verbs.h>
#include <rdma/rdma_cma.h>

#include "siw2.h"	/* libsiw2's QP, for the hostile modes */

#define BUF_LEN 65536
#define NRECV 8
#define RECV_LEN 256
#define RECV_OFF 32768		/* server: receive buffers after R */

/* The server's region R (its buffer from 0) and what goes where. */
#define R_WRITE 0		/* 64 B written from an SGE */
#define R_INLINE 128		/* 48 B written inline */
#define R_IMM 8192		/* IMM_LEN B written with immediate */
#define R_ATOMIC 512		/* one 64-bit word, 100 at first */
#define R_OWN 1024		/* 128 B of the server's own pattern */
#define R_UNSIG 2048		/* 32 B by an unsignaled Write */

/* The client's buffer. */
#define L_WRITE 0
#define L_INLINE 256
#define L_IMM 16384
#define L_UNSIG 512
#define L_SEND 768
#define L_READ 20480		/* read targets, 4 KiB apart */
#define L_ATOMIC 4096		/* atomic results, 8 B apart */
#define L_TAIL 8192

/* A Write with Immediate of several DDP segments (veth MTU 1500). */
#define IMM_LEN 3000
#define IMM_WRITE 0x1234abcdU
#define IMM_SEND 0xfeed0001U
#define ATOMIC_START 100

static const char SGE_A[] = "hello, ";
static const char SGE_B[] = "siw2 sge list";
static const char INL_1[] = "inline single";
static const char *const INL_L[] = { "inline ", "list ", "of three" };
static const char AFTER[] = "after the refusals";
static const char NEVER[] = "this must never arrive";
static const char INVAL[] = "invalidate R";

static int timeout_s = 60;
static int failures;
static const char *who = "?";

struct pdata {
	uint64_t addr;
	uint32_t rkey;
	uint32_t len;
};

struct side {
	struct rdma_event_channel *ch;
	struct rdma_cm_id *listen_id;
	struct rdma_cm_id *id;
	struct ibv_pd *pd;
	struct ibv_cq_ex *cq;
	struct ibv_qp *qp;
	struct ibv_qp_ex *qpx;
	unsigned char *buf;
	struct ibv_mr *mr;
	struct pdata peer;
};

/* One completion as the extended poll API reported it. */
struct comp {
	uint64_t wr_id;
	enum ibv_wc_status status;
	enum ibv_wc_opcode opcode;
	uint32_t byte_len;
	uint32_t imm;
	unsigned int flags;
	uint32_t qp_num;
	uint32_t vendor_err;
};

static void check(bool ok, const char *name, const char *fmt, ...)
{
	va_list ap;

	if (ok) {
		printf("PASS %s: %s\n", who, name);
		return;
	}
	failures++;
	printf("FAIL %s: %s: ", who, name);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
}

static void info(const char *fmt, ...)
{
	va_list ap;

	printf("%s ", who);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
}

static void pattern(unsigned char *p, size_t len, unsigned int seed)
{
	size_t i;

	for (i = 0; i < len; i++)
		p[i] = (unsigned char)(seed * 31 + i * 7 + (i >> 8));
}

static bool is_pattern(const unsigned char *p, size_t len, unsigned int seed)
{
	size_t i;

	for (i = 0; i < len; i++)
		if (p[i] != (unsigned char)(seed * 31 + i * 7 + (i >> 8)))
			return false;
	return true;
}

static double now_s(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec + t.tv_nsec / 1e9;
}

/*
 * Collects up to @n completions through start_poll/next_poll/end_poll,
 * reading every field the CQ offers, for at most @secs seconds.
 */
static int poll_comps_for(struct side *s, struct comp *c, int n, double secs)
{
	struct ibv_poll_cq_attr attr = {};
	double end = now_s() + secs;
	int got = 0, ret;

	while (got < n) {
		ret = ibv_start_poll(s->cq, &attr);
		if (ret == ENOENT) {
			if (now_s() >= end)
				break;
			usleep(1000);
			continue;
		}
		if (ret) {
			info("start_poll: %s", strerror(ret));
			break;
		}
		do {
			c[got] = (struct comp){
				.wr_id = s->cq->wr_id,
				.status = s->cq->status,
				.opcode = ibv_wc_read_opcode(s->cq),
				.byte_len = ibv_wc_read_byte_len(s->cq),
				.imm = be32toh(ibv_wc_read_imm_data(s->cq)),
				.flags = ibv_wc_read_wc_flags(s->cq),
				.qp_num = ibv_wc_read_qp_num(s->cq),
				.vendor_err = ibv_wc_read_vendor_err(s->cq),
			};
			info("WC wr_id=%llu status=%s opcode=%d len=%u imm=0x%x flags=0x%x qpn=%u",
			     (unsigned long long)c[got].wr_id,
			     ibv_wc_status_str(c[got].status), c[got].opcode,
			     c[got].byte_len, c[got].imm, c[got].flags,
			     c[got].qp_num);
			got++;
		} while (got < n && !ibv_next_poll(s->cq));
		ibv_end_poll(s->cq);
	}
	return got;
}

static int poll_comps(struct side *s, struct comp *c, int n)
{
	return poll_comps_for(s, c, n, timeout_s);
}

/* What one completion must be. */
static void expect_comp(const struct side *s, const struct comp *c,
			uint64_t wr_id, enum ibv_wc_opcode op,
			const char *name)
{
	check(c->wr_id == wr_id && c->status == IBV_WC_SUCCESS &&
	      c->opcode == op && c->qp_num == s->qp->qp_num, name,
	      "wr_id %llu (want %llu) status %s opcode %d (want %d) qpn %u (want %u)",
	      (unsigned long long)c->wr_id, (unsigned long long)wr_id,
	      ibv_wc_status_str(c->status), c->opcode, op, c->qp_num,
	      s->qp->qp_num);
}

/* ---- resources ---- */

static int make_cq(struct side *s, struct ibv_context *verbs)
{
	struct ibv_cq_init_attr_ex attr = {
		.cqe = 64,
		.wc_flags = IBV_WC_STANDARD_FLAGS,
	};

	s->cq = ibv_create_cq_ex(verbs, &attr);
	check(s->cq != NULL, "ibv_create_cq_ex with IBV_WC_STANDARD_FLAGS",
	      "%s", strerror(errno));
	return s->cq ? 0 : -1;
}

static void qp_attr(struct side *s, struct ibv_qp_init_attr_ex *a)
{
	*a = (struct ibv_qp_init_attr_ex){
		.send_cq = ibv_cq_ex_to_cq(s->cq),
		.recv_cq = ibv_cq_ex_to_cq(s->cq),
		.cap = { .max_send_wr = 32, .max_recv_wr = NRECV,
			 .max_send_sge = 2, .max_recv_sge = 1,
			 .max_inline_data = 64 },
		.qp_type = IBV_QPT_RC,
		.comp_mask = IBV_QP_INIT_ATTR_PD |
			     IBV_QP_INIT_ATTR_SEND_OPS_FLAGS,
		.pd = s->pd,
		.send_ops_flags = IBV_QP_EX_WITH_SEND |
				  IBV_QP_EX_WITH_SEND_WITH_IMM |
				  IBV_QP_EX_WITH_SEND_WITH_INV |
				  IBV_QP_EX_WITH_RDMA_WRITE |
				  IBV_QP_EX_WITH_RDMA_WRITE_WITH_IMM |
				  IBV_QP_EX_WITH_RDMA_READ |
				  IBV_QP_EX_WITH_ATOMIC_CMP_AND_SWP |
				  IBV_QP_EX_WITH_ATOMIC_FETCH_AND_ADD |
				  IBV_QP_EX_WITH_LOCAL_INV,
	};
}

static int make_common(struct side *s, struct ibv_context *verbs)
{
	s->pd = ibv_alloc_pd(verbs);
	s->buf = aligned_alloc(4096, BUF_LEN);
	if (!s->pd || !s->buf)
		return -1;
	memset(s->buf, 0, BUF_LEN);
	s->mr = ibv_reg_mr(s->pd, s->buf, BUF_LEN,
			   IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
			   IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC);
	if (!s->mr)
		return -1;
	return make_cq(s, verbs);
}

static void free_side(struct side *s)
{
	if (s->qp) {
		if (s->id && s->id->qp == s->qp)
			rdma_destroy_qp(s->id);
		else
			ibv_destroy_qp(s->qp);
	}
	if (s->cq)
		ibv_destroy_cq(ibv_cq_ex_to_cq(s->cq));
	if (s->mr)
		ibv_dereg_mr(s->mr);
	if (s->pd)
		ibv_dealloc_pd(s->pd);
	if (s->id)
		rdma_destroy_id(s->id);
	if (s->listen_id)
		rdma_destroy_id(s->listen_id);
	if (s->ch)
		rdma_destroy_event_channel(s->ch);
	free(s->buf);
}

/* The next CM event of type @want (others are printed and skipped). */
static struct rdma_cm_event *wait_event(struct side *s,
					enum rdma_cm_event_type want)
{
	struct pollfd pfd = { .fd = s->ch->fd, .events = POLLIN };
	double end = now_s() + timeout_s;
	struct rdma_cm_event *ev;

	while (now_s() < end) {
		if (poll(&pfd, 1, 100) <= 0)
			continue;
		if (rdma_get_cm_event(s->ch, &ev))
			return NULL;
		info("CM %s status=%d", rdma_event_str(ev->event), ev->status);
		if (ev->event == want)
			return ev;
		rdma_ack_cm_event(ev);
		if (ev->event == RDMA_CM_EVENT_DISCONNECTED ||
		    ev->event == RDMA_CM_EVENT_REJECTED ||
		    ev->event == RDMA_CM_EVENT_CONNECT_ERROR ||
		    ev->event == RDMA_CM_EVENT_UNREACHABLE)
			return NULL;
	}
	info("TIMEOUT waiting for %s", rdma_event_str(want));
	return NULL;
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

/* ---- the server ---- */

/* One expected receive: its opcode, length, immediate and data. */
struct want_recv {
	const char *name;
	enum ibv_wc_opcode opcode;
	enum ibv_wc_status status;
	uint32_t byte_len;
	unsigned int flags;
	uint32_t imm;
	const char *data;
};

static void check_recv(struct side *s, const struct comp *c,
		       const struct want_recv *w, int idx)
{
	const unsigned char *data = s->buf + RECV_OFF + c->wr_id * RECV_LEN;
	bool ok = c->wr_id == (uint64_t)idx && c->status == w->status &&
		  c->qp_num == s->qp->qp_num;

	if (w->status == IBV_WC_SUCCESS)
		ok = ok && c->opcode == w->opcode &&
		     c->byte_len == w->byte_len && c->flags == w->flags &&
		     (!(w->flags & IBV_WC_WITH_IMM) || c->imm == w->imm) &&
		     (!w->data || (c->wr_id < NRECV &&
				   !memcmp(data, w->data, w->byte_len)));
	check(ok, w->name,
	      "wr_id %llu (want %d) status %s opcode %d len %u flags 0x%x imm 0x%x data '%.*s'",
	      (unsigned long long)c->wr_id, idx, ibv_wc_status_str(c->status),
	      c->opcode, c->byte_len, c->flags, c->imm,
	      c->wr_id < NRECV ? (int)(c->byte_len < 64 ? c->byte_len : 64) : 0,
	      c->wr_id < NRECV ? (const char *)data : "");
}

static void server_checks(struct side *s)
{
	const struct want_recv want[] = {
		{ "receive 0: a Send from an SGE list", IBV_WC_RECV,
		  IBV_WC_SUCCESS, 20, 0, 0, "hello, siw2 sge list" },
		{ "receive 1: a Send of inline data (copied at the setter)",
		  IBV_WC_RECV, IBV_WC_SUCCESS, 13, 0, 0, INL_1 },
		{ "receive 2: a Send of an inline data list", IBV_WC_RECV,
		  IBV_WC_SUCCESS, 20, 0, 0, "inline list of three" },
		{ "receive 3: a Write with Immediate (opcode, byte_len, imm)",
		  IBV_WC_RECV_RDMA_WITH_IMM, IBV_WC_SUCCESS, IMM_LEN,
		  IBV_WC_WITH_IMM, IMM_WRITE, NULL },
		{ "receive 4: a Send with Immediate, no payload", IBV_WC_RECV,
		  IBV_WC_SUCCESS, 0, IBV_WC_WITH_IMM, IMM_SEND, NULL },
		{ "receive 5: the Send after the refused batches (none of them went out)",
		  IBV_WC_RECV, IBV_WC_SUCCESS, sizeof(AFTER) - 1, 0, 0,
		  AFTER },
		{ "receive 6: a Send with Invalidate of a user MR's rkey fails (REM_ACCESS_ERR)",
		  IBV_WC_RECV, IBV_WC_REM_ACCESS_ERR, 0, 0, 0, NULL },
	};
	const int n = sizeof(want) / sizeof(want[0]);
	struct comp c[NRECV];
	uint64_t word;
	int got, i;

	got = poll_comps(s, c, n);
	check(got == n, "every receive completed", "%d of %d", got, n);
	for (i = 0; i < got; i++)
		check_recv(s, &c[i], &want[i], i);

	check(is_pattern(s->buf + R_WRITE, 64, 1),
	      "R: the RDMA Write from an SGE landed", "data differs");
	check(is_pattern(s->buf + R_INLINE, 48, 2),
	      "R: the inline RDMA Write landed", "data differs");
	check(is_pattern(s->buf + R_IMM, IMM_LEN, 3),
	      "R: the Write with Immediate landed", "data differs");
	check(is_pattern(s->buf + R_UNSIG, 32, 4),
	      "R: the unsignaled RDMA Write landed", "data differs");
	memcpy(&word, s->buf + R_ATOMIC, 8);
	check(word == 7, "R: the atomics left 7 (100 +5, swapped 105 for 7, no swap for 999)",
	      "%llu", (unsigned long long)word);
}

/* badrqe: one Send, which meets the client's malformed RQE. */
static void server_send(struct side *s)
{
	struct ibv_sge sge = { .addr = (uintptr_t)s->buf, .length = 16,
			       .lkey = s->mr->lkey };
	struct ibv_send_wr wr = { .wr_id = 80, .sg_list = &sge, .num_sge = 1,
				  .opcode = IBV_WR_SEND,
				  .send_flags = IBV_SEND_SIGNALED }, *bad;
	struct comp c = { .wr_id = ~0ULL };

	check(!ibv_post_send(s->qp, &wr, &bad), "the server's Send posted",
	      "%s", strerror(errno));
	/* Its outcome depends on when the Terminate arrives; it completes. */
	check(poll_comps(s, &c, 1) == 1 && c.wr_id == 80,
	      "the server's Send completes", "no completion");
}

static int run_server(const char *host, const char *port, const char *mode)
{
	struct rdma_conn_param param = {
		.responder_resources = 4,
		.initiator_depth = 4,
	};
	struct ibv_qp_init_attr_ex qa;
	struct sockaddr_storage src;
	struct rdma_cm_event *ev;
	struct side s = {};
	struct ibv_sge sge;
	uint64_t start = ATOMIC_START;
	int i;

	who = "server";
	if (get_addr(host, port, (struct sockaddr *)&src))
		return 2;
	s.ch = rdma_create_event_channel();
	if (!s.ch || rdma_create_id(s.ch, &s.listen_id, NULL, RDMA_PS_TCP) ||
	    rdma_bind_addr(s.listen_id, (struct sockaddr *)&src) ||
	    rdma_listen(s.listen_id, 1)) {
		info("ERROR listen: %s", strerror(errno));
		return 2;
	}
	info("LISTENING");
	fflush(stdout);
	ev = wait_event(&s, RDMA_CM_EVENT_CONNECT_REQUEST);
	if (!ev)
		goto out;
	s.id = ev->id;
	rdma_ack_cm_event(ev);

	if (make_common(&s, s.id->verbs))
		goto out;
	qp_attr(&s, &qa);
	s.qp = ibv_create_qp_ex(s.id->verbs, &qa);
	check(s.qp != NULL, "ibv_create_qp_ex with every siw2 send op",
	      "%s", strerror(errno));
	if (!s.qp)
		goto out;
	pattern(s.buf + R_OWN, 128, 9);
	memcpy(s.buf + R_ATOMIC, &start, 8);
	for (i = 0; i < NRECV; i++) {
		struct ibv_recv_wr wr = { .wr_id = i, .sg_list = &sge,
					  .num_sge = 1 }, *bad;

		sge = (struct ibv_sge){
			.addr = (uintptr_t)s.buf + RECV_OFF + i * RECV_LEN,
			.length = RECV_LEN, .lkey = s.mr->lkey,
		};
		if (ibv_post_recv(s.qp, &wr, &bad))
			goto out;
	}
	s.peer = (struct pdata){ .addr = (uintptr_t)s.buf,
				 .rkey = s.mr->rkey, .len = RECV_OFF };
	param.qp_num = s.qp->qp_num;
	param.private_data = &s.peer;
	param.private_data_len = sizeof(s.peer);
	if (rdma_accept(s.id, &param)) {
		info("ERROR rdma_accept: %s", strerror(errno));
		goto out;
	}
	ev = wait_event(&s, RDMA_CM_EVENT_ESTABLISHED);
	if (!ev)
		goto out;
	rdma_ack_cm_event(ev);

	if (!strcmp(mode, "main"))
		server_checks(&s);
	else if (!strcmp(mode, "badrqe"))
		server_send(&s);
	ev = wait_event(&s, RDMA_CM_EVENT_DISCONNECTED);
	check(ev != NULL, "the connection ends", "no DISCONNECTED");
	if (ev)
		rdma_ack_cm_event(ev);
out:
	free_side(&s);
	info("DONE");
	return failures ? 1 : 0;
}

/* ---- the client ---- */

static struct ibv_sge lsge(struct side *s, size_t off, uint32_t len)
{
	return (struct ibv_sge){ .addr = (uintptr_t)s->buf + off,
				 .length = len, .lkey = s->mr->lkey };
}

static uint64_t raddr(struct side *s, size_t off)
{
	return s->peer.addr + off;
}

/* Batch A: Sends, Writes, immediate data. */
static void batch_a(struct side *s)
{
	struct ibv_qp_ex *q = s->qpx;
	struct ibv_sge sl[2] = { lsge(s, L_SEND, sizeof(SGE_A) - 1),
				 lsge(s, L_SEND + 64, sizeof(SGE_B) - 1) };
	struct ibv_data_buf dl[3];
	char inl[64], parts[3][16];
	struct comp c[8];
	int i, n, err;

	memcpy(s->buf + L_SEND, SGE_A, sizeof(SGE_A) - 1);
	memcpy(s->buf + L_SEND + 64, SGE_B, sizeof(SGE_B) - 1);
	pattern(s->buf + L_WRITE, 64, 1);
	pattern(s->buf + L_INLINE, 48, 2);
	pattern(s->buf + L_IMM, IMM_LEN, 3);
	strcpy(inl, INL_1);
	for (i = 0; i < 3; i++) {
		strcpy(parts[i], INL_L[i]);
		dl[i] = (struct ibv_data_buf){ .addr = parts[i],
					       .length = strlen(parts[i]) };
	}

	ibv_wr_start(q);
	q->wr_flags = IBV_SEND_SIGNALED;
	q->wr_id = 1;
	ibv_wr_send(q);
	ibv_wr_set_sge_list(q, 2, sl);
	q->wr_id = 2;
	ibv_wr_send(q);
	ibv_wr_set_inline_data(q, inl, strlen(inl));
	q->wr_id = 3;
	ibv_wr_send(q);
	ibv_wr_set_inline_data_list(q, 3, dl);
	q->wr_id = 4;
	ibv_wr_rdma_write(q, s->peer.rkey, raddr(s, R_WRITE));
	ibv_wr_set_sge(q, s->mr->lkey, (uintptr_t)s->buf + L_WRITE, 64);
	q->wr_id = 5;
	ibv_wr_rdma_write(q, s->peer.rkey, raddr(s, R_INLINE));
	ibv_wr_set_inline_data(q, s->buf + L_INLINE, 48);
	q->wr_id = 6;
	ibv_wr_rdma_write_imm(q, s->peer.rkey, raddr(s, R_IMM),
			      htobe32(IMM_WRITE));
	ibv_wr_set_sge(q, s->mr->lkey, (uintptr_t)s->buf + L_IMM, IMM_LEN);
	q->wr_id = 7;
	ibv_wr_send_imm(q, htobe32(IMM_SEND));
	/* Inline data was copied by its setter: these changes must not show. */
	memset(inl, 'X', sizeof(inl));
	memset(parts, 'Y', sizeof(parts));
	memset(s->buf + L_INLINE, 0, 48);
	err = ibv_wr_complete(q);
	check(!err, "batch A (7 requests) accepted by wr_complete", "%s",
	      strerror(err));

	n = poll_comps(s, c, 7);
	check(n == 7, "batch A: 7 completions", "%d", n);
	for (i = 0; i < n; i++) {
		static const enum ibv_wc_opcode op[] = {
			IBV_WC_SEND, IBV_WC_SEND, IBV_WC_SEND,
			IBV_WC_RDMA_WRITE, IBV_WC_RDMA_WRITE,
			IBV_WC_RDMA_WRITE, IBV_WC_SEND,
		};
		static const char *const name[] = {
			"wr_send + wr_set_sge_list completes as SEND",
			"wr_send + wr_set_inline_data completes as SEND",
			"wr_send + wr_set_inline_data_list completes as SEND",
			"wr_rdma_write + wr_set_sge completes as RDMA_WRITE",
			"wr_rdma_write + wr_set_inline_data completes as RDMA_WRITE",
			"wr_rdma_write_imm completes as RDMA_WRITE",
			"wr_send_imm completes as SEND",
		};

		expect_comp(s, &c[i], i + 1, op[i], name[i]);
	}
}

/* Batch B: an unsignaled Write, Reads, atomics. */
static void batch_b(struct side *s)
{
	struct ibv_qp_ex *q = s->qpx;
	static const struct { size_t r, len; unsigned int seed; } rd[] = {
		{ R_WRITE, 64, 1 }, { R_INLINE, 48, 2 }, { R_IMM, IMM_LEN, 3 },
		{ R_OWN, 128, 9 }, { R_UNSIG, 32, 4 },
	};
	static const char *const rd_name[] = {
		"wr_rdma_read of the SGE Write's data",
		"wr_rdma_read of the inline Write's data",
		"wr_rdma_read of the Write with Immediate's data",
		"wr_rdma_read of the server's own pattern",
		"wr_rdma_read of the unsignaled Write's data",
	};
	uint64_t res[4];
	struct comp c[12];
	int i, n, err;

	pattern(s->buf + L_UNSIG, 32, 4);
	ibv_wr_start(q);
	q->wr_id = 10;
	q->wr_flags = 0;
	ibv_wr_rdma_write(q, s->peer.rkey, raddr(s, R_UNSIG));
	ibv_wr_set_sge(q, s->mr->lkey, (uintptr_t)s->buf + L_UNSIG, 32);
	q->wr_flags = IBV_SEND_SIGNALED;
	for (i = 0; i < 5; i++) {
		q->wr_id = 11 + i;
		ibv_wr_rdma_read(q, s->peer.rkey, raddr(s, rd[i].r));
		ibv_wr_set_sge(q, s->mr->lkey,
			       (uintptr_t)s->buf + L_READ + i * 4096,
			       rd[i].len);
	}
	q->wr_id = 16;
	ibv_wr_atomic_fetch_add(q, s->peer.rkey, raddr(s, R_ATOMIC), 5);
	ibv_wr_set_sge(q, s->mr->lkey, (uintptr_t)s->buf + L_ATOMIC, 8);
	q->wr_id = 17;
	ibv_wr_atomic_cmp_swp(q, s->peer.rkey, raddr(s, R_ATOMIC), 105, 7);
	ibv_wr_set_sge(q, s->mr->lkey, (uintptr_t)s->buf + L_ATOMIC + 8, 8);
	q->wr_id = 18;
	ibv_wr_atomic_cmp_swp(q, s->peer.rkey, raddr(s, R_ATOMIC), 999, 1);
	ibv_wr_set_sge(q, s->mr->lkey, (uintptr_t)s->buf + L_ATOMIC + 16, 8);
	q->wr_id = 19;
	ibv_wr_atomic_fetch_add(q, s->peer.rkey, raddr(s, R_ATOMIC), 0);
	ibv_wr_set_sge(q, s->mr->lkey, (uintptr_t)s->buf + L_ATOMIC + 24, 8);
	err = ibv_wr_complete(q);
	check(!err, "batch B (10 requests, one unsignaled) accepted", "%s",
	      strerror(err));

	n = poll_comps(s, c, 9);
	check(n == 9, "batch B: 9 completions, none for the unsignaled Write",
	      "%d", n);
	for (i = 0; i < 5 && i < n; i++) {
		expect_comp(s, &c[i], 11 + i, IBV_WC_RDMA_READ, rd_name[i]);
		check(is_pattern(s->buf + L_READ + i * 4096, rd[i].len,
				 rd[i].seed), rd_name[i],
		      "read data differs");
	}
	if (n >= 9) {
		expect_comp(s, &c[5], 16, IBV_WC_FETCH_ADD,
			    "wr_atomic_fetch_add completes as FETCH_ADD");
		expect_comp(s, &c[6], 17, IBV_WC_COMP_SWAP,
			    "wr_atomic_cmp_swp completes as COMP_SWAP");
		expect_comp(s, &c[7], 18, IBV_WC_COMP_SWAP,
			    "a failing wr_atomic_cmp_swp completes as COMP_SWAP");
		expect_comp(s, &c[8], 19, IBV_WC_FETCH_ADD,
			    "wr_atomic_fetch_add of 0 completes as FETCH_ADD");
	}
	memcpy(res, s->buf + L_ATOMIC, sizeof(res));
	check(res[0] == 100, "fetch_add returns the original value (100)",
	      "%llu", (unsigned long long)res[0]);
	check(res[1] == 105, "cmp_swp returns the original value (105) and swaps",
	      "%llu", (unsigned long long)res[1]);
	check(res[2] == 7, "a failing cmp_swp returns the current value (7)",
	      "%llu", (unsigned long long)res[2]);
	check(res[3] == 7, "the failing cmp_swp did not swap (still 7)",
	      "%llu", (unsigned long long)res[3]);
}

/* Batch C: invalid sequences, then one good Send. */
static void refused(struct side *s, int want, const char *name, int step)
{
	struct ibv_qp_ex *q = s->qpx;
	struct ibv_sge two[2] = { lsge(s, L_TAIL, 8), lsge(s, L_TAIL + 8, 8) };
	char big[512];
	int err;

	memcpy(s->buf + L_TAIL, NEVER, sizeof(NEVER) - 1);
	memset(big, 'b', sizeof(big));
	ibv_wr_start(q);
	q->wr_id = 20 + step;
	q->wr_flags = IBV_SEND_SIGNALED;
	switch (step) {
	case 0:		/* a setter before any builder */
		ibv_wr_set_sge(q, s->mr->lkey, (uintptr_t)s->buf + L_TAIL, 8);
		ibv_wr_send(q);
		break;
	case 1:		/* an atomic into 4 bytes */
		ibv_wr_atomic_fetch_add(q, s->peer.rkey, raddr(s, R_ATOMIC), 1);
		ibv_wr_set_sge(q, s->mr->lkey, (uintptr_t)s->buf + L_TAIL, 4);
		break;
	case 2:		/* inline data beyond the QP's max_inline_data */
		ibv_wr_send(q);
		ibv_wr_set_inline_data(q, big, sizeof(big));
		break;
	case 3:		/* a Read into 2 SGEs (max_sge_rd is 1) */
		ibv_wr_rdma_read(q, s->peer.rkey, raddr(s, R_OWN));
		ibv_wr_set_sge_list(q, 2, two);
		break;
	case 4:		/* a Send with Immediate carrying data */
		ibv_wr_send_imm(q, htobe32(1));
		ibv_wr_set_sge(q, s->mr->lkey, (uintptr_t)s->buf + L_TAIL, 8);
		break;
	case 5:		/* a good Send, then an atomic without a buffer */
		ibv_wr_send(q);
		ibv_wr_set_sge(q, s->mr->lkey, (uintptr_t)s->buf + L_TAIL,
			       sizeof(NEVER) - 1);
		ibv_wr_atomic_cmp_swp(q, s->peer.rkey, raddr(s, R_ATOMIC), 7,
				      8);
		break;
	case 6:		/* a good Send, then wr_abort */
		ibv_wr_send(q);
		ibv_wr_set_sge(q, s->mr->lkey, (uintptr_t)s->buf + L_TAIL,
			       sizeof(NEVER) - 1);
		ibv_wr_abort(q);
		return;
	}
	err = ibv_wr_complete(q);
	check(err == want, name, "wr_complete returned %d (%s), want %d", err,
	      strerror(err), want);
}

static void batch_c(struct side *s)
{
	static const char *const name[] = {
		"refused: a setter before any builder (EINVAL)",
		"refused: an atomic into 4 bytes (EINVAL)",
		"refused: inline data beyond max_inline_data (EINVAL)",
		"refused: a Read into 2 SGEs, max_sge_rd 1 (EINVAL)",
		"refused: a Send with Immediate carrying data (EINVAL)",
		"refused: a good Send, then an atomic without a buffer: the whole batch (EINVAL)",
		NULL,	/* wr_abort: the server sees whether it went out */
	};
	struct ibv_qp_ex *q = s->qpx;
	struct comp c[8];
	int i, n, err;

	for (i = 0; i < 7; i++)
		refused(s, EINVAL, name[i], i);

	memcpy(s->buf + L_SEND + 128, AFTER, sizeof(AFTER) - 1);
	ibv_wr_start(q);
	q->wr_id = 30;
	q->wr_flags = IBV_SEND_SIGNALED;
	ibv_wr_send(q);
	ibv_wr_set_sge(q, s->mr->lkey, (uintptr_t)s->buf + L_SEND + 128,
		       sizeof(AFTER) - 1);
	err = ibv_wr_complete(q);
	check(!err, "a good batch after the refused ones", "%s",
	      strerror(err));
	n = poll_comps(s, c, 1);
	check(n == 1 && c[0].wr_id == 30,
	      "the only completion after the refusals is the good Send's",
	      "%d completions, first wr_id %llu", n,
	      n ? (unsigned long long)c[0].wr_id : 0ULL);
	/* Nothing refused may show up later either. */
	usleep(200000);
	n = poll_comps_for(s, c, 8, 0);
	check(n == 0, "no completion for a refused request", "%d", n);
}

/* Batch D: a Send with Invalidate, which ends the connection. */
static void batch_d(struct side *s)
{
	struct ibv_qp_ex *q = s->qpx;
	struct comp c[2];
	int err, n;

	memcpy(s->buf + L_SEND + 192, INVAL, sizeof(INVAL) - 1);
	ibv_wr_start(q);
	q->wr_id = 40;
	q->wr_flags = IBV_SEND_SIGNALED;
	ibv_wr_send_inv(q, s->peer.rkey);
	ibv_wr_set_sge(q, s->mr->lkey, (uintptr_t)s->buf + L_SEND + 192,
		       sizeof(INVAL) - 1);
	err = ibv_wr_complete(q);
	check(!err, "wr_send_inv accepted", "%s", strerror(err));
	n = poll_comps(s, c, 1);
	check(n == 1 && c[0].wr_id == 40 && (c[0].status != IBV_WC_SUCCESS ||
					    c[0].opcode == IBV_WC_SEND),
	      "wr_send_inv completes (as SEND, or flushed by the Terminate)",
	      "%d completions", n);
}

static void local_inv(struct side *s)
{
	struct ibv_qp_ex *q = s->qpx;
	struct comp c[2];
	int err, n;

	ibv_wr_start(q);
	q->wr_id = 50;
	q->wr_flags = IBV_SEND_SIGNALED;
	ibv_wr_local_inv(q, s->mr->lkey);
	err = ibv_wr_complete(q);
	check(!err, "wr_local_inv accepted", "%s", strerror(err));
	n = poll_comps(s, c, 1);
	check(n == 1 && c[0].wr_id == 50 &&
	      c[0].status == IBV_WC_LOC_PROT_ERR &&
	      c[0].opcode == IBV_WC_LOCAL_INV,
	      "wr_local_inv of a user MR completes as LOCAL_INV with LOC_PROT_ERR",
	      "%d completions: wr_id %llu status %s opcode %d", n,
	      n ? (unsigned long long)c[0].wr_id : 0ULL,
	      n ? ibv_wc_status_str(c[0].status) : "-",
	      n ? (int)c[0].opcode : -1);
}

/*
 * rtrread, before connecting: a zero-length Read. Its sink names our MR,
 * so that its Response differs from the RTR's in the Data Sink STag.
 */
static void rtr_read_early(struct side *s)
{
	struct ibv_qp_ex *q = s->qpx;
	int err;

	ibv_wr_start(q);
	q->wr_id = 89;
	q->wr_flags = IBV_SEND_SIGNALED;
	ibv_wr_rdma_read(q, 0, 0);
	ibv_wr_set_sge(q, s->mr->lkey, (uintptr_t)s->buf + L_READ, 0);
	err = ibv_wr_complete(q);
	check(!err, "a zero-length Read posted before connecting accepted",
	      "%s", strerror(err));
}

/* rtrread, once connected: the early Read completes, then a real one. */
static void rtr_read(struct side *s)
{
	struct ibv_qp_ex *q = s->qpx;
	struct comp c[2];
	int err, n;

	n = poll_comps(s, c, 1);
	check(n == 1, "the zero-length Read posted early completes", "%d", n);
	if (n == 1)
		expect_comp(s, &c[0], 89, IBV_WC_RDMA_READ,
			    "the zero-length Read posted early completes as RDMA_READ");
	ibv_wr_start(q);
	q->wr_id = 90;
	q->wr_flags = IBV_SEND_SIGNALED;
	ibv_wr_rdma_read(q, s->peer.rkey, raddr(s, R_OWN));
	ibv_wr_set_sge(q, s->mr->lkey, (uintptr_t)s->buf + L_READ, 128);
	err = ibv_wr_complete(q);
	check(!err, "a Read after the RTR accepted", "%s", strerror(err));
	n = poll_comps(s, c, 1);
	check(n == 1, "a Read after the RTR completes", "%d", n);
	if (n == 1)
		expect_comp(s, &c[0], 90, IBV_WC_RDMA_READ,
			    "a Read after the RTR completes as RDMA_READ");
	check(is_pattern(s->buf + L_READ, 128, 9),
	      "a Read after the RTR brings the server's pattern",
	      "read data differs");
	rdma_disconnect(s->id);
}

static int become_nobody(void)
{
	return setgroups(0, NULL) || setresgid(65534, 65534, 65534) ||
	       setresuid(65534, 65534, 65534);
}

/*
 * The child of foreign_connect(): exits 0 if rdma_connect() naming @qpn
 * was refused, 1 if it was taken, more if it could not get that far.
 */
static void __attribute__((noreturn))
foreign_child(const struct sockaddr *dst, uint32_t qpn)
{
	struct rdma_conn_param p = {
		.responder_resources = 1, .initiator_depth = 1, .qp_num = qpn,
	};
	struct rdma_event_channel *ch;
	struct rdma_cm_event *ev;
	struct rdma_cm_id *id;
	int want[2] = { RDMA_CM_EVENT_ADDR_RESOLVED,
			RDMA_CM_EVENT_ROUTE_RESOLVED };
	int i, type;

	if (become_nobody())
		_exit(4);
	ch = rdma_create_event_channel();
	if (!ch || rdma_create_id(ch, &id, NULL, RDMA_PS_TCP) ||
	    rdma_resolve_addr(id, NULL, (struct sockaddr *)dst, 5000))
		_exit(5);
	for (i = 0; i < 2; i++) {
		if (rdma_get_cm_event(ch, &ev))
			_exit(6);
		type = ev->event;
		rdma_ack_cm_event(ev);
		if (type != want[i] ||
		    (i == 0 && rdma_resolve_route(id, 5000)))
			_exit(7);
	}
	_exit(rdma_connect(id, &p) ? 0 : 1);
}

/* setuid: another user cannot connect our QP by naming its number. */
static void foreign_connect(struct side *s, const struct sockaddr *dst)
{
	pid_t pid;
	int st = -1;

	fflush(stdout);
	pid = fork();
	if (pid == 0)
		foreign_child(dst, s->qp->qp_num);
	if (pid < 0 || waitpid(pid, &st, 0) != pid)
		st = -1;
	check(st >= 0 && WIFEXITED(st) && WEXITSTATUS(st) == 0,
	      "another user's rdma_connect naming our QP is refused",
	      "child status %#x (1: taken, 4-7: setup failed)", st);
}

/* setuid: nobody from now on; the verbs must go on working. */
static void drop_root(struct side *s)
{
	struct ibv_sge sge = lsge(s, L_SEND, sizeof(SGE_A) - 1);
	struct ibv_send_wr wr = { .wr_id = 60, .sg_list = &sge, .num_sge = 1,
				  .opcode = IBV_WR_SEND,
				  .send_flags = IBV_SEND_SIGNALED }, *bad;
	struct comp c[2];
	int n;

	if (become_nobody()) {
		check(false, "the client becomes nobody", "%s",
		      strerror(errno));
		return;
	}
	check(getuid() == 65534, "the client becomes nobody", "uid %u",
	      (unsigned int)getuid());
	batch_a(s);
	batch_b(s);
	memcpy(s->buf + L_SEND, SGE_A, sizeof(SGE_A) - 1);
	check(!ibv_post_send(s->qp, &wr, &bad),
	      "ibv_post_send as nobody accepted", "%s", strerror(errno));
	n = poll_comps(s, c, 1);
	check(n == 1, "ibv_post_send as nobody completes", "%d", n);
	if (n == 1)
		expect_comp(s, &c[0], 60, IBV_WC_SEND,
			    "ibv_post_send as nobody completes as SEND");
}

/*
 * Writes @len octets of an entry into @r's next slot and publishes it,
 * as libsiw2 does but with no check at all.
 */
static void raw_post(struct siw2_ring *r, const void *ent, size_t len)
{
	uint32_t prod = __atomic_load_n(&r->ctl->prod, __ATOMIC_RELAXED);

	memcpy((char *)r->ents + (size_t)(prod & (r->num - 1)) * r->ent_size,
	       ent, len);
	__atomic_store_n(&r->ctl->prod, prod + 1, __ATOMIC_RELEASE);
}

static struct siw2_qp *uqp(struct ibv_qp *qp)
{
	return pabi_container_of(qp, struct siw2_qp, vqp.qp);
}

/*
 * badsqe, badinline: a malformed SQE, then a valid Send through libsiw2,
 * whose doorbell makes the kernel look. The first completes with
 * LOC_QP_OP_ERR, the second is flushed.
 */
static void bad_sqe(struct side *s, const char *mode)
{
	struct siw2_sqe sqe = { .wr_id = 60, .opcode = SIW2_OP_SEND,
				.flags = SIW2_WQE_SIGNALED };
	struct ibv_sge sge = { .addr = (uintptr_t)s->buf, .length = 16,
			       .lkey = s->mr->lkey };
	struct ibv_send_wr wr = { .wr_id = 61, .sg_list = &sge, .num_sge = 1,
				  .opcode = IBV_WR_SEND,
				  .send_flags = IBV_SEND_SIGNALED }, *bad;
	const char *name;
	struct comp c[2];
	int n;

	if (!strcmp(mode, "badinline")) {
		sqe.flags |= SIW2_WQE_INLINE;
		sqe.inline_len = 0xffff;
		name = "an inline SQE of 65535 octets completes with LOC_QP_OP_ERR, the next is flushed";
	} else {
		sqe.num_sge = 255;
		name = "an SQE of 255 SGEs completes with LOC_QP_OP_ERR, the next is flushed";
	}
	raw_post(&uqp(s->qp)->sq, &sqe, sizeof(sqe));
	check(!ibv_post_send(s->qp, &wr, &bad), "a valid Send posted after it",
	      "%s", strerror(errno));
	n = poll_comps(s, c, 2);
	check(n == 2 && c[0].wr_id == 60 && c[0].status == IBV_WC_LOC_QP_OP_ERR &&
	      c[1].wr_id == 61 && c[1].status == IBV_WC_WR_FLUSH_ERR,
	      name, "%d completions: %llu %s, %llu %s", n,
	      n > 0 ? (unsigned long long)c[0].wr_id : 0ULL,
	      n > 0 ? ibv_wc_status_str(c[0].status) : "-",
	      n > 1 ? (unsigned long long)c[1].wr_id : 0ULL,
	      n > 1 ? ibv_wc_status_str(c[1].status) : "-");
}

/* badrqe: the malformed RQE goes in before the connection. */
static void bad_rqe_post(struct side *s)
{
	struct siw2_rqe rqe = { .wr_id = 70, .num_sge = 255 };

	raw_post(&uqp(s->qp)->rq, &rqe, sizeof(rqe));
}

static void bad_rqe_check(struct side *s)
{
	struct comp c = { .wr_id = ~0ULL };

	check(poll_comps(s, &c, 1) == 1 && c.wr_id == 70 &&
	      c.status == IBV_WC_LOC_QP_OP_ERR && c.opcode == IBV_WC_RECV,
	      "an RQE of 255 SGEs completes with LOC_QP_OP_ERR",
	      "wr_id %llu status %s opcode %d", (unsigned long long)c.wr_id,
	      ibv_wc_status_str(c.status), c.opcode);
}

/*
 * ringrace: a second thread rewrites every SQE of the shared ring, over
 * and over, while libsiw2 writes them and the kernel reads them (the
 * class of rxe's receive-path double fetch, issue 38): at any moment an
 * entry claims one SGE, as libsiw2 wrote it, or, one sweep in 64, 255.
 * Whatever the kernel read, it must judge the copy it executes: each
 * Write completes exactly once, as a Write or, for an entry caught with
 * 255 SGEs, with LOC_QP_OP_ERR, and every one after that is flushed.
 */
#define RACE_WRS 400
#define RACE_BATCH 16

static int race_stop;

static void *race_flip(void *arg)
{
	struct siw2_ring *r = arg;
	struct siw2_sqe *e;
	unsigned int n = 0;
	uint32_t i;

	while (!__atomic_load_n(&race_stop, __ATOMIC_RELAXED)) {
		for (i = 0; i < r->num; i++) {
			e = (void *)((char *)r->ents + (size_t)i * r->ent_size);
			__atomic_store_n(&e->num_sge, n % 64 ? 1 : 255,
					 __ATOMIC_RELAXED);
		}
		n++;
	}
	return NULL;
}

static void ring_race(struct side *s)
{
	static unsigned char seen[RACE_WRS];
	int posted = 0, done = 0, ok = 0, bad = 0, flushed = 0, other = 0;
	int dup = 0, unknown = 0, n, i, k;
	struct comp c[RACE_BATCH];
	bool failed = false;
	pthread_t t;

	if (pthread_create(&t, NULL, race_flip, &uqp(s->qp)->sq)) {
		check(false, "cve class, ring rewritten while read: the rewriting thread starts", "%s",
		      strerror(errno));
		return;
	}
	while (posted < RACE_WRS) {
		for (k = 0; k < RACE_BATCH && posted < RACE_WRS; k++) {
			struct ibv_sge sge = lsge(s, 0, 16);
			struct ibv_send_wr wr = {
				.wr_id = posted, .sg_list = &sge, .num_sge = 1,
				.opcode = IBV_WR_RDMA_WRITE,
				.send_flags = IBV_SEND_SIGNALED,
				.wr.rdma = { .remote_addr = raddr(s, 0),
					     .rkey = s->peer.rkey },
			}, *badwr;

			if (ibv_post_send(s->qp, &wr, &badwr))
				break;
			posted++;
		}
		n = poll_comps_for(s, c, posted - done < RACE_BATCH ?
				   posted - done : RACE_BATCH, 20);
		for (i = 0; i < n; i++) {
			if (c[i].wr_id >= RACE_WRS) {
				unknown++;
				continue;
			}
			if (seen[c[i].wr_id]++)
				dup++;
			if (c[i].status == IBV_WC_SUCCESS && !failed)
				ok++;
			else if (c[i].status == IBV_WC_LOC_QP_OP_ERR && !failed)
				bad++;
			else if (c[i].status == IBV_WC_WR_FLUSH_ERR && failed)
				flushed++;
			else
				other++;
			if (c[i].status != IBV_WC_SUCCESS)
				failed = true;
		}
		done += n;
		if (n == 0 || k < RACE_BATCH)
			break;
	}
	__atomic_store_n(&race_stop, 1, __ATOMIC_RELAXED);
	pthread_join(t, NULL);
	info("ring race: %d posted, %d Writes, %d LOC_QP_OP_ERR, %d flushed",
	     posted, ok, bad, flushed);
	check(done == posted && !dup && !unknown,
	      "cve class, ring rewritten while read: every WR completes exactly once",
	      "%d posted, %d completions, %d twice, %d unknown", posted, done,
	      dup, unknown);
	check(!other,
	      "cve class, ring rewritten while read: Writes complete, one caught with 255 SGEs fails with LOC_QP_OP_ERR, the rest are flushed",
	      "%d completions out of that order", other);
	check(posted > 0, "cve class, ring rewritten while read: Writes were posted", "none");
	/* A QP still in RTS has not seen a bad entry; end it ourselves. */
	if (!failed)
		rdma_disconnect(s->id);
}

static int run_client(const char *host, const char *port, const char *mode)
{
	struct rdma_conn_param param = {
		.responder_resources = 8,
		.initiator_depth = 8,
	};
	struct ibv_qp_init_attr_ex qa;
	struct sockaddr_storage dst;
	struct rdma_cm_event *ev;
	struct side s = {};

	who = "client";
	if (get_addr(host, port, (struct sockaddr *)&dst))
		return 2;
	s.ch = rdma_create_event_channel();
	if (!s.ch || rdma_create_id(s.ch, &s.id, NULL, RDMA_PS_TCP) ||
	    rdma_resolve_addr(s.id, NULL, (struct sockaddr *)&dst, 5000)) {
		info("ERROR resolve: %s", strerror(errno));
		goto out;
	}
	ev = wait_event(&s, RDMA_CM_EVENT_ADDR_RESOLVED);
	if (!ev)
		goto out;
	rdma_ack_cm_event(ev);
	if (rdma_resolve_route(s.id, 5000))
		goto out;
	ev = wait_event(&s, RDMA_CM_EVENT_ROUTE_RESOLVED);
	if (!ev)
		goto out;
	rdma_ack_cm_event(ev);

	if (make_common(&s, s.id->verbs))
		goto out;
	/* As perftest -R does for the new post-send API. */
	qp_attr(&s, &qa);
	if (rdma_create_qp_ex(s.id, &qa)) {
		check(false, "rdma_create_qp_ex with every siw2 send op", "%s",
		      strerror(errno));
		goto out;
	}
	s.qp = s.id->qp;
	s.qpx = ibv_qp_to_qp_ex(s.qp);
	check(s.qpx && s.qpx->wr_send && s.qpx->wr_atomic_cmp_swp &&
	      !s.qpx->wr_bind_mw,
	      "rdma_create_qp_ex with every siw2 send op: ibv_qp_to_qp_ex",
	      "qp_ex %p", (void *)s.qpx);
	if (!s.qpx)
		goto out;
	info("max_inline_data granted: %u", qa.cap.max_inline_data);
	if (!strcmp(mode, "badrqe"))
		bad_rqe_post(&s);
	if (!strcmp(mode, "rtrread"))
		rtr_read_early(&s);
	if (!strcmp(mode, "setuid"))
		foreign_connect(&s, (struct sockaddr *)&dst);

	if (rdma_connect(s.id, &param)) {
		info("ERROR rdma_connect: %s", strerror(errno));
		goto out;
	}
	ev = wait_event(&s, RDMA_CM_EVENT_ESTABLISHED);
	if (!ev)
		goto out;
	if (ev->param.conn.private_data_len >= sizeof(s.peer))
		memcpy(&s.peer, ev->param.conn.private_data, sizeof(s.peer));
	rdma_ack_cm_event(ev);
	check(s.peer.rkey != 0, "the server's region arrived in the Private Data",
	      "none");

	if (!strcmp(mode, "main")) {
		batch_a(&s);
		batch_b(&s);
		batch_c(&s);
		batch_d(&s);
	} else if (!strcmp(mode, "badsqe") || !strcmp(mode, "badinline")) {
		bad_sqe(&s, mode);
	} else if (!strcmp(mode, "badrqe")) {
		bad_rqe_check(&s);
	} else if (!strcmp(mode, "rtrread")) {
		rtr_read(&s);
	} else if (!strcmp(mode, "ringrace")) {
		ring_race(&s);
	} else if (!strcmp(mode, "setuid")) {
		drop_root(&s);
		/* The RDMA CM refuses this process now; its exit disconnects. */
		info("DONE");
		return failures ? 1 : 0;
	} else {
		local_inv(&s);
	}
	ev = wait_event(&s, RDMA_CM_EVENT_DISCONNECTED);
	check(ev != NULL, "the connection ends", "no DISCONNECTED");
	if (ev)
		rdma_ack_cm_event(ev);
out:
	free_side(&s);
	info("DONE");
	return failures ? 1 : 0;
}

/* ---- MODE rts: a QP moved to RTS without a connection ---- */

static int rts_modify(struct ibv_qp *qp, enum ibv_qp_state state,
		      struct ibv_qp_attr *a, int mask)
{
	a->qp_state = state;
	return ibv_modify_qp(qp, a, IBV_QP_STATE | mask);
}

static enum ibv_qp_state rts_state(struct ibv_qp *qp)
{
	struct ibv_qp_init_attr init;
	struct ibv_qp_attr a;

	if (ibv_query_qp(qp, &a, IBV_QP_STATE, &init))
		return (enum ibv_qp_state)-1;
	return a.qp_state;
}

/* RESET -> INIT -> RTR as an IB consumer does it, towards @dest_qpn. */
static int rts_to_rtr(struct ibv_qp *qp, uint32_t dest_qpn,
		      const union ibv_gid *gid, uint16_t lid)
{
	struct ibv_qp_attr a = {};
	int err;

	err = rts_modify(qp, IBV_QPS_RESET, &a, 0);
	if (err)
		return err;
	a.pkey_index = 0;
	a.port_num = 1;
	a.qp_access_flags = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
			    IBV_ACCESS_REMOTE_READ;
	err = rts_modify(qp, IBV_QPS_INIT, &a, IBV_QP_PKEY_INDEX |
			 IBV_QP_PORT | IBV_QP_ACCESS_FLAGS);
	if (err)
		return err;
	memset(&a, 0, sizeof(a));
	a.path_mtu = IBV_MTU_1024;
	a.dest_qp_num = dest_qpn;
	a.rq_psn = 0x100;
	a.max_dest_rd_atomic = 1;
	a.min_rnr_timer = 12;
	a.ah_attr.is_global = 1;
	a.ah_attr.grh.dgid = *gid;
	a.ah_attr.grh.sgid_index = 0;
	a.ah_attr.grh.hop_limit = 1;
	a.ah_attr.dlid = lid;
	a.ah_attr.port_num = 1;
	return rts_modify(qp, IBV_QPS_RTR, &a, IBV_QP_AV | IBV_QP_PATH_MTU |
			  IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
			  IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER);
}

static int rts_to_rts(struct ibv_qp *qp)
{
	struct ibv_qp_attr a = {
		.timeout = 14,
		.retry_cnt = 7,
		.rnr_retry = 7,
		.sq_psn = 0x100,
		.max_rd_atomic = 1,
	};

	return rts_modify(qp, IBV_QPS_RTS, &a, IBV_QP_TIMEOUT |
			  IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
			  IBV_QP_SQ_PSN | IBV_QP_MAX_QP_RD_ATOMIC);
}

/* Polls @cq for one completion for at most @secs seconds. */
static int rts_poll(struct ibv_cq *cq, struct ibv_wc *wc, double secs)
{
	double end = now_s() + secs;
	int n;

	do {
		n = ibv_poll_cq(cq, 1, wc);
		if (n)
			return n;
		usleep(10000);
	} while (now_s() < end);
	return 0;
}

static int run_rts(const char *name)
{
	struct ibv_qp_init_attr qa = {
		.cap = { .max_send_wr = 4, .max_recv_wr = 4,
			 .max_send_sge = 1, .max_recv_sge = 1 },
		.qp_type = IBV_QPT_RC,
		.sq_sig_all = 0,
	};
	struct ibv_device **list;
	struct ibv_context *ctx = NULL;
	struct ibv_port_attr port;
	struct ibv_qp *qp[2] = {};
	struct ibv_pd *pd = NULL;
	struct ibv_cq *cq = NULL;
	struct ibv_mr *mr = NULL;
	struct ibv_recv_wr rwr = {}, *rbad;
	struct ibv_send_wr swr = {}, *sbad;
	struct ibv_qp_attr a = {};
	static char buf[256];
	struct ibv_sge sge;
	union ibv_gid gid;
	struct ibv_wc wc = {};
	double t0;
	int i, err, ok;

	who = "rts";
	list = ibv_get_device_list(NULL);
	for (i = 0; list && list[i]; i++)
		if (!strcmp(ibv_get_device_name(list[i]), name))
			ctx = ibv_open_device(list[i]);
	if (list)
		ibv_free_device_list(list);
	if (!ctx || ibv_query_port(ctx, 1, &port) ||
	    ibv_query_gid(ctx, 1, 0, &gid)) {
		check(false, "rts without a connection: device, port and GID 0",
		      "%s: %s", name, strerror(errno));
		return 1;
	}
	pd = ibv_alloc_pd(ctx);
	cq = pd ? ibv_create_cq(ctx, 16, NULL, NULL, 0) : NULL;
	mr = cq ? ibv_reg_mr(pd, buf, sizeof(buf), IBV_ACCESS_LOCAL_WRITE) :
		  NULL;
	qa.send_cq = cq;
	qa.recv_cq = cq;
	for (i = 0; mr && i < 2; i++)
		qp[i] = ibv_create_qp(pd, &qa);
	if (!qp[0] || !qp[1]) {
		check(false, "rts without a connection: PD, CQ, MR, two QPs",
		      "%s", strerror(errno));
		goto out;
	}

	for (i = 0; i < 2; i++) {
		err = rts_to_rtr(qp[i], qp[1 - i]->qp_num, &gid, port.lid);
		check(!err && rts_state(qp[i]) == IBV_QPS_RTR,
		      i ? "rts without a connection: second QP RESET -> INIT -> RTR (AV, dest QPN)" :
			  "rts without a connection: first QP RESET -> INIT -> RTR (AV, dest QPN)",
		      "%s, state %d", strerror(err), rts_state(qp[i]));
	}
	err = rts_to_rts(qp[0]);
	check(err == EINVAL && rts_state(qp[0]) == IBV_QPS_RTR,
	      "rts without a connection: RTR -> RTS with IB attributes refused (EINVAL), the QP stays in RTR",
	      "modify: %s, state %d", err ? strerror(err) : "accepted",
	      rts_state(qp[0]));
	a.port_num = 1;
	err = ibv_modify_qp(qp[1], &a, IBV_QP_PORT);
	check(!err, "rts without a connection: the rdma_cm's port-only modify is still accepted",
	      "%s", strerror(err));
	err = rts_to_rts(qp[1]);
	check(err == EINVAL && rts_state(qp[1]) == IBV_QPS_RTR,
	      "rts without a connection: refused for the second QP too",
	      "modify: %s, state %d", err ? strerror(err) : "accepted",
	      rts_state(qp[1]));

	/*
	 * What a consumer that ignored the error would do next: a receive
	 * on one QP, a Send on the other. libsiw2 queues the Send (work
	 * posted before a connection runs once connected); nothing runs it
	 * without one, and ERR flushes it at once.
	 */
	sge.addr = (uintptr_t)buf;
	sge.length = 64;
	sge.lkey = mr->lkey;
	rwr.wr_id = 1;
	rwr.sg_list = &sge;
	rwr.num_sge = 1;
	err = ibv_post_recv(qp[1], &rwr, &rbad);
	check(!err, "rts without a connection: a receive posted in RTR", "%s",
	      strerror(err));
	swr.wr_id = 2;
	swr.sg_list = &sge;
	swr.num_sge = 1;
	swr.opcode = IBV_WR_SEND;
	swr.send_flags = IBV_SEND_SIGNALED;
	err = ibv_post_send(qp[0], &swr, &sbad);
	info("ibv_post_send on a QP in state %d: %s", rts_state(qp[0]),
	     err ? strerror(err) : "queued");
	check(rts_poll(cq, &wc, 1) == 0,
	      "rts without a connection: nothing is sent or received", "wr_id %llu status %s",
	      (unsigned long long)wc.wr_id, ibv_wc_status_str(wc.status));
	t0 = now_s();
	ok = !rts_modify(qp[0], IBV_QPS_ERR, &a, 0) &&
	     !rts_modify(qp[1], IBV_QPS_ERR, &a, 0);
	for (i = 0; ok && i < (err ? 1 : 2); i++)
		ok = rts_poll(cq, &wc, timeout_s) == 1 &&
		     wc.status == IBV_WC_WR_FLUSH_ERR;
	check(ok, "rts without a connection: ERR flushes what was posted, nothing waits",
	      "after %.1f s: wr_id %llu status %s", now_s() - t0,
	      (unsigned long long)wc.wr_id, ibv_wc_status_str(wc.status));

	ok = 1;
	for (i = 0; i < 2; i++) {
		memset(&a, 0, sizeof(a));
		a.port_num = 1;
		a.qp_access_flags = IBV_ACCESS_LOCAL_WRITE;
		ok = ok && !rts_modify(qp[i], IBV_QPS_RESET, &a, 0) &&
		     !rts_modify(qp[i], IBV_QPS_INIT, &a, IBV_QP_PKEY_INDEX |
				 IBV_QP_PORT | IBV_QP_ACCESS_FLAGS) &&
		     rts_modify(qp[i], IBV_QPS_RTS, &a, 0) == EINVAL &&
		     rts_state(qp[i]) == IBV_QPS_INIT;
	}
	check(ok, "rts without a connection: the QPs are reset and usable again (INIT, INIT -> RTS refused)",
	      "no");
out:
	ok = 1;
	for (i = 0; i < 2; i++)
		if (qp[i])
			ok = !ibv_destroy_qp(qp[i]) && ok;
	if (mr)
		ok = !ibv_dereg_mr(mr) && ok;
	if (cq)
		ok = !ibv_destroy_cq(cq) && ok;
	if (pd)
		ok = !ibv_dealloc_pd(pd) && ok;
	check(ok && qp[0] && qp[1], "rts without a connection: QPs, CQ, MR and PD destroyed",
	      "failed");
	ibv_close_device(ctx);
	info("DONE");
	return failures ? 1 : 0;
}

int main(int argc, char **argv)
{
	const char *mode = "main";
	int i, first = 4;

	if (argc >= 3 && !strcmp(argv[1], "rts"))
		first = 3;
	else if (argc < 4) {
		fprintf(stderr, "usage: verbsex_test server|client ADDR PORT [-m main|localinv|badsqe|badinline|badrqe|ringrace|rtrread|setuid] [-T SEC]\n"
			"       verbsex_test rts DEV [-T SEC]\n");
		return 2;
	}
	for (i = first; i + 1 < argc; i += 2) {
		if (!strcmp(argv[i], "-m"))
			mode = argv[i + 1];
		else if (!strcmp(argv[i], "-T"))
			timeout_s = atoi(argv[i + 1]);
		else
			return 2;
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (first == 3)
		return run_rts(argv[2]);
	if (!strcmp(argv[1], "server"))
		return run_server(argv[2], argv[3], mode);
	if (!strcmp(argv[1], "client"))
		return run_client(argv[2], argv[3], mode);
	return 2;
}
