// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * The sandbox's seccomp side (sandbox.c has the rest): the allow-lists of
 * the queue and control threads, the filters built from them with
 * libseccomp, and the SIGSYS handler that says which thread made which
 * forbidden syscall before vnetd ends (see sandbox.c's header comment).
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
#include "base/testing.h"
#include "seccomp.h"

/* --no-sandbox, --user (opts.c); read here and by sandbox.c */
struct vnetd_sandbox_cfg vnetd_sandbox;

/* --- the allow-lists ---------------------------------------------------- */

/* what every vnetd thread makes once set up (glibc, malloc, logging) */
static const char *const common_calls[] = {
	"read", "write", "readv", "writev",
	"close",
	"futex",
	"clock_gettime", "clock_nanosleep", "nanosleep",
	"brk", "munmap", "madvise", "mremap",
	/* mmap and mprotect: never PROT_EXEC (below) */
	"rt_sigreturn", "rt_sigprocmask", "restart_syscall",
	"sigaltstack",	/* a thread's exit, under ASan */
	"sched_yield", "getpid", "gettid",
	"getrandom",
	"exit", "exit_group",
};

/* the queue threads: their epoll set, the tap, io_uring, the timers */
static const char *const queue_calls[] = {
	"epoll_wait", "epoll_pwait", "epoll_pwait2", "epoll_ctl",
	"io_uring_enter",
	"timerfd_settime",
};

/*
 * The control thread: the vhost-user server (accept, messages with fds,
 * guest memory maps, the /proc/self/fd reopen of pipe ring fds), client
 * reconnects, the ethtool monitor and its netlink reads, the tap's ioctls
 * and the netns (setns) for renegotiation and cleanup, vnet's detach at
 * exit or when a port is lost (bpf, netlink, unlinking pins and sockets),
 * sd_notify, the queue threads' mailbox and SIGURG.
 */
static const char *const control_calls[] = {
	"epoll_wait", "epoll_pwait", "epoll_pwait2", "epoll_ctl",
	"epoll_create1", "timerfd_create", "timerfd_settime",
	"poll", "ppoll",
	"accept", "accept4", "connect", "bind", "listen", "shutdown",
	"getsockname", "getpeername", "getsockopt", "setsockopt",
	"recvmsg", "sendmsg", "recvfrom", "sendto",
	"fcntl", "fstat", "newfstatat", "statx", "stat", "lstat",
	"lseek", "pread64",
	"open", "openat", "readlink", "readlinkat", "getdents64",
	"unlink", "unlinkat", "rmdir",
	"bpf", "flock",
	"getuid", "geteuid", "getgid", "getegid",
	"sched_getaffinity", "uname",
	"rt_sigaction",
};

/* tun and interface ioctls the control path makes after setup */
static const unsigned long control_ioctls[] = {
	TUNSETOFFLOAD, TUNSETVNETHDRSZ, TUNSETVNETLE, TUNGETIFF,
	TUNSETSTEERINGEBPF, SIOCGIFINDEX, SIOCGIFNAME, SIOCGIFFLAGS,
	SIOCGIFMTU, SIOCSIFMTU,
	SIOCETHTOOL, FIONBIO, FIONREAD,
};

/* --- the SIGSYS handler ------------------------------------------------- */

#define NAMES_MAX 1024
static char *call_names[NAMES_MAX];
static bool log_journal;
__thread char vnetd_seccomp_thread[16];
static pthread_once_t once = PTHREAD_ONCE_INIT;

static size_t put_str(char *b, size_t at, size_t len, const char *s)
{
	while (*s && at + 1 < len)
		b[at++] = *s++;
	return at;
}

static size_t put_num(char *b, size_t at, size_t len, long v)
{
	char d[24];
	int n = 0;

	if (v < 0) {
		at = put_str(b, at, len, "-");
		v = -v;
	}
	do {
		d[n++] = (char)('0' + v % 10);
		v /= 10;
	} while (v && n < (int)sizeof(d));
	while (n && at + 1 < len)
		b[at++] = d[--n];
	return at;
}

/* async-signal-safe: no stdio, no malloc; the names were resolved before */
static void sigsys_handler(int sig, siginfo_t *si, void *uc)
{
	char b[256];
	size_t n = 0;
	int nr = si->si_syscall;

	(void)sig;
	(void)uc;
	n = put_str(b, n, sizeof(b), log_journal ? "<2>" : "vnetd: error: ");
	n = put_str(b, n, sizeof(b), "sandbox: thread ");
	n = put_str(b, n, sizeof(b), vnetd_seccomp_thread[0] ? vnetd_seccomp_thread : "?");
	n = put_str(b, n, sizeof(b), " made a forbidden syscall ");
	n = put_num(b, n, sizeof(b), nr);
	n = put_str(b, n, sizeof(b), " (");
	n = put_str(b, n, sizeof(b), nr >= 0 && nr < NAMES_MAX && call_names[nr] ?
				   call_names[nr] : "?");
	n = put_str(b, n, sizeof(b), "): vnetd exits (status ");
	n = put_num(b, n, sizeof(b), VNETD_EXIT_SANDBOX);
	n = put_str(b, n, sizeof(b), ")\n");
	if (write(STDERR_FILENO, b, n) < 0)
		n = 0;
	syscall(SYS_exit_group, VNETD_EXIT_SANDBOX);
}

/* same test as main.c's: stderr is the stream $JOURNAL_STREAM names */
static bool stderr_journal(void)
{
	const char *js = getenv("JOURNAL_STREAM");
	unsigned long long dev, ino;
	struct stat st;

	if (!js || sscanf(js, "%llu:%llu", &dev, &ino) != 2 ||
	    fstat(STDERR_FILENO, &st))
		return false;
	return (unsigned long long)st.st_dev == dev &&
	       (unsigned long long)st.st_ino == ino;
}

/* once, before any filter: the names for the handler, the handler */
static void seccomp_once(void)
{
	struct sigaction sa = { .sa_sigaction = sigsys_handler,
				.sa_flags = SA_SIGINFO };
	int i;

	for (i = 0; i < NAMES_MAX; i++)
		call_names[i] = seccomp_syscall_resolve_num_arch(SCMP_ARCH_NATIVE,
								 i);
	log_journal = stderr_journal();
	sigemptyset(&sa.sa_mask);
	if (sigaction(SIGSYS, &sa, NULL))
		vhost_err("sandbox: sigaction SIGSYS: %s", strerror(errno));
}

/* --- filters --------------------------------------------------------------- */

/* one argument comparison (all fields set: clang's -Wextra wants them) */
static struct scmp_arg_cmp arg_cmp(unsigned int arg, enum scmp_compare op,
				   scmp_datum_t a, scmp_datum_t b)
{
	struct scmp_arg_cmp c = { .arg = arg, .op = op, .datum_a = a,
				  .datum_b = b };

	return c;
}

static int allow(scmp_filter_ctx ctx, const char *name, unsigned int n,
		 const struct scmp_arg_cmp *cmp)
{
	int nr = seccomp_syscall_resolve_name(name), ret;

	if (nr == __NR_SCMP_ERROR)
		return 0; /* not a syscall on this architecture */
	ret = seccomp_rule_add_array(ctx, SCMP_ACT_ALLOW, nr, n, cmp);
	if (ret)
		vhost_err("sandbox: seccomp rule for %s: %s", name,
			  strerror(-ret));
	return ret;
}

static int allow_list(scmp_filter_ctx ctx, const char *const *names,
		      size_t n)
{
	size_t i;
	int ret;

	for (i = 0; i < n; i++) {
		ret = allow(ctx, names[i], 0, NULL);
		if (ret)
			return ret;
	}
	return 0;
}

#define ALLOW_LIST(ctx, a) allow_list(ctx, a, sizeof(a) / sizeof(a[0]))

bool vnetd_seccomp_log_mode(void)
{
	return vnetd_switch(VNETD_SW_SANDBOX_LOG, 0);
}

/*
 * Memory that can never become executable; a signal only to this
 * process; SIGBUS's disposition; the set*id calls of the --user switch, to its ids only.
 */
static int allow_common(scmp_filter_ctx ctx, bool setid)
{
	struct scmp_arg_cmp noexec = arg_cmp(2, SCMP_CMP_MASKED_EQ, PROT_EXEC, 0);
	struct scmp_arg_cmp self = arg_cmp(0, SCMP_CMP_EQ, (scmp_datum_t)getpid(), 0);
	struct scmp_arg_cmp sigbus = arg_cmp(0, SCMP_CMP_EQ, SIGBUS, 0);
	int ret;

	ret = ALLOW_LIST(ctx, common_calls);
	if (!ret)
		ret = allow(ctx, "mmap", 1, &noexec);
	if (!ret)
		ret = allow(ctx, "mprotect", 1, &noexec);
	if (!ret)
		ret = allow(ctx, "tgkill", 1, &self);
	/*
	 * The SIGBUS handler's default path (user/vhost/fault.h): SIG_DFL
	 * back on SIGBUS, in whichever thread faulted; no other signal.
	 */
	if (!ret)
		ret = allow(ctx, "rt_sigaction", 1, &sigbus);
	if (!ret && setid) {
		struct scmp_arg_cmp u[3] = {
			arg_cmp(0, SCMP_CMP_EQ, vnetd_sandbox.uid, 0),
			arg_cmp(1, SCMP_CMP_EQ, vnetd_sandbox.uid, 0),
			arg_cmp(2, SCMP_CMP_EQ, vnetd_sandbox.uid, 0),
		};
		struct scmp_arg_cmp g[3] = {
			arg_cmp(0, SCMP_CMP_EQ, vnetd_sandbox.gid, 0),
			arg_cmp(1, SCMP_CMP_EQ, vnetd_sandbox.gid, 0),
			arg_cmp(2, SCMP_CMP_EQ, vnetd_sandbox.gid, 0),
		};

		ret = allow(ctx, "setresuid", 3, u);
		if (!ret)
			ret = allow(ctx, "setresgid", 3, g);
		if (!ret)
			ret = allow(ctx, "setgroups", 0, NULL);
	}
	return ret;
}

/*
 * Threads of this process, no other child: the stop's closers
 * (port/ports.c), which inherit this filter and this thread's
 * capabilities.  clone3 passes its flags in memory, out of a filter's
 * reach: it fails with ENOSYS, and glibc then makes the thread with
 * clone, whose flags are an argument.  A new thread registers its robust
 * futex list and its rseq area.
 */
static int allow_threads(scmp_filter_ctx ctx)
{
	struct scmp_arg_cmp thread =
		arg_cmp(0, SCMP_CMP_MASKED_EQ, CLONE_THREAD | CLONE_VM,
			CLONE_THREAD | CLONE_VM);
	int ret;

	ret = allow(ctx, "clone", 1, &thread);
#ifndef __SANITIZE_ADDRESS__ /* LeakSanitizer's tracer takes clone3 (below) */
	if (!ret)
		ret = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(ENOSYS),
				       SCMP_SYS(clone3), 0);
#endif
	if (!ret)
		ret = allow(ctx, "set_robust_list", 0, NULL);
	if (!ret)
		ret = allow(ctx, "rseq", 0, NULL);
	return ret;
}

static int allow_control(scmp_filter_ctx ctx)
{
	static const int families[] = { AF_UNIX, AF_NETLINK, AF_INET };
	struct scmp_arg_cmp cmp;
	size_t i;
	int ret;

	ret = ALLOW_LIST(ctx, control_calls);
	for (i = 0; !ret && i < sizeof(control_ioctls) / sizeof(control_ioctls[0]);
	     i++) {
		cmp = arg_cmp(1, SCMP_CMP_MASKED_EQ, 0xffffffffu, control_ioctls[i]);
		ret = allow(ctx, "ioctl", 1, &cmp);
	}
	for (i = 0; !ret && i < sizeof(families) / sizeof(families[0]); i++) {
		cmp = arg_cmp(0, SCMP_CMP_EQ, (scmp_datum_t)families[i], 0);
		ret = allow(ctx, "socket", 1, &cmp);
	}
	/* a hand-over's old vnetd: this thread to SCHED_IDLE, nothing else */
	if (!ret) {
		struct scmp_arg_cmp idle[2] = {
			arg_cmp(0, SCMP_CMP_EQ, 0, 0),
			arg_cmp(1, SCMP_CMP_EQ, SCHED_IDLE, 0),
		};

		ret = allow(ctx, "sched_setscheduler", 2, idle);
	}
	/* back and forth between network namespaces, nothing else */
	cmp = arg_cmp(1, SCMP_CMP_EQ, CLONE_NEWNET, 0);
	if (!ret)
		ret = allow(ctx, "setns", 1, &cmp);
	if (!ret)
		ret = allow_threads(ctx);
#ifdef __SANITIZE_ADDRESS__
	/*
	 * vnetd-asan: LeakSanitizer's check at exit stops the world with a
	 * tracer task (clone, ptrace, wait) and reads /proc/self/task.
	 */
	{
		static const char *const lsan_calls[] = {
			"clone", "clone3", "ptrace", "wait4", "waitid", "prctl",
			"sched_getaffinity", "getppid", "kill", "getdents",
		};

		if (!ret)
			ret = ALLOW_LIST(ctx, lsan_calls);
	}
#endif
	return ret;
}

int vnetd_seccomp_load(bool control)
{
	pthread_once(&once, seccomp_once);
	scmp_filter_ctx ctx;
	int ret;

	ctx = seccomp_init(vnetd_seccomp_log_mode() ? SCMP_ACT_LOG : SCMP_ACT_TRAP);
	if (!ctx)
		return -ENOMEM;
	/* a binary search over the syscall numbers, not a chain (best effort) */
	seccomp_attr_set(ctx, SCMP_FLTATR_CTL_OPTIMIZE, 2);
	ret = allow_common(ctx, !control && vnetd_sandbox.user);
	if (!ret)
		ret = control ? allow_control(ctx) : ALLOW_LIST(ctx, queue_calls);
	if (!ret && !control) {
		/* an RX slot's first read registers it (tapio.c), no other */
		struct scmp_arg_cmp upd = arg_cmp(1, SCMP_CMP_EQ,
						  IORING_REGISTER_BUFFERS_UPDATE, 0);

		ret = allow(ctx, "io_uring_register", 1, &upd);
	}
	if (!ret)
		ret = seccomp_load(ctx);
	seccomp_release(ctx);
	return ret;
}
