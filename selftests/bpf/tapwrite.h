/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/* tapwrite: what its files share (see tapwrite.c) */
#ifndef VNET_SELFTESTS_TAPWRITE_H
#define VNET_SELFTESTS_TAPWRITE_H

#include <arpa/inet.h>
#include <endian.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/if_ether.h>
#include <linux/if_tun.h>
#include <linux/virtio_net.h>
#include <net/if.h>
#include <netinet/in.h>
#include <poll.h>
#include <sched.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include "frames.h"

/* ---- tapwrite_lib.c ---- */

#define MAX_QUEUES 16
#define VNET_HDR_LEN 12 /* struct virtio_net_hdr_mrg_rxbuf */
#define ETH_LEN 14
#define IP_LEN 20
#define TCP_LEN 20
#define UDP_LEN 8
#define GSO_MSS 1448
#define DEF_SIZE 100
#define DEF_GSO_SIZE (44 * GSO_MSS)
#define GSO_MAX_SIZE (65535 - IP_LEN - TCP_LEN) /* IPv4 tot_len limit */
#define DEF_TCP_BYTES 65536
#define FRAME_MAX (VNET_HDR_LEN + 65536 + 256)
#define RX_BUF (VNET_HDR_LEN + 128 * 1024)

#define TCPF_FIN 0x01
#define TCPF_SYN 0x02
#define TCPF_RST 0x04
#define TCPF_PSH 0x08
#define TCPF_ACK 0x10

enum cls { C_URGENT, C_PUSH, C_ACK, C_OTHER, C_MALFORMED, C_GSO, C_MAX };

extern const char *const cls_name[C_MAX];

extern const uint8_t guest_mac[ETH_ALEN];
extern const uint8_t nobody_mac[ETH_ALEN];
#define GUEST_IP 0xc0000202u /* 192.0.2.2 */
#define HOST_IP 0xc0000201u  /* 192.0.2.1 */

extern const char *prog;
extern int fds[MAX_QUEUES];
extern int nq;
extern const char *dev;
extern double deadline_s;

void die(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void die(const char *fmt, ...);

void usage(int code);

double now_s(void);

long parse_num(const char *s, long min, long max, const char *what);

bool is_num(const char *s);

void enter_netns(const char *name);

void open_queues(void);

void host_mac(uint8_t mac[ETH_ALEN]);

uint32_t pseudo_sum(uint32_t saddr, uint32_t daddr, uint8_t proto,
		    uint32_t len);

struct frame {
	uint8_t buf[FRAME_MAX]; /* virtio_net_hdr followed by the frame */
	size_t len;             /* frame length, without the vnet header */
};

uint8_t *frame_data(struct frame *f);

extern uint16_t ip_id;

/*
 * Ethernet + IPv4 header for an L4 payload of l4_len bytes (tot_len is
 * IP_LEN + l4_len); returns the L4 header.
 */
uint8_t *build_ip(struct frame *f, const uint8_t *dmac, uint8_t proto,
		  uint32_t l4_len);

struct tcp_seg {
	uint16_t sport, dport;
	uint32_t seq, ack;
	uint8_t flags;
	uint16_t win;
	uint32_t payload;
	bool mss_opt;
	bool partial; /* NEEDS_CSUM: checksum field holds the pseudo sum */
};

void build_tcp(struct frame *f, const uint8_t *dmac,
	       const struct tcp_seg *s);

void build_udp(struct frame *f, uint32_t payload);

/* IPv4 claims a TCP header and payload that the frame does not carry. */
void build_malformed(struct frame *f, uint32_t payload);

void set_gso(struct frame *f);

int write_frame(int q, struct frame *f);

/* the frame being sent (send, tcp) */
extern struct frame txf;

/* ---- tapwrite_tcp.c ---- */

/* the tcp command: a minimal guest TCP peer on QUEUE */
int cmd_tcp(int queue, int port, long bytes);

#endif /* VNET_SELFTESTS_TAPWRITE_H */
