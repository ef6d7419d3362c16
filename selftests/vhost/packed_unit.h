// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * packed_unit: the guest driver and the ring environment its two files
 * (packed_unit.c: the ring at work; packed_hostile.c: hostile drivers and
 * the vhost-user messages) share.
 */
#ifndef VNET_SELFTESTS_PACKED_UNIT_H
#define VNET_SELFTESTS_PACKED_UNIT_H

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <linux/vhost_types.h>
#include <linux/virtio_config.h>
#include <linux/virtio_ring.h>

#include "test.h"

#include "log.h"
#include "mem.h"
#include "vhost_user.h"
#include "virtq.h"

#define GUEST_SIZE (1u << 20)
#define UVA_BASE 0x7f0000000000ULL
#define DESC_GPA 0x1000ULL   /* up to 256 descriptors: 4 KiB */
#define DRIVER_GPA 0x3000ULL /* driver event suppression */
#define DEVICE_GPA 0x3100ULL /* device event suppression */
#define TABLE_GPA 0x4000ULL  /* indirect tables */
#define BUF_GPA 0x10000ULL
#define BIT(n) (1ULL << (n))
#define F_AV (1u << VRING_PACKED_DESC_F_AVAIL)
#define F_US (1u << VRING_PACKED_DESC_F_USED)
#define F_PK                                                            \
	(BIT(VIRTIO_F_VERSION_1) | BIT(VIRTIO_RING_F_EVENT_IDX) |      \
	 BIT(VIRTIO_RING_F_INDIRECT_DESC) | BIT(VIRTIO_F_RING_PACKED))


/* the guest driver of one packed ring */
struct pdrv {
	uint8_t *g;
	uint16_t num;
	struct vring_packed_desc *desc;
	struct vring_packed_desc_event *drv_ev, *dev_ev;
	uint16_t next;	   /* next descriptor to make available */
	bool wrap;	   /* its wrap counter */
	uint16_t used;	   /* next used descriptor to read */
	bool used_wrap;
	uint16_t ndesc[256]; /* per id: descriptors the buffer took */
};

struct seg {
	uint64_t gpa;
	uint32_t len;
	bool write;
};


/* a packed virtqueue on guest memory */
struct env {
	int memfd, err_fd, call_fd;
	uint8_t *g;
	struct vhost_mem mem;
	struct vhost_vq vq;
	struct pdrv d;
};

extern unsigned int broken_lines; /* "broken" log lines */
extern struct vhost_vq_elem elems[8];

void drv_add(struct pdrv *d, uint16_t id, const struct seg *s, unsigned int n,
	     uint16_t extra);
int drv_used(struct pdrv *d, uint16_t *id, uint32_t *len);
bool env_setup(struct env *e, uint16_t num, uint64_t features, uint32_t base);
void env_cleanup(struct env *e);
uint64_t efd_read(int fd);

void test_hostile(void);
void test_push_bad_id(void);
void test_protocol(void);

#endif /* VNET_SELFTESTS_PACKED_UNIT_H */
