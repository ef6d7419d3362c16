// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* vufe_selftest: EVENT_IDX arithmetic, the handshake on the wire, reconnect */
#include "vufe_selftest.h"

/* ------------------------------------------------------------------ */
/* unit: EVENT_IDX arithmetic                                          */
/* ------------------------------------------------------------------ */

void unit_need_event(void)
{
	static const struct {
		__u16 event, new, old;
		bool kick;
	} t[] = {
		{ 0, 1, 0, true },		/* first entry, device waits at 0 */
		{ 5, 5, 0, false },		/* event not yet reached */
		{ 4, 5, 0, true },		/* event is the last added */
		{ 0, 5, 0, true },
		{ 5, 10, 5, true },
		{ 4, 10, 5, false },		/* event before old: already past */
		{ 10, 10, 5, false },
		{ 65535, 2, 65534, true },	/* wrap: old 65534, new 2 */
		{ 65533, 2, 65534, false },
		{ 1, 2, 65534, true },
		{ 2, 2, 65534, false },
		{ 0, 0, 65535, false },		/* new 0, event 0 not reached */
		{ 65535, 0, 65535, true },
		{ 100, 100, 100, false },	/* nothing added */
	};
	unsigned int i;
	__u32 e, o, k;

	for (i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		char name[64];

		snprintf(name, sizeof(name), "need_event(%u, %u, %u)",
			 t[i].event, t[i].new, t[i].old);
		ASSERT_EQ(vufe_need_event(t[i].event, t[i].new, t[i].old),
			  t[i].kick, name);
	}
	/*
	 * Exhaustively around the wrap: kick iff event is among the indices
	 * just published, [old, new), counted modulo 2^16.
	 */
	for (o = 65500; o < 65500 + 80; o++) {
		for (k = 0; k < 40; k++) {
			__u16 old = o, new = o + k;

			for (e = 0; e < 60; e++) {
				__u16 ev = o - 10 + e;
				bool in = (__u16)(ev - old) < k;

				if (vufe_need_event(ev, new, old) != in ||
				    vring_need_event(ev, new, old) != in) {
					test_fail("need_event(%u, %u, %u) != %d",
						  ev, new, old, in);
					return;
				}
			}
		}
	}
}

/* ------------------------------------------------------------------ */
/* unit: the handshake on the wire                                     */
/* ------------------------------------------------------------------ */

struct expect {
	__u32 req;
	unsigned int nfds;
	bool need_reply;
};

static bool check_transcript(struct peer *pr, const struct expect *e,
			     unsigned int n)
{
	unsigned int i, got = peer_count(pr);

	if (!ASSERT_GE(got, n, "messages"))
		return false;
	for (i = 0; i < n; i++) {
		struct peer_msg *m = &pr->log[i];
		char name[64];

		snprintf(name, sizeof(name), "message %u request", i);
		if (!ASSERT_EQ(m->req, e[i].req, name))
			return false;
		snprintf(name, sizeof(name), "message %u (req %u) fds", i,
			 m->req);
		if (!ASSERT_EQ(m->nfds, e[i].nfds, name))
			return false;
		snprintf(name, sizeof(name), "message %u (req %u) NEED_REPLY",
			 i, m->req);
		if (!ASSERT_EQ(!!(m->flags & VUFE_MSG_NEED_REPLY),
			       e[i].need_reply, name))
			return false;
		snprintf(name, sizeof(name), "message %u version", i);
		if (!ASSERT_EQ(m->flags & 3, VUFE_MSG_VERSION, name))
			return false;
	}
	return true;
}

static __u64 msg_u64(const struct peer_msg *m)
{
	__u64 v;

	memcpy(&v, m->p, 8);
	return v;
}

void unit_handshake_mem_slots(void)
{
	struct vufe_opts o = VUFE_OPTS_DEFAULT;
	const struct expect e[] = {
		{ VUFE_GET_FEATURES, 0, false },
		{ VUFE_GET_PROTOCOL_FEATURES, 0, false },
		{ VUFE_SET_PROTOCOL_FEATURES, 0, false },
		{ VUFE_GET_QUEUE_NUM, 0, false },
		{ VUFE_GET_MAX_MEM_SLOTS, 0, false },
		{ VUFE_SET_OWNER, 0, false },
		{ VUFE_GET_FEATURES, 0, false },
		{ VUFE_SET_FEATURES, 0, false },
		{ VUFE_ADD_MEM_REG, 1, true },
		{ VUFE_ADD_MEM_REG, 1, true },
		{ VUFE_SET_VRING_NUM, 0, false },
		{ VUFE_SET_VRING_BASE, 0, false },
		{ VUFE_SET_VRING_ADDR, 0, false },
		{ VUFE_SET_VRING_KICK, 1, false },
		{ VUFE_SET_VRING_CALL, 1, false },
		{ VUFE_SET_VRING_NUM, 0, false },
		{ VUFE_SET_VRING_BASE, 0, false },
		{ VUFE_SET_VRING_ADDR, 0, false },
		{ VUFE_SET_VRING_KICK, 1, false },
		{ VUFE_SET_VRING_CALL, 1, false },
		{ VUFE_SET_VRING_ENABLE, 0, false },
		{ VUFE_SET_VRING_ENABLE, 0, false },
	};
	struct vhost_vring_addr a;
	struct vufe_ring r;
	struct rig g;
	__u64 gpa, size, hva;
	__u8 *peer_desc;

	o.nr_regions = 2;
	if (!rig_up(&g, &o, ALL_FEATURES, ALL_PROTO))
		return;
	if (!rig_sync(&g) || !check_transcript(&g.pr, e, 22))
		goto out;
	ASSERT_EQ(msg_u64(&g.pr.log[2]), VUFE_PROTO_ACKED,
		  "acked protocol features = offered & {MQ,REPLY_ACK,"
		  "CONFIGURE_MEM_SLOTS,LOG_SHMFD,RARP}");
	ASSERT_EQ(msg_u64(&g.pr.log[7]), pkf(VUFE_DEFAULT_FEATURES),
		  "SET_FEATURES = offered & wanted, bit 30 included");
	ASSERT_EQ(vufe_max_queues(g.fe), 4, "GET_QUEUE_NUM answer kept");
	ASSERT_EQ(vufe_max_mem_slots(g.fe), 32, "GET_MAX_MEM_SLOTS kept");
	ASSERT_EQ(vufe_hdr_len(g.fe), 12, "VERSION_1 header length");
	ASSERT_EQ(vufe_rx_mode(g.fe), VUFE_RX_MERGEABLE, "MRG_RXBUF mode");

	/* the regions: different guest-physical bases, second at an offset */
	ASSERT_OK(vufe_region(g.fe, 0, &gpa, &size, &hva), "region 0");
	ASSERT_EQ(g.pr.map[0].gpa, gpa, "region 0 gpa");
	ASSERT_EQ(g.pr.map[0].size, size, "region 0 size");
	ASSERT_EQ(g.pr.map[1].base - g.pr.map[1].mapping, size,
		  "region 1 mmap_offset = size of region 0");
	ASSERT_OK(vufe_region(g.fe, 1, &gpa, &size, &hva), "region 1");
	ASSERT_EQ(g.pr.map[1].gpa, gpa, "region 1 gpa");
	ASSERT_EQ(gpa, 1ULL << 32, "region 1 at 4 GiB");
	ASSERT_EQ(g.pr.map[1].hva, hva, "region 1 userspace_addr");

	/* the addresses are the frontend's own; the peer finds the rings */
	memcpy(&a, g.pr.log[12].p, sizeof(a));
	vufe_ring(g.fe, 0, &r);
	ASSERT_EQ(a.index, 0, "SET_VRING_ADDR index");
	ASSERT_EQ(a.desc_user_addr, (__u64)(unsigned long)r.desc,
		  "desc_user_addr is the frontend's address");
	ASSERT_EQ(a.used_user_addr, (__u64)(unsigned long)r.used, "used");
	ASSERT_EQ(a.avail_user_addr, (__u64)(unsigned long)r.avail, "avail");
	ASSERT_EQ(a.log_guest_addr, r.used_gpa, "log_guest_addr = used gpa");
	if (packed) {
		struct vhost_vring_state st;

		/* the same areas: descriptor ring, driver and device events */
		ASSERT_TRUE(r.packed, "packed ring");
		ASSERT_EQ(a.desc_user_addr, (__u64)(unsigned long)r.pdesc,
			  "descriptor ring");
		ASSERT_EQ(a.avail_user_addr,
			  (__u64)(unsigned long)r.driver_event,
			  "driver event area");
		ASSERT_EQ(a.used_user_addr,
			  (__u64)(unsigned long)r.device_event,
			  "device event area");
		memcpy(&st, g.pr.log[11].p, sizeof(st));
		ASSERT_EQ(st.num, 0x80008000,
			  "SET_VRING_BASE: avail and used at 0, wrap counters 1");
		/* EVENT_IDX: a signal at the first used descriptor */
		ASSERT_EQ(le16toh(r.driver_event->flags),
			  VRING_PACKED_EVENT_FLAG_DESC, "driver event DESC");
		ASSERT_EQ(le16toh(r.driver_event->off_wrap), 0x8000,
			  "driver event at position 0, wrap 1");
		ASSERT_EQ(le16toh(r.pdesc[0].flags), 0,
			  "no descriptor available yet");
	}
	peer_desc = peer_hva(&g.pr, a.desc_user_addr);
	if (ASSERT_OK_PTR(peer_desc, "peer translates desc_user_addr")) {
		r.desc[3].addr = htole64(0x1122334455667788ULL);
		ASSERT_MEMEQ(peer_desc + 3 * 16, &r.desc[3].addr, 8,
			     "peer sees the same memory");
	}
out:
	rig_down(&g);
}

void unit_handshake_mem_table(void)
{
	struct vufe_opts o = VUFE_OPTS_DEFAULT;
	const struct expect e[] = {
		{ VUFE_GET_FEATURES, 0, false },
		{ VUFE_GET_PROTOCOL_FEATURES, 0, false },
		{ VUFE_SET_PROTOCOL_FEATURES, 0, false },
		{ VUFE_SET_OWNER, 0, false },
		{ VUFE_GET_FEATURES, 0, false },
		{ VUFE_SET_FEATURES, 0, false },
		{ VUFE_SET_MEM_TABLE, 2, true },
		{ VUFE_SET_VRING_NUM, 0, false },
	};
	struct rig g;
	__u32 nr;

	o.nr_regions = 2;
	o.enable_need_reply = true;
	if (!rig_up(&g, &o, VUFE_DEFAULT_FEATURES,
		    (1ULL << VUFE_PROTO_REPLY_ACK) | (1ULL << VUFE_PROTO_MTU)))
		return;
	if (!rig_sync(&g) || !check_transcript(&g.pr, e, 8))
		goto out;
	ASSERT_EQ(msg_u64(&g.pr.log[2]), 1ULL << VUFE_PROTO_REPLY_ACK,
		  "MTU not acked");
	memcpy(&nr, g.pr.log[6].p, 4);
	ASSERT_EQ(nr, 2, "SET_MEM_TABLE nregions");
	ASSERT_EQ(g.pr.log[6].size, 8 + 2 * 32, "SET_MEM_TABLE size");
	ASSERT_EQ(g.pr.nmaps, 2, "peer mapped both regions");
	ASSERT_EQ(vufe_max_queues(g.fe), 1, "no MQ: one queue pair");
	/* QEMU >= 8.2: SET_VRING_ENABLE waits for its ack */
	ASSERT_EQ(g.pr.log[17].req, VUFE_SET_VRING_ENABLE, "enable");
	ASSERT_TRUE(g.pr.log[17].flags & VUFE_MSG_NEED_REPLY,
		    "enable_need_reply");
	if (packed) {
		struct vhost_vring_state st;

		memcpy(&st, g.pr.log[8].p, sizeof(st));
		ASSERT_EQ(g.pr.log[8].req, VUFE_SET_VRING_BASE, "base");
		ASSERT_EQ(st.num, 0x80008000, "packed base, both halves");
	}
out:
	rig_down(&g);
}

void unit_handshake_legacy(void)
{
	struct vufe_opts o = VUFE_OPTS_DEFAULT;
	/* no PROTOCOL_FEATURES: no protocol messages, no acks, no ENABLE */
	const struct expect e[] = {
		{ VUFE_GET_FEATURES, 0, false },
		{ VUFE_SET_OWNER, 0, false },
		{ VUFE_GET_FEATURES, 0, false },
		{ VUFE_SET_FEATURES, 0, false },
		{ VUFE_SET_MEM_TABLE, 1, false },
		{ VUFE_SET_VRING_NUM, 0, false },
		{ VUFE_SET_VRING_BASE, 0, false },
		{ VUFE_SET_VRING_ADDR, 0, false },
		{ VUFE_SET_VRING_KICK, 1, false },
		{ VUFE_SET_VRING_CALL, 1, false },
		{ VUFE_SET_VRING_NUM, 0, false },
		{ VUFE_SET_VRING_BASE, 0, false },
		{ VUFE_SET_VRING_ADDR, 0, false },
		{ VUFE_SET_VRING_KICK, 1, false },
		{ VUFE_SET_VRING_CALL, 1, false },
		{ VUFE_GET_FEATURES, 0, false },	/* rig_sync's */
	};
	struct rig g;

	if (!rig_up(&g, &o,
		    (1ULL << VIRTIO_NET_F_MRG_RXBUF) |
			    (1ULL << VIRTIO_RING_F_EVENT_IDX),
		    0))
		return;
	if (rig_sync(&g) && check_transcript(&g.pr, e, 16))
		ASSERT_EQ(peer_count(&g.pr), 16, "nothing more");
	ASSERT_EQ(vufe_hdr_len(g.fe), 12, "MRG_RXBUF header without VERSION_1");
	rig_down(&g);
}

void unit_handshake_nack(void)
{
	struct vufe_opts o = VUFE_OPTS_DEFAULT;
	struct vufe *fe;
	struct peer pr;
	int fd;

	memset(&pr, 0, sizeof(pr));
	pr.features = VUFE_DEFAULT_FEATURES;
	pr.proto = 1ULL << VUFE_PROTO_REPLY_ACK;
	pr.nack_req = VUFE_SET_MEM_TABLE;
	if (!ASSERT_OK(vufe_create(&o, &fe), "create"))
		return;
	if (ASSERT_OK(peer_start(&pr, &fd), "peer") &&
	    ASSERT_OK(vufe_attach_fd(fe, fd), "attach")) {
		ASSERT_EQ(vufe_setup(fe), -EIO, "nacked SET_MEM_TABLE fails");
		ASSERT_TRUE(strstr(vufe_strerror(fe), "nacked"),
			    vufe_strerror(fe));
		vufe_disconnect(fe);
		peer_join(&pr);
	}
	vufe_destroy(fe);
}

/* connect over a path; stop; reconnect with the bases GET_VRING_BASE gave */
struct listener {
	char path[108];
	int lfd;
	struct peer pr[2];
	pthread_t th;
	int err;
};

static void *listener_main(void *arg)
{
	struct listener *l = arg;
	unsigned int i;

	for (i = 0; i < 2; i++) {
		l->pr[i].fd = accept4(l->lfd, NULL, NULL, SOCK_CLOEXEC);
		if (l->pr[i].fd < 0) {
			l->err = -errno;
			return NULL;
		}
		/* serve this connection to its end before the next accept */
		peer_main(&l->pr[i]);
		close(l->pr[i].fd);
	}
	return NULL;
}

void unit_stop_reconnect(void)
{
	struct vufe_opts o = VUFE_OPTS_DEFAULT;
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	struct vhost_vring_state s;
	struct vufe_vq_stats st;
	struct listener l;
	struct vufe *fe = NULL;
	unsigned int i, n;
	struct peer *p2;
	bool started = false;
	unsigned int conns = 0;

	memset(&l, 0, sizeof(l));
	snprintf(l.path, sizeof(l.path), "/tmp/vufe-unit-%d.sock", getpid());
	strcpy(sa.sun_path, l.path);
	for (i = 0; i < 2; i++) {
		l.pr[i].features = pkf(VUFE_DEFAULT_FEATURES);
		l.pr[i].packed_base = packed;
		l.pr[i].proto = VUFE_PROTO_ACKED;
		l.pr[i].queue_num = 1;
		l.pr[i].max_slots = 8;
	}
	unlink(l.path);
	l.lfd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (!ASSERT_OK(bind(l.lfd, (struct sockaddr *)&sa, sizeof(sa)), "bind") ||
	    !ASSERT_OK(listen(l.lfd, 2), "listen"))
		goto out;
	if (!ASSERT_OK(pthread_create(&l.th, NULL, listener_main, &l), "thread"))
		goto out;
	started = true;
	o.path = l.path;
	o.timeout_ms = 2000;
	o.want_features = pkf(o.want_features);
	if (!ASSERT_OK(vufe_create(&o, &fe), "create") ||
	    !ASSERT_OK(vufe_connect(fe), vufe_strerror(fe)))
		goto out;
	conns++;
	if (!ASSERT_OK(vufe_setup(fe), vufe_strerror(fe)))
		goto out;
	if (!ASSERT_OK(vufe_stop(fe), vufe_strerror(fe)))
		goto out;
	ASSERT_EQ(vufe_packed(fe), packed, "ring type negotiated");
	vufe_vq_stats(fe, 1, &st);
	/* packed: the 32-bit answer, both positions with their wraps */
	ASSERT_EQ(st.base, packed ? 0x80218031 : 0x1231,
		  "GET_VRING_BASE answer kept");
	if (!ASSERT_OK(vufe_reconnect(fe), vufe_strerror(fe))) {
		if (vufe_sock_fd(fe) >= 0)
			conns++;
		goto out;
	}
	conns++;
	if (!ASSERT_EQ(vufe_backend_alive(fe, 2000), 1, "second peer"))
		goto out;
	p2 = &l.pr[1];
	n = peer_count(p2);
	for (i = 0; i < n; i++) {
		if (p2->log[i].req != VUFE_SET_VRING_BASE)
			continue;
		memcpy(&s, p2->log[i].p, sizeof(s));
		ASSERT_EQ(s.num, packed ? (0x8030 + s.index) |
						  (0x8020 + s.index) << 16 :
					  0x1230 + s.index,
			  "SET_VRING_BASE after reconnect = saved base");
	}
	ASSERT_EQ(p2->log[0].req, VUFE_GET_FEATURES,
		  "the handshake is run again from the start");
out:
	if (fe)
		vufe_disconnect(fe);
	if (started) {
		/* connections that never came: dial them so accept returns */
		for (; conns < 2; conns++) {
			int c = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);

			if (c >= 0 &&
			    connect(c, (struct sockaddr *)&sa, sizeof(sa)))
				test_fail("dummy connect: %s", strerror(errno));
			if (c >= 0)
				close(c);
		}
		pthread_join(l.th, NULL);
		for (i = 0; i < 2; i++) {
			unsigned int k;

			for (k = 0; k < l.pr[i].nmaps; k++)
				munmap(l.pr[i].map[k].mapping,
				       l.pr[i].map[k].len);
		}
	}
	vufe_destroy(fe);
	if (l.lfd > 0)
		close(l.lfd);
	unlink(l.path);
}
