// SPDX-License-Identifier: GPL-2.0
/*
 * Unit tests of daemon/membudget.c (a query's memory budget) and of
 * daemon/malloc.c, rspd's allocator that counts against it: both are
 * compiled into this test, so its own malloc, calloc, realloc and free are
 * rspd's, as they are for librsp and jansson inside rspd.
 */
#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include "membudget.h"

#define KiB 1024ull
#define MiB (1024ull * 1024)

static void test_charge(void **state)
{
	struct rspd_membudget b = {.limit = 1000};

	assert_true(rspd_membudget__charge(&b, 600));
	assert_false(rspd_membudget__charge(&b, 401));
	assert_true(b.exceeded);
	assert_int_equal(b.refused, 401);
	assert_int_equal(b.used, 600); /* a refusal counts nothing */
	assert_true(rspd_membudget__charge(&b, 400));
	assert_false(rspd_membudget__charge(&b, 1));
	assert_int_equal(b.refused, 401); /* the first refusal is the one kept */
	rspd_membudget__adjust(&b, -1000);
	assert_int_equal(b.used, 0);
	assert_int_equal(b.peak, 1000);
	assert_false(rspd_membudget__charge(&b, SIZE_MAX));
	/* Freed blocks allocated before: below zero, and room for as much more. */
	rspd_membudget__adjust(&b, -500);
	assert_true(rspd_membudget__charge(&b, 1500));
	assert_int_equal(b.peak, 1000);
}

static void test_no_limit(void **state)
{
	struct rspd_membudget b = {.limit = 0};

	assert_true(rspd_membudget__charge(&b, SIZE_MAX / 2));
	assert_false(b.exceeded);
}

/* The thread's allocations count against its budget, and fail over it. */
static void test_malloc_counts(void **state)
{
	struct rspd_membudget b;
	void *small, *big;
	int64_t used;

	assert_null(rspd_membudget__current());
	rspd_membudget__begin(&b, 1 * MiB);
	assert_ptr_equal(rspd_membudget__current(), &b);
	small = malloc(512 * KiB);
	used = b.used;
	errno = 0;
	big = malloc(600 * KiB);
	rspd_membudget__end();

	assert_non_null(small);
	assert_true(used >= (int64_t)(512 * KiB));
	assert_null(big);
	assert_int_equal(errno, ENOMEM);
	assert_true(b.exceeded);
	assert_null(rspd_membudget__current());
	/* Not counting any more: the same allocation succeeds. */
	big = malloc(600 * KiB);
	assert_non_null(big);
	free(big);
	free(small);
	assert_int_equal(b.used, used); /* freed after the end: not counted */
}

static void test_free_uncounts(void **state)
{
	struct rspd_membudget b;
	void *p, *q;

	rspd_membudget__begin(&b, 1 * MiB);
	p = calloc(1, 700 * KiB);
	free(p);
	q = calloc(1, 700 * KiB); /* fits again once the first is freed */
	free(q);
	rspd_membudget__end();
	assert_non_null(p);
	assert_non_null(q);
	assert_false(b.exceeded);
	assert_int_equal(b.used, 0);
	assert_true(b.peak >= 700 * KiB && b.peak < 800 * KiB);
}

/* A refused realloc leaves the block as it was, as realloc must. */
static void test_realloc_refused(void **state)
{
	struct rspd_membudget b;
	char *p, *q, *r;

	rspd_membudget__begin(&b, 1 * MiB);
	p = malloc(100 * KiB);
	if (p)
		memset(p, 'x', 100 * KiB);
	q = realloc(p, 2 * MiB);
	r = q ? NULL : realloc(p, 300 * KiB);
	rspd_membudget__end();
	assert_non_null(p);
	assert_null(q);
	assert_true(b.exceeded);
	assert_non_null(r);
	assert_true(r[0] == 'x' && r[100 * KiB - 1] == 'x');
	assert_true(b.used >= (int64_t)(300 * KiB) && b.used < (int64_t)(400 * KiB));
	/* A realloc to 0 bytes frees the block (glibc): uncounted. */
	rspd_membudget__begin(&b, 1 * MiB);
	r = realloc(r, 0);
	rspd_membudget__end();
	free(r);
	assert_true(b.used < 0);
}

static void *alloc_4m(void *arg)
{
	void *p = malloc(4 * MiB);
	bool ok = p != NULL;

	free(p);
	return ok ? arg : NULL;
}

/* The budget is the thread's: another thread allocates freely meanwhile. */
static void test_other_thread(void **state)
{
	struct rspd_membudget b;
	pthread_t t;
	void *ret = NULL, *mine;

	rspd_membudget__begin(&b, 1 * MiB);
	mine = malloc(4 * MiB);
	assert_int_equal(pthread_create(&t, NULL, alloc_4m, &b), 0);
	pthread_join(t, &ret);
	rspd_membudget__end();
	assert_null(mine);
	assert_ptr_equal(ret, &b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_charge),		cmocka_unit_test(test_no_limit),
		cmocka_unit_test(test_malloc_counts),	cmocka_unit_test(test_free_uncounts),
		cmocka_unit_test(test_realloc_refused), cmocka_unit_test(test_other_thread),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
