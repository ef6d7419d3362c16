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
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <net/if.h>
#include <bpf/bpf.h>

#include "libvnet.h"
#include "pins_int.h"
#include "shared_int.h"
#include "shared_set.h"
#include "status_int.h"

/* the maps the programs read, in struct vnet_shared_set's of[] order */
static const enum vnet_map_id set_maps[VNET_SHARED_MAPS] = VNET_SHARED_MAP_IDS;

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
static void slot_unlink(const struct vnet_shared_set *sh, __u32 ifindex)
{
	struct vnet_tap_slot none = {};

	if (ifindex < VNET_SHARED_IFX_MAX)
		bpf_map_update_elem(sh->tap_index, &ifindex, &none, BPF_ANY);
	bpf_map_delete_elem(sh->taps, &ifindex);
}

static void slot_clear(const struct vnet_shared_set *sh, __u32 ifindex,
		       __u32 slot)
{
	int ret;

	slot_unlink(sh, ifindex);
	of_apply(sh, slot, NULL, &ret);
}

/* the id of the map FD, or 0 */
static __u32 map_id(int fd)
{
	struct bpf_map_info info = {};
	__u32 len = sizeof(info);

	return bpf_obj_get_info_by_fd(fd, &info, &len) ? 0 : info.id;
}

/*
 * IFINDEX's slot (the one it had, or a free one), reserved in taps: a
 * program that finds it there before its maps are in finds no map and
 * counts nothing.  Under the lock.
 */
static int slot_reserve(const struct vnet_shared_set *sh, __u32 ifindex,
			__u32 stats_id, __u32 *slot, const char *ifname,
			struct vnet_err *err)
{
	struct vnet_tap_slot ts = {};
	int ret = 0;

	if (bpf_map_lookup_elem(sh->taps, &ifindex, &ts))
		ret = slot_free(sh->taps, &ts.slot);
	if (ret) {
		vnet_err_set(err,
			     "%s: the shared classifier has no free slot (%d taps)",
			     ifname, VNET_SHARED_MAX_TAPS);
		return ret;
	}
	ts.ifindex = ifindex;
	ts.stats_id = stats_id;
	if (bpf_map_update_elem(sh->taps, &ifindex, &ts, BPF_ANY)) {
		ret = -errno;
		vnet_err_set(err,
			     "%s: cannot add it to the shared classifier: %s",
			     ifname, strerror(errno));
		return ret;
	}
	*slot = ts.slot;
	return 0;
}

/*
 * MAPS at the reserved SLOT, then the slot at IFINDEX in tap_index.  Not
 * under the lock: each change of a map of maps waits for a grace period,
 * and other taps' attaches need not wait for them.
 */
static int slot_fill(const struct vnet_shared_set *sh, __u32 ifindex,
		     __u32 slot, const int maps[VNET_SHARED_MAPS],
		     const char *ifname, struct vnet_err *err)
{
	struct vnet_tap_slot ts = { .ifindex = ifindex, .slot = slot };
	int ret = 0;
	size_t i;

	/* EINVAL: a map of another layout than the programs' */
	i = of_apply(sh, slot, maps, &ret);
	if (!ret && ifindex < VNET_SHARED_IFX_MAX &&
	    bpf_map_update_elem(sh->tap_index, &ifindex, &ts, BPF_ANY))
		ret = -errno;
	if (ret)
		vnet_err_set(err,
			     "%s: cannot give the shared classifier its %s map: %s",
			     ifname,
			     i < VNET_SHARED_MAPS ? vnet_map_name(set_maps[i]) :
						    "tap_index",
			     strerror(-ret));
	return ret;
}

/* Take IFINDEX out of the set in DIR at SLOT; the set goes if empty. */
static void slot_drop(const char *dir, struct vnet_shared_set *sh,
		      __u32 ifindex, __u32 slot)
{
	int lock = vnet_pin_root_lock();

	slot_clear(sh, ifindex, slot);
	if (vnet_set_empty(sh)) {
		vnet_shared_close(sh);
		vnet_set_remove(dir);
	}
	vnet_pin_root_unlock(lock);
}

int vnet_shared_add(const char *ifname, __u32 ifindex, __u32 netns,
		    const int maps[VNET_SHARED_MAPS],
		    struct vnet_shared_set *sh, struct vnet_err *err)
{
	char dir[SET_DIR_LEN];
	bool created = false;
	int lock, ret;
	__u32 slot = 0;

	vnet_set_init(sh);
	vnet_set_dir(dir, netns);
	lock = vnet_pin_root_lock();
	if (lock < 0) {
		vnet_err_set(err, "cannot lock %s: %s", VNET_PIN_ROOT,
			     strerror(-lock));
		return lock;
	}
	ret = vnet_set_open(dir, sh);
	if (ret) {
		ret = vnet_set_create(dir, netns, sh, err);
		created = !ret;
	}
	if (!ret)
		ret = slot_reserve(sh, ifindex, map_id(maps[0]), &slot, ifname,
				   err);
	/* a refused first tap leaves no set behind */
	if (ret && created && vnet_set_empty(sh)) {
		vnet_shared_close(sh);
		vnet_set_remove(dir);
	}
	vnet_pin_root_unlock(lock);
	if (!ret) {
		ret = slot_fill(sh, ifindex, slot, maps, ifname, err);
		if (ret)
			slot_drop(dir, sh, ifindex, slot);
	}
	if (ret)
		vnet_shared_close(sh);
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
 * STATS_ID; the set goes with its last tap.  The slot's maps are taken
 * out first, not under the lock (each change waits for a grace period; a
 * thousand ports stopping at once would wait one after the other): the
 * slot stays reserved in taps meanwhile, so no attach takes it, and a
 * program that finds the tap finds no map.  Then, locked, the slot.
 */
static void set_drop(const char *dir, __u32 ifindex, __u32 stats_id)
{
	struct vnet_shared_set sh;
	struct vnet_tap_slot ts;
	int lock, ret;

	if (vnet_set_open(dir, &sh))
		return;
	if (bpf_map_lookup_elem(sh.taps, &ifindex, &ts) ||
	    inner_id(sh.of[0], ts.slot) != stats_id) {
		vnet_shared_close(&sh);
		return;
	}
	of_apply(&sh, ts.slot, NULL, &ret);
	lock = vnet_pin_root_lock();
	slot_unlink(&sh, ifindex);
	if (vnet_set_empty(&sh)) {
		vnet_shared_close(&sh);
		vnet_set_remove(dir);
	}
	vnet_pin_root_unlock(lock);
	vnet_shared_close(&sh);
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
		vnet_sets_each(netns, false, drop_one, &a);
}

/* the stats maps' ids of every tap's pins, any netns's (n of them) */
struct live_ids {
	__u32 *id;
	int n;
};

static bool live(const struct live_ids *l, __u32 id)
{
	for (int i = 0; i < l->n; i++)
		if (l->id[i] == id)
			return true;
	return false;
}

/*
 * A set's slots whose stats map (recorded in taps: the slot may have lost
 * its maps to a detach killed between its steps) no tap's pins hold
 * (their pins were removed, by a detach cut short or by hand; their
 * device went with its netns) freed, and the set removed if that was all.
 * An attach between its two steps has its pins already: kept.
 */
static void gc_one(const char *dir, void *arg)
{
	const struct live_ids *l = arg;
	struct vnet_shared_set sh;
	struct vnet_tap_slot ts;
	__u32 k, next, *prev = NULL, id;

	if (vnet_set_open(dir, &sh)) {
		vnet_set_remove(dir); /* half-made */
		return;
	}
	while (!bpf_map_get_next_key(sh.taps, prev, &next)) {
		k = next;
		memset(&ts, 0, sizeof(ts));
		if (!bpf_map_lookup_elem(sh.taps, &k, &ts)) {
			id = ts.stats_id ? ts.stats_id :
					   inner_id(sh.of[0], ts.slot);
			if (id && !live(l, id)) {
				slot_clear(&sh, k, ts.slot);
				prev = NULL; /* the order changes on delete */
				continue;
			}
		}
		prev = &k;
	}
	if (vnet_set_empty(&sh)) {
		vnet_shared_close(&sh);
		vnet_set_remove(dir);
	}
	vnet_shared_close(&sh);
}

void vnet_shared_gc(void)
{
	static char names[VNET_SHARED_MAX_TAPS][IF_NAMESIZE];
	struct live_ids l = {};
	__u32 id;
	int n;

	n = vnet_list(names, VNET_SHARED_MAX_TAPS);
	l.id = calloc(n > 0 ? n : 1, sizeof(*l.id));
	if (n < 0 || !l.id) {
		free(l.id);
		return;
	}
	for (int i = 0; i < n; i++) {
		id = vnet_pinned_id(names[i], vnet_map_name(VNET_MAP_STATS));
		if (id)
			l.id[l.n++] = id;
	}
	vnet_sets_each(0, true, gc_one, &l);
	free(l.id);
}

struct prog_arg {
	__u32 id;
	bool found;
};

static void prog_one(const char *dir, void *arg)
{
	struct prog_arg *a = arg;

	if (vnet_pinned_id(dir, "prog_xmit_rx") == a->id)
		a->found = true;
}

bool vnet_shared_prog_is(__u32 prog_id)
{
	struct prog_arg a = { .id = prog_id };
	__u32 netns;

	if (prog_id && !vnet_netns_ino(&netns))
		vnet_sets_each(netns, false, prog_one, &a);
	return a.found;
}
