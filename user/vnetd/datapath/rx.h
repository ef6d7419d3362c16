/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/* Guest RX: tap -> guest RX ring, in bursts (rx.c, rx_inplace.c). */
#ifndef VNETD_RX_H
#define VNETD_RX_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/uio.h>

#include "virtq.h"
#include "burst.h"
#include "coal.h"
#include "tapio.h"

#define VNETD_RX_ELEMS 64 /* guest RX chains popped per burst */
/*
 * bursts after a frame overflowed its buffer (rx.c): of big reads into
 * mergeable buffers (a test build's VNETD_RX_BIG_BURSTS overrides it, for
 * measurements; 0: none, bounce reads instead), or of bounce reads
 * without MRG_RXBUF
 */
#define VNETD_RX_BIG_BURSTS 64
/* a big read's iovecs at most: the kernel's UIO_MAXIOV */
#define VNETD_RX_BIG_IOV 1024
/*
 * Guest RX reads in place when the last burst's frames averaged at least
 * this many bytes (header included); below, bounce slots are faster
 * (docs/benchmarks.md).  A test build's VNETD_RX_DIRECT_MIN overrides it,
 * for measurements (testing.h).
 */
#define VNETD_RX_DIRECT_MIN 512

/*
 * Guest RX: the ring, the tap queue it reads and the frames read from it,
 * not delivered yet.  hdr_len and mrg are the negotiated header's, taken
 * at each ring start.
 */
struct vnetd_rx {
	struct vnetd_ring r;
	struct vnetd_tapio *io;
	unsigned int hdr_len; /* virtio-net header: 10 or 12 */
	bool mrg;             /* VIRTIO_NET_F_MRG_RXBUF */
	struct vhost_vq_used used[VNETD_RX_ELEMS];
	uint32_t len[VNETD_RX_BURST];  /* per slot: header + frame */
	uint8_t order[VNETD_RX_BURST]; /* slots holding frames, in order */
	unsigned int head, count;      /* pending: order[head..head+count) */
	unsigned int want;             /* reads to issue next burst */
	unsigned int read_hdr;         /* header size they were read with */
	unsigned int bounce;           /* bursts left to read into slots */
	unsigned int big;              /* bursts left of mergeable big reads */
	uint32_t chain_len;            /* big reads: the last chain's bytes */
	uint32_t mean;                 /* the last burst's mean frame length */
	uint32_t direct_min; /* VNETD_RX_DIRECT_MIN (or testing.h's) */
	uint32_t big_bursts; /* VNETD_RX_BIG_BURSTS (or testing.h's) */
	struct iovec *iov;   /* direct reads: VNETD_RX_IOV each */
	unsigned int iovcnt[VNETD_RX_BURST];
	uint32_t in_chain[VNETD_RX_BURST]; /* per read: its chain's bytes */
	int res[VNETD_RX_BURST];           /* per read: bytes or -errno */
	uint64_t push_mark; /* the queues map's push count seen */
	uint64_t ack_mark;  /* ... and its ack count */
	int tap_err;        /* VNETD_BURST_TAP_ERROR: -errno */
};

/*
 * The frames read from the tap and not delivered yet (a hand-over sends
 * them on, handover.c): the ring is stopped.  Pending frame I (0 ..
 * rx->count): its bytes (header of rx->read_hdr bytes, then the frame)
 * and length.  Put one behind the pending ones: 0, or -ENOSPC (every slot
 * taken) / -EINVAL (a length no slot holds, another header size).
 */
const uint8_t *vnetd_rx_pending(const struct vnetd_rx *rx, unsigned int i,
				uint32_t *len);
int vnetd_rx_put_pending(struct vnetd_rx *rx, const void *frame, uint32_t len,
			 unsigned int hdr_len);

/* One burst (up to VNETD_BUDGET frames) of a running ring. */
enum vnetd_burst vnetd_rx_burst(struct vnetd_rx *rx);

#endif /* VNETD_RX_H */
