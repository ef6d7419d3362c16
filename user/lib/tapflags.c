// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * A tap's tun flags, from rtnetlink (RTM_GETLINK: IFLA_LINKINFO's tun
 * data, Linux 4.15 and later): multi-queue, vnet_hdr, queues attached;
 * and the kind of its ingress qdisc (RTM_GETQDISC).
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <libmnl/libmnl.h>
#include <linux/if_link.h>
#include <linux/pkt_sched.h>
#include <linux/rtnetlink.h>

#include "libvnet.h"

static int tun_data_cb(const struct nlattr *a, void *data)
{
	struct vnet_tap_flags *f = data;

	switch (mnl_attr_get_type(a)) {
	case IFLA_TUN_MULTI_QUEUE:
		if (!mnl_attr_validate(a, MNL_TYPE_U8))
			f->multi_queue = mnl_attr_get_u8(a);
		break;
	case IFLA_TUN_VNET_HDR:
		if (!mnl_attr_validate(a, MNL_TYPE_U8))
			f->vnet_hdr = mnl_attr_get_u8(a);
		break;
	case IFLA_TUN_NUM_QUEUES:
		if (!mnl_attr_validate(a, MNL_TYPE_U32))
			f->queues = mnl_attr_get_u32(a);
		break;
	}
	return MNL_CB_OK;
}

static int linkinfo_cb(const struct nlattr *a, void *data)
{
	struct vnet_tap_flags *f = data;

	if (mnl_attr_get_type(a) == IFLA_INFO_KIND &&
	    !mnl_attr_validate(a, MNL_TYPE_STRING))
		f->known = !strcmp(mnl_attr_get_str(a), "tun");
	else if (mnl_attr_get_type(a) == IFLA_INFO_DATA)
		mnl_attr_parse_nested(a, tun_data_cb, f);
	return MNL_CB_OK;
}

static int link_cb(const struct nlmsghdr *nlh, void *data)
{
	const struct nlattr *a;

	mnl_attr_for_each(a, nlh, sizeof(struct ifinfomsg))
		if (mnl_attr_get_type(a) == IFLA_LINKINFO)
			mnl_attr_parse_nested(a, linkinfo_cb, data);
	return MNL_CB_OK;
}

/*
 * Send NLH on a new rtnetlink socket, run CB on the answer (with
 * NLM_F_ACK: every message up to the ack)
 */
static int rtnl_ask(struct nlmsghdr *nlh, mnl_cb_t cb, void *data)
{
	const struct timeval tmo = { .tv_sec = 5 };
	char buf[MNL_SOCKET_BUFFER_SIZE];
	unsigned int portid;
	struct mnl_socket *nl;
	ssize_t n;
	int ret;

	nl = mnl_socket_open(NETLINK_ROUTE);
	if (!nl)
		return -errno;
	if (mnl_socket_bind(nl, 0, MNL_SOCKET_AUTOPID) < 0) {
		ret = -errno;
		goto out;
	}
	/* the kernel answers at once: a bound, never a hang */
	if (setsockopt(mnl_socket_get_fd(nl), SOL_SOCKET, SO_RCVTIMEO, &tmo,
		       sizeof(tmo))) {
		ret = -errno;
		goto out;
	}
	portid = mnl_socket_get_portid(nl);
	nlh->nlmsg_seq = 1;
	if (mnl_socket_sendto(nl, nlh, nlh->nlmsg_len) < 0) {
		ret = -errno;
		goto out;
	}
	do {
		n = mnl_socket_recvfrom(nl, buf, sizeof(buf));
		if (n < 0) {
			ret = -errno;
			goto out;
		}
		ret = mnl_cb_run(buf, (size_t)n, 1, portid, cb, data);
	} while (ret > MNL_CB_STOP && (nlh->nlmsg_flags & NLM_F_ACK));
	ret = ret < 0 ? -errno : 0;
out:
	mnl_socket_close(nl);
	return ret;
}

int vnet_tap_flags(int ifindex, struct vnet_tap_flags *f)
{
	char buf[MNL_SOCKET_BUFFER_SIZE];
	struct nlmsghdr *nlh = mnl_nlmsg_put_header(buf);
	struct ifinfomsg *ifm;
	int ret;

	memset(f, 0, sizeof(*f));
	nlh->nlmsg_type = RTM_GETLINK;
	nlh->nlmsg_flags = NLM_F_REQUEST;
	ifm = mnl_nlmsg_put_extra_header(nlh, sizeof(*ifm));
	ifm->ifi_family = AF_UNSPEC;
	ifm->ifi_index = ifindex;
	ret = rtnl_ask(nlh, link_cb, f);
	if (!ret && !f->known)
		ret = -EOPNOTSUPP; /* a kernel without tun's link data */
	return ret;
}

struct qdisc_find {
	int ifindex;
	char *kind;
	size_t len;
};

static int qdisc_cb(const struct nlmsghdr *nlh, void *data)
{
	const struct tcmsg *tcm = mnl_nlmsg_get_payload(nlh);
	struct qdisc_find *q = data;
	const struct nlattr *a;

	if (nlh->nlmsg_type != RTM_NEWQDISC || tcm->tcm_ifindex != q->ifindex ||
	    tcm->tcm_parent != TC_H_INGRESS)
		return MNL_CB_OK;
	mnl_attr_for_each(a, nlh, sizeof(*tcm)) {
		if (mnl_attr_get_type(a) == TCA_KIND &&
		    !mnl_attr_validate(a, MNL_TYPE_STRING))
			snprintf(q->kind, q->len, "%s", mnl_attr_get_str(a));
	}
	return MNL_CB_OK;
}

int vnet_tap_ingress_qdisc(int ifindex, char *kind, size_t len)
{
	char buf[MNL_SOCKET_BUFFER_SIZE];
	struct nlmsghdr *nlh = mnl_nlmsg_put_header(buf);
	struct qdisc_find q = { ifindex, kind, len };
	struct tcmsg *tcm;
	int ret;

	/* the one qdisc at TC_H_INGRESS, not a dump of the namespace's */
	kind[0] = 0;
	nlh->nlmsg_type = RTM_GETQDISC;
	/*
	 * tc_get_qdisc() answers the asker only when asked to echo, and
	 * says nothing of a built-in qdisc (noop, once a clsact is gone):
	 * the ack ends the answer
	 */
	nlh->nlmsg_flags = NLM_F_REQUEST | NLM_F_ECHO | NLM_F_ACK;
	tcm = mnl_nlmsg_put_extra_header(nlh, sizeof(*tcm));
	tcm->tcm_family = AF_UNSPEC;
	tcm->tcm_ifindex = ifindex;
	tcm->tcm_parent = TC_H_INGRESS;
	ret = rtnl_ask(nlh, qdisc_cb, &q);
	if (ret == -ENOENT || !strcmp(kind, "noop")) {
		kind[0] = 0;
		ret = 0;
	}
	return ret;
}
