/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/* Guest TX: guest TX ring -> tap, in bursts (tx.c). */
#ifndef VNETD_TX_H
#define VNETD_TX_H

#include <stdint.h>

#include "virtq.h"
#include "burst.h"
#include "coal.h"
#include "tapio.h"

#define VNETD_TX_BURST 64 /* guest TX batch when tap_rx_frames is 0 */

/*
 * Guest TX: the ring, the tap queue it writes into and one burst's
 * results.  hdr_len is the negotiated header's, taken at each ring start.
 */
struct vnetd_tx {
	struct vnetd_ring r;
	struct vnetd_tapio *io;
	unsigned int hdr_len;  /* virtio-net header: 10 or 12 */
	uint64_t busy_poll_ns; /* --busy-poll: ring spin window */
	struct vhost_vq_used used[VNETD_TX_BURST_MAX];
	int res[VNETD_TX_BURST_MAX]; /* per chain: bytes written or -errno */
};

/* One burst (up to VNETD_BUDGET frames) of a running ring. */
enum vnetd_burst vnetd_tx_burst(struct vnetd_tx *tx);

#endif /* VNETD_TX_H */
