/* SPDX-License-Identifier: GPL-2.0 */
#ifndef SIW2_SHIM_LINUX_CRC32_H
#define SIW2_SHIM_LINUX_CRC32_H
#include <linux/crc32c.h>
#endif
