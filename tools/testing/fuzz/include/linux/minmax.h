/* SPDX-License-Identifier: GPL-2.0 */
/*
 * min()/max() as strict as 6.1's: both sides must have the same type
 * (the distinct-pointer comparison warns otherwise), so code that passes
 * here also builds against Debian's 6.1 headers. Use min_t() to mix types.
 */
#ifndef SIW2_SHIM_LINUX_MINMAX_H
#define SIW2_SHIM_LINUX_MINMAX_H

#include <linux/compiler.h>

#define __siw2_typecheck(x, y) (!!(sizeof((__typeof__(x) *)1 == (__typeof__(y) *)1)))

#define __siw2_cmp(x, y, op) ((x) op (y) ? (x) : (y))

#define __siw2_cmp_once(x, y, op) ({			\
	__typeof__(x) __x = (x);			\
	__typeof__(y) __y = (y);			\
	(void)__siw2_typecheck(__x, __y);		\
	__siw2_cmp(__x, __y, op); })

#define __siw2_careful_cmp(x, y, op)					\
	__builtin_choose_expr(__is_constexpr(x) && __is_constexpr(y) &&	\
			      __siw2_typecheck(x, y),			\
			      __siw2_cmp(x, y, op), __siw2_cmp_once(x, y, op))

#define min(x, y)	__siw2_careful_cmp(x, y, <)
#define max(x, y)	__siw2_careful_cmp(x, y, >)
#define min3(x, y, z)	min((__typeof__(x))min(x, y), z)
#define max3(x, y, z)	max((__typeof__(x))max(x, y), z)
#define min_t(type, x, y) __siw2_careful_cmp((type)(x), (type)(y), <)
#define max_t(type, x, y) __siw2_careful_cmp((type)(x), (type)(y), >)
#define min_not_zero(x, y) ({				\
	__typeof__(x) __x = (x);			\
	__typeof__(y) __y = (y);			\
	__x == 0 ? __y : ((__y == 0) ? __x : min(__x, __y)); })

#define clamp(val, lo, hi) min((__typeof__(val))max(val, lo), hi)
#define clamp_t(type, val, lo, hi) min_t(type, max_t(type, val, lo), hi)
#define clamp_val(val, lo, hi) clamp_t(__typeof__(val), val, lo, hi)

#define swap(a, b) \
	do { __typeof__(a) __tmp = (a); (a) = (b); (b) = __tmp; } while (0)

#endif
