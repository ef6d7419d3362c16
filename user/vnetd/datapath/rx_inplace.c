// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * Guest RX reads into the guest's own buffers (rx.c has the burst that
 * picks them and the bounce delivery): direct reads, one chain per frame
 * with a slot's tail behind it, and big reads, a mergeable frame into as
 * many chains as the largest frame needs.  Either way a frame that fits
 * is delivered where it landed; one that does not becomes a bounce frame.
 */
#include <errno.h>

#include "rx_int.h"
#include "rx.h"
#include "coal.h"
#include "tapio.h"
#include "virtq.h"
#include "vq.h"

/*
 * A read into the guest's buffers faulted: the only addresses in its
 * iovecs that can are the guest's (the slots are vnetd's own), so the
 * frontend's memory no longer backs what its memory table maps (a
 * truncated memory fd).  That ring is broken, not the tap; the frame is
 * lost (tun drops a frame it could not copy out).
 */
static enum rx_stop rx_fault(struct vhost_vq *vq)
{
	vhost_vq_set_broken(vq, "reading a frame into the guest's RX buffers faulted (EFAULT): guest memory is no longer backed (the frontend truncated its memory fd?); the ring is stopped until the frontend restarts it");
	return RX_BROKEN;
}

/*
 * Chain I's writable iovecs for read I, and the tail of slot I behind
 * them for what the chain cannot hold.
 */
static inline void rx_direct_iov(struct vnetd_rx *rx, unsigned int i)
{
	const struct vhost_vq_elem *e = &rx->r.elems[i];
	struct iovec *v = rx->iov + (size_t)i * VNETD_RX_IOV;
	unsigned int c = 0;
	uint32_t in = 0;

	if (!e->err && e->in_len) {
		memcpy(v, &e->iov[e->out_num], e->in_num * sizeof(*v));
		c = e->in_num;
		in = e->in_len < VNETD_RX_SLOT ? (uint32_t)e->in_len :
						 VNETD_RX_SLOT;
	}
	if (in < VNETD_RX_SLOT) {
		v[c].iov_base = rx_slot(rx, i) + in;
		v[c++].iov_len = VNETD_RX_SLOT - in;
	}
	rx->in_chain[i] = in;
	rx->iovcnt[i] = c;
}

/*
 * Frame I of LEN cannot be delivered where it landed: it becomes a bounce
 * frame, whole in its slot.  One that overflowed its chain starts big
 * reads (MRG_RXBUF) or bounce bursts.
 */
static inline void rx_direct_bounce(struct vnetd_rx *rx, unsigned int i,
				    uint32_t len)
{
	if (len > rx->in_chain[i] && rx->in_chain[i]) {
		if (rx->mrg && rx->big_bursts)
			rx->big = rx->big_bursts;
		else
			rx->bounce = VNETD_RX_BIG_BURSTS;
	}
	elem_copy(&rx->r.elems[i], rx_slot(rx, i),
		  len < rx->in_chain[i] ? len : rx->in_chain[i], false);
	rx->len[i] = len;
	rx->order[rx->count++] = (uint8_t)i;
}

/*
 * One direct burst of up to N reads (above): pops the chains, reads, and
 * delivers the frames that fit where they landed; the others are left
 * pending as bounce frames.  *READ gets how many reads found a frame (0:
 * the tap is empty) or -errno (the tap failed, nothing popped stays out),
 * *FRAMES how many frames were delivered.
 */
enum rx_stop vnetd_rx_direct(struct vnetd_rx *rx, unsigned int n, int *read,
			     unsigned int *frames)
{
	struct vhost_vq *vq = rx->r.vq;
	unsigned int hdr = rx->hdr_len;
	unsigned int i, got, cur = 0, nused = 0;
	uint64_t bytes = 0, sum;
	int r;

	*frames = 0;
	*read = 0;
	if (n > VNETD_RX_BURST)
		n = VNETD_RX_BURST;
	r = vhost_vq_pop_burst(vq, rx->r.elems, n);
	if (r <= 0)
		return r < 0 ? RX_BROKEN : RX_STARVED;
	got = (unsigned int)r;
	for (i = 0; i < got; i++)
		rx_direct_iov(rx, i);
	r = vnetd_tapio_readv_burst(rx->io, rx->iov, rx->iovcnt, got, rx->res);
	if (r <= 0) {
		vhost_vq_rewind(vq, got);
		if (r == -EFAULT)
			return rx_fault(vq);
		*read = r;
		return RX_DONE;
	}
	*read = r;
	rx->head = 0;
	rx->count = 0;
	rx->read_hdr = hdr;
	sum = 0;
	for (i = 0; i < got; i++) {
		const struct vhost_vq_elem *e = &rx->r.elems[i];
		uint32_t len = rx->res[i] > 0 ? (uint32_t)rx->res[i] : 0;

		if (!len)
			continue;
		sum += len;
		if (cur == i && len <= rx->in_chain[i] && len >= hdr) {
			if (hdr == sizeof(struct virtio_net_hdr_mrg_rxbuf))
				put_num_buffers(e, 1);
			vhost_vq_log_write(vq, e, len);
			rx->used[nused].id = e->head;
			rx->used[nused++].len = len;
			bytes += len - hdr;
			(*frames)++;
			cur++;
			continue;
		}
		/* from here on bounce frames, each whole in its slot */
		rx_direct_bounce(rx, i, len);
	}
	rx->mean = (uint32_t)(sum / (unsigned int)r);
	if (got > cur)
		vhost_vq_rewind(vq, got - cur);
	if (rx_push(rx, nused, frames, bytes, false)) {
		rx->r.st->drops[VNET_DROP_BROKEN] += *frames;
		*frames = 0;
		return RX_BROKEN;
	}
	return RX_DONE;
}

/*
 * Pop chains for one mergeable frame of up to VNETD_RX_SLOT bytes into
 * the ring's elements, at most as many as used entries are left after
 * *NUSED, and their writable iovecs into RX->iov.  Chains
 * the library could not map, or without writable bytes, before the first
 * usable one are given back empty (USED entries); the first one after it
 * ends the frame's chains.  *LEAD gets the empty ones, *NB the frame's
 * (ELEMS[*LEAD .. *LEAD + *NB)); what was popped after those is the
 * caller's to rewind.  Returns the iovecs filled, -1 when the ring broke.
 */
_Static_assert(VNETD_RX_BIG_IOV <= (size_t)VNETD_RX_BURST * VNETD_RX_IOV,
	       "a big read's iovecs fit rx.iov");

static int rx_big_chains(struct vnetd_rx *rx, unsigned int *npop,
			 unsigned int *lead, unsigned int *nb, uint64_t *sum,
			 unsigned int *nused)
{
	struct vhost_vq_elem *el = rx->r.elems;
	unsigned int j = 0, c = 0, want, max = VNETD_RX_ELEMS - *nused;
	int got;

	*npop = *lead = *nb = 0;
	*sum = 0;
	for (;;) {
		const struct vhost_vq_elem *e;

		if (j == *npop) {
			if (*sum >= VNETD_RX_SLOT || *npop == max)
				break;
			/* as many as chains like the last one need */
			want = rx->chain_len ?
				       (unsigned int)((VNETD_RX_SLOT - *sum +
						       rx->chain_len - 1) /
						      rx->chain_len) :
				       1;
			if (want > max - *npop)
				want = max - *npop;
			got = vhost_vq_pop_burst(rx->r.vq, &el[*npop], want);
			if (got < 0)
				return -1;
			if (!got)
				break;
			*npop += (unsigned int)got;
		}
		e = &el[j];
		if (e->err || !e->in_len) {
			if (*nb)
				break;
			if (!e->err)
				rx->r.st->drops[VNET_DROP_BAD_DESC]++;
			rx->used[*nused].id = e->head;
			rx->used[(*nused)++].len = 0;
			(*lead)++;
			j++;
			continue;
		}
		if (c + e->in_num + 1 > VNETD_RX_BIG_IOV)
			break;
		memcpy(&rx->iov[c], &e->iov[e->out_num],
		       e->in_num * sizeof(rx->iov[0]));
		c += e->in_num;
		*sum += e->in_len;
		rx->chain_len = e->in_len < VNETD_RX_SLOT ? (uint32_t)e->in_len :
							    VNETD_RX_SLOT;
		(*nb)++;
		j++;
	}
	return (int)c;
}

/* One read into the chains' iovecs (C), slot 0's tail behind them. */
static inline int rx_big_read(struct vnetd_rx *rx, int c, uint64_t sum)
{
	if (sum < VNETD_RX_SLOT) {
		rx->iov[c].iov_base = rx_slot(rx, 0) + sum;
		rx->iov[c++].iov_len = VNETD_RX_SLOT - (size_t)sum;
	}
	rx->iovcnt[0] = (unsigned int)c;
	return vnetd_tapio_readv_burst(rx->io, rx->iov, rx->iovcnt, 1,
				       rx->res);
}

/* A frame of LEN that did not fit: bounce frame 0, in front of its tail. */
static inline void rx_big_bounce(struct vnetd_rx *rx, unsigned int lead,
				 unsigned int nb, uint32_t len)
{
	uint32_t off = 0;
	unsigned int j;

	/* the chains' part to the slot's front */
	for (j = lead; j < lead + nb && off < len; j++)
		off += elem_copy(&rx->r.elems[j], rx_slot(rx, 0) + off,
				 len - off, false);
	rx->len[0] = len;
	rx->order[0] = 0;
	rx->count = 1;
}

/*
 * Deliver a frame of LEN where it landed, in the chains from LEAD on that
 * it filled: their used entries, num_buffers.  Returns how many.
 */
static inline unsigned int rx_big_put(struct vnetd_rx *rx, unsigned int lead,
				      unsigned int nb, uint32_t len,
				      unsigned int *nused)
{
	struct vhost_vq_elem *el = rx->r.elems;
	unsigned int j, cnt = 0;
	uint32_t left = len, fill;

	for (j = lead; left && j < lead + nb; j++) {
		fill = el[j].in_len < left ? (uint32_t)el[j].in_len : left;
		vhost_vq_log_write(rx->r.vq, &el[j], fill);
		rx->used[*nused].id = el[j].head;
		rx->used[(*nused)++].len = fill;
		left -= fill;
		cnt++;
	}
	/* the header is in the first chain (logged above) */
	put_num_buffers(&el[lead], (uint16_t)cnt);
	return cnt;
}

/*
 * Mergeable big reads, after a frame overflowed its chain (GSO frames
 * into the guest's mergeable buffers): up to N frames, one read each, into
 * as many chains as the largest frame tun can hand over needs (and slot
 * 0's tail behind them, when they hold less).  A frame is delivered where
 * it landed: num_buffers is the chains it filled, the chains left over are
 * rewound.  A frame that did not fit (the guest had too few buffers
 * posted) becomes bounce frame 0, and the burst stops: rx_deliver waits
 * for the buffers it needs.  After rx.big_bursts bursts with no
 * frame in more than one chain, reads go back to one chain each.
 * *READ and *FRAMES as in vnetd_rx_direct().
 */
enum rx_stop vnetd_rx_big(struct vnetd_rx *rx, unsigned int n, int *read,
			  unsigned int *frames)
{
	struct vhost_vq *vq = rx->r.vq;
	struct vhost_vq_elem *el = rx->r.elems;
	unsigned int hdr = rx->hdr_len;
	unsigned int k, nused = 0, multi = 0, npop, lead, nb, cnt;
	uint64_t bytes = 0, lens = 0, sum;
	uint32_t len;
	enum rx_stop why = RX_DONE;
	int c, r;

	*frames = 0;
	*read = 0;
	rx->head = 0;
	rx->count = 0;
	rx->read_hdr = hdr;
	for (k = 0; k < n; k++) {
		/* used entries left for the largest frame, or the next burst */
		if (nused && (uint64_t)(VNETD_RX_ELEMS - nused) * rx->chain_len <
				     VNETD_RX_SLOT)
			break;
		c = rx_big_chains(rx, &npop, &lead, &nb, &sum, &nused);
		if (c < 0) {
			why = RX_BROKEN;
			break;
		}
		if (!nb) {
			/* no buffer (or only unusable ones): the guest's turn */
			if (npop > lead)
				vhost_vq_rewind(vq, npop - lead);
			if (!k)
				why = RX_STARVED;
			break;
		}
		r = rx_big_read(rx, c, sum);
		if (r <= 0) {
			vhost_vq_rewind(vq, npop - lead);
			if (r == -EFAULT)
				why = rx_fault(vq);
			else if (!k)
				*read = r;
			break;
		}
		(*read)++;
		len = (uint32_t)rx->res[0];
		lens += len;
		if (len < hdr) {
			rx->r.st->drops[VNET_DROP_TAP]++; /* tun never does this */
			vhost_vq_rewind(vq, npop - lead);
			continue;
		}
		if (len > sum || el[lead].in_len < hdr) {
			rx_big_bounce(rx, lead, nb, len);
			vhost_vq_rewind(vq, npop - lead);
			multi++;
			break;
		}
		cnt = rx_big_put(rx, lead, nb, len, &nused);
		multi += cnt > 1;
		if (npop > lead + cnt)
			vhost_vq_rewind(vq, npop - lead - cnt);
		bytes += len - hdr;
		(*frames)++;
	}
	if (*read > 0)
		rx->mean = (uint32_t)(lens / (unsigned int)*read);
	if (multi)
		rx->big = rx->big_bursts;
	else if (rx->big)
		rx->big--;
	if (why == RX_BROKEN)
		nused = 0;
	if (rx_push(rx, nused, frames, bytes, false) || why == RX_BROKEN) {
		rx->r.st->drops[VNET_DROP_BROKEN] += *frames;
		*frames = 0;
		return RX_BROKEN;
	}
	return why;
}
