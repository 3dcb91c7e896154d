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
	struct rsp_kvec rows;	  /* row key hash -> struct rsp_flatprof_row */
	struct rsp_kvec procs;	  /* pid -> struct rsp_flatprof_proc */
	struct rsp_kvec stacks;	  /* frames hash -> struct rsp_flatprof_stack */
	struct rsp_kvec threads;  /* tid -> struct rsp_flatprof_thread */
	struct rsp_kvec comms;	  /* hash of the name -> struct rsp_flatprof_comm */
	struct rsp_kvec images;	  /* hash of the object -> struct rsp_flatprof_image */
	struct rsp_kvec addrs;	  /* file address -> struct rsp_sampled_addr (opts.annotate) */
	struct rsp_kvec seen;	  /* tid -> nothing: the threads of the whole range */
	struct rsp_kvec rowaddrs; /* hash of (row key, address) -> struct rowaddr (opts.lines) */
	struct rsp_kvec spins;	  /* spin loop's name -> struct rsp_flatprof_spin */
	struct rsp_sampled_addr *row_addrs; /* rowaddrs' addresses, in their sorted order */
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

/* A sampled address of a row (opts.lines). */
struct rowaddr {
	uint64_t row; /* the row's key */
	struct rsp_sampled_addr a;
};

static int add_rowaddr(struct rsp_flatprof *p, uint64_t row, const struct rsp_sym *sym)
{
	size_t max = p->o.max_addrs ? p->o.max_addrs : 65536;
	uint64_t k = rsp_hash__key(rsp_hash__mix(rsp_hash__u64(row, sym->file_addr)));
	struct rowaddr *ra;
	bool added;

	if (!rsp_kvec__find(&p->rowaddrs, k) && p->rowaddrs.n >= max) {
		p->tot.lines_dropped++;
		return 0;
	}
	ra = rsp_kvec__get(&p->rowaddrs, k, &added);
	if (!ra)
		return -ENOMEM;
	ra->row = row;
	ra->a.file_addr = sym->file_addr;
	ra->a.samples++;
	return 0;
}

static int add_row(struct rsp_flatprof *p, const struct rsp_flatprof_row *key, uint64_t period,
		   const struct rsp_sym *sym, bool spin)
{
	bool added;
	uint64_t k = row_key(key);
	struct rsp_flatprof_row *r = rsp_kvec__get(&p->rows, k, &added);

	if (!r)
		return -ENOMEM;
	if (added) {
		*r = *key;
		r->key = k;
	}
	if (p->o.lines && sym->kind == RSP_SYM_USER && sym->name && !sym->hidden &&
	    add_rowaddr(p, k, sym))
		return -ENOMEM;
	r->samples++;
	r->period += period;
	r->spin_samples += spin;
	return 0;
}

/* The row of @pid; access is decided once per process (it may read /proc). */
static struct rsp_flatprof_proc *proc_row(struct rsp_flatprof *p, uint32_t pid, uint64_t time)
{
	bool added;
	struct rsp_flatprof_proc *pr = rsp_kvec__get(&p->procs, pid, &added);

	if (pr && added) {
		pr->pid = pid;
		pr->hidden = p->o.hidden && p->o.hidden(p->o.hidden_ctx, pid);
		pr->outside = p->o.keep && !p->o.keep(p->o.keep_ctx, pid, time);
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
static uint32_t whole_stack(struct rsp_flatprof *p, const struct rsp_sample *smp,
			    struct rsp_unwinder *uw, uint64_t *ips, enum rsp_unwind_method *m)
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
	u = rsp_unwind__user_chain(uw, p->schema, smp, ips + n, (int)(RSP_FLATPROF_FRAMES - n), m);
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
	/* a hidden process's user stack is not unwound; else no unwinder is ENOMEM, not "no DWARF"
	 */
	struct rsp_unwinder *uw = hidden ? NULL : rsp_symbolizer__unwinder(p->o.sym);
	uint32_t nr;
	uint64_t h;
	bool added;
	int n;

	if (!hidden && !uw)
		return -ENOMEM;
	nr = whole_stack(p, smp, uw, ips, &m);
	n = rsp_symbolizer__callchain(p->o.sym, smp->pid, smp->time, ips, nr, sym_flags(p, hidden),
				      f, RSP_FLATPROF_FRAMES);
	h = frames_hash(f, n);

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
	r->period += smp->period;
	r->by[m]++;
	return 0;
}

static int add_thread(struct rsp_flatprof *p, const struct rsp_sample *smp, bool hidden,
		      bool kernel)
{
	bool added;
	struct rsp_flatprof_thread *t = rsp_kvec__get(&p->threads, smp->tid, &added);

	if (!t)
		return -ENOMEM;
	if (added) {
		t->tid = smp->tid;
		t->pid = smp->pid;
		t->hidden = hidden;
	}
	t->samples++;
	t->kernel += kernel;
	t->period += smp->period;
	if (smp->time >= t->last)
		t->last = smp->time;
	return 0;
}

/* Command names are keyed by their text: two processes of one name are one row. */
static int add_comm(struct rsp_flatprof *p, const char *comm, bool hidden, bool kernel,
		    uint64_t period)
{
	uint64_t h = hidden ? 1 : comm ? rsp_hash__bytes(RSP_HASH_INIT, comm, strlen(comm)) : 2;
	bool added;
	struct rsp_flatprof_comm *c = rsp_kvec__get(&p->comms, rsp_hash__key(h), &added);

	if (!c)
		return -ENOMEM;
	if (added) {
		c->comm = hidden ? NULL : comm;
		c->hidden = hidden;
	}
	c->samples++;
	c->kernel += kernel;
	c->period += period;
	return 0;
}

/* Images are keyed by the symbolizer's interned object pointer, kind and hidden. */
static int add_image(struct rsp_flatprof *p, const struct rsp_sym *sym, uint64_t period)
{
	uint64_t h = rsp_hash__u64(RSP_HASH_INIT, (uintptr_t)sym->object);
	bool added;
	struct rsp_flatprof_image *im;

	h = rsp_hash__u64(h, (uint64_t)sym->kind << 1 | sym->hidden);
	im = rsp_kvec__get(&p->images, rsp_hash__key(rsp_hash__mix(h)), &added);
	if (!im)
		return -ENOMEM;
	if (added) {
		im->object = sym->object;
		im->kind = sym->kind;
		im->hidden = sym->hidden;
	}
	im->samples++;
	im->period += period;
	return 0;
}

/*
 * A sample in the function asked for: its link-time address, in the first
 * object that function was found in (a name in two objects is two
 * functions: the others are counted, not mixed in). Bounded by max_addrs.
 */
static int add_addr(struct rsp_flatprof *p, const struct rsp_sym *sym, const struct rsp_sample *smp)
{
	size_t max = p->o.max_addrs ? p->o.max_addrs : 65536;
	struct rsp_sampled_addr *a;
	bool added;

	if (sym->match != RSP_SYM_EXACT || !sym->name || strcmp(sym->name, p->o.annotate))
		return 0;
	p->tot.annotate_samples++;
	if (!p->tot.annotate_object) {
		p->tot.annotate_object = sym->object;
		p->tot.annotate_pid = smp->pid;
		p->tot.annotate_time = smp->time;
		p->tot.annotate_ip = smp->ip;
	}
	if (sym->object != p->tot.annotate_object || sym->file_addr == UINT64_MAX) {
		p->tot.annotate_other_objects++;
		return 0;
	}
	if (!rsp_kvec__find(&p->addrs, sym->file_addr) && p->addrs.n >= max) {
		p->tot.annotate_dropped++;
		return 0;
	}
	a = rsp_kvec__get(&p->addrs, sym->file_addr, &added);
	if (!a)
		return -ENOMEM;
	a->file_addr = sym->file_addr;
	a->samples++;
	return 0;
}

/* Whether the sample passes --tid, --comm, --kernel/--user (--pid is checked before). */
static bool wanted(const struct rsp_flatprof *p, const struct rsp_sample *smp, const char *comm,
		   bool hidden, bool kernel)
{
	if (p->o.tid >= 0 && smp->tid != (uint32_t)p->o.tid)
		return false;
	if (p->o.comm && (hidden || !comm || strcmp(comm, p->o.comm)))
		return false;
	if ((p->o.mode & RSP_FLATPROF_KERNEL_ONLY) && !kernel)
		return false;
	if ((p->o.mode & RSP_FLATPROF_USER_ONLY) && kernel)
		return false;
	return true;
}

/* What the whole range held, before the filters: the statistics of run. */
static int count_all(struct rsp_flatprof *p, const struct rsp_sample *smp, bool kernel)
{
	bool added;

	p->tot.all_samples++;
	p->tot.all_kernel += kernel;
	p->tot.idle += !smp->pid;
	if (!p->tot.all_first)
		p->tot.all_first = smp->time;
	p->tot.all_last = smp->time;
	if (p->o.self_pid && smp->pid == p->o.self_pid) {
		p->tot.self_samples++;
		p->tot.self_period += smp->period;
	}
	if (smp->tid && !rsp_kvec__get(&p->seen, smp->tid, &added))
		return -ENOMEM;
	return 0;
}

/*
 * Whether the sample is busy waiting (opts.spin), counted by its spin
 * loop: 1 if so, 0 if not, -ENOMEM. Keyed by the table's string, whose
 * pointer is stable while the profile is built.
 */
static int add_spin(struct rsp_flatprof *p, const struct rsp_sample *smp,
		    const struct rsp_sym *leaf, bool hidden)
{
	const char *name;
	struct rsp_flatprof_spin *sp;

	if (!p->o.spin)
		return 0;
	/* the sampled function is named already: its user frames only if it is no loop */
	name = rsp_spin__match(p->o.spin, leaf->name);
	if (!name)
		name = rsp_spin__user(p->o.spin, p->o.sym, sym_flags(p, hidden), smp->pid,
				      smp->time, smp->ip, smp->callchain,
				      (uint32_t)smp->nr_callchain);
	if (!name)
		return 0;
	sp = rsp_kvec__get(&p->spins, rsp_hash__key(rsp_hash__mix((uintptr_t)name)), NULL);
	if (!sp)
		return -ENOMEM;
	sp->name = name;
	sp->samples++;
	sp->period += smp->period;
	p->tot.spin_samples++;
	p->tot.spin_period += smp->period;
	return 1;
}

/* One cpu-clock sample: count it for its process, thread, command, image and function. */
static int add_sample(struct rsp_flatprof *p, const struct perf_event_header *h,
		      const struct rsp_sample *smp)
{
	bool kernel = (h->misc & PERF_RECORD_MISC_CPUMODE_MASK) == PERF_RECORD_MISC_KERNEL;
	struct rsp_flatprof_proc *pr;
	struct rsp_flatprof_row key;
	struct rsp_sym sym;
	const char *comm;
	int spin;

	if (left_out(p, smp->pid))
		return 0;
	pr = proc_row(p, smp->pid, smp->time);
	if (!pr || count_all(p, smp, kernel))
		return -ENOMEM;
	pr->samples++;
	pr->kernel += kernel;
	if (smp->time >= pr->last)
		pr->last = smp->time;
	if ((p->o.pid >= 0 && smp->pid != (uint32_t)p->o.pid) || pr->outside)
		return 0;
	comm = smp->pid ? rsp_maps__comm_at(rsp_symbolizer__maps(p->o.sym), smp->pid, smp->time)
			: "[idle]";
	if (!wanted(p, smp, comm, pr->hidden, kernel))
		return 0;
	if (add_thread(p, smp, pr->hidden, kernel) ||
	    add_comm(p, comm, pr->hidden, kernel, smp->period))
		return -ENOMEM;
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
	if (add_image(p, &sym, smp->period) || (p->o.annotate && add_addr(p, &sym, smp)))
		return -ENOMEM;
	spin = add_spin(p, smp, &sym, pr->hidden);
	if (spin < 0)
		return -ENOMEM;
	return add_row(p, &key, smp->period, &sym, spin);
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

static int cmp_threads(const void *a, const void *b)
{
	const struct rsp_flatprof_thread *x = a, *y = b;

	if (x->samples != y->samples)
		return x->samples > y->samples ? -1 : 1;
	return x->tid < y->tid ? -1 : x->tid > y->tid;
}

static int cmp_comms(const void *a, const void *b)
{
	const struct rsp_flatprof_comm *x = a, *y = b;

	if (x->samples != y->samples)
		return x->samples > y->samples ? -1 : 1;
	if (x->hidden != y->hidden)
		return x->hidden - y->hidden;
	return cmp_str(x->comm, y->comm);
}

static int cmp_images(const void *a, const void *b)
{
	const struct rsp_flatprof_image *x = a, *y = b;

	if (x->samples != y->samples)
		return x->samples > y->samples ? -1 : 1;
	if (x->kind != y->kind)
		return x->kind < y->kind ? -1 : 1;
	return cmp_str(x->object, y->object);
}

static int cmp_addrs(const void *a, const void *b)
{
	const struct rsp_sampled_addr *x = a, *y = b;

	return x->file_addr < y->file_addr ? -1 : x->file_addr > y->file_addr;
}

static int cmp_rowaddrs(const void *a, const void *b)
{
	const struct rowaddr *x = a, *y = b;

	if (x->row != y->row)
		return x->row < y->row ? -1 : 1;
	return x->a.file_addr < y->a.file_addr ? -1 : x->a.file_addr > y->a.file_addr;
}

static int cmp_spins(const void *a, const void *b)
{
	const struct rsp_flatprof_spin *x = a, *y = b;

	if (x->samples != y->samples)
		return x->samples > y->samples ? -1 : 1;
	return strcmp(x->name, y->name);
}

static void sort_kvec(struct rsp_kvec *kv, int (*cmp)(const void *, const void *))
{
	if (kv->n > 1)
		qsort(kv->items, kv->n, kv->size, cmp);
	rsp_u64map__exit(&kv->map);
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
static int finish(struct rsp_flatprof *p)
{
	struct rsp_maps *maps = rsp_symbolizer__maps(p->o.sym);

	for (size_t i = 0; i < rsp_kvec__len(&p->procs); i++) {
		struct rsp_flatprof_proc *pr = rsp_kvec__at(&p->procs, i);

		if (!pr->hidden)
			pr->comm = rsp_maps__comm_at(maps, pr->pid, pr->last);
		p->tot.procs += pr->pid != 0;
	}
	for (size_t i = 0; i < rsp_kvec__len(&p->threads); i++) {
		struct rsp_flatprof_thread *t = rsp_kvec__at(&p->threads, i);

		if (!t->hidden)
			t->comm = t->pid ? rsp_maps__comm_at(maps, t->pid, t->last) : "[idle]";
	}
	p->tot.threads = p->seen.n;
	sort_kvec(&p->rows, cmp_rows);
	sort_kvec(&p->procs, cmp_procs);
	sort_kvec(&p->stacks, cmp_stacks);
	sort_kvec(&p->threads, cmp_threads);
	sort_kvec(&p->comms, cmp_comms);
	sort_kvec(&p->images, cmp_images);
	sort_kvec(&p->addrs, cmp_addrs);
	sort_kvec(&p->rowaddrs, cmp_rowaddrs);
	sort_kvec(&p->spins, cmp_spins);
	if (!p->rowaddrs.n)
		return 0;
	p->row_addrs = calloc(p->rowaddrs.n, sizeof(*p->row_addrs));
	if (!p->row_addrs)
		return -ENOMEM;
	for (size_t i = 0; i < p->rowaddrs.n; i++)
		p->row_addrs[i] = ((const struct rowaddr *)rsp_kvec__at(&p->rowaddrs, i))->a;
	return 0;
}

struct rsp_flatprof *rsp_flatprof__new(const struct rsp_schema *schema,
				       const struct rsp_wsnap *snap,
				       const struct rsp_flatprof_opts *o)
{
	struct rsp_flatprof *p = calloc(1, sizeof(*p));
	struct rsp_timeline_ops ops = {.sample = on_sample};
	struct rsp_pass_opts po = {
		.from = o->from, .to = o->to, .flags = RSP_PASS_SAMPLES_ONLY, .ops = &ops};
	struct rsp_timeline_stats st;

	if (!p)
		return NULL;
	p->o = *o;
	p->schema = schema;
	rsp_kvec__init(&p->rows, sizeof(struct rsp_flatprof_row));
	rsp_kvec__init(&p->procs, sizeof(struct rsp_flatprof_proc));
	rsp_kvec__init(&p->stacks, sizeof(struct rsp_flatprof_stack));
	rsp_kvec__init(&p->threads, sizeof(struct rsp_flatprof_thread));
	rsp_kvec__init(&p->comms, sizeof(struct rsp_flatprof_comm));
	rsp_kvec__init(&p->images, sizeof(struct rsp_flatprof_image));
	rsp_kvec__init(&p->addrs, sizeof(struct rsp_sampled_addr));
	rsp_kvec__init(&p->seen, 1);
	rsp_kvec__init(&p->rowaddrs, sizeof(struct rowaddr));
	rsp_kvec__init(&p->spins, sizeof(struct rsp_flatprof_spin));
	po.ctx = p;
	if (rsp_pass__run(schema, snap, &po, &st) || p->failed) {
		rsp_flatprof__delete(p);
		errno = ENOMEM;
		return NULL;
	}
	p->tot.lost_records = st.lost_records;
	p->tot.lost = st.lost;
	if (finish(p)) {
		rsp_flatprof__delete(p);
		errno = ENOMEM;
		return NULL;
	}
	return p;
}

void rsp_flatprof__delete(struct rsp_flatprof *p)
{
	if (!p)
		return;
	rsp_kvec__exit(&p->rows);
	rsp_kvec__exit(&p->procs);
	rsp_kvec__exit(&p->stacks);
	rsp_kvec__exit(&p->threads);
	rsp_kvec__exit(&p->comms);
	rsp_kvec__exit(&p->images);
	rsp_kvec__exit(&p->addrs);
	rsp_kvec__exit(&p->seen);
	rsp_kvec__exit(&p->rowaddrs);
	rsp_kvec__exit(&p->spins);
	free(p->row_addrs);
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

const struct rsp_flatprof_thread *rsp_flatprof__threads(const struct rsp_flatprof *p, size_t *n)
{
	*n = p->threads.n;
	return p->threads.items;
}

const struct rsp_flatprof_comm *rsp_flatprof__comms(const struct rsp_flatprof *p, size_t *n)
{
	*n = p->comms.n;
	return p->comms.items;
}

const struct rsp_flatprof_image *rsp_flatprof__images(const struct rsp_flatprof *p, size_t *n)
{
	*n = p->images.n;
	return p->images.items;
}

const struct rsp_sampled_addr *rsp_flatprof__addrs(const struct rsp_flatprof *p, size_t *n)
{
	*n = p->addrs.n;
	return p->addrs.items;
}

const struct rsp_sampled_addr *rsp_flatprof__row_addrs(const struct rsp_flatprof *p,
						       const struct rsp_flatprof_row *r, size_t *n)
{
	const struct rowaddr *v = p->rowaddrs.items;
	size_t lo = 0, hi = p->rowaddrs.n, first;

	while (lo < hi) { /* the first item of the row: the items are sorted by row */
		size_t mid = lo + (hi - lo) / 2;

		if (v[mid].row < r->key)
			lo = mid + 1;
		else
			hi = mid;
	}
	first = lo;
	while (lo < p->rowaddrs.n && v[lo].row == r->key)
		lo++;
	*n = lo - first;
	return *n ? &p->row_addrs[first] : NULL;
}

const struct rsp_flatprof_spin *rsp_flatprof__spins(const struct rsp_flatprof *p, size_t *n)
{
	*n = p->spins.n;
	return p->spins.items;
}

const struct rsp_flatprof_proc *rsp_flatprof__proc(const struct rsp_flatprof *p, uint32_t pid)
{
	const struct rsp_flatprof_proc *v = p->procs.items;

	for (size_t i = 0; i < p->procs.n; i++)
		if (v[i].pid == pid)
			return &v[i];
	return NULL;
}
