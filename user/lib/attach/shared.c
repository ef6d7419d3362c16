// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * The shared classifier: bpf/'s programs built with VNET_SHARED
 * (bpf/maps.h), loaded and verified once per network namespace and
 * attached to every tap there that has no policy of its own.  Pinned in
 * VNET_PIN_ROOT/classifier_ns<NETNS>_<TAG>/ (longer than any device name,
 * so never taken for a tap's pins; TAG is a hash of the build's object, so
 * that another vnet version loads its own):
 *
 *   prog_tc_tx prog_xdp_tx prog_xmit_rx prog_tc_rx   the programs
 *                     (no prog_xmit_rx: guest RX counted at tc egress)
 *   taps              HASH ifindex -> struct vnet_tap_slot, every tap
 *   tap_index         ARRAY the same at the ifindex, if it is below
 *                     VNET_SHARED_IFX_MAX (the programs' fast path)
 *   stats_of queues_of config_of guard_of guard_stats_of
 *                     ARRAY_OF_MAPS slot -> the tap's map of that kind
 *
 * prog_tc_rx is pinned last: a directory without it is a half-made set,
 * removed and made again.  A tap's maps are its own, made by a load of the
 * per-tap object without its programs and pinned in the tap's directory as
 * with a classifier of its own.  Adding a tap puts its maps at a free slot,
 * then the slot in taps, so that a program that finds the tap finds every
 * map; removing it goes the other way, and the last tap's removal removes
 * the set.  Every change is made under the pin root's flock (pins.c).
 */
#include <dirent.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <limits.h>
#include <net/if.h>
#include <sys/stat.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "libvnet.h"
#include "pins_int.h"
#include "shared_int.h"
#include "vnet_shared.skel.h"

#define SET_PREFIX "classifier_ns"
#define SET_DIR_LEN 48

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
static void set_dir(char dir[SET_DIR_LEN], __u32 netns)
{
	snprintf(dir, SET_DIR_LEN, SET_PREFIX "%u_%08x", netns, set_tag());
}

/* the set directory DIR's path (NAME NULL), or a pin's in it */
static int set_path(char *buf, size_t len, const char *dir, const char *name)
{
	int n = snprintf(buf, len, "%s/%s%s%s", VNET_PIN_ROOT, dir,
			 name ? "/" : "", name ? name : "");

	return n < 0 || (size_t)n >= len ? -ENAMETOOLONG : 0;
}

static int set_get(const char *dir, const char *name)
{
	char path[PATH_MAX];
	int fd;

	if (set_path(path, sizeof(path), dir, name))
		return -ENAMETOOLONG;
	fd = bpf_obj_get(path);
	return fd < 0 ? -errno : fd;
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

static void set_init(struct vnet_shared_set *sh)
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
static int set_open(const char *dir, struct vnet_shared_set *sh)
{
	char name[32];
	size_t i;

	set_init(sh);
	for (i = 0; i < 4; i++) {
		*set_prog(sh, i) = set_get(dir, set_progs[i]);
		/* prog_xmit_rx may be absent, the others may not */
		if (*set_prog(sh, i) < 0 && i != 2)
			goto fail;
	}
	sh->taps = set_get(dir, "taps");
	sh->tap_index = set_get(dir, "tap_index");
	if (sh->taps < 0 || sh->tap_index < 0)
		goto fail;
	for (i = 0; i < VNET_SHARED_MAPS; i++) {
		snprintf(name, sizeof(name), "%s_of",
			 vnet_map_name(set_maps[i]));
		sh->of[i] = set_get(dir, name);
		if (sh->of[i] < 0)
			goto fail;
	}
	return 0;
fail:
	vnet_shared_close(sh);
	return -ENOENT;
}

/* Every pin of NETNS's set, and its directory, removed. */
static void set_remove(const char *dir)
{
	char path[PATH_MAX], name[32];
	size_t i;

	/* the marker first: the set is half-made from here on */
	for (i = 4; i-- > 0;)
		if (!set_path(path, sizeof(path), dir, set_progs[i]))
			unlink(path);
	if (!set_path(path, sizeof(path), dir, "taps"))
		unlink(path);
	if (!set_path(path, sizeof(path), dir, "tap_index"))
		unlink(path);
	for (i = 0; i < VNET_SHARED_MAPS; i++) {
		snprintf(name, sizeof(name), "%s_of",
			 vnet_map_name(set_maps[i]));
		if (!set_path(path, sizeof(path), dir, name))
			unlink(path);
	}
	if (!set_path(path, sizeof(path), dir, NULL))
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

	if (set_path(path, sizeof(path), dir, name))
		return -ENAMETOOLONG;
	return bpf_obj_pin(fd, path) ? -errno : 0;
}

/* Load, verify and pin NETNS's set (under the lock); then open it. */
static int set_create(const char *dir, __u32 netns, struct vnet_shared_set *sh,
		      struct vnet_err *err)
{
	struct vnet_shared *skel;
	struct bpf_program *progs[4];
	char path[PATH_MAX], name[32];
	int ret = 0;
	size_t i;

	set_remove(dir); /* whatever a half-done earlier attempt left */
	if (set_path(path, sizeof(path), dir, NULL))
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
		ret = set_open(dir, sh);
	if (ret)
		set_remove(dir);
	return ret;
}

/* The lowest slot no tap in TAPS holds: -ENOSPC when all are. */
static int slot_free(int taps, __u32 *slot)
{
	unsigned char *used = calloc(VNET_SHARED_MAX_TAPS, 1);
	struct vnet_tap_slot v;
	__u32 k, next, *prev = NULL;

	if (!used)
		return -ENOMEM;
	while (!bpf_map_get_next_key(taps, prev, &next)) {
		k = next;
		prev = &k;
		if (!bpf_map_lookup_elem(taps, &k, &v) &&
		    v.slot < VNET_SHARED_MAX_TAPS)
			used[v.slot] = 1;
	}
	for (*slot = 0; *slot < VNET_SHARED_MAX_TAPS && used[*slot]; (*slot)++)
		;
	free(used);
	return *slot < VNET_SHARED_MAX_TAPS ? 0 : -ENOSPC;
}

static bool set_empty(const struct vnet_shared_set *sh)
{
	__u32 k;

	return bpf_map_get_next_key(sh->taps, NULL, &k) != 0;
}

struct of_change {
	int fd, map; /* map -1: delete */
	__u32 slot;
	int ret;
};

static void *of_change_run(void *arg)
{
	struct of_change *c = arg;
	int r = c->map < 0 ?
			bpf_map_delete_elem(c->fd, &c->slot) :
			bpf_map_update_elem(c->fd, &c->slot, &c->map, BPF_ANY);

	c->ret = r ? -errno : 0;
	return NULL;
}

/*
 * SLOT of every array of maps set to MAPS (NULL: cleared), side by side:
 * the kernel waits for an RCU grace period after each change of a map of
 * maps (10-20 ms on a loaded 2-CPU VM, little CPU); one after the other a
 * tap would wait five.  Returns the index of the first that failed with
 * *RET set, or VNET_SHARED_MAPS.
 */
static size_t of_apply(const struct vnet_shared_set *sh, __u32 slot,
		       const int *maps, int *ret)
{
	struct of_change c[VNET_SHARED_MAPS];
	pthread_t t[VNET_SHARED_MAPS];
	bool started[VNET_SHARED_MAPS];
	size_t i;

	for (i = 0; i < VNET_SHARED_MAPS; i++) {
		c[i] = (struct of_change){ .fd = sh->of[i],
					   .slot = slot,
					   .map = maps ? maps[i] : -1 };
		/* the last in this thread; any the system refuses as well */
		started[i] = i + 1 < VNET_SHARED_MAPS &&
			     !pthread_create(&t[i], NULL, of_change_run, &c[i]);
		if (!started[i])
			of_change_run(&c[i]);
	}
	for (i = 0; i < VNET_SHARED_MAPS; i++)
		if (started[i])
			pthread_join(t[i], NULL);
	for (i = 0; i < VNET_SHARED_MAPS; i++) {
		if (c[i].ret && (maps || c[i].ret != -ENOENT)) {
			*ret = c[i].ret;
			break;
		}
	}
	return i;
}

/* IFINDEX's slot cleared, the entry in taps first */
static void slot_clear(const struct vnet_shared_set *sh, __u32 ifindex,
		       __u32 slot)
{
	struct vnet_tap_slot none = {};
	int ret;

	if (ifindex < VNET_SHARED_IFX_MAX)
		bpf_map_update_elem(sh->tap_index, &ifindex, &none, BPF_ANY);
	bpf_map_delete_elem(sh->taps, &ifindex);
	of_apply(sh, slot, NULL, &ret);
}

/* MAPS at IFINDEX's slot (the one it had, or a free one), then the slot */
static int slot_take(const struct vnet_shared_set *sh, __u32 ifindex,
		     const int maps[VNET_SHARED_MAPS], const char *ifname,
		     struct vnet_err *err)
{
	struct vnet_tap_slot ts;
	int ret = 0;
	size_t i;

	if (bpf_map_lookup_elem(sh->taps, &ifindex, &ts))
		ret = slot_free(sh->taps, &ts.slot);
	if (ret) {
		vnet_err_set(err,
			     "%s: the shared classifier has no free slot (%d taps)",
			     ifname, VNET_SHARED_MAX_TAPS);
		return ret;
	}
	/* EINVAL: a map of another layout than the programs' */
	i = of_apply(sh, ts.slot, maps, &ret);
	ts.ifindex = ifindex;
	if (!ret && bpf_map_update_elem(sh->taps, &ifindex, &ts, BPF_ANY))
		ret = -errno;
	if (!ret && ifindex < VNET_SHARED_IFX_MAX &&
	    bpf_map_update_elem(sh->tap_index, &ifindex, &ts, BPF_ANY))
		ret = -errno;
	if (ret) {
		vnet_err_set(err,
			     "%s: cannot give the shared classifier its %s map: %s",
			     ifname,
			     i < VNET_SHARED_MAPS ? vnet_map_name(set_maps[i]) :
						    "taps",
			     strerror(-ret));
		slot_clear(sh, ifindex, ts.slot);
	}
	return ret;
}

int vnet_shared_add(const char *ifname, __u32 ifindex, __u32 netns,
		    const int maps[VNET_SHARED_MAPS],
		    struct vnet_shared_set *sh, struct vnet_err *err)
{
	char dir[SET_DIR_LEN];
	bool created = false;
	int lock, ret;

	set_init(sh);
	set_dir(dir, netns);
	lock = vnet_pin_root_lock();
	if (lock < 0) {
		vnet_err_set(err, "cannot lock %s: %s", VNET_PIN_ROOT,
			     strerror(-lock));
		return lock;
	}
	ret = set_open(dir, sh);
	if (ret) {
		ret = set_create(dir, netns, sh, err);
		created = !ret;
	}
	if (!ret)
		ret = slot_take(sh, ifindex, maps, ifname, err);
	/* a refused first tap leaves no set behind */
	if (ret && created && set_empty(sh)) {
		vnet_shared_close(sh);
		set_remove(dir);
	}
	if (ret)
		vnet_shared_close(sh);
	vnet_pin_root_unlock(lock);
	return ret;
}

/* the id of the map at SLOT of the array of maps FD, or 0 */
static __u32 inner_id(int fd, __u32 slot)
{
	__u32 id = 0;

	return bpf_map_lookup_elem(fd, &slot, &id) ? 0 : id;
}

/*
 * Take IFINDEX out of the set in DIR if its slot holds the stats map
 * STATS_ID (0: whatever it holds); the set goes with its last tap.
 */
static void set_drop(const char *dir, __u32 ifindex, __u32 stats_id)
{
	struct vnet_shared_set sh;
	struct vnet_tap_slot ts;

	if (set_open(dir, &sh))
		return;
	if (!bpf_map_lookup_elem(sh.taps, &ifindex, &ts) &&
	    (!stats_id || inner_id(sh.of[0], ts.slot) == stats_id))
		slot_clear(&sh, ifindex, ts.slot);
	if (set_empty(&sh)) {
		vnet_shared_close(&sh);
		set_remove(dir);
	}
	vnet_shared_close(&sh);
}

/* FN on each set directory of NETNS (every build's) under the lock */
static void sets_each(__u32 netns, void (*fn)(const char *dir, void *arg),
		      void *arg)
{
	char prefix[SET_DIR_LEN];
	struct dirent *de;
	int lock;
	DIR *d;

	snprintf(prefix, sizeof(prefix), SET_PREFIX "%u_", netns);
	lock = vnet_pin_root_lock();
	if (lock < 0)
		return;
	d = opendir(VNET_PIN_ROOT);
	while (d && (de = readdir(d)))
		if (!strncmp(de->d_name, prefix, strlen(prefix)))
			fn(de->d_name, arg);
	if (d)
		closedir(d);
	vnet_pin_root_unlock(lock);
}

struct drop_arg {
	__u32 ifindex, stats_id;
};

static void drop_one(const char *dir, void *arg)
{
	const struct drop_arg *a = arg;

	set_drop(dir, a->ifindex, a->stats_id);
}

void vnet_shared_remove(__u32 netns, __u32 ifindex, __u32 stats_id)
{
	struct drop_arg a = { .ifindex = ifindex, .stats_id = stats_id };

	if (ifindex && stats_id)
		sets_each(netns, drop_one, &a);
}

/*
 * A set's taps whose device is gone, or whose pins hold other maps (a
 * vnetd killed between its steps, a device renamed and its pins removed):
 * their slots freed, the set removed if that was all.
 */
static void gc_one(const char *dir, void *arg)
{
	struct vnet_shared_set sh;
	struct vnet_tap_slot ts;
	__u32 k, next, *prev = NULL;

	(void)arg;
	if (set_open(dir, &sh)) {
		set_remove(dir); /* half-made */
		return;
	}
	while (!bpf_map_get_next_key(sh.taps, prev, &next)) {
		k = next;
		if (!bpf_map_lookup_elem(sh.taps, &k, &ts) &&
		    !vnet_shared_slot_live(k, inner_id(sh.of[0], ts.slot))) {
			slot_clear(&sh, k, ts.slot);
			prev = NULL; /* the order changes on delete */
			continue;
		}
		prev = &k;
	}
	if (set_empty(&sh)) {
		vnet_shared_close(&sh);
		set_remove(dir);
	}
	vnet_shared_close(&sh);
}

void vnet_shared_gc(__u32 netns)
{
	sets_each(netns, gc_one, NULL);
}

struct prog_arg {
	__u32 id;
	bool found;
};

static void prog_one(const char *dir, void *arg)
{
	struct bpf_prog_info info = {};
	__u32 len = sizeof(info);
	struct prog_arg *a = arg;
	int fd = set_get(dir, "prog_xmit_rx");

	if (fd < 0)
		return;
	if (!bpf_obj_get_info_by_fd(fd, &info, &len) && info.id == a->id)
		a->found = true;
	close(fd);
}

bool vnet_shared_prog_is(__u32 prog_id)
{
	struct prog_arg a = { .id = prog_id };
	__u32 netns;

	if (prog_id && !vnet_netns_ino(&netns))
		sets_each(netns, prog_one, &a);
	return a.found;
}

bool vnet_shared_slot_live(__u32 ifindex, __u32 stats_id)
{
	char name[IF_NAMESIZE];
	struct bpf_map_info info = {};
	__u32 len = sizeof(info);
	bool live = false;
	int fd;

	if (!stats_id || !if_indextoname(ifindex, name))
		return false;
	fd = vnet_pin_get(name, vnet_map_name(VNET_MAP_STATS));
	if (fd < 0)
		return false;
	if (!bpf_obj_get_info_by_fd(fd, &info, &len))
		live = info.id == stats_id;
	close(fd);
	return live;
}
