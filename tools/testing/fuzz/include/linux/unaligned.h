/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Unaligned access through memcpy(), which compilers turn into plain loads
 * where the CPU allows it. <linux/unaligned.h> is the 6.12 name,
 * <asm/unaligned.h> the 6.1 one; both land here.
 */
#ifndef SIW2_SHIM_LINUX_UNALIGNED_H
#define SIW2_SHIM_LINUX_UNALIGNED_H

#include <string.h>
#include <linux/byteorder/generic.h>
#include <linux/types.h>

#define get_unaligned(ptr) ({					\
	__typeof__(*(ptr)) __v;					\
	memcpy(&__v, (ptr), sizeof(__v));			\
	__v; })

#define put_unaligned(val, ptr) do {				\
	__typeof__(*(ptr)) __v = (val);				\
	memcpy((ptr), &__v, sizeof(__v));			\
} while (0)

#define __SIW2_UNALIGNED(bits, end)					\
static inline u##bits get_unaligned_##end##bits(const void *p)		\
{									\
	__##end##bits v;						\
									\
	memcpy(&v, p, sizeof(v));					\
	return end##bits##_to_cpu(v);					\
}									\
static inline void put_unaligned_##end##bits(u##bits val, void *p)	\
{									\
	__##end##bits v = cpu_to_##end##bits(val);			\
									\
	memcpy(p, &v, sizeof(v));					\
}

__SIW2_UNALIGNED(16, be)
__SIW2_UNALIGNED(32, be)
__SIW2_UNALIGNED(64, be)
__SIW2_UNALIGNED(16, le)
__SIW2_UNALIGNED(32, le)
__SIW2_UNALIGNED(64, le)

#undef __SIW2_UNALIGNED

#endif
