// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * The hand-over's messages: built and checked (record.h).  A peer is
 * another vnetd, but one of another version, a damaged one, or whatever
 * connected to the socket: nothing it sends is used before it is checked
 * here, and a check that fails says what was wrong.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <zlib.h>

#include "record.h"
#include "handlers.h"
#include "vhost_user.h"

_Static_assert(VNETD_REC_MAX_VQS == VHOST_USER_MAX_VQS, "a STATE's rings");
_Static_assert(offsetof(struct vnetd_rec_hello, port) +
		       VNETD_REC_MAX_PORTS * sizeof(struct vnetd_rec_hello_port) <=
	       VNETD_REC_MAX, "a HELLO of every port fits a datagram");

static const char *const type_names[VNETD_REC_TYPE_MAX] = {
	[VNETD_REC_HELLO] = "HELLO",     [VNETD_REC_PORT] = "PORT",
	[VNETD_REC_READY] = "READY",     [VNETD_REC_STATE] = "STATE",
	[VNETD_REC_FRAME] = "FRAME",     [VNETD_REC_PREPARED] = "PREPARED",
	[VNETD_REC_COMMIT] = "COMMIT",   [VNETD_REC_FAIL] = "FAIL",
	[VNETD_REC_RELEASE] = "RELEASE",
};

const char *vnetd_rec_type_name(uint32_t type)
{
	return type < VNETD_REC_TYPE_MAX && type_names[type] ?
		       type_names[type] :
		       "unknown";
}

__attribute__((format(printf, 3, 4))) static int bad(char *why, size_t wlen,
						     const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(why, wlen, fmt, ap);
	va_end(ap);
	return -EPROTO;
}

static uint32_t crc_of(const void *p, size_t n)
{
	return (uint32_t)crc32(crc32(0L, Z_NULL, 0), p, (uInt)n);
}

size_t vnetd_rec_build(void *buf, size_t cap, uint32_t type, uint32_t nfds,
		       const void *body, size_t len, const void *extra,
		       size_t elen)
{
	struct vnetd_rec_hdr h = {
		.magic = VNETD_REC_MAGIC,
		.version = VNETD_REC_VERSION,
		.type = type,
		.nfds = nfds,
	};
	uint8_t *b = buf;

	if (len > VNETD_REC_MAX || elen > VNETD_REC_MAX - len ||
	    sizeof(h) + len + elen > cap)
		return 0;
	if (len)
		memcpy(b + sizeof(h), body, len);
	if (elen)
		memcpy(b + sizeof(h) + len, extra, elen);
	h.len = (uint32_t)(len + elen);
	h.crc = crc_of(b + sizeof(h), h.len);
	memcpy(b, &h, sizeof(h));
	return sizeof(h) + h.len;
}

int vnetd_rec_check(const void *buf, size_t n, unsigned int nfds,
		    struct vnetd_rec_hdr *hdr, const void **body, size_t *len,
		    char *why, size_t wlen)
{
	const uint8_t *b = buf;

	if (n < sizeof(*hdr))
		return bad(why, wlen, "a message of %zu bytes, shorter than its %zu-byte header",
			   n, sizeof(*hdr));
	memcpy(hdr, b, sizeof(*hdr));
	if (hdr->magic != VNETD_REC_MAGIC)
		return bad(why, wlen, "not a vnetd hand-over message (magic 0x%08x)",
			   hdr->magic);
	if (hdr->version != VNETD_REC_VERSION)
		return bad(why, wlen, "hand-over version %u, this vnetd speaks %u: stop the running vnetd and start this one instead",
			   hdr->version, VNETD_REC_VERSION);
	if (!hdr->type || hdr->type >= VNETD_REC_TYPE_MAX)
		return bad(why, wlen, "message type %u", hdr->type);
	if (hdr->len != n - sizeof(*hdr))
		return bad(why, wlen, "%s says %u bytes, %zu came (truncated?)",
			   vnetd_rec_type_name(hdr->type), hdr->len,
			   n - sizeof(*hdr));
	if (hdr->crc != crc_of(b + sizeof(*hdr), hdr->len))
		return bad(why, wlen, "%s: CRC mismatch (damaged)",
			   vnetd_rec_type_name(hdr->type));
	if (hdr->nfds != nfds)
		return bad(why, wlen, "%s says %u fds, %u came",
			   vnetd_rec_type_name(hdr->type), hdr->nfds, nfds);
	*body = b + sizeof(*hdr);
	*len = hdr->len;
	return 0;
}

/* a NUL within the array: a string, not whatever follows */
static bool str_ok(const char *s, size_t cap)
{
	return memchr(s, '\0', cap) != NULL;
}

/* HELLO or RELEASE (WHAT): a pid, then 1..VNETD_REC_MAX_PORTS ports */
static int list_parse(const char *what, const void *body, size_t len,
		      struct vnetd_rec_hello *h, char *why, size_t wlen)
{
	size_t fixed = offsetof(struct vnetd_rec_hello, port);
	uint32_t i;

	memset(h, 0, sizeof(*h));
	if (len < fixed)
		return bad(why, wlen, "%s of %zu bytes", what, len);
	memcpy(h, body, fixed);
	if (!h->nports || h->nports > VNETD_REC_MAX_PORTS)
		return bad(why, wlen, "%s with %u ports (1..%d)", what,
			   h->nports, VNETD_REC_MAX_PORTS);
	if (len != fixed + h->nports * sizeof(h->port[0]))
		return bad(why, wlen, "%s of %zu bytes for %u ports", what, len,
			   h->nports);
	memcpy(h->port, (const uint8_t *)body + fixed,
	       h->nports * sizeof(h->port[0]));
	for (i = 0; i < h->nports; i++) {
		const struct vnetd_rec_hello_port *p = &h->port[i];

		if (!str_ok(p->socket, sizeof(p->socket)) ||
		    !str_ok(p->tap, sizeof(p->tap)) || !p->tap[0] ||
		    !p->socket[0])
			return bad(why, wlen, "%s: port %u's names", what, i);
		if (!p->queues || p->queues > VNETD_REC_MAX_QP || p->client > 1)
			return bad(why, wlen,
				   "%s: port %u: %u queue pairs, client %u",
				   what, i, p->queues, p->client);
	}
	return 0;
}

int vnetd_rec_hello_parse(const void *body, size_t len,
			  struct vnetd_rec_hello *h, char *why, size_t wlen)
{
	return list_parse("HELLO", body, len, h, why, wlen);
}

int vnetd_rec_release_parse(const void *body, size_t len,
			    struct vnetd_rec_hello *r, char *why, size_t wlen)
{
	return list_parse("RELEASE", body, len, r, why, wlen);
}

/* a port as "tap=T queues=N[ client]" */
static const char *port_desc(const struct vnetd_rec_hello_port *p, char *buf,
			     size_t len)
{
	snprintf(buf, len, "tap=%s queues=%u%s", p->tap, p->queues,
		 p->client ? " client" : "");
	return buf;
}

/* the index in OURS[0..N) of the port of socket (or, BY_TAP, tap) NAME; N */
static unsigned int find(const struct vnetd_rec_hello_port *ours,
			 unsigned int n, bool by_tap, const char *name)
{
	unsigned int i;

	for (i = 0; i < n; i++)
		if (!strcmp(by_tap ? ours[i].tap : ours[i].socket, name))
			break;
	return i;
}

/* H's port J against OURS: MAP[j], or the refusal */
static int match_one(const struct vnetd_rec_hello *h, unsigned int j,
		     uint32_t our_pid, const struct vnetd_rec_hello_port *ours,
		     unsigned int n, unsigned int *map, char *why, size_t wlen)
{
	const struct vnetd_rec_hello_port *a = &h->port[j], *b;
	char da[64], db[64];
	unsigned int i, k;

	for (k = 0; k < j; k++)
		if (!strcmp(h->port[k].socket, a->socket))
			return bad(why, wlen,
				   "port %s: given twice to the new vnetd (pid %u)",
				   a->socket, h->pid);
	i = find(ours, n, false, a->socket);
	map[j] = i;
	if (i < n) {
		b = &ours[i];
		if (strcmp(a->tap, b->tap) || a->queues != b->queues ||
		    a->client != b->client)
			return bad(why, wlen, "port %s: the new vnetd (pid %u) was given %s, the running vnetd (pid %u) serves it with %s; a port changes by a restart, not a hand-over",
				   a->socket, h->pid, port_desc(a, da, sizeof(da)),
				   our_pid, port_desc(b, db, sizeof(db)));
		return 0;
	}
	map[j] = VNETD_REC_NEW_PORT;
	i = find(ours, n, true, a->tap);
	if (i < n)
		return bad(why, wlen,
			   "port %s: given to the new vnetd (pid %u) with tap %s, which the running vnetd (pid %u) serves as port %s: a mistyped socket path?  A port's socket changes by removing the port and adding it again, in two hand-overs",
			   a->socket, h->pid, a->tap, our_pid, ours[i].socket);
	return 0;
}

int vnetd_rec_hello_match(const struct vnetd_rec_hello *h, uint32_t our_pid,
			  const struct vnetd_rec_hello_port *ours,
			  const bool *closed, unsigned int n, unsigned int *map,
			  bool *release, char *why, size_t wlen)
{
	unsigned int i, j, common = 0;
	int ret;

	for (i = 0; i < n; i++)
		release[i] = false;
	for (j = 0; j < h->nports; j++) {
		ret = match_one(h, j, our_pid, ours, n, map, why, wlen);
		if (ret)
			return ret;
		common += map[j] != VNETD_REC_NEW_PORT;
	}
	if (!common)
		return bad(why, wlen,
			   "none of the %u port%s given to the new vnetd (pid %u) is served by the running vnetd (pid %u, first port %s): not the vnetd to take over from (another --takeover-socket?)",
			   h->nports, h->nports == 1 ? "" : "s", h->pid,
			   our_pid, n ? ours[0].socket : "none");
	/* every port served but those left out goes over; closed ones drop */
	for (i = 0; i < n; i++) {
		for (j = 0; j < h->nports && map[j] != i; j++)
			;
		release[i] = j == h->nports && !closed[i];
	}
	return 0;
}

int vnetd_rec_port_parse(const void *body, size_t len, unsigned int nfds,
			 unsigned int nports, struct vnetd_rec_port *p,
			 char *why, size_t wlen)
{
	unsigned int want;

	if (len != sizeof(*p))
		return bad(why, wlen, "PORT of %zu bytes, expected %zu", len,
			   sizeof(*p));
	memcpy(p, body, sizeof(*p));
	if (p->index >= nports)
		return bad(why, wlen, "PORT %u of %u", p->index, nports);
	if (p->flags & ~VNETD_REC_P_ALL)
		return bad(why, wlen, "PORT %u: flags 0x%x", p->index, p->flags);
	if ((p->flags & VNETD_REC_P_CLOSED) &&
	    (p->flags != VNETD_REC_P_CLOSED || p->steer || p->mtu_orig))
		return bad(why, wlen, "PORT %u: closed, with flags 0x%x", p->index,
			   p->flags);
	if ((p->flags & VNETD_REC_P_NEW) &&
	    (p->flags != VNETD_REC_P_NEW || p->steer || p->mtu_orig))
		return bad(why, wlen, "PORT %u: new, with flags 0x%x", p->index,
			   p->flags);
	if (!p->queues || p->queues > VNETD_REC_MAX_QP)
		return bad(why, wlen, "PORT %u: %u tap queues", p->index,
			   p->queues);
	if (p->queues < 32 && (p->steer >> p->queues))
		return bad(why, wlen, "PORT %u: steering 0x%x for %u queue pairs",
			   p->index, p->steer, p->queues);
	if (p->mtu_orig && (p->mtu_orig < 68 || p->mtu_orig > 65535))
		return bad(why, wlen, "PORT %u: MTU %u", p->index, p->mtu_orig);
	want = (p->flags & (VNETD_REC_P_CLOSED | VNETD_REC_P_NEW) ? 0 :
								    p->queues) +
	       !!(p->flags & VNETD_REC_P_NETNS) +
	       !!(p->flags & VNETD_REC_P_LISTEN);
	if (nfds != want)
		return bad(why, wlen, "PORT %u: %u fds, its flags say %u",
			   p->index, nfds, want);
	return 0;
}

/* the fixed part of STATE, then per message: header, payload, fd count */
int vnetd_rec_state_parse(const void *body, size_t len, const int *fds,
			  unsigned int nfds, unsigned int nports,
			  struct vnetd_rec_state *s, struct vhost_user_msg *msgs,
			  unsigned int max, unsigned int *nmsg, char *why,
			  size_t wlen)
{
	const uint8_t *b = body, *end = b + len;
	unsigned int i, fd_next;

	*nmsg = 0;
	if (len < sizeof(*s))
		return bad(why, wlen, "STATE of %zu bytes", len);
	memcpy(s, b, sizeof(*s));
	b += sizeof(*s);
	if (s->index >= nports)
		return bad(why, wlen, "STATE of port %u of %u", s->index, nports);
	if (s->flags & ~VNETD_REC_S_ALL)
		return bad(why, wlen, "STATE %u: flags 0x%x", s->index, s->flags);
	if (s->nmsgs > max)
		return bad(why, wlen, "STATE %u: %u messages, at most %u",
			   s->index, s->nmsgs, max);
	if (s->frames > VNETD_REC_MAX_QP * 64)
		return bad(why, wlen, "STATE %u: %u frames", s->index, s->frames);
	fd_next = !!(s->flags & VNETD_REC_S_CONN);
	if (fd_next > nfds)
		return bad(why, wlen, "STATE %u: no fd for the connection",
			   s->index);
	for (i = 0; i < s->nmsgs; i++) {
		struct vhost_user_msg *m = &msgs[i];
		uint32_t k, n;

		memset(m, 0, sizeof(*m));
		if ((size_t)(end - b) < sizeof(m->hdr))
			return bad(why, wlen, "STATE %u: message %u cut short",
				   s->index, i);
		memcpy(&m->hdr, b, sizeof(m->hdr));
		b += sizeof(m->hdr);
		if (m->hdr.size > VHOST_USER_PAYLOAD_MAX ||
		    (size_t)(end - b) < m->hdr.size + sizeof(n))
			return bad(why, wlen, "STATE %u: message %u (%s) of %u bytes",
				   s->index, i,
				   vhost_user_request_name(m->hdr.request),
				   m->hdr.size);
		memcpy(&m->payload, b, m->hdr.size);
		b += m->hdr.size;
		memcpy(&n, b, sizeof(n));
		b += sizeof(n);
		if (n > VHOST_USER_MAX_FDS || n > nfds - fd_next)
			return bad(why, wlen, "STATE %u: message %u (%s) claims %u fds, %u left",
				   s->index, i,
				   vhost_user_request_name(m->hdr.request), n,
				   nfds - fd_next);
		for (k = 0; k < n; k++)
			m->fds[k] = fds[fd_next++];
		m->nfds = n;
	}
	if (b != end)
		return bad(why, wlen, "STATE %u: %zu bytes after its messages",
			   s->index, (size_t)(end - b));
	if (fd_next != nfds)
		return bad(why, wlen, "STATE %u: %u fds, its messages take %u",
			   s->index, nfds, fd_next);
	*nmsg = s->nmsgs;
	return 0;
}

size_t vnetd_rec_state_body(void *buf, size_t cap,
			    const struct vnetd_rec_state *s,
			    const struct vhost_user_msg *msgs, unsigned int n)
{
	uint8_t *b = buf, *end = b + cap;
	unsigned int i;

	if (cap < sizeof(*s))
		return 0;
	memcpy(b, s, sizeof(*s));
	b += sizeof(*s);
	for (i = 0; i < n; i++) {
		const struct vhost_user_msg *m = &msgs[i];
		uint32_t nf = m->nfds;

		if ((size_t)(end - b) < sizeof(m->hdr) + m->hdr.size + sizeof(nf))
			return 0;
		memcpy(b, &m->hdr, sizeof(m->hdr));
		b += sizeof(m->hdr);
		memcpy(b, &m->payload, m->hdr.size);
		b += m->hdr.size;
		memcpy(b, &nf, sizeof(nf));
		b += sizeof(nf);
	}
	return (size_t)(b - (uint8_t *)buf);
}

int vnetd_rec_frame_parse(const void *body, size_t len, unsigned int nports,
			  struct vnetd_rec_frame *f, const void **data,
			  char *why, size_t wlen)
{
	if (len < sizeof(*f))
		return bad(why, wlen, "FRAME of %zu bytes", len);
	memcpy(f, body, sizeof(*f));
	if (f->index >= nports || f->qp >= VNETD_REC_MAX_QP)
		return bad(why, wlen, "FRAME of port %u queue pair %u", f->index,
			   f->qp);
	if (f->hdr_len != 10 && f->hdr_len != 12)
		return bad(why, wlen, "FRAME with a %u-byte header", f->hdr_len);
	if (f->len != len - sizeof(*f) || f->len < f->hdr_len)
		return bad(why, wlen, "FRAME says %u bytes, %zu came", f->len,
			   len - sizeof(*f));
	*data = (const uint8_t *)body + sizeof(*f);
	return 0;
}

void vnetd_rec_fail_parse(const void *body, size_t len, char *reason,
			  size_t rlen)
{
	size_t n = len < rlen - 1 ? len : rlen - 1;

	memcpy(reason, body, n);
	reason[n] = '\0';
	/* printable: it goes into the log */
	for (size_t i = 0; i < n && reason[i]; i++)
		if ((unsigned char)reason[i] < 0x20 || reason[i] == 0x7f)
			reason[i] = '?';
}
