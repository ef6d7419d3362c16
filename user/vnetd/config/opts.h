/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * vnetd's command line (opts.c): the option table, --port specs and
 * --config files, checked and turned into one configuration per port.
 */
#ifndef VNETD_OPTS_H
#define VNETD_OPTS_H

#include "agent/agent.h"
#include "port/port.h"

#define VNETD_VERSION "0.1.0"

#define VNETD_EXIT_STARTUP 1
#define VNETD_EXIT_USAGE 2
/*
 * Ports one vnetd serves at most.  What a port costs one vnetd (idle RSS,
 * start-up, wake-ups: docs/benchmarks.md, "vnetd's cost per port") grows
 * with the count and no more; this bounds the tables here and the
 * hand-over's HELLO (record.h).  More than that: more vnetd, e.g. one per
 * VM (vnetd@.service).
 */
#define VNETD_MAX_PORTS 1024
#define VNETD_MAX_PORTS_FIX "run more than one vnetd, e.g. one per VM (vnetd@.service)"

struct vnetd_opts {
	struct vnetd_port_opts port;	/* shared by every port */
	int log_level;
	/* --socket/--tap and the defaults for every port */
	struct vnetd_port_cfg main;
	bool have_socket, have_tap, have_queues, have_client;
	bool have_netns, have_cpus;
	/* --port and --config, parsed after the defaults they may take */
	const char *specs[VNETD_MAX_PORTS], *configs[VNETD_MAX_PORTS];
	unsigned int nspecs, nconfigs;
	unsigned int nports;
	struct vnetd_port_cfg ports[VNETD_MAX_PORTS];
	/* where each port came from, for messages */
	char origin[VNETD_MAX_PORTS][64];
	/* --agent mode (agent.c) */
	struct vnetd_agent_opts agent;
	bool have_agent_opts;
	/*
	 * the hand-over (handover.c): --takeover, --detach,
	 * --release-missing, --takeover-socket
	 */
	bool takeover, detach, release_missing;
	char takeover_socket[108];
};

/* the hand-over socket's default: in /run/vnet, named after the first tap */
#define VNETD_TAKEOVER_DIR VNETD_RUN_DIR

/*
 * Parse and check the command line into O.  0: run; -1: --help or
 * --version was printed (exit 0); else VNETD_EXIT_USAGE, after a message
 * on stderr that names the option and the fix.
 */
int vnetd_opts_parse(int argc, char **argv, struct vnetd_opts *o);

/* portcfg.c: the ports' keys, --port and --config (for opts.c) */
int vnetd_usage_error(const char *fmt, ...)
	__attribute__((format(printf, 1, 2)));
bool vnetd_parse_uint(const char *s, unsigned long min, unsigned long max,
		      unsigned long *v);
bool vnetd_parse_cpus(const char *s, struct vnetd_port_cfg *c, char *why,
		      size_t len);
bool vnetd_tap_name_ok(const char *s);
int vnetd_port_kv(struct vnetd_port_cfg *c, char *tok, const char *where,
		  unsigned int *got);
int vnetd_port_add(struct vnetd_opts *o, const struct vnetd_port_cfg *c,
		   const char *where);
int vnetd_parse_port_spec(struct vnetd_opts *o, const char *spec);
int vnetd_parse_config(struct vnetd_opts *o, const char *path);
/* every port from the options (--socket/--tap, --port, --config) */
int vnetd_ports_collect(struct vnetd_opts *o);
/* no socket or tap used by two ports */
int vnetd_ports_check(const struct vnetd_opts *o);

#endif
