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
#include <stdio.h>
#include <net/if.h>
#include <linux/types.h>
#include <vnet/abi.h>

#define VNET_BPFFS "/sys/fs/bpf"
#define VNET_PIN_ROOT VNET_BPFFS "/vnet"

/* pin names inside VNET_PIN_ROOT/<ifname>/ */
#define VNET_PIN_LINK_XDP "link_xdp"
#define VNET_PIN_LINK_TC_INGRESS "link_tc_ingress"
#define VNET_PIN_LINK_TC_EGRESS "link_tc_egress"
#define VNET_PIN_LINK_XMIT "link_xmit" /* per-tap fallback only (below) */
#define VNET_PIN_PROG_XMIT "prog_xmit" /* the tap's vnet_xmit_rx */
#define VNET_PIN_PROG_TC_INGRESS "prog_tc_ingress" /* legacy clsact only */
#define VNET_PIN_PROG_TC_EGRESS "prog_tc_egress"   /* legacy clsact only */

/*
 * vnet's maps, pinned in VNET_PIN_ROOT/<ifname>/ under these names; their
 * layouts (value size, entries, BPF_F_MMAPABLE) are in include/vnet/abi.h
 * and vnet_map_get() checks them.
 */
enum vnet_map_id {
	VNET_MAP_STATS,    /* "stats"    PERCPU_ARRAY of vnet_class_stats */
	VNET_MAP_QUEUES,   /* "queues"   mmapable ARRAY of vnet_queue_state */
	VNET_MAP_CONFIG,   /* "config"   mmapable ARRAY of vnet_config */
	VNET_MAP_INFO,     /* "info"     ARRAY of one vnet_info */
	VNET_MAP_DP_STATS, /* "dp_stats" mmapable ARRAY of vnet_dp_stats */
	VNET_MAP_POLICY,   /* "policy"   the replacement policy's record */
	VNET_MAP_LIMITS, /* "limits"   mmapable ARRAY of vnet_limit, by direction */
	VNET_MAP_GUARD, /* "guard"    ARRAY of one vnet_guard */
	VNET_MAP_GUARD_STATS, /* "guard_stats" PERCPU_ARRAY of vnet_counter, by reason */
	VNET_MAP_VM,          /* "vm"       mmapable ARRAY of one vnet_vm */
	VNET_MAP_MAX,
};

#define VNET_PIN_MAP_NAMES                                                     \
	{                                                                      \
		[VNET_MAP_STATS] = "stats", [VNET_MAP_QUEUES] = "queues",      \
		[VNET_MAP_CONFIG] = "config", [VNET_MAP_INFO] = "info",        \
		[VNET_MAP_DP_STATS] = "dp_stats",                              \
		[VNET_MAP_POLICY] = VNET_PIN_POLICY,                           \
		[VNET_MAP_LIMITS] = "limits", [VNET_MAP_GUARD] = "guard",      \
		[VNET_MAP_GUARD_STATS] = "guard_stats", [VNET_MAP_VM] = "vm",  \
	}

/* the pin name of map ID ("stats", ...), NULL for an unknown ID */
const char *vnet_map_name(enum vnet_map_id id);

struct vnet_err {
	char msg[512];
};

void vnet_err_set(struct vnet_err *err, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/*
 * libbpf's own messages (the verifier's log, vnetctl -d): written to F,
 * or dropped with NULL (the default of libvnet's callers; its warnings
 * become libvnet's errors).
 */
void vnet_libbpf_log(FILE *f);

/* --- environment ------------------------------------------------------ */

/* Enter network namespace NAME (/var/run/netns/NAME, or a path). */
int vnet_netns_enter(const char *name, struct vnet_err *err);
/* The process entered one with vnet_netns_enter() (vnetctl -n NAME). */
bool vnet_netns_named(void);

/* Make sure bpffs is mounted at /sys/fs/bpf (mounting it if it is not). */
int vnet_bpffs_ensure(struct vnet_err *err);
/*
 * bpffs is mounted at /sys/fs/bpf; never mounts it.  -ENOTSUP in a private
 * mount namespace (`ip netns exec`), -ENOENT when it is not mounted: err
 * says which, for commands that read pins.
 */
int vnet_bpffs_check(struct vnet_err *err);

/*
 * Whose words the hints in error messages use: vnetctl's ("vnetctl -n NS
 * ...", the default) or vnetd's ("--netns NAME").
 */
#define VNET_HINT_VNETCTL 0
#define VNET_HINT_VNETD 1
void vnet_hint_set(int prog);
int vnet_hint_prog(void);
/* The name in /var/run/netns of network namespace inode INO, or -errno. */
int vnet_netns_name(__u64 ino, char *buf, size_t len);
/*
 * " -n NAME" when the calling thread is in a network namespace other than
 * the initial one that has a name in /var/run/netns, else "": what a
 * hint's vnetctl command line needs to reach the same device.
 */
const char *vnet_hint_netns(char *buf, size_t len);
/*
 * The name of the (named, other) network namespace that has a device
 * IFNAME, or -ENOENT.  Enters each one in turn (the calling thread only)
 * and returns to its own.
 */
int vnet_netns_of_dev(const char *ifname, char *buf, size_t len);
/* vnet_hint_netns(), or " -n NAME" of the namespace that has IFNAME */
const char *vnet_hint_netns_dev(const char *ifname, char *buf, size_t len);

int vnet_pin_path(char *buf, size_t len, const char *ifname, const char *obj);

/* NULL when S can be an interface name, else why not (the limit, ...) */
const char *vnet_ifname_invalid(const char *s);

/* A tap's tun flags (rtnetlink link info); known: the kernel said them. */
struct vnet_tap_flags {
	bool known;
	bool multi_queue; /* IFF_MULTI_QUEUE */
	bool vnet_hdr;    /* IFF_VNET_HDR: a virtio_net_hdr with each frame */
	__u32 queues;     /* queues attached now */
};
/* The flags of tap IFINDEX (this netns): 0, or -errno (-EOPNOTSUPP: old kernel). */
int vnet_tap_flags(int ifindex, struct vnet_tap_flags *f);
/* The kind of IFINDEX's ingress qdisc (clsact, ingress; "": none) into KIND. */
int vnet_tap_ingress_qdisc(int ifindex, char *kind, size_t len);

/* DEV exists in this netns and is a tap (tun driver, Ethernet framing). */
int vnet_tap_check(const char *ifname, int *ifindex, struct vnet_err *err);

/* --- attach ----------------------------------------------------------- */

struct vnet_attach_opts {
	bool force;   /* replace a foreign XDP program */
	/*
	 * VNET_HOOK_TC or VNET_HOOK_XDP; 0: tc, and an existing attachment
	 * is taken with whatever hook it has
	 */
	int tx_hook;
	const char *policy; /* replacement batching policy object, or NULL */
	const char *vm;     /* the VM's name (vnet_vm_check()), or NULL */
	/*
	 * VNET_TC_TCX (0): tc programs on tcx links; VNET_TC_CLSACT: as
	 * clsact direct-action filters (an attach without the RCU grace
	 * period a tcx link waits for under the RTNL lock).  Either falls
	 * back to the other where the kernel refuses it.
	 */
	int tc_attach;
};
#define VNET_TC_TCX 0
#define VNET_TC_CLSACT 1
/* "tcx" or "clsact" into *HOW; -EINVAL for anything else */
int vnet_tc_attach_parse(const char *s, int *how);

/*
 * Returns 0 when attached, -EALREADY when vnet was already attached (nothing
 * changed), -EBUSY when a foreign program is in the way (err names it),
 * -EEXIST when it is attached with the other tx_hook than the one asked
 * for (err says how to switch) or its pins are another netns' device's.
 */
int vnet_attach(const char *ifname, const struct vnet_attach_opts *opts,
		struct vnet_err *err);

/* Detach and unpin.  Works when the device is gone (pins only). */
int vnet_detach(const char *ifname, struct vnet_err *err);
/*
 * The same, but the links are not detached one by one: they go with their
 * pins, the kernel detaching each (an RCU grace period under the RTNL
 * lock, for tc) after the call returns.  For a process that stops.
 */
int vnet_detach_unpin(const char *ifname, struct vnet_err *err);

struct vnet_hook_status {
	__u32 prog_id; /* 0 = not attached */
	__u32 link_id; /* 0 = legacy attachment without a link */
	__u32 ifindex; /* from the link: 0 once the device is gone */
};

struct vnet_status {
	char ifname[IF_NAMESIZE];
	bool present;  /* the device still exists (links are live) */
	struct vnet_info info;
	/*
	 * xmit: prog_id is the tap's vnet_xmit_rx; link_id its own link (per
	 * tap), 0 when the shared dispatcher tail-calls it (xmit_dispatcher_*)
	 */
	struct vnet_hook_status xdp, tc_ingress, tc_egress, xmit;
	__u32 xmit_attach;             /* VNET_XMIT_* as found now, 0: not reached */
	__u32 xmit_slot;               /* shared: the tap's slot in the dispatcher */
	__u32 xmit_dispatcher_id;      /* shared: the dispatcher's program id */
	__u32 xmit_dispatcher_link_id; /* shared: and its link */
	__u32 xdp_mode; /* XDP_ATTACHED_* from the kernel, 0 if unknown */
	/* queues that carried at least one frame, per direction (bitmaps) */
	__u64 seen[VNET_DIR_MAX][VNET_MAX_QUEUES / 64];
};

/*
 * -EEXIST (ERR says why) when the pins of IFNAME belong to a present
 * device of another network namespace than the caller's and the caller
 * names its own (not the host's) or has a device IFNAME itself: a command
 * here must not act on that device.  0 otherwise, no pins included.
 * vnet_map_get(), vnet_detach() and vnet_attach() check it.
 */
int vnet_pins_check(const char *ifname, struct vnet_err *err);

/* IFNAME's pins are of a device of this netns that is gone (no status read) */
bool vnet_pins_gone(const char *ifname);

/* -ENOENT when vnet is not attached to IFNAME (no pins). */
int vnet_status(const char *ifname, struct vnet_status *st,
		struct vnet_err *err);

/* Names of all devices with pins, sorted; returns the count or -errno. */
int vnet_list(char (*names)[IF_NAMESIZE], int max);

/*
 * Remove pins of devices that are gone, then the shared dispatcher's
 * entries of taps whose pins are gone (and the dispatcher when none is
 * left); returns how many devices were removed.
 */
int vnet_gc(char (*removed)[IF_NAMESIZE], int max, struct vnet_err *err);

/* the shared net_dev_start_xmit dispatcher (xmit.c) */
#include "xmit.h"

/* --- maps (maps.c) ---------------------------------------------------- */

/* vnet_map_get() flags */
#define VNET_MAP_MMAP (1u << 0)    /* map the values read-only ... */
#define VNET_MAP_WRITE (1u << 1)   /* ... or read-write (implies MMAP) */
/*
 * Take the info map whatever abi_version its entry records (detach and
 * status must read a device an older vnetctl attached); its layout is
 * checked all the same.
 */
#define VNET_MAP_ANY_ABI (1u << 2)

struct vnet_map {
	int fd;        /* the map; -1 when it was mmapped (the mapping holds it) */
	void *mem;     /* VNET_MAP_MMAP: the values, indexed by key; else NULL */
	size_t len;    /* bytes mapped at mem (whole pages) */
	__u32 entries; /* max_entries, as abi.h says */
};

/*
 * Open the pinned map ID of IFNAME (in the calling thread's network
 * namespace: the pins of a same-named device of another one are refused,
 * see vnet_pins_check()) and check it is the map abi.h describes: type,
 * key and value size, entries, BPF_F_MMAPABLE; and for the info map the
 * abi_version of its entry (0, not written yet, passes).  With
 * VNET_MAP_MMAP or VNET_MAP_WRITE it mmaps the values and closes the fd.
 * The mapping (m->mem, m->len) lasts until vnet_map_put(), the fd until
 * then too: a datapath maps queues read-only and config and dp_stats
 * read-write once per port and keeps them.  0, or -errno with err naming
 * the cause and the fix: -ENOENT not attached, -EPROTO a map of another
 * layout or ABI version (detach and attach again), -EACCES/-EPERM not
 * root.
 */
int vnet_map_get(const char *ifname, enum vnet_map_id id, unsigned int flags,
		 struct vnet_map *m, struct vnet_err *err);
/*
 * munmap and close what vnet_map_get() left open.  vnet_map_get() sets
 * *m even when it fails; VNET_MAP_INIT is a closed map too.
 */
void vnet_map_put(struct vnet_map *m);
#define VNET_MAP_INIT { .fd = -1 }

/* The info map's entry of IFNAME: vnet_map_get() and a lookup. */
int vnet_info_read(const char *ifname, struct vnet_info *in,
		   struct vnet_err *err);

struct vnet_stats_snapshot {
	/* summed over CPUs, indexed by vnet_key(dir, queue) */
	struct vnet_class_stats cls[VNET_DIR_MAX * VNET_MAX_QUEUES];
	struct vnet_queue_state state[VNET_DIR_MAX * VNET_MAX_QUEUES];
};

/* vnet_stats_fill(): SNAP from an open stats map and the queues' values QS */
int vnet_stats_fill(int stats_fd, const struct vnet_queue_state *qs,
		    struct vnet_stats_snapshot *snap);
int vnet_stats_read(const char *ifname, struct vnet_stats_snapshot *snap,
		    struct vnet_err *err);

static inline const struct vnet_counter *
vnet_class_counter(const struct vnet_class_stats *s, int cls)
{
	return (const struct vnet_counter *)s + cls;
}

/* "native", "generic", "offload", "multi" or "none" (XDP_ATTACHED_*) */
const char *vnet_xdp_mode_name(__u32 mode);
const char *vnet_class_name(int cls);
const char *vnet_dir_name(int dir);

/* --- rate limits (limit.c; the limits map, docs/limits.md) ------------- */

/* the smallest byte burst: one full-sized Ethernet frame */
#define VNET_LIMIT_BURST_MIN 1514
/* a byte burst not given: 10 ms of the rate, at least this (a GSO frame) */
#define VNET_LIMIT_BURST_DEFAULT 65536

/*
 * tc(8)'s words: a rate ("100mbit", "12mbps", bits by default) in bytes
 * per second; a size ("256k", "1514", "1m": 1024s) in bytes; a count
 * ("10000", "10k").  0 and negative values, values past 2^64 and unknown
 * units are refused (err names the units).  WHAT names the value in err.
 */
int vnet_rate_parse(const char *s, __u64 *bytes_per_sec, struct vnet_err *err);
int vnet_size_parse(const char *what, const char *s, __u64 *bytes,
		    struct vnet_err *err);
int vnet_count_parse(const char *what, const char *s, __u64 *n,
		     struct vnet_err *err);
/*
 * One WORD of a limit (rate, burst, initial, pkts-rate, pkts-burst,
 * pkts-initial) and its value into L: 0, -ENOENT for another word, or
 * the parser's error
 */
int vnet_limit_word(struct vnet_limit *l, const char *word, const char *val,
		    struct vnet_err *err);
/*
 * Check L (DIR names it in err: "tx", "rx") and fill in the bursts not
 * given; 0 or -EINVAL (a burst without its rate, a byte burst below one
 * frame).
 */
int vnet_limit_check(struct vnet_limit *l, const char *dir,
		     struct vnet_err *err);
/* Both directions' limits of IFNAME; 0 or -errno. */
int vnet_limit_get(const char *ifname, struct vnet_limit out[VNET_DIR_MAX],
		   struct vnet_err *err);
/* Check L and write it as DIR's limit of IFNAME (live: vnetd follows). */
int vnet_limit_set(const char *ifname, int dir, const struct vnet_limit *l,
		   struct vnet_err *err);
/* The entries at MEM (a mapping of the map), read whole; -EAGAIN: torn. */
int vnet_limit_read(const struct vnet_limit *mem,
		    struct vnet_limit out[VNET_DIR_MAX]);
/* Write L into the entry E of a mapping, readers never seeing half. */
void vnet_limit_write(struct vnet_limit *e, const struct vnet_limit *l);

/* --- spoofing protection (guard.c; the guard map, docs/limits.md) ------- */

/* "52:54:00:12:34:56" into MAC; a multicast address is refused */
int vnet_mac_parse(const char *s, __u8 mac[6], struct vnet_err *err);
/*
 * "192.0.2.2,2001:db8::/64" (',' or '+' between them; "none": no address)
 * appended to G's lists; a bad address or prefix, or more than
 * VNET_GUARD_MAX_ADDRS of a family, is refused with the fix.
 */
int vnet_guard_parse_addrs(const char *list, struct vnet_guard *g,
			   struct vnet_err *err);
/* IFNAME's guard entry, and its drops by reason (summed over CPUs) */
int vnet_guard_get(const char *ifname, struct vnet_guard *g,
		   struct vnet_counter drops[VNET_GUARD_R_MAX],
		   struct vnet_err *err);
/* write G into the guard map FD (one update: live); -EINVAL: no MAC */
int vnet_guard_write(int fd, const struct vnet_guard *g,
		     struct vnet_err *err);
/* write G as IFNAME's guard (one map update: live) */
int vnet_guard_set(const char *ifname, const struct vnet_guard *g,
		   struct vnet_err *err);
/* "mac", "l2", "ipv4", ...: enum vnet_guard_reason's names */
const char *vnet_guard_reason_name(int r);

/* --- the VM a tap belongs to (vm.c; the vm map, docs/metrics.md) ------ */

/*
 * 0 when NAME can be stored as a tap's VM name ("" included: none), else
 * -EINVAL with ERR saying why and the fix: longer than VNET_VM_NAME_MAX
 * bytes, or not UTF-8 (Prometheus' label values are UTF-8).
 */
int vnet_vm_check(const char *name, struct vnet_err *err);
/*
 * IFNAME's VM name into NAME (VNET_VM_NAME_MAX + 1 bytes): 0 ("" when it
 * has none, or was attached by a vnet without the vm map), or -errno.
 */
int vnet_vm_get(const char *ifname, char *name, struct vnet_err *err);
/*
 * Name IFNAME's VM ("" clears it), live: 0, -EINVAL (vnet_vm_check()),
 * -ENOENT not attached, -EPROTO attached by a vnet without the vm map
 * (ERR: detach and attach again).
 */
int vnet_vm_set(const char *ifname, const char *name, struct vnet_err *err);
/* The entry at MEM (a mapping of the map) read whole; -EAGAIN: torn. */
int vnet_vm_read(const struct vnet_vm *mem, struct vnet_vm *out);
/* Write NAME into the entry E of a mapping, readers never seeing half. */
void vnet_vm_write(struct vnet_vm *e, const char *name);

/* --- coalescing, ethtool netlink, batching policy ------------------------ */
/* (coalesce.c, ethtool.c, policy.c; docs/coalesce.md, docs/policy.md)       */

/* Value ranges, checked before anything is written (docs/coalesce.md). */
#define VNET_COAL_FRAMES_MAX 32768 /* the largest virtqueue (split ring) */
#define VNET_COAL_USECS_MAX 100000 /* 100 ms: half of TCP's minimum RTO */
#define VNET_TAP_RX_FRAMES_MAX 64  /* tun caps rx-frames at NAPI_POLL_WEIGHT */

/* struct vnet_coalesce_req.mask: the guest-NIC values to change */
#define VNET_COAL_RX_USECS (1u << 0)
#define VNET_COAL_RX_FRAMES (1u << 1)
#define VNET_COAL_TX_USECS (1u << 2)
#define VNET_COAL_TX_FRAMES (1u << 3)
#define VNET_COAL_ADAPTIVE_RX (1u << 4)
#define VNET_COAL_ADAPTIVE_TX (1u << 5)
#define VNET_COAL_MIN_FRAMES (1u << 6)
#define VNET_COAL_MAX_FRAMES (1u << 7)
#define VNET_COAL_MIN_USECS (1u << 8)
#define VNET_COAL_MAX_USECS (1u << 9)
#define VNET_COAL_TX_BYPASS (1u << 10)
#define VNET_COAL_RX_BYPASS (1u << 11)
#define VNET_COAL_TX_HOLD (1u << 12)
#define VNET_COAL_RX_HOLD (1u << 13)

struct vnet_coalesce_req {
	__u32 mask;              /* VNET_COAL_* */
	struct vnet_config val;  /* the values; adaptive-rx/tx in val.flags */
};

/*
 * Add "WORD VALUE" in the guest NIC's words (ethtool's: rx-usecs,
 * rx-frames, tx-usecs, tx-frames, adaptive-rx, adaptive-tx, and vnet's
 * adaptive bounds min-frames, max-frames, min-usecs, max-usecs and the
 * bypass switches tx-urgent-bypass, rx-push-bypass, the hold rules
 * tx-hold, rx-hold (1: always); booleans are 0/1) to
 * req.  -ENOENT for an unknown word, -ERANGE (err: "rx-frames:
 * value 65 out of range (0-32768)") for a value out of range.
 */
int vnet_coalesce_req_add(struct vnet_coalesce_req *req, const char *word,
			  __u64 value, struct vnet_err *err);
/* 0 if WORD is a guest-NIC word (is_bool: two named values), else -ENOENT */
int vnet_coalesce_word(const char *word, bool *is_bool);
/*
 * A boolean word's two values, 0 and 1 ("off" and "on"; tx-hold and
 * rx-hold: "auto" and "always"); -ENOENT for another word.
 */
int vnet_coalesce_word_values(const char *word, const char **off,
			      const char **on);

/* The tap's own rx-frames: -ERANGE with an ethtool-style message. */
int vnet_coalesce_tap_check(__u64 rx_frames, struct vnet_err *err);

/* Per-queue config entries (cfg[VNET_MAX_QUEUES]) of IFNAME. */
int vnet_coalesce_read(const char *ifname, struct vnet_config *cfg,
		       struct vnet_err *err);
/*
 * The I-th guest-NIC word (NULL past the last), in the order of ethtool
 * and the help; *MAX its largest value (1 for a boolean) when MAX is set.
 */
const char *vnet_coalesce_word_nth(unsigned int i, __u32 *max);

/*
 * Apply req to queue QUEUE (< 0: every queue) of IFNAME's config map and
 * switch the BPF policy gate of the affected queues and directions; -EINVAL
 * when a resulting min bound is above its max.  vnetd sees the change
 * through the entries' gen.
 */
int vnet_coalesce_set(const char *ifname, int queue,
		      const struct vnet_coalesce_req *req,
		      struct vnet_err *err);

/*
 * The tap's own rx-frames: ETHTOOL_MSG_COALESCE_SET to tun, then the
 * config map's tap_rx_frames of every queue (vnetd's guest-TX batch).
 */
int vnet_coalesce_set_tap(const char *ifname, __u32 rx_frames,
			  struct vnet_err *err);

/*
 * The `vnetd --agent` recorded in IN runs: agent_pid is a live (not
 * zombie) process named vnetd* and its heartbeat is recent (3 samples, at
 * least 2 s).  *age_ms (may be NULL): since the heartbeat.
 */
bool vnet_agent_alive(const struct vnet_info *in, __u64 *age_ms);
bool vnet_vnetd_alive(__u32 pid); /* a live process named vnetd* */

/* Per-(dir, queue) state (qs[VNET_DIR_MAX * VNET_MAX_QUEUES]) of IFNAME. */
int vnet_queues_read(const char *ifname, struct vnet_queue_state *qs,
		     struct vnet_err *err);

/* Who holds IFNAME's tun queue file descriptors (from /proc). */
#define VNET_TAP_USERS_MAX 8
struct vnet_tap_user {
	int pid;
	char comm[16];
	int nr_queues;   /* tun fds of this process attached to the tap */
	bool vhost_net;  /* the process has /dev/vhost-net open */
};

struct vnet_tap_users {
	int nr_queues;   /* attached tun fds in all processes */
	int nr;          /* entries in user[] */
	struct vnet_tap_user user[VNET_TAP_USERS_MAX];
	bool vnetd;      /* a holder is vnetd */
	bool vhost_net;  /* a holder uses kernel vhost_net */
};

int vnet_tap_users(const char *ifname, struct vnet_tap_users *u);

/* --- ethtool netlink: ethtool.h (ethtool.c) ----------------------------- */
#include "ethtool.h"

/* --- CO-RE without the kernel's BTF per object (core_btf.c) ------------- */

struct btf;

/*
 * The path of a BTF holding the kernel's types that LOCAL's flavoured
 * types (`sk_buff___vnet`, ...) name, with just their members, cut from
 * /sys/kernel/btf/vmlinux on the first call with LOCAL (once per process:
 * an object's `btf_custom_path`, so that libbpf relocates against it and
 * does not parse the kernel's BTF again for every object); NULL when it
 * could not be made (libbpf reads the kernel's BTF itself, as without it)
 * or before.
 */
const char *vnet_core_btf(const struct btf *local);
/*
 * The path of a BTF with no types (once per process), for an object
 * loaded without its programs; NULL when it could not be made
 */
const char *vnet_empty_btf(void);

/* --- replaceable batching policy (policy.c) ---------------------------- */

/* pin of the record of a replacement policy (absent: the built-in) */
#define VNET_PIN_POLICY "policy"
/* the policy compiled into the classifier (a path that means no file) */
#define VNET_POLICY_BUILTIN "builtin"

struct vnet; /* the classifier skeleton, vnet.skel.h */

/*
 * The classifier skeleton, opened, not loaded.  With POLICY (a BPF object
 * file defining a strong vnet_policy_window(), docs/policy.md; NULL or
 * VNET_POLICY_BUILTIN: none) linked in with libbpf's static linker: the
 * policy's function replaces the built-in weak one in every program and
 * its extern maps are the classifier's.  NULL with errno (and err).
 */
struct vnet *vnet_skel_open(const char *policy, struct vnet_err *err);
/*
 * The same, CO-RE against the BTF at BTF_PATH (vnet_skel_core_btf(),
 * vnet_empty_btf(): libbpf does not read the kernel's BTF for the object);
 * NULL: as vnet_skel_open().
 */
struct vnet *vnet_skel_open_core(const char *policy, const char *btf_path,
				 struct vnet_err *err);
/* vnet__destroy() and the linked object's buffer */
void vnet_skel_destroy(struct vnet *skel);
/*
 * vnet_core_btf() made from the classifier's own BTF on the first call
 * (the shared classifier's CO-RE types are the same): a path, or NULL
 */
const char *vnet_skel_core_btf(void);

struct vnet_policy_info {
	char path[256]; /* "": the built-in policy */
};

/* Record which policy IFNAME's programs were linked with (a pinned map). */
int vnet_policy_record(const char *ifname, const char *policy,
		       struct vnet_err *err);
int vnet_policy_query(const char *ifname, struct vnet_policy_info *info,
		      struct vnet_err *err);

#endif
