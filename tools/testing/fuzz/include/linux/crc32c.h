/* SPDX-License-Identifier: GPL-2.0 */
#ifndef SIW2_SHIM_LINUX_CRC32C_H
#define SIW2_SHIM_LINUX_CRC32C_H

#include <linux/types.h>

/*
 * Kernel semantics: @crc is the raw register; no inversion happens inside.
 * Callers seed with ~0 and invert the result themselves. Software
 * Castagnoli CRC (reflected polynomial 0x82F63B78), in lib/crc32c.c.
 */
u32 crc32c(u32 crc, const void *address, unsigned int length);
u32 __crc32c_le(u32 crc, unsigned char const *p, size_t len);

#endif
