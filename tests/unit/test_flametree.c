// SPDX-License-Identifier: GPL-2.0
/*
 * rsp_flametree: folded stacks whose tree, kinds and budget are known by
 * construction, read back from the JSON d3-flame-graph gets.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include <jansson.h>
#include <rsp/flametree.h>

static json_t *tree_of(const char *folded, size_t max, struct rsp_flametree_stats *st)
{
	struct rsp_flametree *t = rsp_flametree__new("app 42", max);
	struct rsp_buf out = RSP_BUF_INIT, err = RSP_BUF_INIT;
	json_t *j;

	assert_non_null(t);
	assert_int_equal(rsp_flametree__add_folded(t, folded, strlen(folded), &err), 0);
	assert_int_equal(rsp_flametree__render_json(t, &out), 0);
	rsp_flametree__stats(t, st);
	j = json_loads(out.data, 0, NULL);
	assert_non_null(j);
	rsp_flametree__delete(t);
	rsp_buf__exit(&out);
	rsp_buf__exit(&err);
	return j;
}

static json_t *child(json_t *n, const char *name)
{
	size_t i;
	json_t *c;

	json_array_foreach (json_object_get(n, "children"), i, c)
		if (!strcmp(json_string_value(json_object_get(c, "name")), name))
			return c;
	fail_msg("no frame %s", name);
	return NULL;
}

static long long value(json_t *n)
{
	return json_integer_value(json_object_get(n, "value"));
}

static const char *kind(json_t *n)
{
	return json_string_value(json_object_get(n, "kind"));
}

/* Totals add up the tree; the kind of a frame is that of most of its time. */
static void test_tree(void **state)
{
	struct rsp_flametree_stats st;
	json_t *r = tree_of("app 42;main;burn 700\n"
			    "app 42;main;work;[sleep:timeout];[timer] 200\n"
			    "app 42;main;work;[sleep:block_io];[disk 8:0 queue] 50\n"
			    "app 42;[runnable] 30\n"
			    "app 42;[unknown] 20\n",
			    100, &st);
	json_t *app = child(r, "app 42"), *main_ = child(app, "main"), *work = child(main_, "work");

	assert_int_equal(value(r), 1000);
	assert_string_equal(kind(app), "running"); /* 70% */
	assert_int_equal(value(app), 1000);
	assert_int_equal(value(main_), 950);
	assert_int_equal(value(child(main_, "burn")), 700);
	assert_string_equal(kind(child(main_, "burn")), "running");
	assert_int_equal(value(work), 250);
	assert_string_equal(kind(work), "timer");
	assert_string_equal(kind(child(child(work, "[sleep:block_io]"), "[disk 8:0 queue]")),
			    "block_io");
	assert_string_equal(kind(child(app, "[runnable]")), "runnable");
	assert_string_equal(kind(child(app, "[unknown]")), "unknown");

	assert_int_equal(st.stacks, 5);
	assert_int_equal(st.stacks_left_out, 0);
	assert_int_equal(st.total, 1000);
	assert_int_equal(st.frames, 11);
	json_decref(r);
}

/* 60% running, 40% timer: neither two thirds, the frame is mixed. */
static void test_mixed(void **state)
{
	struct rsp_flametree_stats st;
	json_t *r = tree_of("p;a;f 60\np;a;[sleep:sleep];[timer] 40\n", 100, &st);

	assert_string_equal(kind(child(child(r, "p"), "a")), "mixed");
	assert_string_equal(kind(child(child(child(r, "p"), "a"), "f")), "running");
	json_decref(r);
}

static void test_kinds(void **state)
{
	static const struct {
		const char *frames;
		enum rsp_flame_kind k;
	} cases[] = {
		{"a;b;f", RSP_FK_RUNNING},
		{"a;f_[k]", RSP_FK_RUNNING},
		{"a;[running, not sampled]", RSP_FK_RUNNING},
		{"a;[preempted]", RSP_FK_RUNNABLE},
		{"a;read;[sleep:network];[other path: b 3]", RSP_FK_NETWORK},
		{"a;[sleep:lock];b 3;[runnable]", RSP_FK_RUNNABLE},
		{"a;[sleep:lock];b 3;spin", RSP_FK_RUNNING},
		{"a;[sleep:lock];[not followed: b 3]", RSP_FK_LOCK},
		{"a;[sleep:sleep];[timer]", RSP_FK_TIMER},
		{"a;[sleep:pipe];[b 3]", RSP_FK_OTHER},
		{"a;[sleep:unknown];[?]", RSP_FK_UNKNOWN},
		{"a;[whatever]", RSP_FK_OTHER},
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		assert_int_equal(rsp_flametree__kind_of(cases[i].frames, strlen(cases[i].frames)),
				 cases[i].k);
	assert_string_equal(rsp_flame_kind__name(RSP_FK_BLOCK_IO), "block_io");
}

/* A budget of 6 frames: the heaviest stacks stay, the rest is one frame, the total kept. */
static void test_budget(void **state)
{
	struct rsp_flametree_stats st;
	json_t *r = tree_of("a;x 1\na;b;c 100\na;y 2\na;b;d 50\n", 6, &st);
	json_t *a = child(r, "a"), *left = child(r, "[2 lighter stacks left out]");

	assert_int_equal(value(r), 153);
	assert_int_equal(value(a), 150);
	assert_int_equal(value(child(child(a, "b"), "c")), 100);
	assert_int_equal(value(left), 3);
	assert_string_equal(kind(left), "left_out");
	assert_int_equal(st.stacks_left_out, 2);
	assert_int_equal(st.left_out, 3);
	assert_int_equal(st.frames, 6);
	json_decref(r);
}

/* Bad lines are named; '/' is escaped (the JSON sits in a <script>); odd bytes survive. */
static void test_input(void **state)
{
	struct rsp_flametree *t = rsp_flametree__new("r", 10);
	struct rsp_buf out = RSP_BUF_INIT, err = RSP_BUF_INIT;
	const char bad[] = "a;b 1\na;b\n";
	const char odd[] = "</script>;\xff\xfe 3";

	assert_int_equal(rsp_flametree__add_folded(t, bad, strlen(bad), &err), -EINVAL);
	assert_non_null(strstr(err.data, "line 2"));
	assert_int_equal(rsp_flametree__add_folded(t, odd, strlen(odd), &err), 0);
	assert_int_equal(rsp_flametree__render_json(t, &out), 0);
	assert_null(strstr(out.data, "</"));
	assert_non_null(strstr(out.data, "<\\/script>"));
	assert_non_null(strstr(out.data, "\"??\""));
	assert_int_equal(rsp_flametree__add_folded(t, "", 0, &err), 0);
	rsp_buf__reset(&err); /* a weight past 2^53 (JavaScript's exact integers) */
	assert_int_equal(rsp_flametree__add_folded(t, "a 9007199254740993\n", 19, &err), -EINVAL);
	assert_non_null(strstr(err.data, "line 1"));
	rsp_flametree__delete(t);
	rsp_flametree__delete(NULL);
	rsp_buf__exit(&out);
	rsp_buf__exit(&err);
}

/* 100000 distinct stacks, a budget of 1000 frames: the tree stays in it, the total whole. */
static void test_many(void **state)
{
	struct rsp_flametree *t = rsp_flametree__new("r", 1000);
	struct rsp_buf in = RSP_BUF_INIT, out = RSP_BUF_INIT, err = RSP_BUF_INIT;
	struct rsp_flametree_stats st;

	for (int i = 0; i < 100000; i++)
		rsp_buf__printf(&in, "p;t%d;f%d %d\n", i % 50, i, 1 + i % 7);
	assert_int_equal(rsp_flametree__add_folded(t, in.data, in.len, &err), 0);
	assert_int_equal(rsp_flametree__render_json(t, &out), 0);
	rsp_flametree__stats(t, &st);
	assert_true(st.frames <= 1000);
	assert_int_equal(st.stacks, 100000);
	assert_true(st.stacks_left_out > 99000);
	assert_int_equal(st.total, 100000 / 7 * 28 + 1 + 2 + 3 + 4 + 5);
	rsp_flametree__delete(t);
	rsp_buf__exit(&in);
	rsp_buf__exit(&out);
	rsp_buf__exit(&err);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_tree),  cmocka_unit_test(test_mixed),
		cmocka_unit_test(test_kinds), cmocka_unit_test(test_budget),
		cmocka_unit_test(test_input), cmocka_unit_test(test_many),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
