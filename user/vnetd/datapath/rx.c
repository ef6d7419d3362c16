// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * Guest RX: the tap queue of the pair -> the guest's receive ring.  This
 * file: the burst (which read a round makes) and the bounce delivery;
 * rx_inplace.c: the reads into the guest's buffers, direct and big.
 *
 * One copy, the usual way: a burst pops as many chains as it issues reads
 * and reads frame i straight into chain i's writable segments (readv), with
 * the rest of bounce slot i behind them for what does not fit.  A frame
 * that fits its chain is delivered where it landed: num_buffers (1) is
 * written into its header, its used entry is the chain.  The first frame
 * that cannot be (it overflowed its chain, its read found a chain the
 * library could not map, or a read before it found nothing, so that its
 * chain is not the next one) turns it and every later frame of the burst
 * into a bounce frame: what landed in its chain is copied to the front of
 * its slot, where the tail already is, the chains from the first unused
 * one on are rewound, and the bounce delivery below takes over.
 *
 * Big reads: after a frame overflowed its chain with MRG_RXBUF (GSO frames
 * into the guest's mergeable buffers, a few KiB each), a burst reads one
 * frame at a time into as many chains as the largest frame tun can hand
 * over needs (vnetd_rx_big()), and rewinds the chains the frame did not
 * fill: one copy for 64 KiB frames too.  Without MRG_RXBUF a frame larger than its
 * chain is dropped, and after one the next VNETD_RX_BIG_BURSTS bursts read
 * into the slots: a direct read would overflow in every burst.
 *
 * Bounce delivery: frames are read from the tap in bursts (at most as many
 * as the guest has buffers posted) into bounce slots of 64 KiB + header,
 * then copied into guest buffers: with MRG_RXBUF a frame takes as many
 * buffers as it needs and says so in num_buffers; without, one chain must
 * hold it or it is dropped (drops[VNET_DROP_TOO_BIG]).  Buffers popped and
 * not used are rewound.  A frame that finds no buffer stays in its slot,
 * the tap is no longer polled (tun keeps queueing, its own queue limit
 * applies) and the guest is asked to kick when it posts buffers: nothing
 * is dropped for a slow guest here.
 *
 * Either way everything of a round is pushed with one used->idx store,
 * written bytes are dirty-logged, and the signal is decided by coal.c with
 * the PSH bypass: a push frame (the classifier counts them before tun
 * queues the frame) signals at once.
 */
#include <errno.h>

#include "rx_int.h"
#include "burst.h"
#include "rx.h"
#include "coal.h"
#include "limit.h"
#include "tapio.h"
#include "virtq.h"

/* One round's chains: popped, delivered or given back (cur), used entries. */
struct rx_round {
	unsigned int npop, cur, nused;
};

/* How a frame lies over the chains from cur on; end: where the look ended. */
struct rx_fit {
	unsigned int nbufs, nskip, end;
	uint32_t sum;
};

/*
 * How many chains from cur on does a frame of LEN need?  A chain without
 * writable bytes at the start of a frame is given back empty; inside a
 * mergeable frame it is one of its buffers.  -1 when the ring broke.
 */
static inline int rx_fit_chains(struct vnetd_rx *rx, struct rx_round *rd,
				uint32_t len, struct rx_fit *f)
{
	unsigned int j;
	int got;

	f->nbufs = 0;
	f->nskip = 0;
	f->sum = 0;
	for (j = rd->cur; f->sum < len; j++) {
		const struct vhost_vq_elem *e;

		if (j == rd->npop) {
			if (rd->npop == VNETD_RX_ELEMS)
				break;
			got = vhost_vq_pop_burst(rx->r.vq,
						 &rx->r.elems[rd->npop],
						 VNETD_RX_ELEMS - rd->npop);
			if (got < 0)
				return -1;
			if (!got)
				break;
			rd->npop += (unsigned int)got;
		}
		e = &rx->r.elems[j];
		if (!f->nbufs && (e->err || !e->in_len)) {
			if (!e->err)
				rx->r.st->drops[VNET_DROP_BAD_DESC]++;
			rx->used[rd->nused].id = e->head;
			rx->used[rd->nused++].len = 0;
			rd->cur = j + 1;
			continue;
		}
		if (e->err) {
			/*
			 * Inside a frame, a chain the library could not map
			 * (more segments than an element holds): no bytes go
			 * there.  It is given back empty ahead of the frame's
			 * buffers, which stay consecutive in the used ring.
			 */
			f->nskip++;
			continue;
		}
		f->nbufs++;
		f->sum += e->in_len > len ? len : (uint32_t)e->in_len;
		if (!rx->mrg)
			break;
	}
	f->end = j;
	return 0;
}

/*
 * A frame of LEN the chains found cannot hold: dropped (RX_DONE, go on
 * with the next frame) or kept for later (RX_AGAIN, RX_STARVED).
 */
static inline enum rx_stop rx_fit_short(struct vnetd_rx *rx,
					const struct rx_round *rd,
					const struct rx_fit *f)
{
	if (!rx->mrg && f->nbufs) {
		/* one chain must hold it: drop, keep the chain */
		rx->r.st->drops[VNET_DROP_TOO_BIG]++;
		return RX_DONE;
	}
	if (f->end == VNETD_RX_ELEMS && rd->cur == 0) {
		/* more chains than a round holds: never fits */
		rx->r.st->drops[VNET_DROP_TOO_BIG]++;
		return RX_DONE;
	}
	if (f->end == VNETD_RX_ELEMS)
		return RX_AGAIN;
	if (rd->npop - rd->cur >= rx->r.vq->num) {
		/* every buffer the ring can hold is too little */
		rx->r.st->drops[VNET_DROP_TOO_BIG]++;
		return RX_DONE;
	}
	return RX_STARVED;
}

/*
 * Copy frame BUF of LEN into the chains F found: num_buffers in its
 * header, the chains it skips given back empty ahead of its buffers.
 */
static inline void rx_frame_put(struct vnetd_rx *rx, struct rx_round *rd,
				const struct rx_fit *f, uint8_t *buf,
				uint32_t len)
{
	unsigned int j, cur = rd->cur, end = cur + f->nbufs + f->nskip;
	uint32_t off = 0;

	/* the header tells the guest how many buffers follow */
	if (rx->hdr_len == sizeof(struct virtio_net_hdr_mrg_rxbuf)) {
		uint16_t nb = htole16(rx->mrg ? (uint16_t)f->nbufs : 1);

		memcpy(buf + offsetof(struct virtio_net_hdr_mrg_rxbuf,
				      num_buffers),
		       &nb, sizeof(nb));
	}
	for (j = cur; f->nskip && j < end; j++) {
		if (!rx->r.elems[j].err)
			continue;
		rx->used[rd->nused].id = rx->r.elems[j].head;
		rx->used[rd->nused++].len = 0;
	}
	for (; cur < end; cur++) {
		const struct vhost_vq_elem *e = &rx->r.elems[cur];
		uint32_t n;

		if (e->err)
			continue;
		n = elem_copy(e, buf + off, len - off, true);
		vhost_vq_log_write(rx->r.vq, e, n);
		rx->used[rd->nused].id = e->head;
		rx->used[rd->nused++].len = n;
		off += n;
	}
	rd->cur = cur;
}

/* Push the round; the chains popped and not used are rewound. */
static inline enum rx_stop rx_round_end(struct vnetd_rx *rx,
					const struct rx_round *rd,
					enum rx_stop why, unsigned int *frames,
					uint64_t bytes)
{
	unsigned int nused = why == RX_BROKEN ? 0 : rd->nused;

	if (rd->npop > rd->cur)
		vhost_vq_rewind(rx->r.vq, rd->npop - rd->cur);
	if (rx_push(rx, nused, frames, bytes, true) || why == RX_BROKEN) {
		rx->r.st->drops[VNET_DROP_BROKEN] += *frames;
		*frames = 0;
		return RX_BROKEN;
	}
	return why;
}

/*
 * Deliver pending frames into popped chains: one round, at most
 * VNETD_RX_ELEMS chains, pushed together.  *FRAMES gets how many frames
 * were delivered.  When the ring breaks during the round, the frames
 * already copied into its buffers are never pushed: they are counted as
 * drops[VNET_DROP_BROKEN] (besides the one count of the break itself,
 * by the queue thread).
 */
static enum rx_stop rx_deliver(struct vnetd_rx *rx, unsigned int *frames)
{
	struct vnet_dp_stats *st = rx->r.st;
	struct rx_round rd = { 0, 0, 0 };
	unsigned int hdr = rx->hdr_len;
	enum rx_stop why = RX_DONE;
	struct rx_fit f;
	uint64_t bytes = 0;
	uint32_t len;
	uint8_t *buf;

	*frames = 0;
	if (rx->count && rx->read_hdr != hdr) {
		/* read before a renegotiation changed the header: unusable */
		st->drops[VNET_DROP_TAP] += rx->count;
		rx->count = 0;
	}
	while (rx->count) {
		buf = rx_slot(rx, rx->order[rx->head]);
		len = rx->len[rx->order[rx->head]];
		if (len < hdr) {
			st->drops[VNET_DROP_TAP]++; /* tun never does this */
			rx_next(rx);
			continue;
		}
		if (rx_fit_chains(rx, &rd, len, &f)) {
			why = RX_BROKEN;
			break;
		}
		if (f.sum < len) {
			why = rx_fit_short(rx, &rd, &f);
			if (why != RX_DONE)
				break;
			rx_next(rx);
			continue;
		}
		rx_frame_put(rx, &rd, &f, buf, len);
		bytes += len - hdr;
		(*frames)++;
		rx_next(rx);
	}
	return rx_round_end(rx, &rd, why, frames, bytes);
}

/* The mean length of the N frames ORDER[0..n) of LEN[] just read. */
static void rx_mean(struct vnetd_rx *rx, const uint32_t *len,
		    const uint8_t *order, unsigned int n)
{
	uint64_t sum = 0;
	unsigned int i;

	for (i = 0; i < n; i++)
		sum += len[order[i]];
	rx->mean = (uint32_t)(sum / n);
}

/* Move frames from the tap to the guest, up to the budget. */
/*
 * The rate limit before K reads: what was delivered since the last look
 * is charged, then how many reads may start (0: the ring waits
 * r.limit_wait; tun keeps the frames meanwhile).  Without a limit: K.
 */
static unsigned int rx_limit(struct vnetd_rx *rx, unsigned int k)
{
	struct vnetd_ring *r = &rx->r;
	uint64_t f, b;

	if (!vnetd_limit_on(r->limit)) {
		r->lim_marked = false;
		return k;
	}
	f = r->st->frames;
	b = r->st->bytes;
	if (r->lim_marked)
		vnetd_limit_charge(r->limit, f - r->lim_frames,
				   b - r->lim_bytes);
	r->lim_marked = true;
	r->lim_frames = f;
	r->lim_bytes = b;
	return vnetd_limit_allow(r->limit, rx->mean ? rx->mean : 1514, k,
				 &r->limit_wait);
}

/* K reads into the bounce slots: frames read (pending now) or -errno */
static int rx_bounce_read(struct vnetd_rx *rx, unsigned int k)
{
	int n;

	if (rx->bounce)
		rx->bounce--;
	n = vnetd_tapio_read_burst(rx->io, k, rx->len, rx->order);
	if (n > 0) {
		rx->head = 0;
		rx->count = (unsigned int)n;
		rx->read_hdr = rx->hdr_len;
		rx_mean(rx, rx->len, rx->order, (unsigned int)n);
	}
	return n;
}

enum vnetd_burst vnetd_rx_burst(struct vnetd_rx *rx)
{
	struct vhost_vq *vq = rx->r.vq;
	unsigned int done = 0, avail, frames;
	enum rx_stop why;
	int n;

	/* buffers are looked for when frames need them, not announced */
	vhost_vq_notify_disable(vq);
	for (;;) {
		if (!rx->count) {
			unsigned int k;

			avail = vhost_vq_avail_count(vq);
			if (!avail)
				goto starved;
			/*
			 * As many reads as the last burst found frames, doubled
			 * (1 after an empty tap): a read that finds nothing
			 * costs little, 31 of them per frame would not.
			 */
			k = rx_limit(rx, avail < rx->want ? avail : rx->want);
			if (!k)
				return VNETD_BURST_LIMITED;
			if ((rx->big && rx->mrg) ||
			    (!rx->bounce && rx->mean >= rx->direct_min)) {
				/* into the guest's buffers: big or one chain each */
				why = rx->big && rx->mrg ?
					      vnetd_rx_big(rx, k, &n, &frames) :
					      vnetd_rx_direct(rx, k, &n, &frames);
				done += frames;
				if (why == RX_BROKEN)
					return VNETD_BURST_BROKEN;
				if (why == RX_STARVED)
					goto starved;
			} else {
				n = rx_bounce_read(rx, k);
			}
			if (n < 0) {
				rx->tap_err = n;
				return VNETD_BURST_TAP_ERROR;
			}
			rx->want = n ? 2 * (unsigned int)n : 1;
			if (rx->want > VNETD_RX_BURST)
				rx->want = VNETD_RX_BURST;
			if (!n)
				return VNETD_BURST_TAP_EMPTY;
			if (!rx->count) {
				if (done >= VNETD_BUDGET)
					return VNETD_BURST_MORE;
				continue;
			}
		}
		why = rx_deliver(rx, &frames);
		done += frames;
		if (why == RX_BROKEN)
			return VNETD_BURST_BROKEN;
		if (why == RX_STARVED)
			goto starved;
		if (done >= VNETD_BUDGET)
			return VNETD_BURST_MORE;
	}

starved:
	if (vhost_vq_broken(vq))
		return VNETD_BURST_BROKEN;
	/* ask for a kick, then look again: buffers may have come meanwhile */
	if (vhost_vq_notify_enable(vq))
		return VNETD_BURST_MORE;
	return VNETD_BURST_STARVED;
}

const uint8_t *vnetd_rx_pending(const struct vnetd_rx *rx, unsigned int i,
				uint32_t *len)
{
	unsigned int slot;

	if (i >= rx->count)
		return NULL;
	slot = rx->order[rx->head + i];
	*len = rx->len[slot];
	return rx_slot(rx, slot);
}

int vnetd_rx_put_pending(struct vnetd_rx *rx, const void *frame,
			 uint32_t len, unsigned int hdr_len)
{
	bool used[VNETD_RX_BURST] = {};
	unsigned int i, slot;

	if (len > VNETD_RX_SLOT || len < hdr_len ||
	    (rx->count && rx->read_hdr != hdr_len))
		return -EINVAL;
	if (rx->head + rx->count >= VNETD_RX_BURST) {
		/* compact: the pending ones first in order[] */
		memmove(rx->order, rx->order + rx->head, rx->count);
		rx->head = 0;
		if (rx->count >= VNETD_RX_BURST)
			return -ENOSPC;
	}
	for (i = 0; i < rx->count; i++)
		used[rx->order[rx->head + i]] = true;
	for (slot = 0; slot < VNETD_RX_BURST && used[slot]; slot++)
		;
	if (slot == VNETD_RX_BURST)
		return -ENOSPC;
	memcpy(rx_slot(rx, slot), frame, len);
	rx->len[slot] = len;
	rx->order[rx->head + rx->count] = (uint8_t)slot;
	rx->count++;
	rx->read_hdr = hdr_len;
	return 0;
}
