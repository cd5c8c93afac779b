/* SPDX-License-Identifier: GPL-2.0 */
#ifndef SIW2_SHIM_LINUX_COMPILER_ATTRIBUTES_H
#define SIW2_SHIM_LINUX_COMPILER_ATTRIBUTES_H

#define __packed		__attribute__((__packed__))
#define __aligned(x)		__attribute__((__aligned__(x)))
#define __always_unused		__attribute__((__unused__))
#define __maybe_unused		__attribute__((__unused__))
#define __used			__attribute__((__used__))
#define __must_check		__attribute__((__warn_unused_result__))
#define __printf(a, b)		__attribute__((__format__(printf, a, b)))
#define __cold			__attribute__((__cold__))
#define __pure			__attribute__((__pure__))
#define __weak			__attribute__((__weak__))
#define __noreturn		__attribute__((__noreturn__))
#define __section(s)		__attribute__((__section__(s)))
#define __nonstring		__attribute__((__nonstring__))
#define noinline		__attribute__((__noinline__))
#ifndef __always_inline
#define __always_inline		inline __attribute__((__always_inline__))
#endif
#define __compiletime_error(msg) __attribute__((__error__(msg)))
#define fallthrough		__attribute__((__fallthrough__))

#endif
