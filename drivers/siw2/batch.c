// SPDX-License-Identifier: GPL-2.0
/*
 * The send engine's batches: FPDUs described by bio_vecs, which TCP
 * accepts with one sendmsg() per batch (tx.c decides what goes into a
 * batch and when it is handed over).
 *
 * Fixed octets (MPA length, DDP/RDMAP headers, Markers, pad, CRC) are
 * copied to a staging page, payload is referenced in the registered
 * pages, and TCP copies both when it accepts them; a small FPDU is built
 * whole in the staging page instead, payload and all. A batch may wait for
 * TCP as long as the peer keeps its window closed, so payload of a fast
 * registration MR, which a Send with Invalidate or a Local Invalidate may
 * end while the batch waits (and whose pages its kernel consumer then
 * reuses), is copied under the MR's lock into the stream's copy pages
 * instead of being referenced: once invalidation returns, no octet of the
 * old region leaves (mr.c, "Invalidation"). User MRs cannot be
 * invalidated and stay pinned while the message holds them; DMA MRs are
 * the kernel consumer's own memory, which it keeps until the work request
 * completes. Either way a work request is complete once the batch
 * carrying its last octet was accepted, even if TCP has not sent it.
 * FPDUs are sized by the path's current MSS (RFC 5044 4.5, 8.1), and
 * never beyond what fits an empty batch.
 *
 * Locking: everything here runs in the send engine, under the stream's
 * tx_mutex (engine.h), and touches only the stream's send state.
 *
 * Lifetimes: the staging page and the copy pages are the stream's and
 * outlive the batch (tx.c replaces a staging page TCP still references
 * after a zero-copy batch). A payload page a bio_vec refers to is held by
 * the MR reference in the message's source (struct siw2_tx_src) until
 * the message is done, which is after TCP accepted its last batch. A
 * batch's bio_vecs are valid until siw2_batch_reset().
 *
 * On-demand paging MRs are copied as fast registration MRs are (their
 * pages go when the MMU notifier says so), and a page they have not
 * mapped is faulted in here, in the engine's process context, before the
 * copy (siw2_mr_copy_from_wait()); memory the process has no mapping
 * for fails the batch with -EFAULT.
 */
#include <linux/highmem.h>
#include <linux/tcp.h>
#include <linux/uio.h>

#include "engine.h"
#include "batch.h"

#define TX_BATCH_BYTES (64 * 1024)

/*
 * What one FPDU of up to @ulen ULPDU octets may take of a batch: a bio_vec
 * per page and per scatter entry, four for the fixed octets, and with
 * Markers at most @ulen / 508 + 2 Markers of two bio_vecs each (the Marker
 * and the payload run it splits) and four staging octets each.
 */
static u32 fpdu_marks(u32 ulen, bool markers)
{
	if (!markers)
		return 0;
	return ulen / (SIW2_MPA_MARKER_INTERVAL - SIW2_MPA_MARKER_LEN) + 2;
}

static u32 fpdu_bvecs(u32 ulen, bool markers)
{
	return ulen / PAGE_SIZE + 2 * SIW2_MAX_SGE + 4 +
	       2 * fpdu_marks(ulen, markers);
}

static u32 fpdu_stage(u32 ulen, bool markers)
{
	return 2 + SIW2_HDR_MAX + 3 + SIW2_MPA_CRC_LEN +
	       4 * fpdu_marks(ulen, markers) + SIW2_MAX_INLINE;
}

/*
 * The largest ULPDU whose FPDU fits an empty batch. With Markers that is
 * below what a large MSS allows (loopback's gives 64768 octets, 129
 * Markers), and a peer decides that we send Markers (RFC 5044 7.1.2).
 * An octet costs at most 1/4096 + 2/508 < 1/239 bio_vecs.
 */
#define MARKED_ULPDU_MAX ((SIW2_TX_BVECS - 2 * SIW2_MAX_SGE - 8) * 239)

/**
 * siw2_batch_mulpdu() - the most ULPDU octets the next FPDU may carry
 * @s: the stream
 *
 * RFC 5044 4.5: an FPDU fits the path's current MSS, and a batch. Two ends
 * that both opted in to large FPDUs (SIW2_MPA_FLAG_G) leave the cutting to
 * TCP: fewer headers, CRC trailers and send pieces per byte.
 *
 * Return: the MULPDU, for which an empty batch always has room.
 */
u32 siw2_batch_mulpdu(struct siw2_stream *s)
{
	u32 mulpdu = SIW2_MPA_MULPDU_MAX;
	u32 mss;

	BUILD_BUG_ON(fpdu_bvecs(MARKED_ULPDU_MAX, true) > SIW2_TX_BVECS);
	BUILD_BUG_ON(fpdu_stage(MARKED_ULPDU_MAX, true) > PAGE_SIZE);
	BUILD_BUG_ON(fpdu_bvecs(SIW2_MPA_MULPDU_MAX, false) > SIW2_TX_BVECS);
	BUILD_BUG_ON(fpdu_stage(SIW2_MPA_MULPDU_MAX, false) > PAGE_SIZE);
	if (!s->conn.large) {
		mss = READ_ONCE(tcp_sk(s->sock->sk)->mss_cache);
		mulpdu = siw2_mpa_mulpdu(mss, s->conn.tx_markers);
	}
	if (s->conn.tx_markers)
		mulpdu = min_t(u32, mulpdu, MARKED_ULPDU_MAX);
	return mulpdu;
}

/**
 * siw2_batch_reset() - empty the batch
 * @tx: the stream's send state
 */
void siw2_batch_reset(struct siw2_stream_tx *tx)
{
	tx->nbv = 0;
	tx->stage_used = 0;
	tx->copy_used = 0;
	tx->batch_len = 0;
	tx->iter_live = false;
}

static void add_page(struct siw2_stream_tx *tx, struct page *page, u32 off,
		     u32 len)
{
	struct bio_vec *last = tx->nbv ? &tx->bv[tx->nbv - 1] : NULL;

	if (last && last->bv_page == page &&
	    last->bv_offset + last->bv_len == off) {
		last->bv_len += len;
	} else {
		last = &tx->bv[tx->nbv++];
		last->bv_page = page;
		last->bv_offset = off;
		last->bv_len = len;
	}
	tx->batch_len += len;
}

/* Copies fixed octets to the staging page; returns where they went. */
static const u8 *add_stage(struct siw2_stream_tx *tx, const void *bytes,
			   u32 len)
{
	u8 *at = (u8 *)page_address(tx->stage) + tx->stage_used;

	memcpy(at, bytes, len);
	add_page(tx, tx->stage, tx->stage_used, len);
	tx->stage_used += len;
	return at;
}

/**
 * siw2_batch_fits() - is there room for one more FPDU?
 * @s: the stream
 * @ulen: the most ULPDU octets the FPDU will carry
 *
 * An empty batch always has room: siw2_batch_mulpdu() keeps @ulen within
 * what its BUILD_BUG_ONs allow.
 *
 * Return: the FPDU fits the batch's bio_vecs, staging page and copy pages.
 */
bool siw2_batch_fits(struct siw2_stream *s, u32 ulen)
{
	struct siw2_stream_tx *tx = &s->tx;
	bool markers = s->conn.tx_markers;

	BUILD_BUG_ON(SIW2_MPA_MULPDU_MAX > SIW2_TX_COPY_BYTES);
	if (tx->src.copy && tx->copy_used + ulen > SIW2_TX_COPY_BYTES)
		return false;
	return tx->batch_len < TX_BATCH_BYTES &&
	       tx->nbv + fpdu_bvecs(ulen, markers) <= SIW2_TX_BVECS &&
	       tx->stage_used + fpdu_stage(ulen, markers) <= PAGE_SIZE;
}

/* The scatter entry that message offset *@off falls in; *@off within it. */
static u32 src_seek(const struct siw2_tx_src *src, u32 *off)
{
	u32 i = 0;

	while (i < src->nr && *off >= src->sge[i].len) {
		*off -= src->sge[i].len;
		i++;
	}
	return i;
}

/* How far a fault at @addr of scatter entry @i maps ahead (odp.c). */
static u64 src_ahead(const struct siw2_tx_src *src, u32 i, u64 addr)
{
	return min_t(u64, src->sge[i].addr + src->sge[i].len - addr,
		     SIW2_ODP_AHEAD);
}

/*
 * Copies @len octets at @addr of scatter entry @i to the copy pages, under
 * the MR's lock, and adds them to the batch, CRC folded in.
 */
static int add_copy(struct siw2_stream *s, u32 i, u64 addr, u32 len)
{
	struct siw2_stream_tx *tx = &s->tx;
	struct siw2_tx_src *src = &tx->src;
	struct page **pg;
	u32 off, n;
	u8 *to;
	int ret;

	while (len) {
		/* siw2_batch_fits() keeps a batch's copies in the pages. */
		if (WARN_ON_ONCE(tx->copy_used >= SIW2_TX_COPY_BYTES))
			return -EFAULT;
		pg = &tx->copy[tx->copy_used / PAGE_SIZE];
		if (!*pg) {
			*pg = alloc_page(GFP_KERNEL);
			if (!*pg)
				return -ENOMEM;
		}
		off = tx->copy_used % PAGE_SIZE;
		n = min_t(u32, len, PAGE_SIZE - off);
		to = (u8 *)page_address(*pg) + off;
		ret = siw2_mr_copy_from_wait(src->sge[i].mr, src->sge[i].stag,
					     addr, to, n,
					     src_ahead(src, i, addr));
		if (ret)
			return ret;
		siw2_mpa_tx_crc(&tx->mpa, to, n);
		add_page(tx, *pg, off, n);
		tx->copy_used += n;
		addr += n;
		len -= n;
	}
	return 0;
}

/* Payload octets [@off, @off + @len) of the message, CRC folded in. */
static int add_payload(struct siw2_stream *s, u32 off, u32 len)
{
	struct siw2_stream_tx *tx = &s->tx;
	struct siw2_tx_src *src = &tx->src;
	unsigned int poff, plen, n;
	struct page *page;
	const u8 *at;
	void *p;
	u32 i;
	int ret;

	if (src->inline_data) {
		at = add_stage(tx, src->inline_data + off, len);
		siw2_mpa_tx_crc(&tx->mpa, at, len);
		return 0;
	}
	i = src_seek(src, &off);
	while (len) {
		if (i >= src->nr)
			return -EFAULT;
		if (src->sge[i].copy) {
			n = min(len, src->sge[i].len - off);
			ret = add_copy(s, i, src->sge[i].addr + off, n);
			if (ret)
				return ret;
			len -= n;
			i++;
			off = 0;
			continue;
		}
		ret = siw2_mr_page(src->sge[i].mr, src->sge[i].stag,
				   src->sge[i].addr + off, &page, &poff, &plen);
		if (ret)
			return ret;
		n = min3(len, plen, src->sge[i].len - off);
		if (s->conn.crc) {
			p = kmap_local_page(page);
			siw2_mpa_tx_crc(&tx->mpa, p + poff, n);
			kunmap_local(p);
		}
		add_page(tx, page, poff, n);
		off += n;
		len -= n;
		if (off == src->sge[i].len) {
			i++;
			off = 0;
		}
	}
	return 0;
}

/**
 * siw2_batch_add_fpdu() - add one FPDU, its payload by reference
 * @s: the stream
 * @hdr: the DDP/RDMAP header, copied to the staging page
 * @hdr_len: its length
 * @off: message offset of the payload
 * @len: payload octets, from the message's source
 *
 * Return: 0, or a negative errno; the batch is then to be abandoned.
 */
int siw2_batch_add_fpdu(struct siw2_stream *s, const u8 *hdr, u32 hdr_len,
			u32 off, u32 len)
{
	struct siw2_stream_tx *tx = &s->tx;
	struct siw2_mpa_tx_piece pc;
	u32 o, l, n;
	int ret;

	if (!siw2_mpa_tx_begin(&tx->mpa, hdr_len + len))
		return -EINVAL;
	while ((ret = siw2_mpa_tx_next(&tx->mpa, &pc)) == 1) {
		if (pc.bytes) {
			add_stage(tx, pc.bytes, pc.len);
			continue;
		}
		o = pc.ulpdu_off;
		l = pc.len;
		if (o < hdr_len) {
			n = min(l, hdr_len - o);
			add_stage(tx, hdr + o, n);
			siw2_mpa_tx_crc(&tx->mpa, hdr + o, n);
			o += n;
			l -= n;
		}
		if (l) {
			ret = add_payload(s, off + (o - hdr_len), l);
			if (ret)
				return ret;
		}
	}
	return ret;
}

/* Copies payload octets [@off, @off + @len) of the message to @to. */
static int copy_payload(struct siw2_stream *s, u8 *to, u32 off, u32 len)
{
	struct siw2_tx_src *src = &s->tx.src;
	u32 i, n;
	int ret;

	if (src->inline_data) {
		memcpy(to, src->inline_data + off, len);
		return 0;
	}
	i = src_seek(src, &off);
	for (; len; i++, off = 0) {
		if (i >= src->nr)
			return -EFAULT;
		n = min(len, src->sge[i].len - off);
		ret = siw2_mr_copy_from_wait(src->sge[i].mr, src->sge[i].stag,
					     src->sge[i].addr + off, to, n,
					     src_ahead(src, i,
						       src->sge[i].addr + off));
		if (ret)
			return ret;
		to += n;
		len -= n;
	}
	return 0;
}

/*
 * A small FPDU without Markers is assembled whole in the staging page,
 * its payload copied there: TCP then takes one contiguous piece instead
 * of a header, a page reference and a trailer, and the FPDU costs a
 * single pass.
 */
static int add_fpdu_flat(struct siw2_stream *s,
			 const struct siw2_ddp_tx_seg *seg)
{
	struct siw2_stream_tx *tx = &s->tx;
	u8 *at = (u8 *)page_address(tx->stage) + tx->stage_used;
	u8 *ulpdu = at + SIW2_MPA_HDR_LEN;
	u32 n;
	int ret;

	memcpy(ulpdu, seg->hdr, seg->hdr_len);
	ret = copy_payload(s, ulpdu + seg->hdr_len, seg->off, seg->len);
	if (ret)
		return ret;
	n = siw2_mpa_tx_frame(&tx->mpa, at, seg->hdr_len + seg->len);
	if (!n)
		return -EINVAL;
	add_page(tx, tx->stage, tx->stage_used, n);
	tx->stage_used += n;
	return 0;
}

/**
 * siw2_batch_add_seg() - add the FPDU of one DDP segment
 * @s: the stream
 * @seg: the segment, of at most siw2_batch_mulpdu() octets, for which
 *	siw2_batch_fits() found room
 *
 * Return: 0, or a negative errno; the batch is then to be abandoned.
 */
int siw2_batch_add_seg(struct siw2_stream *s,
		       const struct siw2_ddp_tx_seg *seg)
{
	/* siw2_batch_fits() keeps SIW2_MAX_INLINE octets of room for this. */
	if (!s->conn.tx_markers && seg->len <= SIW2_MAX_INLINE)
		return add_fpdu_flat(s, seg);
	return siw2_batch_add_fpdu(s, seg->hdr, seg->hdr_len, seg->off,
				   seg->len);
}

/**
 * siw2_batch_seal() - the batch is complete: point the send iterator at it
 * @tx: the stream's send state
 */
void siw2_batch_seal(struct siw2_stream_tx *tx)
{
	iov_iter_bvec(&tx->iter, ITER_SOURCE, tx->bv, tx->nbv, tx->batch_len);
	tx->iter_live = true;
}
