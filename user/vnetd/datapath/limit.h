/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * A port's rate limit in one direction (limit.c): two token buckets,
 * bytes and frames, refilled on use (no timer of their own), shared by
 * the port's queue threads under a spinlock that only a limited port
 * takes.  The configuration is the port's entry in the limits map
 * (struct vnet_limit, written live by vnetctl limit); a change of its gen
 * starts the buckets over.  An unlimited port costs two plain loads per
 * burst (vnetd_limit_on()).
 */
#ifndef VNETD_LIMIT_H
#define VNETD_LIMIT_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include <vnet/abi.h>
#include "base/util.h"

struct vnetd_bucket {
	uint64_t rate;		/* tokens per second; 0: no limit */
	uint64_t size;		/* the burst */
	int64_t tokens;		/* below 0: a frame larger than the burst */
	uint64_t one_time;	/* left of the one-time extra */
	uint64_t last_ns;	/* refilled up to */
};

struct vnetd_limit {
	const struct vnet_limit *cfg;	/* the map's entry; NULL: none */
	pthread_spinlock_t lock;
	uint32_t gen;			/* cfg->gen the buckets follow */
	bool started;
	struct vnetd_bucket bytes, frames;
};

void vnetd_limit_init(struct vnetd_limit *l, const struct vnet_limit *cfg);
void vnetd_limit_exit(struct vnetd_limit *l);

/* A limit is configured (two plain loads; L may be NULL). */
static inline bool vnetd_limit_on(const struct vnetd_limit *l)
{
	return l && l->cfg &&
	       (VNETD_LOAD(l->cfg->bytes_per_sec) |
		VNETD_LOAD(l->cfg->frames_per_sec));
}

/*
 * Guest TX: of N frames of LEN[i] bytes, how many pass now (taken from
 * the buckets); a frame larger than the byte burst passes when the
 * bucket is full.  0: none, *WAIT_NS until the first one would.
 */
unsigned int vnetd_limit_take(struct vnetd_limit *l, const uint32_t *len,
			      unsigned int n, uint64_t *wait_ns);

/*
 * Guest RX, whose frames are sized only once read: how many reads of
 * frames of about MEAN bytes may start now (at most N); 0: none, *WAIT_NS
 * until one may.  What was read is charged after (vnetd_limit_charge()),
 * so a burst may overdraw by one read's frames, paid back before the
 * next.
 */
unsigned int vnetd_limit_allow(struct vnetd_limit *l, uint32_t mean,
			       unsigned int n, uint64_t *wait_ns);
void vnetd_limit_charge(struct vnetd_limit *l, uint64_t frames,
			uint64_t bytes);

#endif /* VNETD_LIMIT_H */
