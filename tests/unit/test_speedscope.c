// SPDX-License-Identifier: GPL-2.0
/*
 * Unit tests of the speedscope writer (lib/format/speedscope.c): frames
 * shared by name (escaped), evented and sampled profiles in the order
 * written, and a writer that is finished with nothing in it.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>
#include <jansson.h>
#include "internal/speedscope.h"

static json_t *finish(struct rsp_sscope *w, const char *name)
{
	struct rsp_buf out = RSP_BUF_INIT;
	json_error_t e;
	json_t *j;

	assert_int_equal(rsp_sscope__finish(w, name, &out), 0);
	j = json_loads(out.data, 0, &e);
	if (!j)
		fail_msg("not JSON (%s): %s", e.text, out.data);
	rsp_buf__exit(&out);
	return j;
}

static void test_profiles(void **state)
{
	struct rsp_sscope w;
	int a, b, q, st[2];
	json_t *j, *p, *fr;

	rsp_sscope__init(&w);
	a = rsp_sscope__frame(&w, "main");
	b = rsp_sscope__frame(&w, "read;\"x\"\n");
	assert_int_equal(a, 0);
	assert_int_equal(b, 1);
	assert_int_equal(rsp_sscope__frame(&w, "main"), 0); /* shared by name */
	rsp_sscope__evented(&w, "t 1", "nanoseconds", 0, 100);
	rsp_sscope__event(&w, 'O', a, 0);
	rsp_sscope__event(&w, 'O', b, 10);
	rsp_sscope__event(&w, 'C', b, 20);
	rsp_sscope__event(&w, 'C', a, 100);
	rsp_sscope__sampled(&w, "consolidated", "microseconds", 0, 7);
	q = rsp_sscope__frame(&w, "spin");
	st[0] = a;
	st[1] = q;
	rsp_sscope__sample(&w, st, 2, 5);
	rsp_sscope__sample(&w, st, 1, 2);
	rsp_sscope__event(&w, 'O', a, 0); /* not in an evented profile: nothing */
	j = finish(&w, "n");
	assert_string_equal(json_string_value(json_object_get(j, "$schema")),
			    "https://www.speedscope.app/file-format-schema.json");
	fr = json_object_get(json_object_get(j, "shared"), "frames");
	assert_int_equal(json_array_size(fr), 3);
	assert_string_equal(json_string_value(json_object_get(json_array_get(fr, 1), "name")),
			    "read;\"x\"\n");
	p = json_array_get(json_object_get(j, "profiles"), 0);
	assert_string_equal(json_string_value(json_object_get(p, "type")), "evented");
	assert_int_equal(json_array_size(json_object_get(p, "events")), 4);
	assert_int_equal(json_integer_value(json_object_get(
				 json_array_get(json_object_get(p, "events"), 1), "at")),
			 10);
	p = json_array_get(json_object_get(j, "profiles"), 1);
	assert_string_equal(json_string_value(json_object_get(p, "type")), "sampled");
	assert_string_equal(json_string_value(json_object_get(p, "unit")), "microseconds");
	assert_int_equal(json_array_size(json_object_get(p, "samples")), 2);
	assert_int_equal(json_array_size(json_array_get(json_object_get(p, "samples"), 0)), 2);
	assert_int_equal(json_integer_value(json_array_get(json_object_get(p, "weights"), 0)), 5);
	assert_int_equal(json_integer_value(json_array_get(json_object_get(p, "weights"), 1)), 2);
	assert_int_equal(json_integer_value(json_object_get(p, "endValue")), 7);
	assert_int_equal(json_array_size(json_object_get(j, "profiles")), 2);
	json_decref(j);
}

static void test_empty(void **state)
{
	struct rsp_sscope w;
	json_t *j;

	rsp_sscope__init(&w);
	j = finish(&w, "nothing");
	assert_int_equal(json_array_size(json_object_get(j, "profiles")), 0);
	assert_int_equal(json_array_size(json_object_get(json_object_get(j, "shared"), "frames")),
			 0);
	json_decref(j);
	rsp_sscope__init(&w);
	rsp_sscope__frame(&w, "x");
	rsp_sscope__exit(&w); /* an error path: frees without writing */
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_profiles),
		cmocka_unit_test(test_empty),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
