// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * vnet's BPF side of a port (tap_bpf.h): the classifier and policy programs
 * attached to the tap (or the pins of an earlier attach), the pinned maps
 * the datapath reads and writes (mmapped), and vnetd's steering program.
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

#include "tap_bpf.h"
#include "steer_flow.skel.h"
#include "base/util.h"
#include "libvnet.h"
#include "log.h"

void vnetd_maps_init(struct vnetd_maps *m, const char *name, const char *tap,
		     unsigned int nr_qp)
{
	memset(m, 0, sizeof(*m));
	m->name = name;
	m->tap = tap;
	m->nr_qp = nr_qp;
	m->qs = m->config = m->dps = m->limits = m->guard =
		(struct vnet_map)VNET_MAP_INIT;
	m->steer_fd = -1;
	pthread_mutex_init(&m->steer_lock, NULL);
}

void vnetd_maps_exit(struct vnetd_maps *m)
{
	pthread_mutex_destroy(&m->steer_lock);
}

/*
 * The info map's vnetd_socket: SOCK (the port's socket) or "", so that the
 * libvirt hook and vnetctl status find the tap a socket's port serves; and
 * vnetd_owner, this vnetd, when it attached vnet (or took a dead one's
 * attachment): what the next vnetd reads if this one dies before its stop
 */
static void info_socket(struct vnetd_maps *m, const char *sock)
{
	struct vnet_map im = VNET_MAP_INIT;
	struct vnet_info in;
	__u32 k = 0;

	if (vnet_map_get(m->tap, VNET_MAP_INFO, 0, &im, NULL))
		return;
	if (!bpf_map_lookup_elem(im.fd, &k, &in)) {
		snprintf(in.vnetd_socket, sizeof(in.vnetd_socket), "%s", sock);
		if (m->attached)
			in.vnetd_owner = (__u32)getpid();
		if (bpf_map_update_elem(im.fd, &k, &in, BPF_ANY))
			pr_warn(m, "tap %s: the info map: %s", m->tap,
				strerror(errno));
	}
	vnet_map_put(&im);
}

/*
 * The vm= key's name on pins that were there (an attach names the VM
 * itself); kept as it is without the key, as the limits are
 */
static void vm_name(struct vnetd_maps *m)
{
	struct vnet_err err = {};

	if (m->vm && vnet_vm_set(m->tap, m->vm, &err))
		pr_warn(m, "tap %s: its VM's name not set: %s", m->tap,
			err.msg);
}

/* Pins a vnetd attached that is gone (kill -9 before its stop)?  In ST. */
static bool orphaned(const struct vnetd_maps *m, struct vnet_status *st)
{
	__u32 owner;

	if (vnet_status(m->tap, st, NULL))
		return false;
	owner = st->info.vnetd_owner;
	return owner && owner != (__u32)getpid() && !vnet_vnetd_alive(owner);
}

/* Every program of the attachment in ST on the tap (a stop cut short may
 * have detached some) */
static bool attach_whole(const struct vnet_status *st)
{
	const struct vnet_hook_status *tx =
		st->info.tx_hook == VNET_HOOK_XDP ? &st->xdp : &st->tc_ingress;

	return tx->ifindex && st->tc_egress.ifindex &&
	       (st->info.rx_queue_src != VNET_RXQ_XMIT || st->xmit_attach);
}

/*
 * vnet on the tap, as `vnetctl attach` does it (m->attached: this vnetd
 * detaches it at its stop), or the pins that are there, taken as they
 * are (another attach's; a hand-over's, ADOPT).  The pins of a vnetd that
 * is gone are this one's: kept when whole, else attached anew.  The
 * caller is in the tap's network namespace.
 */
static int attach(struct vnetd_maps *m, bool adopt)
{
	struct vnet_attach_opts ao = { .vm = m->vm, .tc_attach = m->tc_attach };
	struct vnet_err err = {};
	struct vnet_status st;
	int ret;

	/* a hand-over: the programs are attached, their pins are there */
	ret = adopt ? -EALREADY : vnet_attach(m->tap, &ao, &err);
	if (ret == -EALREADY)
		vm_name(m);
	if (ret == -EALREADY && adopt) {
		pr_dbg(m, "tap %s: taking vnet's pins over", m->tap);
		return 0;
	}
	if (ret == -EALREADY && orphaned(m, &st)) {
		pr_info(m,
			"tap %s: vnet attached by vnetd %u, which is gone: %s",
			m->tap, st.info.vnetd_owner,
			attach_whole(&st) ? "its pins are this vnetd's now" :
					    "partly detached, attached again");
		if (attach_whole(&st)) {
			m->attached = true;
			return 0;
		}
		vnet_detach(m->tap, NULL);
		ret = vnet_attach(m->tap, &ao, &err);
	}
	if (ret == -EALREADY) {
		pr_info(m, "tap %s: vnet already attached, using its pins",
			m->tap);
		return 0;
	}
	if (ret) {
		pr_err(m, "%s", err.msg);
		return ret;
	}
	m->attached = true;
	pr_info(m, "tap %s: vnet attached (pins in %s/%s)", m->tap,
		VNET_PIN_ROOT, m->tap);
	return 0;
}

static int bpf_setup(struct vnetd_maps *m, int tap_fd, bool adopt,
		     uint32_t steer)
{
	struct vnet_err err = {};
	unsigned int q;
	int ret, fd;

	ret = attach(m, adopt);
	if (ret)
		return ret;
	/* checked against include/vnet/abi.h; kept until the port closes */
	ret = vnet_map_get(m->tap, VNET_MAP_QUEUES, VNET_MAP_MMAP, &m->qs,
			   &err);
	/* written only for tap_rx_frames, mirrored from ethtool -C */
	if (!ret)
		ret = vnet_map_get(m->tap, VNET_MAP_CONFIG, VNET_MAP_WRITE,
				   &m->config, &err);
	if (!ret)
		ret = vnet_map_get(m->tap, VNET_MAP_DP_STATS, VNET_MAP_WRITE,
				   &m->dps, &err);
	/* the port's keys write it once; vnetctl limit changes it live */
	if (!ret)
		ret = vnet_map_get(m->tap, VNET_MAP_LIMITS, VNET_MAP_WRITE,
				   &m->limits, &err);
	if (!ret)
		ret = vnet_map_get(m->tap, VNET_MAP_GUARD, 0, &m->guard, &err);
	if (ret) {
		pr_err(m, "%s", err.msg);
		goto err;
	}

	m->steer = steer_flow__open_and_load();
	if (!m->steer) {
		ret = -errno;
		pr_err(m, "cannot load the steering program: %s",
		       strerror(errno));
		goto err;
	}
	/* the RX rings the vnetd handing over serves: no flow moves */
	for (q = 0; q < m->nr_qp && q < 32; q++)
		if (steer & (1u << q))
			vnetd_steer_update(m, q, true);
	fd = bpf_program__fd(m->steer->progs.vnetd_steer);
	if (ioctl(tap_fd, TUNSETSTEERINGEBPF, &fd)) {
		ret = -errno;
		pr_err(m, "tap %s: TUNSETSTEERINGEBPF: %s", m->tap,
		       strerror(errno));
		goto err;
	}
	m->steer_fd = tap_fd;
	info_socket(m, m->name);
	return 0;

err:
	vnetd_bpf_cleanup(m);
	return ret;
}

int vnetd_bpf_setup(struct vnetd_maps *m, int tap_fd)
{
	return bpf_setup(m, tap_fd, false, 0);
}

int vnetd_bpf_adopt(struct vnetd_maps *m, int tap_fd, bool attached,
		    uint32_t steer)
{
	int ret = bpf_setup(m, tap_fd, true, steer);

	if (!ret)
		m->attached = attached;
	/* the owner is this vnetd now (info_socket()) */
	if (!ret && attached)
		info_socket(m, m->name);
	return ret;
}

static void bpf_cleanup(struct vnetd_maps *m, bool release)
{
	int off = -1;

	if (release)
		m->attached = false;
	/* pins that stay (another attach, or a hand-over's: it writes its own) */
	else if (!m->attached && m->steer)
		info_socket(m, "");
	if (m->steer) {
		/* released: the tap runs the new vnetd's program now */
		if (m->steer_fd >= 0 && !release)
			ioctl(m->steer_fd, TUNSETSTEERINGEBPF, &off);
		m->steer_fd = -1;
		steer_flow__destroy(m->steer);
		m->steer = NULL;
	}
	vnet_map_put(&m->dps);
	vnet_map_put(&m->limits);
	vnet_map_put(&m->guard);
	vnet_map_put(&m->config);
	vnet_map_put(&m->qs);
}

void vnetd_bpf_unpin(struct vnetd_maps *m)
{
	struct vnet_err err = {};

	if (!m->attached)
		return;
	/* the kernel detaches the links after this (attach.c) */
	if (vnet_detach_unpin(m->tap, &err))
		pr_warn(m, "%s", err.msg);
	else
		pr_info(m, "tap %s: vnet detached", m->tap);
	m->attached = false;
}

void vnetd_bpf_close(struct vnetd_maps *m)
{
	bpf_cleanup(m, false);
}

/* Undo vnetd_bpf_setup(); the caller is in the tap's network namespace. */
void vnetd_bpf_cleanup(struct vnetd_maps *m)
{
	bpf_cleanup(m, false);
	vnetd_bpf_unpin(m);
}

void vnetd_bpf_release(struct vnetd_maps *m)
{
	bpf_cleanup(m, true);
}

/*
 * Queue pair QP's RX ring is (ON) or is no longer served: spread the flows
 * over the served ones (M NULL, or no program: nothing to do).  The program reads nr_active, then an entry; a
 * reader racing with this sees a list that is briefly stale, never an
 * entry out of range.
 */
void vnetd_steer_update(struct vnetd_maps *m, unsigned int qp, bool on)
{
	unsigned int q, n = 0;

	if (!m || !m->steer || qp >= m->nr_qp)
		return;
	pthread_mutex_lock(&m->steer_lock);
	m->steer_on[qp] = on;
	for (q = 0; q < m->nr_qp; q++)
		if (m->steer_on[q])
			__atomic_store_n(&m->steer->bss->active[n++], q,
					 __ATOMIC_RELAXED);
	__atomic_store_n(&m->steer->bss->nr_active, n, __ATOMIC_RELEASE);
	pthread_mutex_unlock(&m->steer_lock);
}

/*
 * tun's rx-frames changed (a direct ethtool -C): it is vnetd's TX batch,
 * in every queue's entry; the config map is written for this alone.
 */
void vnetd_maps_tap_rx_frames(struct vnetd_maps *m, __u32 v)
{
	unsigned int q;

	for (q = 0; q < VNET_MAX_QUEUES; q++) {
		struct vnet_config *c = vnetd_config(m, q);

		if (__atomic_load_n(&c->tap_rx_frames, __ATOMIC_RELAXED) == v)
			continue;
		__atomic_store_n(&c->tap_rx_frames, v, __ATOMIC_RELAXED);
		__atomic_fetch_add(&c->gen, 1, __ATOMIC_RELEASE);
	}
	pr_info(m, "tap %s: rx-frames %u (ethtool): TX batch follows", m->tap,
		v);
}

