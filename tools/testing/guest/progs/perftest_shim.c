// SPDX-License-Identifier: GPL-2.0
/*
 * An LD_PRELOAD shim for perftest (ib_write_bw -R and friends) in the
 * interop suite, for two habits of perftest that upstream siw exposes.
 *
 * BIND_ADDR=ADDR (the server): rdma_bind_addr() of the IPv4 wildcard
 * address binds to ADDR instead, keeping the port. perftest's server binds
 * to 0.0.0.0, so its listen reaches every RDMA device; upstream siw opens
 * the listening socket of a wildcard listen in the caller's network
 * namespace (bound to its own netdev's ifindex, which means nothing
 * there), which collides with siw2's listening socket on that port in a
 * siw2 namespace: rdma_listen() fails with EADDRINUSE. Bound to its
 * namespace's address, the server listens on that one device, as rping -a
 * does.
 *
 * CONNECT_DELAY_MS=N and CONNECT_RETRY=N (the client). perftest's server
 * stops listening between its control connection and the test connection
 * (it destroys the listening id, exchanges parameters over the control
 * connection, then binds and listens anew), and its client connects as
 * soon as the exchange is over: on a busy TCG host the client can win, and
 * the TCP handshake is refused. Every rdma_connect() after the process's
 * first waits CONNECT_DELAY_MS first. A refusal still reaches perftest as
 * an event with siw2, which makes the TCP connection in the background;
 * upstream siw connects synchronously and rdma_connect() itself fails with
 * ECONNREFUSED: that is tried again, up to CONNECT_RETRY times, 100 ms
 * apart (a failed rdma_connect() leaves the id route-resolved, so it may
 * be called again).
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <dlfcn.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <rdma/rdma_cma.h>

typedef int (*bind_fn)(struct rdma_cm_id *, struct sockaddr *);
typedef int (*connect_fn)(struct rdma_cm_id *, struct rdma_conn_param *);

static void *real(const char *name)
{
	void *fn = dlsym(RTLD_NEXT, name);

	if (!fn) {
		fprintf(stderr, "perftest_shim: no %s\n", name);
		abort();
	}
	return fn;
}

int rdma_bind_addr(struct rdma_cm_id *id, struct sockaddr *addr)
{
	static bind_fn bind_real;
	const char *want = getenv("BIND_ADDR");
	struct sockaddr_in sin;

	if (!bind_real)
		bind_real = (bind_fn)real("rdma_bind_addr");
	if (!want || !addr || addr->sa_family != AF_INET)
		return bind_real(id, addr);
	memcpy(&sin, addr, sizeof(sin));
	if (sin.sin_addr.s_addr != htonl(INADDR_ANY))
		return bind_real(id, addr);
	if (inet_pton(AF_INET, want, &sin.sin_addr) != 1) {
		fprintf(stderr, "perftest_shim: bad BIND_ADDR '%s'\n", want);
		abort();
	}
	fprintf(stderr, "perftest_shim: binding to %s\n", want);
	return bind_real(id, (struct sockaddr *)&sin);
}

int rdma_connect(struct rdma_cm_id *id, struct rdma_conn_param *param)
{
	static connect_fn connect_real;
	static int calls;
	const char *env = getenv("CONNECT_RETRY");
	const char *delay = getenv("CONNECT_DELAY_MS");
	int left = env ? atoi(env) : 0;
	int ret;

	if (!connect_real)
		connect_real = (connect_fn)real("rdma_connect");
	if (calls++ && delay)
		usleep(atoi(delay) * 1000);
	for (;;) {
		ret = connect_real(id, param);
		if (!ret || errno != ECONNREFUSED || left-- <= 0)
			return ret;
		fprintf(stderr, "perftest_shim: connection refused, again\n");
		usleep(100000);
	}
}
