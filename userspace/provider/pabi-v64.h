/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Private ABI generation 64: rdma-core 64. Included by pabi.h only; see
 * pabi-v34.h for what these files hold.
 *
 * Against generation 59: four ops (alloc_buf, dm_export_dmabuf_fd,
 * free_buf, query_port_speed; v62 had already added the second and the
 * fourth without renaming the PABI) and a driver command-buffer link for
 * ibv_cmd_create_qp_ex2(), which libsiw2 does not use.
 */
#ifndef SIW2_PABI_GEN_H
#define SIW2_PABI_GEN_H

#define PABI_VERSION 64

struct ibv_buf;
struct ibv_command_buffer;
struct ibv_fd_arr;
struct verbs_create_cq_prov_attr;

int ibv_cmd_get_context(struct verbs_context *context,
			struct ibv_get_context *cmd, size_t cmd_size,
			struct ibv_fd_arr *fd_arr,
			struct ib_uverbs_get_context_resp *resp,
			size_t resp_size);
int ibv_cmd_create_cq_ex(struct ibv_context *context,
			 const struct ibv_cq_init_attr_ex *cq_attr,
			 struct verbs_create_cq_prov_attr *prov_attr,
			 struct verbs_cq *cq, struct ibv_create_cq_ex *cmd,
			 size_t cmd_size,
			 struct ib_uverbs_ex_create_cq_resp *resp,
			 size_t resp_size, uint32_t cmd_flags);
int ibv_cmd_create_qp_ex2(struct ibv_context *context, struct verbs_qp *qp,
			  struct ibv_qp_init_attr_ex *qp_attr,
			  struct ibv_create_qp_ex *cmd, size_t cmd_size,
			  struct ib_uverbs_ex_create_qp_resp *resp,
			  size_t resp_size, struct ibv_command_buffer *driver);

#define PABI_CMD_GET_CONTEXT(ctx, cmd, cmd_size, resp, resp_size)	\
	ibv_cmd_get_context(ctx, cmd, cmd_size, NULL, resp, resp_size)
#define PABI_CMD_CREATE_CQ_EX(ctx, attr, cq, cmd, cmd_size, resp,	\
			      resp_size, flags)				\
	ibv_cmd_create_cq_ex(ctx, attr, NULL, cq, cmd, cmd_size, resp,	\
			     resp_size, flags)
#define PABI_CMD_CREATE_QP_EX2(ctx, qp, attr, cmd, cmd_size, resp,	\
			       resp_size)				\
	ibv_cmd_create_qp_ex2(ctx, qp, attr, cmd, cmd_size, resp,	\
			      resp_size, NULL)

#endif /* SIW2_PABI_GEN_H */
