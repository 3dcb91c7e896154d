// SPDX-License-Identifier: GPL-2.0
/* Unit tests of daemon/sbq.c: the drain's side-band queue (one producer,
 * one consumer, no lock). */
#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include "sbq.h"

struct rec {
	struct perf_event_header h;
	uint64_t seq;
	uint64_t pad[6];
};

static struct rec make(uint64_t seq, unsigned words)
{
	struct rec r;

	memset(&r, 0, sizeof(r));
	r.h.type = PERF_RECORD_COMM;
	r.h.size = (uint16_t)(16 + 8 * (words % 7));
	r.seq = seq;
	return r;
}

struct seen {
	uint64_t next, bad;
	uint64_t last_time;
};

static void check(void *ctx, uint64_t time, const struct perf_event_header *h)
{
	struct seen *s = ctx;
	const struct rec *r = (const void *)h;

	if (r->seq != s->next || time != r->seq * 10 || h->size != 16 + 8 * (r->seq % 7))
		s->bad++;
	s->next = r->seq + 1;
}

static void test_order_and_wrap(void **state)
{
	struct rsp_sbq q;
	struct seen s = {0};
	uint64_t seq = 0;

	assert_int_equal(rsp_sbq__init(&q, 1000), 0);
	assert_int_equal(q.size, 4096);
	/* Many rounds of a few records: the ring wraps many times. */
	for (int round = 0; round < 2000; round++) {
		for (int i = 0; i < 7; i++, seq++) {
			struct rec r = make(seq, (unsigned)seq);

			assert_int_equal(rsp_sbq__push(&q, seq * 10, &r.h), 0);
		}
		assert_int_equal(rsp_sbq__pop(&q, check, &s), 7);
	}
	assert_int_equal(s.bad, 0);
	assert_int_equal(s.next, seq);
	assert_int_equal(atomic_load(&q.dropped), 0);
	rsp_sbq__exit(&q);
}

static void test_full_drops_and_counts(void **state)
{
	struct rsp_sbq q;
	struct seen s = {0};
	size_t pushed = 0, bytes = 0;

	assert_int_equal(rsp_sbq__init(&q, 4096), 0);
	for (uint64_t i = 0; i < 1000; i++) {
		struct rec r = make(i, (unsigned)i);

		if (rsp_sbq__push(&q, i * 10, &r.h))
			break;
		pushed++;
		bytes += 8 + r.h.size;
	}
	/* Full: nearly every byte used, the rest too small for the next entry. */
	assert_true(bytes <= 4096 && bytes > 4096 - 8 - 64);
	assert_int_equal(atomic_load(&q.dropped), 1);
	assert_int_equal(rsp_sbq__pop(&q, check, &s), (size_t)pushed);
	assert_int_equal(s.bad, 0);
	assert_int_equal(rsp_sbq__pop(&q, check, &s), 0);
	rsp_sbq__exit(&q);
}

#define N_CONCURRENT 200000

static void *producer(void *arg)
{
	struct rsp_sbq *q = arg;

	for (uint64_t i = 0; i < N_CONCURRENT;) {
		struct rec r = make(i, (unsigned)i);

		if (!rsp_sbq__push(q, i * 10, &r.h))
			i++;
		else
			atomic_fetch_sub(&q->dropped, 1); /* retry: nothing is lost here */
	}
	return NULL;
}

static void test_concurrent(void **state)
{
	struct rsp_sbq q;
	struct seen s = {0};
	pthread_t t;

	assert_int_equal(rsp_sbq__init(&q, 8192), 0);
	assert_int_equal(pthread_create(&t, NULL, producer, &q), 0);
	while (s.next < N_CONCURRENT)
		rsp_sbq__pop(&q, check, &s);
	pthread_join(t, NULL);
	assert_int_equal(s.bad, 0);
	assert_int_equal(s.next, N_CONCURRENT);
	rsp_sbq__exit(&q);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_order_and_wrap),
		cmocka_unit_test(test_full_drops_and_counts),
		cmocka_unit_test(test_concurrent),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
