/* SPDX-License-Identifier: GPL-2.0 */
#ifndef SIW2_SHIM_LINUX_CACHE_H
#define SIW2_SHIM_LINUX_CACHE_H
#include <linux/compiler.h>
#endif
