// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * Every port at once: opened at start-up, closed at the stop (port.h).
 *
 * Opening, a port's preparation (its tap, vnet's maps and programs) waits
 * in the kernel too: an RCU grace period for each tcx link and each change
 * of the shared classifier's maps of maps, 50-75 ms a port with little
 * CPU.  The ports are prepared side by side by the same threads, before
 * the sandbox (no filter yet), each in its own netns; then served (queue
 * threads, device, socket) in order by this thread.
 *
 * Closing, a port's close
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
#include <malloc.h>
#include <pthread.h>
#include <signal.h>
#include <string.h>

#include "ports.h"
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
		/* vnetd_ports_close()'s second round only */
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

void vnetd_ports_each(struct vnetd_port *ports, unsigned int n,
		      void (*fn)(struct vnetd_port *p))
{
	struct closer c = { .ports = ports, .n = n, .close = fn };

	closers(&c);
}

static void port_prepare(struct vnetd_port *p)
{
	p->prepared = vnetd_port_prepare(p);
}

int vnetd_ports_open(struct vnetd_port *ports, unsigned int n,
		     struct vhost_server *srv, unsigned int *opened)
{
	unsigned int i, j;

	/*
	 * one malloc arena for the preparing threads too: an arena each
	 * kept what libbpf's loads left in it for the life of the process
	 * (+60 MiB at 256 ports, not given back by malloc_trim())
	 */
	mallopt(M_ARENA_MAX, 1);
	vnetd_ports_each(ports, n, port_prepare);
	/*
	 * what the threads freed (libbpf's loads: their malloc arenas) back
	 * to the system, not kept for the life of the process
	 */
	malloc_trim(0);
	for (i = 0; i < n; i++) {
		if (ports[i].prepared || vnetd_port_serve(&ports[i], srv))
			break;
		(*opened)++;
	}
	if (i == n)
		return 0;
	/* the prepared ports after the one that failed: undone here */
	for (j = i + 1; j < n; j++)
		if (!ports[j].prepared)
			vnetd_port_unprepare(&ports[j]);
	return -1;
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
