// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * The virtio-net device on top of the vhost-user library (device.h,
 * struct vhost_dev_ops): the features it offers, what follows from the
 * negotiated ones (the header size and the tap's offloads), the
 * frontend's MTU, handing rings to the queue-pair threads and taking them
 * back, and RARP announcements.  Every callback runs on the control
 * thread.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <net/ethernet.h>
#include <net/if_arp.h>
#include <netinet/if_ether.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <linux/virtio_config.h>
#include <linux/virtio_net.h>
#include <linux/virtio_ring.h>

#include "device.h"
#include "mailbox.h"
#include "vu_dev.h"
#include "base/util.h"
#include "log.h"
#include "tap/tap.h"
#include "vhost_user.h"

static struct vnetd_device *dev_net(struct vhost_dev *dev)
{
	return dev->priv;
}

static struct vnetd_qp *vq_qp(struct vnetd_device *d, struct vhost_vq *vq)
{
	unsigned int q = vq->index / 2;

	return q < d->nr_qp ? &d->qp[q] : NULL;
}

static const char *vq_dir(const struct vhost_vq *vq)
{
	return vq->index & 1 ? "TX" : "RX";
}

#define F(bit) (1ULL << (bit))

static uint64_t net_get_features(struct vhost_dev *dev)
{
	struct vnetd_device *d = dev_net(dev);
	uint64_t f;

	f = F(VIRTIO_F_VERSION_1) | F(VIRTIO_RING_F_EVENT_IDX) |
	    F(VIRTIO_RING_F_INDIRECT_DESC) | F(VIRTIO_NET_F_MRG_RXBUF) |
	    F(VIRTIO_NET_F_CSUM) | F(VIRTIO_NET_F_GUEST_CSUM) |
	    F(VIRTIO_NET_F_HOST_TSO4) | F(VIRTIO_NET_F_HOST_TSO6) |
	    F(VIRTIO_NET_F_HOST_ECN) | F(VIRTIO_NET_F_GUEST_TSO4) |
	    F(VIRTIO_NET_F_GUEST_TSO6) | F(VIRTIO_NET_F_GUEST_ECN) |
	    F(VIRTIO_NET_F_GUEST_ANNOUNCE) | F(VIRTIO_NET_F_MTU);
	if (d->nr_qp > 1)
		f |= F(VIRTIO_NET_F_MQ);
	if (d->packed)
		f |= F(VIRTIO_F_RING_PACKED);
	return f;
}

/*
 * The header size follows from the features; the tap and every queue
 * pair take it over (every ring is stopped).
 */
static int net_set_features(struct vhost_dev *dev, uint64_t features)
{
	struct vnetd_device *d = dev_net(dev);
	bool mrg = features & F(VIRTIO_NET_F_MRG_RXBUF);
	unsigned int hdr, q;
	int ret;

	hdr = (features & F(VIRTIO_F_VERSION_1)) || mrg ?
		      sizeof(struct virtio_net_hdr_mrg_rxbuf) :
		      sizeof(struct virtio_net_hdr);
	ret = vnetd_tap_set_vnet(d->tap, features, hdr);
	if (ret)
		return ret;
	d->features = features;
	d->hdr_len = hdr;
	d->mrg = mrg;
	for (q = 0; q < d->nr_qp; q++) {
		d->qp[q].hdr_len = hdr;
		d->qp[q].mrg = mrg;
	}
	return 0;
}

/* vhost-user-net counts queue pairs, not rings */
static uint64_t net_get_queue_num(struct vhost_dev *dev)
{
	return dev_net(dev)->nr_qp;
}

static int net_queue_start(struct vhost_dev *dev, struct vhost_vq *vq)
{
	struct vnetd_device *d = dev_net(dev);
	struct vnetd_qp *qp = vq_qp(d, vq);

	if (!qp || !qp->thread_ok)
		return -EINVAL;
	if (d->post_starts) {
		vnetd_qp_post(qp, VNETD_CMD_START, vq);
		return 0;
	}
	vnetd_qp_cmd(qp, VNETD_CMD_START, vq);
	pr_dbg(d, "queue pair %u: %s ring (vq %u) started", qp->index,
	       vq_dir(vq), vq->index);
	return 0;
}

void vnetd_device_wait(struct vnetd_device *d)
{
	unsigned int q;

	for (q = 0; q < d->nr_qp; q++)
		if (d->qp[q].thread_ok)
			vnetd_qp_wait(&d->qp[q]);
}

static void net_queue_stop(struct vhost_dev *dev, struct vhost_vq *vq)
{
	struct vnetd_device *d = dev_net(dev);
	struct vnetd_qp *qp = vq_qp(d, vq);

	if (!qp || !qp->thread_ok)
		return;
	vnetd_qp_cmd(qp, VNETD_CMD_STOP, vq);
	pr_dbg(d, "queue pair %u: %s ring (vq %u) stopped", qp->index,
	       vq_dir(vq), vq->index);
}

/* Rings are stopped around it and re-translate their addresses at start. */
static void net_mem_changed(struct vhost_dev *dev)
{
	pr_dbg(dev_net(dev), "guest memory: %u region%s", dev->mem.nregions,
	       dev->mem.nregions == 1 ? "" : "s");
}

/* A RARP frame as QEMU's qemu_announce_self() sends it (RFC 903). */
struct rarp_frame {
	struct ether_header eth;
	struct ether_arp arp;
	uint8_t pad[ETH_ZLEN - sizeof(struct ether_header) -
		    sizeof(struct ether_arp)];
} __attribute__((packed));

/*
 * SEND_RARP (after a migration): a "reverse request" from the guest's MAC,
 * broadcast, written into the tap as if the guest sent it, so that bridges
 * and switches learn where the MAC now lives.
 */
static int net_send_rarp(struct vhost_dev *dev, const uint8_t mac[6])
{
	struct vnetd_device *d = dev_net(dev);
	uint8_t hdr[sizeof(struct virtio_net_hdr_mrg_rxbuf)] = {};
	struct rarp_frame f = {};
	struct iovec iov[2] = {
		{ .iov_base = hdr, .iov_len = d->hdr_len ? d->hdr_len : 10 },
		{ .iov_base = &f, .iov_len = sizeof(f) },
	};
	int ret;

	memset(f.eth.ether_dhost, 0xff, ETH_ALEN);
	memcpy(f.eth.ether_shost, mac, ETH_ALEN);
	f.eth.ether_type = htons(ETHERTYPE_REVARP);
	f.arp.arp_hrd = htons(ARPHRD_ETHER);
	f.arp.arp_pro = htons(ETHERTYPE_IP);
	f.arp.arp_hln = ETH_ALEN;
	f.arp.arp_pln = 4;
	f.arp.arp_op = htons(ARPOP_RREQUEST);
	/* sender and target: the MAC, IP addresses 0.0.0.0 */
	memcpy(f.arp.arp_sha, mac, ETH_ALEN);
	memcpy(f.arp.arp_tha, mac, ETH_ALEN);
	ret = vnetd_tap_write(d->tap, iov, 2);
	if (ret < 0) {
		pr_err(d, "RARP for %02x:%02x:%02x:%02x:%02x:%02x: %s", mac[0],
		       mac[1], mac[2], mac[3], mac[4], mac[5], strerror(-ret));
		return ret;
	}
	pr_info(d, "RARP sent for %02x:%02x:%02x:%02x:%02x:%02x", mac[0],
		mac[1], mac[2], mac[3], mac[4], mac[5]);
	return 0;
}

/* NET_SET_MTU: the guest's MTU (QEMU's host_mtu) is the tap's */
static int net_set_mtu(struct vhost_dev *dev, unsigned int mtu)
{
	return vnetd_tap_set_mtu(dev_net(dev)->tap, mtu);
}

static void net_disconnected(struct vhost_dev *dev)
{
	struct vnetd_device *d = dev_net(dev);

	/* the next guest negotiates afresh: nothing towards it meanwhile */
	vnetd_tap_reset(d->tap);
	d->features = 0;
}

static const struct vhost_dev_ops vnetd_net_ops = {
	.get_features = net_get_features,
	.set_features = net_set_features,
	.get_queue_num = net_get_queue_num,
	.queue_start = net_queue_start,
	.queue_stop = net_queue_stop,
	.mem_changed = net_mem_changed,
	.send_rarp = net_send_rarp,
	.set_mtu = net_set_mtu,
	.disconnected = net_disconnected,
};

void vnetd_device_init(struct vnetd_device *d, const char *name, bool packed,
		       struct vnetd_tap *tap, struct vnetd_qp *qp,
		       unsigned int nr_qp)
{
	memset(d, 0, sizeof(*d));
	d->name = name;
	d->packed = packed;
	d->tap = tap;
	d->qp = qp;
	d->nr_qp = nr_qp;
	/* until the first negotiation */
	d->hdr_len = sizeof(struct virtio_net_hdr_mrg_rxbuf);
}

/*
 * The journal's file for the port's socket PATH: VNETD_RUN_DIR/ESC.rings,
 * ESC the path escaped as systemd-escape --path does ('/' to '-', other
 * bytes but [A-Za-z0-9_.] to \xNN), so that each socket has its own.
 */
static int journal_path(char *out, size_t len, const char *path)
{
	size_t n = (size_t)snprintf(out, len, "%s/", VNETD_RUN_DIR);
	const unsigned char *c = (const unsigned char *)path;

	while (*c == '/')
		c++;
	for (; *c && n + 8 < len; c++) {
		if (*c == '/')
			out[n++] = '-';
		else if ((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') ||
			 (*c >= '0' && *c <= '9') || *c == '_' ||
			 (*c == '.' && n > strlen(VNETD_RUN_DIR) + 1))
			out[n++] = (char)*c;
		else
			n += (size_t)snprintf(out + n, len - n, "\\x%02x", *c);
	}
	if (*c || n + 7 >= len)
		return -ENAMETOOLONG;
	snprintf(out + n, len - n, ".rings");
	return 0;
}

/*
 * A packed ring keeps where it is in a journal that outlives vnetd
 * (user/vhost/journal.c): without one, a packed-ring guest has no network
 * after vnetd restarts until its driver resets the device.
 */
static void journal_open(struct vnetd_device *d)
{
	int ret;

	d->journal[0] = '\0';
	ret = journal_path(d->journal, sizeof(d->journal), d->name);
	if (!ret && mkdir(VNETD_RUN_DIR, 0755) && errno != EEXIST)
		ret = -errno;
	if (!ret)
		ret = vhost_dev_journal_open(&d->dev, d->journal);
	if (ret) {
		pr_warn(d, "no ring journal (%s: %s): packed rings will not survive a restart of vnetd; create %s",
			d->journal[0] ? d->journal : "name", strerror(-ret),
			VNETD_RUN_DIR);
		d->journal[0] = '\0';
	}
}

static void journal_close(struct vnetd_device *d)
{
	/* kept while a frontend may come back to it */
	if (!vhost_dev_journal_close(&d->dev) && d->journal[0])
		unlink(d->journal);
	d->journal[0] = '\0';
}

int vnetd_device_open(struct vnetd_device *d)
{
	unsigned int q;
	int ret;

	ret = vhost_dev_init(&d->dev, d->name, 2 * d->nr_qp, &vnetd_net_ops,
			     d);
	if (ret) {
		pr_err(d, "vhost device: %s", strerror(-ret));
		return ret;
	}
	d->ok = true;
	if (d->packed)
		journal_open(d);
	/* the watchdog looks at the rings through it (mailbox.c) */
	for (q = 0; q < d->nr_qp; q++)
		d->qp[q].dev = &d->dev;
	return 0;
}

void vnetd_device_close(struct vnetd_device *d)
{
	unsigned int q;

	if (!d->ok)
		return;
	for (q = 0; q < d->nr_qp; q++)
		d->qp[q].dev = NULL;
	journal_close(d);
	vhost_dev_cleanup(&d->dev);
	d->ok = false;
}
