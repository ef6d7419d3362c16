// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * A port's ethtool monitor (monitor.h): tun's rx-frames, set with ethtool
 * on the tap, is vnetd's guest-TX batch.  A notification lost on the way
 * (ENOBUFS) is made up for by asking for the current value.
 */
#include <errno.h>

#include "monitor.h"
#include "base/util.h"
#include "libvnet.h"
#include "log.h"
#include "tap/tap.h"
#include "tap/tap_bpf.h"

void vnetd_monitor_open(struct vnetd_monitor *m, const struct vnetd_tap *t)
{
	struct vnet_err err = {};

	m->fd = -1;
	if (vnet_ethtool_monitor_open(&m->mon, &err)) {
		pr_warn(t, "ethtool monitor unavailable (%s): a direct 'ethtool -C %s rx-frames N' will not reach vnetd",
			err.msg, t->ifname);
		m->mon = NULL;
		return;
	}
	m->fd = vnet_ethtool_monitor_fd(m->mon);
}

void vnetd_monitor_close(struct vnetd_monitor *m)
{
	vnet_ethtool_monitor_close(m->mon);
	m->mon = NULL;
	m->fd = -1;
}

void vnetd_monitor_event(struct vnetd_monitor *mon, struct vnetd_tap *t,
			 struct vnetd_maps *m)
{
	struct vnet_ethtool_coalesce c = {};
	struct vnet_err err = {};
	int ret, saved;

	ret = vnet_ethtool_monitor_read(mon->mon, t->ifindex, 0, &c, &err);
	if (ret == -ENOBUFS) {
		/* lost some: ask for the current value in the tap's netns */
		if (vnetd_tap_ns_enter(t, &saved, &err)) {
			pr_warn(t, "%s", err.msg);
			return;
		}
		ret = vnet_ethtool_coalesce_get(t->ifindex, &c, &err) ? -1 : 1;
		vnetd_netns_restore(saved);
	}
	if (ret < 0) {
		pr_warn(t, "%s", err.msg);
		return;
	}
	if (ret == 1 && (c.present & VNET_ETC_RX_FRAMES))
		vnetd_maps_tap_rx_frames(m, c.rx_frames);
}
