// SPDX-License-Identifier: GPL-2.0
/*
 * On-demand paging: user MRs registered with IB_ACCESS_ON_DEMAND, whose
 * pages are neither pinned nor charged to RLIMIT_MEMLOCK, but found when
 * an access needs them.
 *
 * The core's ib_umem_odp keeps the region's mapping: an MMU interval
 * notifier, and for each page a "DMA address" with a read and a write bit,
 * set by ib_umem_odp_map_dma_and_lock() and cleared by
 * ib_umem_odp_unmap_dma_pages(), both under its umem_mutex. siw2's device
 * has no DMA device, so that address is the page's kernel address.
 *
 * Accesses (mr.c) run in any context, softirq included, under mr->lock
 * read-held, and may not sleep: they read not the core's list but the
 * MR's own copy of it, mr->odp_map, which changes only under mr->lock
 * held for writing. A fault (siw2_odp_fault(), process context) maps a
 * range with the core and copies the range's entries under the lock; the
 * notifier clears the entries of the range it invalidates under the lock,
 * before the core unmaps them and the mm frees or moves the pages. Once
 * the notifier returns, no access to the range is in progress and none
 * starts: the next one finds its entry clear and fails with -EAGAIN, and
 * its caller faults, if it may sleep (the send engine, advise_mr), or
 * hands the access to process context (the receive engine, rx.c
 * "Faults").
 *
 * Lock order: umem_mutex, then mr->lock. Faults take the mm's mmap_lock
 * before either, inside the core.
 *
 * Lifetime: the notifier may run from ib_umem_odp_get() until
 * ib_umem_odp_release() (mr_free()), which removes it and waits for a run
 * in progress; it learns of the MR through umem_odp->private, set under
 * umem_mutex once mr->odp_map exists, and does nothing before that (no
 * page can be mapped yet).
 */
#include <linux/memcontrol.h>
#include <linux/mm.h>
#include <linux/sched/mm.h>
#include <linux/sched/signal.h>
#include <linux/sizes.h>
#include <rdma/ib_umem_odp.h>

#include "siw2.h"
#include "rdmap.h"

/* A fault maps at most this much at a time (the umem_mutex's hold). */
#define ODP_FAULT_CHUNK SZ_2M
/* The notifier clears at most this many entries under the lock at once. */
#define ODP_CLEAR_CHUNK 4096UL

static struct ib_umem_odp *mr_odp(struct siw2_mr *mr)
{
	return to_ib_umem_odp(mr->umem);
}

static bool odp_invalidate(struct mmu_interval_notifier *mni,
			   const struct mmu_notifier_range *range,
			   unsigned long cur_seq)
{
	struct ib_umem_odp *odp = container_of(mni, struct ib_umem_odp,
					       notifier);
	unsigned long start, end, first, last, n;
	struct siw2_mr *mr;

	/* The OOM reaper's call: try later, as other drivers say. */
	if (!mmu_notifier_range_blockable(range))
		return false;
	mutex_lock(&odp->umem_mutex);
	mmu_interval_set_seq(mni, cur_seq);
	start = max(range->start, ib_umem_start(odp));
	end = min(range->end, ib_umem_end(odp));
	mr = odp->private;
	if (mr && start < end) {
		first = (start - ib_umem_start(odp)) >> PAGE_SHIFT;
		last = (end - 1 - ib_umem_start(odp)) >> PAGE_SHIFT;
		/*
		 * In pieces, so that a large range keeps bottom halves off
		 * only briefly: the pages stay until this returns.
		 */
		while (first <= last) {
			n = min(last - first + 1, ODP_CLEAR_CHUNK);
			write_lock_bh(&mr->lock);
			memset(&mr->odp_map[first], 0,
			       n * sizeof(*mr->odp_map));
			write_unlock_bh(&mr->lock);
			first += n;
		}
	}
	if (start < end)
		ib_umem_odp_unmap_dma_pages(odp, start, end);
	mutex_unlock(&odp->umem_mutex);
	return true;
}

static const struct mmu_interval_notifier_ops odp_ops = {
	.invalidate = odp_invalidate,
};

/**
 * siw2_odp_init() - make @mr an on-demand paging MR of the caller's memory
 * @mr: a new MR of kind SIW2_MR_ODP
 * @start: first user address
 * @len: octets
 * @access: IB_ACCESS_* asked for, IB_ACCESS_ON_DEMAND among them
 *
 * Nothing is mapped yet. On error the caller's mr_free() undoes what was
 * done. Process context, the registering process's.
 *
 * Return: 0 or a negative errno.
 */
int siw2_odp_init(struct siw2_mr *mr, u64 start, u64 len, int access)
{
	struct ib_umem_odp *odp;
	size_t n;

	/* Pages of PAGE_SIZE only: IB_ACCESS_HUGETLB is a hint. */
	odp = ib_umem_odp_get(mr->pd->device, start, len,
			      access & ~IB_ACCESS_HUGETLB, &odp_ops);
	if (IS_ERR(odp))
		return PTR_ERR(odp);
	mr->umem = &odp->umem;
	n = ib_umem_odp_num_pages(odp);
	if (n > U32_MAX)
		return -ENOMEM;
	/* The process's memory, as the pinned pages of other MRs are. */
	mr->odp_map = kvcalloc(n, sizeof(*mr->odp_map), GFP_KERNEL_ACCOUNT);
	if (!mr->odp_map)
		return -ENOMEM;
	mr->npages = n;
	mr->offset = start - ib_umem_start(odp);
	mutex_lock(&odp->umem_mutex);
	odp->private = mr;
	mutex_unlock(&odp->umem_mutex);
	return 0;
}

/*
 * Maps [@uva, @uva + @len), at most one chunk, under no lock: faulting
 * pages in if @fault, else taking what the process has mapped already.
 */
static int fault_chunk(struct siw2_mr *mr, u64 uva, u64 len, bool write,
		       bool fault)
{
	struct ib_umem_odp *odp = mr_odp(mr);
	u64 mask = ODP_READ_ALLOWED_BIT | (write ? ODP_WRITE_ALLOWED_BIT : 0);
	unsigned long first, i;
	int n;

	n = ib_umem_odp_map_dma_and_lock(odp, uva, len, mask, fault);
	if (n < 0)
		return n;
	/* The core's entries are stable under umem_mutex, held now. */
	first = (ALIGN_DOWN(uva, PAGE_SIZE) - ib_umem_start(odp)) >> PAGE_SHIFT;
	write_lock_bh(&mr->lock);
	for (i = first; i < first + n && i < mr->npages; i++)
		mr->odp_map[i] = odp->dma_list[i];
	write_unlock_bh(&mr->lock);
	mutex_unlock(&odp->umem_mutex);
	return 0;
}

/* Maps a range for siw2_odp_fault() or odp_sync(). */
static int odp_map(struct siw2_mr *mr, u64 addr, u64 len, bool write,
		   bool fault)
{
	struct mem_cgroup *memcg, *old;
	u64 uva, end, n;
	int ret;

	might_sleep();
	if (WARN_ON_ONCE(mr->kind != SIW2_MR_ODP))
		return -EFAULT;
	if (addr < mr->iova || addr - mr->iova >= mr->len)
		return -EFAULT;
	len = min(len, mr->len - (addr - mr->iova));
	uva = mr->umem->address + (addr - mr->iova);
	end = uva + len;
	/*
	 * Page cache the fault reads in is the owner's memory, wherever the
	 * fault runs (a work item, another process's system call).
	 */
	memcg = get_mem_cgroup_from_mm(mr->umem->owning_mm);
	old = set_active_memcg(memcg);
	ret = 0;
	while (uva < end) {
		n = min_t(u64, end - uva,
			  ODP_FAULT_CHUNK - (uva & (ODP_FAULT_CHUNK - 1)));
		ret = fault_chunk(mr, uva, n, write, fault);
		if (ret)
			break;
		uva += n;
		if (uva < end && fatal_signal_pending(current)) {
			ret = -EINTR;
			break;
		}
		cond_resched();
	}
	set_active_memcg(old);
	mem_cgroup_put(memcg);
	return ret;
}

/**
 * siw2_odp_fault() - map the pages under a range of an ODP MR
 * @mr: a held MR of kind SIW2_MR_ODP
 * @addr: first address, in the MR's address space (its iova)
 * @len: octets; the part outside the region is left out
 * @write: map for writing, not only reading
 *
 * The pages may be unmapped again by the time the caller copies (memory
 * pressure, munmap): the copy then fails with -EAGAIN once more. A fatal
 * signal of the calling process stops a long fault. Process context.
 *
 * Return: 0, or -EFAULT where the process has no mapping, -EPERM where it
 * may not write, -EBUSY if invalidations kept the core from finishing
 * within its timeout, -EINTR, or another negative errno of the core.
 */
int siw2_odp_fault(struct siw2_mr *mr, u64 addr, u64 len, bool write)
{
	int ret;

	/*
	 * A fault for reading takes the write right back from pages that
	 * had it (the core keeps one set of rights per page), which the
	 * receive path then faults again: a writable region is faulted for
	 * writing, unless the mapping is read-only there.
	 */
	if (!write && mr->umem->writable) {
		ret = odp_map(mr, addr, len, true, true);
		if (ret != -EPERM)
			return ret;
	}
	return odp_map(mr, addr, len, write, true);
}

/* Takes the pages of a range that the process has mapped, faults none. */
static int odp_sync(struct siw2_mr *mr, u64 addr, u64 len)
{
	return odp_map(mr, addr, len, false, false);
}

/**
 * siw2_odp_present_locked() - is a range of an ODP MR mapped?
 * @mr: the MR, its lock held
 * @addr: first address, inside the region
 * @len: octets, inside the region
 * @write: for writing too
 *
 * Return: true if every page of the range is mapped for the access.
 */
bool siw2_odp_present_locked(struct siw2_mr *mr, u64 addr, u64 len,
			     bool write)
{
	u64 need = ODP_READ_ALLOWED_BIT | (write ? ODP_WRITE_ALLOWED_BIT : 0);
	u64 x = addr - mr->iova + mr->offset;
	u64 i, last;

	lockdep_assert_held(&mr->lock);
	if (!len)
		return true;
	last = (x + len - 1) >> PAGE_SHIFT;
	for (i = x >> PAGE_SHIFT; i <= last; i++)
		if (i >= mr->npages || (mr->odp_map[i] & need) != need)
			return false;
	return true;
}

/**
 * siw2_odp_va_locked() - the kernel address of a mapped ODP address
 * @mr: the MR, its lock held
 * @addr: the address, inside the region
 *
 * Return: the address, or NULL if its page is not mapped.
 */
void *siw2_odp_va_locked(struct siw2_mr *mr, u64 addr)
{
	u64 x = addr - mr->iova + mr->offset;
	u64 e, i = x >> PAGE_SHIFT;

	lockdep_assert_held(&mr->lock);
	if (i >= mr->npages)
		return NULL;
	e = mr->odp_map[i];
	if (!(e & ODP_READ_ALLOWED_BIT))
		return NULL;
	/* A virtual-DMA device's "DMA address" is the kernel's. */
	return (void *)(uintptr_t)(e & ODP_DMA_ADDR_MASK) + (x & ~PAGE_MASK);
}

/* The errno of a lookup that failed, as other drivers' advise_mr say it. */
static int advise_errno(enum siw2_mr_fault fault)
{
	switch (fault) {
	case SIW2_MR_BAD_PD:
	case SIW2_MR_ACCESS:
		return -EPERM;
	case SIW2_MR_WRAP:
	case SIW2_MR_BOUNDS:
		return -EFAULT;
	default:
		return -ENOENT;
	}
}

/**
 * siw2_odp_advise_mr() - ib_device_ops.advise_mr: prefetch ODP memory
 * @pd: the protection domain the scatter list's lkeys must belong to
 * @advice: IB_UVERBS_ADVISE_MR_ADVICE_*
 * @flags: IB_UVERBS_ADVISE_MR_FLAG_FLUSH or 0; siw2 always prefetches
 *	before it returns, which the flag asks for and its absence allows
 * @sg_list: ranges of ODP MRs, by lkey
 * @num_sge: entries in @sg_list
 * @attrs: unused
 *
 * PREFETCH maps for reading, PREFETCH_WRITE for writing too, and
 * PREFETCH_NO_FAULT maps only what the process has mapped already.
 * Process context, the caller's.
 *
 * Return: 0, -EOPNOTSUPP for an unknown advice, -ENOENT for an lkey that
 * is not an ODP MR, -EPERM for one of another PD or without the write
 * access PREFETCH_WRITE needs, -EFAULT for a range outside it, or the
 * fault's errno.
 */
int siw2_odp_advise_mr(struct ib_pd *pd,
		       enum ib_uverbs_advise_mr_advice advice, u32 flags,
		       struct ib_sge *sg_list, u32 num_sge,
		       struct uverbs_attr_bundle *attrs)
{
	struct siw2_device *sdev = to_siw2_dev(pd->device);
	enum siw2_mr_fault fault;
	struct siw2_mr *mr;
	bool write, map;
	int ret = 0;
	u32 i;

	switch (advice) {
	case IB_UVERBS_ADVISE_MR_ADVICE_PREFETCH:
		write = false;
		map = true;
		break;
	case IB_UVERBS_ADVISE_MR_ADVICE_PREFETCH_WRITE:
		write = true;
		map = true;
		break;
	case IB_UVERBS_ADVISE_MR_ADVICE_PREFETCH_NO_FAULT:
		write = false;
		map = false;
		break;
	default:
		return -EOPNOTSUPP;
	}
	for (i = 0; i < num_sge && !ret; i++) {
		if (!sg_list[i].length)
			continue;
		mr = siw2_mr_lookup(sdev, sg_list[i].lkey, pd,
				    write ? IB_ACCESS_LOCAL_WRITE : 0,
				    sg_list[i].addr, sg_list[i].length, &fault);
		if (!mr)
			return advise_errno(fault);
		if (mr->kind != SIW2_MR_ODP)
			ret = -ENOENT;
		else if (map)
			ret = siw2_odp_fault(mr, sg_list[i].addr,
					     sg_list[i].length, write);
		else
			ret = odp_sync(mr, sg_list[i].addr, sg_list[i].length);
		siw2_mr_put(mr);
	}
	return ret;
}
