// SPDX-License-Identifier: LGPL-2.1
/*
 * `rspctl snapshot PID`: why did PID take the time it took? The recursive
 * snapshot (lib/analysis/snapshot.c) of the window or its last DURATION: the table
 * of categories of explanation, then the chain of pseudostacks as an
 * indented tree, heaviest first; as text or JSON. --folded and
 * --chrome-trace add files to the answer (rsp/answer.h) that rspctl writes.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <jansson.h>
#include <rsp/pass.h>
#include <rsp/answer.h>
#include <rsp/parse.h>
#include <rsp/perfdata.h>
#include <rsp/net.h>
#include <rsp/maps.h>
#include <rsp/snapshot.h>
#include <rsp/symbols.h>
#include "internal/cgroupq.h"
#include "internal/fmt.h"
#include "internal/query.h"
#include "internal/snapexport.h"
#include "internal/snapnames.h"
#include "internal/json.h"
#include "internal/pprof.h"

#define PATH_LEN     4096
#define HOT_MAX	     64
#define TEXT_WIDTH   52 /* label column */
#define TEXT_MAX_IND 24

struct snap_opts {
	long pid; /* positional; -1 */
	uint64_t fit_ns, merge_ns, slack_ns;
	unsigned max_depth;
	double min_pct; /* text: children under this % of the total are summed up */
	char folded[PATH_LEN];
	char chrome[PATH_LEN];
	char speedscope[PATH_LEN];
	size_t max_slices;     /* chronological slices in the files (speedscope, Chrome trace) */
	char chrono[PATH_LEN]; /* rsp_snapexport__chrono()'s JSON (rspctl report) */
	char pprof[PATH_LEN];  /* rsp_snapexport__pprof() */
};

#define MAX_SLICES_DEFAULT 100000

enum {
	OPT_FOLDED = 1,
	OPT_CHROME,
	OPT_FIT,
	OPT_MERGE,
	OPT_SLACK,
	OPT_DEPTH,
	OPT_MIN,
	OPT_SPEEDSCOPE,
	OPT_MAX_SLICES,
	OPT_CHRONO,
	OPT_PPROF,
};

static const struct rsp_option snap_options[] = {
	{"folded", true, OPT_FOLDED},
	{"chrome-trace", true, OPT_CHROME},
	{"fit", true, OPT_FIT},
	{"merge", true, OPT_MERGE},
	{"sample-slack", true, OPT_SLACK},
	{"max-depth", true, OPT_DEPTH},
	{"min", true, OPT_MIN},
	{"speedscope", true, OPT_SPEEDSCOPE},
	{"max-slices", true, OPT_MAX_SLICES},
	{"chrono", true, OPT_CHRONO},
	{"pprof", true, OPT_PPROF},
	{NULL, false, 0},
};

static void snap_init(void *p)
{
	struct snap_opts *o = p;
	struct rsp_snapshot_opts d;

	rsp_snapshot_opts__init(&d);
	o->pid = -1;
	o->fit_ns = d.fit_ns;
	o->merge_ns = d.merge_ns;
	o->slack_ns = d.sample_slack_ns;
	o->max_depth = d.max_depth;
	o->min_pct = 1.0;
	o->max_slices = MAX_SLICES_DEFAULT;
}

static int set_path(char *dst, const char *opt, const char *arg, struct rsp_buf *err)
{
	if (!arg[0] || strlen(arg) >= PATH_LEN) {
		rsp_buf__printf(err, "snapshot: --%s wants a file name (shorter than %d bytes)",
				opt, PATH_LEN);
		return -EINVAL;
	}
	memcpy(dst, arg, strlen(arg) + 1);
	return 0;
}

static int set_tolerance(uint64_t *dst, const char *opt, const char *arg, struct rsp_buf *err)
{
	uint64_t ns;

	if (rsp_parse__duration(arg, &ns) || ns > 1000000000ull) {
		rsp_buf__printf(err,
				"snapshot: --%s wants a duration up to 1s such as 100us or 2ms, "
				"not '%s'",
				opt, arg);
		return -EINVAL;
	}
	*dst = ns;
	return 0;
}

static int snap_opt(struct rsp_request *req, int id, const char *arg, struct rsp_buf *err)
{
	struct snap_opts *o = req->opts;
	uint64_t n;

	switch (id) {
	case 0:
		if (o->pid >= 0 || rsp_parse__u64(arg, 1, 4194304, &n)) {
			rsp_buf__printf(err,
					o->pid >= 0
						? "snapshot: one process at a time, not also '%s'"
						: "snapshot: '%s' is not a process id; usage: "
						  "rspctl snapshot PID",
					arg);
			return -EINVAL;
		}
		o->pid = (long)n;
		return 0;
	case OPT_FOLDED:
		return set_path(o->folded, "folded", arg, err);
	case OPT_CHROME:
		return set_path(o->chrome, "chrome-trace", arg, err);
	case OPT_SPEEDSCOPE:
		return set_path(o->speedscope, "speedscope", arg, err);
	case OPT_CHRONO:
		return set_path(o->chrono, "chrono", arg, err);
	case OPT_PPROF:
		return set_path(o->pprof, "pprof", arg, err);
	case OPT_MAX_SLICES:
		if (rsp_parse__u64(arg, 1, 10000000, &n)) {
			rsp_buf__printf(err, "snapshot: --max-slices wants 1 to 10000000, not '%s'",
					arg);
			return -EINVAL;
		}
		o->max_slices = (size_t)n;
		return 0;
	case OPT_FIT:
		return set_tolerance(&o->fit_ns, "fit", arg, err);
	case OPT_MERGE:
		return set_tolerance(&o->merge_ns, "merge", arg, err);
	case OPT_SLACK:
		return set_tolerance(&o->slack_ns, "sample-slack", arg, err);
	case OPT_DEPTH:
		if (rsp_parse__u64(arg, 1, 64, &n)) {
			rsp_buf__printf(err, "snapshot: --max-depth wants 1 to 64, not '%s'", arg);
			return -EINVAL;
		}
		o->max_depth = (unsigned)n;
		return 0;
	case OPT_MIN:
		if (rsp_parse__u64(arg, 0, 100, &n)) {
			rsp_buf__printf(
				err, "snapshot: --min wants a percentage, 0 to 100, not '%s'", arg);
			return -EINVAL;
		}
		o->min_pct = (double)n;
		return 0;
	default:
		rsp_buf__printf(
			err, "snapshot: unexpected argument '%s'; see 'rspctl help snapshot'", arg);
		return -EINVAL;
	}
}

static int snap_check(struct rsp_request *req, struct rsp_buf *err)
{
	struct snap_opts *o = req->opts;

	if (o->pid >= 0 && req->pid >= 0 && o->pid != req->pid) {
		rsp_buf__puts(err, "snapshot: two different pids; give one");
		return -EINVAL;
	}
	if (o->pid < 0)
		o->pid = req->pid;
	if (o->pid < 0) {
		rsp_buf__puts(err, "snapshot: which process? usage: rspctl snapshot PID "
				   "[--last DURATION]");
		return -EINVAL;
	}
	if (o->folded[0] && !strcmp(o->folded, o->chrome)) {
		rsp_buf__puts(err, "snapshot: --folded and --chrome-trace name the same file");
		return -EINVAL;
	}
	if (o->speedscope[0] &&
	    (!strcmp(o->speedscope, o->folded) || !strcmp(o->speedscope, o->chrome))) {
		rsp_buf__puts(err, "snapshot: --speedscope names the same file as --folded or "
				   "--chrome-trace; give each its own");
		return -EINVAL;
	}
	if (o->chrono[0] && (!strcmp(o->chrono, o->folded) || !strcmp(o->chrono, o->chrome) ||
			     !strcmp(o->chrono, o->speedscope))) {
		rsp_buf__puts(err, "snapshot: --chrono names the same file as another option; "
				   "give each its own");
		return -EINVAL;
	}
	if (o->pprof[0] && (!strcmp(o->pprof, o->folded) || !strcmp(o->pprof, o->chrome) ||
			    !strcmp(o->pprof, o->speedscope) || !strcmp(o->pprof, o->chrono))) {
		rsp_buf__puts(err, "snapshot: --pprof names the same file as another option; "
				   "give each its own");
		return -EINVAL;
	}
	return 0;
}

static const char *snap_output(const struct rsp_request *req, size_t i, const char **name)
{
	const struct snap_opts *o = req->opts;
	const char *paths[5] = {o->folded, o->chrome, o->speedscope, o->chrono, o->pprof},
		   *names[5] = {"folded", "chrome-trace", "speedscope", "chrono", "pprof"};

	return rsp_request__nth_path(paths, names, 5, i, name);
}

/* ---- shared ------------------------------------------------------------- */

struct ctx {
	const struct rsp_request *req;
	const struct snap_opts *o;
	const struct rsp_source *src;
	const struct rsp_snapshot *s;
	const struct rsp_snapshot_totals *t;
	const struct rsp_timeline_stats *tst;
	struct snapnames *names;
	uint64_t from, to;
};

/*
 * The chain's sleep time by where its stacks came from. A dump keeps the
 * stacks but not that (they are written back as the kernel's tracepoint
 * samples): offline, the cache's shares are null, not zero.
 */
static json_t *json_sleep_stacks(const struct ctx *c, const struct rsp_snapshot_totals *t)
{
	json_t *o = json_pack("{s:f, s:f}", "sleep_s", (double)t->sleep_ns / 1e9, "user_stack_s",
			      (double)t->user_stack_ns / 1e9);
	const char *k[] = {"cached_s", "checked_s", "stack_differ_s", "reason_differ_s"};
	const uint64_t v[] = {t->stack_cached_ns, t->stack_checked_ns, t->stack_differ_ns,
			      t->reason_differ_ns};

	for (int i = 0; o && i < 4; i++)
		json_object_set_new(o, k[i],
				    c->src->offline ? json_null() : json_real((double)v[i] / 1e9));
	return o;
}

static double secs(uint64_t ns)
{
	return (double)ns / 1e9;
}

static double pct(const struct ctx *c, uint64_t ns)
{
	return c->t->total_ns ? 100.0 * (double)ns / (double)c->t->total_ns : 0;
}

static const struct rsp_snode *node(const struct ctx *c, uint32_t i)
{
	return rsp_snapshot__node(c->s, i);
}

static char *node_label(const struct ctx *c, const struct rsp_snode *n, char *buf, size_t size)
{
	char who[96];

	switch (n->kind) {
	case RSP_SN_THREAD:
		rsp_snapnames__thread(c->names, n->tid, n->tgid, who, sizeof(who));
		if (n->parent == RSP_SNODE_NONE && n->path)
			snprintf(buf, size, "path %u: %s", n->path, who);
		else
			snprintf(buf, size, "%s", who);
		break;
	case RSP_SN_RUN:
		snprintf(buf, size, "running");
		break;
	case RSP_SN_RUNNABLE:
		snprintf(buf, size, "%s", rsp_snapnames__runnable(n->reason));
		break;
	case RSP_SN_SLEEP:
		rsp_snapnames__waker(c->names, n, who, sizeof(who));
		if (n->waker_kind == RSP_WAKER_NONE)
			snprintf(who, sizeof(who), "%s",
				 n->self_ns[RSP_CAT_BLOCKING_IO] ? "? (disk busy)"
								 : "? (not seen)");
		snprintf(buf, size, "sleep %s <- %s%s%s",
			 rsp_sleep_reason__name((enum rsp_sleep_reason)n->reason), who,
			 n->self_ns[RSP_CAT_OTHER_PATH] == n->total_ns ? " (other path)" : "",
			 n->inferred_ns ? " (inferred)" : "");
		break;
	case RSP_SN_SAMPLE:
		snprintf(buf, size, "sample");
		break;
	default:
		snprintf(buf, size, "unknown (no data)");
		break;
	}
	return buf;
}

/* ---- text --------------------------------------------------------------- */

static void text_table(const struct ctx *c, struct rsp_buf *out)
{
	const struct rsp_snapshot_totals *t = c->t;

	rsp_buf__printf(out, "\n%-44s %9s %9s\n", "", "seconds", "of total");
	rsp_buf__printf(out, "%-44s %9.3f\n", "wall time", secs(t->wall_ns));
	rsp_buf__printf(out, "%-44s %9.3f %8.1f%%\n", "total time (with parallelism)",
			secs(t->total_ns), 100.0);
	for (int k = 0; k < RSP_CAT__NR; k++)
		rsp_buf__printf(out, "  %-42s %9.3f %8.1f%%\n", rsp_cat__label(k),
				secs(t->cat_ns[k]), pct(c, t->cat_ns[k]));
	rsp_buf__printf(out, "%-44s %9.3f %8.1f%%\n", "total accounted", secs(t->accounted_ns),
			pct(c, t->accounted_ns));
	if (t->inferred_ns)
		rsp_buf__printf(out,
				"  of it %.3f s inferred: wakeups and switches from idle this "
				"kernel\n  does not deliver, filled in from the evidence\n",
				secs(t->inferred_ns));
	if (t->cat_ns[RSP_CAT_UNKNOWN])
		rsp_buf__printf(out,
				"  unknown: %.3f s of sleeps whose waking was not delivered, "
				"%.3f s\n  across lost records, the rest with no data\n",
				secs(t->unknown_not_delivered_ns), secs(t->unknown_gap_ns));
	if (t->stack_cached_ns || t->stack_checked_ns)
		rsp_buf__printf(out,
				"  sleep stacks: %.0f%% from the stack cache; of %.3f s checked,\n"
				"  %.1f%% would have had another sleep reason\n",
				t->sleep_ns
					? 100.0 * (double)t->stack_cached_ns / (double)t->sleep_ns
					: 0.0,
				secs(t->stack_checked_ns),
				t->stack_checked_ns ? 100.0 * (double)t->reason_differ_ns /
							      (double)t->stack_checked_ns
						    : 0.0);
}

/*
 * The stretches of [@from, @to] the overhead budget degraded capture over
 * (live only: rspd's own history, rsp/status.h), as {start, end, level},
 * at most @n; the number found. Before the first change kept, the level
 * was 0 unless the history lost older changes (then unknown: left out).
 */
struct degraded {
	uint64_t start, end;
	unsigned level;
};

static size_t degraded(const struct ctx *c, uint64_t from, uint64_t to, struct degraded *out,
		       size_t n)
{
	const struct rsp_budget_status *b = c->src->capture ? &c->src->capture->budget : NULL;
	size_t k = 0;

	if (!b || !b->nr_changes)
		return 0;
	for (unsigned i = 0; i < b->nr_changes && k < n; i++) {
		uint64_t s = b->changes[i].time_ns,
			 e = i + 1 < b->nr_changes ? b->changes[i + 1].time_ns : UINT64_MAX;
		unsigned lvl = b->changes[i].to;

		if (!lvl || e <= from || s >= to)
			continue;
		out[k++] = (struct degraded){s > from ? s : from, e < to ? e : to, lvl};
	}
	return k;
}

static json_t *json_degraded(const struct ctx *c)
{
	struct degraded d[RSP_BUDGET_HISTORY];
	size_t n = degraded(c, c->t->start, c->t->end, d, RSP_BUDGET_HISTORY);
	json_t *a = json_array();

	for (size_t i = 0; a && i < n; i++)
		json_array_append_new(a,
				      json_pack("{s:f, s:f, s:i, s:s}", "from_s", secs(d[i].start),
						"to_s", secs(d[i].end), "level", (int)d[i].level,
						"what", rsp_degrade__name(d[i].level)));
	return a;
}

static void text_degraded(const struct ctx *c, struct rsp_buf *out)
{
	struct degraded d[RSP_BUDGET_HISTORY];
	size_t n = degraded(c, c->t->start, c->t->end, d, RSP_BUDGET_HISTORY);
	uint64_t ns = 0;
	unsigned worst = 0;

	for (size_t i = 0; i < n; i++) {
		ns += d[i].end - d[i].start;
		worst = d[i].level > worst ? d[i].level : worst;
	}
	if (n)
		rsp_buf__printf(out,
				"capture degraded by the overhead budget over %.3f s of it (at "
				"worst: %s)\n",
				secs(ns), rsp_degrade__name(worst));
}

/* The process of interest's cgroup, container and namespaced pid, where the model knows them. */
static void text_cgroup(const struct ctx *c, struct rsp_buf *out)
{
	uint32_t pid = (uint32_t)c->o->pid;

	if (!c->src->symbols || rsp_snapnames__hidden(c->names, pid, pid))
		return;
	if (rsp_cgroupq__line(rsp_symbolizer__maps(c->src->symbols), pid, c->t->end, out))
		rsp_buf__puts(out, "\n");
}

static void text_header(const struct ctx *c, struct rsp_buf *out)
{
	const struct rsp_snapshot_totals *t = c->t;
	char who[96];

	rsp_snapnames__thread(c->names, (uint32_t)c->o->pid, (uint32_t)c->o->pid, who, sizeof(who));
	rsp_buf__printf(out, "snapshot of %s: %.3f s, from %.3f to %.3f\n", who, secs(t->wall_ns),
			secs(t->start), secs(t->end));
	text_cgroup(c, out);
	rsp_buf__printf(out,
			"%zu thread%s of its own, %zu in the chain, %zu control path%s; "
			"%llu sleeps followed\n",
			t->nr_threads, t->nr_threads == 1 ? "" : "s", t->nr_involved, t->nr_paths,
			t->nr_paths == 1 ? "" : "s", (unsigned long long)t->sleeps_followed);
	rsp_buf__printf(out, "%llu cpu-clock samples of its own (%llu outside any run)\n",
			(unsigned long long)t->samples, (unsigned long long)t->samples_unattached);
	if (!c->src->ksyms)
		rsp_buf__puts(out, "no kernel symbols: sleep reasons unknown, kernel frames as "
				   "addresses\n");
	if (!c->src->symbols)
		rsp_buf__puts(out, "no process model: user frames as addresses\n");
	text_degraded(c, out);
	if (c->tst->gaps)
		rsp_buf__printf(out, "%llu gaps (lost records): threads are unknown across them\n",
				(unsigned long long)c->tst->gaps);
	if (t->truncated)
		rsp_buf__printf(out, "the chain was cut at %u threads deep or at the node limit\n",
				c->o->max_depth);
	rsp_query__text_fwake(rsp_snapshot__store(c->s), c->req->raw, out);
}

struct hot {
	char name[SNAP_FRAME_LEN];
	uint64_t ns;
};

static int cmp_hot(const void *a, const void *b)
{
	const struct hot *x = a, *y = b;

	return x->ns > y->ns ? -1 : x->ns < y->ns;
}

/* The functions the samples of a RUN node fell in, most first. */
static void text_hot(const struct ctx *c, const struct rsp_snode *run, int ind, struct rsp_buf *out)
{
	struct hot h[HOT_MAX];
	int nh = 0;
	uint64_t all = 0;
	struct rsp_buf line = RSP_BUF_INIT;

	for (uint32_t k = run->first_child; k != RSP_SNODE_NONE; k = node(c, k)->next_sibling) {
		const struct rsp_snode *sm = node(c, k);
		struct snap_frame f[32];
		int nf = rsp_snapnames__frames(c->names, sm->tid, sm->tgid, sm->first, sm->stack,
					       sm->nr_stack, f, 32),
		    u = 0, i;

		/* the innermost function of the program; the kernel's if none */
		while (u < nf && f[u].kernel)
			u++;
		if (u == nf)
			u = 0;
		if (!nf)
			snprintf(f[0].name, sizeof(f[0].name), "[unknown]");
		if (sm->spin) /* busy waiting there: said, and apart from its work */
			snprintf(f[u].name + strnlen(f[u].name, sizeof(f[u].name) - 8), 8,
				 " (spin)");
		for (i = 0; i < nh && strcmp(h[i].name, f[u].name); i++)
			;
		if (i == nh) {
			if (nh == HOT_MAX)
				continue;
			memcpy(h[nh].name, f[u].name, sizeof(h[nh].name));
			h[nh++].ns = 0;
		}
		h[i].ns += sm->total_ns;
		all += sm->total_ns;
	}
	if (!nh || !all)
		return;
	qsort(h, (size_t)nh, sizeof(h[0]), cmp_hot);
	rsp_buf__printf(&line, "%*s  hot:", ind, "");
	for (int i = 0; i < nh && i < 4; i++)
		rsp_buf__printf(&line, "%s %s %.0f%%", i ? "," : "", h[i].name,
				100.0 * (double)h[i].ns / (double)all);
	if (line.error && !out->error)
		out->error = line.error; /* the answer lacks this line: an error */
	else if (!line.error)
		rsp_buf__printf(out, "%.79s\n", line.data);
	rsp_buf__exit(&line);
}

/* "in read < play < main; kernel: anon_pipe_read < vfs_read" for a sleep. */
static void text_stack(const struct ctx *c, const struct rsp_snode *sl, int ind,
		       struct rsp_buf *out)
{
	struct snap_frame f[32];
	int n = rsp_snapnames__frames(c->names, sl->tid, sl->tgid, sl->first, sl->stack,
				      sl->nr_stack, f, 32);
	struct rsp_buf line = RSP_BUF_INIT;
	int nu = 0, nk = 0;

	for (int i = 0; i < n; i++)
		if (!f[i].kernel && nu < 3)
			rsp_buf__printf(&line, "%s%s", nu++ ? " < " : "in ", f[i].name);
	for (int i = 0; i < n; i++)
		if (f[i].kernel && nk < 2)
			rsp_buf__printf(&line, "%s%s",
					nk++ ? " < "
					: nu ? "; kernel: "
					     : "kernel: ",
					f[i].name);
	if (nu || nk)
		rsp_buf__printf(out, "%*s  %.*s\n", ind, "", 77 - ind, line.data);
	rsp_buf__exit(&line);
}

/* "tcp 127.0.0.1:40000 -> 127.0.0.1:8080": the socket the sleep waited on. */
static void text_net(const struct ctx *c, const struct rsp_snode *n, int ind, struct rsp_buf *out)
{
	const struct rsp_net_op *op = n->net;
	char l[64] = "?", r[64] = "?";

	if (!rsp_snapnames__hidden(c->names, n->tid, n->tgid) && op->local.family) {
		rsp_sockaddr__format(&op->local, l, sizeof(l));
		rsp_sockaddr__format(&op->remote, r, sizeof(r));
	}
	rsp_buf__printf(out, "%*s  %s %s -> %s%s\n", ind, "", rsp_net__proto_name(op->proto), l, r,
			op->flags & RSP_NETF_LOOPBACK ? ", answered over loopback"
			: op->flags & RSP_NETF_LOCAL  ? ""
						      : ", from the NIC");
}

static void text_node(const struct ctx *c, uint32_t i, int depth, struct rsp_buf *out);

static void text_line(const struct ctx *c, const struct rsp_snode *n, int ind, struct rsp_buf *out)
{
	char label[256], extra[48] = "";
	int w = TEXT_WIDTH - ind;

	node_label(c, n, label, sizeof(label));
	if (n->kind == RSP_SN_SLEEP || n->kind == RSP_SN_RUNNABLE)
		snprintf(extra, sizeof(extra), " x%llu", (unsigned long long)n->count);
	else if (n->kind == RSP_SN_RUN)
		snprintf(extra, sizeof(extra), " %llu runs", (unsigned long long)n->count);
	rsp_buf__printf(out, "%*s%-*.*s %8.3f s %5.1f%%%s\n", ind, "", w, w, label,
			secs(n->total_ns), pct(c, n->total_ns), extra);
}

static void text_children(const struct ctx *c, const struct rsp_snode *n, int depth,
			  struct rsp_buf *out)
{
	uint64_t hidden_ns = 0;
	unsigned hidden = 0, shown = 0;

	for (uint32_t k = n->first_child; k != RSP_SNODE_NONE; k = node(c, k)->next_sibling) {
		const struct rsp_snode *ch = node(c, k);

		if (ch->kind == RSP_SN_SAMPLE)
			continue;
		if (shown && pct(c, ch->total_ns) < c->o->min_pct) {
			hidden++;
			hidden_ns += ch->total_ns;
			continue;
		}
		text_node(c, k, depth + 1, out);
		shown++;
	}
	if (hidden) {
		int ind = 2 * (depth + 1) < TEXT_MAX_IND ? 2 * (depth + 1) : TEXT_MAX_IND;

		rsp_buf__printf(out, "%*s(%u more under %.0f%%: %.3f s)\n", ind, "", hidden,
				c->o->min_pct, secs(hidden_ns));
	}
}

static void text_node(const struct ctx *c, uint32_t i, int depth, struct rsp_buf *out)
{
	const struct rsp_snode *n = node(c, i);
	int ind = 2 * depth < TEXT_MAX_IND ? 2 * depth : TEXT_MAX_IND;

	text_line(c, n, ind, out);
	if (n->kind == RSP_SN_SLEEP) {
		text_stack(c, n, ind, out);
		if (n->net)
			text_net(c, n, ind, out);
		if (n->other != RSP_SNODE_NONE && node(c, n->other)->path)
			rsp_buf__printf(
				out, "%*s  %.4f s waiting on path %u: the waker went on running\n",
				ind, "", secs(n->self_ns[RSP_CAT_OTHER_PATH]),
				node(c, n->other)->path);
		else if (n->other != RSP_SNODE_NONE)
			rsp_buf__printf(out,
					"%*s  (a thread of its own: its time is under its root)\n",
					ind, "");
	}
	if (n->kind == RSP_SN_RUNNABLE && n->first_child != RSP_SNODE_NONE)
		rsp_buf__printf(out, "%*s  %.3f s of it: threads it woke ran on its CPU\n", ind, "",
				secs(n->total_ns - n->self_ns[RSP_CAT_INVOLUNTARY] -
				     n->self_ns[RSP_CAT_SCHEDULER]));
	if (n->kind == RSP_SN_RUN) {
		text_hot(c, n, ind, out);
		if (n->inferred_ns >= 500000)
			rsp_buf__printf(out,
					"%*s  %.3f s of it inferred (a switch not delivered: "
					"running (inferred))\n",
					ind, "", secs(n->inferred_ns));
	}
	text_children(c, n, depth, out);
}

struct rest {
	unsigned n;
	uint64_t ns;
	char comm[3][16];
	unsigned count[3];
};

/* A root too light to show: counted, by name, in the summary line. */
static void rest_add(const struct ctx *c, struct rest *r, const struct rsp_snode *n)
{
	const char *comm = rsp_redact__comm(&c->names->red, n->tid, n->tgid,
					    rsp_snapnames__comm(c->names, n->tid));

	r->n++;
	r->ns += n->total_ns;
	for (int k = 0; k < 3; k++) {
		if (!r->comm[k][0])
			snprintf(r->comm[k], sizeof(r->comm[k]), "%s", comm);
		if (!strcmp(r->comm[k], comm)) {
			r->count[k]++;
			return;
		}
	}
}

static void rest_print(const struct rest *r, const char *what, double min, struct rsp_buf *out)
{
	if (!r->n)
		return;
	rsp_buf__printf(out, "(%u more %s under %.0f%% each: %.3f s; ", r->n, what, min,
			secs(r->ns));
	for (int k = 0; k < 3 && r->comm[k][0]; k++) {
		char name[RSP_FMT_NAME_MAX];

		rsp_buf__printf(out, "%s%s x%u", k ? ", " : "",
				rsp_fmt__name(name, sizeof(name), r->comm[k]), r->count[k]);
	}
	rsp_buf__puts(out, ")\n");
}

static void render_text(const struct ctx *c, struct rsp_buf *out)
{
	struct rest own = {0}, others = {0};

	text_header(c, out);
	text_table(c, out);
	rsp_buf__puts(out, "\nchain (heaviest first; seconds and % of the total time)\n");
	for (size_t i = 0; i < rsp_snapshot__nr_roots(c->s); i++) {
		const struct rsp_snode *r = node(c, rsp_snapshot__root(c->s, i));

		if (i && pct(c, r->total_ns) < c->o->min_pct) {
			rest_add(c, r->path ? &others : &own, r);
			continue;
		}
		text_node(c, rsp_snapshot__root(c->s, i), 0, out);
	}
	rest_print(&own, "threads of its own", c->o->min_pct, out);
	rest_print(&others, "control paths", c->o->min_pct, out);
}

/* ---- JSON --------------------------------------------------------------- */

static const char *const kind_names[] = {
	[RSP_SN_THREAD] = "thread",	[RSP_SN_RUN] = "run",	  [RSP_SN_SAMPLE] = "sample",
	[RSP_SN_RUNNABLE] = "runnable", [RSP_SN_SLEEP] = "sleep", [RSP_SN_UNKNOWN] = "unknown",
};

static json_t *json_cats(const uint64_t *ns)
{
	json_t *o = json_object();

	for (int k = 0; k < RSP_CAT__NR; k++)
		if (ns[k])
			json_object_set_new(o, rsp_cat__name(k), json_real(secs(ns[k])));
	return o;
}

static json_t *json_frames(const struct ctx *c, const struct rsp_snode *x)
{
	struct snap_frame f[64];
	int n = rsp_snapnames__frames(c->names, x->tid, x->tgid, x->first, x->stack, x->nr_stack, f,
				      64);
	json_t *a = json_array();

	for (int i = 0; i < n; i++)
		json_array_append_new(
			a, json_pack("{s:s, s:b}", "name", f[i].name, "kernel", f[i].kernel));
	return a;
}

/* {"tid", "pid", "comm"} or {"pid", "other_user": true}. */
static void json_who(const struct ctx *c, json_t *o, uint32_t tid, uint32_t tgid)
{
	uint32_t pid = rsp_redact__owner(&c->names->red, tid, tgid);

	json_object_set_new(o, "pid", json_integer(pid));
	if (rsp_snapnames__hidden(c->names, tid, tgid)) {
		json_object_set_new(o, "other_user", json_true());
		return;
	}
	json_object_set_new(o, "tid", json_integer(tid));
	json_object_set_new(o, "comm", rsp_json__name(rsp_snapnames__comm(c->names, tid)));
	if (c->src->symbols && pid)
		rsp_cgroupq__json(o, rsp_symbolizer__maps(c->src->symbols), pid, c->t->end);
}

static json_t *json_waker(const struct ctx *c, const struct rsp_snode *n)
{
	json_t *w = json_object();
	char dev[32];

	switch (n->waker_kind) {
	case RSP_WAKER_THREAD:
		json_object_set_new(w, "kind", json_string("thread"));
		json_who(c, w, n->waker_id, 0);
		break;
	case RSP_WAKER_DEVICE:
		snprintf(dev, sizeof(dev), "%u:%u", n->waker_id >> 20, n->waker_id & 0xfffff);
		json_object_set_new(w, "kind", json_string("disk"));
		json_object_set_new(w, "dev", json_string(dev));
		break;
	case RSP_WAKER_IRQ:
		json_object_set_new(w, "kind", json_string("irq"));
		json_object_set_new(w, "irq", json_integer(n->waker_id));
		json_object_set_new(w, "name", json_string(n->name ? n->name : ""));
		break;
	case RSP_WAKER_SOFTIRQ:
		json_object_set_new(w, "kind", json_string("softirq"));
		json_object_set_new(w, "vector", json_string(rsp_softirq__name(n->waker_id)));
		break;
	case RSP_WAKER_TIMER:
		json_object_set_new(w, "kind", json_string("timer"));
		break;
	default:
		json_object_set_new(w, "kind", json_string("unknown"));
		break;
	}
	return w;
}

/* "127.0.0.1:8080" and its parts, or null when rsp has no address. */
static void json_endpoint(json_t *o, const char *key, const struct rsp_sockaddr *a)
{
	char buf[64], k[32];

	if (!a->family) {
		json_object_set_new(o, key, json_null());
		return;
	}
	json_object_set_new(o, key, json_string(rsp_sockaddr__format(a, buf, sizeof(buf))));
	snprintf(k, sizeof(k), "%s_addr", key);
	json_object_set_new(o, k, json_string(rsp_sockaddr__addr(a, buf, sizeof(buf))));
	snprintf(k, sizeof(k), "%s_port", key);
	json_object_set_new(o, k, json_integer(a->port));
}

/*
 * The network operation a sleep waited for (its first occurrence's): the
 * socket's addresses (not for another user's process) and who answered.
 */
static json_t *json_net(const struct ctx *c, const struct rsp_snode *n)
{
	const struct rsp_net_op *op = n->net;
	json_t *o = json_object();

	json_object_set_new(o, "proto", json_string(rsp_net__proto_name(op->proto)));
	if (!rsp_snapnames__hidden(c->names, n->tid, n->tgid)) {
		json_endpoint(o, "local", &op->local);
		json_endpoint(o, "remote", &op->remote);
	}
	json_object_set_new(o, "answered_by",
			    json_string(op->flags & RSP_NETF_LOOPBACK ? "thread"
					: op->flags & RSP_NETF_LOCAL  ? "local"
								      : "nic"));
	json_object_set_new(o, "operation_s", json_real(secs(op->end - op->start)));
	return o;
}

static json_t *json_node(const struct ctx *c, uint32_t i)
{
	const struct rsp_snode *n = node(c, i);
	json_t *o = json_object(), *kids = json_array();
	char fn[SNAP_FRAME_LEN];

	json_object_set_new(o, "kind", json_string(kind_names[n->kind]));
	json_object_set_new(o, "total_s", json_real(secs(n->total_ns)));
	json_object_set_new(o, "categories", json_cats(n->self_ns));
	if (n->inferred_ns)
		json_object_set_new(o, "inferred_s", json_real(secs(n->inferred_ns)));
	json_object_set_new(o, "count", json_integer((json_int_t)n->count));
	switch (n->kind) {
	case RSP_SN_THREAD:
		json_who(c, o, n->tid, n->tgid);
		json_object_set_new(o, "path", json_integer(n->path));
		break;
	case RSP_SN_RUN:
		json_object_set_new(o, "samples", json_integer(n->samples));
		break;
	case RSP_SN_SAMPLE:
		json_object_set_new(o, "stack", json_frames(c, n));
		if (n->spin)
			json_object_set_new(o, "spinning", json_true());
		break;
	case RSP_SN_RUNNABLE:
		json_object_set_new(o, "preempted", json_boolean(n->reason == RSP_SR_PREEMPT));
		break;
	case RSP_SN_SLEEP:
		json_object_set_new(
			o, "reason",
			json_string(rsp_sleep_reason__name((enum rsp_sleep_reason)n->reason)));
		json_object_set_new(o, "waker", json_waker(c, n));
		rsp_snapnames__user_fn(c->names, n->tid, n->tgid, n->first, n->stack, n->nr_stack,
				       fn, sizeof(fn));
		if (fn[0])
			json_object_set_new(o, "function", json_string(fn));
		json_object_set_new(o, "stack", json_frames(c, n));
		if (n->net)
			json_object_set_new(o, "network", json_net(c, n));
		if (n->other != RSP_SNODE_NONE)
			json_object_set_new(o, "other_path", json_integer(node(c, n->other)->path));
		break;
	default:
		break;
	}
	for (uint32_t k = n->first_child; k != RSP_SNODE_NONE; k = node(c, k)->next_sibling)
		json_array_append_new(kids, json_node(c, k));
	json_object_set_new(o, "children", kids);
	return o;
}

static json_t *json_window(const struct ctx *c)
{
	const struct rsp_timeline_stats *s = c->tst;

	const struct rsp_tlstore_repair *r = &c->t->repair;
	json_t *o;

	o = json_pack("{s:f, s:f, s:I, s:I, s:I, s:I, s:b, s:b, s:I, s:I, s:I, s:I}", "from_s",
		      secs(c->from), "to_s", secs(c->to), "records", (json_int_t)s->records, "gaps",
		      (json_int_t)s->gaps, "wakings_not_seen", (json_int_t)s->wakings_not_seen,
		      "wakers_inferred", (json_int_t)s->wakers_inferred, "kernel_symbols",
		      c->src->ksyms != NULL, "symbols", c->src->symbols != NULL, "stacks_probed",
		      (json_int_t)r->candidates, "stacks_stitched", (json_int_t)r->stitched,
		      "stacks_dwarf", (json_int_t)r->dwarf, "stacks_not_in_probe",
		      (json_int_t)r->not_inside);
	if (o)
		json_object_set_new(o, "false_wakeups",
				    rsp_query__json_fwake(rsp_snapshot__store(c->s), c->req->raw));
	return o;
}

static json_t *json_snapshot(const struct ctx *c)
{
	const struct rsp_snapshot_totals *t = c->t;
	json_t *o = json_object(), *chain = json_array(), *threads = json_array();
	const uint32_t *tids;
	size_t nt;

	json_object_set_new(o, "pid", json_integer(c->o->pid));
	if (!rsp_snapnames__hidden(c->names, (uint32_t)c->o->pid, (uint32_t)c->o->pid))
		json_object_set_new(
			o, "comm",
			rsp_json__name(rsp_snapnames__comm(c->names, (uint32_t)c->o->pid)));
	if (c->src->symbols &&
	    !rsp_snapnames__hidden(c->names, (uint32_t)c->o->pid, (uint32_t)c->o->pid))
		rsp_cgroupq__json(o, rsp_symbolizer__maps(c->src->symbols), (uint32_t)c->o->pid,
				  t->end);
	json_object_set_new(o, "start_s", json_real(secs(t->start)));
	json_object_set_new(o, "end_s", json_real(secs(t->end)));
	json_object_set_new(o, "wall_s", json_real(secs(t->wall_ns)));
	json_object_set_new(o, "total_s", json_real(secs(t->total_ns)));
	json_object_set_new(o, "accounted_s", json_real(secs(t->accounted_ns)));
	json_object_set_new(o, "percent_accounted", json_real(pct(c, t->accounted_ns)));
	json_object_set_new(o, "inferred_s", json_real(secs(t->inferred_ns)));
	json_object_set_new(o, "categories", json_cats(t->cat_ns));
	for (int k = 0; k < RSP_CAT__NR; k++)
		if (!t->cat_ns[k])
			json_object_set_new(json_object_get(o, "categories"), rsp_cat__name(k),
					    json_real(0));
	json_object_set_new(o, "unknown_detail",
			    json_pack("{s:f, s:f}", "not_delivered_s",
				      secs(t->unknown_not_delivered_ns), "gaps_s",
				      secs(t->unknown_gap_ns)));
	json_object_set_new(o, "threads_own", json_integer((json_int_t)t->nr_threads));
	json_object_set_new(o, "paths", json_integer((json_int_t)t->nr_paths));
	json_object_set_new(o, "sleeps_followed", json_integer((json_int_t)t->sleeps_followed));
	json_object_set_new(o, "samples", json_integer((json_int_t)t->samples));
	json_object_set_new(o, "samples_unattached",
			    json_integer((json_int_t)t->samples_unattached));
	json_object_set_new(o, "truncated", json_boolean(t->truncated));
	json_object_set_new(o, "sleep_stacks", json_sleep_stacks(c, t));
	json_object_set_new(o, "degraded", c->src->offline ? json_null() : json_degraded(c));
	json_object_set_new(o, "tolerances",
			    json_pack("{s:f, s:f, s:f, s:i}", "fit_us", (double)c->o->fit_ns / 1e3,
				      "merge_us", (double)c->o->merge_ns / 1e3, "sample_slack_us",
				      (double)c->o->slack_ns / 1e3, "max_depth", c->o->max_depth));
	json_object_set_new(o, "window", json_window(c));
	tids = rsp_snapshot__threads(c->s, &nt);
	for (size_t i = 0; i < nt; i++) {
		json_t *th = json_object();

		json_who(c, th, tids[i], 0);
		json_array_append_new(threads, th);
	}
	json_object_set_new(o, "threads", threads);
	for (size_t i = 0; i < rsp_snapshot__nr_roots(c->s); i++)
		json_array_append_new(chain, json_node(c, rsp_snapshot__root(c->s, i)));
	json_object_set_new(o, "chain", chain);
	return o;
}

static int render_json(const struct ctx *c, struct rsp_buf *out)
{
	return rsp_json__emit(json_snapshot(c), out);
}

/* ---- run ---------------------------------------------------------------- */

/* The answer: the rendering alone, or parts when files were asked for. */
static int render(const struct ctx *c, struct rsp_buf *out)
{
	struct rsp_buf main = RSP_BUF_INIT, file = RSP_BUF_INIT;
	int ret;

	if (!c->o->folded[0] && !c->o->chrome[0] && !c->o->speedscope[0] && !c->o->chrono[0] &&
	    !c->o->pprof[0]) {
		if (c->req->format == RSP_FMT_JSON)
			return render_json(c, out);
		render_text(c, out);
		return 0;
	}
	if (c->req->format == RSP_FMT_JSON)
		ret = render_json(c, &main);
	else
		render_text(c, &main), ret = main.error; /* a line lost for memory fails it */
	if (!ret)
		ret = rsp_answer__begin(out);
	if (!ret)
		ret = rsp_answer__add(out, RSP_ANSWER_STDOUT, main.data, main.len);
	if (!ret && c->o->folded[0] && !(ret = rsp_snapexport__folded(c->names, &file)))
		ret = rsp_answer__add(out, "folded", file.data, file.len);
	rsp_buf__reset(&file);
	if (!ret && c->o->chrome[0] && !(ret = rsp_snapexport__chrome(c->names, &file)))
		ret = rsp_answer__add(out, "chrome-trace", file.data, file.len);
	rsp_buf__reset(&file);
	if (!ret && c->o->speedscope[0] &&
	    !(ret = rsp_snapexport__speedscope(c->names, c->o->max_slices, &file)))
		ret = rsp_answer__add(out, "speedscope", file.data, file.len);
	rsp_buf__reset(&file);
	if (!ret && c->o->chrono[0] &&
	    !(ret = rsp_snapexport__chrono(c->names, c->o->max_slices, &file)))
		ret = rsp_answer__add(out, "chrono", file.data, file.len);
	rsp_buf__reset(&file);
	if (!ret && c->o->pprof[0]) {
		char comment[96];
		struct rsp_pprof_meta meta = {.comment = comment};

		snprintf(comment, sizeof(comment),
			 "rsp snapshot of pid %ld: off-CPU, the chain's time", c->o->pid);
		rsp_pprof_meta__range(&meta, c->src->capture && !c->src->offline, c->src->now,
				      c->from, c->to);
		if (!(ret = rsp_snapexport__pprof(c->names, &meta, &file)))
			ret = rsp_answer__add(out, "pprof", file.data, file.len);
	}
	rsp_buf__exit(&main);
	rsp_buf__exit(&file);
	return ret;
}

/*
 * --cgroup, --container: the process of interest must be inside (a
 * snapshot follows its chain wherever it leads, so the filter chooses the
 * process, not the threads shown). One sentence when it is not, or when
 * its cgroup is unknown.
 */
static int snap_cgroup(const struct rsp_request *req, const struct rsp_source *src, uint32_t pid,
		       uint64_t time, struct rsp_buf *err)
{
	const struct rsp_maps *m;
	const char *path;

	if (!req->cgroup && !req->container)
		return 0;
	if (!src->symbols || (src->offline && !(src->dump && src->dump->has_cgroups))) {
		rsp_buf__puts(err, "snapshot: --cgroup and --container need the cgroup of each "
				   "process, which this file does not carry (perf or an older "
				   "rspd wrote it); ask rspd, or dump again");
		return -EOPNOTSUPP;
	}
	m = rsp_symbolizer__maps(src->symbols);
	if (rsp_request__cgroup_keeps(req, m, pid, time))
		return 0;
	path = rsp_maps__cgroup(m, pid, time);
	if (!path)
		rsp_buf__printf(err,
				"snapshot: the cgroup of process %u is unknown, so it cannot be "
				"shown under --%s; leave the filter out",
				pid, req->cgroup ? "cgroup" : "container");
	else
		rsp_buf__printf(err,
				"snapshot: process %u is in cgroup %.300s, outside %s %.300s; "
				"leave the filter out or pick a process inside",
				pid, path, req->cgroup ? "--cgroup" : "--container",
				req->cgroup ? req->cgroup : req->container);
	return -ESRCH;
}

static int snap_run(const struct rsp_request *req, const struct rsp_source *src,
		    struct rsp_buf *out, struct rsp_buf *err)
{
	const struct snap_opts *o = req->opts;
	struct rsp_snapshot_opts so;
	struct rsp_spin spin;
	struct rsp_timeline_stats tst;
	struct rsp_snapshot *s = NULL;
	struct snapnames names;
	struct rsp_wsnap *snap;
	struct ctx c;
	int ret;

	if ((ret = rsp_source__check_pid(src, "snapshot", o->pid, err)))
		return ret;
	rsp_snapshot_opts__init(&so);
	so.pid = o->pid;
	so.fit_ns = o->fit_ns;
	so.merge_ns = o->merge_ns;
	so.sample_slack_ns = o->slack_ns;
	so.max_depth = o->max_depth;
	if (!o->speedscope[0] && !o->chrome[0] && !o->chrono[0])
		so.max_pieces = 0; /* no file shows the chronological view: keep no pieces */
	so.socks = src->socks;
	so.sym = src->symbols;
	so.fwake_ns = rsp_request__fwake_ns(req);
	so.spin = rsp_request__spin(req, &spin);
	rsp_request__window_range(req, src, &so.from, &so.to);
	if ((ret = snap_cgroup(req, src, (uint32_t)o->pid, so.to, err)))
		return ret;
	snap = rsp_pass__pin(src->window, so.from, so.to);
	if (!snap) {
		rsp_buf__puts(err, "snapshot: out of memory pinning the window");
		return -ENOMEM;
	}
	memset(&tst, 0, sizeof(tst));
	s = rsp_snapshot__from_window(src->schema, snap, src->ksyms, &so, &tst, err);
	if (!s) {
		ret = errno == ESRCH ? -ESRCH : -ENOMEM;
		rsp_wsnap__unpin(snap);
		return ret;
	}
	rsp_snapnames__init(&names, &src->access, src->symbols, src->ksyms, s);
	c = (struct ctx){req, o, src, s, rsp_snapshot__totals(s), &tst, &names, so.from, so.to};
	ret = render(&c, out);
	if (ret)
		rsp_buf__puts(err, "snapshot: out of memory rendering the answer");
	rsp_snapnames__exit(&names);
	/* stacks point into the pinned records: free before unpinning */
	rsp_snapshot__delete(s);
	rsp_wsnap__unpin(snap);
	return ret;
}

const struct rsp_command rsp_cmd_snapshot = {
	.name = "snapshot",
	.summary = "why a process took its time: the recursive chain of what it waited for",
	.usage = "usage: rspctl snapshot PID [--last DURATION | --from T --to T]\n"
		 "                       [--format text|json]\n"
		 "                       [--folded FILE] [--chrome-trace FILE]\n"
		 "                       [--speedscope FILE] [--max-slices N] [--chrono FILE]\n"
		 "                       [--pprof FILE]\n"
		 "                       [--fit DURATION] [--merge DURATION]\n"
		 "                       [--sample-slack DURATION] [--max-depth N] [--min PCT]\n"
		 "                       [--cgroup PATH] [--container ID]\n"
		 "                       [--no-annotations | --false-wakeup-run US]\n"
		 "                       [--spin-symbol NAME]...\n"
		 "\n"
		 "Starts from every run of PID's threads; for each sleep, follows what ended\n"
		 "it (a thread, an irq, a disk, a timer) and, recursively, what that waker\n"
		 "was waiting for; then says where the time went: a table of categories and\n"
		 "the chain as a tree of pseudostacks, heaviest first.\n"
		 "\n"
		 "  PID                the process (--pid PID works too)\n"
		 "  --last DURATION    the last DURATION of the window (default: all of it)\n"
		 "  --from T, --to T   only [T, T] of the window, in seconds as 'rspctl\n"
		 "                     status' shows it\n"
		 "  --format F         text or json (--json works too)\n"
		 "  --folded FILE      also write the consolidated flame view as folded\n"
		 "                     stacks (FlameGraph, speedscope), in microseconds\n"
		 "  --chrome-trace FILE  also write the process running view as a Chrome\n"
		 "                     trace (open it in ui.perfetto.dev)\n"
		 "  --speedscope FILE  also write speedscope's format (www.speedscope.app):\n"
		 "                     per thread the chronological flame view (evented),\n"
		 "                     and the consolidated flame view (sampled)\n"
		 "  --max-slices N     at most N chronological slices in the files: beyond,\n"
		 "                     the shallowest and longest are kept (100000)\n"
		 "  --chrono FILE      also write the chronological flame view as JSON:\n"
		 "                     PID's pseudostacks as nested slices on a time axis\n"
		 "                     (what rspctl report draws)\n"
		 "  --pprof FILE       also write the chain's time as a pprof profile (go\n"
		 "                     tool pprof, Pyroscope, Parca): sample types wait and\n"
		 "                     cpu nanoseconds, the consolidated view's stacks,\n"
		 "                     labels reason, waker, thread, process, cgroup,\n"
		 "                     category, depth\n"
		 "  --fit DURATION     a waker's run is a child of a sleep if it starts at\n"
		 "                     most this long before the sleep and ends at most\n"
		 "                     this long after it (100us)\n"
		 "  --merge DURATION   timed-out sleeps with one stack separated by less\n"
		 "                     running than this are one sleep (100us)\n"
		 "  --sample-slack DURATION  a sample this long after a run is its (20us)\n"
		 "  --max-depth N      follow wakers at most N threads deep (32)\n"
		 "  --min PCT          text: sum up what weighs under PCT% of the total (1)\n"
		 "  --cgroup PATH, --container ID  refuse PID unless it is in this cgroup\n"
		 "                     v2 subtree or container (the chain still follows\n"
		 "                     its wakers wherever they run)\n"
		 "  --false-wakeup-run US  a thread woken by another that runs at most US\n"
		 "                     microseconds (150) and sleeps again where it slept\n"
		 "                     (a futex: same user stack) was woken for\n"
		 "                     nothing: its two sleeps are one, ended by the later\n"
		 "                     waker, which the chain follows\n"
		 "  --spin-symbol NAME  a function that spins (repeatable): running time\n"
		 "                     whose samples are in it (the sampled function or\n"
		 "                     the first 3 user frames) is busy waiting (spin),\n"
		 "                     as in glibc's pthread_spin_lock and sched_yield\n"
		 "  --no-annotations   the raw view: every wakeup as recorded, no\n"
		 "                     spinning told apart\n"
		 "\n"
		 "Files are written by rspctl, where it runs, not by rspd.\n"
		 "\n"
		 "EXAMPLES\n"
		 "  rspctl snapshot 1234 --last 5s\n"
		 "  rspctl snapshot 1234 --json\n"
		 "  rspctl snapshot 1234 --folded out.folded && flamegraph.pl out.folded >f.svg\n"
		 "  rspctl snapshot 1234 --chrome-trace trace.json\n"
		 "  rspctl snapshot 1234 --last 2s --speedscope 1234.speedscope.json\n"
		 "  rspctl snapshot 1234 --last 5s --pprof off.pb.gz &&\n"
		 "    go tool pprof -top -tagfocus=reason=block_io off.pb.gz\n",
	.common = RSP_COPT_FORMAT | RSP_COPT_PID | RSP_COPT_LAST | RSP_COPT_RANGE |
		  RSP_COPT_CGROUP | RSP_COPT_FWAKE | RSP_COPT_SPIN,
	.opts = snap_options,
	.opts_size = sizeof(struct snap_opts),
	.init = snap_init,
	.opt = snap_opt,
	.check = snap_check,
	.run = snap_run,
	.output = snap_output,
};
