// SPDX-License-Identifier: GPL-2.0
/*
 * Resource limits and isolation of a siw2 device, as seen by an ordinary
 * libibverbs application (suites/limits.sh runs it, partly as an
 * unprivileged user).
 *
 *   limits_test DEV caps          queue depths, SGEs, inline size, CQ and
 *                                 MR sizes: at the advertised limit
 *                                 accepted, beyond it refused
 *   limits_test DEV memlock BYTES reg_mr under RLIMIT_MEMLOCK (BYTES is the
 *                                 limit the caller set): within it
 *                                 accepted, beyond it refused with ENOMEM
 *   limits_test DEV mmap          the mmap offsets of one context's rings
 *                                 reach nothing through another context's
 *                                 file (another fd, another process);
 *                                 wrong lengths, private or executable
 *                                 mappings and stale offsets are refused
 *   limits_test DEV rings N       creates up to N CQs of the largest size
 *                                 and reports how many the kernel allowed:
 *                                 "RINGS created=K errno=E"
 *   limits_test DEV hold FILE     registers a 4 KiB region open to remote
 *                                 writes, prints "HOLD rkey=.. addr=..",
 *                                 waits until FILE exists, then checks
 *                                 that nobody wrote to it (suites/limits.sh
 *                                 has a remote peer aim at it through
 *                                 another process's QP)
 *
 * One line per check: "PASS name", "FAIL name: why". Exit status: 0 when
 * every check passed, 1 otherwise, 2 on bad usage or no device.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <infiniband/verbs.h>

static int failures;

static void result(bool ok, const char *name, const char *fmt, ...)
{
	va_list ap;

	if (ok) {
		printf("PASS %s\n", name);
	} else {
		failures++;
		printf("FAIL %s: ", name);
		va_start(ap, fmt);
		vprintf(fmt, ap);
		va_end(ap);
		putchar('\n');
	}
	fflush(stdout);
}

static struct ibv_context *open_dev(const char *name)
{
	struct ibv_device **list;
	struct ibv_context *ctx = NULL;
	int i, n;

	list = ibv_get_device_list(&n);
	if (!list)
		return NULL;
	for (i = 0; i < n; i++)
		if (!strcmp(ibv_get_device_name(list[i]), name))
			ctx = ibv_open_device(list[i]);
	ibv_free_device_list(list);
	return ctx;
}

/* Creates a CQ of @cqe entries; returns 0 or the errno of the refusal. */
static int try_cq(struct ibv_context *ctx, int cqe)
{
	struct ibv_cq *cq;

	errno = 0;
	cq = ibv_create_cq(ctx, cqe, NULL, NULL, 0);
	if (!cq)
		return errno ? errno : -1;
	ibv_destroy_cq(cq);
	return 0;
}

static int try_qp(struct ibv_pd *pd, struct ibv_cq *cq,
		  const struct ibv_qp_cap *cap)
{
	struct ibv_qp_init_attr a = {
		.send_cq = cq, .recv_cq = cq, .qp_type = IBV_QPT_RC,
		.cap = *cap,
	};
	struct ibv_qp *qp;

	errno = 0;
	qp = ibv_create_qp(pd, &a);
	if (!qp)
		return errno ? errno : -1;
	ibv_destroy_qp(qp);
	return 0;
}

static int try_srq(struct ibv_pd *pd, uint32_t wr, uint32_t sge)
{
	struct ibv_srq_init_attr a = {
		.attr = { .max_wr = wr, .max_sge = sge },
	};
	struct ibv_srq *srq;

	errno = 0;
	srq = ibv_create_srq(pd, &a);
	if (!srq)
		return errno ? errno : -1;
	ibv_destroy_srq(srq);
	return 0;
}

#define AT(name, err) \
	result((err) == 0, name " at the limit is accepted", "errno %d", (err))
#define BEYOND(name, err) \
	result((err) > 0, name " beyond the limit is refused", \
	       "result %d (0 is success)", (err))

static void check_caps(struct ibv_context *ctx)
{
	struct ibv_device_attr da;
	struct ibv_qp_cap base = {
		.max_send_wr = 1, .max_recv_wr = 1,
		.max_send_sge = 1, .max_recv_sge = 1,
	};
	struct ibv_qp_cap cap;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_mr *mr;
	char *buf;

	if (ibv_query_device(ctx, &da)) {
		result(false, "query_device", "errno %d", errno);
		return;
	}
	printf("INFO max_cqe=%d max_qp_wr=%d max_sge=%d max_srq_wr=%d max_srq_sge=%d max_mr_size=%llu\n",
	       da.max_cqe, da.max_qp_wr, da.max_sge, da.max_srq_wr,
	       da.max_srq_sge, (unsigned long long)da.max_mr_size);

	AT("CQ of max_cqe entries", try_cq(ctx, da.max_cqe));
	BEYOND("CQ of max_cqe + 1 entries", try_cq(ctx, da.max_cqe + 1));
	BEYOND("CQ of 0 entries", try_cq(ctx, 0));
	BEYOND("CQ of -1 entries", try_cq(ctx, -1));

	pd = ibv_alloc_pd(ctx);
	cq = ibv_create_cq(ctx, 4, NULL, NULL, 0);
	if (!pd || !cq) {
		result(false, "PD and CQ for the QP checks", "errno %d", errno);
		return;
	}

	cap = base;
	cap.max_send_wr = da.max_qp_wr;
	AT("QP send queue of max_qp_wr", try_qp(pd, cq, &cap));
	cap.max_send_wr = da.max_qp_wr + 1;
	BEYOND("QP send queue of max_qp_wr + 1", try_qp(pd, cq, &cap));
	cap = base;
	cap.max_recv_wr = da.max_qp_wr;
	AT("QP receive queue of max_qp_wr", try_qp(pd, cq, &cap));
	cap.max_recv_wr = da.max_qp_wr + 1;
	BEYOND("QP receive queue of max_qp_wr + 1", try_qp(pd, cq, &cap));
	cap.max_recv_wr = UINT32_MAX;
	BEYOND("QP receive queue of 2^32 - 1", try_qp(pd, cq, &cap));
	cap = base;
	cap.max_send_sge = da.max_sge;
	AT("QP send SGEs of max_sge", try_qp(pd, cq, &cap));
	cap.max_send_sge = da.max_sge + 1;
	BEYOND("QP send SGEs of max_sge + 1", try_qp(pd, cq, &cap));
	cap = base;
	cap.max_recv_sge = da.max_sge;
	AT("QP receive SGEs of max_sge", try_qp(pd, cq, &cap));
	cap.max_recv_sge = da.max_sge + 1;
	BEYOND("QP receive SGEs of max_sge + 1", try_qp(pd, cq, &cap));

	/*
	 * The device attributes carry no inline limit: a QP reports what it
	 * granted in its caps. Asking for that much again must work, for
	 * one byte more must not.
	 */
	cap = base;
	cap.max_inline_data = 64;
	{
		struct ibv_qp_init_attr a = {
			.send_cq = cq, .recv_cq = cq, .qp_type = IBV_QPT_RC,
			.cap = cap,
		};
		struct ibv_qp *qp = ibv_create_qp(pd, &a);
		uint32_t lim = qp ? a.cap.max_inline_data : 0;

		if (qp)
			ibv_destroy_qp(qp);
		printf("INFO max_inline_data granted=%u\n", lim);
		cap.max_inline_data = lim;
		AT("QP inline data at the granted maximum",
		   lim ? try_qp(pd, cq, &cap) : -1);
		cap.max_inline_data = 1 << 20;
		BEYOND("QP inline data of 1 MiB", try_qp(pd, cq, &cap));
	}

	AT("SRQ of max_srq_wr", try_srq(pd, da.max_srq_wr, 1));
	BEYOND("SRQ of max_srq_wr + 1", try_srq(pd, da.max_srq_wr + 1, 1));
	AT("SRQ SGEs of max_srq_sge", try_srq(pd, 1, da.max_srq_sge));
	BEYOND("SRQ SGEs of max_srq_sge + 1",
	       try_srq(pd, 1, da.max_srq_sge + 1));

	/* MR sizes: the address range, not the advertised size, bounds it. */
	buf = aligned_alloc(4096, 4096);
	errno = 0;
	mr = ibv_reg_mr(pd, buf, 0, IBV_ACCESS_LOCAL_WRITE);
	result(!mr, "MR of 0 bytes is refused", "registered");
	if (mr)
		ibv_dereg_mr(mr);
	errno = 0;
	mr = ibv_reg_mr(pd, buf, SIZE_MAX - 4096, IBV_ACCESS_LOCAL_WRITE);
	result(!mr, "MR that wraps the address space is refused",
	       "registered");
	if (mr)
		ibv_dereg_mr(mr);
	errno = 0;
	mr = ibv_reg_mr(pd, (void *)4096, 1 << 20, IBV_ACCESS_LOCAL_WRITE);
	result(!mr && errno == EFAULT, "MR of unmapped memory fails with EFAULT",
	       "%s, errno %d", mr ? "registered" : "refused", errno);
	if (mr)
		ibv_dereg_mr(mr);
	errno = 0;
	mr = ibv_reg_mr(pd, buf, 4096, IBV_ACCESS_REMOTE_WRITE);
	result(!mr, "MR with remote write but no local write is refused",
	       "registered");
	if (mr)
		ibv_dereg_mr(mr);
	free(buf);

	ibv_destroy_cq(cq);
	ibv_dealloc_pd(pd);
}

/*
 * The caller runs without CAP_IPC_LOCK under an RLIMIT_MEMLOCK of @limit
 * bytes: ib_umem_get charges pinned pages to the process.
 */
static void check_memlock(struct ibv_context *ctx, size_t limit)
{
	size_t half = limit / 2, big = limit + (1 << 20);
	struct ibv_mr *a, *b;
	struct ibv_pd *pd;
	char *buf;

	pd = ibv_alloc_pd(ctx);
	buf = mmap(NULL, 2 * big, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (!pd || buf == MAP_FAILED) {
		result(false, "memlock setup", "errno %d", errno);
		return;
	}
	memset(buf, 1, 2 * big);

	a = ibv_reg_mr(pd, buf, half, IBV_ACCESS_LOCAL_WRITE);
	result(a, "reg_mr of half the memlock limit is accepted", "errno %d",
	       errno);
	errno = 0;
	b = ibv_reg_mr(pd, buf + big, big, IBV_ACCESS_LOCAL_WRITE);
	result(!b && errno == ENOMEM,
	       "reg_mr beyond the memlock limit fails with ENOMEM",
	       "%s, errno %d", b ? "registered" : "refused", errno);
	if (b)
		ibv_dereg_mr(b);
	errno = 0;
	b = ibv_reg_mr(pd, buf + big, half + 8192, IBV_ACCESS_LOCAL_WRITE);
	result(!b && errno == ENOMEM,
	       "two MRs together beyond the memlock limit: the second fails with ENOMEM",
	       "%s, errno %d", b ? "registered" : "refused", errno);
	if (b)
		ibv_dereg_mr(b);
	if (a)
		ibv_dereg_mr(a);
	b = ibv_reg_mr(pd, buf + big, half + 8192, IBV_ACCESS_LOCAL_WRITE);
	result(b, "after dereg_mr the pinned pages are uncharged", "errno %d",
	       errno);
	if (b)
		ibv_dereg_mr(b);
	munmap(buf, 2 * big);
	ibv_dealloc_pd(pd);
}

/* Returns 0 when mmap(@off, @len, @prot, @flags) on @fd succeeded. */
static int try_map(int fd, off_t off, size_t len, int prot, int flags)
{
	void *p = mmap(NULL, len, prot, flags, fd, off);

	if (p == MAP_FAILED)
		return errno;
	munmap(p, len);
	return 0;
}

/* How many of the first @pages page offsets, at 1..@lens pages, map. */
static int probe(int fd, int pages, int lens)
{
	long ps = sysconf(_SC_PAGESIZE);
	int o, l, hits = 0;

	for (o = 0; o < pages; o++)
		for (l = 1; l <= lens; l++)
			if (!try_map(fd, (off_t)o * ps, (size_t)l * ps,
				     PROT_READ | PROT_WRITE, MAP_SHARED))
				hits++;
	return hits;
}

static void check_mmap(const char *dev, struct ibv_context *a)
{
	long ps = sysconf(_SC_PAGESIZE);
	struct ibv_context *b;
	struct ibv_cq *cq;
	struct ibv_pd *pd;
	struct ibv_qp *qp;
	struct ibv_qp_init_attr qa = {
		.qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 4, .max_recv_wr = 4,
			 .max_send_sge = 1, .max_recv_sge = 1 },
	};
	int hits, st, e;
	pid_t pid;

	/* Context a: a CQ (its ring is the first key, page offset 1), a QP. */
	cq = ibv_create_cq(a, 1, NULL, NULL, 0);
	pd = ibv_alloc_pd(a);
	if (!cq || !pd) {
		result(false, "mmap setup", "errno %d", errno);
		return;
	}
	qa.send_cq = cq;
	qa.recv_cq = cq;
	qp = ibv_create_qp(pd, &qa);
	if (!qp) {
		result(false, "mmap setup: QP", "errno %d", errno);
		return;
	}

	hits = probe(a->cmd_fd, 16, 8);
	printf("INFO own context: %d of 16 offsets x 8 lengths map\n", hits);
	result(hits >= 3, "own context: the CQ's and QP's rings map (sanity)",
	       "%d mappings", hits);
	e = try_map(a->cmd_fd, ps, ps, PROT_READ | PROT_WRITE, MAP_SHARED);
	result(!e, "own context: the CQ ring maps at its key and length",
	       "errno %d", e);
	e = try_map(a->cmd_fd, ps, 2 * ps, PROT_READ | PROT_WRITE, MAP_SHARED);
	result(e, "a ring mapped with a length beyond it is refused",
	       "mapped");
	e = try_map(a->cmd_fd, ps, 64 << 20, PROT_READ | PROT_WRITE,
		    MAP_SHARED);
	result(e, "a ring mapped with 64 MiB is refused", "mapped");
	e = try_map(a->cmd_fd, ps, ps, PROT_READ | PROT_WRITE, MAP_PRIVATE);
	result(e, "a private mapping of a ring is refused", "mapped");
	e = try_map(a->cmd_fd, ps, ps, PROT_READ | PROT_WRITE | PROT_EXEC,
		    MAP_SHARED);
	result(e, "an executable mapping of a ring is refused", "mapped");
	{
		void *p = mmap(NULL, ps, PROT_READ | PROT_WRITE, MAP_SHARED,
			       a->cmd_fd, ps);

		e = p == MAP_FAILED ? -1 :
		    mprotect(p, ps, PROT_READ | PROT_EXEC) ? 0 : 1;
		result(!e, "mprotect() cannot make a ring executable",
		       e < 0 ? "no mapping" : "made executable");
		if (p != MAP_FAILED)
			munmap(p, ps);
	}
	e = try_map(a->cmd_fd, 0, ps, PROT_READ | PROT_WRITE, MAP_SHARED);
	result(e, "offset 0 maps nothing", "mapped");
	e = try_map(a->cmd_fd, (off_t)1 << 40, ps, PROT_READ | PROT_WRITE,
		    MAP_SHARED);
	result(e, "a guessed large offset maps nothing", "mapped");
	e = try_map(a->cmd_fd, ps + 256, ps, PROT_READ | PROT_WRITE,
		    MAP_SHARED);
	result(e, "an offset inside a ring's page is refused", "mapped");

	/* Another context of the same process: nothing of a's is there. */
	b = open_dev(dev);
	if (!b) {
		result(false, "a second context", "errno %d", errno);
	} else {
		hits = probe(b->cmd_fd, 64, 8);
		result(!hits, "another context's file maps none of this context's rings",
		       "%d mappings", hits);
		ibv_close_device(b);
	}

	/* Another process with its own context. */
	fflush(stdout);
	pid = fork();
	if (pid == 0) {
		struct ibv_context *c = open_dev(dev);

		if (!c)
			_exit(2);
		_exit(probe(c->cmd_fd, 64, 8) ? 1 : 0);
	}
	st = -1;
	if (pid > 0)
		waitpid(pid, &st, 0);
	result(WIFEXITED(st) && WEXITSTATUS(st) == 0,
	       "another process's context maps none of this process's rings",
	       "child status 0x%x", st);

	/* A destroyed object's key is stale at once. */
	ibv_destroy_qp(qp);
	ibv_destroy_cq(cq);
	hits = probe(a->cmd_fd, 16, 8);
	result(!hits, "after destroy, no offset of the dead rings maps",
	       "%d mappings", hits);
	ibv_dealloc_pd(pd);
}

static void rings(struct ibv_context *ctx, int n)
{
	struct ibv_device_attr da;
	struct ibv_cq **cqs;
	int i, e = 0;

	if (ibv_query_device(ctx, &da))
		exit(2);
	cqs = calloc(n, sizeof(*cqs));
	for (i = 0; i < n; i++) {
		cqs[i] = ibv_create_cq(ctx, da.max_cqe, NULL, NULL, 0);
		if (!cqs[i]) {
			e = errno;
			break;
		}
	}
	printf("RINGS created=%d errno=%d\n", i, e);
	fflush(stdout);
	while (i--)
		ibv_destroy_cq(cqs[i]);
	free(cqs);
}

static void hold(struct ibv_context *ctx, const char *flag)
{
	struct ibv_pd *pd = ibv_alloc_pd(ctx);
	unsigned char *buf = aligned_alloc(4096, 4096);
	struct ibv_mr *mr;
	struct stat st;
	int i, tries = 1200;

	if (!pd || !buf) {
		result(false, "hold setup", "errno %d", errno);
		return;
	}
	memset(buf, 0xa5, 4096);
	mr = ibv_reg_mr(pd, buf, 4096, IBV_ACCESS_LOCAL_WRITE |
			IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ);
	if (!mr) {
		result(false, "hold: reg_mr", "errno %d", errno);
		return;
	}
	printf("HOLD rkey=0x%x addr=0x%llx lkey=0x%x\n", mr->rkey,
	       (unsigned long long)(uintptr_t)buf, mr->lkey);
	fflush(stdout);
	while (stat(flag, &st) && tries--)
		usleep(100000);
	for (i = 0; i < 4096 && buf[i] == 0xa5; i++)
		;
	result(i == 4096, "another process's region is untouched",
	       "octet %d changed to 0x%02x", i, i < 4096 ? buf[i] : 0);
	ibv_dereg_mr(mr);
	ibv_dealloc_pd(pd);
	free(buf);
}

int main(int argc, char **argv)
{
	struct ibv_context *ctx;

	if (argc < 3)
		goto usage;
	ctx = open_dev(argv[1]);
	if (!ctx) {
		fprintf(stderr, "limits_test: cannot open %s: %s\n", argv[1],
			strerror(errno));
		return 2;
	}
	if (!strcmp(argv[2], "caps"))
		check_caps(ctx);
	else if (!strcmp(argv[2], "memlock") && argc == 4)
		check_memlock(ctx, strtoull(argv[3], NULL, 0));
	else if (!strcmp(argv[2], "mmap"))
		check_mmap(argv[1], ctx);
	else if (!strcmp(argv[2], "rings") && argc == 4)
		rings(ctx, atoi(argv[3]));
	else if (!strcmp(argv[2], "hold") && argc == 4)
		hold(ctx, argv[3]);
	else
		goto usage;
	ibv_close_device(ctx);
	return failures ? 1 : 0;
usage:
	fprintf(stderr, "usage: limits_test DEV caps|mmap|memlock BYTES|rings N|hold FILE\n");
	return 2;
}
