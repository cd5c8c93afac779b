// SPDX-License-Identifier: GPL-2.0
/*
 * The iWARP CM's listening side: the listening sockets, the devices
 * listening on them (ib_device_ops.iw_create_listen, iw_destroy_listen),
 * handing each accepted connection to the device it is for, and closing
 * a namespace's listening sockets as the namespace goes. What happens to
 * a connection once accepted is cm.c's (the endpoint, MPA startup, the
 * CONNECT_REQUEST upcall); this file only starts it (siw2_cep_passive())
 * and, when its listener goes, ends it.
 *
 * Sharing. For a wildcard listen the iw_cm calls create_listen once per
 * device. siw2 keeps one listening socket per (namespace, address, port),
 * struct listen_sock, and hangs each device listening there on it, struct
 * siw2_listener: several devices of a namespace share a wildcard port, and
 * addresses added to a netdev later are covered. A new connection goes to
 * the device whose netdev owns its local address, or is reset if there is
 * none, since the RDMA CM could not place it on a device either. The
 * address listened on is the cm_id's mapped one (cm.c, "Port mapping").
 *
 * Namespaces. A listening socket holds no reference on its namespace
 * (socket.c says why); a pernet pre_exit closes a namespace's listening
 * sockets as it begins to go. A connection takes its own reference when it
 * is accepted, and none is accepted once the namespace is going.
 *
 * Lifetime. A listen_sock is reference counted: one reference per
 * siw2_listener on it, one per queued accept work, and one for each
 * caller that works on it outside listen_socks_lock. Its socket closes
 * when the last listener leaves or the namespace goes, whichever is
 * first; the structure goes with the last reference. A siw2_listener
 * lives from create_listen to destroy_listen, which ends the connections
 * still pending on it and frees it once none refers to it.
 *
 * Pending connections. A passive endpoint waits on its listener's pending
 * list from its accept until the ULP accepted or rejected it, it failed,
 * or the listener went. The list, its count and each endpoint's node on
 * it are under the listen_sock's lock: this file takes it, and cm.c
 * touches a node only through siw2_cep_passive() and
 * siw2_cep_pending_take(), which are called with it held, or through
 * siw2_listener_unlink() and siw2_listener_upcall(), which take it.
 *
 * Locking, all in process context (socket callbacks only queue work on
 * the CM's workqueue): listen_socks_lock before ls->lock; an endpoint's
 * lock (cm.c) before ls->lock, and no endpoint's lock is taken while
 * ls->lock is held.
 */
#include <linux/module.h>
#include <linux/workqueue.h>
#include <net/ipv6.h>
#include <net/net_namespace.h>
#include <rdma/iw_cm.h>

#include "siw2.h"
#include "cm.h"

/* A listener drains at most this many connections per work run. */
#define LISTEN_BATCH 32

/**
 * struct listen_sock - a listening socket shared by the devices on it
 * @ref: one per siw2_listener on it and per queued work
 * @lock: protects @sock, @entries and each entry's pending list and count
 * @node: in listen_socks while @sock is open
 * @net: namespace of the socket; no reference is held (see socket.c), so
 *	it is used only while @sock is open, which the namespace's pre_exit
 *	ends
 * @addr: bound address and port
 * @v6only: IPv6 only (the cm_id's afonly)
 * @sock: the socket; NULL once the last listener left
 * @cb: its callback state
 * @work: accepts connections
 * @entries: the struct siw2_listener on this socket
 */
struct listen_sock {
	struct kref ref;
	struct mutex lock;	/* see above */
	struct list_head node;
	struct net *net;
	struct sockaddr_storage addr;
	bool v6only;
	struct socket *sock;
	struct siw2_sock_cb cb;
	struct work_struct work;
	struct list_head entries;
};

/**
 * struct siw2_listener - one device's listen, an iw_cm listening cm_id
 * @node: in @ls->entries until destroy_listen
 * @ls: the shared socket (a reference is held)
 * @sdev: the device
 * @cm_id: the iw_cm's listening cm_id; used only under @ls->lock while
 *	not @dead
 * @pending: ceps accepted for this device and not yet accepted or rejected
 *	by the ULP, under @ls->lock (see "Pending connections" above)
 * @npending: their number
 * @backlog: the most @pending may hold
 * @dead: destroy_listen began; no more upcalls
 */
struct siw2_listener {
	struct list_head node;
	struct listen_sock *ls;
	struct siw2_device *sdev;
	struct iw_cm_id *cm_id;
	struct list_head pending;
	unsigned int npending;
	unsigned int backlog;
	bool dead;
};

static DEFINE_MUTEX(listen_socks_lock);
static LIST_HEAD(listen_socks);

static void ls_release(struct kref *ref)
{
	struct listen_sock *ls = container_of(ref, struct listen_sock, ref);

	WARN_ON(ls->sock || !list_empty(&ls->entries));
	siw2_obj_destroyed(SIW2_OBJ_LISTENER);
	mutex_destroy(&ls->lock);
	kfree(ls);
}

static void ls_put(struct listen_sock *ls)
{
	kref_put(&ls->ref, ls_release);
}

static void ls_queue(struct listen_sock *ls)
{
	kref_get(&ls->ref);
	if (!siw2_cm_queue(&ls->work))
		ls_put(ls);
}

static void ls_notify(struct siw2_sock_cb *cb, unsigned int events)
{
	if (events & SIW2_SOCK_READ)
		ls_queue(container_of(cb, struct listen_sock, cb));
}

/* Hands a new connection to the device owning its local address. */
static void ls_dispatch(struct listen_sock *ls, struct socket *sock)
{
	struct sockaddr_storage local, peer;
	struct siw2_listener *l;
	bool found = false;

	lockdep_assert_held(&ls->lock);
	if (siw2_sock_names(sock, &local, &peer))
		goto drop;
	/* Entries are live, so their devices are registered. */
	list_for_each_entry(l, &ls->entries, node) {
		if (siw2_sock_addr_on(ls->net, &local, l->sdev->netdev)) {
			found = true;
			break;
		}
	}
	if (!found) {
		siw2_count(NULL, SIW2_CNT_NO_DEVICE);
		goto drop;
	}
	if (l->npending >= l->backlog) {
		siw2_count(l->sdev, SIW2_CNT_OVERFLOW);
		goto drop;
	}
	if (siw2_cep_passive(l, l->sdev, ls->net, sock, &l->pending))
		goto drop;
	l->npending++;
	return;

drop:
	siw2_sock_close(sock, NULL, true);
}

static void ls_work(struct work_struct *work)
{
	struct listen_sock *ls = container_of(work, struct listen_sock, work);
	struct net *net = NULL;
	struct socket *sock;
	int n = 0, ret;

	mutex_lock(&ls->lock);
	/*
	 * Connections hold references on the namespace; none can be taken
	 * once it is going, and its pre_exit is about to close the socket.
	 */
	if (ls->sock)
		net = maybe_get_net(ls->net);
	for (; net && n < LISTEN_BATCH; n++) {
		ret = siw2_sock_accept(ls->sock, &ls->cb, &sock);
		if (ret)
			break;
		ls_dispatch(ls, sock);
	}
	/* More may be waiting: come back after others had their turn. */
	if (n == LISTEN_BATCH)
		ls_queue(ls);
	mutex_unlock(&ls->lock);
	if (net)
		put_net(net);
	ls_put(ls);
}

static bool same_addr(const struct sockaddr_storage *a,
		      const struct sockaddr_storage *b)
{
	const struct sockaddr_in *a4 = (const struct sockaddr_in *)a;
	const struct sockaddr_in *b4 = (const struct sockaddr_in *)b;
	const struct sockaddr_in6 *a6 = (const struct sockaddr_in6 *)a;
	const struct sockaddr_in6 *b6 = (const struct sockaddr_in6 *)b;

	if (a->ss_family != b->ss_family)
		return false;
	if (a->ss_family == AF_INET)
		return a4->sin_port == b4->sin_port &&
		       a4->sin_addr.s_addr == b4->sin_addr.s_addr;
	return a6->sin6_port == b6->sin6_port &&
	       ipv6_addr_equal(&a6->sin6_addr, &b6->sin6_addr) &&
	       a6->sin6_scope_id == b6->sin6_scope_id;
}

static struct listen_sock *ls_find(struct net *net,
				   const struct sockaddr_storage *addr)
{
	struct listen_sock *ls;

	lockdep_assert_held(&listen_socks_lock);
	list_for_each_entry(ls, &listen_socks, node)
		if (net_eq(ls->net, net) && same_addr(&ls->addr, addr))
			return ls;
	return NULL;
}

/*
 * A new shared socket for @l's address, with @l its first entry. @l is
 * listed before the socket listens, under the lock ls_dispatch() takes:
 * a connection that arrives at once finds its device, not an empty list.
 */
static int ls_create(struct net *net, const struct sockaddr_storage *addr,
		     bool v6only, int tos, bool reserved,
		     struct siw2_listener *l)
{
	struct listen_sock *ls;
	int ret;

	lockdep_assert_held(&listen_socks_lock);
	/* Listed before @net's pre_exit runs, or not created at all. */
	if (!maybe_get_net(net))
		return -ENETDOWN;
	ls = kzalloc(sizeof(*ls), GFP_KERNEL);
	if (!ls) {
		put_net(net);
		return -ENOMEM;
	}
	kref_init(&ls->ref);
	mutex_init(&ls->lock);
	INIT_LIST_HEAD(&ls->entries);
	INIT_WORK(&ls->work, ls_work);
	ls->cb.notify = ls_notify;
	ls->net = net;
	ls->addr = *addr;
	ls->v6only = v6only;
	mutex_lock(&ls->lock);
	l->ls = ls;
	list_add_tail(&l->node, &ls->entries);
	ret = siw2_sock_listen(net, addr, v6only, l->backlog, tos, reserved,
			       &ls->cb, &ls->sock);
	if (ret)
		list_del(&l->node);
	mutex_unlock(&ls->lock);
	if (ret) {
		l->ls = NULL;
		mutex_destroy(&ls->lock);
		kfree(ls);
	} else {
		list_add_tail(&ls->node, &listen_socks);
		siw2_obj_created(SIW2_OBJ_LISTENER);
	}
	put_net(net);
	return ret;
}

/*
 * A namespace is going: its listening sockets, which hold no reference on
 * it, close now. Their listeners stay until the RDMA CM destroys them (the
 * devices go with the namespace's netdevs), accepting nothing.
 */
static void __net_exit listen_net_pre_exit(struct net *net)
{
	struct listen_sock *ls, *next;

	mutex_lock(&listen_socks_lock);
	list_for_each_entry_safe(ls, next, &listen_socks, node) {
		if (!net_eq(ls->net, net))
			continue;
		mutex_lock(&ls->lock);
		list_del(&ls->node);
		siw2_sock_close(ls->sock, &ls->cb, false);
		ls->sock = NULL;
		mutex_unlock(&ls->lock);
	}
	mutex_unlock(&listen_socks_lock);
}

static struct pernet_operations listen_net_ops = {
	.pre_exit = listen_net_pre_exit,
};

/* Closes the socket once no device listens on it; drops a reference. */
static void ls_leave(struct listen_sock *ls)
{
	lockdep_assert_held(&listen_socks_lock);
	mutex_lock(&ls->lock);
	if (list_empty(&ls->entries) && ls->sock) {
		list_del(&ls->node);
		/* TCP resets the connections it had not handed out yet. */
		siw2_sock_close(ls->sock, &ls->cb, false);
		ls->sock = NULL;
	}
	mutex_unlock(&ls->lock);
	ls_put(ls);
}

/**
 * siw2_cm_create_listen() - ib_device_ops.iw_create_listen
 * @id: the listening cm_id; its mapped local address is listened on
 * @backlog: connect requests that may wait for the ULP at once
 *
 * Return: 0, -EADDRINUSE if the address is taken (also by this device or
 * with another afonly setting), or another negative errno.
 */
int siw2_cm_create_listen(struct iw_cm_id *id, int backlog)
{
	struct siw2_device *sdev = to_siw2_dev(id->device);
	const struct sockaddr_storage *addr = &id->m_local_addr;
	struct net *net = dev_net(sdev->netdev);
	struct siw2_listener *l, *other;
	struct listen_sock *ls;
	bool v6only;
	int ret = 0;

	if (addr->ss_family != AF_INET && addr->ss_family != AF_INET6)
		return -EAFNOSUPPORT;
	v6only = addr->ss_family == AF_INET6 && id->afonly;
	l = kzalloc(sizeof(*l), GFP_KERNEL);
	if (!l)
		return -ENOMEM;
	INIT_LIST_HEAD(&l->pending);
	l->sdev = sdev;
	l->cm_id = id;
	l->backlog = max(backlog, 1);

	mutex_lock(&listen_socks_lock);
	ls = ls_find(net, addr);
	if (!ls) {
		ret = ls_create(net, addr, v6only, id->tos_set ? id->tos : -1,
				siw2_cm_port_reserved(id), l);
		goto unlock;
	}
	if (ls->v6only != v6only) {
		ret = -EADDRINUSE;
		goto unlock;
	}
	kref_get(&ls->ref);
	mutex_lock(&ls->lock);
	list_for_each_entry(other, &ls->entries, node)
		if (other->sdev == sdev)
			ret = -EADDRINUSE;
	if (!ret) {
		l->ls = ls;
		list_add_tail(&l->node, &ls->entries);
	}
	mutex_unlock(&ls->lock);
	if (ret)
		ls_leave(ls);
unlock:
	mutex_unlock(&listen_socks_lock);
	if (ret) {
		kfree(l);
		return ret;
	}
	id->provider_data = l;
	siw2_obj_created(SIW2_OBJ_LISTENER);
	return 0;
}

/**
 * siw2_cm_destroy_listen() - ib_device_ops.iw_destroy_listen
 * @id: the listening cm_id
 *
 * Connections not yet accepted by the ULP die with the listener: those
 * still in MPA startup, and requests the ULP has not answered (a later
 * iw_accept() of one fails). No upcall reaches @id once this returns.
 *
 * Return: 0.
 */
int siw2_cm_destroy_listen(struct iw_cm_id *id)
{
	struct siw2_listener *l = id->provider_data;
	struct listen_sock *ls;
	struct siw2_cep *cep;

	if (!l)
		return 0;
	ls = l->ls;
	kref_get(&ls->ref);
	mutex_lock(&listen_socks_lock);
	mutex_lock(&ls->lock);
	l->dead = true;
	list_del(&l->node);
	mutex_unlock(&ls->lock);
	ls_leave(ls);
	mutex_unlock(&listen_socks_lock);

	mutex_lock(&ls->lock);
	while ((cep = siw2_cep_pending_take(&l->pending))) {
		l->npending--;
		mutex_unlock(&ls->lock);
		siw2_cep_unlisten(cep);
		mutex_lock(&ls->lock);
	}
	mutex_unlock(&ls->lock);
	/* No cep refers to l any more: each one cleared it under its lock. */
	id->provider_data = NULL;
	kfree(l);
	ls_put(ls);
	siw2_obj_destroyed(SIW2_OBJ_LISTENER);
	return 0;
}

/**
 * siw2_listener_unlink() - a passive cep leaves its listener's pending list
 * @l: the listener, alive until its teardown has seen every cep on its list
 * @node: the cep's node, off the list already if the teardown took it
 *
 * Context: under the cep's lock (cm.c), which comes before @l's socket's.
 */
void siw2_listener_unlink(struct siw2_listener *l, struct list_head *node)
{
	mutex_lock(&l->ls->lock);
	if (!list_empty(node)) {
		list_del_init(node);
		l->npending--;
	}
	mutex_unlock(&l->ls->lock);
}

/**
 * siw2_listener_upcall() - hand a connect request to the listening cm_id
 * @l: the listener
 * @node: the requesting cep's node on @l's pending list
 * @ev: the CONNECT_REQUEST
 *
 * Context: as siw2_listener_unlink().
 *
 * Return: what the iw_cm's event handler returned, or -ECONNABORTED if
 * the listener is going or has dropped the cep already.
 */
int siw2_listener_upcall(struct siw2_listener *l, struct list_head *node,
			 struct iw_cm_event *ev)
{
	int ret = -ECONNABORTED;

	mutex_lock(&l->ls->lock);
	if (!l->dead && !list_empty(node))
		ret = l->cm_id->event_handler(l->cm_id, ev);
	mutex_unlock(&l->ls->lock);
	return ret;
}

int siw2_listen_init(void)
{
	return register_pernet_subsys(&listen_net_ops);
}

void siw2_listen_uninit(void)
{
	/* Every device is gone, and with them every listener. */
	WARN_ON(!list_empty(&listen_socks));
	unregister_pernet_subsys(&listen_net_ops);
}
