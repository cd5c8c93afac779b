// SPDX-License-Identifier: GPL-2.0
/*
 * The QP's side of llp.h: taking a connected socket over from the CM,
 * routing its callbacks to the engines, and ending the stream.
 *
 * Ending. Whatever ends the stream (the ULP's modify to SQD or ERR,
 * destroy_qp, the peer's FIN or reset, a Terminate sent or received, a
 * socket error) calls siw2_stream_close(), which queues the close work
 * once. The close work stops the send engine, sends what a graceful end
 * owes the peer (the rest of a half-sent batch, then a queued Terminate,
 * which RFC 5040 7.1 makes the last message on the stream), gives the
 * socket its callbacks back, completes the receive it was filling, moves
 * the QP to ERR (flushing its queues) and reports the end to the CM. A
 * Terminate is never followed by a reset that could discard it before the
 * peer read it.
 *
 * A QP that goes to ERR while its stream lives (the ULP's modify, a
 * Terminate) stops its engines at once, but holds back its flush until
 * the close work: the engines may still hold work requests, which must
 * complete before those behind them, and no buffer may be written once
 * its consumer has it back (the drain of ib_drain_qp() relies on both).
 *
 * Connecting again. A QP reset after its connection ended may be given
 * the next one: the attach waits for the old stream's close work, puts
 * the new stream in its place and frees the old after a grace period of
 * siw2_stream_srcu (engine.h).
 */
#include <linux/log2.h>
#include <linux/net.h>
#include <linux/slab.h>
#include <linux/tcp.h>
#include <linux/wait_bit.h>
#include <net/sock.h>
#include <net/tcp.h>
#include <net/tcp_states.h>

#include "engine.h"
#include "llp.h"

struct workqueue_struct *siw2_tx_wq;
struct workqueue_struct *siw2_fault_wq;
struct srcu_struct siw2_stream_srcu;

/* How long a graceful end may wait for socket space. */
#define CLOSE_SEND_TIMEOUT (2 * HZ)

static void stream_notify(struct siw2_sock_cb *cb, unsigned int events)
{
	struct siw2_stream *s = container_of(cb, struct siw2_stream, cb);
	struct sock *sk = s->sock->sk;
	int state;

	if (events & SIW2_SOCK_READ)
		siw2_rx_data_ready(s);
	if (events & SIW2_SOCK_WRITE)
		siw2_tx_resume(s);
	if (events & SIW2_SOCK_STATE) {
		state = READ_ONCE(sk->sk_state);
		if (state == TCP_ESTABLISHED)
			return;
		/* The peer's FIN is an orderly end; anything else is not. */
		siw2_stream_close(s, state == TCP_CLOSE_WAIT ? 0 : -ECONNRESET,
				  false);
	}
}

static void close_work(struct work_struct *work);

/*
 * The ORD or IRD a stream keeps: the negotiated value, at most @max;
 * SIW2_MPA_IRD_ORD_NONE (no value exchanged) stands for @max.
 */
static u32 stream_depth(u16 v, u32 max)
{
	if (v == SIW2_MPA_IRD_ORD_NONE)
		return max;
	return min_t(u32, v, max);
}

static void stream_free(struct siw2_stream *s)
{
	u32 i;

	/* Socket buffers may still refer to it (zero-copy). */
	if (s->tx.stage)
		put_page(s->tx.stage);
	/* A stream whose close work never ran may still have them. */
	for (i = 0; i < SIW2_TX_COPY_PAGES; i++)
		if (s->tx.copy[i])
			put_page(s->tx.copy[i]);
	kvfree(s->recs);
	kvfree(s->inq);
	kvfree(s->orq);
	kfree(s);
}

static void stream_free_work(struct work_struct *work)
{
	siw2_stream_free(container_of(work, struct siw2_stream, free_work));
}

static void stream_unused(struct rcu_head *head)
{
	struct siw2_stream *s = container_of(head, struct siw2_stream, rcu);

	/* The free waits for the send work, in process context. */
	queue_work(siw2_tx_wq, &s->free_work);
}

/* A stream the QP's next connection replaced: freed once no reader has it. */
static void stream_retire(struct siw2_stream *s)
{
	INIT_WORK(&s->free_work, stream_free_work);
	call_srcu(&siw2_stream_srcu, &s->rcu, stream_unused);
}

/*
 * The stream of the QP's last connection, in @old, once its close work
 * has run: until then that work may still move the QP to ERR, clear
 * flush_held (which the next attach sets) or run its send engine, which
 * takes SQEs from a QP in RTS. A stream that is not closing (the QP is
 * connected) is refused. Inside siw2_stream_srcu, which keeps @old from
 * being freed, and reused, until the caller leaves it.
 */
static int last_stream_ended(struct siw2_qp *qp, struct siw2_stream **old)
{
	struct siw2_stream *s;
	unsigned long flags;
	bool closing = true;

	s = srcu_dereference(qp->stream, &siw2_stream_srcu);
	if (s) {
		/* siw2_stream_close() queues the work under this lock. */
		spin_lock_irqsave(&s->lock, flags);
		closing = test_bit(SIW2_S_CLOSING, &s->flags);
		spin_unlock_irqrestore(&s->lock, flags);
		if (closing)
			flush_work(&s->close_work);
	}
	*old = s;
	return closing ? 0 : -EBUSY;
}

int siw2_stream_ready(struct siw2_qp *qp)
{
	struct siw2_stream *old;
	int idx, ret;

	idx = srcu_read_lock(&siw2_stream_srcu);
	ret = last_stream_ended(qp, &old);
	srcu_read_unlock(&siw2_stream_srcu, idx);
	return ret;
}

/* Inside siw2_stream_srcu (see last_stream_ended()). */
static int attach(struct siw2_qp *qp, struct socket *sock,
		  const struct siw2_mpa_conn *conn, struct siw2_cep *cep,
		  const struct siw2_conf *conf, bool initiator)
{
	struct sock *sk = sock->sk;
	struct siw2_stream *s, *old;
	unsigned long flags;
	unsigned int qn;
	int ret;

	ret = last_stream_ended(qp, &old);
	if (ret)
		return ret;
	s = kzalloc(sizeof(*s), GFP_KERNEL);
	if (!s)
		return -ENOMEM;
	/*
	 * A Read with ORD 0 could never be issued: at least one, and the
	 * peer's IRD check says whether it was allowed (RFC 6581 9.1).
	 */
	s->ord.max = max_t(u32, stream_depth(conn->ord, SIW2_MAX_ORD), 1);
	s->ird.max = stream_depth(conn->ird, SIW2_MAX_IRD);
	s->orq_mask = roundup_pow_of_two(s->ord.max) - 1;
	/* The RTR's zero-length Read takes no IRD credit (RFC 6581 9.2). */
	s->inq_mask = roundup_pow_of_two(s->ird.max + 1) - 1;
	s->orq = kvcalloc(s->orq_mask + 1, sizeof(*s->orq), GFP_KERNEL);
	s->inq = kvcalloc(s->inq_mask + 1, sizeof(*s->inq), GFP_KERNEL);
	s->recs = kvcalloc(qp->sq.size, sizeof(*s->recs), GFP_KERNEL);
	s->tx.stage = alloc_page(GFP_KERNEL);
	if (!s->orq || !s->inq || !s->recs || !s->tx.stage) {
		stream_free(s);
		return -ENOMEM;
	}
	s->rec_mask = qp->sq.size - 1;
	s->qp = qp;
	s->sdev = qp->sdev;
	s->sock = sock;
	s->cep = cep;
	s->conn = *conn;
	s->conn.pdata = NULL;
	s->conn.pdata_len = 0;
	s->initiator = initiator;
	s->tx_zerocopy = conf->tx_zerocopy;
	spin_lock_init(&s->lock);
	INIT_LIST_HEAD(&s->zc_list);
	mutex_init(&s->tx_mutex);
	INIT_WORK(&s->tx_work, siw2_tx_work);
	s->tx_cpu = qp->home_cpu;
	INIT_WORK(&s->close_work, close_work);
	s->cb.notify = stream_notify;

	for (qn = 0; qn < SIW2_QN_COUNT; qn++)
		s->tx.msn[qn] = 1;	/* RFC 5041 4.3 */
	siw2_mpa_rx_init(&s->rx.mpa, conn->rx_markers, conn->crc);
	siw2_mpa_rx_fold_by_caller(&s->rx.mpa);
	siw2_mpa_tx_init(&s->tx.mpa, conn->tx_markers, conn->crc);
	siw2_ddp_rx_init(&s->rx.ddp, true);
	siw2_rx_init(s);
	/* Until the attach is done with it: the close work waits. */
	set_bit(SIW2_S_ATTACHING, &s->flags);
	/* RFC 5044 7.1.2 rule 4: the responder waits for the first FPDU. */
	if (initiator)
		set_bit(SIW2_S_TX_ALLOWED, &s->flags);
	s->tx.rtr_done = !(initiator && conn->p2p && conn->rtr);

	/*
	 * Under qp->lock, where every move to ERR happens: a move (destroy,
	 * modify_qp) that comes first is seen here and the attach fails,
	 * one that comes later finds the stream and ends it. A QP that left
	 * RTS unseen would keep the stream, and with it the connection and
	 * its own destroy waiting, until the peer closed. Of two attaches
	 * racing for one QP, the second finds the stream changed.
	 */
	spin_lock_irqsave(&qp->lock, flags);
	if (rcu_access_pointer(qp->stream) != old) {
		spin_unlock_irqrestore(&qp->lock, flags);
		stream_free(s);
		return -EBUSY;
	}
	if (qp->state != IB_QPS_RTS) {
		spin_unlock_irqrestore(&qp->lock, flags);
		stream_free(s);
		return -ECONNABORTED;
	}
	spin_lock(&qp->sq_lock);
	s->retire = qp->sq_fetch;
	s->fetched = qp->sq_fetch;
	spin_unlock(&qp->sq_lock);
	siw2_qp_get(qp);
	WRITE_ONCE(qp->flush_held, true);
	rcu_assign_pointer(qp->stream, s);
	spin_unlock_irqrestore(&qp->lock, flags);
	if (old)
		stream_retire(old);

	tcp_sock_set_nodelay(sk);
	siw2_sock_watch(sock, &s->cb);
	/* FPDUs may have arrived with the MPA frame, and the peer may be gone. */
	lock_sock(sk);
	siw2_rx_data_ready(s);
	release_sock(sk);
	stream_notify(&s->cb, SIW2_SOCK_STATE);
	/*
	 * The stream may be closing already (a modify to ERR that found it
	 * published): its close work unwatches the socket and releases the
	 * receive state, and does so only after this.
	 */
	clear_and_wake_up_bit(SIW2_S_ATTACHING, &s->flags);
	return 0;
}

int siw2_stream_attach(struct siw2_qp *qp, struct socket *sock,
		       const struct siw2_mpa_conn *conn, struct siw2_cep *cep,
		       const struct siw2_conf *conf, bool initiator,
		       const void *rx_prefix, size_t rx_prefix_len)
{
	int idx, ret;

	if (rx_prefix_len)
		return -EINVAL;
	idx = srcu_read_lock(&siw2_stream_srcu);
	ret = attach(qp, sock, conn, cep, conf, initiator);
	srcu_read_unlock(&siw2_stream_srcu, idx);
	return ret;
}

/**
 * siw2_stream_close() - end the stream
 * @s: the stream
 * @reason: what siw2_cm_llp_closed() reports (0, or a negative errno)
 * @abortive: reset TCP instead of sending what is owed and a FIN, unless
 *	a Terminate is waiting to go out; a later abortive call overrides an
 *	earlier graceful one
 *
 * Any context. The first call queues the close work.
 */
void siw2_stream_close(struct siw2_stream *s, int reason, bool abortive)
{
	unsigned long flags;
	bool first;

	spin_lock_irqsave(&s->lock, flags);
	first = !test_and_set_bit(SIW2_S_CLOSING, &s->flags);
	/*
	 * A Terminate queued before is sent, whichever close comes first
	 * (siw2_stream_terminate() queues it, then closes).
	 */
	if (test_bit(SIW2_S_TERM, &s->flags))
		abortive = false;
	if (first) {
		s->close_reason = reason;
		WRITE_ONCE(s->abortive, abortive);
		/* Under the lock: see last_stream_ended(). */
		queue_work(siw2_tx_wq, &s->close_work);
	} else if (abortive) {
		WRITE_ONCE(s->abortive, true);
	}
	spin_unlock_irqrestore(&s->lock, flags);
}

static bool access_error(u32 cause)
{
	u32 layer = SIW2_TERM_CAUSE_LAYER(cause);
	u32 etype = SIW2_TERM_CAUSE_ETYPE(cause);

	/* DDP tagged codes 0 to 3: STag, bounds, association, TO wrap. */
	return (layer == SIW2_LAYER_RDMAP && etype == SIW2_ETYPE_RDMAP_PROT) ||
	       (layer == SIW2_LAYER_DDP && etype == SIW2_ETYPE_DDP_TAGGED &&
		SIW2_TERM_CAUSE_ECODE(cause) <= 3);
}

/**
 * siw2_stream_terminate() - end the stream with a Terminate message
 * @s: the stream
 * @t: the Terminate to send (RFC 5040 7); only the first one is sent
 *
 * Any context. The QP moves to ERR at once, so that nothing more is
 * placed or sent, and its consumer hears of it (an access error for the
 * protection errors of RFC 5040 4.8 and RFC 5041 7.2, else a fatal
 * error); the close work then sends the Terminate.
 */
void siw2_stream_terminate(struct siw2_stream *s, const struct siw2_term_info *t)
{
	unsigned long flags;
	bool first = false;

	spin_lock_irqsave(&s->lock, flags);
	if (!test_bit(SIW2_S_CLOSING, &s->flags) &&
	    !test_and_set_bit(SIW2_S_TERM, &s->flags)) {
		s->term = *t;
		first = true;
	}
	spin_unlock_irqrestore(&s->lock, flags);
	siw2_qp_set_error(s->qp, SIW2_QP_CAUSE_TERM_SENT);
	siw2_stream_close(s, -EPROTO, false);
	if (!first)
		return;
	siw2_count(s->sdev, SIW2_CNT_TERM_SENT);
	siw2_qp_event(s->qp, access_error(t->cause) ? IB_EVENT_QP_ACCESS_ERR :
						      IB_EVENT_QP_FATAL);
}

static void close_work(struct work_struct *work)
{
	struct siw2_stream *s = container_of(work, struct siw2_stream,
					     close_work);
	struct siw2_qp *qp = s->qp;
	struct sock *sk = s->sock->sk;
	bool abortive;

	wait_on_bit(&s->flags, SIW2_S_ATTACHING, TASK_UNINTERRUPTIBLE);
	/* The send engine finishes its round and never starts another. */
	mutex_lock(&s->tx_mutex);
	set_bit(SIW2_S_CLOSED, &s->flags);
	/* It watches the SQ no more (tx.c); the QP's flush takes the rest. */
	if (qp->user)
		siw2_qp_sq_wake(qp, 0, SIW2_SQW_ENGINE);
	abortive = READ_ONCE(s->abortive);
	/*
	 * destroy_qp waits for this work, so it sends nothing more but a
	 * queued Terminate: a FIN where the last message ended, a reset
	 * where one would be cut (siw2_tx_close() would have to finish it).
	 */
	if (!abortive && test_bit(SIW2_S_DESTROY, &s->flags) &&
	    !test_bit(SIW2_S_TERM, &s->flags) && siw2_tx_begun(s)) {
		abortive = true;
		WRITE_ONCE(s->abortive, true);
	}
	if (!abortive) {
		WRITE_ONCE(sk->sk_sndtimeo, CLOSE_SEND_TIMEOUT);
		siw2_tx_close(s);
		/* A drain that timed out would leave half an FPDU: reset. */
		if (siw2_tx_begun(s))
			WRITE_ONCE(s->abortive, true);
	}
	mutex_unlock(&s->tx_mutex);
	cancel_work_sync(&s->tx_work);

	/* After this no receive callback runs or will run, */
	siw2_sock_unwatch(s->sock, &s->cb);
	/* ... nor the receive path's fault work. */
	siw2_rx_stop(s);
	if (READ_ONCE(s->abortive))
		sock_no_linger(sk);
	else
		kernel_sock_shutdown(s->sock, SHUT_WR);

	/*
	 * The RQE being filled completes before those behind it in the ring,
	 * which the QP's flush, held back until now, completes after it.
	 */
	siw2_rx_release(s);
	siw2_tx_release(s);
	siw2_qp_stream_done(qp);
	set_bit(SIW2_S_CLOSED, &s->flags);
	siw2_cm_llp_closed(s->cep, s->close_reason);
	/*
	 * Last: destroy_qp may free the stream once this is dropped, and the
	 * QP's next attach once this work is done.
	 */
	siw2_qp_put(qp);
}

void siw2_stream_shutdown(struct siw2_qp *qp, enum siw2_close how)
{
	bool abortive = how == SIW2_CLOSE_ABORT;
	struct siw2_stream *s;
	int idx;

	idx = srcu_read_lock(&siw2_stream_srcu);
	s = srcu_dereference(qp->stream, &siw2_stream_srcu);
	if (s) {
		if (how == SIW2_CLOSE_DESTROY)
			set_bit(SIW2_S_DESTROY, &s->flags);
		siw2_stream_close(s, abortive ? -ECONNABORTED : 0, abortive);
	}
	srcu_read_unlock(&siw2_stream_srcu, idx);
}

/* destroy_qp after every holder of the QP is gone, or a retired stream. */
void siw2_stream_free(struct siw2_stream *s)
{
	if (!s)
		return;
	cancel_work_sync(&s->tx_work);
	stream_free(s);
}

int siw2_stream_init(void)
{
	int ret;

	ret = init_srcu_struct(&siw2_stream_srcu);
	if (ret)
		return ret;
	/*
	 * Reclaim safe: NFS and block storage over RDMA may depend on it to
	 * write pages out.
	 */
	siw2_tx_wq = alloc_workqueue("siw2_tx", WQ_HIGHPRI | WQ_MEM_RECLAIM,
				     0);
	if (!siw2_tx_wq)
		goto err_srcu;
	/*
	 * ODP faults of paused streams (rx.c): apart, as a fault may wait
	 * for I/O; reclaim safe, as the close work on siw2_tx flushes them.
	 */
	siw2_fault_wq = alloc_workqueue("siw2_fault",
					WQ_UNBOUND | WQ_MEM_RECLAIM, 0);
	if (!siw2_fault_wq)
		goto err_tx;
	return 0;

err_tx:
	destroy_workqueue(siw2_tx_wq);
err_srcu:
	cleanup_srcu_struct(&siw2_stream_srcu);
	return -ENOMEM;
}

/* After the last device: what retired streams remain are freed first. */
void siw2_stream_uninit(void)
{
	srcu_barrier(&siw2_stream_srcu);
	destroy_workqueue(siw2_fault_wq);
	destroy_workqueue(siw2_tx_wq);
	cleanup_srcu_struct(&siw2_stream_srcu);
}
