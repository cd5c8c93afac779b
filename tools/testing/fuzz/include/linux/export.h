/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Exports are no-ops; the declaration they expand to still requires the
 * symbol to exist and absorbs the trailing semicolon.
 */
#ifndef SIW2_SHIM_LINUX_EXPORT_H
#define SIW2_SHIM_LINUX_EXPORT_H

#define EXPORT_SYMBOL(sym)		extern __typeof__(sym) sym
#define EXPORT_SYMBOL_GPL(sym)		extern __typeof__(sym) sym
#define EXPORT_SYMBOL_NS(sym, ns)	extern __typeof__(sym) sym
#define EXPORT_SYMBOL_NS_GPL(sym, ns)	extern __typeof__(sym) sym

#endif
