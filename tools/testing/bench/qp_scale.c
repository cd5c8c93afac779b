// SPDX-License-Identifier: GPL-2.0
/*
 * qp_scale: how long an RDMA device takes to connect many RC QPs through
 * the RDMA CM, and how much memory an idle connected QP costs. Part of
 * siw2's benchmark (tools/testing/bench/run).
 *
 *   qp_scale server -b ADDR -p PORT -N COUNT [-d DEPTH] [-t SECONDS]
 *	accepts connections on ADDR:PORT, a QP for each, until COUNT were
 *	disconnected again (or nothing happened for 10 s after the first
 *	disconnect), then exits
 *   qp_scale client -c ADDR -p PORT -N COUNT [-w WINDOW] [-d DEPTH]
 *		     [-t SECONDS]
 *	connects COUNT QPs, WINDOW connections under way at a time (each
 *	one: resolve address, resolve route, create QP, connect), retrying
 *	a failed connection up to twice; stops at a tenth of COUNT to take
 *	the guest's memory (/proc/meminfo), measures again 2 s after the
 *	last one is up, then disconnects all.
 *
 * Every QP has DEPTH (default 64) send and receive entries, one SGE, no
 * inline data, and shares its device's CQ and PD. Prints one line
 * "RESULT conns=N established=N errors=N connect_s=S per_conn_ms=MS
 * mem_kib=... slab_kib=..." (memory per connection, both ends in this
 * guest); progress and errors go to stderr. The process ends itself at the
 * time limit (-t, default 300 s).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <netdb.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <rdma/rdma_cma.h>

#include "meminfo.h"

#define MAX_RETRIES 2

enum conn_state { C_IDLE, C_BUSY, C_UP, C_FAILED, C_DOWN };

struct conn {
	struct rdma_cm_id *id;
	enum conn_state state;
	int tries;
};

/* One PD and CQ per device context; a run sees one or two devices. */
struct devres {
	struct ibv_context *verbs;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
};

static struct devres devs[8];
static unsigned int depth = 64;
static const char *prog = "qp_scale";

static void on_alarm(int sig)
{
	static const char msg[] = "qp_scale: time limit reached\n";

	(void)sig;
	if (write(2, msg, sizeof(msg) - 1) < 0)
		_exit(2);
	_exit(2);
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static struct devres *devres_get(struct ibv_context *verbs)
{
	unsigned int i;

	for (i = 0; i < sizeof(devs) / sizeof(devs[0]); i++) {
		if (devs[i].verbs == verbs)
			return &devs[i];
		if (!devs[i].verbs) {
			devs[i].pd = ibv_alloc_pd(verbs);
			if (!devs[i].pd) {
				perror("qp_scale: ibv_alloc_pd");
				return NULL;
			}
			devs[i].cq = ibv_create_cq(verbs, 1024, NULL, NULL, 0);
			if (!devs[i].cq) {
				perror("qp_scale: ibv_create_cq");
				ibv_dealloc_pd(devs[i].pd);
				return NULL;
			}
			devs[i].verbs = verbs;
			return &devs[i];
		}
	}
	fprintf(stderr, "%s: too many devices\n", prog);
	return NULL;
}

static void devres_free(void)
{
	unsigned int i;

	for (i = 0; i < sizeof(devs) / sizeof(devs[0]) && devs[i].verbs; i++) {
		ibv_destroy_cq(devs[i].cq);
		ibv_dealloc_pd(devs[i].pd);
	}
}

static int make_qp(struct rdma_cm_id *id)
{
	struct ibv_qp_init_attr attr = { 0 };
	struct devres *d = devres_get(id->verbs);

	if (!d)
		return -1;
	attr.send_cq = d->cq;
	attr.recv_cq = d->cq;
	attr.qp_type = IBV_QPT_RC;
	attr.cap.max_send_wr = depth;
	attr.cap.max_recv_wr = depth;
	attr.cap.max_send_sge = 1;
	attr.cap.max_recv_sge = 1;
	if (rdma_create_qp(id, d->pd, &attr)) {
		int err = errno;
		static int shown;

		if (shown++ < 10)
			fprintf(stderr, "%s: rdma_create_qp: %s (errno %d)\n", prog,
				strerror(err), err);
		return -1;
	}
	return 0;
}

static void drop(struct rdma_cm_id *id)
{
	if (id->qp)
		rdma_destroy_qp(id);
	rdma_destroy_id(id);
}

static struct rdma_conn_param conn_param = {
	.responder_resources = 1,
	.initiator_depth = 1,
	.retry_count = 7,
	.rnr_retry_count = 7,
};

/*
 * Waits up to `ms` for an event. Returns 0 with *ev set, 1 on a timeout,
 * -1 on an error.
 */
static int next_event(struct rdma_event_channel *ch, struct rdma_cm_event **ev,
		      int ms)
{
	struct pollfd p = { .fd = ch->fd, .events = POLLIN };
	int rc;

	rc = poll(&p, 1, ms);
	if (rc < 0 && errno == EINTR)
		return 1;
	if (rc < 0) {
		perror("qp_scale: poll");
		return -1;
	}
	if (rc == 0)
		return 1;
	if (rdma_get_cm_event(ch, ev)) {
		perror("qp_scale: rdma_get_cm_event");
		return -1;
	}
	return 0;
}

static int do_server(struct rdma_event_channel *ch, struct addrinfo *ai,
		     unsigned int count)
{
	struct rdma_cm_id *listen_id;
	unsigned int up = 0, down = 0, errors = 0;
	double quiet_since = 0;

	if (rdma_create_id(ch, &listen_id, NULL, RDMA_PS_TCP)) {
		perror("qp_scale: rdma_create_id");
		return 1;
	}
	if (rdma_bind_addr(listen_id, ai->ai_addr)) {
		perror("qp_scale: rdma_bind_addr");
		return 1;
	}
	if (rdma_listen(listen_id, 1024)) {
		perror("qp_scale: rdma_listen");
		return 1;
	}
	fprintf(stderr, "%s: listening\n", prog);
	while (down < count) {
		struct rdma_cm_event *ev;
		struct rdma_cm_id *id;
		enum rdma_cm_event_type type;
		int rc = next_event(ch, &ev, 1000);

		if (rc < 0)
			break;
		if (rc > 0) {
			if (quiet_since && now_s() - quiet_since > 10) {
				fprintf(stderr, "%s: no event for 10 s; %u of %u disconnected\n",
					prog, down, count);
				break;
			}
			continue;
		}
		quiet_since = down ? now_s() : 0;
		id = ev->id;
		type = ev->event;
		switch (type) {
		case RDMA_CM_EVENT_CONNECT_REQUEST:
			if (make_qp(id) || rdma_accept(id, &conn_param)) {
				if (!id->qp)
					fprintf(stderr, "%s: no QP for a request\n", prog);
				else
					perror("qp_scale: rdma_accept");
				errors++;
				rdma_reject(id, NULL, 0);
				rdma_ack_cm_event(ev);
				drop(id);
				continue;
			}
			break;
		case RDMA_CM_EVENT_ESTABLISHED:
			up++;
			break;
		case RDMA_CM_EVENT_DISCONNECTED:
		case RDMA_CM_EVENT_CONNECT_ERROR:
		case RDMA_CM_EVENT_UNREACHABLE:
		case RDMA_CM_EVENT_REJECTED:
			if (type == RDMA_CM_EVENT_DISCONNECTED)
				down++;
			else
				errors++;
			rdma_ack_cm_event(ev);
			drop(id);
			quiet_since = now_s();
			continue;
		default:
			break;
		}
		rdma_ack_cm_event(ev);
	}
	fprintf(stderr, "%s: server: %u established, %u disconnected, %u errors\n",
		prog, up, down, errors);
	rdma_destroy_id(listen_id);
	devres_free();
	return 0;
}

static int start(struct rdma_event_channel *ch, struct conn *c,
		 struct addrinfo *ai)
{
	c->state = C_BUSY;
	c->tries++;
	if (rdma_create_id(ch, &c->id, c, RDMA_PS_TCP)) {
		perror("qp_scale: rdma_create_id");
		c->id = NULL;
		return -1;
	}
	if (rdma_resolve_addr(c->id, NULL, ai->ai_addr, 5000)) {
		perror("qp_scale: rdma_resolve_addr");
		rdma_destroy_id(c->id);
		c->id = NULL;
		return -1;
	}
	return 0;
}

static int do_client(struct rdma_event_channel *ch, struct addrinfo *ai,
		     unsigned int count, unsigned int window)
{
	struct conn *conns = calloc(count, sizeof(*conns));
	unsigned int next = 0, busy = 0, up = 0, errors = 0, dead = 0;
	unsigned int first = count / 10, i, down = 0;
	struct meminfo m0 = { 0 }, m1;
	double t0, paused = 0, t1;
	int measured0 = 0;

	if (!conns)
		return 1;
	t0 = now_s();
	while (up + dead < count) {
		struct rdma_cm_event *ev;
		struct conn *c;
		enum rdma_cm_event_type type;
		int status, rc;

		/* At a tenth of COUNT: let the window drain, then measure. */
		if (!measured0 && next >= first && busy == 0) {
			double p0 = now_s();

			usleep(500000);
			meminfo_read(&m0);
			measured0 = 1;
			paused += now_s() - p0;
			fprintf(stderr, "%s: %u connected after %.1f s\n", prog,
				up, now_s() - t0 - paused);
		}
		/* New connections first, then retries of failed ones. */
		for (i = 0; busy < window && i < count; i++) {
			if (i == next && next < count &&
			    (measured0 || next < first)) {
				next++;
			} else if (i >= next || conns[i].state != C_FAILED ||
				   conns[i].tries > MAX_RETRIES) {
				continue;
			}
			if (start(ch, &conns[i], ai)) {
				errors++;
				conns[i].state = C_FAILED;
				if (conns[i].tries > MAX_RETRIES)
					dead++;
			} else {
				busy++;
			}
		}
		if (!busy)
			continue;
		rc = next_event(ch, &ev, 30000);
		if (rc) {
			fprintf(stderr, "%s: %s after %u of %u connected\n",
				prog, rc > 0 ? "no event for 30 s" : "event error",
				up, count);
			break;
		}
		c = ev->id->context;
		type = ev->event;
		status = ev->status;
		switch (type) {
		case RDMA_CM_EVENT_ADDR_RESOLVED:
			rdma_ack_cm_event(ev);
			if (rdma_resolve_route(c->id, 5000)) {
				perror("qp_scale: rdma_resolve_route");
				goto failed;
			}
			continue;
		case RDMA_CM_EVENT_ROUTE_RESOLVED:
			rdma_ack_cm_event(ev);
			if (make_qp(c->id))
				goto failed;
			if (rdma_connect(c->id, &conn_param)) {
				perror("qp_scale: rdma_connect");
				goto failed;
			}
			continue;
		case RDMA_CM_EVENT_ESTABLISHED:
			rdma_ack_cm_event(ev);
			c->state = C_UP;
			busy--;
			up++;
			continue;
		default:
			rdma_ack_cm_event(ev);
			if (errors < 20)
				fprintf(stderr, "%s: connection %td: %s (%d)\n",
					prog, c - conns, rdma_event_str(type),
					status);
			if (c->state == C_UP) {
				/* A live connection went away. */
				up--;
				busy++;
			}
			goto failed;
		}
failed:
		errors++;
		busy--;
		drop(c->id);
		c->id = NULL;
		c->state = C_FAILED;
		if (c->tries > MAX_RETRIES)
			dead++;
	}
	t1 = now_s();
	sleep(2);
	meminfo_read(&m1);
	printf("RESULT conns=%u established=%u errors=%u connect_s=%.3f per_conn_ms=%.3f ",
	       count, up, errors, t1 - t0 - paused,
	       up ? (t1 - t0 - paused) * 1e3 / up : 0.0);
	if (up == count && measured0)
		meminfo_print_delta(&m0, &m1, count - first);
	else
		printf("mem_kib=nan slab_kib=nan vmalloc_kib=nan anon_kib=nan memfree_kib=nan");
	printf("\n");
	fflush(stdout);

	/* Disconnect every live QP and wait for each to be reported down. */
	for (i = 0; i < count; i++) {
		if (conns[i].state == C_UP && rdma_disconnect(conns[i].id))
			perror("qp_scale: rdma_disconnect");
	}
	while (down < up) {
		struct rdma_cm_event *ev;
		struct conn *c;
		int rc = next_event(ch, &ev, 20000);

		if (rc) {
			fprintf(stderr, "%s: %u of %u disconnects reported\n",
				prog, down, up);
			break;
		}
		c = ev->id->context;
		rdma_ack_cm_event(ev);
		if (c->state == C_UP) {
			c->state = C_DOWN;
			down++;
			drop(c->id);
			c->id = NULL;
		}
	}
	for (i = 0; i < count; i++) {
		if (conns[i].id)
			drop(conns[i].id);
	}
	devres_free();
	free(conns);
	return up == count ? 0 : 1;
}

static void usage(void)
{
	fprintf(stderr,
		"usage: qp_scale server -b ADDR -p PORT -N COUNT [-d DEPTH] [-t S]\n"
		"       qp_scale client -c ADDR -p PORT -N COUNT [-w WINDOW] [-d DEPTH] [-t S]\n");
	exit(2);
}

int main(int argc, char **argv)
{
	const char *mode, *addr = NULL, *port = NULL;
	unsigned int count = 1000, window = 16, limit = 300;
	struct rdma_event_channel *ch;
	struct addrinfo hints = { .ai_socktype = SOCK_STREAM }, *ai;
	int opt, rc;

	if (argc < 2)
		usage();
	mode = argv[1];
	optind = 2;
	while ((opt = getopt(argc, argv, "b:c:p:N:w:d:t:")) != -1) {
		switch (opt) {
		case 'b':
		case 'c':
			addr = optarg;
			break;
		case 'p':
			port = optarg;
			break;
		case 'N':
			count = strtoul(optarg, NULL, 0);
			break;
		case 'w':
			window = strtoul(optarg, NULL, 0);
			break;
		case 'd':
			depth = strtoul(optarg, NULL, 0);
			break;
		case 't':
			limit = strtoul(optarg, NULL, 0);
			break;
		default:
			usage();
		}
	}
	if (!addr || !port || optind != argc || count < 10 || !window ||
	    !depth)
		usage();
	signal(SIGALRM, on_alarm);
	alarm(limit);
	setvbuf(stdout, NULL, _IOLBF, 0);
	hints.ai_flags = AI_NUMERICHOST | AI_NUMERICSERV;
	rc = getaddrinfo(addr, port, &hints, &ai);
	if (rc) {
		fprintf(stderr, "%s: %s: %s\n", prog, addr, gai_strerror(rc));
		return 1;
	}
	ch = rdma_create_event_channel();
	if (!ch) {
		perror("qp_scale: rdma_create_event_channel");
		return 1;
	}
	if (!strcmp(mode, "server"))
		rc = do_server(ch, ai, count);
	else if (!strcmp(mode, "client"))
		rc = do_client(ch, ai, count, window);
	else
		usage();
	rdma_destroy_event_channel(ch);
	freeaddrinfo(ai);
	return rc;
}
