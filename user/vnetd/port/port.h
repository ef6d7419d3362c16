/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * A port's life, on the control thread (port.c): its tap and netns, vnet's
 * programs and maps, the ethtool monitor, then the device and its queue
 * threads, then the socket; the way back; a tap or netns that went away.
 * A port holds one part per concern, each declared and run by its own
 * module (struct vnetd_port).
 */
#ifndef VNETD_PORT_H
#define VNETD_PORT_H

#include <stdbool.h>
#include <stddef.h>
#include <net/if.h>
#include <sys/types.h>
#include <sys/un.h>

#include "device.h"
#include "tap/tap_bpf.h"
#include "monitor.h"
#include "datapath/limit.h"
#include "datapath/qthread.h"
#include "server.h"
#include "tap/tap.h"
#include "base/util.h"

#define VNETD_BUSY_POLL_MAX_US 1000 /* --busy-poll's upper bound */

/* One port as configured (command line or --config). */
struct vnetd_port_cfg {
	char socket[sizeof(((struct sockaddr_un *)0)->sun_path)];
	char tap[IF_NAMESIZE];
	char netns[256];	/* "": the caller's namespace */
	unsigned int queues;
	bool client;
	unsigned int ncpus;
	int cpus[VNETD_MAX_QP * 4];
	/* tx-rate=, rx-burst=, ...: written to the limits map at start */
	struct vnet_limit limit[VNET_DIR_MAX];
	bool limit_set[VNET_DIR_MAX];
	/* mac=, ip=: spoofing protection, written to the guard map at start */
	struct vnet_guard guard;
	bool guard_set;
	/* vm=: the VM's name, written to the vm map at start */
	char vm[VNET_VM_NAME_MAX + 1];
	bool vm_set;
};

/* What every port of one vnetd shares (the command line). */
struct vnetd_port_opts {
	bool no_uring;		/* --no-uring */
	bool packed;		/* --packed: offer VIRTIO_F_RING_PACKED */
	unsigned int busy_poll_us; /* --busy-poll */
	gid_t socket_gid;	/* --socket-group; (gid_t)-1: vnetd's own */
	mode_t socket_mode;	/* --socket-mode (server sockets) */
	int tc_attach;          /* --tc-attach: VNET_TC_CLSACT or _TCX */
};

struct vnetd_port {
	const char *name;		/* log prefix: the socket path */
	struct vnetd_port_cfg cfg;
	struct vnetd_port_opts opts;
	bool gone;			/* its tap or netns went: port closed */
	int prepared;                   /* vnetd_ports_prepare(): 0 or -errno */

	struct vnetd_tap tap;		/* tap.c: the tap and its netns */
	struct vnetd_maps maps;		/* tap_bpf.c: programs, maps, steering */
	struct vnetd_monitor mon;	/* monitor.c: ethtool's notifications */
	struct vnetd_device device;	/* device.c: the vhost-user device */
	unsigned int nr_qp;		/* qp.c, qthread.c: the queue pairs */
	struct vnetd_qp qp[VNETD_MAX_QP];
	/* datapath/limit.c: the rate limits, shared by the queue pairs */
	struct vnetd_limit limit[VNET_DIR_MAX];
};

void vnetd_port_init(struct vnetd_port *p, const struct vnetd_port_cfg *c,
		     const struct vnetd_port_opts *o);

/* What a port is taken over with (handover.c): the other vnetd's. */
struct vnetd_port_adopt {
	int tap_fd[VNETD_MAX_QP];	/* its queues, taken */
	int netns_fd;			/* the tap's netns, taken; -1: none */
	uint64_t netns_ino;
	bool created, attached, single_queue;
	unsigned int mtu_orig;
	uint32_t steer;			/* its served RX rings */
};

/*
 * A port taken over from another vnetd: its tap queues, netns and pins as
 * they are, the queue pairs and their threads; no ring, no socket yet
 * (handover.c imports the device, then the server adopts the socket).
 * 0, and vnetd_port_release() lets go of it all later; or -errno
 * (logged), the fds closed, nothing else left.
 */
int vnetd_port_adopt(struct vnetd_port *p, const struct vnetd_port_adopt *a);
/*
 * Let go of P for another vnetd (the server released its socket and
 * device first): threads end, fds close; nothing is detached, reset,
 * removed or deleted.
 */
void vnetd_port_release(struct vnetd_port *p);
/* the directory of socket PATH into DIR ("." for a bare name) */
void vnetd_socket_dir(char *dir, size_t len, const char *path);
int vnetd_socket_precheck(const struct vnetd_port_cfg *c);
/*
 * Before any port is opened: refuses (-1, logged) a tap that vnetd would
 * create here while a named network namespace has one, no netns asked for.
 */
int vnetd_tap_precheck(const struct vnetd_port_cfg *c);
/*
 * A port opened: prepared (its tap, vnet's programs and maps, ethtool's
 * monitor; 0 or -errno with nothing left), then served (its queue pairs,
 * device and socket; a failure unprepares it).  Ports may be prepared
 * side by side, each in a thread of its own (vnetd_ports_each()); undo a
 * preparation that is not served with vnetd_port_unprepare().
 */
int vnetd_port_open(struct vnetd_port *p, struct vhost_server *srv);
int vnetd_port_prepare(struct vnetd_port *p);
void vnetd_port_unprepare(struct vnetd_port *p);
int vnetd_port_serve(struct vnetd_port *p, struct vhost_server *srv);
void vnetd_port_close(struct vnetd_port *p);
/*
 * vnetd_port_close() in two: every part but the pins (the port's netns
 * kept), then the pins if this vnetd attached them.
 */
void vnetd_port_close_taps(struct vnetd_port *p);
void vnetd_port_close_pins(struct vnetd_port *p);

/*
 * Every port of PORTS set up: the sandbox (sandbox.c) for their queue
 * threads and the control thread.  0 or -errno (logged).
 */
int vnetd_ports_sandbox_enter(const struct vnetd_port *ports,
			      unsigned int nports);

/* The control loop's: the monitor's fd is readable; the watchdog's tick. */
void vnetd_port_monitor_event(struct vnetd_port *p);
void vnetd_port_watchdog(struct vnetd_port *p);
bool vnetd_port_lost(struct vnetd_port *p, char *why, size_t len);
void vnetd_port_lose(struct vhost_server *srv, struct vnetd_port *p,
		     int epfd, const char *why);

#endif /* VNETD_PORT_H */
