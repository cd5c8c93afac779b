/* SPDX-License-Identifier: GPL-2.0 */
#ifndef SIW2_SHIM_LINUX_BITS_H
#define SIW2_SHIM_LINUX_BITS_H

#define BITS_PER_BYTE		8
#define BITS_PER_LONG		(8 * (int)sizeof(long))
#define BITS_PER_LONG_LONG	64

#define BIT(nr)			(1UL << (nr))
#define BIT_ULL(nr)		(1ULL << (nr))
#define BIT_MASK(nr)		(1UL << ((nr) % BITS_PER_LONG))
#define BIT_WORD(nr)		((nr) / BITS_PER_LONG)

/* Bits h..l set, h >= l; a reversed pair is a compile error, as upstream. */
#define __GENMASK_CHECK(h, l) \
	BUILD_BUG_ON_ZERO(__builtin_choose_expr(__is_constexpr((l) > (h)), \
						 (l) > (h), 0))
#define GENMASK(h, l) \
	(__GENMASK_CHECK(h, l) + \
	 (((~0UL) - (1UL << (l)) + 1) & (~0UL >> (BITS_PER_LONG - 1 - (h)))))
#define GENMASK_ULL(h, l) \
	(__GENMASK_CHECK(h, l) + \
	 (((~0ULL) - (1ULL << (l)) + 1) & (~0ULL >> (64 - 1 - (h)))))

#include <linux/build_bug.h>

#endif
