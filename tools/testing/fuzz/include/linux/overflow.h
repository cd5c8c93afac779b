/* SPDX-License-Identifier: GPL-2.0 */
#ifndef SIW2_SHIM_LINUX_OVERFLOW_H
#define SIW2_SHIM_LINUX_OVERFLOW_H

#include <stdint.h>
#include <linux/compiler.h>
#include <linux/types.h>

#define check_add_overflow(a, b, d) __builtin_add_overflow(a, b, d)
#define check_sub_overflow(a, b, d) __builtin_sub_overflow(a, b, d)
#define check_mul_overflow(a, b, d) __builtin_mul_overflow(a, b, d)

/* Saturate at SIZE_MAX, as the kernel's do. */
static inline size_t __must_check size_add(size_t a, size_t b)
{
	size_t r;

	return check_add_overflow(a, b, &r) ? SIZE_MAX : r;
}

static inline size_t __must_check size_mul(size_t a, size_t b)
{
	size_t r;

	return check_mul_overflow(a, b, &r) ? SIZE_MAX : r;
}

static inline size_t __must_check size_sub(size_t a, size_t b)
{
	size_t r;

	if (a == SIZE_MAX || b == SIZE_MAX || check_sub_overflow(a, b, &r))
		return SIZE_MAX;
	return r;
}

#define array_size(a, b)	size_mul(a, b)
#define struct_size(p, member, count)					\
	size_add(sizeof(*(p)), size_mul(sizeof(*(p)->member), count))

#endif
