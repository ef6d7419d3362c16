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

#include "vnetctl.h"

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
