/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * The event loop of the vhost-user backend: unix sockets, one frontend per
 * port at a time, epoll-driven message dispatch into struct vhost_dev.
 *
 *	struct vhost_server srv;
 *	vhost_server_init(&srv);
 *	vhost_dev_init(&dev, path, 2 * pairs, &net_ops, net);
 *	vhost_server_add_port(&srv, &dev, &(struct vhost_port_cfg){
 *		.path = path });
 *	for (;;)                           (or nest vhost_server_fd()
 *		vhost_server_poll(&srv, -1);   in another epoll set)
 *
 * Server mode (default) listens on the path: a stale socket left by a dead
 * process is replaced, a live one or a non-socket file is an error.  Client
 * mode connects to a listening frontend (QEMU "server=on") and reconnects
 * with exponential backoff whenever the connection is lost or refused.
 * A lost connection resets the device (vhost_dev_disconnect()) and the port
 * goes back to listening/reconnecting: the process never exits over it.
 *
 * All vhost_dev_ops callbacks run on the thread that runs the loop.
 */
#ifndef VNET_VHOST_SERVER_H
#define VNET_VHOST_SERVER_H

#include <stdbool.h>
#include <sys/types.h>
#include <sys/un.h>

#include "vhost_user.h"

struct vhost_port_cfg {
	const char *path;
	bool client;		/* connect instead of listen */
	mode_t mode;		/* server: socket file mode (minus the umask); 0 = 0600 */
	unsigned int backoff_min_ms; /* client: first retry; 0 = 100 */
	unsigned int backoff_max_ms; /* client: retry cap; 0 = 5000 */
	/* vhost_server_adopt_port()'s: the fds taken over */
	bool adopt;
	int adopt_fd, adopt_conn;
};

struct vhost_server;

/* epoll data: which fd of which port woke us */
struct vhost_ep_item {
	int kind;
	struct vhost_port *port;
};

struct vhost_port {
	struct vhost_server *srv;
	struct vhost_dev *dev;
	char path[sizeof(((struct sockaddr_un *)0)->sun_path)];
	bool client;
	bool unlink_on_close; /* we created the socket file */
	mode_t mode;
	int listen_fd;
	int timer_fd; /* client: reconnect timer */
	unsigned int backoff_ms, backoff_min_ms, backoff_max_ms;
	struct vhost_ep_item listen_item, conn_item, timer_item;
};

struct vhost_server {
	int epfd;
	unsigned int nports;
	struct vhost_port **ports;
};

int vhost_server_init(struct vhost_server *srv);
/* Disconnect every port, close and unlink the sockets we created. */
void vhost_server_cleanup(struct vhost_server *srv);

/*
 * Serve DEV on CFG->path.  Server mode: the socket listens when this
 * returns (0), or -EADDRINUSE (a live process listens there), -EEXIST (not
 * a socket), -ENAMETOOLONG, -errno.  Client mode: the first connection is
 * tried at once and retried in the background; 0 unless setup failed.
 */
int vhost_server_add_port(struct vhost_server *srv, struct vhost_dev *dev,
			  const struct vhost_port_cfg *cfg);

/*
 * Stop serving DEV: its frontend is disconnected (every ring stopped), its
 * socket closed and, in server mode, unlinked.  -ENOENT if not served.
 * Not from inside vhost_server_poll()'s callbacks.
 */
int vhost_server_remove_port(struct vhost_server *srv, struct vhost_dev *dev);

/*
 * A hand-over of DEV's port to another process (dev_state.h): the port no
 * longer accepts, reconnects or reads its connection (its fds leave the
 * epoll set) and DEV is frozen (vhost_dev_freeze()).  *LISTEN_FD and
 * *CONN are the port's (-1: none), to send: not to close.  -EAGAIN: a
 * message is half read, try again.  Thaw undoes it; messages the frontend
 * sent meanwhile are handled then.
 */
int vhost_server_freeze_port(struct vhost_server *srv, struct vhost_dev *dev,
			     int *listen_fd, int *conn);
/* The listening socket of DEV's port (server mode), or -1 */
int vhost_server_listen_fd(struct vhost_server *srv,
			   const struct vhost_dev *dev);
void vhost_server_thaw_port(struct vhost_server *srv, struct vhost_dev *dev);
/*
 * Serve DEV, imported from another process (vhost_dev_import() done, its
 * vhost_dev_import_end() too when CONN >= 0), on the listening socket
 * LISTEN_FD of CFG->path (server mode) and the frontend's connection CONN
 * (-1: none: listen or reconnect as a new port would).  0 or -errno.
 */
int vhost_server_adopt_port(struct vhost_server *srv, struct vhost_dev *dev,
			    const struct vhost_port_cfg *cfg, int listen_fd,
			    int conn);
/*
 * The hand-over happened: let go of every port without touching what the
 * other process serves now (no socket removed, no device reset, no
 * callback), and of the server.
 */
void vhost_server_release(struct vhost_server *srv);

/*
 * Wait up to TIMEOUT_MS (-1: forever) and handle what is ready.  Returns
 * the number of events handled, or -errno if epoll itself failed.
 */
int vhost_server_poll(struct vhost_server *srv, int timeout_ms);

/* The epoll fd, to nest the loop into another one (readable = work). */
static inline int vhost_server_fd(const struct vhost_server *srv)
{
	return srv->epfd;
}

#endif /* VNET_VHOST_SERVER_H */
