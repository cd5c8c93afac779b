/* SPDX-License-Identifier: GPL-2.0 */
/*
 * siw2's tracepoints (events/siw2/ in tracefs): what a connection did.
 *
 *   siw2_cm_connect, siw2_cm_request, siw2_cm_accept, siw2_cm_reject,
 *   siw2_cm_rejected, siw2_cm_connect_fail
 *	the connection manager's steps, with both addresses (cm.c)
 *   siw2_mpa_terms
 *	what MPA negotiated, as the stream is attached (cm.c)
 *   siw2_qp_state
 *	every QP state change and why (qp.c)
 *   siw2_term_sent, siw2_term_rcvd
 *	Terminates and the fields of the header they name (stream.c, rx.c)
 *   siw2_qp_flush
 *	work requests completed with a flush error (qp.c)
 *   siw2_tx_stall, siw2_tx_unstall
 *	the send engine stopped on a full socket, and the batch it waited
 *	with accepted at last (tx.c)
 *
 * All are off until enabled, cost a static branch each when off, and go
 * to the trace ring buffer, never to the log: a peer can fill a buffer
 * an administrator asked for, not the log. The admin guide shows how to
 * use them. trace.c instantiates them.
 */
#undef TRACE_SYSTEM
#define TRACE_SYSTEM siw2

#if !defined(SIW2_TRACE_H) || defined(TRACE_HEADER_MULTI_READ)
#define SIW2_TRACE_H

#include <linux/in6.h>
#include <linux/socket.h>
#include <linux/tracepoint.h>
#include <rdma/ib_verbs.h>

#include "wire.h"
#include "mpa.h"
#include "rdmap.h"
#include "siw2.h"

TRACE_DEFINE_ENUM(SIW2_QP_CAUSE_MODIFY);
TRACE_DEFINE_ENUM(SIW2_QP_CAUSE_CM);
TRACE_DEFINE_ENUM(SIW2_QP_CAUSE_CM_FAIL);
TRACE_DEFINE_ENUM(SIW2_QP_CAUSE_TERM_SENT);
TRACE_DEFINE_ENUM(SIW2_QP_CAUSE_TERM_RCVD);
TRACE_DEFINE_ENUM(SIW2_QP_CAUSE_LLP_CLOSED);
TRACE_DEFINE_ENUM(SIW2_QP_CAUSE_LLP_ERROR);
TRACE_DEFINE_ENUM(SIW2_QP_CAUSE_RING);
TRACE_DEFINE_ENUM(SIW2_QP_CAUSE_DESTROY);
#define show_qp_cause(c)						\
	__print_symbolic(c, { SIW2_QP_CAUSE_MODIFY, "modify" },		\
			 { SIW2_QP_CAUSE_CM, "cm" },			\
			 { SIW2_QP_CAUSE_CM_FAIL, "cm_fail" },		\
			 { SIW2_QP_CAUSE_TERM_SENT, "term_sent" },	\
			 { SIW2_QP_CAUSE_TERM_RCVD, "term_rcvd" },	\
			 { SIW2_QP_CAUSE_LLP_CLOSED, "llp_closed" },	\
			 { SIW2_QP_CAUSE_LLP_ERROR, "llp_error" },	\
			 { SIW2_QP_CAUSE_RING, "ring" },		\
			 { SIW2_QP_CAUSE_DESTROY, "destroy" })

TRACE_DEFINE_ENUM(IB_QPS_RESET);
TRACE_DEFINE_ENUM(IB_QPS_INIT);
TRACE_DEFINE_ENUM(IB_QPS_RTR);
TRACE_DEFINE_ENUM(IB_QPS_RTS);
TRACE_DEFINE_ENUM(IB_QPS_SQD);
TRACE_DEFINE_ENUM(IB_QPS_SQE);
TRACE_DEFINE_ENUM(IB_QPS_ERR);
#define show_qp_state(s)						\
	__print_symbolic(s, { IB_QPS_RESET, "RESET" },			\
			 { IB_QPS_INIT, "INIT" }, { IB_QPS_RTR, "RTR" }, \
			 { IB_QPS_RTS, "RTS" }, { IB_QPS_SQD, "SQD" },	\
			 { IB_QPS_SQE, "SQE" }, { IB_QPS_ERR, "ERR" })

#define show_term_layer(l)						\
	__print_symbolic(l, { SIW2_LAYER_RDMAP, "rdmap" },		\
			 { SIW2_LAYER_DDP, "ddp" }, { SIW2_LAYER_LLP, "llp" })

/* The connection manager's steps; @status 0 but for the failures. */
DECLARE_EVENT_CLASS(siw2_cm_class,
	TP_PROTO(const struct ib_device *dev, const struct sockaddr_storage *laddr,
		 const struct sockaddr_storage *raddr, u32 qpn, int status),
	TP_ARGS(dev, laddr, raddr, qpn, status),
	TP_STRUCT__entry(
		__array(char, dev, IB_DEVICE_NAME_MAX)
		__array(u8, laddr, sizeof(struct sockaddr_in6))
		__array(u8, raddr, sizeof(struct sockaddr_in6))
		__field(u32, qpn)
		__field(int, status)
	),
	TP_fast_assign(
		strscpy(__entry->dev, dev->name, IB_DEVICE_NAME_MAX);
		memcpy(__entry->laddr, laddr, sizeof(struct sockaddr_in6));
		memcpy(__entry->raddr, raddr, sizeof(struct sockaddr_in6));
		__entry->qpn = qpn;
		__entry->status = status;
	),
	TP_printk("dev=%s laddr=%pISpc raddr=%pISpc qpn=%u status=%d",
		  __entry->dev, __entry->laddr, __entry->raddr, __entry->qpn,
		  __entry->status)
);

#define DEFINE_CM_EVENT(name)						\
	DEFINE_EVENT(siw2_cm_class, siw2_cm_##name,			\
		TP_PROTO(const struct ib_device *dev,			\
			 const struct sockaddr_storage *laddr,		\
			 const struct sockaddr_storage *raddr, u32 qpn,	\
			 int status),					\
		TP_ARGS(dev, laddr, raddr, qpn, status))

/* An active connect started: TCP handshake, then the MPA Request. */
DEFINE_CM_EVENT(connect);
/* A valid MPA Request arrived; the ULP hears of it now. */
DEFINE_CM_EVENT(request);
/* The ULP accepted a request: the Reply is sent. */
DEFINE_CM_EVENT(accept);
/* The ULP rejected a request: a Reply with R set is sent. */
DEFINE_CM_EVENT(reject);
/* The peer rejected our Request. */
DEFINE_CM_EVENT(rejected);
/* An active connect ended without a connection (@status). */
DEFINE_CM_EVENT(connect_fail);

/* What a connection negotiated (RFC 5044 7.1, RFC 6581). */
TRACE_EVENT(siw2_mpa_terms,
	TP_PROTO(const struct ib_device *dev, u32 qpn, bool initiator,
		 const struct siw2_mpa_conn *c),
	TP_ARGS(dev, qpn, initiator, c),
	TP_STRUCT__entry(
		__array(char, dev, IB_DEVICE_NAME_MAX)
		__field(u32, qpn)
		__field(bool, initiator)
		__field(u8, rev)
		__field(bool, enhanced)
		__field(bool, crc)
		__field(bool, tx_markers)
		__field(bool, rx_markers)
		__field(bool, p2p)
		__field(bool, large)
		__field(u8, rtr)
		__field(u16, ird)
		__field(u16, ord)
	),
	TP_fast_assign(
		strscpy(__entry->dev, dev->name, IB_DEVICE_NAME_MAX);
		__entry->qpn = qpn;
		__entry->initiator = initiator;
		__entry->rev = c->rev;
		__entry->enhanced = c->enhanced;
		__entry->crc = c->crc;
		__entry->tx_markers = c->tx_markers;
		__entry->rx_markers = c->rx_markers;
		__entry->p2p = c->p2p;
		__entry->large = c->large;
		__entry->rtr = c->rtr;
		__entry->ird = c->ird;
		__entry->ord = c->ord;
	),
	TP_printk("dev=%s qpn=%u %s rev=%u enhanced=%d crc=%d markers_tx=%d markers_rx=%d p2p=%d large_fpdu=%d rtr=0x%x ird=%u ord=%u",
		  __entry->dev, __entry->qpn,
		  __entry->initiator ? "initiator" : "responder",
		  __entry->rev, __entry->enhanced, __entry->crc,
		  __entry->tx_markers, __entry->rx_markers, __entry->p2p,
		  __entry->large, __entry->rtr, __entry->ird, __entry->ord)
);

TRACE_EVENT(siw2_qp_state,
	TP_PROTO(const struct ib_device *dev, u32 qpn, enum ib_qp_state old,
		 enum ib_qp_state new, enum siw2_qp_cause cause),
	TP_ARGS(dev, qpn, old, new, cause),
	TP_STRUCT__entry(
		__array(char, dev, IB_DEVICE_NAME_MAX)
		__field(u32, qpn)
		__field(unsigned int, old)
		__field(unsigned int, new)
		__field(unsigned int, cause)
	),
	TP_fast_assign(
		strscpy(__entry->dev, dev->name, IB_DEVICE_NAME_MAX);
		__entry->qpn = qpn;
		__entry->old = old;
		__entry->new = new;
		__entry->cause = cause;
	),
	TP_printk("dev=%s qpn=%u %s -> %s cause=%s", __entry->dev,
		  __entry->qpn, show_qp_state(__entry->old),
		  show_qp_state(__entry->new), show_qp_cause(__entry->cause))
);

/*
 * A Terminate (RFC 5040 4.8): its cause, which headers it carries
 * (hdrctl: M, D, R as on the wire) and, with D, the offending DDP
 * header's fields: tagged, its STag and TO; untagged, its QN, MSN and MO.
 * One received too malformed to parse ends in "malformed", its fields 0.
 */
DECLARE_EVENT_CLASS(siw2_term_class,
	TP_PROTO(const struct ib_device *dev, u32 qpn,
		 const struct siw2_term_info *t),
	TP_ARGS(dev, qpn, t),
	TP_STRUCT__entry(
		__array(char, dev, IB_DEVICE_NAME_MAX)
		__field(u32, qpn)
		__field(u8, layer)
		__field(u8, etype)
		__field(u8, ecode)
		__array(char, hdrctl, 4)
		__field(u16, seg_len)
		__field(u8, ddp_ctrl)
		__field(u8, rdmap_ctrl)
		__field(bool, tagged)
		__field(u32, stag)
		__field(u64, to)
		__field(u32, qn)
		__field(u32, msn)
		__field(u32, mo)
		__field(bool, parsed)
	),
	TP_fast_assign(
		const struct siw2_ddp_tagged_hdr *th =
			(const void *)t->ddp_hdr;
		const struct siw2_ddp_untagged_hdr *uh =
			(const void *)t->ddp_hdr;

		strscpy(__entry->dev, dev->name, IB_DEVICE_NAME_MAX);
		__entry->qpn = qpn;
		__entry->parsed = t->cause & SIW2_TERM_SET;
		__entry->layer = SIW2_TERM_CAUSE_LAYER(t->cause);
		__entry->etype = SIW2_TERM_CAUSE_ETYPE(t->cause);
		__entry->ecode = SIW2_TERM_CAUSE_ECODE(t->cause);
		snprintf(__entry->hdrctl, sizeof(__entry->hdrctl), "%s%s%s",
			 t->hdrctl & SIW2_TERM_M ? "M" : "",
			 t->hdrctl & SIW2_TERM_D ? "D" : "",
			 t->hdrctl & SIW2_TERM_R ? "R" : "");
		__entry->seg_len = t->seg_len;
		__entry->ddp_ctrl = t->ddp_len ? th->ddp_ctrl : 0;
		__entry->rdmap_ctrl = t->ddp_len ? th->rdmap_ctrl : 0;
		__entry->tagged = t->ddp_len && (th->ddp_ctrl & SIW2_DDP_T);
		__entry->stag = __entry->tagged ? be32_to_cpu(th->stag) : 0;
		__entry->to = __entry->tagged ? be64_to_cpu(th->to) : 0;
		__entry->qn = t->ddp_len && !__entry->tagged ?
			be32_to_cpu(uh->qn) : 0;
		__entry->msn = t->ddp_len && !__entry->tagged ?
			be32_to_cpu(uh->msn) : 0;
		__entry->mo = t->ddp_len && !__entry->tagged ?
			be32_to_cpu(uh->mo) : 0;
	),
	TP_printk("dev=%s qpn=%u layer=%s etype=%u ecode=0x%02x hdrctl=%s seg_len=%u ddp_ctrl=0x%02x rdmap_ctrl=0x%02x %s stag=0x%x to=0x%llx qn=%u msn=%u mo=%u%s",
		  __entry->dev, __entry->qpn, show_term_layer(__entry->layer),
		  __entry->etype, __entry->ecode,
		  __entry->hdrctl[0] ? __entry->hdrctl : "-",
		  __entry->seg_len, __entry->ddp_ctrl, __entry->rdmap_ctrl,
		  __entry->tagged ? "tagged" : "untagged", __entry->stag,
		  __entry->to, __entry->qn, __entry->msn, __entry->mo,
		  __entry->parsed ? "" : " malformed")
);

DEFINE_EVENT(siw2_term_class, siw2_term_sent,
	TP_PROTO(const struct ib_device *dev, u32 qpn,
		 const struct siw2_term_info *t),
	TP_ARGS(dev, qpn, t));

DEFINE_EVENT(siw2_term_class, siw2_term_rcvd,
	TP_PROTO(const struct ib_device *dev, u32 qpn,
		 const struct siw2_term_info *t),
	TP_ARGS(dev, qpn, t));

TRACE_EVENT(siw2_qp_flush,
	TP_PROTO(const struct ib_device *dev, u32 qpn, u32 sq, u32 rq),
	TP_ARGS(dev, qpn, sq, rq),
	TP_STRUCT__entry(
		__array(char, dev, IB_DEVICE_NAME_MAX)
		__field(u32, qpn)
		__field(u32, sq)
		__field(u32, rq)
	),
	TP_fast_assign(
		strscpy(__entry->dev, dev->name, IB_DEVICE_NAME_MAX);
		__entry->qpn = qpn;
		__entry->sq = sq;
		__entry->rq = rq;
	),
	TP_printk("dev=%s qpn=%u sq=%u rq=%u", __entry->dev, __entry->qpn,
		  __entry->sq, __entry->rq)
);

/*
 * The send engine and a full socket: @pending octets of the batch are
 * unsent (stall), or 0 once it was taken (unstall).
 */
DECLARE_EVENT_CLASS(siw2_tx_class,
	TP_PROTO(const struct ib_device *dev, u32 qpn, size_t pending),
	TP_ARGS(dev, qpn, pending),
	TP_STRUCT__entry(
		__array(char, dev, IB_DEVICE_NAME_MAX)
		__field(u32, qpn)
		__field(size_t, pending)
	),
	TP_fast_assign(
		strscpy(__entry->dev, dev->name, IB_DEVICE_NAME_MAX);
		__entry->qpn = qpn;
		__entry->pending = pending;
	),
	TP_printk("dev=%s qpn=%u pending=%zu", __entry->dev, __entry->qpn,
		  __entry->pending)
);

DEFINE_EVENT(siw2_tx_class, siw2_tx_stall,
	TP_PROTO(const struct ib_device *dev, u32 qpn, size_t pending),
	TP_ARGS(dev, qpn, pending));

DEFINE_EVENT(siw2_tx_class, siw2_tx_unstall,
	TP_PROTO(const struct ib_device *dev, u32 qpn, size_t pending),
	TP_ARGS(dev, qpn, pending));

#endif /* SIW2_TRACE_H */

/* Out of the kernel tree: define_trace.h finds this file by its path. */
#undef TRACE_INCLUDE_PATH
#define TRACE_INCLUDE_PATH .
#undef TRACE_INCLUDE_FILE
#define TRACE_INCLUDE_FILE trace
#include <trace/define_trace.h>
