// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* vnetctl status [DEV] */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "libvnet.h"
#include "base/out.h"
#include "base/util.h"
#include "status.h"

static void print_hook(const char *key, const char *label,
		       const struct vnet_hook_status *h, const char *mode)
{
	if (!h->prog_id) {
		out_null(key, NULL);
		return;
	}
	out_text("  %-12s", label);
	out_obj_open(key);
	out_u64("prog_id", "prog %llu", h->prog_id);
	if (h->link_id)
		out_u64("link_id", " link %llu", h->link_id);
	else
		out_null("link_id", " (clsact filter, no link)");
	if (mode)
		out_str("mode", " mode %s", mode);
	out_obj_close();
	out_text("\n");
}

/*
 * The tap's vnet_xmit_rx and how it runs: tail-called by the shared
 * dispatcher ("shared": no link of its own, the dispatcher's program and
 * link are named apart), on a link of its own ("per-tap", the fallback),
 * or "none": pinned but reached by neither (the dispatcher lost its entry;
 * detach and attach again).
 */
static void print_xmit(const struct vnet_status *st)
{
	const struct vnet_hook_status *h = &st->xmit;

	if (!h->prog_id) {
		out_null("xmit", NULL);
		return;
	}
	out_text("  %-12s", "tun xmit");
	out_obj_open("xmit");
	out_u64("prog_id", "prog %llu", h->prog_id);
	switch (st->xmit_attach) {
	case VNET_XMIT_SHARED:
		/* no link of its own: the dispatcher's outlives the tap */
		out_null("link_id", NULL);
		out_str("attach", " (%s", "shared");
		out_u64("dispatcher_prog_id", " dispatcher prog %llu",
			st->xmit_dispatcher_id);
		out_u64("dispatcher_link_id", " link %llu",
			st->xmit_dispatcher_link_id);
		out_u64("slot", " slot %llu)", st->xmit_slot);
		break;
	case VNET_XMIT_PER_TAP:
		out_u64("link_id", " link %llu", h->link_id);
		out_str("attach", " (%s: on the tracepoint itself, not through the shared dispatcher)",
			"per-tap");
		break;
	default:
		out_null("link_id", NULL);
		out_str("attach", " (%s: not reached by the tracepoint; detach and attach again)",
			"none");
	}
	out_obj_close();
	out_text("\n");
}

static void print_queues(const char *key, const __u64 *bits)
{
	int q, n = 0;

	out_arr_open(key);
	for (q = 0; q < VNET_MAX_QUEUES; q++) {
		if (!(bits[q / 64] & (1ull << (q % 64))))
			continue;
		out_u64(NULL, n++ ? ",%llu" : " %llu", q);
	}
	out_arr_close();
	if (!n)
		out_text(" none");
}

/*
 * The device's network namespace, recorded at attach: its name in
 * /var/run/netns, or its inode when it has none (the host's, usually).
 */
static void print_netns(const struct vnet_status *st)
{
	char name[NAME_MAX + 1];
	__u64 ino = st->info.netns_ino;

	out_text("  netns       ");
	if (!ino) {
		out_null("netns", "? (attached by an older vnet)\n");
		out_null("netns_ino", NULL);
		return;
	}
	if (!vnet_netns_name(ino, name, sizeof(name)))
		out_str("netns", "%s", name);
	else
		out_null("netns", "no name in /var/run/netns (the host's, or an unnamed one)");
	out_u64("netns_ino", " (inode %llu)\n", ino);
}

/*
 * The VM the device belongs to (vnetctl attach --vm, vnetd's vm= key, the
 * libvirt hook): as stored in JSON; in text a backslash, and control
 * characters, escaped as C writes them, so that a name is one line.
 */
static void print_vm(const char *ifname)
{
	char vm[VNET_VM_NAME_MAX + 1], text[4 * VNET_VM_NAME_MAX + 1];
	size_t o = 0;

	if (vnet_vm_get(ifname, vm, NULL) || !vm[0]) {
		out_null("vm", NULL);
		return;
	}
	for (const unsigned char *c = (const unsigned char *)vm; *c; c++) {
		if (*c == '\\' || *c == '\n' || *c == '\t')
			o += (size_t)sprintf(text + o, "\\%c",
					     *c == '\n' ? 'n' :
					     *c == '\t' ? 't' :
							  '\\');
		else if (*c < 0x20 || *c == 0x7f)
			o += (size_t)sprintf(text + o, "\\x%02x", *c);
		else
			text[o++] = (char)*c;
	}
	text[o] = '\0';
	out_str("vm", NULL, vm);
	out_text("  vm          %s\n", text);
}

/*
 * Both programs on the present tap: a clsact filter can be taken off
 * behind vnet's back (`tc qdisc del dev TAP clsact`)
 */
static void print_complete(const struct vnet_status *st)
{
	const struct vnet_hook_status *tx =
		st->info.tx_hook == VNET_HOOK_XDP ? &st->xdp : &st->tc_ingress;
	bool whole = !st->present || (tx->prog_id && st->tc_egress.prog_id);

	out_bool("hooks_complete", NULL, whole);
	if (!whole)
		out_text("  HOOKS       INCOMPLETE: %s off the tap; 'vnetctl detach %s' and 'vnetctl attach %s' put them back\n",
			 tx->prog_id           ? "the tc egress program is" :
			 st->tc_egress.prog_id ? "the guest-TX program is" :
						 "both programs are",
			 st->ifname, st->ifname);
}

static void print_status(const struct vnet_status *st)
{
	char dir[PATH_MAX];

	vnet_pin_path(dir, sizeof(dir), st->ifname, NULL);
	out_obj_open(NULL);
	out_str("ifname", "%s:", st->ifname);
	out_u64("ifindex", " ifindex %llu", st->info.ifindex);
	out_bool("present", NULL, st->present);
	out_text(st->present ? ", present\n" :
			       ", GONE (device removed; run 'vnetctl gc' or 'vnetctl detach %s')\n",
		 st->ifname);
	print_netns(st);
	out_str("pin_dir", "  pins        %s\n", dir);
	if (st->info.vnetd_socket[0])
		out_str("vnetd_socket", "  vnetd port  %s\n",
			st->info.vnetd_socket);
	else
		out_null("vnetd_socket", NULL);
	print_vm(st->ifname);
	out_str("tx_hook", "  tx hook     %s\n",
		st->info.tx_hook == VNET_HOOK_TC ? "tc" : "xdp");
	print_hook("xdp", "xdp", &st->xdp,
		   st->xdp.prog_id ? vnet_xdp_mode_name(st->xdp_mode) : NULL);
	print_hook("tc_ingress", "tc ingress", &st->tc_ingress, NULL);
	print_hook("tc_egress", "tc egress", &st->tc_egress, NULL);
	print_complete(st);
	print_xmit(st);
	out_str("rx_queue_source", "  rx queues   %s\n",
		st->info.rx_queue_src == VNET_RXQ_XMIT ?
			"net_dev_start_xmit (the queue tun picked)" :
			"tc egress queue_mapping (before tun picks a queue)");
	out_text("  queues seen");
	out_obj_open("queues_seen");
	out_text(" tx:");
	print_queues("tx", st->seen[VNET_DIR_TX]);
	out_text("  rx:");
	print_queues("rx", st->seen[VNET_DIR_RX]);
	out_obj_close();
	out_text("\n");
	out_obj_close();
}

int do_status(int argc, char **argv)
{
	static char names[1024][IF_NAMESIZE];
	struct vnet_err err = {};
	struct vnet_status st;
	int n, i, ret = 0;

	if (argc > 2)
		return cli_usage("status", "too many arguments");
	if (argc == 2 && argv[1][0] == '-')
		return cli_usage("status", "unknown option '%s'", argv[1]);
	if (argc == 2) {
		if (vnet_status(argv[1], &st, &err) ||
		    vnet_pins_check(argv[1], &err))
			return cli_error("%s", err.msg);
		out_arr_open(NULL);
		print_status(&st);
		out_arr_close();
		out_doc_end();
		return 0;
	}
	n = vnet_list(names, 1024);
	if (n < 0)
		return cli_error("cannot read %s: %s%s", VNET_PIN_ROOT,
				 strerror(-n),
				 n == -EACCES || n == -EPERM ?
					 " (vnetctl needs root)" : "");
	out_arr_open(NULL);
	for (i = 0; i < n; i++) {
		if (vnet_status(names[i], &st, &err)) {
			ret = cli_error("%s", err.msg);
			continue;
		}
		print_status(&st);
	}
	out_arr_close();
	if (!n)
		out_text("vnet is not attached to any device\n");
	out_doc_end();
	return ret;
}
