// SPDX-License-Identifier: GPL-2.0
/*
 * rsp_tidfilter (rspctl dump --netns): which records of a window belong to
 * a set of threads. Thread 10 is kept, 20 (another namespace) is not; each
 * record below is at its own time, and the kept times are the known answer.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>
#include <rsp/tidfilter.h>
#include <rsp/window.h>
#include "support/synth.h"

#define DEV (8u << 20)

static void build(struct synth *s)
{
	synth__process_fork(s, .cpu = 0, .t = 1, .parent = 10, .child = 11);
	synth__process_fork(s, .cpu = 0, .t = 2, .parent = 20, .child = 21);
	synth__switch(s, .cpu = 0, .t = 3, .prev = 20, .state = 1, .next = 11);
	/* every switch: the CPU's sequence of who ran */
	synth__switch(s, .cpu = 0, .t = 4, .prev = 20, .state = 1, .next = 21);
	synth__waking(s, .cpu = 0, .t = 5, .tid = 20, .target = 10);
	synth__waking(s, .cpu = 0, .t = 6, .tid = 10, .target = 20);
	synth__waking(s, .cpu = 0, .t = 7, .tid = 20, .target = 21);
	synth__block(s, .ev = RSP_EV_block_rq_insert, .cpu = 0, .t = 8, .tid = 10, .dev = DEV,
		     .sector = 100, .bytes = 4096);
	synth__block(s, .ev = RSP_EV_block_rq_insert, .cpu = 0, .t = 9, .tid = 20, .dev = DEV,
		     .sector = 200, .bytes = 4096);
	/* issued by a worker of no namespace of interest, completed in irq context */
	synth__block(s, .ev = RSP_EV_block_rq_issue, .cpu = 0, .t = 10, .tid = 30, .dev = DEV,
		     .sector = 100, .bytes = 4096);
	synth__block(s, .ev = RSP_EV_block_rq_complete, .cpu = 0, .t = 11, .tid = 0, .dev = DEV,
		     .sector = 100);
	synth__block(s, .ev = RSP_EV_block_rq_complete, .cpu = 0, .t = 12, .tid = 0, .dev = DEV,
		     .sector = 200);
	synth__sock_len(s, .cpu = 0, .t = 13, .tid = 10, .sk = 0xa000, .bytes = 8);
	synth__sock_len(s, .cpu = 0, .t = 14, .tid = 20, .sk = 0xb000, .bytes = 8);
	/* over a veth, data arrives in the sender's context: by socket, not by context */
	synth__data_ready(s, .cpu = 0, .t = 15, .tid = 20, .sk = 0xa000);
	synth__data_ready(s, .cpu = 0, .t = 16, .tid = 10, .sk = 0xb000);
	synth__tcp_state(s, .cpu = 0, .t = 17, .tid = 10, .sk = 0xb000, .oldstate = 3,
			 .newstate = 1, .saddr = 0x0a4d0002, .sport = 7707, .daddr = 0x0a4d0001,
			 .dport = 40000);
	synth__tcp_state(s, .cpu = 0, .t = 18, .tid = 20, .sk = 0xa000, .oldstate = 1,
			 .newstate = 7, .saddr = 0x0a4d0001, .sport = 40000, .daddr = 0x0a4d0002,
			 .dport = 7707);
	synth__irq_in(s, true, 0, 19, 24, "eth0", 20);
	synth__comm(s, .cpu = 0, .t = 20, .pid = 21, .comm = "other");
	synth__comm(s, .cpu = 0, .t = 21, .pid = 11, .comm = "child");
	/* 0xa000 was closed at 18: its address reused by a socket of the other namespace */
	synth__sock_len(s, .cpu = 0, .t = 22, .tid = 20, .sk = 0xa000, .bytes = 8);
	synth__data_ready(s, .cpu = 0, .t = 23, .tid = 10, .sk = 0xa000);
}

static const uint64_t kept_times[] = {1, 3, 4, 5, 6, 8, 10, 11, 13, 15, 18, 19, 21};

static void test_netns_records(void **state)
{
	struct synth *s = synth__new(1, 1u << 20);
	struct rsp_tidfilter *f = rsp_tidfilter__new(s->schema);
	struct rsp_tidfilter_stats st;
	struct rsp_wsnap *snap;
	struct rsp_witer *it;
	struct rsp_wentry e;
	uint64_t kept[32];
	size_t n = 0;

	(void)state;
	assert_non_null(f);
	build(s);
	assert_int_equal(rsp_tidfilter__add(f, 10), 0);
	snap = rsp_window__pin(s->window, 0, UINT64_MAX);
	assert_int_equal(rsp_tidfilter__scan(f, snap, 0, UINT64_MAX), 0);
	assert_true(rsp_tidfilter__has(f, 11)); /* forked by 10 */
	assert_false(rsp_tidfilter__has(f, 21));
	it = rsp_witer__new(snap, 0, UINT64_MAX);
	while (rsp_witer__next(it, &e))
		if (rsp_tidfilter__keep(f, e.rec) && n < 32)
			kept[n++] = e.time;
	rsp_witer__delete(it);
	rsp_wsnap__unpin(snap);
	assert_int_equal(n, sizeof(kept_times) / sizeof(kept_times[0]));
	for (size_t i = 0; i < n; i++)
		assert_int_equal(kept[i], kept_times[i]);
	rsp_tidfilter__stats(f, &st);
	assert_int_equal(st.kept, n);
	assert_int_equal(st.left_out, 23 - n);
	assert_int_equal(st.threads, 2);
	assert_int_equal(st.inherited, 1);
	assert_int_equal(st.sockets, 1);
	rsp_tidfilter__delete(f);
	rsp_tidfilter__delete(NULL);
	synth__delete(s);
}

/* A filter of no thread keeps the records of no thread. */
static void test_empty_filter(void **state)
{
	struct synth *s = synth__new(1, 1u << 20);
	struct rsp_tidfilter *f = rsp_tidfilter__new(s->schema);
	struct rsp_wsnap *snap;
	struct rsp_witer *it;
	struct rsp_wentry e;
	unsigned kept = 0;

	(void)state;
	build(s);
	snap = rsp_window__pin(s->window, 0, UINT64_MAX);
	assert_int_equal(rsp_tidfilter__scan(f, snap, 0, UINT64_MAX), 0);
	it = rsp_witer__new(snap, 0, UINT64_MAX);
	while (rsp_witer__next(it, &e))
		kept += rsp_tidfilter__keep(f, e.rec);
	rsp_witer__delete(it);
	rsp_wsnap__unpin(snap);
	/* no thread: only the CPU's switches and interrupt handler */
	assert_int_equal(kept, 3);
	rsp_tidfilter__delete(f);
	synth__delete(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_netns_records),
		cmocka_unit_test(test_empty_filter),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
