// SPDX-License-Identifier: LGPL-2.1
/*
 * cpu-clock samples indexed by thread (and the idle task's by CPU): one
 * vector sorted once by (key, time), a map from key to its range, binary
 * searches by time inside a range.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <rsp/samples.h>
#include "internal/u64map.h"
#include "internal/vec.h"
#include "internal/gallop.h"

struct range {
	size_t first, n;
};

struct rsp_samples {
	struct rsp_csample *v;
	size_t nr, cap;
	struct rsp_kvec ranges; /* key -> struct range */
	bool sealed;
};

/* Threads by tid; the idle task (tid 0) by CPU. */
static uint64_t key_of(const struct rsp_csample *c)
{
	return c->tid ? c->tid : (1ull << 32) | c->cpu;
}

struct rsp_samples *rsp_samples__new(void)
{
	struct rsp_samples *s = calloc(1, sizeof(*s));

	if (s)
		rsp_kvec__init(&s->ranges, sizeof(struct range));
	return s;
}

void rsp_samples__delete(struct rsp_samples *s)
{
	if (!s)
		return;
	free(s->v);
	rsp_kvec__exit(&s->ranges);
	free(s);
}

int rsp_samples__add(struct rsp_samples *s, const struct rsp_csample *smp)
{
	if (s->sealed)
		return -EINVAL;
	if (rsp_vec__reserve((void **)&s->v, &s->cap, s->nr + 1, sizeof(*s->v)))
		return -ENOMEM;
	s->v[s->nr++] = *smp;
	return 0;
}

static int cmp_sample(const void *a, const void *b)
{
	const struct rsp_csample *x = a, *y = b;
	uint64_t kx = key_of(x), ky = key_of(y);

	if (kx != ky)
		return kx < ky ? -1 : 1;
	return x->time < y->time ? -1 : x->time > y->time;
}

/* A range per key, then the samples placed by key: a counting sort. */
static int index_keys(struct rsp_samples *s)
{
	for (size_t i = 0; i < s->nr; i++) {
		struct range *r = rsp_kvec__get(&s->ranges, key_of(&s->v[i]), NULL);

		if (!r)
			return -ENOMEM;
		r->n++;
	}
	return 0;
}

static bool in_time_order(const struct rsp_samples *s)
{
	for (size_t i = 1; i < s->nr; i++)
		if (s->v[i].time < s->v[i - 1].time)
			return false;
	return true;
}

int rsp_samples__seal(struct rsp_samples *s)
{
	struct rsp_csample *v;
	size_t next = 0;

	if (s->sealed)
		return 0;
	s->sealed = true;
	if (!s->nr)
		return 0;
	/* a window yields them in time order; anything else is sorted first */
	if (!in_time_order(s))
		qsort(s->v, s->nr, sizeof(*s->v), cmp_sample);
	if (index_keys(s) || !(v = malloc(s->nr * sizeof(*v))))
		return -ENOMEM;
	for (size_t i = 0; i < rsp_kvec__len(&s->ranges); i++) {
		struct range *r = rsp_kvec__at(&s->ranges, i);

		r->first = next;
		next += r->n;
		r->n = 0;
	}
	for (size_t i = 0; i < s->nr; i++) {
		struct range *r = rsp_kvec__find(&s->ranges, key_of(&s->v[i]));

		v[r->first + r->n++] = s->v[i];
	}
	free(s->v);
	s->v = v;
	s->cap = s->nr;
	return 0;
}

/* Index in @r of the first sample with time >= @t (r->n if none). */
static size_t lower(const struct rsp_samples *s, const struct range *r, uint64_t t)
{
	return rsp_gallop__at_or_above(s->v + r->first, sizeof(s->v[0]),
				       offsetof(struct rsp_csample, time), r->n, t);
}

static const struct range *range_of(const struct rsp_samples *s, uint64_t key)
{
	return s->sealed ? rsp_kvec__find(&s->ranges, key) : NULL;
}

const struct rsp_csample *rsp_samples__range(const struct rsp_samples *s, uint32_t tid,
					     uint64_t from, uint64_t to, size_t *n)
{
	const struct range *r = tid ? range_of(s, tid) : NULL;
	size_t a, b;

	*n = 0;
	if (!r || to < from)
		return NULL;
	a = lower(s, r, from);
	b = to == UINT64_MAX ? r->n : lower(s, r, to + 1);
	if (b <= a)
		return NULL;
	*n = b - a;
	return &s->v[r->first + a];
}

uint64_t rsp_samples__idle_before(const struct rsp_samples *s, uint32_t cpu, uint64_t t,
				  uint64_t after)
{
	const struct range *r = range_of(s, (1ull << 32) | cpu);
	size_t i;

	if (!r)
		return 0;
	i = lower(s, r, t);
	if (!i)
		return 0;
	t = s->v[r->first + i - 1].time;
	return t > after ? t : 0;
}

size_t rsp_samples__count(const struct rsp_samples *s)
{
	return s->nr;
}
