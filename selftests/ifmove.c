// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * Move a device to another network namespace under an ifindex of the
 * test's choosing (IFLA_NEW_IFINDEX, Linux 6.7 and later), for the shell
 * tests: a tap beyond the shared classifier's ifindex-indexed array.
 *
 *   ifmove DEV NETNS_PATH IFINDEX   DEV of this namespace into the one at
 *                                   NETNS_PATH as IFINDEX: exit 0, or 1
 *                                   with the kernel's reason on stderr
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <net/if.h>
#include <sys/socket.h>
#include <libmnl/libmnl.h>
#include <linux/if_link.h>
#include <linux/rtnetlink.h>

#define IFMOVE_NEW_IFINDEX                                                     \
	49 /* IFLA_NEW_IFINDEX: newer than some uapi copies */

int main(int argc, char **argv)
{
	char buf[MNL_SOCKET_BUFFER_SIZE];
	struct mnl_socket *nl;
	struct nlmsghdr *nlh;
	struct ifinfomsg *ifm;
	int nsfd, ifindex, ret;
	ssize_t n;

	if (argc != 4) {
		fprintf(stderr, "usage: ifmove DEV NETNS_PATH IFINDEX\n");
		return 2;
	}
	ifindex = (int)if_nametoindex(argv[1]);
	nsfd = open(argv[2], O_RDONLY | O_CLOEXEC);
	if (!ifindex || nsfd < 0) {
		fprintf(stderr, "ifmove: %s: %s\n",
			!ifindex ? argv[1] : argv[2], strerror(errno));
		return 1;
	}
	nlh = mnl_nlmsg_put_header(buf);
	nlh->nlmsg_type = RTM_NEWLINK;
	nlh->nlmsg_flags = NLM_F_REQUEST | NLM_F_ACK;
	nlh->nlmsg_seq = 1;
	ifm = mnl_nlmsg_put_extra_header(nlh, sizeof(*ifm));
	ifm->ifi_family = AF_UNSPEC;
	ifm->ifi_index = ifindex;
	mnl_attr_put_u32(nlh, IFLA_NET_NS_FD, (unsigned int)nsfd);
	mnl_attr_put_u32(nlh, IFMOVE_NEW_IFINDEX, (unsigned int)atoi(argv[3]));
	nl = mnl_socket_open(NETLINK_ROUTE);
	if (!nl || mnl_socket_bind(nl, 0, MNL_SOCKET_AUTOPID) < 0 ||
	    mnl_socket_sendto(nl, nlh, nlh->nlmsg_len) < 0) {
		fprintf(stderr, "ifmove: netlink: %s\n", strerror(errno));
		return 1;
	}
	n = mnl_socket_recvfrom(nl, buf, sizeof(buf));
	ret = n < 0 ? -1 :
		      mnl_cb_run(buf, (size_t)n, 1, mnl_socket_get_portid(nl),
				 NULL, NULL);
	if (ret < 0) {
		fprintf(stderr, "ifmove: %s to %s as %s: %s\n", argv[1],
			argv[2], argv[3], strerror(errno));
		return 1;
	}
	mnl_socket_close(nl);
	return 0;
}
