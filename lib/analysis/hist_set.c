// SPDX-License-Identifier: LGPL-2.1
/*
 * Sets of profiles (what a query collected, or a baseline file held): find,
 * add, merge, fold, sort. A profile's percentiles and peaks: hist_peaks.c.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <rsp/hist.h>
#include "internal/hist.h"
#include "internal/u64map.h"
#include "internal/hash.h"

/*
 * A set's private index (rsp_hist_set.index): profile hash -> slot. Every
 * profile's hash is in it unless a put failed for memory (partial), so a
 * hash that is absent is a profile that is absent: find() scans all
 * profiles only on a collision, a slot moved by a sort, or a partial index
 * (a scan on every miss made building a set of n profiles O(n^2): most of
 * a metrics scrape's time with 10^4 process profiles, in perf record).
 */
struct set_index {
	struct rsp_u64map map; /* first: s->index is used as the map */
	bool partial;
};

struct rsp_hist_set *rsp_hist_set__new(unsigned r)
{
	struct rsp_hist_set *s = calloc(1, sizeof(*s));
	struct rsp_u64map *m = calloc(1, sizeof(struct set_index));

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

/* What a profile of a set owns: its rows, its cgroup's name. */
static void profile_free(struct rsp_hist_profile *p)
{
	profile_free_rows(p);
	if (p->subject.kind == RSP_HSUBJ_CGROUP)
		free((char *)p->subject.cgroup);
	p->subject.cgroup = NULL;
}

static const char *subject_cgroup(const struct rsp_hist_subject *s)
{
	return s->cgroup ? s->cgroup : "";
}

void rsp_hist_set__delete(struct rsp_hist_set *s)
{
	if (!s)
		return;
	for (size_t i = 0; i < s->n; i++)
		profile_free(&s->v[i]);
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
	case RSP_HSUBJ_CGROUP:
		return !strcmp(subject_cgroup(a), subject_cgroup(b));
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
	else if (s->kind == RSP_HSUBJ_CGROUP)
		h = rsp_hash__bytes(h, subject_cgroup(s), strlen(subject_cgroup(s)));
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
	const struct set_index *ix = s->index;
	uint32_t idx;

	if (!rsp_u64map__get(s->index, profile_hash(subj, op_name), &idx)) {
		if (idx < s->n && profile_is(&s->v[idx], subj, op_name))
			return &s->v[idx];
	} else if (!ix->partial) {
		return NULL;
	}
	/* A hash collision, a slot moved, or a partial index: look at every profile. */
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
	char *cg = NULL;
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
	if (subj->kind == RSP_HSUBJ_CGROUP && !(cg = strdup(subject_cgroup(subj))))
		return NULL;
	h = profile_hash(subj, op_name);
	/* Only index a fresh hash: on a collision the first owner keeps it. */
	if (rsp_u64map__get(s->index, h, &idx) && rsp_u64map__put(s->index, h, (uint32_t)s->n)) {
		free(cg);
		return NULL;
	}
	p = &s->v[s->n];
	rsp_hist_profile__init(p, subj, op_name, s->resolution);
	if (cg)
		p->subject.cgroup = cg;
	s->n++;
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
	rsp_hist__merge_extremes(dst->count, &dst->min, &dst->max, dst->buckets, src->count,
				 src->min, src->max, b, nb);
	dst->count += src->count;
	dst->sum += src->sum;
	dst->sumsq += src->sumsq;
	dst->offcpu += src->offcpu;
	dst->incomplete += src->incomplete;
	dst->open += src->open;
	dst->inferred += src->inferred;
	return 0;
}

uint64_t rsp_hist_set__folded(const struct rsp_hist_set *s)
{
	return (s->ranged ? s->overflow : s->evictions) + s->cut;
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
	if (!c && a->subject.kind == RSP_HSUBJ_CGROUP)
		c = strcmp(subject_cgroup(&a->subject), subject_cgroup(&b->subject));
	return c;
}

static void reindex(struct rsp_hist_set *s)
{
	struct rsp_u64map *m = s->index;

	rsp_u64map__exit(m);
	rsp_u64map__init(m);
	((struct set_index *)s->index)->partial = false;
	for (size_t i = 0; i < s->n; i++) {
		uint32_t idx;
		uint64_t h = profile_hash(&s->v[i].subject, s->v[i].op_name);

		if (rsp_u64map__get(m, h, &idx) && rsp_u64map__put(m, h, (uint32_t)i))
			((struct set_index *)s->index)->partial = true; /* find() scans */
	}
}

void rsp_hist_set__keep_if(struct rsp_hist_set *s,
			   bool (*keep)(const struct rsp_hist_profile *p, void *ctx), void *ctx)
{
	size_t n = 0;

	for (size_t i = 0; i < s->n; i++) {
		if (!keep(&s->v[i], ctx)) {
			profile_free(&s->v[i]);
			continue;
		}
		if (n != i)
			s->v[n] = s->v[i];
		n++;
	}
	if (n == s->n)
		return;
	s->n = n;
	reindex(s);
}

void rsp_hist_set__sort(struct rsp_hist_set *s, size_t top)
{
	if (s->n > 1)
		qsort(s->v, s->n, sizeof(*s->v), profile_cmp);
	if (top && top < s->n) {
		for (size_t i = top; i < s->n; i++)
			profile_free(&s->v[i]);
		s->n = top;
	}
	reindex(s);
}
