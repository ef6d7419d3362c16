// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * vnetctl guard: spoofing protection on what the guest sends
 * (docs/limits.md).
 *
 *   guard show DEV
 *   guard set DEV [mac M] [ip LIST] [checks mac,ip,arp,nd,dhcp,ra]
 *   guard clear DEV
 *
 * 'set' replaces the whole entry.  Without 'checks': mac turns on the MAC
 * check, ip the IP, ARP and neighbour-advertisement checks, and the DHCP
 * and router-advertisement server checks are always on.
 */
#include <arpa/inet.h>
#include <stdlib.h>
#include <string.h>

#include "libvnet.h"
#include "base/out.h"
#include "base/util.h"
#include "guard.h"

static const struct {
	const char *name;
	__u32 flag;
} checks[] = {
	{ "mac", VNET_GUARD_MAC }, { "ip", VNET_GUARD_IP },
	{ "arp", VNET_GUARD_ARP }, { "nd", VNET_GUARD_ND },
	{ "dhcp", VNET_GUARD_DHCP }, { "ra", VNET_GUARD_RA },
};
#define NR_CHECKS (sizeof(checks) / sizeof(checks[0]))

static int checks_parse(const char *s, __u32 *flags)
{
	char *copy = strdup(s), *tok, *save;
	size_t i;
	int ret = 0;

	*flags = 0;
	for (tok = strtok_r(copy, ",", &save); tok && !ret;
	     tok = strtok_r(NULL, ",", &save)) {
		for (i = 0; i < NR_CHECKS && strcmp(tok, checks[i].name); i++)
			;
		if (i == NR_CHECKS)
			ret = cli_usage("guard", "unknown check '%s' (mac, ip, arp, nd, dhcp, ra)",
					tok);
		else
			*flags |= checks[i].flag;
	}
	free(copy);
	return ret;
}

static int guard_set(int argc, char **argv)
{
	struct vnet_guard g = {};
	struct vnet_err err = {};
	bool have_mac = false, have_ip = false, have_checks = false;
	__u32 flags = 0;
	int i, ret;

	if (argc < 3)
		return cli_usage("guard", "missing device name");
	if (argc == 3)
		return cli_usage("guard", "nothing to set: give mac M and/or ip LIST");
	for (i = 3; i < argc; i += 2) {
		if (i + 1 >= argc)
			return cli_usage("guard", "'%s' needs a value", argv[i]);
		if (!strcmp(argv[i], "mac")) {
			if (vnet_mac_parse(argv[i + 1], g.mac, &err))
				return cli_usage("guard", "%s", err.msg);
			have_mac = true;
		} else if (!strcmp(argv[i], "ip")) {
			if (vnet_guard_parse_addrs(argv[i + 1], &g, &err))
				return cli_usage("guard", "%s", err.msg);
			have_ip = true;
		} else if (!strcmp(argv[i], "checks")) {
			ret = checks_parse(argv[i + 1], &flags);
			if (ret)
				return ret;
			have_checks = true;
		} else {
			return cli_usage("guard", "unknown parameter '%s' (mac, ip, checks)",
					 argv[i]);
		}
	}
	if (!have_checks) {
		flags = VNET_GUARD_DHCP | VNET_GUARD_RA;
		if (have_mac)
			flags |= VNET_GUARD_MAC;
		if (have_ip)
			flags |= VNET_GUARD_IP | VNET_GUARD_ND |
				 (have_mac ? VNET_GUARD_ARP : 0);
	}
	g.flags = flags;
	if (vnet_guard_set(argv[2], &g, &err))
		return cli_usage("guard", "%s", err.msg);
	return 0;
}

static int guard_clear(int argc, char **argv)
{
	struct vnet_guard g = {};
	struct vnet_err err = {};

	if (argc != 3)
		return cli_usage("guard", argc < 3 ? "missing device name" :
						    "too many arguments");
	if (vnet_guard_set(argv[2], &g, &err))
		return cli_error("%s", err.msg);
	return 0;
}

static void print_addrs(const struct vnet_guard *g)
{
	char a[INET6_ADDRSTRLEN], s[INET6_ADDRSTRLEN + 8];
	int i;

	out_arr_open("ip");
	out_text("  ip:");
	for (i = 0; i < g->nr_v4 && i < VNET_GUARD_MAX_ADDRS; i++) {
		inet_ntop(AF_INET, &g->v4[i].addr, a, sizeof(a));
		snprintf(s, sizeof(s), "%s/%u", a, g->v4[i].prefix);
		out_str(NULL, " %s", s);
	}
	for (i = 0; i < g->nr_v6 && i < VNET_GUARD_MAX_ADDRS; i++) {
		inet_ntop(AF_INET6, g->v6[i].addr, a, sizeof(a));
		snprintf(s, sizeof(s), "%s/%u", a, g->v6[i].prefix);
		out_str(NULL, " %s", s);
	}
	if (!g->nr_v4 && !g->nr_v6)
		out_text(" none");
	out_text("\n");
	out_arr_close();
}

static int guard_show(int argc, char **argv)
{
	struct vnet_counter drops[VNET_GUARD_R_MAX];
	struct vnet_err err = {};
	struct vnet_guard g;
	char mac[18];
	size_t i;
	int r;

	if (argc != 3)
		return cli_usage("guard", argc < 3 ? "missing device name" :
						    "too many arguments");
	if (vnet_guard_get(argv[2], &g, drops, &err))
		return cli_error("%s", err.msg);
	snprintf(mac, sizeof(mac), "%02x:%02x:%02x:%02x:%02x:%02x", g.mac[0],
		 g.mac[1], g.mac[2], g.mac[3], g.mac[4], g.mac[5]);
	out_obj_open(NULL);
	out_str("device", "%s:", argv[2]);
	out_text(g.flags ? "\n" : " no checks\n");
	out_arr_open("checks");
	if (g.flags)
		out_text("  checks:");
	for (i = 0; i < NR_CHECKS; i++)
		if (g.flags & checks[i].flag)
			out_str(NULL, " %s", checks[i].name);
	if (g.flags)
		out_text("\n");
	out_arr_close();
	out_str("mac", g.flags ? "  mac: %s\n" : NULL, mac);
	if (g.flags)
		print_addrs(&g);
	else
		out_arr_open("ip"), out_arr_close();
	out_obj_open("dropped");
	out_text("  dropped:");
	for (r = 0; r < VNET_GUARD_R_MAX; r++)
		out_u64(vnet_guard_reason_name(r), " %llu", drops[r].packets);
	out_text(" (mac l2 ipv4 ipv6 arp nd dhcp ra)\n");
	out_obj_close();
	out_obj_close();
	out_doc_end();
	return 0;
}

int do_guard(int argc, char **argv)
{
	return cli_show_set_clear("guard", argc, argv, guard_show, guard_set,
				  guard_clear);
}
