/* SPDX-License-Identifier: GPL-2.0 */
#ifndef SIW2_SHIM_LINUX_STDDEF_H
#define SIW2_SHIM_LINUX_STDDEF_H

/* glibc-independent UAPI part (__struct_group, __DECLARE_FLEX_ARRAY). */
#include_next <linux/stddef.h>
#include <stdbool.h>
#include <stddef.h>

#define sizeof_field(TYPE, MEMBER) sizeof((((TYPE *)0)->MEMBER))
#define offsetofend(TYPE, MEMBER) \
	(offsetof(TYPE, MEMBER) + sizeof_field(TYPE, MEMBER))

#endif
