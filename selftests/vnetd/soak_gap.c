// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* soak's ring pauses (soak_gap.h) */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>

#include "soak.h"

#define OVER_S 0.050 /* the hand-over's target: rings paused <= 50 ms */

struct gap {
	double last; /* the last frame received, or the reset */
	double max;  /* the longest gap since the reset, s */
	__u64 seq0;  /* the first frame sent since the reset */
	__u64 recv;  /* frames >= seq0 received */
	__u64 top;   /* the highest such seq + 1 (0: none yet) */
};

static struct gap *gaps;
static unsigned int nr_gaps;
static double since; /* the last reset */

int gap_init(unsigned int nr, double now)
{
	unsigned int p;

	gaps = calloc(nr, sizeof(*gaps));
	if (!gaps)
		return -1;
	nr_gaps = nr;
	since = now;
	for (p = 0; p < nr; p++)
		gap_reset_port(p, 0, now);
	return 0;
}

void gap_rx(unsigned int p, __u64 seq, double now)
{
	struct gap *g = &gaps[p];

	if (now - g->last > g->max)
		g->max = now - g->last;
	g->last = now;
	if (seq < g->seq0)
		return;
	g->recv++;
	if (seq + 1 > g->top)
		g->top = seq + 1;
}

void gap_reset_port(unsigned int p, __u64 seq, double now)
{
	struct gap *g = &gaps[p];

	g->last = now;
	g->max = 0;
	g->seq0 = seq;
	g->recv = 0;
	g->top = 0;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

void gap_report(double now, const __u64 *next_seq)
{
	double *v = malloc(nr_gaps * sizeof(*v)), med;
	unsigned long long sent = 0, recv = 0, lost = 0;
	unsigned int p, over = 0, worst = 0;

	if (!v)
		return;
	for (p = 0; p < nr_gaps; p++) {
		struct gap *g = &gaps[p];

		if (now - g->last > g->max)
			g->max = now - g->last;
		v[p] = g->max;
		over += g->max > OVER_S;
		if (g->max > gaps[worst].max)
			worst = p;
		sent += next_seq[p] - g->seq0;
		recv += g->recv;
		if (g->top > g->seq0)
			lost += g->top - g->seq0 - g->recv;
	}
	qsort(v, nr_gaps, sizeof(*v), cmp_double);
	med = nr_gaps % 2 ? v[nr_gaps / 2] :
			    (v[nr_gaps / 2 - 1] + v[nr_gaps / 2]) / 2;
	printf("gaps ports=%u secs=%.3f max_ms=%.1f median_ms=%.1f over50=%u "
	       "worst_port=%u sent=%llu recv=%llu lost=%llu\n",
	       nr_gaps, now - since, v[nr_gaps - 1] * 1000, med * 1000, over,
	       worst, sent, recv, lost);
	fflush(stdout);
	since = now;
	free(v);
}
