/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * vnet's BPF side of a port (tap_bpf.c): the classifier and policy programs
 * attached to the tap (or the pins of an earlier attach), the pinned maps
 * the datapath reads and writes (mmapped; each ring keeps pointers to its
 * entries, qp.c), and vnetd's steering program.  Set up and torn down by
 * the control thread; the steering list is changed by the queue threads.
 */
#ifndef VNETD_MAPS_H
#define VNETD_MAPS_H

#include <pthread.h>
#include <stdbool.h>

#include <vnet/abi.h>
#include "libvnet.h"
#include "base/util.h"

struct steer_flow;

struct vnetd_maps {
	const char *name;		/* log prefix: the port's */
	const char *tap;		/* the tap's name */
	unsigned int nr_qp;
	bool attached;			/* we attached vnet's programs */
	const char *vm;                 /* the vm= key's name, or NULL */
	int tc_attach;                  /* VNET_TC_CLSACT or VNET_TC_TCX */
	struct vnet_map qs;		/* struct vnet_queue_state[], read */
	struct vnet_map config;		/* struct vnet_config[]; tap_rx_frames */
	struct vnet_map dps;		/* struct vnet_dp_stats[], written */
	struct vnet_map limits;		/* struct vnet_limit[dir], read */
	struct vnet_map guard;		/* struct vnet_guard, its fd */
	struct steer_flow *steer;	/* the steering skeleton */
	int steer_fd;			/* the tap queue it is set on; -1 */
	pthread_mutex_t steer_lock;
	bool steer_on[VNETD_MAX_QP];	/* queue pair q's RX ring is served */
};

void vnetd_maps_init(struct vnetd_maps *m, const char *name, const char *tap,
		     unsigned int nr_qp);
void vnetd_maps_exit(struct vnetd_maps *m);

/*
 * Attach (or take the pins), map the maps, install the steering program
 * on tap queue TAP_FD.  The caller is in the tap's network namespace.
 * 0 or -errno (logged); vnetd_bpf_cleanup() undoes it, in that netns too.
 */
int vnetd_bpf_setup(struct vnetd_maps *m, int tap_fd);
void vnetd_bpf_cleanup(struct vnetd_maps *m);
/*
 * vnetd_bpf_cleanup() in two: everything but the pins (the steering
 * program off the tap: tun's ioctl takes the RTNL lock), then the pins
 * if this vnetd attached them (the kernel detaches the links later, each
 * under the RTNL lock: vnetd's stop does every port's first half before).
 */
void vnetd_bpf_close(struct vnetd_maps *m);
void vnetd_bpf_unpin(struct vnetd_maps *m);
/*
 * A hand-over (handover.c): take the pins another vnetd attached
 * (ATTACHED: it did, so this one detaches at the end) with its steering
 * (bit q of STEER: queue pair q's RX ring is served); release lets go
 * of them for the vnetd that takes over: nothing detached, no steering
 * program taken off the tap.
 */
int vnetd_bpf_adopt(struct vnetd_maps *m, int tap_fd, bool attached,
		    uint32_t steer);
void vnetd_bpf_release(struct vnetd_maps *m);

/* Queue pair Q's RX ring is (ON) or is no longer served: steer flows. */
void vnetd_steer_update(struct vnetd_maps *m, unsigned int q, bool on);

/* tun's rx-frames changed (ethtool -C): every queue's tap_rx_frames. */
void vnetd_maps_tap_rx_frames(struct vnetd_maps *m, __u32 v);

/* The entries of queue pair Q (and direction DIR) in the mapped maps. */
static inline struct vnet_config *vnetd_config(const struct vnetd_maps *m,
					       unsigned int q)
{
	return (struct vnet_config *)m->config.mem + q;
}

static inline struct vnet_dp_stats *vnetd_dp_stats(const struct vnetd_maps *m,
						   int dir, unsigned int q)
{
	return (struct vnet_dp_stats *)m->dps.mem + vnet_key(dir, q);
}

static inline const struct vnet_queue_state *
vnetd_queue_state(const struct vnetd_maps *m, int dir, unsigned int q)
{
	return (const struct vnet_queue_state *)m->qs.mem + vnet_key(dir, q);
}

#endif /* VNETD_MAPS_H */
