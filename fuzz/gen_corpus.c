// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * gen_corpus: writes the seed corpora of the fuzz targets (run by
 * fuzz/gen-corpus.sh): DIR/fuzz_<target>/seed-<name>.  Each seed is an
 * input in the target's own format (see the comment at the top of each
 * fuzz_*.c): a QEMU-like vhost-user session, well-formed rings, RX
 * sessions, classifier frames of every class, configuration files.
 */
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static uint8_t buf[1 << 16];
static size_t len;
static const char *dir;

static void put(const void *p, size_t n)
{
	if (len + n > sizeof(buf))
		exit(1);
	memcpy(buf + len, p, n);
	len += n;
}

static void u8(uint8_t v) { put(&v, 1); }
static void u16(uint16_t v) { put(&v, 2); }
static void u32(uint32_t v) { put(&v, 4); }
static void be16(uint16_t v) { u8(v >> 8); u8(v & 0xff); }

static void save(const char *target, const char *fmt, ...)
{
	char name[128], path[512];
	va_list ap;
	FILE *f;

	va_start(ap, fmt);
	vsnprintf(name, sizeof(name), fmt, ap);
	va_end(ap);
	snprintf(path, sizeof(path), "%s/%s", dir, target);
	mkdir(path, 0755);
	snprintf(path, sizeof(path), "%s/%s/seed-%s", dir, target, name);
	f = fopen(path, "wb");
	if (!f || fwrite(buf, 1, len, f) != len || fclose(f))
		exit(1);
	len = 0;
}

/* --- fuzz_vhost_user ------------------------------------------------ */

enum { FD_MEM = 0, FD_SHORT = 2, FD_EVENT = 3 | 8, FD_EVENT_BLOCK = 3,
       FD_PIPE_R = 4, FD_PIPE_W = 5, FD_NULL = 6, FD_SOCK = 7 };

/* a record: fds (memfds take a size byte: (n + 1) * 4 KiB), header, payload */
static void vu(uint32_t req, uint32_t flags, const void *p, uint32_t size,
	       int nfds, const uint8_t *kinds)
{
	int i;

	u8((uint8_t)nfds);
	for (i = 0; i < nfds; i++) {
		u8(kinds[i]);
		if (kinds[i] == FD_MEM)
			u8(255); /* 1 MiB */
		if (kinds[i] == FD_SHORT)
			u8(100);
	}
	u32(req);
	u32(flags ? flags : 1);
	u32(size);
	put(p, size);
}

static void vu_u64(uint32_t req, uint64_t v, int nfds, const uint8_t *kinds)
{
	vu(req, 1 | 8, &v, 8, nfds, kinds);
}

static void vu_state(uint32_t req, uint32_t index, uint32_t num)
{
	uint32_t s[2] = { index, num };

	vu(req, 0, s, 8, 0, NULL);
}

#define UVA 0x7f0000000000ULL

static void vu_ring(uint32_t index, uint8_t call_kind)
{
	uint64_t a[5] = { index, UVA + 0x10000 * (index + 1),
			  UVA + 0x10000 * (index + 1) + 0x2000,
			  UVA + 0x10000 * (index + 1) + 0x1000, 0 };
	uint8_t k;

	vu_state(8, index, 256);		/* SET_VRING_NUM */
	vu(9, 0, a, 40, 0, NULL);		/* SET_VRING_ADDR */
	vu_state(10, index, 0);			/* SET_VRING_BASE */
	k = FD_EVENT;
	vu_u64(12, index, 1, &k);		/* SET_VRING_KICK */
	vu_u64(13, index, 1, &call_kind);	/* SET_VRING_CALL */
	vu_u64(14, index | 0x100, 0, NULL);	/* SET_VRING_ERR, no fd */
	vu_state(18, index, 1);			/* SET_VRING_ENABLE */
}

static void vu_start(uint64_t features)
{
	vu(1, 0, NULL, 0, 0, NULL);		/* GET_FEATURES */
	vu(15, 0, NULL, 0, 0, NULL);		/* GET_PROTOCOL_FEATURES */
	vu_u64(16, 0x800b, 0, NULL);		/* MQ LOG_SHMFD REPLY_ACK SLOTS */
	vu(17, 0, NULL, 0, 0, NULL);		/* GET_QUEUE_NUM */
	vu(36, 0, NULL, 0, 0, NULL);		/* GET_MAX_MEM_SLOTS */
	vu(3, 0, NULL, 0, 0, NULL);		/* SET_OWNER */
	vu_u64(2, features, 0, NULL);		/* SET_FEATURES */
}

static void vu_add_reg(uint64_t gpa, uint64_t size, uint64_t uva, uint64_t off,
		       uint8_t kind)
{
	uint64_t r[5] = { 0, gpa, size, uva, off };

	vu(37, 0, r, 40, 1, &kind);
}

static void gen_vhost_user(void)
{
	const uint64_t f = (1ULL << 32) | (1ULL << 15) | (1ULL << 29) |
			   (1ULL << 30);
	uint8_t kinds[8] = { FD_MEM, FD_MEM };
	uint64_t table[1 + 2 * 4] = { 2, 0, 0x80000, UVA, 0,
				      0x100000, 0x80000, UVA + 0x100000, 0 };
	uint64_t log[2] = { 4096, 0 };
	uint8_t k;

	vu_start(f);
	vu_add_reg(0, 0x100000, UVA, 0, FD_MEM);
	vu_ring(0, FD_EVENT);
	vu_ring(1, FD_EVENT);
	vu_state(11, 0, 0);			/* GET_VRING_BASE */
	vu_state(11, 1, 0);
	save("fuzz_vhost_user", "qemu-add-mem-reg");

	vu_start(f);
	vu(5, 0, table, 8 + 2 * 32, 2, kinds);	/* SET_MEM_TABLE */
	vu_ring(0, FD_PIPE_R);
	vu_ring(1, FD_EVENT_BLOCK);
	k = FD_MEM;
	vu(6, 0, log, 16, 1, &k);		/* SET_LOG_BASE */
	vu_u64(2, f | (1ULL << 26), 0, NULL);	/* LOG_ALL */
	vu(5, 0, table, 8 + 32, 1, kinds);	/* a new table, rings running */
	vu_state(11, 0, 0);
	save("fuzz_vhost_user", "mem-table-log");

	vu_start(f);
	vu_add_reg(0, 0x100000, UVA, 0, FD_MEM);
	vu_add_reg(0, 0x100000, UVA, 0, FD_MEM); /* the same again: QEMU 7.2 */
	vu_add_reg(0x100000, 0x1000, UVA + 0x100000, 0, FD_SHORT);
	vu_ring(0, FD_PIPE_W);
	{
		uint64_t r[5] = { 0, 0, 0x100000, UVA, 0 };

		vu(38, 0, r, 40, 0, NULL);	/* REM_MEM_REG */
	}
	k = FD_NULL;
	vu_u64(13, 0, 1, &k);
	k = FD_SOCK;
	vu(7, 0, NULL, 0, 1, &k);		/* SET_LOG_FD */
	vu(4, 0, NULL, 0, 0, NULL);		/* RESET_OWNER */
	save("fuzz_vhost_user", "add-rem-reset");

	vu_start(f);
	vu(19, 0, "\x52\x54\x00\x12\x34\x56\x00\x00", 8, 0, NULL); /* RARP */
	vu(24, 1 | 8, NULL, 0, 0, NULL);	/* GET_CONFIG */
	vu(22, 0, NULL, 0, 0, NULL);		/* IOTLB */
	vu(99, 1 | 8, NULL, 0, 0, NULL);	/* unknown */
	kinds[2] = FD_EVENT;
	vu(1, 0, NULL, 0, 3, kinds);		/* fds where none belong */
	vu(1, 2, NULL, 0, 0, NULL);		/* bad version: connection ends */
	save("fuzz_vhost_user", "odd-requests");
}

/* --- fuzz_virtq --------------------------------------------------------- */

#define GPA 0x100000ULL

/* struct setup of fuzz_virtq.c */
static void vq_setup(uint8_t nregions, uint8_t layout, uint8_t log2, uint8_t feat)
{
	u8(nregions);
	u8(layout);
	u8(log2);
	u8(feat);
	u16(0);		/* desc */
	u16(0x1000);	/* avail */
	u16(0x2000);	/* used */
	u16(0);		/* base */
}

static void vq_init_write(uint8_t region, uint16_t off, const void *p, uint8_t n)
{
	u8(region);
	u8(n);
	u16(off);
	put(p, n);
}

/* the four writes before the ring starts: zero indices */
static void vq_init_zero(void)
{
	static const uint16_t zero;

	vq_init_write(0, 0x1000, &zero, 2);
	vq_init_write(0, 0x1002, &zero, 2);
	vq_init_write(0, 0x2000, &zero, 2);
	vq_init_write(0, 0x2002, &zero, 2);
}

static void vq_write(uint8_t region, uint16_t off, const void *p, uint8_t n)
{
	u8(0);	/* op: write */
	u8(region);
	u8(n);
	u16(off);
	put(p, n);
}

struct desc {
	uint64_t addr;
	uint32_t len;
	uint16_t flags, next;
};

static void vq_desc(unsigned int i, uint64_t addr, uint32_t l, uint16_t flags,
		    uint16_t next)
{
	struct desc d = { addr, l, flags, next };

	vq_write(0, (uint16_t)(i * 16), &d, 16);
}

static void vq_avail(unsigned int slot, uint16_t head, uint16_t idx)
{
	vq_write(0, (uint16_t)(0x1000 + 4 + 2 * slot), &head, 2);
	vq_write(0, 0x1002, &idx, 2);
}

static void vq_pops(int n)
{
	while (n--) {
		u8(1 | 0x08 | (7 << 5)); /* pop 8, push, notify */
		u16(1500);
	}
	u8(3);
	u8(4);
}

static void gen_virtq(void)
{
	unsigned int i;

	/* 16 single-descriptor chains, device-writable */
	vq_setup(0, 0, 4, 1);
	vq_init_zero();
	for (i = 0; i < 16; i++) {
		vq_desc(i, GPA + 0x4000 + i * 0x800, 0x800, 2, 0);
		vq_avail(i, (uint16_t)i, (uint16_t)(i + 1));
	}
	vq_pops(3);
	save("fuzz_virtq", "simple");

	/* chains of 3, readable then writable, across two adjacent regions */
	vq_setup(1, 0, 5, 0);
	vq_init_zero();
	for (i = 0; i < 30; i += 3) {
		vq_desc(i, GPA + 0x8000 + i * 64, 64, 1, (uint16_t)(i + 1));
		vq_desc(i + 1, GPA + 0xfff0, 0x40, 1 | 2, (uint16_t)(i + 2));
		vq_desc(i + 2, GPA + 0x10000 + i * 64, 128, 2, 0);
		vq_avail(i / 3, (uint16_t)i, (uint16_t)(i / 3 + 1));
	}
	vq_pops(2);
	save("fuzz_virtq", "chains-two-regions");

	/* indirect tables, event idx, dirty log of buffers and used ring */
	vq_setup(2, 4, 3, 1 | 2 | 8 | 16);
	vq_init_zero();
	for (i = 0; i < 8; i++) {
		struct desc t[4];
		unsigned int j;

		for (j = 0; j < 4; j++)
			t[j] = (struct desc){ GPA + 0x10000 + (i * 4 + j) * 256,
					      256, (uint16_t)(2 | (j < 3)),
					      (uint16_t)(j + 1) };
		vq_write(0, (uint16_t)(0x6000 + i * 64), t, sizeof(t));
		vq_desc(i, GPA + 0x6000 + i * 64, sizeof(t), 4, 0);
		vq_avail(i, (uint16_t)i, (uint16_t)(i + 1));
	}
	vq_pops(2);
	save("fuzz_virtq", "indirect-event-idx-log");

	/* a loop, a head out of range, an index jump */
	vq_setup(0, 0, 2, 0);
	vq_init_zero();
	vq_desc(0, GPA + 0x4000, 100, 1 | 2, 1);
	vq_desc(1, GPA + 0x5000, 100, 1 | 2, 0);
	vq_avail(0, 0, 1);
	vq_pops(1);
	vq_avail(1, 9, 2);
	vq_pops(1);
	save("fuzz_virtq", "loop");
}

/* --- fuzz_rx ------------------------------------------------------------ */

static void rx_setup(uint8_t flags, uint8_t log2, uint8_t frames, uint8_t usecs)
{
	u8(flags);
	u8(log2);
	u8(frames);
	u8(usecs);
}

/* op 0: post N chains of NSEG segments of LEN bytes */
static void rx_post(uint8_t n, uint8_t nseg, uint8_t flags, uint16_t l)
{
	uint8_t i, j;

	u8((uint8_t)(((n - 1) << 3) | 0));
	for (i = 0; i < n; i++) {
		u8((uint8_t)(nseg - 1));
		u8(flags);
		for (j = 0; j < nseg; j++)
			u16((uint16_t)(l - 1));
	}
}

/* op 2: N frames, with payloads of LEN (kind 1: long) */
static void rx_frames(uint8_t n, uint8_t kind, uint16_t l, unsigned int hdr)
{
	uint8_t i;
	unsigned int k;

	u8((uint8_t)(((n - 1) << 3) | 2));
	for (i = 0; i < n; i++) {
		u8(kind);
		u8(i);
		u16(l);
		for (k = 0; k < hdr; k++)
			u8(0);
	}
}

static void rx_run(void)
{
	u8(3);
}

static void gen_rx(void)
{
	/* no MRG_RXBUF: one 2 KiB chain a frame, some too big */
	rx_setup(0, 2, 0, 0);
	rx_post(16, 1, 0, 2048);
	rx_frames(8, 0, 1000, 10);
	rx_run();
	rx_frames(4, 1, 3000, 10);
	rx_run();
	save("fuzz_rx", "plain");

	/* MRG_RXBUF: frames over several 1 KiB buffers, then starving */
	rx_setup(1 | 4, 3, 0, 0);
	rx_post(8, 1, 0, 1024);
	rx_frames(6, 0, 1400, 12);
	rx_run();
	rx_post(16, 2, 0, 512);
	rx_run();
	rx_frames(2, 1, 9000, 12);
	rx_run();
	save("fuzz_rx", "mergeable");

	/* indirect chains, a readable first segment, coalescing */
	rx_setup(1 | 8 | 16, 4, 4, 50);
	rx_post(8, 4, 1 | 4, 400);
	rx_frames(8, 0, 600, 12);
	rx_run();
	rx_post(4, 3, 8, 700);
	rx_frames(4, 0, 100, 12);
	rx_run();
	save("fuzz_rx", "indirect-coalesce");

	/* 12-byte header without MRG_RXBUF, GSO-sized frames into 64 KiB */
	rx_setup(2, 1, 0, 0);
	rx_post(4, 1, 2, 65535);
	rx_frames(3, 1, 60000, 12);
	rx_run();
	save("fuzz_rx", "gso");
}

/* --- fuzz_classify ------------------------------------------------------ */

static void eth(uint16_t proto, int tags)
{
	int i;

	put("\x02\x00\x00\x00\x00\x02\x02\x00\x00\x00\x00\x01", 12);
	for (i = 0; i < tags; i++) {
		be16(i == 0 && tags == 2 ? 0x88a8 : 0x8100);
		be16(100 + i);
	}
	be16(proto);
}

static void ipv4(uint8_t proto, uint16_t l4, int opt_words, uint16_t frag)
{
	int i;

	u8((uint8_t)(0x40 | (5 + opt_words)));
	u8(0);
	be16((uint16_t)(20 + 4 * opt_words + l4));
	be16(1);
	be16(frag);
	u8(64);
	u8(proto);
	be16(0);
	put("\x0a\x00\x00\x01\x0a\x00\x00\x02", 8);
	for (i = 0; i < opt_words; i++)
		put("\x01\x01\x01\x01", 4);
}

static void ipv6(uint8_t nh, uint16_t plen)
{
	put("\x60\x00\x00\x00", 4);
	be16(plen);
	u8(nh);
	u8(64);
	for (int i = 0; i < 32; i++)
		u8((uint8_t)(i == 15 || i == 31));
}

static void tcp(uint8_t flags, int opt_words, uint16_t payload)
{
	be16(40000);
	be16(5201);
	put("\x00\x00\x00\x01\x00\x00\x00\x01", 8);
	u8((uint8_t)((5 + opt_words) << 4));
	u8(flags);
	be16(65535);
	be16(0);
	be16(0);
	for (int i = 0; i < opt_words; i++)
		put("\x01\x01\x01\x01", 4);
	for (int i = 0; i < payload; i++)
		u8((uint8_t)i);
}

static void udp(uint16_t payload)
{
	be16(5353);
	be16(5353);
	be16((uint16_t)(8 + payload));
	be16(0);
	for (int i = 0; i < payload; i++)
		u8(0);
}

static void gen_classify(void)
{
	static const struct { const char *name; uint8_t flags; uint16_t pl; } t[] = {
		{ "urgent", 0x10, 100 }, { "push", 0x18, 100 },
		{ "ack", 0x10, 0 }, { "syn", 0x02, 0 },
	};
	unsigned int i, tags;

	for (tags = 0; tags <= 3; tags++) {
		for (i = 0; i < 4; i++) {
			eth(0x0800, (int)tags);
			ipv4(6, (uint16_t)(20 + t[i].pl), 0, 0);
			tcp(t[i].flags, 0, t[i].pl);
			save("fuzz_classify", "v4-%s-vlan%u", t[i].name, tags);
			eth(0x86dd, (int)tags);
			ipv6(6, (uint16_t)(20 + t[i].pl));
			tcp(t[i].flags, 0, t[i].pl);
			save("fuzz_classify", "v6-%s-vlan%u", t[i].name, tags);
		}
	}
	eth(0x0800, 0);
	ipv4(6, 20 + 12 + 50, 10, 0);
	tcp(0x18, 3, 50);
	save("fuzz_classify", "v4-options-push");
	eth(0x0800, 0);
	ipv4(6, 100, 0, 0x2000);	/* first fragment, more follow */
	tcp(0x10, 0, 80);
	save("fuzz_classify", "v4-first-fragment");
	eth(0x0800, 0);
	ipv4(6, 100, 0, 0x0010);	/* a later fragment */
	for (i = 0; i < 100; i++)
		u8(0);
	save("fuzz_classify", "v4-later-fragment");
	eth(0x0800, 0);
	ipv4(17, 8 + 30, 0, 0);
	udp(30);
	save("fuzz_classify", "v4-udp");
	eth(0x0800, 0);
	ipv4(1, 8, 0, 0);
	put("\x08\x00\x00\x00\x00\x01\x00\x01", 8);
	save("fuzz_classify", "v4-icmp");
	eth(0x0806, 0);
	for (i = 0; i < 28; i++)
		u8((uint8_t)i);
	save("fuzz_classify", "arp");
	eth(0x0806, 0);
	for (i = 0; i < 20; i++)
		u8(0);
	save("fuzz_classify", "arp-short");

	/* IPv6 extension header chains: hop-by-hop, routing, dstopts, AH, fragment */
	{
		static const uint8_t chain[] = { 0, 43, 60, 51, 44 };
		unsigned int n;

		for (n = 1; n <= 9; n++) {
			uint16_t ext = 0;

			for (i = 0; i < n; i++)
				ext += chain[i % 5] == 51 ? 16 : 8;
			eth(0x86dd, 0);
			ipv6(chain[0], (uint16_t)(ext + 20 + 10));
			for (i = 0; i < n; i++) {
				uint8_t nh = i + 1 < n ? chain[(i + 1) % 5] : 6;
				uint8_t c = chain[i % 5];

				u8(nh);
				u8(c == 51 ? 2 : 0);
				if (c == 44) {
					be16(0); /* offset 0, first fragment */
					u32(1);
				} else {
					for (int k = 0; k < (c == 51 ? 14 : 6); k++)
						u8(0);
				}
			}
			tcp(0x10, 0, 10);
			save("fuzz_classify", "v6-ext-%u", n);
		}
		eth(0x86dd, 0);
		ipv6(44, 8 + 40);
		u8(6);
		u8(0);
		be16(0x0100); /* a later fragment */
		u32(7);
		for (i = 0; i < 40; i++)
			u8(0);
		save("fuzz_classify", "v6-later-fragment");
		eth(0x86dd, 0);
		ipv6(0, 8 + 2000);
		u8(6);
		u8(249); /* 2000 bytes of hop-by-hop */
		for (i = 0; i < 1998; i++)
			u8(0);
		tcp(0x18, 0, 0);
		save("fuzz_classify", "v6-hopopts-2k");
	}
	eth(0x88cc, 0);	/* LLDP: other */
	for (i = 0; i < 40; i++)
		u8(0);
	save("fuzz_classify", "lldp");
	eth(0x0800, 0);
	ipv4(6, 10, 0, 0); /* TCP shorter than its header */
	tcp(0x10, 0, 0);
	save("fuzz_classify", "v4-tcp-short");
}

/* --- fuzz_config -------------------------------------------------------- */

static void text(const char *target, const char *name, const char *s)
{
	put(s, strlen(s));
	save(target, "%s", name);
}

static void gen_config(void)
{
	text("fuzz_config", "one", "socket=/run/vnetd/vm0.sock tap=vnet0\n");
	text("fuzz_config", "two-ports",
	     "# two VMs\n"
	     "socket=/run/vm0.sock tap=vm0 queues=4 cpus=0-3\n"
	     "\n"
	     "socket=/run/vm1.sock\ttap=vm1 queues=2 client netns=blue # ns\n");
	text("fuzz_config", "client-values",
	     "socket=/s0 tap=t0 client=1\nsocket=/s1 tap=t1 client=off\n"
	     "socket=/s2 tap=t2 client=on cpus=0:2:4\r\n");
	text("fuzz_config", "errors",
	     "socket=/s0 tap=t0 queues=17\nsocket= tap=t/0\nfoo=bar\n"
	     "socket=/s1 cpus=3-1\nqueues=+1 tap=.. socket=/x\n");
	text("fuzz_config", "cpus-long",
	     "socket=/s0 tap=t0 cpus=0-63\nsocket=/s1 tap=t1 cpus=0-64\n"
	     "socket=/s2 tap=t2 cpus=1,1,1,1,1023\n");
	text("fuzz_config", "comments-only", "# nothing\n   \n\t# more\n");
	text("fuzz_config", "port-spec",
	     "socket=/s0,tap=t0,queues=2,client,netns=red,cpus=0:1\n"
	     "socket=/s1 tap=t1\n");
}

int main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: gen_corpus DIR\n");
		return 2;
	}
	dir = argv[1];
	mkdir(dir, 0755);
	gen_vhost_user();
	gen_virtq();
	gen_rx();
	gen_classify();
	gen_config();
	return 0;
}
