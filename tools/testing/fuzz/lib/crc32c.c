// SPDX-License-Identifier: GPL-2.0
/*
 * Software CRC32C (Castagnoli) for the userspace builds, with the kernel's
 * interface: the caller owns seeding (~0) and the final inversion.
 */
#include <linux/compiler.h>
#include <linux/crc32c.h>

#define CRC32C_POLY_REFLECTED	0x82F63B78U

static u32 table[256];
static bool table_ready;

static void table_init(void)
{
	unsigned int i, bit;

	for (i = 0; i < 256; i++) {
		u32 crc = i;

		for (bit = 0; bit < 8; bit++)
			crc = (crc >> 1) ^ (crc & 1 ? CRC32C_POLY_REFLECTED : 0);
		table[i] = crc;
	}
	table_ready = true;
}

u32 __crc32c_le(u32 crc, unsigned char const *p, size_t len)
{
	if (unlikely(!table_ready))
		table_init();
	while (len--)
		crc = (crc >> 8) ^ table[(crc ^ *p++) & 0xff];
	return crc;
}

u32 crc32c(u32 crc, const void *address, unsigned int length)
{
	return __crc32c_le(crc, address, length);
}
