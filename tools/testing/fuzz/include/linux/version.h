/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Userspace builds claim the newest kernel siw2 supports; the protocol
 * files do not look at the version, only compat.h does.
 */
#ifndef SIW2_SHIM_LINUX_VERSION_H
#define SIW2_SHIM_LINUX_VERSION_H
#define KERNEL_VERSION(a, b, c) (((a) << 16) + ((b) << 8) + ((c) > 255 ? 255 : (c)))
#ifndef LINUX_VERSION_CODE
#define LINUX_VERSION_CODE KERNEL_VERSION(6, 12, 0)
#endif
#endif
