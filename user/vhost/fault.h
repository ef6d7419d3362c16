/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * Guest memory that stops being memory.  A region is a MAP_SHARED mapping
 * of the frontend's fd; the frontend can ftruncate() that file smaller at
 * any time, and from then on a load or store of ours in the lost pages
 * raises SIGBUS (the kernel's own accesses, readv/writev or io_uring on
 * those pages, fail with EFAULT instead).  Without a handler, that kills
 * the whole process: every port, every ring.
 *
 * A thread that is about to touch guest memory arms a recovery point:
 *
 *	struct vhost_fault f;
 *
 *	if (vhost_fault_try(&f, &dev->mem)) {
 *		... pop, copy, push: anything that touches guest memory ...
 *		vhost_fault_end(&f);
 *	} else {
 *		... f.addr faulted: the work in between was cut short at an
 *		    arbitrary point; whatever it was updating is not to be
 *		    trusted (a ring: vhost_vq_set_broken() with
 *		    vhost_fault_describe()) ...
 *	}
 *
 * The SIGBUS handler (vhost_fault_init(), once per process) jumps back to
 * the innermost armed point of the faulting thread when the fault is a
 * kernel-generated one (si_code > 0) at an address inside MEM's mapped
 * regions or its dirty log.  Anything else (no point armed, another
 * address, a SIGBUS sent with kill()) gets the default action: the
 * handler restores SIG_DFL and re-raises, so a real bug still ends the
 * process with a core dump.
 *
 * Rules for the armed section:
 *  - it holds no lock (malloc's, stdio's, its own) across an access to
 *    guest memory: a jump out would leave the lock taken;
 *  - automatic variables of the function that armed the point and that
 *    change inside the section are indeterminate after a jump (C11
 *    7.13.2.1): keep the section in a function of its own;
 *  - MEM must not change while the point is armed.  The table changes
 *    only while the rings that use it are stopped (vhost_user.h), so a
 *    queue thread inside a burst and the protocol thread both see it
 *    stable;
 *  - no signal-mask syscall: the point is set with sigsetjmp(env, 0) and
 *    the handler runs with SA_NODEFER and an empty sa_mask, so the mask
 *    at the jump is the mask the section ran with.  The way back makes
 *    no syscall at all (siglongjmp leaves the handler without
 *    rt_sigreturn); only the default path makes some: rt_sigaction of
 *    SIGBUS, and for a sent SIGBUS, tgkill of the process itself.
 */
#ifndef VNET_VHOST_FAULT_H
#define VNET_VHOST_FAULT_H

#include <setjmp.h>
#include <stddef.h>
#include <stdint.h>

#include "mem.h"

struct vhost_fault {
	sigjmp_buf env;
	const struct vhost_mem *mem;
	struct vhost_fault *prev;	/* the point armed before, or NULL */
	volatile uintptr_t addr;	/* after a jump: the faulting address */
};

/*
 * Install the SIGBUS handler (process-wide; call before seccomp filters
 * are loaded, or allow rt_sigaction).  0 or -errno.
 */
int vhost_fault_init(void);

/* The handler is installed (vhost_fault_init() succeeded). */
int vhost_fault_ready(void);

/* Arm F for MEM on this thread; vhost_fault_try() is the way to call it. */
void vhost_fault_arm(struct vhost_fault *f, const struct vhost_mem *mem);

/*
 * True on the way in (F armed); false when a fault in MEM jumped back
 * (F is disarmed then, f->addr says where).  A macro: sigsetjmp() must be
 * called in the frame that stays live over the section.
 */
#define vhost_fault_try(f, m) \
	(vhost_fault_arm((f), (m)), !sigsetjmp((f)->env, 0))

/* Leave the section normally: F is no longer armed. */
void vhost_fault_end(struct vhost_fault *f);

/*
 * "guest memory at GPA 0x... (host address 0x...)" or "the dirty log at
 * ..." for F's fault address, into BUF; the table is MEM's (stable, see
 * above).  Returns BUF.
 */
const char *vhost_fault_describe(const struct vhost_fault *f, char *buf,
				 size_t len);

#endif /* VNET_VHOST_FAULT_H */
