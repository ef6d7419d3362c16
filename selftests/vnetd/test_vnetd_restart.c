// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* vnetd datapath tests: restart, client mode, an existing tap (see vnetd_test.h) */
#include "vnetd_test.h"

#include <linux/if_tun.h>
#include <linux/io_uring.h>

/* ------------------------------------------------------------------ */
/* 6. restart                                                          */
/* ------------------------------------------------------------------ */

/* the classifier runs on the (new) tap: urgent frames are counted */
static bool classifier_live(struct vufe *fe, const struct port *p,
			    unsigned int *seq)
{
	struct vnet_queue_state q0, q1;
	long long deadline;

	qs_read(p, VNET_DIR_TX, 0, &q0);
	if (!tx_bursts(fe, 5, 5, URGENT, true, seq))
		return false;
	deadline = now_ms() + WAIT_MS;
	while (qs_read(p, VNET_DIR_TX, 0, &q1) && q1.urgent - q0.urgent < 5 &&
	       now_ms() < deadline)
		nap_ms(2);
	return ASSERT_GE(q1.urgent - q0.urgent, 5,
			 "the classifier runs on the tap");
}

/*
 * PACKED: vnetd --packed, the frontend on packed rings (32-bit bases).
 * QEMU: the frontend stays connected while vnetd goes and then sends the
 * base of the rings' last start, as QEMU does: only the rings' journal
 * tells the new vnetd where they are.
 */
static void restart_as(bool clean, bool packed, bool qemu)
{
	struct vufe_vq_stats rx, tx;
	struct vufe_opts o;
	struct vufe *fe = NULL;
	unsigned int i, seq = 0;
	struct vd vd;
	int pfd = -1;

	vd_init(&vd, qemu ? clean ? "restartqp" : "restartkqp" :
		     clean ? packed ? "restartp" : "restart" :
			     packed ? "restartkp" : "restartk", 1, 1);
	if (packed)
		vd.extra = "--packed";
	if (!vd_up(&vd))
		goto out;
	pfd = pkt_open(vd.ns, vd.port[0].tap);
	o = fe_opts(&vd.port[0]);
	o.timeout_ms = START_MS;	/* reconnect waits for the new vnetd */
	if (packed)
		o.want_features |= 1ULL << VIRTIO_F_RING_PACKED;
	o.qemu_packed_base = qemu;
	fe = fe_up(&o);
	if (!fe || !ASSERT_GE(pfd, 0, "AF_PACKET on the tap") ||
	    !ASSERT_EQ(vufe_packed(fe), packed,
		       packed ? "RING_PACKED negotiated" : "split rings"))
		goto out;
	vufe_post_rx(fe, 0, 0);
	for (i = 0; i < 10; i++)
		if (!ping_both(fe, &vd.port[0], 0, pfd, i, "before"))
			goto out;
	if (!classifier_live(fe, &vd.port[0], &seq))
		goto out;

	/*
	 * The frontend stops and comes back to the same vnetd: with QEMU's
	 * base, the one GET_VRING_BASE answered is the one it holds from
	 * then on, which the journal must know.
	 */
	if (clean) {
		if (!ASSERT_OK(vufe_stop(fe), vufe_strerror(fe)) ||
		    !ASSERT_OK(vufe_reconnect(fe), vufe_strerror(fe)))
			goto out;
		for (i = 100; i < 105; i++)
			if (!ping_both(fe, &vd.port[0], 0, pfd, i,
				       "frontend reconnected"))
				goto out;
	}

	if (clean && qemu) {
		vd_stop(&vd);
	} else if (clean) {
		if (!ASSERT_OK(vufe_stop(fe), vufe_strerror(fe)))
			goto out;
		vufe_vq_stats(fe, VUFE_RXQ(0), &rx);
		vufe_vq_stats(fe, VUFE_TXQ(0), &tx);
		if (packed) {
			/* avail position low, used position high: all used */
			ASSERT_EQ(tx.base, tx.avail_idx | (__u32)tx.avail_idx << 16,
				  "TX base = frames sent, all used");
			ASSERT_EQ(rx.base, rx.used_idx | (__u32)rx.used_idx << 16,
				  "RX base = buffers used");
		} else {
			ASSERT_EQ(tx.base, tx.avail_idx, "TX base = frames sent");
			ASSERT_EQ(rx.base, rx.used_idx, "RX base = buffers used");
		}
		vd_stop(&vd);
	} else {
		vd_kill(&vd, SIGKILL);
		/* it could not clean up; the next one must cope */
		vd.check_pins = false;
	}
	close_fd(&pfd);
	if (test_state.failed)
		goto out;
	if (!vd_start(&vd))
		goto out;
	pfd = pkt_open(vd.ns, vd.port[0].tap);
	if (!ASSERT_GE(pfd, 0, "AF_PACKET on the new tap"))
		goto out;
	if (!ASSERT_OK(vufe_reconnect(fe), vufe_strerror(fe)))
		goto out;
	for (i = 10; i < 20; i++)
		if (!ping_both(fe, &vd.port[0], 0, pfd, i, "after the restart"))
			goto out;
	classifier_live(fe, &vd.port[0], &seq);
	vufe_vq_stats(fe, VUFE_TXQ(0), &tx);
	ASSERT_EQ(tx.used_idx, tx.avail_idx, "every TX frame used");
	if (qemu)
		ASSERT_TRUE(vd_log_has(&vd, "resumed where the ring journal says"),
			    "the rings resumed from the journal, not the stale base");
out:
	vd_end(&vd, fe, &pfd);
}

static void restart(bool clean, bool packed)
{
	restart_as(clean, packed, false);
}

static void restart_qemu_base(void)
{
	restart_as(true, true, true);
}

static void restart_after_kill_qemu_base(void)
{
	restart_as(false, true, true);
}

static void restart_clean(void)
{
	restart(true, false);
}

static void restart_after_kill(void)
{
	restart(false, false);
}

static void restart_clean_packed(void)
{
	restart(true, true);
}

static void restart_after_kill_packed(void)
{
	restart(false, true);
}

/* --client: vnetd dials the frontend, and again when it goes away */
static void client_mode(void)
{
	struct vufe_opts o;
	struct vufe *fe = NULL;
	unsigned int i;
	struct vd vd;
	int pfd = -1;

	vd_init(&vd, "client", 1, 1);
	vd.client = true;
	o = fe_opts(&vd.port[0]);
	o.timeout_ms = START_MS;
	unlink(vd.port[0].sock);
	if (vufe_create(&o, &fe)) {
		test_fail("vufe_create: %s", vufe_strerror(NULL));
		fe = NULL;
		goto out;
	}
	if (!ASSERT_OK(vufe_listen(fe), vufe_strerror(fe)) || !vd_up(&vd))
		goto out;
	if (!ASSERT_OK(vufe_accept(fe), vufe_strerror(fe)) ||
	    !ASSERT_OK(vufe_setup(fe), vufe_strerror(fe)))
		goto out;
	pfd = pkt_open(vd.ns, vd.port[0].tap);
	if (!ASSERT_GE(pfd, 0, "AF_PACKET on the tap"))
		goto out;
	vufe_post_rx(fe, 0, 0);
	for (i = 0; i < 5; i++)
		if (!ping_both(fe, &vd.port[0], 0, pfd, i, "client"))
			goto out;
	/* the frontend goes away (saved bases) and listens again */
	if (!ASSERT_OK(vufe_stop(fe), vufe_strerror(fe)) ||
	    !ASSERT_OK(vufe_reconnect(fe), vufe_strerror(fe)))
		goto out;
	for (i = 5; i < 10; i++)
		if (!ping_both(fe, &vd.port[0], 0, pfd, i, "client, reconnected"))
			goto out;
	/* and once more after an abrupt hang-up */
	vufe_disconnect(fe);
	if (!ASSERT_OK(vufe_reconnect(fe), vufe_strerror(fe)))
		goto out;
	for (i = 10; i < 15; i++)
		if (!ping_both(fe, &vd.port[0], 0, pfd, i, "client, after a hang-up"))
			goto out;
out:
	if (fe)
		vufe_destroy(fe);
	close_fd(&pfd);
	unlink(vd.port[0].sock);
	vd_cleanup(&vd);
}

/*
 * An AF_PACKET socket on VD's port 0 tap (*PFD) and a frontend (*FE) with
 * its RX buffers posted, then N round trips both ways (ids i * STRIDE).
 */
static bool connect_and_ping(struct vd *vd, struct vufe **fe, int *pfd,
			     unsigned int n, unsigned int stride,
			     const char *what)
{
	struct vufe_opts o;
	unsigned int i;

	*pfd = pkt_open(vd->ns, vd->port[0].tap);
	o = fe_opts(&vd->port[0]);
	*fe = fe_up(&o);
	if (!*fe || !ASSERT_GE(*pfd, 0, "AF_PACKET on the tap"))
		return false;
	vufe_post_rx(*fe, 0, 0);
	for (i = 0; i < n; i++)
		if (!ping_both(*fe, &vd->port[0], 0, *pfd, i * stride, what))
			return false;
	return true;
}

/*
 * A tap made beforehand (persistent, as libvirt makes them), plain
 * read/write instead of io_uring; vnetd stops while the guest is still
 * connected, and leaves the tap it did not create.
 */
static void existing_tap_no_uring(void)
{
	static __u8 f[FRAME_MAX];
	struct virtio_net_hdr_mrg_rxbuf hdr;
	static struct gso_flow g;
	struct vufe *fe = NULL;
	struct vd vd;
	int pfd = -1;
	size_t len;

	vd_init(&vd, "nouring", 1, 1);
	vd.own_tap = true;
	vd.extra = "--no-uring";
	if (!vd_up(&vd))
		goto out;
	if (!connect_and_ping(&vd, &fe, &pfd, 40, 37, "--no-uring"))
		goto out;
	gso_flow_init(&g, 43000, 7000);
	memset(&hdr, 0, sizeof(hdr));
	len = gso_frame(f, &hdr.hdr, nobody_mac, guest_mac, GUEST_IP, HOST_IP,
			43000, 7000);
	if (!ASSERT_OK(tx_send(fe, 0, &hdr, f, len, 0), "send GSO frame") ||
	    !tap_collect_gso(pfd, &g, 1, 5000))
		goto out;
	vd_stop(&vd);
	ASSERT_GT(ns_link(vd.ns, vd.port[0].tap, NULL), 0,
		  "the persistent tap is still there after vnetd exits");
out:
	vd_end(&vd, fe, &pfd);
}

/*
 * A tap made the way most people make one ('ip tuntap add dev T mode tap':
 * one queue, no vnet_hdr) serves a port of one queue pair; a port of two
 * is refused with both fixes in the message.
 */
static void single_queue_tap(void)
{
	struct vufe_opts o;
	struct vufe *fe = NULL;
	char log[4096];
	unsigned int i;
	struct vd vd;
	int pfd = -1, rc, fd;
	ssize_t n;

	vd_init(&vd, "sqtap", 1, 1);
	vd.own_tap = vd.own_tap_single = true;
	if (!vd_up_tap(&vd, &pfd))
		goto out;
	o = fe_opts(&vd.port[0]);
	fe = fe_up(&o);
	if (!ASSERT_TRUE(fe != NULL, "frontend"))
		goto out;
	vufe_post_rx(fe, 0, 0);
	for (i = 0; i < 20; i++)
		if (!ping_both(fe, &vd.port[0], 0, pfd, i * 41, "single-queue tap"))
			goto out;
	fd = open(vd.log, O_RDONLY | O_CLOEXEC);
	n = fd >= 0 ? read(fd, log, sizeof(log) - 1) : -1;
	if (fd >= 0)
		close(fd);
	log[n > 0 ? n : 0] = '\0';
	ASSERT_TRUE(strstr(log, "(a single-queue tap)") != NULL,
		    "vnetd says it serves a single-queue tap");
	vufe_destroy(fe);
	fe = NULL;
	vd_stop(&vd);

	/* two queue pairs on the same tap: refused, naming the fixes */
	rc = sh("%s --netns %s --tap %s --socket %s.2 --queues 2 >%s.2 2>&1",
		vnetd_bin, vd.ns, vd.port[0].tap, vd.port[0].sock, vd.log);
	ASSERT_EQ(rc, 1, "vnetd --queues 2 on a single-queue tap exits 1");
	ASSERT_EQ(sh("grep -q \"mode tap multi_queue vnet_hdr', or serve it with --queues 1\" %s.2",
		     vd.log), 0, "the message names both fixes");
	ASSERT_GT(ns_link(vd.ns, vd.port[0].tap, NULL), 0,
		  "the tap is still there");
out:
	vd_end(&vd, fe, &pfd);
}

/* the queues tun counts on VD's tap (ip -d: "numqueues N"), or -1 */
static int tap_queues(const struct vd *vd)
{
	char cmd[256], line[1024], *q;
	int n = -1;
	FILE *f;

	snprintf(cmd, sizeof(cmd), "ip -n %s -d link show %s 2>/dev/null",
		 vd->ns, vd->port[0].tap);
	f = popen(cmd, "r");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if ((q = strstr(line, " numqueues ")))
			n = atoi(q + 11);
	pclose(f);
	return n;
}

/*
 * The child of unheld_case: attach a queue of VD's tap, put it in an
 * io_uring's file table and close the fd, as a vnetd killed with its tap
 * reads in flight leaves it; let go (exit) once vnetd's log has UNTIL, or
 * after 10 s.  Exit status 0, or where it failed.
 */
static void __attribute__((noreturn)) queue_holder(struct vd *vd, int ready,
						   const char *until)
{
	struct io_uring_params p = {};
	struct ifreq ifr = {};
	long long deadline;
	int fd, ufd;
	char c = 1;

	if (ns_enter(vd->ns))
		_exit(2);
	fd = open("/dev/net/tun", O_RDWR | O_CLOEXEC);
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", vd->port[0].tap);
	ifr.ifr_flags = IFF_TAP | IFF_NO_PI | IFF_MULTI_QUEUE | IFF_VNET_HDR;
	if (fd < 0 || ioctl(fd, TUNSETIFF, &ifr))
		_exit(3);
	ufd = (int)syscall(__NR_io_uring_setup, 2, &p);
	if (ufd < 0 ||
	    syscall(__NR_io_uring_register, ufd, IORING_REGISTER_FILES, &fd, 1))
		_exit(4);
	close(fd);
	if (write(ready, &c, 1) != 1)
		_exit(5);
	close(ready);
	deadline = now_ms() + 10000;
	while (!vd_log_has(vd, until) && now_ms() < deadline)
		nap_ms(5);
	_exit(0);
}

/*
 * A queue of the tap that no process holds as an fd: what a vnetd killed
 * with its tap reads in an io_uring leaves behind until the kernel tears
 * that ring down, asynchronously (restart_after_kill lost a frame to it
 * about once in 13 runs).  The next vnetd must wait for it to go and then
 * hold the tap's only queue: attached beside it, vnetd's queue would be
 * queue 1, and tun would steer frames to the dead queue 0.  STAYS: the
 * queue outlasts vnetd's wait, and vnetd must refuse the tap.
 */
static void unheld_case(bool stays)
{
	struct vufe *fe = NULL;
	int pfd = -1, pp[2] = { -1, -1 }, st;
	long long deadline;
	pid_t child = -1;
	struct vd vd;
	char c;

	vd_init(&vd, stays ? "unheldst" : "unheld", 1, 1);
	vd.own_tap = true;
	if (!vd_up(&vd))
		goto out;
	vd_stop(&vd);
	/* the stopped vnetd's own io_uring lets go of its queue too, later */
	deadline = now_ms() + 3000;
	while (tap_queues(&vd) != 0 && now_ms() < deadline)
		nap_ms(5);
	if (!ASSERT_EQ(tap_queues(&vd), 0, "the stopped vnetd's queue went") ||
	    !ASSERT_OK(pipe2(pp, O_CLOEXEC), "pipe"))
		goto out;
	child = fork();
	if (child == 0) {
		close(pp[0]);
		queue_holder(&vd, pp[1],
			     stays ? "still attached after" :
				     "queue(s) no process holds to go");
	}
	close_fd(&pp[1]);
	if (!ASSERT_GE(child, 0, "fork") ||
	    !ASSERT_EQ(read(pp[0], &c, 1), 1,
		       "the child holds a queue in an io_uring, no fd"))
		goto out;
	if (!ASSERT_EQ(tap_queues(&vd), 1, "tun counts the held queue"))
		goto out;
	if (stays) {
		if (!vd_spawn(&vd))
			goto out;
		deadline = now_ms() + 3000 + START_MS; /* vnetd waits 3 s */
		while (vd_running(&vd) && now_ms() < deadline)
			nap_ms(10);
		if (!ASSERT_FALSE(vd_running(&vd), "vnetd gave up on the tap"))
			goto out;
		ASSERT_TRUE(WIFEXITED(vd.status) && WEXITSTATUS(vd.status) != 0,
			    "vnetd exited with an error");
		ASSERT_TRUE(vd_log_has(&vd, "1 queue(s) still attached after 3000 ms, held by no process's fds"),
			    "the message says what holds the tap");
		ASSERT_TRUE(vd_log_has(&vd, "ip link del"),
			    "the message names the fix");
		goto out;
	}
	if (!vd_start(&vd))
		goto out;
	ASSERT_EQ(tap_queues(&vd), 1, "vnetd's queue is the tap's only one");
	ASSERT_TRUE(vd_log_has(&vd, "waiting for 1 queue(s) no process holds to go"),
		    "vnetd waited for the queue no process holds");
	ASSERT_TRUE(vd_log_has(&vd, "its queues went after"),
		    "vnetd said when it went");
	connect_and_ping(&vd, &fe, &pfd, 20, 1, "after the queue went");
out:
	if (child > 0) {
		ASSERT_EQ(waitpid(child, &st, 0), child, "the holder ended");
		ASSERT_EQ(st, 0, "the holder's exit status");
	}
	close_fd(&pp[0]);
	close_fd(&pp[1]);
	vd_end(&vd, fe, &pfd);
}

static void restart_queue_unheld(void)
{
	unheld_case(false);
}

static void restart_queue_unheld_stays(void)
{
	unheld_case(true);
}

VNET_TEST("vnetd/restart", restart_clean);
VNET_TEST("vnetd/restart_after_kill", restart_after_kill);
VNET_TEST("vnetd/packed/restart", restart_clean_packed);
VNET_TEST("vnetd/packed/restart_after_kill", restart_after_kill_packed);
VNET_TEST("vnetd/packed/restart_qemu_base", restart_qemu_base);
VNET_TEST("vnetd/packed/restart_after_kill_qemu_base", restart_after_kill_qemu_base);
VNET_TEST("vnetd/client_mode", client_mode);
VNET_TEST("vnetd/existing_tap_no_uring", existing_tap_no_uring);
VNET_TEST("vnetd/single_queue_tap", single_queue_tap);
VNET_TEST("vnetd/restart_queue_unheld", restart_queue_unheld);
VNET_TEST("vnetd/restart_queue_unheld_stays", restart_queue_unheld_stays);
