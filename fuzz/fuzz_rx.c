// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * fuzz_rx: guest RX delivery (user/vnetd/datapath/rx.c, rx_inplace.c) with a
 * byte-accounting oracle.
 *
 * vnetd's own code runs: the queue pair as qp.c sets it up, the queue
 * thread's vnetd_qp_run() with qthread.c, rx.c, rx_inplace.c, coal.c and
 * tapio.c as linked into vnetd.  The tap is
 * the one thing replaced: the queue pair's tap fd is one end of a
 * SOCK_SEQPACKET socket pair, which tapio.c reads with its plain read()
 * path exactly as it reads a tap queue
 * (one frame per read); the harness writes frames, each a virtio-net
 * header and an Ethernet frame, into the other end.  Guest memory is a
 * memfd region mapped by the library; the harness plays the guest driver:
 * it posts receive chains (direct or indirect, 1 to 80 segments, some
 * readable or empty) and takes used entries back, freeing descriptors.
 *
 * Input: a header (struct setup), then operations: post chains, send
 * frames, run RX, let the guest scribble over its descriptor table and
 * avail ring (after which only the counting oracles hold).
 *
 * Oracles:
 *  - frames: every frame read from the "tap" is delivered, counted as a
 *    drop (tap, too big) or still pending: sent = frames + drops +
 *    pending + unread;
 *  - bytes: the used lengths the guest saw add up to bytes counted plus
 *    one header per frame, and (guest well-behaved) the frames the guest
 *    can parse from its used ring are as many as counted;
 *  - content (guest well-behaved): every frame reassembled from the used
 *    ring (num_buffers buffers with MRG_RXBUF) is a frame that was sent,
 *    byte for byte, in order, with num_buffers right.
 */
#include <endian.h>
#include <errno.h>
#include <fcntl.h>
#include <unistd.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/timerfd.h>
#include <linux/virtio_config.h>
#include <linux/virtio_net.h>
#include <linux/virtio_ring.h>

#include "fuzz.h"
#include "datapath/qp.h"
#include "datapath/rx.h"

#define MEM_SIZE (2u << 20)
#define GPA_BASE 0x100000ULL
#define UVA_BASE 0x7f0000000000ULL
#define DESC_OFF 0x0
#define AVAIL_OFF 0x1000
#define USED_OFF 0x2000
#define BUF_OFF 0x4000
#define MAX_NUM 256
#define MAX_SEGS 80
#define SENT_MAX (8u << 20)
#define MAX_FRAMES 4096

struct setup {
	uint8_t flags;	  /* 0 MRG_RXBUF, 1 12-byte header, 2 EVENT_IDX, 3 INDIRECT_DESC, 4 coalesce,
			     5-6 reads: in place from the default mean, always, never, from 64 B,
			     7 start with mergeable big reads */
	uint8_t log2_num; /* ring size 2^(4 + n % 5) */
	uint8_t rx_frames, rx_usecs;
} __attribute__((packed));

struct seg {
	uint64_t gpa;
	uint32_t len;
	bool write;
};

struct chain {
	bool live;
	uint16_t ndesc;
	uint16_t desc[MAX_SEGS]; /* ring descriptors it holds */
	uint16_t nsegs;
	struct seg segs[MAX_SEGS];
};

static int sv[2] = { -1, -1 }, call_fd = -1, memfd = -1;
static uint8_t *guest;
static struct vnetd_qp qps[1];
static struct vnet_dp_stats st;
static struct vnet_config cfg;
static struct vnet_queue_state qs;

/* the guest driver's state, per input */
static struct {
	uint16_t num, avail_idx, used_seen;
	bool free_desc[MAX_NUM];
	struct chain chains[MAX_NUM];
	uint32_t buf_top;	/* bump allocator in the buffer area */
	bool tampered;		/* the guest wrote garbage: content unchecked */
	bool used_clobbered;	/* ... and the device a frame over the used ring */
	/* frames sent, in order */
	uint32_t nsent;
	uint32_t sent_off[MAX_FRAMES], sent_len[MAX_FRAMES];
	uint32_t sent_top;
	/* frames seen in the used ring */
	uint64_t frames_seen, used_bytes;
	int64_t last_seq;
	/* the frame being reassembled */
	uint32_t cur_len, cur_bufs, cur_nb; /* nb 0: not known yet */
	bool in_frame;
	/*
	 * A chain of more than VHOST_VQ_MAX_IOV segments was used: a known
	 * issue of mergeable RX (such a chain inside a frame is counted but
	 * receives nothing); the oracles still trip, and say so.
	 */
	bool long_chain;
} g;


static uint8_t sent[SENT_MAX];
static uint8_t cur[VNETD_RX_SLOT + 64 * 1024];
static bool debug; /* FUZZ_DEBUG=1: the used entries on stderr */
/*
 * FUZZ_RX_MAX_SEGS: segments per chain, at most (default and maximum
 * MAX_SEGS).  64 keeps a campaign off the known issue of longer chains
 * (fuzz_known below) without turning its oracle off.
 */
static unsigned int max_segs = MAX_SEGS;

/*
 * The frames' bytes: pattern[j] = 31 j (mod 256), and seed + 31 i =
 * 31 (i + k) with k = 223 seed, 223 being 31's inverse mod 256.
 */
#define FRAME_MAX (sizeof(struct virtio_net_hdr_mrg_rxbuf) + 4 + 0xffff)
static uint8_t pattern[FRAME_MAX + 256];

static void pattern_init(void)
{
	size_t j;

	for (j = 0; j < sizeof(pattern); j++)
		pattern[j] = (uint8_t)(j * 31);
}

static inline unsigned int pattern_at(uint8_t seed)
{
	return (seed * 223u) & 0xff;
}

static void log_quiet(enum vhost_log_level level, const char *msg, void *o)
{
	(void)level;
	(void)msg;
	(void)o;
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	const struct vnetd_qps_cfg qc = { .name = "fuzz", .tap = "fuzz0" };
	struct vnetd_qp *qp = &qps[0];
	int big = 32 << 20;

	(void)argc;
	(void)argv;
	vhost_log_set_level(VHOST_LOG_DEBUG);
	pattern_init();
	debug = getenv("FUZZ_DEBUG");
	if (getenv("FUZZ_RX_MAX_SEGS")) {
		max_segs = (unsigned int)atoi(getenv("FUZZ_RX_MAX_SEGS"));
		if (!max_segs || max_segs > MAX_SEGS)
			max_segs = MAX_SEGS;
	}
	if (!debug)
		vhost_log_set_fn(log_quiet, NULL);
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_NONBLOCK | SOCK_CLOEXEC,
		       0, sv))
		abort();
	/* room for a whole input's frames (root may exceed wmem_max) */
	if (setsockopt(sv[1], SOL_SOCKET, SO_SNDBUFFORCE, &big, sizeof(big)))
		setsockopt(sv[1], SOL_SOCKET, SO_SNDBUF, &big, sizeof(big));
	memfd = memfd_create("vnetfuzz-rx", MFD_CLOEXEC);
	if (memfd < 0 || ftruncate(memfd, MEM_SIZE))
		abort();
	guest = mmap(NULL, MEM_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED, memfd,
		     0);
	call_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (guest == MAP_FAILED || call_fd < 0)
		abort();

	/* the queue pair as the daemon sets it up, minus the thread */
	if (vnetd_qps_init(qps, 1, &qc))
		abort();
	qp->io.fd = sv[0];
	qp->rx.r.st = qp->tx.r.st = &st;
	qp->rx.r.cfg = qp->tx.r.cfg = &cfg;
	qp->rx.r.cfg_frames = &cfg.rx_frames;
	qp->rx.r.cfg_usecs = &cfg.rx_usecs;
	qp->rx.r.qs = qp->tx.r.qs = &qs;
	return 0;
}

static inline uint8_t *gpa_ptr(uint64_t gpa)
{
	return guest + (gpa - GPA_BASE);
}

/* A buffer of LEN bytes in the buffer area (0: full). */
static uint64_t buf_alloc(uint32_t len, uint32_t align)
{
	uint32_t at = (g.buf_top + align - 1) & ~(align - 1);

	if (at > MEM_SIZE - BUF_OFF || len > MEM_SIZE - BUF_OFF - at)
		return 0;
	g.buf_top = at + len;
	return GPA_BASE + BUF_OFF + at;
}

static void desc_write(struct vring_desc *d, uint64_t addr, uint32_t len,
		       uint16_t flags, uint16_t next)
{
	d->addr = htole64(addr);
	d->len = htole32(len);
	d->flags = htole16(flags);
	d->next = htole16(next);
}

/* The guest posts one receive chain; false when it cannot. */
static bool post_chain(struct fuzz_in *in)
{
	struct vring_desc *ring = (struct vring_desc *)gpa_ptr(GPA_BASE + DESC_OFF);
	struct vring_avail *avail = (struct vring_avail *)gpa_ptr(GPA_BASE + AVAIL_OFF);
	uint8_t nseg = 1 + fuzz_u8(in) % max_segs, flags = fuzz_u8(in);
	bool indirect = (flags & 1) && nseg <= g.num;
	uint16_t head = 0, i, need = indirect ? 1 : nseg, got = 0;
	uint16_t ids[MAX_SEGS];
	struct vring_desc *table = ring;
	uint64_t table_gpa = 0;
	struct chain *c;

	for (i = 0; i < g.num && got < need; i++)
		if (g.free_desc[i])
			ids[got++] = i;
	if (got < need)
		return false;
	if (indirect) {
		table_gpa = buf_alloc(nseg * sizeof(struct vring_desc), 16);
		if (!table_gpa)
			return false;
		table = (struct vring_desc *)gpa_ptr(table_gpa);
	}
	head = ids[0];
	c = &g.chains[head];
	memset(c, 0, sizeof(*c));
	c->ndesc = need;
	for (i = 0; i < need; i++) {
		c->desc[i] = ids[i];
		g.free_desc[ids[i]] = false;
	}
	for (i = 0; i < nseg; i++) {
		uint16_t v = fuzz_u16(in);
		/* mostly small buffers, some of 64 KiB, a few empty or readable */
		uint32_t len = flags & 2 ? v : 1 + v % 2048;
		bool write = !((flags & 4) && i == 0);
		uint16_t dflags = write ? VRING_DESC_F_WRITE : 0;
		uint64_t gpa;

		if ((flags & 8) && i == nseg / 2)
			len = 0;
		gpa = buf_alloc(len ? len : 1, 1);
		if (!gpa) {
			len = 0;
			gpa = GPA_BASE + BUF_OFF;
		}
		c->segs[c->nsegs++] = (struct seg){ gpa, len, write };
		if (i + 1 < nseg)
			dflags |= VRING_DESC_F_NEXT;
		if (indirect)
			desc_write(&table[i], gpa, len, dflags, i + 1);
		else
			desc_write(&ring[ids[i]], gpa, len, dflags,
				   i + 1 < nseg ? ids[i + 1] : 0);
	}
	if (indirect)
		desc_write(&ring[head], table_gpa,
			   nseg * sizeof(struct vring_desc),
			   VRING_DESC_F_INDIRECT, 0);
	c->live = true;
	avail->ring[g.avail_idx & (g.num - 1)] = htole16(head);
	g.avail_idx++;
	__atomic_store_n(&avail->idx, htole16(g.avail_idx), __ATOMIC_RELEASE);
	return true;
}

/* The frames socket holds (read before the pair was destroyed). */
static bool send_frame(struct fuzz_in *in, unsigned int hdr)
{
	uint8_t kind = fuzz_u8(in), seed = fuzz_u8(in);
	uint16_t v = fuzz_u16(in);
	uint32_t len, seq = g.nsent;
	uint8_t *f;

	/*
	 * Ethernet-sized mostly, some GSO-sized, a few shorter than a header
	 * (tun never reads those: counted as tap drops)
	 */
	if (kind & 1)
		len = hdr + 4 + v;
	else if ((kind & 0x1e) == 0x1e)
		len = 1 + v % (hdr - 1); /* under a header; never 0 */
	else
		len = hdr + 4 + v % 1514;
	if (g.nsent == MAX_FRAMES || len > SENT_MAX - g.sent_top)
		return false;
	f = sent + g.sent_top;
	/*
	 * f[i] = seed + 31 i (mod 256), copied from the pattern 31 j: a byte
	 * loop here is the harness's own and, instrumented as it is, most of
	 * an input's time
	 */
	memcpy(f, pattern + pattern_at(seed), len);
	fuzz_bytes(in, f, len < hdr ? len : hdr); /* the header: anything */
	if (len >= hdr + 4)
		memcpy(f + hdr, &seq, sizeof(seq));
	if (send(sv[1], f, len, MSG_DONTWAIT | MSG_NOSIGNAL) != (ssize_t)len)
		return false;
	if (debug)
		fprintf(stderr, "frame #%u: %u bytes\n", seq, len);
	g.sent_off[g.nsent] = g.sent_top;
	g.sent_len[g.nsent++] = len;
	g.sent_top += len;
	return true;
}

/* LEN bytes of the writable segments of chain HEAD, appended to cur. */
static void gather(const struct chain *c, uint32_t len)
{
	unsigned int i;

	for (i = 0; i < c->nsegs && len; i++) {
		uint32_t n = c->segs[i].len;

		if (!c->segs[i].write || !n)
			continue;
		if (n > len)
			n = len;
		if (g.cur_len + n <= sizeof(cur))
			memcpy(cur + g.cur_len, gpa_ptr(c->segs[i].gpa), n);
		g.cur_len += n;
		len -= n;
	}
	FUZZ_ASSERT(!len, "a used length beyond the chain's writable bytes");
}

static void frame_done(struct vnetd_qp *qp)
{
	unsigned int hdr = qp->rx.hdr_len;
	uint32_t seq, flen;
	uint16_t nb;

	g.frames_seen++;
	g.in_frame = false;
	if (g.tampered)
		return;
	FUZZ_ASSERT(g.cur_len >= hdr + 4,
		    "a frame of %u bytes (header %u) reached the guest",
		    g.cur_len, hdr);
	memcpy(&seq, cur + hdr, sizeof(seq));
	FUZZ_ASSERT(seq < g.nsent && (int64_t)seq > g.last_seq,
		    "frame #%u reached the guest after #%lld (%u sent)", seq,
		    (long long)g.last_seq, g.nsent);
	g.last_seq = seq;
	flen = g.sent_len[seq];
	FUZZ_ASSERT(g.cur_len == flen,
		    "frame #%u: the guest got %u bytes in %u buffers, %u were sent (counted as delivered)",
		    seq, g.cur_len, g.cur_bufs, flen);
	if (hdr == sizeof(struct virtio_net_hdr_mrg_rxbuf)) {
		memcpy(&nb, cur + 10, sizeof(nb));
		nb = le16toh(nb);
		FUZZ_ASSERT(nb == (qp->rx.mrg ? g.cur_bufs : 1),
			    "frame #%u: num_buffers %u, %u buffers used", seq,
			    nb, g.cur_bufs);
		/* the rest of the header is the tap's, untouched */
		memcpy(cur + 10, sent + g.sent_off[seq] + 10, 2);
	}
	FUZZ_ASSERT(!memcmp(cur, sent + g.sent_off[seq], flen),
		    "frame #%u: bytes differ from what was sent", seq);
}

/* Take the new used entries, as the guest's driver would. */
static void harvest(struct vnetd_qp *qp)
{
	struct vring_used *used = (struct vring_used *)gpa_ptr(GPA_BASE + USED_OFF);
	uint16_t idx = le16toh(__atomic_load_n(&used->idx, __ATOMIC_ACQUIRE));

	/*
	 * The device publishes at most a ring's worth at a time, and only
	 * chains that were posted.  More means used->idx itself was
	 * overwritten: a scribbling guest pointed a receive buffer at its own
	 * used ring and the device read a frame into it (before deciding what
	 * to do with the frame: a read in place lands where the chains are).
	 */
	if ((uint16_t)(idx - g.used_seen) > g.num) {
		FUZZ_ASSERT(g.tampered, "used idx moved from %u to %u, ring size %u",
			    g.used_seen, idx, g.num);
		g.used_clobbered = true;
		return;
	}
	while (g.used_seen != idx) {
		struct vring_used_elem *e = &used->ring[g.used_seen & (g.num - 1)];
		uint32_t id = le32toh(e->id), len = le32toh(e->len);
		struct chain *c = id < g.num ? &g.chains[id] : NULL;
		unsigned int i;

		g.used_seen++;
		if (debug)
			fprintf(stderr, "used: id %u len %u (chain of %u segments)\n",
				id, len, c ? c->nsegs : 0);
		if (!c) {
			/*
			 * A scribbling guest can point a receive buffer at its
			 * own used ring, and the device then writes a frame
			 * over it (crash-tampered-used-ring): what the ring
			 * says is no longer the device's word.
			 */
			FUZZ_ASSERT(g.tampered, "used id %u, ring size %u", id,
				    g.num);
			g.used_clobbered = true;
			continue;
		}
		FUZZ_ASSERT(g.tampered || c->live, "used id %u was not posted", id);
		/*
		 * A chain of more than VHOST_VQ_MAX_IOV segments inside a
		 * mergeable frame once got 0 bytes while counted as one of the
		 * frame's buffers; vnetd now gives it back empty before the
		 * frame (vnetd/rx_many_segs), and the oracles hold it to that.
		 */
		if (c->nsegs > VHOST_VQ_MAX_IOV)
			g.long_chain = true;
		g.used_bytes += len;
		if (!g.in_frame && !len) {
			/* a chain given back unused */
		} else {
			if (!g.in_frame) {
				g.in_frame = true;
				g.cur_len = g.cur_bufs = g.cur_nb = 0;
			}
			if (!g.tampered)
				gather(c, len);
			else
				g.cur_len += len;
			g.cur_bufs++;
			if (!qp->rx.mrg) {
				frame_done(qp);
			} else if (!g.tampered) {
				if (!g.cur_nb && g.cur_len >= 12) {
					uint16_t nb;

					memcpy(&nb, cur + 10, sizeof(nb));
					g.cur_nb = le16toh(nb);
					FUZZ_ASSERT(g.cur_nb, "num_buffers 0");
				}
				FUZZ_ASSERT(!g.cur_nb || g.cur_bufs <= g.cur_nb,
					    "frame with num_buffers %u took a buffer more",
					    g.cur_nb);
				if (g.cur_nb && g.cur_bufs == g.cur_nb)
					frame_done(qp);
			} else {
				/* num_buffers is in buffers no longer known */
				frame_done(qp);
			}
		}
		if (c->live) {
			c->live = false;
			for (i = 0; i < c->ndesc; i++)
				g.free_desc[c->desc[i]] = true;
		}
	}
}

static void rx_run(struct vnetd_qp *qp)
{
	int i;

	/* what the queue thread does while the RX ring has work */
	for (i = 0; i < 16 && !qp->rx.r.dead; i++) {
		qp->rx.r.more = true;
		vnetd_qp_run(qp);
		if (!qp->rx.r.more)
			break;
	}
	harvest(qp);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct vnetd_qp *qp = &qps[0];
	struct fuzz_in in = { data, size };
	uint64_t features = 0, v, unread = 0, accounted, drops;
	struct vhost_mem_region_desc d = {
		.guest_phys_addr = GPA_BASE,
		.memory_size = MEM_SIZE,
		.userspace_addr = UVA_BASE + GPA_BASE,
	};
	unsigned int ops = 0, i;
	struct vhost_mem mem;
	struct vhost_vq vq;
	struct setup s;
	char drain[VNETD_RX_SLOT];

	fuzz_bytes(&in, &s, sizeof(s));
	memset(&g, 0, sizeof(g));
	g.last_seq = -1;
	fuzz_known = "";
	g.num = (uint16_t)(1u << (4 + s.log2_num % 5));
	for (i = 0; i < g.num; i++)
		g.free_desc[i] = true;
	memset(guest, 0, BUF_OFF);
	memset(&st, 0, sizeof(st));
	memset(&cfg, 0, sizeof(cfg));
	if (s.flags & 16) {
		cfg.rx_frames = s.rx_frames % 64;
		cfg.rx_usecs = s.rx_usecs;
	}

	vhost_mem_init(&mem);
	if (vhost_mem_add(&mem, &d, dup(memfd)))
		abort();
	if (s.flags & 4)
		features |= 1ULL << VIRTIO_RING_F_EVENT_IDX;
	if (s.flags & 8)
		features |= 1ULL << VIRTIO_RING_F_INDIRECT_DESC;
	vhost_vq_init(&vq, 0, "fuzz", &mem);
	vq.num = g.num;
	vq.desc_uva = UVA_BASE + GPA_BASE + DESC_OFF;
	vq.avail_uva = UVA_BASE + GPA_BASE + AVAIL_OFF;
	vq.used_uva = UVA_BASE + GPA_BASE + USED_OFF;
	vq.addr_set = true;
	vq.call_fd = call_fd;
	if (vhost_vq_start(&vq, features))
		abort();

	/* ring_start() of qthread.c, for the RX ring of pair 0 */
	qp->rx.mrg = s.flags & 1;
	qp->rx.hdr_len = qp->rx.mrg || (s.flags & 2) ?
			      sizeof(struct virtio_net_hdr_mrg_rxbuf) :
			      sizeof(struct virtio_net_hdr);
	qp->rx.r.vq = &vq;
	qp->rx.r.dead = false;
	qp->rx.r.seen = vq.stats;
	qp->rx.count = qp->rx.head = 0;
	qp->rx.want = 1;
	qp->rx.bounce = qp->rx.mean = qp->rx.chain_len = 0;
	qp->rx.big_bursts = VNETD_RX_BIG_BURSTS;
	qp->rx.big = s.flags & 128 ? VNETD_RX_BIG_BURSTS : 0;
	qp->rx.direct_min = (uint32_t[]){ VNETD_RX_DIRECT_MIN, 0, UINT32_MAX,
					  64 }[(s.flags >> 5) & 3];
	vnetd_coal_reset(&qp->rx.r);
	qp->rx.push_mark = 0;
	vnetd_qp_tap_arm(qp, true);

	while (fuzz_left(&in) && ops++ < 256) {
		/* bits 0-2: what, 3-7: how many - 1 */
		uint8_t op = fuzz_u8(&in), n = 1 + (op >> 3);

		switch ((op & 7) % 5) {
		case 0:
		case 1:
			for (i = 0; i < n && post_chain(&in); i++)
				;
			break;
		case 2:
			for (i = 0; i < n && send_frame(&in, qp->rx.hdr_len); i++)
				;
			break;
		case 3:
			rx_run(qp);
			break;
		default: { /* the guest scribbles over its ring */
			uint16_t off = fuzz_u16(&in) % USED_OFF;
			uint8_t len = fuzz_u8(&in);

			if (off + len > USED_OFF)
				len = (uint8_t)(USED_OFF - off);
			fuzz_bytes(&in, guest + off, len);
			g.tampered = true;
			break;
		}
		}
	}
	rx_run(qp);

	/* frames still in the socket were never read */
	while (recv(sv[0], drain, sizeof(drain), MSG_DONTWAIT) >= 0)
		unread++;
	/*
	 * drops[BROKEN] counts the break itself (once, qthread.c's
	 * ring_broken(); a tap error counts one drops[TAP] the same way)
	 * and the frames copied into a round the break cut short
	 */
	drops = st.drops[VNET_DROP_TAP] + st.drops[VNET_DROP_TOO_BIG] +
		st.drops[VNET_DROP_BROKEN] - (qp->rx.r.dead ? 1 : 0);
	accounted = st.frames + drops + qp->rx.count + unread;
	FUZZ_ASSERT(accounted == g.nsent,
		    "%u frames sent, %llu accounted for: %llu delivered + %llu dropped + %u pending + %llu unread (ring %s%s)",
		    g.nsent, (unsigned long long)accounted,
		    (unsigned long long)st.frames, (unsigned long long)drops,
		    qp->rx.count, (unsigned long long)unread,
		    vhost_vq_broken(&vq) ? "broken: " : "fine",
		    vq.broken_reason);
	/* a scribbling guest's buffers cannot be read back */
	FUZZ_ASSERT(g.tampered || g.frames_seen == st.frames,
		    "the guest's used ring holds %llu frames, %llu counted",
		    (unsigned long long)g.frames_seen,
		    (unsigned long long)st.frames);
	FUZZ_ASSERT(g.used_clobbered ||
			    g.used_bytes == st.bytes + st.frames * qp->rx.hdr_len,
		    "the guest got %llu bytes, counted %llu bytes + %llu headers of %u",
		    (unsigned long long)g.used_bytes,
		    (unsigned long long)st.bytes,
		    (unsigned long long)st.frames, qp->rx.hdr_len);
	FUZZ_ASSERT(!g.in_frame || g.tampered,
		    "the used ring ends in the middle of a frame (%u of %u buffers)",
		    g.cur_bufs, g.cur_nb);

	/* ring_stop() */
	vnetd_coal_reset(&qp->rx.r);
	vnetd_qp_tap_arm(qp, false);
	qp->rx.r.vq = NULL;
	qp->rx.count = 0;
	vhost_vq_stop(&vq);
	vhost_mem_cleanup(&mem);
	while (read(call_fd, &v, sizeof(v)) > 0)
		;
	return 0;
}
