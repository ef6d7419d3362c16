/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * What every part of vnetctl shares (util.c): the version, the option and
 * command tables' types, errors, usage and number parsing.
 */
#ifndef VNETCTL_UTIL_H
#define VNETCTL_UTIL_H

#include <stdbool.h>
#include <stdio.h>

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

/* NAME or an unambiguous prefix of it; NULL (*AMBIGUOUS says why) */
const struct cmd *cli_find_cmd(const char *name, bool *ambiguous);

/* "Error: ..." on stderr; returns 1 (the error exit code) */
int cli_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* usage error for CMD (NULL: vnetctl's own): message, then its synopsis; 2 */
int cli_usage(const char *cmd, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* a command's subcommands: show, set and clear */
typedef int (*cli_sub_fn)(int argc, char **argv);
/*
 * CMD's subcommand argv[1] (show and set: 2 letters at least, clear: 1),
 * run with argc and argv; else the usage error, 2
 */
int cli_show_set_clear(const char *cmd, int argc, char **argv, cli_sub_fn show,
		       cli_sub_fn set, cli_sub_fn clear);
/* getopt returned OPT (':' or '?') for CMD: the usage error, 2 */
int cli_bad_option(const char *cmd, int opt, char **argv);
/* parse an unsigned decimal in [min, max]; false (with a message) if not */
bool cli_parse_u32(const char *cmd, const char *opt, const char *s,
		   unsigned int min, unsigned int max, unsigned int *out);

#endif
