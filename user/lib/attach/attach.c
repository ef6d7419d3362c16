// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * Attach mode: load the classifier, attach it to a tap, pin maps and links
 * under /sys/fs/bpf/vnet/<ifname>/ (pins.c) so that the attachment
 * outlives the command, and take it all down again.  What is attached is
 * read back by vnet_status() (status.c).
 *
 * Hooks: the guest-TX direction uses tc ingress (default) or XDP; the
 * guest-RX direction uses tc egress.  tc ingress is the default because any
 * XDP program on a tap sends every GSO frame the guest writes through
 * generic XDP, which linearizes it: +60% CPU per 64 KB frame, measured in
 * docs/benchmarks.md, against 1-4% saved on small frames.  tc programs are
 * attached with tcx links (kernel >= 6.6); on older kernels they fall back
 * to a clsact filter (no link; the program is pinned instead).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <limits.h>
#include <net/if.h>
#include <sys/stat.h>
#include <linux/if_link.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "libvnet.h"
#include "attach_foreign_int.h"
#include "pins_int.h"
#include "hooks_int.h"
#include "shared_int.h"
#include "shared_set.h"
#include "status_int.h"
#include "vnet.skel.h"

static void config_defaults(int fd)
{
	struct vnet_config c = {
		/* coalescing on, urgent/push bypass on (abi.h) */
		.tx_frames = VNET_DEFAULT_TX_FRAMES,
		.tx_usecs = VNET_DEFAULT_TX_USECS,
		.rx_frames = VNET_DEFAULT_RX_FRAMES,
		.rx_usecs = VNET_DEFAULT_RX_USECS,
		.min_frames = 1,
		.max_frames = 64,
		.min_usecs = 0,
		.max_usecs = 256,
	};
	__u32 q;

	for (q = 0; q < VNET_MAX_QUEUES; q++)
		bpf_map_update_elem(fd, &q, &c, BPF_ANY);
}

static const char *hook_name(int tx_hook)
{
	return tx_hook == VNET_HOOK_XDP ? "xdp" : "tc";
}

/*
 * Pins of IFNAME already there: 0 to go on (stale ones are removed),
 * -EALREADY when this device is attached, -EEXIST on another netns's
 * device or when asked for the other hook.
 */
static int check_existing(const char *ifname, int ifindex,
			  const struct vnet_attach_opts *opts, int tx_hook,
			  struct vnet_err *err)
{
	struct vnet_status st;
	int ret;

	if (vnet_status(ifname, &st, NULL))
		return 0;
	ret = vnet_pins_other_netns(ifname, &st, err);
	if (ret)
		return ret;
	if (st.present && st.info.ifindex == (__u32)ifindex &&
	    opts && opts->tx_hook && st.info.tx_hook != (__u32)tx_hook) {
		char ns[NAME_MAX + 8];

		/* asked for the other hook: say how, change nothing */
		vnet_hint_netns(ns, sizeof(ns));
		vnet_err_set(err, "%s: already attached with the guest-TX hook %s, not %s; to switch: 'vnetctl%s detach %s' then 'vnetctl%s attach %s --tx-hook %s' (the counters start again from zero)",
			     ifname, hook_name((int)st.info.tx_hook),
			     hook_name(tx_hook), ns, ifname, ns, ifname,
			     hook_name(tx_hook));
		return -EEXIST;
	}
	if (st.present && st.info.ifindex == (__u32)ifindex) {
		vnet_err_set(err, "%s: already attached (pins in %s/%s); nothing to do",
			     ifname, VNET_PIN_ROOT, ifname);
		return -EALREADY;
	}
	/* pins of a device that went away (or whose name was reused) */
	vnet_detach(ifname, NULL);
	return 0;
}

/*
 * Open and load the classifier into *SKELP for IFINDEX in NETNS.
 * Guest-RX frames are counted at the net_dev_start_xmit tracepoint,
 * where the queue is known; a kernel that cannot attach there (no BTF)
 * gets tc egress counting at queue_mapping instead.
 */
static int load_programs(struct vnet **skelp,
			 const struct vnet_attach_opts *opts, int tx_hook,
			 int ifindex, __u32 netns, struct vnet_info *info,
			 struct vnet_err *err)
{
	struct vnet *skel;
	int ret = 0;

	for (int try = 0; try < 3; try++) {
		/*
		 * 0: with vnet_xmit_rx, CO-RE against the cut of the kernel's
		 * BTF made once per process (core_btf.c); 1: the same against
		 * the kernel's whole BTF, should the cut not do; 2: without
		 */
		bool xmit = try < 2, core = try == 0;

		/* with opts->policy linked in (policy.c, docs/policy.md) */
		skel = vnet_skel_open_core(opts ? opts->policy : NULL,
					   core ? vnet_skel_core_btf() : NULL,
					   err);
		if (!skel)
			return -errno;
		if (core && !vnet_core_btf(NULL))
			try++; /* no cut: this is try 1 already */
		bpf_program__set_autoload(skel->progs.vnet_xdp_tx,
					  tx_hook == VNET_HOOK_XDP);
		bpf_program__set_autoload(skel->progs.vnet_tc_tx,
					  tx_hook == VNET_HOOK_TC);
		bpf_program__set_autoload(skel->progs.vnet_xmit_rx, xmit);
		skel->rodata->rx_count_at_xmit = xmit;
		skel->rodata->target_ifindex = (__u32)ifindex;
		skel->rodata->target_netns = netns;
		info->rx_queue_src = xmit ? VNET_RXQ_XMIT : VNET_RXQ_TC;
		ret = vnet__load(skel);
		if (!ret) {
			*skelp = skel;
			return 0;
		}
		vnet_skel_destroy(skel);
	}
	vnet_err_set(err, "cannot load the BPF programs: %s%s",
		     strerror(-ret),
		     ret == -EPERM ? " (vnetctl needs root: CAP_BPF, CAP_NET_ADMIN, CAP_SYS_ADMIN)" :
		     " (the kernel may lack BPF, XDP or BTF support; run with -d for the verifier's log)");
	return ret;
}

/*
 * Pin the classifier's maps (bpf/maps.h; the policy record is policy.c's),
 * fill config with the defaults and vm with the VM's name (before any
 * reader can see it: the exporter's first scrape has the label), record
 * which policy the programs were linked with.
 */
static int pin_maps(struct vnet *skel, const char *ifname,
		    const struct vnet_attach_opts *opts, struct vnet_err *err)
{
	struct vnet_vm vm = { .gen = 2 };
	enum vnet_map_id id;
	__u32 key = 0;
	int ret;

	if (opts && opts->vm && *opts->vm) {
		snprintf(vm.name, sizeof(vm.name), "%s", opts->vm);
		bpf_map_update_elem(bpf_map__fd(skel->maps.vm), &key, &vm,
				    BPF_ANY);
	}
	for (id = 0; id < VNET_MAP_MAX; id++) {
		const char *name = vnet_map_name(id);
		struct bpf_map *m;

		if (id == VNET_MAP_POLICY)
			continue;
		m = bpf_object__find_map_by_name(skel->obj, name);
		ret = vnet_pin_fd(bpf_map__fd(m), ifname, name, err);
		if (ret)
			return ret;
	}
	config_defaults(bpf_map__fd(skel->maps.config));
	return vnet_policy_record(ifname, opts ? opts->policy : NULL, err);
}

/*
 * The per-tap object with its maps only, made by a load without its
 * programs: the maps a tap on the shared classifier keeps in its pins.
 */
static int load_maps(struct vnet **skelp, struct vnet_err *err)
{
	struct vnet *skel = vnet_skel_open_core(NULL, vnet_empty_btf(), err);
	struct bpf_program *p;
	int ret;

	if (!skel)
		return -errno;
	bpf_object__for_each_program(p, skel->obj)
		bpf_program__set_autoload(p, false);
	ret = vnet__load(skel);
	if (ret) {
		vnet_err_set(err, "cannot create the BPF maps: %s",
			     strerror(-ret));
		vnet_skel_destroy(skel);
		return ret;
	}
	*skelp = skel;
	return 0;
}

/* The tap in the namespace's shared classifier: its programs in P. */
static int shared_add(struct vnet *skel, const char *ifname,
		      struct vnet_info *info, struct vnet_shared_set *sh,
		      struct vnet_err *err)
{
	static const enum vnet_map_id ids[VNET_SHARED_MAPS] =
		VNET_SHARED_MAP_IDS;
	int maps[VNET_SHARED_MAPS], ret;

	for (int i = 0; i < VNET_SHARED_MAPS; i++)
		maps[i] = bpf_map__fd(
			bpf_object__find_map_by_name(skel->obj,
						     vnet_map_name(ids[i])));
	ret = vnet_shared_add(ifname, info->ifindex, (__u32)info->netns_ino,
			      maps, sh, err);
	if (!ret)
		info->rx_queue_src =
			sh->progs.xmit >= 0 ? VNET_RXQ_XMIT : VNET_RXQ_TC;
	return ret;
}

/*
 * Load (SHARED: the maps, for the namespace's shared classifier; else a
 * classifier of the tap's own), pin, attach, and record it in the info
 * map; a failure leaves nothing behind.
 */
static int attach_as(bool shared, const char *ifname,
		     const struct vnet_attach_opts *opts, int tx_hook,
		     struct vnet_info *info, struct vnet_err *err)
{
	struct vnet_shared_set sh = { .taps = -1 };
	struct vnet_progs p = { .xmit = -1 };
	int ifindex = (int)info->ifindex, ret;
	struct vnet *skel = NULL;
	__u32 key = 0;

	ret = shared ? load_maps(&skel, err) :
		       load_programs(&skel, opts, tx_hook, ifindex,
				     (__u32)info->netns_ino, info, err);
	if (ret)
		return ret;
	ret = vnet_pin_dir_make(ifname, err);
	if (!ret)
		ret = pin_maps(skel, ifname, opts, err);
	if (!ret && shared) {
		ret = shared_add(skel, ifname, info, &sh, err);
		p = sh.progs;
	} else if (!ret) {
		p.tc_tx = bpf_program__fd(skel->progs.vnet_tc_tx);
		p.tc_rx = bpf_program__fd(skel->progs.vnet_tc_rx);
		p.xdp_tx = bpf_program__fd(skel->progs.vnet_xdp_tx);
		p.xmit = bpf_program__fd(skel->progs.vnet_xmit_rx);
	}
	p.clsact = opts && opts->tc_attach == VNET_TC_CLSACT;
	if (!ret)
		ret = vnet_hooks_attach(&p, ifname, ifindex, tx_hook, info,
					err);
	if (ret && shared && sh.taps >= 0)
		vnet_shared_remove((__u32)info->netns_ino, info->ifindex,
				   vnet_pinned_id(ifname,
						  vnet_map_name(
							  VNET_MAP_STATS)));
	if (shared)
		vnet_shared_close(&sh);
	if (ret) {
		vnet_hooks_unwind(ifname, info);
	} else {
		info->attached_sec = (__u64)time(NULL);
		bpf_map_update_elem(bpf_map__fd(skel->maps.info), &key, info,
				    BPF_ANY);
	}
	vnet_skel_destroy(skel);
	return ret;
}

/*
 * The shared classifier, unless the tap has a policy of its own (a test
 * build: or VNET_CLASSIFIER=per-tap, so that that path is tested too)
 */
static bool shared_wanted(const struct vnet_attach_opts *opts)
{
	if (opts && opts->policy)
		return false;
#ifdef VNET_TESTING
	{
		const char *env = getenv("VNET_CLASSIFIER");

		if (env && !strcmp(env, "per-tap"))
			return false;
	}
#endif
	return true;
}

/* tx hook, VM name, bpffs, the device, pins already there; its ifindex */
static int attach_check(const char *ifname, const struct vnet_attach_opts *opts,
			int tx_hook, int *ifindex, struct vnet_err *err)
{
	int ret;

	if (tx_hook != VNET_HOOK_XDP && tx_hook != VNET_HOOK_TC) {
		vnet_err_set(err, "unknown tx hook %d", tx_hook);
		return -EINVAL;
	}
	if (opts && opts->vm) {
		ret = vnet_vm_check(opts->vm, err);
		if (ret)
			return ret;
	}
	ret = vnet_bpffs_ensure(err);
	if (!ret)
		ret = vnet_tap_check(ifname, ifindex, err);
	if (!ret)
		ret = check_existing(ifname, *ifindex, opts, tx_hook, err);
	if (!ret && tx_hook == VNET_HOOK_XDP)
		ret = vnet_foreign_xdp(ifname, *ifindex, opts && opts->force,
				       err);
	return ret;
}

int vnet_attach(const char *ifname, const struct vnet_attach_opts *opts,
		struct vnet_err *err)
{
	int tx_hook = opts && opts->tx_hook ? opts->tx_hook : VNET_HOOK_TC;
	struct vnet_info info = {
		.abi_version = VNET_ABI_VERSION,
		.tx_hook = (__u32)tx_hook,
	};
	__u32 netns;
	int ifindex, ret;

	ret = attach_check(ifname, opts, tx_hook, &ifindex, err);
	if (ret)
		return ret;
	ret = vnet_netns_ino(&netns);
	if (ret) {
		vnet_err_set(err, "cannot read this thread's network namespace: %s",
			     strerror(-ret));
		return ret;
	}
	info.netns_ino = netns;
	info.ifindex = (__u32)ifindex;
	/*
	 * A shared classifier the kernel refuses (or a full one, or a tap
	 * the xmit dispatcher cannot take) leaves the tap to a classifier of
	 * its own, as on a kernel without map-in-map
	 */
	if (shared_wanted(opts) &&
	    !attach_as(true, ifname, opts, tx_hook, &info, err))
		return 0;
	info.xdp_mode = info.xmit_attach = 0;
	return attach_as(false, ifname, opts, tx_hook, &info, err);
}

static void detach_link_pin(const char *ifname, const char *pin)
{
	int fd = vnet_pin_get(ifname, pin);

	if (fd < 0)
		return;
	bpf_link_detach(fd); /* fails harmlessly on a defunct link */
	close(fd);
}

/* LINKS: detach each link first (else they go with their pins) */
static int detach(const char *ifname, bool links, struct vnet_err *err)
{
	struct vnet_status st;
	char dir[PATH_MAX];
	struct stat sb;
	int fd, ret;

	if (vnet_pin_path(dir, sizeof(dir), ifname, NULL))
		return -ENAMETOOLONG;
	if (stat(dir, &sb))
		return vnet_pins_missing(ifname, dir, err);
	/*
	 * st.info: zero when the info map is of another layout.  Unpinning,
	 * the info map alone (vnet_info_read() refuses another netns's
	 * pins): a tcx link's info takes the RTNL lock, which the kernel's
	 * release of each link unpinned before holds through a grace period.
	 */
	memset(&st, 0, sizeof(st));
	if (!links) {
		ret = vnet_info_read(ifname, &st.info, err);
		if (ret == -EEXIST)
			return ret;
	} else if (!vnet_status(ifname, &st, NULL)) {
		ret = vnet_pins_other_netns(ifname, &st, err);
		if (ret)
			return ret;
	}
	if (links) {
		detach_link_pin(ifname, VNET_PIN_LINK_XDP);
		detach_link_pin(ifname, VNET_PIN_LINK_TC_INGRESS);
		detach_link_pin(ifname, VNET_PIN_LINK_TC_EGRESS);
		detach_link_pin(ifname, VNET_PIN_LINK_XMIT);
	}
	vnet_hooks_detach_xmit(ifname, st.info.ifindex ? &st.info : NULL);
	vnet_shared_remove((__u32)st.info.netns_ino, st.info.ifindex,
			   vnet_pinned_id(ifname,
					  vnet_map_name(VNET_MAP_STATS)));
	/* legacy clsact filters: only where the device is in this netns */
	fd = vnet_pin_get(ifname, VNET_PIN_PROG_TC_INGRESS);
	if (fd >= 0) {
		vnet_hooks_detach_legacy_tc((int)st.info.ifindex, true);
		close(fd);
	}
	fd = vnet_pin_get(ifname, VNET_PIN_PROG_TC_EGRESS);
	if (fd >= 0) {
		vnet_hooks_detach_legacy_tc((int)st.info.ifindex, false);
		close(fd);
	}
	ret = vnet_pin_dir_remove(ifname);
	if (ret)
		vnet_err_set(err, "%s: cannot remove the pins in %s: %s",
			     ifname, dir, strerror(-ret));
	return ret;
}

int vnet_detach(const char *ifname, struct vnet_err *err)
{
	return detach(ifname, true, err);
}

/*
 * A link's last reference dropped by an unpin is released by a kernel
 * worker (bpf_link_put()): tcx's release takes the RTNL lock and waits
 * for an RCU grace period, one link after another whoever asks, 10-20 ms
 * each on a loaded 2-CPU VM; detached one by one, a thousand taps kept
 * their process 40 s.
 */
int vnet_detach_unpin(const char *ifname, struct vnet_err *err)
{
	return detach(ifname, false, err);
}

int vnet_gc(char (*removed)[IF_NAMESIZE], int max, struct vnet_err *err)
{
	static char names[1024][IF_NAMESIZE];
	struct vnet_status st;
	int n, i, done = 0, ret;

	n = vnet_list(names, 1024);
	if (n < 0) {
		vnet_err_set(err, "cannot read %s: %s", VNET_PIN_ROOT,
			     strerror(-n));
		return n;
	}
	for (i = 0; i < n; i++) {
		if (vnet_status(names[i], &st, NULL) || st.present)
			continue;
		ret = vnet_detach(names[i], err);
		if (ret)
			return ret;
		if (done < max)
			snprintf(removed[done], IF_NAMESIZE, "%.15s",
				 names[i]);
		done++;
	}
	/* dispatcher entries and shared slots whose pins are gone */
	vnet_xmit_gc();
	vnet_shared_gc();
	return done;
}
