/* SPDX-License-Identifier: GPL-2.0 */
#ifndef SIW2_SHIM_ASM_BARRIER_H
#define SIW2_SHIM_ASM_BARRIER_H

/* The kernel's acquire/release pair, as the C11 atomics give it. */
#define smp_store_release(p, v)	__atomic_store_n(p, v, __ATOMIC_RELEASE)
#define smp_load_acquire(p)	__atomic_load_n(p, __ATOMIC_ACQUIRE)

#endif
