/* SPDX-License-Identifier: GPL-2.0 */
/*
 * batch.c: the send engine's FPDUs, gathered as bio_vecs into a batch
 * that TCP takes in one sendmsg(). All of it runs under the stream's
 * tx_mutex (engine.h); batch.c says how payload is referenced or copied.
 *
 * A batch is built by siw2_batch_add_seg() (or siw2_batch_add_fpdu() for
 * an FPDU with no message behind it, a Terminate) while
 * siw2_batch_fits() says there is room, sealed into the stream's
 * iov_iter by siw2_batch_seal(), and emptied by siw2_batch_reset() once
 * TCP accepted it, or when it is abandoned.
 */
#ifndef SIW2_BATCH_H
#define SIW2_BATCH_H

#include <linux/types.h>

struct siw2_ddp_tx_seg;
struct siw2_stream;
struct siw2_stream_tx;

u32 siw2_batch_mulpdu(struct siw2_stream *s);
bool siw2_batch_fits(struct siw2_stream *s, u32 ulen);
int siw2_batch_add_seg(struct siw2_stream *s,
		       const struct siw2_ddp_tx_seg *seg);
int siw2_batch_add_fpdu(struct siw2_stream *s, const u8 *hdr, u32 hdr_len,
			u32 off, u32 len);
void siw2_batch_seal(struct siw2_stream_tx *tx);
void siw2_batch_reset(struct siw2_stream_tx *tx);

#endif /* SIW2_BATCH_H */
