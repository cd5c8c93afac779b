// SPDX-License-Identifier: GPL-2.0
/*
 * Zero-copy transmit: the payload of a large message from user memory goes
 * to TCP by page reference instead of being copied into socket buffers.
 *
 * The hazard. TCP may send an octet again until the peer acknowledged it.
 * A work request completed the moment TCP took a reference would let the
 * application write to its buffer while a retransmission still reads it,
 * and the octets sent again would no longer match the MPA CRC computed
 * over the first ones (RFC 5044 6: the peer then drops the connection).
 * So a zero-copy message completes only when TCP has let go of every
 * socket buffer that refers to its pages: each such message carries a
 * struct ubuf_info whose completion runs when the last of them is freed
 * (after the acknowledgment, or once a local receiver has copied them).
 *
 * What is eligible (tx.c decides): Sends and Writes of at least
 * SIW2_ZC_MIN_LEN octets whose every scatter entry is in a user MR (pages
 * pinned by ib_umem_get(), so references on them are safe; a kernel
 * consumer's buffers may be slab memory, which must not be referenced by
 * socket buffers). The staging page that holds the FPDUs' fixed octets is
 * referenced too, so a batch sent without a copy takes a fresh one.
 *
 * Lifetime. An object lives until its last reference is dropped, which
 * may happen after the stream is gone: a socket the close work released
 * keeps its unacknowledged data. At close the stream detaches its
 * objects, whose completions then only free them; the QP has flushed
 * their work requests. Each object holds a module reference, so the code
 * of its completion stays loaded (rmmod reports the module busy until
 * TCP lets go), and module exit's rcu_barrier() waits for the last free.
 *
 * Locking: zc_lock protects every object's @s and @node, and is taken
 * before the stream's lock. Completions run in any context.
 */
#include <linux/module.h>
#include <linux/skbuff.h>
#include <linux/slab.h>

#include "engine.h"

/**
 * struct siw2_zc - one zero-copy message in flight
 * @ubuf: what TCP holds a reference to, per socket buffer
 * @s: the stream, or NULL once it detached
 * @node: on @s's zc_list
 * @slot: the record of the work request that completes with it
 * @complete: @slot is valid, the message was handed to TCP in full
 * @rcu: the free, deferred for module exit's rcu_barrier()
 */
struct siw2_zc {
	struct ubuf_info ubuf;
	struct siw2_stream *s;
	struct list_head node;
	u32 slot;
	bool complete;
	struct rcu_head rcu;
};

static DEFINE_SPINLOCK(zc_lock);

static void zc_free(struct rcu_head *head)
{
	kfree(container_of(head, struct siw2_zc, rcu));
	module_put(THIS_MODULE);
}

/* Every reference's drop, TCP's (one per socket buffer) and siw2's own. */
static void zc_complete(struct sk_buff *skb, struct ubuf_info *uarg,
			bool zerocopy_success)
{
	struct siw2_zc *zc = container_of(uarg, struct siw2_zc, ubuf);
	unsigned long flags;

	if (!refcount_dec_and_test(&uarg->refcnt))
		return;
	spin_lock_irqsave(&zc_lock, flags);
	if (zc->s) {
		list_del(&zc->node);
		if (zc->complete)
			siw2_tx_rec_done(zc->s, zc->slot);
	}
	spin_unlock_irqrestore(&zc_lock, flags);
	call_rcu(&zc->rcu, zc_free);
}

SIW2_UBUF_OPS(zc_ops, zc_complete);

/**
 * siw2_zc_new() - a zero-copy object for the message starting on @s
 * @s: the stream, with tx_mutex held
 *
 * Return: the object with siw2's reference, or NULL (the message is then
 * copied as usual).
 */
struct siw2_zc *siw2_zc_new(struct siw2_stream *s)
{
	struct siw2_zc *zc;
	unsigned long flags;

	/* Not while the module unloads: nothing would wait for the object. */
	if (!try_module_get(THIS_MODULE))
		return NULL;
	zc = kzalloc(sizeof(*zc), GFP_KERNEL);
	if (!zc) {
		module_put(THIS_MODULE);
		return NULL;
	}
	siw2_ubuf_init(&zc->ubuf, zc_ops);
	/* As MSG_ZEROCOPY's: forwarding paths need not copy the pages. */
	zc->ubuf.flags = SKBFL_ZEROCOPY_FRAG | SKBFL_DONT_ORPHAN;
	refcount_set(&zc->ubuf.refcnt, 1);
	zc->s = s;
	spin_lock_irqsave(&zc_lock, flags);
	list_add_tail(&zc->node, &s->zc_list);
	spin_unlock_irqrestore(&zc_lock, flags);
	siw2_count(s->sdev, SIW2_CNT_TX_ZC);
	return zc;
}

struct ubuf_info *siw2_zc_ubuf(struct siw2_zc *zc)
{
	return &zc->ubuf;
}

/**
 * siw2_zc_end() - drop siw2's reference on a message's object
 * @zc: the object
 * @slot: the record that completes once TCP let go of the message, or
 *	negative when nothing is to complete (the message was abandoned)
 */
void siw2_zc_end(struct siw2_zc *zc, int slot)
{
	if (slot >= 0) {
		zc->slot = slot;
		zc->complete = true;
	}
	zc_complete(NULL, &zc->ubuf, true);
}

/**
 * siw2_zc_detach() - the stream closes: no completion touches it any more
 * @s: the stream
 *
 * Process context. Objects still referenced by TCP are freed when it lets
 * go of them.
 */
void siw2_zc_detach(struct siw2_stream *s)
{
	struct siw2_zc *zc, *tmp;
	unsigned long flags;

	spin_lock_irqsave(&zc_lock, flags);
	list_for_each_entry_safe(zc, tmp, &s->zc_list, node) {
		list_del(&zc->node);
		zc->s = NULL;
	}
	spin_unlock_irqrestore(&zc_lock, flags);
}
