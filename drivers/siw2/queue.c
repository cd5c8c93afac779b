// SPDX-License-Identifier: GPL-2.0
/*
 * Shared rings (their layout is in <rdma/siw2-abi.h>): allocation, the mmap
 * keys user space maps them by, and index helpers that never trust the side
 * of a ring that user space writes.
 *
 * Memory lifetime. A ring lives in zeroed vmalloc memory. A kernel queue
 * frees it in siw2_queue_uninit(). A user queue hands it to an
 * rdma_user_mmap_entry: uninit only removes the entry, and the core calls
 * siw2_queue_mmap_free() once the entry is removed and no mmap() in
 * progress holds it. Established mappings do not need the entry:
 * vm_insert_page() took a reference on every page, so a process that
 * keeps a mapping after its object died holds on to a dead ring, never to
 * freed memory.
 *
 * Accounting. A user ring may be up to SZ_64M and a user may create
 * thousands of objects, and none of it is pinned user memory that
 * RLIMIT_MEMLOCK would see. User rings are therefore charged to the
 * creator's memory cgroup (__GFP_ACCOUNT), and a full cgroup fails the
 * verb with -ENOMEM rather than waking the OOM killer
 * (__GFP_RETRY_MAYFAIL).
 *
 * Trust. User space may write any byte of a user ring at any time. The
 * kernel keeps its own copy of the index it owns (prod of a CQ, cons of an
 * SQ, RQ or SRQ) and only publishes it; the other index is loaded once per
 * call and must claim at most 'size' outstanding entries, or the queue is
 * broken for good and its owner moves its object to error. Entries are
 * copied out once; callers validate the copy, never the ring.
 *
 * Locking. Every index helper runs under the lock of the queue's owner
 * (q->lock, checked by lockdep), which serialises the kernel's producers
 * and consumers of one queue.
 */
#include <linux/log2.h>
#include <linux/mm.h>
#include <linux/sizes.h>
#include <linux/slab.h>
#include <linux/vmalloc.h>
#include <rdma/uverbs_ioctl.h>

#include "siw2.h"
#include <rdma/siw2-abi.h>

static_assert(sizeof(struct siw2_ring_ctl) <= SIW2_RING_CTL_SIZE);

#define USER_RING_GFP \
	(GFP_KERNEL_ACCOUNT | __GFP_ZERO | __GFP_RETRY_MAYFAIL | __GFP_NOWARN)

/**
 * struct siw2_queue_mmap - a user ring's memory and its mmap key
 * @rdma: the core's entry; its offset is the key
 * @mem: the ring's vmalloc memory, freed by siw2_queue_mmap_free()
 */
struct siw2_queue_mmap {
	struct rdma_user_mmap_entry rdma;
	void *mem;
};

/**
 * siw2_queue_init() - allocate a ring and, for user space, its mmap key
 * @q: the queue, zeroed by this call
 * @udata: the verb's udata for a user object, NULL for a kernel object
 * @size: entries, a power of two
 * @esize: bytes per entry
 * @lock: the owner's lock that protects the indices
 *
 * Return: 0, -EINVAL for a size that is not a power of two or too large,
 * -ENOMEM, or the error of rdma_user_mmap_entry_insert().
 */
int siw2_queue_init(struct siw2_queue *q, struct ib_udata *udata, u32 size,
		    u32 esize, spinlock_t *lock)
{
	struct siw2_ucontext *uctx;
	struct siw2_queue_mmap *m;
	size_t bytes;
	void *mem;
	int ret;

	memset(q, 0, sizeof(*q));
	if (!is_power_of_2(size) || !esize)
		return -EINVAL;
	if (check_mul_overflow((size_t)size, (size_t)esize, &bytes) ||
	    check_add_overflow(bytes, (size_t)SIW2_RING_CTL_SIZE, &bytes) ||
	    bytes > SZ_64M)
		return -EINVAL;
	bytes = PAGE_ALIGN(bytes);

	mem = __vmalloc(bytes, udata ? USER_RING_GFP : GFP_KERNEL | __GFP_ZERO);
	if (!mem)
		return -ENOMEM;

	if (udata) {
		uctx = rdma_udata_to_drv_context(udata, struct siw2_ucontext,
						 base);
		m = kzalloc(sizeof(*m), GFP_KERNEL);
		if (!m) {
			ret = -ENOMEM;
			goto err_mem;
		}
		m->mem = mem;
		/* Page offset 0 stays unused: key 0 means "no queue". */
		ret = rdma_user_mmap_entry_insert_range(&uctx->base, &m->rdma,
							bytes, 1, U32_MAX);
		if (ret)
			goto err_entry;
		q->mmap = m;
	}

	q->ctl = mem;
	q->entries = mem + SIW2_RING_CTL_SIZE;
	q->size = size;
	q->esize = esize;
	q->lock = lock;
	return 0;

err_entry:
	kfree(m);
err_mem:
	vfree(mem);
	return ret;
}

/*
 * The owner guarantees that nothing uses the queue any more. For a user
 * queue the memory goes when the last mapping reference does; until then
 * the process may still poll or post, so the ring says it is gone.
 */
void siw2_queue_uninit(struct siw2_queue *q)
{
	if (!q->ctl)
		return;
	if (q->mmap) {
		/*
		 * siw2-abi.h, "Gone": release orders the flag after the last
		 * store of prod, for a poller that finds the CQ empty. A CQ's
		 * arm or-ed in meanwhile may be lost; it does not matter now.
		 */
		smp_store_release(&q->ctl->flags,
				  READ_ONCE(q->ctl->flags) | SIW2_RING_GONE);
		rdma_user_mmap_entry_remove(&q->mmap->rdma);
	} else {
		vfree(q->ctl);
	}
	q->ctl = NULL;
	q->entries = NULL;
	q->mmap = NULL;
}

/* The offset user space passes to mmap(), 0 for a kernel queue. */
u64 siw2_queue_key(const struct siw2_queue *q)
{
	return q->mmap ? rdma_user_mmap_get_offset(&q->mmap->rdma) : 0;
}

/**
 * siw2_queue_discard() - drop what is published, whatever the indices say
 * @q: a queue the kernel consumes
 *
 * For a QP's move to RESET, which empties its queues: cons takes the
 * producer's index as it stands, so a ring whose indices lied is
 * consistent, and in use, again.
 */
void siw2_queue_discard(struct siw2_queue *q)
{
	lockdep_assert_held(q->lock);
	if (!q->size)
		return;
	q->broken = false;
	siw2_queue_consume(q, READ_ONCE(q->ctl->prod) - q->cons);
}

/*
 * Entries a resize copies between two looks at the old ring's indices;
 * the copy under the lock is at most this long too, unless producers kept
 * outpacing the copy for MIGRATE_ROUNDS rounds.
 */
#define MIGRATE_BATCH	256
#define MIGRATE_ROUNDS	4

/* Copies the entries [@first, @end) to the same indices of @to. */
static void migrate_copy(struct siw2_queue *to, const struct siw2_queue *from,
			 u32 first, u32 end, bool can_sleep)
{
	u32 i;

	for (i = first; i != end; i++) {
		memcpy(to->entries +
		       (size_t)(i & (to->size - 1)) * to->esize,
		       from->entries +
		       (size_t)(i & (from->size - 1)) * from->esize,
		       to->esize);
		if (can_sleep && !((i - first + 1) % MIGRATE_BATCH))
			cond_resched();
	}
}

/* The consumer's index and the kernel's prod, under @from->lock. */
static bool migrate_look(struct siw2_queue *from, u32 *cons, u32 *prod)
{
	unsigned long flags;
	bool ok;

	spin_lock_irqsave(from->lock, flags);
	/* As in siw2_queue_space(): the consumer is done below cons. */
	*cons = smp_load_acquire(&from->ctl->cons);
	*prod = from->prod;
	ok = !from->broken && *prod - *cons <= from->size;
	spin_unlock_irqrestore(from->lock, flags);
	return ok;
}

/**
 * siw2_queue_precopy() - copy the outstanding entries ahead of the switch
 * @to: the new, empty queue, not yet visible to anyone
 * @from: the old queue, still the live one; the kernel produces it
 *
 * A resize is a sleeping verb. The bulk of the copy is done here, without
 * @from->lock, so that siw2_queue_migrate() copies only what was produced
 * since (a CQ's ring may hold 65536 entries, and the lock keeps interrupts
 * off). The caller keeps @from's ring in place meanwhile (for a CQ, its
 * resize mutex) and does not hold its lock.
 *
 * The old ring is read while producers write it. That is safe for every
 * entry the switch needs: a producer writes the slot of an index only
 * once the consumer's index passed the index that last used the slot,
 * and cons only grows, so a slot overwritten during the copy holds an
 * entry the consumer is done with by the time of the switch. Each entry
 * that the switch needs was published before it was looked at (under the
 * lock) and is copied unchanged.
 *
 * Return: the index up to which @to holds @from's entries, to pass to
 * siw2_queue_migrate().
 */
u32 siw2_queue_precopy(struct siw2_queue *to, struct siw2_queue *from)
{
	u32 cons, prod, first, now;
	int round;

	might_sleep();
	if (!migrate_look(from, &cons, &prod))
		return prod;	/* the switch finds out */
	first = cons;
	for (round = 0; round < MIGRATE_ROUNDS; round++) {
		migrate_copy(to, from, first, prod, true);
		if (!migrate_look(from, &cons, &now) ||
		    now - prod <= MIGRATE_BATCH)
			break;
		/* The consumer may have polled past what is copied. */
		first = (s32)(cons - prod) > 0 ? cons : prod;
		prod = now;
	}
	return prod;
}

/**
 * siw2_queue_migrate() - move the outstanding entries to a new ring
 * @to: the new queue, not yet visible to anyone
 * @from: the old queue; the kernel produces it
 * @copied: what siw2_queue_precopy() returned: @to holds the entries
 *	below it that are still outstanding
 *
 * Under @from->lock, which the switch to @to holds too: the entries
 * produced since the precopy move over, to the same free-running indices,
 * and the indices and flags carry over, so a consumer continues with its
 * own index. Used to resize a CQ.
 *
 * A consumer whose index went backwards (user space lying) may find
 * entries below @copied missing from its new ring; copying them here
 * would let it keep interrupts off for a whole ring.
 *
 * Return: 0, -EINVAL if @to is too small, -EIO if @from is broken.
 */
int siw2_queue_migrate(struct siw2_queue *to, struct siw2_queue *from,
		       u32 copied)
{
	u32 cons, n, first;

	lockdep_assert_held(from->lock);
	if (from->broken)
		return -EIO;
	/* As in siw2_queue_space(): the consumer is done below cons. */
	cons = smp_load_acquire(&from->ctl->cons);
	n = from->prod - cons;
	if (n > from->size) {
		from->broken = true;
		return -EIO;
	}
	if (n > to->size)
		return -EINVAL;
	/* Never before cons, so never more than n entries. */
	first = (s32)(cons - copied) > 0 ? cons : copied;
	if ((s32)(from->prod - first) < 0)
		first = from->prod;
	migrate_copy(to, from, first, from->prod, false);
	to->prod = from->prod;
	to->cons = cons;
	to->ctl->prod = to->prod;
	to->ctl->cons = cons;
	to->ctl->flags = READ_ONCE(from->ctl->flags);
	return 0;
}

/*
 * Both indices as last published, for reports only (restrack.c): one of
 * them is the other side's and is not checked. Zeros for an absent queue.
 */
void siw2_queue_indices(const struct siw2_queue *q, u32 *prod, u32 *cons)
{
	*prod = 0;
	*cons = 0;
	if (!q->size)
		return;
	lockdep_assert_held(q->lock);
	*prod = READ_ONCE(q->ctl->prod);
	*cons = READ_ONCE(q->ctl->cons);
}

/* ctl->flags, as the other side last wrote it (a CQ's arm). */
u32 siw2_queue_flags(const struct siw2_queue *q)
{
	return READ_ONCE(q->ctl->flags);
}

/* Sets ctl->flags (an SQ's or RQ's wakeup bit); no ordering implied. */
void siw2_queue_set_flags(struct siw2_queue *q, u32 flags)
{
	WRITE_ONCE(q->ctl->flags, flags);
}

/* ib_device_ops.mmap: maps a ring by the key its create response gave. */
int siw2_queue_mmap(struct ib_ucontext *uctx, struct vm_area_struct *vma)
{
	struct rdma_user_mmap_entry *entry;
	struct siw2_queue_mmap *m;
	unsigned long addr;
	void *mem;
	int ret = 0;

	/* A private mapping would let the user's writes go to a copy. */
	if (!(vma->vm_flags & VM_SHARED))
		return -EINVAL;
	/* A ring is data: it is never executable, now or after mprotect(). */
	if (vma->vm_flags & VM_EXEC)
		return -EPERM;
	/* Checks that the length is exactly the entry's. */
	entry = rdma_user_mmap_entry_get(uctx, vma);
	if (!entry)
		return -EINVAL;
	m = container_of(entry, struct siw2_queue_mmap, rdma);
	siw2_vm_flags_mod(vma, VM_DONTEXPAND | VM_DONTDUMP, VM_MAYEXEC);
	mem = m->mem;
	for (addr = vma->vm_start; addr < vma->vm_end; addr += PAGE_SIZE) {
		ret = vm_insert_page(vma, addr, vmalloc_to_page(mem));
		if (ret)
			break;
		mem += PAGE_SIZE;
	}
	rdma_user_mmap_entry_put(entry);
	return ret;
}

/* ib_device_ops.mmap_free: the entry is removed and unreferenced. */
void siw2_queue_mmap_free(struct rdma_user_mmap_entry *entry)
{
	struct siw2_queue_mmap *m =
		container_of(entry, struct siw2_queue_mmap, rdma);

	vfree(m->mem);
	kfree(m);
}
