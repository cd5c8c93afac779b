/* SPDX-License-Identifier: GPL-2.0 */
#ifndef SIW2_SHIM_LINUX_INIT_H
#define SIW2_SHIM_LINUX_INIT_H

#include <linux/compiler.h>

/* Userspace has no initcalls: the functions are referenced, never run. */
#define module_init(fn) \
	static __maybe_unused int (*__siw2_shim_init)(void) = fn
#define module_exit(fn) \
	static __maybe_unused void (*__siw2_shim_exit)(void) = fn

#endif
