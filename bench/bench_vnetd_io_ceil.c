// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* bench_vnetd_io: the guest->tap and tap->guest ceilings, gen, spin, rate */
#include "bench_vnetd_io.h"

/* ---- write: the guest->tap ceiling ---- */

#define COLD_SLOTS 256
#define COLD_SLOT 2048

struct toucher {
	unsigned char *slots;
	const unsigned char *frame;
	unsigned int len;
	int cpu;
};

/* cold: rewrite every slot in turn, as a guest writes its frames */
static void *touch(void *arg)
{
	struct toucher *t = arg;
	unsigned int i = 0;

	pin(t->cpu);
	while (!stop) {
		memcpy(t->slots + (size_t)i * COLD_SLOT, t->frame, t->len);
		i = (i + 1) % COLD_SLOTS;
	}
	return NULL;
}

int do_write(const struct opts *o, enum write_kind kind)
{
	bool floor = kind == W_FLOOR || kind == W_REFUSED;
	int fail = kind == W_FLOOR ? -EIO : -EINVAL;
	static const unsigned char dst[ETH_ALEN] = { 2, 0, 0, 0, 0, 0 };
	static unsigned char buf[VNET_HDR_LEN + MAX_FRAME];
	static unsigned char slots[COLD_SLOTS * COLD_SLOT]
		__attribute__((aligned(4096)));
	struct toucher t = { slots, buf, 0, o->touch_cpu };
	pthread_t th;
	unsigned int len, i, head, n, slot = 0;
	uint64_t c0 = 0, c1, written = 0;
	double t0 = 0, t1, end, cpu0 = 0;
	struct io_uring ring;
	struct io_uring_cqe *cqe;
	struct iovec iov;
	bool measuring = false;
	int fd, err;

	enter_netns(o->netns);
	pin(o->cpu);
	len = VNET_HDR_LEN + udp_frame(buf + VNET_HDR_LEN, o->size, dst);
	if (kind == W_REFUSED)
		len = 8;
	fd = tap_queue(o->dev, true);
	ring_init(&ring, o->batch);
	iov = (struct iovec){ buf, sizeof(buf) };
	if (kind == W_COLD) {
		if (len > COLD_SLOT)
			die("cold: frames up to %d bytes", COLD_SLOT);
		for (i = 0; i < COLD_SLOTS; i++)
			memcpy(slots + (size_t)i * COLD_SLOT, buf, len);
		t.len = len;
		if (pthread_create(&th, NULL, touch, &t))
			die("cold: no thread");
		iov = (struct iovec){ slots, sizeof(slots) };
	}
	err = io_uring_register_buffers(&ring, &iov, 1);
	if (err)
		die("io_uring_register_buffers: %s", strerror(-err));
	err = io_uring_register_files(&ring, &fd, 1);
	if (err)
		die("io_uring_register_files: %s", strerror(-err));

	end = now_s() + o->warmup;
	while (!stop) {
		if (now_s() >= end) {
			if (measuring)
				break;
			measuring = true;
			c0 = link_counter(o->dev, "rx_packets");
			t0 = now_s();
			cpu0 = thread_cpu();
			written = 0;
			/* --seconds 0: until SIGINT or SIGTERM (slice) */
			end = o->seconds > 0 ? t0 + o->seconds : 1e18;
		}
		for (i = 0; i < o->batch; i++) {
			struct io_uring_sqe *sqe = io_uring_get_sqe(&ring);

			if (kind == W_COLD) {
				if (o->unfixed)
					io_uring_prep_write(sqe, 0,
							    slots + (size_t)slot * COLD_SLOT,
							    len, 0);
				else
					io_uring_prep_write_fixed(sqe, 0,
								  slots + (size_t)slot * COLD_SLOT,
								  len, 0, 0);
				slot = (slot + 1) % COLD_SLOTS;
			} else if (o->unfixed) {
				io_uring_prep_write(sqe, 0, buf, len, 0);
			} else {
				io_uring_prep_write_fixed(sqe, 0, buf, len, 0, 0);
			}
			sqe->flags |= IOSQE_FIXED_FILE;
		}
		/* a stop and continue (slice) may interrupt the wait */
		do
			err = io_uring_submit_and_wait(&ring, o->batch);
		while (err == -EINTR);
		if (err < 0)
			die("io_uring_submit: %s", strerror(-err));
		for (i = 0; i < o->batch;) {
			err = io_uring_wait_cqe(&ring, &cqe);
			if (err == -EINTR)
				continue;
			if (err)
				die("io_uring_wait_cqe: %s", strerror(-err));
			n = 0;
			io_uring_for_each_cqe(&ring, head, cqe) {
				if (cqe->res == (int)len ||
				    (floor && cqe->res == fail))
					written++;
				else if (cqe->res != -EAGAIN)
					die("write into %s: %s", o->dev,
					    strerror(-cqe->res));
				n++;
			}
			io_uring_cq_advance(&ring, n);
			i += n;
		}
	}
	t1 = now_s();
	cpu0 = thread_cpu() - cpu0;
	c1 = link_counter(o->dev, "rx_packets");
	if (kind == W_COLD) {
		stop = 1;
		pthread_join(th, NULL);
	}
	fprintf(stderr, "%s: %.0f completions/s, %.0f rx_packets/s\n",
		kind == W_FLOOR ? "floor" : kind == W_REFUSED ? "refused" :
		kind == W_COLD ? "cold" : "write",
		written / (t1 - t0),
		(c1 - c0) / (t1 - t0));
	report(floor ? written : c1 - c0, t1 - t0, cpu0);
	return 0;
}

/* ---- read: the tap->guest ceiling ---- */

#define READS 64

int do_read(const struct opts *o)
{
	static unsigned char bufs[READS][VNET_HDR_LEN + 65550];
	struct io_uring ring;
	struct io_uring_cqe *cqe;
	uint64_t frames = 0, bytes = 0;
	double t0 = 0, t1, end, cpu = 0;
	bool measuring = false;
	unsigned int i, head, n;
	int fd, err;

	enter_netns(o->netns);
	pin(o->cpu);
	fd = tap_queue(o->dev, false);
	ring_init(&ring, 2 * READS);
	for (i = 0; i < READS; i++) {
		struct io_uring_sqe *sqe = io_uring_get_sqe(&ring);

		io_uring_prep_read(sqe, fd, bufs[i], sizeof(bufs[i]), 0);
		io_uring_sqe_set_data64(sqe, i);
	}
	end = now_s() + o->warmup;
	while (!stop) {
		struct __kernel_timespec ts = { 0, 100000000 };

		if (now_s() >= end) {
			if (measuring)
				break;
			measuring = true;
			t0 = now_s();
			cpu = thread_cpu();
			frames = bytes = 0;
			end = t0 + o->seconds;
		}
		err = io_uring_submit_and_wait_timeout(&ring, &cqe, 1, &ts,
						       NULL);
		if (err < 0 && err != -ETIME && err != -EINTR)
			die("io_uring: %s", strerror(-err));
		n = 0;
		io_uring_for_each_cqe(&ring, head, cqe) {
			__u64 idx = io_uring_cqe_get_data64(cqe);
			struct io_uring_sqe *sqe;

			if (cqe->res > VNET_HDR_LEN) {
				frames++;
				bytes += cqe->res - VNET_HDR_LEN;
			} else if (cqe->res < 0 && cqe->res != -EAGAIN &&
				   cqe->res != -EINTR) {
				die("read from %s: %s", o->dev,
				    strerror(-cqe->res));
			}
			n++;
			sqe = io_uring_get_sqe(&ring);
			io_uring_prep_read(sqe, fd, bufs[idx], sizeof(bufs[idx]),
					   0);
			io_uring_sqe_set_data64(sqe, idx);
		}
		io_uring_cq_advance(&ring, n);
	}
	t1 = now_s();
	cpu = thread_cpu() - cpu;
	fprintf(stderr, "read: %.0f frames/s, %.0f MB/s\n",
		frames / (t1 - t0), bytes / (t1 - t0) / 1e6);
	report(frames, t1 - t0, cpu);
	return 0;
}

/* ---- gen: frames out of a device ---- */

#define GSO_MSS 1448
#define GSO_PAYLOAD (45 * GSO_MSS)	/* 65160: IP length 65200 */

/*
 * A 64 KiB TCP/IPv4 frame into F (ETH_HLEN + 40 + GSO_PAYLOAD bytes) and
 * its virtio-net header into VH: NEEDS_CSUM (the TCP checksum field holds
 * the pseudo header's sum), GSO TCPV4 with gso_size GSO_MSS.  Length.
 */
static unsigned int gso_frame(unsigned char *f, struct virtio_net_hdr *vh,
			      const unsigned char *dst)
{
	unsigned int len = ETH_HLEN + 40 + GSO_PAYLOAD, sum = 0, i;
	unsigned char *ip = f + ETH_HLEN, *tcp = ip + 20;

	udp_frame(f, 60, dst);	/* the Ethernet and IPv4 headers */
	memset(ip + 20, 0, len - ETH_HLEN - 20);
	ip[2] = (len - ETH_HLEN) >> 8;
	ip[3] = (len - ETH_HLEN) & 0xff;
	ip[9] = IPPROTO_TCP;
	ip_csum_set(ip);
	tcp[1] = 9;		/* ports 9 -> 9 */
	tcp[3] = 9;
	tcp[12] = 5 << 4;	/* data offset: 20 bytes */
	tcp[13] = 0x10;		/* ACK */
	tcp[14] = 0xff;		/* window */
	/* the pseudo header's sum, not inverted: CHECKSUM_PARTIAL */
	sum = IPPROTO_TCP + 20 + GSO_PAYLOAD;
	for (i = 12; i < 20; i += 2)
		sum += ip[i] << 8 | ip[i + 1];
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	tcp[16] = sum >> 8;
	tcp[17] = sum & 0xff;
	memset(vh, 0, sizeof(*vh));
	vh->flags = VIRTIO_NET_HDR_F_NEEDS_CSUM;
	vh->gso_type = VIRTIO_NET_HDR_GSO_TCPV4;
	vh->hdr_len = ETH_HLEN + 40;
	vh->gso_size = GSO_MSS;
	vh->csum_start = ETH_HLEN + 20;
	vh->csum_offset = 16;
	return len;
}

int do_gen(const struct opts *o)
{
	static const unsigned char dst[ETH_ALEN] = { 2, 0, 0, 0, 0, 2 };
	static unsigned char frame[ETH_HLEN + 40 + GSO_PAYLOAD];
	struct virtio_net_hdr vh;
	struct iovec iovs[2];
	int one = 1;
	struct sockaddr_ll sll = { .sll_family = AF_PACKET,
				   .sll_protocol = htons(ETH_P_ALL) };
	struct mmsghdr msgs[64];
	uint64_t sent = 0, nobufs = 0;
	double t0, end;
	unsigned int len, i;
	int fd;

	enter_netns(o->netns);
	pin(o->cpu);
	len = o->gso ? gso_frame(frame, &vh, dst) : udp_frame(frame, o->size, dst);
	sll.sll_ifindex = if_nametoindex(o->dev);
	if (!sll.sll_ifindex)
		die("no link %s", o->dev);
	fd = socket(AF_PACKET, SOCK_RAW | SOCK_CLOEXEC, 0);
	if (fd < 0 || bind(fd, (struct sockaddr *)&sll, sizeof(sll)))
		die("AF_PACKET on %s: %s", o->dev, strerror(errno));
	if (o->gso && setsockopt(fd, SOL_PACKET, PACKET_VNET_HDR, &one,
				 sizeof(one)))
		die("PACKET_VNET_HDR: %s", strerror(errno));
	iovs[0] = (struct iovec){ &vh, sizeof(vh) };
	iovs[1] = (struct iovec){ frame, len };
	memset(msgs, 0, sizeof(msgs));
	for (i = 0; i < 64; i++) {
		msgs[i].msg_hdr.msg_iov = o->gso ? iovs : &iovs[1];
		msgs[i].msg_hdr.msg_iovlen = o->gso ? 2 : 1;
	}
	t0 = now_s();
	end = o->seconds > 0 ? t0 + o->seconds : 1e18;
	while (!stop && now_s() < end) {
		int n = sendmmsg(fd, msgs, 64, 0);

		if (n > 0)
			sent += n;
		else if (errno == ENOBUFS || errno == EAGAIN)
			nobufs++;
		else if (errno != EINTR)
			die("sendmmsg: %s", strerror(errno));
	}
	fprintf(stderr, "gen: %.0f frames/s sent (%llu ENOBUFS)\n",
		sent / (now_s() - t0), (unsigned long long)nobufs);
	return 0;
}

int do_spin(const struct opts *o)
{
	volatile unsigned long x = 0;
	double end;
	int i;

	pin(o->cpu);
	end = o->seconds > 0 ? now_s() + o->seconds : 1e18;
	while (!stop && now_s() < end)
		for (i = 0; i < 100000; i++)
			x++;
	return 0;
}

int do_rate(const struct opts *o)
{
	uint64_t c0, c1;
	double t0, t1, end, p0, p1;

	enter_netns(o->netns);
	c0 = link_counter(o->dev, o->counter);
	end = now_s() + o->wait;
	while (link_counter(o->dev, o->counter) == c0) {
		if (now_s() > end || stop)
			die("%s %s did not move in %.0f s", o->dev, o->counter,
			    o->wait);
		nap(0.01);
	}
	nap(o->warmup);
	p0 = proc_cpu(o->pid);
	c0 = link_counter(o->dev, o->counter);
	t0 = now_s();
	nap(o->seconds);
	c1 = link_counter(o->dev, o->counter);
	t1 = now_s();
	p1 = proc_cpu(o->pid);
	report(c1 - c0, t1 - t0, p0 >= 0 && p1 >= 0 ? p1 - p0 : -1);
	return 0;
}
