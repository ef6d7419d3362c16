/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
#ifndef VNETCTL_H
#define VNETCTL_H

#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include "libvnet.h"
#include "out.h"

#define EXIT_USAGE 2
#define VNET_VERSION "0.1.0"
/*
 * The version of the JSON that -j prints (docs/cli-contract.md): bumped
 * when a key goes, is renamed or changes its type or meaning; keys are
 * added without a bump.  `vnetctl -j --version` prints it.
 */
#define VNETCTL_JSON_SCHEMA 2

/*
 * An option of vnetctl or of one of its commands: getopt_long's table and
 * the help (`--help`, `help COMMAND`) are made from it; completion/vnetctl
 * and vnetctl(8) list the same (selftests/test_options.sh).
 */
struct cli_opt {
	const char *name;  /* long name */
	char short_name;   /* 0: none */
	const char *arg;   /* its name in the help; NULL: takes none */
	const char *help;  /* lines after the first continue under it */
};

struct cmd {
	const char *name;
	int (*fn)(int argc, char **argv);
	const char *synopsis; /* arguments after the name */
	const char *summary;  /* one line, for --help */
	const char *help;     /* what it does */
	const struct cli_opt *opts; /* its options, ended by a NULL name */
};

/* the commands' options (their files), for main.c's table */
extern const struct cli_opt attach_opts[], detach_opts[], stats_opts[],
	exporter_opts[], gc_opts[];

/*
 * getopt_long over OPTS (PREFIX: "+" stops at the first non-option; ":"
 * is added): the option's short name, 256 + its index when it has none,
 * ':' or '?' as getopt's, -1 at the end.
 */
int cli_getopt(int argc, char **argv, const struct cli_opt *opts,
	       const char *prefix);
/* the help lines of OPTS */
void cli_opts_help(FILE *f, const struct cli_opt *opts);

extern const char *prog_name;
/* the command table, ended by a NULL name (main.c sets it) */
extern const struct cmd *cli_cmds;

/* util.c: NAME or an unambiguous prefix of it; NULL (*AMBIGUOUS says why) */
const struct cmd *cli_find_cmd(const char *name, bool *ambiguous);

/* "Error: ..." on stderr; returns 1 (the error exit code) */
int cli_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* usage error for CMD (NULL: vnetctl's own): message, then its synopsis; 2 */
int cli_usage(const char *cmd, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* getopt returned OPT (':' or '?') for CMD: the usage error, 2 */
int cli_bad_option(const char *cmd, int opt, char **argv);
/* parse an unsigned decimal in [min, max]; false (with a message) if not */
bool cli_parse_u32(const char *cmd, const char *opt, const char *s,
		   unsigned int min, unsigned int max, unsigned int *out);

/* statsdata.c, for stats.c and prom.c */
#define DP_ENTRIES (VNET_DIR_MAX * VNET_MAX_QUEUES)
const char *stats_drop_name(int i); /* NULL: a reason without a name */
bool stats_dp_active(const struct vnet_dp_stats *d); /* counted anything */
struct vnet_dp_stats *stats_dp_read(const char *dev); /* malloc'd, or NULL */
bool stats_key_active(const struct vnet_stats_snapshot *s,
		      const struct vnet_dp_stats *dp, __u32 k);
/* ,vm="" and the name, each byte escaped in two at most */
#define PROM_VM_LABEL_MAX (2 * VNET_VM_NAME_MAX + 8)
/* prom_cache.c: BUF = the vm label of VM NAME ("" for "": no label) */
void prom_vm_label(char *buf, size_t len, const char *name);
/* one device of a scrape (prom.c, prom_cache.c) */
struct prom_dev {
	char name[IF_NAMESIZE];
	char netns[NAME_MAX + 1]; /* "" when it has no name */
	/* ",vm=\"NAME\"" escaped, or "" (no VM name): after device= */
	char vm[PROM_VM_LABEL_MAX];
	struct vnet_stats_snapshot snap;
	struct vnet_dp_stats *dp; /* NULL: no dp_stats map */
	bool dp_mapped;           /* dp is the map's mmapped values */
	bool guard_ok;            /* guard maps read */
	bool served;              /* a vnetd port serves it */
	struct vnet_counter guard[VNET_GUARD_R_MAX];
	/* the rows shown, queue by queue, tx before rx: found once a scrape */
	int nrows;
	struct prom_row {
		__u16 q;
		__u8 dir;
	} rows[VNET_MAX_QUEUES * VNET_DIR_MAX];
};

/*
 * prom.c: the Prometheus text format of devices NAMES into F (gone ones
 * left out).  LENIENT (the exporter, and stats --prometheus of every
 * device): a device that cannot be read is left out too, said on stderr,
 * and the return is how many were; else it is the error (1).
 */
int stats_prometheus(FILE *f, char (*names)[IF_NAMESIZE], int n, int only_queue,
		     bool lenient);
/* from now on, keep the devices' maps open between calls (the exporter) */
void stats_prometheus_keep_open(void);
/*
 * prom_cache.c: D of NAME through its kept-open maps: 1, 0 when it is gone
 * (no series), -1 when it cannot be kept open (read it the long way);
 * begin and end bracket a scrape (what was not read is closed)
 */
int prom_cache_read(const char *name, struct prom_dev *d);
void prom_cache_begin(void);
void prom_cache_end(void);

/*
 * coalesce show's per-queue decisions (coalesce_state.c): the notification
 * rule of every (queue, direction) with traffic (SERVED: a vnetd acts on
 * it; DP: its counters, may be NULL), and the adaptive recommendations
 */
void coalesce_print_rule(const char *dev, bool served,
			 const struct vnet_config *cfg,
			 const struct vnet_queue_state *qs,
			 const struct vnet_dp_stats *dp);
void coalesce_print_recommendations(const struct vnet_queue_state *qs);

int do_attach(int argc, char **argv);
int do_detach(int argc, char **argv);
int do_status(int argc, char **argv);
int do_stats(int argc, char **argv);
int do_gc(int argc, char **argv);
int do_coalesce(int argc, char **argv);
int do_exporter(int argc, char **argv);
int do_limit(int argc, char **argv);
int do_guard(int argc, char **argv);

#endif
