// SPDX-License-Identifier: GPL-2.0
/*
 * Unit tests of lib/analysis/waitgraph.c on hand-built segment sets (fed to a store
 * through its timeline callbacks): cascaded weights computed by hand,
 * Tarjan's knots and sinks, refinement, background knots, merging, device
 * idle time and --pid; and the graphs of one synthetic stream as each
 * capture backend gets it (support/synth.h), which must agree.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include <linux/perf_event.h>
#include <rsp/ksyms.h>
#include <rsp/record.h>
#include <rsp/timeline.h>
#include <rsp/tlstore.h>
#include <rsp/waitgraph.h>
#include "kallsyms_fake.h"
#include "support/synth.h"

#define DEV ((8u << 20) | 16)
#define MS  1000000ull

struct b {
	struct rsp_tlstore *st;
	struct rsp_timeline_ops ops;
};

static void b_init(struct b *b)
{
	b->st = rsp_tlstore__new(0);
	assert_non_null(b->st);
	rsp_tlstore__ops(&b->ops);
}

static void seg(struct b *b, uint32_t tid, uint32_t tgid, const char *comm, uint8_t kind,
		uint64_t start, uint64_t end, uint8_t wkind, uint32_t wid)
{
	struct rsp_segment s;

	memset(&s, 0, sizeof(s));
	s.tid = tid;
	s.tgid = tgid;
	s.kind = kind;
	s.start = start;
	s.end = end;
	s.waker.kind = wkind;
	s.waker.id = wid;
	s.waker.time = wkind ? end : 0;
	b->ops.segment(b->st, &s, comm);
}

/* A thread's life as alternating RUN/SLEEP: pairs (sleep start, end, waker) over [0, end]. */
static void life(struct b *b, uint32_t tid, uint32_t tgid, const char *comm, uint64_t end,
		 const uint64_t (*sleeps)[4], size_t n)
{
	uint64_t t = 0;

	for (size_t i = 0; i < n; i++) {
		if (sleeps[i][0] > t)
			seg(b, tid, tgid, comm, RSP_SEG_RUN, t, sleeps[i][0], 0, 0);
		seg(b, tid, tgid, comm, RSP_SEG_SLEEP, sleeps[i][0], sleeps[i][1],
		    (uint8_t)sleeps[i][2], (uint32_t)sleeps[i][3]);
		t = sleeps[i][1];
	}
	if (t < end)
		seg(b, tid, tgid, comm, RSP_SEG_RUN, t, end, 0, 0);
}

static struct rsp_waitgraph *graph(struct b *b, uint64_t end, double threshold, bool merge,
				   long pid)
{
	struct rsp_waitgraph_opts o;
	struct rsp_buf err = RSP_BUF_INIT;
	struct rsp_waitgraph *g;

	assert_int_equal(rsp_tlstore__seal(b->st, 0, end), 0);
	rsp_waitgraph_opts__init(&o);
	o.threshold = threshold;
	o.merge = merge;
	o.pid = pid;
	g = rsp_waitgraph__new(b->st, &o, &err);
	if (!g && pid < 0)
		fail_msg("graph: %s", err.data);
	rsp_buf__exit(&err);
	return g;
}

static uint64_t weight(const struct rsp_waitgraph *g, uint32_t from_tid, uint32_t to_tid)
{
	long f = rsp_waitgraph__vertex_of(g, from_tid), t = rsp_waitgraph__vertex_of(g, to_tid);
	const struct rsp_wedge *e;

	assert_true(f >= 0 && t >= 0);
	e = rsp_waitgraph__find_edge(g, (uint32_t)f, (uint32_t)t);
	return e ? e->weight_ns : 0;
}

/* A waits for B over [10, 60]; B for C over [10, 40]; C for D over [5, 30]. */
static void test_cascade(void **state)
{
	static const uint64_t a[][4] = {{10, 60, RSP_WAKER_THREAD, 2}};
	static const uint64_t bb[][4] = {{10, 40, RSP_WAKER_THREAD, 3}};
	static const uint64_t c[][4] = {{5, 30, RSP_WAKER_THREAD, 4}};
	struct b b;
	struct rsp_waitgraph *g;
	const struct rsp_wedge *e;

	b_init(&b);
	life(&b, 1, 1, "a", 100, a, 1);
	life(&b, 2, 2, "b", 100, bb, 1);
	life(&b, 3, 3, "c", 100, c, 1);
	life(&b, 4, 4, "d", 100, NULL, 0);
	g = graph(&b, 100, 0.2, true, -1);
	/* A -> B keeps its own length */
	assert_int_equal(weight(g, 1, 2), 50);
	/* B -> C: its own 30, plus the 30 of it inside A's wait */
	assert_int_equal(weight(g, 2, 3), 60);
	/* C -> D: own 25, plus [10, 30] inside B's wait, plus [10, 30] again via A -> B */
	assert_int_equal(weight(g, 3, 4), 65);
	e = rsp_waitgraph__find_edge(g, (uint32_t)rsp_waitgraph__vertex_of(g, 3),
				     (uint32_t)rsp_waitgraph__vertex_of(g, 4));
	assert_int_equal(e->direct_ns, 25);
	assert_int_equal(e->count, 1);
	/* edges come heaviest first */
	assert_int_equal(rsp_waitgraph__edge(g, 0)->weight_ns, 65);
	/* D waits for nothing: the only sink; no knot */
	assert_int_equal(rsp_waitgraph__nr_knots(g), 0);
	assert_int_equal(rsp_waitgraph__nr_sinks(g), 1);
	assert_int_equal(rsp_waitgraph__sink(g, 0), rsp_waitgraph__vertex_of(g, 4));
	rsp_waitgraph__delete(g);
	rsp_tlstore__delete(b.st);
}

/* Cascading stops at threads already on the path: no infinite loop on cycles. */
static void test_cascade_cycle(void **state)
{
	static const uint64_t a[][4] = {{10, 60, RSP_WAKER_THREAD, 2}};
	static const uint64_t bb[][4] = {{20, 50, RSP_WAKER_THREAD, 1}};
	struct b b;
	struct rsp_waitgraph *g;

	b_init(&b);
	life(&b, 1, 1, "a", 100, a, 1);
	life(&b, 2, 2, "b", 100, bb, 1);
	g = graph(&b, 100, 0.2, true, -1);
	/* A -> B 50; B -> A: own 30 plus 30 inside A's wait (then A is on the path) */
	assert_int_equal(weight(g, 1, 2), 50 + 30);
	assert_int_equal(weight(g, 2, 1), 30 + 30);
	rsp_waitgraph__delete(g);
	rsp_tlstore__delete(b.st);
}

/* Two threads handing work back and forth: a knot; a bystander waiting on them: outside. */
static void test_knot_and_sink(void **state)
{
	static const uint64_t x[][4] = {{50, 98, RSP_WAKER_THREAD, 21}};
	static const uint64_t y[][4] = {{0, 48, RSP_WAKER_THREAD, 20}};
	static const uint64_t w[][4] = {{0, 90, RSP_WAKER_THREAD, 20}};
	struct b b;
	struct rsp_waitgraph *g;
	const struct rsp_wknot *k;

	b_init(&b);
	life(&b, 20, 20, "x", 100, x, 1);
	life(&b, 21, 21, "y", 100, y, 1);
	life(&b, 22, 22, "w", 100, w, 1);
	g = graph(&b, 100, 0.2, true, -1);
	assert_int_equal(rsp_waitgraph__nr_knots(g), 1);
	k = rsp_waitgraph__knot(g, 0);
	assert_false(k->background);
	assert_false(k->refined);
	assert_int_equal(k->nr_vertices, 2);
	assert_int_equal(k->nr_edges, 2);
	/* X -> Y: its own 48, plus [50, 90] of it inside W's wait for X */
	assert_int_equal(weight(g, 20, 21), 48 + 40);
	assert_int_equal(weight(g, 21, 20), 48);
	assert_int_equal(weight(g, 22, 20), 90);
	assert_int_equal(rsp_waitgraph__nr_sinks(g), 0);
	for (size_t i = 0; i < rsp_waitgraph__nr_edges(g); i++) {
		const struct rsp_wedge *e = rsp_waitgraph__edge(g, i);

		assert_int_equal(rsp_waitgraph__in_knot(g, i),
				 e->from != (uint32_t)rsp_waitgraph__vertex_of(g, 22));
	}
	rsp_waitgraph__delete(g);
	rsp_tlstore__delete(b.st);
}

/* P <-> Q heavy, Q <-> R with a light Q -> R: refinement trims it. */
static void build_refine(struct b *b)
{
	static const uint64_t p[][4] = {{0, 40, RSP_WAKER_THREAD, 31}};
	static const uint64_t q[][4] = {{40, 80, RSP_WAKER_THREAD, 30},
					{80, 85, RSP_WAKER_THREAD, 32}};
	static const uint64_t r[][4] = {{0, 30, RSP_WAKER_THREAD, 31}};

	b_init(b);
	life(b, 30, 30, "p", 100, p, 1);
	life(b, 31, 31, "q", 100, q, 2);
	life(b, 32, 32, "r", 100, r, 1);
}

static void test_refinement(void **state)
{
	struct b b;
	struct rsp_waitgraph *g;
	const struct rsp_wknot *k;

	build_refine(&b);
	g = graph(&b, 100, 0.2, true, -1);
	assert_int_equal(weight(g, 31, 32), 5);
	assert_int_equal(rsp_waitgraph__nr_knots(g), 1);
	k = rsp_waitgraph__knot(g, 0);
	assert_true(k->refined);
	assert_int_equal(k->nr_vertices, 2);
	for (size_t i = 0; i < k->nr_vertices; i++)
		assert_true(k->vertices[i] == (uint32_t)rsp_waitgraph__vertex_of(g, 30) ||
			    k->vertices[i] == (uint32_t)rsp_waitgraph__vertex_of(g, 31));
	rsp_waitgraph__delete(g);
	rsp_tlstore__delete(b.st);

	/* a threshold of 0: the lightest edge already exceeds it, no trimming */
	build_refine(&b);
	g = graph(&b, 100, 0.0, true, -1);
	assert_int_equal(rsp_waitgraph__nr_knots(g), 1);
	assert_int_equal(rsp_waitgraph__knot(g, 0)->nr_vertices, 3);
	assert_false(rsp_waitgraph__knot(g, 0)->refined);
	rsp_waitgraph__delete(g);
	rsp_tlstore__delete(b.st);
}

/* A periodic thread and its timer: a background knot, removed; the rest goes on. */
static void test_background(void **state)
{
	static const uint64_t h[][4] = {{0, 10, RSP_WAKER_TIMER, 0},
					{11, 20, RSP_WAKER_TIMER, 0},
					{21, 30, RSP_WAKER_TIMER, 0},
					{31, 40, RSP_WAKER_THREAD, 41}};
	static const uint64_t x[][4] = {{50, 98, RSP_WAKER_THREAD, 21}};
	static const uint64_t y[][4] = {{0, 48, RSP_WAKER_THREAD, 20}};
	struct b b;
	struct rsp_waitgraph *g;
	const struct rsp_wknot *k;
	const struct rsp_wvertex *v;
	size_t nb = 0;

	b_init(&b);
	life(&b, 40, 40, "heartbeat", 40, h, 4);
	life(&b, 41, 41, "worker", 100, NULL, 0);
	life(&b, 20, 20, "x", 100, x, 1);
	life(&b, 21, 21, "y", 100, y, 1);
	g = graph(&b, 100, 0.2, true, -1);
	/* heartbeat -> timer 28 (three timer sleeps); timer -> heartbeat 40 - 28 */
	for (size_t i = 0; i < rsp_waitgraph__nr_knots(g); i++) {
		k = rsp_waitgraph__knot(g, i);
		if (!k->background)
			continue;
		nb++;
		assert_int_equal(k->nr_vertices, 2);
		for (size_t j = 0; j < 2; j++) {
			v = rsp_waitgraph__vertex(g, k->vertices[j]);
			assert_true(v->kind == RSP_WV_TIMER || v->id == 40);
			assert_true(v->removed);
		}
		assert_int_equal(rsp_waitgraph__edge(g, k->edges[0])->weight_ns, 28);
		assert_int_equal(rsp_waitgraph__edge(g, k->edges[1])->weight_ns, 12);
		assert_true(k->cpu_util < 1.0);
	}
	assert_int_equal(nb, 0); /* heartbeat also waits for the worker: not closed */
	rsp_waitgraph__delete(g);
	rsp_tlstore__delete(b.st);

	/* without the lock wait, heartbeat and its timer are a closed, idle knot */
	{
		static const uint64_t h2[][4] = {{0, 10, RSP_WAKER_TIMER, 0},
						 {11, 20, RSP_WAKER_TIMER, 0},
						 {21, 30, RSP_WAKER_TIMER, 0}};

		b_init(&b);
		life(&b, 40, 40, "heartbeat", 31, h2, 3);
		life(&b, 20, 20, "x", 100, x, 1);
		life(&b, 21, 21, "y", 100, y, 1);
		g = graph(&b, 100, 0.2, true, -1);
	}
	assert_int_equal(rsp_waitgraph__nr_knots(g), 2);
	/* the final knot first, then the background one */
	assert_false(rsp_waitgraph__knot(g, 0)->background);
	k = rsp_waitgraph__knot(g, 1);
	assert_true(k->background);
	assert_int_equal(k->nr_vertices, 2);
	assert_int_equal(rsp_waitgraph__edge(g, k->edges[0])->weight_ns, 28);
	assert_int_equal(rsp_waitgraph__edge(g, k->edges[1])->weight_ns, 3);
	rsp_waitgraph__delete(g);
	rsp_tlstore__delete(b.st);
}

/*
 * A thread that waits for a background knot's member: after the knot is
 * set aside it waits for the knot, not for nothing (no sink), and its edge
 * is still there, into a vertex marked background.
 */
static void test_background_waiter(void **state)
{
	static const uint64_t h[][4] = {{0, 10, RSP_WAKER_TIMER, 0},
					{11, 20, RSP_WAKER_TIMER, 0},
					{21, 30, RSP_WAKER_TIMER, 0}};
	static const uint64_t x[][4] = {{50, 98, RSP_WAKER_THREAD, 21}};
	static const uint64_t y[][4] = {{0, 48, RSP_WAKER_THREAD, 20}};
	static const uint64_t z[][4] = {{40, 70, RSP_WAKER_THREAD, 40}};
	struct b b;
	struct rsp_waitgraph *g;
	long hv, zv;
	bool bg_knot = false;

	b_init(&b);
	life(&b, 40, 40, "heartbeat", 31, h, 3);
	life(&b, 20, 20, "x", 100, x, 1);
	life(&b, 21, 21, "y", 100, y, 1);
	life(&b, 30, 30, "z", 100, z, 1);
	g = graph(&b, 100, 0.2, true, -1);
	hv = rsp_waitgraph__vertex_of(g, 40);
	zv = rsp_waitgraph__vertex_of(g, 30);
	assert_true(hv >= 0 && zv >= 0);
	for (size_t i = 0; i < rsp_waitgraph__nr_knots(g); i++) {
		const struct rsp_wknot *k = rsp_waitgraph__knot(g, i);

		for (size_t j = 0; j < k->nr_vertices; j++)
			if (k->background && k->vertices[j] == (uint32_t)hv)
				bg_knot = true;
	}
	assert_true(bg_knot);
	assert_true(rsp_waitgraph__vertex(g, (uint32_t)hv)->background);
	assert_true(rsp_waitgraph__vertex(g, (uint32_t)hv)->removed);
	assert_false(rsp_waitgraph__vertex(g, (uint32_t)zv)->removed);
	assert_false(rsp_waitgraph__vertex(g, (uint32_t)zv)->background);
	assert_int_equal(weight(g, 30, 40), 30);
	for (size_t i = 0; i < rsp_waitgraph__nr_sinks(g); i++)
		assert_int_not_equal(rsp_waitgraph__sink(g, i), zv);
	rsp_waitgraph__delete(g);
	rsp_tlstore__delete(b.st);
}

/*
 * RSP_TLSTORE_STACK_HASHES: each stored sleep carries its stacks' hashes
 * (equal stacks alike, never 0); without the flag, none; and the graph
 * groups the stacks the same either way.
 */
static void test_stack_hashes(void **state)
{
	static const uint64_t s1[] = {PERF_CONTEXT_KERNEL, 0xffffffff81000010ull,
				      0xffffffff81000020ull, PERF_CONTEXT_USER, 0x401000};
	static const uint64_t s2[] = {PERF_CONTEXT_KERNEL, 0xffffffff81000010ull,
				      0xffffffff81000030ull, PERF_CONTEXT_USER, 0x401000};
	uint64_t w[2][2];

	for (int flag = 0; flag < 2; flag++) {
		struct rsp_tlstore *st = rsp_tlstore__new(flag ? RSP_TLSTORE_STACK_HASHES : 0);
		struct rsp_timeline_ops ops;
		const struct rsp_tlthread *t;
		struct rsp_waitgraph_opts o;
		struct rsp_buf err = RSP_BUF_INIT;
		struct rsp_waitgraph *g;
		const struct rsp_wedge *e;

		assert_non_null(st);
		rsp_tlstore__ops(&ops);
		for (int i = 0; i < 3; i++) {
			struct rsp_segment sg;

			memset(&sg, 0, sizeof(sg));
			sg.tid = sg.tgid = 1;
			sg.kind = RSP_SEG_SLEEP;
			sg.start = (uint64_t)i * 10;
			sg.end = sg.start + 5 + (uint64_t)i;
			sg.stack = i == 1 ? s2 : s1;
			sg.nr_stack = 5;
			sg.waker.kind = RSP_WAKER_THREAD;
			sg.waker.id = 2;
			sg.waker.time = sg.end;
			sg.waker.stack = s2;
			sg.waker.nr_stack = 5;
			ops.segment(st, &sg, "a");
		}
		life(&(struct b){st, ops}, 2, 2, "b", 40, NULL, 0);
		assert_int_equal(rsp_tlstore__seal(st, 0, 40), 0);
		t = rsp_tlstore__find_thread(st, 1);
		assert_non_null(t);
		assert_int_equal(t->nr_segs, 3);
		if (flag) {
			assert_int_not_equal(t->segs[0].stack_hash, 0);
			assert_int_equal(t->segs[0].stack_hash, t->segs[2].stack_hash);
			assert_int_not_equal(t->segs[0].stack_hash, t->segs[1].stack_hash);
			assert_int_equal(t->segs[0].waker.stack_hash, t->segs[1].stack_hash);
		} else {
			for (int i = 0; i < 3; i++)
				assert_int_equal(
					t->segs[i].stack_hash | t->segs[i].waker.stack_hash, 0);
		}
		rsp_waitgraph_opts__init(&o);
		o.merge = false;
		g = rsp_waitgraph__new(st, &o, &err);
		assert_non_null(g);
		e = rsp_waitgraph__find_edge(g, (uint32_t)rsp_waitgraph__vertex_of(g, 1),
					     (uint32_t)rsp_waitgraph__vertex_of(g, 2));
		assert_non_null(e);
		/* s1 waited 5 + 7 ns in two sleeps, s2 6 ns in one: two stacks, s1 first */
		assert_int_equal(e->nr_wait_stacks, 2);
		assert_ptr_equal(e->wait_stacks[0].ips, s1);
		w[flag][0] = e->wait_stacks[0].weight_ns;
		w[flag][1] = e->wait_stacks[1].weight_ns;
		assert_int_equal(w[flag][0], 12);
		assert_int_equal(w[flag][1], 6);
		assert_int_equal(e->nr_waker_stacks, 1);
		rsp_waitgraph__delete(g);
		rsp_buf__exit(&err);
		rsp_tlstore__delete(st);
	}
}

/* Threads of one process named alike merge into one vertex with a self-loop. */
static void test_merge(void **state)
{
	static const uint64_t w1[][4] = {{0, 50, RSP_WAKER_THREAD, 12}};
	static const uint64_t w2[][4] = {{50, 100, RSP_WAKER_THREAD, 11}};
	struct b b;
	struct rsp_waitgraph *g;
	const struct rsp_wvertex *v;
	long m;

	b_init(&b);
	life(&b, 11, 10, "worker-1", 100, w1, 1);
	life(&b, 12, 10, "worker-2", 100, w2, 1);
	g = graph(&b, 100, 0.2, true, -1);
	m = rsp_waitgraph__vertex_of(g, 11);
	assert_int_equal(m, rsp_waitgraph__vertex_of(g, 12));
	v = rsp_waitgraph__vertex(g, (size_t)m);
	assert_int_equal(v->kind, RSP_WV_MERGED);
	assert_string_equal(v->name, "worker*[10]");
	assert_int_equal(v->nr_threads, 2);
	assert_int_equal(weight(g, 11, 11), 100);
	assert_int_equal(rsp_waitgraph__nr_knots(g), 1);
	assert_int_equal(rsp_waitgraph__knot(g, 0)->nr_vertices, 1);
	assert_int_equal(rsp_waitgraph__knot(g, 0)->nr_edges, 1);
	rsp_waitgraph__delete(g);
	rsp_tlstore__delete(b.st);

	b_init(&b);
	life(&b, 11, 10, "worker-1", 100, w1, 1);
	life(&b, 12, 10, "worker-2", 100, w2, 1);
	g = graph(&b, 100, 0.2, false, -1);
	assert_true(rsp_waitgraph__vertex_of(g, 11) != rsp_waitgraph__vertex_of(g, 12));
	assert_string_equal(rsp_waitgraph__vertex(g, (size_t)rsp_waitgraph__vertex_of(g, 11))->name,
			    "worker-1[11]");
	assert_int_equal(rsp_waitgraph__knot(g, 0)->nr_vertices, 2);
	rsp_waitgraph__delete(g);
	rsp_tlstore__delete(b.st);
}

static const uint64_t stack_a[] = {PERF_CONTEXT_KERNEL, 0xffffffff81001000ull, PERF_CONTEXT_USER,
				   0x401000ull};
static const uint64_t stack_b[] = {PERF_CONTEXT_KERNEL, 0xffffffff81002000ull, PERF_CONTEXT_USER,
				   0x402000ull};

/* A run, then a sleep at @stack over [a, z] woken by @waker, then a run to @end. */
static void sleeper(struct b *b, uint32_t tid, uint32_t tgid, const char *comm, uint64_t a,
		    uint64_t z, const uint64_t *stack, uint32_t waker, uint64_t end)
{
	struct rsp_segment s;

	seg(b, tid, tgid, comm, RSP_SEG_RUN, 0, a, 0, 0);
	memset(&s, 0, sizeof(s));
	s.tid = tid, s.tgid = tgid, s.kind = RSP_SEG_SLEEP, s.start = a, s.end = z;
	s.stack = stack, s.nr_stack = 4;
	s.waker.kind = RSP_WAKER_THREAD, s.waker.id = waker, s.waker.time = z;
	b->ops.segment(b->st, &s, comm);
	seg(b, tid, tgid, comm, RSP_SEG_RUN, z, end, 0, 0);
}

/*
 * Merging by wait stacks (wPerf): pool-1 and other-2 wait at the same
 * stack and merge, whatever their names; pool-3 waits elsewhere and stays
 * apart. By names, pool-1 and pool-3 merge instead.
 */
static void test_merge_stacks(void **state)
{
	struct rsp_waitgraph_opts o;
	struct rsp_buf err = RSP_BUF_INIT;
	struct rsp_waitgraph *g;
	struct b b;

	for (int by_names = 0; by_names < 2; by_names++) {
		b_init(&b);
		sleeper(&b, 21, 20, "pool-1", 10, 80, stack_a, 24, 100);
		sleeper(&b, 22, 20, "other-2", 20, 90, stack_a, 24, 100);
		sleeper(&b, 23, 20, "pool-3", 10, 60, stack_b, 24, 100);
		life(&b, 24, 24, "feeder", 100, NULL, 0);
		assert_int_equal(rsp_tlstore__seal(b.st, 0, 100), 0);
		rsp_waitgraph_opts__init(&o);
		o.merge_stacks = !by_names;
		g = rsp_waitgraph__new(b.st, &o, &err);
		assert_non_null(g);
		if (!by_names) {
			assert_int_equal(rsp_waitgraph__vertex_of(g, 21),
					 rsp_waitgraph__vertex_of(g, 22));
			assert_int_not_equal(rsp_waitgraph__vertex_of(g, 21),
					     rsp_waitgraph__vertex_of(g, 23));
			assert_string_equal(
				rsp_waitgraph__vertex(g, (size_t)rsp_waitgraph__vertex_of(g, 21))
					->name,
				"pool~[20]");
		} else {
			assert_int_equal(rsp_waitgraph__vertex_of(g, 21),
					 rsp_waitgraph__vertex_of(g, 23));
			assert_int_not_equal(rsp_waitgraph__vertex_of(g, 21),
					     rsp_waitgraph__vertex_of(g, 22));
			assert_string_equal(
				rsp_waitgraph__vertex(g, (size_t)rsp_waitgraph__vertex_of(g, 21))
					->name,
				"pool*[20]");
		}
		rsp_waitgraph__delete(g);
		rsp_tlstore__delete(b.st);
	}
	rsp_buf__exit(&err);
}

static bool own_52(uint32_t tid, void *ctx)
{
	(void)ctx;
	return tid == 52;
}

/* Short-lived children of one parent: one virtual thread waiting for the parent when idle. */
static void test_short_lived(void **state)
{
	struct rsp_link l;
	struct b b;
	struct rsp_waitgraph *g;
	const struct rsp_wvertex *v;
	const uint32_t kids[][3] = {{51, 10, 20}, {52, 40, 50}, {53, 45, 55}};

	b_init(&b);
	life(&b, 50, 50, "shell", 1000, NULL, 0);
	for (size_t i = 0; i < 3; i++) {
		memset(&l, 0, sizeof(l));
		l.kind = RSP_LINK_FORK;
		l.tid = kids[i][0];
		l.time = kids[i][1];
		l.from.kind = RSP_WAKER_THREAD;
		l.from.id = 50;
		b.ops.link(b.st, &l);
		{
			struct rsp_segment s;

			memset(&s, 0, sizeof(s));
			s.tid = kids[i][0];
			s.tgid = kids[i][0];
			s.kind = RSP_SEG_RUN;
			s.start = kids[i][1];
			s.end = kids[i][2];
			s.flags = RSP_SEGF_EXITED;
			b.ops.segment(b.st, &s, "ls");
		}
	}
	g = graph(&b, 1000, 0.2, true, -1);
	assert_int_equal(rsp_waitgraph__vertex_of(g, 51), rsp_waitgraph__vertex_of(g, 53));
	v = rsp_waitgraph__vertex(g, (size_t)rsp_waitgraph__vertex_of(g, 51));
	assert_int_equal(v->kind, RSP_WV_SHORT);
	assert_int_equal(v->nr_threads, 3);
	/* alive over [10, 20] and [40, 55]: idle 20 in between */
	assert_int_equal(weight(g, 51, 50), 20);
	rsp_waitgraph__delete(g);
	/* own_vertex (merge graph): 52 keeps its own vertex, its siblings stay merged */
	{
		struct rsp_waitgraph_opts o;
		struct rsp_buf err = RSP_BUF_INIT;
		size_t nv;

		rsp_waitgraph_opts__init(&o);
		g = rsp_waitgraph__new(b.st, &o, &err);
		assert_non_null(g);
		nv = rsp_waitgraph__nr_vertices(g);
		rsp_waitgraph__delete(g);
		o.own_vertex = own_52;
		g = rsp_waitgraph__new(b.st, &o, &err);
		assert_non_null(g);
		v = rsp_waitgraph__vertex(g, (size_t)rsp_waitgraph__vertex_of(g, 52));
		assert_int_equal(v->kind, RSP_WV_THREAD);
		assert_string_equal(v->name, "ls[52]");
		v = rsp_waitgraph__vertex(g, (size_t)rsp_waitgraph__vertex_of(g, 51));
		assert_int_equal(v->kind, RSP_WV_SHORT);
		assert_int_equal(v->nr_threads, 2);
		assert_int_equal(rsp_waitgraph__vertex_of(g, 51), rsp_waitgraph__vertex_of(g, 53));
		/* nothing filtered: one vertex more, none removed */
		assert_int_equal(rsp_waitgraph__nr_vertices(g), nv + 1);
		for (size_t i = 0; i < rsp_waitgraph__nr_vertices(g); i++)
			assert_false(rsp_waitgraph__vertex(g, i)->removed);
		rsp_waitgraph__delete(g);
		rsp_buf__exit(&err);
	}
	rsp_tlstore__delete(b.st);
}

/* The vertex of device DEV serving thread @tid's requests, or -1. */
static long disk_for(const struct rsp_waitgraph *g, uint32_t tid)
{
	long owner = rsp_waitgraph__vertex_of(g, tid);

	for (size_t v = 0; v < rsp_waitgraph__nr_vertices(g); v++) {
		const struct rsp_wvertex *x = rsp_waitgraph__vertex(g, v);

		if (x->kind == RSP_WV_DISK && x->id == DEV && (long)x->owner == owner)
			return (long)v;
	}
	return -1;
}

/*
 * A device is a vertex per requester: it waits, while idle, for the issuer
 * of what ends its idleness (a batch split by bytes), and a thread waits
 * for the device serving it.
 */
static void test_device(void **state)
{
	static const uint64_t bb[][4] = {{10 * MS, 30 * MS, RSP_WAKER_DEVICE, DEV}};
	struct rsp_block_req r;
	struct b b;
	struct rsp_waitgraph *g;
	long d60, d61, v60, v61;
	const struct rsp_wedge *e;

	b_init(&b);
	life(&b, 60, 60, "b", 100 * MS, bb, 1);
	life(&b, 61, 61, "a", 100 * MS, NULL, 0);
	memset(&r, 0, sizeof(r));
	r.dev = DEV;
	r.id = 1, r.tid = 60, r.bytes = 4096, r.insert = r.issue = 10 * MS, r.complete = 30 * MS;
	b.ops.block(b.st, &r);
	r.id = 2, r.tid = 60, r.bytes = 4096, r.insert = r.issue = 50 * MS, r.complete = 70 * MS;
	b.ops.block(b.st, &r);
	r.id = 3, r.tid = 61, r.bytes = 12288, r.insert = r.issue = 50 * MS, r.complete = 70 * MS;
	b.ops.block(b.st, &r);
	/* completion unknown: the idle time after it is unknown too */
	r.id = 4, r.tid = 61, r.bytes = 4096, r.insert = r.issue = 80 * MS, r.complete = 0;
	r.flags = RSP_BLKF_COMPLETE_NOT_SEEN;
	b.ops.block(b.st, &r);
	r.id = 5, r.tid = 60, r.bytes = 4096, r.insert = r.issue = 95 * MS, r.complete = 99 * MS,
	r.flags = 0;
	b.ops.block(b.st, &r);
	g = graph(&b, 100 * MS, 0.2, true, -1);
	assert_int_equal(weight(g, 60, 60), 0);
	v60 = rsp_waitgraph__vertex_of(g, 60);
	v61 = rsp_waitgraph__vertex_of(g, 61);
	d60 = disk_for(g, 60);
	d61 = disk_for(g, 61);
	assert_true(d60 >= 0 && d61 >= 0 && d60 != d61);
	assert_string_equal(rsp_waitgraph__vertex(g, (size_t)d60)->name, "disk 8:16 for b[60]");
	e = rsp_waitgraph__find_edge(g, (uint32_t)v60, (uint32_t)d60);
	assert_int_equal(e->weight_ns, 20 * MS);
	/* idle [30, 50] split 1:3; idle [70, 80] to a alone; after request 4: unknown */
	e = rsp_waitgraph__find_edge(g, (uint32_t)d60, (uint32_t)v60);
	assert_int_equal(e->weight_ns, 5 * MS);
	e = rsp_waitgraph__find_edge(g, (uint32_t)d61, (uint32_t)v61);
	assert_int_equal(e->weight_ns, (15 + 10) * MS);
	/* each serves its own requester only */
	assert_null(rsp_waitgraph__find_edge(g, (uint32_t)d60, (uint32_t)v61));
	assert_null(rsp_waitgraph__find_edge(g, (uint32_t)d61, (uint32_t)v60));
	rsp_waitgraph__delete(g);
	rsp_tlstore__delete(b.st);
}

/*
 * The knot of a thread that waits on the disk while another process uses
 * the same disk is {A, disk for A}. With one vertex for the disk, B (whose
 * request ended 25 ms of the disk's idleness, over the 20% threshold that
 * stops refinement) was in A's component, and A's knot was never found.
 */
static void test_device_shared(void **state)
{
	static const uint64_t aw[][4] = {{10 * MS, 20 * MS, RSP_WAKER_DEVICE, DEV},
					 {50 * MS, 60 * MS, RSP_WAKER_DEVICE, DEV}};
	static const uint64_t bw[][4] = {{0, 45 * MS, RSP_WAKER_TIMER, 0},
					 {45 * MS, 48 * MS, RSP_WAKER_DEVICE, DEV},
					 {48 * MS, 100 * MS, RSP_WAKER_TIMER, 0}};
	struct rsp_block_req r;
	struct b b;
	struct rsp_waitgraph *g;
	const struct rsp_wknot *k = NULL;
	long va, da;

	b_init(&b);
	life(&b, 70, 70, "a", 100 * MS, aw, 2);
	life(&b, 80, 80, "b", 100 * MS, bw, 3);
	memset(&r, 0, sizeof(r));
	r.dev = DEV, r.bytes = 4096;
	r.id = 1, r.tid = 70, r.insert = r.issue = 10 * MS, r.complete = 20 * MS;
	b.ops.block(b.st, &r);
	r.id = 2, r.tid = 80, r.insert = r.issue = 45 * MS, r.complete = 48 * MS;
	b.ops.block(b.st, &r);
	r.id = 3, r.tid = 70, r.insert = r.issue = 50 * MS, r.complete = 60 * MS;
	b.ops.block(b.st, &r);
	g = graph(&b, 100 * MS, 0.2, true, -1);
	va = rsp_waitgraph__vertex_of(g, 70);
	da = disk_for(g, 70);
	assert_true(da >= 0);
	for (size_t i = 0; i < rsp_waitgraph__nr_knots(g); i++)
		for (size_t j = 0; j < rsp_waitgraph__knot(g, i)->nr_vertices; j++)
			if (rsp_waitgraph__knot(g, i)->vertices[j] == (uint32_t)va)
				k = rsp_waitgraph__knot(g, i);
	assert_non_null(k);
	assert_false(k->background);
	assert_int_equal(k->nr_vertices, 2);
	assert_true((k->vertices[0] == (uint32_t)va && k->vertices[1] == (uint32_t)da) ||
		    (k->vertices[0] == (uint32_t)da && k->vertices[1] == (uint32_t)va));
	rsp_waitgraph__delete(g);
	rsp_tlstore__delete(b.st);
}

/*
 * wPerf's Figure 1 with a producer that filled the file first: A (90)
 * waits for its own disk at its start, then for B (91); B waits for the
 * disk serving it, and 3% of the time for A (the queue ran empty). That
 * light B -> A made {A, B, disk for B} one component, leaving to A's disk:
 * no knot at all. Trimmed like a knot's lightest edge, it leaves the knot
 * {B, disk for B} and A outside, waiting for it and for its own disk.
 */
static void test_leaving_trimmed(void **state)
{
	static const uint64_t aw[][4] = {{0, 10 * MS, RSP_WAKER_DEVICE, DEV},
					 {20 * MS, 90 * MS, RSP_WAKER_THREAD, 91}};
	static const uint64_t bw[][4] = {{12 * MS, 15 * MS, RSP_WAKER_THREAD, 90},
					 {20 * MS, 40 * MS, RSP_WAKER_DEVICE, DEV},
					 {45 * MS, 65 * MS, RSP_WAKER_DEVICE, DEV},
					 {70 * MS, 90 * MS, RSP_WAKER_DEVICE, DEV}};
	static const uint64_t reqs[][3] = {{90, 0, 10}, {91, 20, 40}, {91, 45, 65}, {91, 70, 90}};
	struct rsp_block_req r;
	struct b b;
	struct rsp_waitgraph *g;
	const struct rsp_wknot *k;
	long va, vb, da, db;

	b_init(&b);
	life(&b, 90, 90, "a", 100 * MS, aw, 2);
	life(&b, 91, 90, "b", 100 * MS, bw, 4);
	memset(&r, 0, sizeof(r));
	r.dev = DEV, r.bytes = 4096;
	for (size_t i = 0; i < 4; i++) {
		r.id = i + 1, r.tid = (uint32_t)reqs[i][0];
		r.insert = r.issue = reqs[i][1] * MS, r.complete = reqs[i][2] * MS;
		b.ops.block(b.st, &r);
	}
	g = graph(&b, 100 * MS, 0.2, false, -1);
	va = rsp_waitgraph__vertex_of(g, 90);
	vb = rsp_waitgraph__vertex_of(g, 91);
	da = disk_for(g, 90);
	db = disk_for(g, 91);
	assert_true(da >= 0 && db >= 0 && da != db);
	/* its own 3 ms, and 3 more inside the disk's idle [10, 20] waiting for B */
	assert_int_equal(weight(g, 91, 90), 6 * MS);
	assert_non_null(rsp_waitgraph__find_edge(g, (uint32_t)va, (uint32_t)da));
	assert_int_equal(rsp_waitgraph__nr_knots(g), 1);
	k = rsp_waitgraph__knot(g, 0);
	assert_false(k->background);
	assert_true(k->refined);
	assert_int_equal(k->nr_vertices, 2);
	assert_true((k->vertices[0] == (uint32_t)vb && k->vertices[1] == (uint32_t)db) ||
		    (k->vertices[0] == (uint32_t)db && k->vertices[1] == (uint32_t)vb));
	assert_int_equal(rsp_waitgraph__nr_sinks(g), 1);
	assert_int_equal(rsp_waitgraph__sink(g, 0), (uint32_t)da);
	rsp_waitgraph__delete(g);
	rsp_tlstore__delete(b.st);

	/* with a threshold of 0 nothing is trimmed: no knot, as before */
	b_init(&b);
	life(&b, 90, 90, "a", 100 * MS, aw, 2);
	life(&b, 91, 90, "b", 100 * MS, bw, 4);
	for (size_t i = 0; i < 4; i++) {
		r.id = i + 1, r.tid = (uint32_t)reqs[i][0];
		r.insert = r.issue = reqs[i][1] * MS, r.complete = reqs[i][2] * MS;
		b.ops.block(b.st, &r);
	}
	g = graph(&b, 100 * MS, 0.0, false, -1);
	assert_int_equal(rsp_waitgraph__nr_knots(g), 0);
	rsp_waitgraph__delete(g);
	rsp_tlstore__delete(b.st);
}

/* A sleep of @tid with a reason, ended by @waker (kind, id) at its end. */
static void sleep_why(struct b *b, uint32_t tid, const char *comm, uint64_t start, uint64_t end,
		      uint8_t reason, uint8_t wkind, uint32_t wid)
{
	struct rsp_segment s;

	memset(&s, 0, sizeof(s));
	s.tid = s.tgid = tid;
	s.kind = RSP_SEG_SLEEP;
	s.start = start;
	s.end = end;
	s.reason = reason;
	s.waker.kind = wkind;
	s.waker.id = wid;
	s.waker.time = end;
	b->ops.segment(b->st, &s, comm);
}

/*
 * A kworker relays the disk: woken by the disk at 19 ms (the writeback it
 * issued for A's file), it wakes A, waiting in fsync's writeback wait,
 * at 20 ms. A waited for the disk serving it, not for the kworker. A's
 * lock wait ended by the same kworker just after another completion stays
 * a wait for the kworker (only block I/O waits are relayed).
 */
static void test_disk_relay(void **state)
{
	struct rsp_block_req r;
	struct b b;
	struct rsp_waitgraph *g;
	long va, vk, da;
	const struct rsp_wedge *e;

	b_init(&b);
	seg(&b, 90, 90, "a", RSP_SEG_RUN, 0, 10 * MS, 0, 0);
	sleep_why(&b, 90, "a", 10 * MS, 20 * MS, RSP_SR_BLOCK_IO, RSP_WAKER_THREAD, 91);
	seg(&b, 90, 90, "a", RSP_SEG_RUN, 20 * MS, 30 * MS, 0, 0);
	sleep_why(&b, 90, "a", 30 * MS, 40 * MS, RSP_SR_LOCK, RSP_WAKER_THREAD, 91);
	seg(&b, 90, 90, "a", RSP_SEG_RUN, 40 * MS, 100 * MS, 0, 0);
	sleep_why(&b, 91, "kworker/u8:1", 0, 19 * MS, RSP_SR_UNKNOWN, RSP_WAKER_DEVICE, DEV);
	seg(&b, 91, 91, "kworker/u8:1", RSP_SEG_RUN, 19 * MS, 21 * MS, 0, 0);
	sleep_why(&b, 91, "kworker/u8:1", 21 * MS, 39 * MS, RSP_SR_UNKNOWN, RSP_WAKER_DEVICE, DEV);
	seg(&b, 91, 91, "kworker/u8:1", RSP_SEG_RUN, 39 * MS, 41 * MS, 0, 0);
	sleep_why(&b, 91, "kworker/u8:1", 41 * MS, 100 * MS, RSP_SR_UNKNOWN, RSP_WAKER_TIMER, 0);
	memset(&r, 0, sizeof(r));
	r.dev = DEV, r.bytes = 4096;
	r.id = 1, r.tid = 91, r.insert = r.issue = 10 * MS, r.complete = 19 * MS;
	b.ops.block(b.st, &r);
	r.id = 2, r.tid = 91, r.insert = r.issue = 30 * MS, r.complete = 39 * MS;
	b.ops.block(b.st, &r);
	g = graph(&b, 100 * MS, 0.2, true, -1);
	va = rsp_waitgraph__vertex_of(g, 90);
	vk = rsp_waitgraph__vertex_of(g, 91);
	da = disk_for(g, 90);
	assert_true(va >= 0 && vk >= 0 && da >= 0);
	e = rsp_waitgraph__find_edge(g, (uint32_t)va, (uint32_t)da);
	assert_non_null(e);
	assert_int_equal(e->direct_ns, 10 * MS);
	e = rsp_waitgraph__find_edge(g, (uint32_t)va, (uint32_t)vk);
	assert_non_null(e);
	assert_int_equal(e->direct_ns, 10 * MS);
	assert_int_equal(rsp_waitgraph__relayed(g), 1);
	rsp_waitgraph__delete(g);
	rsp_tlstore__delete(b.st);
}

/* ---- one stream, two capture backends ------------------------------------ */

/*
 * The BPF backend's programs see every record. perf, on this kernel, is not
 * given what fires in the idle task's context: the interrupts on an idle
 * CPU (their completions and wakings) and the switches away from idle. The
 * timeline infers the wakers it was not given; the graphs of a stream
 * fed whole and fed without those records must give the same answer.
 */
#define US	   1000ull
#define SYNCER	   10u
#define FRONT	   11u
#define KWORKER	   50u
#define SLEEPER	   20u
#define READER	   30u
#define ITEMS	   20
#define PERIOD	   (1000 * US)
#define SYNTH_DEV  ((254u << 20) | 0)
#define IDLE_STATE 0x80 /* a kworker waiting for work (TASK_IDLE, reported I) */

static const uint64_t io_stack[] = {PERF_CONTEXT_KERNEL, K_SCHEDULE + 0x20, K_IO_SCHEDULE + 0x10,
				    K_FOLIO_WAIT + 0x30, K_EXT4_SYNC + 8};
static const uint64_t futex_stack[] = {PERF_CONTEXT_KERNEL, K_SCHEDULE + 0x20, K_FUTEX_WAIT + 0x10};
static const uint64_t sleep_stack[] = {PERF_CONTEXT_KERNEL, K_SCHEDULE + 0x20, K_NANOSLEEP + 4};
static const uint64_t poll_stack[] = {PERF_CONTEXT_KERNEL, K_SCHEDULE + 0x20, K_POLL + 4};
static const uint64_t tcp_stack[] = {PERF_CONTEXT_KERNEL, K_SCHEDULE + 0x20, K_TCP_RECV + 4};

struct view {
	struct rsp_tlstore *st;
	struct rsp_waitgraph *g;
	struct rsp_timeline_stats ts;
};

static void dump(const char *what, const struct view *v);

/* @s fed whole (@perf false) or as perf gets it, into a store and its graph over [0, @end]. */
static void view_of(struct synth *s, const struct rsp_ksyms *ks, bool perf, uint64_t end,
		    struct view *v)
{
	struct rsp_timeline_ops ops;
	struct rsp_timeline *tl;
	struct rsp_waitgraph_opts o;
	struct rsp_buf err = RSP_BUF_INIT;

	v->st = rsp_tlstore__new(RSP_TLSTORE_WAITS_ONLY |
				 RSP_TLSTORE_NO_LINKS); /* rspctl graph's */
	assert_non_null(v->st);
	rsp_tlstore__ops(&ops);
	tl = rsp_timeline__new(s->schema, &ops, v->st);
	assert_non_null(tl);
	rsp_timeline__set_flags(tl, RSP_TL_RECORDS_STABLE);
	assert_int_equal(rsp_timeline__set_ksyms(tl, ks), 0);
	rsp_timeline__set_start(tl, 0);
	for (size_t i = 0; i < s->n; i++) {
		struct rsp_wentry e = synth__entry(s, i);
		struct rsp_sample smp;

		if (perf && rsp_record__is_sample(e.rec) &&
		    !rsp_record__parse_sample(s->schema, e.rec, &smp) && smp.tid == 0)
			continue; /* fired in the idle task's context */
		assert_int_equal(rsp_timeline__feed(tl, &e), 0);
	}
	rsp_timeline__finish(tl, end);
	rsp_timeline__stats(tl, &v->ts);
	rsp_timeline__delete(tl);
	assert_int_equal(rsp_tlstore__seal(v->st, 0, end), 0);
	rsp_waitgraph_opts__init(&o);
	v->g = rsp_waitgraph__new(v->st, &o, &err);
	if (!v->g)
		fail_msg("graph: %s", err.data);
	rsp_buf__exit(&err);
	dump(perf ? "perf view" : "BPF view", v);
}

static void view_exit(struct view *v)
{
	rsp_waitgraph__delete(v->g);
	rsp_tlstore__delete(v->st);
}

/* A stream to build (s), then seen by each backend (views()). */
struct both {
	struct synth s;
	struct rsp_ksyms *ks;
	struct view bpf, perf;
};

static void both_init(struct both *b)
{
	struct rsp_buf err = RSP_BUF_INIT;

	b->ks = rsp_ksyms__new_from_text(fake_kallsyms, strlen(fake_kallsyms), &err);
	rsp_buf__exit(&err);
	assert_non_null(b->ks);
	synth__init(&b->s);
}

static void views(struct both *b, uint64_t end)
{
	view_of(&b->s, b->ks, false, end, &b->bpf);
	view_of(&b->s, b->ks, true, end, &b->perf);
}

static void both_exit(struct both *b)
{
	view_exit(&b->bpf);
	view_exit(&b->perf);
	synth__exit(&b->s);
	rsp_ksyms__delete(b->ks);
}

static const char *vname(const struct rsp_waitgraph *g, uint32_t v)
{
	return rsp_waitgraph__vertex(g, v)->name;
}

/* The edge of @g between the vertices named as @e's of @eg, or NULL. */
static const struct rsp_wedge *same_edge(const struct rsp_waitgraph *g,
					 const struct rsp_waitgraph *eg, const struct rsp_wedge *e)
{
	for (size_t i = 0; i < rsp_waitgraph__nr_edges(g); i++) {
		const struct rsp_wedge *x = rsp_waitgraph__edge(g, i);

		if (!strcmp(vname(g, x->from), vname(eg, e->from)) &&
		    !strcmp(vname(g, x->to), vname(eg, e->to)))
			return x;
	}
	return NULL;
}

/*
 * Every edge of @a over 10% of @span is in @b, its direct waits within 15%.
 * Lighter edges may differ: perf does not see a thread's switch-in from
 * idle, so what waits for a thread's runs (a timer, an idle disk) waits
 * until its first record there, tens of us per run here.
 */
static void edges_in(const struct rsp_waitgraph *a, const struct rsp_waitgraph *b, uint64_t span,
		     const char *what)
{
	for (size_t i = 0; i < rsp_waitgraph__nr_edges(a); i++) {
		const struct rsp_wedge *e = rsp_waitgraph__edge(a, i), *x;

		if (e->direct_ns < span / 10)
			continue;
		x = same_edge(b, a, e);
		if (!x)
			fail_msg("%s: %s -> %s (%llu ns) is missing", what, vname(a, e->from),
				 vname(a, e->to), (unsigned long long)e->direct_ns);
		if (x->direct_ns * 100 < e->direct_ns * 85 ||
		    x->direct_ns * 100 > e->direct_ns * 115)
			fail_msg("%s: %s -> %s waits %llu ns, against %llu", what,
				 vname(a, e->from), vname(a, e->to),
				 (unsigned long long)x->direct_ns,
				 (unsigned long long)e->direct_ns);
	}
}

/* Knot @k of @a, by the names of its vertices, is one of @b's. */
static bool knot_in(const struct rsp_waitgraph *a, const struct rsp_wknot *k,
		    const struct rsp_waitgraph *b)
{
	for (size_t j = 0; j < rsp_waitgraph__nr_knots(b); j++) {
		const struct rsp_wknot *kb = rsp_waitgraph__knot(b, j);
		size_t found = 0;

		for (size_t x = 0; x < k->nr_vertices; x++)
			for (size_t y = 0; y < kb->nr_vertices; y++)
				found += !strcmp(vname(a, k->vertices[x]),
						 vname(b, kb->vertices[y]));
		if (found == k->nr_vertices && k->nr_vertices == kb->nr_vertices)
			return true;
	}
	return false;
}

/* WG_DUMP=1: what a view's graph holds, to see why two differ. */
static void dump(const char *what, const struct view *v)
{
	if (!getenv("WG_DUMP"))
		return;
	fprintf(stderr, "%s: %zu knots, %zu sinks; not seen %llu, inferred %llu\n", what,
		rsp_waitgraph__nr_knots(v->g), rsp_waitgraph__nr_sinks(v->g),
		(unsigned long long)v->ts.wakings_not_seen,
		(unsigned long long)v->ts.wakers_inferred);
	for (size_t i = 0; i < rsp_waitgraph__nr_knots(v->g); i++)
		for (size_t j = 0; j < rsp_waitgraph__knot(v->g, i)->nr_vertices; j++)
			fprintf(stderr, "  knot %zu: %s\n", i,
				vname(v->g, rsp_waitgraph__knot(v->g, i)->vertices[j]));
	for (size_t i = 0; i < rsp_waitgraph__nr_sinks(v->g); i++)
		fprintf(stderr, "  sink %s\n", vname(v->g, rsp_waitgraph__sink(v->g, i)));
	for (size_t i = 0; i < rsp_waitgraph__nr_edges(v->g); i++) {
		const struct rsp_wedge *e = rsp_waitgraph__edge(v->g, i);

		fprintf(stderr, "  %s -> %s: direct %llu, inferred %llu\n", vname(v->g, e->from),
			vname(v->g, e->to), (unsigned long long)e->direct_ns,
			(unsigned long long)e->inferred_ns);
	}
}

/* The two views give one answer: knots, sinks, and the edges that weigh. */
static void same_answer(const struct view *bpf, const struct view *perf, uint64_t span)
{
	assert_int_equal(rsp_waitgraph__nr_knots(perf->g), rsp_waitgraph__nr_knots(bpf->g));
	for (size_t i = 0; i < rsp_waitgraph__nr_knots(bpf->g); i++)
		if (!knot_in(bpf->g, rsp_waitgraph__knot(bpf->g, i), perf->g))
			fail_msg("knot %zu of the BPF view is not the perf view's", i);
	assert_int_equal(rsp_waitgraph__nr_sinks(perf->g), rsp_waitgraph__nr_sinks(bpf->g));
	for (size_t i = 0; i < rsp_waitgraph__nr_sinks(bpf->g); i++) {
		bool found = false;

		for (size_t j = 0; j < rsp_waitgraph__nr_sinks(perf->g); j++)
			found |= !strcmp(vname(bpf->g, rsp_waitgraph__sink(bpf->g, i)),
					 vname(perf->g, rsp_waitgraph__sink(perf->g, j)));
		if (!found)
			fail_msg("sink %s of the BPF view is not the perf view's",
				 vname(bpf->g, rsp_waitgraph__sink(bpf->g, i)));
	}
	edges_in(bpf->g, perf->g, span, "perf view");
	edges_in(perf->g, bpf->g, span, "BPF view");
}

/* Thread @tid's name, as perf's side-band (a COMM record) gives it. */
static void name(struct synth *s, uint32_t pid, uint32_t tid, const char *comm)
{
	synth__comm(s, .t = 0, .pid = pid, .tid = tid, .comm = comm);
}

/* An interrupt on idle CPU 1 at @t: with @sector, a block completion in its softirq; waking @who.
 */
static void idle_irq(struct synth *s, uint64_t t, uint64_t sector, uint32_t who, unsigned vec)
{
	synth__irq(s, true, 1, t, 36, "virtio1-req.0");
	synth__irq(s, false, 1, t + 5 * US, 36, NULL);
	synth__softirq(s, .entry = true, .cpu = 1, .t = t + 6 * US, .vec = vec);
	if (sector)
		synth__block(s, .ev = RSP_EV_block_rq_complete, .cpu = 1, .t = t + 10 * US,
			     .dev = SYNTH_DEV, .sector = sector, .bytes = 4096, .rwbs = "WS");
	synth__waking(s, .cpu = 1, .t = t + 15 * US, .target = who);
	synth__softirq(s, .entry = false, .cpu = 1, .t = t + 20 * US, .vec = vec);
}

/*
 * wPerf's Figure 1 on an idle machine: the syncer (CPU 0) wakes the front
 * (CPU 1) for the next item, works 400 us, writes and sleeps in
 * io_schedule; the disk's interrupt on idle CPU 1 completes the write and
 * wakes the syncer, or (@relay) ext4's end-of-I/O kworker, which wakes it.
 * Known answer: the knot {syncer, disk for syncer}, the front outside.
 */
static void fsync_stream(struct synth *s, bool relay)
{
	name(s, SYNCER, SYNCER, "syncer");
	name(s, SYNCER, FRONT, "front");
	name(s, KWORKER, KWORKER, "kworker/u8:5");
	synth__switch(s, .cpu = 0, .t = 0, .prev = 0, .next = SYNCER, .next_comm = "syncer");
	synth__switch(s, .cpu = 1, .t = 0, .prev = 0, .next = KWORKER, .next_comm = "kworker/u8:5");
	synth__switch(s, .cpu = 1, .t = 5 * US, .prev = KWORKER, .state = IDLE_STATE, .next = FRONT,
		      .next_comm = "front");
	synth__switch(s, .cpu = 1, .t = 50 * US, .prev_tgid = SYNCER, .prev = FRONT,
		      .prev_comm = "front", .state = 1, .next = 0, .chain = futex_stack, .nr = 3);
	for (int i = 0; i < ITEMS; i++) {
		uint64_t t0 = PERIOD + (uint64_t)i * PERIOD, up = t0 + (relay ? 760 : 730) * US;
		uint64_t sector = 8 * (uint64_t)(i + 1);

		synth__block(s, .ev = RSP_EV_block_rq_insert, .cpu = 0, .t = t0 + 400 * US,
			     .tid = SYNCER, .dev = SYNTH_DEV, .sector = sector, .bytes = 4096,
			     .rwbs = "WS");
		synth__block(s, .ev = RSP_EV_block_rq_issue, .cpu = 0, .t = t0 + 405 * US,
			     .tid = SYNCER, .dev = SYNTH_DEV, .sector = sector, .bytes = 4096,
			     .rwbs = "WS");
		synth__switch(s, .cpu = 0, .t = t0 + 410 * US, .prev = SYNCER,
			      .prev_comm = "syncer", .state = 2, .next = 0, .chain = io_stack,
			      .nr = 5);
		idle_irq(s, t0 + 700 * US, sector, relay ? KWORKER : SYNCER, RSP_SOFTIRQ_BLOCK);
		if (relay) {
			synth__switch(s, .cpu = 1, .t = t0 + 730 * US, .prev = 0, .next = KWORKER);
			synth__waking(s, .cpu = 1, .t = t0 + 740 * US, .tid = KWORKER,
				      .target = SYNCER);
			synth__switch(s, .cpu = 1, .t = t0 + 750 * US, .prev = KWORKER,
				      .state = IDLE_STATE, .next = 0);
		}
		/* back from fdatasync: the next item, which frees a slot for the front */
		synth__switch(s, .cpu = 0, .t = up, .prev = 0, .next = SYNCER);
		synth__waking(s, .cpu = 0, .t = up + 10 * US, .tgid = SYNCER, .tid = SYNCER,
			      .target = FRONT);
		synth__switch(s, .cpu = 1, .t = up + 20 * US, .prev = 0, .next = FRONT);
		synth__switch(s, .cpu = 1, .t = up + 70 * US, .prev_tgid = SYNCER, .prev = FRONT,
			      .state = 1, .next = 0, .chain = futex_stack, .nr = 3);
	}
}

static void check_fsync(bool relay)
{
	uint64_t end = (ITEMS + 1) * PERIOD;
	const struct rsp_wknot *k;
	struct both b;

	both_init(&b);
	fsync_stream(&b.s, relay);
	views(&b, end);
	/* the perf view had wakers to infer, and did (else the test proves nothing) */
	assert_int_equal(b.bpf.ts.wakings_not_seen, 0);
	assert_true(b.perf.ts.wakings_not_seen >= ITEMS);
	assert_true(b.perf.ts.wakers_inferred >= ITEMS);
	assert_int_equal(rsp_waitgraph__nr_knots(b.bpf.g), 1);
	k = rsp_waitgraph__knot(b.bpf.g, 0);
	assert_int_equal(k->nr_vertices, 2);
	assert_true(!strcmp(vname(b.bpf.g, k->vertices[0]), "syncer[10]") ||
		    !strcmp(vname(b.bpf.g, k->vertices[1]), "syncer[10]"));
	same_answer(&b.bpf, &b.perf, end);
	both_exit(&b);
}

/* The disk wakes the syncer in its interrupt. */
static void test_backends_fsync(void **state)
{
	(void)state;
	check_fsync(false);
}

/* The disk wakes ext4's end-of-I/O kworker, which wakes the syncer (issue 42). */
static void test_backends_fsync_relay(void **state)
{
	(void)state;
	check_fsync(true);
}

/*
 * A sleeper (nanosleep, and poll with the timeout it armed) woken by its
 * timer, and a reader woken by the network, each in an interrupt on idle
 * CPU 1. Known answer: each waits for its timer or the NIC, nothing else:
 * the knot {sleeper, its timer}, the NIC a sink.
 */
static void test_backends_timer_net(void **state)
{
	uint64_t end = (ITEMS + 1) * PERIOD;
	struct both b;
	struct synth *s = &b.s;

	(void)state;
	both_init(&b);
	name(s, SLEEPER, SLEEPER, "sleeper");
	name(s, READER, READER, "reader");
	synth__switch(s, .cpu = 0, .t = 0, .prev = 0, .next = SLEEPER, .next_comm = "sleeper");
	synth__switch(s, .cpu = 0, .t = 100 * US, .prev = SLEEPER, .state = 1, .next = READER,
		      .next_comm = "reader", .chain = sleep_stack, .nr = 3);
	synth__switch(s, .cpu = 0, .t = 200 * US, .prev = READER, .state = 1, .next = 0,
		      .chain = tcp_stack, .nr = 3);
	for (int i = 0; i < ITEMS; i++) {
		uint64_t t0 = PERIOD + (uint64_t)i * PERIOD;
		bool poll = i % 2;

		/* the timer ends the sleeper's sleep; the network the reader's */
		synth__hrtimer(s, true, 1, t0);
		synth__waking(s, .cpu = 1, .t = t0 + 5 * US, .target = SLEEPER);
		synth__hrtimer(s, false, 1, t0 + 10 * US);
		synth__switch(s, .cpu = 0, .t = t0 + 20 * US, .prev = 0, .next = SLEEPER);
		if (poll)
			synth__hrtimer_start(s, .cpu = 0, .t = t0 + 25 * US, .tid = SLEEPER,
					     .fn = K_HRTIMER_WAKEUP, .expires = t0 + PERIOD);
		synth__switch(s, .cpu = 0, .t = t0 + 30 * US, .prev = SLEEPER, .state = 1,
			      .next = 0, .chain = poll ? poll_stack : sleep_stack, .nr = 3);
		idle_irq(s, t0 + 400 * US, 0, READER, RSP_SOFTIRQ_NET_RX);
		synth__switch(s, .cpu = 0, .t = t0 + 430 * US, .prev = 0, .next = READER);
		synth__switch(s, .cpu = 0, .t = t0 + 500 * US, .prev = READER, .state = 1,
			      .next = 0, .chain = tcp_stack, .nr = 3);
	}
	views(&b, end);
	assert_true(b.perf.ts.wakers_inferred >= 2 * ITEMS);
	/* the timer waits for the sleeper while it runs (wPerf's knot of a sleeper) */
	assert_int_equal(rsp_waitgraph__nr_knots(b.bpf.g), 1);
	assert_int_equal(rsp_waitgraph__nr_sinks(b.bpf.g), 1);
	same_answer(&b.bpf, &b.perf, end);
	both_exit(&b);
}

/* --pid keeps what the process's threads reach; an absent pid is an error. */
static bool keep_20(uint32_t tgid, void *ctx)
{
	(void)ctx;
	return tgid == 20;
}

static bool keep_none(uint32_t tgid, void *ctx)
{
	(void)ctx;
	(void)tgid;
	return false;
}

static void test_pid(void **state)
{
	static const uint64_t x[][4] = {{50, 98, RSP_WAKER_THREAD, 21}};
	static const uint64_t y[][4] = {{0, 48, RSP_WAKER_THREAD, 20}};
	static const uint64_t w[][4] = {{0, 90, RSP_WAKER_THREAD, 20}};
	struct rsp_waitgraph_opts o;
	struct rsp_buf err = RSP_BUF_INIT;
	struct b b;
	struct rsp_waitgraph *g;

	b_init(&b);
	life(&b, 20, 20, "x", 100, x, 1);
	life(&b, 21, 21, "y", 100, y, 1);
	life(&b, 22, 22, "w", 100, w, 1);
	g = graph(&b, 100, 0.2, true, 20);
	assert_non_null(g);
	assert_false(rsp_waitgraph__vertex(g, (size_t)rsp_waitgraph__vertex_of(g, 21))->removed);
	assert_true(rsp_waitgraph__vertex(g, (size_t)rsp_waitgraph__vertex_of(g, 22))->removed);
	assert_int_equal(rsp_waitgraph__nr_knots(g), 1);
	rsp_waitgraph__delete(g);
	rsp_waitgraph_opts__init(&o);
	o.pid = 4242;
	assert_null(rsp_waitgraph__new(b.st, &o, &err));
	assert_non_null(strstr(err.data, "4242"));
	rsp_buf__reset(&err);
	/* keep_tgid (rspctl graph --cgroup): the same reach from the processes it accepts */
	rsp_waitgraph_opts__init(&o);
	o.keep_tgid = keep_20;
	g = rsp_waitgraph__new(b.st, &o, &err);
	assert_non_null(g);
	assert_false(rsp_waitgraph__vertex(g, (size_t)rsp_waitgraph__vertex_of(g, 20))->removed);
	assert_false(rsp_waitgraph__vertex(g, (size_t)rsp_waitgraph__vertex_of(g, 21))->removed);
	assert_true(rsp_waitgraph__vertex(g, (size_t)rsp_waitgraph__vertex_of(g, 22))->removed);
	rsp_waitgraph__delete(g);
	o.keep_tgid = keep_none;
	assert_null(rsp_waitgraph__new(b.st, &o, &err));
	assert_non_null(strstr(err.data, "no process of the cgroup"));
	rsp_buf__exit(&err);
	rsp_tlstore__delete(b.st);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_cascade),
		cmocka_unit_test(test_cascade_cycle),
		cmocka_unit_test(test_knot_and_sink),
		cmocka_unit_test(test_refinement),
		cmocka_unit_test(test_background),
		cmocka_unit_test(test_background_waiter),
		cmocka_unit_test(test_stack_hashes),
		cmocka_unit_test(test_merge),
		cmocka_unit_test(test_merge_stacks),
		cmocka_unit_test(test_short_lived),
		cmocka_unit_test(test_device),
		cmocka_unit_test(test_device_shared),
		cmocka_unit_test(test_leaving_trimmed),
		cmocka_unit_test(test_disk_relay),
		cmocka_unit_test(test_pid),
		cmocka_unit_test(test_backends_fsync),
		cmocka_unit_test(test_backends_fsync_relay),
		cmocka_unit_test(test_backends_timer_net),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
