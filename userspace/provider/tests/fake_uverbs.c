// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * LD_PRELOAD stand-in for the kernel half of uverbs, so that libsiw2 can be
 * exercised on a host without siw2.ko.
 *
 * run.sh points the fake device's /dev/infiniband/uverbsN at /dev/zero:
 * its ioctl() fails with ENOTTY, which makes libibverbs fall back to the
 * write() command interface, and every write() to a character device with
 * the rdev named by FAKE_UVERBS_RDEV ("major:minor") is answered here the
 * way ib_uverbs would, for the commands libsiw2 issues today. Sizes are
 * checked as strictly as the kernel does, so a provider/library layout
 * mismatch shows up as EINVAL.
 *
 * FAKE_SIW2_ABI overrides the abi_version siw2's GET_CONTEXT part reports;
 * FAKE_SIW2_NO_UDATA=1 answers like a kernel without siw2's part.
 */
#include <dlfcn.h>
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <rdma/ib_user_verbs.h>
#include <rdma/siw2-abi.h>

#define FAKE_FW_VER 0x0000000100020003ULL	/* "1.2.3" */
#define FAKE_PD_HANDLE 7

static ssize_t (*real_write)(int, const void *, size_t);
static unsigned int pds_live;

static bool is_fake_uverbs(int fd)
{
	const char *want = getenv("FAKE_UVERBS_RDEV");
	unsigned int maj, min;
	struct stat st;

	if (!want || sscanf(want, "%u:%u", &maj, &min) != 2)
		return false;
	if (fstat(fd, &st) || !S_ISCHR(st.st_mode))
		return false;
	return st.st_rdev == makedev(maj, min);
}

static void *user_ptr(uint64_t v)
{
	return (void *)(uintptr_t)v;
}

static int get_context(const void *in, size_t in_len, size_t out_len)
{
	const struct ib_uverbs_get_context *cmd = in;
	struct ib_uverbs_get_context_resp resp = {};
	struct siw2_uresp_alloc_ctx uresp = {};
	const char *abi = getenv("FAKE_SIW2_ABI");
	char *out;
	int fd;

	if (in_len != sizeof(*cmd) || out_len < sizeof(resp))
		return EINVAL;
	/* siw2.ko will insist on its exact udata length; so do we. */
	if (out_len != sizeof(resp) && out_len != sizeof(resp) + sizeof(uresp))
		return EINVAL;

	fd = eventfd(0, EFD_CLOEXEC);
	if (fd < 0)
		return errno;
	resp.async_fd = fd;
	resp.num_comp_vectors = 1;
	uresp.abi_version = abi ? (uint32_t)strtoul(abi, NULL, 0) :
				  SIW2_ABI_VERSION;

	out = user_ptr(cmd->response);
	memcpy(out, &resp, sizeof(resp));
	if (out_len > sizeof(resp) && !getenv("FAKE_SIW2_NO_UDATA"))
		memcpy(out + sizeof(resp), &uresp, sizeof(uresp));
	return 0;
}

static void fill_device(struct ib_uverbs_query_device_resp *b)
{
	b->fw_ver = FAKE_FW_VER;
	b->vendor_id = 0x626d74;
	b->max_mr_size = ~0ULL;
	b->page_size_cap = 4096;
	b->max_qp = 1024;
	b->max_qp_wr = 1024;
	b->max_sge = 6;
	b->max_cq = 1024;
	b->max_cqe = 4096;
	b->max_mr = 1024;
	b->max_pd = 1024;
	b->phys_port_cnt = 1;
}

static int query_device(const void *in, size_t in_len, size_t out_len)
{
	const struct ib_uverbs_query_device *cmd = in;
	struct ib_uverbs_query_device_resp resp = {};

	if (in_len != sizeof(*cmd) || out_len != sizeof(resp))
		return EINVAL;
	fill_device(&resp);
	memcpy(user_ptr(cmd->response), &resp, sizeof(resp));
	return 0;
}

static int ex_query_device(const struct ib_uverbs_ex_cmd_hdr *ex,
			   size_t in_len, size_t out_len)
{
	struct ib_uverbs_ex_query_device_resp resp = {};

	if (in_len != sizeof(struct ib_uverbs_ex_query_device) ||
	    ex->provider_in_words || ex->provider_out_words ||
	    out_len < sizeof(resp.base))
		return EINVAL;
	fill_device(&resp.base);
	resp.response_length = out_len < sizeof(resp) ? out_len : sizeof(resp);
	memcpy(user_ptr(ex->response), &resp, resp.response_length);
	return 0;
}

static int query_port(const void *in, size_t in_len, size_t out_len)
{
	const struct ib_uverbs_query_port *cmd = in;
	struct ib_uverbs_query_port_resp resp = {};

	if (in_len != sizeof(*cmd) || out_len != sizeof(resp))
		return EINVAL;
	if (cmd->port_num != 1)
		return EINVAL;
	resp.state = 4;			/* IB_PORT_ACTIVE */
	resp.max_mtu = 5;		/* IB_MTU_4096 */
	resp.active_mtu = 5;
	resp.gid_tbl_len = 1;
	resp.pkey_tbl_len = 1;
	resp.max_msg_sz = 1 << 30;
	resp.phys_state = 5;		/* LinkUp */
	resp.link_layer = 2;		/* IB_LINK_LAYER_ETHERNET */
	resp.active_width = 1;
	resp.active_speed = 1;
	memcpy(user_ptr(cmd->response), &resp, sizeof(resp));
	return 0;
}

static int alloc_pd(const void *in, size_t in_len, size_t out_len)
{
	const struct ib_uverbs_alloc_pd *cmd = in;
	struct ib_uverbs_alloc_pd_resp resp = { .pd_handle = FAKE_PD_HANDLE };

	if (in_len != sizeof(*cmd) || out_len != sizeof(resp))
		return EINVAL;
	memcpy(user_ptr(cmd->response), &resp, sizeof(resp));
	pds_live++;
	return 0;
}

static int dealloc_pd(const void *in, size_t in_len)
{
	const struct ib_uverbs_dealloc_pd *cmd = in;

	if (in_len != sizeof(*cmd) || cmd->pd_handle != FAKE_PD_HANDLE ||
	    !pds_live)
		return EINVAL;
	pds_live--;
	return 0;
}

static int dispatch(const void *buf, size_t len)
{
	const struct ib_uverbs_cmd_hdr *hdr = buf;
	const char *p = (const char *)(hdr + 1);
	uint32_t cmd;

	if (len < sizeof(*hdr))
		return EINVAL;
	cmd = hdr->command;

	if (cmd & IB_USER_VERBS_CMD_FLAG_EXTENDED) {
		const struct ib_uverbs_ex_cmd_hdr *ex = (const void *)p;
		size_t in_len = hdr->in_words * 8;
		size_t out_len = hdr->out_words * 8;

		if (len != sizeof(*hdr) + sizeof(*ex) + in_len +
			   ex->provider_in_words * 8)
			return EINVAL;
		switch (cmd & ~IB_USER_VERBS_CMD_FLAG_EXTENDED) {
		case IB_USER_VERBS_EX_CMD_QUERY_DEVICE:
			return ex_query_device(ex, in_len, out_len);
		default:
			return EOPNOTSUPP;
		}
	}

	if (hdr->in_words * 4 != len)
		return EINVAL;
	len -= sizeof(*hdr);
	switch (cmd) {
	case IB_USER_VERBS_CMD_GET_CONTEXT:
		return get_context(p, len, hdr->out_words * 4);
	case IB_USER_VERBS_CMD_QUERY_DEVICE:
		return query_device(p, len, hdr->out_words * 4);
	case IB_USER_VERBS_CMD_QUERY_PORT:
		return query_port(p, len, hdr->out_words * 4);
	case IB_USER_VERBS_CMD_ALLOC_PD:
		return alloc_pd(p, len, hdr->out_words * 4);
	case IB_USER_VERBS_CMD_DEALLOC_PD:
		return dealloc_pd(p, len);
	default:
		return EOPNOTSUPP;
	}
}

ssize_t write(int fd, const void *buf, size_t len)
{
	int err;

	if (!real_write)
		real_write = (ssize_t (*)(int, const void *, size_t))
			dlsym(RTLD_NEXT, "write");
	if (!is_fake_uverbs(fd))
		return real_write(fd, buf, len);

	err = dispatch(buf, len);
	if (getenv("FAKE_UVERBS_TRACE"))
		fprintf(stderr, "fake_uverbs: cmd 0x%x len %zu -> %d\n",
			((const struct ib_uverbs_cmd_hdr *)buf)->command, len,
			err);
	if (err) {
		errno = err;
		return -1;
	}
	return len;
}
