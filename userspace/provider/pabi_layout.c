// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Layout pins for pabi.h and pabi-v<PABI>.h.
 *
 * The numbers below were measured, not derived: a throwaway program built
 * against each supported release's own driver.h and generated kern-abi
 * headers (v39 to v56, v59 to v61, v64; x86_64) printed offsetof()/sizeof()
 * for every struct pabi.h re-declares. Most are the same in every release
 * and are pinned once; the op table is pinned per generation, and what
 * moved inside a generation per release. Compiling this file re-checks
 * pabi.h against them, so an edit that reorders verbs_context_ops, drops a
 * member, or lets a command struct drift from the kernel uAPI header fails
 * the build instead of corrupting the library's op table or the uverbs
 * command stream at run time; tests/pabi-check.py checks the same pins
 * against a release tree's headers.
 *
 * The file emits no code; it is a compile-time test only.
 */
#include "pabi.h"

#define PABI_OFF(type, member, off)					\
	static_assert(offsetof(struct type, member) == (off),		\
		      "rdma-core layout: offset of " #type "." #member)
#define PABI_SIZE(type, size)						\
	static_assert(sizeof(struct type) == (size),			\
		      "rdma-core layout: size of " #type)

static_assert(sizeof(void *) == 8 && sizeof(long) == 8,
	      "the pinned numbers are for LP64 (x86_64)");

/*
 * verbs_context_ops, per generation. The total size catches an extra
 * member, the offsets a missing or misplaced one.
 */
#if PABI_VERSION == 34
PABI_OFF(verbs_context_ops, advise_mr, 0);
PABI_OFF(verbs_context_ops, alloc_dm, 8);
PABI_OFF(verbs_context_ops, alloc_mw, 16);
PABI_OFF(verbs_context_ops, alloc_null_mr, 24);
PABI_OFF(verbs_context_ops, alloc_parent_domain, 32);
PABI_OFF(verbs_context_ops, alloc_pd, 40);
PABI_OFF(verbs_context_ops, alloc_td, 48);
PABI_OFF(verbs_context_ops, async_event, 56);
PABI_OFF(verbs_context_ops, attach_counters_point_flow, 64);
PABI_OFF(verbs_context_ops, attach_mcast, 72);
PABI_OFF(verbs_context_ops, bind_mw, 80);
PABI_OFF(verbs_context_ops, close_xrcd, 88);
PABI_OFF(verbs_context_ops, cq_event, 96);
PABI_OFF(verbs_context_ops, create_ah, 104);
PABI_OFF(verbs_context_ops, create_counters, 112);
PABI_OFF(verbs_context_ops, create_cq, 120);
PABI_OFF(verbs_context_ops, create_cq_ex, 128);
PABI_OFF(verbs_context_ops, create_flow, 136);
PABI_OFF(verbs_context_ops, create_flow_action_esp, 144);
PABI_OFF(verbs_context_ops, create_qp, 152);
PABI_OFF(verbs_context_ops, create_qp_ex, 160);
PABI_OFF(verbs_context_ops, create_rwq_ind_table, 168);
PABI_OFF(verbs_context_ops, create_srq, 176);
PABI_OFF(verbs_context_ops, create_srq_ex, 184);
PABI_OFF(verbs_context_ops, create_wq, 192);
PABI_OFF(verbs_context_ops, dealloc_mw, 200);
PABI_OFF(verbs_context_ops, dealloc_pd, 208);
PABI_OFF(verbs_context_ops, dealloc_td, 216);
PABI_OFF(verbs_context_ops, dereg_mr, 224);
PABI_OFF(verbs_context_ops, destroy_ah, 232);
PABI_OFF(verbs_context_ops, destroy_counters, 240);
PABI_OFF(verbs_context_ops, destroy_cq, 248);
PABI_OFF(verbs_context_ops, destroy_flow, 256);
PABI_OFF(verbs_context_ops, destroy_flow_action, 264);
PABI_OFF(verbs_context_ops, destroy_qp, 272);
PABI_OFF(verbs_context_ops, destroy_rwq_ind_table, 280);
PABI_OFF(verbs_context_ops, destroy_srq, 288);
PABI_OFF(verbs_context_ops, destroy_wq, 296);
PABI_OFF(verbs_context_ops, detach_mcast, 304);
PABI_OFF(verbs_context_ops, free_context, 312);
PABI_OFF(verbs_context_ops, free_dm, 320);
PABI_OFF(verbs_context_ops, get_srq_num, 328);
PABI_OFF(verbs_context_ops, import_dm, 336);
PABI_OFF(verbs_context_ops, import_mr, 344);
PABI_OFF(verbs_context_ops, import_pd, 352);
PABI_OFF(verbs_context_ops, modify_cq, 360);
PABI_OFF(verbs_context_ops, modify_flow_action_esp, 368);
PABI_OFF(verbs_context_ops, modify_qp, 376);
PABI_OFF(verbs_context_ops, modify_qp_rate_limit, 384);
PABI_OFF(verbs_context_ops, modify_srq, 392);
PABI_OFF(verbs_context_ops, modify_wq, 400);
PABI_OFF(verbs_context_ops, open_qp, 408);
PABI_OFF(verbs_context_ops, open_xrcd, 416);
PABI_OFF(verbs_context_ops, poll_cq, 424);
PABI_OFF(verbs_context_ops, post_recv, 432);
PABI_OFF(verbs_context_ops, post_send, 440);
PABI_OFF(verbs_context_ops, post_srq_ops, 448);
PABI_OFF(verbs_context_ops, post_srq_recv, 456);
PABI_OFF(verbs_context_ops, query_device_ex, 464);
PABI_OFF(verbs_context_ops, query_ece, 472);
PABI_OFF(verbs_context_ops, query_port, 480);
PABI_OFF(verbs_context_ops, query_qp, 488);
PABI_OFF(verbs_context_ops, query_qp_data_in_order, 496);
PABI_OFF(verbs_context_ops, query_rt_values, 504);
PABI_OFF(verbs_context_ops, query_srq, 512);
PABI_OFF(verbs_context_ops, read_counters, 520);
PABI_OFF(verbs_context_ops, reg_dm_mr, 528);
PABI_OFF(verbs_context_ops, reg_dmabuf_mr, 536);
PABI_OFF(verbs_context_ops, reg_mr, 544);
PABI_OFF(verbs_context_ops, req_notify_cq, 552);
PABI_OFF(verbs_context_ops, rereg_mr, 560);
PABI_OFF(verbs_context_ops, resize_cq, 568);
PABI_OFF(verbs_context_ops, set_ece, 576);
PABI_OFF(verbs_context_ops, unimport_dm, 584);
PABI_OFF(verbs_context_ops, unimport_mr, 592);
PABI_OFF(verbs_context_ops, unimport_pd, 600);
PABI_SIZE(verbs_context_ops, 608);
#elif PABI_VERSION == 59
PABI_OFF(verbs_context_ops, advise_mr, 0);
PABI_OFF(verbs_context_ops, alloc_dm, 8);
PABI_OFF(verbs_context_ops, alloc_dmah, 16);
PABI_OFF(verbs_context_ops, alloc_mw, 24);
PABI_OFF(verbs_context_ops, alloc_null_mr, 32);
PABI_OFF(verbs_context_ops, alloc_parent_domain, 40);
PABI_OFF(verbs_context_ops, alloc_pd, 48);
PABI_OFF(verbs_context_ops, alloc_td, 56);
PABI_OFF(verbs_context_ops, async_event, 64);
PABI_OFF(verbs_context_ops, attach_counters_point_flow, 72);
PABI_OFF(verbs_context_ops, attach_mcast, 80);
PABI_OFF(verbs_context_ops, bind_mw, 88);
PABI_OFF(verbs_context_ops, close_xrcd, 96);
PABI_OFF(verbs_context_ops, cq_event, 104);
PABI_OFF(verbs_context_ops, create_ah, 112);
PABI_OFF(verbs_context_ops, create_counters, 120);
PABI_OFF(verbs_context_ops, create_cq, 128);
PABI_OFF(verbs_context_ops, create_cq_ex, 136);
PABI_OFF(verbs_context_ops, create_flow, 144);
PABI_OFF(verbs_context_ops, create_flow_action_esp, 152);
PABI_OFF(verbs_context_ops, create_qp, 160);
PABI_OFF(verbs_context_ops, create_qp_ex, 168);
PABI_OFF(verbs_context_ops, create_rwq_ind_table, 176);
PABI_OFF(verbs_context_ops, create_srq, 184);
PABI_OFF(verbs_context_ops, create_srq_ex, 192);
PABI_OFF(verbs_context_ops, create_wq, 200);
PABI_OFF(verbs_context_ops, dealloc_dmah, 208);
PABI_OFF(verbs_context_ops, dealloc_mw, 216);
PABI_OFF(verbs_context_ops, dealloc_pd, 224);
PABI_OFF(verbs_context_ops, dealloc_td, 232);
PABI_OFF(verbs_context_ops, dereg_mr, 240);
PABI_OFF(verbs_context_ops, destroy_ah, 248);
PABI_OFF(verbs_context_ops, destroy_counters, 256);
PABI_OFF(verbs_context_ops, destroy_cq, 264);
PABI_OFF(verbs_context_ops, destroy_flow, 272);
PABI_OFF(verbs_context_ops, destroy_flow_action, 280);
PABI_OFF(verbs_context_ops, destroy_qp, 288);
PABI_OFF(verbs_context_ops, destroy_rwq_ind_table, 296);
PABI_OFF(verbs_context_ops, destroy_srq, 304);
PABI_OFF(verbs_context_ops, destroy_wq, 312);
PABI_OFF(verbs_context_ops, detach_mcast, 320);
PABI_OFF(verbs_context_ops, free_context, 328);
PABI_OFF(verbs_context_ops, free_dm, 336);
PABI_OFF(verbs_context_ops, get_srq_num, 344);
PABI_OFF(verbs_context_ops, import_dm, 352);
PABI_OFF(verbs_context_ops, import_mr, 360);
PABI_OFF(verbs_context_ops, import_pd, 368);
PABI_OFF(verbs_context_ops, modify_cq, 376);
PABI_OFF(verbs_context_ops, modify_flow_action_esp, 384);
PABI_OFF(verbs_context_ops, modify_qp, 392);
PABI_OFF(verbs_context_ops, modify_qp_rate_limit, 400);
PABI_OFF(verbs_context_ops, modify_srq, 408);
PABI_OFF(verbs_context_ops, modify_wq, 416);
PABI_OFF(verbs_context_ops, open_qp, 424);
PABI_OFF(verbs_context_ops, open_xrcd, 432);
PABI_OFF(verbs_context_ops, poll_cq, 440);
PABI_OFF(verbs_context_ops, post_recv, 448);
PABI_OFF(verbs_context_ops, post_send, 456);
PABI_OFF(verbs_context_ops, post_srq_ops, 464);
PABI_OFF(verbs_context_ops, post_srq_recv, 472);
PABI_OFF(verbs_context_ops, query_device_ex, 480);
PABI_OFF(verbs_context_ops, query_ece, 488);
PABI_OFF(verbs_context_ops, query_port, 496);
PABI_OFF(verbs_context_ops, query_qp, 504);
PABI_OFF(verbs_context_ops, query_qp_data_in_order, 512);
PABI_OFF(verbs_context_ops, query_rt_values, 520);
PABI_OFF(verbs_context_ops, query_srq, 528);
PABI_OFF(verbs_context_ops, read_counters, 536);
PABI_OFF(verbs_context_ops, reg_dm_mr, 544);
PABI_OFF(verbs_context_ops, reg_dmabuf_mr, 552);
PABI_OFF(verbs_context_ops, reg_mr, 560);
PABI_OFF(verbs_context_ops, reg_mr_ex, 568);
PABI_OFF(verbs_context_ops, req_notify_cq, 576);
PABI_OFF(verbs_context_ops, rereg_mr, 584);
PABI_OFF(verbs_context_ops, resize_cq, 592);
PABI_OFF(verbs_context_ops, set_ece, 600);
PABI_OFF(verbs_context_ops, unimport_dm, 608);
PABI_OFF(verbs_context_ops, unimport_mr, 616);
PABI_OFF(verbs_context_ops, unimport_pd, 624);
PABI_SIZE(verbs_context_ops, 632);
#elif PABI_VERSION == 64
PABI_OFF(verbs_context_ops, advise_mr, 0);
PABI_OFF(verbs_context_ops, alloc_buf, 8);
PABI_OFF(verbs_context_ops, alloc_dm, 16);
PABI_OFF(verbs_context_ops, alloc_dmah, 24);
PABI_OFF(verbs_context_ops, alloc_mw, 32);
PABI_OFF(verbs_context_ops, alloc_null_mr, 40);
PABI_OFF(verbs_context_ops, alloc_parent_domain, 48);
PABI_OFF(verbs_context_ops, alloc_pd, 56);
PABI_OFF(verbs_context_ops, alloc_td, 64);
PABI_OFF(verbs_context_ops, async_event, 72);
PABI_OFF(verbs_context_ops, attach_counters_point_flow, 80);
PABI_OFF(verbs_context_ops, attach_mcast, 88);
PABI_OFF(verbs_context_ops, bind_mw, 96);
PABI_OFF(verbs_context_ops, close_xrcd, 104);
PABI_OFF(verbs_context_ops, cq_event, 112);
PABI_OFF(verbs_context_ops, create_ah, 120);
PABI_OFF(verbs_context_ops, create_counters, 128);
PABI_OFF(verbs_context_ops, create_cq, 136);
PABI_OFF(verbs_context_ops, create_cq_ex, 144);
PABI_OFF(verbs_context_ops, create_flow, 152);
PABI_OFF(verbs_context_ops, create_flow_action_esp, 160);
PABI_OFF(verbs_context_ops, create_qp, 168);
PABI_OFF(verbs_context_ops, create_qp_ex, 176);
PABI_OFF(verbs_context_ops, create_rwq_ind_table, 184);
PABI_OFF(verbs_context_ops, create_srq, 192);
PABI_OFF(verbs_context_ops, create_srq_ex, 200);
PABI_OFF(verbs_context_ops, create_wq, 208);
PABI_OFF(verbs_context_ops, dealloc_dmah, 216);
PABI_OFF(verbs_context_ops, dealloc_mw, 224);
PABI_OFF(verbs_context_ops, dealloc_pd, 232);
PABI_OFF(verbs_context_ops, dealloc_td, 240);
PABI_OFF(verbs_context_ops, dereg_mr, 248);
PABI_OFF(verbs_context_ops, destroy_ah, 256);
PABI_OFF(verbs_context_ops, destroy_counters, 264);
PABI_OFF(verbs_context_ops, destroy_cq, 272);
PABI_OFF(verbs_context_ops, destroy_flow, 280);
PABI_OFF(verbs_context_ops, destroy_flow_action, 288);
PABI_OFF(verbs_context_ops, destroy_qp, 296);
PABI_OFF(verbs_context_ops, destroy_rwq_ind_table, 304);
PABI_OFF(verbs_context_ops, destroy_srq, 312);
PABI_OFF(verbs_context_ops, destroy_wq, 320);
PABI_OFF(verbs_context_ops, detach_mcast, 328);
PABI_OFF(verbs_context_ops, dm_export_dmabuf_fd, 336);
PABI_OFF(verbs_context_ops, free_buf, 344);
PABI_OFF(verbs_context_ops, free_context, 352);
PABI_OFF(verbs_context_ops, free_dm, 360);
PABI_OFF(verbs_context_ops, get_srq_num, 368);
PABI_OFF(verbs_context_ops, import_dm, 376);
PABI_OFF(verbs_context_ops, import_mr, 384);
PABI_OFF(verbs_context_ops, import_pd, 392);
PABI_OFF(verbs_context_ops, modify_cq, 400);
PABI_OFF(verbs_context_ops, modify_flow_action_esp, 408);
PABI_OFF(verbs_context_ops, modify_qp, 416);
PABI_OFF(verbs_context_ops, modify_qp_rate_limit, 424);
PABI_OFF(verbs_context_ops, modify_srq, 432);
PABI_OFF(verbs_context_ops, modify_wq, 440);
PABI_OFF(verbs_context_ops, open_qp, 448);
PABI_OFF(verbs_context_ops, open_xrcd, 456);
PABI_OFF(verbs_context_ops, poll_cq, 464);
PABI_OFF(verbs_context_ops, post_recv, 472);
PABI_OFF(verbs_context_ops, post_send, 480);
PABI_OFF(verbs_context_ops, post_srq_ops, 488);
PABI_OFF(verbs_context_ops, post_srq_recv, 496);
PABI_OFF(verbs_context_ops, query_device_ex, 504);
PABI_OFF(verbs_context_ops, query_ece, 512);
PABI_OFF(verbs_context_ops, query_port, 520);
PABI_OFF(verbs_context_ops, query_port_speed, 528);
PABI_OFF(verbs_context_ops, query_qp, 536);
PABI_OFF(verbs_context_ops, query_qp_data_in_order, 544);
PABI_OFF(verbs_context_ops, query_rt_values, 552);
PABI_OFF(verbs_context_ops, query_srq, 560);
PABI_OFF(verbs_context_ops, read_counters, 568);
PABI_OFF(verbs_context_ops, reg_dm_mr, 576);
PABI_OFF(verbs_context_ops, reg_dmabuf_mr, 584);
PABI_OFF(verbs_context_ops, reg_mr, 592);
PABI_OFF(verbs_context_ops, reg_mr_ex, 600);
PABI_OFF(verbs_context_ops, req_notify_cq, 608);
PABI_OFF(verbs_context_ops, rereg_mr, 616);
PABI_OFF(verbs_context_ops, resize_cq, 624);
PABI_OFF(verbs_context_ops, set_ece, 632);
PABI_OFF(verbs_context_ops, unimport_dm, 640);
PABI_OFF(verbs_context_ops, unimport_mr, 648);
PABI_OFF(verbs_context_ops, unimport_pd, 656);
PABI_SIZE(verbs_context_ops, 664);
#endif

/* verbs_device_ops */
PABI_OFF(verbs_device_ops, name, 0);
PABI_OFF(verbs_device_ops, match_min_abi_version, 8);
PABI_OFF(verbs_device_ops, match_max_abi_version, 12);
PABI_OFF(verbs_device_ops, match_table, 16);
PABI_OFF(verbs_device_ops, static_providers, 24);
PABI_OFF(verbs_device_ops, match_device, 32);
PABI_OFF(verbs_device_ops, alloc_context, 40);
PABI_OFF(verbs_device_ops, import_context, 48);
PABI_OFF(verbs_device_ops, alloc_device, 56);
PABI_OFF(verbs_device_ops, uninit_device, 64);
PABI_SIZE(verbs_device_ops, 72);

/* verbs_device */
PABI_OFF(verbs_device, device, 0);
PABI_OFF(verbs_device, ops, 664);
PABI_OFF(verbs_device, refcount, 672);
PABI_OFF(verbs_device, entry, 680);
PABI_OFF(verbs_device, sysfs, 696);
PABI_OFF(verbs_device, core_support, 704);
PABI_SIZE(verbs_device, 712);

/* verbs_sysfs_dev */
PABI_OFF(verbs_sysfs_dev, entry, 0);
PABI_OFF(verbs_sysfs_dev, provider_data, 16);
PABI_OFF(verbs_sysfs_dev, match, 24);
PABI_OFF(verbs_sysfs_dev, flags, 32);
PABI_OFF(verbs_sysfs_dev, sysfs_name, 36);
PABI_OFF(verbs_sysfs_dev, sysfs_cdev, 104);
PABI_OFF(verbs_sysfs_dev, ibdev_name, 112);
PABI_OFF(verbs_sysfs_dev, ibdev_path, 176);
PABI_OFF(verbs_sysfs_dev, modalias, 432);
PABI_OFF(verbs_sysfs_dev, node_guid, 944);
PABI_OFF(verbs_sysfs_dev, driver_id, 952);
PABI_OFF(verbs_sysfs_dev, node_type, 956);
PABI_OFF(verbs_sysfs_dev, ibdev_idx, 960);
PABI_OFF(verbs_sysfs_dev, num_ports, 964);
PABI_OFF(verbs_sysfs_dev, abi_ver, 968);
PABI_OFF(verbs_sysfs_dev, time_created, 976);
PABI_SIZE(verbs_sysfs_dev, 992);

/* verbs_match_ent */
PABI_OFF(verbs_match_ent, driver_data, 0);
PABI_OFF(verbs_match_ent, u, 8);
PABI_OFF(verbs_match_ent, vendor, 16);
PABI_OFF(verbs_match_ent, device, 18);
PABI_OFF(verbs_match_ent, kind, 20);
PABI_SIZE(verbs_match_ent, 24);

/* verbs_mr */
PABI_OFF(verbs_mr, ibv_mr, 0);
PABI_OFF(verbs_mr, mr_type, 48);
PABI_OFF(verbs_mr, access, 52);
PABI_SIZE(verbs_mr, 56);

/* verbs_xrcd */
PABI_OFF(verbs_xrcd, xrcd, 0);
PABI_OFF(verbs_xrcd, comp_mask, 8);
PABI_OFF(verbs_xrcd, handle, 12);
PABI_SIZE(verbs_xrcd, 16);

/* verbs_srq */
PABI_OFF(verbs_srq, srq, 0);
PABI_OFF(verbs_srq, srq_type, 128);
PABI_OFF(verbs_srq, xrcd, 136);
PABI_OFF(verbs_srq, cq, 144);
PABI_OFF(verbs_srq, srq_num, 152);
PABI_SIZE(verbs_srq, 160);

/* verbs_qp */
PABI_OFF(verbs_qp, qp, 0);
PABI_OFF(verbs_qp, qp_ex, 0);
/* ibv_qp_ex (public, verbs.h) grew in v44 and again in v45. */
#if SIW2_RDMA_CORE < 44
PABI_OFF(verbs_qp, comp_mask, 344);
PABI_OFF(verbs_qp, xrcd, 352);
PABI_SIZE(verbs_qp, 360);
#elif SIW2_RDMA_CORE == 44
PABI_OFF(verbs_qp, comp_mask, 352);
PABI_OFF(verbs_qp, xrcd, 360);
PABI_SIZE(verbs_qp, 368);
#else
PABI_OFF(verbs_qp, comp_mask, 360);
PABI_OFF(verbs_qp, xrcd, 368);
PABI_SIZE(verbs_qp, 376);
#endif

/* verbs_cq */
PABI_OFF(verbs_cq, cq, 0);
PABI_OFF(verbs_cq, cq_ex, 0);
PABI_SIZE(verbs_cq, 288);

/*
 * Command structs (header + core payload) and core responses. These must
 * equal the library's sizes exactly: it takes driver data to start at its
 * own sizeof() and computes driver lengths as size passed minus its sizeof.
 */
PABI_SIZE(pabi_ex_hdr, 24);
PABI_SIZE(ibv_get_context, 16);
PABI_SIZE(ibv_query_port, 24);
PABI_SIZE(ibv_alloc_pd, 16);
PABI_SIZE(ibv_alloc_mw, 24);
PABI_SIZE(ibv_reg_mr, 48);
PABI_SIZE(ibv_create_cq, 40);
PABI_SIZE(ibv_resize_cq, 24);
PABI_SIZE(ibv_create_qp, 64);
PABI_SIZE(ibv_modify_qp, 120);
PABI_SIZE(ibv_query_qp, 24);
PABI_SIZE(ibv_create_srq, 40);
PABI_SIZE(ibv_modify_srq, 24);
PABI_SIZE(ibv_query_srq, 24);
PABI_SIZE(ibv_create_cq_ex, 56);
PABI_SIZE(ibv_create_qp_ex, 88);
PABI_SIZE(ib_uverbs_get_context_resp, 8);
PABI_SIZE(ib_uverbs_ex_query_device_resp, 304);
PABI_SIZE(ib_uverbs_alloc_pd_resp, 4);
PABI_SIZE(ib_uverbs_reg_mr_resp, 12);
PABI_SIZE(ib_uverbs_create_cq_resp, 8);
PABI_SIZE(ib_uverbs_ex_create_cq_resp, 16);
PABI_SIZE(ib_uverbs_resize_cq_resp, 8);
PABI_SIZE(ib_uverbs_create_qp_resp, 32);
PABI_SIZE(ib_uverbs_ex_create_qp_resp, 40);
PABI_SIZE(ib_uverbs_create_srq_resp, 16);

/*
 * Public in verbs.h, pinned anyway: siw2's context embeds it, and it grows
 * towards lower addresses (new members go first), so a provider built for
 * a smaller one would have the library write below its context.
 */
#if SIW2_RDMA_CORE <= 56
PABI_SIZE(verbs_context, 648);
#elif SIW2_RDMA_CORE <= 61
PABI_SIZE(verbs_context, 672);
#else
PABI_SIZE(verbs_context, 696);
#endif
