/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * vnetd's test switches (testing.c), in a test build only: one compiled
 * with -DVNET_TESTING (build/vnetd-asan, build/vnetd-testing).  The
 * production build (build/vnetd) has none of them: there each switch below
 * is its default, a constant, and nothing reads the environment for it.
 * docs/vnetd.md, "Test builds", says which switch does what and why they
 * are not options of the daemon.
 */
#ifndef VNETD_TESTING_H
#define VNETD_TESTING_H

#include <stdbool.h>
#include <stdint.h>

struct io_uring;

/* The numbers and flags a test build takes from its environment. */
enum vnetd_switch {
	VNETD_SW_RX_DIRECT_MIN,     /* RX in place from this mean (bytes) */
	VNETD_SW_RX_BIG_BURSTS,     /* bursts of big reads after overflow */
	VNETD_SW_NO_PAIRED_SIGNALS, /* 1: TX signals take no RX one along */
	VNETD_SW_CARRY_ACKS,        /* 0: guest-TX pure ACKs are not
					 * held for an RX signal to carry */
	VNETD_SW_SANDBOX_LOG,       /* 1: seccomp logs and allows */
	VNETD_SW_TAKEOVER_FAIL,     /* a hand-over fails: 1 the new one gives
					 * up before PREPARED, 2 it dies there,
					 * 3 the running one gives up instead of
					 * COMMIT, 4 the new one cannot take
					 * the first port's connection over
					 * after it */
	VNETD_SW_IDLE_MS,           /* a queue pair's quiet time before it
					 * gives its buffers back (ms) */
	VNETD_SW_STOP_KILL,         /* the stop kills vnetd (SIGKILL) once
					 * this many ports are closed */
	VNETD_SW_N
};

#ifdef VNET_TESTING
/*
 * Read and check every switch, once, before any thread; act on those of
 * the library (the dirty log).  0, or -EINVAL after an error message
 * naming the switch and its values.
 */
int vnetd_testing_init(void);

/* Switch SW's value, DEF when it is not set. */
uint32_t vnetd_switch(enum vnetd_switch sw, uint32_t def);

/*
 * VNETD_TEST_SECCOMP_VIOLATION, once its thread's filter is loaded: the
 * thread WHO ("queue": queue thread 0, "control"), named THREAD in the
 * log, makes a forbidden syscall; "uring": queue thread INDEX (0) submits
 * a request its io_uring RING must refuse, and says what came of it.
 */
void vnetd_testing_violation(const char *who, const char *thread);
void vnetd_testing_uring(struct io_uring *ring, unsigned int index);
#else
static inline int vnetd_testing_init(void)
{
	return 0;
}

static inline uint32_t vnetd_switch(enum vnetd_switch sw, uint32_t def)
{
	(void)sw;
	return def;
}

static inline void vnetd_testing_violation(const char *who,
					   const char *thread)
{
	(void)who;
	(void)thread;
}

static inline void vnetd_testing_uring(struct io_uring *ring,
				       unsigned int index)
{
	(void)ring;
	(void)index;
}
#endif

#endif /* VNETD_TESTING_H */
