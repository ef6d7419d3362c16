// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * vnetd's test switches (testing.h), compiled into test builds only
 * (-DVNET_TESTING: build/vnetd-asan, build/vnetd-testing; the Makefile
 * leaves this file out of build/vnetd).  Each is an environment variable,
 * read and checked once at startup:
 *
 *   VNETD_TEST_NO_DIRTY_LOG=1        the dirty log is offered but never
 *                                    written (a migration must lose data)
 *   VNETD_TEST_SECCOMP_VIOLATION=    queue (or 1), control: that thread
 *     queue|control|uring            makes a forbidden syscall; uring:
 *                                    queue thread 0 an io_uring OPENAT
 *   VNETD_SANDBOX_LOG=1              the filters log and allow instead
 *   VNETD_RX_DIRECT_MIN=BYTES        the in-place read threshold
 *   VNETD_RX_BIG_BURSTS=N            bursts of big reads after an overflow
 *   VNETD_NO_PAIRED_SIGNALS=1        TX signals take no RX signal along
 *   VNETD_CARRY_ACKS=0               guest-TX pure ACKs are not held
 *                                    for an RX signal to carry
 *
 * An empty value is the same as none.
 */
#include <errno.h>
#include <fcntl.h>
#include <liburing.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/syscall.h>

#include "log.h"
#include "mem.h"
#include "testing.h"

static const struct {
	const char *env;
	uint32_t max;		/* 1: a flag */
} switches[VNETD_SW_N] = {
	[VNETD_SW_RX_DIRECT_MIN] = { "VNETD_RX_DIRECT_MIN", UINT32_MAX },
	[VNETD_SW_RX_BIG_BURSTS] = { "VNETD_RX_BIG_BURSTS", UINT32_MAX },
	[VNETD_SW_NO_PAIRED_SIGNALS] = { "VNETD_NO_PAIRED_SIGNALS", 1 },
	[VNETD_SW_CARRY_ACKS] = { "VNETD_CARRY_ACKS", 1 },
	[VNETD_SW_SANDBOX_LOG] = { "VNETD_SANDBOX_LOG", 1 },
	[VNETD_SW_TAKEOVER_FAIL] = { "VNETD_TEST_TAKEOVER_FAIL", 4 },
	[VNETD_SW_IDLE_MS] = { "VNETD_TEST_IDLE_MS", 3600000 },
	[VNETD_SW_STOP_KILL] = { "VNETD_TEST_STOP_KILL", 65536 },
};

static struct {
	bool set;
	uint32_t v;
} sw[VNETD_SW_N];

/* VNETD_TEST_SECCOMP_VIOLATION, checked; NULL when unset */
static const char *violation;

/* environment NAME, NULL when unset or empty */
static const char *env(const char *name)
{
	const char *s = getenv(name);

	return s && *s ? s : NULL;
}

static int switch_read(enum vnetd_switch i)
{
	const char *s = env(switches[i].env);
	unsigned long v;
	char *end;

	if (!s)
		return 0;
	errno = 0;
	v = strtoul(s, &end, 10);
	if (errno || *end || *s == '-' || v > switches[i].max) {
		if (switches[i].max == 1)
			vhost_err("%s=%s: not 0 or 1", switches[i].env, s);
		else
			vhost_err("%s=%s: not a number from 0 to %u",
				  switches[i].env, s, switches[i].max);
		return -EINVAL;
	}
	sw[i].set = true;
	sw[i].v = (uint32_t)v;
	vhost_warn("test build: %s=%lu", switches[i].env, v);
	return 0;
}

int vnetd_testing_init(void)
{
	const char *s;
	unsigned int i;
	int ret;

	for (i = 0; i < VNETD_SW_N; i++) {
		ret = switch_read(i);
		if (ret)
			return ret;
	}
	s = env("VNETD_TEST_SECCOMP_VIOLATION");
	if (s && strcmp(s, "queue") && strcmp(s, "1") && strcmp(s, "control") &&
	    strcmp(s, "uring")) {
		vhost_err("VNETD_TEST_SECCOMP_VIOLATION=%s: not queue (or 1), control or uring",
			  s);
		return -EINVAL;
	}
	violation = s && !strcmp(s, "1") ? "queue" : s;
	s = env("VNETD_TEST_NO_DIRTY_LOG");
	if (s && strcmp(s, "0") && strcmp(s, "1")) {
		vhost_err("VNETD_TEST_NO_DIRTY_LOG=%s: not 0 or 1", s);
		return -EINVAL;
	}
	/* the live-migration test's negative case (selftests/e2e/faults.sh) */
	if (s && !strcmp(s, "1")) {
		vhost_mem_log_disable_for_test();
		vhost_warn("VNETD_TEST_NO_DIRTY_LOG is set: the dirty log is offered but never written; a live migration loses data (for tests only)");
	}
	return 0;
}

uint32_t vnetd_switch(enum vnetd_switch i, uint32_t def)
{
	return i < VNETD_SW_N && sw[i].set ? sw[i].v : def;
}

void vnetd_testing_violation(const char *who, const char *thread)
{
	if (!violation || strcmp(violation, who))
		return;
	vhost_warn("sandbox: test: %s makes a forbidden syscall (VNETD_TEST_SECCOMP_VIOLATION)",
		   thread);
	syscall(SYS_personality, 0xffffffffUL);
}

void vnetd_testing_uring(struct io_uring *ring, unsigned int index)
{
	struct io_uring_sqe *sqe;
	struct io_uring_cqe *cqe;
	int ret;

	if (!violation || strcmp(violation, "uring") || !ring)
		return;
	sqe = io_uring_get_sqe(ring);
	if (!sqe)
		return;
	io_uring_prep_openat(sqe, AT_FDCWD, "/", O_RDONLY, 0);
	ret = io_uring_submit_and_wait(ring, 1);
	if (ret >= 0)
		ret = io_uring_peek_cqe(ring, &cqe);
	if (!ret) {
		ret = cqe->res;
		io_uring_cqe_seen(ring, cqe);
	}
	if (ret >= 0)
		close(ret);
	vhost_warn("sandbox: test: io_uring OPENAT from vnetd-q%u: %s", index,
		   ret >= 0 ? "done (not restricted)" : strerror(-ret));
}
