// SPDX-License-Identifier: GPL-2.0
/*
 * Unit tests of lib/analysis/histfeed.c on synthetic record streams in rsp's layout
 * with this kernel's tracepoint formats: irq and softirq handler times,
 * block queue and service times, and every way a measurement can lose
 * its end (a missing exit, a switch, a lost record, a gap, a completion
 * that never comes) counted rather than measured.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include <rsp/histfeed.h>
#include "support/synth.h"

#define US  1000ull
#define MS  1000000ull
#define S   1000000000ull
#define VDA (254u << 20)
#define SDB (8u << 20 | 16)

struct fixture {
	struct synth *syn;
	struct rsp_hist_store *st;
	struct rsp_histfeed *feed;
};

static struct fixture *setup(uint64_t io_timeout)
{
	struct fixture *f = calloc(1, sizeof(*f));
	struct rsp_hist_config c;
	struct rsp_histfeed_config fc = {.nr_cpus = 2, .io_timeout_ns = io_timeout};

	f->syn = synth__new(2, 1 << 20);
	rsp_hist_config__init(&c);
	c.max_profiles = 64;
	c.nr_slices = 60;
	f->st = rsp_hist_store__new(&c);
	f->feed = rsp_histfeed__new(f->st, &fc);
	assert_non_null(f->feed);
	return f;
}

static void teardown(struct fixture *f)
{
	rsp_histfeed__delete(f->feed);
	rsp_hist_store__delete(f->st);
	synth__delete(f->syn);
	free(f);
}

/* Feed the whole window, in time order, as rspd's analysis thread does. */
static void feed_all(struct fixture *f)
{
	struct rsp_wsnap *snap = rsp_window__pin(f->syn->window, 0, UINT64_MAX);
	struct rsp_witer *it = rsp_witer__new(snap, 0, UINT64_MAX);
	struct rsp_wentry e;

	while (rsp_witer__next(it, &e))
		assert_true(rsp_histfeed__record(f->feed, f->syn->schema, &e) >= 0);
	rsp_witer__delete(it);
	rsp_wsnap__unpin(snap);
}

static const struct rsp_hist_profile *get(struct fixture *f, struct rsp_hist_set **set,
					  unsigned kind, uint32_t id, const char *op)
{
	struct rsp_hist_query q = {.subjects = ~0u, .pid = -1, .tid = -1};
	struct rsp_hist_subject subj = {.kind = kind};
	struct rsp_buf err = RSP_BUF_INIT;

	if (!*set)
		assert_int_equal(rsp_hist_store__collect(f->st, &q, set, &err), 0);
	rsp_buf__exit(&err);
	if (kind == RSP_HSUBJ_PROCESS)
		subj.pid = id;
	if (kind == RSP_HSUBJ_THREAD)
		subj.tid = id;
	return rsp_hist_set__find(*set, &subj, op);
}

static void test_irq_softirq(void **state)
{
	struct fixture *f = setup(0);
	struct rsp_hist_set *set = NULL;
	const struct rsp_hist_profile *p;
	struct rsp_histfeed_stats st;
	uint64_t t = 100 * S;

	/* Three handler runs of 5 us on CPU 1, one of 9 us on CPU 0. */
	for (int i = 0; i < 3; i++) {
		synth__irq(f->syn, true, 1, t + i * MS, 36, "virtio1-req.0");
		synth__irq(f->syn, false, 1, t + i * MS + 5 * US, 36, NULL);
	}
	synth__irq(f->syn, true, 0, t + 500 * US, 36, "virtio1-req.0");
	synth__irq(f->syn, false, 0, t + 509 * US, 36, NULL);
	/* An entry whose exit never came: the next entry supersedes it. */
	synth__irq(f->syn, true, 0, t + 10 * MS, 41, "virtio3-rx");
	synth__irq(f->syn, true, 0, t + 11 * MS, 41, "virtio3-rx");
	synth__irq(f->syn, false, 0, t + 11 * MS + 2 * US, 41, NULL);
	/* An exit alone (its entry hit an idle CPU). */
	synth__irq(f->syn, false, 1, t + 12 * MS, 36, NULL);
	/* NET_RX twice for 10 us; a TIMER softirq cut by a switch; a nested irq. */
	synth__softirq(f->syn, .entry = true, .cpu = 1, .t = t + 20 * MS, .tid = 0, .vec = 3);
	synth__irq(f->syn, true, 1, t + 20 * MS + 2 * US, 36, "virtio1-req.0");
	synth__irq(f->syn, false, 1, t + 20 * MS + 3 * US, 36, NULL);
	synth__softirq(f->syn, .entry = false, .cpu = 1, .t = t + 20 * MS + 10 * US, .tid = 0,
		       .vec = 3);
	synth__softirq(f->syn, .entry = true, .cpu = 0, .t = t + 21 * MS, .tid = 0, .vec = 3);
	synth__softirq(f->syn, .entry = false, .cpu = 0, .t = t + 21 * MS + 10 * US, .tid = 0,
		       .vec = 3);
	synth__softirq(f->syn, .entry = true, .cpu = 0, .t = t + 22 * MS, .tid = 0, .vec = 1);
	synth__switch(f->syn, .cpu = 0, .t = t + 23 * MS, .prev = 10, .prev_comm = "a", .state = 1,
		      .next = 11, .next_comm = "b");
	synth__softirq(f->syn, .entry = false, .cpu = 0, .t = t + 24 * MS, .tid = 0, .vec = 1);
	feed_all(f);

	p = get(f, &set, RSP_HSUBJ_SYSTEM, 0, "irq:virtio1-req.0");
	assert_non_null(p);
	assert_int_equal(p->count, 5);
	assert_int_equal(p->sum, 3 * 5 * US + 9 * US + 1 * US);
	assert_int_equal(p->max, 9 * US);
	p = get(f, &set, RSP_HSUBJ_SYSTEM, 0, "irq:virtio3-rx");
	assert_int_equal(p->count, 1);
	assert_int_equal(p->sum, 2 * US);
	assert_int_equal(p->incomplete, 1);
	p = get(f, &set, RSP_HSUBJ_SYSTEM, 0, "softirq:NET_RX");
	assert_int_equal(p->count, 2);
	assert_int_equal(p->sum, 20 * US);
	p = get(f, &set, RSP_HSUBJ_SYSTEM, 0, "softirq:TIMER");
	assert_int_equal(p->count, 0);
	assert_int_equal(p->incomplete, 1);
	/* Handlers are system-wide: no process profiles. */
	for (size_t i = 0; i < set->n; i++)
		assert_int_equal(set->v[i].subject.kind, RSP_HSUBJ_SYSTEM);
	rsp_histfeed__stats(f->feed, &st);
	assert_int_equal(st.irq_exit_alone, 1);
	assert_int_equal(st.irq_lost_exit, 1);
	assert_int_equal(st.softirq_exit_alone, 1);
	assert_int_equal(st.softirq_lost_exit, 1);
	assert_int_equal(st.latencies, 5 + 1 + 2);
	rsp_hist_set__delete(set);
	teardown(f);
}

static void test_lost_and_gap(void **state)
{
	struct fixture *f = setup(0);
	struct rsp_hist_set *set = NULL;
	const struct rsp_hist_profile *p;
	struct rsp_histfeed_stats st;
	struct rsp_hist_stats hs;
	uint64_t t = 5 * S;

	synth__irq(f->syn, true, 1, t, 36, "virtio1-req.0");
	assert_int_equal(rsp_window__note_lost(f->syn->window, 1, t + 1 * US, 7), 0);
	synth__irq(f->syn, false, 1, t + 2 * US, 36, NULL);
	synth__softirq(f->syn, .entry = true, .cpu = 0, .t = t + 3 * US, .tid = 0, .vec = 3);
	feed_all(f);
	rsp_histfeed__gap(f->feed, t + 4 * US, t + 1 * S, 0);
	p = get(f, &set, RSP_HSUBJ_SYSTEM, 0, "irq:virtio1-req.0");
	assert_int_equal(p->count, 0);
	assert_int_equal(p->incomplete, 1);
	p = get(f, &set, RSP_HSUBJ_SYSTEM, 0, "softirq:NET_RX");
	assert_int_equal(p->incomplete, 1);
	rsp_histfeed__stats(f->feed, &st);
	assert_int_equal(st.lost, 1);
	assert_int_equal(st.gaps, 1);
	assert_int_equal(st.irq_exit_alone, 1);
	rsp_hist_store__stats(f->st, &hs);
	assert_int_equal(hs.gaps, 1);
	assert_int_equal(hs.gap_ns, 1 * S - 4 * US);
	rsp_hist_set__delete(set);
	teardown(f);
}

static void test_block(void **state)
{
	struct fixture *f = setup(2 * S);
	struct rsp_hist_set *set = NULL;
	const struct rsp_hist_profile *p;
	struct rsp_histfeed_stats st;
	uint64_t t = 50 * S;

	/* Inserted by 500/501 on CPU 0, issued 5 us later by a kworker, completed on CPU 1. */
	synth__block(f->syn, .ev = RSP_EV_block_rq_insert, .cpu = 0, .t = t, .tgid = 500,
		     .tid = 501, .comm = "writer", .dev = VDA, .sector = 100, .bytes = 8 * 512,
		     .rwbs = "WS");
	synth__block(f->syn, .ev = RSP_EV_block_rq_issue, .cpu = 0, .t = t + 5 * US, .tid = 90,
		     .comm = "kworker/0:1", .dev = VDA, .sector = 100, .bytes = 8 * 512,
		     .rwbs = "WS");
	synth__block(f->syn, .ev = RSP_EV_block_rq_complete, .cpu = 1, .t = t + 105 * US, .tid = 0,
		     .dev = VDA, .sector = 100, .bytes = 8 * 512, .rwbs = "WS");
	/* Issued without an insert (direct issue): service time only. */
	synth__block(f->syn, .ev = RSP_EV_block_rq_issue, .cpu = 1, .t = t + 1 * MS, .tid = 600,
		     .comm = "dd", .dev = VDA, .sector = 200, .bytes = 8 * 512, .rwbs = "WS");
	synth__block(f->syn, .ev = RSP_EV_block_rq_complete, .cpu = 0, .t = t + 1 * MS + 300 * US,
		     .tid = 0, .dev = VDA, .sector = 200, .bytes = 8 * 512, .rwbs = "WS");
	/* The same sector on another device is another request. */
	synth__block(f->syn, .ev = RSP_EV_block_rq_issue, .cpu = 1, .t = t + 2 * MS, .tid = 600,
		     .comm = "dd", .dev = SDB, .sector = 200, .bytes = 8 * 512, .rwbs = "WS");
	/* A completion with no issue seen: skipped. */
	synth__block(f->syn, .ev = RSP_EV_block_rq_complete, .cpu = 0, .t = t + 3 * MS, .tid = 0,
		     .dev = VDA, .sector = 999, .bytes = 8 * 512, .rwbs = "WS");
	/* Flushes: sector 0 issued twice, the first completion lost (idle CPU). */
	synth__block(f->syn, .ev = RSP_EV_block_rq_issue, .cpu = 0, .t = t + 4 * MS, .tid = 600,
		     .comm = "dd", .dev = VDA, .sector = 0, .bytes = 0, .rwbs = "WS");
	synth__block(f->syn, .ev = RSP_EV_block_rq_issue, .cpu = 0, .t = t + 5 * MS, .tid = 600,
		     .comm = "dd", .dev = VDA, .sector = 0, .bytes = 0, .rwbs = "WS");
	synth__block(f->syn, .ev = RSP_EV_block_rq_complete, .cpu = 1, .t = t + 5 * MS + 40 * US,
		     .tid = 0, .dev = VDA, .sector = 0, .bytes = 0, .rwbs = "WS");
	/* Issued, never completed: open until it expires (timeout 2 s). */
	synth__block(f->syn, .ev = RSP_EV_block_rq_issue, .cpu = 0, .t = t + 6 * MS, .tid = 600,
		     .comm = "dd", .dev = VDA, .sector = 300, .bytes = 8 * 512, .rwbs = "WS");
	/* Inserted, never issued (merged away). */
	synth__block(f->syn, .ev = RSP_EV_block_rq_insert, .cpu = 0, .t = t + 7 * MS, .tid = 600,
		     .comm = "dd", .dev = VDA, .sector = 400, .bytes = 8 * 512, .rwbs = "WS");
	/* Time passes: records one and three seconds later drive the expiry. */
	synth__cpu_sample(f->syn, .cpu = 0, .t = t + 1 * S + 10 * MS, .tid = 1, .ip = 0);
	synth__cpu_sample(f->syn, .cpu = 0, .t = t + 3 * S, .tid = 1, .ip = 0);
	feed_all(f);

	p = get(f, &set, RSP_HSUBJ_SYSTEM, 0, "blk_queue:254:0");
	assert_non_null(p);
	assert_int_equal(p->count, 1);
	assert_int_equal(p->sum, 5 * US);
	p = get(f, &set, RSP_HSUBJ_SYSTEM, 0, "blk_service:254:0");
	assert_int_equal(p->count, 3);
	assert_int_equal(p->sum, 100 * US + 300 * US + 40 * US);
	/* the first flush (superseded) and sector 300 (expired) */
	assert_int_equal(p->incomplete, 2);
	assert_int_equal(p->open, 0);
	/* Attributed to the inserter, not to the kworker that issued it. */
	p = get(f, &set, RSP_HSUBJ_THREAD, 501, "blk_service:254:0");
	assert_non_null(p);
	assert_int_equal(p->count, 1);
	assert_int_equal(p->subject.pid, 500);
	assert_string_equal(p->subject.comm, "writer");
	assert_null(get(f, &set, RSP_HSUBJ_PROCESS, 90, "blk_service:254:0"));
	p = get(f, &set, RSP_HSUBJ_PROCESS, 600, "blk_service:254:0");
	assert_int_equal(p->count, 2);
	p = get(f, &set, RSP_HSUBJ_SYSTEM, 0, "blk_service:8:16");
	assert_int_equal(p->count, 0);
	assert_int_equal(p->incomplete, 1);
	rsp_histfeed__stats(f->feed, &st);
	assert_int_equal(st.blk_complete_alone, 1);
	assert_int_equal(st.blk_never_issued, 1);
	assert_int_equal(st.blk_no_completion, 3);
	assert_int_equal(st.blk_open, 0);
	/* Every request issued is observed, without completion, or open. */
	assert_int_equal(3 + st.blk_no_completion + st.blk_open, 6);
	rsp_hist_set__delete(set);
	teardown(f);
}

static void test_block_open(void **state)
{
	struct fixture *f = setup(10 * S);
	struct rsp_hist_set *set = NULL;
	const struct rsp_hist_profile *p;

	for (unsigned i = 0; i < 4; i++)
		synth__block(f->syn, .ev = RSP_EV_block_rq_issue, .cpu = 0, .t = S + i * MS,
			     .tid = 7, .comm = "w", .dev = VDA, .sector = i * 8, .bytes = 8 * 512,
			     .rwbs = "WS");
	synth__block(f->syn, .ev = RSP_EV_block_rq_complete, .cpu = 1, .t = S + 9 * MS, .tid = 0,
		     .dev = VDA, .sector = 0, .bytes = 8 * 512, .rwbs = "WS");
	synth__cpu_sample(f->syn, .cpu = 0, .t = 3 * S, .tid = 1, .ip = 0); /* before the timeout */
	feed_all(f);
	p = get(f, &set, RSP_HSUBJ_SYSTEM, 0, "blk_service:254:0");
	assert_int_equal(p->count, 1);
	assert_int_equal(p->incomplete, 0);
	assert_int_equal(p->open, 3);
	rsp_hist_set__delete(set);
	set = NULL;
	/* The end of a dump: everything still open is without completion. */
	rsp_histfeed__expire(f->feed, UINT64_MAX);
	p = get(f, &set, RSP_HSUBJ_SYSTEM, 0, "blk_service:254:0");
	assert_int_equal(p->incomplete, 3);
	assert_int_equal(p->open, 0);
	rsp_hist_set__delete(set);
	teardown(f);
}

static void test_table_full(void **state)
{
	struct synth *syn = synth__new(1, 1 << 20);
	struct rsp_hist_config c;
	struct rsp_hist_store *st;
	struct rsp_histfeed_config fc = {.nr_cpus = 1, .max_requests = 4};
	struct rsp_histfeed *feed;
	struct rsp_histfeed_stats s;
	struct rsp_wsnap *snap;
	struct rsp_witer *it;
	struct rsp_wentry e;

	rsp_hist_config__init(&c);
	st = rsp_hist_store__new(&c);
	feed = rsp_histfeed__new(st, &fc);
	for (unsigned i = 0; i < 10; i++)
		synth__block(syn, .ev = RSP_EV_block_rq_issue, .cpu = 0, .t = S + i, .tid = 7,
			     .comm = "w", .dev = VDA, .sector = i * 8, .bytes = 8 * 512,
			     .rwbs = "WS");
	snap = rsp_window__pin(syn->window, 0, UINT64_MAX);
	it = rsp_witer__new(snap, 0, UINT64_MAX);
	while (rsp_witer__next(it, &e))
		rsp_histfeed__record(feed, syn->schema, &e);
	rsp_witer__delete(it);
	rsp_wsnap__unpin(snap);
	rsp_histfeed__stats(feed, &s);
	assert_int_equal(s.blk_table_full, 6);
	assert_int_equal(s.blk_open, 4);
	/* Bad configurations. */
	fc.shard = 3;
	assert_null(rsp_histfeed__new(st, &fc));
	fc.shard = 0;
	fc.nr_cpus = 0;
	assert_null(rsp_histfeed__new(st, &fc));
	rsp_histfeed__delete(NULL);
	rsp_histfeed__delete(feed);
	rsp_hist_store__delete(st);
	synth__delete(syn);
}

static void test_timeline_hooks(void **state)
{
	struct fixture *f = setup(0);
	struct rsp_hist_set *set = NULL;
	const struct rsp_hist_profile *p;
	struct rsp_hist_who w = {.tgid = 9, .tid = 10, .comm = "sleeper", .comm_len = 7};

	for (int i = 0; i < 50; i++) {
		assert_int_equal(rsp_histfeed__offcpu(f->feed, RSP_SR_SLEEP, &w,
						      S + (uint64_t)i * 10 * MS, 1 * MS + 60 * US),
				 0);
		assert_int_equal(rsp_histfeed__offcpu(f->feed, RSP_SR_SLEEP, &w,
						      S + (uint64_t)i * 10 * MS + 9 * MS,
						      8 * MS + 60 * US),
				 0);
	}
	assert_int_equal(rsp_histfeed__runq(f->feed, &w, 2 * S, 20 * US), 0);
	p = get(f, &set, RSP_HSUBJ_THREAD, 10, "offcpu:sleep");
	assert_non_null(p);
	assert_int_equal(p->count, 100);
	{
		struct rsp_hist_peak pk[4];

		/* The known answer of phase 2's test: two peaks, 1 ms and 8 ms. */
		assert_int_equal(rsp_hist__peaks(p->buckets, 1, NULL, pk, 4), 2);
		assert_int_equal(pk[0].count, 50);
		assert_int_equal(pk[0].mode, rsp_hist__bucket(1 * MS + 60 * US, 1));
		assert_int_equal(pk[1].mode, rsp_hist__bucket(8 * MS + 60 * US, 1));
	}
	p = get(f, &set, RSP_HSUBJ_PROCESS, 9, "runq");
	assert_int_equal(p->count, 1);
	rsp_hist_set__delete(set);
	teardown(f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_irq_softirq), cmocka_unit_test(test_lost_and_gap),
		cmocka_unit_test(test_block),	    cmocka_unit_test(test_block_open),
		cmocka_unit_test(test_table_full),  cmocka_unit_test(test_timeline_hooks),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
