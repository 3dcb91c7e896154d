// SPDX-License-Identifier: GPL-2.0
/*
 * The HTML page of rspctl report: one file, everything inline (styles,
 * scripts, data, SVG), so that it opens anywhere without a network. Text
 * from the answers is escaped here; data for the scripts sits in
 * <script type="application/json"> elements, with every '<', '>', '&',
 * U+2028 and U+2029 written as a \u escape (script_json()), so that no
 * name can close them or move the tokenizer into another state.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include "report.h"

struct page {
	struct rsp_buf *out;
	const struct report_data *d;
	size_t chain_nodes, chain_cut;
};

static void esc(struct rsp_buf *out, const char *s)
{
	for (; s && *s; s++) {
		switch (*s) {
		case '<':
			rsp_buf__puts(out, "&lt;");
			break;
		case '>':
			rsp_buf__puts(out, "&gt;");
			break;
		case '&':
			rsp_buf__puts(out, "&amp;");
			break;
		case '"':
			rsp_buf__puts(out, "&quot;");
			break;
		default:
			rsp_buf__add(out, s, 1);
		}
	}
}

/*
 * JSON text inside a <script> element. Escaping "</" alone is not enough:
 * "<!--" followed by "<script" puts the HTML tokenizer in the "script data
 * double escaped" state, where "</script>" no longer closes the element
 * (the page's JSON then swallows the rest of it). '<', '>' and '&' can only
 * occur inside JSON strings, where \u003c means the same; U+2028 and U+2029
 * are escaped too, for script parsers older than ES2019.
 */
static void script_json(struct rsp_buf *out, const char *json)
{
	for (const char *s = json; s && *s; s++) {
		if (*s == '<' || *s == '>' || *s == '&')
			rsp_buf__printf(out, "\\u%04x", (unsigned char)*s);
		else if (!strncmp(s, "\xe2\x80\xa8", 3) || !strncmp(s, "\xe2\x80\xa9", 3))
			rsp_buf__printf(out, "\\u%04x", s[2] == '\xa8' ? 0x2028 : 0x2029), s += 2;
		else
			rsp_buf__add(out, s, 1);
	}
}

static const char *str(json_t *o, const char *key)
{
	return json_string_value(json_object_get(o, key));
}

static double num(json_t *o, const char *key)
{
	return json_number_value(json_object_get(o, key));
}

static bool has(json_t *o, const char *key)
{
	return json_object_get(o, key) != NULL;
}

/* A duration in seconds, readable: "1.234 s", "12.3 ms", "45 us". */
static void dur(struct rsp_buf *out, double s)
{
	if (s >= 1)
		rsp_buf__printf(out, "%.3f s", s);
	else if (s >= 1e-3)
		rsp_buf__printf(out, "%.1f ms", s * 1e3);
	else
		rsp_buf__printf(out, "%.0f us", s * 1e6);
}

static void dur_ns(struct rsp_buf *out, double ns)
{
	dur(out, ns / 1e9);
}

/* ---- head ---------------------------------------------------------------- */

static void head(struct page *p)
{
	const struct report_data *d = p->d;
	json_t *s = d->snapshot;

	rsp_buf__puts(p->out,
		      "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
		      "<title>rsp report");
	if (d->pid >= 0)
		rsp_buf__printf(p->out, ": pid %ld", d->pid);
	if (s && str(s, "comm"))
		rsp_buf__puts(p->out, " ("), esc(p->out, str(s, "comm")),
			rsp_buf__puts(p->out, ")");
	rsp_buf__puts(p->out, "</title>\n<style>\n");
	rsp_buf__puts(p->out, report_flamegraph_css);
	rsp_buf__puts(p->out, report_page_css);
	rsp_buf__puts(p->out, "</style>\n</head>\n<body>\n<header>\n<h1>rsp report");
	if (d->pid >= 0)
		rsp_buf__printf(p->out, ": pid %ld", d->pid);
	if (s && str(s, "comm"))
		rsp_buf__puts(p->out, " ("), esc(p->out, str(s, "comm")),
			rsp_buf__puts(p->out, ")");
	rsp_buf__puts(p->out, "</h1>\n<p class=\"sub\">");
	esc(p->out, d->range);
	rsp_buf__puts(p->out, ", from ");
	esc(p->out, d->source);
	if (s)
		rsp_buf__printf(p->out, ": %.6f .. %.6f s (%.3f s of wall time)", num(s, "start_s"),
				num(s, "end_s"), num(s, "wall_s"));
	rsp_buf__puts(p->out, "</p>\n<nav><a href=\"#window\">window</a> ");
	if (s)
		rsp_buf__puts(p->out, "<a href=\"#explanation\">explanation</a> "
				      "<a href=\"#flame\">flame graph</a> "
				      "<a href=\"#chrono\">chronological view</a> ");
	rsp_buf__puts(p->out, "<a href=\"#graph\">wait-for graph</a> "
			      "<a href=\"#profiles\">latency profiles</a></nav>\n</header>\n");
}

/* ---- what the window held ------------------------------------------------ */

static void row(struct rsp_buf *out, const char *name)
{
	rsp_buf__puts(out, "<tr><th>");
	esc(out, name);
	rsp_buf__puts(out, "</th><td>");
}

static void row_num(struct rsp_buf *out, const char *name, json_t *o, const char *key,
		    const char *unit)
{
	row(out, name);
	if (json_is_number(json_object_get(o, key)))
		rsp_buf__printf(out, "%.15g%s", num(o, key), unit);
	else
		rsp_buf__puts(out, "<span class=\"unknown\">unknown</span>");
	rsp_buf__puts(out, "</td></tr>\n");
}

static void window_section(struct page *p)
{
	struct rsp_buf *out = p->out;
	json_t *st = p->d->status, *s = p->d->snapshot;
	json_t *cfg = json_object_get(st, "config"), *w = json_object_get(st, "window");
	json_t *sw = s ? json_object_get(s, "window") : NULL;
	json_t *deg = s ? json_object_get(s, "degraded") : NULL, *x;
	size_t i;

	rsp_buf__puts(out, "<section id=\"window\">\n<h2>What the window held</h2>\n"
			   "<table class=\"facts\">\n");
	row(out, "capture backend");
	if (str(cfg, "capture"))
		esc(out, str(cfg, "capture"));
	else if (json_is_true(json_object_get(st, "offline")))
		rsp_buf__puts(out, "a file (rspctl analyze): the backend that recorded it is not "
				   "in the dump");
	else
		rsp_buf__puts(out, "<span class=\"unknown\">unknown</span>");
	rsp_buf__puts(out, "</td></tr>\n");
	/* live: status's own count; offline: the window the dump was loaded into */
	row_num(out, "records in the window", has(st, "records") ? st : w, "records", "");
	row_num(out, "records lost (ring overruns)", st, "lost", "");
	row_num(out, "window span", w, "span_s", " s");
	row_num(out, "chunks evicted (oldest first)", w, "evicted_chunks", "");
	row_num(out, "lost-record gaps marked", w, "lost_marked", "");
	if (sw) {
		row_num(out, "records in the range", sw, "records", "");
		row_num(out, "gaps in the range", sw, "gaps", "");
		row_num(out, "wakings not seen", sw, "wakings_not_seen", "");
		row_num(out, "wakers inferred", sw, "wakers_inferred", "");
	}
	if (s) {
		row_num(out, "time inferred (not seen)", s, "inferred_s", " s");
		row_num(out, "percent of the time accounted", s, "percent_accounted", " %");
		row_num(out, "unknown: not delivered", json_object_get(s, "unknown_detail"),
			"not_delivered_s", " s");
		row_num(out, "unknown: in gaps", json_object_get(s, "unknown_detail"), "gaps_s",
			" s");
		row_num(out, "samples of the pid", s, "samples", "");
	}
	rsp_buf__puts(out, "</table>\n");
	if (json_array_size(deg)) {
		rsp_buf__puts(out, "<p class=\"warn\">What this answer lacks:</p>\n<ul>\n");
		json_array_foreach (deg, i, x) {
			rsp_buf__puts(out, "<li>");
			esc(out, json_is_string(x) ? json_string_value(x)
				 : str(x, "what")  ? str(x, "what")
						   : "(see rspctl snapshot --json)");
			rsp_buf__puts(out, "</li>\n");
		}
		rsp_buf__puts(out, "</ul>\n");
	}
	rsp_buf__puts(out, "</section>\n");
}

/* ---- explanation --------------------------------------------------------- */

static void categories_table(struct page *p, json_t *s)
{
	json_t *cats = json_object_get(s, "categories"), *v;
	double total = num(s, "total_s");
	const char *k;

	rsp_buf__puts(p->out, "<table class=\"cats\" id=\"categories\">\n<tr><th>category</th>"
			      "<th>time</th><th>share</th></tr>\n");
	json_object_foreach (cats, k, v) {
		double sec = json_number_value(v);

		rsp_buf__puts(p->out, "<tr><td>");
		esc(p->out, k);
		rsp_buf__puts(p->out, "</td><td>");
		dur(p->out, sec);
		rsp_buf__printf(p->out, "</td><td>%.1f%%</td></tr>\n",
				total > 0 ? 100 * sec / total : 0.0);
	}
	rsp_buf__printf(p->out,
			"<tr class=\"total\"><td>total</td><td>%.6f s</td><td>%.1f%% "
			"accounted</td></tr>\n</table>\n",
			total, num(s, "percent_accounted"));
}

static void node_label(struct page *p, json_t *n)
{
	const char *kind = str(n, "kind");
	json_t *stack = json_object_get(n, "stack"), *w = json_object_get(n, "waker");

	rsp_buf__puts(p->out, "<span class=\"k\">");
	esc(p->out, kind);
	rsp_buf__puts(p->out, "</span> ");
	if (str(n, "comm")) {
		esc(p->out, str(n, "comm"));
		rsp_buf__printf(p->out, " %lld ",
				(long long)json_integer_value(json_object_get(n, "tid")));
	}
	if (str(n, "reason"))
		rsp_buf__puts(p->out, "("), esc(p->out, str(n, "reason")),
			rsp_buf__puts(p->out, ") ");
	if (str(n, "function"))
		rsp_buf__puts(p->out, "in "), esc(p->out, str(n, "function")),
			rsp_buf__puts(p->out, " ");
	else if (json_array_size(stack))
		esc(p->out, str(json_array_get(stack, 0), "name")), rsp_buf__puts(p->out, " ");
	if (w && str(w, "kind"))
		rsp_buf__puts(p->out, "woken by "), esc(p->out, str(w, "kind")),
			rsp_buf__puts(p->out, " ");
	rsp_buf__puts(p->out, "<b>");
	dur(p->out, num(n, "total_s"));
	rsp_buf__puts(p->out, "</b>");
	if (num(n, "count") > 1)
		rsp_buf__printf(p->out, " &times;%.0f", num(n, "count"));
}

static void chain_node(struct page *p, json_t *n, int depth)
{
	json_t *kids = json_object_get(n, "children"), *c;
	size_t i;

	if (p->chain_nodes >= p->d->max_chain_nodes) {
		p->chain_cut++;
		json_array_foreach (kids, i, c)
			chain_node(p, c, depth + 1);
		return;
	}
	p->chain_nodes++;
	if (!json_array_size(kids)) {
		rsp_buf__puts(p->out, "<div class=\"leaf\">");
		node_label(p, n);
		rsp_buf__puts(p->out, "</div>\n");
		return;
	}
	rsp_buf__puts(p->out, depth < 2 ? "<details open><summary>" : "<details><summary>");
	node_label(p, n);
	rsp_buf__puts(p->out, "</summary>\n");
	json_array_foreach (kids, i, c)
		chain_node(p, c, depth + 1);
	rsp_buf__puts(p->out, "</details>\n");
}

static void explanation_section(struct page *p)
{
	json_t *s = p->d->snapshot, *c;
	size_t i;

	if (!s)
		return;
	rsp_buf__puts(p->out, "<section id=\"explanation\">\n<h2>Where the time went</h2>\n"
			      "<p>The recursive snapshot's categories of explanation: what the "
			      "process's threads did, and what they waited for, followed to its "
			      "cause.</p>\n");
	categories_table(p, s);
	rsp_buf__puts(p->out, "<details class=\"chain\" id=\"chain\"><summary>The chain: the "
			      "pseudostacks, heaviest first</summary>\n");
	json_array_foreach (json_object_get(s, "chain"), i, c)
		chain_node(p, c, 0);
	rsp_buf__puts(p->out, "</details>\n");
	if (p->chain_cut)
		rsp_buf__printf(
			p->out,
			"<p class=\"cap\">The chain shows its first %zu nodes: %zu more are "
			"left out of this page (rspctl snapshot --json has them all).</p>\n",
			p->chain_nodes, p->chain_cut);
	rsp_buf__puts(p->out, "</section>\n");
}

/* ---- flame graph --------------------------------------------------------- */

static void legend(struct rsp_buf *out)
{
	static const char *const kinds[] = {"running", "runnable", "block_io", "network", "lock",
					    "timer",   "other",	   "unknown",  "mixed"};

	rsp_buf__puts(out, "<div class=\"legend\">");
	for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++)
		rsp_buf__printf(out, "<span class=\"sw kind-%s\"></span>%s ", kinds[i], kinds[i]);
	rsp_buf__puts(out, "</div>\n");
}

static void flame_section(struct page *p)
{
	const struct report_data *d = p->d;

	if (!d->snapshot)
		return;
	rsp_buf__puts(p->out,
		      "<section id=\"flame\">\n<h2>Flame graph: the process's time</h2>\n"
		      "<p>On-CPU time from samples and off-CPU time from sleeps in one view (RSP's "
		      "consolidated flame graph), in microseconds; under a sleep, the runs of "
		      "whoever the process waited for. Click a frame to zoom, search to "
		      "highlight.</p>\n");
	if (d->flame_note)
		rsp_buf__puts(p->out, "<p class=\"cap\">"), esc(p->out, d->flame_note),
			rsp_buf__puts(p->out, "</p>\n");
	if (report_libs_missing) {
		rsp_buf__puts(p->out, "<p class=\"warn\" id=\"flame-missing\">No flame graph: this "
				      "rspctl was built without ");
		esc(p->out, report_libs_missing);
		rsp_buf__puts(p->out, ".</p>\n</section>\n");
		return;
	}
	legend(p->out);
	rsp_buf__puts(p->out,
		      "<form class=\"tools\" id=\"flame-form\"><input id=\"flame-search\" "
		      "type=\"search\" placeholder=\"search frames\"> <button "
		      "type=\"button\" id=\"flame-reset\">reset zoom</button> <span "
		      "id=\"flame-details\"></span></form>\n<div id=\"flame-chart\"></div>\n"
		      "<script type=\"application/json\" id=\"rsp-flame\">");
	script_json(p->out, d->flame_json);
	rsp_buf__puts(p->out, "</script>\n</section>\n");
}

/* ---- chronological view -------------------------------------------------- */

static void chrono_section(struct page *p)
{
	const struct report_data *d = p->d;

	if (!d->snapshot || !d->chrono_json)
		return;
	rsp_buf__puts(p->out,
		      "<section id=\"chrono\">\n<h2>Chronological view: the process's "
		      "pseudostacks in time</h2>\n<p>RSP's flame view: per thread of the process, "
		      "what it did when (running, runnable, sleeping by reason), and under a sleep "
		      "what the thread that ended it did meanwhile. Wheel to zoom the time axis, "
		      "drag to pan; hover a slice for its name and length.</p>\n");
	if (d->chrono_note)
		rsp_buf__puts(p->out, "<p class=\"cap\">"), esc(p->out, d->chrono_note),
			rsp_buf__puts(p->out, "</p>\n");
	if (report_libs_missing) {
		rsp_buf__puts(p->out, "<p class=\"warn\">No chronological view: this rspctl was "
				      "built without ");
		esc(p->out, report_libs_missing);
		rsp_buf__puts(p->out, ".</p>\n</section>\n");
		return;
	}
	legend(p->out);
	rsp_buf__puts(p->out, "<div id=\"chrono-chart\"></div>\n<script "
			      "type=\"application/json\" id=\"rsp-chrono\">");
	script_json(p->out, d->chrono_json);
	rsp_buf__puts(p->out, "</script>\n</section>\n");
}

/* ---- wait-for graph ------------------------------------------------------ */

static void graph_section(struct page *p)
{
	rsp_buf__puts(p->out,
		      "<section id=\"graph\">\n<h2>Wait-for graph</h2>\n<p>Edge A &rarr; B: "
		      "A waited for B (cascaded); knots (threads that wait only for each "
		      "other) in red, background knots in grey; laid out by "
		      "Graphviz.</p>\n");
	if (p->d->graph_note)
		rsp_buf__puts(p->out, "<p class=\"cap\">"), esc(p->out, p->d->graph_note),
			rsp_buf__puts(p->out, "</p>\n");
	rsp_buf__puts(p->out, "<div class=\"graph\">");
	rsp_buf__puts(p->out, p->d->graph_svg ? p->d->graph_svg : "");
	rsp_buf__puts(p->out, "</div>\n</section>\n");
}

/* ---- latency profiles ---------------------------------------------------- */

#define HW 420 /* chart width */
#define HH 110 /* chart height */
#define HB 18  /* bottom margin for the axis labels */

static bool in_peak(json_t *peaks, double low, size_t *which)
{
	json_t *pk;
	size_t i;

	json_array_foreach (peaks, i, pk)
		if (low >= num(pk, "low_ns") && low <= num(pk, "high_ns")) {
			*which = i;
			return true;
		}
	return false;
}

static void size_label(struct rsp_buf *out, double ns)
{
	if (ns >= 1e9)
		rsp_buf__printf(out, "%.0fs", ns / 1e9);
	else if (ns >= 1e6)
		rsp_buf__printf(out, "%.0fms", ns / 1e6);
	else if (ns >= 1e3)
		rsp_buf__printf(out, "%.0fus", ns / 1e3);
	else
		rsp_buf__printf(out, "%.0fns", ns);
}

/* One profile: a bar per log2 bucket from its lowest to its highest, peaks marked. */
static void profile_chart(struct rsp_buf *out, json_t *pr)
{
	json_t *b = json_object_get(pr, "buckets"), *peaks = json_object_get(pr, "peaks"), *x;
	size_t n = json_array_size(b), i, which;
	double maxc = 1, bw;

	if (!n)
		return;
	json_array_foreach (b, i, x)
		if (num(x, "count") > maxc)
			maxc = num(x, "count");
	bw = (double)HW / (double)n;
	rsp_buf__printf(out,
			"<svg class=\"hist\" width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\">", HW,
			HH + HB, HW, HH + HB);
	json_array_foreach (b, i, x) {
		double h = (HH - 14) * num(x, "count") / maxc;
		bool pk = in_peak(peaks, num(x, "low_ns"), &which);

		rsp_buf__printf(out,
				"<rect class=\"%s\" x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" "
				"height=\"%.1f\"><title>",
				pk ? "bar peak" : "bar", (double)i * bw + 1, HH - h, bw - 2, h);
		size_label(out, num(x, "low_ns"));
		rsp_buf__puts(out, "..");
		size_label(out, num(x, "high_ns") + 1);
		rsp_buf__printf(out, ": %.0f%s</title></rect>", num(x, "count"),
				pk ? " (in a peak)" : "");
		if (i % 2 == 0 || n < 8) {
			rsp_buf__printf(out, "<text class=\"ax\" x=\"%.1f\" y=\"%d\">",
					(double)i * bw + 1, HH + 12);
			size_label(out, num(x, "low_ns"));
			rsp_buf__puts(out, "</text>");
		}
	}
	json_array_foreach (peaks, i, x) {
		/* a caret over the peak's mean bucket */
		double lo = num(x, "low_ns"), mean = num(x, "mean_ns");
		size_t k;
		json_t *y;

		json_array_foreach (b, k, y)
			if (mean >= num(y, "low_ns") && mean <= num(y, "high_ns") + 1) {
				rsp_buf__printf(
					out,
					"<text class=\"peakmark\" x=\"%.1f\" y=\"11\">&#9660; peak "
					"%zu</text>",
					(double)k * bw + 1, i + 1);
				break;
			}
		(void)lo;
	}
	rsp_buf__puts(out, "</svg>\n");
}

static void profile(struct rsp_buf *out, json_t *pr)
{
	json_t *pk;
	size_t i;

	rsp_buf__puts(out, "<div class=\"profile\"><h3>");
	esc(out, str(pr, "subject_name"));
	rsp_buf__puts(out, " &mdash; ");
	esc(out, str(pr, "op_label") ? str(pr, "op_label") : str(pr, "op"));
	rsp_buf__printf(out, "</h3>\n<p>%.0f events, total ", num(pr, "count"));
	dur_ns(out, num(pr, "sum_ns"));
	rsp_buf__puts(out, ", mean ");
	dur_ns(out, num(pr, "mean_ns"));
	if (has(pr, "p99_ns"))
		rsp_buf__puts(out, ", p99 &le; "), dur_ns(out, num(pr, "p99_ns"));
	if (num(pr, "inferred") > 0)
		rsp_buf__printf(out, ", %.0f inferred", num(pr, "inferred"));
	rsp_buf__puts(out, "</p>\n");
	profile_chart(out, pr);
	json_array_foreach (json_object_get(pr, "peaks"), i, pk) {
		rsp_buf__printf(out, "<span class=\"peak\">peak %zu: ", i + 1);
		dur_ns(out, num(pk, "low_ns"));
		rsp_buf__puts(out, " .. ");
		dur_ns(out, num(pk, "high_ns") + 1);
		rsp_buf__printf(out, ", %.0f%% of events, mean ", 100 * num(pk, "share"));
		dur_ns(out, num(pk, "mean_ns"));
		rsp_buf__puts(out, "</span> ");
	}
	rsp_buf__puts(out, "</div>\n");
}

static void profiles_section(struct page *p)
{
	json_t *profiles = json_object_get(p->d->hist, "profiles"), *pr;
	size_t i;

	rsp_buf__puts(p->out, "<section id=\"profiles\">\n<h2>Latency profiles</h2>\n<p>rspd's "
			      "log2 latency profiles");
	if (p->d->pid >= 0)
		rsp_buf__printf(p->out, " of pid %ld", p->d->pid);
	rsp_buf__puts(p->out, " (rspctl hist): one bar per power of two, peaks in red.</p>\n");
	if (!json_array_size(profiles))
		rsp_buf__puts(p->out, "<p>No profile in the range.</p>\n");
	json_array_foreach (profiles, i, pr)
		profile(p->out, pr);
	rsp_buf__puts(p->out, "</section>\n");
}

/* ---- scripts ------------------------------------------------------------- */

static void scripts(struct page *p)
{
	if (!report_libs_missing) {
		rsp_buf__puts(p->out, "<script>\n");
		rsp_buf__puts(p->out, report_d3_js);
		rsp_buf__puts(p->out, "\n</script>\n<script>\n");
		rsp_buf__puts(p->out, report_flamegraph_js);
		rsp_buf__puts(p->out, "\n</script>\n");
	}
	rsp_buf__puts(p->out, "<script>\n");
	rsp_buf__puts(p->out, report_page_js);
	rsp_buf__puts(p->out, "\n</script>\n</body>\n</html>\n");
}

int report_page__render(const struct report_data *d, struct rsp_buf *out)
{
	struct page p = {.out = out, .d = d};

	head(&p);
	window_section(&p);
	explanation_section(&p);
	flame_section(&p);
	chrono_section(&p);
	graph_section(&p);
	profiles_section(&p);
	scripts(&p);
	if (p.chain_cut)
		fprintf(stderr,
			"rspctl: report: the page shows the chain's first %zu nodes; %zu more are "
			"left out (rspctl snapshot --json has them all)\n",
			p.chain_nodes, p.chain_cut);
	return out->error ? out->error : 0;
}
