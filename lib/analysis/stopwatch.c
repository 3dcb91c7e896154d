// SPDX-License-Identifier: LGPL-2.1
/*
 * A stopwatch's totals: the kernel's per-CPU counts (bpf/stopwatch.h)
 * added up exactly, their mean and standard deviation. `stopwatch list`
 * and `show` as text and JSON: lib/format/sw_render.c.
 */
#include <math.h>
#include <rsp/hist.h>
#include <rsp/stopwatch.h>
#include "bpf/stopwatch.h"
#include "internal/hist.h"

_Static_assert(RSP_SW_NR_BUCKETS == RSP_SW_BUCKETS, "one bucket layout");

void rsp_sw_total__add_stat(struct rsp_sw_total *t, const struct rsp_sw_stat *s)
{
	if (s->count) {
		if (!t->count || s->min < t->min)
			t->min = s->min;
		if (s->max > t->max)
			t->max = s->max;
	}
	t->count += s->count;
	t->sum += s->sum;
	t->sumsq += ((unsigned __int128)s->sumsq_hi << 64) | s->sumsq_lo;
	t->unmatched += s->unmatched;
	t->overflow += s->overflow;
	t->offcpu += s->offcpu;
	t->asleep += s->asleep;
	t->off_unknown += s->off_unknown;
	t->callers_lost += s->callers_lost;
	t->callers_overflow += s->callers_overflow;
	for (int i = 0; i < RSP_SW_NR_BUCKETS; i++)
		t->buckets[i] += s->buckets[i];
}

void rsp_sw_total__merge(struct rsp_sw_total *dst, const struct rsp_sw_total *src)
{
	rsp_hist__merge_extremes(dst->count, &dst->min, &dst->max, dst->buckets, src->count,
				 src->min, src->max, src->buckets, RSP_SW_NR_BUCKETS);
	dst->count += src->count;
	dst->sum += src->sum;
	dst->sumsq += src->sumsq;
	dst->unmatched += src->unmatched;
	dst->overflow += src->overflow;
	dst->offcpu += src->offcpu;
	dst->asleep += src->asleep;
	dst->off_unknown += src->off_unknown;
	dst->callers_lost += src->callers_lost;
	dst->callers_overflow += src->callers_overflow;
}

double rsp_sw_total__mean(const struct rsp_sw_total *t)
{
	return t->count ? (double)t->sum / (double)t->count : 0;
}

double rsp_sw_total__stddev(const struct rsp_sw_total *t)
{
	long double n = (long double)t->count, s = (long double)t->sum, m2;

	if (t->count < 2)
		return 0;
	m2 = (long double)t->sumsq - s * s / n;
	return m2 > 0 ? (double)sqrtl(m2 / n) : 0;
}
