/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The kernel's fixed-width types. The double-underscore ones repeat the
 * UAPI typedefs exactly (u64 is unsigned long long, as in the kernel, so
 * %llu stays right) and can therefore coexist with <asm/types.h>.
 */
#ifndef SIW2_SHIM_LINUX_TYPES_H
#define SIW2_SHIM_LINUX_TYPES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <linux/compiler.h>

typedef signed char __s8;
typedef unsigned char __u8;
typedef signed short __s16;
typedef unsigned short __u16;
typedef signed int __s32;
typedef unsigned int __u32;
typedef signed long long __s64;
typedef unsigned long long __u64;

typedef __s8 s8;
typedef __u8 u8;
typedef __s16 s16;
typedef __u16 u16;
typedef __s32 s32;
typedef __u32 u32;
typedef __s64 s64;
typedef __u64 u64;

typedef __u16 __bitwise __le16;
typedef __u16 __bitwise __be16;
typedef __u32 __bitwise __le32;
typedef __u32 __bitwise __be32;
typedef __u64 __bitwise __le64;
typedef __u64 __bitwise __be64;
typedef __u16 __bitwise __sum16;
typedef __u32 __bitwise __wsum;

typedef unsigned long ulong;
typedef unsigned int uint;
typedef u64 phys_addr_t;
typedef u64 dma_addr_t;
typedef unsigned int gfp_t;

#define __aligned_u64 __u64 __aligned(8)

#endif
