// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * libsiw2: device matching, device and context lifetime, device queries.
 *
 * libibverbs dlopen()s this file's library, whose constructor registers
 * dev_ops. For every uverbs device no other provider claimed, the library
 * then asks match_device(); for a match it calls alloc_device once and
 * alloc_context on every ibv_open_device(). The other verbs live in their
 * own files and are wired into ctx_ops here.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "siw2.h"

/* After siw2.h: verbs.h must define RDMA_UAPI_PTR first. */
#include <rdma/ib_user_ioctl_verbs.h>

/*
 * GET_CONTEXT's response with siw2's part after the core part; the kernel
 * fills siw2's part from alloc_ucontext.
 */
struct siw2_resp_alloc_ctx {
	struct ib_uverbs_get_context_resp ibv_resp;
	struct siw2_uresp_alloc_ctx drv;
};

PABI_ASSERT_DRV_LAYOUT(struct siw2_resp_alloc_ctx, ibv_resp, drv);

/*
 * The device's SIW2_SYSFS_ABI_ATTR decides: absent means not a siw2 device
 * (silently, every unclaimed device of any driver is offered to us);
 * present with another version means a siw2.ko from another tree, which we
 * must not drive, and the user needs to hear why the device is missing.
 */
static bool match_device(struct verbs_sysfs_dev *sdev)
{
	char path[IBV_SYSFS_PATH_MAX + sizeof(SIW2_SYSFS_ABI_ATTR) + 1];
	unsigned long version;
	char buf[32];
	ssize_t len;
	char *end;
	int fd;

	if (snprintf(path, sizeof(path), "%s/%s", sdev->ibdev_path,
		     SIW2_SYSFS_ABI_ATTR) >= (int)sizeof(path))
		return false;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return false;
	len = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (len < 0)
		len = 0;
	buf[len] = '\0';
	buf[strcspn(buf, "\n")] = '\0';

	errno = 0;
	version = strtoul(buf, &end, 10);
	if (buf[0] < '0' || buf[0] > '9' || *end || errno ||
	    version != SIW2_ABI_VERSION) {
		fprintf(stderr, SIW2_LOG_PREFIX
			"%s: kernel siw2 ABI version '%s', provider ABI version %d; device ignored (build siw2.ko and libsiw2 from the same tree)\n",
			sdev->ibdev_name, buf, SIW2_ABI_VERSION);
		return false;
	}
	return true;
}

static struct verbs_device *alloc_device(struct verbs_sysfs_dev *sdev)
{
	struct siw2_device *dev;

	(void)sdev;
	dev = calloc(1, sizeof(*dev));
	if (!dev)
		return NULL;
	return &dev->vdev;
}

static void uninit_device(struct verbs_device *vdev)
{
	free(siw2_device_of(vdev));
}

static void free_context(struct ibv_context *ibctx)
{
	struct siw2_context *ctx = siw2_context_of(ibctx);

	verbs_uninit_context(&ctx->vctx);
	free(ctx);
}

static int query_device_ex(struct ibv_context *ibctx,
			   const struct ibv_query_device_ex_input *input,
			   struct ibv_device_attr_ex *attr, size_t attr_size)
{
	struct ib_uverbs_ex_query_device_resp resp = {};
	size_t resp_size = sizeof(resp);
	uint64_t fw;
	int err;

	err = ibv_cmd_query_device_any(ibctx, input, attr, attr_size, &resp,
				       &resp_size);
	if (err)
		return err;

	/* fw_ver is major.minor.sub in 32/16/16 bits, as ib_core reports it */
	fw = resp.base.fw_ver;
	snprintf(attr->orig_attr.fw_ver, sizeof(attr->orig_attr.fw_ver),
		 "%" PRIu64 ".%" PRIu64 ".%" PRIu64, fw >> 32,
		 (fw >> 16) & 0xffff, fw & 0xffff);
	return 0;
}

static int query_port(struct ibv_context *ibctx, uint8_t port,
		      struct ibv_port_attr *attr)
{
	struct ibv_query_port cmd = {};

	return ibv_cmd_query_port(ibctx, port, attr, &cmd, sizeof(cmd));
}

static struct ibv_pd *alloc_pd(struct ibv_context *ibctx)
{
	struct ib_uverbs_alloc_pd_resp resp = {};
	struct ibv_alloc_pd cmd = {};
	struct ibv_pd *pd;
	int err;

	pd = calloc(1, sizeof(*pd));
	if (!pd)
		return NULL;
	err = ibv_cmd_alloc_pd(ibctx, pd, &cmd, sizeof(cmd), &resp,
			       sizeof(resp));
	if (err) {
		free(pd);
		errno = err;
		return NULL;
	}
	return pd;
}

/* On failure the kernel object still exists, so the memory must stay. */
static int dealloc_pd(struct ibv_pd *pd)
{
	int err;

	err = ibv_cmd_dealloc_pd(pd);
	if (err)
		return err;
	free(pd);
	return 0;
}

static const struct verbs_context_ops ctx_ops = {
	.advise_mr = siw2_mr_advise,
	.alloc_mw = siw2_mw_alloc,
	.alloc_pd = alloc_pd,
	.bind_mw = siw2_mw_bind,
	.create_cq = siw2_cq_create,
	.create_cq_ex = siw2_cq_create_ex,
	.create_qp = siw2_qp_create,
	.create_qp_ex = siw2_qp_create_ex,
	.create_srq = siw2_srq_create,
	.dealloc_mw = siw2_mw_dealloc,
	.dealloc_pd = dealloc_pd,
	.dereg_mr = siw2_mr_dereg,
	.destroy_cq = siw2_cq_destroy,
	.destroy_qp = siw2_qp_destroy,
	.destroy_srq = siw2_srq_destroy,
	.free_context = free_context,
	.modify_qp = siw2_qp_modify,
	.modify_srq = siw2_srq_modify,
	.poll_cq = siw2_cq_poll,
	.post_recv = siw2_qp_post_recv,
	.post_send = siw2_qp_post_send,
	.post_srq_recv = siw2_srq_post_recv,
	.query_device_ex = query_device_ex,
	.query_port = query_port,
	.query_qp = siw2_qp_query,
	.query_srq = siw2_srq_query,
	.reg_mr = siw2_mr_reg,
	.req_notify_cq = siw2_cq_req_notify,
	.resize_cq = siw2_cq_resize,
};

/*
 * Owns @cmd_fd from the first line: _verbs_init_and_alloc_context() closes
 * it on failure, verbs_uninit_context() afterwards.
 */
static struct verbs_context *alloc_context(struct ibv_device *ibdev,
					   int cmd_fd, void *private_data)
{
	struct siw2_resp_alloc_ctx resp = {};
	struct ibv_get_context cmd = {};
	struct siw2_context *ctx;
	int err;

	(void)private_data;
	ctx = verbs_init_and_alloc_context(ibdev, cmd_fd, struct siw2_context,
					   vctx, RDMA_DRIVER_UNKNOWN);
	if (!ctx)
		return NULL;

	err = PABI_CMD_GET_CONTEXT(&ctx->vctx, &cmd, sizeof(cmd),
				   &resp.ibv_resp, sizeof(resp));
	if (err)
		goto err_uninit;

	/*
	 * A kernel that filled less than siw2's part leaves it zeroed, which
	 * is never a valid version.
	 */
	if (resp.drv.abi_version != SIW2_ABI_VERSION) {
		fprintf(stderr, SIW2_LOG_PREFIX
			"%s: kernel siw2 ABI version %u, provider ABI version %d; not opening\n",
			ibdev->name, resp.drv.abi_version, SIW2_ABI_VERSION);
		err = EPROTO;
		goto err_uninit;
	}
	ctx->dev_flags = resp.drv.dev_flags;

	verbs_set_ops(&ctx->vctx, &ctx_ops);
	return &ctx->vctx;

err_uninit:
	verbs_uninit_context(&ctx->vctx);
	free(ctx);
	errno = err;
	return NULL;
}

/*
 * siw2 has no rdma_driver_id, so the table holds only its terminator (not
 * NULL: see struct verbs_device_ops) and match_device() decides alone.
 */
static const struct verbs_match_ent match_table[] = {
	{ .kind = VERBS_MATCH_SENTINEL },
};

static const struct verbs_device_ops dev_ops = {
	.name = "siw2",
	.match_min_abi_version = SIW2_ABI_VERSION,
	.match_max_abi_version = SIW2_ABI_VERSION,
	.match_table = match_table,
	.match_device = match_device,
	.alloc_device = alloc_device,
	.uninit_device = uninit_device,
	.alloc_context = alloc_context,
};

PABI_PROVIDER_DRIVER(dev_ops)
