/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Like the kernel's, this pulls in the usual helpers so that code relying
 * on kernel.h alone still builds.
 */
#ifndef SIW2_SHIM_LINUX_KERNEL_H
#define SIW2_SHIM_LINUX_KERNEL_H

#include <linux/align.h>
#include <linux/bits.h>
#include <linux/bug.h>
#include <linux/build_bug.h>
#include <linux/compiler.h>
#include <linux/container_of.h>
#include <linux/kconfig.h>
#include <linux/limits.h>
#include <linux/math.h>
#include <linux/minmax.h>
#include <linux/printk.h>
#include <linux/stddef.h>
#include <linux/stringify.h>
#include <linux/types.h>

#define __must_be_array(a) \
	BUILD_BUG_ON_ZERO(__same_type((a), &(a)[0]))
#define ARRAY_SIZE(arr) (sizeof(arr) / sizeof((arr)[0]) + __must_be_array(arr))

#define upper_32_bits(n) ((u32)(((n) >> 16) >> 16))
#define lower_32_bits(n) ((u32)((n) & 0xffffffff))
#define upper_16_bits(n) ((u16)((n) >> 16))
#define lower_16_bits(n) ((u16)((n) & 0xffff))

#endif
