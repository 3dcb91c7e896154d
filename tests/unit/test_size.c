// SPDX-License-Identifier: GPL-2.0
/*
 * Unit tests of daemon/size.c: sizes in the form the options take, exact
 * for what was configured, rounded up for what rspd computed (issue 40:
 * the query-memory refusal named auto's limit as 538331008).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include "size.h"

static void test_exact(void **state)
{
	char b[32];

	(void)state;
	assert_string_equal(rspd_size__text(64ull << 20, false, b, sizeof(b)), "64M");
	assert_string_equal(rspd_size__text(1536ull << 10, false, b, sizeof(b)), "1536K");
	assert_string_equal(rspd_size__text(2ull << 30, false, b, sizeof(b)), "2G");
	assert_string_equal(rspd_size__text(1048577, false, b, sizeof(b)), "1048577");
	assert_string_equal(rspd_size__text(0, false, b, sizeof(b)), "0");
}

static void test_round_up(void **state)
{
	char b[32];

	(void)state;
	assert_string_equal(rspd_size__text(538331008, true, b, sizeof(b)), "514M");
	assert_string_equal(rspd_size__text(64ull << 20, true, b, sizeof(b)), "64M");
	assert_string_equal(rspd_size__text((3ull << 30) + 1, true, b, sizeof(b)), "3073M");
	assert_string_equal(rspd_size__text(1000, true, b, sizeof(b)), "1K");
	assert_string_equal(rspd_size__text(1048577, true, b, sizeof(b)), "2M");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_exact),
		cmocka_unit_test(test_round_up),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
