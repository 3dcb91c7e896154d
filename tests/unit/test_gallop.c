// SPDX-License-Identifier: GPL-2.0
/*
 * rsp_gallop__first_above(): the first element whose key is above a time,
 * searched from a hint, against a linear scan (the answer by construction),
 * for every hint and every time on arrays with runs of equal keys.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <cmocka.h>
#include "internal/gallop.h"

/* As the wait-for graph's waits: the key is not the first field. */
struct item {
	uint64_t start, end;
	uint32_t other;
};

static size_t linear(const struct item *v, size_t n, uint64_t t)
{
	size_t i = 0;

	while (i < n && v[i].end <= t)
		i++;
	return i;
}

static size_t search(const struct item *v, size_t n, size_t hint, uint64_t t)
{
	return rsp_gallop__first_above(n ? &v[0].end : NULL, sizeof(*v), n, hint, t);
}

/* Every hint (and some past the end) and every time around every key. */
static void check_all(const struct item *v, size_t n)
{
	uint64_t top = n ? v[n - 1].end + 2 : 3;

	for (size_t hint = 0; hint <= n + 2; hint++)
		for (uint64_t t = 0; t <= top; t++)
			assert_int_equal(search(v, n, hint, t), linear(v, n, t));
}

/* 1 3 3 3 5 8 8 13 ...: distinct keys and runs of equal ones. */
static void test_against_scan(void **state)
{
	struct item v[40];
	uint64_t k = 1;

	(void)state;
	for (size_t i = 0; i < 40; i++) {
		v[i] = (struct item){.start = k - 1, .end = k, .other = (uint32_t)i};
		if (i % 5 != 1 && i % 5 != 2)
			k += 1 + i % 4;
	}
	for (size_t n = 0; n <= 40; n++)
		check_all(v, n);
}

/* All keys equal: the answer is 0 below them, n at and above them. */
static void test_all_equal(void **state)
{
	struct item v[17];

	(void)state;
	for (size_t i = 0; i < 17; i++)
		v[i] = (struct item){.end = 10};
	for (size_t hint = 0; hint <= 17; hint++) {
		assert_int_equal(search(v, 17, hint, 9), 0);
		assert_int_equal(search(v, 17, hint, 10), 17);
		assert_int_equal(search(v, 17, hint, UINT64_MAX), 17);
	}
}

/* An empty array answers 0 whatever the hint. */
static void test_empty(void **state)
{
	(void)state;
	assert_int_equal(rsp_gallop__first_above(NULL, sizeof(struct item), 0, 0, 5), 0);
	assert_int_equal(rsp_gallop__first_above(NULL, sizeof(struct item), 0, 9, 5), 0);
}

/* A long array, far from the hint both ways (the steps, then the bisection). */
static void test_far(void **state)
{
	size_t n = 100000;
	struct item *v = malloc(n * sizeof(*v));

	(void)state;
	assert_non_null(v);
	for (size_t i = 0; i < n; i++)
		v[i] = (struct item){.end = 2 * (uint64_t)i + 2}; /* 2, 4, 6 ... */
	/* the first end above t = 2k + 1 is element k */
	for (size_t k = 0; k < n; k += 997) {
		assert_int_equal(search(v, n, 0, 2 * k + 1), k);
		assert_int_equal(search(v, n, n, 2 * k + 1), k);
		assert_int_equal(search(v, n, n / 2, 2 * k + 1), k);
		assert_int_equal(search(v, n, k, 2 * k + 2), k + 1);
	}
	assert_int_equal(search(v, n, 0, 2 * (uint64_t)n), n);
	assert_int_equal(search(v, n, n - 1, 0), 0);
	free(v);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_against_scan),
		cmocka_unit_test(test_all_equal),
		cmocka_unit_test(test_empty),
		cmocka_unit_test(test_far),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
