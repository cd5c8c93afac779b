// SPDX-License-Identifier: GPL-2.0
/*
 * Many threads post to one QP while its send engine starts and stops, for
 * the sqpoll suite: every work request must complete, whether its post
 * rang a doorbell or found the engine at work (siw2-abi.h, "SQ doorbell").
 *
 *   post_race server ADDR PORT        accept one connection, offer a
 *                                     buffer for RDMA Writes, wait for the
 *                                     disconnect
 *   post_race client ADDR PORT T N    T threads post N signaled 64 B RDMA
 *                                     Writes each; prints
 *                                     "posted P completed C"
 *
 * Exit 0 if every Write completed successfully; 1 on a bad completion or
 * if nothing completed for 10 s (a post that neither rang nor was seen).
 */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <rdma/rdma_cma.h>
#include <rdma/rdma_verbs.h>

#define SQ_DEPTH 256
#define MAX_THREADS 16
#define MSG 64

struct offer {
	uint64_t addr;
	uint32_t rkey;
};

static struct rdma_cm_id *id;
static struct ibv_mr *mr;
static char buf[MAX_THREADS * MSG];
static unsigned int nthreads, per_thread, cap;
static atomic_uint outstanding[MAX_THREADS];
static atomic_uint posted;
static struct offer peer;

/*
 * A listener (@srv set) hands out requests with a QP of @srv's
 * attributes (librdmacm creates it); a client gets its QP at once.
 */
static struct rdma_cm_id *endpoint(const char *addr, const char *port,
				   struct ibv_qp_init_attr *srv)
{
	struct ibv_qp_init_attr qa = {
		.cap = { .max_send_wr = SQ_DEPTH, .max_recv_wr = 4,
			 .max_send_sge = 1, .max_recv_sge = 1 },
		.sq_sig_all = 0,
	};
	int passive = !!srv;
	struct rdma_addrinfo hints = { .ai_port_space = RDMA_PS_TCP };
	struct rdma_addrinfo *res;
	struct rdma_cm_id *e;

	if (passive)
		hints.ai_flags = RAI_PASSIVE;
	if (rdma_getaddrinfo(addr, port, &hints, &res)) {
		perror("rdma_getaddrinfo");
		exit(1);
	}
	if (rdma_create_ep(&e, res, NULL, passive ? srv : &qa)) {
		perror("rdma_create_ep");
		exit(1);
	}
	rdma_freeaddrinfo(res);
	return e;
}

static int run_server(const char *addr, const char *port)
{
	struct ibv_qp_init_attr qa = {
		.cap = { .max_send_wr = 4, .max_recv_wr = 4,
			 .max_send_sge = 1, .max_recv_sge = 1 },
		.sq_sig_all = 1,
	};
	struct rdma_cm_id *l = endpoint(addr, port, &qa), *c;
	struct rdma_cm_event *ev;
	struct offer o;
	struct ibv_wc wc;

	if (rdma_listen(l, 1)) {
		perror("server: rdma_listen");
		return 1;
	}
	if (rdma_get_request(l, &c)) {
		perror("server: rdma_get_request");
		return 1;
	}
	if (!c->qp) {
		fprintf(stderr, "server: the request came without a QP\n");
		return 1;
	}
	mr = rdma_reg_write(c, buf, sizeof(buf));
	if (!mr || rdma_accept(c, NULL)) {
		perror("server: accept");
		return 1;
	}
	o.addr = (uintptr_t)buf;
	o.rkey = mr->rkey;
	if (rdma_post_send(c, NULL, &o, sizeof(o), NULL, IBV_SEND_INLINE) ||
	    rdma_get_send_comp(c, &wc) <= 0 || wc.status) {
		fprintf(stderr, "server: offer not sent\n");
		return 1;
	}
	/* Wait for the client's disconnect on the id's own channel. */
	if (rdma_migrate_id(c, rdma_create_event_channel()) == 0 &&
	    rdma_get_cm_event(c->channel, &ev) == 0)
		rdma_ack_cm_event(ev);
	printf("server done\n");
	return 0;
}

static void *poster(void *arg)
{
	unsigned int t = (uintptr_t)arg, n;
	unsigned int seed = t * 7919 + 1;
	struct ibv_sge sge = {
		.addr = (uintptr_t)&buf[t * MSG], .length = MSG,
		.lkey = mr->lkey,
	};
	struct ibv_send_wr wr = {
		.wr_id = t, .sg_list = &sge, .num_sge = 1,
		.opcode = IBV_WR_RDMA_WRITE, .send_flags = IBV_SEND_SIGNALED,
		.wr.rdma = { .remote_addr = peer.addr + t * MSG,
			     .rkey = peer.rkey },
	}, *bad;

	for (n = 0; n < per_thread; ) {
		if (atomic_load(&outstanding[t]) >= cap) {
			sched_yield();
			continue;
		}
		atomic_fetch_add(&outstanding[t], 1);
		if (ibv_post_send(id->qp, &wr, &bad)) {
			fprintf(stderr, "thread %u: post failed\n", t);
			exit(1);
		}
		atomic_fetch_add(&posted, 1);
		n++;
		/* Now and then the engine finds the queue empty and stops. */
		if (rand_r(&seed) % 8 == 0)
			usleep(1);
	}
	return NULL;
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static int run_client(const char *addr, const char *port)
{
	pthread_t th[MAX_THREADS];
	unsigned long done = 0, total = (unsigned long)nthreads * per_thread;
	struct offer o;
	struct ibv_wc wc[32];
	double last;
	unsigned int t;
	int i, n;

	id = endpoint(addr, port, NULL);
	mr = rdma_reg_msgs(id, buf, sizeof(buf));
	if (!mr || rdma_post_recv(id, NULL, &o, sizeof(o),
				  rdma_reg_msgs(id, &o, sizeof(o))) ||
	    rdma_connect(id, NULL)) {
		perror("client: connect");
		return 1;
	}
	if (rdma_get_recv_comp(id, wc) <= 0 || wc[0].status) {
		fprintf(stderr, "client: no offer\n");
		return 1;
	}
	peer = o;
	for (t = 0; t < nthreads; t++)
		pthread_create(&th[t], NULL, poster, (void *)(uintptr_t)t);
	last = now();
	while (done < total) {
		n = ibv_poll_cq(id->send_cq, 32, wc);
		if (n < 0) {
			fprintf(stderr, "client: poll failed\n");
			return 1;
		}
		for (i = 0; i < n; i++) {
			if (wc[i].status != IBV_WC_SUCCESS) {
				fprintf(stderr, "client: wr of thread %lu: %s\n",
					(unsigned long)wc[i].wr_id,
					ibv_wc_status_str(wc[i].status));
				return 1;
			}
			atomic_fetch_sub(&outstanding[wc[i].wr_id], 1);
		}
		done += n;
		if (n) {
			last = now();
		} else if (now() - last > 10) {
			printf("posted %u completed %lu\n",
			       atomic_load(&posted), done);
			fprintf(stderr, "client: nothing completed for 10 s\n");
			return 1;
		}
	}
	for (t = 0; t < nthreads; t++)
		pthread_join(th[t], NULL);
	printf("posted %u completed %lu\n", atomic_load(&posted), done);
	rdma_disconnect(id);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc == 4 && !strcmp(argv[1], "server"))
		return run_server(argv[2], argv[3]);
	if (argc == 6 && !strcmp(argv[1], "client")) {
		nthreads = strtoul(argv[4], NULL, 0);
		per_thread = strtoul(argv[5], NULL, 0);
		if (nthreads < 1 || nthreads > MAX_THREADS || !per_thread) {
			fprintf(stderr, "post_race: 1 to %d threads, N > 0\n",
				MAX_THREADS);
			return 2;
		}
		cap = SQ_DEPTH / nthreads;
		return run_client(argv[2], argv[3]);
	}
	fprintf(stderr, "usage: post_race server ADDR PORT | client ADDR PORT T N\n");
	return 2;
}
