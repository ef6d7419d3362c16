// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* SIGBUS in guest memory: a jump back to the faulting thread's recovery point (see fault.h). */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>

#include "fault.h"

/* the innermost armed point of this thread (initial-exec TLS: safe in a handler) */
static __thread struct vhost_fault *fault_cur;
static int fault_installed;

/* ADDR lies in one of MEM's mappings (regions or dirty log) */
static int fault_in_mem(const struct vhost_mem *mem, uintptr_t addr)
{
	unsigned int i, n = mem->nregions;

	if (n > VHOST_MEM_MAX_REGIONS)
		n = VHOST_MEM_MAX_REGIONS;
	for (i = 0; i < n; i++) {
		uintptr_t base = (uintptr_t)mem->regions[i].map_addr;

		if (base && addr >= base && addr - base < mem->regions[i].map_len)
			return 1;
	}
	if (mem->log_map && addr >= (uintptr_t)mem->log_map &&
	    addr - (uintptr_t)mem->log_map < mem->log_map_len)
		return 1;
	return 0;
}

/* async-signal-safe: a TLS load, reads of a table that cannot change now */
static void fault_handler(int sig, siginfo_t *si, void *uc)
{
	struct vhost_fault *f = fault_cur;
	uintptr_t addr = (uintptr_t)si->si_addr;
	struct sigaction dfl;
	int saved = errno;

	(void)uc;
	if (f && si->si_code > 0 && fault_in_mem(f->mem, addr)) {
		fault_cur = f->prev;
		f->addr = addr;
		siglongjmp(f->env, 1);
	}
	/* not ours to recover: what SIGBUS would have done without us */
	memset(&dfl, 0, sizeof(dfl));
	dfl.sa_handler = SIG_DFL;
	sigemptyset(&dfl.sa_mask);
	sigaction(sig, &dfl, NULL);
	/* a fault re-runs its access on return and dies of it, with a core */
	if (si->si_code <= 0)
		raise(sig);
	errno = saved;
}

int vhost_fault_init(void)
{
	struct sigaction sa;

	if (fault_installed)
		return 0;
	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = fault_handler;
	/*
	 * SA_NODEFER and no sa_mask: the handler runs with the section's
	 * own mask, so a siglongjmp() that does not restore one leaves it
	 * right (and SIGBUS unblocked for the next fault).
	 */
	sa.sa_flags = SA_SIGINFO | SA_NODEFER;
	sigemptyset(&sa.sa_mask);
	if (sigaction(SIGBUS, &sa, NULL))
		return -errno;
	fault_installed = 1;
	return 0;
}

int vhost_fault_ready(void)
{
	return fault_installed;
}

void vhost_fault_arm(struct vhost_fault *f, const struct vhost_mem *mem)
{
	f->mem = mem;
	f->addr = 0;
	f->prev = fault_cur;
	/* the handler must see the fields before the point */
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	fault_cur = f;
}

void vhost_fault_end(struct vhost_fault *f)
{
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	fault_cur = f->prev;
}

const char *vhost_fault_describe(const struct vhost_fault *f, char *buf,
				 size_t len)
{
	const struct vhost_mem *mem = f->mem;
	uintptr_t addr = f->addr;
	unsigned int i;

	for (i = 0; i < mem->nregions; i++) {
		const struct vhost_mem_region *r = &mem->regions[i];
		uintptr_t host = (uintptr_t)r->host;

		if (addr < (uintptr_t)r->map_addr ||
		    addr - (uintptr_t)r->map_addr >= r->map_len)
			continue;
		if (addr >= host && addr - host < r->size)
			snprintf(buf, len, "guest memory at GPA 0x%llx (HVA 0x%llx) is no longer backed (the frontend truncated its memory fd?)",
				 (unsigned long long)(r->gpa + (addr - host)),
				 (unsigned long long)(r->uva + (addr - host)));
		else
			snprintf(buf, len, "the memory fd of the region at GPA 0x%llx is no longer backed at offset 0x%llx (the frontend truncated it?)",
				 (unsigned long long)r->gpa,
				 (unsigned long long)(addr - (uintptr_t)r->map_addr));
		return buf;
	}
	if (mem->log_map)
		snprintf(buf, len, "the dirty log is no longer backed at offset 0x%llx (the frontend truncated its fd?)",
			 (unsigned long long)(addr - (uintptr_t)mem->log_map));
	else
		snprintf(buf, len, "guest memory at 0x%llx is no longer backed",
			 (unsigned long long)addr);
	return buf;
}
