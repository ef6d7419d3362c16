// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * Guest RX: the tap queue of the pair -> the guest's receive ring.
 *
 * Frames are read from the tap in bursts (at most as many as the guest has
 * buffers posted) into bounce slots of 64 KiB + header, then copied into
 * guest buffers: with MRG_RXBUF a frame takes as many buffers as it needs
 * and says so in num_buffers; without, one chain must hold it or it is
 * dropped (drops[VNET_DROP_TOO_BIG]).  Buffers popped and not used are
 * rewound.  A frame that finds no buffer stays in its slot, the tap is no
 * longer polled (tun keeps queueing, its own queue limit applies) and the
 * guest is asked to kick when it posts buffers: nothing is dropped for a
 * slow guest here.  Everything of a burst is pushed with one used->idx
 * store, written pages are dirty-logged, and the signal is decided by
 * coal.c with the PSH bypass: a push frame (the classifier counts them
 * before tun queues the frame) signals at once.
 */
#include <endian.h>
#include <errno.h>
#include <stddef.h>
#include <string.h>
#include <linux/virtio_net.h>

#include "vnetd.h"

static inline uint8_t *rx_slot(const struct vnetd_qp *qp, unsigned int i)
{
	return qp->io.slots + (size_t)i * VNETD_RX_SLOT;
}

/* Copy LEN bytes from SRC into E's writable segments; bytes copied. */
static uint32_t copy_to_elem(const struct vhost_vq_elem *e, const uint8_t *src,
			     uint32_t len)
{
	unsigned int i, end = e->out_num + e->in_num;
	uint32_t done = 0;

	for (i = e->out_num; i < end && done < len; i++) {
		size_t chunk = e->iov[i].iov_len;

		if (chunk > len - done)
			chunk = len - done;
		memcpy(e->iov[i].iov_base, src + done, chunk);
		done += (uint32_t)chunk;
	}
	return done;
}

/* The pending frame at the head is gone (delivered or dropped). */
static void rx_next(struct vnetd_rx *rx)
{
	rx->head++;
	rx->count--;
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
static enum rx_stop rx_deliver(struct vnetd_qp *qp, unsigned int *frames)
{
	struct vnetd_rx *rx = &qp->rx;
	struct vhost_vq *vq = rx->r.vq;
	struct vnet_dp_stats *st = rx->r.st;
	unsigned int npop = 0, cur = 0, nused = 0, nbufs, nskip, j;
	unsigned int hdr = qp->hdr_len;
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
		buf = rx_slot(qp, rx->order[rx->head]);
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
			if (!qp->mrg)
				break;
		}
		if (!qp->mrg && nbufs && sum < len) {
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
			uint16_t nb = htole16(qp->mrg ? (uint16_t)nbufs : 1);

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
			n = copy_to_elem(e, buf + off, len - off);
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
	if (why == RX_BROKEN ||
	    (nused && vhost_vq_push_burst(vq, rx->used, nused))) {
		/* copied into buffers of a ring that broke: never pushed */
		st->drops[VNET_DROP_BROKEN] += *frames;
		*frames = 0;
		return RX_BROKEN;
	}
	st->frames += *frames;
	st->bytes += bytes;
	if (nused) {
		uint64_t p = VNETD_LOAD(rx->r.qs->push);

		st->batches++;
		/*
		 * A push frame counted since the last look was delivered now
		 * or is about to be: tun queued it after the count.
		 */
		vnetd_coal_pushed(&rx->r, *frames ? *frames : nused,
				  p != rx->push_mark);
		rx->push_mark = p;
	}
	return why;
}

/* Move frames from the tap to the guest, up to the budget. */
enum vnetd_burst vnetd_rx_burst(struct vnetd_qp *qp)
{
	struct vnetd_rx *rx = &qp->rx;
	struct vhost_vq *vq = rx->r.vq;
	unsigned int done = 0, avail, frames;
	enum rx_stop why;
	int n;

	/* buffers are looked for when frames need them, not announced */
	vhost_vq_notify_disable(vq);
	for (;;) {
		if (!rx->count) {
			avail = vhost_vq_avail_count(vq);
			if (!avail)
				goto starved;
			/*
			 * As many reads as the last burst found frames, doubled
			 * (1 after an empty tap): a read that finds nothing
			 * costs little, 31 of them per frame would not.
			 */
			n = vnetd_tapio_read_burst(&qp->io, avail < rx->want ?
								    avail :
								    rx->want,
						   rx->len, rx->order);
			if (n < 0) {
				rx->tap_err = n;
				return VNETD_BURST_TAP_ERROR;
			}
			rx->want = n ? 2 * (unsigned int)n : 1;
			if (rx->want > VNETD_RX_BURST)
				rx->want = VNETD_RX_BURST;
			if (!n)
				return VNETD_BURST_TAP_EMPTY;
			rx->head = 0;
			rx->count = (unsigned int)n;
			rx->read_hdr = qp->hdr_len;
		}
		why = rx_deliver(qp, &frames);
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
