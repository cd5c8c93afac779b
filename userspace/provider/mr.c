// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * libsiw2: memory regions and windows. Registration is the kernel's
 * business alone (pinning, or for IBV_ACCESS_ON_DEMAND paging in as the
 * memory is used; the STag); the provider only carries the library's
 * wrapper, and passes prefetch advice for on-demand MRs on. A window is
 * allocated here and bound by a work request of the send queue (qp.c,
 * qp_ex.c, sq.c).
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

/*
 * ibv_advise_mr(): the kernel prefetches, and checks each SGE's lkey, PD,
 * rights and range. Refused here, without a system call, is what no
 * kernel accepts, with the errno the kernel would give and in its order:
 * an empty SGE list and unknown flags (EINVAL, from ib_uverbs before the
 * driver runs), then an unknown advice (EOPNOTSUPP, from the driver; the
 * man page's ENOTSUP is the same value). PREFETCH_NO_FAULT goes through:
 * siw2.ko takes it, as mlx5 and rxe do, and faults nothing in for it.
 */
int siw2_mr_advise(struct ibv_pd *pd, enum ibv_advise_mr_advice advice,
		   uint32_t flags, struct ibv_sge *sg_list, uint32_t num_sge)
{
	if (!sg_list || !num_sge)
		return EINVAL;
	if (flags & ~(uint32_t)IBV_ADVISE_MR_FLAG_FLUSH)
		return EINVAL;
	switch (advice) {
	case IBV_ADVISE_MR_ADVICE_PREFETCH:
	case IBV_ADVISE_MR_ADVICE_PREFETCH_WRITE:
	case IBV_ADVISE_MR_ADVICE_PREFETCH_NO_FAULT:
		break;
	default:
		return EOPNOTSUPP;
	}
	return ibv_cmd_advise_mr(pd, advice, flags, sg_list, num_sge);
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
