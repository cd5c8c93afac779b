// SPDX-License-Identifier: GPL-2.0
/*
 * The siw2 side of the hostile suite: one RDMA CM connection with a QP, a
 * region the peer may read and write, and posted receives, facing the raw
 * FPDU peer (fpdu_peer.py). Everything that happens is printed as one line,
 * and the suite checks the lines:
 *
 *   LISTENING                          server: rdma_listen succeeded
 *   MR stag=0x.. to=0x.. len=N         the region (also in the Private Data)
 *   CM <event> status=N [pdata=..]     an RDMA CM event
 *   WC wr_id=N status=<name> opcode=<name> len=N [data=TEXT]
 *                                      a work completion
 *   ASYNC <name>                       an asynchronous event
 *   QP state=<name>                    after the disconnect, before this
 *                                      program touches the QP
 *   QP forcing ERR                     then it moves the QP to ERR itself
 *                                      (unless it is in RESET);
 *                                      completions after this line are its
 *                                      own doing
 *   REGION intact | REGION changed first=N last=N
 *                                      the region against its pattern at
 *                                      the end: which octets the peer wrote
 *   QP draining                        -D: the QP goes to ERR now, and a
 *                                      receive (wr_id 999) is posted
 *   DRAINED                            -D: that receive's completion came;
 *                                      the WC lines between are in CQ order
 *   QP resetting                       -X: the QP goes to RESET now
 *   DEREG region|receives ret=N us=N   -U: ibv_dereg_mr() of the region or
 *                                      of the receive buffers returned N
 *                                      after N microseconds
 *   KEEPING                            -K: the device went; every object
 *                                      is kept for SEC seconds
 *   DONE | TIMEOUT                     the end
 *
 *   peer_target server ADDR PORT [options]   accept one connection
 *   peer_target client ADDR PORT [options]   connect to ADDR
 *
 * Options:
 *   -m LEN     region length (default 65536); octet i holds
 *              (7 * i + (i >> 8)) & 0xff, as fpdu_peer.py expects
 *   -n N       receives posted before the connection is set up (default 4)
 *   -r LEN     length of each receive buffer (default 256)
 *   -i N -o N  IRD (responder resources) and ORD (initiator depth)
 *              (default 2 and 2)
 *   -s TEXT    post a Send of TEXT once established
 *   -L LKEY,ADDR  take the Send's octets from ADDR under LKEY instead,
 *              a region of another process: the Send must complete in
 *              error and carry nothing
 *   -R 0       post a zero-length RDMA Read once established, its sink in
 *              the region (the raw peer answers only such Reads)
 *   -D MS      MS milliseconds after the connection is established, drain
 *              the QP as ib_drain_rq() does: move it to ERR, post one more
 *              receive and poll until that receive completes
 *   -X MS      MS milliseconds after the connection is established, move
 *              the QP to RESET
 *   -U MS      MS milliseconds after the connection is established,
 *              deregister the region and the receive buffers' MR (their
 *              memory stays allocated, so the REGION line at the end still
 *              tells whether anything was written to it afterwards)
 *   -K SEC     on the device's removal, release nothing for SEC seconds
 *              (a process that ignores RDMA_CM_EVENT_DEVICE_REMOVAL):
 *              the removal must not wait for it
 *   -T SEC     give up after SEC seconds without a disconnect (default 30)
 *
 * The Private Data of the accept (server) or connect request (client) is
 * "stag=0x%08x to=0x%llx len=%u", so that the raw peer learns the region.
 *
 * The QP is created with ibv_create_qp, not rdma_create_qp, as in
 * cm_test.c: librdmacm then leaves its states to siw2's CM. siw2's QPs
 * start in INIT, so receives can be posted before the connection exists.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <netdb.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <rdma/rdma_cma.h>

struct opts {
	size_t mr_len;
	int nrecv;
	size_t recv_len;
	int ird;
	int ord;
	const char *send_text;
	uint32_t send_lkey;
	uint64_t send_addr;
	int read;
	int drain_ms;
	int reset_ms;
	int dereg_ms;
	int keep_s;
	int timeout_s;
};

struct target {
	struct rdma_event_channel *ch;
	struct rdma_cm_id *listen_id;
	struct rdma_cm_id *id;
	struct ibv_context *verbs;
	struct ibv_pd *pd;
	struct ibv_comp_channel *cc;
	struct ibv_cq *cq;
	struct ibv_qp *qp;
	unsigned char *region;
	struct ibv_mr *mr;
	unsigned char *rbufs;
	struct ibv_mr *rmr;
	unsigned char *sbuf;
	struct ibv_mr *smr;
	char pdata[96];
	int established;
	int disconnected;
};

static const struct opts *o;
static struct timespec t_end;

static const char *const wc_status[] = {
	[IBV_WC_SUCCESS] = "SUCCESS",
	[IBV_WC_LOC_LEN_ERR] = "LOC_LEN_ERR",
	[IBV_WC_LOC_QP_OP_ERR] = "LOC_QP_OP_ERR",
	[IBV_WC_LOC_EEC_OP_ERR] = "LOC_EEC_OP_ERR",
	[IBV_WC_LOC_PROT_ERR] = "LOC_PROT_ERR",
	[IBV_WC_WR_FLUSH_ERR] = "WR_FLUSH_ERR",
	[IBV_WC_MW_BIND_ERR] = "MW_BIND_ERR",
	[IBV_WC_BAD_RESP_ERR] = "BAD_RESP_ERR",
	[IBV_WC_LOC_ACCESS_ERR] = "LOC_ACCESS_ERR",
	[IBV_WC_REM_INV_REQ_ERR] = "REM_INV_REQ_ERR",
	[IBV_WC_REM_ACCESS_ERR] = "REM_ACCESS_ERR",
	[IBV_WC_REM_OP_ERR] = "REM_OP_ERR",
	[IBV_WC_RETRY_EXC_ERR] = "RETRY_EXC_ERR",
	[IBV_WC_RNR_RETRY_EXC_ERR] = "RNR_RETRY_EXC_ERR",
	[IBV_WC_LOC_RDD_VIOL_ERR] = "LOC_RDD_VIOL_ERR",
	[IBV_WC_REM_INV_RD_REQ_ERR] = "REM_INV_RD_REQ_ERR",
	[IBV_WC_REM_ABORT_ERR] = "REM_ABORT_ERR",
	[IBV_WC_INV_EECN_ERR] = "INV_EECN_ERR",
	[IBV_WC_INV_EEC_STATE_ERR] = "INV_EEC_STATE_ERR",
	[IBV_WC_FATAL_ERR] = "FATAL_ERR",
	[IBV_WC_RESP_TIMEOUT_ERR] = "RESP_TIMEOUT_ERR",
	[IBV_WC_GENERAL_ERR] = "GENERAL_ERR",
};

static const char *const async_names[] = {
	[IBV_EVENT_CQ_ERR] = "CQ_ERR",
	[IBV_EVENT_QP_FATAL] = "QP_FATAL",
	[IBV_EVENT_QP_REQ_ERR] = "QP_REQ_ERR",
	[IBV_EVENT_QP_ACCESS_ERR] = "QP_ACCESS_ERR",
	[IBV_EVENT_COMM_EST] = "COMM_EST",
	[IBV_EVENT_SQ_DRAINED] = "SQ_DRAINED",
	[IBV_EVENT_PATH_MIG] = "PATH_MIG",
	[IBV_EVENT_PATH_MIG_ERR] = "PATH_MIG_ERR",
	[IBV_EVENT_DEVICE_FATAL] = "DEVICE_FATAL",
	[IBV_EVENT_PORT_ACTIVE] = "PORT_ACTIVE",
	[IBV_EVENT_PORT_ERR] = "PORT_ERR",
	[IBV_EVENT_LID_CHANGE] = "LID_CHANGE",
	[IBV_EVENT_PKEY_CHANGE] = "PKEY_CHANGE",
	[IBV_EVENT_SM_CHANGE] = "SM_CHANGE",
	[IBV_EVENT_SRQ_ERR] = "SRQ_ERR",
	[IBV_EVENT_SRQ_LIMIT_REACHED] = "SRQ_LIMIT_REACHED",
	[IBV_EVENT_QP_LAST_WQE_REACHED] = "QP_LAST_WQE_REACHED",
	[IBV_EVENT_CLIENT_REREGISTER] = "CLIENT_REREGISTER",
	[IBV_EVENT_GID_CHANGE] = "GID_CHANGE",
};

static const char *const qp_states[] = {
	[IBV_QPS_RESET] = "RESET", [IBV_QPS_INIT] = "INIT",
	[IBV_QPS_RTR] = "RTR", [IBV_QPS_RTS] = "RTS", [IBV_QPS_SQD] = "SQD",
	[IBV_QPS_SQE] = "SQE", [IBV_QPS_ERR] = "ERR",
};

static const char *lookup(const char *const *tab, size_t n, unsigned int v)
{
	if (v < n && tab[v])
		return tab[v];
	return "UNKNOWN";
}

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

static const char *wc_opcode(enum ibv_wc_opcode op)
{
	switch (op) {
	case IBV_WC_SEND: return "SEND";
	case IBV_WC_RDMA_WRITE: return "RDMA_WRITE";
	case IBV_WC_RDMA_READ: return "RDMA_READ";
	case IBV_WC_COMP_SWAP: return "COMP_SWAP";
	case IBV_WC_FETCH_ADD: return "FETCH_ADD";
	case IBV_WC_BIND_MW: return "BIND_MW";
	case IBV_WC_LOCAL_INV: return "LOCAL_INV";
	case IBV_WC_RECV: return "RECV";
	case IBV_WC_RECV_RDMA_WITH_IMM: return "RECV_RDMA_WITH_IMM";
	default: return "OTHER";
	}
}

/* Text as one word: what is not printable ASCII (or a space) becomes '.'. */
static void put_text(const unsigned char *p, size_t len)
{
	size_t i;

	for (i = 0; i < len && i < 64; i++)
		putchar(p[i] >= 0x21 && p[i] < 0x7f ? p[i] : '.');
	if (!len)
		putchar('-');
	if (len > 64)
		fputs("...", stdout);
}

static int remaining_ms(void)
{
	struct timespec now;
	long ms;

	clock_gettime(CLOCK_MONOTONIC, &now);
	ms = (t_end.tv_sec - now.tv_sec) * 1000 +
	     (t_end.tv_nsec - now.tv_nsec) / 1000000;
	return ms > 0 ? (int)ms : 0;
}

static void print_wc(const struct target *t, const struct ibv_wc *wc)
{
	printf("WC wr_id=%llu status=%s opcode=%s len=%u",
	       (unsigned long long)wc->wr_id,
	       lookup(wc_status, ARRAY_SIZE(wc_status), wc->status),
	       wc->status == IBV_WC_SUCCESS ? wc_opcode(wc->opcode) : "-",
	       wc->status == IBV_WC_SUCCESS ? wc->byte_len : 0);
	if (wc->status == IBV_WC_SUCCESS && wc->opcode == IBV_WC_RECV &&
	    wc->wr_id < (uint64_t)o->nrecv) {
		fputs(" data=", stdout);
		put_text(t->rbufs + wc->wr_id * o->recv_len, wc->byte_len);
	}
	putchar('\n');
}

static void poll_cq(struct target *t)
{
	struct ibv_wc wc[8];
	int n, i;

	while ((n = ibv_poll_cq(t->cq, 8, wc)) > 0)
		for (i = 0; i < n; i++)
			print_wc(t, &wc[i]);
	if (n < 0)
		printf("ERROR ibv_poll_cq: %d\n", n);
}

static void cq_event(struct target *t)
{
	struct ibv_cq *cq;
	void *ctx;

	if (ibv_get_cq_event(t->cc, &cq, &ctx))
		return;
	ibv_ack_cq_events(cq, 1);
	if (ibv_req_notify_cq(cq, 0))
		printf("ERROR ibv_req_notify_cq\n");
	poll_cq(t);
}

static void async_event(struct target *t)
{
	struct ibv_async_event ev;

	if (ibv_get_async_event(t->verbs, &ev))
		return;
	printf("ASYNC %s\n", lookup(async_names, ARRAY_SIZE(async_names),
				    ev.event_type));
	ibv_ack_async_event(&ev);
}

static void print_cm(struct rdma_cm_event *ev)
{
	const struct rdma_conn_param *c = &ev->param.conn;

	printf("CM %s status=%d", rdma_event_str(ev->event), ev->status);
	if (ev->event == RDMA_CM_EVENT_CONNECT_REQUEST ||
	    ev->event == RDMA_CM_EVENT_ESTABLISHED ||
	    ev->event == RDMA_CM_EVENT_REJECTED) {
		fputs(" pdata=", stdout);
		put_text(c->private_data, c->private_data_len);
		printf(" ird=%u ord=%u", c->responder_resources,
		       c->initiator_depth);
	}
	putchar('\n');
}

static int set_nonblock(int fd)
{
	int fl = fcntl(fd, F_GETFL);

	return fl < 0 ? -1 : fcntl(fd, F_SETFL, fl | O_NONBLOCK);
}

/* PD, CQ, QP, the region and the receive buffers, receives posted. */
static int make_resources(struct target *t, struct rdma_cm_id *id)
{
	struct ibv_qp_init_attr attr = {
		.qp_type = IBV_QPT_RC,
		.cap = {
			.max_send_wr = 8,
			.max_recv_wr = o->nrecv ? o->nrecv : 1,
			.max_send_sge = 1,
			.max_recv_sge = 1,
		},
	};
	size_t i;

	t->verbs = id->verbs;
	t->pd = ibv_alloc_pd(t->verbs);
	t->cc = t->pd ? ibv_create_comp_channel(t->verbs) : NULL;
	if (!t->cc || set_nonblock(t->cc->fd) ||
	    set_nonblock(t->verbs->async_fd))
		return -1;
	t->cq = ibv_create_cq(t->verbs, 2 * o->nrecv + 16, NULL, t->cc, 0);
	if (!t->cq || ibv_req_notify_cq(t->cq, 0))
		return -1;
	attr.send_cq = t->cq;
	attr.recv_cq = t->cq;
	t->qp = ibv_create_qp(t->pd, &attr);
	if (!t->qp)
		return -1;

	if (posix_memalign((void **)&t->region, 4096, o->mr_len))
		return -1;
	for (i = 0; i < o->mr_len; i++)
		t->region[i] = (unsigned char)(7 * i + (i >> 8));
	t->mr = ibv_reg_mr(t->pd, t->region, o->mr_len,
			   IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
			   IBV_ACCESS_REMOTE_READ);
	if (!t->mr)
		return -1;
	t->rbufs = calloc(o->nrecv ? o->nrecv : 1, o->recv_len);
	t->sbuf = calloc(1, 4096);
	if (!t->rbufs || !t->sbuf)
		return -1;
	t->rmr = ibv_reg_mr(t->pd, t->rbufs,
			    (o->nrecv ? o->nrecv : 1) * o->recv_len,
			    IBV_ACCESS_LOCAL_WRITE);
	t->smr = ibv_reg_mr(t->pd, t->sbuf, 4096, 0);
	if (!t->rmr || !t->smr)
		return -1;

	for (i = 0; i < (size_t)o->nrecv; i++) {
		struct ibv_sge sge = {
			.addr = (uintptr_t)(t->rbufs + i * o->recv_len),
			.length = o->recv_len,
			.lkey = t->rmr->lkey,
		};
		struct ibv_recv_wr wr = {
			.wr_id = i, .sg_list = &sge, .num_sge = 1,
		}, *bad;

		if (ibv_post_recv(t->qp, &wr, &bad)) {
			printf("ERROR ibv_post_recv: %s\n", strerror(errno));
			return -1;
		}
	}
	snprintf(t->pdata, sizeof(t->pdata), "stag=0x%08x to=0x%llx len=%zu",
		 t->mr->rkey, (unsigned long long)(uintptr_t)t->region,
		 o->mr_len);
	printf("MR stag=0x%08x to=0x%llx len=%zu\n", t->mr->rkey,
	       (unsigned long long)(uintptr_t)t->region, o->mr_len);
	return 0;
}

static void post_send_text(struct target *t)
{
	size_t len = strnlen(o->send_text, 4096);
	struct ibv_sge sge = {
		.addr = (uintptr_t)t->sbuf,
		.length = len,
		.lkey = t->smr->lkey,
	};
	struct ibv_send_wr wr = {
		.wr_id = 1000, .sg_list = &sge, .num_sge = 1,
		.opcode = IBV_WR_SEND, .send_flags = IBV_SEND_SIGNALED,
	}, *bad;

	memcpy(t->sbuf, o->send_text, len);
	if (o->send_lkey) {
		sge.lkey = o->send_lkey;
		sge.addr = o->send_addr;
	}
	if (ibv_post_send(t->qp, &wr, &bad))
		printf("ERROR ibv_post_send: %s\n", strerror(errno));
	else
		printf("POSTED send len=%zu\n", len);
}

static void post_read(struct target *t)
{
	struct ibv_sge sge = {
		.addr = (uintptr_t)t->region,
		.length = 0,
		.lkey = t->mr->lkey,
	};
	struct ibv_send_wr wr = {
		.wr_id = 2000, .sg_list = &sge, .num_sge = 1,
		.opcode = IBV_WR_RDMA_READ, .send_flags = IBV_SEND_SIGNALED,
	}, *bad;

	if (ibv_post_send(t->qp, &wr, &bad))
		printf("ERROR ibv_post_send: %s\n", strerror(errno));
	else
		printf("POSTED read len=0\n");
}

#define DRAIN_WR_ID 999

/*
 * The drain of ib_drain_rq(): once the receive posted in ERR completes,
 * every receive posted before it has completed, in the order posted.
 */
static void drain(struct target *t)
{
	struct ibv_qp_attr attr = { .qp_state = IBV_QPS_ERR };
	struct ibv_recv_wr wr = { .wr_id = DRAIN_WR_ID }, *bad;
	struct ibv_wc wc;
	int i, n;

	poll(NULL, 0, o->drain_ms);
	poll_cq(t);
	printf("QP draining\n");
	if (ibv_modify_qp(t->qp, &attr, IBV_QP_STATE)) {
		printf("ERROR modify_qp(ERR): %s\n", strerror(errno));
		return;
	}
	if (ibv_post_recv(t->qp, &wr, &bad)) {
		printf("ERROR ibv_post_recv: %s\n", strerror(errno));
		return;
	}
	for (i = 0; i < 500; i++) {
		n = ibv_poll_cq(t->cq, 1, &wc);
		if (n < 0) {
			printf("ERROR ibv_poll_cq: %d\n", n);
			return;
		}
		if (!n) {
			poll(NULL, 0, 10);
			continue;
		}
		print_wc(t, &wc);
		if (wc.wr_id == DRAIN_WR_ID) {
			printf("DRAINED\n");
			return;
		}
	}
	printf("ERROR the drain's receive did not complete\n");
}

/* RESET ends the connection and discards the receives, without completions. */
static void reset_qp(struct target *t)
{
	struct ibv_qp_attr attr = { .qp_state = IBV_QPS_RESET };

	poll(NULL, 0, o->reset_ms);
	poll_cq(t);
	printf("QP resetting\n");
	if (ibv_modify_qp(t->qp, &attr, IBV_QP_STATE))
		printf("ERROR modify_qp(RESET): %s\n", strerror(errno));
}

static void dereg_one(const char *what, struct ibv_mr **mr)
{
	struct timespec a, b;
	int ret;

	clock_gettime(CLOCK_MONOTONIC, &a);
	ret = ibv_dereg_mr(*mr);
	clock_gettime(CLOCK_MONOTONIC, &b);
	printf("DEREG %s ret=%d us=%lld\n", what, ret,
	       (long long)(b.tv_sec - a.tv_sec) * 1000000 +
	       (b.tv_nsec - a.tv_nsec) / 1000);
	if (!ret)
		*mr = NULL;
}

/* Deregisters what a peer may be holding; the memory stays. */
static void dereg_now(struct target *t)
{
	poll(NULL, 0, o->dereg_ms);
	poll_cq(t);
	dereg_one("region", &t->mr);
	dereg_one("receives", &t->rmr);
}

static void report_region(const struct target *t)
{
	size_t i, first = o->mr_len, last = 0;

	if (!t->region)
		return;
	for (i = 0; i < o->mr_len; i++) {
		if (t->region[i] == (unsigned char)(7 * i + (i >> 8)))
			continue;
		if (first == o->mr_len)
			first = i;
		last = i;
	}
	if (first == o->mr_len)
		printf("REGION intact\n");
	else
		printf("REGION changed first=%zu last=%zu\n", first, last);
}

static void free_target(struct target *t)
{
	if (t->qp)
		ibv_destroy_qp(t->qp);
	if (t->mr)
		ibv_dereg_mr(t->mr);
	if (t->rmr)
		ibv_dereg_mr(t->rmr);
	if (t->smr)
		ibv_dereg_mr(t->smr);
	if (t->cq)
		ibv_destroy_cq(t->cq);
	if (t->cc)
		ibv_destroy_comp_channel(t->cc);
	if (t->pd)
		ibv_dealloc_pd(t->pd);
	if (t->id)
		rdma_destroy_id(t->id);
	if (t->listen_id)
		rdma_destroy_id(t->listen_id);
	if (t->ch)
		rdma_destroy_event_channel(t->ch);
	free(t->region);
	free(t->rbufs);
	free(t->sbuf);
}

/* Waits for CM, CQ and async events for up to @ms; 0 if something came. */
static int wait_events(struct target *t, int ms)
{
	struct pollfd pfd[3] = {
		{ .fd = t->ch->fd, .events = POLLIN },
		{ .fd = t->cc ? t->cc->fd : -1, .events = POLLIN },
		{ .fd = t->verbs ? t->verbs->async_fd : -1, .events = POLLIN },
	};
	int n = poll(pfd, 3, ms);

	if (n <= 0)
		return -1;
	if (pfd[1].revents & POLLIN)
		cq_event(t);
	if (pfd[2].revents & POLLIN)
		async_event(t);
	return pfd[0].revents & POLLIN ? 1 : 0;
}

/*
 * After the disconnect: what siw2 did on its own (QP state, completions,
 * async events), then the QP to ERR to flush what is left.
 */
static void after_disconnect(struct target *t)
{
	struct ibv_qp_attr attr;
	struct ibv_qp_init_attr init;
	int i;

	if (!t->qp)
		return;
	for (i = 0; i < 10; i++) {
		wait_events(t, 100);
		poll_cq(t);
	}
	if (ibv_query_qp(t->qp, &attr, IBV_QP_STATE, &init)) {
		printf("ERROR ibv_query_qp: %s\n", strerror(errno));
		return;
	}
	printf("QP state=%s\n",
	       lookup(qp_states, ARRAY_SIZE(qp_states), attr.qp_state));
	/* IB has no way from RESET to ERR, and nothing is left to flush. */
	if (attr.qp_state == IBV_QPS_RESET)
		return;
	printf("QP forcing ERR\n");
	memset(&attr, 0, sizeof(attr));
	attr.qp_state = IBV_QPS_ERR;
	if (ibv_modify_qp(t->qp, &attr, IBV_QP_STATE))
		printf("ERROR modify_qp(ERR): %s\n", strerror(errno));
	for (i = 0; i < 5; i++) {
		wait_events(t, 100);
		poll_cq(t);
	}
}

static int get_addr(const char *host, const char *port, struct sockaddr *sa)
{
	struct addrinfo hints = {
		.ai_flags = AI_NUMERICHOST | AI_PASSIVE,
		.ai_socktype = SOCK_STREAM,
	}, *res;
	int ret = getaddrinfo(host, port, &hints, &res);

	if (ret) {
		printf("ERROR address %s: %s\n", host, gai_strerror(ret));
		return -1;
	}
	memcpy(sa, res->ai_addr, res->ai_addrlen);
	freeaddrinfo(res);
	return 0;
}

/* The next CM event within the time left, printed; NULL on timeout. */
static struct rdma_cm_event *next_cm(struct target *t)
{
	struct rdma_cm_event *ev;
	int r;

	for (;;) {
		int ms = remaining_ms();

		if (!ms)
			return NULL;
		r = wait_events(t, ms);
		if (r < 0)
			continue;
		if (r == 0)
			continue;
		if (rdma_get_cm_event(t->ch, &ev)) {
			printf("ERROR rdma_get_cm_event: %s\n",
			       strerror(errno));
			return NULL;
		}
		print_cm(ev);
		return ev;
	}
}

static int accept_one(struct target *t, struct rdma_cm_event *ev)
{
	struct rdma_conn_param param = {
		.responder_resources = o->ird,
		.initiator_depth = o->ord,
	};

	t->id = ev->id;
	if (make_resources(t, t->id)) {
		printf("ERROR resources: %s\n", strerror(errno));
		return -1;
	}
	param.qp_num = t->qp->qp_num;
	param.private_data = t->pdata;
	param.private_data_len = strlen(t->pdata);
	if (rdma_accept(t->id, &param)) {
		printf("ERROR rdma_accept: %s\n", strerror(errno));
		return -1;
	}
	return 0;
}

static int start_client(struct target *t, struct sockaddr *dst)
{
	struct rdma_conn_param param = {
		.responder_resources = o->ird,
		.initiator_depth = o->ord,
	};
	struct rdma_cm_event *ev;
	int type;

	if (rdma_create_id(t->ch, &t->id, NULL, RDMA_PS_TCP) ||
	    rdma_resolve_addr(t->id, NULL, dst, 5000)) {
		printf("ERROR resolve addr: %s\n", strerror(errno));
		return -1;
	}
	ev = next_cm(t);
	type = ev ? (int)ev->event : -1;
	if (ev)
		rdma_ack_cm_event(ev);
	if (type != RDMA_CM_EVENT_ADDR_RESOLVED ||
	    rdma_resolve_route(t->id, 5000))
		return -1;
	ev = next_cm(t);
	type = ev ? (int)ev->event : -1;
	if (ev)
		rdma_ack_cm_event(ev);
	if (type != RDMA_CM_EVENT_ROUTE_RESOLVED)
		return -1;
	if (make_resources(t, t->id)) {
		printf("ERROR resources: %s\n", strerror(errno));
		return -1;
	}
	param.qp_num = t->qp->qp_num;
	param.private_data = t->pdata;
	param.private_data_len = strlen(t->pdata);
	if (rdma_connect(t->id, &param)) {
		printf("ERROR rdma_connect: %s\n", strerror(errno));
		return -1;
	}
	return 0;
}

static int run(int server, const char *host, const char *port)
{
	struct sockaddr_storage sa;
	struct target t = {};
	struct rdma_cm_event *ev;
	int ret = 1, type;

	if (get_addr(host, port, (struct sockaddr *)&sa))
		return 1;
	t.ch = rdma_create_event_channel();
	if (!t.ch)
		return 1;
	if (server) {
		if (rdma_create_id(t.ch, &t.listen_id, NULL, RDMA_PS_TCP) ||
		    rdma_bind_addr(t.listen_id, (struct sockaddr *)&sa) ||
		    rdma_listen(t.listen_id, 1)) {
			printf("ERROR listen: %s\n", strerror(errno));
			goto out;
		}
		printf("LISTENING\n");
	} else if (start_client(&t, (struct sockaddr *)&sa)) {
		goto out;
	}

	while (!t.disconnected) {
		ev = next_cm(&t);
		if (!ev) {
			printf("TIMEOUT\n");
			goto out;
		}
		type = ev->event;
		if (type == RDMA_CM_EVENT_CONNECT_REQUEST && !t.id) {
			int r = accept_one(&t, ev);

			rdma_ack_cm_event(ev);
			if (r)
				goto out;
			continue;
		}
		if (type == RDMA_CM_EVENT_CONNECT_REQUEST) {
			/* Only one connection: refuse the others. */
			rdma_reject(ev->id, NULL, 0);
			rdma_ack_cm_event(ev);
			continue;
		}
		rdma_ack_cm_event(ev);
		switch (type) {
		case RDMA_CM_EVENT_ESTABLISHED:
			t.established = 1;
			if (o->send_text)
				post_send_text(&t);
			if (o->read)
				post_read(&t);
			if (o->drain_ms)
				drain(&t);
			if (o->reset_ms)
				reset_qp(&t);
			if (o->dereg_ms)
				dereg_now(&t);
			break;
		case RDMA_CM_EVENT_DISCONNECTED:
			t.disconnected = 1;
			break;
		case RDMA_CM_EVENT_DEVICE_REMOVAL:
			if (o->keep_s) {
				printf("KEEPING\n");
				fflush(stdout);
				sleep(o->keep_s);
			}
			goto out;
		case RDMA_CM_EVENT_REJECTED:
		case RDMA_CM_EVENT_UNREACHABLE:
		case RDMA_CM_EVENT_CONNECT_ERROR:
			goto out;
		default:
			break;
		}
	}
	after_disconnect(&t);
	ret = 0;
out:
	report_region(&t);
	fflush(stdout);
	free_target(&t);
	printf("DONE\n");
	return ret;
}

/* One option and its value; -1 if the option is unknown. */
static int set_opt(struct opts *p, const char *opt, const char *v)
{
	if (!strcmp(opt, "-m"))
		p->mr_len = strtoul(v, NULL, 0);
	else if (!strcmp(opt, "-n"))
		p->nrecv = atoi(v);
	else if (!strcmp(opt, "-r"))
		p->recv_len = strtoul(v, NULL, 0);
	else if (!strcmp(opt, "-i"))
		p->ird = atoi(v);
	else if (!strcmp(opt, "-o"))
		p->ord = atoi(v);
	else if (!strcmp(opt, "-s"))
		p->send_text = v;
	else if (!strcmp(opt, "-L"))
		return sscanf(v, "%" SCNx32 ",%" SCNx64, &p->send_lkey,
			      &p->send_addr) == 2 && p->send_lkey ? 0 : -1;
	else if (!strcmp(opt, "-R") && !strcmp(v, "0"))
		p->read = 1;
	else if (!strcmp(opt, "-D") && atoi(v) > 0)
		p->drain_ms = atoi(v);
	else if (!strcmp(opt, "-X") && atoi(v) > 0)
		p->reset_ms = atoi(v);
	else if (!strcmp(opt, "-U") && atoi(v) > 0)
		p->dereg_ms = atoi(v);
	else if (!strcmp(opt, "-K") && atoi(v) > 0)
		p->keep_s = atoi(v);
	else if (!strcmp(opt, "-T"))
		p->timeout_s = atoi(v);
	else
		return -1;
	return 0;
}

int main(int argc, char **argv)
{
	static struct opts opts = {
		.mr_len = 65536, .nrecv = 4, .recv_len = 256,
		.ird = 2, .ord = 2, .timeout_s = 30,
	};
	int i;

	if (argc < 4 || (strcmp(argv[1], "server") &&
			 strcmp(argv[1], "client"))) {
		fprintf(stderr, "usage: peer_target server|client ADDR PORT [options]\n");
		return 2;
	}
	for (i = 4; i < argc; i += 2) {
		if (i + 1 >= argc || set_opt(&opts, argv[i], argv[i + 1])) {
			fprintf(stderr, "peer_target: bad option %s\n",
				argv[i]);
			return 2;
		}
	}
	if (!opts.mr_len || !opts.recv_len || opts.nrecv < 0) {
		fprintf(stderr, "peer_target: bad sizes\n");
		return 2;
	}
	o = &opts;
	setvbuf(stdout, NULL, _IOLBF, 0);
	clock_gettime(CLOCK_MONOTONIC, &t_end);
	t_end.tv_sec += opts.timeout_s;
	return run(!strcmp(argv[1], "server"), argv[2], argv[3]);
}
