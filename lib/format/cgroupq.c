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

bool rsp_cgroupq__line(const struct rsp_maps *m, uint32_t pid, uint64_t time, struct rsp_buf *out)
{
	const char *path = m ? rsp_maps__cgroup(m, pid, time) : NULL, *rt;
	uint32_t ns = m ? rsp_maps__nspid(m, pid, time) : 0;
	char id[RSP_CONTAINER_ID_LEN + 1];

	if (path)
		rsp_buf__printf(out, "cgroup %s", path);
	if (path && rsp_cgroup__container_id(path, id, &rt))
		rsp_buf__printf(out, ", %s container %.12s", rt, id);
	if (ns && ns != pid)
		rsp_buf__printf(out, "%spid %u in its pid namespace", path ? ", " : "", ns);
	return path || (ns && ns != pid);
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

/* ---- hist --by cgroup ------------------------------------------------------ */

static int by_sum_desc(const void *a, const void *b)
{
	const struct rsp_cgroupq_rank *x = a, *y = b;

	if (x->sum != y->sum)
		return x->sum > y->sum ? -1 : 1;
	return strcmp(x->name, y->name);
}

/* The group of one profile of @in before the cut; NULL: not a process's. */
static const char *profile_group(const struct rsp_hist_profile *p,
				 const char *(*group_of)(void *, uint32_t), void *ctx)
{
	if (p->subject.kind == RSP_HSUBJ_OTHER_PROCESS)
		return RSP_CGROUPQ_OTHER_PROCESSES;
	if (p->subject.kind != RSP_HSUBJ_PROCESS)
		return NULL;
	return group_of(ctx, p->subject.pid);
}

long rsp_cgroupq__rank(const struct rsp_hist_set *in,
		       const char *(*name_of)(void *ctx, const struct rsp_hist_profile *p),
		       void *ctx, struct rsp_cgroupq_rank **out)
{
	struct rsp_cgroupq_rank *v = calloc(in->n ? in->n : 1, sizeof(*v));
	size_t n = 0;

	if (!v)
		return -ENOMEM;
	for (size_t i = 0; i < in->n; i++) {
		const char *name = name_of(ctx, &in->v[i]);
		size_t k;

		if (!name)
			continue;
		/* linear: a query's cgroups are few beside its profiles */
		for (k = 0; k < n && strcmp(v[k].name, name); k++)
			;
		if (k == n)
			v[n++] = (struct rsp_cgroupq_rank){.name = name};
		v[k].sum += in->v[i].sum;
	}
	if (n)
		qsort(v, n, sizeof(*v), by_sum_desc);
	*out = v;
	return (long)n;
}

unsigned rsp_cgroupq__rank_index(const struct rsp_cgroupq_rank *v, size_t n, unsigned top,
				 const char *name)
{
	for (size_t k = 0; k < n && k < top; k++)
		if (!strcmp(v[k].name, name))
			return (unsigned)k;
	return top;
}

struct group_ctx {
	const char *(*group_of)(void *, uint32_t);
	void *ctx;
};

/* The real cgroups (paths) are ranked; "(unknown)", "(other user)" are not. */
static const char *ranked_group(void *ctx, const struct rsp_hist_profile *p)
{
	const struct group_ctx *g = ctx;
	const char *name = profile_group(p, g->group_of, g->ctx);

	return name && name[0] == '/' ? name : NULL;
}

static int merge_into(struct rsp_hist_set *s, const char *group, const struct rsp_hist_profile *p)
{
	struct rsp_hist_subject subj = {.kind = RSP_HSUBJ_CGROUP, .cgroup = group};
	struct rsp_hist_profile *d = rsp_hist_set__get(s, &subj, p->op_name);

	if (!d)
		return -ENOMEM;
	d->op = p->op;
	snprintf(d->op_label, sizeof(d->op_label), "%s", p->op_label);
	return rsp_hist_profile__merge(d, p);
}

static void copy_range(struct rsp_hist_set *s, const struct rsp_hist_set *in)
{
	s->ranged = in->ranged;
	s->from = in->from;
	s->to = in->to;
	s->slice_ns = in->slice_ns;
	s->clipped = in->clipped;
	s->overflow = in->overflow;
	s->evictions = in->evictions;
	s->cut = in->cut;
	s->gaps = in->gaps;
	s->gap_ns = in->gap_ns;
	s->since = in->since;
	s->progress = in->progress;
}

/* A cgroup profile's path (rsp_cgroupq__cut()'s ranking), or NULL. */
static const char *cgroup_path(void *ctx, const struct rsp_hist_profile *p)
{
	(void)ctx;
	return p->subject.kind == RSP_HSUBJ_CGROUP && p->subject.cgroup &&
			       p->subject.cgroup[0] == '/'
		       ? p->subject.cgroup
		       : NULL;
}

/* @in with the cgroups outside the first @top of @v merged into "(other cgroups)". */
static int cut_one(const struct rsp_hist_set *in, const struct rsp_cgroupq_rank *v, size_t n,
		   unsigned top, struct rsp_hist_set **out)
{
	struct rsp_hist_set *o = rsp_hist_set__new(in->resolution);
	int ret = o ? 0 : -ENOMEM;

	for (size_t i = 0; !ret && i < in->n; i++) {
		const char *g = in->v[i].subject.cgroup;

		if (in->v[i].subject.kind != RSP_HSUBJ_CGROUP || !g)
			continue;
		if (g[0] == '/' && rsp_cgroupq__rank_index(v, n, top, g) == top)
			g = RSP_CGROUPQ_OTHER_CGROUPS;
		ret = merge_into(o, g, &in->v[i]);
	}
	if (ret) {
		rsp_hist_set__delete(o);
		return ret;
	}
	copy_range(o, in);
	*out = o;
	return 0;
}

int rsp_cgroupq__cut(struct rsp_hist_set **a, struct rsp_hist_set **b, unsigned top)
{
	struct rsp_cgroupq_rank *va = NULL, *vb = NULL, *v;
	struct rsp_hist_set *oa = NULL, *ob = NULL;
	long na = rsp_cgroupq__rank(*a, cgroup_path, NULL, &va);
	long nb = na < 0 ? -ENOMEM : rsp_cgroupq__rank(*b, cgroup_path, NULL, &vb);
	size_t n = 0;
	int ret;

	v = nb < 0 ? NULL : calloc((size_t)(na + nb) + 1, sizeof(*v));
	if (!v) {
		free(va);
		free(vb);
		return -ENOMEM;
	}
	/* the union's sums: a cgroup ranks by both sides together */
	for (long i = 0; i < na + nb; i++) {
		const struct rsp_cgroupq_rank *r = i < na ? &va[i] : &vb[i - na];
		size_t k;

		for (k = 0; k < n && strcmp(v[k].name, r->name); k++)
			;
		if (k == n)
			v[n++] = (struct rsp_cgroupq_rank){.name = r->name};
		v[k].sum += r->sum;
	}
	if (n)
		qsort(v, n, sizeof(*v), by_sum_desc);
	/* the names in v are the sides' own: both cut before either goes */
	ret = cut_one(*a, v, n, top, &oa);
	if (!ret)
		ret = cut_one(*b, v, n, top, &ob);
	free(v);
	free(va);
	free(vb);
	if (ret) {
		rsp_hist_set__delete(oa);
		return ret;
	}
	rsp_hist_set__delete(*a);
	rsp_hist_set__delete(*b);
	*a = oa;
	*b = ob;
	return 0;
}

int rsp_cgroupq__hist(const struct rsp_hist_set *in, unsigned top,
		      const char *(*group_of)(void *ctx, uint32_t pid), void *ctx,
		      struct rsp_hist_set **out)
{
	struct rsp_hist_set *s = rsp_hist_set__new(in->resolution);
	struct rsp_cgroupq_rank *v = NULL;
	struct group_ctx gc = {.group_of = group_of, .ctx = ctx};
	long n = s ? rsp_cgroupq__rank(in, ranked_group, &gc, &v) : -ENOMEM;
	uint64_t cut = 0;
	int ret = n < 0 ? (int)n : 0;

	for (size_t i = 0; !ret && i < in->n; i++) {
		const char *g = profile_group(&in->v[i], group_of, ctx);

		if (!g)
			continue;
		if (g[0] == '/' && rsp_cgroupq__rank_index(v, (size_t)n, top, g) == top) {
			g = RSP_CGROUPQ_OTHER_CGROUPS;
			cut++;
		}
		ret = merge_into(s, g, &in->v[i]);
	}
	free(v);
	if (ret) {
		rsp_hist_set__delete(s);
		return ret;
	}
	copy_range(s, in);
	/* cut alone: a diff against another cut says a cgroup missing there may be in it */
	s->cut += cut;
	*out = s;
	return 0;
}
