/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/* vnetd's stop: its ports closed several at once (close.c). */
#ifndef VNETD_CLOSE_H
#define VNETD_CLOSE_H

struct vnetd_port;

/*
 * After vhost_server_cleanup(): PORTS[0 .. N) closed (those not gone),
 * several at once.
 */
void vnetd_ports_close(struct vnetd_port *ports, unsigned int n);

#endif /* VNETD_CLOSE_H */
