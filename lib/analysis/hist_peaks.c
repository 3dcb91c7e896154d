// SPDX-License-Identifier: LGPL-2.1
/*
 * The analyses of one profile's buckets: percentiles, and peaks (local
 * maxima separated by valleys, shallow ones merged; OSprof's modes).
 */
#include <errno.h>
#include <math.h>
#include <string.h>
#include <rsp/hist.h>
#include "internal/hist.h"

uint64_t rsp_hist__percentile(const uint64_t *buckets, unsigned r, uint64_t count, uint64_t min,
			      uint64_t max, double p)
{
	unsigned nb = rsp_hist__nr_buckets(r);
	uint64_t rank, seen = 0, v;

	if (!count)
		return 0;
	if (p < 0)
		p = 0;
	if (p > 1)
		p = 1;
	rank = (uint64_t)ceil(p * (double)count);
	if (!rank)
		rank = 1;
	for (unsigned b = 0; b < nb; b++) {
		seen += buckets[b];
		if (seen < rank)
			continue;
		v = rsp_hist__bucket_high(b, r);
		if (v > max)
			v = max;
		return v < min ? min : v;
	}
	return max;
}

void rsp_hist_peak_config__init(struct rsp_hist_peak_config *c)
{
	c->min_share = 0.01;
	c->valley_ratio = 0.5;
}

struct maxima {
	unsigned pos[RSP_HIST_MAX_BUCKETS];    /* local maxima, left to right */
	unsigned valley[RSP_HIST_MAX_BUCKETS]; /* valley[i]: minimum between pos[i] and pos[i+1] */
	int n;
};

/* Local maxima of b[lo..hi] (a plateau counts once, at its first bucket). */
static void find_maxima(const uint64_t *b, unsigned lo, unsigned hi, struct maxima *m)
{
	m->n = 0;
	for (unsigned i = lo; i <= hi; i++) {
		unsigned j = i;

		while (j < hi && b[j + 1] == b[i])
			j++;
		if ((i == lo || b[i - 1] < b[i]) && (j == hi || b[j + 1] < b[i]))
			m->pos[m->n++] = i;
		i = j;
	}
	for (int k = 0; k + 1 < m->n; k++) {
		unsigned v = m->pos[k];

		for (unsigned i = m->pos[k]; i <= m->pos[k + 1]; i++)
			if (b[i] < b[v])
				v = i;
		m->valley[k] = v;
	}
}

/* Merge the two maxima around the shallowest valley until every valley is deep. */
static void merge_shallow(const uint64_t *b, struct maxima *m, double ratio)
{
	for (;;) {
		int best = -1;
		double best_r = 0;

		for (int k = 0; k + 1 < m->n; k++) {
			uint64_t low =
				b[m->pos[k]] < b[m->pos[k + 1]] ? b[m->pos[k]] : b[m->pos[k + 1]];
			double r = low ? (double)b[m->valley[k]] / (double)low : 1.0;

			if (r >= ratio && (best < 0 || r > best_r)) {
				best = k;
				best_r = r;
			}
		}
		if (best < 0)
			return;
		/* Keep the higher maximum; the valley between them disappears. */
		if (b[m->pos[best + 1]] > b[m->pos[best]])
			m->pos[best] = m->pos[best + 1];
		for (int k = best + 1; k + 1 < m->n; k++)
			m->pos[k] = m->pos[k + 1];
		for (int k = best; k + 2 < m->n; k++)
			m->valley[k] = m->valley[k + 1];
		m->n--;
		/* The merged peak's valleys on both sides stay where they were. */
		if (best > 0) {
			unsigned v = m->pos[best - 1];

			for (unsigned i = m->pos[best - 1]; i <= m->pos[best]; i++)
				if (b[i] < b[v])
					v = i;
			m->valley[best - 1] = v;
		}
		if (best + 1 < m->n) {
			unsigned v = m->pos[best];

			for (unsigned i = m->pos[best]; i <= m->pos[best + 1]; i++)
				if (b[i] < b[v])
					v = i;
			m->valley[best] = v;
		}
	}
}

static void fill_peak(const uint64_t *b, unsigned r, uint64_t total, unsigned lo, unsigned hi,
		      unsigned mode, struct rsp_hist_peak *p)
{
	double sum = 0;

	p->lo = lo;
	p->hi = hi;
	p->mode = mode;
	p->count = 0;
	for (unsigned i = lo; i <= hi; i++) {
		p->count += b[i];
		sum += (double)b[i] * rsp_hist__bucket_mid(i, r);
	}
	p->share = total ? (double)p->count / (double)total : 0;
	p->mean_ns = p->count ? sum / (double)p->count : 0;
}

/* Peaks of one run of significant buckets [lo, hi]. */
static int run_peaks(const uint64_t *b, unsigned r, uint64_t total, unsigned lo, unsigned hi,
		     double ratio, struct rsp_hist_peak *out, int max, int n)
{
	struct maxima m;
	unsigned start = lo;

	find_maxima(b, lo, hi, &m);
	merge_shallow(b, &m, ratio);
	for (int k = 0; k < m.n; k++) {
		unsigned end = k + 1 < m.n ? m.valley[k] - 1 : hi;

		if (k + 1 < m.n && m.valley[k] == m.pos[k])
			end = m.pos[k]; /* cannot happen for a deep valley; be safe */
		if (n < max)
			fill_peak(b, r, total, start, end, m.pos[k], &out[n]);
		n++;
		if (k + 1 < m.n)
			start = m.valley[k] + 1;
	}
	return n;
}

/*
 * Tails: the noise buckets next to a peak that fall away from it without a
 * gap are its stragglers (a few 1 ms sleeps that ended just under 2^20 ns)
 * and count in it. Between two peaks, the lowest bucket of a run of noise
 * that joins them belongs to neither.
 */
static void add_tails(const uint64_t *b, unsigned nb, unsigned r, uint64_t total, uint64_t thresh,
		      struct rsp_hist_peak *pk, int n)
{
	unsigned valley[RSP_HIST_MAX_BUCKETS]; /* valley[k]: between peaks k and k + 1 */

	for (int k = 0; k + 1 < n; k++) {
		unsigned v = pk[k].hi + 1; /* < pk[k + 1].lo: peaks never touch */

		for (unsigned i = v; i < pk[k + 1].lo; i++)
			if (b[i] < b[v])
				v = i;
		valley[k] = v;
	}
	for (int k = 0; k < n; k++) {
		unsigned lo = pk[k].lo, hi = pk[k].hi;
		unsigned first = k > 0 ? valley[k - 1] + 1 : 0;
		unsigned last = k + 1 < n ? valley[k] - 1 : nb - 1;

		while (lo > first && b[lo - 1] && b[lo - 1] < thresh && b[lo - 1] <= b[lo])
			lo--;
		while (hi < last && b[hi + 1] && b[hi + 1] < thresh && b[hi + 1] <= b[hi])
			hi++;
		fill_peak(b, r, total, lo, hi, pk[k].mode, &pk[k]);
	}
}

int rsp_hist__peaks(const uint64_t *buckets, unsigned r, const struct rsp_hist_peak_config *cfg,
		    struct rsp_hist_peak *out, int max)
{
	struct rsp_hist_peak_config def;
	unsigned nb = rsp_hist__nr_buckets(r);
	uint64_t total = 0, thresh;
	int n = 0;

	if (!cfg) {
		rsp_hist_peak_config__init(&def);
		cfg = &def;
	}
	for (unsigned i = 0; i < nb; i++)
		total += buckets[i];
	if (!total)
		return 0;
	thresh = (uint64_t)ceil(cfg->min_share * (double)total);
	if (thresh < 1)
		thresh = 1;
	for (unsigned i = 0; i < nb; i++) {
		unsigned j = i;

		if (buckets[i] < thresh)
			continue;
		while (j + 1 < nb && buckets[j + 1] >= thresh)
			j++;
		n = run_peaks(buckets, r, total, i, j, cfg->valley_ratio, out, max, n);
		i = j;
	}
	if (n <= max)
		add_tails(buckets, nb, r, total, thresh, out, n);
	return n;
}

double rsp_hist_profile__stddev(const struct rsp_hist_profile *p)
{
	double n = (double)p->count, mean, var, sd;

	if (p->count < 2)
		return 0;
	mean = (double)p->sum / n;
	var = p->sumsq / n - mean * mean;
	/* rounding can take an all-equal profile a hair under zero */
	sd = var > 0 ? sqrt(var) : 0;
	/*
	 * A standard deviation is never more than half the spread; rounding
	 * takes it past that when the latencies are large and close (two
	 * clock_nanosleep()s of a second, 3 ns apart: the sum of squares,
	 * 2e18, has a unit of 256 and the variance is 2.25), and a baseline
	 * saved with it did not load back.
	 */
	if (p->max >= p->min && sd > (double)(p->max - p->min) / 2)
		sd = (double)(p->max - p->min) / 2;
	return sd;
}
