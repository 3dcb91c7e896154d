// SPDX-License-Identifier: LGPL-2.1
/*
 * Latency profiles as text (bcc's print_log2_hist look, heat maps of time
 * slices, diffs) and as JSON, and the JSON reader for saved baselines.
 * Text stays under 80 columns.
 */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <jansson.h>
#include <rsp/hist.h>
#include "internal/hist.h"

#define MAX_PEAKS  16
#define JSON_FLAGS (JSON_INDENT(2) | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(17))

static double secs(uint64_t ns)
{
	return (double)ns / 1e9;
}

/* First and last non-empty bucket; false if the profile is empty. */
static bool span(const uint64_t *b, unsigned nb, unsigned *lo, unsigned *hi)
{
	bool any = false;

	for (unsigned i = 0; i < nb; i++) {
		if (!b[i])
			continue;
		if (!any)
			*lo = i;
		*hi = i;
		any = true;
	}
	return any;
}

/* A short subject for tables: "system", "pid 12 make", "tid 13 cc1". */
static const char *subject_short(const struct rsp_hist_subject *s, char *buf, size_t n)
{
	switch (s->kind) {
	case RSP_HSUBJ_PROCESS:
		snprintf(buf, n, "pid %u %s", s->pid, s->other_user ? "(other user)" : s->comm);
		break;
	case RSP_HSUBJ_THREAD:
		snprintf(buf, n, "tid %u %s", s->tid, s->other_user ? "(other user)" : s->comm);
		break;
	case RSP_HSUBJ_OTHER_PROCESS:
		snprintf(buf, n, "other procs");
		break;
	case RSP_HSUBJ_OTHER_THREAD:
		snprintf(buf, n, "other threads");
		break;
	case RSP_HSUBJ_COMM:
		snprintf(buf, n, "comm %s", s->comm);
		break;
	default:
		snprintf(buf, n, "system");
		break;
	}
	return buf;
}

/* ---- one profile ------------------------------------------------------------ */

static void stars(struct rsp_buf *out, uint64_t val, uint64_t max, int width)
{
	int n = max ? (int)((double)(val < max ? val : max) * width / (double)max) : 0;

	for (int i = 0; i < width; i++)
		rsp_buf__add(out, i < n ? "*" : " ", 1);
}

/* bcc's print_log2_hist, from the first to the last non-empty bucket. */
static void log2_table(const struct rsp_hist_profile *p, struct rsp_buf *out)
{
	unsigned nb = rsp_hist__nr_buckets(p->resolution), lo = 0, hi = 0;
	uint64_t max = 0;
	int width, nstars;

	if (!span(p->buckets, nb, &lo, &hi))
		return;
	for (unsigned i = lo; i <= hi; i++)
		if (p->buckets[i] > max)
			max = p->buckets[i];
	/* Values up to 2^32 ns fit ten digits (bcc's idx_max <= 32 case). */
	width = rsp_hist__bucket_high(hi, p->resolution) < 10000000000ull ? 10 : 20;
	nstars = width == 10 ? 40 : 20;
	rsp_buf__printf(out, "%*s%-*s : count    distribution\n", width == 10 ? 5 : 15, "",
			width == 10 ? 19 : 29, "nsecs");
	for (unsigned i = lo; i <= hi; i++) {
		uint64_t l = rsp_hist__bucket_low(i, p->resolution);
		uint64_t h = rsp_hist__bucket_high(i, p->resolution);

		if (h < l)
			continue; /* r=2's bucket 2 holds no integer */
		rsp_buf__printf(out, "%*llu -> %-*llu : %-8llu |", width, (unsigned long long)l,
				width, (unsigned long long)h, (unsigned long long)p->buckets[i]);
		stars(out, p->buckets[i], max, nstars);
		rsp_buf__puts(out, "|\n");
	}
}

static void peaks_text(const struct rsp_hist_profile *p, struct rsp_buf *out)
{
	struct rsp_hist_peak pk[MAX_PEAKS];
	int n = rsp_hist__peaks(p->buckets, p->resolution, NULL, pk, MAX_PEAKS);
	char a[24], b[24], m[24];

	if (n > MAX_PEAKS)
		n = MAX_PEAKS;
	for (int i = 0; i < n; i++)
		rsp_buf__printf(
			out, "%s %d: %s .. %s, %llu (%.1f%%), mean ~%s\n", i ? "     " : "peak",
			i + 1,
			rsp_hist__fmt_ns((double)rsp_hist__bucket_low(pk[i].lo, p->resolution), a,
					 sizeof(a)),
			rsp_hist__fmt_ns((double)rsp_hist__bucket_high(pk[i].hi, p->resolution), b,
					 sizeof(b)),
			(unsigned long long)pk[i].count, 100.0 * pk[i].share,
			rsp_hist__fmt_ns(pk[i].mean_ns, m, sizeof(m)));
}

static const char *incomplete_what(unsigned kind)
{
	switch (kind) {
	case RSP_HOP_BLK_SERVICE:
		return "requests without an observed completion";
	case RSP_HOP_BLK_QUEUE:
		return "requests without an observed issue";
	case RSP_HOP_RUNQ:
		return "wakeups whose switch-in was not observed (onto an idle CPU)";
	case RSP_HOP_OFFCPU:
		return "preemptions whose switch-in was not observed";
	default:
		return "operations whose end was not observed";
	}
}

static void incomplete_text(const struct rsp_hist_profile *p, struct rsp_buf *out)
{
	if (p->inferred)
		rsp_buf__printf(out,
				"%llu of these ended with no wakeup observed: measured to\n"
				"  the thread's next run, so upper bounds\n",
				(unsigned long long)p->inferred);
	if (!p->incomplete && !p->open)
		return;
	rsp_buf__printf(out, "%llu %s", (unsigned long long)p->incomplete,
			incomplete_what(RSP_HIST_OP_KIND(p->op)));
	if (p->open)
		rsp_buf__printf(out, "; %llu open", (unsigned long long)p->open);
	rsp_buf__puts(out, "\n");
	if (p->incomplete && RSP_HIST_OP_KIND(p->op) == RSP_HOP_BLK_SERVICE)
		rsp_buf__puts(out, "  (this kernel sends no block_rq_complete when the disk\n"
				   "  interrupt hits an idle CPU; see rspctl status)\n");
}

int rsp_hist_profile__render(const struct rsp_hist_profile *p, struct rsp_buf *out)
{
	char subj[64], a[24], b[24], c[24], d[24], e[24];
	unsigned r = p->resolution;

	rsp_buf__printf(out, "%s  %s\n", p->op_label,
			rsp_hist_subject__format(&p->subject, subj, sizeof(subj)));
	if (!p->count) {
		rsp_buf__puts(out, "no latencies observed\n");
		incomplete_text(p, out);
		return 0;
	}
	rsp_buf__printf(out, "count %llu, mean %s, p50 %s, p99 %s, max %s, total %s\n",
			(unsigned long long)p->count,
			rsp_hist__fmt_ns((double)p->sum / (double)p->count, a, sizeof(a)),
			rsp_hist__fmt_ns((double)rsp_hist__percentile(p->buckets, r, p->count,
								      p->min, p->max, 0.5),
					 b, sizeof(b)),
			rsp_hist__fmt_ns((double)rsp_hist__percentile(p->buckets, r, p->count,
								      p->min, p->max, 0.99),
					 c, sizeof(c)),
			rsp_hist__fmt_ns((double)p->max, d, sizeof(d)),
			rsp_hist__fmt_ns((double)p->sum, e, sizeof(e)));
	log2_table(p, out);
	peaks_text(p, out);
	incomplete_text(p, out);
	return 0;
}

/* ---- heat map ----------------------------------------------------------------- */

#define HEAT_COLS 56
static const char heat_levels[] = " .:-=+*#%@";

static unsigned heat_level(uint64_t c, uint64_t max)
{
	unsigned l;

	if (!c)
		return 0;
	if (max <= 1)
		return 9;
	l = 1 + (unsigned)(8.0 * log((double)c) / log((double)max) + 0.5);
	return l > 9 ? 9 : l;
}

/* Sum of rows[i] over buckets [b, b + group). */
static uint64_t cell(const struct rsp_hist_row *row, unsigned b, unsigned group, unsigned nb)
{
	uint64_t s = 0;

	for (unsigned i = b; i < b + group && i < nb; i++)
		s += row->buckets[i];
	return s;
}

/* Put "^label" at column @col of @line if it fits and overlaps nothing. */
static void axis_mark(char *line, size_t size, unsigned col, const char *label)
{
	size_t len = strlen(label);

	if (col + 1 + len >= size - 1)
		return;
	for (size_t i = col ? col - 1 : 0; i <= col + len + 1 && i < size - 1; i++)
		if (line[i] != ' ')
			return;
	line[col] = '^';
	memcpy(line + col + 1, label, len);
}

/* An axis under the columns: the first column's low bound, then 1us, 1ms, 1s. */
static void heat_axis(struct rsp_buf *out, unsigned lo, unsigned cols, unsigned group, unsigned r,
		      int indent)
{
	static const struct {
		uint64_t ns;
		const char *label;
	} marks[] = {{1000, "1us"}, {1000000, "1ms"}, {1000000000, "1s"}};
	char line[HEAT_COLS + 16], first[24], *sp;

	memset(line, ' ', sizeof(line));
	line[sizeof(line) - 1] = '\0';
	rsp_hist__fmt_ns((double)rsp_hist__bucket_low(lo, r), first, sizeof(first));
	sp = strchr(first, ' ');
	if (sp)
		memmove(sp, sp + 1, strlen(sp)); /* "1.05ms" */
	axis_mark(line, sizeof(line), 0, first);
	for (size_t m = 0; m < sizeof(marks) / sizeof(marks[0]); m++) {
		unsigned b = rsp_hist__bucket(marks[m].ns, r);

		if (b >= lo && (b - lo) / group < cols)
			axis_mark(line, sizeof(line), (b - lo) / group, marks[m].label);
	}
	for (int i = (int)sizeof(line) - 2; i >= 0 && line[i] == ' '; i--)
		line[i] = '\0';
	rsp_buf__printf(out, "%*s%s\n", indent, "", line);
}

int rsp_hist_profile__render_heatmap(const struct rsp_hist_profile *p, struct rsp_buf *out)
{
	unsigned nb = rsp_hist__nr_buckets(p->resolution), lo = 0, hi = 0, group, cols;
	uint64_t max = 0;
	char a[24], b[24];

	if (!p->nr_rows || !span(p->buckets, nb, &lo, &hi)) {
		rsp_buf__puts(out, "heat map: no latencies in the range\n");
		return 0;
	}
	group = (hi - lo + HEAT_COLS) / HEAT_COLS;
	cols = (hi - lo + group) / group;
	for (size_t i = 0; i < p->nr_rows; i++)
		for (unsigned c = 0; c < cols; c++) {
			uint64_t v = cell(&p->rows[i], lo + c * group, group, hi + 1);

			if (v > max)
				max = v;
		}
	rsp_buf__printf(
		out, "heat map: a row per %.3g s, a column per %u bucket%s, %s .. %s\n",
		p->nr_rows > 1 ? secs(p->rows[1].start - p->rows[0].start) : 0.0, group,
		group > 1 ? "s" : "",
		rsp_hist__fmt_ns((double)rsp_hist__bucket_low(lo, p->resolution), a, sizeof(a)),
		rsp_hist__fmt_ns((double)rsp_hist__bucket_high(hi, p->resolution), b, sizeof(b)));
	rsp_buf__printf(out, "cells '%s' by log count, '@' = %llu\n", heat_levels,
			(unsigned long long)max);
	rsp_buf__printf(out, "%10s %7s |%-*s|\n", "time (s)", "count", (int)cols, "");
	for (size_t i = 0; i < p->nr_rows; i++) {
		const struct rsp_hist_row *row = &p->rows[i];

		rsp_buf__printf(out, "%10.1f %7llu |", secs(row->start),
				(unsigned long long)row->count);
		for (unsigned c = 0; c < cols; c++)
			rsp_buf__add(out,
				     &heat_levels[heat_level(
					     cell(row, lo + c * group, group, hi + 1), max)],
				     1);
		rsp_buf__puts(out, "|\n");
	}
	heat_axis(out, lo, cols, group, p->resolution, 20);
	return 0;
}

/* ---- a set ---------------------------------------------------------------------- */

static void set_header(const struct rsp_hist_set *s, struct rsp_buf *out)
{
	if (s->ranged)
		rsp_buf__printf(out,
				"latency profiles, r=%u, %.3f .. %.3f (%.0f slices of %.3g s)\n",
				s->resolution, secs(s->from), secs(s->to),
				s->slice_ns ? (double)(s->to - s->from) / (double)s->slice_ns : 0.0,
				secs(s->slice_ns));
	else
		rsp_buf__printf(out, "latency profiles, r=%u, since %.3f, fed up to %.3f\n",
				s->resolution, secs(s->since), secs(s->progress));
	if (s->clipped)
		rsp_buf__puts(out, "! the range starts before the oldest slice kept: clipped to "
				   "it (rspd --hist-slices keeps more)\n");
	if (s->gaps)
		rsp_buf__printf(out,
				"! %llu stretch%s (%.3f s) of records were never fed to the "
				"histograms:\n  the analysis thread fell behind the window\n",
				(unsigned long long)s->gaps, s->gaps == 1 ? "" : "es",
				secs(s->gap_ns));
	if (s->overflow)
		rsp_buf__printf(out,
				"! %llu updates in these slices went to 'other' (more subjects "
				"per slice than --hist-profiles allows)\n",
				(unsigned long long)s->overflow);
}

static void summary_table(const struct rsp_hist_set *s, struct rsp_buf *out)
{
	char subj[64], m[24], p99[24], t[24];

	rsp_buf__printf(out, "\n%-18s %-18s %8s %10s %10s %10s\n", "op", "subject", "count", "mean",
			"p99", "total");
	for (size_t i = 0; i < s->n; i++) {
		const struct rsp_hist_profile *p = &s->v[i];

		subject_short(&p->subject, subj, sizeof(subj));
		subj[18] = '\0';
		rsp_buf__printf(
			out, "%-18.18s %-18s %8llu %10s %10s %10s\n", p->op_label, subj,
			(unsigned long long)p->count,
			p->count ? rsp_hist__fmt_ns((double)p->sum / (double)p->count, m, sizeof(m))
				 : "-",
			p->count ? rsp_hist__fmt_ns((double)rsp_hist__percentile(
							    p->buckets, p->resolution, p->count,
							    p->min, p->max, 0.99),
						    p99, sizeof(p99))
				 : "-",
			rsp_hist__fmt_ns((double)p->sum, t, sizeof(t)));
	}
}

int rsp_hist_set__render_text(const struct rsp_hist_set *s, unsigned flags, struct rsp_buf *out)
{
	set_header(s, out);
	if (!s->n) {
		rsp_buf__puts(out, "\nno profiles match\n");
		return 0;
	}
	summary_table(s, out);
	for (size_t i = 0; i < s->n; i++) {
		rsp_buf__puts(out, "\n");
		rsp_hist_profile__render(&s->v[i], out);
		if (flags & RSP_HIST_R_ROWS)
			rsp_hist_profile__render_heatmap(&s->v[i], out);
	}
	return 0;
}

/* ---- JSON ------------------------------------------------------------------------ */

/* JSON integers are signed 64-bit: larger values (2^63 and up) go as reals. */
static json_t *ju64(uint64_t v)
{
	return v <= (uint64_t)INT64_MAX ? json_integer((json_int_t)v) : json_real((double)v);
}

static json_t *json_buckets(const uint64_t *b, unsigned r)
{
	json_t *arr = json_array();
	unsigned nb = rsp_hist__nr_buckets(r);

	for (unsigned i = 0; i < nb; i++) {
		if (!b[i])
			continue;
		json_array_append_new(arr, json_pack("{s:i, s:o, s:o, s:o}", "bucket", (int)i,
						     "low_ns", ju64(rsp_hist__bucket_low(i, r)),
						     "high_ns", ju64(rsp_hist__bucket_high(i, r)),
						     "count", ju64(b[i])));
	}
	return arr;
}

static json_t *json_peaks(const struct rsp_hist_profile *p)
{
	struct rsp_hist_peak pk[MAX_PEAKS];
	int n = rsp_hist__peaks(p->buckets, p->resolution, NULL, pk, MAX_PEAKS);
	json_t *arr = json_array();

	for (int i = 0; i < n && i < MAX_PEAKS; i++)
		json_array_append_new(
			arr,
			json_pack("{s:o, s:o, s:o, s:f, s:f}", "low_ns",
				  ju64(rsp_hist__bucket_low(pk[i].lo, p->resolution)), "high_ns",
				  ju64(rsp_hist__bucket_high(pk[i].hi, p->resolution)), "count",
				  ju64(pk[i].count), "share", pk[i].share, "mean_ns",
				  pk[i].mean_ns));
	return arr;
}

static json_t *json_subject(const struct rsp_hist_subject *s)
{
	json_t *o = json_pack("{s:s}", "kind", rsp_hist__subject_kind_name(s->kind));

	if (s->kind == RSP_HSUBJ_PROCESS || s->kind == RSP_HSUBJ_THREAD)
		json_object_set_new(o, "pid", json_integer(s->pid));
	if (s->kind == RSP_HSUBJ_THREAD)
		json_object_set_new(o, "tid", json_integer(s->tid));
	if (s->other_user)
		json_object_set_new(o, "other_user", json_true());
	else if (s->kind == RSP_HSUBJ_PROCESS || s->kind == RSP_HSUBJ_THREAD ||
		 s->kind == RSP_HSUBJ_COMM)
		json_object_set_new(o, "comm", json_string(s->comm));
	return o;
}

static json_t *json_rows(const struct rsp_hist_profile *p)
{
	json_t *arr = json_array();

	for (size_t i = 0; i < p->nr_rows; i++) {
		const struct rsp_hist_row *row = &p->rows[i];

		json_array_append_new(arr, json_pack("{s:f, s:o, s:o, s:o}", "start_s",
						     secs(row->start), "count", ju64(row->count),
						     "sum_ns", ju64(row->sum), "buckets",
						     json_buckets(row->buckets, p->resolution)));
	}
	return arr;
}

static json_t *json_profile(const struct rsp_hist_profile *p, unsigned flags)
{
	char subj[64];
	unsigned r = p->resolution;
	json_t *o = json_object();

	json_object_set_new(o, "subject", json_subject(&p->subject));
	json_object_set_new(o, "subject_name",
			    json_string(rsp_hist_subject__format(&p->subject, subj, sizeof(subj))));
	json_object_set_new(o, "op", json_string(p->op_name));
	json_object_set_new(o, "op_label", json_string(p->op_label));
	json_object_set_new(o, "count", ju64(p->count));
	json_object_set_new(o, "sum_ns", ju64(p->sum));
	json_object_set_new(o, "min_ns", ju64(p->count ? p->min : 0));
	json_object_set_new(o, "max_ns", ju64(p->max));
	json_object_set_new(o, "mean_ns",
			    json_real(p->count ? (double)p->sum / (double)p->count : 0.0));
	json_object_set_new(
		o, "p50_ns",
		ju64(rsp_hist__percentile(p->buckets, r, p->count, p->min, p->max, 0.5)));
	json_object_set_new(
		o, "p99_ns",
		ju64(rsp_hist__percentile(p->buckets, r, p->count, p->min, p->max, 0.99)));
	json_object_set_new(o, "buckets", json_buckets(p->buckets, r));
	json_object_set_new(o, "peaks", json_peaks(p));
	json_object_set_new(o, "incomplete", ju64(p->incomplete));
	json_object_set_new(o, "open", ju64(p->open));
	json_object_set_new(o, "inferred", ju64(p->inferred));
	if ((flags & RSP_HIST_R_ROWS) && p->rows)
		json_object_set_new(o, "slices", json_rows(p));
	return o;
}

static int dump_json(json_t *o, struct rsp_buf *out)
{
	char *text = json_dumps(o, JSON_FLAGS);
	int err;

	json_decref(o);
	if (!text)
		return -ENOMEM;
	err = rsp_buf__puts(out, text);
	free(text);
	return err ? err : rsp_buf__puts(out, "\n");
}

int rsp_hist_set__render_json(const struct rsp_hist_set *s, unsigned flags, struct rsp_buf *out)
{
	json_t *o = json_object(), *arr = json_array();

	json_object_set_new(o, "format", json_string("rsp-hist"));
	json_object_set_new(o, "version", json_integer(1));
	json_object_set_new(o, "resolution", json_integer(s->resolution));
	json_object_set_new(o, "range",
			    json_pack("{s:b, s:f, s:f, s:f, s:b}", "cumulative", !s->ranged,
				      "from_s", secs(s->ranged ? s->from : s->since), "to_s",
				      secs(s->ranged ? s->to : s->progress), "slice_s",
				      secs(s->slice_ns), "clipped", s->clipped));
	json_object_set_new(o, "since_s", json_real(secs(s->since)));
	json_object_set_new(o, "progress_s", json_real(secs(s->progress)));
	json_object_set_new(
		o, "gaps",
		json_pack("{s:o, s:f}", "count", ju64(s->gaps), "seconds", secs(s->gap_ns)));
	json_object_set_new(o, "slice_overflow", ju64(s->overflow));
	for (size_t i = 0; i < s->n; i++)
		json_array_append_new(arr, json_profile(&s->v[i], flags));
	json_object_set_new(o, "profiles", arr);
	return dump_json(o, out);
}

/* ---- reading a baseline ----------------------------------------------------------- */

struct loader {
	const char *what;
	struct rsp_buf *err;
	unsigned r;
	size_t idx; /* profile being read, 1-based in messages */
};

static int bad(struct loader *l, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static int bad(struct loader *l, const char *fmt, ...)
{
	va_list ap;

	rsp_buf__printf(l->err, "%s: ", l->what);
	if (l->idx)
		rsp_buf__printf(l->err, "profile %zu: ", l->idx);
	va_start(ap, fmt);
	rsp_buf__vprintf(l->err, fmt, ap);
	va_end(ap);
	rsp_buf__puts(l->err, " — the file is damaged or was not written by 'rspctl hist --save'");
	return -EINVAL;
}

/* A non-negative integer (or a real for values past 2^63). */
static int get_u64(json_t *v, uint64_t *out)
{
	double d;

	if (json_is_integer(v) && json_integer_value(v) >= 0) {
		*out = (uint64_t)json_integer_value(v);
		return 0;
	}
	if (!json_is_real(v))
		return -EINVAL;
	d = json_real_value(v);
	if (!(d >= 0) || d > 1.8446744073709552e19)
		return -EINVAL;
	*out = d >= 1.8446744073709552e19 ? UINT64_MAX : (uint64_t)d;
	return 0;
}

static int field_u64(struct loader *l, json_t *o, const char *key, uint64_t *out)
{
	json_t *v = json_object_get(o, key);

	if (!v)
		return bad(l, "'%s' is missing", key);
	if (get_u64(v, out))
		return bad(l, "'%s' is not a non-negative integer", key);
	return 0;
}

/* A bound read back: exact for integers, to double precision for reals. */
static bool bound_is(json_t *v, uint64_t want)
{
	uint64_t got;

	if (get_u64(v, &got))
		return false;
	if (json_is_integer(v))
		return got == want;
	return fabs(json_real_value(v) - (double)want) <= 1e-15 * (double)want;
}

static int load_subject(struct loader *l, json_t *o, struct rsp_hist_subject *s)
{
	const char *kind;
	const char *comm = NULL;
	int other = 0;
	uint64_t v;
	int k = -1;

	memset(s, 0, sizeof(*s));
	if (!json_is_object(o) || json_unpack(o, "{s:s}", "kind", &kind))
		return bad(l, "'subject' has no 'kind'");
	for (unsigned i = 0; i < RSP_HSUBJ__NR; i++)
		if (!strcmp(kind, rsp_hist__subject_kind_name(i)))
			k = (int)i;
	if (k < 0)
		return bad(l, "unknown subject kind '%s'", kind);
	s->kind = (enum rsp_hist_subject_kind)k;
	if (k == RSP_HSUBJ_PROCESS || k == RSP_HSUBJ_THREAD) {
		if (field_u64(l, o, "pid", &v) || v > UINT32_MAX)
			return -EINVAL;
		s->pid = (uint32_t)v;
	}
	if (k == RSP_HSUBJ_THREAD) {
		if (field_u64(l, o, "tid", &v) || v > UINT32_MAX)
			return -EINVAL;
		s->tid = (uint32_t)v;
	}
	if (json_unpack(o, "{s?s}", "comm", &comm))
		return bad(l, "'comm' is not a string");
	if (json_unpack(o, "{s?b}", "other_user", &other))
		return bad(l, "'other_user' is not true or false");
	if (other && k != RSP_HSUBJ_PROCESS && k != RSP_HSUBJ_THREAD)
		return bad(l, "only a process or a thread can be another user's");
	s->other_user = other;
	if (comm && strlen(comm) >= RSP_HIST_COMM_LEN)
		return bad(l, "comm '%s' is longer than 15 bytes", comm);
	if (comm)
		snprintf(s->comm, sizeof(s->comm), "%s", comm);
	if (k == RSP_HSUBJ_COMM && !comm)
		return bad(l, "a 'comm' subject has no 'comm'");
	return 0;
}

/* The op's kind (and arg where the name alone says it). */
static int load_op(struct loader *l, const char *name, uint64_t *op)
{
	struct rsp_buf e = RSP_BUF_INIT;
	const char *arg;
	unsigned kind;
	uint32_t num = 0, dev;
	bool has_num;
	int ret = rsp_hist__parse_op(name, &kind, &arg, &num, &has_num, &e);

	rsp_buf__exit(&e);
	if (ret || (!arg && kind != RSP_HOP_RUNQ))
		return bad(l, "'%s' is not an operation", name);
	if (kind == RSP_HOP_BLK_QUEUE || kind == RSP_HOP_BLK_SERVICE) {
		if (!strchr(arg, ':') || rsp_hist__dev_parse(arg, &dev))
			return bad(l, "'%s' does not name a device as MAJOR:MINOR", name);
		num = dev;
	}
	*op = RSP_HIST_OP(kind, num);
	return 0;
}

static int load_buckets(struct loader *l, json_t *arr, struct rsp_hist_profile *p)
{
	unsigned nb = rsp_hist__nr_buckets(l->r);
	uint64_t total = 0;
	size_t i;
	json_t *b;

	if (!json_is_array(arr))
		return bad(l, "'buckets' is not a list");
	json_array_foreach (arr, i, b) {
		uint64_t idx, count;

		if (!json_is_object(b) || field_u64(l, b, "bucket", &idx) ||
		    field_u64(l, b, "count", &count))
			return -EINVAL;
		if (idx >= nb)
			return bad(l, "bucket %llu does not exist at resolution %u",
				   (unsigned long long)idx, l->r);
		if (!bound_is(json_object_get(b, "low_ns"),
			      rsp_hist__bucket_low((unsigned)idx, l->r)) ||
		    !bound_is(json_object_get(b, "high_ns"),
			      rsp_hist__bucket_high((unsigned)idx, l->r)))
			return bad(l, "bucket %llu's bounds are not those of resolution %u",
				   (unsigned long long)idx, l->r);
		if (p->buckets[idx])
			return bad(l, "bucket %llu appears twice", (unsigned long long)idx);
		p->buckets[idx] = count;
		if (total + count < total)
			return bad(l, "bucket counts overflow");
		total += count;
	}
	if (total != p->count)
		return bad(l, "'count' is %llu but its buckets hold %llu",
			   (unsigned long long)p->count, (unsigned long long)total);
	return 0;
}

/* Optional per-slice rows ("slices", written with --slices). */
static int load_rows(struct loader *l, json_t *arr, struct rsp_hist_profile *p)
{
	unsigned nb = rsp_hist__nr_buckets(l->r);
	uint64_t *mem;
	size_t i;
	json_t *o;

	if (!arr)
		return 0;
	if (!json_is_array(arr) || !json_array_size(arr))
		return bad(l, "'slices' is not a list of slices");
	p->rows = calloc(json_array_size(arr), sizeof(*p->rows));
	mem = calloc(json_array_size(arr) * nb, sizeof(uint64_t));
	if (!p->rows || !mem) {
		free(p->rows);
		free(mem);
		p->rows = NULL;
		return -ENOMEM;
	}
	p->nr_rows = json_array_size(arr);
	for (i = 0; i < p->nr_rows; i++)
		p->rows[i].buckets = mem + i * nb;
	json_array_foreach (arr, i, o) {
		struct rsp_hist_profile row;
		json_t *start = json_object_get(o, "start_s");

		memset(&row, 0, sizeof(row));
		if (!json_is_number(start) || json_number_value(start) < 0)
			return bad(l, "slice %zu has no 'start_s'", i + 1);
		if (field_u64(l, o, "count", &row.count) || field_u64(l, o, "sum_ns", &row.sum) ||
		    load_buckets(l, json_object_get(o, "buckets"), &row))
			return -EINVAL;
		p->rows[i].start = (uint64_t)(json_number_value(start) * 1e9 + 0.5);
		p->rows[i].count = row.count;
		p->rows[i].sum = row.sum;
		memcpy(p->rows[i].buckets, row.buckets, nb * sizeof(uint64_t));
	}
	return 0;
}

static void free_rows(struct rsp_hist_profile *p)
{
	if (p->rows)
		free(p->rows[0].buckets);
	free(p->rows);
	p->rows = NULL;
	p->nr_rows = 0;
}

static int load_profile(struct loader *l, json_t *o, struct rsp_hist_set *set)
{
	struct rsp_hist_subject subj;
	struct rsp_hist_profile tmp, *p;
	const char *op, *label = NULL;
	uint64_t opkey = 0;

	if (!json_is_object(o))
		return bad(l, "not an object");
	if (load_subject(l, json_object_get(o, "subject"), &subj))
		return -EINVAL;
	if (json_unpack(o, "{s:s, s?s}", "op", &op, "op_label", &label))
		return bad(l, "'op' is missing or not a string");
	if (load_op(l, op, &opkey))
		return -EINVAL;
	if (rsp_hist_set__find(set, &subj, op))
		return bad(l, "a second profile of %s for the same subject", op);
	rsp_hist_profile__init(&tmp, &subj, op, l->r);
	tmp.op = opkey;
	if (label && strlen(label) < sizeof(tmp.op_label))
		snprintf(tmp.op_label, sizeof(tmp.op_label), "%s", label);
	if (field_u64(l, o, "count", &tmp.count) || field_u64(l, o, "sum_ns", &tmp.sum) ||
	    field_u64(l, o, "min_ns", &tmp.min) || field_u64(l, o, "max_ns", &tmp.max) ||
	    load_buckets(l, json_object_get(o, "buckets"), &tmp))
		return -EINVAL;
	if (tmp.count && (tmp.min > tmp.max ||
			  rsp_hist__bucket(tmp.min, l->r) > rsp_hist__bucket(tmp.max, l->r) ||
			  !tmp.buckets[rsp_hist__bucket(tmp.min, l->r)] ||
			  !tmp.buckets[rsp_hist__bucket(tmp.max, l->r)]))
		return bad(l, "min_ns and max_ns do not fall in its first and last buckets");
	if (json_object_get(o, "incomplete") && field_u64(l, o, "incomplete", &tmp.incomplete))
		return -EINVAL;
	if (json_object_get(o, "open") && field_u64(l, o, "open", &tmp.open))
		return -EINVAL;
	if (json_object_get(o, "inferred") && field_u64(l, o, "inferred", &tmp.inferred))
		return -EINVAL;

	if (load_rows(l, json_object_get(o, "slices"), &tmp)) {
		free_rows(&tmp);
		return -EINVAL;
	}
	p = rsp_hist_set__get(set, &subj, op);
	if (!p) {
		free_rows(&tmp);
		return -ENOMEM;
	}
	*p = tmp;
	return 0;
}

static int load_root(struct loader *l, json_t *root, struct rsp_hist_set **out)
{
	const char *fmt = NULL;
	json_int_t version = 0, r = 0;
	json_t *profiles, *range, *o;
	struct rsp_hist_set *set;
	size_t i;
	int ret = 0;

	if (!json_is_object(root) || json_unpack(root, "{s:s}", "format", &fmt) ||
	    strcmp(fmt, "rsp-hist"))
		return bad(l, "not a latency profile file ('format' is not \"rsp-hist\")");
	if (json_unpack(root, "{s:I}", "version", &version) || version < 1)
		return bad(l, "no valid 'version'");
	if (version > 1) {
		rsp_buf__printf(l->err,
				"%s: written by a newer rspctl (format version %lld); this one "
				"reads version 1 — save the baseline again with this rspctl",
				l->what, (long long)version);
		return -EINVAL;
	}
	if (json_unpack(root, "{s:I}", "resolution", &r) || (r != 1 && r != 2))
		return bad(l, "'resolution' is not 1 or 2");
	l->r = (unsigned)r;
	profiles = json_object_get(root, "profiles");
	if (!json_is_array(profiles))
		return bad(l, "'profiles' is missing or not a list");
	set = rsp_hist_set__new(l->r);
	if (!set)
		return -ENOMEM;
	range = json_object_get(root, "range");
	if (json_is_object(range)) {
		json_t *cum = json_object_get(range, "cumulative");

		set->ranged = cum && json_is_false(cum);
		set->from = (uint64_t)(json_number_value(json_object_get(range, "from_s")) * 1e9);
		set->to = (uint64_t)(json_number_value(json_object_get(range, "to_s")) * 1e9);
		set->since = set->from;
		set->progress = set->to;
	}
	json_array_foreach (profiles, i, o) {
		l->idx = i + 1;
		ret = load_profile(l, o, set);
		if (ret)
			break;
	}
	if (ret) {
		rsp_hist_set__delete(set);
		return ret;
	}
	*out = set;
	return 0;
}

int rsp_hist_set__load_json(const char *text, size_t len, const char *what,
			    struct rsp_hist_set **out, struct rsp_buf *err)
{
	struct loader l = {.what = what, .err = err};
	json_error_t je;
	json_t *root;
	int ret;

	*out = NULL;
	root = json_loadb(text, len, JSON_REJECT_DUPLICATES, &je);
	if (!root) {
		rsp_buf__printf(err,
				"%s: not valid JSON (line %d: %s) — the file is damaged or was "
				"not written by 'rspctl hist --save'",
				what, je.line, je.text);
		return -EINVAL;
	}
	ret = load_root(&l, root, out);
	json_decref(root);
	return ret;
}

/* ---- diffs ------------------------------------------------------------------------- */

static const char *verdict_name(enum rsp_hist_verdict v)
{
	return v == RSP_HV_SELECTED ? "selected" : v == RSP_HV_SIMILAR ? "similar" : "tiny";
}

static const struct rsp_hist_profile *pair_any(const struct rsp_hist_pair *p)
{
	return p->cur ? p->cur : p->base;
}

static void pair_text(const struct rsp_hist_pair *p, size_t rank, struct rsp_buf *out)
{
	const struct rsp_hist_profile *any = pair_any(p);
	char subj[64], a[24], b[24], emd[32], chi[40];
	double rel = p->total_base ? 100.0 * ((double)p->total_cur - (double)p->total_base) /
					     (double)p->total_base
				   : 0.0;

	rsp_buf__printf(out, "%3zu  %s  %s\n", rank, any->op_label,
			rsp_hist_subject__format(&any->subject, subj, sizeof(subj)));
	if (p->emd < 0)
		snprintf(emd, sizeof(emd), "%s", p->cur && p->cur->count ? "new" : "gone");
	else
		snprintf(emd, sizeof(emd), "%.3f", p->emd);
	if (p->chi2 < 0)
		snprintf(chi, sizeof(chi), "-");
	else
		snprintf(chi, sizeof(chi), "%.1f (df %d)", p->chi2, p->df);
	rsp_buf__printf(out, "     count %llu -> %llu, total %s -> %s",
			(unsigned long long)p->count_base, (unsigned long long)p->count_cur,
			rsp_hist__fmt_ns((double)p->total_base, a, sizeof(a)),
			rsp_hist__fmt_ns((double)p->total_cur, b, sizeof(b)));
	if (p->total_base)
		rsp_buf__printf(out, " (%+.0f%%)", rel);
	rsp_buf__printf(out, "\n     EMD %s, chi-square %s, peaks %d -> %d%s\n", emd, chi,
			p->peaks_base, p->peaks_cur, p->peaks_moved ? " (moved)" : "");
}

int rsp_hist_diff__render_text(const struct rsp_hist_diff *d, const char *base_what,
			       const char *cur_what, size_t show, struct rsp_buf *out)
{
	size_t shown = 0;

	rsp_buf__printf(out, "diff at r=%u\n  baseline %s\n  now      %s\n", d->resolution,
			base_what, cur_what);
	rsp_buf__printf(
		out,
		"%zu pairs: %zu selected, %zu with similar totals, %zu tiny (OSprof "
		"phase 1);\nselected pairs ranked by EMD, those that appeared, vanished or\n"
		"had under %llu operations on a side first (phase 3)\n\n",
		d->n, d->selected, d->similar, d->tiny, (unsigned long long)d->min_count);
	for (size_t i = 0; i < d->selected; i++)
		pair_text(&d->v[i], i + 1, out);
	if (!d->selected)
		rsp_buf__puts(out, "no pair differs enough to select\n");
	for (size_t i = 0; i < d->selected && shown < show; i++, shown++) {
		const struct rsp_hist_pair *p = &d->v[i];

		rsp_buf__printf(out, "\n== %zu. baseline\n", i + 1);
		if (p->base)
			rsp_hist_profile__render(p->base, out);
		else
			rsp_buf__puts(out, "absent\n");
		rsp_buf__printf(out, "== %zu. now\n", i + 1);
		if (p->cur)
			rsp_hist_profile__render(p->cur, out);
		else
			rsp_buf__puts(out, "absent\n");
	}
	return 0;
}

static json_t *jnum_or_null(double v)
{
	return v < 0 ? json_null() : json_real(v);
}

int rsp_hist_diff__render_json(const struct rsp_hist_diff *d, const char *base_what,
			       const char *cur_what, struct rsp_buf *out)
{
	json_t *o = json_object(), *arr = json_array();
	char subj[64];

	json_object_set_new(o, "format", json_string("rsp-hist-diff"));
	json_object_set_new(o, "version", json_integer(1));
	json_object_set_new(o, "base", json_string(base_what));
	json_object_set_new(o, "current", json_string(cur_what));
	json_object_set_new(o, "resolution", json_integer(d->resolution));
	json_object_set_new(o, "selected", ju64(d->selected));
	json_object_set_new(o, "similar", ju64(d->similar));
	json_object_set_new(o, "tiny", ju64(d->tiny));
	for (size_t i = 0; i < d->n; i++) {
		const struct rsp_hist_pair *p = &d->v[i];
		const struct rsp_hist_profile *any = pair_any(p);
		json_t *j = json_object();

		json_object_set_new(j, "rank", json_integer((json_int_t)i + 1));
		json_object_set_new(j, "verdict", json_string(verdict_name(p->verdict)));
		json_object_set_new(j, "op", json_string(any->op_name));
		json_object_set_new(j, "op_label", json_string(any->op_label));
		json_object_set_new(j, "subject", json_subject(&any->subject));
		json_object_set_new(
			j, "subject_name",
			json_string(rsp_hist_subject__format(&any->subject, subj, sizeof(subj))));
		json_object_set_new(j, "count_base", ju64(p->count_base));
		json_object_set_new(j, "count_cur", ju64(p->count_cur));
		json_object_set_new(j, "total_base_ns", ju64(p->total_base));
		json_object_set_new(j, "total_cur_ns", ju64(p->total_cur));
		json_object_set_new(j, "emd", jnum_or_null(p->emd));
		json_object_set_new(j, "chi2", jnum_or_null(p->chi2));
		json_object_set_new(j, "df", json_integer(p->df));
		json_object_set_new(j, "peaks_base", json_integer(p->peaks_base));
		json_object_set_new(j, "peaks_cur", json_integer(p->peaks_cur));
		json_object_set_new(j, "peaks_moved", json_boolean(p->peaks_moved));
		json_object_set_new(j, "lopsided", json_boolean(p->lopsided));
		json_array_append_new(arr, j);
	}
	json_object_set_new(o, "pairs", arr);
	return dump_json(o, out);
}
