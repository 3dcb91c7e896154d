// SPDX-License-Identifier: GPL-2.0
/*
 * Stopwatches without the kernel: the matching of entries and returns the
 * BPF programs run (bpf/stopwatch.h, compiled here as it is there), the
 * exact statistics and their merge across CPUs (lib/analysis/stopwatch.c),
 * the request's parsing. test_stopwatch_bpf runs the same code in the
 * kernel.
 */
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include <rsp/hist.h>
#include <rsp/query.h>
#include <rsp/stopwatch.h>
#include <rsp/sw_request.h>
#include "bpf/stopwatch.h"

/* Nested calls of one function (a calls b calls c): each return pops its own. */
static void test_nesting(void **state)
{
	struct rsp_sw_frames f = {0};
	sw_u64 un = 0, ov = 0, d = 0;

	(void)state;
	rsp_sw__push(&f, 1000, 10, &un, &ov);
	rsp_sw__push(&f, 900, 20, &un, &ov);
	rsp_sw__push(&f, 800, 25, &un, &ov);
	assert_true(rsp_sw__pop(&f, 800, 30, &d, &un));
	assert_int_equal(d, 5);
	assert_true(rsp_sw__pop(&f, 900, 40, &d, &un));
	assert_int_equal(d, 20);
	assert_true(rsp_sw__pop(&f, 1000, 100, &d, &un));
	assert_int_equal(d, 90);
	assert_int_equal(f.depth, 0);
	assert_int_equal(un, 0);
	assert_int_equal(ov, 0);
}

/* Recursion 5 deep, K times: exactly 5K matches, nothing left open. */
static void test_recursion(void **state)
{
	struct rsp_sw_frames f = {0};
	sw_u64 un = 0, ov = 0, d = 0, matched = 0, t = 0;

	(void)state;
	for (int k = 0; k < 100; k++) {
		for (int i = 0; i < 5; i++)
			rsp_sw__push(&f, 4096 - 64 * (sw_u64)i, ++t, &un, &ov);
		for (int i = 4; i >= 0; i--) {
			matched += rsp_sw__pop(&f, 4096 - 64 * (sw_u64)i, ++t, &d, &un);
			assert_int_equal(d, 2 * (4 - i) + 1 + 0 * d);
		}
	}
	assert_int_equal(matched, 500);
	assert_int_equal(f.depth, 0);
	assert_int_equal(un, 0);
}

/*
 * longjmp out of an inner call to its caller's caller: the outer return
 * pops the stale inner entry as unmatched; a new call at or above a stale
 * entry's stack pointer does the same.
 */
static void test_longjmp(void **state)
{
	struct rsp_sw_frames f = {0};
	sw_u64 un = 0, ov = 0, d = 0;

	(void)state;
	rsp_sw__push(&f, 1000, 1, &un, &ov);
	rsp_sw__push(&f, 900, 2, &un, &ov);		/* left by longjmp */
	assert_true(rsp_sw__pop(&f, 1000, 9, &d, &un)); /* the outer one returns */
	assert_int_equal(d, 8);
	assert_int_equal(un, 1);
	assert_int_equal(f.depth, 0);

	rsp_sw__push(&f, 900, 10, &un, &ov); /* left by longjmp to main */
	rsp_sw__push(&f, 900, 20, &un, &ov); /* main calls it again: same stack */
	assert_int_equal(un, 2);
	assert_int_equal(f.depth, 1);
	assert_true(rsp_sw__pop(&f, 900, 25, &d, &un));
	assert_int_equal(d, 5);
	assert_int_equal(un, 2);
}

/* A return whose entry was not seen (the stopwatch began inside the call). */
static void test_return_without_entry(void **state)
{
	struct rsp_sw_frames f = {0};
	sw_u64 un = 0, ov = 0, d = 0;

	(void)state;
	assert_false(rsp_sw__pop(&f, 1000, 5, &d, &un));
	rsp_sw__push(&f, 800, 1, &un, &ov); /* a deeper call, entered after */
	assert_false(rsp_sw__pop(&f, 1000, 5, &d, &un));
	assert_int_equal(un, 1); /* the deeper one was left: counted */
}

/* Deeper than RSP_SW_DEPTH: the extra entries are overflow, the rest match. */
static void test_too_deep(void **state)
{
	struct rsp_sw_frames f = {0};
	sw_u64 un = 0, ov = 0, d = 0, matched = 0;

	(void)state;
	for (int i = 0; i < RSP_SW_DEPTH + 3; i++)
		rsp_sw__push(&f, 100000 - 100 * (sw_u64)i, (sw_u64)i, &un, &ov);
	assert_int_equal(ov, 3);
	for (int i = RSP_SW_DEPTH + 2; i >= 0; i--)
		matched += rsp_sw__pop(&f, 100000 - 100 * (sw_u64)i, 1000, &d, &un);
	assert_int_equal(matched, RSP_SW_DEPTH);
	assert_int_equal(un, 0);
	assert_int_equal(f.depth, 0);
}

/* System calls (stack pointer 0): an entry without its exit is counted. */
static void test_syscall(void **state)
{
	struct rsp_sw_frames f = {0};
	sw_u64 un = 0, ov = 0, d = 0;

	(void)state;
	rsp_sw__push(&f, 0, 1, &un, &ov);
	assert_true(rsp_sw__pop(&f, 0, 4, &d, &un));
	assert_int_equal(d, 3);
	rsp_sw__push(&f, 0, 5, &un, &ov);
	rsp_sw__push(&f, 0, 6, &un, &ov); /* the first never exited */
	assert_int_equal(un, 1);
	assert_true(rsp_sw__pop(&f, 0, 8, &d, &un));
	assert_int_equal(d, 2);
}

/* The kernel's buckets are the hist family's r=1 buckets. */
static void test_buckets(void **state)
{
	(void)state;
	for (int s = 0; s < 64; s++) {
		uint64_t v = 1ull << s;

		assert_int_equal(rsp_sw__bucket(v), rsp_hist__bucket(v, 1));
		assert_int_equal(rsp_sw__bucket(v - 1), rsp_hist__bucket(v - 1, 1));
		assert_int_equal(rsp_sw__bucket(v + 1), rsp_hist__bucket(v + 1, 1));
	}
	assert_int_equal(rsp_sw__bucket(UINT64_MAX), 64);
}

static uint64_t next_rand(uint64_t *x)
{
	*x ^= *x << 13;
	*x ^= *x >> 7;
	*x ^= *x << 17;
	return *x;
}

/*
 * Durations spread over three CPUs' stats, merged: count, sum, min, max
 * and the 128-bit sum of squares exact, the standard deviation equal to a
 * single Welford pass over all of them (and to a two-pass one), with
 * durations up to minutes so that the squares pass 2^64.
 */
static void test_merge_exact(void **state)
{
	struct rsp_sw_stat cpu[3];
	struct rsp_sw_total t = {0}, half = {0}, other = {0};
	unsigned __int128 sq = 0;
	double mean = 0, m2 = 0, sum2 = 0;
	uint64_t x = 88172645463325252ull, sum = 0, mn = UINT64_MAX, mx = 0;
	uint64_t v[3000];

	(void)state;
	memset(cpu, 0, sizeof(cpu));
	for (int i = 0; i < 3000; i++) {
		uint64_t d = i % 100 == 0 ? 60000000000ull + next_rand(&x) % 1000000000ull
					  : 3000000 + next_rand(&x) % 1000000;
		double delta;

		v[i] = d;
		rsp_sw__record(&cpu[next_rand(&x) % 3], d);
		sq += (unsigned __int128)d * d;
		sum += d;
		mn = d < mn ? d : mn;
		mx = d > mx ? d : mx;
		delta = (double)d - mean;
		mean += delta / (i + 1);
		m2 += delta * ((double)d - mean);
	}
	for (int c = 0; c < 3; c++)
		rsp_sw_total__add_stat(&t, &cpu[c]);
	assert_int_equal(t.count, 3000);
	assert_int_equal(t.sum, sum);
	assert_int_equal(t.min, mn);
	assert_int_equal(t.max, mx);
	assert_true(t.sumsq == sq);
	for (int i = 0; i < 3000; i++)
		sum2 += ((double)v[i] - mean) * ((double)v[i] - mean);
	assert_true(fabs(rsp_sw_total__stddev(&t) - sqrt(m2 / 3000)) <= 1e-9 * sqrt(m2 / 3000));
	assert_true(fabs(rsp_sw_total__stddev(&t) - sqrt(sum2 / 3000)) <= 1e-9 * sqrt(sum2 / 3000));
	assert_true(fabs(rsp_sw_total__mean(&t) - mean) <= 1e-9 * mean);
	/* merging totals (seconds, CPUs) in any grouping gives the same */
	rsp_sw_total__add_stat(&half, &cpu[0]);
	rsp_sw_total__add_stat(&other, &cpu[2]);
	rsp_sw_total__add_stat(&other, &cpu[1]);
	rsp_sw_total__merge(&half, &other);
	assert_memory_equal(&half, &t, sizeof(t));
}

/* An empty CPU does not pull the minimum to 0. */
static void test_merge_empty(void **state)
{
	struct rsp_sw_stat a = {0}, b = {0};
	struct rsp_sw_total t = {0};

	(void)state;
	rsp_sw__record(&b, 7);
	rsp_sw__record(&b, 9);
	rsp_sw_total__add_stat(&t, &a);
	rsp_sw_total__add_stat(&t, &b);
	assert_int_equal(t.min, 7);
	assert_int_equal(t.max, 9);
	assert_true(fabs(rsp_sw_total__stddev(&t) - 1.0) < 1e-12);
}

static int parse(const char *line, struct rsp_request *req, struct rsp_buf *err)
{
	static char buf[512]; /* the request's strings point into it */
	const char *argv[16];
	char *save = NULL;
	int argc = 0;

	snprintf(buf, sizeof(buf), "%s", line);
	for (char *t = strtok_r(buf, " ", &save); t && argc < 16; t = strtok_r(NULL, " ", &save))
		argv[argc++] = t;
	rsp_buf__reset(err);
	return rsp_request__parse(argc, argv, req, err);
}

static void test_request(void **state)
{
	struct rsp_request req;
	struct rsp_sw_request sw;
	struct rsp_sw_target t;
	struct rsp_buf err = RSP_BUF_INIT;

	(void)state;
	assert_int_equal(parse("stopwatch add /bin/x:work --pid 12 --name w1", &req, &err), 0);
	assert_int_equal(rsp_request__stopwatch(&req, &sw), 0);
	assert_int_equal(sw.op, RSP_SW_ADD);
	assert_int_equal(sw.pid, 12);
	rsp_request__exit(&req);
	assert_int_equal(parse("stopwatch show w1 --last 10s", &req, &err), 0);
	assert_int_equal(rsp_request__stopwatch(&req, &sw), 0);
	assert_int_equal(sw.op, RSP_SW_SHOW);
	assert_int_equal(sw.last_ns, 10000000000ull);
	rsp_request__exit(&req);
	assert_int_equal(parse("stopwatch add nocolon", &req, &err), -EINVAL);
	assert_non_null(strstr(err.data, "BINARY:SYMBOL"));
	assert_int_equal(parse("stopwatch add /bin/x:f --pid 3 --comm c", &req, &err), -EINVAL);
	assert_int_equal(parse("stopwatch rm", &req, &err), -EINVAL);
	assert_int_equal(parse("stopwatch list extra", &req, &err), -EINVAL);
	assert_int_equal(parse("stopwatch add /bin/x:f --name a/b", &req, &err), -EINVAL);
	assert_int_equal(parse("stopwatch frob", &req, &err), -EINVAL);
	assert_int_equal(parse("stopwatch list --last 5s", &req, &err), -EINVAL);
	assert_int_equal(parse("stopwatch add --start block:a --end block:b --key dev,sector "
			       "--where dev=3",
			       &req, &err),
			 0);
	assert_int_equal(rsp_request__stopwatch(&req, &sw), 0);
	assert_string_equal(sw.start, "block:a");
	assert_string_equal(sw.key, "dev,sector");
	assert_string_equal(sw.where, "dev=3");
	assert_null(sw.spec);
	rsp_request__exit(&req);
	assert_int_equal(parse("stopwatch add /bin/x:f --start a:b --end a:c --key k", &req, &err),
			 -EINVAL); /* a SPEC and a pair */
	assert_int_equal(parse("stopwatch add --start a:b --key k", &req, &err), -EINVAL);
	assert_int_equal(parse("stopwatch add /bin/x:f --where dev=1", &req, &err), -EINVAL);
	assert_int_equal(parse("stopwatch add --start nocolon --end a:b --key k", &req, &err),
			 -EINVAL);
	/* a pair of user functions: keyed by argN */
	assert_int_equal(
		parse("stopwatch add --start /bin/x:enq --end /bin/x:deq --key arg2", &req, &err),
		0);
	assert_int_equal(rsp_request__stopwatch(&req, &sw), 0);
	assert_int_equal(rsp_sw__user_key(sw.key), 2);
	rsp_request__exit(&req);
	assert_int_equal(rsp_sw__user_key("arg1"), 1);
	assert_int_equal(rsp_sw__user_key("arg6"), 6);
	assert_int_equal(rsp_sw__user_key("arg0"), 0);
	assert_int_equal(rsp_sw__user_key("arg12"), 0);
	assert_int_equal(rsp_sw__user_key("dev"), 0);
	assert_int_equal(
		parse("stopwatch add --start /bin/x:enq --end /bin/x:deq --key arg7", &req, &err),
		-EINVAL);
	assert_int_equal(
		parse("stopwatch add --start syscall:read --end /bin/x:deq --key arg1", &req, &err),
		-EINVAL);
	assert_int_equal(parse("stopwatch add --start /bin/x:enq --end /bin/x:deq --key arg1 "
			       "--where a=1",
			       &req, &err),
			 -EINVAL);
	assert_int_equal(rsp_sw_target__parse("syscall:read", &t, &err), 0);
	assert_int_equal(t.kind, RSP_SW_SYSCALL);
	assert_int_equal(rsp_sw_target__parse("/a:b:c", &t, &err), 0);
	assert_string_equal(t.object, "/a:b");
	assert_string_equal(t.symbol, "c");
	rsp_buf__exit(&err);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_nesting),	    cmocka_unit_test(test_recursion),
		cmocka_unit_test(test_longjmp),	    cmocka_unit_test(test_return_without_entry),
		cmocka_unit_test(test_too_deep),    cmocka_unit_test(test_syscall),
		cmocka_unit_test(test_buckets),	    cmocka_unit_test(test_merge_exact),
		cmocka_unit_test(test_merge_empty), cmocka_unit_test(test_request),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
