// SPDX-License-Identifier: LGPL-2.1
/*
 * `stopwatch list` and `show` as text and JSON (rsp/sw_render.h), from the
 * totals of lib/analysis/stopwatch.c. The histogram, percentiles and peaks
 * are the hist family's (rsp_hist_profile__render(), rsp_hist__peaks()):
 * a stopwatch's buckets are its r=1 buckets.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <jansson.h>
#include <rsp/hist.h>
#include <rsp/hist_render.h>
#include <rsp/stopwatch.h>
#include <rsp/sw_render.h>
#include "bpf/stopwatch.h"
#include "internal/hist.h"
#include "internal/json.h"

static bool is_pair(const struct rsp_sw_view *v)
{
	return strstr(v->spec, " -> ") != NULL;
}

/* The hist family's profile of @v, to render and analyse its buckets. */
static void as_profile(const struct rsp_sw_view *v, struct rsp_hist_profile *p)
{
	memset(p, 0, sizeof(*p));
	if (v->pid > 0) {
		p->subject.kind = RSP_HSUBJ_PROCESS;
		p->subject.pid = (uint32_t)v->pid;
	} else if (v->by_comm) {
		p->subject.kind = RSP_HSUBJ_COMM;
	}
	snprintf(p->subject.comm, sizeof(p->subject.comm), "%s", v->comm);
	snprintf(p->op_name, sizeof(p->op_name), "stopwatch:%s", v->name);
	snprintf(p->op_label, sizeof(p->op_label), "%s",
		 is_pair(v)			   ? "start to end"
		 : strncmp(v->spec, "syscall:", 8) ? "entry to return"
						   : "entry to exit");
	p->resolution = 1;
	p->count = v->total.count;
	p->sum = v->total.sum;
	p->min = v->total.min;
	p->max = v->total.max;
	/* the renderer's stddev is sqrt(sumsq/n - mean^2): give it the exact one's sumsq */
	if (p->count) {
		double sd = rsp_sw_total__stddev(&v->total), mean = rsp_sw_total__mean(&v->total);

		p->sumsq = (double)p->count * (sd * sd + mean * mean);
	}
	memcpy(p->buckets, v->total.buckets, sizeof(v->total.buckets));
}

static const char *scope(const struct rsp_sw_view *v, char *buf, size_t n)
{
	if (v->pid > 0)
		snprintf(buf, n, "pid %ld", v->pid);
	else if (v->by_comm)
		snprintf(buf, n, "comm %s", v->comm);
	else
		snprintf(buf, n, "all processes");
	return buf;
}

int rsp_sw__render_list(const struct rsp_sw_view *v, size_t n, unsigned max, bool json,
			struct rsp_buf *out)
{
	char sc[64];

	if (json) {
		json_t *o = json_object(), *a = json_array();

		rsp_json__set_u64(o, "max", max);
		json_object_set_new(o, "stopwatches", a);
		for (size_t i = 0; i < n; i++) {
			json_t *e = json_object();

			rsp_json__set_str(e, "name", v[i].name);
			rsp_json__set_str(e, "spec", v[i].spec);
			rsp_json__set_str(e, "probed", v[i].where);
			rsp_json__set_str(e, "scope", scope(&v[i], sc, sizeof(sc)));
			if (v[i].pid > 0)
				rsp_json__set_u64(e, "pid", (uint64_t)v[i].pid);
			if (v[i].by_comm)
				rsp_json__set_str(e, "comm", v[i].comm);
			rsp_json__set_u64(e, "count", v[i].total.count);
			rsp_json__set_secs(e, "age", v[i].span_ns);
			json_array_append_new(a, e);
		}
		return rsp_json__emit(o, out);
	}
	rsp_buf__printf(out, "%zu of %u stopwatches\n", n, max);
	if (n)
		rsp_buf__printf(out, "%-16s %10s %8s  %-16s %s\n", "NAME", "CALLS", "AGE", "SCOPE",
				"SPEC");
	for (size_t i = 0; i < n; i++)
		rsp_buf__printf(out, "%-16s %10llu %7.0fs  %-16s %s\n", v[i].name,
				(unsigned long long)v[i].total.count, (double)v[i].span_ns / 1e9,
				scope(&v[i], sc, sizeof(sc)), v[i].spec);
	return out->error;
}

/* The sum of the calls whose off-CPU time is known: sum minus the others' share. */
static double known_sum(const struct rsp_sw_total *t)
{
	uint64_t known = t->count - t->off_unknown;

	return t->count ? (double)t->sum * (double)known / (double)t->count : 0;
}

/* The join with the scheduler: how much of the time inside was off CPU. */
static void offcpu_text(const struct rsp_sw_view *v, struct rsp_buf *out)
{
	const struct rsp_sw_total *t = &v->total;
	double sum = known_sum(t);
	uint64_t known = t->count - t->off_unknown;
	char a[24], b[24];

	if (!known || sum <= 0) {
		if (t->count)
			rsp_buf__puts(out, is_pair(v)
						   ? "off CPU inside: not measured (a keyed pair "
						     "times items, not a thread's calls)\n"
						   : "off CPU inside: unknown (no call's thread "
						     "was followed)\n");
		return;
	}
	rsp_buf__printf(out,
			"off CPU inside: %.1f%% (asleep %.1f%%, preempted %.1f%%); "
			"per call %s off, %s on CPU\n",
			100.0 * (double)t->offcpu / sum, 100.0 * (double)t->asleep / sum,
			100.0 * (double)(t->offcpu - t->asleep) / sum,
			rsp_hist__fmt_ns((double)t->offcpu / (double)known, a, sizeof(a)),
			rsp_hist__fmt_ns((sum - (double)t->offcpu) / (double)known, b, sizeof(b)));
	if (t->off_unknown)
		rsp_buf__printf(out, "  (%llu calls left out: their thread's record was evicted)\n",
				(unsigned long long)t->off_unknown);
}

static const char *base_of(const char *path)
{
	const char *b = path ? strrchr(path, '/') : NULL;

	return b ? b + 1 : path ? path : "";
}

/* The calls whose stack was taken but not counted by caller: the lost ones. */
static void callers_lost_text(const struct rsp_sw_view *v, uint64_t dropped, struct rsp_buf *out)
{
	const struct rsp_sw_total *t = &v->total;

	if (t->callers_lost)
		rsp_buf__printf(out,
				"  unknown caller: %llu calls (their user stack could not be "
				"taken: the stack table full or a different stack in its slot; "
				"raise stopwatch-callers)\n",
				(unsigned long long)t->callers_lost);
	if (t->callers_overflow + dropped)
		rsp_buf__printf(out,
				"  unknown caller: %llu calls (more caller stacks than "
				"--callers-max %u or rspd's stopwatch-callers keep)\n",
				(unsigned long long)(t->callers_overflow + dropped),
				v->callers_max);
}

/* show --callers: the top caller stacks, call site first. */
static void callers_text(const struct rsp_sw_view *v, struct rsp_buf *out)
{
	const struct rsp_sw_callers *c = v->callers;
	size_t n = rsp_sw_callers__rows(c);
	uint64_t all = rsp_sw_callers__calls(c) + rsp_sw_callers__dropped(c) +
		       v->total.callers_lost + v->total.callers_overflow;
	char a[24], b[24];

	if (!v->callers_on) {
		rsp_buf__printf(out, "callers: not taken (%s was added without --callers)\n",
				v->name);
		return;
	}
	rsp_buf__printf(out,
			"callers (user stack at the return, call site first; top %zu of %zu "
			"stacks, since added):\n",
			n < v->callers_top ? n : (size_t)v->callers_top, n);
	if (n)
		rsp_buf__printf(out, "  %10s %6s %12s %12s\n", "CALLS", "SHARE", "TOTAL", "MEAN");
	for (size_t i = 0; i < n && i < v->callers_top; i++) {
		const struct rsp_sw_caller_row *r = rsp_sw_callers__row(c, i);

		rsp_buf__printf(out, "  %10llu %5.1f%% %12s %12s\n", (unsigned long long)r->count,
				all ? 100.0 * (double)r->count / (double)all : 0.0,
				rsp_hist__fmt_ns((double)r->sum, a, sizeof(a)),
				rsp_hist__fmt_ns(r->count ? (double)r->sum / (double)r->count : 0,
						 b, sizeof(b)));
		for (unsigned k = 0; k < r->nframes; k++)
			rsp_buf__printf(out, "      %-40.60s %s\n", r->names[k],
					base_of(r->objects[k]));
	}
	callers_lost_text(v, rsp_sw_callers__dropped(c), out);
}

static void show_text(const struct rsp_sw_view *v, struct rsp_buf *out)
{
	struct rsp_hist_profile p;
	char sc[64];

	as_profile(v, &p);
	rsp_buf__printf(out, "stopwatch %s: %s, %s, %s %.1f s%s\n", v->name, v->spec,
			scope(v, sc, sizeof(sc)), v->since_added ? "since added" : "over the last",
			(double)v->span_ns / 1e9, v->clipped ? " (all rspd keeps per second)" : "");
	rsp_buf__printf(out, "probed: %s\n", v->where);
	rsp_hist_profile__render(&p, out);
	offcpu_text(v, out);
	rsp_buf__printf(out,
			"unmatched %llu (entries that never returned: longjmp, exception, "
			"thread exit)\n",
			(unsigned long long)v->total.unmatched);
	if (v->total.overflow)
		rsp_buf__printf(out,
				"overflow %llu (calls not timed: the thread table was full "
				"(--stopwatch-threads) or they nested over %d deep)\n",
				(unsigned long long)v->total.overflow, RSP_SW_DEPTH);
	if (v->callers)
		callers_text(v, out);
}

static json_t *callers_json(const struct rsp_sw_view *v)
{
	const struct rsp_sw_callers *c = v->callers;
	size_t n = rsp_sw_callers__rows(c);
	uint64_t all = rsp_sw_callers__calls(c) + rsp_sw_callers__dropped(c) +
		       v->total.callers_lost + v->total.callers_overflow;
	json_t *a = json_array();

	for (size_t i = 0; i < n && i < v->callers_top; i++) {
		const struct rsp_sw_caller_row *r = rsp_sw_callers__row(c, i);
		json_t *e = json_object(), *f = json_array();

		rsp_json__set_u64(e, "count", r->count);
		rsp_json__set_u64(e, "sum_ns", r->sum);
		rsp_json__set_real(e, "mean_ns", r->count ? (double)r->sum / (double)r->count : 0);
		rsp_json__set_real(e, "share", all ? (double)r->count / (double)all : 0);
		for (unsigned k = 0; k < r->nframes; k++) {
			json_t *fr = json_object();

			rsp_json__set_str(fr, "function", r->names[k]);
			if (r->objects[k])
				rsp_json__set_str(fr, "object", r->objects[k]);
			else
				json_object_set_new(fr, "object", json_null());
			json_array_append_new(f, fr);
		}
		json_object_set_new(e, "frames", f);
		json_array_append_new(a, e);
	}
	return a;
}

/* show --callers, JSON: the rows, how many in all, and the calls of unknown caller. */
static void callers_json_set(const struct rsp_sw_view *v, json_t *o)
{
	json_object_set_new(o, "callers_taken", json_boolean(v->callers_on));
	if (!v->callers_on)
		return;
	json_object_set_new(o, "callers", callers_json(v));
	rsp_json__set_u64(o, "callers_stacks", rsp_sw_callers__rows(v->callers));
	rsp_json__set_u64(o, "callers_calls", rsp_sw_callers__calls(v->callers));
	rsp_json__set_u64(o, "callers_lost", v->total.callers_lost);
	rsp_json__set_u64(o, "callers_overflow",
			  v->total.callers_overflow + rsp_sw_callers__dropped(v->callers));
	rsp_json__set_u64(o, "callers_max", v->callers_max);
}

static json_t *show_json(const struct rsp_sw_view *v)
{
	const struct rsp_sw_total *t = &v->total;
	struct rsp_hist_peak pk[16];
	json_t *o = json_object(), *b = json_array(), *pa = json_array();
	char sc[64];
	int np;

	rsp_json__set_str(o, "name", v->name);
	rsp_json__set_str(o, "spec", v->spec);
	rsp_json__set_str(o, "probed", v->where);
	rsp_json__set_str(o, "scope", scope(v, sc, sizeof(sc)));
	rsp_json__set_secs(o, "span", v->span_ns);
	json_object_set_new(o, "clipped", json_boolean(v->clipped));
	json_object_set_new(o, "since_added", json_boolean(v->since_added));
	rsp_json__set_u64(o, "count", t->count);
	rsp_json__set_u64(o, "sum_ns", t->sum);
	rsp_json__set_u64(o, "min_ns", t->count ? t->min : 0);
	rsp_json__set_u64(o, "max_ns", t->max);
	rsp_json__set_real(o, "mean_ns", rsp_sw_total__mean(t));
	rsp_json__set_real(o, "stddev_ns", rsp_sw_total__stddev(t));
	rsp_json__set_u64(o, "p50_ns",
			  rsp_hist__percentile(t->buckets, 1, t->count, t->min, t->max, 0.5));
	rsp_json__set_u64(o, "p99_ns",
			  rsp_hist__percentile(t->buckets, 1, t->count, t->min, t->max, 0.99));
	rsp_json__set_u64(o, "offcpu_ns", t->offcpu);
	rsp_json__set_u64(o, "asleep_ns", t->asleep);
	rsp_json__set_u64(o, "offcpu_unknown", t->off_unknown);
	if (known_sum(t) > 0) {
		rsp_json__set_real(o, "offcpu_share", (double)t->offcpu / known_sum(t));
		rsp_json__set_real(o, "asleep_share", (double)t->asleep / known_sum(t));
	} else {
		json_object_set_new(o, "offcpu_share", json_null());
		json_object_set_new(o, "asleep_share", json_null());
	}
	rsp_json__set_u64(o, "unmatched", t->unmatched);
	rsp_json__set_u64(o, "overflow", t->overflow);
	for (unsigned i = 0; i < RSP_SW_NR_BUCKETS; i++) {
		json_t *e;

		if (!t->buckets[i])
			continue;
		e = json_object();
		rsp_json__set_u64(e, "low_ns", rsp_hist__bucket_low(i, 1));
		rsp_json__set_u64(e, "high_ns", rsp_hist__bucket_high(i, 1));
		rsp_json__set_u64(e, "count", t->buckets[i]);
		json_array_append_new(b, e);
	}
	json_object_set_new(o, "buckets", b);
	np = rsp_hist__peaks(t->buckets, 1, NULL, pk, 16);
	for (int i = 0; i < np && i < 16; i++) {
		json_t *e = json_object();

		rsp_json__set_u64(e, "low_ns", rsp_hist__bucket_low(pk[i].lo, 1));
		rsp_json__set_u64(e, "high_ns", rsp_hist__bucket_high(pk[i].hi, 1));
		rsp_json__set_u64(e, "count", pk[i].count);
		rsp_json__set_real(e, "share", pk[i].share);
		rsp_json__set_real(e, "mean_ns", pk[i].mean_ns);
		json_array_append_new(pa, e);
	}
	json_object_set_new(o, "peaks", pa);
	if (v->callers)
		callers_json_set(v, o);
	return o;
}

int rsp_sw__render_show(const struct rsp_sw_view *v, size_t n, bool json, struct rsp_buf *out)
{
	if (json) {
		json_t *o = json_object(), *a = json_array();

		for (size_t i = 0; i < n; i++)
			json_array_append_new(a, show_json(&v[i]));
		json_object_set_new(o, "stopwatches", a);
		return rsp_json__emit(o, out);
	}
	if (!n)
		rsp_buf__puts(out, "no stopwatches; add one with rspctl stopwatch add SPEC\n");
	for (size_t i = 0; i < n; i++) {
		if (i)
			rsp_buf__puts(out, "\n");
		show_text(&v[i], out);
	}
	return out->error;
}
