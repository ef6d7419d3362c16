// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * The exporter's own families, after the devices': what its reads of the
 * pins cost and what it refused, and the process_* families every
 * Prometheus client library exports (CPU, memory, file descriptors, start
 * time), read from /proc/self.
 */
#include <dirent.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <sys/resource.h>

#include "exporter_self.h"

static void family(FILE *f, const char *name, const char *type,
		   const char *help)
{
	fprintf(f, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

static int open_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *e;
	int n = 0;

	if (!d)
		return -1;
	while ((e = readdir(d)))
		n += e->d_name[0] != '.';
	closedir(d);
	return n - 1; /* the directory's own */
}

/* utime+stime (clock ticks), start time (ticks after boot), vsize, rss */
static int proc_stat(double *cpu_s, double *start_s, double *vsize, double *rss)
{
	unsigned long long ut, st, start, vs;
	long long pages;
	double boot = 0, btime;
	char buf[1024], *p;
	FILE *f = fopen("/proc/self/stat", "r");
	long hz = sysconf(_SC_CLK_TCK);

	if (!f)
		return -1;
	p = fgets(buf, sizeof(buf), f);
	fclose(f);
	/* after the command's closing parenthesis: field 3 on */
	p = p ? strrchr(buf, ')') : NULL;
	if (!p ||
	    sscanf(p + 2,
		   "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu %*d %*d %*d %*d %*d %*d %llu %llu %lld",
		   &ut, &st, &start, &vs, &pages) != 5)
		return -1;
	f = fopen("/proc/stat", "r");
	while (f && fgets(buf, sizeof(buf), f))
		if (sscanf(buf, "btime %lf", &btime) == 1)
			boot = btime;
	if (f)
		fclose(f);
	*cpu_s = (double)(ut + st) / hz;
	*start_s = boot + (double)start / hz;
	*vsize = (double)vs;
	*rss = (double)pages * sysconf(_SC_PAGESIZE);
	return 0;
}

void exporter_self(FILE *f, const struct exporter_counts *c)
{
	double cpu, start, vsize, rss;
	struct rlimit r;

	family(f, "vnet_exporter_read_seconds", "gauge",
	       "How long the read of the pins behind this answer took.");
	fprintf(f, "vnet_exporter_read_seconds %.6f\n", c->read_seconds);
	family(f, "vnet_exporter_devices_left_out", "gauge",
	       "Attached devices that read could not read (the exporter's log says why).");
	fprintf(f, "vnet_exporter_devices_left_out %d\n", c->left_out);
	family(f, "vnet_exporter_reads_total", "counter",
	       "Reads of the pins; scrapes waiting together share one.");
	fprintf(f, "vnet_exporter_reads_total %llu\n", c->reads);
	family(f, "vnet_exporter_scrapes_total", "counter",
	       "Answers to GET /metrics, up to this read.");
	fprintf(f, "vnet_exporter_scrapes_total %llu\n", c->scrapes);
	family(f, "vnet_exporter_connections_closed_total", "counter",
	       "Connections closed for going without a whole request.");
	fprintf(f, "vnet_exporter_connections_closed_total %llu\n", c->reaped);
	if (!proc_stat(&cpu, &start, &vsize, &rss)) {
		family(f, "process_cpu_seconds_total", "counter",
		       "Total user and system CPU time spent in seconds.");
		fprintf(f, "process_cpu_seconds_total %.2f\n", cpu);
		family(f, "process_start_time_seconds", "gauge",
		       "Start time of the process since unix epoch in seconds.");
		fprintf(f, "process_start_time_seconds %.2f\n", start);
		family(f, "process_virtual_memory_bytes", "gauge",
		       "Virtual memory size in bytes.");
		fprintf(f, "process_virtual_memory_bytes %.0f\n", vsize);
		family(f, "process_resident_memory_bytes", "gauge",
		       "Resident memory size in bytes.");
		fprintf(f, "process_resident_memory_bytes %.0f\n", rss);
	}
	family(f, "process_open_fds", "gauge",
	       "Number of open file descriptors.");
	fprintf(f, "process_open_fds %d\n", open_fds());
	if (!getrlimit(RLIMIT_NOFILE, &r)) {
		family(f, "process_max_fds", "gauge",
		       "Maximum number of open file descriptors.");
		fprintf(f, "process_max_fds %llu\n",
			(unsigned long long)r.rlim_cur);
	}
}
