// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * The shared classifier's set of one network namespace (shared.c says what
 * it is): its pin directory, loaded, pinned, opened and removed.
 */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <limits.h>
#include <sys/stat.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "libvnet.h"
#include "pins_int.h"
#include "shared_set.h"
#include "vnet_shared.skel.h"

static const char *const set_progs[] = { "prog_tc_tx", "prog_xdp_tx",
					 "prog_xmit_rx", "prog_tc_rx" };
/* the maps the programs read, in struct vnet_shared's of[] order */
static const enum vnet_map_id set_maps[VNET_SHARED_MAPS] = VNET_SHARED_MAP_IDS;

/* FNV-1a of the embedded object: another build, another set */
static __u32 set_tag(void)
{
	static __u32 tag;
	const unsigned char *p;
	size_t n, i;
	__u32 h = 2166136261u;

	if (__atomic_load_n(&tag, __ATOMIC_RELAXED))
		return tag;
	p = vnet_shared__elf_bytes(&n);
	for (i = 0; i < n; i++)
		h = (h ^ p[i]) * 16777619u;
	__atomic_store_n(&tag, h | 1, __ATOMIC_RELAXED);
	return h | 1;
}

/* this build's set directory name for NETNS */
void vnet_set_dir(char dir[SET_DIR_LEN], __u32 netns)
{
	snprintf(dir, SET_DIR_LEN, SET_PREFIX "%u_%08x", netns, set_tag());
}

static int *set_prog(struct vnet_shared_set *sh, size_t i)
{
	int *fds[] = { &sh->progs.tc_tx, &sh->progs.xdp_tx, &sh->progs.xmit,
		       &sh->progs.tc_rx };

	return fds[i];
}

void vnet_shared_close(struct vnet_shared_set *sh)
{
	size_t i;

	for (i = 0; i < 4; i++) {
		if (*set_prog(sh, i) >= 0)
			close(*set_prog(sh, i));
		*set_prog(sh, i) = -1;
	}
	for (i = 0; i < VNET_SHARED_MAPS; i++) {
		if (sh->of[i] >= 0)
			close(sh->of[i]);
		sh->of[i] = -1;
	}
	if (sh->taps >= 0)
		close(sh->taps);
	if (sh->tap_index >= 0)
		close(sh->tap_index);
	sh->taps = sh->tap_index = -1;
}

void vnet_set_init(struct vnet_shared_set *sh)
{
	memset(sh, 0, sizeof(*sh));
	sh->taps = sh->tap_index = -1;
	for (size_t i = 0; i < VNET_SHARED_MAPS; i++)
		sh->of[i] = -1;
	for (size_t i = 0; i < 4; i++)
		*set_prog(sh, i) = -1;
	sh->progs.shared = true;
}

/* The pinned set of NETNS; -ENOENT if there is none, or half of one. */
int vnet_set_open(const char *dir, struct vnet_shared_set *sh)
{
	char name[32];
	size_t i;

	vnet_set_init(sh);
	for (i = 0; i < 4; i++) {
		*set_prog(sh, i) = vnet_pin_get(dir, set_progs[i]);
		/* prog_xmit_rx may be absent, the others may not */
		if (*set_prog(sh, i) < 0 && i != 2)
			goto fail;
	}
	sh->taps = vnet_pin_get(dir, "taps");
	sh->tap_index = vnet_pin_get(dir, "tap_index");
	if (sh->taps < 0 || sh->tap_index < 0)
		goto fail;
	for (i = 0; i < VNET_SHARED_MAPS; i++) {
		snprintf(name, sizeof(name), "%s_of",
			 vnet_map_name(set_maps[i]));
		sh->of[i] = vnet_pin_get(dir, name);
		if (sh->of[i] < 0)
			goto fail;
	}
	return 0;
fail:
	vnet_shared_close(sh);
	return -ENOENT;
}

/* Every pin of NETNS's set, and its directory, removed. */
void vnet_set_remove(const char *dir)
{
	char path[PATH_MAX], name[32];
	size_t i;

	/* the marker first: the set is half-made from here on */
	for (i = 4; i-- > 0;)
		if (!vnet_pin_path(path, sizeof(path), dir, set_progs[i]))
			unlink(path);
	if (!vnet_pin_path(path, sizeof(path), dir, "taps"))
		unlink(path);
	if (!vnet_pin_path(path, sizeof(path), dir, "tap_index"))
		unlink(path);
	for (i = 0; i < VNET_SHARED_MAPS; i++) {
		snprintf(name, sizeof(name), "%s_of",
			 vnet_map_name(set_maps[i]));
		if (!vnet_pin_path(path, sizeof(path), dir, name))
			unlink(path);
	}
	if (!vnet_pin_path(path, sizeof(path), dir, NULL))
		rmdir(path);
}

/*
 * The programs loaded for NETNS: guest RX counted at net_dev_start_xmit
 * (CO-RE against vnet_core_btf()'s cut, else the kernel's whole BTF), or
 * at tc egress where the kernel refuses that program (attach.c's order).
 */
static struct vnet_shared *set_load(__u32 netns)
{
	struct vnet_shared *skel = NULL;

	for (int try = 0; try < 3; try++) {
		bool xmit = try < 2, core = try == 0;
		LIBBPF_OPTS(bpf_object_open_opts, oo);

		if (core) {
			oo.btf_custom_path = vnet_skel_core_btf();
			if (!oo.btf_custom_path)
				continue;
		}
		skel = vnet_shared__open_opts(&oo);
		if (!skel)
			continue;
		bpf_program__set_autoload(skel->progs.vnet_xmit_rx, xmit);
		skel->rodata->rx_count_at_xmit = xmit;
		skel->rodata->target_netns = netns;
		if (!vnet_shared__load(skel))
			return skel;
		vnet_shared__destroy(skel);
		skel = NULL;
	}
	return NULL;
}

static int set_pin(const char *dir, const char *name, int fd)
{
	char path[PATH_MAX];

	if (vnet_pin_path(path, sizeof(path), dir, name))
		return -ENAMETOOLONG;
	return bpf_obj_pin(fd, path) ? -errno : 0;
}

/* Load, verify and pin NETNS's set (under the lock); then open it. */
int vnet_set_create(const char *dir, __u32 netns, struct vnet_shared_set *sh,
		    struct vnet_err *err)
{
	struct vnet_shared *skel;
	struct bpf_program *progs[4];
	char path[PATH_MAX], name[32];
	int ret = 0;
	size_t i;

	vnet_set_remove(dir); /* whatever a half-done earlier attempt left */
	if (vnet_pin_path(path, sizeof(path), dir, NULL))
		return -ENAMETOOLONG;
	if (mkdir(path, 0700) && errno != EEXIST) {
		ret = -errno;
		vnet_err_set(err, "cannot create %s: %s", path,
			     strerror(errno));
		return ret;
	}
	skel = set_load(netns);
	if (!skel) {
		ret = -errno ? -errno : -EINVAL;
		vnet_err_set(err, "cannot load the shared classifier: %s",
			     strerror(-ret));
		goto out;
	}
	ret = set_pin(dir, "taps", bpf_map__fd(skel->maps.taps));
	if (!ret)
		ret = set_pin(dir, "tap_index",
			      bpf_map__fd(skel->maps.tap_index));
	for (i = 0; !ret && i < VNET_SHARED_MAPS; i++) {
		snprintf(name, sizeof(name), "%s_of",
			 vnet_map_name(set_maps[i]));
		ret = set_pin(dir, name,
			      bpf_map__fd(bpf_object__find_map_by_name(skel->obj,
								       name)));
	}
	progs[0] = skel->progs.vnet_tc_tx;
	progs[1] = skel->progs.vnet_xdp_tx;
	progs[2] = skel->progs.vnet_xmit_rx;
	progs[3] = skel->progs.vnet_tc_rx;
	for (i = 0; !ret && i < 4; i++)
		if (bpf_program__fd(progs[i]) >= 0)
			ret = set_pin(dir, set_progs[i],
				      bpf_program__fd(progs[i]));
	if (ret)
		vnet_err_set(err, "cannot pin the shared classifier in %s: %s",
			     path, strerror(-ret));
out:
	vnet_shared__destroy(skel);
	if (!ret)
		ret = vnet_set_open(dir, sh);
	if (ret)
		vnet_set_remove(dir);
	return ret;
}

bool vnet_set_empty(const struct vnet_shared_set *sh)
{
	__u32 k;

	return bpf_map_get_next_key(sh->taps, NULL, &k) != 0;
}

/* FN on each set directory of NETNS (every build's) under the lock */
void vnet_sets_each(__u32 netns, bool locked,
		    void (*fn)(const char *dir, void *arg), void *arg)
{
	char prefix[SET_DIR_LEN];
	struct dirent *de;
	int lock;
	DIR *d;

	if (netns)
		snprintf(prefix, sizeof(prefix), SET_PREFIX "%u_", netns);
	else
		snprintf(prefix, sizeof(prefix), SET_PREFIX);
	lock = locked ? vnet_pin_root_lock() : -1;
	if (locked && lock < 0)
		return;
	d = opendir(VNET_PIN_ROOT);
	while (d && (de = readdir(d)))
		if (!strncmp(de->d_name, prefix, strlen(prefix)))
			fn(de->d_name, arg);
	if (d)
		closedir(d);
	vnet_pin_root_unlock(lock);
}
