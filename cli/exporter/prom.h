/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
#ifndef VNETCTL_PROM_H
#define VNETCTL_PROM_H

#include <stdbool.h>
#include <stdio.h>
#include <net/if.h>

/*
 * The Prometheus text format of devices NAMES into F (gone ones left
 * out).  LENIENT (the exporter, and stats --prometheus of every device):
 * a device that cannot be read is left out too, said on stderr, and the
 * return is how many were; else it is the error (1).
 */
int stats_prometheus(FILE *f, char (*names)[IF_NAMESIZE], int n, int only_queue,
		     bool lenient);
/* from now on, keep the devices' maps open between calls (the exporter) */
void stats_prometheus_keep_open(void);

#endif
