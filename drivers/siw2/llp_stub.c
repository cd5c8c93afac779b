// SPDX-License-Identifier: GPL-2.0
/*
 * TEMPORARY stand-in for the data path's side of llp.h, until tx.c and rx.c
 * provide siw2_qp_llp_attach() and siw2_qp_llp_shutdown(). Then delete this
 * file, its line in Kbuild, siw2_llp_stub_uninit() in siw2.h and its call in
 * main.c.
 *
 * It lets the connection manager be tested end to end: an attached QP holds
 * the socket and moves no data. The stream ends when the QP enters ERR (a
 * modify, or destroy_qp), when siw2_qp_llp_shutdown() is called, or when
 * the peer closes; a 100 ms poll notices all three, as nothing else tells
 * it (qp.c does not call siw2_qp_llp_shutdown() yet).
 */
#include <linux/net.h>
#include <linux/workqueue.h>
#include <net/sock.h>
#include <net/tcp_states.h>

#include "siw2.h"
#include "llp.h"

struct stub {
	struct list_head node;
	struct siw2_qp *qp;
	struct socket *sock;
	struct siw2_cep *cep;
	bool shut;
	bool abortive;
	int reason;
};

static DEFINE_MUTEX(stubs_lock);
static LIST_HEAD(stubs);

static void poll_stubs(struct work_struct *work);
static DECLARE_DELAYED_WORK(poll_work, poll_stubs);

int siw2_qp_llp_attach(struct siw2_qp *qp, struct socket *sock,
		       const struct siw2_mpa_conn *conn, struct siw2_cep *cep,
		       bool initiator, const void *rx_prefix,
		       size_t rx_prefix_len)
{
	struct stub *s;

	s = kzalloc(sizeof(*s), GFP_KERNEL);
	if (!s)
		return -ENOMEM;
	s->qp = qp;
	s->sock = sock;
	s->cep = cep;
	mutex_lock(&stubs_lock);
	list_add_tail(&s->node, &stubs);
	mutex_unlock(&stubs_lock);
	schedule_delayed_work(&poll_work, HZ / 10);
	return 0;
}

void siw2_qp_llp_shutdown(struct siw2_qp *qp, bool abortive)
{
	struct stub *s;

	mutex_lock(&stubs_lock);
	list_for_each_entry(s, &stubs, node) {
		if (s->qp == qp) {
			s->shut = true;
			s->abortive |= abortive;
		}
	}
	mutex_unlock(&stubs_lock);
	mod_delayed_work(system_wq, &poll_work, 0);
}

static void poll_stubs(struct work_struct *work)
{
	struct stub *s, *tmp;
	LIST_HEAD(done);
	bool more;
	int state;

	mutex_lock(&stubs_lock);
	list_for_each_entry_safe(s, tmp, &stubs, node) {
		state = READ_ONCE(s->sock->sk->sk_state);
		if (s->shut || READ_ONCE(s->qp->state) == IB_QPS_ERR) {
			/* ERR is abortive: the CM's release sends a reset. */
			if (s->abortive || !s->shut)
				sock_no_linger(s->sock->sk);
			else
				kernel_sock_shutdown(s->sock, SHUT_WR);
			s->reason = s->shut && !s->abortive ? 0 : -ECONNABORTED;
		} else if (state != TCP_ESTABLISHED) {
			s->reason = state == TCP_CLOSE_WAIT ? 0 : -ECONNRESET;
			siw2_qp_set_error(s->qp);
		} else {
			continue;
		}
		list_move_tail(&s->node, &done);
	}
	more = !list_empty(&stubs);
	mutex_unlock(&stubs_lock);

	/* After siw2_cm_llp_closed() the socket and the QP may be gone. */
	list_for_each_entry_safe(s, tmp, &done, node) {
		siw2_cm_llp_closed(s->cep, s->reason);
		kfree(s);
	}
	if (more)
		schedule_delayed_work(&poll_work, HZ / 10);
}

void siw2_llp_stub_uninit(void)
{
	cancel_delayed_work_sync(&poll_work);
	WARN_ON(!list_empty(&stubs));
}
