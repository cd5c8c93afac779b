// SPDX-License-Identifier: GPL-2.0
/*
 * A device's settings: the files of /sys/class/infiniband/<dev>/siw2/ and
 * the module parameters that are each new device's defaults.
 *
 * Every setting two devices may want to differ in is the device's own
 * (struct siw2_conf, Documentation/admin-guide.md lists them). A
 * connection takes a snapshot of its device's settings when it starts
 * (cm.c: at iw_connect, or when a listener accepts the TCP connection)
 * and keeps it (the stream its tx_zerocopy), so a change applies to the
 * next connection and never to one under way; what a connection
 * negotiated is in `rdma resource show qp -dd` (restrack.c). sq_poll_us
 * and port_map are read for each poll and each new listen or connect
 * instead.
 *
 * Two choices stay module-wide: copy_impl and mpa_crc_impl (copy.c,
 * crc.c) pick the CPU routine for a job every device does alike, and
 * differ in speed only.
 *
 * Locking. sdev->conf_lock, a spinlock taken in process context only,
 * serializes the writers and makes a snapshot consistent (a revision with
 * the p2p setting it was chosen with). A field read on its own outside
 * the lock (sq_poll_us, by the pollers) is read with READ_ONCE, so
 * writers use WRITE_ONCE.
 *
 * Permission. The files are 0644, and a write must also come from a task
 * with CAP_NET_ADMIN over the user namespace of the device's network
 * namespace: in exclusive mode (rdma system set netns exclusive) the
 * device, its files with it, belongs to one namespace, and that
 * namespace's administrator configures it.
 */
#include <linux/capability.h>
#include <linux/device.h>
#include <linux/sysfs.h>
#include <net/net_namespace.h>
#include <rdma/iw_cm.h>

#include "siw2.h"
#include "wire.h"
#include "mpa.h"

/* The limits of each setting, for the files and the module parameters. */
#define MS_MIN 100
#define MS_MAX 600000
/* RFC 6581 9.2: an enhanced responder offers at least one RTR type. */
#define RTR_MIN 1

static unsigned int mpa_rev = SIW2_MPA_REV_2;
static bool mpa_crc = true;
static bool mpa_markers;
static bool mpa_p2p = true;
static bool mpa_large_fpdu;
static unsigned int mpa_rtr = SIW2_MPA_RTR_ALL;
static unsigned int tcp_timeout_ms = 10000;
static unsigned int mpa_request_timeout_ms = 10000;
static unsigned int mpa_reply_timeout_ms = 20000;
static bool tx_zerocopy;
static bool port_map;

static int set_rev(const char *val, const struct kernel_param *kp)
{
	return param_set_uint_minmax(val, kp, SIW2_MPA_REV_1, SIW2_MPA_REV_2);
}

static int set_rtr(const char *val, const struct kernel_param *kp)
{
	return param_set_uint_minmax(val, kp, RTR_MIN, SIW2_MPA_RTR_ALL);
}

static int set_ms(const char *val, const struct kernel_param *kp)
{
	return param_set_uint_minmax(val, kp, MS_MIN, MS_MAX);
}

static const struct kernel_param_ops rev_ops = {
	.set = set_rev,
	.get = param_get_uint,
};

static const struct kernel_param_ops rtr_ops = {
	.set = set_rtr,
	.get = param_get_uint,
};

static const struct kernel_param_ops ms_ops = {
	.set = set_ms,
	.get = param_get_uint,
};

module_param_cb(mpa_rev, &rev_ops, &mpa_rev, 0644);
MODULE_PARM_DESC(mpa_rev, "New devices: MPA revision requested, highest accepted (1 or 2 = RFC 6581; default 2)");
module_param(mpa_crc, bool, 0644);
MODULE_PARM_DESC(mpa_crc, "New devices: ask for MPA CRCs (default on, RFC 5044 4.4)");
module_param(mpa_markers, bool, 0644);
MODULE_PARM_DESC(mpa_markers, "New devices: ask for MPA Markers (default off)");
module_param(mpa_p2p, bool, 0644);
MODULE_PARM_DESC(mpa_p2p, "New devices: as initiator, request the RFC 6581 peer-to-peer RTR, so that the responder may send first (default on; a responder answers what it is asked)");
module_param(mpa_large_fpdu, bool, 0644);
MODULE_PARM_DESC(mpa_large_fpdu, "New devices: offer, and with a peer that offers it too use, FPDUs larger than a TCP segment (not RFC 5044; default off)");
module_param_cb(mpa_rtr, &rtr_ops, &mpa_rtr, 0644);
MODULE_PARM_DESC(mpa_rtr, "New devices: RTR types offered or accepted: 1 Send, 2 Write, 4 Read (default 7)");
module_param_cb(tcp_timeout_ms, &ms_ops, &tcp_timeout_ms, 0644);
MODULE_PARM_DESC(tcp_timeout_ms, "New devices: TCP connect timeout (default 10000)");
module_param_cb(mpa_request_timeout_ms, &ms_ops, &mpa_request_timeout_ms, 0644);
MODULE_PARM_DESC(mpa_request_timeout_ms, "New devices: wait for an MPA Request after a TCP accept (default 10000)");
module_param_cb(mpa_reply_timeout_ms, &ms_ops, &mpa_reply_timeout_ms, 0644);
MODULE_PARM_DESC(mpa_reply_timeout_ms, "New devices: wait for an MPA Reply, and for the ULP to answer a request (default 20000)");
/* zcopy.c has the why and the rules. */
module_param(tx_zerocopy, bool, 0644);
MODULE_PARM_DESC(tx_zerocopy, "New devices: send Sends and Writes of 16 KiB or more from user memory without a copy; they complete once TCP let go of their pages (default: off)");
module_param(port_map, bool, 0644);
MODULE_PARM_DESC(port_map, "New devices take the ports iwpmd maps to, if it runs (default off: the RDMA CM's ports)");

/*
 * Each new device's sq_poll_us. Off by default: polling pays where a
 * poller has a CPU to itself, and on a machine whose CPUs the
 * applications keep busy it costs them latency (admin guide).
 */
static unsigned int sq_poll_us;
module_param(sq_poll_us, uint, 0644);
MODULE_PARM_DESC(sq_poll_us, "New devices: microseconds to poll an idle user send queue before posts ring again (0: off, at most 1000000)");

static void port_map_apply(struct siw2_device *sdev, u32 on);

/**
 * siw2_conf_init() - give a new device the module's defaults
 * @sdev: the device, not yet registered
 */
void siw2_conf_init(struct siw2_device *sdev)
{
	struct siw2_conf *c = &sdev->conf;

	spin_lock_init(&sdev->conf_lock);
	c->mpa_rev = clamp(READ_ONCE(mpa_rev), SIW2_MPA_REV_1, SIW2_MPA_REV_2);
	c->mpa_rtr = clamp(READ_ONCE(mpa_rtr), RTR_MIN, SIW2_MPA_RTR_ALL);
	c->mpa_crc = READ_ONCE(mpa_crc);
	c->mpa_markers = READ_ONCE(mpa_markers);
	c->mpa_p2p = READ_ONCE(mpa_p2p);
	c->mpa_large_fpdu = READ_ONCE(mpa_large_fpdu);
	c->tx_zerocopy = READ_ONCE(tx_zerocopy);
	c->tcp_timeout_ms = clamp(READ_ONCE(tcp_timeout_ms), MS_MIN, MS_MAX);
	c->mpa_request_timeout_ms = clamp(READ_ONCE(mpa_request_timeout_ms),
					  MS_MIN, MS_MAX);
	c->mpa_reply_timeout_ms = clamp(READ_ONCE(mpa_reply_timeout_ms),
					MS_MIN, MS_MAX);
	c->sq_poll_us = min(READ_ONCE(sq_poll_us), SIW2_SQ_POLL_US_MAX);
	c->port_map = READ_ONCE(port_map);
	port_map_apply(sdev, c->port_map);
}

/**
 * siw2_conf_get() - a consistent copy of a device's settings
 * @sdev: the device
 * @conf: filled in
 *
 * Context: process.
 */
void siw2_conf_get(struct siw2_device *sdev, struct siw2_conf *conf)
{
	spin_lock(&sdev->conf_lock);
	*conf = sdev->conf;
	spin_unlock(&sdev->conf_lock);
}

static struct siw2_device *attr_sdev(struct device *dev)
{
	return to_siw2_dev(container_of(dev, struct ib_device, dev));
}

/*
 * The namespace the device is in: the core's rdma_dev_net() is private to
 * it (core_priv.h), the field it reads is not.
 */
static struct net *sdev_net(struct siw2_device *sdev)
{
	return read_pnet(&sdev->ibdev.coredev.rdma_net);
}

/*
 * One setting's file: the u32 at @off in struct siw2_conf, a number from
 * @min to @max or, if @is_bool, 0 or 1 (written as parse_bool() takes
 * it). @apply, if set, passes the new value on, under conf_lock.
 */
struct conf_attr {
	struct device_attribute attr;
	size_t off;
	bool is_bool;
	u32 min, max;
	void (*apply)(struct siw2_device *sdev, u32 val);
};

static u32 *conf_field(struct siw2_device *sdev, const struct conf_attr *ca)
{
	return (u32 *)((u8 *)&sdev->conf + ca->off);
}

/*
 * The spellings of a flag. Stricter than kstrtobool(), which reads the
 * first character only and so takes "10" or "yes-please".
 */
static const char * const bool_true[] = { "1", "y", "Y", "yes", "on", "true" };
static const char * const bool_false[] = { "0", "n", "N", "no", "off", "false" };

static int parse_bool(const char *buf, bool *on)
{
	if (sysfs_match_string(bool_true, buf) >= 0)
		*on = true;
	else if (sysfs_match_string(bool_false, buf) >= 0)
		*on = false;
	else
		return -EINVAL;
	return 0;
}

static ssize_t conf_show(struct device *dev, struct device_attribute *attr,
			 char *buf)
{
	const struct conf_attr *ca = container_of(attr, struct conf_attr, attr);

	return sysfs_emit(buf, "%u\n",
			  READ_ONCE(*conf_field(attr_sdev(dev), ca)));
}

static ssize_t conf_store(struct device *dev, struct device_attribute *attr,
			  const char *buf, size_t count)
{
	const struct conf_attr *ca = container_of(attr, struct conf_attr, attr);
	struct siw2_device *sdev = attr_sdev(dev);
	u32 val;
	bool on;

	if (!ns_capable(sdev_net(sdev)->user_ns, CAP_NET_ADMIN))
		return -EPERM;
	if (ca->is_bool) {
		if (parse_bool(buf, &on))
			return -EINVAL;
		val = on;
	} else if (kstrtou32(buf, 0, &val) || val < ca->min ||
		   val > ca->max) {
		return -EINVAL;
	}

	spin_lock(&sdev->conf_lock);
	WRITE_ONCE(*conf_field(sdev, ca), val);
	if (ca->apply)
		ca->apply(sdev, val);
	spin_unlock(&sdev->conf_lock);
	return count;
}

#define CONF_ATTR(field, ...)						\
	static struct conf_attr conf_##field = {			\
		.attr = {						\
			.attr = { .name = #field, .mode = 0644 },	\
			.show = conf_show,				\
			.store = conf_store,				\
		},							\
		.off = offsetof(struct siw2_conf, field),		\
		__VA_ARGS__						\
	}

/* iWARP port mapping (cm.c): the iw_cm reads it for each listen and connect. */
static void port_map_apply(struct siw2_device *sdev, u32 on)
{
	WRITE_ONCE(sdev->ibdev.iw_driver_flags, on ? 0 : IW_F_NO_PORT_MAP);
}

CONF_ATTR(mpa_rev, .min = SIW2_MPA_REV_1, .max = SIW2_MPA_REV_2);
CONF_ATTR(mpa_rtr, .min = RTR_MIN, .max = SIW2_MPA_RTR_ALL);
CONF_ATTR(mpa_crc, .is_bool = true);
CONF_ATTR(mpa_markers, .is_bool = true);
CONF_ATTR(mpa_p2p, .is_bool = true);
CONF_ATTR(mpa_large_fpdu, .is_bool = true);
CONF_ATTR(tcp_timeout_ms, .min = MS_MIN, .max = MS_MAX);
CONF_ATTR(mpa_request_timeout_ms, .min = MS_MIN, .max = MS_MAX);
CONF_ATTR(mpa_reply_timeout_ms, .min = MS_MIN, .max = MS_MAX);
CONF_ATTR(tx_zerocopy, .is_bool = true);
CONF_ATTR(sq_poll_us, .max = SIW2_SQ_POLL_US_MAX);
CONF_ATTR(port_map, .is_bool = true, .apply = port_map_apply);

/* The ABI the provider checks before it opens the device. */
static ssize_t abi_version_show(struct device *dev,
				struct device_attribute *attr, char *buf)
{
	return sysfs_emit(buf, "%u\n", SIW2_ABI_VERSION);
}
static DEVICE_ATTR_RO(abi_version);

static struct attribute *siw2_attrs[] = {
	&dev_attr_abi_version.attr,
	&conf_mpa_rev.attr.attr,
	&conf_mpa_rtr.attr.attr,
	&conf_mpa_crc.attr.attr,
	&conf_mpa_markers.attr.attr,
	&conf_mpa_p2p.attr.attr,
	&conf_mpa_large_fpdu.attr.attr,
	&conf_tcp_timeout_ms.attr.attr,
	&conf_mpa_request_timeout_ms.attr.attr,
	&conf_mpa_reply_timeout_ms.attr.attr,
	&conf_tx_zerocopy.attr.attr,
	&conf_sq_poll_us.attr.attr,
	&conf_port_map.attr.attr,
	NULL,
};

/*
 * Named "siw2": the attributes appear in /sys/class/infiniband/<ibdev>/siw2/,
 * which is where the provider looks (SIW2_SYSFS_ABI_ATTR). The core advises
 * netlink for new device parameters, but an out-of-tree driver cannot add
 * netlink attributes, and the provider needs a file it can read before it
 * opens the device.
 */
const struct attribute_group siw2_attr_group = {
	.name = "siw2",
	.attrs = siw2_attrs,
};
