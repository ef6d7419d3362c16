/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/* test_classify: what its files share (see test_classify.c) */
#ifndef VNET_SELFTESTS_CLASSIFY_H
#define VNET_SELFTESTS_CLASSIFY_H

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <net/if.h>
#include <linux/if_link.h>
#include <linux/if_packet.h>
#include <linux/if_tun.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include <vnet/abi.h>
#include "vnet.skel.h"

#include "test.h"
#include "frames.h"

/* ---- classify_lib.c ---- */

#define TC_ACT_UNSPEC (-1)

/* big enough for a 60 KB GSO frame plus its virtio_net_hdr */
#define FRAME_BUF_SIZE (64 * 1024)
/* largest frame the test-run cases use: fits in one page of linear data */
#define TEST_RUN_MAX 3500
#define GSO_FRAME_LEN 60000
#define JUMBO_FRAME_LEN 9000
#define TAP_QUEUES 4

extern const char *const class_names[VNET_CLASS_MAX];

struct hook {
	const char *name;
	int fd;
	__u32 dir;
	__u32 retval;
};

extern struct vnet *skel;
extern int stats_fd, queues_fd;
extern int nr_cpus;
extern struct vnet_class_stats *percpu_stats;
extern struct hook hook_xdp, hook_tc_rx, hook_tc_tx;
extern uint8_t frame[FRAME_BUF_SIZE];
extern uint8_t rxbuf[FRAME_BUF_SIZE];

/* Counters of one (dir, queue) key, summed over the CPUs. */
struct snap {
	struct vnet_counter c[VNET_CLASS_MAX];
	struct vnet_queue_state q;
};

int snap_read(__u32 key, struct snap *s);

__u64 snap_packets(const struct snap *s);

/* "urgent", or "none", or "several" when more than one class moved */
const char *moved_class(const struct snap *b, const struct snap *a);

/*
 * The accounting of one frame between two snapshots: exactly the expected
 * class moved, by one packet and len bytes, and the queue state followed.
 * what prefixes the assertion names ("xdp", "tc_rx", ...).
 */
bool check_account(const char *what, const struct snap *b,
		   const struct snap *a, int expect, __u64 len);

/*
 * One BPF_PROG_TEST_RUN of a hook, checked on stats key `key`.  ctx may be
 * NULL.  bytes is what the program sees as the frame length.
 */
bool run_hook(const struct hook *h, const void *data, size_t size,
	      void *ctx, size_t ctx_size, __u32 key, int expect,
	      __u64 bytes);

struct frame_spec tcp6(uint8_t flags, size_t payload);

void add_ext(struct frame_spec *s, uint8_t type, uint8_t len);

void add_vlan(struct frame_spec *s, uint16_t tpid, uint16_t vid);

/* ---- classify_frames.c ---- */

enum edit_op {
	EDIT_NONE,
	EDIT_LEN_ETH,		/* the frame ends ARG bytes after Ethernet */
	EDIT_LEN_L3,		/* ... ARG bytes into the IP header */
	EDIT_LEN_L4,		/* ... ARG bytes into the L4 header */
	EDIT_IP_BYTE0,		/* the IP version/IHL byte := ARG */
	EDIT_IPV4_TOT_LEN,	/* the IPv4 total length := ARG */
	EDIT_IPV4_TOT_LEN_ADD,	/* the IPv4 total length += ARG */
	EDIT_IPV4_CSUM,		/* the IPv4 header checksum made right */
	EDIT_TCP_DOFF,		/* the TCP data offset := ARG words */
	EDIT_IPV6_PLEN,		/* the IPv6 payload length := ARG */
};

struct frame_edit {
	enum edit_op op;
	int arg;
};

#define FRAME_MAX_EDITS 3

struct frame_case {
	const char *name;
	int expect;
	struct frame_spec spec;
	struct frame_edit edit[FRAME_MAX_EDITS];
};

/* builds the case's frame into buf: its length, or -errno */
ssize_t frame_case_build(const struct frame_case *c, uint8_t *b, size_t cap);
/* the frame case of that name (classify/...), or NULL */
const struct frame_case *frame_case_find(const char *name);
/* the frame cases, a test each (VNET_TEST_TABLE in test_classify.c) */
unsigned int frame_case_nr(void);
const char *frame_case_name(unsigned int i);
void frame_case_run(unsigned int i);
/* a frame shorter than Ethernet: an XDP linear window of `window` bytes */
void short_window(__u32 window);
void test_queue_timestamps(void);
void test_queues_mmap(void);

/* ---- test_classify.c ---- */

/*
 * The skeleton loaded (by classify/load or by the first test that runs);
 * false with the test skipped when it did not load.
 */
bool classify_ready(void);

/* ---- classify_tap.c ---- */

/*
 * The tap cases: the first of them moves the process into a private
 * network namespace (they are the last tests); the teardown closes the tap.
 */
void test_xdp_rx_queue_index(void);
void test_tap_tc_ingress(void);
void test_tap_xdp(void);
void test_tap_gso_ipv4_push(void);
void test_tap_gso_ipv6_urgent(void);
void test_tap_nonlinear_ipv4_urgent(void);
void test_tap_nonlinear_vlan_ipv6_push(void);
void test_tap_nonlinear_ipv6_ext_urgent(void);
void test_tap_short_ip_headers(void);
void test_tap_xmit_rx_queue(void);
void classify_tap_teardown(void);

#endif /* VNET_SELFTESTS_CLASSIFY_H */
