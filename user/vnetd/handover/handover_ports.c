// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * A hand-over that changes the ports, the new vnetd's side (docs/
 * handover.md "Ports"): a port the running vnetd does not serve is set up
 * here before READY, as a start would, so that one that cannot be fails
 * the hand-over with nothing changed; the running vnetd's ports that this
 * one lacks are stopped by it at the commit, only if this vnetd was told
 * so (--release-missing), and said by name; a port closed in the running
 * vnetd is set up anew after the commit.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "handover_int.h"
#include "log.h"
#include "port/port.h"
#include "record.h"
#include "server.h"

/* the running vnetd's ports that this one lacks (RELEASE), until said */
static struct vnetd_rec_hello released;

int vnetd_ho_add_port(struct vhost_server *srv, struct vnetd_port *p,
		      struct vnetd_ho_taken *t, char *why, size_t wlen)
{
	int ret;

	/* taps and sockets checked first, as a start does: they say why */
	if (vnetd_tap_precheck(&p->cfg) || vnetd_socket_precheck(&p->cfg)) {
		ret = -EBUSY;
	} else {
		ret = vnetd_port_open(p, srv);
		t->added = !ret;
	}
	if (ret) {
		snprintf(why, wlen,
			 "%s: a port the running vnetd does not serve, to be added: it cannot be set up (tap %s; the log of the new vnetd, pid %d, says why); nothing changed",
			 p->name, p->cfg.tap, (int)getpid());
		return ret < 0 ? ret : -EIO;
	}
	pr_info(p, "added: not served by the running vnetd, set up anew");
	return 0;
}

void vnetd_ho_unadd_port(struct vhost_server *srv, struct vnetd_port *p)
{
	vhost_server_remove_port(srv, &p->device.dev);
	vnetd_port_close(p);
	pr_info(p,
		"not added: the hand-over failed; its socket and pins removed (and the tap, if vnetd created it)");
}

int vnetd_ho_release_check(const struct vnetd_ho_msg *m, bool release_ok,
			   char *why, size_t wlen)
{
	size_t len;
	int ret;

	released.nports = 0;
	if (m->nfds) {
		snprintf(why, wlen, "RELEASE with fds");
		return -EPROTO;
	}
	ret = vnetd_rec_release_parse(m->body, m->len, &released, why, wlen);
	if (ret || release_ok)
		return ret;
	len = (size_t)
		snprintf(why, wlen,
			 "the running vnetd (pid %u) serves %u port%s not given to this vnetd:",
			 released.pid, released.nports,
			 released.nports == 1 ? "" : "s");
	for (uint32_t i = 0; i < released.nports && len < wlen; i++)
		len += (size_t)snprintf(why + len, wlen - len, " %s (tap %s)",
					released.port[i].socket,
					released.port[i].tap);
	if (len < wlen)
		snprintf(why + len, wlen - len,
			 "; a hand-over stops them (their VMs lose the network) only with --release-missing: give it, or give this vnetd those ports too (a socket path mistyped?)");
	released.nports = 0;
	return -EPERM;
}

void vnetd_ho_release_report(void)
{
	for (uint32_t i = 0; i < released.nports; i++)
		vhost_warn("%s: released: the running vnetd (pid %u) stops it, not among this vnetd's ports (--release-missing): tap %s queues=%u, its frontend disconnected, its socket and pins removed (and the tap, if vnetd created it)",
			   released.port[i].socket, released.pid,
			   released.port[i].tap, released.port[i].queues);
	released.nports = 0;
}

void vnetd_ho_reopen_closed(struct vhost_server *srv, struct vnetd_port *ports,
			    unsigned int n, const struct vnetd_ho_taken *t)
{
	unsigned int i;

	for (i = 0; i < n; i++) {
		if (!t[i].fresh)
			continue;
		if (vnetd_tap_precheck(&ports[i].cfg) ||
		    vnetd_socket_precheck(&ports[i].cfg) ||
		    vnetd_port_open(&ports[i], srv)) {
			ports[i].gone = true;
			pr_err(&ports[i],
			       "closed in the running vnetd (its tap or netns went) and cannot be set up again: port closed; the other ports are served");
			continue;
		}
		pr_info(&ports[i],
			"taken over: closed in the running vnetd, set up again");
	}
}
