// SPDX-License-Identifier: GPL-2.0
/* Unit tests of lib/query/query.c (parsing, dispatch) and lib/query/cmd_status.c on a
 * synthetic stream whose counts are known. */
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
#include <rsp/tlstore.h>
#include "internal/query.h"
#include "support/synth.h"

static int parse(struct rsp_request *req, struct rsp_buf *err, const char *const *argv)
{
	int argc = 0;

	while (argv[argc])
		argc++;
	rsp_buf__reset(err);
	return rsp_request__parse(argc, argv, req, err);
}

#define ARGS(...) ((const char *const[]){__VA_ARGS__, NULL})

/* --spin-symbol: snapshot and top, repeatable (kept once), checked, not with --no-annotations */
static void test_spin_symbols(struct rsp_buf *err)
{
	struct rsp_request req;
	struct rsp_spin sp;
	char many[RSP_SPIN_MAX_EXTRA + 2][16];
	const char *argv[2 * (RSP_SPIN_MAX_EXTRA + 2) + 2] = {"top"};
	int n = 1;

	assert_int_equal(parse(&req, err,
			       ARGS("snapshot", "7", "--spin-symbol", "my_wait", "--spin-symbol",
				    "my_wait", "--spin-symbol=backoff")),
			 0);
	assert_int_equal(req.nr_spin_syms, 2);
	assert_ptr_equal(rsp_request__spin(&req, &sp), &sp);
	assert_string_equal(rsp_spin__match(&sp, "backoff"), "backoff");
	assert_non_null(rsp_spin__match(&sp, "pthread_spin_lock"));
	rsp_request__exit(&req);
	assert_int_equal(parse(&req, err, ARGS("snapshot", "7", "--no-annotations")), 0);
	assert_null(rsp_request__spin(&req, &sp));
	rsp_request__exit(&req);
	assert_int_equal(parse(&req, err, ARGS("top", "--spin-symbol", "a b")), -EINVAL);
	assert_non_null(strstr(err->data, "--spin-symbol wants a function name"));
	assert_int_equal(parse(&req, err, ARGS("top", "--spin-symbol", "")), -EINVAL);
	assert_int_equal(parse(&req, err, ARGS("graph", "--spin-symbol", "x")), -EINVAL);
	assert_non_null(strstr(err->data, "unknown option"));
	assert_int_equal(
		parse(&req, err, ARGS("snapshot", "7", "--no-annotations", "--spin-symbol", "x")),
		-EINVAL);
	assert_non_null(strstr(err->data, "give one of them"));
	for (int i = 0; i < RSP_SPIN_MAX_EXTRA + 1; i++) {
		snprintf(many[i], sizeof(many[i]), "spin_%d", i);
		argv[n++] = "--spin-symbol";
		argv[n++] = many[i];
	}
	assert_int_equal(parse(&req, err, argv), -EINVAL);
	assert_non_null(strstr(err->data, "more than 32 times"));
}

static void test_parse(void **state)
{
	struct rsp_buf err = RSP_BUF_INIT;
	struct rsp_request req;

	assert_int_equal(parse(&req, &err, ARGS("status")), 0);
	assert_string_equal(rsp_request__command(&req), "status");
	assert_int_equal(req.format, RSP_FMT_TEXT);
	assert_int_equal(req.pid, -1);
	rsp_request__exit(&req);
	assert_int_equal(parse(&req, &err, ARGS("status", "--json", "--pid", "42", "--events")), 0);
	assert_int_equal(req.format, RSP_FMT_JSON);
	assert_int_equal(req.pid, 42);
	rsp_request__exit(&req);
	assert_int_equal(parse(&req, &err, ARGS("status", "--pid=7", "--format=text")), 0);
	assert_int_equal(req.pid, 7);
	rsp_request__exit(&req);

	assert_int_equal(parse(&req, &err, ARGS("frob")), -EINVAL);
	assert_non_null(strstr(err.data, "unknown command 'frob'"));
	assert_int_equal(parse(&req, &err, ARGS("status", "--nope")), -EINVAL);
	assert_non_null(strstr(err.data, "unknown option '--nope'"));
	assert_int_equal(parse(&req, &err, ARGS("status", "--pid")), -EINVAL);
	assert_non_null(strstr(err.data, "needs a value"));
	assert_int_equal(parse(&req, &err, ARGS("status", "--pid", "0")), -EINVAL);
	assert_int_equal(parse(&req, &err, ARGS("status", "--pid", "x1")), -EINVAL);
	assert_int_equal(parse(&req, &err, ARGS("status", "--json=yes")), -EINVAL);
	assert_non_null(strstr(err.data, "takes no value"));
	assert_int_equal(parse(&req, &err, ARGS("status", "--format", "dot")), -EINVAL);
	assert_non_null(strstr(err.data, "text or json"));
	/* --last is not a status option */
	assert_int_equal(parse(&req, &err, ARGS("status", "--last", "10s")), -EINVAL);
	assert_int_equal(parse(&req, &err, ARGS("status", "stray")), -EINVAL);
	assert_non_null(strstr(err.data, "unexpected argument 'stray'"));
	assert_int_equal(parse(&req, &err, (const char *const[]){NULL}), -EINVAL);
	/* false wakeups: graph and snapshot only; a run in us; raw or a threshold, not both */
	assert_int_equal(parse(&req, &err, ARGS("graph", "--false-wakeup-run", "40")), 0);
	assert_int_equal(rsp_request__fwake_ns(&req), 40000);
	rsp_request__exit(&req);
	assert_int_equal(parse(&req, &err, ARGS("snapshot", "7", "--no-annotations")), 0);
	assert_int_equal(rsp_request__fwake_ns(&req), 0);
	rsp_request__exit(&req);
	assert_int_equal(parse(&req, &err, ARGS("graph")), 0);
	assert_int_equal(rsp_request__fwake_ns(&req), RSP_FWAKE_DEFAULT_NS);
	rsp_request__exit(&req);
	assert_int_equal(parse(&req, &err, ARGS("graph", "--false-wakeup-run", "0")), -EINVAL);
	assert_non_null(strstr(err.data, "microseconds"));
	assert_int_equal(
		parse(&req, &err, ARGS("graph", "--no-annotations", "--false-wakeup-run", "9")),
		-EINVAL);
	assert_non_null(strstr(err.data, "give one of them"));
	assert_int_equal(parse(&req, &err, ARGS("status", "--no-annotations")), -EINVAL);
	test_spin_symbols(&err);
	assert_true(rsp_query__exists("status"));
	assert_false(rsp_query__exists("nope"));
	rsp_buf__reset(&err);
	rsp_query__usage(&err, NULL);
	assert_non_null(strstr(err.data, "status"));
	rsp_buf__reset(&err);
	rsp_query__usage(&err, "status");
	assert_non_null(strstr(err.data, "EXAMPLES"));
	rsp_buf__exit(&err);
}

/*
 * Process 100 (threads 100, 101) and process 200 (thread 200) take turns on
 * CPU 0: 100 -> 200 -> 101 -> 100 ... 30 switches; 200 wakes 100 ten times;
 * five cpu-clock samples of 101; one gap.
 */
static struct synth *stream(void)
{
	struct synth *s = synth__new(2, 1u << 20);
	static const struct {
		uint32_t tgid, tid;
		const char *comm;
	} order[] = {{100, 100, "worker"}, {200, 200, "other"}, {100, 101, "worker"}};
	uint64_t t = 1000;

	for (int i = 0; i < 30; i++) {
		int a = i % 3, b = (i + 1) % 3;

		synth__switch(s, .cpu = 0, .t = t, .prev_tgid = order[a].tgid, .prev = order[a].tid,
			      .prev_comm = order[a].comm, .state = 1, .next = order[b].tid,
			      .next_comm = order[b].comm);
		t += 100;
	}
	for (int i = 0; i < 10; i++)
		synth__waking(s, .cpu = 1, .t = 5000 + (uint64_t)i, .tid = 200, .target = 100,
			      .target_comm = "wakee");
	for (int i = 0; i < 5; i++)
		synth__cpu_sample(s, .cpu = 0, .t = 6000 + (uint64_t)i, .tgid = 100, .tid = 101,
				  .ip = 0x400000);
	rsp_window__note_lost(s->window, 1, 7000, 3);
	return s;
}

static json_t *run_json(struct synth *s, const char *const *argv)
{
	struct rsp_buf out = RSP_BUF_INIT, err = RSP_BUF_INIT;
	struct rsp_source src = {.window = s->window, .schema = s->schema, .now = 8000};
	struct rsp_request req;
	json_t *j;

	assert_int_equal(parse(&req, &err, argv), 0);
	assert_int_equal(rsp_query__run(&req, &src, &out, &err), 0);
	rsp_request__exit(&req);
	j = json_loads(out.data, 0, NULL);
	assert_non_null(j);
	rsp_buf__exit(&out);
	rsp_buf__exit(&err);
	return j;
}

static json_t *thread(json_t *threads, int tid)
{
	size_t i;
	json_t *t;

	json_array_foreach (threads, i, t)
		if (json_integer_value(json_object_get(t, "tid")) == tid)
			return t;
	return NULL;
}

static int64_t num(json_t *o, const char *key)
{
	return json_integer_value(json_object_get(o, key));
}

/* Which requests pass over the window: rspd's heavy lane takes those. */
static bool reads_window(const char *const *argv)
{
	struct rsp_buf err = RSP_BUF_INIT;
	struct rsp_request req;
	bool r;

	assert_int_equal(parse(&req, &err, argv), 0);
	r = rsp_request__reads_window(&req);
	rsp_request__exit(&req);
	rsp_buf__exit(&err);
	return r;
}

static void test_reads_window(void **state)
{
	assert_false(reads_window(ARGS("status")));
	assert_false(reads_window(ARGS("status", "--json")));
	assert_true(reads_window(ARGS("status", "--pid", "42")));
	assert_true(reads_window(ARGS("status", "--events")));
	assert_false(reads_window(ARGS("hist")));
	assert_false(reads_window(ARGS("dump")));
	assert_true(reads_window(ARGS("graph")));
	assert_true(reads_window(ARGS("top")));
	assert_true(reads_window(ARGS("net")));
	assert_true(reads_window(ARGS("snapshot", "42")));
}

/*
 * status, hist and dump never resolve addresses: rspd does not lock its
 * process model for them; except to read cgroups (status --pid: the
 * process's; hist --by cgroup and --cgroup: each process's).
 */
static void test_uses_symbols(void **state)
{
	const char *const *const none[] = {ARGS("status"), ARGS("hist"), ARGS("dump")};
	const char *const *const some[] = {ARGS("graph"),
					   ARGS("top"),
					   ARGS("net"),
					   ARGS("snapshot", "42"),
					   ARGS("status", "--pid", "42"),
					   ARGS("hist", "--by", "cgroup"),
					   ARGS("hist", "--cgroup", "/a")};
	struct rsp_buf err = RSP_BUF_INIT;
	struct rsp_request req;

	for (size_t i = 0; i < sizeof(none) / sizeof(none[0]); i++) {
		assert_int_equal(parse(&req, &err, none[i]), 0);
		assert_false(rsp_request__uses_symbols(&req));
		rsp_request__exit(&req);
	}
	for (size_t i = 0; i < sizeof(some) / sizeof(some[0]); i++) {
		assert_int_equal(parse(&req, &err, some[i]), 0);
		assert_true(rsp_request__uses_symbols(&req));
		rsp_request__exit(&req);
	}
	rsp_buf__exit(&err);
}

static void test_status_threads(void **state)
{
	struct synth *s = stream();
	json_t *j = run_json(s, ARGS("status", "--pid", "100", "--json", "--events"));
	json_t *threads = json_object_get(j, "threads"), *t100, *t101, *w, *ev;

	assert_int_equal(json_array_size(threads), 2);
	t100 = thread(threads, 100);
	t101 = thread(threads, 101);
	assert_non_null(t100);
	assert_non_null(t101);
	assert_int_equal(num(t100, "switches_out"), 10);
	assert_int_equal(num(t100, "switches_in"), 10);
	assert_int_equal(num(t101, "switches_out"), 10);
	assert_int_equal(num(t100, "wakeups"), 10);
	assert_int_equal(num(t101, "wakeups"), 0);
	assert_int_equal(num(t101, "samples"), 5);
	assert_string_equal(json_string_value(json_object_get(t100, "comm")), "worker");
	w = json_object_get(j, "window");
	assert_int_equal(num(w, "records"), 30 + 10 + 5 + 1);
	assert_true(json_real_value(json_object_get(w, "span_s")) > 0);
	ev = json_object_get(j, "events");
	assert_int_equal(num(ev, "sched_switch"), 30);
	assert_int_equal(num(ev, "sched_waking"), 10);
	assert_int_equal(num(ev, "cpu_clock"), 5);
	assert_int_equal(num(ev, "lost_records"), 1);
	assert_int_equal(num(ev, "lost"), 3);
	/* Switch i brings in the thread that left at switch i - 2: 28 sleeps of
	 * 200 ns end in the window. Two more end without a switch-in (the
	 * timeline's rule, as for every analysis): 200, asleep since 3800, runs
	 * the wakings at 5000; 101, asleep since 3900, is sampled at 6000. None
	 * has a stack (no callchains). 28 * 200 + 1200 + 2100 ns. */
	assert_int_equal(num(ev, "sleeps"), 30);
	assert_int_equal(num(ev, "sleeps_with_stack"), 0);
	assert_true(json_real_value(json_object_get(ev, "off_cpu_s")) > 8.89e-6);
	assert_true(json_real_value(json_object_get(ev, "off_cpu_s")) < 8.91e-6);
	assert_true(json_is_true(json_object_get(j, "offline")) == 0);
	json_decref(j);
	j = run_json(s, ARGS("status", "--pid", "200", "--json"));
	threads = json_object_get(j, "threads");
	assert_int_equal(json_array_size(threads), 1);
	assert_int_equal(num(thread(threads, 200), "switches_out"), 10);
	json_decref(j);
	synth__delete(s);
}

static void test_status_text(void **state)
{
	struct synth *s = stream();
	struct rsp_buf out = RSP_BUF_INIT, err = RSP_BUF_INIT;
	struct rsp_source src = {.window = s->window, .schema = s->schema, .now = 8000};
	struct rsp_request req;

	assert_int_equal(parse(&req, &err, ARGS("status", "--pid", "100", "--events")), 0);
	assert_int_equal(rsp_query__run(&req, &src, &out, &err), 0);
	assert_non_null(strstr(out.data, "process 100 in the window: 2 threads"));
	assert_non_null(strstr(out.data, "sched_switch"));
	assert_non_null(strstr(out.data, "(3 records lost)"));
	/* Every line fits 80 columns. */
	for (char *line = out.data, *nl; *line; line = nl + 1) {
		nl = strchr(line, '\n');
		assert_non_null(nl);
		assert_true(nl - line <= 80);
	}
	rsp_request__exit(&req);
	rsp_buf__exit(&out);
	rsp_buf__exit(&err);
	synth__delete(s);
}

/* One rule for --pid: a process with no thread in the window is an error, not an empty answer. */
static void test_pid_not_seen(void **state)
{
	static const char *const cmds[] = {"status", "net"};
	struct synth *s = stream();
	struct rsp_buf out = RSP_BUF_INIT, err = RSP_BUF_INIT;
	struct rsp_source src = {.window = s->window, .schema = s->schema, .now = 8000};
	struct rsp_request req;
	char want[96];

	for (size_t i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++) {
		assert_int_equal(parse(&req, &err, ARGS(cmds[i], "--pid", "300")), 0);
		assert_int_equal(rsp_query__run(&req, &src, &out, &err), -ESRCH);
		snprintf(want, sizeof(want), "%s: process 300 has no thread in the window",
			 cmds[i]);
		assert_non_null(strstr(err.data, want));
		/* The stream's gap: it may have been among the lost records. */
		assert_non_null(strstr(err.data, "which lost 3 records"));
		rsp_request__exit(&req);
		rsp_buf__reset(&out);
	}
	assert_int_equal(parse(&req, &err, ARGS("net", "--pid", "100")), 0);
	assert_int_equal(rsp_query__run(&req, &src, &out, &err), 0);
	rsp_request__exit(&req);
	rsp_buf__exit(&out);
	rsp_buf__exit(&err);
	synth__delete(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse),	     cmocka_unit_test(test_reads_window),
		cmocka_unit_test(test_uses_symbols), cmocka_unit_test(test_status_threads),
		cmocka_unit_test(test_status_text),  cmocka_unit_test(test_pid_not_seen),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
