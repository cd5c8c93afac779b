/* SPDX-License-Identifier: ((GPL-2.0 WITH Linux-syscall-note) OR BSD-2-Clause) */
/*
 * The ABI between siw2.ko and its rdma-core provider, libsiw2.
 *
 * This header is the single source of truth for everything both sides must
 * agree on: the uverbs ABI version, the sysfs attribute the provider matches
 * devices by, and the driver-private parts of uverbs commands and responses.
 */
#ifndef SIW2_ABI_H
#define SIW2_ABI_H

#include <linux/types.h>

/*
 * Bumped on any incompatible change. It is both the ib_device's
 * uverbs_abi_ver and the content of the sysfs attribute below.
 */
#define SIW2_ABI_VERSION 1

/*
 * siw2 has no rdma_driver_id of its own (it is not in the kernel's enum), so
 * the provider cannot match on a driver id. Every siw2 device instead carries
 * this attribute, relative to /sys/class/infiniband/<ibdev>/, holding
 * SIW2_ABI_VERSION in decimal. A device name is chosen by the user and proves
 * nothing; the attribute is set by the module only.
 */
#define SIW2_SYSFS_ABI_ATTR "siw2/abi_version"

/* Response to IB_USER_VERBS_CMD_GET_CONTEXT (alloc_ucontext). */
struct siw2_uresp_alloc_ctx {
	__u32 abi_version;
	__u32 dev_flags;
	__aligned_u64 reserved;
};

/*
 * Shared queues
 * =============
 *
 * Every queue (SQ, RQ, SRQ, CQ) is one mapping: a struct siw2_ring_ctl,
 * then SIW2_RING_CTL_SIZE bytes in, 'size' entries (a power of two) of the
 * queue's entry type. Kernel consumers use the same layout in kernel
 * memory, so there is one data path for both.
 *
 * Indices are free running u32 counters; an entry's slot is
 * index & (size - 1). Exactly one side writes each index:
 *
 *   queue      producer (writes prod)   consumer (writes cons)
 *   SQ, RQ,    user (provider)          kernel
 *   SRQ
 *   CQ         kernel                   user (provider)
 *
 * Ordering (correct on weakly ordered CPUs too):
 * - The producer fills the entry, then stores prod with release semantics
 *   (smp_store_release / __atomic_store_n(..., __ATOMIC_RELEASE)).
 * - The consumer loads prod with acquire semantics, then reads entries up
 *   to it, then stores cons with release semantics, after which the slots
 *   belong to the producer again.
 * - The producer loads cons with acquire semantics to find free slots.
 *
 * The kernel never trusts shared memory: it copies an entry out once
 * (READ_ONCE) and validates the copy, and treats any prod/cons value that
 * claims more than 'size' outstanding entries as a broken queue (the QP or
 * CQ goes to error), never as an index to follow.
 *
 * CQ notification: the user arms the CQ by storing SIW2_CQ_ARM_NEXT or
 * SIW2_CQ_ARM_SOLICITED into ctl->flags. After storing a CQE's prod, the
 * kernel issues a full barrier (smp_mb) and then exchanges ctl->flags with
 * 0 when the new CQE satisfies the arm; if it did, it raises the event. The
 * provider issues a full barrier between its store of the arm and any
 * later load of prod. With both barriers, a CQE produced concurrently with
 * arming is either seen by the application's next poll or raises an event;
 * it cannot be lost (libibverbs' req_notify_cq contract).
 *
 * SQ doorbell: after publishing SQEs the provider loads ctl->flags; while
 * SIW2_SQ_NEED_WAKEUP is set (nothing in the kernel is watching the queue)
 * it rings the doorbell, which is IB_USER_VERBS_CMD_POST_SEND with no work
 * requests. The kernel clears the bit while the QP is in RTS and something
 * watches: the QP's send engine, from the moment it starts (a doorbell's
 * system call, its work item, a resume once the socket has room) until it
 * finds the queue empty, and the SQ poller a doorbell may hand the QP to
 * (it polls prod for a per-device idle window, sysfs siw2/sq_poll_us).
 * Posts while the engine is at work, from any thread, thus make no system
 * call; the provider must not cache the bit.
 *
 * The doorbell check is a store of prod followed by a load of flags, so the
 * provider issues a full barrier between the two. The kernel, mirroring it,
 * sets NEED_WAKEUP when its last watcher stops, issues smp_mb and loads
 * prod once more: an entry published concurrently with the kernel going
 * idle is seen by that load (the engine runs again) or its poster sees the
 * bit and rings. The kernel sets the bit whenever the QP leaves RTS, so
 * that posts to a QP in the error state are flushed.
 *
 * RQ doorbell: RQEs are normally consumed by arriving messages and need no
 * system call. While the QP is in the error state nothing arrives, yet RQEs
 * posted then must still complete (flushed). The kernel therefore sets
 * SIW2_RQ_NEED_WAKEUP in the RQ's ctl->flags when the QP enters the error
 * state (and clears it when the QP is reset); after publishing RQEs the
 * provider, with the same full barrier, loads ctl->flags and while the bit
 * is set rings IB_USER_VERBS_CMD_POST_RECV with no work requests, upon
 * which the kernel flushes the RQ. An SRQ has no doorbell.
 *
 * ib_core leaves both doorbell commands out of a new device's
 * uverbs_cmd_mask (their write methods then fail with EOPNOTSUPP): the
 * kernel sets IB_USER_VERBS_CMD_POST_SEND and IB_USER_VERBS_CMD_POST_RECV
 * in it before registering the device.
 *
 * Mapping: a ring is mapped with mmap(NULL, len, PROT_READ | PROT_WRITE,
 * MAP_SHARED, cmd_fd, key), key being the mmap_key, sq_key or rq_key of
 * the create response and len exactly SIW2_RING_CTL_SIZE + size *
 * sizeof(entry) rounded up to the page size.
 *
 * Gone: when it destroys a user queue's object, whether the process asked
 * or the device is going away under it (the core disassociates the
 * process, which keeps its mappings), the kernel stores
 * SIW2_RING_GONE into ctl->flags with release semantics, after its last
 * store of prod. Nothing in the ring moves after that. The provider then
 * fails posts with EIO, and a poll that finds the CQ empty loads flags
 * with acquire semantics and, seeing the bit, loads prod once more and
 * fails with EIO only if the CQ is still empty: the last completions are
 * delivered, and a process that never reads its async events still
 * learns that the device is gone.
 *
 * CQ resize: the resized ring is a new mapping (the key in struct
 * siw2_uresp_resize_cq). The kernel copies the unpolled CQEs over and the
 * free running indices continue: the new ring's prod and cons are those
 * of the old one, so the provider keeps its consumer index. The old
 * mapping receives nothing more and should be unmapped.
 */
#define SIW2_RING_CTL_SIZE 256

struct siw2_ring_ctl {
	__u32 prod;
	__u32 pad0[15];		/* prod and cons on separate cache lines */
	__u32 cons;
	__u32 pad1[15];
	__u32 flags;		/* SIW2_RING_GONE, SIW2_SQ_* or SIW2_CQ_* */
	__u32 pad2[15];
};

/* siw2_ring_ctl.flags of any queue, written by the kernel ("Gone") */
#define SIW2_RING_GONE		(1U << 31)

/* siw2_ring_ctl.flags of a send queue, written by the kernel */
#define SIW2_SQ_NEED_WAKEUP	(1U << 0)

/* siw2_ring_ctl.flags of a QP's receive queue, written by the kernel */
#define SIW2_RQ_NEED_WAKEUP	(1U << 0)

/* siw2_ring_ctl.flags of a CQ: the arm, written by the user */
#define SIW2_CQ_ARM_NEXT	(1U << 0)
#define SIW2_CQ_ARM_SOLICITED	(1U << 1)

#define SIW2_UMAX_SGE 6
#define SIW2_UMAX_INLINE 192
/* An RDMA Read lands in one local buffer: the device's max_sge_rd. */
#define SIW2_MAX_SGE_RD 1

struct siw2_sge {
	__aligned_u64 addr;
	__u32 length;
	__u32 lkey;
};

/* siw2_sqe.opcode */
enum siw2_opcode {
	SIW2_OP_SEND = 0,
	SIW2_OP_SEND_INV = 1,		/* invalidates imm_inv at the peer */
	SIW2_OP_WRITE = 2,
	SIW2_OP_WRITE_IMM = 3,		/* RFC 7306: Write, then Immediate Data */
	SIW2_OP_SEND_IMM = 4,		/* RFC 7306: Immediate Data alone */
	SIW2_OP_READ = 5,
	SIW2_OP_READ_INV = 6,		/* kernel only: invalidates the sink lkey */
	SIW2_OP_ATOMIC_CMP_SWP = 7,
	SIW2_OP_ATOMIC_FETCH_ADD = 8,
	SIW2_OP_LOCAL_INV = 9,
	SIW2_OP_REG_MR = 10,		/* kernel only */
	SIW2_OP_BIND_MW = 11,		/* bind (or unbind) a memory window */
	SIW2_OP_MAX
};

/* siw2_sqe.flags */
#define SIW2_WQE_SIGNALED	(1U << 0)
#define SIW2_WQE_SOLICITED	(1U << 1)
#define SIW2_WQE_FENCE		(1U << 2)
#define SIW2_WQE_INLINE		(1U << 3)

/*
 * What a SIW2_OP_BIND_MW entry binds. The window is the one whose STag
 * has the index of the entry's 'rkey'; 'rkey' is the STag the window
 * answers to once bound (the index and a new key, ibv_inc_rkey()). The
 * window covers [addr, addr + length) of the region whose lkey is
 * 'mr_lkey', at the region's own addresses (not zero based), with the
 * IB_ACCESS_REMOTE_* rights in 'access' (the ibv_access_flags values).
 * A length of 0 unbinds a type 1 window (mr_lkey is then not looked at).
 */
struct siw2_bind_mw {
	__aligned_u64 addr;
	__aligned_u64 length;
	__u32 mr_lkey;
	__u32 access;
};

/*
 * A send queue entry, 256 bytes. With SIW2_WQE_INLINE, num_sge is 0,
 * inline_len bytes of data follow in 'inline_data'; otherwise num_sge
 * entries of 'sge' are valid. A SIW2_OP_BIND_MW entry has num_sge 0 and
 * its arguments in 'bind'.
 */
struct siw2_sqe {
	__aligned_u64 wr_id;
	__u8 opcode;
	__u8 flags;
	__u8 num_sge;
	__u8 rsvd0;
	__u32 imm_inv;		/* immediate data (as given) or an rkey */
	__aligned_u64 raddr;
	__u32 rkey;
	__u32 inline_len;
	__aligned_u64 compare_add;
	__aligned_u64 swap;
	__aligned_u64 rsvd1[2];
	union {
		struct siw2_sge sge[SIW2_UMAX_SGE];
		__u8 inline_data[SIW2_UMAX_INLINE];
		struct siw2_bind_mw bind;
	};
};

/*
 * Which SQEs the kernel executes, whoever wrote them: a known opcode and
 * flags; inline data only for Sends and Writes, and then no SGEs; at most
 * SIW2_MAX_SGE_RD SGEs for a Read; exactly one SGE of 8 bytes for an
 * Atomic (RFC 7306: one 64-bit word comes back); no data at all for a
 * Send with Immediate Data (RFC 7306 carries none with it), a Local
 * Invalidate, a fast registration or a window's bind. The kernel-only
 * opcodes name kernel objects and are valid only when @kernel_ops is
 * set, for a kernel consumer's QP.
 *
 * On top of this rule the kernel applies the QP's own limits (its
 * max_send_sge and max_inline), which the provider applies as it writes
 * the SGEs or the inline data. The provider checks each SQE it builds
 * with this same function, so a request the kernel would fail is refused
 * when it is posted instead.
 *
 * Returns nonzero if @sqe is valid.
 */
static __inline__ int siw2_sqe_valid(const struct siw2_sqe *sqe,
				     int kernel_ops)
{
	__u8 op = sqe->opcode;

	if (op >= SIW2_OP_MAX)
		return 0;
	if (sqe->flags & ~(SIW2_WQE_SIGNALED | SIW2_WQE_SOLICITED |
			   SIW2_WQE_FENCE | SIW2_WQE_INLINE))
		return 0;
	if (!kernel_ops && (op == SIW2_OP_READ_INV || op == SIW2_OP_REG_MR))
		return 0;
	if (sqe->flags & SIW2_WQE_INLINE)
		return !sqe->num_sge &&
		       (op == SIW2_OP_SEND || op == SIW2_OP_SEND_INV ||
			op == SIW2_OP_WRITE || op == SIW2_OP_WRITE_IMM);
	switch (op) {
	case SIW2_OP_READ:
	case SIW2_OP_READ_INV:
		return sqe->num_sge <= SIW2_MAX_SGE_RD;
	case SIW2_OP_ATOMIC_CMP_SWP:
	case SIW2_OP_ATOMIC_FETCH_ADD:
		return sqe->num_sge == 1 &&
		       sqe->sge[0].length == sizeof(__u64);
	case SIW2_OP_SEND_IMM:
	case SIW2_OP_LOCAL_INV:
	case SIW2_OP_REG_MR:
	case SIW2_OP_BIND_MW:
		return !sqe->num_sge;
	default:
		return 1;
	}
}

/* A receive queue entry (RQ and SRQ), 128 bytes. */
struct siw2_rqe {
	__aligned_u64 wr_id;
	__u8 num_sge;
	__u8 rsvd0[7];
	struct siw2_sge sge[SIW2_UMAX_SGE];
	__aligned_u64 rsvd1[2];
};

/* siw2_cqe.opcode */
enum siw2_cqe_opcode {
	SIW2_WC_SEND = 0,
	SIW2_WC_WRITE = 1,
	SIW2_WC_READ = 2,
	SIW2_WC_COMP_SWAP = 3,
	SIW2_WC_FETCH_ADD = 4,
	SIW2_WC_LOCAL_INV = 5,
	SIW2_WC_REG_MR = 6,
	SIW2_WC_RECV = 7,
	SIW2_WC_RECV_IMM = 8,		/* an RFC 7306 Immediate Data message */
	SIW2_WC_RECV_WRITE_IMM = 9,	/* Write followed by Immediate Data */
	SIW2_WC_BIND_MW = 10,
};

/* siw2_cqe.flags */
#define SIW2_CQE_WITH_IMM	(1U << 0)
#define SIW2_CQE_WITH_INV	(1U << 1)
#define SIW2_CQE_SOLICITED	(1U << 2)

/*
 * A completion, 32 bytes. 'status' uses the IB/ibv work completion status
 * numbering (identical in the kernel and in libibverbs).
 */
struct siw2_cqe {
	__aligned_u64 wr_id;
	__u8 opcode;
	__u8 status;
	__u8 flags;
	__u8 rsvd0;
	__u32 byte_len;
	__u32 imm_inv;		/* immediate data or the invalidated rkey */
	__u32 qp_num;
	__u32 vendor_err;
	__u32 rsvd1;
};

/* Driver data of create_cq's response. */
struct siw2_uresp_create_cq {
	__u32 cq_id;
	__u32 num_cqe;		/* entries in the ring, a power of two */
	__aligned_u64 mmap_key;	/* offset to mmap() the ring at */
};

/* Driver data of resize_cq's response: the resized ring is a new mapping. */
struct siw2_uresp_resize_cq {
	__u32 num_cqe;
	__u32 rsvd;
	__aligned_u64 mmap_key;
};

/*
 * Driver data of create_qp's response. sq_key/rq_key are 0 for absent
 * queues (no ring is ever mapped at offset 0); num_sqe/num_rqe != 0 also
 * tells a present queue.
 */
struct siw2_uresp_create_qp {
	__u32 qp_id;
	__u32 num_sqe;
	__u32 num_rqe;
	__u32 rsvd;
	__aligned_u64 sq_key;
	__aligned_u64 rq_key;
};

/* Driver data of create_srq's response. */
struct siw2_uresp_create_srq {
	__u32 num_rqe;
	__u32 rsvd;
	__aligned_u64 rq_key;
};

#endif /* SIW2_ABI_H */
