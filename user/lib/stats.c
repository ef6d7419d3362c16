// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* vnet_stats_read(): the class counters and the per-queue state. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "libvnet.h"

int vnet_stats_read(const char *ifname, struct vnet_stats_snapshot *snap,
		    struct vnet_err *err)
{
	struct vnet_map sm = VNET_MAP_INIT, qm = VNET_MAP_INIT;
	struct vnet_class_stats *percpu = NULL;
	int ncpu = libbpf_num_possible_cpus();
	int ret;
	__u32 k;
	int c, cls;

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
	percpu = calloc(ncpu, sizeof(*percpu));
	if (!percpu) {
		ret = -ENOMEM;
		goto out;
	}
	for (k = 0; k < VNET_DIR_MAX * VNET_MAX_QUEUES; k++) {
		if (bpf_map_lookup_elem(sm.fd, &k, percpu)) {
			ret = -errno;
			vnet_err_set(err, "%s: reading stats: %s", ifname,
				     strerror(errno));
			goto out;
		}
		for (c = 0; c < ncpu; c++) {
			for (cls = 0; cls < VNET_CLASS_MAX; cls++) {
				struct vnet_counter *dst =
					(struct vnet_counter *)&snap->cls[k] +
					cls;
				const struct vnet_counter *src =
					vnet_class_counter(&percpu[c], cls);

				dst->packets += src->packets;
				dst->bytes += src->bytes;
			}
		}
	}
	memcpy(snap->state, qm.mem, sizeof(snap->state));
out:
	free(percpu);
	vnet_map_put(&qm);
	vnet_map_put(&sm);
	return ret;
}
