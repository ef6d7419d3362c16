/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * vnetd --agent: attach mode's helper (docs/coalesce.md, "The vnetd
 * agent").  For taps that kernel vhost-net (or QEMU) drives and that
 * `vnetctl attach` attached, it pushes the BPF policy's guest-TX
 * recommendation to tun's own rx-frames, with hysteresis and a bound on
 * the changes per second, and publishes what it does in the info map.
 */
#ifndef VNETD_AGENT_H
#define VNETD_AGENT_H

#define VNETD_AGENT_MAX_TAPS 64

/* defaults and ranges of the options */
#define VNETD_AGENT_INTERVAL_MS 100 /* --agent-interval */
#define VNETD_AGENT_INTERVAL_MIN 10
#define VNETD_AGENT_INTERVAL_MAX 10000
#define VNETD_AGENT_MAX_RATE 2      /* --agent-max-rate: changes per second */
#define VNETD_AGENT_MAX_RATE_MAX 100
#define VNETD_AGENT_HOLD 3          /* --agent-hold: consecutive samples */
#define VNETD_AGENT_HOLD_MAX 1000

/* a change is due when it moves rx-frames by 25 % and by 2 frames at least */
#define VNETD_AGENT_STEP_PCT 25
#define VNETD_AGENT_STEP_MIN 2

struct vnetd_agent_opts {
	const char *taps[VNETD_AGENT_MAX_TAPS];
	unsigned int ntaps;
	const char *netns;        /* NULL: this network namespace */
	unsigned int interval_ms; /* sampling period */
	unsigned int max_rate;    /* changes per second per tap, at most */
	unsigned int hold;        /* samples a change must be due for */
};

/*
 * Run the agent until SIGINT/SIGTERM arrive on signal fd SFD (blocked
 * signals).  Returns the exit status: 0 after a signal, 1 when a tap
 * cannot be driven at startup (not attached, gone, served by vnetd; the
 * message names the fix).
 */
int vnetd_agent_run(const struct vnetd_agent_opts *o, int sfd);

/* what vnetd (and vnetd --agent) log on SIGHUP, and go on serving */
#define VNETD_SIGHUP_WARNING \
	"SIGHUP: reload is not supported; vnetd keeps serving with the configuration it started with (SIGTERM stops it; restart it to change its configuration)"

#endif
