// SPDX-License-Identifier: GPL-2.0
/*
 * Which CRC32c implementation MPA computes its FPDU CRCs with.
 *
 * crc32c() goes to the crypto API's highest-priority "crc32c", on x86 the
 * SSE4.2 instruction, which is what hardware runs fastest. Priority is
 * fixed at build time, though, and an emulator may run that instruction
 * far slower than a table lookup: QEMU's TCG computes it one bit at a
 * time. So, as the kernel's xor and raid6 code do, siw2 times both
 * implementations at load and keeps the faster one.
 *
 * The module parameter mpa_crc_impl overrides the choice, at load or at
 * any time later: both compute the same function, so a CRC begun with one
 * may be finished with the other.
 */
#include <linux/crc32.h>
#include <linux/crc32c.h>
#include <linux/ktime.h>
#include <linux/math64.h>
#include <linux/module.h>
#include <linux/random.h>
#include <linux/slab.h>
#include <linux/string.h>

#include "mpa.h"
#include "siw2.h"

#define PROBE_LEN	4096
#define PROBE_NS	(2 * NSEC_PER_MSEC)
#define PROBE_ROUNDS	3

static bool impl_table;		/* what siw2_mpa_crc_use_table() was told */
static bool impl_set_by_param;	/* init keeps a choice given at load */

static u32 crc_of(bool table, u32 crc, const u8 *buf, size_t len)
{
	return table ? __crc32c_le(crc, buf, len) : crc32c(crc, buf, len);
}

/* Octets per microsecond that one implementation reaches over @buf. */
static u64 probe_rate(bool table, const u8 *buf)
{
	u64 start = ktime_get_ns(), now, octets = 0;
	u32 crc = SIW2_MPA_CRC_SEED;

	do {
		crc = crc_of(table, crc, buf, PROBE_LEN);
		octets += PROBE_LEN;
		now = ktime_get_ns();
	} while (now - start < PROBE_NS);
	OPTIMIZER_HIDE_VAR(crc);
	return div64_u64(octets * NSEC_PER_USEC, now - start);
}

static bool choose_table(void)
{
	u64 lib = 0, table = 0;
	u8 *buf;
	int i;

	buf = kmalloc(PROBE_LEN, GFP_KERNEL);
	if (!buf)
		return false;
	get_random_bytes(buf, PROBE_LEN);
	/* Both must compute the same function before speed matters. */
	if (crc_of(false, SIW2_MPA_CRC_SEED, buf, PROBE_LEN) !=
	    crc_of(true, SIW2_MPA_CRC_SEED, buf, PROBE_LEN)) {
		pr_warn("siw2: crc32c() and __crc32c_le() disagree; using crc32c()\n");
		kfree(buf);
		return false;
	}
	for (i = 0; i < PROBE_ROUNDS; i++) {
		lib = max(lib, probe_rate(false, buf));
		table = max(table, probe_rate(true, buf));
	}
	kfree(buf);
	pr_info("siw2: MPA CRC32c: crc32c() %llu MB/s, table %llu MB/s; using %s\n",
		lib, table, table > lib ? "table" : "crc32c()");
	return table > lib;
}

static void use(bool table)
{
	impl_table = table;
	siw2_mpa_crc_use_table(table);
}

static int impl_set(const char *val, const struct kernel_param *kp)
{
	if (sysfs_streq(val, "auto"))
		use(choose_table());
	else if (sysfs_streq(val, "lib"))
		use(false);
	else if (sysfs_streq(val, "table"))
		use(true);
	else
		return -EINVAL;
	impl_set_by_param = true;
	return 0;
}

static int impl_get(char *buf, const struct kernel_param *kp)
{
	return sysfs_emit(buf, "%s\n", impl_table ? "table" : "lib");
}

static const struct kernel_param_ops impl_ops = {
	.set = impl_set,
	.get = impl_get,
};

module_param_cb(mpa_crc_impl, &impl_ops, NULL, 0644);
MODULE_PARM_DESC(mpa_crc_impl,
		 "CRC32c code for MPA: auto (time both; the default), lib (crc32c()) or table (__crc32c_le()); reads back lib or table");

void siw2_crc_init(void)
{
	if (!impl_set_by_param)
		use(choose_table());
}
