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
#include "util.h"

#define VNETD_TX_BURST_MAX 64	/* guest TX chains per burst at most (tun's rx-frames cap) */
#define VNETD_RX_BURST 32	/* frames read from the tap per burst */
/*
 * One frame read from the tap: the largest GSO frame (64 KiB IP packet,
 * Ethernet header, two VLAN tags) plus the virtio-net header, rounded up.
 */
#define VNETD_RX_SLOT (66 * 1024)
/* a direct read: a chain's writable segments and its slot's tail */
#define VNETD_RX_IOV (VHOST_VQ_MAX_IOV + 1)

struct io_uring;

struct vnetd_tapio {
	const char *name;	/* log prefix: the port's */
	unsigned int index;	/* the queue pair, for log lines */
	int fd;			/* the tap queue (tap.c opened it) */
	struct io_uring *uring;	/* NULL: plain syscalls */
	bool fixed;		/* the RX slots are io_uring buffer 0 */
	uint8_t *slots;		/* RX: VNETD_RX_BURST slots of VNETD_RX_SLOT */
};

/* By the queue thread, once: its io_uring (else plain syscalls). */
int vnetd_tapio_init(struct vnetd_tapio *io);
void vnetd_tapio_exit(struct vnetd_tapio *io);

void vnetd_tapio_write_burst(struct vnetd_tapio *io,
			     const struct vhost_vq_elem *elems, unsigned int n,
			     int *res);
int vnetd_tapio_readv_burst(struct vnetd_tapio *io, const struct iovec *iov,
			    const unsigned int *iovcnt, unsigned int n,
			    int *res);
int vnetd_tapio_read_burst(struct vnetd_tapio *io, unsigned int n,
			   uint32_t *len, uint8_t *order);

#endif /* VNETD_TAPIO_H */
