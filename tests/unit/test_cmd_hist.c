// SPDX-License-Identifier: GPL-2.0
/*
 * Unit tests of lib/query/cmd_hist.c: option parsing, answers from a store with
 * known contents (text, JSON, --top, --op, ranges, --slices), the split
 * between rspd and rspctl for --save/--diff FILE, and offline runs that
 * read and write those files themselves.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>
#include <jansson.h>
#include <rsp/hist.h>
#include <rsp/query.h>

#define S  1000000000ull
#define US 1000ull

#define ARGS(...) ((const char *const[]){__VA_ARGS__, NULL})

static int argc_of(const char *const *argv)
{
	int n = 0;

	while (argv[n])
		n++;
	return n;
}

static int parse(struct rsp_request *req, struct rsp_buf *err, const char *const *argv)
{
	rsp_buf__reset(err);
	return rsp_request__parse(argc_of(argv), argv, req, err);
}

static void test_parse(void **state)
{
	struct rsp_buf err = RSP_BUF_INIT;
	struct rsp_request req;
	const struct {
		const char *const *argv;
		const char *why; /* NULL: valid */
	} cases[] = {
		{ARGS("hist"), NULL},
		{ARGS("hist", "--pid", "12", "--threads", "--op", "offcpu:lock", "--last", "30s"),
		 NULL},
		{ARGS("hist", "--op", "blk_service:vda", "--op", "irq:virtio1-req.0", "--json"),
		 NULL},
		{ARGS("hist", "--from", "1687.5", "--to", "now", "--slices"), NULL},
		{ARGS("hist", "--from", "-30s", "--base-from", "-60s", "--base-to", "-30s"), NULL},
		{ARGS("hist", "--diff", "b.json", "--top", "3", "--resolution", "1"), NULL},
		{ARGS("hist", "--comm", "make", "--save", "x.json"), NULL},
		{ARGS("hist", "--all", "--top", "10"), NULL},
		{ARGS("hist", "--system", "--pid", "3"), "choose one subject"},
		{ARGS("hist", "--all", "--comm", "x"), "choose one subject"},
		{ARGS("hist", "--op", "offcpu:nap"), "unknown sleep reason 'nap'"},
		{ARGS("hist", "--op", "latency"), "unknown operation 'latency'"},
		{ARGS("hist", "--last", "10s", "--from", "-5s"), "use one"},
		{ARGS("hist", "--to", "now"), "--to needs --from"},
		{ARGS("hist", "--base-to", "now"), "--base-to needs --base-from"},
		{ARGS("hist", "--diff", "a", "--base-from", "-1m"), "use one"},
		{ARGS("hist", "--slices", "--diff", "a"), "does not combine"},
		{ARGS("hist", "--from", "yesterday"), "--from wants a time"},
		{ARGS("hist", "--from", "-"), "--from wants a time"},
		{ARGS("hist", "--top", "0"), "--top wants"},
		{ARGS("hist", "--diff", "a", "--min-share", "0.5%"), NULL},
		{ARGS("hist", "--min-share", "2"), "--min-share goes with a diff"},
		{ARGS("hist", "--diff", "a", "--min-share", "101"), "percentage from 0 to 100"},
		{ARGS("hist", "--diff", "a", "--min-share", "0x1"), "percentage from 0 to 100"},
		{ARGS("hist", "--diff", "a", "--min-share", "nan"), "percentage from 0 to 100"},
		{ARGS("hist", "--resolution", "3"), "1 or 2"},
		{ARGS("hist", "--comm", "a-name-longer-than-15"), "1 to 15 bytes"},
		{ARGS("hist", "--tid", "x"), "--tid wants"},
		{ARGS("hist", "--comm", "x", "--threads"), "--threads goes with"},
		{ARGS("hist", "stray"), "unexpected argument 'stray'"},
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		int ret = parse(&req, &err, cases[i].argv);

		if (!cases[i].why) {
			if (ret)
				fail_msg("case %zu: %s", i, err.data);
			rsp_request__exit(&req);
			continue;
		}
		assert_int_equal(ret, -EINVAL);
		if (!strstr(err.data, cases[i].why))
			fail_msg("case %zu: '%s' does not say '%s'", i, err.data, cases[i].why);
	}
	rsp_buf__reset(&err);
	rsp_query__usage(&err, "hist");
	assert_non_null(strstr(err.data, "EXAMPLES"));
	rsp_buf__exit(&err);
}

/* A store: a sleeper with two peaks, a disk, a softirq, over seconds 100..104. */
static struct rsp_hist_store *make_store(void)
{
	struct rsp_hist_config c;
	struct rsp_hist_store *st;
	struct rsp_hist_shard *sh;
	struct rsp_hist_who w = {.tgid = 40, .tid = 41, .comm = "sleeper", .comm_len = 7};
	struct rsp_hist_who d = {.tgid = 50, .tid = 50, .comm = "dd", .comm_len = 2};

	rsp_hist_config__init(&c);
	c.nr_slices = 30;
	st = rsp_hist_store__new(&c);
	sh = rsp_hist_store__shard(st, 0);
	for (unsigned i = 0; i < 100; i++) {
		uint64_t t = 100 * S + i * 40000000ull;

		rsp_hist_shard__add(sh, RSP_HIST_OP(RSP_HOP_OFFCPU, RSP_SR_SLEEP), t,
				    i % 2 ? 8060 * US : 1060 * US, &w);
		rsp_hist_shard__add(sh, RSP_HIST_OP(RSP_HOP_BLK_SERVICE, 254u << 20), t, 120 * US,
				    &d);
		rsp_hist_shard__add(sh, RSP_HIST_OP(RSP_HOP_SOFTIRQ, 3), t, 9 * US, NULL);
	}
	rsp_hist_store__note_incomplete(st, RSP_HIST_OP(RSP_HOP_BLK_SERVICE, 254u << 20), 17);
	rsp_hist_store__set_progress(st, 104 * S);
	return st;
}

static int run(struct rsp_hist_store *st, bool offline, const char *const *argv,
	       struct rsp_buf *out, struct rsp_buf *err)
{
	struct rsp_request req;
	struct rsp_source src = {.hist = st, .now = 105 * S, .offline = offline};
	int ret;

	rsp_buf__reset(out);
	rsp_buf__reset(err);
	ret = rsp_request__parse(argc_of(argv), argv, &req, err);
	if (ret)
		fail_msg("parse: %s", err->data);
	ret = rsp_query__run(&req, &src, out, err);
	rsp_request__exit(&req);
	return ret;
}

static json_t *run_json(struct rsp_hist_store *st, const char *const *argv)
{
	struct rsp_buf out = RSP_BUF_INIT, err = RSP_BUF_INIT;
	json_t *j;

	if (run(st, false, argv, &out, &err))
		fail_msg("run: %s", err.data);
	j = json_loads(out.data, 0, NULL);
	assert_non_null(j);
	rsp_buf__exit(&out);
	rsp_buf__exit(&err);
	return j;
}

static void test_text_and_json(void **state)
{
	struct rsp_hist_store *st = make_store();
	struct rsp_buf out = RSP_BUF_INIT, err = RSP_BUF_INIT;
	json_t *j, *p, *peaks;

	assert_int_equal(run(st, false, ARGS("hist"), &out, &err), 0);
	assert_non_null(strstr(out.data, "latency profiles, r=1, since 100.000"));
	assert_non_null(strstr(out.data, "offcpu:sleep"));
	assert_non_null(strstr(out.data, "nsecs               : count    distribution"));
	assert_non_null(strstr(out.data, "17 requests without an observed completion"));
	/* Sorted by total latency: the sleeps first. */
	assert_non_null(strstr(out.data, "\n\noffcpu:sleep  system\n"));
	assert_true(strstr(out.data, "\n\noffcpu:sleep  system\n") <
		    strstr(out.data, "\n\nblk_service:")); /* labelled vda if 254:0 is here */

	j = run_json(st, ARGS("hist", "--tid", "41", "--json"));
	assert_int_equal(json_array_size(json_object_get(j, "profiles")), 1);
	p = json_array_get(json_object_get(j, "profiles"), 0);
	assert_string_equal(json_string_value(json_object_get(p, "op")), "offcpu:sleep");
	assert_int_equal(json_integer_value(json_object_get(p, "count")), 100);
	assert_int_equal(json_integer_value(json_object_get(p, "sum_ns")), 50 * 9120 * US);
	assert_string_equal(
		json_string_value(json_object_get(json_object_get(p, "subject"), "kind")),
		"thread");
	peaks = json_object_get(p, "peaks");
	assert_int_equal(json_array_size(peaks), 2);
	assert_int_equal(json_integer_value(json_object_get(json_array_get(peaks, 0), "count")),
			 50);
	assert_true(json_integer_value(json_object_get(json_array_get(peaks, 1), "low_ns")) <=
		    8060 * (int64_t)US);
	json_decref(j);

	j = run_json(st, ARGS("hist", "--all", "--top", "2", "--json"));
	assert_int_equal(json_array_size(json_object_get(j, "profiles")), 2);
	json_decref(j);
	j = run_json(st,
		     ARGS("hist", "--op", "softirq:net_rx", "--op", "blk_service:254:0", "--json"));
	assert_int_equal(json_array_size(json_object_get(j, "profiles")), 2);
	json_decref(j);
	/* A range: seconds 101 and 102 hold 25 + 25 sleeps. */
	j = run_json(st,
		     ARGS("hist", "--op", "offcpu", "--from", "101", "--to", "102.5", "--json"));
	p = json_array_get(json_object_get(j, "profiles"), 0);
	assert_int_equal(json_integer_value(json_object_get(p, "count")), 50);
	assert_false(json_is_true(json_object_get(json_object_get(j, "range"), "cumulative")));
	json_decref(j);
	/* --last 4s from 105: slices 101..105 */
	j = run_json(st, ARGS("hist", "--op", "offcpu", "--last", "4s", "--json"));
	p = json_array_get(json_object_get(j, "profiles"), 0);
	assert_int_equal(json_integer_value(json_object_get(p, "count")), 75);
	json_decref(j);
	/* Heat maps. */
	assert_int_equal(run(st, false, ARGS("hist", "--op", "offcpu", "--slices"), &out, &err), 0);
	assert_non_null(strstr(out.data, "heat map: a row per 1 s"));
	assert_non_null(strstr(out.data, "     100.0      25 |"));
	assert_non_null(strstr(out.data, "|\n                    ^1.05ms\n"));
	j = run_json(st, ARGS("hist", "--op", "offcpu", "--slices", "--json"));
	p = json_array_get(json_object_get(j, "profiles"), 0);
	assert_int_equal(json_array_size(json_object_get(p, "slices")), 4);
	json_decref(j);
	/* Errors: a range with no slices, an unknown device, an unknown irq. */
	assert_int_equal(run(st, false, ARGS("hist", "--from", "10", "--to", "20"), &out, &err),
			 -ERANGE);
	assert_non_null(strstr(err.data, "no time slices"));
	assert_int_equal(run(st, false, ARGS("hist", "--op", "blk_queue:nodisk"), &out, &err),
			 -EINVAL);
	assert_non_null(strstr(err.data, "no block device 'nodisk'"));
	assert_int_equal(run(st, false, ARGS("hist", "--op", "irq:eth9"), &out, &err), -EINVAL);
	assert_non_null(strstr(err.data, "seen: none"));
	assert_int_equal(run(st, false, ARGS("hist", "--resolution", "2"), &out, &err), -EINVAL);
	assert_non_null(strstr(err.data, "--hist-resolution 2"));
	/* rspd refuses to touch files a client names. */
	assert_int_equal(run(st, false, ARGS("hist", "--save", "/etc/x"), &out, &err), -EPERM);
	assert_int_equal(run(NULL, false, ARGS("hist"), &out, &err), -ENODATA);
	assert_non_null(strstr(err.data, "--no-hist"));
	rsp_buf__exit(&out);
	rsp_buf__exit(&err);
	rsp_hist_store__delete(st);
}

static void test_range_diff(void **state)
{
	struct rsp_hist_store *st = make_store();
	struct rsp_hist_shard *sh = rsp_hist_store__shard(st, 0);
	json_t *j, *pair;

	/* Second 104: runq latencies appear, and the disk slows down tenfold. */
	for (unsigned i = 0; i < 50; i++) {
		rsp_hist_shard__add(sh, RSP_HIST_OP(RSP_HOP_RUNQ, 0), 104 * S + i, 300 * US, NULL);
		rsp_hist_shard__add(sh, RSP_HIST_OP(RSP_HOP_BLK_SERVICE, 254u << 20), 104 * S + i,
				    1200 * US, NULL);
	}
	j = run_json(st, ARGS("hist", "--from", "104", "--to", "104.5", "--base-from", "102",
			      "--base-to", "102.5", "--json"));
	assert_string_equal(json_string_value(json_object_get(j, "format")), "rsp-hist-diff");
	/* Vanished and appeared first, by change in total latency; then by EMD. */
	pair = json_array_get(json_object_get(j, "pairs"), 0);
	assert_string_equal(json_string_value(json_object_get(pair, "op")), "offcpu:sleep");
	assert_int_equal(json_integer_value(json_object_get(pair, "count_cur")), 0);
	pair = json_array_get(json_object_get(j, "pairs"), 1);
	assert_string_equal(json_string_value(json_object_get(pair, "op")), "runq");
	assert_true(json_is_null(json_object_get(pair, "emd")));
	pair = json_array_get(json_object_get(j, "pairs"), 2);
	assert_string_equal(json_string_value(json_object_get(pair, "op")), "blk_service:254:0");
	assert_string_equal(json_string_value(json_object_get(pair, "verdict")), "selected");
	assert_true(json_real_value(json_object_get(pair, "emd")) > 2.0);
	json_decref(j);
	/*
	 * A diff pairs before it cuts to --top: the sleeps shrank to 20 short
	 * ones in second 104, below its top profile; they are a pair that
	 * shrank, not one that vanished.
	 */
	for (unsigned i = 0; i < 20; i++)
		rsp_hist_shard__add(
			sh, RSP_HIST_OP(RSP_HOP_OFFCPU, RSP_SR_SLEEP), 104 * S + 1000 + i, 100 * US,
			&(struct rsp_hist_who){
				.tgid = 40, .tid = 41, .comm = "sleeper", .comm_len = 7});
	j = run_json(st, ARGS("hist", "--from", "104", "--to", "104.5", "--base-from", "102",
			      "--base-to", "102.5", "--top", "1", "--json"));
	pair = NULL;
	for (size_t i = 0; i < json_array_size(json_object_get(j, "pairs")); i++) {
		json_t *q = json_array_get(json_object_get(j, "pairs"), i);

		if (!strcmp(json_string_value(json_object_get(q, "op")), "offcpu:sleep"))
			pair = q;
	}
	assert_non_null(pair);
	assert_int_equal(json_integer_value(json_object_get(pair, "count_cur")), 20);
	json_decref(j);
	rsp_hist_store__delete(st);
}

static void test_local_part(void **state)
{
	struct rsp_hist_store *st = make_store();
	struct rsp_buf out = RSP_BUF_INIT, err = RSP_BUF_INIT, ans = RSP_BUF_INIT;
	const char *const *argv = ARGS("hist", "--op", "offcpu", "--save=/tmp/x.json", "--top", "1",
				       "--format", "text", "--last", "5s");
	struct rsp_source src = {.hist = st, .now = 105 * S};
	struct rsp_request req, rreq;
	const char **rargv;
	int rargc;
	char path[] = "/tmp/rsp-test-hist.XXXXXX";
	int fd = mkstemp(path);
	FILE *f;

	assert_true(fd >= 0);
	close(fd);
	assert_int_equal(parse(&req, &err, argv), 0);
	assert_true(rsp_request__is_local(&req));
	rargv = rsp_request__remote_argv(&req, argc_of(argv), argv, &rargc);
	assert_non_null(rargv);
	/* Files, --top and the format stay with rspctl; rspd answers in JSON. */
	assert_int_equal(rargc, 6);
	assert_string_equal(rargv[0], "hist");
	assert_string_equal(rargv[1], "--op");
	assert_string_equal(rargv[2], "offcpu");
	assert_string_equal(rargv[3], "--last");
	assert_string_equal(rargv[4], "5s");
	assert_string_equal(rargv[5], "--json");
	assert_null(rargv[6]);
	assert_int_equal(rsp_request__parse(rargc, rargv, &rreq, &err), 0);
	assert_false(rsp_request__is_local(&rreq));
	assert_int_equal(rsp_query__run(&rreq, &src, &ans, &err), 0);
	rsp_request__exit(&rreq);
	free(rargv);
	rsp_request__exit(&req);

	/*
	 * --min-share belongs to the diff rspctl makes: rspd, asked without
	 * --diff, would refuse it ("--min-share goes with a diff").
	 */
	{
		const char *const md[] = {"hist",	 "--diff", "/tmp/x.json",
					  "--min-share", "0",	   NULL};

		assert_int_equal(parse(&req, &err, md), 0);
		rargv = rsp_request__remote_argv(&req, argc_of(md), md, &rargc);
		assert_non_null(rargv);
		assert_int_equal(rargc, 2);
		assert_string_equal(rargv[0], "hist");
		assert_string_equal(rargv[1], "--json");
		assert_int_equal(rsp_request__parse(rargc, rargv, &rreq, &err), 0);
		rsp_request__exit(&rreq);
		free(rargv);
		rsp_request__exit(&req);
	}

	/* rspctl's side: save the answer, then diff against it. */
	{
		const char *const save[] = {"hist", "--save", path, NULL};
		const char *const diff[] = {"hist", "--diff", path, "--json", NULL};

		assert_int_equal(parse(&req, &err, save), 0);
		assert_int_equal(rsp_request__finish(&req, ans.data, ans.len, &out, &err), 0);
		assert_non_null(strstr(out.data, "offcpu:sleep"));
		rsp_request__exit(&req);
		assert_int_equal(parse(&req, &err, diff), 0);
		rsp_buf__reset(&out);
		assert_int_equal(rsp_request__finish(&req, ans.data, ans.len, &out, &err), 0);
		assert_non_null(strstr(out.data, "\"selected\": 0"));
		rsp_request__exit(&req);
	}
	/* A damaged baseline: one sentence naming the file. */
	f = fopen(path, "w");
	fputs("{\"format\": \"rsp-hist\", \"version\": 1, \"resolution\": 1, \"profiles\": [{", f);
	fclose(f);
	{
		const char *const diff[] = {"hist", "--diff", path, NULL};

		assert_int_equal(parse(&req, &err, diff), 0);
		assert_int_equal(rsp_request__finish(&req, ans.data, ans.len, &out, &err), -EINVAL);
		assert_non_null(strstr(err.data, path));
		assert_non_null(strstr(err.data, "not valid JSON"));
		rsp_request__exit(&req);
	}
	unlink(path);
	{
		const char *const diff[] = {"hist", "--diff", path, NULL};

		assert_int_equal(parse(&req, &err, diff), 0);
		rsp_buf__reset(&err);
		assert_true(rsp_request__finish(&req, ans.data, ans.len, &out, &err) < 0);
		assert_non_null(strstr(err.data, "cannot read baseline"));
		rsp_request__exit(&req);
	}
	rsp_buf__exit(&ans);
	rsp_buf__exit(&out);
	rsp_buf__exit(&err);
	rsp_hist_store__delete(st);
}

/* Offline (a dump), the command reads and writes the files itself. */
static void test_offline_files(void **state)
{
	struct rsp_hist_store *st = make_store();
	struct rsp_buf out = RSP_BUF_INIT, err = RSP_BUF_INIT;
	char path[] = "/tmp/rsp-test-hist.XXXXXX";
	int fd = mkstemp(path);

	assert_true(fd >= 0);
	close(fd);
	assert_int_equal(run(st, true, ARGS("hist", "--save", path), &out, &err), 0);
	assert_int_equal(run(st, true, ARGS("hist", "--diff", path), &out, &err), 0);
	assert_non_null(strstr(out.data, "0 selected"));
	assert_non_null(strstr(out.data, "no pair differs enough"));
	unlink(path);
	rsp_buf__exit(&out);
	rsp_buf__exit(&err);
	rsp_hist_store__delete(st);
}

/* Updates past --hist-slice-cap go to 'other': the answer names that option. */
static void test_slice_cap_overflow(void **state)
{
	struct rsp_buf out = RSP_BUF_INIT, err = RSP_BUF_INIT;
	struct rsp_hist_config c;
	struct rsp_hist_store *st;
	struct rsp_hist_shard *sh;

	rsp_hist_config__init(&c);
	c.nr_slices = 30;
	c.slice_cap = 1;
	st = rsp_hist_store__new(&c);
	assert_non_null(st);
	sh = rsp_hist_store__shard(st, 0);
	for (int pid = 40; pid < 44; pid++) {
		struct rsp_hist_who w = {.tgid = pid, .tid = pid, .comm = "many", .comm_len = 4};

		rsp_hist_shard__add(sh, RSP_HIST_OP(RSP_HOP_OFFCPU, RSP_SR_SLEEP), 100 * S + 1000,
				    1000 * US, &w);
	}
	rsp_hist_store__set_progress(st, 104 * S);
	assert_int_equal(run(st, false, ARGS("hist", "--from", "100", "--to", "101"), &out, &err),
			 0);
	if (!strstr(out.data, "than --hist-slice-cap allows") || strstr(out.data, "hist-profiles"))
		fail_msg("the overflow does not name --hist-slice-cap: %s", out.data);
	rsp_buf__exit(&out);
	rsp_buf__exit(&err);
	rsp_hist_store__delete(st);
}

/* A named process or thread of which the store holds nothing: an error naming it. */
static void test_unknown_subject(void **state)
{
	struct rsp_hist_store *st = make_store();
	struct rsp_buf out = RSP_BUF_INIT, err = RSP_BUF_INIT;

	assert_int_equal(run(st, false, ARGS("hist", "--pid", "424242"), &out, &err), -ESRCH);
	assert_non_null(strstr(err.data, "hist: rspd holds no profile of process 424242"));
	assert_int_equal(run(st, false, ARGS("hist", "--tid", "424242"), &out, &err), -ESRCH);
	assert_non_null(strstr(err.data, "no profile of thread 424242"));
	rsp_buf__exit(&out);
	rsp_buf__exit(&err);
	rsp_hist_store__delete(st);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse),		cmocka_unit_test(test_text_and_json),
		cmocka_unit_test(test_range_diff),	cmocka_unit_test(test_local_part),
		cmocka_unit_test(test_offline_files),	cmocka_unit_test(test_slice_cap_overflow),
		cmocka_unit_test(test_unknown_subject),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
