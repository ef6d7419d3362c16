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

/* A ring's entries in the maps: its counters, its queue state, its config. */
static void ring_maps(struct vnetd_port *p, struct vnetd_ring *r, int dir,
		      unsigned int q, const struct vnet_config *c,
		      const __u32 *frames, const __u32 *usecs)
{
	r->st = (struct vnet_dp_stats *)p->dps.mem + vnet_key(dir, q);
	r->qs = (const struct vnet_queue_state *)p->qs.mem + vnet_key(dir, q);
	r->cfg = c;
	r->cfg_frames = frames;
	r->cfg_usecs = usecs;
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
	/* checked against include/vnet/abi.h; kept until the port closes */
	ret = vnet_map_get(p->cfg.tap, VNET_MAP_QUEUES, VNET_MAP_MMAP, &p->qs,
			   &err);
	/* written only for tap_rx_frames, mirrored from ethtool -C */
	if (!ret)
		ret = vnet_map_get(p->cfg.tap, VNET_MAP_CONFIG, VNET_MAP_WRITE,
				   &p->config, &err);
	if (!ret)
		ret = vnet_map_get(p->cfg.tap, VNET_MAP_DP_STATS, VNET_MAP_WRITE,
				   &p->dps, &err);
	if (ret) {
		pr_err(p, "%s", err.msg);
		goto err;
	}

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
	vnet_map_put(&p->dps);
	vnet_map_put(&p->config);
	vnet_map_put(&p->qs);
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

