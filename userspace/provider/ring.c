// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * libsiw2: mapping the kernel's shared queues, filling receive queue
 * entries, which a QP's RQ and an SRQ share, and the doorbell test every
 * producer ring shares.
 *
 * Layout, index ownership and the memory ordering every access here
 * follows are specified in siw2-abi.h ("Shared queues"). The kernel
 * validates whatever it reads from a ring, so these helpers check user
 * input for clear errors, not to protect the kernel.
 */
#include <errno.h>
#include <stdint.h>
#include <string.h>
#include <assert.h>
#include <sys/mman.h>
#include <unistd.h>

#include "siw2.h"

static bool is_pow2(uint32_t n)
{
	return n && !(n & (n - 1));
}

/*
 * Maps the ring the kernel announced as (@key, @num entries of @ent_size
 * bytes). Whether a queue exists is the caller's knowledge (a QP's RQ
 * does not with an SRQ), not the key's: the kernel never maps a ring at
 * offset 0, but nothing here relies on that. A size that is not a power
 * of two is a kernel that does not speak this provider's ABI: EPROTO
 * rather than a guess.
 */
int siw2_ring_map(struct siw2_ring *ring, int cmd_fd, uint64_t key,
		  uint32_t num, size_t ent_size)
{
	size_t len;
	void *p;

	if (!is_pow2(num) ||
	    num > (SIZE_MAX - SIW2_RING_CTL_SIZE) / ent_size)
		return EPROTO;
	len = SIW2_RING_CTL_SIZE + (size_t)num * ent_size;

	p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, cmd_fd,
		 (off_t)key);
	if (p == MAP_FAILED)
		return errno;

	ring->ctl = p;
	ring->ents = (char *)p + SIW2_RING_CTL_SIZE;
	ring->map_len = len;
	ring->ent_size = ent_size;
	ring->num = num;
	return 0;
}

void siw2_ring_unmap(struct siw2_ring *ring)
{
	if (!ring->ctl)
		return;
	munmap(ring->ctl, ring->map_len);
	ring->ctl = NULL;
}

/*
 * Fills RQEs for @wr and what follows it, publishes them, and stops at the
 * first one that is invalid (EINVAL) or finds the ring full (ENOMEM),
 * reporting it in @bad_wr; the ones before it are posted, which is what
 * ibv_post_recv() promises. A ring whose object the kernel destroyed
 * takes nothing (EIO). The caller holds the queue's lock and learns from
 * @posted whether a doorbell may be due.
 */
int siw2_ring_post_recv(struct siw2_ring *ring, uint32_t max_sge,
			struct ibv_recv_wr *wr, struct ibv_recv_wr **bad_wr,
			uint32_t *posted)
{
	struct siw2_ring_ctl *ctl = ring->ctl;
	uint32_t prod, cons, n = 0;
	int err = 0;

	if (siw2_ring_gone(ring)) {
		*bad_wr = wr;
		*posted = 0;
		return EIO;
	}
	prod = __atomic_load_n(&ctl->prod, __ATOMIC_RELAXED);
	cons = __atomic_load_n(&ctl->cons, __ATOMIC_ACQUIRE);

	for (; wr; wr = wr->next, n++) {
		struct siw2_rqe *rqe;
		int i;

		if (wr->num_sge < 0 || (uint32_t)wr->num_sge > max_sge) {
			err = EINVAL;
			break;
		}
		/* A kernel cons past prod reads as full: never overwrite. */
		if (prod + n - cons >= ring->num) {
			cons = __atomic_load_n(&ctl->cons, __ATOMIC_ACQUIRE);
			if (prod + n - cons >= ring->num) {
				err = ENOMEM;
				break;
			}
		}

		rqe = siw2_ring_ent(ring, prod + n);
		rqe->wr_id = wr->wr_id;
		rqe->num_sge = (uint8_t)wr->num_sge;
		memset(rqe->rsvd0, 0, sizeof(rqe->rsvd0));
		memset(rqe->rsvd1, 0, sizeof(rqe->rsvd1));
		for (i = 0; i < wr->num_sge; i++) {
			rqe->sge[i].addr = wr->sg_list[i].addr;
			rqe->sge[i].length = wr->sg_list[i].length;
			rqe->sge[i].lkey = wr->sg_list[i].lkey;
		}
	}

	if (n)
		__atomic_store_n(&ctl->prod, prod + n, __ATOMIC_RELEASE);
	if (err)
		*bad_wr = wr;
	*posted = n;
	return err;
}

/*
 * siw2-abi.h, "SQ doorbell"/"RQ doorbell": the full barrier orders the
 * producer's store of prod before this load of flags; it pairs with the
 * kernel's smp_mb between setting a NEED_WAKEUP flag and its last look at
 * prod.
 */
bool siw2_ring_need_wakeup(const struct siw2_ring *ring, uint32_t bit)
{
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	return __atomic_load_n(&ring->ctl->flags, __ATOMIC_RELAXED) & bit;
}

/*
 * A doorbell is a POST_SEND or POST_RECV command that carries no work
 * requests (the kernel reads the ring). It is written to the command fd
 * directly: libibverbs' ibv_cmd_post_*() would send it through the ioctl
 * interface's INVOKE_WRITE method whenever the kernel has one, which
 * parses an attribute bundle around the same command and costs a
 * noticeable part of a small message's latency. The two commands share
 * one layout (struct ib_uverbs_post_send, struct ib_uverbs_post_recv).
 * Where write() is refused, ibv_cmd_post_*() with no work requests is the
 * same doorbell.
 */
int siw2_doorbell(struct ibv_qp *qp, uint32_t command)
{
	struct siw2_context *ctx = siw2_context_of(qp->context);
	struct ib_uverbs_post_send_resp resp;
	struct {
		struct ib_uverbs_cmd_hdr hdr;
		struct ib_uverbs_post_send cmd;
	} req = {
		.hdr = {
			.command = command,
			.in_words = sizeof(req) / 4,
			.out_words = sizeof(resp) / 4,
		},
		.cmd = {
			.response = (uintptr_t)&resp,
			.qp_handle = qp->handle,
			/* The kernel wants room for one, though none follows. */
			.wqe_size = sizeof(struct ib_uverbs_send_wr),
		},
	};

	static_assert(sizeof(struct ib_uverbs_post_send) ==
		      sizeof(struct ib_uverbs_post_recv), "doorbell layout");
	if (!__atomic_load_n(&ctx->doorbell_ioctl, __ATOMIC_RELAXED)) {
		if (write(qp->context->cmd_fd, &req, sizeof(req)) ==
		    sizeof(req))
			return 0;
		if (errno != EACCES)
			return errno ? errno : EIO;
		/*
		 * The kernel refuses write() on a uverbs file to a process
		 * whose credentials are not the opener's any more (after
		 * setuid(), say). Its ioctl interface, which libibverbs uses
		 * for every other command, does not: the doorbells of this
		 * context take that way from now on.
		 */
		__atomic_store_n(&ctx->doorbell_ioctl, true, __ATOMIC_RELAXED);
	}
	if (command == IB_USER_VERBS_CMD_POST_SEND) {
		struct ibv_send_wr *bad_send;

		return ibv_cmd_post_send(qp, NULL, &bad_send);
	}
	struct ibv_recv_wr *bad_recv;

	return ibv_cmd_post_recv(qp, NULL, &bad_recv);
}
