// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * vnetd datapath tests (see vnetd_test.h): a queue pair that goes quiet
 * gives back what its bursts made resident, and takes it again on the
 * next frame (docs/vnetd.md, "Memory"; qthread.c, qp.c, tapio.c).
 *
 * vnetd-asan with VNETD_TEST_IDLE_MS=400 (a test build's quiet time,
 * 10 s otherwise).  Twice: 64 frames wait in the tap while the guest has
 * no RX buffer, then the guest posts as many buffers as the round takes and vnetd reads them in
 * bursts of up to 32 (its RX bounce slots become io_uring fixed buffers)
 * and delivers them in order, byte for byte; a frame guest -> tap and one
 * back.  Right after, in /proc/PID/smaps and the io_uring's fdinfo: the
 * slots, the burst arrays and the guest memory's pages are resident, slot
 * buffers registered; then, within 5 s, none of them is (but the rings'
 * pages, which the watchdog reads).  The second
 * round shows that they are taken back and frames still flow.
 */
#include "vnetd_test.h"

#define IDLE_MS "400"
#define BURST_FRAMES 64
/* VNETD_RX_BURST (32) x VNETD_RX_SLOT (66 KiB), user/vnetd/datapath/tapio.h */
#define SLOTS_KB 2112
/*
 * The burst arrays (qp.c): (VNETD_TX_BURST_MAX + VNETD_RX_ELEMS) (64 + 64)
 * struct vhost_vq_elem of 1568 bytes and VNETD_RX_BURST x VNETD_RX_IOV
 * iovecs, 233984 bytes, in pages
 */
#define ARRAYS_KB 232
/*
 * Guest memory vnetd may map again while the pair is quiet: the rings'
 * pages, which the control thread's watchdog reads every 250 ms (a lost
 * kick, mailbox.c); vufe's rings take 15 pages
 */
#define RINGS_KB 64

/* vnetd's mappings, from /proc/PID/smaps */
struct vma {
	unsigned long start, end, rss_kb;
	char perm[8], name[64];
};

static int vmas_read(pid_t pid, struct vma *v, int max)
{
	char path[64], line[512];
	unsigned long rss;
	int n = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/smaps", (int)pid);
	f = fopen(path, "r");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		struct vma m = {};

		if (sscanf(line, "%lx-%lx %7s %*s %*s %*s %63s", &m.start,
			   &m.end, m.perm, m.name) >= 3) {
			if (n < max)
				v[n++] = m;
			continue;
		}
		if (n && sscanf(line, "Rss: %lu kB", &rss) == 1)
			v[n - 1].rss_kb = rss;
	}
	fclose(f);
	return n;
}

static bool anon_guard(const struct vma *m)
{
	return !m->name[0] && !strcmp(m->perm, "---p");
}

struct res {
	long slots, arrays, guest;
	int bufs;
};

/* the RX slots' first address (from the io_uring's fdinfo, once seen) */
static unsigned long slots_at;

static int uring_bufs(pid_t pid);

/*
 * KiB of [START, START + KB KiB) of PID present in memory (pagemap's bit
 * 63; root reads it): the slots' mapping may have merged with a neighbour,
 * so its smaps line is not theirs alone
 */
static long resident_kb(pid_t pid, unsigned long start, unsigned long kb)
{
	uint64_t e[SLOTS_KB / 4];
	unsigned long n = kb / 4, i;
	long sum = 0;
	char path[64];
	int fd;

	if (!start || n > sizeof(e) / sizeof(e[0]))
		return -1;
	snprintf(path, sizeof(path), "/proc/%d/pagemap", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	if (pread(fd, e, n * 8, (off_t)(start / 4096 * 8)) != (ssize_t)(n * 8))
		sum = -1;
	for (i = 0; sum >= 0 && i < n; i++)
		sum += (e[i] >> 63) ? 4 : 0;
	close(fd);
	return sum;
}

/*
 * The RX slots: where the io_uring said buffer 0 is.  The burst arrays: anonymous,
 * read-write, ARRAYS_KB, PROT_NONE right below and right above.  Guest
 * memory: memfds.
 */
static void res_read(pid_t pid, struct res *r)
{
	static struct vma v[4096];
	int i, n = vmas_read(pid, v, 4096);

	memset(r, 0, sizeof(*r));
	for (i = 0; i < n; i++) {
		struct vma *m = &v[i];

		if (!strncmp(m->name, "/memfd:", 7))
			r->guest += (long)m->rss_kb;
		else if (!m->name[0] && !strcmp(m->perm, "rw-p") && i > 0 &&
			 i + 1 < n && m->end - m->start == ARRAYS_KB * 1024UL &&
			 anon_guard(&v[i - 1]) && anon_guard(&v[i + 1]) &&
			 v[i - 1].end == m->start && v[i + 1].start == m->end)
			r->arrays += (long)m->rss_kb;
	}
	r->bufs = uring_bufs(pid);
	r->slots = resident_kb(pid, slots_at, SLOTS_KB);
}

/*
 * Buffers registered in PID's io_uring rings (their fdinfo lists each as
 * "N: 0xADDR/LEN"); -1 when no ring says (no io_uring, another format)
 */
static int uring_bufs(pid_t pid)
{
	char path[300], link[64], line[256];
	int n = -1, nr;
	struct dirent *de;
	ssize_t l;
	DIR *d;

	snprintf(path, sizeof(path), "/proc/%d/fd", (int)pid);
	d = opendir(path);
	if (!d)
		return -1;
	while ((de = readdir(d))) {
		FILE *f;

		snprintf(path, sizeof(path), "/proc/%d/fd/%.20s", (int)pid,
			 de->d_name);
		l = readlink(path, link, sizeof(link) - 1);
		if (l <= 0 || (link[l] = '\0', !strstr(link, "io_uring")))
			continue;
		snprintf(path, sizeof(path), "/proc/%d/fdinfo/%.20s", (int)pid,
			 de->d_name);
		f = fopen(path, "r");
		if (!f)
			continue;
		while (fgets(line, sizeof(line), f)) {
			if (sscanf(line, "UserBufs: %d", &nr) == 1 && n < 0)
				n = 0;
			else if (strstr(line, ": 0x") && strchr(line, '/')) {
				unsigned long a;

				/* buffer 0 is slot 0 */
				if (sscanf(line, " 0: 0x%lx", &a) == 1)
					slots_at = a;
				n++;
			}
		}
		fclose(f);
	}
	closedir(d);
	return n;
}

/* BURST_FRAMES frames queued in the tap, then the guest's buffers */
static bool burst_round(struct vufe *fe, int pfd, unsigned int round)
{
	static __u8 f[FRAME_MAX], got[FRAME_MAX];
	struct virtio_net_hdr_mrg_rxbuf hdr;
	unsigned int i, nbufs;
	ssize_t r;

	for (i = 0; i < BURST_FRAMES; i++) {
		test_frame(f, 100, guest_mac, host_mac, round * 1000 + i);
		if (!ASSERT_OK(pkt_send(pfd, NULL, f, 100), "AF_PACKET send"))
			return false;
	}
	/* as many as the round takes (its frames, ping_both's): none left */
	if (!ASSERT_EQ(vufe_post_rx(fe, 0, BURST_FRAMES + 1), BURST_FRAMES + 1,
		       "post RX buffers"))
		return false;
	for (i = 0; i < BURST_FRAMES; i++) {
		test_frame(f, 100, guest_mac, host_mac, round * 1000 + i);
		r = guest_recv(fe, 1, got, sizeof(got), &hdr, &nbufs, NULL,
			       match_test, NULL, WAIT_MS);
		if (r < 0) {
			test_fail("round %u: frame %u did not reach the guest: %s",
				  round, i,
				  r == -ETIMEDOUT ? "timeout" :
						    vufe_strerror(fe));
			return false;
		}
		if (!ASSERT_EQ(test_frame_id(got, r), round * 1000 + i,
			       "in order") ||
		    !ASSERT_EQ(r, 100, "length") ||
		    !ASSERT_MEMEQ(got, f, 100, "content"))
			return false;
	}
	return true;
}

/* within 5 s: nothing of the pair's resident but the rings, no buffer
 * registered */
static bool given_back(pid_t pid, struct res *r)
{
	long long deadline = now_ms() + 5000;

	for (;;) {
		res_read(pid, r);
		if (!r->slots && !r->arrays && r->guest <= RINGS_KB &&
		    r->bufs <= 0)
			return true;
		if (now_ms() >= deadline)
			return false;
		nap_ms(50);
	}
}

static void idle_trim(void)
{
	struct vufe *fe = NULL;
	struct res r;
	unsigned int round;
	struct vd vd;
	int pfd = -1;

	vd_init(&vd, "idle", 1, 1);
	setenv("VNETD_TEST_IDLE_MS", IDLE_MS, 1);
	if (!vd_up_tap(&vd, &pfd))
		goto out;
	{
		struct vufe_opts o = fe_opts(&vd.port[0]);

		/* no buffer but those burst_round() posts */
		o.rx_auto_refill = false;
		fe = fe_up(&o);
	}
	if (!fe)
		goto out;
	for (round = 0; round < 2; round++) {
		if (!burst_round(fe, pfd, round) ||
		    !ping_both(fe, &vd.port[0], 0, pfd, round, "after a burst"))
			goto out;
		res_read(vd.pid, &r);
		dbg("round %u, after traffic: slots %ld KiB, arrays %ld KiB, guest memory %ld KiB, io_uring buffers %d\n",
		    round, r.slots, r.arrays, r.guest, r.bufs);
		ASSERT_GT(r.slots, 0, "RX slots resident after traffic");
		ASSERT_GT(r.arrays, 0, "burst arrays resident after traffic");
		ASSERT_GT(r.guest, RINGS_KB,
			  "guest memory mapped after traffic");
		if (r.bufs >= 0)
			ASSERT_GT(r.bufs, 0,
				  "RX slots registered after bursts");
		if (!given_back(vd.pid, &r))
			test_fail("round %u: 5 s idle, still resident: slots %ld KiB, arrays %ld KiB, guest memory %ld KiB; io_uring buffers %d",
				  round, r.slots, r.arrays, r.guest, r.bufs);
		if (test_state.failed)
			goto out;
	}
	/* and after the second time: frames flow */
	if (ASSERT_EQ(vufe_post_rx(fe, 0, 1), 1, "post an RX buffer"))
		ping_both(fe, &vd.port[0], 0, pfd, 99, "after the second trim");
out:
	unsetenv("VNETD_TEST_IDLE_MS");
	vd_end(&vd, fe, &pfd);
}

VNET_TEST("vnetd/idle_trim", idle_trim);
