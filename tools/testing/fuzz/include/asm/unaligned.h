/* SPDX-License-Identifier: GPL-2.0 */
#ifndef SIW2_SHIM_ASM_UNALIGNED_H
#define SIW2_SHIM_ASM_UNALIGNED_H
#include <linux/unaligned.h>
#endif
