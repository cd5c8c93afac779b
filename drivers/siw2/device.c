// SPDX-License-Identifier: GPL-2.0
/*
 * Device lifetime: rdma link add/delete, the netdev notifier, module unload.
 *
 * Lifetime rules. A siw2_device is allocated by newlink, lives on the module's
 * device list from just before ib_register_device() until the core calls
 * dealloc_driver, and is freed by the core after that. Three paths end a
 * device: `rdma link delete` (the core unregisters it), the netdev going away
 * (the notifier queues an unregistration) and module unload (we unregister
 * what is left and wait for the list to drain).
 *
 * Lock order: the core's locks and RTNL may be taken inside
 * ib_register_device(); the netdev notifier runs under RTNL and takes
 * devices_lock. devices_lock is therefore never held across a call into the
 * core that might take RTNL.
 */
#include <linux/etherdevice.h>
#include <linux/if_arp.h>
#include <linux/inetdevice.h>
#include <linux/random.h>
#include <linux/wait.h>
#include <net/addrconf.h>
#include <rdma/iw_cm.h>
#include <rdma/rdma_netlink.h>

#include "siw2.h"
#include <rdma/siw2-abi.h>

static DEFINE_MUTEX(devices_lock);
static LIST_HEAD(devices);
static DECLARE_WAIT_QUEUE_HEAD(devices_drained);

/*
 * The single place a device's own resources are released: the core calls it
 * after unregistration, and ib_dealloc_device() calls it on newlink's error
 * paths, so it copes with a device that never reached the list.
 */
static void dealloc_driver(struct ib_device *ibdev)
{
	struct siw2_device *sdev = to_siw2_dev(ibdev);

	mutex_lock(&devices_lock);
	if (!list_empty(&sdev->list)) {
		list_del_init(&sdev->list);
		if (list_empty(&devices))
			wake_up_all(&devices_drained);
	}
	mutex_unlock(&devices_lock);

	if (sdev->netdev)
		netdev_put(sdev->netdev, &sdev->netdev_tracker);
	sdev->netdev = NULL;
	/*
	 * Every MR was deregistered and every window deallocated; the frees
	 * their last holders queued.
	 */
	siw2_mr_flush();
	WARN_ON_ONCE(atomic_read(&sdev->num_mr) || atomic_read(&sdev->num_mw));
	siw2_verbs_uninit_device(sdev);
	siw2_counters_uninit_device(sdev);
	siw2_obj_destroyed(SIW2_OBJ_DEVICE);
}

static const struct ib_device_ops siw2_device_ops = {
	.owner = THIS_MODULE,
	.driver_id = RDMA_DRIVER_UNKNOWN,
	.uverbs_abi_ver = SIW2_ABI_VERSION,
	.device_group = &siw2_attr_group,
	.dealloc_driver = dealloc_driver,
};

/*
 * Can this netdev carry the TCP connections siw2 runs over? Its link type
 * must be one that carries IP, and IPv4 or IPv6 must be set up on it (a CAN
 * device, say, has an in_device but no IP link type).
 */
static bool netdev_carries_ip(struct net_device *ndev)
{
	switch (ndev->type) {
	case ARPHRD_ETHER:
	case ARPHRD_LOOPBACK:
	case ARPHRD_NONE:	/* L3 devices: tun, wireguard, ipvlan l3 */
	case ARPHRD_RAWIP:
	case ARPHRD_INFINIBAND:	/* IPoIB */
	case ARPHRD_IPGRE:
	case ARPHRD_IP6GRE:
	case ARPHRD_TUNNEL:
	case ARPHRD_TUNNEL6:
	case ARPHRD_SIT:
	case ARPHRD_PPP:
		break;
	default:
		return false;
	}
	return rcu_access_pointer(ndev->ip_ptr) ||
	       rcu_access_pointer(ndev->ip6_ptr);
}

static void set_node_guid(struct siw2_device *sdev, struct net_device *ndev)
{
	u8 *guid = (u8 *)&sdev->ibdev.node_guid;

	/* Modified EUI-64 from the MAC, as IPv6 link-local addresses are. */
	if (ndev->addr_len == ETH_ALEN && !is_zero_ether_addr(ndev->dev_addr))
		addrconf_addr_eui48(guid, ndev->dev_addr);
	else
		get_random_bytes(guid, sizeof(sdev->ibdev.node_guid));
}

static struct siw2_device *find_by_netdev(struct net_device *ndev)
{
	struct siw2_device *sdev;

	lockdep_assert_held(&devices_lock);
	list_for_each_entry(sdev, &devices, list)
		if (sdev->netdev == ndev)
			return sdev;
	return NULL;
}

static int newlink(const char *ibdev_name, struct net_device *ndev)
{
	struct siw2_device *sdev;
	bool gone;
	int ret;

	if (!netdev_carries_ip(ndev)) {
		pr_warn("siw2: %s cannot carry TCP/IP (type %u), not adding %s\n",
			netdev_name(ndev), ndev->type, ibdev_name);
		return -EINVAL;
	}

	sdev = ib_alloc_device(siw2_device, ibdev);
	if (!sdev)
		return -ENOMEM;
	siw2_obj_created(SIW2_OBJ_DEVICE);

	INIT_LIST_HEAD(&sdev->list);
	siw2_verbs_init_device(sdev);
	ib_set_device_ops(&sdev->ibdev, &siw2_device_ops);
	ib_set_device_ops(&sdev->ibdev, &siw2_verbs_ops);
	ib_set_device_ops(&sdev->ibdev, &siw2_restrack_ops);
	ib_set_device_ops(&sdev->ibdev, &siw2_counters_ops);
	netdev_hold(ndev, &sdev->netdev_tracker, GFP_KERNEL);
	sdev->netdev = ndev;
	siw2_conf_init(sdev);
	set_node_guid(sdev, ndev);
	sdev->ibdev.node_type = RDMA_NODE_RNIC;
	sdev->ibdev.phys_port_cnt = 1;
	sdev->ibdev.num_comp_vectors = num_possible_cpus();
	strscpy(sdev->ibdev.node_desc, "siw2 " SIW2_DRV_NAME,
		sizeof(sdev->ibdev.node_desc));
	/* The iWARP port mapper (iwpmd) looks the netdev up by this name. */
	strscpy(sdev->ibdev.iw_ifname, netdev_name(ndev),
		sizeof(sdev->ibdev.iw_ifname));

	ret = siw2_counters_init_device(sdev);
	if (ret)
		goto err_dealloc;
	ret = ib_device_set_netdev(&sdev->ibdev, ndev, 1);
	if (ret)
		goto err_dealloc;

	mutex_lock(&devices_lock);
	if (find_by_netdev(ndev)) {
		mutex_unlock(&devices_lock);
		pr_warn("siw2: %s already has a siw2 device, not adding %s\n",
			netdev_name(ndev), ibdev_name);
		ret = -EEXIST;
		goto err_dealloc;
	}
	list_add_tail(&sdev->list, &devices);
	mutex_unlock(&devices_lock);

	/*
	 * A failed registration leaves the device to us; ib_dealloc_device()
	 * then runs dealloc_driver like every other end does.
	 */
	ret = ib_register_device(&sdev->ibdev, ibdev_name, NULL);
	if (ret) {
		pr_warn("siw2: registering %s failed: %d\n", ibdev_name, ret);
		goto err_dealloc;
	}

	/*
	 * The notifier ignores devices that are not yet live. If the netdev
	 * started to unregister before we got here, it saw us not live and
	 * left the device to us: reg_state changes under RTNL before the
	 * notifier runs, and the notifier takes devices_lock after that.
	 */
	mutex_lock(&devices_lock);
	sdev->live = true;
	gone = READ_ONCE(ndev->reg_state) != NETREG_REGISTERED;
	mutex_unlock(&devices_lock);
	if (gone)
		ib_unregister_device(&sdev->ibdev);
	return 0;

err_dealloc:
	/* dealloc_driver takes the device off the list and drops the netdev. */
	ib_dealloc_device(&sdev->ibdev);
	return ret;
}

static struct rdma_link_ops siw2_link_ops = {
	.type = SIW2_LINK_TYPE,
	.newlink = newlink,
};

static void port_event(struct siw2_device *sdev, enum ib_event_type type)
{
	struct ib_event event = {
		.device = &sdev->ibdev,
		.element.port_num = 1,
		.event = type,
	};

	ib_dispatch_event(&event);
}

static int netdev_event(struct notifier_block *nb, unsigned long event,
			void *ptr)
{
	struct net_device *ndev = netdev_notifier_info_to_dev(ptr);
	struct siw2_device *sdev;

	mutex_lock(&devices_lock);
	sdev = find_by_netdev(ndev);
	if (!sdev || !sdev->live || !ib_device_try_get(&sdev->ibdev)) {
		mutex_unlock(&devices_lock);
		return NOTIFY_DONE;
	}
	mutex_unlock(&devices_lock);

	switch (event) {
	case NETDEV_UP:
	case NETDEV_CHANGE:
		if (netif_running(ndev) && netif_carrier_ok(ndev))
			port_event(sdev, IB_EVENT_PORT_ACTIVE);
		else
			port_event(sdev, IB_EVENT_PORT_ERR);
		break;
	case NETDEV_DOWN:
		port_event(sdev, IB_EVENT_PORT_ERR);
		break;
	case NETDEV_CHANGENAME:
		strscpy(sdev->ibdev.iw_ifname, netdev_name(ndev),
			sizeof(sdev->ibdev.iw_ifname));
		break;
	case NETDEV_UNREGISTER:
		/* Also sent when the netdev moves to another namespace. */
		ib_unregister_device_queued(&sdev->ibdev);
		break;
	default:
		break;
	}
	ib_device_put(&sdev->ibdev);
	return NOTIFY_OK;
}

static struct notifier_block siw2_netdev_nb = {
	.notifier_call = netdev_event,
};

int siw2_device_init(void)
{
	int ret;

	ret = register_netdevice_notifier(&siw2_netdev_nb);
	if (ret)
		return ret;
	rdma_link_register(&siw2_link_ops);
	return 0;
}

/* Takes a reference on a live device still on the list, if there is one. */
static struct siw2_device *get_any_device(void)
{
	struct siw2_device *sdev;

	mutex_lock(&devices_lock);
	list_for_each_entry(sdev, &devices, list) {
		if (sdev->live && ib_device_try_get(&sdev->ibdev)) {
			mutex_unlock(&devices_lock);
			return sdev;
		}
	}
	mutex_unlock(&devices_lock);
	return NULL;
}

void siw2_device_uninit(void)
{
	struct siw2_device *sdev;

	/* No new devices after this; newlink calls in flight finish first. */
	rdma_link_unregister(&siw2_link_ops);
	unregister_netdevice_notifier(&siw2_netdev_nb);

	while ((sdev = get_any_device()))
		ib_unregister_device_and_put(&sdev->ibdev);

	/*
	 * Devices whose unregistration was already under way (queued by the
	 * notifier, or a concurrent link delete) drop off the list in
	 * dealloc_driver; the module text must outlive them. The condition
	 * must not sleep, so it cannot take devices_lock; nothing is added to
	 * the list any more and entries leave it by list_del_init(), which is
	 * what list_empty_careful() allows for.
	 */
	wait_event(devices_drained, list_empty_careful(&devices));
}
