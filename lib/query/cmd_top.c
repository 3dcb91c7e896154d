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
#include <rsp/flatprof.h>
#include <rsp/maps.h>
#include <rsp/parse.h>
#include "internal/fmt.h"
#include "internal/json.h"
#include "internal/query.h"
#include "internal/redact.h"
#include "internal/speedscope.h"
#include <rsp/answer.h>

#define TOP_DEFAULT_LIMIT 20
#define TOP_PROCS	  10

struct top_opts {
	unsigned limit;	 /* rows; 0: all */
	unsigned stacks; /* heaviest whole stacks to show; 0: none */

	char speedscope[4096]; /* also this file: the samples per thread, speedscope's format */
};

enum {
	OPT_LIMIT = 1,
	OPT_STACKS,
	OPT_SPEEDSCOPE,
};

static const struct rsp_option top_opts[] = {
	{"limit", true, OPT_LIMIT},
	{"stacks", true, OPT_STACKS},
	{"speedscope", true, OPT_SPEEDSCOPE},
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
			rsp_buf__printf(
				err, "top: --stacks wants a number of stacks (0: none), not '%s'",
				arg);
			return -EINVAL;
		}
		o->stacks = (unsigned)n;
		return 0;
	}
	if (id == OPT_SPEEDSCOPE) {
		if (!arg[0] || strlen(arg) >= sizeof(o->speedscope)) {
			rsp_buf__printf(
				err, "top: --speedscope wants a file name (shorter than %zu bytes)",
				sizeof(o->speedscope));
			return -EINVAL;
		}
		memcpy(o->speedscope, arg, strlen(arg) + 1);
		return 0;
	}
	rsp_buf__printf(err, "top: unexpected argument '%s'; see 'rspctl help top'", arg);
	return -EINVAL;
}

static const char *top_output(const struct rsp_request *req, size_t i, const char **name)
{
	const struct top_opts *o = req->opts;

	if (i || !o->speedscope[0])
		return NULL;
	*name = "speedscope";
	return o->speedscope;
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
	const struct rsp_flatprof_totals *tot;
	const struct rsp_flatprof_row *rows;
	const struct rsp_flatprof_proc *procs;
	const struct rsp_flatprof_stack *stacks;
	size_t nr_rows, nr_procs, nr_stacks;
	struct rsp_flatprof *prof;
	struct rsp_window_stats ws;
	struct rsp_symbolizer_stats before, after;
	double resolve_ms;
	uint64_t from;
};

static const char *row_label(const struct rsp_flatprof_row *r, char *buf, size_t n)
{
	struct rsp_sym s = {.name = r->name, .hidden = r->hidden};

	return rsp_sym__format(&s, false, buf, n);
}

static json_t *json_rows(const struct top_ctx *c, unsigned limit)
{
	json_t *arr = json_array();

	for (size_t i = 0; i < c->nr_rows && (!limit || i < limit); i++) {
		const struct rsp_flatprof_row *r = &c->rows[i];
		json_t *o = json_pack("{s:s?, s:s, s:s, s:s?, s:I, s:f, s:f}", "name", r->name,
				      "match", match_name(r->match), "kind", kind_name(r->kind),
				      "object", r->object, "samples", (json_int_t)r->samples,
				      "percent", pct(r->samples, c->tot->samples), "cpu_s",
				      (double)r->period / 1e9);

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

	for (size_t i = 0; i < c->nr_procs && shown < TOP_PROCS; i++) {
		const struct rsp_flatprof_proc *pr = &c->procs[i];

		if (c->req->pid >= 0 && pr->pid != (uint32_t)c->req->pid)
			continue;
		json_t *o = json_pack("{s:i, s:I, s:I, s:I}", "pid", (int)pr->pid, "samples",
				      (json_int_t)pr->samples, "user",
				      (json_int_t)(pr->samples - pr->kernel), "kernel",
				      (json_int_t)pr->kernel);

		if (pr->hidden)
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
		all += c->procs[i].samples;
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

		rsp_buf__printf(out, "process %ld (%s): ", c->req->pid, comm ? comm : "?");
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
	text_paranoid(c->src, out);
}

static void text_procs(const struct top_ctx *c, struct rsp_buf *out)
{
	uint64_t all = 0;

	for (size_t i = 0; i < c->nr_procs; i++)
		all += c->procs[i].samples;
	rsp_buf__printf(out, "\n     pid comm              samples      %%     user   kernel\n");
	for (size_t i = 0; i < c->nr_procs && i < TOP_PROCS; i++) {
		const struct rsp_flatprof_proc *pr = &c->procs[i];

		rsp_buf__printf(out, "%8u %-16.16s %8llu %5.1f%% %8llu %8llu\n", pr->pid,
				!pr->pid     ? "[idle]"
				: pr->hidden ? "(other user)"
				: pr->comm   ? pr->comm
					     : "?",
				(unsigned long long)pr->samples, pct(pr->samples, all),
				(unsigned long long)(pr->samples - pr->kernel),
				(unsigned long long)pr->kernel);
	}
}

/* A row's object column: none for another user's hidden frames, "[kernel]" for hidden kernel ones.
 */
static const char *object_of(const struct rsp_flatprof_row *r)
{
	if (!r->hidden)
		return basename_of(r->object);
	return r->kind == RSP_SYM_KERNEL ? "[kernel]" : "";
}

static void text_rows(const struct top_ctx *c, struct rsp_buf *out)
{
	const struct top_opts *opts = c->req->opts;
	const struct rsp_flatprof_totals *p = c->tot;
	char name[256];

	rsp_buf__puts(out, "\n samples      %  function                              object\n");
	for (size_t i = 0; i < c->nr_rows && (!opts->limit || i < opts->limit); i++) {
		const struct rsp_flatprof_row *r = &c->rows[i];
		const char *label = row_label(r, name, sizeof(name));
		size_t len = strlen(label);

		if (len > 37)
			rsp_buf__printf(out, "%8llu %5.1f%%  %.34s... %s\n",
					(unsigned long long)r->samples, pct(r->samples, p->samples),
					label, basename_of(r->object));
		else
			rsp_buf__printf(out, "%8llu %5.1f%%  %-37s %s\n",
					(unsigned long long)r->samples, pct(r->samples, p->samples),
					label, object_of(r));
	}
	if (opts->limit && c->nr_rows > opts->limit)
		rsp_buf__printf(out, "(%zu more; --limit 0 shows all)\n", c->nr_rows - opts->limit);
}

static void text_stacks(const struct top_ctx *c, struct rsp_buf *out)
{
	const struct top_opts *opts = c->req->opts;
	const struct rsp_flatprof_totals *p = c->tot;
	char name[256];

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
			(unsigned long long)c->tot->self_samples,
			(unsigned long long)c->ws.records);
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
	if (!c->tot->samples) {
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

/* Another user's process: its user frames are not named (the access rule). */
static bool hidden(void *ctx, uint32_t pid)
{
	return rsp_redact__hidden(ctx, pid, pid);
}

/* The profile of the asked range, and the symbolizer's work for it. */
static int profile(struct top_ctx *c, struct rsp_redact *r)
{
	const struct rsp_request *req = c->req;
	const struct rsp_source *src = c->src;
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
				      .hide_kernel = !rsp_source__kernel_symbols(src)};
	struct rsp_wsnap *snap = rsp_window__pin(src->window, o.from, o.to ? o.to : UINT64_MAX);
	struct timespec t0;

	if (((const struct top_opts *)req->opts)->speedscope[0])
		o.stacks = o.stacks_by_thread = true; /* rsp_top__speedscope() */
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
	return 0;
}

/*
 * The answer with the speedscope file as a part (rsp/answer.h). The
 * profile was built by thread (stacks_by_thread), so --stacks beside
 * --speedscope lists a stack once per thread that ran it.
 */
static int render_with_speedscope(struct top_ctx *c, struct rsp_buf *out, struct rsp_buf *err)
{
	struct rsp_buf main = RSP_BUF_INIT, file = RSP_BUF_INIT;
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
		ret = rsp_top__speedscope(c->prof, title, &file);
	if (!ret)
		ret = rsp_answer__begin(out);
	if (!ret)
		ret = rsp_answer__add(out, RSP_ANSWER_STDOUT, main.data, main.len);
	if (!ret)
		ret = rsp_answer__add(out, "speedscope", file.data, file.len);
	if (ret)
		rsp_buf__puts(err, "top: out of memory writing the speedscope file");
	rsp_buf__exit(&main);
	rsp_buf__exit(&file);
	return ret;
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
	if (req->pid >= 0 && (ret = rsp_source__check_pid(src, "top", req->pid, err)))
		return ret;
	rsp_request__window_range(req, src, &from, &to);
	if (req->pid >= 0 && (ret = rsp_source__check_seen(src, "top", req->pid, from, to, err)))
		return ret;
	rsp_redact__init(&r, src);
	ret = profile(&c, &r);
	if (ret)
		rsp_buf__puts(err, "top: out of memory building the profile");
	else if (((const struct top_opts *)req->opts)->speedscope[0])
		ret = render_with_speedscope(&c, out, err);
	else if (req->format == RSP_FMT_JSON)
		ret = render_json(&c, out);
	else
		render_text(&c, out);
	rsp_flatprof__delete(c.prof);
	rsp_redact__exit(&r);
	return ret;
}

const struct rsp_command rsp_cmd_top = {
	.name = "top",
	.summary = "flat profile of the cpu-clock samples, by function",
	.usage = "usage: rspctl top [--pid PID] [--last DURATION | --from T --to T]\n"
		 "                  [--limit N] [--stacks N] [--json]\n"
		 "                  [--speedscope FILE]\n"
		 "\n"
		 "Functions where the sampled CPU time went, user and kernel, named at\n"
		 "query time (processes that have exited too). A stripped library shows\n"
		 "'a->b': the sample lies between its exported functions a and b.\n"
		 "\n"
		 "  --pid PID        only this process (default: all, with a summary; a\n"
		 "                   user outside rspd's admin group sees what\n"
		 "                   perf_event_paranoid allows: at 1 only their own\n"
		 "                   processes, at 2 and more also no kernel functions)\n"
		 "  --last DURATION  only the last DURATION of the window, e.g. 10s\n"
		 "  --from T, --to T only [T, T] of the window, in seconds as 'rspctl\n"
		 "                   status' shows it\n"
		 "  --limit N        rows to show (20; 0: all)\n"
		 "  --stacks N       also the N heaviest whole stacks, user frames unwound\n"
		 "                   with DWARF where the sample copied its stack (rspd\n"
		 "                   --dwarf), else by frame pointers; each says which\n"
		 "  --json           JSON output (same as --format json)\n"
		 "  --speedscope FILE  also write the samples in speedscope's format\n"
		 "                   (www.speedscope.app): per thread its stacks, each\n"
		 "                   weighing its samples; written by rspctl\n"
		 "\n"
		 "EXAMPLES\n"
		 "  rspctl top\n"
		 "  rspctl top --pid 1234 --last 5s\n"
		 "  rspctl top --json --limit 0\n"
		 "  rspctl top --pid 1234 --stacks 5\n"
		 "  rspctl top --pid 1234 --last 5s --speedscope 1234.speedscope.json\n",
	.common = RSP_COPT_FORMAT | RSP_COPT_PID | RSP_COPT_LAST | RSP_COPT_RANGE,
	.opts = top_opts,
	.opts_size = sizeof(struct top_opts),
	.init = top_init,
	.opt = top_opt,
	.run = top_run,
	.output = top_output,
};
