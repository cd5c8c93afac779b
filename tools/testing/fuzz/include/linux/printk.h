/* SPDX-License-Identifier: GPL-2.0 */
/*
 * printk() and pr_*(): formats are always type-checked; output goes to
 * stderr only with -DSIW2_SHIM_PRINTK (a fuzzer run would drown in it).
 */
#ifndef SIW2_SHIM_LINUX_PRINTK_H
#define SIW2_SHIM_LINUX_PRINTK_H

#include <stdarg.h>
#include <stdio.h>
#include <linux/compiler.h>

#define KERN_SOH	"\001"
#define KERN_EMERG	KERN_SOH "0"
#define KERN_ALERT	KERN_SOH "1"
#define KERN_CRIT	KERN_SOH "2"
#define KERN_ERR	KERN_SOH "3"
#define KERN_WARNING	KERN_SOH "4"
#define KERN_NOTICE	KERN_SOH "5"
#define KERN_INFO	KERN_SOH "6"
#define KERN_DEBUG	KERN_SOH "7"
#define KERN_CONT	KERN_SOH "c"

#ifdef SIW2_SHIM_PRINTK
#define __siw2_printk_on 1
#else
#define __siw2_printk_on 0
#endif

static inline __printf(1, 2) int printk(const char *fmt, ...)
{
	va_list ap;
	int ret;

	if (!__siw2_printk_on)
		return 0;
	if (fmt[0] == KERN_SOH[0] && fmt[1])
		fmt += 2;
	va_start(ap, fmt);
	ret = vfprintf(stderr, fmt, ap);
	va_end(ap);
	return ret;
}

#ifndef pr_fmt
#define pr_fmt(fmt) fmt
#endif

#define pr_emerg(fmt, ...)	printk(KERN_EMERG pr_fmt(fmt), ##__VA_ARGS__)
#define pr_alert(fmt, ...)	printk(KERN_ALERT pr_fmt(fmt), ##__VA_ARGS__)
#define pr_crit(fmt, ...)	printk(KERN_CRIT pr_fmt(fmt), ##__VA_ARGS__)
#define pr_err(fmt, ...)	printk(KERN_ERR pr_fmt(fmt), ##__VA_ARGS__)
#define pr_warn(fmt, ...)	printk(KERN_WARNING pr_fmt(fmt), ##__VA_ARGS__)
#define pr_notice(fmt, ...)	printk(KERN_NOTICE pr_fmt(fmt), ##__VA_ARGS__)
#define pr_info(fmt, ...)	printk(KERN_INFO pr_fmt(fmt), ##__VA_ARGS__)
#define pr_cont(fmt, ...)	printk(KERN_CONT fmt, ##__VA_ARGS__)
#define pr_debug(fmt, ...)	printk(KERN_DEBUG pr_fmt(fmt), ##__VA_ARGS__)
#define pr_devel(fmt, ...)	pr_debug(fmt, ##__VA_ARGS__)

#define pr_err_ratelimited(fmt, ...)	pr_err(fmt, ##__VA_ARGS__)
#define pr_warn_ratelimited(fmt, ...)	pr_warn(fmt, ##__VA_ARGS__)
#define pr_notice_ratelimited(fmt, ...)	pr_notice(fmt, ##__VA_ARGS__)
#define pr_info_ratelimited(fmt, ...)	pr_info(fmt, ##__VA_ARGS__)
#define pr_debug_ratelimited(fmt, ...)	pr_debug(fmt, ##__VA_ARGS__)
#define pr_err_once(fmt, ...)		pr_err(fmt, ##__VA_ARGS__)
#define pr_warn_once(fmt, ...)		pr_warn(fmt, ##__VA_ARGS__)
#define pr_info_once(fmt, ...)		pr_info(fmt, ##__VA_ARGS__)
#define pr_debug_once(fmt, ...)		pr_debug(fmt, ##__VA_ARGS__)

#endif
