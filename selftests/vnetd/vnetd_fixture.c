// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* test_vnetd_*: vnetd (its process, namespace, ports, logs, maps), the main loop */
#include "vnetd_test.h"
/* ------------------------------------------------------------------ */
/* vnetd: one process, its namespace, its ports                        */
/* ------------------------------------------------------------------ */

char made_ns[32][64];
unsigned int nr_made_ns;

void on_signal(int sig)
{
	unsigned int i;

	for (i = 0; i < nr_made_ns; i++) {
		pid_t p;

		if (!made_ns[i][0])
			continue;
		p = fork();
		if (!p) {
			char *argv[] = { "ip", "netns", "del", made_ns[i], NULL };

			execvp("ip", argv);
			_exit(127);
		}
		if (p > 0)
			waitpid(p, NULL, 0);
	}
	signal(sig, SIG_DFL);
	raise(sig);
}

void vd_init(struct vd *vd, const char *name, unsigned int nports,
	     unsigned int queues)
{
	unsigned int i;

	memset(vd, 0, sizeof(*vd));
	vd->name = name;
	vd->pid = -1;
	vd->nports = nports;
	vd->use_config = nports > 1;
	vd->check_pins = true;
	snprintf(vd->ns, sizeof(vd->ns), "vnet-v-%s-%d", name, getpid());
	snprintf(vd->log, sizeof(vd->log), "/tmp/vnet-vnetd-%d-%s.log",
		 getpid(), name);
	snprintf(vd->conf, sizeof(vd->conf), "/tmp/vnet-vnetd-%d-%s.conf",
		 getpid(), name);
	for (i = 0; i < nports; i++) {
		struct port *p = &vd->port[i];
		static unsigned int seq;

		snprintf(p->sock, sizeof(p->sock),
			 "/tmp/vnet-vnetd-%d-%s-%u.sock", getpid(), name, i);
		snprintf(p->tap, sizeof(p->tap), "vv%06x%02x",
			 (unsigned int)getpid() & 0xffffff, seq++ & 0xff);
		p->queues = queues;
		p->cfg_fd = p->dps_fd = p->qs_fd = -1;
	}
}

bool vd_running(struct vd *vd)
{
	pid_t r;

	if (vd->pid <= 0)
		return false;
	r = waitpid(vd->pid, &vd->status, WNOHANG);
	if (r == vd->pid) {
		vd->pid = -1;
		return false;
	}
	return true;
}

const char *vd_log_tail(struct vd *vd)
{
	static char line[200];
	char buf[4096];
	ssize_t n;
	int fd;
	off_t sz;

	line[0] = '\0';
	fd = open(vd->log, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return line;
	sz = lseek(fd, 0, SEEK_END);
	n = pread(fd, buf, sizeof(buf) - 1, sz > (off_t)sizeof(buf) - 1 ?
						    sz - (off_t)sizeof(buf) + 1 :
						    0);
	close(fd);
	if (n <= 0)
		return line;
	buf[n] = '\0';
	while (n > 0 && (buf[n - 1] == '\n' || buf[n - 1] == ' '))
		buf[--n] = '\0';
	{
		char *nl = strrchr(buf, '\n');

		snprintf(line, sizeof(line), "%.199s", nl ? nl + 1 : buf);
	}
	return line;
}

void close_fd(int *fd)
{
	if (*fd >= 0)
		close(*fd);
	*fd = -1;
}

void port_close_maps(struct port *p)
{
	close_fd(&p->cfg_fd);
	close_fd(&p->dps_fd);
	close_fd(&p->qs_fd);
}

int pin_get(const struct port *p, const char *map)
{
	char path[256];
	int fd;

	snprintf(path, sizeof(path), PIN_ROOT "/%s/%s", p->tap, map);
	fd = bpf_obj_get(path);
	return fd < 0 ? -errno : fd;
}

bool vd_log_has(struct vd *vd, const char *s)
{
	char line[1024];
	bool found = false;
	FILE *f = fopen(vd->log, "r");

	if (!f)
		return false;
	while (!found && fgets(line, sizeof(line), f))
		found = strstr(line, s) != NULL;
	fclose(f);
	return found;
}

bool vd_spawn(struct vd *vd)
{
	unsigned int i;
	char q[16];

	for (i = 0; i < vd->nports; i++)
		port_close_maps(&vd->port[i]);
	if (vd->use_config) {
		FILE *f = fopen(vd->conf, "w");

		if (!f) {
			test_fail("%s: %s", vd->conf, strerror(errno));
			return false;
		}
		fprintf(f, "# test_vnetd %s\n", vd->name);
		for (i = 0; i < vd->nports; i++)
			fprintf(f, "socket=%s tap=%s queues=%u netns=%s\n",
				vd->port[i].sock, vd->port[i].tap,
				vd->port[i].queues,
				vd->port[i].ns[0] ? vd->port[i].ns : vd->ns);
		fclose(f);
	}
	snprintf(q, sizeof(q), "%u", vd->port[0].queues);

	vd->pid = fork();
	if (vd->pid < 0) {
		test_fail("fork: %s", strerror(errno));
		return false;
	}
	if (!vd->pid) {
		char *argv[16];
		int n = 0, fd;

		prctl(PR_SET_PDEATHSIG, SIGKILL);
		fd = open(vd->log, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC,
			  0644);
		if (fd >= 0) {
			dup2(fd, 1);
			dup2(fd, 2);
		}
		fd = open("/dev/null", O_RDONLY);
		if (fd >= 0)
			dup2(fd, 0);
		setenv("ASAN_OPTIONS",
		       "detect_leaks=1:abort_on_error=0:halt_on_error=1", 1);
		setenv("UBSAN_OPTIONS", "print_stacktrace=1:halt_on_error=0",
		       1);
		argv[n++] = vnetd_bin;
		if (vd->use_config) {
			argv[n++] = "--config";
			argv[n++] = vd->conf;
		} else {
			argv[n++] = "--socket";
			argv[n++] = vd->port[0].sock;
			argv[n++] = "--tap";
			argv[n++] = vd->port[0].tap;
			argv[n++] = "--netns";
			argv[n++] = vd->ns;
			if (vd->port[0].queues > 1) {
				argv[n++] = "--queues";
				argv[n++] = q;
			}
			if (vd->client)
				argv[n++] = "--client";
		}
		if (vd->extra)
			argv[n++] = (char *)vd->extra;
		if (vd->extra2)
			argv[n++] = (char *)vd->extra2;
		if (vd->takeover)
			argv[n++] = "--takeover";
		argv[n] = NULL;
		execv(vnetd_bin, argv);
		fprintf(stderr, "exec %s: %s\n", vnetd_bin, strerror(errno));
		_exit(127);
	}

	return true;
}

/*
 * One more wait for port I's socket (for a --takeover: its "taken over"):
 * false, the case failed, when vnetd exited or DEADLINE passed.
 */
static bool vd_still_starting(struct vd *vd, unsigned int i, long long deadline)
{
	const char *sock = vd->port[i].sock;

	if (!vd_running(vd)) {
		if (vd->takeover)
			test_fail("vnetd --takeover exited (status 0x%x) before it took %s: %s",
				  vd->status, sock, vd_log_tail(vd));
		else
			test_fail("vnetd exited (status 0x%x) before its socket %s existed: %s",
				  vd->status, sock, vd_log_tail(vd));
		return false;
	}
	if (now_ms() > deadline) {
		if (vd->takeover)
			test_fail("vnetd --takeover did not take %s in %d ms: %s",
				  sock, START_MS, vd_log_tail(vd));
		else
			test_fail("vnetd made no socket %s in %d ms: %s", sock,
				  START_MS, vd_log_tail(vd));
		return false;
	}
	nap_ms(vd->takeover ? 5 : 10);
	return true;
}

bool vd_start(struct vd *vd)
{
	struct stat old[2];
	long long deadline;
	unsigned int i;
	struct stat sb;

	memset(old, 0, sizeof(old));
	for (i = 0; i < vd->nports; i++)
		stat(vd->port[i].sock, &old[i]);
	if (!vd_spawn(vd))
		return false;

	/*
	 * ready: every socket exists, a new one and not a stale file (tmpfs
	 * reuses inode numbers: the change time tells them apart)
	 */
	deadline = now_ms() + START_MS;
	/* a hand-over keeps the sockets: ready when it says it took them */
	for (i = 0; vd->takeover && i < vd->nports; i++) {
		char want[200];

		snprintf(want, sizeof(want), "%s: taken over", vd->port[i].sock);
		while (!vd_log_has(vd, want)) {
			if (!vd_still_starting(vd, i, deadline))
				return false;
		}
	}
	for (i = 0; i < vd->nports && !vd->client && !vd->takeover; i++) {
		for (;;) {
			if (!stat(vd->port[i].sock, &sb) &&
			    S_ISSOCK(sb.st_mode) &&
			    (sb.st_ino != old[i].st_ino ||
			     sb.st_ctim.tv_sec != old[i].st_ctim.tv_sec ||
			     sb.st_ctim.tv_nsec != old[i].st_ctim.tv_nsec))
				break;
			if (!vd_still_starting(vd, i, deadline))
				return false;
		}
	}
	/* the taps exist and are up, the pins are there */
	for (i = 0; i < vd->nports; i++) {
		struct port *p = &vd->port[i];
		const char *ns = p->ns[0] ? p->ns : vd->ns;
		char path[160];
		bool up = false;

		while (ns_link(ns, p->tap, &up) <= 0 || !up) {
			if (now_ms() > deadline) {
				test_fail("tap %s in %s is %s after vnetd is ready",
					  p->tap, ns,
					  ns_link(ns, p->tap, NULL) > 0 ?
						  "not up" : "missing");
				return false;
			}
			nap_ms(10);
		}
		for (;;) {
			p->cfg_fd = pin_get(p, "config");
			p->dps_fd = pin_get(p, "dp_stats");
			p->qs_fd = pin_get(p, "queues");
			if (p->cfg_fd >= 0 && p->dps_fd >= 0 && p->qs_fd >= 0)
				break;
			port_close_maps(p);
			if (now_ms() > deadline) {
				test_fail("no pinned config/dp_stats/queues under " PIN_ROOT "/%s",
					  p->tap);
				return false;
			}
			nap_ms(10);
		}
		/* no IPv6 chatter (RS, MLD) on the test links */
		snprintf(path, sizeof(path),
			 "/proc/sys/net/ipv6/conf/%s/disable_ipv6", p->tap);
		ns_sysctl(ns, path, "1");
	}
	return true;
}

int vd_sanitizer_report(struct vd *vd, char *line, size_t len)
{
	static const char *const pat_[] = {
		"ERROR: AddressSanitizer", "ERROR: LeakSanitizer",
		"runtime error:", "UndefinedBehaviorSanitizer",
		"AddressSanitizer:", "SUMMARY: ",
	};
	char buf[1024];
	unsigned int i;
	FILE *f;

	f = fopen(vd->log, "r");
	if (!f)
		return 0;
	while (fgets(buf, sizeof(buf), f)) {
		for (i = 0; i < sizeof(pat_) / sizeof(pat_[0]); i++) {
			if (strstr(buf, pat_[i])) {
				buf[strcspn(buf, "\n")] = '\0';
				snprintf(line, len, "%.*s", (int)len - 1, buf);
				fclose(f);
				return 1;
			}
		}
	}
	fclose(f);
	return 0;
}

bool vd_kill(struct vd *vd, int sig)
{
	long long deadline = now_ms() + STOP_MS;

	if (vd->pid <= 0)
		return true;
	kill(vd->pid, sig);
	while (vd_running(vd)) {
		if (now_ms() > deadline) {
			kill(vd->pid, SIGKILL);
			waitpid(vd->pid, &vd->status, 0);
			vd->pid = -1;
			return false;
		}
		nap_ms(5);
	}
	return true;
}

void rm_pins(const char *tap)
{
	char dir[256], path[512];
	struct dirent *de;
	DIR *d;

	snprintf(dir, sizeof(dir), PIN_ROOT "/%s", tap);
	d = opendir(dir);
	if (!d)
		return;
	while ((de = readdir(d))) {
		if (de->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
		unlink(path);
	}
	closedir(d);
	rmdir(dir);
}

void vd_stop(struct vd *vd)
{
	unsigned int i;
	struct stat sb;
	char line[300];

	if (vd->pid > 0) {
		if (!vd_kill(vd, SIGTERM))
			test_fail("vnetd did not exit within %d ms of SIGTERM",
				  STOP_MS);
		else if (!WIFEXITED(vd->status) || WEXITSTATUS(vd->status))
			test_fail("vnetd: exit status 0x%x after SIGTERM, expected 0: %s",
				  vd->status, vd_log_tail(vd));
	}
	for (i = 0; i < vd->nports; i++) {
		char dir[160];

		port_close_maps(&vd->port[i]);
		snprintf(dir, sizeof(dir), PIN_ROOT "/%s", vd->port[i].tap);
		if (vd->check_pins && !stat(dir, &sb))
			test_fail("vnetd left its pins behind: %s", dir);
	}
	if (vd->nports && vd->check_pins && WIFEXITED(vd->status) &&
	    !WEXITSTATUS(vd->status)) {
		char ho[160];

		snprintf(ho, sizeof(ho), "/run/vnet/%s.takeover",
			 vd->port[0].tap);
		if (!stat(ho, &sb))
			test_fail("vnetd left its hand-over socket behind: %s", ho);
	}
	if (vd_sanitizer_report(vd, line, sizeof(line)))
		test_fail("sanitizer report in %s: %s", vd->log, line);
}

void vd_cleanup(struct vd *vd)
{
	unsigned int i;

	if (vd->pid > 0)
		vd_stop(vd);
	for (i = 0; i < vd->nports; i++) {
		port_close_maps(&vd->port[i]);
		rm_pins(vd->port[i].tap);
		/* a packed ring's journal, named as systemd-escape --path does */
		sh("rm -f \"/run/vnet/$(systemd-escape --path '%s').rings\"",
		   vd->port[i].sock);
		unlink(vd->port[i].sock);
	}
	if (vd->ns_made) {
		sh("ip netns del %s >/dev/null 2>&1", vd->ns);
		for (i = 0; i < nr_made_ns; i++)
			if (!strcmp(made_ns[i], vd->ns))
				made_ns[i][0] = '\0';
		vd->ns_made = false;
	}
	unlink(vd->conf);
	if (test_state.failed || getenv("VNETD_KEEP_LOGS"))
		fprintf(stderr, "  # vnetd log kept: %s\n", vd->log);
	else
		unlink(vd->log);
}

bool vd_up(struct vd *vd)
{
	unlink(vd->log);
	if (sh("ip netns add %s", vd->ns)) {
		test_fail("ip netns add %s failed", vd->ns);
		return false;
	}
	vd->ns_made = true;
	if (nr_made_ns < sizeof(made_ns) / sizeof(made_ns[0]))
		snprintf(made_ns[nr_made_ns++], sizeof(made_ns[0]), "%s",
			 vd->ns);
	sh("ip -n %s link set lo up", vd->ns);
	/* no IPv6 chatter (RS, MLD) on the taps vnetd creates */
	ns_sysctl(vd->ns, "/proc/sys/net/ipv6/conf/all/disable_ipv6", "1");
	ns_sysctl(vd->ns, "/proc/sys/net/ipv6/conf/default/disable_ipv6", "1");
	if (vd->own_tap &&
	    sh("ip -n %s tuntap add dev %s mode tap%s", vd->ns,
	       vd->port[0].tap,
	       vd->own_tap_single ? "" : " multi_queue vnet_hdr")) {
		test_fail("ip tuntap add %s failed", vd->port[0].tap);
		return false;
	}
	return vd_start(vd);
}

/*
 * The start most cases share: vnetd up in its fresh namespace (vd_up) and
 * an AF_PACKET socket on port 0's tap in *pfd.  False when either failed
 * (the case has failed); vd_cleanup() and close_fd() clean up either way.
 */
bool vd_up_tap(struct vd *vd, int *pfd)
{
	if (!vd_up(vd))
		return false;
	*pfd = pkt_open(vd->ns, vd->port[0].tap);
	return ASSERT_GE(*pfd, 0, "AF_PACKET on the tap");
}

void vd_log_mark(struct vd *vd)
{
	struct stat sb;

	vd->mark = stat(vd->log, &sb) ? 0 : sb.st_size;
}

bool vd_log_wait_line(struct vd *vd, char *line, size_t len,
		      int timeout_ms)
{
	long long deadline = now_ms() + timeout_ms;
	char buf[2048];

	do {
		int fd = open(vd->log, O_RDONLY | O_CLOEXEC);
		ssize_t n = -1;

		if (fd >= 0) {
			n = pread(fd, buf, sizeof(buf) - 1, vd->mark);
			close(fd);
		}
		if (n > 0) {
			char *nl;

			buf[n] = '\0';
			nl = strchr(buf, '\n');
			if (nl) {
				*nl = '\0';
				snprintf(line, len, "%.*s", (int)len - 1,
					 buf);
				return true;
			}
		}
		nap_ms(5);
	} while (now_ms() < deadline);
	return false;
}

/*
 * The id of VD's queue thread for pair QP ("vnetd-qN", qthread.c), or -1.
 */
static pid_t vd_qthread(const struct vd *vd, unsigned int qp)
{
	char path[64], comm[32], want[16];
	struct dirent *de;
	pid_t tid = -1;
	DIR *d;

	snprintf(want, sizeof(want), "vnetd-q%u\n", qp);
	snprintf(path, sizeof(path), "/proc/%d/task", (int)vd->pid);
	d = opendir(path);
	if (!d)
		return -1;
	while (tid < 0 && (de = readdir(d))) {
		FILE *f;

		if (de->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "/proc/%d/task/%.16s/comm",
			 (int)vd->pid, de->d_name);
		f = fopen(path, "r");
		if (!f)
			continue;
		if (fgets(comm, sizeof(comm), f) && !strcmp(comm, want))
			tid = (pid_t)atoi(de->d_name);
		fclose(f);
	}
	closedir(d);
	return tid;
}

/*
 * Does the thread's /proc syscall line (LINE) say it sleeps in epoll_wait
 * (or epoll_pwait) with a timeout other than 0?  A thread that runs reads
 * "running"; a sleeping one its call's number and arguments, the timeout
 * the fourth.
 */
static bool sleeps_in_epoll(const char *line)
{
	unsigned long a[4];
	long nr;

	if (sscanf(line, "%ld %lx %lx %lx %lx", &nr, &a[0], &a[1], &a[2],
		   &a[3]) != 5)
		return false;
#ifdef SYS_epoll_wait
	if (nr == SYS_epoll_wait)
		return (int)a[3] != 0;
#endif
	return nr == SYS_epoll_pwait && (int)a[3] != 0;
}

bool vd_qthread_waits(const struct vd *vd, unsigned int qp, int timeout_ms)
{
	long long deadline = now_ms() + timeout_ms;
	char path[64], line[256];
	pid_t tid = vd_qthread(vd, qp);

	if (tid < 0)
		return false;
	snprintf(path, sizeof(path), "/proc/%d/task/%d/syscall", (int)vd->pid,
		 (int)tid);
	for (;;) {
		FILE *f = fopen(path, "r");
		bool idle;

		if (!f)
			return false;
		idle = fgets(line, sizeof(line), f) && sleeps_in_epoll(line);
		fclose(f);
		if (idle)
			return true;
		if (now_ms() >= deadline)
			return false;
		usleep(100);
	}
}

/* ---- maps ---- */

bool dps_read(const struct port *p, __u32 dir, __u32 q,
	      struct vnet_dp_stats *st)
{
	__u32 key = vnet_key(dir, q);

	memset(st, 0, sizeof(*st));
	return p->dps_fd >= 0 && !bpf_map_lookup_elem(p->dps_fd, &key, st);
}

bool qs_read(const struct port *p, __u32 dir, __u32 q,
	     struct vnet_queue_state *qs)
{
	__u32 key = vnet_key(dir, q);

	memset(qs, 0, sizeof(*qs));
	return p->qs_fd >= 0 && !bpf_map_lookup_elem(p->qs_fd, &key, qs);
}

bool cfg_set(const struct port *p, __u32 q, const struct coal *c)
{
	struct vnet_config cfg;

	if (p->cfg_fd < 0 || bpf_map_lookup_elem(p->cfg_fd, &q, &cfg))
		return ASSERT_OK(-1, "read config map");
	cfg.tx_frames = c->tx_frames;
	cfg.tx_usecs = c->tx_usecs;
	cfg.rx_frames = c->rx_frames;
	cfg.rx_usecs = c->rx_usecs;
	cfg.flags &= ~(VNET_CFG_ADAPTIVE_TX | VNET_CFG_ADAPTIVE_RX |
		       VNET_CFG_NO_TX_BYPASS | VNET_CFG_NO_RX_BYPASS |
		       VNET_CFG_TX_HOLD_ALWAYS | VNET_CFG_RX_HOLD_ALWAYS);
	cfg.flags |= c->flags;
	cfg.gen++;
	return ASSERT_OK(bpf_map_update_elem(p->cfg_fd, &q, &cfg, BPF_ANY),
			 "write config map");
}

/* ------------------------------------------------------------------ */

static bool find_vnetd(char *why, size_t len)
{
	const char *env = getenv("VNETD");
	char self[PATH_MAX];
	ssize_t n;

	if (env && *env) {
		snprintf(vnetd_bin, sizeof(vnetd_bin), "%s", env);
	} else {
		/* build/selftests/test_vnetd_* -> build/vnetd-asan */
		n = readlink("/proc/self/exe", self, sizeof(self) - 1);
		if (n < 0) {
			snprintf(why, len, "readlink /proc/self/exe: %s",
				 strerror(errno));
			return false;
		}
		self[n] = '\0';
		*strrchr(self, '/') = '\0';
		snprintf(vnetd_bin, sizeof(vnetd_bin), "%.*s/../vnetd-asan",
			 (int)(sizeof(vnetd_bin) - 16), self);
	}
	if (access(vnetd_bin, X_OK)) {
		snprintf(why, len, "%s: %s (make all builds it)", vnetd_bin,
			 strerror(errno));
		return false;
	}
	return true;
}

/* root and BPF skip every test; a missing vnetd-asan fails every test */
static int vnetd_setup(char *why, size_t len)
{
	signal(SIGPIPE, SIG_IGN);
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	if (!test_have_root_bpf(why, len))
		return 1;
	host_ns = open("/proc/self/ns/net", O_RDONLY | O_CLOEXEC);
	if (host_ns < 0) {
		snprintf(why, len, "/proc/self/ns/net: %s", strerror(errno));
		return 1;
	}
	if (!find_vnetd(why, len))
		return -1;
	return 0;
}

/*
 * The main() of every test_vnetd_* program (its file of cases registers
 * them with VNET_TEST()): test.h's test_main() under the program's own
 * name; every test skips without root and BPF, and fails without
 * build/vnetd-asan ($VNETD); -v is verbose.  The exit status.
 */
int main(int argc, char **argv)
{
	static const struct test_main_opts opts = {
		.setup = vnetd_setup,
		.verbose = &verbose,
	};

	setvbuf(stdout, NULL, _IOLBF, 0);
	return test_main(argc, argv, program_invocation_short_name, &opts);
}
