/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * vnet BPF <-> userspace ABI.
 *
 * This header is the only definition of every structure shared between the
 * BPF programs (bpf/) and userspace (user/, cli/, selftests/).  It is included
 * by both sides: fixed-width types, explicit padding, no pointers.  Userspace
 * checks the sizes with _Static_assert at the bottom of this file.
 *
 * Map layout (all pinned under /sys/fs/bpf/vnet/<ifname>/):
 *
 *   stats   PERCPU_ARRAY  key = vnet_key(dir, queue)   value = vnet_class_stats
 *   queues  ARRAY, BPF_F_MMAPABLE, key = vnet_key(dir, queue)
 *                                                      value = vnet_queue_state
 *   config  ARRAY, BPF_F_MMAPABLE, key = queue          value = vnet_config
 *   info    ARRAY, 1 entry                              value = vnet_info
 *   dp_stats ARRAY, BPF_F_MMAPABLE, key = vnet_key(dir, queue)
 *                                                      value = vnet_dp_stats
 *   limits  ARRAY, BPF_F_MMAPABLE, key = dir            value = vnet_limit
 *   guard   ARRAY, 1 entry                              value = vnet_guard
 *   guard_stats PERCPU_ARRAY, key = vnet_guard_reason   value = vnet_counter
 *   vm      ARRAY, BPF_F_MMAPABLE, 1 entry              value = vnet_vm
 *
 * Directions are named from the guest's point of view, the same words as the
 * guest's `ethtool -C eth0`: VNET_DIR_TX is what the guest transmits (frames
 * written into the tap by vhost/QEMU/vnetd, seen by XDP or tc ingress on the
 * tap), VNET_DIR_RX is what the guest receives (frames leaving the tap
 * towards the guest, seen by tc egress).
 */
#ifndef VNET_ABI_H
#define VNET_ABI_H

#include <linux/types.h>

/*
 * Bumped whenever a structure below changes its layout.  Attach records it
 * in struct vnet_info.abi_version; libvnet's vnet_map_get() refuses an
 * info entry of another version, and any pinned map whose type, value
 * size, entries or BPF_F_MMAPABLE differ from this header's, with the fix
 * (detach and attach again).
 */
#define VNET_ABI_VERSION 4

/* tun supports at most 256 queues (MAX_TAP_QUEUES). */
#define VNET_MAX_QUEUES 256

enum vnet_dir {
	VNET_DIR_TX = 0, /* guest -> host (into the tap) */
	VNET_DIR_RX = 1, /* host -> guest (out of the tap) */
	VNET_DIR_MAX = 2,
};

/*
 * Frame classes.  Exactly one per frame:
 *  URGENT    TCP with payload and PSH clear: the guest's TCP (TSQ) is waiting
 *            for this completion.
 *  PUSH      TCP with payload and PSH set.
 *  ACK       TCP without payload (pure ACK, SYN, FIN, RST).
 *  OTHER     everything else that parses: ARP, UDP, ICMP, non-first IP
 *            fragments, unknown ethertypes.
 *  MALFORMED truncated or inconsistent headers.
 */
enum vnet_class {
	VNET_CLASS_URGENT = 0,
	VNET_CLASS_PUSH = 1,
	VNET_CLASS_ACK = 2,
	VNET_CLASS_OTHER = 3,
	VNET_CLASS_MALFORMED = 4,
	VNET_CLASS_MAX = 5,
};

/*
 * tc egress -> tun_net_xmit hand-over of a frame's class in the 16-bit
 * qdisc_skb_cb tc_classid: VNET_CLASSID_MARK | class.
 */
#define VNET_CLASSID_MARK 0x7a50
#define VNET_CLASSID_MASK 0xfff8

static inline __u32 vnet_key(__u32 dir, __u32 queue)
{
	return dir * VNET_MAX_QUEUES + (queue & (VNET_MAX_QUEUES - 1));
}

struct vnet_counter {
	__u64 packets;
	__u64 bytes;
};

/*
 * Per CPU, per (direction, queue): one counter per class.  Named members so
 * that `bpftool map dump` prints the class names; the members are laid out
 * exactly as an array indexed by enum vnet_class (checked below).
 */
struct vnet_class_stats {
	struct vnet_counter urgent;
	struct vnet_counter push;
	struct vnet_counter ack;
	struct vnet_counter other;
	struct vnet_counter malformed;
};

/*
 * Per (direction, queue) state shared by the classifier and a userspace
 * datapath.  The map is BPF_F_MMAPABLE: vnetd maps it and reads these fields
 * with plain loads (no syscall per packet or per batch).  Counters are
 * updated with atomic adds by BPF; userspace must only read them.
 *
 * One entry is 192 bytes (three cache lines) so that queues do not share
 * cache lines.
 */
struct vnet_queue_state {
	/* classifier: written by BPF, read by userspace */
	__u64 urgent;         /* running count of urgent frames */
	__u64 push;           /* running count of push frames */
	/*
	 * CLOCK_MONOTONIC time of the last urgent / push frame, to the jiffy:
	 * the clock is read once per jiffy (1-10 ms) per queue, not per frame;
	 * a clock read per frame costs more than the rest of the classifier.
	 */
	__u64 last_urgent_ns;
	__u64 last_push_ns;
	__u64 first_seen_ns;  /* when this queue first carried a frame; 0 = never */
	__u64 policy_ns;      /* last time the adaptive policy ran */
	/* adaptive batching policy (see docs/policy.md) */
	__u64 win_start_ns;   /* start of the current sampling window */
	__u32 win_packets;    /* frames in the current window */
	__u32 win_urgent;     /* urgent frames in the current window */
	__u32 win_push;       /* push frames in the current window */
	__u32 win_bytes_kb;   /* bytes / 1024 in the current window */
	__u32 avg_rate;       /* EWMA of frames per millisecond (x16) */
	__u32 avg_size;       /* EWMA of bytes per frame */
	__u32 avg_push_pct;   /* EWMA share of push frames, percent (x16) */
	__u32 avg_urgent_pct; /* EWMA share of urgent frames, percent (x16) */
	__u32 rec_frames;     /* recommended coalescing: frames */
	__u32 rec_usecs;      /* recommended coalescing: microseconds */
	__u32 rec_profile;    /* index into the policy profile table */
	__u32 rec_gen;        /* bumped each time rec_* changes */
	/* adaptive policy gate and window (docs/policy.md) */
	__u32 adaptive;       /* set by userspace: run the policy here */
	__u32 win_bytes;      /* bytes in the current window */
	__u32 nr_windows;     /* windows closed since adaptive was turned on */
	__u32 rec_zone;       /* VNET_POLICY_ZONE_* of the last window */
	__u32 urgent_jiffies; /* jiffy of last_urgent_ns (low 32 bits) */
	__u32 push_jiffies;   /* jiffy of last_push_ns (low 32 bits) */
	/*
	 * The notification rule (docs/policy.md): is the queue pair's traffic
	 * request/response?  Payload frames (every class but ack and
	 * malformed) of both directions are counted in windows of
	 * VNET_TURN_WIN_FRAMES; a frame whose direction differs from the
	 * payload frame before it is a turn.  The window lives in the TX
	 * entry (the hooks of both directions update it); its verdict,
	 * notify_mode, turn_pct and turn_windows, is written into both.
	 */
	__u32 turn_dir;       /* TX entry: 1 + direction of the last payload frame; 0 none */
	__u32 turn_frames;    /* TX entry: payload frames in the current window */
	__u32 turn_count;     /* TX entry: turns in the current window */
	__u32 notify_mode;    /* VNET_NOTIFY_*: how vnetd signals this direction */
	__u32 turn_pct;       /* turns in the last closed window, percent of its frames */
	__u32 turn_windows;   /* windows closed */
	__u64 mode_changes;   /* notify_mode changes */
	__u64 ack;            /* running count of pure ACKs (plain increments) */
	__u64 __pad_rule[3];
};

/*
 * struct vnet_queue_state.notify_mode.  Latency: the queue pair's payload
 * turns direction on at least VNET_TURN_LATENCY_PCT of its frames (each
 * message waits for the answer to the one before): a held signal would
 * batch nothing, so vnetd signals every burst at once.  Batch: at most
 * VNET_TURN_BATCH_PCT turns (payload flows one way: a stream), holds may
 * batch.  Between the two the mode stays as it was.
 */
#define VNET_NOTIFY_NONE 0    /* no window closed yet: as latency */
#define VNET_NOTIFY_LATENCY 1
#define VNET_NOTIFY_BATCH 2
#define VNET_TURN_WIN_FRAMES 8
#define VNET_TURN_LATENCY_PCT 50
#define VNET_TURN_BATCH_PCT 15

/* struct vnet_queue_state.rec_zone: what the last window looked like */
#define VNET_POLICY_ZONE_NONE 0    /* no window closed yet */
#define VNET_POLICY_ZONE_LATENCY 1 /* request/response: low rate or push */
#define VNET_POLICY_ZONE_MIXED 2   /* neither: drift to the middle */
#define VNET_POLICY_ZONE_BULK 3    /* sustained stream: batch */
#define VNET_POLICY_ZONE_STREAM 4  /* small writes, PSH on most: batch */

/* enum vnet_config.flags */
#define VNET_CFG_ADAPTIVE_TX (1u << 0)
#define VNET_CFG_ADAPTIVE_RX (1u << 1)
/*
 * What `vnetctl attach` (and vnetd, attaching) writes into every queue's
 * config entry: the guest NIC's coalescing on, with the urgent/push bypass
 * (flags 0).  Chosen by measurement with a real guest (docs/evidence.md):
 * held completions let a small-write TCP sender build segments twice as
 * large, the bypass keeps request/response at the latency of no
 * coalescing.
 */
#define VNET_DEFAULT_TX_FRAMES 32
#define VNET_DEFAULT_TX_USECS 200
#define VNET_DEFAULT_RX_FRAMES 32
#define VNET_DEFAULT_RX_USECS 200

/*
 * The urgent/push bypass, on unless these are set: an urgent TX frame
 * (TCP payload without PSH) has its completion signalled at once, a push RX
 * frame its arrival, whatever tx-/rx-frames and -usecs say.  Negative
 * flags, so that a zeroed entry has the bypass on.
 */
#define VNET_CFG_NO_TX_BYPASS (1u << 2)
#define VNET_CFG_NO_RX_BYPASS (1u << 3)
/*
 * tx-hold/rx-hold always: every signal that is not bypassed waits for
 * the frames or the usecs counted from the first pending frame, as virtio
 * NOTF_COAL and ethtool define them.  Unset (auto, the default), a signal
 * is held only when holding batches something (docs/policy.md): at once
 * in the latency mode and after a quiet period of at least usecs; usecs
 * and frames are the caps.
 */
#define VNET_CFG_TX_HOLD_ALWAYS (1u << 4)
#define VNET_CFG_RX_HOLD_ALWAYS (1u << 5)

/*
 * Per queue configuration: coalescing in the guest NIC's words (virtio
 * NOTF_COAL, `ethtool -C eth0` inside the guest) and the tap's own
 * host-view rx-frames (`ethtool -C tapX rx-frames`).  Written by vnetctl,
 * read by BPF (adaptive policy) and by vnetd (plain loads, mmapable).
 */
struct vnet_config {
	__u32 tx_frames;     /* guest TX completion notifications: frames */
	__u32 tx_usecs;      /* ... and microseconds; 0 in either = no coalescing */
	__u32 rx_frames;     /* guest RX notifications: frames */
	__u32 rx_usecs;      /* ... and microseconds */
	__u32 tap_rx_frames; /* tap's own rx-frames: guest-TX batch into the tap */
	__u32 flags;         /* VNET_CFG_* */
	__u32 min_frames;    /* adaptive policy bounds */
	__u32 max_frames;
	__u32 min_usecs;
	__u32 max_usecs;
	__u32 gen;           /* bumped by every writer; readers may cache */
	__u32 __pad;
};

/*
 * The shared classifier (loaded once per network namespace, attached to
 * every tap there): a tap's ifindex -> the slot of its maps in the
 * classifier's arrays of maps, in tap_index at the ifindex (an array: the
 * lookup costs a few instructions) below VNET_SHARED_IFX_MAX, else in the
 * taps hash, which holds every tap.  At most VNET_SHARED_MAX_TAPS taps a
 * namespace; a tap beyond that loads a classifier of its own.
 */
#define VNET_SHARED_MAX_TAPS 4096
#define VNET_SHARED_IFX_MAX 65536
struct vnet_tap_slot {
	__u32 ifindex; /* the entry's tap; 0: no tap (tap_index) */
	__u32 slot;
	/*
	 * the id of the tap's own stats map (taps only; no program reads
	 * it): whose slot it is, for gc, even when an attach or a detach
	 * killed between its steps left the slot without its maps
	 */
	__u32 stats_id;
};

/* struct vnet_info.tx_hook */
#define VNET_HOOK_XDP 1
#define VNET_HOOK_TC 2

/* One entry: what was attached where.  Written by vnetctl attach. */
struct vnet_info {
	__u32 abi_version;  /* VNET_ABI_VERSION of the attach; 0 while attaching */
	__u32 ifindex;
	/*
	 * Inode of the network namespace the tap lives in, as stat() of
	 * /proc/thread-self/ns/net gives it.  The kernel's namespace inode
	 * numbers are unsigned int (ns_common.inum), so the value fits the
	 * __u32 that the BPF programs compare (target_netns, struct
	 * vnet_xmit_key.netns).
	 */
	__u64 netns_ino;
	__u32 tx_hook;      /* VNET_HOOK_* used for the guest-TX direction */
	__u32 xdp_mode;     /* XDP_FLAGS_* the XDP program was attached with */
	__u64 attached_sec; /* CLOCK_REALTIME seconds of the attach */
	__u32 rx_queue_src; /* VNET_RXQ_*: where guest-RX queues come from */
	__u32 xmit_attach;  /* VNET_XMIT_*: how vnet_xmit_rx is reached (0: per tap) */
	/*
	 * The vnetd agent (`vnetd --agent DEV`, attach mode): it pushes the
	 * guest-TX recommendation to tun's own rx-frames (docs/coalesce.md).
	 * Written by the agent only (lookup + update of this entry every
	 * sample), read by vnetctl coalesce show.  The agent is alive while
	 * agent_pid is a running vnetd and agent_heartbeat_ns is recent; it
	 * clears agent_pid when it exits cleanly.
	 */
	__u32 agent_pid;          /* 0: no agent */
	__u32 agent_state;        /* VNET_AGENT_* */
	__u64 agent_heartbeat_ns; /* CLOCK_MONOTONIC of its last sample */
	__u64 agent_samples;      /* samples taken */
	__u64 agent_changes;      /* rx-frames changes it made (ethtool netlink) */
	__u64 agent_limited;      /* samples where a due change waited for the rate bound */
	__u32 agent_interval_ms;  /* sampling period */
	__u32 agent_max_rate;     /* changes per second, at most */
	__u32 agent_hold;         /* samples a change must be due for */
	__u32 agent_target;       /* combined recommendation of the last sample; 0 none */
	__u32 agent_rx_frames;    /* tun rx-frames it last set (agent_changes > 0) */
	/*
	 * The pid of the vnetd that attached vnet to the tap for its port and
	 * detaches it when it stops (0: `vnetctl attach`, or nothing to undo).
	 * A vnetd that finds the pins of one that is gone (kill -9) takes
	 * them as its own, so that its stop removes them.
	 */
	__u32 vnetd_owner;
	/*
	 * The vhost-user socket of the vnetd port that serves the tap ("":
	 * none), written by that vnetd when it takes the tap: what finds a
	 * libvirt vhostuser interface's tap (the libvirt hook, vnetctl -j
	 * status).
	 */
	char vnetd_socket[108];
	__u32 __pad3;
};

/* struct vnet_info.agent_state */
#define VNET_AGENT_IDLE 0      /* adaptive-tx off on every queue: static values win */
#define VNET_AGENT_WAITING 1   /* adaptive-tx on, no recommendation yet */
#define VNET_AGENT_FOLLOWING 2 /* tun's rx-frames follows agent_target */

/* struct vnet_info.rx_queue_src */
#define VNET_RXQ_XMIT 1 /* net_dev_start_xmit tracepoint: the queue tun picked */
#define VNET_RXQ_TC 2   /* tc egress queue_mapping: before the pick */

/*
 * struct vnet_info.xmit_attach (rx_queue_src == VNET_RXQ_XMIT): how the
 * tap's vnet_xmit_rx runs on the net_dev_start_xmit tracepoint.
 */
#define VNET_XMIT_SHARED 1  /* tail-called by the one shared dispatcher */
#define VNET_XMIT_PER_TAP 2 /* attached itself (the kernel refused the shared one) */

/*
 * The shared dispatcher of the net_dev_start_xmit tracepoint, pinned under
 * /sys/fs/bpf/vnet/net_dev_start_xmit/ (bpf/xmit_dispatch.bpf.c, docs/design.md):
 *
 *   devs   HASH        key = vnet_xmit_key   value = vnet_xmit_entry
 *   progs  PROG_ARRAY  key = slot            value = the tap's vnet_xmit_rx
 *
 * One entry per attached tap; written by vnetctl under flock(2) of
 * /sys/fs/bpf/vnet.
 */
#define VNET_XMIT_MAX_TAPS 4096

struct vnet_xmit_key {
	__u32 netns;   /* inode of the tap's network namespace */
	__u32 ifindex;
};

struct vnet_xmit_entry {
	__u32 slot;      /* index into progs */
	__u32 prog_id;   /* the tap's vnet_xmit_rx (what detach checks) */
	char ifname[16]; /* its pin directory, /sys/fs/bpf/vnet/IFNAME */
};

/* struct vnet_dp_stats.drops[] */
enum vnet_drop {
	VNET_DROP_NO_BUFFER = 0, /* guest RX ring had no buffer */
	VNET_DROP_BAD_DESC = 1,  /* descriptor chain rejected */
	VNET_DROP_TAP = 2,       /* tap read/write error */
	VNET_DROP_TOO_BIG = 3,   /* frame larger than the buffers offered */
	VNET_DROP_BROKEN = 4,    /* the device was marked broken */
	VNET_DROP_MAX = 8,
};

/*
 * Datapath counters of vnetd (the vhost-user backend), per (direction,
 * queue).  Each queue is owned by one vnetd thread, which writes its entry
 * through an mmap of the map with plain stores; readers (vnetctl, bpftool)
 * see values that may lag by a batch.
 */
struct vnet_dp_stats {
	__u64 kicks;             /* guest kicks (eventfd) received */
	__u64 frames;            /* frames moved */
	__u64 bytes;
	__u64 batches;           /* bursts processed */
	__u64 notify_sent;       /* call eventfd signals */
	__u64 notify_suppressed; /* not sent: EVENT_IDX said the guest needs none */
	__u64 notify_deferred;   /* held back by coalescing */
	__u64 notify_urgent;     /* sent at once: urgent (tx) or PSH (rx) frame */
	__u64 notify_timer;      /* sent by the coalescing timer (usecs expired) */
	__u64 notify_frames;     /* sent because *-frames were pending */
	__u64 busy_polls;        /* busy-poll windows that found work (tx) */
	__u64 drops[VNET_DROP_MAX];
	__u64 notify_paired;     /* RX: sent along with a TX signal; TX: held
				  * pure ACKs an RX signal carried */
	__u64 bounced;           /* rx: delivered from a bounce slot (two copies) */
	__u64 notify_latency;    /* sent at once: the queue pair is in latency mode */
	__u64 notify_quiet;      /* sent at once: the first after a quiet period */
	__u64 holds;             /* signals held (a hold started) */
	__u64 held;              /* used entries those holds signalled together */
	__u64 limited;           /* bursts the rate limit stopped (struct vnet_limit) */
	__u64 limited_ns;        /* time the rate limit held this queue, ns */
};

/*
 * A port's rate limit in one direction (the "limits" map, key VNET_DIR_TX
 * or VNET_DIR_RX; written by vnetctl limit and vnetd's --port keys, read
 * by vnetd with plain loads, mmapable).  Two token buckets, bytes and
 * frames, each refilled at its rate up to its burst, plus a one-time
 * extra the first time the bucket is used (Firecracker's
 * one_time_burst).  A rate of 0 is no limit on that unit.  Guest TX is
 * held in the guest's ring while a bucket is empty (backpressure, nothing
 * dropped); guest RX is left in the tap's queue (docs/limits.md).
 */
struct vnet_limit {
	__u64 bytes_per_sec;   /* 0: no byte limit */
	__u64 bytes_burst;     /* the byte bucket's size */
	__u64 bytes_one_time;  /* once, on top of the burst */
	__u64 frames_per_sec;  /* 0: no frame limit */
	__u64 frames_burst;
	__u64 frames_one_time;
	__u32 gen;             /* bumped by every writer: vnetd starts over */
	__u32 __pad;
};

/*
 * Spoofing protection on guest TX (the "guard" map, one entry; written by
 * vnetctl guard and vnetd's port keys, read by the tc ingress / XDP
 * program before it counts a frame).  Each VNET_GUARD_* flag turns one
 * check on; a refused frame is dropped and counted in guard_stats under
 * its reason (enum vnet_guard_reason, in the order the headers come).
 */
#define VNET_GUARD_MAX_ADDRS 8
#define VNET_GUARD_MAC (1u << 0)    /* source MAC is the guest NIC's */
#define VNET_GUARD_IP (1u << 1)     /* IPv4/IPv6 sources in the lists; only
				     * IPv4, IPv6 and ARP frames at all */
#define VNET_GUARD_ARP (1u << 2)    /* ARP sender: the NIC's MAC, an own IPv4 */
#define VNET_GUARD_ND (1u << 3)     /* neighbour advertisements: own targets */
#define VNET_GUARD_DHCP (1u << 4)   /* no DHCP/DHCPv6 server messages */
#define VNET_GUARD_RA (1u << 5)     /* no router advertisements */

enum vnet_guard_reason {
	VNET_GUARD_R_MAC = 0,   /* another source MAC */
	VNET_GUARD_R_L2 = 1,    /* neither IPv4, IPv6 nor ARP, or too short */
	VNET_GUARD_R_IPV4 = 2,  /* an IPv4 source not the guest's */
	VNET_GUARD_R_IPV6 = 3,  /* an IPv6 source not the guest's */
	VNET_GUARD_R_ARP = 4,   /* ARP for an address not the guest's */
	VNET_GUARD_R_ND = 5,    /* a neighbour advertisement for one */
	VNET_GUARD_R_DHCP = 6,  /* a DHCP or DHCPv6 server message */
	VNET_GUARD_R_RA = 7,    /* a router advertisement */
	VNET_GUARD_R_MAX = 8,
};

struct vnet_guard_v4 {
	__be32 addr;
	__u32 prefix;          /* 0-32 */
};

struct vnet_guard_v6 {
	__be32 addr[4];
	__u32 prefix;          /* 0-128 */
};

struct vnet_guard {
	__u32 flags;           /* VNET_GUARD_*; 0: no check, nothing dropped */
	__u32 gen;             /* bumped by every writer */
	__u8 mac[6];           /* the guest NIC's */
	__u8 nr_v4;            /* entries of v4 used */
	__u8 nr_v6;
	struct vnet_guard_v4 v4[VNET_GUARD_MAX_ADDRS];
	struct vnet_guard_v6 v6[VNET_GUARD_MAX_ADDRS];
};

/*
 * The VM a tap belongs to (the "vm" map, one entry, mmapable): the name
 * the exporter puts on every series of the tap as its vm label, written
 * by `vnetctl attach --vm`, vnetd's vm= port key and the libvirt hook
 * (the domain's name).  A map of its own, not a field of struct
 * vnet_info (docs/design.md, "The VM's name").  name: UTF-8, at most
 * VNET_VM_NAME_MAX bytes, ended by NUL and zero after it; "" is none.
 * gen: odd while a writer changes name, then even again and greater, as
 * struct vnet_limit's (readers retry on a change, and cache by it).
 */
#define VNET_VM_NAME_MAX 255

struct vnet_vm {
	__u32 gen;
	__u32 __pad;
	char name[VNET_VM_NAME_MAX + 1];
};

#ifndef __BPF__
_Static_assert(sizeof(struct vnet_vm) == 264, "vnet_vm");
_Static_assert(sizeof(struct vnet_guard) == 240, "vnet_guard");
_Static_assert(sizeof(struct vnet_limit) == 56, "vnet_limit");
_Static_assert(sizeof(struct vnet_dp_stats) == 216, "vnet_dp_stats");
_Static_assert(sizeof(struct vnet_counter) == 16, "vnet_counter");
_Static_assert(sizeof(struct vnet_class_stats) ==
		       VNET_CLASS_MAX * sizeof(struct vnet_counter),
	       "vnet_class_stats must be an array of counters by class");
_Static_assert(sizeof(struct vnet_queue_state) == 192, "vnet_queue_state");
_Static_assert(sizeof(struct vnet_config) == 48, "vnet_config");
_Static_assert(sizeof(struct vnet_info) == 216, "vnet_info");
_Static_assert(sizeof(struct vnet_xmit_key) == 8, "vnet_xmit_key");
_Static_assert(sizeof(struct vnet_xmit_entry) == 24, "vnet_xmit_entry");
#endif

#endif /* VNET_ABI_H */
