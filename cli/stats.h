/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/* vnetctl stats (stats.c) */
#ifndef VNETCTL_STATS_H
#define VNETCTL_STATS_H

#include "base/util.h"

extern const struct cli_opt stats_opts[];
int do_stats(int argc, char **argv);

#endif
