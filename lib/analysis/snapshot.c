// SPDX-License-Identifier: LGPL-2.1
/*
 * The recursive snapshot: "Recursive Stack Making" of the Recursive
 * Systemic Profiler over a timeline store. See rsp/snapshot.h for what it
 * computes; the comments here say how.
 *
 * explain(node, T, a, b) walks T's segments over [a, b] and adds their time
 * under @node: runs and runnable stretches as leaves, sleeps as SLEEP
 * children whose time is, when a thread W ended the sleep, W's own time
 * over the sleep: explain(thread node of W, W, sleep). Intervals only
 * shrink going down and a thread on the pseudostack is asleep over all of
 * its children's intervals, so the recursion ends; depth and node limits
 * bound it anyway. Siblings with the same key are one node (a hash map
 * from (parent, key) to the node), totals are summed bottom-up at the end.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/perf_event.h>
#include <rsp/record.h>
#include <rsp/snapshot.h>
#include "internal/schema.h"
#include "internal/hash.h"
#include "internal/u64map.h"
#include "internal/vec.h"
#include "internal/gallop.h"

#define MAX_DEPTH_LIMIT 64
#define MERGE_MAX	1000 /* timed-out sleeps merged into one de-facto sleep, at most */
#define REQ_SCAN	64   /* a sleep's block requests looked at, at most */
#define CAUSE_SCAN	64   /* segments walked back to find who started a waker's run */

static const char *const cat_names[RSP_CAT__NR] = {
	[RSP_CAT_UNDERSTOOD] = "understood",	   [RSP_CAT_SPIN] = "spin",
	[RSP_CAT_BLOCKING_IO] = "blocking_io",	   [RSP_CAT_NOT_SAMPLED] = "not_sampled",
	[RSP_CAT_IO_QUEUE] = "io_queue",	   [RSP_CAT_SCHEDULER] = "scheduler",
	[RSP_CAT_HARDWARE] = "hardware",	   [RSP_CAT_INVOLUNTARY] = "involuntary",
	[RSP_CAT_MISC_KERNEL] = "misc_kernel",	   [RSP_CAT_TIMED_OUT] = "timed_out",
	[RSP_CAT_DELIBERATE] = "deliberate_sleep", [RSP_CAT_NETWORK] = "network",
	[RSP_CAT_OTHER_PATH] = "other_path",	   [RSP_CAT_UNKNOWN] = "unknown",
};

static const char *const cat_labels[RSP_CAT__NR] = {
	[RSP_CAT_UNDERSTOOD] = "in understood functions",
	[RSP_CAT_SPIN] = "busy waiting (spin)",
	[RSP_CAT_BLOCKING_IO] = "in blocking I/O",
	[RSP_CAT_NOT_SAMPLED] = "running but not sampled",
	[RSP_CAT_IO_QUEUE] = "I/O queue overhead",
	[RSP_CAT_SCHEDULER] = "scheduler overhead",
	[RSP_CAT_HARDWARE] = "waits \"for\" hardware",
	[RSP_CAT_INVOLUNTARY] = "involuntary sleeps",
	[RSP_CAT_MISC_KERNEL] = "miscellaneous kernel blocks",
	[RSP_CAT_TIMED_OUT] = "waits that timed out",
	[RSP_CAT_DELIBERATE] = "deliberate sleeps",
	[RSP_CAT_NETWORK] = "network waits",
	[RSP_CAT_OTHER_PATH] = "waiting on other path",
	[RSP_CAT_UNKNOWN] = "unknown",
};

const char *rsp_cat__name(enum rsp_cat c)
{
	return (unsigned)c < RSP_CAT__NR ? cat_names[c] : "?";
}

const char *rsp_cat__label(enum rsp_cat c)
{
	return (unsigned)c < RSP_CAT__NR ? cat_labels[c] : "?";
}

void rsp_snapshot_opts__init(struct rsp_snapshot_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->pid = -1;
	o->fit_ns = 100000;
	o->merge_ns = 100000;
	o->sample_slack_ns = 20000;
	o->max_depth = 32;
	o->max_nodes = 200000;
	o->max_pieces = 500000;
}

/* What the walk knows of one thread. */
struct tinfo {
	const struct rsp_tlthread *t; /* NULL: not in the store */
	uint32_t tid;
	bool base;		/* a thread of the process of interest */
	bool started;		/* forked in the range by PID or a thread it started, not of PID */
	struct rsp_span *cover; /* started: the spans explain() walked, in call order */
	size_t nr_cover, cap_cover;
	bool involved; /* explained somewhere */
	uint32_t base_root, other_root;
	/* the burst (run from wakeup to sleep, preemptions included) last looked at */
	size_t bj, bk;
	bool burst_valid;
	uint32_t burst_node; /* the RUN node that counted this burst */
	const struct rsp_csample *bs;
	size_t bn;
	/* its block requests, sorted by insert (the store's index) */
	const struct rsp_block_req *const *rq;
	uint64_t *rq_reach; /* [k]: the latest end of rq[0..k] (UINT64_MAX: one never ended) */
	size_t rq_n;
	bool rq_found;
	/* the wakeups and forks it did, in time order (the store's index) */
	const struct rsp_wake *wk;
	size_t wk_n;
	bool wk_found;
};

struct rsp_span {
	uint64_t a, b;
};

/* Unknown time, by cause. */
enum { UNK_PLAIN, UNK_NOT_DELIVERED, UNK_GAP };

struct rsp_snapshot {
	struct rsp_snapshot_opts o;
	const struct rsp_tlstore *store;
	const struct rsp_samples *samples;
	struct rsp_tlstore *own_store; /* rsp_snapshot__from_window() */
	uint64_t from, to;
	/* the tree */
	struct rsp_snode *nodes;
	uint64_t *nkey; /* per node: the hash it was filed under */
	size_t nr_nodes, cap_nodes;
	struct rsp_u64map nmap;
	uint32_t *roots;
	size_t nr_roots, cap_roots;
	uint32_t next_path;
	/* threads, in blocks that never move (pointers to them are kept across calls) */
	struct tinfo **ti;
	size_t nr_ti, nr_blocks;
	struct rsp_u64map tmap;
	uint32_t *threads;
	size_t nr_threads;
	/* the pseudostack being built: tids */
	uint32_t stk[MAX_DEPTH_LIMIT + 1];
	unsigned depth;
	/* followed wakeups */
	struct rsp_slink *links;
	size_t nr_links, cap_links;
	/* the chronological pieces of path 0; cur_piece: the one being explained */
	struct rsp_spiece *pieces;
	size_t nr_pieces, cap_pieces;
	uint32_t cur_piece;
	bool pieces_truncated;
	struct rsp_snapshot_totals tot;
	bool failed;
};

/* A stack's hash (its length mixed in: a prefix is another stack). */
static uint64_t stack_hash(const uint64_t *ips, uint32_t nr)
{
	return rsp_hash__stack(ips, nr);
}

/*
 * A sleep's stack's hash, as its store made it (RSP_TLSTORE_STACK_HASHES):
 * a sleep's stack lies where its record lies (in a dump, the mapped file),
 * and reading it here, the first read since the timeline's pass, was a TLB
 * and cache miss per sleep: two thirds of explain()'s own time on an RPC
 * client's window. 32 bits of hash and the length: two stacks of one
 * length under one node with the same reason and waker would be one node
 * once in 2^31.
 */
static uint64_t seg_hash(const struct rsp_segment *g)
{
	uint32_t h = g->stack_hash;

	if (!g->stack)
		return 0;
	if (!h)
		h = rsp_hash__stack32(g->stack, g->nr_stack);
	return (uint64_t)g->nr_stack << 32 | h;
}

static uint64_t min64(uint64_t a, uint64_t b)
{
	return a < b ? a : b;
}

static uint64_t max64(uint64_t a, uint64_t b)
{
	return a > b ? a : b;
}

/* ---- nodes -------------------------------------------------------------- */

struct nkey {
	uint32_t parent;
	uint8_t kind, reason, waker_kind;
	uint32_t id;   /* THREAD: tid; SLEEP: waker id */
	uint32_t path; /* roots */
	uint64_t hash; /* SLEEP, SAMPLE: the stack's */
};

static uint64_t key_hash(const struct nkey *k, unsigned salt)
{
	uint64_t h = rsp_hash__mix((uint64_t)k->parent << 32 | (uint64_t)k->kind << 16 |
				   k->reason << 8 | k->waker_kind) ^
		     rsp_hash__mix((uint64_t)k->id << 32 | k->path) ^ rsp_hash__mix(k->hash + salt);

	return rsp_hash__key(h);
}

static bool key_eq(const struct rsp_snapshot *s, uint32_t i, const struct nkey *k, uint64_t h)
{
	const struct rsp_snode *n = &s->nodes[i];

	return s->nkey[i] == h && n->parent == k->parent && n->kind == k->kind &&
	       n->reason == k->reason && n->waker_kind == k->waker_kind &&
	       (k->kind == RSP_SN_THREAD ? n->tid : n->waker_id) == k->id &&
	       (k->parent != RSP_SNODE_NONE || n->path == k->path);
}

/* Room for one more node (and its key): both vectors grow together. */
static int grow_nodes(struct rsp_snapshot *s)
{
	size_t cap = s->cap_nodes;

	if (rsp_vec__reserve((void **)&s->nodes, &cap, s->nr_nodes + 1, sizeof(*s->nodes)))
		return -ENOMEM;
	cap = s->cap_nodes;
	if (rsp_vec__reserve((void **)&s->nkey, &cap, s->nr_nodes + 1, sizeof(*s->nkey)))
		return -ENOMEM;
	s->cap_nodes = cap;
	return 0;
}

/*
 * The child of k->parent with key @k, made if new; RSP_SNODE_NONE when the
 * node limit is reached or memory runs out (the caller then keeps the time
 * on the parent).
 */
static uint32_t get_node(struct rsp_snapshot *s, const struct nkey *k, uint32_t tid, uint32_t tgid)
{
	struct rsp_snode *n;
	uint32_t idx;

	for (unsigned salt = 0; salt < 8; salt++) {
		uint64_t h = key_hash(k, salt);

		if (rsp_u64map__get(&s->nmap, h, &idx)) {
			if (s->nr_nodes >= s->o.max_nodes) {
				s->tot.truncated = true;
				return RSP_SNODE_NONE;
			}
			if ((s->nr_nodes == s->cap_nodes && grow_nodes(s)) ||
			    rsp_u64map__put(&s->nmap, h, (uint32_t)s->nr_nodes)) {
				s->failed = true;
				return RSP_SNODE_NONE;
			}
			idx = (uint32_t)s->nr_nodes++;
			n = &s->nodes[idx];
			memset(n, 0, sizeof(*n));
			s->nkey[idx] = h;
			n->kind = k->kind;
			n->reason = k->reason;
			n->waker_kind = k->waker_kind;
			n->tid = tid;
			n->tgid = tgid;
			n->waker_id = k->kind == RSP_SN_THREAD ? 0 : k->id;
			n->parent = k->parent;
			n->first_child = RSP_SNODE_NONE;
			n->next_sibling = RSP_SNODE_NONE;
			n->other = RSP_SNODE_NONE;
			n->path = k->path;
			if (k->parent != RSP_SNODE_NONE) {
				struct rsp_snode *p = &s->nodes[k->parent];

				n->depth = p->depth + 1;
				n->path = p->path;
				n->next_sibling = p->first_child;
				p->first_child = idx;
			}
			return idx;
		}
		if (key_eq(s, idx, k, h))
			return idx;
	}
	s->failed = true;
	return RSP_SNODE_NONE;
}

/* Add @ns of category @cat to node @n, or to @fallback when @n could not be made. */
static void add(struct rsp_snapshot *s, uint32_t n, uint32_t fallback, enum rsp_cat cat,
		uint64_t ns, bool inferred)
{
	if (n == RSP_SNODE_NONE)
		n = fallback;
	if (n == RSP_SNODE_NONE)
		return;
	s->nodes[n].self_ns[cat] += ns;
	if (inferred)
		s->nodes[n].inferred_ns += ns;
}

static uint32_t leaf(struct rsp_snapshot *s, uint32_t parent, uint8_t kind, uint8_t reason)
{
	const struct rsp_snode *p = &s->nodes[parent];
	struct nkey k = {.parent = parent, .kind = kind, .reason = reason};

	return get_node(s, &k, p->tid, p->tgid);
}

static void unknown(struct rsp_snapshot *s, uint32_t node, uint64_t ns, int why)
{
	add(s, leaf(s, node, RSP_SN_UNKNOWN, 0), node, RSP_CAT_UNKNOWN, ns, false);
	if (why == UNK_NOT_DELIVERED)
		s->tot.unknown_not_delivered_ns += ns;
	else if (why == UNK_GAP)
		s->tot.unknown_gap_ns += ns;
}

/* ---- the chronological pieces -------------------------------------------- */

/*
 * Record [x, y] of thread @ti explained under @node as a piece (only PID's
 * own path, path 0, is nested in PID's time). Return its index, to be the
 * parent of what explains it, or RSP_SNODE_NONE.
 */
static uint32_t piece(struct rsp_snapshot *s, uint32_t node, const struct tinfo *ti,
		      const struct rsp_segment *g, uint8_t kind, uint64_t x, uint64_t y,
		      bool inferred)
{
	bool nested = s->cur_piece != RSP_SNODE_NONE;
	uint16_t depth = nested ? (uint16_t)(s->pieces[s->cur_piece].depth + 1) : 0;
	size_t i = s->nr_pieces;

	if (y <= x || node == RSP_SNODE_NONE || s->nodes[node].path || !s->o.max_pieces)
		return RSP_SNODE_NONE;
	if (i >= s->o.max_pieces) {
		s->pieces_truncated = true; /* the bound: said in every file that shows them */
		return RSP_SNODE_NONE;
	}
	if (rsp_vec__reserve((void **)&s->pieces, &s->cap_pieces, i + 1, sizeof(*s->pieces))) {
		s->failed = true;
		return RSP_SNODE_NONE;
	}
	s->pieces[i] = (struct rsp_spiece){.start = x,
					   .end = y,
					   .seg = g,
					   .tid = ti->tid,
					   .tgid = ti->t ? ti->t->tgid : 0,
					   .parent = nested ? s->cur_piece : RSP_SNODE_NONE,
					   .depth = depth,
					   .kind = kind,
					   .inferred = inferred};
	s->nr_pieces++;
	return (uint32_t)i;
}

/* ---- threads ------------------------------------------------------------ */

#define TI_BLOCK 256

static struct tinfo *ti_at(const struct rsp_snapshot *s, size_t i)
{
	return &s->ti[i / TI_BLOCK][i % TI_BLOCK];
}

static bool of_pid(const struct rsp_snapshot *s, const struct rsp_tlthread *t)
{
	if (s->o.tid && t->tid != s->o.tid)
		return false;
	return s->o.pid > 0 &&
	       (t->tgid == (uint32_t)s->o.pid || (!t->tgid && t->tid == (uint32_t)s->o.pid));
}

#define DESCENT_MAX 32 /* forks followed back from a thread to PID, at most */

/*
 * Was @t forked in the range by a thread of PID, or by a thread forked so
 * (in another process: PID's own threads are roots already)? Each fork
 * back must fall in its parent's life (a tid reused is another thread).
 */
static bool started_by_pid(const struct rsp_snapshot *s, const struct rsp_tlthread *t)
{
	if (of_pid(s, t) || t->forked < s->from || t->forked >= s->to)
		return false;
	for (unsigned d = 0; d < DESCENT_MAX && t->parent && t->forked; d++) {
		const struct rsp_tlthread *p = rsp_tlstore__find_thread(s->store, t->parent);

		if (!p || max64(p->first, p->forked) > t->forked)
			return false;
		if (of_pid(s, p))
			return true;
		t = p;
	}
	return false;
}

static struct tinfo *tinfo(struct rsp_snapshot *s, uint32_t tid)
{
	struct tinfo *t;
	uint32_t idx;

	if (!rsp_u64map__get(&s->tmap, tid, &idx))
		return ti_at(s, idx);
	if (s->nr_ti == s->nr_blocks * TI_BLOCK) {
		struct tinfo **v = realloc(s->ti, (s->nr_blocks + 1) * sizeof(*v));

		if (!v)
			return NULL;
		s->ti = v;
		if (!(s->ti[s->nr_blocks] = malloc(TI_BLOCK * sizeof(**v))))
			return NULL;
		s->nr_blocks++;
	}
	if (rsp_u64map__put(&s->tmap, tid, (uint32_t)s->nr_ti))
		return NULL;
	t = ti_at(s, s->nr_ti++);
	memset(t, 0, sizeof(*t));
	t->tid = tid;
	t->t = rsp_tlstore__find_thread(s->store, tid);
	t->base_root = t->other_root = RSP_SNODE_NONE;
	t->base = t->t && of_pid(s, t->t);
	t->started = t->t && started_by_pid(s, t->t);
	return t;
}

static uint32_t tgid_of(const struct tinfo *t)
{
	return t->t ? t->t->tgid : 0;
}

/* Index of the first segment of @ti's thread ending after @a (nr_segs if none). */
static size_t first_seg(const struct tinfo *ti, uint64_t a)
{
	return rsp_gallop__above(ti->t->segs, sizeof(ti->t->segs[0]),
				 offsetof(struct rsp_segment, end), ti->t->nr_segs, a);
}

/* ---- runs --------------------------------------------------------------- */

static bool in_burst(const struct rsp_segment *g)
{
	return g->kind == RSP_SEG_RUN || g->kind == RSP_SEG_RUNNABLE;
}

/*
 * The burst around segment @i: from the wakeup (or preemption) that let
 * the thread run to the sleep that ends it, and the samples in it. A run
 * split by preemptions is still one run: sampled if any piece is.
 */
static void burst(struct rsp_snapshot *s, struct tinfo *ti, size_t i)
{
	const struct rsp_segment *v = ti->t->segs;
	size_t j = i, k = i;

	if (ti->burst_valid && i >= ti->bj && i <= ti->bk)
		return;
	/* a RUNNABLE after a wakeup can only follow a sleep: it opens the burst */
	while (j > 0 && in_burst(&v[j - 1]))
		j--;
	while (k + 1 < ti->t->nr_segs && in_burst(&v[k + 1]))
		k++;
	ti->bj = j;
	ti->bk = k;
	ti->burst_valid = true;
	ti->burst_node = RSP_SNODE_NONE;
	ti->bs = s->samples ? rsp_samples__range(s->samples, ti->tid, v[j].start,
						 v[k].end + s->o.sample_slack_ns, &ti->bn)
			    : NULL;
	if (!ti->bs)
		ti->bn = 0;
}

static uint32_t sample_node(struct rsp_snapshot *s, uint32_t run, const struct rsp_csample *c)
{
	const struct rsp_snode *r = &s->nodes[run];
	struct nkey k = {.parent = run,
			 .kind = RSP_SN_SAMPLE,
			 .hash = c->chain ? stack_hash(c->chain, c->nr_chain)
					  : rsp_hash__mix(c->ip)};
	uint32_t n = get_node(s, &k, r->tid, r->tgid);

	if (n != RSP_SNODE_NONE && !s->nodes[n].first) {
		s->nodes[n].first = c->time;
		s->nodes[n].stack = c->chain;
		s->nodes[n].nr_stack = c->nr_chain;
		s->nodes[n].ip = c->ip;
		/* once per node: its samples share the stack (its hash), so the spin loop */
		s->nodes[n].spin = s->o.spin && s->o.sym &&
				   rsp_spin__sample(s->o.spin, s->o.sym, 0, c->pid, c->time, c->ip,
						    c->chain, c->nr_chain);
	}
	return n;
}

/* A sample node's running: busy waiting when it spins, else understood. */
static enum rsp_cat sample_cat(const struct rsp_snapshot *s, uint32_t sn)
{
	return sn != RSP_SNODE_NONE && s->nodes[sn].spin ? RSP_CAT_SPIN : RSP_CAT_UNDERSTOOD;
}

/*
 * Running over [x, y] in segment @i (a RUN, or the part of a RUNNABLE
 * inferred to be running). Its time goes to the samples that fell in the
 * segment, shared equally; a piece without a sample of its own goes to the
 * burst's sample nearest to it; with none at all, it is not sampled.
 */
static void run_piece(struct rsp_snapshot *s, uint32_t node, struct tinfo *ti, size_t i, uint64_t x,
		      uint64_t y, bool inferred)
{
	const struct rsp_segment *g = &ti->t->segs[i];
	uint32_t run = leaf(s, node, RSP_SN_RUN, 0);
	const struct rsp_csample *own = NULL;
	size_t n = 0;

	burst(s, ti, i);
	if (run != RSP_SNODE_NONE) {
		if (ti->burst_node != run)
			s->nodes[run].count++;
		if (!s->nodes[run].first)
			s->nodes[run].first = x;
	}
	ti->burst_node = run;
	piece(s, node, ti, g, RSP_SN_RUN, x, y, inferred);
	if (!ti->bn || run == RSP_SNODE_NONE) {
		add(s, run, node, ti->bn ? RSP_CAT_UNDERSTOOD : RSP_CAT_NOT_SAMPLED, y - x,
		    inferred);
		return;
	}
	if (!inferred)
		own = rsp_samples__range(s->samples, ti->tid, g->start,
					 g->end + s->o.sample_slack_ns, &n);
	if (!own) {
		/* the burst's last sample before the piece, or its first */
		size_t lo = rsp_gallop__at_or_above(ti->bs, sizeof(ti->bs[0]),
						    offsetof(struct rsp_csample, time), ti->bn, x);
		uint32_t sn = sample_node(s, run, &ti->bs[lo ? lo - 1 : 0]);

		add(s, sn, run, sample_cat(s, sn), y - x, inferred);
		return;
	}
	for (size_t k = 0; k < n; k++) {
		uint64_t share = (y - x) / n + (k == 0 ? (y - x) % n : 0);
		uint32_t sn = sample_node(s, run, &own[k]);

		add(s, sn, run, sample_cat(s, sn), share, inferred);
		if (own[k].time >= x &&
		    (own[k].time <= y ||
		     (y == g->end && own[k].time <= y + s->o.sample_slack_ns))) {
			s->nodes[run].samples++;
			if (sn != RSP_SNODE_NONE)
				s->nodes[sn].count++;
		}
	}
}

/* ---- runnable and the switch from idle ---------------------------------- */

/*
 * A runnable stretch ended by a switch-in this kernel did not deliver: the
 * thread was seen running on its CPU only at its first record there. Every
 * switch away from a task is delivered, so if no other run on that CPU
 * ended inside the stretch, and the idle task was not sampled there after
 * it, the CPU had nothing else to run: the thread ran from the latest of
 * those (the wakeup latency of an idle CPU aside). Returns that time.
 */
static uint64_t infer_start(struct rsp_snapshot *s, const struct rsp_segment *g)
{
	uint64_t t = g->start, e, idle;

	e = rsp_tlstore__last_run_end(s->store, g->cpu, g->end);
	if (e > t)
		t = e;
	idle = s->samples ? rsp_samples__idle_before(s->samples, g->cpu, g->end, t) : 0;
	if (idle > t)
		t = idle;
	return min64(t, g->end);
}

static uint64_t follow_preemptors(struct rsp_snapshot *s, uint32_t rn, struct tinfo *ti, size_t i,
				  uint64_t x, uint64_t y);

/* Waiting for a CPU over [x, y]: scheduler overhead, or preempted. */
static void wait_cpu(struct rsp_snapshot *s, uint32_t node, struct tinfo *ti, size_t i, uint64_t x,
		     uint64_t y)
{
	bool preempt = ti->t->segs[i].reason == RSP_SR_PREEMPT;
	uint32_t n = leaf(s, node, RSP_SN_RUNNABLE, preempt ? RSP_SR_PREEMPT : 0);
	uint32_t pc = piece(s, node, ti, &ti->t->segs[i], RSP_SN_RUNNABLE, x, y, false);
	uint32_t up = s->cur_piece;
	uint64_t followed = 0;

	if (preempt && n != RSP_SNODE_NONE) {
		s->cur_piece = pc; /* NONE (dropped, or another path): not nested */
		followed = follow_preemptors(s, n, ti, i, x, y);
		s->cur_piece = up;
	}
	add(s, n, node, preempt ? RSP_CAT_INVOLUNTARY : RSP_CAT_SCHEDULER, y - x - followed, false);
	if (n != RSP_SNODE_NONE)
		s->nodes[n].count++;
}

static void runnable(struct rsp_snapshot *s, uint32_t node, struct tinfo *ti, size_t i, uint64_t x,
		     uint64_t y)
{
	const struct rsp_segment *g = &ti->t->segs[i];

	if ((g->flags & RSP_SEGF_SWITCH_NOT_SEEN) && i + 1 < ti->t->nr_segs &&
	    ti->t->segs[i + 1].kind == RSP_SEG_RUN) {
		uint64_t st = infer_start(s, g);

		if (st < y) {
			if (x < st)
				wait_cpu(s, node, ti, i, x, st);
			run_piece(s, node, ti, i, max64(x, st), y, true);
			return;
		}
	}
	wait_cpu(s, node, ti, i, x, y);
}

/* ---- sleeps ------------------------------------------------------------- */

struct edge {
	uint64_t t;
	int dq, da; /* queued, active count changes */
};

#define EDGES_INSERTION 16

static int cmp_edge(const void *a, const void *b)
{
	const struct edge *x = a, *y = b;

	return x->t < y->t ? -1 : x->t > y->t;
}

/*
 * @ti's block requests and, for each, the latest end of it and every
 * request inserted before it: a scan back from a sleep stops at the first
 * request whose prefix ended before the sleep began, so a sleep looks at
 * the requests that overlap it, not at every earlier one (a thread doing
 * thousands of fdatasyncs made that quadratic). False when out of memory.
 */
static bool load_reqs(struct rsp_snapshot *s, struct tinfo *ti)
{
	uint64_t reach = 0;

	if (ti->rq_found)
		return true;
	ti->rq = rsp_tlstore__reqs_of(s->store, ti->tid, &ti->rq_n);
	if (!ti->rq)
		ti->rq_n = 0;
	if (ti->rq_n && !(ti->rq_reach = malloc(ti->rq_n * sizeof(*ti->rq_reach)))) {
		s->failed = true;
		ti->rq_n = 0;
		return false;
	}
	for (size_t k = 0; k < ti->rq_n; k++) {
		const struct rsp_block_req *r = ti->rq[k];

		reach = max64(reach, r->complete ? max64(r->complete, r->issue) : UINT64_MAX);
		ti->rq_reach[k] = reach;
	}
	ti->rq_found = true;
	return true;
}

/*
 * Over [x, y], the time the thread's block requests were in the device
 * (*active) and the time they were only queued, none in the device
 * (*queued). Requests are looked up from the last one inserted before y
 * back to the first whose prefix of requests all ended by x.
 */
static void io_times(struct rsp_snapshot *s, struct tinfo *ti, uint64_t x, uint64_t y,
		     uint64_t *active, uint64_t *queued)
{
	struct edge e[4 * REQ_SCAN];
	size_t ne = 0, lo, hi, k;
	int q = 0, act = 0;
	uint64_t prev = x;

	*active = *queued = 0;
	if (!load_reqs(s, ti) || !ti->rq_n)
		return;
	lo = 0, hi = ti->rq_n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (ti->rq[mid]->insert < y)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (k = lo; k > 0 && ti->rq_reach[k - 1] > x && ne + 4 <= sizeof(e) / sizeof(e[0]); k--) {
		const struct rsp_block_req *r = ti->rq[k - 1];
		uint64_t issue = r->issue ? r->issue : r->insert;
		uint64_t done = r->complete ? r->complete : y;

		if (done <= x && issue <= x)
			continue;
		if (issue > r->insert) {
			e[ne++] = (struct edge){max64(r->insert, x), 1, 0};
			e[ne++] = (struct edge){max64(min64(issue, y), x), -1, 0};
		}
		e[ne++] = (struct edge){max64(min64(issue, y), x), 0, 1};
		e[ne++] = (struct edge){max64(min64(done, y), x), 0, -1};
	}
	/*
	 * By time (the order of edges at one time adds nothing: zero-length
	 * stretches). The few edges of most sleeps by insertion: qsort()'s
	 * setup was most of its cost there.
	 */
	if (ne > EDGES_INSERTION) {
		qsort(e, ne, sizeof(e[0]), cmp_edge);
	} else {
		for (k = 1; k < ne; k++) {
			struct edge t = e[k];
			size_t j = k;

			for (; j > 0 && e[j - 1].t > t.t; j--)
				e[j] = e[j - 1];
			e[j] = t;
		}
	}
	for (k = 0; k < ne; k++) {
		if (act > 0)
			*active += e[k].t - prev;
		else if (q > 0)
			*queued += e[k].t - prev;
		q += e[k].dq;
		act += e[k].da;
		prev = e[k].t;
	}
	*active = min64(*active, y - x);
	*queued = min64(*queued, y - x - *active);
}

/*
 * A sleep in the chain whose waking was not delivered, while a thread
 * below on the pseudostack had a block request in the device: that is
 * time "in which a disk operation is active" (the paper's blocking I/O),
 * whoever it woke (a kworker completing the request, woken by the disk's
 * interrupt on an idle CPU). Returns the active and queued parts.
 */
static void io_context(struct rsp_snapshot *s, uint64_t x, uint64_t y, uint64_t *active,
		       uint64_t *queued)
{
	*active = *queued = 0;
	for (unsigned d = s->depth; d-- > 0;) {
		struct tinfo *a = tinfo(s, s->stk[d]);

		if (a)
			io_times(s, a, x, y, active, queued);
		if (*active || *queued)
			return;
	}
}

/*
 * The de-facto start of sleep @i: consecutive sleeps with its stack, all
 * ended by a timer, separated by less than merge_ns of anything else, are
 * one sleep (a poll loop).
 */
static uint64_t defacto_start(const struct rsp_snapshot *s, const struct rsp_tlthread *t, size_t i,
			      uint64_t h)
{
	uint64_t d = t->segs[i].start;
	size_t j = i;

	for (unsigned merged = 0; merged < MERGE_MAX && j > 0; merged++) {
		uint64_t between = 0;
		size_t k = j;

		while (k > 0 && t->segs[k - 1].kind != RSP_SEG_SLEEP &&
		       t->segs[k - 1].kind != RSP_SEG_UNKNOWN && between < s->o.merge_ns) {
			k--;
			between += t->segs[k].end - t->segs[k].start;
		}
		if (!k || between >= s->o.merge_ns || t->segs[k - 1].kind != RSP_SEG_SLEEP)
			break;
		k--;
		if (t->segs[k].waker.kind != RSP_WAKER_TIMER || seg_hash(&t->segs[k]) != h)
			break;
		d = t->segs[k].start;
		j = k;
	}
	return d;
}

/* Does the stretch of running and preemptions go on after @g? (Not after an exit.) */
static bool in_burst_run(const struct rsp_segment *g)
{
	return (g->kind == RSP_SEG_RUN && !(g->flags & RSP_SEGF_EXITED)) ||
	       (g->kind == RSP_SEG_RUNNABLE && g->reason == RSP_SR_PREEMPT);
}

/* The first segment of the stretch of running and preemptions segment @r is in. */
static size_t burst_start(const struct rsp_tlthread *t, size_t r)
{
	size_t k = r;

	while (k > 0 && r - k < CAUSE_SCAN && in_burst_run(&t->segs[k - 1]))
		k--;
	return k;
}

/*
 * Walking back over @w's run @r: did @by wake (or fork) it to do this?
 * *when: that waking (the run's start for a fork). A run more than
 * CAUSE_SCAN segments of running and preemptions after its wakeup is not
 * counted as caused by it.
 */
static bool caused_by(const struct rsp_tlthread *w, size_t r, uint32_t by, uint64_t *when)
{
	size_t k = burst_start(w, r);
	const struct rsp_segment *g;

	if (r - k >= CAUSE_SCAN)
		return false;
	if (!k || (w->segs[k - 1].flags & RSP_SEGF_EXITED)) {
		/* its first run: the fork (of its latest life, if the tid was reused) */
		*when = w->segs[r].start;
		return w->parent == by;
	}
	g = &w->segs[k - 1];
	*when = g->waker.time;
	return (g->kind == RSP_SEG_RUNNABLE || g->kind == RSP_SEG_SLEEP) &&
	       g->waker.kind == RSP_WAKER_THREAD && g->waker.id == by;
}

/*
 * How long waker @w may go on running after T runs again and still fit:
 * fit_ns, or a quarter of what its burst of running ran before the waking
 * at @wake if that is more. What a hand-off does after its waking (return
 * from the call that woke T, enter its next wait; and the tracer's own work
 * there, a stack walk at the waking costs 50-150 us on a VM) is short
 * against the work it did for T; a producer goes on for as long as it likes.
 * pass on this VM: the child's tail past the parent's return was over
 * 100 us for a quarter of the turns, under 2 ms of work each.
 */
static uint64_t tail_ns(const struct rsp_snapshot *s, const struct rsp_tlthread *w, size_t r,
			uint64_t wake)
{
	uint64_t start = w->segs[burst_start(w, r)].start;
	uint64_t q = wake > start ? (wake - start) / 4 : 0;

	return q > s->o.fit_ns ? q : s->o.fit_ns;
}

static void add_link(struct rsp_snapshot *s, uint32_t from, uint32_t to, uint64_t time,
		     uint64_t to_time, bool other)
{
	if (rsp_vec__reserve((void **)&s->links, &s->cap_links, s->nr_links + 1,
			     sizeof(*s->links))) {
		s->failed = true;
		return;
	}
	s->links[s->nr_links++] = (struct rsp_slink){from, to, time, to_time, other};
}

static bool on_stack(const struct rsp_snapshot *s, uint32_t tid)
{
	for (unsigned i = 0; i < s->depth; i++)
		if (s->stk[i] == tid)
			return true;
	return false;
}

static void explain(struct rsp_snapshot *s, uint32_t node, uint32_t tid, uint64_t a, uint64_t b);

/* The root of @w's own control path (made on first need). */
static uint32_t other_root(struct rsp_snapshot *s, struct tinfo *w)
{
	struct nkey k = {.parent = RSP_SNODE_NONE, .kind = RSP_SN_THREAD, .id = w->tid};
	uint32_t n;

	if (w->other_root != RSP_SNODE_NONE)
		return w->other_root;
	k.path = ++s->next_path;
	n = get_node(s, &k, w->tid, tgid_of(w));
	if (n == RSP_SNODE_NONE)
		return n;
	if (rsp_vec__reserve((void **)&s->roots, &s->cap_roots, s->nr_roots + 1,
			     sizeof(*s->roots))) {
		s->failed = true;
		return RSP_SNODE_NONE;
	}
	s->roots[s->nr_roots++] = n;
	w->other_root = n;
	return n;
}

/* Sleep @i of @ti over [x, y], ended by a thread: follow it, or say why not. */
static void follow(struct rsp_snapshot *s, uint32_t sn, struct tinfo *ti, size_t i, uint64_t h,
		   uint64_t x, uint64_t y)
{
	const struct rsp_segment *g = &ti->t->segs[i], *r;
	uint64_t back = i + 1 < ti->t->nr_segs && ti->t->segs[i + 1].kind == RSP_SEG_RUNNABLE
				? ti->t->segs[i + 1].end
				: g->end;
	struct tinfo *w = tinfo(s, g->waker.id);
	uint32_t root;
	bool fits;

	if (!w) {
		s->failed = true;
		return;
	}
	if (w->base && w != ti) {
		/* another thread of the process: a root of its own already */
		add(s, sn, sn, RSP_CAT_OTHER_PATH, y - x, false);
		s->nodes[sn].other = w->base_root;
		add_link(s, w->tid, ti->tid, g->waker.time, back, true);
		return;
	}
	r = rsp_tlstore__waker_run(s->store, g);
	if (w == ti || !r || !w->t || on_stack(s, w->tid) || s->depth >= s->o.max_depth) {
		/* itself (a signal), out of the window, a loop, or too deep */
		if (s->depth >= s->o.max_depth)
			s->tot.truncated = true;
		add(s, sn, sn, RSP_CAT_MISC_KERNEL, y - x, false);
		return;
	}
	fits = r->end <= back + tail_ns(s, w->t, (size_t)(r - w->t->segs), g->waker.time) &&
	       (r->start + s->o.fit_ns >= defacto_start(s, ti->t, i, h) ||
		caused_by(w->t, (size_t)(r - w->t->segs), ti->tid, &(uint64_t){0}));
	s->tot.sleeps_followed++;
	add_link(s, w->tid, ti->tid, g->waker.time, back, !fits);
	if (fits) {
		struct nkey k = {.parent = sn, .kind = RSP_SN_THREAD, .id = w->tid};
		uint32_t wn = get_node(s, &k, w->tid, tgid_of(w));

		if (wn == RSP_SNODE_NONE) {
			add(s, sn, sn, RSP_CAT_MISC_KERNEL, y - x, false);
			return;
		}
		s->stk[s->depth++] = ti->tid;
		explain(s, wn, w->tid, x, y);
		s->depth--;
		return;
	}
	/* it went on running after the wakeup: another control path */
	add(s, sn, sn, RSP_CAT_OTHER_PATH, y - x, false);
	root = other_root(s, w);
	if (root == RSP_SNODE_NONE)
		return;
	s->nodes[sn].other = root;
	s->stk[s->depth++] = ti->tid;
	explain(s, root, w->tid, x, y);
	s->depth--;
}

/* Of @ti's wakeups and forks, the first at or after @t (an index into its range). */
static size_t wake_after(const struct rsp_snapshot *s, const struct tinfo *ti, uint64_t t)
{
	return rsp_gallop__at_or_above(ti->wk, sizeof(ti->wk[0]), offsetof(struct rsp_wake, time),
				       ti->wk_n, t);
}

#define PREEMPTORS_MAX 8 /* threads looked at for one preemption */

/* @w's runs on @cpu over [x, y] that @by caused: explained under @rn. */
static uint64_t follow_callee(struct rsp_snapshot *s, uint32_t rn, struct tinfo *ti,
			      struct tinfo *w, uint32_t cpu, uint64_t x, uint64_t y)
{
	uint64_t done = 0, when;

	for (size_t k = first_seg(w, x); k < w->t->nr_segs && w->t->segs[k].start < y; k++) {
		const struct rsp_segment *r = &w->t->segs[k];
		uint64_t a = max64(x, r->start), b = min64(y, r->end);
		uint32_t wn;

		if (r->kind != RSP_SEG_RUN || r->cpu != cpu || b <= a ||
		    !caused_by(w->t, k, ti->tid, &when))
			continue;
		wn = get_node(s, &(struct nkey){.parent = rn, .kind = RSP_SN_THREAD, .id = w->tid},
			      w->tid, tgid_of(w));
		if (wn == RSP_SNODE_NONE)
			continue;
		if (a == r->start)
			add_link(s, ti->tid, w->tid, when, r->start, false);
		s->stk[s->depth++] = ti->tid;
		explain(s, wn, w->tid, a, b);
		s->depth--;
		done += b - a;
	}
	return done;
}

/*
 * Preempted over [x, y] (RUNNABLE node @rn): by whom? A thread that @ti
 * itself woke (or forked) and that took its CPU is doing its work: the
 * parent of pass writes to a pipe, the child it wakes preempts it and does
 * the turn. Its running over the stretch is explained under @rn, like a
 * waker's under a sleep; anything else (another process, the CPU's own
 * work) leaves the time involuntary. The CPU is the one @ti was preempted
 * on (where it last ran); the candidates are the threads @ti woke or forked
 * since its stretch of running began (an index of wakeups by waker: no
 * scan of what else ran there). Returns the time explained so.
 */
static uint64_t follow_preemptors(struct rsp_snapshot *s, uint32_t rn, struct tinfo *ti, size_t i,
				  uint64_t x, uint64_t y)
{
	const struct rsp_segment *v = ti->t->segs;
	uint32_t cpu = i > 0 && v[i - 1].kind == RSP_SEG_RUN ? v[i - 1].cpu : v[i].cpu;
	uint32_t seen[PREEMPTORS_MAX];
	unsigned nseen = 0;
	uint64_t done = 0;

	if (!ti->wk_found) {
		ti->wk = rsp_tlstore__wakes_by(s->store, ti->tid, &ti->wk_n);
		ti->wk_found = true;
	}
	if (s->depth >= s->o.max_depth || !ti->wk_n)
		return 0;
	for (size_t k = wake_after(s, ti, v[burst_start(ti->t, i)].start);
	     k < ti->wk_n && nseen < PREEMPTORS_MAX; k++) {
		const struct rsp_wake *l = &ti->wk[k];
		struct tinfo *w;
		unsigned j;

		if (l->time >= y)
			break;
		for (j = 0; j < nseen && seen[j] != l->tid; j++)
			;
		if (j < nseen || l->tid == ti->tid)
			continue;
		seen[nseen++] = l->tid;
		w = tinfo(s, l->tid);
		if (!w || !w->t || w->base || on_stack(s, w->tid))
			continue;
		done += follow_callee(s, rn, ti, w, cpu, x, y);
	}
	return done;
}

/* The category of a sleep ended by something other than a thread. */
static enum rsp_cat sleep_cat(const struct rsp_segment *g)
{
	switch (g->waker.kind) {
	case RSP_WAKER_TIMER:
		return g->reason == RSP_SR_SLEEP ? RSP_CAT_DELIBERATE : RSP_CAT_TIMED_OUT;
	case RSP_WAKER_IRQ:
		return RSP_CAT_HARDWARE;
	case RSP_WAKER_SOFTIRQ:
		if (g->waker.id == RSP_SOFTIRQ_NET_RX || g->waker.id == RSP_SOFTIRQ_NET_TX)
			return RSP_CAT_NETWORK;
		if (g->waker.id == RSP_SOFTIRQ_TIMER || g->waker.id == RSP_SOFTIRQ_HRTIMER)
			return RSP_CAT_TIMED_OUT;
		return g->waker.id == RSP_SOFTIRQ_BLOCK ? RSP_CAT_BLOCKING_IO : RSP_CAT_HARDWARE;
	default:
		return RSP_CAT_UNKNOWN;
	}
}

static void sleep_seg(struct rsp_snapshot *s, uint32_t node, struct tinfo *ti, size_t i, uint64_t x,
		      uint64_t y)
{
	const struct rsp_segment *g = &ti->t->segs[i];
	/* A wait for network data: one node per socket (its operation names it). */
	uint64_t h =
		seg_hash(g) ^ (g->waker.flags & RSP_WAKERF_NET ? rsp_hash__mix(g->waker.sk) : 0);
	bool inferred = g->flags & RSP_SEGF_WAKER_INFERRED;
	struct nkey k = {.parent = node,
			 .kind = RSP_SN_SLEEP,
			 .reason = g->reason,
			 .waker_kind = g->waker.kind,
			 .id = g->waker.kind == RSP_WAKER_TIMER || g->waker.kind == RSP_WAKER_NONE
				       ? 0
				       : g->waker.id,
			 .hash = h};
	uint32_t sn = get_node(s, &k, ti->tid, tgid_of(ti));
	uint32_t pc = piece(s, node, ti, g, RSP_SN_SLEEP, x, y, false), up = s->cur_piece;
	uint64_t q, act;

	if (sn == RSP_SNODE_NONE) {
		add(s, node, node, RSP_CAT_MISC_KERNEL, y - x, false);
		return;
	}
	if (!s->nodes[sn].count++) {
		s->nodes[sn].first = g->start;
		s->nodes[sn].stack = g->stack;
		s->nodes[sn].nr_stack = g->nr_stack;
		s->nodes[sn].name = g->waker.name;
		if (g->waker.flags & RSP_WAKERF_NET)
			s->nodes[sn].net = rsp_tlstore__net_op_of(s->store, g);
	}
	switch (g->waker.kind) {
	case RSP_WAKER_THREAD:
		s->cur_piece = pc;
		follow(s, sn, ti, i, h, x, y);
		s->cur_piece = up;
		return;
	case RSP_WAKER_DEVICE:
		io_times(s, ti, x, y, &act, &q);
		add(s, sn, node, RSP_CAT_IO_QUEUE, q, inferred);
		add(s, sn, node, RSP_CAT_BLOCKING_IO, y - x - q, inferred);
		return;
	case RSP_WAKER_NONE:
		act = q = 0;
		if (!(g->flags & RSP_SEGF_GAP) && (g->flags & RSP_SEGF_WAKING_NOT_SEEN))
			io_context(s, x, y, &act, &q);
		add(s, sn, node, RSP_CAT_BLOCKING_IO, act, true);
		add(s, sn, node, RSP_CAT_IO_QUEUE, q, true);
		add(s, sn, node, RSP_CAT_UNKNOWN, y - x - act - q, false);
		if (g->flags & RSP_SEGF_GAP)
			s->tot.unknown_gap_ns += y - x - act - q;
		else if (g->flags & RSP_SEGF_WAKING_NOT_SEEN)
			s->tot.unknown_not_delivered_ns += y - x - act - q;
		return;
	default:
		add(s, sn, node, sleep_cat(g), y - x, inferred);
		return;
	}
}

static bool has_user(const struct rsp_segment *g)
{
	if (g->stack_hash)
		return g->stack_hash & RSP_STACK_HASH_USER;
	for (uint32_t i = 0; i + 1 < g->nr_stack; i++)
		if (g->stack[i] == PERF_CONTEXT_USER)
			return true;
	return false;
}

/* @ns of sleep @g in the chain, by where its stacks came from. */
static void stack_source(struct rsp_snapshot *s, const struct rsp_segment *g, uint64_t ns)
{
	s->tot.sleep_ns += ns;
	if (g->reason != RSP_SR_UNKNOWN && has_user(g))
		s->tot.user_stack_ns += ns;
	if (g->flags & RSP_SEGF_STACK_CACHED)
		s->tot.stack_cached_ns += ns;
	if (!(g->flags & RSP_SEGF_STACK_CHECKED))
		return;
	s->tot.stack_checked_ns += ns;
	if (g->flags & RSP_SEGF_STACK_DIFFERS)
		s->tot.stack_differ_ns += ns;
	if (g->flags & RSP_SEGF_REASON_DIFFERS)
		s->tot.reason_differ_ns += ns;
}

static void explain(struct rsp_snapshot *s, uint32_t node, uint32_t tid, uint64_t a, uint64_t b)
{
	struct tinfo *ti = tinfo(s, tid);
	uint64_t cur = a;

	if (!ti) {
		s->failed = true;
		return;
	}
	if (b <= a)
		return;
	ti->involved = true;
	if (ti->started) {
		if (rsp_vec__reserve((void **)&ti->cover, &ti->cap_cover, ti->nr_cover + 1,
				     sizeof(*ti->cover)))
			s->failed = true;
		else
			ti->cover[ti->nr_cover++] = (struct rsp_span){a, b};
	}
	if (!ti->t || !ti->t->nr_segs) {
		piece(s, node, ti, NULL, RSP_SN_UNKNOWN, a, b, false);
		unknown(s, node, b - a, UNK_PLAIN);
		return;
	}
	for (size_t i = first_seg(ti, a); i < ti->t->nr_segs && ti->t->segs[i].start < b; i++) {
		const struct rsp_segment *g = &ti->t->segs[i];
		uint64_t x = max64(a, g->start), y = min64(b, g->end);

		if (y <= x)
			continue;
		if (x > cur) {
			piece(s, node, ti, NULL, RSP_SN_UNKNOWN, cur, x, false);
			unknown(s, node, x - cur, UNK_PLAIN);
		}
		switch (g->kind) {
		case RSP_SEG_RUN:
			/* a run after its last record, switch-out not seen: inferred */
			run_piece(s, node, ti, i, x, y, g->flags & RSP_SEGF_RUN_INFERRED);
			break;
		case RSP_SEG_RUNNABLE:
			runnable(s, node, ti, i, x, y);
			break;
		case RSP_SEG_SLEEP:
			stack_source(s, g, y - x);
			sleep_seg(s, node, ti, i, x, y);
			break;
		default:
			piece(s, node, ti, g, RSP_SN_UNKNOWN, x, y, false);
			unknown(s, node, y - x, UNK_GAP);
			break;
		}
		cur = y;
	}
	if (cur < b) {
		piece(s, node, ti, NULL, RSP_SN_UNKNOWN, cur, b, false);
		unknown(s, node, b - cur, UNK_PLAIN);
	}
}

/* ---- the whole ------------------------------------------------------------ */

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return x < y ? -1 : x > y;
}

/*
 * Where thread @t's life in the store begins: its latest fork, when seen.
 * A tid reused within the window (pids wrap on a busy machine) is one
 * thread in the store, its incarnations one after the other: the pid asked
 * about is the latest process with that pid, not the earlier ones.
 */
static uint64_t life_start(const struct rsp_tlthread *t)
{
	return max64(t->first, t->forked);
}

/* PID's threads: roots of path 0, in tid order. */
static int base_roots(struct rsp_snapshot *s)
{
	size_t nt = rsp_tlstore__nr_threads(s->store);
	uint32_t *tids = calloc(nt ? nt : 1, sizeof(*tids));
	size_t n = 0;

	if (!tids)
		return -ENOMEM;
	for (size_t i = 0; i < nt; i++) {
		const struct rsp_tlthread *t = rsp_tlstore__thread(s->store, i);

		if (t->nr_segs && life_start(t) < s->to && t->last > s->from && of_pid(s, t))
			tids[n++] = t->tid;
	}
	qsort(tids, n, sizeof(*tids), cmp_u32);
	s->roots = malloc((n ? n : 1) * sizeof(*s->roots));
	if (!s->roots) {
		free(tids);
		return -ENOMEM;
	}
	s->cap_roots = n ? n : 1;
	for (size_t i = 0; i < n; i++) {
		struct tinfo *ti = tinfo(s, tids[i]);
		struct nkey k = {.parent = RSP_SNODE_NONE, .kind = RSP_SN_THREAD, .id = tids[i]};

		if (!ti ||
		    (ti->base_root = get_node(s, &k, ti->tid, tgid_of(ti))) == RSP_SNODE_NONE) {
			free(tids);
			return -ENOMEM;
		}
		s->roots[s->nr_roots++] = ti->base_root;
	}
	s->tot.nr_threads = n;
	free(tids);
	return 0;
}

/* Root @i over [a, b] (clipped to its life in the range), if not empty. */
static void explain_root(struct rsp_snapshot *s, size_t i, uint64_t a, uint64_t b)
{
	const struct rsp_snode *r = &s->nodes[s->roots[i]];
	const struct rsp_tlthread *t = rsp_tlstore__find_thread(s->store, r->tid);
	uint32_t tid = r->tid;

	a = max64(a, max64(life_start(t), s->from));
	b = min64(b, min64(t->last, s->to));
	if (b <= a)
		return;
	if (!s->tot.start || a < s->tot.start)
		s->tot.start = a;
	if (b > s->tot.end)
		s->tot.end = b;
	s->depth = 0;
	s->cur_piece = RSP_SNODE_NONE;
	explain(s, s->roots[i], tid, a, b);
}

/* Each root thread's span in the range: explain it whole, or over opts.spans. */
static void explain_roots(struct rsp_snapshot *s)
{
	size_t n = s->nr_roots;

	for (size_t i = 0; i < n; i++) {
		if (!s->o.spans)
			explain_root(s, i, 0, UINT64_MAX);
		for (size_t k = 0; s->o.spans && k < s->o.nr_spans; k++)
			explain_root(s, i, s->o.spans[k].from, s->o.spans[k].to);
	}
	s->tot.wall_ns = s->tot.end > s->tot.start ? s->tot.end - s->tot.start : 0;
}

static int cmp_span(const void *a, const void *b)
{
	const struct rsp_span *x = a, *y = b;

	return x->a < y->a ? -1 : x->a > y->a;
}

static int cmp_forked(const void *a, const void *b, void *ctx)
{
	const struct rsp_snapshot *s = ctx;
	const struct tinfo *x = ti_at(s, *(const uint32_t *)a), *y = ti_at(s, *(const uint32_t *)b);

	if (x->t->forked != y->t->forked)
		return x->t->forked < y->t->forked ? -1 : 1;
	return x->tid < y->tid ? -1 : x->tid > y->tid;
}

/*
 * The time of @ti (a thread PID started) over [a, b] that no explain()
 * has walked: each uncovered stretch explained under @ti's own root.
 */
static void explain_uncovered(struct rsp_snapshot *s, struct tinfo *ti, uint64_t a, uint64_t b)
{
	size_t n = ti->nr_cover;
	struct rsp_span *v = malloc((n ? n : 1) * sizeof(*v));
	uint64_t cur = a;

	if (!v) {
		s->failed = true;
		return;
	}
	/* a copy: explaining a stretch appends to ti->cover */
	if (n) {
		memcpy(v, ti->cover, n * sizeof(*v));
		rsp_vec__sort(v, n, sizeof(*v), cmp_span);
	}
	for (size_t k = 0; k <= n && cur < b; k++) {
		uint64_t end = k < n ? min64(v[k].a, b) : b;

		if (end > cur) {
			uint32_t root = other_root(s, ti);

			if (root == RSP_SNODE_NONE)
				break;
			s->depth = 0;
			s->cur_piece = RSP_SNODE_NONE;
			explain(s, root, ti->tid, cur, end);
		}
		if (k < n)
			cur = max64(cur, v[k].b);
	}
	free(v);
}

/*
 * The threads PID started in the range (make's compilers): what the chain
 * did not explain of their lives, explained as parallel paths, parents
 * before the threads they forked (whose stretches their parents' waits may
 * have explained already).
 */
static void explain_started(struct rsp_snapshot *s)
{
	size_t nt = rsp_tlstore__nr_threads(s->store), n = 0;
	uint32_t *idx = malloc((nt ? nt : 1) * sizeof(*idx));

	if (!idx) {
		s->failed = true;
		return;
	}
	for (size_t i = 0; i < nt; i++) {
		const struct rsp_tlthread *t = rsp_tlstore__thread(s->store, i);
		uint32_t k;

		if (!t->nr_segs || !started_by_pid(s, t))
			continue;
		if (!tinfo(s, t->tid) || rsp_u64map__get(&s->tmap, t->tid, &k)) {
			s->failed = true;
			break;
		}
		idx[n++] = k;
	}
	qsort_r(idx, n, sizeof(*idx), cmp_forked, s);
	for (size_t i = 0; i < n; i++) {
		struct tinfo *ti = ti_at(s, idx[i]);

		explain_uncovered(s, ti, max64(life_start(ti->t), s->from),
				  min64(ti->t->last, s->to));
	}
	free(idx);
}

/* Totals bottom-up: a node's index is always above its parent's. */
static void sum_up(struct rsp_snapshot *s)
{
	struct rsp_snapshot_totals *t = &s->tot;

	for (size_t i = s->nr_nodes; i-- > 0;) {
		struct rsp_snode *n = &s->nodes[i];

		for (int c = 0; c < RSP_CAT__NR; c++) {
			n->total_ns += n->self_ns[c];
			t->cat_ns[c] += n->self_ns[c];
		}
		t->inferred_ns += n->inferred_ns;
		if (n->parent != RSP_SNODE_NONE)
			s->nodes[n->parent].total_ns += n->total_ns;
	}
	for (size_t i = 0; i < s->nr_roots; i++)
		t->total_ns += s->nodes[s->roots[i]].total_ns;
	t->accounted_ns = t->total_ns - t->cat_ns[RSP_CAT_UNKNOWN];
	t->nr_paths = s->next_path + (s->tot.nr_threads ? 1 : 0);
}

static int cmp_heavy(const void *a, const void *b, void *ctx)
{
	const struct rsp_snapshot *s = ctx;
	const struct rsp_snode *x = &s->nodes[*(const uint32_t *)a],
			       *y = &s->nodes[*(const uint32_t *)b];

	if (x->path != y->path && (!x->path || !y->path))
		return x->path ? 1 : -1;
	if (x->total_ns != y->total_ns)
		return x->total_ns > y->total_ns ? -1 : 1;
	return *(const uint32_t *)a < *(const uint32_t *)b ? -1 : 1;
}

/* Children heaviest first; roots: PID's first, then heaviest first. */
static int sort_tree(struct rsp_snapshot *s)
{
	uint32_t *buf = malloc((s->nr_nodes ? s->nr_nodes : 1) * sizeof(*buf));

	if (!buf)
		return -ENOMEM;
	for (size_t i = 0; i < s->nr_nodes; i++) {
		size_t n = 0;

		for (uint32_t c = s->nodes[i].first_child; c != RSP_SNODE_NONE;
		     c = s->nodes[c].next_sibling)
			buf[n++] = c;
		if (n < 2)
			continue;
		qsort_r(buf, n, sizeof(*buf), cmp_heavy, s);
		s->nodes[i].first_child = buf[0];
		for (size_t k = 0; k < n; k++)
			s->nodes[buf[k]].next_sibling = k + 1 < n ? buf[k + 1] : RSP_SNODE_NONE;
	}
	if (s->nr_roots > 1)
		qsort_r(s->roots, s->nr_roots, sizeof(*s->roots), cmp_heavy, s);
	free(buf);
	return 0;
}

static int cmp_link(const void *a, const void *b)
{
	const struct rsp_slink *x = a, *y = b;

	return x->time < y->time ? -1 : x->time > y->time;
}

/* The threads in the chain; PID's samples, and those no run holds. */
static int collect(struct rsp_snapshot *s)
{
	s->threads = malloc((s->nr_ti ? s->nr_ti : 1) * sizeof(*s->threads));
	if (!s->threads)
		return -ENOMEM;
	for (size_t i = 0; i < s->nr_ti; i++) {
		const struct tinfo *ti = ti_at(s, i);
		const struct rsp_csample *c;
		size_t n = 0;

		if (ti->involved)
			s->threads[s->nr_threads++] = ti->tid;
		if (!ti->base || !s->samples)
			continue;
		c = rsp_samples__range(s->samples, ti->tid, s->from, s->to, &n);
		for (size_t k = 0; k < n; k++) {
			const struct rsp_segment *g =
				rsp_tlstore__segment_at(s->store, ti->tid, c[k].time);
			const struct rsp_segment *h = rsp_tlstore__segment_at(
				s->store, ti->tid,
				c[k].time - min64(c[k].time, s->o.sample_slack_ns));

			s->tot.samples++;
			if ((!g || g->kind != RSP_SEG_RUN) && (!h || h->kind != RSP_SEG_RUN))
				s->tot.samples_unattached++;
		}
	}
	if (s->nr_threads > 1)
		qsort(s->threads, s->nr_threads, sizeof(*s->threads), cmp_u32);
	s->tot.nr_involved = s->nr_threads;
	rsp_vec__sort(s->links, s->nr_links, sizeof(*s->links), cmp_link);
	return 0;
}

static int build(struct rsp_snapshot *s, struct rsp_buf *err)
{
	int ret = base_roots(s);

	if (ret) {
		rsp_buf__puts(err, "snapshot: out of memory");
		return ret;
	}
	if (!s->nr_roots) {
		rsp_buf__printf(err,
				"snapshot: process %ld did nothing in the time asked for; it may "
				"have exited before it, or started after it (try a longer --last)",
				s->o.pid);
		return -ESRCH;
	}
	explain_roots(s);
	explain_started(s);
	sum_up(s);
	if (s->failed || sort_tree(s) || collect(s)) {
		rsp_buf__puts(err, "snapshot: out of memory following the chain; ask for a "
				   "shorter --last");
		return -ENOMEM;
	}
	return 0;
}

static struct rsp_snapshot *snap_alloc(const struct rsp_snapshot_opts *o)
{
	struct rsp_snapshot *s = calloc(1, sizeof(*s));

	if (!s)
		return NULL;
	if (o)
		s->o = *o;
	else
		rsp_snapshot_opts__init(&s->o);
	if (s->o.max_depth > MAX_DEPTH_LIMIT)
		s->o.max_depth = MAX_DEPTH_LIMIT;
	rsp_u64map__init(&s->nmap);
	rsp_u64map__init(&s->tmap);
	s->cur_piece = RSP_SNODE_NONE;
	return s;
}

static int run(struct rsp_snapshot *s, const struct rsp_tlstore *store,
	       const struct rsp_samples *samples, struct rsp_buf *err)
{
	s->store = store;
	s->samples = samples;
	rsp_tlstore__span(store, &s->from, &s->to);
	if (s->o.to) {
		s->from = max64(s->from, s->o.from);
		s->to = min64(s->to, s->o.to);
	}
	if (s->o.pid <= 0) {
		rsp_buf__puts(err, "snapshot: which process? give its pid");
		return -EINVAL;
	}
	return build(s, err);
}

struct rsp_snapshot *rsp_snapshot__new(const struct rsp_tlstore *store,
				       const struct rsp_samples *samples,
				       const struct rsp_snapshot_opts *o, struct rsp_buf *err)
{
	struct rsp_snapshot *s = snap_alloc(o);
	int ret;

	if (!s) {
		rsp_buf__puts(err, "snapshot: out of memory");
		errno = ENOMEM;
		return NULL;
	}
	ret = run(s, store, samples, err);
	if (ret) {
		rsp_snapshot__delete(s);
		errno = -ret;
		return NULL;
	}
	return s;
}

void rsp_snapshot__delete(struct rsp_snapshot *s)
{
	if (!s)
		return;
	free(s->nodes);
	free(s->nkey);
	free(s->roots);
	for (size_t i = 0; i < s->nr_ti; i++) {
		free(ti_at(s, i)->rq_reach);
		free(ti_at(s, i)->cover);
	}
	for (size_t i = 0; i < s->nr_blocks; i++)
		free(s->ti[i]);
	free(s->ti);
	free(s->threads);
	free(s->links);
	free(s->pieces);
	rsp_u64map__exit(&s->nmap);
	rsp_u64map__exit(&s->tmap);
	rsp_tlstore__delete(s->own_store);
	free(s);
}

/* ---- from a window ---------------------------------------------------------- */

struct rsp_snapshot *rsp_snapshot__from_window(const struct rsp_schema *schema,
					       const struct rsp_wsnap *snap,
					       const struct rsp_ksyms *ks,
					       const struct rsp_snapshot_opts *o,
					       struct rsp_timeline_stats *st, struct rsp_buf *err)
{
	struct rsp_tlstore_opts so = {.from = o->from,
				      .to = o->to,
				      .ksyms = ks,
				      .socks = o->socks,
				      .fwake_ns = o->fwake_ns};
	struct rsp_snapshot *s = snap_alloc(o);
	int ret = -ENOMEM;

	if (!s ||
	    !(s->own_store = rsp_tlstore__new(RSP_TLSTORE_SAMPLES | RSP_TLSTORE_STACK_HASHES))) {
		rsp_buf__puts(err, "snapshot: out of memory");
		goto fail;
	}
	ret = rsp_tlstore__load(s->own_store, schema, snap, &so, st, err);
	/* Sleep stacks truncated in libc: the uprobes' stacks stitched under them, DWARF. */
	if (!ret && o->sym)
		ret = rsp_tlstore__repair_stacks(s->own_store, schema, o->sym, &s->tot.repair);
	if (ret == -ENOMEM && !err->len)
		rsp_buf__puts(err, "snapshot: out of memory building the timeline of the window; "
				   "ask for a shorter --last");
	if (!ret)
		ret = run(s, s->own_store, rsp_tlstore__samples(s->own_store), err);
	if (!ret)
		return s;
fail:
	rsp_snapshot__delete(s);
	errno = -ret;
	return NULL;
}

/* ---- getters ------------------------------------------------------------ */

const struct rsp_snapshot_totals *rsp_snapshot__totals(const struct rsp_snapshot *s)
{
	return &s->tot;
}

size_t rsp_snapshot__nr_nodes(const struct rsp_snapshot *s)
{
	return s->nr_nodes;
}

const struct rsp_snode *rsp_snapshot__node(const struct rsp_snapshot *s, uint32_t i)
{
	return i < s->nr_nodes ? &s->nodes[i] : NULL;
}

size_t rsp_snapshot__nr_roots(const struct rsp_snapshot *s)
{
	return s->nr_roots;
}

uint32_t rsp_snapshot__root(const struct rsp_snapshot *s, size_t i)
{
	return i < s->nr_roots ? s->roots[i] : RSP_SNODE_NONE;
}

const struct rsp_slink *rsp_snapshot__links(const struct rsp_snapshot *s, size_t *n)
{
	*n = s->nr_links;
	return s->links;
}

const struct rsp_spiece *rsp_snapshot__pieces(const struct rsp_snapshot *s, size_t *n,
					      bool *truncated)
{
	*n = s->nr_pieces;
	if (truncated)
		*truncated = s->pieces_truncated;
	return s->pieces;
}

const uint32_t *rsp_snapshot__threads(const struct rsp_snapshot *s, size_t *n)
{
	*n = s->nr_threads;
	return s->threads;
}

const struct rsp_tlstore *rsp_snapshot__store(const struct rsp_snapshot *s)
{
	return s->store;
}

const struct rsp_samples *rsp_snapshot__samples(const struct rsp_snapshot *s)
{
	return s->samples;
}
