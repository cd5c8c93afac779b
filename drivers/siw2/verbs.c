// SPDX-License-Identifier: GPL-2.0
/*
 * Device, port and context verbs.
 */
#include <linux/etherdevice.h>
#include <rdma/ib_mad.h>
#include <rdma/ib_user_verbs.h>
#include <rdma/ib_verbs.h>

#include "siw2.h"
#include <rdma/siw2-abi.h>

static int query_device(struct ib_device *ibdev, struct ib_device_attr *attr,
			struct ib_udata *udata)
{
	struct siw2_device *sdev = to_siw2_dev(ibdev);

	if (udata && udata->inlen)
		return -EINVAL;

	memset(attr, 0, sizeof(*attr));
	attr->vendor_id = SIW2_VENDOR_ID;
	attr->vendor_part_id = SIW2_VENDOR_PART_ID;
	attr->sys_image_guid = sdev->ibdev.node_guid;
	attr->max_mr_size = SIW2_MAX_MR_SIZE;
	attr->page_size_cap = PAGE_SIZE;
	attr->max_qp = SIW2_MAX_QP;
	attr->max_qp_wr = SIW2_MAX_QP_WR;
	attr->max_send_sge = SIW2_MAX_SGE;
	attr->max_recv_sge = SIW2_MAX_SGE;
	attr->max_sge_rd = SIW2_MAX_SGE_RD;
	attr->max_cq = SIW2_MAX_CQ;
	attr->max_cqe = SIW2_MAX_CQE;
	attr->max_mr = SIW2_MAX_MR;
	attr->max_pd = SIW2_MAX_PD;
	attr->max_qp_rd_atom = SIW2_MAX_IRD;
	attr->max_qp_init_rd_atom = SIW2_MAX_ORD;
	attr->max_res_rd_atom = SIW2_MAX_QP * SIW2_MAX_IRD;
	attr->max_srq = SIW2_MAX_SRQ;
	attr->max_srq_wr = SIW2_MAX_SRQ_WR;
	attr->max_srq_sge = SIW2_MAX_SGE;
	attr->max_fast_reg_page_list_len = SIW2_MAX_FAST_REG_PAGES;
	attr->max_pkeys = 1;
	attr->atomic_cap = IB_ATOMIC_NONE;
	/* Lets `rdma link delete` remove a device created by `rdma link add`. */
	attr->kernel_cap_flags = IBK_ALLOW_USER_UNREG;
	return 0;
}

static int query_port(struct ib_device *ibdev, u32 port,
		      struct ib_port_attr *attr)
{
	struct net_device *ndev = to_siw2_dev(ibdev)->netdev;
	bool up = netif_running(ndev) && netif_carrier_ok(ndev);
	int ret;

	/* The core zeroed *attr. */
	ret = ib_get_eth_speed(ibdev, port, &attr->active_speed,
			       &attr->active_width);
	if (ret)
		return ret;
	attr->state = up ? IB_PORT_ACTIVE : IB_PORT_DOWN;
	attr->phys_state = up ? IB_PORT_PHYS_STATE_LINK_UP :
				IB_PORT_PHYS_STATE_DISABLED;
	attr->max_mtu = ib_mtu_int_to_enum(READ_ONCE(ndev->mtu));
	attr->active_mtu = attr->max_mtu;
	attr->gid_tbl_len = 1;
	attr->pkey_tbl_len = 1;
	attr->port_cap_flags = IB_PORT_CM_SUP | IB_PORT_DEVICE_MGMT_SUP;
	attr->max_msg_sz = U32_MAX;
	return 0;
}

static int get_port_immutable(struct ib_device *ibdev, u32 port,
			      struct ib_port_immutable *immutable)
{
	struct ib_port_attr attr;
	int ret;

	ret = ib_query_port(ibdev, port, &attr);
	if (ret)
		return ret;
	immutable->gid_tbl_len = attr.gid_tbl_len;
	immutable->pkey_tbl_len = attr.pkey_tbl_len;
	immutable->core_cap_flags = RDMA_CORE_PORT_IWARP;
	return 0;
}

/*
 * On iWARP the rdma_cm finds the device for a source address by comparing
 * the netdev's hardware address, zero padded to 16 octets, with the GID
 * table (rdma_addr_gid_offset() is 0 for Ethernet). The GID is therefore the
 * MAC followed by zeros.
 */
static int query_gid(struct ib_device *ibdev, u32 port, int index,
		     union ib_gid *gid)
{
	struct net_device *ndev = to_siw2_dev(ibdev)->netdev;

	if (index != 0)
		return -EINVAL;
	memset(gid, 0, sizeof(*gid));
	memcpy(gid->raw, ndev->dev_addr,
	       min_t(unsigned int, ndev->addr_len, sizeof(gid->raw)));
	return 0;
}

static int query_pkey(struct ib_device *ibdev, u32 port, u16 index, u16 *pkey)
{
	if (index != 0)
		return -EINVAL;
	*pkey = 0xffff;
	return 0;
}

static int alloc_ucontext(struct ib_ucontext *uctx, struct ib_udata *udata)
{
	struct siw2_uresp_alloc_ctx uresp = {
		.abi_version = SIW2_ABI_VERSION,
	};
	int ret;

	if (udata->outlen < sizeof(uresp))
		return -EINVAL;
	ret = ib_copy_to_udata(udata, &uresp, sizeof(uresp));
	if (ret)
		return ret;
	siw2_obj_created(SIW2_OBJ_UCONTEXT);
	return 0;
}

static void dealloc_ucontext(struct ib_ucontext *uctx)
{
	siw2_obj_destroyed(SIW2_OBJ_UCONTEXT);
}

static int alloc_pd(struct ib_pd *pd, struct ib_udata *udata)
{
	siw2_obj_created(SIW2_OBJ_PD);
	return 0;
}

static int dealloc_pd(struct ib_pd *pd, struct ib_udata *udata)
{
	siw2_obj_destroyed(SIW2_OBJ_PD);
	return 0;
}

/*
 * Queue pairs, completion queues and memory regions are mandatory entries of
 * an ib_device; until the engines land they refuse honestly.
 */
static int create_qp(struct ib_qp *qp, struct ib_qp_init_attr *init,
		     struct ib_udata *udata)
{
	return -EOPNOTSUPP;
}

static int modify_qp(struct ib_qp *qp, struct ib_qp_attr *attr, int mask,
		     struct ib_udata *udata)
{
	return -EOPNOTSUPP;
}

static int destroy_qp(struct ib_qp *qp, struct ib_udata *udata)
{
	return 0;
}

static int post_send(struct ib_qp *qp, const struct ib_send_wr *wr,
		     const struct ib_send_wr **bad_wr)
{
	*bad_wr = wr;
	return -EOPNOTSUPP;
}

static int post_recv(struct ib_qp *qp, const struct ib_recv_wr *wr,
		     const struct ib_recv_wr **bad_wr)
{
	*bad_wr = wr;
	return -EOPNOTSUPP;
}

static int create_cq(struct ib_cq *cq, const struct ib_cq_init_attr *attr,
		     SIW2_CREATE_CQ_UARG)
{
	return -EOPNOTSUPP;
}

static int destroy_cq(struct ib_cq *cq, struct ib_udata *udata)
{
	return 0;
}

static int poll_cq(struct ib_cq *cq, int num, struct ib_wc *wc)
{
	return 0;
}

static int req_notify_cq(struct ib_cq *cq, enum ib_cq_notify_flags flags)
{
	return -EOPNOTSUPP;
}

static struct ib_mr *get_dma_mr(struct ib_pd *pd, int access)
{
	return ERR_PTR(-EOPNOTSUPP);
}

static struct ib_mr *reg_user_mr(struct ib_pd *pd, u64 start, u64 len,
				 u64 iova, int access, struct ib_udata *udata)
{
	return ERR_PTR(-EOPNOTSUPP);
}

static int dereg_mr(struct ib_mr *mr, struct ib_udata *udata)
{
	return 0;
}

struct siw2_qp_stub {
	struct ib_qp base;
};

struct siw2_cq_stub {
	struct ib_cq base;
};

const struct ib_device_ops siw2_verbs_ops = {
	.query_device = query_device,
	.query_port = query_port,
	.get_port_immutable = get_port_immutable,
	.query_gid = query_gid,
	.query_pkey = query_pkey,
	.alloc_ucontext = alloc_ucontext,
	.dealloc_ucontext = dealloc_ucontext,
	.alloc_pd = alloc_pd,
	.dealloc_pd = dealloc_pd,
	.create_qp = create_qp,
	.modify_qp = modify_qp,
	.destroy_qp = destroy_qp,
	.post_send = post_send,
	.post_recv = post_recv,
	.create_cq = create_cq,
	.destroy_cq = destroy_cq,
	.poll_cq = poll_cq,
	.req_notify_cq = req_notify_cq,
	.get_dma_mr = get_dma_mr,
	.reg_user_mr = reg_user_mr,
	.dereg_mr = dereg_mr,

	INIT_RDMA_OBJ_SIZE(ib_ucontext, siw2_ucontext, base),
	INIT_RDMA_OBJ_SIZE(ib_pd, siw2_pd, base),
	INIT_RDMA_OBJ_SIZE(ib_qp, siw2_qp_stub, base),
	INIT_RDMA_OBJ_SIZE(ib_cq, siw2_cq_stub, base),
};
