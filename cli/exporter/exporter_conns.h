/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * The exporter's connection table (exporter_conns.c), which closes a
 * connection that has not sent a whole request within EXPORTER_IDLE_S of
 * its start or of its last answer, so that idle or trickling clients
 * cannot hold every slot.
 */
#ifndef VNETCTL_EXPORTER_CONNS_H
#define VNETCTL_EXPORTER_CONNS_H

#include <microhttpd.h>

/* seconds a connection may be without a request being answered */
#define EXPORTER_IDLE_S 5
/* connections at once, and from one address */
#define EXPORTER_CONN_MAX 1000
#define EXPORTER_CONN_PER_IP 128

/* MHD_OPTION_NOTIFY_CONNECTION: a connection opened or closed */
void conns_notify(void *cls, struct MHD_Connection *c, void **socket_context,
		  enum MHD_ConnectionNotificationCode code);
/* the connection is answering a request (from the access handler) */
void conns_busy(struct MHD_Connection *c);
/* MHD_OPTION_NOTIFY_COMPLETED: its answer is done (or failed) */
void conns_done(void *cls, struct MHD_Connection *c, void **req,
		enum MHD_RequestTerminationCode toe);
/* close (shutdown) every connection idle for EXPORTER_IDLE_S; how many */
int conns_reap(void);
/* the connections open now */
int conns_open(void);

#endif /* VNETCTL_EXPORTER_CONNS_H */
