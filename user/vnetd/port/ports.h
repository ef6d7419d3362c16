/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/* Every port at once (ports.c): prepared at start-up, closed at the stop. */
#ifndef VNETD_PORTS_H
#define VNETD_PORTS_H

struct vnetd_port;
struct vhost_server;

/*
 * After vhost_server_cleanup(): PORTS[0 .. N) closed (those not gone),
 * several at once.
 */
void vnetd_ports_close(struct vnetd_port *ports, unsigned int n);
/*
 * FN on each of the N PORTS (not gone) by up to 32 threads at once, this
 * one among them: work that waits in the kernel (RCU grace periods: tcx
 * links, maps of maps) overlaps.  FN touches only its port.
 */
void vnetd_ports_each(struct vnetd_port *ports, unsigned int n,
		      void (*fn)(struct vnetd_port *p));
/*
 * The N PORTS (initialised) opened: prepared side by side, then served in
 * order, *OPENED counting them.  -1 at the first that fails: the ports
 * before it are open (*OPENED of them), nothing of the others is left.
 */
int vnetd_ports_open(struct vnetd_port *ports, unsigned int n,
		     struct vhost_server *srv, unsigned int *opened);

#endif /* VNETD_PORTS_H */
