/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * libvnet's ethtool netlink (ethtool.c): a device's coalescing values,
 * read and set, and the notifications of their changes.  Part of
 * libvnet's API: libvnet.h includes it.
 */
#ifndef LIBVNET_ETHTOOL_H
#define LIBVNET_ETHTOOL_H

#include <linux/types.h>

struct vnet_err;

/* struct vnet_ethtool_coalesce.present */
#define VNET_ETC_RX_USECS (1u << 0)
#define VNET_ETC_RX_FRAMES (1u << 1)
#define VNET_ETC_TX_USECS (1u << 2)
#define VNET_ETC_TX_FRAMES (1u << 3)
#define VNET_ETC_ADAPTIVE_RX (1u << 4)
#define VNET_ETC_ADAPTIVE_TX (1u << 5)

/* A device's ETHTOOL_A_COALESCE_* values (tun reports rx-frames only). */
struct vnet_ethtool_coalesce {
	__u32 present; /* VNET_ETC_*: reported by the driver / to set */
	__u32 rx_usecs;
	__u32 rx_frames;
	__u32 tx_usecs;
	__u32 tx_frames;
	__u8 adaptive_rx;
	__u8 adaptive_tx;
};

/* ETHTOOL_MSG_COALESCE_GET: the live values of IFINDEX (this netns). */
int vnet_ethtool_coalesce_get(int ifindex, struct vnet_ethtool_coalesce *c,
			      struct vnet_err *err);
/* ETHTOOL_MSG_COALESCE_SET of the values in c->present; err has extack. */
int vnet_ethtool_coalesce_set(int ifindex,
			      const struct vnet_ethtool_coalesce *c,
			      struct vnet_err *err);

/*
 * ethtool netlink notifications: a generic netlink socket subscribed to
 * the "monitor" group of the "ethtool" family (both resolved by name), in
 * the caller's network namespace.  Poll vnet_ethtool_monitor_fd() and call
 * vnet_ethtool_monitor_read() when it is readable.
 */
struct vnet_ethtool_monitor;

int vnet_ethtool_monitor_open(struct vnet_ethtool_monitor **mon,
			      struct vnet_err *err);
int vnet_ethtool_monitor_fd(const struct vnet_ethtool_monitor *mon);
/*
 * Read the queued notifications, waiting up to timeout_ms (0: do not wait,
 * -1: until one for IFINDEX arrives).  Returns 1 when an
 * ETHTOOL_MSG_COALESCE_NTF for IFINDEX was read (c holds the newest), 0
 * when none, -errno (-ENOBUFS: notifications were lost; re-read with
 * vnet_ethtool_coalesce_get()).
 */
int vnet_ethtool_monitor_read(struct vnet_ethtool_monitor *mon, int ifindex,
			      int timeout_ms, struct vnet_ethtool_coalesce *c,
			      struct vnet_err *err);
void vnet_ethtool_monitor_close(struct vnet_ethtool_monitor *mon);

#endif
