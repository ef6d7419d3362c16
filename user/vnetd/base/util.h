/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * What every layer of vnetd may use (docs/design.md, "Layers"; this is
 * the bottom one): the monotonic clock, the port's log lines, loads from
 * memory BPF or vnetctl write concurrently, a spin's pause, the queue-pair limit.
 * The agent (agent.c) needs nothing else of vnetd.
 */
#ifndef VNETD_UTIL_H
#define VNETD_UTIL_H

#include <stdint.h>
#include <time.h>

#include "log.h"

#define VNETD_MAX_QP 16		/* --queues: queue pairs per port */

/*
 * vnetd's runtime directory: the hand-over sockets and the packed rings'
 * journals (systemd's RuntimeDirectory=, kept over restarts)
 */
#define VNETD_RUN_DIR "/run/vnet"

/* CLOCK_MONOTONIC in nanoseconds */
static inline uint64_t vnetd_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

/*
 * Log lines "vnetd: PORT: ..." (main.c installs the writer): P is
 * anything with a `name`, the port's log prefix (its socket path).
 */
#define pr_err(p, fmt, ...) vhost_err("%s: " fmt, (p)->name, ##__VA_ARGS__)
#define pr_warn(p, fmt, ...) vhost_warn("%s: " fmt, (p)->name, ##__VA_ARGS__)
#define pr_info(p, fmt, ...) vhost_info("%s: " fmt, (p)->name, ##__VA_ARGS__)
#define pr_dbg(p, fmt, ...) vhost_dbg("%s: " fmt, (p)->name, ##__VA_ARGS__)

/* shared-memory loads: written by BPF or vnetctl concurrently */
#define VNETD_LOAD(x) __atomic_load_n(&(x), __ATOMIC_RELAXED)

static inline void vnetd_cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
	__builtin_ia32_pause();
#elif defined(__aarch64__)
	__asm__ __volatile__("yield" ::: "memory");
#else
	__asm__ __volatile__("" ::: "memory");
#endif
}

#endif /* VNETD_UTIL_H */
