/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * libibverbs' private provider ABI, for the rdma-core release libsiw2 is
 * built against (SIW2_RDMA_CORE, its major version, set by the Makefile).
 *
 * A provider is a dlopen()ed plugin that libibverbs calls through structs it
 * shares with the provider by layout, and that calls back into libibverbs
 * through the symbols tagged IBVERBS_PRIVATE_<PABI>. rdma-core never
 * installs the header declaring them (libibverbs/driver.h plus the
 * generated kern-abi.h), so this file declares the subset libsiw2 uses.
 *
 * The PABI number does not pin these layouts: it names a generation of
 * them, and libibverbs has changed layouts inside one (PABI 34 spans
 * releases 34 to 56 and its op table grew at v36; v62 inserted ops into
 * PABI 59's table). A build is therefore for one release: this file holds
 * what every supported release shares (the op table marks the members a
 * later generation added), pabi-v<PABI>.h what one generation has of its
 * own (command wrappers whose parameters changed), pabi_layout.c the sizes
 * and offsets measured on each release's own headers, and siw2.c refuses, at load time, a libibverbs of another
 * release than the one it was built for. Supported: rdma-core 39 to 56
 * (PABI 34), 59 to 61 (PABI 59) and 64 (PABI 64).
 *
 * Return convention of every ibv_cmd_*() below: 0, or a positive errno
 * value; errno itself is not reliably set.
 */
#ifndef SIW2_PABI_H
#define SIW2_PABI_H

#include <infiniband/verbs.h>

#include <assert.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <time.h>

#include <rdma/ib_user_verbs.h>

/* The library's objects are embedded in the provider's; this gets back. */
#define pabi_container_of(ptr, type, member)				\
	((type *)((char *)(ptr) - offsetof(type, member)))

/* ---------------------------------------------------------------------------
 * Core objects the library and provider share by layout (driver.h).
 * ---------------------------------------------------------------------------
 */

/* ccan's doubly linked list node, embedded in library-owned objects. */
struct pabi_list_node {
	struct pabi_list_node *next;
	struct pabi_list_node *prev;
};

enum ibv_mr_type {
	IBV_MR_TYPE_MR,
	IBV_MR_TYPE_NULL_MR,
	IBV_MR_TYPE_IMPORTED_MR,
	IBV_MR_TYPE_DMABUF_MR,
};

/* The library's wrapper around every MR; ibv_cmd_reg_mr() fills it. */
struct verbs_mr {
	struct ibv_mr ibv_mr;
	enum ibv_mr_type mr_type;
	int access;
};

struct verbs_xrcd {
	struct ibv_xrcd xrcd;
	uint32_t comp_mask;
	uint32_t handle;
};

/* Used by ibv_cmd_create_srq_ex(); plain SRQs take a bare struct ibv_srq. */
struct verbs_srq {
	struct ibv_srq srq;
	enum ibv_srq_type srq_type;
	struct verbs_xrcd *xrcd;
	struct ibv_cq *cq;
	uint32_t srq_num;
};

/* verbs_qp.comp_mask bits */
enum {
	VERBS_QP_XRCD = 1 << 0,
	VERBS_QP_EX = 1 << 1,
};

/*
 * Wrapper the extended QP commands (ibv_cmd_create_qp_ex2()) fill. The
 * library hands &qp_ex to applications and converts back by container_of,
 * so the ibv_qp must sit at the start of the ibv_qp_ex.
 */
struct verbs_qp {
	union {
		struct ibv_qp qp;
		struct ibv_qp_ex qp_ex;
	};
	uint32_t comp_mask;
	struct verbs_xrcd *xrcd;
};

static_assert(offsetof(struct ibv_qp_ex, qp_base) == 0,
	      "ibv_qp_ex must begin with its ibv_qp");

/* Wrapper ibv_cmd_create_cq_ex() fills. */
struct verbs_cq {
	union {
		struct ibv_cq cq;
		struct ibv_cq_ex cq_ex;
	};
};

/* ---------------------------------------------------------------------------
 * Device discovery and registration (driver.h).
 * ---------------------------------------------------------------------------
 */

/* verbs_match_ent.kind */
enum {
	VERBS_MATCH_SENTINEL = 0,
	VERBS_MATCH_PCI = 1,
	VERBS_MATCH_MODALIAS = 2,
	VERBS_MATCH_DRIVER_ID = 3,
};

/* One entry of a match table; a table ends with a zeroed (SENTINEL) entry. */
struct verbs_match_ent {
	void *driver_data;
	union {
		const char *modalias;
		uint64_t driver_id;
	} u;
	uint16_t vendor;
	uint16_t device;
	uint8_t kind;
};

/* verbs_sysfs_dev.flags */
enum {
	VSYSFS_READ_MODALIAS = 1 << 0,
	VSYSFS_READ_NODE_GUID = 1 << 1,
};

/*
 * One uverbs device as the library found it (via netlink or sysfs).
 * Allocated and owned by libibverbs; a provider only reads it, so its
 * size is never relied on, but every field is declared for the offsets.
 * ibdev_path is "<sysfs>/class/infiniband/<ibdev_name>", already honouring
 * the SYSFS_PATH override.
 */
struct verbs_sysfs_dev {
	struct pabi_list_node entry;
	void *provider_data;
	const struct verbs_match_ent *match;
	unsigned int flags;
	char sysfs_name[IBV_SYSFS_NAME_MAX];
	dev_t sysfs_cdev;
	char ibdev_name[IBV_SYSFS_NAME_MAX];
	char ibdev_path[IBV_SYSFS_PATH_MAX];
	char modalias[512];
	uint64_t node_guid;
	uint32_t driver_id;
	enum ibv_node_type node_type;
	int ibdev_idx;
	uint32_t num_ports;
	uint32_t abi_ver;		/* the device's uverbs_abi_ver */
	struct timespec time_created;
};

struct verbs_device;

/*
 * A provider's entry points, registered once per process by its
 * constructor. Matching order in libibverbs: match_table (driver id, then
 * device name, then modalias), then match_device() if set, which has the
 * final word; then abi_ver is checked against [min, max].
 *
 * Pitfall (v44, and still in v64): for a device with a known rdma_driver_id, the library
 * walks every registered provider's match_table without a NULL check, so a
 * provider must always supply a table, if only a lone sentinel.
 */
struct verbs_device_ops {
	const char *name;

	uint32_t match_min_abi_version;
	uint32_t match_max_abi_version;
	const struct verbs_match_ent *match_table;
	const struct verbs_device_ops **static_providers;

	bool (*match_device)(struct verbs_sysfs_dev *sysfs_dev);

	struct verbs_context *(*alloc_context)(struct ibv_device *device,
					       int cmd_fd,
					       void *private_data);
	struct verbs_context *(*import_context)(struct ibv_device *device,
						int cmd_fd);

	struct verbs_device *(*alloc_device)(struct verbs_sysfs_dev *sysfs_dev);
	void (*uninit_device)(struct verbs_device *device);
};

/*
 * Per-device object: the provider allocates it (alloc_device, usually
 * embedded in a bigger struct) and the library fills everything but
 * core_support, then refcounts it; the last put calls uninit_device.
 */
struct verbs_device {
	struct ibv_device device;	/* first: ibv_device * casts to it */
	const struct verbs_device_ops *ops;
	atomic_int refcount;
	struct pabi_list_node entry;
	struct verbs_sysfs_dev *sysfs;
	uint64_t core_support;
};

static inline struct verbs_device *pabi_verbs_device(struct ibv_device *dev)
{
	return pabi_container_of(dev, struct verbs_device, device);
}

/* ---------------------------------------------------------------------------
 * Context (driver.h; struct verbs_context itself is public, verbs.h).
 * ---------------------------------------------------------------------------
 */


/*
 * Allocates @alloc_size zeroed bytes whose verbs_context sits at byte
 * offset (uintptr_t)@context_offset, takes a device reference and owns
 * @cmd_fd from then on (closed on failure too). @driver_id is an
 * enum rdma_driver_id. Returns the start of the allocation or NULL+errno.
 */
void *_verbs_init_and_alloc_context(struct ibv_device *device, int cmd_fd,
				    size_t alloc_size,
				    struct verbs_context *context_offset,
				    uint32_t driver_id);

/* Typed front end: @type embeds its struct verbs_context as @member. */
#define verbs_init_and_alloc_context(ibdev, cmd_fd, type, member, driver_id) \
	((type *)_verbs_init_and_alloc_context(				\
		(ibdev), (cmd_fd), sizeof(type),			\
		(struct verbs_context *)offsetof(type, member),		\
		(driver_id)))

/*
 * Undoes verbs_init_context(): frees the library's private part, closes
 * cmd_fd and async_fd, drops the device reference. The caller frees its
 * own allocation afterwards.
 */
void verbs_uninit_context(struct verbs_context *context);

struct verbs_context_ops;	/* below, after the generation's header */

/* Installs every non-NULL member of @ops; may be called more than once. */
void verbs_set_ops(struct verbs_context *vctx,
		   const struct verbs_context_ops *ops);

/* Initialises a provider-allocated CQ (only for CQs not made by ibv_cmd). */
void verbs_init_cq(struct ibv_cq *cq, struct ibv_context *context,
		   struct ibv_comp_channel *channel, void *cq_context);

/* ---------------------------------------------------------------------------
 * Command buffers (kern-abi.h).
 *
 * A command is the uverbs header followed by the kernel's core struct from
 * <rdma/ib_user_verbs.h> ("core_payload"). A provider with driver-private
 * input embeds the whole command as the first member of its own struct and
 * puts its payload right after; the library sends everything up to
 * cmd_size and locates the driver part at sizeof(command). Responses work
 * the same way with the kernel's core response struct, up to resp_size.
 * Sizes must equal the library's own (checked in pabi_layout.c): the
 * library subtracts its sizeof from the sizes passed in.
 * ---------------------------------------------------------------------------
 */

/* Header of the extended (_ex) write commands. */
struct pabi_ex_hdr {
	struct ib_uverbs_cmd_hdr hdr;
	struct ib_uverbs_ex_cmd_hdr ex_hdr;
};

#define PABI_CMD(name, kabi)						\
	struct name {							\
		struct ib_uverbs_cmd_hdr hdr;				\
		struct kabi core_payload;				\
	}

#define PABI_CMD_EX(name, kabi)						\
	struct name {							\
		struct pabi_ex_hdr hdr;					\
		struct kabi core_payload;				\
	}

PABI_CMD(ibv_get_context, ib_uverbs_get_context);
PABI_CMD(ibv_query_port, ib_uverbs_query_port);
PABI_CMD(ibv_alloc_pd, ib_uverbs_alloc_pd);
PABI_CMD(ibv_alloc_mw, ib_uverbs_alloc_mw);
PABI_CMD(ibv_reg_mr, ib_uverbs_reg_mr);
PABI_CMD(ibv_create_cq, ib_uverbs_create_cq);
PABI_CMD(ibv_resize_cq, ib_uverbs_resize_cq);
PABI_CMD(ibv_create_qp, ib_uverbs_create_qp);
PABI_CMD(ibv_modify_qp, ib_uverbs_modify_qp);
PABI_CMD(ibv_query_qp, ib_uverbs_query_qp);
PABI_CMD(ibv_create_srq, ib_uverbs_create_srq);
PABI_CMD(ibv_modify_srq, ib_uverbs_modify_srq);
PABI_CMD(ibv_query_srq, ib_uverbs_query_srq);
PABI_CMD_EX(ibv_create_cq_ex, ib_uverbs_ex_create_cq);
PABI_CMD_EX(ibv_create_qp_ex, ib_uverbs_ex_create_qp);

/*
 * Checks that a provider command or response wrapper @type has its driver
 * part @drv directly after the core part @core, with no padding anywhere:
 * the kernel finds driver data at exactly sizeof(core).
 */
#define PABI_ASSERT_DRV_LAYOUT(type, core, drv)				\
	static_assert(offsetof(type, drv) ==				\
			      sizeof(((type *)0)->core) &&		\
		      sizeof(type) == offsetof(type, drv) +		\
			      sizeof(((type *)0)->drv),			\
		      #type ": driver part not packed after core part")

/* ---------------------------------------------------------------------------
 * Command wrappers (driver.h, implemented in libibverbs/cmd*.c).
 * Driver data is optional: pass sizeof(core command/response) for none.
 * ---------------------------------------------------------------------------
 */

/* Device and context */
/*
 * Query device: @resp/@resp_size may be NULL to use an internal buffer;
 * otherwise *@resp_size must be sizeof(*@resp) and returns the length the
 * kernel filled (raw fields such as base.fw_ver come from it).
 */
int ibv_cmd_query_device_any(struct ibv_context *context,
			     const struct ibv_query_device_ex_input *input,
			     struct ibv_device_attr_ex *attr, size_t attr_size,
			     struct ib_uverbs_ex_query_device_resp *resp,
			     size_t *resp_size);
int ibv_cmd_query_port(struct ibv_context *context, uint8_t port_num,
		       struct ibv_port_attr *port_attr,
		       struct ibv_query_port *cmd, size_t cmd_size);

/* Protection domains: fill pd->handle and pd->context. */
int ibv_cmd_alloc_pd(struct ibv_context *context, struct ibv_pd *pd,
		     struct ibv_alloc_pd *cmd, size_t cmd_size,
		     struct ib_uverbs_alloc_pd_resp *resp, size_t resp_size);
int ibv_cmd_dealloc_pd(struct ibv_pd *pd);

/* Memory regions */
int ibv_cmd_reg_mr(struct ibv_pd *pd, void *addr, size_t length,
		   uint64_t hca_va, int access, struct verbs_mr *vmr,
		   struct ibv_reg_mr *cmd, size_t cmd_size,
		   struct ib_uverbs_reg_mr_resp *resp, size_t resp_size);
int ibv_cmd_dereg_mr(struct verbs_mr *vmr);
/*
 * UVERBS_METHOD_ADVISE_MR of the MR object: an ioctl() with no write()
 * form, so a kernel without the ioctl interface answers ENOTTY. The
 * library checks nothing but the SGE array's size (EINVAL beyond the 64
 * KiB an attribute carries).
 */
int ibv_cmd_advise_mr(struct ibv_pd *pd, enum ibv_advise_mr_advice advice,
		      uint32_t flags, struct ibv_sge *sg_list,
		      uint32_t num_sge);

/* Memory windows: fill mw->context, pd, rkey, handle and type. */
int ibv_cmd_alloc_mw(struct ibv_pd *pd, enum ibv_mw_type type,
		     struct ibv_mw *mw, struct ibv_alloc_mw *cmd,
		     size_t cmd_size,
		     struct ib_uverbs_alloc_mw_resp *resp, size_t resp_size);
int ibv_cmd_dealloc_mw(struct ibv_mw *mw);

/* Completion queues */
int ibv_cmd_create_cq(struct ibv_context *context, int cqe,
		      struct ibv_comp_channel *channel, int comp_vector,
		      struct ibv_cq *cq, struct ibv_create_cq *cmd,
		      size_t cmd_size, struct ib_uverbs_create_cq_resp *resp,
		      size_t resp_size);
int ibv_cmd_resize_cq(struct ibv_cq *cq, int cqe, struct ibv_resize_cq *cmd,
		      size_t cmd_size, struct ib_uverbs_resize_cq_resp *resp,
		      size_t resp_size);
int ibv_cmd_req_notify_cq(struct ibv_cq *cq, int solicited_only);
int ibv_cmd_poll_cq(struct ibv_cq *cq, int ne, struct ibv_wc *wc);
int ibv_cmd_destroy_cq(struct ibv_cq *cq);

/* Queue pairs */
int ibv_cmd_create_qp(struct ibv_pd *pd, struct ibv_qp *qp,
		      struct ibv_qp_init_attr *attr, struct ibv_create_qp *cmd,
		      size_t cmd_size, struct ib_uverbs_create_qp_resp *resp,
		      size_t resp_size);
int ibv_cmd_modify_qp(struct ibv_qp *qp, struct ibv_qp_attr *attr,
		      int attr_mask, struct ibv_modify_qp *cmd,
		      size_t cmd_size);
int ibv_cmd_query_qp(struct ibv_qp *qp, struct ibv_qp_attr *qp_attr,
		     int attr_mask, struct ibv_qp_init_attr *qp_init_attr,
		     struct ibv_query_qp *cmd, size_t cmd_size);
int ibv_cmd_destroy_qp(struct ibv_qp *qp);
int ibv_cmd_post_send(struct ibv_qp *ibqp, struct ibv_send_wr *wr,
		      struct ibv_send_wr **bad_wr);
int ibv_cmd_post_recv(struct ibv_qp *ibqp, struct ibv_recv_wr *wr,
		      struct ibv_recv_wr **bad_wr);

/* Shared receive queues */
int ibv_cmd_create_srq(struct ibv_pd *pd, struct ibv_srq *srq,
		       struct ibv_srq_init_attr *attr,
		       struct ibv_create_srq *cmd, size_t cmd_size,
		       struct ib_uverbs_create_srq_resp *resp,
		       size_t resp_size);
int ibv_cmd_modify_srq(struct ibv_srq *srq, struct ibv_srq_attr *srq_attr,
		       int srq_attr_mask, struct ibv_modify_srq *cmd,
		       size_t cmd_size);
int ibv_cmd_query_srq(struct ibv_srq *srq, struct ibv_srq_attr *srq_attr,
		      struct ibv_query_srq *cmd, size_t cmd_size);
int ibv_cmd_destroy_srq(struct ibv_srq *srq);
int ibv_cmd_post_srq_recv(struct ibv_srq *srq, struct ibv_recv_wr *wr,
			  struct ibv_recv_wr **bad_wr);

/* ---------------------------------------------------------------------------
 * What differs between generations, and the registration entry point.
 * ---------------------------------------------------------------------------
 */

#ifndef SIW2_RDMA_CORE
#error "SIW2_RDMA_CORE (the rdma-core release, e.g. 44) is set by the Makefile"
#elif SIW2_RDMA_CORE >= 39 && SIW2_RDMA_CORE <= 56
#include "pabi-v34.h"
#elif SIW2_RDMA_CORE >= 59 && SIW2_RDMA_CORE <= 61
#include "pabi-v59.h"
#elif SIW2_RDMA_CORE == 64
#include "pabi-v64.h"
#else
#error "libsiw2 supports rdma-core 39 to 56, 59 to 61 and 64"
#endif

/*
 * Every verb a provider can implement, in the order of the release's
 * driver.h (alphabetical there). verbs_set_ops() copies the table member
 * by member into the library's private one, so order and types must be
 * exactly the release's: members that came with a later generation are
 * marked with it, and pabi_layout.c pins every offset per generation. A
 * NULL member keeps the library's stub, which fails with EOPNOTSUPP
 * (returned or in errno, per the verb's convention); the free_context stub
 * does nothing, so every provider sets free_context.
 */
struct verbs_context_ops {
	int (*advise_mr)(struct ibv_pd *pd, enum ibv_advise_mr_advice advice,
			 uint32_t flags, struct ibv_sge *sg_list,
			 uint32_t num_sges);
#if PABI_VERSION >= 64
	void *(*alloc_buf)(struct ibv_pd *pd, size_t size,
			   struct ibv_buf **buf);
#endif
	struct ibv_dm *(*alloc_dm)(struct ibv_context *context,
				   struct ibv_alloc_dm_attr *attr);
#if PABI_VERSION >= 59
	struct ibv_dmah *(*alloc_dmah)(struct ibv_context *context,
				       struct ibv_dmah_init_attr *attr);
#endif
	struct ibv_mw *(*alloc_mw)(struct ibv_pd *pd, enum ibv_mw_type type);
	struct ibv_mr *(*alloc_null_mr)(struct ibv_pd *pd);
	struct ibv_pd *(*alloc_parent_domain)(struct ibv_context *context,
					      struct ibv_parent_domain_init_attr *attr);
	struct ibv_pd *(*alloc_pd)(struct ibv_context *context);
	struct ibv_td *(*alloc_td)(struct ibv_context *context,
				   struct ibv_td_init_attr *init_attr);
	void (*async_event)(struct ibv_context *context,
			    struct ibv_async_event *event);
	int (*attach_counters_point_flow)(struct ibv_counters *counters,
					  struct ibv_counter_attach_attr *attr,
					  struct ibv_flow *flow);
	int (*attach_mcast)(struct ibv_qp *qp, const union ibv_gid *gid,
			    uint16_t lid);
	int (*bind_mw)(struct ibv_qp *qp, struct ibv_mw *mw,
		       struct ibv_mw_bind *mw_bind);
	int (*close_xrcd)(struct ibv_xrcd *xrcd);
	void (*cq_event)(struct ibv_cq *cq);
	struct ibv_ah *(*create_ah)(struct ibv_pd *pd, struct ibv_ah_attr *attr);
	struct ibv_counters *(*create_counters)(struct ibv_context *context,
						struct ibv_counters_init_attr *init_attr);
	struct ibv_cq *(*create_cq)(struct ibv_context *context, int cqe,
				    struct ibv_comp_channel *channel,
				    int comp_vector);
	struct ibv_cq_ex *(*create_cq_ex)(struct ibv_context *context,
					  struct ibv_cq_init_attr_ex *init_attr);
	struct ibv_flow *(*create_flow)(struct ibv_qp *qp,
					struct ibv_flow_attr *flow_attr);
	struct ibv_flow_action *(*create_flow_action_esp)(struct ibv_context *context,
							  struct ibv_flow_action_esp_attr *attr);
	struct ibv_qp *(*create_qp)(struct ibv_pd *pd,
				    struct ibv_qp_init_attr *attr);
	struct ibv_qp *(*create_qp_ex)(struct ibv_context *context,
				       struct ibv_qp_init_attr_ex *qp_init_attr_ex);
	struct ibv_rwq_ind_table *(*create_rwq_ind_table)
		(struct ibv_context *context,
		 struct ibv_rwq_ind_table_init_attr *init_attr);
	struct ibv_srq *(*create_srq)(struct ibv_pd *pd,
				      struct ibv_srq_init_attr *srq_init_attr);
	struct ibv_srq *(*create_srq_ex)(struct ibv_context *context,
					 struct ibv_srq_init_attr_ex *srq_init_attr_ex);
	struct ibv_wq *(*create_wq)(struct ibv_context *context,
				    struct ibv_wq_init_attr *wq_init_attr);
#if PABI_VERSION >= 59
	int (*dealloc_dmah)(struct ibv_dmah *dmah);
#endif
	int (*dealloc_mw)(struct ibv_mw *mw);
	int (*dealloc_pd)(struct ibv_pd *pd);
	int (*dealloc_td)(struct ibv_td *td);
	int (*dereg_mr)(struct verbs_mr *vmr);
	int (*destroy_ah)(struct ibv_ah *ah);
	int (*destroy_counters)(struct ibv_counters *counters);
	int (*destroy_cq)(struct ibv_cq *cq);
	int (*destroy_flow)(struct ibv_flow *flow);
	int (*destroy_flow_action)(struct ibv_flow_action *action);
	int (*destroy_qp)(struct ibv_qp *qp);
	int (*destroy_rwq_ind_table)(struct ibv_rwq_ind_table *rwq_ind_table);
	int (*destroy_srq)(struct ibv_srq *srq);
	int (*destroy_wq)(struct ibv_wq *wq);
	int (*detach_mcast)(struct ibv_qp *qp, const union ibv_gid *gid,
			    uint16_t lid);
#if PABI_VERSION >= 64
	int (*dm_export_dmabuf_fd)(struct ibv_dm *dm);
	void (*free_buf)(struct ibv_buf *buf);
#endif
	void (*free_context)(struct ibv_context *context);
	int (*free_dm)(struct ibv_dm *dm);
	int (*get_srq_num)(struct ibv_srq *srq, uint32_t *srq_num);
	struct ibv_dm *(*import_dm)(struct ibv_context *context,
				    uint32_t dm_handle);
	struct ibv_mr *(*import_mr)(struct ibv_pd *pd, uint32_t mr_handle);
	struct ibv_pd *(*import_pd)(struct ibv_context *context,
				    uint32_t pd_handle);
	int (*modify_cq)(struct ibv_cq *cq, struct ibv_modify_cq_attr *attr);
	int (*modify_flow_action_esp)(struct ibv_flow_action *action,
				      struct ibv_flow_action_esp_attr *attr);
	int (*modify_qp)(struct ibv_qp *qp, struct ibv_qp_attr *attr,
			 int attr_mask);
	int (*modify_qp_rate_limit)(struct ibv_qp *qp,
				    struct ibv_qp_rate_limit_attr *attr);
	int (*modify_srq)(struct ibv_srq *srq, struct ibv_srq_attr *srq_attr,
			  int srq_attr_mask);
	int (*modify_wq)(struct ibv_wq *wq, struct ibv_wq_attr *wq_attr);
	struct ibv_qp *(*open_qp)(struct ibv_context *context,
				  struct ibv_qp_open_attr *attr);
	struct ibv_xrcd *(*open_xrcd)(struct ibv_context *context,
				      struct ibv_xrcd_init_attr *xrcd_init_attr);
	int (*poll_cq)(struct ibv_cq *cq, int num_entries, struct ibv_wc *wc);
	int (*post_recv)(struct ibv_qp *qp, struct ibv_recv_wr *wr,
			 struct ibv_recv_wr **bad_wr);
	int (*post_send)(struct ibv_qp *qp, struct ibv_send_wr *wr,
			 struct ibv_send_wr **bad_wr);
	int (*post_srq_ops)(struct ibv_srq *srq, struct ibv_ops_wr *op,
			    struct ibv_ops_wr **bad_op);
	int (*post_srq_recv)(struct ibv_srq *srq, struct ibv_recv_wr *recv_wr,
			     struct ibv_recv_wr **bad_recv_wr);
	int (*query_device_ex)(struct ibv_context *context,
			       const struct ibv_query_device_ex_input *input,
			       struct ibv_device_attr_ex *attr,
			       size_t attr_size);
	int (*query_ece)(struct ibv_qp *qp, struct ibv_ece *ece);
	int (*query_port)(struct ibv_context *context, uint8_t port_num,
			  struct ibv_port_attr *port_attr);
#if PABI_VERSION >= 64
	int (*query_port_speed)(struct ibv_context *context, uint32_t port_num,
				uint64_t *speed);
#endif
	int (*query_qp)(struct ibv_qp *qp, struct ibv_qp_attr *attr,
			int attr_mask, struct ibv_qp_init_attr *init_attr);
	int (*query_qp_data_in_order)(struct ibv_qp *qp, enum ibv_wr_opcode op,
				      uint32_t flags);
	int (*query_rt_values)(struct ibv_context *context,
			       struct ibv_values_ex *values);
	int (*query_srq)(struct ibv_srq *srq, struct ibv_srq_attr *srq_attr);
	int (*read_counters)(struct ibv_counters *counters,
			     uint64_t *counters_value, uint32_t ncounters,
			     uint32_t flags);
	struct ibv_mr *(*reg_dm_mr)(struct ibv_pd *pd, struct ibv_dm *dm,
				    uint64_t dm_offset, size_t length,
				    unsigned int access);
	struct ibv_mr *(*reg_dmabuf_mr)(struct ibv_pd *pd, uint64_t offset,
					size_t length, uint64_t iova, int fd,
					int access);
	struct ibv_mr *(*reg_mr)(struct ibv_pd *pd, void *addr, size_t length,
				 uint64_t hca_va, int access);
#if PABI_VERSION >= 59
	struct ibv_mr *(*reg_mr_ex)(struct ibv_pd *pd,
				    struct ibv_mr_init_attr *mr_init_attr);
#endif
	int (*req_notify_cq)(struct ibv_cq *cq, int solicited_only);
	int (*rereg_mr)(struct verbs_mr *vmr, int flags, struct ibv_pd *pd,
			void *addr, size_t length, int access);
	int (*resize_cq)(struct ibv_cq *cq, int cqe);
	int (*set_ece)(struct ibv_qp *qp, struct ibv_ece *ece);
	void (*unimport_dm)(struct ibv_dm *dm);
	void (*unimport_mr)(struct ibv_mr *mr);
	void (*unimport_pd)(struct ibv_pd *pd);
};

#define PABI_PASTE2(a, b) a##b
#define PABI_PASTE(a, b) PABI_PASTE2(a, b)
#define pabi_register_driver PABI_PASTE(verbs_register_driver_, PABI_VERSION)

/*
 * The symbol carries the PABI number, so a provider of another PABI fails
 * at dlopen() with an unresolved symbol.
 */
void pabi_register_driver(const struct verbs_device_ops *ops);

/*
 * True if the libibverbs this process runs is the release libsiw2 was
 * built for; otherwise says so on stderr (pabi.c).
 */
bool pabi_library_ok(void);

/*
 * Registers @ops when the provider is dlopen()ed, if libibverbs is the
 * release it was built for.
 * Providers also export a verbs_provider_<name> alias for static linking
 * into libibverbs; a dlopen()-only provider has no use for it.
 */
#define PABI_PROVIDER_DRIVER(ops)					\
	static void __attribute__((constructor)) pabi_register_##ops(void) \
	{								\
		if (pabi_library_ok())					\
			pabi_register_driver(&(ops));			\
	}

#endif /* SIW2_PABI_H */
