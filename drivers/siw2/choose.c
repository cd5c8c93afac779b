// SPDX-License-Identifier: GPL-2.0
/*
 * Choosing between two implementations of one function by timing them, as
 * the kernel's xor and raid6 code do: the library's (what hardware runs
 * fastest) and siw2's own (what an emulator runs fastest; see crc.c and
 * copy.c). Both are timed at load, and whenever the module parameter is
 * set to "auto"; setting it to either implementation's name forces that
 * one, at load or at any time later.
 */
#include <linux/ktime.h>
#include <linux/math64.h>
#include <linux/module.h>
#include <linux/slab.h>
#include <linux/string.h>

#include "siw2.h"

#define PROBE_NS	(2 * NSEC_PER_MSEC)
#define PROBE_ROUNDS	3

/* Octets per microsecond that one implementation reaches. */
static u64 probe_rate(const struct siw2_choice *c, bool own, u8 *buf)
{
	u64 start = ktime_get_ns(), now, octets = 0;

	do {
		c->run(own, buf);
		octets += SIW2_CHOICE_PROBE_LEN;
		now = ktime_get_ns();
	} while (now - start < PROBE_NS);
	return div64_u64(octets * NSEC_PER_USEC, now - start);
}

static bool choose_own(const struct siw2_choice *c)
{
	u64 lib = 0, own = 0;
	u8 *buf;
	int i;

	buf = kzalloc(2 * SIW2_CHOICE_PROBE_LEN, GFP_KERNEL);
	if (!buf)
		return false;
	if (c->agree && !c->agree(buf)) {
		pr_warn("siw2: %s: the two implementations disagree; using %s\n",
			c->what, c->name[0]);
		kfree(buf);
		return false;
	}
	for (i = 0; i < PROBE_ROUNDS; i++) {
		lib = max(lib, probe_rate(c, false, buf));
		own = max(own, probe_rate(c, true, buf));
	}
	kfree(buf);
	pr_info("siw2: %s: %s %llu MB/s, %s %llu MB/s; using %s\n", c->what,
		c->name[0], lib, c->name[1], own, c->name[own > lib]);
	return own > lib;
}

static void use(struct siw2_choice *c, bool own)
{
	WRITE_ONCE(c->own, own);
	c->use(own);
}

static int choice_set(const char *val, const struct kernel_param *kp)
{
	struct siw2_choice *c = kp->arg;

	if (sysfs_streq(val, "auto"))
		use(c, choose_own(c));
	else if (sysfs_streq(val, c->name[0]))
		use(c, false);
	else if (sysfs_streq(val, c->name[1]))
		use(c, true);
	else
		return -EINVAL;
	c->set_by_param = true;
	return 0;
}

static int choice_get(char *buf, const struct kernel_param *kp)
{
	const struct siw2_choice *c = kp->arg;

	return sysfs_emit(buf, "%s\n", c->name[READ_ONCE(c->own)]);
}

const struct kernel_param_ops siw2_choice_ops = {
	.set = choice_set,
	.get = choice_get,
};

/* At load, after the module parameters: times both unless one was set. */
void siw2_choice_init(struct siw2_choice *c)
{
	if (!c->set_by_param)
		use(c, choose_own(c));
}
