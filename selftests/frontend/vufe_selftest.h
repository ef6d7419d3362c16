/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/* vufe_selftest: the scripted peer and helpers its cases share, and the cases of each file */
#ifndef VNET_SELFTESTS_VUFE_SELFTEST_H
#define VNET_SELFTESTS_VUFE_SELFTEST_H

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <linux/vhost_types.h>
#include <linux/virtio_config.h>

#include "../test.h"
#include "vufe.h"
#include "testpmd.h"

/* ---- vufe_selftest_peer.c ---- */

extern bool verbose;
/*
 * The case runs with packed virtqueues: rig_up(), kick_case() and the
 * DPDK cases want (and the scripted peer offers) VIRTIO_F_RING_PACKED,
 * and assert it was negotiated.
 */
extern bool packed;

#define PK_BIT		(1ULL << VIRTIO_F_RING_PACKED)
#define PK_WRAP_BIT	(1u << VRING_PACKED_EVENT_F_WRAP_CTR)

/* the features with RING_PACKED added when the case runs packed */
static inline __u64 pkf(__u64 f)
{
	return packed ? f | PK_BIT : f;
}

/* packed ring position POS (idx | wrap << 15) moved on by N of NUM */
static inline __u16 pk_pos(__u16 pos, unsigned int n, unsigned int num)
{
	unsigned int i = (pos & ~PK_WRAP_BIT) + n;
	__u16 w = pos & PK_WRAP_BIT;

	while (i >= num) {
		i -= num;
		w ^= PK_WRAP_BIT;
	}
	return i | w;
}

/* the same case on packed rings, registered as .../packed/<scenario> */
#define VUFE_TEST_PACKED(name, fn)               \
	static void fn##_packed(void)            \
	{                                        \
		packed = true;                   \
		fn();                            \
		packed = false;                  \
	}                                        \
	VNET_TEST(name, fn##_packed)

#define PEER_MAX 256

struct peer_msg {
	__u32 req, flags, size;
	unsigned int nfds;
	__u8 p[512];
};

struct peer_map {
	__u8 *base;	/* where region's guest_phys_addr is mapped here */
	size_t len;	/* mapping length (size + mmap_offset) */
	__u8 *mapping;
	__u64 gpa, size, hva;
};

struct peer {
	int fd;
	pthread_t th;
	__u64 features, proto, queue_num, max_slots;
	__u32 nack_req;		/* nack this request's NEED_REPLY */
	bool packed_base;	/* GET_VRING_BASE answers both packed halves */
	unsigned int n;		/* messages logged (atomic) */
	struct peer_msg log[PEER_MAX];
	unsigned int nmaps;
	struct peer_map map[8];
};

int peer_read(int fd, void *buf, size_t len, int *fds, unsigned int *nfds);

void peer_reply(struct peer *pr, __u32 req, const void *p, __u32 size);

void peer_map_region(struct peer *pr, const __u8 *p, int fd);

void *peer_main(void *arg);

/* the peer end of a fresh socketpair; *fe_fd is the frontend's end */
int peer_start(struct peer *pr, int *fe_fd);

/* after the frontend closed its end: the thread sees EOF and ends */
void peer_join(struct peer *pr);

unsigned int peer_count(struct peer *pr);

/* the peer's view of a frontend virtual address (SET_VRING_ADDR's words) */
void *peer_hva(struct peer *pr, __u64 hva);

#define ALL_PROTO                                                            \
	((1ULL << VUFE_PROTO_MQ) | (1ULL << VUFE_PROTO_LOG_SHMFD) |           \
	 (1ULL << VUFE_PROTO_RARP) | (1ULL << VUFE_PROTO_REPLY_ACK) |         \
	 (1ULL << VUFE_PROTO_MTU) | (1ULL << VUFE_PROTO_BACKEND_REQ) |        \
	 (1ULL << VUFE_PROTO_CONFIGURE_MEM_SLOTS) | (1ULL << 16))

#define ALL_FEATURES                                                         \
	(VUFE_DEFAULT_FEATURES | (1ULL << VIRTIO_NET_F_MQ) |                  \
	 (1ULL << VIRTIO_NET_F_CSUM) | (1ULL << VIRTIO_F_RING_PACKED))

/* a frontend set up against a scripted peer */
struct rig {
	struct peer pr;
	struct vufe *fe;
};

bool rig_up(struct rig *g, struct vufe_opts *o, __u64 features,
	    __u64 proto);

void rig_down(struct rig *g);

/* every message the frontend sent so far has been read by the peer */
bool rig_sync(struct rig *g);

#define DEV_IDS 1024

/*
 * The test playing the device on one ring.  Split: last_avail and
 * used_idx are ring indices.  Packed: they are positions (idx | wrap <<
 * 15); dev_pop() returns buffer ids and remembers where each chain was,
 * dev_used() queues used descriptors that dev_publish() makes visible
 * (the first one's flags last).
 */
struct dev {
	struct vufe *fe;
	struct vufe_ring r;
	__u16 last_avail;
	__u16 used_idx;
	__u16 pos[DEV_IDS];	/* packed: per id, the chain's first position */
	__u16 cnt[DEV_IDS];	/* ... and its ring descriptors */
	unsigned int npend;
	__u16 pend_pos[DEV_IDS], pend_flags[DEV_IDS];
};

void dev_init(struct dev *d, struct vufe *fe, unsigned int vq);

__u16 dev_avail_idx(struct dev *d);

/* the device resumes from its used position (nothing popped, unused) */
void dev_rewind(struct dev *d);

/* the next available head (packed: buffer id), or -1; packed: -2 for a
 * chain that never ends (NEXT on all of the ring's descriptors) */
int dev_pop(struct dev *d);

/* the chain of head flattened: descriptors (indirect expanded) */
int dev_chain(struct dev *d, unsigned int head, struct vring_desc *out,
	      unsigned int max, bool *indirect);

/* gathers a TX chain's bytes */
int dev_read(struct dev *d, unsigned int head, __u8 *out, size_t cap);

/* scatters bytes over an RX chain; returns the bytes written */
int dev_write(struct dev *d, unsigned int head, const __u8 *in,
	      size_t len);

void dev_used(struct dev *d, __u32 id, __u32 len);

void dev_publish(struct dev *d);

__u16 dev_used_event(struct dev *d);

void dev_set_avail_event(struct dev *d, __u16 v);

/* packed: the device event area's flags (ENABLE, DISABLE, DESC) */
void dev_set_event_flags(struct dev *d, __u16 flags);

/* packed: the driver event area */
__u16 dev_driver_flags(struct dev *d);

__u64 efd_read(int fd);

void efd_write(int fd, __u64 v);

void fill(__u8 *p, size_t len, unsigned int seed);

/* ---- vufe_selftest_wire.c ---- */

void unit_need_event(void);
void unit_handshake_mem_slots(void);
void unit_handshake_mem_table(void);
void unit_handshake_legacy(void);
void unit_handshake_nack(void);
void unit_stop_reconnect(void);

/* ---- vufe_selftest_ring.c ---- */

void unit_tx_layouts(void);
void unit_tx_reap(void);
void unit_kick_event_idx(void);
void unit_kick_event_idx_wrap(void);
void unit_kick_no_notify(void);
void unit_callbacks(void);
void unit_rx_mergeable(void);
void unit_rx_mergeable_bad(void);
void unit_rx_big(void);
void unit_rx_big_indirect(void);
void unit_rx_large(void);
void unit_signals(void);
void unit_hostile_ring_shapes(void);
void unit_hostile_msg_shapes(void);
void unit_hostile_ring_shapes_packed(void);

/* ---- vufe_selftest_dpdk.c ---- */

void dpdk_handshake(void);
void dpdk_mergeable(void);
void dpdk_tx_layouts(void);
void dpdk_burst(void);
void dpdk_rx_big(void);
void dpdk_rx_big_indirect(void);
void dpdk_rx_large(void);
void dpdk_multiqueue(void);
void dpdk_signals(void);
void dpdk_stop_reconnect(void);
void dpdk_client_mode(void);
void dpdk_hostile(void);
void dpdk_testpmd_exit(void);
void dpdk_teardown(void);

#endif /* VNET_SELFTESTS_VUFE_SELFTEST_H */
