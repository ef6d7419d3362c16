// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * What every vnetctl command uses: its error and usage messages, number
 * parsing, and the lookup of a command in the table main.c registers.
 */
#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "out.h"
#include "util.h"

const char *prog_name = "vnetctl";
const struct cmd *cli_cmds;

const struct cmd *cli_find_cmd(const char *name, bool *ambiguous)
{
	const struct cmd *c, *found = NULL;
	size_t n = strlen(name);

	*ambiguous = false;
	for (c = cli_cmds; c && c->name; c++)
		if (!strcmp(c->name, name))
			return c;
	for (c = cli_cmds; c && c->name; c++) {
		if (n && !strncmp(c->name, name, n)) {
			if (found)
				*ambiguous = true;
			found = c;
		}
	}
	return *ambiguous ? NULL : found;
}

#define CLI_MAX_OPTS 16
#define HELP_COL 24 /* where an option's help starts */

int cli_getopt(int argc, char **argv, const struct cli_opt *opts,
	       const char *prefix)
{
	static struct option lopts[CLI_MAX_OPTS + 1];
	static char sopts[2 * CLI_MAX_OPTS + 4];
	int i, n;

	n = snprintf(sopts, sizeof(sopts), "%s:", prefix);
	for (i = 0; opts[i].name && i < CLI_MAX_OPTS; i++) {
		lopts[i] = (struct option){
			opts[i].name,
			opts[i].arg ? required_argument : no_argument, NULL,
			opts[i].short_name ? opts[i].short_name : 256 + i
		};
		if (opts[i].short_name) {
			sopts[n++] = opts[i].short_name;
			if (opts[i].arg)
				sopts[n++] = ':';
		}
	}
	sopts[n] = '\0';
	lopts[i] = (struct option){ NULL, 0, NULL, 0 };
	return getopt_long(argc, argv, sopts, lopts, NULL);
}

void cli_opts_help(FILE *f, const struct cli_opt *o)
{
	const char *h, *nl;
	int n;

	for (; o && o->name; o++) {
		if (o->short_name)
			n = fprintf(f, "  -%c, --%s", o->short_name, o->name);
		else
			n = fprintf(f, "  --%s", o->name);
		if (o->arg)
			n += fprintf(f, " %s", o->arg);
		if (n >= HELP_COL) {
			fputc('\n', f);
			n = 0;
		}
		for (h = o->help; (nl = strchr(h, '\n')); h = nl + 1, n = 0)
			fprintf(f, "%*s%.*s\n", HELP_COL - n, "", (int)(nl - h), h);
		fprintf(f, "%*s%s\n", HELP_COL - n, "", h);
	}
}

int cli_bad_option(const char *cmd, int opt, char **argv)
{
	const char *arg = optind > 0 ? argv[optind - 1] : "?";

	if (opt == ':')
		return cli_usage(cmd, "option '%s' needs a value", arg);
	return cli_usage(cmd, "unknown option '%s'", arg);
}

/* "Error: MSG" on stderr, and with -j {"error": MSG} on stdout */
static void error_say(const char *fmt, va_list ap)
{
	char msg[2048];

	vsnprintf(msg, sizeof(msg), fmt, ap);
	fprintf(stderr, "Error: %s\n", msg);
	out_error(msg);
}

int cli_error(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	error_say(fmt, ap);
	va_end(ap);
	return 1;
}

int cli_usage(const char *cmd, const char *fmt, ...)
{
	bool amb;
	const struct cmd *c = cmd ? cli_find_cmd(cmd, &amb) : NULL;
	va_list ap;

	va_start(ap, fmt);
	error_say(fmt, ap);
	va_end(ap);
	if (c)
		fprintf(stderr, "Usage: %s %s %s\n", prog_name, c->name,
			c->synopsis);
	return EXIT_USAGE;
}

int cli_show_set_clear(const char *cmd, int argc, char **argv, cli_sub_fn show,
		       cli_sub_fn set, cli_sub_fn clear)
{
	const char *w;

	if (argc < 2)
		return cli_usage(cmd, "missing subcommand: show, set or clear");
	w = argv[1];
	if (strlen(w) > 1 && !strncmp("show", w, strlen(w)))
		return show(argc, argv);
	if (strlen(w) > 1 && !strncmp("set", w, strlen(w)))
		return set(argc, argv);
	if (strlen(w) > 0 && !strncmp("clear", w, strlen(w)))
		return clear(argc, argv);
	return cli_usage(cmd, "%s subcommand '%s': expected show, set or clear",
			 !strcmp(w, "s") ? "ambiguous" : "unknown", w);
}

bool cli_parse_u32(const char *cmd, const char *opt, const char *s,
		   unsigned int min, unsigned int max, unsigned int *out)
{
	unsigned long v;
	char *end;

	errno = 0;
	v = strtoul(s, &end, 10);
	if (!*s || *end || errno || s[0] == '-' || v < min || v > max) {
		cli_usage(cmd, "invalid value '%s' for %s: expected an integer in [%u, %u]",
			  s, opt, min, max);
		return false;
	}
	*out = (unsigned int)v;
	return true;
}
