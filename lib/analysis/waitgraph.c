// SPDX-License-Identifier: LGPL-2.1
/*
 * The wait-for graph (wPerf): vertices, cascaded edge weights, knots.
 *
 * Steps (rsp_waitgraph__new): vertices for threads (merged by comm stem and
 * short-lived parent), "entities" that wait (threads and block devices)
 * with their waiting intervals, cascaded redistribution over those
 * intervals, the pseudo-thread edges that have no intervals (timers,
 * short-lived groups), then SCCs, background knots and refinement.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <rsp/waitgraph.h>
#include "internal/fmt.h"
#include "internal/u64map.h"
#include "internal/gallop.h"
#include "internal/hash.h"
#include "internal/vec.h"
#include "internal/scc.h"

#define NO_ENT	   UINT32_MAX
#define MAX_DEPTH  8
#define CANDIDATES 8
#define BATCH_NS   50000ull    /* requests issued this close together end one idle interval */
#define RELAY_NS   50000000ull /* relays of a disk (relayed_disk()): runnable for long under load */
/*
 * Building a thread's waits hashes each one's two stacks, read from the
 * window for the first time since the timeline's pass: the stacks of the
 * wait PREFETCH segments ahead are asked for while this one is hashed
 * (the hashing's loads were 72% of the build's samples on a pgbench
 * window; with the prefetch the build's share halved: BENCHMARKS.md).
 */
#define PREFETCH 4

struct wait {
	uint64_t start, end;
	uint32_t target_ent; /* entity of the waker, NO_ENT if it has no intervals */
	uint32_t target_v;
	double frac; /* share of the interval (device idle split by bytes) */
	bool inferred;
	bool net;    /* ended by a network arrival */
	bool merged; /* false wakeups were merged into it: its earlier wakers lost it */
	/*
	 * Its edge + 1 (0: not yet known). cascade() weighs a wait always on
	 * the same edge, from its own entity's vertex to target_v, so the edge
	 * is looked up once per wait instead of once per weighing (the lookup
	 * was a hash probe per cascade step). Set at the first weighing, not
	 * when the wait is made: a wait never weighed must not create an edge.
	 */
	uint32_t edge1;
	const uint64_t *stack, *wstack;
	uint32_t nr_stack, nr_wstack;
	uint32_t pid, wpid;   /* processes of the waiter and of the waker */
	uint64_t hash, whash; /* of the stacks, computed once */
};

/* A wait's times, apart from the rest of it: see struct entity's spans. */
struct span {
	uint64_t end, start;
};

struct entity {
	uint32_t vertex;
	struct wait *waits;
	/*
	 * The waits' times, in the same order, made for the cascade: its
	 * searches and scans of a waker's waits read only these, 16 bytes a
	 * wait instead of struct wait's 88, and touch a struct wait only for
	 * the waits that overlap. The searches step forward a few waits at a
	 * time through every waker's array (a pgbench graph: 600k searches,
	 * 6 waits apart on average), each step a cache miss on the big array
	 * (60% of the cascade's time in the search's two loads).
	 */
	struct span *spans;
	size_t nr, cap;
	size_t hint; /* first_after()'s last answer: the next question is mostly near it */
};

struct cand {
	const uint64_t *ips;
	uint32_t nr;
	uint32_t pid; /* whose stack, when: to name its user frames */
	uint64_t time;
	uint64_t hash, count, weight;
};

struct edge_x {
	struct rsp_wedge e;
	struct cand wait[CANDIDATES], waker[CANDIDATES];
	uint32_t nr_wait, nr_waker;
	bool structural; /* a pseudo-thread's own wait (timer, short-lived group): no noise */
};

struct vtx {
	struct rsp_wvertex v;
	uint32_t *tids;
	size_t cap_tids;
	uint64_t timer_sleep; /* for its timer vertex */
	uint32_t timer;	      /* its timer vertex, or UINT32_MAX */
};

struct rsp_waitgraph {
	const struct rsp_tlstore *s;
	struct rsp_waitgraph_opts o;
	uint64_t start, end;
	uint64_t ref_start,
		ref_end; /* what weights are judged against: the window, or --pid's span */
	struct vtx *vs;
	size_t nr_vs, cap_vs;
	struct rsp_u64map vkeys;  /* pseudo-vertex and merge keys -> vertex */
	struct rsp_u64map tidmap; /* tid -> store thread index */
	uint32_t *thread_vertex;  /* per store thread */
	struct entity *ents;	  /* store threads, then devices */
	size_t nr_ents, cap_ents;
	struct rsp_u64map devents; /* dev << 32 | requester vertex -> entity */
	struct edge_x *es;
	size_t nr_es, cap_es;
	struct rsp_u64map emap; /* from << 32 | to -> edge */
	uint64_t last_edge_key; /* get_edge()'s one-entry cache */
	uint32_t last_tid;	/* thread_index()'s */
	long last_tid_index;
	uint32_t last_edge;
	struct rsp_wknot *knots;
	size_t nr_knots, cap_knots;
	uint32_t *sinks;
	size_t nr_sinks, cap_sinks;
	bool *in_knot;	  /* per edge */
	uint64_t relayed; /* waits on a thread that relayed the waiter's own disk request */
	bool failed;
};

void rsp_waitgraph_opts__init(struct rsp_waitgraph_opts *o)
{
	o->threshold = 0.20;
	o->noise = 0.01;
	o->merge = true;
	o->merge_stacks = false;
	o->pid = -1;
	o->keep_tgid = NULL;
	o->keep_ctx = NULL;
	o->own_vertex = NULL;
	o->own_ctx = NULL;
}

static uint64_t stack_hash(const uint64_t *ips, uint32_t nr, uint32_t stored);

/* ---- vertices ----------------------------------------------------------- */

static uint32_t new_vertex(struct rsp_waitgraph *g, uint8_t kind, uint32_t id, const char *name)
{
	struct vtx *x;

	if (rsp_vec__reserve((void **)&g->vs, &g->cap_vs, g->nr_vs + 1, sizeof(*g->vs))) {
		g->failed = true;
		return UINT32_MAX;
	}
	x = &g->vs[g->nr_vs];
	memset(x, 0, sizeof(*x));
	x->v.kind = kind;
	x->v.id = id;
	x->timer = UINT32_MAX;
	x->v.owner = UINT32_MAX;
	snprintf(x->v.name, sizeof(x->v.name), "%s", name);
	return (uint32_t)g->nr_vs++;
}

static uint64_t pseudo_key(uint8_t kind, uint64_t id)
{
	return (uint64_t)(kind + 1) << 56 | (id & 0xffffffffffffull);
}

static uint32_t pseudo_vertex(struct rsp_waitgraph *g, uint8_t kind, uint32_t id, const char *name)
{
	uint64_t key = pseudo_key(kind, id);
	uint32_t v;

	if (!rsp_u64map__get(&g->vkeys, key, &v))
		return v;
	v = new_vertex(g, kind, id, name);
	if (v != UINT32_MAX && rsp_u64map__put(&g->vkeys, key, v))
		g->failed = true;
	return v;
}

static void add_member(struct rsp_waitgraph *g, uint32_t v, const struct rsp_tlthread *t)
{
	struct vtx *x = &g->vs[v];
	uint64_t span = t->last > t->first ? t->last - t->first : 0;

	if (rsp_vec__reserve((void **)&x->tids, &x->cap_tids, x->v.nr_threads + 1,
			     sizeof(*x->tids))) {
		g->failed = true;
		return;
	}
	x->tids[x->v.nr_threads++] = t->tid;
	x->v.tids = x->tids;
	if (t->tgid)
		x->v.tgid = t->tgid;
	x->v.run_ns += t->run_ns;
	x->v.run_inferred_ns += t->run_inferred_ns;
	x->v.runnable_ns += t->runnable_ns;
	x->v.wait_ns += t->sleep_ns;
	x->v.span_ns += span;
	if (span)
		x->v.cpu_util += (double)(t->run_ns + t->runnable_ns) / (double)span;
}

/* "worker-12" -> "worker": strip trailing digits and then separators. */
static size_t comm_stem(const char *comm)
{
	size_t n = strlen(comm);

	while (n && comm[n - 1] >= '0' && comm[n - 1] <= '9')
		n--;
	while (n && strchr("-_.:/#", comm[n - 1]))
		n--;
	return n ? n : strlen(comm);
}

static uint64_t merge_key(const struct rsp_tlthread *t)
{
	uint64_t h = rsp_hash__bytes(RSP_HASH_INIT, t->comm, comm_stem(t->comm));

	return (h ^ ((uint64_t)t->tgid << 20)) & 0x7fffffffffffffull; /* kind byte 0 */
}

/* ---- merging by wait stacks (wPerf 3.3) ----------------------------------- */

#define DIST_K	   8		/* a thread's heaviest wait stacks kept */
#define ALIKE	   0.7		/* shared share of wait time that makes two threads alike */
#define GROUPS_MAX 64		/* groups of one process compared against, at most */
#define STACK_BIT  (1ull << 55) /* a key of a group by stacks, apart from name keys */

/* Where a thread's wait time went: its heaviest sleep stacks, as shares. */
struct dist {
	uint64_t h[DIST_K];
	double share[DIST_K];
	unsigned n;
};

static void thread_dist(const struct rsp_tlthread *t, struct dist *d)
{
	uint64_t ns[DIST_K * 2] = {0}, h[DIST_K * 2], total = 0;
	unsigned n = 0;

	memset(d, 0, sizeof(*d));
	for (size_t i = 0; i < t->nr_segs; i++) {
		const struct rsp_segment *g = &t->segs[i];
		uint64_t k;
		unsigned j;

		if (g->kind != RSP_SEG_SLEEP || !g->stack)
			continue;
		k = stack_hash(g->stack, g->nr_stack, g->stack_hash);
		for (j = 0; j < n && h[j] != k; j++)
			;
		if (j == n) {
			if (n == DIST_K * 2)
				continue; /* rare stacks past the table: left out of the shares */
			h[n] = k, n++;
		}
		ns[j] += g->end - g->start;
		total += g->end - g->start;
	}
	/* the DIST_K heaviest, by selection (n <= 16) */
	for (unsigned k = 0; k < DIST_K && total; k++) {
		unsigned best = UINT32_MAX;

		for (unsigned j = 0; j < n; j++)
			if (ns[j] && (best == UINT32_MAX || ns[j] > ns[best]))
				best = j;
		if (best == UINT32_MAX)
			break;
		d->h[d->n] = h[best];
		d->share[d->n++] = (double)ns[best] / (double)total;
		ns[best] = 0;
	}
}

/* The share of wait time two threads spent at the same stacks (0..1). */
static double alike(const struct dist *a, const struct dist *b)
{
	double s = 0;

	for (unsigned i = 0; i < a->n; i++)
		for (unsigned j = 0; j < b->n; j++)
			if (a->h[i] == b->h[j])
				s += a->share[i] < b->share[j] ? a->share[i] : b->share[j];
	return s;
}

static int cmp_by_tgid(const void *x, const void *y, void *ctx)
{
	const struct rsp_tlstore *s = ctx;
	const struct rsp_tlthread *a = rsp_tlstore__thread(s, *(const uint32_t *)x),
				  *b = rsp_tlstore__thread(s, *(const uint32_t *)y);

	if (a->tgid != b->tgid)
		return a->tgid < b->tgid ? -1 : 1;
	return a->tid < b->tid ? -1 : a->tid > b->tid;
}

/*
 * Each thread's group key, by what it waits on (wPerf merges threads with
 * similar call-stack distributions): within a process, a thread joins the
 * first group whose first member spent at least ALIKE of its wait time at
 * the same stacks. Differently named workers of one pool merge; same-named
 * threads doing different work stay apart. A thread that never waited
 * with a stack groups by name.
 */
static int stack_keys(struct rsp_waitgraph *g, uint64_t *keys)
{
	size_t n = rsp_tlstore__nr_threads(g->s);
	uint32_t *ix = malloc((n ? n : 1) * sizeof(*ix));
	struct dist *d = malloc((n ? n : 1) * sizeof(*d));
	uint32_t reps[GROUPS_MAX];

	if (!ix || !d) {
		free(ix);
		free(d);
		return -ENOMEM;
	}
	for (size_t i = 0; i < n; i++) {
		ix[i] = (uint32_t)i;
		thread_dist(rsp_tlstore__thread(g->s, i), &d[i]);
	}
	qsort_r(ix, n, sizeof(*ix), cmp_by_tgid, (void *)g->s);
	for (size_t i = 0, nr = 0; i < n; i++) {
		const struct rsp_tlthread *t = rsp_tlstore__thread(g->s, ix[i]);
		unsigned k;

		if (i == 0 || rsp_tlstore__thread(g->s, ix[i - 1])->tgid != t->tgid)
			nr = 0;
		if (!d[ix[i]].n) {
			keys[ix[i]] = merge_key(t);
			continue;
		}
		for (k = 0; k < nr && alike(&d[reps[k]], &d[ix[i]]) < ALIKE; k++)
			;
		if (k == nr && nr < GROUPS_MAX)
			reps[nr++] = ix[i];
		keys[ix[i]] = (rsp_hash__mix((uint64_t)t->tgid << 8 | k) & 0x7fffffffffffffull) |
			      STACK_BIT;
	}
	free(ix);
	free(d);
	return 0;
}

static bool short_lived(const struct rsp_waitgraph *g, const struct rsp_tlthread *t)
{
	uint64_t window = g->end - g->start;

	return t->parent && t->forked && t->exited && t->exited > t->forked &&
	       t->exited - t->forked < window / 10;
}

/* With --pid or a cgroup filter: a thread the graph starts from. */
static bool kept(const struct rsp_waitgraph *g, const struct rsp_tlthread *t)
{
	if (g->o.pid > 0)
		return t->tgid == (uint32_t)g->o.pid || t->tid == (uint32_t)g->o.pid;
	return g->o.keep_tgid && t->tgid && g->o.keep_tgid(t->tgid, g->o.keep_ctx);
}

/* Vertex names are labels for people and for DOT: the name escaped. */
static void thread_name(char *buf, size_t n, const struct rsp_tlthread *t)
{
	char comm[RSP_FMT_NAME_MAX];

	snprintf(buf, n, "%.48s[%u]", t->comm[0] ? rsp_fmt__name(comm, sizeof(comm), t->comm) : "?",
		 t->tid);
}

/* Each thread's merge key (by name or by stacks); how many threads share each. */
static int count_keys(struct rsp_waitgraph *g, uint64_t *keys, struct rsp_u64map *counts)
{
	size_t n = rsp_tlstore__nr_threads(g->s);

	if (g->o.merge_stacks && stack_keys(g, keys))
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		const struct rsp_tlthread *t = rsp_tlstore__thread(g->s, i);
		uint32_t c = 0;

		if (!g->o.merge_stacks)
			keys[i] = merge_key(t);
		if (!t->tgid || !t->comm[0] || short_lived(g, t))
			continue;
		rsp_u64map__get(counts, keys[i], &c);
		if (rsp_u64map__put(counts, keys[i], c + 1))
			return -ENOMEM;
	}
	return 0;
}

/* "worker*[12]": threads merged by name; "worker~[12]": by their wait stacks. */
static uint32_t merged_vertex(struct rsp_waitgraph *g, const struct rsp_tlthread *t, uint64_t key)
{
	char name[64], stem[sizeof(t->comm)], comm[RSP_FMT_NAME_MAX];
	uint32_t v;

	if (!rsp_u64map__get(&g->vkeys, key, &v))
		return v;
	snprintf(stem, sizeof(stem), "%.*s", (int)comm_stem(t->comm), t->comm);
	snprintf(name, sizeof(name), "%.48s%c[%u]", rsp_fmt__name(comm, sizeof(comm), stem),
		 key & STACK_BIT ? '~' : '*', t->tgid);
	v = new_vertex(g, RSP_WV_MERGED, t->tgid, name);
	if (v != UINT32_MAX && rsp_u64map__put(&g->vkeys, key, v))
		g->failed = true;
	return v;
}

static uint32_t short_vertex(struct rsp_waitgraph *g, const struct rsp_tlthread *t)
{
	const struct rsp_tlthread *p = rsp_tlstore__find_thread(g->s, t->parent);
	char name[64], comm[RSP_FMT_NAME_MAX];

	snprintf(name, sizeof(name), "short-lived children of %.24s[%u]",
		 p && p->comm[0] ? rsp_fmt__name(comm, sizeof(comm), p->comm) : "?", t->parent);
	return pseudo_vertex(g, RSP_WV_SHORT, t->parent, name);
}

static int thread_vertices(struct rsp_waitgraph *g)
{
	size_t n = rsp_tlstore__nr_threads(g->s);
	struct rsp_u64map counts;
	uint64_t *keys = calloc(n ? n : 1, sizeof(*keys));
	char name[64];
	int ret = 0;

	rsp_u64map__init(&counts);
	g->thread_vertex = calloc(n ? n : 1, sizeof(*g->thread_vertex));
	if (!keys || !g->thread_vertex || (g->o.merge && count_keys(g, keys, &counts)))
		ret = -ENOMEM;
	for (size_t i = 0; !ret && i < n; i++) {
		const struct rsp_tlthread *t = rsp_tlstore__thread(g->s, i);
		uint32_t c = 0, v;

		if (rsp_u64map__put(&g->tidmap, t->tid, (uint32_t)i)) {
			ret = -ENOMEM;
			break;
		}
		/* a thread the graph starts from keeps its own vertex: the short-lived
		 * children of one parent may be inside and outside the filter */
		if (g->o.merge && g->o.own_vertex && g->o.own_vertex(t->tid, g->o.own_ctx)) {
			thread_name(name, sizeof(name), t);
			v = new_vertex(g, RSP_WV_THREAD, t->tid, name);
		} else if (g->o.merge && short_lived(g, t) && !kept(g, t)) {
			v = short_vertex(g, t);
		} else if (g->o.merge && t->tgid && t->comm[0] &&
			   !rsp_u64map__get(&counts, keys[i], &c) && c > 1) {
			v = merged_vertex(g, t, keys[i]);
		} else {
			thread_name(name, sizeof(name), t);
			v = new_vertex(g, RSP_WV_THREAD, t->tid, name);
		}
		if (v == UINT32_MAX) {
			ret = -ENOMEM;
			break;
		}
		g->thread_vertex[i] = v;
		add_member(g, v, t);
	}
	rsp_u64map__exit(&counts);
	free(keys);
	return ret ? ret : (g->failed ? -ENOMEM : 0);
}

static long thread_index(const struct rsp_waitgraph *g, uint32_t tid)
{
	struct rsp_waitgraph *mg = (struct rsp_waitgraph *)g; /* the cache only */
	uint32_t i;

	if (g->last_tid == tid && g->last_tid_index >= 0)
		return g->last_tid_index;
	if (rsp_u64map__get(&g->tidmap, tid, &i))
		return -1;
	mg->last_tid = tid;
	mg->last_tid_index = (long)i;
	return (long)i;
}

/* ---- entities and their waits ------------------------------------------- */

/*
 * Device @dev as it serves vertex @owner's requests: one vertex per device
 * and requester. A disk is shared by everything on the machine (kworkers,
 * jbd2, a shell, rspd itself); as one vertex, every thread that used it
 * joined the component of the thread that waits on it, and a knot
 * {thread, disk} was never closed. Per requester, the disk waits (idle)
 * only for the thread whose requests end its idleness, and that thread
 * waits only for the disk serving it: the knot is its own.
 */
static uint32_t device_entity(struct rsp_waitgraph *g, uint32_t dev, uint32_t owner)
{
	uint64_t key = (uint64_t)dev << 32 | owner;
	char name[64];
	uint32_t e, v;

	if (!rsp_u64map__get(&g->devents, key, &e))
		return e;
	if (dev)
		snprintf(name, sizeof(name), "disk %u:%u for %.40s", dev >> 20, dev & 0xfffff,
			 g->vs[owner].v.name);
	else
		snprintf(name, sizeof(name), "disk ? for %.50s", g->vs[owner].v.name);
	v = new_vertex(g, RSP_WV_DISK, dev, name);
	if (v != UINT32_MAX)
		g->vs[v].v.owner = owner;
	if (v == UINT32_MAX ||
	    rsp_vec__reserve((void **)&g->ents, &g->cap_ents, g->nr_ents + 1, sizeof(*g->ents)) ||
	    rsp_u64map__put(&g->devents, key, (uint32_t)g->nr_ents)) {
		g->failed = true;
		return NO_ENT;
	}
	memset(&g->ents[g->nr_ents], 0, sizeof(g->ents[0]));
	g->ents[g->nr_ents].vertex = v;
	return (uint32_t)g->nr_ents++;
}

static uint32_t timer_vertex(struct rsp_waitgraph *g, uint32_t owner)
{
	char name[64];
	uint32_t v;

	if (g->vs[owner].timer != UINT32_MAX)
		return g->vs[owner].timer;
	snprintf(name, sizeof(name), "timer:%.57s", g->vs[owner].v.name);
	/* pseudo_vertex() may move g->vs: assign through a fresh index afterwards. */
	v = pseudo_vertex(g, RSP_WV_TIMER, owner, name);
	if (v != UINT32_MAX)
		g->vs[owner].timer = v;
	return v;
}

/* The vertex (and entity, if it waits itself) that ended a sleep of @owner. */
static uint32_t waker_target(struct rsp_waitgraph *g, const struct rsp_waker *w, uint32_t owner,
			     uint32_t *ent)
{
	char name[64];
	long ti;

	*ent = NO_ENT;
	switch (w->kind) {
	case RSP_WAKER_THREAD:
		ti = thread_index(g, w->id);
		if (ti >= 0) {
			*ent = (uint32_t)ti;
			return g->thread_vertex[ti];
		}
		snprintf(name, sizeof(name), "?[%u]", w->id);
		return pseudo_vertex(g, RSP_WV_THREAD, w->id, name);
	case RSP_WAKER_DEVICE:
		*ent = device_entity(g, w->id, owner);
		return *ent == NO_ENT ? UINT32_MAX : g->ents[*ent].vertex;
	case RSP_WAKER_TIMER:
		return timer_vertex(g, owner);
	case RSP_WAKER_SOFTIRQ:
		if (w->id == RSP_SOFTIRQ_NET_RX || w->id == RSP_SOFTIRQ_NET_TX)
			return pseudo_vertex(g, RSP_WV_NET, 0, "NIC");
		if (w->id == RSP_SOFTIRQ_TIMER || w->id == RSP_SOFTIRQ_HRTIMER)
			return timer_vertex(g, owner);
		if (w->id == RSP_SOFTIRQ_BLOCK) {
			*ent = device_entity(g, 0, owner);
			return *ent == NO_ENT ? UINT32_MAX : g->ents[*ent].vertex;
		}
		snprintf(name, sizeof(name), "softirq %s", rsp_softirq__name(w->id));
		return pseudo_vertex(g, RSP_WV_SOFTIRQ, w->id, name);
	case RSP_WAKER_IRQ:
		snprintf(name, sizeof(name), "irq %u %s", w->id, w->name ? w->name : "");
		return pseudo_vertex(g, RSP_WV_IRQ, w->id, name);
	default:
		return UINT32_MAX;
	}
}

static int add_wait(struct rsp_waitgraph *g, uint32_t ent, const struct wait *w)
{
	struct entity *e = &g->ents[ent];

	if (rsp_vec__reserve((void **)&e->waits, &e->cap, e->nr + 1, sizeof(*e->waits)))
		return -ENOMEM;
	e->waits[e->nr++] = *w;
	return 0;
}

/*
 * Whether @sg, a wait for block I/O (its stack says so: io_schedule,
 * folio_wait_writeback...), was ended by a thread that only relayed a
 * disk's completion: one the disk had woken just before (ext4's
 * end-of-I/O work or the flusher in a kworker finishing the writeback
 * that fsync() waits for). Then the sleeper waited for the disk serving
 * it, not for the relay: as an edge to the kworker, its component was
 * never closed and the knot {thread, disk} vanished (Redis with
 * appendfsync always). A wait of another kind (a backend waiting on the
 * WAL writer's latch) keeps its thread. Sets *@dev to the disk.
 */
static bool relayed_disk(struct rsp_waitgraph *g, const struct rsp_segment *sg, uint32_t tid,
			 uint32_t *dev)
{
	const struct rsp_tlthread *b;
	const struct rsp_segment *prev;
	uint64_t t = sg->waker.time ? sg->waker.time : sg->end;
	size_t lo;

	if (sg->waker.kind != RSP_WAKER_THREAD || sg->reason != RSP_SR_BLOCK_IO ||
	    sg->waker.id == tid || !(b = rsp_tlstore__find_thread(g->s, sg->waker.id)))
		return false;
	/* the waker's last sleep that ended by the waking */
	lo = rsp_gallop__above(b->segs, sizeof(b->segs[0]), offsetof(struct rsp_segment, end),
			       b->nr_segs, t);
	if (!lo)
		return false;
	prev = &b->segs[lo - 1];
	if (prev->kind != RSP_SEG_SLEEP || prev->waker.kind != RSP_WAKER_DEVICE ||
	    t - prev->end > RELAY_NS)
		return false;
	*dev = prev->waker.id;
	return true;
}

static int thread_waits(struct rsp_waitgraph *g, size_t ti)
{
	const struct rsp_tlthread *t = rsp_tlstore__thread(g->s, ti);
	uint32_t owner = g->thread_vertex[ti];
	struct entity *en = &g->ents[ti];

	/*
	 * Room for all of them at once (a thread's waits are at most its
	 * segments; the graph's store keeps only waits): growing by doubling
	 * copied the array at each step and faulted in pages it then left.
	 */
	if (t->nr_segs && rsp_vec__reserve((void **)&en->waits, &en->cap, en->nr + t->nr_segs,
					   sizeof(*en->waits)))
		return -ENOMEM;
	for (size_t i = 0; i < t->nr_segs; i++) {
		const struct rsp_segment *sg = &t->segs[i];
		struct wait w;
		uint32_t dev;

		if (i + PREFETCH < t->nr_segs) {
			const struct rsp_segment *ahead = &t->segs[i + PREFETCH];

			/* for the hash, unless the store made it (a TLB miss on a dump) */
			if (ahead->stack && !ahead->stack_hash) {
				__builtin_prefetch(ahead->stack);
				__builtin_prefetch(ahead->stack + 8);
			}
			if (ahead->waker.stack && !ahead->waker.stack_hash) {
				__builtin_prefetch(ahead->waker.stack);
				__builtin_prefetch(ahead->waker.stack + 8);
			}
		}
		if (sg->kind != RSP_SEG_SLEEP || sg->waker.kind == RSP_WAKER_NONE)
			continue;
		memset(&w, 0, sizeof(w));
		w.start = sg->start;
		w.end = sg->end;
		w.frac = 1.0;
		w.inferred = sg->flags & RSP_SEGF_WAKER_INFERRED;
		w.merged = sg->waker.nr_false;
		w.net = sg->waker.flags & RSP_WAKERF_NET;
		w.stack = sg->stack;
		w.nr_stack = sg->nr_stack;
		w.wstack = sg->waker.stack;
		w.nr_wstack = sg->waker.nr_stack;
		w.pid = t->tgid;
		w.wpid = sg->waker.tgid;
		w.hash = w.stack ? stack_hash(w.stack, w.nr_stack, sg->stack_hash) : 0;
		w.whash = w.wstack ? stack_hash(w.wstack, w.nr_wstack, sg->waker.stack_hash) : 0;
		if (relayed_disk(g, sg, t->tid, &dev)) {
			w.target_ent = device_entity(g, dev, owner);
			w.target_v =
				w.target_ent == NO_ENT ? UINT32_MAX : g->ents[w.target_ent].vertex;
			g->relayed++;
		} else {
			w.target_v = waker_target(g, &sg->waker, owner, &w.target_ent);
		}
		if (w.target_v == UINT32_MAX)
			return -ENOMEM;
		if (sg->waker.kind == RSP_WAKER_TIMER ||
		    (sg->waker.kind == RSP_WAKER_SOFTIRQ && w.target_v == g->vs[owner].timer))
			g->vs[owner].timer_sleep += sg->end - sg->start;
		/* Entities may have been added: thread entities come first, so ti is stable. */
		if (add_wait(g, (uint32_t)ti, &w))
			return -ENOMEM;
	}
	return 0;
}

/*
 * One idle interval of a device, split over the batch of requests that
 * ends it: each issuer's share is waited by the device serving it.
 */
static int idle_interval(struct rsp_waitgraph *g, uint32_t dev, const struct rsp_block_req **rs,
			 size_t n, size_t i, uint64_t from)
{
	uint64_t total = 0, to = rs[i]->issue;
	size_t j;

	for (j = i; j < n && rs[j]->issue <= to + BATCH_NS; j++)
		total += rs[j]->bytes ? rs[j]->bytes : 1;
	for (size_t k = i; k < j; k++) {
		long ti = rs[k]->tid ? thread_index(g, rs[k]->tid) : -1;
		uint32_t dent;
		struct wait w;

		if (ti < 0)
			continue;
		dent = device_entity(g, dev, g->thread_vertex[ti]);
		if (dent == NO_ENT)
			return -ENOMEM;
		memset(&w, 0, sizeof(w));
		w.start = from;
		w.end = to;
		w.frac = (double)(rs[k]->bytes ? rs[k]->bytes : 1) / (double)total;
		w.target_ent = (uint32_t)ti;
		w.target_v = g->thread_vertex[ti];
		if (add_wait(g, dent, &w))
			return -ENOMEM;
	}
	return 0;
}

/* A device waits, while idle, for the threads that issue to it next. */
static int device_waits(struct rsp_waitgraph *g, uint32_t dev, const struct rsp_block_req **rs,
			size_t n)
{
	uint64_t busy_until = 0;
	bool known = false;

	for (size_t i = 0; i < n; i++) {
		const struct rsp_block_req *r = rs[i];

		if (known && r->issue > busy_until && idle_interval(g, dev, rs, n, i, busy_until))
			return -ENOMEM;
		if (r->flags & RSP_BLKF_COMPLETE_NOT_SEEN) {
			known = false; /* when it ended is unknown: so is the idle time after */
			continue;
		}
		if (!known || r->complete > busy_until)
			busy_until = known && busy_until > r->complete ? busy_until : r->complete;
		known = true;
	}
	return 0;
}

static int all_device_waits(struct rsp_waitgraph *g)
{
	size_t n, m;
	const struct rsp_block_req *reqs = rsp_tlstore__block_reqs(g->s, &n);
	const struct rsp_block_req **rs = malloc((n ? n : 1) * sizeof(*rs));
	bool *done = calloc(n ? n : 1, sizeof(*done));
	int ret = 0;

	if (!rs || !done)
		ret = -ENOMEM;
	for (size_t i = 0; !ret && i < n; i++) {
		if (done[i])
			continue;
		m = 0;
		for (size_t j = i; j < n; j++) {
			if (reqs[j].dev == reqs[i].dev) {
				rs[m++] = &reqs[j];
				done[j] = true;
			}
		}
		ret = device_waits(g, reqs[i].dev, rs, m);
	}
	free(rs);
	free(done);
	return ret;
}

/* ---- edges and cascaded redistribution ---------------------------------- */

/* @stored: the store's hash of it (RSP_TLSTORE_STACK_HASHES), 0 if none. */
static uint64_t stack_hash(const uint64_t *ips, uint32_t nr, uint32_t stored)
{
	return stored ? stored : rsp_hash__stack32(ips, nr);
}

/* Keep the heaviest stacks: replace the lightest candidate when full. */
static void add_stack(struct cand *c, uint32_t *nr, const uint64_t *ips, uint32_t n, uint64_t h,
		      uint64_t weight, bool count, uint32_t pid, uint64_t time)
{
	uint32_t min = 0;

	if (!ips || !n)
		return;
	for (uint32_t i = 0; i < *nr; i++) {
		if (c[i].hash == h) {
			c[i].weight += weight;
			c[i].count += count;
			return;
		}
		if (c[i].weight < c[min].weight)
			min = i;
	}
	if (*nr < CANDIDATES)
		min = (*nr)++;
	else if (c[min].weight >= weight)
		return;
	c[min] = (struct cand){ips, n, pid, time, h, count, weight};
}

static struct edge_x *get_edge(struct rsp_waitgraph *g, uint32_t from, uint32_t to)
{
	uint64_t key = (uint64_t)from << 32 | to;
	struct edge_x *x;
	uint32_t i;

	/* Waits of one thread come together and mostly name the same waker. */
	if (g->nr_es && g->last_edge_key == key)
		return &g->es[g->last_edge];
	if (!rsp_u64map__get(&g->emap, key, &i)) {
		g->last_edge_key = key;
		g->last_edge = i;
		return &g->es[i];
	}
	if (rsp_vec__reserve((void **)&g->es, &g->cap_es, g->nr_es + 1, sizeof(*g->es)) ||
	    rsp_u64map__put(&g->emap, key, (uint32_t)g->nr_es)) {
		g->failed = true;
		return NULL;
	}
	g->last_edge_key = key;
	g->last_edge = (uint32_t)g->nr_es;
	x = &g->es[g->nr_es++];
	memset(x, 0, sizeof(*x));
	x->e.from = from;
	x->e.to = to;
	return x;
}

/*
 * @frac: w->frac scaled by the cascade (the wait itself is not copied for
 * it). @from is always the vertex of the entity @w belongs to.
 */
static void add_weight(struct rsp_waitgraph *g, uint32_t from, struct wait *w, double frac,
		       uint64_t len, bool direct)
{
	struct edge_x *x;
	uint64_t wt = (uint64_t)((double)len * frac + 0.5);

	if (w->edge1) {
		x = &g->es[w->edge1 - 1];
	} else {
		x = get_edge(g, from, w->target_v);
		if (!x)
			return;
		w->edge1 = (uint32_t)(x - g->es) + 1;
	}
	x->e.weight_ns += wt;
	if (direct) {
		x->e.direct_ns += wt;
		x->e.count++;
		if (w->inferred)
			x->e.inferred_ns += wt;
		if (w->net)
			x->e.net_ns += wt;
		if (w->merged)
			x->e.reattributed_ns += wt;
	}
	add_stack(x->wait, &x->nr_wait, w->stack, w->nr_stack, w->hash, wt, direct, w->pid,
		  w->start);
	add_stack(x->waker, &x->nr_waker, w->wstack, w->nr_wstack, w->whash, wt, direct, w->wpid,
		  w->end);
}

/*
 * First wait of @e that ends after @t (waits of one entity are in time
 * order, so that index is unique), searched from the last answer: a
 * thread's successive waits ask about one waker at nearby times, and the
 * cascade's deeper steps move the hint back and forth around them.
 */
static size_t first_after(struct entity *e, uint64_t t)
{
	if (!e->nr)
		return 0;
	e->hint = rsp_gallop__first_above(&e->spans[0].end, sizeof(*e->spans), e->nr, e->hint, t);
	return e->hint;
}

/* wPerf Figure 4: weigh [s, e) of @w, then what its waker waited on inside it. */
static void cascade(struct rsp_waitgraph *g, uint32_t *path, int depth, struct wait *w, uint64_t s,
		    uint64_t e, double frac)
{
	struct entity *b;
	double scaled = w->frac * frac;

	add_weight(g, g->ents[path[depth]].vertex, w, scaled, e - s, depth == 0);
	if (w->target_ent == NO_ENT || depth + 1 >= MAX_DEPTH)
		return;
	for (int i = 0; i <= depth; i++)
		if (path[i] == w->target_ent)
			return;
	path[depth + 1] = w->target_ent;
	b = &g->ents[w->target_ent];
	for (size_t i = first_after(b, s); i < b->nr && b->spans[i].start < e; i++) {
		const struct span *x = &b->spans[i];
		uint64_t s2 = x->start > s ? x->start : s, e2 = x->end < e ? x->end : e;

		if (e2 > s2)
			cascade(g, path, depth + 1, &b->waits[i], s2, e2, scaled);
	}
}

static void cascade_all(struct rsp_waitgraph *g)
{
	uint32_t path[MAX_DEPTH];

	for (size_t i = 0; i < g->nr_ents; i++) {
		struct entity *en = &g->ents[i];

		if (!en->nr)
			continue;
		en->spans = malloc(en->nr * sizeof(*en->spans));
		if (!en->spans) {
			g->failed = true;
			return;
		}
		for (size_t k = 0; k < en->nr; k++)
			en->spans[k] = (struct span){en->waits[k].end, en->waits[k].start};
	}
	for (size_t i = 0; i < g->nr_ents; i++) {
		const struct entity *en = &g->ents[i];

		path[0] = (uint32_t)i;
		for (size_t k = 0; k < en->nr; k++) {
			struct wait *w = &en->waits[k];

			if (w->end > w->start)
				cascade(g, path, 0, w, w->start, w->end, 1.0);
		}
	}
}

/* Edges without intervals behind them: a timer waits for its thread when idle. */
static void direct_edge(struct rsp_waitgraph *g, uint32_t from, uint32_t to, uint64_t ns)
{
	struct edge_x *x;

	if (!ns || from == UINT32_MAX || to == UINT32_MAX)
		return;
	x = get_edge(g, from, to);
	if (x) {
		x->e.weight_ns += ns;
		x->e.direct_ns += ns;
		x->e.count++;
		x->structural = true;
	}
}

static void timer_edges(struct rsp_waitgraph *g)
{
	size_t n = g->nr_vs;

	for (size_t v = 0; v < n; v++) {
		struct vtx *x = &g->vs[v];

		if (x->timer == UINT32_MAX)
			continue;
		direct_edge(g, x->timer, (uint32_t)v,
			    x->v.span_ns > x->timer_sleep ? x->v.span_ns - x->timer_sleep : 0);
	}
}

static int cmp_u64pair(const void *a, const void *b)
{
	const uint64_t *x = a, *y = b;

	return x[0] < y[0] ? -1 : x[0] > y[0];
}

/* The short-lived group waits for its parent whenever none of them is alive. */
static void short_edge(struct rsp_waitgraph *g, uint32_t v)
{
	struct vtx *x = &g->vs[v];
	uint64_t(*iv)[2] = malloc(x->v.nr_threads * sizeof(*iv)), end = 0, idle = 0;
	long pi = thread_index(g, x->v.id);

	if (!iv) {
		g->failed = true;
		return;
	}
	for (uint32_t i = 0; i < x->v.nr_threads; i++) {
		const struct rsp_tlthread *t = rsp_tlstore__find_thread(g->s, x->tids[i]);

		iv[i][0] = t->forked;
		iv[i][1] = t->exited;
	}
	qsort(iv, x->v.nr_threads, sizeof(*iv), cmp_u64pair);
	for (uint32_t i = 0; i < x->v.nr_threads; i++) {
		if (end && iv[i][0] > end)
			idle += iv[i][0] - end;
		if (iv[i][1] > end)
			end = iv[i][1];
	}
	free(iv);
	if (pi >= 0)
		direct_edge(g, v, g->thread_vertex[pi], idle);
}

/* ---- analysis ----------------------------------------------------------- */

static int cmp_edge(const void *a, const void *b)
{
	const struct edge_x *x = a, *y = b;

	if (x->e.weight_ns != y->e.weight_ns)
		return x->e.weight_ns > y->e.weight_ns ? -1 : 1;
	if (x->e.from != y->e.from)
		return x->e.from < y->e.from ? -1 : 1;
	return x->e.to < y->e.to ? -1 : x->e.to > y->e.to;
}

static int cmp_cand(const void *a, const void *b)
{
	const struct cand *x = a, *y = b;

	return x->weight > y->weight ? -1 : x->weight < y->weight;
}

static void top_stacks(struct cand *c, uint32_t nr, struct rsp_wstack *out, uint32_t *n)
{
	if (nr > 1)
		qsort(c, nr, sizeof(*c), cmp_cand);
	*n = nr < RSP_WG_TOP_STACKS ? nr : RSP_WG_TOP_STACKS;
	for (uint32_t i = 0; i < *n; i++)
		out[i] = (struct rsp_wstack){c[i].ips,	  c[i].nr,  c[i].count,
					     c[i].weight, c[i].pid, c[i].time};
}

/* Sort edges heaviest first, settle their stacks, re-index the map. */
static int finish_edges(struct rsp_waitgraph *g)
{
	if (g->nr_es > 1)
		qsort(g->es, g->nr_es, sizeof(*g->es), cmp_edge);
	g->last_edge_key = UINT64_MAX;
	rsp_u64map__exit(&g->emap);
	for (size_t i = 0; i < g->nr_es; i++) {
		struct edge_x *x = &g->es[i];

		top_stacks(x->wait, x->nr_wait, x->e.wait_stacks, &x->e.nr_wait_stacks);
		top_stacks(x->waker, x->nr_waker, x->e.waker_stacks, &x->e.nr_waker_stacks);
		if (rsp_u64map__put(&g->emap, (uint64_t)x->e.from << 32 | x->e.to, (uint32_t)i))
			return -ENOMEM;
	}
	g->in_knot = calloc(g->nr_es ? g->nr_es : 1, sizeof(*g->in_knot));
	return g->in_knot ? 0 : -ENOMEM;
}

static bool edge_active(const struct rsp_waitgraph *g, size_t i)
{
	const struct rsp_wedge *e = &g->es[i].e;

	return !e->removed && !g->vs[e->from].v.removed && !g->vs[e->to].v.removed;
}

/* Keep only what the threads of process @pid reach. */
static uint64_t noise_floor(const struct rsp_waitgraph *g)
{
	return (uint64_t)(g->o.noise * (double)(g->ref_end - g->ref_start));
}

/*
 * Keep only what the threads of process @pid reach, through edges over the
 * noise floor, and judge weights against the span of its threads in the
 * window, not the whole window: a process that lived 0.2 s of a 10 s
 * window had no edge heavy enough to hold a knot.
 */
static int restrict_pid(struct rsp_waitgraph *g, struct rsp_buf *err)
{
	bool *reach = calloc(g->nr_vs ? g->nr_vs : 1, sizeof(*reach)), changed = true, any = false;
	uint64_t lo = UINT64_MAX, hi = 0, floor;

	if (!reach)
		return -ENOMEM;
	for (size_t v = 0; v < g->nr_vs; v++) {
		for (uint32_t k = 0; k < g->vs[v].v.nr_threads; k++) {
			const struct rsp_tlthread *t =
				rsp_tlstore__find_thread(g->s, g->vs[v].tids[k]);

			if (!t || !kept(g, t))
				continue;
			reach[v] = any = true;
			if ((t->first > g->start ? t->first : g->start) < lo)
				lo = t->first > g->start ? t->first : g->start;
			if ((t->last < g->end ? t->last : g->end) > hi)
				hi = t->last < g->end ? t->last : g->end;
		}
	}
	if (any && hi > lo) {
		g->ref_start = lo;
		g->ref_end = hi;
	}
	floor = noise_floor(g);
	while (changed) {
		changed = false;
		for (size_t i = 0; i < g->nr_es; i++) {
			const struct rsp_wedge *e = &g->es[i].e;

			if (reach[e->from] && !reach[e->to] &&
			    (e->weight_ns >= floor || g->es[i].structural))
				reach[e->to] = changed = true;
		}
	}
	for (size_t v = 0; v < g->nr_vs; v++)
		g->vs[v].v.removed = !reach[v];
	free(reach);
	if (!any && g->o.pid <= 0) {
		rsp_buf__puts(err, "no process of the cgroup has a thread in the window; check "
				   "the filter, or widen --last");
		return -ESRCH;
	}
	if (!any) {
		rsp_buf__printf(err,
				"process %ld has no thread in the window; check the pid, or "
				"widen --last",
				g->o.pid);
		return -ESRCH;
	}
	return 0;
}

/* The components of the graph of active edges (comp[v] -1: a removed vertex). */
static int scc_run(const struct rsp_waitgraph *g, struct rsp_scc *c)
{
	size_t n = g->nr_vs, *start = calloc(n + 2, sizeof(size_t)),
	       *fill = calloc(n + 1, sizeof(size_t));
	uint32_t *to = malloc((g->nr_es ? g->nr_es : 1) * sizeof(uint32_t));
	bool *skip = malloc((n ? n : 1) * sizeof(bool));
	int ret = -ENOMEM;

	memset(c, 0, sizeof(*c));
	if (!start || !fill || !to || !skip)
		goto out;
	for (size_t i = 0; i < g->nr_es; i++)
		if (edge_active(g, i))
			start[g->es[i].e.from + 1]++;
	for (size_t v = 0; v < n; v++) {
		start[v + 1] += start[v];
		skip[v] = g->vs[v].v.removed;
	}
	for (size_t i = 0; i < g->nr_es; i++)
		if (edge_active(g, i))
			to[start[g->es[i].e.from] + fill[g->es[i].e.from]++] = g->es[i].e.to;
	ret = rsp_scc__run(c, n, start, to, skip);
out:
	free(start);
	free(fill);
	free(to);
	free(skip);
	return ret;
}

/* What one closed SCC (no edge leaving it) is. */
struct comp_info {
	size_t nr_v, nr_e;
	bool self_loop, device, leaves;
	double util;
	uint64_t runnable, run;
	long lightest; /* edge index */
};

static void comp_infos(const struct rsp_waitgraph *g, const struct rsp_scc *c, struct comp_info *ci)
{
	for (size_t v = 0; v < g->nr_vs; v++) {
		const struct rsp_wvertex *x = &g->vs[v].v;

		if (c->comp[v] < 0)
			continue;
		ci[c->comp[v]].nr_v++;
		ci[c->comp[v]].util += x->cpu_util;
		ci[c->comp[v]].runnable += x->runnable_ns;
		ci[c->comp[v]].run += x->run_ns;
		if (x->kind == RSP_WV_DISK || x->kind == RSP_WV_NET)
			ci[c->comp[v]].device = true;
	}
	for (size_t i = 0; i < g->nr_es; i++) {
		const struct rsp_wedge *e = &g->es[i].e;
		struct comp_info *k;

		if (!edge_active(g, i))
			continue;
		k = &ci[c->comp[e->from]];
		if (c->comp[e->from] != c->comp[e->to]) {
			k->leaves = true;
			continue;
		}
		k->nr_e++;
		k->self_loop |= e->from == e->to;
		/* Edges are sorted heaviest first: the last one seen is the lightest. */
		k->lightest = (long)i;
	}
}

/* Every vertex has exactly one edge out inside the component: a simple cycle. */
static bool simple_cycle(const struct comp_info *k)
{
	return k->nr_v == k->nr_e;
}

static int add_knot(struct rsp_waitgraph *g, const struct rsp_scc *c, long comp,
		    const struct comp_info *k, bool background, bool refined)
{
	struct rsp_wknot *kn;

	if (rsp_vec__reserve((void **)&g->knots, &g->cap_knots, g->nr_knots + 1, sizeof(*g->knots)))
		return -ENOMEM;
	kn = &g->knots[g->nr_knots];
	memset(kn, 0, sizeof(*kn));
	kn->vertices = malloc(k->nr_v * sizeof(uint32_t));
	kn->edges = malloc((k->nr_e ? k->nr_e : 1) * sizeof(uint32_t));
	if (!kn->vertices || !kn->edges) {
		free(kn->vertices);
		free(kn->edges);
		return -ENOMEM;
	}
	g->nr_knots++;
	for (size_t v = 0; v < g->nr_vs; v++)
		if (c->comp[v] == comp)
			kn->vertices[kn->nr_vertices++] = (uint32_t)v;
	for (size_t i = 0; i < g->nr_es; i++) {
		if (edge_active(g, i) && c->comp[g->es[i].e.from] == comp &&
		    c->comp[g->es[i].e.to] == comp) {
			kn->edges[kn->nr_edges++] = (uint32_t)i;
			g->in_knot[i] = true;
		}
	}
	kn->background = background;
	kn->refined = refined;
	kn->cpu_util = k->util;
	kn->runnable_ns = k->runnable;
	kn->wants_cores = k->run && k->runnable * 10 >= k->run;
	return 0;
}

/* Set a background knot aside. */
static void remove_comp(struct rsp_waitgraph *g, const struct rsp_scc *c, long comp)
{
	for (size_t v = 0; v < g->nr_vs; v++)
		if (c->comp[v] == comp)
			g->vs[v].v.removed = g->vs[v].v.background = true;
}

/*
 * Mark in @bg the vertices still in the graph with an edge that holds it
 * together (over the noise floor, not trimmed) into a background knot set
 * aside by an earlier pass: they wait for that knot, not for nothing.
 */
static void waits_on_background(const struct rsp_waitgraph *g, bool *bg)
{
	memset(bg, 0, (g->nr_vs ? g->nr_vs : 1) * sizeof(*bg));
	for (size_t i = 0; i < g->nr_es; i++) {
		const struct rsp_wedge *e = &g->es[i].e;

		if (!e->removed && !g->vs[e->from].v.removed && g->vs[e->to].v.background)
			bg[e->from] = true;
	}
}

static void clear_final(struct rsp_waitgraph *g)
{
	size_t keep = 0;

	for (size_t i = 0; i < g->nr_knots; i++) {
		if (g->knots[i].background) {
			g->knots[keep++] = g->knots[i];
			continue;
		}
		for (size_t k = 0; k < g->knots[i].nr_edges; k++)
			g->in_knot[g->knots[i].edges[k]] = false;
		free(g->knots[i].vertices);
		free(g->knots[i].edges);
	}
	g->nr_knots = keep;
	g->nr_sinks = 0;
}

/*
 * Refine component @x: remove its lightest edge if it is neither a single
 * vertex nor a simple cycle and that edge weighs at most @limit.
 */
static bool trim(struct rsp_waitgraph *g, const struct comp_info *x, uint64_t limit, bool *refined)
{
	if (x->nr_v < 2 || simple_cycle(x) || g->es[x->lightest].e.weight_ns > limit)
		return false;
	g->es[x->lightest].e.removed = true;
	*refined = true;
	return true;
}

/*
 * One pass over the SCCs: closed ones are knots, sinks or trimmed, the
 * others only trimmed. Returns 1 if it changed the graph (a background
 * knot removed, an edge trimmed): the caller then looks again.
 */
static int analyse_pass(struct rsp_waitgraph *g, uint64_t limit, bool *refined)
{
	struct rsp_scc c;
	struct comp_info *ci = NULL;
	bool *bg = NULL;
	int ret, changed = 0;

	ret = scc_run(g, &c);
	if (!ret && (!(ci = calloc(c.ncomp ? (size_t)c.ncomp : 1, sizeof(*ci))) ||
		     !(bg = malloc((g->nr_vs ? g->nr_vs : 1) * sizeof(*bg)))))
		ret = -ENOMEM;
	if (ret)
		goto out;
	comp_infos(g, &c, ci);
	waits_on_background(g, bg);
	/*
	 * A component whose threads wait for a background knot set aside
	 * leaves, through it: the waiters of a seller asleep on its timer
	 * are no knot of their own for the few waits left among them.
	 */
	for (size_t v = 0; v < g->nr_vs; v++)
		if (bg[v] && c.comp[v] >= 0)
			ci[c.comp[v]].leaves = true;
	clear_final(g);
	for (long k = 0; k < c.ncomp && !ret; k++) {
		struct comp_info *x = &ci[k];

		/*
		 * A component with an edge out is no knot, but trimmed as one:
		 * the thread of wPerf's Figure 1 that fdatasyncs (B) waited 2%
		 * of its time for the producer (A) when the queue ran empty,
		 * and A, which had filled the file at its start, waits for
		 * its own disk. That light B -> A made {A, B, disk for B} one
		 * component leaving to A's disk, and B's knot vanished in some
		 * runs. An edge of little local impact has little global
		 * impact (wPerf 3.2), closed component or not.
		 */
		if (x->leaves) {
			changed |= trim(g, x, limit, refined);
			continue;
		}
		if (x->nr_v == 1 && !x->self_loop) {
			for (size_t v = 0; v < g->nr_vs && !ret; v++) {
				if (c.comp[v] != k || bg[v])
					continue;
				ret = rsp_vec__reserve((void **)&g->sinks, &g->cap_sinks,
						       g->nr_sinks + 1, sizeof(*g->sinks));
				if (!ret)
					g->sinks[g->nr_sinks++] = (uint32_t)v;
			}
			continue;
		}
		if (!x->device && x->util < 1.0) {
			ret = add_knot(g, &c, k, x, true, *refined);
			remove_comp(g, &c, k);
			changed = 1;
		} else if (trim(g, x, limit, refined)) {
			changed = 1;
		} else {
			ret = add_knot(g, &c, k, x, false, *refined);
		}
	}
out:
	free(bg);
	free(ci);
	rsp_scc__exit(&c);
	return ret ? ret : changed;
}

static int cmp_knot(const void *a, const void *b)
{
	const struct rsp_wknot *x = a, *y = b;

	if (x->background != y->background)
		return x->background ? 1 : -1;
	/* Edges are indexes into the sorted edge array: the lower, the heavier. */
	return x->edges[0] < y->edges[0] ? -1 : x->edges[0] > y->edges[0];
}

/* Sinks most waited for first. */
static int sort_sinks(struct rsp_waitgraph *g)
{
	uint64_t *in = calloc(g->nr_vs ? g->nr_vs : 1, sizeof(*in));

	if (!in)
		return -ENOMEM;
	for (size_t i = 0; i < g->nr_es; i++)
		in[g->es[i].e.to] += g->es[i].e.weight_ns;
	for (size_t i = 1; i < g->nr_sinks; i++) {
		uint32_t v = g->sinks[i];
		size_t j = i;

		for (; j > 0 && in[g->sinks[j - 1]] < in[v]; j--)
			g->sinks[j] = g->sinks[j - 1];
		g->sinks[j] = v;
	}
	free(in);
	return 0;
}

static int analyse(struct rsp_waitgraph *g)
{
	uint64_t limit = (uint64_t)(g->o.threshold * (double)(g->ref_end - g->ref_start));
	uint64_t floor = noise_floor(g);
	bool refined = false;
	int ret;

	/* A timer waits for its thread only while the thread runs: tiny, but not noise. */
	for (size_t i = 0; i < g->nr_es; i++)
		if (g->es[i].e.weight_ns < floor && !g->es[i].structural)
			g->es[i].e.removed = true;
	while ((ret = analyse_pass(g, limit, &refined)) == 1)
		;
	if (ret)
		return ret;
	for (size_t i = 0; i < g->nr_knots; i++)
		if (!g->knots[i].nr_edges)
			g->knots[i].edges[0] = UINT32_MAX;
	if (g->nr_knots > 1)
		qsort(g->knots, g->nr_knots, sizeof(*g->knots), cmp_knot);
	return sort_sinks(g);
}

/* ---- construction ------------------------------------------------------- */

/*
 * Short-lived threads run one after another: their group uses a CPU for
 * its running and runnable time over the span from the first birth to the
 * last death, not the sum of each one's (near 100%) utilisation.
 */
static void short_utils(struct rsp_waitgraph *g)
{
	for (size_t v = 0; v < g->nr_vs; v++) {
		struct rsp_wvertex *x = &g->vs[v].v;
		uint64_t lo = UINT64_MAX, hi = 0;

		if (x->kind != RSP_WV_SHORT)
			continue;
		for (uint32_t i = 0; i < x->nr_threads; i++) {
			const struct rsp_tlthread *t = rsp_tlstore__find_thread(g->s, x->tids[i]);

			lo = t->first < lo ? t->first : lo;
			hi = t->last > hi ? t->last : hi;
		}
		x->cpu_util =
			hi > lo ? (double)(x->run_ns + x->runnable_ns) / (double)(hi - lo) : 0;
	}
}

static int build(struct rsp_waitgraph *g)
{
	size_t nt = rsp_tlstore__nr_threads(g->s);
	int ret = thread_vertices(g);

	if (ret)
		return ret;
	g->ents = calloc(nt ? nt : 1, sizeof(*g->ents));
	if (!g->ents)
		return -ENOMEM;
	g->cap_ents = g->nr_ents = nt;
	for (size_t i = 0; i < nt; i++)
		g->ents[i].vertex = g->thread_vertex[i];
	for (size_t i = 0; i < nt; i++)
		if ((ret = thread_waits(g, i)))
			return ret;
	if ((ret = all_device_waits(g)))
		return ret;
	cascade_all(g);
	timer_edges(g);
	for (size_t v = 0; v < g->nr_vs; v++)
		if (g->vs[v].v.kind == RSP_WV_SHORT)
			short_edge(g, (uint32_t)v);
	return g->failed ? -ENOMEM : finish_edges(g);
}

struct rsp_waitgraph *rsp_waitgraph__new(const struct rsp_tlstore *s,
					 const struct rsp_waitgraph_opts *o, struct rsp_buf *err)
{
	struct rsp_waitgraph *g = calloc(1, sizeof(*g));
	int ret;

	if (!g) {
		rsp_buf__puts(err, "out of memory building the wait-for graph");
		errno = ENOMEM;
		return NULL;
	}
	g->s = s;
	g->last_tid_index = -1;
	if (o)
		g->o = *o;
	else
		rsp_waitgraph_opts__init(&g->o);
	rsp_tlstore__span(s, &g->start, &g->end);
	if (g->end <= g->start)
		g->end = g->start + 1;
	g->ref_start = g->start;
	g->ref_end = g->end;
	rsp_u64map__init(&g->vkeys);
	rsp_u64map__init(&g->tidmap);
	rsp_u64map__init(&g->devents);
	rsp_u64map__init(&g->emap);
	ret = build(g);
	if (!ret)
		short_utils(g);
	if (!ret && (g->o.pid > 0 || g->o.keep_tgid))
		ret = restrict_pid(g, err);
	if (!ret)
		ret = analyse(g);
	if (ret) {
		if (!err->len)
			rsp_buf__puts(err, "out of memory building the wait-for graph; ask for "
					   "a shorter --last");
		rsp_waitgraph__delete(g);
		errno = ret == -ESRCH ? ESRCH : ENOMEM;
		return NULL;
	}
	return g;
}

void rsp_waitgraph__delete(struct rsp_waitgraph *g)
{
	if (!g)
		return;
	for (size_t i = 0; i < g->nr_vs; i++)
		free(g->vs[i].tids);
	for (size_t i = 0; i < g->nr_ents; i++) {
		free(g->ents[i].waits);
		free(g->ents[i].spans);
	}
	for (size_t i = 0; i < g->nr_knots; i++) {
		free(g->knots[i].vertices);
		free(g->knots[i].edges);
	}
	free(g->vs);
	free(g->ents);
	free(g->es);
	free(g->knots);
	free(g->sinks);
	free(g->in_knot);
	free(g->thread_vertex);
	rsp_u64map__exit(&g->vkeys);
	rsp_u64map__exit(&g->tidmap);
	rsp_u64map__exit(&g->devents);
	rsp_u64map__exit(&g->emap);
	free(g);
}

size_t rsp_waitgraph__nr_vertices(const struct rsp_waitgraph *g)
{
	return g->nr_vs;
}

const struct rsp_wvertex *rsp_waitgraph__vertex(const struct rsp_waitgraph *g, size_t i)
{
	return i < g->nr_vs ? &g->vs[i].v : NULL;
}

size_t rsp_waitgraph__nr_edges(const struct rsp_waitgraph *g)
{
	return g->nr_es;
}

const struct rsp_wedge *rsp_waitgraph__edge(const struct rsp_waitgraph *g, size_t i)
{
	return i < g->nr_es ? &g->es[i].e : NULL;
}

const struct rsp_wedge *rsp_waitgraph__find_edge(const struct rsp_waitgraph *g, uint32_t from,
						 uint32_t to)
{
	uint32_t i;

	return rsp_u64map__get(&g->emap, (uint64_t)from << 32 | to, &i) ? NULL : &g->es[i].e;
}

long rsp_waitgraph__vertex_of(const struct rsp_waitgraph *g, uint32_t tid)
{
	long i = thread_index(g, tid);

	return i < 0 ? -1 : (long)g->thread_vertex[i];
}

size_t rsp_waitgraph__nr_knots(const struct rsp_waitgraph *g)
{
	return g->nr_knots;
}

const struct rsp_wknot *rsp_waitgraph__knot(const struct rsp_waitgraph *g, size_t i)
{
	return i < g->nr_knots ? &g->knots[i] : NULL;
}

size_t rsp_waitgraph__nr_sinks(const struct rsp_waitgraph *g)
{
	return g->nr_sinks;
}

uint32_t rsp_waitgraph__sink(const struct rsp_waitgraph *g, size_t i)
{
	return i < g->nr_sinks ? g->sinks[i] : UINT32_MAX;
}

bool rsp_waitgraph__in_knot(const struct rsp_waitgraph *g, size_t edge)
{
	return edge < g->nr_es && g->in_knot[edge];
}

void rsp_waitgraph__window(const struct rsp_waitgraph *g, uint64_t *start, uint64_t *end)
{
	*start = g->start;
	*end = g->end;
}

void rsp_waitgraph__reference(const struct rsp_waitgraph *g, uint64_t *start, uint64_t *end)
{
	*start = g->ref_start;
	*end = g->ref_end;
}

uint64_t rsp_waitgraph__relayed(const struct rsp_waitgraph *g)
{
	return g->relayed;
}
