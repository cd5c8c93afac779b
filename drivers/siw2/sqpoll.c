// SPDX-License-Identifier: GPL-2.0
/*
 * Send queue polling: a busy user QP posts without system calls.
 *
 * A user QP's send queue is memory the provider writes (siw2-abi.h). While
 * SIW2_SQ_NEED_WAKEUP is set in the ring, the provider rings a doorbell (a
 * system call) after publishing SQEs. A doorbell on a connected QP of a
 * device whose sq_poll_us is not 0 hands the QP to a poller: a kernel
 * thread that watches the SQ's prod index, runs the send engine whenever
 * it moved, and meanwhile keeps the bit clear, so that later posts stay in
 * user space. Once prod has not moved for sq_poll_us microseconds the
 * poller sets the bit again and lets the QP go; with no QP left it sleeps,
 * so idle QPs cost no CPU at all.
 *
 * Handing back (siw2-abi.h, "SQ doorbell"): the poller sets the bit,
 * issues a full barrier and loads prod once more; the provider stores prod,
 * issues a full barrier and loads the bit. A post racing with the hand-back
 * is therefore seen by that load (the poller runs the engine once more) or
 * sees the bit and rings.
 *
 * The poller is one of the SQ's watchers (SIW2_SQW_POLLER, see
 * siw2_qp_sq_wake()): the bit is clear while it or the running send engine
 * watches. siw2_sqpoll_watch() adds the poller under qp->lock with the QP
 * in RTS and under the poller's lock before the QP is on its list, so
 * that the poller's own removal comes after. A QP the poller finds out of
 * RTS is let go with one more run of the engine, which flushes what was
 * posted meanwhile; one whose engine still runs when the window ends is
 * let go without a last look, the engine taking it.
 *
 * Pollers: one per CPU online at module load, not bound to it; a QP goes
 * to the poller of the CPU its first doorbell rang on and stays with it, so
 * that its poll_node is only ever on that poller's list, under that
 * poller's lock (a doorbell on another CPU looking at the node under its
 * own poller's lock could see it half unlinked). A poller spins only while
 * it has its CPU to itself: when a pass finds nothing new and another task
 * is runnable there (an application busy-polling its CQ, say), it sleeps
 * for a few microseconds between passes rather than share the CPU by time
 * slices, which would cost the other task milliseconds. A watched QP holds a
 * reference, dropped when it is let go; destroy_qp lets it go first.
 *
 * Locking: qp->lock before a poller's lock; a poller never takes qp->lock.
 * Poller locks are taken with interrupts off (qp->lock is).
 */
#include <linux/delay.h>
#include <linux/kthread.h>
#include <linux/moduleparam.h>
#include <linux/sched/stat.h>
#include <linux/sched/clock.h>
#include <linux/slab.h>

#include "siw2.h"
#include <rdma/siw2-abi.h>

/**
 * struct siw2_sqpoller - one polling thread
 * @lock: protects @qps and the poll_* fields of the QPs on it
 * @qps: the QPs watched
 * @task: the thread
 */
struct siw2_sqpoller {
	spinlock_t lock;	/* see above */
	struct list_head qps;
	struct task_struct *task;
};

static struct siw2_sqpoller *pollers;
static unsigned int nr_pollers;

/* What a poller does with a QP, decided under its lock. */
enum poll_action {
	POLL_IDLE,	/* nothing new */
	POLL_RUN,	/* run its send engine, keep watching */
	POLL_DROP,	/* let it go */
	POLL_RUN_DROP,	/* let it go after one more run */
};

/* The poller's look at one QP; under p->lock. */
static enum poll_action look(struct siw2_qp *qp, u64 now)
{
	u32 prod = READ_ONCE(qp->sq.ctl->prod);
	u64 window = (u64)READ_ONCE(qp->sdev->conf.sq_poll_us) * NSEC_PER_USEC;

	if (READ_ONCE(qp->state) != IB_QPS_RTS) {
		/*
		 * Posts ring again: in ERR to be flushed, after a RESET for the
		 * QP's next connection.
		 */
		siw2_qp_sq_wake(qp, 0, SIW2_SQW_POLLER);
		/* The bit before the run's look at prod, as below. */
		smp_mb();
		return POLL_RUN_DROP;
	}
	if (qp->poll_kick || prod != qp->poll_prod) {
		qp->poll_kick = false;
		qp->poll_prod = prod;
		qp->poll_last = now;
		return POLL_RUN;
	}
	/* local_clock() may differ a little between CPUs: signed. */
	if (window && (s64)(now - qp->poll_last) < (s64)window)
		return POLL_IDLE;
	/* A running engine keeps the bit clear and looks at prod itself. */
	if (!siw2_qp_sq_wake(qp, 0, SIW2_SQW_POLLER))
		return POLL_DROP;
	/*
	 * The bit before the last look at prod; pairs with the provider's
	 * barrier between its store of prod and its load of the bit.
	 */
	smp_mb();
	if (READ_ONCE(qp->sq.ctl->prod) != qp->poll_prod)
		return POLL_RUN_DROP;
	return POLL_DROP;
}

/* What a pass over a poller's QPs found. */
enum pass_result {
	PASS_EMPTY,	/* no QP is watched */
	PASS_IDLE,	/* none had anything new */
	PASS_BUSY,	/* one was run or let go */
};

/* One pass over @p's QPs that runs at most one send engine. */
static enum pass_result poll_pass(struct siw2_sqpoller *p)
{
	struct siw2_qp *qp, *tmp, *run = NULL;
	enum poll_action act = POLL_IDLE;
	u64 now = local_clock();
	bool any;

	spin_lock_irq(&p->lock);
	list_for_each_entry_safe(qp, tmp, &p->qps, poll_node) {
		act = look(qp, now);
		if (act == POLL_IDLE)
			continue;
		run = qp;
		if (act == POLL_RUN) {
			/* Its reference for the run; others get a turn next. */
			siw2_qp_get(qp);
			list_move_tail(&qp->poll_node, &p->qps);
		} else {
			/* The watch's reference goes with the QP. */
			list_del_init(&qp->poll_node);
		}
		break;
	}
	any = !list_empty(&p->qps);
	spin_unlock_irq(&p->lock);

	if (!run)
		return any ? PASS_IDLE : PASS_EMPTY;
	if (act != POLL_DROP)
		siw2_qp_kick_tx(run);
	siw2_qp_put(run);
	return PASS_BUSY;
}

static int poller_fn(void *data)
{
	struct siw2_sqpoller *p = data;

	while (!kthread_should_stop()) {
		switch (poll_pass(p)) {
		case PASS_IDLE:
			if (!single_task_running()) {
				usleep_range(10, 20);
				continue;
			}
			fallthrough;
		case PASS_BUSY:
			cond_resched();
			continue;
		case PASS_EMPTY:
			break;
		}
		set_current_state(TASK_INTERRUPTIBLE);
		/* siw2_sqpoll_watch() adds under the lock, then wakes us. */
		if (list_empty_careful(&p->qps) && !kthread_should_stop())
			schedule();
		__set_current_state(TASK_RUNNING);
	}
	return 0;
}

/**
 * siw2_sqpoll_watch() - poll a user QP's send queue after its doorbell
 * @qp: a user QP whose doorbell rang
 *
 * Process context. Does nothing unless the QP is connected (RTS with a
 * stream), its device polls (sq_poll_us), and it is not watched already.
 */
void siw2_sqpoll_watch(struct siw2_qp *qp)
{
	struct siw2_sqpoller *p;
	unsigned long flags;

	if (!qp->user || !READ_ONCE(qp->sdev->conf.sq_poll_us) || !nr_pollers)
		return;

	spin_lock_irqsave(&qp->lock, flags);
	if (qp->state != IB_QPS_RTS || !rcu_access_pointer(qp->stream)) {
		spin_unlock_irqrestore(&qp->lock, flags);
		return;
	}
	if (!qp->poller)
		qp->poller = &pollers[raw_smp_processor_id() % nr_pollers];
	p = qp->poller;
	spin_lock(&p->lock);
	if (!list_empty(&qp->poll_node)) {
		spin_unlock(&p->lock);
		spin_unlock_irqrestore(&qp->lock, flags);
		return;
	}
	siw2_qp_get(qp);
	/*
	 * Cleared before the poller can see the QP: once it is on the list,
	 * the poller may let it go and set the bit, which must then stay.
	 */
	siw2_qp_sq_wake(qp, SIW2_SQW_POLLER, 0);
	/* The first look runs the engine: posts until now are covered. */
	qp->poll_kick = true;
	qp->poll_last = local_clock();
	list_add_tail(&qp->poll_node, &p->qps);
	spin_unlock(&p->lock);
	spin_unlock_irqrestore(&qp->lock, flags);
	wake_up_process(p->task);
}

/**
 * siw2_sqpoll_unwatch() - stop polling a QP's send queue
 * @qp: the QP, out of RTS already (destroy_qp)
 *
 * Process context. On return no poller holds the watch's reference; a run
 * of the engine in progress still holds its own. The QP is out of RTS, so
 * no doorbell sets qp->poller any more.
 */
void siw2_sqpoll_unwatch(struct siw2_qp *qp)
{
	struct siw2_sqpoller *p = qp->poller;
	bool was = false;

	if (!p)
		return;
	spin_lock_irq(&p->lock);
	if (!list_empty(&qp->poll_node)) {
		list_del_init(&qp->poll_node);
		was = true;
	}
	spin_unlock_irq(&p->lock);
	siw2_qp_sq_wake(qp, 0, SIW2_SQW_POLLER);
	if (was)
		siw2_qp_put(qp);
}

/* Before a QP can be watched: from siw2_qp_create(). */
void siw2_sqpoll_init_qp(struct siw2_qp *qp)
{
	INIT_LIST_HEAD(&qp->poll_node);
	qp->poller = NULL;
}

int siw2_sqpoll_init(void)
{
	unsigned int i, n = num_online_cpus();
	struct task_struct *t;

	pollers = kcalloc(n, sizeof(*pollers), GFP_KERNEL);
	if (!pollers)
		return -ENOMEM;
	for (i = 0; i < n; i++) {
		spin_lock_init(&pollers[i].lock);
		INIT_LIST_HEAD(&pollers[i].qps);
		t = kthread_run(poller_fn, &pollers[i], "siw2_sqpoll/%u", i);
		if (IS_ERR(t)) {
			siw2_sqpoll_uninit();
			return PTR_ERR(t);
		}
		pollers[i].task = t;
		nr_pollers = i + 1;
	}
	return 0;
}

/* Module exit: every device, hence every QP, is gone. */
void siw2_sqpoll_uninit(void)
{
	unsigned int i;

	for (i = 0; i < nr_pollers; i++) {
		WARN_ON(!list_empty(&pollers[i].qps));
		kthread_stop(pollers[i].task);
	}
	nr_pollers = 0;
	kfree(pollers);
	pollers = NULL;
}
