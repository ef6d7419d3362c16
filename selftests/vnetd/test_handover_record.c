// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * test_handover_record: the hand-over's messages (user/vnetd/handover/record.c,
 * linked in) built and checked: every type goes through, and what a
 * damaged, truncated, other-version or hostile message carries is refused
 * with a reason that says what was wrong; nothing of it is used.  Pure: no
 * root, no socket.  The protocol around them is test_vnetd_takeover's.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/vhost_types.h>

#include "test.h"
#include "../../user/vnetd/handover/record.h"
#include "../../user/vhost/vhost_user.h"

static uint8_t buf[sizeof(struct vnetd_rec_hdr) + VNETD_REC_MAX];
static char why[600];

static size_t build(uint32_t type, uint32_t nfds, const void *body,
		    size_t len)
{
	return vnetd_rec_build(buf, sizeof(buf), type, nfds, body, len, NULL,
			       0);
}

/* check N bytes of buf received with NFDS fds: 0 or -EPROTO, and WHY */
static int check(size_t n, unsigned int nfds, const void **body, size_t *len)
{
	struct vnetd_rec_hdr h;

	why[0] = '\0';
	return vnetd_rec_check(buf, n, nfds, &h, body, len, why, sizeof(why));
}

static bool refused_with(int ret, const char *words, const char *what)
{
	return ASSERT_EQ(ret, -EPROTO, what) &&
	       ASSERT_TRUE(strstr(why, words) != NULL, why);
}

static void header(void)
{
	struct vnetd_rec_hdr *h = (struct vnetd_rec_hdr *)buf;
	const void *body;
	size_t n, len;

	n = build(VNETD_REC_READY, 0, NULL, 0);
	ASSERT_EQ(n, sizeof(*h), "READY is a bare header");
	ASSERT_OK(check(n, 0, &body, &len), "READY passes");
	ASSERT_EQ(len, 0, "no body");

	n = build(VNETD_REC_FAIL, 0, "why not", 7);
	ASSERT_OK(check(n, 0, &body, &len), "FAIL passes");
	refused_with(check(n - 3, 0, &body, &len), "truncated", "cut short");
	refused_with(check(10, 0, &body, &len), "shorter than its", "a piece of a header");
	refused_with(check(n, 2, &body, &len), "2 came", "fds it does not claim");

	buf[sizeof(*h) + 2] ^= 0x40;
	refused_with(check(n, 0, &body, &len), "CRC mismatch", "a flipped bit");
	buf[sizeof(*h) + 2] ^= 0x40;

	h->version = VNETD_REC_VERSION + 1;
	refused_with(check(n, 0, &body, &len), "stop the running vnetd and start this one instead",
		     "another version names the fix");
	h->version = VNETD_REC_VERSION;
	h->magic ^= 1;
	refused_with(check(n, 0, &body, &len), "not a vnetd hand-over message", "magic");
	h->magic ^= 1;
	h->type = 77;
	refused_with(check(n, 0, &body, &len), "message type 77", "type");
	ASSERT_EQ(vnetd_rec_build(buf, 10, VNETD_REC_READY, 0, NULL, 0, NULL, 0), 0,
		  "does not fit: not built");
}

static void hello(void)
{
	struct vnetd_rec_hello h = { .pid = 42, .nports = 2 }, got;
	size_t hl = offsetof(struct vnetd_rec_hello, port) + 2 * sizeof(h.port[0]);
	int i;

	for (i = 0; i < 2; i++) {
		snprintf(h.port[i].socket, sizeof(h.port[i].socket), "/run/vnet/p%d.sock", i);
		snprintf(h.port[i].tap, sizeof(h.port[i].tap), "tap%d", i);
		h.port[i].queues = 2;
	}
	ASSERT_OK(vnetd_rec_hello_parse(&h, hl, &got, why, sizeof(why)), why);
	ASSERT_EQ(got.nports, 2, "ports");
	ASSERT_STREQ(got.port[1].tap, "tap1", "a tap's name");
	refused_with(vnetd_rec_hello_parse(&h, hl - 1, &got, why, sizeof(why)),
		     "for 2 ports", "one byte short");
	h.nports = 0;
	refused_with(vnetd_rec_hello_parse(&h, hl, &got, why, sizeof(why)),
		     "HELLO with 0 ports", "no port");
	h.nports = 100000;
	refused_with(vnetd_rec_hello_parse(&h, hl, &got, why, sizeof(why)),
		     "HELLO with 100000 ports", "too many ports");
	h.nports = 2;
	memset(h.port[1].tap, 'x', sizeof(h.port[1].tap));
	refused_with(vnetd_rec_hello_parse(&h, hl, &got, why, sizeof(why)),
		     "port 1's names", "a name without its end");
	snprintf(h.port[1].tap, sizeof(h.port[1].tap), "tap1");
	h.port[1].queues = 17;
	refused_with(vnetd_rec_hello_parse(&h, hl, &got, why, sizeof(why)),
		     "17 queue pairs", "queues out of range");
}

/*
 * A HELLO of every port vnetd takes (VNETD_REC_MAX_PORTS, 1024) is one
 * datagram: built, checked (header, CRC) and parsed whole; one port more
 * is refused by the parser (and by the size of the datagram).
 */
static void hello_max(void)
{
	static struct vnetd_rec_hello h, got;
	size_t hl = offsetof(struct vnetd_rec_hello, port) +
		    VNETD_REC_MAX_PORTS * sizeof(h.port[0]);
	static uint8_t big[sizeof(struct vnetd_rec_hdr) + VNETD_REC_MAX];
	struct vnetd_rec_hdr hdr;
	const void *body;
	size_t n, len;
	unsigned int i;

	h.pid = 42;
	h.nports = VNETD_REC_MAX_PORTS;
	for (i = 0; i < VNETD_REC_MAX_PORTS; i++) {
		snprintf(h.port[i].socket, sizeof(h.port[i].socket),
			 "/run/vnet/vm%u.sock", i);
		snprintf(h.port[i].tap, sizeof(h.port[i].tap), "tap%u", i);
		h.port[i].queues = 1;
	}
	ASSERT_GT(VNETD_REC_MAX_PORTS, 64, "more ports than the 64 of old");
	n = vnetd_rec_build(big, sizeof(big), VNETD_REC_HELLO, 0, &h, hl, NULL,
			    0);
	if (!ASSERT_GT(n, hl, "built"))
		return;
	ASSERT_OK(vnetd_rec_check(big, n, 0, &hdr, &body, &len, why,
				  sizeof(why)), why);
	ASSERT_EQ(hdr.version, VNETD_REC_VERSION, "version");
	if (!ASSERT_OK(vnetd_rec_hello_parse(body, len, &got, why, sizeof(why)),
		       why))
		return;
	ASSERT_EQ(got.nports, VNETD_REC_MAX_PORTS, "ports");
	ASSERT_STREQ(got.port[VNETD_REC_MAX_PORTS - 1].tap, "tap1023",
		     "the last port's tap");
	big[n - 1] ^= 1;
	ASSERT_EQ(vnetd_rec_check(big, n, 0, &hdr, &body, &len, why,
				  sizeof(why)), -EPROTO, "a damaged byte");
	h.nports = VNETD_REC_MAX_PORTS + 1;
	refused_with(vnetd_rec_hello_parse(&h, hl, &got, why, sizeof(why)),
		     "HELLO with 1025 ports", "one port too many");
}

static void port(void)
{
	struct vnetd_rec_port p = { .index = 1, .queues = 2, .steer = 3,
				    .flags = VNETD_REC_P_NETNS | VNETD_REC_P_LISTEN |
					     VNETD_REC_P_ATTACHED,
				    .mtu_orig = 1500 },
			      got, bad;

	ASSERT_OK(vnetd_rec_port_parse(&p, sizeof(p), 4, 2, &got, why, sizeof(why)), why);
	ASSERT_EQ(got.steer, 3, "steering");
	refused_with(vnetd_rec_port_parse(&p, sizeof(p), 3, 2, &got, why, sizeof(why)),
		     "3 fds, its flags say 4", "an fd missing");
	refused_with(vnetd_rec_port_parse(&p, sizeof(p), 4, 1, &got, why, sizeof(why)),
		     "PORT 1 of 1", "a port that is not one");
	refused_with(vnetd_rec_port_parse(&p, sizeof(p) - 1, 4, 2, &got, why, sizeof(why)),
		     "PORT of", "short");
	bad = p;
	bad.flags |= 1u << 20;
	refused_with(vnetd_rec_port_parse(&bad, sizeof(bad), 4, 2, &got, why, sizeof(why)),
		     "flags", "an unknown flag");
	bad = p;
	bad.steer = 1u << 5;
	refused_with(vnetd_rec_port_parse(&bad, sizeof(bad), 4, 2, &got, why, sizeof(why)),
		     "steering", "steering to a queue pair it has not");
	bad = p;
	bad.queues = 0;
	refused_with(vnetd_rec_port_parse(&bad, sizeof(bad), 2, 2, &got, why, sizeof(why)),
		     "0 tap queues", "no queue");
	bad = p;
	bad.mtu_orig = 10;
	refused_with(vnetd_rec_port_parse(&bad, sizeof(bad), 4, 2, &got, why, sizeof(why)),
		     "MTU 10", "an MTU no tap has");
	/* closed in the old vnetd: no fds, no other flag */
	bad = (struct vnetd_rec_port){ .index = 1, .queues = 2,
				       .flags = VNETD_REC_P_CLOSED };
	ASSERT_OK(vnetd_rec_port_parse(&bad, sizeof(bad), 0, 2, &got, why, sizeof(why)), why);
	refused_with(vnetd_rec_port_parse(&bad, sizeof(bad), 2, 2, &got, why, sizeof(why)),
		     "2 fds, its flags say 0", "a closed port with fds");
	bad.flags |= VNETD_REC_P_LISTEN;
	refused_with(vnetd_rec_port_parse(&bad, sizeof(bad), 1, 2, &got, why, sizeof(why)),
		     "closed, with flags", "closed and listening");
	/* not served by the old vnetd: no fds, no other flag */
	bad = (struct vnetd_rec_port){ .index = 1,
				       .queues = 2,
				       .flags = VNETD_REC_P_NEW };
	ASSERT_OK(vnetd_rec_port_parse(&bad, sizeof(bad), 0, 2, &got, why,
				       sizeof(why)),
		  why);
	refused_with(vnetd_rec_port_parse(&bad, sizeof(bad), 2, 2, &got, why,
					  sizeof(why)),
		     "2 fds, its flags say 0", "a new port with fds");
	bad.flags |= VNETD_REC_P_CLOSED;
	refused_with(vnetd_rec_port_parse(&bad, sizeof(bad), 0, 2, &got, why,
					  sizeof(why)),
		     "closed, with flags", "new and closed");
}

/* RELEASE: HELLO's layout, its own name in what it refuses */
static void release_parse(void)
{
	static struct vnetd_rec_hello r, got;
	size_t rl = offsetof(struct vnetd_rec_hello, port) + sizeof(r.port[0]);

	r.pid = 100;
	r.nports = 1;
	snprintf(r.port[0].socket, sizeof(r.port[0].socket), "/run/b.sock");
	snprintf(r.port[0].tap, sizeof(r.port[0].tap), "tb");
	r.port[0].queues = 2;
	ASSERT_OK(vnetd_rec_release_parse(&r, rl, &got, why, sizeof(why)), why);
	ASSERT_TRUE(got.pid == 100 && got.nports == 1 &&
			    !strcmp(got.port[0].socket, "/run/b.sock"),
		    "parsed");
	refused_with(vnetd_rec_release_parse(&r, rl - 1, &got, why, sizeof(why)),
		     "RELEASE of", "a RELEASE cut short");
	r.nports = 0;
	refused_with(vnetd_rec_release_parse(&r,
					     offsetof(struct vnetd_rec_hello,
						      port),
					     &got, why, sizeof(why)),
		     "RELEASE with 0 ports", "an empty RELEASE");
	ASSERT_TRUE(!strcmp(vnetd_rec_type_name(VNETD_REC_RELEASE), "RELEASE"),
		    "its name");
}

/*
 * HELLO's ports against the running vnetd's, by socket path in any order;
 * a port in both must be the same; a port left out is to be released (a
 * closed one dropped); a new one may not take a served tap; one port at
 * least in both; a refusal says which vnetd has what.
 */
static void hello_match(void)
{
	static struct vnetd_rec_hello h;
	struct vnetd_rec_hello_port ours[3] = {
		{ "/run/a.sock", "ta", 1, 0 },
		{ "/run/b.sock", "tb", 2, 0 },
		{ "/run/c.sock", "tc", 1, 1 },
	};
	bool closed[3] = { false, false, false }, rel[3];
	unsigned int map[3];

	h.pid = 200;
	h.nports = 3;
	h.port[0] = ours[2];
	h.port[1] = ours[0];
	h.port[2] = ours[1];
	ASSERT_OK(vnetd_rec_hello_match(&h, 100, ours, closed, 3, map, rel, why,
					sizeof(why)),
		  why);
	ASSERT_TRUE(map[0] == 2 && map[1] == 0 && map[2] == 1,
		    "matched by socket, in HELLO's order");
	ASSERT_TRUE(!rel[0] && !rel[1] && !rel[2], "nothing to release");
	h.port[2].queues = 1;
	refused_with(vnetd_rec_hello_match(&h, 100, ours, closed, 3, map, rel,
					   why, sizeof(why)),
		     "port /run/b.sock: the new vnetd (pid 200) was given tap=tb queues=1, the running vnetd (pid 100) serves it with tap=tb queues=2",
		     "which vnetd has what");
	h.port[2] = ours[1];
	h.nports = 2;
	ASSERT_OK(vnetd_rec_hello_match(&h, 100, ours, closed, 3, map, rel, why,
					sizeof(why)),
		  "a port left out");
	ASSERT_TRUE(!rel[0] && rel[1] && !rel[2], "it is the one to release");
	closed[1] = true;
	ASSERT_OK(vnetd_rec_hello_match(&h, 100, ours, closed, 3, map, rel, why,
					sizeof(why)),
		  "a closed port left out");
	ASSERT_TRUE(!rel[1], "a closed port left out: dropped, not released");
	h.nports = 3;
	snprintf(h.port[2].socket, sizeof(h.port[2].socket), "/run/d.sock");
	refused_with(vnetd_rec_hello_match(&h, 100, ours, closed, 3, map, rel,
					   why, sizeof(why)),
		     "port /run/d.sock: given to the new vnetd (pid 200) with tap tb, which the running vnetd (pid 100) serves as port /run/b.sock: a mistyped socket path?",
		     "a new port with a served tap");
	snprintf(h.port[2].tap, sizeof(h.port[2].tap), "td");
	ASSERT_OK(vnetd_rec_hello_match(&h, 100, ours, closed, 3, map, rel, why,
					sizeof(why)),
		  "a port added");
	ASSERT_TRUE(map[2] == VNETD_REC_NEW_PORT, "a port added is new");
	h.port[0] = h.port[2];
	h.nports = 1;
	refused_with(vnetd_rec_hello_match(&h, 100, ours, closed, 3, map, rel,
					   why, sizeof(why)),
		     "none of the 1 port given to the new vnetd (pid 200) is served by the running vnetd (pid 100, first port /run/a.sock)",
		     "no port in common");
	h.nports = 3;
	h.port[0] = ours[2];
	h.port[2] = ours[0];
	refused_with(vnetd_rec_hello_match(&h, 100, ours, closed, 3, map, rel,
					   why, sizeof(why)),
		     "given twice", "a port given twice");
	/* what the running vnetd says of the ports it lacks */
	release_parse();
}

static void state(void)
{
	static struct vhost_user_msg msgs[4], got[4];
	struct vnetd_rec_state s = { .index = 0, .flags = VNETD_REC_S_CONN,
				     .nmsgs = 3 }, gs;
	static uint8_t body[4096];
	int fds[8] = { 10, 11, 12, 13, 14, 15, 16, 17 };
	unsigned int n = 0;
	size_t len;

	msgs[0].hdr = (struct vhost_user_hdr){ VHOST_USER_SET_FEATURES, 1, 8 };
	msgs[0].payload.u64 = 0x1234;
	msgs[1].hdr = (struct vhost_user_hdr){ VHOST_USER_ADD_MEM_REG, 1,
					       sizeof(struct vhost_user_mem_reg) };
	msgs[1].nfds = 1;
	msgs[2].hdr = (struct vhost_user_hdr){ VHOST_USER_SET_VRING_KICK, 1, 8 };
	msgs[2].nfds = 1;
	len = vnetd_rec_state_body(body, sizeof(body), &s, msgs, 3);
	ASSERT_GT(len, sizeof(s), "built");
	ASSERT_OK(vnetd_rec_state_parse(body, len, fds, 3, 1, &gs, got, 4, &n, why,
					sizeof(why)),
		  why);
	ASSERT_EQ(n, 3, "messages");
	ASSERT_EQ(got[0].payload.u64, 0x1234, "a payload");
	ASSERT_EQ(got[1].fds[0], 11, "fds in order, after the connection's");
	ASSERT_EQ(got[2].fds[0], 12, "the kick's");
	refused_with(vnetd_rec_state_parse(body, len, fds, 2, 1, &gs, got, 4, &n, why,
					   sizeof(why)),
		     "claims 1 fds, 0 left", "an fd a message claims is missing");
	refused_with(vnetd_rec_state_parse(body, len, fds, 5, 1, &gs, got, 4, &n, why,
					   sizeof(why)),
		     "5 fds, its messages take 3", "fds nobody claims");
	refused_with(vnetd_rec_state_parse(body, len - 1, fds, 3, 1, &gs, got, 4, &n,
					   why, sizeof(why)),
		     "STATE 0", "one byte short");
	refused_with(vnetd_rec_state_parse(body, len, fds, 3, 1, &gs, got, 2, &n, why,
					   sizeof(why)),
		     "3 messages, at most 2", "more messages than room");
	/* a payload size past the end, then one larger than any message */
	((struct vhost_user_hdr *)(body + sizeof(s)))->size = 4000;
	refused_with(vnetd_rec_state_parse(body, len, fds, 3, 1, &gs, got, 4, &n, why,
					   sizeof(why)),
		     "of 4000 bytes", "a size past the end");
	((struct vhost_user_hdr *)(body + sizeof(s)))->size = 0xffffff;
	refused_with(vnetd_rec_state_parse(body, len, fds, 3, 1, &gs, got, 4, &n, why,
					   sizeof(why)),
		     "bytes", "a size beyond any payload");
	((struct vhost_user_hdr *)(body + sizeof(s)))->size = 8;
	{
		uint32_t many = 9;
		uint8_t *count = body + sizeof(s) + sizeof(struct vhost_user_hdr) + 8;

		memcpy(count, &many, sizeof(many));
		refused_with(vnetd_rec_state_parse(body, len, fds, 8, 1, &gs, got, 4,
						   &n, why, sizeof(why)),
			     "claims 9 fds", "more fds than a message carries");
	}
	s.flags = 1u << 7;
	len = vnetd_rec_state_body(body, sizeof(body), &s, msgs, 0);
	refused_with(vnetd_rec_state_parse(body, len, fds, 0, 1, &gs, got, 4, &n, why,
					   sizeof(why)),
		     "flags", "an unknown flag");
}

static void frame(void)
{
	struct {
		struct vnetd_rec_frame f;
		uint8_t data[64];
	} fr = { { .index = 0, .qp = 1, .hdr_len = 12, .len = 64 }, { 0 } };
	struct vnetd_rec_frame f;
	const void *data;

	ASSERT_OK(vnetd_rec_frame_parse(&fr, sizeof(fr), 1, &f, &data, why,
					sizeof(why)),
		  why);
	ASSERT_TRUE(data == fr.data, "the frame's bytes");
	refused_with(vnetd_rec_frame_parse(&fr, sizeof(fr) - 1, 1, &f, &data, why,
					   sizeof(why)),
		     "says 64 bytes, 63 came", "cut short");
	fr.f.hdr_len = 13;
	refused_with(vnetd_rec_frame_parse(&fr, sizeof(fr), 1, &f, &data, why,
					   sizeof(why)),
		     "13-byte header", "a header size virtio has not");
	fr.f.hdr_len = 12;
	fr.f.qp = 99;
	refused_with(vnetd_rec_frame_parse(&fr, sizeof(fr), 1, &f, &data, why,
					   sizeof(why)),
		     "queue pair 99", "a queue pair out of range");
}

static void fail_reason(void)
{
	char reason[16];

	vnetd_rec_fail_parse("bad\nline\033[31m", 13, reason, sizeof(reason));
	ASSERT_STREQ(reason, "bad?line?[31m", "control characters masked");
	vnetd_rec_fail_parse("a very long reason indeed", 25, reason, sizeof(reason));
	ASSERT_EQ(strlen(reason), sizeof(reason) - 1, "cut to the buffer");
}

VNET_TEST("handover_record/header", header);
VNET_TEST("handover_record/hello", hello);
VNET_TEST("handover_record/hello_max", hello_max);
VNET_TEST("handover_record/port", port);
VNET_TEST("handover_record/hello_match", hello_match);
VNET_TEST("handover_record/state", state);
VNET_TEST("handover_record/frame", frame);
VNET_TEST("handover_record/fail_reason", fail_reason);

int main(int argc, char **argv)
{
	return test_main(argc, argv, "test_handover_record", NULL);
}
