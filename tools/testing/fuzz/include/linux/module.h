/* SPDX-License-Identifier: GPL-2.0 */
#ifndef SIW2_SHIM_LINUX_MODULE_H
#define SIW2_SHIM_LINUX_MODULE_H

#include <linux/export.h>
#include <linux/init.h>
#include <linux/kernel.h>

struct module;
#define THIS_MODULE ((struct module *)0)

/* Module metadata: each expands to a harmless repeated declaration. */
#define __SIW2_MODINFO extern int __siw2_shim_modinfo
#define MODULE_LICENSE(x)	__SIW2_MODINFO
#define MODULE_AUTHOR(x)	__SIW2_MODINFO
#define MODULE_DESCRIPTION(x)	__SIW2_MODINFO
#define MODULE_VERSION(x)	__SIW2_MODINFO
#define MODULE_ALIAS(x)		__SIW2_MODINFO
#define MODULE_SOFTDEP(x)	__SIW2_MODINFO
#define MODULE_IMPORT_NS(x)	__SIW2_MODINFO
#define MODULE_PARM_DESC(p, d)	__SIW2_MODINFO

#endif
