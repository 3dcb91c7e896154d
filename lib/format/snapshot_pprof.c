// SPDX-License-Identifier: LGPL-2.1
/*
 * The snapshot as a pprof profile: the consolidated pseudostack tree (the
 * folded stacks' walk, frames as locations) with the chain's time as
 * wait and cpu nanoseconds and rsp's wait reasons as labels. Format and
 * labels: internal/snapexport.h.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <rsp/maps.h>
#include <rsp/symbols.h>
#include "internal/pprof.h"
#include "internal/snapexport.h"
#include "internal/vec.h"

#define STACK_FRAMES 64

struct spp {
	struct snapnames *n;
	struct rsp_pprof w;
	struct rsp_pprof_bids bids;
	const struct rsp_maps *maps; /* NULL: no process model (no cgroups) */
	uint64_t *stk;		     /* location ids, root first */
	size_t len, cap;
	uint64_t *leaf_first; /* the same, reversed for a sample (room for cap) */
	size_t cap_leaf;
	/* the wait of the chain's root (PID's thread) that the time is part of */
	char reason[32], waker[128];
	int err;
};

static void push(struct spp *p, uint64_t loc)
{
	if (!p->err && rsp_vec__reserve((void **)&p->stk, &p->cap, p->len + 1, sizeof(*p->stk)))
		p->err = -ENOMEM;
	if (!p->err)
		p->stk[p->len++] = loc;
}

/* A frame of rsp's own: a thread, a marker. */
static void push_name(struct spp *p, const char *name)
{
	push(p, rsp_pprof__location(&p->w, &(struct rsp_pprof_frame){.function = name}));
}

/* A callchain's frames, root first (snapnames gives them innermost first). */
static void push_stack(struct spp *p, const struct rsp_snode *x)
{
	struct snap_frame fr[STACK_FRAMES];
	int k = rsp_snapnames__frames(p->n, x->tid, x->tgid, x->first, x->stack, x->nr_stack, fr,
				      STACK_FRAMES);
	uint32_t pid = rsp_redact__owner(&p->n->red, x->tid, x->tgid);

	for (int i = k; i-- > 0;) {
		struct rsp_pprof_frame f = {
			.function = fr[i].name, .object = fr[i].object, .addr = fr[i].addr};

		rsp_pprof_bids__frame(&p->bids, pid, x->first, !fr[i].kernel, &f);
		push(p, rsp_pprof__location(&p->w, &f));
	}
}

static bool running(int c)
{
	return c == RSP_CAT_UNDERSTOOD || c == RSP_CAT_SPIN || c == RSP_CAT_NOT_SAMPLED;
}

/* One sample: the stack so far, leaf first, with node @x's labels. */
static void emit(struct spp *p, const struct rsp_snode *x, int c, unsigned tdepth)
{
	uint64_t ns = x->self_ns[c];
	int64_t v[2] = {tdepth || !running(c) ? (int64_t)ns : 0, running(c) ? (int64_t)ns : 0};
	uint32_t pid = rsp_redact__owner(&p->n->red, x->tid, x->tgid);
	bool hidden = rsp_snapnames__hidden(p->n, x->tid, x->tgid);
	struct rsp_pprof_label lab[7];
	char thread[128], process[128];
	const char *cg = !hidden && p->maps ? rsp_maps__cgroup(p->maps, pid, x->first) : NULL;
	size_t nl = 0;

	if (rsp_vec__reserve((void **)&p->leaf_first, &p->cap_leaf, p->len + 1,
			     sizeof(*p->leaf_first))) {
		p->err = -ENOMEM;
		return;
	}
	for (size_t i = 0; i < p->len; i++)
		p->leaf_first[i] = p->stk[p->len - 1 - i];
	rsp_snapnames__thread(p->n, x->tid, x->tgid, thread, sizeof(thread));
	rsp_snapnames__thread(p->n, pid, pid, process, sizeof(process));
	lab[nl++] = (struct rsp_pprof_label){.key = "reason", .str = p->reason};
	if (p->waker[0])
		lab[nl++] = (struct rsp_pprof_label){.key = "waker", .str = p->waker};
	lab[nl++] = (struct rsp_pprof_label){.key = "thread", .str = thread};
	lab[nl++] = (struct rsp_pprof_label){.key = "process", .str = process};
	if (cg)
		lab[nl++] = (struct rsp_pprof_label){.key = "cgroup", .str = cg};
	lab[nl++] = (struct rsp_pprof_label){.key = "category", .str = rsp_cat__name(c)};
	lab[nl++] = (struct rsp_pprof_label){.key = "depth", .num = tdepth, .unit = "threads"};
	rsp_pprof__sample(&p->w, p->leaf_first, p->len, v, lab, nl);
}

/* A node of depth 0 below a root thread: the root's wait (or its running), for the labels. */
static void root_wait(struct spp *p, const struct rsp_snode *x)
{
	p->waker[0] = '\0';
	switch (x->kind) {
	case RSP_SN_SLEEP:
		snprintf(p->reason, sizeof(p->reason), "%s",
			 rsp_sleep_reason__name((enum rsp_sleep_reason)x->reason));
		rsp_snapnames__waker(p->n, x, p->waker, sizeof(p->waker));
		break;
	case RSP_SN_RUNNABLE:
		snprintf(p->reason, sizeof(p->reason), "%s",
			 x->reason == RSP_SR_PREEMPT ? "preempted" : "runnable");
		break;
	case RSP_SN_UNKNOWN:
		snprintf(p->reason, sizeof(p->reason), "unknown");
		break;
	default:
		snprintf(p->reason, sizeof(p->reason), "running");
		break;
	}
}

/* The node's own frames (the folded stacks' walk: snapshot_export.c's fold_node()). */
static void node_frames(struct spp *p, const struct rsp_snode *x)
{
	char buf[256], who[128];
	size_t len = p->len;

	switch (x->kind) {
	case RSP_SN_THREAD:
		rsp_snapnames__thread(p->n, x->tid, x->tgid, who, sizeof(who));
		if (x->parent == RSP_SNODE_NONE && x->path)
			snprintf(buf, sizeof(buf), "path %u: %s", x->path, who);
		else
			snprintf(buf, sizeof(buf), "%s", who);
		push_name(p, buf);
		break;
	case RSP_SN_SAMPLE:
		push_stack(p, x);
		if (p->len == len)
			push_name(p, "[unknown]");
		break;
	case RSP_SN_SLEEP:
		push_stack(p, x);
		snprintf(buf, sizeof(buf), "[sleep:%s]",
			 rsp_sleep_reason__name((enum rsp_sleep_reason)x->reason));
		push_name(p, buf);
		break;
	case RSP_SN_RUNNABLE:
		push_name(p, x->reason == RSP_SR_PREEMPT ? "[preempted]" : "[runnable]");
		break;
	default:
		break;
	}
}

static void walk(struct spp *p, uint32_t i, unsigned tdepth)
{
	const struct rsp_snode *x = rsp_snapshot__node(p->n->snap, i);
	size_t len = p->len;
	char reason[sizeof(p->reason)], waker[sizeof(p->waker)], buf[256];

	memcpy(reason, p->reason, sizeof(reason));
	memcpy(waker, p->waker, sizeof(waker));
	if (x->kind == RSP_SN_THREAD)
		tdepth = x->parent == RSP_SNODE_NONE ? 0 : tdepth + 1;
	else if (x->parent != RSP_SNODE_NONE &&
		 rsp_snapshot__node(p->n->snap, x->parent)->parent == RSP_SNODE_NONE)
		root_wait(p, x);
	node_frames(p, x);
	for (int c = 0; c < RSP_CAT__NR && !p->err; c++) {
		size_t at = p->len;

		if (!x->self_ns[c])
			continue;
		if (x->kind != RSP_SN_SAMPLE && x->kind != RSP_SN_RUNNABLE)
			push_name(p, rsp_snapexport__marker(p->n, x, c, buf, sizeof(buf)));
		emit(p, x, c, tdepth);
		p->len = at;
	}
	for (uint32_t k = x->first_child; k != RSP_SNODE_NONE && !p->err;
	     k = rsp_snapshot__node(p->n->snap, k)->next_sibling)
		walk(p, k, tdepth);
	p->len = len;
	memcpy(p->reason, reason, sizeof(reason));
	memcpy(p->waker, waker, sizeof(waker));
}

int rsp_snapexport__pprof(struct snapnames *n, struct rsp_pprof_meta *meta, struct rsp_buf *out)
{
	static const struct rsp_pprof_type types[2] = {{"wait", "nanoseconds"},
						       {"cpu", "nanoseconds"}};
	struct spp p = {.n = n};
	int ret;

	p.maps = n->symbols ? rsp_symbolizer__maps(n->symbols) : NULL;
	rsp_pprof__init(&p.w, types, 2);
	rsp_pprof_bids__init(&p.bids, p.maps);
	for (size_t i = 0; i < rsp_snapshot__nr_roots(n->snap) && !p.err; i++)
		walk(&p, rsp_snapshot__root(n->snap, i), 0);
	meta->default_type = "wait";
	if (p.err || p.bids.err) {
		rsp_pprof__exit(&p.w);
		ret = p.err ? p.err : p.bids.err;
	} else {
		ret = rsp_pprof__finish(&p.w, meta, out);
	}
	rsp_pprof_bids__exit(&p.bids);
	free(p.stk);
	free(p.leaf_first);
	return ret;
}
