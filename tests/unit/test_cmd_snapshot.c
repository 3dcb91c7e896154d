// SPDX-License-Identifier: GPL-2.0
/*
 * Unit tests of `snapshot` as a query (lib/query/cmd_snapshot.c) on a synthetic
 * window, and of multi-part answers (lib/query/answer.c): option parsing, the
 * JSON answer, access control (another user's process in the chain), the
 * folded stacks and the Chrome trace carried as parts.
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
#include <rsp/answer.h>
#include <rsp/query.h>
#include "support/synth.h"

#define US	  1000ull
#define ARGS(...) ((const char *const[]){__VA_ARGS__, NULL})

static int parse(struct rsp_request *req, struct rsp_buf *err, const char *const *argv)
{
	int argc = 0;

	while (argv[argc])
		argc++;
	rsp_buf__reset(err);
	return rsp_request__parse(argc, argv, req, err);
}

/*
 * 100 runs, wakes 200 and sleeps; 200 runs, wakes 300 and sleeps; 300
 * runs, wakes 200; 200 runs, wakes 100: the chain 100 <- 200 <- 300.
 */
static struct synth *stream(void)
{
	struct synth *s = synth__new(2, 1u << 20);

	synth__switch(s, .cpu = 0, .t = 1000 * US, .prev = 0, .next = 100, .next_comm = "client");
	synth__cpu_sample(s, .cpu = 0, .t = 1500 * US, .tid = 100, .ip = 0x401000);
	synth__waking(s, .cpu = 0, .t = 2000 * US, .tid = 100, .target = 200,
		      .target_comm = "wakee");
	synth__switch(s, .cpu = 0, .t = 2000 * US, .prev = 100, .prev_comm = "client", .state = 1,
		      .next = 0);
	synth__switch(s, .cpu = 1, .t = 2010 * US, .prev = 0, .next = 200, .next_comm = "server");
	synth__cpu_sample(s, .cpu = 1, .t = 2500 * US, .tid = 200, .ip = 0x402000);
	synth__waking(s, .cpu = 1, .t = 2900 * US, .tid = 200, .target = 300,
		      .target_comm = "wakee");
	synth__switch(s, .cpu = 0, .t = 2910 * US, .prev = 0, .next = 300, .next_comm = "secret");
	synth__switch(s, .cpu = 1, .t = 3000 * US, .prev = 200, .prev_comm = "server", .state = 1,
		      .next = 0);
	synth__cpu_sample(s, .cpu = 0, .t = 3200 * US, .tid = 300, .ip = 0x403000);
	synth__waking(s, .cpu = 0, .t = 3500 * US, .tid = 300, .target = 200,
		      .target_comm = "wakee");
	synth__switch(s, .cpu = 0, .t = 3500 * US, .prev = 300, .prev_comm = "secret", .state = 1,
		      .next = 0);
	synth__switch(s, .cpu = 1, .t = 3510 * US, .prev = 0, .next = 200, .next_comm = "server");
	synth__waking(s, .cpu = 1, .t = 4000 * US, .tid = 200, .target = 100,
		      .target_comm = "wakee");
	synth__switch(s, .cpu = 1, .t = 4000 * US, .prev = 200, .prev_comm = "server", .state = 1,
		      .next = 0);
	synth__switch(s, .cpu = 0, .t = 4010 * US, .prev = 0, .next = 100, .next_comm = "client");
	synth__cpu_sample(s, .cpu = 0, .t = 4500 * US, .tid = 100, .ip = 0x401000);
	synth__switch(s, .cpu = 0, .t = 5000 * US, .prev = 100, .prev_comm = "client", .state = 1,
		      .next = 0);
	return s;
}

static int uid_of(void *ctx, long pid, uint32_t *uid)
{
	(void)ctx;
	if (pid == 100 || pid == 200) {
		*uid = 1000;
		return 0;
	}
	if (pid == 300) {
		*uid = 2000;
		return 0;
	}
	return -ESRCH;
}

static int run(struct synth *s, bool restricted, const char *const *argv, struct rsp_buf *out,
	       struct rsp_buf *err)
{
	struct rsp_source src = {.window = s->window, .schema = s->schema, .now = 5000 * US};
	struct rsp_request req;
	int ret;

	if (restricted)
		src.access = (struct rsp_access){.restricted = true, .uid = 1000, .uid_of = uid_of};
	assert_int_equal(parse(&req, err, argv), 0);
	ret = rsp_query__run(&req, &src, out, err);
	rsp_request__exit(&req);
	return ret;
}

static void test_parse(void **state)
{
	struct rsp_buf err = RSP_BUF_INIT;
	struct rsp_request req;
	const char *name;

	assert_int_equal(parse(&req, &err, ARGS("snapshot", "42")), 0);
	assert_null(rsp_request__output_at(&req, 0, &name));
	rsp_request__exit(&req);
	assert_int_equal(parse(&req, &err, ARGS("snapshot", "--pid", "42", "--last", "2s")), 0);
	rsp_request__exit(&req);
	assert_int_equal(parse(&req, &err, ARGS("snapshot", "42", "--pid", "42")), 0);
	rsp_request__exit(&req);
	assert_int_equal(parse(&req, &err,
			       ARGS("snapshot", "42", "--folded", "a.folded", "--chrome-trace",
				    "t.json", "--fit", "50us", "--merge", "1ms", "--sample-slack",
				    "0", "--max-depth", "8", "--min", "0")),
			 0);
	assert_string_equal(rsp_request__output_at(&req, 0, &name), "a.folded");
	assert_string_equal(name, "folded");
	assert_string_equal(rsp_request__output_at(&req, 1, &name), "t.json");
	assert_string_equal(name, "chrome-trace");
	assert_null(rsp_request__output_at(&req, 2, &name));
	assert_string_equal(rsp_request__output(&req, "chrome-trace", 12), "t.json");
	assert_null(rsp_request__output(&req, "stdout", 6));
	rsp_request__exit(&req);

	assert_int_equal(parse(&req, &err, ARGS("snapshot")), -EINVAL);
	assert_non_null(strstr(err.data, "which process"));
	assert_int_equal(parse(&req, &err, ARGS("snapshot", "42", "43")), -EINVAL);
	assert_int_equal(parse(&req, &err, ARGS("snapshot", "42", "--pid", "43")), -EINVAL);
	assert_int_equal(parse(&req, &err, ARGS("snapshot", "x")), -EINVAL);
	assert_non_null(strstr(err.data, "not a process id"));
	assert_int_equal(parse(&req, &err, ARGS("snapshot", "42", "--fit", "soon")), -EINVAL);
	assert_non_null(strstr(err.data, "--fit"));
	assert_int_equal(parse(&req, &err, ARGS("snapshot", "42", "--max-depth", "0")), -EINVAL);
	assert_int_equal(parse(&req, &err, ARGS("snapshot", "42", "--format", "dot")), -EINVAL);
	assert_int_equal(
		parse(&req, &err, ARGS("snapshot", "42", "--folded", "x", "--chrome-trace", "x")),
		-EINVAL);
	assert_non_null(strstr(err.data, "same file"));
	assert_int_equal(parse(&req, &err, ARGS("snapshot", "42", "--folded", "")), -EINVAL);
	rsp_buf__exit(&err);
}

static json_t *find_thread(json_t *n, int tid)
{
	size_t i;
	json_t *c;

	if (!strcmp(json_string_value(json_object_get(n, "kind")), "thread") &&
	    json_integer_value(json_object_get(n, "pid")) == tid)
		return n;
	json_array_foreach (json_object_get(n, "children"), i, c) {
		json_t *f = find_thread(c, tid);

		if (f)
			return f;
	}
	return NULL;
}

static void test_json(void **state)
{
	struct synth *s = stream();
	struct rsp_buf out = RSP_BUF_INIT, err = RSP_BUF_INIT;
	json_t *j, *root, *srv, *sec, *cats;

	assert_int_equal(run(s, false, ARGS("snapshot", "100", "--json"), &out, &err), 0);
	j = json_loads(out.data, 0, NULL);
	assert_non_null(j);
	assert_int_equal(json_integer_value(json_object_get(j, "pid")), 100);
	assert_string_equal(json_string_value(json_object_get(j, "comm")), "client");
	assert_true(json_real_value(json_object_get(j, "wall_s")) > 0.0039);
	assert_true(json_real_value(json_object_get(j, "percent_accounted")) > 99.9);
	cats = json_object_get(j, "categories");
	assert_int_equal(json_object_size(cats), 14);
	assert_non_null(json_object_get(cats, "understood"));
	assert_non_null(json_object_get(cats, "spin"));
	assert_non_null(json_object_get(cats, "deliberate_sleep"));
	root = json_array_get(json_object_get(j, "chain"), 0);
	assert_non_null(root);
	srv = find_thread(root, 200);
	assert_non_null(srv);
	assert_non_null(json_object_get(srv, "comm"));
	sec = find_thread(srv, 300);
	assert_non_null(sec);
	assert_non_null(json_object_get(sec, "comm"));
	assert_int_equal(json_array_size(json_object_get(j, "threads")), 3);
	json_decref(j);
	rsp_buf__reset(&out);
	/* text: the table and the chain, under 80 columns */
	assert_int_equal(run(s, false, ARGS("snapshot", "100"), &out, &err), 0);
	assert_non_null(strstr(out.data, "in understood functions"));
	assert_non_null(strstr(out.data, "(pid 200)"));
	for (char *l = out.data, *e; l && *l; l = e ? e + 1 : NULL) {
		e = strchr(l, '\n');
		if ((e ? (size_t)(e - l) : strlen(l)) >= 80)
			fail_msg("line over 79 columns: %.*s", (int)(e ? e - l : 80), l);
	}
	rsp_buf__reset(&out);
	/* a pid that did nothing */
	assert_int_equal(run(s, false, ARGS("snapshot", "4242"), &out, &err), -ESRCH);
	assert_non_null(strstr(err.data, "4242"));
	rsp_buf__exit(&out);
	rsp_buf__exit(&err);
	synth__delete(s);
}

/* Another user's process in the chain: no name, no stacks; its time still counts. */
static void test_access(void **state)
{
	struct synth *s = stream();
	struct rsp_buf out = RSP_BUF_INIT, err = RSP_BUF_INIT;
	json_t *j, *sec;

	assert_int_equal(run(s, true, ARGS("snapshot", "100", "--json"), &out, &err), 0);
	j = json_loads(out.data, 0, NULL);
	sec = find_thread(json_array_get(json_object_get(j, "chain"), 0), 300);
	assert_non_null(sec);
	assert_true(json_is_true(json_object_get(sec, "other_user")));
	assert_null(json_object_get(sec, "comm"));
	assert_null(json_object_get(sec, "tid"));
	assert_null(strstr(out.data, "secret"));
	/* its 500 us of running in the chain still count */
	assert_true(json_real_value(json_object_get(sec, "total_s")) > 0.00049);
	json_decref(j);
	rsp_buf__reset(&out);
	assert_int_equal(run(s, true, ARGS("snapshot", "100"), &out, &err), 0);
	assert_non_null(strstr(out.data, "pid 300 (other user)"));
	assert_null(strstr(out.data, "secret"));
	rsp_buf__reset(&out);
	assert_int_equal(run(s, true, ARGS("snapshot", "300"), &out, &err), -EACCES);
	assert_non_null(strstr(err.data, "another user"));
	rsp_buf__reset(&err);
	assert_int_equal(run(s, true,
			     ARGS("snapshot", "100", "--folded", "f", "--chrome-trace", "t"), &out,
			     &err),
			 0);
	assert_null(memmem(out.data, out.len, "secret", 6));
	rsp_buf__exit(&out);
	rsp_buf__exit(&err);
	synth__delete(s);
}

/* Each folded line: frames;...;frames COUNT, COUNT a positive integer. */
static uint64_t check_folded(const char *p, size_t n, const char *must)
{
	uint64_t total = 0;
	bool found = false;
	char line[4096];

	while (n) {
		const char *e = memchr(p, '\n', n);
		size_t len = e ? (size_t)(e - p) : n;
		char *sp;

		assert_true(len > 0 && len < sizeof(line));
		memcpy(line, p, len);
		line[len] = '\0';
		sp = strrchr(line, ' ');
		assert_non_null(sp);
		assert_true(strtoull(sp + 1, NULL, 10) > 0);
		total += strtoull(sp + 1, NULL, 10);
		*sp = '\0';
		assert_non_null(strchr(line, ';') ? line : (char *)"x");
		found = found || strstr(line, must);
		p += len + (e ? 1 : 0);
		n -= len + (e ? 1 : 0);
	}
	assert_true(found);
	return total;
}

static void test_parts(void **state)
{
	struct synth *s = stream();
	struct rsp_buf out = RSP_BUF_INIT, err = RSP_BUF_INIT;
	struct rsp_part p;
	size_t pos = 0;
	int seen = 0;

	assert_int_equal(run(s, false,
			     ARGS("snapshot", "100", "--folded", "f", "--chrome-trace", "t"), &out,
			     &err),
			 0);
	assert_true(rsp_answer__has_parts(out.data, out.len));
	while (rsp_answer__next(out.data, out.len, &pos, &p) > 0) {
		if (p.name_len == 6 && !memcmp(p.name, "stdout", 6)) {
			assert_non_null(memmem(p.data, p.len, "total accounted", 15));
			seen |= 1;
		} else if (p.name_len == 6 && !memcmp(p.name, "folded", 6)) {
			/* the whole time, in us: 4 ms of the client's life */
			uint64_t total = check_folded(p.data, p.len, "[sleep:");

			assert_true(total >= 3990 && total <= 4010);
			seen |= 2;
		} else if (p.name_len == 12 && !memcmp(p.name, "chrome-trace", 12)) {
			json_error_t je;
			json_t *t = json_loadb(p.data, p.len, 0, &je), *ev;
			size_t i, x = 0, m = 0, flows = 0;

			if (!t)
				fail_msg("chrome trace: %s (line %d)", je.text, je.line);
			json_array_foreach (json_object_get(t, "traceEvents"), i, ev) {
				const char *ph = json_string_value(json_object_get(ev, "ph"));

				assert_non_null(json_object_get(ev, "pid"));
				x += !strcmp(ph, "X");
				m += !strcmp(ph, "M");
				flows += !strcmp(ph, "s") || !strcmp(ph, "f");
				if (!strcmp(ph, "X"))
					assert_true(json_real_value(json_object_get(ev, "dur")) >
						    0);
			}
			assert_true(x >= 8);
			assert_true(m >= 6);
			assert_int_equal(flows, 4);
			json_decref(t);
			seen |= 4;
		}
	}
	assert_int_equal(seen, 7);
	rsp_buf__exit(&out);
	rsp_buf__exit(&err);
	synth__delete(s);
}

static void test_answer_format(void **state)
{
	struct rsp_buf b = RSP_BUF_INIT;
	struct rsp_part p;
	size_t pos = 0;

	assert_false(rsp_answer__has_parts("plain text", 10));
	assert_int_equal(rsp_answer__begin(&b), 0);
	assert_int_equal(rsp_answer__add(&b, "stdout", "hello\n", 6), 0);
	assert_int_equal(rsp_answer__add(&b, "empty", "", 0), 0);
	assert_int_equal(rsp_answer__add(&b, "bad name", "x", 1), -EINVAL);
	assert_int_equal(rsp_answer__add(&b, "bin", "a\nb 9\n", 6), 0);
	assert_true(rsp_answer__has_parts(b.data, b.len));
	assert_int_equal(rsp_answer__next(b.data, b.len, &pos, &p), 1);
	assert_int_equal(p.name_len, 6);
	assert_memory_equal(p.data, "hello\n", 6);
	assert_int_equal(rsp_answer__next(b.data, b.len, &pos, &p), 1);
	assert_int_equal(p.len, 0);
	assert_int_equal(rsp_answer__next(b.data, b.len, &pos, &p), 1);
	assert_memory_equal(p.data, "a\nb 9\n", 6);
	assert_int_equal(rsp_answer__next(b.data, b.len, &pos, &p), 0);
	/* every truncation is malformed, never read past the end */
	for (size_t n = sizeof(RSP_ANSWER_MAGIC); n < b.len; n++) {
		int r = 1;

		pos = 0;
		while (r == 1)
			r = rsp_answer__next(b.data, n, &pos, &p);
		assert_true(r == -EPROTO || (r == 0 && pos == n));
	}
	pos = 0;
	assert_int_equal(rsp_answer__next("RSP-PARTS 1\nx 99\nabc\n", 21, &pos, &p), -EPROTO);
	pos = 0;
	assert_int_equal(rsp_answer__next("RSP-PARTS 1\nx -1\nabc\n", 21, &pos, &p), -EPROTO);
	rsp_buf__exit(&b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse),	      cmocka_unit_test(test_json),
		cmocka_unit_test(test_access),	      cmocka_unit_test(test_parts),
		cmocka_unit_test(test_answer_format),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
