// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * fuzz_vhost_user: a vhost-user message stream, with real file descriptors
 * attached, into vhost_dev_handle_input() (user/vhost/vhost_user.c) over a
 * real unix socket pair.
 *
 * Input: records, each
 *	u8   nfds (low nibble, mod 9)
 *	u8   kind of each fd (see fd_make()) [+ a size byte for memfds]
 *	hdr  12 bytes: request, flags, size (as on the wire)
 *	     payload: size bytes (what the input has left, if shorter)
 * Each record is sent with its fds in one sendmsg(); the backend handles
 * what it can read and its replies are drained.  A record whose header
 * the backend refuses (version, size) ends the connection, as it would
 * with QEMU.
 *
 * Oracles, after every input (the connection is dropped and the device
 * cleaned up): the same file descriptors are open as before the first
 * input and as many guest-memory mappings exist (fuzz_census(): the
 * entries of /proc/self/fd, the memfd mappings of /proc/self/maps), and
 * a ring the library starts lies inside a memory region.  ASan/UBSan
 * catch the rest.
 *
 * The census before the first input stands for the one before each: the
 * input before left everything as it was or failed, and libFuzzer keeps
 * no more descriptors or mappings of memfds open between inputs than
 * before the first.
 */
#include <errno.h>
#include <fcntl.h>
#include <unistd.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <linux/virtio_config.h>
#include <linux/virtio_net.h>
#include <linux/virtio_ring.h>

#include "fuzz.h"
#include "fuzz_mem.h"
#include "log.h"
#include "sendfds.h"
#include "vhost_user.h"

#define NR_VQS 4
#define MEMFD_NAME "vnetfuzz-vu"

static uint64_t ops_get_features(struct vhost_dev *dev)
{
	(void)dev;
	return (1ULL << VIRTIO_F_VERSION_1) | (1ULL << VIRTIO_NET_F_MRG_RXBUF) |
	       (1ULL << VIRTIO_RING_F_EVENT_IDX) |
	       (1ULL << VIRTIO_RING_F_INDIRECT_DESC) |
	       (1ULL << VIRTIO_NET_F_MQ) | (1ULL << VIRTIO_F_RING_PACKED);
}

static int ops_set_features(struct vhost_dev *dev, uint64_t f)
{
	(void)dev;
	/* a device may refuse: exercise the library's undo */
	return (f & (1ULL << VIRTIO_NET_F_MQ)) &&
			       !(f & (1ULL << VIRTIO_F_VERSION_1)) ?
		       -EINVAL :
		       0;
}

static int ops_queue_start(struct vhost_dev *dev, struct vhost_vq *vq)
{
	uint64_t n = vq->num;

	if (vq->packed.desc) {
		/* one descriptor ring and two event suppression areas */
		FUZZ_ASSERT(fuzz_region_of(&dev->mem, vq->packed.desc,
					   n * 16) >= 0,
			    "vq %u: packed descriptor ring outside guest memory",
			    vq->index);
		FUZZ_ASSERT(fuzz_region_of(&dev->mem, vq->packed.driver_event,
					   4) >= 0,
			    "vq %u: driver event area outside guest memory",
			    vq->index);
		FUZZ_ASSERT(fuzz_region_of(&dev->mem, vq->packed.device_event,
					   4) >= 0,
			    "vq %u: device event area outside guest memory",
			    vq->index);
		return vq->num == 2 ? -EIO : 0;
	}
	FUZZ_ASSERT(fuzz_region_of(&dev->mem, vq->split.desc, n * 16) >= 0,
		    "vq %u: descriptor table outside guest memory", vq->index);
	FUZZ_ASSERT(fuzz_region_of(&dev->mem, vq->split.avail, 4 + n * 2) >= 0,
		    "vq %u: avail ring outside guest memory", vq->index);
	FUZZ_ASSERT(fuzz_region_of(&dev->mem, vq->split.used, 4 + n * 8) >= 0,
		    "vq %u: used ring outside guest memory", vq->index);
	/* refuse one ring in a while: the library must leave it stopped */
	return vq->num == 2 ? -EIO : 0;
}

static void ops_queue_stop(struct vhost_dev *dev, struct vhost_vq *vq)
{
	(void)dev;
	(void)vq;
}

static int ops_send_rarp(struct vhost_dev *dev, const uint8_t mac[6])
{
	(void)dev;
	return mac[0] & 1 ? -EINVAL : 0;
}

static const struct vhost_dev_ops ops = {
	.get_features = ops_get_features,
	.set_features = ops_set_features,
	.queue_start = ops_queue_start,
	.queue_stop = ops_queue_stop,
	.send_rarp = ops_send_rarp,
};

static void log_quiet(enum vhost_log_level level, const char *msg, void *o)
{
	(void)level;
	(void)msg;
	(void)o;
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	vhost_log_set_level(VHOST_LOG_DEBUG); /* format every line */
	vhost_log_set_fn(log_quiet, NULL);
	return 0;
}

/* A descriptor of kind K (the frontend's copy: closed after sending). */
static int fd_make(struct fuzz_in *in, uint8_t k)
{
	int fds[2], fd;
	uint64_t size;

	switch (k % 8) {
	case 0: /* guest memory: 4 KiB .. 1 MiB */
	case 1:
		fd = memfd_create(MEMFD_NAME, MFD_CLOEXEC);
		size = ((uint64_t)fuzz_u8(in) + 1) * 4096;
		if (fd >= 0 && ftruncate(fd, (off_t)size)) {
			close(fd);
			fd = -1;
		}
		return fd;
	case 2: /* a memfd shorter than a page */
		fd = memfd_create(MEMFD_NAME, MFD_CLOEXEC);
		if (fd >= 0 && ftruncate(fd, fuzz_u8(in))) {
			close(fd);
			fd = -1;
		}
		return fd;
	case 3:
		return eventfd(0, EFD_CLOEXEC | (k & 8 ? EFD_NONBLOCK : 0));
	case 4: /* a pipe's read end (the frontend keeps nothing) */
	case 5: /* ... or its write end */
		if (pipe2(fds, O_CLOEXEC))
			return -1;
		close(fds[k % 8 == 4]);
		return fds[k % 8 == 5];
	case 6:
		return open("/dev/null", O_RDWR | O_CLOEXEC);
	default:
		if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds))
			return -1;
		close(fds[1]);
		return fds[0];
	}
}

static void drain(int fd)
{
	char buf[4096];

	while (recv(fd, buf, sizeof(buf), MSG_DONTWAIT) > 0)
		;
}

/* One record: false when the connection is gone (or the input ended). */
static bool send_record(struct fuzz_in *in, int fd)
{
	uint8_t msg[sizeof(struct vhost_user_hdr) + VHOST_USER_PAYLOAD_MAX];
	struct vhost_user_hdr hdr;
	unsigned int nfds, i, got = 0;
	int fds[VHOST_USER_MAX_FDS];
	size_t plen;
	ssize_t n;

	nfds = (fuzz_u8(in) & 0x0f) % (VHOST_USER_MAX_FDS + 1);
	for (i = 0; i < nfds; i++) {
		int f = fd_make(in, fuzz_u8(in));

		if (f >= 0)
			fds[got++] = f;
	}
	fuzz_bytes(in, &hdr, sizeof(hdr));
	memcpy(msg, &hdr, sizeof(hdr));
	/* an oversized size is sent as such: the backend must drop us */
	plen = hdr.size <= VHOST_USER_PAYLOAD_MAX ? hdr.size : 0;
	if (plen > in->n)
		plen = in->n;
	fuzz_bytes(in, msg + sizeof(hdr), plen);
	n = vnet_send_fds(fd, msg, sizeof(hdr) + plen, fds, got,
			  MSG_DONTWAIT | MSG_NOSIGNAL);
	for (i = 0; i < got; i++)
		close(fds[i]);
	return n > 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct fuzz_census before, after;
	static bool counted;
	struct fuzz_in in = { data, size };
	int sv[2], rounds = 0;
	struct vhost_dev dev;

	if (!counted) {
		fuzz_census(&before, MEMFD_NAME);
		counted = true;
	}

	if (vhost_dev_init(&dev, "fuzz", NR_VQS, &ops, NULL))
		abort();
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv))
		abort();
	if (vhost_dev_attach(&dev, sv[0]))
		abort();
	while (fuzz_left(&in) && rounds++ < 256) {
		bool sent = send_record(&in, sv[1]);

		if (vhost_dev_handle_input(&dev))
			break;
		drain(sv[1]);
		if (!sent)
			break;
	}
	vhost_dev_cleanup(&dev); /* closes sv[0] */
	close(sv[1]);

	fuzz_census(&after, MEMFD_NAME);
	fuzz_census_check(&before, &after);
	return 0;
}
