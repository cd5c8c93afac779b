// SPDX-License-Identifier: GPL-2.0
/*
 * Which CRC32c implementation MPA computes its FPDU CRCs with.
 *
 * crc32c() goes to the crypto API's highest-priority "crc32c", on x86 the
 * SSE4.2 instruction, which is what hardware runs fastest. Priority is
 * fixed at build time, though, and an emulator may run that instruction
 * far slower than a table lookup: QEMU's TCG computes it one bit at a
 * time. So siw2 times both at load and keeps the faster one (choose.c).
 *
 * The module parameter mpa_crc_impl overrides the choice, at load or at
 * any time later: both compute the same function, so a CRC begun with one
 * may be finished with the other.
 */
#include <linux/crc32.h>
#include <linux/crc32c.h>
#include <linux/module.h>
#include <linux/random.h>
#include <linux/string.h>

#include "mpa.h"
#include "siw2.h"

static u32 crc_of(bool table, u32 crc, const u8 *buf, size_t len)
{
	return table ? __crc32c_le(crc, buf, len) : crc32c(crc, buf, len);
}

static void run(bool table, u8 *buf)
{
	u32 crc = crc_of(table, SIW2_MPA_CRC_SEED, buf, SIW2_CHOICE_PROBE_LEN);

	/*
	 * Stored where the caller could read it: __crc32c_le() is __pure,
	 * and the call of an unused result would be left out.
	 */
	memcpy(buf + SIW2_CHOICE_PROBE_LEN, &crc, sizeof(crc));
}

static bool agree(u8 *buf)
{
	get_random_bytes(buf, SIW2_CHOICE_PROBE_LEN);
	return crc_of(false, SIW2_MPA_CRC_SEED, buf, SIW2_CHOICE_PROBE_LEN) ==
	       crc_of(true, SIW2_MPA_CRC_SEED, buf, SIW2_CHOICE_PROBE_LEN);
}

static struct siw2_choice crc_choice = {
	.what = "MPA CRC32c",
	.name = { "lib", "table" },
	.run = run,
	.agree = agree,
	.use = siw2_mpa_crc_use_table,
};

module_param_cb(mpa_crc_impl, &siw2_choice_ops, &crc_choice, 0644);
MODULE_PARM_DESC(mpa_crc_impl,
		 "CRC32c code for MPA: auto (time both; the default), lib (crc32c()) or table (__crc32c_le()); reads back lib or table");

void siw2_crc_init(void)
{
	siw2_choice_init(&crc_choice);
}
