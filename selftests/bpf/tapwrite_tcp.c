// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* tapwrite: the tcp command, a minimal guest TCP peer (see tapwrite.c) */
#include "tapwrite.h"

/* --- tcp ----------------------------------------------------------------- */

struct counts {
	unsigned long frames, bytes, cls[C_MAX];
	unsigned long psh, no_psh, payload, no_payload;
};

struct tcp_state {
	int queue;
	uint16_t port, gport;
	long want;       /* bytes the host writes */
	long written;    /* ... written so far */
	long received;   /* bytes received in order */
	uint32_t iss, snd_nxt, rcv_nxt;
	bool established, fin_rcvd, fin_sent, fin_acked, shut, reset;
	int lfd, cfd;
	uint8_t hmac[ETH_ALEN];
	struct counts rx[MAX_QUEUES], tx[MAX_QUEUES];
	unsigned long syn_sent, dup_acks, ooo;
};

static void count_frame(struct counts *c, const uint8_t *p, size_t len,
			bool gso);

static int tcp_send(struct tcp_state *t, uint8_t flags, bool mss)
{
	struct tcp_seg s = {
		.sport = t->gport, .dport = t->port, .seq = t->snd_nxt,
		.ack = (flags & TCPF_ACK) ? t->rcv_nxt : 0,
		.flags = flags, .win = 65535, .mss_opt = mss,
	};
	int err;

	memset(txf.buf, 0, VNET_HDR_LEN);
	build_tcp(&txf, t->hmac, &s);
	err = write_frame(t->queue, &txf);
	if (!err)
		count_frame(&t->tx[t->queue], frame_data(&txf), txf.len, false);
	return err;
}

static void arp_reply(struct tcp_state *t, const uint8_t *req)
{
	uint8_t *eth = frame_data(&txf), *arp = eth + ETH_LEN;

	memset(txf.buf, 0, VNET_HDR_LEN + ETH_LEN + 28);
	memcpy(eth, req + ETH_ALEN, ETH_ALEN);
	memcpy(eth + ETH_ALEN, guest_mac, ETH_ALEN);
	frame_put16(eth, 12, ETH_P_ARP);
	frame_put16(arp, 0, 1);
	frame_put16(arp, 2, ETH_P_IP);
	arp[4] = 6;
	arp[5] = 4;
	frame_put16(arp, 6, 2); /* reply */
	memcpy(arp + 8, guest_mac, ETH_ALEN);
	frame_put32(arp, 14, GUEST_IP);
	memcpy(arp + 18, req + ETH_LEN + 8, ETH_ALEN); /* sender hw */
	memcpy(arp + 24, req + ETH_LEN + 14, 4);      /* sender ip */
	txf.len = ETH_LEN + 28;
	if (!write_frame(t->queue, &txf))
		count_frame(&t->tx[t->queue], eth, txf.len, false);
}

/*
 * The class vnet gives a frame (see bpf/parse.h), for the frames this test
 * produces: IPv4/IPv6 (no extension headers) TCP, UDP, ARP, anything else.
 */
static int classify(const uint8_t *p, size_t len, uint8_t *tcp_flags)
{
	uint32_t ihl, tot, doff, l4_len, off = ETH_LEN;
	uint16_t proto;
	const uint8_t *l4;
	uint8_t l4proto;

	*tcp_flags = 0;
	if (len < ETH_LEN)
		return C_MALFORMED;
	proto = frame_get16(p, 12);
	if (proto == ETH_P_ARP)
		return len - off < 28 ? C_MALFORMED : C_OTHER;
	if (proto == ETH_P_IP) {
		if (len < off + IP_LEN || p[off] >> 4 != 4)
			return C_MALFORMED;
		ihl = (p[off] & 0xf) * 4;
		tot = frame_get16(p + off, 2);
		if (ihl < IP_LEN || tot < ihl || tot > len - off)
			return C_MALFORMED;
		if (frame_get16(p + off, 6) & 0x1fff)
			return C_OTHER;
		l4proto = p[off + 9];
		l4 = p + off + ihl;
		l4_len = tot - ihl;
	} else if (proto == ETH_P_IPV6) {
		if (len < off + 40 || p[off] >> 4 != 6)
			return C_MALFORMED;
		l4_len = frame_get16(p + off, 4);
		if (l4_len > len - off - 40)
			return C_MALFORMED;
		l4proto = p[off + 6];
		l4 = p + off + 40;
	} else {
		return C_OTHER;
	}
	if (l4proto != IPPROTO_TCP)
		return (l4proto == IPPROTO_UDP && l4_len < UDP_LEN) ?
			       C_MALFORMED : C_OTHER;
	if (l4_len < TCP_LEN)
		return C_MALFORMED;
	doff = (l4[12] >> 4) * 4;
	if (doff < TCP_LEN || doff > l4_len)
		return C_MALFORMED;
	*tcp_flags = l4[13];
	if (l4_len == doff)
		return C_ACK;
	return (l4[13] & TCPF_PSH) ? C_PUSH : C_URGENT;
}

static void count_frame(struct counts *c, const uint8_t *p, size_t len,
			bool gso)
{
	uint8_t flags;
	int k = classify(p, len, &flags);

	c->frames++;
	c->bytes += len;
	c->cls[k]++;
	if (gso)
		c->cls[C_GSO]++;
	if (k == C_URGENT || k == C_PUSH || k == C_ACK) {
		if (flags & TCPF_PSH)
			c->psh++;
		else
			c->no_psh++;
		if (k == C_ACK)
			c->no_payload++;
		else
			c->payload++;
	}
}

/* One frame the host sent to the guest through queue q. */
static int tcp_input(struct tcp_state *t, int q, const uint8_t *buf,
		     size_t n)
{
	const struct virtio_net_hdr *vh = (const void *)buf;
	const uint8_t *p = buf + VNET_HDR_LEN, *ip, *th;
	size_t len = n - VNET_HDR_LEN;
	uint32_t ihl, tot, doff, seq, ack, plen;
	uint8_t flags;

	count_frame(&t->rx[q], p, len, vh->gso_type != VIRTIO_NET_HDR_GSO_NONE);

	if (len >= ETH_LEN + 28 && frame_get16(p, 12) == ETH_P_ARP &&
	    frame_get16(p + ETH_LEN, 6) == 1 &&
	    frame_get32(p + ETH_LEN, 24) == GUEST_IP) {
		arp_reply(t, p);
		return 0;
	}
	if (len < ETH_LEN + IP_LEN + TCP_LEN || frame_get16(p, 12) != ETH_P_IP)
		return 0;
	ip = p + ETH_LEN;
	ihl = (ip[0] & 0xf) * 4;
	tot = frame_get16(ip, 2);
	if (ip[9] != IPPROTO_TCP || frame_get32(ip, 16) != GUEST_IP ||
	    tot > len - ETH_LEN || ihl + TCP_LEN > tot)
		return 0;
	th = ip + ihl;
	if (frame_get16(th, 0) != t->port || frame_get16(th, 2) != t->gport)
		return 0;
	doff = (th[12] >> 4) * 4;
	if (doff < TCP_LEN || ihl + doff > tot)
		return 0;
	seq = frame_get32(th, 4);
	ack = frame_get32(th, 8);
	flags = th[13];
	plen = tot - ihl - doff;

	if (flags & TCPF_RST) {
		t->reset = true;
		return -ECONNRESET;
	}
	if (flags & TCPF_SYN) {
		if (!(flags & TCPF_ACK) || ack != t->iss + 1)
			return 0;
		if (!t->established) {
			t->established = true;
			t->rcv_nxt = seq + 1;
			t->snd_nxt = t->iss + 1;
		}
		return tcp_send(t, TCPF_ACK, false); /* (re)ACK the SYN-ACK */
	}
	if (!t->established)
		return 0;
	if ((flags & TCPF_ACK) && t->fin_sent && ack == t->snd_nxt)
		t->fin_acked = true;
	if (!plen && !(flags & TCPF_FIN))
		return 0; /* a pure ACK: nothing to acknowledge */
	if (seq == t->rcv_nxt) {
		t->rcv_nxt += plen;
		t->received += plen;
		if (flags & TCPF_FIN) {
			t->rcv_nxt++;
			t->fin_rcvd = true;
		}
	} else {
		t->ooo++;
		t->dup_acks++;
	}
	if (t->fin_rcvd && !t->fin_sent) {
		t->fin_sent = true;
		if (tcp_send(t, TCPF_FIN | TCPF_ACK, false))
			return -EIO;
		t->snd_nxt++; /* the FIN takes one sequence number */
		return 0;
	}
	return tcp_send(t, TCPF_ACK, false);
}

static uint8_t rxbuf[RX_BUF];

/* Read every frame waiting on every queue; returns frames read or -errno. */
static int tcp_drain(struct tcp_state *t)
{
	int q, n = 0, err;
	ssize_t r;

	for (q = 0; q < nq; q++) {
		for (;;) {
			r = read(fds[q], rxbuf, sizeof(rxbuf));
			if (r < 0) {
				if (errno == EAGAIN || errno == EINTR)
					break;
				fprintf(stderr, "%s: read queue %d: %s\n",
					prog, q, strerror(errno));
				return -errno;
			}
			if (r < VNET_HDR_LEN + ETH_LEN)
				continue;
			n++;
			err = tcp_input(t, q, rxbuf, r);
			if (err)
				return err;
		}
	}
	return n;
}

static void host_io(struct tcp_state *t)
{
	static char chunk[16384];
	ssize_t w;
	long left;

	if (t->cfd < 0) {
		t->cfd = accept4(t->lfd, NULL, NULL,
				 SOCK_NONBLOCK | SOCK_CLOEXEC);
		if (t->cfd < 0)
			return;
		memset(chunk, 'h', sizeof(chunk));
	}
	while (t->written < t->want) {
		left = t->want - t->written;
		/*
		 * MSG_MORE on all but the last chunk: the host's TCP then
		 * marks PSH on some segments only, so both urgent and push
		 * frames go to the guest.
		 */
		w = send(t->cfd, chunk,
			 left < (long)sizeof(chunk) ? (size_t)left :
						      sizeof(chunk),
			 left > (long)sizeof(chunk) ? MSG_MORE : 0);
		if (w <= 0)
			break;
		t->written += w;
	}
	if (t->written == t->want && !t->shut) {
		shutdown(t->cfd, SHUT_WR);
		t->shut = true;
	}
}

static void poll_queues(struct pollfd *pfd)
{
	int i;

	for (i = 0; i < nq; i++)
		pfd[i] = (struct pollfd){ .fd = fds[i], .events = POLLIN };
}

static void print_counts(const char *name, struct counts *c)
{
	int q;

	printf("\"%s\":[", name);
	for (q = 0; q < nq; q++) {
		printf("%s{\"queue\":%d,\"frames\":%lu,\"bytes\":%lu",
		       q ? "," : "", q, c[q].frames, c[q].bytes);
		printf(",\"urgent\":%lu,\"push\":%lu,\"ack\":%lu,\"other\":%lu,"
		       "\"malformed\":%lu,\"gso\":%lu",
		       c[q].cls[C_URGENT], c[q].cls[C_PUSH], c[q].cls[C_ACK],
		       c[q].cls[C_OTHER], c[q].cls[C_MALFORMED],
		       c[q].cls[C_GSO]);
		printf(",\"psh\":%lu,\"no_psh\":%lu,\"payload\":%lu,"
		       "\"no_payload\":%lu}",
		       c[q].psh, c[q].no_psh, c[q].payload, c[q].no_payload);
	}
	printf("]");
}

int cmd_tcp(int queue, int port, long bytes)
{
	static struct tcp_state t;
	struct sockaddr_in sa = {
		.sin_family = AF_INET,
		.sin_port = htons(port),
		.sin_addr.s_addr = htonl(HOST_IP),
	};
	struct pollfd pfd[MAX_QUEUES + 2];
	double start = now_s(), syn_at = 0, done_at = 0, end;
	const char *error = NULL;
	int one = 1, n, err = 0;

	t.queue = queue;
	t.port = port;
	t.gport = 40000 + (getpid() % 20000);
	t.want = bytes;
	t.iss = 0x10000000u + (uint32_t)getpid() * 7919u;
	t.snd_nxt = t.iss;
	t.cfd = -1;
	host_mac(t.hmac);

	t.lfd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (t.lfd < 0)
		die("socket: %s", strerror(errno));
	setsockopt(t.lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(t.lfd, (struct sockaddr *)&sa, sizeof(sa)))
		die("bind 192.0.2.1:%d: %s (is 192.0.2.1/24 on %s?)", port,
		    strerror(errno), dev);
	if (listen(t.lfd, 4))
		die("listen: %s", strerror(errno));

	end = start + deadline_s;
	for (;;) {
		double now = now_s();

		if (now > end) {
			error = "timed out";
			break;
		}
		if (!t.established && now - syn_at > 1.0) {
			if (t.syn_sent >= 5) {
				error = "no SYN-ACK";
				break;
			}
			t.snd_nxt = t.iss;
			if (tcp_send(&t, TCPF_SYN, true)) {
				error = "cannot write the SYN";
				break;
			}
			t.syn_sent++;
			syn_at = now;
		}
		if (t.fin_sent && !done_at)
			done_at = now;
		/* after our FIN: wait for its ACK, at most 1 s */
		if (done_at && (t.fin_acked || now - done_at > 1.0))
			break;

		poll_queues(pfd);
		pfd[nq] = (struct pollfd){ .fd = t.lfd, .events = POLLIN };
		pfd[nq + 1] = (struct pollfd){
			.fd = t.cfd,
			.events = (t.cfd >= 0 && !t.shut) ? POLLOUT : 0,
		};
		n = poll(pfd, nq + 2, 50);
		if (n < 0 && errno != EINTR)
			die("poll: %s", strerror(errno));
		err = tcp_drain(&t);
		if (err < 0) {
			error = t.reset ? "connection reset by the host" :
					  "tap read/write failed";
			break;
		}
		host_io(&t);
	}

	/* drain late frames for 200 ms so that every frame is counted */
	end = now_s() + 0.2;
	while (!t.reset && now_s() < end) {
		poll_queues(pfd);
		poll(pfd, nq, 20);
		if (tcp_drain(&t) < 0)
			break;
	}

	if (!error && t.received != t.want)
		error = "short transfer";
	printf("{\"mode\":\"tcp\",\"dev\":\"%s\",\"queues\":%d,\"queue\":%d,"
	       "\"port\":%d,\"bytes_requested\":%ld,\"bytes_written\":%ld,"
	       "\"bytes_received\":%ld,\"established\":%s,\"fin_acked\":%s,"
	       "\"syn_sent\":%lu,\"out_of_order\":%lu,\"seconds\":%.3f,"
	       "\"complete\":%s,\"error\":",
	       dev, nq, queue, port, t.want, t.written, t.received,
	       t.established ? "true" : "false",
	       t.fin_acked ? "true" : "false", t.syn_sent, t.ooo,
	       now_s() - start, error ? "false" : "true");
	if (error)
		printf("\"%s\",", error);
	else
		printf("null,");
	print_counts("rx", t.rx);
	printf(",");
	print_counts("tx", t.tx);
	printf("}\n");
	if (t.cfd >= 0)
		close(t.cfd);
	close(t.lfd);
	return error ? 1 : 0;
}
