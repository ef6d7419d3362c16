/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * vnetd's command line (opts.c): the option table; the ports' specs and
 * files are portcfg.c's.
 */
#ifndef VNETD_OPTS_H
#define VNETD_OPTS_H

#include "config.h"

/*
 * Parse and check the command line into O.  0: run; -1: --help or
 * --version was printed (exit 0); else VNETD_EXIT_USAGE, after a message
 * on stderr that names the option and the fix.
 */
int vnetd_opts_parse(int argc, char **argv, struct vnetd_opts *o);

#endif
