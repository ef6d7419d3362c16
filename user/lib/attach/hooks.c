// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * A tap's hooks: the loaded programs (a classifier of the tap's own, or the
 * namespace's shared one, shared.c) attached to tc ingress or XDP (guest
 * TX), tc egress and net_dev_start_xmit (guest RX), each link pinned in
 * the tap's pin directory; and taken off again.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <linux/if_link.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "libvnet.h"
#include "hooks_int.h"
#include "pins_int.h"
#include "shared_int.h"
#include "status_int.h"

/* libbpf 1.1's uapi copy predates tcx (kernel 6.6) */
#define VNET_BPF_TCX_INGRESS 46
#define VNET_BPF_TCX_EGRESS 47

int vnet_tc_attach_parse(const char *s, int *how)
{
	if (!strcmp(s, "tcx"))
		*how = VNET_TC_TCX;
	else if (!strcmp(s, "clsact"))
		*how = VNET_TC_CLSACT;
	else
		return -EINVAL;
	return 0;
}

static const char *tc_dir(bool ingress)
{
	return ingress ? "ingress" : "egress";
}

/* PROG on a tcx link of IFINDEX, pinned; -errno, ERR says why */
static int attach_tcx(int prog, int ifindex, bool ingress, const char *ifname,
		      struct vnet_err *err)
{
	int fd, ret;

	fd = bpf_link_create(prog, ifindex,
			     ingress ? VNET_BPF_TCX_INGRESS :
				       VNET_BPF_TCX_EGRESS,
			     NULL);
	if (fd < 0) {
		ret = -errno;
		vnet_err_set(err, "%s: cannot attach the tc %s program: %s",
			     ifname, tc_dir(ingress), strerror(errno));
		return ret;
	}
	ret = vnet_pin_fd(fd, ifname,
			  ingress ? VNET_PIN_LINK_TC_INGRESS :
				    VNET_PIN_LINK_TC_EGRESS,
			  err);
	close(fd);
	return ret;
}

/*
 * PROG as a clsact direct-action filter of IFINDEX (handle and priority
 * 0x766e, replacing one vnet left there), the program pinned: no RCU
 * grace period under the RTNL lock, as a tcx link's attach waits for
 */
static int attach_clsact(int prog, int ifindex, bool ingress,
			 const char *ifname, struct vnet_err *err)
{
	struct bpf_tc_hook hook;
	struct bpf_tc_opts topts;
	char kind[16];
	int ret;

	vnet_legacy_tc_opts(ifindex, ingress, &hook, &topts);
	topts.prog_fd = prog;
	topts.flags = BPF_TC_F_REPLACE;

	/* an ingress qdisc takes both directions' filters into one block */
	ret = vnet_tap_ingress_qdisc(ifindex, kind, sizeof(kind));
	if (!ret && *kind && strcmp(kind, "clsact")) {
		vnet_err_set(err,
			     "%s: its %s qdisc is in the way of a clsact qdisc",
			     ifname, kind);
		return -EBUSY;
	}
	ret = bpf_tc_hook_create(&hook);
	if (ret && ret != -EEXIST) {
		vnet_err_set(err,
			     "%s: cannot add a clsact qdisc (CONFIG_NET_SCH_INGRESS): %s",
			     ifname, strerror(-ret));
		return ret;
	}
	ret = bpf_tc_attach(&hook, &topts);
	if (ret) {
		vnet_err_set(err, "%s: cannot attach the tc %s filter: %s",
			     ifname, tc_dir(ingress), strerror(-ret));
		return ret;
	}
	ret = vnet_pin_fd(prog, ifname,
			  ingress ? VNET_PIN_PROG_TC_INGRESS :
				    VNET_PIN_PROG_TC_EGRESS,
			  err);
	if (ret)
		vnet_hooks_detach_legacy_tc(ifindex, ingress);
	return ret;
}

/*
 * tc: a tcx link, or with CLSACT a clsact filter; each falls back to the
 * other where the kernel refuses it (no tcx before 6.6; a qdisc in the
 * way of clsact, such as an ingress qdisc without an egress hook)
 */
static int attach_tc(int prog, int ifindex, bool ingress, bool clsact,
		     const char *ifname, struct vnet_err *err)
{
	struct vnet_err first = {}, second = {};
	int ret;

	ret = clsact ? attach_clsact(prog, ifindex, ingress, ifname, &first) :
		       attach_tcx(prog, ifindex, ingress, ifname, &first);
	if (!ret)
		return 0;
	if (!clsact && ret != -EINVAL && ret != -EOPNOTSUPP) {
		vnet_err_set(err, "%s", first.msg);
		return ret;
	}
	ret = clsact ? attach_tcx(prog, ifindex, ingress, ifname, &second) :
		       attach_clsact(prog, ifindex, ingress, ifname, &second);
	if (ret)
		vnet_err_set(err, "%s; and %s", first.msg, second.msg);
	return ret;
}

void vnet_hooks_detach_legacy_tc(int ifindex, bool ingress)
{
	struct bpf_tc_hook hook;
	struct bpf_tc_opts o;

	vnet_legacy_tc_opts(ifindex, ingress, &hook, &o);
	bpf_tc_detach(&hook, &o);
}

/*
 * Take the tap's vnet_xmit_rx out of the shared dispatcher, if it is in;
 * INFO (may be NULL): the attach's, whose device is the entry's key.
 */
void vnet_hooks_detach_xmit(const char *ifname, const struct vnet_info *info)
{
	__u32 id = vnet_pinned_id(ifname, VNET_PIN_PROG_XMIT);
	struct vnet_xmit_key key = {};

	if (info) {
		key.netns = (__u32)info->netns_ino;
		key.ifindex = info->ifindex;
	}
	if (!id)
		return;
	/* no key: the tap's own program, or by name where it is shared */
	if (!info && vnet_shared_prog_is(id))
		id = 0;
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
static int attach_xmit(int prog, bool shared_prog, const char *ifname,
		       struct vnet_info *info, struct vnet_err *err)
{
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
	/*
	 * The namespace's shared program on the tracepoint once a tap would
	 * count each frame once for every tap: such a tap loads its own.
	 */
	if (shared_prog) {
		vnet_err_set(err, "%s: the net_dev_start_xmit dispatcher: %s",
			     ifname, xerr.msg[0] ? xerr.msg : "not used");
		return -EOPNOTSUPP;
	}
	fd = bpf_raw_tracepoint_open(NULL, prog);
	if (fd < 0) {
		ret = -errno;
		vnet_err_set(err,
			     "%s: cannot attach to the net_dev_start_xmit tracepoint: %s%s%s",
			     ifname, strerror(errno),
			     xerr.msg[0] ?
				     "; nor through the shared dispatcher: " :
				     "",
			     xerr.msg);
		return ret;
	}
	ret = vnet_pin_fd(fd, ifname, VNET_PIN_LINK_XMIT, err);
	close(fd);
	if (!ret)
		info->xmit_attach = VNET_XMIT_PER_TAP;
	return ret;
}

/* The guest-TX program with an XDP link, pinned; info gets the XDP mode. */
static int attach_xdp(int prog, const char *ifname, int ifindex,
		      struct vnet_info *info, struct vnet_err *err)
{
	LIBBPF_OPTS(bpf_xdp_query_opts, q);
	int fd, ret;

	fd = bpf_link_create(prog, ifindex, BPF_XDP, NULL);
	if (fd < 0) {
		ret = -errno;
		vnet_err_set(err, "%s: cannot attach XDP: %s%s", ifname,
			     strerror(errno),
			     errno == EBUSY ?
				     " (another XDP program is attached; use --force)" :
			     errno == EINVAL ?
				     " (the kernel may lack XDP links, Linux >= 5.9)" :
				     "");
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
int vnet_hooks_attach(const struct vnet_progs *p, const char *ifname,
		      int ifindex, int tx_hook, struct vnet_info *info,
		      struct vnet_err *err)
{
	int ret;

	if (tx_hook == VNET_HOOK_XDP)
		ret = attach_xdp(p->xdp_tx, ifname, ifindex, info, err);
	else
		ret = attach_tc(p->tc_tx, ifindex, true, p->clsact, ifname,
				err);
	if (ret)
		return ret;
	if (info->rx_queue_src == VNET_RXQ_XMIT) {
		ret = attach_xmit(p->xmit, p->shared, ifname, info, err);
		if (ret)
			return ret;
	}
	return attach_tc(p->tc_rx, ifindex, false, p->clsact, ifname, err);
}

/* Take down a half-done attach: links close with their last reference. */
void vnet_hooks_unwind(const char *ifname, const struct vnet_info *info)
{
	int lfd = vnet_pin_get(ifname, VNET_PIN_PROG_TC_INGRESS);

	if (lfd >= 0) {
		vnet_hooks_detach_legacy_tc((int)info->ifindex, true);
		close(lfd);
	}
	lfd = vnet_pin_get(ifname, VNET_PIN_PROG_TC_EGRESS);
	if (lfd >= 0) {
		vnet_hooks_detach_legacy_tc((int)info->ifindex, false);
		close(lfd);
	}
	vnet_hooks_detach_xmit(ifname, info);
	vnet_pin_dir_remove(ifname);
}
