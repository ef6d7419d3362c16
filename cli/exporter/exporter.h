/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * vnetctl exporter (exporter.c): the HTTP server; its connection table
 * is exporter_conns.h's, its own families exporter_self.h's.
 */
#ifndef VNETCTL_EXPORTER_H
#define VNETCTL_EXPORTER_H

#include "base/util.h"

extern const struct cli_opt exporter_opts[];
int do_exporter(int argc, char **argv);

#endif /* VNETCTL_EXPORTER_H */
