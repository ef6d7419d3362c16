/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * Logging of the vhost-user backend library.
 *
 * The library never exits and never returns an error only through a log
 * line: every function returns 0/-errno, and the log says *why* for the
 * operator (a frontend that sent garbage, a guest that broke a ring).  By
 * default lines go to stderr as "vhost: <level>: <message>"; a daemon can
 * redirect them (journal, rate limiting) with vhost_log_set_fn().
 */
#ifndef VNET_VHOST_LOG_H
#define VNET_VHOST_LOG_H

enum vhost_log_level {
	VHOST_LOG_ERR = 0,
	VHOST_LOG_WARN = 1,
	VHOST_LOG_INFO = 2,
	VHOST_LOG_DEBUG = 3,
};

typedef void (*vhost_log_fn)(enum vhost_log_level level, const char *msg,
			     void *opaque);

/* Lines above LEVEL are dropped (default VHOST_LOG_INFO). */
void vhost_log_set_level(enum vhost_log_level level);
enum vhost_log_level vhost_log_get_level(void);

/* Replace the stderr writer; NULL restores it. Not thread-safe vs logging. */
void vhost_log_set_fn(vhost_log_fn fn, void *opaque);

void vhost_log(enum vhost_log_level level, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

#define vhost_err(...) vhost_log(VHOST_LOG_ERR, __VA_ARGS__)
#define vhost_warn(...) vhost_log(VHOST_LOG_WARN, __VA_ARGS__)
#define vhost_info(...) vhost_log(VHOST_LOG_INFO, __VA_ARGS__)
#define vhost_dbg(...) vhost_log(VHOST_LOG_DEBUG, __VA_ARGS__)

#endif /* VNET_VHOST_LOG_H */
