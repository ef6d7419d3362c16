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
 * every key's per-CPU values of the stats map into OUT (key-major, NCPU
 * a key): one BPF_MAP_LOOKUP_BATCH for the whole array where the kernel
 * has it (a scrape of a tap was 512 bpf() calls), else key by key
 */
static int read_all(int fd, struct vnet_class_stats *out, int ncpu)
{
	__u32 n = VNET_DIR_MAX * VNET_MAX_QUEUES, done = 0, batch, k;
	__u32 *keys = calloc(n, sizeof(*keys));
	__u32 in_batch, out_batch;
	int ret = 0;

	if (!keys)
		return -ENOMEM;
	while (done < n) {
		batch = n - done;
		if (bpf_map_lookup_batch(fd, done ? &in_batch : NULL,
					 &out_batch, keys, out + (size_t)done * ncpu,
					 &batch, NULL)) {
			ret = -errno;
			if (ret == -ENOENT) { /* the last batch */
				done += batch;
				ret = 0;
			}
			break;
		}
		done += batch;
		in_batch = out_batch;
	}
	free(keys);
	if (!ret && done == n)
		return 0;
	if (ret && ret != -EINVAL && ret != -ENOTSUP && ret != -EOPNOTSUPP)
		return ret;
	for (k = 0; k < n; k++)
		if (bpf_map_lookup_elem(fd, &k, out + (size_t)k * ncpu))
			return -errno;
	return 0;
}

int vnet_stats_read(const char *ifname, struct vnet_stats_snapshot *snap,
		    struct vnet_err *err)
{
	struct vnet_map sm = VNET_MAP_INIT, qm = VNET_MAP_INIT;
	struct vnet_class_stats *percpu = NULL;
	int ncpu = libbpf_num_possible_cpus();
	int ret;
	__u32 k;
	int c;

	memset(snap, 0, sizeof(*snap));
	if (ncpu <= 0) {
		vnet_err_set(err, "cannot count CPUs: %s", strerror(-ncpu));
		return ncpu ? ncpu : -EINVAL;
	}
	ret = vnet_map_get(ifname, VNET_MAP_STATS, 0, &sm, err);
	if (ret)
		return ret;
	/* per-queue state: a plain read through the mmapable map */
	ret = vnet_map_get(ifname, VNET_MAP_QUEUES, VNET_MAP_MMAP, &qm, err);
	if (ret)
		goto out;
	percpu = calloc((size_t)ncpu * VNET_DIR_MAX * VNET_MAX_QUEUES,
			sizeof(*percpu));
	if (!percpu) {
		ret = -ENOMEM;
		goto out;
	}
	ret = read_all(sm.fd, percpu, ncpu);
	if (ret) {
		vnet_err_set(err, "%s: reading stats: %s", ifname,
			     strerror(-ret));
		goto out;
	}
	for (k = 0; k < VNET_DIR_MAX * VNET_MAX_QUEUES; k++)
		for (c = 0; c < ncpu; c++)
			add_cpu(&snap->cls[k], &percpu[(size_t)k * ncpu + c]);
	memcpy(snap->state, qm.mem, sizeof(snap->state));
out:
	free(percpu);
	vnet_map_put(&qm);
	vnet_map_put(&sm);
	return ret;
}
