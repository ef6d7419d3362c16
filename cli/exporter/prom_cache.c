// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * The exporter's devices, kept open between scrapes.  Opening a tap's pins
 * (a status read, then every map: about 70 bpf() calls) is what a scrape
 * cost per tap; kept open, a scrape reads each tap with a stat of its info
 * pin (a new attach pins a new map: the inode changes, and the entry is
 * opened again), its link's info (present: the link still has its device),
 * the info entry, the stats in one batch a direction, the guard entry and
 * its counters; and its VM's name from the vm map, kept mapped: its gen
 * read in memory, the label built again only when it changed.  A tap
 * whose pins went away, or that is not listed any more, is closed.  Taps
 * attached without a link (legacy tc) are read the long way at every
 * scrape (prom.c).
 */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "libvnet.h"
#include "prom_cache.h"

struct cdev {
	char name[IF_NAMESIZE];
	ino_t info_ino; /* the info pin's inode when opened */
	int link_fd;    /* a link of the tap: its info says whether present */
	int info_fd, stats_fd, guard_fd, gstats_fd;
	struct vnet_map qm, dpm; /* queues and dp_stats, mmapped */
	struct vnet_map vmm;     /* vm, mmapped (none: attached without) */
	__u32 vm_gen;            /* the vm entry's gen the label is of */
	char vm[PROM_VM_LABEL_MAX];
	char netns[NAME_MAX + 1];
	bool listed; /* in this scrape's list */
};

static struct cdev *devs;
static int ndevs;

static void cdev_close(struct cdev *c)
{
	int *fds[] = { &c->link_fd, &c->info_fd, &c->stats_fd, &c->guard_fd,
		       &c->gstats_fd };

	for (size_t i = 0; i < sizeof(fds) / sizeof(fds[0]); i++) {
		if (*fds[i] >= 0)
			close(*fds[i]);
		*fds[i] = -1;
	}
	vnet_map_put(&c->qm);
	vnet_map_put(&c->dpm);
	vnet_map_put(&c->vmm);
	c->name[0] = '\0';
}

static ino_t info_ino(const char *name)
{
	char path[PATH_MAX];
	struct stat sb;

	if (vnet_pin_path(path, sizeof(path), name, "info") || stat(path, &sb))
		return 0;
	return sb.st_ino;
}

static int pin_get(const char *name, const char *obj)
{
	char path[PATH_MAX];

	return vnet_pin_path(path, sizeof(path), name, obj) ? -1 :
							      bpf_obj_get(path);
}

static int map_fd(const char *name, enum vnet_map_id id)
{
	struct vnet_map m = VNET_MAP_INIT;

	return vnet_map_get(name, id, 0, &m, NULL) ? -1 : m.fd;
}

/* C opened for NAME (a present tap with a link): 0, or -1 */
static int cdev_open(struct cdev *c, const char *name)
{
	static const char *const links[] = { VNET_PIN_LINK_TC_EGRESS,
					     VNET_PIN_LINK_TC_INGRESS,
					     VNET_PIN_LINK_XDP };
	struct vnet_status st;

	memset(c, 0, sizeof(*c));
	c->link_fd = c->info_fd = c->stats_fd = c->guard_fd = c->gstats_fd = -1;
	c->qm = (struct vnet_map)VNET_MAP_INIT;
	c->dpm = (struct vnet_map)VNET_MAP_INIT;
	c->vmm = (struct vnet_map)VNET_MAP_INIT;
	c->vm_gen = 1; /* odd: no entry has it, the first read builds */
	if (vnet_status(name, &st, NULL) || !st.present)
		return -1;
	snprintf(c->name, sizeof(c->name), "%s", name);
	c->info_ino = info_ino(name);
	for (size_t i = 0; i < 3 && c->link_fd < 0; i++)
		c->link_fd = pin_get(name, links[i]);
	if (!st.info.netns_ino ||
	    vnet_netns_name(st.info.netns_ino, c->netns, sizeof(c->netns)))
		c->netns[0] = '\0';
	c->info_fd = map_fd(name, VNET_MAP_INFO);
	c->stats_fd = map_fd(name, VNET_MAP_STATS);
	c->guard_fd = map_fd(name, VNET_MAP_GUARD);
	c->gstats_fd = map_fd(name, VNET_MAP_GUARD_STATS);
	/* attached by a vnet without the vm map: no label */
	vnet_map_get(name, VNET_MAP_VM, VNET_MAP_MMAP, &c->vmm, NULL);
	if (c->link_fd < 0 || !c->info_ino || c->info_fd < 0 ||
	    c->stats_fd < 0 ||
	    vnet_map_get(name, VNET_MAP_QUEUES, VNET_MAP_MMAP, &c->qm, NULL) ||
	    vnet_map_get(name, VNET_MAP_DP_STATS, VNET_MAP_MMAP, &c->dpm,
			 NULL)) {
		cdev_close(c);
		return -1;
	}
	return 0;
}

static struct cdev *cdev_find(const char *name)
{
	for (int i = 0; i < ndevs; i++)
		if (!strcmp(devs[i].name, name))
			return &devs[i];
	return NULL;
}

/* a free entry, the table grown when there is none */
static struct cdev *cdev_slot(void)
{
	struct cdev *n;

	for (int i = 0; i < ndevs; i++)
		if (!devs[i].name[0])
			return &devs[i];
	n = realloc(devs, sizeof(*devs) * (size_t)(ndevs + 16));
	if (!n)
		return NULL;
	devs = n;
	for (int i = ndevs; i < ndevs + 16; i++) {
		memset(&devs[i], 0, sizeof(devs[i]));
		devs[i].link_fd = devs[i].info_fd = devs[i].stats_fd = -1;
		devs[i].guard_fd = devs[i].gstats_fd = -1;
		devs[i].qm = (struct vnet_map)VNET_MAP_INIT;
		devs[i].dpm = (struct vnet_map)VNET_MAP_INIT;
		devs[i].vmm = (struct vnet_map)VNET_MAP_INIT;
	}
	ndevs += 16;
	return &devs[ndevs - 16];
}

static bool cdev_present(const struct cdev *c)
{
	struct bpf_link_info li;
	__u32 len = sizeof(li);

	memset(&li, 0, sizeof(li));
	/* xdp and tcx link info both start with the ifindex */
	return !bpf_obj_get_info_by_fd(c->link_fd, &li, &len) && li.xdp.ifindex;
}

/* the guard's entry and its counters: one lookup, one batch */
static void guard_read(const struct cdev *c, struct prom_dev *d)
{
	int ncpu = libbpf_num_possible_cpus();
	__u32 keys[VNET_GUARD_R_MAX] = { 0 }, n = VNET_GUARD_R_MAX, out, k = 0;
	struct vnet_counter *per;
	struct vnet_guard g;

	d->guard_ok = c->guard_fd >= 0 && c->gstats_fd >= 0 &&
		      !bpf_map_lookup_elem(c->guard_fd, &k, &g);
	if (!d->guard_ok || ncpu <= 0)
		return;
	per = calloc((size_t)ncpu * VNET_GUARD_R_MAX, sizeof(*per));
	if (!per || (bpf_map_lookup_batch(c->gstats_fd, NULL, &out, keys, per,
					  &n, NULL) &&
		     errno != ENOENT))
		n = 0;
	for (k = 0; k < n && keys[k] < VNET_GUARD_R_MAX; k++) {
		for (int i = 0; i < ncpu; i++) {
			d->guard[keys[k]].packets += per[k * ncpu + i].packets;
			d->guard[keys[k]].bytes += per[k * ncpu + i].bytes;
		}
	}
	d->guard_ok = n == VNET_GUARD_R_MAX;
	free(per);
}

/* escaped as prom.c's label() writes a value; what does not fit is left out */
void prom_vm_label(char *buf, size_t len, const char *name)
{
	size_t o = 0;

	buf[0] = '\0';
	if (!*name || len < sizeof(",vm=\"\""))
		return;
	o = (size_t)snprintf(buf, len, ",vm=\"");
	for (; *name && o + 3 < len; name++) {
		if (*name == '\\' || *name == '"' || *name == '\n')
			buf[o++] = '\\';
		buf[o++] = *name == '\n' ? 'n' : *name;
	}
	buf[o++] = '"';
	buf[o] = '\0';
}

/* D's vm label: C's, built again when the entry's gen changed */
static void vm_read(struct cdev *c, struct prom_dev *d)
{
	const struct vnet_vm *e = c->vmm.mem;
	struct vnet_vm v;

	if (e && __atomic_load_n(&e->gen, __ATOMIC_ACQUIRE) != c->vm_gen &&
	    !vnet_vm_read(e, &v)) {
		prom_vm_label(c->vm, sizeof(c->vm), v.name);
		c->vm_gen = v.gen;
	}
	memcpy(d->vm, c->vm, strlen(c->vm) + 1);
}

int prom_cache_read(const char *name, struct prom_dev *d)
{
	struct vnet_info in;
	struct cdev *c = cdev_find(name);
	__u32 k = 0;

	d->dp = NULL; /* D is a kept room: nothing of the last scrape stays */
	d->dp_mapped = false;

	if (c && info_ino(name) != c->info_ino)
		cdev_close(c); /* attached again: new maps */
	if (!c || !c->name[0]) {
		c = cdev_slot();
		if (!c || cdev_open(c, name))
			return -1;
	}
	c->listed = true;
	if (!cdev_present(c))
		return 0;
	/* every field set below (the snapshot by vnet_stats_fill) */
	memset(d->guard, 0, sizeof(d->guard));
	d->nrows = 0;
	snprintf(d->name, sizeof(d->name), "%s", name);
	snprintf(d->netns, sizeof(d->netns), "%s", c->netns);
	vm_read(c, d);
	if (bpf_map_lookup_elem(c->info_fd, &k, &in) ||
	    vnet_stats_fill(c->stats_fd, c->qm.mem, &d->snap))
		return -1;
	d->served = in.vnetd_socket[0] != '\0';
	/* the map's own values, read where they are (vnetd writes them) */
	d->dp = c->dpm.mem;
	d->dp_mapped = true;
	guard_read(c, d);
	return 1;
}

void prom_cache_begin(void)
{
	for (int i = 0; i < ndevs; i++)
		devs[i].listed = false;
}

void prom_cache_end(void)
{
	for (int i = 0; i < ndevs; i++)
		if (devs[i].name[0] && !devs[i].listed)
			cdev_close(&devs[i]);
}
