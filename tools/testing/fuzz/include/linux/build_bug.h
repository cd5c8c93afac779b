/* SPDX-License-Identifier: GPL-2.0 */
#ifndef SIW2_SHIM_LINUX_BUILD_BUG_H
#define SIW2_SHIM_LINUX_BUILD_BUG_H

#include <linux/compiler.h>

/*
 * As in the kernel, BUILD_BUG_ON() accepts any condition the optimiser can
 * fold, not only integer constant expressions: a surviving call to the
 * error-attributed function fails the build. Needs -O1 or more.
 */
extern void __siw2_shim_build_bug(void)
	__compiletime_error("BUILD_BUG_ON failed");

#define BUILD_BUG_ON_MSG(cond, msg) \
	do { if (cond) __siw2_shim_build_bug(); } while (0)
#define BUILD_BUG_ON(cond) BUILD_BUG_ON_MSG(cond, "BUILD_BUG_ON(" #cond ")")
#define BUILD_BUG_ON_NOT_POWER_OF_2(n) \
	BUILD_BUG_ON((n) == 0 || (((n) & ((n) - 1)) != 0))
#define BUILD_BUG() BUILD_BUG_ON(1)

/* Zero, or a compile error when @e is true; usable in expressions. */
#define BUILD_BUG_ON_ZERO(e) ((int)(sizeof(struct { int:(-!!(e)); })))

#define __static_assert(expr, msg, ...) _Static_assert(expr, msg)
#ifdef static_assert
#undef static_assert
#endif
#define static_assert(expr, ...) __static_assert(expr, ##__VA_ARGS__, #expr)

#endif
