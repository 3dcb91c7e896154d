// SPDX-License-Identifier: LGPL-2.1
/* A flat profile of cpu-clock samples: see rsp/flatprof.h. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <rsp/flatprof.h>
#include <rsp/maps.h>
#include <rsp/pass.h>
#include <rsp/record.h>
#include "internal/hash.h"
#include "internal/vec.h"

struct rsp_flatprof {
	struct rsp_flatprof_opts o;
	const struct rsp_schema *schema;
	struct rsp_kvec rows;	/* row key hash -> struct rsp_flatprof_row */
	struct rsp_kvec procs;	/* pid -> struct rsp_flatprof_proc */
	struct rsp_kvec stacks; /* frames hash -> struct rsp_flatprof_stack */
	struct rsp_flatprof_totals tot;
	bool failed;
};

/*
 * Rows are keyed by a 64-bit hash of what makes a row (the symbolizer's
 * name and object pointers, which are interned, the kind, hidden, and why
 * a place is unnamed): equal keys, equal rows. Two different rows would
 * have to collide in 64 bits to merge.
 */
static uint64_t row_key(const struct rsp_flatprof_row *r)
{
	uint64_t h = rsp_hash__u64(RSP_HASH_INIT, (uintptr_t)r->name);

	h = rsp_hash__u64(h, (uintptr_t)r->object);
	h = rsp_hash__u64(h, (uint64_t)r->kind << 1 | r->hidden);
	if (!r->name)
		h = rsp_hash__u64(h, (uintptr_t)r->why);
	return rsp_hash__key(rsp_hash__mix(h));
}

static int add_row(struct rsp_flatprof *p, const struct rsp_flatprof_row *key, uint64_t period)
{
	bool added;
	struct rsp_flatprof_row *r = rsp_kvec__get(&p->rows, row_key(key), &added);

	if (!r)
		return -ENOMEM;
	if (added)
		*r = *key;
	r->samples++;
	r->period += period;
	return 0;
}

/* The row of @pid; access is decided once per process (it may read /proc). */
static struct rsp_flatprof_proc *proc_row(struct rsp_flatprof *p, uint32_t pid)
{
	bool added;
	struct rsp_flatprof_proc *pr = rsp_kvec__get(&p->procs, pid, &added);

	if (pr && added) {
		pr->pid = pid;
		pr->hidden = p->o.hidden && p->o.hidden(p->o.hidden_ctx, pid);
	}
	return pr;
}

/*
 * A sample the requester may not see at all (perf_event_paranoid >= 1:
 * only their own processes): another user's, or the idle task's.
 */
static bool left_out(const struct rsp_flatprof *p, uint32_t pid)
{
	return p->o.own_only && (!pid || (p->o.hidden && p->o.hidden(p->o.hidden_ctx, pid)));
}

static unsigned sym_flags(const struct rsp_flatprof *p, bool hidden)
{
	return (hidden ? RSP_SYM_HIDE_USER : 0) | (p->o.hide_kernel ? RSP_SYM_HIDE_KERNEL : 0);
}

/* The kernel part of the callchain (with its markers), then the best user part. */
static uint32_t whole_stack(struct rsp_flatprof *p, const struct rsp_sample *smp, bool hidden,
			    uint64_t *ips, enum rsp_unwind_method *m)
{
	uint32_t n = 0;
	int u;

	*m = RSP_UNWIND_NONE;
	for (uint64_t i = 0; i < smp->nr_callchain && n < RSP_FLATPROF_FRAMES; i++) {
		if (smp->callchain[i] == PERF_CONTEXT_USER)
			break;
		ips[n++] = smp->callchain[i];
	}
	if (n + 2 > RSP_FLATPROF_FRAMES)
		return n;
	ips[n++] = PERF_CONTEXT_USER;
	u = rsp_unwind__user_chain(hidden ? NULL : rsp_symbolizer__unwinder(p->o.sym), p->schema,
				   smp, ips + n, (int)(RSP_FLATPROF_FRAMES - n), m);
	return u ? n + (uint32_t)u : n - 1;
}

static uint64_t frames_hash(const struct rsp_frame *f, int n)
{
	uint64_t h = RSP_HASH_INIT;

	for (int i = 0; i < n; i++) {
		h = rsp_hash__u64(h, f[i].sym.name ? (uintptr_t)f[i].sym.name : f[i].addr);
		h = rsp_hash__u64(h, (uintptr_t)f[i].sym.object);
	}
	return rsp_hash__key(h);
}

static int add_stack(struct rsp_flatprof *p, const struct rsp_sample *smp, bool hidden)
{
	uint64_t ips[RSP_FLATPROF_FRAMES];
	struct rsp_frame f[RSP_FLATPROF_FRAMES];
	enum rsp_unwind_method m;
	uint32_t nr = whole_stack(p, smp, hidden, ips, &m);
	int n = rsp_symbolizer__callchain(p->o.sym, smp->pid, smp->time, ips, nr,
					  sym_flags(p, hidden), f, RSP_FLATPROF_FRAMES);
	uint64_t h = frames_hash(f, n);
	bool added;

	if (p->o.stacks_by_thread)
		h = rsp_hash__key(
			rsp_hash__mix(rsp_hash__u64(h, (uint64_t)smp->pid << 32 | smp->tid)));
	struct rsp_flatprof_stack *r = rsp_kvec__get(&p->stacks, h, &added);

	p->tot.by[m]++;
	if (!r)
		return -ENOMEM;
	if (added) {
		r->hash = h;
		r->nr = (uint32_t)n;
		if (p->o.stacks_by_thread) {
			r->pid = smp->pid;
			r->tid = smp->tid;
		}
		memcpy(r->frames, f, (size_t)n * sizeof(f[0]));
	}
	r->samples++;
	r->by[m]++;
	return 0;
}

/* One cpu-clock sample: count it for its process, and its function. */
static int add_sample(struct rsp_flatprof *p, const struct perf_event_header *h,
		      const struct rsp_sample *smp)
{
	bool kernel = (h->misc & PERF_RECORD_MISC_CPUMODE_MASK) == PERF_RECORD_MISC_KERNEL;
	struct rsp_flatprof_proc *pr;
	struct rsp_flatprof_row key;
	struct rsp_sym sym;

	if (left_out(p, smp->pid))
		return 0;
	pr = proc_row(p, smp->pid);
	if (!pr)
		return -ENOMEM;
	pr->samples++;
	pr->kernel += kernel;
	if (smp->time >= pr->last)
		pr->last = smp->time;
	if (p->o.self_pid && smp->pid == p->o.self_pid)
		p->tot.self_samples++;
	if (p->o.pid >= 0 && smp->pid != (uint32_t)p->o.pid)
		return 0;
	p->tot.samples++;
	p->tot.kernel += kernel;
	p->tot.period += smp->period;
	if (!p->tot.first)
		p->tot.first = smp->time;
	p->tot.last = smp->time;
	rsp_symbolizer__resolve(p->o.sym, smp->pid, smp->time, smp->ip, sym_flags(p, pr->hidden),
				&sym);
	key = (struct rsp_flatprof_row){.name = sym.name,
					.object = sym.object,
					.why = sym.name ? NULL : sym.why,
					.kind = sym.kind,
					.match = sym.match,
					.hidden = sym.hidden};
	if (p->o.stacks && add_stack(p, smp, pr->hidden))
		return -ENOMEM;
	return add_row(p, &key, smp->period);
}

static void on_sample(void *ctx, const struct rsp_sample *smp, const struct perf_event_header *rec)
{
	struct rsp_flatprof *p = ctx;

	if (!p->failed && add_sample(p, rec, smp))
		p->failed = true;
}

static int cmp_rows(const void *a, const void *b)
{
	const struct rsp_flatprof_row *x = a, *y = b;

	if (x->samples != y->samples)
		return x->samples > y->samples ? -1 : 1;
	if (!x->name || !y->name)
		return !x->name - !y->name;
	return strcmp(x->name, y->name);
}

static int cmp_procs(const void *a, const void *b)
{
	const struct rsp_flatprof_proc *x = a, *y = b;

	if (x->samples != y->samples)
		return x->samples > y->samples ? -1 : 1;
	return x->pid < y->pid ? -1 : x->pid > y->pid;
}

static int cmp_str(const char *a, const char *b)
{
	return strcmp(a ? a : "", b ? b : "");
}

/*
 * Heaviest first; ties by their frames' names, objects, then addresses, so
 * that the order is the same live and offline (the hash is of pointers).
 */
static int cmp_stacks(const void *a, const void *b)
{
	const struct rsp_flatprof_stack *x = a, *y = b;

	if (x->samples != y->samples)
		return x->samples > y->samples ? -1 : 1;
	for (uint32_t i = 0; i < x->nr && i < y->nr; i++) {
		const struct rsp_frame *f = &x->frames[i], *g = &y->frames[i];
		int c = cmp_str(f->sym.name, g->sym.name);

		if (!c)
			c = cmp_str(f->sym.object, g->sym.object);
		if (c)
			return c;
		if (f->addr != g->addr)
			return f->addr < g->addr ? -1 : 1;
	}
	return x->nr < y->nr ? -1 : x->nr > y->nr;
}

/*
 * Sorted, and each process named as it was last seen (a child sampled
 * between its fork and its exec still had the parent's name then). The
 * vectors' maps are not used after this: sorting moves the items.
 */
static void finish(struct rsp_flatprof *p)
{
	struct rsp_maps *maps = rsp_symbolizer__maps(p->o.sym);

	for (size_t i = 0; i < rsp_kvec__len(&p->procs); i++) {
		struct rsp_flatprof_proc *pr = rsp_kvec__at(&p->procs, i);

		if (!pr->hidden)
			pr->comm = rsp_maps__comm_at(maps, pr->pid, pr->last);
	}
	if (p->rows.n > 1)
		qsort(p->rows.items, p->rows.n, p->rows.size, cmp_rows);
	if (p->procs.n > 1)
		qsort(p->procs.items, p->procs.n, p->procs.size, cmp_procs);
	if (p->stacks.n > 1)
		qsort(p->stacks.items, p->stacks.n, p->stacks.size, cmp_stacks);
	rsp_u64map__exit(&p->rows.map);
	rsp_u64map__exit(&p->procs.map);
	rsp_u64map__exit(&p->stacks.map);
}

struct rsp_flatprof *rsp_flatprof__new(const struct rsp_schema *schema,
				       const struct rsp_wsnap *snap,
				       const struct rsp_flatprof_opts *o)
{
	struct rsp_flatprof *p = calloc(1, sizeof(*p));
	struct rsp_timeline_ops ops = {.sample = on_sample};
	struct rsp_pass_opts po = {
		.from = o->from, .to = o->to, .flags = RSP_PASS_SAMPLES_ONLY, .ops = &ops};

	if (!p)
		return NULL;
	p->o = *o;
	p->schema = schema;
	rsp_kvec__init(&p->rows, sizeof(struct rsp_flatprof_row));
	rsp_kvec__init(&p->procs, sizeof(struct rsp_flatprof_proc));
	rsp_kvec__init(&p->stacks, sizeof(struct rsp_flatprof_stack));
	po.ctx = p;
	if (rsp_pass__run(schema, snap, &po, NULL) || p->failed) {
		rsp_flatprof__delete(p);
		errno = ENOMEM;
		return NULL;
	}
	finish(p);
	return p;
}

void rsp_flatprof__delete(struct rsp_flatprof *p)
{
	if (!p)
		return;
	rsp_kvec__exit(&p->rows);
	rsp_kvec__exit(&p->procs);
	rsp_kvec__exit(&p->stacks);
	free(p);
}

const struct rsp_flatprof_totals *rsp_flatprof__totals(const struct rsp_flatprof *p)
{
	return &p->tot;
}

const struct rsp_flatprof_row *rsp_flatprof__rows(const struct rsp_flatprof *p, size_t *n)
{
	*n = p->rows.n;
	return p->rows.items;
}

const struct rsp_flatprof_proc *rsp_flatprof__procs(const struct rsp_flatprof *p, size_t *n)
{
	*n = p->procs.n;
	return p->procs.items;
}

const struct rsp_flatprof_stack *rsp_flatprof__stacks(const struct rsp_flatprof *p, size_t *n)
{
	*n = p->stacks.n;
	return p->stacks.items;
}

const struct rsp_flatprof_proc *rsp_flatprof__proc(const struct rsp_flatprof *p, uint32_t pid)
{
	const struct rsp_flatprof_proc *v = p->procs.items;

	for (size_t i = 0; i < p->procs.n; i++)
		if (v[i].pid == pid)
			return &v[i];
	return NULL;
}
