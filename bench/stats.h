/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/* statistics the benchmark tools share (evstat, bench_vnetd_io slice) */
#ifndef VNET_BENCH_STATS_H
#define VNET_BENCH_STATS_H

/* qsort comparison of doubles, ascending */
int stats_cmp_double(const void *a, const void *b);

/* median of v[0..n), n >= 1; v is left as it was */
double stats_median(const double *v, int n);

/*
 * the q-quantile (0 <= q <= 1) of v[0..n), n >= 1, linear between the
 * order statistics (R's type 7); v is left as it was
 */
double stats_quantile(const double *v, int n, double q);

void stats_minmax(const double *v, int n, double *lo, double *hi);

/* mean and sample variance (0 for n < 2) */
void stats_mean_var(const double *v, int n, double *m, double *var);

/* the regularized incomplete beta function I_x(a, b) */
double stats_betai(double a, double b, double x);

/* Welch's t-test of two samples, two-sided p; 1 when it cannot tell */
double stats_welch_p(const double *x, int nx, const double *y, int ny);

/* one-sample t-test of mean 0, two-sided p; 1 when it cannot tell */
double stats_one_sample_p(const double *x, int n);

/*
 * Wilcoxon signed-rank test of d[0..n) against 0, one-sided: the p of
 * "the differences are centred above 0" (H0: centred at or below 0).
 * Zeros are dropped; exact null distribution when no absolute values tie
 * and at most 200 remain, else the normal approximation with the tie
 * correction and a continuity correction.  1 when nothing remains.
 */
double stats_wilcoxon_greater(const double *d, int n);

/* sign test of d[0..n) against 0, one-sided (more above 0), exact */
double stats_sign_greater(const double *d, int n);

#endif /* VNET_BENCH_STATS_H */
