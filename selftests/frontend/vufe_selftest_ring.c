// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* vufe_selftest: TX, kicks and callbacks, RX, signals, hostile shapes */
#include "vufe_selftest.h"

/* ------------------------------------------------------------------ */
/* unit: TX                                                            */
/* ------------------------------------------------------------------ */

static struct virtio_net_hdr_mrg_rxbuf test_hdr(void)
{
	struct virtio_net_hdr_mrg_rxbuf h = {
		.hdr = {
			.flags = VIRTIO_NET_HDR_F_NEEDS_CSUM,
			.gso_type = VIRTIO_NET_HDR_GSO_TCPV4,
			.hdr_len = htole16(54),
			.gso_size = htole16(1448),
			.csum_start = htole16(34),
			.csum_offset = htole16(16),
		},
	};
	return h;
}

void unit_tx_layouts(void)
{
	static const struct {
		unsigned int flags;
		unsigned int ndescs;	/* ring or indirect-table entries */
		bool indirect;
	} c[] = {
		{ 0, 2, false },
		{ VUFE_TX_HDR_INLINE, 1, false },
		{ VUFE_TX_SEGS(3), 4, false },
		{ VUFE_TX_HDR_INLINE | VUFE_TX_SEGS(3), 3, false },
		{ VUFE_TX_INDIRECT, 2, true },
		{ VUFE_TX_INDIRECT | VUFE_TX_SEGS(5), 6, true },
		{ VUFE_TX_INDIRECT | VUFE_TX_HDR_INLINE | VUFE_TX_SEGS(2), 2,
		  true },
	};
	struct vufe_opts o = VUFE_OPTS_DEFAULT;
	struct virtio_net_hdr_mrg_rxbuf h = test_hdr();
	static __u8 frame[9000], got[9100];
	struct vring_desc ch[40];
	struct rig g;
	struct dev d;
	unsigned int i, k;
	bool ind;
	int head, n;

	o.nr_regions = 2;
	if (!rig_up(&g, &o, VUFE_DEFAULT_FEATURES, VUFE_PROTO_ACKED))
		return;
	dev_init(&d, g.fe, VUFE_TXQ(0));
	fill(frame, sizeof(frame), 1);
	for (i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
		char name[80];

		snprintf(name, sizeof(name), "case %u: send", i);
		if (!ASSERT_OK(vufe_send(g.fe, 0, &h, frame, 1514 + i, c[i].flags),
			       name))
			break;
		head = dev_pop(&d);
		snprintf(name, sizeof(name), "case %u: avail head", i);
		if (!ASSERT_GE(head, 0, name))
			break;
		n = dev_chain(&d, head, ch, 40, &ind);
		snprintf(name, sizeof(name), "case %u: descriptors", i);
		ASSERT_EQ(n, c[i].ndescs, name);
		snprintf(name, sizeof(name), "case %u: indirect", i);
		ASSERT_EQ(ind, c[i].indirect, name);
		for (k = 0; k < (unsigned int)n; k++) {
			snprintf(name, sizeof(name), "case %u desc %u: no WRITE",
				 i, k);
			ASSERT_FALSE(le16toh(ch[k].flags) & VRING_DESC_F_WRITE,
				     name);
		}
		if (!(c[i].flags & VUFE_TX_HDR_INLINE)) {
			snprintf(name, sizeof(name),
				 "case %u: header alone in its descriptor", i);
			ASSERT_EQ(le32toh(ch[0].len), 12, name);
		}
		n = dev_read(&d, head, got, sizeof(got));
		snprintf(name, sizeof(name), "case %u: bytes", i);
		ASSERT_EQ(n, 12 + 1514 + i, name);
		ASSERT_MEMEQ(got, &h, 12, "header bytes");
		ASSERT_MEMEQ(got + 12, frame, 1514 + i, "frame bytes");
		dev_used(&d, head, 0);
		dev_publish(&d);
		ASSERT_EQ(vufe_tx_reap(g.fe, 0), 1, "reaped");
	}
	/* the header sits in region 0, the data in region 1 */
	vufe_send(g.fe, 0, &h, frame, 100, 0);
	head = dev_pop(&d);
	if (head >= 0 && dev_chain(&d, head, ch, 40, &ind) == 2) {
		ASSERT_LT(le64toh(ch[0].addr), 1ULL << 32, "header in region 0");
		ASSERT_GE(le64toh(ch[1].addr), 1ULL << 32, "data in region 1");
	}
	ASSERT_EQ(vufe_send(g.fe, 0, &h, frame, 10, VUFE_TX_SEGS(17)), -EINVAL,
		  "17 segments refused");
	ASSERT_EQ(vufe_send(g.fe, 0, &h, frame, 0, 0), -EINVAL, "empty frame");
	rig_down(&g);
}

void unit_tx_reap(void)
{
	struct vufe_opts o = VUFE_OPTS_DEFAULT;
	static __u8 frame[64];
	struct vufe_vq_stats st;
	int i, sent = 0, heads[8];
	struct rig g;
	struct dev d;

	o.ring_size = 16;
	o.tx_slots = 16;
	if (!rig_up(&g, &o, VUFE_DEFAULT_FEATURES, VUFE_PROTO_ACKED))
		return;
	dev_init(&d, g.fe, VUFE_TXQ(0));
	/* 16 descriptors, 2 per frame: 8 frames fill the ring */
	while (!vufe_send(g.fe, 0, NULL, frame, sizeof(frame), 0))
		sent++;
	ASSERT_EQ(sent, 8, "ring full after 8 two-descriptor frames");
	ASSERT_EQ(vufe_send(g.fe, 0, NULL, frame, sizeof(frame), 0), -ENOSPC,
		  "full ring: -ENOSPC");
	/* complete 3 of them, out of order */
	for (i = 0; i < 8; i++)
		heads[i] = dev_pop(&d);
	dev_used(&d, heads[5], 0);
	dev_used(&d, heads[1], 0);
	dev_used(&d, heads[6], 0);
	dev_publish(&d);
	ASSERT_EQ(vufe_tx_reap(g.fe, 0), 3, "3 completions");
	ASSERT_EQ(vufe_tx_inflight(g.fe, 0), 5, "5 in flight");
	ASSERT_EQ(dev_used_event(&d), d.used_idx, "auto rearm: used_event");
	for (i = 0; i < 3; i++)
		ASSERT_OK(vufe_send(g.fe, 0, NULL, frame, sizeof(frame), 0),
			  "room again");
	vufe_vq_stats(g.fe, VUFE_TXQ(0), &st);
	ASSERT_EQ(st.frames, 11, "frames counted");
	/*
	 * The second descriptor of a chain heads nothing: a device bug.
	 * Packed: no next links; an id that is not in flight (ids 8..15
	 * are free) is the same bug.
	 */
	dev_used(&d, packed ? 15 : le16toh(d.r.desc[heads[0]].next), 0);
	dev_publish(&d);
	ASSERT_EQ(vufe_tx_reap(g.fe, 0), -EPROTO, "used id not in flight");
	if (verbose)
		fprintf(stderr, "  %s\n", vufe_strerror(g.fe));
	rig_down(&g);
}

/* ------------------------------------------------------------------ */
/* unit: kicks and callbacks                                           */
/* ------------------------------------------------------------------ */

/* where frame K starts: split entry base + k, packed descriptor 2k on */
#define KEV(k) (packed ? pk_pos(base, 2 * (k), 256) : (__u16)(base + (k)))

static void kick_case(__u16 base)
{
	struct vufe_opts o = VUFE_OPTS_DEFAULT;
	static __u8 frame[64];
	struct vufe_vq_stats st;
	struct vufe *fe;
	struct rig g;
	struct dev d;
	__u16 ev;
	int i;

	/*
	 * Set the base before the handshake: a ring that starts near 65535.
	 * Packed: BASE is a position, and the kick decisions are made on
	 * descriptors (2 per frame here): ev(k) is where frame k starts.
	 */
	memset(&g, 0, sizeof(g));
	o.tx_slots = 256;
	o.want_features = pkf(o.want_features);
	if (!ASSERT_OK(vufe_create(&o, &fe), "create"))
		return;
	vufe_set_vring_base(fe, VUFE_TXQ(0), base);
	g.fe = fe;
	g.pr.features = pkf(VUFE_DEFAULT_FEATURES);
	g.pr.proto = VUFE_PROTO_ACKED;
	g.pr.queue_num = 1;
	g.pr.max_slots = 8;
	{
		int fd;

		if (!ASSERT_OK(peer_start(&g.pr, &fd), "peer")) {
			vufe_destroy(fe);
			return;
		}
		if (!ASSERT_OK(vufe_attach_fd(fe, fd), "attach") ||
		    !ASSERT_OK(vufe_setup(fe), vufe_strerror(fe))) {
			if (vufe_sock_fd(fe) < 0)
				close(fd);
			rig_down(&g);
			return;
		}
	}
	ASSERT_EQ(vufe_packed(fe), packed, "ring type negotiated");
	dev_init(&d, fe, VUFE_TXQ(0));
	ASSERT_EQ(d.last_avail, base, "avail idx starts at the base");

	/* the device wants a kick when entry base+3 becomes available */
	ev = KEV(3);
	dev_set_avail_event(&d, ev);
	for (i = 0; i < 3; i++)
		vufe_send(fe, 0, NULL, frame, 60, 0);
	ASSERT_EQ(efd_read(d.r.kick_fd), 0, "no kick before avail_event");
	vufe_send(fe, 0, NULL, frame, 60, 0);
	ASSERT_EQ(efd_read(d.r.kick_fd), 1, "kick when base+3 is added");
	vufe_send(fe, 0, NULL, frame, 60, 0);
	ASSERT_EQ(efd_read(d.r.kick_fd), 0, "no kick after, event unchanged");

	/* a batch that crosses avail_event kicks once */
	dev_set_avail_event(&d, KEV(7));
	for (i = 0; i < 5; i++)
		vufe_send(fe, 0, NULL, frame, 60, VUFE_TX_NO_KICK);
	ASSERT_EQ(vufe_kick(fe, VUFE_TXQ(0)), 1, "batch [5,10) covers 7");
	ASSERT_EQ(efd_read(d.r.kick_fd), 1, "one kick for the batch");
	/* a batch that does not cross it does not */
	dev_set_avail_event(&d, KEV(100));
	for (i = 0; i < 5; i++)
		vufe_send(fe, 0, NULL, frame, 60, VUFE_TX_NO_KICK);
	ASSERT_EQ(vufe_kick(fe, VUFE_TXQ(0)), 0, "batch [10,15) misses 100");
	vufe_vq_stats(fe, VUFE_TXQ(0), &st);
	ASSERT_EQ(st.kicks, 2, "kicks counted");
	ASSERT_EQ(st.kicks_suppressed, 5, "suppressed counted");
	ASSERT_EQ(st.avail_idx, KEV(15), "avail idx wrapped");
	if (packed) {
		/* every frame whole: what the device reads is what was sent */
		static __u8 got[128];
		int head, n = 0, ids[16];

		while (n < 16 && (head = dev_pop(&d)) >= 0) {
			if (dev_read(&d, head, got, sizeof(got)) != 12 + 60)
				break;
			ids[n++] = head;
		}
		ASSERT_EQ(n, 15, "15 frames of 2 descriptors each");
		ASSERT_EQ(d.last_avail, KEV(15), "device at the driver's avail");
		/*
		 * All used and reaped: the driver's next used position
		 * holds a descriptor of the start, which must not look used
		 */
		for (i = 0; i < n; i++)
			dev_used(&d, ids[i], 0);
		dev_publish(&d);
		ASSERT_EQ(vufe_tx_reap(fe, 0), 15, vufe_strerror(fe));
		ASSERT_EQ(vufe_tx_reap(fe, 0), 0, "nothing more used");
	}
	rig_down(&g);
}

void unit_kick_event_idx(void)
{
	kick_case(packed ? PK_WRAP_BIT : 0);
}

void unit_kick_event_idx_wrap(void)
{
	/*
	 * split: entries 65530..65535, 0..8; packed: position 250 with wrap
	 * counter 0, the ring wraps at frame 3
	 */
	kick_case(packed ? 250 : 65530);
}

void unit_kick_no_notify(void)
{
	struct vufe_opts o = VUFE_OPTS_DEFAULT;
	static __u8 frame[64];
	struct rig g;
	struct dev d;

	if (!rig_up(&g, &o,
		    VUFE_DEFAULT_FEATURES & ~(1ULL << VIRTIO_RING_F_EVENT_IDX),
		    VUFE_PROTO_ACKED))
		return;
	dev_init(&d, g.fe, VUFE_TXQ(0));
	vufe_send(g.fe, 0, NULL, frame, 60, 0);
	ASSERT_EQ(efd_read(d.r.kick_fd), 1, "kick while NO_NOTIFY clear");
	/* packed: the device event area's DISABLE and ENABLE */
	if (packed)
		dev_set_event_flags(&d, VRING_PACKED_EVENT_FLAG_DISABLE);
	else
		d.r.used->flags = htole16(VRING_USED_F_NO_NOTIFY);
	vufe_send(g.fe, 0, NULL, frame, 60, 0);
	vufe_send(g.fe, 0, NULL, frame, 60, 0);
	ASSERT_EQ(efd_read(d.r.kick_fd), 0, "no kick under NO_NOTIFY");
	if (packed)
		dev_set_event_flags(&d, VRING_PACKED_EVENT_FLAG_ENABLE);
	else
		d.r.used->flags = 0;
	vufe_send(g.fe, 0, NULL, frame, 60, 0);
	ASSERT_EQ(efd_read(d.r.kick_fd), 1, "kick again");
	rig_down(&g);
}

void unit_callbacks(void)
{
	struct vufe_opts o = VUFE_OPTS_DEFAULT;
	static __u8 frame[64];
	struct rig g;
	struct dev d;
	int i;

	o.auto_rearm = false;
	if (!rig_up(&g, &o, VUFE_DEFAULT_FEATURES, VUFE_PROTO_ACKED))
		return;
	dev_init(&d, g.fe, VUFE_TXQ(0));
	for (i = 0; i < 8; i++)
		vufe_send(g.fe, 0, NULL, frame, 60, 0);
	/*
	 * Packed: off_wrap is a position (wrap counter 1 at the start) and
	 * counts descriptors, 16 for the 8 frames; the flags say DESC,
	 * DISABLE or ENABLE.
	 */
	ASSERT_TRUE(vufe_enable_cb(g.fe, VUFE_TXQ(0)), "nothing pending");
	ASSERT_EQ(dev_used_event(&d), packed ? PK_WRAP_BIT : 0,
		  "used_event = last used");
	if (packed)
		ASSERT_EQ(dev_driver_flags(&d), VRING_PACKED_EVENT_FLAG_DESC,
			  "driver event flags DESC");
	/* 8 outstanding: delayed asks for a signal after 6 */
	ASSERT_TRUE(vufe_enable_cb_delayed(g.fe, VUFE_TXQ(0)), "delayed");
	ASSERT_EQ(dev_used_event(&d), packed ? PK_WRAP_BIT | 12 : 6,
		  "used_event = last + 3/4 of 8");
	vufe_disable_cb(g.fe, VUFE_TXQ(0));
	if (packed)
		ASSERT_EQ(dev_driver_flags(&d), VRING_PACKED_EVENT_FLAG_DISABLE,
			  "disable: DISABLE");
	else
		ASSERT_EQ(dev_used_event(&d), 0,
			  "disable: used_event 0, as Linux");
	/* pending work: enable_cb says so */
	dev_used(&d, dev_pop(&d), 0);
	dev_publish(&d);
	ASSERT_FALSE(vufe_enable_cb(g.fe, VUFE_TXQ(0)), "one pending");
	rig_down(&g);

	/* without EVENT_IDX, the avail flags carry it */
	if (!rig_up(&g, &o,
		    VUFE_DEFAULT_FEATURES & ~(1ULL << VIRTIO_RING_F_EVENT_IDX),
		    VUFE_PROTO_ACKED))
		return;
	dev_init(&d, g.fe, VUFE_RXQ(0));
	vufe_disable_cb(g.fe, VUFE_RXQ(0));
	if (packed)
		ASSERT_EQ(dev_driver_flags(&d), VRING_PACKED_EVENT_FLAG_DISABLE,
			  "DISABLE set");
	else
		ASSERT_EQ(le16toh(d.r.avail->flags), VRING_AVAIL_F_NO_INTERRUPT,
			  "NO_INTERRUPT set");
	vufe_enable_cb(g.fe, VUFE_RXQ(0));
	if (packed)
		ASSERT_EQ(dev_driver_flags(&d), VRING_PACKED_EVENT_FLAG_ENABLE,
			  "ENABLE without EVENT_IDX");
	else
		ASSERT_EQ(le16toh(d.r.avail->flags), 0, "NO_INTERRUPT cleared");
	rig_down(&g);
}

/* ------------------------------------------------------------------ */
/* unit: RX                                                            */
/* ------------------------------------------------------------------ */

/* what a device writes for a frame: the header, then the frame */
static size_t rx_stream(__u8 *out, const __u8 *frame, size_t len,
			__u16 num_buffers)
{
	struct virtio_net_hdr_mrg_rxbuf h = test_hdr();

	h.num_buffers = htole16(num_buffers);
	memcpy(out, &h, 12);
	memcpy(out + 12, frame, len);
	return 12 + len;
}

void unit_rx_mergeable(void)
{
	struct vufe_opts o = VUFE_OPTS_DEFAULT;
	static __u8 frame[9000], stream[9100], got[10000];
	struct virtio_net_hdr_mrg_rxbuf h, want = test_hdr();
	struct vufe_vq_stats st;
	struct vring_desc ch[4];
	unsigned int nb, k;
	int heads[3], posted;
	size_t len, off;
	struct rig g;
	struct dev d;
	bool ind;
	ssize_t n;

	o.nr_regions = 2;
	if (!rig_up(&g, &o, VUFE_DEFAULT_FEATURES, VUFE_PROTO_ACKED))
		return;
	posted = vufe_post_rx(g.fe, 0, 0);
	ASSERT_EQ(posted, 256, "a page-sized buffer per descriptor");
	dev_init(&d, g.fe, VUFE_RXQ(0));
	dev_rewind(&d);
	heads[0] = dev_pop(&d);
	ASSERT_EQ(dev_chain(&d, heads[0], ch, 4, &ind), 1, "one descriptor");
	ASSERT_EQ(le32toh(ch[0].len), 4096, "page-sized");
	ASSERT_EQ(le16toh(ch[0].flags), VRING_DESC_F_WRITE, "device-writable");

	/* 9000 bytes + header over 3 buffers, published in two steps */
	fill(frame, sizeof(frame), 2);
	len = rx_stream(stream, frame, 9000, 3);
	heads[1] = dev_pop(&d);
	heads[2] = dev_pop(&d);
	for (k = 0, off = 0; k < 3; k++) {
		size_t c = len - off < 4096 ? len - off : 4096;

		dev_write(&d, heads[k], stream + off, c);
		dev_used(&d, heads[k], c);
		off += c;
		if (k == 1) {
			dev_publish(&d);
			ASSERT_EQ(vufe_recv(g.fe, 0, got, sizeof(got), &h, &nb),
				  -EAGAIN, "2 of 3 buffers: not yet");
		}
	}
	dev_publish(&d);
	n = vufe_recv(g.fe, 0, got, sizeof(got), &h, &nb);
	ASSERT_EQ(n, 9000, vufe_strerror(g.fe));
	ASSERT_EQ(nb, 3, "num_buffers");
	ASSERT_MEMEQ(got, frame, 9000, "reassembled frame");
	want.num_buffers = htole16(3);
	ASSERT_MEMEQ(&h, &want, 12, "header returned");
	vufe_vq_stats(g.fe, VUFE_RXQ(0), &st);
	/* packed: positions, the avail one a lap on (wrap counter 0) */
	ASSERT_EQ(st.avail_idx, packed ? 3 : 256 + 3, "3 buffers reposted");
	ASSERT_EQ(dev_used_event(&d), packed ? PK_WRAP_BIT | 3 : 3,
		  "rearmed at the next used entry");

	/* a frame that fits one buffer exactly */
	len = rx_stream(stream, frame, 4096 - 12, 1);
	heads[0] = dev_pop(&d);
	dev_write(&d, heads[0], stream, len);
	dev_used(&d, heads[0], len);
	dev_publish(&d);
	ASSERT_EQ(vufe_recv(g.fe, 0, got, sizeof(got), &h, &nb), 4096 - 12,
		  "one full buffer");
	/* too small a caller buffer: -EMSGSIZE, the frame is dropped */
	heads[0] = dev_pop(&d);
	dev_write(&d, heads[0], stream, len);
	dev_used(&d, heads[0], len);
	dev_publish(&d);
	ASSERT_EQ(vufe_recv(g.fe, 0, got, 100, &h, &nb), -EMSGSIZE,
		  "caller buffer too small");
	ASSERT_EQ(vufe_recv(g.fe, 0, got, sizeof(got), &h, &nb), -EAGAIN,
		  "and consumed");
	rig_down(&g);
}

void unit_rx_mergeable_bad(void)
{
	static const char *what[] = {
		"num_buffers 0", "used id never posted", "used len > 4096",
		"write past the buffer",
	};
	struct vufe_opts o = VUFE_OPTS_DEFAULT;
	static __u8 frame[5000], stream[5100], got[6000];
	unsigned int i;
	struct rig g;
	struct dev d;
	int head;

	for (i = 0; i < 4; i++) {
		if (!rig_up(&g, &o, VUFE_DEFAULT_FEATURES, VUFE_PROTO_ACKED))
			return;
		vufe_post_rx(g.fe, 0, 8);
		dev_init(&d, g.fe, VUFE_RXQ(0));
		dev_rewind(&d);
		head = dev_pop(&d);
		rx_stream(stream, frame, 100, i == 0 ? 0 : 1);
		dev_write(&d, head, stream, 112);
		if (i == 1)
			head = 200;
		if (i == 3) {
			struct vring_desc ch;
			bool ind;
			__u8 *p = NULL;

			if (dev_chain(&d, head, &ch, 1, &ind) == 1)
				p = vufe_gpa_to_ptr(g.fe, le64toh(ch.addr),
						    4097);
			if (!ASSERT_OK_PTR(p, "the buffer")) {
				rig_down(&g);
				return;
			}
			p[4096] = 0;	/* one byte past */
		}
		dev_used(&d, head, i == 2 ? 5000 : 112);
		dev_publish(&d);
		ASSERT_EQ(vufe_recv(g.fe, 0, got, sizeof(got), NULL, NULL),
			  -EPROTO, what[i]);
		if (verbose)
			fprintf(stderr, "  %s: %s\n", what[i],
				vufe_strerror(g.fe));
		rig_down(&g);
	}
}

static void rx_big_case(bool indirect)
{
	struct vufe_opts o = VUFE_OPTS_DEFAULT;
	static __u8 frame[65550], stream[65600], got[65600];
	struct virtio_net_hdr_mrg_rxbuf h;
	struct vring_desc ch[40];
	unsigned int k, total = 0, nb;
	__u64 f = VUFE_DEFAULT_FEATURES & ~(1ULL << VIRTIO_NET_F_MRG_RXBUF);
	struct rig g;
	struct dev d;
	int head, n, posted;
	bool ind;

	if (!indirect)
		f &= ~(1ULL << VIRTIO_RING_F_INDIRECT_DESC);
	o.rx_mode = VUFE_RX_BIG;
	if (!rig_up(&g, &o, f, VUFE_PROTO_ACKED))
		return;
	ASSERT_EQ(vufe_rx_mode(g.fe), VUFE_RX_BIG, "big packets mode");
	posted = vufe_post_rx(g.fe, 0, 0);
	ASSERT_EQ(posted, indirect ? 64 : 256 / 18, "chains posted");
	dev_init(&d, g.fe, VUFE_RXQ(0));
	dev_rewind(&d);
	head = dev_pop(&d);
	n = dev_chain(&d, head, ch, 40, &ind);
	ASSERT_EQ(n, 18, "header + 17 pages");
	ASSERT_EQ(ind, indirect, "indirect iff negotiated");
	ASSERT_EQ(le32toh(ch[0].len), 12, "header descriptor");
	for (k = 0; k < (unsigned int)n; k++) {
		total += le32toh(ch[k].len);
		ASSERT_TRUE(le16toh(ch[k].flags) & VRING_DESC_F_WRITE, "WRITE");
	}
	ASSERT_EQ(total, 65562, "65562 bytes per chain");
	fill(frame, sizeof(frame), 3);
	n = rx_stream(stream, frame, 65550, 1);
	dev_write(&d, head, stream, n);
	dev_used(&d, head, n);
	dev_publish(&d);
	ASSERT_EQ(vufe_recv(g.fe, 0, got, sizeof(got), &h, &nb), 65550,
		  vufe_strerror(g.fe));
	ASSERT_MEMEQ(got, frame, 65550, "frame across the chain");
	ASSERT_EQ(h.hdr.gso_type, VIRTIO_NET_HDR_GSO_TCPV4, "header");
	rig_down(&g);
}

void unit_rx_big(void)
{
	rx_big_case(false);
}

void unit_rx_big_indirect(void)
{
	rx_big_case(true);
}

void unit_rx_large(void)
{
	struct vufe_opts o = VUFE_OPTS_DEFAULT;
	static __u8 frame[2000], stream[2100], got[3000];
	struct vring_desc ch[2];
	struct rig g;
	struct dev d;
	int head, n;
	bool ind;

	o.rx_mode = VUFE_RX_LARGE;
	if (!rig_up(&g, &o,
		    VUFE_DEFAULT_FEATURES & ~(1ULL << VIRTIO_NET_F_MRG_RXBUF),
		    VUFE_PROTO_ACKED))
		return;
	ASSERT_EQ(vufe_post_rx(g.fe, 0, 0), 64, "64 large buffers");
	dev_init(&d, g.fe, VUFE_RXQ(0));
	dev_rewind(&d);
	head = dev_pop(&d);
	ASSERT_EQ(dev_chain(&d, head, ch, 2, &ind), 1, "one descriptor");
	ASSERT_EQ(le32toh(ch[0].len), 65562, "of 65562 bytes");
	fill(frame, sizeof(frame), 4);
	n = rx_stream(stream, frame, 2000, 1);
	dev_write(&d, head, stream, n);
	dev_used(&d, head, n);
	dev_publish(&d);
	ASSERT_EQ(vufe_recv(g.fe, 0, got, sizeof(got), NULL, NULL), 2000,
		  vufe_strerror(g.fe));
	ASSERT_MEMEQ(got, frame, 2000, "frame");
	rig_down(&g);
}

/* ------------------------------------------------------------------ */
/* unit: signals and waits                                             */
/* ------------------------------------------------------------------ */

void unit_signals(void)
{
	struct vufe_opts o = VUFE_OPTS_DEFAULT;
	struct vufe_vq_stats st;
	struct timespec a, b;
	struct vufe_ring r;
	struct rig g;
	long ms;

	if (!rig_up(&g, &o, VUFE_DEFAULT_FEATURES, VUFE_PROTO_ACKED))
		return;
	vufe_ring(g.fe, VUFE_RXQ(0), &r);
	/* three signals before the driver looks: one read, counter 3 */
	efd_write(r.call_fd, 1);
	efd_write(r.call_fd, 1);
	efd_write(r.call_fd, 1);
	ASSERT_EQ(vufe_poll_signals(g.fe), 3, "3 signals in one read");
	vufe_vq_stats(g.fe, VUFE_RXQ(0), &st);
	ASSERT_EQ(st.signals, 3, "signals");
	ASSERT_EQ(st.wakeups, 1, "wakeups");
	efd_write(r.call_fd, 1);
	ASSERT_OK(vufe_wait_signals(g.fe, VUFE_RXQ(0), 4, 1000), "wait for 4");
	/* a bounded wait that cannot succeed returns on time */
	clock_gettime(CLOCK_MONOTONIC, &a);
	ASSERT_EQ(vufe_wait_signals(g.fe, VUFE_RXQ(0), 5, 100), -ETIMEDOUT,
		  "times out");
	clock_gettime(CLOCK_MONOTONIC, &b);
	ms = (b.tv_sec - a.tv_sec) * 1000 + (b.tv_nsec - a.tv_nsec) / 1000000;
	ASSERT_GE(ms, 100, "waited the timeout");
	ASSERT_LT(ms, 1000, "and not much longer");
	/* the backend hanging up ends a wait at once */
	shutdown(g.pr.fd, SHUT_RDWR);
	ASSERT_EQ(vufe_wait_signals(g.fe, VUFE_RXQ(0), 5, 5000), -ECONNRESET,
		  "hang-up noticed");
	rig_down(&g);
}

/* ------------------------------------------------------------------ */
/* unit: hostile input has the shape it claims                         */
/* ------------------------------------------------------------------ */

void unit_hostile_ring_shapes(void)
{
	struct vufe_opts o = VUFE_OPTS_DEFAULT;
	struct vring_desc *t;
	struct rig g;
	struct dev d;
	int head;
	__u16 a, b;

	if (!rig_up(&g, &o, VUFE_DEFAULT_FEATURES, VUFE_PROTO_ACKED))
		return;
	dev_init(&d, g.fe, VUFE_TXQ(0));

	ASSERT_EQ(vufe_hostile_ring(g.fe, VUFE_TXQ(0), VUFE_BAD_DESC_LOOP), 1,
		  "kicked");
	head = dev_pop(&d);
	a = head;
	b = le16toh(d.r.desc[a].next);
	ASSERT_TRUE(le16toh(d.r.desc[b].flags) & VRING_DESC_F_NEXT, "loop");
	ASSERT_EQ(le16toh(d.r.desc[b].next), a, "next points back");

	vufe_hostile_ring(g.fe, VUFE_TXQ(0), VUFE_BAD_DESC_OOB);
	head = dev_pop(&d);
	b = le16toh(d.r.desc[head].next);
	ASSERT_NULL(vufe_gpa_to_ptr(g.fe, le64toh(d.r.desc[b].addr), 1),
		    "data outside guest memory");

	vufe_hostile_ring(g.fe, VUFE_TXQ(0), VUFE_BAD_DESC_STRADDLE);
	head = dev_pop(&d);
	b = le16toh(d.r.desc[head].next);
	ASSERT_OK_PTR(vufe_gpa_to_ptr(g.fe, le64toh(d.r.desc[b].addr), 1),
		      "starts inside");
	ASSERT_NULL(vufe_gpa_to_ptr(g.fe, le64toh(d.r.desc[b].addr),
				    le32toh(d.r.desc[b].len)),
		    "ends outside");

	vufe_hostile_ring(g.fe, VUFE_TXQ(0), VUFE_BAD_INDIRECT_OOB);
	head = dev_pop(&d);
	ASSERT_TRUE(le16toh(d.r.desc[head].flags) & VRING_DESC_F_INDIRECT,
		    "indirect");
	ASSERT_NULL(vufe_gpa_to_ptr(g.fe, le64toh(d.r.desc[head].addr), 32),
		    "table outside");

	vufe_hostile_ring(g.fe, VUFE_TXQ(0), VUFE_BAD_INDIRECT_ENTRY);
	head = dev_pop(&d);
	t = vufe_gpa_to_ptr(g.fe, le64toh(d.r.desc[head].addr), 32);
	if (ASSERT_OK_PTR(t, "table inside"))
		ASSERT_NULL(vufe_gpa_to_ptr(g.fe, le64toh(t[1].addr), 1),
			    "entry outside");

	vufe_hostile_ring(g.fe, VUFE_TXQ(0), VUFE_BAD_INDIRECT_LEN);
	head = dev_pop(&d);
	ASSERT_EQ(le32toh(d.r.desc[head].len) % 16, 1, "len not 16k");

	vufe_hostile_ring(g.fe, VUFE_TXQ(0), VUFE_BAD_DESC_NEXT_OOB);
	head = dev_pop(&d);
	ASSERT_GE(le16toh(d.r.desc[head].next), d.r.num, "next >= size");

	vufe_hostile_ring(g.fe, VUFE_TXQ(0), VUFE_BAD_HEAD_OOB);
	head = dev_pop(&d);
	ASSERT_GE(head, d.r.num, "head >= size");

	a = dev_avail_idx(&d);
	vufe_hostile_ring(g.fe, VUFE_TXQ(0), VUFE_BAD_AVAIL_JUMP);
	ASSERT_EQ((__u16)(dev_avail_idx(&d) - a), d.r.num + 1,
		  "avail idx jumps by size + 1");
	ASSERT_EQ(efd_read(d.r.kick_fd), 9, "every one kicked");
	rig_down(&g);
}

/*
 * The packed forms of vufe_hostile_ring() (vufe.h): the faults that exist
 * on both ring types look the same; next links, avail ring heads and
 * avail->idx do not exist on a packed ring, and their kinds put the packed
 * faults in their place.  DESC_LOOP takes the whole ring, so it goes last.
 */
void unit_hostile_ring_shapes_packed(void)
{
	struct vufe_opts o = VUFE_OPTS_DEFAULT;
	struct vring_packed_desc *pd, *t;
	struct vring_desc ch[4];
	struct rig g;
	struct dev d;
	bool ind;
	__u16 p;
	int id;

	if (!rig_up(&g, &o, VUFE_DEFAULT_FEATURES, VUFE_PROTO_ACKED))
		return;
	dev_init(&d, g.fe, VUFE_TXQ(0));
	pd = d.r.pdesc;

	ASSERT_EQ(vufe_hostile_ring(g.fe, VUFE_TXQ(0), VUFE_BAD_DESC_OOB), 1,
		  "kicked");
	id = dev_pop(&d);
	if (ASSERT_EQ(dev_chain(&d, id, ch, 4, &ind), 2, "two descriptors"))
		ASSERT_NULL(vufe_gpa_to_ptr(g.fe, le64toh(ch[1].addr), 1),
			    "data outside guest memory");

	vufe_hostile_ring(g.fe, VUFE_TXQ(0), VUFE_BAD_DESC_STRADDLE);
	id = dev_pop(&d);
	if (ASSERT_EQ(dev_chain(&d, id, ch, 4, &ind), 2, "two descriptors")) {
		ASSERT_OK_PTR(vufe_gpa_to_ptr(g.fe, le64toh(ch[1].addr), 1),
			      "starts inside");
		ASSERT_NULL(vufe_gpa_to_ptr(g.fe, le64toh(ch[1].addr),
					    le32toh(ch[1].len)),
			    "ends outside");
	}

	vufe_hostile_ring(g.fe, VUFE_TXQ(0), VUFE_BAD_INDIRECT_OOB);
	id = dev_pop(&d);
	ASSERT_GE(id, 0, "available");
	p = d.pos[id & (DEV_IDS - 1)] & ~PK_WRAP_BIT;
	ASSERT_TRUE(le16toh(pd[p].flags) & VRING_DESC_F_INDIRECT, "indirect");
	ASSERT_NULL(vufe_gpa_to_ptr(g.fe, le64toh(pd[p].addr), 32),
		    "table outside");

	vufe_hostile_ring(g.fe, VUFE_TXQ(0), VUFE_BAD_INDIRECT_ENTRY);
	id = dev_pop(&d);
	p = d.pos[id & (DEV_IDS - 1)] & ~PK_WRAP_BIT;
	t = vufe_gpa_to_ptr(g.fe, le64toh(pd[p].addr), 32);
	if (ASSERT_OK_PTR(t, "table inside"))
		ASSERT_NULL(vufe_gpa_to_ptr(g.fe, le64toh(t[1].addr), 1),
			    "entry outside");

	vufe_hostile_ring(g.fe, VUFE_TXQ(0), VUFE_BAD_INDIRECT_LEN);
	id = dev_pop(&d);
	p = d.pos[id & (DEV_IDS - 1)] & ~PK_WRAP_BIT;
	ASSERT_EQ(le32toh(pd[p].len) % 16, 1, "len not 16k");

	vufe_hostile_ring(g.fe, VUFE_TXQ(0), VUFE_BAD_INDIRECT_NESTED);
	id = dev_pop(&d);
	p = d.pos[id & (DEV_IDS - 1)] & ~PK_WRAP_BIT;
	t = vufe_gpa_to_ptr(g.fe, le64toh(pd[p].addr), 32);
	if (ASSERT_OK_PTR(t, "table inside"))
		ASSERT_TRUE(le16toh(t[1].flags) & VRING_DESC_F_INDIRECT,
			    "entry is indirect itself");

	/* NEXT_OOB: an indirect descriptor that chains on */
	vufe_hostile_ring(g.fe, VUFE_TXQ(0), VUFE_BAD_DESC_NEXT_OOB);
	id = dev_pop(&d);
	ASSERT_EQ(d.cnt[id & (DEV_IDS - 1)], 2, "two ring descriptors");
	p = d.pos[id & (DEV_IDS - 1)] & ~PK_WRAP_BIT;
	ASSERT_EQ(le16toh(pd[p].flags) &
			  (VRING_DESC_F_INDIRECT | VRING_DESC_F_NEXT),
		  VRING_DESC_F_INDIRECT | VRING_DESC_F_NEXT,
		  "INDIRECT with NEXT");

	/* HEAD_OOB: a buffer id past the ring */
	vufe_hostile_ring(g.fe, VUFE_TXQ(0), VUFE_BAD_HEAD_OOB);
	id = dev_pop(&d);
	ASSERT_GE(id, d.r.num, "id >= size");

	/* AVAIL_JUMP: an indirect table as a chain's second descriptor */
	vufe_hostile_ring(g.fe, VUFE_TXQ(0), VUFE_BAD_AVAIL_JUMP);
	id = dev_pop(&d);
	ASSERT_EQ(d.cnt[id & (DEV_IDS - 1)], 2, "two ring descriptors");
	p = d.pos[id & (DEV_IDS - 1)];
	ASSERT_FALSE(le16toh(pd[p & ~PK_WRAP_BIT].flags) &
			     VRING_DESC_F_INDIRECT, "first is a buffer");
	p = pk_pos(p, 1, d.r.num) & ~PK_WRAP_BIT;
	ASSERT_TRUE(le16toh(pd[p].flags) & VRING_DESC_F_INDIRECT,
		    "second is an indirect table");
	ASSERT_EQ(dev_pop(&d), -1, "nothing more available");

	/* DESC_LOOP: all of the rest of the ring, NEXT on every one */
	ASSERT_EQ(vufe_hostile_ring(g.fe, VUFE_TXQ(0), VUFE_BAD_DESC_LOOP),
		  -ENOSPC, "needs the whole ring");
	rig_down(&g);
	if (!rig_up(&g, &o, VUFE_DEFAULT_FEATURES, VUFE_PROTO_ACKED))
		return;
	dev_init(&d, g.fe, VUFE_TXQ(0));
	ASSERT_EQ(vufe_hostile_ring(g.fe, VUFE_TXQ(0), VUFE_BAD_DESC_LOOP), 1,
		  "kicked");
	ASSERT_EQ(dev_pop(&d), -2, "a chain that never ends");
	ASSERT_EQ(efd_read(d.r.kick_fd), 1, "kicked once");
	rig_down(&g);
}

void unit_hostile_msg_shapes(void)
{
	static const struct {
		enum vufe_hostile_msg kind;
		__u32 req, size;
		unsigned int nfds;
	} c[] = {
		{ VUFE_BAD_MSG_TRUNCATED, VUFE_SET_VRING_NUM, 4, 0 },
		{ VUFE_BAD_MSG_KICK_2FDS, VUFE_SET_VRING_KICK, 8, 2 },
		{ VUFE_BAD_MSG_CALL_NOFD, VUFE_SET_VRING_CALL, 8, 0 },
		{ VUFE_BAD_MSG_ADD_MEM_NOFD, VUFE_ADD_MEM_REG, 40, 0 },
		{ VUFE_BAD_MSG_MEM_TABLE_FDS, VUFE_SET_MEM_TABLE, 72, 1 },
		{ VUFE_BAD_MSG_VRING_IDX, VUFE_SET_VRING_NUM, 8, 0 },
		{ VUFE_BAD_MSG_VRING_NUM, VUFE_SET_VRING_NUM, 8, 0 },
		{ VUFE_BAD_MSG_UNKNOWN, 999, 8, 0 },
	};
	struct vufe_opts o = VUFE_OPTS_DEFAULT;
	unsigned int i, base;
	struct rig g;

	if (!rig_up(&g, &o, VUFE_DEFAULT_FEATURES, VUFE_PROTO_ACKED))
		return;
	if (!rig_sync(&g))
		goto out;
	base = peer_count(&g.pr);
	for (i = 0; i < sizeof(c) / sizeof(c[0]); i++)
		ASSERT_OK(vufe_hostile_msg(g.fe, c[i].kind), "sent");
	if (!rig_sync(&g))
		goto out;
	for (i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
		struct peer_msg *m = &g.pr.log[base + i];
		char name[48];

		snprintf(name, sizeof(name), "case %u request", i);
		ASSERT_EQ(m->req, c[i].req, name);
		snprintf(name, sizeof(name), "case %u size", i);
		ASSERT_EQ(m->size, c[i].size, name);
		snprintf(name, sizeof(name), "case %u fds", i);
		ASSERT_EQ(m->nfds, c[i].nfds, name);
	}
	/* the peer ends the session on an oversized message */
	ASSERT_OK(vufe_hostile_msg(g.fe, VUFE_BAD_MSG_OVERSIZE), "oversize");
	ASSERT_EQ(vufe_backend_alive(g.fe, 2000), 0, "peer hung up");
out:
	rig_down(&g);
}
