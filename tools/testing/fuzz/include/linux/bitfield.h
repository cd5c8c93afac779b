/* SPDX-License-Identifier: GPL-2.0 */
/*
 * FIELD_GET()/FIELD_PREP() for constant, contiguous masks. The kernel
 * checks the mask and the value at compile time; this checks the mask.
 */
#ifndef SIW2_SHIM_LINUX_BITFIELD_H
#define SIW2_SHIM_LINUX_BITFIELD_H

#include <linux/bits.h>
#include <linux/build_bug.h>

#define __bf_shf(x) (__builtin_ffsll(x) - 1)

#define __BF_MASK_CHECK(mask)						\
	BUILD_BUG_ON_ZERO(!__builtin_constant_p(mask) || (mask) == 0 ||	\
			  (((mask) + (1ULL << __bf_shf(mask))) &	\
			   ((mask) + (1ULL << __bf_shf(mask)) - 1)))

#define FIELD_MAX(mask) ({					\
	(void)__BF_MASK_CHECK(mask);					\
	(__typeof__(mask))((mask) >> __bf_shf(mask)); })
#define FIELD_FIT(mask, val) ({						\
	(void)__BF_MASK_CHECK(mask);					\
	!((((__typeof__(mask))(val)) << __bf_shf(mask)) & ~(mask)); })
#define FIELD_PREP(mask, val) ({					\
	(void)__BF_MASK_CHECK(mask);					\
	((__typeof__(mask))(val) << __bf_shf(mask)) & (mask); })
#define FIELD_GET(mask, reg) ({						\
	(void)__BF_MASK_CHECK(mask);					\
	(__typeof__(mask))(((reg) & (mask)) >> __bf_shf(mask)); })

#endif
