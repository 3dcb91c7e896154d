// SPDX-License-Identifier: LGPL-2.1
/*
 * The snapshot as a Chrome trace (the process running view), its
 * chronological tracks from snapshot_chrono.c; folded stacks are
 * snapshot_folded.c. Formats: internal/snapexport.h.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <rsp/symbols.h>
#include "internal/cgroupq.h"
#include "internal/snapexport.h"

#define MAX_TRACE_EVENTS 2000000

/* ---- Chrome trace ------------------------------------------------------- */

struct trace {
	struct snapnames *n;
	struct rsp_buf *out;
	uint64_t base, start, end;
	size_t events;
	bool chrono_cut; /* the pseudostack tracks do not hold every piece */
	int err;
};

static void jstr(struct trace *t, const char *s)
{
	t->err = t->err ? t->err : rsp_buf__add(t->out, "\"", 1);
	for (; *s && !t->err; s++) {
		unsigned char ch = (unsigned char)*s;

		if (ch == '"' || ch == '\\')
			t->err = rsp_buf__printf(t->out, "\\%c", ch);
		else if (ch < 0x20)
			t->err = rsp_buf__printf(t->out, "\\u%04x", ch);
		else
			t->err = rsp_buf__add(t->out, s, 1);
	}
	t->err = t->err ? t->err : rsp_buf__add(t->out, "\"", 1);
}

static double us(const struct trace *t, uint64_t ns)
{
	return (double)(ns - t->base) / 1e3;
}

/* Begin an event: the separator, then "{". */
static bool begin_event(struct trace *t)
{
	if (t->err || t->events >= MAX_TRACE_EVENTS)
		return false;
	t->err = rsp_buf__puts(t->out, t->events++ ? ",\n{" : "\n{");
	return !t->err;
}

static uint32_t pid_of(const struct snapnames *n, uint32_t tid)
{
	return rsp_redact__owner(&n->red, tid, 0);
}

/* The process's cgroup, container and namespaced pid, where known: its labels. */
static void cgroup_label(struct trace *t, uint32_t pid)
{
	struct rsp_symbolizer *symbols = t->n->symbols;
	struct rsp_buf line = RSP_BUF_INIT;

	if (symbols && rsp_cgroupq__line(rsp_symbolizer__maps(symbols), pid, t->end, &line) &&
	    !line.error && begin_event(t)) {
		rsp_buf__printf(t->out,
				"\"name\":\"process_labels\",\"ph\":\"M\",\"pid\":%u,"
				"\"args\":{\"labels\":",
				pid);
		jstr(t, line.data);
		rsp_buf__puts(t->out, "}}");
	}
	if (line.error && !t->err)
		t->err = line.error;
	rsp_buf__exit(&line);
}

static void names(struct trace *t, const uint32_t *tids, size_t nt)
{
	char buf[128];

	for (size_t i = 0; i < nt; i++) {
		uint32_t pid = pid_of(t->n, tids[i]);
		bool hidden = rsp_snapnames__hidden(t->n, tids[i], pid);
		const char *comm = rsp_snapnames__comm(t->n, tids[i]);

		if (begin_event(t)) {
			rsp_buf__printf(t->out,
					"\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":%u,"
					"\"tid\":%u,\"args\":{\"name\":",
					pid, tids[i]);
			if (hidden)
				snprintf(buf, sizeof(buf), "tid %u", tids[i]);
			else
				snprintf(buf, sizeof(buf), "%s %u", comm, tids[i]);
			jstr(t, buf);
			rsp_buf__puts(t->out, "}}");
		}
		if (tids[i] != pid && rsp_tlstore__find_thread(t->n->store, pid))
			continue; /* the main thread names the process */
		if (begin_event(t)) {
			rsp_buf__printf(t->out,
					"\"name\":\"process_name\",\"ph\":\"M\",\"pid\":%u,"
					"\"args\":{\"name\":",
					pid);
			jstr(t, rsp_snapnames__thread(t->n, pid, pid, buf, sizeof(buf)));
			rsp_buf__puts(t->out, "}}");
		}
		if (!hidden)
			cgroup_label(t, pid);
	}
}

static void slice_name(struct trace *t, const struct rsp_segment *g, uint32_t pid, char *buf,
		       size_t size, const char **cat)
{
	char fn[SNAP_FRAME_LEN];

	switch (g->kind) {
	case RSP_SEG_RUN:
		*cat = "run";
		snprintf(buf, size, "running");
		break;
	case RSP_SEG_RUNNABLE:
		*cat = "runnable";
		snprintf(buf, size, g->reason == RSP_SR_PREEMPT ? "preempted" : "runnable");
		break;
	case RSP_SEG_SLEEP:
		*cat = "sleep";
		rsp_snapnames__user_fn(t->n, g->tid, pid, g->start, g->stack, g->nr_stack, fn,
				       sizeof(fn));
		snprintf(buf, size, "sleep %s%s%s",
			 rsp_sleep_reason__name((enum rsp_sleep_reason)g->reason),
			 fn[0] ? ": " : "", fn);
		break;
	default:
		*cat = "unknown";
		snprintf(buf, size, "unknown");
		break;
	}
}

static void waker_arg(struct trace *t, const struct rsp_segment *g)
{
	struct rsp_snode x;
	char who[96];

	memset(&x, 0, sizeof(x));
	x.waker_kind = g->waker.kind;
	x.waker_id = g->waker.id;
	x.name = g->waker.name;
	rsp_buf__puts(t->out, ",\"waker\":");
	jstr(t, rsp_snapnames__waker(t->n, &x, who, sizeof(who)));
	if (g->flags & RSP_SEGF_WAKER_INFERRED)
		rsp_buf__puts(t->out, ",\"inferred\":true");
}

static void slices(struct trace *t, uint32_t tid)
{
	const struct rsp_tlthread *th = rsp_tlstore__find_thread(t->n->store, tid);
	uint32_t pid = pid_of(t->n, tid);
	char name[256];
	const char *cat;

	for (size_t i = 0; th && i < th->nr_segs && !t->err; i++) {
		const struct rsp_segment *g = &th->segs[i];
		uint64_t a = g->start > t->start ? g->start : t->start;
		uint64_t b = g->end < t->end ? g->end : t->end;

		if (b <= a)
			continue;
		slice_name(t, g, pid, name, sizeof(name), &cat);
		if (!begin_event(t))
			return;
		rsp_buf__puts(t->out, "\"name\":");
		jstr(t, name);
		rsp_buf__printf(t->out,
				",\"cat\":\"%s\",\"ph\":\"X\",\"ts\":%.3f,\"dur\":%.3f,\"pid\":%u,"
				"\"tid\":%u,\"args\":{\"reason\":\"%s\"",
				cat, us(t, a), (double)(b - a) / 1e3, pid, tid,
				rsp_sleep_reason__name((enum rsp_sleep_reason)g->reason));
		if (g->kind == RSP_SEG_SLEEP)
			waker_arg(t, g);
		rsp_buf__puts(t->out, "}}");
	}
}

static void flows(struct trace *t)
{
	size_t nl;
	const struct rsp_slink *l = rsp_snapshot__links(t->n->snap, &nl);

	for (size_t i = 0; i < nl && !t->err; i++) {
		if (l[i].time < t->start || l[i].to_time > t->end)
			continue;
		if (begin_event(t))
			rsp_buf__printf(t->out,
					"\"name\":\"wakeup\",\"cat\":\"wakeup\",\"ph\":\"s\","
					"\"id\":%zu,\"ts\":%.3f,\"pid\":%u,\"tid\":%u}",
					i + 1, us(t, l[i].time), pid_of(t->n, l[i].from),
					l[i].from);
		if (begin_event(t))
			rsp_buf__printf(
				t->out,
				"\"name\":\"wakeup\",\"cat\":\"wakeup\",\"ph\":\"f\","
				"\"bp\":\"e\",\"id\":%zu,\"ts\":%.3f,\"pid\":%u,\"tid\":%u}",
				i + 1, us(t, l[i].to_time), pid_of(t->n, l[i].to), l[i].to);
	}
}

/* One thread's track of chronological slices: its name. */
static void chrono_track_name(struct trace *t, uint32_t tid)
{
	char who[128], buf[160];

	if (!begin_event(t))
		return;
	rsp_buf__printf(t->out,
			"\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":%u,\"tid\":%u,"
			"\"args\":{\"name\":",
			pid_of(t->n, tid), RSP_CHRONO_TRACK + tid);
	snprintf(buf, sizeof(buf), "pseudostacks of %s",
		 rsp_snapnames__thread(t->n, tid, 0, who, sizeof(who)));
	jstr(t, buf);
	rsp_buf__puts(t->out, "}}");
}

/*
 * The chronological flame view: each thread of PID's nest on a track of
 * its own, the pieces as "X" slices that nest by time (Perfetto draws a
 * slice inside the one that encloses it on its track).
 */
static void chrono_tracks(struct trace *t)
{
	size_t nv, nk = 0;
	const struct rsp_spiece *v = rsp_snapshot__pieces(t->n->snap, &nv, &t->chrono_cut);
	uint32_t *keep = NULL, *root = rsp_chrono__root_tids(v, nv);
	char name[SNAP_FRAME_LEN + 256];

	if (!root || rsp_chrono__select(v, nv, RSP_CHRONO_TRACE_SLICES, &keep, &nk)) {
		t->err = t->err ? t->err : -ENOMEM;
		free(root);
		return;
	}
	for (size_t i = 0, nt = rsp_chrono__nest_tids(v, keep, nk, root); i < nt; i++)
		chrono_track_name(t, root[i]); /* root[] reused for the tids */
	free(root);
	root = rsp_chrono__root_tids(v, nv);
	if (!root) {
		t->err = t->err ? t->err : -ENOMEM;
		free(keep);
		return;
	}
	for (size_t i = 0; i < nk && begin_event(t); i++) {
		const struct rsp_spiece *p = &v[keep[i]];

		rsp_buf__puts(t->out, "\"name\":");
		jstr(t, rsp_chrono__name(t->n, p, name, sizeof(name)));
		rsp_buf__printf(t->out,
				",\"cat\":\"chrono\",\"ph\":\"X\",\"ts\":%.3f,\"dur\":%.3f,"
				"\"pid\":%u,\"tid\":%u,\"args\":{\"kind\":\"%s\",\"tid\":%u,"
				"\"depth\":%u}}",
				us(t, p->start), (double)(p->end - p->start) / 1e3,
				pid_of(t->n, root[keep[i]]), RSP_CHRONO_TRACK + root[keep[i]],
				rsp_chrono_kind__name(rsp_chrono__kind(p)), p->tid, p->depth);
	}
	t->chrono_cut = t->chrono_cut || nk < nv;
	free(keep);
	free(root);
}

int rsp_snapexport__chrome(struct snapnames *n, struct rsp_buf *out)
{
	const struct rsp_snapshot_totals *tot = rsp_snapshot__totals(n->snap);
	struct trace t = {
		.n = n, .out = out, .base = tot->start, .start = tot->start, .end = tot->end};
	size_t nt;
	const uint32_t *tids = rsp_snapshot__threads(n->snap, &nt);

	t.err = rsp_buf__puts(out, "{\"traceEvents\":[");
	names(&t, tids, nt);
	for (size_t i = 0; i < nt && !t.err; i++)
		slices(&t, tids[i]);
	chrono_tracks(&t);
	flows(&t);
	if (!t.err)
		t.err = rsp_buf__printf(
			out,
			"\n],\n\"displayTimeUnit\":\"ms\",\n\"otherData\":{\"pid\":%u,"
			"\"start_s\":%.9f,\"truncated\":%s}}\n",
			(unsigned)pid_of(
				n,
				rsp_snapshot__node(n->snap, rsp_snapshot__root(n->snap, 0))->tid),
			(double)tot->start / 1e9,
			t.events >= MAX_TRACE_EVENTS || t.chrono_cut ? "true" : "false");
	return t.err ? t.err : out->error; /* some appends above are not checked one by one */
}
