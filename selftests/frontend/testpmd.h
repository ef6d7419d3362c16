/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * Launching DPDK's dpdk-testpmd for the tests: as a vhost-user backend
 * (net_vhost, vufe_selftest's dpdk cases) or as a virtio-user frontend
 * (net_virtio_user, test_vnetd_dpdk).  Without hugepages, PCI or shared
 * config, on two lcores; its stdin is a pipe (EOF ends it, after it printed
 * its statistics), its stdout and stderr go to a log file.
 *
 *	struct testpmd d = TESTPMD_INIT;
 *	const char *app[] = { "--forward-mode=txonly", "--auto-start", NULL };
 *
 *	snprintf(d.log, sizeof(d.log), "/tmp/...log");
 *	testpmd_start(&d, testpmd_bin("VNET_TESTPMD"), vdev, prefix, 1024, app);
 *	...
 *	testpmd_stop(&d, why, sizeof(why));
 *	testpmd_stat(&d, "TX-packets:");
 *
 * Functions return 0 or -errno and never print; why says what went wrong.
 */
#ifndef VNET_SELFTESTS_TESTPMD_H
#define VNET_SELFTESTS_TESTPMD_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

struct testpmd {
	pid_t pid;
	int in_fd;		/* testpmd's stdin: closing it ends testpmd */
	char log[128];		/* set by the caller before testpmd_start() */
};

#define TESTPMD_INIT { .pid = -1, .in_fd = -1 }

/*
 * The binary: $ENV when that variable is set (NULL if it is not
 * executable), else dpdk-testpmd on $PATH, in /usr/bin or /usr/local/bin;
 * NULL when there is none.
 */
const char *testpmd_bin(const char *env);

/*
 * Starts BIN: EAL options --vdev VDEV --file-prefix PREFIX -m MEM_MB, then
 * "--" and APP (NULL-terminated).  testpmd dies with the calling process.
 */
int testpmd_start(struct testpmd *d, const char *bin, const char *vdev,
		  const char *prefix, unsigned int mem_mb,
		  const char *const *app);

/* whether it still runs (reaps it when it exited) */
bool testpmd_running(struct testpmd *d);

/* bounded: the unix socket SOCK appears (0), or testpmd exits, or MS pass */
int testpmd_wait_socket(struct testpmd *d, const char *sock, int ms,
			char *why, size_t wlen);

/*
 * Ends it: EOF on stdin, SIGTERM after 8 s, SIGKILL after 12 s.  0, or
 * -ECHILD when it died of a signal it was not sent.
 */
int testpmd_stop(struct testpmd *d, char *why, size_t wlen);

/* "KEY N" in the last accumulated forward statistics of the log, or -1 */
long long testpmd_stat(const struct testpmd *d, const char *key);

/* the last line of a log that is not empty, "(no log)" without one */
void testpmd_log_tail(const char *path, char *out, size_t len);

#endif /* VNET_SELFTESTS_TESTPMD_H */
