/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * vhost_unit: the frontend and guest driver its cases share (vhost_unit_lib.c)
 * and the cases of each file, registered and run by vhost_unit.c.
 */
#ifndef VNET_SELFTESTS_VHOST_UNIT_H
#define VNET_SELFTESTS_VHOST_UNIT_H

#include <errno.h>
#include <dirent.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/resource.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <linux/vhost_types.h>
#include <linux/virtio_config.h>
#include <linux/virtio_net.h>
#include <linux/virtio_ring.h>

#include "test.h"

#include "fault.h"
#include "log.h"
#include "mem.h"
#include "server.h"
#include "vhost_user.h"
#include "virtq.h"

/* ---- vhost_unit_lib.c ---- */

#define GUEST_SIZE (1u << 20)
/* where the frontend (QEMU) would have guest memory in its own process */
#define UVA_BASE 0x7f0000000000ULL
#define RING_NUM 256
#define DESC_GPA 0x1000ULL
#define AVAIL_GPA 0x3000ULL
#define USED_GPA 0x4000ULL
#define BUF_GPA 0x10000ULL

#define BIT(n) (1ULL << (n))

struct log_counts {
	unsigned int errors;
	unsigned int broken; /* "broken" lines */
	char last[512];
};
extern struct log_counts logs;

void log_capture(enum vhost_log_level level, const char *msg,
		 void *opaque);

void logs_reset(void);

/* Open fds of this process: a leak check around fd-passing cases. */
int count_fds(void);

int memfd_guest(size_t size);
/* close A and B, each when it is an fd (>= 0) */
void close_pair(int a, int b);

uint64_t efd_read(int fd);

struct drv {
	uint8_t *g; /* guest memory as the test maps it: gpa 0 at g */
	uint16_t num;
	struct vring_desc *desc;
	struct vring_avail *avail;
	struct vring_used *used;
	uint16_t avail_idx;
	uint16_t next_desc;
};

struct seg {
	uint64_t gpa;
	uint32_t len;
	bool write;
};

void drv_init(struct drv *d, uint8_t *g, uint16_t num);

void drv_set_base(struct drv *d, uint16_t idx);

/* Write a chain of N segments into free descriptors; returns its head. */
uint16_t drv_chain(struct drv *d, const struct seg *s, unsigned int n);

void drv_publish(struct drv *d, uint16_t head);

/* used_event follows avail->ring[num], avail_event used->ring[num] */
void drv_set_used_event(struct drv *d, uint16_t v);

uint16_t drv_avail_event(struct drv *d);

struct vqenv {
	int memfd;
	uint8_t *g;
	struct vhost_mem mem;
	struct vhost_vq vq;
	struct drv drv;
	int call_fd; /* the test's ends of the vq's eventfds */
	int err_fd;
};

/*
 * SPLIT: guest memory as two adjacent regions (gpa 0..512K and 512K..1M,
 * separate mappings) to exercise ranges spanning regions.
 */
bool env_setup(struct vqenv *e, uint16_t num, uint64_t features,
	       uint16_t base, bool split);

void env_cleanup(struct vqenv *e);

#define F_RING                                                    \
	(BIT(VIRTIO_F_VERSION_1) | BIT(VIRTIO_RING_F_EVENT_IDX) | \
	 BIT(VIRTIO_RING_F_INDIRECT_DESC))

extern struct vhost_vq_elem elems[8];

struct tdev {
	struct vhost_dev dev;
	int sock; /* the frontend's end */
	uint64_t offer;
	unsigned int starts, stops, disconnects, mem_changes;
	bool running[4];
	uint8_t rarp_mac[6];
	unsigned int rarps;
	unsigned int mtu;	/* the last NET_SET_MTU the device took */
	int memfd;
	uint8_t *g;
};

uint64_t t_get_features(struct vhost_dev *dev);

int t_queue_start(struct vhost_dev *dev, struct vhost_vq *vq);

void t_queue_stop(struct vhost_dev *dev, struct vhost_vq *vq);

void t_mem_changed(struct vhost_dev *dev);

void t_disconnected(struct vhost_dev *dev);

int t_send_rarp(struct vhost_dev *dev, const uint8_t mac[6]);

int t_set_mtu(struct vhost_dev *dev, unsigned int mtu);

extern const struct vhost_dev_ops t_ops;

#define T_OFFER                                                   \
	(F_RING | BIT(VIRTIO_NET_F_MRG_RXBUF) | BIT(VIRTIO_NET_F_CSUM) | \
	 BIT(VIRTIO_F_RING_PACKED))

bool tdev_setup(struct tdev *t);

void tdev_cleanup(struct tdev *t);

int fe_send_raw(int sock, const void *buf, size_t len, const int *fds,
		unsigned int nfds);

/* Send a request and let the backend handle it; the backend's verdict. */
int fe_call(struct tdev *t, uint32_t req, uint32_t flags,
	    const void *payload, uint32_t size, const int *fds,
	    unsigned int nfds);

/* A reply waiting on the frontend's end: 0, or -EAGAIN when none. */
int fe_reply(int sock, struct vhost_user_msg *m);

/* GET_* with a u64 answer: the value, or ~0 on any problem. */
uint64_t fe_get_u64(struct tdev *t, uint32_t req);

/* A request with NEED_REPLY: the ack (0 ok, 1 error), or -errno. */
int64_t fe_ack(struct tdev *t, uint32_t req, const void *payload,
	       uint32_t size, const int *fds, unsigned int nfds);

int64_t fe_ack_u64(struct tdev *t, uint32_t req, uint64_t v);

int64_t fe_ack_state(struct tdev *t, uint32_t req, uint32_t index,
		     uint32_t num);

int64_t fe_ack_vring_fd(struct tdev *t, uint32_t req, uint32_t index,
			int fd);

int64_t fe_mem_table(struct tdev *t, uint64_t size);

/* Negotiate as QEMU does, map memory and configure ring INDEX up to kick. */
bool fe_setup_ring(struct tdev *t, uint32_t index, uint64_t features,
		   struct drv *d, int *call, int *kick);
/*
 * tdev_setup() and ring INDEX set up by fe_setup_ring() with F_RING;
 * tdev_ring_cleanup() closes its CALL and KICK fds and cleans T up
 */
bool tdev_ring(struct tdev *t, uint32_t index, struct drv *d, int *call,
	       int *kick);
void tdev_ring_cleanup(struct tdev *t, int call, int kick);

/* ---- vhost_unit_proto.c ---- */

void test_proto_features(void);
void test_proto_rarp(void);
void test_proto_mtu(void);
void test_proto_ring_lifecycle(void);
void test_proto_legacy_enable(void);
void test_proto_vring_nofd(void);
void test_proto_wrong_fd_count(void);
void test_proto_ring_fd_own(void);
void test_proto_unknown_request(void);
void test_proto_truncated(void);
void test_proto_bad_header(void);
void test_proto_too_many_fds(void);
void test_proto_partial_reads(void);
void test_proto_disconnect_reset(void);

/* ---- vhost_unit_mem.c ---- */

void test_mem_add_remove(void);
void test_mem_validation(void);
void test_mem_set_table(void);
void test_mem_dirty_log(void);
void test_mem_fault(void);

/* ---- vhost_unit_vq.c ---- */

void test_vq_pop_push(void);
void test_vq_event_idx_wrap(void);
void test_vq_flags_notify(void);
void test_vq_indirect(void);
void test_vq_span_regions(void);
void test_vq_hostile(void);
void test_vq_partial_burst(void);
void test_vq_too_many_segments(void);
void test_vq_dirty_log(void);
void test_vq_broken_via_protocol(void);
void test_vq_bad_ring_addr(void);
void test_dev_quiesce_threaded(void);

/* ---- vhost_unit_server.c ---- */

void test_server_listen(void);
void test_server_mode_race(void);
void test_server_client_reconnect(void);

#endif /* VNET_SELFTESTS_VHOST_UNIT_H */
