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
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <jansson.h>
#include <rsp/flatprof.h>
#include <rsp/maps.h>
#include <rsp/parse.h>
#include "internal/annotate.h"
#include "internal/cgroupq.h"
#include "internal/elfsyms.h"
#include "internal/fmt.h"
#include "internal/fmt.h"
#include "internal/hash.h"
#include "internal/json.h"
#include "internal/pprof.h"
#include "internal/query.h"
#include "internal/redact.h"
#include "internal/speedscope.h"
#include <rsp/answer.h>
#include <rsp/perfdata.h>
#include "internal/srcline.h"
#include "internal/vec.h"

#define TOP_DEFAULT_LIMIT 20
#define TOP_PROCS	  10

struct top_opts {
	unsigned limit;	       /* rows; 0: all */
	unsigned stacks;       /* heaviest whole stacks to show; 0: none */
	long tid;	       /* --tid; -1: all */
	char comm[16];	       /* --comm; "": all */
	unsigned mode;	       /* --kernel, --user: RSP_FLATPROF_*_ONLY */
	bool lines;	       /* --lines */
	char annotate[256];    /* --annotate SYMBOL; "": none */
	char speedscope[4096]; /* also this file: the samples per thread, speedscope's format */
	char pprof[4096];      /* also this file: the samples per stack and thread, pprof */
	bool by_cgroup;	       /* --by cgroup */
};

enum {
	OPT_LIMIT = 1,
	OPT_STACKS,
	OPT_TID,
	OPT_COMM,
	OPT_KERNEL,
	OPT_USER,
	OPT_LINES,
	OPT_ANNOTATE,
	OPT_SPEEDSCOPE,
	OPT_PPROF,
	OPT_BY,
};

static const struct rsp_option top_opts[] = {
	{"limit", true, OPT_LIMIT},
	{"stacks", true, OPT_STACKS},
	{"tid", true, OPT_TID},
	{"comm", true, OPT_COMM},
	{"kernel", false, OPT_KERNEL},
	{"user", false, OPT_USER},
	{"lines", false, OPT_LINES},
	{"annotate", true, OPT_ANNOTATE},
	{"speedscope", true, OPT_SPEEDSCOPE},
	{"pprof", true, OPT_PPROF},
	{"by", true, OPT_BY},
	{NULL, false, 0},
};

static void top_init(void *opts)
{
	((struct top_opts *)opts)->limit = TOP_DEFAULT_LIMIT;
	((struct top_opts *)opts)->tid = -1;
}

/* --tid, --comm, --kernel, --user: which samples are profiled. */
static int filter_opt(struct top_opts *o, int id, const char *arg, struct rsp_buf *err)
{
	uint64_t n;

	if (id == OPT_TID) {
		if (rsp_parse__u64(arg, 0, 4194304, &n)) {
			rsp_buf__printf(err,
					"top: --tid wants a thread id (0: the idle task), not '%s'",
					arg);
			return -EINVAL;
		}
		o->tid = (long)n;
		return 0;
	}
	if (id == OPT_COMM) {
		/* the kernel keeps 15 bytes of a name: a longer one could never match */
		if (!*arg || strlen(arg) > 15) {
			rsp_buf__printf(err,
					"top: --comm wants a command name of 1 to 15 bytes as the "
					"kernel keeps it (see 'rspctl top'), not '%s'",
					arg);
			return -EINVAL;
		}
		strcpy(o->comm, arg);
		return 0;
	}
	o->mode |= id == OPT_KERNEL ? RSP_FLATPROF_KERNEL_ONLY : RSP_FLATPROF_USER_ONLY;
	if (o->mode == (RSP_FLATPROF_KERNEL_ONLY | RSP_FLATPROF_USER_ONLY)) {
		rsp_buf__puts(err, "top: --kernel and --user exclude each other; give one, or "
				   "neither for both");
		return -EINVAL;
	}
	return 0;
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
			rsp_buf__printf(
				err, "top: --stacks wants a number of stacks (0: none), not '%s'",
				arg);
			return -EINVAL;
		}
		o->stacks = (unsigned)n;
		return 0;
	}
	if (id == OPT_SPEEDSCOPE || id == OPT_PPROF) {
		char *dst = id == OPT_PPROF ? o->pprof : o->speedscope;

		if (!arg[0] || strlen(arg) >= sizeof(o->speedscope)) {
			rsp_buf__printf(err, "top: --%s wants a file name (shorter than %zu bytes)",
					id == OPT_PPROF ? "pprof" : "speedscope",
					sizeof(o->speedscope));
			return -EINVAL;
		}
		memcpy(dst, arg, strlen(arg) + 1);
		return 0;
	}
	if (id == OPT_TID || id == OPT_COMM || id == OPT_KERNEL || id == OPT_USER)
		return filter_opt(o, id, arg, err);
	if (id == OPT_LINES) {
		o->lines = true;
		return 0;
	}
	if (id == OPT_BY) {
		if (strcmp(arg, "cgroup")) {
			rsp_buf__printf(err, "top: --by groups by 'cgroup' only, not '%.40s'", arg);
			return -EINVAL;
		}
		o->by_cgroup = true;
		return 0;
	}
	if (id == OPT_ANNOTATE) {
		if (!*arg || strlen(arg) >= sizeof(o->annotate)) {
			rsp_buf__printf(err,
					"top: --annotate wants a function's name as top shows it "
					"(1 to %zu bytes), not '%.40s'",
					sizeof(o->annotate) - 1, arg);
			return -EINVAL;
		}
		strcpy(o->annotate, arg);
		return 0;
	}
	rsp_buf__printf(err, "top: unexpected argument '%s'; see 'rspctl help top'", arg);
	return -EINVAL;
}

static int top_check(struct rsp_request *req, struct rsp_buf *err)
{
	const struct top_opts *o = req->opts;

	if (o->pprof[0] && !strcmp(o->pprof, o->speedscope)) {
		rsp_buf__puts(err, "top: --pprof and --speedscope name the same file; give each "
				   "its own");
		return -EINVAL;
	}
	return 0;
}

static const char *top_output(const struct rsp_request *req, size_t i, const char **name)
{
	const struct top_opts *o = req->opts;
	const char *paths[2] = {o->speedscope, o->pprof}, *names[2] = {"speedscope", "pprof"};

	return rsp_request__nth_path(paths, names, 2, i, name);
}

/* "dwarf", "fp", "none", or "mixed" when samples of one stack got different methods. */
static const char *stack_method(const struct rsp_flatprof_stack *r)
{
	int kinds = !!r->by[0] + !!r->by[1] + !!r->by[2];

	if (kinds > 1)
		return "mixed";
	return rsp_unwind_method__name(r->by[RSP_UNWIND_DWARF] ? RSP_UNWIND_DWARF
				       : r->by[RSP_UNWIND_FP]  ? RSP_UNWIND_FP
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

/* A file's name as text answers show it: its last component, escaped (anyone names files). */
static const char *basename_of(const char *path, char *buf, size_t n)
{
	const char *s = path ? strrchr(path, '/') : NULL;

	return rsp_fmt__name(buf, n, s ? s + 1 : path ? path : "?");
}

static double pct(uint64_t a, uint64_t b)
{
	return b ? 100.0 * (double)a / (double)b : 0.0;
}

struct top_ctx {
	const struct rsp_request *req;
	const struct rsp_source *src;
	const struct rsp_flatprof_totals *tot;
	const struct rsp_flatprof_row *rows;
	const struct rsp_flatprof_proc *procs;
	const struct rsp_flatprof_stack *stacks;
	const struct rsp_flatprof_thread *threads;
	const struct rsp_flatprof_comm *comms;
	const struct rsp_flatprof_image *images;
	size_t nr_rows, nr_procs, nr_stacks, nr_threads, nr_comms, nr_images;
	struct rsp_flatprof *prof;
	struct rsp_window_stats ws;
	struct rsp_symbolizer_stats before, after;
	struct rsp_srclines *sl;  /* --lines, --annotate */
	struct rsp_annotate *ann; /* --annotate */
	char ann_path[4096];	  /* the file its code was read from */
	double resolve_ms;
	uint64_t from;
	struct rsp_cgroupq_by by; /* --by cgroup */
	struct rsp_spin spin;	  /* the spin loops (--spin-symbol) */
	const struct rsp_flatprof_spin *spins;
	size_t nr_spins;
};

static const struct rsp_maps *model(const struct top_ctx *c)
{
	return rsp_symbolizer__maps(c->src->symbols);
}

/* A process's latest sample time: its cgroup then (the model is versioned by time). */
static uint64_t proc_time(const struct top_ctx *c, uint32_t pid)
{
	const struct rsp_flatprof_proc *pr = rsp_flatprof__proc(c->prof, pid);

	return pr && pr->last ? pr->last : c->src->now;
}

static const char *row_label(const struct rsp_flatprof_row *r, char *buf, size_t n)
{
	struct rsp_sym s = {.name = r->name, .hidden = r->hidden};

	return rsp_sym__format(&s, false, buf, n);
}

/* The source line that holds most of a row's samples (--lines). */
struct row_src {
	char file[512];
	int line;
	uint64_t samples;
};

/* A line of a row while its samples are added up: the file by its name's hash. */
struct line_count {
	uint64_t samples;
	uint64_t addr; /* one address of the line: its file's name is looked up again */
};

/*
 * Every sampled address of the row is looked up and the samples are added
 * up per (file, line), exactly: a table of at most as many lines as the
 * row has addresses (bounded by opts.max_addrs). Return: 1 with @best set,
 * 0 when no address has a line, -ENOMEM.
 */
static int row_source(const struct top_ctx *c, const struct rsp_flatprof_row *r,
		      struct row_src *best)
{
	size_t nr = 0;
	const struct rsp_sampled_addr *a =
		c->sl && r->object ? rsp_flatprof__row_addrs(c->prof, r, &nr) : NULL;
	struct rsp_kvec lines;
	const struct line_count *top = NULL;
	int ret = 0;

	rsp_kvec__init(&lines, sizeof(struct line_count));
	for (size_t i = 0; a && i < nr && !ret; i++) {
		struct row_src s;
		struct line_count *lc;
		uint64_t h;
		bool added;

		if (rsp_srclines__find(c->sl, r->object, a[i].file_addr, s.file, sizeof(s.file),
				       &s.line))
			continue;
		h = rsp_hash__bytes(RSP_HASH_INIT, s.file, strlen(s.file));
		lc = rsp_kvec__get(&lines, rsp_hash__key(rsp_hash__u64(h, (uint64_t)s.line)),
				   &added);
		if (!lc) {
			ret = -ENOMEM;
			break;
		}
		if (added)
			lc->addr = a[i].file_addr;
		lc->samples += a[i].samples;
	}
	for (size_t i = 0; !ret && i < rsp_kvec__len(&lines); i++) {
		const struct line_count *lc = rsp_kvec__at(&lines, i);

		if (!top || lc->samples > top->samples)
			top = lc;
	}
	if (top && !rsp_srclines__find(c->sl, r->object, top->addr, best->file, sizeof(best->file),
				       &best->line)) {
		best->samples = top->samples;
		ret = 1;
	}
	rsp_kvec__exit(&lines);
	return ret;
}

static json_t *json_annotate(const struct top_ctx *c)
{
	const struct rsp_flatprof_totals *p = c->tot;
	const struct top_opts *opts = c->req->opts;
	const struct rsp_annotate *a = c->ann;
	json_t *o = json_pack("{s:s, s:s?, s:I, s:I, s:I}", "function", opts->annotate, "object",
			      c->ann ? c->ann_path : p->annotate_object, "samples",
			      (json_int_t)p->annotate_samples, "samples_other_objects",
			      (json_int_t)p->annotate_other_objects, "samples_dropped",
			      (json_int_t)p->annotate_dropped);
	json_t *arr;

	if (!a)
		return o;
	json_object_set_new(o, "start", json_integer((json_int_t)a->start));
	json_object_set_new(o, "size", json_integer((json_int_t)a->size));
	json_object_set_new(o, "truncated", json_boolean(a->truncated));
	json_object_set_new(o, "samples_on_instructions", json_integer((json_int_t)a->samples));
	json_object_set_new(o, "samples_off_instruction", json_integer((json_int_t)a->off_insn));
	arr = json_array();
	for (size_t i = 0; i < a->n; i++) {
		const struct rsp_annotate_insn *d = &a->insns[i];
		json_t *in = json_pack("{s:I, s:i, s:s, s:I, s:f}", "address", (json_int_t)d->addr,
				       "size", (int)d->size, "text", d->text, "samples",
				       (json_int_t)d->samples, "percent",
				       pct(d->samples, p->annotate_samples));

		json_object_set_new(in, "file", d->file ? json_string(d->file) : json_null());
		json_object_set_new(in, "line", d->line ? json_integer(d->line) : json_null());
		json_array_append_new(arr, in);
	}
	json_object_set_new(o, "instructions", arr);
	return o;
}

static json_t *json_row_source(const struct top_ctx *c, const struct rsp_flatprof_row *r)
{
	struct row_src s;

	if (row_source(c, r, &s) <= 0)
		return json_null();
	return json_pack("{s:s, s:i, s:I}", "file", s.file, "line", s.line, "samples",
			 (json_int_t)s.samples);
}

static json_t *json_rows(const struct top_ctx *c, unsigned limit)
{
	json_t *arr = json_array();

	for (size_t i = 0; i < c->nr_rows && (!limit || i < limit); i++) {
		const struct rsp_flatprof_row *r = &c->rows[i];
		json_t *o = json_pack(
			"{s:o, s:s, s:s, s:o, s:I, s:f, s:f}", "name", rsp_json__name(r->name),
			"match", match_name(r->match), "kind", kind_name(r->kind), "object",
			rsp_json__name(r->object), "samples", (json_int_t)r->samples, "percent",
			pct(r->samples, c->tot->samples), "cpu_s", (double)r->period / 1e9);

		if (r->why)
			json_object_set_new(o, "why", json_string(r->why));
		if (r->spin_samples)
			json_object_set_new(o, "spinning_samples",
					    json_integer((json_int_t)r->spin_samples));
		if (c->sl)
			json_object_set_new(o, "source", json_row_source(c, r));
		json_array_append_new(arr, o);
	}
	return arr;
}

/* The samples in known spin loops (rsp/spin.h): busy waiting, by loop. */
static json_t *json_spinning(const struct top_ctx *c)
{
	json_t *loops = json_array();

	for (size_t i = 0; i < c->nr_spins; i++)
		json_array_append_new(loops, json_pack("{s:s, s:I, s:f, s:f}", "name",
						       c->spins[i].name, "samples",
						       (json_int_t)c->spins[i].samples, "percent",
						       pct(c->spins[i].samples, c->tot->samples),
						       "cpu_s", (double)c->spins[i].period / 1e9));
	return json_pack("{s:I, s:f, s:f, s:o}", "samples", (json_int_t)c->tot->spin_samples,
			 "percent", pct(c->tot->spin_samples, c->tot->samples), "cpu_s",
			 (double)c->tot->spin_period / 1e9, "loops", loops);
}

static json_t *json_procs(const struct top_ctx *c)
{
	json_t *arr = json_array();
	size_t shown = 0;

	for (size_t i = 0; i < c->nr_procs && shown < TOP_PROCS; i++) {
		const struct rsp_flatprof_proc *pr = &c->procs[i];

		if ((c->req->pid >= 0 && pr->pid != (uint32_t)c->req->pid) || pr->outside)
			continue;
		json_t *o = json_pack("{s:i, s:I, s:I, s:I}", "pid", (int)pr->pid, "samples",
				      (json_int_t)pr->samples, "user",
				      (json_int_t)(pr->samples - pr->kernel), "kernel",
				      (json_int_t)pr->kernel);

		if (pr->hidden)
			json_object_set_new(o, "other_user", json_true());
		else if (pr->comm)
			json_object_set_new(o, "comm", rsp_json__name(pr->comm));
		if (!pr->hidden)
			rsp_cgroupq__json(o, model(c), pr->pid, pr->last);
		json_array_append_new(arr, o);
		shown++;
	}
	return arr;
}

static const char *comm_label(bool hidden, const char *comm, char *buf, size_t n)
{
	return hidden ? "(other user)" : comm ? rsp_fmt__name(buf, n, comm) : "?";
}

static json_t *json_threads(const struct top_ctx *c, unsigned limit)
{
	json_t *arr = json_array();

	for (size_t i = 0; i < c->nr_threads && (!limit || i < limit); i++) {
		const struct rsp_flatprof_thread *t = &c->threads[i];
		json_t *o = json_pack("{s:i, s:i, s:I, s:I, s:f, s:f}", "tid", (int)t->tid, "pid",
				      (int)t->pid, "samples", (json_int_t)t->samples, "kernel",
				      (json_int_t)t->kernel, "percent",
				      pct(t->samples, c->tot->samples), "cpu_s",
				      (double)t->period / 1e9);

		if (t->hidden)
			json_object_set_new(o, "other_user", json_true());
		else
			json_object_set_new(o, "comm", rsp_json__name(t->comm));
		if (!t->hidden)
			rsp_cgroupq__json(o, model(c), t->pid, proc_time(c, t->pid));
		json_array_append_new(arr, o);
	}
	return arr;
}

static json_t *json_by_cgroup(const struct top_ctx *c)
{
	json_t *arr = json_array();

	for (size_t i = 0; i < c->by.n; i++) {
		const struct rsp_cgroupq_row *r = &c->by.rows[i];

		json_array_append_new(arr, json_pack("{s:s, s:I, s:I, s:f, s:f, s:I}", "cgroup",
						     r->cgroup, "samples", (json_int_t)r->samples,
						     "kernel", (json_int_t)r->kernel, "percent",
						     pct(r->samples, c->tot->samples), "cpu_s",
						     (double)r->period / 1e9, "threads",
						     (json_int_t)r->threads));
	}
	return arr;
}

static json_t *json_comms(const struct top_ctx *c, unsigned limit)
{
	json_t *arr = json_array();

	for (size_t i = 0; i < c->nr_comms && (!limit || i < limit); i++) {
		const struct rsp_flatprof_comm *m = &c->comms[i];
		json_t *o = json_pack("{s:I, s:I, s:f, s:f}", "samples", (json_int_t)m->samples,
				      "kernel", (json_int_t)m->kernel, "percent",
				      pct(m->samples, c->tot->samples), "cpu_s",
				      (double)m->period / 1e9);

		if (m->hidden)
			json_object_set_new(o, "other_user", json_true());
		else
			json_object_set_new(o, "comm", rsp_json__name(m->comm));
		json_array_append_new(arr, o);
	}
	return arr;
}

static json_t *json_images(const struct top_ctx *c, unsigned limit)
{
	json_t *arr = json_array();

	for (size_t i = 0; i < c->nr_images && (!limit || i < limit); i++) {
		const struct rsp_flatprof_image *im = &c->images[i];

		json_array_append_new(arr, json_pack("{s:s?, s:s, s:I, s:f, s:f}", "object",
						     im->hidden ? NULL : im->object, "kind",
						     kind_name(im->kind), "samples",
						     (json_int_t)im->samples, "percent",
						     pct(im->samples, c->tot->samples), "cpu_s",
						     (double)im->period / 1e9));
	}
	return arr;
}

static json_t *json_stacks(const struct top_ctx *c)
{
	const struct top_opts *opts = c->req->opts;
	json_t *arr = json_array();
	char name[256];

	for (size_t i = 0; i < c->nr_stacks && i < opts->stacks; i++) {
		const struct rsp_flatprof_stack *r = &c->stacks[i];
		json_t *f = json_array();

		for (uint32_t k = 0; k < r->nr; k++) {
			const struct rsp_sym *sy = &r->frames[k].sym;

			json_array_append_new(
				f, json_pack("{s:s, s:s?, s:b}", "name",
					     rsp_sym__format(sy, false, name, sizeof(name)),
					     "object", sy->hidden ? NULL : sy->object, "kernel",
					     sy->kind == RSP_SYM_KERNEL));
		}
		json_array_append_new(
			arr, json_pack("{s:I, s:f, s:s, s:I, s:I, s:o}", "samples",
				       (json_int_t)r->samples, "percent",
				       pct(r->samples, c->tot->samples), "unwind", stack_method(r),
				       "dwarf", (json_int_t)r->by[RSP_UNWIND_DWARF], "fp",
				       (json_int_t)r->by[RSP_UNWIND_FP], "frames", f));
	}
	return arr;
}

/*
 * The rest of Prospect's "statistics of run": the range and what it held
 * before the filters, the sampling period, the gaps, the threads and
 * processes seen, and rspd's own CPU time in the range (its samples times
 * their period: sampled, so as exact as any other row; null when the
 * source does not say which process rspd was, as in a dump).
 */
static void json_stats_run(const struct top_ctx *c, json_t *o)
{
	const struct rsp_flatprof_totals *p = c->tot;
	const struct rsp_capture_info *ci = c->src->capture;

	json_object_set_new(o, "range_from_s",
			    json_real((double)(p->all_first ? p->all_first : c->from) / 1e9));
	json_object_set_new(o, "range_to_s", json_real((double)p->all_last / 1e9));
	json_object_set_new(o, "range_samples", json_integer((json_int_t)p->all_samples));
	json_object_set_new(o, "range_samples_kernel", json_integer((json_int_t)p->all_kernel));
	json_object_set_new(o, "range_samples_user",
			    json_integer((json_int_t)(p->all_samples - p->all_kernel)));
	json_object_set_new(o, "range_samples_idle", json_integer((json_int_t)p->idle));
	json_object_set_new(o, "sample_period_ns",
			    p->samples ? json_real((double)p->period / (double)p->samples)
				       : json_null());
	json_object_set_new(o, "sample_freq_hz",
			    ci ? json_integer((json_int_t)ci->sample_freq) : json_null());
	json_object_set_new(o, "lost_records_in_range", json_integer((json_int_t)p->lost_records));
	json_object_set_new(o, "lost_in_range", json_integer((json_int_t)p->lost));
	json_object_set_new(o, "threads_seen", json_integer((json_int_t)p->threads));
	json_object_set_new(o, "processes_seen", json_integer((json_int_t)p->procs));
	json_object_set_new(o, "rspd_cpu_s_in_range",
			    ci ? json_real((double)p->self_period / 1e9) : json_null());
}

static json_t *json_stats(const struct top_ctx *c)
{
	const struct rsp_capture_info *ci = c->src->capture;
	json_t *o =
		json_pack("{s:I, s:I, s:I, s:I, s:I, s:I, s:f, s:I, s:I}", "rspd_samples",
			  (json_int_t)c->tot->self_samples, "records_in_window",
			  (json_int_t)c->ws.records, "symbol_objects", (json_int_t)c->after.objects,
			  "symbol_objects_max", (json_int_t)c->after.max_objects, "symbol_hits",
			  (json_int_t)(c->after.hits - c->before.hits), "symbol_misses",
			  (json_int_t)(c->after.misses - c->before.misses), "resolve_ms",
			  c->resolve_ms, "model_processes", (json_int_t)c->after.maps.procs,
			  "model_bytes", (json_int_t)c->after.maps.bytes);
	uint64_t all = 0;

	for (size_t i = 0; i < c->nr_procs; i++)
		all += c->procs[i].outside ? 0 : c->procs[i].samples;
	json_object_set_new(o, "samples_all", json_integer((json_int_t)all));
	if (!ci) /* a dump does not say which process rspd was */
		json_object_set_new(o, "rspd_samples", json_null());
	json_stats_run(c, o);
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

static void json_filters(const struct top_ctx *c, json_t *o)
{
	const struct top_opts *opts = c->req->opts;

	if (opts->tid >= 0)
		json_object_set_new(o, "query_tid", json_integer(opts->tid));
	if (opts->comm[0])
		json_object_set_new(o, "query_comm", json_string(opts->comm));
	if (c->req->cgroup)
		json_object_set_new(o, "query_cgroup", json_string(c->req->cgroup));
	if (c->req->container)
		json_object_set_new(o, "query_container", json_string(c->req->container));
	json_object_set_new(o, "frames",
			    json_string(opts->mode == RSP_FLATPROF_KERNEL_ONLY ? "kernel"
					: opts->mode == RSP_FLATPROF_USER_ONLY ? "user"
									       : "all"));
}

static int render_json(const struct top_ctx *c, struct rsp_buf *out)
{
	const struct top_opts *opts = c->req->opts;
	const struct rsp_flatprof_totals *p = c->tot;
	json_t *o = json_object();

	json_object_set_new(o, "from_s", json_real((double)(p->first ? p->first : c->from) / 1e9));
	json_object_set_new(o, "to_s", json_real((double)p->last / 1e9));
	if (c->req->pid >= 0)
		json_object_set_new(o, "query_pid", json_integer(c->req->pid));
	json_object_set_new(o, "samples", json_integer((json_int_t)p->samples));
	json_object_set_new(o, "samples_kernel", json_integer((json_int_t)p->kernel));
	json_object_set_new(o, "samples_user", json_integer((json_int_t)(p->samples - p->kernel)));
	json_object_set_new(o, "cpu_s", json_real((double)p->period / 1e9));
	json_object_set_new(o, "processes", json_procs(c));
	json_object_set_new(o, "other_users", json_boolean(rsp_source__system_wide(c->src)));
	json_object_set_new(o, "kernel_symbols", json_boolean(rsp_source__kernel_symbols(c->src)));
	if (c->src->access.restricted)
		json_object_set_new(o, "perf_event_paranoid",
				    json_integer(c->src->access.paranoid));
	json_object_set_new(o, "symbols", json_rows(c, opts->limit));
	json_object_set_new(o, "spinning", json_spinning(c));
	json_object_set_new(o, "threads", json_threads(c, opts->limit));
	json_object_set_new(o, "comms", json_comms(c, opts->limit));
	json_object_set_new(o, "images", json_images(c, opts->limit));
	json_filters(c, o);
	if (opts->by_cgroup)
		json_object_set_new(o, "by_cgroup", json_by_cgroup(c));
	if (opts->annotate[0])
		json_object_set_new(o, "annotate", json_annotate(c));
	if (opts->lines) /* samples at addresses past the bound: in no row's lines */
		json_object_set_new(o, "lines_samples_dropped",
				    json_integer((json_int_t)c->tot->lines_dropped));
	if (opts->stacks) {
		json_object_set_new(o, "stacks", json_stacks(c));
		json_object_set_new(o, "user_stacks",
				    json_pack("{s:I, s:I, s:I}", "dwarf",
					      (json_int_t)p->by[RSP_UNWIND_DWARF], "fp",
					      (json_int_t)p->by[RSP_UNWIND_FP], "none",
					      (json_int_t)p->by[RSP_UNWIND_NONE]));
	}
	json_object_set_new(o, "statistics", json_stats(c));
	return rsp_json__emit(o, out);
}

/* What perf_event_paranoid keeps from a restricted requester (rsp/query.h). */
static void text_paranoid(const struct rsp_source *src, struct rsp_buf *out)
{
	bool all = rsp_source__system_wide(src), kernel = rsp_source__kernel_symbols(src);

	if (all && kernel)
		return;
	rsp_buf__printf(out, "  perf_event_paranoid %d: %s%s%s are not shown to you\n",
			src->access.paranoid, all ? "" : "other users' processes",
			!all && !kernel ? " and " : "", kernel ? "" : "kernel functions");
}

/* What --tid, --comm, --kernel, --user left out, in one line. */
static void text_filters(const struct top_ctx *c, struct rsp_buf *out)
{
	const struct top_opts *o = c->req->opts;

	if (c->req->cgroup)
		rsp_buf__printf(out, "  only cgroup %s\n", c->req->cgroup);
	if (c->req->container)
		rsp_buf__printf(out, "  only container %s\n", c->req->container);
	if (o->tid < 0 && !o->comm[0] && !o->mode)
		return;
	rsp_buf__puts(out, "  only");
	if (o->tid >= 0)
		rsp_buf__printf(out, " thread %ld", o->tid);
	if (o->comm[0])
		rsp_buf__printf(out, "%s command %s", o->tid >= 0 ? "," : "", o->comm);
	if (o->mode)
		rsp_buf__printf(out, "%s %s frames", o->tid >= 0 || o->comm[0] ? "," : "",
				o->mode == RSP_FLATPROF_KERNEL_ONLY ? "kernel" : "user");
	rsp_buf__puts(out, "\n");
}

static void text_header(const struct top_ctx *c, struct rsp_buf *out)
{
	const struct rsp_flatprof_totals *p = c->tot;
	const struct rsp_capture_info *ci = c->src->capture;
	double span = p->last > p->first ? (double)(p->last - p->first) / 1e9 : 0.0;

	if (c->req->pid >= 0) {
		const struct rsp_flatprof_proc *pr =
			rsp_flatprof__proc(c->prof, (uint32_t)c->req->pid);
		const char *comm =
			pr && pr->comm ? pr->comm
				       : rsp_maps__comm_at(rsp_symbolizer__maps(c->src->symbols),
							   (uint32_t)c->req->pid, c->src->now);

		char name[RSP_FMT_NAME_MAX];

		rsp_buf__printf(out, "process %ld (%s): ", c->req->pid,
				comm_label(false, comm, name, sizeof(name)));
	} else {
		rsp_buf__puts(out, rsp_source__system_wide(c->src) ? "all processes: "
								   : "your processes: ");
	}
	rsp_buf__printf(out, "%llu cpu-clock samples over %.1f s\n", (unsigned long long)p->samples,
			span);
	if (ci && ci->sample_freq)
		rsp_buf__printf(out, "  %u Hz per CPU; ", ci->sample_freq);
	else
		rsp_buf__puts(out, "  ");
	rsp_buf__printf(out, "%.2f s of CPU; %.0f%% in the kernel\n", (double)p->period / 1e9,
			pct(p->kernel, p->samples));
	text_filters(c, out);
	text_paranoid(c->src, out);
}

static void text_procs(const struct top_ctx *c, struct rsp_buf *out)
{
	uint64_t all = 0;

	for (size_t i = 0; i < c->nr_procs; i++)
		all += c->procs[i].samples;
	rsp_buf__printf(out,
			"\n     pid comm              samples      %%     user   kernel  cgroup\n");
	for (size_t i = 0, shown = 0; i < c->nr_procs && shown < TOP_PROCS; i++) {
		const struct rsp_flatprof_proc *pr = &c->procs[i];
		char cg[128], name[RSP_FMT_NAME_MAX];

		if (pr->outside)
			continue;
		shown++;
		rsp_buf__printf(out, "%8u %-16.16s %8llu %5.1f%% %8llu %8llu  %s\n", pr->pid,
				!pr->pid ? "[idle]"
					 : comm_label(pr->hidden, pr->comm, name, sizeof(name)),
				(unsigned long long)pr->samples, pct(pr->samples, all),
				(unsigned long long)(pr->samples - pr->kernel),
				(unsigned long long)pr->kernel,
				pr->hidden ? ""
					   : rsp_cgroupq__text(model(c), pr->pid, pr->last, 32, cg,
							       sizeof(cg)));
	}
}

/* --by cgroup: the samples counted, by the cgroup of their process. */
static void text_by_cgroup(const struct top_ctx *c, struct rsp_buf *out)
{
	rsp_buf__puts(out, "\nby cgroup\n samples      %   seconds   kernel  threads  cgroup\n");
	for (size_t i = 0; i < c->by.n; i++) {
		const struct rsp_cgroupq_row *r = &c->by.rows[i];

		rsp_buf__printf(out, "%8llu %5.1f%% %9.2f %8llu %8llu  %s\n",
				(unsigned long long)r->samples, pct(r->samples, c->tot->samples),
				(double)r->period / 1e9, (unsigned long long)r->kernel,
				(unsigned long long)r->threads, r->cgroup);
	}
}

/* A row's object column: none for another user's hidden frames, "[kernel]" for hidden kernel ones.
 */
static const char *object_of(const struct rsp_flatprof_row *r, char *buf, size_t n)
{
	if (!r->hidden)
		return basename_of(r->object, buf, n);
	return r->kind == RSP_SYM_KERNEL ? "[kernel]" : "";
}

static void text_row_source(const struct top_ctx *c, const struct rsp_flatprof_row *r,
			    struct rsp_buf *out)
{
	struct row_src s;
	char file[256];

	if (r->kind != RSP_SYM_USER || r->hidden || !r->name)
		return;
	if (row_source(c, r, &s) > 0)
		rsp_buf__printf(out, "                 at %.40s:%d (%.0f%% of its samples)\n",
				basename_of(s.file, file, sizeof(file)), s.line,
				pct(s.samples, r->samples));
	else
		rsp_buf__puts(out, "                 at an unknown line (no DWARF line table)\n");
}

static void text_rows(const struct top_ctx *c, struct rsp_buf *out)
{
	const struct top_opts *opts = c->req->opts;
	const struct rsp_flatprof_totals *p = c->tot;
	char name[256], obj[256];

	rsp_buf__puts(out, "\n samples      %  function                              object\n");
	for (size_t i = 0; i < c->nr_rows && (!opts->limit || i < opts->limit); i++) {
		const struct rsp_flatprof_row *r = &c->rows[i];
		const char *label = row_label(r, name, sizeof(name));
		size_t len = strlen(label);

		if (len > 37)
			rsp_buf__printf(out, "%8llu %5.1f%%  %.34s... %s\n",
					(unsigned long long)r->samples, pct(r->samples, p->samples),
					label, basename_of(r->object, obj, sizeof(obj)));
		else
			rsp_buf__printf(out, "%8llu %5.1f%%  %-37s %s\n",
					(unsigned long long)r->samples, pct(r->samples, p->samples),
					label, object_of(r, obj, sizeof(obj)));
		if (opts->lines)
			text_row_source(c, r, out);
	}
	if (opts->limit && c->nr_rows > opts->limit)
		rsp_buf__printf(out, "(%zu more; --limit 0 shows all)\n", c->nr_rows - opts->limit);
	if (opts->lines && p->lines_dropped)
		rsp_buf__printf(out, "(%llu samples at addresses past the bound have no line)\n",
				(unsigned long long)p->lines_dropped);
}

/*
 * The samples in known spin loops, on a line of their own: busy waiting,
 * which the rows above count as any function's work. The rows stay as
 * they were, so that a function's share reads the same with or without it.
 */
static void text_spinning(const struct top_ctx *c, struct rsp_buf *out)
{
	if (!c->tot->spin_samples)
		return;
	rsp_buf__printf(out, "spinning (busy waiting): %llu samples, %.1f%%, in",
			(unsigned long long)c->tot->spin_samples,
			pct(c->tot->spin_samples, c->tot->samples));
	for (size_t i = 0; i < c->nr_spins && i < 3; i++)
		rsp_buf__printf(out, "%s %.40s %.1f%%", i ? "," : "", c->spins[i].name,
				pct(c->spins[i].samples, c->tot->samples));
	rsp_buf__puts(out, c->nr_spins > 3 ? ", ...\n" : "\n");
}

/* Rows of a breakdown: --limit, at most TOP_PROCS. */
static size_t breakdown_rows(const struct top_ctx *c, size_t n)
{
	unsigned limit = ((const struct top_opts *)c->req->opts)->limit;
	size_t max = limit && limit < TOP_PROCS ? limit : TOP_PROCS;

	return n < max ? n : max;
}

static void text_more(size_t shown, size_t n, struct rsp_buf *out)
{
	if (n > shown)
		rsp_buf__printf(out, "(%zu more; --json --limit 0 lists all)\n", n - shown);
}

/* Per thread, per command, per image: samples and the seconds they stand for. */
static void text_breakdowns(const struct top_ctx *c, struct rsp_buf *out)
{
	const struct rsp_flatprof_totals *p = c->tot;
	size_t n = breakdown_rows(c, c->nr_threads);
	char name[256];

	rsp_buf__puts(out, "\nby thread\n     tid      pid comm              samples      %  "
			   " seconds   kernel\n");
	for (size_t i = 0; i < n; i++) {
		const struct rsp_flatprof_thread *t = &c->threads[i];

		rsp_buf__printf(out, "%8u %8u %-16.16s %8llu %5.1f%% %8.2f %8llu\n", t->tid, t->pid,
				comm_label(t->hidden, t->comm, name, sizeof(name)),
				(unsigned long long)t->samples, pct(t->samples, p->samples),
				(double)t->period / 1e9, (unsigned long long)t->kernel);
	}
	text_more(n, c->nr_threads, out);
	n = breakdown_rows(c, c->nr_comms);
	rsp_buf__puts(out, "\nby command\ncomm               samples      %   seconds   kernel\n");
	for (size_t i = 0; i < n; i++) {
		const struct rsp_flatprof_comm *m = &c->comms[i];

		rsp_buf__printf(out, "%-16.16s %9llu %5.1f%% %9.2f %8llu\n",
				comm_label(m->hidden, m->comm, name, sizeof(name)),
				(unsigned long long)m->samples, pct(m->samples, p->samples),
				(double)m->period / 1e9, (unsigned long long)m->kernel);
	}
	text_more(n, c->nr_comms, out);
	n = breakdown_rows(c, c->nr_images);
	rsp_buf__puts(out, "\nby image\n samples      %   seconds  image\n");
	for (size_t i = 0; i < n; i++) {
		const struct rsp_flatprof_image *im = &c->images[i];

		rsp_buf__printf(out, "%8llu %5.1f%% %9.2f  %.50s\n",
				(unsigned long long)im->samples, pct(im->samples, p->samples),
				(double)im->period / 1e9,
				im->hidden   ? "(other user)"
				: im->object ? basename_of(im->object, name, sizeof(name))
					     : "[unknown]");
	}
	text_more(n, c->nr_images, out);
}

static void text_stacks(const struct top_ctx *c, struct rsp_buf *out)
{
	const struct top_opts *opts = c->req->opts;
	const struct rsp_flatprof_totals *p = c->tot;
	char name[256], obj[256];

	rsp_buf__printf(out,
			"\nheaviest stacks (user frames: %llu samples by DWARF, %llu by frame "
			"pointers)\n",
			(unsigned long long)p->by[RSP_UNWIND_DWARF],
			(unsigned long long)p->by[RSP_UNWIND_FP]);
	for (size_t i = 0; i < c->nr_stacks && i < opts->stacks; i++) {
		const struct rsp_flatprof_stack *r = &c->stacks[i];

		rsp_buf__printf(out, "%8llu %5.1f%%  (%s)\n", (unsigned long long)r->samples,
				pct(r->samples, p->samples), stack_method(r));
		for (uint32_t k = 0; k < r->nr && k < 24; k++) {
			const struct rsp_sym *sy = &r->frames[k].sym;

			rsp_buf__printf(out, "                %.42s %s\n",
					rsp_sym__format(sy, false, name, sizeof(name)),
					sy->hidden ? ""
						   : basename_of(sy->object, obj, sizeof(obj)));
		}
	}
}

/*
 * The range and what it held before the filters (Prospect's "statistics of
 * run"). Seconds are the samples' periods added up: a cpu-clock sample's
 * period is the CPU time in nanoseconds since the previous one (about
 * 1/freq s). rspd's cost in the range is its own samples: unknown in a
 * dump, which does not say which process rspd was.
 */
static void text_stats_run(const struct top_ctx *c, struct rsp_buf *out)
{
	const struct rsp_flatprof_totals *p = c->tot;
	const struct rsp_capture_info *ci = c->src->capture;
	uint64_t from = p->all_first ? p->all_first : c->from;
	double span = p->all_last > from ? (double)(p->all_last - from) / 1e9 : 0.0;

	rsp_buf__printf(out, "  range: %.3f .. %.3f s (%.1f s of samples)\n", (double)from / 1e9,
			(double)p->all_last / 1e9, span);
	rsp_buf__printf(out, "  samples: %llu (user %llu, kernel %llu, of which idle %llu)\n",
			(unsigned long long)p->all_samples,
			(unsigned long long)(p->all_samples - p->all_kernel),
			(unsigned long long)p->all_kernel, (unsigned long long)p->idle);
	if (ci && ci->sample_freq)
		rsp_buf__printf(out, "  sampling: cpu-clock %u Hz per CPU", ci->sample_freq);
	else
		rsp_buf__puts(out, "  sampling: cpu-clock, frequency unknown");
	if (p->samples)
		rsp_buf__printf(out, ", mean period %.2f ms\n",
				(double)p->period / (double)p->samples / 1e6);
	else
		rsp_buf__puts(out, "\n");
	rsp_buf__printf(out, "  seen: %llu processes, %llu threads sampled\n",
			(unsigned long long)p->procs, (unsigned long long)p->threads);
	rsp_buf__printf(out, "  gaps in the range: %llu, %llu records lost\n",
			(unsigned long long)p->lost_records, (unsigned long long)p->lost);
	if (ci)
		rsp_buf__printf(out, "  rspd in the range: %.2f s of CPU (%.2f%% of one CPU)\n",
				(double)p->self_period / 1e9,
				span > 0 ? 100.0 * (double)p->self_period / 1e9 / span : 0.0);
	else
		rsp_buf__puts(out, "  rspd in the range: unknown (the source does not say which "
				   "process rspd was)\n");
}

static void text_stats(const struct top_ctx *c, struct rsp_buf *out)
{
	const struct rsp_capture_info *ci = c->src->capture;
	char rss[32];

	rsp_buf__puts(out, "\nstatistics of run\n");
	text_stats_run(c, out);
	if (ci)
		rsp_buf__printf(out, "  samples of rspd itself: %llu; ",
				(unsigned long long)c->tot->self_samples);
	else
		rsp_buf__puts(out, "  samples of rspd itself: unknown; ");
	rsp_buf__printf(out, "records in the window: %llu\n", (unsigned long long)c->ws.records);
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

/* --annotate: each instruction of the function with its samples and source line. */
static void text_annotate(const struct top_ctx *c, struct rsp_buf *out)
{
	const struct rsp_flatprof_totals *p = c->tot;
	const struct top_opts *opts = c->req->opts;
	const struct rsp_annotate *a = c->ann;
	char src[64], obj[256];

	if (!a) {
		rsp_buf__printf(out,
				"\nno samples in a function named %s (names as top shows "
				"them, exact matches only)\n",
				opts->annotate);
		return;
	}
	rsp_buf__printf(out, "\n%s in %s: %llu samples, 0x%llx, %llu bytes%s\n", opts->annotate,
			basename_of(c->ann_path, obj, sizeof(obj)),
			(unsigned long long)p->annotate_samples, (unsigned long long)a->start,
			(unsigned long long)a->size,
			a->truncated ? " (only the first part shown)" : "");
	rsp_buf__puts(out, "  code read from the file on disk (capstone), lines from its DWARF "
			   "(libdw)\n");
	if (p->annotate_other_objects || a->off_insn || p->annotate_dropped)
		rsp_buf__printf(out,
				"  not placed: %llu samples in another object, %llu off "
				"instructions, %llu past the limit\n",
				(unsigned long long)p->annotate_other_objects,
				(unsigned long long)a->off_insn,
				(unsigned long long)p->annotate_dropped);
	rsp_buf__puts(out, "\n samples      %   address  instruction                    source\n");
	for (size_t i = 0; i < a->n; i++) {
		const struct rsp_annotate_insn *d = &a->insns[i];

		if (d->file)
			snprintf(src, sizeof(src), "%.40s:%d",
				 basename_of(d->file, obj, sizeof(obj)), d->line);
		else
			snprintf(src, sizeof(src), "?");
		rsp_buf__printf(out, "%8llu %5.1f%% %9llx  %-30.30s %.20s\n",
				(unsigned long long)d->samples,
				pct(d->samples, p->annotate_samples), (unsigned long long)d->addr,
				d->text, src);
	}
}

static void render_text(const struct top_ctx *c, struct rsp_buf *out)
{
	const struct top_opts *o = c->req->opts;

	text_header(c, out);
	/* --tid, --comm: the breakdowns by thread and command say where the samples went */
	if (c->req->pid < 0 && o->tid < 0 && !o->comm[0])
		text_procs(c, out);
	if (o->by_cgroup && c->tot->samples)
		text_by_cgroup(c, out);
	if (!c->tot->samples) {
		rsp_buf__printf(out, "\nno cpu-clock samples%s in the window%s\n",
				c->req->pid >= 0 ? " of this process" : "",
				c->src->capture && !c->src->capture->sample_freq
					? " (sampling is off: rspd --freq 0)"
					: "");
	} else if (((const struct top_opts *)c->req->opts)->annotate[0]) {
		text_annotate(c, out);
	} else {
		text_rows(c, out);
		text_spinning(c, out);
		text_breakdowns(c, out);
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

/* Another user's process: its user frames are not named (the access rule). */
static bool hidden(void *ctx, uint32_t pid)
{
	return rsp_redact__hidden(ctx, pid, pid);
}

/* How far a process's first samples may precede its FORK record (below). */
#define FORK_RACE_NS 50000000ull

/*
 * --cgroup, --container: whether the process is profiled, decided at its
 * first sample (@time). A child's first samples can carry times before its
 * parent's PERF_RECORD_FORK (the child runs on another CPU before the
 * parent's fork record is stamped; seen under load): the model then has no
 * incarnation of @pid at @time, or an older one. The incarnation born just
 * after @time (within FORK_RACE_NS) is that process, so it decides.
 */
static bool keep(void *ctx, uint32_t pid, uint64_t time)
{
	const struct top_ctx *c = ctx;
	const struct rsp_maps *m = model(c);
	uint64_t late = time + FORK_RACE_NS, born;

	if (!pid)
		return false;
	if (rsp_request__cgroup_keeps(c->req, m, pid, time))
		return true;
	born = m ? rsp_maps__birth(m, pid, late) : UINT64_MAX;
	return born != UINT64_MAX && born > time && born <= late &&
	       rsp_request__cgroup_keeps(c->req, m, pid, late);
}

/* --by cgroup: the thread rows (after every filter) grouped by their process's cgroup. */
static int group_by_cgroup(struct top_ctx *c)
{
	for (size_t i = 0; i < c->nr_threads; i++) {
		const struct rsp_flatprof_thread *t = &c->threads[i];
		const char *cg = t->hidden ? "(other user)"
				 : !t->pid
					 ? "(idle)"
					 : rsp_maps__cgroup(model(c), t->pid, proc_time(c, t->pid));

		if (rsp_cgroupq_by__add(&c->by, cg ? cg : "(unknown)", t->samples, t->kernel,
					t->period, true))
			return -ENOMEM;
	}
	rsp_cgroupq_by__sort(&c->by);
	return 0;
}

/* The profile of the asked range, and the symbolizer's work for it. */
static int profile(struct top_ctx *c, struct rsp_redact *r)
{
	const struct rsp_request *req = c->req;
	const struct rsp_source *src = c->src;
	const struct top_opts *topts = req->opts;
	struct rsp_flatprof_opts o = {.from = req->last_ns && src->now > req->last_ns
						      ? src->now - req->last_ns
						      : req->from_ns,
				      .to = req->to_ns,
				      .pid = req->pid,
				      .self_pid = src->capture ? (uint32_t)src->capture->pid : 0,
				      .stacks = ((const struct top_opts *)req->opts)->stacks > 0,
				      .sym = src->symbols,
				      .hidden = hidden,
				      .hidden_ctx = r,
				      .own_only = !rsp_source__system_wide(src),
				      .hide_kernel = !rsp_source__kernel_symbols(src),
				      .tid = topts->tid,
				      .comm = topts->comm[0] ? topts->comm : NULL,
				      .mode = topts->mode,
				      .annotate = topts->annotate[0] ? topts->annotate : NULL,
				      .lines = topts->lines,
				      .keep = req->cgroup || req->container ? keep : NULL,
				      .keep_ctx = c,
				      .spin = rsp_request__spin(req, &c->spin)};
	struct rsp_wsnap *snap = rsp_window__pin(src->window, o.from, o.to ? o.to : UINT64_MAX);
	struct timespec t0;

	if (topts->speedscope[0] || topts->pprof[0])
		o.stacks = o.stacks_by_thread = true; /* rsp_top__speedscope(), rsp_top__pprof() */
	c->from = o.from;
	rsp_window__stats(src->window, &c->ws);
	rsp_symbolizer__stats(src->symbols, &c->before);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	c->prof = snap ? rsp_flatprof__new(src->schema, snap, &o) : NULL;
	c->resolve_ms = ms_since(&t0);
	rsp_symbolizer__stats(src->symbols, &c->after);
	rsp_wsnap__unpin(snap);
	if (!c->prof)
		return -ENOMEM;
	c->tot = rsp_flatprof__totals(c->prof);
	c->rows = rsp_flatprof__rows(c->prof, &c->nr_rows);
	c->procs = rsp_flatprof__procs(c->prof, &c->nr_procs);
	c->stacks = rsp_flatprof__stacks(c->prof, &c->nr_stacks);
	c->threads = rsp_flatprof__threads(c->prof, &c->nr_threads);
	c->comms = rsp_flatprof__comms(c->prof, &c->nr_comms);
	c->images = rsp_flatprof__images(c->prof, &c->nr_images);
	c->spins = rsp_flatprof__spins(c->prof, &c->nr_spins);
	return topts->by_cgroup ? group_by_cgroup(c) : 0;
}

/*
 * The answer with the speedscope and pprof files as parts (rsp/answer.h).
 * The profile was built by thread (stacks_by_thread), so --stacks beside
 * them lists a stack once per thread that ran it.
 */
static int render_with_files(struct top_ctx *c, struct rsp_buf *out, struct rsp_buf *err)
{
	const struct top_opts *o = c->req->opts;
	struct rsp_buf main = RSP_BUF_INIT, file = RSP_BUF_INIT;
	struct rsp_pprof_meta meta = {.comment = "rsp top: on-CPU, cpu-clock samples",
				      .default_type = "cpu"};
	uint64_t from, to;
	char title[64];
	int ret = 0;

	if (c->req->format == RSP_FMT_JSON)
		ret = render_json(c, &main);
	else
		render_text(c, &main), ret = main.error; /* a line lost for memory fails it */
	if (c->req->pid >= 0)
		snprintf(title, sizeof(title), "rsp top of pid %ld", c->req->pid);
	else
		snprintf(title, sizeof(title), "rsp top");
	if (!ret)
		ret = rsp_answer__begin(out);
	if (!ret)
		ret = rsp_answer__add(out, RSP_ANSWER_STDOUT, main.data, main.len);
	if (!ret && o->speedscope[0] && !(ret = rsp_top__speedscope(c->prof, title, &file)))
		ret = rsp_answer__add(out, "speedscope", file.data, file.len);
	rsp_buf__reset(&file);
	rsp_request__window_range(c->req, c->src, &from, &to);
	rsp_pprof_meta__range(&meta, c->src->capture && !c->src->offline, c->src->now, from, to);
	if (!ret && o->pprof[0] && !(ret = rsp_top__pprof(c->prof, model(c), &meta, &file)))
		ret = rsp_answer__add(out, "pprof", file.data, file.len);
	if (ret)
		rsp_buf__puts(err, "top: out of memory writing the files");
	rsp_buf__exit(&main);
	rsp_buf__exit(&file);
	return ret;
}

/*
 * --lines and --annotate: a cache of source lines for this query (at most
 * TOP_SRC_FILES files open), and the annotated function. Kernel functions
 * are not annotated: their code is not in a file rsp reads.
 */
#define TOP_SRC_FILES 16

/*
 * Is the file at @path the one the sample's mapping @v held? By build-id
 * when the mapping carried one (a copy of the same build is the same code),
 * else only the mapped path itself, by device and inode, not deleted since.
 */
static bool same_as_mapped(const char *path, const struct rsp_map_view *v)
{
	struct stat st;
	uint8_t id[20];
	int fd, n = 0;

	if (stat(path, &st) || !S_ISREG(st.st_mode))
		return false;
	if (v->build_id_size) {
		fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
		if (fd >= 0) {
			n = rsp_elfsyms__build_id_fd(fd, id);
			close(fd);
		}
		return n == v->build_id_size && !memcmp(id, v->build_id, (size_t)n);
	}
	return !v->deleted && !strcmp(path, v->path) && v->ino && (uint64_t)st.st_ino == v->ino &&
	       major(st.st_dev) == v->maj && minor(st.st_dev) == v->min;
}

/*
 * The file whose code to annotate: the one the first sample's process had
 * mapped (its path as mapped), or the symbolizer's object (the file the
 * symbols were read from: a copy of the same build) when that one is the
 * same build. A file replaced since is refused: its code is not what ran.
 */
static const char *annotate_path(const struct top_ctx *c, struct rsp_buf *err)
{
	const struct top_opts *opts = c->req->opts;
	const struct rsp_flatprof_totals *p = c->tot;
	struct rsp_map_view v;

	if (rsp_maps__find(rsp_symbolizer__maps(c->src->symbols), p->annotate_pid, p->annotate_time,
			   p->annotate_ip, &v) ||
	    !v.path || !v.path[0])
		return p->annotate_object; /* nothing to compare with: as the symbols */
	if (same_as_mapped(v.path, &v))
		return v.path;
	if (same_as_mapped(p->annotate_object, &v))
		return p->annotate_object;
	rsp_buf__printf(err,
			"top: %s is not the file that was mapped when %s was sampled (%s): its "
			"code now is not the code that ran, so it is not annotated",
			v.path, opts->annotate,
			v.build_id_size ? "another build-id" : "replaced or deleted since");
	return NULL;
}

static int sources(struct top_ctx *c, struct rsp_buf *err)
{
	const struct top_opts *opts = c->req->opts;
	const struct rsp_flatprof_totals *p = c->tot;
	const struct rsp_sampled_addr *addrs;
	const char *path;
	size_t n;

	if (!opts->lines && !opts->annotate[0])
		return 0;
	c->sl = rsp_srclines__new(NULL, TOP_SRC_FILES);
	if (!c->sl) {
		rsp_buf__puts(err, "top: out of memory for the source lines");
		return -ENOMEM;
	}
	if (!opts->annotate[0] || !p->annotate_samples)
		return 0;
	if (!p->annotate_object || p->annotate_object[0] != '/') {
		rsp_buf__printf(err,
				"top: %s is in %s: --annotate reads the code of executables and "
				"libraries from their files, not the kernel's or JIT code",
				opts->annotate,
				p->annotate_object ? p->annotate_object : "no file");
		return -EINVAL;
	}
	path = annotate_path(c, err);
	if (!path)
		return -ESTALE;
	snprintf(c->ann_path, sizeof(c->ann_path), "%s", path);
	addrs = rsp_flatprof__addrs(c->prof, &n);
	c->ann = rsp_annotate__new(c->ann_path, opts->annotate, NULL, addrs, n, c->sl, 0, err);
	return c->ann ? 0 : -EINVAL;
}

static int top_run(const struct rsp_request *req, const struct rsp_source *src, struct rsp_buf *out,
		   struct rsp_buf *err)
{
	struct top_ctx c = {.req = req, .src = src};
	struct rsp_redact r;
	uint64_t from, to;
	int ret;

	if (!src->symbols) {
		rsp_buf__puts(err, "top: this source has no process model to name functions with");
		return -EOPNOTSUPP;
	}
	if ((req->cgroup || req->container) && src->offline &&
	    !(src->dump && src->dump->has_cgroups)) {
		rsp_buf__puts(err, "top: --cgroup and --container need the cgroup of each process, "
				   "which this file does not carry (perf or an older rspd wrote "
				   "it); ask rspd, or dump again");
		return -EOPNOTSUPP;
	}
	if (req->pid >= 0 && (ret = rsp_source__check_pid(src, "top", req->pid, err)))
		return ret;
	rsp_request__window_range(req, src, &from, &to);
	if (req->pid >= 0 && (ret = rsp_source__check_seen(src, "top", req->pid, from, to, err)))
		return ret;
	rsp_redact__init(&r, &src->access);
	ret = profile(&c, &r);
	if (ret)
		rsp_buf__puts(err, "top: out of memory building the profile");
	else
		ret = sources(&c, err);
	if (!ret && (((const struct top_opts *)req->opts)->speedscope[0] ||
		     ((const struct top_opts *)req->opts)->pprof[0]))
		ret = render_with_files(&c, out, err);
	else if (!ret && req->format == RSP_FMT_JSON)
		ret = render_json(&c, out);
	else if (!ret)
		render_text(&c, out);
	rsp_annotate__delete(c.ann);
	rsp_srclines__delete(c.sl);
	rsp_flatprof__delete(c.prof);
	rsp_cgroupq_by__exit(&c.by);
	rsp_redact__exit(&r);
	return ret;
}

const struct rsp_command rsp_cmd_top = {
	.name = "top",
	.summary = "flat profile of the cpu-clock samples, by function",
	.usage = "usage: rspctl top [--pid PID] [--tid TID] [--comm NAME] [--kernel | --user]\n"
		 "                  [--lines] [--annotate FUNCTION]\n"
		 "                  [--last DURATION | --from T --to T]\n"
		 "                  [--limit N] [--stacks N] [--json]\n"
		 "                  [--speedscope FILE] [--pprof FILE]\n"
		 "                  [--cgroup PATH] [--container ID] [--by cgroup]\n"
		 "                  [--spin-symbol NAME]...\n"
		 "\n"
		 "Functions where the sampled CPU time went, user and kernel, named at\n"
		 "query time (processes that have exited too). A stripped library shows\n"
		 "'a->b': the sample lies between its exported functions a and b. Then\n"
		 "the same samples by thread, by command and by image (the executable or\n"
		 "library sampled), in samples and seconds (each cpu-clock sample stands\n"
		 "for its period of CPU time), and the statistics of the run.\n"
		 "\n"
		 "  --pid PID        only this process (default: all, with a summary; a\n"
		 "                   user outside rspd's admin group sees what\n"
		 "                   perf_event_paranoid allows: at 1 only their own\n"
		 "                   processes, at 2 and more also no kernel functions)\n"
		 "  --last DURATION  only the last DURATION of the window, e.g. 10s\n"
		 "  --from T, --to T only [T, T] of the window, in seconds as 'rspctl\n"
		 "                   status' shows it\n"
		 "  --tid TID        only this thread (0: the idle task)\n"
		 "  --comm NAME      only processes of this command name (as 'ps -o comm'\n"
		 "                   shows it, at most 15 bytes)\n"
		 "  --kernel         only samples taken in the kernel: with no --pid, the\n"
		 "                   global kernel profile of all processes\n"
		 "  --user           only samples taken in user mode\n"
		 "  --lines          each user function's hottest source line (DWARF of\n"
		 "                   the file or of its debug file, through libdw)\n"
		 "  --annotate FUNC  the instructions of FUNC (a user function, exact name)\n"
		 "                   with their samples and source lines, its code read\n"
		 "                   from the file on disk; with --pid, of that process\n"
		 "  --limit N        rows to show (20; 0: all); the breakdowns by thread,\n"
		 "                   command and image show at most 10 in text\n"
		 "  --stacks N       also the N heaviest whole stacks, user frames unwound\n"
		 "                   with DWARF where the sample copied its stack (rspd\n"
		 "                   --dwarf), else by frame pointers; each says which\n"
		 "  --json           JSON output (same as --format json)\n"
		 "  --speedscope FILE  also write the samples in speedscope's format\n"
		 "                   (www.speedscope.app): per thread its stacks, each\n"
		 "                   weighing its samples; written by rspctl\n"
		 "  --pprof FILE     also write the samples as a pprof profile (go tool\n"
		 "                   pprof, Pyroscope, Parca): sample types samples and\n"
		 "                   cpu nanoseconds, per stack and thread, labels\n"
		 "                   thread, process, cgroup; written by rspctl\n"
		 "  --cgroup PATH    only processes in this cgroup v2 subtree (the path\n"
		 "                   /proc/PID/cgroup shows, read at each process's fork\n"
		 "                   and exec)\n"
		 "  --container ID   only processes of this container (its id or a prefix\n"
		 "                   of 12 or more hex digits, as 'docker ps' shows it)\n"
		 "  --by cgroup      also the samples by cgroup\n"
		 "  --spin-symbol NAME  a function that spins (repeatable), beside glibc's\n"
		 "                   pthread_spin_lock and sched_yield: samples in it\n"
		 "                   (the sampled function or the first 3 user frames)\n"
		 "                   are counted as spinning (busy waiting)\n"
		 "\n"
		 "EXAMPLES\n"
		 "  rspctl top\n"
		 "  rspctl top --pid 1234 --last 5s\n"
		 "  rspctl top --json --limit 0\n"
		 "  rspctl top --pid 1234 --stacks 5\n"
		 "  rspctl top --pid 1234 --last 5s --speedscope 1234.speedscope.json\n"
		 "  rspctl top --last 30s --pprof cpu.pb.gz && go tool pprof -top cpu.pb.gz\n"
		 "  rspctl top --kernel --last 10s\n"
		 "  rspctl top --comm postgres --user\n"
		 "  rspctl top --pid 1234 --lines\n"
		 "  rspctl top --pid 1234 --annotate burn_hot\n"
		 "  rspctl top --cgroup /system.slice/nginx.service --by cgroup\n",
	.common = RSP_COPT_FORMAT | RSP_COPT_PID | RSP_COPT_LAST | RSP_COPT_RANGE |
		  RSP_COPT_CGROUP | RSP_COPT_SPIN,
	.opts = top_opts,
	.opts_size = sizeof(struct top_opts),
	.init = top_init,
	.opt = top_opt,
	.check = top_check,
	.run = top_run,
	.output = top_output,
};
