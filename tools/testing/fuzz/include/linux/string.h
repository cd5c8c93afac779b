/* SPDX-License-Identifier: GPL-2.0 */
#ifndef SIW2_SHIM_LINUX_STRING_H
#define SIW2_SHIM_LINUX_STRING_H

#include <string.h>
#include <linux/types.h>
#include <linux/errno.h>

static inline void memzero_explicit(void *s, size_t count)
{
	memset(s, 0, count);
	__asm__ __volatile__("" : : "r"(s) : "memory");
}

/* Kernel semantics: copies and terminates, -E2BIG when truncated. */
static inline ssize_t strscpy(char *dst, const char *src, size_t count)
{
	size_t len;

	if (count == 0)
		return -E2BIG;
	len = strnlen(src, count);
	if (len == count) {
		memcpy(dst, src, count - 1);
		dst[count - 1] = '\0';
		return -E2BIG;
	}
	memcpy(dst, src, len + 1);
	return len;
}

/* First byte of @start that is not @c, or NULL. */
static inline void *memchr_inv(const void *start, int c, size_t bytes)
{
	const unsigned char *p = start;

	for (; bytes; bytes--, p++)
		if (*p != (unsigned char)c)
			return (void *)p;
	return NULL;
}

#endif
