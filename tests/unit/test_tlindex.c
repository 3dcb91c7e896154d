// SPDX-License-Identifier: GPL-2.0
/*
 * The timeline store's lookup indexes (lib/timeline/tlindex.c), built at
 * seal: each CPU's run ends sorted by a radix sort, and the wakeups by
 * waker sorted by a stable radix sort. Stores are filled through the
 * store's own timeline callbacks; every answer is checked against a
 * brute-force scan of what was fed, for spans and tids that take every
 * number of radix passes (odd and even: the result ends in either array).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include <rsp/tlstore.h>

#define NCPU 3
#define NTHR 17
#define NRUN 40

static uint64_t lcg(uint64_t *x)
{
	*x = *x * 6364136223846793005ull + 1442695040888963407ull;
	return *x >> 11;
}

struct run {
	uint32_t cpu;
	uint64_t end;
};

/* The latest end on @cpu at or before @t, by scanning every run. */
static uint64_t brute_last(const struct run *v, size_t n, uint32_t cpu, uint64_t t)
{
	uint64_t best = 0;

	for (size_t i = 0; i < n; i++)
		if (v[i].cpu == cpu && v[i].end <= t && v[i].end > best)
			best = v[i].end;
	return best;
}

/*
 * Runs of NTHR threads fed thread by thread (each in time order, as the
 * timeline emits them per thread), over @span ns from @base.
 */
static void check_runs(uint64_t base, uint64_t span)
{
	struct rsp_tlstore *s = rsp_tlstore__new(0);
	struct rsp_timeline_ops ops;
	struct run *v = calloc(NTHR * NRUN, sizeof(*v));
	uint64_t x = span;
	size_t n = 0;

	assert_non_null(s);
	assert_non_null(v);
	rsp_tlstore__ops(&ops);
	for (uint32_t tid = 1; tid <= NTHR; tid++) {
		uint64_t t = base;

		for (int k = 0; k < NRUN; k++) {
			struct rsp_segment g;

			memset(&g, 0, sizeof(g));
			g.tid = g.tgid = tid;
			g.kind = RSP_SEG_RUN;
			g.cpu = (uint32_t)(lcg(&x) % NCPU);
			g.start = t + lcg(&x) % (span / NRUN / 2 + 1);
			g.end = g.start + lcg(&x) % (span / NRUN / 2 + 1);
			t = g.end;
			ops.segment(s, &g, "t");
			v[n++] = (struct run){g.cpu, g.end};
		}
	}
	assert_int_equal(rsp_tlstore__seal(s, base, base + span + 1), 0);
	for (size_t i = 0; i < n; i++)
		for (uint32_t c = 0; c < NCPU; c++)
			for (int d = -1; d <= 1; d++) {
				uint64_t q = v[i].end + (uint64_t)(int64_t)d;

				assert_int_equal(rsp_tlstore__last_run_end(s, c, q),
						 brute_last(v, n, c, q));
			}
	for (uint32_t c = 0; c <= NCPU; c++) {
		assert_int_equal(rsp_tlstore__last_run_end(s, c, 0), 0);
		assert_int_equal(rsp_tlstore__last_run_end(s, c, UINT64_MAX),
				 brute_last(v, n, c, UINT64_MAX));
	}
	free(v);
	rsp_tlstore__delete(s);
}

/* Spans of 1, 2, 3 and 4 passes of 11 bits. */
static void test_run_ends(void **state)
{
	(void)state;
	check_runs(1000, 1500);
	check_runs(1ull << 40, 3000000);
	check_runs(5, 5000000000ull);
	check_runs(77, 20000000000ull);
}

#define NWAKE 600

/*
 * Wakeups in time order by wakers among @nw ids from @lo (every @stride):
 * wakes_by() of each gives its wakeups in time order; an exec and a
 * wakeup by an irq are not among them.
 */
static void check_wakes(uint32_t lo, uint32_t stride, uint32_t nw)
{
	struct rsp_tlstore *s = rsp_tlstore__new(0);
	struct rsp_timeline_ops ops;
	struct rsp_link *v = calloc(NWAKE, sizeof(*v));
	uint64_t x = lo;

	assert_non_null(s);
	assert_non_null(v);
	rsp_tlstore__ops(&ops);
	for (int i = 0; i < NWAKE; i++) {
		struct rsp_link *l = &v[i];

		l->kind = i % 50 == 7 ? RSP_LINK_EXEC : RSP_LINK_WAKEUP;
		l->tid = 1 + (uint32_t)(lcg(&x) % 100);
		l->time = 1000 + (uint64_t)i * 10;
		l->from.kind = i % 40 == 3 ? RSP_WAKER_IRQ : RSP_WAKER_THREAD;
		l->from.id = lo + stride * (uint32_t)(lcg(&x) % nw);
		ops.link(s, l);
	}
	assert_int_equal(rsp_tlstore__seal(s, 0, 100000), 0);
	for (uint32_t w = 0; w < nw; w++) {
		uint32_t id = lo + stride * w;
		size_t n, k = 0;
		const struct rsp_wake *got = rsp_tlstore__wakes_by(s, id, &n);

		for (int i = 0; i < NWAKE; i++) {
			if (v[i].kind == RSP_LINK_EXEC || v[i].from.kind != RSP_WAKER_THREAD ||
			    v[i].from.id != id)
				continue;
			assert_true(k < n);
			assert_int_equal(got[k].time, v[i].time);
			assert_int_equal(got[k].waker, id);
			assert_int_equal(got[k].tid, v[i].tid);
			k++;
		}
		assert_int_equal(k, n);
	}
	free(v);
	rsp_tlstore__delete(s);
}

/* Waker tids of 1, 2 and 3 passes of 11 bits. */
static void test_wakes_by(void **state)
{
	(void)state;
	check_wakes(1, 3, 40);
	check_wakes(3000, 977, 40);
	check_wakes(4000000, 100003, 40);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_run_ends),
		cmocka_unit_test(test_wakes_by),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
