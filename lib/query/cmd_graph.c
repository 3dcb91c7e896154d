// SPDX-License-Identifier: LGPL-2.1
/*
 * `rspctl graph`: the wait-for graph (wPerf) of the window or its last
 * DURATION: knots first, then sinks, then the heaviest edges outside
 * knots; as text, JSON or DOT.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <jansson.h>
#include <linux/perf_event.h>
#include <rsp/pass.h>
#include <rsp/cgroup.h>
#include <rsp/parse.h>
#include <rsp/perfdata.h>
#include <rsp/symbols.h>
#include <rsp/tlstore.h>
#include <rsp/waitgraph.h>
#include "internal/cgroupq.h"
#include "internal/query.h"
#include "internal/json.h"
#include "internal/redact.h"

#define TOP_EDGES   10
#define STACK_LINES 6

struct graph_opts {
	bool all;
	bool no_merge;
	bool merge_stacks; /* --merge stacks: alike by wait stacks, not by name */
	double threshold;  /* fraction */
	double noise;	   /* fraction */
};

enum {
	OPT_ALL = 1,
	OPT_THRESHOLD,
	OPT_NO_MERGE,
	OPT_NOISE,
	OPT_MERGE,
};

static const struct rsp_option graph_opts[] = {
	{"all", false, OPT_ALL},	   {"threshold", true, OPT_THRESHOLD},
	{"no-merge", false, OPT_NO_MERGE}, {"noise", true, OPT_NOISE},
	{"merge", true, OPT_MERGE},	   {NULL, false, 0},
};

static void graph_init(void *p)
{
	struct graph_opts *o = p;

	o->threshold = 0.20;
	o->noise = 0.01;
}

static int graph_opt(struct rsp_request *req, int id, const char *arg, struct rsp_buf *err)
{
	struct graph_opts *o = req->opts;
	uint64_t pct;

	switch (id) {
	case OPT_ALL:
		o->all = true;
		return 0;
	case OPT_NO_MERGE:
		o->no_merge = true;
		return 0;
	case OPT_MERGE:
		if (strcmp(arg, "stacks") && strcmp(arg, "names")) {
			rsp_buf__printf(err, "graph: --merge wants stacks or names, not '%s'", arg);
			return -EINVAL;
		}
		o->merge_stacks = !strcmp(arg, "stacks");
		return 0;
	case OPT_THRESHOLD:
		if (rsp_parse__u64(arg, 0, 100, &pct)) {
			rsp_buf__printf(err,
					"graph: --threshold wants a percentage of the window from "
					"0 to 100, not '%s'",
					arg);
			return -EINVAL;
		}
		o->threshold = (double)pct / 100.0;
		return 0;
	case OPT_NOISE:
		if (rsp_parse__u64(arg, 0, 100, &pct)) {
			rsp_buf__printf(err,
					"graph: --noise wants a percentage of the window from 0 "
					"to 100, not '%s'",
					arg);
			return -EINVAL;
		}
		o->noise = (double)pct / 100.0;
		return 0;
	default:
		rsp_buf__printf(err, "graph: unexpected argument '%s'; see 'rspctl help graph'",
				arg);
		return -EINVAL;
	}
}

static int graph_check(struct rsp_request *req, struct rsp_buf *err)
{
	const struct graph_opts *o = req->opts;

	if (o->all && req->pid >= 0) {
		rsp_buf__puts(err, "graph: --pid and --all exclude each other; give one");
		return -EINVAL;
	}
	return 0;
}

/* ---- shared helpers ----------------------------------------------------- */

/* --cgroup, --container: the processes inside, at the end of the range. */
struct cg_keep {
	const struct rsp_request *req;
	const struct rsp_maps *maps;
	uint64_t time;
};

static bool cg_keeps(uint32_t tgid, void *ctx)
{
	const struct cg_keep *k = ctx;

	return rsp_request__cgroup_keeps(k->req, k->maps, tgid, k->time);
}

struct ctx {
	const struct rsp_source *src;
	const struct rsp_tlstore *store;
	const struct rsp_waitgraph *g;
	const struct rsp_timeline_stats *tst;
	uint64_t start, end;
	double window;
	bool raw;		     /* --no-annotations */
	uint64_t ref_start, ref_end; /* what percentages are of: the window, or --pid's span */
	double ref;
	long pid;
	const char *cgroup; /* --cgroup (or --container, by_container): where the graph starts */
	bool by_container;
	const struct cg_keep *keep; /* --cgroup, --container: which processes are in it */
	/*
	 * Access (lib/include/rsp/query.h): per vertex, whether its process is
	 * another user's. Such a vertex is named "pid N (other user)" and its
	 * stacks (the waits it made, the wakings it did) are not shown.
	 */
	bool *other;
	char (*label)[64];
	struct rsp_redact red;
	struct rsp_tlstore_repair repair;
};

static double secs(uint64_t ns)
{
	return (double)ns / 1e9;
}

static double pct(const struct ctx *c, uint64_t ns)
{
	return c->ref > 0 ? 100.0 * (double)ns / c->ref : 0;
}

static const char *vname(const struct ctx *c, uint32_t v)
{
	return c->other[v] ? c->label[v] : rsp_waitgraph__vertex(c->g, v)->name;
}

/*
 * A vertex of threads is hidden when one of them is (another user's, or
 * whose owner cannot be told: rsp_redact__hidden()); short-lived children
 * also when their parent is, which names the vertex. Its label names the
 * first hidden thread's process, or the parent's.
 */
static bool vertex_hidden(struct ctx *c, const struct rsp_wvertex *x, char *label, size_t n)
{
	const struct rsp_tlthread *t;

	if (x->kind == RSP_WV_SHORT && rsp_redact__label(&c->red, x->id, 0, label + 24, n - 24)) {
		memcpy(label, "short-lived children of ", 24);
		return true;
	}
	for (uint32_t i = 0; i < x->nr_threads; i++) {
		t = rsp_tlstore__find_thread(c->store, x->tids[i]);
		if (rsp_redact__label(&c->red, x->tids[i], t ? t->tgid : 0, label, n))
			return true;
	}
	return false;
}

/* Decide access once per vertex (the rule reads /proc once per process). */
static int decide_access(struct ctx *c)
{
	size_t n = rsp_waitgraph__nr_vertices(c->g);

	c->other = calloc(n ? n : 1, sizeof(*c->other));
	c->label = calloc(n ? n : 1, sizeof(*c->label));
	if (!c->other || !c->label)
		return -ENOMEM;
	/* Threads (also merged and short-lived ones) by their process. */
	for (size_t v = 0; v < n; v++) {
		const struct rsp_wvertex *x = rsp_waitgraph__vertex(c->g, v);

		if (x->kind == RSP_WV_THREAD || x->kind == RSP_WV_MERGED || x->kind == RSP_WV_SHORT)
			c->other[v] = vertex_hidden(c, x, c->label[v], sizeof(c->label[v]));
	}
	/* A thread's timer is as visible as the thread (id: the owner vertex). */
	for (size_t v = 0; v < n; v++) {
		const struct rsp_wvertex *x = rsp_waitgraph__vertex(c->g, v);

		char owner[48]; /* "pid N (other user)" */

		if (x->kind != RSP_WV_TIMER || x->id >= n || !c->other[x->id])
			continue;
		c->other[v] = true;
		memcpy(owner, c->label[x->id], sizeof(owner) - 1);
		owner[sizeof(owner) - 1] = '\0';
		snprintf(c->label[v], sizeof(c->label[v]), "timer:%s", owner);
	}
	/* A device as it serves a requester names the requester: as visible as it. */
	for (size_t v = 0; v < n; v++) {
		const struct rsp_wvertex *x = rsp_waitgraph__vertex(c->g, v);
		char owner[32];

		if (x->kind != RSP_WV_DISK || x->owner >= n || !c->other[x->owner])
			continue;
		c->other[v] = true;
		memcpy(owner, c->label[x->owner], sizeof(owner) - 1);
		owner[sizeof(owner) - 1] = '\0';
		snprintf(c->label[v], sizeof(c->label[v]), "disk %u:%u for %s", x->id >> 20,
			 x->id & 0xfffff, owner);
	}
	/* The network, irqs and softirqs are nobody's: always shown. */
	return 0;
}

static const char *const kind_names[] = {
	[RSP_WV_THREAD] = "thread", [RSP_WV_MERGED] = "threads",  [RSP_WV_SHORT] = "short_lived",
	[RSP_WV_DISK] = "disk",	    [RSP_WV_NET] = "network",	  [RSP_WV_TIMER] = "timer",
	[RSP_WV_IRQ] = "irq",	    [RSP_WV_SOFTIRQ] = "softirq",
};

/* Scheduler frames say nothing about why: skip them at the top of a stack. */
static bool boring(const char *name)
{
	static const char *const skip[] = {
		"__schedule",	    "schedule",	    "schedule_preempt_disabled",
		"preempt_schedule", "__traceiter_", "perf_"};

	for (size_t i = 0; i < sizeof(skip) / sizeof(skip[0]); i++)
		if (!strncmp(name, skip[i], strlen(skip[i])) &&
		    (skip[i][strlen(skip[i]) - 1] == '_' || !name[strlen(skip[i])]))
			return true;
	return false;
}

/* A user frame: by name through the process model when there is one. */
static void user_frame(const struct ctx *c, const struct rsp_wstack *st, uint64_t a, bool first,
		       char *buf, size_t n)
{
	struct rsp_sym sym;

	if (c->src->symbols && st->pid &&
	    !rsp_symbolizer__resolve(c->src->symbols, st->pid, st->time, a,
				     first ? 0 : RSP_SYM_RETADDR, &sym))
		rsp_sym__format(&sym, false, buf, n);
	else
		snprintf(buf, n, "[user] 0x%llx", (unsigned long long)a);
}

/*
 * Call @fn for the frames worth showing: kernel frames by name (after the
 * scheduler's own; one "[kernel]" for a requester who may not see kernel
 * symbols, rsp_source__kernel_symbols()), user frames by name when the
 * process model has them, else as addresses.
 */
static void frames(const struct ctx *c, const struct rsp_wstack *st, int max,
		   void (*fn)(void *arg, const char *frame), void *arg)
{
	bool kernel = false, top = true, first_user = false,
	     ksyms = rsp_source__kernel_symbols(c->src);
	char buf[96];
	int n = 0;

	for (uint32_t i = 0; i < st->nr && n < max; i++) {
		uint64_t a = st->ips[i];
		const struct rsp_ksym *sym;

		if (a >= PERF_CONTEXT_MAX) {
			kernel = a == PERF_CONTEXT_KERNEL;
			first_user = a == PERF_CONTEXT_USER;
			if (kernel && !ksyms) {
				fn(arg, "[kernel]");
				n++;
			}
			continue;
		}
		if (kernel && !ksyms)
			continue;
		if (kernel) {
			sym = rsp_ksyms__find(c->src->ksyms, a - 1, NULL);
			if (sym && top && boring(sym->name))
				continue;
			top = false;
			if (sym)
				snprintf(buf, sizeof(buf), "%s", sym->name);
			else
				snprintf(buf, sizeof(buf), "0x%llx", (unsigned long long)a);
		} else {
			user_frame(c, st, a, first_user, buf, sizeof(buf));
			first_user = false;
		}
		fn(arg, buf);
		n++;
	}
}

/* ---- text --------------------------------------------------------------- */

struct text_frames {
	struct rsp_buf *out;
	const char *label;
	int n;
};

static void text_frame(void *arg, const char *frame)
{
	struct text_frames *t = arg;

	rsp_buf__printf(t->out, "      %-14s %s\n", t->n++ ? "" : t->label, frame);
}

static void text_stack(const struct ctx *c, const char *what, const struct rsp_wstack *st,
		       struct rsp_buf *out)
{
	char label[32];
	struct text_frames t = {out, label, 0};

	snprintf(label, sizeof(label), "%s %llux:", what, (unsigned long long)st->count);
	frames(c, st, STACK_LINES, text_frame, &t);
}

/*
 * Whether edge @e is listed among the edges outside knots: its waiter is
 * drawn, and so is what it waited for, or that is in a background knot
 * (set aside, but what the waiter waited for).
 */
/*
 * An edge outside knots is listed unless it leaves a vertex outside the
 * question (--pid's reach). One leaving a background knot is: wPerf's
 * search sets knots aside in turn (a seller asleep on its timer, then the
 * waiters left waiting only for it), and what the later one's threads
 * waited for is in the earlier one.
 */
static bool edge_listed(const struct ctx *c, const struct rsp_wedge *e)
{
	const struct rsp_wvertex *from = rsp_waitgraph__vertex(c->g, e->from);
	const struct rsp_wvertex *to = rsp_waitgraph__vertex(c->g, e->to);

	return (!from->removed || from->background) && (!to->removed || to->background);
}

/* Whether edge @i, outside knots, leads into a background knot (set aside). */
static bool into_background(const struct ctx *c, size_t i)
{
	return rsp_waitgraph__vertex(c->g, rsp_waitgraph__edge(c->g, i)->to)->background &&
	       !rsp_waitgraph__in_knot(c->g, i);
}

static void text_edge(const struct ctx *c, size_t i, bool stacks, struct rsp_buf *out)
{
	const struct rsp_wedge *e = rsp_waitgraph__edge(c->g, i);
	char pair[160];

	snprintf(pair, sizeof(pair), "%s -> %s", vname(c, e->from), vname(c, e->to));
	rsp_buf__printf(out, "    %-50.50s %9.3f s %6.1f%%\n", pair, secs(e->weight_ns),
			pct(c, e->weight_ns));
	if (into_background(c, i))
		rsp_buf__puts(out, "      (into a background knot)\n");
	if (!stacks)
		return;
	if (e->inferred_ns)
		rsp_buf__printf(out,
				"      (%.0f%% of its direct waits ended with no waking seen; "
				"waker inferred)\n",
				100.0 * (double)e->inferred_ns / (double)e->direct_ns);
	if (e->net_ns)
		rsp_buf__printf(out, "      (%.0f%% of its direct waits were for network data)\n",
				100.0 * (double)e->net_ns / (double)e->direct_ns);
	if (e->reattributed_ns)
		rsp_buf__printf(out,
				"      (%.0f%% of its direct waits had false wakeups removed: "
				"re-attributed to this waker)\n",
				100.0 * (double)e->reattributed_ns / (double)e->direct_ns);
	if (e->nr_wait_stacks && !c->other[e->from])
		text_stack(c, "waited", &e->wait_stacks[0], out);
	if (e->nr_waker_stacks && !c->other[e->to])
		text_stack(c, "woken by", &e->waker_stacks[0], out);
}

/*
 * A thread vertex's cgroup (and namespaced pid) on a line of its own, when
 * its threads' processes share one the model knows (a merged vertex of
 * several cgroups shows none); not another user's.
 */
static void text_vertex_cgroup(const struct ctx *c, uint32_t v, const struct rsp_wvertex *x,
			       struct rsp_buf *out)
{
	const struct rsp_maps *m = c->src->symbols ? rsp_symbolizer__maps(c->src->symbols) : NULL;
	const char *first = NULL;
	uint32_t pid = 0;
	char buf[300];

	if (!m || c->other[v])
		return;
	for (uint32_t i = 0; i < x->nr_threads; i++) {
		const struct rsp_tlthread *t = rsp_tlstore__find_thread(c->store, x->tids[i]);
		const char *cg = t && t->tgid ? rsp_maps__cgroup(m, t->tgid, c->end) : NULL;

		if (!cg || (first && strcmp(cg, first)))
			return;
		first = cg;
		pid = !i || pid == t->tgid ? t->tgid : 0; /* 0: several processes */
	}
	if (!first)
		return;
	if (pid)
		rsp_cgroupq__text(m, pid, c->end, 50, buf, sizeof(buf));
	else
		rsp_cgroup__short(first, 50, buf, sizeof(buf));
	rsp_buf__printf(out, "      cgroup %s\n", buf);
}

static void text_vertex(const struct ctx *c, uint32_t v, struct rsp_buf *out)
{
	const struct rsp_wvertex *x = rsp_waitgraph__vertex(c->g, v);

	if (!x->nr_threads) {
		rsp_buf__printf(out, "    %s\n", vname(c, v));
		return;
	}
	rsp_buf__printf(out, "    %-28.28s cpu %6.3f s  runnable %6.3f s  wait %6.3f s\n",
			vname(c, v), secs(x->run_ns), secs(x->runnable_ns), secs(x->wait_ns));
	text_vertex_cgroup(c, v, x, out);
	if (x->run_inferred_ns >= 1000000)
		rsp_buf__printf(out,
				"      + running (inferred) %.3f s: its switch-out was not "
				"delivered, nothing showed it on its CPU\n",
				secs(x->run_inferred_ns));
}

static void text_knot(const struct ctx *c, size_t k, struct rsp_buf *out)
{
	const struct rsp_wknot *kn = rsp_waitgraph__knot(c->g, k);

	rsp_buf__printf(out, "\n%sknot %zu: %zu vertices, %zu edges%s\n",
			kn->background ? "background " : "", k + 1, kn->nr_vertices, kn->nr_edges,
			kn->refined ? " (after trimming light edges)" : "");
	if (kn->background)
		rsp_buf__printf(out,
				"  no device in it and its threads use %.0f%% of a CPU: "
				"background work, set aside\n",
				100.0 * kn->cpu_util);
	if (kn->wants_cores)
		rsp_buf__puts(out, "  its threads are often runnable: more cores (or priority) "
				   "would help\n");
	for (size_t i = 0; i < kn->nr_vertices; i++)
		text_vertex(c, kn->vertices[i], out);
	rsp_buf__printf(out, "  %-52s %9s %7s\n", "edges", "weight", "window");
	for (size_t i = 0; i < kn->nr_edges; i++)
		text_edge(c, kn->edges[i], true, out);
}

/* What the false-wakeup rewrite did to the window (graph and snapshot say it alike). */
void rsp_query__text_fwake(const struct rsp_tlstore *s, bool raw, struct rsp_buf *out)
{
	uint64_t n, run;

	if (raw) {
		rsp_buf__puts(out, "raw view (--no-annotations): no false wakeup removed\n");
		return;
	}
	rsp_tlstore__fwake_stats(s, &n, &run);
	if (n)
		rsp_buf__printf(out,
				"%llu false wakeups removed (inferred: woken, ran %.3f ms in all, "
				"slept\n  again where they slept): their waits go to the later "
				"waker\n",
				(unsigned long long)n, (double)run / 1e6);
}

json_t *rsp_query__json_fwake(const struct rsp_tlstore *s, bool raw)
{
	uint64_t n = 0, run = 0;

	if (!raw)
		rsp_tlstore__fwake_stats(s, &n, &run);
	return json_pack("{s:b, s:I, s:f}", "removed", !raw, "inferred", (json_int_t)n, "run_s",
			 (double)run / 1e9);
}

static void text_header(const struct ctx *c, struct rsp_buf *out)
{
	const struct rsp_timeline_stats *s = c->tst;

	rsp_buf__printf(out, "wait-for graph of %.3f s (%.3f .. %.3f): %zu vertices, %zu edges\n",
			c->window / 1e9, secs(c->start), secs(c->end),
			rsp_waitgraph__nr_vertices(c->g), rsp_waitgraph__nr_edges(c->g));
	if (c->pid > 0)
		rsp_buf__printf(out,
				"percentages are of the span of process %ld's threads, %.3f s\n"
				"  (%.3f .. %.3f); shown: its threads and what they wait for\n",
				c->pid, c->ref / 1e9, secs(c->ref_start), secs(c->ref_end));
	if (c->cgroup)
		rsp_buf__printf(out,
				"percentages are of the span of the threads of %s %s, %.3f s\n"
				"  (%.3f .. %.3f); shown: its threads and what they wait for\n",
				c->by_container ? "container" : "cgroup", c->cgroup, c->ref / 1e9,
				secs(c->ref_start), secs(c->ref_end));
	if (s->wakings_not_seen)
		rsp_buf__printf(out,
				"%llu sleeps ended with no waking seen (this kernel drops wakeups "
				"from\n  irqs on idle CPUs); waker inferred for %llu, unknown for "
				"the rest\n",
				(unsigned long long)s->wakings_not_seen,
				(unsigned long long)s->wakers_inferred);
	if (s->runs_inferred)
		rsp_buf__printf(
			out,
			"%llu runs whose switch-out was not seen: running (inferred) after\n"
			"  their last record, not counted as CPU\n",
			(unsigned long long)s->runs_inferred);
	if (s->gaps)
		rsp_buf__printf(out, "%llu gaps (lost records): threads are unknown across them\n",
				(unsigned long long)s->gaps);
	if (rsp_waitgraph__relayed(c->g))
		rsp_buf__printf(
			out,
			"%llu block I/O waits ended by a thread the disk had just woken (a\n"
			"  kworker ending writeback): counted as waits for that disk\n",
			(unsigned long long)rsp_waitgraph__relayed(c->g));
	if (!c->src->ksyms)
		rsp_buf__puts(out,
			      "no kernel symbols: sleep reasons unknown, stacks as addresses\n");
	rsp_query__text_fwake(c->store, c->raw, out);
}

/* Whether vertex @v is one of the threads asked for (--pid, --cgroup). */
static bool asked(const struct ctx *c, uint32_t v)
{
	const struct rsp_wvertex *x = rsp_waitgraph__vertex(c->g, v);

	if (x->kind != RSP_WV_THREAD && x->kind != RSP_WV_MERGED && x->kind != RSP_WV_SHORT)
		return false;
	if (c->pid > 0)
		return x->tgid == (uint32_t)c->pid;
	return c->keep && cg_keeps(x->tgid, (void *)c->keep);
}

/* The heaviest edges outside knots: from the asked threads (@own 1), the others (0), all (-1). */
static void text_edges(const struct ctx *c, int own, struct rsp_buf *out)
{
	size_t shown = 0;

	for (size_t i = 0; i < rsp_waitgraph__nr_edges(c->g) && shown < TOP_EDGES; i++) {
		const struct rsp_wedge *e = rsp_waitgraph__edge(c->g, i);

		if (rsp_waitgraph__in_knot(c->g, i) || !edge_listed(c, e))
			continue;
		if (own >= 0 && asked(c, e->from) != (own == 1))
			continue;
		text_edge(c, i, false, out);
		shown++;
	}
	if (!shown)
		rsp_buf__puts(out, "    (none)\n");
}

static void render_text(const struct ctx *c, struct rsp_buf *out)
{
	size_t nk = rsp_waitgraph__nr_knots(c->g), ns = rsp_waitgraph__nr_sinks(c->g);

	text_header(c, out);
	if (!nk)
		rsp_buf__puts(out, "\nno knot: nothing waits in a closed cycle\n");
	for (size_t k = 0; k < nk; k++)
		text_knot(c, k, out);
	rsp_buf__printf(out, "\nsinks (wait for nothing rsp sees): %zu\n", ns);
	for (size_t i = 0; i < ns && i < TOP_EDGES; i++)
		text_vertex(c, rsp_waitgraph__sink(c->g, i), out);
	if (ns > TOP_EDGES)
		rsp_buf__printf(out, "    ... and %zu more\n", ns - TOP_EDGES);
	if (c->pid > 0 || c->cgroup) {
		/*
		 * Its own waits first: the closure's other threads (rspd, a
		 * kworker) can wait far longer than the asked threads live.
		 */
		if (c->pid > 0)
			rsp_buf__printf(out,
					"\nheaviest waits of process %ld's threads outside knots\n",
					c->pid);
		else
			rsp_buf__printf(out,
					"\nheaviest waits of the threads of %s %s outside knots\n",
					c->by_container ? "container" : "cgroup", c->cgroup);
		text_edges(c, 1, out);
		rsp_buf__puts(out, "\nheaviest other edges outside knots\n");
		text_edges(c, 0, out);
		return;
	}
	rsp_buf__puts(out, "\nheaviest edges outside knots\n");
	text_edges(c, -1, out);
}

/* ---- JSON --------------------------------------------------------------- */

static void json_frame(void *arg, const char *frame)
{
	json_array_append_new(arg, json_string(frame));
}

static json_t *json_stacks(const struct ctx *c, const struct rsp_wstack *st, uint32_t n)
{
	json_t *a = json_array();

	for (uint32_t i = 0; i < n; i++) {
		json_t *o = json_object(), *f = json_array();

		frames(c, &st[i], 64, json_frame, f);
		json_object_set_new(o, "count", json_integer((json_int_t)st[i].count));
		json_object_set_new(o, "weight_s", json_real(secs(st[i].weight_ns)));
		json_object_set_new(o, "frames", f);
		json_array_append_new(a, o);
	}
	return a;
}

static json_t *json_tids(const struct rsp_wvertex *x)
{
	json_t *a = json_array();

	for (uint32_t i = 0; i < x->nr_threads; i++)
		json_array_append_new(a, json_integer(x->tids[i]));
	return a;
}

static json_t *json_vertex(const struct ctx *c, uint32_t v)
{
	const struct rsp_wvertex *x = rsp_waitgraph__vertex(c->g, v);
	json_t *o = json_object();

	json_object_set_new(o, "id", json_integer(v));
	json_object_set_new(o, "name", json_string(vname(c, v)));
	if (c->other[v])
		json_object_set_new(o, "other_user", json_true());
	json_object_set_new(o, "kind", json_string(kind_names[x->kind]));
	if (x->kind == RSP_WV_DISK) {
		char dev[32];

		snprintf(dev, sizeof(dev), "%u:%u", x->id >> 20, x->id & 0xfffff);
		json_object_set_new(o, "dev", json_string(dev));
	}
	if (x->tgid)
		json_object_set_new(o, "tgid", json_integer(x->tgid));
	json_object_set_new(o, "tids", json_tids(x));
	json_object_set_new(o, "cpu_s", json_real(secs(x->run_ns)));
	json_object_set_new(o, "running_inferred_s", json_real(secs(x->run_inferred_ns)));
	json_object_set_new(o, "runnable_s", json_real(secs(x->runnable_ns)));
	json_object_set_new(o, "wait_s", json_real(secs(x->wait_ns)));
	json_object_set_new(o, "cpu_util", json_real(x->cpu_util));
	return o;
}

static json_t *json_edge(const struct ctx *c, size_t i)
{
	const struct rsp_wedge *e = rsp_waitgraph__edge(c->g, i);
	json_t *o = json_object();

	json_object_set_new(o, "from", json_string(vname(c, e->from)));
	json_object_set_new(o, "to", json_string(vname(c, e->to)));
	json_object_set_new(o, "from_id", json_integer(e->from));
	json_object_set_new(o, "to_id", json_integer(e->to));
	json_object_set_new(o, "weight_s", json_real(secs(e->weight_ns)));
	json_object_set_new(o, "weight_pct", json_real(pct(c, e->weight_ns)));
	json_object_set_new(o, "direct_s", json_real(secs(e->direct_ns)));
	json_object_set_new(o, "inferred_s", json_real(secs(e->inferred_ns)));
	json_object_set_new(o, "network_s", json_real(secs(e->net_ns)));
	json_object_set_new(o, "reattributed_s", json_real(secs(e->reattributed_ns)));
	json_object_set_new(o, "count", json_integer((json_int_t)e->count));
	if (into_background(c, i))
		json_object_set_new(o, "to_background_knot", json_true());
	json_object_set_new(
		o, "wait_stacks",
		json_stacks(c, e->wait_stacks, c->other[e->from] ? 0 : e->nr_wait_stacks));
	json_object_set_new(
		o, "waker_stacks",
		json_stacks(c, e->waker_stacks, c->other[e->to] ? 0 : e->nr_waker_stacks));
	return o;
}

static json_t *json_knot(const struct ctx *c, size_t k)
{
	const struct rsp_wknot *kn = rsp_waitgraph__knot(c->g, k);
	json_t *o = json_object(), *vs = json_array(), *es = json_array();

	for (size_t i = 0; i < kn->nr_vertices; i++)
		json_array_append_new(vs, json_vertex(c, kn->vertices[i]));
	for (size_t i = 0; i < kn->nr_edges; i++)
		json_array_append_new(es, json_edge(c, kn->edges[i]));
	json_object_set_new(o, "vertices", vs);
	json_object_set_new(o, "edges", es);
	json_object_set_new(o, "background", json_boolean(kn->background));
	json_object_set_new(o, "refined", json_boolean(kn->refined));
	json_object_set_new(o, "cpu_util", json_real(kn->cpu_util));
	json_object_set_new(o, "runnable_s", json_real(secs(kn->runnable_ns)));
	json_object_set_new(o, "wants_cores", json_boolean(kn->wants_cores));
	return o;
}

static json_t *json_window(const struct ctx *c)
{
	const struct rsp_timeline_stats *s = c->tst;
	json_t *o = json_object();

	json_object_set_new(o, "start", json_real(secs(c->start)));
	json_object_set_new(o, "end", json_real(secs(c->end)));
	json_object_set_new(o, "seconds", json_real(c->window / 1e9));
	/* what weight_pct, --threshold and --noise are of */
	json_object_set_new(o, "reference_of",
			    json_string(c->pid > 0  ? "process"
					: c->cgroup ? "cgroup"
						    : "window"));
	if (c->cgroup)
		json_object_set_new(o, c->by_container ? "query_container" : "query_cgroup",
				    json_string(c->cgroup));
	json_object_set_new(o, "reference_start", json_real(secs(c->ref_start)));
	json_object_set_new(o, "reference_end", json_real(secs(c->ref_end)));
	json_object_set_new(o, "reference_seconds", json_real(c->ref / 1e9));
	json_object_set_new(o, "records", json_integer((json_int_t)s->records));
	json_object_set_new(o, "gaps", json_integer((json_int_t)s->gaps));
	json_object_set_new(o, "wakings_not_seen", json_integer((json_int_t)s->wakings_not_seen));
	json_object_set_new(o, "wakers_inferred", json_integer((json_int_t)s->wakers_inferred));
	json_object_set_new(o, "runs_inferred", json_integer((json_int_t)s->runs_inferred));
	json_object_set_new(o, "relayed_disk_waits",
			    json_integer((json_int_t)rsp_waitgraph__relayed(c->g)));
	json_object_set_new(o, "kernel_symbols", json_boolean(c->src->ksyms != NULL));
	json_object_set_new(o, "stacks_probed", json_integer((json_int_t)c->repair.candidates));
	json_object_set_new(o, "stacks_stitched", json_integer((json_int_t)c->repair.stitched));
	json_object_set_new(o, "stacks_dwarf", json_integer((json_int_t)c->repair.dwarf));
	json_object_set_new(o, "stacks_not_in_probe",
			    json_integer((json_int_t)c->repair.not_inside));
	json_object_set_new(o, "false_wakeups", rsp_query__json_fwake(c->store, c->raw));
	return o;
}

static json_t *json_threads(const struct ctx *c)
{
	json_t *a = json_array();

	for (size_t v = 0; v < rsp_waitgraph__nr_vertices(c->g); v++) {
		const struct rsp_wvertex *x = rsp_waitgraph__vertex(c->g, v);

		if (x->removed)
			continue;
		for (uint32_t i = 0; i < x->nr_threads; i++) {
			const struct rsp_tlthread *t =
				rsp_tlstore__find_thread(c->store, x->tids[i]);
			json_t *o = json_object();

			json_object_set_new(o, "tid", json_integer(x->tids[i]));
			json_object_set_new(o, "tgid", json_integer(t ? t->tgid : 0));
			if (c->other[v])
				json_object_set_new(o, "other_user", json_true());
			else
				json_object_set_new(o, "comm", rsp_json__name(t ? t->comm : ""));
			if (!c->other[v] && t && t->tgid && c->src->symbols)
				rsp_cgroupq__json(o, rsp_symbolizer__maps(c->src->symbols), t->tgid,
						  c->end);
			json_object_set_new(o, "vertex", json_integer((json_int_t)v));
			json_object_set_new(o, "vertex_name", json_string(vname(c, v)));
			if (t) {
				json_object_set_new(o, "cpu_s", json_real(secs(t->run_ns)));
				json_object_set_new(o, "running_inferred_s",
						    json_real(secs(t->run_inferred_ns)));
				json_object_set_new(o, "runnable_s",
						    json_real(secs(t->runnable_ns)));
				json_object_set_new(o, "wait_s", json_real(secs(t->sleep_ns)));
				json_object_set_new(o, "unknown_s", json_real(secs(t->unknown_ns)));
			}
			json_array_append_new(a, o);
		}
	}
	return a;
}

static int render_json(const struct ctx *c, struct rsp_buf *out)
{
	json_t *o = json_object(), *knots = json_array(), *sinks = json_array(),
	       *edges = json_array(), *vertices = json_array();

	for (size_t k = 0; k < rsp_waitgraph__nr_knots(c->g); k++)
		json_array_append_new(knots, json_knot(c, k));
	for (size_t i = 0; i < rsp_waitgraph__nr_sinks(c->g); i++)
		json_array_append_new(sinks, json_vertex(c, rsp_waitgraph__sink(c->g, i)));
	for (size_t i = 0; i < rsp_waitgraph__nr_edges(c->g); i++) {
		const struct rsp_wedge *e = rsp_waitgraph__edge(c->g, i);

		if (!rsp_waitgraph__in_knot(c->g, i) && edge_listed(c, e))
			json_array_append_new(edges, json_edge(c, i));
	}
	for (size_t v = 0; v < rsp_waitgraph__nr_vertices(c->g); v++)
		if (!rsp_waitgraph__vertex(c->g, v)->removed)
			json_array_append_new(vertices, json_vertex(c, (uint32_t)v));
	json_object_set_new(o, "knots", knots);
	json_object_set_new(o, "sinks", sinks);
	json_object_set_new(o, "edges", edges);
	json_object_set_new(o, "vertices", vertices);
	json_object_set_new(o, "threads", json_threads(c));
	json_object_set_new(o, "window", json_window(c));
	return rsp_json__emit(o, out);
}

/* ---- DOT ---------------------------------------------------------------- */

static void dot_quoted(struct rsp_buf *out, const char *s)
{
	rsp_buf__puts(out, "\"");
	for (; *s; s++) {
		if (*s == '"' || *s == '\\')
			rsp_buf__printf(out, "\\%c", *s);
		else if ((unsigned char)*s >= 0x20)
			rsp_buf__printf(out, "%c", *s);
	}
	rsp_buf__puts(out, "\"");
}

static const char *dot_shape(uint8_t kind)
{
	switch (kind) {
	case RSP_WV_DISK:
		return "cylinder";
	case RSP_WV_NET:
	case RSP_WV_TIMER:
	case RSP_WV_IRQ:
	case RSP_WV_SOFTIRQ:
		return "ellipse";
	default:
		return "box";
	}
}

/* An edge's knot: 0 none, 1 a knot, 2 a background knot. */
static int edge_knot(const struct ctx *c, size_t i)
{
	for (size_t k = 0; k < rsp_waitgraph__nr_knots(c->g); k++) {
		const struct rsp_wknot *kn = rsp_waitgraph__knot(c->g, k);

		for (size_t j = 0; j < kn->nr_edges; j++)
			if (kn->edges[j] == i)
				return kn->background ? 2 : 1;
	}
	return 0;
}

static int render_dot(const struct ctx *c, struct rsp_buf *out)
{
	size_t nv = rsp_waitgraph__nr_vertices(c->g), ne = rsp_waitgraph__nr_edges(c->g);
	bool *used = calloc(nv ? nv : 1, sizeof(*used));

	if (!used)
		return -ENOMEM;
	rsp_buf__puts(out, "digraph waitfor {\n  rankdir=LR;\n  node [fontname=\"monospace\"];\n");
	for (size_t i = 0; i < ne; i++) {
		const struct rsp_wedge *e = rsp_waitgraph__edge(c->g, i);

		/* as text and JSON: what --pid (or a cgroup) reaches, no vertex beyond */
		if (edge_listed(c, e) || edge_knot(c, i))
			used[e->from] = used[e->to] = true;
	}
	for (size_t v = 0; v < nv; v++) {
		if (!used[v])
			continue;
		rsp_buf__printf(out, "  v%zu [shape=%s, label=", v,
				dot_shape(rsp_waitgraph__vertex(c->g, v)->kind));
		dot_quoted(out, vname(c, (uint32_t)v));
		rsp_buf__puts(out, "];\n");
	}
	for (size_t i = 0; i < ne; i++) {
		const struct rsp_wedge *e = rsp_waitgraph__edge(c->g, i);
		int k = edge_knot(c, i);

		if (!used[e->from] || !used[e->to])
			continue;
		rsp_buf__printf(out, "  v%u -> v%u [label=\"%.3f s (%.1f%%)\", style=%s%s];\n",
				e->from, e->to, secs(e->weight_ns), pct(c, e->weight_ns),
				k ? "solid" : "dashed",
				k == 1 ? ", penwidth=2" : (k == 2 ? ", color=gray40" : ""));
	}
	rsp_buf__puts(out, "}\n");
	free(used);
	return 0;
}

/* ---- run ---------------------------------------------------------------- */

static int graph_run(const struct rsp_request *req, const struct rsp_source *src,
		     struct rsp_buf *out, struct rsp_buf *err)
{
	const struct graph_opts *o = req->opts;
	struct rsp_waitgraph_opts wo;
	struct rsp_timeline_stats tst;
	struct rsp_tlstore *store = NULL;
	struct rsp_waitgraph *g = NULL;
	struct rsp_wsnap *snap;
	struct rsp_tlstore_repair rep = {0};
	struct ctx c = {0};
	uint64_t from, to;
	int ret = -ENOMEM;

	struct cg_keep keep = {req, NULL, 0};

	/* its own result: ret stays -ENOMEM for the failures below that set no other */
	if (req->pid >= 0) {
		int bad = rsp_source__check_pid(src, "graph", req->pid, err);

		if (bad)
			return bad;
	}
	rsp_request__window_range(req, src, &from, &to);
	if (req->cgroup || req->container) {
		if (!src->symbols || (src->offline && !(src->dump && src->dump->has_cgroups))) {
			rsp_buf__puts(err, "graph: --cgroup and --container need the cgroup of "
					   "each process, which this file does not carry (perf or "
					   "an older rspd wrote it); ask rspd, or dump again");
			return -EOPNOTSUPP;
		}
		if (req->pid >= 0) {
			rsp_buf__puts(err, "graph: --pid and --cgroup/--container each choose "
					   "where the graph starts; give one of them");
			return -EINVAL;
		}
		keep.maps = rsp_symbolizer__maps(src->symbols);
		keep.time = to;
	}
	snap = rsp_pass__pin(src->window, from, to);
	if (!snap) {
		rsp_buf__puts(err, "graph: out of memory pinning the window");
		return -ENOMEM;
	}
	store = rsp_tlstore__from_window(
		RSP_TLSTORE_WAITS_ONLY | RSP_TLSTORE_NO_LINKS | RSP_TLSTORE_STACK_HASHES,
		src->schema, snap,
		&(struct rsp_tlstore_opts){.from = from,
					   .to = to,
					   .ksyms = src->ksyms,
					   .socks = src->socks,
					   .fwake_ns = rsp_request__fwake_ns(req)},
		&tst, err);
	if (!store)
		goto out;
	/* Sleep stacks truncated in libc: stitch the uprobes' stacks under them, unwind DWARF. */
	if (src->symbols && rsp_tlstore__repair_stacks(store, src->schema, src->symbols, &rep)) {
		rsp_buf__puts(err, "graph: out of memory repairing stacks");
		ret = -ENOMEM;
		goto out;
	}
	rsp_waitgraph_opts__init(&wo);
	wo.threshold = o->threshold;
	wo.noise = o->noise;
	wo.merge = !o->no_merge;
	wo.merge_stacks = o->merge_stacks;
	wo.pid = req->pid;
	if (keep.maps) {
		wo.keep_tgid = cg_keeps;
		wo.keep_ctx = &keep;
	}
	g = rsp_waitgraph__new(store, &wo, err);
	if (!g) {
		ret = errno == ESRCH ? -ESRCH : -ENOMEM;
		goto out;
	}
	c = (struct ctx){.src = src,
			 .store = store,
			 .g = g,
			 .tst = &tst,
			 .start = from,
			 .end = to,
			 .window = (double)(to - from),
			 .pid = req->pid,
			 .cgroup = req->cgroup ? req->cgroup : req->container,
			 .by_container = !req->cgroup && req->container,
			 .keep = keep.maps ? &keep : NULL,
			 .raw = req->raw,
			 .repair = rep};
	rsp_waitgraph__reference(g, &c.ref_start, &c.ref_end);
	c.ref = (double)(c.ref_end - c.ref_start);
	rsp_redact__init(&c.red, &src->access);
	rsp_redact__use_store(&c.red, store);
	if (decide_access(&c)) {
		rsp_buf__puts(err, "graph: out of memory");
		ret = -ENOMEM;
		goto out;
	}
	if (req->format == RSP_FMT_JSON)
		ret = render_json(&c, out);
	else if (req->format == RSP_FMT_DOT)
		ret = render_dot(&c, out);
	else {
		render_text(&c, out);
		ret = 0;
	}
	if (ret)
		rsp_buf__puts(err, "graph: out of memory rendering the answer");
out:
	free(c.other);
	free(c.label);
	rsp_redact__exit(&c.red);
	/* The graph's stacks point into the snapshot: free before unpinning. */
	rsp_waitgraph__delete(g);
	rsp_tlstore__delete(store);
	rsp_wsnap__unpin(snap);
	return ret;
}

const struct rsp_command rsp_cmd_graph = {
	.name = "graph",
	.summary = "who waits for whom: the wait-for graph, its knots and sinks",
	.usage = "usage: rspctl graph [--pid PID | --all] [--last DURATION | --from T --to T]\n"
		 "                    [--threshold PCT] [--noise PCT]\n"
		 "                    [--merge names|stacks | --no-merge]\n"
		 "                    [--format text|json|dot]\n"
		 "                    [--cgroup PATH | --container ID]\n"
		 "                    [--no-annotations | --false-wakeup-run US]\n"
		 "\n"
		 "  --pid PID        only what PID's threads wait for, directly or not;\n"
		 "                   percentages are then of the span of its threads\n"
		 "  --cgroup PATH, --container ID  likewise for the threads of the\n"
		 "                   processes in this cgroup v2 subtree or container:\n"
		 "                   they and what they wait for, wherever it runs\n"
		 "  --all            the whole system (the default)\n"
		 "  --last DURATION  the last DURATION of the window (default: all of it)\n"
		 "  --from T, --to T only [T, T] of the window, in seconds as 'rspctl\n"
		 "                   status' shows it; the same range gives the same graph\n"
		 "                   live and on a dump (rspctl analyze)\n"
		 "  --threshold PCT  stop trimming a knot (or a component with an edge out\n"
		 "                   of it) when its lightest edge weighs more than PCT%\n"
		 "                   of the window (20)\n"
		 "  --noise PCT      edges under PCT% of the window do not hold knots\n"
		 "                   together (1); they are still listed\n"
		 "  --merge names    threads of a process named alike (worker-1 ..\n"
		 "                   worker-8) are one vertex, 'worker*' (the default);\n"
		 "                   --merge stacks: those that spend most of their wait\n"
		 "                   time at the same stacks, 'name~' (wPerf)\n"
		 "  --no-merge       one vertex per thread (by default alike threads, and\n"
		 "                   short-lived threads of a parent, are merged)\n"
		 "  --format F       text, json or dot (dot -Tsvg renders it)\n"
		 "  --false-wakeup-run US  a thread woken by another that runs at most US\n"
		 "                   microseconds (150) and sleeps again where it slept\n"
		 "                   (a futex: same user stack) was woken for nothing:\n"
		 "                   its two sleeps are one wait, on the later waker\n"
		 "  --no-annotations the raw view: every wakeup as recorded\n"
		 "\n"
		 "A knot is a set of threads and devices that wait only for each other:\n"
		 "each knot holds a bottleneck. Edge A -> B weighs how long A waited for B,\n"
		 "plus (cascaded) what B waited for meanwhile. A disk is a vertex per\n"
		 "requester ('disk 254:0 for app[12]'): a thread waits for the disk serving\n"
		 "it, which waits, idle, for that thread.\n"
		 "\n"
		 "EXAMPLES\n"
		 "  rspctl graph --last 10s\n"
		 "  rspctl graph --pid 1234 --json\n"
		 "  rspctl graph --format dot | dot -Tsvg > graph.svg\n",
	.common = RSP_COPT_FORMAT | RSP_COPT_DOT | RSP_COPT_PID | RSP_COPT_LAST | RSP_COPT_RANGE |
		  RSP_COPT_CGROUP | RSP_COPT_FWAKE,
	.opts = graph_opts,
	.opts_size = sizeof(struct graph_opts),
	.init = graph_init,
	.opt = graph_opt,
	.check = graph_check,
	.run = graph_run,
	/* Reads src->symbols: user frames of stacks, stack repair (stitching, DWARF). */
};
