/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * libsiw2 internals shared between the provider's source files.
 *
 * Object model: libibverbs owns lookup and refcounting of every object; the
 * provider embeds the library's struct as the first member of its own so
 * that the library's pointer converts back with container_of. A
 * siw2_device lives from alloc_device until the library drops its last
 * reference (uninit_device); a siw2_context from alloc_context until
 * free_context, and holds a device reference for its whole life.
 */
#ifndef SIW2_PROVIDER_H
#define SIW2_PROVIDER_H

#include "pabi.h"
#include "rdma/siw2-abi.h"

#define SIW2_LOG_PREFIX "libsiw2: "

struct siw2_device {
	struct verbs_device vdev;
};

struct siw2_context {
	struct verbs_context vctx;
	uint32_t dev_flags;	/* siw2_uresp_alloc_ctx.dev_flags */
};

static inline struct siw2_context *siw2_context_of(struct ibv_context *ibctx)
{
	return pabi_container_of(ibctx, struct siw2_context, vctx.context);
}

static inline struct siw2_device *siw2_device_of(struct verbs_device *vdev)
{
	return pabi_container_of(vdev, struct siw2_device, vdev);
}

#endif /* SIW2_PROVIDER_H */
