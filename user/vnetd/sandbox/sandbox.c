// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * vnetd's sandbox (docs/vnetd.md, "Sandbox").
 *
 * Setup (taps, BPF, netns, sockets) runs with the privileges vnetd was
 * started with.  Then:
 *
 *  - each queue thread, first thing (vnetd_sandbox_qp()): drops every
 *    capability (and its bounding set), sets no_new_privs and loads the
 *    queue allow-list: the datapath's epoll, reads and writes on its fds,
 *    io_uring_enter, timers, futexes, memory for malloc (never executable);
 *  - the control thread, once every port is set up (vnetd_sandbox_enter()):
 *    waits until every queue thread is in its sandbox, switches to --user
 *    if asked (glibc applies set*id to every thread; a queue thread keeps
 *    CAP_SETUID/CAP_SETGID for that alone, and loses them with the switch),
 *    keeps the capabilities the control path still needs and loads the
 *    control allow-list.
 *
 * Seccomp filters are per thread and inherited by threads created later;
 * vnetd creates no thread after setup.  A syscall outside the list traps
 * (SIGSYS): the handler writes one log line (thread, syscall number and
 * name) and ends the process with VNETD_EXIT_SANDBOX, without cleanup: a
 * thread that made it may have been taken over.  A test build
 * (testing.h) can make the filters log (audit) and allow instead
 * (VNETD_SANDBOX_LOG=1, a development aid), and make queue thread 0 or
 * the control thread call personality(0xffffffff) (a query, harmless)
 * once its filter is loaded, or queue thread 0 submit an io_uring OPENAT,
 * which the ring's restriction refuses (VNETD_TEST_SECCOMP_VIOLATION).
 */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <liburing.h>
#include <pthread.h>
#include <pwd.h>
#include <sched.h>
#include <seccomp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <linux/capability.h>
#include <linux/if_tun.h>
#include <linux/sockios.h>

#include "log.h"
#include "sandbox.h"
#include "base/testing.h"
#include "seccomp.h"

/* how long the control thread waits for the queue threads to be in */
#define QP_WAIT_MS 10000

/* --- capabilities --------------------------------------------------------- */

static int caps_get(struct __user_cap_data_struct d[2])
{
	struct __user_cap_header_struct h = { _LINUX_CAPABILITY_VERSION_3, 0 };

	return syscall(SYS_capget, &h, d) ? -errno : 0;
}

/*
 * This thread keeps KEEP (a mask of CAP_*), permitted and effective, as
 * far as it has them; nothing inheritable, no ambient, and (with
 * CAP_SETPCAP) a bounding set of KEEP alone.
 */
static int caps_limit(uint64_t keep)
{
	struct __user_cap_header_struct h = { _LINUX_CAPABILITY_VERSION_3, 0 };
	struct __user_cap_data_struct d[2];
	uint64_t perm;
	int c, ret;

	ret = caps_get(d);
	if (ret)
		return ret;
	perm = ((uint64_t)d[1].permitted << 32 | d[0].permitted) & keep;
	if ((d[0].effective >> CAP_SETPCAP) & 1) {
		for (c = 0; c <= CAP_LAST_CAP; c++)
			if (!((keep >> c) & 1) && prctl(PR_CAPBSET_READ, c) == 1)
				prctl(PR_CAPBSET_DROP, c, 0, 0, 0);
	}
	prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0);
	d[0].permitted = d[0].effective = (uint32_t)perm;
	d[1].permitted = d[1].effective = (uint32_t)(perm >> 32);
	d[0].inheritable = d[1].inheritable = 0;
	return syscall(SYS_capset, &h, d) ? -errno : 0;
}

static uint64_t caps_effective(void)
{
	struct __user_cap_data_struct d[2];

	if (caps_get(d))
		return 0;
	return (uint64_t)d[1].effective << 32 | d[0].effective;
}

static const char *const cap_names[] = {
	[CAP_NET_ADMIN] = "cap_net_admin", [CAP_BPF] = "cap_bpf",
	[CAP_PERFMON] = "cap_perfmon", [CAP_SYS_ADMIN] = "cap_sys_admin",
	[CAP_DAC_OVERRIDE] = "cap_dac_override",
	[CAP_SETUID] = "cap_setuid", [CAP_SETGID] = "cap_setgid",
};

static void caps_str(uint64_t caps, char *b, size_t len)
{
	size_t at = 0;
	int c;

	b[0] = '\0';
	for (c = 0; c <= CAP_LAST_CAP && at < len; c++) {
		if (!((caps >> c) & 1))
			continue;
		if (c < (int)(sizeof(cap_names) / sizeof(cap_names[0])) &&
		    cap_names[c])
			at += (size_t)snprintf(b + at, len - at, "%s%s",
					       at ? "," : "", cap_names[c]);
		else
			at += (size_t)snprintf(b + at, len - at, "%scap_%d",
					       at ? "," : "", c);
	}
	if (!at)
		snprintf(b, len, "none");
}

/* --- io_uring ---------------------------------------------------------------- */

unsigned int vnetd_sandbox_uring_flags(void)
{
	return vnetd_sandbox.off ? 0 : IORING_SETUP_R_DISABLED;
}

/*
 * The ring's requests run inside io_uring_enter() or in io-wq workers,
 * where seccomp does not look: restrict the ring itself to what the
 * datapath submits (tap reads and writes on registered files), then
 * enable it.  Registrations are refused from now on, but for one: an
 * update of the fixed-buffer table, by which the queue thread registers
 * an RX slot the first time it reads into one, and clears them all when
 * the pair has been quiet (tapio.c); it can only name the thread's own
 * memory.
 */
int vnetd_sandbox_uring(struct io_uring *ring)
{
	struct io_uring_restriction r[] = {
		{ .opcode = IORING_RESTRICTION_SQE_OP, .sqe_op = IORING_OP_READ },
		{ .opcode = IORING_RESTRICTION_SQE_OP, .sqe_op = IORING_OP_READ_FIXED },
		{ .opcode = IORING_RESTRICTION_SQE_OP, .sqe_op = IORING_OP_READV },
		{ .opcode = IORING_RESTRICTION_SQE_OP, .sqe_op = IORING_OP_WRITEV },
		{ .opcode = IORING_RESTRICTION_SQE_OP, .sqe_op = IORING_OP_WRITE },
		{ .opcode = IORING_RESTRICTION_SQE_FLAGS_ALLOWED,
		  .sqe_flags = IOSQE_FIXED_FILE },
		{ .opcode = IORING_RESTRICTION_SQE_FLAGS_REQUIRED,
		  .sqe_flags = IOSQE_FIXED_FILE },
		{ .opcode = IORING_RESTRICTION_REGISTER_OP,
		  .register_op = IORING_REGISTER_BUFFERS_UPDATE },
	};

	if (vnetd_sandbox.off)
		return 0;
	/* raw: Debian 12's liburing 2.3 does not export the two wrappers */
	if (syscall(__NR_io_uring_register, ring->ring_fd,
		    IORING_REGISTER_RESTRICTIONS, r, sizeof(r) / sizeof(r[0])) ||
	    syscall(__NR_io_uring_register, ring->ring_fd,
		    IORING_REGISTER_ENABLE_RINGS, NULL, 0))
		return -errno;
	return 0;
}

/* --- queue threads ---------------------------------------------------------- */

static pthread_mutex_t qp_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t qp_cond = PTHREAD_COND_INITIALIZER;
static unsigned int qp_in, qp_failed;

void vnetd_sandbox_qp(const char *name, unsigned int index,
		      struct io_uring *ring)
{
	uint64_t keep = 0;
	sigset_t sys;
	int ret;

	if (vnetd_sandbox.off) {
		if (index == 0)
			vnetd_testing_uring(ring, index);
		return;
	}
	snprintf(vnetd_seccomp_thread, sizeof(vnetd_seccomp_thread),
		 "vnetd-q%u", index);
	/* a trapped syscall must reach the handler, not kill silently */
	sigemptyset(&sys);
	sigaddset(&sys, SIGSYS);
	pthread_sigmask(SIG_UNBLOCK, &sys, NULL);
	/* only for the --user switch, which takes them away again */
	if (vnetd_sandbox.user)
		keep = 1ULL << CAP_SETUID | 1ULL << CAP_SETGID;
	ret = caps_limit(keep);
	if (ret)
		vhost_err("%s: queue pair %u: sandbox: capabilities: %s", name,
			  index, strerror(-ret));
	if (!ret) {
		ret = vnetd_seccomp_load(false);
		if (ret)
			vhost_err("%s: queue pair %u: sandbox: seccomp: %s",
				  name, index, strerror(-ret));
	}
	pthread_mutex_lock(&qp_lock);
	qp_in++;
	if (ret)
		qp_failed++;
	pthread_cond_broadcast(&qp_cond);
	pthread_mutex_unlock(&qp_lock);
	if (!ret && index == 0) {
		vnetd_testing_uring(ring, index);
		vnetd_testing_violation("queue", vnetd_seccomp_thread);
	}
}

/* --- the control thread ----------------------------------------------------- */

int vnetd_sandbox_setegid(gid_t gid)
{
	/* the raw syscall changes the calling thread's credentials only */
	return syscall(SYS_setresgid, (gid_t)-1, gid, (gid_t)-1) ? -1 : 0;
}

int vnetd_sandbox_user(const char *user)
{
	struct passwd *pw;
	unsigned long v;
	char *end;

	errno = 0;
	v = strtoul(user, &end, 10);
	if (*user && !*end && !errno && v < 0x7fffffff) {
		pw = getpwuid((uid_t)v);
		vnetd_sandbox.uid = (uid_t)v;
		vnetd_sandbox.gid = pw ? pw->pw_gid : (gid_t)v;
	} else {
		pw = getpwnam(user);
		if (!pw)
			return -ENOENT;
		vnetd_sandbox.uid = pw->pw_uid;
		vnetd_sandbox.gid = pw->pw_gid;
	}
	vnetd_sandbox.user = user;
	return 0;
}

static int qp_wait(unsigned int want)
{
	struct timespec ts;
	int ret = 0;

	clock_gettime(CLOCK_REALTIME, &ts);
	ts.tv_sec += QP_WAIT_MS / 1000;
	pthread_mutex_lock(&qp_lock);
	while (qp_in < want && ret != ETIMEDOUT)
		ret = pthread_cond_timedwait(&qp_cond, &qp_lock, &ts);
	if (qp_in < want) {
		vhost_err("sandbox: %u of %u queue threads did not enter their sandbox",
			  want - qp_in, want);
		ret = -ETIMEDOUT;
	} else if (qp_failed) {
		vhost_err("sandbox: %u queue thread%s could not enter the sandbox (use --no-sandbox to run without)",
			  qp_failed, qp_failed == 1 ? "" : "s");
		ret = -EPERM;
	} else {
		ret = 0;
	}
	pthread_mutex_unlock(&qp_lock);
	return ret;
}

/* the supplementary groups of --user (none for a number without a name) */
static int user_switch(void)
{
	struct passwd *pw = getpwuid(vnetd_sandbox.uid);
	int ret = 0;

	if (prctl(PR_SET_KEEPCAPS, 1, 0, 0, 0))
		return -errno;
	if (pw ? initgroups(pw->pw_name, vnetd_sandbox.gid) :
		 setgroups(0, NULL))
		ret = -errno;
	else if (setresgid(vnetd_sandbox.gid, vnetd_sandbox.gid,
			   vnetd_sandbox.gid))
		ret = -errno;
	else if (setresuid(vnetd_sandbox.uid, vnetd_sandbox.uid,
			   vnetd_sandbox.uid))
		ret = -errno;
	prctl(PR_SET_KEEPCAPS, 0, 0, 0, 0);
	return ret;
}

int vnetd_sandbox_enter(unsigned int nthreads, bool netns)
{
	uint64_t keep;
	char caps[256];
	int ret;

	if (vnetd_sandbox.off) {
		vhost_info("sandbox off (--no-sandbox): every thread keeps vnetd's privileges, no seccomp filter");
		return 0;
	}
	snprintf(vnetd_seccomp_thread, sizeof(vnetd_seccomp_thread), "vnetd");
	ret = qp_wait(nthreads);
	if (ret)
		return ret;

	/*
	 * tun's and rtnetlink's changes (offloads, detach) need NET_ADMIN,
	 * bpf() BPF (kernel.unprivileged_bpf_disabled), the tracepoint link
	 * of the shared xmit dispatcher PERFMON, setns(CLONE_NEWNET) SYS_ADMIN
	 * (only with a --netns port); with --user, the pins and sockets root
	 * made need DAC_OVERRIDE to be removed.
	 */
	keep = 1ULL << CAP_NET_ADMIN | 1ULL << CAP_BPF | 1ULL << CAP_PERFMON;
	if (netns)
		keep |= 1ULL << CAP_SYS_ADMIN;
	if (vnetd_sandbox.user)
		keep |= 1ULL << CAP_DAC_OVERRIDE;
	if (vnetd_sandbox.user) {
		/* the bounding set first: CAP_SETPCAP goes with the switch */
		ret = caps_limit(keep | 1ULL << CAP_SETUID | 1ULL << CAP_SETGID);
		if (!ret)
			ret = user_switch();
		if (ret) {
			vhost_err("sandbox: --user %s: %s%s", vnetd_sandbox.user,
				  strerror(-ret),
				  ret == -EPERM ? " (needs CAP_SETUID and CAP_SETGID)" : "");
			return ret;
		}
	}
	ret = caps_limit(keep);
	if (ret) {
		vhost_err("sandbox: capabilities: %s", strerror(-ret));
		return ret;
	}
	caps_str(caps_effective(), caps, sizeof(caps));
	ret = vnetd_seccomp_load(true);
	if (ret) {
		vhost_err("sandbox: seccomp: %s (use --no-sandbox to run without)",
			  strerror(-ret));
		return ret;
	}
	vhost_info("sandbox: %u queue thread%s without capabilities, the control thread with %s; uid %u gid %u; seccomp allow-lists loaded%s",
		   nthreads, nthreads == 1 ? "" : "s", caps,
		   (unsigned int)getuid(), (unsigned int)getgid(),
		   vnetd_seccomp_log_mode() ? " (a test build's log mode: violations logged by the kernel, allowed)" : "");
	vnetd_testing_violation("control", vnetd_seccomp_thread);
	return 0;
}
