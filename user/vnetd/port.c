// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * A port's life, on the control thread: its tap, vnet's programs and maps
 * and the ethtool monitor (in the port's network namespace), then the
 * device and its queue threads, then the socket; the way back; and the
 * watch for a tap or a netns that went away under a running port.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/epoll.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <linux/if_tun.h>
#include <linux/virtio_net.h>

#include "vnetd.h"
#include "sandbox.h"

static void monitor_open(struct vnetd_port *p)
{
	struct vnet_err err = {};

	p->mon_fd = -1;
	if (vnet_ethtool_monitor_open(&p->mon, &err)) {
		pr_warn(p, "ethtool monitor unavailable (%s): a direct 'ethtool -C %s rx-frames N' will not reach vnetd",
			err.msg, p->cfg.tap);
		p->mon = NULL;
		return;
	}
	p->mon_fd = vnet_ethtool_monitor_fd(p->mon);
}

static void monitor_close(struct vnetd_port *p)
{
	vnet_ethtool_monitor_close(p->mon);
	p->mon = NULL;
	p->mon_fd = -1;
}

/* tun's rx-frames changed: it is vnetd's TX batch (every queue's entry). */
static void tap_rx_frames_set(struct vnetd_port *p, __u32 v)
{
	unsigned int q;

	for (q = 0; q < VNET_MAX_QUEUES; q++) {
		struct vnet_config *c = vnetd_config(p, q);

		if (__atomic_load_n(&c->tap_rx_frames, __ATOMIC_RELAXED) == v)
			continue;
		__atomic_store_n(&c->tap_rx_frames, v, __ATOMIC_RELAXED);
		__atomic_fetch_add(&c->gen, 1, __ATOMIC_RELEASE);
	}
	pr_info(p, "tap %s: rx-frames %u (ethtool): TX batch follows", p->cfg.tap,
		v);
}

/*
 * Enter the port's netns: the one it was opened in (held by fd, so that
 * it is reached even after its name was removed), else by name.
 */
static int port_ns_enter(struct vnetd_port *p, int *saved,
			 struct vnet_err *err)
{
	int ret;

	if (p->netns_fd < 0)
		return vnetd_netns_switch(p->cfg.netns, saved, err);
	ret = vnetd_netns_enter_fd(p->netns_fd, saved, err);
	if (ret)
		vnet_err_set(err, "cannot enter the network namespace of tap %s: %s",
			     p->cfg.tap, strerror(-ret));
	return ret;
}

void vnetd_monitor_event(struct vnetd_port *p)
{
	struct vnet_ethtool_coalesce c = {};
	struct vnet_err err = {};
	int ret, saved;

	ret = vnet_ethtool_monitor_read(p->mon, p->ifindex, 0, &c, &err);
	if (ret == -ENOBUFS) {
		/* lost some: ask for the current value in the tap's netns */
		if (port_ns_enter(p, &saved, &err)) {
			pr_warn(p, "%s", err.msg);
			return;
		}
		ret = vnet_ethtool_coalesce_get(p->ifindex, &c, &err) ? -1 : 1;
		vnetd_netns_restore(saved);
	}
	if (ret < 0) {
		pr_warn(p, "%s", err.msg);
		return;
	}
	if (ret == 1 && (c.present & VNET_ETC_RX_FRAMES))
		tap_rx_frames_set(p, c.rx_frames);
}

/*
 * The inode of a unix socket listening at PATH (/proc/net/unix: this
 * network namespace's sockets, __SO_ACCEPTCON in the flags), 0 if none.
 * Read, never connected to: a connect() would be a frontend connecting,
 * in the listener's log too.
 */
static unsigned long unix_listener(const char *path)
{
	char line[PATH_MAX + 128], abs[PATH_MAX + 1], cwd[PATH_MAX];
	unsigned long flags, ino, found = 0;
	int off;
	FILE *f;

	abs[0] = '\0';
	if (path[0] != '/' && getcwd(cwd, sizeof(cwd)))
		snprintf(abs, sizeof(abs), "%s/%s", cwd, path);
	f = fopen("/proc/net/unix", "r");
	if (!f)
		return 0;
	while (!found && fgets(line, sizeof(line), f)) {
		line[strcspn(line, "\n")] = '\0';
		if (sscanf(line, "%*s %*s %*s %lx %*s %*s %lu %n", &flags, &ino,
			   &off) != 2)
			continue;
		if ((flags & 0x10000) && (!strcmp(line + off, path) ||
					  (abs[0] && !strcmp(line + off, abs))))
			found = ino;
	}
	fclose(f);
	return found;
}

/* The process holding socket inode INO (its comm in COMM), or 0. */
static pid_t socket_owner(unsigned long ino, char *comm, size_t len)
{
	char want[64], path[600], link[64];
	struct dirent *p, *fd;
	pid_t pid = 0;
	DIR *d, *fds;
	ssize_t n;
	FILE *f;

	snprintf(want, sizeof(want), "socket:[%lu]", ino);
	d = opendir("/proc");
	if (!d)
		return 0;
	while (!pid && (p = readdir(d))) {
		if (p->d_name[0] < '1' || p->d_name[0] > '9')
			continue;
		snprintf(path, sizeof(path), "/proc/%s/fd", p->d_name);
		fds = opendir(path);
		if (!fds)
			continue;
		while (!pid && (fd = readdir(fds))) {
			snprintf(path, sizeof(path), "/proc/%s/fd/%s", p->d_name,
				 fd->d_name);
			n = readlink(path, link, sizeof(link) - 1);
			if (n > 0 && (link[n] = '\0', !strcmp(link, want)))
				pid = (pid_t)atoi(p->d_name);
		}
		closedir(fds);
	}
	closedir(d);
	snprintf(comm, len, "?");
	snprintf(path, sizeof(path), "/proc/%d/comm", (int)pid);
	f = pid ? fopen(path, "r") : NULL;
	if (f) {
		if (fgets(comm, (int)len, f))
			comm[strcspn(comm, "\n")] = '\0';
		fclose(f);
	}
	return pid;
}

/*
 * The socket's directory is there (the last component is created, 0755,
 * like systemd's RuntimeDirectory=), nothing but a socket is at the path
 * and no process listens on it: checked before the tap and the BPF
 * programs, so that a wrong path or a second vnetd costs nothing.  Client
 * mode connects to QEMU's socket: nothing to check.
 */
int vnetd_socket_precheck(const struct vnetd_port_cfg *c)
{
	char dir[sizeof(c->socket)], *slash;
	struct stat st;

	if (c->client)
		return 0;
	snprintf(dir, sizeof(dir), "%s", c->socket);
	slash = strrchr(dir, '/');
	if (!slash)
		snprintf(dir, sizeof(dir), ".");
	else if (slash == dir)
		dir[1] = '\0';
	else
		*slash = '\0';
	if (stat(dir, &st)) {
		if (errno != ENOENT || mkdir(dir, 0755)) {
			vhost_err("%s: cannot use the socket's directory %s: %s%s",
				  c->socket, dir, strerror(errno),
				  errno == ENOENT ? " (its parent does not exist either)" : "");
			return -1;
		}
		vhost_info("%s: created the socket's directory %s", c->socket, dir);
	} else if (!S_ISDIR(st.st_mode)) {
		vhost_err("%s: %s is not a directory", c->socket, dir);
		return -1;
	} else if (access(dir, W_OK | X_OK)) {
		vhost_err("%s: cannot create a socket in %s: %s", c->socket, dir,
			  strerror(errno));
		return -1;
	}
	if (!lstat(c->socket, &st) && !S_ISSOCK(st.st_mode)) {
		vhost_err("%s exists and is not a socket", c->socket);
		return -1;
	}
	if (!lstat(c->socket, &st)) {
		unsigned long ino = unix_listener(c->socket);
		char comm[32];
		pid_t pid;

		if (!ino)
			return 0; /* stale: vhost_server_add_port() removes it */
		pid = socket_owner(ino, comm, sizeof(comm));
		if (pid)
			vhost_err("%s: another process is listening there: %s (pid %d); stop it, or give this port another socket path",
				  c->socket, comm, (int)pid);
		else
			vhost_err("%s: another process is listening there (its pid is not visible here); stop it, or give this port another socket path",
				  c->socket);
		return -1;
	}
	return 0;
}

/*
 * vhost_server_add_port() binds the socket: with the umask and the
 * effective group set around it the file is created with the mode and
 * group asked for, never changed afterwards.
 */
static int port_add_socket(struct vnetd_port *p, struct vhost_server *srv)
{
	const struct vnetd_port_opts *o = &p->opts;
	struct vhost_port_cfg pc = { .path = p->cfg.socket,
				     .client = p->cfg.client,
				     .mode = o->socket_mode };
	gid_t egid = getegid();
	bool regroup = !p->cfg.client && o->socket_gid != (gid_t)-1 &&
		       o->socket_gid != egid;
	mode_t old;
	int ret;

	if (regroup && vnetd_sandbox_setegid(o->socket_gid)) {
		ret = -errno;
		pr_err(p, "cannot create the socket with group %u: %s%s",
		       (unsigned int)o->socket_gid, strerror(errno),
		       errno == EPERM ? " (needs root or CAP_SETGID)" : "");
		return ret;
	}
	old = umask(~o->socket_mode & 0777);
	ret = vhost_server_add_port(srv, &p->dev, &pc);
	umask(old);
	if (regroup && vnetd_sandbox_setegid(egid)) {
		pr_err(p, "cannot return to group %u: %s", (unsigned int)egid,
		       strerror(errno));
		return -EPERM;
	}
	return ret;
}

void vnetd_port_init(struct vnetd_port *p, const struct vnetd_port_cfg *c,
		     const struct vnetd_port_opts *o)
{
	unsigned int q;

	memset(p, 0, sizeof(*p));
	p->cfg = *c;
	p->name = p->cfg.socket;
	p->opts = *o;
	p->busy_poll_ns = (uint64_t)o->busy_poll_us * 1000;
	p->nr_qp = c->queues;
	p->mon_fd = -1;
	p->netns_fd = -1;
	p->qs = p->config = p->dps = (struct vnet_map)VNET_MAP_INIT;
	p->hdr_len = sizeof(struct virtio_net_hdr_mrg_rxbuf);
	pthread_mutex_init(&p->steer_lock, NULL);
	for (q = 0; q < VNETD_MAX_QP; q++)
		p->qp[q].io.fd = -1;
}

/*
 * The device and its queue-pair threads (the tap and the maps are open).
 */
static int port_start(struct vnetd_port *p)
{
	int ret;

	ret = vnetd_qps_init(p);
	if (ret)
		return ret;
	ret = vhost_dev_init(&p->dev, p->name, 2 * p->nr_qp, &vnetd_net_ops,
			     p);
	if (ret) {
		pr_err(p, "vhost device: %s", strerror(-ret));
		goto err_qps;
	}
	p->dev_ok = true;
	ret = vnetd_qps_start(p);
	if (ret)
		goto err_dev;
	return 0;

err_dev:
	vhost_dev_cleanup(&p->dev);
	p->dev_ok = false;
err_qps:
	vnetd_qps_free(p);
	return ret;
}

/* After the server let go of the device (every ring stopped). */
static void port_stop(struct vnetd_port *p)
{
	if (p->dev_ok) {
		vhost_dev_cleanup(&p->dev);
		p->dev_ok = false;
	}
	vnetd_qps_stop(p);
	vnetd_qps_free(p);
}

/* Tap, BPF and monitor in the port's netns; then the device, the socket. */
int vnetd_port_open(struct vnetd_port *p, struct vhost_server *srv)
{
	struct vnet_err err = {};
	int saved, ret;

	/*
	 * The socket comes last: once it exists (the contract's "ready"),
	 * the tap is up and vnet's programs are attached.
	 */
	ret = vnetd_netns_switch(p->cfg.netns, &saved, &err);
	if (ret) {
		pr_err(p, "%s", err.msg);
		return ret;
	}
	if (saved >= 0) {
		struct stat st;

		/* held: the port notices when the name goes (vnetd_port_lost()) */
		p->netns_fd = open("/proc/thread-self/ns/net",
				   O_RDONLY | O_CLOEXEC);
		if (p->netns_fd < 0 || fstat(p->netns_fd, &st)) {
			ret = -errno;
			pr_err(p, "netns %s: %s", p->cfg.netns, strerror(errno));
			goto err_ns;
		}
		p->netns_ino = st.st_ino;
	}
	ret = vnetd_tap_open(p);
	if (ret)
		goto err_ns;
	ret = vnetd_bpf_setup(p);
	if (ret)
		goto err_tap;
	monitor_open(p);
	vnetd_netns_restore(saved);
	saved = -1;

	ret = port_start(p);
	if (ret)
		goto err_bpf;
	ret = port_add_socket(p, srv);
	if (ret) {
		/* the library said why when it was the socket itself */
		pr_dbg(p, "vhost_server_add_port: %s", strerror(-ret));
		goto err_port;
	}
	pr_info(p, "serving tap %s with %u queue pair%s%s%s", p->cfg.tap,
		p->nr_qp, p->nr_qp > 1 ? "s" : "",
		p->cfg.netns[0] ? " in netns " : "", p->cfg.netns);
	return 0;

err_port:
	port_stop(p);
err_bpf:
	if (port_ns_enter(p, &saved, &err))
		pr_warn(p, "%s", err.msg);
	monitor_close(p);
	vnetd_bpf_cleanup(p);
err_tap:
	vnetd_tap_close(p);
err_ns:
	vnetd_netns_restore(saved);
	if (p->netns_fd >= 0)
		close(p->netns_fd);
	p->netns_fd = -1;
	return ret;
}

/* After vhost_server_cleanup(): every ring is stopped. */
void vnetd_port_close(struct vnetd_port *p)
{
	struct vnet_err err = {};
	int saved;

	port_stop(p);
	if (port_ns_enter(p, &saved, &err))
		pr_warn(p, "%s", err.msg);
	monitor_close(p);
	vnetd_bpf_cleanup(p);
	vnetd_tap_close(p);
	vnetd_netns_restore(saved);
	if (p->netns_fd >= 0)
		close(p->netns_fd);
	p->netns_fd = -1;
	pthread_mutex_destroy(&p->steer_lock);
}

/*
 * Is the port's tap, or its netns, gone?  The tap: tun answers EBADFD on
 * a queue fd whose device was deleted.  The netns: its name no longer
 * leads to the namespace the port was opened in (ip netns del; the
 * namespace itself lives on as long as the port holds its tap).  Fills
 * WHY.
 */
bool vnetd_port_lost(struct vnetd_port *p, char *why, size_t len)
{
	struct ifreq ifr = {};
	char path[300];
	struct stat st;

	if (p->netns_fd >= 0) {
		if (strchr(p->cfg.netns, '/'))
			snprintf(path, sizeof(path), "%s", p->cfg.netns);
		else
			snprintf(path, sizeof(path), "/var/run/netns/%s",
				 p->cfg.netns);
		if (stat(path, &st) || st.st_ino != p->netns_ino) {
			snprintf(why, len, "netns %s of tap %s is gone (%s)",
				 p->cfg.netns, p->cfg.tap,
				 errno == ENOENT ? "deleted" :
						   "another one has its name");
			return true;
		}
	}
	if (p->qp[0].io.fd >= 0 &&
	    ioctl(p->qp[0].io.fd, TUNGETIFF, &ifr) && errno == EBADFD) {
		snprintf(why, len, "tap %s is gone (deleted)", p->cfg.tap);
		return true;
	}
	return false;
}

/*
 * Stop serving P for good: its frontend is let go, its socket and the
 * pins it made are removed, its threads end.  The other ports go on.
 */
void vnetd_port_lose(struct vhost_server *srv, struct vnetd_port *p,
		     int epfd, const char *why)
{
	pr_err(p, "%s: port stopped, its socket and pins released; the other ports go on",
	       why);
	if (p->mon_fd >= 0)
		epoll_ctl(epfd, EPOLL_CTL_DEL, p->mon_fd, NULL);
	vhost_server_remove_port(srv, &p->dev);
	vnetd_port_close(p);
	p->gone = true;
}

