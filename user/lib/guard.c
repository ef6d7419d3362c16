// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * Spoofing protection's configuration (the guard map, struct vnet_guard):
 * the guest NIC's MAC and its addresses, parsed and checked once here for
 * vnetctl and vnetd alike.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "libvnet.h"

int vnet_mac_parse(const char *s, __u8 mac[6], struct vnet_err *err)
{
	unsigned int b[6];
	char end;
	int i;

	if (sscanf(s, "%2x:%2x:%2x:%2x:%2x:%2x%c", &b[0], &b[1], &b[2], &b[3],
		   &b[4], &b[5], &end) != 6) {
		vnet_err_set(err, "mac '%s': not a MAC address (six hex bytes: 52:54:00:12:34:56)",
			     s);
		return -EINVAL;
	}
	for (i = 0; i < 6; i++)
		mac[i] = (__u8)b[i];
	if (mac[0] & 1) {
		vnet_err_set(err, "mac '%s': a multicast address cannot be a NIC's",
			     s);
		return -EINVAL;
	}
	return 0;
}

/* one "ADDR[/PREFIX]" into G's lists */
static int addr_add(struct vnet_guard *g, char *a, struct vnet_err *err)
{
	char *slash = strchr(a, '/'), *end;
	bool v6 = strchr(a, ':') != NULL;
	unsigned long p = v6 ? 128 : 32;
	__u8 buf[16];

	if (slash) {
		*slash = '\0';
		p = strtoul(slash + 1, &end, 10);
		if (!slash[1] || *end || p > (v6 ? 128u : 32u)) {
			vnet_err_set(err, "address '%s/%s': the prefix length is 0-%d for %s",
				     a, slash + 1, v6 ? 128 : 32,
				     v6 ? "IPv6" : "IPv4");
			return -EINVAL;
		}
	}
	if (inet_pton(v6 ? AF_INET6 : AF_INET, a, buf) != 1) {
		vnet_err_set(err, "address '%s': not an %s address", a,
			     v6 ? "IPv6" : "IPv4");
		return -EINVAL;
	}
	if ((v6 ? g->nr_v6 : g->nr_v4) >= VNET_GUARD_MAX_ADDRS) {
		vnet_err_set(err, "more than %d %s addresses (give a prefix that covers them)",
			     VNET_GUARD_MAX_ADDRS, v6 ? "IPv6" : "IPv4");
		return -E2BIG;
	}
	if (v6) {
		memcpy(g->v6[g->nr_v6].addr, buf, 16);
		g->v6[g->nr_v6++].prefix = (__u32)p;
	} else {
		memcpy(&g->v4[g->nr_v4].addr, buf, 4);
		g->v4[g->nr_v4++].prefix = (__u32)p;
	}
	return 0;
}

int vnet_guard_parse_addrs(const char *list, struct vnet_guard *g,
			   struct vnet_err *err)
{
	char *copy, *tok, *save;
	int ret = 0;

	copy = strdup(list);
	if (!copy)
		return -ENOMEM;
	if (!*copy || !strcmp(copy, "none"))
		goto out;
	for (tok = strtok_r(copy, ",+", &save); tok && !ret;
	     tok = strtok_r(NULL, ",+", &save))
		ret = addr_add(g, tok, err);
out:
	free(copy);
	return ret;
}

int vnet_guard_get(const char *ifname, struct vnet_guard *g,
		   struct vnet_counter drops[VNET_GUARD_R_MAX],
		   struct vnet_err *err)
{
	struct vnet_map m = VNET_MAP_INIT;
	int ncpu = libbpf_num_possible_cpus(), ret, c;
	struct vnet_counter *per;
	__u32 k = 0;

	ret = vnet_map_get(ifname, VNET_MAP_GUARD, 0, &m, err);
	if (ret)
		return ret;
	ret = bpf_map_lookup_elem(m.fd, &k, g) ? -errno : 0;
	vnet_map_put(&m);
	if (ret || !drops)
		goto out;
	memset(drops, 0, sizeof(*drops) * VNET_GUARD_R_MAX);
	ret = vnet_map_get(ifname, VNET_MAP_GUARD_STATS, 0, &m, err);
	if (ret)
		return ret;
	per = calloc((size_t)(ncpu > 0 ? ncpu : 1), sizeof(*per));
	for (k = 0; per && k < VNET_GUARD_R_MAX; k++) {
		if (bpf_map_lookup_elem(m.fd, &k, per))
			continue;
		for (c = 0; c < ncpu; c++) {
			drops[k].packets += per[c].packets;
			drops[k].bytes += per[c].bytes;
		}
	}
	free(per);
	vnet_map_put(&m);
out:
	if (ret)
		vnet_err_set(err, "%s: the guard map: %s", ifname,
			     strerror(-ret));
	return ret;
}

int vnet_guard_write(int fd, const struct vnet_guard *g,
		     struct vnet_err *err)
{
	struct vnet_guard old, c = *g;
	__u32 k = 0;

	if ((c.flags & (VNET_GUARD_MAC | VNET_GUARD_ARP)) &&
	    !(c.mac[0] | c.mac[1] | c.mac[2] | c.mac[3] | c.mac[4] | c.mac[5])) {
		vnet_err_set(err, "the MAC and ARP checks need the guest NIC's MAC: give mac M");
		return -EINVAL;
	}
	if (!bpf_map_lookup_elem(fd, &k, &old))
		c.gen = old.gen + 2;
	/* one update: the programs see the old entry or the new one */
	if (bpf_map_update_elem(fd, &k, &c, BPF_ANY)) {
		vnet_err_set(err, "the guard map: %s", strerror(errno));
		return -errno;
	}
	return 0;
}

int vnet_guard_set(const char *ifname, const struct vnet_guard *g,
		   struct vnet_err *err)
{
	struct vnet_map m = VNET_MAP_INIT;
	int ret;

	ret = vnet_map_get(ifname, VNET_MAP_GUARD, 0, &m, err);
	if (ret)
		return ret;
	ret = vnet_guard_write(m.fd, g, err);
	vnet_map_put(&m);
	return ret;
}

static const char *const reason_names[VNET_GUARD_R_MAX] = {
	[VNET_GUARD_R_MAC] = "mac",   [VNET_GUARD_R_L2] = "l2",
	[VNET_GUARD_R_IPV4] = "ipv4", [VNET_GUARD_R_IPV6] = "ipv6",
	[VNET_GUARD_R_ARP] = "arp",   [VNET_GUARD_R_ND] = "nd",
	[VNET_GUARD_R_DHCP] = "dhcp", [VNET_GUARD_R_RA] = "ra",
};

const char *vnet_guard_reason_name(int r)
{
	return r >= 0 && r < VNET_GUARD_R_MAX ? reason_names[r] : NULL;
}
