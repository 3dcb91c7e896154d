// SPDX-License-Identifier: LGPL-2.1
/*
 * Latency profiles as text (bcc's print_log2_hist look, heat maps of time
 * slices, diffs) and diffs as JSON; a set's JSON, written and read, is
 * lib/format/hist_json.c. Text stays under 80 columns.
 */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <jansson.h>
#include <rsp/hist.h>
#include <rsp/hist_render.h>
#include "internal/hist.h"
#include "internal/hist_json.h"

#define CGROUP_COLUMN 32 /* the subject column of hist --by cgroup */
#include "internal/json.h"

#define MAX_PEAKS 16

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

/* The subject column: wider when cgroups are the subjects (hist --by cgroup). */
static int subject_width(const struct rsp_hist_set *s)
{
	for (size_t i = 0; i < s->n; i++)
		if (s->v[i].subject.kind == RSP_HSUBJ_CGROUP)
			return CGROUP_COLUMN;
	return 18;
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
	char subj[64], a[24], b[24], c[24], d[24], e[24], f[24], g[24];
	unsigned r = p->resolution;

	rsp_buf__printf(out, "%s  %s\n", p->op_label,
			rsp_hist_subject__format(&p->subject, 0, subj, sizeof(subj)));
	if (!p->count) {
		rsp_buf__puts(out, "no latencies observed\n");
		incomplete_text(p, out);
		return 0;
	}
	rsp_buf__printf(out, "count %llu, max %s, total %s\n", (unsigned long long)p->count,
			rsp_hist__fmt_ns((double)p->max, d, sizeof(d)),
			rsp_hist__fmt_ns((double)p->sum, e, sizeof(e)));
	rsp_buf__printf(out, "min %s, mean %s, stddev %s, p50 %s, p99 %s\n",
			rsp_hist__fmt_ns((double)p->min, f, sizeof(f)),
			rsp_hist__fmt_ns((double)p->sum / (double)p->count, a, sizeof(a)),
			rsp_hist__fmt_ns(rsp_hist_profile__stddev(p), g, sizeof(g)),
			rsp_hist__fmt_ns((double)rsp_hist__percentile(p->buckets, r, p->count,
								      p->min, p->max, 0.5),
					 b, sizeof(b)),
			rsp_hist__fmt_ns((double)rsp_hist__percentile(p->buckets, r, p->count,
								      p->min, p->max, 0.99),
					 c, sizeof(c)));
	if (RSP_HIST_OP_KIND(p->op) == RSP_HOP_SYSCALL && p->sum)
		rsp_buf__printf(out,
				"off-CPU %.0f%% (%s of the total: switched out inside the call)\n",
				100.0 * (double)p->offcpu / (double)p->sum,
				rsp_hist__fmt_ns((double)p->offcpu, a, sizeof(a)));
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
				"per slice than --hist-slice-cap allows)\n",
				(unsigned long long)s->overflow);
	if (!s->ranged && s->evictions)
		rsp_buf__printf(out,
				"! %llu profiles were evicted into 'other' (more subjects than\n"
				"  --hist-profiles keeps): one evicted and seen again counts from "
				"then\n",
				(unsigned long long)s->evictions);
}

static void summary_table(const struct rsp_hist_set *s, struct rsp_buf *out)
{
	char subj[64], m[24], p99[24], t[24];
	int w = subject_width(s);

	rsp_buf__printf(out, "\n%-18s %-*s %8s %10s %10s %10s\n", "op", w, "subject", "count",
			"mean", "p99", "total");
	for (size_t i = 0; i < s->n; i++) {
		const struct rsp_hist_profile *p = &s->v[i];

		rsp_hist_subject__format(&p->subject, (unsigned)w, subj, sizeof(subj));
		subj[w] = '\0';
		rsp_buf__printf(
			out, "%-18.18s %-*s %8llu %10s %10s %10s\n", p->op_label, w, subj,
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
			rsp_hist_subject__format(&any->subject, 0, subj, sizeof(subj)));
	if (p->emd < 0 && p->unsure)
		snprintf(emd, sizeof(emd), "%s",
			 p->count_cur ? "new (or in 'other')" : "gone (or in 'other')");
	else if (p->emd < 0)
		snprintf(emd, sizeof(emd), "%s", p->count_cur ? "new" : "gone");
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

/*
 * A side whose store folded profiles into "other" (evicted: --hist-profiles;
 * or a slice at its cap): a subject missing there may have been active.
 */
static void folded_note(const char *side, uint64_t n, struct rsp_buf *out)
{
	if (n)
		rsp_buf__printf(out,
				"! %s: %llu profiles or slice updates went to 'other' (rspd\n"
				"  --hist-profiles, --hist-slice-cap; --top-cgroups): a subject "
				"absent\n  there may be in it\n",
				side, (unsigned long long)n);
}

int rsp_hist_diff__render_text(const struct rsp_hist_diff *d, const char *base_what,
			       const char *cur_what, size_t show, struct rsp_buf *out)
{
	size_t shown = 0;

	rsp_buf__printf(out, "diff at r=%u\n  baseline %s\n  now      %s\n", d->resolution,
			base_what, cur_what);
	folded_note("baseline", d->folded_base, out);
	folded_note("now", d->folded_cur, out);
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
	json_object_set_new(o, "selected", rsp_hist_json__u64(d->selected));
	json_object_set_new(o, "similar", rsp_hist_json__u64(d->similar));
	json_object_set_new(o, "tiny", rsp_hist_json__u64(d->tiny));
	json_object_set_new(o, "folded_base", rsp_hist_json__u64(d->folded_base));
	json_object_set_new(o, "folded_cur", rsp_hist_json__u64(d->folded_cur));
	for (size_t i = 0; i < d->n; i++) {
		const struct rsp_hist_pair *p = &d->v[i];
		const struct rsp_hist_profile *any = pair_any(p);
		json_t *j = json_object();

		json_object_set_new(j, "rank", json_integer((json_int_t)i + 1));
		json_object_set_new(j, "verdict", json_string(verdict_name(p->verdict)));
		json_object_set_new(j, "op", json_string(any->op_name));
		json_object_set_new(j, "op_label", json_string(any->op_label));
		json_object_set_new(j, "subject", rsp_hist_json__subject(&any->subject));
		json_object_set_new(j, "subject_name",
				    json_string(rsp_hist_subject__format(&any->subject, 0, subj,
									 sizeof(subj))));
		json_object_set_new(j, "count_base", rsp_hist_json__u64(p->count_base));
		json_object_set_new(j, "count_cur", rsp_hist_json__u64(p->count_cur));
		json_object_set_new(j, "total_base_ns", rsp_hist_json__u64(p->total_base));
		json_object_set_new(j, "total_cur_ns", rsp_hist_json__u64(p->total_cur));
		json_object_set_new(j, "emd", jnum_or_null(p->emd));
		json_object_set_new(j, "chi2", jnum_or_null(p->chi2));
		json_object_set_new(j, "df", json_integer(p->df));
		json_object_set_new(j, "peaks_base", json_integer(p->peaks_base));
		json_object_set_new(j, "peaks_cur", json_integer(p->peaks_cur));
		json_object_set_new(j, "peaks_moved", json_boolean(p->peaks_moved));
		json_object_set_new(j, "lopsided", json_boolean(p->lopsided));
		json_object_set_new(j, "unsure", json_boolean(p->unsure));
		json_array_append_new(arr, j);
	}
	json_object_set_new(o, "pairs", arr);
	return rsp_json__emit(o, out);
}
