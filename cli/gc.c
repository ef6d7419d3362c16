// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * vnetctl gc: what gone devices and gone vnetds leave behind.
 *
 *  - the pins of a device that no longer exists (libvnet's vnet_gc());
 *  - in vnetd's runtime directory (/run/vnet, user/vnetd/base/util.h):
 *    a packed rings' journal (ESC.rings, ESC the escaped socket path,
 *    user/vnetd/port/device.c) that no process has mapped or open and
 *    whose socket nobody listens on, and a hand-over socket (*.takeover)
 *    nobody listens on.
 *
 * A running vnetd maps its ports' journals for its whole life and
 * listens on its hand-over socket, so neither is ever taken from it.  A
 * journal of a frontend that listens itself (QEMU server=on, vnetd
 * --client) is kept while the frontend does: the next vnetd resumes the
 * rings from it.  Who listens is read from every network namespace's
 * /proc/PID/net/unix, not by connecting (a vnetd would take a connection
 * to its vhost-user socket for a frontend); a hand-over socket no listing
 * names is connected to before it goes: only ECONNREFUSED removes it.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/un.h>
#include <unistd.h>

#include "libvnet.h"
#include "base/out.h"
#include "base/util.h"
#include "gc.h"

/* vnetd's runtime directory (VNETD_RUN_DIR) */
#define GC_RUN_DIR "/run/vnet"
#define GC_MAX 1024

const struct cli_opt gc_opts[] = {
	{ "dry-run", 0, NULL, "say what would be removed, remove nothing" },
	{ NULL, 0, NULL, NULL },
};

enum rt_kind { RT_JOURNAL, RT_TAKEOVER };

struct rt_file {
	enum rt_kind kind;
	char path[PATH_MAX];
	char socket[PATH_MAX]; /* a journal's socket path */
	dev_t dev;
	ino_t ino;
	bool held;     /* a process maps it or has it open */
	bool listened; /* its socket (the journal's, or itself) listens */
};

/* --- who listens: every network namespace's unix sockets ---------------- */

struct strset {
	char **s;
	size_t n, cap;
};

static bool strset_has(const struct strset *set, const char *s)
{
	for (size_t i = 0; i < set->n; i++)
		if (!strcmp(set->s[i], s))
			return true;
	return false;
}

static void strset_add(struct strset *set, const char *s)
{
	if (strset_has(set, s))
		return;
	if (set->n == set->cap) {
		size_t cap = set->cap ? 2 * set->cap : 64;
		char **ns = realloc(set->s, cap * sizeof(*ns));

		if (!ns)
			return;
		set->s = ns;
		set->cap = cap;
	}
	set->s[set->n] = strdup(s);
	if (set->s[set->n])
		set->n++;
}

static void strset_free(struct strset *set)
{
	for (size_t i = 0; i < set->n; i++)
		free(set->s[i]);
	free(set->s);
}

/* __SO_ACCEPTCON in /proc/net/unix's Flags: the socket listens */
#define UNIX_ACCEPTCON 0x10000UL

/* the listening unix sockets' paths of /proc/PID/net/unix into SET */
static void listeners_read(const char *pid, struct strset *set)
{
	char path[300], line[PATH_MAX + 128];
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%s/net/unix", pid);
	f = fopen(path, "re");
	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		unsigned long flags;
		int off = 0;
		char *p;

		/* Num RefCount Protocol Flags Type St Inode Path */
		if (sscanf(line, "%*s %*s %*s %lx %*s %*s %*s %n", &flags, &off) != 1 ||
		    !off || !(flags & UNIX_ACCEPTCON))
			continue;
		p = line + off;
		p[strcspn(p, "\n")] = '\0';
		if (*p == '/')
			strset_add(set, p);
	}
	fclose(f);
}

/* every network namespace's listeners, each namespace read once */
static void listeners_all(struct strset *set)
{
	ino_t seen[4096];
	size_t nseen = 0, i;
	struct dirent *de;
	DIR *d;

	listeners_read("self", set);
	d = opendir("/proc");
	if (!d)
		return;
	while ((de = readdir(d))) {
		char path[300];
		struct stat st;

		if (de->d_name[0] < '1' || de->d_name[0] > '9')
			continue;
		snprintf(path, sizeof(path), "/proc/%s/ns/net", de->d_name);
		if (stat(path, &st))
			continue;
		for (i = 0; i < nseen && seen[i] != st.st_ino; i++)
			;
		if (i < nseen)
			continue;
		if (nseen < sizeof(seen) / sizeof(seen[0]))
			seen[nseen++] = st.st_ino;
		listeners_read(de->d_name, set);
	}
	closedir(d);
}

/* --- who holds a journal: every process's mappings and fds -------------- */

static void mark_held(struct rt_file *f, size_t n, dev_t dev, ino_t ino)
{
	for (size_t i = 0; i < n; i++)
		if (f[i].kind == RT_JOURNAL && f[i].dev == dev && f[i].ino == ino)
			f[i].held = true;
}

/* PID's command is vnetd's (/proc/PID/comm is readable by anyone) */
static bool is_vnetd(const char *pid)
{
	char path[300], comm[32] = "";
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%s/comm", pid);
	f = fopen(path, "re");
	if (!f)
		return false;
	if (!fgets(comm, sizeof(comm), f))
		comm[0] = '\0';
	fclose(f);
	return !strncmp(comm, "vnetd", 5);
}

/*
 * Marks the journals any process maps or has open.  False when a vnetd's
 * maps could not be read (gc not root): nobody can say then.  Another
 * process whose maps are closed to root (a sandbox's own) maps none.
 */
static bool holders_scan(struct rt_file *f, size_t n, char *why, size_t wlen)
{
	struct dirent *de, *fde;
	bool ok = true;
	DIR *d, *fd;

	d = opendir("/proc");
	if (!d) {
		snprintf(why, wlen, "cannot read /proc: %s", strerror(errno));
		return false;
	}
	while ((de = readdir(d))) {
		char path[PATH_MAX], line[PATH_MAX + 128];
		FILE *m;

		if (de->d_name[0] < '1' || de->d_name[0] > '9')
			continue;
		snprintf(path, sizeof(path), "/proc/%s/maps", de->d_name);
		m = fopen(path, "re");
		if (!m) {
			/* gone meanwhile, or not a vnetd, is fine */
			if (errno != ENOENT && errno != ESRCH && ok &&
			    is_vnetd(de->d_name)) {
				snprintf(why, wlen, "cannot read %s (a vnetd's): %s",
					 path, strerror(errno));
				ok = false;
			}
			continue;
		}
		while (fgets(line, sizeof(line), m)) {
			unsigned int maj, mnr;
			unsigned long ino;

			if (sscanf(line, "%*s %*s %*s %x:%x %lu", &maj, &mnr, &ino) == 3 &&
			    ino)
				mark_held(f, n, makedev(maj, mnr), (ino_t)ino);
		}
		fclose(m);
		snprintf(path, sizeof(path), "/proc/%s/fd", de->d_name);
		fd = opendir(path);
		if (!fd)
			continue;
		while ((fde = readdir(fd))) {
			char fpath[PATH_MAX + 300];
			struct stat st;

			if (fde->d_name[0] == '.')
				continue;
			snprintf(fpath, sizeof(fpath), "%s/%s", path, fde->d_name);
			if (!stat(fpath, &st) && S_ISREG(st.st_mode))
				mark_held(f, n, st.st_dev, st.st_ino);
		}
		closedir(fd);
	}
	closedir(d);
	return ok;
}

/* --- the runtime directory ------------------------------------------------ */

/* ESC.rings back to the socket path (systemd-escape --path's inverse) */
static void journal_socket(const char *name, char *out, size_t len)
{
	size_t n = 0, end = strlen(name) - strlen(".rings");
	unsigned int c;

	out[n++] = '/';
	for (size_t i = 0; i < end && n + 1 < len; i++) {
		if (name[i] == '-') {
			out[n++] = '/';
		} else if (name[i] == '\\' && name[i + 1] == 'x' &&
			   sscanf(name + i + 2, "%2x", &c) == 1) {
			out[n++] = (char)c;
			i += 3;
		} else {
			out[n++] = name[i];
		}
	}
	out[n] = '\0';
}

static bool ends_with(const char *s, const char *suffix)
{
	size_t a = strlen(s), b = strlen(suffix);

	return a > b && !strcmp(s + a - b, suffix);
}

/* the journals and hand-over sockets in the runtime directory */
static size_t rt_list(struct rt_file *f, size_t max)
{
	struct dirent *de;
	size_t n = 0;
	DIR *d;

	d = opendir(GC_RUN_DIR);
	if (!d)
		return 0;
	while ((de = readdir(d)) && n < max) {
		struct rt_file *r = &f[n];
		struct stat st;

		memset(r, 0, sizeof(*r));
		if (ends_with(de->d_name, ".rings"))
			r->kind = RT_JOURNAL;
		else if (ends_with(de->d_name, ".takeover"))
			r->kind = RT_TAKEOVER;
		else
			continue;
		snprintf(r->path, sizeof(r->path), "%s/%s", GC_RUN_DIR, de->d_name);
		if (lstat(r->path, &st))
			continue;
		/* only what vnetd makes there: a regular file, a socket */
		if (r->kind == RT_JOURNAL ? !S_ISREG(st.st_mode) : !S_ISSOCK(st.st_mode))
			continue;
		r->dev = st.st_dev;
		r->ino = st.st_ino;
		if (r->kind == RT_JOURNAL)
			journal_socket(de->d_name, r->socket, sizeof(r->socket));
		n++;
	}
	closedir(d);
	return n;
}

/* a hand-over socket no listing names: does connect() say refused? */
static bool refused(const char *path)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int fd, ret;

	if (strlen(path) >= sizeof(sa.sun_path))
		return false;
	memcpy(sa.sun_path, path, strlen(path) + 1);
	fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return false;
	ret = connect(fd, (struct sockaddr *)&sa, sizeof(sa));
	ret = ret ? errno : 0;
	close(fd);
	return ret == ECONNREFUSED;
}

/* still the file looked at (nobody made a new one meanwhile) */
static bool same_file(const struct rt_file *r)
{
	struct stat st;

	return !lstat(r->path, &st) && st.st_dev == r->dev && st.st_ino == r->ino;
}

static int pins_gc(bool dry_run, size_t *shown)
{
	static char names[1024][IF_NAMESIZE];
	struct vnet_status st;
	struct vnet_err err = {};
	char dir[sizeof(VNET_PIN_ROOT) + IF_NAMESIZE + 1];
	int n, i;

	if (dry_run) {
		n = vnet_list(names, 1024);
		if (n < 0)
			return cli_error("cannot read %s: %s", VNET_PIN_ROOT,
					 strerror(-n));
		for (i = 0; i < n; i++)
			if (vnet_status(names[i], &st, NULL) || st.present)
				names[i][0] = '\0';
	} else {
		n = vnet_gc(names, 1024, &err);
		if (n < 0)
			return cli_error("%s", err.msg);
	}
	out_arr_open(NULL);
	for (i = 0; i < n && i < 1024; i++) {
		if (!names[i][0])
			continue;
		snprintf(dir, sizeof(dir), "%s/%.15s", VNET_PIN_ROOT, names[i]);
		out_obj_open(NULL);
		out_str("kind", NULL, "pins");
		out_str("device", "%s: device gone; ", names[i]);
		out_str("path", NULL, dir);
		out_bool("removed", NULL, !dry_run);
		out_text(dry_run ? "its pins would be removed\n" : "pins removed\n");
		out_obj_close();
		(*shown)++;
	}
	return 0;
}

int do_gc(int argc, char **argv)
{
	static struct rt_file files[GC_MAX];
	struct strset listening = {};
	bool dry_run = false, known;
	size_t n, i, shown = 0;
	char why[PATH_MAX + 64] = "";
	int opt, ret, failed = 0;

	while ((opt = cli_getopt(argc, argv, gc_opts, "")) != -1) {
		if (opt != 256)
			return cli_bad_option("gc", opt, argv);
		dry_run = true;
	}
	if (optind < argc)
		return cli_usage("gc", "too many arguments");

	/* read what is there before the pins' part prints the array */
	n = rt_list(files, GC_MAX);
	known = true;
	if (n)
		listeners_all(&listening);
	for (i = 0; i < n && files[i].kind != RT_JOURNAL; i++)
		;
	if (i < n)
		known = holders_scan(files, n, why, sizeof(why));

	ret = pins_gc(dry_run, &shown);
	if (ret)
		goto out;
	/* the array pins_gc() opened holds every entry */
	for (i = 0; i < n; i++) {
		struct rt_file *r = &files[i];
		bool stale;

		if (r->kind == RT_JOURNAL) {
			r->listened = strset_has(&listening, r->socket);
			stale = known && !r->held && !r->listened;
		} else {
			r->listened = strset_has(&listening, r->path);
			stale = !r->listened && refused(r->path);
		}
		if (!stale || !same_file(r))
			continue;
		if (!dry_run && unlink(r->path) && errno != ENOENT) {
			fprintf(stderr, "Error: cannot remove %s: %s\n", r->path,
				strerror(errno));
			failed = 1;
			continue;
		}
		out_obj_open(NULL);
		if (r->kind == RT_JOURNAL) {
			out_str("kind", NULL, "journal");
			out_str("path", "%s: ", r->path);
			out_str("socket", "ring journal of %s, ", r->socket);
			out_text("no process holds it and nobody listens there; ");
		} else {
			out_str("kind", NULL, "takeover");
			out_str("path", "%s: ", r->path);
			out_text("hand-over socket nobody listens on; ");
		}
		out_bool("removed", NULL, !dry_run);
		out_text(dry_run ? "would be removed\n" : "removed\n");
		out_obj_close();
		shown++;
	}
	out_arr_close();
	if (!known)
		fprintf(stderr, "Warning: every ring journal in %s kept: %s (gc needs root to see which a vnetd maps)\n",
			GC_RUN_DIR, why);
	if (!shown)
		out_text("nothing to collect\n");
out:
	strset_free(&listening);
	if (ret)
		return ret;
	out_doc_end();
	return failed;
}
