// SPDX-License-Identifier: GPL-2.0
/*
 * Memory regions, the STag table, and access to registered memory.
 *
 * STags. An STag is an index into sdev->mrs (stag >> 8) and a key (its low
 * octet). Registration picks a random key; fast registration installs the
 * key the consumer chose with ib_update_fast_reg_key().
 *
 * Lookups run in any context, softirq included (RX placing tagged data):
 * under RCU the index is loaded and a reference taken with
 * refcount_inc_not_zero(); the key, state, protection domain, access
 * rights and bounds are then checked on the held MR under mr->lock,
 * read-held.
 *
 * Invalidation. A holder may keep an MR for a whole message or Read, but
 * each copy from or into its memory runs with mr->lock read-held, and only
 * while the MR still is the STag the holder looked up, valid. Invalidation
 * and fast registration take the lock write-held: once a Local Invalidate
 * or a Send with Invalidate has run, no access under the old STag is in
 * progress and none starts, so the consumer may reuse the memory as soon
 * as it hears of it. Copies are bounded (an FPDU's payload, a staging
 * page), and the lock is taken with BH off, as the invalidating context
 * may be softirq.
 *
 * Lifetime. The STag table holds one reference, each holder another.
 * dereg_mr marks the MR invalid under the lock held for writing (the
 * copy under way finishes, none starts: a holder's next access fails as
 * for an invalidated STag, and the receive path answers with the
 * Terminate of RFC 5040 7.4 / RFC 5041 7.2), removes the STag from the
 * table (no new lookups find it) and drops the table's reference; it
 * fails with -EBUSY, changing nothing, while memory windows are bound to
 * the MR (the core has already taken the MR out of restrack then, so
 * `rdma resource show mr` no longer lists it, though it works). It waits
 * for no holder: a peer can make a holder keep its reference as long as
 * it likes (a partial FPDU, then silence; a Read Request, then a closed
 * window), and a hardware RNIC's dereg does not wait for its peer either.
 * The memory goes with the last reference: dereg_mr frees it at once
 * when it is that, else siw2_mr_release() queues the free (unpinning may
 * sleep, and the last holder may be a softirq). The structure itself
 * outlives an RCU grace period, for lookups that loaded the pointer but
 * lost the race for a reference. Every holder lets go when its stream
 * closes, which destroy_qp waits for, so a device's MRs are all freed,
 * or queued, before its dealloc_driver, which waits for the queue.
 *
 * Memory windows. A window is an STag of its own in the same table, a
 * struct siw2_mr of kind SIW2_MR_MW whose memory is a range of a user MR
 * (its parent) at the parent's own addresses, with rights of its own. A
 * bind is a work request, executed by the send engine in order with the
 * others (siw2_mw_bind()): it takes a reference on the parent and counts
 * itself in the parent's windows, and the parent's dereg_mr fails with
 * -EBUSY while any window is bound to it, as the verbs say. A bound
 * window thus always has a live, pinned, unchanging parent, and an
 * access through the window runs under the window's lock alone, exactly
 * as an access to an MR does under its own. Unbinding, rebinding (type
 * 1), invalidation (type 2) and dealloc_mw change the window under its
 * lock held for writing, so the same promise holds: once they return, no
 * access under the old STag is in progress and none starts. A type 1
 * window serves the QPs of its protection domain; a type 2 window only
 * the QP it was bound through (IB's type 2B), told by the QP's serial,
 * which is never reused. dealloc_mw returns at once, as dereg_mr does.
 *
 * Memory. siw2 registers its device without a DMA device, so the core's
 * DMA mapping is virtual: a "DMA address" in an SGE, a DMA MR or a fast
 * registration page list is a kernel virtual address. A user MR is a list
 * of pinned pages, mapped with kmap_local_page() for each access. An
 * on-demand paging MR (odp.c) pins nothing: an access to a page it has not
 * mapped fails with -EAGAIN before any octet is copied, and the caller
 * faults the range in process context and tries again.
 */
#include <linux/highmem.h>
#include <linux/log2.h>
#include <linux/mm.h>
#include <linux/random.h>
#include <linux/sizes.h>
#include <linux/slab.h>
#include <rdma/ib_umem.h>

#include "siw2.h"
#include "mpa.h"
#include "rdmap.h"

/* Access rights siw2 knows; IB_ACCESS_HUGETLB and RO are only hints. */
/* Frees of MRs whose last holder let go after dereg_mr (see above). */
static struct workqueue_struct *mr_wq;

#define SIW2_ACCESS_RIGHTS (IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_WRITE | \
			    IB_ACCESS_REMOTE_READ | IB_ACCESS_REMOTE_ATOMIC)
#define SIW2_ACCESS_HINTS (IB_ACCESS_HUGETLB | IB_ACCESS_OPTIONAL)
#define SIW2_ACCESS_REMOTE (IB_ACCESS_REMOTE_WRITE | IB_ACCESS_REMOTE_READ | \
			    IB_ACCESS_REMOTE_ATOMIC)

/* IB: remote write or atomic access needs local write access too. */
static bool rights_ok(int access)
{
	if (access & ~(SIW2_ACCESS_RIGHTS | SIW2_ACCESS_HINTS))
		return false;
	if ((access & (IB_ACCESS_REMOTE_WRITE | IB_ACCESS_REMOTE_ATOMIC)) &&
	    !(access & IB_ACCESS_LOCAL_WRITE))
		return false;
	return true;
}

static struct siw2_mr *mr_alloc(struct siw2_device *sdev, struct ib_pd *pd,
				enum siw2_mr_kind kind)
{
	atomic_t *num = kind == SIW2_MR_MW ? &sdev->num_mw : &sdev->num_mr;
	int max = kind == SIW2_MR_MW ? SIW2_MAX_MW : SIW2_MAX_MR;
	struct siw2_mr *mr;

	if (atomic_inc_return(num) > max) {
		atomic_dec(num);
		return ERR_PTR(-ENOMEM);
	}
	mr = kzalloc(sizeof(*mr), GFP_KERNEL);
	if (!mr) {
		atomic_dec(num);
		return ERR_PTR(-ENOMEM);
	}
	mr->sdev = sdev;
	mr->pd = pd;
	mr->kind = kind;
	refcount_set(&mr->ref, 1);
	rwlock_init(&mr->lock);
	return mr;
}

/* Undoes mr_alloc() and whatever the MR collected; process context. */
static void mr_free(struct siw2_mr *mr)
{
	struct siw2_device *sdev = mr->sdev;

	/* An ODP MR's notifier, which uses odp_map, ends here. */
	if (mr->umem)
		ib_umem_release(mr->umem);
	kvfree(mr->odp_map);
	kvfree(mr->pages);
	kfree(mr->fpages);
	atomic_dec(mr->kind == SIW2_MR_MW ? &sdev->num_mw : &sdev->num_mr);
	kfree_rcu(mr, rcu);
}

/* A published MR's last reference is gone: process context. */
static void mr_destroy(struct siw2_mr *mr)
{
	siw2_obj_destroyed(mr->kind == SIW2_MR_MW ? SIW2_OBJ_MW : SIW2_OBJ_MR);
	mr_free(mr);
}

static void mr_free_work(struct work_struct *work)
{
	mr_destroy(container_of(work, struct siw2_mr, free_work));
}

/**
 * siw2_mr_release() - the last reference to a deregistered MR is gone
 * @mr: the MR
 *
 * Any context: the free runs on the MR workqueue.
 */
void siw2_mr_release(struct siw2_mr *mr)
{
	INIT_WORK(&mr->free_work, mr_free_work);
	queue_work(mr_wq, &mr->free_work);
}

/*
 * Gives the MR an STag and makes it findable. The index is reserved
 * first, so that the MR is complete, STag included, when lookups can see
 * it (xa_store() publishes with release semantics).
 */
static int mr_publish(struct siw2_mr *mr)
{
	struct siw2_device *sdev = mr->sdev;
	void *old;
	u32 idx;
	int ret;

	ret = xa_alloc_cyclic(&sdev->mrs, &idx, NULL,
			      XA_LIMIT(1, SIW2_STAG_INDEX_MAX),
			      &sdev->next_stag, GFP_KERNEL);
	if (ret < 0)
		return ret;
	mr->stag = idx << 8 | get_random_u8();
	mr->base.lkey = mr->stag;
	mr->base.rkey = mr->stag;
	old = xa_store(&sdev->mrs, idx, mr, GFP_KERNEL);
	if (xa_is_err(old)) {
		xa_erase(&sdev->mrs, idx);
		return xa_err(old);
	}
	siw2_obj_created(mr->kind == SIW2_MR_MW ? SIW2_OBJ_MW : SIW2_OBJ_MR);
	return 0;
}

struct ib_mr *siw2_mr_reg_user(struct ib_pd *pd, u64 start, u64 len,
			       u64 iova, int access, struct ib_udata *udata)
{
	struct siw2_device *sdev = to_siw2_dev(pd->device);
	struct sg_page_iter piter;
	struct ib_umem *umem;
	struct siw2_mr *mr;
	size_t npages, i;
	int ret;

	/* Only a user MR may carry windows, and ODP ones do not. */
	if (!len || len - 1 > U64_MAX - iova ||
	    !rights_ok(access & ~(IB_ACCESS_MW_BIND | IB_ACCESS_ON_DEMAND)))
		return ERR_PTR(-EINVAL);
	/* Nor is all of the address space one (implicit ODP). */
	if ((access & IB_ACCESS_ON_DEMAND) &&
	    ((access & IB_ACCESS_MW_BIND) || (!start && len == U64_MAX)))
		return ERR_PTR(-EOPNOTSUPP);
	if (udata && udata->inlen &&
	    !ib_is_udata_cleared(udata, 0, udata->inlen))
		return ERR_PTR(-EOPNOTSUPP);

	if (access & IB_ACCESS_ON_DEMAND) {
		mr = mr_alloc(sdev, pd, SIW2_MR_ODP);
		if (IS_ERR(mr))
			return ERR_CAST(mr);
		ret = siw2_odp_init(mr, start, len, access);
		if (ret)
			goto err_free;
		goto publish;
	}

	mr = mr_alloc(sdev, pd, SIW2_MR_USER);
	if (IS_ERR(mr))
		return ERR_CAST(mr);

	/* Pins the pages and charges them to RLIMIT_MEMLOCK. */
	umem = ib_umem_get(pd->device, start, len, access);
	if (IS_ERR(umem)) {
		ret = PTR_ERR(umem);
		goto err_free;
	}
	mr->umem = umem;
	npages = ib_umem_num_pages(umem);
	mr->pages = kvmalloc_array(npages, sizeof(*mr->pages), GFP_KERNEL);
	if (!mr->pages) {
		ret = -ENOMEM;
		goto err_free;
	}
	i = 0;
	for_each_sgtable_page(&umem->sgt_append.sgt, &piter, 0) {
		if (i == npages)
			break;
		mr->pages[i++] = sg_page_iter_page(&piter);
	}
	if (WARN_ON_ONCE(i != npages)) {
		ret = -EFAULT;
		goto err_free;
	}
	mr->npages = npages;
	mr->offset = ib_umem_offset(umem);
publish:
	mr->iova = iova;
	mr->len = len;
	mr->access = access;
	mr->valid = true;

	ret = mr_publish(mr);
	if (ret)
		goto err_free;
	return &mr->base;

err_free:
	mr_free(mr);
	return ERR_PTR(ret);
}

/*
 * All of the kernel's address space: what a kernel consumer's local DMA
 * lkey (the core asks for one per PD) stands for.
 */
struct ib_mr *siw2_mr_get_dma(struct ib_pd *pd, int access)
{
	struct siw2_mr *mr;
	int ret;

	if (!rights_ok(access))
		return ERR_PTR(-EINVAL);
	mr = mr_alloc(to_siw2_dev(pd->device), pd, SIW2_MR_DMA);
	if (IS_ERR(mr))
		return ERR_CAST(mr);
	mr->iova = 0;
	mr->len = U64_MAX;
	mr->access = access;
	mr->valid = true;
	ret = mr_publish(mr);
	if (ret) {
		mr_free(mr);
		return ERR_PTR(ret);
	}
	return &mr->base;
}

/* A fast registration MR; invalid until a REG_MR work request. */
struct ib_mr *siw2_mr_alloc(struct ib_pd *pd, enum ib_mr_type type,
			    u32 max_num_sg)
{
	struct siw2_mr *mr;
	int ret;

	if (type != IB_MR_TYPE_MEM_REG)
		return ERR_PTR(-EOPNOTSUPP);
	if (!max_num_sg || max_num_sg > SIW2_MAX_FAST_REG_PAGES)
		return ERR_PTR(-EINVAL);
	mr = mr_alloc(to_siw2_dev(pd->device), pd, SIW2_MR_FAST);
	if (IS_ERR(mr))
		return ERR_CAST(mr);
	mr->fpages = kcalloc(max_num_sg, sizeof(*mr->fpages), GFP_KERNEL);
	if (!mr->fpages) {
		ret = -ENOMEM;
		goto err_free;
	}
	mr->max_pages = max_num_sg;
	ret = mr_publish(mr);
	if (ret)
		goto err_free;
	return &mr->base;

err_free:
	mr_free(mr);
	return ERR_PTR(ret);
}

static int set_page(struct ib_mr *ibmr, u64 addr)
{
	struct siw2_mr *mr = to_siw2_mr(ibmr);

	if (mr->npages >= mr->max_pages)
		return -ENOMEM;
	mr->fpages[mr->npages++] = addr;
	return 0;
}

/*
 * ib_device_ops.map_mr_sg: the page list of the next fast registration.
 * The offset of the first byte in its page is taken now, as a consumer
 * may change ibmr->iova afterwards (ib_map_mr_sg_zbva()).
 */
int siw2_mr_map_sg(struct ib_mr *ibmr, struct scatterlist *sg, int sg_nents,
		   unsigned int *sg_offset)
{
	struct siw2_mr *mr = to_siw2_mr(ibmr);
	int n;

	if (mr->kind != SIW2_MR_FAST || !is_power_of_2(ibmr->page_size) ||
	    ibmr->page_size < SZ_4K)
		return -EINVAL;
	mr->npages = 0;
	n = ib_sg_to_pages(ibmr, sg, sg_nents, sg_offset, set_page);
	mr->offset = ibmr->iova & (ibmr->page_size - 1);
	return n;
}

int siw2_mr_dereg(struct ib_mr *ibmr, struct ib_udata *udata)
{
	struct siw2_mr *mr = to_siw2_mr(ibmr);

	/* See "Lifetime" above: invalid now, whoever still holds it. */
	write_lock_bh(&mr->lock);
	if (mr->windows) {
		/* The verbs: not while memory windows are bound to it. */
		write_unlock_bh(&mr->lock);
		return -EBUSY;
	}
	mr->valid = false;
	mr->dead = true;
	write_unlock_bh(&mr->lock);
	xa_erase(&mr->sdev->mrs, ibmr->lkey >> 8);
	if (refcount_dec_and_test(&mr->ref))
		mr_destroy(mr);
	return 0;
}

/**
 * siw2_mr_flush() - wait for the frees that siw2_mr_release() queued
 *
 * Process context; for a device's dealloc_driver, whose MRs must all be
 * gone before the device is.
 */
void siw2_mr_flush(void)
{
	flush_workqueue(mr_wq);
}

int siw2_mr_init(void)
{
	mr_wq = alloc_workqueue("siw2_mr", WQ_UNBOUND, 0);
	return mr_wq ? 0 : -ENOMEM;
}

void siw2_mr_uninit(void)
{
	destroy_workqueue(mr_wq);
}

/* Takes a reference on the MR at @stag's index, whatever its key. */
static __always_inline struct siw2_mr *
mr_get(struct siw2_device *sdev, u32 stag)
{
	struct siw2_mr *mr;

	rcu_read_lock();
	mr = xa_load(&sdev->mrs, stag >> 8);
	if (mr && !refcount_inc_not_zero(&mr->ref))
		mr = NULL;
	rcu_read_unlock();
	return mr;
}

/* In the order siw2_rdmap_check_stag() checks a tagged access. */
static enum siw2_mr_fault check_locked(struct siw2_mr *mr, u32 stag,
				       struct ib_pd *pd, int access, u64 addr,
				       u64 len)
{
	lockdep_assert_held(&mr->lock);
	if (mr->stag != stag)
		return SIW2_MR_BAD_STAG;
	if (!mr->valid)
		return SIW2_MR_INVALID;
	if (mr->pd != pd)
		return SIW2_MR_BAD_PD;
	if ((mr->access & access) != access)
		return SIW2_MR_ACCESS;
	if (len && len - 1 > U64_MAX - addr)
		return SIW2_MR_WRAP;
	if (!siw2_range_ok(addr, len, mr->iova, mr->len))
		return SIW2_MR_BOUNDS;
	return SIW2_MR_OK;
}

/**
 * siw2_mr_lookup() - find and hold the MR an access uses
 * @sdev: the device
 * @stag: the STag (lkey or rkey)
 * @pd: the protection domain of the QP making the access
 * @access: IB_ACCESS_* rights needed; 0 for a local read
 * @addr: first address accessed
 * @len: octets accessed
 * @fault: why not, when NULL is returned
 *
 * Any context.
 *
 * Return: the MR, held (siw2_mr_put() when done), or NULL.
 */
struct siw2_mr *siw2_mr_lookup(struct siw2_device *sdev, u32 stag,
			       struct ib_pd *pd, int access, u64 addr, u64 len,
			       enum siw2_mr_fault *fault)
{
	struct siw2_mr *mr = mr_get(sdev, stag);

	if (!mr) {
		*fault = SIW2_MR_BAD_STAG;
		return NULL;
	}
	/* A window grants remote access only (siw2_mr_lookup_view()). */
	if (mr->kind == SIW2_MR_MW) {
		*fault = SIW2_MR_BAD_STAG;
		siw2_mr_put(mr);
		return NULL;
	}
	read_lock_bh(&mr->lock);
	*fault = check_locked(mr, stag, pd, access, addr, len);
	read_unlock_bh(&mr->lock);
	if (*fault) {
		siw2_mr_put(mr);
		return NULL;
	}
	return mr;
}

/**
 * siw2_mr_lookup_view() - hold an MR and describe it for rdmap.h/ddp.h
 * @sdev: the device
 * @stag: the STag of a tagged access
 * @qp: the QP the access arrived on
 * @access: IB_ACCESS_* rights the access needs
 * @view: filled for siw2_rdmap_check_stag() or siw2_ddp_check_tagged(),
 *	which order the checks and name the Terminate cause
 *
 * Any context.
 *
 * Return: the MR, held, when @view->valid; NULL otherwise.
 */
struct siw2_mr *siw2_mr_lookup_view(struct siw2_device *sdev, u32 stag,
				    const struct siw2_qp *qp, int access,
				    struct siw2_stag_view *view)
{
	struct siw2_mr *mr = mr_get(sdev, stag);

	memset(view, 0, sizeof(*view));
	if (!mr)
		return NULL;
	read_lock_bh(&mr->lock);
	view->valid = mr->stag == stag && mr->valid;
	if (mr->kind == SIW2_MR_MW && mr->mw_type == IB_MW_TYPE_2)
		view->assoc = mr->qp_serial == READ_ONCE(qp->serial);
	else
		view->assoc = mr->pd == qp->base.pd;
	view->access = (mr->access & access) == access;
	view->base = mr->iova;
	view->len = mr->len;
	read_unlock_bh(&mr->lock);
	if (!view->valid) {
		siw2_mr_put(mr);
		return NULL;
	}
	return mr;
}

/* A window lets go of the MR it was bound to; any context. */
static void window_release(struct siw2_mr *parent)
{
	write_lock_bh(&parent->lock);
	parent->windows--;
	write_unlock_bh(&parent->lock);
	siw2_mr_put(parent);
}

/*
 * Unbinds a window whose lock is held for writing; returns the MR it was
 * bound to, for window_release() once the lock is dropped, or NULL.
 */
static struct siw2_mr *window_unbind_locked(struct siw2_mr *mw)
{
	struct siw2_mr *parent = mw->parent;

	lockdep_assert_held_write(&mw->lock);
	mw->parent = NULL;
	mw->valid = false;
	return parent;
}

/*
 * Invalidates a window whose lock is held for writing: only a type 2
 * one, and by a peer only over the QP it was bound through.
 */
static enum siw2_mr_fault window_inval_locked(struct siw2_mr *mw,
					      const struct siw2_qp *qp,
					      bool remote,
					      struct siw2_mr **parent)
{
	lockdep_assert_held_write(&mw->lock);
	if (mw->mw_type != IB_MW_TYPE_2)
		return SIW2_MR_STATE;
	if (remote && mw->qp_serial != READ_ONCE(qp->serial))
		return SIW2_MR_BAD_QP;
	*parent = window_unbind_locked(mw);
	return SIW2_MR_OK;
}

/**
 * siw2_mr_invalidate() - Local Invalidate, or a Send with Invalidate
 * @sdev: the device
 * @stag: the STag to invalidate
 * @qp: the QP the request came from, or arrived on
 * @remote: the peer asked; a local-only STag (no remote access rights)
 *	cannot be invalidated remotely (see siw2_rdmap_check_inval())
 *
 * Fast registration MRs and type 2 windows are invalidated (the verbs: a
 * type 1 window cannot be); an invalid one may be invalidated again. A
 * peer invalidates a type 2 window only over the QP it was last bound
 * through, and an MR only when it grants remote access. Any context.
 *
 * Return: SIW2_MR_OK, or why not.
 */
enum siw2_mr_fault siw2_mr_invalidate(struct siw2_device *sdev, u32 stag,
				      const struct siw2_qp *qp, bool remote)
{
	struct siw2_mr *mr = mr_get(sdev, stag);
	enum siw2_mr_fault fault = SIW2_MR_OK;
	struct siw2_mr *parent = NULL;

	if (!mr)
		return SIW2_MR_BAD_STAG;
	/* Waits for the copies under @stag that are running (see above). */
	write_lock_bh(&mr->lock);
	if (mr->stag != stag)
		fault = SIW2_MR_BAD_STAG;
	else if (mr->pd != qp->base.pd)
		fault = SIW2_MR_BAD_PD;
	else if (mr->kind == SIW2_MR_MW)
		fault = window_inval_locked(mr, qp, remote, &parent);
	else if (mr->kind != SIW2_MR_FAST)
		fault = SIW2_MR_STATE;
	else if (remote && !(mr->access & SIW2_ACCESS_REMOTE))
		fault = SIW2_MR_ACCESS;
	else
		mr->valid = false;
	write_unlock_bh(&mr->lock);
	if (parent)
		window_release(parent);
	siw2_mr_put(mr);
	return fault;
}

/* ---- memory windows (see "Memory windows" at the top) ---- */

static struct siw2_mr *to_window(struct ib_mw *ibmw)
{
	return container_of(ibmw, struct siw2_mw, base)->win;
}

/* ib_device_ops.alloc_mw: a window of either type, bound to nothing. */
int siw2_mw_alloc(struct ib_mw *ibmw, struct ib_udata *udata)
{
	struct siw2_device *sdev = to_siw2_dev(ibmw->device);
	struct siw2_mr *win;
	int ret;

	if (ibmw->type != IB_MW_TYPE_1 && ibmw->type != IB_MW_TYPE_2)
		return -EINVAL;
	if (udata && udata->inlen &&
	    !ib_is_udata_cleared(udata, 0, udata->inlen))
		return -EOPNOTSUPP;
	win = mr_alloc(sdev, ibmw->pd, SIW2_MR_MW);
	if (IS_ERR(win))
		return PTR_ERR(win);
	win->mw_type = ibmw->type;
	ret = mr_publish(win);
	if (ret) {
		mr_free(win);
		return ret;
	}
	container_of(ibmw, struct siw2_mw, base)->win = win;
	ibmw->rkey = win->stag;
	return 0;
}

/*
 * ib_device_ops.dealloc_mw: as dereg_mr, the STag is dead at once and
 * the window's structure goes with its last holder. The core frees
 * @ibmw when this returns.
 */
int siw2_mw_dealloc(struct ib_mw *ibmw)
{
	struct siw2_mr *win = to_window(ibmw);
	struct siw2_mr *parent;

	write_lock_bh(&win->lock);
	win->dead = true;
	parent = window_unbind_locked(win);
	write_unlock_bh(&win->lock);
	xa_erase(&win->sdev->mrs, ibmw->rkey >> 8);
	if (parent)
		window_release(parent);
	if (refcount_dec_and_test(&win->ref))
		mr_destroy(win);
	return 0;
}

/*
 * The verbs' rule for a bind's rights: remote rights only (no zero-based
 * window), and remote write or atomic access only onto an MR the owner
 * may write locally.
 */
static bool window_rights_ok(u32 access, int mr_access)
{
	if (access & ~SIW2_ACCESS_REMOTE)
		return false;
	if ((access & (IB_ACCESS_REMOTE_WRITE | IB_ACCESS_REMOTE_ATOMIC)) &&
	    !(mr_access & IB_ACCESS_LOCAL_WRITE))
		return false;
	return true;
}

/*
 * The MR a bind names, held and counted in its windows when the bind may
 * use it; NULL and @fault otherwise.
 */
static struct siw2_mr *bind_parent(struct siw2_device *sdev, struct ib_pd *pd,
				   const struct siw2_bind_mw *b,
				   enum siw2_mr_fault *fault)
{
	struct siw2_mr *mr = mr_get(sdev, b->mr_lkey);

	if (!mr) {
		*fault = SIW2_MR_BAD_STAG;
		return NULL;
	}
	write_lock_bh(&mr->lock);
	if (mr->kind != SIW2_MR_USER || mr->stag != b->mr_lkey ||
	    !mr->valid || mr->dead)
		*fault = SIW2_MR_BAD_STAG;
	else if (mr->pd != pd)
		*fault = SIW2_MR_BAD_PD;
	else if (!(mr->access & IB_ACCESS_MW_BIND) ||
		 !window_rights_ok(b->access, mr->access))
		*fault = SIW2_MR_ACCESS;
	else if (b->length - 1 > U64_MAX - b->addr)
		*fault = SIW2_MR_WRAP;
	else if (!siw2_range_ok(b->addr, b->length, mr->iova, mr->len))
		*fault = SIW2_MR_BOUNDS;
	else
		*fault = SIW2_MR_OK;
	if (!*fault)
		mr->windows++;
	write_unlock_bh(&mr->lock);
	if (*fault) {
		siw2_mr_put(mr);
		return NULL;
	}
	return mr;
}

/*
 * May a bind to @stag start on this window? Not once deallocated; a type
 * 2 window only while unbound; and never under the STag it has now, so
 * that the old STag of a window bound elsewhere cannot live on.
 */
static enum siw2_mr_fault window_bind_state(const struct siw2_mr *win,
					    u32 stag)
{
	lockdep_assert_held(&win->lock);
	if (win->dead || (win->mw_type == IB_MW_TYPE_2 && win->valid) ||
	    (win->valid && win->stag == stag))
		return SIW2_MR_STATE;
	return SIW2_MR_OK;
}

/**
 * siw2_mw_bind() - execute a SIW2_OP_BIND_MW work request
 * @sdev: the device
 * @qp: the QP it was posted to
 * @stag: the window's STag once bound: its index and a new key
 * @b: what to bind (siw2-abi.h, struct siw2_bind_mw)
 *
 * A type 1 window may be bound again, which unbinds it from where it
 * was, and a length of 0 unbinds it; a type 2 window is bound only while
 * unbound, with a length, and serves @qp alone. Any context.
 *
 * Return: SIW2_MR_OK, or why not.
 */
enum siw2_mr_fault siw2_mw_bind(struct siw2_device *sdev,
				const struct siw2_qp *qp, u32 stag,
				const struct siw2_bind_mw *b)
{
	struct ib_pd *pd = qp->base.pd;
	struct siw2_mr *win = mr_get(sdev, stag);
	struct siw2_mr *parent = NULL, *old;
	enum siw2_mr_fault fault = SIW2_MR_OK;

	if (!win)
		return SIW2_MR_BAD_STAG;
	/* @kind, @mw_type and @pd never change. */
	if (win->kind != SIW2_MR_MW) {
		fault = SIW2_MR_BAD_STAG;
		goto out;
	}
	if (win->pd != pd) {
		fault = SIW2_MR_BAD_PD;
		goto out;
	}
	/*
	 * A bind that will fail on the window's state fails before it
	 * counts itself in the MR (a dereg_mr meanwhile would see -EBUSY);
	 * the check is made again below, under the lock held for writing.
	 */
	read_lock_bh(&win->lock);
	fault = window_bind_state(win, stag);
	read_unlock_bh(&win->lock);
	if (fault)
		goto out;
	if (b->length) {
		parent = bind_parent(sdev, pd, b, &fault);
		if (!parent)
			goto out;
	} else if (win->mw_type != IB_MW_TYPE_1) {
		fault = SIW2_MR_STATE;
		goto out;
	}

	write_lock_bh(&win->lock);
	fault = window_bind_state(win, stag);
	if (fault) {
		old = parent;
	} else {
		old = window_unbind_locked(win);
		win->parent = parent;
		win->stag = stag;
		win->iova = b->addr;
		win->len = b->length;
		win->access = b->access;
		win->qp_serial = READ_ONCE(qp->serial);
		win->valid = !!parent;
	}
	write_unlock_bh(&win->lock);
	if (old)
		window_release(old);
out:
	siw2_mr_put(win);
	return fault;
}

/**
 * siw2_mr_fast_reg() - execute a REG_MR work request
 * @sdev: the device
 * @stag: the new STag (the MR's index, the consumer's key)
 * @pd: the protection domain of the QP
 * @access: IB_ACCESS_* rights to grant
 *
 * The region is what the last map_mr_sg() described, at the MR's iova
 * and length as they are now. Any context.
 *
 * Return: SIW2_MR_OK, or why not (SIW2_MR_STATE: not a fast registration
 * MR, still valid, or no page list was mapped).
 */
enum siw2_mr_fault siw2_mr_fast_reg(struct siw2_device *sdev, u32 stag,
				    struct ib_pd *pd, int access)
{
	struct siw2_mr *mr = mr_get(sdev, stag);
	enum siw2_mr_fault fault = SIW2_MR_OK;

	if (!mr)
		return SIW2_MR_BAD_STAG;
	write_lock_bh(&mr->lock);
	if (mr->kind != SIW2_MR_FAST || mr->valid || !mr->npages ||
	    !is_power_of_2(mr->base.page_size)) {
		/* Not a fast registration MR, still valid, or never mapped. */
		fault = SIW2_MR_STATE;
	} else if (mr->pd != pd) {
		fault = SIW2_MR_BAD_PD;
	} else if (!rights_ok(access)) {
		fault = SIW2_MR_ACCESS;
	} else {
		mr->stag = stag;
		mr->access = access;
		mr->iova = mr->base.iova;
		mr->len = mr->base.length;
		mr->page_shift = ilog2(mr->base.page_size);
		mr->valid = true;
	}
	write_unlock_bh(&mr->lock);
	siw2_mr_put(mr);
	return fault;
}

/* Where one address of a held MR lives. */
struct mr_loc {
	void *va;		/* kernel address (DMA, fast registration) */
	struct page *page;	/* or a page and an offset in it (user) */
	unsigned int off;
	unsigned int len;	/* octets to the end of the page */
};

/*
 * Locates @addr, which the caller checked is inside the region. Kernel
 * addresses come from kernel consumers (or a peer through an unsafe
 * global rkey) and are checked to be mapped memory all the same.
 */
static int locate(struct siw2_mr *mr, u64 addr, struct mr_loc *l)
{
	unsigned long va;
	u64 x, idx, ps;

	/* A bound window's memory is its parent's, at the same addresses. */
	if (mr->kind == SIW2_MR_MW)
		mr = mr->parent;
	x = addr - mr->iova;
	switch (mr->kind) {
	case SIW2_MR_USER:
		x += mr->offset;
		idx = x >> PAGE_SHIFT;
		if (idx >= mr->npages)
			return -EFAULT;
		l->va = NULL;
		l->page = mr->pages[idx];
		l->off = x & ~PAGE_MASK;
		l->len = PAGE_SIZE - l->off;
		return 0;
	case SIW2_MR_ODP:
		/* The caller checked the range is mapped (access_ok_locked). */
		l->va = siw2_odp_va_locked(mr, addr);
		if (!l->va)
			return -EAGAIN;
		l->page = NULL;
		l->off = offset_in_page(l->va);
		l->len = PAGE_SIZE - l->off;
		return 0;
	case SIW2_MR_DMA:
		va = addr;
		break;
	case SIW2_MR_FAST:
		ps = 1ULL << mr->page_shift;
		x += mr->offset;
		idx = x >> mr->page_shift;
		if (idx >= mr->npages || idx >= mr->max_pages)
			return -EFAULT;
		va = mr->fpages[idx] + (x & (ps - 1));
		break;
	default:
		return -EFAULT;
	}
	if (is_vmalloc_addr((void *)va))
		l->page = vmalloc_to_page((void *)va);
	else if (virt_addr_valid((void *)va))
		l->page = virt_to_page((void *)va);
	else
		return -EFAULT;
	if (!l->page)
		return -EFAULT;
	l->va = (void *)va;
	l->off = offset_in_page(va);
	l->len = PAGE_SIZE - l->off;
	return 0;
}

/*
 * May @mr's memory be accessed as @stag at [@addr, @addr + @len)? The
 * lock is held, read, across the access (see the top of this file).
 */
static int access_ok_locked(struct siw2_mr *mr, u32 stag, u64 addr, u64 len,
			    bool write)
{
	lockdep_assert_held(&mr->lock);
	if (mr->stag != stag || !mr->valid)
		return -EACCES;
	if (len - 1 > U64_MAX - addr ||
	    !siw2_range_ok(addr, len, mr->iova, mr->len))
		return -ERANGE;
	/* All or nothing: an ODP copy never stops half way. */
	if (mr->kind == SIW2_MR_ODP &&
	    !siw2_odp_present_locked(mr, addr, len, write))
		return -EAGAIN;
	return 0;
}

static int copy_to_locked(struct siw2_mr *mr, u64 addr, const void *src,
			  u64 len, u32 *crc)
{
	struct mr_loc l;
	unsigned int n;
	void *dst;
	int ret;

	while (len) {
		ret = locate(mr, addr, &l);
		if (ret)
			return ret;
		n = min_t(u64, len, l.len);
		dst = l.va ? l.va : kmap_local_page(l.page) + l.off;
		if (crc)
			*crc = siw2_mpa_crc_copy(*crc, dst, src, n);
		else
			siw2_copy(dst, src, n);
		if (!l.va)
			kunmap_local(dst);
		addr += n;
		src += n;
		len -= n;
	}
	return 0;
}

/**
 * siw2_mr_copy_to_crc() - write into a held MR, folding a CRC on the way
 * @mr: the MR, found by siw2_mr_lookup() with the rights the write needs
 * @stag: the STag it was found by
 * @addr: first address written
 * @src: the data
 * @len: octets
 * @crc: NULL for a plain copy, else a running CRC32c continued over @src
 *	 in the same pass (siw2_mpa_crc_copy()); undefined after an error
 *
 * Any context.
 *
 * Return: 0, -EACCES if @stag was invalidated meanwhile, -ERANGE outside
 * the region, -EFAULT for unmapped memory, -EAGAIN (nothing copied) if a
 * page of an ODP MR is not mapped: siw2_mr_fault() it, then try again.
 */
int siw2_mr_copy_to_crc(struct siw2_mr *mr, u32 stag, u64 addr,
			const void *src, u64 len, u32 *crc)
{
	int ret;

	if (!len)
		return 0;
	read_lock_bh(&mr->lock);
	ret = access_ok_locked(mr, stag, addr, len, true);
	if (!ret)
		ret = copy_to_locked(mr, addr, src, len, crc);
	read_unlock_bh(&mr->lock);
	return ret;
}

/**
 * siw2_mr_copy_to() - write into a held MR
 * @mr: the MR, found by siw2_mr_lookup() with the rights the write needs
 * @stag: the STag it was found by
 * @addr: first address written
 * @src: the data
 * @len: octets
 *
 * Any context.
 *
 * Return: as siw2_mr_copy_to_crc().
 */
int siw2_mr_copy_to(struct siw2_mr *mr, u32 stag, u64 addr, const void *src,
		    u64 len)
{
	return siw2_mr_copy_to_crc(mr, stag, addr, src, len, NULL);
}

static int copy_from_locked(struct siw2_mr *mr, u64 addr, void *dst,
			    u64 len)
{
	struct mr_loc l;
	unsigned int n;
	void *src;
	int ret;

	while (len) {
		ret = locate(mr, addr, &l);
		if (ret)
			return ret;
		n = min_t(u64, len, l.len);
		if (l.va) {
			siw2_copy(dst, l.va, n);
		} else {
			src = kmap_local_page(l.page);
			siw2_copy(dst, src + l.off, n);
			kunmap_local(src);
		}
		addr += n;
		dst += n;
		len -= n;
	}
	return 0;
}

/**
 * siw2_mr_copy_from() - read from a held MR
 * @mr: the MR, found by siw2_mr_lookup() with the rights the read needs
 * @stag: the STag it was found by
 * @addr: first address read
 * @dst: where to
 * @len: octets
 *
 * Any context.
 *
 * Return: as siw2_mr_copy_to_crc().
 */
int siw2_mr_copy_from(struct siw2_mr *mr, u32 stag, u64 addr, void *dst,
		      u64 len)
{
	int ret;

	if (!len)
		return 0;
	read_lock_bh(&mr->lock);
	ret = access_ok_locked(mr, stag, addr, len, false);
	if (!ret)
		ret = copy_from_locked(mr, addr, dst, len);
	read_unlock_bh(&mr->lock);
	return ret;
}

/*
 * May @mr's STag end while a holder keeps it (siw2_mr_invalidate(), or a
 * window's unbind)? Its pages may then be reused at once, so they are
 * never lent out.
 */
bool siw2_mr_may_invalidate(const struct siw2_mr *mr)
{
	/* An ODP MR's pages go whenever the MMU notifier says so. */
	return mr->kind == SIW2_MR_FAST || mr->kind == SIW2_MR_MW ||
	       mr->kind == SIW2_MR_ODP;
}

/* A user MR: its pages are pinned user memory, safe to lend to TCP. */
bool siw2_mr_user(const struct siw2_mr *mr)
{
	return mr->kind == SIW2_MR_USER;
}

/**
 * siw2_mr_page() - the page under an address, for transmit by reference
 * @mr: a held MR that cannot be invalidated (!siw2_mr_may_invalidate())
 * @stag: the STag it was found by
 * @addr: the address, inside the region
 * @page: the page holding it
 * @offset: @addr's offset in @page
 * @len: octets from @addr to the end of @page or of the region
 *
 * The page stays valid while the MR is held. Any context.
 *
 * Return: as siw2_mr_copy_to_crc().
 */
int siw2_mr_page(struct siw2_mr *mr, u32 stag, u64 addr, struct page **page,
		 unsigned int *offset, unsigned int *len)
{
	struct mr_loc l;
	int ret;

	if (WARN_ON_ONCE(siw2_mr_may_invalidate(mr)))
		return -EFAULT;
	read_lock_bh(&mr->lock);
	ret = access_ok_locked(mr, stag, addr, 1, false);
	if (!ret)
		ret = locate(mr, addr, &l);
	if (!ret) {
		*page = l.page;
		*offset = l.off;
		*len = min_t(u64, mr->len - (addr - mr->iova), l.len);
	}
	read_unlock_bh(&mr->lock);
	return ret;
}

/**
 * siw2_mr_fault() - map what an access to an ODP MR found unmapped
 * @mr: a held MR
 * @addr: first address of the access
 * @len: octets; a fault may map more than the access needs, up to the
 *	region's end
 * @write: the access writes
 *
 * Process context.
 *
 * Return: 0, -EFAULT if @mr is not an ODP MR or the process has no
 * mapping there, or another negative errno (siw2_odp_fault()).
 */
int siw2_mr_fault(struct siw2_mr *mr, u64 addr, u64 len, bool write)
{
	if (mr->kind != SIW2_MR_ODP)
		return -EFAULT;
	return siw2_odp_fault(mr, addr, len, write);
}

/**
 * siw2_mr_copy_from_wait() - read from a held MR, faulting ODP pages in
 * @mr: the MR, found by siw2_mr_lookup() with the rights the read needs
 * @stag: the STag it was found by
 * @addr: first address read
 * @dst: where to
 * @len: octets
 * @ahead: octets from @addr a fault should map (at least @len)
 *
 * A page unmapped again between the fault and the copy is faulted once
 * more, a bounded number of times. Process context.
 *
 * Return: as siw2_mr_copy_to_crc(), with -EFAULT for memory the process
 * has no mapping for, never -EAGAIN.
 */
int siw2_mr_copy_from_wait(struct siw2_mr *mr, u32 stag, u64 addr, void *dst,
			   u64 len, u64 ahead)
{
	int ret, tries = SIW2_ODP_TRIES;

	while ((ret = siw2_mr_copy_from(mr, stag, addr, dst, len)) == -EAGAIN) {
		if (!tries--)
			return -EFAULT;
		ret = siw2_mr_fault(mr, addr, max(len, ahead), false);
		if (ret && ret != -EBUSY)
			return -EFAULT;
	}
	return ret;
}

/**
 * siw2_mr_present() - may an access to a held MR go ahead without a fault?
 * @mr: the MR
 * @stag: the STag it was found by
 * @addr: first address
 * @len: octets
 * @write: the access writes
 *
 * Any context. True for every MR that is not an ODP MR, and for an access
 * that fails for another reason (an invalidated STag, outside the region):
 * the copy then says why.
 *
 * Return: false if a page of the range is not mapped now.
 */
bool siw2_mr_present(struct siw2_mr *mr, u32 stag, u64 addr, u64 len,
		     bool write)
{
	bool ret;

	if (mr->kind != SIW2_MR_ODP)
		return true;
	read_lock_bh(&mr->lock);
	ret = access_ok_locked(mr, stag, addr, len, write) != -EAGAIN;
	read_unlock_bh(&mr->lock);
	return ret;
}
