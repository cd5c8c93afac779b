// SPDX-License-Identifier: GPL-2.0
/*
 * The kernel TCP sockets siw2 runs over: the only file that creates,
 * configures, binds, connects, listens on, accepts, reads, writes and closes
 * them, and the socket callbacks the connection manager (cm.c) uses while it
 * owns a socket. Nothing here blocks: connect and accept are non-blocking,
 * reads and writes are MSG_DONTWAIT, and progress is reported through the
 * callbacks.
 *
 * Namespaces. A socket is created in the namespace the caller names (the
 * device's netdev's). A connection's socket holds a reference on it, as a
 * user's socket does; a kernel socket normally does not, which would leave
 * a socket the CM still owns, or one TCP keeps after its release
 * (FIN_WAIT, LAST_ACK), pointing into a namespace that is being
 * dismantled. A connection therefore keeps its namespace alive until it
 * ends. A listening socket does not: the RDMA CM listens on every device
 * for a wildcard bind in any namespace, and such a listener, in the
 * initial namespace say, would keep every other namespace with a siw2
 * device alive for ever. The CM closes the listeners of a namespace as it
 * begins to go instead (listen.c), and their children hold references of
 * their own once accepted.
 *
 * Callbacks. siw2_sock_watch() replaces sk_data_ready, sk_state_change and
 * sk_write_space with functions that only call cb->notify() (softirq or
 * process context, under sk_callback_lock read-held: the notifier must not
 * sleep) and keeps the originals in @cb. siw2_sock_unwatch() puts them back
 * under the write lock; once it returns no callback is inside @cb's
 * notifier, and none will enter it. sk_user_data carries @cb, marked
 * NOCOPY so that TCP's children of a listener start without it.
 *
 * Children of a listening socket inherit its callbacks at clone time. As
 * sk_user_data is not inherited, those callbacks do nothing until
 * siw2_sock_accept() hands the child over, with the listener's original
 * callbacks restored: a later siw2_sock_unwatch() of the child therefore
 * never leaves siw2's functions behind in a socket.
 */
#include <linux/in.h>
#include <linux/in6.h>
#include <linux/inetdevice.h>
#include <linux/net.h>
#include <linux/tcp.h>
#include <net/addrconf.h>
#include <net/inet_sock.h>
#include <net/ip.h>
#include <net/ipv6.h>
#include <net/sock.h>
#include <net/tcp.h>

#include "siw2.h"

static void notify(struct sock *sk, unsigned int events)
{
	struct siw2_sock_cb *cb;

	read_lock_bh(&sk->sk_callback_lock);
	cb = __locked_read_sk_user_data_with_flags(sk, 0);
	if (cb)
		cb->notify(cb, events);
	read_unlock_bh(&sk->sk_callback_lock);
}

static void cb_data_ready(struct sock *sk)
{
	notify(sk, SIW2_SOCK_READ);
}

static void cb_state_change(struct sock *sk)
{
	notify(sk, SIW2_SOCK_STATE);
}

static void cb_write_space(struct sock *sk)
{
	/*
	 * TCP calls sk_write_space while SOCK_NOSPACE stays set; clearing it
	 * once there is room again is what the default callback does too.
	 */
	if (sk->sk_socket && sk_stream_is_writeable(sk))
		clear_bit(SOCK_NOSPACE, &sk->sk_socket->flags);
	notify(sk, SIW2_SOCK_WRITE);
}

/**
 * siw2_sock_watch() - route a socket's events to @cb->notify
 * @sock: the socket; no one else watches it
 * @cb: where the original callbacks are kept, and the notifier
 */
void siw2_sock_watch(struct socket *sock, struct siw2_sock_cb *cb)
{
	struct sock *sk = sock->sk;

	write_lock_bh(&sk->sk_callback_lock);
	WARN_ON_ONCE(cb->watching || rcu_access_pointer(__sk_user_data(sk)));
	cb->data_ready = sk->sk_data_ready;
	cb->state_change = sk->sk_state_change;
	cb->write_space = sk->sk_write_space;
	__rcu_assign_sk_user_data_with_flags(sk, cb, SK_USER_DATA_NOCOPY);
	sk->sk_data_ready = cb_data_ready;
	sk->sk_state_change = cb_state_change;
	sk->sk_write_space = cb_write_space;
	cb->watching = true;
	write_unlock_bh(&sk->sk_callback_lock);
}

/**
 * siw2_sock_unwatch() - give a socket its original callbacks back
 * @sock: the socket
 * @cb: as given to siw2_sock_watch(); nothing happens if not watching
 */
void siw2_sock_unwatch(struct socket *sock, struct siw2_sock_cb *cb)
{
	struct sock *sk = sock->sk;

	if (!cb->watching)
		return;
	write_lock_bh(&sk->sk_callback_lock);
	rcu_assign_sk_user_data(sk, NULL);
	sk->sk_data_ready = cb->data_ready;
	sk->sk_state_change = cb->state_change;
	sk->sk_write_space = cb->write_space;
	cb->watching = false;
	write_unlock_bh(&sk->sk_callback_lock);
}

static int addr_len(const struct sockaddr_storage *addr)
{
	switch (addr->ss_family) {
	case AF_INET:
		return sizeof(struct sockaddr_in);
	case AF_INET6:
		return sizeof(struct sockaddr_in6);
	default:
		return 0;
	}
}

static void set_tos(struct socket *sock, int tos)
{
	int tclass = tos;

	if (tos < 0)
		return;
	if (sock->sk->sk_family == AF_INET) {
		ip_sock_set_tos(sock->sk, tos);
		return;
	}
	/* No in-kernel helper for the traffic class; best effort. */
	sock->ops->setsockopt(sock, SOL_IPV6, IPV6_TCLASS,
			      KERNEL_SOCKPTR(&tclass), sizeof(tclass));
}

/* A TCP socket in @net, holding a reference on it if @hold (see above). */
static int create(struct net *net, int family, int tos, bool hold,
		  struct socket **res)
{
	struct socket *sock;
	int ret;

	ret = sock_create_kern(net, family, SOCK_STREAM, IPPROTO_TCP, &sock);
	if (ret)
		return ret;
	if (hold)
		siw2_sk_hold_net(sock->sk);
	/* MPA frames and the FPDUs after them are latency bound. */
	tcp_sock_set_nodelay(sock->sk);
	set_tos(sock, tos);
	*res = sock;
	return 0;
}

/*
 * With iWARP port mapping (iwpmd, the iw_cm's port mapper), the RDMA CM's
 * port is translated into one that iwpmd took from the host's TCP port space
 * with a socket of its own, bound to the wildcard address and never used:
 * the reservation a hardware RNIC needs so that its own TCP stack and the
 * host's do not collide. siw2 uses the host's stack, so it takes the port
 * over from that placeholder (SK_FORCE_REUSE skips the bind conflict
 * check). Only the initial namespace, where iwpmd lives, has the
 * reservation; elsewhere the bind is ordinary.
 */
static int bind_reserved(struct socket *sock,
			 const struct sockaddr_storage *addr, bool reserved)
{
	if (reserved && net_eq(sock_net(sock->sk), &init_net))
		sock->sk->sk_reuse = SK_FORCE_REUSE;
	return kernel_bind(sock, (struct sockaddr *)addr, addr_len(addr));
}

/**
 * siw2_sock_listen() - a listening socket, watched by @cb
 * @net: namespace to create it in; the caller holds a reference on it, and
 *	closes the socket before the namespace goes (the socket holds none)
 * @addr: local address and port, possibly a wildcard
 * @v6only: an IPv6 wildcard does not take IPv4 connections
 * @backlog: TCP's accept queue
 * @tos: IP TOS or traffic class for the connections, or -1
 * @reserved: the port mapper holds @addr's port for us (see bind_reserved())
 * @cb: notified of new connections (SIW2_SOCK_READ)
 * @res: the socket
 *
 * Return: 0, or a negative errno (-EADDRINUSE, -EADDRNOTAVAIL, ...).
 */
int siw2_sock_listen(struct net *net, const struct sockaddr_storage *addr,
		     bool v6only, int backlog, int tos, bool reserved,
		     struct siw2_sock_cb *cb, struct socket **res)
{
	struct socket *sock;
	int ret;

	if (!addr_len(addr))
		return -EAFNOSUPPORT;
	ret = create(net, addr->ss_family, tos, false, &sock);
	if (ret)
		return ret;
	sock_set_reuseaddr(sock->sk);
	if (addr->ss_family == AF_INET6 && v6only) {
		ret = ip6_sock_set_v6only(sock->sk);
		if (ret)
			goto err_release;
	}
	ret = bind_reserved(sock, addr, reserved);
	if (ret)
		goto err_release;
	siw2_sock_watch(sock, cb);
	ret = kernel_listen(sock, backlog);
	if (ret)
		goto err_unwatch;
	*res = sock;
	return 0;

err_unwatch:
	siw2_sock_unwatch(sock, cb);
err_release:
	sock_release(sock);
	return ret;
}

/**
 * siw2_sock_accept() - take one connection off a listener, if there is one
 * @lsock: the listening socket, watched by @lcb
 * @lcb: the listener's callback state
 * @res: the connection, not watched, with TCP's own callbacks; it holds a
 *	reference on the namespace, which the caller must hold one on
 *
 * Return: 0, -EAGAIN if none is waiting, or another negative errno.
 */
int siw2_sock_accept(struct socket *lsock, const struct siw2_sock_cb *lcb,
		     struct socket **res)
{
	struct socket *sock;
	struct sock *sk;
	int ret;

	ret = kernel_accept(lsock, &sock, O_NONBLOCK);
	if (ret)
		return ret;
	sk = sock->sk;
	/* The listener held none for it to inherit. */
	siw2_sk_hold_net(sk);
	write_lock_bh(&sk->sk_callback_lock);
	sk->sk_data_ready = lcb->data_ready;
	sk->sk_state_change = lcb->state_change;
	sk->sk_write_space = lcb->write_space;
	write_unlock_bh(&sk->sk_callback_lock);
	*res = sock;
	return 0;
}

/**
 * siw2_sock_connect() - start a non-blocking connect, watched by @cb
 * @net: namespace to create the socket in
 * @laddr: local address to bind; if its port is taken, any port is used
 * @raddr: the peer
 * @tos: IP TOS or traffic class, or -1
 * @reserved: the port mapper holds @laddr's port for us
 * @cb: notified when the handshake ends (SIW2_SOCK_STATE)
 * @res: the socket; siw2_sock_connected() tells how the handshake went
 *
 * Return: 0 once the SYN is on its way, or a negative errno.
 */
int siw2_sock_connect(struct net *net, const struct sockaddr_storage *laddr,
		      const struct sockaddr_storage *raddr, int tos,
		      bool reserved, struct siw2_sock_cb *cb,
		      struct socket **res)
{
	struct sockaddr_storage any;
	struct socket *sock;
	int ret;

	if (!addr_len(raddr) || laddr->ss_family != raddr->ss_family)
		return -EAFNOSUPPORT;
	ret = create(net, raddr->ss_family, tos, true, &sock);
	if (ret)
		return ret;
	sock_set_reuseaddr(sock->sk);
	ret = bind_reserved(sock, laddr, reserved);
	if (ret == -EADDRINUSE) {
		/*
		 * The RDMA CM reserved the port in its own port space only;
		 * a TCP user may hold it. The address is what matters.
		 */
		any = *laddr;
		siw2_sockaddr_set_port(&any, 0);
		ret = kernel_bind(sock, (struct sockaddr *)&any,
				  addr_len(&any));
	}
	if (ret)
		goto err_release;
	siw2_sock_watch(sock, cb);
	ret = kernel_connect(sock, (struct sockaddr *)raddr, addr_len(raddr),
			     O_NONBLOCK);
	if (ret && ret != -EINPROGRESS)
		goto err_unwatch;
	*res = sock;
	return 0;

err_unwatch:
	siw2_sock_unwatch(sock, cb);
err_release:
	sock_release(sock);
	return ret;
}

/**
 * siw2_sock_connected() - where a non-blocking connect stands
 * @sock: the socket
 *
 * Return: 1 once connected (even if the peer has closed already), 0 while
 * the handshake runs, or the negative errno it failed with.
 */
int siw2_sock_connected(struct socket *sock)
{
	struct sock *sk = sock->sk;
	int err;

	switch (READ_ONCE(sk->sk_state)) {
	case TCP_SYN_SENT:
	case TCP_SYN_RECV:
		return 0;
	case TCP_ESTABLISHED:
	case TCP_CLOSE_WAIT:
		return 1;
	default:
		err = sock_error(sk);
		return err ? err : -ECONNRESET;
	}
}

/**
 * siw2_sock_send() - queue octets without waiting
 * @sock: the socket
 * @buf: octets
 * @len: their number
 *
 * Return: octets queued (maybe fewer than @len; SIW2_SOCK_WRITE follows
 * when there is room again), -EAGAIN, or another negative errno.
 */
int siw2_sock_send(struct socket *sock, const void *buf, size_t len)
{
	struct msghdr msg = { .msg_flags = MSG_DONTWAIT | MSG_NOSIGNAL };
	struct kvec iov = { .iov_base = (void *)buf, .iov_len = len };

	return kernel_sendmsg(sock, &msg, &iov, 1, len);
}

/**
 * siw2_sock_recv() - read or peek at received octets without waiting
 * @sock: the socket
 * @buf: destination
 * @len: at most this many
 * @peek: leave them in the socket
 *
 * Return: octets read, 0 at the end of the stream (the peer's FIN),
 * -EAGAIN if none are there, or another negative errno (-ECONNRESET).
 */
int siw2_sock_recv(struct socket *sock, void *buf, size_t len, bool peek)
{
	struct msghdr msg = {};
	struct kvec iov = { .iov_base = buf, .iov_len = len };
	int flags = MSG_DONTWAIT | (peek ? MSG_PEEK : 0);

	return kernel_recvmsg(sock, &msg, &iov, 1, len, flags);
}

/* An IPv4-mapped IPv6 address (dual-stack listener) as plain IPv4. */
static void unmap_v4(struct sockaddr_storage *addr)
{
	struct sockaddr_in6 s6;
	struct sockaddr_in *s4 = (struct sockaddr_in *)addr;

	if (addr->ss_family != AF_INET6)
		return;
	memcpy(&s6, addr, sizeof(s6));
	if (!ipv6_addr_v4mapped(&s6.sin6_addr))
		return;
	memset(addr, 0, sizeof(*addr));
	s4->sin_family = AF_INET;
	s4->sin_port = s6.sin6_port;
	s4->sin_addr.s_addr = s6.sin6_addr.s6_addr32[3];
}

/**
 * siw2_sock_names() - both ends of a connection
 * @sock: the socket
 * @local: its local address and port
 * @peer: the peer's
 *
 * IPv4 connections taken by a dual-stack IPv6 listener come out as IPv4.
 *
 * Return: 0 or a negative errno (-ENOTCONN once reset).
 */
int siw2_sock_names(struct socket *sock, struct sockaddr_storage *local,
		    struct sockaddr_storage *peer)
{
	int ret;

	memset(local, 0, sizeof(*local));
	memset(peer, 0, sizeof(*peer));
	ret = kernel_getsockname(sock, (struct sockaddr *)local);
	if (ret < 0)
		return ret;
	ret = kernel_getpeername(sock, (struct sockaddr *)peer);
	if (ret < 0)
		return ret;
	unmap_v4(local);
	unmap_v4(peer);
	return 0;
}

/**
 * siw2_sock_addr_on() - is @addr one of @ndev's addresses?
 * @net: @ndev's namespace
 * @addr: an IPv4 or IPv6 address (the port is ignored)
 * @ndev: the netdev
 */
bool siw2_sock_addr_on(struct net *net, const struct sockaddr_storage *addr,
		       struct net_device *ndev)
{
	const struct sockaddr_in *s4 = (const struct sockaddr_in *)addr;
	const struct sockaddr_in6 *s6 = (const struct sockaddr_in6 *)addr;
	bool on;

	switch (addr->ss_family) {
	case AF_INET:
		rcu_read_lock();
		on = __ip_dev_find(net, s4->sin_addr.s_addr, false) == ndev;
		rcu_read_unlock();
		return on;
	case AF_INET6:
		/* strict: on this device, whatever the address's scope */
		return ipv6_chk_addr(net, &s6->sin6_addr, ndev, 1);
	default:
		return false;
	}
}

/* The port of an IPv4 or IPv6 socket address, 0 for other families. */
u16 siw2_sockaddr_port(const struct sockaddr_storage *addr)
{
	if (addr->ss_family == AF_INET)
		return ntohs(((const struct sockaddr_in *)addr)->sin_port);
	if (addr->ss_family == AF_INET6)
		return ntohs(((const struct sockaddr_in6 *)addr)->sin6_port);
	return 0;
}

/* Sets the port of an IPv4 or IPv6 socket address. */
void siw2_sockaddr_set_port(struct sockaddr_storage *addr, u16 port)
{
	if (addr->ss_family == AF_INET)
		((struct sockaddr_in *)addr)->sin_port = htons(port);
	else if (addr->ss_family == AF_INET6)
		((struct sockaddr_in6 *)addr)->sin6_port = htons(port);
}

/**
 * siw2_sock_close() - release a socket
 * @sock: the socket
 * @cb: its watcher, unwatched first; NULL if not watched
 * @abortive: reset the connection (RFC 793 ABORT) instead of a FIN after
 *	whatever is still queued for sending
 */
void siw2_sock_close(struct socket *sock, struct siw2_sock_cb *cb,
		     bool abortive)
{
	if (cb)
		siw2_sock_unwatch(sock, cb);
	if (abortive)
		sock_no_linger(sock->sk);
	sock_release(sock);
}
