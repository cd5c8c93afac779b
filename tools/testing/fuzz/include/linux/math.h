/* SPDX-License-Identifier: GPL-2.0 */
#ifndef SIW2_SHIM_LINUX_MATH_H
#define SIW2_SHIM_LINUX_MATH_H

#define __round_mask(x, y) ((__typeof__(x))((y) - 1))
#define round_up(x, y) ((((x) - 1) | __round_mask(x, y)) + 1)
#define round_down(x, y) ((x) & ~__round_mask(x, y))
#define DIV_ROUND_UP(n, d) (((n) + (d) - 1) / (d))
#define DIV_ROUND_UP_ULL(ll, d) DIV_ROUND_UP((unsigned long long)(ll), d)
#define roundup(x, y) ({ __typeof__(y) __y = (y); (((x) + (__y - 1)) / __y) * __y; })
#define rounddown(x, y) ({ __typeof__(x) __x = (x); __x - (__x % (y)); })

#endif
