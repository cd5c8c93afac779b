/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Userspace stand-in for the kernel's compiler annotations, for building
 * siw2's pure protocol files outside the kernel (fuzzing, portability
 * checks). Only what those files need; extend as they grow.
 */
#ifndef SIW2_SHIM_LINUX_COMPILER_H
#define SIW2_SHIM_LINUX_COMPILER_H

#include <linux/compiler_attributes.h>

#define likely(x)	__builtin_expect(!!(x), 1)
#define unlikely(x)	__builtin_expect(!!(x), 0)

#define barrier()	__asm__ __volatile__("" : : : "memory")

#define READ_ONCE(x)	(*(const volatile __typeof__(x) *)&(x))
#define WRITE_ONCE(x, val) \
	do { *(volatile __typeof__(x) *)&(x) = (val); } while (0)

#define __same_type(a, b) __builtin_types_compatible_p(__typeof__(a), __typeof__(b))

/* True when @x is an integer constant expression (kernel semantics). */
#define __is_constexpr(x) \
	(sizeof(int) == sizeof(*(8 ? ((void *)((long)(x) * 0l)) : (int *)8)))

/* Annotations that only mean something to sparse or kbuild. */
#define __force
#define __bitwise
#define __user
#define __kernel
#define __iomem
#define __rcu
#define __percpu
#define __must_hold(x)
#define __acquires(x)
#define __releases(x)
#define __init
#define __exit
#define __initdata
#define __read_mostly
#define notrace
#define noinstr

#endif
