// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* Reading the pinned maps. */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "libvnet.h"

int vnet_map_open(const char *ifname, const char *map, struct vnet_err *err)
{
	char path[PATH_MAX];
	int fd, ret;

	ret = vnet_pin_path(path, sizeof(path), ifname, map);
	if (ret)
		return ret;
	/* the pins of a same-named device in another netns are not ours */
	ret = vnet_pins_check(ifname, err);
	if (ret)
		return ret;
	fd = bpf_obj_get(path);
	if (fd < 0) {
		ret = -errno;
		if (errno == ENOENT)
			vnet_err_set(err, "%s: vnet is not attached (no %s); run 'vnetctl attach %s'",
				     ifname, path, ifname);
		else
			vnet_err_set(err, "cannot open %s: %s%s", path,
				     strerror(errno),
				     errno == EACCES || errno == EPERM ?
					     " (vnetctl needs root)" : "");
		return ret;
	}
	return fd;
}

int vnet_stats_read(const char *ifname, struct vnet_stats_snapshot *snap,
		    struct vnet_err *err)
{
	size_t qsize = sizeof(snap->state);
	struct vnet_class_stats *percpu = NULL;
	int ncpu = libbpf_num_possible_cpus();
	int sfd = -1, qfd = -1, ret = 0;
	void *qs;
	__u32 k;
	int c, cls;

	memset(snap, 0, sizeof(*snap));
	if (ncpu <= 0) {
		vnet_err_set(err, "cannot count CPUs: %s", strerror(-ncpu));
		return ncpu ? ncpu : -EINVAL;
	}
	sfd = vnet_map_open(ifname, "stats", err);
	if (sfd < 0)
		return sfd;
	qfd = vnet_map_open(ifname, "queues", err);
	if (qfd < 0) {
		ret = qfd;
		goto out;
	}
	percpu = calloc(ncpu, sizeof(*percpu));
	if (!percpu) {
		ret = -ENOMEM;
		goto out;
	}
	for (k = 0; k < VNET_DIR_MAX * VNET_MAX_QUEUES; k++) {
		if (bpf_map_lookup_elem(sfd, &k, percpu)) {
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
	/* per-queue state: a plain read through the mmapable map */
	qs = mmap(NULL, qsize, PROT_READ, MAP_SHARED, qfd, 0);
	if (qs == MAP_FAILED) {
		ret = -errno;
		vnet_err_set(err, "%s: cannot map the queues map: %s", ifname,
			     strerror(errno));
		goto out;
	}
	memcpy(snap->state, qs, qsize);
	munmap(qs, qsize);
out:
	free(percpu);
	if (qfd >= 0)
		close(qfd);
	close(sfd);
	return ret;
}
