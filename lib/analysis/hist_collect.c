// SPDX-License-Identifier: LGPL-2.1
/*
 * Reading the profile store: a query's profiles collected from the shards' tables
 * and time slices into a set (rsp_hist_store__collect()), without stopping the writers.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <rsp/hist.h>
#include "internal/hist.h"
#include "internal/hist_store.h"

struct collect {
	struct rsp_hist_store *st;
	const struct rsp_hist_query *q;
	struct rsp_hist_set *set;
	uint64_t first_no, nr_rows; /* ranged */
	char names[RSP_HIST_MAX_OPS][64];
	bool named[RSP_HIST_MAX_OPS];
};

static bool op_wanted(const struct rsp_hist_query *q, uint64_t op)
{
	if (!q->ops)
		return true;
	for (size_t i = 0; i < q->nr_ops; i++) {
		const struct rsp_hist_opsel *o = &q->ops[i];

		if (o->kind == RSP_HIST_OP_KIND(op) && (o->any || o->arg == RSP_HIST_OP_ARG(op)))
			return true;
	}
	return false;
}

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return x < y ? -1 : x > y;
}

static bool excluded(const struct rsp_hist_query *q, uint32_t pid)
{
	return q->nr_exclude && bsearch(&pid, q->exclude, q->nr_exclude, sizeof(pid), cmp_u32);
}

/* The subject a profile key shows as under @q, or false if @q excludes it. */
static bool subject_of(const struct rsp_hist_query *q, uint64_t key, uint32_t tgid,
		       const char *comm, struct rsp_hist_subject *out)
{
	unsigned kind = PKEY_KIND(key);
	uint32_t id = PKEY_ID(key);

	if ((kind == RSP_HSUBJ_PROCESS && excluded(q, id)) ||
	    (kind == RSP_HSUBJ_THREAD && excluded(q, tgid)))
		return false;

	memset(out, 0, sizeof(*out));
	out->kind = kind;
	switch (kind) {
	case RSP_HSUBJ_PROCESS:
		out->pid = id;
		memcpy(out->comm, comm, RSP_HIST_COMM_LEN);
		if (q->pid >= 0 && id != (uint32_t)q->pid)
			return false;
		if (q->comm && strcmp(comm, q->comm))
			return false;
		if (q->subjects & (1u << RSP_HSUBJ_PROCESS))
			return true;
		if (!(q->subjects & (1u << RSP_HSUBJ_COMM)) || !q->comm)
			return false;
		memset(out, 0, sizeof(*out));
		out->kind = RSP_HSUBJ_COMM;
		memcpy(out->comm, comm, RSP_HIST_COMM_LEN);
		return true;
	case RSP_HSUBJ_THREAD:
		out->pid = tgid;
		out->tid = id;
		memcpy(out->comm, comm, RSP_HIST_COMM_LEN);
		if (q->pid >= 0 && tgid != (uint32_t)q->pid)
			return false;
		if (q->tid >= 0 && id != (uint32_t)q->tid)
			return false;
		return q->subjects & (1u << RSP_HSUBJ_THREAD);
	default:
		return kind < RSP_HSUBJ__NR && (q->subjects & (1u << kind));
	}
}

static const char *collect_op_name(struct collect *c, unsigned opidx)
{
	if (!c->named[opidx]) {
		rsp_hist_store__op_name(c->st, LD(c->st->ops[opidx].key), c->names[opidx],
					sizeof(c->names[opidx]));
		c->named[opidx] = true;
	}
	return c->names[opidx];
}

struct counts {
	uint64_t key, count, sum, min, max, offcpu;
	double sq;
	uint32_t tgid;
	char comm[RSP_HIST_COMM_LEN];
	uint64_t b[RSP_HIST_MAX_BUCKETS];
};

static void read_slot(const struct rsp_hist_shard *sh, struct slot *s, struct counts *c)
{
	_Atomic uint64_t *b = slot_b(s);
	uint32_t q;

	do {
		q = seq_read_begin(&s->seq);
		c->key = LD(s->key);
		c->tgid = LD(s->tgid);
		load_comm(s->comm, c->comm);
		c->count = LD(s->count);
		c->sum = LD(s->sum);
		c->sq = sq_get(LD(s->sq));
		c->offcpu = LD(s->offcpu);
		c->min = LD(s->min);
		c->max = LD(s->max);
		for (unsigned i = 0; i < sh->nb; i++)
			c->b[i] = LD(b[i]);
	} while (seq_read_retry(&s->seq, q));
}

static void read_entry(const struct rsp_hist_shard *sh, struct sentry *e, struct counts *c)
{
	_Atomic uint32_t *b = entry_b(e);
	uint32_t q;

	do {
		q = seq_read_begin(&e->seq);
		c->key = LD(e->key);
		c->tgid = LD(e->tgid);
		load_comm(e->comm, c->comm);
		c->count = LD(e->count);
		c->sum = LD(e->sum);
		c->sq = sq_get(LD(e->sq));
		c->offcpu = LD(e->offcpu);
		c->min = LD(e->min);
		c->max = LD(e->max);
		for (unsigned i = 0; i < sh->nb; i++)
			c->b[i] = LD(b[i]);
	} while (seq_read_retry(&e->seq, q));
}

static int row_alloc(struct rsp_hist_profile *p, uint64_t nr, uint64_t first_no, uint64_t slice_ns,
		     unsigned nb)
{
	uint64_t *mem;

	p->rows = calloc(nr, sizeof(*p->rows));
	mem = calloc(nr * nb, sizeof(uint64_t));
	if (!p->rows || !mem) {
		free(p->rows);
		free(mem);
		p->rows = NULL;
		return -ENOMEM;
	}
	p->nr_rows = nr;
	for (uint64_t i = 0; i < nr; i++) {
		p->rows[i].start = (first_no + i) * slice_ns;
		p->rows[i].buckets = mem + i * nb;
	}
	return 0;
}

/* Add @c (a slot, or an entry of slice @no) to the set if @q selects it. */
static int collect_one(struct collect *c, const struct counts *k, uint64_t no)
{
	struct rsp_hist_subject subj;
	struct rsp_hist_profile *p;
	unsigned opidx = PKEY_OP(k->key), nb = c->st->nb;
	uint64_t op = LD(c->st->ops[opidx].key);
	const char *name;

	if (!k->count || !op_wanted(c->q, op) || !subject_of(c->q, k->key, k->tgid, k->comm, &subj))
		return 0;
	name = collect_op_name(c, opidx);
	if (c->q->only && !rsp_hist_set__find(c->q->only, &subj, name))
		return 0;
	p = rsp_hist_set__get(c->set, &subj, name);
	if (!p)
		return -ENOMEM;
	p->op = op;
	/* Slices come oldest first: a subject is named as in the newest (after exec). */
	memcpy(p->subject.comm, subj.comm, sizeof(subj.comm));
	if (!p->count || k->min < p->min)
		p->min = k->min;
	if (k->max > p->max)
		p->max = k->max;
	p->count += k->count;
	p->sum += k->sum;
	p->sumsq += k->sq;
	p->offcpu += k->offcpu;
	for (unsigned i = 0; i < nb; i++)
		p->buckets[i] += k->b[i];
	if (c->q->rows && no != NONE) {
		struct rsp_hist_row *r;

		if (!p->rows && row_alloc(p, c->nr_rows, c->first_no, c->st->cfg.slice_ns, nb))
			return -ENOMEM;
		r = &p->rows[no - c->first_no];
		r->count += k->count;
		r->sum += k->sum;
		for (unsigned i = 0; i < nb; i++)
			r->buckets[i] += k->b[i];
	}
	return 0;
}

static int collect_slots(struct collect *c, struct rsp_hist_shard *sh)
{
	uint32_t used = atomic_load_explicit(&sh->used, memory_order_acquire);
	struct counts *k = malloc(sizeof(*k));
	int ret = 0;

	if (!k)
		return -ENOMEM;
	for (uint32_t i = 0; i < used && !ret; i++) {
		struct slot *s = slot_at(sh, i);

		/* Eviction and reuse happen under the lock we hold: keys are current. */
		read_slot(sh, s, k);
		ret = collect_one(c, k, NONE);
	}
	free(k);
	return ret;
}

static int collect_slices(struct collect *c, struct rsp_hist_shard *sh, uint64_t last_no)
{
	struct counts *k = malloc(sizeof(*k));
	int ret = 0;

	if (!k)
		return -ENOMEM;
	/* Oldest first (the ring's order would depend on where it wraps). */
	for (uint64_t want = c->first_no; want <= last_no && !ret; want++) {
		struct slice *s = &sh->slices[want % c->st->cfg.nr_slices];
		uint64_t no = LD(s->no);
		uint32_t nr = atomic_load_explicit(&s->nr, memory_order_acquire);

		if (no != want)
			continue;
		c->set->overflow += LD(s->overflow);
		for (uint32_t j = 0; j < nr && !ret; j++) {
			struct sentry *e = entry_at(sh, s, j);

			/*
			 * Most entries are of other operations: skip them before
			 * copying their buckets (an entry's key is set before the
			 * slice's nr counts it, and never changes).
			 */
			if (!op_wanted(c->q, LD(c->st->ops[PKEY_OP(LD(e->key))].key)))
				continue;
			read_entry(sh, e, k);
			ret = collect_one(c, k, no);
		}
	}
	free(k);
	return ret;
}

/* The oldest and newest slice numbers any shard keeps; false if none. */
static bool slice_span(const struct rsp_hist_store *st, uint64_t *oldest, uint64_t *newest)
{
	*oldest = NONE;
	*newest = 0;
	for (unsigned i = 0; i < st->cfg.nr_shards; i++)
		for (unsigned j = 0; j < st->cfg.nr_slices; j++) {
			uint64_t no = LD(st->shards[i]->slices[j].no);

			if (no == NONE)
				continue;
			if (no < *oldest)
				*oldest = no;
			if (no > *newest)
				*newest = no;
		}
	return *oldest != NONE;
}

static void fill_notes(struct collect *c)
{
	struct rsp_hist_store *st = c->st;
	struct rsp_hist_stats s;

	rsp_hist_store__stats(st, &s);
	c->set->since = s.first;
	if (!c->q->ranged)
		c->set->evictions = s.evictions;
	c->set->progress = s.progress;
	c->set->gaps = s.gaps;
	c->set->gap_ns = s.gap_ns;
	c->set->slice_ns = st->cfg.slice_ns;
	for (size_t i = 0; i < c->set->n; i++) {
		struct rsp_hist_profile *p = &c->set->v[i];
		int idx;

		if (p->subject.kind != RSP_HSUBJ_SYSTEM)
			continue;
		idx = op_lookup(st, p->op);
		if (idx < 0)
			continue;
		p->incomplete = LD(st->ops[idx].incomplete);
		p->open = LD(st->ops[idx].open);
		/* "of these": cumulative like the table, not per slice */
		if (!c->q->ranged)
			p->inferred = LD(st->ops[idx].inferred);
	}
}

/* System profiles of ops that only have incomplete operations (nothing observed). */
static int add_unobserved(struct collect *c)
{
	struct rsp_hist_store *st = c->st;
	uint32_t nr = atomic_load_explicit(&st->nr_ops, memory_order_acquire);
	struct rsp_hist_subject sys = {.kind = RSP_HSUBJ_SYSTEM};

	if (!(c->q->subjects & (1u << RSP_HSUBJ_SYSTEM)) || c->q->ranged)
		return 0;
	for (uint32_t i = 0; i < nr; i++) {
		uint64_t op = LD(st->ops[i].key);

		if ((!LD(st->ops[i].incomplete) && !LD(st->ops[i].open)) || !op_wanted(c->q, op))
			continue;
		if (c->q->only && !rsp_hist_set__find(c->q->only, &sys, collect_op_name(c, i)))
			continue;
		struct rsp_hist_profile *p = rsp_hist_set__get(c->set, &sys, collect_op_name(c, i));

		if (!p)
			return -ENOMEM;
		p->op = op;
	}
	return 0;
}

static int range_check(struct collect *c, uint64_t *last_no, struct rsp_buf *err)
{
	const struct rsp_hist_query *q = c->q;
	uint64_t ns = c->st->cfg.slice_ns, oldest, newest;
	bool any = slice_span(c->st, &oldest, &newest);

	if (q->to < q->from) {
		rsp_buf__printf(err, "hist: the range ends (%.3f) before it starts (%.3f)",
				(double)q->to / 1e9, (double)q->from / 1e9);
		return -ERANGE;
	}
	c->first_no = q->from / ns;
	*last_no = q->to / ns;
	if (!any || *last_no < oldest || c->first_no > newest) {
		rsp_buf__printf(err,
				"hist: no time slices in %.3f .. %.3f; rspd keeps %u slices of "
				"%.3g s%s (raise --hist-slices to keep more)",
				(double)q->from / 1e9, (double)q->to / 1e9, c->st->cfg.nr_slices,
				(double)ns / 1e9,
				!any		       ? " and has none yet"
				: c->first_no > newest ? ", none that recent"
						       : ", none that old");
		return -ERANGE;
	}
	if (c->first_no < oldest) {
		c->set->clipped = true;
		c->first_no = oldest;
	}
	if (*last_no > newest)
		*last_no = newest;
	c->nr_rows = *last_no - c->first_no + 1;
	c->set->ranged = true;
	c->set->from = c->first_no * ns;
	c->set->to = (*last_no + 1) * ns;
	return 0;
}

int rsp_hist_store__collect(struct rsp_hist_store *st, const struct rsp_hist_query *q,
			    struct rsp_hist_set **out, struct rsp_buf *err)
{
	struct collect *c = calloc(1, sizeof(*c));
	uint64_t last_no = 0;
	int ret = 0;

	*out = NULL;
	if (!c)
		return -ENOMEM;
	c->st = st;
	c->q = q;
	c->set = rsp_hist_set__new(st->cfg.resolution);
	if (!c->set) {
		free(c);
		return -ENOMEM;
	}
	for (unsigned i = 0; i < st->cfg.nr_shards && !ret; i++) {
		struct rsp_hist_shard *sh = st->shards[i];

		pthread_mutex_lock(&sh->lock);
		if (q->ranged && i == 0)
			ret = range_check(c, &last_no, err);
		if (!ret)
			ret = q->ranged ? collect_slices(c, sh, last_no) : collect_slots(c, sh);
		pthread_mutex_unlock(&sh->lock);
	}
	if (!ret)
		ret = add_unobserved(c);
	if (!ret) {
		fill_notes(c);
		*out = c->set;
	} else {
		rsp_hist_set__delete(c->set);
	}
	free(c);
	return ret;
}
