// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* statistics the benchmark tools share (see stats.h) */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "stats.h"

int stats_cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static double *sorted_copy(const double *v, int n)
{
	double *t = malloc(sizeof(double) * (size_t)(n > 0 ? n : 1));

	if (!t)
		abort();
	memcpy(t, v, sizeof(double) * (size_t)n);
	qsort(t, (size_t)n, sizeof(double), stats_cmp_double);
	return t;
}

double stats_median(const double *v, int n)
{
	double *t = sorted_copy(v, n), m;

	m = n % 2 ? t[n / 2] : (t[n / 2 - 1] + t[n / 2]) / 2;
	free(t);
	return m;
}

double stats_quantile(const double *v, int n, double q)
{
	double *t = sorted_copy(v, n), h = (n - 1) * q, r;
	int i = (int)floor(h);

	if (i >= n - 1)
		r = t[n - 1];
	else
		r = t[i] + (h - i) * (t[i + 1] - t[i]);
	free(t);
	return r;
}

void stats_minmax(const double *v, int n, double *lo, double *hi)
{
	int i;

	*lo = *hi = v[0];
	for (i = 1; i < n; i++) {
		if (v[i] < *lo)
			*lo = v[i];
		if (v[i] > *hi)
			*hi = v[i];
	}
}

void stats_mean_var(const double *v, int n, double *m, double *var)
{
	double sum = 0, sq = 0;
	int i;

	for (i = 0; i < n; i++)
		sum += v[i];
	*m = sum / n;
	for (i = 0; i < n; i++)
		sq += (v[i] - *m) * (v[i] - *m);
	*var = n > 1 ? sq / (n - 1) : 0;
}

/* one term AA of a continued fraction (modified Lentz): the factor */
static double lentz_step(double *c, double *d, double aa)
{
	*d = 1 + aa * *d;
	if (fabs(*d) < 1e-300)
		*d = 1e-300;
	*c = 1 + aa / *c;
	if (fabs(*c) < 1e-300)
		*c = 1e-300;
	*d = 1 / *d;
	return *d * *c;
}

/* continued fraction of the regularized incomplete beta function */
static double betacf(double a, double b, double x)
{
	double qab = a + b, qap = a + 1, qam = a - 1, c = 1, d, h;
	int m;

	d = 1 - qab * x / qap;
	if (fabs(d) < 1e-300)
		d = 1e-300;
	d = 1 / d;
	h = d;
	for (m = 1; m <= 300; m++) {
		double m2 = 2.0 * m, aa, del;

		aa = m * (b - m) * x / ((qam + m2) * (a + m2));
		h *= lentz_step(&c, &d, aa);
		aa = -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2));
		del = lentz_step(&c, &d, aa);
		h *= del;
		if (fabs(del - 1) < 1e-12)
			break;
	}
	return h;
}

double stats_betai(double a, double b, double x)
{
	double bt;

	if (x <= 0)
		return 0;
	if (x >= 1)
		return 1;
	bt = exp(lgamma(a + b) - lgamma(a) - lgamma(b) + a * log(x) +
		 b * log(1 - x));
	if (x < (a + 1) / (a + b + 2))
		return bt * betacf(a, b, x) / a;
	return 1 - bt * betacf(b, a, 1 - x) / b;
}

double stats_welch_p(const double *x, int nx, const double *y, int ny)
{
	double mx, vx, my, vy, se2, t, df;

	if (nx < 2 || ny < 2)
		return 1;
	stats_mean_var(x, nx, &mx, &vx);
	stats_mean_var(y, ny, &my, &vy);
	se2 = vx / nx + vy / ny;
	if (se2 <= 0)
		return mx == my ? 1 : 0;
	t = (mx - my) / sqrt(se2);
	df = se2 * se2 / ((vx / nx) * (vx / nx) / (nx - 1) +
			  (vy / ny) * (vy / ny) / (ny - 1));
	return stats_betai(df / 2, 0.5, df / (df + t * t));
}

double stats_one_sample_p(const double *x, int n)
{
	double m, v, t, df;

	if (n < 2)
		return 1;
	stats_mean_var(x, n, &m, &v);
	if (v <= 0)
		return m == 0 ? 1 : 0;
	t = m / sqrt(v / n);
	df = n - 1;
	return stats_betai(df / 2, 0.5, df / (df + t * t));
}

static int cmp_abs(const void *a, const void *b)
{
	double x = fabs(*(const double *)a), y = fabs(*(const double *)b);

	return x < y ? -1 : x > y;
}

double stats_wilcoxon_greater(const double *d, int n)
{
	double *a = malloc(sizeof(double) * (size_t)(n > 0 ? n : 1));
	double wplus = 0, ties = 0, p;
	int m = 0, i, j, k, tied = 0;

	if (!a)
		abort();
	for (i = 0; i < n; i++)
		if (d[i] != 0 && !isnan(d[i]))
			a[m++] = d[i];
	if (!m) {
		free(a);
		return 1;
	}
	qsort(a, (size_t)m, sizeof(double), cmp_abs);
	/* midranks of |d|; W+ the sum of the positive ones' ranks */
	for (i = 0; i < m; i = j) {
		double rank;

		for (j = i + 1; j < m && fabs(a[j]) == fabs(a[i]); j++)
			;
		rank = (i + 1 + j) / 2.0;
		if (j - i > 1) {
			tied = 1;
			ties += (double)(j - i) * (j - i) * (j - i) - (j - i);
		}
		for (k = i; k < j; k++)
			if (a[k] > 0)
				wplus += rank;
	}
	free(a);
	if (!tied && m <= 200) {
		/* exact: c[w] = subsets of {1..m} whose sum is w */
		int max = m * (m + 1) / 2, w;
		double *c = calloc((size_t)max + 1, sizeof(double)), ge = 0;

		if (!c)
			abort();
		c[0] = 1;
		for (k = 1; k <= m; k++)
			for (w = max; w >= k; w--)
				c[w] += c[w - k];
		for (w = (int)wplus; w <= max; w++)
			ge += c[w];
		p = ge / ldexp(1, m);
		free(c);
		return p > 1 ? 1 : p;
	} else {
		double mu = m * (m + 1) / 4.0;
		double var = m * (m + 1) * (2.0 * m + 1) / 24 - ties / 48;
		double z;

		if (var <= 0)
			return 1;
		z = (wplus - mu - 0.5) / sqrt(var);
		return 0.5 * erfc(z / sqrt(2));
	}
}

double stats_sign_greater(const double *d, int n)
{
	int pos = 0, m = 0, i, k;
	double p = 0;

	for (i = 0; i < n; i++) {
		if (d[i] == 0 || isnan(d[i]))
			continue;
		m++;
		pos += d[i] > 0;
	}
	if (!m)
		return 1;
	/* P(X >= pos), X ~ Binomial(m, 1/2) */
	for (k = pos; k <= m; k++)
		p += exp(lgamma(m + 1) - lgamma(k + 1) - lgamma(m - k + 1) -
			 m * log(2));
	return p > 1 ? 1 : p;
}
