// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * The one way into vnet's pinned maps: open VNET_PIN_ROOT/<ifname>/<map>,
 * check that it has the layout include/vnet/abi.h gives it, and mmap it.
 * A map of another layout (pinned by another version of vnet) is refused
 * with the fix, before anyone reads or writes a value of the wrong size.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>
#include <bpf/bpf.h>

#include "libvnet.h"
#include "maps_int.h"

struct map_def {
	__u32 type;
	__u32 value_size;
	__u32 max_entries;
	__u32 mmapable; /* BPF_F_MMAPABLE or 0 */
};

static const char *const map_names[VNET_MAP_MAX] = VNET_PIN_MAP_NAMES;

/* what bpf/maps.h creates, in abi.h's words */
static const struct map_def map_defs[VNET_MAP_MAX] = {
	[VNET_MAP_STATS] = { BPF_MAP_TYPE_PERCPU_ARRAY,
			     sizeof(struct vnet_class_stats),
			     (VNET_DIR_MAX * VNET_MAX_QUEUES), 0 },
	[VNET_MAP_QUEUES] = { BPF_MAP_TYPE_ARRAY,
			      sizeof(struct vnet_queue_state),
			      (VNET_DIR_MAX * VNET_MAX_QUEUES), BPF_F_MMAPABLE },
	[VNET_MAP_CONFIG] = { BPF_MAP_TYPE_ARRAY, sizeof(struct vnet_config),
			      VNET_MAX_QUEUES, BPF_F_MMAPABLE },
	[VNET_MAP_INFO] = { BPF_MAP_TYPE_ARRAY, sizeof(struct vnet_info), 1, 0 },
	[VNET_MAP_DP_STATS] = { BPF_MAP_TYPE_ARRAY, sizeof(struct vnet_dp_stats),
				(VNET_DIR_MAX * VNET_MAX_QUEUES),
				BPF_F_MMAPABLE },
	/* created by policy.c: struct vnet_policy_info's path */
	[VNET_MAP_POLICY] = { BPF_MAP_TYPE_ARRAY,
			      sizeof(((struct vnet_policy_info *)0)->path), 1,
			      0 },
	[VNET_MAP_LIMITS] = { BPF_MAP_TYPE_ARRAY, sizeof(struct vnet_limit),
			      VNET_DIR_MAX, BPF_F_MMAPABLE },
	[VNET_MAP_GUARD] = { BPF_MAP_TYPE_ARRAY, sizeof(struct vnet_guard), 1,
			     0 },
	[VNET_MAP_GUARD_STATS] = { BPF_MAP_TYPE_PERCPU_ARRAY,
				   sizeof(struct vnet_counter),
				   VNET_GUARD_R_MAX, 0 },
	[VNET_MAP_VM] = { BPF_MAP_TYPE_ARRAY, sizeof(struct vnet_vm), 1,
			  BPF_F_MMAPABLE },
};

const char *vnet_map_name(enum vnet_map_id id)
{
	return (unsigned int)id < VNET_MAP_MAX ? map_names[id] : NULL;
}

static int open_failed(const char *ifname, const char *path,
		       struct vnet_err *err)
{
	int ret = -errno;
	char ns[NAME_MAX + 8];

	if (ret == -ENOENT && vnet_ifname_invalid(ifname))
		vnet_err_set(err, "'%s' is not a valid interface name: %s", ifname,
			     vnet_ifname_invalid(ifname));
	else if (ret == -ENOENT)
		vnet_err_set(err, "%s: vnet is not attached (no %s); run 'vnetctl%s attach %s'",
			     ifname, path, vnet_hint_netns_dev(ifname, ns, sizeof(ns)),
			     ifname);
	else
		vnet_err_set(err, "cannot open %s: %s%s", path, strerror(errno),
			     errno == EACCES || errno == EPERM ?
				     " (vnetctl needs root)" : "");
	return ret;
}

/* a map pinned by another vnet: what differs, and the fix */
static int mismatch(const char *ifname, enum vnet_map_id id, const char *what,
		    unsigned int have, unsigned int want, struct vnet_err *err)
{
	char ns[NAME_MAX + 8];

	vnet_hint_netns_dev(ifname, ns, sizeof(ns));
	vnet_err_set(err, "%s: the pinned %s map has %s %u, this vnet expects %u (include/vnet/abi.h, ABI version %d): it was attached by another version of vnet; detach and attach again ('vnetctl%s detach %s', then 'vnetctl%s attach %s')",
		     ifname, map_names[id], what, have, want, VNET_ABI_VERSION,
		     ns, ifname, ns, ifname);
	return -EPROTO;
}

static int layout_check(const char *ifname, enum vnet_map_id id, int fd,
			struct vnet_err *err)
{
	const struct map_def *d = &map_defs[id];
	struct bpf_map_info mi = {};
	__u32 len = sizeof(mi);
	int ret;

	if (bpf_obj_get_info_by_fd(fd, &mi, &len)) {
		ret = -errno;
		vnet_err_set(err, "%s: the %s map: %s", ifname, map_names[id],
			     strerror(errno));
		return ret;
	}
	if (mi.type != d->type)
		return mismatch(ifname, id, "type", mi.type, d->type, err);
	if (mi.key_size != sizeof(__u32))
		return mismatch(ifname, id, "key size", mi.key_size,
				sizeof(__u32), err);
	if (mi.value_size != d->value_size)
		return mismatch(ifname, id, "value size", mi.value_size,
				d->value_size, err);
	if (mi.max_entries != d->max_entries)
		return mismatch(ifname, id, "entries", mi.max_entries,
				d->max_entries, err);
	if ((mi.map_flags & BPF_F_MMAPABLE) != d->mmapable)
		return mismatch(ifname, id, "BPF_F_MMAPABLE",
				!!(mi.map_flags & BPF_F_MMAPABLE),
				!!d->mmapable, err);
	return 0;
}

/* the info entry was written by this ABI (0: attach has not written it) */
static int abi_check(const char *ifname, int fd, struct vnet_err *err)
{
	struct vnet_info in = {};
	__u32 key = 0;
	int ret;

	if (bpf_map_lookup_elem(fd, &key, &in)) {
		ret = -errno;
		vnet_err_set(err, "%s: the info map: %s", ifname,
			     strerror(errno));
		return ret;
	}
	if (!in.abi_version || in.abi_version == VNET_ABI_VERSION)
		return 0;
	return mismatch(ifname, VNET_MAP_INFO, "ABI version", in.abi_version,
			VNET_ABI_VERSION, err);
}

int vnet_map_get_any_ns(const char *ifname, enum vnet_map_id id,
			unsigned int flags, struct vnet_map *m,
			struct vnet_err *err)
{
	bool rw = flags & VNET_MAP_WRITE;
	char path[PATH_MAX];
	long page = sysconf(_SC_PAGESIZE);
	size_t len;
	void *p;
	int fd, ret;

	m->fd = -1;
	m->mem = NULL;
	m->len = 0;
	m->entries = 0;
	if ((unsigned int)id >= VNET_MAP_MAX) {
		vnet_err_set(err, "unknown vnet map %d", (int)id);
		return -EINVAL;
	}
	ret = vnet_pin_path(path, sizeof(path), ifname, map_names[id]);
	if (ret) {
		vnet_err_set(err, "'%s' is not a device name", ifname);
		return ret;
	}
	fd = bpf_obj_get(path);
	if (fd < 0)
		return open_failed(ifname, path, err);
	ret = layout_check(ifname, id, fd, err);
	if (!ret && id == VNET_MAP_INFO && !(flags & VNET_MAP_ANY_ABI))
		ret = abi_check(ifname, fd, err);
	if (ret)
		goto fail;
	m->entries = map_defs[id].max_entries;
	if (!(flags & (VNET_MAP_MMAP | VNET_MAP_WRITE))) {
		m->fd = fd;
		return 0;
	}
	if (!map_defs[id].mmapable) {
		vnet_err_set(err, "%s: the %s map cannot be mmapped",
			     ifname, map_names[id]);
		ret = -EINVAL;
		goto fail;
	}
	len = (size_t)map_defs[id].value_size * map_defs[id].max_entries;
	len = (len + page - 1) / page * page;
	p = mmap(NULL, len, PROT_READ | (rw ? PROT_WRITE : 0), MAP_SHARED, fd,
		 0);
	if (p == MAP_FAILED) {
		ret = -errno;
		vnet_err_set(err, "%s: cannot map the %s map: %s", ifname,
			     map_names[id], strerror(errno));
		goto fail;
	}
	close(fd);
	m->mem = p;
	m->len = len;
	return 0;
fail:
	close(fd);
	m->entries = 0;
	return ret;
}

void vnet_map_put(struct vnet_map *m)
{
	if (m->mem)
		munmap(m->mem, m->len);
	if (m->fd >= 0)
		close(m->fd);
	m->mem = NULL;
	m->len = 0;
	m->fd = -1;
}

int vnet_seq_read(const __u32 *gen, const void *src, void *dst, size_t len,
		  __u32 *seen)
{
	unsigned int tries;
	__u32 g1, g2;

	for (tries = 0; tries < 1000; tries++) {
		g1 = __atomic_load_n(gen, __ATOMIC_ACQUIRE);
		if (g1 & 1)
			continue;
		memcpy(dst, src, len);
		__atomic_thread_fence(__ATOMIC_ACQUIRE);
		g2 = __atomic_load_n(gen, __ATOMIC_RELAXED);
		if (g1 == g2) {
			if (seen)
				*seen = g1;
			return 0;
		}
	}
	return -EAGAIN;
}

__u32 vnet_seq_begin(__u32 *gen)
{
	__u32 g = __atomic_load_n(gen, __ATOMIC_RELAXED) | 1;

	/* odd while the entry changes: readers wait for the even one */
	__atomic_store_n(gen, g, __ATOMIC_RELAXED);
	__atomic_thread_fence(__ATOMIC_RELEASE);
	return g;
}

void vnet_seq_end(__u32 *gen, __u32 begun)
{
	__atomic_store_n(gen, begun + 1, __ATOMIC_RELEASE);
}
