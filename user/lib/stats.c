// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* vnet_stats_read(): the class counters and the per-queue state. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "libvnet.h"

static void add_cpu(struct vnet_class_stats *sum,
		    const struct vnet_class_stats *cpu)
{
	int cls;

	for (cls = 0; cls < VNET_CLASS_MAX; cls++) {
		struct vnet_counter *dst = (struct vnet_counter *)sum + cls;
		const struct vnet_counter *src = vnet_class_counter(cpu, cls);

		dst->packets += src->packets;
		dst->bytes += src->bytes;
	}
}

/*
 * keys [FIRST, FIRST + N) of the stats map into OUT (key-major, NCPU
 * values a key): BPF_MAP_LOOKUP_BATCH where the kernel has it (one call
 * for the range), else key by key
 */
static int read_range(int fd, __u32 first, __u32 n,
		      struct vnet_class_stats *out, int ncpu)
{
	__u32 done = 0, batch, k, in_batch, out_batch;
	__u32 keys[VNET_MAX_QUEUES];
	int ret = 0;

	while (done < n) {
		batch = n - done;
		/* the batch starts after IN_BATCH, the key read before it */
		in_batch = first + done - 1;
		if (bpf_map_lookup_batch(fd, first + done ? &in_batch : NULL,
					 &out_batch, keys,
					 out + (size_t)done * ncpu, &batch,
					 NULL)) {
			ret = -errno;
			if (ret == -ENOENT) /* the map's end */
				ret = 0;
			done += batch;
			break;
		}
		done += batch;
		if (batch && keys[batch - 1] != first + done - 1) {
			ret = -EINVAL; /* not the keys asked for: one by one */
			break;
		}
	}
	if (!ret && done >= n)
		return 0;
	if (ret && ret != -EINVAL && ret != -ENOTSUP && ret != -EOPNOTSUPP)
		return ret;
	for (k = 0; k < n; k++)
		if (bpf_map_lookup_elem(fd, &(__u32){ first + k },
					out + (size_t)k * ncpu))
			return -errno;
	return 0;
}

/*
 * The queues of direction DIR the classifier counted on: up to the last
 * with first_seen_ns (the program sets it whenever it counts a frame),
 * so that a one-queue tap's read is one key a direction, not 256.
 */
static __u32 seen_queues(const struct vnet_queue_state *qs, int dir)
{
	__u32 q, n = 0;

	for (q = 0; q < VNET_MAX_QUEUES; q++)
		if (qs[vnet_key(dir, q)].first_seen_ns)
			n = q + 1;
	return n;
}

int vnet_stats_fill(int stats_fd, const struct vnet_queue_state *qs,
		    struct vnet_stats_snapshot *snap)
{
	struct vnet_class_stats *percpu;
	int ncpu = libbpf_num_possible_cpus();
	int ret = 0, dir, c;
	__u32 k, n;

	memset(snap, 0, sizeof(*snap));
	if (ncpu <= 0)
		return ncpu ? ncpu : -EINVAL;
	percpu = calloc((size_t)ncpu * VNET_MAX_QUEUES, sizeof(*percpu));
	if (!percpu)
		return -ENOMEM;
	for (dir = 0; dir < VNET_DIR_MAX && !ret; dir++) {
		n = seen_queues(qs, dir);
		ret = read_range(stats_fd, vnet_key(dir, 0), n, percpu, ncpu);
		for (k = 0; !ret && k < n; k++)
			for (c = 0; c < ncpu; c++)
				add_cpu(&snap->cls[vnet_key(dir, k)],
					&percpu[(size_t)k * ncpu + c]);
	}
	if (!ret)
		memcpy(snap->state, qs, sizeof(snap->state));
	free(percpu);
	return ret;
}

int vnet_stats_read(const char *ifname, struct vnet_stats_snapshot *snap,
		    struct vnet_err *err)
{
	struct vnet_map sm = VNET_MAP_INIT, qm = VNET_MAP_INIT;
	int ret;

	memset(snap, 0, sizeof(*snap));
	ret = vnet_map_get(ifname, VNET_MAP_STATS, 0, &sm, err);
	if (ret)
		return ret;
	/* per-queue state: a plain read through the mmapable map */
	ret = vnet_map_get(ifname, VNET_MAP_QUEUES, VNET_MAP_MMAP, &qm, err);
	if (!ret) {
		ret = vnet_stats_fill(sm.fd, qm.mem, snap);
		if (ret)
			vnet_err_set(err, "%s: reading stats: %s", ifname,
				     strerror(-ret));
	}
	vnet_map_put(&qm);
	vnet_map_put(&sm);
	return ret;
}
