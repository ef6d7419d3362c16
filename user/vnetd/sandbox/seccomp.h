/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * The threads' seccomp allow-lists and the SIGSYS handler (seccomp.c),
 * and the sandbox's settings they are made from (the options set them).
 */
#ifndef VNETD_SECCOMP_H
#define VNETD_SECCOMP_H

#include <stdbool.h>
#include <sys/types.h>

/* exit status after a forbidden syscall: 128 + SIGSYS, like a shell says */
#define VNETD_EXIT_SANDBOX 159

struct vnetd_sandbox_cfg {
	bool off;         /* --no-sandbox */
	const char *user; /* --user USER, or NULL */
	uid_t uid;
	gid_t gid;
};

extern struct vnetd_sandbox_cfg vnetd_sandbox;

/*
 * For sandbox.c: load the queue (CONTROL false) or control thread's
 * filter on this thread (0 or -errno); the name the SIGSYS handler gives
 * this thread; the filters log instead of trapping (only a test build's
 * VNETD_SANDBOX_LOG=1, testing.h).
 */
int vnetd_seccomp_load(bool control);
extern __thread char vnetd_seccomp_thread[16];
bool vnetd_seccomp_log_mode(void);

#endif /* VNETD_SECCOMP_H */
