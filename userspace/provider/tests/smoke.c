// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Drives libsiw2 through the public verbs API against fake_uverbs.so.
 *
 *   smoke DEV ok      open DEV, query device and port, PD round trip,
 *                     an unimplemented verb fails with EOPNOTSUPP
 *   smoke DEV eproto  opening DEV fails with EPROTO (ABI mismatch)
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <infiniband/verbs.h>

#define FAIL(...)							\
	do {								\
		fprintf(stderr, "smoke: FAIL: " __VA_ARGS__);		\
		fputc('\n', stderr);					\
		return 1;						\
	} while (0)

static int run_ok(struct ibv_context *ctx)
{
	struct ibv_device_attr_ex dattr;
	struct ibv_port_attr pattr;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	int err;

	err = ibv_query_device_ex(ctx, NULL, &dattr);
	if (err)
		FAIL("ibv_query_device_ex: %s", strerror(err));
	if (strcmp(dattr.orig_attr.fw_ver, "1.2.3") ||
	    dattr.orig_attr.phys_port_cnt != 1 ||
	    dattr.orig_attr.max_qp != 1024)
		FAIL("device attrs: fw_ver '%s' ports %u max_qp %d",
		     dattr.orig_attr.fw_ver, dattr.orig_attr.phys_port_cnt,
		     dattr.orig_attr.max_qp);

	err = ibv_query_port(ctx, 1, &pattr);
	if (err)
		FAIL("ibv_query_port: %s", strerror(err));
	if (pattr.state != IBV_PORT_ACTIVE ||
	    pattr.link_layer != IBV_LINK_LAYER_ETHERNET)
		FAIL("port attrs: state %d link_layer %d", pattr.state,
		     pattr.link_layer);

	pd = ibv_alloc_pd(ctx);
	if (!pd)
		FAIL("ibv_alloc_pd: %s", strerror(errno));
	if (pd->handle != 7 || pd->context != ctx)
		FAIL("pd: handle %u", pd->handle);
	err = ibv_dealloc_pd(pd);
	if (err)
		FAIL("ibv_dealloc_pd: %s", strerror(err));

	errno = 0;
	cq = ibv_create_cq(ctx, 16, NULL, NULL, 0);
	if (cq || errno != EOPNOTSUPP)
		FAIL("ibv_create_cq: want NULL/EOPNOTSUPP, got %p/%s",
		     (void *)cq, strerror(errno));
	return 0;
}

int main(int argc, char **argv)
{
	struct ibv_device **list, *dev = NULL;
	struct ibv_context *ctx;
	int i, n, ret;

	if (argc != 3)
		FAIL("usage: smoke DEV ok|eproto");

	list = ibv_get_device_list(&n);
	if (!list)
		FAIL("ibv_get_device_list: %s", strerror(errno));
	for (i = 0; i < n; i++)
		if (!strcmp(ibv_get_device_name(list[i]), argv[1]))
			dev = list[i];
	if (!dev)
		FAIL("device %s not found", argv[1]);
	if (dev->transport_type != IBV_TRANSPORT_IWARP)
		FAIL("transport %d, want iWARP", dev->transport_type);

	ctx = ibv_open_device(dev);
	if (!strcmp(argv[2], "eproto")) {
		if (ctx || errno != EPROTO)
			FAIL("open: want NULL/EPROTO, got %p/%s", (void *)ctx,
			     strerror(errno));
		ibv_free_device_list(list);
		printf("smoke: %s eproto: PASS\n", argv[1]);
		return 0;
	}
	if (!ctx)
		FAIL("ibv_open_device: %s", strerror(errno));

	ret = run_ok(ctx);
	if (ibv_close_device(ctx))
		FAIL("ibv_close_device");
	ibv_free_device_list(list);
	if (!ret)
		printf("smoke: %s ok: PASS\n", argv[1]);
	return ret;
}
