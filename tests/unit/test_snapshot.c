// SPDX-License-Identifier: GPL-2.0
/*
 * Unit tests of lib/analysis/snapshot.c (and lib/timeline/samples.c) on hand-built timeline
 * stores: the pseudostack of pass-like ping-pong, fit and misfit (another
 * control path), triangles cut at the sleep's start, poll loops merged into
 * one de-facto sleep, forked children, preemptions by a callee, sibling threads, block I/O split
 * into queue and device time, runs started on idle CPUs (inferred), samples attached to runs (20 us
 * slack, bursts across preemptions), every category, and the tree's sums.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include <rsp/samples.h>
#include <rsp/snapshot.h>
#include <rsp/tlstore.h>

#define US  1000ull
#define DEV ((8u << 20) | 16)

struct b {
	struct rsp_tlstore *st;
	struct rsp_samples *sm;
	struct rsp_timeline_ops ops;
	struct rsp_snapshot *snap;
};

static const uint64_t stack_a[] = {PERF_CONTEXT_KERNEL, 0xffffffff81001800ull, PERF_CONTEXT_USER,
				   0x401000ull};
static const uint64_t stack_b[] = {PERF_CONTEXT_KERNEL, 0xffffffff81002800ull, PERF_CONTEXT_USER,
				   0x402000ull};

static void b_init(struct b *b)
{
	memset(b, 0, sizeof(*b));
	b->st = rsp_tlstore__new(0);
	b->sm = rsp_samples__new();
	assert_non_null(b->st);
	assert_non_null(b->sm);
	rsp_tlstore__ops(&b->ops);
}

static void b_exit(struct b *b)
{
	rsp_snapshot__delete(b->snap);
	rsp_tlstore__delete(b->st);
	rsp_samples__delete(b->sm);
}

struct sg {
	uint32_t tid, tgid;
	uint8_t kind, reason, wk;
	uint32_t wid;
	uint64_t start, end, wtime;
	uint16_t flags;
	uint32_t cpu;
	const uint64_t *stack;
};

static void seg(struct b *b, struct sg g)
{
	struct rsp_segment s;

	memset(&s, 0, sizeof(s));
	s.tid = g.tid;
	s.tgid = g.tgid;
	s.kind = g.kind;
	s.reason = g.reason;
	s.start = g.start * US;
	s.end = g.end * US;
	s.flags = g.flags;
	s.cpu = g.cpu;
	s.waker.kind = g.wk;
	s.waker.id = g.wid;
	s.waker.time = g.wk ? (g.wtime ? g.wtime : g.end) * US : 0;
	if (g.kind == RSP_SEG_SLEEP) {
		s.stack = g.stack ? g.stack : stack_a;
		s.nr_stack = 4;
	}
	b->ops.segment(b->st, &s, "t");
}

#define RUN(t, p, a, z)                                                                            \
	seg(b, (struct sg){.tid = t, .tgid = p, .kind = RSP_SEG_RUN, .start = a, .end = z})
#define RUNQ(t, p, a, z, wk_, wid_)                                                                \
	seg(b, (struct sg){.tid = t,                                                               \
			   .tgid = p,                                                              \
			   .kind = RSP_SEG_RUNNABLE,                                               \
			   .start = a,                                                             \
			   .end = z,                                                               \
			   .wk = wk_,                                                              \
			   .wid = wid_})
/* RUNQ with the waking's own time @w (RUNQ's is its end) */
#define RUNQ_AT(t, p, a, z, wk_, wid_, w)                                                          \
	seg(b, (struct sg){.tid = t,                                                               \
			   .tgid = p,                                                              \
			   .kind = RSP_SEG_RUNNABLE,                                               \
			   .start = a,                                                             \
			   .end = z,                                                               \
			   .wk = wk_,                                                              \
			   .wid = wid_,                                                            \
			   .wtime = w})
#define SLEEP(t, p, a, z, r, wk_, wid_)                                                            \
	seg(b, (struct sg){.tid = t,                                                               \
			   .tgid = p,                                                              \
			   .kind = RSP_SEG_SLEEP,                                                  \
			   .reason = r,                                                            \
			   .start = a,                                                             \
			   .end = z,                                                               \
			   .wk = wk_,                                                              \
			   .wid = wid_})

static void sample(struct b *b, uint32_t tid, uint32_t pid, uint32_t cpu, uint64_t t_ns,
		   const uint64_t *chain)
{
	struct rsp_csample c = {.time = t_ns,
				.ip = 0x401234,
				.tid = tid,
				.pid = pid,
				.cpu = cpu,
				.nr_chain = chain ? 4 : 0,
				.chain = chain};

	assert_int_equal(rsp_samples__add(b->sm, &c), 0);
}

/* Seal and snapshot with @o (its pid, tid, spans) over [0, end] us; checks the tree's sums. */
static const struct rsp_snapshot_totals *snap_o(struct b *b, const struct rsp_snapshot_opts *o,
						uint64_t end)
{
	struct rsp_buf err = RSP_BUF_INIT;
	const struct rsp_snapshot_totals *t;
	uint64_t roots = 0, cats = 0;

	assert_int_equal(rsp_tlstore__seal(b->st, 0, end * US), 0);
	assert_int_equal(rsp_samples__seal(b->sm), 0);
	b->snap = rsp_snapshot__new(b->st, b->sm, o, &err);
	if (!b->snap)
		fail_msg("snapshot: %s", err.data);
	rsp_buf__exit(&err);
	t = rsp_snapshot__totals(b->snap);
	for (uint32_t i = 0; i < rsp_snapshot__nr_nodes(b->snap); i++) {
		const struct rsp_snode *n = rsp_snapshot__node(b->snap, i);
		uint64_t sum = 0;

		for (int c = 0; c < RSP_CAT__NR; c++)
			sum += n->self_ns[c];
		for (uint32_t c = n->first_child; c != RSP_SNODE_NONE;
		     c = rsp_snapshot__node(b->snap, c)->next_sibling) {
			const struct rsp_snode *k = rsp_snapshot__node(b->snap, c);

			assert_int_equal(k->parent, i);
			if (k->next_sibling != RSP_SNODE_NONE)
				assert_true(k->total_ns >=
					    rsp_snapshot__node(b->snap, k->next_sibling)->total_ns);
			sum += k->total_ns;
		}
		assert_int_equal(sum, n->total_ns);
	}
	for (size_t i = 0; i < rsp_snapshot__nr_roots(b->snap); i++)
		roots += rsp_snapshot__node(b->snap, rsp_snapshot__root(b->snap, i))->total_ns;
	for (int c = 0; c < RSP_CAT__NR; c++)
		cats += t->cat_ns[c];
	assert_int_equal(roots, t->total_ns);
	assert_int_equal(cats, t->total_ns);
	assert_int_equal(t->accounted_ns + t->cat_ns[RSP_CAT_UNKNOWN], t->total_ns);
	return t;
}

static const struct rsp_snapshot_totals *snap(struct b *b, long pid, uint64_t end)
{
	struct rsp_snapshot_opts o;

	rsp_snapshot_opts__init(&o);
	o.pid = pid;
	return snap_o(b, &o, end);
}

/* The child of @parent of @kind (and thread @tid for THREAD), or NULL. */
static const struct rsp_snode *child(const struct b *b, const struct rsp_snode *parent, int kind,
				     uint32_t tid)
{
	for (uint32_t c = parent->first_child; c != RSP_SNODE_NONE;
	     c = rsp_snapshot__node(b->snap, c)->next_sibling) {
		const struct rsp_snode *n = rsp_snapshot__node(b->snap, c);

		if (n->kind == kind && (kind != RSP_SN_THREAD || n->tid == tid))
			return n;
	}
	return NULL;
}

static const struct rsp_snode *root(const struct b *b, size_t i)
{
	return rsp_snapshot__node(b->snap, rsp_snapshot__root(b->snap, i));
}

/*
 * pass: A and B hand work over pipes. A runs 10, sleeps 10 while B runs,
 * and so on. A's time: its runs, and under each sleep B's runs.
 */
static void test_pass(void **state)
{
	struct b bb, *b = &bb;
	const struct rsp_snapshot_totals *t;
	const struct rsp_snode *a, *sl, *bn;

	b_init(b);
	for (uint64_t k = 0; k < 4; k++) {
		uint64_t o = k * 200;

		/* A runs, wakes B at its end, sleeps until B wakes it */
		RUN(1, 1, o, o + 100);
		SLEEP(1, 1, o + 100, o + 199, RSP_SR_PIPE, RSP_WAKER_THREAD, 2);
		RUNQ(1, 1, o + 199, o + 200, RSP_WAKER_THREAD, 2);
		SLEEP(2, 2, k ? o - 1 : 0, o + 100, RSP_SR_PIPE, RSP_WAKER_THREAD, 1);
		RUNQ(2, 2, o + 100, o + 101, RSP_WAKER_THREAD, 1);
		RUN(2, 2, o + 101, o + 199);
	}
	SLEEP(2, 2, 799, 800, RSP_SR_PIPE, RSP_WAKER_NONE, 0);
	sample(b, 1, 1, 0, 50 * US, stack_a);
	sample(b, 2, 2, 1, 150 * US, stack_b);
	t = snap(b, 1, 800);
	assert_int_equal(t->wall_ns, 800 * US);
	assert_int_equal(t->total_ns, 800 * US);
	assert_int_equal(t->cat_ns[RSP_CAT_UNKNOWN], 0);
	assert_int_equal(t->nr_threads, 1);
	assert_int_equal(t->nr_involved, 2);
	assert_int_equal(t->sleeps_followed, 4);
	/* A's first run is sampled, the others are not; B's first run likewise */
	assert_int_equal(t->cat_ns[RSP_CAT_UNDERSTOOD], (100 + 98) * US);
	assert_int_equal(t->cat_ns[RSP_CAT_NOT_SAMPLED], (3 * 100 + 3 * 98) * US);
	assert_int_equal(t->cat_ns[RSP_CAT_SCHEDULER], 8 * US);
	a = root(b, 0);
	assert_int_equal(a->tid, 1);
	sl = child(b, a, RSP_SN_SLEEP, 0);
	assert_non_null(sl);
	assert_int_equal(sl->count, 4);
	assert_int_equal(sl->reason, RSP_SR_PIPE);
	assert_int_equal(sl->total_ns, 4 * 99 * US);
	bn = child(b, sl, RSP_SN_THREAD, 2);
	assert_non_null(bn);
	assert_int_equal(bn->total_ns, 4 * 99 * US);
	assert_int_equal(child(b, bn, RSP_SN_RUN, 0)->total_ns, 4 * 98 * US);
	assert_int_equal(child(b, bn, RSP_SN_RUNNABLE, 0)->total_ns, 4 * US);
	assert_int_equal(rsp_snapshot__links(b->snap, &(size_t){0})[0].from, 2);
	b_exit(b);
}

/*
 * A producer W runs all along and wakes T now and then: it does not return
 * to T, so it is another control path; its time over T's sleeps counts.
 */
static void test_other_path(void **state)
{
	struct b bb, *b = &bb;
	const struct rsp_snapshot_totals *t;
	const struct rsp_snode *sl, *w;

	b_init(b);
	RUN(1, 1, 0, 100);
	SLEEP(1, 1, 100, 300, RSP_SR_LOCK, RSP_WAKER_THREAD, 7);
	RUNQ(1, 1, 300, 310, RSP_WAKER_THREAD, 7);
	RUN(1, 1, 310, 400);
	RUN(7, 7, 0, 1000);
	t = snap(b, 1, 1000);
	assert_int_equal(t->wall_ns, 400 * US);
	assert_int_equal(t->total_ns, 600 * US);
	assert_int_equal(t->cat_ns[RSP_CAT_OTHER_PATH], 200 * US);
	assert_int_equal(t->nr_paths, 2);
	assert_int_equal(rsp_snapshot__nr_roots(b->snap), 2);
	sl = child(b, root(b, 0), RSP_SN_SLEEP, 0);
	assert_int_not_equal(sl->other, RSP_SNODE_NONE);
	w = rsp_snapshot__node(b->snap, sl->other);
	assert_int_equal(w->tid, 7);
	assert_int_equal(w->path, 1);
	assert_int_equal(w->total_ns, 200 * US);
	assert_ptr_equal(w, root(b, 1));
	b_exit(b);
}

/*
 * A hand-off's tail: B, woken by A's write at 100, works 2000 us for A,
 * wakes it at 2100 and enters its next wait 300 us after A runs again (a
 * stack walk at the waking, a VM's noise): B fits, under A's sleep. The
 * same tail after 200 us of work (more than fit_ns and than a quarter of
 * the work) is another path.
 */
static void test_handoff_tail(void **state)
{
	struct b bb, *b = &bb;
	const struct rsp_snapshot_totals *t;
	const struct rsp_snode *sl;

	b_init(b);
	RUN(1, 1, 0, 100);
	SLEEP(1, 1, 100, 2110, RSP_SR_PIPE, RSP_WAKER_THREAD, 2);
	RUNQ_AT(1, 1, 2110, 2120, RSP_WAKER_THREAD, 2, 2100);
	RUN(1, 1, 2120, 2500);
	SLEEP(2, 2, 0, 100, RSP_SR_PIPE, RSP_WAKER_THREAD, 1);
	RUN(2, 2, 100, 2420);
	SLEEP(2, 2, 2420, 2500, RSP_SR_PIPE, RSP_WAKER_NONE, 0);
	t = snap(b, 1, 2500);
	assert_int_equal(t->cat_ns[RSP_CAT_OTHER_PATH], 0);
	sl = child(b, root(b, 0), RSP_SN_SLEEP, 0);
	assert_non_null(child(b, sl, RSP_SN_THREAD, 2));
	b_exit(b);

	b_init(b);
	RUN(1, 1, 0, 100);
	SLEEP(1, 1, 100, 310, RSP_SR_PIPE, RSP_WAKER_THREAD, 2);
	RUNQ_AT(1, 1, 310, 320, RSP_WAKER_THREAD, 2, 300);
	RUN(1, 1, 320, 700);
	SLEEP(2, 2, 0, 100, RSP_SR_PIPE, RSP_WAKER_THREAD, 1);
	RUN(2, 2, 100, 620);
	SLEEP(2, 2, 620, 700, RSP_SR_PIPE, RSP_WAKER_NONE, 0);
	t = snap(b, 1, 700);
	assert_int_equal(t->cat_ns[RSP_CAT_OTHER_PATH], 210 * US);
	b_exit(b);
}

/*
 * The triangle A -> B -> C -> A: C, which began to sleep long before A
 * called B, ended A's sleep. Only C's part after A began to wait counts.
 */
static void test_triangle(void **state)
{
	struct b bb, *b = &bb;
	const struct rsp_snapshot_totals *t;
	const struct rsp_snode *sa, *c, *sc, *bn;

	b_init(b);
	RUN(1, 1, 0, 100);
	SLEEP(1, 1, 100, 300, RSP_SR_NETWORK, RSP_WAKER_THREAD, 3);
	RUN(1, 1, 300, 350);
	/* B: woken by A at 100, runs, wakes C at 250 */
	SLEEP(2, 2, 0, 100, RSP_SR_NETWORK, RSP_WAKER_THREAD, 1);
	RUN(2, 2, 100, 250);
	SLEEP(2, 2, 250, 350, RSP_SR_NETWORK, RSP_WAKER_NONE, 0);
	/* C: asleep since 0, woken by B at 250, wakes A at 300 */
	SLEEP(3, 3, 0, 250, RSP_SR_NETWORK, RSP_WAKER_THREAD, 2);
	RUN(3, 3, 250, 300);
	SLEEP(3, 3, 300, 350, RSP_SR_NETWORK, RSP_WAKER_NONE, 0);
	t = snap(b, 1, 350);
	assert_int_equal(t->total_ns, 350 * US);
	assert_int_equal(t->cat_ns[RSP_CAT_UNKNOWN], 0);
	sa = child(b, root(b, 0), RSP_SN_SLEEP, 0);
	c = child(b, sa, RSP_SN_THREAD, 3);
	assert_non_null(c);
	sc = child(b, c, RSP_SN_SLEEP, 0);
	/* C's sleep cut at A's sleep start: 150 of its 250 */
	assert_int_equal(sc->total_ns, 150 * US);
	bn = child(b, sc, RSP_SN_THREAD, 2);
	assert_non_null(bn);
	assert_int_equal(child(b, bn, RSP_SN_RUN, 0)->total_ns, 150 * US);
	assert_int_equal(t->sleeps_followed, 2);
	b_exit(b);
}

/*
 * A poll loop: timed-out sleeps with the same stack, a few us of running
 * between, then one ended by W. W started 300 us before that last sleep:
 * it does not fit the sleep alone but fits the de-facto sleep.
 */
static void test_poll_loop_merged(void **state)
{
	struct b bb, *b = &bb;
	const struct rsp_snapshot_totals *t;
	const struct rsp_snode *r;

	b_init(b);
	RUN(1, 1, 0, 100);
	SLEEP(1, 1, 100, 200, RSP_SR_POLL, RSP_WAKER_TIMER, 0);
	RUN(1, 1, 200, 205);
	SLEEP(1, 1, 205, 305, RSP_SR_POLL, RSP_WAKER_TIMER, 0);
	RUN(1, 1, 305, 310);
	SLEEP(1, 1, 310, 400, RSP_SR_POLL, RSP_WAKER_THREAD, 5);
	RUN(1, 1, 400, 450);
	SLEEP(5, 5, 0, 110, RSP_SR_LOCK, RSP_WAKER_THREAD, 9);
	RUN(5, 5, 110, 400);
	SLEEP(5, 5, 400, 450, RSP_SR_LOCK, RSP_WAKER_NONE, 0);
	t = snap(b, 1, 450);
	assert_int_equal(t->cat_ns[RSP_CAT_TIMED_OUT], 200 * US);
	assert_int_equal(t->cat_ns[RSP_CAT_OTHER_PATH], 0);
	r = root(b, 0);
	/* the last poll: its own node (another waker), W under it */
	for (uint32_t c = r->first_child; c != RSP_SNODE_NONE;
	     c = rsp_snapshot__node(b->snap, c)->next_sibling) {
		const struct rsp_snode *n = rsp_snapshot__node(b->snap, c);

		if (n->kind == RSP_SN_SLEEP && n->waker_kind == RSP_WAKER_THREAD)
			assert_non_null(child(b, n, RSP_SN_THREAD, 5));
	}
	b_exit(b);

	/* the same with 200 us of running between the polls: not merged, W misfits */
	b_init(b);
	RUN(1, 1, 0, 100);
	SLEEP(1, 1, 100, 200, RSP_SR_POLL, RSP_WAKER_TIMER, 0);
	RUN(1, 1, 200, 310);
	SLEEP(1, 1, 310, 400, RSP_SR_POLL, RSP_WAKER_THREAD, 5);
	RUN(1, 1, 400, 450);
	SLEEP(5, 5, 0, 110, RSP_SR_LOCK, RSP_WAKER_THREAD, 9);
	RUN(5, 5, 110, 400);
	SLEEP(5, 5, 400, 450, RSP_SR_LOCK, RSP_WAKER_NONE, 0);
	t = snap(b, 1, 450);
	assert_int_equal(t->cat_ns[RSP_CAT_OTHER_PATH], 90 * US);
	b_exit(b);
}

/* make: the parent forks a child that runs before the wait starts; its exit ends the wait. */
static void test_forked_child(void **state)
{
	struct b bb, *b = &bb;
	const struct rsp_snapshot_totals *t;
	const struct rsp_snode *sl;

	b_init(b);
	RUN(1, 1, 0, 1000);
	SLEEP(1, 1, 1000, 5000, RSP_SR_UNKNOWN, RSP_WAKER_THREAD, 2);
	RUN(1, 1, 5000, 5100);
	/* forked at 100 by the parent (its first RUNNABLE's waker), runs from 120 */
	RUNQ(2, 2, 100, 120, RSP_WAKER_THREAD, 1);
	seg(b, (struct sg){.tid = 2, .tgid = 2, .kind = RSP_SEG_RUN, .start = 120, .end = 5000});
	t = snap(b, 1, 5100);
	assert_int_equal(t->cat_ns[RSP_CAT_OTHER_PATH], 0);
	sl = child(b, root(b, 0), RSP_SN_SLEEP, 0);
	assert_non_null(child(b, sl, RSP_SN_THREAD, 2));
	assert_int_equal(child(b, sl, RSP_SN_THREAD, 2)->total_ns, 4000 * US);
	b_exit(b);
}

#define PREEMPTED(t, p, a, z)                                                                      \
	seg(b, (struct sg){.tid = t,                                                               \
			   .tgid = p,                                                              \
			   .kind = RSP_SEG_RUNNABLE,                                               \
			   .reason = RSP_SR_PREEMPT,                                               \
			   .start = a,                                                             \
			   .end = z})

static void fork_link(struct b *b, uint32_t parent, uint32_t child, uint64_t t)
{
	struct rsp_link l = {.kind = RSP_LINK_FORK, .tid = child, .tgid = child, .time = t * US};

	l.from.kind = RSP_WAKER_THREAD;
	l.from.id = parent;
	b->ops.link(b->st, &l);
}

/*
 * make -j2: the parent forks C1 and C2 at 100 and waits; C2 exits at 600
 * and wakes it, C1 exits at 1100 and wakes it. C1's running beside C2,
 * before the parent's second wait began (100-610), is work the parent
 * started: it counts, under C1's own path. G, forked by C1, runs after C1's
 * exit without waking anyone: counted too, from its fork. X, forked by a
 * thread the parent did not start, is not.
 */
static void test_started_in_parallel(void **state)
{
	struct b bb, *b = &bb;
	const struct rsp_snapshot_totals *t;
	uint64_t c1 = 0, g = 0;

	b_init(b);
	fork_link(b, 1, 10, 100);
	fork_link(b, 1, 20, 100);
	fork_link(b, 10, 30, 900);
	fork_link(b, 99, 40, 100);
	RUN(1, 1, 0, 100);
	SLEEP(1, 1, 100, 600, RSP_SR_UNKNOWN, RSP_WAKER_THREAD, 20);
	RUN(1, 1, 600, 610);
	SLEEP(1, 1, 610, 1100, RSP_SR_UNKNOWN, RSP_WAKER_THREAD, 10);
	RUN(1, 1, 1100, 1200);
	seg(b, (struct sg){.tid = 20, .tgid = 20, .kind = RSP_SEG_RUN, .start = 100, .end = 600});
	seg(b, (struct sg){.tid = 10, .tgid = 10, .kind = RSP_SEG_RUN, .start = 100, .end = 1100});
	seg(b, (struct sg){.tid = 30, .tgid = 30, .kind = RSP_SEG_RUN, .start = 900, .end = 1150});
	seg(b, (struct sg){.tid = 40, .tgid = 40, .kind = RSP_SEG_RUN, .start = 100, .end = 1200});
	t = snap(b, 1, 1200);
	for (size_t i = 0; i < rsp_snapshot__nr_roots(b->snap); i++) {
		const struct rsp_snode *r = root(b, i);

		assert_int_not_equal(r->tid, 40);
		if (r->tid == 10)
			c1 += r->total_ns;
		if (r->tid == 30)
			g += r->total_ns;
	}
	assert_int_equal(c1, 510 * US);
	assert_int_equal(g, 250 * US);
	assert_int_equal(t->total_ns, (1200 + 510 + 250) * US);
	b_exit(b);
}

/*
 * pass on one CPU: the child (2) the parent (1) wakes at 100 preempts it
 * and does its turn; at 350 an unrelated thread (9) preempts the parent.
 * The child's running over the first preemption is under the parent's
 * RUNNABLE node; the second preemption stays involuntary.
 */
static void test_preempted_by_callee(void **state)
{
	struct b bb, *b = &bb;
	const struct rsp_snapshot_totals *t;
	const struct rsp_snode *pr, *c;
	const struct rsp_slink *l;
	struct rsp_link wake = {.kind = RSP_LINK_WAKEUP, .tid = 2, .tgid = 2, .time = 100 * US};
	size_t nl;

	b_init(b);
	RUN(1, 1, 0, 100);
	PREEMPTED(1, 1, 100, 190);
	RUN(1, 1, 190, 195);
	SLEEP(1, 1, 195, 300, RSP_SR_PIPE, RSP_WAKER_THREAD, 2);
	RUNQ(1, 1, 300, 301, RSP_WAKER_THREAD, 2);
	RUN(1, 1, 301, 350);
	PREEMPTED(1, 1, 350, 370);
	RUN(1, 1, 370, 400);
	SLEEP(2, 2, 0, 100, RSP_SR_PIPE, RSP_WAKER_THREAD, 1);
	RUNQ(2, 2, 100, 101, RSP_WAKER_THREAD, 1);
	wake.from.kind = RSP_WAKER_THREAD;
	wake.from.id = 1;
	b->ops.link(b->st, &wake);
	RUN(2, 2, 101, 190);
	PREEMPTED(2, 2, 190, 195);
	RUN(2, 2, 195, 300);
	SLEEP(2, 2, 300, 400, RSP_SR_PIPE, RSP_WAKER_NONE, 0);
	RUN(9, 9, 350, 370);
	t = snap(b, 1, 400);
	assert_int_equal(t->total_ns, 400 * US);
	assert_int_equal(t->cat_ns[RSP_CAT_NOT_SAMPLED], (184 + 89 + 105) * US);
	assert_int_equal(t->cat_ns[RSP_CAT_INVOLUNTARY], 21 * US);
	assert_int_equal(t->cat_ns[RSP_CAT_SCHEDULER], 1 * US);
	pr = child(b, root(b, 0), RSP_SN_RUNNABLE, 0);
	assert_non_null(pr);
	assert_int_equal(pr->reason, RSP_SR_PREEMPT);
	assert_int_equal(pr->count, 2);
	assert_int_equal(pr->total_ns, 110 * US);
	c = child(b, pr, RSP_SN_THREAD, 2);
	assert_non_null(c);
	assert_int_equal(c->total_ns, 89 * US);
	assert_null(child(b, pr, RSP_SN_THREAD, 9));
	l = rsp_snapshot__links(b->snap, &nl);
	assert_true(nl >= 1);
	assert_int_equal(l[0].from, 1);
	assert_int_equal(l[0].to, 2);
	assert_int_equal(l[0].to_time, 101 * US);
	b_exit(b);
}

/*
 * A pid reused within the window: process 5 ran and exited at 100, then
 * thread 1 forked a new process 5 at 500. The snapshot of 5 is the latest
 * one: from its fork, its first run a call of its parent's.
 */
static void test_pid_reused(void **state)
{
	struct b bb, *b = &bb;
	const struct rsp_snapshot_totals *t;
	struct rsp_link fork = {.kind = RSP_LINK_FORK, .tid = 5, .tgid = 5, .time = 500 * US};

	b_init(b);
	seg(b, (struct sg){.tid = 5,
			   .tgid = 5,
			   .kind = RSP_SEG_RUN,
			   .start = 0,
			   .end = 100,
			   .flags = RSP_SEGF_EXITED});
	fork.from.kind = RSP_WAKER_THREAD;
	fork.from.id = 1;
	b->ops.link(b->st, &fork);
	RUNQ(5, 5, 500, 510, RSP_WAKER_THREAD, 1);
	RUN(5, 5, 510, 600);
	SLEEP(5, 5, 600, 700, RSP_SR_SLEEP, RSP_WAKER_TIMER, 0);
	t = snap(b, 5, 700);
	assert_int_equal(t->start, 500 * US);
	assert_int_equal(t->wall_ns, 200 * US);
	assert_int_equal(t->total_ns, 200 * US);
	assert_int_equal(t->cat_ns[RSP_CAT_UNKNOWN], 0);
	assert_int_equal(t->cat_ns[RSP_CAT_NOT_SAMPLED], 90 * US);
	assert_int_equal(t->cat_ns[RSP_CAT_DELIBERATE], 100 * US);
	b_exit(b);
}

/* Two threads of the process: one waits for the other, whose time is its own root. */
static void test_sibling_threads(void **state)
{
	struct b bb, *b = &bb;
	const struct rsp_snapshot_totals *t;

	b_init(b);
	RUN(1, 1, 0, 100);
	SLEEP(1, 1, 100, 400, RSP_SR_LOCK, RSP_WAKER_THREAD, 11);
	RUN(1, 1, 400, 500);
	RUN(11, 1, 0, 400);
	SLEEP(11, 1, 400, 500, RSP_SR_LOCK, RSP_WAKER_NONE, 0);
	t = snap(b, 1, 500);
	assert_int_equal(t->nr_threads, 2);
	assert_int_equal(t->total_ns, 1000 * US);
	assert_int_equal(t->cat_ns[RSP_CAT_OTHER_PATH], 300 * US);
	assert_int_equal(t->cat_ns[RSP_CAT_NOT_SAMPLED], 600 * US);
	assert_int_equal(t->cat_ns[RSP_CAT_UNKNOWN], 100 * US);
	b_exit(b);
}

/*
 * A connection thread (1) hands a request to a worker of its process (11)
 * and sleeps on the pipe until the worker answers (rspctl merge's answering
 * thread). Snapshot of thread 1 alone over the spans of its answers: the
 * worker is a waker like any other, followed (not another path), and only
 * the spans count; the whole process instead has the worker as a root of
 * its own (test_sibling_threads' case).
 */
static void handoff(struct b *b)
{
	RUN(1, 1, 0, 100);
	SLEEP(1, 1, 100, 400, RSP_SR_PIPE, RSP_WAKER_THREAD, 11);
	RUN(1, 1, 400, 500);
	SLEEP(11, 1, 0, 100, RSP_SR_PIPE, RSP_WAKER_THREAD, 1);
	RUN(11, 1, 100, 150);
	SLEEP(11, 1, 150, 390, RSP_SR_BLOCK_IO, RSP_WAKER_DEVICE, DEV);
	RUN(11, 1, 390, 400);
	SLEEP(11, 1, 400, 500, RSP_SR_PIPE, RSP_WAKER_NONE, 0);
}

static void test_one_thread_spans(void **state)
{
	static const struct rsp_snapshot_span spans[] = {{50 * US, 60 * US}, {100 * US, 400 * US}};
	struct b bb, *b = &bb;
	const struct rsp_snapshot_totals *t;
	const struct rsp_snode *sl, *w;
	struct rsp_snapshot_opts o;

	b_init(b);
	handoff(b);
	rsp_snapshot_opts__init(&o);
	o.pid = 1;
	o.tid = 1;
	o.from = 0;
	o.to = 500 * US;
	o.spans = spans;
	o.nr_spans = 2;
	t = snap_o(b, &o, 500);
	assert_int_equal(t->nr_threads, 1);
	assert_int_equal(rsp_snapshot__nr_roots(b->snap), 1);
	assert_int_equal(t->total_ns, 310 * US);
	assert_int_equal(t->cat_ns[RSP_CAT_OTHER_PATH], 0);
	sl = child(b, root(b, 0), RSP_SN_SLEEP, 0);
	assert_non_null(sl);
	assert_int_equal(sl->total_ns, 300 * US);
	w = child(b, sl, RSP_SN_THREAD, 11);
	assert_non_null(w);
	assert_int_equal(w->total_ns, 300 * US);
	assert_non_null(child(b, w, RSP_SN_SLEEP, 0));
	assert_int_equal(child(b, w, RSP_SN_SLEEP, 0)->reason, RSP_SR_BLOCK_IO);
	assert_int_equal(child(b, w, RSP_SN_SLEEP, 0)->total_ns, 240 * US);
	assert_int_equal(child(b, root(b, 0), RSP_SN_RUN, 0)->total_ns, 10 * US);
	b_exit(b);

	b_init(b);
	handoff(b);
	t = snap(b, 1, 500);
	/* each thread's wait for the other: 1's 300 us, 11's first 100 us */
	assert_int_equal(t->nr_threads, 2);
	assert_int_equal(t->cat_ns[RSP_CAT_OTHER_PATH], 400 * US);
	b_exit(b);
}

/* A sleep on the disk: queued (insert -> issue) vs in the device (issue -> complete). */
static void test_block_io(void **state)
{
	struct b bb, *b = &bb;
	struct rsp_block_req r;
	const struct rsp_snapshot_totals *t;

	b_init(b);
	RUN(1, 1, 0, 100);
	SLEEP(1, 1, 100, 1100, RSP_SR_BLOCK_IO, RSP_WAKER_DEVICE, DEV);
	RUN(1, 1, 1100, 1200);
	memset(&r, 0, sizeof(r));
	r.id = 1, r.dev = DEV, r.tid = r.tgid = 1;
	r.insert = 90 * US, r.issue = 300 * US, r.complete = 1090 * US;
	b->ops.block(b->st, &r);
	t = snap(b, 1, 1200);
	assert_int_equal(t->cat_ns[RSP_CAT_IO_QUEUE], 200 * US);
	assert_int_equal(t->cat_ns[RSP_CAT_BLOCKING_IO], 800 * US);
	b_exit(b);
}

/*
 * T waits on its request; a kernel thread K, woken by an interrupt this
 * kernel did not deliver, wakes T. K's unexplained sleep while T's request
 * was in the device is that disk's time (inferred); the rest stays unknown.
 */
static void test_io_through_helper(void **state)
{
	struct b bb, *b = &bb;
	struct rsp_block_req r;
	const struct rsp_snapshot_totals *t;

	b_init(b);
	RUN(1, 1, 0, 100);
	SLEEP(1, 1, 100, 1100, RSP_SR_BLOCK_IO, RSP_WAKER_THREAD, 50);
	RUN(1, 1, 1100, 1200);
	seg(b, (struct sg){.tid = 50,
			   .tgid = 50,
			   .kind = RSP_SEG_SLEEP,
			   .start = 0,
			   .end = 1050,
			   .flags = RSP_SEGF_WAKING_NOT_SEEN});
	RUN(50, 50, 1050, 1100);
	SLEEP(50, 50, 1100, 1200, RSP_SR_UNKNOWN, RSP_WAKER_NONE, 0);
	memset(&r, 0, sizeof(r));
	r.id = 1, r.dev = DEV, r.tid = r.tgid = 1;
	r.insert = r.issue = 90 * US, r.complete = 900 * US;
	b->ops.block(b->st, &r);
	t = snap(b, 1, 1200);
	assert_int_equal(t->cat_ns[RSP_CAT_BLOCKING_IO], 800 * US);
	assert_int_equal(t->cat_ns[RSP_CAT_UNKNOWN], 150 * US);
	assert_int_equal(t->unknown_not_delivered_ns, 150 * US);
	assert_int_equal(t->cat_ns[RSP_CAT_NOT_SAMPLED], 250 * US);
	assert_int_equal(t->inferred_ns, 800 * US);
	b_exit(b);
}

/*
 * A thread that did many short requests before a sleep on the disk, and
 * one request inserted before all of them that is still queued when the
 * sleep begins: the sleep's queue time is that old request's, found behind
 * the short ones that ended before the sleep.
 */
static void test_io_old_request(void **state)
{
	struct b bb, *b = &bb;
	struct rsp_block_req r;
	const struct rsp_snapshot_totals *t;

	b_init(b);
	RUN(1, 1, 0, 100);
	SLEEP(1, 1, 100, 1100, RSP_SR_BLOCK_IO, RSP_WAKER_DEVICE, DEV);
	RUN(1, 1, 1100, 1200);
	memset(&r, 0, sizeof(r));
	r.id = 1, r.dev = DEV, r.tid = r.tgid = 1;
	r.insert = 5 * US, r.issue = 300 * US, r.complete = 1090 * US;
	b->ops.block(b->st, &r);
	for (unsigned k = 0; k < 500; k++) {
		r.id = 2 + k, r.sector = 8 * (k + 1);
		r.insert = r.issue = 10 * US + k * 150;
		r.complete = r.insert + 100;
		b->ops.block(b->st, &r);
	}
	t = snap(b, 1, 1200);
	assert_int_equal(t->cat_ns[RSP_CAT_IO_QUEUE], 200 * US);
	assert_int_equal(t->cat_ns[RSP_CAT_BLOCKING_IO], 800 * US);
	b_exit(b);
}

/* Every kind of waker lands in its category. */
static void test_categories(void **state)
{
	struct b bb, *b = &bb;
	const struct rsp_snapshot_totals *t;

	b_init(b);
	RUN(1, 1, 0, 10);
	SLEEP(1, 1, 10, 20, RSP_SR_SLEEP, RSP_WAKER_TIMER, 0);
	RUN(1, 1, 20, 30);
	SLEEP(1, 1, 30, 50, RSP_SR_POLL, RSP_WAKER_TIMER, 0);
	RUN(1, 1, 50, 60);
	SLEEP(1, 1, 60, 90, RSP_SR_NETWORK, RSP_WAKER_SOFTIRQ, RSP_SOFTIRQ_NET_RX);
	RUN(1, 1, 90, 100);
	SLEEP(1, 1, 100, 140, RSP_SR_UNKNOWN, RSP_WAKER_IRQ, 42);
	RUNQ(1, 1, 140, 145, RSP_WAKER_IRQ, 42);
	RUN(1, 1, 145, 150);
	seg(b, (struct sg){.tid = 1,
			   .tgid = 1,
			   .kind = RSP_SEG_RUNNABLE,
			   .reason = RSP_SR_PREEMPT,
			   .start = 150,
			   .end = 160});
	RUN(1, 1, 160, 170);
	seg(b, (struct sg){.tid = 1,
			   .tgid = 1,
			   .kind = RSP_SEG_SLEEP,
			   .reason = RSP_SR_LOCK,
			   .start = 170,
			   .end = 200,
			   .flags = RSP_SEGF_WAKING_NOT_SEEN});
	seg(b, (struct sg){.tid = 1,
			   .tgid = 1,
			   .kind = RSP_SEG_UNKNOWN,
			   .start = 200,
			   .end = 220,
			   .flags = RSP_SEGF_GAP});
	RUN(1, 1, 220, 230);
	t = snap(b, 1, 230);
	assert_int_equal(t->cat_ns[RSP_CAT_DELIBERATE], 10 * US);
	assert_int_equal(t->cat_ns[RSP_CAT_TIMED_OUT], 20 * US);
	assert_int_equal(t->cat_ns[RSP_CAT_NETWORK], 30 * US);
	assert_int_equal(t->cat_ns[RSP_CAT_HARDWARE], 40 * US);
	assert_int_equal(t->cat_ns[RSP_CAT_SCHEDULER], 5 * US);
	assert_int_equal(t->cat_ns[RSP_CAT_INVOLUNTARY], 10 * US);
	assert_int_equal(t->cat_ns[RSP_CAT_UNKNOWN], 50 * US);
	assert_int_equal(t->unknown_not_delivered_ns, 30 * US);
	assert_int_equal(t->unknown_gap_ns, 20 * US);
	assert_int_equal(t->cat_ns[RSP_CAT_NOT_SAMPLED], 65 * US);
	assert_int_equal(t->total_ns, 230 * US);
	b_exit(b);
}

/*
 * Woken onto an idle CPU: the switch-in is not delivered, the run is seen
 * only from its first record. With nothing else run on that CPU, the run
 * started at the wakeup (inferred); after another thread's run there, or
 * an idle sample, it started after those.
 */
static void test_switch_from_idle(void **state)
{
	struct b bb, *b = &bb;
	const struct rsp_snapshot_totals *t;

	b_init(b);
	SLEEP(1, 1, 0, 100, RSP_SR_PIPE, RSP_WAKER_NONE, 0);
	seg(b, (struct sg){.tid = 1,
			   .tgid = 1,
			   .kind = RSP_SEG_RUNNABLE,
			   .start = 100,
			   .end = 500,
			   .flags = RSP_SEGF_SWITCH_NOT_SEEN,
			   .cpu = 1,
			   .wk = RSP_WAKER_THREAD,
			   .wid = 9});
	seg(b,
	    (struct sg){
		    .tid = 1, .tgid = 1, .kind = RSP_SEG_RUN, .start = 500, .end = 600, .cpu = 1});
	SLEEP(1, 1, 600, 700, RSP_SR_PIPE, RSP_WAKER_NONE, 0);
	seg(b, (struct sg){.tid = 1,
			   .tgid = 1,
			   .kind = RSP_SEG_RUNNABLE,
			   .start = 700,
			   .end = 900,
			   .flags = RSP_SEGF_SWITCH_NOT_SEEN,
			   .cpu = 0,
			   .wk = RSP_WAKER_THREAD,
			   .wid = 9});
	seg(b,
	    (struct sg){
		    .tid = 1, .tgid = 1, .kind = RSP_SEG_RUN, .start = 900, .end = 1000, .cpu = 0});
	/* on CPU 0, thread 9 ran until 750; the idle task was sampled at 800 */
	seg(b,
	    (struct sg){
		    .tid = 9, .tgid = 9, .kind = RSP_SEG_RUN, .start = 650, .end = 750, .cpu = 0});
	sample(b, 0, 0, 0, 800 * US, NULL);
	sample(b, 1, 1, 1, 550 * US, stack_a);
	t = snap(b, 1, 1000);
	/* [100, 500] running, inferred; sampled by the sample at 550 */
	assert_int_equal(t->cat_ns[RSP_CAT_UNDERSTOOD], 500 * US);
	/* [700, 800] scheduler, [800, 1000] running, not sampled */
	assert_int_equal(t->cat_ns[RSP_CAT_SCHEDULER], 100 * US);
	assert_int_equal(t->cat_ns[RSP_CAT_NOT_SAMPLED], 200 * US);
	assert_int_equal(t->inferred_ns, 400 * US + 100 * US);
	b_exit(b);
}

/* Samples: a run split by a preemption is sampled as a whole; 20 us of slack after a run. */
static void test_samples(void **state)
{
	struct b bb, *b = &bb;
	const struct rsp_snapshot_totals *t;
	const struct rsp_snode *run;

	b_init(b);
	RUN(1, 1, 0, 100);
	seg(b, (struct sg){.tid = 1,
			   .tgid = 1,
			   .kind = RSP_SEG_RUNNABLE,
			   .reason = RSP_SR_PREEMPT,
			   .start = 100,
			   .end = 150});
	RUN(1, 1, 150, 200);
	SLEEP(1, 1, 200, 300, RSP_SR_PIPE, RSP_WAKER_NONE, 0);
	RUN(1, 1, 300, 400);
	SLEEP(1, 1, 400, 500, RSP_SR_PIPE, RSP_WAKER_NONE, 0);
	RUN(1, 1, 500, 600);
	SLEEP(1, 1, 600, 700, RSP_SR_PIPE, RSP_WAKER_NONE, 0);
	sample(b, 1, 1, 0, 170 * US, stack_a); /* in the second piece of the first run */
	sample(b, 1, 1, 0, 410 * US, stack_b); /* 10 us after the second run */
	sample(b, 1, 1, 0, 630 * US, stack_b); /* 30 us after the third: not its */
	t = snap(b, 1, 700);
	assert_int_equal(t->cat_ns[RSP_CAT_UNDERSTOOD], 250 * US);
	assert_int_equal(t->cat_ns[RSP_CAT_NOT_SAMPLED], 100 * US);
	assert_int_equal(t->samples, 3);
	assert_int_equal(t->samples_unattached, 1);
	run = child(b, root(b, 0), RSP_SN_RUN, 0);
	assert_int_equal(run->count, 3);
	assert_int_equal(run->samples, 2);
	b_exit(b);
}

static void test_no_such_pid(void **state)
{
	struct b bb, *b = &bb;
	struct rsp_snapshot_opts o;
	struct rsp_buf err = RSP_BUF_INIT;

	b_init(b);
	RUN(1, 1, 0, 100);
	assert_int_equal(rsp_tlstore__seal(b->st, 0, 100 * US), 0);
	assert_int_equal(rsp_samples__seal(b->sm), 0);
	rsp_snapshot_opts__init(&o);
	o.pid = 4242;
	assert_null(rsp_snapshot__new(b->st, b->sm, &o, &err));
	assert_int_equal(errno, ESRCH);
	assert_non_null(strstr(err.data, "4242"));
	rsp_buf__exit(&err);
	b_exit(b);
}

/* Samples index: per thread by time, idle per CPU. */
static void test_samples_index(void **state)
{
	struct rsp_samples *s = rsp_samples__new();
	const struct rsp_csample *c;
	size_t n;

	for (uint64_t t = 10; t > 0; t--) {
		struct rsp_csample x = {.time = t * 100, .tid = (uint32_t)(t % 2 + 1), .cpu = 0};
		struct rsp_csample idle = {.time = t * 100 + 5, .tid = 0, .cpu = (uint32_t)(t % 2)};

		assert_int_equal(rsp_samples__add(s, &x), 0);
		assert_int_equal(rsp_samples__add(s, &idle), 0);
	}
	assert_int_equal(rsp_samples__seal(s), 0);
	assert_int_equal(rsp_samples__count(s), 20);
	c = rsp_samples__range(s, 1, 200, 600, &n);
	assert_int_equal(n, 3);
	assert_int_equal(c[0].time, 200);
	assert_int_equal(c[2].time, 600);
	assert_null(rsp_samples__range(s, 3, 0, UINT64_MAX, &n));
	assert_int_equal(n, 0);
	assert_int_equal(rsp_samples__idle_before(s, 0, 700, 0), 605);
	assert_int_equal(rsp_samples__idle_before(s, 1, 700, 0), 505);
	assert_int_equal(rsp_samples__idle_before(s, 1, 700, 600), 0);
	assert_int_equal(rsp_samples__idle_before(s, 5, 700, 0), 0);
	rsp_samples__delete(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_pass),
		cmocka_unit_test(test_other_path),
		cmocka_unit_test(test_handoff_tail),
		cmocka_unit_test(test_triangle),
		cmocka_unit_test(test_poll_loop_merged),
		cmocka_unit_test(test_forked_child),
		cmocka_unit_test(test_started_in_parallel),
		cmocka_unit_test(test_sibling_threads),
		cmocka_unit_test(test_one_thread_spans),
		cmocka_unit_test(test_block_io),
		cmocka_unit_test(test_io_old_request),
		cmocka_unit_test(test_io_through_helper),
		cmocka_unit_test(test_categories),
		cmocka_unit_test(test_switch_from_idle),
		cmocka_unit_test(test_samples),
		cmocka_unit_test(test_no_such_pid),
		cmocka_unit_test(test_samples_index),
		cmocka_unit_test(test_preempted_by_callee),
		cmocka_unit_test(test_pid_reused),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
