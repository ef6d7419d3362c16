// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* test_classify: the skeleton, stats snapshots, test-run hooks, frame specs */
#include "classify.h"


const char *const class_names[VNET_CLASS_MAX] = {
	[VNET_CLASS_URGENT] = "urgent",
	[VNET_CLASS_PUSH] = "push",
	[VNET_CLASS_ACK] = "ack",
	[VNET_CLASS_OTHER] = "other",
	[VNET_CLASS_MALFORMED] = "malformed",
};

struct vnet *skel;
int stats_fd = -1, queues_fd = -1;
int nr_cpus;
struct vnet_class_stats *percpu_stats;
struct hook hook_xdp, hook_tc_rx, hook_tc_tx;
uint8_t frame[FRAME_BUF_SIZE];
uint8_t rxbuf[FRAME_BUF_SIZE];

int snap_read(__u32 key, struct snap *s)
{
	const struct vnet_counter *c;
	int cpu, i, err;

	memset(s, 0, sizeof(*s));
	err = bpf_map_lookup_elem(stats_fd, &key, percpu_stats);
	if (err)
		return err;
	for (cpu = 0; cpu < nr_cpus; cpu++) {
		/* abi.h asserts the struct is an array of counters by class */
		c = (const struct vnet_counter *)&percpu_stats[cpu];
		for (i = 0; i < VNET_CLASS_MAX; i++) {
			s->c[i].packets += c[i].packets;
			s->c[i].bytes += c[i].bytes;
		}
	}
	return bpf_map_lookup_elem(queues_fd, &key, &s->q);
}

__u64 snap_packets(const struct snap *s)
{
	__u64 n = 0;
	int i;

	for (i = 0; i < VNET_CLASS_MAX; i++)
		n += s->c[i].packets;
	return n;
}

const char *moved_class(const struct snap *b, const struct snap *a)
{
	int i, moved = -1, nr = 0;

	for (i = 0; i < VNET_CLASS_MAX; i++) {
		if (a->c[i].packets != b->c[i].packets) {
			moved = i;
			nr++;
		}
	}
	if (!nr)
		return "none";
	return nr == 1 ? class_names[moved] : "several";
}

/*
 * WHAT's time FIELD of the queue, NOW after the run and THEN before: set
 * and not gone back when the run counted a frame of its kind (MOVED),
 * else unchanged
 */
static bool time_kept(const char *what, const char *field, __u64 now,
		      __u64 then, bool moved)
{
	char name[160];

	snprintf(name, sizeof(name), "%s: queues.%s", what, field);
	if (moved)
		return ASSERT_NEQ(now, 0, name) && ASSERT_GE(now, then, name);
	return ASSERT_EQ(now, then, name);
}

bool check_account(const char *what, const struct snap *b,
		   const struct snap *a, int expect, __u64 len)
{
	bool urgent = expect == VNET_CLASS_URGENT;
	bool push = expect == VNET_CLASS_PUSH;
	char name[96];
	bool ok;

	snprintf(name, sizeof(name), "%s: class", what);
	if (!ASSERT_STREQ(moved_class(b, a), class_names[expect], name))
		return false; /* the counters below would only repeat it */

	snprintf(name, sizeof(name), "%s: %s.packets", what,
		 class_names[expect]);
	ok = ASSERT_EQ(a->c[expect].packets - b->c[expect].packets, 1, name);
	snprintf(name, sizeof(name), "%s: %s.bytes", what,
		 class_names[expect]);
	ok &= ASSERT_EQ(a->c[expect].bytes - b->c[expect].bytes, len, name);

	snprintf(name, sizeof(name), "%s: queues.urgent", what);
	ok &= ASSERT_EQ(a->q.urgent - b->q.urgent, urgent, name);
	snprintf(name, sizeof(name), "%s: queues.push", what);
	ok &= ASSERT_EQ(a->q.push - b->q.push, push, name);
	/*
	 * The times are kept to the jiffy (the clock is read when the jiffy
	 * changed): set and never going back; test_queue_timestamps checks
	 * that a frame in a new jiffy is timed precisely.
	 */
	ok &= time_kept(what, "last_urgent_ns", a->q.last_urgent_ns,
			b->q.last_urgent_ns, urgent);
	ok &= time_kept(what, "last_push_ns", a->q.last_push_ns,
			b->q.last_push_ns, push);
	snprintf(name, sizeof(name), "%s: queues.first_seen_ns", what);
	ok &= ASSERT_NEQ(a->q.first_seen_ns, 0, name);
	return ok;
}

bool run_hook(const struct hook *h, const void *data, size_t size,
	      void *ctx, size_t ctx_size, __u32 key, int expect,
	      __u64 bytes)
{
	LIBBPF_OPTS(bpf_test_run_opts, opts, .data_in = data,
		    .data_size_in = (__u32)size, .ctx_in = ctx,
		    .ctx_size_in = (__u32)ctx_size, .repeat = 1);
	struct snap before, after;
	char name[96];
	int err;

	snprintf(name, sizeof(name), "%s: read maps", h->name);
	if (!ASSERT_OK(snap_read(key, &before), name))
		return false;
	err = bpf_prog_test_run_opts(h->fd, &opts);
	snprintf(name, sizeof(name), "%s: test_run", h->name);
	if (!ASSERT_OK(err, name))
		return false;
	snprintf(name, sizeof(name), "%s: retval", h->name);
	ASSERT_EQ(opts.retval, h->retval, name);
	snprintf(name, sizeof(name), "%s: read maps", h->name);
	if (!ASSERT_OK(snap_read(key, &after), name))
		return false;
	return check_account(h->name, &before, &after, expect, bytes);
}

/* specs built in code (the tap cases) */

struct frame_spec tcp6(uint8_t flags, size_t payload)
{
	struct frame_spec s = tcp4(flags, payload);

	s.ethertype = ETH_P_IPV6;
	return s;
}

void add_ext(struct frame_spec *s, uint8_t type, uint8_t len)
{
	s->ext[s->nr_ext].type = type;
	s->ext[s->nr_ext].len = len;
	s->nr_ext++;
}

void add_vlan(struct frame_spec *s, uint16_t tpid, uint16_t vid)
{
	s->vlan_tpid[s->nr_vlans] = tpid;
	s->vlan_tci[s->nr_vlans] = vid;
	s->nr_vlans++;
}
