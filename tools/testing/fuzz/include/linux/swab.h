/* SPDX-License-Identifier: GPL-2.0 */
#ifndef SIW2_SHIM_LINUX_SWAB_H
#define SIW2_SHIM_LINUX_SWAB_H

#include <linux/types.h>

#define swab16(x) ((__u16)__builtin_bswap16((__u16)(x)))
#define swab32(x) ((__u32)__builtin_bswap32((__u32)(x)))
#define swab64(x) ((__u64)__builtin_bswap64((__u64)(x)))
#define swab16p(p) swab16(*(p))
#define swab32p(p) swab32(*(p))
#define swab64p(p) swab64(*(p))

#endif
