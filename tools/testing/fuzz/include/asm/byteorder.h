/* SPDX-License-Identifier: GPL-2.0 */
#ifndef SIW2_SHIM_ASM_BYTEORDER_H
#define SIW2_SHIM_ASM_BYTEORDER_H
#include <linux/byteorder/generic.h>
#endif
