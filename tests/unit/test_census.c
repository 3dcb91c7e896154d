// SPDX-License-Identifier: GPL-2.0
/*
 * Unit tests of lib/analysis/census.c (what `rspctl status` counts) on a
 * synthetic window: per-thread switches, wakeups, samples and run time by
 * perf sched timehist's rule, who woke the process, records by event.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>
#include <rsp/census.h>
#include "support/synth.h"

/*
 * CPU 0: 10 (pid 10, "web") and 11 (pid 10, "web") alternate with the idle
 * task: 10 runs [1000, 1500), 11 runs [2000, 2300), 10 runs [3000, 3200).
 * CPU 1: 20 (pid 20, "db") wakes 10 twice and 11 once; an interrupt of the
 * idle task (tid 0) wakes 10 once. Two samples of 11. A lost record on
 * CPU 0 at 4000, then 10 runs [5000, 5100): the gap makes what the CPU ran
 * before 5000 unknown (no run for the idle task), not 10's run after it.
 */
static struct synth *stream(void)
{
	struct synth *s = synth__new(2, 1u << 20);

	synth__switch(s, .cpu = 0, .t = 1000, .prev = 0, .next = 10, .next_comm = "web");
	synth__switch(s, .cpu = 0, .t = 1500, .prev = 10, .prev_comm = "web", .state = 1,
		      .next = 0);
	synth__waking(s, .cpu = 1, .t = 1800, .tid = 20, .target = 11, .target_comm = "web");
	synth__switch(s, .cpu = 0, .t = 2000, .prev = 0, .next = 11, .next_comm = "web");
	synth__cpu_sample(s, .cpu = 0, .t = 2100, .tgid = 10, .tid = 11, .ip = 0x401000);
	synth__cpu_sample(s, .cpu = 0, .t = 2200, .tgid = 10, .tid = 11, .ip = 0x401000);
	synth__switch(s, .cpu = 0, .t = 2300, .prev_tgid = 10, .prev = 11, .prev_comm = "web",
		      .state = 1, .next = 0);
	synth__waking(s, .cpu = 1, .t = 2800, .tid = 20, .target = 10, .target_comm = "web");
	synth__switch(s, .cpu = 0, .t = 3000, .prev = 0, .next = 10, .next_comm = "web");
	synth__switch(s, .cpu = 0, .t = 3200, .prev = 10, .prev_comm = "web", .state = 1,
		      .next = 0);
	synth__waking(s, .cpu = 1, .t = 3500, .tid = 20, .target = 10, .target_comm = "web");
	synth__waking(s, .cpu = 1, .t = 3600, .tid = 0, .target = 10, .target_comm = "web");
	rsp_window__note_lost(s->window, 0, 4000, 2);
	synth__switch(s, .cpu = 0, .t = 5000, .prev = 0, .next = 10, .next_comm = "web");
	synth__switch(s, .cpu = 0, .t = 5100, .prev = 10, .prev_comm = "web", .state = 1,
		      .next = 0);
	return s;
}

static const struct rsp_census_thread *thread(const struct rsp_census *c, uint32_t tid)
{
	size_t n;
	const struct rsp_census_thread *v = rsp_census__threads(c, &n);

	for (size_t i = 0; i < n; i++)
		if (v[i].tid == tid)
			return &v[i];
	return NULL;
}

static void test_threads(void **state)
{
	struct synth *s = stream();
	struct rsp_wsnap *snap = rsp_window__pin(s->window, 0, UINT64_MAX);
	struct rsp_census *c = rsp_census__new(s->schema, snap, 0, UINT64_MAX, 10);
	const struct rsp_census_thread *t10, *t11;
	const struct rsp_census_waker *w;
	size_t n;

	assert_non_null(c);
	rsp_census__threads(c, &n);
	assert_int_equal(n, 2);
	t10 = thread(c, 10);
	t11 = thread(c, 11);
	assert_non_null(t10);
	assert_non_null(t11);
	assert_string_equal(t10->comm, "web");
	assert_int_equal(t10->switches_out, 3);
	assert_int_equal(t10->switches_in, 3);
	assert_int_equal(t10->wakeups, 3);
	/* what CPU 0 ran since its previous switch: 500 + 200 + 100 */
	assert_int_equal(t10->run_ns, 800);
	assert_int_equal(t11->run_ns, 300);
	assert_int_equal(t11->samples, 2);
	assert_int_equal(t11->wakeups, 1);
	/* wakers: pid 20 three times, then the idle task once */
	w = rsp_census__wakers(c, &n);
	assert_int_equal(n, 2);
	assert_int_equal(w[0].pid, 20);
	assert_int_equal(w[0].wakings, 3);
	assert_int_equal(w[1].pid, 0);
	assert_string_equal(w[1].comm, "(idle)");
	assert_int_equal(w[1].wakings, 1);
	rsp_census__delete(c);
	rsp_wsnap__unpin(snap);
	synth__delete(s);
}

static void test_events(void **state)
{
	struct synth *s = stream();
	struct rsp_wsnap *snap = rsp_window__pin(s->window, 0, UINT64_MAX);
	struct rsp_census *c = rsp_census__new(s->schema, snap, 0, UINT64_MAX, -1);
	const struct rsp_timeline_stats *st;
	const struct rsp_census_sleeps *sl;
	size_t n;

	assert_non_null(c);
	st = rsp_census__stats(c);
	assert_int_equal(st->events[RSP_EV_sched_switch], 8);
	assert_int_equal(st->events[RSP_EV_sched_waking], 4);
	assert_int_equal(st->events[RSP_EV_cpu_clock], 2);
	assert_int_equal(st->lost_records, 1);
	assert_int_equal(st->lost, 2);
	/* sleeps that ended: 10 [1500, 2800), 11 [2300, ...) open, 10 [3200, 3500) */
	sl = rsp_census__sleeps(c);
	assert_int_equal(sl->sleeps, 2);
	assert_int_equal(sl->sleep_ns, 1300 + 300);
	assert_int_equal(sl->with_stack, 0);
	/* no process asked: no threads */
	assert_null(rsp_census__threads(c, &n));
	assert_int_equal(n, 0);
	rsp_census__delete(c);
	rsp_wsnap__unpin(snap);
	synth__delete(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_threads),
		cmocka_unit_test(test_events),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
