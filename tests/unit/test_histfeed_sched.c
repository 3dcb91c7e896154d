// SPDX-License-Identifier: GPL-2.0
/*
 * Unit tests of the latency profiles fed by the timeline (lib/analysis/histfeed.c
 * with a schema): off-CPU time by sleep reason, preemptions, run-queue
 * latency, on synthetic streams with kernel stacks (support/synth.h, a fake
 * kallsyms), including this kernel's quirk (wakings and switch-ins from
 * an idle CPU not delivered), gaps, renames and the bound on threads.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include <rsp/histfeed.h>
#include "kallsyms_fake.h"
#include "support/synth.h"

#define US 1000ull
#define MS 1000000ull
#define S  1000000000ull
#define T0 (100 * S)
#define A  100u
#define B  101u
#define C  200u
#define D  201u

static const uint64_t futex_stack[] = {PERF_CONTEXT_KERNEL, K_SCHEDULE + 0x20, K_FUTEX_WAIT + 0x10,
				       PERF_CONTEXT_USER, 0x7f0000001000ull};
static const uint64_t sleep_stack[] = {PERF_CONTEXT_KERNEL, K_SCHEDULE + 0x20, K_NANOSLEEP + 4};

#define PREEMPTED 0x100 /* TASK_REPORT_MAX: switched out still runnable */

struct fix {
	struct synth s;
	struct rsp_ksyms *ks;
	struct rsp_hist_store *st;
	struct rsp_histfeed *feed;
	struct rsp_hist_set *set;
};

static int setup(void **state)
{
	struct fix *f = calloc(1, sizeof(*f));
	struct rsp_buf err = RSP_BUF_INIT;

	synth__init(&f->s);
	f->ks = rsp_ksyms__new_from_text(fake_kallsyms, strlen(fake_kallsyms), &err);
	rsp_buf__exit(&err);
	*state = f;
	return f->ks ? 0 : -1;
}

static int teardown(void **state)
{
	struct fix *f = *state;

	rsp_hist_set__delete(f->set);
	rsp_histfeed__delete(f->feed);
	rsp_hist_store__delete(f->st);
	synth__exit(&f->s);
	rsp_ksyms__delete(f->ks);
	free(f);
	return 0;
}

static void make_feed(struct fix *f, unsigned max_threads)
{
	struct rsp_hist_config c;
	struct rsp_histfeed_config fc = {
		.nr_cpus = 2,
		.schema = f->s.schema,
		.ksyms = f->ks,
		.max_threads = max_threads,
	};

	rsp_hist_config__init(&c);
	c.max_profiles = 64;
	c.nr_slices = 60;
	f->st = rsp_hist_store__new(&c);
	assert_non_null(f->st);
	f->feed = rsp_histfeed__new(f->st, &fc);
	assert_non_null(f->feed);
}

/* Feed the stream from record @from on; @finish: as at the end of a dump. */
static void feed(struct fix *f, size_t from, bool finish)
{
	for (size_t i = from; i < f->s.n; i++) {
		struct rsp_wentry e = synth__entry(&f->s, i);

		assert_true(rsp_histfeed__record(f->feed, f->s.schema, &e) >= 0);
	}
	if (finish)
		rsp_histfeed__expire(f->feed, UINT64_MAX);
}

static const struct rsp_hist_profile *get(struct fix *f, unsigned kind, uint32_t id, const char *op)
{
	struct rsp_hist_query q = {.subjects = ~0u & ~(1u << RSP_HSUBJ_COMM), .pid = -1, .tid = -1};
	struct rsp_hist_subject subj = {.kind = kind};
	struct rsp_buf err = RSP_BUF_INIT;

	if (!f->set)
		assert_int_equal(rsp_hist_store__collect(f->st, &q, &f->set, &err), 0);
	rsp_buf__exit(&err);
	if (kind == RSP_HSUBJ_PROCESS)
		subj.pid = id;
	if (kind == RSP_HSUBJ_THREAD)
		subj.tid = id;
	return rsp_hist_set__find(f->set, &subj, op);
}

static void check_one(const struct rsp_hist_profile *p, uint64_t ns)
{
	assert_non_null(p);
	assert_int_equal(p->count, 1);
	assert_int_equal(p->sum, ns);
	assert_int_equal(p->buckets[rsp_hist__bucket(ns, 1)], 1);
}

/*
 * Thread A sleeps (nanosleep), a timer wakes it from an hrtimer handler on
 * the busy CPU 1, it waits for B to be preempted, sleeps on a futex that B
 * releases, then wakes on idle CPU 0 where neither its switch-in nor, next
 * time, its waking is delivered.
 */
static void test_sleeps_preemption_runq(void **state)
{
	struct fix *f = *state;
	struct synth *s = &f->s;
	const struct rsp_hist_profile *p;
	struct rsp_histfeed_stats st;

	make_feed(f, 0);
	synth__switch(s, .cpu = 1, .t = T0 + 500 * US, .prev = 0, .next = B, .next_comm = "b");
	synth__switch(s, .cpu = 0, .t = T0 + 1 * MS, .prev = A, .prev_comm = "a", .state = 1,
		      .next = 0, .chain = sleep_stack, .nr = 3);
	synth__hrtimer(s, true, 1, T0 + 3 * MS);
	synth__waking(s, .cpu = 1, .t = T0 + 3 * MS + 1 * US, .tid = B, .target = A,
		      .target_comm = "a");
	synth__hrtimer(s, false, 1, T0 + 3 * MS + 2 * US);
	synth__switch(s, .cpu = 1, .t = T0 + 3 * MS + 50 * US, .prev = B, .prev_comm = "b",
		      .state = PREEMPTED, .next = A, .next_comm = "a");
	synth__switch(s, .cpu = 1, .t = T0 + 4 * MS, .prev = A, .prev_comm = "a", .state = 1,
		      .next = B, .next_comm = "b", .chain = futex_stack, .nr = 5);
	synth__waking(s, .cpu = 1, .t = T0 + 5 * MS, .tid = B, .target = A, .target_comm = "a");
	/* CPU 0 idle: A's switch-in there is not delivered; its first record is at 6 ms */
	synth__switch(s, .cpu = 0, .t = T0 + 6 * MS, .prev = A, .prev_comm = "a", .state = 1,
		      .next = 0, .chain = sleep_stack, .nr = 3);
	/* the timer that ends this sleep hits idle CPU 0: no waking; next sign at 9 ms */
	synth__switch(s, .cpu = 0, .t = T0 + 9 * MS, .prev = A, .prev_comm = "a", .state = 1,
		      .next = 0, .chain = sleep_stack, .nr = 3);
	feed(f, 0, true);

	p = get(f, RSP_HSUBJ_THREAD, A, "offcpu:sleep");
	assert_non_null(p);
	assert_int_equal(p->count, 2);
	assert_int_equal(p->sum, 2 * MS + 1 * US + 3 * MS);
	assert_int_equal(p->buckets[rsp_hist__bucket(2 * MS + 1 * US, 1)], 1);
	assert_int_equal(p->buckets[rsp_hist__bucket(3 * MS, 1)], 1);
	assert_string_equal(p->subject.comm, "a");
	check_one(get(f, RSP_HSUBJ_THREAD, A, "offcpu:lock"), 1 * MS);
	check_one(get(f, RSP_HSUBJ_THREAD, A, "runq"), 49 * US);
	check_one(get(f, RSP_HSUBJ_THREAD, B, "offcpu:preemption"), 950 * US);
	/* the process and the system see the same */
	p = get(f, RSP_HSUBJ_PROCESS, A, "offcpu:sleep");
	assert_non_null(p);
	assert_int_equal(p->count, 2);
	assert_string_equal(p->subject.comm, "a");
	/* the sleep measured to A's next run is counted as an upper bound */
	p = get(f, RSP_HSUBJ_SYSTEM, 0, "offcpu:sleep");
	assert_int_equal(p->count, 2);
	assert_int_equal(p->inferred, 1);
	/* the wait whose switch-in was not seen: counted, not measured */
	p = get(f, RSP_HSUBJ_SYSTEM, 0, "runq");
	assert_int_equal(p->count, 1);
	assert_int_equal(p->incomplete, 1);
	assert_null(get(f, RSP_HSUBJ_SYSTEM, 0, "offcpu:unknown"));

	rsp_histfeed__stats(f->feed, &st);
	assert_int_equal(st.sleeps, 4); /* 2 sleep, 1 lock, 1 preemption */
	assert_int_equal(st.sleeps_inferred, 1);
	assert_int_equal(st.runq, 1);
	assert_int_equal(st.switch_not_seen, 1);
	assert_int_equal(st.segments_skipped, 1); /* A's last sleep, open at the end */
	/*
	 * What the timeline infers was not delivered: the timer's records on
	 * CPU 1 at 3 ms are the idle task's, so B's run there ended unseen (a
	 * switch-out) and its record at 3.05 ms is a switch-in not seen; A's
	 * switch-ins on CPU 0 at 6 and 9 ms; the waking before 9 ms.
	 */
	assert_int_equal(st.tl_switches, 6);
	assert_int_equal(st.tl_switch_outs_not_seen, 1);
	assert_int_equal(st.tl_switch_ins_not_seen, 3);
	assert_int_equal(st.tl_wakings_not_seen, 1);
	assert_int_equal(st.no_process, 0);
}

/* Names follow exec: a thread's is its own, a process's its main thread's. */
static void test_rename(void **state)
{
	struct fix *f = *state;
	struct synth *s = &f->s;
	const struct rsp_hist_profile *p;

	make_feed(f, 0);
	synth__switch(s, .cpu = 1, .t = T0, .prev = 0, .next = B, .next_comm = "b");
	/* C, forked from python3, sleeps once under that name */
	synth__switch(s, .cpu = 0, .t = T0 + 1 * MS, .prev = C, .prev_comm = "python3", .state = 1,
		      .next = 0, .chain = sleep_stack, .nr = 3);
	synth__waking(s, .cpu = 1, .t = T0 + 2 * MS, .tid = B, .target = C,
		      .target_comm = "python3");
	synth__switch(s, .cpu = 1, .t = T0 + 2 * MS + 10 * US, .prev = B, .prev_comm = "b",
		      .state = PREEMPTED, .next = C, .next_comm = "python3");
	synth__comm(s, .cpu = 1, .t = T0 + 3 * MS, .pid = C, .comm = "hammer", .exec = 1);
	synth__switch(s, .cpu = 1, .t = T0 + 4 * MS, .prev = C, .prev_comm = "hammer", .state = 1,
		      .next = B, .next_comm = "b", .chain = sleep_stack, .nr = 3);
	synth__waking(s, .cpu = 1, .t = T0 + 5 * MS, .tid = B, .target = C,
		      .target_comm = "hammer");
	synth__switch(s, .cpu = 1, .t = T0 + 5 * MS + 10 * US, .prev = B, .prev_comm = "b",
		      .state = PREEMPTED, .next = C, .next_comm = "hammer");
	/* its thread D, named "worker", must not rename the process */
	synth__comm(s, .cpu = 1, .t = T0 + 6 * MS, .pid = C, .tid = D, .comm = "worker", .exec = 1);
	synth__switch(s, .cpu = 1, .t = T0 + 7 * MS, .prev = C, .prev_comm = "hammer",
		      .state = PREEMPTED, .next = D, .next_comm = "worker");
	synth__switch(s, .cpu = 1, .t = T0 + 8 * MS, .prev_tgid = C, .prev = D,
		      .prev_comm = "worker", .state = 1, .next = C, .next_comm = "hammer",
		      .chain = sleep_stack, .nr = 3);
	synth__waking(s, .cpu = 1, .t = T0 + 9 * MS, .tid = C, .target = D,
		      .target_comm = "worker");
	synth__switch(s, .cpu = 1, .t = T0 + 9 * MS + 10 * US, .prev = C, .prev_comm = "hammer",
		      .state = PREEMPTED, .next = D, .next_comm = "worker");
	feed(f, 0, false);

	p = get(f, RSP_HSUBJ_PROCESS, C, "offcpu:sleep");
	assert_non_null(p);
	assert_int_equal(p->count, 3);
	assert_string_equal(p->subject.comm, "hammer");
	p = get(f, RSP_HSUBJ_THREAD, C, "offcpu:sleep");
	assert_int_equal(p->count, 2);
	assert_string_equal(p->subject.comm, "hammer");
	p = get(f, RSP_HSUBJ_THREAD, D, "offcpu:sleep");
	assert_int_equal(p->count, 1);
	assert_int_equal(p->subject.pid, C);
	assert_string_equal(p->subject.comm, "worker");
}

/* Lost records: nothing measured across them; the same for a skipped stretch. */
static void test_gaps(void **state)
{
	struct fix *f = *state;
	struct synth *s = &f->s;
	struct rsp_histfeed_stats st;
	size_t mark;

	make_feed(f, 0);
	synth__switch(s, .cpu = 1, .t = T0, .prev = 0, .next = B, .next_comm = "b");
	synth__switch(s, .cpu = 0, .t = T0 + 1 * MS, .prev = A, .prev_comm = "a", .state = 1,
		      .next = 0, .chain = futex_stack, .nr = 5);
	synth__lost(s, 0, T0 + 2 * MS, 10);
	synth__waking(s, .cpu = 1, .t = T0 + 3 * MS, .tid = B, .target = A, .target_comm = "a");
	synth__switch(s, .cpu = 1, .t = T0 + 3 * MS + 5 * US, .prev = B, .prev_comm = "b",
		      .state = PREEMPTED, .next = A, .next_comm = "a");
	synth__switch(s, .cpu = 1, .t = T0 + 4 * MS, .prev = A, .prev_comm = "a", .state = 1,
		      .next = B, .next_comm = "b", .chain = futex_stack, .nr = 5);
	feed(f, 0, false);
	/* the futex sleep was cut by the lost records: not a latency */
	assert_null(get(f, RSP_HSUBJ_THREAD, A, "offcpu:lock"));
	rsp_histfeed__stats(f->feed, &st);
	assert_int_equal(st.segments_skipped, 1);

	/* A sleeps; the feed skips a stretch (rspd fell behind): its end is unknown */
	rsp_hist_set__delete(f->set);
	f->set = NULL;
	rsp_histfeed__gap(f->feed, T0 + 5 * MS, T0 + 6 * MS, 0);
	mark = s->n;
	synth__waking(s, .cpu = 1, .t = T0 + 7 * MS, .tid = B, .target = A, .target_comm = "a");
	synth__switch(s, .cpu = 1, .t = T0 + 7 * MS + 5 * US, .prev = B, .prev_comm = "b",
		      .state = PREEMPTED, .next = A, .next_comm = "a");
	synth__switch(s, .cpu = 1, .t = T0 + 8 * MS, .prev = A, .prev_comm = "a", .state = 1,
		      .next = B, .next_comm = "b", .chain = futex_stack, .nr = 5);
	synth__waking(s, .cpu = 1, .t = T0 + 9 * MS, .tid = B, .target = A, .target_comm = "a");
	feed(f, mark, false);
	/* only the sleep from 8 ms to 9 ms is whole */
	check_one(get(f, RSP_HSUBJ_THREAD, A, "offcpu:lock"), 1 * MS);
	rsp_histfeed__stats(f->feed, &st);
	assert_int_equal(st.gaps, 1);
}

/* Past max_threads, a thread's records are left out, counted; the others go on. */
static void test_max_threads(void **state)
{
	struct fix *f = *state;
	struct synth *s = &f->s;
	struct rsp_histfeed_stats st;

	make_feed(f, 2);
	synth__switch(s, .cpu = 1, .t = T0, .prev = 0, .next = B, .next_comm = "b");
	synth__switch(s, .cpu = 0, .t = T0 + 1 * MS, .prev = A, .prev_comm = "a", .state = 1,
		      .next = 0, .chain = futex_stack, .nr = 5);
	/* C is the third thread: not followed */
	synth__switch(s, .cpu = 0, .t = T0 + 2 * MS, .prev = C, .prev_comm = "c", .state = 1,
		      .next = 0, .chain = futex_stack, .nr = 5);
	synth__waking(s, .cpu = 1, .t = T0 + 3 * MS, .tid = B, .target = A, .target_comm = "a");
	synth__waking(s, .cpu = 1, .t = T0 + 3 * MS + 1 * US, .tid = B, .target = C,
		      .target_comm = "c");
	feed(f, 0, false);
	check_one(get(f, RSP_HSUBJ_THREAD, A, "offcpu:lock"), 2 * MS);
	assert_null(get(f, RSP_HSUBJ_THREAD, C, "offcpu:lock"));
	rsp_histfeed__expire(f->feed, T0 + 4 * MS); /* publishes the timeline's counters */
	rsp_histfeed__stats(f->feed, &st);
	assert_true(st.threads_untracked >= 2);
	assert_int_equal(st.timeline_malformed, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_sleeps_preemption_runq, setup, teardown),
		cmocka_unit_test_setup_teardown(test_rename, setup, teardown),
		cmocka_unit_test_setup_teardown(test_gaps, setup, teardown),
		cmocka_unit_test_setup_teardown(test_max_threads, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
