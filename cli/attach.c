// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* vnetctl attach | detach */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <linux/capability.h>

#include "libvnet.h"
#include "base/out.h"
#include "base/util.h"
#include "attach.h"

/*
 * Attached, but not to the tap a virtio-net guest's VMM makes (QEMU and
 * libvirt create multi-queue taps with vnet_hdr): say what that means.
 * The attachment stands; the warnings are on stderr (docs/cli-contract.md).
 */
static void tap_warn(const char *dev)
{
	struct vnet_tap_flags f;
	int ifindex;

	if (vnet_tap_check(dev, &ifindex, NULL) || vnet_tap_flags(ifindex, &f))
		return;
	if (!f.multi_queue)
		fprintf(stderr, "Warning: %s is a single-queue tap (no multi_queue): every frame is counted on queue 0, and a multi-queue guest NIC cannot use it (create it with 'ip tuntap add dev %s mode tap multi_queue vnet_hdr', as QEMU and libvirt do)\n",
			dev, dev);
	if (!f.vnet_hdr)
		fprintf(stderr, "Warning: %s has no vnet_hdr: frames carry no virtio_net_hdr, so a guest behind it has no checksum or segmentation offload (QEMU and libvirt create taps with vnet_hdr)\n",
			dev);
}

#ifndef CAP_BPF
#define CAP_BPF 39
#endif

/* CAP is in the effective set */
static bool capable(int cap)
{
	struct __user_cap_header_struct h = { _LINUX_CAPABILITY_VERSION_3, 0 };
	struct __user_cap_data_struct d[_LINUX_CAPABILITY_U32S_3] = {};

	if (syscall(SYS_capget, &h, d))
		return true; /* cannot tell: the kernel will say */
	return d[cap / 32].effective & (1U << (cap % 32));
}

/*
 * What attach needs, said before anything else fails on its own words
 * (a device in a namespace an unprivileged process cannot enter looks
 * like no device at all): CAP_NET_ADMIN and CAP_BPF (CAP_SYS_ADMIN before
 * Linux 5.8, where CAP_BPF does not exist).
 */
static int attach_privileged(const char *dev)
{
	if (capable(CAP_NET_ADMIN) &&
	    (capable(CAP_BPF) || capable(CAP_SYS_ADMIN)))
		return 0;
	return cli_error("%s: attaching needs root: CAP_NET_ADMIN and CAP_BPF, which this process (uid %u) lacks; run 'vnetctl attach %s' as root (sudo)",
			 dev, (unsigned int)geteuid(), dev);
}

const struct cli_opt attach_opts[] = {
	{ "tx-hook", 't', "HOOK",
	  "tc (default) or xdp: the hook for guest-TX frames\n(any XDP program makes tun linearize GSO frames)" },
	{ "force", 'f', NULL, "with xdp: replace a foreign XDP program" },
	{ "policy", 'P', "FILE",
	  "link the batching policy in FILE.bpf.o into the\nprograms instead of the built-in (docs/policy.md)" },
	{ "vm", 0, "NAME",
	  "the VM (libvirt domain) DEV belongs to: the vm\nlabel of its Prometheus series; DEV attached\nalready: renamed ('': no name)" },
	{ "tc-attach", 0, "HOW",
	  "tcx (default) or clsact: the tc programs on tcx\nlinks, or as clsact filters (attached in 0.1 ms\nagainst an RCU grace period; 'tc qdisc del dev\nDEV clsact' takes them off)" },
	{ NULL, 0, NULL, NULL },
};
/* no short names: the 4th and 5th options above (cli_getopt()) */
#define ATTACH_OPT_VM (256 + 3)
#define ATTACH_OPT_TC_ATTACH (256 + 4)

const struct cli_opt detach_opts[] = {
	{ "force", 'f', NULL,
	  "detach all the same (that vnetd keeps running on\nmaps nothing updates any more)" },
	{ NULL, 0, NULL, NULL },
};

/*
 * DEV is attached already (a vnetd port's tap, say, which the libvirt hook
 * names): its VM named VM.  1 when that changed it (MSG says so), 0 when
 * it was so, -errno (ERR says why).
 */
static int vm_rename(const char *dev, const char *vm, char *msg, size_t len,
		     struct vnet_err *err)
{
	char old[VNET_VM_NAME_MAX + 1];
	int ret = vnet_vm_get(dev, old, err);

	if (ret)
		return ret;
	if (!strcmp(old, vm))
		return 0;
	ret = vnet_vm_set(dev, vm, err);
	if (ret)
		return ret;
	snprintf(msg, len, "%s: already attached; its VM %s%s%s (%s%s%s)", dev,
		 *vm ? "is now '" : "name is removed", vm, *vm ? "'" : "",
		 *old ? "was '" : "it had none", old, *old ? "'" : "");
	return 1;
}

int do_attach(int argc, char **argv)
{
	struct vnet_attach_opts ao = {}; /* tx_hook 0: tc, or what is there */
	struct vnet_err err = {};
	char msg[sizeof(err.msg) + 2 * VNET_VM_NAME_MAX];
	int opt, ret, renamed = 0;
	const char *dev;

	while ((opt = cli_getopt(argc, argv, attach_opts, "")) != -1) {
		switch (opt) {
		case 'f':
			ao.force = true;
			break;
		case 't':
			if (!strcmp(optarg, "xdp"))
				ao.tx_hook = VNET_HOOK_XDP;
			else if (!strcmp(optarg, "tc"))
				ao.tx_hook = VNET_HOOK_TC;
			else
				return cli_usage("attach", "invalid --tx-hook '%s': expected xdp or tc",
						 optarg);
			break;
		case 'P':
			ao.policy = optarg;
			break;
		case ATTACH_OPT_TC_ATTACH:
			if (vnet_tc_attach_parse(optarg, &ao.tc_attach))
				return cli_usage("attach",
						 "invalid --tc-attach '%s': expected tcx or clsact",
						 optarg);
			break;
		case ATTACH_OPT_VM:
			if (vnet_vm_check(optarg, &err))
				return cli_usage("attach", "--vm: %s", err.msg);
			ao.vm = optarg;
			break;
		default:
			return cli_bad_option("attach", opt, argv);
		}
	}
	if (optind != argc - 1)
		return cli_usage("attach", optind >= argc ?
					   "missing device name" :
					   "too many arguments");
	dev = argv[optind];
	if (attach_privileged(dev))
		return 1;

	ret = vnet_attach(dev, &ao, &err);
	if (ret == -EALREADY && ao.policy)
		return cli_error("%s: already attached; the policy is linked into the programs when they are loaded: 'vnetctl detach %s' first",
				 dev, dev);
	if (ret == -EALREADY && ao.vm) {
		renamed = vm_rename(dev, ao.vm, msg, sizeof(msg), &err);
		if (renamed < 0)
			return cli_error("%s", err.msg);
	}
	if (ret && ret != -EALREADY)
		return cli_error("%s", err.msg);
	/* success on stdout, whether it changed something or not */
	out_obj_open(NULL);
	out_str("ifname", NULL, dev);
	out_bool("changed", NULL, ret != -EALREADY || renamed);
	if (ret == -EALREADY) {
		out_str("message", "%s\n", renamed ? msg : err.msg);
	} else {
		snprintf(msg, sizeof(msg),
			 "%s: attached (guest tx: %s, guest rx: tc egress); pinned in %s/%s%s%s%s",
			 dev,
			 ao.tx_hook == VNET_HOOK_XDP ? "xdp" : "tc ingress",
			 VNET_PIN_ROOT, dev, ao.vm && *ao.vm ? "; VM '" : "",
			 ao.vm ? ao.vm : "", ao.vm && *ao.vm ? "'" : "");
		out_str("message", "%s\n", msg);
	}
	out_obj_close();
	out_doc_end();
	if (!ret)
		tap_warn(dev);
	return 0;
}

/*
 * Who serves DEV with vnet's maps: a vnetd datapath (it holds tap queues
 * of DEV and reads the maps) or a vnetd --agent (its pid in the info
 * map, heartbeat recent).  Fills WHO; false when nobody does.
 */
static bool tap_served(const char *dev, char *who, size_t len)
{
	struct vnet_tap_users u;
	struct vnet_info info;
	int i;

	if (!vnet_tap_users(dev, &u) && u.vnetd) {
		for (i = 0; i < u.nr; i++) {
			if (strncmp(u.user[i].comm, "vnetd", 5))
				continue;
			snprintf(who, len, "vnetd (pid %d) serves it as its datapath",
				 (int)u.user[i].pid);
			return true;
		}
	}
	if (!vnet_info_read(dev, &info, NULL) && vnet_agent_alive(&info, NULL)) {
		snprintf(who, len, "vnetd --agent (pid %u) drives its coalescing",
			 info.agent_pid);
		return true;
	}
	return false;
}

int do_detach(int argc, char **argv)
{
	struct vnet_err err = {};
	bool force = false;
	char who[96];
	const char *dev;
	int opt;

	while ((opt = cli_getopt(argc, argv, detach_opts, "")) != -1) {
		if (opt != 'f')
			return cli_bad_option("detach", opt, argv);
		force = true;
	}
	if (argc - optind != 1)
		return cli_usage("detach", argc - optind < 1 ?
						   "missing device name" :
						   "too many arguments");
	dev = argv[optind];
	if (!force && tap_served(dev, who, sizeof(who)))
		return cli_error("%s: %s; detaching would pull the programs and maps from under it: stop it first, or 'vnetctl detach %s --force'",
				 dev, who, dev);
	if (vnet_detach(dev, &err))
		return cli_error("%s", err.msg);
	out_obj_open(NULL);
	out_str("ifname", "%s: ", dev);
	out_str("message", "%s\n", "detached; pins removed");
	out_obj_close();
	out_doc_end();
	return 0;
}
