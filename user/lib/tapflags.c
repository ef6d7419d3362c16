// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * A tap's tun flags, from rtnetlink (RTM_GETLINK: IFLA_LINKINFO's tun
 * data, Linux 4.15 and later): multi-queue, vnet_hdr, queues attached.
 */
#include <errno.h>
#include <string.h>
#include <sys/socket.h>
#include <libmnl/libmnl.h>
#include <linux/if_link.h>
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

int vnet_tap_flags(int ifindex, struct vnet_tap_flags *f)
{
	char buf[MNL_SOCKET_BUFFER_SIZE];
	struct mnl_socket *nl;
	struct nlmsghdr *nlh;
	struct ifinfomsg *ifm;
	unsigned int seq = 1, portid;
	ssize_t n;
	int ret;

	memset(f, 0, sizeof(*f));
	nl = mnl_socket_open(NETLINK_ROUTE);
	if (!nl)
		return -errno;
	if (mnl_socket_bind(nl, 0, MNL_SOCKET_AUTOPID) < 0) {
		ret = -errno;
		goto out;
	}
	portid = mnl_socket_get_portid(nl);
	nlh = mnl_nlmsg_put_header(buf);
	nlh->nlmsg_type = RTM_GETLINK;
	nlh->nlmsg_flags = NLM_F_REQUEST;
	nlh->nlmsg_seq = seq;
	ifm = mnl_nlmsg_put_extra_header(nlh, sizeof(*ifm));
	ifm->ifi_family = AF_UNSPEC;
	ifm->ifi_index = ifindex;
	if (mnl_socket_sendto(nl, nlh, nlh->nlmsg_len) < 0) {
		ret = -errno;
		goto out;
	}
	n = mnl_socket_recvfrom(nl, buf, sizeof(buf));
	if (n < 0) {
		ret = -errno;
		goto out;
	}
	ret = mnl_cb_run(buf, (size_t)n, seq, portid, link_cb, f) < 0 ? -errno : 0;
	if (!ret && !f->known)
		ret = -EOPNOTSUPP; /* a kernel without tun's link data */
out:
	mnl_socket_close(nl);
	return ret;
}
