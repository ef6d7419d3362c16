/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/* vnetctl gc (gc.c) */
#ifndef VNETCTL_GC_H
#define VNETCTL_GC_H

#include "base/util.h"

extern const struct cli_opt gc_opts[];
int do_gc(int argc, char **argv);

#endif
