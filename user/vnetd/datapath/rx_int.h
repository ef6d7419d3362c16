/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * Inside guest RX, shared by its two files: rx.c (the burst, the reads
 * into bounce slots and their delivery) and rx_inplace.c (the reads into
 * the guest's own buffers): what a round reports, the slots, copies into
 * and out of a chain, num_buffers, publishing a round's used entries.
 */
#ifndef VNETD_RX_INT_H
#define VNETD_RX_INT_H

#include <endian.h>
#include <stddef.h>
#include <string.h>
#include <linux/virtio_net.h>

#include "rx.h"
#include "base/util.h"

enum rx_stop {
	RX_DONE,	/* every pending frame delivered */
	RX_AGAIN,	/* the round is full: deliver the rest in the next one */
	RX_STARVED,	/* the guest has no buffer left */
	RX_BROKEN,
};

static inline uint8_t *rx_slot(const struct vnetd_rx *rx, unsigned int i)
{
	return rx->io->slots + (size_t)i * VNETD_RX_SLOT;
}

/*
 * Copy LEN bytes between BUF and E's writable segments, from their start:
 * into the guest (TO_GUEST) or out of it.  Bytes copied.
 */
static inline uint32_t elem_copy(const struct vhost_vq_elem *e, uint8_t *buf,
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
static inline void put_num_buffers(const struct vhost_vq_elem *e, uint16_t nb)
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
static inline void rx_next(struct vnetd_rx *rx)
{
	rx->head++;
	rx->count--;
}

/*
 * Count NUSED used entries holding *FRAMES frames of BYTES payload (through
 * bounce slots: BOUNCED), publish them and let coal.c decide the signal.
 * Nonzero when the ring broke.
 *
 * Counted before the used index is stored (its release orders the counts
 * before it): a frame the guest can take is in dp_stats already, so that
 * whoever took it and then reads the counters finds it there, bounced or
 * not.  Counted after it, they could lag what the guest has taken: the
 * reader, on the other CPU, sees the index (or is woken by the signal)
 * while this thread, preempted on a busy host, has not counted yet.  When
 * the push fails (the ring broke) the counts are taken back: nothing was
 * published.
 */
static inline int rx_push(struct vnetd_rx *rx, unsigned int nused,
			  unsigned int *frames, uint64_t bytes, bool bounced)
{
	struct vnet_dp_stats *st = rx->r.st;
	uint64_t p, a;

	if (!nused)
		return 0;
	st->frames += *frames;
	st->bytes += bytes;
	st->batches++;
	if (bounced)
		st->bounced += *frames;
	if (vhost_vq_push_burst(rx->r.vq, rx->used, nused)) {
		st->frames -= *frames;
		st->bytes -= bytes;
		st->batches--;
		if (bounced)
			st->bounced -= *frames;
		return -1;
	}
	/*
	 * A push frame (or pure ACK) counted since the last look was
	 * delivered now or is about to be: tun queued it after the count.
	 */
	p = VNETD_LOAD(rx->r.qs->push);
	a = VNETD_LOAD(rx->r.qs->ack);
	vnetd_coal_pushed(&rx->r, *frames ? *frames : nused,
			  (p != rx->push_mark) << VNET_CLASS_PUSH |
				  (a != rx->ack_mark) << VNET_CLASS_ACK,
			  (unsigned int)(a - rx->ack_mark));
	rx->push_mark = p;
	rx->ack_mark = a;
	return 0;
}

/*
 * rx_inplace.c: one burst of up to N reads into the guest's buffers, one
 * chain each (direct) or a mergeable frame's chains each (big).  *READ
 * gets how many reads found a frame (0: the tap is empty) or -errno (the
 * tap failed, nothing popped stays out), *FRAMES how many frames were
 * delivered; the frames that did not fit are left pending in the slots.
 */
enum rx_stop vnetd_rx_direct(struct vnetd_rx *rx, unsigned int n, int *read,
			     unsigned int *frames);
enum rx_stop vnetd_rx_big(struct vnetd_rx *rx, unsigned int n, int *read,
			  unsigned int *frames);

#endif /* VNETD_RX_INT_H */
