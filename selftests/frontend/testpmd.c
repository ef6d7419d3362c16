// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* dpdk-testpmd for the tests (see testpmd.h) */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "testpmd.h"

#define TESTPMD_MAX_APP	16

const char *testpmd_bin(const char *env)
{
	static const char *fallback[] = { "/usr/bin/dpdk-testpmd",
					  "/usr/local/bin/dpdk-testpmd" };
	static char buf[PATH_MAX];
	const char *e = env ? getenv(env) : NULL;
	char *path, *dir, *save = NULL;
	unsigned int i;

	if (e && *e)
		return access(e, X_OK) ? NULL : e;
	path = strdup(getenv("PATH") ? getenv("PATH") :
				       "/usr/bin:/bin:/usr/sbin:/sbin");
	if (path) {
		for (dir = strtok_r(path, ":", &save); dir;
		     dir = strtok_r(NULL, ":", &save)) {
			snprintf(buf, sizeof(buf), "%s/dpdk-testpmd", dir);
			if (!access(buf, X_OK)) {
				free(path);
				return buf;
			}
		}
		free(path);
	}
	for (i = 0; i < sizeof(fallback) / sizeof(fallback[0]); i++)
		if (!access(fallback[i], X_OK))
			return fallback[i];
	return NULL;
}

int testpmd_start(struct testpmd *d, const char *bin, const char *vdev,
		  const char *prefix, unsigned int mem_mb,
		  const char *const *app)
{
	char mem[16], lcores[32];
	char *argv[16 + TESTPMD_MAX_APP];
	unsigned int n = 0, i;
	int p[2], fd;

	if (!bin)
		return -ENOENT;
	snprintf(mem, sizeof(mem), "%u", mem_mb);
	snprintf(lcores, sizeof(lcores), "%s",
		 sysconf(_SC_NPROCESSORS_ONLN) > 1 ? "0@0,1@1" : "0@0,1@0");
	argv[n++] = (char *)bin;
	argv[n++] = "--lcores";
	argv[n++] = lcores;
	argv[n++] = "--no-huge";
	argv[n++] = "-m";
	argv[n++] = mem;
	argv[n++] = "--no-pci";
	argv[n++] = "--no-shconf";
	argv[n++] = "--file-prefix";
	argv[n++] = (char *)prefix;
	argv[n++] = "--vdev";
	argv[n++] = (char *)vdev;
	argv[n++] = "--";
	for (i = 0; app && app[i]; i++) {
		if (i == TESTPMD_MAX_APP)
			return -E2BIG;
		argv[n++] = (char *)app[i];
	}
	argv[n] = NULL;

	if (pipe2(p, O_CLOEXEC))
		return -errno;
	d->pid = fork();
	if (d->pid < 0) {
		close(p[0]);
		close(p[1]);
		return -errno;
	}
	if (!d->pid) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		dup2(p[0], 0);
		fd = open(d->log, O_WRONLY | O_CREAT | O_TRUNC, 0644);
		if (fd >= 0) {
			dup2(fd, 1);
			dup2(fd, 2);
		}
		execv(bin, argv);
		_exit(127);
	}
	close(p[0]);
	d->in_fd = p[1];
	return 0;
}

bool testpmd_running(struct testpmd *d)
{
	int status;

	if (d->pid <= 0)
		return false;
	if (waitpid(d->pid, &status, WNOHANG) == d->pid) {
		d->pid = -1;
		return false;
	}
	return true;
}

void testpmd_log_tail(const char *path, char *out, size_t len)
{
	char line[256];
	FILE *f = fopen(path, "r");

	snprintf(out, len, "(no log)");
	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		line[strcspn(line, "\n")] = 0;
		if (line[0])
			snprintf(out, len, "%.150s", line);
	}
	fclose(f);
}

int testpmd_wait_socket(struct testpmd *d, const char *sock, int ms,
			char *why, size_t wlen)
{
	char tail[200];
	struct stat sb;
	int t;

	for (t = 0; t < ms; t += 20) {
		if (!stat(sock, &sb) && S_ISSOCK(sb.st_mode))
			return 0;
		if (!testpmd_running(d)) {
			testpmd_log_tail(d->log, tail, sizeof(tail));
			snprintf(why, wlen, "testpmd exited: %.150s (log %.80s)",
				 tail, d->log);
			return -ECHILD;
		}
		poll(NULL, 0, 20);
	}
	snprintf(why, wlen, "testpmd made no socket in %d s (log %s)",
		 ms / 1000, d->log);
	return -ETIMEDOUT;
}

int testpmd_stop(struct testpmd *d, char *why, size_t wlen)
{
	int status = 0, i, sig = 0;
	pid_t r = 0;

	if (d->in_fd >= 0)
		close(d->in_fd);
	d->in_fd = -1;
	if (d->pid <= 0)
		return 0;
	for (i = 0; i < 600; i++) {
		if (i == 400)
			kill(d->pid, sig = SIGTERM);
		r = waitpid(d->pid, &status, WNOHANG);
		if (r == d->pid)
			break;
		poll(NULL, 0, 20);
	}
	if (r != d->pid) {
		kill(d->pid, SIGKILL);
		waitpid(d->pid, &status, 0);
		sig = SIGKILL;
	}
	d->pid = -1;
	if (WIFSIGNALED(status) && WTERMSIG(status) != sig) {
		snprintf(why, wlen, "testpmd died of signal %d (log %s)",
			 WTERMSIG(status), d->log);
		return -ECHILD;
	}
	return 0;
}

long long testpmd_stat(const struct testpmd *d, const char *key)
{
	static char buf[1 << 16];
	char *acc, *k;
	ssize_t n;
	int fd;

	fd = open(d->log, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return -1;
	buf[n] = '\0';
	acc = strstr(buf, "Accumulated forward statistics");
	if (!acc)
		return -1;
	k = strstr(acc, key);
	return k ? strtoll(k + strlen(key), NULL, 10) : -1;
}
