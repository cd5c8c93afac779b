// SPDX-License-Identifier: GPL-2.0
/*
 * An RDMA CM client and server for the guest's cm suite. Every event is
 * printed as one line ("EVENT <name> status=N pdata_len=N pdata=<text>
 * ird=N ord=N"), and the suite checks the lines.
 *
 *   cm_test server ADDR PORT [options]   listen on ADDR (any, ::, or an
 *                                        address), answer requests
 *   cm_test client ADDR PORT [options]   connect to ADDR
 *
 * A server answers each request as its Private Data says:
 *   "accept:<text>"  accept with Private Data <text>, wait for the
 *                    disconnect
 *   "reject:<text>"  reject with Private Data <text>
 *   "hold"           do neither; with -t, destroy the listener, then try
 *                    to accept (which must fail)
 * Options:
 *   -n N       server: handle N requests, then exit (default 1)
 *   -6only     server: listen on IPv6 only (RDMA_OPTION_ID_AFONLY)
 *   -t         server: see "hold"
 *   -d TEXT    client: Private Data of the request
 *   -i N -o N  client: IRD (responder resources) and ORD (initiator depth)
 *   -w MS      client: stay connected MS milliseconds (or until the peer
 *              disconnects), then disconnect (QP to ERR, rdma_disconnect);
 *              default 0
 *   -r         client: reuse the QP. Once connected, send one message and
 *              print "client SEND status=N" (or "client SEND TIMEOUT"
 *              after 10 s); then take the QP from RTS through RESET
 *              to INIT, which ends the connection, connect it again with
 *              a new CM id and, if that succeeds, send once more after
 *              0.2 s. The server posts receives on every QP it
 *              accepts.
 *              server: accept every request with the same QP, taken
 *              through RESET to INIT before each but the first, and print
 *              "server ACCEPT qp=N"
 *   -R         client: as -r, but connect again with the QP still in RTS
 *   -T SEC     timeout for each wait (default 30)
 *
 * The QPs are created with ibv_create_qp, not rdma_create_qp, so librdmacm
 * leaves their states to siw2's CM (and does not ask for SQD, which the QP
 * does not implement yet).
 */
#include <errno.h>
#include <netdb.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <rdma/rdma_cma.h>

static int timeout_s = 30;

struct conn {
	struct rdma_cm_id *id;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_qp *qp;
	struct ibv_mr *mr;
	char buf[64];
};

static void print_event(const char *who, struct rdma_cm_event *ev)
{
	const struct rdma_conn_param *c = &ev->param.conn;
	int i;

	printf("%s EVENT %s status=%d", who, rdma_event_str(ev->event),
	       ev->status);
	if (ev->event == RDMA_CM_EVENT_CONNECT_REQUEST ||
	    ev->event == RDMA_CM_EVENT_ESTABLISHED ||
	    ev->event == RDMA_CM_EVENT_REJECTED) {
		printf(" pdata_len=%u pdata=", c->private_data_len);
		for (i = 0; i < c->private_data_len; i++) {
			char ch = ((const char *)c->private_data)[i];

			putchar(ch >= 0x21 && ch < 0x7f ? ch : '.');
		}
		printf(" ird=%u ord=%u", c->responder_resources,
		       c->initiator_depth);
	}
	putchar('\n');
	fflush(stdout);
}

/* The next event on @ch, or NULL after the timeout. */
static struct rdma_cm_event *next_event(struct rdma_event_channel *ch)
{
	struct pollfd pfd = { .fd = ch->fd, .events = POLLIN };
	struct rdma_cm_event *ev;

	if (poll(&pfd, 1, timeout_s * 1000) <= 0) {
		printf("TIMEOUT waiting for an event\n");
		fflush(stdout);
		return NULL;
	}
	if (rdma_get_cm_event(ch, &ev)) {
		printf("ERROR rdma_get_cm_event: %s\n", strerror(errno));
		return NULL;
	}
	return ev;
}

/* Whether an event arrives within @ms milliseconds. */
static int wait_event(struct rdma_event_channel *ch, int ms)
{
	struct pollfd pfd = { .fd = ch->fd, .events = POLLIN };

	return poll(&pfd, 1, ms) > 0;
}

static int make_qp(struct conn *c)
{
	struct ibv_qp_init_attr attr = {
		.qp_type = IBV_QPT_RC,
		.cap = {
			.max_send_wr = 4,
			.max_recv_wr = 4,
			.max_send_sge = 1,
			.max_recv_sge = 1,
		},
	};

	c->pd = ibv_alloc_pd(c->id->verbs);
	if (!c->pd)
		return -1;
	c->cq = ibv_create_cq(c->id->verbs, 8, NULL, NULL, 0);
	if (!c->cq)
		return -1;
	attr.send_cq = c->cq;
	attr.recv_cq = c->cq;
	c->qp = ibv_create_qp(c->pd, &attr);
	if (!c->qp)
		return -1;
	c->mr = ibv_reg_mr(c->pd, c->buf, sizeof(c->buf),
			   IBV_ACCESS_LOCAL_WRITE);
	return c->mr ? 0 : -1;
}

/* Receives for the messages of a -r client. */
static int post_recvs(struct conn *c)
{
	struct ibv_sge sge = { .addr = (uintptr_t)c->buf,
			       .length = sizeof(c->buf), .lkey = c->mr->lkey };
	struct ibv_recv_wr wr = { .sg_list = &sge, .num_sge = 1 }, *bad;
	int i;

	for (i = 0; i < 4; i++)
		if (ibv_post_recv(c->qp, &wr, &bad))
			return -1;
	return 0;
}

/* One signaled Send of 8 bytes and its completion, printed. */
static void send_one(struct conn *c)
{
	struct ibv_sge sge = { .addr = (uintptr_t)c->buf, .length = 8,
			       .lkey = c->mr->lkey };
	struct ibv_send_wr wr = { .sg_list = &sge, .num_sge = 1,
				  .opcode = IBV_WR_SEND,
				  .send_flags = IBV_SEND_SIGNALED }, *bad;
	struct ibv_wc wc;
	int i, n = 0;

	if (ibv_post_send(c->qp, &wr, &bad)) {
		printf("client SEND post failed: %s\n", strerror(errno));
		return;
	}
	for (i = 0; i < 10000 && !n; i++) {
		n = ibv_poll_cq(c->cq, 1, &wc);
		if (!n)
			poll(NULL, 0, 1);
	}
	if (n == 1)
		printf("client SEND status=%d\n", wc.status);
	else
		printf("client SEND TIMEOUT\n");
}

/* -r: through RESET back to INIT, ready for a new connection. */
static int reset_qp(struct conn *c)
{
	struct ibv_qp_attr attr = { .qp_state = IBV_QPS_RESET };

	if (ibv_modify_qp(c->qp, &attr, IBV_QP_STATE))
		return -1;
	attr.qp_state = IBV_QPS_INIT;
	attr.port_num = 1;
	attr.qp_access_flags = IBV_ACCESS_LOCAL_WRITE;
	return ibv_modify_qp(c->qp, &attr, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
			     IBV_QP_PORT | IBV_QP_ACCESS_FLAGS);
}

static void free_conn(struct conn *c)
{
	if (c->mr)
		ibv_dereg_mr(c->mr);
	if (c->qp)
		ibv_destroy_qp(c->qp);
	if (c->cq)
		ibv_destroy_cq(c->cq);
	if (c->pd)
		ibv_dealloc_pd(c->pd);
	if (c->id)
		rdma_destroy_id(c->id);
	memset(c, 0, sizeof(*c));
}

/* QP to ERR and rdma_disconnect: the QP's end of the stream, then the CM. */
static void disconnect(struct conn *c)
{
	struct ibv_qp_attr attr = { .qp_state = IBV_QPS_ERR };

	if (ibv_modify_qp(c->qp, &attr, IBV_QP_STATE))
		printf("ERROR modify_qp(ERR): %s\n", strerror(errno));
	if (rdma_disconnect(c->id))
		printf("ERROR rdma_disconnect: %s\n", strerror(errno));
}

static int get_addr(const char *host, const char *port, struct sockaddr *sa)
{
	struct addrinfo hints = {
		.ai_flags = AI_NUMERICHOST | AI_PASSIVE,
		.ai_socktype = SOCK_STREAM,
	}, *res;
	int ret;

	if (!strcmp(host, "any"))
		host = "0.0.0.0";
	ret = getaddrinfo(host, port, &hints, &res);
	if (ret) {
		printf("ERROR address %s: %s\n", host, gai_strerror(ret));
		return -1;
	}
	memcpy(sa, res->ai_addr, res->ai_addrlen);
	freeaddrinfo(res);
	return 0;
}

/* An event of @want on @ch, printed: 0; 1 for another, -1 for none. */
static int expect_event(struct rdma_event_channel *ch, const char *who,
			int want)
{
	struct rdma_cm_event *ev = next_event(ch);
	int type;

	if (!ev)
		return -1;
	print_event(who, ev);
	type = ev->event;
	rdma_ack_cm_event(ev);
	return type == want ? 0 : 1;
}

/*
 * A new CM id on @ch connected to @dst with @c's QP, created here unless
 * it exists. Return: 0 once connected, 1 if the CM refused or ended it,
 * -1 on a local error.
 */
static int client_connect(struct rdma_event_channel *ch, struct conn *c,
			  struct sockaddr *dst, struct rdma_conn_param *param)
{
	if (rdma_create_id(ch, &c->id, NULL, RDMA_PS_TCP)) {
		printf("ERROR create id: %s\n", strerror(errno));
		return -1;
	}
	if (rdma_resolve_addr(c->id, NULL, dst, 5000)) {
		printf("ERROR rdma_resolve_addr: %s\n", strerror(errno));
		return -1;
	}
	if (expect_event(ch, "client", RDMA_CM_EVENT_ADDR_RESOLVED))
		return -1;
	if (rdma_resolve_route(c->id, 5000)) {
		printf("ERROR rdma_resolve_route: %s\n", strerror(errno));
		return -1;
	}
	if (expect_event(ch, "client", RDMA_CM_EVENT_ROUTE_RESOLVED))
		return -1;
	if (!c->qp && make_qp(c)) {
		printf("ERROR create qp: %s\n", strerror(errno));
		return -1;
	}
	param->qp_num = c->qp->qp_num;
	if (rdma_connect(c->id, param)) {
		printf("ERROR rdma_connect: %s\n", strerror(errno));
		return -1;
	}
	return expect_event(ch, "client", RDMA_CM_EVENT_ESTABLISHED);
}

static int run_client(const char *host, const char *port, const char *pdata,
		      int ird, int ord, int wait_ms, int reuse, int keep_rts)
{
	struct rdma_conn_param param = {
		.responder_resources = ird,
		.initiator_depth = ord,
		.private_data = pdata,
		.private_data_len = pdata ? strlen(pdata) : 0,
	};
	struct sockaddr_storage dst;
	struct rdma_event_channel *ch;
	struct rdma_cm_id *first = NULL;
	struct rdma_cm_event *ev;
	struct conn c = {};
	int ret = 1;

	if (get_addr(host, port, (struct sockaddr *)&dst))
		return 1;
	ch = rdma_create_event_channel();
	if (!ch) {
		printf("ERROR create event channel: %s\n", strerror(errno));
		return 1;
	}
	ret = client_connect(ch, &c, (struct sockaddr *)&dst, &param);
	if (ret) {
		/* Refused or ended by the CM: what the suite checks. */
		ret = ret < 0;
		goto out;
	}
	if (reuse || keep_rts) {
		send_one(&c);
		first = c.id;
		c.id = NULL;
		ret = 1;
		/*
		 * RESET ends the connection. The CM id goes once the CM has
		 * let go of the QP (DISCONNECTED): before, its end would take
		 * the QP to ERR. With -R the first connection stays up.
		 */
		if (reuse) {
			if (reset_qp(&c)) {
				printf("ERROR QP through RESET to INIT: %s\n",
				       strerror(errno));
				goto out;
			}
			if (expect_event(ch, "client",
					 RDMA_CM_EVENT_DISCONNECTED))
				goto out;
			rdma_destroy_id(first);
			first = NULL;
		}
		ret = client_connect(ch, &c, (struct sockaddr *)&dst, &param);
		if (ret) {
			ret = 1;
			goto out;
		}
		/* Past the send engine's start: the post must reach it. */
		poll(NULL, 0, 200);
		send_one(&c);
	}
	/* Connected for wait_ms, unless the peer ends it first. */
	if (wait_event(ch, wait_ms)) {
		ev = next_event(ch);
		if (ev) {
			print_event("client", ev);
			rdma_ack_cm_event(ev);
		}
		goto out;
	}
	disconnect(&c);
	ev = next_event(ch);
	if (!ev) {
		ret = 1;
		goto out;
	}
	print_event("client", ev);
	rdma_ack_cm_event(ev);
out:
	if (first)
		rdma_destroy_id(first);
	free_conn(&c);
	rdma_destroy_event_channel(ch);
	printf("client DONE\n");
	return ret;
}

/*
 * The server's connection ended: with @reuse its QP stays for the next,
 * else everything goes.
 */
static void server_end(struct conn *c, int reuse)
{
	if (!reuse || !c->qp) {
		free_conn(c);
		return;
	}
	rdma_destroy_id(c->id);
	c->id = NULL;
}

/* The QP for a request to accept: new, or with @reuse the last one. */
static int server_qp(struct conn *c, int reuse)
{
	if (reuse && c->qp) {
		if (reset_qp(c))
			return -1;
	} else if (make_qp(c)) {
		return -1;
	}
	if (post_recvs(c))
		return -1;
	if (reuse)
		printf("server ACCEPT qp=%u\n", c->qp->qp_num);
	return 0;
}

static int run_server(const char *host, const char *port, int count,
		      int v6only, int teardown, int reuse)
{
	struct sockaddr_storage src;
	struct rdma_event_channel *ch;
	struct rdma_cm_id *listen_id;
	struct rdma_cm_event *ev;
	struct conn c = {};
	int handled = 0, ret = 1, one = 1;

	if (get_addr(host, port, (struct sockaddr *)&src))
		return 1;
	ch = rdma_create_event_channel();
	if (!ch || rdma_create_id(ch, &listen_id, NULL, RDMA_PS_TCP)) {
		printf("ERROR create id: %s\n", strerror(errno));
		return 1;
	}
	if (v6only && rdma_set_option(listen_id, RDMA_OPTION_ID,
				      RDMA_OPTION_ID_AFONLY, &one,
				      sizeof(one))) {
		printf("ERROR afonly: %s\n", strerror(errno));
		return 1;
	}
	if (rdma_bind_addr(listen_id, (struct sockaddr *)&src) ||
	    rdma_listen(listen_id, 8)) {
		printf("ERROR listen: %s\n", strerror(errno));
		return 1;
	}
	printf("server LISTENING\n");
	fflush(stdout);

	while (handled < count || c.id) {
		struct rdma_conn_param param = {};
		char pd[64] = "";
		int type;

		ev = next_event(ch);
		if (!ev)
			goto out;
		print_event("server", ev);
		type = ev->event;
		if (type != RDMA_CM_EVENT_CONNECT_REQUEST) {
			rdma_ack_cm_event(ev);
			if (c.id && (type == RDMA_CM_EVENT_DISCONNECTED ||
				     type == RDMA_CM_EVENT_CONNECT_ERROR))
				server_end(&c, reuse);
			continue;
		}
		handled++;
		/* A reusing client's first connection may not be over yet. */
		if (c.id)
			server_end(&c, reuse);
		if (ev->param.conn.private_data_len &&
		    ev->param.conn.private_data_len < sizeof(pd))
			memcpy(pd, ev->param.conn.private_data,
			       ev->param.conn.private_data_len);
		c.id = ev->id;
		rdma_ack_cm_event(ev);

		if (!strncmp(pd, "reject:", 7)) {
			if (rdma_reject(c.id, pd + 7, strlen(pd + 7)))
				printf("ERROR rdma_reject: %s\n",
				       strerror(errno));
			free_conn(&c);
		} else if (!strncmp(pd, "accept:", 7)) {
			if (server_qp(&c, reuse)) {
				printf("ERROR create qp: %s\n",
				       strerror(errno));
				goto out;
			}
			param.qp_num = c.qp->qp_num;
			param.private_data = pd + 7;
			param.private_data_len = strlen(pd + 7);
			param.responder_resources = 4;
			param.initiator_depth = 4;
			if (rdma_accept(c.id, &param)) {
				printf("ERROR rdma_accept: %s\n",
				       strerror(errno));
				free_conn(&c);
			}
		} else if (teardown) {
			/* "hold": the listener goes with the request pending. */
			rdma_destroy_id(listen_id);
			listen_id = NULL;
			if (make_qp(&c))
				goto out;
			param.qp_num = c.qp->qp_num;
			param.responder_resources = 4;
			param.initiator_depth = 4;
			if (rdma_accept(c.id, &param))
				printf("server ACCEPT_AFTER_TEARDOWN failed: %s\n",
				       strerror(errno));
			else
				printf("server ACCEPT_AFTER_TEARDOWN succeeded\n");
			free_conn(&c);
			ret = 0;
			goto out;
		}
		/* "hold" without -t: the request stays unanswered. */
	}
	ret = 0;
out:
	free_conn(&c);
	if (listen_id)
		rdma_destroy_id(listen_id);
	rdma_destroy_event_channel(ch);
	printf("server DONE\n");
	return ret;
}

int main(int argc, char **argv)
{
	const char *pdata = NULL;
	int ird = 8, ord = 8, wait_ms = 0, count = 1, v6only = 0;
	int teardown = 0, reuse = 0, keep_rts = 0, i;

	if (argc < 4) {
		fprintf(stderr, "usage: cm_test server|client ADDR PORT [options]\n");
		return 2;
	}
	for (i = 4; i < argc; i++) {
		const char *next = i + 1 < argc ? argv[i + 1] : "0";

		if (!strcmp(argv[i], "-d"))
			pdata = argv[++i];
		else if (!strcmp(argv[i], "-i"))
			ird = atoi(next), i++;
		else if (!strcmp(argv[i], "-o"))
			ord = atoi(next), i++;
		else if (!strcmp(argv[i], "-w"))
			wait_ms = atoi(next), i++;
		else if (!strcmp(argv[i], "-n"))
			count = atoi(next), i++;
		else if (!strcmp(argv[i], "-T"))
			timeout_s = atoi(next), i++;
		else if (!strcmp(argv[i], "-6only"))
			v6only = 1;
		else if (!strcmp(argv[i], "-t"))
			teardown = 1;
		else if (!strcmp(argv[i], "-r"))
			reuse = 1;
		else if (!strcmp(argv[i], "-R"))
			keep_rts = 1;
		else {
			fprintf(stderr, "cm_test: unknown option %s\n", argv[i]);
			return 2;
		}
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (!strcmp(argv[1], "client"))
		return run_client(argv[2], argv[3], pdata, ird, ord, wait_ms,
				  reuse, keep_rts);
	if (!strcmp(argv[1], "server"))
		return run_server(argv[2], argv[3], count, v6only, teardown,
				  reuse);
	fprintf(stderr, "cm_test: server or client\n");
	return 2;
}
