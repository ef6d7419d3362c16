/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * vnetd's sandbox (docs/vnetd.md, "Sandbox"): once the ports are set up,
 * each queue thread drops every capability and runs under a seccomp
 * allow-list of the syscalls it makes; the control thread keeps the
 * capabilities its later work needs, optionally switches to --user, and
 * runs under a wider allow-list.  A forbidden syscall is logged (thread,
 * syscall) and ends the process with VNETD_EXIT_SANDBOX.
 *
 * Hooks: the options (--no-sandbox, --user: seccomp.h's vnetd_sandbox,
 * vnetd_sandbox_user()), vnetd_sandbox_qp() at the start of each queue
 * thread, vnetd_sandbox_enter() once every port is set up (before
 * READY=1).
 */
#ifndef VNETD_SANDBOX_H
#define VNETD_SANDBOX_H

#include <stdbool.h>
#include <sys/types.h>

struct io_uring;

/*
 * setegid() of this thread alone (--socket-group around bind()): glibc's
 * setegid() applies to every thread, and queue threads already in their
 * sandbox may not change ids.  0 or -1 with errno.
 */
int vnetd_sandbox_setegid(gid_t gid);

/* --user USER (a name or a number): 0, or -ENOENT (no such user) */
int vnetd_sandbox_user(const char *user);

/*
 * A queue thread's ring: created with these flags (R_DISABLED), then,
 * once its files and buffers are registered, restricted to the
 * datapath's requests and enabled by vnetd_sandbox_uring().  0 or -errno.
 */
unsigned int vnetd_sandbox_uring_flags(void);
int vnetd_sandbox_uring(struct io_uring *ring);

/*
 * The thread of queue pair INDEX of port NAME (its io_uring RING, or
 * NULL), first thing in it: no capability, its allow-list.
 */
void vnetd_sandbox_qp(const char *name, unsigned int index,
		      struct io_uring *ring);

/*
 * Control thread, every port set up: waits until NTHREADS queue threads
 * have entered their sandbox, switches to --user, keeps only the
 * capabilities still needed (setns for NETNS: a port in another network
 * namespace) and loads the control thread's allow-list.  0, or -errno
 * (logged): vnetd must not serve without the sandbox it was asked for.
 */
int vnetd_sandbox_enter(unsigned int nthreads, bool netns);

#endif /* VNETD_SANDBOX_H */
