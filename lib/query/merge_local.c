// SPDX-License-Identifier: LGPL-2.1
/*
 * `rspctl merge ... snapshot PID@HOST`: what an answering thread waited
 * for on its own host. Its time from each request's arrival to its answer
 * (the hop's spans) is explained by the recursive snapshot (rsp/snapshot.h,
 * the code behind `rspctl analyze DUMP snapshot PID`, here with that one
 * thread as the root and over those spans only): a sleep a local thread
 * ended (the worker it handed the request to, a lock holder) is followed
 * into that thread's own time over it, and so on. Where such a local
 * waker itself waited on the network (its network operations in the
 * stretch it was explained over, found from the snapshot's chronological
 * pieces of the root's path), they are followed across hosts again (rsp_merge__follow()), as hops
 * under a "local" hop naming the waker, within the same --depth and cycle guard. Only the root's
 * own path has pieces: a waker on another control path (one that did not fit the sleep) is named,
 * not followed across hosts.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <jansson.h>
#include <rsp/snapshot.h>
#include <rsp/timeline.h>
#include "internal/fmt.h"
#include "internal/json.h"
#include "internal/merge.h"
#include "internal/u64map.h"

/* Bounds of each hop's snapshot: 64 hops hold at most ~100 MB between them. */
#define LOCAL_NODES  10000
#define LOCAL_PIECES 50000
#define LOCAL_DEPTH  16
/* Nodes under this share of the hop's time are left out of the answer (per mille). */
#define LOCAL_FLOOR_PM 5

static int cmp_span(const void *a, const void *b)
{
	const struct rsp_snapshot_span *x = a, *y = b;

	return x->from < y->from ? -1 : x->from > y->from;
}

/* The snapshot wants spans sorted and disjoint: an event loop's answers may overlap. */
static size_t merge_spans(struct rsp_snapshot_span *v, size_t n)
{
	size_t k = 0;

	qsort(v, n, sizeof(*v), cmp_span);
	for (size_t i = 0; i < n; i++) {
		if (k && v[i].from <= v[k - 1].to) {
			if (v[i].to > v[k - 1].to)
				v[k - 1].to = v[i].to;
			continue;
		}
		v[k++] = v[i];
	}
	return k;
}

/* The local hop of waker @tid under hop @i: found, added, or NULL (hops[] full). */
static int local_hop(struct msnap *sn, int i, uint32_t tgid, uint32_t tid)
{
	const struct hop *p = &sn->hops[i];

	for (int k = 0; k < sn->nr_hops; k++)
		if (sn->hops[k].local && sn->hops[k].parent == i && sn->hops[k].tid == tid)
			return k;
	if (sn->nr_hops == MAX_HOPS)
		return -1;
	sn->hops[sn->nr_hops] = (struct hop){.parent = i,
					     .depth = p->depth,
					     .host = p->host,
					     .pid = tgid,
					     .tid = tid,
					     .local = true};
	return sn->nr_hops++;
}

/* The stretch the waker of piece @k was explained over: the piece of another thread above it. */
static uint32_t explained_by(const struct rsp_spiece *pc, uint32_t k)
{
	uint32_t q = k;

	while (pc[q].parent != RSP_SNODE_NONE && pc[pc[q].parent].tid == pc[k].tid)
		q = pc[q].parent;
	return pc[q].parent;
}

/*
 * The local wakers' network operations in the stretches they were
 * explained over (each waker's pieces below the root's: the stretch is the
 * piece of another thread above them), followed across hosts. By their
 * operations, not their sleeps' reason: an event loop waits in epoll
 * ("poll") for its sockets. Each (waker, stretch) once: a waker's pieces
 * under one stretch interleave with those of the wakers it waited for.
 */
static void across_again(const struct merge *m, struct msnap *sn, int i)
{
	size_t n = 0;
	const struct rsp_spiece *pc =
		rsp_snapshot__pieces(sn->hops[i].snap, &n, &sn->hops[i].pieces_cut);
	struct rsp_u64map seen;
	uint32_t one;

	rsp_u64map__init(&seen);
	for (size_t k = 0; k < n; k++) {
		const struct rsp_spiece *p = &pc[k];
		uint32_t above;
		int lh;

		if (!p->depth || p->tid == sn->hops[i].tid || !p->tgid)
			continue;
		above = explained_by(pc, (uint32_t)k);
		if (above == RSP_SNODE_NONE ||
		    !rsp_u64map__get(&seen, (uint64_t)above << 32 | p->tid, &one))
			continue; /* that stretch of this waker followed already */
		if (rsp_u64map__put(&seen, (uint64_t)above << 32 | p->tid, 1)) {
			sn->hops[i].snap_errno = ENOMEM;
			break;
		}
		if (rsp_merge__on_path(m, sn, i, sn->hops[i].host, p->tgid, p->tid)) {
			sn->cycles++;
			continue;
		}
		if (rsp_u64map__get(&m->by_proc, (uint64_t)sn->hops[i].host << 32 | p->tgid, &one))
			continue; /* its process has no TCP end with a known 4-tuple */
		lh = local_hop(sn, i, p->tgid, p->tid);
		if (lh < 0) {
			sn->other_ops++;
			continue;
		}
		rsp_merge__follow(m, sn, sn->hops[i].host, p->tgid, p->tid, pc[above].start,
				  pc[above].end, lh, sn->hops[i].depth);
		if (lh == sn->nr_hops - 1)
			sn->nr_hops--; /* an anchor with nothing under it (no hop added after) */
	}
	rsp_u64map__exit(&seen);
}

void rsp_merge__local(const struct merge *m, struct msnap *sn, int i)
{
	struct hop *hp = &sn->hops[i];
	struct rsp_snapshot_opts o;
	struct rsp_buf err = {0};

	if (!hp->nr_spans || hp->snap_errno)
		return;
	hp->nr_spans = merge_spans(hp->spans, hp->nr_spans);
	rsp_snapshot_opts__init(&o);
	o.pid = hp->pid;
	o.tid = hp->tid;
	o.from = hp->spans[0].from;
	o.to = hp->spans[hp->nr_spans - 1].to;
	o.spans = hp->spans;
	o.nr_spans = hp->nr_spans;
	o.max_nodes = LOCAL_NODES;
	o.max_pieces = LOCAL_PIECES;
	o.max_depth = LOCAL_DEPTH;
	hp->snap = rsp_snapshot__new(m->h[hp->host].store, NULL, &o, &err);
	if (!hp->snap)
		hp->snap_errno = errno ? errno : ENOMEM;
	rsp_buf__exit(&err);
	if (hp->snap)
		across_again(m, sn, i);
}

void rsp_merge__snap_exit(struct msnap *sn)
{
	for (int i = 0; i < sn->nr_hops; i++) {
		rsp_snapshot__delete(sn->hops[i].snap);
		free(sn->hops[i].spans);
	}
	free(sn->waits);
	free(sn->mwaits);
}

/* ---- the answer ----------------------------------------------------------------------- */

struct lctx {
	const struct merge *m;
	const struct msnap *sn;
	int hop;
	uint64_t floor;
	uint64_t shown; /* the local hops whose hops across hosts are shown (bit per hop) */
};

/* What ended sleep @n: a thread of the host, the disk, an irq, a timer. */
static const char *waker_label(const struct lctx *c, const struct rsp_snode *n, char *buf,
			       size_t size)
{
	const struct mhost *h = &c->m->h[c->sn->hops[c->hop].host];
	char comm[RSP_FMT_NAME_MAX];

	switch (n->waker_kind) {
	case RSP_WAKER_THREAD:
		snprintf(buf, size, "tid %u (%s)", n->waker_id,
			 rsp_fmt__name(comm, sizeof(comm), rsp_merge__comm(h, n->waker_id)));
		break;
	case RSP_WAKER_IRQ:
		snprintf(buf, size, "irq %u (%s)", n->waker_id, n->name ? n->name : "?");
		break;
	case RSP_WAKER_SOFTIRQ:
		snprintf(buf, size, "softirq %u", n->waker_id);
		break;
	case RSP_WAKER_TIMER:
		snprintf(buf, size, "a timer");
		break;
	case RSP_WAKER_DEVICE: /* dev_t as the block tracepoints give it: major << 20 */
		snprintf(buf, size, "disk %u:%u", n->waker_id >> 20, n->waker_id & 0xfffff);
		break;
	default:
		snprintf(buf, size, "unknown");
	}
	return buf;
}

static const char *node_label(const struct lctx *c, const struct rsp_snode *n, char *buf,
			      size_t size)
{
	const struct mhost *h = &c->m->h[c->sn->hops[c->hop].host];
	char w[96], comm[RSP_FMT_NAME_MAX];

	switch (n->kind) {
	case RSP_SN_THREAD:
		snprintf(buf, size, "tid %u (%s) of pid %u", n->tid,
			 rsp_fmt__name(comm, sizeof(comm), rsp_merge__comm(h, n->tid)), n->tgid);
		break;
	case RSP_SN_RUN:
		snprintf(buf, size, "running");
		break;
	case RSP_SN_RUNNABLE:
		snprintf(buf, size,
			 n->reason == RSP_SR_PREEMPT ? "runnable (preempted)" : "runnable");
		break;
	case RSP_SN_SLEEP:
		snprintf(buf, size, "asleep: %s, woken by %s",
			 rsp_sleep_reason__name((enum rsp_sleep_reason)n->reason),
			 waker_label(c, n, w, sizeof(w)));
		break;
	default:
		snprintf(buf, size, n->kind == RSP_SN_SAMPLE ? "sampled stack" : "unknown");
	}
	return buf;
}

/* The local hop of hop @c->hop for thread @tid, or -1. */
static int local_of(const struct lctx *c, uint32_t tid)
{
	for (int k = 0; k < c->sn->nr_hops; k++)
		if (c->sn->hops[k].local && c->sn->hops[k].parent == c->hop &&
		    c->sn->hops[k].tid == tid)
			return k;
	return -1;
}

/* Thread @tid's hops across hosts, once (its first node shown); -1 when none or shown. */
static int take_local(struct lctx *c, const struct rsp_snode *n)
{
	int k = n->kind == RSP_SN_THREAD && n->depth ? local_of(c, n->tid) : -1;

	if (k < 0 || (c->shown >> k & 1))
		return -1;
	c->shown |= 1ull << k;
	return k;
}

static void text_node(struct lctx *c, uint32_t i, int ind, struct rsp_buf *out)
{
	const struct rsp_snapshot *s = c->sn->hops[c->hop].snap;
	const struct rsp_snode *n = rsp_snapshot__node(s, i);
	double service = (double)c->sn->hops[c->hop].service;
	char buf[160];
	int k;

	rsp_buf__printf(out, "%*s%10.6f s %5.1f%%  %s\n", ind, "", (double)n->total_ns / 1e9,
			100.0 * (double)n->total_ns / service, node_label(c, n, buf, sizeof(buf)));
	for (uint32_t ch = n->first_child; ch != RSP_SNODE_NONE;
	     ch = rsp_snapshot__node(s, ch)->next_sibling)
		if (rsp_snapshot__node(s, ch)->total_ns >= c->floor &&
		    rsp_snapshot__node(s, ch)->kind != RSP_SN_SAMPLE)
			text_node(c, ch, ind + 2, out);
	if ((k = take_local(c, n)) >= 0)
		for (int h = 0; h < c->sn->nr_hops; h++)
			if (c->sn->hops[h].parent == k)
				rsp_merge__hop_text(c->m, c->sn, h, out);
}

const char *rsp_merge__local_error(const struct hop *hp)
{
	return hp->snap_errno == ESRCH ? "no records of it in its intervals"
				       : strerror(hp->snap_errno);
}

void rsp_merge__local_text(const struct merge *m, const struct msnap *sn, int i, int ind,
			   struct rsp_buf *out)
{
	const struct hop *hp = &sn->hops[i];
	struct lctx c = {m, sn, i, hp->service * LOCAL_FLOOR_PM / 1000, 0};
	const struct rsp_snode *root;
	bool head = false;

	if (!hp->snap) {
		if (hp->snap_errno)
			rsp_buf__printf(out, "%*s(its local waits not followed: %s)\n", ind, "",
					rsp_merge__local_error(hp));
		return;
	}
	root = rsp_snapshot__node(hp->snap, rsp_snapshot__root(hp->snap, 0));
	/* The root's sleeps that a local thread's time explains (a followed waker). */
	for (uint32_t ch = root->first_child; ch != RSP_SNODE_NONE;
	     ch = rsp_snapshot__node(hp->snap, ch)->next_sibling) {
		const struct rsp_snode *n = rsp_snapshot__node(hp->snap, ch);

		if (n->kind != RSP_SN_SLEEP || n->first_child == RSP_SNODE_NONE ||
		    n->total_ns < c.floor)
			continue;
		if (!head)
			rsp_buf__printf(out,
					"%*sits waits on host %u followed into their wakers "
					"(as analyze's snapshot):\n",
					ind, "", hp->host);
		head = true;
		text_node(&c, ch, ind + 2, out);
	}
	/* Local wakers with hops across hosts whose node fell under the floor. */
	for (int k = 0; k < sn->nr_hops; k++)
		if (sn->hops[k].local && sn->hops[k].parent == i && !(c.shown >> k & 1)) {
			rsp_buf__printf(out, "%*stid %u (%s), a local waker (under %.1f%%):\n",
					ind + 2, "", sn->hops[k].tid,
					rsp_merge__comm(&m->h[hp->host], sn->hops[k].tid),
					LOCAL_FLOOR_PM / 10.0);
			for (int h = 0; h < sn->nr_hops; h++)
				if (sn->hops[h].parent == k)
					rsp_merge__hop_text(m, sn, h, out);
		}
	if (rsp_snapshot__totals(hp->snap)->truncated)
		rsp_buf__printf(out,
				"%*s(its local chain was cut at its bounds: %d threads deep, "
				"%d nodes)\n",
				ind, "", LOCAL_DEPTH, LOCAL_NODES);
	if (hp->pieces_cut)
		rsp_buf__printf(out,
				"%*s(local wakers past the first %d pieces not followed across "
				"hosts)\n",
				ind, "", LOCAL_PIECES);
}

static json_t *json_node(struct lctx *c, uint32_t i);

static json_t *json_children(struct lctx *c, const struct rsp_snode *n)
{
	const struct rsp_snapshot *s = c->sn->hops[c->hop].snap;
	json_t *a = json_array();

	for (uint32_t ch = n->first_child; ch != RSP_SNODE_NONE;
	     ch = rsp_snapshot__node(s, ch)->next_sibling)
		if (rsp_snapshot__node(s, ch)->total_ns >= c->floor &&
		    rsp_snapshot__node(s, ch)->kind != RSP_SN_SAMPLE)
			json_array_append_new(a, json_node(c, ch));
	return a;
}

static const char *const kind_names[] = {"thread", "run", "sample", "runnable", "sleep", "unknown"};

static json_t *json_node(struct lctx *c, uint32_t i)
{
	const struct rsp_snode *n = rsp_snapshot__node(c->sn->hops[c->hop].snap, i);
	const struct mhost *h = &c->m->h[c->sn->hops[c->hop].host];
	json_t *o = json_object(), *cats = json_object();
	char buf[96];
	int k;

	rsp_json__set_str(o, "kind", n->kind < 6 ? kind_names[n->kind] : "?");
	rsp_json__set_u64(o, "tid", n->tid);
	rsp_json__set_u64(o, "pid", n->tgid);
	rsp_json__set_str(o, "comm", rsp_merge__comm(h, n->tid));
	if (n->kind == RSP_SN_SLEEP) {
		rsp_json__set_str(o, "reason",
				  rsp_sleep_reason__name((enum rsp_sleep_reason)n->reason));
		rsp_json__set_str(o, "waker", waker_label(c, n, buf, sizeof(buf)));
		if (n->waker_kind == RSP_WAKER_THREAD)
			rsp_json__set_u64(o, "waker_tid", n->waker_id);
	}
	rsp_json__set_u64(o, "count", n->count);
	rsp_json__set_secs(o, "total_s", n->total_ns);
	for (int ct = 0; ct < RSP_CAT__NR; ct++)
		if (n->self_ns[ct])
			rsp_json__set_secs(cats, rsp_cat__name((enum rsp_cat)ct), n->self_ns[ct]);
	json_object_set_new(o, "categories", cats);
	json_object_set_new(o, "children", json_children(c, n));
	if ((k = take_local(c, n)) >= 0)
		json_object_set_new(o, "answered_by", rsp_merge__hops_json(c->m, c->sn, k));
	return o;
}

json_t *rsp_merge__local_json(const struct merge *m, const struct msnap *sn, int i)
{
	const struct hop *hp = &sn->hops[i];
	struct lctx c = {m, sn, i, hp->service * LOCAL_FLOOR_PM / 1000, 0};

	json_t *a;

	if (!hp->snap)
		return NULL;
	a = json_children(&c, rsp_snapshot__node(hp->snap, rsp_snapshot__root(hp->snap, 0)));
	/* Local wakers with hops across hosts whose node fell under the floor. */
	for (int k = 0; k < sn->nr_hops; k++)
		if (sn->hops[k].local && sn->hops[k].parent == i && !(c.shown >> k & 1)) {
			json_t *o = json_object();

			rsp_json__set_str(o, "kind", "thread");
			rsp_json__set_u64(o, "tid", sn->hops[k].tid);
			rsp_json__set_u64(o, "pid", sn->hops[k].pid);
			rsp_json__set_str(o, "comm",
					  rsp_merge__comm(&m->h[hp->host], sn->hops[k].tid));
			json_object_set_new(o, "under_floor", json_true());
			json_object_set_new(o, "children", json_array());
			json_object_set_new(o, "answered_by", rsp_merge__hops_json(m, sn, k));
			json_array_append_new(a, o);
		}
	return a;
}
