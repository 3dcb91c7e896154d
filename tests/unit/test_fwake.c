// SPDX-License-Identifier: GPL-2.0
/*
 * False wakeups found without annotations (lib/timeline/fwake.c), as the
 * timeline store applies them (rsp_tlstore__set_fwake()): hand-built
 * timelines of one thread fed through the store's own timeline callbacks,
 * the stored segments checked. A thread (tid 1) waits on a condition at
 * the user stack COND; threads 7 and 8 wake it.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include <linux/perf_event.h>
#include <rsp/tlstore.h>

#define US	1000ull
#define MAX_RUN (50 * US)

/* Kernel part, then the user part: where the thread waits. */
static const uint64_t COND[] = {PERF_CONTEXT_KERNEL, 0xffffffff81000010ull, PERF_CONTEXT_USER,
				0x7f0000001000ull, 0x401000ull};
static const uint64_t MUTEX[] = {PERF_CONTEXT_KERNEL, 0xffffffff81000010ull, PERF_CONTEXT_USER,
				 0x7f0000002000ull, 0x401000ull};
/* poll on a pipe: a real wakeup (data) looks like a false one; not inferred */
static const uint64_t POLLW[] = {PERF_CONTEXT_KERNEL, 0xffffffff81000020ull, PERF_CONTEXT_USER,
				 0x7f0000003000ull, 0x401000ull};
static const uint64_t ELSEWHERE[] = {PERF_CONTEXT_KERNEL, 0xffffffff81000010ull, PERF_CONTEXT_USER,
				     0x7f0000001000ull, 0x402000ull};

struct feed {
	struct rsp_tlstore *s;
	struct rsp_timeline_ops ops;
	uint64_t t; /* where the thread's next segment starts */
};

static void feed_init(struct feed *f, unsigned flags, uint64_t max_run)
{
	f->s = rsp_tlstore__new(flags);
	assert_non_null(f->s);
	rsp_tlstore__ops(&f->ops);
	rsp_tlstore__set_fwake(f->s, max_run);
	f->t = 1000 * US;
}

static void seg(struct feed *f, uint8_t kind, uint64_t len, const uint64_t *stack, uint32_t nr,
		uint32_t waker, uint16_t flags)
{
	struct rsp_segment g = {.start = f->t,
				.end = f->t + len,
				.tid = 1,
				.tgid = 1,
				.kind = kind,
				.flags = flags,
				.stack = stack,
				.nr_stack = nr};

	if (kind == RSP_SEG_SLEEP) {
		g.reason = stack == POLLW					   ? RSP_SR_POLL
			   : stack == MUTEX || stack == COND || stack == ELSEWHERE ? RSP_SR_LOCK
										   : RSP_SR_UNKNOWN;
		if (waker) {
			g.waker.kind = RSP_WAKER_THREAD;
			g.waker.id = waker;
			g.waker.time = g.end;
		}
	}
	f->ops.segment(f->s, &g, "w");
	f->t += len;
}

/* A sleep at @stack that thread @waker ends, then runnable 5 us and a run of @run. */
static void wait_run(struct feed *f, const uint64_t *stack, uint64_t len, uint32_t waker,
		     uint64_t run)
{
	seg(f, RSP_SEG_SLEEP, len, stack, 5, waker, 0);
	seg(f, RSP_SEG_RUNNABLE, 5 * US, NULL, 0, 0, 0);
	seg(f, RSP_SEG_RUN, run, NULL, 0, 0, 0);
}

static const struct rsp_tlthread *sealed(struct feed *f)
{
	const struct rsp_tlthread *t;

	assert_int_equal(rsp_tlstore__seal(f->s, 0, UINT64_MAX), 0);
	t = rsp_tlstore__find_thread(f->s, 1);
	assert_non_null(t);
	return t;
}

static uint64_t merged(const struct feed *f)
{
	uint64_t n, run;

	rsp_tlstore__fwake_stats(f->s, &n, &run);
	return n;
}

/* A broadcast by 7 wakes it for nothing; 8 wakes it for real: one wait on 8. */
static void test_one_false_wakeup(void **state)
{
	struct feed f;
	const struct rsp_tlthread *t;

	(void)state;
	feed_init(&f, 0, MAX_RUN);
	wait_run(&f, COND, 500 * US, 7, 10 * US);
	wait_run(&f, COND, 300 * US, 8, 2000 * US);
	t = sealed(&f);
	assert_int_equal(t->nr_segs, 3);
	assert_int_equal(t->segs[0].kind, RSP_SEG_SLEEP);
	assert_int_equal(t->segs[0].start, 1000 * US);
	assert_int_equal(t->segs[0].end, 1000 * US + 500 * US + 15 * US + 300 * US);
	assert_int_equal(t->segs[0].waker.id, 8);
	assert_int_equal(t->segs[0].waker.nr_false, 1);
	assert_int_equal(t->segs[1].kind, RSP_SEG_RUNNABLE);
	assert_int_equal(merged(&f), 1);
	/* the brief run is now waiting: totals as the segments say */
	assert_int_equal(t->run_ns, 2000 * US);
	assert_int_equal(t->sleep_ns, 815 * US);
	rsp_tlstore__delete(f.s);
}

/* Nested: three false wakeups in a row, the mutex taken back between them. */
static void test_chain_with_mutex(void **state)
{
	struct feed f;
	const struct rsp_tlthread *t;

	(void)state;
	feed_init(&f, RSP_TLSTORE_WAITS_ONLY, MAX_RUN);
	for (int i = 0; i < 3; i++) {
		wait_run(&f, COND, 100 * US, 7, 5 * US);
		wait_run(&f, MUTEX, 20 * US, 7, 5 * US); /* the mutex the waiter takes back */
	}
	wait_run(&f, COND, 100 * US, 8, 1000 * US);
	t = sealed(&f);
	assert_int_equal(t->nr_segs, 1); /* WAITS_ONLY: only the sleeps */
	assert_int_equal(t->segs[0].start, 1000 * US);
	assert_int_equal(t->segs[0].waker.id, 8);
	assert_int_equal(t->segs[0].waker.nr_false, 3);
	assert_int_equal(merged(&f), 3);
	rsp_tlstore__delete(f.s);
}

/* A waking the perf backend did not see, inside a chain: also false; the real waker is 8. */
static void test_unseen_waking_in_chain(void **state)
{
	struct feed f;
	const struct rsp_tlthread *t;

	(void)state;
	feed_init(&f, RSP_TLSTORE_WAITS_ONLY, MAX_RUN);
	wait_run(&f, COND, 100 * US, 7, 5 * US);
	seg(&f, RSP_SEG_SLEEP, 100 * US, COND, 5, 0, RSP_SEGF_WAKING_NOT_SEEN);
	seg(&f, RSP_SEG_RUNNABLE, 5 * US, NULL, 0, 0, 0);
	seg(&f, RSP_SEG_RUN, 5 * US, NULL, 0, 0, 0);
	wait_run(&f, COND, 100 * US, 8, 1000 * US);
	t = sealed(&f);
	assert_int_equal(t->nr_segs, 1);
	assert_int_equal(t->segs[0].start, 1000 * US);
	assert_int_equal(t->segs[0].waker.id, 8);
	assert_int_equal(t->segs[0].waker.nr_false, 2);
	rsp_tlstore__delete(f.s);

	/* ... but when it is the last, the real waker is unknown: not invented */
	feed_init(&f, 0, MAX_RUN);
	wait_run(&f, COND, 100 * US, 7, 5 * US);
	seg(&f, RSP_SEG_SLEEP, 100 * US, COND, 5, 0, RSP_SEGF_WAKING_NOT_SEEN);
	seg(&f, RSP_SEG_RUNNABLE, 5 * US, NULL, 0, 0, 0);
	seg(&f, RSP_SEG_RUN, 1000 * US, NULL, 0, 0, 0);
	t = sealed(&f);
	assert_int_equal(t->nr_segs, 3);
	assert_int_equal(t->segs[0].waker.kind, RSP_WAKER_NONE);
	assert_int_equal(t->segs[0].waker.nr_false, 1);
	rsp_tlstore__delete(f.s);
}

/* A run longer than the threshold, or another place: real wakeups, kept. */
static void test_real_wakeups_kept(void **state)
{
	struct feed f;
	const struct rsp_tlthread *t;

	(void)state;
	feed_init(&f, RSP_TLSTORE_WAITS_ONLY, MAX_RUN);
	wait_run(&f, COND, 100 * US, 7, 60 * US);      /* ran too long */
	wait_run(&f, COND, 100 * US, 7, 10 * US);      /* then slept elsewhere */
	wait_run(&f, ELSEWHERE, 100 * US, 8, 10 * US); /* then the window ended */
	wait_run(&f, POLLW, 100 * US, 7, 5 * US);
	wait_run(&f, POLLW, 100 * US, 7, 5 * US);
	t = sealed(&f);
	assert_int_equal(t->nr_segs, 5);
	for (size_t i = 0; i < 5; i++)
		assert_int_equal(t->segs[i].waker.nr_false, 0);
	assert_int_equal(t->segs[2].waker.id, 8);
	assert_int_equal(merged(&f), 0);
	rsp_tlstore__delete(f.s);
}

/* At the window's edges: a truncated first sleep merges; a last one with no waker stays unknown. */
static void test_window_edges(void **state)
{
	struct feed f;
	const struct rsp_tlthread *t;

	(void)state;
	feed_init(&f, 0, MAX_RUN);
	seg(&f, RSP_SEG_SLEEP, 100 * US, COND, 5, 7, RSP_SEGF_TRUNCATED);
	seg(&f, RSP_SEG_RUNNABLE, 5 * US, NULL, 0, 0, 0);
	seg(&f, RSP_SEG_RUN, 5 * US, NULL, 0, 0, 0);
	/* still asleep at the end: its real waker is not known, and is not invented */
	seg(&f, RSP_SEG_SLEEP, 100 * US, COND, 5, 0, RSP_SEGF_OPEN);
	t = sealed(&f);
	assert_int_equal(t->nr_segs, 1);
	assert_true(t->segs[0].flags & RSP_SEGF_TRUNCATED);
	assert_true(t->segs[0].flags & RSP_SEGF_OPEN);
	assert_int_equal(t->segs[0].waker.kind, RSP_WAKER_NONE);
	assert_int_equal(t->segs[0].waker.nr_false, 1);
	rsp_tlstore__delete(f.s);

	/* woken, ran briefly, and the window ended: nothing says it was false */
	feed_init(&f, 0, MAX_RUN);
	wait_run(&f, COND, 100 * US, 7, 5 * US);
	t = sealed(&f);
	assert_int_equal(t->nr_segs, 3);
	assert_int_equal(t->segs[0].waker.id, 7);
	assert_int_equal(t->segs[0].waker.nr_false, 0);
	rsp_tlstore__delete(f.s);
}

/* A thread woken that exits (never sleeps again), and a sleep without a user stack: kept. */
static void test_never_slept_again(void **state)
{
	struct feed f;
	const struct rsp_tlthread *t;

	(void)state;
	feed_init(&f, 0, MAX_RUN);
	seg(&f, RSP_SEG_SLEEP, 100 * US, COND, 3, 7, 0); /* kernel part only: place unknown */
	seg(&f, RSP_SEG_RUNNABLE, 5 * US, NULL, 0, 0, 0);
	seg(&f, RSP_SEG_RUN, 5 * US, NULL, 0, 0, 0);
	seg(&f, RSP_SEG_SLEEP, 100 * US, COND, 3, 8, 0);
	seg(&f, RSP_SEG_RUNNABLE, 5 * US, NULL, 0, 0, 0);
	wait_run(&f, COND, 100 * US, 7, 5 * US);
	seg(&f, RSP_SEG_RUN, 5 * US, NULL, 0, 0, RSP_SEGF_EXITED);
	t = sealed(&f);
	assert_int_equal(t->nr_segs, 9);
	assert_int_equal(merged(&f), 0);
	assert_int_equal(t->exited, t->last);
	rsp_tlstore__delete(f.s);
}

/* Off (0, --no-annotations): every wakeup as recorded. */
static void test_off(void **state)
{
	struct feed f;
	const struct rsp_tlthread *t;

	(void)state;
	feed_init(&f, 0, 0);
	wait_run(&f, COND, 500 * US, 7, 10 * US);
	wait_run(&f, COND, 300 * US, 8, 2000 * US);
	t = sealed(&f);
	assert_int_equal(t->nr_segs, 6);
	assert_int_equal(merged(&f), 0);
	rsp_tlstore__delete(f.s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_one_false_wakeup),
		cmocka_unit_test(test_chain_with_mutex),
		cmocka_unit_test(test_real_wakeups_kept),
		cmocka_unit_test(test_window_edges),
		cmocka_unit_test(test_never_slept_again),
		cmocka_unit_test(test_off),
		cmocka_unit_test(test_unseen_waking_in_chain),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
