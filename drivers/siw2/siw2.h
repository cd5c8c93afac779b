/* SPDX-License-Identifier: GPL-2.0 */
/*
 * siw2: the device object and an index of what each file exports.
 */
#ifndef SIW2_H
#define SIW2_H

#include <linux/completion.h>
#include <linux/kref.h>
#include <linux/list.h>
#include <linux/moduleparam.h>
#include <linux/netdevice.h>
#include <linux/refcount.h>
#include <linux/sizes.h>
#include <linux/spinlock.h>
#include <linux/srcu.h>
#include <linux/xarray.h>
#include <rdma/ib_verbs.h>
#include <rdma/siw2-abi.h>

#define SIW2_DRV_NAME "siw2"
#define SIW2_LINK_TYPE "siw2"

/*
 * Limits reported through query_device and enforced by the verbs; later
 * work makes them per device. Queue depths are rounded up to a power of two
 * for the shared rings, and the rounded depth must stay within the limit.
 */
#define SIW2_MAX_QP 16384
#define SIW2_MAX_QP_WR 16384
#define SIW2_MAX_SGE 6		/* SIW2_UMAX_SGE of the uAPI */
/* SIW2_MAX_SGE_RD is the uAPI's: the provider enforces it too. */
#define SIW2_MAX_CQ 16384
#define SIW2_MAX_CQE 65536
#define SIW2_MAX_MR 65536
#define SIW2_MAX_MW 65536
#define SIW2_MAX_PD 65536
#define SIW2_MAX_SRQ 4096
#define SIW2_MAX_SRQ_WR 16384
#define SIW2_MAX_ORD 128
#define SIW2_MAX_IRD 128
#define SIW2_MAX_INLINE 192	/* SIW2_UMAX_INLINE of the uAPI */
#define SIW2_MAX_MR_SIZE (~0ULL)
#define SIW2_MAX_FAST_REG_PAGES 512
#define SIW2_VENDOR_ID 0x626d74	/* an OUI-shaped tag, as soft devices use */
#define SIW2_VENDOR_PART_ID 0x5732

/* QP numbers are 24 bits wide; 0 and 1 are special in the IB verbs. */
#define SIW2_QPN_MIN 2
#define SIW2_QPN_MAX 0xffffff

/* An STag is a 24-bit index into the device's STag table and an 8-bit key. */
#define SIW2_STAG_KEY_MASK 0xffU
#define SIW2_STAG_INDEX_MAX 0xffffff

struct siw2_counters;

/**
 * struct siw2_device - one siw2 RDMA device, bound to one netdev
 * @ibdev: the core's device; its refcount governs our lifetime
 * @netdev: the netdev carrying our TCP connections; a reference is held from
 *	newlink until the core calls dealloc_driver
 * @netdev_tracker: reference tracker for @netdev
 * @list: entry in the module's device list, under the device list mutex
 * @live: set once ib_register_device() returned, under the list mutex; the
 *	netdev notifier only unregisters live devices (see device.c)
 * @qps: QP number -> struct siw2_qp; changed in process context only,
 *	looked up under RCU (see qp.c for how long a found QP lives)
 * @mrs: STag index -> struct siw2_mr; changed in process context only,
 *	looked up under RCU from any context (see mr.c)
 * @next_qpn: cursor of the cyclic QP number allocation, under @qps' lock
 * @next_stag: cursor of the cyclic STag index allocation, under @mrs' lock
 * @num_pd: live PDs, for the SIW2_MAX_PD limit (likewise the others)
 * @num_cq: live CQs
 * @num_qp: live QPs
 * @num_srq: live SRQs
 * @num_mr: live MRs
 * @num_mw: live memory windows
 * @cq_ids: source of CQ identifiers reported to the provider
 * @atomic_lock: serializes the RFC 7306 atomics the device executes for
 *	its peers (IB_ATOMIC_HCA); taken with BH off
 * @counts: the device's event counters, per CPU (counters.c)
 * @conf_lock: serializes changes of @conf and makes copies consistent
 *	(conf.c); process context only
 * @conf: the device's settings (conf.c)
 */
/* Why a QP changed state, as the siw2_qp_state tracepoint names it. */
enum siw2_qp_cause {
	SIW2_QP_CAUSE_MODIFY,		/* its consumer's modify_qp */
	SIW2_QP_CAUSE_CM,		/* connection setup */
	SIW2_QP_CAUSE_CM_FAIL,		/* a hand-over to the QP failed */
	SIW2_QP_CAUSE_TERM_SENT,	/* siw2 sent a Terminate */
	SIW2_QP_CAUSE_TERM_RCVD,	/* the peer sent one */
	SIW2_QP_CAUSE_LLP_CLOSED,	/* the stream ended */
	SIW2_QP_CAUSE_LLP_ERROR,	/* a send on it failed */
	SIW2_QP_CAUSE_RING,		/* user ring indices lied */
	SIW2_QP_CAUSE_DESTROY,		/* destroy_qp */
};

/**
 * struct siw2_conf - a device's settings, which each connection copies
 *	when it starts (conf.c; Documentation/admin-guide.md). All are u32,
 *	the flags 0 or 1, so that conf.c handles each alike.
 * @mpa_rev: MPA revision requested, and the highest accepted
 * @mpa_rtr: RFC 6581 RTR types offered or accepted (SIW2_MPA_RTR_*)
 * @mpa_crc: ask for MPA CRCs
 * @mpa_markers: ask for MPA Markers
 * @mpa_p2p: as initiator, ask for the RFC 6581 peer-to-peer RTR
 * @mpa_large_fpdu: offer FPDUs larger than a TCP segment
 * @tcp_timeout_ms: TCP connect timeout
 * @mpa_request_timeout_ms: wait for an MPA Request after a TCP accept
 * @mpa_reply_timeout_ms: wait for an MPA Reply, or for the ULP's answer
 * @tx_zerocopy: send large messages from user memory without a copy
 * @sq_poll_us: sqpoll.c's idle time, read for each poll; 0: every post
 *	rings
 * @port_map: let the iw_cm map ports through iwpmd (the core reads it
 *	as ibdev.iw_driver_flags)
 */
struct siw2_conf {
	u32 mpa_rev;
	u32 mpa_rtr;
	u32 mpa_crc;
	u32 mpa_markers;
	u32 mpa_p2p;
	u32 mpa_large_fpdu;
	u32 tcp_timeout_ms;
	u32 mpa_request_timeout_ms;
	u32 mpa_reply_timeout_ms;
	u32 tx_zerocopy;
	u32 sq_poll_us;
	u32 port_map;
};

struct siw2_device {
	struct ib_device ibdev;
	struct net_device *netdev;
	netdevice_tracker netdev_tracker;
	struct list_head list;
	bool live;

	struct xarray qps;
	struct xarray mrs;
	u32 next_qpn;
	u32 next_stag;
	atomic_t num_pd;
	atomic_t num_cq;
	atomic_t num_qp;
	atomic_t num_srq;
	atomic_t num_mr;
	atomic_t num_mw;
	atomic_t cq_ids;
	spinlock_t atomic_lock;	/* see above */
	struct siw2_counters __percpu *counts;
	spinlock_t conf_lock;	/* see above */
	struct siw2_conf conf;
};

static inline struct siw2_device *to_siw2_dev(struct ib_device *ibdev)
{
	return container_of(ibdev, struct siw2_device, ibdev);
}

struct siw2_ucontext {
	struct ib_ucontext base;
};

struct siw2_pd {
	struct ib_pd base;
};

/* Shared with the provider; defined in <rdma/siw2-abi.h>. */
struct siw2_ring_ctl;
struct siw2_sqe;
struct siw2_rqe;
struct siw2_cqe;
struct siw2_queue_mmap;
struct siw2_stag_view;

/**
 * struct siw2_queue - the kernel's side of one shared ring (queue.c)
 * @ctl: the ring's control block, at the start of the mapping
 * @entries: @size entries of @esize bytes, right after @ctl's page share
 * @size: number of entries, a power of two
 * @esize: bytes per entry
 * @prod: the kernel's own producer index, when the kernel produces
 * @cons: the kernel's own consumer index, when the kernel consumes
 * @broken: the other side published an index claiming more than @size
 *	outstanding entries; the queue is dead until siw2_queue_discard()
 * @lock: the lock of the object owning the queue, which every index
 *	helper expects held (checked by lockdep)
 * @mmap: the mapping offered to user space; NULL for a kernel queue
 *
 * The kernel never reads back the index it owns from shared memory: @prod
 * or @cons is the truth, ctl->prod or ctl->cons only its publication.
 */
struct siw2_queue {
	struct siw2_ring_ctl *ctl;
	void *entries;
	u32 size;
	u32 esize;
	u32 prod;
	u32 cons;
	bool broken;
	spinlock_t *lock;	/* the owner's, see above */
	struct siw2_queue_mmap *mmap;
};

/**
 * siw2_queue_avail() - entries published and not yet consumed
 * @q: a queue the kernel consumes
 *
 * Loads prod with acquire semantics, so entries up to it may be read.
 *
 * Return: the count, 0 for an empty or broken queue (see @q->broken).
 */
static inline u32 siw2_queue_avail(struct siw2_queue *q)
{
	u32 prod, n;

	lockdep_assert_held(q->lock);
	if (q->broken || !q->size)
		return 0;
	/* Pairs with the producer's release of prod: entries come first. */
	prod = smp_load_acquire(&q->ctl->prod);
	n = prod - q->cons;
	if (n > q->size) {
		q->broken = true;
		return 0;
	}
	return n;
}

/*
 * The entry at free-running index @idx, in place. The caller has learned
 * from siw2_queue_avail() that @idx is published. A user ring's producer
 * may rewrite the entry at any time: the caller copies what it needs,
 * reads each field of the copy once and validates it.
 */
static inline const void *siw2_queue_entry(const struct siw2_queue *q, u32 idx)
{
	lockdep_assert_held(q->lock);
	return q->entries + (size_t)(idx & (q->size - 1)) * q->esize;
}

/* Hands @n consumed slots back to the producer. */
static inline void siw2_queue_consume(struct siw2_queue *q, u32 n)
{
	lockdep_assert_held(q->lock);
	q->cons += n;
	/* The copies are taken before the slots go back to the producer. */
	smp_store_release(&q->ctl->cons, q->cons);
}

/**
 * siw2_queue_space() - free slots for the producer
 * @q: a queue the kernel produces
 *
 * Loads cons with acquire semantics: the consumer is done with the slots
 * below it before they are overwritten.
 *
 * Return: the count, 0 for a full or broken queue (see @q->broken).
 */
static inline u32 siw2_queue_space(struct siw2_queue *q)
{
	u32 cons, used;

	lockdep_assert_held(q->lock);
	if (q->broken || !q->size)
		return 0;
	/* Pairs with the consumer's release: it is done with the slots. */
	cons = smp_load_acquire(&q->ctl->cons);
	used = q->prod - cons;
	if (used > q->size) {
		q->broken = true;
		return 0;
	}
	return q->size - used;
}

/*
 * The slot at prod, to fill before siw2_queue_publish(); only after
 * siw2_queue_space() said there is one.
 */
static inline void *siw2_queue_slot(struct siw2_queue *q)
{
	lockdep_assert_held(q->lock);
	return q->entries + (size_t)(q->prod & (q->size - 1)) * q->esize;
}

/* Publishes the slot at prod: the entry is visible before the index. */
static inline void siw2_queue_publish(struct siw2_queue *q)
{
	lockdep_assert_held(q->lock);
	q->prod++;
	/* The entry is written before the index that publishes it. */
	smp_store_release(&q->ctl->prod, q->prod);
}

/**
 * struct siw2_cq - a completion queue (cq.c)
 * @base: the core's CQ; the core allocates and frees it
 * @lock: protects @q (both of its indices) and @overflow; taken with
 *	interrupts off, as completions are produced from softirq context
 * @resize_mutex: serialises resizes, which copy from @q's ring without
 *	@lock held (siw2_queue_precopy()): no other resize replaces it then
 * @q: the ring of struct siw2_cqe; the kernel produces, the consumer is
 *	the provider for a user CQ and poll_cq for a kernel CQ
 * @id: reported to the provider
 * @comp_vector: the completion vector asked for at creation
 * @user: the ring is mapped to user space
 * @overflow: an overflow or a broken ring was reported (IB_EVENT_CQ_ERR);
 *	the CQ accepts no more completions
 */
struct siw2_cq {
	struct ib_cq base;
	spinlock_t lock;	/* see above */
	struct mutex resize_mutex;	/* see above */
	struct siw2_queue q;
	u32 id;
	u32 comp_vector;
	bool user;
	bool overflow;
};

/**
 * struct siw2_srq - a shared receive queue (srq.c)
 * @base: the core's SRQ
 * @lock: protects @q and @limit; interrupts off (RX consumes in softirq)
 * @q: the ring of struct siw2_rqe; the poster produces, RX consumes
 * @max_sge: scatter entries per receive
 * @limit: armed limit, 0 when not armed (IB_SRQ_LIMIT)
 * @user: the ring is mapped to user space
 * @err_sent: IB_EVENT_SRQ_ERR was raised for a broken user ring
 */
struct siw2_srq {
	struct ib_srq base;
	spinlock_t lock;	/* see above */
	struct siw2_queue q;
	u32 max_sge;
	u32 limit;
	bool user;
	bool err_sent;
};

/**
 * struct siw2_qp_attrs - attributes kept for query_qp, under the QP's lock
 *
 * Attributes of the IB transport that iWARP has no use for (PSNs, timers,
 * path MTU) are kept only to report back what was set.
 */
struct siw2_qp_attrs {
	int access;
	u8 max_rd_atomic;
	u8 max_dest_rd_atomic;
	u8 timeout;
	u8 retry_cnt;
	u8 rnr_retry;
	u8 min_rnr_timer;
	enum ib_mtu path_mtu;
	u32 sq_psn;
	u32 rq_psn;
	u32 dest_qp_num;
};

/**
 * struct siw2_qp - a reliable connected queue pair (qp.c)
 * @base: the core's QP; the core frees it after destroy_qp returned
 * @sdev: our device
 * @ref: keeps the QP's resources alive; the creator's reference is
 *	dropped in destroy_qp, which then waits for @released. The CM holds
 *	one while a connection uses the QP (iw_add_ref/iw_rem_ref)
 * @released: completed when @ref drops to zero
 * @lock: protects @state and @attrs; taken before @sq_lock and @rq_lock
 * @sq_lock: protects @sq and @sq_fetch
 * @rq_lock: protects @rq
 * @state: the IB state; written under @lock and, where the queues care,
 *	also under the queue lock; READ_ONCE elsewhere
 * @attrs: see struct siw2_qp_attrs
 * @sq: ring of struct siw2_sqe
 * @rq: ring of struct siw2_rqe; absent (size 0) with an SRQ
 * @sq_fetch: index of the next SQE the send engine fetches; SQEs in
 *	[@sq.cons, @sq_fetch) are in progress and still own their slots
 * @scq: send CQ
 * @rcq: receive CQ
 * @srq: the SRQ receives come from, or NULL
 * @max_send_sge: scatter/gather entries per SQE (as reported in cap)
 * @max_recv_sge: per RQE
 * @max_inline: inline octets per SQE
 * @sig_all: every SQE completes (IB_SIGNAL_ALL_WR)
 * @home_cpu: the CPU that created the QP, where its send work runs until
 *	its consumer first posts (tx.c)
 * @user: the rings are mapped to user space
 * @owner: the effective user that created the QP (see may_name() in qp.c)
 * @serial: the module's number for this QP and connection, never reused
 *	(QP numbers are), renewed by each move to RESET: which QP a type 2
 *	memory window serves (mr.c). WRITE_ONCE under @lock, READ_ONCE
 *	elsewhere
 * @fatal_sent: IB_EVENT_QP_FATAL was raised for a broken user ring (since
 *	the last RESET, which mends the rings)
 * @stream: the data path of the QP's connection (engine.h), or of the
 *	last one it had: published under @lock by siw2_stream_attach(),
 *	read without it inside siw2_stream_srcu, freed by destroy_qp or,
 *	once replaced by the next connection's, after a grace period
 * @flush_held: the stream's engines may still hold work requests (an RQE
 *	being filled, a Read's sink): the flush of ERR waits for the stream's
 *	close work, so that it completes them first and nothing is placed
 *	into a buffer its consumer got back. Set under @lock by the attach,
 *	cleared by siw2_qp_stream_done(); READ_ONCE under the queue locks
 * @discard_held: the QP was reset while @flush_held: the stream places
 *	nothing more, and what it holds is discarded, not completed, even
 *	if the consumer has moved the QP on since (same rules)
 * @last_wqe: IB_EVENT_QP_LAST_WQE_REACHED is due or was raised, or the QP
 *	is being destroyed (@lock)
 * @sq_wake_lock: protects @sq_wake and the SQ ring's SIW2_SQ_NEED_WAKEUP;
 *	a leaf, taken with interrupts off, also under @lock and under a
 *	poller's lock
 * @sq_wake: SIW2_SQW_*: who watches a user QP's SQ (siw2_qp_sq_wake())
 */
struct siw2_qp {
	struct ib_qp base;
	struct siw2_device *sdev;
	struct kref ref;
	struct completion released;
	spinlock_t lock;	/* see above, for these three */
	spinlock_t sq_lock;	/* see above */
	spinlock_t rq_lock;	/* see above */
	enum ib_qp_state state;
	struct siw2_qp_attrs attrs;
	struct siw2_queue sq;
	struct siw2_queue rq;
	u32 sq_fetch;
	struct siw2_cq *scq;
	struct siw2_cq *rcq;
	struct siw2_srq *srq;
	u32 max_send_sge;
	u32 max_recv_sge;
	u32 max_inline;
	bool sig_all;
	int home_cpu;
	bool user;
	kuid_t owner;
	u64 serial;
	bool fatal_sent;
	struct siw2_stream __rcu *stream;
	bool flush_held;
	bool discard_held;
	bool last_wqe;
	spinlock_t sq_wake_lock;	/* see above */
	unsigned int sq_wake;
	/* sqpoll.c: @poller set once, under @lock; the rest under its lock */
	struct list_head poll_node;
	struct siw2_sqpoller *poller;
	u64 poll_last;
	u32 poll_prod;
	bool poll_kick;
};

enum siw2_mr_kind {
	SIW2_MR_USER,		/* reg_user_mr: pinned user pages */
	SIW2_MR_DMA,		/* get_dma_mr: kernel virtual addresses */
	SIW2_MR_FAST,		/* alloc_mr: a page list set by map_mr_sg */
	SIW2_MR_MW,		/* alloc_mw: a window onto a user MR */
	SIW2_MR_ODP,		/* reg_user_mr, on demand: nothing pinned */
};

/* Why siw2_mr_lookup() or an MR state change failed. */
enum siw2_mr_fault {
	SIW2_MR_OK = 0,
	SIW2_MR_BAD_STAG,	/* no such STag, or its key differs */
	SIW2_MR_BAD_PD,		/* another protection domain */
	SIW2_MR_ACCESS,		/* the access asked for is not granted */
	SIW2_MR_WRAP,		/* the 64-bit address plus length wraps */
	SIW2_MR_BOUNDS,		/* outside the region */
	SIW2_MR_INVALID,	/* invalidated, or never fast-registered */
	SIW2_MR_STATE,		/* the state change is not allowed */
	SIW2_MR_BAD_QP,		/* a type 2 window of another QP */
};

/**
 * struct siw2_mr - a memory region and its STag (mr.c)
 * @base: the core's MR; siw2 allocates and frees it
 * @sdev: our device
 * @pd: the protection domain
 * @ref: one reference for the STag table, one per holder found by a
 *	lookup; the last one frees the MR (mr.c, "Lifetime")
 * @free_work: that free, when the last reference is a holder's
 * @rcu: the free waits for lookups that found the MR but lost the race
 * @lock: protects @stag, @valid, @access, @iova and @len, which
 *	fast registration and invalidation change (write-held, BH off);
 *	every access to the memory runs read-held (mr.c)
 * @kind: see enum siw2_mr_kind
 * @stag: the STag, index and key
 * @valid: the STag may be used
 * @access: IB_ACCESS_* granted
 * @iova: first valid address
 * @len: octets valid from @iova
 * @umem: SIW2_MR_USER: the pinned memory; SIW2_MR_ODP: the core's
 *	struct ib_umem_odp
 * @pages: SIW2_MR_USER: the pinned pages, in order
 * @offset: offset of the region's first octet in the first page (user,
 *	ODP and fast registration MRs)
 * @page_shift: SIW2_MR_FAST: log2 of the page list's page size
 * @npages: SIW2_MR_USER: entries in @pages; SIW2_MR_FAST: in @fpages;
 *	SIW2_MR_ODP: in @odp_map
 * @odp_map: SIW2_MR_ODP: each page's kernel address with the core's
 *	ODP_READ_ALLOWED_BIT and ODP_WRITE_ALLOWED_BIT, 0 while not mapped
 *	(under @lock; odp.c)
 * @max_pages: SIW2_MR_FAST: room in @fpages
 * @fpages: SIW2_MR_FAST: page-size aligned kernel virtual addresses (siw2
 *	is a virtual-DMA device, so DMA addresses are kernel addresses)
 * @windows: SIW2_MR_USER: memory windows bound to it, and binds to it
 *	under way (under @lock); dereg_mr fails with -EBUSY while there are
 *	any
 * @dead: dereg_mr or dealloc_mw ran (under @lock): nothing binds to it,
 *	or it binds to nothing, again
 * @mw_type: SIW2_MR_MW: IB_MW_TYPE_1 or IB_MW_TYPE_2
 * @parent: SIW2_MR_MW: the MR the window lies in while @valid, held
 *	(one reference and one of its @windows), else NULL (under @lock)
 * @qp_serial: SIW2_MR_MW: the serial of the QP it was last bound
 *	through, the only one a type 2 window serves (under @lock)
 */
struct siw2_mr {
	struct ib_mr base;
	struct siw2_device *sdev;
	struct ib_pd *pd;
	refcount_t ref;
	struct work_struct free_work;
	struct rcu_head rcu;
	rwlock_t lock;		/* see above */
	enum siw2_mr_kind kind;
	u32 stag;
	bool valid;
	int access;
	u64 iova;
	u64 len;
	struct ib_umem *umem;
	struct page **pages;
	u32 offset;
	u32 page_shift;
	u32 npages;
	u32 max_pages;
	u64 *fpages;
	u64 *odp_map;
	u32 windows;
	bool dead;
	u8 mw_type;
	struct siw2_mr *parent;
	u64 qp_serial;
};

/**
 * struct siw2_mw - a memory window, as the core allocates it
 * @base: the core's object, which it frees right after dealloc_mw
 * @win: the window's STag, in the STag table as a SIW2_MR_MW, which
 *	lives on while a peer's access holds it (mr.c)
 */
struct siw2_mw {
	struct ib_mw base;
	struct siw2_mr *win;
};

/* debug.c */
enum siw2_obj {
	SIW2_OBJ_DEVICE,
	SIW2_OBJ_UCONTEXT,
	SIW2_OBJ_PD,
	SIW2_OBJ_CQ,
	SIW2_OBJ_QP,
	SIW2_OBJ_SRQ,
	SIW2_OBJ_MR,
	SIW2_OBJ_MW,
	SIW2_OBJ_CEP,		/* connection endpoints (cm.c) */
	SIW2_OBJ_LISTENER,	/* per-device listeners (listen.c) */
	SIW2_OBJ_MAX
};

/* Events a peer can cause, counted instead of logged. */
enum siw2_counter {
	SIW2_CNT_CONNECT,		/* iw_connect calls that started */
	SIW2_CNT_CONNECTED,		/* active side reached Full Operation */
	SIW2_CNT_ACCEPTED,		/* passive side reached Full Operation */
	SIW2_CNT_REFUSED,		/* TCP connect refused or failed */
	SIW2_CNT_TCP_TIMEOUT,		/* TCP connect timed out */
	SIW2_CNT_REPLY_TIMEOUT,		/* no MPA Reply in time */
	SIW2_CNT_REQUEST_TIMEOUT,	/* no MPA Request in time */
	SIW2_CNT_ULP_TIMEOUT,		/* the ULP neither accepted nor rejected */
	SIW2_CNT_PEER_CLOSED,		/* TCP ended during MPA setup */
	SIW2_CNT_BAD_FRAME,		/* invalid MPA Request or Reply */
	SIW2_CNT_NEGOTIATION,		/* IRD/ORD or RTR not agreed */
	SIW2_CNT_REJECT_SENT,
	SIW2_CNT_REJECT_RCVD,
	SIW2_CNT_REV1_RETRY,		/* RFC 6581 10 fallback to revision 1 */
	SIW2_CNT_REQUEST,		/* connect requests passed to the iw_cm */
	SIW2_CNT_NO_DEVICE,		/* connection to an address no listener owns */
	SIW2_CNT_OVERFLOW,		/* listener's pending requests at backlog */
	SIW2_CNT_LISTEN_DROP,		/* pending requests closed by listener teardown */
	SIW2_CNT_UPCALL_FAIL,		/* the iw_cm refused a connect request */
	SIW2_CNT_DISCONNECT,		/* established connections that ended */
	SIW2_CNT_TERM_SENT,		/* Terminate messages queued to send */
	SIW2_CNT_TERM_RCVD,		/* Terminate messages received */
	SIW2_CNT_SQ_DOORBELL,		/* user send queue doorbells (system calls) */
	SIW2_CNT_TX_ZC,			/* messages sent without a copy */
	SIW2_CNT_CQ_OVERFLOW,		/* CQs that overflowed (and are in error) */
	SIW2_CNT_RX_FAULT,		/* receive paused for an ODP fault */
	SIW2_CNT_MAX
};

void siw2_obj_created(enum siw2_obj obj);
void siw2_obj_destroyed(enum siw2_obj obj);
void siw2_irqoff_end(u64 start);
void siw2_debug_init(void);
void siw2_debug_uninit(void);

/* counters.c */
struct seq_file;
extern const struct ib_device_ops siw2_counters_ops;
void siw2_count(struct siw2_device *sdev, enum siw2_counter c);
int siw2_counters_show(struct seq_file *m, void *unused);
int siw2_counters_init_device(struct siw2_device *sdev);
void siw2_counters_uninit_device(struct siw2_device *sdev);

/* choose.c */
#define SIW2_CHOICE_PROBE_LEN	4096

/**
 * struct siw2_choice - two implementations of one function, one in use
 * @what: what they compute, for the kernel log
 * @name: the module parameter's names of the library's and siw2's own
 * @run: one pass of either over SIW2_CHOICE_PROBE_LEN octets; @buf holds
 *	twice that
 * @agree: optional; whether both compute the same over @buf
 * @use: make one the implementation in use; any context, may be called
 *	before module init
 * @own: siw2's own is in use
 * @set_by_param: the parameter was set at load; init keeps that choice
 *
 * A module parameter of siw2_choice_ops with the choice as its argument
 * selects: "auto" times both and keeps the faster, a name selects one.
 */
struct siw2_choice {
	const char *what;
	const char *name[2];
	void (*run)(bool own, u8 *buf);
	bool (*agree)(u8 *buf);
	void (*use)(bool own);
	bool own;
	bool set_by_param;
};

extern const struct kernel_param_ops siw2_choice_ops;
void siw2_choice_init(struct siw2_choice *c);

/* crc.c */
void siw2_crc_init(void);

/* copy.c */
void siw2_copy(void *dst, const void *src, size_t len);
void siw2_copy_init(void);

/* device.c */
int siw2_device_init(void);
void siw2_device_uninit(void);

/* verbs.c */
extern const struct ib_device_ops siw2_verbs_ops;
void siw2_verbs_init_device(struct siw2_device *sdev);
void siw2_verbs_uninit_device(struct siw2_device *sdev);

/* restrack.c */
extern const struct ib_device_ops siw2_restrack_ops;

/* queue.c: shared rings */
int __must_check siw2_queue_init(struct siw2_queue *q, struct ib_udata *udata,
				 u32 size, u32 esize, spinlock_t *lock);
void siw2_queue_uninit(struct siw2_queue *q);
u64 siw2_queue_key(const struct siw2_queue *q);
void siw2_queue_discard(struct siw2_queue *q);
u32 siw2_queue_precopy(struct siw2_queue *to, struct siw2_queue *from);
int siw2_queue_migrate(struct siw2_queue *to, struct siw2_queue *from,
		       u32 copied);
void siw2_queue_indices(const struct siw2_queue *q, u32 *prod, u32 *cons);
u32 siw2_queue_flags(const struct siw2_queue *q);
void siw2_queue_set_flags(struct siw2_queue *q, u32 flags);
int siw2_queue_mmap(struct ib_ucontext *uctx, struct vm_area_struct *vma);
void siw2_queue_mmap_free(struct rdma_user_mmap_entry *entry);

/* cq.c */
int siw2_cq_create(struct ib_cq *ibcq, const struct ib_cq_init_attr *attr,
		   SIW2_CREATE_CQ_ARG *uarg);
int siw2_cq_destroy(struct ib_cq *ibcq, struct ib_udata *udata);
int siw2_cq_poll(struct ib_cq *ibcq, int num, struct ib_wc *wc);
int siw2_cq_req_notify(struct ib_cq *ibcq, enum ib_cq_notify_flags flags);
int siw2_cq_resize(struct ib_cq *ibcq, int cqe, struct ib_udata *udata);
int siw2_cq_post(struct siw2_cq *cq, const struct siw2_cqe *cqe);

static inline struct siw2_cq *to_siw2_cq(struct ib_cq *ibcq)
{
	return container_of(ibcq, struct siw2_cq, base);
}

/* srq.c */
int siw2_srq_create(struct ib_srq *ibsrq, struct ib_srq_init_attr *attr,
		    struct ib_udata *udata);
int siw2_srq_modify(struct ib_srq *ibsrq, struct ib_srq_attr *attr,
		    enum ib_srq_attr_mask mask, struct ib_udata *udata);
int siw2_srq_query(struct ib_srq *ibsrq, struct ib_srq_attr *attr);
int siw2_srq_destroy(struct ib_srq *ibsrq, struct ib_udata *udata);
int siw2_srq_post_recv(struct ib_srq *ibsrq, const struct ib_recv_wr *wr,
		       const struct ib_recv_wr **bad_wr);
int siw2_srq_get_rqe(struct siw2_srq *srq, struct siw2_rqe *out);
int siw2_rqe_from_wr(struct siw2_rqe *rqe, const struct ib_recv_wr *wr,
		     u32 max_sge);

/*
 * Copies an RQE out of its slot: the fixed part, then only the SGEs it
 * says it has (no more than the slot holds). The rest of @out is left
 * alone; nothing reads an SGE beyond num_sge.
 */
static inline void siw2_rqe_read(struct siw2_rqe *out,
				 const struct siw2_rqe *slot)
{
	memcpy(out, slot, offsetof(struct siw2_rqe, sge));
	memcpy(out->sge, slot->sge,
	       min_t(size_t, out->num_sge, ARRAY_SIZE(out->sge)) *
	       sizeof(out->sge[0]));
}

/* Checks a copy of an RQE taken from a ring. */
static inline bool siw2_rqe_valid(const struct siw2_rqe *rqe, u32 max_sge)
{
	return rqe->num_sge <= max_sge;
}

static inline struct siw2_srq *to_siw2_srq(struct ib_srq *ibsrq)
{
	return container_of(ibsrq, struct siw2_srq, base);
}

/* qp.c */
int siw2_qp_create(struct ib_qp *ibqp, struct ib_qp_init_attr *attr,
		   struct ib_udata *udata);
int siw2_qp_modify(struct ib_qp *ibqp, struct ib_qp_attr *attr, int mask,
		   struct ib_udata *udata);
int siw2_qp_query(struct ib_qp *ibqp, struct ib_qp_attr *attr, int mask,
		  struct ib_qp_init_attr *init);
int siw2_qp_destroy(struct ib_qp *ibqp, struct ib_udata *udata);
int siw2_qp_post_send(struct ib_qp *ibqp, const struct ib_send_wr *wr,
		      const struct ib_send_wr **bad_wr);
int siw2_qp_post_recv(struct ib_qp *ibqp, const struct ib_recv_wr *wr,
		      const struct ib_recv_wr **bad_wr);
struct ib_qp *siw2_qp_iw_get(struct ib_device *ibdev, int qpn);
void siw2_qp_iw_add_ref(struct ib_qp *ibqp);
void siw2_qp_iw_rem_ref(struct ib_qp *ibqp);
void siw2_qp_get(struct siw2_qp *qp);
void siw2_qp_put(struct siw2_qp *qp);
int siw2_qp_set_state(struct siw2_qp *qp, enum ib_qp_state state);
void siw2_qp_set_error(struct siw2_qp *qp, enum siw2_qp_cause cause);
void siw2_qp_stream_done(struct siw2_qp *qp);
void siw2_qp_kick_tx(struct siw2_qp *qp);

/* Who watches a user QP's SQ, so that posts need no doorbell (qp.c) */
#define SIW2_SQW_ENGINE	BIT(0)	/* its send engine runs or will run */
#define SIW2_SQW_POLLER	BIT(1)	/* an SQ poller watches it (sqpoll.c) */
bool siw2_qp_sq_wake(struct siw2_qp *qp, unsigned int set,
		     unsigned int clear);
bool siw2_qp_sq_idle(struct siw2_qp *qp);
void siw2_qp_start_tx(struct siw2_qp *qp);
void siw2_qp_event(struct siw2_qp *qp, enum ib_event_type type);
int siw2_qp_get_sqe(struct siw2_qp *qp, struct siw2_sqe *out, u32 *idx);
int siw2_qp_sq_complete(struct siw2_qp *qp, u64 wr_id, u8 opcode,
			u8 wqe_flags, enum ib_wc_status status, u32 byte_len);
int siw2_qp_get_rqe(struct siw2_qp *qp, struct siw2_rqe *out);

static inline struct siw2_qp *to_siw2_qp(struct ib_qp *ibqp)
{
	return container_of(ibqp, struct siw2_qp, base);
}

/* mr.c */
struct ib_mr *siw2_mr_reg_user(struct ib_pd *pd, u64 start, u64 len,
			       u64 iova, int access, struct ib_udata *udata);
struct ib_mr *siw2_mr_get_dma(struct ib_pd *pd, int access);
struct ib_mr *siw2_mr_alloc(struct ib_pd *pd, enum ib_mr_type type,
			    u32 max_num_sg);
int siw2_mr_map_sg(struct ib_mr *ibmr, struct scatterlist *sg, int sg_nents,
		   unsigned int *sg_offset);
int siw2_mr_dereg(struct ib_mr *ibmr, struct ib_udata *udata);
struct siw2_mr *siw2_mr_lookup(struct siw2_device *sdev, u32 stag,
			       struct ib_pd *pd, int access, u64 addr, u64 len,
			       enum siw2_mr_fault *fault);
struct siw2_mr *siw2_mr_lookup_view(struct siw2_device *sdev, u32 stag,
				    const struct siw2_qp *qp, int access,
				    struct siw2_stag_view *view);
int siw2_mw_alloc(struct ib_mw *ibmw, struct ib_udata *udata);
int siw2_mw_dealloc(struct ib_mw *ibmw);
enum siw2_mr_fault siw2_mw_bind(struct siw2_device *sdev,
				const struct siw2_qp *qp, u32 stag,
				const struct siw2_bind_mw *bind);

void siw2_mr_release(struct siw2_mr *mr);
void siw2_mr_flush(void);
int siw2_mr_init(void);
void siw2_mr_uninit(void);

/* Another reference to an MR the caller holds; any context. */
static inline void siw2_mr_hold(struct siw2_mr *mr)
{
	refcount_inc(&mr->ref);
}

/* Drops a reference from siw2_mr_lookup() and its kin; any context. */
static inline void siw2_mr_put(struct siw2_mr *mr)
{
	if (refcount_dec_and_test(&mr->ref))
		siw2_mr_release(mr);
}

enum siw2_mr_fault siw2_mr_invalidate(struct siw2_device *sdev, u32 stag,
				      const struct siw2_qp *qp, bool remote);
enum siw2_mr_fault siw2_mr_fast_reg(struct siw2_device *sdev, u32 stag,
				    struct ib_pd *pd, int access);
int siw2_mr_copy_to(struct siw2_mr *mr, u32 stag, u64 addr, const void *src,
		    u64 len);
int siw2_mr_copy_to_crc(struct siw2_mr *mr, u32 stag, u64 addr,
			const void *src, u64 len, u32 *crc);
int siw2_mr_copy_from(struct siw2_mr *mr, u32 stag, u64 addr, void *dst,
		      u64 len);
bool siw2_mr_user(const struct siw2_mr *mr);
bool siw2_mr_may_invalidate(const struct siw2_mr *mr);
int siw2_mr_page(struct siw2_mr *mr, u32 stag, u64 addr, struct page **page,
		 unsigned int *offset, unsigned int *len);
int siw2_mr_fault(struct siw2_mr *mr, u64 addr, u64 len, bool write);
int siw2_mr_copy_from_wait(struct siw2_mr *mr, u32 stag, u64 addr, void *dst,
			   u64 len, u64 ahead);
bool siw2_mr_present(struct siw2_mr *mr, u32 stag, u64 addr, u64 len,
		     bool write);

/*
 * odp.c: on-demand paging MRs. An access that found a page unmapped
 * faults this much ahead of it, and a copy that keeps finding its pages
 * unmapped again gives up after this many faults. They need the core's
 * ib_umem_odp, and reach a page through its lowmem address (a virtual-DMA
 * device's "DMA address"), which a HIGHMEM page lacks; without either
 * the device offers no ODP.
 */
#define SIW2_ODP_AHEAD SZ_256K
#define SIW2_ODP_TRIES 16

#if IS_ENABLED(CONFIG_INFINIBAND_ON_DEMAND_PAGING) && !IS_ENABLED(CONFIG_HIGHMEM)
#define SIW2_ODP true
int siw2_odp_init(struct siw2_mr *mr, u64 start, u64 len, int access);
int siw2_odp_fault(struct siw2_mr *mr, u64 addr, u64 len, bool write);
bool siw2_odp_present_locked(struct siw2_mr *mr, u64 addr, u64 len,
			     bool write);
void *siw2_odp_va_locked(struct siw2_mr *mr, u64 addr);
int siw2_odp_advise_mr(struct ib_pd *pd,
		       enum ib_uverbs_advise_mr_advice advice, u32 flags,
		       struct ib_sge *sg_list, u32 num_sge,
		       struct uverbs_attr_bundle *attrs);
#else
#define SIW2_ODP false
static inline int siw2_odp_init(struct siw2_mr *mr, u64 start, u64 len,
				int access)
{
	return -EOPNOTSUPP;
}

static inline int siw2_odp_fault(struct siw2_mr *mr, u64 addr, u64 len,
				 bool write)
{
	return -EFAULT;
}

static inline bool siw2_odp_present_locked(struct siw2_mr *mr, u64 addr,
					   u64 len, bool write)
{
	return false;
}

static inline void *siw2_odp_va_locked(struct siw2_mr *mr, u64 addr)
{
	return NULL;
}

#define siw2_odp_advise_mr NULL
#endif

static inline struct siw2_mr *to_siw2_mr(struct ib_mr *ibmr)
{
	return container_of(ibmr, struct siw2_mr, base);
}

/* cm.c: the iWARP CM's endpoints (see llp.h for the QP's side) */
struct iw_cm_id;
struct iw_cm_conn_param;

int siw2_cm_init(void);
void siw2_cm_uninit(void);
void siw2_cm_uninit_device(struct siw2_device *sdev);
int siw2_cm_connect(struct iw_cm_id *id, struct iw_cm_conn_param *param);
int siw2_cm_accept(struct iw_cm_id *id, struct iw_cm_conn_param *param);
int siw2_cm_reject(struct iw_cm_id *id, const void *pdata, u8 pdata_len);

/* listen.c: the iWARP CM's listeners and listening sockets */
int siw2_listen_init(void);
void siw2_listen_uninit(void);
int siw2_cm_create_listen(struct iw_cm_id *id, int backlog);
int siw2_cm_destroy_listen(struct iw_cm_id *id);

/* sqpoll.c: send queue polling for user QPs */
struct siw2_sqpoller;
int siw2_sqpoll_init(void);
void siw2_sqpoll_uninit(void);
void siw2_sqpoll_init_qp(struct siw2_qp *qp);
void siw2_sqpoll_watch(struct siw2_qp *qp);
void siw2_sqpoll_unwatch(struct siw2_qp *qp);
#define SIW2_SQ_POLL_US_MAX 1000000U

/* conf.c: the device's settings and its siw2/ directory in sysfs */
void siw2_conf_init(struct siw2_device *sdev);
void siw2_conf_get(struct siw2_device *sdev, struct siw2_conf *conf);
extern const struct attribute_group siw2_attr_group;

/* stream.c: the data path of connected QPs (engine.h, llp.h) */
struct siw2_stream;
extern struct srcu_struct siw2_stream_srcu;
int siw2_stream_init(void);
void siw2_stream_uninit(void);
void siw2_stream_free(struct siw2_stream *s);

/* socket.c: kernel TCP sockets */
struct sock;
struct socket;
struct sockaddr_storage;

#define SIW2_SOCK_READ	BIT(0)	/* data, a new connection, or the peer's FIN */
#define SIW2_SOCK_STATE	BIT(1)	/* TCP state changed: connected, closed, reset */
#define SIW2_SOCK_WRITE	BIT(2)	/* room to send again */

/**
 * struct siw2_sock_cb - a watched socket's callback state (socket.c)
 * @notify: called with SIW2_SOCK_* from the socket's callbacks, in
 *	softirq or process context, with sk_callback_lock read-held
 * @data_ready: the callbacks found when watching began
 * @state_change: likewise
 * @write_space: likewise
 * @watching: siw2_sock_watch() installed the callbacks
 */
struct siw2_sock_cb {
	void (*notify)(struct siw2_sock_cb *cb, unsigned int events);
	void (*data_ready)(struct sock *sk);
	void (*state_change)(struct sock *sk);
	void (*write_space)(struct sock *sk);
	bool watching;
};

void siw2_sock_watch(struct socket *sock, struct siw2_sock_cb *cb);
void siw2_sock_unwatch(struct socket *sock, struct siw2_sock_cb *cb);
int siw2_sock_listen(struct net *net, const struct sockaddr_storage *addr,
		     bool v6only, int backlog, int tos, bool reserved,
		     struct siw2_sock_cb *cb, struct socket **res);
int siw2_sock_accept(struct socket *lsock, const struct siw2_sock_cb *lcb,
		     struct socket **res);
int siw2_sock_connect(struct net *net, const struct sockaddr_storage *laddr,
		      const struct sockaddr_storage *raddr, int tos,
		      bool reserved, struct siw2_sock_cb *cb,
		      struct socket **res);
int siw2_sock_connected(struct socket *sock);
int siw2_sock_send(struct socket *sock, const void *buf, size_t len);
int siw2_sock_recv(struct socket *sock, void *buf, size_t len, bool peek);
int siw2_sock_names(struct socket *sock, struct sockaddr_storage *local,
		    struct sockaddr_storage *peer);
bool siw2_sock_addr_on(struct net *net, const struct sockaddr_storage *addr,
		       struct net_device *ndev);
u16 siw2_sockaddr_port(const struct sockaddr_storage *addr);
void siw2_sockaddr_set_port(struct sockaddr_storage *addr, u16 port);
void siw2_sock_close(struct socket *sock, struct siw2_sock_cb *cb,
		     bool abortive);

#endif /* SIW2_H */
