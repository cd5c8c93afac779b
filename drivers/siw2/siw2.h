/* SPDX-License-Identifier: GPL-2.0 */
/*
 * siw2: the device object and an index of what each file exports.
 */
#ifndef SIW2_H
#define SIW2_H

#include <linux/list.h>
#include <linux/netdevice.h>
#include <rdma/ib_verbs.h>

#define SIW2_DRV_NAME "siw2"
#define SIW2_LINK_TYPE "siw2"

/* Limits reported through query_device; later work makes them per device. */
#define SIW2_MAX_QP (1U << 14)
#define SIW2_MAX_QP_WR (1U << 14)
#define SIW2_MAX_SGE 6
#define SIW2_MAX_SGE_RD 1
#define SIW2_MAX_CQ (1U << 14)
#define SIW2_MAX_CQE (1U << 16)
#define SIW2_MAX_MR (1U << 16)
#define SIW2_MAX_PD (1U << 16)
#define SIW2_MAX_SRQ (1U << 12)
#define SIW2_MAX_SRQ_WR (1U << 14)
#define SIW2_MAX_ORD 128
#define SIW2_MAX_IRD 128
#define SIW2_MAX_INLINE 256
#define SIW2_MAX_MR_SIZE (~0ULL)
#define SIW2_MAX_FAST_REG_PAGES 512
#define SIW2_VENDOR_ID 0x626d74	/* an OUI-shaped tag, as soft devices use */
#define SIW2_VENDOR_PART_ID 0x5732

/**
 * struct siw2_device - one siw2 RDMA device, bound to one netdev
 * @ibdev: the core's device; its refcount governs our lifetime
 * @netdev: the netdev carrying our TCP connections; a reference is held from
 *	newlink until the core calls dealloc_driver
 * @netdev_tracker: reference tracker for @netdev
 * @list: entry in the module's device list, under the device list mutex
 * @live: set once ib_register_device() returned, under the list mutex; the
 *	netdev notifier only unregisters live devices (see device.c)
 */
struct siw2_device {
	struct ib_device ibdev;
	struct net_device *netdev;
	netdevice_tracker netdev_tracker;
	struct list_head list;
	bool live;
};

static inline struct siw2_device *to_siw2_dev(struct ib_device *ibdev)
{
	return container_of(ibdev, struct siw2_device, ibdev);
}

struct siw2_ucontext {
	struct ib_ucontext base;
};

struct siw2_pd {
	struct ib_pd base;
};

/* debug.c */
enum siw2_obj {
	SIW2_OBJ_DEVICE,
	SIW2_OBJ_UCONTEXT,
	SIW2_OBJ_PD,
	SIW2_OBJ_MAX
};

void siw2_obj_created(enum siw2_obj obj);
void siw2_obj_destroyed(enum siw2_obj obj);
void siw2_debug_init(void);
void siw2_debug_uninit(void);

/* device.c */
int siw2_device_init(void);
void siw2_device_uninit(void);

/* verbs.c */
extern const struct ib_device_ops siw2_verbs_ops;

#endif /* SIW2_H */
