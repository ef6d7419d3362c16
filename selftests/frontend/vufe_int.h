// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * vufe's internals, shared by its files (not part of its interface; tests
 * include vufe.h):
 *   vufe.c        guest memory, creation, negotiation and setup
 *   vufe_proto.c  vhost-user messages, the connection, hostile messages
 *   vufe_ring.c   split virtqueues: descriptors, avail, kicks, callbacks,
 *                 signals and bounded waits, hostile rings
 *   vufe_net.c    the net device: TX and RX
 *   vufe_packed.c packed virtqueues (VIRTIO_F_RING_PACKED): descriptors,
 *                 used descriptors, kicks, callbacks, TX reap, RX, hostile
 *                 rings
 */
#ifndef VUFE_INT_H
#define VUFE_INT_H

#include <endian.h>
#include <stdbool.h>
#include <time.h>

#include "vufe.h"

#if __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "vufe assumes a little-endian host (virtio 1.x rings are little-endian)"
#endif

#define VUFE_GUARD		64	/* poisoned bytes after each buffer */
#define VUFE_POISON		0xa5
#define VUFE_INDIR_MAX		32	/* entries per slot's indirect table */
#define VUFE_MAX_PAYLOAD	4096
#define VUFE_MAX_FDS		8
#define VUFE_BIG_PIECES		(1 + (VUFE_BIG_DATA + VUFE_PAGE - 1) / VUFE_PAGE)
#define VUFE_SPLIT_GPA		(1ULL << 32)

_Static_assert(sizeof(struct vring_desc) == 16, "vring_desc");
_Static_assert(sizeof(struct vring_packed_desc) == 16, "vring_packed_desc");
_Static_assert(sizeof(struct vhost_vring_state) == 8, "vhost_vring_state");
_Static_assert(sizeof(struct vhost_vring_addr) == 40, "vhost_vring_addr");
_Static_assert(VUFE_BIG_PIECES == 18, "big packets chain: hdr + 17 pages");

/* vhost-user payloads that linux/vhost_types.h does not describe */
struct vufe_mem_region {
	__u64 guest_phys_addr;
	__u64 memory_size;
	__u64 userspace_addr;
	__u64 mmap_offset;
};

struct vufe_mem_table {
	__u32 nregions;
	__u32 padding;
	struct vufe_mem_region regions[8];
};

struct vufe_mem_reg {
	__u64 padding;
	struct vufe_mem_region region;
};

_Static_assert(sizeof(struct vufe_mem_region) == 32, "mem region");
_Static_assert(sizeof(struct vufe_mem_table) == 8 + 8 * 32, "mem table");
_Static_assert(sizeof(struct vufe_mem_reg) == 40, "mem reg");

struct vufe_region_state {
	__u64 gpa;
	__u64 size;
	__u64 mmap_offset;	/* into the memfd */
	__u8 *hva;
	__u64 next;		/* allocator: first free byte (offset) */
};

/* one buffer: a TX frame's memory or an RX buffer (or big chain) */
struct vufe_slot {
	__u8 *buf;
	__u64 gpa;
	__u8 *hdr;		/* TX: separate header, in region 0 */
	__u64 hdr_gpa;
	struct vring_desc *indir;
	__u64 indir_gpa;
};

enum { HEAD_FREE, HEAD_TX, HEAD_RX, HEAD_HOSTILE };

/* what the driver remembers about a descriptor that heads a chain */
struct vufe_head {
	__u8 state;
	__u16 ndescs;		/* ring descriptors (1 when indirect) */
	__u16 slot;
	__u32 cap;		/* RX: bytes the device may write */
};

struct vufe_vq {
	unsigned int index;
	bool tx;
	bool started;		/* set up at least once */
	unsigned int num;
	struct vring_desc *desc;
	struct vring_avail *avail;
	struct vring_used *used;
	__u64 desc_gpa, avail_gpa, used_gpa;
	int kick_fd, call_fd;
	__u16 avail_idx;	/* shadow of avail->idx */
	__u16 last_used;
	__u16 num_added;	/* since the last kick decision */
	__u16 avail_flags;	/* shadow of avail->flags */
	__u16 *free;		/* free descriptor ids (a stack) */
	unsigned int nr_free;
	__u16 *next;		/* shadow of desc[].next */
	struct vufe_head *heads;
	struct vufe_slot *slots;
	unsigned int nr_slots;
	__u16 *free_slots;
	unsigned int nr_free_slots;
	size_t slot_size;
	unsigned int inflight;	/* chains made available, not yet used */
	bool base_saved;	/* GET_VRING_BASE answered since setup */
	__u32 base;		/* the answer, or the base to start from */
	/*
	 * Packed rings (vufe_packed.c): the same three areas hold the
	 * descriptor ring (desc), the driver event suppression area (avail)
	 * and the device's (used).  avail_idx and last_used are positions
	 * (idx | wrap counter << 15), num_added counts descriptors, and
	 * avail_flags shadows the driver event flags.  free[] holds free
	 * buffer ids; pk_free counts free ring descriptors.
	 */
	bool packed;
	struct vring_packed_desc *pdesc;
	struct vring_packed_desc_event *drv_ev, *dev_ev;
	unsigned int pk_free;
	__u16 pk_base;		/* start position, before the first setup */
	struct vufe_vq_stats st;
};

struct vufe {
	struct vufe_opts o;
	char err[256];
	int sock;
	int listen_fd;
	bool listening;		/* accept on (re)connect instead of connect */
	int memfd;
	__u8 *mem;
	size_t mem_size;
	unsigned int nr_regions;
	struct vufe_region_state reg[VUFE_MAX_REGIONS];
	__u64 backend_features, features;
	__u64 backend_proto, proto;
	__u64 max_queues, max_mem_slots;
	unsigned int hdr_len;
	enum vufe_rx_mode rx_mode;
	bool rx_ready;		/* RX slots allocated for rx_mode */
	unsigned int nr_vq;
	struct vufe_vq vq[VUFE_MAX_VQ];
};

int vufe_err(struct vufe *fe, int err, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static inline bool has(__u64 features, unsigned int bit)
{
	return features & (1ULL << bit);
}

/* deadlines are in microseconds, so a wait is never cut short by rounding */
static inline long long now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000LL + ts.tv_nsec / 1000;
}

static inline long long deadline_in(int ms)
{
	return now_us() + ms * 1000LL;
}

/* milliseconds left, rounded up; 0 once the deadline has passed */
static inline int remaining_ms(long long deadline)
{
	long long left = deadline - now_us();

	if (left <= 0)
		return 0;
	left = (left + 999) / 1000;
	return left > 1000000 ? 1000000 : (int)left;
}

/* ---- ring field access: little-endian, atomic where the device races ---- */

static inline __u16 ld16(const __virtio16 *p, int order)
{
	return le16toh(__atomic_load_n((const __u16 *)p, order));
}

static inline void st16(__virtio16 *p, __u16 v, int order)
{
	__atomic_store_n((__u16 *)p, htole16(v), order);
}

static inline __virtio16 *used_event(struct vufe_vq *vq)
{
	return &vq->avail->ring[vq->num];
}

static inline __virtio16 *avail_event(struct vufe_vq *vq)
{
	return (__virtio16 *)&vq->used->ring[vq->num];
}

static inline void mb(void)
{
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
}

/* ---- guest memory ---- */
static inline void poison(__u8 *p, size_t len)
{
	memset(p, VUFE_POISON, len);
}

static inline bool poisoned(const __u8 *p, size_t len)
{
	size_t i;

	for (i = 0; i < len; i++)
		if (p[i] != VUFE_POISON)
			return false;
	return true;
}

/* a guest-physical address in no region, well away from all of them */
static inline __u64 gpa_outside(const struct vufe *fe)
{
	__u64 end = 0;
	unsigned int i;

	for (i = 0; i < fe->nr_regions; i++)
		if (fe->reg[i].gpa + fe->reg[i].size > end)
			end = fe->reg[i].gpa + fe->reg[i].size;
	return end + (16ULL << 20);
}

static inline struct vufe_vq *get_vq(struct vufe *fe, unsigned int vq)
{
	return vq < fe->nr_vq ? &fe->vq[vq] : NULL;
}

static inline bool rearm(struct vufe *fe, struct vufe_vq *vq)
{
	if (!fe->o.auto_rearm)
		return false;
	/* more pending after re-enabling: the caller polls again */
	return !vufe_enable_cb(fe, vq->index);
}

/* vufe.c */
unsigned int vq_rx_pieces(const struct vufe *fe, const struct vufe_vq *vq,
			  const struct vufe_slot *s, __u8 **p, __u64 *gpa,
			  __u32 *len);

/* vufe_proto.c */
int vu_msg(struct vufe *fe, __u32 request, bool need_reply,
	   const void *payload, size_t len, const int *fds,
	   unsigned int nfds);
int vu_set_state(struct vufe *fe, __u32 request, unsigned int index,
		 unsigned int num, bool need_reply);
int vu_set_vring_fd(struct vufe *fe, __u32 request, unsigned int index,
		    int fd);
int vu_get_u64(struct vufe *fe, __u32 request, __u64 *v);
int vu_set_u64(struct vufe *fe, __u32 request, __u64 v);

/* vufe_net.c */
void vq_rx_copy(const struct vufe *fe, const struct vufe_vq *vq,
		const struct vufe_slot *s, size_t skip, size_t want, __u8 *out);
bool vq_rx_guards_ok(const struct vufe *fe, const struct vufe_vq *vq,
		     const struct vufe_slot *s);
int vq_rx_head(struct vufe *fe, const struct vufe_vq *vq, unsigned int id,
	       __u32 len, unsigned int max,
	       struct virtio_net_hdr_mrg_rxbuf *h, __u16 *nb);
void vq_rx_take(struct vufe *fe, const struct vufe_vq *vq,
		const struct vufe_slot *s, size_t skip, size_t c, void *buf,
		size_t cap, size_t *frame, int *err, unsigned int id);
ssize_t vq_rx_done(struct vufe *fe, struct vufe_vq *vq, unsigned int qp,
		   const struct virtio_net_hdr_mrg_rxbuf *h,
		   struct virtio_net_hdr_mrg_rxbuf *hdr, unsigned int nb,
		   unsigned int *nbufs, int err, size_t frame);

/* vufe_packed.c */
#define PK_WRAP		(1u << VRING_PACKED_EVENT_F_WRAP_CTR)
#define PK_F_AVAIL	(1u << VRING_PACKED_DESC_F_AVAIL)
#define PK_F_USED	(1u << VRING_PACKED_DESC_F_USED)

void pk_init(struct vufe *fe, struct vufe_vq *vq);
__u16 pk_pos_add(const struct vufe_vq *vq, __u16 pos, unsigned int n);
int pk_reserve(struct vufe_vq *vq, unsigned int ndescs);
void pk_add(struct vufe_vq *vq, struct vufe_slot *s, bool indirect,
	    unsigned int n, const __u64 *addr, const __u32 *len, __u16 flags,
	    struct vufe_head h);
unsigned int pk_used_walk(struct vufe_vq *vq, __u16 *pos);
int pk_kick(struct vufe *fe, struct vufe_vq *vq);
bool pk_enable_cb(struct vufe *fe, struct vufe_vq *vq);
bool pk_enable_cb_delayed(struct vufe *fe, struct vufe_vq *vq);
void pk_disable_cb(struct vufe *fe, struct vufe_vq *vq);
int pk_tx_reap(struct vufe *fe, struct vufe_vq *vq);
ssize_t pk_recv(struct vufe *fe, struct vufe_vq *vq, unsigned int qp,
		void *buf, size_t cap, struct virtio_net_hdr_mrg_rxbuf *hdr,
		unsigned int *nbufs);
int pk_hostile_ring(struct vufe *fe, struct vufe_vq *vq,
		    enum vufe_hostile_ring kind);

/* vufe_ring.c */
int vq_desc_get(struct vufe_vq *vq, unsigned int n, __u16 *ids);
void vq_desc_write(struct vufe_vq *vq, const __u16 *ids, unsigned int n,
		   const __u64 *addr, const __u32 *len, __u16 flags);
void vq_indirect_write(struct vufe_vq *vq, struct vufe_slot *s, __u16 id,
		       unsigned int n, const __u64 *addr, const __u32 *len,
		       __u16 flags);
void vq_publish(struct vufe_vq *vq, __u16 head);
void vq_chain_free(struct vufe_vq *vq, __u16 head);
int vq_kick(struct vufe_vq *vq);

#endif /* VUFE_INT_H */
