// SPDX-License-Identifier: GPL-2.0
/*
 * Unit tests of the access rule as every command applies it
 * (lib/format/redact.c through the commands), on a synthetic window: a
 * thread whose process rsp never learnt (it only ever appears as the next
 * task of a switch and as the target of a waking, so no record in its own
 * context says its tgid) is decided by its own owner, and hidden when that
 * is another user or cannot be told; never shown as if it were the idle
 * task. And top as perf_event_paranoid would let the requester profile
 * the machine: other users' samples only at <= 0, kernel functions only
 * at <= 1.
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
#include <linux/perf_event.h>
#include <jansson.h>
#include <rsp/ksyms.h>
#include <rsp/query.h>
#include <rsp/symbols.h>
#include "kallsyms_fake.h"
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

/*
 * 100 and 400 are uid 1000's (the requester), 300 root's; 500 has exited.
 * 600 is root's shell, 601 its child that runs as the requester.
 */
static int uid_of(void *ctx, long pid, uint32_t *uid)
{
	(void)ctx;
	if (pid == 600) {
		*uid = 0;
		return 0;
	}
	if (pid == 100 || pid == 400 || pid == 601) {
		*uid = 1000;
		return 0;
	}
	if (pid == 300) {
		*uid = 0;
		return 0;
	}
	return -ESRCH;
}

#define UNRESTRICTED 99

static const struct rsp_ksyms *ksyms; /* the source's kernel symbols; NULL: none */

/* @paranoid: the requester's perf_event_paranoid; UNRESTRICTED: root's query. */
static int run_as(struct synth *s, int paranoid, struct rsp_symbolizer *sym,
		  const char *const *argv, struct rsp_buf *out, struct rsp_buf *err)
{
	struct rsp_source src = {.window = s->window,
				 .schema = s->schema,
				 .now = 5000 * US,
				 .symbols = sym,
				 .ksyms = ksyms};
	struct rsp_request req;
	int argc = 0, ret;

	while (argv[argc])
		argc++;
	if (paranoid != UNRESTRICTED)
		src.access = (struct rsp_access){
			.restricted = true, .uid = 1000, .uid_of = uid_of, .paranoid = paranoid};
	rsp_buf__reset(out);
	rsp_buf__reset(err);
	assert_int_equal(rsp_request__parse(argc, argv, &req, err), 0);
	ret = rsp_query__run(&req, &src, out, err);
	rsp_request__exit(&req);
	return ret;
}

static int run(struct synth *s, bool restricted, const char *const *argv, struct rsp_buf *out,
	       struct rsp_buf *err)
{
	return run_as(s, restricted ? 0 : UNRESTRICTED, NULL, argv, out, err);
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

/*
 * graph: short-lived children are one vertex named by their parent: a
 * parent of another user's hides it, though the child is the requester's.
 */
static void test_graph_short_lived(void **state)
{
	struct synth *s = synth__new(2, 1u << 20);
	struct rsp_buf out = RSP_BUF_INIT, err = RSP_BUF_INIT;

	(void)state;
	synth__switch(s, .cpu = 0, .t = 1000 * US, .prev = 0, .next = 600,
		      .next_comm = "rootshell");
	synth__process_fork(s, .cpu = 0, .t = 2000 * US, .parent = 600, .child = 601,
			    .comm = "rootshell");
	synth__wakeup_new(s, .cpu = 0, .t = 2010 * US, .tid = 600, .child = 601, .comm = "bash");
	synth__switch(s, .cpu = 0, .t = 2020 * US, .prev = 600, .prev_comm = "rootshell",
		      .state = 1, .next = 601, .next_comm = "bash");
	synth__waking(s, .cpu = 0, .t = 2030 * US, .tid = 601, .target = 100,
		      .target_comm = "client");
	synth__switch(s, .cpu = 0, .t = 2040 * US, .prev = 601, .prev_comm = "bash", .state = 0x10,
		      .next = 100, .next_comm = "client");
	synth__waking(s, .cpu = 0, .t = 3000 * US, .tid = 100, .target = 600,
		      .target_comm = "rootshell");
	synth__switch(s, .cpu = 0, .t = 3000 * US, .prev = 100, .prev_comm = "client", .state = 1,
		      .next = 600, .next_comm = "rootshell");
	synth__switch(s, .cpu = 0, .t = 4000 * US, .prev = 600, .prev_comm = "rootshell",
		      .state = 1, .next = 0);
	assert_int_equal(run(s, false, ARGS("graph", "--json", "--threshold", "0"), &out, &err), 0);
	assert_true(has(&out, "short-lived children of rootshell[600]"));
	assert_int_equal(run(s, true, ARGS("graph", "--json", "--threshold", "0"), &out, &err), 0);
	assert_false(has(&out, "rootshell"));
	assert_true(has(&out, "short-lived children of pid 600 (other user)"));
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

/*
 * cpu-clock samples: the requester's 100 in anon_pipe_read and in user
 * space, root's 300 in tcp_recvmsg and in user space, the idle task in
 * do_nanosleep.
 */
static struct synth *samples(void)
{
	struct synth *s = synth__new(2, 1u << 20);

	synth__cpu_sample(s, .cpu = 0, .t = 1000 * US, .tid = 100, .ip = K_PIPE_READ + 0x10,
			  .cpumode = PERF_RECORD_MISC_KERNEL);
	synth__cpu_sample(s, .cpu = 0, .t = 1100 * US, .tid = 100, .ip = 0x401000);
	synth__cpu_sample(s, .cpu = 1, .t = 1200 * US, .tid = 300, .ip = K_TCP_RECV + 0x10,
			  .cpumode = PERF_RECORD_MISC_KERNEL);
	synth__cpu_sample(s, .cpu = 1, .t = 1300 * US, .tid = 300, .ip = 0x402000);
	synth__cpu_sample(s, .cpu = 1, .t = 1400 * US, .tid = 0, .ip = K_NANOSLEEP + 0x10,
			  .cpumode = PERF_RECORD_MISC_KERNEL);
	return s;
}

static json_t *top_json(struct synth *s, struct rsp_symbolizer *sym, int paranoid)
{
	struct rsp_buf out = RSP_BUF_INIT, err = RSP_BUF_INIT;
	json_t *j;

	assert_int_equal(
		run_as(s, paranoid, sym, ARGS("top", "--json", "--limit", "0"), &out, &err), 0);
	j = json_loads(out.data, 0, NULL);
	assert_non_null(j);
	rsp_buf__exit(&out);
	rsp_buf__exit(&err);
	return j;
}

static bool has_pid(json_t *j, int pid)
{
	size_t i;
	json_t *p;

	json_array_foreach (json_object_get(j, "processes"), i, p)
		if (json_integer_value(json_object_get(p, "pid")) == pid)
			return true;
	return false;
}

static bool has_fn(json_t *j, const char *name)
{
	size_t i;
	json_t *r;

	json_array_foreach (json_object_get(j, "symbols"), i, r) {
		const char *n = json_string_value(json_object_get(r, "name"));

		if (n && !strcmp(n, name))
			return true;
	}
	return false;
}

static int64_t num(json_t *j, const char *key)
{
	return json_integer_value(json_object_get(j, key));
}

/* top without --pid, at each perf_event_paranoid level, and for root. */
static void test_top_paranoid(void **state)
{
	struct rsp_symbolizer_config sc = {.kallsyms = "", .jit_dir = "", .debug_dir = ""};
	struct rsp_symbolizer *sym = rsp_symbolizer__new(&sc);
	struct synth *s = samples();
	struct rsp_buf out = RSP_BUF_INIT, err = RSP_BUF_INIT;
	json_t *j;

	(void)state;
	assert_int_equal(
		rsp_symbolizer__set_kallsyms(sym, fake_kallsyms, strlen(fake_kallsyms), &err), 0);
	for (int level = -1; level <= 0; level++) {
		/* everyone's samples: root's unnamed, with its kernel function */
		j = top_json(s, sym, level);
		assert_true(has_pid(j, 100) && has_pid(j, 300) && has_pid(j, 0));
		assert_true(has_fn(j, "tcp_recvmsg") && has_fn(j, "anon_pipe_read"));
		assert_int_equal(num(j, "samples"), 5);
		json_decref(j);
	}
	/* 1: only the requester's own processes, their kernel functions named */
	j = top_json(s, sym, 1);
	assert_true(has_pid(j, 100) && !has_pid(j, 300) && !has_pid(j, 0));
	assert_true(has_fn(j, "anon_pipe_read") && !has_fn(j, "tcp_recvmsg") &&
		    !has_fn(j, "do_nanosleep"));
	assert_int_equal(num(j, "samples"), 2);
	assert_int_equal(num(j, "samples_kernel"), 1);
	assert_true(json_is_false(json_object_get(j, "other_users")));
	json_decref(j);
	/* 2 and more: and no kernel function names, nor addresses */
	for (int level = 2; level <= 3; level++) {
		j = top_json(s, sym, level);
		assert_true(has_pid(j, 100) && !has_pid(j, 300) && !has_pid(j, 0));
		assert_false(has_fn(j, "anon_pipe_read"));
		assert_int_equal(num(j, "samples"), 2);
		assert_int_equal(num(j, "samples_kernel"), 1);
		assert_true(json_is_false(json_object_get(j, "kernel_symbols")));
		assert_int_equal(num(j, "perf_event_paranoid"), level);
		json_decref(j);
		assert_int_equal(run_as(s, level, sym, ARGS("top", "--limit", "0"), &out, &err), 0);
		assert_false(has(&out, "anon_pipe_read") || has(&out, "ffffffff81"));
		assert_true(has(&out, "your processes") && has(&out, "[kernel]"));
	}
	/* root sees all of it */
	j = top_json(s, sym, UNRESTRICTED);
	assert_true(has_pid(j, 300) && has_fn(j, "tcp_recvmsg") && has_fn(j, "do_nanosleep"));
	json_decref(j);
	rsp_buf__exit(&out);
	rsp_buf__exit(&err);
	rsp_symbolizer__delete(sym);
	synth__delete(s);
}

/*
 * The requester's own 100 sleeps on a futex, its own 400 wakes it: the
 * sleep's kernel frames are named in graph and snapshot up to paranoid 1,
 * one [kernel] frame at 2 and more.
 */
static void test_kernel_frames(void **state)
{
	static const uint64_t futex_stack[] = {PERF_CONTEXT_KERNEL, K_SCHEDULE + 0x20,
					       K_FUTEX_WAIT + 0x10, PERF_CONTEXT_USER,
					       0x7f0000001000ull};
	struct synth *s = synth__new(2, 1u << 20);
	struct rsp_buf out = RSP_BUF_INIT, err = RSP_BUF_INIT;
	struct rsp_ksyms *ks = rsp_ksyms__new_from_text(fake_kallsyms, strlen(fake_kallsyms), &err);

	(void)state;
	assert_non_null(ks);
	ksyms = ks;
	synth__switch(s, .cpu = 1, .t = 500 * US, .prev = 0, .next = 400, .next_comm = "minetoo");
	synth__switch(s, .cpu = 0, .t = 1000 * US, .prev = 100, .prev_comm = "client", .state = 1,
		      .next = 0, .chain = futex_stack, .nr = 5);
	synth__waking(s, .cpu = 1, .t = 3000 * US, .tid = 400, .target = 100,
		      .target_comm = "client");
	synth__switch(s, .cpu = 0, .t = 3100 * US, .prev = 0, .next = 100, .next_comm = "client");
	synth__switch(s, .cpu = 0, .t = 4000 * US, .prev = 100, .prev_comm = "client", .state = 1,
		      .next = 0, .chain = futex_stack, .nr = 5);
	for (int level = 1; level <= 2; level++) {
		assert_int_equal(run_as(s, level, NULL,
					ARGS("graph", "--json", "--no-merge", "--threshold", "0"),
					&out, &err),
				 0);
		assert_true(has(&out, "futex_wait") == (level == 1));
		assert_true(has(&out, "[kernel]") == (level == 2));
		assert_false(has(&out, "0xffffffff"));
		assert_int_equal(
			run_as(s, level, NULL, ARGS("snapshot", "100", "--json"), &out, &err), 0);
		assert_true(has(&out, "futex_wait") == (level == 1));
		assert_false(has(&out, "0xffffffff"));
	}
	ksyms = NULL;
	rsp_ksyms__delete(ks);
	rsp_buf__exit(&out);
	rsp_buf__exit(&err);
	synth__delete(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_graph_unknown_tgid), cmocka_unit_test(test_graph_short_lived),
		cmocka_unit_test(test_status_waker),	   cmocka_unit_test(test_top_paranoid),
		cmocka_unit_test(test_kernel_frames),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
