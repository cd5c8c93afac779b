/* SPDX-License-Identifier: GPL-2.0 */
#ifndef SIW2_SHIM_LINUX_STRINGIFY_H
#define SIW2_SHIM_LINUX_STRINGIFY_H
#define __stringify_1(x...)	#x
#define __stringify(x...)	__stringify_1(x)
#endif
