// SPDX-License-Identifier: LGPL-2.1
/*
 * Sets of profiles (what a query collected, or a baseline file held) and
 * the analyses of one profile: percentiles and peaks.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <rsp/hist.h>
#include "internal/hist.h"
#include "internal/u64map.h"
#include "internal/hash.h"

struct rsp_hist_set *rsp_hist_set__new(unsigned r)
{
	struct rsp_hist_set *s = calloc(1, sizeof(*s));
	struct rsp_u64map *m = calloc(1, sizeof(*m));

	if (!s || !m) {
		free(s);
		free(m);
		return NULL;
	}
	rsp_u64map__init(m);
	s->index = m;
	s->resolution = r == 2 ? 2 : 1;
	return s;
}

static void profile_free_rows(struct rsp_hist_profile *p)
{
	if (p->rows)
		free(p->rows[0].buckets); /* one block for every row */
	free(p->rows);
	p->rows = NULL;
	p->nr_rows = 0;
}

void rsp_hist_set__delete(struct rsp_hist_set *s)
{
	if (!s)
		return;
	for (size_t i = 0; i < s->n; i++)
		profile_free_rows(&s->v[i]);
	free(s->v);
	if (s->index)
		rsp_u64map__exit(s->index);
	free(s->index);
	free(s);
}

bool rsp_hist__subject_equal(const struct rsp_hist_subject *a, const struct rsp_hist_subject *b)
{
	if (a->kind != b->kind)
		return false;
	switch (a->kind) {
	case RSP_HSUBJ_PROCESS:
		return a->pid == b->pid;
	case RSP_HSUBJ_THREAD:
		return a->tid == b->tid;
	case RSP_HSUBJ_COMM:
		return !strncmp(a->comm, b->comm, RSP_HIST_COMM_LEN);
	default:
		return true;
	}
}

/* A hash consistent with rsp_hist__subject_equal() and the op name. */
static uint64_t profile_hash(const struct rsp_hist_subject *s, const char *op)
{
	uint64_t h = rsp_hash__bytes(RSP_HASH_INIT, &s->kind, sizeof(s->kind));

	if (s->kind == RSP_HSUBJ_PROCESS)
		h = rsp_hash__bytes(h, &s->pid, sizeof(s->pid));
	else if (s->kind == RSP_HSUBJ_THREAD)
		h = rsp_hash__bytes(h, &s->tid, sizeof(s->tid));
	else if (s->kind == RSP_HSUBJ_COMM)
		h = rsp_hash__bytes(h, s->comm, strnlen(s->comm, RSP_HIST_COMM_LEN));
	h = rsp_hash__bytes(h, op, strlen(op));
	return h == UINT64_MAX ? 0 : h;
}

static bool profile_is(const struct rsp_hist_profile *p, const struct rsp_hist_subject *subj,
		       const char *op)
{
	return rsp_hist__subject_equal(&p->subject, subj) && !strcmp(p->op_name, op);
}

struct rsp_hist_profile *rsp_hist_set__find(const struct rsp_hist_set *s,
					    const struct rsp_hist_subject *subj,
					    const char *op_name)
{
	uint32_t idx;

	if (!rsp_u64map__get(s->index, profile_hash(subj, op_name), &idx) &&
	    profile_is(&s->v[idx], subj, op_name))
		return &s->v[idx];
	/* A hash collision (or a set being built): look at every profile. */
	for (size_t i = 0; i < s->n; i++)
		if (profile_is(&s->v[i], subj, op_name))
			return &s->v[i];
	return NULL;
}

void rsp_hist_profile__init(struct rsp_hist_profile *p, const struct rsp_hist_subject *subj,
			    const char *op_name, unsigned r)
{
	memset(p, 0, sizeof(*p));
	p->subject = *subj;
	p->subject.comm[RSP_HIST_COMM_LEN - 1] = '\0';
	snprintf(p->op_name, sizeof(p->op_name), "%s", op_name);
	snprintf(p->op_label, sizeof(p->op_label), "%s", op_name);
	p->resolution = r;
}

struct rsp_hist_profile *rsp_hist_set__get(struct rsp_hist_set *s,
					   const struct rsp_hist_subject *subj, const char *op_name)
{
	struct rsp_hist_profile *p = rsp_hist_set__find(s, subj, op_name);
	uint64_t h;
	uint32_t idx;

	if (p)
		return p;
	if (s->n == s->cap) {
		size_t cap = s->cap ? s->cap * 2 : 32;
		struct rsp_hist_profile *v = realloc(s->v, cap * sizeof(*v));

		if (!v)
			return NULL;
		s->v = v;
		s->cap = cap;
	}
	h = profile_hash(subj, op_name);
	/* Only index a fresh hash: on a collision the first owner keeps it. */
	if (rsp_u64map__get(s->index, h, &idx) && rsp_u64map__put(s->index, h, (uint32_t)s->n))
		return NULL;
	p = &s->v[s->n++];
	rsp_hist_profile__init(p, subj, op_name, s->resolution);
	return p;
}

static void fold_buckets(uint64_t *b)
{
	uint64_t out[RSP_HIST_NR_BUCKETS(1)];

	out[0] = b[0];
	for (unsigned k = 0; k < 64; k++)
		out[k + 1] = b[1 + 2 * k] + b[2 + 2 * k];
	memset(b, 0, RSP_HIST_MAX_BUCKETS * sizeof(*b));
	memcpy(b, out, sizeof(out));
}

int rsp_hist_profile__merge(struct rsp_hist_profile *dst, const struct rsp_hist_profile *src)
{
	uint64_t b[RSP_HIST_MAX_BUCKETS];
	unsigned nb = rsp_hist__nr_buckets(dst->resolution);

	if (src->resolution != dst->resolution && !(src->resolution == 2 && dst->resolution == 1))
		return -EINVAL;
	memcpy(b, src->buckets, sizeof(b));
	if (src->resolution != dst->resolution)
		fold_buckets(b);
	if (src->count && (!dst->count || src->min < dst->min))
		dst->min = src->min;
	if (src->max > dst->max)
		dst->max = src->max;
	dst->count += src->count;
	dst->sum += src->sum;
	dst->incomplete += src->incomplete;
	dst->open += src->open;
	dst->inferred += src->inferred;
	for (unsigned i = 0; i < nb; i++)
		dst->buckets[i] += b[i];
	return 0;
}

void rsp_hist_set__fold(struct rsp_hist_set *s)
{
	if (s->resolution == 1)
		return;
	for (size_t i = 0; i < s->n; i++) {
		struct rsp_hist_profile *p = &s->v[i];

		fold_buckets(p->buckets);
		for (size_t j = 0; j < p->nr_rows; j++) {
			uint64_t b[RSP_HIST_MAX_BUCKETS];

			memcpy(b, p->rows[j].buckets, RSP_HIST_NR_BUCKETS(2) * sizeof(uint64_t));
			fold_buckets(b);
			/* The row's storage has room for 129; it now uses 65. */
			memcpy(p->rows[j].buckets, b, RSP_HIST_NR_BUCKETS(1) * sizeof(uint64_t));
		}
		p->resolution = 1;
	}
	s->resolution = 1;
}

static int cmp_u64_desc(uint64_t a, uint64_t b)
{
	return a > b ? -1 : a < b;
}

static int profile_cmp(const void *x, const void *y)
{
	const struct rsp_hist_profile *a = x, *b = y;
	int c = cmp_u64_desc(a->sum, b->sum);

	if (!c)
		c = cmp_u64_desc(a->count, b->count);
	if (!c)
		c = strcmp(a->op_name, b->op_name);
	if (!c)
		c = (int)a->subject.kind - (int)b->subject.kind;
	if (!c)
		c = a->subject.pid < b->subject.pid ? -1 : a->subject.pid > b->subject.pid;
	if (!c)
		c = a->subject.tid < b->subject.tid ? -1 : a->subject.tid > b->subject.tid;
	return c;
}

static void reindex(struct rsp_hist_set *s)
{
	struct rsp_u64map *m = s->index;

	rsp_u64map__exit(m);
	rsp_u64map__init(m);
	for (size_t i = 0; i < s->n; i++) {
		uint32_t idx;
		uint64_t h = profile_hash(&s->v[i].subject, s->v[i].op_name);

		if (rsp_u64map__get(m, h, &idx))
			rsp_u64map__put(m, h, (uint32_t)i); /* on ENOMEM, find() scans */
	}
}

void rsp_hist_set__sort(struct rsp_hist_set *s, size_t top)
{
	if (s->n > 1)
		qsort(s->v, s->n, sizeof(*s->v), profile_cmp);
	if (top && top < s->n) {
		for (size_t i = top; i < s->n; i++)
			profile_free_rows(&s->v[i]);
		s->n = top;
	}
	reindex(s);
}

/* ---- percentiles and peaks ------------------------------------------------ */

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
