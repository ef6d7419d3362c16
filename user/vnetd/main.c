// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * vnetd: vnet's vhost-user-net backend over a multi-queue tap
 * (docs/vnetd-contract.md, man vnetd(8)); its layers, one header each,
 * are listed in docs/design.md.
 *
 * This file: logging, signals (SIGBUS: user/vhost/fault.h), and the control loop: one epoll over the vhost-user server (all protocol work and
 * every vhost_dev_ops callback), a signalfd (SIGINT/SIGTERM: clean exit;
 * SIGHUP: a warning that names the reload (vnetd --takeover), and vnetd goes on;
 * systemd hears READY=1 and STOPPING=1 through base/sd_notify.c)
 * and each port's ethtool monitor (a direct `ethtool -C TAP rx-frames N`
 * is mirrored into the config map's tap_rx_frames, vnetd's TX batch).
 * With --agent TAP, vnetd serves no port: agent.c drives attached taps'
 * rx-frames instead (attach mode).
 *
 * Exit status: 0 after SIGINT/SIGTERM, 1 when a port cannot be set up (the
 * message names the cause), 2 on usage errors.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/epoll.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <sys/timerfd.h>
#include <bpf/libbpf.h>

#include "fault.h"
#include "handover/handover.h"
#include "handover/record.h"
#include "config/opts.h"
#include "port/ports.h"
#include "port/port.h"
#include "datapath/qthread.h"
#include "base/testing.h"
#include "config/config.h"
#include "base/sd_notify.h"
#include "agent/agent.h"
#include "libvnet.h"
#include "log.h"
#include "server.h"

/* --- logging ---------------------------------------------------------- */

/*
 * stderr is the journal: $JOURNAL_STREAM is "DEVICE:INODE" of the stream
 * systemd connected it to (systemd.exec(5)); a copy inherited by a child
 * whose stderr went elsewhere does not count.
 */
static bool stderr_is_journal(void)
{
	const char *js = getenv("JOURNAL_STREAM");
	unsigned long long dev, ino;
	struct stat st;

	if (!js || sscanf(js, "%llu:%llu", &dev, &ino) != 2)
		return false;
	if (fstat(STDERR_FILENO, &st))
		return false;
	return (unsigned long long)st.st_dev == dev &&
	       (unsigned long long)st.st_ino == ino;
}

static bool log_journal;

/*
 * Every line, the library's and ours.  To the journal: "<P>PORT: message"
 * with P the syslog priority (sd-daemon(3)'s prefixes; journald strips
 * them and files the line under that priority).  Elsewhere: "vnetd:
 * PORT: message", with "error: " or "warning: " before the port where
 * the line is one.
 */
static void log_write(enum vhost_log_level level, const char *msg,
		      void *opaque)
{
	static const int prio[] = {
		[VHOST_LOG_ERR] = 3, [VHOST_LOG_WARN] = 4,
		[VHOST_LOG_INFO] = 6, [VHOST_LOG_DEBUG] = 7,
	};
	unsigned int l = (unsigned int)level <= VHOST_LOG_DEBUG ? level :
								   VHOST_LOG_INFO;

	(void)opaque;
	if (log_journal)
		fprintf(stderr, "<%d>%s\n", prio[l], msg);
	else
		fprintf(stderr, "vnetd: %s%s\n",
			l == VHOST_LOG_ERR ? "error: " :
			l == VHOST_LOG_WARN ? "warning: " : "", msg);
}

/* libbpf's own messages (the verifier log of a failed load): debug only */
static int libbpf_log(enum libbpf_print_level level, const char *fmt,
		      va_list ap)
{
	char msg[1024];
	size_t n;

	if (level == LIBBPF_DEBUG ||
	    vhost_log_get_level() < VHOST_LOG_DEBUG)
		return 0;
	vsnprintf(msg, sizeof(msg), fmt, ap);
	n = strlen(msg);
	if (n && msg[n - 1] == '\n')
		msg[n - 1] = '\0';
	vhost_dbg("%s", msg);
	return 0;
}

struct ep_item {
	int kind; /* EP_* */
	struct vnetd_port *port;
};

enum { EP_SERVER = 1, EP_SIGNAL, EP_MONITOR, EP_WATCHDOG, EP_HANDOVER };

/* how often a queue thread held by a frontend's fd is looked for */
#define WATCHDOG_MS 250

/* --- the control loop ------------------------------------------------- */

static int ep_add(int epfd, int fd, struct ep_item *it)
{
	struct epoll_event ev = { .events = EPOLLIN, .data.ptr = it };

	return epoll_ctl(epfd, EPOLL_CTL_ADD, fd, &ev) ? -errno : 0;
}

/* The control loop's state, on run()'s stack. */
struct ctl {
	struct vhost_server *srv;
	struct vnetd_port *ports;
	unsigned int nports;
	int sfd, hofd, epfd, wdfd;
	struct ep_item srv_item, sig_item, wd_item, ho_item;
	struct ep_item *mon_items; /* one per port */
};

static void ctl_close(struct ctl *c)
{
	if (c->wdfd >= 0)
		close(c->wdfd);
	if (c->epfd >= 0)
		close(c->epfd);
	free(c->mon_items);
}

/* The epoll, the watchdog's timer, and every fd the loop waits on. */
static int ctl_open(struct ctl *c)
{
	struct itimerspec its = {
		.it_interval.tv_nsec = WATCHDOG_MS * 1000000L,
		.it_value.tv_nsec = WATCHDOG_MS * 1000000L,
	};
	unsigned int i;
	int ret;

	c->mon_items = calloc(c->nports, sizeof(*c->mon_items));
	c->epfd = epoll_create1(EPOLL_CLOEXEC);
	c->wdfd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
	if (!c->mon_items || c->epfd < 0 || c->wdfd < 0 ||
	    timerfd_settime(c->wdfd, 0, &its, NULL)) {
		vhost_err("control loop: %s", strerror(errno));
		return -ENOMEM;
	}
	ret = ep_add(c->epfd, vhost_server_fd(c->srv), &c->srv_item);
	if (!ret)
		ret = ep_add(c->epfd, c->sfd, &c->sig_item);
	if (!ret)
		ret = ep_add(c->epfd, c->wdfd, &c->wd_item);
	if (!ret && c->hofd >= 0)
		ret = ep_add(c->epfd, c->hofd, &c->ho_item);
	for (i = 0; !ret && i < c->nports; i++) {
		c->mon_items[i] = (struct ep_item){ EP_MONITOR, &c->ports[i] };
		if (c->ports[i].mon.fd >= 0)
			ret = ep_add(c->epfd, c->ports[i].mon.fd,
				     &c->mon_items[i]);
	}
	if (ret)
		vhost_err("control loop: epoll: %s", strerror(-ret));
	return ret;
}

/* SIGINT/SIGTERM: 1, exit; SIGHUP: a warning, 0, vnetd goes on. */
static int on_signal(struct ctl *c)
{
	struct signalfd_siginfo si;

	if (read(c->sfd, &si, sizeof(si)) != sizeof(si))
		return 0;
	if (si.ssi_signo == SIGHUP) {
		vhost_warn("SIGHUP: vnetd reloads by handing its ports over to a new process, without the guests noticing: run 'vnetd --takeover' with this vnetd's arguments ('systemctl reload vnetd@NAME' does); vnetd keeps serving");
		return 0;
	}
	vnetd_notify("STOPPING=1");
	vhost_info("%s, exiting", strsignal((int)si.ssi_signo));
	return 1;
}

/* Every port's queue threads looked at; a port found lost is let go. */
static void on_watchdog(struct ctl *c)
{
	uint64_t ticks;
	char why[400];
	unsigned int i;

	if (read(c->wdfd, &ticks, sizeof(ticks)) < 0)
		return;
	for (i = 0; i < c->nports; i++) {
		if (c->ports[i].gone)
			continue;
		vnetd_port_watchdog(&c->ports[i]);
		if (vnetd_port_lost(&c->ports[i], why, sizeof(why)))
			vnetd_port_lose(c->srv, &c->ports[i], c->epfd, why);
	}
}

/* One ready fd: 0 to go on, 1 to leave the loop, -errno on failure. */
static int dispatch(struct ctl *c, struct ep_item *it, bool *handed)
{
	int ret;

	switch (it->kind) {
	case EP_SERVER:
		ret = vhost_server_poll(c->srv, 0);
		if (ret < 0) {
			vhost_err("vhost-user server: %s", strerror(-ret));
			return ret;
		}
		return 0;
	case EP_SIGNAL:
		return on_signal(c);
	case EP_HANDOVER:
		if (vnetd_handover_serve(c->hofd, c->srv, c->ports,
					 c->nports) == 1) {
			*handed = true;
			return 1;
		}
		return 0;
	case EP_MONITOR:
		/* vnetd_port_lose() earlier in this batch */
		if (!it->port->gone)
			vnetd_port_monitor_event(it->port);
		return 0;
	case EP_WATCHDOG:
		on_watchdog(c);
		return 0;
	}
	return 0;
}

/*
 * The control loop until a signal says stop (0), a hand-over gave every
 * port away (*HANDED set, 0), or epoll fails (-errno).
 */
static int run(struct vhost_server *srv, struct vnetd_port *ports,
	       unsigned int nports, int sfd, int hofd, bool *handed)
{
	struct ctl c = {
		.srv = srv, .ports = ports, .nports = nports,
		.sfd = sfd, .hofd = hofd, .epfd = -1, .wdfd = -1,
		.srv_item = { EP_SERVER, NULL },
		.sig_item = { EP_SIGNAL, NULL },
		.wd_item = { EP_WATCHDOG, NULL },
		.ho_item = { EP_HANDOVER, NULL },
	};
	struct epoll_event ev[16];
	int i, n, ret;

	ret = ctl_open(&c);
	while (!ret) {
		n = epoll_wait(c.epfd, ev, sizeof(ev) / sizeof(ev[0]), -1);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			ret = -errno;
			vhost_err("control loop: epoll_wait: %s", strerror(errno));
			break;
		}
		for (i = 0; !ret && i < n; i++)
			ret = dispatch(&c, ev[i].data.ptr, handed);
	}
	ctl_close(&c);
	return ret < 0 ? ret : 0;
}

/*
 * --detach: fork.  The parent waits for the child to say how its start
 * went (vnetd_detach_done(); why not is in the child's log, on the same
 * stderr, so the parent prints nothing more) and returns its exit status
 * (>= 0); the child gets -1 and *FD, where to say it, and goes on in a
 * session of its own, stdin and stdout on /dev/null, stderr kept (the
 * journal's).
 */
static int vnetd_detach(int *fd)
{
	char buf[512];
	int p[2], null;
	ssize_t n, got = 0;
	pid_t pid;

	if (pipe2(p, O_CLOEXEC)) {
		fprintf(stderr, "vnetd: --detach: pipe: %s\n", strerror(errno));
		return VNETD_EXIT_STARTUP;
	}
	pid = fork();
	if (pid < 0) {
		fprintf(stderr, "vnetd: --detach: fork: %s\n", strerror(errno));
		return VNETD_EXIT_STARTUP;
	}
	if (!pid) {
		close(p[0]);
		setsid();
		null = open("/dev/null", O_RDWR | O_CLOEXEC);
		if (null >= 0) {
			dup2(null, STDIN_FILENO);
			dup2(null, STDOUT_FILENO);
			close(null);
		}
		*fd = p[1];
		return -1;
	}
	close(p[1]);
	while ((size_t)got < sizeof(buf) - 1 &&
	       (n = read(p[0], buf + got, sizeof(buf) - 1 - (size_t)got)) != 0) {
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			break;
		got += n;
	}
	close(p[0]);
	buf[got] = '\0';
	if (!strcmp(buf, "ok"))
		return 0;
	/* what it said it logged already, on this stderr */
	if (!got)
		fprintf(stderr, "vnetd: exited before it was ready\n");
	return VNETD_EXIT_STARTUP;
}

/* The detached vnetd's start: WHY NULL, ready; else why not.  Once. */
static void vnetd_detach_done(int fd, const char *why)
{
	static bool done;
	const char *s = why ? why : "ok";

	if (fd < 0 || done)
		return;
	done = true;
	if (write(fd, s, strlen(s)) < 0)
		vhost_warn("--detach: %s", strerror(errno));
	close(fd);
}

/*
 * A port holds about ten fds listening (tap queues, socket, netns, the
 * pair's epoll, eventfd, timers and io_uring, BPF) and more once a
 * frontend is there (its connection, kick and call fds, memory regions):
 * a thousand ports need more than the soft RLIMIT_NOFILE of 1024 most
 * systems start services with.  vnetd polls with epoll only (no
 * select()), so it takes the hard limit.
 */
static void nofile_raise(void)
{
	struct rlimit r;

	if (getrlimit(RLIMIT_NOFILE, &r) || r.rlim_cur >= r.rlim_max)
		return;
	r.rlim_cur = r.rlim_max;
	if (setrlimit(RLIMIT_NOFILE, &r))
		vhost_warn("RLIMIT_NOFILE: %s", strerror(errno));
}

/* Name, logging, SIGPIPE, fd limit, SIGBUS, test switches: 0 or exit status */
static int process_init(const struct vnetd_opts *o)
{
	int ret;

	/* vnetctl recognises its datapath by this name (coalesce show) */
	prctl(PR_SET_NAME, "vnetd", 0, 0, 0);
	log_journal = stderr_is_journal();
	vhost_log_set_fn(log_write, NULL);
	vnet_hint_set(VNET_HINT_VNETD);
	vhost_log_set_level((enum vhost_log_level)o->log_level);
	libbpf_set_print(libbpf_log);
	signal(SIGPIPE, SIG_IGN);
	nofile_raise();
	/*
	 * SIGBUS in a region the frontend truncated breaks that queue pair's
	 * rings instead of killing the daemon (user/vhost/fault.h); before
	 * any thread or seccomp filter.
	 */
	ret = vhost_fault_init();
	if (ret) {
		vhost_err("SIGBUS handler: %s", strerror(-ret));
		return VNETD_EXIT_STARTUP;
	}
	/* a test build's switches (testing.h); none in build/vnetd */
	if (vnetd_testing_init())
		return VNETD_EXIT_STARTUP;
	return 0;
}

/* SIGINT, SIGTERM and SIGHUP through a signalfd (returned, or -1). */
static int signals_open(void)
{
	sigset_t mask;
	int sfd;

	sigemptyset(&mask);
	sigaddset(&mask, SIGINT);
	sigaddset(&mask, SIGTERM);
	/* SIGHUP is logged and ignored, never a stop: reload is --takeover */
	sigaddset(&mask, SIGHUP);
	if (sigprocmask(SIG_BLOCK, &mask, NULL)) {
		vhost_err("sigprocmask: %s", strerror(errno));
		return -1;
	}
	sfd = signalfd(-1, &mask, SFD_NONBLOCK | SFD_CLOEXEC);
	if (sfd < 0) {
		vhost_err("signalfd: %s", strerror(errno));
		return -1;
	}
	/* VNETD_SIG_WAKE is the queue threads' (mailbox.c), not this one's */
	sigemptyset(&mask);
	sigaddset(&mask, VNETD_SIG_WAKE);
	if (sigprocmask(SIG_BLOCK, &mask, NULL)) {
		vhost_err("sigprocmask: %s", strerror(errno));
		close(sfd);
		return -1;
	}
	return sfd;
}

/* --takeover: the ports from the running vnetd, or none (-1); *HOLOCK held */
static int ports_take(const struct vnetd_opts *o, struct vhost_server *srv,
		      struct vnetd_port *ports, int *holock, char *why,
		      size_t len)
{
	unsigned int i;

	*holock = vnetd_handover_lock(o->takeover_socket);
	for (i = 0; i < o->nports; i++)
		vnetd_port_init(&ports[i], &o->ports[i], &o->port);
	/*
	 * not at the socket: at the default one of any port's tap (the
	 * running one's first port, or one started without the option)
	 */
	return vnetd_handover_take(o->takeover_socket, VNETD_TAKEOVER_DIR,
				   o->release_missing, srv, ports, o->nports,
				   why, len) ?
		       -1 :
		       0;
}

/* Check every tap and socket before making anything, then open the ports */
static int ports_open(const struct vnetd_opts *o, struct vhost_server *srv,
		      struct vnetd_port *ports, unsigned int *opened)
{
	unsigned int i;

	for (i = 0; i < o->nports; i++)
		if (vnetd_tap_precheck(&o->ports[i]))
			return -1;
	for (i = 0; i < o->nports; i++)
		if (vnetd_socket_precheck(&o->ports[i]))
			return -1;
	for (i = 0; i < o->nports; i++)
		vnetd_port_init(&ports[i], &o->ports[i], &o->port);
	return vnetd_ports_open(ports, o->nports, srv, opened);
}

/* READY=1: after a hand-over systemd follows this pid (NotifyAccess=all) */
static void notify_ready(unsigned int nports)
{
	char st[128];
	int ret;

	snprintf(st, sizeof(st), "READY=1\nSTATUS=serving %u port%s\nMAINPID=%d",
		 nports, nports == 1 ? "" : "s", (int)getpid());
	ret = vnetd_notify(st);
	if (ret)
		vhost_warn("cannot notify systemd ($NOTIFY_SOCKET): %s",
			   strerror(-ret));
}

/*
 * Serve O's ports until a signal (0) or a hand-over; VNETD_EXIT_STARTUP
 * when they cannot be set up.  DETACH_FD hears how the start went.
 */
static int serve(const struct vnetd_opts *o, int sfd, int detach_fd)
{
	struct vhost_server srv;
	struct vnetd_port *ports;
	unsigned int opened = 0;
	int ret, hofd = -1, holock = -1;
	bool handed = false;
	char why[1024] = "";

	ports = calloc(o->nports, sizeof(*ports));
	if (!ports) {
		vhost_err("out of memory");
		return VNETD_EXIT_STARTUP;
	}
	ret = vhost_server_init(&srv);
	if (ret) {
		vhost_err("vhost-user server: %s", strerror(-ret));
		free(ports);
		return VNETD_EXIT_STARTUP;
	}
	ret = VNETD_EXIT_STARTUP;
	if (o->takeover) {
		if (ports_take(o, &srv, ports, &holock, why, sizeof(why)))
			goto out_srv;
		opened = o->nports;
	} else if (ports_open(o, &srv, ports, &opened)) {
		goto out_srv;
	}
	/* where the next vnetd takes over from this one */
	hofd = vnetd_handover_listen(o->takeover_socket);
	if (hofd < 0)
		vhost_warn("no hand-over socket at %s: 'vnetd --takeover' cannot take over from this vnetd",
			   o->takeover_socket);
	if (holock >= 0)
		close(holock);
	holock = -1;
	if (vnetd_ports_sandbox_enter(ports, o->nports))
		goto out_srv;
	/* every socket listens (or, with --client, is being connected) */
	notify_ready(o->nports);
	vnetd_detach_done(detach_fd, NULL);

	ret = run(&srv, ports, o->nports, sfd, hofd, &handed) ?
		      VNETD_EXIT_STARTUP : 0;
	if (handed) {
		/* the ports are the new vnetd's: let go, touch nothing */
		vhost_server_release(&srv);
		for (unsigned int i = 0; i < o->nports; i++)
			if (!ports[i].gone)
				vnetd_port_release(&ports[i]);
		close(hofd);
		goto out_ports;
	}
out_srv:
	vnetd_detach_done(detach_fd, why[0] ? why : "vnetd did not start: see its log");
	vnetd_handover_unlisten(hofd, o->takeover_socket);
	/* disconnect: every running ring is stopped by its thread */
	vhost_server_cleanup(&srv);
	vnetd_ports_close(ports, opened);
out_ports:
	if (holock >= 0)
		close(holock);
	free(ports);
	return ret;
}

_Static_assert(VNETD_REC_MAX_PORTS >= VNETD_MAX_PORTS,
	       "the hand-over's HELLO names every port");

int main(int argc, char **argv)
{
	static struct vnetd_opts o;
	int ret, sfd, detach_fd = -1;

	ret = vnetd_opts_parse(argc, argv, &o);
	if (ret)
		return ret < 0 ? 0 : ret;
	/* --takeover --detach: the caller waits for the outcome only */
	if (o.detach) {
		ret = vnetd_detach(&detach_fd);
		if (ret >= 0)
			return ret;
	}
	ret = process_init(&o);
	if (ret)
		return ret;
	sfd = signals_open();
	if (sfd < 0)
		return VNETD_EXIT_STARTUP;
	if (o.agent.ntaps)
		/* attach mode: no vhost-user server, no tap of our own */
		ret = vnetd_agent_run(&o.agent, sfd);
	else
		ret = serve(&o, sfd, detach_fd);
	close(sfd);
	return ret;
}
