// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * Every port closed at once, at vnetd's stop (port.h).  A port's close
 * waits in the kernel: for its queue threads, for tun's detach of each tap
 * queue (an RCU grace period) and for the RTNL lock that tun's ioctls and
 * detach take.  One port after another, a thousand ports took over half a
 * minute.  CLOSERS threads, each taking the next port, close them side by
 * side, in two rounds: every port but its pins first, then the pins.  The
 * links go with their pins, released by the kernel afterwards, each with
 * an RCU grace period inside the RTNL lock (tcx): unpinned in the first
 * round, they would hold every later port's tun ioctl and detach behind
 * them.  The closers are made here, after the sandbox, and inherit the
 * control thread's filter and capabilities (sandbox.c); a port's close
 * touches only that port (its own netns switch, per thread), and vnet's
 * shared dispatcher takes its own lock.
 */
#include <pthread.h>
#include <signal.h>
#include <string.h>

#include "close.h"
#include "log.h"
#include "port.h"
#include "base/testing.h"

/* threads closing ports, this one among them */
#define CLOSERS 32

struct closer {
	struct vnetd_port *ports;
	unsigned int n;
	void (*close)(struct vnetd_port *p);
	unsigned int next;    /* the next port to close (atomic) */
	unsigned int closed;  /* (atomic) */
	unsigned int kill_at; /* a test build's VNETD_TEST_STOP_KILL */
};

static void *closer_run(void *arg)
{
	struct closer *c = arg;
	unsigned int i;

	while ((i = __atomic_fetch_add(&c->next, 1, __ATOMIC_RELAXED)) < c->n) {
		if (!c->ports[i].gone)
			c->close(&c->ports[i]);
		/* a test build: vnetd killed while it stops (the other
		 * closers anywhere in theirs) */
		if (c->kill_at &&
		    __atomic_add_fetch(&c->closed, 1, __ATOMIC_RELAXED) ==
			    c->kill_at)
			raise(SIGKILL);
	}
	return NULL;
}

/* One round: C's close for every port, by up to CLOSERS threads. */
static void closers(struct closer *c)
{
	pthread_t th[CLOSERS - 1];
	pthread_attr_t a;
	unsigned int k, started = 0;
	int ret = 0;

	c->next = 0;
	pthread_attr_init(&a);
	/* libbpf and the status reads keep a few path buffers on the stack */
	pthread_attr_setstacksize(&a, 1024 * 1024);
	for (k = 0; k + 1 < CLOSERS && k + 1 < c->n; k++) {
		ret = pthread_create(&th[k], &a, closer_run, c);
		if (ret)
			break;
		started++;
	}
	pthread_attr_destroy(&a);
	if (ret)
		vhost_warn("closing ports with %u thread%s: %s", started + 1,
			   started ? "s" : "", strerror(ret));
	/* this thread too; alone when none could be made */
	closer_run(c);
	for (k = 0; k < started; k++)
		pthread_join(th[k], NULL);
}

void vnetd_ports_close(struct vnetd_port *ports, unsigned int n)
{
	struct closer c = { .ports = ports,
			    .n = n,
			    .close = vnetd_port_close_taps };

	closers(&c);
	c.close = vnetd_port_close_pins;
	/* counted in the second round: the pins are what a kill leaves */
	c.kill_at = vnetd_switch(VNETD_SW_STOP_KILL, 0);
	closers(&c);
}
