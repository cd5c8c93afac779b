// SPDX-License-Identifier: GPL-2.0
/*
 * Which code copies payload between socket buffers and registered memory
 * when no CRC is folded on the way (with CRCs on, siw2_mpa_crc_copy()
 * does both in one pass).
 *
 * memcpy() is what hardware runs fastest; on x86 with ERMS it is one `rep
 * movsb`. QEMU's TCG executes a string instruction one iteration at a
 * time, an octet per round through its dispatcher, and there a plain loop
 * of 8-octet moves runs several times faster. So, as for MPA's CRC
 * (crc.c), siw2 times both at load and keeps the faster (choose.c).
 *
 * The module parameter copy_impl overrides the choice, at load or at any
 * time later; both do the same thing.
 */
#include <linux/module.h>
#include <linux/string.h>

#include "siw2.h"

static bool copy_words __read_mostly;

static __always_inline void words(void *dst, const void *src, size_t len)
{
	const u8 *s = src;
	u8 *d = dst;
	u64 w;

	for (; len >= sizeof(w); len -= sizeof(w)) {
		memcpy(&w, s, sizeof(w));
		memcpy(d, &w, sizeof(w));
		s += sizeof(w);
		d += sizeof(w);
	}
	while (len--)
		*d++ = *s++;
}

/**
 * siw2_copy() - copy payload octets
 * @dst: destination
 * @src: source; the two do not overlap
 * @len: octets
 *
 * Any context.
 */
void siw2_copy(void *dst, const void *src, size_t len)
{
	if (READ_ONCE(copy_words))
		words(dst, src, len);
	else
		memcpy(dst, src, len);
}

static void run(bool own, u8 *buf)
{
	size_t len = SIW2_CHOICE_PROBE_LEN;

	/* Unknown to the compiler, so that memcpy() is the real call. */
	OPTIMIZER_HIDE_VAR(len);
	if (own)
		words(buf, buf + SIW2_CHOICE_PROBE_LEN, len);
	else
		memcpy(buf, buf + SIW2_CHOICE_PROBE_LEN, len);
	OPTIMIZER_HIDE_VAR(buf);
}

static void use(bool own)
{
	WRITE_ONCE(copy_words, own);
}

static struct siw2_choice copy_choice = {
	.what = "payload copy",
	.name = { "lib", "words" },
	.run = run,
	.use = use,
};

module_param_cb(copy_impl, &siw2_choice_ops, &copy_choice, 0644);
MODULE_PARM_DESC(copy_impl,
		 "payload copy without CRC: auto (time both; the default), lib (memcpy()) or words (a loop of 8-octet moves); reads back lib or words");

void siw2_copy_init(void)
{
	siw2_choice_init(&copy_choice);
}
