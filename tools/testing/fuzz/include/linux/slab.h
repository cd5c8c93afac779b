/* SPDX-License-Identifier: GPL-2.0 */
/* kmalloc() and friends on top of malloc(), so ASan sees every object. */
#ifndef SIW2_SHIM_LINUX_SLAB_H
#define SIW2_SHIM_LINUX_SLAB_H

#include <stdlib.h>
#include <string.h>
#include <linux/overflow.h>
#include <linux/types.h>

#define GFP_KERNEL	0x1u
#define GFP_ATOMIC	0x2u
#define GFP_NOWAIT	0x4u
#define __GFP_ZERO	0x100u
#define __GFP_NOWARN	0x200u

static inline void *kmalloc(size_t size, gfp_t flags)
{
	void *p = malloc(size ? size : 1);

	if (p && (flags & __GFP_ZERO))
		memset(p, 0, size);
	return p;
}

static inline void *kzalloc(size_t size, gfp_t flags)
{
	return kmalloc(size, flags | __GFP_ZERO);
}

static inline void *kmalloc_array(size_t n, size_t size, gfp_t flags)
{
	size_t bytes;

	if (check_mul_overflow(n, size, &bytes))
		return NULL;
	return kmalloc(bytes, flags);
}

static inline void *kcalloc(size_t n, size_t size, gfp_t flags)
{
	return kmalloc_array(n, size, flags | __GFP_ZERO);
}

static inline void kfree(const void *p)
{
	free((void *)p);
}

#define kvmalloc(size, flags)		kmalloc(size, flags)
#define kvzalloc(size, flags)		kzalloc(size, flags)
#define kvcalloc(n, size, flags)	kcalloc(n, size, flags)
#define kvfree(p)			kfree(p)

static inline void kfree_sensitive(const void *p)
{
	free((void *)p);
}

#endif
