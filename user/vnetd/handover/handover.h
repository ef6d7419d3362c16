/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * The live hand-over of every port to a new vnetd (handover.c, docs/
 * vnetd.md "Hand-over"): the running vnetd waits on a unix socket; a
 * `vnetd --takeover` with the same ports connects, gets each port's tap
 * queues, netns and socket, sets itself up around them while the running
 * one serves on, then gets each device's state (the running one freezes
 * its rings between two bursts for it) and the frontends' connections,
 * imports and checks them, and says so; only then does the running one
 * let go and exit 0, and the new one start the rings.  Until that commit,
 * a failure on either side leaves the running one serving.
 */
#ifndef VNETD_HANDOVER_H
#define VNETD_HANDOVER_H

#include "port/port.h"
#include "server.h"

/*
 * The running vnetd's side.  Listen on PATH (its directory created, a
 * stale socket replaced; mode 0600): the fd, or -errno (logged).
 */
int vnetd_handover_listen(const char *path);
/*
 * A vnetd connected to LFD: hand the NPORTS ports over if it asks for
 * these (in any order; those it lacks are stopped at the commit if it
 * agrees, those it adds it sets up).  1: they are its now (release the
 * server and the ports not ->gone, without cleanup, and exit); 0: no
 * hand-over happened, everything is served as before (the reason logged).
 */
int vnetd_handover_serve(int lfd, struct vhost_server *srv,
			 struct vnetd_port *ports, unsigned int nports);
/* At a normal exit: remove PATH if it is still LFD's socket. */
void vnetd_handover_unlisten(int lfd, const char *path);

/*
 * The new vnetd's side: take PORTS (vnetd_port_init()ed, nothing open)
 * over from the vnetd waiting at PATH (or, with TAP_DIR, at
 * TAP_DIR/TAP.takeover of any of the ports) and serve them on SRV.  A
 * port the running vnetd had closed (its tap or netns gone) is set up
 * anew after the commit, or stays closed (->gone, logged).  A port it
 * does not serve is set up anew before the freeze (one that cannot be
 * fails the hand-over); its ports that PORTS lack it stops at the commit
 * with RELEASE_OK (--release-missing), else the hand-over is refused.
 * Queued behind another hand-over that went through, it takes over from
 * that one's new vnetd.  0, or -errno with the reason logged and in WHY:
 * nothing of the running vnetd's was touched, it serves on.
 */
/*
 * Hand-overs to one directory of hand-over sockets go one at a time: an
 * flock(2) of PATH's directory, taken (waited for, bounded and logged)
 * before vnetd_handover_take() and held until this vnetd listens in its
 * turn (vnetd_handover_listen()), so that the next --takeover connects to
 * this one.  The fd to close then, or -errno (no such directory).
 */
int vnetd_handover_lock(const char *path);
int vnetd_handover_take(const char *path, const char *tap_dir, bool release_ok,
			struct vhost_server *srv, struct vnetd_port *ports,
			unsigned int nports, char *why, size_t wlen);

#endif /* VNETD_HANDOVER_H */
