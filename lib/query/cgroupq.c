// SPDX-License-Identifier: LGPL-2.1
/*
 * The cgroup columns of answers and the rows of --by cgroup
 * (internal/cgroupq.h).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <rsp/cgroup.h>
#include "internal/cgroupq.h"

void rsp_cgroupq__json(json_t *o, const struct rsp_maps *m, uint32_t pid, uint64_t time)
{
	const char *path = m ? rsp_maps__cgroup(m, pid, time) : NULL;
	uint32_t ns = m ? rsp_maps__nspid(m, pid, time) : 0;
	char id[RSP_CONTAINER_ID_LEN + 1];

	if (path) {
		json_object_set_new(o, "cgroup", json_string(path));
		if (rsp_cgroup__container_id(path, id, NULL))
			json_object_set_new(o, "container", json_string(id));
	}
	if (ns)
		json_object_set_new(o, "nspid", json_integer(ns));
}

const char *rsp_cgroupq__text(const struct rsp_maps *m, uint32_t pid, uint64_t time, unsigned width,
			      char *buf, size_t size)
{
	const char *path = m ? rsp_maps__cgroup(m, pid, time) : NULL;
	uint32_t ns = m ? rsp_maps__nspid(m, pid, time) : 0;
	char shortp[256];

	buf[0] = '\0';
	if (path)
		rsp_cgroup__short(path, width, shortp, sizeof(shortp));
	if (path && ns && ns != pid)
		snprintf(buf, size, "%s ns:%u", shortp, ns);
	else if (path)
		snprintf(buf, size, "%s", shortp);
	else if (ns && ns != pid)
		snprintf(buf, size, "ns:%u", ns);
	return buf;
}

int rsp_cgroupq_by__add(struct rsp_cgroupq_by *b, const char *cgroup, uint64_t samples,
			uint64_t kernel, uint64_t period, bool new_thread)
{
	struct rsp_cgroupq_row *r = NULL;

	/* linear: a query's cgroups are few beside its rows */
	for (size_t i = 0; i < b->n && !r; i++)
		if (!strcmp(b->rows[i].cgroup, cgroup))
			r = &b->rows[i];
	if (!r) {
		if (b->n == b->cap) {
			size_t cap = b->cap ? 2 * b->cap : 16;
			void *v = realloc(b->rows, cap * sizeof(*b->rows));

			if (!v)
				return -ENOMEM;
			b->rows = v;
			b->cap = cap;
		}
		r = &b->rows[b->n++];
		*r = (struct rsp_cgroupq_row){.cgroup = cgroup};
	}
	r->samples += samples;
	r->kernel += kernel;
	r->period += period;
	r->threads += new_thread;
	return 0;
}

static int cmp_rows(const void *a, const void *b)
{
	const struct rsp_cgroupq_row *x = a, *y = b;

	if (x->samples != y->samples)
		return x->samples > y->samples ? -1 : 1;
	if (x->period != y->period)
		return x->period > y->period ? -1 : 1;
	return strcmp(x->cgroup, y->cgroup);
}

void rsp_cgroupq_by__sort(struct rsp_cgroupq_by *b)
{
	if (b->n)
		qsort(b->rows, b->n, sizeof(*b->rows), cmp_rows);
}

void rsp_cgroupq_by__exit(struct rsp_cgroupq_by *b)
{
	free(b->rows);
	*b = (struct rsp_cgroupq_by){0};
}
