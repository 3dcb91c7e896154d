// SPDX-License-Identifier: LGPL-2.1
/*
 * The snapshot as files: folded stacks (the consolidated flame view) and a
 * Chrome trace (the process running view). Formats: internal/snapexport.h.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <rsp/symbols.h>
#include "internal/cgroupq.h"
#include "internal/snapexport.h"

#define MAX_TRACE_EVENTS 2000000
#define STACK_FRAMES	 64

static const struct rsp_snode *node(const struct snapnames *n, uint32_t i)
{
	return rsp_snapshot__node(n->snap, i);
}

/* ---- folded ------------------------------------------------------------- */

struct fold {
	struct snapnames *n;
	struct rsp_buf *out;
	struct rsp_buf pre; /* the frames from the root, ';'-separated */
	int err;
};

/*
 * Append one frame to the prefix; ';' would split it, a newline end the line
 * (names in frames are escaped by rsp_fmt__name(): this is the last guard).
 */
static void push(struct fold *f, const char *frame, const char *suffix)
{
	size_t at;

	if (f->pre.len)
		f->err = f->err ? f->err : rsp_buf__add(&f->pre, ";", 1);
	at = f->pre.len;
	f->err = f->err ? f->err : rsp_buf__printf(&f->pre, "%s%s", frame, suffix);
	for (size_t i = at; !f->err && i < f->pre.len; i++)
		if (f->pre.data[i] == ';' || f->pre.data[i] == '\n')
			f->pre.data[i] = ':';
}

static void pop(struct fold *f, size_t len)
{
	f->pre.len = len;
	if (f->pre.data)
		f->pre.data[len] = '\0';
}

/* One line: the prefix, @marker as its last frame (cleaned as frames are), the weight. */
static void emit(struct fold *f, const char *marker, uint64_t ns)
{
	uint64_t us = (ns + 500) / 1000;
	size_t len = f->pre.len;

	if (!us || f->err)
		return;
	if (marker)
		push(f, marker, "");
	f->err = f->err ? f->err
			: rsp_buf__printf(f->out, "%s %llu\n", f->pre.data ? f->pre.data : "",
					  (unsigned long long)us);
	pop(f, len);
}

/* A callchain's frames, root first: user outermost to innermost, then kernel. */
static void push_stack(struct fold *f, const struct rsp_snode *x)
{
	struct snap_frame fr[STACK_FRAMES];
	int k = rsp_snapnames__frames(f->n, x->tid, x->tgid, x->first, x->stack, x->nr_stack, fr,
				      STACK_FRAMES);

	for (int i = k; i-- > 0;)
		push(f, fr[i].name, fr[i].kernel ? "_[k]" : "");
}

char *rsp_snapexport__marker(struct snapnames *n, const struct rsp_snode *x, int c, char *buf,
			     size_t size)
{
	char who[96];

	switch (c) {
	case RSP_CAT_UNDERSTOOD:
		snprintf(buf, size, "[running]");
		break;
	case RSP_CAT_NOT_SAMPLED:
		snprintf(buf, size, "[running, not sampled]");
		break;
	case RSP_CAT_SCHEDULER:
		snprintf(buf, size, "[runnable]");
		break;
	case RSP_CAT_INVOLUNTARY:
		snprintf(buf, size, "[preempted]");
		break;
	case RSP_CAT_IO_QUEUE:
		snprintf(buf, size, "[%s queue]", rsp_snapnames__waker(n, x, who, sizeof(who)));
		break;
	case RSP_CAT_OTHER_PATH:
		snprintf(buf, size, "[other path: %s]",
			 rsp_snapnames__waker(n, x, who, sizeof(who)));
		break;
	case RSP_CAT_MISC_KERNEL:
		snprintf(buf, size, "[not followed: %s]",
			 rsp_snapnames__waker(n, x, who, sizeof(who)));
		break;
	case RSP_CAT_UNKNOWN:
		snprintf(buf, size, "[unknown]");
		break;
	default:
		snprintf(buf, size, "[%s]",
			 x->kind == RSP_SN_SLEEP ? rsp_snapnames__waker(n, x, who, sizeof(who))
						 : "?");
		break;
	}
	return buf;
}

static void fold_node(struct fold *f, uint32_t i)
{
	const struct rsp_snode *x = node(f->n, i);
	size_t len = f->pre.len;
	char buf[256];

	switch (x->kind) {
	case RSP_SN_THREAD: {
		char who[128];

		rsp_snapnames__thread(f->n, x->tid, x->tgid, who, sizeof(who));
		if (x->parent == RSP_SNODE_NONE && x->path)
			snprintf(buf, sizeof(buf), "path %u: %s", x->path, who);
		else
			snprintf(buf, sizeof(buf), "%s", who);
		push(f, buf, "");
		break;
	}
	case RSP_SN_SAMPLE:
		push_stack(f, x);
		if (!f->pre.len || f->pre.len == len)
			push(f, "[unknown]", "");
		break;
	case RSP_SN_SLEEP:
		push_stack(f, x);
		snprintf(buf, sizeof(buf), "[sleep:%s]",
			 rsp_sleep_reason__name((enum rsp_sleep_reason)x->reason));
		push(f, buf, "");
		break;
	case RSP_SN_RUNNABLE:
		/* a frame: what preempted it, when followed, is above it */
		push(f, x->reason == RSP_SR_PREEMPT ? "[preempted]" : "[runnable]", "");
		break;
	default:
		break;
	}
	for (int c = 0; c < RSP_CAT__NR; c++) {
		if (!x->self_ns[c])
			continue;
		if (x->kind == RSP_SN_SAMPLE || x->kind == RSP_SN_RUNNABLE) {
			emit(f, NULL, x->self_ns[c]);
			continue;
		}
		rsp_snapexport__marker(f->n, x, c, buf, sizeof(buf));
		emit(f, buf, x->self_ns[c]);
	}
	for (uint32_t k = x->first_child; k != RSP_SNODE_NONE; k = node(f->n, k)->next_sibling)
		fold_node(f, k);
	pop(f, len);
}

int rsp_snapexport__folded(struct snapnames *n, struct rsp_buf *out)
{
	struct fold f = {.n = n, .out = out};

	for (size_t i = 0; i < rsp_snapshot__nr_roots(n->snap); i++)
		fold_node(&f, rsp_snapshot__root(n->snap, i));
	rsp_buf__exit(&f.pre);
	return f.err;
}

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
