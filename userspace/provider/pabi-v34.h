/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Private ABI generation 34: rdma-core 39 to 56 (Ubuntu 22.04 and 24.04,
 * Debian 12 and 13). Included by pabi.h only, which holds what every
 * generation shares (the op table marks the members of later ones); this
 * file holds what differs: the PABI number and the command wrappers whose
 * parameters changed later, with the macros pabi.h's users call them by.
 *
 * driver.h is the same from v37 to v52; v53 added ibv_cmd_create_cq_ex2()
 * and v54 changed ibv_cmd_reg_dmabuf_mr(), neither of which libsiw2 calls.
 */
#ifndef SIW2_PABI_GEN_H
#define SIW2_PABI_GEN_H

#define PABI_VERSION 34

int ibv_cmd_get_context(struct verbs_context *context,
			struct ibv_get_context *cmd, size_t cmd_size,
			struct ib_uverbs_get_context_resp *resp,
			size_t resp_size);
int ibv_cmd_create_cq_ex(struct ibv_context *context,
			 const struct ibv_cq_init_attr_ex *cq_attr,
			 struct verbs_cq *cq, struct ibv_create_cq_ex *cmd,
			 size_t cmd_size,
			 struct ib_uverbs_ex_create_cq_resp *resp,
			 size_t resp_size, uint32_t cmd_flags);
int ibv_cmd_create_qp_ex2(struct ibv_context *context, struct verbs_qp *qp,
			  struct ibv_qp_init_attr_ex *qp_attr,
			  struct ibv_create_qp_ex *cmd, size_t cmd_size,
			  struct ib_uverbs_ex_create_qp_resp *resp,
			  size_t resp_size);

#define PABI_CMD_GET_CONTEXT(ctx, cmd, cmd_size, resp, resp_size)	\
	ibv_cmd_get_context(ctx, cmd, cmd_size, resp, resp_size)
#define PABI_CMD_CREATE_CQ_EX(ctx, attr, cq, cmd, cmd_size, resp,	\
			      resp_size, flags)				\
	ibv_cmd_create_cq_ex(ctx, attr, cq, cmd, cmd_size, resp,	\
			     resp_size, flags)
#define PABI_CMD_CREATE_QP_EX2(ctx, qp, attr, cmd, cmd_size, resp,	\
			       resp_size)				\
	ibv_cmd_create_qp_ex2(ctx, qp, attr, cmd, cmd_size, resp, resp_size)

#endif /* SIW2_PABI_GEN_H */
