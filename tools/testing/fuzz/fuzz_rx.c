// SPDX-License-Identifier: GPL-2.0
/*
 * Placeholder libFuzzer entry point: it only proves that the protocol
 * objects link in userspace. The receive-path harness replaces this file;
 * keep the LLVMFuzzerTestOneInput() signature, which selftest.c also calls.
 */
#include <linux/crc32c.h>
#include <linux/types.h>

int LLVMFuzzerTestOneInput(const u8 *data, size_t size);

int LLVMFuzzerTestOneInput(const u8 *data, size_t size)
{
	(void)crc32c(~0U, data, size);
	return 0;
}
