// SPDX-License-Identifier: LGPL-2.1
/*
 * Prometheus text exposition (0.0.4) and OpenMetrics 1.0 text of the
 * latency profiles and of rspd's health (rsp/prom.h says why the bucket
 * bounds are what they are).
 *
 * Why hand-written: the formats are a few lines of printf, and the C
 * clients of Prometheus (prometheus-client-c) are not in Debian and keep
 * their own registry of metric objects, where rsp already has its numbers.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <rsp/prom.h>
#include "internal/cgroupq.h"
#include "internal/prom.h"

const char *rsp_prom__content_type(enum rsp_prom_format fmt)
{
	if (fmt == RSP_PROM_PROTOBUF)
		return RSP_PROM_PB_CONTENT_TYPE;
	return fmt == RSP_PROM_OPENMETRICS
		       ? "application/openmetrics-text; version=1.0.0; charset=utf-8"
		       : "text/plain; version=0.0.4; charset=utf-8";
}

const char *rsp_prom__seconds(uint64_t ns, char *buf, size_t n)
{
	uint64_t s = ns / 1000000000ull;
	unsigned frac = (unsigned)(ns % 1000000000ull);
	int len;

	if (!frac) {
		snprintf(buf, n, "%" PRIu64, s);
		return buf;
	}
	len = snprintf(buf, n, "%" PRIu64 ".%09u", s, frac);
	/* Trim trailing zeros: one spelling per value, so hosts aggregate. */
	while (len > 0 && (size_t)len < n && buf[len - 1] == '0')
		buf[--len] = '\0';
	return buf;
}

/* The length of the valid UTF-8 sequence at @s (at most @n bytes), 0 if none. */
static size_t utf8_len(const unsigned char *s, size_t n)
{
	size_t want;
	uint32_t cp;

	if (s[0] < 0x80)
		return 1;
	if (s[0] >= 0xc2 && s[0] <= 0xdf)
		want = 2, cp = s[0] & 0x1f;
	else if (s[0] >= 0xe0 && s[0] <= 0xef)
		want = 3, cp = s[0] & 0x0f;
	else if (s[0] >= 0xf0 && s[0] <= 0xf4)
		want = 4, cp = s[0] & 0x07;
	else
		return 0;
	if (want > n)
		return 0;
	for (size_t i = 1; i < want; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		cp = cp << 6 | (s[i] & 0x3f);
	}
	/* Overlong forms, surrogates, past U+10FFFF. */
	if ((want == 3 && cp < 0x800) || (want == 4 && (cp < 0x10000 || cp > 0x10ffff)) ||
	    (cp >= 0xd800 && cp <= 0xdfff))
		return 0;
	return want;
}

int rsp_prom__escape(struct rsp_buf *out, const char *s, size_t len)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t i = 0;

	while (i < len && p[i]) {
		size_t l = utf8_len(p + i, len - i);

		if (!l)
			rsp_buf__puts(out, "\xef\xbf\xbd");
		else if (p[i] == '\\')
			rsp_buf__puts(out, "\\\\");
		else if (p[i] == '"')
			rsp_buf__puts(out, "\\\"");
		else if (p[i] == '\n')
			rsp_buf__puts(out, "\\n");
		else
			rsp_buf__add(out, p + i, l);
		i += l ? l : 1;
	}
	return out->error;
}

/* ---- the cardinality cut ------------------------------------------------ */

struct proc_total {
	uint32_t pid;
	uint64_t sum;
};

static int by_sum_desc(const void *a, const void *b)
{
	const struct proc_total *x = a, *y = b;

	if (x->sum != y->sum)
		return x->sum > y->sum ? -1 : 1;
	return x->pid < y->pid ? -1 : x->pid > y->pid;
}

static int by_pid(const void *a, const void *b)
{
	const struct proc_total *x = a, *y = b;

	return x->pid < y->pid ? -1 : x->pid > y->pid;
}

/*
 * Each process's total latency over its ops, largest first: one entry per
 * profile, sorted by pid and summed, then sorted by total (n log n: a
 * render may see thousands of processes). Return: entries or -ENOMEM.
 */
static long proc_totals(const struct rsp_hist_set *in, struct proc_total **out)
{
	struct proc_total *v = calloc(in->n ? in->n : 1, sizeof(*v));
	size_t n = 0, m = 0;

	if (!v)
		return -ENOMEM;
	for (size_t i = 0; i < in->n; i++)
		if (in->v[i].subject.kind == RSP_HSUBJ_PROCESS)
			v[n++] = (struct proc_total){in->v[i].subject.pid, in->v[i].sum};
	qsort(v, n, sizeof(*v), by_pid);
	for (size_t i = 0; i < n; i++) {
		if (m && v[m - 1].pid == v[i].pid)
			v[m - 1].sum += v[i].sum;
		else
			v[m++] = v[i];
	}
	qsort(v, m, sizeof(*v), by_sum_desc);
	*out = v;
	return (long)m;
}

/* Whether @pid is one of the @top first of @v, which are sorted by pid. */
static bool in_top(const struct proc_total *v, size_t top, uint32_t pid)
{
	struct proc_total key = {.pid = pid};

	return bsearch(&key, v, top, sizeof(*v), by_pid) != NULL;
}

static int keep(struct rsp_hist_set *s, const struct rsp_hist_subject *subj,
		const struct rsp_hist_profile *p)
{
	struct rsp_hist_profile *d = rsp_hist_set__get(s, subj, p->op_name);

	if (!d)
		return -ENOMEM;
	d->op = p->op;
	snprintf(d->op_label, sizeof(d->op_label), "%s", p->op_label);
	return rsp_hist_profile__merge(d, p);
}

int rsp_prom__cut(const struct rsp_hist_set *in, unsigned top, struct rsp_hist_set **out)
{
	const struct rsp_hist_subject other = {.kind = RSP_HSUBJ_OTHER_PROCESS};
	struct rsp_hist_set *s = rsp_hist_set__new(in->resolution);
	struct proc_total *tot = NULL;
	long n = proc_totals(in, &tot);
	int ret = 0;

	if (!s || n < 0) {
		free(tot);
		rsp_hist_set__delete(s);
		return -ENOMEM;
	}
	if ((size_t)n > top)
		n = top;
	qsort(tot, (size_t)n, sizeof(*tot), by_pid); /* the top, for in_top() */
	for (size_t i = 0; i < in->n && !ret; i++) {
		const struct rsp_hist_profile *p = &in->v[i];

		switch (p->subject.kind) {
		case RSP_HSUBJ_SYSTEM:
			ret = keep(s, &p->subject, p);
			break;
		case RSP_HSUBJ_PROCESS:
			ret = keep(s, in_top(tot, (size_t)n, p->subject.pid) ? &p->subject : &other,
				   p);
			break;
		case RSP_HSUBJ_OTHER_PROCESS:
			ret = keep(s, &other, p);
			break;
		default: /* threads, comm groups: never a series */
			break;
		}
	}
	free(tot);
	if (ret) {
		rsp_hist_set__delete(s);
		return ret;
	}
	*out = s;
	return 0;
}

/* ---- histograms --------------------------------------------------------- */

int rsp_prom__cmp_op_subject(const struct rsp_hist_profile *x, const struct rsp_hist_profile *y)
{
	int c = strcmp(x->op_name, y->op_name);

	if (c)
		return c;
	if (x->subject.kind != y->subject.kind)
		return x->subject.kind < y->subject.kind ? -1 : 1;
	return x->subject.pid < y->subject.pid ? -1 : x->subject.pid > y->subject.pid;
}

void rsp_prom__subject(const struct rsp_hist_profile *p, const char **comm, size_t *len, char *pid)
{
	if (p->subject.kind != RSP_HSUBJ_PROCESS) {
		*comm = "other";
		*len = 5;
		pid[0] = '\0';
		return;
	}
	*comm = p->subject.comm;
	*len = strnlen(p->subject.comm, RSP_HIST_COMM_LEN);
	snprintf(pid, 16, "%" PRIu32, p->subject.pid);
}

static int by_op_subject(const void *a, const void *b)
{
	return rsp_prom__cmp_op_subject(a, b);
}

/*
 * The highest non-empty bucket of the op's profiles v[0..n) (sorted by op:
 * one pass over the run), so that every series of the op has the same le.
 */
static unsigned top_bucket(const struct rsp_hist_profile *v, size_t n)
{
	unsigned top = 0;

	for (size_t i = 0; i < n; i++) {
		unsigned b = rsp_hist__nr_buckets(v[i].resolution);

		while (b-- > top + 1 && !v[i].buckets[b])
			;
		if (b > top && v[i].buckets[b])
			top = b;
	}
	return top;
}

static void labels(struct rsp_buf *out, const struct rsp_hist_profile *p, bool proc)
{
	const char *comm;
	size_t len;
	char pid[16];

	rsp_buf__puts(out, "op=\"");
	rsp_prom__escape(out, p->op_name, strlen(p->op_name));
	rsp_buf__puts(out, "\"");
	if (!proc)
		return;
	rsp_prom__subject(p, &comm, &len, pid);
	rsp_buf__puts(out, ",comm=\"");
	rsp_prom__escape(out, comm, len);
	rsp_buf__printf(out, "\",pid=\"%s\"", pid);
}

static void series(struct rsp_buf *out, const char *name, const struct rsp_hist_profile *p,
		   bool proc, unsigned top)
{
	char le[32], sum[32];
	uint64_t cum = 0;

	for (unsigned b = 0; b <= top; b++) {
		uint64_t hi = rsp_hist__bucket_high(b, p->resolution);

		cum += p->buckets[b];
		if (b && hi < rsp_hist__bucket_low(b, p->resolution))
			continue; /* r=2's bucket 2 holds no whole number */
		rsp_buf__printf(out, "%s_bucket{", name);
		labels(out, p, proc);
		rsp_buf__printf(out, ",le=\"%s\"} %" PRIu64 "\n",
				rsp_prom__seconds(hi, le, sizeof(le)), cum);
	}
	rsp_buf__printf(out, "%s_bucket{", name);
	labels(out, p, proc);
	rsp_buf__printf(out, ",le=\"+Inf\"} %" PRIu64 "\n%s_sum{", p->count, name);
	labels(out, p, proc);
	rsp_buf__printf(out, "} %s\n%s_count{", rsp_prom__seconds(p->sum, sum, sizeof(sum)), name);
	labels(out, p, proc);
	rsp_buf__printf(out, "} %" PRIu64 "\n", p->count);
}

static void family(struct rsp_buf *out, enum rsp_prom_format fmt, const char *name,
		   const char *type, const char *unit, const char *help)
{
	size_t l = strlen(name);

	/* OpenMetrics names a counter's family without its _total. */
	if (fmt == RSP_PROM_OPENMETRICS && !strcmp(type, "counter") && l > 6 &&
	    !strcmp(name + l - 6, "_total"))
		l -= 6;
	rsp_buf__printf(out, "# HELP %.*s %s\n# TYPE %.*s %s\n", (int)l, name, help, (int)l, name,
			type);
	if (fmt == RSP_PROM_OPENMETRICS && unit)
		rsp_buf__printf(out, "# UNIT %.*s %s\n", (int)l, name, unit);
}

static void hist_family(const struct rsp_hist_profile *v, size_t n, enum rsp_prom_format fmt,
			bool proc, struct rsp_buf *out)
{
	const char *name = proc ? "rsp_process_latency_seconds" : "rsp_latency_seconds";

	family(out, fmt, name, "histogram", "seconds",
	       proc ? RSP_PROM_PROC_HELP ", log2 buckets"
		    : "Latency of each operation, whole system, log2 buckets (rspctl hist)");
	for (size_t i = 0, j; i < n; i = j) {
		unsigned top;

		for (j = i + 1; j < n && !strcmp(v[j].op_name, v[i].op_name); j++)
			;
		top = top_bucket(v + i, j - i);
		for (size_t k = i; k < j; k++)
			if ((v[k].subject.kind != RSP_HSUBJ_SYSTEM) == proc)
				series(out, name, &v[k], proc, top);
	}
}

static void op_counter(const struct rsp_hist_profile *v, size_t n, enum rsp_prom_format fmt,
		       bool inferred, struct rsp_buf *out)
{
	const char *name = inferred ? "rsp_latency_inferred_total" : "rsp_latency_incomplete_total";

	family(out, fmt, name, "counter", NULL,
	       inferred ? "Latencies of rsp_latency_seconds whose end was inferred, not observed "
			  "(upper bounds)"
			: "Operations that started but whose end was never observed (not in "
			  "rsp_latency_seconds)");
	for (size_t i = 0; i < n; i++) {
		if (v[i].subject.kind != RSP_HSUBJ_SYSTEM)
			continue;
		rsp_buf__printf(out, "%s{", name);
		labels(out, &v[i], false);
		rsp_buf__printf(out, "} %" PRIu64 "\n", inferred ? v[i].inferred : v[i].incomplete);
	}
}

int rsp_prom__render_hist(const struct rsp_hist_set *s, enum rsp_prom_format fmt,
			  struct rsp_buf *out)
{
	struct rsp_hist_profile *v = NULL;

	if (s->n) {
		v = malloc(s->n * sizeof(*v));
		if (!v)
			return -ENOMEM;
		memcpy(v, s->v, s->n * sizeof(*v));
		qsort(v, s->n, sizeof(*v), by_op_subject);
	}
	hist_family(v, s->n, fmt, false, out);
	hist_family(v, s->n, fmt, true, out);
	op_counter(v, s->n, fmt, false, out);
	op_counter(v, s->n, fmt, true, out);
	free(v);
	return out->error;
}

/* ---- histograms by cgroup ---------------------------------------------- */

struct cg_ctx {
	const char *(*cgroup_of)(void *, uint32_t);
	void *ctx;
};

/* A process profile's series: its cgroup, "unknown" where that is not known. */
static const char *cg_name(void *ctx, const struct rsp_hist_profile *p)
{
	const struct cg_ctx *c = ctx;
	const char *name;

	if (p->subject.kind != RSP_HSUBJ_PROCESS)
		return NULL;
	name = c->cgroup_of(c->ctx, p->subject.pid);
	return name ? name : "unknown";
}

/* Merge @in's process profiles into @s by cgroup: subject.pid is the series' index. */
static int cg_merge(const struct rsp_hist_set *in, unsigned top, struct cg_ctx *c,
		    const struct rsp_cgroupq_rank *v, size_t n, struct rsp_hist_set *s)
{
	for (size_t i = 0; i < in->n; i++) {
		const struct rsp_hist_profile *p = &in->v[i];
		struct rsp_hist_subject subj = {.kind = RSP_HSUBJ_PROCESS, .pid = top};
		int ret;

		if (p->subject.kind == RSP_HSUBJ_PROCESS) {
			subj.pid = rsp_cgroupq__rank_index(v, n, top, cg_name(c, p));
		} else if (p->subject.kind != RSP_HSUBJ_OTHER_PROCESS) {
			continue;
		}
		ret = keep(s, &subj, p);
		if (ret)
			return ret;
	}
	return 0;
}

static void cg_series(struct rsp_buf *out, const struct rsp_hist_profile *p, const char *cgroup,
		      unsigned top)
{
	static const char name[] = "rsp_cgroup_latency_seconds";
	char le[32], sum[32];
	uint64_t cum = 0;

	for (unsigned b = 0; b <= top + 1; b++) {
		bool inf = b == top + 1;
		uint64_t hi = inf ? 0 : rsp_hist__bucket_high(b, p->resolution);

		if (!inf) {
			cum += p->buckets[b];
			if (b && hi < rsp_hist__bucket_low(b, p->resolution))
				continue; /* r=2's bucket 2 holds no whole number */
		}
		rsp_buf__printf(out, "%s_bucket{op=\"", name);
		rsp_prom__escape(out, p->op_name, strlen(p->op_name));
		rsp_buf__puts(out, "\",cgroup=\"");
		rsp_prom__escape(out, cgroup, strlen(cgroup));
		rsp_buf__printf(out, "\",le=\"%s\"} %" PRIu64 "\n",
				inf ? "+Inf" : rsp_prom__seconds(hi, le, sizeof(le)),
				inf ? p->count : cum);
	}
	for (int k = 0; k < 2; k++) {
		rsp_buf__printf(out, "%s_%s{op=\"", name, k ? "count" : "sum");
		rsp_prom__escape(out, p->op_name, strlen(p->op_name));
		rsp_buf__puts(out, "\",cgroup=\"");
		rsp_prom__escape(out, cgroup, strlen(cgroup));
		if (k)
			rsp_buf__printf(out, "\"} %" PRIu64 "\n", p->count);
		else
			rsp_buf__printf(out, "\"} %s\n",
					rsp_prom__seconds(p->sum, sum, sizeof(sum)));
	}
}

int rsp_prom__render_cgroups(const struct rsp_hist_set *in, unsigned top,
			     const char *(*cgroup_of)(void *ctx, uint32_t pid), void *ctx,
			     enum rsp_prom_format fmt, struct rsp_buf *out)
{
	struct rsp_hist_set *s = rsp_hist_set__new(in->resolution);
	struct rsp_cgroupq_rank *v = NULL;
	struct cg_ctx c = {.cgroup_of = cgroup_of, .ctx = ctx};
	long n = s ? rsp_cgroupq__rank(in, cg_name, &c, &v) : -ENOMEM;
	int ret = n < 0 ? (int)n : cg_merge(in, top, &c, v, (size_t)n, s);

	if (!ret && s->n)
		qsort(s->v, s->n, sizeof(*s->v), by_op_subject);
	if (!ret) {
		family(out, fmt, "rsp_cgroup_latency_seconds", "histogram", "seconds",
		       "Latency of each operation of the processes of each cgroup v2 (the "
		       "--metrics-top-cgroups with the most latency; cgroup other: the rest), log2 "
		       "buckets");
		for (size_t i = 0, j; i < s->n; i = j) {
			unsigned tb;

			for (j = i + 1; j < s->n && !strcmp(s->v[j].op_name, s->v[i].op_name); j++)
				;
			tb = top_bucket(s->v + i, j - i);
			for (size_t k = i; k < j; k++) {
				unsigned idx = s->v[k].subject.pid;

				cg_series(out, &s->v[k], idx < top ? v[idx].name : "other", tb);
			}
		}
		ret = out->error;
	}
	free(v);
	rsp_hist_set__delete(s);
	return ret;
}

/* ---- health ------------------------------------------------------------- */

static void gauge(struct rsp_buf *out, enum rsp_prom_format fmt, const char *name, const char *unit,
		  const char *help, double v)
{
	family(out, fmt, name, "gauge", unit, help);
	rsp_buf__printf(out, "%s %.17g\n", name, v);
}

static void counter(struct rsp_buf *out, enum rsp_prom_format fmt, const char *name,
		    const char *help, uint64_t v)
{
	family(out, fmt, name, "counter", NULL, help);
	rsp_buf__printf(out, "%s %" PRIu64 "\n", name, v);
}

static void per_cpu(struct rsp_buf *out, enum rsp_prom_format fmt,
		    const struct rsp_capture_info *ci, int what)
{
	static const char *const names[] = {"rsp_capture_records_total",
					    "rsp_capture_records_per_second",
					    "rsp_capture_lost_records_total"};
	static const char *const helps[] = {
		"Records captured on this CPU since rspd started",
		"Records captured per second on this CPU, over the last stats interval",
		"Records lost on this CPU (the kernel's lost records and the ones rspd dropped)"};

	family(out, fmt, names[what], what == 1 ? "gauge" : "counter", NULL, helps[what]);
	for (unsigned i = 0; i < ci->nr_cpus; i++) {
		const struct rsp_cpu_status *c = &ci->cpus[i];

		if (what == 1)
			rsp_buf__printf(out, "%s{cpu=\"%u\"} %.17g\n", names[what], c->cpu,
					c->records_per_s);
		else
			rsp_buf__printf(out, "%s{cpu=\"%u\"} %" PRIu64 "\n", names[what], c->cpu,
					what ? c->lost : c->records);
	}
}

static void capture_health(struct rsp_buf *out, enum rsp_prom_format fmt,
			   const struct rsp_capture_info *ci)
{
	const struct rsp_budget_status *b = &ci->budget;

	family(out, fmt, "rsp_info", "gauge", NULL, "rspd's version and capture backend");
	rsp_buf__puts(out, "rsp_info{version=\"");
	rsp_prom__escape(out, ci->version, strlen(ci->version));
	rsp_buf__puts(out, "\",backend=\"");
	/* as rspctl status shows it: no backend named is perf's */
	rsp_prom__escape(out, ci->backend[0] ? ci->backend : "perf",
			 strlen(ci->backend[0] ? ci->backend : "perf"));
	rsp_buf__puts(out, "\"} 1\n");
	for (int w = 0; w < 3; w++)
		per_cpu(out, fmt, ci, w);
	counter(out, fmt, "rsp_capture_skipped_nested_total",
		"BPF backend: events whose program the kernel did not run, as it was running on "
		"that CPU already (an interrupt's event inside it): records never written",
		ci->skipped_nested);
	if (ci->delivery.valid) {
		const struct rsp_delivery_status *d = &ci->delivery;

		family(out, fmt, "rsp_timeline_not_delivered_total", "counter", NULL,
		       "Events capture did not deliver, inferred by the live timeline from the "
		       "records around them: switch_out (a run another task's record ended), "
		       "switch_in (a thread seen running with no switch-in), waking (a sleep "
		       "ended with no waking seen)");
		rsp_buf__printf(
			out,
			"rsp_timeline_not_delivered_total{event=\"switch_out\"} %" PRIu64 "\n"
			"rsp_timeline_not_delivered_total{event=\"switch_in\"} %" PRIu64 "\n"
			"rsp_timeline_not_delivered_total{event=\"waking\"} %" PRIu64 "\n",
			d->switch_outs_not_seen, d->switch_ins_not_seen, d->wakings_not_seen);
		counter(out, fmt, "rsp_timeline_switches_total",
			"Switch records the live timeline was fed (of which some were inferred "
			"not delivered: rsp_timeline_not_delivered_total)",
			d->switches);
	}
	gauge(out, fmt, "rsp_resident_memory_bytes", "bytes", "rspd's resident set size",
	      (double)ci->rss_bytes);
	family(out, fmt, "rsp_cpu_seconds_total", "counter", "seconds",
	       "rspd's own user and system CPU time");
	rsp_buf__printf(out, "rsp_cpu_seconds_total %.6f\n", ci->cpu_seconds);
	gauge(out, fmt, "rsp_overhead_budget_enabled", NULL,
	      "1 when the overhead budget is enforced (BPF backend, --overhead-budget above 0)",
	      b->enabled);
	gauge(out, fmt, "rsp_overhead_budget_ratio", "ratio",
	      "The overhead budget, as a share of one CPU", b->budget_pct / 100);
	gauge(out, fmt, "rsp_overhead_cost_ratio", "ratio",
	      "What capture cost over the last second, as a share of one CPU", b->cost_pct / 100);
	gauge(out, fmt, "rsp_overhead_degrade_level", NULL,
	      "The BPF programs' degradation level (0 none .. 4 no stacks)", b->level);
	counter(out, fmt, "rsp_overhead_level_changes_total",
		"Changes of the degradation level since rspd started", b->changes_total);
}

static void window_health(struct rsp_buf *out, enum rsp_prom_format fmt,
			  const struct rsp_window_stats *ws)
{
	gauge(out, fmt, "rsp_window_span_seconds", "seconds",
	      "Time between the oldest and the newest record in the window",
	      ws->records ? (double)(ws->newest - ws->oldest) / 1e9 : 0);
	gauge(out, fmt, "rsp_window_bytes", "bytes", "Bytes the window's records use",
	      (double)ws->bytes_used);
	gauge(out, fmt, "rsp_window_stored_bytes", "bytes",
	      "Bytes the window's records take in memory (compressed chunks at their compressed "
	      "size); the budget counts these",
	      (double)ws->bytes_stored);
	gauge(out, fmt, "rsp_window_budget_bytes", "bytes", "The window's byte budget (--window)",
	      (double)ws->budget);
	gauge(out, fmt, "rsp_window_records", NULL, "Records in the window", (double)ws->records);
}

/* One counter per trigger (rspctl trigger): @what 0 fires, 1 held off, 2 rate-limited, 3 failed. */
static uint64_t trig_count(const struct rsp_trig_view *v, int what)
{
	return what == 0   ? v->fires
	       : what == 1 ? v->held_off
	       : what == 2 ? v->rate_limited
			   : v->failed;
}

static void triggers(struct rsp_buf *out, enum rsp_prom_format fmt,
		     const struct rsp_capture_info *ci)
{
	static const char *const names[] = {"rsp_trigger_fires_total",
					    "rsp_trigger_suppressed_total",
					    "rsp_trigger_failures_total"};
	static const char *const helps[] = {
		"Times the trigger's condition held and its action ran",
		"Times the trigger's condition held but it did not fire (reason: holdoff, rate)",
		"Times the trigger's action failed (a full disk: no file written)"};
	const struct rsp_trig_totals *t = &ci->trigger_totals;

	for (int f = 0; f < 3 && ci->nr_triggers; f++) {
		family(out, fmt, names[f], "counter", NULL, helps[f]);
		for (unsigned i = 0; i < ci->nr_triggers; i++) {
			for (int r = f == 1 ? 1 : 0; r < (f == 1 ? 3 : 1); r++) {
				rsp_buf__printf(out, "%s{trigger=\"", names[f]);
				rsp_prom__escape(out, ci->triggers[i].spec.name,
						 strlen(ci->triggers[i].spec.name));
				rsp_buf__printf(out, "\"%s} %" PRIu64 "\n",
						f != 1	 ? ""
						: r == 1 ? ",reason=\"holdoff\""
							 : ",reason=\"rate\"",
						trig_count(&ci->triggers[i], f == 2 ? 3
									     : f    ? r
										    : 0));
			}
		}
	}
	if (t->webhook_on) {
		counter(out, fmt, "rsp_trigger_webhook_posts_total",
			"Alertmanager payloads taken at /v1/trigger", t->webhook_posts);
		counter(out, fmt, "rsp_trigger_webhook_refused_total",
			"POSTs to /v1/trigger refused (no secret, malformed, too large)",
			t->webhook_refused);
	}
}

int rsp_prom__render_health(const struct rsp_prom_health *h, enum rsp_prom_format fmt,
			    struct rsp_buf *out)
{
	char sec[32];

	if (h->ci) {
		capture_health(out, fmt, h->ci);
		triggers(out, fmt, h->ci);
	}
	if (h->ws)
		window_health(out, fmt, h->ws);
	if (h->hs) {
		counter(out, fmt, "rsp_latency_updates_total",
			"Latencies recorded in the profiles since rspd started", h->hs->updates);
		counter(out, fmt, "rsp_latency_dropped_total",
			"Latencies not recorded: the table of operations was full", h->hs->dropped);
		gauge(out, fmt, "rsp_latency_gap_seconds", "seconds",
		      "Time whose records were never fed to the profiles (unknown, not zero)",
		      (double)h->hs->gap_ns / 1e9);
	}
	counter(out, fmt, "rsp_queries_total", "Control-socket queries answered", h->queries);
	family(out, fmt, "rsp_query_seconds_total", "counter", "seconds",
	       "Time control-socket queries took, request to answer");
	rsp_buf__printf(out, "rsp_query_seconds_total %s\n",
			rsp_prom__seconds(h->query_ns, sec, sizeof(sec)));
	counter(out, fmt, "rsp_metrics_scrapes_total",
		"Metrics rendered before this one (scrapes and textfile writes)", h->scrapes);
	return out->error;
}

int rsp_prom__finish(enum rsp_prom_format fmt, struct rsp_buf *out)
{
	if (fmt == RSP_PROM_OPENMETRICS)
		rsp_buf__puts(out, "# EOF\n");
	return out->error;
}
