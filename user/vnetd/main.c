// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * vnetd: vnet's vhost-user-net backend over a multi-queue tap
 * (docs/vnetd-contract.md, man vnetd(8)).
 *
 * This file: the command line and --config, logging, signals, and the
 * control loop: one epoll over the vhost-user server (all protocol work and
 * every vhost_dev_ops callback), a signalfd (SIGINT/SIGTERM/SIGHUP: clean
 * exit; systemd hears READY=1 and STOPPING=1 through notify.c)
 * and each port's ethtool monitor (a direct `ethtool -C TAP rx-frames N`
 * is mirrored into the config map's tap_rx_frames, vnetd's TX batch).
 * With --agent TAP, vnetd serves no port: agent.c drives attached taps'
 * rx-frames instead (attach mode).
 *
 * Exit status: 0 after a signal, 1 when a port cannot be set up (the
 * message names the cause), 2 on usage errors.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <grp.h>
#include <sched.h>
#include <limits.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/epoll.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <sys/timerfd.h>
#include <net/if.h>
#include <linux/if_tun.h>
#include <linux/virtio_net.h>
#include <bpf/libbpf.h>

#include "vnetd.h"
#include "agent.h"

#define EXIT_STARTUP 1
#define EXIT_USAGE 2
#define MAX_PORTS 64

static const char usage_text[] =
	"Usage: vnetd --socket PATH --tap NAME [--queues N] [--client]\n"
	"             [--netns NAME] [--cpus LIST] [OPTIONS]\n"
	"       vnetd --config FILE [OPTIONS]\n"
	"       vnetd --port socket=PATH,tap=NAME[,queues=N][,client] [--port ...] [OPTIONS]\n"
	"       vnetd --agent TAP [--agent TAP ...] [--netns NAME] [AGENT OPTIONS]\n"
	"\n"
	"vhost-user-net backend over a multi-queue tap, with vnet's BPF\n"
	"classifier deciding when the guest is signalled.\n"
	"\n"
	"Port:\n"
	"  -s, --socket PATH     vhost-user unix socket (listened on, or with\n"
	"                        --client connected to)\n"
	"  -t, --tap NAME        tap device: attached to, or created (and gone\n"
	"                        when vnetd exits)\n"
	"  -q, --queues N        queue pairs, 1-16 (default 1)\n"
	"  -c, --client          connect to a listening frontend (QEMU\n"
	"                        server=on) and reconnect when it goes away\n"
	"  -n, --netns NAME      the tap lives in network namespace NAME\n"
	"                        (/var/run/netns/NAME); default for every port\n"
	"      --cpus LIST       pin queue pair i to the i-th CPU of LIST\n"
	"                        (e.g. 0,1 or 0-3); default for every port\n"
	"  -p, --port SPEC       a port: socket=PATH,tap=NAME[,queues=N]\n"
	"                        [,client][,netns=NAME][,cpus=LIST] (CPUs\n"
	"                        separated by ':' here); repeatable\n"
	"  -f, --config FILE     ports, one per line: socket=PATH tap=NAME\n"
	"                        [queues=N] [client] [netns=NAME] [cpus=LIST];\n"
	"                        '#' starts a comment\n"
	"\n"
	"Agent (attach mode: kernel vhost-net drives taps that 'vnetctl attach'\n"
	"attached; no vhost-user socket):\n"
	"  -a, --agent TAP       push the BPF policy's adaptive-tx recommendation\n"
	"                        to TAP's own rx-frames (ethtool -C TAP\n"
	"                        rx-frames N) with hysteresis; repeatable;\n"
	"                        --netns NAME: the taps live there\n"
	"      --agent-interval MS\n"
	"                        sample every MS ms (10-10000, default 100)\n"
	"      --agent-max-rate N\n"
	"                        at most N changes per second per tap (1-100,\n"
	"                        default 2)\n"
	"      --agent-hold N    change only after N consecutive samples asked\n"
	"                        for a step of 25 % and 2 frames (1-1000,\n"
	"                        default 3)\n"
	"\n"
	"Options:\n"
	"      --socket-group GROUP\n"
	"                        create the sockets with group GROUP (a name\n"
	"                        or a number; default: vnetd's own, root)\n"
	"      --socket-mode MODE\n"
	"                        their mode, octal (default 0600; 0660 with\n"
	"                        --socket-group lets that group's QEMU connect)\n"
	"      --no-uring        plain read/writev instead of io_uring\n"
	"      --packed          offer packed virtqueues (VIRTIO_F_RING_PACKED)\n"
	"      --busy-poll USECS when a guest's TX ring runs dry, watch it for\n"
	"                        USECS (0-1000, default 0: off) before asking\n"
	"                        for a kick and sleeping; costs CPU, saves the\n"
	"                        guest's kicks and vnetd's wakeups\n"
	"  -v, --verbose         debug logging (same as --log-level debug)\n"
	"      --log-level LEVEL error, warning, info (default) or debug\n"
	"  -h, --help            this help\n"
	"  -V, --version         version\n"
	"\n"
	"Logs go to stderr, one line per event: 'vnetd: PORT: message', errors\n"
	"and warnings as 'vnetd: error: ...', 'vnetd: warning: ...'; when stderr\n"
	"is the journal ($JOURNAL_STREAM), each line starts with its syslog\n"
	"priority instead (<3> error, <4> warning, <6> info, <7> debug).\n"
	"With $NOTIFY_SOCKET (systemd Type=notify), READY=1 once every socket\n"
	"listens, STOPPING=1 on the way out.\n"
	"Exit status: 0 after SIGINT/SIGTERM/SIGHUP (SIGHUP does not reload:\n"
	"it stops cleanly), 1 on a startup error, 2 on a usage error.  See vnetd(8).\n";

struct opts {
	bool no_uring;
	bool packed;
	gid_t socket_gid;      /* (gid_t)-1: vnetd's own */
	mode_t socket_mode;    /* server sockets */
	unsigned int busy_poll_us;
	int log_level;
	/* --socket/--tap and the defaults for every port */
	struct vnetd_port_cfg main;
	bool have_socket, have_tap, have_queues, have_client;
	bool have_netns, have_cpus;
	unsigned int nports;
	struct vnetd_port_cfg ports[MAX_PORTS];
	/* where each port came from, for messages */
	char origin[MAX_PORTS][64];
	/* --agent mode (agent.c) */
	struct vnetd_agent_opts agent;
	bool have_agent_opts;
};

/* --- usage errors ----------------------------------------------------- */

static int usage_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static int usage_error(const char *fmt, ...)
{
	va_list ap;

	fputs("vnetd: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputs("\nTry 'vnetd --help'.\n", stderr);
	return EXIT_USAGE;
}

static bool parse_uint(const char *s, unsigned long min, unsigned long max,
		       unsigned long *v)
{
	char *end;

	if (!s || !*s || *s == '-' || *s == '+')
		return false;
	errno = 0;
	*v = strtoul(s, &end, 10);
	return !errno && !*end && *v >= min && *v <= max;
}

/* "0,1", "0-3", "0:2:4": CPU numbers, in order; false on garbage. */
static bool parse_cpus(const char *s, struct vnetd_port_cfg *c)
{
	char buf[256], *tok, *save, *dash;
	unsigned long a, b, i;

	if (!*s || strlen(s) >= sizeof(buf))
		return false;
	snprintf(buf, sizeof(buf), "%s", s);
	c->ncpus = 0;
	for (tok = strtok_r(buf, ",:", &save); tok;
	     tok = strtok_r(NULL, ",:", &save)) {
		dash = strchr(tok, '-');
		if (dash)
			*dash = '\0';
		if (!parse_uint(tok, 0, CPU_SETSIZE - 1, &a))
			return false;
		b = a;
		if (dash && !parse_uint(dash + 1, a, CPU_SETSIZE - 1, &b))
			return false;
		for (i = a; i <= b; i++) {
			if (c->ncpus == sizeof(c->cpus) / sizeof(c->cpus[0]))
				return false;
			c->cpus[c->ncpus++] = (int)i;
		}
	}
	return c->ncpus > 0;
}

/* every CPU of C is one this process may run on (sched_getaffinity) */
static int cpus_check(const struct vnetd_port_cfg *c, const char *where)
{
	cpu_set_t set;
	unsigned int i;

	if (sched_getaffinity(0, sizeof(set), &set))
		return 0; /* cannot tell; pthread_setaffinity_np() will say */
	for (i = 0; i < c->ncpus; i++) {
		if (c->cpus[i] < CPU_SETSIZE && CPU_ISSET(c->cpus[i], &set))
			continue;
		return usage_error("%s: CPU %d does not exist or is not available to vnetd (it may run on %d CPU%s: see 'taskset -pc %d')",
				   where, c->cpus[i], CPU_COUNT(&set),
				   CPU_COUNT(&set) == 1 ? "" : "s", (int)getpid());
	}
	return 0;
}

static int parse_group(const char *s, gid_t *gid)
{
	struct group *g;
	unsigned long v;

	if (parse_uint(s, 0, 0x7fffffff, &v)) {
		*gid = (gid_t)v;
		return 0;
	}
	errno = 0;
	g = getgrnam(s);
	if (!g)
		return usage_error("--socket-group '%s': no such group%s%s", s,
				   errno ? ": " : "", errno ? strerror(errno) : "");
	*gid = g->gr_gid;
	return 0;
}

static int parse_mode(const char *s, mode_t *mode)
{
	unsigned long v;
	char *end;

	errno = 0;
	v = strtoul(s, &end, 8);
	if (!*s || *end || errno || *s == '-' || *s == '+' || v > 0777)
		return usage_error("--socket-mode '%s': an octal mode from 0 to 0777 (e.g. 0660)",
				   s);
	if ((v & 0600) != 0600)
		return usage_error("--socket-mode '%s': the owner needs read and write (0600)",
				   s);
	*mode = (mode_t)v;
	return 0;
}

static bool tap_name_ok(const char *s)
{
	size_t i, n = strlen(s);

	if (!n || n >= IF_NAMESIZE || !strcmp(s, ".") || !strcmp(s, ".."))
		return false;
	for (i = 0; i < n; i++)
		if (s[i] == '/' || s[i] == ':' || s[i] <= ' ' || s[i] == 0x7f)
			return false;
	return true;
}

/*
 * One "key=value" (or "client") of a --port spec or a config line into C.
 * WHERE names the origin for messages.  0 or EXIT_USAGE (message printed).
 */
static int port_kv(struct vnetd_port_cfg *c, char *tok, const char *where,
		   unsigned int *seen)
{
	char *val = strchr(tok, '=');
	unsigned long v;

	if (val)
		*val++ = '\0';
	if (!strcmp(tok, "client")) {
		if (val && strcmp(val, "1") && strcmp(val, "0") &&
		    strcmp(val, "on") && strcmp(val, "off"))
			return usage_error("%s: client takes no value (or 0/1)",
					   where);
		c->client = !val || !strcmp(val, "1") || !strcmp(val, "on");
		return 0;
	}
	if (!val)
		return usage_error("%s: '%s' is not KEY=VALUE", where, tok);
	if (!strcmp(tok, "socket")) {
		if (!*val || strlen(val) >= sizeof(c->socket))
			return usage_error("%s: socket path '%s' is empty or longer than %zu bytes",
					   where, val, sizeof(c->socket) - 1);
		snprintf(c->socket, sizeof(c->socket), "%s", val);
		*seen |= 1;
	} else if (!strcmp(tok, "tap")) {
		if (!tap_name_ok(val))
			return usage_error("%s: '%s' is not a valid interface name",
					   where, val);
		snprintf(c->tap, sizeof(c->tap), "%s", val);
		*seen |= 2;
	} else if (!strcmp(tok, "queues")) {
		if (!parse_uint(val, 1, VNETD_MAX_QP, &v))
			return usage_error("%s: queues '%s' is not a number from 1 to %d",
					   where, val, VNETD_MAX_QP);
		c->queues = (unsigned int)v;
	} else if (!strcmp(tok, "netns")) {
		if (!*val || strlen(val) >= sizeof(c->netns))
			return usage_error("%s: bad netns '%s'", where, val);
		snprintf(c->netns, sizeof(c->netns), "%s", val);
		*seen |= 4;
	} else if (!strcmp(tok, "cpus")) {
		if (!parse_cpus(val, c))
			return usage_error("%s: bad CPU list '%s'", where, val);
		*seen |= 8;
	} else {
		return usage_error("%s: unknown key '%s' (socket, tap, queues, client, netns, cpus)",
				   where, tok);
	}
	return 0;
}

static int port_add(struct opts *o, const struct vnetd_port_cfg *c,
		    const char *where)
{
	if (o->nports == MAX_PORTS)
		return usage_error("%s: more than %d ports", where, MAX_PORTS);
	o->ports[o->nports] = *c;
	snprintf(o->origin[o->nports], sizeof(o->origin[0]), "%s", where);
	o->nports++;
	return 0;
}

/* The tokens of one port (already split); fills defaults, checks. */
static int port_finish(struct opts *o, struct vnetd_port_cfg *c,
		       unsigned int seen, const char *where)
{
	if (!(seen & 1))
		return usage_error("%s: socket=PATH missing", where);
	if (!(seen & 2))
		return usage_error("%s: tap=NAME missing", where);
	if (!c->queues)
		c->queues = 1;
	if (!(seen & 4) && o->have_netns)
		snprintf(c->netns, sizeof(c->netns), "%s", o->main.netns);
	if (!(seen & 8) && o->have_cpus) {
		memcpy(c->cpus, o->main.cpus, sizeof(c->cpus));
		c->ncpus = o->main.ncpus;
	}
	return port_add(o, c, where);
}

static int parse_port_spec(struct opts *o, const char *spec)
{
	struct vnetd_port_cfg c = {};
	char buf[1024], *tok, *save;
	unsigned int seen = 0;
	int ret;

	if (strlen(spec) >= sizeof(buf))
		return usage_error("--port: spec too long");
	snprintf(buf, sizeof(buf), "%s", spec);
	for (tok = strtok_r(buf, ",", &save); tok;
	     tok = strtok_r(NULL, ",", &save)) {
		ret = port_kv(&c, tok, "--port", &seen);
		if (ret)
			return ret;
	}
	return port_finish(o, &c, seen, "--port");
}

static int parse_config(struct opts *o, const char *path)
{
	char line[2048], where[PATH_MAX + 32], *tok, *save, *hash;
	unsigned int lineno = 0, seen, before = o->nports;
	struct vnetd_port_cfg c;
	FILE *f;
	int ret = 0;

	f = fopen(path, "r");
	if (!f)
		return usage_error("--config %s: %s", path, strerror(errno));
	while (fgets(line, sizeof(line), f)) {
		lineno++;
		snprintf(where, sizeof(where), "%s:%u", path, lineno);
		if (!strchr(line, '\n') && !feof(f)) {
			ret = usage_error("%s: line too long", where);
			goto out;
		}
		hash = strchr(line, '#');
		if (hash)
			*hash = '\0';
		memset(&c, 0, sizeof(c));
		seen = 0;
		for (tok = strtok_r(line, " \t\r\n", &save); tok;
		     tok = strtok_r(NULL, " \t\r\n", &save)) {
			ret = port_kv(&c, tok, where, &seen);
			if (ret)
				goto out;
		}
		if (!seen && !c.client && !c.queues)
			continue; /* blank or comment */
		ret = port_finish(o, &c, seen, where);
		if (ret)
			goto out;
	}
	if (ferror(f))
		ret = usage_error("--config %s: %s", path, strerror(errno));
	else if (o->nports == before)
		ret = usage_error("--config %s: no port defined", path);
out:
	fclose(f);
	return ret;
}

static int parse_level(const char *s, int *level)
{
	static const char *const names[][2] = {
		{ "error", "err" }, { "warning", "warn" },
		{ "info", "info" }, { "debug", "debug" },
	};
	unsigned long v;
	int i;

	for (i = 0; i < 4; i++) {
		if (!strcmp(s, names[i][0]) || !strcmp(s, names[i][1])) {
			*level = i;
			return 0;
		}
	}
	if (parse_uint(s, 0, 3, &v)) {
		*level = (int)v;
		return 0;
	}
	return -1;
}

/* 0: run; -1: --help/--version done (exit 0); else the exit status. */
static int parse_args(int argc, char **argv, struct opts *o)
{
	enum { OPT_CPUS = 256, OPT_NO_URING, OPT_PACKED, OPT_LOG_LEVEL, OPT_BUSY_POLL,
	       OPT_SOCKET_GROUP, OPT_SOCKET_MODE };
	enum { OPT_AGENT_INTERVAL = 512, OPT_AGENT_MAX_RATE, OPT_AGENT_HOLD };
	static const struct option lopts[] = {
		{ "socket", required_argument, NULL, 's' },
		{ "tap", required_argument, NULL, 't' },
		{ "queues", required_argument, NULL, 'q' },
		{ "client", no_argument, NULL, 'c' },
		{ "netns", required_argument, NULL, 'n' },
		{ "cpus", required_argument, NULL, OPT_CPUS },
		{ "port", required_argument, NULL, 'p' },
		{ "config", required_argument, NULL, 'f' },
		{ "agent", required_argument, NULL, 'a' },
		{ "agent-interval", required_argument, NULL, OPT_AGENT_INTERVAL },
		{ "agent-max-rate", required_argument, NULL, OPT_AGENT_MAX_RATE },
		{ "agent-hold", required_argument, NULL, OPT_AGENT_HOLD },
		{ "no-uring", no_argument, NULL, OPT_NO_URING },
		{ "packed", no_argument, NULL, OPT_PACKED },
		{ "socket-group", required_argument, NULL, OPT_SOCKET_GROUP },
		{ "socket-mode", required_argument, NULL, OPT_SOCKET_MODE },
		{ "busy-poll", required_argument, NULL, OPT_BUSY_POLL },
		{ "verbose", no_argument, NULL, 'v' },
		{ "log-level", required_argument, NULL, OPT_LOG_LEVEL },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 },
	};
	/* --port/--config are parsed after the defaults they may take */
	const char *specs[MAX_PORTS], *configs[MAX_PORTS];
	unsigned int nspecs = 0, nconfigs = 0, i, j, seen = 0;
	unsigned long v;
	char kv[512];
	int c, ret;

	o->log_level = VHOST_LOG_INFO;
	o->socket_gid = (gid_t)-1;
	o->socket_mode = 0600;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":s:t:q:cn:p:f:a:vhV", lopts,
				NULL)) != -1) {
		switch (c) {
		case 's':
			snprintf(kv, sizeof(kv), "socket=%s", optarg);
			ret = port_kv(&o->main, kv, "--socket", &seen);
			if (ret)
				return ret;
			o->have_socket = true;
			break;
		case 't':
			snprintf(kv, sizeof(kv), "tap=%s", optarg);
			ret = port_kv(&o->main, kv, "--tap", &seen);
			if (ret)
				return ret;
			o->have_tap = true;
			break;
		case 'q':
			if (!parse_uint(optarg, 1, VNETD_MAX_QP, &v))
				return usage_error("--queues '%s' is not a number from 1 to %d",
						   optarg, VNETD_MAX_QP);
			o->main.queues = (unsigned int)v;
			o->have_queues = true;
			break;
		case 'c':
			o->main.client = true;
			o->have_client = true;
			break;
		case 'n':
			snprintf(kv, sizeof(kv), "netns=%s", optarg);
			ret = port_kv(&o->main, kv, "--netns", &seen);
			if (ret)
				return ret;
			o->have_netns = true;
			break;
		case OPT_CPUS:
			if (!parse_cpus(optarg, &o->main))
				return usage_error("--cpus '%s' is not a CPU list (e.g. 0,1 or 0-3)",
						   optarg);
			o->have_cpus = true;
			break;
		case 'p':
			if (nspecs == MAX_PORTS)
				return usage_error("more than %d --port", MAX_PORTS);
			specs[nspecs++] = optarg;
			break;
		case 'f':
			if (nconfigs == MAX_PORTS)
				return usage_error("more than %d --config", MAX_PORTS);
			configs[nconfigs++] = optarg;
			break;
		case OPT_NO_URING:
			o->no_uring = true;
			break;
		case OPT_PACKED:
			o->packed = true;
			break;
		case OPT_SOCKET_GROUP:
			ret = parse_group(optarg, &o->socket_gid);
			if (ret)
				return ret;
			break;
		case OPT_SOCKET_MODE:
			ret = parse_mode(optarg, &o->socket_mode);
			if (ret)
				return ret;
			break;
		case 'a':
			if (!tap_name_ok(optarg))
				return usage_error("--agent: '%s' is not a valid interface name",
						   optarg);
			if (o->agent.ntaps == VNETD_AGENT_MAX_TAPS)
				return usage_error("more than %d --agent",
						   VNETD_AGENT_MAX_TAPS);
			for (i = 0; i < o->agent.ntaps; i++)
				if (!strcmp(o->agent.taps[i], optarg))
					return usage_error("--agent %s given twice",
							   optarg);
			o->agent.taps[o->agent.ntaps++] = optarg;
			break;
		case OPT_AGENT_INTERVAL:
			if (!parse_uint(optarg, VNETD_AGENT_INTERVAL_MIN,
					VNETD_AGENT_INTERVAL_MAX, &v))
				return usage_error("--agent-interval '%s': milliseconds, %d-%d",
						   optarg, VNETD_AGENT_INTERVAL_MIN,
						   VNETD_AGENT_INTERVAL_MAX);
			o->agent.interval_ms = (unsigned int)v;
			o->have_agent_opts = true;
			break;
		case OPT_AGENT_MAX_RATE:
			if (!parse_uint(optarg, 1, VNETD_AGENT_MAX_RATE_MAX, &v))
				return usage_error("--agent-max-rate '%s': changes per second, 1-%d",
						   optarg, VNETD_AGENT_MAX_RATE_MAX);
			o->agent.max_rate = (unsigned int)v;
			o->have_agent_opts = true;
			break;
		case OPT_AGENT_HOLD:
			if (!parse_uint(optarg, 1, VNETD_AGENT_HOLD_MAX, &v))
				return usage_error("--agent-hold '%s': samples, 1-%d",
						   optarg, VNETD_AGENT_HOLD_MAX);
			o->agent.hold = (unsigned int)v;
			o->have_agent_opts = true;
			break;
		case OPT_BUSY_POLL:
			if (!parse_uint(optarg, 0, VNETD_BUSY_POLL_MAX_US, &v))
				return usage_error("--busy-poll '%s': microseconds, 0-%u",
						   optarg, VNETD_BUSY_POLL_MAX_US);
			o->busy_poll_us = (unsigned int)v;
			break;
		case 'v':
			o->log_level = VHOST_LOG_DEBUG;
			break;
		case OPT_LOG_LEVEL:
			if (parse_level(optarg, &o->log_level))
				return usage_error("--log-level '%s': error, warning, info or debug",
						   optarg);
			break;
		case 'h':
			fputs(usage_text, stdout);
			return -1;
		case 'V':
			printf("vnetd %s (vnet ABI %d)\n", VNETD_VERSION,
			       VNET_ABI_VERSION);
			return -1;
		case ':':
			return usage_error("option '%s' needs an argument",
					   argv[optind - 1]);
		default:
			return usage_error("unknown option '%s'",
					   argv[optind - 1]);
		}
	}
	if (optind < argc)
		return usage_error("unexpected argument '%s'", argv[optind]);

	if (o->agent.ntaps) {
		/* the agent serves no vhost-user port (agent.c) */
		if (o->have_socket || o->have_tap || o->have_queues ||
		    o->have_client || o->have_cpus || nspecs || nconfigs ||
		    o->socket_gid != (gid_t)-1 || o->socket_mode != 0600)
			return usage_error("--agent runs without vhost-user ports: --socket, --tap, --port, --config, --queues, --client and --cpus are for the datapath (run a second vnetd)");
		if (!o->agent.interval_ms)
			o->agent.interval_ms = VNETD_AGENT_INTERVAL_MS;
		if (!o->agent.max_rate)
			o->agent.max_rate = VNETD_AGENT_MAX_RATE;
		if (!o->agent.hold)
			o->agent.hold = VNETD_AGENT_HOLD;
		o->agent.netns = o->have_netns ? o->main.netns : NULL;
		return 0;
	}
	if (o->have_agent_opts)
		return usage_error("--agent-interval, --agent-max-rate and --agent-hold go with --agent TAP");

	if (o->have_socket || o->have_tap) {
		if (!o->have_socket)
			return usage_error("--tap needs --socket");
		if (!o->have_tap)
			return usage_error("--socket needs --tap");
		if (!o->main.queues)
			o->main.queues = 1;
		ret = port_add(o, &o->main, "--socket");
		if (ret)
			return ret;
	} else if (o->have_queues || o->have_client) {
		return usage_error("--queues and --client go with --socket/--tap (use queues=N, client in --port or --config)");
	}
	for (i = 0; i < nspecs; i++) {
		ret = parse_port_spec(o, specs[i]);
		if (ret)
			return ret;
	}
	for (i = 0; i < nconfigs; i++) {
		ret = parse_config(o, configs[i]);
		if (ret)
			return ret;
	}
	if (!o->nports)
		return usage_error("no port: give --socket and --tap, --port or --config");
	for (i = 0; i < o->nports; i++) {
		ret = cpus_check(&o->ports[i],
				 o->ports[i].ncpus == o->main.ncpus && o->have_cpus &&
				 !memcmp(o->ports[i].cpus, o->main.cpus, sizeof(o->main.cpus)) ?
				 "--cpus" : o->origin[i]);
		if (ret)
			return ret;
		for (j = 0; j < i; j++) {
			if (!strcmp(o->ports[i].socket, o->ports[j].socket))
				return usage_error("%s: socket %s is also used by %s",
						   o->origin[i], o->ports[i].socket,
						   o->origin[j]);
			/* pins are named by device: one port per tap name */
			if (!strcmp(o->ports[i].tap, o->ports[j].tap))
				return usage_error("%s: tap %s is also used by %s",
						   o->origin[i], o->ports[i].tap,
						   o->origin[j]);
		}
	}
	return 0;
}

/* --- logging ---------------------------------------------------------- */

/*
 * stderr is the journal: $JOURNAL_STREAM is "DEVICE:INODE" of the stream
 * systemd connected it to (systemd.exec(5)); a copy inherited by a child
 * whose stderr went elsewhere does not count.
 */
static bool stderr_is_journal(void)
{
	const char *js = getenv("JOURNAL_STREAM");
	unsigned long long dev, ino;
	struct stat st;

	if (!js || sscanf(js, "%llu:%llu", &dev, &ino) != 2)
		return false;
	if (fstat(STDERR_FILENO, &st))
		return false;
	return (unsigned long long)st.st_dev == dev &&
	       (unsigned long long)st.st_ino == ino;
}

static bool log_journal;

/*
 * Every line, the library's and ours.  To the journal: "<P>PORT: message"
 * with P the syslog priority (sd-daemon(3)'s prefixes; journald strips
 * them and files the line under that priority).  Elsewhere: "vnetd:
 * PORT: message", with "error: " or "warning: " before the port where
 * the line is one.
 */
static void log_write(enum vhost_log_level level, const char *msg,
		      void *opaque)
{
	static const int prio[] = {
		[VHOST_LOG_ERR] = 3, [VHOST_LOG_WARN] = 4,
		[VHOST_LOG_INFO] = 6, [VHOST_LOG_DEBUG] = 7,
	};
	unsigned int l = (unsigned int)level <= VHOST_LOG_DEBUG ? level :
								   VHOST_LOG_INFO;

	(void)opaque;
	if (log_journal)
		fprintf(stderr, "<%d>%s\n", prio[l], msg);
	else
		fprintf(stderr, "vnetd: %s%s\n",
			l == VHOST_LOG_ERR ? "error: " :
			l == VHOST_LOG_WARN ? "warning: " : "", msg);
}

/* libbpf's own messages (the verifier log of a failed load): debug only */
static int libbpf_log(enum libbpf_print_level level, const char *fmt,
		      va_list ap)
{
	char msg[1024];
	size_t n;

	if (level == LIBBPF_DEBUG ||
	    vhost_log_get_level() < VHOST_LOG_DEBUG)
		return 0;
	vsnprintf(msg, sizeof(msg), fmt, ap);
	n = strlen(msg);
	if (n && msg[n - 1] == '\n')
		msg[n - 1] = '\0';
	vhost_dbg("%s", msg);
	return 0;
}

/* --- ports ------------------------------------------------------------ */

struct ep_item {
	int kind; /* EP_* */
	struct vnetd_port *port;
};

enum { EP_SERVER = 1, EP_SIGNAL, EP_MONITOR, EP_WATCHDOG };

/* how often a queue thread held by a frontend's fd is looked for */
#define WATCHDOG_MS 250

static void monitor_open(struct vnetd_port *p)
{
	struct vnet_err err = {};

	p->mon_fd = -1;
	if (vnet_ethtool_monitor_open(&p->mon, &err)) {
		pr_warn(p, "ethtool monitor unavailable (%s): a direct 'ethtool -C %s rx-frames N' will not reach vnetd",
			err.msg, p->cfg.tap);
		p->mon = NULL;
		return;
	}
	p->mon_fd = vnet_ethtool_monitor_fd(p->mon);
}

static void monitor_close(struct vnetd_port *p)
{
	vnet_ethtool_monitor_close(p->mon);
	p->mon = NULL;
	p->mon_fd = -1;
}

/* tun's rx-frames changed: it is vnetd's TX batch (every queue's entry). */
static void tap_rx_frames_set(struct vnetd_port *p, __u32 v)
{
	unsigned int q;

	for (q = 0; q < VNET_MAX_QUEUES; q++) {
		if (__atomic_load_n(&p->config[q].tap_rx_frames,
				    __ATOMIC_RELAXED) == v)
			continue;
		__atomic_store_n(&p->config[q].tap_rx_frames, v,
				 __ATOMIC_RELAXED);
		__atomic_fetch_add(&p->config[q].gen, 1, __ATOMIC_RELEASE);
	}
	pr_info(p, "tap %s: rx-frames %u (ethtool): TX batch follows", p->cfg.tap,
		v);
}

/*
 * Enter the port's netns: the one it was opened in (held by fd, so that
 * it is reached even after its name was removed), else by name.
 */
static int port_ns_enter(struct vnetd_port *p, int *saved,
			 struct vnet_err *err)
{
	int fd, ret;

	if (p->netns_fd < 0)
		return vnetd_netns_switch(p->cfg.netns, saved, err);
	*saved = -1;
	fd = vnetd_netns_here(err);
	if (fd < 0)
		return fd;
	if (setns(p->netns_fd, CLONE_NEWNET)) {
		ret = -errno;
		vnet_err_set(err, "cannot enter the network namespace of tap %s: %s",
			     p->cfg.tap, strerror(errno));
		close(fd);
		return ret;
	}
	*saved = fd;
	return 0;
}

static void monitor_event(struct vnetd_port *p)
{
	struct vnet_ethtool_coalesce c = {};
	struct vnet_err err = {};
	int ret, saved;

	ret = vnet_ethtool_monitor_read(p->mon, p->ifindex, 0, &c, &err);
	if (ret == -ENOBUFS) {
		/* lost some: ask for the current value in the tap's netns */
		if (port_ns_enter(p, &saved, &err)) {
			pr_warn(p, "%s", err.msg);
			return;
		}
		ret = vnet_ethtool_coalesce_get(p->ifindex, &c, &err) ? -1 : 1;
		vnetd_netns_restore(saved);
	}
	if (ret < 0) {
		pr_warn(p, "%s", err.msg);
		return;
	}
	if (ret == 1 && (c.present & VNET_ETC_RX_FRAMES))
		tap_rx_frames_set(p, c.rx_frames);
}

/*
 * The socket's directory is there (the last component is created, 0755,
 * like systemd's RuntimeDirectory=) and nothing but a socket is at the
 * path: checked before the tap and the BPF programs, so that a wrong path
 * costs nothing.  Client mode connects to QEMU's socket: nothing to check.
 */
static int socket_precheck(const struct vnetd_port_cfg *c)
{
	char dir[sizeof(c->socket)], *slash;
	struct stat st;

	if (c->client)
		return 0;
	snprintf(dir, sizeof(dir), "%s", c->socket);
	slash = strrchr(dir, '/');
	if (!slash)
		snprintf(dir, sizeof(dir), ".");
	else if (slash == dir)
		dir[1] = '\0';
	else
		*slash = '\0';
	if (stat(dir, &st)) {
		if (errno != ENOENT || mkdir(dir, 0755)) {
			vhost_err("%s: cannot use the socket's directory %s: %s%s",
				  c->socket, dir, strerror(errno),
				  errno == ENOENT ? " (its parent does not exist either)" : "");
			return -1;
		}
		vhost_info("%s: created the socket's directory %s", c->socket, dir);
	} else if (!S_ISDIR(st.st_mode)) {
		vhost_err("%s: %s is not a directory", c->socket, dir);
		return -1;
	} else if (access(dir, W_OK | X_OK)) {
		vhost_err("%s: cannot create a socket in %s: %s", c->socket, dir,
			  strerror(errno));
		return -1;
	}
	if (!lstat(c->socket, &st) && !S_ISSOCK(st.st_mode)) {
		vhost_err("%s exists and is not a socket", c->socket);
		return -1;
	}
	return 0;
}

/*
 * vhost_server_add_port() binds the socket: with the umask and the
 * effective group set around it the file is created with the mode and
 * group asked for, never changed afterwards.
 */
static int port_add_socket(struct vnetd_port *p, struct vhost_server *srv,
			   const struct opts *o)
{
	struct vhost_port_cfg pc = { .path = p->cfg.socket,
				     .client = p->cfg.client,
				     .mode = o->socket_mode };
	gid_t egid = getegid();
	bool regroup = !p->cfg.client && o->socket_gid != (gid_t)-1 &&
		       o->socket_gid != egid;
	mode_t old;
	int ret;

	if (regroup && setegid(o->socket_gid)) {
		ret = -errno;
		pr_err(p, "cannot create the socket with group %u: %s%s",
		       (unsigned int)o->socket_gid, strerror(errno),
		       errno == EPERM ? " (needs root or CAP_SETGID)" : "");
		return ret;
	}
	old = umask(~o->socket_mode & 0777);
	ret = vhost_server_add_port(srv, &p->dev, &pc);
	umask(old);
	if (regroup && setegid(egid)) {
		pr_err(p, "cannot return to group %u: %s", (unsigned int)egid,
		       strerror(errno));
		return -EPERM;
	}
	return ret;
}

static void port_init(struct vnetd_port *p, const struct vnetd_port_cfg *c,
		      const struct opts *o)
{
	unsigned int q;

	memset(p, 0, sizeof(*p));
	p->cfg = *c;
	p->name = p->cfg.socket;
	p->no_uring = o->no_uring;
	p->packed = o->packed;
	p->busy_poll_ns = (uint64_t)o->busy_poll_us * 1000;
	p->nr_qp = c->queues;
	p->mon_fd = -1;
	p->netns_fd = -1;
	p->hdr_len = sizeof(struct virtio_net_hdr_mrg_rxbuf);
	pthread_mutex_init(&p->steer_lock, NULL);
	for (q = 0; q < VNETD_MAX_QP; q++)
		p->qp[q].tap_fd = -1;
}

/* Tap, BPF and monitor in the port's netns; then the device, the socket. */
static int port_open(struct vnetd_port *p, struct vhost_server *srv,
		     const struct opts *o)
{
	struct vnet_err err = {};
	int saved, ret;

	/*
	 * The socket comes last: once it exists (the contract's "ready"),
	 * the tap is up and vnet's programs are attached.
	 */
	ret = vnetd_netns_switch(p->cfg.netns, &saved, &err);
	if (ret) {
		pr_err(p, "%s", err.msg);
		return ret;
	}
	if (saved >= 0) {
		struct stat st;

		/* held: the port notices when the name goes (port_lost()) */
		p->netns_fd = open("/proc/thread-self/ns/net",
				   O_RDONLY | O_CLOEXEC);
		if (p->netns_fd < 0 || fstat(p->netns_fd, &st)) {
			ret = -errno;
			pr_err(p, "netns %s: %s", p->cfg.netns, strerror(errno));
			goto err_ns;
		}
		p->netns_ino = st.st_ino;
	}
	ret = vnetd_tap_open(p);
	if (ret)
		goto err_ns;
	ret = vnetd_bpf_setup(p);
	if (ret)
		goto err_tap;
	monitor_open(p);
	vnetd_netns_restore(saved);
	saved = -1;

	ret = vnetd_port_start(p);
	if (ret)
		goto err_bpf;
	ret = port_add_socket(p, srv, o);
	if (ret) {
		/* the library said why when it was the socket itself */
		pr_dbg(p, "vhost_server_add_port: %s", strerror(-ret));
		goto err_port;
	}
	pr_info(p, "serving tap %s with %u queue pair%s%s%s", p->cfg.tap,
		p->nr_qp, p->nr_qp > 1 ? "s" : "",
		p->cfg.netns[0] ? " in netns " : "", p->cfg.netns);
	return 0;

err_port:
	vnetd_port_stop(p);
err_bpf:
	if (port_ns_enter(p, &saved, &err))
		pr_warn(p, "%s", err.msg);
	monitor_close(p);
	vnetd_bpf_cleanup(p);
err_tap:
	vnetd_tap_close(p);
err_ns:
	vnetd_netns_restore(saved);
	if (p->netns_fd >= 0)
		close(p->netns_fd);
	p->netns_fd = -1;
	return ret;
}

/* After vhost_server_cleanup(): every ring is stopped. */
static void port_close(struct vnetd_port *p)
{
	struct vnet_err err = {};
	int saved;

	vnetd_port_stop(p);
	if (port_ns_enter(p, &saved, &err))
		pr_warn(p, "%s", err.msg);
	monitor_close(p);
	vnetd_bpf_cleanup(p);
	vnetd_tap_close(p);
	vnetd_netns_restore(saved);
	if (p->netns_fd >= 0)
		close(p->netns_fd);
	p->netns_fd = -1;
	pthread_mutex_destroy(&p->steer_lock);
}

/*
 * Is the port's tap, or its netns, gone?  The tap: tun answers EBADFD on
 * a queue fd whose device was deleted.  The netns: its name no longer
 * leads to the namespace the port was opened in (ip netns del; the
 * namespace itself lives on as long as the port holds its tap).  Fills
 * WHY.
 */
static bool port_lost(struct vnetd_port *p, char *why, size_t len)
{
	struct ifreq ifr = {};
	char path[300];
	struct stat st;

	if (p->netns_fd >= 0) {
		if (strchr(p->cfg.netns, '/'))
			snprintf(path, sizeof(path), "%s", p->cfg.netns);
		else
			snprintf(path, sizeof(path), "/var/run/netns/%s",
				 p->cfg.netns);
		if (stat(path, &st) || st.st_ino != p->netns_ino) {
			snprintf(why, len, "netns %s of tap %s is gone (%s)",
				 p->cfg.netns, p->cfg.tap,
				 errno == ENOENT ? "deleted" :
						   "another one has its name");
			return true;
		}
	}
	if (p->qp[0].tap_fd >= 0 &&
	    ioctl(p->qp[0].tap_fd, TUNGETIFF, &ifr) && errno == EBADFD) {
		snprintf(why, len, "tap %s is gone (deleted)", p->cfg.tap);
		return true;
	}
	return false;
}

/*
 * Stop serving P for good: its frontend is let go, its socket and the
 * pins it made are removed, its threads end.  The other ports go on.
 */
static void port_lose(struct vhost_server *srv, struct vnetd_port *p,
		      int epfd, const char *why)
{
	pr_err(p, "%s: port stopped, its socket and pins released; the other ports go on",
	       why);
	if (p->mon_fd >= 0)
		epoll_ctl(epfd, EPOLL_CTL_DEL, p->mon_fd, NULL);
	vhost_server_remove_port(srv, &p->dev);
	port_close(p);
	p->gone = true;
}

/* --- the control loop ------------------------------------------------- */

static int ep_add(int epfd, int fd, struct ep_item *it)
{
	struct epoll_event ev = { .events = EPOLLIN, .data.ptr = it };

	return epoll_ctl(epfd, EPOLL_CTL_ADD, fd, &ev) ? -errno : 0;
}

static int run(struct vhost_server *srv, struct vnetd_port *ports,
	       unsigned int nports, int sfd)
{
	struct ep_item srv_item = { EP_SERVER, NULL }, sig_item = { EP_SIGNAL, NULL };
	struct ep_item wd_item = { EP_WATCHDOG, NULL };
	struct itimerspec its = {
		.it_interval.tv_nsec = WATCHDOG_MS * 1000000L,
		.it_value.tv_nsec = WATCHDOG_MS * 1000000L,
	};
	struct ep_item *mon_items;
	uint64_t ticks;
	struct epoll_event ev[16];
	struct signalfd_siginfo si;
	unsigned int i, i2;
	char why[400];
	int epfd, wdfd, n, ret = 0;

	mon_items = calloc(nports, sizeof(*mon_items));
	epfd = epoll_create1(EPOLL_CLOEXEC);
	wdfd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
	if (!mon_items || epfd < 0 || wdfd < 0 ||
	    timerfd_settime(wdfd, 0, &its, NULL)) {
		vhost_err("control loop: %s", strerror(errno));
		free(mon_items);
		if (epfd >= 0)
			close(epfd);
		if (wdfd >= 0)
			close(wdfd);
		return -ENOMEM;
	}
	ret = ep_add(epfd, vhost_server_fd(srv), &srv_item);
	if (!ret)
		ret = ep_add(epfd, sfd, &sig_item);
	if (!ret)
		ret = ep_add(epfd, wdfd, &wd_item);
	for (i = 0; !ret && i < nports; i++) {
		mon_items[i] = (struct ep_item){ EP_MONITOR, &ports[i] };
		if (ports[i].mon_fd >= 0)
			ret = ep_add(epfd, ports[i].mon_fd, &mon_items[i]);
	}
	if (ret) {
		vhost_err("control loop: epoll: %s", strerror(-ret));
		goto out;
	}
	for (;;) {
		n = epoll_wait(epfd, ev, sizeof(ev) / sizeof(ev[0]), -1);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			ret = -errno;
			vhost_err("control loop: epoll_wait: %s", strerror(errno));
			goto out;
		}
		for (i = 0; i < (unsigned int)n; i++) {
			struct ep_item *it = ev[i].data.ptr;

			switch (it->kind) {
			case EP_SERVER:
				ret = vhost_server_poll(srv, 0);
				if (ret < 0) {
					vhost_err("vhost-user server: %s",
						  strerror(-ret));
					goto out;
				}
				ret = 0;
				break;
			case EP_SIGNAL:
				if (read(sfd, &si, sizeof(si)) != sizeof(si))
					break;
				vnetd_notify("STOPPING=1");
				vhost_info("%s, exiting%s", strsignal((int)si.ssi_signo),
					   si.ssi_signo == SIGHUP ?
					   " (vnetd does not reload its configuration: start it again)" : "");
				goto out;
			case EP_MONITOR:
				/* port_lose() earlier in this batch */
				if (!it->port->gone)
					monitor_event(it->port);
				break;
			case EP_WATCHDOG:
				if (read(wdfd, &ticks, sizeof(ticks)) < 0)
					break;
				for (i2 = 0; i2 < nports; i2++) {
					if (ports[i2].gone)
						continue;
					vnetd_watchdog(&ports[i2]);
					if (port_lost(&ports[i2], why,
						      sizeof(why)))
						port_lose(srv, &ports[i2], epfd,
							  why);
				}
				break;
			}
		}
	}
out:
	close(wdfd);
	close(epfd);
	free(mon_items);
	return ret;
}

int main(int argc, char **argv)
{
	static struct opts o;
	struct vhost_server srv;
	struct vnetd_port *ports;
	unsigned int i, opened = 0;
	sigset_t mask;
	int ret, sfd;

	ret = parse_args(argc, argv, &o);
	if (ret)
		return ret < 0 ? 0 : ret;

	/* vnetctl recognises its datapath by this name (coalesce show) */
	prctl(PR_SET_NAME, "vnetd", 0, 0, 0);
	log_journal = stderr_is_journal();
	vhost_log_set_fn(log_write, NULL);
	vnet_hint_set(VNET_HINT_VNETD);
	vhost_log_set_level((enum vhost_log_level)o.log_level);
	libbpf_set_print(libbpf_log);
	signal(SIGPIPE, SIG_IGN);

	sigemptyset(&mask);
	sigaddset(&mask, SIGINT);
	sigaddset(&mask, SIGTERM);
	/* no reload: SIGHUP stops cleanly, never kills without cleanup */
	sigaddset(&mask, SIGHUP);
	if (sigprocmask(SIG_BLOCK, &mask, NULL)) {
		vhost_err("sigprocmask: %s", strerror(errno));
		return EXIT_STARTUP;
	}
	sfd = signalfd(-1, &mask, SFD_NONBLOCK | SFD_CLOEXEC);
	if (sfd < 0) {
		vhost_err("signalfd: %s", strerror(errno));
		return EXIT_STARTUP;
	}
	/* SIGURG is for the queue threads (net.c): not this one's syscalls */
	sigemptyset(&mask);
	sigaddset(&mask, SIGURG);
	if (sigprocmask(SIG_BLOCK, &mask, NULL)) {
		vhost_err("sigprocmask: %s", strerror(errno));
		return EXIT_STARTUP;
	}
	if (o.agent.ntaps) {
		/* attach mode: no vhost-user server, no tap of our own */
		ret = vnetd_agent_run(&o.agent, sfd);
		goto out_sfd;
	}
	ports = calloc(o.nports, sizeof(*ports));
	if (!ports) {
		vhost_err("out of memory");
		ret = EXIT_STARTUP;
		goto out_sfd;
	}
	ret = vhost_server_init(&srv);
	if (ret) {
		vhost_err("vhost-user server: %s", strerror(-ret));
		ret = EXIT_STARTUP;
		goto out_ports;
	}
	for (i = 0; i < o.nports; i++) {
		if (socket_precheck(&o.ports[i])) {
			ret = EXIT_STARTUP;
			goto out_srv;
		}
	}
	for (i = 0; i < o.nports; i++) {
		port_init(&ports[i], &o.ports[i], &o);
		if (port_open(&ports[i], &srv, &o)) {
			ret = EXIT_STARTUP;
			goto out_srv;
		}
		opened++;
	}
	/* every socket listens (or, with --client, is being connected) */
	{
		char st[128];

		snprintf(st, sizeof(st), "READY=1\nSTATUS=serving %u port%s\nMAINPID=%d",
			 o.nports, o.nports == 1 ? "" : "s", (int)getpid());
		ret = vnetd_notify(st);
		if (ret)
			vhost_warn("cannot notify systemd ($NOTIFY_SOCKET): %s",
				   strerror(-ret));
	}

	ret = run(&srv, ports, o.nports, sfd) ? EXIT_STARTUP : 0;

out_srv:
	/* disconnect: every running ring is stopped by its thread */
	vhost_server_cleanup(&srv);
	while (opened--)
		if (!ports[opened].gone)
			port_close(&ports[opened]);
out_ports:
	free(ports);
out_sfd:
	close(sfd);
	return ret;
}
