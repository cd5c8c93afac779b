// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * libsiw2: memory regions and windows. Registration is the kernel's
 * business alone (pinning, the STag); the provider only carries the
 * library's wrapper. A window is allocated here and bound by a work
 * request of the send queue (qp.c, qp_ex.c, sq.c).
 */
#include <errno.h>
#include <stdlib.h>

#include "siw2.h"

struct ibv_mr *siw2_mr_reg(struct ibv_pd *pd, void *addr, size_t length,
			   uint64_t hca_va, int access)
{
	struct ib_uverbs_reg_mr_resp resp = {};
	struct ibv_reg_mr cmd = {};
	struct verbs_mr *vmr;
	int err;

	vmr = calloc(1, sizeof(*vmr));
	if (!vmr)
		return NULL;
	err = ibv_cmd_reg_mr(pd, addr, length, hca_va, access, vmr, &cmd,
			     sizeof(cmd), &resp, sizeof(resp));
	if (err) {
		free(vmr);
		errno = err;
		return NULL;
	}
	return &vmr->ibv_mr;
}

/*
 * On failure (EBUSY while memory windows are bound to it) the kernel's
 * MR lives on, and with it this memory.
 */
int siw2_mr_dereg(struct verbs_mr *vmr)
{
	int err;

	err = ibv_cmd_dereg_mr(vmr);
	if (err)
		return err;
	free(vmr);
	return 0;
}

struct ibv_mw *siw2_mw_alloc(struct ibv_pd *pd, enum ibv_mw_type type)
{
	struct ib_uverbs_alloc_mw_resp resp = {};
	struct ibv_alloc_mw cmd = {};
	struct ibv_mw *mw;
	int err;

	mw = calloc(1, sizeof(*mw));
	if (!mw)
		return NULL;
	err = ibv_cmd_alloc_mw(pd, type, mw, &cmd, sizeof(cmd), &resp,
			       sizeof(resp));
	if (err) {
		free(mw);
		errno = err;
		return NULL;
	}
	return mw;
}

int siw2_mw_dealloc(struct ibv_mw *mw)
{
	int err;

	err = ibv_cmd_dealloc_mw(mw);
	if (err)
		return err;
	free(mw);
	return 0;
}
