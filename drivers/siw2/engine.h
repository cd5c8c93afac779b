/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The data path of a connected QP: struct siw2_stream ties one TCP socket
 * (handed over by the CM, see llp.h) to one QP and carries the state of
 * both engines. stream.c attaches and tears the stream down, rx.c runs in
 * the socket's data_ready callback, tx.c wherever work is kicked.
 *
 * Contexts and ownership:
 * - @rx is touched only by the receive path, which runs under the socket
 *   lock (data_ready in softirq, or process context at attach and in the
 *   fault work, rx.c "Faults"), so it needs no lock of its own.
 * - @tx is touched only by the holder of @tx_mutex (tx.c): the thread that
 *   rang a doorbell or posted, or the stream's work item. Softirq context
 *   never takes it; it queues the work instead.
 * - What both sides share (@ord, @orq, @ird, @inq, @recs, @term, the
 *   retire index) is under @lock, taken with interrupts off. Lock order:
 *   @lock before the QP's sq_lock, before a CQ's lock. Two exceptions
 *   for the send engine: a record at or past @fetched is its own until
 *   it publishes @fetched, and it may look at @inq_tail unlocked to find
 *   the inbound queue empty (a Request added later kicks it again).
 *
 * Lifetime: the stream is allocated by siw2_stream_attach() and stays
 * the QP's after it closed, until destroy_qp frees it (siw2_stream_free())
 * or the QP, reset, takes a new connection. Readers that find it through
 * the QP without its lock (a doorbell's send engine, a poller, restrack,
 * a shutdown) do so inside siw2_stream_srcu, so a stream replaced by the
 * next one is freed after a grace period. While the socket is in use the
 * stream holds a reference on the QP, dropped by the close work after
 * siw2_cm_llp_closed(); destroy_qp waits for it.
 */
#ifndef SIW2_ENGINE_H
#define SIW2_ENGINE_H

#include <linux/bvec.h>
#include <linux/mutex.h>
#include <linux/uio.h>
#include <linux/workqueue.h>

#include "siw2.h"
#include "mpa.h"
#include "ddp.h"
#include "rdmap.h"
#include <rdma/siw2-abi.h>

/* struct siw2_stream.flags */
enum {
	SIW2_S_ATTACHING,	/* siw2_stream_attach() is not done with it */
	SIW2_S_TX_PENDING,	/* the send engine has work to look at */
	SIW2_S_TX_ALLOWED,	/* RFC 5044 7.1.2: the responder may send */
	SIW2_S_TERM,		/* a Terminate is queued in @term */
	SIW2_S_CLOSING,		/* the close work was queued */
	SIW2_S_DESTROY,		/* destroy_qp closes: FIN only on a boundary */
	SIW2_S_CLOSED,		/* the socket is no longer used */
	SIW2_S_RTR_READ,	/* initiator: a zero-length Read RTR is out */
};

/*
 * Completion record of one fetched SQE, indexed by its ring slot: SQEs
 * complete in order, but a Read's completion waits for its response while
 * later SQEs are done already.
 */
struct siw2_wqe_rec {
	u64 wr_id;
	u32 byte_len;
	u8 opcode;
	u8 flags;
	u8 status;
	bool done;
};

/* An outstanding RDMA Read or Atomic Request of ours (ORD). */
struct siw2_orq_entry {
	struct siw2_rdmap_read rd;	/* what its response must match */
	u32 slot;		/* its SQE's record */
	u32 inval;		/* READ_INV: the sink STag to invalidate */
	bool do_inval;
};

/*
 * An inbound RDMA Read or Atomic Request being answered (IRD), in the
 * inbound request queue (inq; "irq" would read as an interrupt).
 */
struct siw2_inq_entry {
	struct siw2_mr *mr;	/* the source region, held; NULL if len 0 */
	u32 src_stag;		/* ... which was found by this STag */
	u32 sink_stag;
	u64 sink_to;
	u32 len;
	u64 src_to;
	bool counted;		/* holds an IRD credit */
	bool atomic;		/* RFC 7306: answer with an Atomic Response */
	u32 req_id;		/* ... for this Request Identifier */
	u64 orig;		/* ... carrying this Original Value */
};

/* Where the payload of the message being sent comes from. */
struct siw2_tx_src {
	u32 nr;
	const u8 *inline_data;	/* inline SQE data, or NULL */
	bool copy;		/* an entry's MR may be invalidated (tx.c) */
	struct {
		struct siw2_mr *mr;
		u32 stag;	/* what @mr was found by */
		u64 addr;
		u32 len;
		bool copy;	/* copied under its lock, never referenced */
	} sge[SIW2_MAX_SGE];
};

/* Room for the payload a batch copies (batch.c). */
#define SIW2_TX_COPY_BYTES SZ_64K
#define SIW2_TX_COPY_PAGES (SIW2_TX_COPY_BYTES / PAGE_SIZE)

enum siw2_tx_fin {
	SIW2_FIN_NONE,
	SIW2_FIN_SQE,		/* the current SQE's message went out */
	SIW2_FIN_IRQ,		/* a Read or Atomic Response went out */
	SIW2_FIN_TERM,		/* the Terminate went out */
	SIW2_FIN_RTR,		/* the RTR went out */
};

#define SIW2_TX_BVECS 64

/* Send engine state, owned by the holder of tx_mutex. */
struct siw2_stream_tx {
	struct siw2_mpa_tx mpa;
	struct siw2_ddp_tx ddp;
	struct siw2_tx_src src;
	struct siw2_sqe sqe;	/* copy of the SQE in progress */
	u32 slot;		/* its record */
	bool busy;		/* a message is being segmented */
	bool sqe_wait;		/* @sqe was fetched but waits (ORD, fence) */
	bool imm_next;		/* WRITE_IMM: the Immediate Data follows */
	bool rtr_done;		/* no RTR to send, or it was started */
	u32 msg_len;		/* payload octets of the message */
	u32 write_len;		/* WRITE_IMM: those of its Write */
	enum siw2_tx_fin fin;	/* what completes when the batch is out */
	u32 msn[SIW2_QN_COUNT];
	/* The batch being sent: bvecs over @stage and payload pages. */
	struct page *stage;
	u32 stage_used;
	/* Payload copied out of regions that may be invalidated. */
	struct page *copy[SIW2_TX_COPY_PAGES];
	u32 copy_used;
	/* Zero-copy (zcopy.c): the message's object, and its next stage. */
	struct siw2_zc *zc;
	struct page *stage_next;
	bool batch_zc;		/* the batch goes by reference */
	struct bio_vec bv[SIW2_TX_BVECS];
	u32 nbv;
	u32 batch_len;
	struct iov_iter iter;
	bool iter_live;
	bool stalled;		/* the socket was full: traced (trace.h) */
};

/*
 * Where the receive path is. It only moves down this list (rx.c,
 * rx_enter()), one step at a time but for the last two, which any state
 * may enter: a check failed, or the stream is over.
 */
enum siw2_rx_state {
	SIW2_RX_FIRST_FPDU = 0,	/* no FPDU arrived yet (RFC 5044 7.1.2) */
	SIW2_RX_FIRST_MSG,	/* no message arrived complete (RFC 6581 RTR) */
	SIW2_RX_RUN,
	SIW2_RX_TERM_PENDING,	/* @pend_term waits for the FPDU's end */
	SIW2_RX_DEAD,		/* nothing more is processed */
};

/*
 * Where the receive path is in the Writes it receives, for RFC 7306
 * Write with Immediate Data: an Immediate Data message is the Write's
 * own only when it directly follows a Write that ended. Other messages
 * may arrive between a Write's segments and leave it where it was.
 */
enum siw2_rx_write {
	SIW2_RX_WRITE_NONE = 0,	/* the last message ended was no Write */
	SIW2_RX_WRITE_MID,	/* a Write's segments arrive, not the last */
	SIW2_RX_WRITE_ENDED,	/* the last message ended was a Write */
};

/*
 * What the receive path waits for when a page of an on-demand paging MR
 * it needs is not mapped (rx.c, "Faults"): the fault work maps it and
 * then does what could not be done.
 */
enum siw2_rx_wait {
	SIW2_RX_WAIT_NONE = 0,
	SIW2_RX_WAIT_PLACE,		/* to place @bounce, then end the FPDU */
	SIW2_RX_WAIT_READ_REQ,		/* to answer a Read Request */
	SIW2_RX_WAIT_ATOMIC_REQ,	/* to execute an Atomic Request */
	SIW2_RX_WAIT_ATOMIC_RESP,	/* to deliver an Atomic Response */
};

/* Receive engine state, owned by the receive path. */
struct siw2_stream_rx {
	struct siw2_mpa_rx mpa;
	struct siw2_ddp_rx ddp;
	enum siw2_rx_state state;
	struct siw2_term_info pend_term;
	/* The segment being received. */
	u8 cls;
	struct siw2_rdmap_hdr hdr;	/* its header */
	u32 seg_len;		/* its payload octets */
	enum siw2_rdmap_rx_disp disp;	/* what RDMAP's rules made of it */
	struct siw2_mr *mr;	/* tagged: the region placed into */
	u64 to;			/* tagged: TO of the segment's payload */
	/* The Send on queue 0 being received. */
	bool have_rqe;
	struct siw2_rqe rqe;
	u32 rqe_len;
	struct siw2_mr *sge_mr;	/* cache for the current scatter entry */
	u32 sge_idx;
	/* The Write being received, or just ended (rx.c, write_track()). */
	enum siw2_rx_write write;
	u32 write_len;		/* its octets so far */
	/*
	 * A wait for a fault (rx.c, "Faults"). While @paused the socket's
	 * octets stay queued and only the fault work touches the rest: the
	 * miss without the socket lock (queue_work() orders the receive
	 * path's writes before it), the others under it.
	 */
	enum siw2_rx_wait wait;
	bool paused;
	u8 *bounce;		/* WAIT_PLACE: payload from @bounce_at on */
	u32 bounce_len;		/* ... octets in it */
	u32 bounce_size;	/* ... the rest of the segment's payload */
	u32 bounce_done;	/* ... octets of it placed (a Send's) */
	u64 bounce_at;		/* ... its address (tagged) or MO (Send) */
	struct siw2_mr *miss_mr;	/* held: the MR to fault */
	u64 miss_addr;
	u64 miss_len;
	u64 miss_ahead;		/* ... and from @miss_addr to here at best */
	bool miss_write;
	bool read_faulted;	/* WAIT_READ_REQ: the source was faulted */
	u32 aresp_idx;		/* WAIT_ATOMIC_RESP: its ORQ entry */
	u64 aresp_orig;		/* ... and Original Value */
	struct work_struct fault_work;
};

struct siw2_stream {
	struct siw2_qp *qp;
	struct siw2_device *sdev;
	struct socket *sock;
	struct siw2_cep *cep;
	struct siw2_sock_cb cb;
	struct siw2_mpa_conn conn;
	bool initiator;
	bool tx_zerocopy;	/* the connection's setting (zcopy.c) */
	unsigned long flags;
	int close_reason;
	bool abortive;

	spinlock_t lock;	/* see above */
	struct siw2_wqe_rec *recs;
	u32 rec_mask;
	u32 retire;		/* SQ index of the oldest unretired record */
	u32 fetched;		/* SQ index past the last fetched SQE */
	struct siw2_rdmap_ord ord;
	bool ord_wait;		/* an SQE waits for an ORD credit or its fence */
	struct siw2_orq_entry *orq;	/* ord.max entries and more */
	u32 orq_mask;			/* a power of 2, less 1 */
	u32 orq_head;
	u32 orq_tail;
	struct siw2_rdmap_ird ird;
	struct siw2_inq_entry *inq;	/* ird.max entries, the RTR, more */
	u32 inq_mask;			/* a power of 2, less 1 */
	u32 inq_head;
	u32 inq_tail;
	struct siw2_term_info term;

	struct list_head zc_list;	/* zcopy.c's zc_lock */
	struct mutex tx_mutex;	/* see above */
	struct work_struct tx_work;
	int tx_cpu;		/* where tx_work runs; see tx.c */
	struct work_struct close_work;
	struct work_struct free_work;	/* once the next stream replaced it */
	struct rcu_head rcu;
	struct siw2_stream_tx tx;
	struct siw2_stream_rx rx;
};

/*
 * The outbound (ORQ) and inbound (INQ) request queues are rings sized to
 * the depths negotiated for the connection, not to siw2's maxima: an idle
 * QP with IRD and ORD 1 keeps a few dozen octets here, not 11 KiB. Their
 * indices run freely; an entry is found by masking.
 */
static inline struct siw2_orq_entry *siw2_orq_at(struct siw2_stream *s,
						 u32 i)
{
	return &s->orq[i & s->orq_mask];
}

static inline struct siw2_inq_entry *siw2_inq_at(struct siw2_stream *s,
						 u32 i)
{
	return &s->inq[i & s->inq_mask];
}

/* No room for one more inbound request (a bound IRD accounting keeps). */
static inline bool siw2_inq_full(const struct siw2_stream *s)
{
	return s->inq_tail - s->inq_head > s->inq_mask;
}

/* stream.c */
extern struct workqueue_struct *siw2_tx_wq;
extern struct workqueue_struct *siw2_fault_wq;
void siw2_stream_close(struct siw2_stream *s, int reason, bool abortive);
void siw2_stream_terminate(struct siw2_stream *s, const struct siw2_term_info *t);
void siw2_stream_free(struct siw2_stream *s);

/* zcopy.c */
struct ubuf_info;
#define SIW2_ZC_MIN_LEN (16 * 1024)
struct siw2_zc *siw2_zc_new(struct siw2_stream *s);
struct ubuf_info *siw2_zc_ubuf(struct siw2_zc *zc);
void siw2_zc_end(struct siw2_zc *zc, int slot);
void siw2_zc_detach(struct siw2_stream *s);
void siw2_tx_rec_done(struct siw2_stream *s, u32 slot);
int siw2_stream_init(void);
void siw2_stream_uninit(void);

/* tx.c */
void siw2_tx_kick(struct siw2_stream *s);
void siw2_tx_kick_async(struct siw2_stream *s);
void siw2_tx_resume(struct siw2_stream *s);
void siw2_tx_close(struct siw2_stream *s);
bool siw2_tx_begun(struct siw2_stream *s);
void siw2_tx_work(struct work_struct *work);
void siw2_tx_retire(struct siw2_stream *s);
void siw2_tx_release(struct siw2_stream *s);

/* rx.c */
void siw2_rx_data_ready(struct siw2_stream *s);
void siw2_rx_init(struct siw2_stream *s);
void siw2_rx_stop(struct siw2_stream *s);
void siw2_rx_release(struct siw2_stream *s);

#endif /* SIW2_ENGINE_H */
