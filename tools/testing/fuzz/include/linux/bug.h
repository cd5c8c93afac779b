/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A WARN is a bug in siw2's own logic, never a reaction to peer input, so
 * userspace builds abort on it: the fuzzer records the input as a crash.
 * -DSIW2_SHIM_WARN_CONTINUE makes WARN*() only print (and still return the
 * condition, as the kernel's do).
 */
#ifndef SIW2_SHIM_LINUX_BUG_H
#define SIW2_SHIM_LINUX_BUG_H

#include <stdio.h>
#include <stdlib.h>
#include <linux/build_bug.h>
#include <linux/compiler.h>

#ifdef SIW2_SHIM_WARN_CONTINUE
#define __siw2_warn_stop()	do { } while (0)
#else
#define __siw2_warn_stop()	abort()
#endif

#define WARN(cond, fmt...) ({						\
	int __ret = !!(cond);						\
	if (unlikely(__ret)) {						\
		fprintf(stderr, "WARNING at %s:%d %s(): ", __FILE__,	\
			__LINE__, __func__);				\
		fprintf(stderr, fmt);					\
		__siw2_warn_stop();					\
	}								\
	unlikely(__ret); })

#define WARN_ON(cond) WARN(cond, "%s\n", "WARN_ON(" #cond ")")
#define WARN_ON_ONCE(cond) WARN_ON(cond)
#define WARN_ONCE(cond, fmt...) WARN(cond, fmt)

#define BUG() do {							\
	fprintf(stderr, "BUG at %s:%d %s()\n", __FILE__, __LINE__, __func__); \
	abort();							\
} while (0)
#define BUG_ON(cond) do { if (unlikely(cond)) BUG(); } while (0)

#endif
