/* SPDX-License-Identifier: GPL-2.0 */
#ifndef SIW2_SHIM_LINUX_LIMITS_H
#define SIW2_SHIM_LINUX_LIMITS_H

/* glibc's <limits.h> includes <linux/limits.h> for PATH_MAX and friends. */
#include_next <linux/limits.h>
#include <limits.h>
#include <stdint.h>

#define U8_MAX		((u8)~0U)
#define S8_MAX		((s8)(U8_MAX >> 1))
#define S8_MIN		((s8)(-S8_MAX - 1))
#define U16_MAX		((u16)~0U)
#define S16_MAX		((s16)(U16_MAX >> 1))
#define S16_MIN		((s16)(-S16_MAX - 1))
#define U32_MAX		((u32)~0U)
#define U32_MIN		((u32)0)
#define S32_MAX		((s32)(U32_MAX >> 1))
#define S32_MIN		((s32)(-S32_MAX - 1))
#define U64_MAX		((u64)~0ULL)
#define S64_MAX		((s64)(U64_MAX >> 1))
#define S64_MIN		((s64)(-S64_MAX - 1))

#endif
