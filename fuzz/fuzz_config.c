// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * fuzz_config: vnetd's --config FILE parser and --port SPEC parser
 * (user/vnetd/config/portcfg.c), on the daemon's own code: the target links
 * vnetd's objects, so vnetd_parse_config() and vnetd_parse_port_spec()
 * are the functions vnetd runs.
 *
 * The input is the file: written to a memfd and parsed through its
 * /proc/self/fd path (vnetd_parse_config() opens a path, as for a real file).
 * Its first line is also given to vnetd_parse_port_spec().
 *
 * Oracles: the parser returns 0 or the usage exit status; on success every
 * port has a socket path, a valid interface name, 1..16 queues and CPUs
 * in range; and the ports, written back as a configuration file and
 * parsed again, come back identical (nothing is lost or invented in the
 * parse).
 */
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>

#include "fuzz.h"
#include "config/config.h"
#include "config/portcfg.h"
#include "base/util.h"

static int memfd = -1;
static char path[64];
static struct vnetd_opts o, o2;

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	memfd = memfd_create("vnetfuzz-config", MFD_CLOEXEC);
	if (memfd < 0)
		abort();
	snprintf(path, sizeof(path), "/proc/self/fd/%d", memfd);
	return 0;
}

static void file_set(const void *data, size_t size)
{
	if (ftruncate(memfd, 0) ||
	    (size && pwrite(memfd, data, size, 0) != (ssize_t)size))
		abort();
}

static void port_check(const struct vnetd_port_cfg *c)
{
	unsigned int i;

	FUZZ_ASSERT(c->socket[0] && strlen(c->socket) < sizeof(c->socket),
		    "port without a socket path");
	FUZZ_ASSERT(vnetd_tap_name_ok(c->tap), "port with tap name '%s'", c->tap);
	FUZZ_ASSERT(c->queues >= 1 && c->queues <= VNETD_MAX_QP,
		    "port with %u queues", c->queues);
	FUZZ_ASSERT(strlen(c->netns) < sizeof(c->netns), "netns unterminated");
	FUZZ_ASSERT(c->ncpus <= sizeof(c->cpus) / sizeof(c->cpus[0]),
		    "%u CPUs", c->ncpus);
	for (i = 0; i < c->ncpus; i++)
		FUZZ_ASSERT(c->cpus[i] >= 0 && c->cpus[i] < CPU_SETSIZE,
			    "CPU %d", c->cpus[i]);
}

/* PORTS as a configuration file, one line each. */
static size_t config_write(const struct vnetd_opts *op, char *buf, size_t cap)
{
	size_t n = 0;
	unsigned int i, j;

	for (i = 0; i < op->nports; i++) {
		const struct vnetd_port_cfg *c = &op->ports[i];

		n += (size_t)snprintf(buf + n, cap - n, "socket=%s tap=%s queues=%u%s",
				      c->socket, c->tap, c->queues,
				      c->client ? " client" : "");
		if (c->netns[0])
			n += (size_t)snprintf(buf + n, cap - n, " netns=%s",
					      c->netns);
		for (j = 0; j < c->ncpus; j++)
			n += (size_t)snprintf(buf + n, cap - n, "%s%d",
					      j ? "," : " cpus=", c->cpus[j]);
		n += (size_t)snprintf(buf + n, cap - n, "\n");
		FUZZ_ASSERT(n < cap, "config buffer");
	}
	return n;
}

static bool cfg_equal(const struct vnetd_port_cfg *a,
		      const struct vnetd_port_cfg *b)
{
	return !strcmp(a->socket, b->socket) && !strcmp(a->tap, b->tap) &&
	       !strcmp(a->netns, b->netns) && a->queues == b->queues &&
	       a->client == b->client && a->ncpus == b->ncpus &&
	       !memcmp(a->cpus, b->cpus, a->ncpus * sizeof(a->cpus[0]));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static char buf[VNETD_MAX_PORTS * 2048];
	char spec[1100];
	unsigned int i;
	size_t n;
	int ret;

	memset(&o, 0, sizeof(o));
	file_set(data, size);
	ret = vnetd_parse_config(&o, path);
	FUZZ_ASSERT(ret == 0 || ret == VNETD_EXIT_USAGE, "vnetd_parse_config: %d", ret);
	FUZZ_ASSERT(o.nports <= VNETD_MAX_PORTS, "%u ports", o.nports);
	for (i = 0; i < o.nports; i++)
		port_check(&o.ports[i]);
	if (!ret) {
		FUZZ_ASSERT(o.nports > 0, "a configuration without ports accepted");
		n = config_write(&o, buf, sizeof(buf));
		file_set(buf, n);
		memset(&o2, 0, sizeof(o2));
		ret = vnetd_parse_config(&o2, path);
		FUZZ_ASSERT(!ret, "the ports written back do not parse:\n%s",
			    buf);
		FUZZ_ASSERT(o2.nports == o.nports, "%u ports, %u written back",
			    o.nports, o2.nports);
		for (i = 0; i < o.nports; i++)
			FUZZ_ASSERT(cfg_equal(&o.ports[i], &o2.ports[i]),
				    "port %u differs once written back:\n%s", i,
				    buf);
	}

	/* the first line as a --port SPEC */
	n = 0;
	while (n < size && n < sizeof(spec) - 1 && data[n] != '\n' && data[n])
		n++;
	memcpy(spec, data, n);
	spec[n] = '\0';
	memset(&o, 0, sizeof(o));
	ret = vnetd_parse_port_spec(&o, spec);
	FUZZ_ASSERT(ret == 0 || ret == VNETD_EXIT_USAGE, "vnetd_parse_port_spec: %d", ret);
	FUZZ_ASSERT(o.nports == (ret ? 0u : 1u), "--port gave %u ports",
		    o.nports);
	if (!ret)
		port_check(&o.ports[0]);
	return 0;
}
