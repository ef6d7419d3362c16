/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * A port's tap device and the network namespace it is in (tap.c): its
 * queues (one per queue pair), link, offloads and MTU; entering and
 * leaving network namespaces.  The control thread's; the queue threads
 * read and write the queue fds (tapio.c) but never open or close them.
 */
#ifndef VNETD_TAP_H
#define VNETD_TAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/uio.h>

#include "libvnet.h"
#include "base/util.h"

/* how long an existing tap's queues that no process holds may take to go */
#define VNETD_TAP_UNHELD_MS 3000

struct vnetd_tap {
	const char *name;	/* log prefix: the port's */
	const char *ifname;	/* the tap (the port's configuration) */
	const char *netns;	/* --netns; "": the caller's namespace */
	unsigned int nr_queues;	/* the port's queue pairs */
	int fd[VNETD_MAX_QP];	/* queue q, O_NONBLOCK; -1: not open */
	int ifindex;
	bool created;		/* the tap did not exist before us */
	bool single_queue;	/* the tap has no IFF_MULTI_QUEUE */
	unsigned int mtu_orig;	/* its MTU before NET_SET_MTU; 0: untouched */
	int netns_fd;		/* --netns, held from open on; else -1 */
	uint64_t netns_ino;	/* its inode: a new netns of that name differs */
};

/* network namespaces: this thread's as an fd; enter one; come back */
int vnetd_netns_here(struct vnet_err *err);
int vnetd_netns_switch(const char *netns, int *saved, struct vnet_err *err);
int vnetd_netns_enter_fd(int netns_fd, int *saved, struct vnet_err *err);
void vnetd_netns_restore(int saved);

void vnetd_tap_init(struct vnetd_tap *t, const char *name, const char *ifname,
		    const char *netns, unsigned int nr_queues);

/*
 * Enter the tap's netns by its name and hold it (vnetd_tap_lost() sees a
 * name that goes); *SAVED as vnetd_netns_switch().  0 or -errno (logged).
 * vnetd_tap_ns_close() lets it go.
 */
int vnetd_tap_ns_open(struct vnetd_tap *t, int *saved);
void vnetd_tap_ns_close(struct vnetd_tap *t);

/*
 * Enter the tap's netns again: the one it was opened in (held, so that it
 * is reached even after its name was removed), else by name.
 */
int vnetd_tap_ns_enter(struct vnetd_tap *t, int *saved, struct vnet_err *err);

/* The queues, in the tap's netns (the caller is in it); logged. */
int vnetd_tap_open(struct vnetd_tap *t);
void vnetd_tap_close(struct vnetd_tap *t);

/*
 * The negotiated FEATURES: HDR_LEN bytes of virtio-net header on every
 * frame, and what tun may hand over for the guest (its GUEST_* offloads).
 * Every ring is stopped.  0 or -errno (logged).
 */
int vnetd_tap_set_vnet(struct vnetd_tap *t, uint64_t features,
		       unsigned int hdr_len);

/* The frontend's MTU is the tap's (NET_SET_MTU); 0 or -errno (logged). */
int vnetd_tap_set_mtu(struct vnetd_tap *t, unsigned int mtu);

/* The frontend went: no offloads, the tap's own MTU again. */
void vnetd_tap_reset(struct vnetd_tap *t);

/* One frame written into queue 0 from the control thread (RARP). */
int vnetd_tap_write(struct vnetd_tap *t, const struct iovec *iov,
		    unsigned int n);

/* Is the tap, or its netns, gone?  Says why in WHY. */
bool vnetd_tap_lost(struct vnetd_tap *t, char *why, size_t len);

#endif /* VNETD_TAP_H */
