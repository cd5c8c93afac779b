/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Differences between the kernels siw2 builds against (Debian's 6.1 and
 * 6.12), in one place. Force-included into every siw2 object by Kbuild, so
 * no other file tests a kernel version.
 */
#ifndef SIW2_COMPAT_H
#define SIW2_COMPAT_H

#include <linux/version.h>

/*
 * 6.11 passed the whole uverbs attribute bundle to ib_device_ops.create_cq
 * instead of only the driver's udata. Handlers name the argument uarg and
 * reach the udata through siw2_create_cq_udata() when uarg is not NULL (a
 * kernel consumer passes none); they spell the argument
 * SIW2_CREATE_CQ_ARG *uarg.
 */
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 11, 0)
#define SIW2_CREATE_CQ_ARG struct uverbs_attr_bundle
#define siw2_create_cq_udata(arg) (&(arg)->driver_udata)
#else
#define SIW2_CREATE_CQ_ARG struct ib_udata
#define siw2_create_cq_udata(arg) (arg)
#endif

/*
 * A kernel socket holds no reference on its namespace. siw2's sockets take
 * one, as user sockets do (see socket.c). Debian's 6.12 has the helper
 * (backported with the fix of the same problem in other subsystems); on
 * 6.1 it is open-coded as 6.1's own users (MPTCP subflows) do it.
 */
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 12, 0)
#define siw2_sk_hold_net(sk) sk_net_refcnt_upgrade(sk)
#else
#define siw2_sk_hold_net(sk)						\
	do {								\
		struct sock *__sk = (sk);				\
									\
		__sk->sk_net_refcnt = 1;				\
		get_net_track(sock_net(__sk), &__sk->ns_tracker,	\
			      GFP_KERNEL);				\
		sock_inuse_add(sock_net(__sk), 1);			\
	} while (0)
#endif

/*
 * 6.3 made vma->vm_flags read-only outside mm/ and added helpers that
 * take the mmap lock's write side for granted, as ->mmap handlers may.
 */
#if LINUX_VERSION_CODE < KERNEL_VERSION(6, 3, 0)
#include <linux/mm.h>
static inline void siw2_vm_flags_mod(struct vm_area_struct *vma,
				     unsigned long set, unsigned long clear)
{
	vma->vm_flags = (vma->vm_flags | set) & ~clear;
}
#else
#define siw2_vm_flags_mod(vma, set, clear) vm_flags_mod(vma, set, clear)
#endif

/*
 * 6.10 moved struct ubuf_info's completion callback (zero-copy transmit)
 * into an ops table. SIW2_UBUF_OPS(name, fn) defines what
 * siw2_ubuf_init(uarg, name) then installs.
 */
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 10, 0)
#define SIW2_UBUF_OPS(name, fn)						\
	static const struct ubuf_info_ops name = { .complete = fn }
#define siw2_ubuf_init(uarg, name) ((uarg)->ops = &(name))
#else
#define SIW2_UBUF_OPS(name, fn)						\
	static void (*const name)(struct sk_buff *, struct ubuf_info *,	\
				  bool) = fn
#define siw2_ubuf_init(uarg, name) ((uarg)->callback = (name))
#endif

#endif /* SIW2_COMPAT_H */
