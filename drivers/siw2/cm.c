// SPDX-License-Identifier: GPL-2.0
/*
 * The iWARP connection manager's endpoints: a siw2 device's iw_cm
 * operations on connections (connect, accept, reject) and the connection
 * endpoint (struct siw2_cep) that runs the TCP handshake and MPA startup
 * (RFC 5044 7.1, RFC 6581) on a kernel socket. The listening sockets, and
 * the listeners passive endpoints come from, are listen.c's (cm.h is what
 * the two files tell each other). MPA's rules are mpa_cm.c's pure state
 * machine, sockets are socket.c's, and once the stream is in Full
 * Operation the QP's data path owns it (llp.h).
 *
 * Endpoint states:
 *
 *   active:  IDLE -> CONNECTING -> AWAIT_REPLY -> ATTACHED -> DEAD
 *   passive: IDLE -> AWAIT_REQUEST -> AWAIT_ULP -> ATTACHED -> DEAD
 *
 * and DEAD from any state. Every wait has a timer (the device's settings):
 * the TCP handshake, the Reply, the Request, and the ULP's answer to a
 * connect request, bounded by the Reply timeout since a peer like siw2
 * gives up after that anyway.
 *
 * Lifetime. A cep is reference counted. Its base reference belongs to the
 * state machine and is dropped when the cep enters DEAD (cep_finish());
 * every queued work item and armed timer holds one more, and so does every
 * caller that found the cep (a handle lookup, a listener's teardown), so
 * cep_finish() never frees. Socket callbacks reach the cep through
 * sk_user_data and only queue work; the socket is unwatched before the
 * base reference goes, so a callback always finds a live cep.
 *
 * Locking. cep->lock serializes everything a cep does: iw_cm downcalls,
 * socket events, timeouts and the QP's siw2_cm_llp_closed(), all in process
 * context (socket callbacks and siw2_cm_llp_closed() defer to cm_wq, which
 * listen.c's work shares). Lock order: cep->lock before a listening
 * socket's lock (listen.c), and no cep->lock is taken while one is held.
 * A passive cep's place on its listener's pending list is the listener's,
 * under that lock (listen.c, "Pending connections").
 *
 * Upcalls go to the iw_cm's event_handler, which copies what it needs and
 * defers to its own workqueue, so it is called under these locks. The
 * iw_cm dictates the order: after iw_connect returned 0 exactly one
 * CONNECT_REPLY follows, after iw_accept returned 0 ESTABLISHED, and
 * DISCONNECT and CLOSE only after those (iw_destroy_cm_id waits for the
 * first two). A cep holds its cm_id (add_ref) while it may still upcall.
 *
 * Handles. The iw_cm hands a connect request's provider_data to the cm_id
 * it creates for it, but may drop a request without a word (its listener
 * is being destroyed, an allocation failed). provider_data is therefore a
 * handle into cep_handles rather than a pointer: a dropped request is
 * reclaimed by its timer or its listener's teardown, and a late iw_accept()
 * or iw_reject() finds nothing.
 *
 * Port mapping. siw2 always listens on and connects from the iw_cm's mapped
 * addresses (m_local_addr, m_remote_addr). They equal the RDMA CM's unless
 * iwpmd runs and the device's port_map is on; then the local port is one
 * iwpmd holds for us in the host's port space (socket.c, bind_reserved()),
 * and the remote one is what the peer's iwpmd reported.
 */
#include <linux/module.h>
#include <linux/workqueue.h>
#include <linux/xarray.h>
#include <net/net_namespace.h>
#include <rdma/iw_cm.h>

#include "siw2.h"
#include "cm.h"
#include "llp.h"
#include "mpa.h"
#include "rdmap.h"
#include "trace.h"

/**
 * siw2_cm_port_reserved() - iwpmd moved @id to a port of its own
 * @id: a cm_id, connecting or listening
 *
 * See "Port mapping" above.
 *
 * Return: @id's mapped local port is one iwpmd holds for it.
 */
bool siw2_cm_port_reserved(const struct iw_cm_id *id)
{
	return id->mapped && siw2_sockaddr_port(&id->m_local_addr) !=
			     siw2_sockaddr_port(&id->local_addr);
}

enum cep_state {
	CEP_IDLE,		/* being set up */
	CEP_CONNECTING,		/* active: TCP handshake */
	CEP_AWAIT_REPLY,	/* active: Request sent, Reply awaited */
	CEP_AWAIT_REQUEST,	/* passive: TCP accepted, Request awaited */
	CEP_AWAIT_ULP,		/* passive: CONNECT_REQUEST upcalled */
	CEP_ATTACHED,		/* the QP owns the stream */
	CEP_DEAD,
};

/* Bits of cep->events that are not socket events. */
#define CEP_EV_LLP_CLOSED 0

/**
 * struct siw2_cep - a connection endpoint
 * @ref: see "Lifetime" above
 * @lock: see "Locking" above; protects everything below but @events
 * @all: in ceps, for device teardown
 * @sdev: the device; outlives the cep (siw2_cm_uninit_device() waits)
 * @net: the namespace sockets are made in (a reference is held)
 * @state: enum cep_state
 * @retried: active: the RFC 6581 10 fallback to revision 1 was used
 * @fin: the last read ended at the peer's FIN rather than a reset
 * @sock: the TCP socket, until DEAD
 * @cb: @sock's callback state while the CM watches it
 * @events: SIW2_SOCK_* are not kept (progress is polled); bit
 *	CEP_EV_LLP_CLOSED is set by siw2_cm_llp_closed()
 * @work: processes events
 * @timer: the current wait's timeout
 * @deadline: when the current wait ends
 * @timer_on: a wait is armed
 * @cm_id: the iw_cm's cm_id (a reference is held): active from connect,
 *	passive from accept
 * @qp: the QP (a reference is held): active from connect, passive from
 *	accept
 * @listener: passive: the listener, while on its pending list
 * @pending: in @listener->pending
 * @handle: passive: provider_data of the connect request, while AWAIT_ULP
 * @llp_reason: from siw2_cm_llp_closed()
 * @ird: active: the ULP's IRD, capped to the device's
 * @ord: active: the ULP's ORD, capped
 * @tos: IP TOS for the socket, or -1
 * @reserved: active: iwpmd holds @laddr's port for us (port_reserved())
 * @laddr: local address: active, the cm_id's mapped address; passive,
 *	the socket's, once the Request arrived
 * @raddr: peer address, likewise
 * @pdata: active: the Private Data of the Request
 * @pdata_len: its length
 * @tx_len: octets of the frame in @tx
 * @tx_off: octets of it sent
 * @tx: an MPA frame (or a Terminate FPDU) being sent
 * @rx: receive buffer
 * @mpa: the MPA startup state machine
 * @conf: the device's settings when the cep was made; fixed
 */
struct siw2_cep {
	struct kref ref;
	struct mutex lock;	/* see above */
	struct list_head all;
	struct siw2_device *sdev;
	struct net *net;
	enum cep_state state;
	bool retried;
	bool fin;
	struct socket *sock;
	struct siw2_sock_cb cb;
	unsigned long events;
	struct work_struct work;
	struct delayed_work timer;
	unsigned long deadline;
	bool timer_on;
	struct iw_cm_id *cm_id;
	struct siw2_qp *qp;
	struct siw2_listener *listener;
	struct list_head pending;
	u32 handle;
	int llp_reason;
	u16 ird;
	u16 ord;
	int tos;
	bool reserved;
	struct sockaddr_storage laddr;
	struct sockaddr_storage raddr;
	void *pdata;
	u16 pdata_len;
	u32 tx_len;
	u32 tx_off;
	u8 tx[SIW2_MPA_FRAME_MAX];
	u8 rx[SIW2_MPA_FRAME_MAX];
	struct siw2_mpa_cm mpa;
	struct siw2_conf conf;
};

static struct workqueue_struct *cm_wq;

/**
 * siw2_cm_queue() - queue CM work (an endpoint's or a listener's)
 * @work: the work item
 *
 * Context: any.
 *
 * Return: false if @work was queued already.
 */
bool siw2_cm_queue(struct work_struct *work)
{
	return queue_work(cm_wq, work);
}

/* Every cep, for device teardown; ceps_wait is woken as each one goes. */
static DEFINE_SPINLOCK(ceps_lock);
static LIST_HEAD(ceps);
static DECLARE_WAIT_QUEUE_HEAD(ceps_wait);

/* Handle -> cep in AWAIT_ULP. Handles start at 1 and are used cyclically. */
static DEFINE_XARRAY_ALLOC1(cep_handles);
static u32 next_handle;

/* ---- endpoints ---- */

static void cep_release(struct kref *ref)
{
	struct siw2_cep *cep = container_of(ref, struct siw2_cep, ref);

	WARN_ON(cep->sock || cep->qp || cep->cm_id || cep->listener ||
		cep->handle);
	siw2_obj_destroyed(SIW2_OBJ_CEP);
	put_net(cep->net);
	kfree(cep->pdata);
	mutex_destroy(&cep->lock);
	spin_lock(&ceps_lock);
	list_del(&cep->all);
	spin_unlock(&ceps_lock);
	kfree(cep);
	wake_up_all(&ceps_wait);
}

static void cep_put(struct siw2_cep *cep)
{
	kref_put(&cep->ref, cep_release);
}

/* Queues the work, with a reference for it; any context. */
static void cep_queue(struct siw2_cep *cep)
{
	/*
	 * The caller holds a reference (or the cep is watched, which implies
	 * the base one), so the put below never frees.
	 */
	kref_get(&cep->ref);
	if (!queue_work(cm_wq, &cep->work))
		cep_put(cep);
}

static void cep_notify(struct siw2_sock_cb *cb, unsigned int events)
{
	cep_queue(container_of(cb, struct siw2_cep, cb));
}

static void __cep_arm(struct siw2_cep *cep, unsigned int ms)
{
	unsigned long delay = msecs_to_jiffies(ms);

	cep->deadline = jiffies + delay;
	cep->timer_on = true;
	/* Only a newly queued timer needs a reference of its own. */
	kref_get(&cep->ref);
	if (mod_delayed_work(cm_wq, &cep->timer, delay))
		cep_put(cep);
}

static void cep_arm(struct siw2_cep *cep, unsigned int ms)
{
	lockdep_assert_held(&cep->lock);
	__cep_arm(cep, ms);
}

static void cep_disarm(struct siw2_cep *cep)
{
	lockdep_assert_held(&cep->lock);
	cep->timer_on = false;
	/* A timer already running finds timer_on clear and drops its own. */
	if (cancel_delayed_work(&cep->timer))
		cep_put(cep);
}

static void cep_work(struct work_struct *work);
static void cep_timeout(struct work_struct *work);

static struct siw2_cep *cep_alloc(struct siw2_device *sdev, struct net *net,
				  const struct siw2_conf *conf)
{
	struct siw2_cep *cep;

	cep = kzalloc(sizeof(*cep), GFP_KERNEL);
	if (!cep)
		return NULL;
	kref_init(&cep->ref);
	mutex_init(&cep->lock);
	INIT_WORK(&cep->work, cep_work);
	INIT_DELAYED_WORK(&cep->timer, cep_timeout);
	INIT_LIST_HEAD(&cep->pending);
	cep->cb.notify = cep_notify;
	cep->sdev = sdev;
	cep->conf = *conf;
	cep->net = get_net(net);
	cep->tos = -1;
	spin_lock(&ceps_lock);
	list_add_tail(&cep->all, &ceps);
	spin_unlock(&ceps_lock);
	siw2_obj_created(SIW2_OBJ_CEP);
	return cep;
}

/* Passive: takes the cep off its listener and out of the handle table. */
static void pending_unlink(struct siw2_cep *cep)
{
	struct siw2_listener *l = cep->listener;

	lockdep_assert_held(&cep->lock);
	if (cep->handle) {
		xa_erase(&cep_handles, cep->handle);
		cep->handle = 0;
	}
	if (!l)
		return;
	siw2_listener_unlink(l, &cep->pending);
	cep->listener = NULL;
}

/*
 * Ends the endpoint: closes what it still holds and drops the base
 * reference. The caller holds another reference.
 */
static void cep_finish(struct siw2_cep *cep, bool abortive)
{
	lockdep_assert_held(&cep->lock);
	if (cep->state == CEP_DEAD)
		return;
	cep_disarm(cep);
	pending_unlink(cep);
	if (cep->sock) {
		siw2_sock_close(cep->sock, &cep->cb, abortive);
		cep->sock = NULL;
	}
	if (cep->qp) {
		siw2_qp_put(cep->qp);
		cep->qp = NULL;
	}
	if (cep->cm_id) {
		cep->cm_id->rem_ref(cep->cm_id);
		cep->cm_id = NULL;
	}
	cep->state = CEP_DEAD;
	WARN_ON(kref_read(&cep->ref) < 2);
	cep_put(cep);
}

/* ---- MPA ---- */

static void mpa_params(struct siw2_mpa_params *p, const struct siw2_conf *c,
		       bool initiator, bool rev1)
{
	memset(p, 0, sizeof(*p));
	p->rev = rev1 ? SIW2_MPA_REV_1 : c->mpa_rev;
	p->crc = c->mpa_crc;
	p->markers = c->mpa_markers;
	p->large = c->mpa_large_fpdu;
	p->rtr = c->mpa_rtr & SIW2_MPA_RTR_ALL;
	if (initiator) {
		p->p2p = p->rev >= SIW2_MPA_REV_2 && c->mpa_p2p;
		if (!p->p2p)
			p->rtr = 0;
	}
}

/* ULP Private Data that fits a frame (RFC 5044 7.1.1, RFC 6581 7). */
static u16 pdata_max(bool enhanced)
{
	return SIW2_MPA_PD_MAX - (enhanced ? sizeof(struct siw2_mpa_v2) : 0);
}

/*
 * An IRD or ORD for the iw_cm's u8 fields; SIW2_MPA_IRD_ORD_NONE (no value
 * exchanged) stands for @fallback.
 */
static u8 iwcm_depth(u16 v, u16 fallback)
{
	if (v == SIW2_MPA_IRD_ORD_NONE)
		v = fallback;
	return min_t(u16, v, U8_MAX);
}

/*
 * Feeds the socket's octets to the MPA state machine, taking from the
 * socket only what the state machine consumed: whatever follows a frame
 * belongs to the FPDU stream and stays there for the QP.
 */
static enum siw2_mpa_cm_action rx_frame(struct siw2_cep *cep)
{
	enum siw2_mpa_cm_action act;
	size_t used;
	int n;

	lockdep_assert_held(&cep->lock);
	for (;;) {
		n = siw2_sock_recv(cep->sock, cep->rx, sizeof(cep->rx), true);
		if (n == -EAGAIN)
			return SIW2_MPA_CM_NEED_MORE;
		if (n <= 0) {
			cep->fin = !n;
			return siw2_mpa_cm_closed(&cep->mpa);
		}
		act = siw2_mpa_cm_rx(&cep->mpa, cep->rx, n, &used);
		if (used && siw2_sock_recv(cep->sock, cep->rx, used,
					   false) != (int)used) {
			cep->fin = false;
			return siw2_mpa_cm_closed(&cep->mpa);
		}
		if (act != SIW2_MPA_CM_NEED_MORE || !used)
			return act;
	}
}

/*
 * RFC 6581 9.1, 9.2: an initiator that cannot agree on IRD/ORD or an RTR is
 * in Full Operation and says so with a Terminate before closing. Best
 * effort; the connection ends either way.
 */
static void send_terminate(struct siw2_cep *cep)
{
	const struct siw2_mpa_conn *conn = &cep->mpa.conn;
	struct siw2_term_info t;
	struct siw2_mpa_tx tx;
	u8 ulpdu[64];
	size_t n;
	u32 len;

	siw2_rdmap_term_prepare(&t, siw2_mpa_err_cause(cep->mpa.err), NULL, 0,
				0);
	len = siw2_rdmap_term_build(ulpdu, sizeof(ulpdu), &t);
	if (!len)
		return;
	siw2_mpa_tx_init(&tx, conn->tx_markers, conn->crc);
	n = siw2_mpa_fpdu_build(&tx, ulpdu, len, cep->tx, sizeof(cep->tx));
	if (n && siw2_sock_send(cep->sock, cep->tx, n) == n)
		trace_siw2_term_sent(&cep->sdev->ibdev,
				     cep->qp ? cep->qp->base.qp_num : 0, &t);
}

/* ---- handing the stream to the QP ---- */

/*
 * On iWARP the provider moves the QP to RTS once the stream is up. A QP
 * in RESET (one that had a connection, say) passes INIT with the
 * attributes it has.
 */
static int qp_to_rts(struct siw2_qp *qp)
{
	int ret;

	switch (READ_ONCE(qp->state)) {
	case IB_QPS_RESET:
		ret = siw2_qp_set_state(qp, IB_QPS_INIT);
		if (ret)
			return ret;
		fallthrough;
	case IB_QPS_INIT:
		ret = siw2_qp_set_state(qp, IB_QPS_RTR);
		if (ret)
			return ret;
		fallthrough;
	case IB_QPS_RTR:
		return siw2_qp_set_state(qp, IB_QPS_RTS);
	case IB_QPS_RTS:
		return 0;
	default:
		return -EINVAL;
	}
}

/*
 * Gives the socket to cep->qp (llp.h). The QP's last stream, if it had
 * one, is done with it first, then the QP moves to RTS: the stream may
 * fail (and move the QP to ERR) as soon as it is attached. On failure the
 * cep keeps the socket, unwatched, and the QP is in ERR, unless another
 * connection has it (-EBUSY).
 */
static int hand_over(struct siw2_cep *cep, bool initiator)
{
	int ret;

	lockdep_assert_held(&cep->lock);
	siw2_sock_unwatch(cep->sock, &cep->cb);
	ret = siw2_stream_ready(cep->qp);
	if (ret)
		return ret;
	ret = qp_to_rts(cep->qp);
	if (ret)
		return ret;
	ret = siw2_stream_attach(cep->qp, cep->sock, &cep->mpa.conn, cep,
				 &cep->conf, initiator, NULL, 0);
	if (ret) {
		if (ret != -EBUSY)
			siw2_qp_set_error(cep->qp, SIW2_QP_CAUSE_CM_FAIL);
		return ret;
	}
	cep->state = CEP_ATTACHED;
	trace_siw2_mpa_terms(&cep->sdev->ibdev, cep->qp->base.qp_num,
			     initiator, &cep->mpa.conn);
	siw2_qp_start_tx(cep->qp);	/* an RTR, or work posted early */
	return 0;
}

/* ---- active side ---- */

/*
 * Reports the end of an active attempt (CONNECT_REPLY with an error) and
 * ends the cep. The iw_cm translates addresses only on success; on failure
 * the RDMA CM copies them as given, so they are the cm_id's own.
 */
static void active_fail(struct siw2_cep *cep, int status, bool pdata,
			bool abortive)
{
	const struct siw2_mpa_conn *conn = &cep->mpa.conn;
	struct iw_cm_event ev = {
		.event = IW_CM_EVENT_CONNECT_REPLY,
		.status = status,
	};
	struct iw_cm_id *id = cep->cm_id;

	lockdep_assert_held(&cep->lock);
	trace_siw2_cm_connect_fail(&cep->sdev->ibdev, &cep->laddr, &cep->raddr,
				   cep->qp ? cep->qp->base.qp_num : 0, status);
	if (id) {
		ev.local_addr = id->local_addr;
		ev.remote_addr = id->remote_addr;
		if (pdata && conn->pdata_len) {
			ev.private_data = (void *)conn->pdata;
			ev.private_data_len = min_t(u16, conn->pdata_len,
						    U8_MAX);
		}
		id->event_handler(id, &ev);
	}
	cep_finish(cep, abortive);
}

/* Creates the socket and starts the handshake; the caller cleans up. */
static int active_start(struct siw2_cep *cep)
{
	struct siw2_mpa_params p;
	size_t len;
	int ret;

	lockdep_assert_held(&cep->lock);
	mpa_params(&p, &cep->conf, true, cep->retried);
	p.ird = cep->ird;
	p.ord = cep->ord;
	if (siw2_mpa_cm_init(&cep->mpa, SIW2_MPA_INITIATOR, &p) ||
	    siw2_mpa_cm_request(&cep->mpa, cep->pdata, cep->pdata_len, cep->tx,
				sizeof(cep->tx), &len))
		return -EINVAL;
	cep->tx_len = len;
	cep->tx_off = 0;
	ret = siw2_sock_connect(cep->net, &cep->laddr, &cep->raddr, cep->tos,
				cep->reserved, &cep->cb, &cep->sock);
	if (ret)
		return ret;
	cep->state = CEP_CONNECTING;
	cep_arm(cep, cep->conf.tcp_timeout_ms);
	return 0;
}

/*
 * RFC 6581 10: a responder without RFC 6581 closes on an enhanced Request
 * (or takes its data for Private Data). Connect once more with revision 1.
 */
static void active_retry(struct siw2_cep *cep)
{
	lockdep_assert_held(&cep->lock);
	siw2_count(cep->sdev, SIW2_CNT_REV1_RETRY);
	cep_disarm(cep);
	siw2_sock_close(cep->sock, &cep->cb, !cep->fin);
	cep->sock = NULL;
	cep->retried = true;
	/* The old connection may linger in TIME_WAIT on our port. */
	siw2_sockaddr_set_port(&cep->laddr, 0);
	cep->reserved = false;
	if (active_start(cep))
		active_fail(cep, -ECONNRESET, false, true);
}

static void active_established(struct siw2_cep *cep)
{
	const struct siw2_mpa_conn *conn = &cep->mpa.conn;
	struct iw_cm_event ev = { .event = IW_CM_EVENT_CONNECT_REPLY };
	struct iw_cm_id *id = cep->cm_id;

	lockdep_assert_held(&cep->lock);
	cep_disarm(cep);
	if (siw2_sock_names(cep->sock, &ev.local_addr, &ev.remote_addr)) {
		active_fail(cep, -ECONNRESET, false, true);
		return;
	}
	if (hand_over(cep, true)) {
		if (cep->state != CEP_ATTACHED) {
			active_fail(cep, -ECONNABORTED, false, true);
			return;
		}
		/* The stream ends through the QP; the cm_id hears of it now. */
		ev.status = -ECONNABORTED;
		ev.local_addr = id->local_addr;
		ev.remote_addr = id->remote_addr;
		id->event_handler(id, &ev);
		id->rem_ref(id);
		cep->cm_id = NULL;
		return;
	}
	/* The RDMA CM reads ird as the initiator depth (ORD), ord as IRD. */
	ev.ird = iwcm_depth(conn->ord, cep->ord);
	ev.ord = iwcm_depth(conn->ird, cep->ird);
	if (conn->pdata_len) {
		ev.private_data = (void *)conn->pdata;
		ev.private_data_len = min_t(u16, conn->pdata_len, U8_MAX);
	}
	id->event_handler(id, &ev);
	siw2_count(cep->sdev, SIW2_CNT_CONNECTED);
}

static void active_error(struct siw2_cep *cep)
{
	enum siw2_mpa_err err = cep->mpa.err;
	int status = -EPROTO;
	bool abortive = true;

	lockdep_assert_held(&cep->lock);
	if (!cep->retried && siw2_mpa_cm_retry_rev1(&cep->mpa) &&
	    (err == SIW2_MPA_ERR_ENH_MISSING || cep->fin)) {
		active_retry(cep);
		return;
	}
	switch (err) {
	case SIW2_MPA_ERR_CLOSED:
		siw2_count(cep->sdev, SIW2_CNT_PEER_CLOSED);
		status = -ECONNRESET;
		abortive = false;
		break;
	case SIW2_MPA_ERR_IRD:
	case SIW2_MPA_ERR_NO_RTR:
		siw2_count(cep->sdev, SIW2_CNT_NEGOTIATION);
		send_terminate(cep);
		abortive = false;
		break;
	default:
		siw2_count(cep->sdev, SIW2_CNT_BAD_FRAME);
		break;
	}
	active_fail(cep, status, false, abortive);
}

static void active_progress(struct siw2_cep *cep)
{
	int n;

	lockdep_assert_held(&cep->lock);
	if (cep->state == CEP_CONNECTING) {
		n = siw2_sock_connected(cep->sock);
		if (!n)
			return;
		if (n < 0) {
			siw2_count(cep->sdev, SIW2_CNT_REFUSED);
			/* The RDMA CM reports -ETIMEDOUT as unreachable. */
			if (n == -EHOSTUNREACH || n == -ENETUNREACH)
				n = -ETIMEDOUT;
			active_fail(cep, n, false, true);
			return;
		}
		cep->state = CEP_AWAIT_REPLY;
		cep_arm(cep, cep->conf.mpa_reply_timeout_ms);
	}
	if (cep->tx_off < cep->tx_len) {
		n = siw2_sock_send(cep->sock, cep->tx + cep->tx_off,
				   cep->tx_len - cep->tx_off);
		if (n > 0)
			cep->tx_off += n;
		/* On an error the read below sees the end of the stream. */
	}
	switch (rx_frame(cep)) {
	case SIW2_MPA_CM_NEED_MORE:
		break;
	case SIW2_MPA_CM_ESTABLISHED:
		active_established(cep);
		break;
	case SIW2_MPA_CM_REJECTED:
		/* 7.1.2 rule 3: the Reply's Private Data goes to the ULP. */
		siw2_count(cep->sdev, SIW2_CNT_REJECT_RCVD);
		trace_siw2_cm_rejected(&cep->sdev->ibdev, &cep->laddr,
				       &cep->raddr, cep->qp->base.qp_num,
				       -ECONNREFUSED);
		active_fail(cep, -ECONNREFUSED, true, false);
		break;
	default:
		active_error(cep);
		break;
	}
}

/**
 * siw2_cm_connect() - ib_device_ops.iw_connect
 * @id: the iw_cm's cm_id; its mapped addresses are used
 * @param: Private Data, IRD/ORD and the QP
 *
 * Starts the TCP handshake and returns; CONNECT_REPLY reports the outcome.
 *
 * Return: 0, or a negative errno if no attempt was started.
 */
int siw2_cm_connect(struct iw_cm_id *id, struct iw_cm_conn_param *param)
{
	struct siw2_device *sdev = to_siw2_dev(id->device);
	struct siw2_conf conf;
	struct siw2_cep *cep;
	struct ib_qp *ibqp;
	u16 maxpd;
	int ret;

	siw2_conf_get(sdev, &conf);
	maxpd = pdata_max(conf.mpa_rev >= SIW2_MPA_REV_2);
	if (param->private_data_len > maxpd ||
	    (param->private_data_len && !param->private_data))
		return -EINVAL;
	if ((id->m_remote_addr.ss_family != AF_INET &&
	     id->m_remote_addr.ss_family != AF_INET6) ||
	    id->m_local_addr.ss_family != id->m_remote_addr.ss_family)
		return -EAFNOSUPPORT;
	/* A reference, which the CEP keeps (siw2_qp_iw_get()). */
	ibqp = siw2_qp_iw_get(id->device, param->qpn);
	if (!ibqp)
		return -EINVAL;

	cep = cep_alloc(sdev, dev_net(sdev->netdev), &conf);
	if (!cep) {
		siw2_qp_put(to_siw2_qp(ibqp));
		return -ENOMEM;
	}
	cep->ird = min_t(u32, param->ird, SIW2_MAX_IRD);
	cep->ord = min_t(u32, param->ord, SIW2_MAX_ORD);
	cep->laddr = id->m_local_addr;
	cep->raddr = id->m_remote_addr;
	cep->reserved = siw2_cm_port_reserved(id);
	if (id->tos_set)
		cep->tos = id->tos;
	cep->qp = to_siw2_qp(ibqp);

	/* Our own reference, for cep_finish() on the error path. */
	kref_get(&cep->ref);
	mutex_lock(&cep->lock);
	ret = -ENOMEM;
	if (param->private_data_len) {
		cep->pdata = kmemdup(param->private_data,
				     param->private_data_len, GFP_KERNEL);
		if (!cep->pdata)
			goto fail;
		cep->pdata_len = param->private_data_len;
	}
	ret = active_start(cep);
	if (ret)
		goto fail;
	id->add_ref(id);
	cep->cm_id = id;
	siw2_count(cep->sdev, SIW2_CNT_CONNECT);
	trace_siw2_cm_connect(&sdev->ibdev, &cep->laddr, &cep->raddr,
			      cep->qp->base.qp_num, 0);
	mutex_unlock(&cep->lock);
	cep_put(cep);
	return 0;

fail:
	cep_finish(cep, true);
	mutex_unlock(&cep->lock);
	cep_put(cep);
	return ret;
}

/* ---- passive side ---- */

/**
 * siw2_cep_passive() - start the endpoint of a connection a listener took
 * @l: the listener, for the CONNECT_REQUEST upcall
 * @sdev: its device
 * @net: the namespace of the listening socket, held by the caller
 * @sock: the accepted socket, which the endpoint owns on success
 * @pending: @l's pending list; the endpoint goes on it
 *
 * The MPA Request is awaited from here on (mpa_request_timeout_ms).
 *
 * Context: under the lock of @l's listening socket (listen.c).
 *
 * Return: 0, or a negative errno; on failure the caller still owns @sock.
 */
int siw2_cep_passive(struct siw2_listener *l, struct siw2_device *sdev,
		     struct net *net, struct socket *sock,
		     struct list_head *pending)
{
	struct siw2_mpa_params p;
	struct siw2_conf conf;
	struct siw2_cep *cep;

	siw2_conf_get(sdev, &conf);
	cep = cep_alloc(sdev, net, &conf);
	if (!cep)
		return -ENOMEM;
	mpa_params(&p, &cep->conf, false, false);
	if (siw2_mpa_cm_init(&cep->mpa, SIW2_MPA_RESPONDER, &p)) {
		cep_put(cep);
		return -EINVAL;
	}
	cep->sock = sock;
	cep->state = CEP_AWAIT_REQUEST;
	cep->listener = l;
	list_add_tail(&cep->pending, pending);
	/*
	 * Nobody can reach the cep yet, so cep->lock is not needed (and
	 * would invert the lock order). The timer and the socket make it
	 * reachable; both only queue work, which runs after the listening
	 * socket's lock is released. Octets may have arrived before the
	 * watch: look once.
	 */
	__cep_arm(cep, cep->conf.mpa_request_timeout_ms);
	siw2_sock_watch(sock, &cep->cb);
	cep_queue(cep);
	return 0;
}

/**
 * siw2_cep_pending_take() - take the first cep off a listener's list
 * @pending: the listener's pending list
 *
 * Context: under the lock of the listener's socket (listen.c).
 *
 * Return: the cep, with a reference for the caller to give to
 * siw2_cep_unlisten(), or NULL if the list is empty.
 */
struct siw2_cep *siw2_cep_pending_take(struct list_head *pending)
{
	struct siw2_cep *cep;

	cep = list_first_entry_or_null(pending, struct siw2_cep, pending);
	if (cep) {
		list_del_init(&cep->pending);
		kref_get(&cep->ref);
	}
	return cep;
}

/**
 * siw2_cep_unlisten() - the listener of a pending cep is going
 * @cep: from siw2_cep_pending_take(), whose reference this drops
 *
 * A connection the ULP has not accepted yet ends with its listener.
 *
 * Context: process context, without the listening socket's lock.
 */
void siw2_cep_unlisten(struct siw2_cep *cep)
{
	mutex_lock(&cep->lock);
	cep->listener = NULL;
	if (cep->state == CEP_AWAIT_REQUEST || cep->state == CEP_AWAIT_ULP) {
		siw2_count(cep->sdev, SIW2_CNT_LISTEN_DROP);
		cep_finish(cep, true);
	}
	mutex_unlock(&cep->lock);
	cep_put(cep);
}

static void passive_request(struct siw2_cep *cep)
{
	const struct siw2_mpa_conn *conn = &cep->mpa.conn;
	struct iw_cm_event ev = { .event = IW_CM_EVENT_CONNECT_REQUEST };
	struct siw2_listener *l = cep->listener;
	u32 handle;
	int ret;

	lockdep_assert_held(&cep->lock);
	cep_disarm(cep);
	if (!l || siw2_sock_names(cep->sock, &ev.local_addr,
				  &ev.remote_addr))
		goto drop;
	cep->laddr = ev.local_addr;
	cep->raddr = ev.remote_addr;
	ret = xa_alloc_cyclic(&cep_handles, &handle, cep, xa_limit_32b,
			      &next_handle, GFP_KERNEL);
	if (ret < 0)
		goto drop;
	cep->handle = handle;
	cep->state = CEP_AWAIT_ULP;

	ev.provider_data = (void *)(unsigned long)handle;
	/* The iw_cm carries at most 255 octets; the ULP gets the first. */
	if (conn->pdata_len) {
		ev.private_data = (void *)conn->pdata;
		ev.private_data_len = min_t(u16, conn->pdata_len, U8_MAX);
	}
	/*
	 * What this side may use: an ORD up to the initiator's IRD, an IRD
	 * for the initiator's ORD (RFC 6581 9.1), read by the RDMA CM as
	 * initiator depth and responder resources. Without RFC 6581 data,
	 * the device's limits.
	 */
	if (conn->enhanced) {
		ev.ird = iwcm_depth(min_t(u16, conn->peer_ird, SIW2_MAX_ORD),
				    SIW2_MAX_ORD);
		ev.ord = iwcm_depth(min_t(u16, conn->peer_ord, SIW2_MAX_IRD),
				    SIW2_MAX_IRD);
	} else {
		ev.ird = iwcm_depth(SIW2_MAX_ORD, SIW2_MAX_ORD);
		ev.ord = iwcm_depth(SIW2_MAX_IRD, SIW2_MAX_IRD);
	}

	ret = siw2_listener_upcall(l, &cep->pending, &ev);
	if (ret) {
		siw2_count(cep->sdev, SIW2_CNT_UPCALL_FAIL);
		goto drop;
	}
	siw2_count(cep->sdev, SIW2_CNT_REQUEST);
	trace_siw2_cm_request(&cep->sdev->ibdev, &cep->laddr, &cep->raddr, 0,
			      0);
	cep_arm(cep, cep->conf.mpa_reply_timeout_ms);
	return;

drop:
	cep_finish(cep, true);
}

/*
 * Reads and drops what the peer sent of a frame being refused. TCP
 * resets a connection closed with octets unread, and an RFC 6581
 * initiator retries with revision 1 only after a close (RFC 6581 10).
 * Initiators send a Request, at most SIW2_MPA_FRAME_MAX octets, in one
 * piece and then wait for the Reply, so what is queued is all of it;
 * should TCP have split it (an MSS below the frame's size), the rest
 * arrives after the close and the initiator sees a reset, as before.
 */
static void rx_discard(struct siw2_cep *cep)
{
	siw2_sock_recv(cep->sock, cep->rx, sizeof(cep->rx), false);
}

static void passive_progress(struct siw2_cep *cep)
{
	enum siw2_mpa_cm_action act;
	enum siw2_mpa_err err;

	lockdep_assert_held(&cep->lock);
	act = rx_frame(cep);
	if (act == SIW2_MPA_CM_NEED_MORE)
		return;
	if (act == SIW2_MPA_CM_REQUEST && cep->state == CEP_AWAIT_REQUEST) {
		passive_request(cep);
		return;
	}
	err = cep->mpa.err;
	siw2_count(cep->sdev, err == SIW2_MPA_ERR_CLOSED ?
		   SIW2_CNT_PEER_CLOSED : SIW2_CNT_BAD_FRAME);
	/*
	 * RFC 5044 7.1.2: a bad frame closes the connection. A revision we
	 * do not speak is closed gracefully, which an RFC 6581 initiator
	 * takes as the hint to retry with revision 1 (RFC 6581 10).
	 */
	if (err == SIW2_MPA_ERR_REV)
		rx_discard(cep);
	cep_finish(cep, err != SIW2_MPA_ERR_CLOSED && err != SIW2_MPA_ERR_REV);
}

static struct siw2_cep *cep_find(struct iw_cm_id *id)
{
	struct siw2_cep *cep;

	xa_lock(&cep_handles);
	cep = xa_load(&cep_handles, (unsigned long)id->provider_data);
	if (cep)
		kref_get(&cep->ref);
	xa_unlock(&cep_handles);
	return cep;
}

/**
 * siw2_cm_accept() - ib_device_ops.iw_accept
 * @id: the cm_id the iw_cm made for a CONNECT_REQUEST
 * @param: Private Data of the Reply, IRD/ORD and the QP
 *
 * Sends the Reply, gives the stream to the QP and upcalls ESTABLISHED.
 * Any failure ends the connection: the iw_cm forgets it too.
 *
 * Return: 0, or a negative errno (-ECONNRESET: the request is gone).
 */
int siw2_cm_accept(struct iw_cm_id *id, struct iw_cm_conn_param *param)
{
	struct iw_cm_event ev = { .event = IW_CM_EVENT_ESTABLISHED };
	const struct siw2_mpa_conn *conn;
	struct siw2_cep *cep;
	struct ib_qp *ibqp;
	u16 ird, ord;
	size_t len;
	int ret;

	cep = cep_find(id);
	if (!cep)
		return -ECONNRESET;
	mutex_lock(&cep->lock);
	conn = &cep->mpa.conn;
	ret = -ECONNRESET;
	if (cep->state != CEP_AWAIT_ULP)
		goto out;
	ret = -EINVAL;
	if (param->private_data_len > pdata_max(conn->enhanced) ||
	    (param->private_data_len && !param->private_data))
		goto drop;
	/* A reference, which the CEP keeps (siw2_qp_iw_get()). */
	ibqp = siw2_qp_iw_get(id->device, param->qpn);
	if (!ibqp)
		goto drop;
	ird = min_t(u32, param->ird, SIW2_MAX_IRD);
	ord = min_t(u32, param->ord, SIW2_MAX_ORD);
	if (siw2_mpa_cm_accept(&cep->mpa, ird, ord, param->private_data,
			       param->private_data_len, cep->tx,
			       sizeof(cep->tx), &len))
		goto drop_qp;
	/* A fresh connection has room for one frame; no waiting here. */
	ret = siw2_sock_send(cep->sock, cep->tx, len);
	if (ret != (int)len) {
		ret = -ECONNRESET;
		goto drop_qp;
	}
	cep_disarm(cep);
	pending_unlink(cep);
	cep->qp = to_siw2_qp(ibqp);
	trace_siw2_cm_accept(&cep->sdev->ibdev, &cep->laddr, &cep->raddr,
			     param->qpn, 0);
	ret = hand_over(cep, false);
	if (ret) {
		/* ATTACHED: the QP reports the end; nothing to upcall. */
		if (cep->state == CEP_ATTACHED)
			goto out;
		goto drop;
	}
	id->add_ref(id);
	cep->cm_id = id;
	/* As for CONNECT_REPLY: ird is read as ORD, ord as IRD. */
	ev.ird = iwcm_depth(conn->ord, ord);
	ev.ord = iwcm_depth(conn->ird, ird);
	id->event_handler(id, &ev);
	siw2_count(cep->sdev, SIW2_CNT_ACCEPTED);
	ret = 0;
	goto out;

drop_qp:
	siw2_qp_put(to_siw2_qp(ibqp));
drop:
	cep_finish(cep, true);
out:
	mutex_unlock(&cep->lock);
	cep_put(cep);
	return ret;
}

/**
 * siw2_cm_reject() - ib_device_ops.iw_reject
 * @id: the cm_id the iw_cm made for a CONNECT_REQUEST
 * @pdata: Private Data for the rejecting Reply
 * @pdata_len: its length
 *
 * Return: 0; a request that is gone already needs no reject.
 */
int siw2_cm_reject(struct iw_cm_id *id, const void *pdata, u8 pdata_len)
{
	struct siw2_cep *cep;
	size_t len;

	cep = cep_find(id);
	if (!cep)
		return 0;
	mutex_lock(&cep->lock);
	if (cep->state == CEP_AWAIT_ULP) {
		/* RFC 6581 9.1: a reject may name what would be accepted. */
		if (!siw2_mpa_cm_reject(&cep->mpa, SIW2_MAX_IRD, SIW2_MAX_ORD,
					pdata, pdata_len, cep->tx,
					sizeof(cep->tx), &len))
			siw2_sock_send(cep->sock, cep->tx, len);
		siw2_count(cep->sdev, SIW2_CNT_REJECT_SENT);
		trace_siw2_cm_reject(&cep->sdev->ibdev, &cep->laddr,
				     &cep->raddr, 0, 0);
		/* Graceful, so that the Reply reaches the peer. */
		cep_finish(cep, false);
	}
	mutex_unlock(&cep->lock);
	cep_put(cep);
	return 0;
}

/* ---- events ---- */

/* The stream the QP had is gone: tell the iw_cm and end the cep. */
static void llp_closed(struct siw2_cep *cep)
{
	struct iw_cm_event ev = { .event = IW_CM_EVENT_DISCONNECT };
	struct iw_cm_id *id = cep->cm_id;

	lockdep_assert_held(&cep->lock);
	if (id) {
		/* DISCONNECT first: a disconnect downcall then does nothing. */
		id->event_handler(id, &ev);
		ev.event = IW_CM_EVENT_CLOSE;
		ev.status = READ_ONCE(cep->llp_reason);
		id->event_handler(id, &ev);
	}
	siw2_count(cep->sdev, SIW2_CNT_DISCONNECT);
	cep_finish(cep, false);
}

/**
 * siw2_cm_llp_closed() - see llp.h
 * @cep: the endpoint given to siw2_stream_attach()
 * @reason: 0, or a negative errno
 */
void siw2_cm_llp_closed(struct siw2_cep *cep, int reason)
{
	WRITE_ONCE(cep->llp_reason, reason);
	set_bit(CEP_EV_LLP_CLOSED, &cep->events);
	/* ATTACHED holds the base reference until this is processed. */
	cep_queue(cep);
}

static void cep_work(struct work_struct *work)
{
	struct siw2_cep *cep = container_of(work, struct siw2_cep, work);

	mutex_lock(&cep->lock);
	switch (cep->state) {
	case CEP_CONNECTING:
	case CEP_AWAIT_REPLY:
		active_progress(cep);
		break;
	case CEP_AWAIT_REQUEST:
	case CEP_AWAIT_ULP:
		passive_progress(cep);
		break;
	case CEP_ATTACHED:
		if (test_and_clear_bit(CEP_EV_LLP_CLOSED, &cep->events))
			llp_closed(cep);
		break;
	case CEP_IDLE:
	case CEP_DEAD:
		break;
	}
	mutex_unlock(&cep->lock);
	cep_put(cep);
}

static void timed_out(struct siw2_cep *cep)
{
	lockdep_assert_held(&cep->lock);
	switch (cep->state) {
	case CEP_CONNECTING:
		siw2_count(cep->sdev, SIW2_CNT_TCP_TIMEOUT);
		active_fail(cep, -ETIMEDOUT, false, true);
		break;
	case CEP_AWAIT_REPLY:
		/* 7.1.2 rule 8 */
		siw2_mpa_cm_timeout(&cep->mpa);
		siw2_count(cep->sdev, SIW2_CNT_REPLY_TIMEOUT);
		active_fail(cep, -ETIMEDOUT, false, true);
		break;
	case CEP_AWAIT_REQUEST:
		/* 7.1.2 rule 10 */
		siw2_mpa_cm_timeout(&cep->mpa);
		siw2_count(cep->sdev, SIW2_CNT_REQUEST_TIMEOUT);
		cep_finish(cep, true);
		break;
	case CEP_AWAIT_ULP:
		siw2_count(cep->sdev, SIW2_CNT_ULP_TIMEOUT);
		cep_finish(cep, true);
		break;
	default:
		break;
	}
}

static void cep_timeout(struct work_struct *work)
{
	struct siw2_cep *cep = container_of(to_delayed_work(work),
					    struct siw2_cep, timer);

	mutex_lock(&cep->lock);
	/* A timer re-armed while this one waited for the lock is not due. */
	if (cep->timer_on && time_after_eq(jiffies, cep->deadline)) {
		cep->timer_on = false;
		timed_out(cep);
	}
	mutex_unlock(&cep->lock);
	cep_put(cep);
}

/* ---- setup and teardown ---- */

static bool device_has_ceps(struct siw2_device *sdev)
{
	struct siw2_cep *cep;
	bool found = false;

	spin_lock(&ceps_lock);
	list_for_each_entry(cep, &ceps, all) {
		if (cep->sdev == sdev) {
			found = true;
			break;
		}
	}
	spin_unlock(&ceps_lock);
	return found;
}

/**
 * siw2_cm_uninit_device() - wait for a device's endpoints to be gone
 * @sdev: the device, in dealloc_driver
 *
 * The RDMA core destroyed every cm_id and QP of the device before, so what
 * is left is closing down: queued work, or a QP's siw2_cm_llp_closed() on
 * its way. The endpoints point at the device, so it waits.
 */
void siw2_cm_uninit_device(struct siw2_device *sdev)
{
	while (!wait_event_timeout(ceps_wait, !device_has_ceps(sdev),
				   10 * HZ))
		pr_warn_ratelimited("siw2: %s: waiting for its connections to close\n",
				    dev_name(&sdev->ibdev.dev));
}

int siw2_cm_init(void)
{
	/* The CM can be on the path of memory reclaim (NFS over RDMA). */
	cm_wq = alloc_workqueue("siw2_cm", WQ_MEM_RECLAIM | WQ_UNBOUND, 0);
	if (!cm_wq)
		return -ENOMEM;
	return 0;
}

void siw2_cm_uninit(void)
{
	/* Every device is gone, and with them every cep. */
	WARN_ON(!list_empty(&ceps));
	destroy_workqueue(cm_wq);
	/*
	 * Socket callbacks of ours that were entered before their socket
	 * was unwatched run in softirq context or in our own (finished)
	 * work: wait for the former before the module text goes.
	 */
	synchronize_rcu();
	xa_destroy(&cep_handles);
}
