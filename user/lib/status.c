// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * vnet_status(): what is attached to a device, read from its pins (the
 * links and programs, the info map, the queues that carried frames) and
 * from the kernel (the links' devices, the shared xmit dispatcher); and on
 * it, the checks that a device's pins are this namespace's
 * (vnet_pins_check()) before its maps are handed out (vnet_map_get(); the
 * map itself is checked in maps.c).
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <limits.h>
#include <net/if.h>
#include <sys/stat.h>
#include <linux/if_link.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "libvnet.h"
#include "maps_int.h"
#include "pins_int.h"
#include "status_int.h"

int vnet_link_info(int fd, struct bpf_link_info *info)
{
	__u32 len = sizeof(*info);

	memset(info, 0, len);
	return bpf_obj_get_info_by_fd(fd, info, &len) ? -errno : 0;
}

static void hook_status(const char *ifname, const char *pin,
			struct vnet_hook_status *hs)
{
	struct bpf_link_info info;
	int fd = vnet_pin_get(ifname, pin);

	memset(hs, 0, sizeof(*hs));
	if (fd < 0)
		return;
	if (!vnet_link_info(fd, &info)) {
		hs->prog_id = info.prog_id;
		hs->link_id = info.id;
		/* xdp and tcx link info both start with the ifindex */
		hs->ifindex = info.xdp.ifindex;
	}
	close(fd);
}

void vnet_legacy_tc_opts(int ifindex, bool ingress, struct bpf_tc_hook *hook,
			 struct bpf_tc_opts *o)
{
	memset(hook, 0, sizeof(*hook));
	hook->sz = sizeof(*hook);
	hook->ifindex = ifindex;
	hook->attach_point = ingress ? BPF_TC_INGRESS : BPF_TC_EGRESS;
	memset(o, 0, sizeof(*o));
	o->sz = sizeof(*o);
	o->handle = VNET_TC_LEGACY_HANDLE;
	o->priority = VNET_TC_LEGACY_PRIO;
}

__u32 vnet_legacy_tc_prog(int ifindex, bool ingress)
{
	struct bpf_tc_hook hook;
	struct bpf_tc_opts o;

	vnet_legacy_tc_opts(ifindex, ingress, &hook, &o);
	return bpf_tc_query(&hook, &o) ? 0 : o.prog_id;
}

/*
 * A clsact filter's program: pinned, and (where the tap is in this
 * thread's network namespace) still on the tap: `tc qdisc del dev TAP
 * clsact` takes it off without a word to vnet
 */
static void legacy_tc_status(const char *ifname, const char *pin,
			     const struct vnet_info *vi,
			     struct vnet_hook_status *hs)
{
	struct bpf_prog_info info = {};
	__u32 len = sizeof(info), netns;
	int fd = vnet_pin_get(ifname, pin);

	if (fd < 0)
		return;
	if (!bpf_obj_get_info_by_fd(fd, &info, &len) &&
	    (vnet_netns_ino(&netns) || netns != (__u32)vi->netns_ino ||
	     vnet_legacy_tc_prog((int)vi->ifindex,
				 !strcmp(pin, VNET_PIN_PROG_TC_INGRESS)) ==
		     info.id)) {
		hs->prog_id = info.id;
		hs->ifindex = vi->ifindex;
	}
	close(fd);
}

__u32 vnet_pinned_id(const char *ifname, const char *pin)
{
	/* each kind's info starts with its type and its id */
	union {
		struct bpf_prog_info prog;
		struct bpf_map_info map;
		struct bpf_link_info link;
	} info = {};
	__u32 len = sizeof(info);
	int fd = vnet_pin_get(ifname, pin);

	if (fd < 0)
		return 0;
	if (bpf_obj_get_info_by_fd(fd, &info, &len))
		info.prog.id = 0;
	close(fd);
	return info.prog.id;
}

/*
 * How the tap's vnet_xmit_rx runs: its own link (per-tap fallback), or the
 * shared dispatcher, which must have it in the tap's slot right now.
 */
static void xmit_status(const char *ifname, struct vnet_status *st)
{
	struct vnet_xmit_key key = { .netns = st->info.netns_ino,
				     .ifindex = st->info.ifindex };
	struct vnet_xmit_status xs;

	hook_status(ifname, VNET_PIN_LINK_XMIT, &st->xmit);
	if (st->xmit.prog_id) {
		st->xmit_attach = VNET_XMIT_PER_TAP;
		return;
	}
	st->xmit.prog_id = vnet_pinned_id(ifname, VNET_PIN_PROG_XMIT);
	if (!st->xmit.prog_id ||
	    vnet_xmit_query(&xs, st->xmit.prog_id, key.ifindex ? &key : NULL) ||
	    !xs.found)
		return;
	st->xmit_attach = VNET_XMIT_SHARED;
	st->xmit_slot = xs.slot;
	st->xmit_dispatcher_id = xs.prog_id;
	st->xmit_dispatcher_link_id = xs.link_id;
}

int vnet_status(const char *ifname, struct vnet_status *st,
		struct vnet_err *err)
{
	const struct vnet_queue_state *qs;
	struct vnet_map m;
	char dir[PATH_MAX];
	struct stat sb;
	__u32 key = 0, i;

	memset(st, 0, sizeof(*st));
	snprintf(st->ifname, sizeof(st->ifname), "%s", ifname);
	if (vnet_pin_path(dir, sizeof(dir), ifname, NULL))
		return -ENAMETOOLONG;
	if (stat(dir, &sb))
		return vnet_pins_missing(ifname, dir, err);

	/* an info map of another layout is left out (zero) */
	if (!vnet_map_get_any_ns(ifname, VNET_MAP_INFO, VNET_MAP_ANY_ABI, &m,
				 NULL)) {
		if (bpf_map_lookup_elem(m.fd, &key, &st->info))
			memset(&st->info, 0, sizeof(st->info));
		vnet_map_put(&m);
	}
	hook_status(ifname, VNET_PIN_LINK_XDP, &st->xdp);
	hook_status(ifname, VNET_PIN_LINK_TC_INGRESS, &st->tc_ingress);
	hook_status(ifname, VNET_PIN_LINK_TC_EGRESS, &st->tc_egress);
	xmit_status(ifname, st);
	if (!st->tc_egress.prog_id)
		legacy_tc_status(ifname, VNET_PIN_PROG_TC_EGRESS, &st->info,
				 &st->tc_egress);
	if (!st->tc_ingress.prog_id)
		legacy_tc_status(ifname, VNET_PIN_PROG_TC_INGRESS, &st->info,
				 &st->tc_ingress);
	st->xdp_mode = st->info.xdp_mode;
	/* a link loses its device when the device goes away */
	st->present = st->xdp.ifindex || st->tc_ingress.ifindex ||
		      st->tc_egress.ifindex;
	if (!st->xdp.link_id && !st->tc_ingress.link_id &&
	    !st->tc_egress.link_id && st->info.ifindex) {
		/* clsact filters only: ask the kernel whether the ifindex lives */
		char name[IF_NAMESIZE];

		st->present = if_indextoname(st->info.ifindex, name) &&
			      !strcmp(name, ifname);
	}

	if (!vnet_map_get_any_ns(ifname, VNET_MAP_QUEUES, VNET_MAP_MMAP, &m,
				 NULL)) {
		qs = m.mem;
		for (i = 0; i < m.entries; i++)
			if (qs[i].first_seen_ns)
				st->seen[i / VNET_MAX_QUEUES]
					[(i % VNET_MAX_QUEUES) / 64] |=
					1ull << (i % 64);
		vnet_map_put(&m);
	}
	return 0;
}

const char *vnet_xdp_mode_name(__u32 mode)
{
	switch (mode) {
	case XDP_ATTACHED_DRV:
		return "native";
	case XDP_ATTACHED_SKB:
		return "generic";
	case XDP_ATTACHED_HW:
		return "offload";
	case XDP_ATTACHED_MULTI:
		return "multi";
	default:
		return "none";
	}
}

/*
 * From the pins' info map alone: 1 when they name this thread's network
 * namespace, 2 when another one's but this thread is in the host's (no
 * -n NAME) without a device of that name (a command here may read them,
 * as vnet_pins_other_netns() decides), 0 when that takes a status read.
 */
static int pins_netns_quick(const char *ifname)
{
	struct vnet_info in;
	struct vnet_map m;
	struct stat host;
	__u32 key = 0, cur;
	int ret = 0;

	if (vnet_netns_ino(&cur) ||
	    vnet_map_get_any_ns(ifname, VNET_MAP_INFO, 0, &m, NULL))
		return 0;
	if (!bpf_map_lookup_elem(m.fd, &key, &in) && in.netns_ino) {
		if (in.netns_ino == cur)
			ret = 1;
		else if (!vnet_netns_named() &&
			 (stat("/proc/1/ns/net", &host) || host.st_ino == cur) &&
			 !if_nametoindex(ifname))
			ret = 2; /* PID 1's may be unreadable: as the full check */
	}
	vnet_map_put(&m);
	return ret;
}

static bool pins_this_netns(const char *ifname)
{
	return pins_netns_quick(ifname) == 1;
}

bool vnet_pins_gone(const char *ifname)
{
	return pins_this_netns(ifname) && !if_nametoindex(ifname);
}

int vnet_pins_check(const char *ifname, struct vnet_err *err)
{
	struct vnet_status st;

	/* the usual cases in two bpf() calls, not a whole status read */
	if (pins_netns_quick(ifname))
		return 0;
	/* no pins: the caller's own open says so */
	if (vnet_status(ifname, &st, NULL))
		return 0;
	return vnet_pins_other_netns(ifname, &st, err);
}

int vnet_map_get(const char *ifname, enum vnet_map_id id, unsigned int flags,
		 struct vnet_map *m, struct vnet_err *err)
{
	int ret;

	m->fd = -1;
	m->mem = NULL;
	m->len = 0;
	m->entries = 0;
	/* the pins of a same-named device in another netns are not ours */
	ret = vnet_pins_check(ifname, err);
	if (ret)
		return ret;
	return vnet_map_get_any_ns(ifname, id, flags, m, err);
}

int vnet_info_read(const char *ifname, struct vnet_info *in,
		   struct vnet_err *err)
{
	struct vnet_map m;
	__u32 key = 0;
	int ret;

	memset(in, 0, sizeof(*in));
	ret = vnet_map_get(ifname, VNET_MAP_INFO, 0, &m, err);
	if (ret)
		return ret;
	if (bpf_map_lookup_elem(m.fd, &key, in)) {
		ret = -errno;
		vnet_err_set(err, "%s: the info map: %s", ifname,
			     strerror(errno));
		memset(in, 0, sizeof(*in));
	}
	vnet_map_put(&m);
	return ret;
}
