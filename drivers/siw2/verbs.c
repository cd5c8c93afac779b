// SPDX-License-Identifier: GPL-2.0
/*
 * Device, port, context and protection domain verbs, and the table that
 * wires every verb to the file that implements it (cq.c, srq.c, qp.c,
 * mr.c, cm.c and listen.c for the iWARP CM; queue.c maps the shared
 * rings). MRs are not in the table of object sizes: the core leaves their
 * allocation to the driver.
 */
#include <linux/etherdevice.h>
#include <rdma/ib_mad.h>
#include <rdma/ib_user_verbs.h>
#include <rdma/ib_verbs.h>
#include <rdma/iw_cm.h>

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
	attr->max_mw = SIW2_MAX_MW;
	attr->max_pd = SIW2_MAX_PD;
	attr->max_qp_rd_atom = SIW2_MAX_IRD;
	attr->max_qp_init_rd_atom = SIW2_MAX_ORD;
	attr->max_res_rd_atom = SIW2_MAX_QP * SIW2_MAX_IRD;
	attr->max_srq = SIW2_MAX_SRQ;
	attr->max_srq_wr = SIW2_MAX_SRQ_WR;
	attr->max_srq_sge = SIW2_MAX_SGE;
	attr->max_fast_reg_page_list_len = SIW2_MAX_FAST_REG_PAGES;
	attr->max_pkeys = 1;
	/*
	 * RFC 7306 atomics are atomic with respect to each other on this
	 * device (sdev->atomic_lock), not to the CPU's own accesses.
	 */
	attr->atomic_cap = IB_ATOMIC_HCA;
	/*
	 * Fast registration, Local Invalidate and Send with Invalidate;
	 * memory windows of type 1 and 2, the type 2 ones tied to the QP
	 * they are bound through (2B, mr.c); a port event on every carrier
	 * change of the netdev (device.c); the node GUID as sys_image_guid.
	 */
	attr->device_cap_flags = IB_DEVICE_MEM_MGT_EXTENSIONS |
				 IB_DEVICE_MEM_WINDOW |
				 IB_DEVICE_MEM_WINDOW_TYPE_2B |
				 IB_DEVICE_PORT_ACTIVE_EVENT |
				 IB_DEVICE_SYS_IMAGE_GUID;
	/* Lets `rdma link delete` remove a device created by `rdma link add`. */
	attr->kernel_cap_flags = IBK_ALLOW_USER_UNREG;
	/* On-demand paging MRs (odp.c) for every RC operation. */
	if (SIW2_ODP) {
		attr->kernel_cap_flags |= IBK_ON_DEMAND_PAGING;
		attr->odp_caps.general_caps = IB_ODP_SUPPORT;
		attr->odp_caps.per_transport_caps.rc_odp_caps =
			IB_ODP_SUPPORT_SEND | IB_ODP_SUPPORT_RECV |
			IB_ODP_SUPPORT_WRITE | IB_ODP_SUPPORT_READ |
			IB_ODP_SUPPORT_ATOMIC;
	}
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
	attr->max_vl_num = 1;
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

/*
 * The device goes away (link deleted, netdev gone, module unloaded) while
 * a process still holds this context. The core has destroyed every object
 * of the context by now and answers the process's verbs with -EIO; its
 * async event file delivers IB_EVENT_DEVICE_FATAL. What the process still
 * maps are rings in kernel memory whose pages it holds a reference to
 * (siw2_queue_mmap()), so it keeps dead rings, never freed memory, and
 * nothing is left for siw2 to revoke. That this op exists is what counts:
 * without it the core's removal of the device waits until every such
 * process has closed its file, and a process that is told nothing (one
 * without the RDMA CM, or any when rdma_cm's removal comes after uverbs')
 * keeps `rdma link delete` or the netdev's removal blocked while it runs.
 */
static void disassociate_ucontext(struct ib_ucontext *uctx)
{
}

static int alloc_pd(struct ib_pd *pd, struct ib_udata *udata)
{
	struct siw2_device *sdev = to_siw2_dev(pd->device);

	if (atomic_inc_return(&sdev->num_pd) > SIW2_MAX_PD) {
		atomic_dec(&sdev->num_pd);
		return -ENOMEM;
	}
	siw2_obj_created(SIW2_OBJ_PD);
	return 0;
}

static int dealloc_pd(struct ib_pd *pd, struct ib_udata *udata)
{
	atomic_dec(&to_siw2_dev(pd->device)->num_pd);
	siw2_obj_destroyed(SIW2_OBJ_PD);
	return 0;
}

/*
 * The per-device state of the verbs objects, set up right after the device
 * is allocated and torn down in dealloc_driver, after the core destroyed
 * every object.
 */
void siw2_verbs_init_device(struct siw2_device *sdev)
{
	/*
	 * The core enables most uverbs write commands itself; these it
	 * leaves to drivers. Posting without work requests is the doorbell
	 * of a user QP (see the uAPI header).
	 */
	sdev->ibdev.uverbs_cmd_mask |= BIT_ULL(IB_USER_VERBS_CMD_POST_SEND) |
				       BIT_ULL(IB_USER_VERBS_CMD_POST_RECV);
	/* siw2_qp_iw_get() looks up with interrupts off. */
	xa_init_flags(&sdev->qps, XA_FLAGS_ALLOC | XA_FLAGS_LOCK_IRQ);
	spin_lock_init(&sdev->atomic_lock);
	xa_init_flags(&sdev->mrs, XA_FLAGS_ALLOC);
	sdev->next_qpn = SIW2_QPN_MIN;
	sdev->next_stag = 1;
}

void siw2_verbs_uninit_device(struct siw2_device *sdev)
{
	siw2_cm_uninit_device(sdev);
	WARN_ON(!xa_empty(&sdev->qps));
	WARN_ON(!xa_empty(&sdev->mrs));
	xa_destroy(&sdev->qps);
	xa_destroy(&sdev->mrs);
}

const struct ib_device_ops siw2_verbs_ops = {
	.query_device = query_device,
	.query_port = query_port,
	.get_port_immutable = get_port_immutable,
	.query_gid = query_gid,
	.query_pkey = query_pkey,
	.alloc_ucontext = alloc_ucontext,
	.dealloc_ucontext = dealloc_ucontext,
	.disassociate_ucontext = disassociate_ucontext,
	.mmap = siw2_queue_mmap,
	.mmap_free = siw2_queue_mmap_free,
	.alloc_pd = alloc_pd,
	.dealloc_pd = dealloc_pd,

	.create_cq = siw2_cq_create,
	.destroy_cq = siw2_cq_destroy,
	.poll_cq = siw2_cq_poll,
	.req_notify_cq = siw2_cq_req_notify,
	.resize_cq = siw2_cq_resize,

	.create_srq = siw2_srq_create,
	.modify_srq = siw2_srq_modify,
	.query_srq = siw2_srq_query,
	.destroy_srq = siw2_srq_destroy,
	.post_srq_recv = siw2_srq_post_recv,

	.create_qp = siw2_qp_create,
	.modify_qp = siw2_qp_modify,
	.query_qp = siw2_qp_query,
	.destroy_qp = siw2_qp_destroy,
	.post_send = siw2_qp_post_send,
	.post_recv = siw2_qp_post_recv,
	.iw_get_qp = siw2_qp_iw_get,
	.iw_add_ref = siw2_qp_iw_add_ref,
	.iw_rem_ref = siw2_qp_iw_rem_ref,
	.iw_connect = siw2_cm_connect,
	.iw_accept = siw2_cm_accept,
	.iw_reject = siw2_cm_reject,
	.iw_create_listen = siw2_cm_create_listen,
	.iw_destroy_listen = siw2_cm_destroy_listen,

	.get_dma_mr = siw2_mr_get_dma,
	.reg_user_mr = siw2_mr_reg_user,
	.advise_mr = siw2_odp_advise_mr,
	.alloc_mr = siw2_mr_alloc,
	.map_mr_sg = siw2_mr_map_sg,
	.dereg_mr = siw2_mr_dereg,
	.alloc_mw = siw2_mw_alloc,
	.dealloc_mw = siw2_mw_dealloc,

	INIT_RDMA_OBJ_SIZE(ib_ucontext, siw2_ucontext, base),
	INIT_RDMA_OBJ_SIZE(ib_pd, siw2_pd, base),
	INIT_RDMA_OBJ_SIZE(ib_cq, siw2_cq, base),
	INIT_RDMA_OBJ_SIZE(ib_srq, siw2_srq, base),
	INIT_RDMA_OBJ_SIZE(ib_qp, siw2_qp, base),
	INIT_RDMA_OBJ_SIZE(ib_mw, siw2_mw, base),
};
