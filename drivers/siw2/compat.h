/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Differences between the kernels siw2 builds against (Debian's 6.1 and
 * 6.12), in one place. Force-included into every siw2 object by Kbuild, so
 * no other file tests a kernel version.
 */
#ifndef SIW2_COMPAT_H
#define SIW2_COMPAT_H

#include <linux/version.h>

/*
 * 6.11 passed the whole uverbs attribute bundle to ib_device_ops.create_cq
 * instead of only the driver's udata. Handlers name the argument uarg and
 * reach the udata through siw2_create_cq_udata().
 */
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 11, 0)
#define SIW2_CREATE_CQ_UARG struct uverbs_attr_bundle *uarg
#define siw2_create_cq_udata(arg) (&(arg)->driver_udata)
#else
#define SIW2_CREATE_CQ_UARG struct ib_udata *uarg
#define siw2_create_cq_udata(arg) (arg)
#endif

#endif /* SIW2_COMPAT_H */
