/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The contract between the connection manager (cm.c, listen.c, socket.c)
 * and the queue pair's data path (tx.c, rx.c): who owns the TCP socket
 * when, and how each side tells the other that the stream ended.
 *
 * Lifetime of a connection, seen from the socket:
 *
 *   1. cm.c creates (connect) or listen.c accepts the socket; cm.c runs
 *      MPA connection setup on it with the pure siw2_mpa_cm state
 *      machine, and upcalls to the iw_cm.
 *   2. When setup is complete and the ULP has a QP on the connection
 *      (iw_connect's reply, or iw_accept), cm.c calls siw2_stream_attach().
 *      From then on the QP owns the socket's callbacks (sk_data_ready,
 *      sk_write_space, sk_state_change) and all reads and writes; cm.c
 *      keeps only its reference to the socket and to the QP.
 *   3. The stream ends in one of three ways:
 *      - the ULP disconnects: the iw_cm moves the QP to SQD (graceful) or
 *        ERR (abortive) through modify_qp, which calls
 *        siw2_stream_shutdown(); the QP stops sending, shuts TCP down
 *        (graceful) or resets it (abortive);
 *      - the peer closes, resets or sends a Terminate, or the QP detects a
 *        protocol error (and sends a Terminate, RFC 5040 section 7): the
 *        QP moves to ERR or CLOSING/TERMINATE itself;
 *      - the QP is destroyed.
 *      In every case the QP, once it has stopped using the socket and
 *      restored the callbacks, calls siw2_cm_llp_closed() exactly once;
 *      cm.c then releases the socket and upcalls IW_CM_EVENT_DISCONNECT /
 *      IW_CM_EVENT_CLOSE as the iw_cm expects.
 *
 * Context: siw2_stream_attach() and siw2_stream_shutdown() are called in
 * process context and may sleep. siw2_cm_llp_closed() may be called from
 * any context (it defers its work to the CM's workqueue).
 *
 * Names say where each side lives: siw2_stream_*() are stream.c's, which
 * makes and ends the struct siw2_stream (engine.h) a connected QP runs
 * on; siw2_cm_llp_closed() is cm.c's.
 */
#ifndef SIW2_LLP_H
#define SIW2_LLP_H

#include <linux/types.h>

struct socket;
struct siw2_qp;
struct siw2_cep;
struct siw2_mpa_conn;
struct siw2_conf;

/**
 * siw2_stream_attach() - give an established MPA stream to a QP
 * @qp: the QP, in RTS
 * @sock: the TCP socket; the QP takes over its callbacks and I/O, the
 *	caller keeps its reference until siw2_cm_llp_closed()
 * @conn: what MPA negotiated (revision, CRC, markers, RTR, IRD/ORD); copied
 * @cep: the CM endpoint to report the end of the stream to
 * @conf: the connection's copy of its device's settings (tx_zerocopy);
 *	read here only
 * @initiator: this side sent the MPA Request. The initiator sends the
 *	negotiated RTR (conn->rtr) before anything else; the responder sends
 *	no FPDU until the first FPDU from the initiator arrived (RFC 5044
 *	section 7.1.2, RFC 6581 section 5)
 * @rx_prefix: octets the CM read past the MPA frame (the start of the
 *	first FPDUs); the QP processes them before reading the socket
 * @rx_prefix_len: their number
 *
 * A QP that had a connection takes this one once the old stream's close
 * work has run (the call waits for it); the old stream is freed later.
 *
 * Return: 0, or a negative errno (-ECONNABORTED: the QP left RTS; -EBUSY:
 * another connection has the QP); on failure the socket is untouched.
 */
int siw2_stream_attach(struct siw2_qp *qp, struct socket *sock,
		       const struct siw2_mpa_conn *conn, struct siw2_cep *cep,
		       const struct siw2_conf *conf, bool initiator,
		       const void *rx_prefix, size_t rx_prefix_len);

/**
 * siw2_stream_ready() - wait until the QP may take a connection
 * @qp: the QP
 *
 * For the CM, before it moves the QP to RTS: the close work of the QP's
 * last stream, if any, has run once this returns 0.
 *
 * Return: 0, or -EBUSY if the QP's stream is open (it is connected).
 */
int siw2_stream_ready(struct siw2_qp *qp);

/**
 * enum siw2_close - how a QP ends its stream
 * @SIW2_CLOSE_GRACEFUL: modify_qp to SQD (the iw_cm's disconnect): the
 *	message begun is sent, then TCP's FIN
 * @SIW2_CLOSE_ABORT: modify_qp to ERR or RESET (the iw_cm's abrupt
 *	disconnect), a corrupt ring: TCP is reset, as an RNIC does
 * @SIW2_CLOSE_DESTROY: destroy_qp, which never waits for the peer: a FIN
 *	when no message is half sent (the stream ends on an FPDU boundary,
 *	RFC 5044 7.2), a reset otherwise; it also cuts a graceful drain
 *	already under way. Only a queued Terminate is still sent.
 */
enum siw2_close {
	SIW2_CLOSE_GRACEFUL,
	SIW2_CLOSE_ABORT,
	SIW2_CLOSE_DESTROY,
};

/**
 * siw2_stream_shutdown() - end the QP's use of its stream
 * @qp: the QP
 * @how: see enum siw2_close
 *
 * Called by modify_qp and destroy_qp. Idempotent: a later abort cuts an
 * earlier graceful close's drain, and so does a destroy (flush() stops);
 * a drain cut or timed out mid-message resets, one with nothing left to
 * send ends with a FIN. siw2_cm_llp_closed() follows, once.
 */
void siw2_stream_shutdown(struct siw2_qp *qp, enum siw2_close how);

/**
 * siw2_cm_llp_closed() - the QP no longer uses its stream
 * @cep: the endpoint given to siw2_stream_attach()
 * @reason: 0 for an orderly close, or a negative errno (-ECONNRESET for a
 *	peer reset, -EPROTO after a Terminate was sent or received, ...)
 */
void siw2_cm_llp_closed(struct siw2_cep *cep, int reason);

#endif /* SIW2_LLP_H */
