// SPDX-License-Identifier: LGPL-2.1
/*
 * `rspctl merge DUMP DUMP [...] graph`: one wait-for graph over N hosts.
 *
 * Each host's graph is built from its own dump as `analyze DUMP graph`
 * builds it (lib/analysis/waitgraph.c: threads, disks, timers, the
 * network); its vertices are named with their host ("tcp_fsync[812]@db1").
 * The hosts' graphs are then joined by edges across hosts, one per pair
 * of threads: each network operation of a thread on one host that a
 * thread on another host answered (rsp_merge__answer(): the connection's
 * 4-tuple, the operations aligned by the clock offset) is a wait of the
 * first for the second, from its send to the answer's last arrival; the
 * edge weighs the union of its operations (one thread's operations on
 * several sockets overlap: an event loop, a proxy). No kernel saw such a wakeup: the edges are
 * inferred via the network, and not cascaded (wPerf's redistribution runs
 * inside each host's graph). The same time was a wait for the network in
 * the asking host's own graph: it is moved from the thread's edges ended
 * by network arrivals (up to what they hold, with the share of their
 * cascaded weight that came with it) to the edges across hosts, so that
 * no wait counts twice.
 *
 * Knots and sinks are then those of the joined graph (Tarjan's SCCs over
 * the edges above the noise floor, 1% of the longest dump's window, as
 * graph's default): a knot may span hosts. wPerf's background knots are
 * each host's graph's own (set aside here as there), and knot refinement
 * is not redone across hosts.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <rsp/tlstore.h>
#include <rsp/waitgraph.h>
#include "internal/json.h"
#include "internal/merge.h"
#include "internal/scc.h"
#include "internal/u64map.h"
#include "internal/vec.h"

#define NOISE	    0.01 /* of the reference: edges lighter do not hold components */
#define TEXT_EDGES  20	 /* the heaviest edges the text lists */
#define CHAIN_STEPS 8	 /* a chain from an edge across hosts: the heaviest way on */

struct gedge {
	uint32_t from, to;
	uint64_t weight, direct, inferred, net, count;
	uint64_t moved;	  /* local: network waits moved to edges across hosts */
	uint64_t weight0; /* local: the weight before */
	bool across;	  /* across hosts: inferred via the network */
};

/* An operation of edge @edge across hosts, in its asking host's clock. */
struct xspan {
	uint32_t edge;
	uint64_t from, to;
};

struct mgraph {
	const struct merge *m;
	struct rsp_waitgraph *g[MAX_HOSTS];
	uint32_t base[MAX_HOSTS + 1]; /* host k's vertices are base[k] .. base[k + 1] - 1 */
	struct gedge *es;
	size_t nr_es, cap_es, nr_local;
	struct rsp_u64map xmap; /* from << 32 | to -> edge across hosts */
	size_t unplaced;	/* answers whose thread has no vertex */
	struct xspan *spans;	/* the operations of the edges across hosts */
	size_t nr_spans, cap_spans;
	uint64_t ref, floor; /* the longest window; the noise floor */
	/* the edges over the floor by vertex (compressed rows), and their SCCs */
	size_t *start;
	uint32_t *to, *eix;
	struct rsp_scc scc;
	bool *leaves; /* per component: an edge over the floor leaves it */
	size_t *csize;
	bool *cself;	/* per component: a self-loop over the floor */
	uint64_t *in_w; /* per vertex: the weight over the floor of the edges into it */
	bool *skip;	/* per vertex: set aside in its host's graph (a background knot) */
};

static const char *const kind_names[] = {
	[RSP_WV_THREAD] = "thread", [RSP_WV_MERGED] = "threads",  [RSP_WV_SHORT] = "short_lived",
	[RSP_WV_DISK] = "disk",	    [RSP_WV_NET] = "network",	  [RSP_WV_TIMER] = "timer",
	[RSP_WV_IRQ] = "irq",	    [RSP_WV_SOFTIRQ] = "softirq",
};

static uint32_t host_of(const struct mgraph *x, uint32_t v)
{
	uint32_t k = 0;

	while (v >= x->base[k + 1])
		k++;
	return k;
}

static const struct rsp_wvertex *vertex(const struct mgraph *x, uint32_t v)
{
	uint32_t k = host_of(x, v);

	return rsp_waitgraph__vertex(x->g[k], v - x->base[k]);
}

static const char *vname(const struct mgraph *x, uint32_t v, char *buf, size_t n)
{
	snprintf(buf, n, "%s@%s", vertex(x, v)->name, x->m->h[host_of(x, v)].di->hostname);
	return buf;
}

static double secs(uint64_t ns)
{
	return (double)ns / 1e9;
}

/* ---- building ------------------------------------------------------------------ */

static bool crosses(uint32_t tid, void *ctx)
{
	uint32_t one;

	return !rsp_u64map__get(ctx, tid, &one);
}

/*
 * Host @k's threads with operations on matched connections: they keep their
 * own vertices (not "short-lived children of sh[12]"), the ends of the
 * edges across hosts.
 */
static int crossing_threads(const struct mgraph *x, uint32_t k, struct rsp_u64map *tids)
{
	const struct merge *m = x->m;

	for (size_t i = 0; i < m->nr_conns; i++) {
		const struct mconn *c = &m->conns[i];

		if (c->host != k || rsp_xmatch__peer(m->xm, i, NULL) < 0)
			continue;
		for (size_t j = 0; j < c->n; j++)
			if (rsp_u64map__put(tids, m->h[k].ops[c->at + j]->tid, 1))
				return -ENOMEM;
	}
	return 0;
}

static int host_graphs(struct mgraph *x, struct rsp_buf *err)
{
	struct rsp_waitgraph_opts o;
	struct rsp_u64map tids;

	rsp_waitgraph_opts__init(&o);
	o.own_vertex = crosses;
	o.own_ctx = &tids;
	for (int k = 0; k < x->m->nr; k++) {
		uint64_t s, e;
		struct rsp_buf e2 = {0};

		rsp_u64map__init(&tids);
		if (crossing_threads(x, (uint32_t)k, &tids)) {
			rsp_u64map__exit(&tids);
			rsp_buf__puts(err, "merge graph: out of memory");
			return -ENOMEM;
		}
		x->g[k] = rsp_waitgraph__new(x->m->h[k].store, &o, &e2);
		rsp_u64map__exit(&tids);
		if (!x->g[k]) {
			rsp_buf__printf(err, "merge graph: %s: %s", x->m->h[k].path,
					e2.data ? e2.data : "out of memory");
			rsp_buf__exit(&e2);
			return -ENOMEM;
		}
		rsp_buf__exit(&e2);
		x->base[k + 1] = x->base[k] + (uint32_t)rsp_waitgraph__nr_vertices(x->g[k]);
		rsp_waitgraph__window(x->g[k], &s, &e);
		if (e > s && e - s > x->ref)
			x->ref = e - s;
	}
	x->floor = (uint64_t)((double)x->ref * NOISE);
	return 0;
}

static struct gedge *new_edge(struct mgraph *x, uint32_t from, uint32_t to)
{
	struct gedge *e;

	if (rsp_vec__reserve((void **)&x->es, &x->cap_es, x->nr_es + 1, sizeof(*x->es)))
		return NULL;
	e = &x->es[x->nr_es++];
	*e = (struct gedge){.from = from, .to = to};
	return e;
}

static int local_edges(struct mgraph *x)
{
	for (int k = 0; k < x->m->nr; k++)
		for (size_t i = 0; i < rsp_waitgraph__nr_edges(x->g[k]); i++) {
			const struct rsp_wedge *w = rsp_waitgraph__edge(x->g[k], i);
			struct gedge *e = new_edge(x, x->base[k] + w->from, x->base[k] + w->to);

			if (!e)
				return -ENOMEM;
			e->weight = e->weight0 = w->weight_ns;
			e->direct = w->direct_ns;
			e->inferred = w->inferred_ns;
			e->net = w->net_ns;
			e->count = w->count;
		}
	x->nr_local = x->nr_es;
	return 0;
}

/* Thread @tid of host @k's vertex in the joined graph, or UINT32_MAX. */
static uint32_t thread_vertex(const struct mgraph *x, uint32_t k, uint32_t tid)
{
	long v = rsp_waitgraph__vertex_of(x->g[k], tid);

	return v < 0 ? UINT32_MAX : x->base[k] + (uint32_t)v;
}

/* Operation @o of thread @from, answered by @to: its span, weighed by union_across(). */
static int add_across(struct mgraph *x, uint32_t from, uint32_t to, const struct rsp_net_op *o)
{
	uint64_t key = (uint64_t)from << 32 | to;
	uint32_t i;

	if (rsp_u64map__get(&x->xmap, key, &i)) {
		struct gedge *e = new_edge(x, from, to);

		i = (uint32_t)(x->nr_es - 1);
		if (!e || rsp_u64map__put(&x->xmap, key, i))
			return -ENOMEM;
		e->across = true;
	}
	if (rsp_vec__reserve((void **)&x->spans, &x->cap_spans, x->nr_spans + 1, sizeof(*x->spans)))
		return -ENOMEM;
	x->spans[x->nr_spans++] = (struct xspan){i, o->start, o->end};
	x->es[i].count++;
	return 0;
}

static int span_cmp(const void *pa, const void *pb)
{
	const struct xspan *a = pa, *b = pb;

	if (a->edge != b->edge)
		return a->edge < b->edge ? -1 : 1;
	return a->from < b->from ? -1 : a->from > b->from;
}

/*
 * An edge across hosts weighs the time its thread waited, not the sum of
 * its operations: one thread's operations on several sockets overlap (an
 * event loop, a proxy waiting for its upstream while its client waits for
 * it), and their sum can exceed the window. The union of each edge's
 * operations, as merge_local.c's merge_spans(); its count stays the
 * number of operations.
 */
static void union_across(struct mgraph *x)
{
	qsort(x->spans, x->nr_spans, sizeof(*x->spans), span_cmp);
	for (size_t i = 0, j; i < x->nr_spans; i = j) {
		struct gedge *e = &x->es[x->spans[i].edge];
		uint64_t from = x->spans[i].from, to = x->spans[i].to, ns = 0;

		for (j = i + 1; j < x->nr_spans && x->spans[j].edge == x->spans[i].edge; j++) {
			if (x->spans[j].from > to) {
				ns += to - from;
				from = x->spans[j].from;
			}
			if (x->spans[j].to > to)
				to = x->spans[j].to;
		}
		ns += to - from;
		e->weight = e->direct = e->inferred = e->net = ns;
	}
}

/* Each answered operation of end @xi (its peer @yi): a wait across hosts. */
static int across_end(struct mgraph *x, size_t xi, size_t yi)
{
	const struct merge *m = x->m;
	const struct mconn *c = &m->conns[xi], *y = &m->conns[yi];
	const struct mhost *hx = &m->h[c->host], *hy = &m->h[y->host];
	long next = -1;

	for (size_t i = 0; i < c->n; i++) {
		const struct rsp_net_op *o = hx->ops[c->at + i];
		long j = rsp_merge__answer(m, xi, yi, i, &next);
		uint32_t from, to;

		if (j < 1)
			continue;
		from = thread_vertex(x, c->host, o->tid);
		to = thread_vertex(x, y->host, hy->ops[y->at + (size_t)j]->tid);
		if (from == UINT32_MAX || to == UINT32_MAX) {
			x->unplaced++;
			continue;
		}
		if (add_across(x, from, to, o))
			return -ENOMEM;
	}
	return 0;
}

static int by_net_desc(const void *pa, const void *pb, void *ctx)
{
	const struct gedge *es = ctx;
	uint64_t a = es[*(const uint32_t *)pa].net, b = es[*(const uint32_t *)pb].net;

	return a < b ? 1 : a > b ? -1 : 0;
}

/*
 * The asking thread's waits across hosts were, in its own host's graph,
 * waits ended by network arrivals: take them from those edges (the
 * heaviest first, at most what each holds) so that no wait counts twice.
 */
static int move_network_waits(struct mgraph *x)
{
	size_t nv = x->base[x->m->nr];
	size_t *at = calloc(nv + 2, sizeof(*at));
	uint32_t *mine = malloc((x->nr_local ? x->nr_local : 1) * sizeof(*mine));

	if (!at || !mine) {
		free(at);
		free(mine);
		return -ENOMEM;
	}
	/* The local edges with network waits, grouped by their source (counting sort). */
	for (size_t i = 0; i < x->nr_local; i++)
		if (x->es[i].net)
			at[x->es[i].from + 2]++;
	for (size_t v = 0; v < nv; v++)
		at[v + 2] += at[v + 1];
	for (size_t i = 0; i < x->nr_local; i++)
		if (x->es[i].net)
			mine[at[x->es[i].from + 1]++] = (uint32_t)i;
	/* now at[v] .. at[v + 1] are v's: each group the heaviest first */
	for (size_t v = 0; v < nv; v++)
		qsort_r(mine + at[v], at[v + 1] - at[v], sizeof(*mine), by_net_desc, x->es);
	for (size_t a = x->nr_local; a < x->nr_es; a++) {
		uint32_t v = x->es[a].from;
		uint64_t left = x->es[a].weight;

		for (size_t i = at[v]; i < at[v + 1] && left; i++) {
			struct gedge *e = &x->es[mine[i]];
			uint64_t take = e->net - e->moved;

			uint64_t less;

			take = take < left ? take : left;
			/* and what cascaded from them: the edge's weight per ns waited */
			less = e->direct ? (uint64_t)((double)take * (double)e->weight0 /
						      (double)e->direct)
					 : take;
			e->moved += take;
			e->weight -= less < e->weight ? less : e->weight;
			left -= take;
		}
	}
	free(at);
	free(mine);
	return 0;
}

/* ---- structure ------------------------------------------------------------------ */

static int components(struct mgraph *x)
{
	size_t nv = x->base[x->m->nr], *fill = calloc(nv + 1, sizeof(*fill));

	x->start = calloc(nv + 1, sizeof(*x->start));
	x->to = malloc((x->nr_es ? x->nr_es : 1) * sizeof(*x->to));
	x->eix = malloc((x->nr_es ? x->nr_es : 1) * sizeof(*x->eix));
	if (!fill || !x->start || !x->to || !x->eix) {
		free(fill);
		return -ENOMEM;
	}
	for (size_t i = 0; i < x->nr_es; i++)
		if (x->es[i].weight >= x->floor && x->es[i].weight)
			x->start[x->es[i].from + 1]++;
	for (size_t v = 0; v < nv; v++)
		x->start[v + 1] += x->start[v];
	for (size_t i = 0; i < x->nr_es; i++) {
		const struct gedge *e = &x->es[i];

		if (e->weight >= x->floor && e->weight) {
			size_t at = x->start[e->from] + fill[e->from]++;

			x->to[at] = e->to;
			x->eix[at] = (uint32_t)i;
		}
	}
	free(fill);
	/* A host's background knots (wPerf 3.3) stay set aside, as in its own graph. */
	x->skip = calloc(nv ? nv : 1, sizeof(*x->skip));
	if (!x->skip)
		return -ENOMEM;
	for (uint32_t v = 0; v < nv; v++)
		x->skip[v] = vertex(x, v)->removed;
	return rsp_scc__run(&x->scc, nv, x->start, x->to, x->skip);
}

/* Per component: its size, a self-loop, an edge leaving it. */
static int classify(struct mgraph *x)
{
	size_t nc = (size_t)x->scc.ncomp, nv = x->base[x->m->nr];

	x->leaves = calloc(nc ? nc : 1, sizeof(*x->leaves));
	x->cself = calloc(nc ? nc : 1, sizeof(*x->cself));
	x->csize = calloc(nc ? nc : 1, sizeof(*x->csize));
	x->in_w = calloc(nv ? nv : 1, sizeof(*x->in_w));
	if (!x->leaves || !x->cself || !x->csize || !x->in_w)
		return -ENOMEM;
	for (size_t i = 0; i < x->nr_es; i++)
		if (x->es[i].to != x->es[i].from && x->es[i].weight >= x->floor &&
		    !x->skip[x->es[i].from])
			x->in_w[x->es[i].to] += x->es[i].weight;
	for (size_t v = 0; v < nv; v++) {
		long c = x->scc.comp[v];

		if (c < 0)
			continue;
		x->csize[c]++;
		for (size_t i = x->start[v]; i < x->start[v + 1]; i++) {
			if (x->to[i] == v)
				x->cself[c] = true;
			else if (x->scc.comp[x->to[i]] >= 0 && x->scc.comp[x->to[i]] != c)
				x->leaves[c] = true;
		}
	}
	return 0;
}

static bool is_knot(const struct mgraph *x, long c)
{
	return !x->leaves[c] && (x->csize[c] > 1 || x->cself[c]);
}

static uint64_t waited_for(const struct mgraph *x, uint32_t v)
{
	return x->in_w[v];
}

/* Whether knot @c's vertices are on more than one host. */
static bool knot_spans_hosts(const struct mgraph *x, long c)
{
	size_t nv = x->base[x->m->nr];
	uint64_t hosts = 0;

	for (uint32_t v = 0; v < nv; v++)
		if (x->scc.comp[v] == c)
			hosts |= 1ull << host_of(x, v);
	return (hosts & (hosts - 1)) != 0;
}

/*
 * How long @v was waited for if it is a sink (a component of its own,
 * waiting for nothing over the floor, waited for); 0 if it is not one.
 */
static uint64_t sink_wait(const struct mgraph *x, uint32_t v)
{
	long c = x->scc.comp[v];

	if (c < 0 || x->leaves[c] || x->csize[c] > 1 || x->cself[c])
		return 0;
	return waited_for(x, v);
}

/* The heaviest edge over the floor out of @v to a vertex not in @seen, or -1. */
static long heaviest_out(const struct mgraph *x, uint32_t v, const uint32_t *seen, int n)
{
	long best = -1;

	for (size_t i = x->start[v]; i < x->start[v + 1]; i++) {
		const struct gedge *e = &x->es[x->eix[i]];
		bool dup = false;

		for (int k = 0; k < n; k++)
			dup |= seen[k] == e->to;
		if (!dup && (best < 0 || e->weight > x->es[best].weight))
			best = (long)x->eix[i];
	}
	return best;
}

/* From edge @a across hosts on, the heaviest way: up to CHAIN_STEPS edges, no vertex twice. */
static int chain_of(const struct mgraph *x, size_t a, uint32_t *edges)
{
	uint32_t seen[CHAIN_STEPS + 2] = {x->es[a].from, x->es[a].to};
	int n = 0;

	for (uint32_t v = x->es[a].to; n < CHAIN_STEPS;) {
		long e = heaviest_out(x, v, seen, n + 2);

		if (e < 0)
			break;
		edges[n++] = (uint32_t)e;
		v = x->es[e].to;
		seen[n + 1] = v;
	}
	return n;
}

/* ---- rendering ------------------------------------------------------------------ */

static int by_weight_desc(const void *pa, const void *pb, void *ctx)
{
	const struct gedge *es = ctx;
	uint64_t a = es[*(const uint32_t *)pa].weight, b = es[*(const uint32_t *)pb].weight;

	return a < b ? 1 : a > b ? -1 : (int)(*(const uint32_t *)pa - *(const uint32_t *)pb);
}

static double pct(const struct mgraph *x, uint64_t ns)
{
	return x->ref ? 100.0 * (double)ns / (double)x->ref : 0.0;
}

static void text_edge(const struct mgraph *x, const struct gedge *e, const char *ind,
		      struct rsp_buf *out)
{
	char a[400], b[400];

	rsp_buf__printf(out, "%s%s -> %s  %.6f s %5.1f%%  %lu waits%s\n", ind,
			vname(x, e->from, a, sizeof(a)), vname(x, e->to, b, sizeof(b)),
			secs(e->weight), pct(x, e->weight), (unsigned long)e->count,
			e->across ? "  (across hosts: inferred via the network)" : "");
	if (e->moved)
		rsp_buf__printf(out,
				"%*s    %.6f s of its network waits moved to edges across hosts\n",
				(int)strlen(ind), "", secs(e->moved));
}

static void text_across(const struct mgraph *x, const uint32_t *order, struct rsp_buf *out)
{
	size_t n = 0;

	rsp_buf__puts(out, "edges across hosts (a thread's network waits answered by a thread on "
			   "another host),\nand from each the heaviest way on:\n");
	for (size_t k = 0; k < x->nr_es; k++) {
		uint32_t chain[CHAIN_STEPS];
		int nc;

		if (!x->es[order[k]].across)
			continue;
		n++;
		text_edge(x, &x->es[order[k]], "  ", out);
		nc = chain_of(x, order[k], chain);
		for (int i = 0; i < nc; i++)
			text_edge(x, &x->es[chain[i]], "      then ", out);
	}
	if (!n)
		rsp_buf__puts(out, "  none: no answered operation across hosts\n");
}

static void text_structure(const struct mgraph *x, struct rsp_buf *out)
{
	size_t nv = x->base[x->m->nr];
	char a[400];

	rsp_buf__puts(out, "knots (strongly connected, no edge over the floor leaves them):\n");
	for (long c = 0; c < x->scc.ncomp; c++) {
		bool first = true;

		if (!is_knot(x, c))
			continue;
		for (uint32_t v = 0; v < nv; v++)
			if (x->scc.comp[v] == c) {
				rsp_buf__printf(out, "%s%s", first ? "  { " : ", ",
						vname(x, v, a, sizeof(a)));
				first = false;
			}
		rsp_buf__printf(out, " }%s\n", knot_spans_hosts(x, c) ? "  spans hosts" : "");
	}
	rsp_buf__puts(out, "sinks (waited for, wait for nothing over the floor):\n");
	for (uint32_t v = 0; v < nv; v++) {
		uint64_t w = sink_wait(x, v);

		if (!w)
			continue;
		rsp_buf__printf(out, "  %s  waited for %.6f s\n", vname(x, v, a, sizeof(a)),
				secs(w));
	}
}

static void render_text(const struct mgraph *x, const uint32_t *order, struct rsp_buf *out)
{
	size_t across = x->nr_es - x->nr_local;

	rsp_merge__offsets_text(x->m, out);
	rsp_buf__printf(out,
			"wait-for graph across %d hosts: %u vertices, %zu edges (%zu across "
			"hosts)\n"
			"percentages of %.6f s (the longest dump's window); noise floor %.6f s\n",
			x->m->nr, x->base[x->m->nr], x->nr_es, across, secs(x->ref),
			secs(x->floor));
	text_across(x, order, out);
	rsp_buf__printf(out, "heaviest edges (%d at most; --json lists all):\n", TEXT_EDGES);
	for (size_t k = 0; k < x->nr_es && k < TEXT_EDGES; k++)
		text_edge(x, &x->es[order[k]], "  ", out);
	text_structure(x, out);
	if (x->unplaced)
		rsp_buf__printf(out,
				"%zu answered operations whose thread has no vertex: left out\n",
				x->unplaced);
}

static json_t *json_vertex(const struct mgraph *x, uint32_t v)
{
	const struct rsp_wvertex *w = vertex(x, v);
	uint32_t k = host_of(x, v);
	json_t *o = json_object();
	char a[400];

	rsp_json__set_u64(o, "id", v);
	rsp_json__set_str(o, "name", vname(x, v, a, sizeof(a)));
	rsp_json__set_u64(o, "host", k);
	rsp_json__set_str(o, "hostname", x->m->h[k].di->hostname);
	rsp_json__set_str(o, "kind", kind_names[w->kind]);
	if (w->tgid)
		rsp_json__set_u64(o, "tgid", w->tgid);
	if (w->kind == RSP_WV_THREAD)
		rsp_json__set_u64(o, "tid", w->id);
	rsp_json__set_secs(o, "cpu_s", w->run_ns);
	rsp_json__set_secs(o, "runnable_s", w->runnable_ns);
	rsp_json__set_secs(o, "wait_s", w->wait_ns);
	return o;
}

static json_t *json_edge(const struct mgraph *x, size_t i)
{
	const struct gedge *e = &x->es[i];
	json_t *o = json_object();
	char a[400];

	rsp_json__set_str(o, "from", vname(x, e->from, a, sizeof(a)));
	rsp_json__set_str(o, "to", vname(x, e->to, a, sizeof(a)));
	rsp_json__set_u64(o, "from_id", e->from);
	rsp_json__set_u64(o, "to_id", e->to);
	rsp_json__set_secs(o, "weight_s", e->weight);
	rsp_json__set_real(o, "weight_pct", pct(x, e->weight));
	rsp_json__set_secs(o, "direct_s", e->direct);
	rsp_json__set_secs(o, "inferred_s", e->inferred);
	rsp_json__set_secs(o, "network_s", e->net);
	rsp_json__set_secs(o, "moved_across_hosts_s", e->moved);
	rsp_json__set_u64(o, "count", e->count);
	json_object_set_new(o, "across_hosts", json_boolean(e->across));
	return o;
}

static json_t *json_structure(const struct mgraph *x, json_t *root)
{
	json_t *knots = json_array(), *sinks = json_array();
	size_t nv = x->base[x->m->nr];

	for (long c = 0; c < x->scc.ncomp; c++) {
		json_t *vs;

		if (!is_knot(x, c))
			continue;
		vs = json_array();
		for (uint32_t v = 0; v < nv; v++)
			if (x->scc.comp[v] == c)
				json_array_append_new(vs, json_integer(v));
		json_array_append_new(knots, json_pack("{s:o, s:b}", "vertices", vs, "spans_hosts",
						       knot_spans_hosts(x, c)));
	}
	for (uint32_t v = 0; v < nv; v++) {
		uint64_t w = sink_wait(x, v);

		if (!w)
			continue;
		json_array_append_new(
			sinks, json_pack("{s:I, s:f}", "id", (json_int_t)v, "waited_s", secs(w)));
	}
	json_object_set_new(root, "knots", knots);
	json_object_set_new(root, "sinks", sinks);
	return root;
}

static int render_json(const struct mgraph *x, const uint32_t *order, struct rsp_buf *out)
{
	json_t *root = json_object(), *vs = json_array(), *es = json_array();

	for (uint32_t v = 0; v < x->base[x->m->nr]; v++)
		json_array_append_new(vs, json_vertex(x, v));
	for (size_t k = 0; k < x->nr_es; k++) {
		json_t *e = json_edge(x, order[k]);

		if (x->es[order[k]].across) {
			uint32_t chain[CHAIN_STEPS];
			int nc = chain_of(x, order[k], chain);
			json_t *c = json_array();

			for (int i = 0; i < nc; i++)
				json_array_append_new(c, json_edge(x, chain[i]));
			json_object_set_new(e, "chain", c);
		}
		json_array_append_new(es, e);
	}
	json_object_set_new(root, "hosts", rsp_merge__hosts_json(x->m));
	json_object_set_new(root, "clock_offsets", rsp_merge__offsets_json(x->m));
	rsp_json__set_secs(root, "reference_s", x->ref);
	rsp_json__set_secs(root, "noise_floor_s", x->floor);
	json_object_set_new(root, "vertices", vs);
	json_object_set_new(root, "edges", es);
	rsp_json__set_u64(root, "unplaced_operations", x->unplaced);
	json_structure(x, root);
	return rsp_json__emit(root, out);
}

static int build(struct mgraph *x, struct rsp_buf *err)
{
	const struct merge *m = x->m;
	int ret = host_graphs(x, err);

	if (ret)
		return ret;
	if (local_edges(x))
		goto nomem;
	for (size_t i = 0; i < m->nr_conns; i++) {
		int64_t p = rsp_xmatch__peer(m->xm, i, NULL);

		if (p >= 0 && across_end(x, i, (size_t)p))
			goto nomem;
	}
	union_across(x);
	if (move_network_waits(x) || components(x) || classify(x))
		goto nomem;
	return 0;
nomem:
	rsp_buf__puts(err, "merge graph: out of memory building the graph");
	return -ENOMEM;
}

int rsp_merge__graph(const struct merge *m, struct rsp_buf *out, struct rsp_buf *err)
{
	struct mgraph *x = calloc(1, sizeof(*x));
	uint32_t *order = NULL;
	int ret = -ENOMEM;

	if (!x) {
		rsp_buf__puts(err, "merge graph: out of memory");
		return -ENOMEM;
	}
	x->m = m;
	rsp_u64map__init(&x->xmap);
	ret = build(x, err);
	if (!ret) {
		order = malloc((x->nr_es ? x->nr_es : 1) * sizeof(*order));
		ret = order ? 0 : -ENOMEM;
	}
	if (!ret) {
		for (size_t i = 0; i < x->nr_es; i++)
			order[i] = (uint32_t)i;
		qsort_r(order, x->nr_es, sizeof(*order), by_weight_desc, x->es);
		if (m->json)
			ret = render_json(x, order, out);
		else
			render_text(x, order, out);
		if (ret)
			rsp_buf__puts(err, "merge graph: out of memory rendering the answer");
	} else if (!err->len) {
		rsp_buf__puts(err, "merge graph: out of memory");
	}
	free(order);
	for (int k = 0; k < m->nr; k++)
		rsp_waitgraph__delete(x->g[k]);
	free(x->es);
	free(x->spans);
	rsp_u64map__exit(&x->xmap);
	free(x->start);
	free(x->to);
	free(x->eix);
	rsp_scc__exit(&x->scc);
	free(x->leaves);
	free(x->csize);
	free(x->cself);
	free(x->in_w);
	free(x->skip);
	free(x);
	return ret;
}
