// SPDX-License-Identifier: GPL-2.0
/*
 * tcp_pp: the TCP reference of siw2's benchmark (tools/testing/bench/run).
 *
 *   tcp_pp server -p PORT [-B ADDR] [-t SECONDS]
 *	serves one session, then exits
 *   tcp_pp pingpong -c ADDR -p PORT -s SIZE [-q REQ] [-n ITERS] [-w]
 *		    [-t SECONDS]
 *	ITERS round trips: the client sends REQ octets (default SIZE), the
 *	server answers with SIZE octets; TCP_NODELAY on both sides. Both
 *	sides poll their socket (non-blocking reads in a loop), as perftest
 *	polls its completion queue, unless the client asks for blocking reads
 *	(-w; the server does as the client says). Prints the round trip's and
 *	half of its typical (median), 99th percentile, minimum and average,
 *	in microseconds.
 *   tcp_pp conns -c ADDR -p PORT -N COUNT [-t SECONDS]
 *	opens COUNT connections that the server accepts and keeps, and prints
 *	the time that took and what the guest's memory grew by per connection
 *	(between a tenth of COUNT and COUNT, so fixed costs do not count).
 *
 * Output: one line "RESULT key=value ..."; errors on stderr, exit 1.
 * Every wait is bounded by -t (default 60 s): the process ends itself.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>

#include "meminfo.h"

#define MAGIC 0x73697732u /* "siw2" */
#define MODE_PINGPONG 1
#define MODE_CONNS 2

struct hello {
	uint32_t magic;
	uint32_t mode;
	uint32_t req;	/* pingpong: octets the client sends */
	uint32_t resp;	/* pingpong: octets the server answers with */
	uint32_t count;	/* conns: connections to accept */
	uint32_t block;	/* pingpong: blocking reads instead of polling */
};

static const char *prog = "tcp_pp";
static int poll_reads;	/* read with MSG_DONTWAIT in a loop */

static void die(const char *what)
{
	fprintf(stderr, "%s: %s: %s\n", prog, what, strerror(errno));
	exit(1);
}

static void fail(const char *what)
{
	fprintf(stderr, "%s: %s\n", prog, what);
	exit(1);
}

static void on_alarm(int sig)
{
	static const char msg[] = "tcp_pp: time limit reached\n";

	(void)sig;
	if (write(2, msg, sizeof(msg) - 1) < 0)
		_exit(2);
	_exit(2);
}

static double now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

static void full_write(int fd, const void *buf, size_t len)
{
	const char *p = buf;

	while (len) {
		ssize_t n = write(fd, p, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			die("write");
		p += n;
		len -= n;
	}
}

/* 0 at a clean end of stream before the first octet, 1 when done. */
static int full_read(int fd, void *buf, size_t len)
{
	char *p = buf;
	size_t got = 0;

	while (got < len) {
		ssize_t n = recv(fd, p + got, len - got,
				 poll_reads ? MSG_DONTWAIT : 0);

		if (n < 0 && (errno == EINTR ||
			      (poll_reads && errno == EAGAIN)))
			continue;
		if (n < 0)
			die("read");
		if (n == 0) {
			if (got == 0)
				return 0;
			fail("connection closed mid-message");
		}
		got += n;
	}
	return 1;
}

static void nodelay(int fd)
{
	int one = 1;

	if (setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one)))
		die("TCP_NODELAY");
}

static void resolve(const char *host, const char *port, int passive,
		    struct sockaddr_storage *ss, socklen_t *len)
{
	struct addrinfo hints = { .ai_socktype = SOCK_STREAM }, *ai;
	int rc;

	hints.ai_flags = AI_NUMERICHOST | AI_NUMERICSERV |
			 (passive ? AI_PASSIVE : 0);
	rc = getaddrinfo(host, port, &hints, &ai);
	if (rc) {
		fprintf(stderr, "%s: %s: %s\n", prog, host ? host : "*",
			gai_strerror(rc));
		exit(1);
	}
	memcpy(ss, ai->ai_addr, ai->ai_addrlen);
	*len = ai->ai_addrlen;
	freeaddrinfo(ai);
}

static int dial(const struct sockaddr_storage *ss, socklen_t len)
{
	int fd = socket(ss->ss_family, SOCK_STREAM, 0);

	if (fd < 0)
		die("socket");
	if (connect(fd, (const struct sockaddr *)ss, len))
		die("connect");
	nodelay(fd);
	return fd;
}

static void serve_pingpong(int fd, const struct hello *h)
{
	char *req = malloc(h->req ? h->req : 1);
	char *resp = calloc(1, h->resp ? h->resp : 1);

	if (!req || !resp)
		fail("out of memory");
	poll_reads = !h->block;
	while (full_read(fd, req, h->req))
		full_write(fd, resp, h->resp);
	free(req);
	free(resp);
}

/*
 * The control connection carries u32 targets: accept until that many
 * connections are held, then echo the target. End of stream ends the
 * session (every held connection is closed).
 */
static void serve_conns(int lfd, int ctl, const struct hello *h)
{
	int *held = calloc(h->count ? h->count : 1, sizeof(int));
	uint32_t target, n = 0, i;

	if (!held)
		fail("out of memory");
	while (full_read(ctl, &target, sizeof(target))) {
		if (target > h->count)
			fail("target beyond the announced count");
		while (n < target) {
			int fd = accept(lfd, NULL, NULL);

			if (fd < 0 && errno == EINTR)
				continue;
			if (fd < 0)
				die("accept");
			held[n++] = fd;
		}
		full_write(ctl, &target, sizeof(target));
	}
	for (i = 0; i < n; i++)
		close(held[i]);
	free(held);
}

static int do_server(const char *bind_addr, const char *port)
{
	struct sockaddr_storage ss;
	socklen_t len;
	struct hello h;
	int lfd, fd, one = 1;

	resolve(bind_addr, port, 1, &ss, &len);
	lfd = socket(ss.ss_family, SOCK_STREAM, 0);
	if (lfd < 0)
		die("socket");
	setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(lfd, (struct sockaddr *)&ss, len))
		die("bind");
	if (listen(lfd, 4096))
		die("listen");
	fd = accept(lfd, NULL, NULL);
	if (fd < 0)
		die("accept");
	nodelay(fd);
	if (!full_read(fd, &h, sizeof(h)) || h.magic != MAGIC)
		fail("bad hello");
	if (h.mode == MODE_PINGPONG)
		serve_pingpong(fd, &h);
	else if (h.mode == MODE_CONNS)
		serve_conns(lfd, fd, &h);
	else
		fail("unknown mode");
	close(fd);
	close(lfd);
	return 0;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static int do_pingpong(const struct sockaddr_storage *ss, socklen_t len,
		       unsigned int size, unsigned int req, unsigned int iters,
		       int block)
{
	struct hello h = { MAGIC, MODE_PINGPONG, req, size, 0, block };
	unsigned int warm = iters / 10 + 10, i;
	double *rtt, sum = 0, t0, t1;
	char *out, *in;
	int fd;

	out = calloc(1, req ? req : 1);
	in = malloc(size ? size : 1);
	rtt = calloc(iters, sizeof(*rtt));
	if (!out || !in || !rtt)
		fail("out of memory");
	fd = dial(ss, len);
	full_write(fd, &h, sizeof(h));
	poll_reads = !block;
	for (i = 0; i < warm + iters; i++) {
		t0 = now_us();
		full_write(fd, out, req);
		if (!full_read(fd, in, size))
			fail("server closed");
		t1 = now_us();
		if (i >= warm) {
			rtt[i - warm] = t1 - t0;
			sum += t1 - t0;
		}
	}
	close(fd);
	qsort(rtt, iters, sizeof(*rtt), cmp_double);
	{
		double typ = rtt[iters / 2];
		double p99 = rtt[(iters * 99 + 99) / 100 - 1];

		printf("RESULT size=%u req=%u iters=%u rtt_min_us=%.2f rtt_typical_us=%.2f rtt_p99_us=%.2f rtt_avg_us=%.2f half_typical_us=%.2f half_p99_us=%.2f\n",
		       size, req, iters, rtt[0], typ, p99, sum / iters,
		       typ / 2, p99 / 2);
	}
	free(out);
	free(in);
	free(rtt);
	return 0;
}

/* Asks the server to hold `target` connections and waits until it does. */
static void sync_held(int ctl, uint32_t target)
{
	uint32_t echo;

	full_write(ctl, &target, sizeof(target));
	if (!full_read(ctl, &echo, sizeof(echo)) || echo != target)
		fail("server lost count");
}

static int do_conns(const struct sockaddr_storage *ss, socklen_t len,
		    unsigned int count)
{
	struct hello h = { MAGIC, MODE_CONNS, 0, 0, count, 0 };
	unsigned int first = count / 10, i;
	struct meminfo m0 = { 0 }, m1;
	double t0, t_first = 0, t1;
	int ctl, *fds;

	fds = calloc(count, sizeof(*fds));
	if (!fds || count < 10)
		fail("COUNT must be at least 10");
	ctl = dial(ss, len);
	full_write(ctl, &h, sizeof(h));
	t0 = now_us();
	for (i = 0; i < count; i++) {
		fds[i] = dial(ss, len);
		/* Batches keep the accept queue short. */
		if ((i + 1) % 64 == 0 || i + 1 == count || i + 1 == first)
			sync_held(ctl, i + 1);
		if (i + 1 == first) {
			t_first = now_us();
			usleep(500000);
			meminfo_read(&m0);
			t0 += now_us() - t_first;
		}
	}
	t1 = now_us();
	usleep(500000);
	meminfo_read(&m1);
	printf("RESULT conns=%u established=%u errors=0 connect_s=%.3f per_conn_ms=%.3f ",
	       count, count, (t1 - t0) / 1e6, (t1 - t0) / 1e3 / count);
	meminfo_print_delta(&m0, &m1, count - first);
	printf("\n");
	for (i = 0; i < count; i++)
		close(fds[i]);
	close(ctl);
	free(fds);
	return 0;
}

static void usage(void)
{
	fprintf(stderr,
		"usage: tcp_pp server -p PORT [-B ADDR] [-t S]\n"
		"       tcp_pp pingpong -c ADDR -p PORT -s SIZE [-q REQ] [-n ITERS] [-w] [-t S]\n"
		"       tcp_pp conns -c ADDR -p PORT -N COUNT [-t S]\n");
	exit(2);
}

int main(int argc, char **argv)
{
	const char *mode, *addr = NULL, *port = NULL;
	unsigned int size = 64, req = 0, iters = 10000, count = 1000;
	unsigned int limit = 60;
	int block = 0;
	struct sockaddr_storage ss;
	socklen_t len;
	int opt;

	if (argc < 2)
		usage();
	mode = argv[1];
	optind = 2;
	while ((opt = getopt(argc, argv, "B:c:p:s:q:n:N:t:w")) != -1) {
		switch (opt) {
		case 'B':
		case 'c':
			addr = optarg;
			break;
		case 'p':
			port = optarg;
			break;
		case 's':
			size = strtoul(optarg, NULL, 0);
			break;
		case 'q':
			req = strtoul(optarg, NULL, 0);
			break;
		case 'n':
			iters = strtoul(optarg, NULL, 0);
			break;
		case 'N':
			count = strtoul(optarg, NULL, 0);
			break;
		case 't':
			limit = strtoul(optarg, NULL, 0);
			break;
		case 'w':
			block = 1;
			break;
		default:
			usage();
		}
	}
	if (!port || optind != argc)
		usage();
	signal(SIGALRM, on_alarm);
	signal(SIGPIPE, SIG_IGN);
	alarm(limit);
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (!strcmp(mode, "server"))
		return do_server(addr, port);
	if (!addr)
		usage();
	resolve(addr, port, 0, &ss, &len);
	if (!strcmp(mode, "pingpong")) {
		if (!iters || !size)
			usage();
		return do_pingpong(&ss, len, size, req ? req : size, iters,
				   block);
	}
	if (!strcmp(mode, "conns"))
		return do_conns(&ss, len, count);
	usage();
	return 2;
}
