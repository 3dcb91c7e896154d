// SPDX-License-Identifier: GPL-2.0
/*
 * `stopwatch show --callers` without the kernel: the merge of symbolized
 * caller stacks (lib/analysis/sw_callers.c), its bound, its ranking, the
 * text and JSON it renders into (lib/format/sw_render.c), and the
 * --callers options' parsing. e2e test_stopwatch_callers runs the kernel's
 * side with a workload of known callers.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include <jansson.h>
#include <rsp/query.h>
#include <rsp/stopwatch.h>
#include <rsp/sw_request.h>
#include <rsp/sw_render.h>

static const char *const A[] = {"caller_a", "main", "__libc_start_call_main"};
static const char *const B[] = {"caller_b", "main", "__libc_start_call_main"};
static const char *const OBJ[] = {"/bin/w", "/bin/w", "/lib/libc.so.6"};

/* Rows with the same frames are one, whatever process or stack id they came from. */
static void test_merge(void **state)
{
	struct rsp_sw_callers *c = rsp_sw_callers__new(16);
	const struct rsp_sw_caller_row *r;

	(void)state;
	assert_non_null(c);
	assert_int_equal(rsp_sw_callers__add(c, A, OBJ, 3, 100, 1000), 0);
	assert_int_equal(rsp_sw_callers__add(c, B, OBJ, 3, 100, 500), 0);
	assert_int_equal(rsp_sw_callers__add(c, A, OBJ, 3, 200, 2000), 0); /* another pid */
	assert_int_equal(rsp_sw_callers__rows(c), 2);
	assert_int_equal(rsp_sw_callers__calls(c), 400);
	rsp_sw_callers__sort(c);
	r = rsp_sw_callers__row(c, 0);
	assert_int_equal(r->count, 300);
	assert_int_equal(r->sum, 3000);
	assert_int_equal(r->nframes, 3);
	assert_string_equal(r->names[0], "caller_a");
	assert_string_equal(r->objects[2], "/lib/libc.so.6");
	assert_string_equal(rsp_sw_callers__row(c, 1)->names[0], "caller_b");
	assert_null(rsp_sw_callers__row(c, 2));
	rsp_sw_callers__delete(c);
	rsp_sw_callers__delete(NULL);
}

/* Frames differ by name, by object, by a NULL object, or by depth: distinct rows. */
static void test_distinct(void **state)
{
	static const char *const other_obj[] = {"/bin/v", "/bin/w", "/lib/libc.so.6"};
	static const char *const null_obj[] = {NULL, "/bin/w", "/lib/libc.so.6"};
	static const char *const unknown[] = {NULL, NULL};
	static const char *const unknown2[] = {"[unknown]", "[unknown]"};
	struct rsp_sw_callers *c = rsp_sw_callers__new(16);

	(void)state;
	assert_int_equal(rsp_sw_callers__add(c, A, OBJ, 3, 1, 1), 0);
	assert_int_equal(rsp_sw_callers__add(c, A, other_obj, 3, 1, 1), 0);
	assert_int_equal(rsp_sw_callers__add(c, A, null_obj, 3, 1, 1), 0);
	assert_int_equal(rsp_sw_callers__add(c, A, OBJ, 2, 1, 1), 0);
	assert_int_equal(rsp_sw_callers__add(c, A, NULL, 3, 1, 1), 0); /* no objects: all NULL */
	assert_int_equal(rsp_sw_callers__add(c, A, null_obj, 3, 1, 1), 0);
	assert_int_equal(rsp_sw_callers__rows(c), 5);
	/* a NULL name is "[unknown]": the same row as one named so */
	assert_int_equal(rsp_sw_callers__add(c, unknown, NULL, 2, 1, 1), 0);
	assert_int_equal(rsp_sw_callers__add(c, unknown2, NULL, 2, 1, 1), 0);
	assert_int_equal(rsp_sw_callers__rows(c), 6);
	/* an empty stack is a row of its own */
	assert_int_equal(rsp_sw_callers__add(c, NULL, NULL, 0, 4, 4), 0);
	assert_int_equal(rsp_sw_callers__add(c, NULL, NULL, 0, 4, 4), 0);
	assert_int_equal(rsp_sw_callers__rows(c), 7);
	rsp_sw_callers__sort(c);
	assert_int_equal(rsp_sw_callers__row(c, 0)->count, 8);
	assert_int_equal(rsp_sw_callers__row(c, 0)->nframes, 0);
	rsp_sw_callers__delete(c);
}

/* The bound: a new row beyond it is refused and its calls counted, old rows still grow. */
static void test_bound(void **state)
{
	struct rsp_sw_callers *c = rsp_sw_callers__new(1);

	(void)state;
	assert_int_equal(rsp_sw_callers__add(c, A, OBJ, 3, 5, 50), 0);
	assert_int_equal(rsp_sw_callers__add(c, B, OBJ, 3, 7, 70), -ENOSPC);
	assert_int_equal(rsp_sw_callers__add(c, A, OBJ, 3, 1, 10), 0);
	assert_int_equal(rsp_sw_callers__rows(c), 1);
	assert_int_equal(rsp_sw_callers__calls(c), 6);
	assert_int_equal(rsp_sw_callers__dropped(c), 7);
	rsp_sw_callers__delete(c);
}

/* Ties: more time first, then the frames' names; many rows grow the table. */
static void test_sort(void **state)
{
	struct rsp_sw_callers *c = rsp_sw_callers__new(1000);
	char name[32];

	(void)state;
	for (int i = 0; i < 100; i++) {
		const char *f[1] = {name};

		snprintf(name, sizeof(name), "f%03d", i);
		assert_int_equal(
			rsp_sw_callers__add(c, f, NULL, 1, (uint64_t)(i % 10), (uint64_t)(i % 7)),
			0);
	}
	assert_int_equal(rsp_sw_callers__rows(c), 100);
	rsp_sw_callers__sort(c);
	for (size_t i = 1; i < 100; i++) {
		const struct rsp_sw_caller_row *p = rsp_sw_callers__row(c, i - 1),
					       *q = rsp_sw_callers__row(c, i);

		assert_true(p->count > q->count || (p->count == q->count && p->sum > q->sum) ||
			    (p->count == q->count && p->sum == q->sum &&
			     strcmp(p->names[0], q->names[0]) < 0));
	}
	rsp_sw_callers__delete(c);
}

static void view(struct rsp_sw_view *v, const struct rsp_sw_callers *c)
{
	memset(v, 0, sizeof(*v));
	snprintf(v->name, sizeof(v->name), "work");
	snprintf(v->spec, sizeof(v->spec), "/bin/w:work");
	v->pid = -1;
	v->since_added = true;
	v->total.count = 400;
	v->total.sum = 4000;
	v->total.min = 5;
	v->total.max = 20;
	v->total.buckets[4] = 400;
	v->total.callers_lost = 50; /* of 500: shares are of all calls seen */
	v->callers_on = true;
	v->callers_max = 64;
	v->callers = c;
	v->callers_top = 1;
}

static void test_render(void **state)
{
	struct rsp_sw_callers *c = rsp_sw_callers__new(16);
	struct rsp_buf out = RSP_BUF_INIT;
	struct rsp_sw_view v;
	json_t *o, *s, *rows, *r;

	(void)state;
	rsp_sw_callers__add(c, A, OBJ, 3, 300, 3000);
	rsp_sw_callers__add(c, B, OBJ, 3, 150, 1000);
	rsp_sw_callers__sort(c);
	view(&v, c);
	assert_int_equal(rsp_sw__render_show(&v, 1, false, &out), 0);
	assert_non_null(strstr(out.data, "top 1 of 2 stacks"));
	assert_non_null(strstr(out.data, "caller_a"));
	assert_null(strstr(out.data, "caller_b"));		 /* --top 1 */
	assert_non_null(strstr(out.data, "60.0%"));		 /* 300 of 500 */
	assert_non_null(strstr(out.data, "unknown caller: 50")); /* the lost ones, shown */
	rsp_buf__reset(&out);
	v.callers_top = 10;
	assert_int_equal(rsp_sw__render_show(&v, 1, true, &out), 0);
	o = json_loads(out.data, 0, NULL);
	assert_non_null(o);
	s = json_array_get(json_object_get(o, "stopwatches"), 0);
	rows = json_object_get(s, "callers");
	assert_int_equal(json_array_size(rows), 2);
	r = json_array_get(rows, 1);
	assert_int_equal(json_integer_value(json_object_get(r, "count")), 150);
	assert_true(json_real_value(json_object_get(r, "share")) == 0.3);
	assert_string_equal(json_string_value(json_object_get(
				    json_array_get(json_object_get(r, "frames"), 0), "function")),
			    "caller_b");
	assert_int_equal(json_integer_value(json_object_get(s, "callers_lost")), 50);
	json_decref(o);
	/* a stopwatch added without --callers says so, in both forms */
	v.callers_on = false;
	rsp_buf__reset(&out);
	assert_int_equal(rsp_sw__render_show(&v, 1, false, &out), 0);
	assert_non_null(strstr(out.data, "added without --callers"));
	rsp_buf__reset(&out);
	assert_int_equal(rsp_sw__render_show(&v, 1, true, &out), 0);
	o = json_loads(out.data, 0, NULL);
	s = json_array_get(json_object_get(o, "stopwatches"), 0);
	assert_true(json_is_false(json_object_get(s, "callers_taken")));
	assert_null(json_object_get(s, "callers"));
	json_decref(o);
	rsp_buf__exit(&out);
	rsp_sw_callers__delete(c);
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
	struct rsp_buf err = RSP_BUF_INIT;

	(void)state;
	assert_int_equal(parse("stopwatch add /bin/x:f --callers --callers-max 7", &req, &err), 0);
	assert_int_equal(rsp_request__stopwatch(&req, &sw), 0);
	assert_true(sw.callers);
	assert_int_equal(sw.callers_max, 7);
	rsp_request__exit(&req);
	assert_int_equal(parse("stopwatch show w --callers --top 3", &req, &err), 0);
	assert_int_equal(rsp_request__stopwatch(&req, &sw), 0);
	assert_true(sw.callers);
	assert_int_equal(sw.top, 3);
	rsp_request__exit(&req);
	assert_int_equal(parse("stopwatch show --callers", &req, &err), 0);
	rsp_request__exit(&req);
	assert_int_equal(parse("stopwatch add /bin/x:f --callers-max 7", &req, &err), -EINVAL);
	assert_int_equal(parse("stopwatch add /bin/x:f --callers --callers-max 0", &req, &err),
			 -EINVAL);
	assert_int_equal(parse("stopwatch show --top 3", &req, &err), -EINVAL);
	assert_int_equal(parse("stopwatch show --callers --last 2s", &req, &err), -EINVAL);
	assert_int_equal(parse("stopwatch list --callers", &req, &err), -EINVAL);
	assert_int_equal(parse("stopwatch rm w --callers", &req, &err), -EINVAL);
	assert_int_equal(parse("stopwatch add --start a:b --end a:c --key k --callers", &req, &err),
			 -EINVAL);
	assert_non_null(strstr(err.data, "keyed pair"));
	rsp_buf__exit(&err);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_merge),  cmocka_unit_test(test_distinct),
		cmocka_unit_test(test_bound),  cmocka_unit_test(test_sort),
		cmocka_unit_test(test_render), cmocka_unit_test(test_request),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
