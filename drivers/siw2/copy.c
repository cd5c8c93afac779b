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
 * (crc.c), siw2 times both at load and keeps the faster.
 *
 * The module parameter copy_impl overrides the choice, at load or at any
 * time later; both do the same thing.
 */
#include <linux/ktime.h>
#include <linux/math64.h>
#include <linux/module.h>
#include <linux/slab.h>
#include <linux/string.h>

#include "siw2.h"

#define PROBE_LEN	4096
#define PROBE_NS	(2 * NSEC_PER_MSEC)
#define PROBE_ROUNDS	3

static bool copy_words __read_mostly;
static bool impl_set_by_param;	/* init keeps a choice given at load */

static void words(void *dst, const void *src, size_t len)
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

/* Octets per microsecond that one implementation reaches. */
static u64 probe_rate(bool w, u8 *dst, const u8 *src)
{
	u64 start = ktime_get_ns(), now, octets = 0;
	size_t len = PROBE_LEN;

	/* Unknown to the compiler, so that memcpy() is the real call. */
	OPTIMIZER_HIDE_VAR(len);
	do {
		if (w)
			words(dst, src, len);
		else
			memcpy(dst, src, len);
		OPTIMIZER_HIDE_VAR(dst);
		octets += len;
		now = ktime_get_ns();
	} while (now - start < PROBE_NS);
	return div64_u64(octets * NSEC_PER_USEC, now - start);
}

static bool choose_words(void)
{
	u64 lib = 0, loop = 0;
	u8 *buf;
	int i;

	buf = kzalloc(2 * PROBE_LEN, GFP_KERNEL);
	if (!buf)
		return false;
	for (i = 0; i < PROBE_ROUNDS; i++) {
		lib = max(lib, probe_rate(false, buf, buf + PROBE_LEN));
		loop = max(loop, probe_rate(true, buf, buf + PROBE_LEN));
	}
	kfree(buf);
	pr_info("siw2: payload copy: memcpy() %llu MB/s, 8-octet loop %llu MB/s; using %s\n",
		lib, loop, loop > lib ? "the loop" : "memcpy()");
	return loop > lib;
}

static int impl_set(const char *val, const struct kernel_param *kp)
{
	if (sysfs_streq(val, "auto"))
		WRITE_ONCE(copy_words, choose_words());
	else if (sysfs_streq(val, "lib"))
		WRITE_ONCE(copy_words, false);
	else if (sysfs_streq(val, "words"))
		WRITE_ONCE(copy_words, true);
	else
		return -EINVAL;
	impl_set_by_param = true;
	return 0;
}

static int impl_get(char *buf, const struct kernel_param *kp)
{
	return sysfs_emit(buf, "%s\n", READ_ONCE(copy_words) ? "words" : "lib");
}

static const struct kernel_param_ops impl_ops = {
	.set = impl_set,
	.get = impl_get,
};

module_param_cb(copy_impl, &impl_ops, NULL, 0644);
MODULE_PARM_DESC(copy_impl,
		 "payload copy without CRC: auto (time both; the default), lib (memcpy()) or words (a loop of 8-octet moves); reads back lib or words");

void siw2_copy_init(void)
{
	if (!impl_set_by_param)
		WRITE_ONCE(copy_words, choose_words());
}
