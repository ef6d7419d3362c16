// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* test_classify: a real multiqueue tap (see test_classify.c) */
#include "classify.h"

/* ------------------------------------------------------------------ */
/* A real multiqueue tap. */

struct tap {
	char name[IFNAMSIZ];
	int ifindex;
	int fds[TAP_QUEUES];
	int packet_fd; /* PACKET_VNET_HDR socket bound to the tap */
};

static struct tap tap = { .fds = { -1, -1, -1, -1 }, .packet_fd = -1 };

static int write_file(const char *path, const char *s)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC), err = 0;

	if (fd < 0)
		return -errno;
	if (write(fd, s, strlen(s)) < 0)
		err = -errno;
	close(fd);
	return err;
}

static void tap_close(struct tap *t)
{
	int i;

	for (i = 0; i < TAP_QUEUES; i++) {
		if (t->fds[i] >= 0)
			close(t->fds[i]);
		t->fds[i] = -1;
	}
	if (t->packet_fd >= 0)
		close(t->packet_fd);
	t->packet_fd = -1;
}

/*
 * TAP_QUEUES queues, IPv6 off (no router solicitations or MLD reports
 * through tc egress while a test counts frames), MTU 9000, up, and an
 * AF_PACKET socket to send frames out of it.  Returns 0 or a negative
 * errno with why filled in.
 */
static int tap_open(struct tap *t, char *why, size_t len)
{
	struct sockaddr_ll sll = { .sll_family = AF_PACKET };
	struct ifreq ifr;
	char path[128];
	int i, fd, one = 1, err;

	/*
	 * A private network namespace: nothing else (a network manager, a
	 * DHCP client) sees the tap or sends through it.  Best effort: the
	 * tests work in the current namespace too.
	 */
	if (unshare(CLONE_NEWNET))
		fprintf(stderr, "  # unshare(CLONE_NEWNET): %s, using the "
			"current network namespace\n", strerror(errno));

	for (i = 0; i < TAP_QUEUES; i++) {
		fd = open("/dev/net/tun", O_RDWR | O_CLOEXEC | O_NONBLOCK);
		if (fd < 0) {
			err = -errno;
			snprintf(why, len, "open /dev/net/tun: %s",
				 strerror(errno));
			return err;
		}
		t->fds[i] = fd;
		memset(&ifr, 0, sizeof(ifr));
		ifr.ifr_flags = IFF_TAP | IFF_NO_PI | IFF_MULTI_QUEUE;
		snprintf(ifr.ifr_name, IFNAMSIZ, "%s", i ? t->name : "vnett%d");
		if (ioctl(fd, TUNSETIFF, &ifr)) {
			err = -errno;
			snprintf(why, len, "TUNSETIFF: %s", strerror(errno));
			return err;
		}
		memcpy(t->name, ifr.ifr_name, IFNAMSIZ);
	}
	t->ifindex = (int)if_nametoindex(t->name);

	snprintf(path, sizeof(path), "/proc/sys/net/ipv6/conf/%s/disable_ipv6",
		 t->name);
	write_file(path, "1"); /* absent without IPv6: nothing to silence */

	fd = socket(AF_PACKET, SOCK_RAW | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		err = -errno;
		snprintf(why, len, "AF_PACKET socket: %s", strerror(errno));
		return err;
	}
	t->packet_fd = fd;
	memset(&ifr, 0, sizeof(ifr));
	memcpy(ifr.ifr_name, t->name, IFNAMSIZ);
	ifr.ifr_mtu = JUMBO_FRAME_LEN;
	if (ioctl(fd, SIOCSIFMTU, &ifr)) {
		err = -errno;
		snprintf(why, len, "SIOCSIFMTU: %s", strerror(errno));
		return err;
	}
	if (ioctl(fd, SIOCGIFFLAGS, &ifr)) {
		err = -errno;
		snprintf(why, len, "SIOCGIFFLAGS: %s", strerror(errno));
		return err;
	}
	ifr.ifr_flags |= IFF_UP;
	if (ioctl(fd, SIOCSIFFLAGS, &ifr)) {
		err = -errno;
		snprintf(why, len, "SIOCSIFFLAGS: %s", strerror(errno));
		return err;
	}
	if (setsockopt(fd, SOL_PACKET, PACKET_VNET_HDR, &one, sizeof(one))) {
		err = -errno;
		snprintf(why, len, "PACKET_VNET_HDR: %s", strerror(errno));
		return err;
	}
	sll.sll_ifindex = t->ifindex;
	if (bind(fd, (struct sockaddr *)&sll, sizeof(sll))) {
		err = -errno;
		snprintf(why, len, "bind AF_PACKET: %s", strerror(errno));
		return err;
	}
	return 0;
}

/* Empties every tap queue (frames sent out of the tap wait there). */
static void tap_drain(struct tap *t)
{
	int i;

	for (i = 0; i < TAP_QUEUES; i++)
		while (read(t->fds[i], rxbuf, sizeof(rxbuf)) > 0)
			;
}

/* Which tap queue holds the next frame (-1: none); the frame is read. */
static int tap_recv_queue(struct tap *t)
{
	int i;

	for (i = 0; i < TAP_QUEUES; i++)
		if (read(t->fds[i], rxbuf, sizeof(rxbuf)) > 0)
			return i;
	return -1;
}

/*
 * Polls the stats of key until packets moved (frames that enter the stack
 * from a tap write may be processed from a softirq on some configurations).
 */
static int snap_wait(__u32 key, const struct snap *before, struct snap *after)
{
	int i, err = 0;

	for (i = 0; i < 200; i++) {
		err = snap_read(key, after);
		if (err || snap_packets(after) != snap_packets(before))
			return err;
		usleep(5000);
	}
	return err;
}

/*
 * The tap, opened by the first tap test that runs (in a network namespace
 * of the process's own: these tests come last), closed by the teardown;
 * vnet_tc_rx on its tc egress for the egress cases, attached by the first
 * of them, detached before a test that makes its own clsact.
 */
static int tap_state;	/* 0: not tried, 1: open, -1: failed (tap_why) */
static char tap_why[160];
static int egress_state; /* 0: not attached, 1: attached, -1: failed */
static char egress_why[160];

static bool tap_ready(void)
{
	if (!classify_ready())
		return false;
	if (!tap_state) {
		tap_state = tap_open(&tap, tap_why, sizeof(tap_why)) ? -1 : 1;
		if (tap_state < 0)
			tap_close(&tap);
	}
	if (tap_state < 0) {
		test_skip("%s", tap_why);
		return false;
	}
	return true;
}

static bool egress_ready(void)
{
	DECLARE_LIBBPF_OPTS(bpf_tc_hook, hook, .attach_point = BPF_TC_EGRESS);
	DECLARE_LIBBPF_OPTS(bpf_tc_opts, opts, .handle = 1, .priority = 1);
	int err;

	if (!tap_ready())
		return false;
	if (!egress_state) {
		hook.ifindex = tap.ifindex;
		opts.prog_fd = hook_tc_rx.fd;
		err = bpf_tc_hook_create(&hook);
		if (err == -EEXIST)
			err = 0;
		if (!err)
			err = bpf_tc_attach(&hook, &opts);
		egress_state = err ? -1 : 1;
		if (err)
			snprintf(egress_why, sizeof(egress_why),
				 "attach tc egress: %s", strerror(-err));
	}
	if (egress_state < 0) {
		test_skip("%s", egress_why);
		return false;
	}
	return true;
}

/* detaches the egress cases' vnet_tc_rx and removes the clsact */
static void egress_release(void)
{
	DECLARE_LIBBPF_OPTS(bpf_tc_hook, hook, .attach_point = BPF_TC_EGRESS);
	DECLARE_LIBBPF_OPTS(bpf_tc_opts, opts, .handle = 1, .priority = 1);

	if (egress_state > 0) {
		hook.ifindex = tap.ifindex;
		bpf_tc_detach(&hook, &opts);
		/* creating a clsact twice is noisy */
		hook.attach_point = BPF_TC_INGRESS | BPF_TC_EGRESS;
		bpf_tc_hook_destroy(&hook);
	}
	egress_state = 0;
}

void classify_tap_teardown(void)
{
	if (tap_state > 0)
		egress_release();
	tap_close(&tap);
	tap_state = 0;
}

/*
 * XDP test runs on a given rx queue: xdp_md.rx_queue_index needs
 * ingress_ifindex of a device that has that many rx queues, the tap.
 */
void test_xdp_rx_queue_index(void)
{
	static const struct {
		__u32 queue;
		int expect;
		uint8_t flags;
	} runs[] = {
		{ 1, VNET_CLASS_URGENT, FRAME_TCP_ACK },
		{ 3, VNET_CLASS_PUSH, FRAME_TCP_PSH | FRAME_TCP_ACK },
	};
	__u32 key0 = vnet_key(VNET_DIR_TX, 0);
	struct snap b0, a0;
	char name[64];
	size_t i;

	if (!tap_ready())
		return;
	if (!ASSERT_OK(snap_read(key0, &b0), "read maps"))
		return;
	for (i = 0; i < sizeof(runs) / sizeof(runs[0]); i++) {
		struct frame_spec s = tcp4(runs[i].flags, 200);
		struct xdp_md ctx = {
			.ingress_ifindex = (__u32)tap.ifindex,
			.rx_queue_index = runs[i].queue,
		};
		ssize_t len = frame_build(&s, frame, sizeof(frame), NULL);

		if (!ASSERT_GT(len, 0, "build frame"))
			return;
		ctx.data_end = (__u32)len;
		snprintf(name, sizeof(name), "xdp queue %u", runs[i].queue);
		hook_xdp.name = name;
		run_hook(&hook_xdp, frame, (size_t)len, &ctx, sizeof(ctx),
			 vnet_key(VNET_DIR_TX, runs[i].queue), runs[i].expect,
			 (__u64)len);
		hook_xdp.name = "xdp";
	}
	if (ASSERT_OK(snap_read(key0, &a0), "read maps"))
		ASSERT_EQ(snap_packets(&a0), snap_packets(&b0),
			  "queue 0 untouched");
}

/*
 * Writes a frame into tap queue `queue` (as vhost or QEMU would for the
 * guest's tx queue `queue`) and checks that TX key `queue` counted it.
 */
static void tap_write_check(const char *what, int queue, bool nonblock,
			    const struct frame_spec *s, int expect)
{
	__u32 key = vnet_key(VNET_DIR_TX, (__u32)queue);
	int fd = tap.fds[queue], fl;
	struct snap b, a;
	char name[96];
	ssize_t len, n;

	len = frame_build(s, frame, sizeof(frame), NULL);
	snprintf(name, sizeof(name), "%s: build frame", what);
	if (!ASSERT_GT(len, 0, name))
		return;
	snprintf(name, sizeof(name), "%s: read maps", what);
	if (!ASSERT_OK(snap_read(key, &b), name))
		return;
	/*
	 * tun runs native XDP only for frames written with O_NONBLOCK (as
	 * vhost-net does); a blocking write goes through generic XDP.
	 */
	fl = fcntl(fd, F_GETFL);
	fcntl(fd, F_SETFL, nonblock ? fl | O_NONBLOCK : fl & ~O_NONBLOCK);
	n = write(fd, frame, (size_t)len);
	fcntl(fd, F_SETFL, fl);
	snprintf(name, sizeof(name), "%s: write into tap queue %d", what,
		 queue);
	if (!ASSERT_EQ(n, len, name))
		return;
	snprintf(name, sizeof(name), "%s: read maps", what);
	if (!ASSERT_OK(snap_wait(key, &b, &a), name))
		return;
	snprintf(name, sizeof(name), "%s: queue %d", what, queue);
	check_account(name, &b, &a, expect, (__u64)len);
}

/* vnet_tc_tx on tc ingress: queue = skb->queue_mapping - 1 */
void test_tap_tc_ingress(void)
{
	DECLARE_LIBBPF_OPTS(bpf_tc_hook, hook, .attach_point = BPF_TC_INGRESS);
	DECLARE_LIBBPF_OPTS(bpf_tc_opts, opts, .handle = 1, .priority = 1);
	struct frame_spec urgent = tcp4(FRAME_TCP_ACK, 300);
	struct frame_spec push = tcp6(FRAME_TCP_PSH | FRAME_TCP_ACK, 300);
	struct frame_spec ack = tcp4(FRAME_TCP_ACK, 0);
	int err;

	if (!tap_ready())
		return;
	egress_release(); /* one clsact at a time: this test removes it */
	hook.ifindex = tap.ifindex;
	opts.prog_fd = hook_tc_tx.fd;
	ack.min_len = FRAME_MIN_LEN;
	err = bpf_tc_hook_create(&hook);
	if (err && err != -EEXIST) {
		ASSERT_OK(err, "create clsact");
		return;
	}
	if (!ASSERT_OK(bpf_tc_attach(&hook, &opts), "attach tc ingress"))
		goto destroy;
	tap_write_check("tc_tx", 2, true, &urgent, VNET_CLASS_URGENT);
	tap_write_check("tc_tx", 0, true, &ack, VNET_CLASS_ACK);
	tap_write_check("tc_tx", 3, false, &push, VNET_CLASS_PUSH);
	opts.prog_fd = opts.prog_id = 0;
	opts.flags = 0;
	ASSERT_OK(bpf_tc_detach(&hook, &opts), "detach tc ingress");
destroy:
	hook.attach_point = BPF_TC_INGRESS | BPF_TC_EGRESS;
	bpf_tc_hook_destroy(&hook);
}

/* vnet_xdp_tx attached to the tap: queue = the tap queue written to */
void test_tap_xdp(void)
{
	struct frame_spec urgent = tcp4(FRAME_TCP_ACK, 300);
	struct frame_spec push = tcp4(FRAME_TCP_PSH | FRAME_TCP_ACK, 300);
	struct frame_spec arp = { .ethertype = ETH_P_ARP,
				  .min_len = FRAME_MIN_LEN };
	__u32 flags = XDP_FLAGS_DRV_MODE;
	int err;

	if (!tap_ready())
		return;
	err = bpf_xdp_attach(tap.ifindex, hook_xdp.fd, flags, NULL);
	if (err) {
		flags = XDP_FLAGS_SKB_MODE;
		err = bpf_xdp_attach(tap.ifindex, hook_xdp.fd, flags, NULL);
	}
	if (!ASSERT_OK(err, "attach xdp"))
		return;
	tap_write_check("xdp", 1, true, &urgent, VNET_CLASS_URGENT);
	tap_write_check("xdp", 3, false, &push, VNET_CLASS_PUSH);
	tap_write_check("xdp", 2, true, &arp, VNET_CLASS_OTHER);
	ASSERT_OK(bpf_xdp_detach(tap.ifindex, flags, NULL), "detach xdp");
}

/* The stats and queue state of every tap queue's RX key. */
static int snap_read_rx(struct snap s[TAP_QUEUES])
{
	int q, err;

	for (q = 0; q < TAP_QUEUES; q++) {
		err = snap_read(vnet_key(VNET_DIR_RX, (__u32)q), &s[q]);
		if (err)
			return err;
	}
	return 0;
}

/* All RX keys of the tap added up: for cases that do not test the queue. */
static int snap_read_rx_sum(struct snap *sum)
{
	struct snap s[TAP_QUEUES];
	int q, i, err;

	err = snap_read_rx(s);
	if (err)
		return err;
	memset(sum, 0, sizeof(*sum));
	for (q = 0; q < TAP_QUEUES; q++) {
		for (i = 0; i < VNET_CLASS_MAX; i++) {
			sum->c[i].packets += s[q].c[i].packets;
			sum->c[i].bytes += s[q].c[i].bytes;
		}
		sum->q.urgent += s[q].q.urgent;
		sum->q.push += s[q].q.push;
		if (s[q].q.last_urgent_ns > sum->q.last_urgent_ns)
			sum->q.last_urgent_ns = s[q].q.last_urgent_ns;
		if (s[q].q.last_push_ns > sum->q.last_push_ns)
			sum->q.last_push_ns = s[q].q.last_push_ns;
		if (s[q].q.first_seen_ns)
			sum->q.first_seen_ns = s[q].q.first_seen_ns;
	}
	return 0;
}

/*
 * Sends vh + frame out of the tap through the PACKET_VNET_HDR socket.  The
 * socket's protocol is the frame's outer ethertype, as the kernel checks it
 * against a GSO type.
 */
static ssize_t tap_send(const struct virtio_net_hdr *vh, const void *data,
			size_t len)
{
	struct sockaddr_ll sll = {
		.sll_family = AF_PACKET,
		.sll_ifindex = tap.ifindex,
		.sll_protocol = htons(frame_get16(data, 12)),
	};
	struct iovec iov[2] = {
		{ .iov_base = (void *)vh, .iov_len = sizeof(*vh) },
		{ .iov_base = (void *)data, .iov_len = len },
	};
	struct msghdr msg = {
		.msg_name = &sll,
		.msg_namelen = sizeof(sll),
		.msg_iov = iov,
		.msg_iovlen = 2,
	};
	ssize_t n = sendmsg(tap.packet_fd, &msg, 0);

	return n < 0 ? -errno : n - (ssize_t)sizeof(*vh);
}

/*
 * One frame out of the tap, vnet_tc_rx on tc egress counting (at
 * skb->queue_mapping, which tc egress sees before the queue is picked: the
 * sum over the tap's queues is checked, classify/tap_xmit_rx_queue tests
 * the queue).
 */
static void tap_egress_check(const char *what, const void *data, size_t len,
			     const struct virtio_net_hdr *vh, int expect)
{
	struct snap b, a;
	char name[96];
	ssize_t n;

	snprintf(name, sizeof(name), "%s: read maps", what);
	if (!ASSERT_OK(snap_read_rx_sum(&b), name))
		return;
	n = tap_send(vh, data, len);
	snprintf(name, sizeof(name), "%s: send out of the tap", what);
	if (!ASSERT_EQ(n, len, name))
		return;
	/* tc egress runs in the sender's context: counted by now */
	snprintf(name, sizeof(name), "%s: read maps", what);
	if (ASSERT_OK(snap_read_rx_sum(&a), name))
		check_account(what, &b, &a, expect, (__u64)len);
}

enum tx_mode {
	TX_GSO,	   /* checksum offload + TSO: one 60 KB skb */
	TX_LINEAR, /* no offload, only the Ethernet header linear */
};

/*
 * TX_LINEAR asks the packet socket for a linear part of ETH_HLEN
 * (virtio_net_hdr.hdr_len): a frame longer than a page is then built with
 * its IP and TCP headers in page fragments, which vnet_tc_classify() must
 * pull.  TX_GSO sends one skb of up to 64 KB, as a guest with TSO or a
 * local TCP socket would, classified by its headers.
 */
static void tap_egress_case(struct frame_spec *s, enum tx_mode mode,
			    int expect)
{
	struct virtio_net_hdr vh = { 0 };
	struct frame_layout l;
	ssize_t len;

	if (!egress_ready())
		return;
	tap_drain(&tap);
	len = frame_build(s, frame, sizeof(frame), &l);
	if (!ASSERT_GT(len, 0, "build frame"))
		goto out;
	if (mode == TX_GSO) {
		if (!ASSERT_OK(frame_vnet_hdr(frame, s, &l, 1448, &vh),
			       "vnet_hdr"))
			goto out;
	} else {
		vh.hdr_len = htole16(FRAME_ETH_HLEN);
	}
	tap_egress_check("tc_rx", frame, (size_t)len, &vh, expect);
out:
	tap_drain(&tap);
}

/* The frames that bpf_prog_test_run_skb() refuses, through tc egress. */
void test_tap_short_ip_headers(void)
{
	static const char *const names[] = {
		"ipv4_no_header",
		"ipv4_header_truncated",
		"ipv6_header_truncated",
	};
	char full[64];
	struct virtio_net_hdr vh = { 0 };
	size_t i;
	ssize_t len;

	if (!egress_ready())
		return;
	tap_drain(&tap);
	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		const struct frame_case *c;

		snprintf(full, sizeof(full), "classify/%s", names[i]);
		c = frame_case_find(full);
		if (!ASSERT_OK_PTR(c, names[i]))
			continue;
		len = frame_case_build(c, frame, sizeof(frame));
		if (!ASSERT_GE(len, FRAME_ETH_HLEN, names[i]))
			continue;
		tap_egress_check(names[i], frame, (size_t)len, &vh,
				 VNET_CLASS_MALFORMED);
	}
	tap_drain(&tap);
}

/* Polls the sum of the tap's RX keys until a frame was counted. */
static int snap_wait_rx(const struct snap b[TAP_QUEUES],
			struct snap a[TAP_QUEUES])
{
	__u64 before = 0, after;
	int q, i, err;

	for (q = 0; q < TAP_QUEUES; q++)
		before += snap_packets(&b[q]);
	for (i = 0; i < 200; i++) {
		err = snap_read_rx(a);
		if (err)
			return err;
		after = 0;
		for (q = 0; q < TAP_QUEUES; q++)
			after += snap_packets(&a[q]);
		if (after != before)
			return 0;
		usleep(5000);
	}
	return 0;
}

/*
 * Sends one frame out of the tap and checks that exactly one RX key
 * counted it, with class `expect`, and that this key is the tap queue the
 * frame went to.  Returns that queue, or -1.
 */
static int tap_xmit_check(const char *what, const struct frame_spec *s,
			  int expect)
{
	struct snap b[TAP_QUEUES], a[TAP_QUEUES];
	struct virtio_net_hdr vh = { 0 };
	int k, q, moved = -1, nr_moved = 0;
	char name[96];
	ssize_t len, n;

	len = frame_build(s, frame, sizeof(frame), NULL);
	snprintf(name, sizeof(name), "%s: build frame", what);
	if (!ASSERT_GT(len, 0, name))
		return -1;
	snprintf(name, sizeof(name), "%s: read maps", what);
	if (!ASSERT_OK(snap_read_rx(b), name))
		return -1;
	n = tap_send(&vh, frame, (size_t)len);
	snprintf(name, sizeof(name), "%s: send out of the tap", what);
	if (!ASSERT_EQ(n, len, name))
		return -1;
	snprintf(name, sizeof(name), "%s: read maps", what);
	if (!ASSERT_OK(snap_wait_rx(b, a), name))
		return -1;
	for (k = 0; k < TAP_QUEUES; k++) {
		if (snap_packets(&a[k]) != snap_packets(&b[k])) {
			moved = k;
			nr_moved++;
		}
	}
	q = tap_recv_queue(&tap);
	snprintf(name, sizeof(name), "%s: frame in a tap queue", what);
	if (!ASSERT_GE(q, 0, name))
		return -1;
	snprintf(name, sizeof(name), "%s: RX keys that counted", what);
	if (!ASSERT_EQ(nr_moved, 1, name))
		return -1;
	snprintf(name, sizeof(name), "%s: RX queue counted vs tap queue used",
		 what);
	if (!ASSERT_EQ(moved, q, name))
		return -1;
	snprintf(name, sizeof(name), "%s: queue %d", what, q);
	check_account(name, &b[q], &a[q], expect, (__u64)len);
	return q;
}

/*
 * Guest-RX counting as vnetctl attach sets it up: vnet_tc_rx on tc egress
 * only classifies (rx_count_at_xmit) and hands the class over in
 * tc_classid; vnet_xmit_rx on the net_dev_start_xmit tracepoint counts at
 * the queue tun picked.  A second instance of the skeleton, loaded for
 * this tap and this network namespace, with its own maps.
 */
void test_tap_xmit_rx_queue(void)
{
	DECLARE_LIBBPF_OPTS(bpf_tc_hook, hook, .attach_point = BPF_TC_EGRESS);
	DECLARE_LIBBPF_OPTS(bpf_tc_opts, opts, .handle = 1, .priority = 1);
	int saved_stats, saved_queues;
	struct bpf_link *tp = NULL;
	unsigned int used = 0, nr_used = 0;
	bool tc_attached = false;
	struct vnet *xs;
	struct stat st;
	char what[32];
	int flow, q, err;

	if (!tap_ready())
		return;
	/* its own clsact: the egress cases' goes first */
	egress_release();
	hook.ifindex = tap.ifindex;
	saved_stats = stats_fd;
	saved_queues = queues_fd;
	xs = vnet__open();
	if (!ASSERT_OK_PTR(xs, "vnet__open"))
		goto out;
	bpf_program__set_autoload(xs->progs.vnet_xdp_tx, false);
	bpf_program__set_autoload(xs->progs.vnet_tc_tx, false);
	xs->rodata->rx_count_at_xmit = 1;
	xs->rodata->target_ifindex = (__u32)tap.ifindex;
	/* ifindexes repeat across namespaces: the tracepoint sees them all */
	if (!stat("/proc/self/ns/net", &st))
		xs->rodata->target_netns = (__u32)st.st_ino;
	err = vnet__load(xs);
	if (err) {
		test_skip("cannot load vnet_xmit_rx (tp_btf needs kernel "
			  "BTF): %s", strerror(-err));
		goto out;
	}
	tp = bpf_program__attach(xs->progs.vnet_xmit_rx);
	if (!tp) {
		test_skip("cannot attach to net_dev_start_xmit: %s",
			  strerror(errno));
		goto out;
	}
	opts.prog_fd = bpf_program__fd(xs->progs.vnet_tc_rx);
	err = bpf_tc_hook_create(&hook);
	if (err && err != -EEXIST) {
		ASSERT_OK(err, "create clsact");
		goto out;
	}
	if (!ASSERT_OK(bpf_tc_attach(&hook, &opts), "attach tc egress"))
		goto out;
	tc_attached = true;
	stats_fd = bpf_map__fd(xs->maps.stats);
	queues_fd = bpf_map__fd(xs->maps.queues);
	tap_drain(&tap);

	/* 16 flows: tun's flow hash spreads them over the queues */
	for (flow = 0; flow < 16; flow++) {
		struct frame_spec s = tcp4(flow & 1 ? FRAME_TCP_PSH |
						      FRAME_TCP_ACK :
						      FRAME_TCP_ACK, 100);

		s.sport = (uint16_t)(41000 + flow * 7);
		snprintf(what, sizeof(what), "flow %d", flow);
		q = tap_xmit_check(what, &s, flow & 1 ? VNET_CLASS_PUSH :
							VNET_CLASS_URGENT);
		if (q >= 0 && !(used & 1u << q)) {
			used |= 1u << q;
			nr_used++;
		}
	}
	/* or the test above proves nothing about queues */
	ASSERT_GT(nr_used, 1, "tap queues the flows went to");

	/* a frame that bypassed tc egress carries no class: "other" */
	opts.prog_fd = opts.prog_id = 0;
	opts.flags = 0;
	if (ASSERT_OK(bpf_tc_detach(&hook, &opts), "detach tc egress")) {
		struct frame_spec s = tcp4(FRAME_TCP_ACK, 100);

		tc_attached = false;
		tap_xmit_check("untagged", &s, VNET_CLASS_OTHER);
	}
out:
	if (tc_attached) {
		opts.prog_fd = opts.prog_id = 0;
		opts.flags = 0;
		bpf_tc_detach(&hook, &opts);
	}
	hook.attach_point = BPF_TC_INGRESS | BPF_TC_EGRESS;
	bpf_tc_hook_destroy(&hook);
	stats_fd = saved_stats;
	queues_fd = saved_queues;
	bpf_link__destroy(tp);
	vnet__destroy(xs);
	tap_drain(&tap);
}

/* The egress cases: vnet_tc_rx on tc egress, frames sent out of the tap. */
void test_tap_gso_ipv4_push(void)
{
	struct frame_spec s = tcp4(FRAME_TCP_PSH | FRAME_TCP_ACK,
				   GSO_FRAME_LEN - 66);

	s.tcp_doff = 8; /* timestamps, as Linux sends */
	tap_egress_case(&s, TX_GSO, VNET_CLASS_PUSH);
}

void test_tap_gso_ipv6_urgent(void)
{
	struct frame_spec s = tcp6(FRAME_TCP_ACK, GSO_FRAME_LEN - 74);

	tap_egress_case(&s, TX_GSO, VNET_CLASS_URGENT);
}

void test_tap_nonlinear_ipv4_urgent(void)
{
	struct frame_spec s = tcp4(FRAME_TCP_ACK, JUMBO_FRAME_LEN - 54);

	tap_egress_case(&s, TX_LINEAR, VNET_CLASS_URGENT);
}

void test_tap_nonlinear_vlan_ipv6_push(void)
{
	struct frame_spec s = tcp6(FRAME_TCP_PSH | FRAME_TCP_ACK, 0);

	add_vlan(&s, ETH_P_8021Q, 100);
	add_ext(&s, IPPROTO_HOPOPTS, 0);
	s.payload_len = JUMBO_FRAME_LEN - 18 - 40 - 8 - 20;
	tap_egress_case(&s, TX_LINEAR, VNET_CLASS_PUSH);
}

/*
 * 304 bytes of destination options: the TCP header starts 358 bytes into
 * the frame.  The same headers in a linear frame are urgent
 * (classify/ipv6_hopopts_2k_tcp_urgent has 2 KB of options), so a
 * non-linear skb must be urgent too.
 */
void test_tap_nonlinear_ipv6_ext_urgent(void)
{
	struct frame_spec s = tcp6(FRAME_TCP_ACK, 0);

	add_ext(&s, IPPROTO_DSTOPTS, 37);
	s.payload_len = JUMBO_FRAME_LEN - 14 - 40 - 304 - 20;
	tap_egress_case(&s, TX_LINEAR, VNET_CLASS_URGENT);
}
