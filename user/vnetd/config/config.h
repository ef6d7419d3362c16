/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * vnetd's configuration, as the command line (opts.c), --port specs and
 * --config files (portcfg.c) give it: one configuration per port, checked.
 */
#ifndef VNETD_CONFIG_H
#define VNETD_CONFIG_H

#include "agent/agent.h"
#include "port/port.h"
#include "base/util.h"

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
#define VNETD_MAX_PORTS_FIX                                                    \
	"run more than one vnetd, e.g. one per VM (vnetd@.service)"

struct vnetd_opts {
	struct vnetd_port_opts port; /* shared by every port */
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

#endif
