// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* Logging of the vhost-user backend library (see log.h). */
#include <stdarg.h>
#include <stdio.h>

#include "log.h"

static const char *const level_names[] = {
	[VHOST_LOG_ERR] = "error",
	[VHOST_LOG_WARN] = "warning",
	[VHOST_LOG_INFO] = "info",
	[VHOST_LOG_DEBUG] = "debug",
};

/*
 * Read by every thread that logs (queue threads report broken rings), set
 * once at start-up: relaxed atomics keep that race-free without a lock.
 */
static int log_level = VHOST_LOG_INFO;
static vhost_log_fn log_fn;
static void *log_opaque;

void vhost_log_set_level(enum vhost_log_level level)
{
	__atomic_store_n(&log_level, (int)level, __ATOMIC_RELAXED);
}

enum vhost_log_level vhost_log_get_level(void)
{
	return (enum vhost_log_level)__atomic_load_n(&log_level,
						     __ATOMIC_RELAXED);
}

void vhost_log_set_fn(vhost_log_fn fn, void *opaque)
{
	log_opaque = opaque;
	log_fn = fn;
}

void vhost_log(enum vhost_log_level level, const char *fmt, ...)
{
	char msg[512];
	va_list ap;

	if ((int)level > __atomic_load_n(&log_level, __ATOMIC_RELAXED))
		return;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (log_fn) {
		log_fn(level, msg, log_opaque);
		return;
	}
	/* one fprintf per line: stdio locks the stream, lines do not mix */
	fprintf(stderr, "vhost: %s: %s\n",
		(unsigned int)level <= VHOST_LOG_DEBUG ? level_names[level] : "?",
		msg);
}
