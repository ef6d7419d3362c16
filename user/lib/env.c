// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* Environment checks: errors, network namespaces, bpffs, the device. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <net/if.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <linux/ethtool.h>
#include <linux/sockios.h>
#include <bpf/libbpf.h>

#include "libvnet.h"

#ifndef BPF_FS_MAGIC
#define BPF_FS_MAGIC 0xcafe4a11
#endif

void vnet_err_set(struct vnet_err *err, const char *fmt, ...)
{
	va_list ap;

	if (!err)
		return;
	va_start(ap, fmt);
	vsnprintf(err->msg, sizeof(err->msg), fmt, ap);
	va_end(ap);
}

static FILE *libbpf_log_file;

static int libbpf_log(enum libbpf_print_level level, const char *fmt,
		      va_list ap)
{
	(void)level;
	return libbpf_log_file ? vfprintf(libbpf_log_file, fmt, ap) : 0;
}

void vnet_libbpf_log(FILE *f)
{
	libbpf_log_file = f;
	libbpf_set_print(libbpf_log);
}

const char *vnet_class_name(int cls)
{
	static const char *const names[VNET_CLASS_MAX] = {
		[VNET_CLASS_URGENT] = "urgent", [VNET_CLASS_PUSH] = "push",
		[VNET_CLASS_ACK] = "ack",       [VNET_CLASS_OTHER] = "other",
		[VNET_CLASS_MALFORMED] = "malformed",
	};

	return cls >= 0 && cls < VNET_CLASS_MAX ? names[cls] : "?";
}

const char *vnet_dir_name(int dir)
{
	return dir == VNET_DIR_TX ? "tx" : dir == VNET_DIR_RX ? "rx" : "?";
}

/* vnet_netns_enter() succeeded: commands name their namespace */
static bool netns_named;

bool vnet_netns_named(void)
{
	return netns_named;
}

int vnet_netns_enter(const char *name, struct vnet_err *err)
{
	char path[256];
	int fd, ret = 0;

	if (strchr(name, '/'))
		snprintf(path, sizeof(path), "%s", name);
	else
		snprintf(path, sizeof(path), "/var/run/netns/%s", name);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		ret = -errno;
		vnet_err_set(err, "network namespace '%s': %s (%s); see 'ip netns list'",
			     name, strerror(errno), path);
		return ret;
	}
	if (setns(fd, CLONE_NEWNET)) {
		ret = -errno;
		vnet_err_set(err, "cannot enter network namespace '%s': %s%s", name,
			     strerror(errno),
			     errno == EPERM ? " (vnetctl needs root)" : "");
	}
	close(fd);
	if (!ret)
		netns_named = true;
	return ret;
}

/* --- the words of hints ------------------------------------------------- */

static int hint_prog = VNET_HINT_VNETCTL;

void vnet_hint_set(int prog)
{
	hint_prog = prog;
}

int vnet_hint_prog(void)
{
	return hint_prog;
}

int vnet_netns_name(__u64 ino, char *buf, size_t len)
{
	char path[PATH_MAX];
	struct dirent *de;
	struct stat sb;
	int ret = -ENOENT;
	DIR *d;

	d = opendir("/var/run/netns");
	if (!d)
		return -errno;
	while ((de = readdir(d))) {
		if (de->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "/var/run/netns/%s", de->d_name);
		if (stat(path, &sb) || sb.st_ino != ino)
			continue;
		snprintf(buf, len, "%s", de->d_name);
		ret = 0;
		break;
	}
	closedir(d);
	return ret;
}

/*
 * The calling thread's network namespace: its inode, and whether it is
 * known not to be the initial one (PID 1's).  When PID 1's cannot be read
 * (a container) a namespace counts as another only if it has a name in
 * /var/run/netns or the command entered it with -n.
 */
static bool netns_other(__u64 *ino)
{
	struct stat self, init;
	char name[NAME_MAX + 1];

	if (stat("/proc/thread-self/ns/net", &self) &&
	    stat("/proc/self/ns/net", &self))
		return false;
	*ino = self.st_ino;
	if (!stat("/proc/1/ns/net", &init))
		return self.st_ino != init.st_ino;
	return netns_named || !vnet_netns_name(self.st_ino, name, sizeof(name));
}

const char *vnet_hint_netns(char *buf, size_t len)
{
	char name[NAME_MAX + 1];
	__u64 ino;

	buf[0] = '\0';
	/* a namespace without a name has no -n to give: none */
	if (netns_other(&ino) && !vnet_netns_name(ino, name, sizeof(name)))
		snprintf(buf, len, " -n %s", name);
	return buf;
}

int vnet_netns_of_dev(const char *ifname, char *buf, size_t len)
{
	char path[PATH_MAX];
	struct dirent *de;
	struct stat self, sb;
	int cur, fd, ret = -ENOENT;
	DIR *d;

	if (stat("/proc/thread-self/ns/net", &self))
		return -errno;
	cur = open("/proc/thread-self/ns/net", O_RDONLY | O_CLOEXEC);
	if (cur < 0)
		return -errno;
	d = opendir("/var/run/netns");
	if (!d) {
		ret = -errno;
		close(cur);
		return ret;
	}
	while (ret == -ENOENT && (de = readdir(d))) {
		if (de->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "/var/run/netns/%s", de->d_name);
		if (stat(path, &sb) || sb.st_ino == self.st_ino)
			continue;
		fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			continue;
		if (!setns(fd, CLONE_NEWNET)) {
			if (if_nametoindex(ifname)) {
				snprintf(buf, len, "%s", de->d_name);
				ret = 0;
			}
			if (setns(cur, CLONE_NEWNET))
				ret = -errno; /* cannot happen: it was ours */
		}
		close(fd);
	}
	closedir(d);
	close(cur);
	return ret;
}

const char *vnet_hint_netns_dev(const char *ifname, char *buf, size_t len)
{
	char name[NAME_MAX + 1];

	vnet_hint_netns(buf, len);
	if (!buf[0] && !if_nametoindex(ifname) &&
	    !vnet_netns_of_dev(ifname, name, sizeof(name)))
		snprintf(buf, len, " -n %s", name);
	return buf;
}

static int mnt_ns_of(pid_t pid, struct stat *sb)
{
	char path[64];

	snprintf(path, sizeof(path), "/proc/%d/ns/mnt", (int)pid);
	return stat(path, sb);
}

static pid_t parent_of(pid_t pid)
{
	char path[64], line[256];
	pid_t ppid = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	f = fopen(path, "r");
	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "PPid: %d", &ppid) == 1)
			break;
	fclose(f);
	return ppid;
}

/*
 * Are we in a private mount namespace, one that PID 1 or one of our
 * ancestors does not share (`ip netns exec`, `unshare -m`)?  PID 1's may be
 * unreadable (containers, some VMs): then our ancestors tell.
 */
static bool private_mount_ns(void)
{
	struct stat self, other;
	pid_t pid;
	int hops;

	if (mnt_ns_of(getpid(), &self))
		return false; /* cannot tell: assume the usual case */
	if (!mnt_ns_of(1, &other))
		return self.st_ino != other.st_ino;
	for (pid = getppid(), hops = 0; pid > 1 && hops < 64;
	     pid = parent_of(pid), hops++) {
		if (mnt_ns_of(pid, &other))
			break;
		if (other.st_ino != self.st_ino)
			return true;
	}
	return false;
}

/*
 * `ip netns exec`: a private mount namespace (it mounts a /sys of its own,
 * without bpffs) in a named network namespace other than PID 1's.  NS gets
 * " -n NAME" for the hint.
 */
static bool netns_exec(char *ns, size_t len)
{
	vnet_hint_netns(ns, len);
	return ns[0] && private_mount_ns();
}

/* bpffs is missing where no `ip netns exec` explains it: how to mount it */
static int bpffs_missing(struct vnet_err *err, bool mounting)
{
	if (private_mount_ns()) {
		/* unshare -m, a sandboxed service: a mount here goes with it */
		vnet_err_set(err,
			     "bpffs is not mounted at %s in this mount namespace, which is not the host's: %s; mount it in the host's mount namespace with 'mount -t bpf bpf %s' and run vnet's commands there",
			     VNET_BPFFS,
			     mounting ? "pins made here would go with the namespace" :
					"vnet's pins are not here",
			     VNET_BPFFS);
		return -ENOTSUP;
	}
	vnet_err_set(err,
		     "bpffs is not mounted at %s (its filesystem is not bpf): vnet is not attached to any device here; mount it with 'mount -t bpf bpf %s' ('vnetctl attach DEV' mounts it too)",
		     VNET_BPFFS, VNET_BPFFS);
	return -ENOENT;
}

int vnet_bpffs_ensure(struct vnet_err *err)
{
	char ns[NAME_MAX + 8];
	struct statfs sfs;
	int ret;

	if (!statfs(VNET_BPFFS, &sfs) && sfs.f_type == BPF_FS_MAGIC)
		return 0;
	if (netns_exec(ns, sizeof(ns))) {
		/*
		 * `ip netns exec` gives the command a private /sys: a bpffs
		 * mounted there vanishes with the command, and so would the
		 * attachment.  Refuse rather than pretend.
		 */
		if (hint_prog == VNET_HINT_VNETD)
			vnet_err_set(err,
				     "bpffs is not mounted at %s in this mount namespace (ip netns exec mounts a private /sys): pins made here would not outlive vnetd; start vnetd from the host's mount namespace with --netns%s instead",
				     VNET_BPFFS, ns + 3);
		else
			vnet_err_set(err,
				     "bpffs is not mounted at %s in this mount namespace (ip netns exec mounts a private /sys): pins made here would not outlive the command; run 'vnetctl%s ...' from the host's mount namespace instead",
				     VNET_BPFFS, ns);
		return -ENOTSUP;
	}
	if (private_mount_ns())
		return bpffs_missing(err, true);
	if (mount("bpf", VNET_BPFFS, "bpf", 0, "mode=0700")) {
		ret = -errno;
		if (errno == EPERM)
			vnet_err_set(err, "bpffs is not mounted at %s and mounting it was refused: vnetctl needs root (CAP_SYS_ADMIN); as root: 'mount -t bpf bpf %s'",
				     VNET_BPFFS, VNET_BPFFS);
		else if (errno == ENODEV)
			vnet_err_set(err, "the kernel lacks bpffs (CONFIG_BPF_SYSCALL): cannot pin programs and maps");
		else
			vnet_err_set(err, "bpffs is not mounted at %s and mounting it failed: %s; mount it with 'mount -t bpf bpf %s'",
				     VNET_BPFFS, strerror(errno), VNET_BPFFS);
		return ret;
	}
	return 0;
}

int vnet_bpffs_check(struct vnet_err *err)
{
	char ns[NAME_MAX + 8];
	struct statfs sfs;

	if (!statfs(VNET_BPFFS, &sfs) && sfs.f_type == BPF_FS_MAGIC)
		return 0;
	if (netns_exec(ns, sizeof(ns)))
		return vnet_bpffs_ensure(err); /* says why, mounts nothing */
	return bpffs_missing(err, false);
}

int vnet_pin_path(char *buf, size_t len, const char *ifname, const char *obj)
{
	int n;

	if (obj)
		n = snprintf(buf, len, "%s/%s/%s", VNET_PIN_ROOT, ifname, obj);
	else
		n = snprintf(buf, len, "%s/%s", VNET_PIN_ROOT, ifname);
	return n < 0 || (size_t)n >= len ? -ENAMETOOLONG : 0;
}

const char *vnet_ifname_invalid(const char *s)
{
	size_t i, n = strlen(s);

	if (!n)
		return "it is empty";
	if (n >= IF_NAMESIZE)
		return "longer than 15 characters (the kernel's limit, IFNAMSIZ 16 with the terminating NUL)";
	if (!strcmp(s, ".") || !strcmp(s, ".."))
		return "'.' and '..' are not names";
	for (i = 0; i < n; i++)
		if (s[i] == '/' || s[i] == ':' || s[i] <= ' ' || s[i] == 0x7f)
			return "no '/', ':', blanks or control characters";
	return NULL;
}

int vnet_tap_check(const char *ifname, int *ifindex, struct vnet_err *err)
{
	struct ethtool_drvinfo info = { .cmd = ETHTOOL_GDRVINFO };
	struct ifreq ifr = {};
	const char *bad = vnet_ifname_invalid(ifname);
	int fd, ret = 0;

	if (bad) {
		vnet_err_set(err, "'%s' is not a valid interface name: %s", ifname,
			     bad);
		return -EINVAL;
	}
	*ifindex = (int)if_nametoindex(ifname);
	if (!*ifindex) {
		char ns[NAME_MAX + 8], other[NAME_MAX + 1];
		bool vnetd = hint_prog == VNET_HINT_VNETD;

		vnet_hint_netns(ns, sizeof(ns));
		if (vnet_netns_of_dev(ifname, other, sizeof(other)))
			other[0] = '\0';
		if (ns[0] && other[0])
			vnet_err_set(err, "%s: no such network device in network namespace %s; network namespace %s has one (%s %s)",
				     ifname, ns + 4, other,
				     vnetd ? "--netns" : "vnetctl -n", other);
		else if (ns[0])
			/* -n (or --netns) was given: do not suggest it again */
			vnet_err_set(err, "%s: no such network device in network namespace %s",
				     ifname, ns + 4);
		else if (other[0] && vnetd)
			vnet_err_set(err, "%s: no such network device in this network namespace; network namespace %s has one: add --netns %s",
				     ifname, other, other);
		else if (other[0])
			vnet_err_set(err, "%s: no such network device in this network namespace; network namespace %s has one: use 'vnetctl -n %s ...'",
				     ifname, other, other);
		else if (vnetd)
			vnet_err_set(err, "%s: no such network device in this network namespace, nor in any named one (ip netns list); for a tap in another namespace use --netns NAME",
				     ifname);
		else
			vnet_err_set(err, "%s: no such network device in this network namespace, nor in any named one (ip netns list); for a tap in another namespace use 'vnetctl -n NAME ...'",
				     ifname);
		return -ENODEV;
	}
	fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		ret = -errno;
		vnet_err_set(err, "socket: %s", strerror(errno));
		return ret;
	}
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", ifname);
	ifr.ifr_data = (void *)&info;
	if (ioctl(fd, SIOCETHTOOL, &ifr)) {
		ret = -errno;
		if (errno == EOPNOTSUPP)
			/* loopback and other drivers without ethtool ops */
			vnet_err_set(err, "%s: not a tap device (its driver reports no driver info); vnet attaches to tun/tap devices created by QEMU, libvirt or 'ip tuntap add mode tap'",
				     ifname);
		else
			vnet_err_set(err, "%s: cannot read driver info: %s",
				     ifname, strerror(errno));
		goto out;
	}
	if (strcmp(info.driver, "tun")) {
		vnet_err_set(err, "%s: not a tap device (driver '%s'); vnet attaches to tun/tap devices created by QEMU, libvirt or 'ip tuntap add mode tap'",
			     ifname, info.driver);
		ret = -EOPNOTSUPP;
		goto out;
	}
	if (strcmp(info.bus_info, "tap")) {
		vnet_err_set(err, "%s: not a tap device (a layer-3 tun device carries no Ethernet frames); vnet needs 'mode tap'",
			     ifname);
		ret = -EOPNOTSUPP;
	}
out:
	close(fd);
	return ret;
}
