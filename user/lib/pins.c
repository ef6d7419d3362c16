// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * A device's pin directory, /sys/fs/bpf/vnet/<ifname>/: made, filled,
 * listed and removed; and whose it is.  The pins are named by device only,
 * so the network namespace the device was attached in is recorded (struct
 * vnet_info.netns_ino) and checked before a command acts on them.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <limits.h>
#include <net/if.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <bpf/bpf.h>

#include "libvnet.h"
#include "pins_int.h"

/*
 * The tap's pin directory, mode 0700 whatever the umask or an older
 * directory had.  The mode is set on the opened directory, never by name,
 * and something else at the path (a symlink, a file) is refused: a path
 * change by another process between mkdir() and chmod() must not move
 * the mode, or the pins, elsewhere.
 */
int vnet_pin_dir_make(const char *ifname, struct vnet_err *err)
{
	char path[PATH_MAX];
	struct stat st;
	int ret, fd;

	if (mkdir(VNET_PIN_ROOT, 0700) && errno != EEXIST)
		goto fail;
	ret = vnet_pin_path(path, sizeof(path), ifname, NULL);
	if (ret)
		return ret;
	if (mkdir(path, 0700) && errno != EEXIST)
		goto fail;
	fd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0) {
		ret = -errno;
		if (errno == ELOOP || errno == ENOTDIR)
			vnet_err_set(err, "%s is not a directory (a symlink or a file is there): remove it",
				     path);
		else
			vnet_err_set(err, "cannot open %s: %s", path,
				     strerror(errno));
		return ret;
	}
	if (fstat(fd, &st) || ((st.st_mode & 07777) != 0700 &&
			       fchmod(fd, 0700))) {
		ret = -errno;
		vnet_err_set(err, "cannot make %s mode 0700: %s", path,
			     strerror(errno));
		close(fd);
		return ret;
	}
	close(fd);
	return 0;
fail:
	ret = -errno;
	vnet_err_set(err, "cannot create %s/%s: %s", VNET_PIN_ROOT, ifname,
		     strerror(errno));
	return ret;
}

int vnet_pin_fd(int fd, const char *ifname, const char *name,
		struct vnet_err *err)
{
	char path[PATH_MAX];
	int ret;

	ret = vnet_pin_path(path, sizeof(path), ifname, name);
	if (ret)
		return ret;
	if (bpf_obj_pin(fd, path)) {
		ret = -errno;
		vnet_err_set(err, "cannot pin %s: %s", path, strerror(errno));
		return ret;
	}
	return 0;
}

int vnet_pin_get(const char *ifname, const char *name)
{
	char path[PATH_MAX];
	int fd;

	if (vnet_pin_path(path, sizeof(path), ifname, name))
		return -ENAMETOOLONG;
	fd = bpf_obj_get(path);
	return fd < 0 ? -errno : fd;
}

int vnet_pin_dir_remove(const char *ifname)
{
	char dir[PATH_MAX], path[PATH_MAX + 256];
	struct dirent *de;
	DIR *d;
	int ret = 0;

	if (vnet_pin_path(dir, sizeof(dir), ifname, NULL))
		return -ENAMETOOLONG;
	d = opendir(dir);
	if (!d)
		return errno == ENOENT ? 0 : -errno;
	while ((de = readdir(d))) {
		if (de->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
		if (unlink(path) && errno != ENOENT)
			ret = -errno;
	}
	closedir(d);
	if (rmdir(dir) && errno != ENOENT)
		ret = -errno;
	return ret;
}

int vnet_pins_missing(const char *ifname, const char *dir,
		      struct vnet_err *err)
{
	int ret = -errno;

	if (errno == EACCES || errno == EPERM)
		vnet_err_set(err, "%s: cannot read %s: permission denied (vnetctl needs root)",
			     ifname, dir);
	else if (errno == ENOENT && vnet_ifname_invalid(ifname))
		vnet_err_set(err, "'%s' is not a valid interface name: %s", ifname,
			     vnet_ifname_invalid(ifname));
	else if (errno == ENOENT)
		vnet_err_set(err, "%s: vnet is not attached (no pins in %s)",
			     ifname, dir);
	else
		vnet_err_set(err, "%s: cannot read %s: %s", ifname, dir,
			     strerror(errno));
	return ret;
}

/*
 * The inode of the calling thread's network namespace (vnetd enters one
 * per port).  The kernel numbers namespaces with an unsigned int
 * (ns_common.inum), which is what the BPF programs read (bpf/xmit.h) and
 * what stat() returns, zero-extended: 32 bits hold every value.
 */
int vnet_netns_ino(__u32 *ino)
{
	struct stat sb;

	if (stat("/proc/thread-self/ns/net", &sb) &&
	    stat("/proc/self/ns/net", &sb))
		return -errno;
	if (sb.st_ino > UINT32_MAX)
		return -EOVERFLOW;
	*ino = (__u32)sb.st_ino;
	return 0;
}

/*
 * The pins are named by device only, so the pins of DEV may be those of a
 * device DEV in another network namespace.  -EEXIST (err says so) when
 * they belong to a present device of another namespace and either
 *  - this namespace has a device of that name (attaching, detaching,
 *    reading or configuring here would act on that other device), or
 *  - the command named its namespace (vnetctl -n NS) or runs in one that
 *    is not PID 1's: the pins are not that namespace's.
 * From the host's namespace, without a device of that name there, the
 * pins of a tap in a netns stay usable (vnetctl stats DEV from the host).
 * Pins of a device that is gone are nobody's: they may be read, replaced
 * and removed from anywhere.
 */
int vnet_pins_other_netns(const char *ifname, const struct vnet_status *st,
			  struct vnet_err *err)
{
	struct stat host;
	bool named;
	char other[NAME_MAX + 1];
	__u32 cur;

	if (!st->present || !st->info.netns_ino || vnet_netns_ino(&cur) ||
	    cur == st->info.netns_ino)
		return 0;
	/* PID 1's may be unreadable (a container): -n NAME says it too */
	named = vnet_netns_named() ||
		(!stat("/proc/1/ns/net", &host) && host.st_ino != cur);
	if (!named && !if_nametoindex(ifname))
		return 0;
	if (!vnet_netns_name(st->info.netns_ino, other, sizeof(other)))
		vnet_err_set(err, "%s: the pins in %s/%s belong to a device %s in another network namespace (netns inode %llu; this one is %llu): vnet names its pins by device, so one attached %s per host, and a command acts only on the device of the namespace it runs in; use 'vnetctl -n %s' of that namespace, or detach it there ('vnetctl -n %s detach %s') or give this tap another name",
			     ifname, VNET_PIN_ROOT, ifname, ifname,
			     (unsigned long long)st->info.netns_ino,
			     (unsigned long long)cur, ifname, other, other, ifname);
	else
		vnet_err_set(err, "%s: the pins in %s/%s belong to a device %s in another network namespace, one without a name in /var/run/netns (netns inode %llu; this one is %llu): vnet names its pins by device, so one attached %s per host; detach it from that namespace (nsenter --net=/proc/PID/ns/net vnetctl detach %s, PID a process in it) or give this tap another name",
			     ifname, VNET_PIN_ROOT, ifname, ifname,
			     (unsigned long long)st->info.netns_ino,
			     (unsigned long long)cur, ifname, ifname);
	return -EEXIST;
}

static int name_cmp(const void *a, const void *b)
{
	return strcmp(a, b);
}

int vnet_list(char (*names)[IF_NAMESIZE], int max)
{
	struct dirent *de;
	DIR *d = opendir(VNET_PIN_ROOT);
	int n = 0;

	if (!d)
		return errno == ENOENT ? 0 : -errno;
	while ((de = readdir(d)) && n < max) {
		/* the shared dispatcher's pins: too long for a device name */
		if (de->d_name[0] == '.' || strlen(de->d_name) >= IF_NAMESIZE)
			continue;
		snprintf(names[n++], IF_NAMESIZE, "%.15s", de->d_name);
	}
	closedir(d);
	qsort(names, n, IF_NAMESIZE, name_cmp);
	return n;
}

int vnet_pin_root_lock(void)
{
	int fd = open(VNET_PIN_ROOT, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

	if (fd < 0)
		return -errno;
	while (flock(fd, LOCK_EX)) {
		if (errno != EINTR) {
			int ret = -errno;

			close(fd);
			return ret;
		}
	}
	return fd;
}

void vnet_pin_root_unlock(int fd)
{
	if (fd >= 0)
		close(fd); /* drops the flock */
}
