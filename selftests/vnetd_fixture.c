// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* test_vnetd_*: vnetd (its process, namespace, ports, logs, maps), the frontend, the main loop */
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

bool vd_start(struct vd *vd)
{
	struct stat old[2];
	long long deadline;
	unsigned int i;
	struct stat sb;
	char q[16];

	memset(old, 0, sizeof(old));
	for (i = 0; i < vd->nports; i++) {
		stat(vd->port[i].sock, &old[i]);
		port_close_maps(&vd->port[i]);
	}
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
		argv[n] = NULL;
		execv(vnetd_bin, argv);
		fprintf(stderr, "exec %s: %s\n", vnetd_bin, strerror(errno));
		_exit(127);
	}

	/*
	 * ready: every socket exists, a new one and not a stale file (tmpfs
	 * reuses inode numbers: the change time tells them apart)
	 */
	deadline = now_ms() + START_MS;
	for (i = 0; i < vd->nports && !vd->client; i++) {
		for (;;) {
			if (!stat(vd->port[i].sock, &sb) &&
			    S_ISSOCK(sb.st_mode) &&
			    (sb.st_ino != old[i].st_ino ||
			     sb.st_ctim.tv_sec != old[i].st_ctim.tv_sec ||
			     sb.st_ctim.tv_nsec != old[i].st_ctim.tv_nsec))
				break;
			if (!vd_running(vd)) {
				test_fail("vnetd exited (status 0x%x) before its socket %s existed: %s",
					  vd->status, vd->port[i].sock,
					  vd_log_tail(vd));
				return false;
			}
			if (now_ms() > deadline) {
				test_fail("vnetd made no socket %s in %d ms: %s",
					  vd->port[i].sock, START_MS,
					  vd_log_tail(vd));
				return false;
			}
			nap_ms(10);
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
	    sh("ip -n %s tuntap add dev %s mode tap multi_queue vnet_hdr",
	       vd->ns, vd->port[0].tap)) {
		test_fail("ip tuntap add %s failed", vd->port[0].tap);
		return false;
	}
	return vd_start(vd);
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
		       VNET_CFG_NO_TX_BYPASS | VNET_CFG_NO_RX_BYPASS);
	cfg.flags |= c->flags;
	cfg.gen++;
	return ASSERT_OK(bpf_map_update_elem(p->cfg_fd, &q, &cfg, BPF_ANY),
			 "write config map");
}

/* ------------------------------------------------------------------ */
/* the frontend                                                        */
/* ------------------------------------------------------------------ */

struct vufe_opts fe_opts(const struct port *p)
{
	struct vufe_opts o = VUFE_OPTS_DEFAULT;

	o.path = p->sock;
	o.nr_qp = p->queues;
	o.nr_regions = 2;
	o.mem_size = 128UL << 20;
	o.want_features |= ALL_OFFLOADS;
	return o;
}

struct vufe *fe_up(const struct vufe_opts *o)
{
	struct vufe *fe;
	int err;

	err = vufe_create(o, &fe);
	if (err) {
		test_fail("vufe_create: %s", vufe_strerror(NULL));
		return NULL;
	}
	err = vufe_connect(fe);
	if (!err)
		err = vufe_setup(fe);
	if (err) {
		test_fail("vhost-user setup: %s", vufe_strerror(fe));
		vufe_destroy(fe);
		return NULL;
	}
	dbg("features 0x%llx (backend 0x%llx), protocol 0x%llx, hdr %u\n",
	    (unsigned long long)vufe_features(fe),
	    (unsigned long long)vufe_backend_features(fe),
	    (unsigned long long)vufe_protocol_features(fe), vufe_hdr_len(fe));
	return fe;
}

bool tx_idle(struct vufe *fe, void *arg)
{
	unsigned int qp = *(unsigned int *)arg;

	if (vufe_tx_reap(fe, qp) < 0)
		return true;	/* the error shows in the caller's check */
	return vufe_tx_inflight(fe, qp) == 0;
}

int tx_send(struct vufe *fe, unsigned int qp,
	    const struct virtio_net_hdr_mrg_rxbuf *hdr, const void *f,
	    size_t len, unsigned int flags)
{
	long long deadline = now_ms() + WAIT_MS;
	int err;

	for (;;) {
		err = vufe_send(fe, qp, hdr, f, len, flags);
		if (err != -ENOSPC)
			return err;
		if (flags & VUFE_TX_NO_KICK)
			vufe_kick(fe, VUFE_TXQ(qp));
		err = vufe_tx_reap(fe, qp);
		if (err < 0)
			return err;
		if (err > 0)
			continue;
		if (now_ms() > deadline)
			return -ETIMEDOUT;
		vufe_wait(fe, tx_idle, &qp, 5);
	}
}

int tx_wait_idle(struct vufe *fe, unsigned int qp, int timeout_ms)
{
	int err = vufe_wait(fe, tx_idle, &qp, timeout_ms);

	if (err)
		return err;
	err = vufe_tx_reap(fe, qp);
	return err < 0 ? err : 0;
}

bool rx_any(struct vufe *fe, void *arg)
{
	struct rx_any_arg *a = arg;
	struct vufe_vq_stats st;
	unsigned int qp;

	for (qp = 0; qp < a->nr_qp; qp++) {
		vufe_vq_stats(fe, VUFE_RXQ(qp), &st);
		if (st.used_idx != st.last_used)
			return true;
	}
	return false;
}

ssize_t guest_recv(struct vufe *fe, unsigned int nr_qp, __u8 *buf,
		   size_t cap, struct virtio_net_hdr_mrg_rxbuf *hdr,
		   unsigned int *nbufs, unsigned int *qp_out,
		   match_fn match, void *arg, int timeout_ms)
{
	long long deadline = now_ms() + timeout_ms;
	struct rx_any_arg a = { nr_qp };
	unsigned int qp;
	ssize_t n;
	int err;

	for (;;) {
		bool again = false;

		for (qp = 0; qp < nr_qp; qp++) {
			n = vufe_recv(fe, qp, buf, cap, hdr, nbufs);
			if (n == -EAGAIN)
				continue;
			if (n < 0)
				return n;
			again = true;
			if (!match || match(buf, n, arg)) {
				if (qp_out)
					*qp_out = qp;
				return n;
			}
			dbg("guest: dropped a %zd-byte frame (type 0x%04x)\n",
			    n, n >= 14 ? frame_get16(buf, 12) : 0);
		}
		if (again)
			continue;
		if (now_ms() >= deadline)
			return -ETIMEDOUT;
		err = vufe_wait(fe, rx_any, &a,
				(int)(deadline - now_ms() > 0 ?
					      deadline - now_ms() : 1));
		if (err && err != -ETIMEDOUT)
			return err;
	}
}

bool match_id(const __u8 *f, size_t len, void *arg)
{
	return test_frame_id(f, len) == *(long long *)arg;
}

bool match_test(const __u8 *f, size_t len, void *arg)
{
	(void)arg;
	return test_frame_id(f, len) >= 0;
}

bool match_sport(const __u8 *f, size_t len, void *arg)
{
	return len >= L4_OFF + 4 && frame_get16(f, 12) == ETH_P_IP &&
	       frame_get16(f, L4_OFF) == *(__u16 *)arg;
}

bool match_ipv4(const __u8 *f, size_t len, void *arg)
{
	(void)arg;
	return len >= L4_OFF + 4 && frame_get16(f, 12) == ETH_P_IP;
}

bool tap_expect(int pfd, const __u8 *want, size_t len, int timeout_ms,
		const char *what)
{
	static __u8 got[FRAME_MAX];
	long long deadline = now_ms() + timeout_ms;
	long long id = test_frame_id(want, len);

	for (;;) {
		long long left = deadline - now_ms();
		ssize_t n = pkt_recv(pfd, NULL, got, sizeof(got),
				     left > 0 ? (int)left : 0);

		if (n < 0) {
			test_fail("%s: frame %lld (%zu bytes) did not reach the tap: %s",
				  what, id, len, strerror((int)-n));
			return false;
		}
		if (test_frame_id(got, n) != id) {
			dbg("tap: skipped a %zd-byte frame (id %lld)\n", n,
			    test_frame_id(got, n));
			continue;
		}
		if (!ASSERT_EQ(n, len, what))
			return false;
		return ASSERT_MEMEQ(got, want, len, what);
	}
}

bool ping_both(struct vufe *fe, const struct port *p, unsigned int qp,
	       int pfd, __u32 id, const char *what)
{
	static __u8 f[1514], got[FRAME_MAX];
	long long want = id | 0x40000000;
	ssize_t n;
	int err;

	test_frame(f, 300 + id % 1000, nobody_mac, guest_mac, id);
	err = tx_send(fe, qp, NULL, f, 300 + id % 1000, 0);
	if (err) {
		test_fail("%s: send on queue %u: %s", what, qp,
			  vufe_strerror(fe));
		return false;
	}
	if (!tap_expect(pfd, f, 300 + id % 1000, WAIT_MS, what))
		return false;
	if (tx_wait_idle(fe, qp, WAIT_MS)) {
		test_fail("%s: TX completion on queue %u: %s", what, qp,
			  vufe_strerror(fe));
		return false;
	}

	test_frame(f, 200 + id % 1000, guest_mac, host_mac, (__u32)want);
	err = pkt_send(pfd, NULL, f, 200 + id % 1000);
	if (err) {
		test_fail("%s: AF_PACKET send: %s", what, strerror(-err));
		return false;
	}
	n = guest_recv(fe, p->queues, got, sizeof(got), NULL, NULL, NULL,
		       match_id, &want, WAIT_MS);
	if (n < 0) {
		test_fail("%s: frame %lld from the tap did not reach the guest: %s",
			  what, want,
			  n == -ETIMEDOUT ? "timeout" : vufe_strerror(fe));
		return false;
	}
	return ASSERT_EQ(n, 200 + id % 1000, what) &&
	       ASSERT_MEMEQ(got, f, (size_t)n, what);
}

bool tx_bursts(struct vufe *fe, unsigned int frames,
	       unsigned int burst, enum kind kind, bool rearm,
	       unsigned int *seq)
{
	static __u8 f[256];
	unsigned int sent = 0, i;

	while (sent < frames) {
		unsigned int nb = frames - sent < burst ? frames - sent : burst;

		for (i = 0; i < nb; i++) {
			size_t len = kind == BULK ?
				udp_frame(f, nobody_mac, guest_mac, 30000,
					  *seq) :
				tcp_frame(f, nobody_mac, guest_mac, *seq,
					  kind == PUSH);

			(*seq)++;
			if (tx_send(fe, 0, NULL, f, len, VUFE_TX_NO_KICK)) {
				test_fail("send: %s", vufe_strerror(fe));
				return false;
			}
		}
		if (vufe_kick(fe, VUFE_TXQ(0)) < 0 ||
		    tx_wait_idle(fe, 0, WAIT_MS)) {
			test_fail("burst at frame %u not used: %s", sent,
				  vufe_strerror(fe));
			return false;
		}
		if (rearm)
			vufe_enable_cb(fe, VUFE_TXQ(0));
		sent += nb;
	}
	return true;
}

bool tap_collect_gso(int pfd, struct gso_flow *g, unsigned int n,
		     int timeout_ms)
{
	static __u8 buf[FRAME_MAX];
	long long deadline = now_ms() + timeout_ms;
	struct virtio_net_hdr vh;
	unsigned int i, done;

	for (;;) {
		long long left;
		ssize_t len;

		for (i = 0, done = 0; i < n; i++)
			done += g[i].covered == GSO_PLEN;
		if (done == n)
			return true;
		left = deadline - now_ms();
		len = pkt_recv(pfd, &vh, buf, sizeof(buf),
			       left > 0 ? (int)left : 0);
		if (len < 0) {
			for (i = 0; i < n; i++)
				if (g[i].covered != GSO_PLEN)
					break;
			test_fail("64 KB GSO frame (flow %u): %zu of %u payload bytes reached the tap in %u frames: %s",
				  g[i].sport, g[i].covered, GSO_PLEN,
				  g[i].frames, strerror((int)-len));
			return false;
		}
		for (i = 0; i < n; i++) {
			int r = gso_feed(&g[i], &vh, buf, len);

			if (r < 0) {
				test_fail("%s", g[i].err);
				return false;
			}
			if (r)
				break;
		}
	}
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
		/* build/selftests/test_vnetd -> build/vnetd-asan */
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

int vnetd_test_main(int argc, char **argv, const struct vnetd_case *cases,
		    unsigned int nr_cases, const char *prog)
{
	char why[PATH_MAX + 64];
	unsigned int i;
	bool have;
	int opt;

	while ((opt = getopt(argc, argv, "vh")) != -1) {
		switch (opt) {
		case 'v':
			verbose = true;
			break;
		default:
			fprintf(stderr, "usage: %s [-v] [FILTER]\n", prog);
			return 2;
		}
	}
	if (optind < argc)
		filter = argv[optind];
	setvbuf(stdout, NULL, _IOLBF, 0);
	signal(SIGPIPE, SIG_IGN);
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);

	have = test_have_root_bpf(why, sizeof(why));
	if (have) {
		host_ns = open("/proc/self/ns/net", O_RDONLY | O_CLOEXEC);
		if (host_ns < 0) {
			snprintf(why, sizeof(why), "/proc/self/ns/net: %s",
				 strerror(errno));
			have = false;
		}
	}
	for (i = 0; i < nr_cases; i++) {
		if (filter && !strstr(cases[i].name, filter))
			continue;
		test_start(cases[i].name);
		if (!have)
			test_skip("%s", why);
		else if (!find_vnetd(why, sizeof(why)))
			test_fail("%s", why);
		else
			cases[i].fn();
		test_end();
	}
	return test_summary(prog);
}
