// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * The shared net_dev_start_xmit dispatcher (bpf/xmit_dispatch.bpf.c): one
 * program on the tracepoint for every tap of the host, pinned with its two
 * maps under /sys/fs/bpf/vnet/net_dev_start_xmit/ (bpffs refuses dots in
 * names, so no dot-directory; no device name is that long, IFNAMSIZ):
 *
 *   link   the raw tracepoint link of the dispatcher
 *   devs   HASH {netns inode, ifindex} -> {slot, prog id, ifname}
 *   progs  PROG_ARRAY slot -> the tap's own vnet_xmit_rx
 *
 * The first registration creates them, the last unregistration (or gc,
 * when only stale entries are left) removes them.  Every change happens
 * under flock(2) of the pin root /sys/fs/bpf/vnet (a bpffs directory:
 * flock works on any inode), so concurrent `vnetctl attach`es of different
 * taps neither create two dispatchers nor hand out one slot twice, and a
 * last detach cannot remove the dispatcher under an attach that is
 * registering.
 *
 * Slots: an entry's slot is set in progs before the entry goes into devs,
 * and taken out of devs before the slot is cleared, so a dispatcher run
 * never finds an entry whose slot is another tap's -- except a run that
 * looked the entry up just before a detach removed it and tail-calls just
 * after a new attach reused the slot; the tap's program compares the
 * device itself (tp_xmit.bpf.c), so such a frame is not counted anywhere.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <limits.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "libvnet.h"
#include "pins_int.h"
#include "xmit_dispatch.skel.h"

static const char *const shared_pins[] = { VNET_XMIT_PIN_LINK,
					   VNET_XMIT_PIN_DEVS,
					   VNET_XMIT_PIN_PROGS };

static int shared_path(char *buf, size_t len, const char *name)
{
	int n = snprintf(buf, len, "%s/%s", VNET_XMIT_PIN_DIR, name);

	return n < 0 || (size_t)n >= len ? -ENAMETOOLONG : 0;
}

static int shared_get(const char *name)
{
	char path[PATH_MAX];
	int fd;

	if (shared_path(path, sizeof(path), name))
		return -ENAMETOOLONG;
	fd = bpf_obj_get(path);
	return fd < 0 ? -errno : fd;
}

/* Take the dispatcher off the tracepoint and remove every shared pin. */
static void shared_remove(void)
{
	char path[PATH_MAX];
	size_t i;
	int fd;

	fd = shared_get(VNET_XMIT_PIN_LINK);
	if (fd >= 0) {
		bpf_link_detach(fd); /* even if someone else holds the link */
		close(fd);
	}
	for (i = 0; i < sizeof(shared_pins) / sizeof(shared_pins[0]); i++)
		if (!shared_path(path, sizeof(path), shared_pins[i]))
			unlink(path);
	rmdir(VNET_XMIT_PIN_DIR);
}

struct shared {
	int devs, progs;
};

static void shared_close(struct shared *sh)
{
	if (sh->devs >= 0)
		close(sh->devs);
	if (sh->progs >= 0)
		close(sh->progs);
	sh->devs = sh->progs = -1;
}

/*
 * Open the pinned dispatcher's maps; -ENOENT if it is not (completely)
 * there.  The link is pinned last when it is created, so a complete set
 * with a live link is a dispatcher on the tracepoint.
 */
static int shared_open(struct shared *sh)
{
	struct bpf_link_info info = {};
	__u32 len = sizeof(info);
	int link;

	sh->devs = sh->progs = -1;
	link = shared_get(VNET_XMIT_PIN_LINK);
	if (link < 0)
		return link;
	if (bpf_obj_get_info_by_fd(link, &info, &len) || !info.prog_id) {
		close(link);
		return -ENOENT;
	}
	close(link);
	sh->devs = shared_get(VNET_XMIT_PIN_DEVS);
	sh->progs = shared_get(VNET_XMIT_PIN_PROGS);
	if (sh->devs < 0 || sh->progs < 0) {
		shared_close(sh);
		return -ENOENT;
	}
	return 0;
}

/* Load the dispatcher, pin its maps, attach it, pin the link. */
static int shared_create(struct shared *sh, struct vnet_err *err)
{
	struct xmit_dispatch *skel;
	char path[PATH_MAX];
	int ret, link = -1;

	sh->devs = sh->progs = -1;
	shared_remove(); /* whatever a half-done earlier attempt left */
	if (mkdir(VNET_XMIT_PIN_DIR, 0700) && errno != EEXIST) {
		ret = -errno;
		vnet_err_set(err, "cannot create %s: %s", VNET_XMIT_PIN_DIR,
			     strerror(errno));
		return ret;
	}
	{
		/* CO-RE against vnet_core_btf(), else the kernel's BTF */
		LIBBPF_OPTS(bpf_object_open_opts, oo,
			    .btf_custom_path = vnet_core_btf(NULL));

		int e;

		skel = xmit_dispatch__open_opts(&oo);
		e = skel ? xmit_dispatch__load(skel) : 0;
		if (e) {
			xmit_dispatch__destroy(skel);
			skel = NULL;
			if (oo.btf_custom_path)
				skel = xmit_dispatch__open_and_load();
			else
				errno = -e;
		}
	}
	if (!skel) {
		ret = -errno;
		vnet_err_set(err, "cannot load the net_dev_start_xmit dispatcher: %s",
			     strerror(errno));
		goto fail;
	}
	shared_path(path, sizeof(path), VNET_XMIT_PIN_DEVS);
	if (bpf_map__pin(skel->maps.devs, path))
		goto fail_errno;
	shared_path(path, sizeof(path), VNET_XMIT_PIN_PROGS);
	if (bpf_map__pin(skel->maps.progs, path))
		goto fail_errno;
	link = bpf_raw_tracepoint_open(NULL,
				       bpf_program__fd(skel->progs.vnet_xmit_disp));
	if (link < 0)
		goto fail_errno;
	shared_path(path, sizeof(path), VNET_XMIT_PIN_LINK);
	if (bpf_obj_pin(link, path))
		goto fail_errno;
	close(link);
	xmit_dispatch__destroy(skel);
	return shared_open(sh);

fail_errno:
	ret = -errno;
	vnet_err_set(err, "cannot set up the net_dev_start_xmit dispatcher in %s: %s",
		     VNET_XMIT_PIN_DIR, strerror(errno));
fail:
	if (link >= 0)
		close(link);
	xmit_dispatch__destroy(skel);
	shared_remove();
	return ret;
}

static bool shared_empty(const struct shared *sh)
{
	struct vnet_xmit_key k;

	return bpf_map_get_next_key(sh->devs, NULL, &k) != 0;
}

/* the entry's slot in progs, then the entry */
static void entry_remove(const struct shared *sh, const struct vnet_xmit_key *k,
			 const struct vnet_xmit_entry *e)
{
	bpf_map_delete_elem(sh->devs, k);
	bpf_map_delete_elem(sh->progs, &e->slot);
}

int vnet_xmit_register(const char *ifname, __u32 netns, __u32 ifindex,
		       int prog_fd, struct vnet_err *err)
{
	unsigned char used[VNET_XMIT_MAX_TAPS]; /* not static: threads */
	struct vnet_xmit_key key = { .netns = netns, .ifindex = ifindex };
	struct vnet_xmit_key k, next, *prev = NULL;
	struct vnet_xmit_entry e = {}, old;
	struct bpf_prog_info pinfo = {};
	__u32 plen = sizeof(pinfo), slot;
	struct shared sh;
	bool created = false;
	int lock, ret;

	if (bpf_obj_get_info_by_fd(prog_fd, &pinfo, &plen))
		return -errno;
	lock = vnet_pin_root_lock();
	if (lock < 0) {
		vnet_err_set(err, "cannot lock %s: %s", VNET_PIN_ROOT,
			     strerror(-lock));
		return lock;
	}
	ret = shared_open(&sh);
	if (ret) {
		ret = shared_create(&sh, err);
		if (ret)
			goto out;
		created = true;
	}

	if (!bpf_map_lookup_elem(sh.devs, &key, &old)) {
		/* a stale entry of this device (say, renamed): take it over */
		slot = old.slot;
	} else {
		memset(used, 0, sizeof(used));
		while (!bpf_map_get_next_key(sh.devs, prev, &next)) {
			k = next;
			prev = &k;
			if (!bpf_map_lookup_elem(sh.devs, &k, &old) &&
			    old.slot < VNET_XMIT_MAX_TAPS)
				used[old.slot] = 1;
		}
		for (slot = 0; slot < VNET_XMIT_MAX_TAPS && used[slot]; slot++)
			;
		if (slot == VNET_XMIT_MAX_TAPS) {
			ret = -ENOSPC;
			vnet_err_set(err, "the net_dev_start_xmit dispatcher has no free slot (%d taps)",
				     VNET_XMIT_MAX_TAPS);
			goto out_close;
		}
	}
	if (bpf_map_update_elem(sh.progs, &slot, &prog_fd, BPF_ANY)) {
		/* EINVAL: the kernel will not tail-call it from the dispatcher */
		ret = -errno;
		vnet_err_set(err, "cannot put %s's vnet_xmit_rx into the dispatcher's slot %u: %s",
			     ifname, slot, strerror(errno));
		goto out_close;
	}
	e.slot = slot;
	e.prog_id = pinfo.id;
	snprintf(e.ifname, sizeof(e.ifname), "%.15s", ifname);
	if (bpf_map_update_elem(sh.devs, &key, &e, BPF_ANY)) {
		ret = -errno;
		vnet_err_set(err, "cannot add %s to the dispatcher: %s", ifname,
			     strerror(errno));
		bpf_map_delete_elem(sh.progs, &slot);
		goto out_close;
	}
	ret = 0;
out_close:
	/* a refused first registration leaves no dispatcher behind */
	if (ret && created && shared_empty(&sh)) {
		shared_close(&sh);
		shared_remove();
	}
	shared_close(&sh);
out:
	vnet_pin_root_unlock(lock);
	return ret;
}

/* Does the entry belong to a tap whose pins still hold its program? */
static bool entry_live(const struct vnet_xmit_entry *e)
{
	char name[IF_NAMESIZE], path[PATH_MAX];
	struct bpf_prog_info info = {};
	__u32 len = sizeof(info);
	bool live = false;
	int fd;

	snprintf(name, sizeof(name), "%.15s", e->ifname);
	if (!name[0] || vnet_pin_path(path, sizeof(path), name,
				      VNET_PIN_PROG_XMIT))
		return false;
	fd = bpf_obj_get(path);
	if (fd < 0)
		return false;
	if (!bpf_obj_get_info_by_fd(fd, &info, &len))
		live = info.id == e->prog_id;
	close(fd);
	return live;
}

/*
 * The entry at KEY, if it is PROG_ID's: removed (true).  One lookup, not
 * a walk over every tap's entry: a host with a thousand taps detaches
 * each in the same few calls.
 */
static bool remove_at(const struct shared *sh, const struct vnet_xmit_key *key,
		      __u32 prog_id)
{
	struct vnet_xmit_entry e;

	if (!key || !prog_id || bpf_map_lookup_elem(sh->devs, key, &e) ||
	    e.prog_id != prog_id)
		return false;
	entry_remove(sh, key, &e);
	return true;
}

/*
 * Remove the entries that match (prog_id at KEY, found there at once, or
 * ifname and prog_id, or ifname when prog_id is 0; or, with STALE, those
 * whose pins no longer hold their program), then the dispatcher if no
 * entry is left.
 * Returns 1 if the dispatcher was removed, 0, or -errno.
 */
static int xmit_remove(const char *ifname, __u32 prog_id,
		       const struct vnet_xmit_key *key, bool stale)
{
	struct vnet_xmit_key k, next, *prev = NULL;
	struct vnet_xmit_entry e;
	struct shared sh;
	struct stat sb;
	int lock, ret = 0;
	bool found;

	if (stat(VNET_PIN_ROOT, &sb))
		return errno == ENOENT ? 0 : -errno;
	lock = vnet_pin_root_lock();
	if (lock < 0)
		return lock;
	if (shared_open(&sh)) {
		/* nothing, or a half-made dispatcher (no live link) */
		if (!stat(VNET_XMIT_PIN_DIR, &sb)) {
			shared_remove();
			ret = 1;
		}
		goto out;
	}
	found = remove_at(&sh, key, prog_id);
	while (!found && !bpf_map_get_next_key(sh.devs, prev, &next)) {
		k = next;
		if (bpf_map_lookup_elem(sh.devs, &k, &e)) {
			prev = &k;
			continue;
		}
		/*
		 * by program and name: the namespace's shared classifier
		 * puts one program in many taps' entries
		 */
		if (stale ? !entry_live(&e) :
			    (!prog_id || e.prog_id == prog_id) &&
				    !strncmp(e.ifname, ifname,
					     sizeof(e.ifname))) {
			/* restart: the iteration order changes on delete */
			entry_remove(&sh, &k, &e);
			prev = NULL;
			continue;
		}
		prev = &k;
	}
	if (shared_empty(&sh)) {
		shared_close(&sh);
		shared_remove();
		ret = 1;
	}
	shared_close(&sh);
out:
	vnet_pin_root_unlock(lock);
	return ret;
}

int vnet_xmit_unregister(const char *ifname, __u32 prog_id,
			 const struct vnet_xmit_key *key)
{
	return xmit_remove(ifname, prog_id, key, false);
}

int vnet_xmit_gc(void)
{
	return xmit_remove(NULL, 0, NULL, true);
}

/* PROG_ID in the dispatcher's slot of entry E */
static void xmit_found(struct vnet_xmit_status *xs, int progs,
		       const struct vnet_xmit_entry *e, __u32 prog_id)
{
	__u32 id;

	/* the program the dispatcher will really tail-call */
	if (progs >= 0 && !bpf_map_lookup_elem(progs, &e->slot, &id) &&
	    id == prog_id) {
		xs->found = true;
		xs->slot = e->slot;
	}
}

int vnet_xmit_query(struct vnet_xmit_status *xs, __u32 prog_id,
		    const struct vnet_xmit_key *key)
{
	struct bpf_link_info info = {};
	struct vnet_xmit_key k, next, *prev = NULL;
	struct vnet_xmit_entry e;
	__u32 len = sizeof(info);
	int fd, devs, progs;

	memset(xs, 0, sizeof(*xs));
	fd = shared_get(VNET_XMIT_PIN_LINK);
	if (fd < 0)
		return fd;
	if (!bpf_obj_get_info_by_fd(fd, &info, &len)) {
		xs->link_id = info.id;
		xs->prog_id = info.prog_id;
	}
	close(fd);
	devs = shared_get(VNET_XMIT_PIN_DEVS);
	progs = shared_get(VNET_XMIT_PIN_PROGS);
	if (devs >= 0 && key) {
		if (prog_id && !bpf_map_lookup_elem(devs, key, &e) &&
		    e.prog_id == prog_id)
			xmit_found(xs, progs, &e, prog_id);
	} else if (devs >= 0) {
		while (!bpf_map_get_next_key(devs, prev, &next)) {
			k = next;
			prev = &k;
			if (!prog_id || bpf_map_lookup_elem(devs, &k, &e) ||
			    e.prog_id != prog_id)
				continue;
			xmit_found(xs, progs, &e, prog_id);
		}
	}
	if (devs >= 0)
		close(devs);
	if (progs >= 0)
		close(progs);
	return 0;
}
