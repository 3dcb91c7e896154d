// SPDX-License-Identifier: LGPL-2.1
/*
 * A stopwatch's calls by caller stack (`rspctl stopwatch show --callers`):
 * the kernel counts calls per (process, stack id) (bpf/stopwatch.bpf.c);
 * rspd symbolizes each stack and adds it here, where rows whose frames name
 * the same functions in the same files become one: what a reader asks is
 * "who calls it", not which process or which byte of the caller.
 *
 * Rows are found by a hash of their frames, then compared whole; a linear
 * scan of hashes is enough for the few thousand rows the kernel's table
 * holds (--stopwatch-callers) and keeps this file free of a second index.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <rsp/stopwatch.h>
#include "internal/hash.h"

struct row {
	struct rsp_sw_caller_row r;
	uint64_t hash;
	char **names, **objects;
};

struct rsp_sw_callers {
	struct row *rows;
	size_t n, cap, max;
	uint64_t calls, dropped;
};

struct rsp_sw_callers *rsp_sw_callers__new(size_t max_rows)
{
	struct rsp_sw_callers *c = calloc(1, sizeof(*c));

	if (c)
		c->max = max_rows;
	return c;
}

static void row_free(struct row *w)
{
	for (unsigned i = 0; i < w->r.nframes; i++) {
		free(w->names[i]);
		free(w->objects[i]);
	}
	free(w->names);
	free(w->objects);
}

void rsp_sw_callers__delete(struct rsp_sw_callers *c)
{
	if (!c)
		return;
	for (size_t i = 0; i < c->n; i++)
		row_free(&c->rows[i]);
	free(c->rows);
	free(c);
}

/* A frame's name: a NULL one is unknown. */
static const char *nm(const char *const *names, unsigned i)
{
	return names[i] ? names[i] : "[unknown]";
}

/* librsp's FNV-1a over a frame's string; a NULL object hashes as a marker of its own. */
static uint64_t str_hash(uint64_t h, const char *s)
{
	if (!s)
		return rsp_hash__u64(h, 0xffu);
	/* then a step for the end of the string: "ab","c" differs from "a","bc" */
	return rsp_hash__u64(rsp_hash__bytes(h, s, strlen(s)), 0);
}

static uint64_t stack_hash(const char *const *names, const char *const *objects, unsigned n)
{
	uint64_t h = RSP_HASH_INIT;

	for (unsigned i = 0; i < n; i++)
		h = str_hash(str_hash(h, nm(names, i)), objects ? objects[i] : NULL);
	return h;
}

static bool str_eq(const char *a, const char *b)
{
	return a == b || (a && b && !strcmp(a, b));
}

static bool same(const struct row *w, const char *const *names, const char *const *objects,
		 unsigned n)
{
	if (w->r.nframes != n)
		return false;
	for (unsigned i = 0; i < n; i++)
		if (strcmp(w->names[i], nm(names, i)) ||
		    !str_eq(w->objects[i], objects ? objects[i] : NULL))
			return false;
	return true;
}

static char *dup_or_null(const char *s, bool *failed)
{
	char *d;

	if (!s)
		return NULL;
	d = strdup(s);
	if (!d)
		*failed = true;
	return d;
}

/* A new row holding copies of the frames. */
static int row_init(struct row *w, const char *const *names, const char *const *objects, unsigned n)
{
	bool failed = false;

	memset(w, 0, sizeof(*w));
	w->names = calloc(n ? n : 1, sizeof(char *));
	w->objects = calloc(n ? n : 1, sizeof(char *));
	if (!w->names || !w->objects) {
		free(w->names);
		free(w->objects);
		return -ENOMEM;
	}
	w->r.nframes = n;
	for (unsigned i = 0; i < n; i++) {
		w->names[i] = dup_or_null(nm(names, i), &failed);
		w->objects[i] = dup_or_null(objects ? objects[i] : NULL, &failed);
	}
	if (failed) {
		row_free(w);
		return -ENOMEM;
	}
	w->r.names = (const char *const *)w->names;
	w->r.objects = (const char *const *)w->objects;
	return 0;
}

int rsp_sw_callers__add(struct rsp_sw_callers *c, const char *const *names,
			const char *const *objects, unsigned nframes, uint64_t count, uint64_t sum)
{
	uint64_t h = stack_hash(names, objects, nframes);
	struct row *w;

	for (size_t i = 0; i < c->n; i++) {
		w = &c->rows[i];
		if (w->hash == h && same(w, names, objects, nframes)) {
			w->r.count += count;
			w->r.sum += sum;
			c->calls += count;
			return 0;
		}
	}
	if (c->n >= c->max) {
		c->dropped += count;
		return -ENOSPC;
	}
	if (c->n == c->cap) {
		size_t cap = c->cap ? c->cap * 2 : 16;
		struct row *r = realloc(c->rows, cap * sizeof(*r));

		if (!r)
			return -ENOMEM;
		c->rows = r;
		c->cap = cap;
	}
	w = &c->rows[c->n];
	if (row_init(w, names, objects, nframes))
		return -ENOMEM;
	w->hash = h;
	w->r.count = count;
	w->r.sum = sum;
	c->n++;
	c->calls += count;
	return 0;
}

static int frames_cmp(const struct row *a, const struct row *b)
{
	unsigned n = a->r.nframes < b->r.nframes ? a->r.nframes : b->r.nframes;

	for (unsigned i = 0; i < n; i++) {
		int d = strcmp(a->names[i], b->names[i]);

		if (d)
			return d;
	}
	return (a->r.nframes > b->r.nframes) - (a->r.nframes < b->r.nframes);
}

static int by_calls(const void *pa, const void *pb)
{
	const struct row *a = pa, *b = pb;

	if (a->r.count != b->r.count)
		return a->r.count < b->r.count ? 1 : -1;
	if (a->r.sum != b->r.sum)
		return a->r.sum < b->r.sum ? 1 : -1;
	return frames_cmp(a, b);
}

void rsp_sw_callers__sort(struct rsp_sw_callers *c)
{
	if (c->n > 1)
		qsort(c->rows, c->n, sizeof(*c->rows), by_calls);
}

size_t rsp_sw_callers__rows(const struct rsp_sw_callers *c)
{
	return c->n;
}

const struct rsp_sw_caller_row *rsp_sw_callers__row(const struct rsp_sw_callers *c, size_t i)
{
	return i < c->n ? &c->rows[i].r : NULL;
}

uint64_t rsp_sw_callers__calls(const struct rsp_sw_callers *c)
{
	return c->calls;
}

uint64_t rsp_sw_callers__dropped(const struct rsp_sw_callers *c)
{
	return c->dropped;
}
