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
#include "status_int.h"
#include "vnet.skel.h"

/* libbpf 1.1's uapi copy predates tcx (kernel 6.6) */
#define VNET_BPF_TCX_INGRESS 46
#define VNET_BPF_TCX_EGRESS 47
#define VNET_TC_LEGACY_HANDLE 0x766e /* "vn" */
#define VNET_TC_LEGACY_PRIO 0x766e

/* tc: a tcx link if the kernel has tcx, else a legacy clsact filter. */
static int attach_tc(struct bpf_program *prog, int ifindex, bool ingress,
		     const char *ifname, struct vnet_err *err)
{
	int fd, ret;

	fd = bpf_link_create(bpf_program__fd(prog), ifindex,
			     ingress ? VNET_BPF_TCX_INGRESS :
				       VNET_BPF_TCX_EGRESS,
			     NULL);
	if (fd >= 0) {
		ret = vnet_pin_fd(fd, ifname,
			     ingress ? VNET_PIN_LINK_TC_INGRESS :
				       VNET_PIN_LINK_TC_EGRESS,
			     err);
		close(fd);
		return ret;
	}
	if (errno != EINVAL && errno != EOPNOTSUPP) {
		ret = -errno;
		vnet_err_set(err, "%s: cannot attach the tc %s program: %s",
			     ifname, ingress ? "ingress" : "egress",
			     strerror(errno));
		return ret;
	}

	/* kernel without tcx: clsact + direct-action filter */
	DECLARE_LIBBPF_OPTS(bpf_tc_hook, hook, .ifindex = ifindex,
			    .attach_point = ingress ? BPF_TC_INGRESS :
						      BPF_TC_EGRESS);
	DECLARE_LIBBPF_OPTS(bpf_tc_opts, topts,
			    .handle = VNET_TC_LEGACY_HANDLE,
			    .priority = VNET_TC_LEGACY_PRIO,
			    .prog_fd = bpf_program__fd(prog),
			    .flags = BPF_TC_F_REPLACE);
	ret = bpf_tc_hook_create(&hook);
	if (ret && ret != -EEXIST) {
		vnet_err_set(err, "%s: the kernel has neither tcx nor a usable clsact qdisc (CONFIG_NET_SCH_INGRESS): %s",
			     ifname, strerror(-ret));
		return ret;
	}
	ret = bpf_tc_attach(&hook, &topts);
	if (ret) {
		vnet_err_set(err, "%s: cannot attach the tc %s filter: %s",
			     ifname, ingress ? "ingress" : "egress",
			     strerror(-ret));
		return ret;
	}
	return vnet_pin_fd(bpf_program__fd(prog), ifname,
		      ingress ? VNET_PIN_PROG_TC_INGRESS :
				VNET_PIN_PROG_TC_EGRESS,
		      err);
}

static void detach_legacy_tc(int ifindex, bool ingress)
{
	DECLARE_LIBBPF_OPTS(bpf_tc_hook, hook, .ifindex = ifindex,
			    .attach_point = ingress ? BPF_TC_INGRESS :
						      BPF_TC_EGRESS);
	DECLARE_LIBBPF_OPTS(bpf_tc_opts, topts,
			    .handle = VNET_TC_LEGACY_HANDLE,
			    .priority = VNET_TC_LEGACY_PRIO);

	bpf_tc_detach(&hook, &topts);
}

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

/*
 * Take the tap's vnet_xmit_rx out of the shared dispatcher, if it is in;
 * INFO (may be NULL): the attach's, whose device is the entry's key.
 */
static void detach_xmit(const char *ifname, const struct vnet_info *info)
{
	__u32 id = vnet_pinned_prog_id(ifname, VNET_PIN_PROG_XMIT);
	struct vnet_xmit_key key = {};

	if (info) {
		key.netns = (__u32)info->netns_ino;
		key.ifindex = info->ifindex;
	}
	if (id)
		vnet_xmit_unregister(ifname, id, info ? &key : NULL);
}

/*
 * Guest-RX counting at net_dev_start_xmit: the tap's vnet_xmit_rx is
 * pinned (prog_xmit) and tail-called by the one shared dispatcher
 * (xmit.c), so that frames of other devices do not run one program per
 * attached tap.  If the kernel refuses that (tail calls between these
 * programs, the dispatcher's maps), the program is attached to the
 * tracepoint itself, as before (link_xmit), and info says which.
 */
static int attach_xmit(struct vnet *skel, const char *ifname,
		       struct vnet_info *info, struct vnet_err *err)
{
	int prog = bpf_program__fd(skel->progs.vnet_xmit_rx);
	struct vnet_err xerr = {};
	bool shared = true;
	int fd, ret;

#ifdef VNET_TESTING
	/*
	 * A test build only (build/vnetctl-testing, vnetd's test builds):
	 * VNET_XMIT_DISPATCH=per-tap forces the fallback, so that its path
	 * is tested on a kernel that takes the shared one.
	 */
	{
		const char *env = getenv("VNET_XMIT_DISPATCH");

		shared = !env || strcmp(env, "per-tap");
	}
#endif
	ret = vnet_pin_fd(prog, ifname, VNET_PIN_PROG_XMIT, err);
	if (ret)
		return ret;
	if (shared) {
		ret = vnet_xmit_register(ifname, (__u32)info->netns_ino,
					 (__u32)info->ifindex, prog, &xerr);
		if (!ret) {
			info->xmit_attach = VNET_XMIT_SHARED;
			return 0;
		}
	}
	fd = bpf_raw_tracepoint_open(NULL, prog);
	if (fd < 0) {
		ret = -errno;
		vnet_err_set(err, "%s: cannot attach to the net_dev_start_xmit tracepoint: %s%s%s",
			     ifname, strerror(errno),
			     xerr.msg[0] ? "; nor through the shared dispatcher: " : "",
			     xerr.msg);
		return ret;
	}
	ret = vnet_pin_fd(fd, ifname, VNET_PIN_LINK_XMIT, err);
	close(fd);
	if (!ret)
		info->xmit_attach = VNET_XMIT_PER_TAP;
	return ret;
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
		skel = vnet_skel_open_core(opts ? opts->policy : NULL, core,
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

/* The guest-TX program with an XDP link, pinned; info gets the XDP mode. */
static int attach_xdp(struct vnet *skel, const char *ifname, int ifindex,
		      struct vnet_info *info, struct vnet_err *err)
{
	LIBBPF_OPTS(bpf_xdp_query_opts, q);
	int fd, ret;

	fd = bpf_link_create(bpf_program__fd(skel->progs.vnet_xdp_tx),
			     ifindex, BPF_XDP, NULL);
	if (fd < 0) {
		ret = -errno;
		vnet_err_set(err, "%s: cannot attach XDP: %s%s", ifname,
			     strerror(errno),
			     errno == EBUSY ? " (another XDP program is attached; use --force)" :
			     errno == EINVAL ? " (the kernel may lack XDP links, Linux >= 5.9)" : "");
		return ret;
	}
	ret = vnet_pin_fd(fd, ifname, VNET_PIN_LINK_XDP, err);
	close(fd);
	if (ret)
		return ret;
	if (!bpf_xdp_query(ifindex, 0, &q))
		info->xdp_mode = q.attach_mode;
	return 0;
}

/* Attach the loaded programs: guest-TX, guest-RX at xmit, tc egress. */
static int attach_programs(struct vnet *skel, const char *ifname,
			   int ifindex, int tx_hook, struct vnet_info *info,
			   struct vnet_err *err)
{
	int ret;

	if (tx_hook == VNET_HOOK_XDP)
		ret = attach_xdp(skel, ifname, ifindex, info, err);
	else
		ret = attach_tc(skel->progs.vnet_tc_tx, ifindex, true, ifname,
				err);
	if (ret)
		return ret;
	if (info->rx_queue_src == VNET_RXQ_XMIT) {
		ret = attach_xmit(skel, ifname, info, err);
		if (ret)
			return ret;
	}
	return attach_tc(skel->progs.vnet_tc_rx, ifindex, false, ifname, err);
}

/* Take down a half-done attach: links close with their last reference. */
static void unwind_attach(const char *ifname, int ifindex)
{
	int lfd = vnet_pin_get(ifname, VNET_PIN_PROG_TC_INGRESS);

	if (lfd >= 0) {
		detach_legacy_tc(ifindex, true);
		close(lfd);
	}
	lfd = vnet_pin_get(ifname, VNET_PIN_PROG_TC_EGRESS);
	if (lfd >= 0) {
		detach_legacy_tc(ifindex, false);
		close(lfd);
	}
	detach_xmit(ifname, NULL);
	vnet_pin_dir_remove(ifname);
}

int vnet_attach(const char *ifname, const struct vnet_attach_opts *opts,
		struct vnet_err *err)
{
	int tx_hook = opts && opts->tx_hook ? opts->tx_hook : VNET_HOOK_TC;
	struct vnet_info info = {
		.abi_version = VNET_ABI_VERSION,
		.tx_hook = (__u32)tx_hook,
	};
	struct vnet *skel = NULL;
	__u32 key = 0, netns;
	int ifindex, ret;

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
	if (ret)
		return ret;
	ret = vnet_tap_check(ifname, &ifindex, err);
	if (ret)
		return ret;
	ret = check_existing(ifname, ifindex, opts, tx_hook, err);
	if (ret)
		return ret;
	if (tx_hook == VNET_HOOK_XDP) {
		ret = vnet_foreign_xdp(ifname, ifindex, opts && opts->force, err);
		if (ret)
			return ret;
	}
	ret = vnet_netns_ino(&netns);
	if (ret) {
		vnet_err_set(err, "cannot read this thread's network namespace: %s",
			     strerror(-ret));
		return ret;
	}
	info.netns_ino = netns;
	info.ifindex = (__u32)ifindex;
	ret = load_programs(&skel, opts, tx_hook, ifindex, netns, &info, err);
	if (ret)
		return ret;
	ret = vnet_pin_dir_make(ifname, err);
	if (ret)
		goto out;
	ret = pin_maps(skel, ifname, opts, err);
	if (!ret)
		ret = attach_programs(skel, ifname, ifindex, tx_hook, &info,
				      err);
	if (ret) {
		unwind_attach(ifname, ifindex);
		goto out;
	}
	info.ifindex = (__u32)ifindex;
	info.attached_sec = (__u64)time(NULL);
	bpf_map_update_elem(bpf_map__fd(skel->maps.info), &key, &info, BPF_ANY);
out:
	vnet_skel_destroy(skel);
	return ret;
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
	detach_xmit(ifname, st.info.ifindex ? &st.info : NULL);
	/* legacy clsact filters: only where the device is in this netns */
	fd = vnet_pin_get(ifname, VNET_PIN_PROG_TC_INGRESS);
	if (fd >= 0) {
		detach_legacy_tc((int)st.info.ifindex, true);
		close(fd);
	}
	fd = vnet_pin_get(ifname, VNET_PIN_PROG_TC_EGRESS);
	if (fd >= 0) {
		detach_legacy_tc((int)st.info.ifindex, false);
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
	/* dispatcher entries whose pins are gone (removed by hand, say) */
	vnet_xmit_gc();
	return done;
}
