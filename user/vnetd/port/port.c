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
#include <net/if.h>
#include <sys/epoll.h>
#include <sys/stat.h>

#include "mailbox.h"
#include "port.h"
#include "datapath/qp.h"
#include "sandbox/sandbox.h"
#include "base/util.h"
#include "datapath/limit.h"
#include "device.h"
#include "libvnet.h"
#include "log.h"
#include "monitor.h"
#include "server.h"
#include "tap/tap.h"
#include "tap/tap_bpf.h"

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
void vnetd_socket_dir(char *dir, size_t len, const char *path)
{
	char *slash;

	snprintf(dir, len, "%s", path);
	slash = strrchr(dir, '/');
	if (!slash)
		snprintf(dir, len, ".");
	else if (slash == dir)
		dir[1] = '\0';
	else
		*slash = '\0';
}

int vnetd_socket_precheck(const struct vnetd_port_cfg *c)
{
	char dir[sizeof(c->socket)];
	struct stat st;

	if (c->client)
		return 0;
	vnetd_socket_dir(dir, sizeof(dir), c->socket);
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
 * A tap that is not in vnetd's network namespace is created there by
 * vnetd_tap_open().  When no netns was asked for and a named network
 * namespace has a device of that name, that tap is the one meant: refuse,
 * naming the fix (what vnetctl and --agent say), before anything exists.
 */
int vnetd_tap_precheck(const struct vnetd_port_cfg *c)
{
	char other[NAME_MAX + 1];

	if (c->netns[0] || if_nametoindex(c->tap) ||
	    vnet_netns_of_dev(c->tap, other, sizeof(other)))
		return 0;
	vhost_err("%s: tap %s: no such network device in this network namespace, where vnetd would create a new one; network namespace %s has one: add --netns %s (netns=%s in a --port or --config line)",
		  c->socket, c->tap, other, other, other);
	return -1;
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
	ret = vhost_server_add_port(srv, &p->device.dev, &pc);
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
	memset(p, 0, sizeof(*p));
	p->cfg = *c;
	p->name = p->cfg.socket;
	p->opts = *o;
	p->nr_qp = c->queues;
	vnetd_tap_init(&p->tap, p->name, p->cfg.tap, p->cfg.netns, p->nr_qp);
	vnetd_maps_init(&p->maps, p->name, p->cfg.tap, p->nr_qp);
	p->maps.vm = p->cfg.vm_set ? p->cfg.vm : NULL;
	p->maps.tc_attach = p->opts.tc_attach;
	p->mon.fd = -1;
	vnetd_device_init(&p->device, p->name, o->packed, &p->tap, p->qp,
			  p->nr_qp);
}

/*
 * The rate limits: the port's keys written into the limits map (without
 * them the map is left as it is: a limit set live survives a restart on
 * the same pins and a hand-over), the buckets on its entries.
 */
static void port_limits(struct vnetd_port *p)
{
	struct vnet_limit *mem = p->maps.limits.mem;
	int d;

	for (d = 0; d < VNET_DIR_MAX; d++) {
		if (mem && p->cfg.limit_set[d])
			vnet_limit_write(&mem[d], &p->cfg.limit[d]);
		vnetd_limit_init(&p->limit[d], mem ? &mem[d] : NULL);
	}
}

/* mac=, ip=: the guard map's entry (kept as it is without them) */
static void port_guard(struct vnetd_port *p)
{
	struct vnet_err err = {};

	if (p->cfg.guard_set && p->maps.guard.fd >= 0 &&
	    vnet_guard_write(p->maps.guard.fd, &p->cfg.guard, &err))
		pr_err(p, "spoofing protection not set: %s", err.msg);
}

/*
 * The queue pairs, the device and the pairs' threads (the tap and the
 * maps are open).
 */
static int port_start(struct vnetd_port *p)
{
	const struct vnetd_qps_cfg qc = {
		.name = p->name,
		.tap = p->cfg.tap,
		.cpus = p->cfg.cpus,
		.ncpus = p->cfg.ncpus,
		.no_uring = p->opts.no_uring,
		.busy_poll_us = p->opts.busy_poll_us,
		.tap_fd = p->tap.fd,
		.maps = &p->maps,
		.limit = p->limit,
	};
	int ret;

	port_limits(p);
	port_guard(p);
	ret = vnetd_qps_init(p->qp, p->nr_qp, &qc);
	if (ret)
		return ret;
	ret = vnetd_device_open(&p->device);
	if (ret)
		goto err_qps;
	ret = vnetd_qps_start(p->qp, p->nr_qp);
	if (ret)
		goto err_dev;
	return 0;

err_dev:
	vnetd_device_close(&p->device);
err_qps:
	vnetd_qps_free(p->qp, p->nr_qp);
	return ret;
}

/* After the server let go of the device (every ring stopped). */
static void port_stop(struct vnetd_port *p)
{
	vnetd_device_close(&p->device);
	vnetd_qps_stop(p->qp, p->nr_qp);
	vnetd_qps_free(p->qp, p->nr_qp);
}

/* Back in the tap's netns: the monitor, the BPF side, the tap. */
static void port_unwind(struct vnetd_port *p, bool bpf)
{
	struct vnet_err err = {};
	int saved;

	if (vnetd_tap_ns_enter(&p->tap, &saved, &err))
		pr_warn(p, "%s", err.msg);
	if (bpf) {
		vnetd_monitor_close(&p->mon);
		vnetd_bpf_cleanup(&p->maps);
	}
	vnetd_tap_close(&p->tap);
	vnetd_netns_restore(saved);
	vnetd_tap_ns_close(&p->tap);
}

/* Tap, BPF and monitor in the port's netns (this thread's only). */
int vnetd_port_prepare(struct vnetd_port *p)
{
	int saved, ret;

	ret = vnetd_tap_ns_open(&p->tap, &saved);
	if (ret)
		return ret;
	ret = vnetd_tap_open(&p->tap);
	if (ret)
		goto err_ns;
	ret = vnetd_bpf_setup(&p->maps, p->tap.fd[0]);
	if (ret)
		goto err_tap;
	vnetd_monitor_open(&p->mon, &p->tap);
	vnetd_netns_restore(saved);
	return 0;

err_tap:
	vnetd_tap_close(&p->tap);
err_ns:
	vnetd_netns_restore(saved);
	vnetd_tap_ns_close(&p->tap);
	return ret;
}

void vnetd_port_unprepare(struct vnetd_port *p)
{
	port_unwind(p, true);
}

/*
 * The device and the socket of a prepared port.  The socket comes last:
 * once it exists (the contract's "ready"), the tap is up and vnet's
 * programs are attached.
 */
int vnetd_port_serve(struct vnetd_port *p, struct vhost_server *srv)
{
	int ret;

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
	port_unwind(p, true);
	return ret;
}

int vnetd_port_open(struct vnetd_port *p, struct vhost_server *srv)
{
	int ret = vnetd_port_prepare(p);

	return ret ? ret : vnetd_port_serve(p, srv);
}

/* After vhost_server_cleanup(): every ring is stopped. */
void vnetd_port_close(struct vnetd_port *p)
{
	vnetd_port_close_taps(p);
	vnetd_port_close_pins(p);
}

/*
 * The port stopped, its monitor and tap fds closed in the tap's netns,
 * and its BPF: closed (the pins stay until vnetd_bpf_unpin()), or on a
 * hand-over (RELEASE) let go of for the vnetd that takes over
 */
static void port_close_tap(struct vnetd_port *p, bool release)
{
	struct vnet_err err = {};
	int saved;

	port_stop(p);
	if (vnetd_tap_ns_enter(&p->tap, &saved, &err))
		pr_warn(p, "%s", err.msg);
	vnetd_monitor_close(&p->mon);
	if (release)
		vnetd_bpf_release(&p->maps);
	else
		vnetd_bpf_close(&p->maps);
	vnetd_tap_close(&p->tap);
	vnetd_netns_restore(saved);
}

void vnetd_port_close_taps(struct vnetd_port *p)
{
	port_close_tap(p, false);
}

void vnetd_port_close_pins(struct vnetd_port *p)
{
	struct vnet_err err = {};
	int saved;

	if (vnetd_tap_ns_enter(&p->tap, &saved, &err))
		pr_warn(p, "%s", err.msg);
	vnetd_bpf_unpin(&p->maps);
	vnetd_netns_restore(saved);
	vnetd_tap_ns_close(&p->tap);
	vnetd_maps_exit(&p->maps);
}

int vnetd_port_adopt(struct vnetd_port *p, const struct vnetd_port_adopt *a)
{
	struct vnetd_tap *t = &p->tap;
	struct vnet_err err = {};
	unsigned int q;
	int saved, ret;

	for (q = 0; q < t->nr_queues; q++)
		t->fd[q] = a->tap_fd[q];
	t->created = a->created;
	t->single_queue = a->single_queue;
	t->mtu_orig = a->mtu_orig;
	t->netns_fd = a->netns_fd;
	t->netns_ino = a->netns_ino;
	ret = vnetd_tap_ns_enter(t, &saved, &err);
	if (ret) {
		pr_err(p, "%s", err.msg);
		goto err_fds;
	}
	t->ifindex = (int)if_nametoindex(t->ifname);
	if (!t->ifindex) {
		ret = -ENODEV;
		pr_err(p, "tap %s: gone during the hand-over", t->ifname);
		goto err_ns;
	}
	ret = vnetd_bpf_adopt(&p->maps, t->fd[0], a->attached, a->steer);
	if (ret)
		goto err_ns;
	vnetd_monitor_open(&p->mon, t);
	vnetd_netns_restore(saved);
	ret = port_start(p);
	if (ret) {
		vnetd_tap_ns_enter(t, &saved, &err);
		vnetd_monitor_close(&p->mon);
		vnetd_bpf_release(&p->maps);
		goto err_ns;
	}
	return 0;

err_ns:
	vnetd_netns_restore(saved);
err_fds:
	/* the running vnetd still has its own copies of them */
	vnetd_tap_close(t);
	vnetd_tap_ns_close(t);
	return ret;
}

void vnetd_port_release(struct vnetd_port *p)
{
	/* the new vnetd has the rings' journal file open: it stays */
	p->device.journal[0] = '\0';
	port_close_tap(p, true);
	vnetd_tap_ns_close(&p->tap);
	vnetd_maps_exit(&p->maps);
}

int vnetd_ports_sandbox_enter(const struct vnetd_port *ports,
			      unsigned int nports)
{
	unsigned int i, q, nthreads = 0;
	bool netns = false;

	for (i = 0; i < nports; i++) {
		if (ports[i].tap.netns_fd >= 0 || ports[i].cfg.netns[0])
			netns = true;
		for (q = 0; q < ports[i].nr_qp; q++)
			nthreads += ports[i].qp[q].thread_ok;
	}
	return vnetd_sandbox_enter(nthreads, netns);
}

void vnetd_port_monitor_event(struct vnetd_port *p)
{
	vnetd_monitor_event(&p->mon, &p->tap, &p->maps);
}

void vnetd_port_watchdog(struct vnetd_port *p)
{
	vnetd_watchdog(p->qp, p->nr_qp);
}

/* Is the port's tap, or its netns, gone?  Fills WHY. */
bool vnetd_port_lost(struct vnetd_port *p, char *why, size_t len)
{
	return vnetd_tap_lost(&p->tap, why, len);
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
	if (p->mon.fd >= 0)
		epoll_ctl(epfd, EPOLL_CTL_DEL, p->mon.fd, NULL);
	vhost_server_remove_port(srv, &p->device.dev);
	vnetd_port_close(p);
	p->gone = true;
}
