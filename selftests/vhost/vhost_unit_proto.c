// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* vhost_unit: the vhost-user protocol */
#include "vhost_unit.h"

/* ======================================================================= */
/* protocol                                                                 */
/* ======================================================================= */

void test_proto_features(void)
{
	struct tdev t;
	uint64_t f, pf;

	if (!tdev_setup(&t))
		goto out;
	f = fe_get_u64(&t, VHOST_USER_GET_FEATURES);
	ASSERT_NEQ(f, ~0ULL, "GET_FEATURES reply");
	/* the device's offer (packed rings included), plus the vhost bits */
	ASSERT_EQ(f & T_OFFER, T_OFFER, "device features");
	ASSERT_EQ(f & BIT(VIRTIO_F_RING_RESET), 0, "ring reset masked");
	ASSERT_NEQ(f & BIT(VHOST_USER_F_PROTOCOL_FEATURES), 0,
		   "PROTOCOL_FEATURES offered");
	ASSERT_NEQ(f & BIT(VHOST_F_LOG_ALL), 0, "LOG_ALL offered");

	pf = fe_get_u64(&t, VHOST_USER_GET_PROTOCOL_FEATURES);
	ASSERT_EQ(pf,
		  BIT(VHOST_USER_PROTOCOL_F_MQ) |
			  BIT(VHOST_USER_PROTOCOL_F_LOG_SHMFD) |
			  BIT(VHOST_USER_PROTOCOL_F_RARP) |
			  BIT(VHOST_USER_PROTOCOL_F_MTU) |
			  BIT(VHOST_USER_PROTOCOL_F_REPLY_ACK) |
			  BIT(VHOST_USER_PROTOCOL_F_CONFIGURE_MEM_SLOTS),
		  "protocol features");
	ASSERT_EQ(fe_ack_u64(&t, VHOST_USER_SET_PROTOCOL_FEATURES,
			     BIT(VHOST_USER_PROTOCOL_F_STATUS)),
		  1, "unoffered protocol feature refused");
	ASSERT_EQ(fe_ack_u64(&t, VHOST_USER_SET_PROTOCOL_FEATURES, pf), 0,
		  "SET_PROTOCOL_FEATURES");
	ASSERT_EQ(t.dev.protocol_features, pf, "protocol features acked");

	ASSERT_EQ(fe_ack_u64(&t, VHOST_USER_SET_FEATURES,
			     f | BIT(VIRTIO_F_RING_RESET)),
		  1, "unoffered feature refused");
	ASSERT_EQ(t.dev.features, 0, "features unchanged");
	ASSERT_EQ(fe_ack_u64(&t, VHOST_USER_SET_FEATURES, f), 0,
		  "SET_FEATURES");
	ASSERT_EQ(t.dev.features, f, "features acked");

	ASSERT_EQ(fe_get_u64(&t, VHOST_USER_GET_QUEUE_NUM), 2, "GET_QUEUE_NUM");
	ASSERT_EQ(fe_get_u64(&t, VHOST_USER_GET_MAX_MEM_SLOTS), 32,
		  "GET_MAX_MEM_SLOTS");
	ASSERT_EQ(fe_ack(&t, VHOST_USER_SET_OWNER, NULL, 0, NULL, 0), 0,
		  "SET_OWNER");
	ASSERT_TRUE(t.dev.owner, "owner");
out:
	tdev_cleanup(&t);
}

void test_proto_rarp(void)
{
	static const uint8_t mac[8] = { 0x52, 0x54, 0x00, 0x12, 0x34, 0x56 };
	struct tdev t;

	if (!tdev_setup(&t))
		goto out;
	ASSERT_EQ(fe_ack(&t, VHOST_USER_SEND_RARP, mac, 8, NULL, 0), 0,
		  "SEND_RARP");
	ASSERT_EQ(t.rarps, 1, "rarp callback");
	ASSERT_MEMEQ(t.rarp_mac, mac, 6, "rarp mac");
out:
	tdev_cleanup(&t);
}

/* NET_SET_MTU: given to the device, out-of-range and refused ones NACKed */
void test_proto_mtu(void)
{
	uint64_t mtu;
	struct tdev t;

	if (!tdev_setup(&t))
		goto out;
	mtu = 9000;
	ASSERT_EQ(fe_ack(&t, VHOST_USER_NET_SET_MTU, &mtu, 8, NULL, 0), 0,
		  "NET_SET_MTU 9000 acked");
	ASSERT_EQ(t.mtu, 9000, "the device got 9000");
	mtu = 67;
	ASSERT_EQ(fe_ack(&t, VHOST_USER_NET_SET_MTU, &mtu, 8, NULL, 0), 1,
		  "NET_SET_MTU 67 (below IPv4's minimum) refused");
	mtu = 65536;
	ASSERT_EQ(fe_ack(&t, VHOST_USER_NET_SET_MTU, &mtu, 8, NULL, 0), 1,
		  "NET_SET_MTU 65536 refused");
	mtu = 12345;
	ASSERT_EQ(fe_ack(&t, VHOST_USER_NET_SET_MTU, &mtu, 8, NULL, 0), 1,
		  "an MTU the device refuses is NACKed");
	ASSERT_EQ(t.mtu, 9000, "the device kept 9000");
	ASSERT_TRUE(vhost_dev_connected(&t.dev), "still connected");
out:
	tdev_cleanup(&t);
}

/* QEMU's start sequence; ring disabled until SET_VRING_ENABLE; GET_VRING_BASE. */
void test_proto_ring_lifecycle(void)
{
	struct vhost_user_vring_state s = { .index = 0 };
	struct vhost_user_msg m;
	struct vhost_vq *vq;
	int call = -1, kick = -1;
	struct seg sg = { BUF_GPA, 64, false };
	struct drv d;
	uint64_t one = 1;
	int n;

	struct tdev t;

	if (!tdev_setup(&t))
		goto out;
	vq = vhost_dev_vq(&t.dev, 0);
	if (!fe_setup_ring(&t, 0, F_RING | BIT(VHOST_USER_F_PROTOCOL_FEATURES),
			   &d, &call, &kick))
		goto out;
	ASSERT_EQ(t.mem_changes, 1, "mem_changed callback");
	/* protocol features negotiated: started but disabled */
	ASSERT_TRUE(vq->kick_set, "started by kick");
	ASSERT_FALSE(t.running[0], "not running before SET_VRING_ENABLE");
	ASSERT_EQ(fe_ack_state(&t, VHOST_USER_SET_VRING_ENABLE, 0, 1), 0,
		  "SET_VRING_ENABLE");
	if (!ASSERT_TRUE(t.running[0], "running after SET_VRING_ENABLE"))
		goto out;
	ASSERT_EQ(t.starts, 1, "one start");

	/* the datapath runs on what the protocol configured */
	drv_publish(&d, drv_chain(&d, &sg, 1));
	drv_publish(&d, drv_chain(&d, &sg, 1));
	ASSERT_EQ(write(kick, &one, sizeof(one)), 8, "kick");
	ASSERT_EQ(vhost_vq_kick_drain(vq), 1, "kick drained");
	n = vhost_vq_pop_burst(vq, elems, 8);
	ASSERT_EQ(n, 2, "popped");
	ASSERT_OK(vhost_vq_push(vq, elems[0].head, 0), "push");
	ASSERT_OK(vhost_vq_push(vq, elems[1].head, 0), "push");

	/* a running ring is stopped around a call fd swap */
	ASSERT_EQ(fe_ack_vring_fd(&t, VHOST_USER_SET_VRING_CALL, 0, call), 0,
		  "SET_VRING_CALL again");
	ASSERT_EQ(t.stops, 1, "stopped for the swap");
	ASSERT_TRUE(t.running[0], "running again");

	/* GET_VRING_BASE stops it and answers last_avail_idx */
	if (!ASSERT_OK(fe_call(&t, VHOST_USER_GET_VRING_BASE, 0, &s, sizeof(s),
			       NULL, 0),
		       "GET_VRING_BASE"))
		goto out;
	if (!ASSERT_OK(fe_reply(t.sock, &m), "GET_VRING_BASE reply"))
		goto out;
	ASSERT_EQ(m.hdr.request, VHOST_USER_GET_VRING_BASE, "reply request");
	ASSERT_EQ(m.hdr.size, sizeof(s), "reply size");
	ASSERT_EQ(m.payload.state.index, 0, "reply index");
	ASSERT_EQ(m.payload.state.num, 2, "reply base");
	ASSERT_FALSE(t.running[0], "stopped");
	ASSERT_EQ(vq->kick_fd, -1, "kick fd dropped");

	/* restart at that base, as after a reconnect */
	ASSERT_EQ(fe_ack_state(&t, VHOST_USER_SET_VRING_BASE, 0, 2), 0,
		  "SET_VRING_BASE 2");
	ASSERT_EQ(fe_ack_vring_fd(&t, VHOST_USER_SET_VRING_KICK, 0, kick), 0,
		  "SET_VRING_KICK again");
	ASSERT_TRUE(t.running[0], "running after the new kick");
	ASSERT_EQ(vq->last_avail_idx, 2, "resumed at the base");
	ASSERT_EQ(vq->used_idx, 2, "used idx from the guest");

	/* SET_VRING_ENABLE 0 stops it */
	ASSERT_EQ(fe_ack_state(&t, VHOST_USER_SET_VRING_ENABLE, 0, 0), 0,
		  "disable");
	ASSERT_FALSE(t.running[0], "stopped by disable");
out:
	tdev_ring_cleanup(&t, call, kick);
}

/* Without VHOST_USER_F_PROTOCOL_FEATURES the ring is enabled at kick. */
void test_proto_legacy_enable(void)
{
	int call = -1, kick = -1;
	struct drv d;
	struct tdev t;

	if (!tdev_ring(&t, 1, &d, &call, &kick))
		goto out;
	ASSERT_TRUE(t.running[1], "running at kick");
out:
	tdev_ring_cleanup(&t, call, kick);
}

/* Invalid-fd flag: polling mode, no kick fd, no call fd. */
void test_proto_vring_nofd(void)
{
	int call = -1, kick = -1;
	struct drv d;
	struct tdev t;

	if (!tdev_ring(&t, 0, &d, &call, &kick))
		goto out;
	ASSERT_EQ(fe_ack_vring_fd(&t, VHOST_USER_SET_VRING_KICK, 0, -1), 0,
		  "SET_VRING_KICK nofd");
	ASSERT_EQ(fe_ack_vring_fd(&t, VHOST_USER_SET_VRING_CALL, 0, -1), 0,
		  "SET_VRING_CALL nofd");
	ASSERT_TRUE(t.dev.vqs[0].kick_polling, "polling mode");
	ASSERT_EQ(t.dev.vqs[0].kick_fd, -1, "no kick fd");
	ASSERT_EQ(t.dev.vqs[0].call_fd, -1, "no call fd");
	ASSERT_TRUE(t.running[0], "running");
	ASSERT_EQ(vhost_vq_notify(&t.dev.vqs[0]), 1, "notify without fd");
out:
	tdev_ring_cleanup(&t, call, kick);
}

void test_proto_wrong_fd_count(void)
{
	struct vhost_user_mem_table mt = { .nregions = 1 };
	int efd = eventfd(0, EFD_CLOEXEC), fds[2], before;
	struct tdev t;
	uint64_t v;

	if (!tdev_setup(&t) || !ASSERT_GE(efd, 0, "eventfd"))
		goto out;
	before = count_fds();

	/* fd expected (flag clear), none sent */
	v = 0;
	ASSERT_EQ(fe_ack(&t, VHOST_USER_SET_VRING_CALL, &v, 8, NULL, 0), 1,
		  "CALL without fd refused");
	/* no fd expected (flag set), one sent */
	v = VHOST_USER_VRING_NOFD_MASK;
	ASSERT_EQ(fe_ack(&t, VHOST_USER_SET_VRING_KICK, &v, 8, &efd, 1), 1,
		  "KICK nofd with fd refused");
	/* two fds where the table says 0..1 */
	fds[0] = efd;
	fds[1] = efd;
	v = 0;
	ASSERT_EQ(fe_ack(&t, VHOST_USER_SET_VRING_ERR, &v, 8, fds, 2), 1,
		  "ERR with 2 fds refused");
	/* a memory table of 1 region with 2 fds */
	mt.regions[0] = (struct vhost_mem_region_desc){ 0, GUEST_SIZE,
							UVA_BASE, 0 };
	fds[0] = t.memfd;
	fds[1] = efd;
	ASSERT_EQ(fe_ack(&t, VHOST_USER_SET_MEM_TABLE, &mt, 8 + 32, fds, 2),
		  1, "mem table 1 region 2 fds refused");
	ASSERT_EQ(t.dev.mem.nregions, 0, "no memory mapped");
	/* an fd on a message that takes none */
	ASSERT_EQ(fe_ack(&t, VHOST_USER_SET_FEATURES, &v, 8, &efd, 1), 1,
		  "SET_FEATURES with fd refused");
	/* ADD_MEM_REG without its fd */
	ASSERT_EQ(fe_ack(&t, VHOST_USER_ADD_MEM_REG,
			 &(struct vhost_user_mem_reg){ .region = mt.regions[0] },
			 sizeof(struct vhost_user_mem_reg), NULL, 0),
		  1, "ADD_MEM_REG without fd refused");

	ASSERT_EQ(count_fds(), before, "every received fd closed");
	ASSERT_EQ(t.dev.vqs[0].call_fd, -1, "no call fd taken");
	ASSERT_EQ(t.dev.vqs[0].kick_set, false, "ring not started");
	ASSERT_TRUE(vhost_dev_connected(&t.dev), "still connected");
	ASSERT_NEQ(fe_get_u64(&t, VHOST_USER_GET_FEATURES), ~0ULL,
		   "still answering");
out:
	if (efd >= 0)
		close(efd);
	tdev_cleanup(&t);
}

/*
 * Ring fds are the backend's to use without waiting: a pipe becomes an
 * open file of its own (the frontend clearing O_NONBLOCK on its side
 * changes nothing), an eventfd gets O_NONBLOCK (checked), and an fd that
 * is neither (a socket) is refused.
 */
void test_proto_ring_fd_own(void)
{
	int kp[2] = { -1, -1 }, cp[2] = { -1, -1 }, sp[2] = { -1, -1 };
	int efd = eventfd(0, EFD_CLOEXEC), fl;
	struct vhost_vq *vq;
	uint64_t v = 0;
	struct stat a, b;
	struct tdev t;
	char c = 0;

	if (!tdev_setup(&t) || !ASSERT_GE(efd, 0, "eventfd") ||
	    !ASSERT_OK(pipe2(kp, O_CLOEXEC), "kick pipe") ||
	    !ASSERT_OK(pipe2(cp, O_CLOEXEC), "call pipe") ||
	    !ASSERT_OK(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sp),
		       "socketpair"))
		goto out;
	vq = &t.dev.vqs[0];
	ASSERT_EQ(fe_ack_vring_fd(&t, VHOST_USER_SET_VRING_KICK, 0, kp[0]), 0,
		  "kick: a pipe");
	ASSERT_EQ(fe_ack_vring_fd(&t, VHOST_USER_SET_VRING_CALL, 0, cp[1]), 0,
		  "call: a pipe");
	ASSERT_EQ(fe_ack_vring_fd(&t, VHOST_USER_SET_VRING_ERR, 0, efd), 0,
		  "error: an eventfd");
	if (!ASSERT_GE(vq->kick_fd, 0, "kick fd") ||
	    !ASSERT_GE(vq->call_fd, 0, "call fd"))
		goto out;
	/* the same pipe, another open file: only the backend's is O_NONBLOCK */
	if (ASSERT_OK(fstat(vq->kick_fd, &a), "fstat") &&
	    ASSERT_OK(fstat(kp[0], &b), "fstat"))
		ASSERT_EQ(a.st_ino, b.st_ino, "kick: the frontend's pipe");
	ASSERT_TRUE(fcntl(vq->kick_fd, F_GETFL) & O_NONBLOCK,
		    "kick: non-blocking for the backend");
	ASSERT_FALSE(fcntl(kp[0], F_GETFL) & O_NONBLOCK,
		     "kick: the frontend's open file untouched");
	fcntl(kp[0], F_SETFL, 0);
	ASSERT_EQ(read(vq->kick_fd, &c, 1), -1, "kick: an empty pipe does not wait");
	ASSERT_EQ(errno, EAGAIN, "kick: EAGAIN");
	/* a full call pipe: the signal does not wait either */
	fl = fcntl(cp[1], F_GETFL);
	fcntl(cp[1], F_SETFL, fl | O_NONBLOCK);
	while (write(cp[1], &v, sizeof(v)) > 0)
		;
	fcntl(cp[1], F_SETFL, fl & ~O_NONBLOCK);
	ASSERT_EQ(vhost_vq_signal(vq), 0, "call: a full pipe does not wait");
	ASSERT_TRUE(fcntl(efd, F_GETFL) & O_NONBLOCK, "error: eventfd O_NONBLOCK");
	/* a socket is no ring fd */
	ASSERT_EQ(fe_ack_vring_fd(&t, VHOST_USER_SET_VRING_CALL, 0, sp[0]), 1,
		  "call: a socket refused");
	ASSERT_GE(vq->call_fd, 0, "call: the pipe kept");
	ASSERT_TRUE(vhost_dev_connected(&t.dev), "still connected");
out:
	if (efd >= 0)
		close(efd);
	if (kp[0] >= 0) {
		close(kp[0]);
		close(kp[1]);
	}
	if (cp[0] >= 0) {
		close(cp[0]);
		close(cp[1]);
	}
	if (sp[0] >= 0) {
		close(sp[0]);
		close(sp[1]);
	}
	tdev_cleanup(&t);
}

void test_proto_unknown_request(void)
{
	struct vhost_user_msg m;
	struct tdev t;
	uint64_t v = 0;

	if (!tdev_setup(&t))
		goto out;
	logs_reset();
	/* unknown, NEED_REPLY: an error ack */
	ASSERT_EQ(fe_ack(&t, 99, &v, 8, NULL, 0), 1, "unknown NEED_REPLY");
	ASSERT_GE(logs.errors, 1, "logged");
	ASSERT_TRUE(strstr(logs.last, "unknown request 99") != NULL,
		    "log names the request");
	/* unknown, no NEED_REPLY: nothing */
	ASSERT_OK(fe_call(&t, 1000, 0, &v, 8, NULL, 0), "unknown");
	ASSERT_EQ(fe_reply(t.sock, &m), -EAGAIN, "no reply");
	/* known, unsupported GET: an empty (error) reply */
	ASSERT_OK(fe_call(&t, VHOST_USER_GET_STATUS, 0, NULL, 0, NULL, 0),
		  "GET_STATUS");
	if (ASSERT_OK(fe_reply(t.sock, &m), "GET_STATUS reply")) {
		ASSERT_EQ(m.hdr.request, VHOST_USER_GET_STATUS, "request");
		ASSERT_EQ(m.hdr.size, 0, "empty reply");
	}
	ASSERT_OK(fe_call(&t, VHOST_USER_GET_CONFIG, 0, &v, 8, NULL, 0),
		  "GET_CONFIG");
	if (ASSERT_OK(fe_reply(t.sock, &m), "GET_CONFIG reply"))
		ASSERT_EQ(m.hdr.size, 0, "GET_CONFIG error reply");
	ASSERT_EQ(fe_ack(&t, VHOST_USER_SET_CONFIG, &v, 8, NULL, 0), 1,
		  "SET_CONFIG refused");
	/* an unknown request's fds are closed too */
	ASSERT_EQ(fe_ack(&t, 77, &v, 8, &t.memfd, 1), 1, "unknown with fd");
	/* a payload shorter than the request needs */
	ASSERT_EQ(fe_ack(&t, VHOST_USER_SET_VRING_NUM, &v, 4, NULL, 0), 1,
		  "short payload refused");
	ASSERT_TRUE(vhost_dev_connected(&t.dev), "still connected");
	ASSERT_EQ(fe_get_u64(&t, VHOST_USER_GET_QUEUE_NUM), 2,
		  "still answering");
out:
	tdev_cleanup(&t);
}

void test_proto_truncated(void)
{
	struct vhost_user_hdr h = { VHOST_USER_SET_FEATURES,
				    VHOST_USER_VERSION, 8 };
	uint8_t buf[sizeof(h) + 4];
	struct tdev t;
	int before;

	if (!tdev_setup(&t))
		goto out;
	before = count_fds();
	/* header says 8 bytes of payload; 4 come, then EOF; with an fd */
	memcpy(buf, &h, sizeof(h));
	memset(buf + sizeof(h), 0, 4);
	ASSERT_OK(fe_send_raw(t.sock, buf, sizeof(buf), &t.memfd, 1), "send");
	shutdown(t.sock, SHUT_WR);
	ASSERT_EQ(vhost_dev_handle_input(&t.dev), -EPROTO, "truncated");
	vhost_dev_disconnect(&t.dev);
	ASSERT_FALSE(vhost_dev_connected(&t.dev), "dropped");
	ASSERT_EQ(t.disconnects, 1, "device told");
	ASSERT_EQ(count_fds(), before - 1, "fds closed (ours and the pending)");
	close(t.sock);
	t.sock = -1;

	/* a header cut short */
	{
		int sv[2];

		if (!ASSERT_OK(socketpair(AF_UNIX, SOCK_STREAM, 0, sv),
			       "socketpair"))
			goto out;
		t.sock = sv[0];
		ASSERT_OK(vhost_dev_attach(&t.dev, sv[1]), "reattach");
		ASSERT_OK(fe_send_raw(t.sock, &h, 6, NULL, 0), "send 6");
		ASSERT_EQ(vhost_dev_handle_input(&t.dev), 0, "waits for more");
		shutdown(t.sock, SHUT_WR);
		ASSERT_EQ(vhost_dev_handle_input(&t.dev), -EPROTO,
			  "truncated header");
		vhost_dev_disconnect(&t.dev);
	}
out:
	tdev_cleanup(&t);
}

void test_proto_bad_header(void)
{
	struct vhost_user_hdr h = { VHOST_USER_SET_FEATURES,
				    VHOST_USER_VERSION, 4096 };
	struct tdev t;
	int sv[2];

	if (!tdev_setup(&t))
		goto out;
	ASSERT_OK(fe_send_raw(t.sock, &h, sizeof(h), NULL, 0), "send");
	ASSERT_EQ(vhost_dev_handle_input(&t.dev), -EMSGSIZE, "oversized");
	vhost_dev_disconnect(&t.dev);
	close(t.sock);
	t.sock = -1;

	if (!ASSERT_OK(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), "socketpair"))
		goto out;
	t.sock = sv[0];
	ASSERT_OK(vhost_dev_attach(&t.dev, sv[1]), "reattach");
	h.flags = 2; /* version 2 */
	h.size = 0;
	ASSERT_OK(fe_send_raw(t.sock, &h, sizeof(h), NULL, 0), "send");
	ASSERT_EQ(vhost_dev_handle_input(&t.dev), -EPROTO, "bad version");
	vhost_dev_disconnect(&t.dev);
out:
	tdev_cleanup(&t);
}

void test_proto_too_many_fds(void)
{
	struct vhost_user_hdr h = { VHOST_USER_SET_OWNER, VHOST_USER_VERSION,
				    0 };
	int fds[9], i, before;
	struct tdev t;

	if (!tdev_setup(&t))
		goto out;
	for (i = 0; i < 9; i++)
		fds[i] = t.memfd;
	before = count_fds();
	ASSERT_OK(fe_send_raw(t.sock, &h, sizeof(h), fds, 9), "send 9 fds");
	ASSERT_EQ(vhost_dev_handle_input(&t.dev), -EPROTO, "rejected");
	vhost_dev_disconnect(&t.dev);
	ASSERT_EQ(count_fds(), before - 1, "no fd leaked");
out:
	tdev_cleanup(&t);
}

/* A message that arrives a byte at a time is assembled, then handled. */
void test_proto_partial_reads(void)
{
	struct vhost_user_hdr h = { VHOST_USER_GET_QUEUE_NUM,
				    VHOST_USER_VERSION, 0 };
	const uint8_t *p = (const uint8_t *)&h;
	struct vhost_user_msg m;
	struct tdev t;
	size_t i;

	if (!tdev_setup(&t))
		goto out;
	for (i = 0; i < sizeof(h); i++) {
		ASSERT_OK(fe_send_raw(t.sock, p + i, 1, NULL, 0), "send byte");
		ASSERT_OK(vhost_dev_handle_input(&t.dev), "partial");
		if (i + 1 < sizeof(h))
			ASSERT_EQ(fe_reply(t.sock, &m), -EAGAIN, "no reply yet");
	}
	if (ASSERT_OK(fe_reply(t.sock, &m), "reply"))
		ASSERT_EQ(m.payload.u64, 2, "GET_QUEUE_NUM");
out:
	tdev_cleanup(&t);
}

/* Reconnect: a disconnect resets everything; a new frontend starts afresh. */
void test_proto_disconnect_reset(void)
{
	int call = -1, kick = -1, sv[2];
	struct drv d;
	struct tdev t;

	if (!tdev_ring(&t, 0, &d, &call, &kick))
		goto out;
	ASSERT_TRUE(t.running[0], "running");
	close(t.sock);
	t.sock = -1;
	ASSERT_EQ(vhost_dev_handle_input(&t.dev), -ECONNRESET, "EOF");
	vhost_dev_disconnect(&t.dev);
	ASSERT_FALSE(t.running[0], "stopped before the reset");
	ASSERT_EQ(t.dev.mem.nregions, 0, "memory unmapped");
	ASSERT_EQ(t.dev.features, 0, "features reset");
	ASSERT_EQ(t.dev.vqs[0].num, 0, "ring reset");
	ASSERT_EQ(t.dev.vqs[0].call_fd, -1, "call fd closed");
	if (!ASSERT_OK(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), "socketpair"))
		goto out;
	t.sock = sv[0];
	ASSERT_OK(vhost_dev_attach(&t.dev, sv[1]), "new frontend");
	ASSERT_EQ(fe_get_u64(&t, VHOST_USER_GET_QUEUE_NUM), 2, "answers");
out:
	tdev_ring_cleanup(&t, call, kick);
}
