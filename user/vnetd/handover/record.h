/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * The hand-over's messages (record.c): what a running vnetd and the one
 * taking its ports over say to each other on the hand-over socket
 * (handover.c, docs/vnetd.md "Hand-over").  One SOCK_SEQPACKET datagram
 * each, with the fds it names (SCM_RIGHTS), a versioned header and a CRC:
 *
 *   new -> old  HELLO     the new one's version and the ports it was given
 *   old -> new  RELEASE   the ports it serves that HELLO lacks (only when
 *                         there are any): released at the COMMIT if the
 *                         new one goes on (it was asked to, else FAIL)
 *   old -> new  PORT      per port: its tap, netns and socket (fds), flags;
 *                         a port it does not serve: NEW, no fds
 *   new -> old  READY     every port set up around them: freeze now
 *   old -> new  STATE     per port: its device as vhost-user messages
 *                         (fds), the frontend's connection (fd)
 *   old -> new  FRAME     per frame read from a tap, not delivered yet
 *   new -> old  PREPARED  every state imported and checked
 *   old -> new  COMMIT    the ports are the new one's; the old one exits
 *   either      FAIL      why not; the old one serves on
 *
 * Pure: building and checking bytes, nothing else.  Everything a peer
 * sends is checked here before use (sizes, counts, the fds it claims);
 * what the messages inside STATE ask of a device is checked again by the
 * vhost library's own handlers when they are imported.
 */
#ifndef VNETD_RECORD_H
#define VNETD_RECORD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <net/if.h>
#include <sys/un.h>

struct vhost_user_msg;

#define VNETD_REC_MAGIC 0x564e4f48u	/* "VNOH" */
/* bumped whenever a message's layout or meaning changes */
#define VNETD_REC_VERSION 1
/* fds in one datagram at most (the kernel's SCM_MAX_FD) */
#define VNETD_REC_MAX_FDS 253
/* a datagram at most: a STATE of every message an export can take */
#define VNETD_REC_MAX (512 * 1024)
/* vnetd's own limit (VNETD_MAX_PORTS); a HELLO of that many: 132 KiB */
#define VNETD_REC_MAX_PORTS 1024
#define VNETD_REC_MAX_QP 16
#define VNETD_REC_REASON 512
/* rings a port's STATE may say are broken: VHOST_USER_MAX_VQS */
#define VNETD_REC_MAX_VQS 256

enum vnetd_rec_type {
	VNETD_REC_HELLO = 1,
	VNETD_REC_PORT,
	VNETD_REC_READY,
	VNETD_REC_STATE,
	VNETD_REC_FRAME,
	VNETD_REC_PREPARED,
	VNETD_REC_COMMIT,
	VNETD_REC_FAIL,
	VNETD_REC_RELEASE,
	VNETD_REC_TYPE_MAX,
};

struct vnetd_rec_hdr {
	uint32_t magic;
	uint32_t version;
	uint32_t type;		/* enum vnetd_rec_type */
	uint32_t len;		/* bytes after the header */
	uint32_t crc;		/* CRC-32 of those bytes */
	uint32_t nfds;		/* fds that come with the datagram */
};

/*
 * HELLO: one per configured port, in the order of the command line; the
 * running vnetd matches them to its own by socket path, in any order
 */
struct vnetd_rec_hello_port {
	char socket[sizeof(((struct sockaddr_un *)0)->sun_path)];
	char tap[IF_NAMESIZE];
	uint32_t queues;
	uint32_t client;
};

struct vnetd_rec_hello {
	uint32_t pid;
	uint32_t nports;
	struct vnetd_rec_hello_port port[VNETD_REC_MAX_PORTS];
};

/*
 * RELEASE: the same layout as HELLO, the old one's pid and the ports it
 * serves that HELLO lacks (1 or more)
 */

/* PORT: flags */
#define VNETD_REC_P_CREATED (1u << 0)	/* the old one created the tap */
#define VNETD_REC_P_ATTACHED (1u << 1)	/* ... and attached vnet's programs */
#define VNETD_REC_P_SINGLE_QUEUE (1u << 2) /* a tap without IFF_MULTI_QUEUE */
#define VNETD_REC_P_NETNS (1u << 3)	/* fd netns_fd: the tap's netns */
#define VNETD_REC_P_LISTEN (1u << 4)	/* fd listen_fd: the port's socket */
/*
 * closed in the old one (its tap or netns went): no fds, no STATE; the
 * new one sets it up anew after the COMMIT, as a start would
 */
#define VNETD_REC_P_CLOSED (1u << 5)
/*
 * not served by the old one (only in HELLO): no fds, no STATE; the new
 * one sets it up before READY, as a start would
 */
#define VNETD_REC_P_NEW (1u << 6)
#define VNETD_REC_P_ALL 0x7fu

/*
 * PORT: one per HELLO port, in HELLO's order; fds are tap queue
 * 0..queues-1, then netns, then listen (none when closed)
 */
struct vnetd_rec_port {
	uint32_t index;		/* the port's, in HELLO's order */
	uint32_t flags;		/* VNETD_REC_P_* */
	uint32_t queues;	/* tap queue fds */
	uint32_t mtu_orig;	/* the tap's MTU before NET_SET_MTU; 0: untouched */
	uint32_t steer;		/* bit q: queue pair q's RX ring is served */
	uint64_t netns_ino;
};

/* STATE: flags */
#define VNETD_REC_S_CONN (1u << 0)	/* fd 0: the frontend's connection */
#define VNETD_REC_S_ALL 0x1u

/*
 * STATE: then NMSGS messages, each a vhost_user_hdr, its payload
 * (hdr.size bytes) and a uint32_t count of its fds, which come in order
 * after the connection's.  broken: bit i, vq i was broken (its reason in
 * the log of the old one); it stays so until the frontend restarts it.
 */
struct vnetd_rec_state {
	uint32_t index;
	uint32_t flags;		/* VNETD_REC_S_* */
	uint32_t nmsgs;
	uint32_t frames;	/* FRAMEs that follow for this port */
	uint64_t broken[VNETD_REC_MAX_VQS / 64];
};

/* FRAME: LEN bytes of header and frame follow */
struct vnetd_rec_frame {
	uint32_t index;		/* port */
	uint32_t qp;		/* queue pair */
	uint32_t hdr_len;	/* virtio-net header it was read with */
	uint32_t len;
};

struct vnetd_rec_fail {
	char reason[VNETD_REC_REASON];
};

/*
 * A datagram's bytes: header, then BODY (LEN bytes) and EXTRA (ELEN
 * bytes, may be 0).  Into BUF (at most CAP bytes): its length, or 0 when
 * it does not fit.
 */
size_t vnetd_rec_build(void *buf, size_t cap, uint32_t type, uint32_t nfds,
		       const void *body, size_t len, const void *extra,
		       size_t elen);

/*
 * A datagram of N bytes with NFDS fds received: the header checked
 * (magic, version, type, length, CRC, the fds it claims).  *BODY and
 * *LEN: what follows the header.  0, or -EPROTO with WHY said.
 */
int vnetd_rec_check(const void *buf, size_t n, unsigned int nfds,
		    struct vnetd_rec_hdr *hdr, const void **body, size_t *len,
		    char *why, size_t wlen);

/* The bodies, checked; -EPROTO with WHY said. */
int vnetd_rec_hello_parse(const void *body, size_t len,
			  struct vnetd_rec_hello *h, char *why, size_t wlen);
int vnetd_rec_release_parse(const void *body, size_t len,
			    struct vnetd_rec_hello *r, char *why, size_t wlen);

/* MAP[j] of a port of HELLO that the running vnetd does not serve */
#define VNETD_REC_NEW_PORT 0xffffffffu
/*
 * The ports of HELLO H (the new vnetd's, pid H->pid) against the running
 * vnetd's OURS[0..N) (pid OUR_PID; CLOSED[i]: port i is closed, its tap
 * or netns gone), matched by socket path in any order: MAP[j] is the
 * index in OURS of H's port j, or VNETD_REC_NEW_PORT.  A port in both
 * must have the same tap, queue pairs and client mode; a new one must not
 * have the tap of one of OURS (a socket path mistyped), and at least one
 * port must be in both (the right vnetd).  RELEASE[i]: port i of OURS,
 * not closed, is not in H (a closed one left out is dropped).  0, or
 * -EPROTO with WHY naming the port and what each vnetd has.
 */
int vnetd_rec_hello_match(const struct vnetd_rec_hello *h, uint32_t our_pid,
			  const struct vnetd_rec_hello_port *ours,
			  const bool *closed, unsigned int n, unsigned int *map,
			  bool *release, char *why, size_t wlen);
int vnetd_rec_port_parse(const void *body, size_t len, unsigned int nfds,
			 unsigned int nports, struct vnetd_rec_port *p,
			 char *why, size_t wlen);

/*
 * STATE: the fixed part into *S, then its messages into MSGS (at most
 * MAX), each with its fds taken from FDS (after the connection's);
 * *NMSG their count.  The fds are not duplicated: MSGS[i].fds point into
 * FDS.
 */
int vnetd_rec_state_parse(const void *body, size_t len, const int *fds,
			  unsigned int nfds, unsigned int nports,
			  struct vnetd_rec_state *s, struct vhost_user_msg *msgs,
			  unsigned int max, unsigned int *nmsg, char *why,
			  size_t wlen);
/* STATE's body from S and MSGS[0..n): into BUF, its length or 0 (too big). */
size_t vnetd_rec_state_body(void *buf, size_t cap,
			    const struct vnetd_rec_state *s,
			    const struct vhost_user_msg *msgs, unsigned int n);

int vnetd_rec_frame_parse(const void *body, size_t len, unsigned int nports,
			  struct vnetd_rec_frame *f, const void **data,
			  char *why, size_t wlen);
void vnetd_rec_fail_parse(const void *body, size_t len, char *reason,
			  size_t rlen);

const char *vnetd_rec_type_name(uint32_t type);

#endif /* VNETD_RECORD_H */
