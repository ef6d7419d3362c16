/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/* The exporter's own families (exporter_self.c). */
#ifndef VNETCTL_EXPORTER_SELF_H
#define VNETCTL_EXPORTER_SELF_H

#include <stdio.h>

/* what the exporter did, for its own families */
struct exporter_counts {
	double read_seconds; /* the last read of the pins */
	int left_out;        /* devices it could not read */
	unsigned long long reads, scrapes, reaped;
};

/* the exporter's own families and process_*, into F */
void exporter_self(FILE *f, const struct exporter_counts *c);

#endif /* VNETCTL_EXPORTER_SELF_H */
