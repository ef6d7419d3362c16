/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * libvnet: load, attach, pin and read vnet's BPF programs and maps.
 *
 * Every function returns 0 (or a count) on success and -errno on failure; it
 * never prints and never exits.  Where a caller can act on more than the
 * errno, the function fills a struct vnet_err with a sentence naming the
 * cause and the fix (the CLI prints it as "Error: ...").
 */
#ifndef LIBVNET_H
#define LIBVNET_H

#include <stdbool.h>
#include <stddef.h>
#include <net/if.h>
#include <linux/types.h>
#include <vnet/abi.h>

#define VNET_BPFFS "/sys/fs/bpf"
#define VNET_PIN_ROOT VNET_BPFFS "/vnet"

/* pin names inside VNET_PIN_ROOT/<ifname>/ */
#define VNET_PIN_LINK_XDP "link_xdp"
#define VNET_PIN_LINK_TC_INGRESS "link_tc_ingress"
#define VNET_PIN_LINK_TC_EGRESS "link_tc_egress"
#define VNET_PIN_LINK_XMIT "link_xmit" /* tp_btf/net_dev_start_xmit */
#define VNET_PIN_PROG_TC_INGRESS "prog_tc_ingress" /* legacy clsact only */
#define VNET_PIN_PROG_TC_EGRESS "prog_tc_egress"   /* legacy clsact only */

struct vnet_err {
	char msg[512];
};

void vnet_err_set(struct vnet_err *err, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* --- environment ------------------------------------------------------ */

/* Enter network namespace NAME (/var/run/netns/NAME, or a path). */
int vnet_netns_enter(const char *name, struct vnet_err *err);

/* Make sure bpffs is mounted at /sys/fs/bpf (mounting it if it is not). */
int vnet_bpffs_ensure(struct vnet_err *err);

int vnet_pin_path(char *buf, size_t len, const char *ifname, const char *obj);

/* DEV exists in this netns and is a tap (tun driver, Ethernet framing). */
int vnet_tap_check(const char *ifname, int *ifindex, struct vnet_err *err);

/* --- attach ----------------------------------------------------------- */

struct vnet_attach_opts {
	bool force;   /* replace a foreign XDP program */
	int tx_hook;  /* VNET_HOOK_XDP (default) or VNET_HOOK_TC */
};

/*
 * Returns 0 when attached, -EALREADY when vnet was already attached (nothing
 * changed), -EBUSY when a foreign program is in the way (err names it).
 */
int vnet_attach(const char *ifname, const struct vnet_attach_opts *opts,
		struct vnet_err *err);

/* Detach and unpin.  Works when the device is gone (pins only). */
int vnet_detach(const char *ifname, struct vnet_err *err);

struct vnet_hook_status {
	__u32 prog_id; /* 0 = not attached */
	__u32 link_id; /* 0 = legacy attachment without a link */
	__u32 ifindex; /* from the link: 0 once the device is gone */
};

struct vnet_status {
	char ifname[IF_NAMESIZE];
	bool present;  /* the device still exists (links are live) */
	struct vnet_info info;
	struct vnet_hook_status xdp, tc_ingress, tc_egress, xmit;
	__u32 xdp_mode; /* XDP_ATTACHED_* from the kernel, 0 if unknown */
	/* queues that carried at least one frame, per direction (bitmaps) */
	__u64 seen[VNET_DIR_MAX][VNET_MAX_QUEUES / 64];
};

/* -ENOENT when vnet is not attached to IFNAME (no pins). */
int vnet_status(const char *ifname, struct vnet_status *st,
		struct vnet_err *err);

/* Names of all devices with pins, sorted; returns the count or -errno. */
int vnet_list(char (*names)[IF_NAMESIZE], int max);

/* Remove pins of devices that are gone; returns how many were removed. */
int vnet_gc(char (*removed)[IF_NAMESIZE], int max, struct vnet_err *err);

/* --- maps ------------------------------------------------------------- */

/* Open a pinned map of IFNAME read-write; returns an fd or -errno. */
int vnet_map_open(const char *ifname, const char *map, struct vnet_err *err);

struct vnet_stats_snapshot {
	/* summed over CPUs, indexed by vnet_key(dir, queue) */
	struct vnet_class_stats cls[VNET_DIR_MAX * VNET_MAX_QUEUES];
	struct vnet_queue_state state[VNET_DIR_MAX * VNET_MAX_QUEUES];
};

int vnet_stats_read(const char *ifname, struct vnet_stats_snapshot *snap,
		    struct vnet_err *err);

static inline const struct vnet_counter *
vnet_class_counter(const struct vnet_class_stats *s, int cls)
{
	return (const struct vnet_counter *)s + cls;
}

const char *vnet_class_name(int cls);
const char *vnet_dir_name(int dir);

#endif
