// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* vhost-user event loop: unix sockets and epoll (see server.h). */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/timerfd.h>

#include "dev_state.h"
#include "log.h"
#include "server.h"
#include "vhost_user.h"

enum ep_kind {
	EP_LISTEN = 1,
	EP_CONN,
	EP_TIMER,
};

#define DEFAULT_MODE 0600
#define DEFAULT_BACKOFF_MIN_MS 100
#define DEFAULT_BACKOFF_MAX_MS 5000
#define LISTEN_BACKLOG 8

static int ep_add(struct vhost_server *srv, int fd, struct vhost_ep_item *it)
{
	struct epoll_event ev = { .events = EPOLLIN, .data.ptr = it };

	if (epoll_ctl(srv->epfd, EPOLL_CTL_ADD, fd, &ev))
		return -errno;
	return 0;
}

static void ep_del(struct vhost_server *srv, int fd)
{
	if (fd >= 0)
		epoll_ctl(srv->epfd, EPOLL_CTL_DEL, fd, NULL);
}

int vhost_server_init(struct vhost_server *srv)
{
	memset(srv, 0, sizeof(*srv));
	srv->epfd = epoll_create1(EPOLL_CLOEXEC);
	return srv->epfd < 0 ? -errno : 0;
}

static void sockaddr_fill(struct sockaddr_un *sa, const char *path)
{
	memset(sa, 0, sizeof(*sa));
	sa->sun_family = AF_UNIX;
	/* the length was checked by vhost_server_add_port() */
	memcpy(sa->sun_path, path, strlen(path) + 1);
}

/*
 * Something is at PATH.  A socket nobody listens on is what a crashed
 * backend leaves behind: remove it.  A live socket belongs to another
 * process, and anything else is not ours to delete.
 */
static int stale_socket_remove(const char *path)
{
	struct sockaddr_un sa;
	struct stat st;
	int fd, ret;

	if (lstat(path, &st))
		return errno == ENOENT ? 0 : -errno;
	if (!S_ISSOCK(st.st_mode)) {
		vhost_err("%s exists and is not a socket", path);
		return -EEXIST;
	}
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0)
		return -errno;
	sockaddr_fill(&sa, path);
	ret = connect(fd, (struct sockaddr *)&sa, sizeof(sa));
	if (!ret || errno == EAGAIN) {
		close(fd);
		vhost_err("%s: another process is listening there", path);
		return -EADDRINUSE;
	}
	ret = errno;
	close(fd);
	if (ret != ECONNREFUSED && ret != ENOENT)
		return -ret;
	if (unlink(path) && errno != ENOENT)
		return -errno;
	vhost_info("%s: removed a stale socket", path);
	return 0;
}

/*
 * The socket file has its mode from the moment bind() creates it: Linux
 * gives the new inode the socket's own mode (fchmod() before bind())
 * minus the umask.  No path is changed afterwards: a chmod() by name
 * would follow whatever another process put at the path in between (a
 * symlink to a file of its choice).  A umask that takes bits away from
 * MODE can only make the socket stricter; it is not changed here because
 * it belongs to the whole process, every thread included.
 */
static int port_listen(struct vhost_port *port)
{
	struct sockaddr_un sa;
	int fd, ret;

	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0)
		return -errno;
	if (fchmod(fd, port->mode)) {
		ret = -errno;
		goto err_close;
	}
	sockaddr_fill(&sa, port->path);
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa))) {
		ret = -errno;
		if (ret != -EADDRINUSE)
			goto err_close;
		ret = stale_socket_remove(port->path);
		if (ret)
			goto err_close;
		if (bind(fd, (struct sockaddr *)&sa, sizeof(sa))) {
			ret = -errno;
			goto err_close;
		}
	}
	port->unlink_on_close = true;
	if (listen(fd, LISTEN_BACKLOG)) {
		ret = -errno;
		goto err_unlink;
	}
	port->listen_fd = fd;
	return 0;

err_unlink:
	unlink(port->path);
	port->unlink_on_close = false;
err_close:
	close(fd);
	vhost_err("%s: cannot listen: %s", port->path, strerror(-ret));
	return ret;
}

static void port_attach(struct vhost_port *port, int fd)
{
	struct vhost_server *srv = port->srv;
	int ret;

	ret = vhost_dev_attach(port->dev, fd);
	if (ret) {
		vhost_err("%s: cannot take the connection: %s", port->path,
			  strerror(-ret));
		close(fd);
		return;
	}
	ret = ep_add(srv, fd, &port->conn_item);
	if (ret) {
		vhost_err("%s: epoll: %s", port->path, strerror(-ret));
		vhost_dev_disconnect(port->dev);
	}
}

static void timer_arm(struct vhost_port *port, unsigned int ms)
{
	struct itimerspec its = {
		.it_value.tv_sec = ms / 1000,
		.it_value.tv_nsec = (long)(ms % 1000) * 1000000L,
	};

	if (timerfd_settime(port->timer_fd, 0, &its, NULL))
		vhost_err("%s: reconnect timer: %s", port->path,
			  strerror(errno));
}

static void port_connect(struct vhost_port *port)
{
	struct sockaddr_un sa;
	int fd, err;

	if (vhost_dev_connected(port->dev))
		return;
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0) {
		err = errno;
		goto retry;
	}
	sockaddr_fill(&sa, port->path);
	/* a unix connect completes at once, or EAGAIN when the backlog is full */
	if (!connect(fd, (struct sockaddr *)&sa, sizeof(sa))) {
		port->backoff_ms = port->backoff_min_ms;
		port_attach(port, fd);
		return;
	}
	err = errno;
	close(fd);
retry:
	/* the first failure is news; the retries are not */
	vhost_log(port->backoff_ms == port->backoff_min_ms ? VHOST_LOG_INFO :
							     VHOST_LOG_DEBUG,
		  "%s: connect: %s; retrying in %u ms", port->path,
		  strerror(err), port->backoff_ms);
	timer_arm(port, port->backoff_ms);
	if (port->backoff_ms < port->backoff_max_ms / 2)
		port->backoff_ms *= 2;
	else
		port->backoff_ms = port->backoff_max_ms;
}

/* The connection is gone or must go: reset the device, wait for the next. */
static void port_drop(struct vhost_port *port)
{
	ep_del(port->srv, port->dev->fd);
	vhost_dev_disconnect(port->dev);
	if (port->client) {
		port->backoff_ms = port->backoff_min_ms;
		timer_arm(port, port->backoff_ms);
	}
}

static void port_accept(struct vhost_port *port)
{
	int fd;

	fd = accept4(port->listen_fd, NULL, NULL,
		     SOCK_CLOEXEC | SOCK_NONBLOCK);
	if (fd < 0) {
		if (errno != EAGAIN && errno != EINTR && errno != ECONNABORTED)
			vhost_err("%s: accept: %s", port->path,
				  strerror(errno));
		return;
	}
	/* one frontend per port: a second one is told so by EOF at once */
	if (vhost_dev_connected(port->dev)) {
		vhost_warn("%s: a frontend is already connected, refusing another",
			   port->path);
		close(fd);
		return;
	}
	port_attach(port, fd);
}

static void port_free(struct vhost_port *port)
{
	struct vhost_server *srv = port->srv;

	if (vhost_dev_connected(port->dev)) {
		ep_del(srv, port->dev->fd);
		vhost_dev_disconnect(port->dev);
	}
	if (port->listen_fd >= 0) {
		ep_del(srv, port->listen_fd);
		close(port->listen_fd);
	}
	if (port->unlink_on_close)
		unlink(port->path);
	if (port->timer_fd >= 0) {
		ep_del(srv, port->timer_fd);
		close(port->timer_fd);
	}
	free(port);
}

int vhost_server_add_port(struct vhost_server *srv, struct vhost_dev *dev,
			  const struct vhost_port_cfg *cfg)
{
	struct vhost_port *port, **ports;
	int ret;

	if (!cfg->path || !*cfg->path || !dev)
		return -EINVAL;
	if (strlen(cfg->path) >= sizeof(port->path))
		return -ENAMETOOLONG;
	port = calloc(1, sizeof(*port));
	if (!port)
		return -ENOMEM;
	port->srv = srv;
	port->dev = dev;
	memcpy(port->path, cfg->path, strlen(cfg->path) + 1);
	port->client = cfg->client;
	port->mode = cfg->mode ? cfg->mode : DEFAULT_MODE;
	port->listen_fd = -1;
	port->timer_fd = -1;
	port->backoff_min_ms = cfg->backoff_min_ms ? cfg->backoff_min_ms :
						     DEFAULT_BACKOFF_MIN_MS;
	port->backoff_max_ms = cfg->backoff_max_ms ? cfg->backoff_max_ms :
						     DEFAULT_BACKOFF_MAX_MS;
	if (port->backoff_max_ms < port->backoff_min_ms)
		port->backoff_max_ms = port->backoff_min_ms;
	port->backoff_ms = port->backoff_min_ms;
	port->listen_item = (struct vhost_ep_item){ EP_LISTEN, port };
	port->conn_item = (struct vhost_ep_item){ EP_CONN, port };
	port->timer_item = (struct vhost_ep_item){ EP_TIMER, port };

	ports = realloc(srv->ports, (srv->nports + 1) * sizeof(*ports));
	if (!ports) {
		ret = -ENOMEM;
		goto err_free;
	}
	srv->ports = ports;

	if (port->client) {
		port->timer_fd = timerfd_create(CLOCK_MONOTONIC,
						TFD_NONBLOCK | TFD_CLOEXEC);
		if (port->timer_fd < 0) {
			ret = -errno;
			goto err_free;
		}
		ret = ep_add(srv, port->timer_fd, &port->timer_item);
		if (ret)
			goto err_port;
	} else if (cfg->adopt) {
		/* taken over: the file is ours to remove once we let go */
		port->listen_fd = cfg->adopt_fd;
		port->unlink_on_close = true;
		ret = ep_add(srv, port->listen_fd, &port->listen_item);
		if (ret)
			goto err_port;
	} else {
		ret = port_listen(port);
		if (ret)
			goto err_free;
		ret = ep_add(srv, port->listen_fd, &port->listen_item);
		if (ret)
			goto err_port;
	}
	srv->ports[srv->nports++] = port;
	if (cfg->adopt && cfg->adopt_conn >= 0)
		return 0; /* the caller adds the connection it imported */
	if (port->client)
		port_connect(port);
	else if (!cfg->adopt)
		vhost_info("%s: listening", port->path);
	return 0;

err_port:
	port_free(port);
	return ret;
err_free:
	free(port);
	return ret;
}

static struct vhost_port *port_of(struct vhost_server *srv,
				   const struct vhost_dev *dev)
{
	unsigned int i;

	for (i = 0; i < srv->nports; i++)
		if (srv->ports[i]->dev == dev)
			return srv->ports[i];
	return NULL;
}

int vhost_server_listen_fd(struct vhost_server *srv,
			   const struct vhost_dev *dev)
{
	struct vhost_port *port = port_of(srv, dev);

	return port ? port->listen_fd : -1;
}

int vhost_server_freeze_port(struct vhost_server *srv, struct vhost_dev *dev,
			     int *listen_fd, int *conn)
{
	struct vhost_port *port = port_of(srv, dev);
	int ret;

	if (!port)
		return -ENOENT;
	*listen_fd = port->listen_fd;
	*conn = -1;
	if (vhost_dev_connected(dev)) {
		ret = vhost_dev_freeze(dev);
		if (ret)
			return ret;
		ep_del(srv, dev->fd);
		*conn = dev->fd;
	}
	/* a frontend that connects meanwhile waits in the backlog */
	ep_del(srv, port->listen_fd);
	ep_del(srv, port->timer_fd);
	return 0;
}

void vhost_server_thaw_port(struct vhost_server *srv, struct vhost_dev *dev)
{
	struct vhost_port *port = port_of(srv, dev);

	if (!port)
		return;
	if (port->listen_fd >= 0 &&
	    ep_add(srv, port->listen_fd, &port->listen_item))
		vhost_err("%s: epoll: %s", port->path, strerror(errno));
	if (port->timer_fd >= 0 &&
	    ep_add(srv, port->timer_fd, &port->timer_item))
		vhost_err("%s: epoll: %s", port->path, strerror(errno));
	if (!vhost_dev_connected(dev))
		return;
	vhost_dev_thaw(dev);
	if (ep_add(srv, dev->fd, &port->conn_item)) {
		vhost_err("%s: epoll: %s", port->path, strerror(errno));
		port_drop(port);
		return;
	}
	/* what the frontend sent meanwhile */
	if (vhost_dev_handle_input(dev) < 0)
		port_drop(port);
}

int vhost_server_adopt_port(struct vhost_server *srv, struct vhost_dev *dev,
			    const struct vhost_port_cfg *cfg, int listen_fd,
			    int conn)
{
	struct vhost_port *port;
	int ret;

	/* a server port's socket is the one taken over, not a new one */
	if (!cfg->client && listen_fd < 0)
		return -EBADF;
	ret = vhost_server_add_port(srv, dev, &(struct vhost_port_cfg){
		.path = cfg->path, .client = cfg->client, .mode = cfg->mode,
		.backoff_min_ms = cfg->backoff_min_ms,
		.backoff_max_ms = cfg->backoff_max_ms, .adopt_fd = listen_fd,
		.adopt_conn = conn, .adopt = true });
	if (ret)
		return ret;
	port = port_of(srv, dev);
	if (conn >= 0 && ep_add(srv, conn, &port->conn_item)) {
		ret = -errno;
		vhost_err("%s: epoll: %s", port->path, strerror(errno));
		port_drop(port);
		return ret;
	}
	return 0;
}

/* the port array (its ports freed by the caller) and the epoll fd gone */
static void server_drop(struct vhost_server *srv)
{
	free(srv->ports);
	srv->ports = NULL;
	srv->nports = 0;
	if (srv->epfd >= 0)
		close(srv->epfd);
	srv->epfd = -1;
}

void vhost_server_release(struct vhost_server *srv)
{
	unsigned int i;

	for (i = 0; i < srv->nports; i++) {
		struct vhost_port *port = srv->ports[i];

		if (port->listen_fd >= 0)
			close(port->listen_fd);
		if (port->timer_fd >= 0)
			close(port->timer_fd);
		vhost_dev_release(port->dev);
		free(port);
	}
	server_drop(srv);
}

int vhost_server_remove_port(struct vhost_server *srv, struct vhost_dev *dev)
{
	unsigned int i;

	for (i = 0; i < srv->nports; i++) {
		if (srv->ports[i]->dev != dev)
			continue;
		port_free(srv->ports[i]);
		memmove(&srv->ports[i], &srv->ports[i + 1],
			(srv->nports - i - 1) * sizeof(srv->ports[0]));
		srv->nports--;
		return 0;
	}
	return -ENOENT;
}

static void handle_event(struct vhost_ep_item *it)
{
	struct vhost_port *port = it->port;
	uint64_t v;
	int ret;

	switch (it->kind) {
	case EP_LISTEN:
		port_accept(port);
		break;
	case EP_TIMER:
		if (read(port->timer_fd, &v, sizeof(v)) == sizeof(v))
			port_connect(port);
		break;
	case EP_CONN:
		/* a previous event of this batch may have dropped it */
		if (!vhost_dev_connected(port->dev))
			break;
		/* on EPOLLHUP/EPOLLERR the read finds EOF or the error */
		ret = vhost_dev_handle_input(port->dev);
		if (ret < 0)
			port_drop(port);
		break;
	}
}

int vhost_server_poll(struct vhost_server *srv, int timeout_ms)
{
	struct epoll_event ev[16];
	int n, i;

	n = epoll_wait(srv->epfd, ev, sizeof(ev) / sizeof(ev[0]), timeout_ms);
	if (n < 0)
		return errno == EINTR ? 0 : -errno;
	for (i = 0; i < n; i++)
		handle_event(ev[i].data.ptr);
	return n;
}

void vhost_server_cleanup(struct vhost_server *srv)
{
	unsigned int i;

	for (i = 0; i < srv->nports; i++)
		port_free(srv->ports[i]);
	server_drop(srv);
}
