// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * vnetctl: the operator's command line for vnet.
 *
 *   vnetctl [OPTIONS] COMMAND [ARGS]
 *
 * Commands live in a {name, handler, synopsis, help} table; unambiguous
 * prefixes are accepted; --help and `help COMMAND` come from the same table.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "libvnet.h"
#include "base/out.h"
#include "base/util.h"
#include "exporter/exporter.h"
#include "attach.h"
#include "coalesce.h"
#include "gc.h"
#include "guard.h"
#include "limit.h"
#include "stats.h"
#include "status.h"

static bool debug;

static int do_help(int argc, char **argv);

static const struct cmd cmds[] = {
	{ "attach", do_attach,
	  "DEV [--tx-hook tc|xdp] [--force] [--policy FILE.bpf.o] [--vm NAME] [--tc-attach tcx|clsact]",
	  "load vnet's classifier onto tap DEV and pin it",
	  "Load vnet's classifier and attach it to tap DEV: tc ingress (or XDP\n"
	  "with --tx-hook xdp) for frames the guest transmits, tc egress for\n"
	  "frames going to the guest.  Maps and links are pinned under\n"
	  "/sys/fs/bpf/vnet/DEV/ (mode 0700), so the attachment outlives the\n"
	  "command.  Attaching twice is a no-op (with --tx-hook naming the\n"
	  "other hook: an error that says how to switch).  With --tx-hook xdp, a foreign\n"
	  "XDP program on DEV is refused unless --force, which replaces it.\n"
	  "--vm NAME names the VM DEV belongs to (vm=\"NAME\" on every series of\n"
	  "DEV the exporter serves); on an attached DEV it renames only.\n",
	  attach_opts },
	{ "detach", do_detach, "DEV [--force]",
	  "detach vnet's programs from DEV and remove its pins",
	  "Detach vnet's programs from DEV and remove its pins.  When DEV is gone,\n"
	  "only the pins are removed.  Refused while a vnetd serves DEV (its\n"
	  "datapath, or vnetd --agent): the error names its pid.\n",
	  detach_opts },
	{ "status", do_status, "[DEV]", "show what is attached where",
	  "Show what is attached where: ifindex, whether the device is still\n"
	  "there, its network namespace, its VM, hooks with program and link\n"
	  "ids, XDP mode, queues seen.\n",
	  NULL },
	{ "stats", do_stats,
	  "[DEV] [--queue N] [--watch SECONDS [--count N]] | [DEV...] --prometheus",
	  "per queue, direction and class counters (and vnetd's datapath)",
	  "Per queue and direction (tx = from the guest, rx = to the guest),\n"
	  "packets and bytes of each class: urgent (TCP payload, no PSH), push\n"
	  "(TCP payload with PSH), ack (TCP without payload), other, malformed.\n"
	  "Without DEV: every attached device that is present (-j: an array).\n",
	  stats_opts },
	{ "gc", do_gc, "[--dry-run]",
	  "remove the pins of gone devices, and what no vnetd uses in /run/vnet",
	  "Remove the pins of devices that no longer exist, then in vnetd's\n"
	  "runtime directory /run/vnet: packed-ring journals (*.rings) that no\n"
	  "process maps or has open and whose socket path nobody listens on, and\n"
	  "hand-over sockets (*.takeover) nobody listens on (connect() refused).\n"
	  "A running vnetd's are never removed.  Prints what was removed.\n",
	  gc_opts },
	{ "coalesce", do_coalesce,
	  "show DEV | set DEV [queue N] PARAM VALUE... | set DEV tap rx-frames N",
	  "coalescing in ethtool's words: the guest NIC's and the tap's own",
	  "Coalescing in ethtool's words, two sets never mixed up (docs/coalesce.md).\n"
	  "The guest NIC's (virtio NOTF_COAL, a guest's 'ethtool -C eth0'), per\n"
	  "queue in the config map, applied live by vnetd:\n"
	  "  rx-usecs N, rx-frames N  RX notifications (frames 0-32768, usecs 0-100000)\n"
	  "  tx-usecs N, tx-frames N  TX completion notifications\n"
	  "  adaptive-rx on|off, adaptive-tx on|off  follow the BPF policy's\n"
	  "                           recommendation (docs/policy.md)\n"
	  "  min-frames N, max-frames N, min-usecs N, max-usecs N  its bounds\n"
	  "  tx-urgent-bypass on|off  urgent TX completions (TCP payload, no PSH)\n"
	  "                           signalled at once whatever the values say\n"
	  "  rx-push-bypass on|off    PSH frames for the guest signalled at once\n"
	  "  tx-hold auto|always, rx-hold auto|always  auto: hold a signal only\n"
	  "                           when holding batches something (the values\n"
	  "                           are its caps); always: the values' meaning\n"
	  "'set DEV queue N ...' sets queue N only, 'set DEV ...' every queue.\n"
	  "The tap's own, host-view rx-frames ('ethtool -C DEV rx-frames N', 0-64):\n"
	  "'set DEV tap rx-frames N' passes it to tun through ethtool netlink.\n"
	  "'show DEV' prints both (per queue where they differ), the live tap value\n"
	  "(a direct 'ethtool -C' shows), the notification rule per queue and\n"
	  "direction and why, the policy's recommendations and where\n"
	  "each parameter takes effect on DEV: vnetd, tun, or nowhere, and whether\n"
	  "a 'vnetd --agent DEV' drives the tap's rx-frames (pid, changes, rate).\n",
	  NULL },
	{ "limit", do_limit,
	  "show DEV | set DEV tx|rx [rate R] [burst B] [initial B] [pkts-rate N] [pkts-burst N] [pkts-initial N] | clear DEV [tx|rx]",
	  "a vnetd port's rate limits, in tc's words",
	  "Rate limits of the vnetd port on DEV, per direction (tx = from the\n"
	  "guest, rx = to the guest), each two token buckets (docs/limits.md):\n"
	  "  rate R          bytes: tc's rates, '100mbit', '12mbps', bits by default\n"
	  "  burst B         the byte bucket: tc's sizes, '256k' (default: 10 ms of\n"
	  "                  the rate, at least 64k; at least one 1514-byte frame)\n"
	  "  initial B       once, on top of the burst (a boot's downloads)\n"
	  "  pkts-rate N     frames per second ('10k'); pkts-burst N, pkts-initial N\n"
	  "Guest TX is held in the guest's ring while a bucket is empty (its\n"
	  "queue stops; nothing is dropped); guest RX waits in the tap's queue.\n"
	  "'set' replaces the direction's limit whole and applies live; 'clear'\n"
	  "removes it (both directions without tx|rx).  'show' prints the limits\n"
	  "and how often and how long vnetd held each direction.\n",
	  NULL },
	{ "guard", do_guard,
	  "show DEV | set DEV [mac M] [ip LIST] [checks LIST] | clear DEV",
	  "spoofing protection on what the guest sends",
	  "Spoofing protection on frames the guest sends into DEV, in vnet's\n"
	  "guest-TX program (docs/limits.md); each refused frame is dropped and\n"
	  "counted by reason:\n"
	  "  mac M       the guest NIC's MAC: other source MACs are refused\n"
	  "  ip LIST     its addresses, ADDR[/PREFIX] separated by ',' (IPv4,\n"
	  "              IPv6; 'none'): other sources, ARP and neighbour\n"
	  "              advertisements for other addresses, frames neither\n"
	  "              IPv4, IPv6 nor ARP are refused\n"
	  "  checks LIST which checks, instead of what mac and ip turn on:\n"
	  "              mac, ip, arp, nd, dhcp, ra (DHCP/DHCPv6 server and\n"
	  "              router advertisement messages: always on by default)\n"
	  "'set' replaces the whole configuration, live; 'clear' turns every\n"
	  "check off; 'show' prints it with the drops by reason.\n",
	  NULL },
	{ "exporter", do_exporter, "--listen ADDR:PORT [--web-config FILE]",
	  "serve every attached device's counters to Prometheus over HTTP",
	  "A Prometheus exporter: an HTTP server on ADDR:PORT (:PORT: every\n"
	  "address; [ADDR]:PORT for IPv6) that answers GET /metrics with the\n"
	  "counters of 'stats --prometheus' for every attached device that is\n"
	  "present (read from the pins at each scrape; a gone device has no\n"
	  "series), vnet_build_info and vnet_device_up{device,netns}, and GET /\n"
	  "with a page that links there.  --web-config FILE: HTTPS, client\n"
	  "certificates and basic auth, in node_exporter's --web.config.file\n"
	  "format (tls_server_config: cert_file, key_file, client_auth_type,\n"
	  "client_ca_file; basic_auth_users: NAME: BCRYPT-HASH).  Runs until\n"
	  "SIGINT or SIGTERM (docs/metrics.md; systemd: vnet-exporter.service).\n",
	  exporter_opts },
	{ "help", do_help, "[COMMAND]", "show help for COMMAND",
	  "Show help for COMMAND.\n", NULL },
	{ NULL, NULL, NULL, NULL, NULL, NULL },
};

/* vnetctl's own options, before the command */
static const struct cli_opt global_opts[] = {
	{ "json", 'j', NULL, "JSON output (errors too: {\"error\": ...})" },
	{ "pretty", 'p', NULL, "indented JSON (implies -j)" },
	{ "netns", 'n', "NAME", "the device is in network namespace NAME" },
	{ "debug", 'd', NULL, "print libbpf's messages (verifier log)" },
	{ "help", 'h', NULL, "this help" },
	{ "version", 'V', NULL, "version (with -j: JSON, the schema version too)" },
	{ NULL, 0, NULL, NULL },
};

static void usage(FILE *f)
{
	const struct cmd *c;

	fprintf(f,
		"Usage: %s [OPTIONS] COMMAND [ARGS]\n"
		"\n"
		"Commands:\n",
		prog_name);
	for (c = cmds; c->name; c++)
		fprintf(f, *c->synopsis ? "  %-8s %s\n%11s%s\n" : "  %s%s\n%11s%s\n",
			c->name, c->synopsis, "", c->summary);
	fputs("\nOptions:\n", f);
	cli_opts_help(f, global_opts);
	fprintf(f, "\n'%s help COMMAND' explains a command; see vnetctl(8).\n",
		prog_name);
}

/* "Error: unknown|ambiguous command 'X'" (listing what X could be) */
static int cmd_unknown(const char *name, bool ambiguous)
{
	const struct cmd *c;
	size_t n = strlen(name), off = 0;
	char could[256] = "";
	int k = 0;

	if (ambiguous) {
		off += (size_t)snprintf(could, sizeof(could), ": could be");
		for (c = cmds; c->name && off < sizeof(could); c++)
			if (!strncmp(c->name, name, n))
				off += (size_t)snprintf(could + off, sizeof(could) - off,
							"%s %s", k++ ? "," : "", c->name);
	}
	return cli_usage(NULL, "%s command '%s'%s; try '%s --help'",
			 ambiguous ? "ambiguous" : "unknown", name, could,
			 prog_name);
}

static void cmd_help(FILE *f, const struct cmd *c)
{
	fprintf(f, "Usage: %s %s %s\n\n%s", prog_name, c->name, c->synopsis,
		c->help);
	cli_opts_help(f, c->opts);
}

static int do_help(int argc, char **argv)
{
	const struct cmd *c;
	bool amb;

	if (argc < 2) {
		usage(stdout);
		return 0;
	}
	c = cli_find_cmd(argv[1], &amb);
	if (!c)
		return cmd_unknown(argv[1], amb);
	cmd_help(stdout, c);
	return 0;
}

/* --help or -h after the command */
static bool wants_help(int argc, char **argv)
{
	for (int i = optind + 1; i < argc; i++)
		if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h"))
			return true;
	return false;
}

/* -V: vnetctl's version, the ABI's and the JSON schema's */
static void print_version(void)
{
	if (out_json)
		printf(out_pretty ?
			       "{\n  \"name\": \"%s\",\n  \"version\": \"%s\",\n  \"abi\": %d,\n  \"json_schema\": %d\n}\n" :
			       "{\"name\":\"%s\",\"version\":\"%s\",\"abi\":%d,\"json_schema\":%d}\n",
		       prog_name, VNET_VERSION, VNET_ABI_VERSION,
		       VNETCTL_JSON_SCHEMA);
	else
		printf("%s %s (vnet ABI %d, JSON schema %d)\n",
		       prog_name, VNET_VERSION, VNET_ABI_VERSION,
		       VNETCTL_JSON_SCHEMA);
}

/* The options before the command: -1 to go on, or the exit status. */
static int parse_global(int argc, char **argv, const char **netns)
{
	int opt;

	/* '+': stop at the command; its own options are parsed by it */
	opterr = 0; /* one message per mistake: ours */
	while ((opt = cli_getopt(argc, argv, global_opts, "+")) != -1) {
		switch (opt) {
		case 'j':
			out_json = true;
			break;
		case 'p':
			out_json = out_pretty = true;
			break;
		case 'n':
			*netns = optarg;
			break;
		case 'd':
			debug = true;
			break;
		case 'h':
			usage(stdout);
			return 0;
		case 'V':
			print_version();
			return 0;
		case ':':
			return cli_usage(NULL, "option '%s' needs a value; try '%s --help'",
					 argv[optind - 1], prog_name);
		default:
			return cli_usage(NULL, "unknown option '%s'; try '%s --help'",
					 argv[optind - 1], prog_name);
		}
	}
	return -1;
}

/*
 * Commands that read pins, where /sys/fs/bpf is no bpffs: under `ip
 * netns exec` (a private /sys), in another private mount namespace,
 * or not mounted at all: say which and the fix rather than "not
 * attached".  attach mounts bpffs itself; help needs none; gc has
 * /run/vnet to clean all the same where nothing is pinned.  0, or the
 * exit status.
 */
static int bpffs_check_for(const struct cmd *c, int argc, char **argv)
{
	struct vnet_err err = {};
	int ret;

	if (c->fn == do_attach || c->fn == do_help || c->fn == do_exporter ||
	    wants_help(argc, argv))
		return 0;
	ret = vnet_bpffs_check(&err);
	if (ret == -ENOTSUP || (ret && c->fn != do_gc))
		return cli_error("%s", err.msg);
	return 0;
}

int main(int argc, char **argv)
{
	const char *netns = NULL;
	const struct cmd *c;
	struct vnet_err err = {};
	bool amb;
	int ret;

	cli_cmds = cmds;
	ret = parse_global(argc, argv, &netns);
	if (ret >= 0)
		return ret;
	if (optind >= argc) {
		cli_usage(NULL, "no command given");
		usage(stderr);
		return EXIT_USAGE;
	}
	c = cli_find_cmd(argv[optind], &amb);
	if (!c)
		return cmd_unknown(argv[optind], amb);
	/* libbpf's warnings are turned into our own errors */
	vnet_libbpf_log(debug ? stderr : NULL);
	if (netns && vnet_netns_enter(netns, &err))
		return cli_error("%s", err.msg);
	ret = bpffs_check_for(c, argc, argv);
	if (ret)
		return ret;

	argc -= optind;
	argv += optind;
	optind = 0; /* 0, not 1: makes GNU getopt forget the "+" of the global parse */
	/* `vnetctl attach --help` */
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
			cmd_help(stdout, c);
			return 0;
		}
	}
	return c->fn(argc, argv);
}
