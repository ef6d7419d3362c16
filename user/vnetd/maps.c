// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * vnet's BPF side of a port: the classifier and policy programs attached
 * to the tap (or the pins of an earlier attach), the pinned maps the
 * datapath reads and writes (mmapped), and vnetd's steering program.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <linux/if_tun.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "vnetd.h"
#include "steer_flow.skel.h"

static int map_mmap(struct vnetd_port *p, const char *name, size_t vsize,
		    bool write, struct vnetd_map *map)
{
	struct bpf_map_info info = {};
	__u32 ilen = sizeof(info);
	struct vnet_err err = {};
	long page = sysconf(_SC_PAGESIZE);
	void *m = NULL;
	size_t sz;
	int fd;

	fd = vnet_map_open(p->cfg.tap, name, &err);
	if (fd < 0) {
		pr_err(p, "%s", err.msg);
		return fd;
	}
	if (bpf_obj_get_info_by_fd(fd, &info, &ilen)) {
		pr_err(p, "map %s: %s", name, strerror(errno));
		goto out;
	}
	if (info.value_size != vsize || !(info.map_flags & BPF_F_MMAPABLE) ||
	    info.max_entries < VNET_DIR_MAX * VNET_MAX_QUEUES / 2) {
		pr_err(p, "map %s: value size %u, flags 0x%x, %u entries: not the layout this vnetd was built for (include/vnet/abi.h); detach and attach again",
		       name, info.value_size, info.map_flags, info.max_entries);
		goto out;
	}
	sz = (size_t)info.value_size * info.max_entries;
	sz = (sz + page - 1) / page * page;
	m = mmap(NULL, sz, PROT_READ | (write ? PROT_WRITE : 0), MAP_SHARED,
		 fd, 0);
	if (m == MAP_FAILED) {
		pr_err(p, "map %s: mmap: %s", name, strerror(errno));
		m = NULL;
		goto out;
	}
	map->addr = m;
	map->len = sz;
out:
	close(fd);
	return m ? 0 : -EINVAL;
}

/* A ring's entries in the maps: its counters, its queue state, its config. */
static void ring_maps(struct vnetd_port *p, struct vnetd_ring *r, int dir,
		      unsigned int q, const struct vnet_config *c,
		      const __u32 *frames, const __u32 *usecs)
{
	r->st = (struct vnet_dp_stats *)p->dps.addr + vnet_key(dir, q);
	r->qs = (const struct vnet_queue_state *)p->qs.addr + vnet_key(dir, q);
	r->cfg = c;
	r->cfg_frames = frames;
	r->cfg_usecs = usecs;
}

static void map_unmap(struct vnetd_map *map)
{
	if (map->addr)
		munmap(map->addr, map->len);
	map->addr = NULL;
	map->len = 0;
}

/*
 * Attach vnet's programs like `vnetctl attach` (or take the pins that are
 * there), map the maps the datapath reads and writes, and install the
 * steering program.  The caller is in the tap's network namespace.
 */
int vnetd_bpf_setup(struct vnetd_port *p)
{
	struct vnet_err err = {};
	int ret, fd;
	unsigned int q;

	ret = vnet_attach(p->cfg.tap, NULL, &err);
	if (ret == -EALREADY) {
		pr_info(p, "tap %s: vnet already attached, using its pins",
			p->cfg.tap);
	} else if (ret) {
		pr_err(p, "%s", err.msg);
		return ret;
	} else {
		p->attached = true;
		pr_info(p, "tap %s: vnet attached (pins in %s/%s)", p->cfg.tap,
			VNET_PIN_ROOT, p->cfg.tap);
	}
	ret = map_mmap(p, "queues", sizeof(struct vnet_queue_state), false,
		       &p->qs);
	/* written only for tap_rx_frames, mirrored from ethtool -C */
	if (!ret)
		ret = map_mmap(p, "config", sizeof(struct vnet_config), true,
			       &p->config);
	if (!ret)
		ret = map_mmap(p, "dp_stats", sizeof(struct vnet_dp_stats), true,
			       &p->dps);
	if (ret)
		goto err;

	p->steer = steer_flow__open_and_load();
	if (!p->steer) {
		ret = -errno;
		pr_err(p, "cannot load the steering program: %s",
		       strerror(errno));
		goto err;
	}
	fd = bpf_program__fd(p->steer->progs.vnetd_steer);
	if (ioctl(p->qp[0].io.fd, TUNSETSTEERINGEBPF, &fd)) {
		ret = -errno;
		pr_err(p, "tap %s: TUNSETSTEERINGEBPF: %s", p->cfg.tap,
		       strerror(errno));
		goto err;
	}
	for (q = 0; q < p->nr_qp; q++) {
		const struct vnet_config *c = vnetd_config(p, q);

		ring_maps(p, &p->qp[q].tx.r, VNET_DIR_TX, q, c, &c->tx_frames,
			  &c->tx_usecs);
		ring_maps(p, &p->qp[q].rx.r, VNET_DIR_RX, q, c, &c->rx_frames,
			  &c->rx_usecs);
	}
	return 0;

err:
	vnetd_bpf_cleanup(p);
	return ret;
}

/* Undo vnetd_bpf_setup(); the caller is in the tap's network namespace. */
void vnetd_bpf_cleanup(struct vnetd_port *p)
{
	struct vnet_err err = {};
	int off = -1;

	if (p->steer) {
		if (p->qp[0].io.fd >= 0)
			ioctl(p->qp[0].io.fd, TUNSETSTEERINGEBPF, &off);
		steer_flow__destroy(p->steer);
		p->steer = NULL;
	}
	map_unmap(&p->dps);
	map_unmap(&p->config);
	map_unmap(&p->qs);
	if (p->attached) {
		if (vnet_detach(p->cfg.tap, &err))
			pr_warn(p, "%s", err.msg);
		else
			pr_info(p, "tap %s: vnet detached", p->cfg.tap);
		p->attached = false;
	}
}

/*
 * Queue pair QP's RX ring is (ON) or is no longer served: spread the flows
 * over the served ones.  The program reads nr_active, then an entry; a
 * reader racing with this sees a list that is briefly stale, never an
 * entry out of range.
 */
void vnetd_steer_update(struct vnetd_port *p, struct vnetd_qp *qp, bool on)
{
	unsigned int q, n = 0;

	if (!p->steer)
		return;
	pthread_mutex_lock(&p->steer_lock);
	qp->steer_on = on;
	for (q = 0; q < p->nr_qp; q++)
		if (p->qp[q].steer_on)
			__atomic_store_n(&p->steer->bss->active[n++], q,
					 __ATOMIC_RELAXED);
	__atomic_store_n(&p->steer->bss->nr_active, n, __ATOMIC_RELEASE);
	pthread_mutex_unlock(&p->steer_lock);
}

