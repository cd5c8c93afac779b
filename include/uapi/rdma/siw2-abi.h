/* SPDX-License-Identifier: ((GPL-2.0 WITH Linux-syscall-note) OR BSD-2-Clause) */
/*
 * The ABI between siw2.ko and its rdma-core provider, libsiw2.
 *
 * This header is the single source of truth for everything both sides must
 * agree on: the uverbs ABI version, the sysfs attribute the provider matches
 * devices by, and the driver-private parts of uverbs commands and responses.
 */
#ifndef SIW2_ABI_H
#define SIW2_ABI_H

#include <linux/types.h>

/*
 * Bumped on any incompatible change. It is both the ib_device's
 * uverbs_abi_ver and the content of the sysfs attribute below.
 */
#define SIW2_ABI_VERSION 1

/*
 * siw2 has no rdma_driver_id of its own (it is not in the kernel's enum), so
 * the provider cannot match on a driver id. Every siw2 device instead carries
 * this attribute, relative to /sys/class/infiniband/<ibdev>/, holding
 * SIW2_ABI_VERSION in decimal. A device name is chosen by the user and proves
 * nothing; the attribute is set by the module only.
 */
#define SIW2_SYSFS_ABI_ATTR "siw2/abi_version"

/* Response to IB_USER_VERBS_CMD_GET_CONTEXT (alloc_ucontext). */
struct siw2_uresp_alloc_ctx {
	__u32 abi_version;
	__u32 dev_flags;
	__aligned_u64 reserved;
};

#endif /* SIW2_ABI_H */
