// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * The ports of vnetd's command line: the keys a port takes (the same in a
 * --port spec, a --config line and --socket/--tap/...), one table of
 * them, and the parsers of --port and --config.  Every error is a usage
 * error that names where it is (option, or file and line) and the fix.
 */
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "portcfg.h"
#include "base/util.h"
#include "libvnet.h"

#define EXIT_USAGE VNETD_EXIT_USAGE
#define MAX_PORTS VNETD_MAX_PORTS

int vnetd_usage_error(const char *fmt, ...)
{
	va_list ap;

	fputs("vnetd: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputs("\nTry 'vnetd --help'.\n", stderr);
	return EXIT_USAGE;
}

bool vnetd_parse_uint(const char *s, unsigned long min, unsigned long max,
		       unsigned long *v)
{
	char *end;

	if (!s || !*s || *s == '-' || *s == '+')
		return false;
	errno = 0;
	*v = strtoul(s, &end, 10);
	return !errno && !*end && *v >= min && *v <= max;
}

/* the CPUs of SET as a list: "0-1", "0,2-3" */
static void cpuset_str(const cpu_set_t *set, char *buf, size_t len)
{
	size_t off = 0;
	int i, start = -1;

	buf[0] = '\0';
	for (i = 0; i <= CPU_SETSIZE && off < len; i++) {
		bool in = i < CPU_SETSIZE && CPU_ISSET(i, set);

		if (in && start < 0)
			start = i;
		if (in || start < 0)
			continue;
		off += (size_t)snprintf(buf + off, len - off, "%s%d", off ? "," : "",
					start);
		if (i - 1 > start && off < len)
			off += (size_t)snprintf(buf + off, len - off, "-%d", i - 1);
		start = -1;
	}
}

/*
 * "0,1", "0-3", "0:2:4": CPU numbers, in order, each one this process may
 * run on (sched_getaffinity), at most as many as C holds.  False with WHY
 * filled: not a list, a CPU that is not there (naming the ones that are),
 * or too many.
 */
bool vnetd_parse_cpus(const char *s, struct vnetd_port_cfg *c, char *why,
		      size_t len)
{
	const unsigned int max = sizeof(c->cpus) / sizeof(c->cpus[0]);
	char buf[256], have[256], *tok, *save, *dash;
	unsigned long a, b, i, n = 0;
	bool known;
	cpu_set_t set;

	snprintf(why, len, "is not a CPU list (e.g. 0,1 or 0-3)");
	if (!*s || strlen(s) >= sizeof(buf))
		return false;
	known = !sched_getaffinity(0, sizeof(set), &set);
	snprintf(buf, sizeof(buf), "%s", s);
	c->ncpus = 0;
	for (tok = strtok_r(buf, ",:", &save); tok;
	     tok = strtok_r(NULL, ",:", &save)) {
		dash = strchr(tok, '-');
		if (dash)
			*dash = '\0';
		if (!vnetd_parse_uint(tok, 0, CPU_SETSIZE - 1, &a))
			return false;
		b = a;
		if (dash && !vnetd_parse_uint(dash + 1, a, CPU_SETSIZE - 1, &b))
			return false;
		for (i = a; i <= b; i++, n++) {
			if (known && !CPU_ISSET(i, &set)) {
				cpuset_str(&set, have, sizeof(have));
				snprintf(why, len, "CPU %lu does not exist or is not available to vnetd (it may run on CPU%s %s)",
					 i, CPU_COUNT(&set) == 1 ? "" : "s", have);
				return false;
			}
			if (n < max)
				c->cpus[c->ncpus++] = (int)i;
		}
	}
	if (n > max) {
		snprintf(why, len, "lists %lu CPUs: at most %u (queue pair i runs on the i-th)",
			 n, max);
		return false;
	}
	return c->ncpus > 0;
}

/* S can be the name of a network device (the kernel's dev_valid_name()) */
bool vnetd_tap_name_ok(const char *s)
{
	return !vnet_ifname_invalid(s);
}

/* Which keys a port got, for the defaults and the required ones. */
enum port_key {
	KEY_SOCKET = 1 << 0,
	KEY_TAP = 1 << 1,
	KEY_NETNS = 1 << 2,
	KEY_CPUS = 1 << 3,
};

static int key_socket(struct vnetd_port_cfg *c, const char *val,
		      const char *where)
{
	if (!*val || strlen(val) >= sizeof(c->socket))
		return vnetd_usage_error("%s: socket path '%s' is empty or longer than %zu bytes",
				   where, val, sizeof(c->socket) - 1);
	snprintf(c->socket, sizeof(c->socket), "%s", val);
	return 0;
}

static int key_tap(struct vnetd_port_cfg *c, const char *val,
		   const char *where)
{
	if (vnet_ifname_invalid(val))
		return vnetd_usage_error("%s: '%s' is not a valid interface name: %s",
					 where, val, vnet_ifname_invalid(val));
	snprintf(c->tap, sizeof(c->tap), "%s", val);
	return 0;
}

static int key_queues(struct vnetd_port_cfg *c, const char *val,
		      const char *where)
{
	unsigned long v;

	if (!vnetd_parse_uint(val, 1, VNETD_MAX_QP, &v))
		return vnetd_usage_error("%s: queues '%s' is not a number from 1 to %d",
				   where, val, VNETD_MAX_QP);
	c->queues = (unsigned int)v;
	return 0;
}

static int key_netns(struct vnetd_port_cfg *c, const char *val,
		     const char *where)
{
	if (!*val || strlen(val) >= sizeof(c->netns))
		return vnetd_usage_error("%s: bad netns '%s'", where, val);
	snprintf(c->netns, sizeof(c->netns), "%s", val);
	return 0;
}

static int key_cpus(struct vnetd_port_cfg *c, const char *val,
		    const char *where)
{
	char why[512];

	if (!vnetd_parse_cpus(val, c, why, sizeof(why)))
		return vnetd_usage_error("%s: cpus '%s'%s%s", where, val,
					 strncmp(why, "is ", 3) ? ": " : " ", why);
	return 0;
}

/*
 * The rate limit keys, KEY: DIR-rate, DIR-burst, DIR-initial (bytes, tc's
 * words) and DIR-pkts-rate, DIR-pkts-burst, DIR-pkts-initial (frames)
 */
static int key_limit(struct vnetd_port_cfg *c, const char *key,
		     const char *val, const char *where)
{
	struct vnet_err err = {};
	int dir = key[0] == 't' ? VNET_DIR_TX : VNET_DIR_RX;
	int ret;

	/* "tx-pkts-rate": the word after the direction */
	ret = vnet_limit_word(&c->limit[dir], key + 3, val, &err);
	if (ret)
		return vnetd_usage_error("%s: %s: %s", where, key, err.msg);
	c->limit_set[dir] = true;
	return 0;
}


/*
 * Spoofing protection: mac=M (the MAC check and, with ip=, ARP's), ip=LIST
 * (addresses separated by '+': commas separate --port's keys); the DHCP
 * and router advertisement checks with either, as vnetctl guard set
 */
static int key_mac(struct vnetd_port_cfg *c, const char *val,
		   const char *where)
{
	struct vnet_err err = {};

	if (vnet_mac_parse(val, c->guard.mac, &err))
		return vnetd_usage_error("%s: %s", where, err.msg);
	c->guard.flags |= VNET_GUARD_MAC | VNET_GUARD_DHCP | VNET_GUARD_RA;
	c->guard_set = true;
	return 0;
}

static int key_ip(struct vnetd_port_cfg *c, const char *val,
		  const char *where)
{
	struct vnet_err err = {};

	c->guard.nr_v4 = c->guard.nr_v6 = 0;
	if (vnet_guard_parse_addrs(val, &c->guard, &err))
		return vnetd_usage_error("%s: ip=%s: %s", where, val, err.msg);
	c->guard.flags |= VNET_GUARD_IP | VNET_GUARD_ND | VNET_GUARD_DHCP |
			  VNET_GUARD_RA;
	c->guard_set = true;
	return 0;
}

/*
 * vm=NAME: the VM's name (the exporter's vm label).  A name may hold any
 * character, but a --port value has no comma and a config line's no blank
 * or '#': %XX (two hex digits) is the byte XX, '%' itself is %25.
 */
static int key_vm(struct vnetd_port_cfg *c, const char *val, const char *where)
{
	char name[2048]; /* a config line's: the longest value */
	struct vnet_err err = {};
	size_t o = 0;
	char hex[3] = "";

	for (const char *v = val; *v; v++) {
		if (o == sizeof(name) - 1)
			break;
		if (*v != '%') {
			name[o++] = *v;
			continue;
		}
		if (isxdigit((unsigned char)v[1]) &&
		    isxdigit((unsigned char)v[2]))
			memcpy(hex, v + 1, 2);
		if (!hex[0] || !strcmp(hex, "00"))
			return vnetd_usage_error("%s: vm=%s: '%%' starts %%XX, a byte in two hex digits other than 00 (%%2C a comma, %%20 a blank, %%23 '#'); write %%25 for '%%' itself",
						 where, val);
		name[o++] = (char)strtol(hex, NULL, 16);
		hex[0] = '\0';
		v += 2;
	}
	name[o] = '\0';
	/* longer than c->vm: vnet_vm_check() says so */
	if (vnet_vm_check(name, &err))
		return vnetd_usage_error("%s: vm=%s: %s", where, val, err.msg);
	memcpy(c->vm, name, o + 1);
	c->vm_set = true;
	return 0;
}

static const struct {
	const char *name;
	int (*set)(struct vnetd_port_cfg *c, const char *val,
		   const char *where);
	enum port_key key;	/* 0: no default depends on it */
	/* set NULL: a rate limit key, key_limit() with the key's name */
} port_keys[] = {
	{ "socket", key_socket, KEY_SOCKET },
	{ "tap", key_tap, KEY_TAP },
	{ "queues", key_queues, 0 },
	{ "netns", key_netns, KEY_NETNS },
	{ "cpus", key_cpus, KEY_CPUS },
	{ "tx-rate", NULL, 0 },
	{ "tx-burst", NULL, 0 },
	{ "tx-initial", NULL, 0 },
	{ "tx-pkts-rate", NULL, 0 },
	{ "tx-pkts-burst", NULL, 0 },
	{ "tx-pkts-initial", NULL, 0 },
	{ "rx-rate", NULL, 0 },
	{ "rx-burst", NULL, 0 },
	{ "rx-initial", NULL, 0 },
	{ "rx-pkts-rate", NULL, 0 },
	{ "rx-pkts-burst", NULL, 0 },
	{ "rx-pkts-initial", NULL, 0 },
	{ "mac", key_mac, 0 },
	{ "ip", key_ip, 0 },
	{ "vm", key_vm, 0 },
};

/*
 * One "key=value" (or "client") of a --port spec or a config line into C;
 * *GOT collects enum port_key bits.  WHERE names the origin for messages.
 * 0 or EXIT_USAGE (message printed).
 */
int vnetd_port_kv(struct vnetd_port_cfg *c, char *tok, const char *where,
		   unsigned int *got)
{
	char *val = strchr(tok, '=');
	unsigned int i;
	int ret;

	if (val)
		*val++ = '\0';
	if (!strcmp(tok, "client")) {
		if (val && strcmp(val, "1") && strcmp(val, "0") &&
		    strcmp(val, "on") && strcmp(val, "off"))
			return vnetd_usage_error("%s: client takes no value (or 0/1)",
					   where);
		c->client = !val || !strcmp(val, "1") || !strcmp(val, "on");
		return 0;
	}
	if (!val)
		return vnetd_usage_error("%s: '%s' is not KEY=VALUE", where, tok);
	if (val[0] == '"' || val[0] == '\'')
		return vnetd_usage_error("%s: %s=%s: values are taken as written, quotes included: write %s=VALUE without quotes (a value has no blanks)",
					 where, tok, val, tok);
	for (i = 0; i < sizeof(port_keys) / sizeof(port_keys[0]); i++) {
		if (strcmp(tok, port_keys[i].name))
			continue;
		ret = port_keys[i].set ? port_keys[i].set(c, val, where) :
					 key_limit(c, tok, val, where);
		if (!ret)
			*got |= port_keys[i].key;
		return ret;
	}
	return vnetd_usage_error("%s: unknown key '%s' (socket, tap, queues, client, netns, cpus; rate limits: tx-rate, tx-burst, tx-initial, tx-pkts-rate, tx-pkts-burst, tx-pkts-initial and the same with rx-; spoofing protection: mac, ip; the VM's name: vm)",
				 where, tok);
}

/* TOK holds ",KEY=" or ",client" of a port key after its first one */
static bool comma_keys(const char *tok)
{
	const char *c;
	unsigned int i;
	size_t n;

	for (c = strchr(tok, ','); c; c = strchr(c + 1, ',')) {
		if (!strncmp(c + 1, "client", 6) &&
		    (!c[7] || c[7] == ',' || c[7] == '='))
			return true;
		for (i = 0; i < sizeof(port_keys) / sizeof(port_keys[0]); i++) {
			n = strlen(port_keys[i].name);
			if (!strncmp(c + 1, port_keys[i].name, n) && c[1 + n] == '=')
				return true;
		}
	}
	return false;
}

int vnetd_port_add(struct vnetd_opts *o, const struct vnetd_port_cfg *c,
		    const char *where)
{
	if (o->nports == MAX_PORTS)
		return vnetd_usage_error("%s: more than %d ports: %s", where,
					 MAX_PORTS, VNETD_MAX_PORTS_FIX);
	o->ports[o->nports] = *c;
	snprintf(o->origin[o->nports], sizeof(o->origin[0]), "%s", where);
	o->nports++;
	return 0;
}

/* The tokens of one port (already split); fills defaults, checks. */
static int port_finish(struct vnetd_opts *o, struct vnetd_port_cfg *c,
		       unsigned int got, const char *where)
{
	if (!(got & KEY_SOCKET))
		return vnetd_usage_error("%s: socket=PATH missing", where);
	if (!(got & KEY_TAP))
		return vnetd_usage_error("%s: tap=NAME missing", where);
	if (!c->queues)
		c->queues = 1;
	/* ARP's sender must be the NIC's: with both keys */
	if ((c->guard.flags & VNET_GUARD_MAC) && (c->guard.flags & VNET_GUARD_IP))
		c->guard.flags |= VNET_GUARD_ARP;
	for (int d = 0; d < VNET_DIR_MAX; d++) {
		struct vnet_err err = {};

		if (c->limit_set[d] &&
		    vnet_limit_check(&c->limit[d], d == VNET_DIR_TX ? "tx" : "rx",
				     &err))
			return vnetd_usage_error("%s: %s", where, err.msg);
	}
	if (!(got & KEY_NETNS) && o->have_netns)
		snprintf(c->netns, sizeof(c->netns), "%s", o->main.netns);
	if (!(got & KEY_CPUS) && o->have_cpus) {
		memcpy(c->cpus, o->main.cpus, sizeof(c->cpus));
		c->ncpus = o->main.ncpus;
	}
	return vnetd_port_add(o, c, where);
}

int vnetd_parse_port_spec(struct vnetd_opts *o, const char *spec)
{
	struct vnetd_port_cfg c = {};
	char buf[1024], *tok, *save;
	unsigned int got = 0;
	int ret;

	if (strlen(spec) >= sizeof(buf))
		return vnetd_usage_error("--port: spec too long");
	snprintf(buf, sizeof(buf), "%s", spec);
	for (tok = strtok_r(buf, ",", &save); tok;
	     tok = strtok_r(NULL, ",", &save)) {
		ret = vnetd_port_kv(&c, tok, "--port", &got);
		if (ret)
			return ret;
	}
	return port_finish(o, &c, got, "--port");
}

int vnetd_parse_config(struct vnetd_opts *o, const char *path)
{
	char line[2048], where[PATH_MAX + 32], *tok, *save, *hash;
	unsigned int lineno = 0, got, before = o->nports;
	struct vnetd_port_cfg c;
	FILE *f;
	int ret = 0;

	f = fopen(path, "r");
	if (!f)
		return vnetd_usage_error("--config %s: %s", path, strerror(errno));
	while (fgets(line, sizeof(line), f)) {
		lineno++;
		snprintf(where, sizeof(where), "%s:%u", path, lineno);
		if (!strchr(line, '\n') && !feof(f)) {
			ret = vnetd_usage_error("%s: line too long", where);
			goto out;
		}
		hash = strchr(line, '#');
		if (hash)
			*hash = '\0';
		memset(&c, 0, sizeof(c));
		got = 0;
		for (tok = strtok_r(line, " \t\r\n", &save); tok;
		     tok = strtok_r(NULL, " \t\r\n", &save)) {
			if (comma_keys(tok)) {
				ret = vnetd_usage_error("%s: '%s': a config line separates its keys with blanks, not commas (commas are --port's): socket=PATH tap=NAME ...",
							where, tok);
				goto out;
			}
			ret = vnetd_port_kv(&c, tok, where, &got);
			if (ret)
				goto out;
		}
		if (!got && !c.client && !c.queues)
			continue; /* blank or comment */
		ret = port_finish(o, &c, got, where);
		if (ret)
			goto out;
	}
	if (ferror(f))
		ret = vnetd_usage_error("--config %s: %s", path, strerror(errno));
	else if (o->nports == before)
		ret = vnetd_usage_error("--config %s: no port defined", path);
out:
	fclose(f);
	return ret;
}

/*
 * The ports of O's options: --socket and --tap, each --port, each
 * --config's.  0, or the exit status of a usage error.
 */
int vnetd_ports_collect(struct vnetd_opts *o)
{
	unsigned int i;
	int ret;

	if (o->have_socket || o->have_tap) {
		if (!o->have_socket)
			return vnetd_usage_error("--tap needs --socket");
		if (!o->have_tap)
			return vnetd_usage_error("--socket needs --tap");
		if (!o->main.queues)
			o->main.queues = 1;
		ret = vnetd_port_add(o, &o->main, "--socket");
		if (ret)
			return ret;
	} else if (o->have_queues || o->have_client) {
		return vnetd_usage_error("--queues and --client go with --socket/--tap (use queues=N, client in --port or --config)");
	}
	for (i = 0; i < o->nspecs; i++) {
		ret = vnetd_parse_port_spec(o, o->specs[i]);
		if (ret)
			return ret;
	}
	for (i = 0; i < o->nconfigs; i++) {
		ret = vnetd_parse_config(o, o->configs[i]);
		if (ret)
			return ret;
	}
	if (!o->nports)
		return vnetd_usage_error("no port: give --socket and --tap, --port or --config");
	return 0;
}

/* Every port is known: no socket or tap is used twice. */
int vnetd_ports_check(const struct vnetd_opts *o)
{
	unsigned int i, j;

	for (i = 0; i < o->nports; i++) {
		for (j = 0; j < i; j++) {
			if (!strcmp(o->ports[i].socket, o->ports[j].socket))
				return vnetd_usage_error("%s: socket %s is also used by %s",
						   o->origin[i], o->ports[i].socket,
						   o->origin[j]);
			/* pins are named by device: one port per tap name */
			if (!strcmp(o->ports[i].tap, o->ports[j].tap))
				return vnetd_usage_error("%s: tap %s is also used by %s",
						   o->origin[i], o->ports[i].tap,
						   o->origin[j]);
		}
	}
	return 0;
}
