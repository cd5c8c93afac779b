// SPDX-License-Identifier: GPL-2.0
/*
 * On-demand paging over a real siw2 connection, for the guest's odp suite
 * (the behaviour: issue 43, ODP). The owner registers memory with
 * IBV_ACCESS_ON_DEMAND, mostly memory it never touched, and runs as an
 * unprivileged user whose RLIMIT_MEMLOCK is 64 KiB (the suite sees to
 * that): nothing of an ODP MR may be pinned or charged to that limit. The
 * peer reaches the owner's memory (RDMA Write, Read, atomics, Sends into
 * its receives) and the owner uses its ODP memory locally (Sends from it,
 * receives, Read and atomic sinks). The two talk with Sends over their
 * first connection (struct msg); the owner's memory is checked octet by
 * octet at the owner, and read back by the peer.
 *
 * One line per check: "PASS name", "FAIL name: why" or "SKIP name: why";
 * other lines are information.
 *
 *   odp_test caps DEV [-T SEC]
 *     ibv_query_device_ex's odp_caps (IBV_ODP_SUPPORT; SEND, RECV, WRITE,
 *     READ and ATOMIC for RC); an ODP registration of memory never
 *     touched as the debugfs "mr" counter sees it; remote write without
 *     local write refused with EINVAL. Needs root (debugfs).
 *
 *   odp_test advise DEV [-T SEC]
 *     ibv_advise_mr on an ODP MR: PREFETCH_WRITE and PREFETCH with
 *     IBV_ADVISE_MR_FLAG_FLUSH return 0 and leave the range resident
 *     (mincore), two SGEs at once, an asynchronous prefetch, nothing
 *     pinned (VmPin); refused: a wrong lkey, a range past the MR's end,
 *     unknown flags, PREFETCH_WRITE on a read-only ODP MR, an MR that is
 *     not ODP. Meant to run unprivileged with a 64 KiB RLIMIT_MEMLOCK.
 *
 *   odp_test -s SCENARIO owner|peer ADDR PORT [-T SEC] [-r ROUNDS]
 *            [-f FILE -m MIB]
 *     big       the owner (unprivileged, 64 KiB RLIMIT_MEMLOCK) maps
 *               1 GiB and never touches it: registering it without
 *               IBV_ACCESS_ON_DEMAND fails with ENOMEM, with it succeeds
 *               and pins nothing; the peer's Writes of 64 B to 1 MiB at
 *               offsets spread over the GiB land, the owner sees them
 *               and its RSS grows by about their size; the peer's Reads
 *               bring them back, and zeros from a range never written.
 *     io        Reads of ODP memory never touched (zeros) and filled by
 *               the owner; Fetch and Add and Compare and Swap on words
 *               never touched; the peer's Sends into receives whose SGEs
 *               are in an ODP MR never touched; the owner's Sends from
 *               ODP memory never touched (zeros) and filled; the owner's
 *               Read and Fetch and Add with their sinks in ODP memory.
 *     madvise   MADV_DONTNEED on part of the region while the peer's
 *               Writes into it go on in a loop: the Writes after it are
 *               what the owner sees (they land in the new pages), a Read
 *               of a dropped range nobody rewrote brings zeros, not the
 *               old data. -r ROUNDS times.
 *     munmap    2 MiB in the middle of the region unmapped: a Write to
 *               the rest lands, a Write into the hole is refused (the
 *               owner's Terminate, its QP goes to ERR), the hole stays
 *               unmapped.
 *     munmaplocal
 *               the owner's Send whose SGE is in the hole completes with
 *               an error (IBV_WC_LOC_PROT_ERR expected; any error but a
 *               flush accepted, the status logged), its QP goes to ERR
 *               and flushes the next WR; so does its Read whose sink is
 *               in the hole. A Send from the rest of the region arrives.
 *     pressure  the owner, in a memory cgroup smaller than FILE, maps
 *               FILE (MIB MiB, created with posix_fallocate on a disk
 *               file system, so its page cache can be reclaimed)
 *               MAP_SHARED and registers it ODP; the peer writes all of
 *               it in 1 MiB Writes; after msync the owner finds every
 *               octet in the file (pread), and the peer's 1 MiB Reads
 *               bring it all back.
 *     sendclose the owner posts 8 receives of 64 KiB into an ODP MR never
 *               touched (LOCAL_WRITE only); the peer's 8 Sends complete
 *               and it disconnects at once and destroys its QP: all 8
 *               receives complete with success and the data although
 *               the FIN comes while the owner faults pages in, then the
 *               owner sees RDMA_CM_EVENT_DISCONNECTED.
 *
 * Every wait is bounded by -T SEC (default 20): a kernel without ODP
 * fails the registrations at once, and the owner then calls the scenario
 * off (MSG_ABORT) instead of leaving the peer to wait.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <poll.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include <infiniband/verbs.h>
#include <rdma/rdma_cma.h>

#define KIB 1024ULL
#define MIB (1024ULL * KIB)
#define GIB (1024ULL * MIB)
#define PG 4096ULL

#define MAXC 3			/* connections of one scenario */
#define NRECV 4			/* control receives per connection */
#define MAX_RECV 8		/* a QP's receive queue (sendclose: 8) */
#define MSG_LEN 64		/* one control receive */

/* The owner's and the peer's control memory (pinned, 8 KiB). */
#define CTL_LEN 8192
#define PROBE_LEN 64
#define CTL_SEND 256
#define CTL_RECV 1024

/* The peer's own buffer (pinned; the peer runs as root). */
#define CBUF_LEN (4 * MIB)
#define L_SRC 0				/* what its Writes and Sends carry */
#define L_READ MIB			/* where its Reads land */
#define L_EXP (2 * MIB)			/* 64 KiB the owner Reads */
#define L_PATOM (L_EXP + 64 * KIB)	/* the owner's Fetch and Add target */
#define L_ARES (L_PATOM + 64)		/* the peer's atomic results */
#define L_PROBE (L_ARES + 64)		/* the probe Read's sink */
#define L_RECV (L_EXP + 128 * KIB)	/* two receives for the owner's Sends */

#define DLEN (64 * KIB)		/* one Send, receive, Read of scenario io */
#define CHUNK MIB		/* one Write or Read of scenario pressure */

#define ATOM_ADD 5ULL
#define ATOM_SWAP 0x1122334455667788ULL
#define PATOM_START 1000ULL

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

#define ACC_REMOTE (IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ | \
		    IBV_ACCESS_REMOTE_ATOMIC)
#define ODP_ALL (IBV_ACCESS_ON_DEMAND | IBV_ACCESS_LOCAL_WRITE | ACC_REMOTE)

/* wr_ids */
#define WR_MSG 1
#define WR_OP 2
#define WR_PROBE 3
#define WR_BAD 4
#define WR_NEXT 5
#define WR_DATA 10		/* + i: data Sends and receives */
#define NO_WC (~0ULL)		/* wr_id of "no completion came" */

/* Pattern seeds. */
enum { S_OWNER = 1, S_P1, S_P2, S_P3, S_P4, S_Z, S_W0, S_FILE, S_BIG = 20 };
#define S_FINAL(r) (500U + (r))
#define S_LOOP(r, k) (1000U * (r) + 1 + (k))

enum {
	MSG_WIN = 1,	/* the owner's region: rkey, addr, len */
	MSG_GO,
	MSG_DONE,	/* rkey2, addr2, arg: the peer's memory (io) */
	MSG_ABORT,
	MSG_WROTE,
	MSG_MADVISED,
	MSG_LAST,	/* arg: the seed of the peer's last Writes */
};

struct msg {
	uint32_t op;
	uint32_t rkey;
	uint64_t addr;
	uint64_t len;
	uint64_t arg;
	uint32_t rkey2;
	uint32_t rsvd;
	uint64_t addr2;
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
	struct ibv_wc last_recv;	/* the last control receive's completion */
	int idx;
	bool data;			/* no control receives on it */
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
	unsigned char *buf;	/* peer: its buffer */
	struct ibv_mr *mr;	/* owner: the ODP MR; peer: its buffer's */
	unsigned char *region;	/* owner: what the ODP MR covers */
	size_t rlen;
	int fd;			/* owner, pressure: the file */
	struct conn c[MAXC];
	struct probe probe;	/* peer: the owner's probe */
	bool server;
};

struct scenario {
	const char *name;
	int nconn;
	int data_conn;		/* index of a connection without control */
	int (*server)(struct side *s);
	void (*client)(struct side *s);
};

static int timeout_s = 20;
static int rounds = 1;
static const char *file_path;
static unsigned long file_mib = 64;
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

static void info(const struct side *s, const char *fmt, ...)
{
	va_list ap;

	printf("%s: ", s->server ? "owner" : "peer");
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

/*
 * The pattern's octet at offset @off of a region: a function of the
 * offset, so that data placed at the wrong offset or page shows.
 */
static inline unsigned char pat(uint64_t off, unsigned int seed)
{
	uint64_t x = (off >> 3) * 0x9e3779b97f4a7c15ULL +
		     (uint64_t)seed * 0xbf58476d1ce4e5b9ULL;

	x ^= x >> 29;
	return (unsigned char)(x >> ((off & 7) * 8));
}

static void fill(unsigned char *p, uint64_t off, size_t len,
		 unsigned int seed)
{
	size_t i;

	for (i = 0; i < len; i++)
		p[i] = pat(off + i, seed);
}

/* The index of the first octet of @p that is not the pattern, or @len. */
static size_t pat_diff(const unsigned char *p, uint64_t off, size_t len,
		       unsigned int seed)
{
	size_t i;

	for (i = 0; i < len; i++)
		if (p[i] != pat(off + i, seed))
			break;
	return i;
}

static size_t zero_diff(const unsigned char *p, size_t len)
{
	size_t i;

	for (i = 0; i < len; i++)
		if (p[i])
			break;
	return i;
}

/* Checks that @p holds the pattern; says where it does not. */
static bool pat_check(const unsigned char *p, uint64_t off, size_t len,
		      unsigned int seed, const char *name)
{
	size_t i = pat_diff(p, off, len, seed);

	check(i == len, name,
	      "octet %zu of %zu (region offset %llu) is 0x%02x, want 0x%02x",
	      i, len, (unsigned long long)(off + i), i < len ? p[i] : 0,
	      i < len ? pat(off + i, seed) : 0);
	return i == len;
}

static bool zero_check(const unsigned char *p, size_t len, const char *name)
{
	size_t i = zero_diff(p, len);

	check(i == len, name, "octet %zu of %zu is 0x%02x, not 0", i, len,
	      i < len ? p[i] : 0);
	return i == len;
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

/* A field of /proc/self/status in KiB ("VmPin", "VmRSS"), -1 if none. */
static long status_kib(const char *field)
{
	FILE *f = fopen("/proc/self/status", "r");
	size_t n = strlen(field);
	char line[256];
	long v = -1;

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, field, n) && line[n] == ':')
			v = strtol(line + n + 1, NULL, 10);
	fclose(f);
	return v;
}

/* The effective capabilities, from /proc/self/status; ~0 if unknown. */
static unsigned long long cap_eff(void)
{
	FILE *f = fopen("/proc/self/status", "r");
	unsigned long long v = ~0ULL;
	char line[256];

	if (!f)
		return v;
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, "CapEff:", 7))
			v = strtoull(line + 7, NULL, 16);
	fclose(f);
	return v;
}

/* Pages of [p, p + len) that are resident (mincore), -1 on error. */
static long resident(void *p, size_t len)
{
	size_t n = (len + PG - 1) / PG, i;
	unsigned char *vec = malloc(n);
	long r = 0;

	if (!vec)
		return -1;
	if (mincore(p, len, vec)) {
		free(vec);
		return -1;
	}
	for (i = 0; i < n; i++)
		r += vec[i] & 1;
	free(vec);
	return r;
}

/* Anonymous memory nobody touched yet; 4 KiB pages (no THP). */
static void *map_anon(size_t len)
{
	void *p = mmap(NULL, len, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);

	if (p == MAP_FAILED)
		return NULL;
	madvise(p, len, MADV_NOHUGEPAGE);
	return p;
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
 * is noted in its conn; one that fails while @want is its establishment
 * ends the wait.
 */
static struct rdma_cm_event *get_event(struct side *s,
				       enum rdma_cm_event_type want,
				       struct rdma_cm_id *id, double secs)
{
	struct pollfd pfd = { .fd = s->ch->fd, .events = POLLIN };
	double end = now_s() + secs;
	enum rdma_cm_event_type type;
	struct rdma_cm_event *ev;
	struct conn *c;
	bool mine;

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

/*
 * The PD and the control memory of a side, on its first connection's
 * device; the peer's buffer too. The owner's only pinned memory is the
 * 8 KiB of control memory.
 */
static int side_init(struct side *s, struct ibv_context *verbs)
{
	s->verbs = verbs;
	s->pd = ibv_alloc_pd(verbs);
	s->ctl = aligned_alloc(PG, CTL_LEN);
	if (!s->pd || !s->ctl)
		return -1;
	memset(s->ctl, 0, CTL_LEN);
	fill(s->ctl, 0, PROBE_LEN, S_P4);
	s->ctl_mr = ibv_reg_mr(s->pd, s->ctl, CTL_LEN,
			       IBV_ACCESS_LOCAL_WRITE |
			       IBV_ACCESS_REMOTE_READ);
	if (!s->ctl_mr)
		return -1;
	s->probe = (struct probe){ .addr = (uintptr_t)s->ctl,
				   .rkey = s->ctl_mr->rkey };
	if (s->server)
		return 0;
	s->buf = aligned_alloc(PG, CBUF_LEN);
	if (!s->buf)
		return -1;
	memset(s->buf, 0, CBUF_LEN);
	s->mr = ibv_reg_mr(s->pd, s->buf, CBUF_LEN,
			   IBV_ACCESS_LOCAL_WRITE | ACC_REMOTE);
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

/* A data receive of @len octets at @addr (@lkey), wr_id WR_DATA + @i. */
static int post_data_recv(struct conn *c, uint64_t addr, uint32_t len,
			  uint32_t lkey, int i)
{
	struct ibv_sge sge = { .addr = addr, .length = len, .lkey = lkey };
	struct ibv_recv_wr wr = { .wr_id = WR_DATA + i, .sg_list = &sge,
				  .num_sge = 1 }, *bad;

	return ibv_post_recv(c->qp, &wr, &bad);
}

/* CQs, the QP, control receives (none on a data connection). */
static int conn_qp(struct side *s, struct conn *c)
{
	struct ibv_qp_init_attr qa = {
		.cap = { .max_send_wr = 40, .max_recv_wr = MAX_RECV,
			 .max_send_sge = 2, .max_recv_sge = 1 },
		.qp_type = IBV_QPT_RC,
	};
	uint64_t i;

	c->scq = ibv_create_cq(s->verbs, 64, NULL, NULL, 0);
	c->rcq = ibv_create_cq(s->verbs, 64, NULL, NULL, 0);
	if (!c->scq || !c->rcq)
		return -1;
	qa.send_cq = c->scq;
	qa.recv_cq = c->rcq;
	if (rdma_create_qp(c->id, s->pd, &qa))
		return -1;
	c->qp = c->id->qp;
	for (i = 0; i < NRECV && !c->data; i++)
		if (post_recv(s, c, i))
			return -1;
	return 0;
}

static void conn_free(struct conn *c)
{
	if (c->qp)
		rdma_destroy_qp(c->id);
	if (c->scq)
		ibv_destroy_cq(c->scq);
	if (c->rcq)
		ibv_destroy_cq(c->rcq);
	if (c->id)
		rdma_destroy_id(c->id);
	*c = (struct conn){ .idx = c->idx, .data = c->data };
}

static void side_free(struct side *s)
{
	bool ok = true;
	int i;

	for (i = 0; i < MAXC; i++)
		conn_free(&s->c[i]);
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
	      "owner: QPs, the ODP MR, the control MR and the PD are destroyed without error" :
	      "peer: QPs, MRs and the PD are destroyed without error",
	      "a destroy failed");
	if (s->region)
		munmap(s->region, s->rlen);	/* a hole in it is fine */
	if (s->fd >= 0)
		close(s->fd);
	free(s->buf);
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

/* Takes a control message that came, its receive posted again. */
static int take_msg(struct side *s, struct conn *c, struct msg *m)
{
	struct ibv_wc *wc = &c->last_recv;

	if (wc->wr_id == NO_WC || wc->status != IBV_WC_SUCCESS) {
		info(s, "receive on connection %d: %s", c->idx, wc_str(wc));
		return -1;
	}
	memcpy(m, recv_buf(s, c, wc->wr_id), sizeof(*m));
	post_recv(s, c, wc->wr_id);
	return 0;
}

/* The next message on @c within -T; -1 if none came. */
static int recv_msg(struct side *s, struct conn *c, struct msg *m)
{
	poll_wc(c->rcq, &c->last_recv, timeout_s);
	return take_msg(s, c, m);
}

/* A message if one is there: 1, 0 if none, -1 on an error. */
static int try_msg(struct side *s, struct conn *c, struct msg *m)
{
	int n = ibv_poll_cq(c->rcq, 1, &c->last_recv);

	if (n == 0)
		return 0;
	if (n < 0)
		c->last_recv.wr_id = NO_WC;
	return take_msg(s, c, m) ? -1 : 1;
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

/* ---- work requests ---- */

static struct ibv_send_wr rdma_wr(struct ibv_sge *sge, enum ibv_wr_opcode op,
				  uint64_t laddr, uint32_t lkey, uint32_t len,
				  uint32_t rkey, uint64_t raddr,
				  uint64_t wr_id)
{
	struct ibv_send_wr wr = { .wr_id = wr_id, .sg_list = sge,
				  .num_sge = 1, .opcode = op,
				  .send_flags = IBV_SEND_SIGNALED };

	*sge = (struct ibv_sge){ .addr = laddr, .length = len,
				 .lkey = lkey };
	if (op == IBV_WR_ATOMIC_FETCH_AND_ADD ||
	    op == IBV_WR_ATOMIC_CMP_AND_SWP) {
		wr.wr.atomic.remote_addr = raddr;
		wr.wr.atomic.rkey = rkey;
	} else {
		wr.wr.rdma.remote_addr = raddr;
		wr.wr.rdma.rkey = rkey;
	}
	return wr;
}

static enum ibv_wc_opcode wc_opcode(enum ibv_wr_opcode op)
{
	switch (op) {
	case IBV_WR_RDMA_WRITE:
		return IBV_WC_RDMA_WRITE;
	case IBV_WR_RDMA_READ:
		return IBV_WC_RDMA_READ;
	case IBV_WR_ATOMIC_FETCH_AND_ADD:
		return IBV_WC_FETCH_ADD;
	case IBV_WR_ATOMIC_CMP_AND_SWP:
		return IBV_WC_COMP_SWAP;
	default:
		return IBV_WC_SEND;
	}
}

/*
 * Posts @wr (signaled) and waits for its completion: true if it came
 * and succeeded; otherwise check @name fails with what came.
 */
static bool run_wr(struct conn *c, struct ibv_send_wr *wr, const char *name)
{
	struct ibv_wc wc = { .wr_id = NO_WC };
	struct ibv_send_wr *bad;
	int ret;

	wr->send_flags |= IBV_SEND_SIGNALED;
	ret = ibv_post_send(c->qp, wr, &bad);
	if (!ret)
		poll_wc(c->scq, &wc, timeout_s);
	if (!ret && wc.wr_id == wr->wr_id && wc.status == IBV_WC_SUCCESS &&
	    wc.opcode == wc_opcode(wr->opcode))
		return true;
	check(false, name, "post: %s, completion: %s opcode %d wr_id %llu",
	      strerror(ret), wc_str(&wc), wc.opcode,
	      (unsigned long long)wc.wr_id);
	return false;
}

/* The peer's access of @len octets at offset @off of the owner's region. */
static bool p_access(struct side *s, struct conn *c, enum ibv_wr_opcode op,
		     const struct msg *m, uint64_t off, size_t loff,
		     uint32_t len, const char *name)
{
	struct ibv_sge sge;
	struct ibv_send_wr wr = rdma_wr(&sge, op, (uintptr_t)s->buf + loff,
					s->mr->lkey, len, m->rkey,
					m->addr + off, WR_OP);

	return run_wr(c, &wr, name);
}

/* The peer's atomic on the owner's word at @off; its original in @orig. */
static bool p_atomic(struct side *s, struct conn *c, enum ibv_wr_opcode op,
		     const struct msg *m, uint64_t off, uint64_t cmp_add,
		     uint64_t swap, int slot, uint64_t *orig,
		     const char *name)
{
	struct ibv_sge sge;
	struct ibv_send_wr wr = rdma_wr(&sge, op,
					(uintptr_t)s->buf + L_ARES + 8 * slot,
					s->mr->lkey, 8, m->rkey,
					m->addr + off, WR_OP);

	wr.wr.atomic.compare_add = cmp_add;
	wr.wr.atomic.swap = swap;
	memset(s->buf + L_ARES + 8 * slot, 0xa5, 8);
	if (!run_wr(c, &wr, name))
		return false;
	memcpy(orig, s->buf + L_ARES + 8 * slot, 8);
	return true;
}

/*
 * A Write the owner must refuse: it completes with REM_ACCESS_ERR, or,
 * done once TCP took it, the probe Read posted behind it is ended by the
 * owner's Terminate (REM_ACCESS_ERR, REM_OP_ERR or a flush). The
 * completions are logged.
 */
static void p_refused_write(struct side *s, struct conn *c,
			    const struct msg *m, uint64_t off, uint32_t len,
			    const char *name)
{
	struct ibv_sge sge, psge;
	struct ibv_send_wr wr = rdma_wr(&sge, IBV_WR_RDMA_WRITE,
					(uintptr_t)s->buf + L_SRC,
					s->mr->lkey, len, m->rkey,
					m->addr + off, WR_OP);
	struct ibv_send_wr probe = rdma_wr(&psge, IBV_WR_RDMA_READ,
					   (uintptr_t)s->buf + L_PROBE,
					   s->mr->lkey, PROBE_LEN,
					   s->probe.rkey, s->probe.addr,
					   WR_PROBE), *bad;
	struct ibv_wc wc[2];
	enum ibv_wc_status a, b;
	bool ok;
	int ret;

	fill(s->buf + L_SRC, off, len, S_P4);
	wr.next = &probe;
	memset(wc, 0, sizeof(wc));
	wc[0].wr_id = NO_WC;
	wc[1].wr_id = NO_WC;
	ret = ibv_post_send(c->qp, &wr, &bad);
	if (!ret) {
		poll_wc(c->scq, &wc[0], timeout_s);
		poll_wc(c->scq, &wc[1], timeout_s);
	}
	a = wc[0].status;
	b = wc[1].status;
	info(s, "refused Write: %s (vendor_err 0x%x), then the probe Read: %s",
	     wc_str(&wc[0]), wc[0].vendor_err, wc_str(&wc[1]));
	ok = !ret && wc[0].wr_id == WR_OP && wc[1].wr_id == WR_PROBE;
	if (a == IBV_WC_REM_ACCESS_ERR || a == IBV_WC_WR_FLUSH_ERR)
		ok = ok && b != IBV_WC_SUCCESS;
	else
		ok = ok && a == IBV_WC_SUCCESS &&
		     (b == IBV_WC_REM_ACCESS_ERR || b == IBV_WC_REM_OP_ERR ||
		      b == IBV_WC_WR_FLUSH_ERR);
	check(ok, name, "post: %s, the Write: %s, the probe Read behind it: %s",
	      strerror(ret), wc_str(&wc[0]), wc_str(&wc[1]));
}

static enum ibv_qp_state qp_state(struct ibv_qp *qp)
{
	struct ibv_qp_init_attr init;
	struct ibv_qp_attr a;

	if (ibv_query_qp(qp, &a, IBV_QP_STATE, &init))
		return (enum ibv_qp_state)-1;
	return a.qp_state;
}

/* The owner's QP @c goes to ERR: its control receives end in error. */
static bool wait_qp_err(struct side *s, struct conn *c, const char *name)
{
	enum ibv_qp_state st;
	struct ibv_wc wc;
	double end;

	for (;;) {
		poll_wc(c->rcq, &wc, timeout_s);
		if (wc.wr_id == NO_WC)
			break;
		info(s, "receive on connection %d: %s opcode %d", c->idx,
		     wc_str(&wc), wc.opcode);
		if (wc.status != IBV_WC_SUCCESS)
			break;
		post_recv(s, c, wc.wr_id);
	}
	end = now_s() + 5;
	while ((st = qp_state(c->qp)) != IBV_QPS_ERR && now_s() < end)
		usleep(10000);
	check(wc.wr_id != NO_WC && st == IBV_QPS_ERR, name,
	      "receives: %s, QP state %d", wc_str(&wc), st);
	return st == IBV_QPS_ERR;
}

/* ---- the owner's steps ---- */

/* A server step's result: go on, or tell the peer the scenario is off. */
#define ABORT 1

/* Maps @len octets never touched and registers them ODP with @acc. */
static int odp_setup(struct side *s, size_t len, int acc, const char *name)
{
	s->region = map_anon(len);
	if (!s->region) {
		check(false, name, "mmap: %s", strerror(errno));
		return -1;
	}
	s->rlen = len;
	errno = 0;
	s->mr = ibv_reg_mr(s->pd, s->region, len, acc);
	check(s->mr, name, "%s", strerror(errno));
	return s->mr ? 0 : -1;
}

static void send_win(struct side *s, struct conn *c)
{
	struct msg m = { .op = MSG_WIN, .rkey = s->mr->rkey,
			 .addr = (uintptr_t)s->region, .len = s->rlen };

	send_msg(s, c, &m);
}

/* ---- big: 1 GiB never touched, RLIMIT_MEMLOCK 64 KiB ---- */

#define BIG_LEN GIB

struct span {
	uint64_t off;
	uint32_t len;
};

/* The peer's Writes: 64 KiB, 1 MiB and 64 B, aligned or not. */
static const struct span big_spans[] = {
	{ 0, 64 * KIB },
	{ 128 * MIB + 100, MIB },
	{ 300 * MIB + 12345, 64 * KIB },
	{ 512 * MIB, MIB },
	{ 700 * MIB + PG - 32, 64 },	/* across a page boundary */
	{ 900 * MIB + 7, 64 },
	{ GIB - 128 * KIB, 64 * KIB },
	{ GIB - 64, 64 },		/* the region's last octets */
};
#define BIG_UNTOUCHED (600 * MIB)	/* never written: the peer Reads zeros */

static uint64_t pages_of(const struct span *sp)
{
	return (sp->off + sp->len + PG - 1) / PG - sp->off / PG;
}

static int srv_big(struct side *s)
{
	struct conn *a = &s->c[0];
	unsigned long long caps = cap_eff();
	long pin0, pin1, rss0, rss1, bound;
	uint64_t pages = 0;
	struct rlimit rl = {};
	struct ibv_mr *mr;
	char name[200];
	unsigned char *p;
	size_t i, d;
	bool ok;

	getrlimit(RLIMIT_MEMLOCK, &rl);
	check(geteuid() != 0 && caps == 0 && rl.rlim_cur <= 64 * KIB,
	      "the owner runs unprivileged: not root, no capability, RLIMIT_MEMLOCK at most 64 KiB",
	      "euid %u, CapEff 0x%llx, RLIMIT_MEMLOCK %llu (run it through the suite)",
	      geteuid(), caps, (unsigned long long)rl.rlim_cur);
	s->region = map_anon(BIG_LEN);
	if (!s->region) {
		check(false, "mmap of 1 GiB", "%s", strerror(errno));
		return ABORT;
	}
	s->rlen = BIG_LEN;
	pin0 = status_kib("VmPin");
	errno = 0;
	mr = ibv_reg_mr(s->pd, s->region, BIG_LEN,
			IBV_ACCESS_LOCAL_WRITE | ACC_REMOTE);
	check(!mr && errno == ENOMEM,
	      "ibv_reg_mr of the 1 GiB without IBV_ACCESS_ON_DEMAND is refused with ENOMEM (RLIMIT_MEMLOCK)",
	      "%s", mr ? "it was registered" : strerror(errno));
	if (mr)
		ibv_dereg_mr(mr);
	errno = 0;
	s->mr = ibv_reg_mr(s->pd, s->region, BIG_LEN, ODP_ALL);
	check(s->mr,
	      "ibv_reg_mr of 1 GiB never touched with IBV_ACCESS_ON_DEMAND | LOCAL_WRITE | REMOTE_WRITE | REMOTE_READ | REMOTE_ATOMIC succeeds",
	      "%s", strerror(errno));
	if (!s->mr)
		return ABORT;
	pin1 = status_kib("VmPin");
	rss0 = status_kib("VmRSS");
	check(pin0 >= 0 && pin1 == pin0,
	      "the ODP registration pins nothing (VmPin unchanged)",
	      "VmPin %ld kB before, %ld kB after", pin0, pin1);
	info(s, "registered 1 GiB: VmPin %ld kB, VmRSS %ld kB", pin1, rss0);
	send_win(s, a);
	if (!expect_msg(s, a, MSG_WROTE, NULL,
			"the peer's Writes over the GiB end"))
		return 0;
	for (i = 0; i < ARRAY_SIZE(big_spans); i++) {
		const struct span *sp = &big_spans[i];

		p = s->region + sp->off;
		snprintf(name, sizeof(name),
			 "owner's memory: the Write of %u octets at offset %llu (pages never touched) landed, the octets around it are still 0",
			 sp->len, (unsigned long long)sp->off);
		d = pat_diff(p, sp->off, sp->len, S_BIG + i);
		ok = (sp->off == 0 || !p[-1]) &&
		     (sp->off + sp->len == BIG_LEN || !p[sp->len]);
		check(d == sp->len && ok, name,
		      "first octet not written as it should be: %zu of %u (0x%02x, want 0x%02x); the octets around it %s",
		      d, sp->len, d < sp->len ? p[d] : 0,
		      d < sp->len ? pat(sp->off + d, S_BIG + i) : 0,
		      ok ? "are 0" : "changed");
		pages += pages_of(sp);
	}
	rss1 = status_kib("VmRSS");
	/* loose: an implementation may fault a little around each access */
	bound = (long)(pages * PG / KIB) + 32768;
	info(s, "VmRSS %ld kB after the Writes: %+ld kB; the Writes span %llu pages",
	     rss1, rss1 - rss0, (unsigned long long)pages);
	check(rss1 - rss0 <= bound,
	      "the owner's RSS grew by about what was written, not by the GiB (at most the pages written and 32 MiB)",
	      "grew by %ld kB, bound %ld kB", rss1 - rss0, bound);
	send_op(s, a, MSG_GO);
	expect_msg(s, a, MSG_DONE, NULL, "the peer's Reads end");
	return 0;
}

static void cli_big(struct side *s)
{
	struct conn *a = &s->c[0];
	const struct span *sp;
	struct msg m;
	size_t i, d = 0;
	bool ok = true;

	if (!expect_msg(s, a, MSG_WIN, &m,
			"the owner sends the rkey of its 1 GiB ODP MR"))
		return;
	for (i = 0; i < ARRAY_SIZE(big_spans) && ok; i++) {
		sp = &big_spans[i];
		fill(s->buf + L_SRC, sp->off, sp->len, S_BIG + i);
		ok = p_access(s, a, IBV_WR_RDMA_WRITE, &m, sp->off, L_SRC,
			      sp->len,
			      "the Writes (64 B, 64 KiB, 1 MiB) at offsets spread over the GiB complete");
	}
	if (!ok)
		return;
	check(true,
	      "the Writes (64 B, 64 KiB, 1 MiB) at offsets spread over the GiB complete",
	      "");
	send_op(s, a, MSG_WROTE);
	if (!expect_msg(s, a, MSG_GO, NULL, "the owner checked its memory"))
		return;
	for (i = 0; i < ARRAY_SIZE(big_spans) && ok; i++) {
		sp = &big_spans[i];
		memset(s->buf + L_READ, 0xa5, sp->len);
		ok = p_access(s, a, IBV_WR_RDMA_READ, &m, sp->off, L_READ,
			      sp->len,
			      "Reads of each Write's range bring it back");
		d = ok ? pat_diff(s->buf + L_READ, sp->off, sp->len,
				  S_BIG + i) : 0;
		if (ok && d != sp->len) {
			check(false, "Reads of each Write's range bring it back",
			      "range at %llu: octet %zu differs",
			      (unsigned long long)sp->off, d);
			ok = false;
		}
	}
	if (ok)
		check(true, "Reads of each Write's range bring it back", "");
	memset(s->buf + L_READ, 0xa5, DLEN);
	if (p_access(s, a, IBV_WR_RDMA_READ, &m, BIG_UNTOUCHED, L_READ, DLEN,
		     "a Read of 64 KiB of the GiB nobody wrote brings zeros"))
		zero_check(s->buf + L_READ, DLEN,
			   "a Read of 64 KiB of the GiB nobody wrote brings zeros");
	send_op(s, a, MSG_DONE);
}

/* ---- io: Reads, atomics, Sends and receives with ODP memory ---- */

#define IO_LEN (4 * MIB)
#define IO_Z 0				/* never touched: the peer Reads it */
#define IO_S0 (512 * KIB)		/* never touched: the owner Sends it */
#define IO_R1 MIB			/* never touched: receives */
#define IO_R2 (MIB + 128 * KIB + 4000)
#define IO_F (2 * MIB)			/* the owner fills 256 KiB */
#define IO_F_LEN (256 * KIB)
#define IO_RS (3 * MIB)			/* never touched: the owner's Read sink */
#define IO_A1 (3 * MIB + 512 * KIB)	/* never touched: atomic targets */
#define IO_A2 (3 * MIB + 768 * KIB)
#define IO_AS (3 * MIB + 896 * KIB + 8)	/* never touched: atomic result */

static int srv_io(struct side *s)
{
	struct conn *a = &s->c[0], *b = &s->c[1];
	struct ibv_send_wr wr[2], *bad;
	struct ibv_sge sge[2];
	struct ibv_wc wc[2];
	uint64_t v1, v2, res;
	struct msg m;
	int i, ret;

	if (odp_setup(s, IO_LEN, ODP_ALL,
		      "ibv_reg_mr of 4 MiB never touched with IBV_ACCESS_ON_DEMAND and every access right"))
		return ABORT;
	fill(s->region + IO_F, IO_F, IO_F_LEN, S_OWNER);
	ret = post_data_recv(b, (uintptr_t)s->region + IO_R1, DLEN,
			     s->mr->lkey, 0) ||
	      post_data_recv(b, (uintptr_t)s->region + IO_R2, DLEN,
			     s->mr->lkey, 1);
	check(!ret,
	      "receives whose SGEs are in ODP memory never touched are posted",
	      "%s", strerror(errno));
	if (ret)
		return ABORT;
	send_win(s, a);
	if (!expect_msg(s, a, MSG_DONE, &m,
			"the peer's Reads, atomics and Sends end"))
		return 0;

	for (i = 0; i < 2; i++)
		poll_wc(b->rcq, &wc[i], timeout_s);
	check(wc[0].wr_id == WR_DATA && wc[0].status == IBV_WC_SUCCESS &&
	      wc[0].opcode == IBV_WC_RECV && wc[0].byte_len == DLEN &&
	      wc[1].wr_id == WR_DATA + 1 && wc[1].status == IBV_WC_SUCCESS &&
	      wc[1].byte_len == DLEN,
	      "the peer's two 64 KiB Sends complete the receives in ODP memory",
	      "%s wr_id %llu len %u, %s wr_id %llu len %u", wc_str(&wc[0]),
	      (unsigned long long)wc[0].wr_id, wc[0].byte_len,
	      wc_str(&wc[1]), (unsigned long long)wc[1].wr_id,
	      wc[1].byte_len);
	pat_check(s->region + IO_R1, 0, DLEN, S_P1,
		  "the first Send's data is in the receive buffer never touched before");
	pat_check(s->region + IO_R2, 0, DLEN, S_P2,
		  "the second Send's data is in the receive buffer that starts inside a page");
	memcpy(&v1, s->region + IO_A1, 8);
	memcpy(&v2, s->region + IO_A2, 8);
	check(v1 == ATOM_SWAP,
	      "owner's memory: Fetch and Add then Compare and Swap on a word never touched left the swapped value",
	      "0x%llx, want 0x%llx", (unsigned long long)v1, ATOM_SWAP);
	check(v2 == 0,
	      "owner's memory: a Compare and Swap that did not match left the word never touched at 0",
	      "0x%llx", (unsigned long long)v2);
	pat_check(s->region + IO_F, IO_F, IO_F_LEN, S_OWNER,
		  "owner's memory: the range the peer Read is unchanged");

	/* Sends from ODP memory: never touched, then filled by the owner. */
	for (i = 0; i < 2; i++) {
		sge[i] = (struct ibv_sge){
			.addr = (uintptr_t)s->region + (i ? IO_F : IO_S0),
			.length = DLEN, .lkey = s->mr->lkey };
		wr[i] = (struct ibv_send_wr){
			.wr_id = WR_DATA + i, .sg_list = &sge[i],
			.num_sge = 1, .opcode = IBV_WR_SEND,
			.send_flags = IBV_SEND_SIGNALED,
			.next = i ? NULL : &wr[1] };
	}
	ret = ibv_post_send(b->qp, wr, &bad);
	for (i = 0; i < 2; i++) {
		wc[i].wr_id = NO_WC;
		if (!ret)
			poll_wc(b->scq, &wc[i], timeout_s);
	}
	check(!ret && wc[0].wr_id == WR_DATA &&
	      wc[0].status == IBV_WC_SUCCESS &&
	      wc[1].wr_id == WR_DATA + 1 && wc[1].status == IBV_WC_SUCCESS,
	      "the owner's 64 KiB Sends from ODP memory (never touched, then filled) complete",
	      "post: %s, completions: %s, %s", strerror(ret), wc_str(&wc[0]),
	      wc_str(&wc[1]));

	/* A Read and a Fetch and Add whose sinks are ODP memory. */
	wr[0] = rdma_wr(&sge[0], IBV_WR_RDMA_READ,
			(uintptr_t)s->region + IO_RS, s->mr->lkey, DLEN,
			m.rkey2, m.addr2, WR_OP);
	if (run_wr(a, &wr[0],
		   "the owner's Read into ODP memory never touched brings the peer's data"))
		pat_check(s->region + IO_RS, 0, DLEN, S_P3,
			  "the owner's Read into ODP memory never touched brings the peer's data");
	wr[0] = rdma_wr(&sge[0], IBV_WR_ATOMIC_FETCH_AND_ADD,
			(uintptr_t)s->region + IO_AS, s->mr->lkey, 8, m.rkey2,
			m.arg, WR_OP);
	wr[0].wr.atomic.compare_add = ATOM_ADD;
	if (run_wr(a, &wr[0],
		   "the owner's Fetch and Add returns the peer's word into ODP memory never touched")) {
		memcpy(&res, s->region + IO_AS, 8);
		check(res == PATOM_START,
		      "the owner's Fetch and Add returns the peer's word into ODP memory never touched",
		      "%llu, want %llu", (unsigned long long)res,
		      PATOM_START);
	}
	send_op(s, a, MSG_GO);
	expect_msg(s, a, MSG_DONE, NULL, "the peer checked what it received");
	return 0;
}

static void cli_io(struct side *s)
{
	struct conn *a = &s->c[0], *b = &s->c[1];
	struct ibv_send_wr wr[2], *bad;
	uint64_t o1 = 1, o2 = 1, o3 = 1, w = PATOM_START;
	struct ibv_sge sge[2];
	struct ibv_wc wc[2];
	struct msg m, done;
	int i, ret;

	if (!expect_msg(s, a, MSG_WIN, &m,
			"the owner sends the rkey of its ODP MR"))
		return;
	memset(s->buf + L_READ, 0xa5, DLEN);
	if (p_access(s, a, IBV_WR_RDMA_READ, &m, IO_Z, L_READ, DLEN,
		     "a Read of 64 KiB of ODP memory never touched brings zeros"))
		zero_check(s->buf + L_READ, DLEN,
			   "a Read of 64 KiB of ODP memory never touched brings zeros");
	memset(s->buf + L_READ, 0xa5, IO_F_LEN);
	if (p_access(s, a, IBV_WR_RDMA_READ, &m, IO_F, L_READ, IO_F_LEN,
		     "a Read of 256 KiB of ODP memory the owner filled brings its data"))
		pat_check(s->buf + L_READ, IO_F, IO_F_LEN, S_OWNER,
			  "a Read of 256 KiB of ODP memory the owner filled brings its data");

	if (p_atomic(s, a, IBV_WR_ATOMIC_FETCH_AND_ADD, &m, IO_A1, ATOM_ADD, 0,
		     0, &o1,
		     "Fetch and Add on an ODP word never touched returns 0"))
		check(o1 == 0,
		      "Fetch and Add on an ODP word never touched returns 0",
		      "returned %llu", (unsigned long long)o1);
	if (p_atomic(s, a, IBV_WR_ATOMIC_CMP_AND_SWP, &m, IO_A1, ATOM_ADD,
		     ATOM_SWAP, 1, &o2,
		     "Compare and Swap on that word returns the sum and swaps"))
		check(o2 == ATOM_ADD,
		      "Compare and Swap on that word returns the sum and swaps",
		      "returned %llu", (unsigned long long)o2);
	if (p_atomic(s, a, IBV_WR_ATOMIC_CMP_AND_SWP, &m, IO_A2, 1, 7, 2, &o3,
		     "Compare and Swap on another word never touched returns 0 and does not swap"))
		check(o3 == 0,
		      "Compare and Swap on another word never touched returns 0 and does not swap",
		      "returned %llu", (unsigned long long)o3);

	/* receives for the owner's Sends, then two Sends to its ODP ones */
	memset(s->buf + L_RECV, 0xa5, 2 * DLEN);
	ret = post_data_recv(b, (uintptr_t)s->buf + L_RECV, DLEN,
			     s->mr->lkey, 0) ||
	      post_data_recv(b, (uintptr_t)s->buf + L_RECV + DLEN, DLEN,
			     s->mr->lkey, 1);
	fill(s->buf + L_SRC, 0, DLEN, S_P1);
	fill(s->buf + L_SRC + DLEN, 0, DLEN, S_P2);
	for (i = 0; i < 2; i++) {
		sge[i] = (struct ibv_sge){
			.addr = (uintptr_t)s->buf + L_SRC + i * DLEN,
			.length = DLEN, .lkey = s->mr->lkey };
		wr[i] = (struct ibv_send_wr){
			.wr_id = WR_DATA + i, .sg_list = &sge[i],
			.num_sge = 1, .opcode = IBV_WR_SEND,
			.send_flags = IBV_SEND_SIGNALED,
			.next = i ? NULL : &wr[1] };
	}
	if (!ret)
		ret = ibv_post_send(b->qp, wr, &bad);
	for (i = 0; i < 2; i++) {
		wc[i].wr_id = NO_WC;
		if (!ret)
			poll_wc(b->scq, &wc[i], timeout_s);
	}
	check(!ret && wc[0].status == IBV_WC_SUCCESS &&
	      wc[0].wr_id == WR_DATA && wc[1].status == IBV_WC_SUCCESS &&
	      wc[1].wr_id == WR_DATA + 1,
	      "two 64 KiB Sends to the owner's receives in ODP memory complete",
	      "post: %s, completions: %s, %s", strerror(ret), wc_str(&wc[0]),
	      wc_str(&wc[1]));

	fill(s->buf + L_EXP, 0, DLEN, S_P3);
	memcpy(s->buf + L_PATOM, &w, 8);
	done = (struct msg){ .op = MSG_DONE, .rkey2 = s->mr->rkey,
			     .addr2 = (uintptr_t)s->buf + L_EXP,
			     .arg = (uintptr_t)s->buf + L_PATOM };
	send_msg(s, a, &done);
	if (!expect_msg(s, a, MSG_GO, NULL,
			"the owner's Sends, Read and Fetch and Add end"))
		return;
	for (i = 0; i < 2; i++)
		poll_wc(b->rcq, &wc[i], timeout_s);
	check(wc[0].wr_id == WR_DATA && wc[0].status == IBV_WC_SUCCESS &&
	      wc[0].byte_len == DLEN && wc[1].wr_id == WR_DATA + 1 &&
	      wc[1].status == IBV_WC_SUCCESS && wc[1].byte_len == DLEN,
	      "the owner's two Sends from ODP memory arrive",
	      "%s len %u, %s len %u", wc_str(&wc[0]), wc[0].byte_len,
	      wc_str(&wc[1]), wc[1].byte_len);
	zero_check(s->buf + L_RECV, DLEN,
		   "the Send from ODP memory never touched carries zeros");
	pat_check(s->buf + L_RECV + DLEN, IO_F, DLEN, S_OWNER,
		  "the Send from ODP memory the owner filled carries its data");
	memcpy(&w, s->buf + L_PATOM, 8);
	check(w == PATOM_START + ATOM_ADD,
	      "the owner's Fetch and Add added to the peer's word",
	      "%llu, want %llu", (unsigned long long)w,
	      PATOM_START + ATOM_ADD);
	send_op(s, a, MSG_DONE);
}

/* ---- madvise: MADV_DONTNEED under a stream of Writes ---- */

#define MA_LEN (4 * MIB)
#define MA_W 0				/* the peer writes it in a loop */
#define MA_W_LEN MIB
#define MA_Z (2 * MIB)			/* written once, then dropped */
#define MA_Z_LEN (512 * KIB)
#define MA_PIECE (64 * KIB)		/* one Write of the loop */

static int srv_madvise(struct side *s)
{
	struct conn *a = &s->c[0];
	unsigned char prev[8];
	char name[200];
	double end;
	uint64_t w0;
	struct msg m;
	int r, ret;

	if (odp_setup(s, MA_LEN, ODP_ALL,
		      "ibv_reg_mr of 4 MiB never touched with IBV_ACCESS_ON_DEMAND"))
		return ABORT;
	send_win(s, a);
	if (!expect_msg(s, a, MSG_WROTE, NULL, "the peer's first Writes end"))
		return 0;
	pat_check(s->region + MA_W, MA_W, MA_W_LEN, S_W0,
		  "owner's memory: the first Writes of the looped range landed");
	pat_check(s->region + MA_Z, MA_Z, MA_Z_LEN, S_Z,
		  "owner's memory: the range to be dropped holds the peer's Write");
	fill(prev, MA_W, 8, S_W0);
	for (r = 1; r <= rounds; r++) {
		send_op(s, a, MSG_GO);
		/* the loop's first Write changes the range's first octets */
		end = now_s() + timeout_s;
		do {
			w0 = __atomic_load_n((uint64_t *)(s->region + MA_W),
					     __ATOMIC_RELAXED);
			if (!memcmp(&w0, prev, 8))
				usleep(100);
		} while (!memcmp(&w0, prev, 8) && now_s() < end);
		snprintf(name, sizeof(name),
			 "round %d: the peer's Write loop reaches the owner's memory", r);
		check(memcmp(&w0, prev, 8), name, "nothing changed in %d s",
		      timeout_s);
		ret = madvise(s->region, MA_Z + MA_Z_LEN, MADV_DONTNEED);
		snprintf(name, sizeof(name),
			 "round %d: madvise(MADV_DONTNEED) of 2.5 MiB of the registered region under the Writes returns 0", r);
		check(!ret, name, "%s", strerror(errno));
		send_op(s, a, MSG_MADVISED);
		snprintf(name, sizeof(name),
			 "round %d: the peer's Writes after the madvise end", r);
		if (!expect_msg(s, a, MSG_LAST, &m, name))
			return 0;
		snprintf(name, sizeof(name),
			 "round %d: owner's memory: the Writes after the madvise are there (they landed in the new pages)", r);
		pat_check(s->region + MA_W, MA_W, MA_W_LEN, (unsigned int)m.arg,
			  name);
		snprintf(name, sizeof(name),
			 "round %d: owner's memory: the dropped range nobody rewrote reads 0", r);
		zero_check(s->region + MA_Z, MA_Z_LEN, name);
		fill(prev, MA_W, 8, (unsigned int)m.arg);
		send_op(s, a, MSG_GO);
		snprintf(name, sizeof(name), "round %d: the peer's Reads end", r);
		if (!expect_msg(s, a, MSG_DONE, NULL, name))
			return 0;
	}
	return 0;
}

/* Writes pattern @seed over the looped range: 16 Writes, the last signaled. */
static bool ma_write(struct side *s, struct conn *c, const struct msg *m,
		     unsigned int seed, const char *name)
{
	struct ibv_send_wr wr[MA_W_LEN / MA_PIECE], *bad;
	struct ibv_sge sge[MA_W_LEN / MA_PIECE];
	struct ibv_wc wc = { .wr_id = NO_WC };
	size_t i, n = ARRAY_SIZE(wr);
	int ret;

	fill(s->buf + L_SRC, MA_W, MA_W_LEN, seed);
	for (i = 0; i < n; i++) {
		wr[i] = rdma_wr(&sge[i], IBV_WR_RDMA_WRITE,
				(uintptr_t)s->buf + L_SRC + i * MA_PIECE,
				s->mr->lkey, MA_PIECE, m->rkey,
				m->addr + MA_W + i * MA_PIECE, WR_OP + i);
		wr[i].send_flags = i + 1 == n ? IBV_SEND_SIGNALED : 0;
		wr[i].next = i + 1 == n ? NULL : &wr[i + 1];
	}
	ret = ibv_post_send(c->qp, wr, &bad);
	if (!ret)
		poll_wc(c->scq, &wc, timeout_s);
	if (!ret && wc.status == IBV_WC_SUCCESS && wc.wr_id == WR_OP + n - 1)
		return true;
	check(false, name, "post: %s, completion: %s wr_id %llu",
	      strerror(ret), wc_str(&wc), (unsigned long long)wc.wr_id);
	return false;
}

static void cli_madvise(struct side *s)
{
	struct conn *a = &s->c[0];
	struct ibv_sge sge;
	struct ibv_send_wr wr = rdma_wr(&sge, IBV_WR_RDMA_WRITE,
					(uintptr_t)s->buf + L_SRC + MIB,
					s->mr->lkey, MA_Z_LEN, 0, 0, WR_OP);
	char name[200];
	struct msg m, got;
	unsigned int k;
	double end;
	int r, n;

	if (!expect_msg(s, a, MSG_WIN, &m,
			"the owner sends the rkey of its ODP MR"))
		return;
	if (!ma_write(s, a, &m, S_W0, "the first Writes complete"))
		return;
	fill(s->buf + L_SRC + MIB, MA_Z, MA_Z_LEN, S_Z);
	wr.wr.rdma.rkey = m.rkey;
	wr.wr.rdma.remote_addr = m.addr + MA_Z;
	if (!run_wr(a, &wr, "the first Writes complete"))
		return;
	check(true, "the first Writes complete", "");
	send_op(s, a, MSG_WROTE);
	for (r = 1; r <= rounds; r++) {
		snprintf(name, sizeof(name), "round %d: the owner says go", r);
		if (!expect_msg(s, a, MSG_GO, NULL, name))
			return;
		snprintf(name, sizeof(name),
			 "round %d: the Write loop's Writes complete until the owner's madvise", r);
		end = now_s() + timeout_s;
		k = 0;
		do {
			if (!ma_write(s, a, &m, S_LOOP(r, k++), name))
				return;
			n = try_msg(s, a, &got);
		} while (n == 0 && now_s() < end);
		if (n <= 0 || got.op != MSG_MADVISED) {
			check(false, name, "no madvise message (%s)",
			      n < 0 ? wc_str(&a->last_recv) : "timeout");
			return;
		}
		check(true, name, "");
		info(s, "round %d: %u passes of the loop", r, k);
		snprintf(name, sizeof(name),
			 "round %d: the Writes after the madvise complete", r);
		if (!ma_write(s, a, &m, S_FINAL(r), name))
			return;
		check(true, name, "");
		got = (struct msg){ .op = MSG_LAST, .arg = S_FINAL(r) };
		send_msg(s, a, &got);
		snprintf(name, sizeof(name), "round %d: the owner checked", r);
		if (!expect_msg(s, a, MSG_GO, NULL, name))
			return;
		snprintf(name, sizeof(name),
			 "round %d: a Read of the range MADV_DONTNEED dropped and nobody rewrote brings zeros, not the old data", r);
		memset(s->buf + L_READ, 0xa5, MA_Z_LEN);
		if (p_access(s, a, IBV_WR_RDMA_READ, &m, MA_Z, L_READ,
			     MA_Z_LEN, name))
			zero_check(s->buf + L_READ, MA_Z_LEN, name);
		snprintf(name, sizeof(name),
			 "round %d: a Read of the rewritten range brings the Writes after the madvise", r);
		memset(s->buf + L_READ, 0xa5, MA_W_LEN);
		if (p_access(s, a, IBV_WR_RDMA_READ, &m, MA_W, L_READ,
			     MA_W_LEN, name))
			pat_check(s->buf + L_READ, MA_W, MA_W_LEN, S_FINAL(r),
				  name);
		send_op(s, a, MSG_DONE);
	}
}

/* ---- munmap: a hole in a registered region ---- */

#define MU_LEN (8 * MIB)
#define MU_A 0				/* written before the munmap */
#define MU_HOLE (2 * MIB)		/* unmapped: [2 MiB, 4 MiB) */
#define MU_HOLE_LEN (2 * MIB)
#define MU_B (5 * MIB)			/* written after it */
#define MU_F (6 * MIB)			/* munmaplocal: the owner fills it */

static bool hole_unmapped(struct side *s)
{
	unsigned char v;

	return mincore(s->region + MU_HOLE, PG, &v) && errno == ENOMEM &&
	       mincore(s->region + MU_HOLE + MU_HOLE_LEN - PG, PG, &v) &&
	       errno == ENOMEM;
}

static int srv_munmap(struct side *s)
{
	struct conn *a = &s->c[0];
	int ret;

	if (odp_setup(s, MU_LEN, ODP_ALL,
		      "ibv_reg_mr of 8 MiB never touched with IBV_ACCESS_ON_DEMAND"))
		return ABORT;
	send_win(s, a);
	if (!expect_msg(s, a, MSG_WROTE, NULL, "the peer's first Writes end"))
		return 0;
	pat_check(s->region + MU_A, MU_A, DLEN, S_P1,
		  "owner's memory: the Write at the region's start landed");
	pat_check(s->region + MU_HOLE, MU_HOLE, DLEN, S_P2,
		  "owner's memory: the Write into what becomes the hole landed");
	ret = munmap(s->region + MU_HOLE, MU_HOLE_LEN);
	check(!ret, "munmap of 2 MiB in the middle of the registered region returns 0",
	      "%s", strerror(errno));
	if (ret)
		return ABORT;
	send_op(s, a, MSG_GO);
	wait_qp_err(s, a,
		    "the owner's QP goes to ERR after the Write into the hole");
	pat_check(s->region + MU_A, MU_A, DLEN, S_P1,
		  "owner's memory: the Write before the munmap is still there");
	pat_check(s->region + MU_B, MU_B, DLEN, S_P3,
		  "owner's memory: the Write after the munmap, past the hole, landed");
	check(hole_unmapped(s),
	      "the hole is still unmapped after the refused Write (mincore: ENOMEM)",
	      "something is mapped there again");
	return 0;
}

static void cli_munmap(struct side *s)
{
	struct conn *a = &s->c[0];
	struct msg m;

	if (!expect_msg(s, a, MSG_WIN, &m,
			"the owner sends the rkey of its ODP MR"))
		return;
	fill(s->buf + L_SRC, MU_A, DLEN, S_P1);
	fill(s->buf + L_SRC + DLEN, MU_HOLE, DLEN, S_P2);
	if (!p_access(s, a, IBV_WR_RDMA_WRITE, &m, MU_A, L_SRC, DLEN,
		      "Writes before the munmap complete") ||
	    !p_access(s, a, IBV_WR_RDMA_WRITE, &m, MU_HOLE, L_SRC + DLEN,
		      DLEN, "Writes before the munmap complete"))
		return;
	check(true, "Writes before the munmap complete", "");
	send_op(s, a, MSG_WROTE);
	if (!expect_msg(s, a, MSG_GO, NULL,
			"the owner unmapped part of its region"))
		return;
	fill(s->buf + L_SRC, MU_B, DLEN, S_P3);
	if (p_access(s, a, IBV_WR_RDMA_WRITE, &m, MU_B, L_SRC, DLEN,
		     "a Write after the munmap into the part still mapped completes"))
		check(true,
		      "a Write after the munmap into the part still mapped completes",
		      "");
	p_refused_write(s, a, &m, MU_HOLE + PG, DLEN,
			"a Write into the unmapped hole is refused (REM_ACCESS_ERR, or done at send and the probe Read behind it ended in error)");
}

/*
 * munmaplocal: the owner's Send from the hole, then its Read into the
 * hole, each on a connection of its own (1: data, 2).
 */
static int srv_munmaplocal(struct side *s)
{
	struct conn *a = &s->c[0], *b = &s->c[1], *c = &s->c[2];
	struct ibv_send_wr wr[2], *bad;
	enum ibv_qp_state st;
	struct ibv_sge sge[2];
	struct ibv_wc wc[2];
	struct msg m;
	int i, ret;

	if (odp_setup(s, MU_LEN, ODP_ALL,
		      "ibv_reg_mr of 8 MiB never touched with IBV_ACCESS_ON_DEMAND"))
		return ABORT;
	fill(s->region + MU_F, MU_F, DLEN, S_OWNER);
	ret = munmap(s->region + MU_HOLE, MU_HOLE_LEN);
	check(!ret, "munmap of 2 MiB in the middle of the registered region returns 0",
	      "%s", strerror(errno));
	if (ret)
		return ABORT;
	send_win(s, a);
	if (!expect_msg(s, a, MSG_WROTE, &m,
			"the peer posted its receives"))
		return 0;

	/* a Send from the part still mapped */
	sge[0] = (struct ibv_sge){ .addr = (uintptr_t)s->region + MU_F,
				   .length = DLEN, .lkey = s->mr->lkey };
	wr[0] = (struct ibv_send_wr){ .wr_id = WR_DATA, .sg_list = &sge[0],
				      .num_sge = 1, .opcode = IBV_WR_SEND };
	if (run_wr(b, &wr[0],
		   "a Send from the part of the region still mapped completes"))
		check(true,
		      "a Send from the part of the region still mapped completes",
		      "");
	send_op(s, a, MSG_GO);
	if (!expect_msg(s, a, MSG_DONE, NULL, "the peer checked what came"))
		return 0;

	/* a Send whose SGE is in the hole, and one behind it */
	sge[0] = (struct ibv_sge){ .addr = (uintptr_t)s->region + MU_HOLE +
					   2 * PG,
				   .length = PG, .lkey = s->mr->lkey };
	sge[1] = (struct ibv_sge){ .addr = (uintptr_t)s->region + MU_F,
				   .length = 64, .lkey = s->mr->lkey };
	for (i = 0; i < 2; i++)
		wr[i] = (struct ibv_send_wr){
			.wr_id = i ? WR_NEXT : WR_BAD, .sg_list = &sge[i],
			.num_sge = 1, .opcode = IBV_WR_SEND,
			.send_flags = IBV_SEND_SIGNALED,
			.next = i ? NULL : &wr[1] };
	memset(wc, 0, sizeof(wc));
	wc[0].wr_id = NO_WC;
	wc[1].wr_id = NO_WC;
	ret = ibv_post_send(b->qp, wr, &bad);
	if (!ret) {
		poll_wc(b->scq, &wc[0], timeout_s);
		poll_wc(b->scq, &wc[1], timeout_s);
	}
	st = qp_state(b->qp);
	info(s, "the Send from the hole: %s (vendor_err 0x%x), the WR behind it: %s, QP state %d",
	     wc_str(&wc[0]), wc[0].vendor_err, wc_str(&wc[1]), st);
	check(!ret && wc[0].wr_id == WR_BAD &&
	      wc[0].status != IBV_WC_SUCCESS &&
	      wc[0].status != IBV_WC_WR_FLUSH_ERR,
	      "the owner's Send whose SGE is in the unmapped hole completes with an error (IBV_WC_LOC_PROT_ERR expected)",
	      "post: %s, completion: %s wr_id %llu", strerror(ret),
	      wc_str(&wc[0]), (unsigned long long)wc[0].wr_id);
	check(wc[1].wr_id == WR_NEXT && wc[1].status == IBV_WC_WR_FLUSH_ERR &&
	      st == IBV_QPS_ERR,
	      "after it the QP goes to ERR and the next WR is flushed",
	      "next: %s wr_id %llu, QP state %d", wc_str(&wc[1]),
	      (unsigned long long)wc[1].wr_id, st);

	/* a Read whose sink is in the hole */
	wr[0] = rdma_wr(&sge[0], IBV_WR_RDMA_READ,
			(uintptr_t)s->region + MU_HOLE + MIB, s->mr->lkey, PG,
			m.rkey2, m.addr2, WR_BAD);
	wc[0] = (struct ibv_wc){ .wr_id = NO_WC };
	ret = ibv_post_send(c->qp, wr, &bad);
	if (!ret)
		poll_wc(c->scq, &wc[0], timeout_s);
	st = qp_state(c->qp);
	for (i = 0; i < 50 && st != IBV_QPS_ERR; i++) {
		usleep(100000);
		st = qp_state(c->qp);
	}
	info(s, "the Read into the hole: %s (vendor_err 0x%x), QP state %d",
	     wc_str(&wc[0]), wc[0].vendor_err, st);
	check(!ret && wc[0].wr_id == WR_BAD &&
	      wc[0].status != IBV_WC_SUCCESS &&
	      wc[0].status != IBV_WC_WR_FLUSH_ERR && st == IBV_QPS_ERR,
	      "the owner's Read whose sink is in the unmapped hole completes with an error, the QP goes to ERR",
	      "post: %s, completion: %s wr_id %llu, QP state %d",
	      strerror(ret), wc_str(&wc[0]),
	      (unsigned long long)wc[0].wr_id, st);
	check(hole_unmapped(s),
	      "the hole is still unmapped (mincore: ENOMEM)",
	      "something is mapped there again");
	send_op(s, a, MSG_GO);
	expect_msg(s, a, MSG_DONE, NULL, "the peer ends");
	return 0;
}

static void cli_munmaplocal(struct side *s)
{
	struct conn *a = &s->c[0], *b = &s->c[1];
	struct msg m, wrote;
	struct ibv_wc wc;
	int ret;

	if (!expect_msg(s, a, MSG_WIN, &m,
			"the owner sends the rkey of its ODP MR"))
		return;
	memset(s->buf + L_RECV, 0xa5, 2 * DLEN);
	ret = post_data_recv(b, (uintptr_t)s->buf + L_RECV, DLEN,
			     s->mr->lkey, 0) ||
	      post_data_recv(b, (uintptr_t)s->buf + L_RECV + DLEN, DLEN,
			     s->mr->lkey, 1);
	check(!ret, "the peer posts two 64 KiB receives", "%s",
	      strerror(errno));
	fill(s->buf + L_EXP, 0, DLEN, S_P3);
	wrote = (struct msg){ .op = MSG_WROTE, .rkey2 = s->mr->rkey,
			      .addr2 = (uintptr_t)s->buf + L_EXP };
	send_msg(s, a, &wrote);
	if (!expect_msg(s, a, MSG_GO, NULL, "the owner's Send ended"))
		return;
	poll_wc(b->rcq, &wc, timeout_s);
	check(wc.wr_id == WR_DATA && wc.status == IBV_WC_SUCCESS &&
	      wc.byte_len == DLEN,
	      "the owner's Send from the part still mapped arrives",
	      "%s wr_id %llu len %u", wc_str(&wc),
	      (unsigned long long)wc.wr_id, wc.byte_len);
	pat_check(s->buf + L_RECV, MU_F, DLEN, S_OWNER,
		  "the owner's Send from the part still mapped carries its data");
	send_op(s, a, MSG_DONE);
	if (!expect_msg(s, a, MSG_GO, NULL, "the owner's local errors end"))
		return;
	poll_wc(b->rcq, &wc, 1);
	info(s, "the second receive: %s", wc_str(&wc));
	send_op(s, a, MSG_DONE);
}

/* ---- pressure: a file mapping in a small memory cgroup ---- */

static int srv_pressure(struct side *s)
{
	struct conn *a = &s->c[0];
	size_t len = file_mib * MIB, got = 0;
	unsigned char *chunk;
	char name[200];
	uint64_t off;
	ssize_t n;
	size_t d = CHUNK;
	int ret;

	if (!file_path) {
		check(false, "pressure: a file is named (-f FILE)", "none");
		return ABORT;
	}
	s->fd = open(file_path, O_RDWR | O_CREAT | O_TRUNC, 0600);
	ret = s->fd < 0 ? errno : posix_fallocate(s->fd, 0, len);
	info(s, "the file: %s", file_path);
	snprintf(name, sizeof(name),
		 "the file is created and %lu MiB allocated (posix_fallocate)",
		 file_mib);
	check(!ret, name, "%s", strerror(ret));
	if (ret)
		return ABORT;
	s->region = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, s->fd,
			 0);
	if (s->region == MAP_FAILED) {
		s->region = NULL;
		check(false, "mmap of the file, MAP_SHARED", "%s",
		      strerror(errno));
		return ABORT;
	}
	s->rlen = len;
	errno = 0;
	s->mr = ibv_reg_mr(s->pd, s->region, len,
			   IBV_ACCESS_ON_DEMAND | IBV_ACCESS_LOCAL_WRITE |
			   IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ);
	snprintf(name, sizeof(name),
		 "ibv_reg_mr with IBV_ACCESS_ON_DEMAND of the %lu MiB MAP_SHARED file mapping succeeds",
		 file_mib);
	check(s->mr, name, "%s", strerror(errno));
	if (!s->mr)
		return ABORT;
	send_win(s, a);
	if (!expect_msg(s, a, MSG_WROTE, NULL, "the peer's Writes end"))
		return 0;
	ret = msync(s->region, len, MS_SYNC);
	check(!ret, "msync(MS_SYNC) of the file mapping returns 0", "%s",
	      strerror(errno));
	chunk = malloc(CHUNK);
	for (off = 0; chunk && off < len && d == CHUNK; off += CHUNK) {
		n = pread(s->fd, chunk, CHUNK, off);
		if (n != (ssize_t)CHUNK)
			break;
		got += n;
		d = pat_diff(chunk, off, CHUNK, S_FILE);
	}
	snprintf(name, sizeof(name),
		 "the file holds every octet of the peer's %lu MiB (pread after msync)",
		 file_mib);
	check(chunk && got == len && d == CHUNK, name,
	      "read %zu of %zu octets; octet %llu differs", got, len,
	      (unsigned long long)(got && d < CHUNK ? got - CHUNK + d : 0));
	free(chunk);
	send_op(s, a, MSG_GO);
	expect_msg(s, a, MSG_DONE, NULL, "the peer's Reads end");
	return 0;
}

static void cli_pressure(struct side *s)
{
	struct conn *a = &s->c[0];
	char wname[200], rname[200];
	uint64_t off = 0;
	struct msg m;
	double t0, t1;
	bool ok = true;
	size_t d;

	if (!expect_msg(s, a, MSG_WIN, &m,
			"the owner sends the rkey of its file mapping's ODP MR"))
		return;
	snprintf(wname, sizeof(wname),
		 "1 MiB Writes over the whole %llu MiB file mapping complete",
		 (unsigned long long)(m.len / MIB));
	t0 = now_s();
	for (off = 0; off < m.len && ok; off += CHUNK) {
		fill(s->buf + L_SRC, off, CHUNK, S_FILE);
		ok = p_access(s, a, IBV_WR_RDMA_WRITE, &m, off, L_SRC, CHUNK,
			      wname);
	}
	if (!ok)
		return;
	t1 = now_s();
	info(s, "wrote %llu MiB in %.1f s", (unsigned long long)(m.len / MIB),
	     t1 - t0);
	check(true, wname, "");
	send_op(s, a, MSG_WROTE);
	if (!expect_msg(s, a, MSG_GO, NULL, "the owner checked its file"))
		return;
	snprintf(rname, sizeof(rname),
		 "1 MiB Reads of the whole file mapping bring back what was written");
	t0 = now_s();
	for (off = 0; off < m.len && ok; off += CHUNK) {
		ok = p_access(s, a, IBV_WR_RDMA_READ, &m, off, L_READ, CHUNK,
			      rname);
		d = ok ? pat_diff(s->buf + L_READ, off, CHUNK, S_FILE) : 0;
		if (ok && d != CHUNK) {
			check(false, rname, "octet %llu differs",
			      (unsigned long long)(off + d));
			ok = false;
		}
	}
	info(s, "read in %.1f s", now_s() - t0);
	if (ok)
		check(true, rname, "");
	send_op(s, a, MSG_DONE);
}

/* ---- sendclose: Sends, then at once a disconnect ---- */

#define SC_LEN (4 * MIB)
#define SC_N 8				/* Sends, receives of DLEN */
#define SC_SLOT(i) ((i) * (SC_LEN / SC_N))	/* receive i, never touched */

static int srv_sendclose(struct side *s)
{
	struct conn *a = &s->c[0], *b = &s->c[1];
	int i, ok = 0, ret = 0, bad = -1;
	struct rdma_cm_event *ev;
	size_t d = DLEN;
	struct ibv_wc wc;

	if (odp_setup(s, SC_LEN, IBV_ACCESS_ON_DEMAND | IBV_ACCESS_LOCAL_WRITE,
		      "ibv_reg_mr of 4 MiB never touched with IBV_ACCESS_ON_DEMAND | LOCAL_WRITE"))
		return ABORT;
	for (i = 0; i < SC_N && !ret; i++)
		ret = post_data_recv(b, (uintptr_t)s->region + SC_SLOT(i),
				     DLEN, s->mr->lkey, i);
	check(!ret, "8 receives of 64 KiB in ODP memory never touched are posted",
	      "%s", strerror(ret));
	if (ret)
		return ABORT;
	send_op(s, a, MSG_GO);
	for (i = 0; i < SC_N; i++) {
		poll_wc(b->rcq, &wc, timeout_s);
		if (wc.wr_id == WR_DATA + (uint64_t)i &&
		    wc.status == IBV_WC_SUCCESS && wc.opcode == IBV_WC_RECV &&
		    wc.byte_len == DLEN) {
			ok++;
			if (d == DLEN) {
				d = pat_diff(s->region + SC_SLOT(i), i * DLEN,
					     DLEN, S_P1);
				bad = d == DLEN ? -1 : i;
			}
			continue;
		}
		info(s, "receive %d: %s wr_id %llu opcode %d len %u (vendor_err 0x%x)",
		     i, wc_str(&wc), (unsigned long long)wc.wr_id, wc.opcode,
		     wc.byte_len, wc.vendor_err);
		if (wc.wr_id == NO_WC)
			break;
	}
	check(ok == SC_N && d == DLEN,
	      "every receive completes with success, 64 KiB long, the peer's data in its ODP memory never touched",
	      "%d of %d succeeded; the first whose data differs: %d, at octet %zu (-1: none)",
	      ok, SC_N, bad, d);
	check(ok == SC_N,
	      "8 of the 8 receives complete with success, though the peer disconnected right after its Sends",
	      "%d of them (the others logged above)", ok);
	ev = b->disc ? NULL : get_event(s, RDMA_CM_EVENT_DISCONNECTED, b->id,
					timeout_s);
	if (ev)
		rdma_ack_cm_event(ev);
	check(b->disc, "the owner gets RDMA_CM_EVENT_DISCONNECTED after the receives",
	      "none in %d s", timeout_s);
	send_op(s, a, MSG_DONE);
	return 0;
}

static void cli_sendclose(struct side *s)
{
	struct conn *a = &s->c[0], *b = &s->c[1];
	struct ibv_send_wr wr[SC_N], *bad;
	struct ibv_sge sge[SC_N];
	struct ibv_wc wc;
	int i, ok = 0, ret, dret;

	if (!expect_msg(s, a, MSG_GO, NULL,
			"the owner posted its receives in ODP memory"))
		return;
	fill(s->buf + L_SRC, 0, SC_N * DLEN, S_P1);
	for (i = 0; i < SC_N; i++) {
		sge[i] = (struct ibv_sge){
			.addr = (uintptr_t)s->buf + L_SRC + i * DLEN,
			.length = DLEN, .lkey = s->mr->lkey };
		wr[i] = (struct ibv_send_wr){
			.wr_id = WR_DATA + i, .sg_list = &sge[i],
			.num_sge = 1, .opcode = IBV_WR_SEND,
			.send_flags = IBV_SEND_SIGNALED,
			.next = i + 1 < SC_N ? &wr[i + 1] : NULL };
	}
	ret = ibv_post_send(b->qp, wr, &bad);
	for (i = 0; i < SC_N && !ret; i++) {
		poll_wc(b->scq, &wc, timeout_s);
		if (wc.wr_id == NO_WC)
			break;
		if (wc.wr_id == WR_DATA + (uint64_t)i &&
		    wc.status == IBV_WC_SUCCESS)
			ok++;
		else
			info(s, "Send %d: %s wr_id %llu", i, wc_str(&wc),
			     (unsigned long long)wc.wr_id);
	}
	/* at once: no message between the completions and the disconnect */
	dret = rdma_disconnect(b->id) ? errno : 0;
	conn_free(b);
	check(ok == SC_N, "8 Sends of 64 KiB back to back complete with success",
	      "post: %s, %d of %d", strerror(ret), ok, SC_N);
	check(!dret, "the peer disconnects right after their completions and destroys its QP and id",
	      "rdma_disconnect: %s", strerror(dret));
	expect_msg(s, a, MSG_DONE, NULL, "the owner checked its receives");
}

static const struct scenario scenarios[] = {
	{ .name = "big", .nconn = 1, .data_conn = -1,
	  .server = srv_big, .client = cli_big },
	{ .name = "io", .nconn = 2, .data_conn = 1,
	  .server = srv_io, .client = cli_io },
	{ .name = "madvise", .nconn = 1, .data_conn = -1,
	  .server = srv_madvise, .client = cli_madvise },
	{ .name = "munmap", .nconn = 1, .data_conn = -1,
	  .server = srv_munmap, .client = cli_munmap },
	{ .name = "munmaplocal", .nconn = 3, .data_conn = 1,
	  .server = srv_munmaplocal, .client = cli_munmaplocal },
	{ .name = "pressure", .nconn = 1, .data_conn = -1,
	  .server = srv_pressure, .client = cli_pressure },
	{ .name = "sendclose", .nconn = 2, .data_conn = 1,
	  .server = srv_sendclose, .client = cli_sendclose },
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

static void side_conns(struct side *s, const struct scenario *sc)
{
	int i;

	for (i = 0; i < MAXC; i++) {
		s->c[i].idx = i;
		s->c[i].data = i == sc->data_conn;
	}
}

static int run_server(const struct scenario *sc, const char *host,
		      const char *port)
{
	struct sockaddr_storage src;
	struct side s = { .server = true, .fd = -1 };
	struct rlimit rl = {};
	int i;

	side_conns(&s, sc);
	getrlimit(RLIMIT_MEMLOCK, &rl);
	info(&s, "euid %u, RLIMIT_MEMLOCK %llu, CapEff 0x%llx", geteuid(),
	     (unsigned long long)rl.rlim_cur, cap_eff());
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
	for (i = 0; i < sc->nconn; i++) {
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
	struct side s = { .fd = -1 };
	int i;

	side_conns(&s, sc);
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
	}
	sc->client(&s);
	finish(&s);
out:
	side_free(&s);
	printf("peer: DONE\n");
	return failures ? 1 : 0;
}

/* ---- caps and advise: no connection ---- */

static struct ibv_context *open_dev(const char *name)
{
	struct ibv_device **list = ibv_get_device_list(NULL);
	struct ibv_context *ctx = NULL;
	int i;

	for (i = 0; list && list[i]; i++)
		if (!strcmp(ibv_get_device_name(list[i]), name))
			ctx = ibv_open_device(list[i]);
	if (list)
		ibv_free_device_list(list);
	if (!ctx)
		errno = ENODEV;
	return ctx;
}

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

static int run_caps(const char *dev)
{
	const uint32_t want = IBV_ODP_SUPPORT_SEND | IBV_ODP_SUPPORT_RECV |
			      IBV_ODP_SUPPORT_WRITE | IBV_ODP_SUPPORT_READ |
			      IBV_ODP_SUPPORT_ATOMIC;
	struct side s = { .server = true };
	struct ibv_device_attr_ex ax = {};
	struct ibv_context *ctx;
	struct ibv_pd *pd = NULL;
	struct ibv_mr *mr;
	long n0, n1, n2;
	uint32_t rc;
	void *p;
	int ret;

	ctx = open_dev(dev);
	ret = ctx ? ibv_query_device_ex(ctx, NULL, &ax) : errno;
	check(!ret, "the device opens and answers ibv_query_device_ex",
	      "%s: %s", dev, strerror(ret));
	if (ret)
		goto out;
	rc = ax.odp_caps.per_transport_caps.rc_odp_caps;
	info(&s, "odp_caps: general_caps 0x%llx rc 0x%x uc 0x%x ud 0x%x; max_mr_size 0x%llx",
	     (unsigned long long)ax.odp_caps.general_caps, rc,
	     ax.odp_caps.per_transport_caps.uc_odp_caps,
	     ax.odp_caps.per_transport_caps.ud_odp_caps,
	     (unsigned long long)ax.orig_attr.max_mr_size);
	check(ax.odp_caps.general_caps & IBV_ODP_SUPPORT,
	      "odp_caps.general_caps has IBV_ODP_SUPPORT", "0x%llx",
	      (unsigned long long)ax.odp_caps.general_caps);
	check((rc & want) == want,
	      "odp_caps.per_transport_caps.rc_odp_caps has IBV_ODP_SUPPORT_SEND, _RECV, _WRITE, _READ and _ATOMIC",
	      "0x%x, missing 0x%x", rc, want & ~rc);

	pd = ibv_alloc_pd(ctx);
	p = map_anon(16 * MIB);
	if (!pd || !p) {
		check(false, "ibv_alloc_pd and mmap", "%s", strerror(errno));
		goto out;
	}
	n0 = debugfs_obj("mr");
	errno = 0;
	mr = ibv_reg_mr(pd, p, 16 * MIB, ODP_ALL);
	check(mr && mr->addr == p && mr->length == 16 * MIB,
	      "ibv_reg_mr with IBV_ACCESS_ON_DEMAND of 16 MiB never touched returns an MR of that range",
	      "%s", mr ? "wrong address or length" : strerror(errno));
	n1 = debugfs_obj("mr");
	check(n0 >= 0 && n1 == n0 + (mr ? 1 : 0) && mr,
	      "debugfs objects: \"mr\" counts the ODP MR", "%ld before, %ld with it",
	      n0, n1);
	errno = 0;
	{
		struct ibv_mr *bad = ibv_reg_mr(pd, p, 16 * MIB,
						IBV_ACCESS_ON_DEMAND |
						IBV_ACCESS_REMOTE_WRITE);

		check(!bad && errno == EINVAL,
		      "an ODP registration with remote write but not local write is refused with EINVAL",
		      "%s", bad ? "registered" : strerror(errno));
		if (bad)
			ibv_dereg_mr(bad);
	}
	if (mr) {
		ret = ibv_dereg_mr(mr);
		n2 = debugfs_obj("mr");
		check(!ret && n2 == n0,
		      "ibv_dereg_mr of the ODP MR returns 0, \"mr\" is back to its count",
		      "returned %d, %ld before, %ld after", ret, n0, n2);
	}
	munmap(p, 16 * MIB);
out:
	if (pd)
		check(!ibv_dealloc_pd(pd), "ibv_dealloc_pd", "%s",
		      strerror(errno));
	if (ctx)
		ibv_close_device(ctx);
	printf("caps DONE\n");
	return failures ? 1 : 0;
}

/* ibv_advise_mr of one range with @flags. */
static int advise1(struct ibv_pd *pd, enum ibv_advise_mr_advice adv,
		   uint32_t flags, void *addr, uint32_t len, uint32_t lkey)
{
	struct ibv_sge sge = { .addr = (uintptr_t)addr, .length = len,
			       .lkey = lkey };

	return ibv_advise_mr(pd, adv, flags, &sge, 1);
}

static bool is_one_of(int e, int a, int b, int c)
{
	return e == a || e == b || e == c;
}

#define AD_LEN (64 * MIB)

static int run_advise(const char *dev)
{
	const uint32_t F = IBV_ADVISE_MR_FLAG_FLUSH;
	struct side s = { .server = true };
	struct ibv_mr *mr = NULL, *ro = NULL, *pin = NULL;
	struct ibv_context *ctx;
	struct ibv_pd *pd = NULL;
	unsigned char *p = NULL, *q = NULL, *h = NULL;
	struct ibv_sge two[2];
	long pin0, pin1, r;
	uint32_t badkey;
	double end;
	int ret;

	ctx = open_dev(dev);
	pd = ctx ? ibv_alloc_pd(ctx) : NULL;
	p = map_anon(AD_LEN);
	q = map_anon(MIB);
	if (!pd || !p || !q) {
		check(false, "the device opens, ibv_alloc_pd, mmap", "%s: %s",
		      dev, strerror(errno));
		goto out;
	}
	pin0 = status_kib("VmPin");
	errno = 0;
	mr = ibv_reg_mr(pd, p, AD_LEN,
			IBV_ACCESS_ON_DEMAND | IBV_ACCESS_LOCAL_WRITE |
			IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ);
	check(mr, "ibv_reg_mr with IBV_ACCESS_ON_DEMAND of 64 MiB never touched",
	      "%s", strerror(errno));
	if (!mr) {
		skip("ibv_advise_mr", "no ODP MR");
		goto out;
	}
	info(&s, "before any advice: %ld of 256 pages of the first MiB resident",
	     resident(p, MIB));

	ret = advise1(pd, IBV_ADVISE_MR_ADVICE_PREFETCH_WRITE, F, p, MIB,
		      mr->lkey);
	check(!ret, "ibv_advise_mr(PREFETCH_WRITE, FLAG_FLUSH) of 1 MiB never touched returns 0",
	      "%d (%s)", ret, strerror(ret));
	r = resident(p, MIB);
	check(!ret && r == MIB / PG,
	      "after PREFETCH_WRITE with FLAG_FLUSH the MiB is resident (mincore)",
	      "%ld of %llu pages", r, MIB / PG);

	ret = advise1(pd, IBV_ADVISE_MR_ADVICE_PREFETCH, F, p + 8 * MIB, MIB,
		      mr->lkey);
	check(!ret, "ibv_advise_mr(PREFETCH, FLAG_FLUSH) of 1 MiB never touched returns 0",
	      "%d (%s)", ret, strerror(ret));
	r = resident(p + 8 * MIB, MIB);
	check(!ret && r == MIB / PG,
	      "after PREFETCH with FLAG_FLUSH the MiB is resident (mincore)",
	      "%ld of %llu pages", r, MIB / PG);

	two[0] = (struct ibv_sge){ .addr = (uintptr_t)p + 16 * MIB,
				   .length = 256 * KIB, .lkey = mr->lkey };
	two[1] = (struct ibv_sge){ .addr = (uintptr_t)p + 20 * MIB + PG,
				   .length = 128 * KIB, .lkey = mr->lkey };
	ret = ibv_advise_mr(pd, IBV_ADVISE_MR_ADVICE_PREFETCH_WRITE, F, two, 2);
	r = resident(p + 16 * MIB, 256 * KIB) +
	    resident(p + 20 * MIB + PG, 128 * KIB);
	check(!ret && r == 384 * KIB / PG,
	      "ibv_advise_mr of two SGEs at once returns 0, both ranges resident",
	      "%d (%s), %ld of %llu pages", ret, strerror(ret), r,
	      384 * KIB / PG);

	ret = advise1(pd, IBV_ADVISE_MR_ADVICE_PREFETCH_WRITE, 0,
		      p + 32 * MIB, MIB, mr->lkey);
	check(!ret, "ibv_advise_mr(PREFETCH_WRITE) without FLAG_FLUSH returns 0",
	      "%d (%s)", ret, strerror(ret));
	end = now_s() + timeout_s;
	while ((r = resident(p + 32 * MIB, MIB)) != (long)(MIB / PG) &&
	       now_s() < end && !ret)
		usleep(10000);
	check(!ret && r == MIB / PG,
	      "the asynchronous prefetch makes the MiB resident in time",
	      "%ld of %llu pages after %d s", r, MIB / PG, timeout_s);

	ret = advise1(pd, IBV_ADVISE_MR_ADVICE_PREFETCH_NO_FAULT, F,
		      p + 40 * MIB, MIB, mr->lkey);
	info(&s, "PREFETCH_NO_FAULT of a MiB never touched: %d (%s), %ld pages resident",
	     ret, strerror(ret), resident(p + 40 * MIB, MIB));

	pin1 = status_kib("VmPin");
	check(pin0 >= 0 && pin1 == pin0,
	      "the ODP MR and its prefetches pin nothing (VmPin unchanged)",
	      "VmPin %ld kB before, %ld kB after", pin0, pin1);

	badkey = (mr->lkey & ~0xffU) | ((mr->lkey + 0x80) & 0xff);
	ret = advise1(pd, IBV_ADVISE_MR_ADVICE_PREFETCH_WRITE, F, p, PG,
		      badkey);
	check(is_one_of(ret, EINVAL, ENOENT, EFAULT),
	      "ibv_advise_mr with a wrong lkey is refused (EINVAL, ENOENT or EFAULT)",
	      "%d (%s)", ret, strerror(ret));
	ret = advise1(pd, IBV_ADVISE_MR_ADVICE_PREFETCH_WRITE, F,
		      p + AD_LEN - PG, 2 * PG, mr->lkey);
	info(&s, "a range past the MR's end: %d (%s)", ret, strerror(ret));
	check(ret != 0, "ibv_advise_mr of a range past the MR's end is refused",
	      "returned 0");
	ret = advise1(pd, IBV_ADVISE_MR_ADVICE_PREFETCH_WRITE, 0x80, p, PG,
		      mr->lkey);
	check(ret == EINVAL || ret == EOPNOTSUPP,
	      "ibv_advise_mr with unknown flags is refused (EINVAL or EOPNOTSUPP)",
	      "%d (%s)", ret, strerror(ret));

	errno = 0;
	ro = ibv_reg_mr(pd, q, MIB,
			IBV_ACCESS_ON_DEMAND | IBV_ACCESS_REMOTE_READ);
	check(ro, "ibv_reg_mr with IBV_ACCESS_ON_DEMAND | REMOTE_READ only",
	      "%s", strerror(errno));
	if (ro) {
		ret = advise1(pd, IBV_ADVISE_MR_ADVICE_PREFETCH_WRITE, F, q,
			      PG, ro->lkey);
		check(is_one_of(ret, EPERM, EFAULT, EACCES),
		      "PREFETCH_WRITE on an ODP MR without local write is refused (EPERM, EFAULT or EACCES)",
		      "%d (%s)", ret, strerror(ret));
		ret = advise1(pd, IBV_ADVISE_MR_ADVICE_PREFETCH, F, q, PG,
			      ro->lkey);
		check(!ret, "PREFETCH on that MR returns 0", "%d (%s)", ret,
		      strerror(ret));
	}

	h = aligned_alloc(PG, 16 * KIB);
	errno = 0;
	pin = h ? ibv_reg_mr(pd, h, 16 * KIB, IBV_ACCESS_LOCAL_WRITE) : NULL;
	check(pin, "ibv_reg_mr of 16 KiB without IBV_ACCESS_ON_DEMAND", "%s",
	      strerror(errno));
	if (pin) {
		ret = advise1(pd, IBV_ADVISE_MR_ADVICE_PREFETCH_WRITE, F, h,
			      PG, pin->lkey);
		check(is_one_of(ret, EOPNOTSUPP, EINVAL, ENOENT),
		      "ibv_advise_mr on an MR that is not ODP is refused (EOPNOTSUPP, EINVAL or ENOENT)",
		      "%d (%s)", ret, strerror(ret));
	}
out:
	ret = 0;
	if (pin)
		ret |= ibv_dereg_mr(pin);
	if (ro)
		ret |= ibv_dereg_mr(ro);
	if (mr)
		ret |= ibv_dereg_mr(mr);
	if (pd)
		ret |= ibv_dealloc_pd(pd);
	if (pd)
		check(!ret, "the MRs and the PD are destroyed without error",
		      "a destroy failed");
	if (ctx)
		ibv_close_device(ctx);
	if (p)
		munmap(p, AD_LEN);
	if (q)
		munmap(q, MIB);
	free(h);
	printf("advise DONE\n");
	return failures ? 1 : 0;
}

static void help(void)
{
	size_t i;

	fprintf(stderr, "usage: odp_test caps|advise DEV [-T SEC]\n"
		"       odp_test -s SCENARIO owner|peer ADDR PORT [-T SEC] [-r ROUNDS] [-f FILE -m MIB]\n"
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
		} else if (!strcmp(argv[i], "-r") && i + 1 < argc) {
			rounds = atoi(argv[++i]);
		} else if (!strcmp(argv[i], "-f") && i + 1 < argc) {
			file_path = argv[++i];
		} else if (!strcmp(argv[i], "-m") && i + 1 < argc) {
			file_mib = strtoul(argv[++i], NULL, 10);
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
		timeout_s = 20;
	if (rounds <= 0)
		rounds = 1;
	if (!file_mib)
		file_mib = 64;
	if (np == 2 && !strcmp(pos[0], "caps"))
		return run_caps(pos[1]);
	if (np == 2 && !strcmp(pos[0], "advise"))
		return run_advise(pos[1]);
	if (np != 3 || !sc) {
		help();
		return 2;
	}
	if (!strcmp(pos[0], "owner"))
		return run_server(sc, pos[1], pos[2]);
	if (!strcmp(pos[0], "peer"))
		return run_client(sc, pos[1], pos[2]);
	help();
	return 2;
}
