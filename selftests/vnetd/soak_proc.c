// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* soak's samples of vnetd's fds, RSS and mappings (soak.h) */
#include <dirent.h>
#include <stdio.h>
#include <string.h>

#include "soak.h"

void sample(int pid, struct usage *u)
{
	char path[64], line[512];
	struct dirent *d;
	DIR *dir;
	FILE *f;

	u->fds = u->rss_kb = u->anon_kb = u->shmem_kb = u->maps = -1;
	snprintf(path, sizeof(path), "/proc/%d/fd", pid);
	dir = opendir(path);
	if (dir) {
		u->fds = 0;
		while ((d = readdir(dir)))
			if (d->d_name[0] != '.')
				u->fds++;
		closedir(dir);
	}
	snprintf(path, sizeof(path), "/proc/%d/status", pid);
	f = fopen(path, "r");
	if (f) {
		while (fgets(line, sizeof(line), f)) {
			sscanf(line, "VmRSS: %ld", &u->rss_kb);
			sscanf(line, "RssAnon: %ld", &u->anon_kb);
			sscanf(line, "RssShmem: %ld", &u->shmem_kb);
		}
		fclose(f);
	}
	snprintf(path, sizeof(path), "/proc/%d/maps", pid);
	f = fopen(path, "r");
	if (f) {
		u->maps = 0;
		while (fgets(line, sizeof(line), f))
			if (strchr(line, '\n'))
				u->maps++;
		fclose(f);
	}
}

void print_sample(const char *what, double t, const struct usage *u)
{
	printf("sample t=%.0f fds=%ld rss_kb=%ld anon_kb=%ld shmem_kb=%ld "
	       "maps=%ld\n",
	       t, u->fds, u->rss_kb, u->anon_kb, u->shmem_kb, u->maps);
	if (what)
		printf("%s fds=%ld rss_kb=%ld anon_kb=%ld shmem_kb=%ld "
		       "maps=%ld\n",
		       what, u->fds, u->rss_kb, u->anon_kb, u->shmem_kb,
		       u->maps);
	fflush(stdout);
}
