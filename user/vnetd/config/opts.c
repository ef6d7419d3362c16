// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * vnetd's command line: a table of options, each with the function that
 * takes its argument; the keys of a port (--socket and --tap, a --port
 * spec, a --config line) in a second table; then the checks that need
 * every option (defaults, conflicts, duplicates).
 */
#include <errno.h>
#include <getopt.h>
#include <grp.h>
#include <limits.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#include "opts.h"
#include "sandbox/sandbox.h"
#include "config.h"
#include "portcfg.h"
#include "sandbox/seccomp.h"
#include "base/util.h"
#include "libvnet.h"

#define MAX_PORTS VNETD_MAX_PORTS

static const char usage_head[] =
	"Usage: vnetd --socket PATH --tap NAME [--queues N] [--client]\n"
	"             [--netns NAME] [--cpus LIST] [OPTIONS]\n"
	"       vnetd --config FILE [OPTIONS]\n"
	"       vnetd --port socket=PATH,tap=NAME[,queues=N][,client] [--port ...] [OPTIONS]\n"
	"       vnetd --agent TAP [--agent TAP ...] [--netns NAME] [AGENT OPTIONS]\n"
	"\n"
	"vhost-user-net backend over a multi-queue tap, with vnet's BPF\n"
	"classifier deciding when the guest is signalled.\n";

/* the option table's sections, in --help's order */
enum opt_section { SEC_PORT, SEC_AGENT, SEC_GENERAL, SEC_MAX };

static const char *const section_head[SEC_MAX] = {
	[SEC_PORT] = "Port:",
	/* one literal: clang takes two in an array for a missing comma */
	[SEC_AGENT] = "Agent (attach mode: kernel vhost-net drives taps that 'vnetctl attach'\nattached; no vhost-user socket):",
	[SEC_GENERAL] = "Options:",
};

static const char usage_tail[] =
	"\n"
	"Logs go to stderr, one line per event: 'vnetd: PORT: message', errors\n"
	"and warnings as 'vnetd: error: ...', 'vnetd: warning: ...'; when stderr\n"
	"is the journal ($JOURNAL_STREAM), each line starts with its syslog\n"
	"priority instead (<3> error, <4> warning, <6> info, <7> debug).\n"
	"With $NOTIFY_SOCKET (systemd Type=notify), READY=1 once every socket\n"
	"listens, STOPPING=1 on the way out.\n"
	"SIGHUP does not stop or reload vnetd: reload with --takeover.\n"
	"Exit status: 0 after SIGINT/SIGTERM, 1 on a startup error, 2 on a usage\n"
	"error.  See vnetd(8).\n";

static int parse_group(const char *s, gid_t *gid)
{
	struct group *g;
	unsigned long v;

	if (vnetd_parse_uint(s, 0, 0x7fffffff, &v)) {
		*gid = (gid_t)v;
		return 0;
	}
	errno = 0;
	g = getgrnam(s);
	if (!g)
		return vnetd_usage_error("--socket-group '%s': no such group%s%s", s,
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
		return vnetd_usage_error("--socket-mode '%s': an octal mode from 0 to 0777 (e.g. 0660)",
				   s);
	if ((v & 0600) != 0600)
		return vnetd_usage_error("--socket-mode '%s': the owner needs read and write (0600)",
				   s);
	*mode = (mode_t)v;
	return 0;
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
	if (vnetd_parse_uint(s, 0, 3, &v)) {
		*level = (int)v;
		return 0;
	}
	return -1;
}

/* --- the options ------------------------------------------------------ */

/* a port key given as its own option: --socket PATH is socket=PATH */
static int opt_key(struct vnetd_opts *o, const char *key, const char *arg,
		   const char *where)
{
	char kv[512];
	unsigned int got = 0;

	snprintf(kv, sizeof(kv), "%s=%s", key, arg);
	return vnetd_port_kv(&o->main, kv, where, &got);
}

static int opt_socket(struct vnetd_opts *o, const char *arg)
{
	o->have_socket = true;
	return opt_key(o, "socket", arg, "--socket");
}

static int opt_tap(struct vnetd_opts *o, const char *arg)
{
	o->have_tap = true;
	return opt_key(o, "tap", arg, "--tap");
}

static int opt_netns(struct vnetd_opts *o, const char *arg)
{
	o->have_netns = true;
	return opt_key(o, "netns", arg, "--netns");
}

static int opt_queues(struct vnetd_opts *o, const char *arg)
{
	unsigned long v;

	if (!vnetd_parse_uint(arg, 1, VNETD_MAX_QP, &v))
		return vnetd_usage_error("--queues '%s' is not a number from 1 to %d",
				   arg, VNETD_MAX_QP);
	o->main.queues = (unsigned int)v;
	o->have_queues = true;
	return 0;
}

static int opt_client(struct vnetd_opts *o, const char *arg)
{
	(void)arg;
	o->main.client = true;
	o->have_client = true;
	return 0;
}

static int opt_cpus(struct vnetd_opts *o, const char *arg)
{
	char why[512];

	if (!vnetd_parse_cpus(arg, &o->main, why, sizeof(why)))
		return vnetd_usage_error("--cpus '%s'%s%s", arg,
					 strncmp(why, "is ", 3) ? ": " : " ", why);
	o->have_cpus = true;
	return 0;
}

static int opt_port(struct vnetd_opts *o, const char *arg)
{
	if (o->nspecs == MAX_PORTS)
		return vnetd_usage_error("more than %d --port: %s", MAX_PORTS,
					 VNETD_MAX_PORTS_FIX);
	o->specs[o->nspecs++] = arg;
	return 0;
}

static int opt_config(struct vnetd_opts *o, const char *arg)
{
	if (o->nconfigs == MAX_PORTS)
		return vnetd_usage_error("more than %d --config: %s", MAX_PORTS,
					 VNETD_MAX_PORTS_FIX);
	o->configs[o->nconfigs++] = arg;
	return 0;
}

static int opt_no_uring(struct vnetd_opts *o, const char *arg)
{
	(void)arg;
	o->port.no_uring = true;
	return 0;
}

static int opt_packed(struct vnetd_opts *o, const char *arg)
{
	(void)arg;
	o->port.packed = true;
	return 0;
}

static int opt_no_packed(struct vnetd_opts *o, const char *arg)
{
	(void)arg;
	o->port.packed = false;
	return 0;
}

static int opt_no_sandbox(struct vnetd_opts *o, const char *arg)
{
	(void)o;
	(void)arg;
	vnetd_sandbox.off = true;
	return 0;
}

static int opt_user(struct vnetd_opts *o, const char *arg)
{
	(void)o;
	if (vnetd_sandbox_user(arg))
		return vnetd_usage_error("--user '%s': no such user", arg);
	return 0;
}

static int opt_socket_group(struct vnetd_opts *o, const char *arg)
{
	return parse_group(arg, &o->port.socket_gid);
}

static int opt_socket_mode(struct vnetd_opts *o, const char *arg)
{
	return parse_mode(arg, &o->port.socket_mode);
}

static int opt_tc_attach(struct vnetd_opts *o, const char *arg)
{
	if (vnet_tc_attach_parse(arg, &o->port.tc_attach))
		return vnetd_usage_error("invalid --tc-attach '%s': expected tcx or clsact",
					 arg);
	return 0;
}

static int opt_busy_poll(struct vnetd_opts *o, const char *arg)
{
	unsigned long v;

	if (!vnetd_parse_uint(arg, 0, VNETD_BUSY_POLL_MAX_US, &v))
		return vnetd_usage_error("--busy-poll '%s': microseconds, 0-%u", arg,
				   VNETD_BUSY_POLL_MAX_US);
	o->port.busy_poll_us = (unsigned int)v;
	return 0;
}

static int opt_agent(struct vnetd_opts *o, const char *arg)
{
	unsigned int i;

	if (vnet_ifname_invalid(arg))
		return vnetd_usage_error("--agent: '%s' is not a valid interface name: %s",
					 arg, vnet_ifname_invalid(arg));
	if (o->agent.ntaps == VNETD_AGENT_MAX_TAPS)
		return vnetd_usage_error("more than %d --agent", VNETD_AGENT_MAX_TAPS);
	for (i = 0; i < o->agent.ntaps; i++)
		if (!strcmp(o->agent.taps[i], arg))
			return vnetd_usage_error("--agent %s given twice", arg);
	o->agent.taps[o->agent.ntaps++] = arg;
	return 0;
}

static int opt_agent_interval(struct vnetd_opts *o, const char *arg)
{
	unsigned long v;

	if (!vnetd_parse_uint(arg, VNETD_AGENT_INTERVAL_MIN, VNETD_AGENT_INTERVAL_MAX,
			&v))
		return vnetd_usage_error("--agent-interval '%s': milliseconds, %d-%d",
				   arg, VNETD_AGENT_INTERVAL_MIN,
				   VNETD_AGENT_INTERVAL_MAX);
	o->agent.interval_ms = (unsigned int)v;
	o->have_agent_opts = true;
	return 0;
}

static int opt_agent_max_rate(struct vnetd_opts *o, const char *arg)
{
	unsigned long v;

	if (!vnetd_parse_uint(arg, 1, VNETD_AGENT_MAX_RATE_MAX, &v))
		return vnetd_usage_error("--agent-max-rate '%s': changes per second, 1-%d",
				   arg, VNETD_AGENT_MAX_RATE_MAX);
	o->agent.max_rate = (unsigned int)v;
	o->have_agent_opts = true;
	return 0;
}

static int opt_agent_hold(struct vnetd_opts *o, const char *arg)
{
	unsigned long v;

	if (!vnetd_parse_uint(arg, 1, VNETD_AGENT_HOLD_MAX, &v))
		return vnetd_usage_error("--agent-hold '%s': samples, 1-%d", arg,
				   VNETD_AGENT_HOLD_MAX);
	o->agent.hold = (unsigned int)v;
	o->have_agent_opts = true;
	return 0;
}

static int opt_takeover(struct vnetd_opts *o, const char *arg)
{
	(void)arg;
	o->takeover = true;
	return 0;
}

static int opt_detach(struct vnetd_opts *o, const char *arg)
{
	(void)arg;
	o->detach = true;
	return 0;
}

static int opt_release_missing(struct vnetd_opts *o, const char *arg)
{
	(void)arg;
	o->release_missing = true;
	return 0;
}

static int opt_takeover_socket(struct vnetd_opts *o, const char *arg)
{
	if (!*arg || strlen(arg) >= sizeof(o->takeover_socket))
		return vnetd_usage_error("--takeover-socket '%s': a path of 1-%zu characters",
					 arg, sizeof(o->takeover_socket) - 1);
	snprintf(o->takeover_socket, sizeof(o->takeover_socket), "%s", arg);
	return 0;
}

static int opt_verbose(struct vnetd_opts *o, const char *arg)
{
	(void)arg;
	o->log_level = VHOST_LOG_DEBUG;
	return 0;
}

static int opt_log_level(struct vnetd_opts *o, const char *arg)
{
	if (parse_level(arg, &o->log_level))
		return vnetd_usage_error("--log-level '%s': error, warning, info or debug",
				   arg);
	return 0;
}

static void usage(void);

static int opt_help(struct vnetd_opts *o, const char *arg)
{
	(void)o;
	(void)arg;
	usage();
	return -1;
}

static int opt_version(struct vnetd_opts *o, const char *arg)
{
	(void)o;
	(void)arg;
	printf("vnetd %s (vnet ABI %d)\n", VNETD_VERSION, VNET_ABI_VERSION);
	return -1;
}

/*
 * Every option: its names, its argument (NULL: none), what takes it, and
 * its help, which --help prints (lines after the first are continued
 * under it).  completion/vnetd and vnetd(8)'s OPTIONS list the same
 * options (selftests/test_options.sh checks them against --help).
 */
static const struct opt_def {
	const char *name;
	char short_name;	/* 0: long only */
	const char *arg;	/* its name in --help, NULL: takes none */
	int (*parse)(struct vnetd_opts *o, const char *arg);
	enum opt_section section;
	const char *help;
} opt_table[] = {
	{ "socket", 's', "PATH", opt_socket, SEC_PORT,
	  "vhost-user unix socket (listened on, or with\n--client connected to)" },
	{ "tap", 't', "NAME", opt_tap, SEC_PORT,
	  "tap device: attached to, or created (and gone\nwhen vnetd exits)" },
	{ "queues", 'q', "N", opt_queues, SEC_PORT,
	  "queue pairs, 1-16 (default 1)" },
	{ "client", 'c', NULL, opt_client, SEC_PORT,
	  "connect to a listening frontend (QEMU\nserver=on) and reconnect when it goes away" },
	{ "netns", 'n', "NAME", opt_netns, SEC_PORT,
	  "the tap lives in network namespace NAME\n(/var/run/netns/NAME); default for every port" },
	{ "cpus", 0, "LIST", opt_cpus, SEC_PORT,
	  "pin queue pair i to the i-th CPU of LIST\n(e.g. 0,1 or 0-3); default for every port" },
	{ "port", 'p', "SPEC", opt_port, SEC_PORT,
	  "a port: socket=PATH,tap=NAME[,queues=N]\n[,client][,netns=NAME][,cpus=LIST] (CPUs\nseparated by ':' here)[,tx-rate=R][,tx-burst=B]\n[,rx-rate=R][,rx-pkts-rate=N]... (rate limits,\ntc's words; vnetctl(8) limit)[,mac=M][,ip=A+B...]\n(spoofing protection)[,vm=NAME] (the exporter's\nvm label; %XX a byte: %2C a comma); repeatable" },
	{ "config", 'f', "FILE", opt_config, SEC_PORT,
	  "ports, one per line: socket=PATH tap=NAME\n[queues=N] [client] [netns=NAME] [cpus=LIST];\n'#' starts a comment" },
	{ "agent", 'a', "TAP", opt_agent, SEC_AGENT,
	  "push the BPF policy's adaptive-tx recommendation\nto TAP's own rx-frames (ethtool -C TAP\nrx-frames N) with hysteresis; repeatable;\n--netns NAME: the taps live there" },
	{ "agent-interval", 0, "MS", opt_agent_interval, SEC_AGENT,
	  "sample every MS ms (10-10000, default 100)" },
	{ "agent-max-rate", 0, "N", opt_agent_max_rate, SEC_AGENT,
	  "at most N changes per second per tap (1-100,\ndefault 2)" },
	{ "agent-hold", 0, "N", opt_agent_hold, SEC_AGENT,
	  "change only after N consecutive samples asked\nfor a step of 25 % and 2 frames (1-1000,\ndefault 3)" },
	{ "socket-group", 0, "GROUP", opt_socket_group, SEC_GENERAL,
	  "create the sockets with group GROUP (a name\nor a number; default: vnetd's own, root)" },
	{ "socket-mode", 0, "MODE", opt_socket_mode, SEC_GENERAL,
	  "their mode, octal (default 0600; 0660 with\n--socket-group lets that group's QEMU connect)" },
	{ "no-uring", 0, NULL, opt_no_uring, SEC_GENERAL,
	  "plain read/writev instead of io_uring" },
	{ "packed", 0, NULL, opt_packed, SEC_GENERAL,
	  "offer packed virtqueues (VIRTIO_F_RING_PACKED;\nthe default)" },
	{ "no-packed", 0, NULL, opt_no_packed, SEC_GENERAL,
	  "do not: the frontend runs split rings" },
	{ "no-sandbox", 0, NULL, opt_no_sandbox, SEC_GENERAL,
	  "keep every privilege, no seccomp filter (by\ndefault, once set up, vnetd drops capabilities\nand runs its threads under seccomp allow-lists)" },
	{ "user", 0, "USER", opt_user, SEC_GENERAL,
	  "once set up, run as USER (a name or a number),\nkeeping only the capabilities still needed" },
	{ "takeover", 0, NULL, opt_takeover, SEC_GENERAL,
	  "take the ports over from the vnetd running\nwith them, while it serves: its guests see\nno disconnect; it exits 0 after the switch,\nor serves on if this one fails.  A port it\ndoes not serve is set up anew" },
	{ "detach", 0, NULL, opt_detach, SEC_GENERAL,
	  "with --takeover: return once the ports are\ntaken over (exit 0) or not (exit 1, why on\nstderr), this vnetd going on in the\nbackground (systemd's ExecReload=)" },
	{ "release-missing", 0, NULL, opt_release_missing, SEC_GENERAL,
	  "with --takeover: the running vnetd's ports\nthat this one is not given are stopped at\nthe switch (their VMs lose the network);\nwithout it such a hand-over is refused" },
	{ "takeover-socket", 0, "PATH", opt_takeover_socket, SEC_GENERAL,
	  "where a running vnetd waits for a hand-over\n(default /run/vnet/TAP.takeover, TAP the\nfirst port's)" },
	{ "tc-attach", 0, "HOW", opt_tc_attach, SEC_GENERAL,
	  "how vnet's tc programs go on a tap vnetd\nattaches: tcx (default: links; each waits for\nan RCU grace period under the RTNL lock, 10-20\nms) or clsact (filters: attached in 0.1 ms,\n60 ns more a frame)" },
	{ "busy-poll", 0, "USECS", opt_busy_poll, SEC_GENERAL,
	  "when a guest's TX ring runs dry, watch it for\nUSECS (0-1000, default 0: off) before asking\nfor a kick and sleeping; costs CPU, saves the\nguest's kicks and vnetd's wakeups" },
	{ "verbose", 'v', NULL, opt_verbose, SEC_GENERAL,
	  "debug logging (same as --log-level debug)" },
	{ "log-level", 0, "LEVEL", opt_log_level, SEC_GENERAL,
	  "error, warning, info (default) or debug" },
	{ "help", 'h', NULL, opt_help, SEC_GENERAL, "this help" },
	{ "version", 'V', NULL, opt_version, SEC_GENERAL, "version" },
};

#define NR_OPTS (sizeof(opt_table) / sizeof(opt_table[0]))
#define OPT_LONG_ONLY 256	/* getopt value of table entry i: 256 + i */
#define HELP_COL 24		/* where the help column starts */

/* --help: the head, each section's options from the table, the tail */
static void usage(void)
{
	unsigned int sec, i;

	fputs(usage_head, stdout);
	for (sec = 0; sec < SEC_MAX; sec++) {
		printf("\n%s\n", section_head[sec]);
		for (i = 0; i < NR_OPTS; i++) {
			const struct opt_def *d = &opt_table[i];
			const char *h = d->help, *nl;
			int n;

			if (d->section != sec)
				continue;
			if (d->short_name)
				n = printf("  -%c, --%s", d->short_name, d->name);
			else
				n = printf("      --%s", d->name);
			if (d->arg)
				n += printf(" %s", d->arg);
			if (n >= HELP_COL) {
				putchar('\n');
				n = 0;
			}
			for (; (nl = strchr(h, '\n')); h = nl + 1, n = 0)
				printf("%*s%.*s\n", HELP_COL - n, "", (int)(nl - h), h);
			printf("%*s%s\n", HELP_COL - n, "", h);
		}
	}
	fputs(usage_tail, stdout);
}

/* The agent serves no vhost-user port (agent.c): its own checks. */
static int agent_finish(struct vnetd_opts *o)
{
	if (o->have_socket || o->have_tap || o->have_queues ||
	    o->have_client || o->have_cpus || o->nspecs || o->nconfigs ||
	    o->port.socket_gid != (gid_t)-1 || o->port.socket_mode != 0600 ||
	    vnetd_sandbox.user)
		return vnetd_usage_error("--agent runs without vhost-user ports: --socket, --tap, --port, --config, --queues, --client, --cpus and --user are for the datapath (run a second vnetd)");
	if (!o->agent.interval_ms)
		o->agent.interval_ms = VNETD_AGENT_INTERVAL_MS;
	if (!o->agent.max_rate)
		o->agent.max_rate = VNETD_AGENT_MAX_RATE;
	if (!o->agent.hold)
		o->agent.hold = VNETD_AGENT_HOLD;
	o->agent.netns = o->have_netns ? o->main.netns : NULL;
	return 0;
}

/* Every option of ARGV through its parser: 0, or the exit status. */
static int opts_read(int argc, char **argv, struct vnetd_opts *o)
{
	struct option lopts[NR_OPTS + 1] = {};
	char sopts[2 * NR_OPTS + 2] = ":";
	unsigned int i, n = 1;
	int c, ret;

	for (i = 0; i < NR_OPTS; i++) {
		const struct opt_def *d = &opt_table[i];

		lopts[i].name = d->name;
		lopts[i].has_arg = d->arg ? required_argument : no_argument;
		lopts[i].val = d->short_name ? d->short_name :
					       OPT_LONG_ONLY + (int)i;
		if (d->short_name) {
			sopts[n++] = d->short_name;
			if (d->arg)
				sopts[n++] = ':';
		}
	}
	opterr = 0;
	while ((c = getopt_long(argc, argv, sopts, lopts, NULL)) != -1) {
		if (c == ':')
			return vnetd_usage_error("option '%s' needs an argument",
					   argv[optind - 1]);
		for (i = 0; i < NR_OPTS; i++)
			if (lopts[i].val == c)
				break;
		if (i == NR_OPTS)
			return vnetd_usage_error("unknown option '%s'",
					   argv[optind - 1]);
		ret = opt_table[i].parse(o, optarg);
		if (ret)
			return ret;
	}
	if (optind < argc)
		return vnetd_usage_error("unexpected argument '%s'", argv[optind]);
	return 0;
}

int vnetd_opts_parse(int argc, char **argv, struct vnetd_opts *o)
{
	int ret;

	o->log_level = VHOST_LOG_INFO;
	o->port.socket_gid = (gid_t)-1;
	o->port.socket_mode = 0600;
	o->port.packed = true;
	ret = opts_read(argc, argv, o);
	if (ret)
		return ret;
	if (vnetd_sandbox.off && vnetd_sandbox.user)
		return vnetd_usage_error("--user is part of the sandbox: not with --no-sandbox");

	if (o->agent.ntaps) {
		if (o->takeover || o->detach || o->release_missing ||
		    o->takeover_socket[0])
			return vnetd_usage_error(
				"--takeover, --detach, --release-missing and --takeover-socket are for the datapath's ports, not --agent");
		return agent_finish(o);
	}
	if (o->have_agent_opts)
		return vnetd_usage_error("--agent-interval, --agent-max-rate and --agent-hold go with --agent TAP");
	ret = vnetd_ports_collect(o);
	if (ret)
		return ret;
	if (o->detach && !o->takeover)
		return vnetd_usage_error("--detach goes with --takeover");
	if (o->release_missing && !o->takeover)
		return vnetd_usage_error(
			"--release-missing goes with --takeover");
	if (!o->takeover_socket[0])
		snprintf(o->takeover_socket, sizeof(o->takeover_socket),
			 "%s/%s.takeover", VNETD_TAKEOVER_DIR, o->ports[0].tap);
	return vnetd_ports_check(o);
}
