/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * Frame I/O on one tap queue (tapio.c): bursts of writes (guest TX) and
 * reads (guest RX) through one io_uring per queue thread, or plain
 * read/writev.  Only the queue thread of the tap queue calls these.
 */
#ifndef VNETD_TAPIO_H
#define VNETD_TAPIO_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/uio.h>

#include "virtq.h"

#define VNETD_TX_BURST_MAX 64	/* guest TX chains per burst at most (tun's rx-frames cap) */
#define VNETD_RX_BURST 32	/* frames read from the tap per burst */
/*
 * One frame read from the tap: the largest GSO frame (64 KiB IP packet,
 * Ethernet header, two VLAN tags) plus the virtio-net header, rounded up.
 */
#define VNETD_RX_SLOT (66 * 1024)
/*
 * Reads in a burst from which its slots become io_uring fixed buffers
 * (tapio.c): a burst that long follows one that found frames queued back
 * to back.  The one or two reads per frame of sparse traffic stay plain
 * READs, which touch a page of a slot rather than pin all 66 KiB of it.
 */
#define VNETD_RX_FIXED_MIN 3
/* a direct read: a chain's writable segments and its slot's tail */
#define VNETD_RX_IOV (VHOST_VQ_MAX_IOV + 1)

struct io_uring;

struct vnetd_tapio {
	const char *name;	/* log prefix: the port's */
	unsigned int index;	/* the queue pair, for log lines */
	int fd;			/* the tap queue (tap.c opened it) */
	struct io_uring *uring;	/* NULL: plain syscalls */
	/*
	 * The RX slots as io_uring buffers: slot i is buffer i of a sparse
	 * table, registered (pinned, so resident) the first time a burst of
	 * VNETD_RX_FIXED_MIN reads or more goes into it; until then, and for
	 * a slot whose registration failed, plain READs (touched only as far
	 * as frames reach).
	 */
	bool fixed;		/* the sparse table is there */
	uint32_t fixed_slots;	/* bit i: slot i is registered */
	uint32_t fixed_failed;	/* bit i: its registration failed */
	uint8_t *slots;		/* RX: VNETD_RX_BURST slots of VNETD_RX_SLOT */
};

/* By the queue thread, once: its io_uring (else plain syscalls). */
int vnetd_tapio_init(struct vnetd_tapio *io);
void vnetd_tapio_exit(struct vnetd_tapio *io);

/*
 * The RX slots given back (none holds a frame): unregistered as fixed
 * buffers (unpinned) and their pages dropped; a later burst registers a
 * slot again as it would the first time.  Kept when the unregistration
 * fails: a pinned page must stay the one mapped.
 */
void vnetd_tapio_trim(struct vnetd_tapio *io);

void vnetd_tapio_write_burst(struct vnetd_tapio *io,
			     const struct vhost_vq_elem *elems, unsigned int n,
			     int *res);
int vnetd_tapio_readv_burst(struct vnetd_tapio *io, const struct iovec *iov,
			    const unsigned int *iovcnt, unsigned int n,
			    int *res);
int vnetd_tapio_read_burst(struct vnetd_tapio *io, unsigned int n,
			   uint32_t *len, uint8_t *order);

#endif /* VNETD_TAPIO_H */
