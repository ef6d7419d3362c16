// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * ethtool netlink (generic netlink family "ethtool") with libmnl: coalesce
 * get/set and the "monitor" multicast group's coalesce notifications.  The
 * family and the group are resolved by name (CTRL_CMD_GETFAMILY); errors
 * carry the kernel's extack message.
 */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/socket.h>
#include <libmnl/libmnl.h>
#include <linux/ethtool_netlink.h>
#include <linux/genetlink.h>
#include <linux/netlink.h>

#include "libvnet.h"

struct vnet_nl {
	struct mnl_socket *sock;
	unsigned int portid;
	unsigned int seq;
	__u16 family;
	__u32 monitor_grp;
	char buf[32768]; /* MNL_SOCKET_DUMP_SIZE; a page can be too small */
};

struct vnet_ethtool_monitor {
	struct vnet_nl nl;
};

/* what one request's callbacks collect */
struct nl_req {
	int error;        /* -errno from an NLMSG_ERROR, 0 if none */
	char extack[256]; /* the kernel's message, "" if none */
	/* CTRL_CMD_GETFAMILY */
	__u16 family;
	__u32 grp;
	const char *grp_name;
	/* ETHTOOL_MSG_COALESCE_GET_REPLY */
	int ifindex;
	struct vnet_ethtool_coalesce *coal;
	bool got;
};

static int nl_err_cb(const struct nlmsghdr *nlh, void *data)
{
	const struct nlmsgerr *e = mnl_nlmsg_get_payload(nlh);
	struct nl_req *r = data;
	const struct nlattr *a;
	unsigned int off = sizeof(*e);

	if (nlh->nlmsg_len < mnl_nlmsg_size(sizeof(*e))) {
		errno = EBADMSG;
		return MNL_CB_ERROR;
	}
	if (!e->error)
		return MNL_CB_STOP; /* the ack */
	r->error = e->error;
	if (nlh->nlmsg_flags & NLM_F_ACK_TLVS) {
		if (!(nlh->nlmsg_flags & NLM_F_CAPPED))
			off += e->msg.nlmsg_len - sizeof(struct nlmsghdr);
		mnl_attr_for_each(a, nlh, off) {
			if (mnl_attr_get_type(a) == NLMSGERR_ATTR_MSG &&
			    !mnl_attr_validate(a, MNL_TYPE_NUL_STRING))
				snprintf(r->extack, sizeof(r->extack), "%s",
					 mnl_attr_get_str(a));
		}
	}
	errno = -e->error;
	return MNL_CB_ERROR;
}

static int nl_done_cb(const struct nlmsghdr *nlh, void *data)
{
	(void)nlh;
	(void)data;
	return MNL_CB_STOP;
}

static mnl_cb_t nl_ctl_cbs[NLMSG_MIN_TYPE] = {
	[NLMSG_ERROR] = nl_err_cb,
	[NLMSG_DONE] = nl_done_cb,
};

/*
 * Send the request in nl->buf and run cb on the replies until the ack (or
 * NLMSG_DONE).  Returns 0 or -errno; r->extack has the kernel's message.
 */
static int nl_talk(struct vnet_nl *nl, struct nlmsghdr *nlh, mnl_cb_t cb,
		   struct nl_req *r)
{
	unsigned int seq = nlh->nlmsg_seq;
	ssize_t n;
	int ret;

	if (mnl_socket_sendto(nl->sock, nlh, nlh->nlmsg_len) < 0)
		return -errno;
	for (;;) {
		n = mnl_socket_recvfrom(nl->sock, nl->buf, sizeof(nl->buf));
		if (n < 0)
			return -errno;
		ret = mnl_cb_run2(nl->buf, (size_t)n, seq, nl->portid, cb, r,
				  nl_ctl_cbs, NLMSG_MIN_TYPE);
		if (ret == MNL_CB_STOP)
			return 0;
		if (ret < 0)
			return r->error ? r->error : -errno;
	}
}

static struct nlmsghdr *genl_start(struct vnet_nl *nl, __u16 type, __u8 cmd,
				   __u8 version, __u16 flags)
{
	struct nlmsghdr *nlh = mnl_nlmsg_put_header(nl->buf);
	struct genlmsghdr *g;

	nlh->nlmsg_type = type;
	nlh->nlmsg_flags = NLM_F_REQUEST | NLM_F_ACK | flags;
	nlh->nlmsg_seq = ++nl->seq;
	g = mnl_nlmsg_put_extra_header(nlh, sizeof(*g));
	g->cmd = cmd;
	g->version = version;
	return nlh;
}

static int grp_attr_cb(const struct nlattr *a, void *data)
{
	const struct nlattr **tb = data;
	int type = mnl_attr_get_type(a);

	if (type == CTRL_ATTR_MCAST_GRP_NAME &&
	    mnl_attr_validate(a, MNL_TYPE_NUL_STRING) < 0)
		return MNL_CB_OK;
	if (type == CTRL_ATTR_MCAST_GRP_ID &&
	    mnl_attr_validate(a, MNL_TYPE_U32) < 0)
		return MNL_CB_OK;
	if (type <= CTRL_ATTR_MCAST_GRP_MAX)
		tb[type] = a;
	return MNL_CB_OK;
}

/* one CTRL_ATTR_MCAST_GROUPS entry: its id if its name is r->grp_name */
static void family_grp(const struct nlattr *g, struct nl_req *r)
{
	const struct nlattr *tb[CTRL_ATTR_MCAST_GRP_MAX + 1] = {};
	const struct nlattr *name, *id;

	mnl_attr_parse_nested(g, grp_attr_cb, tb);
	name = tb[CTRL_ATTR_MCAST_GRP_NAME];
	id = tb[CTRL_ATTR_MCAST_GRP_ID];
	if (name && id && r->grp_name &&
	    !strcmp(mnl_attr_get_str(name), r->grp_name))
		r->grp = mnl_attr_get_u32(id);
}

static int family_cb(const struct nlmsghdr *nlh, void *data)
{
	struct nl_req *r = data;
	const struct nlattr *a, *g;

	mnl_attr_for_each(a, nlh, sizeof(struct genlmsghdr)) {
		switch (mnl_attr_get_type(a)) {
		case CTRL_ATTR_FAMILY_ID:
			if (!mnl_attr_validate(a, MNL_TYPE_U16))
				r->family = mnl_attr_get_u16(a);
			break;
		case CTRL_ATTR_MCAST_GROUPS:
			mnl_attr_for_each_nested(g, a)
				family_grp(g, r);
			break;
		}
	}
	return MNL_CB_OK;
}

static void nl_close(struct vnet_nl *nl)
{
	if (nl->sock)
		mnl_socket_close(nl->sock);
	nl->sock = NULL;
}

/* Open a generic netlink socket and resolve "ethtool" (and "monitor"). */
static int nl_open(struct vnet_nl *nl, bool monitor, struct vnet_err *err)
{
	struct nl_req r = { .grp_name = ETHTOOL_MCGRP_MONITOR_NAME };
	struct nlmsghdr *nlh;
	int one = 1, ret;

	nl->sock = mnl_socket_open2(NETLINK_GENERIC, SOCK_CLOEXEC);
	if (!nl->sock) {
		ret = -errno;
		vnet_err_set(err, "cannot open a generic netlink socket: %s",
			     strerror(errno));
		return ret;
	}
	if (mnl_socket_bind(nl->sock, 0, MNL_SOCKET_AUTOPID) < 0) {
		ret = -errno;
		vnet_err_set(err, "cannot bind a generic netlink socket: %s",
			     strerror(errno));
		goto fail;
	}
	nl->portid = mnl_socket_get_portid(nl->sock);
	nl->seq = (unsigned int)time(NULL);
	/* the kernel's error messages (extack), without the echoed request */
	mnl_socket_setsockopt(nl->sock, NETLINK_EXT_ACK, &one, sizeof(one));
	mnl_socket_setsockopt(nl->sock, NETLINK_CAP_ACK, &one, sizeof(one));

	nlh = genl_start(nl, GENL_ID_CTRL, CTRL_CMD_GETFAMILY, 1, 0);
	mnl_attr_put_strz(nlh, CTRL_ATTR_FAMILY_NAME, ETHTOOL_GENL_NAME);
	ret = nl_talk(nl, nlh, family_cb, &r);
	if (ret || !r.family) {
		if (!ret || ret == -ENOENT)
			vnet_err_set(err, "the kernel has no ethtool netlink interface (generic netlink family '%s', CONFIG_ETHTOOL_NETLINK)",
				     ETHTOOL_GENL_NAME);
		else
			vnet_err_set(err, "cannot resolve generic netlink family '%s': %s",
				     ETHTOOL_GENL_NAME,
				     r.extack[0] ? r.extack : strerror(-ret));
		ret = ret ? ret : -ENOENT;
		goto fail;
	}
	nl->family = r.family;
	if (!monitor)
		return 0;
	if (!r.grp) {
		vnet_err_set(err, "generic netlink family '%s' has no multicast group '%s'",
			     ETHTOOL_GENL_NAME, ETHTOOL_MCGRP_MONITOR_NAME);
		ret = -ENOENT;
		goto fail;
	}
	nl->monitor_grp = r.grp;
	if (mnl_socket_setsockopt(nl->sock, NETLINK_ADD_MEMBERSHIP, &r.grp,
				  sizeof(r.grp)) < 0) {
		ret = -errno;
		vnet_err_set(err, "cannot join ethtool netlink group '%s': %s",
			     ETHTOOL_MCGRP_MONITOR_NAME, strerror(errno));
		goto fail;
	}
	return 0;
fail:
	nl_close(nl);
	return ret;
}

static void put_header(struct nlmsghdr *nlh, __u16 type, int ifindex)
{
	struct nlattr *nest = mnl_attr_nest_start(nlh, type);

	mnl_attr_put_u32(nlh, ETHTOOL_A_HEADER_DEV_INDEX, (__u32)ifindex);
	mnl_attr_nest_end(nlh, nest);
}

static int header_ifindex(const struct nlattr *nest)
{
	const struct nlattr *a;

	mnl_attr_for_each_nested(a, nest) {
		if (mnl_attr_get_type(a) == ETHTOOL_A_HEADER_DEV_INDEX &&
		    !mnl_attr_validate(a, MNL_TYPE_U32))
			return (int)mnl_attr_get_u32(a);
	}
	return 0;
}

/* ETHTOOL_A_COALESCE_* -> struct vnet_ethtool_coalesce */
static const struct {
	__u16 attr;
	__u32 bit;
	size_t off;
} coal_u32[] = {
	{ ETHTOOL_A_COALESCE_RX_USECS, VNET_ETC_RX_USECS,
	  offsetof(struct vnet_ethtool_coalesce, rx_usecs) },
	{ ETHTOOL_A_COALESCE_RX_MAX_FRAMES, VNET_ETC_RX_FRAMES,
	  offsetof(struct vnet_ethtool_coalesce, rx_frames) },
	{ ETHTOOL_A_COALESCE_TX_USECS, VNET_ETC_TX_USECS,
	  offsetof(struct vnet_ethtool_coalesce, tx_usecs) },
	{ ETHTOOL_A_COALESCE_TX_MAX_FRAMES, VNET_ETC_TX_FRAMES,
	  offsetof(struct vnet_ethtool_coalesce, tx_frames) },
};

/*
 * Parse an ETHTOOL_MSG_COALESCE_GET_REPLY or _NTF.  Returns the device's
 * ifindex from the header (0 if none), fills c.
 */
static int coal_parse(const struct nlmsghdr *nlh,
		      struct vnet_ethtool_coalesce *c)
{
	const struct nlattr *a;
	int ifindex = 0;
	size_t i;

	memset(c, 0, sizeof(*c));
	mnl_attr_for_each(a, nlh, sizeof(struct genlmsghdr)) {
		__u16 type = mnl_attr_get_type(a);

		if (type == ETHTOOL_A_COALESCE_HEADER) {
			ifindex = header_ifindex(a);
			continue;
		}
		if (type == ETHTOOL_A_COALESCE_USE_ADAPTIVE_RX &&
		    !mnl_attr_validate(a, MNL_TYPE_U8)) {
			c->adaptive_rx = mnl_attr_get_u8(a);
			c->present |= VNET_ETC_ADAPTIVE_RX;
			continue;
		}
		if (type == ETHTOOL_A_COALESCE_USE_ADAPTIVE_TX &&
		    !mnl_attr_validate(a, MNL_TYPE_U8)) {
			c->adaptive_tx = mnl_attr_get_u8(a);
			c->present |= VNET_ETC_ADAPTIVE_TX;
			continue;
		}
		for (i = 0; i < sizeof(coal_u32) / sizeof(coal_u32[0]); i++) {
			if (type != coal_u32[i].attr ||
			    mnl_attr_validate(a, MNL_TYPE_U32))
				continue;
			*(__u32 *)((char *)c + coal_u32[i].off) =
				mnl_attr_get_u32(a);
			c->present |= coal_u32[i].bit;
		}
	}
	return ifindex;
}

static int coal_reply_cb(const struct nlmsghdr *nlh, void *data)
{
	const struct genlmsghdr *g = mnl_nlmsg_get_payload(nlh);
	struct nl_req *r = data;
	struct vnet_ethtool_coalesce c;

	if (g->cmd != ETHTOOL_MSG_COALESCE_GET_REPLY)
		return MNL_CB_OK;
	if (coal_parse(nlh, &c) == r->ifindex) {
		*r->coal = c;
		r->got = true;
	}
	return MNL_CB_OK;
}

static const char *nl_msg(const struct nl_req *r, int ret)
{
	return r->extack[0] ? r->extack : strerror(-ret);
}

int vnet_ethtool_coalesce_get(int ifindex, struct vnet_ethtool_coalesce *c,
			      struct vnet_err *err)
{
	struct nl_req r = { .ifindex = ifindex, .coal = c };
	struct vnet_nl *nl;
	struct nlmsghdr *nlh;
	int ret;

	memset(c, 0, sizeof(*c));
	nl = calloc(1, sizeof(*nl));
	if (!nl)
		return -ENOMEM;
	ret = nl_open(nl, false, err);
	if (ret)
		goto out;
	nlh = genl_start(nl, nl->family, ETHTOOL_MSG_COALESCE_GET,
			 ETHTOOL_GENL_VERSION, 0);
	put_header(nlh, ETHTOOL_A_COALESCE_HEADER, ifindex);
	ret = nl_talk(nl, nlh, coal_reply_cb, &r);
	if (ret) {
		vnet_err_set(err, "ethtool netlink: cannot get coalesce parameters of ifindex %d: %s",
			     ifindex, nl_msg(&r, ret));
		goto out;
	}
	if (!r.got) {
		ret = -ENODATA;
		vnet_err_set(err, "ethtool netlink: no coalesce reply for ifindex %d",
			     ifindex);
	}
out:
	nl_close(nl);
	free(nl);
	return ret;
}

int vnet_ethtool_coalesce_set(int ifindex,
			      const struct vnet_ethtool_coalesce *c,
			      struct vnet_err *err)
{
	struct nl_req r = {};
	struct vnet_nl *nl;
	struct nlmsghdr *nlh;
	size_t i;
	int ret;

	nl = calloc(1, sizeof(*nl));
	if (!nl)
		return -ENOMEM;
	ret = nl_open(nl, false, err);
	if (ret)
		goto out;
	nlh = genl_start(nl, nl->family, ETHTOOL_MSG_COALESCE_SET,
			 ETHTOOL_GENL_VERSION, 0);
	put_header(nlh, ETHTOOL_A_COALESCE_HEADER, ifindex);
	for (i = 0; i < sizeof(coal_u32) / sizeof(coal_u32[0]); i++)
		if (c->present & coal_u32[i].bit)
			mnl_attr_put_u32(nlh, coal_u32[i].attr,
					 *(const __u32 *)((const char *)c +
							  coal_u32[i].off));
	if (c->present & VNET_ETC_ADAPTIVE_RX)
		mnl_attr_put_u8(nlh, ETHTOOL_A_COALESCE_USE_ADAPTIVE_RX,
				c->adaptive_rx);
	if (c->present & VNET_ETC_ADAPTIVE_TX)
		mnl_attr_put_u8(nlh, ETHTOOL_A_COALESCE_USE_ADAPTIVE_TX,
				c->adaptive_tx);
	ret = nl_talk(nl, nlh, NULL, &r);
	if (ret)
		vnet_err_set(err, "ethtool netlink: cannot set coalesce parameters: %s%s",
			     nl_msg(&r, ret),
			     ret == -EPERM ? " (needs CAP_NET_ADMIN)" : "");
out:
	nl_close(nl);
	free(nl);
	return ret;
}

int vnet_ethtool_monitor_open(struct vnet_ethtool_monitor **monp,
			      struct vnet_err *err)
{
	struct vnet_ethtool_monitor *mon;
	int ret;

	*monp = NULL;
	mon = calloc(1, sizeof(*mon));
	if (!mon)
		return -ENOMEM;
	ret = nl_open(&mon->nl, true, err);
	if (ret) {
		free(mon);
		return ret;
	}
	*monp = mon;
	return 0;
}

int vnet_ethtool_monitor_fd(const struct vnet_ethtool_monitor *mon)
{
	return mnl_socket_get_fd(mon->nl.sock);
}

void vnet_ethtool_monitor_close(struct vnet_ethtool_monitor *mon)
{
	if (!mon)
		return;
	nl_close(&mon->nl);
	free(mon);
}

struct mon_ctx {
	__u16 family;
	int ifindex;
	struct vnet_ethtool_coalesce *coal;
	int found;
};

static int mon_cb(const struct nlmsghdr *nlh, void *data)
{
	const struct genlmsghdr *g = mnl_nlmsg_get_payload(nlh);
	struct mon_ctx *m = data;
	struct vnet_ethtool_coalesce c;

	if (nlh->nlmsg_type != m->family ||
	    nlh->nlmsg_len < mnl_nlmsg_size(sizeof(*g)) ||
	    g->cmd != ETHTOOL_MSG_COALESCE_NTF)
		return MNL_CB_OK;
	if (coal_parse(nlh, &c) != m->ifindex)
		return MNL_CB_OK;
	*m->coal = c; /* the newest wins */
	m->found = 1;
	return MNL_CB_OK;
}

int vnet_ethtool_monitor_read(struct vnet_ethtool_monitor *mon, int ifindex,
			      int timeout_ms, struct vnet_ethtool_coalesce *c,
			      struct vnet_err *err)
{
	struct mon_ctx m = { .family = mon->nl.family, .ifindex = ifindex,
			     .coal = c };
	struct pollfd pfd = { .fd = vnet_ethtool_monitor_fd(mon),
			      .events = POLLIN };
	struct timespec t0, t;
	int wait = timeout_ms, ret;
	ssize_t n;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (;;) {
		ret = poll(&pfd, 1, wait);
		if (ret < 0 && errno != EINTR) {
			ret = -errno;
			vnet_err_set(err, "ethtool monitor: poll: %s",
				     strerror(errno));
			return ret;
		}
		if (ret > 0) {
			n = recv(pfd.fd, mon->nl.buf, sizeof(mon->nl.buf),
				 MSG_DONTWAIT);
			if (n < 0 && errno != EAGAIN && errno != EINTR) {
				ret = -errno;
				vnet_err_set(err, "ethtool monitor: %s%s",
					     strerror(errno),
					     errno == ENOBUFS ? " (notifications were lost: read the current values with vnet_ethtool_coalesce_get())" : "");
				return ret;
			}
			/* multicast: no sequence number, no port id */
			if (n > 0)
				mnl_cb_run(mon->nl.buf, (size_t)n, 0, 0, mon_cb,
					   &m);
			/* drain what is queued before deciding */
			wait = 0;
			continue;
		}
		/* nothing (more) queued */
		if (m.found || !timeout_ms)
			return m.found;
		if (timeout_ms < 0) {
			wait = -1;
			continue;
		}
		clock_gettime(CLOCK_MONOTONIC, &t);
		wait = timeout_ms - (int)((t.tv_sec - t0.tv_sec) * 1000 +
					  (t.tv_nsec - t0.tv_nsec) / 1000000);
		if (wait <= 0)
			return 0;
	}
}
