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
 *
 * Below them (from "snapshot PID@HOST"): the recursion across hosts
 * itself, which calls into the local waits above as they call back into
 * it; one algorithm, kept in one file so that the two halves are not a
 * circle of files.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <jansson.h>
#include <rsp/net.h>
#include <rsp/sleepclass.h>
#include <rsp/snapshot.h>
#include <rsp/timeline.h>
#include <rsp/tlstore.h>
#include <rsp/xhost.h>
#include "internal/fmt.h"
#include "internal/json.h"
#include "internal/merge.h"
#include "internal/snapnames.h"
#include "internal/u64map.h"
#include "internal/vec.h"

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
		snprintf(buf, size, "%s", rsp_snapnames__runnable(n->reason));
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

/* ---- snapshot PID@HOST: the recursion across hosts -------------------------------------- */

/*
 * What the answering threads on the other hosts did while PID waited for
 * their answers: for each of PID's operations on a matched connection, the
 * peer's interval from the request's arrival to the answer's send (both in
 * the peer host's own records: no clock offset needed inside it), and the
 * peer thread's segments in it by kind and sleep reason (block_io: its
 * disk). The recursion goes on: the peer's own network operations inside
 * that interval, on connections matched to further hosts, are followed
 * the same way (a proxy's wait for its upstream), up to --depth hosts
 * from PID; a thread already on the path (PID itself, answering its
 * server's request back) is not followed again, and counted.
 */
static int find_target(struct merge *m, struct rsp_buf *err)
{
	char *end;
	long idx = strtol(m->at, &end, 10);
	bool idx_given = false;
	int found = 0;

	if (end != m->at && !*end) {
		if (idx < 0 || idx >= m->nr) {
			rsp_buf__printf(err,
					"merge snapshot: host %ld is not one of the %d dumps "
					"(positions from 0)",
					idx, m->nr);
			return -EINVAL;
		}
		m->target = (int)idx;
		found = 1;
		idx_given = true;
	}
	/* a host name names one dump; two anywhere in the list are ambiguous */
	for (int k = 0, n = 0; !idx_given && k < m->nr; k++)
		if (!strcmp(m->h[k].di->hostname, m->at)) {
			if (!n++)
				m->target = k;
			found = n > 1 ? -1 : 1;
		}
	if (found != 1) {
		rsp_buf__printf(err,
				found ? "merge snapshot: several dumps are of host %s: name it by "
					"its position (PID@0, PID@1, ...)"
				      : "merge snapshot: no dump is of host %s; the hosts are the "
					"dumps' host names or positions from 0",
				m->at);
		return -EINVAL;
	}
	for (size_t i = 0; i < rsp_tlstore__nr_threads(m->h[m->target].store); i++)
		if (rsp_tlstore__thread(m->h[m->target].store, i)->tgid == (uint32_t)m->pid)
			return 0;
	rsp_buf__printf(err, "merge snapshot: process %ld has no thread in %s; check the pid",
			m->pid, m->h[m->target].path);
	return -ENOENT;
}

/* The node of thread @o->tid on @host under @parent: found, added, or NULL (full). */
static struct hop *hop_of(struct msnap *sn, int parent, int depth, uint32_t host,
			  const struct rsp_net_op *o)
{
	for (int i = 0; i < sn->nr_hops; i++)
		if (sn->hops[i].parent == parent && sn->hops[i].host == host &&
		    sn->hops[i].tid == o->tid && !sn->hops[i].local)
			return &sn->hops[i];
	if (sn->nr_hops == MAX_HOPS)
		return NULL;
	sn->hops[sn->nr_hops] = (struct hop){
		.parent = parent, .depth = depth, .host = host, .pid = o->tgid, .tid = o->tid};
	if (depth > sn->max_depth)
		sn->max_depth = depth;
	return &sn->hops[sn->nr_hops++];
}

/* Thread @tid of @host is PID itself or a node on the path from @parent up: a cycle. */
bool rsp_merge__on_path(const struct merge *m, const struct msnap *sn, int parent, uint32_t host,
			uint32_t tgid, uint32_t tid)
{
	if ((int)host == m->target && tgid == (uint32_t)m->pid)
		return true;
	for (int i = parent; i >= 0; i = sn->hops[i].parent)
		if (sn->hops[i].host == host && sn->hops[i].tid == tid)
			return true;
	return false;
}

static void thread_time(const struct mhost *h, uint32_t tid, uint64_t lo, uint64_t hi,
			struct hop *hp)
{
	const struct rsp_tlthread *t = rsp_tlstore__find_thread(h->store, tid);
	uint64_t covered = 0;
	size_t a = 0, b = t ? t->nr_segs : 0;

	while (a < b) {
		size_t mid = a + (b - a) / 2;

		if (t->segs[mid].end <= lo)
			a = mid + 1;
		else
			b = mid;
	}
	for (size_t i = a; t && i < t->nr_segs && t->segs[i].start < hi; i++) {
		const struct rsp_segment *g = &t->segs[i];
		uint64_t from = g->start > lo ? g->start : lo, to = g->end < hi ? g->end : hi;
		int c = g->kind == RSP_SEG_RUN				     ? CAT_RUN
			: g->kind == RSP_SEG_RUNNABLE			     ? CAT_RUNNABLE
			: g->kind == RSP_SEG_SLEEP && g->reason < RSP_SR__NR ? CAT_SLEEP + g->reason
									     : CAT_UNKNOWN;

		if (to <= from)
			continue;
		hp->cat[c] += to - from;
		covered += to - from;
	}
	hp->cat[CAT_UNKNOWN] += (hi - lo) - covered;
}

/*
 * The peer's operation that answers our operation @i: of those near the
 * guess @jc, the one whose request/response pair is consistent with the
 * offset @theta (clock_y - clock_x) the merge found. -1: none.
 */

/*
 * The peer's operation that answers our operation @i: of those near the
 * guess @jc, the one whose request/response pair is consistent with the
 * offset @theta (clock_y - clock_x) the merge found. -1: none.
 */
static long answer_of(const struct merge *m, const struct mconn *x, const struct mconn *y, size_t i,
		      long jc, int64_t theta)
{
	const struct mhost *hx = &m->h[x->host], *hy = &m->h[y->host];
	const struct rsp_net_op *o = hx->ops[x->at + i];
	int64_t t1 = rsp_merge__send_start(hx, o);

	for (long d = 0; t1 >= 0 && d <= 2 * ALIGN_SPAN; d++) {
		long j = jc + (d % 2 ? (d + 1) / 2 : -(d / 2)); /* jc, jc+1, jc-1, ... */
		int64_t t3;

		if (j < 1 || j >= (long)y->n)
			continue;
		t3 = rsp_merge__send_start(hy, hy->ops[y->at + (size_t)j]);
		if (t3 >= 0 && t3 - rsp_merge__mono(hx, o->end) <= theta &&
		    theta <= rsp_merge__mono(hy, hy->ops[y->at + (size_t)j - 1]->end) - t1)
			return j;
	}
	return -1;
}

long rsp_merge__answer(const struct merge *m, size_t xi, size_t yi, size_t i, long *next)
{
	const struct mconn *x = &m->conns[xi], *y = &m->conns[yi];
	/* See rsp_merge__add_pairs(): the peer's operation j answers ours i, j = i + k on side b.
	 */
	bool x_is_a = x->host < y->host;
	long k = x_is_a ? m->conn_k[xi] : m->conn_k[yi];
	const struct poff *po = &m->off[(x_is_a ? x->host : y->host) * (size_t)m->nr +
					(x_is_a ? y->host : x->host)];
	int64_t theta = x_is_a ? po->est : -po->est; /* clock_y - clock_x */
	long guess = x_is_a ? (long)i + k : (long)i - k + 1;
	long j = answer_of(m, x, y, i, *next >= 0 ? *next : guess, theta);

	if (j < 0 && *next >= 0)
		j = answer_of(m, x, y, i, guess, theta);
	/* After an answer found, the next one is likely the next operation. */
	*next = j >= 0 ? j + 1 : -1;
	return j;
}

/* The first operation of end @c starting at or after @lo. */
static size_t first_op(const struct mhost *h, const struct mconn *c, uint64_t lo)
{
	size_t a = 0, b = c->n;

	while (a < b) {
		size_t mid = a + (b - a) / 2;

		if (h->ops[c->at + mid]->start < lo)
			a = mid + 1;
		else
			b = mid;
	}
	return a;
}

/* End @yi's operation @j answered: the time from the request's arrival to the answer. */
static uint64_t answer_time(const struct merge *m, size_t yi, long j)
{
	const struct mconn *y = &m->conns[yi];
	const struct mhost *hy = &m->h[y->host];
	uint64_t lo = hy->ops[y->at + (size_t)j - 1]->end, hi = hy->ops[y->at + (size_t)j]->start;

	return hi > lo ? hi - lo : 0;
}

/*
 * Operation @i of end @xi (a thread at @parent, or PID), answered by the
 * peer end @yi's operation @j: the answering thread's time, and what it
 * waited for across hosts in turn.
 */
static void answered(const struct merge *m, struct msnap *sn, size_t xi, size_t yi, size_t i,
		     long j, int parent, int depth)
{
	const struct mconn *x = &m->conns[xi], *y = &m->conns[yi];
	const struct mhost *hx = &m->h[x->host], *hy = &m->h[y->host];
	const struct rsp_net_op *o = hx->ops[x->at + i], *a = hy->ops[y->at + (size_t)j];
	uint64_t lo = hy->ops[y->at + (size_t)j - 1]->end, hi = a->start;
	struct hop *hp;

	/*
	 * Not followed: a cycle, or hops[] full. At depth 0 the answer's
	 * service is still the answering side's, not the network's.
	 */
	if (rsp_merge__on_path(m, sn, parent, y->host, a->tgid, a->tid)) {
		sn->cycles++;
		if (!depth)
			sn->other_service += hi - lo;
		return;
	}
	hp = hop_of(sn, parent, depth + 1, y->host, a);
	if (!hp) {
		sn->other_ops++;
		if (!depth)
			sn->other_service += hi - lo;
		return;
	}
	hp->ops++;
	hp->asked += o->end - o->start;
	hp->service += hi - lo;
	if (!rsp_vec__reserve((void **)&hp->spans, &hp->cap_spans, hp->nr_spans + 1,
			      sizeof(*hp->spans)))
		hp->spans[hp->nr_spans++] = (struct rsp_snapshot_span){lo, hi};
	else
		hp->snap_errno = ENOMEM;
	thread_time(hy, a->tid, lo, hi, hp);
	rsp_merge__follow(m, sn, y->host, a->tgid, a->tid, lo, hi, (int)(hp - sn->hops), depth + 1);
}

static void keep_wait(struct mwait **v, size_t *n, size_t *cap, const struct rsp_net_op *o,
		      struct msnap *sn)
{
	if (rsp_vec__reserve((void **)v, cap, *n + 1, sizeof(**v)))
		sn->nomem = true;
	else
		(*v)[(*n)++] = (struct mwait){o->tid, o->start, o->end};
}

static int wait_cmp(const void *pa, const void *pb)
{
	const struct mwait *a = pa, *b = pb;

	if (a->tid != b->tid)
		return a->tid < b->tid ? -1 : 1;
	return a->from < b->from ? -1 : a->from > b->from;
}

/* Per thread the union of its operations' spans, summed over the threads. */
static uint64_t union_waits(struct mwait *v, size_t n)
{
	uint64_t sum = 0;

	qsort(v, n, sizeof(*v), wait_cmp);
	for (size_t i = 0, j; i < n; i = j) {
		uint64_t from = v[i].from, to = v[i].to;

		for (j = i + 1; j < n && v[j].tid == v[i].tid; j++) {
			if (v[j].from > to) {
				sum += to - from;
				from = v[j].from;
			}
			if (v[j].to > to)
				to = v[j].to;
		}
		sum += to - from;
	}
	return sum;
}

void rsp_merge__follow(const struct merge *m, struct msnap *sn, uint32_t host, uint32_t tgid,
		       uint32_t tid, uint64_t lo, uint64_t hi, int parent, int depth)
{
	uint32_t n = UINT32_MAX;

	rsp_u64map__get(&m->by_proc, (uint64_t)host << 32 | tgid, &n);
	for (; n != UINT32_MAX; n = m->procs[n].next) {
		uint32_t c = m->procs[n].conn;
		const struct mconn *x = &m->conns[c];
		const struct mhost *h = &m->h[host];
		int64_t p = rsp_xmatch__peer(m->xm, c, NULL);
		long next = -1;

		for (size_t i = first_op(h, x, lo); i < x->n && h->ops[x->at + i]->start < hi;
		     i++) {
			const struct rsp_net_op *o = h->ops[x->at + i];
			long j;

			/* the end's operations by this process (an end may change hands) */
			if (o->tgid != tgid || (tid && o->tid != tid))
				continue;
			if (!depth) {
				sn->ops++;
				keep_wait(&sn->waits, &sn->nr_waits, &sn->cap_waits, o, sn);
			}
			if (p < 0)
				continue;
			if (depth >= m->depth) {
				sn->cut++;
				continue;
			}
			j = rsp_merge__answer(m, c, (size_t)p, i, &next);
			if (j < 1 || !answer_time(m, (size_t)p, j))
				continue;
			if (!depth) {
				sn->matched_ops++;
				keep_wait(&sn->mwaits, &sn->nr_mwaits, &sn->cap_mwaits, o, sn);
			}
			answered(m, sn, c, (size_t)p, i, j, parent, depth);
		}
	}
}

/*
 * Across hosts first (each answering thread's own network waits), then
 * each answering thread's local waits followed into their wakers, which
 * may add hops (a local waker's network waits): those are expanded in
 * turn, as the loop reaches them.
 */
static void snap_collect(const struct merge *m, struct msnap *sn)
{
	memset(sn, 0, sizeof(*sn));
	rsp_merge__follow(m, sn, (uint32_t)m->target, (uint32_t)m->pid, 0, 0, UINT64_MAX, -1, 0);
	sn->wait = union_waits(sn->waits, sn->nr_waits);
	sn->matched_wait = union_waits(sn->mwaits, sn->nr_mwaits);
	for (int i = 0; i < sn->nr_hops; i++)
		if (!sn->hops[i].local)
			rsp_merge__local(m, sn, i);
}

static const char *cat_name(int c, char *buf, size_t n)
{
	if (c == CAT_RUN)
		return "running";
	if (c == CAT_RUNNABLE)
		return "runnable";
	if (c == CAT_UNKNOWN)
		return "unknown";
	snprintf(buf, n, "asleep: %s",
		 rsp_sleep_reason__name((enum rsp_sleep_reason)(c - CAT_SLEEP)));
	return buf;
}

static const char *cat_key(int c, char *buf, size_t n)
{
	if (c < CAT_SLEEP)
		return c == CAT_RUN ? "run" : c == CAT_RUNNABLE ? "runnable" : "unknown";
	snprintf(buf, n, "sleep_%s",
		 rsp_sleep_reason__name((enum rsp_sleep_reason)(c - CAT_SLEEP)));
	return buf;
}

void rsp_merge__hop_text(const struct merge *m, const struct msnap *sn, int i, struct rsp_buf *out)
{
	const struct hop *hp = &sn->hops[i];
	int ind = 2 * hp->depth;
	char buf[64];

	rsp_buf__printf(out,
			"%*s%spid %u tid %u (%s) on host %u (%s): %zu answers, %.6f s "
			"(for %.6f s of waits)\n",
			ind, "", hp->depth > 1 ? "-> " : "", hp->pid, hp->tid,
			rsp_merge__comm(&m->h[hp->host], hp->tid), hp->host,
			m->h[hp->host].di->hostname, hp->ops, (double)hp->service / 1e9,
			(double)hp->asked / 1e9);
	for (int c = 0; c < NR_CATS; c++)
		if (hp->cat[c])
			rsp_buf__printf(out, "%*s  %10.6f s %5.1f%%  %s\n", ind, "",
					(double)hp->cat[c] / 1e9,
					100.0 * (double)hp->cat[c] / (double)hp->service,
					cat_name(c, buf, sizeof(buf)));
	rsp_merge__local_text(m, sn, i, ind + 2, out);
	for (int k = 0; k < sn->nr_hops; k++)
		if (sn->hops[k].parent == i && !sn->hops[k].local)
			rsp_merge__hop_text(m, sn, k, out);
}

static uint64_t first_service(const struct msnap *sn)
{
	uint64_t service = 0;

	for (int i = 0; i < sn->nr_hops; i++)
		if (sn->hops[i].parent < 0)
			service += sn->hops[i].service;
	return service;
}

/* The matched wait that no answering thread's service covers: the network's. */
static uint64_t outside(const struct msnap *sn)
{
	uint64_t service = first_service(sn) + sn->other_service;

	return sn->matched_wait > service ? sn->matched_wait - service : 0;
}

static void snap_text(const struct merge *m, const struct msnap *sn, struct rsp_buf *out)
{
	const struct mhost *h = &m->h[m->target];

	rsp_buf__printf(out, "process %ld on host %d (%s): %.6f s of network wait, %zu TCP ops\n",
			m->pid, m->target, h->di->hostname, (double)sn->wait / 1e9, sn->ops);
	rsp_buf__printf(out,
			"%zu ops (%.6f s) answered across hosts; the answering threads' time\n"
			"from request to answer, inferred via the network (not kernel wakeups),\n"
			"and what they waited for across hosts in turn (-> , up to %d hosts):\n",
			sn->matched_ops, (double)sn->matched_wait / 1e9, m->depth);
	for (int i = 0; i < sn->nr_hops; i++)
		if (sn->hops[i].parent < 0)
			rsp_merge__hop_text(m, sn, i, out);
	if (sn->other_service)
		rsp_buf__printf(out, "  %10.6f s answered by threads not shown (below)\n",
				(double)sn->other_service / 1e9);
	rsp_buf__printf(out, "  %10.6f s of the wait outside the answering threads (network)\n",
			(double)outside(sn) / 1e9);
	if (sn->other_ops)
		rsp_buf__printf(out, "  %zu answers by more threads than shown (%d at most)\n",
				sn->other_ops, MAX_HOPS);
	if (sn->cycles)
		rsp_buf__printf(out,
				"  %zu answers by a thread already on the path: not followed "
				"again\n",
				sn->cycles);
	if (sn->cut)
		rsp_buf__printf(out,
				"  %zu network waits at depth %d not followed (--depth to go "
				"further)\n",
				sn->cut, m->depth);
}

json_t *rsp_merge__hops_json(const struct merge *m, const struct msnap *sn, int parent)
{
	json_t *hops = json_array();

	for (int i = 0; i < sn->nr_hops; i++) {
		const struct hop *hp = &sn->hops[i];
		json_t *o, *cats;
		char buf[64];

		json_t *local;

		if (hp->parent != parent || hp->local)
			continue;
		o = json_object();
		cats = json_object();
		rsp_json__set_u64(o, "host", hp->host);
		rsp_json__set_str(o, "hostname", m->h[hp->host].di->hostname);
		rsp_json__set_u64(o, "pid", hp->pid);
		rsp_json__set_u64(o, "tid", hp->tid);
		rsp_json__set_str(o, "comm", rsp_merge__comm(&m->h[hp->host], hp->tid));
		rsp_json__set_u64(o, "depth", (uint64_t)hp->depth);
		rsp_json__set_u64(o, "answers", hp->ops);
		rsp_json__set_secs(o, "asked_s", hp->asked);
		rsp_json__set_secs(o, "service_s", hp->service);
		for (int c = 0; c < NR_CATS; c++)
			rsp_json__set_secs(cats, cat_key(c, buf, sizeof(buf)), hp->cat[c]);
		json_object_set_new(o, "categories", cats);
		json_object_set_new(o, "answered_by", rsp_merge__hops_json(m, sn, i));
		local = rsp_merge__local_json(m, sn, i);
		if (local)
			json_object_set_new(o, "local_waits", local);
		else if (hp->snap_errno)
			rsp_json__set_str(o, "local_waits_error", rsp_merge__local_error(hp));
		if (hp->pieces_cut)
			json_object_set_new(o, "local_pieces_truncated", json_true());
		json_array_append_new(hops, o);
	}
	return hops;
}

static int snap_json(const struct merge *m, const struct msnap *sn, struct rsp_buf *out)
{
	json_t *root = json_object();

	rsp_json__set_u64(root, "pid", (uint64_t)m->pid);
	rsp_json__set_u64(root, "host", (uint64_t)m->target);
	rsp_json__set_u64(root, "depth", (uint64_t)m->depth);
	rsp_json__set_u64(root, "operations", sn->ops);
	rsp_json__set_secs(root, "network_wait_s", sn->wait);
	rsp_json__set_u64(root, "matched_operations", sn->matched_ops);
	rsp_json__set_secs(root, "matched_wait_s", sn->matched_wait);
	rsp_json__set_secs(root, "outside_s", outside(sn));
	rsp_json__set_u64(root, "other_operations", sn->other_ops);
	rsp_json__set_secs(root, "other_service_s", sn->other_service);
	rsp_json__set_u64(root, "cycles_not_followed", sn->cycles);
	rsp_json__set_u64(root, "beyond_depth", sn->cut);
	rsp_json__set_u64(root, "deepest", (uint64_t)sn->max_depth);
	json_object_set_new(root, "answered_by", rsp_merge__hops_json(m, sn, -1));
	json_object_set_new(root, "clock_offsets", rsp_merge__offsets_json(m));
	return rsp_json__emit(root, out);
}

int rsp_merge__snapshot(struct merge *m, struct rsp_buf *out, struct rsp_buf *err)
{
	struct msnap *sn;
	int ret = find_target(m, err);

	if (ret)
		return ret;
	sn = malloc(sizeof(*sn));
	if (!sn) {
		rsp_buf__puts(err, "merge: out of memory");
		return -ENOMEM;
	}
	snap_collect(m, sn);
	if (sn->nomem) {
		rsp_buf__puts(err, "merge: out of memory following the network waits");
		ret = -ENOMEM;
	} else if (m->json) {
		ret = snap_json(m, sn, out);
		if (ret)
			rsp_buf__puts(err, "merge: out of memory rendering the answer");
	} else {
		rsp_merge__offsets_text(m, out);
		snap_text(m, sn, out);
	}
	rsp_merge__snap_exit(sn);
	free(sn);
	return ret;
}
