/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * A port's ethtool monitor (monitor.c): ethtool's netlink notifications
 * of its tap, so that a direct `ethtool -C TAP rx-frames N` reaches the
 * config map's tap_rx_frames, vnetd's TX batch.  The control thread's.
 */
#ifndef VNETD_MONITOR_H
#define VNETD_MONITOR_H

#include "tap/tap_bpf.h"
#include "tap/tap.h"

struct vnetd_monitor {
	struct vnet_ethtool_monitor *mon;	/* NULL: none */
	int fd;					/* its fd for epoll; -1 */
};

/* In the tap's netns (the caller is in it); without one, only a warning. */
void vnetd_monitor_open(struct vnetd_monitor *m, const struct vnetd_tap *t);
void vnetd_monitor_close(struct vnetd_monitor *m);

/* The monitor's fd is readable: mirror a change of T's rx-frames into M. */
void vnetd_monitor_event(struct vnetd_monitor *mon, struct vnetd_tap *t,
			 struct vnetd_maps *m);

#endif /* VNETD_MONITOR_H */
