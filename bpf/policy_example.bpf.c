// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * An example replacement batching policy:
 *
 *	make build/bpf/policy_example.bpf.o
 *	vnetctl attach DEV --policy build/bpf/policy_example.bpf.o
 *
 * vnetctl links this object with the classifier before loading it (libbpf's
 * static linker): its strong vnet_policy_window() replaces the built-in
 * weak one in every classifier program, and its extern maps resolve to
 * the classifier's own.  The contract (docs/policy.md):
 *
 *  - define exactly this function, global and not static, with exactly
 *    this signature (the linker refuses a different one); no programs
 *    (SEC("xdp") ...), no map definitions of vnet's names: declare them
 *    extern through maps.h;
 *  - it is called once per closed sampling window of a queue direction
 *    with adaptive on, with the window's counters in q->win_*
 *    (win_packets > 0), the queue's config entry, the direction, the queue
 *    and the window length in ns;
 *  - it writes q->rec_frames and q->rec_usecs (and may write q->avg_*,
 *    q->rec_profile, q->rec_zone); the caller then clamps rec_* into the
 *    config's [min, max] bounds, bumps rec_gen and starts the next window;
 *  - it may read and write vnet's maps (queues, config, stats, dp_stats,
 *    info) and define maps of its own.
 *
 * The rule: batch about 64 KB of frames per notification (1 frame of a
 * 64 KB GSO frame, 43 frames of 1500 bytes, 64 frames of anything under
 * 1 KB), hold at most 50 us, unless the other direction of the same queue
 * currently looks like request/response: then notify every frame at once,
 * since a transaction waits on both directions.
 */
#define VNET_POLICY_REPLACEMENT
#include "policy.h"

#define EXAMPLE_BATCH_BYTES 65536
#define EXAMPLE_USECS 50

__noinline int vnet_policy_window(struct vnet_queue_state *q,
				  const struct vnet_config *cfg, __u32 dir,
				  __u32 queue, __u64 win_ns)
{
	struct vnet_queue_state *other;
	__u32 key, size;

	if (!q || !cfg || !q->win_packets)
		return 0;
	key = vnet_key(dir == VNET_DIR_TX ? VNET_DIR_RX : VNET_DIR_TX, queue);
	other = bpf_map_lookup_elem(&queues, &key);
	if (other && other->adaptive &&
	    other->rec_zone == VNET_POLICY_ZONE_LATENCY) {
		q->rec_zone = VNET_POLICY_ZONE_LATENCY;
		q->rec_frames = 1;
		q->rec_usecs = 0;
		return 0;
	}
	size = q->win_bytes / q->win_packets;
	q->avg_size = size;
	q->rec_zone = VNET_POLICY_ZONE_BULK;
	q->rec_frames = size ? EXAMPLE_BATCH_BYTES / size : 64;
	if (q->rec_frames > 64)
		q->rec_frames = 64;
	if (!q->rec_frames)
		q->rec_frames = 1;
	q->rec_usecs = EXAMPLE_USECS;
	return 0;
}
