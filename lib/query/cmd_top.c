// SPDX-License-Identifier: LGPL-2.1
/*
 * `rspctl top`: a flat profile of the cpu-clock samples in the window,
 * aggregated by function, user and kernel together (Prospect's flat
 * IP-sampling profile), for one process or for all of them with a summary
 * of processes; and a "statistics of run" footer with what rsp itself cost.
 *
 * Symbols are resolved here, at query time, through the source's
 * symbolizer: the process model knows which file each process had mapped
 * at the sample's time, so processes that have exited are named too.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <jansson.h>
#include <rsp/parse.h>
#include <rsp/record.h>
#include <rsp/symbols.h>
#include <rsp/unwind.h>
#include "internal/fmt.h"
#include "internal/query.h"
#include "internal/u64map.h"

#define TOP_DEFAULT_LIMIT 20
#define TOP_PROCS	  10
#define STACK_FRAMES	  64

struct top_opts {
	unsigned limit;	 /* rows; 0: all */
	unsigned stacks; /* heaviest whole stacks to show; 0: none */
};

enum {
	OPT_LIMIT = 1,
	OPT_STACKS,
};

static const struct rsp_option top_opts[] = {
	{"limit", true, OPT_LIMIT},
	{"stacks", true, OPT_STACKS},
	{NULL, false, 0},
};

static void top_init(void *opts)
{
	((struct top_opts *)opts)->limit = TOP_DEFAULT_LIMIT;
}

static int top_opt(struct rsp_request *req, int id, const char *arg, struct rsp_buf *err)
{
	struct top_opts *o = req->opts;
	uint64_t n;

	if (id == OPT_LIMIT) {
		if (rsp_parse__u64(arg, 0, 1000000, &n)) {
			rsp_buf__printf(
				err, "top: --limit wants a number of rows (0: all), not '%s'", arg);
			return -EINVAL;
		}
		o->limit = (unsigned)n;
		return 0;
	}
	if (id == OPT_STACKS) {
		if (rsp_parse__u64(arg, 0, 1000, &n)) {
			rsp_buf__printf(err, "top: --stacks wants a number of stacks (0: none), not '%s'",
					arg);
			return -EINVAL;
		}
		o->stacks = (unsigned)n;
		return 0;
	}
	rsp_buf__printf(err, "top: unexpected argument '%s'; see 'rspctl help top'", arg);
	return -EINVAL;
}

/* One row of the profile: a function (or an unnamed place) in an object. */
struct row {
	const char *name;   /* NULL: unknown */
	const char *object; /* NULL: unknown */
	const char *why;
	enum rsp_sym_kind kind;
	enum rsp_sym_match match;
	bool hidden;
	uint64_t samples;
	uint64_t period;
};

/* A whole stack, as resolved frames (names are the symbolizer's: equal pointers, equal
 * symbols), with how its user part was had. */
struct srow {
	uint64_t hash;
	uint64_t samples;
	uint64_t by[3]; /* samples per enum rsp_unwind_method */
	uint32_t nr;
	struct rsp_frame frames[STACK_FRAMES];
};

struct proc_row {
	uint32_t pid;
	bool other_user; /* another user's process: no name, no user frames */
	const char *comm; /* its name at its latest sample: after an exec, the new one */
	uint64_t samples, kernel, last;
};

struct profile {
	struct row *rows;
	size_t nr, cap;
	size_t *slots; /* open addressing: index + 1, 0 empty */
	size_t nr_slots;
	struct proc_row *procs;
	size_t nr_procs, cap_procs;
	struct rsp_u64map pid_idx;
	uint64_t samples, kernel, period, rspd_samples;
	uint64_t first, last; /* times of the samples counted */
	struct srow *stacks;
	size_t nr_stacks, cap_stacks;
	struct rsp_u64map stack_idx;
	uint64_t by[3]; /* samples per enum rsp_unwind_method */
};

static uint64_t row_hash(const struct row *r)
{
	uint64_t h = (uintptr_t)r->name * 0x9e3779b97f4a7c15ull;

	h ^= (uintptr_t)r->object * 0xc2b2ae3d27d4eb4full;
	h ^= (uint64_t)r->kind << 3 ^ (uint64_t)r->hidden;
	return h ^ (h >> 29);
}

static bool row_eq(const struct row *a, const struct row *b)
{
	return a->name == b->name && a->object == b->object && a->kind == b->kind &&
	       a->hidden == b->hidden && (a->name || a->why == b->why);
}

static int grow_slots(struct profile *p)
{
	size_t n = p->nr_slots ? p->nr_slots * 2 : 1024;
	size_t *s = calloc(n, sizeof(*s));

	if (!s)
		return -ENOMEM;
	for (size_t i = 0; i < p->nr; i++) {
		size_t k = row_hash(&p->rows[i]) & (n - 1);

		while (s[k])
			k = (k + 1) & (n - 1);
		s[k] = i + 1;
	}
	free(p->slots);
	p->slots = s;
	p->nr_slots = n;
	return 0;
}

static int add_row(struct profile *p, const struct row *key, uint64_t period)
{
	size_t k;

	if (p->nr * 2 >= p->nr_slots && grow_slots(p))
		return -ENOMEM;
	for (k = row_hash(key) & (p->nr_slots - 1); p->slots[k]; k = (k + 1) & (p->nr_slots - 1)) {
		struct row *r = &p->rows[p->slots[k] - 1];

		if (row_eq(r, key)) {
			r->samples++;
			r->period += period;
			return 0;
		}
	}
	if (p->nr == p->cap) {
		size_t cap = p->cap ? p->cap * 2 : 256;
		struct row *v = realloc(p->rows, cap * sizeof(*v));

		if (!v)
			return -ENOMEM;
		p->rows = v;
		p->cap = cap;
	}
	p->rows[p->nr] = *key;
	p->rows[p->nr].samples = 1;
	p->rows[p->nr].period = period;
	p->slots[k] = ++p->nr;
	return 0;
}

/* The row of @pid; access is decided once per process (it may read /proc). */
static struct proc_row *proc_row(struct profile *p, const struct rsp_source *src, uint32_t pid)
{
	uint32_t idx;

	if (!rsp_u64map__get(&p->pid_idx, pid, &idx))
		return &p->procs[idx];
	if (p->nr_procs == p->cap_procs) {
		size_t cap = p->cap_procs ? p->cap_procs * 2 : 64;
		struct proc_row *v = realloc(p->procs, cap * sizeof(*v));

		if (!v)
			return NULL;
		p->procs = v;
		p->cap_procs = cap;
	}
	if (rsp_u64map__put(&p->pid_idx, pid, (uint32_t)p->nr_procs))
		return NULL;
	p->procs[p->nr_procs] =
		(struct proc_row){.pid = pid, .other_user = !rsp_source__may_see(src, pid)};
	return &p->procs[p->nr_procs++];
}

static void profile_exit(struct profile *p)
{
	free(p->rows);
	free(p->slots);
	free(p->procs);
	free(p->stacks);
	rsp_u64map__exit(&p->pid_idx);
	rsp_u64map__exit(&p->stack_idx);
}

/* The kernel part of the callchain (with its markers), then the best user part. */
static uint32_t whole_stack(const struct rsp_source *src, const struct rsp_sample *smp,
			    bool hidden, uint64_t *ips, enum rsp_unwind_method *m)
{
	uint32_t n = 0;
	int u;

	*m = RSP_UNWIND_NONE;
	for (uint64_t i = 0; i < smp->nr_callchain && n < STACK_FRAMES; i++) {
		if (smp->callchain[i] == PERF_CONTEXT_USER)
			break;
		ips[n++] = smp->callchain[i];
	}
	if (n + 2 > STACK_FRAMES)
		return n;
	ips[n++] = PERF_CONTEXT_USER;
	u = rsp_unwind__user_chain(hidden ? NULL : rsp_symbolizer__unwinder(src->symbols),
				   src->schema, smp, ips + n, (int)(STACK_FRAMES - n), m);
	return u ? n + (uint32_t)u : n - 1;
}

static uint64_t frames_hash(const struct rsp_frame *f, int n)
{
	uint64_t h = 1469598103934665603ull;

	for (int i = 0; i < n; i++) {
		uint64_t k = f[i].sym.name ? (uintptr_t)f[i].sym.name : f[i].addr;

		h = (h ^ k) * 1099511628211ull;
		h = (h ^ (uintptr_t)f[i].sym.object) * 1099511628211ull;
	}
	return h == UINT64_MAX ? 0 : h;
}

static int add_stack(struct profile *p, const struct rsp_source *src, const struct rsp_sample *smp,
		     bool hidden)
{
	uint64_t ips[STACK_FRAMES];
	struct rsp_frame f[STACK_FRAMES];
	enum rsp_unwind_method m;
	uint32_t nr = whole_stack(src, smp, hidden, ips, &m), idx;
	int n = rsp_symbolizer__callchain(src->symbols, smp->pid, smp->time, ips, nr,
					  hidden ? RSP_SYM_HIDE_USER : 0, f, STACK_FRAMES);
	uint64_t h = frames_hash(f, n);
	struct srow *r;

	p->by[m]++;
	if (!rsp_u64map__get(&p->stack_idx, h, &idx)) {
		p->stacks[idx].samples++;
		p->stacks[idx].by[m]++;
		return 0;
	}
	if (p->nr_stacks == p->cap_stacks) {
		size_t cap = p->cap_stacks ? p->cap_stacks * 2 : 64;
		struct srow *v = realloc(p->stacks, cap * sizeof(*v));

		if (!v)
			return -ENOMEM;
		p->stacks = v;
		p->cap_stacks = cap;
	}
	if (rsp_u64map__put(&p->stack_idx, h, (uint32_t)p->nr_stacks))
		return -ENOMEM;
	r = &p->stacks[p->nr_stacks++];
	memset(r->by, 0, sizeof(r->by));
	r->hash = h;
	r->samples = 1;
	r->by[m] = 1;
	r->nr = (uint32_t)n;
	memcpy(r->frames, f, (size_t)n * sizeof(f[0]));
	return 0;
}

/* One cpu-clock sample: count it for its process, and its function. */
static int add_sample(struct profile *p, const struct rsp_request *req,
		      const struct rsp_source *src, const struct perf_event_header *h,
		      const struct rsp_sample *smp)
{
	bool kernel = (h->misc & PERF_RECORD_MISC_CPUMODE_MASK) == PERF_RECORD_MISC_KERNEL;
	struct proc_row *pr = proc_row(p, src, smp->pid);
	struct rsp_sym sym;
	struct row key;

	if (!pr)
		return -ENOMEM;
	pr->samples++;
	pr->kernel += kernel;
	if (smp->time >= pr->last)
		pr->last = smp->time;
	if (src->capture && smp->pid == (uint32_t)src->capture->pid)
		p->rspd_samples++;
	if (req->pid >= 0 && smp->pid != (uint32_t)req->pid)
		return 0;
	p->samples++;
	p->kernel += kernel;
	p->period += smp->period;
	if (!p->first)
		p->first = smp->time;
	p->last = smp->time;
	rsp_symbolizer__resolve(src->symbols, smp->pid, smp->time, smp->ip,
				pr->other_user ? RSP_SYM_HIDE_USER : 0, &sym);
	key = (struct row){.name = sym.name,
			   .object = sym.object,
			   .why = sym.name ? NULL : sym.why,
			   .kind = sym.kind,
			   .match = sym.match,
			   .hidden = sym.hidden};
	if (((const struct top_opts *)req->opts)->stacks &&
	    add_stack(p, src, smp, pr->other_user))
		return -ENOMEM;
	return add_row(p, &key, smp->period);
}

static int collect(const struct rsp_request *req, const struct rsp_source *src, uint64_t from,
		   struct profile *p)
{
	uint64_t to = req->to_ns ? req->to_ns : UINT64_MAX;
	struct rsp_wsnap *snap = rsp_window__pin(src->window, from, to);
	struct rsp_witer *it = snap ? rsp_witer__new(snap, from, to) : NULL;
	struct rsp_wentry e;
	struct rsp_sample smp;
	int ret = 0;

	if (!it) {
		rsp_wsnap__unpin(snap);
		return -ENOMEM;
	}
	while (!ret && rsp_witer__next(it, &e)) {
		if (e.rec->type != PERF_RECORD_SAMPLE ||
		    rsp_record__parse_sample(src->schema, e.rec, &smp) ||
		    smp.event != RSP_EV_cpu_clock || smp.role != RSP_ROLE_PRIMARY)
			continue;
		ret = add_sample(p, req, src, e.rec, &smp);
	}
	rsp_witer__delete(it);
	rsp_wsnap__unpin(snap);
	return ret;
}

static int cmp_rows(const void *a, const void *b)
{
	const struct row *x = a, *y = b;

	if (x->samples != y->samples)
		return x->samples > y->samples ? -1 : 1;
	if (!x->name || !y->name)
		return !x->name - !y->name;
	return strcmp(x->name, y->name);
}

static int cmp_procs(const void *a, const void *b)
{
	const struct proc_row *x = a, *y = b;

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
	const struct srow *x = a, *y = b;

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

/* "dwarf", "fp", "none", or "mixed" when samples of one stack got different methods. */
static const char *stack_method(const struct srow *r)
{
	int kinds = !!r->by[0] + !!r->by[1] + !!r->by[2];

	if (kinds > 1)
		return "mixed";
	return rsp_unwind_method__name(r->by[RSP_UNWIND_DWARF]	? RSP_UNWIND_DWARF
				       : r->by[RSP_UNWIND_FP] ? RSP_UNWIND_FP
							      : RSP_UNWIND_NONE);
}

static const char *kind_name(enum rsp_sym_kind k)
{
	switch (k) {
	case RSP_SYM_KERNEL:
		return "kernel";
	case RSP_SYM_USER:
		return "user";
	case RSP_SYM_JIT:
		return "jit";
	default:
		return "unknown";
	}
}

static const char *match_name(enum rsp_sym_match m)
{
	return m == RSP_SYM_EXACT ? "exact" : m == RSP_SYM_BRACKET ? "bracket" : "none";
}

static const char *basename_of(const char *path)
{
	const char *s = path ? strrchr(path, '/') : NULL;

	return s ? s + 1 : path ? path : "?";
}

static double pct(uint64_t a, uint64_t b)
{
	return b ? 100.0 * (double)a / (double)b : 0.0;
}

struct top_ctx {
	const struct rsp_request *req;
	const struct rsp_source *src;
	const struct profile *p;
	struct rsp_window_stats ws;
	struct rsp_symbolizer_stats before, after;
	double resolve_ms;
	uint64_t from;
};

static const char *row_label(const struct row *r, char *buf, size_t n)
{
	struct rsp_sym s = {.name = r->name, .hidden = r->hidden};

	return rsp_sym__format(&s, false, buf, n);
}

static json_t *json_rows(const struct top_ctx *c, unsigned limit)
{
	json_t *arr = json_array();

	for (size_t i = 0; i < c->p->nr && (!limit || i < limit); i++) {
		const struct row *r = &c->p->rows[i];
		json_t *o =
			json_pack("{s:s?, s:s, s:s, s:s?, s:I, s:f, s:f}", "name", r->name, "match",
				  match_name(r->match), "kind", kind_name(r->kind), "object",
				  r->object, "samples", (json_int_t)r->samples, "percent",
				  pct(r->samples, c->p->samples), "cpu_s", (double)r->period / 1e9);

		if (r->why)
			json_object_set_new(o, "why", json_string(r->why));
		json_array_append_new(arr, o);
	}
	return arr;
}

static json_t *json_procs(const struct top_ctx *c)
{
	json_t *arr = json_array();
	size_t shown = 0;

	for (size_t i = 0; i < c->p->nr_procs && shown < TOP_PROCS; i++) {
		const struct proc_row *pr = &c->p->procs[i];

		if (c->req->pid >= 0 && pr->pid != (uint32_t)c->req->pid)
			continue;
		json_t *o = json_pack("{s:i, s:I, s:I, s:I}", "pid", (int)pr->pid, "samples",
				      (json_int_t)pr->samples, "user",
				      (json_int_t)(pr->samples - pr->kernel), "kernel",
				      (json_int_t)pr->kernel);

		if (pr->other_user)
			json_object_set_new(o, "other_user", json_true());
		else if (pr->comm)
			json_object_set_new(o, "comm", json_string(pr->comm));
		json_array_append_new(arr, o);
		shown++;
	}
	return arr;
}

static json_t *json_stacks(const struct top_ctx *c)
{
	const struct top_opts *opts = c->req->opts;
	json_t *arr = json_array();
	char name[256];

	for (size_t i = 0; i < c->p->nr_stacks && i < opts->stacks; i++) {
		const struct srow *r = &c->p->stacks[i];
		json_t *f = json_array();

		for (uint32_t k = 0; k < r->nr; k++) {
			const struct rsp_sym *sy = &r->frames[k].sym;

			json_array_append_new(
				f, json_pack("{s:s, s:s?, s:b}", "name",
					     rsp_sym__format(sy, false, name, sizeof(name)), "object",
					     sy->hidden ? NULL : sy->object, "kernel",
					     sy->kind == RSP_SYM_KERNEL));
		}
		json_array_append_new(arr, json_pack("{s:I, s:f, s:s, s:I, s:I, s:o}", "samples",
						     (json_int_t)r->samples, "percent",
						     pct(r->samples, c->p->samples), "unwind",
						     stack_method(r), "dwarf",
						     (json_int_t)r->by[RSP_UNWIND_DWARF], "fp",
						     (json_int_t)r->by[RSP_UNWIND_FP], "frames", f));
	}
	return arr;
}

static json_t *json_stats(const struct top_ctx *c)
{
	const struct rsp_capture_info *ci = c->src->capture;
	json_t *o =
		json_pack("{s:I, s:I, s:I, s:I, s:I, s:I, s:f, s:I, s:I}", "rspd_samples",
			  (json_int_t)c->p->rspd_samples, "records_in_window",
			  (json_int_t)c->ws.records, "symbol_objects", (json_int_t)c->after.objects,
			  "symbol_objects_max", (json_int_t)c->after.max_objects, "symbol_hits",
			  (json_int_t)(c->after.hits - c->before.hits), "symbol_misses",
			  (json_int_t)(c->after.misses - c->before.misses), "resolve_ms",
			  c->resolve_ms, "model_processes", (json_int_t)c->after.maps.procs,
			  "model_bytes", (json_int_t)c->after.maps.bytes);
	uint64_t all = 0;

	for (size_t i = 0; i < c->p->nr_procs; i++)
		all += c->p->procs[i].samples;
	json_object_set_new(o, "samples_all", json_integer((json_int_t)all));
	if (ci) {
		json_object_set_new(o, "rspd_cpu_s", json_real(ci->cpu_seconds));
		json_object_set_new(o, "rspd_uptime_s", json_real(ci->uptime_s));
		json_object_set_new(o, "rspd_rss_bytes", json_integer((json_int_t)ci->rss_bytes));
		json_object_set_new(o, "records_total",
				    json_integer((json_int_t)ci->records_total));
		json_object_set_new(o, "lost_total", json_integer((json_int_t)ci->lost_total));
	}
	return o;
}

static int render_json(const struct top_ctx *c, struct rsp_buf *out)
{
	const struct top_opts *opts = c->req->opts;
	const struct profile *p = c->p;
	json_t *o = json_object();
	char *text;
	int err;

	json_object_set_new(o, "from_s", json_real((double)(p->first ? p->first : c->from) / 1e9));
	json_object_set_new(o, "to_s", json_real((double)p->last / 1e9));
	if (c->req->pid >= 0)
		json_object_set_new(o, "query_pid", json_integer(c->req->pid));
	json_object_set_new(o, "samples", json_integer((json_int_t)p->samples));
	json_object_set_new(o, "samples_kernel", json_integer((json_int_t)p->kernel));
	json_object_set_new(o, "samples_user", json_integer((json_int_t)(p->samples - p->kernel)));
	json_object_set_new(o, "cpu_s", json_real((double)p->period / 1e9));
	json_object_set_new(o, "processes", json_procs(c));
	json_object_set_new(o, "symbols", json_rows(c, opts->limit));
	if (opts->stacks) {
		json_object_set_new(o, "stacks", json_stacks(c));
		json_object_set_new(o, "user_stacks",
				    json_pack("{s:I, s:I, s:I}", "dwarf",
					      (json_int_t)p->by[RSP_UNWIND_DWARF], "fp",
					      (json_int_t)p->by[RSP_UNWIND_FP], "none",
					      (json_int_t)p->by[RSP_UNWIND_NONE]));
	}
	json_object_set_new(o, "statistics", json_stats(c));
	text = json_dumps(o, JSON_INDENT(2) | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(15));
	json_decref(o);
	if (!text)
		return -ENOMEM;
	err = rsp_buf__puts(out, text);
	free(text);
	return err ? err : rsp_buf__puts(out, "\n");
}

static void text_header(const struct top_ctx *c, struct rsp_buf *out)
{
	const struct profile *p = c->p;
	const struct rsp_capture_info *ci = c->src->capture;
	double span = p->last > p->first ? (double)(p->last - p->first) / 1e9 : 0.0;

	if (c->req->pid >= 0) {
		const struct proc_row *pr = NULL;

		for (size_t i = 0; i < p->nr_procs; i++)
			if (p->procs[i].pid == (uint32_t)c->req->pid)
				pr = &p->procs[i];
		const char *comm =
			pr && pr->comm ? pr->comm
				       : rsp_maps__comm_at(rsp_symbolizer__maps(c->src->symbols),
							   (uint32_t)c->req->pid, c->src->now);

		rsp_buf__printf(out, "process %ld (%s): ", c->req->pid, comm ? comm : "?");
	} else {
		rsp_buf__puts(out, "all processes: ");
	}
	rsp_buf__printf(out, "%llu cpu-clock samples over %.1f s\n", (unsigned long long)p->samples,
			span);
	if (ci && ci->sample_freq)
		rsp_buf__printf(out, "  %u Hz per CPU; ", ci->sample_freq);
	else
		rsp_buf__puts(out, "  ");
	rsp_buf__printf(out, "%.2f s of CPU; %.0f%% in the kernel\n", (double)p->period / 1e9,
			pct(p->kernel, p->samples));
}

static void text_procs(const struct top_ctx *c, struct rsp_buf *out)
{
	const struct profile *p = c->p;
	uint64_t all = 0;

	for (size_t i = 0; i < p->nr_procs; i++)
		all += p->procs[i].samples;
	rsp_buf__printf(out, "\n     pid comm              samples      %%     user   kernel\n");
	for (size_t i = 0; i < p->nr_procs && i < TOP_PROCS; i++) {
		const struct proc_row *pr = &p->procs[i];

		rsp_buf__printf(out, "%8u %-16.16s %8llu %5.1f%% %8llu %8llu\n", pr->pid,
				!pr->pid	 ? "[idle]"
				: pr->other_user ? "(other user)"
				: pr->comm	 ? pr->comm
						 : "?",
				(unsigned long long)pr->samples, pct(pr->samples, all),
				(unsigned long long)(pr->samples - pr->kernel),
				(unsigned long long)pr->kernel);
	}
}

static void text_rows(const struct top_ctx *c, struct rsp_buf *out)
{
	const struct top_opts *opts = c->req->opts;
	const struct profile *p = c->p;
	char name[256];

	rsp_buf__puts(out, "\n samples      %  function                              object\n");
	for (size_t i = 0; i < p->nr && (!opts->limit || i < opts->limit); i++) {
		const struct row *r = &p->rows[i];
		const char *label = row_label(r, name, sizeof(name));
		size_t len = strlen(label);

		if (len > 37)
			rsp_buf__printf(out, "%8llu %5.1f%%  %.34s... %s\n",
					(unsigned long long)r->samples, pct(r->samples, p->samples),
					label, basename_of(r->object));
		else
			rsp_buf__printf(out, "%8llu %5.1f%%  %-37s %s\n",
					(unsigned long long)r->samples, pct(r->samples, p->samples),
					label, r->hidden ? "" : basename_of(r->object));
	}
	if (opts->limit && p->nr > opts->limit)
		rsp_buf__printf(out, "(%zu more; --limit 0 shows all)\n", p->nr - opts->limit);
}

static void text_stacks(const struct top_ctx *c, struct rsp_buf *out)
{
	const struct top_opts *opts = c->req->opts;
	const struct profile *p = c->p;
	char name[256];

	rsp_buf__printf(out,
			"\nheaviest stacks (user frames: %llu samples by DWARF, %llu by frame "
			"pointers)\n",
			(unsigned long long)p->by[RSP_UNWIND_DWARF],
			(unsigned long long)p->by[RSP_UNWIND_FP]);
	for (size_t i = 0; i < p->nr_stacks && i < opts->stacks; i++) {
		const struct srow *r = &p->stacks[i];

		rsp_buf__printf(out, "%8llu %5.1f%%  (%s)\n", (unsigned long long)r->samples,
				pct(r->samples, p->samples), stack_method(r));
		for (uint32_t k = 0; k < r->nr && k < 24; k++) {
			const struct rsp_sym *sy = &r->frames[k].sym;

			rsp_buf__printf(out, "                %.42s %s\n",
					rsp_sym__format(sy, false, name, sizeof(name)),
					sy->hidden ? "" : basename_of(sy->object));
		}
	}
}

static void text_stats(const struct top_ctx *c, struct rsp_buf *out)
{
	const struct rsp_capture_info *ci = c->src->capture;
	char rss[32];

	rsp_buf__printf(out,
			"\nstatistics of run\n  samples of rspd itself: %llu; records in the "
			"window: %llu\n",
			(unsigned long long)c->p->rspd_samples, (unsigned long long)c->ws.records);
	if (ci) {
		rsp_fmt__bytes(rss, sizeof(rss), ci->rss_bytes);
		rsp_buf__printf(
			out,
			"  rspd: %.2f s CPU in %.0f s (%.2f%% of one CPU), RSS %s\n"
			"        %llu records captured, %llu lost\n",
			ci->cpu_seconds, ci->uptime_s,
			pct((uint64_t)(ci->cpu_seconds * 1e6), (uint64_t)(ci->uptime_s * 1e6)), rss,
			(unsigned long long)ci->records_total, (unsigned long long)ci->lost_total);
	}
	rsp_buf__printf(out,
			"  symbols: %llu objects cached (max %llu), %llu hits, %llu read, "
			"%.1f ms\n  process model: %llu processes, %llu regions\n",
			(unsigned long long)c->after.objects,
			(unsigned long long)c->after.max_objects,
			(unsigned long long)(c->after.hits - c->before.hits),
			(unsigned long long)(c->after.misses - c->before.misses), c->resolve_ms,
			(unsigned long long)c->after.maps.procs,
			(unsigned long long)(c->after.maps.maps_live + c->after.maps.maps_dead));
}

static void render_text(const struct top_ctx *c, struct rsp_buf *out)
{
	text_header(c, out);
	if (c->req->pid < 0)
		text_procs(c, out);
	if (!c->p->samples) {
		rsp_buf__printf(out, "\nno cpu-clock samples%s in the window%s\n",
				c->req->pid >= 0 ? " of this process" : "",
				c->src->capture && !c->src->capture->sample_freq
					? " (sampling is off: rspd --freq 0)"
					: "");
	} else {
		text_rows(c, out);
		if (((const struct top_opts *)c->req->opts)->stacks)
			text_stacks(c, out);
	}
	text_stats(c, out);
}

static double ms_since(const struct timespec *t0)
{
	struct timespec t1;

	clock_gettime(CLOCK_MONOTONIC, &t1);
	return (double)(t1.tv_sec - t0->tv_sec) * 1e3 + (double)(t1.tv_nsec - t0->tv_nsec) / 1e6;
}

static int top_run(const struct rsp_request *req, const struct rsp_source *src, struct rsp_buf *out,
		   struct rsp_buf *err)
{
	struct profile p = {0};
	struct top_ctx c = {.req = req, .src = src, .p = &p};
	struct timespec t0;
	int ret;

	if (!src->symbols) {
		rsp_buf__puts(err, "top: this source has no process model to name functions with");
		return -EOPNOTSUPP;
	}
	if (req->pid >= 0 && (ret = rsp_source__check_pid(src, "top", req->pid, err)))
		return ret;
	rsp_u64map__init(&p.pid_idx);
	rsp_u64map__init(&p.stack_idx);
	c.from = req->last_ns && src->now > req->last_ns ? src->now - req->last_ns : req->from_ns;
	rsp_window__stats(src->window, &c.ws);
	rsp_symbolizer__stats(src->symbols, &c.before);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	ret = collect(req, src, c.from, &p);
	c.resolve_ms = ms_since(&t0);
	rsp_symbolizer__stats(src->symbols, &c.after);
	if (ret) {
		rsp_buf__puts(err, "top: out of memory building the profile");
		goto out;
	}
	if (p.nr > 1)
		qsort(p.rows, p.nr, sizeof(p.rows[0]), cmp_rows);
	/* A child sampled between its fork and its exec still has the parent's
	 * name then: name each process as it was last seen. */
	for (size_t i = 0; i < p.nr_procs; i++)
		if (!p.procs[i].other_user)
			p.procs[i].comm = rsp_maps__comm_at(rsp_symbolizer__maps(src->symbols),
							    p.procs[i].pid, p.procs[i].last);
	if (p.nr_procs > 1)
		qsort(p.procs, p.nr_procs, sizeof(p.procs[0]), cmp_procs);
	if (p.nr_stacks > 1)
		qsort(p.stacks, p.nr_stacks, sizeof(p.stacks[0]), cmp_stacks);
	if (req->format == RSP_FMT_JSON)
		ret = render_json(&c, out);
	else
		render_text(&c, out);
out:
	profile_exit(&p);
	return ret;
}

const struct rsp_command rsp_cmd_top = {
	.name = "top",
	.summary = "flat profile of the cpu-clock samples, by function",
	.usage = "usage: rspctl top [--pid PID] [--last DURATION | --from T --to T]\n"
		 "                  [--limit N] [--stacks N] [--json]\n"
		 "\n"
		 "Functions where the sampled CPU time went, user and kernel, named at\n"
		 "query time (processes that have exited too). A stripped library shows\n"
		 "'a->b': the sample lies between its exported functions a and b.\n"
		 "\n"
		 "  --pid PID        only this process (default: all, with a summary)\n"
		 "  --last DURATION  only the last DURATION of the window, e.g. 10s\n"
		 "  --from T, --to T only [T, T] of the window, in seconds as 'rspctl\n"
		 "                   status' shows it\n"
		 "  --limit N        rows to show (20; 0: all)\n"
		 "  --stacks N       also the N heaviest whole stacks, user frames unwound\n"
		 "                   with DWARF where the sample copied its stack (rspd\n"
		 "                   --dwarf), else by frame pointers; each says which\n"
		 "  --json           JSON output (same as --format json)\n"
		 "\n"
		 "EXAMPLES\n"
		 "  rspctl top\n"
		 "  rspctl top --pid 1234 --last 5s\n"
		 "  rspctl top --json --limit 0\n"
		 "  rspctl top --pid 1234 --stacks 5\n",
	.common = RSP_COPT_FORMAT | RSP_COPT_PID | RSP_COPT_LAST | RSP_COPT_RANGE,
	.opts = top_opts,
	.opts_size = sizeof(struct top_opts),
	.init = top_init,
	.opt = top_opt,
	.run = top_run,
};
