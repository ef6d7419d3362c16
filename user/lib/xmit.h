/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * libvnet (libvnet.h, which includes this): the shared net_dev_start_xmit
 * dispatcher (xmit.c), one tracepoint program for the guest-RX counting
 * of every attached tap.
 */
#ifndef LIBVNET_XMIT_H
#define LIBVNET_XMIT_H

/* --- the shared net_dev_start_xmit dispatcher (xmit.c) ----------------- */

/*
 * Pins of the one dispatcher of the host (include/vnet/abi.h).  bpffs
 * refuses dots in names (EPERM), so no dot-directory: a name of 16
 * characters or more, which no network device can have (IFNAMSIZ), so
 * vnet_list(), status and gc never take it for a device.
 */
#define VNET_XMIT_PIN_NAME "net_dev_start_xmit"
#define VNET_XMIT_PIN_DIR VNET_PIN_ROOT "/" VNET_XMIT_PIN_NAME
#define VNET_XMIT_PIN_LINK "link"
#define VNET_XMIT_PIN_DEVS "devs"
#define VNET_XMIT_PIN_PROGS "progs"

/*
 * Have the dispatcher tail-call PROG_FD (the tap's vnet_xmit_rx) for the
 * device {NETNS, IFINDEX}; creates and attaches the dispatcher if there is
 * none.  -errno (err says why) when the kernel refuses: the caller attaches
 * the program per tap instead.
 */
int vnet_xmit_register(const char *ifname, __u32 netns, __u32 ifindex,
		       int prog_fd, struct vnet_err *err);
/*
 * Remove the entry of program PROG_ID (0: IFNAME's), at KEY if not NULL;
 * the last one takes the dispatcher off the tracepoint and removes its
 * pins.  Returns 1 if the dispatcher was removed, 0, or -errno.
 */
int vnet_xmit_unregister(const char *ifname, __u32 prog_id,
			 const struct vnet_xmit_key *key);
/* Remove entries whose tap pins are gone; 1 if the dispatcher went too. */
int vnet_xmit_gc(void);

struct vnet_xmit_status {
	__u32 link_id, prog_id; /* the dispatcher's */
	bool found;             /* the queried program is in its slot */
	__u32 slot;
};

/* -ENOENT: no dispatcher.  KEY: its entry looked up, not every one walked */
int vnet_xmit_query(struct vnet_xmit_status *xs, __u32 prog_id,
		    const struct vnet_xmit_key *key);

#endif /* LIBVNET_XMIT_H */
