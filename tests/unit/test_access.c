// SPDX-License-Identifier: GPL-2.0
/*
 * Unit tests of the access rule as every command applies it
 * (lib/query/redact.c through the commands), on a synthetic window: a
 * thread whose process rsp never learnt (it only ever appears as the next
 * task of a switch and as the target of a waking, so no record in its own
 * context says its tgid) is decided by its own owner, and hidden when that
 * is another user or cannot be told; never shown as if it were the idle
 * task.
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
#include <rsp/query.h>
#include "support/synth.h"

#define US	  1000ull
#define ARGS(...) ((const char *const[]){__VA_ARGS__, NULL})

/*
 * 100 (the requester's "client") runs, wakes 300 ("rootsecret", root's)
 * and 400 ("minetoo", the requester's), and sleeps; 300 and 400 come on
 * and nothing in their own context follows; 500 ("gonesecret", exited)
 * wakes 100, which runs again.
 */
static struct synth *stream(void)
{
	struct synth *s = synth__new(2, 1u << 20);

	synth__switch(s, .cpu = 0, .t = 1000 * US, .prev = 0, .next = 100, .next_comm = "client");
	synth__waking(s, .cpu = 0, .t = 1500 * US, .tid = 100, .target = 300,
		      .target_comm = "rootsecret");
	synth__waking(s, .cpu = 0, .t = 1600 * US, .tid = 100, .target = 400,
		      .target_comm = "minetoo");
	synth__switch(s, .cpu = 1, .t = 1700 * US, .prev = 0, .next = 300,
		      .next_comm = "rootsecret");
	synth__switch(s, .cpu = 0, .t = 2000 * US, .prev = 100, .prev_comm = "client", .state = 1,
		      .next = 400, .next_comm = "minetoo");
	synth__waking(s, .cpu = 1, .t = 3000 * US, .tid = 500, .target = 100,
		      .target_comm = "client");
	synth__switch(s, .cpu = 1, .t = 3000 * US, .prev = 500, .prev_comm = "gonesecret",
		      .state = 1, .next = 100, .next_comm = "client");
	synth__switch(s, .cpu = 1, .t = 4000 * US, .prev = 100, .prev_comm = "client", .state = 1,
		      .next = 0);
	return s;
}

/* 100 and 400 are uid 1000's (the requester), 300 root's; 500 has exited. */
static int uid_of(void *ctx, long pid, uint32_t *uid)
{
	(void)ctx;
	if (pid == 100 || pid == 400) {
		*uid = 1000;
		return 0;
	}
	if (pid == 300) {
		*uid = 0;
		return 0;
	}
	return -ESRCH;
}

static int run(struct synth *s, bool restricted, const char *const *argv, struct rsp_buf *out,
	       struct rsp_buf *err)
{
	struct rsp_source src = {.window = s->window, .schema = s->schema, .now = 5000 * US};
	struct rsp_request req;
	int argc = 0, ret;

	while (argv[argc])
		argc++;
	if (restricted)
		src.access = (struct rsp_access){.restricted = true, .uid = 1000, .uid_of = uid_of};
	rsp_buf__reset(out);
	rsp_buf__reset(err);
	assert_int_equal(rsp_request__parse(argc, argv, &req, err), 0);
	ret = rsp_query__run(&req, &src, out, err);
	rsp_request__exit(&req);
	return ret;
}

static bool has(const struct rsp_buf *b, const char *s)
{
	return b->data && memmem(b->data, b->len, s, strlen(s));
}

/* graph: the threads of unknown process, as text, JSON and DOT. */
static void test_graph_unknown_tgid(void **state)
{
	static const char *const fmts[] = {"text", "json", "dot"};
	struct synth *s = stream();
	struct rsp_buf out = RSP_BUF_INIT, err = RSP_BUF_INIT;

	(void)state;
	assert_int_equal(run(s, false, ARGS("graph", "--json", "--no-merge"), &out, &err), 0);
	assert_true(has(&out, "rootsecret") && has(&out, "gonesecret"));
	for (size_t i = 0; i < 3; i++) {
		assert_int_equal(
			run(s, true,
			    ARGS("graph", "--format", fmts[i], "--no-merge", "--threshold", "0"),
			    &out, &err),
			0);
		assert_false(has(&out, "rootsecret"));
		assert_false(has(&out, "gonesecret"));
	}
	assert_int_equal(run(s, true, ARGS("graph", "--json", "--no-merge"), &out, &err), 0);
	assert_true(has(&out, "pid 300 (other user)"));
	assert_true(has(&out, "minetoo")); /* the requester's own, though its tgid is unknown */
	rsp_buf__exit(&out);
	rsp_buf__exit(&err);
	synth__delete(s);
}

/* status --pid: the waker that has exited is another user's as far as anyone can tell. */
static void test_status_waker(void **state)
{
	struct synth *s = stream();
	struct rsp_buf out = RSP_BUF_INIT, err = RSP_BUF_INIT;

	(void)state;
	assert_int_equal(run(s, true, ARGS("status", "--pid", "100", "--json"), &out, &err), 0);
	assert_false(has(&out, "gonesecret"));
	assert_int_equal(run(s, true, ARGS("status", "--pid", "100"), &out, &err), 0);
	assert_false(has(&out, "gonesecret"));
	rsp_buf__exit(&out);
	rsp_buf__exit(&err);
	synth__delete(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_graph_unknown_tgid),
		cmocka_unit_test(test_status_waker),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
