// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * Guest RX: the tap queue of the pair -> the guest's receive ring.
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
 * over needs (rx_big), and rewinds the chains the frame did not fill: one
 * copy for 64 KiB frames too.  Without MRG_RXBUF a frame larger than its
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
#include <endian.h>
#include <errno.h>
#include <stddef.h>
#include <string.h>
#include <linux/virtio_net.h>

#include "burst.h"

static inline uint8_t *rx_slot(const struct vnetd_rx *rx, unsigned int i)
{
	return rx->io->slots + (size_t)i * VNETD_RX_SLOT;
}

/*
 * Copy LEN bytes between BUF and E's writable segments, from their start:
 * into the guest (TO_GUEST) or out of it.  Bytes copied.
 */
static uint32_t elem_copy(const struct vhost_vq_elem *e, uint8_t *buf,
			  uint32_t len, bool to_guest)
{
	unsigned int i, end = e->out_num + e->in_num;
	uint32_t done = 0;

	for (i = e->out_num; i < end && done < len; i++) {
		size_t chunk = e->iov[i].iov_len;

		if (chunk > len - done)
			chunk = len - done;
		if (to_guest)
			memcpy(e->iov[i].iov_base, buf + done, chunk);
		else
			memcpy(buf + done, e->iov[i].iov_base, chunk);
		done += (uint32_t)chunk;
	}
	return done;
}

/* Write num_buffers NB into the header at the start of E's writable bytes. */
static void put_num_buffers(const struct vhost_vq_elem *e, uint16_t nb)
{
	const uint16_t one = htole16(nb);
	const uint8_t *src = (const uint8_t *)&one;
	size_t off = offsetof(struct virtio_net_hdr_mrg_rxbuf, num_buffers);
	unsigned int i, end = e->out_num + e->in_num, k = 0;

	for (i = e->out_num; i < end && k < sizeof(one); i++) {
		size_t l = e->iov[i].iov_len;
		uint8_t *b = e->iov[i].iov_base;

		for (; off < l && k < sizeof(one); off++)
			b[off] = src[k++];
		off = off >= l ? off - l : 0;
	}
}

/* The pending frame at the head is gone (delivered or dropped). */
static void rx_next(struct vnetd_rx *rx)
{
	rx->head++;
	rx->count--;
}

/*
 * Publish NUSED used entries holding *FRAMES frames of BYTES payload, count
 * them and let coal.c decide the signal.  Nonzero when the ring broke.
 */
static int rx_push(struct vnetd_rx *rx, unsigned int nused,
		   unsigned int *frames, uint64_t bytes)
{
	struct vnet_dp_stats *st = rx->r.st;
	uint64_t p;

	if (!nused)
		return 0;
	if (vhost_vq_push_burst(rx->r.vq, rx->used, nused))
		return -1;
	st->frames += *frames;
	st->bytes += bytes;
	st->batches++;
	/*
	 * A push frame counted since the last look was delivered now or is
	 * about to be: tun queued it after the count.
	 */
	p = VNETD_LOAD(rx->r.qs->push);
	vnetd_coal_pushed(&rx->r, *frames ? *frames : nused, p != rx->push_mark);
	rx->push_mark = p;
	return 0;
}

enum rx_stop {
	RX_DONE,	/* every pending frame delivered */
	RX_AGAIN,	/* the round is full: deliver the rest in the next one */
	RX_STARVED,	/* the guest has no buffer left */
	RX_BROKEN,
};

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
	struct vhost_vq *vq = rx->r.vq;
	struct vnet_dp_stats *st = rx->r.st;
	unsigned int npop = 0, cur = 0, nused = 0, nbufs, nskip, j;
	unsigned int hdr = rx->hdr_len;
	enum rx_stop why = RX_DONE;
	uint64_t bytes = 0;
	uint32_t len, sum, off;
	uint8_t *buf;
	int got;

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
		/*
		 * How many chains from cur on does the frame need?  A chain
		 * without writable bytes at the start of a frame is given back
		 * empty; inside a mergeable frame it is one of its buffers.
		 */
		nbufs = 0;
		nskip = 0;
		sum = 0;
		for (j = cur; sum < len; j++) {
			const struct vhost_vq_elem *e;

			if (j == npop) {
				if (npop == VNETD_RX_ELEMS)
					break;
				got = vhost_vq_pop_burst(vq, &rx->r.elems[npop],
							 VNETD_RX_ELEMS - npop);
				if (got < 0) {
					why = RX_BROKEN;
					goto out;
				}
				if (!got)
					break;
				npop += (unsigned int)got;
			}
			e = &rx->r.elems[j];
			if (!nbufs && (e->err || !e->in_len)) {
				if (!e->err)
					st->drops[VNET_DROP_BAD_DESC]++;
				rx->used[nused].id = e->head;
				rx->used[nused++].len = 0;
				cur = j + 1;
				continue;
			}
			if (e->err) {
				/*
				 * Inside a frame, a chain the library could
				 * not map (more segments than an element
				 * holds): no bytes go there.  It is given
				 * back empty ahead of the frame's buffers,
				 * which stay consecutive in the used ring.
				 */
				nskip++;
				continue;
			}
			nbufs++;
			sum += e->in_len > len ? len : (uint32_t)e->in_len;
			if (!rx->mrg)
				break;
		}
		if (!rx->mrg && nbufs && sum < len) {
			/* one chain must hold it: drop, keep the chain */
			st->drops[VNET_DROP_TOO_BIG]++;
			rx_next(rx);
			continue;
		}
		if (sum < len) {
			if (j == VNETD_RX_ELEMS && cur == 0) {
				/* more chains than a round holds: never fits */
				st->drops[VNET_DROP_TOO_BIG]++;
				rx_next(rx);
				continue;
			}
			if (j == VNETD_RX_ELEMS) {
				why = RX_AGAIN;
				break;
			}
			if (npop - cur >= vq->num) {
				/* every buffer the ring can hold is too little */
				st->drops[VNET_DROP_TOO_BIG]++;
				rx_next(rx);
				continue;
			}
			why = RX_STARVED;
			break;
		}

		/* the header tells the guest how many buffers follow */
		if (hdr == sizeof(struct virtio_net_hdr_mrg_rxbuf)) {
			uint16_t nb = htole16(rx->mrg ? (uint16_t)nbufs : 1);

			memcpy(buf + offsetof(struct virtio_net_hdr_mrg_rxbuf,
					      num_buffers),
			       &nb, sizeof(nb));
		}
		for (j = cur; nskip && j < cur + nbufs + nskip; j++) {
			if (!rx->r.elems[j].err)
				continue;
			rx->used[nused].id = rx->r.elems[j].head;
			rx->used[nused++].len = 0;
		}
		for (off = 0, j = 0; j < nbufs + nskip; j++, cur++) {
			const struct vhost_vq_elem *e = &rx->r.elems[cur];
			uint32_t n;

			if (e->err)
				continue;
			n = elem_copy(e, buf + off, len - off, true);
			vhost_vq_log_write(vq, e, n);
			rx->used[nused].id = e->head;
			rx->used[nused++].len = n;
			off += n;
		}
		bytes += len - hdr;
		(*frames)++;
		rx_next(rx);
	}
out:
	if (npop > cur)
		vhost_vq_rewind(vq, npop - cur);
	if (why == RX_BROKEN)
		nused = 0;
	if (rx_push(rx, nused, frames, bytes) || why == RX_BROKEN) {
		st->drops[VNET_DROP_BROKEN] += *frames;
		*frames = 0;
		return RX_BROKEN;
	}
	st->bounced += *frames;
	return why;
}

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

/*
 * One direct burst of up to N reads (above): pops the chains, reads, and
 * delivers the frames that fit where they landed; the others are left
 * pending as bounce frames.  *READ gets how many reads found a frame (0:
 * the tap is empty) or -errno (the tap failed, nothing popped stays out),
 * *FRAMES how many frames were delivered.
 */
static enum rx_stop rx_direct(struct vnetd_rx *rx, unsigned int n, int *read,
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
	for (i = 0; i < got; i++) {
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
		if (len > rx->in_chain[i] && rx->in_chain[i]) {
			if (rx->mrg && rx->big_bursts)
				rx->big = rx->big_bursts;
			else
				rx->bounce = VNETD_RX_BIG_BURSTS;
		}
		elem_copy(e, rx_slot(rx, i),
			  len < rx->in_chain[i] ? len : rx->in_chain[i], false);
		rx->len[i] = len;
		rx->order[rx->count++] = (uint8_t)i;
	}
	rx->mean = (uint32_t)(sum / (unsigned int)r);
	if (got > cur)
		vhost_vq_rewind(vq, got - cur);
	if (rx_push(rx, nused, frames, bytes)) {
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
 * *READ and *FRAMES as in rx_direct.
 */
static enum rx_stop rx_big(struct vnetd_rx *rx, unsigned int n, int *read,
			   unsigned int *frames)
{
	struct vhost_vq *vq = rx->r.vq;
	struct vhost_vq_elem *el = rx->r.elems;
	unsigned int hdr = rx->hdr_len;
	unsigned int k, nused = 0, multi = 0, npop, lead, nb, j, cnt;
	uint64_t bytes = 0, lens = 0, sum;
	uint32_t len, left, fill, off;
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
		if (sum < VNETD_RX_SLOT) {
			rx->iov[c].iov_base = rx_slot(rx, 0) + sum;
			rx->iov[c++].iov_len = VNETD_RX_SLOT - (size_t)sum;
		}
		rx->iovcnt[0] = (unsigned int)c;
		r = vnetd_tapio_readv_burst(rx->io, rx->iov, rx->iovcnt, 1,
					    rx->res);
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
			/* bounce frame 0: the chains' part to the slot's front */
			for (off = 0, j = lead; j < lead + nb && off < len; j++)
				off += elem_copy(&el[j], rx_slot(rx, 0) + off,
						 len - off, false);
			vhost_vq_rewind(vq, npop - lead);
			rx->len[0] = len;
			rx->order[0] = 0;
			rx->count = 1;
			multi++;
			break;
		}
		for (left = len, cnt = 0, j = lead; left && j < lead + nb; j++) {
			fill = el[j].in_len < left ? (uint32_t)el[j].in_len : left;
			vhost_vq_log_write(vq, &el[j], fill);
			rx->used[nused].id = el[j].head;
			rx->used[nused++].len = fill;
			left -= fill;
			cnt++;
		}
		/* the header is in the first chain (logged above) */
		put_num_buffers(&el[lead], (uint16_t)cnt);
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
	if (rx_push(rx, nused, frames, bytes) || why == RX_BROKEN) {
		rx->r.st->drops[VNET_DROP_BROKEN] += *frames;
		*frames = 0;
		return RX_BROKEN;
	}
	return why;
}

/* Move frames from the tap to the guest, up to the budget. */
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
			k = avail < rx->want ? avail : rx->want;
			if ((rx->big && rx->mrg) ||
			    (!rx->bounce && rx->mean >= rx->direct_min)) {
				/* into the guest's buffers: big or one chain each */
				why = rx->big && rx->mrg ?
					      rx_big(rx, k, &n, &frames) :
					      rx_direct(rx, k, &n, &frames);
				done += frames;
				if (why == RX_BROKEN)
					return VNETD_BURST_BROKEN;
				if (why == RX_STARVED)
					goto starved;
			} else {
				if (rx->bounce)
					rx->bounce--;
				n = vnetd_tapio_read_burst(rx->io, k, rx->len,
							   rx->order);
				if (n > 0) {
					rx->head = 0;
					rx->count = (unsigned int)n;
					rx->read_hdr = rx->hdr_len;
					rx_mean(rx, rx->len, rx->order,
						(unsigned int)n);
				}
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
